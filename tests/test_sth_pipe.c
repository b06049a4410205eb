/*
 * test_sth_pipe -- STREAMS pipes (s_pipe, SVR4 pipe(2) semantics) and
 * the loop driver: full duplex, message boundaries kept (RMSGN, getmsg),
 * bands across the pipe, modules pushed on either end (nullmod, pipemod,
 * testmod) with data still flowing both ways, I_FLUSH across the pipe
 * with and without pipemod (what one end wrote and the other has not
 * read is discarded by FLUSHW; FLUSHR empties the caller's own read
 * side), loop driver pairs (/dev/streams/clone/loop takes minor 2k,
 * /dev/streams/loop/<2k+1> is its other end) with flow control and the
 * hangup a close of one end sends the other, and closing a pipe's end: the other reads what is left, then 0, its writes fail
 * with EPIPE and raise SIGPIPE, and sleepers on it are woken.
 */
#include "sth.h"

#include <stdlib.h>

static bool pass(int w, int r, const char *s)
{
	char buf[128];
	size_t n = strlen(s);
	int fl = fcntl(r, F_GETFL);
	ssize_t k;

	if (write(w, s, n) != (ssize_t)n)
		return false;
	fcntl(r, F_SETFL, fl | O_NONBLOCK);
	k = read(r, buf, sizeof(buf));
	fcntl(r, F_SETFL, fl);
	return k == (ssize_t)n && memcmp(buf, s, n) == 0;
}

static void test_duplex(void)
{
	int p[2], flags, band;
	char buf[64], cb[16];
	struct strbuf c = { sizeof(cb), 0, cb }, d = { sizeof(buf), 0, buf };

	open_pipe(p);
	CHECK_RET(isastream(p[0]), 1);
	CHECK_RET(isastream(p[1]), 1);
	CHECK(pass(p[0], p[1], "zero to one"));
	CHECK(pass(p[1], p[0], "one to zero"));
	/* both directions at once */
	CHECK_RET(write(p[0], "AB", 2), 2);
	CHECK_RET(write(p[1], "ba", 2), 2);
	CHECK_RET(read(p[0], buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "ba", 2);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "AB", 2);
	/* boundaries */
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGN), 0);
	CHECK_RET(write(p[0], "a", 1), 1);
	CHECK_RET(write(p[0], "bb", 2), 2);
	CHECK_RET(write(p[0], "ccc", 3), 3);
	CHECK_RET(nread(p[1], NULL), 3);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 1);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 2);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 3);
	/* byte stream at the other end */
	CHECK_RET(write(p[1], "a", 1), 1);
	CHECK_RET(write(p[1], "bb", 2), 2);
	CHECK_RET(read(p[0], buf, sizeof(buf)), 3);
	/* control parts and bands */
	struct strbuf pc = { 0, 3, "ctl" }, pd = { 0, 4, "data" };
	CHECK_RET(putmsg(p[0], &pc, &pd, 0), 0);
	flags = 0;
	CHECK_RET(getmsg(p[1], &c, &d, &flags), 0);
	CHECK_EQ(c.len, 3);
	CHECK_EQ(d.len, 4);
	CHECK_RET(putpmsg(p[1], NULL, &pd, 7, MSG_BAND), 0);
	CHECK_RET(putmsg(p[1], &pc, NULL, RS_HIPRI), 0);
	flags = MSG_ANY;
	band = 0;
	CHECK_RET(getpmsg(p[0], &c, &d, &band, &flags), 0);
	CHECK_EQ(flags, MSG_HIPRI);
	flags = MSG_ANY;
	CHECK_RET(getpmsg(p[0], &c, &d, &band, &flags), 0);
	CHECK_EQ(flags, MSG_BAND);
	CHECK_EQ(band, 7);
	CHECK_EQ(d.len, 4);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

