/*
 * test_sth_mux -- multiplexing with the mux driver (streamio I_LINK,
 * I_UNLINK, I_PLINK, I_PUNLINK): an echo stream linked below a mux
 * stream carries what the mux stream writes and brings it back; the
 * lower stream's own descriptor fails with EINVAL (POLLNVAL for poll)
 * while linked and works again once unlinked; I_UNLINK by muxid and with
 * MUXID_ALL; the last close of the controlling stream undoes its links,
 * telling the driver even when that stream is hung up or has an error;
 * a persistent link survives it and I_PUNLINK from another open of the
 * driver removes it; two levels of multiplexers (mux2 over mux); the
 * errors: a stream linked twice, a link loop (of streams, or of drivers:
 * two opens of one driver, SVR4), linking below a stream that is not a
 * multiplexer, bad descriptors, unknown muxids; what the lower stream's
 * head held when linked (its reader's cache, a full queue) goes up
 * through the multiplexer in order; a reader asleep on a stream being
 * linked gets EINVAL (read and getmsg); a high priority message held
 * at a head when linked does not keep its next one out once unlinked.
 */
#include "sth.h"

#include <sys/epoll.h>

static int open_mux(int oflag)
{
	int fd = open("/dev/streams/mux", O_RDWR | oflag);

	REQUIRE(fd >= 0);
	return fd;
}

static int open_mux2(int oflag)
{
	int fd = open("/dev/streams/mux2", O_RDWR | oflag);

	REQUIRE(fd >= 0);
	return fd;
}

static bool roundtrip(int fd, const char *s)
{
	char buf[64];
	size_t n = strlen(s);
	int fl = fcntl(fd, F_GETFL);
	ssize_t r;
	long end = now_ms() + 2000;

	if (write(fd, s, n) != (ssize_t)n)
		return false;
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while ((r = read(fd, buf, sizeof(buf))) < 0 && errno == EAGAIN &&
	       now_ms() < end)
		pause_ms(1);
	fcntl(fd, F_SETFL, fl);
	return r == (ssize_t)n && memcmp(buf, s, n) == 0;
}

static void test_link(void)
{
	int m = open_mux(0), e = open_echo(0), e2 = open_echo(0), id, id2;
	char buf[16];
	struct strbuf d = { sizeof(buf), 1, buf };
	int flags = 0;

	/* nothing linked: what the mux stream writes goes nowhere */
	CHECK_RET(write(m, "lost", 4), 4);
	CHECK_RET(nread(m, NULL), 0);
	id = ioctl(m, I_LINK, e);
	CHECK(id > 0);
	CHECK(roundtrip(m, "via echo"));
	/* the lower stream's descriptor: EINVAL for everything */
	CHECK_ERR(read(e, buf, sizeof(buf)), EINVAL);
	CHECK_ERR(write(e, "x", 1), EINVAL);
	CHECK_ERR(getmsg(e, NULL, &d, &flags), EINVAL);
	CHECK_ERR(putmsg(e, NULL, &d, 0), EINVAL);
	CHECK_ERR(ioctl(e, I_PUSH, "nullmod"), EINVAL);
	CHECK_ERR(ioctl(e, I_NREAD, &flags), EINVAL);
	struct pollfd pf = { e, POLLIN | POLLOUT, 0 };
	CHECK_RET(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLNVAL);
	/* linked twice: EINVAL */
	int m2 = open_mux(0);
	CHECK_ERR(ioctl(m2, I_LINK, e), EINVAL);
	CHECK_ERR(ioctl(m, I_LINK, e), EINVAL);
	CHECK_RET(close(m2), 0);
	/* a second link; MUX_ROUTE sends writes down it */
	id2 = ioctl(m, I_LINK, e2);
	CHECK(id2 > 0 && id2 != id);
	CHECK_RET(do_str(m, MUX_ROUTE, &id2, sizeof(id2), 0, NULL), 0);
	CHECK(roundtrip(m, "second"));
	/* unlink the first by its muxid: e works again */
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	CHECK(roundtrip(e, "free again"));
	CHECK_RET(nlist(e), 1);
	CHECK_ERR(ioctl(m, I_UNLINK, id), EINVAL);
	CHECK_ERR(ioctl(m, I_UNLINK, 12345), EINVAL);
	CHECK(roundtrip(m, "still second"));
	/* MUXID_ALL */
	CHECK_RET(ioctl(m, I_UNLINK, MUXID_ALL), 0);
	CHECK(roundtrip(e2, "e2 free"));
	CHECK_RET(write(m, "lost", 4), 4);
	CHECK_RET(nread(m, NULL), 0);
	CHECK_RET(close(e), 0);
	CHECK_RET(close(e2), 0);
	CHECK_RET(close(m), 0);
}

