/*
 * test_sth_poll -- readiness of streams through poll, ppoll, select and
 * epoll, mixed in one call with a socketpair and a Linux pipe (POSIX poll,
 * STREAMS parts): POLLIN/POLLRDNORM (even for a zero-length message),
 * POLLRDBAND for band data, POLLPRI for a high priority message, POLLOUT
 * and its hysteresis on a STREAMS pipe (gone at the high water mark of
 * the other end's read queue, back only below its low water mark),
 * POLLERR and POLLHUP (reported even when not asked for; never POLLOUT
 * with POLLHUP), POLLNVAL, blocking waits woken by other threads,
 * time-outs honoured, epoll's level-triggered events appearing and
 * disappearing as data arrives and is read, and polls for what the
 * stream lacks while it has what the mirror cannot tell apart (no busy
 * loop), and for POLLWRBAND alone (any band above 0 written that has
 * room, or none written yet).  O_ASYNC (fcntl F_SETFL and ioctl
 * FIOASYNC) with F_SETOWN and F_SETSIG: the owner gets its signal, with
 * the descriptor and POLL_IN, POLL_OUT or POLL_HUP, when a stream becomes
 * readable, writable again or hung up, and none once O_ASYNC is off.
 */
#include "sth.h"

#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>

static short rev1(int fd, short events)
{
	struct pollfd pf = { fd, events, 0 };
	int r = poll(&pf, 1, 0);

	if (r < 0)
		return -1;
	return pf.revents;
}

#define ALLIN (POLLIN | POLLRDNORM | POLLRDBAND | POLLPRI)

