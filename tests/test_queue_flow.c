/*
 * test_queue_flow -- SVR4 flow control: QFULL at high water, cleared
 * only below low water; canput sets QWANTW; back-enabling of the nearest
 * queue behind with a service procedure, across a queue without one;
 * bands; high priority never refused; QWANTR and noenable scheduling.
 */
#include <errno.h>

#include "t.h"
#include "qtest.h"

static bool full(queue_t *q)
{
	return (qt_flag(q) & QFULL) != 0;
}

static void test_hysteresis(void)
{
	struct qcount cu = { 0 }, cd = { 0 };
	queue_t *u = qt_pair(true, &cu), *d = qt_pair(true, &cd);
	queue_t *dw = WR(d);
	mblk_t *mp;

	qt_link(u, d);
	CHECK_PTR(backq(dw), WR(u));
	CHECK_EQ(strqset(dw, QHIWAT, 0, 100), 0);
	CHECK_EQ(strqset(dw, QLOWAT, 0, 50), 0);
	noenable(dw);	/* keep d's own service out of the way */

	for (int i = 0; i < 9; i++)
		putq(dw, qt_msg(M_DATA, 0, 10, i));
	CHECK_EQ(dw->q_count, 90);
	CHECK(!full(dw));
	CHECK_EQ(canputnext(WR(u)), 1);
	CHECK(!(qt_flag(dw) & QWANTW));
	putq(dw, qt_msg(M_DATA, 0, 10, 9));	/* 100 == hiwat */
	CHECK(full(dw));
	CHECK_EQ(canputnext(WR(u)), 0);
	CHECK(qt_flag(dw) & QWANTW);
	CHECK_EQ(canput(dw), 0);

	int runs = qt_runs(&cu);
	/* drain: still full at 90 .. 50 (not below low water) */
	for (int i = 0; i < 5; i++) {
		mp = getq(dw);
		freemsg(mp);
		CHECK(full(dw));
		CHECK_EQ(qt_runs(&cu), runs);
	}
	CHECK_EQ(dw->q_count, 50);
	CHECK(full(dw));
	/* 40 < 50: clears, and the writer behind is back-enabled once */
	freemsg(getq(dw));
	CHECK_EQ(dw->q_count, 40);
	CHECK(!full(dw));
	CHECK(!(qt_flag(dw) & QWANTW));
	CHECK_EQ(qt_runs(&cu), runs + 1);
	CHECK(qt_flag(WR(u)) & QBACK || qt_runs(&cu) == runs + 1);
	/* further draining does not back-enable again */
	freemsg(getq(dw));
	CHECK_EQ(qt_runs(&cu), runs + 1);

	/* nobody waited: no back-enable when crossing low water */
	flushq(dw, FLUSHALL);
	for (int i = 0; i < 10; i++)
		putq(dw, qt_msg(M_DATA, 0, 10, i));
	CHECK(full(dw));
	runs = qt_runs(&cu);
	flushq(dw, FLUSHALL);
	CHECK(!full(dw));
	CHECK_EQ(qt_runs(&cu), runs);

	/* flushq of a full queue a writer waits on back-enables */
	for (int i = 0; i < 10; i++)
		putq(dw, qt_msg(M_DATA, 0, 10, i));
	CHECK_EQ(canput(dw), 0);
	flushq(dw, FLUSHDATA);
	CHECK_EQ(qt_runs(&cu), runs + 1);

	/* lowat 0: clears only when empty */
	strqset(dw, QLOWAT, 0, 0);
	for (int i = 0; i < 10; i++)
		putq(dw, qt_msg(M_DATA, 0, 10, i));
	for (int i = 0; i < 9; i++)
		freemsg(getq(dw));
	CHECK(full(dw));
	freemsg(getq(dw));
	CHECK(!full(dw));

	/* zero-length messages fill a queue by their number */
	strqset(dw, QHIWAT, 0, 5);
	strqset(dw, QLOWAT, 0, 2);
	for (int i = 0; i < 4; i++)
		putq(dw, qt_msg(M_DATA, 0, 0, i));
	CHECK(!full(dw));
	putq(dw, qt_msg(M_DATA, 0, 0, 4));
	CHECK(full(dw));
	CHECK_EQ(dw->q_count, 0);
	CHECK_EQ(dw->q_mblkcnt, 5);
	flushq(dw, FLUSHALL);

	/* high priority counts but is always accepted */
	strqset(dw, QHIWAT, 0, 10);
	strqset(dw, QLOWAT, 0, 5);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(putq(dw, qt_msg(M_PCPROTO, 0, 10, i)), 1);
	CHECK(full(dw));
	CHECK_EQ(qsize(dw), 5);
	flushq(dw, FLUSHALL);

	qt_free(d);
	qt_free(u);
}

static void test_bands(void)
{
	struct qcount cu = { 0 }, cd = { 0 };
	queue_t *u = qt_pair(true, &cu), *d = qt_pair(true, &cd);
	queue_t *dw = WR(d);

	qt_link(u, d);
	noenable(dw);
	CHECK_EQ(bcanput(dw, 7), 1);		/* no such band yet */
	CHECK_EQ(strqset(dw, QHIWAT, 1, 30), 0);
	CHECK_EQ(strqset(dw, QLOWAT, 1, 20), 0);
	for (int i = 0; i < 3; i++)
		putq(dw, qt_msg(M_DATA, 1, 10, i));
	CHECK(dw->q_bandp[0].qb_flag & QB_FULL);
	CHECK(!full(dw));			/* band 0 unaffected */
	CHECK_EQ(bcanputnext(WR(u), 0), 1);
	CHECK_EQ(bcanputnext(WR(u), 1), 0);
	CHECK(dw->q_bandp[0].qb_flag & QB_WANTW);
	int runs = qt_runs(&cu);
	freemsg(getq(dw));			/* 20: not below 20 */
	CHECK(dw->q_bandp[0].qb_flag & QB_FULL);
	CHECK_EQ(qt_runs(&cu), runs);
	freemsg(getq(dw));			/* 10 < 20 */
	CHECK(!(dw->q_bandp[0].qb_flag & QB_FULL));
	CHECK_EQ(qt_runs(&cu), runs + 1);
	CHECK(WR(u)->q_nband == 0 || !(WR(u)->q_bandp[0].qb_flag & QB_WANTW));
	flushq(dw, FLUSHALL);
	qt_free(d);
	qt_free(u);
}

