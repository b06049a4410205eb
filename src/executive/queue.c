/*
 * queue.c -- message queues, priority bands and flow control.
 *
 * How it works
 * ------------
 * A queue holds one doubly linked list (b_next/b_prev) ordered by class:
 * high-priority messages (db_type >= QPCTL) first, then bands 255..1, then
 * band 0.  Within a class, FIFO.  q_first/q_last bound the list; each
 * band n >= 1 has a qband (qb_first/qb_last inside the same list).
 *
 * Accounting: a message counts the bytes of all its blocks (b_wptr -
 * b_rptr) and its number of blocks.  Band 0 and high-priority messages
 * count in q_count/q_mblkcnt, band n in its qband.
 *
 * Flow control (per band, with hysteresis):
 *   full  when count >= hiwat or blocks >= hiwat     -> QFULL / QB_FULL
 *   clear only when the band is empty, or count < lowat and blocks < lowat;
 *   at that moment, if a writer found the band full (QWANTW / QB_WANTW),
 *   the nearest queue behind with a service procedure is back-enabled.
 * High-priority messages are counted but never refused: putq always
 * accepts them and nobody calls canput for them.
 *
 * Scheduling from putq: a high-priority message always enables the queue;
 * a band message enables it unless noenable(); a band-0 message enables
 * it only when getq() last found the queue empty (QWANTR) and not
 * noenable().  getq() clears QWANTR when it returns a message.
 *
 * Locking: every list and counter is under the queue's lock (qlock).
 * q_flag is written under the lock with relaxed atomic stores so that
 * canput() may read QFULL without it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strsubr.h"

/* ---- flag helpers (writer holds the queue lock) ---- */

static inline unsigned long qflags(const queue_t *q)
{
	return __atomic_load_n(&q->q_flag, __ATOMIC_RELAXED);
}
static inline void qf_set(queue_t *q, unsigned long f)
{
	__atomic_store_n(&q->q_flag, q->q_flag | f, __ATOMIC_RELAXED);
}
static inline void qf_clr(queue_t *q, unsigned long f)
{
	__atomic_store_n(&q->q_flag, q->q_flag & ~f, __ATOMIC_RELAXED);
}
static inline void qbf_set(qband_t *qb, unsigned long f)
{
	__atomic_store_n(&qb->qb_flag, qb->qb_flag | f, __ATOMIC_RELAXED);
}
static inline void qbf_clr(qband_t *qb, unsigned long f)
{
	__atomic_store_n(&qb->qb_flag, qb->qb_flag & ~f, __ATOMIC_RELAXED);
}

/* ---- message accounting ---- */

/* q_count and q_mblkcnt change under the queue lock; stored atomically
 * because the stream head's waiting reader watches them unlocked. */
static inline void set_counts(queue_t *q, unsigned long count,
			      unsigned long blocks)
{
	__atomic_store_n(&q->q_count, count, __ATOMIC_RELAXED);
	__atomic_store_n(&q->q_mblkcnt, blocks, __ATOMIC_RELAXED);
}

static inline void msg_count(const mblk_t *mp, unsigned long *bytes,
			     unsigned long *blocks)
{
	unsigned long b = 0, n = 0;

	for (; mp != NULL; mp = mp->b_cont) {
		if (mp->b_wptr > mp->b_rptr)
			b += (unsigned long)(mp->b_wptr - mp->b_rptr);
		n++;
	}
	*bytes = b;
	*blocks = n;
}

static inline bool is_hipri(const mblk_t *mp)
{
	return mp->b_datap->db_type >= QPCTL;
}

static inline bool over_hi(unsigned long count, unsigned long blocks,
			   unsigned long hiwat)
{
	return count >= hiwat || blocks >= hiwat;
}

static inline bool under_lo(unsigned long count, unsigned long blocks,
			    unsigned long lowat)
{
	return blocks == 0 || (count < lowat && blocks < lowat);
}

/* ---- bands ---- */

static inline qband_t *qband_get(queue_t *q, unsigned char band)
{
	/* bands are one contiguous array linked through qb_next */
	if (band == 0 || band > q->q_nband)
		return NULL;
	return &q->q_bandp[band - 1];
}

/* Make bands 1..band exist; false when memory is short.  Queue locked. */
static bool qband_alloc(queue_t *q, unsigned char band)
{
	qband_t *nb;
	int n = q->q_nband;

	if (band <= n)
		return true;
	nb = calloc(band, sizeof(*nb));
	if (nb == NULL)
		return false;
	if (n > 0)
		memcpy(nb, q->q_bandp, n * sizeof(*nb));
	for (int i = n; i < band; i++) {
		nb[i].qb_hiwat = q->q_hiwat;
		nb[i].qb_lowat = q->q_lowat;
	}
	for (int i = 0; i < band; i++)
		nb[i].qb_next = i + 1 < band ? &nb[i + 1] : NULL;
	free(q->q_bandp);
	q->q_bandp = nb;
	q->q_nband = band;
	return true;
}

void str_qband_free(queue_t *q)
{
	free(q->q_bandp);
	q->q_bandp = NULL;
	q->q_nband = 0;
}

