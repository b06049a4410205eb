/*
 * mux.c -- a multiplexing driver to exercise I_LINK and friends.
 *
 * Each open is an upper stream.  I_LINK (or I_PLINK) from an upper stream
 * puts a lower stream below it; what the upper stream writes goes down
 * its route (the link chosen with MUX_ROUTE, else its oldest link), and
 * what comes up any of its links is sent up the upper stream.  Flow
 * control is end to end: the upper write side waits when the lower stream
 * is full and the lower side waits when the upper head is full; the
 * service procedures on both sides re-enable each other.  Unlinking is
 * answered after the link is forgotten.  Links persist (I_PLINK) past the
 * upper stream's close; their traffic is then dropped until an upper
 * stream opened on the same driver unlinks them with I_PUNLINK.  What a
 * lower stream sends up while its link is being made (mux's procedures in
 * place, the I_LINK not yet here) waits on its read queue until it is.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sys/strconf.h>
#include <sys/stropts.h>
#include <sys/testmod.h>

#include "drvutil.h"

struct mux_upper;

struct mux_lower {
	struct mux_lower *next;		/* mux_lock */
	queue_t *lwq;			/* lower write queue (l_qbot), whose
					   q_ptr and its read queue's point
					   here while linked: mux_lock */
	struct mux_upper *up;		/* mux_lock; NULL when orphaned */
	int muxid;
};

struct mux_upper {
	queue_t *rq;			/* upper read queue */
	int route;			/* muxid for writes, 0: oldest;
					   mux_lock */
	minor_t minor;			/* const */
};

static pthread_mutex_t mux_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mux_lower *mux_links;	/* mux_lock */
static struct drv_minors mux_minors = DRV_MINORS_INIT(DRV_MAXMINOR);

/* The lower write queue writes of up go to, or NULL. */
static queue_t *route_of(struct mux_upper *up)
{
	struct mux_lower *l, *pick = NULL;

	pthread_mutex_lock(&mux_lock);
	for (l = mux_links; l != NULL; l = l->next) {
		if (l->up != up)
			continue;
		if (up->route ? l->muxid == up->route
			      : (pick == NULL || l->muxid < pick->muxid))
			pick = l;
	}
	queue_t *q = pick ? pick->lwq : NULL;
	pthread_mutex_unlock(&mux_lock);
	return q;
}

static int mux_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		    cred_t *cr)
{
	struct mux_upper *up;
	minor_t m = getminor(*devp);
	int err;

	if (q->q_ptr != NULL)
		return 0;
	up = calloc(1, sizeof(*up));
	if (up == NULL)
		return ENOMEM;
	if ((err = drv_minor_open(&mux_minors, sflag == CLONEOPEN, &m)) != 0) {
		free(up);
		return err;
	}
	up->rq = q;
	up->minor = m;
	q->q_ptr = WR(q)->q_ptr = up;
	*devp = makedevice(getmajor(*devp), m);
	return 0;
}

static int mux_close(queue_t *q, int oflag, cred_t *cr)
{
	struct mux_upper *up = q->q_ptr;

	pthread_mutex_lock(&mux_lock);
	for (struct mux_lower *l = mux_links; l != NULL; l = l->next)
		if (l->up == up) {
			/* persistent links become orphans; what waits on
			 * their read queues for us goes now (their service
			 * procedures drop it), so they are not left held
			 * back by an upper stream that is gone */
			l->up = NULL;
			qenable(RD(l->lwq));
		}
	pthread_mutex_unlock(&mux_lock);
	drv_minor_close(&mux_minors, up->minor);
	free(up);
	q->q_ptr = WR(q)->q_ptr = NULL;
	return 0;
}

