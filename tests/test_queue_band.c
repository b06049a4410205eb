/*
 * test_queue_band -- message order on a queue: high priority first, then
 * bands high to low, band 0 last, FIFO within each; putbq at the head of
 * its class; insq order checks; rmvq; flushq and flushband; qsize;
 * strqget/strqset.
 */
#include <errno.h>

#include "t.h"
#include "qtest.h"

/* Drain q with getq and compare the tags with want[]. */
static void expect_order(queue_t *q, const int *want, int n, int line)
{
	int i = 0;
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		if (i >= n || qt_tag(mp) != want[i]) {
			fprintf(stderr, "line %d: position %d: got tag %d want %d\n",
				line, i, qt_tag(mp), i < n ? want[i] : -1);
			t_failed++;
		}
		t_checked++;
		i++;
		freemsg(mp);
	}
	CHECK_EQ(i, n);
}
#define EXPECT(q, ...) do { int _w[] = { __VA_ARGS__ }; \
	expect_order((q), _w, (int)(sizeof(_w) / sizeof(_w[0])), __LINE__); } while (0)

static void test_putq_order(queue_t *q)
{
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 1)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 1, 1, 2)), 1);
	CHECK_EQ(putq(q, qt_msg(M_PCPROTO, 0, 1, 3)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 2, 1, 4)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 5)), 1);
	CHECK_EQ(putq(q, qt_msg(M_PROTO, 1, 1, 6)), 1);
	/* high priority ignores its band and goes after older high priority */
	CHECK_EQ(putq(q, qt_msg(M_PCPROTO, 7, 1, 7)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 2, 1, 8)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 255, 1, 9)), 1);
	CHECK_EQ(qsize(q), 9);
	CHECK(q->q_nband >= 255);
	CHECK_EQ(q->q_bandp[0].qb_count, 2);	/* band 1 */
	CHECK_EQ(q->q_bandp[1].qb_count, 2);	/* band 2 */
	CHECK_EQ(q->q_count, 4);		/* band 0 + high priority */
	EXPECT(q, 3, 7, 9, 4, 8, 2, 6, 1, 5);
	CHECK_EQ(q->q_count, 0);
	CHECK_EQ(q->q_bandp[0].qb_count, 0);
	CHECK_PTR(q->q_bandp[0].qb_first, NULL);
	CHECK_PTR(q->q_bandp[0].qb_last, NULL);
	CHECK_PTR(q->q_first, NULL);
	CHECK_PTR(q->q_last, NULL);
}

static void test_putbq(queue_t *q)
{
	putq(q, qt_msg(M_DATA, 1, 1, 1));
	putq(q, qt_msg(M_DATA, 0, 1, 2));
	CHECK_EQ(putbq(q, qt_msg(M_DATA, 0, 1, 3)), 1);	/* head of band 0 */
	CHECK_EQ(putbq(q, qt_msg(M_DATA, 1, 1, 4)), 1);	/* head of band 1 */
	CHECK_EQ(putbq(q, qt_msg(M_DATA, 3, 1, 5)), 1);	/* new band 3 */
	CHECK_EQ(putbq(q, qt_msg(M_DATA, 2, 1, 6)), 1);	/* new band 2 */
	CHECK_EQ(putbq(q, qt_msg(M_PCPROTO, 0, 1, 7)), 1);	/* very head */
	putq(q, qt_msg(M_DATA, 2, 1, 8));			/* tail of band 2 */
	putq(q, qt_msg(M_PCPROTO, 0, 1, 9));			/* after 7 */
	EXPECT(q, 7, 9, 5, 6, 8, 4, 1, 3, 2);

	/* a message taken with getq and put back is first again */
	putq(q, qt_msg(M_DATA, 0, 1, 1));
	putq(q, qt_msg(M_DATA, 0, 1, 2));
	mblk_t *mp = getq(q);
	CHECK_EQ(qt_tag(mp), 1);
	putbq(q, mp);
	EXPECT(q, 1, 2);
}