/* ---- list positions ---- */

/* First message that is not high priority (NULL: none). */
static mblk_t *first_normal(queue_t *q)
{
	mblk_t *mp = q->q_first;

	while (mp != NULL && is_hipri(mp))
		mp = mp->b_next;
	return mp;
}

/*
 * The first ordinary message whose band is below limit (1..256), i.e. the
 * message a new message of band limit-1 inserted at its band's end (putq:
 * limit = band) or at its band's head (putbq: limit = band + 1) goes
 * before.  NULL: at the tail.
 */
static mblk_t *first_below(queue_t *q, int limit)
{
	int k, top = q->q_nband;

	/* a non-empty band below limit: its first message */
	for (k = (limit - 1 < top ? limit - 1 : top); k >= 1; k--)
		if (q->q_bandp[k - 1].qb_first != NULL)
			return q->q_bandp[k - 1].qb_first;
	/* otherwise the first band-0 message: after the lowest non-empty
	 * band at or above limit, or after the high-priority prefix */
	for (k = limit; k <= top; k++)
		if (q->q_bandp[k - 1].qb_last != NULL)
			return q->q_bandp[k - 1].qb_last->b_next;
	return first_normal(q);
}

/* q_first is written atomically: the stream head peeks at it unlocked */
static inline void set_first(queue_t *q, mblk_t *mp)
{
	__atomic_store_n(&q->q_first, mp, __ATOMIC_RELAXED);
}

/* Not plain band-0 data (M_DATA, M_PROTO): counted in q_nodd, so that
 * str_getq_run knows when the whole queue is one run. */
static inline bool odd_msg(const mblk_t *mp)
{
	unsigned char t = mp->b_datap->db_type;

	return mp->b_band != 0 || (t != M_DATA && t != M_PROTO);
}

static inline void list_insert_before(queue_t *q, mblk_t *emp, mblk_t *mp)
{
	if (odd_msg(mp))	/* (atomic store: read without the lock as a
				   hint, the stream head's sig_front) */
		__atomic_store_n(&q->q_nodd, q->q_nodd + 1, __ATOMIC_RELAXED);
	if (emp == NULL) {
		mp->b_next = NULL;
		mp->b_prev = q->q_last;
		if (q->q_last != NULL)
			q->q_last->b_next = mp;
		else
			set_first(q, mp);
		q->q_last = mp;
	} else {
		mp->b_next = emp;
		mp->b_prev = emp->b_prev;
		if (emp->b_prev != NULL)
			emp->b_prev->b_next = mp;
		else
			set_first(q, mp);
		emp->b_prev = mp;
	}
	mp->b_queue = q;
}

static inline void list_remove(queue_t *q, mblk_t *mp)
{
	if (odd_msg(mp))
		__atomic_store_n(&q->q_nodd, q->q_nodd - 1, __ATOMIC_RELAXED);
	if (mp->b_prev != NULL)
		mp->b_prev->b_next = mp->b_next;
	else
		set_first(q, mp->b_next);
	if (mp->b_next != NULL)
		mp->b_next->b_prev = mp->b_prev;
	else
		q->q_last = mp->b_prev;
	mp->b_next = mp->b_prev = NULL;
	mp->b_queue = NULL;
}

/* After inserting band message mp, its band's ends follow from its
 * neighbours. */
static inline void band_fix_insert(queue_t *q, mblk_t *mp)
{
	qband_t *qb = qband_get(q, mp->b_band);
	mblk_t *p = mp->b_prev, *n = mp->b_next;

	if (p == NULL || is_hipri(p) || p->b_band != mp->b_band)
		qb->qb_first = mp;
	if (n == NULL || is_hipri(n) || n->b_band != mp->b_band)
		qb->qb_last = mp;
}

/* ---- accounting on insert and remove (queue locked) ---- */

/* Add bytes/blocks to band 0's counts (queue locked): QFULL at high
 * water. */
static inline void count0(queue_t *q, unsigned long bytes,
			  unsigned long blocks)
{
	set_counts(q, q->q_count + bytes, q->q_mblkcnt + blocks);
	if (over_hi(q->q_count, q->q_mblkcnt, q->q_hiwat))
		qf_set(q, QFULL);
}

/* Take bytes/blocks off band 0's counts (queue locked): below low water
 * QFULL goes, and 1 if the writer behind wanted to know (back-enable it
 * after unlocking), else 0. */
static inline int uncount0(queue_t *q, unsigned long bytes,
			   unsigned long blocks)
{
	set_counts(q, q->q_count - bytes, q->q_mblkcnt - blocks);
	if (under_lo(q->q_count, q->q_mblkcnt, q->q_lowat)) {
		if (q->q_flag & QFULL)
			qf_clr(q, QFULL);
		if (q->q_flag & QWANTW) {
			qf_clr(q, QWANTW);
			return 1;
		}
	}
	return 0;
}