static void mux_ioctl(queue_t *q, mblk_t *mp)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;
	struct mux_upper *up = q->q_ptr;
	struct linkblk *lb;
	struct mux_lower *l, **pp;

	switch (ioc->ioc_cmd) {
	case I_LINK:
	case I_PLINK:
		if (mp->b_cont == NULL || MBLKL(mp->b_cont) < sizeof(*lb)) {
			drv_nak(q, mp, EINVAL);
			return;
		}
		lb = (struct linkblk *)mp->b_cont->b_rptr;
		l = calloc(1, sizeof(*l));
		if (l == NULL) {
			drv_nak(q, mp, ENOMEM);
			return;
		}
		l->lwq = lb->l_qbot;
		l->muxid = lb->l_index;
		l->up = up;
		pthread_mutex_lock(&mux_lock);
		lb->l_qbot->q_ptr = RD(lb->l_qbot)->q_ptr = l;
		l->next = mux_links;
		mux_links = l;
		pthread_mutex_unlock(&mux_lock);
		/* what came up before the link was made goes on now */
		qenable(RD(lb->l_qbot));
		drv_ack(q, mp, NULL, 0);
		return;
	case I_UNLINK:
	case I_PUNLINK:
		if (mp->b_cont == NULL || MBLKL(mp->b_cont) < sizeof(*lb)) {
			drv_nak(q, mp, EINVAL);
			return;
		}
		lb = (struct linkblk *)mp->b_cont->b_rptr;
		pthread_mutex_lock(&mux_lock);
		for (pp = &mux_links; (l = *pp) != NULL; pp = &l->next)
			if (l->muxid == lb->l_index)
				break;
		if (l != NULL) {
			*pp = l->next;
			/* under the lock: the lower side's procedures, which
			 * may be running now, read q_ptr only under it */
			lb->l_qbot->q_ptr = RD(lb->l_qbot)->q_ptr = NULL;
			/* an upper writer held back by this link's flow
			 * control goes on (down another link, or discarded):
			 * this link's service procedure will not wake it */
			if (l->up != NULL)
				qenable(WR(l->up->rq));
		}
		pthread_mutex_unlock(&mux_lock);
		if (l == NULL) {
			drv_nak(q, mp, EINVAL);
			return;
		}
		flushq(lb->l_qbot, FLUSHALL);
		flushq(RD(lb->l_qbot), FLUSHALL);
		free(l);
		drv_ack(q, mp, NULL, 0);
		return;
	case MUX_ROUTE: {
		int route;

		if (ioc->ioc_count != sizeof(int) || mp->b_cont == NULL ||
		    !pullupmsg(mp->b_cont, sizeof(int))) {
			drv_nak(q, mp, EINVAL);
			return;
		}
		memcpy(&route, mp->b_cont->b_rptr, sizeof(int));
		pthread_mutex_lock(&mux_lock);
		up->route = route;
		pthread_mutex_unlock(&mux_lock);
		qenable(WR(q));		/* what waited goes the new way */
		drv_ack(q, mp, NULL, 0);
		return;
	}
	case MUX_NLINKS: {
		int n = 0;

		pthread_mutex_lock(&mux_lock);
		for (l = mux_links; l != NULL; l = l->next)
			n++;
		pthread_mutex_unlock(&mux_lock);
		drv_ack(q, mp, NULL, n);
		return;
	}
	default:
		drv_nak(q, mp, EINVAL);
		return;
	}
}

/* ---- upper side ---- */

static int mux_uwput(queue_t *q, mblk_t *mp)
{
	switch (mp->b_datap->db_type) {
	case M_FLUSH:
		drv_flush(q, mp);
		return 0;
	case M_IOCTL:
		mux_ioctl(q, mp);
		return 0;
	case M_DATA:
	case M_PROTO:
	case M_PCPROTO:
		if (mp->b_datap->db_type >= QPCTL ||
		    q_idle(q)) {
			queue_t *lwq = route_of(q->q_ptr);
			if (lwq == NULL) {
				freemsg(mp);	/* nowhere to go */
				return 0;
			}
			if (mp->b_datap->db_type >= QPCTL ||
			    bcanputnext(lwq, mp->b_band)) {
				putnext(lwq, mp);
				return 0;
			}
		}
		drv_putq(q, mp);
		return 0;
	default:
		freemsg(mp);
		return 0;
	}
}

static int mux_uwsrv(queue_t *q)
{
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		queue_t *lwq = route_of(q->q_ptr);
		if (lwq == NULL) {
			freemsg(mp);
			continue;
		}
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(lwq, mp->b_band)) {
			putbq(q, mp);
			break;
		}
		putnext(lwq, mp);
	}
	return 0;
}

/* Upper head drained: lower streams of this upper may send again. */
static int mux_ursrv(queue_t *q)
{
	struct mux_upper *up = q->q_ptr;

	pthread_mutex_lock(&mux_lock);
	for (struct mux_lower *l = mux_links; l != NULL; l = l->next)
		if (l->up == up)
			qenable(RD(l->lwq));
	pthread_mutex_unlock(&mux_lock);
	return 0;
}

static int mux_urput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

/* ---- lower side ---- */