static ssize_t read_soon(int fd, char *buf, size_t n)
{
	struct pollfd pf = { fd, POLLIN, 0 };

	if (poll(&pf, 1, 2000) != 1)
		return -1;
	return read(fd, buf, n);
}

/* What the lower stream's head held when it was linked -- messages its
 * reader had already taken into its cache, a queue over high water --
 * goes up through the multiplexer, in order, ahead of what comes after,
 * and nothing stalls. */
static void test_link_queued(void)
{
	int m = open_mux(0), e = open_echo(O_NONBLOCK), id;
	char buf[8192];
	long sent = 0, got = 0;
	ssize_t r = 0;

	CHECK_RET(ioctl(e, I_SRDOPT, RMSGN), 0);
	CHECK_RET(write(e, "m0", 2), 2);
	CHECK_RET(write(e, "m1", 2), 2);
	CHECK_RET(write(e, "m2", 2), 2);
	CHECK_RET(read(e, buf, sizeof(buf)), 2);	/* m1, m2 cached */
	id = ioctl(m, I_LINK, e);
	CHECK(id > 0);
	CHECK_RET(ioctl(m, I_SRDOPT, RMSGN), 0);
	CHECK_RET(write(m, "p", 1), 1);
	CHECK_RET(read_soon(m, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "m1", 2);
	CHECK_RET(read_soon(m, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "m2", 2);
	CHECK_RET(read_soon(m, buf, sizeof(buf)), 1);
	CHECK_MEM(buf, "p", 1);
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	CHECK_RET(nread(e, NULL), 0);

	/* a full queue, one byte of it read */
	CHECK_RET(ioctl(e, I_SRDOPT, RNORM), 0);
	memset(buf, 'q', sizeof(buf));
	while (sent < 1000000 && write(e, buf, 4096) == 4096)
		sent += 4096;
	CHECK(sent >= 65536);
	CHECK_RET(read(e, buf, 1), 1);
	id = ioctl(m, I_LINK, e);
	CHECK(id > 0);
	CHECK_RET(ioctl(m, I_SRDOPT, RNORM), 0);
	CHECK_RET(write(m, "p", 1), 1);
	while (got < sent && (r = read_soon(m, buf, sizeof(buf))) > 0) {
		got += r;
		if (buf[r - 1] == 'p')
			break;
	}
	CHECK_EQ(got, sent);		/* (sent - 1) q's and the p */
	CHECK(r > 0 && buf[r - 1] == 'p');
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	CHECK_RET(close(e), 0);
	CHECK_RET(close(m), 0);
}

/* epoll follows a stream linked below a multiplexer and unlinked (the
 * unlink flushes it: not readable any more) */
static void test_link_epoll(void)
{
	int m = open_mux(0), e = open_echo(O_NONBLOCK), ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = e }, out[2];
	int id;

	REQUIRE(ep >= 0);
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev), 0);
	CHECK_RET(epoll_wait(ep, out, 2, 0), 0);
	CHECK_RET(write(e, "x", 1), 1);
	CHECK_RET(epoll_wait(ep, out, 2, 1000), 1);
	id = ioctl(m, I_LINK, e);
	CHECK(id > 0);
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	CHECK_RET(epoll_wait(ep, out, 2, 0), 0);
	CHECK_RET(write(e, "y", 1), 1);
	CHECK_RET(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_RET(close(ep), 0);
	CHECK_RET(close(e), 0);
	CHECK_RET(close(m), 0);
}

