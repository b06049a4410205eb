/*
 * batch.c -- deferred queueing: a thread's run of messages for one queue,
 * queued and announced once.
 *
 * How it works.  The I/O thread delivers the datagrams of one recvmmsg
 * (often 64 of them from one GRO packet) one putnext at a time; each used
 * to end in the stream head's putq (a lock taken and let go) and a look
 * at the sleeping readers.  Between str_batch_begin and str_batch_end the
 * head hands such messages to str_batch_add instead, which links them in
 * a run kept in the thread (strthread: t_bq, t_bfirst, t_blast, t_bn) and
 * returns; the run goes to the owner's function (the head: one
 * str_putq_run_gen and one wake-up) when the batch ends, when a message for
 * another queue comes, or when str_batch_flush is called because
 * something that must not overtake the run is about to happen (a flush, a
 * hangup, a high priority message).  Everything stays in the thread that
 * put it, inside one executive entry, so the queue cannot go away and no
 * lock is needed; the messages are visible to the reader a batch later,
 * never out of order.  A run carries a key from its owner (the head: the
 * count of read-side flushes when its messages came), and a message with
 * another key starts a new run, so the owner can tell a run that a flush
 * from another thread overtook while it waited (and drop it, as the
 * flush would have).
 */
#include "strsubr.h"

void str_batch_begin(void)
{
	str_self()->t_batch++;
}

void str_batch_flush_slow(struct strthread *t)
{
	queue_t *q = t->t_bq;
	mblk_t *first = t->t_bfirst;
	str_batch_fn fn = t->t_bfn;
	unsigned key = t->t_bkey;
	int n = t->t_bn;

	t->t_bq = NULL;
	t->t_bfirst = t->t_blast = NULL;
	t->t_bn = 0;
	t->t_bfn = NULL;
	if (n != 0)
		fn(q, first, n, key);
}

void str_batch_end(void)
{
	struct strthread *t = str_self();

	if (--t->t_batch == 0 && t->t_bn != 0)
		str_batch_flush_slow(t);
}

void str_batch_add_run(struct strthread *t, queue_t *q, mblk_t *mp,
		       str_batch_fn fn, unsigned key)
{
	if (t->t_bn != 0 && (t->t_bq != q || t->t_bfn != fn ||
			     t->t_bkey != key))
		str_batch_flush_slow(t);
	mp->b_next = NULL;
	if (t->t_bn++ == 0) {
		t->t_bq = q;
		t->t_bfn = fn;
		t->t_bkey = key;
		t->t_bfirst = mp;
	} else {
		t->t_blast->b_next = mp;
	}
	t->t_blast = mp;
}