static void test_modules(void)
{
	int p[2], n0, n1;
	char name[FMNAMESZ + 1];

	open_pipe(p);
	n0 = nlist(p[0]);
	n1 = nlist(p[1]);
	CHECK(n0 >= 0 && n1 >= 0);
	CHECK_ERR(ioctl(p[0], I_POP, 0), EINVAL);
	CHECK_RET(ioctl(p[0], I_PUSH, "nullmod"), 0);
	CHECK(pass(p[0], p[1], "nullmod at 0"));
	CHECK(pass(p[1], p[0], "nullmod at 0, back"));
	CHECK_RET(ioctl(p[1], I_PUSH, "pipemod"), 0);
	CHECK_RET(ioctl(p[1], I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(p[0], I_PUSH, "testmod"), 0);
	CHECK_RET(nlist(p[0]), n0 + 2);
	CHECK_RET(nlist(p[1]), n1 + 2);
	CHECK_RET(ioctl(p[0], I_LOOK, name), 0);
	CHECK(strcmp(name, "testmod") == 0);
	CHECK_RET(ioctl(p[1], I_FIND, "pipemod"), 1);
	CHECK_RET(ioctl(p[0], I_FIND, "pipemod"), 0);
	CHECK(pass(p[0], p[1], "through four modules"));
	CHECK(pass(p[1], p[0], "and back"));
	/* a module's ioctl on its own end */
	char buf[16] = "ping";
	CHECK_RET(do_str(p[0], TM_ECHO, buf, 4, 0, NULL), 4);
	/* an ioctl nobody on the way answers: EINVAL from the far head */
	CHECK_ERR(do_str(p[1], TM_ECHO, buf, 4, 0, NULL), EINVAL);
	/* pop on one end while the other keeps its modules */
	CHECK_RET(ioctl(p[1], I_POP, 0), 0);
	CHECK_RET(ioctl(p[1], I_POP, 0), 0);
	CHECK_RET(nlist(p[1]), n1);
	CHECK(pass(p[0], p[1], "popped at 1"));
	CHECK(pass(p[1], p[0], "popped at 1, back"));
	CHECK_RET(ioctl(p[0], I_POP, 0), 0);
	CHECK(pass(p[0], p[1], "one left"));
	/* close with modules on */
	CHECK_RET(ioctl(p[1], I_PUSH, "nullmod"), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* I_FLUSH across the pipe; mod: where to push pipemod (-1: nowhere) */
static void flush_across(int mod)
{
	int p[2], b;

	open_pipe(p);
	if (mod >= 0)
		CHECK_RET(ioctl(p[mod], I_PUSH, "pipemod"), 0);
	/* 0 writes two messages to 1, 1 one to 0 */
	CHECK_RET(write(p[0], "x", 1), 1);
	CHECK_RET(write(p[0], "yy", 2), 2);
	CHECK_RET(write(p[1], "z", 1), 1);
	CHECK_RET(nread(p[1], &b), 2);
	CHECK_RET(nread(p[0], &b), 1);
	/* FLUSHW at 0: what 0 wrote and 1 has not read is gone; what
	 * 0 has to read stays */
	CHECK_RET(ioctl(p[0], I_FLUSH, FLUSHW), 0);
	CHECK_RET(nread(p[1], NULL), 0);
	CHECK_RET(nread(p[0], NULL), 1);
	/* FLUSHR at 0: its own read side; 1's is untouched */
	CHECK_RET(write(p[0], "w", 1), 1);
	CHECK_RET(ioctl(p[0], I_FLUSH, FLUSHR), 0);
	CHECK_RET(nread(p[0], NULL), 0);
	CHECK_RET(nread(p[1], NULL), 1);
	/* FLUSHRW at 1: both */
	CHECK_RET(write(p[0], "v", 1), 1);
	CHECK_RET(write(p[1], "u", 1), 1);
	CHECK_RET(ioctl(p[1], I_FLUSH, FLUSHRW), 0);
	CHECK_RET(nread(p[0], NULL), 0);
	CHECK_RET(nread(p[1], NULL), 0);
	/* bands: FLUSHW of band 3 at 1 */
	struct strbuf d = { 0, 1, "b" };
	struct bandinfo bi = { 3, FLUSHW };
	CHECK_RET(putpmsg(p[1], NULL, &d, 3, MSG_BAND), 0);
	CHECK_RET(putpmsg(p[1], NULL, &d, 2, MSG_BAND), 0);
	CHECK_RET(ioctl(p[1], I_FLUSHBAND, &bi), 0);
	CHECK_RET(nread(p[0], NULL), 1);
	CHECK_RET(ioctl(p[0], I_CKBAND, 2), 1);
	CHECK_RET(ioctl(p[0], I_CKBAND, 3), 0);
	/* the pipe still works */
	CHECK_RET(ioctl(p[0], I_FLUSH, FLUSHR), 0);
	CHECK(pass(p[0], p[1], "after flushes"));
	CHECK(pass(p[1], p[0], "after flushes, back"));
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

static void test_flush(void)
{
	flush_across(-1);
	flush_across(0);
	flush_across(1);
}

static void test_loop(void)
{
	int a, b, b2, c, d, n = 0, got = 0;
	char blk[1000];
	ssize_t k;

	/* the first clone open in this program takes minor 0 */
	a = open("/dev/streams/clone/loop", O_RDWR);
	REQUIRE(a >= 0);
	b = open("/dev/streams/loop/1", O_RDWR);
	REQUIRE(b >= 0);
	CHECK(pass(a, b, "a to b"));
	CHECK(pass(b, a, "b to a"));
	/* the next takes minor 2: another pair */
	c = open("/dev/streams/clone/loop", O_RDWR);
	REQUIRE(c >= 0);
	d = open("/dev/streams/loop/3", O_RDWR);
	REQUIRE(d >= 0);
	CHECK(pass(c, d, "c to d"));
	CHECK(pass(d, c, "d to c"));
	CHECK_RET(nread(b, NULL), 0);
	CHECK_RET(nread(a, NULL), 0);
	/* a second open of minor 1 is the same stream */
	b2 = open("/dev/streams/loop/1", O_RDWR);
	REQUIRE(b2 >= 0);
	CHECK(pass(a, b2, "a to b again"));
	CHECK_RET(close(b2), 0);
	CHECK_RET(ioctl(a, I_SRDOPT, RMSGN), 0);
	/* flow control both ways: a writes until full, b drains it all */
	CHECK_RET(set_nonblock(a, true), 0);
	CHECK_RET(set_nonblock(b, true), 0);
	memset(blk, 'l', sizeof(blk));
	while (write(a, blk, sizeof(blk)) == (ssize_t)sizeof(blk) && n < 10000)
		n++;
	CHECK_EQ(errno, EAGAIN);
	CHECK(n > 1 && n < 10000);
	long end = now_ms() + 5000;
	while (got < n * 1000 && now_ms() < end) {
		k = read(b, blk, sizeof(blk));
		if (k > 0)
			got += (int)k;
		else
			pause_ms(1);
	}
	CHECK_EQ(got, n * 1000);
	CHECK_RET(write(a, blk, sizeof(blk)), 1000);
	/* full again, with a message for a from b; then b closes: what a
	 * held for b is discarded, and a is hung up (as the SVR4
	 * loop-around driver does): it reads what it has, then end of
	 * file, and its writes fail ENXIO */
	while (write(a, blk, sizeof(blk)) == (ssize_t)sizeof(blk))
		;
	CHECK_RET(write(b, "bye", 3), 3);
	CHECK_RET(close(b), 0);
	struct pollfd pf = { a, POLLOUT, 0 };
	CHECK_RET(poll(&pf, 1, 2000), 1);
	CHECK_EQ(pf.revents, POLLHUP);
	CHECK_RET(set_nonblock(a, false), 0);
	CHECK_ERR(write(a, blk, sizeof(blk)), ENXIO);
	CHECK_RET(read(a, blk, sizeof(blk)), 3);
	CHECK_MEM(blk, "bye", 3);
	CHECK_RET(read(a, blk, sizeof(blk)), 0);
	CHECK_RET(close(a), 0);
	CHECK_RET(close(c), 0);
	CHECK_RET(close(d), 0);
}

/* ---- closing one end ---- */

static void test_close_end(void)
{
	int p[2], base;
	char buf[64];
	struct th_call t = { 0 };
	pthread_t th;

	catch_sig(SIGPIPE, true);
	open_pipe(p);
	CHECK_RET(write(p[0], "tail1", 5), 5);
	CHECK_RET(write(p[0], "tail2", 5), 5);
	CHECK_RET(close(p[0]), 0);
	/* what is left, then end of file (without blocking) */
	CHECK_RET(read(p[1], buf, sizeof(buf)), 10);
	CHECK_MEM(buf, "tail1tail2", 10);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 0);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 0);
	/* writes: EPIPE and SIGPIPE */
	base = sigcount[SIGPIPE];
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK(wait_sig(SIGPIPE, base + 1, 2000));
	struct strbuf d = { 0, 1, "x" };
	base = sigcount[SIGPIPE];
	CHECK_ERR(putmsg(p[1], NULL, &d, 0), EPIPE);
	CHECK(wait_sig(SIGPIPE, base + 1, 2000));
	CHECK_RET(close(p[1]), 0);

	/* a sleeping reader is woken with end of file */
	open_pipe(p);
	t.fd = p[1];
	t.len = 16;
	REQUIRE(pthread_create(&th, NULL, th_reader, &t) == 0);
	th_started(&t);
	CHECK_RET(close(p[0]), 0);
	pthread_join(th, NULL);
	CHECK_EQ(t.ret, 0);
	CHECK_RET(close(p[1]), 0);

	/* a writer sleeping on a full pipe gets EPIPE */
	open_pipe(p);
	CHECK_RET(set_nonblock(p[0], true), 0);
	memset(buf, 0, sizeof(buf));
	while (write(p[0], buf, sizeof(buf)) > 0)
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(set_nonblock(p[0], false), 0);
	memset(&t, 0, sizeof(t));
	t.fd = p[0];
	t.len = 100;
	base = sigcount[SIGPIPE];
	REQUIRE(pthread_create(&th, NULL, th_writer, &t) == 0);
	th_started(&t);
	CHECK_RET(close(p[1]), 0);
	pthread_join(th, NULL);
	CHECK_EQ(t.ret, -1);
	CHECK_EQ(t.err, EPIPE);
	CHECK(wait_sig(SIGPIPE, base + 1, 2000));
	CHECK_RET(close(p[0]), 0);

	/* modules on the closing end pass the hangup on */
	open_pipe(p);
	CHECK_RET(ioctl(p[0], I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(p[1], I_PUSH, "pipemod"), 0);
	CHECK_RET(write(p[0], "m", 1), 1);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 1);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 0);
	base = sigcount[SIGPIPE];
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK(wait_sig(SIGPIPE, base + 1, 2000));
	CHECK_RET(close(p[1]), 0);
	signal(SIGPIPE, SIG_IGN);
}

int main(void)
{
	th_mark();
	test_duplex();
	test_modules();
	test_flush();
	test_loop();
	test_close_end();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
