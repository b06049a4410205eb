/*
 * drvutil.c -- flush and ioctl conventions shared by the library's
 * drivers and modules (see drvutil.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drvutil.h"

void drv_flush_queue(queue_t *q, const mblk_t *mp)
{
	if ((mp->b_rptr[0] & FLUSHBAND) && MBLKL(mp) >= 2)
		flushband(q, mp->b_rptr[1], FLUSHDATA);
	else
		flushq(q, FLUSHDATA);
}

void drv_flush(queue_t *wq, mblk_t *mp)
{
	if (MBLKL(mp) < 1) {
		freemsg(mp);
		return;
	}
	if (mp->b_rptr[0] & FLUSHW)
		drv_flush_queue(wq, mp);
	if (mp->b_rptr[0] & FLUSHR) {
		drv_flush_queue(RD(wq), mp);
		mp->b_rptr[0] &= ~FLUSHW;
		qreply(wq, mp);
	} else {
		freemsg(mp);
	}
}

void mod_flush(queue_t *q, mblk_t *mp)
{
	int mine = (q->q_flag & QREADR) ? FLUSHR : FLUSHW;

	if (MBLKL(mp) >= 1 && (mp->b_rptr[0] & mine))
		drv_flush_queue(q, mp);
	putnext(q, mp);
}

void drv_nak(queue_t *q, mblk_t *mp, int error)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;

	mp->b_datap->db_type = M_IOCNAK;
	ioc->ioc_error = error;
	ioc->ioc_rval = -1;
	ioc->ioc_count = 0;
	if (mp->b_cont != NULL) {
		freemsg(mp->b_cont);
		mp->b_cont = NULL;
	}
	qreply(q, mp);
}

void drv_ack(queue_t *q, mblk_t *mp, mblk_t *dp, int rval)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;

	mp->b_datap->db_type = M_IOCACK;
	ioc->ioc_error = 0;
	ioc->ioc_rval = rval;
	ioc->ioc_count = dp != NULL ? msgdsize(dp) : 0;
	if (mp->b_cont != NULL && mp->b_cont != dp)
		freemsg(mp->b_cont);
	mp->b_cont = dp;
	qreply(q, mp);
}

void drv_putq(queue_t *q, mblk_t *mp)
{
	if (!putq(q, mp))
		freemsg(mp);
}

void pass_or_queue(queue_t *q, mblk_t *mp)
{
	if (mp->b_datap->db_type >= QPCTL ||
	    (q_idle(q) && bcanputnext(q, mp->b_band)))
		putnext(q, mp);
	else
		drv_putq(q, mp);
}

void drain_queue(queue_t *q)
{
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(q, mp->b_band)) {
			putbq(q, mp);
			return;
		}
		putnext(q, mp);
	}
}

int drv_minor_open(struct drv_minors *dm, bool clone, minor_t *minor)
{
	minor_t m = *minor;
	int err = 0;

	pthread_mutex_lock(&dm->lock);
	if (dm->used == NULL &&
	    (dm->used = calloc(dm->max, sizeof(*dm->used))) == NULL) {
		err = ENOMEM;
		goto out;
	}
	if (clone) {
		/* from next on, wrapping past the top to 1 */
		minor_t n = dm->next, tries = dm->max - 1;

		for (; tries > 0; tries--, n = n + 1 < dm->max ? n + 1 : 1)
			if (n != 0 && dm->used[n] == 0)
				break;
		if (tries == 0) {
			err = ENXIO;
			goto out;
		}
		m = n;
		dm->next = m + 1 < dm->max ? m + 1 : 1;
	} else if (m >= dm->max || dm->used[m] == UCHAR_MAX) {
		err = ENXIO;
		goto out;
	}
	dm->used[m]++;
	*minor = m;
out:
	pthread_mutex_unlock(&dm->lock);
	return err;
}

void drv_minor_close(struct drv_minors *dm, minor_t minor)
{
	pthread_mutex_lock(&dm->lock);
	if (dm->used != NULL && minor < dm->max && dm->used[minor] > 0)
		dm->used[minor]--;
	pthread_mutex_unlock(&dm->lock);
}

int drv_minor_qopen(struct drv_minors *dm, queue_t *q, dev_t *devp,
		    int sflag)
{
	minor_t m = getminor(*devp);
	int err;

	if (q->q_ptr != NULL)
		return 0;		/* reopen */
	if ((err = drv_minor_open(dm, sflag == CLONEOPEN, &m)) != 0)
		return err;
	*devp = makedevice(getmajor(*devp), m);
	q->q_ptr = WR(q)->q_ptr = (void *)(uintptr_t)(m + 1);
	return 0;
}

void drv_minor_qclose(struct drv_minors *dm, queue_t *q)
{
	drv_minor_close(dm, (minor_t)((uintptr_t)q->q_ptr - 1));
	q->q_ptr = WR(q)->q_ptr = NULL;
}
