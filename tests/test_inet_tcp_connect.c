/*
 * test_inet_tcp_connect -- connection setup on /dev/inet/tcp and /dev/tcp
 * over 127.0.0.1 and ::1 (src/transport/inet_tcp.c): t_open's t_info;
 * t_bind to port 0 (a port is chosen, and a plain socket connecting to
 * it sees the same one); a plain socket client accepted onto the
 * listener itself; an XTI caller accepted onto another endpoint (an
 * unbound one, bound for us); three pending callers with qlen 3, a
 * fourth waiting in the kernel until one is answered, TINDOUT, TBADSEQ,
 * a refusal (the caller, already connected by the kernel's handshake,
 * sees a reset); a connection to a closed port refused (T_DISCONNECT,
 * ECONNREFUSED) and the endpoint connecting again afterwards; a listener
 * closed with indications pending (the callers see a reset); an attempt
 * withdrawn in T_OUTCON; an endpoint accepted onto while unbound calling
 * out after its connection ended; bad input:
 * wrong address length or family (TBADADDR), a port in use (TADDRBUSY),
 * t_snd when not connected (TOUTSTATE), connect data (TBADDATA).
 */
#include "test_inet_tcp_lib.h"

#include <sys/epoll.h>
#include <sys/resource.h>

static void test_info(void)
{
	struct t_info ti;
	int fd = t_open(cur->dev, O_RDWR, &ti);

	REQUIRE(fd >= 0);
	CHECK_EQ(ti.servtype, T_COTS_ORD);
	CHECK_EQ(ti.addr, (long)sizeof(struct sockaddr_in6));
	CHECK_EQ(ti.connect, T_INVALID);
	CHECK_STATE(fd, T_UNBND);
	CHECK_RET(t_close(fd), 0);
}

/* bind to port 0; a plain client accepted onto the listener itself */
static void test_port0_plain_client(void)
{
	struct sa a, from, peer, mine;
	socklen_t pl = sizeof(peer.u), ml = sizeof(mine.u);
	char buf[64];
	int lfd, s, seq = -1, flags;

	memset(&from, 0, sizeof(from));

	lfd = xt_listener(1, &a);
	REQUIRE(lfd >= 0);
	CHECK_EQ(a.len, cur->family == AF_INET6 ? sizeof(struct sockaddr_in6)
						: sizeof(struct sockaddr_in));
	CHECK_EQ(a.u.sa.sa_family, cur->family);
	CHECK(sa_port(&a) != 0);
	s = socket(cur->family, SOCK_STREAM, 0);
	REQUIRE(s >= 0);
	CHECK_RET(connect(s, &a.u.sa, a.len), 0);
	CHECK_RET(getpeername(s, &peer.u.sa, &pl), 0);
	CHECK_EQ(sa_port(&peer), sa_port(&a));
	CHECK_RET(getsockname(s, &mine.u.sa, &ml), 0);
	CHECK_RET(xt_listen(lfd, &seq, &from), 0);
	CHECK_EQ(from.len, a.len);
	CHECK_EQ(sa_port(&from), sa_port(&mine));
	CHECK_STATE(lfd, T_INCON);
	CHECK_RET(xt_accept(lfd, lfd, seq), 0);
	CHECK_STATE(lfd, T_DATAXFER);
	CHECK_RET(send(s, "hello", 5, 0), 5);
	CHECK_RET(xt_rcv_all(lfd, buf, 5), 0);
	CHECK_MEM(buf, "hello", 5);
	CHECK_RET(t_snd(lfd, "world", 5, 0), 5);
	CHECK_RET(recv(s, buf, 5, MSG_WAITALL), 5);
	CHECK_MEM(buf, "world", 5);
	/* the plain client closes: an orderly release */
	close(s);
	CHECK_TERR(t_rcv(lfd, buf, sizeof(buf), &flags), TLOOK);
	CHECK_RET(t_look(lfd), T_ORDREL);
	CHECK_RET(t_rcvrel(lfd), 0);
	CHECK_STATE(lfd, T_INREL);
	CHECK_RET(t_sndrel(lfd), 0);
	CHECK_STATE(lfd, T_IDLE);
	CHECK_RET(t_close(lfd), 0);
}