static void test_input_kinds(void)
{
	int fd = open_echo(O_NONBLOCK);
	char buf[16];
	struct strbuf c = { 0, 1, "c" }, d = { 0, 1, "d" };

	CHECK_RET(rev1(fd, ALLIN), 0);
	CHECK_RET(rev1(fd, ALLIN | POLLOUT), POLLOUT);
	CHECK_RET(write(fd, "x", 1), 1);
	CHECK_RET(rev1(fd, ALLIN), POLLIN | POLLRDNORM);
	CHECK_RET(rev1(fd, POLLRDNORM), POLLRDNORM);
	CHECK_RET(rev1(fd, POLLRDBAND | POLLPRI), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	CHECK_RET(rev1(fd, ALLIN), 0);
	/* a zero-length message counts */
	CHECK_RET(write(fd, "", 0), 0);
	CHECK_RET(rev1(fd, ALLIN), POLLIN | POLLRDNORM);
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(rev1(fd, ALLIN), 0);
	/* band data */
	CHECK_RET(putpmsg(fd, NULL, &d, 3, MSG_BAND), 0);
	CHECK_RET(rev1(fd, ALLIN), POLLIN | POLLRDBAND);
	CHECK_RET(rev1(fd, POLLRDNORM), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	/* high priority */
	CHECK_RET(putmsg(fd, &c, &d, RS_HIPRI), 0);
	CHECK_RET(rev1(fd, ALLIN), POLLPRI);
	CHECK_RET(rev1(fd, POLLIN), 0);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	CHECK_RET(rev1(fd, ALLIN), 0);
	/* POLLWRNORM with POLLOUT, POLLWRBAND for band 1 */
	CHECK_RET(rev1(fd, POLLWRNORM), POLLWRNORM);
	CHECK_RET(rev1(fd, POLLWRBAND), POLLWRBAND);
	CHECK_RET(close(fd), 0);
}

static void test_mixed(void)
{
	int e = open_echo(O_NONBLOCK), p[2], sv[2], lp[2];
	char buf[16];

	open_pipe(p);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	REQUIRE(pipe(lp) == 0);
	struct pollfd pf[5] = {
		{ e, POLLIN, 0 }, { p[1], POLLIN, 0 }, { sv[0], POLLIN, 0 },
		{ lp[0], POLLIN, 0 }, { p[0], POLLOUT, 0 },
	};
	/* only the pipe end's POLLOUT */
	CHECK_RET(poll(pf, 5, 0), 1);
	CHECK_EQ(pf[0].revents, 0);
	CHECK_EQ(pf[1].revents, 0);
	CHECK_EQ(pf[2].revents, 0);
	CHECK_EQ(pf[3].revents, 0);
	CHECK_EQ(pf[4].revents, POLLOUT);
	/* each source in turn */
	CHECK_RET(write(sv[1], "s", 1), 1);
	CHECK_RET(poll(pf, 4, 0), 1);
	CHECK_EQ(pf[2].revents, POLLIN);
	CHECK_EQ(pf[0].revents | pf[1].revents | pf[3].revents, 0);
	CHECK_RET(write(lp[1], "l", 1), 1);
	CHECK_RET(write(p[0], "p", 1), 1);
	CHECK_RET(write(e, "e", 1), 1);
	CHECK_RET(poll(pf, 4, 0), 4);
	CHECK_EQ(pf[0].revents, POLLIN);
	CHECK_EQ(pf[1].revents, POLLIN);
	CHECK_EQ(pf[2].revents, POLLIN);
	CHECK_EQ(pf[3].revents, POLLIN);
	CHECK_RET(read(e, buf, sizeof(buf)), 1);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 1);
	CHECK_RET(poll(pf, 4, 0), 2);
	CHECK_EQ(pf[0].revents, 0);
	CHECK_EQ(pf[1].revents, 0);
	CHECK_RET(read(sv[0], buf, sizeof(buf)), 1);
	CHECK_RET(read(lp[0], buf, sizeof(buf)), 1);
	CHECK_RET(poll(pf, 4, 0), 0);
	/* a negative fd is ignored, a closed one is POLLNVAL */
	int closed = dup(sv[0]);
	close(closed);
	struct pollfd pn[2] = { { -1, POLLIN, 0 }, { closed, POLLIN, 0 } };
	CHECK_RET(poll(pn, 2, 0), 1);
	CHECK_EQ(pn[0].revents, 0);
	CHECK_EQ(pn[1].revents, POLLNVAL);
	/* select over the same set */
	fd_set rs, ws, es;
	struct timeval tv = { 0, 0 };
	int maxfd = 0;
	int fds[4] = { e, p[1], sv[0], lp[0] };
	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_ZERO(&es);
	for (int i = 0; i < 4; i++) {
		FD_SET(fds[i], &rs);
		if (fds[i] > maxfd)
			maxfd = fds[i];
	}
	CHECK_RET(select(maxfd + 1, &rs, NULL, NULL, &tv), 0);
	CHECK_RET(write(p[0], "p", 1), 1);
	CHECK_RET(write(lp[1], "l", 1), 1);
	for (int i = 0; i < 4; i++)
		FD_SET(fds[i], &rs);
	FD_SET(p[0], &ws);
	FD_SET(e, &es);
	if (p[0] > maxfd)
		maxfd = p[0];
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	CHECK_RET(select(maxfd + 1, &rs, &ws, &es, &tv), 3);
	CHECK(!FD_ISSET(e, &rs));
	CHECK(FD_ISSET(p[1], &rs));
	CHECK(!FD_ISSET(sv[0], &rs));
	CHECK(FD_ISSET(lp[0], &rs));
	CHECK(FD_ISSET(p[0], &ws));
	CHECK(!FD_ISSET(e, &es));
	/* a high priority message is an exceptional condition */
	struct strbuf c = { 0, 1, "h" };
	CHECK_RET(putmsg(e, &c, NULL, RS_HIPRI), 0);
	FD_ZERO(&es);
	FD_SET(e, &es);
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	CHECK_RET(select(e + 1, NULL, NULL, &es, &tv), 1);
	CHECK(FD_ISSET(e, &es));
	/* select on a closed descriptor: EBADF */
	FD_ZERO(&rs);
	FD_SET(e, &rs);
	FD_SET(closed, &rs);
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	CHECK_ERR(select((closed > e ? closed : e) + 1, &rs, NULL, NULL, &tv),
		  EBADF);
	close(sv[0]);
	close(sv[1]);
	close(lp[0]);
	close(lp[1]);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(close(e), 0);
}

/* POLLOUT on a pipe end follows the other end's read queue: gone at
 * its high water mark (set to 5000 here), back only below its low water
 * mark (1500). */
/* select() for writing on fd alone, waiting up to ms: its result */
static int sel_w(int fd, int ms)
{
	struct timeval tv = { 0, ms * 1000 };
	fd_set ws;
	int r;

	FD_ZERO(&ws);
	FD_SET(fd, &ws);
	r = select(fd + 1, NULL, &ws, NULL, &tv);
	if (r == 1 && !FD_ISSET(fd, &ws))
		return -2;
	return r;
}

static void test_pollout_hysteresis(void)
{
	int p[2], n = 0;
	char blk[1000];

	open_pipe(p);
	CHECK_RET(set_marks(p[1], 5000, 1500), 0);
	CHECK_RET(set_nonblock(p[0], true), 0);
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGN), 0);
	memset(blk, 'h', sizeof(blk));
	CHECK_RET(rev1(p[0], POLLOUT), POLLOUT);
	while (write(p[0], blk, sizeof(blk)) == (ssize_t)sizeof(blk))
		n++;
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(n, 5);
	CHECK_RET(rev1(p[0], POLLOUT | POLLWRNORM), 0);
	/* select: not writable either (a write would block; that band 1
	 * could be written, POLLWRBAND, is not select's business) */
	CHECK_RET(sel_w(p[0], 50), 0);
	/* the reader drains to 2000 bytes: still >= low water */
	while (nread(p[1], NULL) > 2) {
		CHECK_RET(read(p[1], blk, sizeof(blk)), 1000);
		CHECK_RET(rev1(p[0], POLLOUT), 0);
	}
	/* 1000 < 1500: writable again */
	CHECK_RET(read(p[1], blk, sizeof(blk)), 1000);
	CHECK_RET(rev1(p[0], POLLOUT | POLLWRNORM), POLLOUT | POLLWRNORM);
	CHECK_RET(sel_w(p[0], 0), 1);
	CHECK_RET(write(p[0], blk, sizeof(blk)), 1000);
	/* full again, then the peer goes: a write fails at once, so
	 * select says writable */
	while (write(p[0], blk, sizeof(blk)) == (ssize_t)sizeof(blk))
		;
	CHECK_RET(sel_w(p[0], 0), 0);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(sel_w(p[0], 1000), 1);
	CHECK_RET(close(p[0]), 0);
}