/* Back-enable across three queues: u (service) -> m (none) -> d. */
static void test_chain(void)
{
	struct qcount cu = { 0 }, cm = { 0 }, cd = { 0 };
	queue_t *u = qt_pair(true, &cu), *m = qt_pair(false, &cm),
		*d = qt_pair(true, &cd);
	queue_t *dw = WR(d);

	qt_link(u, m);
	qt_link(m, d);
	noenable(dw);
	strqset(dw, QHIWAT, 0, 20);
	strqset(dw, QLOWAT, 0, 10);
	putq(dw, qt_msg(M_DATA, 0, 20, 1));
	/* canputnext from u looks through m (no service) at d */
	CHECK_EQ(canputnext(WR(u)), 0);
	CHECK(qt_flag(dw) & QWANTW);
	CHECK(!(qt_flag(WR(m)) & QWANTW));
	int runs = qt_runs(&cu);
	freemsg(getq(dw));
	CHECK_EQ(qt_runs(&cu), runs + 1);	/* u, skipping m */
	CHECK_EQ(atomic_load(&cm.svc_runs), 0);
	qt_free(d);
	qt_free(m);
	qt_free(u);
}

static void test_wantr_noenable(void)
{
	struct qcount c = { 0 };
	queue_t *p = qt_pair(true, &c), *q = WR(p);
	int runs;

	/* a fresh queue wants reading (SVR4 qattach): band-0 putq enables */
	CHECK(qt_flag(q) & QWANTR);
	runs = qt_runs(&c);
	putq(q, qt_msg(M_DATA, 0, 1, 1));
	CHECK_EQ(qt_runs(&c), runs + 1);
	/* the service above did not read it: QWANTR still set, so a second
	 * message enables again */
	putq(q, qt_msg(M_DATA, 0, 1, 1));
	CHECK_EQ(qt_runs(&c), runs + 2);
	freemsg(getq(q));
	freemsg(getq(q));
	CHECK(!(qt_flag(q) & QWANTR));	/* returned a message */
	CHECK_PTR(getq(q), NULL);
	CHECK(qt_flag(q) & QWANTR);	/* found it empty */
	putq(q, qt_msg(M_DATA, 0, 1, 2));
	CHECK_EQ(qt_runs(&c), runs + 3);
	/* a reader that got a message and did not come back: no enable */
	freemsg(getq(q));
	CHECK(!(qt_flag(q) & QWANTR));
	putq(q, qt_msg(M_DATA, 0, 1, 2));
	CHECK_EQ(qt_runs(&c), runs + 3);
	freemsg(getq(q));

	/* band messages enable whenever allowed */
	runs = qt_runs(&c);
	putq(q, qt_msg(M_DATA, 3, 1, 3));
	CHECK_EQ(qt_runs(&c), runs + 1);
	freemsg(getq(q));

	/* noenable: ordinary messages do not schedule, high priority does,
	 * qenable does */
	noenable(q);
	CHECK(qt_flag(q) & QNOENB);
	CHECK_PTR(getq(q), NULL);	/* QWANTR */
	runs = qt_runs(&c);
	putq(q, qt_msg(M_DATA, 0, 1, 4));
	putq(q, qt_msg(M_DATA, 2, 1, 5));
	CHECK_EQ(qt_runs(&c), runs);
	putq(q, qt_msg(M_PCPROTO, 0, 1, 6));
	CHECK_EQ(qt_runs(&c), runs + 1);
	qenable(q);
	CHECK_EQ(qt_runs(&c), runs + 2);
	enableok(q);
	CHECK(!(qt_flag(q) & QNOENB));
	flushq(q, FLUSHALL);
	CHECK_PTR(getq(q), NULL);
	putq(q, qt_msg(M_DATA, 0, 1, 7));
	CHECK_EQ(qt_runs(&c), runs + 3);
	flushq(q, FLUSHALL);

	/* qenable of an enabled queue is a no-op: inside one entry the
	 * service runs once, on the way out */
	runs = qt_runs(&c);
	struct strthread *t = str_enter();
	qenable(q);
	qenable(q);
	qenable(q);
	CHECK(__atomic_load_n(&q->q_flag, __ATOMIC_ACQUIRE) & QENAB);
	CHECK_EQ(qt_runs(&c), runs);
	str_exit(t);
	CHECK_EQ(qt_runs(&c), runs + 1);
	CHECK(!(qt_flag(q) & QENAB));

	/* putbq of high priority enables (the documented loop hazard) */
	runs = qt_runs(&c);
	putbq(q, qt_msg(M_PCPROTO, 0, 1, 8));
	CHECK_EQ(qt_runs(&c), runs + 1);
	flushq(q, FLUSHALL);
	qt_free(p);
}

int main(void)
{
	th_mark();
	test_hysteresis();
	test_bands();
	test_chain();
	test_wantr_noenable();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