static void test_errors(void)
{
	int m = open_mux(0), e = open_echo(0), e2 = open_echo(0), p[2];
	int nul = open("/dev/null", O_RDWR);

	REQUIRE(nul >= 0);
	/* not a multiplexer */
	CHECK_ERR(ioctl(e, I_LINK, e2), EINVAL);
	CHECK_ERR(ioctl(e, I_PLINK, e2), EINVAL);
	open_pipe(p);
	CHECK_ERR(ioctl(p[0], I_LINK, e2), EINVAL);
	/* not a stream, not a descriptor */
	CHECK_ERR(ioctl(m, I_LINK, nul), EINVAL);
	CHECK_ERR(ioctl(m, I_LINK, bad_fd()), EBADF);
	CHECK_ERR(ioctl(m, I_LINK, -1), EBADF);
	/* loops: a stream below itself */
	CHECK_ERR(ioctl(m, I_LINK, m), EINVAL);
	int md = dup(m);
	CHECK_ERR(ioctl(m, I_LINK, md), EINVAL);
	CHECK_RET(close(md), 0);
	/* two opens of one multiplexing driver, one below the other: a
	 * loop in the graph of drivers (SVR4) */
	int m2 = open_mux(0), m3 = open_mux2(0), m4 = open_mux(0);
	CHECK_ERR(ioctl(m2, I_LINK, m4), EINVAL);
	/* and a multiplexer below one linked below it */
	int id = ioctl(m2, I_LINK, m3);		/* m3 (mux2) below m2 (mux) */
	CHECK(id > 0);
	CHECK_ERR(ioctl(m3, I_LINK, m2), EINVAL);
	CHECK_RET(ioctl(m2, I_UNLINK, id), 0);
	/* the two unlinked: the other way round works */
	id = ioctl(m3, I_LINK, m2);
	CHECK(id > 0);
	CHECK_ERR(ioctl(m2, I_LINK, m3), EINVAL);
	/* a loop of drivers through other streams: mux below mux2 (m2
	 * below m3) makes any mux2 below any mux one */
	int m5 = open_mux2(0);
	CHECK_ERR(ioctl(m4, I_LINK, m5), EINVAL);
	CHECK_RET(ioctl(m3, I_UNLINK, MUXID_ALL), 0);
	id = ioctl(m4, I_LINK, m5);		/* (no loop now) */
	CHECK(id > 0);
	CHECK_RET(ioctl(m4, I_UNLINK, id), 0);
	CHECK_RET(close(m4), 0);
	CHECK_RET(close(m5), 0);
	/* the links after all that: none, everything works */
	CHECK(roundtrip(e, "e"));
	CHECK(roundtrip(e2, "e2"));
	CHECK_RET(close(m2), 0);
	CHECK_RET(close(m3), 0);
	/* unlinking what is not linked */
	CHECK_ERR(ioctl(m, I_UNLINK, 1), EINVAL);
	CHECK_ERR(ioctl(m, I_PUNLINK, 1), EINVAL);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	close(nul);
	CHECK_RET(close(e), 0);
	CHECK_RET(close(e2), 0);
	CHECK_RET(close(m), 0);
}

/* Two levels: m1 (mux2) over m2 (mux) over echo. */
static void test_two_levels(void)
{
	int m1 = open_mux2(0), m2 = open_mux(0), e = open_echo(0), a, b;

	a = ioctl(m2, I_LINK, e);
	CHECK(a > 0);
	b = ioctl(m1, I_LINK, m2);
	CHECK(b > 0);
	CHECK(roundtrip(m1, "two levels down"));
	/* the middle stream is a lower stream now */
	CHECK_ERR(write(m2, "x", 1), EINVAL);
	/* the last close of m1 unlinks m2; m2 still has e below it */
	CHECK_RET(close(m1), 0);
	CHECK(roundtrip(m2, "one level"));
	CHECK_RET(close(m2), 0);
	/* and m2's last close freed e */
	CHECK(roundtrip(e, "alone"));
	CHECK_RET(close(e), 0);
}

/* A lower stream whose descriptor is closed stays linked; unlinking it
 * then closes it.  In a child process (CHECK_ISOLATED_T): it can hang. */
static int test_close_lower(void)
{
	long base = streams_in_use();
	int m = open_mux(0), e = open_echo(0), id;

	id = ioctl(m, I_LINK, e);
	CHECK(id > 0);
	CHECK_RET(close(e), 0);
	CHECK_RET(streams_in_use(), base + 2);
	CHECK(roundtrip(m, "lower has no fd"));
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	CHECK_RET(streams_in_use(), base + 1);
	CHECK_RET(close(m), 0);
	CHECK_RET(streams_in_use(), base);
	return 0;
}