static void account_add(queue_t *q, mblk_t *mp)
{
	unsigned long bytes, blocks;
	qband_t *qb;

	msg_count(mp, &bytes, &blocks);
	if (mp->b_band == 0 || is_hipri(mp)) {
		count0(q, bytes, blocks);
	} else {
		qb = qband_get(q, mp->b_band);
		qb->qb_count += bytes;
		qb->qb_mblkcnt += blocks;
		if (over_hi(qb->qb_count, qb->qb_mblkcnt, qb->qb_hiwat))
			qbf_set(qb, QB_FULL);
	}
}

/*
 * Take mp's bytes off its band after it left the list.  Returns the band
 * to back-enable + 1 (0: none); the caller back-enables after unlocking.
 * prev/next are mp's neighbours before removal, to fix qb_first/qb_last.
 */
static int account_sub(queue_t *q, mblk_t *mp, mblk_t *prev, mblk_t *next)
{
	unsigned long bytes, blocks;
	qband_t *qb;

	msg_count(mp, &bytes, &blocks);
	if (mp->b_band == 0 || is_hipri(mp))
		return uncount0(q, bytes, blocks);
	qb = qband_get(q, mp->b_band);
	if (qb->qb_first == mp)
		qb->qb_first = (next != NULL && !is_hipri(next) &&
				next->b_band == mp->b_band) ? next : NULL;
	if (qb->qb_last == mp)
		qb->qb_last = (prev != NULL && !is_hipri(prev) &&
			       prev->b_band == mp->b_band) ? prev : NULL;
	qb->qb_count -= bytes;
	qb->qb_mblkcnt -= blocks;
	if (under_lo(qb->qb_count, qb->qb_mblkcnt, qb->qb_lowat)) {
		if (qb->qb_flag & QB_FULL)
			qbf_clr(qb, QB_FULL);
		if (qb->qb_flag & QB_WANTW) {
			qbf_clr(qb, QB_WANTW);
			return mp->b_band + 1;
		}
	}
	return 0;
}

/* Unlink mp from q and do its accounting (queue locked). */
static int q_unlink(queue_t *q, mblk_t *mp)
{
	mblk_t *prev = mp->b_prev, *next = mp->b_next;

	list_remove(q, mp);
	return account_sub(q, mp, prev, next);
}

/* ---- enabling ---- */

static inline bool can_enable(const queue_t *q)
{
	return !(q->q_flag & QNOENB);
}

/* An ordinary (band-0) message enables the queue only when a getq found
 * it empty (QWANTR) and noenable is off. */
static inline bool reader_wants(const queue_t *q)
{
	return (q->q_flag & (QWANTR | QNOENB)) == QWANTR;
}

/* Set QENAB under the lock; true if the caller must schedule q. */
static inline bool enable_locked(queue_t *q)
{
	if (q_info(q)->qi_srvp == NULL ||
	    (q->q_flag & (QENAB | QPROCSOFF)))
		return false;
	qf_set(q, QENAB);
	return !(q->q_flag & QINSERVICE);
}

void qenable(queue_t *q)
{
	bool sched;

	if (unlikely(q == NULL)) {
		str_bad("qenable(NULL)", q);
		return;
	}
	if (q_info(q)->qi_srvp == NULL)
		return;
	qlock(q);
	sched = enable_locked(q);
	qunlock(q);
	if (sched)
		strsched_enable(q);
}

void enableok(queue_t *q)
{
	qlock(q);
	qf_clr(q, QNOENB);
	qunlock(q);
}

void noenable(queue_t *q)
{
	qlock(q);
	qf_set(q, QNOENB);
	qunlock(q);
}

void str_bandfc(queue_t *q)
{
	qlock(q);
	qf_set(q, QBANDFC);
	qunlock(q);
}

/* ---- back-enabling ---- */

queue_t *backq(queue_t *q)
{
	queue_t *oq, *nq;

	if (q == NULL)
		return NULL;
	oq = OTHERQ(q);
	nq = __atomic_load_n(&oq->q_next, __ATOMIC_ACQUIRE);
	return nq != NULL ? OTHERQ(nq) : NULL;
}

void str_backenable(queue_t *q, unsigned char band)
{
	queue_t *bq = backq(q);
	int hops = 0;

	while (bq != NULL && q_info(bq)->qi_srvp == NULL && hops++ < 1024)
		bq = backq(bq);
	if (bq == NULL || q_info(bq)->qi_srvp == NULL)
		return;
	STRSTAT(ST_BACKENABLES);
	qlock(bq);
	if (band == 0) {
		qf_set(bq, QBACK);
	} else if (qband_alloc(bq, band)) {
		/* (made now if need be: the stream head queues nothing on
		 * its write queue, yet its service procedure must tell a
		 * band's relief, S_WRBAND, from band 0's) */
		qbf_set(&bq->q_bandp[band - 1], QB_BACK);
	}
	bool sched = enable_locked(bq);
	qunlock(bq);
	if (sched)
		strsched_enable(bq);
}

static inline void backenable_result(queue_t *q, int be)
{
	if (unlikely(be != 0))
		str_backenable(q, (unsigned char)(be - 1));
}

/* ---- validation ---- */

