/*
 * test_sth_upstream -- what the stream head does with messages arriving
 * from below (SVR4 STREAMS Programmer's Guide, Message Types), sent up by
 * testmod (TM_SENDUP): M_SETOPTS (SO_READOPT, SO_HIWAT/SO_LOWAT,
 * SO_WROFF, SO_MREADON), M_ERROR in its one and two byte forms (read and
 * write errors, NOERROR, 0 clearing a side, every call but close and
 * poll failing, POLLERR, sleepers woken), M_HANGUP (read returns what is
 * left then 0, write ENXIO, POLLHUP without POLLOUT, sleepers woken) and
 * M_UNHANGUP, M_FLUSH (read side, bands, turned around down the write
 * side), M_SIG (raised when it reaches the front) and M_PCSIG (at once),
 * M_PCPROTO (one high priority message at the head at a time), band
 * messages.
 *
 * While a stream is in error or hung up every ioctl fails, I_STR
 * included, so the messages that undo those states (M_ERROR with 0,
 * M_UNHANGUP) come from "upmod", a pass-through module of this program
 * whose read queue the test puts them on, as a driver would.
 */
#include "sth.h"

#include <sys/uio.h>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/strconf.h>

/* ---- upmod: a module the test sends messages up from ---- */

static queue_t *up_rq;		/* read queue of the last upmod opened */

static int upmod_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		      cred_t *cr)
{
	if (sflag != MODOPEN)
		return ENXIO;
	__atomic_store_n(&up_rq, q, __ATOMIC_RELEASE);
	return 0;
}

static int upmod_close(queue_t *q, int oflag, cred_t *cr)
{
	queue_t *me = q;

	__atomic_compare_exchange_n(&up_rq, &me, NULL, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return 0;
}

static int upmod_put(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info upmod_minfo = { 3999, "upmod", 0, INFPSZ, 65536, 16384 };
static struct qinit upmod_rinit = { upmod_put, NULL, upmod_open, upmod_close, NULL, &upmod_minfo, NULL };
static struct qinit upmod_winit = { upmod_put, NULL, NULL, NULL, NULL, &upmod_minfo, NULL };
static struct streamtab upmod_info = { &upmod_rinit, &upmod_winit, NULL, NULL };
static struct fmodsw upmod_fmod = { .f_name = "upmod", .f_str = &upmod_info, .f_flag = D_MP };

/* Send a control message of n bytes up from upmod. */
static void inject(int type, int n, int b0, int b1)
{
	queue_t *q = __atomic_load_n(&up_rq, __ATOMIC_ACQUIRE);
	struct strthread *t;

	REQUIRE(q != NULL);
	t = str_enter();
	if (n == 0)
		putnextctl(q, type);
	else if (n == 1)
		putnextctl1(q, type, b0);
	else
		putnextctl2(q, type, b0, b1);
	str_exit(t);
}

/* An M_DATA message of s up from upmod. */
static void inject_data(const char *s)
{
	queue_t *q = __atomic_load_n(&up_rq, __ATOMIC_ACQUIRE);
	size_t n = strlen(s);
	struct strthread *t;
	mblk_t *mp;

	REQUIRE(q != NULL);
	REQUIRE((mp = allocb(n, BPRI_MED)) != NULL);
	memcpy(mp->b_wptr, s, n);
	mp->b_wptr += n;
	t = str_enter();
	putnext(q, mp);
	str_exit(t);
}

/* echo, upmod, testmod on top */
static int open_up(int oflag)
{
	int fd = open_echo(oflag);

	REQUIRE(ioctl(fd, I_PUSH, "upmod") == 0);
	REQUIRE(ioctl(fd, I_PUSH, "testmod") == 0);
	return fd;
}

static short revents(int fd, short events)
{
	struct pollfd pf = { fd, events, 0 };

	if (poll(&pf, 1, 0) < 0)
		return -1;
	return pf.revents;
}

/* ---- M_SETOPTS ---- */

static void test_setopts(void)
{
	int fd = open_tm(O_NONBLOCK), v, b;
	struct stroptions so;
	char buf[100];

	/* SO_READOPT */
	memset(&so, 0, sizeof(so));
	so.so_flags = SO_READOPT;
	so.so_readopt = RMSGN;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGN | RPROTNORM);
	CHECK_RET(write(fd, "abc", 3), 3);
	CHECK_RET(write(fd, "def", 3), 3);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	so.so_readopt = RMSGD | RPROTDAT;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGD | RPROTDAT);

	/* SO_WROFF: writes still carry exactly the data */
	so.so_flags = SO_WROFF;
	so.so_wroff = 64;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	CHECK_RET(write(fd, "offset", 6), 6);
	CHECK_RET(read(fd, buf, sizeof(buf)), 6);
	CHECK_MEM(buf, "offset", 6);
	struct strbuf d = { 0, 4, "data" };
	CHECK_RET(putmsg(fd, NULL, &d, 0), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "data", 4);

	/* SO_HIWAT/SO_LOWAT of the head read queue: 100/50 */
	so.so_flags = SO_HIWAT | SO_LOWAT | SO_READOPT;
	so.so_hiwat = 100;
	so.so_lowat = 50;
	so.so_readopt = RMSGN;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < 6; i++) {
		buf[0] = (char)('0' + i);
		CHECK_RET(write(fd, buf, 60), 60);
	}
	/* 60 + 60 >= 100: the head takes two, echo keeps the rest */
	CHECK_RET(streams_quiesce(2000), 0);
	CHECK_RET(nread(fd, &b), 2);
	CHECK_RET(read(fd, buf, sizeof(buf)), 60);
	CHECK_EQ(buf[0], '0');
	CHECK_RET(streams_quiesce(2000), 0);
	CHECK_RET(nread(fd, &b), 1);		/* 60 >= 50: still full */
	CHECK_RET(read(fd, buf, sizeof(buf)), 60);
	CHECK_EQ(buf[0], '1');
	/* below low water: echo is back-enabled and fills it again */
	long end = now_ms() + 2000;
	while (nread(fd, NULL) < 2 && now_ms() < end)
		pause_ms(1);
	CHECK_RET(nread(fd, &b), 2);
	for (int i = 2; i < 6; i++) {
		long until = now_ms() + 2000;
		ssize_t k;
		while ((k = read(fd, buf, sizeof(buf))) < 0 && errno == EAGAIN &&
		       now_ms() < until)
			pause_ms(1);
		CHECK_EQ(k, 60);
		CHECK_EQ(buf[0], '0' + i);
	}
	CHECK_RET(close(fd), 0);
}