/* an XTI caller accepted onto another, unbound endpoint */
static void test_accept_other(void)
{
	struct sa a, ca, from, peer;
	struct t_bind pb;
	char buf[64];
	int lfd, cli, acc, seq = -1;

	memset(&ca, 0, sizeof(ca));
	memset(&from, 0, sizeof(from));

	lfd = xt_listener(2, &a);
	cli = xt_open();
	acc = xt_open();
	REQUIRE(lfd >= 0 && cli >= 0 && acc >= 0);
	CHECK_RET(xt_bind_lo(cli, 0, 0, &ca), 0);
	CHECK(sa_port(&ca) != 0);
	CHECK_RET(xt_call(cli, &a), 0);
	CHECK_STATE(cli, T_OUTCON);
	CHECK_RET(xt_listen(lfd, &seq, &from), 0);
	CHECK_EQ(sa_port(&from), sa_port(&ca));
	CHECK_RET(xt_accept(lfd, acc, seq), 0);
	CHECK_STATE(lfd, T_IDLE);
	CHECK_STATE(acc, T_DATAXFER);
	CHECK_RET(xt_connected(cli), 0);
	CHECK_STATE(cli, T_DATAXFER);
	/* the acceptor's peer is the caller */
	memset(&pb, 0, sizeof(pb));
	pb.addr.buf = (char *)&peer.u;
	pb.addr.maxlen = sizeof(peer.u);
	CHECK_RET(t_getprotaddr(acc, NULL, &pb), 0);
	CHECK_EQ(pb.addr.len, ca.len);
	CHECK_EQ(sa_port(&peer), sa_port(&ca));
	CHECK_RET(t_snd(cli, "ping", 4, 0), 4);
	CHECK_RET(xt_rcv_all(acc, buf, 4), 0);
	CHECK_MEM(buf, "ping", 4);
	CHECK_RET(t_snd(acc, "pong", 4, 0), 4);
	CHECK_RET(xt_rcv_all(cli, buf, 4), 0);
	CHECK_MEM(buf, "pong", 4);
	/* the listener goes on listening */
	int c2 = xt_open();
	REQUIRE(c2 >= 0);
	CHECK_RET(xt_bind_lo(c2, 0, 0, NULL), 0);
	CHECK_RET(xt_call(c2, &a), 0);
	CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
	CHECK_RET(xt_accept(lfd, lfd, seq), 0);
	CHECK_RET(xt_connected(c2), 0);
	CHECK_RET(t_snd(c2, "x", 1, 0), 1);
	CHECK_RET(xt_rcv_all(lfd, buf, 1), 0);
	CHECK_RET(t_close(c2), 0);
	CHECK_RET(t_close(cli), 0);
	CHECK_RET(t_close(acc), 0);
	CHECK_RET(t_close(lfd), 0);
}

