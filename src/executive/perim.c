/*
 * perim.c -- MT perimeters (syncqs).
 *
 * How it works
 * ------------
 * A module or driver that does not declare D_MP is entered by one thread
 * at a time per perimeter: the queue pair (default, D_MTQPAIR), each queue
 * (D_MTPERQ) or the whole module (D_MTPERMOD).  The perimeter is a state
 * word: 0 free, 1 busy, 2 busy with deferred work.
 *
 * Entering from put, service or a callback never waits: one CAS takes a
 * free perimeter; a thread that finds it busy appends its call to the
 * syncq's lists (a put links the message itself through b_next with its
 * target queue in b_queue, a service run links the queue through q_link,
 * a callback links its callout) and returns.  The owner, before it leaves,
 * runs everything deferred, in arrival order per kind.  So a put into a
 * busy perimeter costs no sleep and two threads entering each other's
 * perimeters cannot deadlock.
 *
 * Open and close (and plumbing) enter with strperim_enter_wait(), which
 * sleeps on the state word until the perimeter is free.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>

#include "strsubr.h"

struct strsyncq *strsyncq_alloc(void)
{
	struct strsyncq *sq = calloc(1, sizeof(*sq));

	if (sq != NULL)
		sq->sq_refs = 1;
	return sq;
}

void strsyncq_release(struct strsyncq *sq)
{
	if (sq != NULL && __atomic_sub_fetch(&sq->sq_refs, 1,
					     __ATOMIC_ACQ_REL) == 0)
		free(sq);
}

static inline bool sq_tryenter(struct strsyncq *sq)
{
	int z = 0;
	return __atomic_compare_exchange_n(&sq->sq_state, &z, 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/*
 * Called with sq_lock held: either take the perimeter (returns true) or
 * make sure the state says "busy with deferred work" so that the owner
 * will look at the lists before leaving (returns false).
 */