/* SO_MREADON: an M_READ goes down before a read blocks */
struct rd {
	int fd;
	pid_t tid;
	ssize_t ret;
	int err;
	char buf[64];
};

static void *reader(void *arg)
{
	struct rd *r = arg;

	__atomic_store_n(&r->tid, my_tid(), __ATOMIC_RELEASE);
	r->ret = read(r->fd, r->buf, sizeof(r->buf));
	r->err = errno;
	return NULL;
}

static void start_reader(struct rd *r, pthread_t *th)
{
	pid_t tid;

	REQUIRE(pthread_create(th, NULL, reader, r) == 0);
	while ((tid = __atomic_load_n(&r->tid, __ATOMIC_ACQUIRE)) == 0)
		pause_ms(1);
	CHECK(wait_blocked(tid));
}

static void test_mread(void)
{
	struct rd r = { 0 };
	struct stroptions so;
	pthread_t th;
	int c0, c1, c2;

	r.fd = open_tm(0);
	memset(&so, 0, sizeof(so));
	so.so_flags = SO_MREADON;
	CHECK_RET(sendup_setopts(r.fd, &so), 0);
	/* testmod counts what passes it: one M_READ per blocking read */
	c0 = do_str(r.fd, TM_COUNT, NULL, 0, 0, NULL);
	start_reader(&r, &th);
	c1 = do_str(r.fd, TM_COUNT, NULL, 0, 0, NULL);
	CHECK_EQ(c1, c0 + 1);
	CHECK_RET(write(r.fd, "go", 2), 2);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 2);
	/* SO_MREADOFF: no more */
	so.so_flags = SO_MREADOFF;
	CHECK_RET(sendup_setopts(r.fd, &so), 0);
	c1 = do_str(r.fd, TM_COUNT, NULL, 0, 0, NULL);
	r.tid = 0;
	start_reader(&r, &th);
	c2 = do_str(r.fd, TM_COUNT, NULL, 0, 0, NULL);
	CHECK_EQ(c2, c1);
	CHECK_RET(write(r.fd, "go", 2), 2);
	pthread_join(th, NULL);
	CHECK_RET(close(r.fd), 0);
}

/* ---- M_ERROR ---- */

static void test_error_one_byte(void)
{
	int fd = open_up(O_NONBLOCK), v;
	char buf[16];
	struct strbuf c = { sizeof(buf), 0, buf }, d = { sizeof(buf), 0, buf };
	int flags = 0;

	CHECK_RET(write(fd, "queued", 6), 6);
	CHECK_RET(sendup_bytes(fd, M_ERROR, 1, EPROTO, 0), 0);
	/* every call but close and poll fails with the error */
	CHECK_ERR(read(fd, buf, sizeof(buf)), EPROTO);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EPROTO);	/* persistent */
	CHECK_ERR(write(fd, "x", 1), EPROTO);
	CHECK_ERR(getmsg(fd, &c, &d, &flags), EPROTO);
	CHECK_ERR(putmsg(fd, NULL, &d, 0), EPROTO);
	CHECK_ERR(do_str(fd, TM_COUNT, NULL, 0, 0, NULL), EPROTO);
	CHECK_ERR(ioctl(fd, I_PUSH, "nullmod"), EPROTO);
	CHECK_ERR(ioctl(fd, I_POP, 0), EPROTO);
	CHECK_RET(revents(fd, POLLIN | POLLOUT) & POLLERR, POLLERR);
	/* 0 in both bytes clears both sides */
	inject(M_ERROR, 2, 0, 0);
	/* what was queued was flushed */
	CHECK_RET(nread(fd, &v), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(write(fd, "again", 5), 5);
	CHECK_RET(read(fd, buf, sizeof(buf)), 5);
	CHECK_RET(revents(fd, POLLIN) & POLLERR, 0);
	CHECK_RET(nlist(fd), 3);
	CHECK_RET(close(fd), 0);
}

