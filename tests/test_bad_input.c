/*
 * test_bad_input -- DDI calls with NULL or freed messages, NULL queues and
 * messages that are not where the caller says: refused with the
 * documented result and counted, never a crash; in a debug run
 * (STREAMS_DEBUG=1) they abort so that the bug is found.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "qtest.h"

extern long str_bad_calls(void);

static void test_refused(void)
{
	struct qcount c = { 0 };
	queue_t *p = qt_pair(true, &c), *q = WR(p), *q2;
	queue_t *p2 = qt_pair(true, &c);
	long bad0 = str_bad_calls();
	mblk_t *mp;

	q2 = WR(p2);
	freeb(NULL);
	freemsg(NULL);			/* allowed: frees nothing */
	CHECK_EQ(putq(NULL, NULL), 0);
	CHECK_EQ(putq(q, NULL), 0);
	CHECK_EQ(putbq(q, NULL), 0);
	CHECK_EQ(insq(q, NULL, NULL), 0);
	CHECK_PTR(getq(NULL), NULL);
	CHECK_EQ(canput(NULL), 0);
	CHECK_EQ(canputnext(NULL), 0);
	CHECK_EQ(bcanputnext(NULL, 1), 0);
	CHECK_PTR(dupb(NULL), NULL);
	CHECK_PTR(copyb(NULL), NULL);
	CHECK_EQ(putnext(NULL, NULL), 0);
	CHECK_EQ(put(NULL, NULL), 0);
	CHECK_EQ(qreply(NULL, NULL), 0);
	qenable(NULL);
	flushq(NULL, FLUSHALL);
	flushband(NULL, 1, FLUSHALL);
	rmvq(q, NULL);
	CHECK_EQ(qsize(NULL), 0);
	CHECK(str_bad_calls() > bad0 + 15);

	/* a message on another queue */
	mp = qt_msg(M_DATA, 0, 1, 1);
	putq(q2, mp);
	long b = str_bad_calls();
	rmvq(q, mp);
	CHECK_EQ(str_bad_calls(), b + 1);
	CHECK_EQ(qsize(q2), 1);			/* untouched */
	mblk_t *nm = qt_msg(M_DATA, 0, 1, 2);
	CHECK_EQ(insq(q, mp, nm), 0);		/* refused: still ours */
	freemsg(nm);
	flushq(q2, FLUSHALL);

	/* putctl refuses data types and silly types */
	CHECK_EQ(putctl(q, M_DATA), 0);
	CHECK_EQ(putctl1(q, M_PROTO, 1), 0);
	CHECK_EQ(putctl(q, 0x1ff), 0);
	CHECK_EQ(putctl(q, -1), 0);
	CHECK_EQ(putctl1(q, M_CTL, 3), 1);
	mp = getq(q);
	REQUIRE(mp != NULL);
	CHECK_EQ(mp->b_datap->db_type, M_CTL);
	CHECK_EQ(mp->b_rptr[0], 3);
	freemsg(mp);
	CHECK_EQ(putctl2(q, M_CTL, 4, 5), 1);
	mp = getq(q);
	CHECK_EQ(MBLKL(mp), 2);
	freemsg(mp);

#if !defined(__SANITIZE_ADDRESS__)
	/* a block freed twice is caught (ASan catches it on its own) */
	mp = allocb(8, BPRI_MED);
	freeb(mp);
	b = str_bad_calls();
	freeb(mp);
	CHECK_EQ(str_bad_calls(), b + 1);
	CHECK_PTR(dupb(mp), NULL);
#endif
	qt_free(p);
	qt_free(p2);
}

/* With STREAMS_DEBUG=1 the same call aborts. */
static void test_debug_aborts(void)
{
	pid_t pid = fork();
	int st;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		setenv("STREAMS_DEBUG", "1", 1);
		/* quiet: the expected report would clutter the test log */
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(2);
		qenable(NULL);
		_exit(0);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

int main(void)
{
	th_mark();
	test_debug_aborts();
	test_refused();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