static inline bool msg_ok(const mblk_t *mp)
{
	return mp != NULL && mp->b_datap != NULL;
}

/* ---- the queue operations ---- */

mblk_t *getq(queue_t *q)
{
	mblk_t *mp = NULL;

	if (unlikely(q == NULL)) {
		str_bad("getq(NULL)", q);
		return NULL;
	}
	(void)str_getq_n(q, &mp, 1);
	return mp;
}

/*
 * Take the first message if match(first, arg) says so, with getq's
 * accounting; NULL otherwise.  *nonempty (if not NULL) tells whether the
 * queue had any message; *urgent_left (if not NULL) whether the message
 * now first is high priority or banded (what the stream head's
 * STRBANDQ must go on saying).  For the stream head's getmsg and read.
 */
mblk_t *str_getq_if(queue_t *q, bool (*match)(const mblk_t *, void *),
		    void *arg, bool *nonempty, bool *urgent_left)
{
	mblk_t *mp, *first;
	int be = 0;

	qlock(q);
	mp = q->q_first;
	if (nonempty != NULL)
		*nonempty = mp != NULL;
	if (mp == NULL) {
		qf_set(q, QWANTR);
	} else if (match == NULL || match(mp, arg)) {
		if (q->q_flag & QWANTR)
			qf_clr(q, QWANTR);
		be = q_unlink(q, mp);
	} else {
		mp = NULL;
	}
	first = q->q_first;
	if (urgent_left != NULL)
		*urgent_left = first != NULL &&
			       (is_hipri(first) || first->b_band != 0);
	qunlock(q);
	backenable_result(q, be);
	return mp;
}

/*
 * For the stream head's read cache: take the run of plain messages
 * (band-0 M_DATA and M_PROTO) at the front of q.  They leave the list but
 * stay counted in q_count/q_mblkcnt: for flow control they are still
 * unread until the reader gives the bytes back with str_qcredit().
 * Returns the first (linked through b_next); NULL when the front is not
 * such a message (then QWANTR is set if the queue is empty, as getq
 * does).  The run's b_prev and b_queue are not cleared (what they hold
 * is unspecified): the caller clears them as it takes each message.
 *
 * *seen: *gen as it is during the take (see str_flush_gen).
 *
 * When everything queued is plain (q_nodd == 0, the usual case) the whole
 * list is taken in one step, with no walk over it: a long run does not
 * fit in the cache, and a walk here missed on every message only for the
 * reader to miss again when it read them.  Otherwise the run is found
 * under the lock, up to the first message that is not plain.
 */
mblk_t *str_getq_run(queue_t *q, const unsigned *gen, unsigned *seen)
{
	mblk_t *first = NULL, *last = NULL, *mp;

	qlock(q);
	*seen = __atomic_load_n(gen, __ATOMIC_ACQUIRE);
	if (q->q_first != NULL && q->q_nodd == 0) {
		first = q->q_first;
		set_first(q, NULL);
		q->q_last = NULL;
		if (q->q_flag & QWANTR)
			qf_clr(q, QWANTR);
		qunlock(q);
		return first;
	}
	while ((mp = q->q_first) != NULL && !odd_msg(mp)) {
		list_remove(q, mp);
		if (last != NULL)
			last->b_next = mp;
		else
			first = mp;
		last = mp;
	}
	if (first == NULL) {
		if (q->q_first == NULL)
			qf_set(q, QWANTR);
	} else if (q->q_flag & QWANTR) {
		qf_clr(q, QWANTR);
	}
	qunlock(q);
	return first;
}

/* Let go of q's lock after a put: enabled if its reader waits for it
 * (the enabling after the lock is released). */
static inline void qunlock_put(queue_t *q)
{
	bool sched = reader_wants(q) && enable_locked(q);

	qunlock(q);
	if (sched)
		strsched_enable(q);
}

mblk_t *str_getq_lone(queue_t *q, size_t max, const unsigned *gen,
		      unsigned *seen)
{
	mblk_t *mp;
	int be;

	qlock(q);
	*seen = __atomic_load_n(gen, __ATOMIC_ACQUIRE);
	mp = q->q_first;
	if (mp == NULL || mp->b_next != NULL || mp->b_band != 0 ||
	    !str_data_fits(mp, max)) {
		qunlock(q);
		return NULL;
	}
	if (q->q_flag & QWANTR)
		qf_clr(q, QWANTR);
	/* the only message, plain: no neighbours, no band to fix */
	set_first(q, NULL);
	q->q_last = NULL;
	mp->b_queue = NULL;
	be = uncount0(q, (unsigned long)(mp->b_wptr - mp->b_rptr), 1);
	qunlock(q);
	backenable_result(q, be);
	return mp;
}

/* The reader consumed bytes/blocks taken with str_getq_run: account them
 * as getq would have, back-enabling once if due. */
void str_qcredit(queue_t *q, unsigned long bytes, unsigned long blocks)
{
	int be = 0;

	if (bytes == 0 && blocks == 0)
		return;
	qlock(q);
	be = uncount0(q, bytes, blocks);
	qunlock(q);
	backenable_result(q, be);
}