static void test_plink(void)
{
	long base = streams_in_use();
	int m = open_mux(0), e = open_echo(0), e2 = open_echo(0), id, id2;

	id = ioctl(m, I_PLINK, e);
	CHECK(id > 0);
	CHECK(roundtrip(m, "persistent"));
	/* I_UNLINK does not undo a persistent link */
	CHECK_ERR(ioctl(m, I_UNLINK, id), EINVAL);
	CHECK_ERR(write(e, "x", 1), EINVAL);
	/* closing everything leaves the link (and both streams) */
	CHECK_RET(close(e), 0);
	CHECK_RET(close(m), 0);
	CHECK_RET(streams_in_use(), base + 3);	/* m's, e's, e2 */
	/* another open of the driver removes it */
	int m2 = open_mux(0);
	CHECK_ERR(ioctl(m2, I_PUNLINK, id + 1000), EINVAL);
	CHECK_RET(ioctl(m2, I_PUNLINK, id), 0);
	CHECK_RET(streams_in_use(), base + 2);	/* m2, e2 */
	CHECK_ERR(ioctl(m2, I_PUNLINK, id), EINVAL);
	/* MUXID_ALL for persistent links */
	id2 = ioctl(m2, I_PLINK, e2);
	CHECK(id2 > 0);
	CHECK_RET(ioctl(m2, I_PUNLINK, MUXID_ALL), 0);
	CHECK(roundtrip(e2, "unlinked"));
	CHECK_RET(close(m2), 0);
	CHECK_RET(close(e2), 0);
	CHECK_RET(streams_in_use(), base);
}

/* The last close of a controlling stream undoes its (ordinary) links. */
static void test_close_upper(void)
{
	int m = open_mux(0), e = open_echo(0), id;

	id = ioctl(m, I_LINK, e);
	CHECK(id > 0);
	int md = dup(m);
	CHECK_RET(close(m), 0);		/* not the last close */
	CHECK_ERR(write(e, "x", 1), EINVAL);
	CHECK_RET(close(md), 0);
	CHECK(roundtrip(e, "upper gone"));
	CHECK_RET(close(e), 0);
}

/* Pushes and pops of a stream while another thread links it below a
 * multiplexer and unlinks it, again and again: each call either happens
 * wholly before the link or is refused (EINVAL) while linked, and
 * nothing hangs. */
static int pl_mux, pl_e;
static _Atomic int pl_stop;

static void *pl_pusher(void *arg)
{
	long bad = 0;

	(void)arg;
	while (!pl_stop) {
		if (ioctl(pl_e, I_PUSH, "nullmod") != 0 && errno != EINVAL)
			bad++;
		if (ioctl(pl_e, I_POP, 0) != 0 && errno != EINVAL)
			bad++;
	}
	return (void *)bad;
}

static void test_push_beside_link(void)
{
	pthread_t t;
	void *bad;
	int id;

	pl_mux = open_mux(0);
	pl_e = open_echo(0);
	REQUIRE(pthread_create(&t, NULL, pl_pusher, NULL) == 0);
	for (int i = 0; i < 300; i++) {
		id = ioctl(pl_mux, I_LINK, pl_e);
		CHECK(id > 0 || errno == EINVAL);
		if (id > 0)
			CHECK_RET(ioctl(pl_mux, I_UNLINK, id), 0);
	}
	pl_stop = 1;
	pthread_join(t, &bad);
	CHECK_EQ((long)bad, 0);
	while (ioctl(pl_e, I_POP, 0) == 0)
		;
	CHECK(roundtrip(pl_e, "after"));
	CHECK_RET(close(pl_e), 0);
	CHECK_RET(close(pl_mux), 0);
}

/* Links made and undone while data keeps coming up the lower stream:
 * the mux's lower side finds its link under the mux's lock, and an
 * unlink forgets it there before freeing it (the sanitizer builds saw
 * the lower read side use a freed link).  What comes up while linked
 * reaches the mux stream or is dropped, nothing else. */
static int ul_w;
static _Atomic int ul_stop;