static void test_insq(queue_t *q)
{
	mblk_t *b1 = qt_msg(M_DATA, 1, 1, 1), *d0 = qt_msg(M_DATA, 0, 1, 2);
	mblk_t *bad;

	putq(q, b1);
	putq(q, d0);
	/* band 0 before a band-1 message: out of order */
	bad = qt_msg(M_DATA, 0, 1, 99);
	CHECK_EQ(insq(q, b1, bad), 0);
	/* band 2 after band 0 (at the tail): out of order */
	bad->b_band = 2;
	CHECK_EQ(insq(q, NULL, bad), 0);
	/* high priority behind ordinary: out of order */
	mblk_t *hp = qt_msg(M_PCPROTO, 0, 1, 3);
	CHECK_EQ(insq(q, d0, hp), 0);
	/* valid: high priority first, band 2 before band 1, band 0 between
	 * band 1 and d0, band 1 after b1 */
	CHECK_EQ(insq(q, b1, hp), 1);
	CHECK_EQ(insq(q, b1, bad), 1);		/* band 2, tag 99 */
	mblk_t *m4 = qt_msg(M_DATA, 0, 1, 4);
	CHECK_EQ(insq(q, d0, m4), 1);
	/* band 1 before d0 with band-0 m4 ahead of it: out of order */
	mblk_t *m5 = qt_msg(M_DATA, 1, 1, 5);
	CHECK_EQ(insq(q, d0, m5), 0);
	CHECK_EQ(insq(q, m4, m5), 1);
	CHECK_EQ(insq(q, NULL, qt_msg(M_DATA, 0, 1, 6)), 1);
	CHECK_EQ(q->q_bandp[0].qb_count, 2);
	CHECK_EQ(q->q_bandp[1].qb_count, 1);
	EXPECT(q, 3, 99, 1, 5, 4, 2, 6);
	/* the band markers follow insertions made at the band ends */
	CHECK_PTR(q->q_bandp[0].qb_first, NULL);
}

static void test_rmvq(queue_t *q)
{
	mblk_t *a = qt_msg(M_DATA, 1, 10, 1), *b = qt_msg(M_DATA, 1, 20, 2),
	       *c = qt_msg(M_DATA, 0, 30, 3);

	putq(q, a);
	putq(q, b);
	putq(q, c);
	CHECK_EQ(q->q_bandp[0].qb_count, 30);
	rmvq(q, a);
	CHECK_PTR(q->q_bandp[0].qb_first, b);
	CHECK_PTR(q->q_bandp[0].qb_last, b);
	CHECK_EQ(q->q_bandp[0].qb_count, 20);
	CHECK_PTR(a->b_next, NULL);
	rmvq(q, b);
	CHECK_PTR(q->q_bandp[0].qb_first, NULL);
	CHECK_EQ(q->q_bandp[0].qb_count, 0);
	CHECK_EQ(q->q_count, 30);
	freemsg(a);
	freemsg(b);
	EXPECT(q, 3);
}

static void test_flush(queue_t *q)
{
	/* FLUSHDATA keeps non-data messages, FLUSHALL takes everything */
	putq(q, qt_msg(M_DATA, 0, 1, 1));
	putq(q, qt_msg(M_CTL, 0, 1, 2));
	putq(q, qt_msg(M_PROTO, 1, 1, 3));
	putq(q, qt_msg(M_PCPROTO, 0, 1, 4));
	putq(q, qt_msg(M_IOCTL, 0, 1, 5));
	putq(q, qt_msg(M_DELAY, 0, 1, 6));
	putq(q, qt_msg(M_FLUSH, 0, 1, 7));
	flushq(q, FLUSHDATA);
	CHECK_EQ(qsize(q), 3);
	CHECK_EQ(q->q_bandp[0].qb_count, 0);
	EXPECT(q, 7, 2, 5);

	putq(q, qt_msg(M_DATA, 0, 1, 1));
	putq(q, qt_msg(M_CTL, 0, 1, 2));
	putq(q, qt_msg(M_PCSIG, 0, 1, 3));
	flushq(q, FLUSHALL);
	CHECK_EQ(qsize(q), 0);
	CHECK_EQ(q->q_count, 0);

	/* flushband: only the named band; band 0 means ordinary band-0 */
	putq(q, qt_msg(M_DATA, 0, 1, 1));
	putq(q, qt_msg(M_DATA, 1, 1, 2));
	putq(q, qt_msg(M_CTL, 1, 1, 3));
	putq(q, qt_msg(M_DATA, 2, 1, 4));
	putq(q, qt_msg(M_PCPROTO, 0, 1, 5));
	putq(q, qt_msg(M_CTL, 0, 1, 6));
	flushband(q, 1, FLUSHDATA);
	CHECK_EQ(qsize(q), 5);
	flushband(q, 0, FLUSHALL);
	CHECK_EQ(qsize(q), 3);
	flushband(q, 9, FLUSHALL);	/* no such band: nothing */
	CHECK_EQ(qsize(q), 3);
	EXPECT(q, 5, 4, 3);
	CHECK_EQ(q->q_count, 0);
}