/* qlen 3: three pending indications, a fourth held back */
static void test_qlen3(void)
{
	struct sa a;
	struct t_call c;
	struct t_discon d;
	int lfd, cli[4], acc[2], seq[4] = { -1, -1, -1, -1 }, i;

	lfd = xt_listener(3, &a);
	REQUIRE(lfd >= 0);
	for (i = 0; i < 4; i++) {
		cli[i] = xt_open();
		REQUIRE(cli[i] >= 0);
		CHECK_RET(xt_bind_lo(cli[i], 0, 0, NULL), 0);
	}
	for (i = 0; i < 2; i++) {
		acc[i] = xt_open();
		REQUIRE(acc[i] >= 0);
	}
	for (i = 0; i < 3; i++) {
		CHECK_RET(xt_call(cli[i], &a), 0);
		CHECK_RET(xt_listen(lfd, &seq[i], NULL), 0);
	}
	CHECK(seq[0] != seq[1] && seq[1] != seq[2] && seq[0] != seq[2]);
	/* the fourth waits in the kernel's backlog */
	CHECK_RET(xt_call(cli[3], &a), 0);
	pause_ms(50);
	CHECK_RET(set_nonblock(lfd, true), 0);
	memset(&c, 0, sizeof(c));
	CHECK_TERR(t_listen(lfd, &c), TQFULL);	/* qlen reached */
	CHECK_RET(set_nonblock(lfd, false), 0);
	/* the listener cannot take one while others are pending */
	CHECK_TERR(xt_accept(lfd, lfd, seq[0]), TINDOUT);
	CHECK_TERR(xt_accept(lfd, acc[0], 123456), TBADSEQ);
	/* acceptors that cannot be: another provider's endpoint, a
	 * listener, a connected endpoint */
	int udp = t_open(strcmp(cur->dev, "/dev/tcp") == 0 ? "/dev/udp"
							  : "/dev/inet/udp",
			 O_RDWR, NULL);
	REQUIRE(udp >= 0);
	CHECK_TERR(xt_accept(lfd, udp, seq[0]), TPROVMISMATCH);
	CHECK_RET(t_close(udp), 0);
	int l2 = xt_listener(1, NULL);
	REQUIRE(l2 >= 0);
	CHECK_TERR(xt_accept(lfd, l2, seq[0]), TRESQLEN);
	CHECK_RET(t_close(l2), 0);
	/* accept the first: room for the fourth */
	CHECK_RET(xt_accept(lfd, acc[0], seq[0]), 0);
	CHECK_TERR(xt_accept(lfd, acc[0], seq[2]), TOUTSTATE);
	CHECK_RET(xt_listen(lfd, &seq[3], NULL), 0);
	CHECK_STATE(lfd, T_INCON);
	/* refuse the second: its caller (connected by the kernel
	 * already) sees a reset */
	memset(&c, 0, sizeof(c));
	c.sequence = seq[1];
	CHECK_RET(t_snddis(lfd, &c), 0);
	CHECK_STATE(lfd, T_INCON);
	CHECK_RET(xt_connected(cli[1]), 0);
	CHECK_EQ(xt_wait_event(cli[1], T_DISCONNECT, 3000), T_DISCONNECT);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(cli[1], &d), 0);
	CHECK_EQ(d.reason, ECONNRESET);
	CHECK_STATE(cli[1], T_IDLE);
	/* the third onto another endpoint, the fourth onto the listener */
	CHECK_RET(xt_accept(lfd, acc[1], seq[2]), 0);
	CHECK_RET(xt_accept(lfd, lfd, seq[3]), 0);
	CHECK_STATE(lfd, T_DATAXFER);
	CHECK_RET(xt_connected(cli[0]), 0);
	CHECK_RET(xt_connected(cli[2]), 0);
	CHECK_RET(xt_connected(cli[3]), 0);
	/* each pair talks */
	int pairs[3][2] = { { cli[0], acc[0] }, { cli[2], acc[1] },
			    { cli[3], lfd } };
	for (i = 0; i < 3; i++) {
		char b = (char)('a' + i), g = 0;

		CHECK_RET(t_snd(pairs[i][0], &b, 1, 0), 1);
		CHECK_RET(xt_rcv_all(pairs[i][1], &g, 1), 0);
		CHECK_EQ(g, b);
	}
	for (i = 0; i < 4; i++)
		CHECK_RET(t_close(cli[i]), 0);
	for (i = 0; i < 2; i++)
		CHECK_RET(t_close(acc[i]), 0);
	CHECK_RET(t_close(lfd), 0);
}