static void *ul_writer(void *arg)
{
	long bad = 0;

	(void)arg;
	while (!ul_stop)
		if (write(ul_w, "u", 1) != 1 && errno != EAGAIN)
			bad++;
	return (void *)bad;
}

static void test_unlink_beside_traffic(void)
{
	int m = open_mux(O_NONBLOCK), p[2], id, links = 0;
	long end = now_ms() + 1000;
	char buf[256];
	pthread_t t;
	void *bad;

	open_pipe(p);
	ul_w = p[1];
	CHECK_RET(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	REQUIRE(pthread_create(&t, NULL, ul_writer, NULL) == 0);
	while (now_ms() < end) {
		id = ioctl(m, I_LINK, p[0]);
		CHECK(id > 0);
		if (id <= 0)
			break;
		links++;
		/* (the writer never stops: a few reads, not a drain) */
		for (int k = 0; k < 4 && read(m, buf, sizeof(buf)) > 0; k++)
			;
		CHECK_RET(ioctl(m, I_UNLINK, id), 0);
		for (int k = 0; k < 4 && read(p[0], buf, sizeof(buf)) > 0; k++)
			;
	}
	ul_stop = 1;
	pthread_join(t, &bad);
	CHECK_EQ((long)bad, 0);
	CHECK(links > 10);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(close(m), 0);
}

/* A pipe end linked below a multiplexer, its descriptor closed, then
 * unlinked: it closes then, as its last close would have -- its peer
 * sees the hangup (read 0, write EPIPE), never a freed stream (the
 * sanitizer builds see it). */
static void test_unlink_closed_pipe_end(void)
{
	int m = open_mux(0), p[2], id;
	char c;

	signal(SIGPIPE, SIG_IGN);
	open_pipe(p);
	id = ioctl(m, I_LINK, p[0]);
	REQUIRE(id > 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	CHECK_RET(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);	/* (no hang) */
	CHECK_RET(read(p[1], &c, 1), 0);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(close(m), 0);
}

/* The mux stream's writes held back by a full lower stream (one end of
 * a pipe nobody reads) go on when that link goes (I_UNLINK) or when
 * MUX_ROUTE sends them down another (nuls, which takes everything): the
 * full link's service procedure, which woke the writer before, will not
 * any more.  blocked: fill m (non-blocking) until EAGAIN. */
static long fill_mux(int m)
{
	char blk[1024];
	long n = 0;

	memset(blk, 'f', sizeof(blk));
	CHECK_RET(set_nonblock(m, true), 0);
	while (n < 10000000 && write(m, blk, sizeof(blk)) == sizeof(blk))
		n += sizeof(blk);
	CHECK_EQ(errno, EAGAIN);
	return n;
}

static void test_full_link_moved(void)
{
	for (int how = 0; how < 2; how++) {
		int m = open_mux(0), p[2], nul, id, id2;
		struct pollfd pf;

		open_pipe(p);
		nul = open("/dev/streams/clone/nuls", O_RDWR);
		REQUIRE(nul >= 0);
		id = ioctl(m, I_LINK, p[0]);
		CHECK(id > 0);
		CHECK(fill_mux(m) > 0);
		id2 = ioctl(m, I_LINK, nul);
		CHECK(id2 > id);
		pf = (struct pollfd){ m, POLLOUT, 0 };
		CHECK_RET(poll(&pf, 1, 50), 0);		/* still full */
		if (how == 0)
			CHECK_RET(ioctl(m, I_UNLINK, id), 0);
		else
			CHECK_RET(do_str(m, MUX_ROUTE, &id2, sizeof(id2), 0,
					 NULL), 0);
		CHECK_RET(poll(&pf, 1, 2000), 1);
		CHECK_EQ(pf.revents, POLLOUT);
		CHECK_RET(write(m, "more", 4), 4);
		CHECK_RET(close(m), 0);
		CHECK_RET(close(nul), 0);
		CHECK_RET(close(p[0]), 0);
		CHECK_RET(close(p[1]), 0);
	}
}

/* An M_FLUSH(FLUSHR) coming up a lower stream flushes what waits on its
 * read queue for a full mux stream: the other end of the linked pipe
 * writes until the mux stream's head and the link are full, then sends
 * FLUSHR (I_FLUSH FLUSHR goes down its write side and across the pipe,
 * where it is the linked head's, now mux's, to switch: mux takes it as a
 * lower driver's flush of its read side); the mux stream then reads what
 * its own head held, not the rest. */
static void test_lower_flushr(void)
{
	int m = open_mux(O_NONBLOCK), p[2], id;
	char blk[1024];
	long sent = 0, got = 0;
	ssize_t r;

	open_pipe(p);
	id = ioctl(m, I_LINK, p[0]);
	CHECK(id > 0);
	CHECK_RET(set_nonblock(p[1], true), 0);
	memset(blk, 'r', sizeof(blk));
	while (sent < 10000000 && write(p[1], blk, sizeof(blk)) ==
	       sizeof(blk))
		sent += sizeof(blk);
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(ioctl(p[1], I_FLUSH, FLUSHR), 0);
	pause_ms(20);
	while ((r = read(m, blk, sizeof(blk))) > 0)
		got += r;
	CHECK_EQ(errno, EAGAIN);
	printf("flushr: sent %ld got %ld\n", sent, got);
	CHECK(got > 0 && got < sent);
	CHECK_RET(write(p[1], "after", 5), 5);
	CHECK_RET(read_soon(m, blk, sizeof(blk)), 5);
	CHECK_MEM(blk, "after", 5);
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	CHECK_RET(close(m), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* A persistent link whose upper stream closes while the link's read
 * queue holds what the full upper head could not take: that goes (an
 * orphan's traffic is dropped), so the lower stream is not held back
 * for good -- the pipe's other end can write again. */
static void test_orphan_drains(void)
{
	int m = open_mux(0), p[2], id;
	char blk[1024];
	struct pollfd pf;

	open_pipe(p);
	id = ioctl(m, I_PLINK, p[0]);
	CHECK(id > 0);
	CHECK_RET(set_nonblock(p[1], true), 0);
	memset(blk, 'o', sizeof(blk));
	while (write(p[1], blk, sizeof(blk)) == (ssize_t)sizeof(blk))
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(close(m), 0);
	pf = (struct pollfd){ p[1], POLLOUT, 0 };
	CHECK_RET(poll(&pf, 1, 2000), 1);
	CHECK_EQ(pf.revents, POLLOUT);
	int m2 = open_mux(0);
	CHECK_RET(ioctl(m2, I_PUNLINK, id), 0);
	CHECK_RET(close(m2), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* The driver's links, asked through a stream of its own. */
static int mux_nlinks(void)
{
	int q = open_mux(0), n;

	n = do_str(q, MUX_NLINKS, NULL, 0, 0, NULL);
	CHECK_RET(close(q), 0);
	return n;
}

/* The last close of a controlling stream that is hung up (or has an
 * error) still tells the driver of each unlink: it used to fail at the
 * stream's state and undo the link behind the driver's back, which
 * kept the lower stream's queue (freed once nobody has it open). */
static void test_close_hungup_upper(void)
{
	int n0 = mux_nlinks();

	for (int k = 0; k < 2; k++) {
		int m = open_mux(0), e = open_echo(0);

		REQUIRE(ioctl(m, I_PUSH, "testmod") == 0);
		CHECK(ioctl(m, I_LINK, e) > 0);
		CHECK_EQ(mux_nlinks(), n0 + 1);
		if (k == 0)
			CHECK_RET(sendup_bytes(m, M_HANGUP, 0, 0, 0), 0);
		else
			CHECK_RET(sendup_bytes(m, M_ERROR, 1, EIO, 0), 0);
		CHECK_ERR(ioctl(m, I_UNLINK, MUXID_ALL), k == 0 ? ENXIO : EIO);
		CHECK_RET(close(m), 0);
		CHECK_EQ(mux_nlinks(), n0);
		CHECK(roundtrip(e, "unlinked"));
		CHECK_RET(close(e), 0);
	}
}

/* th_reader's getmsg */
static void *gm_reader(void *arg)
{
	struct th_call *t = arg;
	char buf[TH_CALL_MAX];
	struct strbuf d = { (int)t->len, 0, buf };
	int fl = 0;

	__atomic_store_n(&t->tid, my_tid(), __ATOMIC_RELEASE);
	ssize_t r = getmsg(t->fd, NULL, &d, &fl);
	t->err = errno;
	__atomic_store_n(&t->ret, r, __ATOMIC_RELEASE);
	return NULL;
}

/* A reader asleep on a stream that another thread links below a
 * multiplexer: its read fails with EINVAL, as a read begun then would
 * (it looked again and again for good, and could take what came up for
 * the multiplexer); the same for getmsg. */
static void test_link_under_reader(void)
{
	for (int k = 0; k < 2; k++) {
		int m = open_mux(0), e = open_echo(0), id;
		struct th_call t = { .fd = e, .len = 8, .ret = -2 };
		pthread_t th;

		REQUIRE(pthread_create(&th, NULL, k ? gm_reader : th_reader,
				       &t) == 0);
		th_started(&t);
		id = ioctl(m, I_LINK, e);
		CHECK(id > 0);
		long end = now_ms() + 2000;
		while (__atomic_load_n(&t.ret, __ATOMIC_ACQUIRE) == -2 &&
		       now_ms() < end)
			pause_ms(1);
		CHECK_EQ(__atomic_load_n(&t.ret, __ATOMIC_ACQUIRE), -1);
		CHECK_EQ(t.err, EINVAL);
		CHECK(roundtrip(m, "through"));		/* nothing taken */
		CHECK_RET(ioctl(m, I_UNLINK, id), 0);
		if (__atomic_load_n(&t.ret, __ATOMIC_ACQUIRE) == -2)
			CHECK_RET(write(e, "x", 1), 1);	/* (let it end) */
		pthread_join(th, NULL);
		CHECK_RET(close(m), 0);
		CHECK_RET(close(e), 0);
	}
}

/* A high priority message waiting at a stream's head when it is linked
 * goes up through the multiplexer; once unlinked, the stream's head
 * takes the next one (it was still marked as holding one, and dropped
 * every later one). */
static void test_hipri_across_link(void)
{
	int m = open_mux(0), e = open_echo(O_NONBLOCK), id;

	REQUIRE(ioctl(e, I_PUSH, "testmod") == 0);
	CHECK_RET(sendup(e, M_PCPROTO, 0, 0, "hp1", 3, NULL, -1), 0);
	id = ioctl(m, I_LINK, e);
	CHECK(id > 0);
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	hipri_roundtrip(e, "hp2");
	CHECK_RET(close(m), 0);
	CHECK_RET(close(e), 0);
}

/* A passed stream's descriptor, its message held below a multiplexer
 * whose head is full, freed by the last close of the controlling stream
 * as it unlinks: the stream it names is closed once the close lets the
 * link lock go (closed at the flush, it took that lock again: the
 * thread waited for itself).  In a child with a time limit. */
static int test_passfp_at_unlink(void)
{
	int m = open_mux(O_NONBLOCK), e = open_echo(0), s = open_echo(0), p[2];
	char blk[1024] = { 0 };
	long base;

	open_pipe(p);
	CHECK(ioctl(m, I_LINK, e) > 0);
	while (write(m, blk, sizeof(blk)) == (ssize_t)sizeof(blk))
		;			/* m's head full, and e's echo */
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(ioctl(p[0], I_SENDFD, s), 0);
	CHECK_RET(close(s), 0);		/* the message holds its stream */
	base = streams_in_use();
	CHECK(ioctl(m, I_LINK, p[1]) > 0);	/* its M_PASSFP waits below */
	pause_ms(50);
	CHECK_RET(close(m), 0);		/* unlinks both: frees it */
	CHECK_EQ(streams_in_use(), base - 2);	/* m and the passed one */
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(close(e), 0);
	return 0;
}

int main(void)
{
	CHECK_ISOLATED_T(test_close_lower, 5);
	CHECK_ISOLATED_T(test_passfp_at_unlink, 10);
	th_mark();
	test_link();
	test_link_queued();
	test_link_epoll();
	test_errors();
	test_two_levels();
	test_plink();
	test_close_upper();
	test_unlink_closed_pipe_end();
	test_push_beside_link();
	test_unlink_beside_traffic();
	test_full_link_moved();
	test_lower_flushr();
	test_orphan_drains();
	test_close_hungup_upper();
	test_link_under_reader();
	test_hipri_across_link();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