/* ---- blocking waits ---- */

struct late {
	int fd;
	pid_t waiter;
	int what;		/* 0: write "w", 1: drain */
};

static void *late_main(void *arg)
{
	struct late *l = arg;
	char blk[1000];

	wait_blocked(l->waiter);
	if (l->what == 0) {
		write(l->fd, "w", 1);
	} else {
		set_nonblock(l->fd, true);
		while (read(l->fd, blk, sizeof(blk)) > 0)
			;
	}
	return NULL;
}

static void test_blocking(void)
{
	int e = open_echo(O_NONBLOCK), p[2], sv[2];
	struct late l;
	pthread_t th;
	long t0;

	open_pipe(p);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	/* woken by data on a stream */
	struct pollfd pf[3] = {
		{ e, POLLIN, 0 }, { p[1], POLLIN, 0 }, { sv[0], POLLIN, 0 },
	};
	l = (struct late){ p[0], my_tid(), 0 };
	REQUIRE(pthread_create(&th, NULL, late_main, &l) == 0);
	CHECK_RET(poll(pf, 3, 10000), 1);
	CHECK_EQ(pf[1].revents, POLLIN);
	CHECK_EQ(pf[0].revents | pf[2].revents, 0);
	pthread_join(th, NULL);
	/* woken by the socket while the streams stay idle */
	char c;
	CHECK_RET(read(p[1], &c, 1), 1);
	l = (struct late){ sv[1], my_tid(), 0 };
	REQUIRE(pthread_create(&th, NULL, late_main, &l) == 0);
	CHECK_RET(poll(pf, 3, 10000), 1);
	CHECK_EQ(pf[2].revents, POLLIN);
	pthread_join(th, NULL);
	CHECK_RET(read(sv[0], &c, 1), 1);
	/* POLLOUT woken by the reader draining */
	char blk[1000];
	memset(blk, 0, sizeof(blk));
	CHECK_RET(set_nonblock(p[0], true), 0);
	while (write(p[0], blk, sizeof(blk)) > 0)
		;
	struct pollfd po = { p[0], POLLOUT, 0 };
	l = (struct late){ p[1], my_tid(), 1 };
	REQUIRE(pthread_create(&th, NULL, late_main, &l) == 0);
	CHECK_RET(poll(&po, 1, 10000), 1);
	CHECK_EQ(po.revents, POLLOUT);
	pthread_join(th, NULL);
	/* time-outs */
	CHECK_RET(set_nonblock(p[1], true), 0);
	while (read(p[1], blk, sizeof(blk)) > 0)
		;
	t0 = now_ms();
	CHECK_RET(poll(pf, 3, 150), 0);
	CHECK(now_ms() - t0 >= 140);
	CHECK(now_ms() - t0 < 2000);
	struct timespec ts = { 0, 120 * 1000000L };
	t0 = now_ms();
	CHECK_RET(ppoll(pf, 3, &ts, NULL), 0);
	CHECK(now_ms() - t0 >= 110);
	CHECK(now_ms() - t0 < 2000);
	fd_set rs;
	FD_ZERO(&rs);
	FD_SET(e, &rs);
	FD_SET(p[1], &rs);
	struct timeval tv = { 0, 130000 };
	t0 = now_ms();
	CHECK_RET(select((e > p[1] ? e : p[1]) + 1, &rs, NULL, NULL, &tv), 0);
	CHECK(now_ms() - t0 >= 120);
	CHECK(now_ms() - t0 < 2000);
	close(sv[0]);
	close(sv[1]);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(close(e), 0);
}