static void test_error_two_bytes(void)
{
	int fd = open_up(O_NONBLOCK);
	char buf[16];
	struct strbuf d = { 0, 2, "pm" };

	/* read side only: writes go on */
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, EIO, NOERROR), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	CHECK_RET(write(fd, "w1", 2), 2);
	CHECK_RET(putmsg(fd, NULL, &d, 0), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	CHECK_RET(revents(fd, POLLIN) & POLLERR, POLLERR);
	/* clear the read side: what was echoed since is there */
	inject(M_ERROR, 2, 0, NOERROR);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "w1pm", 4);
	CHECK_RET(revents(fd, POLLIN) & POLLERR, 0);

	/* write side only: reads go on */
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, NOERROR, ENOSPC), 0);
	CHECK_ERR(write(fd, "w", 1), ENOSPC);
	CHECK_ERR(putmsg(fd, NULL, &d, 0), ENOSPC);
	inject_data("up");
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(revents(fd, POLLOUT) & POLLERR, POLLERR);
	/* NOERROR in the write byte leaves the write error */
	inject(M_ERROR, 2, 0, NOERROR);
	CHECK_ERR(write(fd, "w", 1), ENOSPC);
	inject(M_ERROR, 2, NOERROR, 0);
	CHECK_RET(write(fd, "ok", 2), 2);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(revents(fd, POLLIN | POLLOUT),
		  POLLOUT);
	CHECK_RET(close(fd), 0);
}

/* M_ERROR wakes a blocked reader with the error */
static void test_error_wakes(void)
{
	struct rd r = { 0 };
	pthread_t th;
	int fd = open_up(0);

	r.fd = fd;
	start_reader(&r, &th);
	inject(M_ERROR, 1, ECONNRESET, 0);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, -1);
	CHECK_EQ(r.err, ECONNRESET);
	CHECK_RET(close(fd), 0);
}

/* ---- M_HANGUP, M_UNHANGUP ---- */

static void test_hangup(void)
{
	int fd = open_up(O_NONBLOCK);
	char buf[16];
	struct strbuf c = { sizeof(buf), 0, buf }, d = { sizeof(buf), 0, buf };
	int flags = 0;
	short ev;

	CHECK_RET(write(fd, "left", 4), 4);
	CHECK_RET(revents(fd, POLLOUT) & POLLOUT, POLLOUT);
	CHECK_RET(sendup_bytes(fd, M_HANGUP, 0, 0, 0), 0);
	/* POLLHUP, never with POLLOUT; data is still readable */
	ev = revents(fd, POLLIN | POLLRDNORM | POLLOUT);
	CHECK_EQ(ev & (POLLHUP | POLLOUT | POLLIN), POLLHUP | POLLIN);
	/* what is queued is read, then end of file */
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, 0);
	CHECK_EQ(d.len, 0);
	/* writes fail with ENXIO (not a pipe) */
	CHECK_ERR(write(fd, "x", 1), ENXIO);
	struct strbuf pd = { 0, 1, "p" };
	CHECK_ERR(putmsg(fd, NULL, &pd, 0), ENXIO);
	CHECK_ERR(do_str(fd, TM_COUNT, NULL, 0, 0, NULL), ENXIO);
	CHECK_ERR(ioctl(fd, I_PUSH, "nullmod"), ENXIO);
	ev = revents(fd, POLLIN | POLLOUT);
	CHECK_EQ(ev & (POLLHUP | POLLOUT), POLLHUP);
	/* M_UNHANGUP: the stream works again */
	inject(M_UNHANGUP, 0, 0, 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(write(fd, "back", 4), 4);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "back", 4);
	ev = revents(fd, POLLIN | POLLOUT);
	CHECK_EQ(ev, POLLOUT);
	CHECK_RET(do_str(fd, TM_COUNT, NULL, 0, 0, NULL) >= 0, 1);
	CHECK_RET(close(fd), 0);
}

/* O_ASYNC across M_HANGUP and M_UNHANGUP: the hangup signals the owner,
 * and the mirror remade at the unhangup keeps O_ASYNC, the owner and the
 * signal, so data that comes back after it signals again. */
static int async_n, async_fd;		/* atomic */

static void on_async(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	async_fd = si->si_fd;
	__atomic_add_fetch(&async_n, 1, __ATOMIC_RELEASE);
}

static bool async_after(int n, int ms)
{
	for (int t = 0; t < ms &&
	     __atomic_load_n(&async_n, __ATOMIC_ACQUIRE) <= n; t++)
		pause_ms(1);
	return __atomic_load_n(&async_n, __ATOMIC_ACQUIRE) > n;
}