/* Put a run taken with str_getq_run (b_next linked, still counted) back
 * at the head of band 0, in order, without counting it again. */
bool str_putbq_run(queue_t *q, mblk_t *run, const unsigned *gen,
		   unsigned key)
{
	mblk_t *emp, *next;

	qlock(q);
	if (gen != NULL && __atomic_load_n(gen, __ATOMIC_ACQUIRE) != key) {
		qunlock(q);
		return false;
	}
	emp = first_below(q, 1);	/* first band-0 message, or NULL */
	for (; run != NULL; run = next) {
		next = run->b_next;
		list_insert_before(q, emp, run);
	}
	qunlock(q);
	return true;
}

/* A byte stream's coalescing: copy mp's bytes (one M_DATA block) onto the
 * end of q's last message when that is a lone band-0 M_DATA block of its
 * own (not shared, no free routine) with room for them; counted as putq
 * would.  True if done (the caller frees mp), false: putq it. */
bool str_putq_append(queue_t *q, const mblk_t *mp)
{
	size_t len = (size_t)(mp->b_wptr - mp->b_rptr);
	mblk_t *last;
	dblk_t *db;

	qlock(q);
	last = q->q_last;
	if (last == NULL || last->b_band != 0 || last->b_cont != NULL)
		goto no;
	db = last->b_datap;
	if (db->db_type != M_DATA ||
	    __atomic_load_n(&db->db_ref, __ATOMIC_RELAXED) != 1 ||
	    db->db_frtnp != NULL ||
	    (size_t)(db->db_lim - last->b_wptr) < len)
		goto no;
	memcpy(last->b_wptr, mp->b_rptr, len);
	last->b_wptr += len;
	last->b_merged++;
	count0(q, len, 0);
	qunlock(q);
	return true;
no:
	qunlock(q);
	return false;
}

int str_getq_n(queue_t *q, mblk_t **v, int max)
{
	mblk_t *mp;
	int n = 0, be = 0;

	qlock(q);
	if (q->q_nodd == 0 && !(q->q_flag & QWANTW) && q->q_first != NULL &&
	    max > 0) {
		/* all plain band-0 messages and no writer waiting (no
		 * back-enable to stop at): the first max (or all) off in
		 * one cut, counted off together */
		unsigned long bytes = 0, blocks = 0, b, bl;

		if (q->q_flag & QWANTR)
			qf_clr(q, QWANTR);
		for (mp = q->q_first; n < max && mp != NULL; mp = mp->b_next) {
			msg_count(mp, &b, &bl);
			bytes += b;
			blocks += bl;
			v[n++] = mp;
		}
		set_first(q, mp);
		if (mp != NULL)
			mp->b_prev = NULL;
		else
			q->q_last = NULL;
		if (mp == NULL && n < max)
			qf_set(q, QWANTR);	/* as the getq that finds it
						   empty */
		for (int k = 0; k < n; k++) {
			v[k]->b_next = v[k]->b_prev = NULL;
			v[k]->b_queue = NULL;
		}
		be = uncount0(q, bytes, blocks);
		qunlock(q);
		backenable_result(q, be);
		return n;
	}
	while (n < max && be == 0) {
		mp = q->q_first;
		if (mp == NULL) {
			/* as the getq that finds it empty */
			qf_set(q, QWANTR);
			if (q->q_flag & QWANTW) {
				qf_clr(q, QWANTW | QFULL);
				be = 1;
			}
			break;
		}
		if (q->q_flag & QWANTR)
			qf_clr(q, QWANTR);
		be = q_unlink(q, mp);
		v[n++] = mp;
	}
	qunlock(q);
	backenable_result(q, be);
	return n;
}

bool str_putq_run_gen(queue_t *q, mblk_t *first, int n, const unsigned *gen,
		      unsigned key, bool *was_empty)
{
	mblk_t *mp, *next;

	qlock(q);
	*was_empty = q->q_first == NULL;
	if (gen != NULL && __atomic_load_n(gen, __ATOMIC_ACQUIRE) != key) {
		qunlock(q);
		return false;
	}
	for (mp = first; n-- > 0 && mp != NULL; mp = next) {
		next = mp->b_next;
		list_insert_before(q, NULL, mp);
		account_add(q, mp);
	}
	qunlock_put(q);
	return true;
}

/* putq's usual case, one normal band-0 message: str_putq_run_gen's work
 * without its loop, its generation and its band cases; the bytes are
 * counted before the lock is taken. */
static inline bool putq_one(queue_t *q, mblk_t *mp)
{
	unsigned long bytes, blocks;
	bool was_empty;

	msg_count(mp, &bytes, &blocks);
	qlock(q);
	was_empty = q->q_first == NULL;
	list_insert_before(q, NULL, mp);
	count0(q, bytes, blocks);
	qunlock_put(q);
	return was_empty;
}

bool str_putq_one(queue_t *q, mblk_t *mp)
{
	return putq_one(q, mp);
}