/* ---- POLLERR, POLLHUP ---- */

static void test_err_hup(void)
{
	int fd = open_tm(O_NONBLOCK), p[2];
	char buf[8];

	CHECK_RET(sendup_bytes(fd, M_ERROR, 1, EIO, 0), 0);
	CHECK_RET(rev1(fd, POLLIN) & POLLERR, POLLERR);
	CHECK_RET(rev1(fd, 0), POLLERR);	/* even when not asked for */
	CHECK_RET(close(fd), 0);

	open_pipe(p);
	CHECK_RET(write(p[0], "bye", 3), 3);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(rev1(p[1], POLLIN | POLLOUT), POLLIN | POLLHUP);
	CHECK_RET(rev1(p[1], 0), POLLHUP);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 3);
	CHECK_RET(rev1(p[1], POLLIN | POLLOUT), POLLHUP);
	CHECK_RET(close(p[1]), 0);

	/* the same through epoll, whose end was writable when the hangup
	 * came: EPOLLHUP, never EPOLLOUT with it */
	open_pipe(p);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT,
				  .data.fd = p[1] }, out[2];
	REQUIRE(ep >= 0);
	errno = 4321;		/* (a success leaves errno alone) */
	REQUIRE(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev) == 0);
	CHECK_EQ(errno, 4321);
	CHECK_RET(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_EQ(out[0].events & (EPOLLOUT | EPOLLHUP), EPOLLOUT);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_EQ(out[0].events & (EPOLLOUT | EPOLLHUP), EPOLLHUP);
	CHECK_RET(close(ep), 0);
	CHECK_RET(close(p[1]), 0);
	/* and with an error before the hangup (POLLERR asks the mirror to
	 * be writable: not with the hangup) */
	open_pipe(p);
	CHECK_RET(ioctl(p[1], I_PUSH, "testmod"), 0);
	ep = epoll_create1(0);
	REQUIRE(ep >= 0);
	ev.data.fd = p[1];
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev), 0);
	CHECK_RET(sendup_bytes(p[1], M_ERROR, 1, EIO, 0), 0);
	CHECK_RET(close(p[0]), 0);
	pause_ms(20);
	CHECK_RET(rev1(p[1], POLLIN | POLLOUT) & (POLLOUT | POLLHUP), POLLHUP);
	CHECK_RET(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_EQ(out[0].events & (EPOLLOUT | EPOLLHUP), EPOLLHUP);
	CHECK_RET(close(ep), 0);
	CHECK_RET(close(p[1]), 0);
}