static void test_strq(queue_t *q)
{
	long v;

	CHECK_EQ(strqset(q, QHIWAT, 0, 1000), 0);
	CHECK_EQ(strqget(q, QHIWAT, 0, &v), 0);
	CHECK_EQ(v, 1000);
	CHECK_PTR((void *)q->q_hiwat, (void *)1000);
	CHECK_EQ(strqset(q, QLOWAT, 0, 10), 0);
	CHECK_EQ(strqget(q, QLOWAT, 0, &v), 0);
	CHECK_EQ(v, 10);
	CHECK_EQ(strqset(q, QMAXPSZ, 0, 4096), 0);
	CHECK_EQ(strqget(q, QMAXPSZ, 0, &v), 0);
	CHECK_EQ(v, 4096);
	CHECK_EQ(strqset(q, QMINPSZ, 0, 2), 0);
	CHECK_EQ(q->q_minpsz, 2);
	/* read-only fields */
	CHECK_EQ(strqset(q, QCOUNT, 0, 5), EPERM);
	CHECK_EQ(strqset(q, QFIRST, 0, 5), EPERM);
	CHECK_EQ(strqset(q, QFLAG, 0, 5), EPERM);
	CHECK_EQ(strqset(q, QHIWAT, 0, -1), EINVAL);
	CHECK_EQ(strqset(q, QBAD, 0, 1), EINVAL);
	CHECK_EQ(strqget(q, QBAD, 0, &v), EINVAL);
	CHECK_EQ(strqget(q, QHIWAT, 0, NULL), EINVAL);
	/* a band is created on demand, starting from the queue's marks */
	CHECK_EQ(strqget(q, QHIWAT, 5, &v), 0);
	CHECK_EQ(v, 1000);
	CHECK(q->q_nband >= 5);
	CHECK_EQ(strqset(q, QHIWAT, 5, 77), 0);
	CHECK_EQ(q->q_bandp[4].qb_hiwat, 77);
	CHECK_EQ(strqset(q, QMAXPSZ, 5, 10), EINVAL);
	CHECK_EQ(strqget(q, QMINPSZ, 5, &v), EINVAL);
	putq(q, qt_msg(M_DATA, 5, 3, 1));
	CHECK_EQ(strqget(q, QCOUNT, 5, &v), 0);
	CHECK_EQ(v, 3);
	CHECK_EQ(strqget(q, QFIRST, 5, &v), 0);
	CHECK_PTR((void *)v, q->q_first);
	flushq(q, FLUSHALL);
}

/* freezestr: the freezing thread uses insq/rmvq/strqget unblocked. */
/* Take a run and check its tags (b_prev and b_queue are left for the
 * taker to clear); the messages are freed. */
static void expect_run(queue_t *q, const int *want, int n, int line)
{
	int i = 0;
	unsigned gen = 7, seen = 0;
	mblk_t *mp = str_getq_run(q, &gen, &seen), *next;

	CHECK_EQ(seen, 7);	/* the generation, read in the take */

	for (; mp != NULL; mp = next, i++) {
		next = mp->b_next;
		if (i >= n || qt_tag(mp) != want[i]) {
			fprintf(stderr, "line %d: run position %d: tag %d\n",
				line, i, qt_tag(mp));
			t_failed++;
		}
		t_checked++;
		mp->b_next = mp->b_prev = NULL;
		mp->b_queue = NULL;
		freemsg(mp);
	}
	CHECK_EQ(i, n);
}
#define RUN(q, ...) do { int _w[] = { __VA_ARGS__ }; \
	expect_run((q), _w, (int)(sizeof(_w) / sizeof(_w[0])), __LINE__); } while (0)