int putq(queue_t *q, mblk_t *mp)
{
	bool sched = false;
	mblk_t *emp;

	if (unlikely(q == NULL || !msg_ok(mp))) {
		str_bad("putq with a NULL queue or bad message", mp);
		return 0;
	}
	if (likely(!is_hipri(mp) && mp->b_band == 0)) {
		putq_one(q, mp);
		return 1;
	}
	qlock(q);
	if (likely(!is_hipri(mp))) {
		if (!qband_alloc(q, mp->b_band)) {
			qunlock(q);
			return 0;
		}
		qband_t *qb = qband_get(q, mp->b_band);
		emp = qb->qb_last != NULL ? qb->qb_last->b_next
					  : first_below(q, mp->b_band);
		list_insert_before(q, emp, mp);
		band_fix_insert(q, mp);
		account_add(q, mp);
		if (can_enable(q))
			sched = enable_locked(q);
	} else {
		mp->b_band = 0;
		list_insert_before(q, first_normal(q), mp);
		account_add(q, mp);
		sched = enable_locked(q);
	}
	qunlock(q);
	if (sched)
		strsched_enable(q);
	return 1;
}

/* putbq's insertion, under q's lock: false (nothing done) when a band
 * cannot be had; *sched: q is to be enabled after the lock. */
static bool putbq_locked(queue_t *q, mblk_t *mp, bool *sched)
{
	*sched = false;
	if (is_hipri(mp)) {
		mp->b_band = 0;
		list_insert_before(q, q->q_first, mp);
		account_add(q, mp);
		*sched = enable_locked(q);
		return true;
	}
	if (mp->b_band == 0) {
		list_insert_before(q, first_below(q, 1), mp);
	} else {
		if (!qband_alloc(q, mp->b_band))
			return false;
		qband_t *qb = qband_get(q, mp->b_band);
		mblk_t *emp = qb->qb_first != NULL
				? qb->qb_first : first_below(q, mp->b_band);
		list_insert_before(q, emp, mp);
		band_fix_insert(q, mp);
	}
	account_add(q, mp);
	if (reader_wants(q))
		*sched = enable_locked(q);
	return true;
}

int putbq(queue_t *q, mblk_t *mp)
{
	bool sched, done;

	if (unlikely(q == NULL || !msg_ok(mp))) {
		str_bad("putbq with a NULL queue or bad message", mp);
		return 0;
	}
	qlock(q);
	done = putbq_locked(q, mp, &sched);
	qunlock(q);
	if (sched)
		strsched_enable(q);
	return done;
}

bool str_putbq_unless(queue_t *q, mblk_t *mp,
		      bool (*flushed)(const mblk_t *, void *), void *arg)
{
	bool sched = false, done;

	qlock(q);
	done = !flushed(mp, arg) && putbq_locked(q, mp, &sched);
	qunlock(q);
	if (sched)
		strsched_enable(q);
	if (!done)
		freemsg(mp);	/* as the flush would have */
	return done;
}

/* Ordering key: high priority above every band. */
static inline int msg_key(const mblk_t *mp)
{
	return is_hipri(mp) ? 256 : mp->b_band;
}

int insq(queue_t *q, mblk_t *emp, mblk_t *mp)
{
	mblk_t *prev;
	bool sched = false;

	if (unlikely(q == NULL || !msg_ok(mp))) {
		str_bad("insq with a NULL queue or bad message", mp);
		return 0;
	}
	if (is_hipri(mp))
		mp->b_band = 0;
	qlock(q);
	if (emp != NULL && emp->b_queue != q) {
		qunlock(q);
		return 0;
	}
	prev = emp != NULL ? emp->b_prev : q->q_last;
	if ((prev != NULL && msg_key(prev) < msg_key(mp)) ||
	    (emp != NULL && msg_key(emp) > msg_key(mp))) {
		qunlock(q);
		return 0;	/* would break the order */
	}
	if (!is_hipri(mp) && mp->b_band != 0 &&
	    !qband_alloc(q, mp->b_band)) {
		qunlock(q);
		return 0;
	}
	list_insert_before(q, emp, mp);
	if (!is_hipri(mp) && mp->b_band != 0)
		band_fix_insert(q, mp);
	account_add(q, mp);
	if (is_hipri(mp))
		sched = enable_locked(q);
	else if (reader_wants(q) ||
		 (mp->b_band != 0 && can_enable(q)))
		sched = enable_locked(q);
	qunlock(q);
	if (sched)
		strsched_enable(q);
	return 1;
}

void rmvq(queue_t *q, mblk_t *mp)
{
	int be;

	if (unlikely(q == NULL || !msg_ok(mp))) {
		str_bad("rmvq with a NULL queue or bad message", mp);
		return;
	}
	qlock(q);
	if (unlikely(mp->b_queue != q)) {
		qunlock(q);
		str_bad("rmvq of a message not on the queue", mp);
		return;
	}
	be = q_unlink(q, mp);
	qunlock(q);
	backenable_result(q, be);
}

/*
 * Remove the messages selected by keep() == false; free them after the
 * lock is dropped.  Back-enable every band that drained below low water
 * while a writer waited on it.
 */