/* ---- epoll ---- */

static int ep_ready(int ep, struct epoll_event *ev, int n, int ms)
{
	return epoll_wait(ep, ev, n, ms);
}

static void test_epoll(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), e = open_echo(O_NONBLOCK), p[2];
	int sv[2], lp[2];
	struct epoll_event ev, out[8];
	char buf[64];

	REQUIRE(ep >= 0);
	open_pipe(p);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	REQUIRE(pipe(lp) == 0);
	ev.events = EPOLLIN | EPOLLPRI;
	ev.data.fd = e;
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev), 0);
	ev.events = EPOLLIN;
	ev.data.fd = p[1];
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev), 0);
	ev.data.fd = sv[0];
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev), 0);
	ev.data.fd = lp[0];
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, lp[0], &ev), 0);
	CHECK_RET(ep_ready(ep, out, 8, 0), 0);

	/* data arrives: the event appears, and stays until read */
	CHECK_RET(write(e, "abcdef", 6), 6);
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].data.fd, e);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_RET(read(e, buf, 3), 3);		/* part of it */
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_RET(read(e, buf, sizeof(buf)), 3);
	CHECK_RET(ep_ready(ep, out, 8, 0), 0);
	/* every kind of descriptor together */
	CHECK_RET(write(p[0], "p", 1), 1);
	CHECK_RET(write(sv[1], "s", 1), 1);
	CHECK_RET(write(lp[1], "l", 1), 1);
	CHECK_RET(ep_ready(ep, out, 8, 0), 3);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 1);
	CHECK_RET(ep_ready(ep, out, 8, 0), 2);
	for (int i = 0; i < 2; i++)
		CHECK(out[i].data.fd == sv[0] || out[i].data.fd == lp[0]);
	CHECK_RET(read(sv[0], buf, sizeof(buf)), 1);
	CHECK_RET(read(lp[0], buf, sizeof(buf)), 1);
	CHECK_RET(ep_ready(ep, out, 8, 0), 0);
	/* a high priority message: EPOLLPRI */
	struct strbuf c = { 0, 2, "hp" };
	CHECK_RET(putmsg(e, &c, NULL, RS_HIPRI), 0);
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].data.fd, e);
	CHECK_EQ(out[0].events & EPOLLPRI, EPOLLPRI);
	struct strbuf rc = { sizeof(buf), 0, buf };
	int flags = 0;
	CHECK_RET(getmsg(e, &rc, NULL, &flags), 0);
	CHECK_RET(ep_ready(ep, out, 8, 0), 0);
	/* woken in epoll_wait by another thread */
	struct late l = { p[0], my_tid(), 0 };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, late_main, &l) == 0);
	CHECK_RET(ep_ready(ep, out, 8, 10000), 1);
	CHECK_EQ(out[0].data.fd, p[1]);
	pthread_join(th, NULL);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 1);
	/* removed: no more events */
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL), 0);
	CHECK_RET(write(e, "x", 1), 1);
	CHECK_RET(ep_ready(ep, out, 8, 0), 0);
	CHECK_RET(read(e, buf, sizeof(buf)), 1);
	/* EPOLLOUT with its hysteresis (marks 5000/1500 at p[1]) */
	CHECK_RET(set_marks(p[1], 5000, 1500), 0);
	ev.events = EPOLLOUT;
	ev.data.fd = p[0];
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].events, EPOLLOUT);
	char blk[1000];
	memset(blk, 0, sizeof(blk));
	CHECK_RET(set_nonblock(p[0], true), 0);
	while (write(p[0], blk, sizeof(blk)) > 0)
		;
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGN), 0);
	/* p[1] is readable, p[0] no longer writable */
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].data.fd, p[1]);
	while (nread(p[1], NULL) > 2)
		CHECK_RET(read(p[1], blk, sizeof(blk)), 1000);
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].data.fd, p[1]);
	CHECK_RET(read(p[1], blk, sizeof(blk)), 1000);
	CHECK_RET(ep_ready(ep, out, 8, 0), 2);
	/* hangup */
	CHECK_RET(read(p[1], blk, sizeof(blk)), 1000);
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), 0);
	CHECK_RET(ep_ready(ep, out, 8, 0), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(ep_ready(ep, out, 8, 0), 1);
	CHECK_EQ(out[0].data.fd, p[1]);
	CHECK_EQ(out[0].events & EPOLLHUP, EPOLLHUP);
	/* time-out */
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL), 0);
	long t0 = now_ms();
	CHECK_RET(ep_ready(ep, out, 8, 120), 0);
	CHECK(now_ms() - t0 >= 110);
	CHECK(now_ms() - t0 < 2000);
	close(ep);
	close(sv[0]);
	close(sv[1]);
	close(lp[0]);
	close(lp[1]);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(close(e), 0);
}