static void test_hangup_async(void)
{
	int fd = open_up(O_NONBLOCK), sig = SIGRTMIN + 3, n;
	struct sigaction sa;
	char buf[16];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_async;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE(sigaction(sig, &sa, NULL) == 0);
	CHECK_RET(fcntl(fd, F_SETOWN, getpid()), 0);
	CHECK_RET(fcntl(fd, F_SETSIG, sig), 0);
	CHECK_RET(fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK), 0);
	n = async_n;
	CHECK_RET(sendup_bytes(fd, M_HANGUP, 0, 0, 0), 0);
	CHECK(async_after(n, 1000));
	CHECK_EQ(async_fd, fd);
	inject(M_UNHANGUP, 0, 0, 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(fcntl(fd, F_GETFL) & O_ASYNC, O_ASYNC);
	CHECK_RET(fcntl(fd, F_GETOWN), getpid());
	CHECK_RET(fcntl(fd, F_GETSIG), sig);
	pause_ms(20);
	n = async_n;
	CHECK_RET(write(fd, "back", 4), 4);	/* echoed: readable */
	CHECK(async_after(n, 1000));
	CHECK_EQ(async_fd, fd);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_RET(close(fd), 0);
	signal(sig, SIG_IGN);
}

/* epoll across M_HANGUP and M_UNHANGUP: the hangup shows as EPOLLHUP, and
 * the mirror remade at the unhangup stays in the epoll set, with its
 * events and data, in each set that watched it: one where 600 other
 * descriptors come first, one edge-triggered whose registration was made
 * through a dup closed since (it goes on under the stream's other
 * number, as it went on before).  The first set also watched the stream
 * through a lower-numbered dup, closed since: the registration made
 * through the number still open keeps its place and data. */
/* A high priority message waiting when the hangup comes: epoll says
 * EPOLLPRI until it is read, then no more (the mirror's urgent byte
 * stayed behind the hangup for good). */
static void test_hangup_epoll_pri(void)
{
	int fd = open_up(O_NONBLOCK), ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev, got;
	char cb[8];
	struct strbuf c = { sizeof(cb), 0, cb };
	int flags = 0;

	REQUIRE(ep >= 0);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLPRI;
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "hp", 2, NULL, -1), 0);
	CHECK_RET(epoll_wait(ep, &got, 1, 1000), 1);
	CHECK_EQ(got.events & EPOLLPRI, EPOLLPRI);
	CHECK_RET(sendup_bytes(fd, M_HANGUP, 0, 0, 0), 0);
	CHECK_RET(epoll_wait(ep, &got, 1, 1000), 1);
	CHECK_EQ(got.events & (EPOLLHUP | EPOLLPRI), EPOLLHUP | EPOLLPRI);
	CHECK_RET(getmsg(fd, &c, NULL, &flags), 0);
	CHECK_EQ(c.len, 2);
	CHECK_RET(epoll_wait(ep, &got, 1, 0), 1);
	CHECK_EQ(got.events & EPOLLHUP, EPOLLHUP);
	CHECK_EQ(got.events & EPOLLPRI, 0);
	CHECK_RET(close(ep), 0);
	CHECK_RET(close(fd), 0);
}

static void test_hangup_epoll(void)
{
	int hole = open("/dev/null", O_RDONLY);
	int fd = open_up(O_NONBLOCK), ep[2], fd2, fd3, sp[300][2];
	struct epoll_event ev, got, two[4];
	char buf[16];

	REQUIRE(hole >= 0 && hole < fd);
	CHECK_RET(close(hole), 0);
	fd3 = dup(fd);
	CHECK_EQ(fd3, hole);
	fd2 = dup(fd);
	REQUIRE(fd2 >= 0);
	for (int i = 0; i < 2; i++) {
		ep[i] = epoll_create1(EPOLL_CLOEXEC);
		REQUIRE(ep[i] >= 0);
	}
	for (int k = 0; k < 300; k++) {
		REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sp[k]) == 0);
		for (int j = 0; j < 2; j++) {
			memset(&ev, 0, sizeof(ev));
			ev.events = EPOLLIN;
			REQUIRE(epoll_ctl(ep[0], EPOLL_CTL_ADD, sp[k][j],
					  &ev) == 0);
		}
	}
	for (int i = 0; i < 2; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN | (i ? EPOLLET : 0);
		ev.data.u64 = 0xfeed0000ull + (unsigned)i;
		CHECK_RET(epoll_ctl(ep[i], EPOLL_CTL_ADD, i ? fd2 : fd, &ev), 0);
		CHECK_RET(epoll_wait(ep[i], &got, 1, 0), 0);
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = 0xbad;
	CHECK_RET(epoll_ctl(ep[0], EPOLL_CTL_ADD, fd3, &ev), 0);
	CHECK_RET(close(fd3), 0);
	CHECK_RET(close(fd2), 0);
	CHECK_RET(sendup_bytes(fd, M_HANGUP, 0, 0, 0), 0);
	CHECK_RET(epoll_wait(ep[0], &got, 1, 1000), 1);
	CHECK_EQ(got.events & EPOLLHUP, EPOLLHUP);
	inject(M_UNHANGUP, 0, 0, 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	for (int i = 0; i < 2; i++)
		CHECK_RET(epoll_wait(ep[i], &got, 1, 0), 0);
	CHECK_RET(write(fd, "back", 4), 4);	/* echoed: readable */
	CHECK_RET(epoll_wait(ep[0], two, 4, 1000), 1);
	CHECK_EQ(two[0].events, EPOLLIN);
	CHECK_EQ(two[0].data.u64, 0xfeed0000ull);
	CHECK_RET(epoll_wait(ep[1], &got, 1, 1000), 1);
	CHECK_EQ(got.events, EPOLLIN);
	CHECK_EQ(got.data.u64, 0xfeed0001ull);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_RET(epoll_wait(ep[0], &got, 1, 0), 0);
	/* the set still names the descriptor: it can be taken out */
	CHECK_RET(epoll_ctl(ep[0], EPOLL_CTL_DEL, fd, NULL), 0);
	for (int i = 0; i < 2; i++)
		CHECK_RET(close(ep[i]), 0);
	for (int k = 0; k < 300; k++)
		for (int j = 0; j < 2; j++)
			close(sp[k][j]);
	CHECK_RET(close(fd), 0);
}

static void test_hangup_wakes(void)
{
	struct rd r = { 0 };
	pthread_t th;
	int fd = open_up(0);

	r.fd = fd;
	start_reader(&r, &th);
	inject(M_HANGUP, 0, 0, 0);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 0);
	CHECK_RET(close(fd), 0);
}