/* nobody listens: T_DISCONNECT with ECONNREFUSED; then a real one */
static void test_refused(void)
{
	struct sa dead = sa_lo(cur->family, 0), a;
	socklen_t dl = dead.len;
	struct t_call c;
	struct t_discon d;
	char buf[8];
	int s, cli, lfd, seq = -1;

	/* a port nobody holds: bound once, closed */
	s = socket(cur->family, SOCK_STREAM, 0);
	REQUIRE(s >= 0);
	REQUIRE(bind(s, &dead.u.sa, dead.len) == 0);
	REQUIRE(getsockname(s, &dead.u.sa, &dl) == 0);
	close(s);
	cli = xt_open();
	REQUIRE(cli >= 0);
	CHECK_RET(xt_bind_lo(cli, 0, 0, NULL), 0);
	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&dead.u;
	c.addr.len = dead.len;
	CHECK_TERR(t_connect(cli, &c, NULL), TLOOK);
	CHECK_RET(t_look(cli), T_DISCONNECT);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(cli, &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	CHECK_STATE(cli, T_IDLE);
	/* the same endpoint, asynchronously */
	CHECK_RET(xt_call(cli, &dead), 0);
	CHECK_EQ(xt_wait_event(cli, T_DISCONNECT, 3000), T_DISCONNECT);
	CHECK_RET(t_rcvdis(cli, &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	/* and now somewhere that listens */
	lfd = xt_listener(1, &a);
	REQUIRE(lfd >= 0);
	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&a.u;
	c.addr.len = a.len;
	CHECK_RET(t_connect(cli, &c, NULL), 0);
	CHECK_STATE(cli, T_DATAXFER);
	CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
	CHECK_RET(xt_accept(lfd, lfd, seq), 0);
	CHECK_RET(t_snd(cli, "ok", 2, 0), 2);
	CHECK_RET(xt_rcv_all(lfd, buf, 2), 0);
	CHECK_MEM(buf, "ok", 2);
	CHECK_RET(t_close(cli), 0);
	CHECK_RET(t_close(lfd), 0);
}

/* a listener closed with indications pending: the callers (connected by
 * the kernel) see a reset */
static void test_close_pending(void)
{
	struct sa a;
	struct t_discon d;
	int lfd, cli[2], seq = -1, i;

	lfd = xt_listener(2, &a);
	REQUIRE(lfd >= 0);
	for (i = 0; i < 2; i++) {
		cli[i] = xt_open();
		REQUIRE(cli[i] >= 0);
		CHECK_RET(xt_bind_lo(cli[i], 0, 0, NULL), 0);
		CHECK_RET(xt_call(cli[i], &a), 0);
		CHECK_RET(xt_connected(cli[i]), 0);
	}
	CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
	CHECK_RET(t_close(lfd), 0);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(xt_wait_event(cli[i], T_DISCONNECT, 3000),
			 T_DISCONNECT);
		memset(&d, 0, sizeof(d));
		CHECK_RET(t_rcvdis(cli[i], &d), 0);
		CHECK_EQ(d.reason, ECONNRESET);
		CHECK_RET(t_close(cli[i]), 0);
	}
}

/* A socket listener whose kernel backlog is full (so that no handshake
 * with it completes) in *ls, the connections filling it in fill[4], and
 * an XTI endpoint calling it, left in T_OUTCON: its descriptor. */
static int stuck_call(int *ls, int fill[4])
{
	struct sa a = sa_lo(cur->family, 0);
	socklen_t al = a.len;
	int cli, i;

	*ls = socket(cur->family, SOCK_STREAM, 0);
	REQUIRE(*ls >= 0);
	REQUIRE(bind(*ls, &a.u.sa, a.len) == 0);
	REQUIRE(getsockname(*ls, &a.u.sa, &al) == 0);
	REQUIRE(listen(*ls, 0) == 0);
	/* fill the accept queue (backlog 0 takes one) */
	for (i = 0; i < 4; i++) {
		fill[i] = socket(cur->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
		REQUIRE(fill[i] >= 0);
		(void)connect(fill[i], &a.u.sa, a.len);
	}
	pause_ms(50);
	cli = xt_open();
	REQUIRE(cli >= 0);
	CHECK_RET(xt_bind_lo(cli, 0, 0, NULL), 0);
	CHECK_RET(xt_call(cli, &a), 0);
	pause_ms(50);
	CHECK_STATE(cli, T_OUTCON);
	CHECK_RET(t_look(cli), 0);
	return cli;
}

/* Close what stuck_call made, then cli (T_IDLE, its attempt withdrawn)
 * calls somewhere else, sends a byte and is closed. */
static void call_elsewhere(int cli, int ls, int fill[4])
{
	struct sa b;
	struct t_call c;
	int lfd, seq = -1, i;
	char buf[4];

	for (i = 0; i < 4; i++)
		close(fill[i]);
	close(ls);
	lfd = xt_listener(1, &b);
	REQUIRE(lfd >= 0);
	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&b.u;
	c.addr.len = b.len;
	CHECK_RET(t_connect(cli, &c, NULL), 0);
	CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
	CHECK_RET(xt_accept(lfd, lfd, seq), 0);
	CHECK_RET(t_snd(cli, "w", 1, 0), 1);
	CHECK_RET(xt_rcv_all(lfd, buf, 1), 0);
	CHECK_RET(t_close(cli), 0);
	CHECK_RET(t_close(lfd), 0);
}

/* a connection attempt withdrawn (t_snddis in T_OUTCON): the server's
 * kernel backlog is full, so the handshake cannot complete; the
 * endpoint calls somewhere else afterwards */
static void test_withdraw(void)
{
	int ls, fill[4], cli = stuck_call(&ls, fill);

	CHECK_RET(t_snddis(cli, NULL), 0);
	CHECK_STATE(cli, T_IDLE);
	call_elsewhere(cli, ls, fill);
}

/* Keep this process from having more descriptors than it has now (the
 * next one fails EMFILE); the old limit into *old. */
static void fd_limit_now(struct rlimit *old)
{
	struct rlimit r;
	int lowest = dup(0);

	REQUIRE(lowest >= 0);
	close(lowest);
	REQUIRE(getrlimit(RLIMIT_NOFILE, old) == 0);
	r = *old;
	r.rlim_cur = (rlim_t)lowest;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &r) == 0);
}

/* CPU time this process used, in ms. */
static long cpu_ms(void)
{
	struct rusage ru;

	REQUIRE(getrusage(RUSAGE_SELF, &ru) == 0);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
}

/* A caller arrives while the process has no descriptor to spare: the
 * listener's accept fails (EMFILE) and is tried again later by itself, so
 * that a listener nobody looks at (watched through epoll only, which
 * pulls nothing) still indicates the call once descriptors are free. */
static void test_accept_emfile(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct rlimit old;
	struct sa a;
	int lfd, s, ep, seq = -1;
	char buf[4];

	lfd = xt_listener(1, &a);
	REQUIRE(lfd >= 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	REQUIRE(ep >= 0);
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev), 0);
	s = socket(cur->family, SOCK_STREAM, 0);
	REQUIRE(s >= 0);
	fd_limit_now(&old);
	CHECK_RET(connect(s, &a.u.sa, a.len), 0);
	pause_ms(150);
	CHECK_RET(setrlimit(RLIMIT_NOFILE, &old), 0);
	CHECK_RET(epoll_wait(ep, &ev, 1, 3000), 1);
	CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
	CHECK_RET(xt_accept(lfd, lfd, seq), 0);
	CHECK_RET(send(s, "x", 1, 0), 1);
	CHECK_RET(xt_rcv_all(lfd, buf, 1), 0);
	CHECK_EQ(buf[0], 'x');
	close(s);
	close(ep);
	CHECK_RET(t_close(lfd), 0);
}