/* A poll for events the stream does not have, while it has others the
 * mirror cannot tell apart (one readable byte stands for POLLIN,
 * POLLRDBAND and POLLPRI): it waits, without spinning a CPU (it used
 * to burn the whole time-out); and a poll for POLLWRBAND alone, while
 * band 0 stays full, wakes when band 1 drains. */
static double cpu_ms(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
	       (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static void no_spin(int fd, short events)
{
	struct pollfd pf = { fd, events, 0 };
	double c0 = cpu_ms();
	long t0 = now_ms();

	CHECK_RET(poll(&pf, 1, 300), 0);
	CHECK(now_ms() - t0 >= 290);
	CHECK(cpu_ms() - c0 < 150);	/* a spin takes all 300 */
}

struct wrband {
	int fd;
	long woke_ms;
	short rev;
};

static void *wrband_poller(void *arg)
{
	struct wrband *w = arg;
	struct pollfd pf = { w->fd, POLLWRBAND, 0 };
	long t0 = now_ms();

	(void)poll(&pf, 1, 3000);
	w->woke_ms = now_ms() - t0;
	w->rev = pf.revents;
	return NULL;
}

static void test_inexact(void)
{
	int fd = open_echo(O_NONBLOCK), p[2];
	struct strbuf c = { 0, 2, "hp" };
	char blk[500], b[600];
	struct strbuf d = { 0, sizeof(blk), blk }, r = { sizeof(b), 0, b };
	int n1 = 0;
	pthread_t th;

	CHECK_RET(putmsg(fd, &c, NULL, RS_HIPRI), 0);
	no_spin(fd, POLLIN);
	CHECK_RET(close(fd), 0);
	fd = open_echo(O_NONBLOCK);
	CHECK_RET(write(fd, "x", 1), 1);
	no_spin(fd, POLLPRI);
	no_spin(fd, POLLRDBAND);
	CHECK_RET(close(fd), 0);

	memset(blk, 'z', sizeof(blk));
	open_pipe(p);
	REQUIRE(set_marks(p[1], 5000, 1500) == 0);
	REQUIRE(set_nonblock(p[0], true) == 0);
	while (n1 < 1000 && putpmsg(p[0], NULL, &d, 1, MSG_BAND) == 0)
		n1++;
	while (write(p[0], blk, sizeof(blk)) > 0)
		;
	CHECK_EQ(rev1(p[0], POLLOUT | POLLWRBAND), 0);
	struct wrband w = { p[0], -1, 0 };
	REQUIRE(pthread_create(&th, NULL, wrband_poller, &w) == 0);
	pause_ms(100);
	for (int i = 0; i < n1; i++) {
		int band = 1, fl = MSG_BAND;
		CHECK_RET(getpmsg(p[1], NULL, &r, &band, &fl), 0);
	}
	pthread_join(th, NULL);
	CHECK_EQ(w.rev, POLLWRBAND);
	CHECK(w.woke_ms < 1000);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* POLLWRBAND is any band above 0 that has been written and has room
 * (SVR4 strpoll), not band 1 alone: band 1 full and band 2 empty says
 * POLLWRBAND; both full does not, until one of them drains. */
static void test_wrband_any(void)
{
	int p[2], n;
	char blk[500], b[600];
	struct strbuf d = { 0, sizeof(blk), blk }, r = { sizeof(b), 0, b };
	pthread_t th;

	memset(blk, 'w', sizeof(blk));
	open_pipe(p);
	REQUIRE(set_marks(p[1], 5000, 1500) == 0);
	REQUIRE(set_nonblock(p[0], true) == 0);
	CHECK_EQ(rev1(p[0], POLLWRBAND), POLLWRBAND);	/* no band yet */
	CHECK_RET(putpmsg(p[0], NULL, &d, 2, MSG_BAND), 0);
	{
		int band = 2, fl = MSG_BAND;
		CHECK_RET(getpmsg(p[1], NULL, &r, &band, &fl), 0);
	}
	for (n = 0; n < 1000 && putpmsg(p[0], NULL, &d, 1, MSG_BAND) == 0; n++)
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(rev1(p[0], POLLWRBAND), POLLWRBAND);	/* band 2 has room */
	for (n = 0; n < 1000 && putpmsg(p[0], NULL, &d, 2, MSG_BAND) == 0; n++)
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(rev1(p[0], POLLWRBAND), 0);
	struct wrband w = { p[0], -1, 0 };
	REQUIRE(pthread_create(&th, NULL, wrband_poller, &w) == 0);
	pause_ms(100);
	for (int i = 0; i < n; i++) {		/* band 2 only */
		int band = 2, fl = MSG_BAND;
		CHECK_RET(getpmsg(p[1], NULL, &r, &band, &fl), 0);
		CHECK_EQ(band, 2);
	}
	pthread_join(th, NULL);
	CHECK_EQ(w.rev, POLLWRBAND);
	CHECK(w.woke_ms < 1000);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* ---- O_ASYNC ---- */

static int async_n[2];		/* atomic: SIGIO, the F_SETSIG signal */
static int async_fd, async_code;	/* the last F_SETSIG signal's */

static void on_async(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (sig == SIGIO) {
		__atomic_add_fetch(&async_n[0], 1, __ATOMIC_RELAXED);
		return;
	}
	async_fd = si->si_fd;
	async_code = si->si_code;
	__atomic_add_fetch(&async_n[1], 1, __ATOMIC_RELEASE);
}

/* Wait up to ms for async_n[i] to pass n; its value. */
static int async_wait(int i, int n, int ms)
{
	for (int t = 0; t < ms &&
	     __atomic_load_n(&async_n[i], __ATOMIC_ACQUIRE) <= n; t++)
		pause_ms(1);
	return __atomic_load_n(&async_n[i], __ATOMIC_ACQUIRE);
}

static void drain_all(int fd)
{
	char buf[256];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void test_async(void)
{
	struct sigaction sa;
	int p[2], e, n, on = 1, off = 0, sig = SIGRTMIN + 2;
	char big[4096];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_async;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE(sigaction(SIGIO, &sa, NULL) == 0);
	REQUIRE(sigaction(sig, &sa, NULL) == 0);

	/* fcntl: O_ASYNC kept beside O_NONBLOCK; SIGIO when readable */
	REQUIRE(s_pipe(p) == 0);
	CHECK_RET(fcntl(p[1], F_SETOWN, getpid()), 0);
	CHECK_RET(fcntl(p[1], F_GETOWN), getpid());
	CHECK_RET(fcntl(p[1], F_SETFL, O_ASYNC | O_NONBLOCK), 0);
	CHECK_RET(fcntl(p[1], F_GETFL) & (O_ASYNC | O_NONBLOCK),
		  O_ASYNC | O_NONBLOCK);
	n = async_n[0];
	CHECK_RET(write(p[0], "a", 1), 1);
	CHECK(async_wait(0, n, 1000) > n);
	drain_all(p[1]);
	/* F_SETSIG: that signal, with the descriptor and POLL_IN */
	CHECK_RET(fcntl(p[1], F_SETSIG, sig), 0);
	n = async_n[1];
	CHECK_RET(write(p[0], "b", 1), 1);
	CHECK(async_wait(1, n, 1000) > n);
	CHECK_EQ(async_fd, p[1]);
	CHECK_EQ(async_code, POLL_IN);
	drain_all(p[1]);
	/* FIOASYNC off: no signal for what comes now */
	CHECK_RET(ioctl(p[1], FIOASYNC, &off), 0);
	CHECK_RET(fcntl(p[1], F_GETFL) & O_ASYNC, 0);
	n = async_n[1];
	CHECK_RET(write(p[0], "c", 1), 1);
	CHECK_EQ(async_wait(1, n, 200), n);
	drain_all(p[1]);

	/* writable again: the writer filled the pipe, the reader drains */
	CHECK_RET(fcntl(p[0], F_SETOWN, getpid()), 0);
	CHECK_RET(fcntl(p[0], F_SETSIG, sig), 0);
	CHECK_RET(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	memset(big, 'x', sizeof(big));
	while (write(p[0], big, sizeof(big)) > 0)
		;
	CHECK_ERR(write(p[0], big, sizeof(big)), EAGAIN);
	CHECK_RET(ioctl(p[0], FIOASYNC, &on), 0);
	CHECK_RET(fcntl(p[0], F_GETFL) & O_ASYNC, O_ASYNC);
	n = async_n[1];
	pause_ms(50);
	CHECK_EQ(async_n[1], n);		/* still full: nothing */
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	drain_all(p[1]);
	CHECK(async_wait(1, n, 1000) > n);
	CHECK_EQ(async_fd, p[0]);
	CHECK_EQ(async_code, POLL_OUT);
	/* hung up: the peer closes */
	n = async_n[1];
	CHECK_RET(close(p[1]), 0);
	CHECK(async_wait(1, n, 1000) > n);
	CHECK_EQ(async_fd, p[0]);
	CHECK(async_code == POLL_HUP || async_code == POLL_IN);
	CHECK_RET(close(p[0]), 0);

	/* two opens of one stream: O_ASYNC is the stream's, set and
	 * cleared through either, and told by both */
	{
		int a = open("/dev/streams/echo/5", O_RDWR | O_NONBLOCK);
		int b = open("/dev/streams/echo/5", O_RDWR);

		REQUIRE(a >= 0 && b >= 0);
		CHECK_RET(fcntl(a, F_SETFL, O_ASYNC | O_NONBLOCK), 0);
		CHECK_RET(fcntl(b, F_GETFL) & (O_ASYNC | O_NONBLOCK), O_ASYNC);
		CHECK_RET(fcntl(b, F_SETFL, 0), 0);
		CHECK_RET(fcntl(a, F_GETFL) & (O_ASYNC | O_NONBLOCK),
			  O_NONBLOCK);
		CHECK_RET(close(b), 0);
		CHECK_RET(close(a), 0);
	}

	/* a device stream, FIOASYNC on: the echo comes back, SIGIO */
	e = open_echo(O_NONBLOCK);
	CHECK_RET(fcntl(e, F_SETOWN, getpid()), 0);
	CHECK_RET(ioctl(e, FIOASYNC, &on), 0);
	n = async_n[0];
	CHECK_RET(write(e, "echo", 4), 4);
	CHECK(async_wait(0, n, 1000) > n);
	CHECK_RET(close(e), 0);
	signal(SIGIO, SIG_IGN);
	signal(sig, SIG_IGN);
}

int main(void)
{
	th_mark();
	test_inexact();
	test_wrband_any();
	test_input_kinds();
	test_mixed();
	test_pollout_hysteresis();
	test_blocking();
	test_err_hup();
	test_epoll();
	test_async();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
