/*
 * loop.c -- the loop driver: pairs of streams cross-connected.
 *
 * Minors 2k and 2k+1 are the two ends of a loop: what one writes, the
 * other reads, with flow control in both directions (a full reader
 * leaves messages on the writer's driver write queue; its read queue's
 * service procedure, back-enabled when its head drains, re-enables the
 * writer's queue).  A clone open takes a free even minor; open
 * /dev/streams/loop/<minor+1> for the other end.  Writing to an end whose
 * partner is not open yet discards the message.  Closing an end hangs
 * its partner up (M_HANGUP: it reads what it has, then end of file;
 * writes fail ENXIO), and discards what the partner's write queue held
 * for it (a writer blocked on that wakes).  The hangup's block is
 * allocated at open (an open without memory for it fails ENOSR), so
 * the close that sends it never lacks one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <sys/strconf.h>

#include "drvutil.h"
#include "strsubr.h"

#define LOOP_MAX 512

static pthread_mutex_t loop_lock = PTHREAD_MUTEX_INITIALIZER;
static queue_t *loop_rq[LOOP_MAX];	/* read queue of each open minor;
					   loop_lock, atomic reads */
static mblk_t *loop_hup[LOOP_MAX];	/* each open minor's M_HANGUP for
					   its partner; loop_lock */

static queue_t *partner(queue_t *q)
{
	uintptr_t m = (uintptr_t)q->q_ptr - 1;

	return __atomic_load_n(&loop_rq[m ^ 1], __ATOMIC_ACQUIRE);
}

static int loop_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		     cred_t *cr)
{
	minor_t m = getminor(*devp);
	mblk_t *hup;

	if (q->q_ptr != NULL)
		return 0;
	if ((hup = str_ctlmsg(M_HANGUP)) == NULL)
		return ENOSR;
	pthread_mutex_lock(&loop_lock);
	if (sflag == CLONEOPEN) {
		for (m = 0; m < LOOP_MAX; m += 2)
			if (loop_rq[m] == NULL && loop_rq[m + 1] == NULL)
				break;
	}
	if (m >= LOOP_MAX || loop_rq[m] != NULL) {
		pthread_mutex_unlock(&loop_lock);
		freeb(hup);
		return m >= LOOP_MAX ? ENXIO : EBUSY;
	}
	loop_hup[m] = hup;
	__atomic_store_n(&loop_rq[m], q, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&loop_lock);
	q->q_ptr = WR(q)->q_ptr = (void *)(uintptr_t)(m + 1);
	*devp = makedevice(getmajor(*devp), m);
	return 0;
}

static int loop_close(queue_t *q, int oflag, cred_t *cr)
{
	uintptr_t m = (uintptr_t)q->q_ptr - 1;
	mblk_t *hup;
	queue_t *p;

	pthread_mutex_lock(&loop_lock);
	__atomic_store_n(&loop_rq[m], NULL, __ATOMIC_RELEASE);
	hup = loop_hup[m];
	loop_hup[m] = NULL;
	/* what the partner holds for us is discarded now, and its writers
	 * blocked by our full head go on; the partner is hung up (as the
	 * SVR4 loop-around driver does): its reader sees what it has queued,
	 * then end of file, its writers ENXIO.  The hangup goes after the
	 * lock (what it runs above -- a SIGPOLL handler closing another loop
	 * stream -- may take it), p used as loop_wput uses it: a partner
	 * closing meanwhile is freed only after a grace period, and this
	 * close runs inside an entry */
	if ((p = loop_rq[m ^ 1]) != NULL)
		qenable(WR(p));
	pthread_mutex_unlock(&loop_lock);
	if (p != NULL)
		putnext(p, hup);
	else
		freeb(hup);
	q->q_ptr = WR(q)->q_ptr = NULL;
	return 0;
}

static int loop_wput(queue_t *q, mblk_t *mp)
{
	queue_t *p;

	switch (mp->b_datap->db_type) {
	case M_FLUSH:
		drv_flush(q, mp);
		return 0;
	case M_IOCTL:
		drv_nak(q, mp, EINVAL);
		return 0;
	case M_DATA:
	case M_PROTO:
	case M_PCPROTO:
		break;
	default:
		freemsg(mp);
		return 0;
	}
	if ((p = partner(q)) == NULL) {
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

static int loop_wsrv(queue_t *q)
{
	queue_t *p = partner(q);
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
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

/* Our head drained: the partner's writer may go on. */
static int loop_rsrv(queue_t *q)
{
	queue_t *p = partner(q);

	if (p != NULL)
		qenable(WR(p));
	return 0;
}

static int loop_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info loop_minfo = { 2003, "loop", 0, INFPSZ, 65536, 16384 };
static struct qinit loop_rinit = { loop_rput, loop_rsrv, loop_open, loop_close, NULL, &loop_minfo, NULL };
static struct qinit loop_winit = { loop_wput, loop_wsrv, NULL, NULL, NULL, &loop_minfo, NULL };
static struct streamtab loop_info = { &loop_rinit, &loop_winit, NULL, NULL };

struct cdevsw loop_cdev = {
	.d_name = "loop", .d_str = &loop_info, .d_flag = D_MP,
};
