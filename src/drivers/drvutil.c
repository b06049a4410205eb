/*
 * drvutil.c -- flush and ioctl conventions shared by the library's
 * drivers and modules (see drvutil.h).
 */
#include <errno.h>
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