static void flush_common(queue_t *q, int flag, bool one_band,
			 unsigned char band, unsigned *gen, unsigned *gen2)
{
	mblk_t *mp, *next, *dead = NULL;
	bool be0 = false;
	unsigned char beband[NBAND];
	int nbe = 0;

	qlock(q);
	for (mp = q->q_first; mp != NULL; mp = next) {
		next = mp->b_next;
		if (one_band && (is_hipri(mp) || mp->b_band != band))
			continue;
		if (flag == FLUSHDATA && !datamsg(mp->b_datap->db_type))
			continue;
		int be = q_unlink(q, mp);
		if (be == 1)
			be0 = true;
		else if (be > 1)
			beband[nbe++] = (unsigned char)(be - 1);
		mp->b_next = dead;
		dead = mp;
	}
	if (gen != NULL)
		__atomic_add_fetch(gen, 1, __ATOMIC_ACQ_REL);
	if (gen2 != NULL)
		__atomic_add_fetch(gen2, 1, __ATOMIC_ACQ_REL);
	qunlock(q);
	/* free in queue order */
	{
		mblk_t *rev = NULL;
		while (dead != NULL) {
			next = dead->b_next;
			dead->b_next = rev;
			rev = dead;
			dead = next;
		}
		while (rev != NULL) {
			next = rev->b_next;
			rev->b_next = NULL;
			freemsg(rev);
			rev = next;
		}
	}
	if (be0)
		str_backenable(q, 0);
	for (int i = 0; i < nbe; i++)
		str_backenable(q, beband[i]);
}

void flushq(queue_t *q, int flag)
{
	if (unlikely(q == NULL)) {
		str_bad("flushq(NULL)", q);
		return;
	}
	flush_common(q, flag, false, 0, NULL, NULL);
}

void flushband(queue_t *q, unsigned char band, int flag)
{
	if (unlikely(q == NULL)) {
		str_bad("flushband(NULL)", q);
		return;
	}
	str_flush_gen(q, flag, true, band, NULL, NULL);
}

void str_flush_gen(queue_t *q, int flag, bool one_band, unsigned char band,
		   unsigned *gen, unsigned *gen2)
{
	if (one_band && band != 0 && band > q->q_nband)
		return;
	flush_common(q, flag, one_band, band, gen, gen2);
}

int qsize(queue_t *q)
{
	int n = 0;

	if (q == NULL)
		return 0;
	qlock(q);
	for (mblk_t *mp = q->q_first; mp != NULL; mp = mp->b_next)
		n++;
	qunlock(q);
	return n;
}

/* ---- flow control tests ---- */

/* The queue at or after q that flow control applies to: the first with a
 * service procedure, or the last. */
static inline queue_t *flow_queue(queue_t *q)
{
	queue_t *nq;
	int hops = 0;

	while (q_info(q)->qi_srvp == NULL &&
	       (nq = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE)) != NULL &&
	       hops++ < 1024)
		q = nq;
	return q;
}

int bcanput(queue_t *q, unsigned char band)
{
	if (unlikely(q == NULL)) {
		str_bad("canput(NULL)", q);
		return 0;
	}
	q = flow_queue(q);
	if (band == 0 || unlikely(qflags(q) & QBANDFC)) {
		if (likely(!(qflags(q) & QFULL)))
			return 1;
		qlock(q);
		if (!(q->q_flag & QFULL)) {
			qunlock(q);
			return 1;
		}
		qf_set(q, QWANTW);
		qunlock(q);
		return 0;
	}
	qlock(q);
	if (band > q->q_nband) {
		qunlock(q);
		return 1;
	}
	qband_t *qb = &q->q_bandp[band - 1];
	if (!(qb->qb_flag & QB_FULL)) {
		qunlock(q);
		return 1;
	}
	qbf_set(qb, QB_WANTW);
	qunlock(q);
	return 0;
}

int canput(queue_t *q)
{
	return bcanput(q, 0);
}

/* May some band above 0 be written below q (SVR4 strpoll's POLLWRBAND):
 * one that exists and is not full, or none exists yet.  When not, every
 * band asks to be back-enabled, so the first to drain says so. */
int str_bcanputnext_any(queue_t *q)
{
	queue_t *nq = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE);
	int ok = 0;

	if (nq == NULL)
		return 1;
	nq = flow_queue(nq);
	if (qflags(nq) & QBANDFC)
		return bcanput(nq, 0);
	qlock(nq);
	if (nq->q_nband == 0)
		ok = 1;
	for (int b = 0; b < nq->q_nband && !ok; b++)
		ok = !(nq->q_bandp[b].qb_flag & QB_FULL);
	if (!ok)
		for (int b = 0; b < nq->q_nband; b++)
			qbf_set(&nq->q_bandp[b], QB_WANTW);
	qunlock(nq);
	return ok;
}

int canputnext(queue_t *q)
{
	if (unlikely(q == NULL)) {
		str_bad("canputnext(NULL)", q);
		return 0;
	}
	queue_t *nq = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE);
	if (unlikely(nq == NULL))
		return 1;	/* nowhere to go: never flow controlled */
	return bcanput(nq, 0);
}

