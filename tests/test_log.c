/*
 * test_log -- strlog (ring, trace filter, levels), cmn_err (prefixes,
 * '!' log-only, CE_PANIC aborts), and the put helpers that build control
 * messages (putnextctl*, qreply, qwriter).
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/cmn_err.h>
#include <sys/strlog.h>

#include "t.h"
#include "qtest.h"

static void test_strlog(void)
{
	struct strlog_rec r[8];
	int seq = 0, n;

	/* drain whatever is there */
	while (strlog_read(r, 8, &seq) > 0)
		;
	CHECK_EQ(strlog(42, 7, 0, SL_ERROR, "disk %d on fire", 3), 1);
	CHECK_EQ(strlog(42, 7, 5, SL_TRACE, "not traced"), 0);
	CHECK_EQ(strlog_trace(42, -1, 5), 0);
	CHECK_EQ(strlog(42, 7, 5, SL_TRACE, "traced %s", "now"), 1);
	CHECK_EQ(strlog(42, 7, 6, SL_TRACE, "level too high"), 0);
	CHECK_EQ(strlog(43, 7, 1, SL_TRACE, "other module"), 0);
	n = strlog_read(r, 8, &seq);
	CHECK_EQ(n, 2);
	CHECK_EQ(r[0].lc.mid, 42);
	CHECK_EQ(r[0].lc.sid, 7);
	CHECK(r[0].lc.flags & SL_ERROR);
	CHECK(strcmp(r[0].msg, "disk 3 on fire") == 0);
	CHECK(strcmp(r[1].msg, "traced now") == 0);
	CHECK_EQ(r[1].lc.seq_no, r[0].lc.seq_no + 1);
	CHECK_EQ(strlog_read(r, 8, &seq), 0);	/* nothing new */
	CHECK_EQ(strlog(1, 1, 1, SL_ERROR, NULL), 0);

	/* cmn_err: '!' goes only to the log, with its prefix */
	cmn_err(CE_WARN, "!quiet %s", "warning");
	n = strlog_read(r, 8, &seq);
	CHECK_EQ(n, 1);
	CHECK(strcmp(r[0].msg, "WARNING: quiet warning") == 0);
	CHECK(r[0].lc.flags & SL_WARN);
	cmn_err(CE_IGNORE, "nothing");
	CHECK_EQ(strlog_read(r, 8, &seq), 0);
}

static void test_panic(void)
{
	pid_t pid = fork();
	int st;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(2);
		cmn_err(CE_PANIC, "the end");
		_exit(0);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

static _Atomic int writer_ran;
static void writer(queue_t *q, mblk_t *mp)
{
	atomic_fetch_add(&writer_ran, 1);
	freemsg(mp);
}

static void test_ctl(void)
{
	struct qcount c1 = { 0 }, c2 = { 0 };
	queue_t *a = qt_pair(true, &c1), *b = qt_pair(true, &c2);
	mblk_t *mp;

	qt_link(a, b);			/* a above b */
	CHECK_EQ(putnextctl(WR(a), M_START), 1);
	mp = getq(WR(b));
	REQUIRE(mp != NULL);
	CHECK_EQ(mp->b_datap->db_type, M_START);
	CHECK_EQ(MBLKL(mp), 0);
	freemsg(mp);
	CHECK_EQ(putnextctl1(WR(a), M_FLUSH, FLUSHRW), 1);
	mp = getq(WR(b));
	CHECK_EQ(mp->b_datap->db_type, M_FLUSH);
	CHECK_EQ(mp->b_rptr[0], FLUSHRW);
	freemsg(mp);
	CHECK_EQ(putnextctl2(WR(a), M_ERROR, EIO, EPIPE), 1);
	mp = getq(WR(b));
	CHECK_EQ(MBLKL(mp), 2);
	CHECK_EQ(mp->b_rptr[1], EPIPE);
	freemsg(mp);
	CHECK_EQ(putnextctl(WR(a), M_DATA), 0);	/* data types refused */
	/* ... M_DELAY excepted */
	CHECK_EQ(putnextctl1(WR(a), M_DELAY, 5), 1);
	mp = getq(WR(b));
	REQUIRE(mp != NULL);
	CHECK_EQ(mp->b_datap->db_type, M_DELAY);
	CHECK_EQ(mp->b_rptr[0], 5);
	freemsg(mp);
	/* merror on a read queue sends the error up, on a write queue
	 * back up (qreply) */
	merror(b, qt_msg(M_DATA, 0, 4, 1), EIO);
	mp = getq(a);
	REQUIRE(mp != NULL);
	CHECK_EQ(mp->b_datap->db_type, M_ERROR);
	CHECK_EQ(mp->b_rptr[0], EIO);
	freemsg(mp);
	merror(WR(b), qt_msg(M_DATA, 0, 4, 1), EPIPE);
	mp = getq(a);
	REQUIRE(mp != NULL);
	CHECK_EQ(mp->b_datap->db_type, M_ERROR);
	CHECK_EQ(mp->b_rptr[0], EPIPE);
	freemsg(mp);
	/* qreply from b's write queue lands on a's read queue */
	CHECK_EQ(qreply(WR(b), qt_msg(M_PCPROTO, 0, 1, 9)), 1);
	mp = getq(a);
	REQUIRE(mp != NULL);
	CHECK_EQ(qt_tag(mp), 9);
	freemsg(mp);
	/* putnext at the end of a flow frees the message */
	CHECK_EQ(putnext(WR(b), qt_msg(M_DATA, 0, 1, 1)), 0);
	qwriter(WR(a), qt_msg(M_DATA, 0, 1, 1), writer, PERIM_OUTER);
	CHECK_EQ(atomic_load(&writer_ran), 1);
	CHECK_EQ(qcountstrm(WR(a)), 0);
	putq(WR(b), qt_msg(M_DATA, 0, 7, 1));
	CHECK_EQ(qcountstrm(WR(a)), 7);
	qt_free(b);
	qt_free(a);
}

int main(void)
{
	th_mark();
	test_strlog();
	test_panic();
	test_ctl();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