static void test_run(queue_t *q)
{
	unsigned gen = 0, seen = 99;

	/* only plain band-0 data: all of it, still counted */
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 3, 1)), 1);
	CHECK_EQ(putq(q, qt_msg(M_PROTO, 0, 2, 2)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 3)), 1);
	CHECK_EQ(q->q_nodd, 0);
	RUN(q, 1, 2, 3);
	CHECK_PTR(q->q_first, NULL);
	CHECK_PTR(q->q_last, NULL);
	CHECK_EQ(q->q_count, 6);
	str_qcredit(q, 6, 3);
	CHECK_EQ(q->q_count, 0);
	CHECK_EQ(q->q_mblkcnt, 0);
	/* a message of another type in between: the run stops before it */
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 4)), 1);
	CHECK_EQ(putq(q, qt_msg(M_SIG, 0, 1, 5)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 6)), 1);
	CHECK_EQ(q->q_nodd, 1);
	RUN(q, 4);
	str_qcredit(q, 1, 1);
	CHECK_PTR(str_getq_run(q, &gen, &seen), NULL);	/* M_SIG is first */
	EXPECT(q, 5, 6);
	CHECK_EQ(q->q_nodd, 0);
	/* a band message goes first: not a run; after it, one again */
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 7)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 1, 1, 8)), 1);
	CHECK_EQ(q->q_nodd, 1);
	CHECK_PTR(str_getq_run(q, &gen, &seen), NULL);
	EXPECT(q, 8, 7);
	/* flushing leaves nothing odd counted; an empty queue wants a
	 * reader (QWANTR), a run clears it */
	CHECK_EQ(putq(q, qt_msg(M_PCPROTO, 0, 1, 9)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 2, 1, 10)), 1);
	CHECK_EQ(q->q_nodd, 2);
	flushq(q, FLUSHALL);
	CHECK_EQ(q->q_nodd, 0);
	CHECK_PTR(str_getq_run(q, &gen, &seen), NULL);
	CHECK(qt_flag(q) & QWANTR);
	CHECK_EQ(seen, 0);
	/* the stream head's flushes count themselves in its generation, in
	 * the same lock hold (str_flush_gen); band 0 alone leaves band 1 */
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 12)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 1, 1, 13)), 1);
	unsigned gen2 = 7;
	str_flush_gen(q, FLUSHALL, true, 0, &gen, NULL);
	CHECK_EQ(gen, 1);
	EXPECT(q, 13);
	str_flush_gen(q, FLUSHDATA, false, 0, &gen, &gen2);
	CHECK_EQ(gen, 2);
	CHECK_EQ(gen2, 8);
	CHECK_PTR(str_getq_run(q, &gen, &seen), NULL);
	CHECK_EQ(seen, 2);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 11)), 1);
	RUN(q, 11);
	CHECK(!(qt_flag(q) & QWANTR));
	str_qcredit(q, 1, 1);
	CHECK_EQ(qsize(q), 0);
}

/* str_getq_n takes what that many getq calls would: high priority
 * first, then bands, then band 0, with the counts; an empty queue marks
 * QWANTR; below low water a writer that waited is back-enabled and the
 * taking stops there. */