/* ---- M_FLUSH ---- */

static void test_flush(void)
{
	int fd = open_tm(O_NONBLOCK);
	char blk[1000];
	unsigned char fb[2];

	/* FLUSHR from below empties the head read queue */
	CHECK_RET(write(fd, "a", 1), 1);
	CHECK_RET(write(fd, "b", 1), 1);
	CHECK_RET(nread(fd, NULL), 2);
	CHECK_RET(sendup_bytes(fd, M_FLUSH, 1, FLUSHR, 0), 0);
	CHECK_RET(nread(fd, NULL), 0);
	/* FLUSHR|FLUSHBAND: only that band */
	CHECK_RET(sendup_data(fd, "b0", 0, 0), 0);
	CHECK_RET(sendup_data(fd, "b4", 4, 0), 0);
	CHECK_RET(sendup_data(fd, "b6", 6, 0), 0);
	fb[0] = FLUSHR | FLUSHBAND;
	fb[1] = 4;
	CHECK_RET(sendup(fd, M_FLUSH, 0, 0, fb, 2, NULL, -1), 0);
	CHECK_RET(nread(fd, NULL), 2);
	CHECK_RET(ioctl(fd, I_CKBAND, 4), 0);
	CHECK_RET(ioctl(fd, I_CKBAND, 6), 1);
	CHECK_RET(ioctl(fd, I_CKBAND, 0), 1);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	/* FLUSHW from below is sent back down: echo's write queue is
	 * flushed and the head can write again */
	memset(blk, 'x', sizeof(blk));
	while (write(fd, blk, sizeof(blk)) > 0)
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(ioctl(fd, I_CANPUT, 0), 0);
	CHECK_RET(sendup_bytes(fd, M_FLUSH, 1, FLUSHW, 0), 0);
	CHECK_RET(ioctl(fd, I_CANPUT, 0), 1);
	CHECK_RET(nread(fd, NULL) > 0, 1);	/* the read side is kept */
	CHECK_RET(close(fd), 0);
}

/* ---- batches (batch.c): what a thread delivers in a batch reaches the
 * head read queue at the batch's end, in order, and anything else it
 * delivers first lets out what waits ---- */

static mblk_t *data_msg(const char *s)
{
	size_t n = strlen(s);
	mblk_t *mp = allocb(n, BPRI_MED);

	REQUIRE(mp != NULL);
	memcpy(mp->b_wptr, s, n);
	mp->b_wptr += n;
	return mp;
}

static void *flusher(void *arg)
{
	int fd = *(int *)arg;

	if (ioctl(fd, I_FLUSH, FLUSHR) != 0)
		*(int *)arg = -1;
	return NULL;
}

