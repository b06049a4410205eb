/*
 * spx.c -- the "pipe" driver: STREAMS pipes made from two opens, the
 * SVR3 way.  Open /dev/streams/pipe twice (every open is a new minor),
 * then connect the two with I_FDINSERT on the first: an M_PROTO whose
 * control part carries the second stream's driver read queue.  Connected
 * ends behave as a loop pair.  The queue pointer comes from the stream
 * head, but a program can put any bytes there with putmsg, so it is
 * accepted only if it is the read queue of another open, unconnected end.
 * Closing a connected end hangs the other up (M_HANGUP), as loop does,
 * with a block allocated at open.
 * s_pipe() does not use this driver: it connects two stream heads
 * directly, as SVR4's pipe() does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sys/strconf.h>

#include "drvutil.h"
#include "strsubr.h"

struct spx {
	struct spx *next;		/* spx_lock */
	queue_t *rq;
	queue_t *peer;			/* peer's read queue; spx_lock,
					   atomic reads */
	minor_t minor;			/* const */
	mblk_t *hup;			/* M_HANGUP for the peer, from open */
};

static pthread_mutex_t spx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct spx *spx_list;		/* spx_lock */
static struct drv_minors spx_minors = DRV_MINORS_INIT(DRV_MAXMINOR);

static int spx_open(queue_t *q, dev_t *devp, int oflag, int sflag, cred_t *cr)
{
	struct spx *s;
	minor_t m = 0;
	int err;

	if (q->q_ptr != NULL)
		return 0;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return ENOMEM;
	if ((s->hup = str_ctlmsg(M_HANGUP)) == NULL) {
		free(s);
		return ENOSR;
	}
	/* (every open a new end: a minor of its own, clone or not) */
	if ((err = drv_minor_open(&spx_minors, true, &m)) != 0) {
		freeb(s->hup);
		free(s);
		return err;
	}
	s->minor = m;
	s->rq = q;
	q->q_ptr = WR(q)->q_ptr = s;
	pthread_mutex_lock(&spx_lock);
	s->next = spx_list;
	spx_list = s;
	pthread_mutex_unlock(&spx_lock);
	*devp = makedevice(getmajor(*devp), m);
	return 0;
}

static int spx_close(queue_t *q, int oflag, cred_t *cr)
{
	struct spx *s = q->q_ptr, **pp;
	queue_t *hang = NULL;

	pthread_mutex_lock(&spx_lock);
	for (pp = &spx_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	/* the peer is hung up, and what it queued for us goes (its writers
	 * held back by our full head wake to ENXIO); the hangup goes after
	 * the lock (a module above may answer it with a message down, which
	 * can take spx_lock), the peer's queue used as spx_wput uses it (a
	 * peer closing meanwhile is freed only after a grace period; this
	 * close runs inside an entry) */
	for (struct spx *o = spx_list; o != NULL; o = o->next)
		if (o->peer == q) {
			__atomic_store_n(&o->peer, NULL, __ATOMIC_RELEASE);
			qenable(WR(o->rq));
			hang = o->rq;	/* (one peer at most) */
		}
	pthread_mutex_unlock(&spx_lock);
	if (hang != NULL)
		putnext(hang, s->hup);
	else
		freeb(s->hup);
	drv_minor_close(&spx_minors, s->minor);
	free(s);
	q->q_ptr = WR(q)->q_ptr = NULL;
	return 0;
}

/* M_PROTO carrying a queue pointer: connect to that end. */
static int spx_connect(struct spx *s, mblk_t *mp)
{
	queue_t *target;
	struct spx *o;
	int err = EINVAL;

	if (MBLKL(mp) < sizeof(queue_t *))
		return EINVAL;
	memcpy(&target, mp->b_rptr, sizeof(target));
	pthread_mutex_lock(&spx_lock);
	for (o = spx_list; o != NULL; o = o->next) {
		if (o->rq == target && o != s && o->peer == NULL &&
		    s->peer == NULL) {
			__atomic_store_n(&o->peer, s->rq, __ATOMIC_RELEASE);
			__atomic_store_n(&s->peer, o->rq, __ATOMIC_RELEASE);
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&spx_lock);
	return err;
}

static int spx_wput(queue_t *q, mblk_t *mp)
{
	struct spx *s = q->q_ptr;
	queue_t *p;

	switch (mp->b_datap->db_type) {
	case M_FLUSH:
		drv_flush(q, mp);
		return 0;
	case M_IOCTL:
		drv_nak(q, mp, EINVAL);
		return 0;
	case M_PROTO:
		if (__atomic_load_n(&s->peer, __ATOMIC_ACQUIRE) == NULL) {
			if (spx_connect(s, mp) != 0)
				putnextctl1(RD(q), M_ERROR, EPROTO);
			freemsg(mp);
			return 0;
		}
		/* fall through */
	case M_DATA:
	case M_PCPROTO:
		break;
	default:
		freemsg(mp);
		return 0;
	}
	if ((p = __atomic_load_n(&s->peer, __ATOMIC_ACQUIRE)) == NULL) {
		freemsg(mp);
		return 0;
	}
	if (mp->b_datap->db_type >= QPCTL ||
	    (q_idle(q) &&
	     bcanputnext(p, mp->b_band)))
		putnext(p, mp);
	else
		drv_putq(q, mp);
	return 0;
}

static int spx_wsrv(queue_t *q)
{
	struct spx *s = q->q_ptr;
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		queue_t *p = __atomic_load_n(&s->peer, __ATOMIC_ACQUIRE);
		if (p == NULL) {
			freemsg(mp);
			continue;
		}
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(p, mp->b_band)) {
			putbq(q, mp);
			break;
		}
		putnext(p, mp);
	}
	return 0;
}

static int spx_rsrv(queue_t *q)
{
	struct spx *s = q->q_ptr;
	queue_t *p = __atomic_load_n(&s->peer, __ATOMIC_ACQUIRE);

	if (p != NULL)
		qenable(WR(p));
	return 0;
}

static int spx_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info spx_minfo = { 2005, "pipe", 0, INFPSZ, 65536, 16384 };
static struct qinit spx_rinit = { spx_rput, spx_rsrv, spx_open, spx_close, NULL, &spx_minfo, NULL };
static struct qinit spx_winit = { spx_wput, spx_wsrv, NULL, NULL, NULL, &spx_minfo, NULL };
static struct streamtab spx_info = { &spx_rinit, &spx_winit, NULL, NULL };

struct cdevsw spx_cdev = {
	.d_name = "pipe", .d_str = &spx_info, .d_flag = D_MP | D_CLONE,
};