static void test_getq_n(queue_t *q)
{
	mblk_t *v[8];
	int n;

	CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 3, 1)), 1);
	CHECK_EQ(putq(q, qt_msg(M_DATA, 2, 1, 2)), 1);
	CHECK_EQ(putq(q, qt_msg(M_PCPROTO, 0, 1, 3)), 1);
	CHECK_EQ(putq(q, qt_msg(M_PROTO, 0, 2, 4)), 1);
	n = str_getq_n(q, v, 2);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(qt_tag(v[0]), 3);
		CHECK_EQ(qt_tag(v[1]), 2);
	}
	CHECK_EQ(q->q_count, 5);
	CHECK(!(qt_flag(q) & QWANTR));
	for (int i = 0; i < n; i++)
		freemsg(v[i]);
	n = str_getq_n(q, v, 8);	/* the rest, then empty */
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(qt_tag(v[0]), 1);
		CHECK_EQ(qt_tag(v[1]), 4);
	}
	CHECK_EQ(q->q_count, 0);
	CHECK(qt_flag(q) & QWANTR);
	for (int i = 0; i < n; i++)
		freemsg(v[i]);
	CHECK_EQ(str_getq_n(q, v, 8), 0);
	/* plain messages only (taken in one cut): the first max, counted
	 * off, the rest still queued and linked, QWANTR only once empty */
	for (int i = 0; i < 5; i++)
		CHECK_EQ(putq(q, qt_msg(i & 1 ? M_PROTO : M_DATA, 0, 2,
					20 + i)), 1);
	CHECK(qt_flag(q) & QWANTR);	/* (still: the last take found none) */
	n = str_getq_n(q, v, 3);
	CHECK_EQ(n, 3);
	CHECK_EQ(q->q_count, 4);
	CHECK_EQ(q->q_mblkcnt, 2);
	CHECK(!(qt_flag(q) & QWANTR));
	for (int i = 0; i < n; i++) {
		CHECK_EQ(qt_tag(v[i]), 20 + i);
		CHECK_PTR(v[i]->b_next, NULL);
		CHECK_PTR(v[i]->b_prev, NULL);
		CHECK_PTR(v[i]->b_queue, NULL);
		freemsg(v[i]);
	}
	CHECK_PTR(q->q_first->b_prev, NULL);
	CHECK_EQ(qsize(q), 2);
	n = str_getq_n(q, v, 3);
	CHECK_EQ(n, 2);
	CHECK_EQ(q->q_count, 0);
	CHECK_EQ(q->q_mblkcnt, 0);
	CHECK_PTR(q->q_first, NULL);
	CHECK_PTR(q->q_last, NULL);
	CHECK(qt_flag(q) & QWANTR);
	for (int i = 0; i < n; i++) {
		CHECK_EQ(qt_tag(v[i]), 23 + i);
		freemsg(v[i]);
	}
	long hi = q->q_hiwat, lo = q->q_lowat;
	/* full, nobody waiting: the cut takes QFULL off once below low
	 * water, as the getq calls would */
	q->q_hiwat = 4;
	q->q_lowat = 2;
	for (int i = 0; i < 6; i++)
		CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 30 + i)), 1);
	CHECK(qt_flag(q) & QFULL);
	CHECK(!(qt_flag(q) & QWANTW));
	n = str_getq_n(q, v, 3);
	CHECK_EQ(n, 3);
	CHECK(qt_flag(q) & QFULL);	/* 3 left: not below low water */
	for (int i = 0; i < n; i++)
		freemsg(v[i]);
	n = str_getq_n(q, v, 2);
	CHECK_EQ(n, 2);
	CHECK(!(qt_flag(q) & QFULL));	/* 1 left */
	for (int i = 0; i < n; i++)
		freemsg(v[i]);
	EXPECT(q, 35);
	/* a full queue whose writer waits: taking stops once below low
	 * water (the writer is back-enabled then) */
	q->q_hiwat = 4;
	q->q_lowat = 2;
	for (int i = 0; i < 6; i++)
		CHECK_EQ(putq(q, qt_msg(M_DATA, 0, 1, 10 + i)), 1);
	CHECK(qt_flag(q) & QFULL);
	CHECK_EQ(canput(q), 0);		/* QWANTW */
	n = str_getq_n(q, v, 8);
	CHECK_EQ(n, 5);			/* 6 -> 1: under low water at 1 */
	CHECK(!(qt_flag(q) & (QFULL | QWANTW)));
	for (int i = 0; i < n; i++) {
		CHECK_EQ(qt_tag(v[i]), 10 + i);
		freemsg(v[i]);
	}
	EXPECT(q, 15);
	q->q_hiwat = hi;
	q->q_lowat = lo;
}

static void free_rtn_noop(char *arg)
{
	(void)arg;
}