static void test_batch(void)
{
	int fd = open_up(O_NONBLOCK), fd2;
	queue_t *q = __atomic_load_n(&up_rq, __ATOMIC_ACQUIRE), *q2;
	queue_t *hq = q->q_next->q_next;	/* past testmod: the head */
	struct strthread *t;
	char buf[16];

	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	/* held until the end, then all of it in order */
	t = str_enter();
	str_batch_begin();
	putnext(q, data_msg("a"));
	putnext(q, data_msg("bb"));
	putnext(q, data_msg("ccc"));
	CHECK(__atomic_load_n(&hq->q_first, __ATOMIC_ACQUIRE) == NULL);
	str_batch_end();
	str_exit(t);
	CHECK_RET(nread(fd, NULL), 3);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_RET(memcmp(buf, "ccc", 3), 0);
	/* an M_FLUSH meets what the batch held before it, not after */
	t = str_enter();
	str_batch_begin();
	putnext(q, data_msg("old"));
	putnextctl1(q, M_FLUSH, FLUSHR);
	putnext(q, data_msg("new"));
	str_batch_end();
	str_exit(t);
	CHECK_RET(nread(fd, NULL), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_RET(memcmp(buf, "new", 3), 0);
	/* a band message is not held: it goes after what was held and
	 * before it in reading order (bands first) */
	t = str_enter();
	str_batch_begin();
	putnext(q, data_msg("n1"));
	mblk_t *bm = data_msg("b5");
	bm->b_band = 5;
	putnext(q, bm);
	CHECK(__atomic_load_n(&hq->q_first, __ATOMIC_ACQUIRE) != NULL);
	putnext(q, data_msg("n2"));
	str_batch_end();
	str_exit(t);
	CHECK_RET(nread(fd, NULL), 3);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(memcmp(buf, "b5", 2), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(memcmp(buf, "n1", 2), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(memcmp(buf, "n2", 2), 0);
	/* two streams in one batch: each gets its own, in order */
	fd2 = open_up(O_NONBLOCK);
	q2 = __atomic_load_n(&up_rq, __ATOMIC_ACQUIRE);
	REQUIRE(q2 != q);
	t = str_enter();
	str_batch_begin();
	putnext(q, data_msg("1a"));
	putnext(q2, data_msg("2a"));
	putnext(q, data_msg("1b"));
	putnext(q2, data_msg("2b"));
	str_batch_end();
	str_exit(t);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);	/* RMSGN */
	CHECK_RET(memcmp(buf, "1a", 2), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(memcmp(buf, "1b", 2), 0);
	CHECK_RET(read(fd2, buf, sizeof(buf)), 4);	/* RNORM: both */
	CHECK_RET(memcmp(buf, "2a2b", 4), 0);
	CHECK_RET(close(fd2), 0);
	CHECK_RET(close(fd), 0);
	/* a flush from another thread while a run waits in this one: the
	 * run came before the flush and goes with it */
	fd = open_up(O_NONBLOCK);
	q = __atomic_load_n(&up_rq, __ATOMIC_ACQUIRE);
	int arg = fd;
	pthread_t ft;
	t = str_enter();
	str_batch_begin();
	putnext(q, data_msg("before"));
	REQUIRE(pthread_create(&ft, NULL, flusher, &arg) == 0);
	pthread_join(ft, NULL);
	putnext(q, data_msg("after"));
	str_batch_end();
	str_exit(t);
	CHECK_EQ(arg, fd);
	CHECK_RET(read(fd, buf, sizeof(buf)), 5);
	CHECK_RET(memcmp(buf, "after", 5), 0);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_RET(close(fd), 0);
	/* a reader asleep is woken by the batch's end */
	struct rd r = { 0 };
	pthread_t th;
	r.fd = open_up(0);
	q = __atomic_load_n(&up_rq, __ATOMIC_ACQUIRE);
	start_reader(&r, &th);
	t = str_enter();
	str_batch_begin();
	putnext(q, data_msg("wake"));
	str_batch_end();
	str_exit(t);
	pthread_join(th, NULL);
	CHECK_RET(r.ret, 4);
	CHECK_RET(memcmp(r.buf, "wake", 4), 0);
	CHECK_RET(close(r.fd), 0);
}

/* ---- M_SIG, M_PCSIG ---- */

static void test_signals(void)
{
	int fd = open_tm(O_NONBLOCK), base;
	char buf[16];

	catch_sig(SIGUSR1, true);
	/* M_SIG on an empty queue: at once */
	base = sigcount[SIGUSR1];
	CHECK_RET(sendup_bytes(fd, M_SIG, 1, SIGUSR1, 0), 0);
	CHECK(wait_sig(SIGUSR1, base + 1, 2000));
	/* behind data: when it reaches the front */
	base = sigcount[SIGUSR1];
	CHECK_RET(sendup_data(fd, "first", 0, 0), 0);
	CHECK_RET(sendup_bytes(fd, M_SIG, 1, SIGUSR1, 0), 0);
	pause_ms(30);
	CHECK_EQ(sigcount[SIGUSR1], base);
	CHECK_RET(read(fd, buf, sizeof(buf)), 5);
	CHECK(wait_sig(SIGUSR1, base + 1, 2000));
	CHECK_RET(nread(fd, NULL), 0);
	/* behind data a reader has taken into its cache (RMSGN: a message
	 * a read): still when it reaches the front */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	CHECK_RET(sendup_data(fd, "one", 0, 0), 0);
	CHECK_RET(sendup_data(fd, "two", 0, 0), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);	/* "two" cached */
	base = sigcount[SIGUSR1];
	CHECK_RET(sendup_bytes(fd, M_SIG, 1, SIGUSR1, 0), 0);
	pause_ms(30);
	CHECK_EQ(sigcount[SIGUSR1], base);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "two", 3);
	/* raised by the read that brought it to the front, not left for
	 * the next one; poll sees nothing to read */
	CHECK(wait_sig(SIGUSR1, base + 1, 2000));
	struct pollfd pf = { fd, POLLIN, 0 };
	CHECK_RET(poll(&pf, 1, 0), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	/* the same for getmsg */
	CHECK_RET(sendup_data(fd, "g", 0, 0), 0);
	CHECK_RET(sendup_bytes(fd, M_SIG, 1, SIGUSR1, 0), 0);
	base = sigcount[SIGUSR1];
	{
		struct strbuf d = { sizeof(buf), 0, buf };
		int fl = 0;

		CHECK_RET(getmsg(fd, NULL, &d, &fl), 0);
		CHECK_EQ(d.len, 1);
	}
	CHECK(wait_sig(SIGUSR1, base + 1, 2000));
	CHECK_RET(poll(&pf, 1, 0), 0);
	CHECK_RET(ioctl(fd, I_SRDOPT, RNORM), 0);
	/* S_RDBAND: a band message that goes to the front, ahead of
	 * queued band-0 data, signals too (only into an empty queue did) */
	catch_sig(SIGPOLL, true);
	CHECK_RET(ioctl(fd, I_SETSIG, S_RDBAND), 0);
	base = sigcount[SIGPOLL];
	CHECK_RET(sendup_data(fd, "n", 0, 0), 0);
	CHECK_RET(sendup_data(fd, "b", 1, 0), 0);
	CHECK(wait_sig(SIGPOLL, base + 1, 2000));
	CHECK_RET(sendup_data(fd, "c", 1, 0), 0);	/* behind "b" */
	pause_ms(30);
	CHECK_EQ(sigcount[SIGPOLL], base + 1);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	CHECK_RET(ioctl(fd, I_SETSIG, 0), 0);
	signal(SIGPOLL, SIG_IGN);
	/* M_PCSIG: at once, even behind data */
	base = sigcount[SIGUSR1];
	CHECK_RET(sendup_data(fd, "data", 0, 0), 0);
	CHECK_RET(sendup_bytes(fd, M_PCSIG, 1, SIGUSR1, 0), 0);
	CHECK(wait_sig(SIGUSR1, base + 1, 2000));
	CHECK_RET(nread(fd, NULL), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_RET(close(fd), 0);
	signal(SIGUSR1, SIG_IGN);
}

/* A SIGPOLL handler may call the stream: the signal is sent after the
 * head's lock is let go (it was sent under it, and a handler reading
 * the stream then waited for that lock for good).  In a child, with a
 * time limit: a hang fails the check. */
static int sig_fd;
static volatile sig_atomic_t sig_read_done;

static void read_in_handler(int sig)
{
	char b[4];

	(void)sig;
	(void)!read(sig_fd, b, sizeof(b));
	sig_read_done = 1;
}

static int test_handler_reads(void)
{
	sig_fd = open_tm(O_NONBLOCK);
	CHECK_RET(ioctl(sig_fd, I_SETSIG, S_ERROR | S_INPUT), 0);
	signal(SIGPOLL, read_in_handler);
	CHECK_RET(sendup_data(sig_fd, "in", 0, 0), 0);
	for (int i = 0; i < 2000 && !sig_read_done; i++)
		pause_ms(1);		/* (another thread may take it) */
	CHECK_EQ(sig_read_done, 1);
	sig_read_done = 0;
	CHECK_RET(sendup_bytes(sig_fd, M_ERROR, 1, EIO, 0), 0);
	for (int i = 0; i < 2000 && !sig_read_done; i++)
		pause_ms(1);
	CHECK_EQ(sig_read_done, 1);
	signal(SIGPOLL, SIG_IGN);
	CHECK_RET(close(sig_fd), 0);

	/* an M_SIG raised by the read that brings it to the front: the
	 * handler runs once that read is out of the library (raised inside,
	 * its read waited for good for the reader lock the first held) */
	sig_fd = open_tm(O_NONBLOCK);
	char buf[8];
	signal(SIGUSR2, read_in_handler);
	sig_read_done = 0;
	CHECK_RET(sendup_data(sig_fd, "first", 0, 0), 0);
	CHECK_RET(sendup_bytes(sig_fd, M_SIG, 1, SIGUSR2, 0), 0);
	CHECK_RET(sendup_data(sig_fd, "next", 0, 0), 0);
	CHECK_RET(read(sig_fd, buf, 5), 5);
	CHECK_EQ(sig_read_done, 1);	/* (before that read returned) */
	CHECK_RET(nread(sig_fd, NULL), 0);	/* the handler read "next" */
	signal(SIGUSR2, SIG_IGN);
	CHECK_RET(close(sig_fd), 0);
	return 0;
}

/* A read whose buffer faults part-way through a high priority message:
 * what was copied is returned, the rest stays high priority at the
 * front (it was put back as ordinary data, and the head went on taking
 * it to hold a high priority message: the next one was dropped). */
static void test_hipri_fault(void)
{
	int fd = open_tm(O_NONBLOCK), fl;
	char buf[16];
	struct strbuf d = { sizeof(buf), 0, buf };
	struct iovec iov[2] = { { buf, 5 }, { (void *)8, 16 } };

	CHECK_RET(ioctl(fd, I_SRDOPT, RNORM | RPROTDAT), 0);
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "ctl12", 5, "datapart", 8), 0);
	CHECK_RET(readv(fd, iov, 2), 5);
	CHECK_MEM(buf, "ctl12", 5);
	fl = RS_HIPRI;
	CHECK_RET(getmsg(fd, NULL, &d, &fl), 0);
	CHECK_EQ(d.len, 8);
	CHECK_MEM(buf, "datapart", 8);
	hipri_roundtrip(fd, "two");
	CHECK_RET(close(fd), 0);
}

/* What is left of a high priority message read in part stays one (its
 * data block becomes M_HPDATA) -- in a copy when the block is shared:
 * a module that kept the message (a dupmsg to send again) sees its
 * blocks as it sent them. */
static void test_partial_shared(void)
{
	int fd = open_tm(O_NONBLOCK), fl = 0;
	char cb[8], db[8];
	struct strbuf c = { sizeof(cb), 0, cb }, d = { 2, 0, db };

	CHECK_RET(sendup_as(fd, TM_SENDUP_KEEP, M_PCPROTO, 0, 0, "ctl", 3,
			    "data", 4), 0);
	CHECK_RET(do_str(fd, TM_KEPT, NULL, 0, 0, NULL),
		  M_PCPROTO | M_DATA << 8);
	CHECK_RET(getmsg(fd, &c, &d, &fl), MOREDATA);
	CHECK_EQ(fl, RS_HIPRI);
	CHECK_EQ(d.len, 2);
	d.maxlen = sizeof(db);
	fl = RS_HIPRI;
	CHECK_RET(getmsg(fd, NULL, &d, &fl), 0);	/* still priority */
	CHECK(d.len == 2 && memcmp(db, "ta", 2) == 0);
	CHECK_RET(do_str(fd, TM_KEPT, NULL, 0, 0, NULL),
		  M_PCPROTO | M_DATA << 8);
	/* read() the same way: the control part discarded (RPROTDIS), the
	 * data read in part */
	CHECK_RET(ioctl(fd, I_SRDOPT, RNORM | RPROTDIS), 0);
	CHECK_RET(sendup_as(fd, TM_SENDUP_KEEP, M_PCPROTO, 0, 0, "ctl", 3,
			    "data", 4), 0);
	CHECK_RET(read(fd, db, 2), 2);
	CHECK_MEM(db, "da", 2);
	CHECK_RET(read(fd, db, sizeof(db)), 2);
	CHECK_MEM(db, "ta", 2);
	CHECK_RET(do_str(fd, TM_KEPT, NULL, 0, 0, NULL),
		  M_PCPROTO | M_DATA << 8);
	CHECK_RET(close(fd), 0);
}

/* ---- M_PCPROTO, bands ---- */

static void test_pcproto_and_bands(void)
{
	int fd = open_tm(O_NONBLOCK), flags, band;
	char cb[32], db[32];
	struct strbuf c = { sizeof(cb), 0, cb }, d = { sizeof(db), 0, db };

	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "one", 3, "1", 1), 0);
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "two", 3, "2", 1), 0);
	CHECK_RET(sendup_data(fd, "ordinary", 0, 0), 0);
	CHECK_RET(nread(fd, NULL), 2);		/* "two" was dropped */
	CHECK_RET(revents(fd, POLLPRI) & POLLPRI, POLLPRI);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(flags, RS_HIPRI);
	CHECK_EQ(c.len, 3);
	CHECK_MEM(cb, "one", 3);
	flags = RS_HIPRI;
	CHECK_ERR(getmsg(fd, &c, &d, &flags), EAGAIN);
	/* the head takes the next one now */
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "three", 5, NULL, -1), 0);
	flags = RS_HIPRI;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, 5);
	CHECK_EQ(d.len, -1);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);

	/* band messages: queued by band, highest first */
	CHECK_RET(sendup_data(fd, "band2", 2, 0), 0);
	CHECK_RET(sendup_data(fd, "band0", 0, 0), 0);
	CHECK_RET(sendup(fd, M_PROTO, 5, 0, "c5", 2, "band5", 5), 0);
	CHECK_RET(revents(fd, POLLIN | POLLRDBAND | POLLRDNORM),
		  POLLIN | POLLRDBAND);
	const int want[3] = { 5, 2, 0 };
	for (int i = 0; i < 3; i++) {
		flags = MSG_ANY;
		band = 0;
		CHECK_RET(getpmsg(fd, &c, &d, &band, &flags), 0);
		CHECK_EQ(flags, MSG_BAND);
		CHECK_EQ(band, want[i]);
		CHECK_EQ(d.len, 5);
		CHECK_EQ(db[4], '0' + want[i]);
		CHECK_EQ(c.len, i == 0 ? 2 : -1);
	}
	CHECK_RET(close(fd), 0);
}

int main(void)
{
	REQUIRE(register_strmod(&upmod_fmod) == 0);
	CHECK_ISOLATED_T(test_handler_reads, 5);
	th_mark();
	test_setopts();
	test_mread();
	test_error_one_byte();
	test_error_two_bytes();
	test_error_wakes();
	test_hangup();
	test_hangup_wakes();
	test_hangup_async();
	test_hangup_epoll();
	test_hangup_epoll_pri();
	test_flush();
	test_signals();
	test_pcproto_and_bands();
	test_hipri_fault();
	test_partial_shared();
	test_batch();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