/* An attempt withdrawn (T_OUTCON, t_snddis) while the process has no
 * descriptor for the endpoint's next socket: the old one is reset in
 * place, and nothing of the attempt is watched any more -- the I/O
 * thread does not spin on the dead socket's reports.  Once descriptors
 * are free the endpoint calls out again. */
static void test_withdraw_emfile(void)
{
	int ls, fill[4], cli = stuck_call(&ls, fill);
	struct rlimit old;
	long t0;

	fd_limit_now(&old);
	CHECK_RET(t_snddis(cli, NULL), 0);
	CHECK_STATE(cli, T_IDLE);
	t0 = cpu_ms();
	pause_ms(300);
	CHECK(cpu_ms() - t0 < 100);
	CHECK_RET(setrlimit(RLIMIT_NOFILE, &old), 0);
	call_elsewhere(cli, ls, fill);
}

/* an endpoint accepted onto while unbound (it shares its listener's
 * port) connects out again after its connection ended */
static void test_acceptor_reuse(void)
{
	struct sa a, b;
	struct t_call c;
	struct t_discon d;
	char buf[4];
	int lfd, l2, cli, acc, seq = -1;

	lfd = xt_listener(1, &a);
	l2 = xt_listener(1, &b);
	cli = xt_open();
	acc = xt_open();
	REQUIRE(lfd >= 0 && l2 >= 0 && cli >= 0 && acc >= 0);
	CHECK_RET(xt_bind_lo(cli, 0, 0, NULL), 0);
	CHECK_RET(xt_call(cli, &a), 0);
	CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
	CHECK_RET(xt_accept(lfd, acc, seq), 0);
	CHECK_RET(xt_connected(cli), 0);
	CHECK_RET(t_snddis(cli, NULL), 0);
	CHECK_EQ(xt_wait_event(acc, T_DISCONNECT, 3000), T_DISCONNECT);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(acc, &d), 0);
	CHECK_STATE(acc, T_IDLE);
	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&b.u;
	c.addr.len = b.len;
	CHECK_RET(t_connect(acc, &c, NULL), 0);
	CHECK_RET(xt_listen(l2, &seq, NULL), 0);
	CHECK_RET(xt_accept(l2, l2, seq), 0);
	CHECK_RET(t_snd(acc, "r", 1, 0), 1);
	CHECK_RET(xt_rcv_all(l2, buf, 1), 0);
	CHECK_EQ(buf[0], 'r');
	CHECK_RET(t_close(acc), 0);
	CHECK_RET(t_close(cli), 0);
	CHECK_RET(t_close(l2), 0);
	CHECK_RET(t_close(lfd), 0);
}

