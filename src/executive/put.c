/*
 * put.c -- passing messages: put, putnext, putctl*, qreply, qwriter.
 *
 * putnext() is the hot path: read q_next (no lock: plumbing changes wait
 * a grace period, see rcu.c), and call the next put procedure, through
 * its perimeter unless it is D_MP.  A queue whose procedures are off
 * (qprocsoff, between unhooking and closing) passes messages on to its
 * own q_next, so nothing in flight is lost while a module is popped.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "strsubr.h"

void str_put_slow(queue_t *q, mblk_t *mp)
{
	struct strsyncq *sq;

	if (__atomic_load_n(&q->q_flag, __ATOMIC_RELAXED) & QPROCSOFF) {
		queue_t *nq = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE);
		if (nq != NULL && nq != q)
			str_put(nq, mp);
		else
			freemsg(mp);
		return;
	}
	sq = q->q_syncq;
	if (strperim_enter_put(sq, q, mp)) {
		str_put_invoke(q, mp);
		strperim_exit(sq);
	}
}

int put(queue_t *q, mblk_t *mp)
{
	struct strthread *t;

	if (unlikely(q == NULL || mp == NULL || mp->b_datap == NULL)) {
		str_bad("put with a NULL queue or bad message", mp);
		if (q == NULL && mp != NULL && mp->b_datap != NULL)
			freemsg(mp);
		return 0;
	}
	t = str_enter();
	str_put(q, mp);
	str_exit(t);
	return 1;
}

int putnext(queue_t *q, mblk_t *mp)
{
	queue_t *nq;

	if (unlikely(q == NULL || mp == NULL)) {
		str_bad("putnext with a NULL queue or message", mp);
		return 0;
	}
	nq = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE);
	if (unlikely(nq == NULL)) {
		/* end of the stream: nowhere to go */
		freemsg(mp);
		return 0;
	}
	str_put(nq, mp);
	return 1;
}

int qreply(queue_t *q, mblk_t *mp)
{
	if (unlikely(q == NULL)) {
		str_bad("qreply(NULL)", q);
		if (mp != NULL)
			freemsg(mp);
		return 0;
	}
	return putnext(OTHERQ(q), mp);
}

/* A zero-length control message of type carrying n parameter bytes. */
static mblk_t *mkctl(int type, int n, int p1, int p2)
{
	mblk_t *mp;

	/* (the data types are refused, M_DELAY excepted: a tty module's
	 * putnextctl1(q, M_DELAY, ticks)) */
	if (type < 0 || type > 0xff || (datamsg(type) && type != M_DELAY))
		return NULL;
	if ((mp = allocb((size_t)n, BPRI_HI)) == NULL)
		return NULL;
	mp->b_datap->db_type = (unsigned char)type;
	if (n >= 1)
		*mp->b_wptr++ = (unsigned char)p1;
	if (n >= 2)
		*mp->b_wptr++ = (unsigned char)p2;
	return mp;
}

mblk_t *str_ctlmsg(int type)
{
	return mkctl(type, 0, 0, 0);
}

int putctl(queue_t *q, int type)
{
	mblk_t *mp = mkctl(type, 0, 0, 0);
	return mp != NULL ? put(q, mp) : 0;
}

int putctl1(queue_t *q, int type, int param)
{
	mblk_t *mp = mkctl(type, 1, param, 0);
	return mp != NULL ? put(q, mp) : 0;
}

int putctl2(queue_t *q, int type, int param1, int param2)
{
	mblk_t *mp = mkctl(type, 2, param1, param2);
	return mp != NULL ? put(q, mp) : 0;
}

int putnextctl(queue_t *q, int type)
{
	mblk_t *mp = mkctl(type, 0, 0, 0);
	return mp != NULL ? putnext(q, mp) : 0;
}

int putnextctl1(queue_t *q, int type, int param)
{
	mblk_t *mp = mkctl(type, 1, param, 0);
	return mp != NULL ? putnext(q, mp) : 0;
}

int putnextctl2(queue_t *q, int type, int param1, int param2)
{
	mblk_t *mp = mkctl(type, 2, param1, param2);
	return mp != NULL ? putnext(q, mp) : 0;
}

/*
 * qwriter: run func(q, mp) with exclusive access to q's perimeter.  Our
 * perimeters are always exclusive, and qwriter is called from inside one
 * (or from a D_MP module, which has none), so the call is direct.
 */
void qwriter(queue_t *q, mblk_t *mp, void (*func)(queue_t *, mblk_t *),
	     int perimeter)
{
	(void)perimeter;
	if (unlikely(q == NULL || func == NULL)) {
		str_bad("qwriter with a NULL queue or function", q);
		return;
	}
	func(q, mp);
}