int bcanputnext(queue_t *q, unsigned char band)
{
	if (unlikely(q == NULL)) {
		str_bad("bcanputnext(NULL)", q);
		return 0;
	}
	queue_t *nq = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE);
	if (unlikely(nq == NULL))
		return 1;
	return bcanput(nq, band);
}

/* ---- queue fields ---- */

int strqget(queue_t *q, qfields_t what, unsigned char pri, long *valp)
{
	qband_t *qb = NULL;
	int err = 0;

	if (q == NULL || valp == NULL)
		return EINVAL;
	qlock(q);
	if (pri != 0) {
		if (!qband_alloc(q, pri)) {
			qunlock(q);
			return EAGAIN;
		}
		qb = qband_get(q, pri);
	}
	switch (what) {
	case QHIWAT:
		*valp = (long)(qb ? qb->qb_hiwat : q->q_hiwat);
		break;
	case QLOWAT:
		*valp = (long)(qb ? qb->qb_lowat : q->q_lowat);
		break;
	case QMAXPSZ:
		if (qb)
			err = EINVAL;
		else
			*valp = q->q_maxpsz;
		break;
	case QMINPSZ:
		if (qb)
			err = EINVAL;
		else
			*valp = q->q_minpsz;
		break;
	case QCOUNT:
		*valp = (long)(qb ? qb->qb_count : q->q_count);
		break;
	case QFIRST:
		*valp = (long)(qb ? qb->qb_first : q->q_first);
		break;
	case QLAST:
		*valp = (long)(qb ? qb->qb_last : q->q_last);
		break;
	case QFLAG:
		*valp = (long)(qb ? qb->qb_flag : q->q_flag);
		break;
	default:
		err = EINVAL;
		break;
	}
	qunlock(q);
	return err;
}

int strqset(queue_t *q, qfields_t what, unsigned char pri, long val)
{
	qband_t *qb = NULL;
	int err = 0, be = 0;

	if (q == NULL)
		return EINVAL;
	if (what == QCOUNT || what == QFIRST || what == QLAST ||
	    what == QFLAG)
		return EPERM;
	if ((what == QHIWAT || what == QLOWAT) && val < 0)
		return EINVAL;
	qlock(q);
	if (pri != 0) {
		if (!qband_alloc(q, pri)) {
			qunlock(q);
			return EAGAIN;
		}
		qb = qband_get(q, pri);
	}
	switch (what) {
	case QHIWAT:
		/* (the stream head reads the marks without the lock) */
		if (qb)
			qb->qb_hiwat = (unsigned long)val;
		else
			__atomic_store_n(&q->q_hiwat, (unsigned long)val,
					 __ATOMIC_RELAXED);
		break;
	case QLOWAT:
		if (qb)
			qb->qb_lowat = (unsigned long)val;
		else
			__atomic_store_n(&q->q_lowat, (unsigned long)val,
					 __ATOMIC_RELAXED);
		break;
	case QMAXPSZ:
		if (qb)
			err = EINVAL;
		else
			q->q_maxpsz = val;
		break;
	case QMINPSZ:
		if (qb)
			err = EINVAL;
		else
			q->q_minpsz = val;
		break;
	default:
		err = EINVAL;
		break;
	}
	/* re-apply the marks to what is queued now */
	if (err == 0 && (what == QHIWAT || what == QLOWAT)) {
		if (qb == NULL) {
			if (over_hi(q->q_count, q->q_mblkcnt, q->q_hiwat) &&
			    q->q_mblkcnt > 0)
				qf_set(q, QFULL);
			else if (under_lo(q->q_count, q->q_mblkcnt,
					  q->q_lowat)) {
				qf_clr(q, QFULL);
				if (q->q_flag & QWANTW) {
					qf_clr(q, QWANTW);
					be = 1;
				}
			}
		} else {
			if (over_hi(qb->qb_count, qb->qb_mblkcnt,
				    qb->qb_hiwat) && qb->qb_mblkcnt > 0)
				qbf_set(qb, QB_FULL);
			else if (under_lo(qb->qb_count, qb->qb_mblkcnt,
					  qb->qb_lowat)) {
				qbf_clr(qb, QB_FULL);
				if (qb->qb_flag & QB_WANTW) {
					qbf_clr(qb, QB_WANTW);
					be = pri + 1;
				}
			}
		}
	}
	qunlock(q);
	backenable_result(q, be);
	return err;
}

/* ---- pair navigation ---- */

/* QREADR never changes, but other bits of q_flag do: read it atomically. */
queue_t *OTHERQ(queue_t *q)
{
	return (qflags(q) & QREADR) ? q + 1 : q - 1;
}

queue_t *RD(queue_t *q)
{
	return (qflags(q) & QREADR) ? q : q - 1;
}

queue_t *WR(queue_t *q)
{
	return (qflags(q) & QREADR) ? q + 1 : q;
}

int SAMESTR(queue_t *q)
{
	queue_t *nq = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE);

	return nq != NULL && ((qflags(nq) ^ qflags(q)) & QREADR) == 0;
}