static void test_append(queue_t *q)
{
	static char ext[64];
	frtn_t fr = { free_rtn_noop, NULL };
	mblk_t *one = qt_msg(M_DATA, 0, 1, 1), *big, *mp, *d;
	unsigned long hi = q->q_hiwat;

	one->b_rptr[0] = 'x';
	/* nothing queued: nothing to append to */
	CHECK(!str_putq_append(q, one));
	/* a block with room takes it, counted as putq would */
	mp = allocb(64, BPRI_MED);
	REQUIRE(mp != NULL);
	*mp->b_wptr++ = 'a';
	CHECK_EQ(putq(q, mp), 1);
	CHECK(str_putq_append(q, one));
	CHECK(str_putq_append(q, one));
	CHECK_EQ(q->q_count, 3);
	CHECK_EQ(q->q_mblkcnt, 1);
	CHECK_EQ(mp->b_merged, 2);
	CHECK_EQ(memcmp(mp->b_rptr, "axx", 3), 0);
	/* no room for a message longer than what is left */
	big = qt_msg(M_DATA, 0, (size_t)(mp->b_datap->db_lim - mp->b_wptr) + 1,
		     2);
	CHECK(!str_putq_append(q, big));
	freemsg(big);
	/* shared (dupb), lent (esballoc), other types, bands, chains: no */
	d = dupb(mp);
	REQUIRE(d != NULL);
	CHECK(!str_putq_append(q, one));
	freeb(d);
	CHECK(str_putq_append(q, one));
	CHECK_EQ(mp->b_merged, 3);
	flushq(q, FLUSHALL);
	mp = esballoc((unsigned char *)ext, sizeof(ext), BPRI_MED, &fr);
	REQUIRE(mp != NULL);
	CHECK_EQ(putq(q, mp), 1);
	CHECK(!str_putq_append(q, one));
	flushq(q, FLUSHALL);
	CHECK_EQ(putq(q, qt_msg(M_PROTO, 0, 1, 3)), 1);
	CHECK(!str_putq_append(q, one));
	flushq(q, FLUSHALL);
	mp = qt_msg(M_DATA, 1, 1, 4);
	CHECK_EQ(putq(q, mp), 1);
	CHECK(!str_putq_append(q, one));
	flushq(q, FLUSHALL);
	mp = qt_msg(M_DATA, 0, 1, 5);
	mp->b_cont = qt_msg(M_DATA, 0, 1, 6);
	CHECK_EQ(putq(q, mp), 1);
	CHECK(!str_putq_append(q, one));
	flushq(q, FLUSHALL);
	/* past high water the queue is full, as after a putq */
	CHECK_EQ(strqset(q, QHIWAT, 0, 2), 0);
	mp = allocb(64, BPRI_MED);
	REQUIRE(mp != NULL);
	*mp->b_wptr++ = 'a';
	CHECK_EQ(putq(q, mp), 1);
	CHECK(!(qt_flag(q) & QFULL));
	CHECK(str_putq_append(q, one));
	CHECK(qt_flag(q) & QFULL);
	flushq(q, FLUSHALL);
	CHECK(!(qt_flag(q) & QFULL));
	CHECK_EQ(strqset(q, QHIWAT, 0, (long)hi), 0);
	CHECK_EQ(qsize(q), 0);
	freemsg(one);
}

static void test_freeze(void)
{
	struct stdata *sd = th_stream("tsinkq", NULL);
	REQUIRE(sd != NULL);
	queue_t *dq = WR(str_top(sd));
	mblk_t *a = qt_msg(M_DATA, 0, 4, 1);
	long v;

	putq(dq, qt_msg(M_DATA, 0, 4, 2));
	freezestr(dq);
	CHECK_EQ(strqget(dq, QCOUNT, 0, &v), 0);
	CHECK_EQ(v, 4);
	CHECK_EQ(insq(dq, dq->q_first, a), 1);
	rmvq(dq, a);
	freemsg(a);
	unfreezestr(dq);
	CHECK_EQ(qsize(dq), 1);
	th_close(sd);
}

int main(void)
{
	struct qcount c = { 0 };
	queue_t *rq, *rq2;

	th_mark();
	rq = qt_pair(true, &c);
	test_putq_order(WR(rq));
	test_putbq(WR(rq));
	test_insq(WR(rq));
	test_rmvq(WR(rq));
	test_flush(WR(rq));
	test_run(WR(rq));
	test_getq_n(WR(rq));
	test_append(WR(rq));
	qt_free(rq);
	rq2 = qt_pair(true, &c);	/* no bands yet */
	test_strq(WR(rq2));
	qt_free(rq2);
	test_freeze();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