static bool sq_enter_or_mark(struct strsyncq *sq)
{
	for (;;) {
		int st = __atomic_load_n(&sq->sq_state, __ATOMIC_ACQUIRE);
		if (st == 0) {
			if (sq_tryenter(sq))
				return true;
		} else if (st == 2) {
			return false;
		} else {
			int one = 1;
			if (__atomic_compare_exchange_n(&sq->sq_state, &one, 2,
					false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
				return false;
		}
	}
}

/*
 * true: the caller is inside.  false: sq_lock is held and the state says
 * there is deferred work; the caller appends its call and unlocks.
 */
static inline bool sq_enter_or_lock(struct strsyncq *sq)
{
	if (likely(sq_tryenter(sq)))
		return true;
	strlock(&sq->sq_lock);
	if (sq_enter_or_mark(sq)) {
		strunlock(&sq->sq_lock);
		return true;
	}
	return false;
}

bool strperim_enter_put(struct strsyncq *sq, queue_t *q, mblk_t *mp)
{
	if (sq_enter_or_lock(sq))
		return true;
	mp->b_queue = q;
	mp->b_next = NULL;
	if (sq->sq_mtail != NULL)
		sq->sq_mtail->b_next = mp;
	else
		sq->sq_mhead = mp;
	sq->sq_mtail = mp;
	strunlock(&sq->sq_lock);
	STRSTAT(ST_SYNCQ_DEFERS);
	return false;
}

bool strperim_enter_svc(struct strsyncq *sq, queue_t *q)
{
	if (sq_enter_or_lock(sq))
		return true;
	q->q_link = NULL;
	if (sq->sq_qtail != NULL)
		sq->sq_qtail->q_link = q;
	else
		sq->sq_qhead = q;
	sq->sq_qtail = q;
	strunlock(&sq->sq_lock);
	STRSTAT(ST_SYNCQ_DEFERS);
	return false;
}

/* struct strcallout's link field is its first member (timer.c). */
struct strcallout_link {
	struct strcallout *next;
};

bool strperim_enter_callout(struct strsyncq *sq, struct strcallout *co)
{
	struct strcallout_link *l = (struct strcallout_link *)co;

	if (sq_enter_or_lock(sq))
		return true;
	l->next = NULL;
	if (sq->sq_ctail != NULL)
		((struct strcallout_link *)sq->sq_ctail)->next = co;
	else
		sq->sq_chead = co;
	sq->sq_ctail = co;
	strunlock(&sq->sq_lock);
	STRSTAT(ST_SYNCQ_DEFERS);
	return false;
}

void strperim_enter_wait(struct strsyncq *sq)
{
	while (!sq_tryenter(sq)) {
		int st = __atomic_load_n(&sq->sq_state, __ATOMIC_ACQUIRE);
		if (st == 0)
			continue;
		__atomic_add_fetch(&sq->sq_waiters, 1, __ATOMIC_ACQ_REL);
		str_futex_wait(&sq->sq_state, st, NULL);
		__atomic_sub_fetch(&sq->sq_waiters, 1, __ATOMIC_ACQ_REL);
	}
}

/* Run deferred work taken off the syncq (we own the perimeter). */
static void sq_run(mblk_t *mp, queue_t *q, struct strcallout *co)
{
	while (mp != NULL) {
		mblk_t *next = mp->b_next;
		queue_t *tq = mp->b_queue;

		mp->b_next = NULL;
		mp->b_queue = NULL;
		if (unlikely(__atomic_load_n(&tq->q_flag, __ATOMIC_RELAXED) &
			     QPROCSOFF)) {
			/* queue was turned off meanwhile: pass it on */
			queue_t *nq = __atomic_load_n(&tq->q_next,
						      __ATOMIC_ACQUIRE);
			if (nq != NULL)
				put(nq, mp);
			else
				freemsg(mp);
		} else {
			str_put_invoke(tq, mp);
		}
		mp = next;
	}
	while (q != NULL) {
		queue_t *next = q->q_link;
		q->q_link = NULL;
		str_svc_invoke(q);
		q = next;
	}
	while (co != NULL) {
		struct strcallout *next = ((struct strcallout_link *)co)->next;
		((struct strcallout_link *)co)->next = NULL;
		strcallout_invoke(co);
		co = next;
	}
}

void strperim_exit(struct strsyncq *sq)
{
	for (;;) {
		int one = 1;
		mblk_t *mp;
		queue_t *q;
		struct strcallout *co;

		if (likely(__atomic_compare_exchange_n(&sq->sq_state, &one, 0,
				false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))) {
			if (unlikely(__atomic_load_n(&sq->sq_waiters,
						     __ATOMIC_ACQUIRE)))
				str_futex_wake(&sq->sq_state, 1);
			return;
		}
		/* state 2: take the deferred work, stay inside, run it */
		strlock(&sq->sq_lock);
		mp = sq->sq_mhead;
		q = sq->sq_qhead;
		co = sq->sq_chead;
		sq->sq_mhead = sq->sq_mtail = NULL;
		sq->sq_qhead = sq->sq_qtail = NULL;
		sq->sq_chead = sq->sq_ctail = NULL;
		__atomic_store_n(&sq->sq_state, 1, __ATOMIC_RELEASE);
		strunlock(&sq->sq_lock);
		sq_run(mp, q, co);
	}
}

/*
 * The perimeter a queue pair gets for its module's flags.  D_MP: none.
 * D_MTPERMOD (and D_MTOUTPERIM): the module's shared syncq, created on
 * first use in *modsq.  D_MTPERQ: *per_queue is set and the caller gives
 * each queue its own.  Otherwise one per pair.
 */
struct strsyncq *str_perim_for(unsigned int flags, struct strsyncq **modsq,
			       bool *per_queue)
{
	struct strsyncq *sq;

	*per_queue = false;
	if (flags & D_MP)
		return NULL;
	if (flags & (D_MTPERMOD | D_MTOUTPERIM)) {
		if (*modsq == NULL)
			*modsq = strsyncq_alloc();
		sq = *modsq;
		if (sq != NULL)
			__atomic_add_fetch(&sq->sq_refs, 1, __ATOMIC_RELAXED);
		return sq;
	}
	if (flags & D_MTPERQ) {
		*per_queue = true;
		return strsyncq_alloc();
	}
	return strsyncq_alloc();
}