static void test_bad_input(void)
{
	struct sa a = sa_lo(cur->family, 0), used;
	socklen_t ul = sizeof(used.u);
	struct t_bind req;
	struct t_call c;
	int fd, s, lfd;

	fd = xt_open();
	REQUIRE(fd >= 0);
	/* a length that is no address */
	memset(&req, 0, sizeof(req));
	req.addr.buf = (char *)&a.u;
	req.addr.len = 15;
	CHECK_TERR(t_bind(fd, &req, NULL), TBADADDR);
	/* a family that is neither */
	struct sa u = a;
	u.u.sa.sa_family = AF_UNIX;
	req.addr.buf = (char *)&u.u;
	req.addr.len = a.len;
	CHECK_TERR(t_bind(fd, &req, NULL), TBADADDR);
	CHECK_STATE(fd, T_UNBND);
	/* a port in use by a plain socket */
	s = socket(cur->family, SOCK_STREAM, 0);
	REQUIRE(s >= 0);
	REQUIRE(bind(s, &a.u.sa, a.len) == 0);
	REQUIRE(listen(s, 1) == 0);
	REQUIRE(getsockname(s, &used.u.sa, &ul) == 0);
	used.len = ul;
	req.addr.buf = (char *)&used.u;
	req.addr.len = used.len;
	CHECK_TERR(t_bind(fd, &req, NULL), TADDRBUSY);
	CHECK_STATE(fd, T_UNBND);
	/* not connected */
	CHECK_RET(xt_bind_lo(fd, 0, 0, NULL), 0);
	CHECK_TERR(t_snd(fd, "x", 1, 0), TOUTSTATE);
	CHECK_TERR(t_sndrel(fd), TOUTSTATE);
	/* connect to an address of the other family */
	struct sa o = sa_lo(cur->family == AF_INET ? AF_INET6 : AF_INET,
			    sa_port(&used));
	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&o.u;
	c.addr.len = o.len;
	CHECK_TERR(t_connect(fd, &c, NULL), TBADADDR);
	c.addr.buf = (char *)&used.u;
	c.addr.len = 9;
	CHECK_TERR(t_connect(fd, &c, NULL), TBADADDR);
	/* connect data is not supported */
	c.addr.len = used.len;
	c.udata.buf = "data";
	c.udata.len = 4;
	CHECK_TERR(t_connect(fd, &c, NULL), TBADDATA);
	CHECK_STATE(fd, T_IDLE);
	/* a listener does not call out */
	lfd = xt_listener(1, NULL);
	REQUIRE(lfd >= 0);
	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&used.u;
	c.addr.len = used.len;
	CHECK_TERR(t_connect(lfd, &c, NULL), TOUTSTATE);
	close(s);
	CHECK_RET(t_close(lfd), 0);
	CHECK_RET(t_close(fd), 0);
}

int main(void)
{
	FOR_EACH_CFG({
		test_info();
		test_port0_plain_client();
		test_accept_other();
		test_qlen3();
		test_refused();
		test_close_pending();
		test_withdraw();
		test_withdraw_emfile();
		test_accept_emfile();
		test_acceptor_reuse();
		test_bad_input();
	});
	T_DONE();
}