/* Where what comes up lq goes: the upper read queue, or NULL with
 * *wait set when no link names lq (being made: keep it queued; or just
 * undone: it stays for the lower stream's own head, whose procedures
 * come back once ours are done), else NULL (an orphaned persistent
 * link: drop it). */
static queue_t *upper_rq(queue_t *lq, bool *wait)
{
	struct mux_lower *l;
	queue_t *rq = NULL;

	pthread_mutex_lock(&mux_lock);
	/* (freed by an unlink once cleared; the head sets it NULL outside
	 * our lock when it links) */
	l = __atomic_load_n(&lq->q_ptr, __ATOMIC_RELAXED);
	*wait = l == NULL;
	if (l != NULL && l->up != NULL)
		rq = l->up->rq;
	pthread_mutex_unlock(&mux_lock);
	return rq;
}

static int mux_lrput(queue_t *q, mblk_t *mp)
{
	queue_t *urq;
	bool wait;

	switch (mp->b_datap->db_type) {
	case M_FLUSH:
		/* the lower driver's flush: what waits to go up goes too,
		 * and its write side is flushed below us as drivers do */
		if (MBLKL(mp) >= 1 && (mp->b_rptr[0] & FLUSHR))
			drv_flush_queue(q, mp);
		if (MBLKL(mp) >= 1 && (mp->b_rptr[0] & FLUSHW)) {
			mp->b_rptr[0] &= ~FLUSHR;
			qreply(q, mp);
		} else {
			freemsg(mp);
		}
		return 0;
	case M_DATA:
	case M_PROTO:
	case M_PCPROTO:
		break;
	default:
		freemsg(mp);
		return 0;
	}
	if ((urq = upper_rq(q, &wait)) == NULL) {
		if (wait)
			drv_putq(q, mp);
		else
			freemsg(mp);
		return 0;
	}
	if (mp->b_datap->db_type >= QPCTL ||
	    (q_idle(q) &&
	     bcanputnext(urq, mp->b_band)))
		putnext(urq, mp);
	else
		drv_putq(q, mp);
	return 0;
}

static int mux_lrsrv(queue_t *q)
{
	mblk_t *mp;
	bool wait;

	/* not linked (yet, or any more): what is queued stays; the I_LINK
	 * enables us once it is made */
	(void)upper_rq(q, &wait);
	if (wait)
		return 0;
	while ((mp = getq(q)) != NULL) {
		queue_t *urq = upper_rq(q, &wait);
		if (urq == NULL && wait) {
			putbq(q, mp);	/* (undone meanwhile) */
			break;
		}
		if (urq == NULL) {
			freemsg(mp);
			continue;
		}
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(urq, mp->b_band)) {
			putbq(q, mp);
			break;
		}
		putnext(urq, mp);
	}
	return 0;
}

/* Lower stream drained: the upper write side may go on. */
static int mux_lwsrv(queue_t *q)
{
	struct mux_lower *l;

	pthread_mutex_lock(&mux_lock);
	l = __atomic_load_n(&q->q_ptr, __ATOMIC_RELAXED);
	if (l != NULL && l->up != NULL)
		qenable(WR(l->up->rq));
	pthread_mutex_unlock(&mux_lock);
	return 0;
}

static int mux_lwput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info mux_minfo = { 2004, "mux", 0, INFPSZ, 65536, 16384 };
static struct qinit mux_urinit = { mux_urput, mux_ursrv, mux_open, mux_close, NULL, &mux_minfo, NULL };
static struct qinit mux_uwinit = { mux_uwput, mux_uwsrv, NULL, NULL, NULL, &mux_minfo, NULL };
static struct qinit mux_lrinit = { mux_lrput, mux_lrsrv, NULL, NULL, NULL, &mux_minfo, NULL };
static struct qinit mux_lwinit = { mux_lwput, mux_lwsrv, NULL, NULL, NULL, &mux_minfo, NULL };
static struct streamtab mux_info = { &mux_urinit, &mux_uwinit, &mux_lrinit, &mux_lwinit };

struct cdevsw mux_cdev = {
	.d_name = "mux", .d_str = &mux_info, .d_flag = D_MP | D_CLONE,
};
/* The same driver under a second name (its own major): two levels of
 * multiplexing need two drivers, as SVR4 refuses a link that makes a
 * loop in the graph of multiplexing drivers (one below itself). */
struct cdevsw mux2_cdev = {
	.d_name = "mux2", .d_str = &mux_info, .d_flag = D_MP | D_CLONE,
};
