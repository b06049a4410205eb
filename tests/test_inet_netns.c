/*
 * test_inet_netns -- the Internet providers between two network
 * namespaces joined by a veth pair that the test creates and removes
 * itself (10.199.0.1 in "strA", 10.199.0.2 in "strB", MTU 1500), against
 * plain socket programs in the other namespace, both ways:
 *
 *   UDP: an XTI receiver (/dev/udp and /dev/inet/udp) in A gets what a
 *	socket sends from B -- and answers it; an XTI sender in A sends a
 *	burst of mixed sizes (a GSO run, datagrams over the MTU that the
 *	kernel fragments, zero-length ones) to a socket in B, which checks
 *	every byte.
 *   TCP: an XTI listener (/dev/tcp, /dev/inet/tcp) in A accepts a socket
 *	client from B and echoes 1 MiB back; an XTI client in A connects to
 *	a socket server in B and sends 1 MiB with a checksum, then an
 *	orderly release.
 *
 * Needs root, ip(8) and network namespaces: exits 77 (skipped, with the
 * reason) where the machine does not allow them.
 */
#define _GNU_SOURCE
#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <xti_inet.h>

#define NS_A	"strA"
#define NS_B	"strB"
#define ADDR_A	"10.199.0.1"
#define ADDR_B	"10.199.0.2"

static int sh(const char *cmd)
{
	int r = system(cmd);

	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

static void teardown(void)
{
	(void)!sh("ip netns del " NS_A " 2>/dev/null");
	(void)!sh("ip netns del " NS_B " 2>/dev/null");
}

static bool setup(void)
{
	teardown();
	return sh("ip netns add " NS_A) == 0 &&
	       sh("ip netns add " NS_B) == 0 &&
	       sh("ip link add strvA netns " NS_A " type veth peer name strvB "
		  "netns " NS_B) == 0 &&
	       sh("ip -n " NS_A " addr add " ADDR_A "/24 dev strvA") == 0 &&
	       sh("ip -n " NS_B " addr add " ADDR_B "/24 dev strvB") == 0 &&
	       sh("ip -n " NS_A " link set strvA up") == 0 &&
	       sh("ip -n " NS_B " link set strvB up") == 0 &&
	       sh("ip -n " NS_A " link set lo up") == 0 &&
	       sh("ip -n " NS_B " link set lo up") == 0;
}

/* Enter namespace name (in a child process). */
static void enter(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
		perror("setns");
		_exit(3);
	}
	close(fd);
}

static struct sockaddr_in sin_of(const char *a, unsigned port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static unsigned char pattern(size_t i, unsigned seed)
{
	return (unsigned char)((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

/* A child's exit status: 0 when every check passed. */
static int child_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A pipe to say "ready" from one child to the parent. */
static void ready(int fd)
{
	(void)!write(fd, "r", 1);
	close(fd);
}

static bool wait_ready(int fd)
{
	char c;
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 10000) == 1 && read(fd, &c, 1) == 1;
}

/* ---- UDP ---- */

/* runs of one size go as one GSO message; the 3000-byte pair is a run
 * the kernel refuses over a 1500-byte MTU (EINVAL): sent one by one, and
 * GSO kept for the smaller runs after it */
static const unsigned udp_sizes[] = { 1, 1, 1, 1, 100, 100, 1472, 1472,
				      1473, 3000, 3000, 0, 8000, 64, 64, 64,
				      64 };
#define NUDP (sizeof(udp_sizes) / sizeof(udp_sizes[0]))

/* In A: an XTI endpoint on port 7001: get one datagram from B, answer
 * it, then send the burst to B's port 7002. */
static int udp_xti_side(const char *dev, int rfd)
{
	struct sockaddr_in me = sin_of(ADDR_A, 7001), peer, to;
	struct t_bind b;
	struct t_unitdata ud;
	static unsigned char buf[9000];
	int fd, flags = 0;

	fd = t_open(dev, O_RDWR, NULL);
	REQUIRE(fd >= 0);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&me;
	b.addr.len = sizeof(me);
	REQUIRE(t_bind(fd, &b, NULL) == 0);
	ready(rfd);
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = (char *)&peer;
	ud.addr.maxlen = sizeof(peer);
	ud.udata.buf = (char *)buf;
	ud.udata.maxlen = sizeof(buf);
	CHECK_RET(t_rcvudata(fd, &ud, &flags), 0);
	CHECK_EQ(ud.udata.len, 5u);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ(ud.addr.len, sizeof(peer));
	CHECK(peer.sin_addr.s_addr == sin_of(ADDR_B, 0).sin_addr.s_addr);
	/* the answer */
	ud.udata.buf = (char *)"world";
	ud.udata.len = 5;
	ud.addr.len = sizeof(peer);
	CHECK_RET(t_sndudata(fd, &ud), 0);
	/* the burst, to port 7002 */
	to = sin_of(ADDR_B, 7002);
	for (unsigned r = 0; r < 8; r++)
		for (unsigned i = 0; i < NUDP; i++) {
			for (unsigned k = 0; k < udp_sizes[i]; k++)
				buf[k] = pattern(k, r * NUDP + i);
			memset(&ud, 0, sizeof(ud));
			ud.addr.buf = (char *)&to;
			ud.addr.len = sizeof(to);
			ud.udata.buf = (char *)buf;
			ud.udata.len = udp_sizes[i];
			CHECK_RET(t_sndudata(fd, &ud), 0);
		}
	pause_ms(200);		/* the last batch leaves before the close */
	CHECK_RET(t_close(fd), 0);
	return t_failed;
}

/* In B: plain sockets. */
static int udp_socket_side(void)
{
	struct sockaddr_in a = sin_of(ADDR_A, 7001), me = sin_of(ADDR_B, 7002);
	struct timeval tv = { 5, 0 };
	static unsigned char buf[9000];
	int s = socket(AF_INET, SOCK_DGRAM, 0), r2 = socket(AF_INET,
							    SOCK_DGRAM, 0);
	int big = 4 << 20;

	REQUIRE(s >= 0 && r2 >= 0);
	REQUIRE(bind(r2, (struct sockaddr *)&me, sizeof(me)) == 0);
	setsockopt(r2, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(r2, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	CHECK_RET((int)sendto(s, "hello", 5, 0, (struct sockaddr *)&a,
			      sizeof(a)), 5);
	CHECK_RET((int)recv(s, buf, sizeof(buf), 0), 5);
	CHECK(memcmp(buf, "world", 5) == 0);
	for (unsigned r = 0; r < 8; r++)
		for (unsigned i = 0; i < NUDP; i++) {
			ssize_t n = recv(r2, buf, sizeof(buf), 0);
			bool same = true;

			CHECK_EQ(n, (ssize_t)udp_sizes[i]);
			for (ssize_t k = 0; k < n; k++)
				if (buf[k] != pattern((size_t)k, r * NUDP + i))
					same = false;
			CHECK(same);
			if (n != (ssize_t)udp_sizes[i])
				return t_failed;
		}
	close(s);
	close(r2);
	return t_failed;
}

static void test_udp(const char *dev)
{
	int p[2];
	pid_t a, b;

	printf("-- UDP %s\n", dev);
	fflush(stdout);
	REQUIRE(pipe(p) == 0);
	if ((a = fork()) == 0) {
		close(p[0]);
		enter(NS_A);
		_exit(udp_xti_side(dev, p[1]) != 0);
	}
	close(p[1]);
	CHECK(wait_ready(p[0]));
	close(p[0]);
	if ((b = fork()) == 0) {
		enter(NS_B);
		_exit(udp_socket_side() != 0);
	}
	CHECK_EQ(child_status(b), 0);
	CHECK_EQ(child_status(a), 0);
}

/* ---- TCP ---- */

#define TCP_BYTES	(1 << 20)

static int xt_wait_look(int fd, int want, int ms)
{
	long end = now_ms() + ms;
	int ev;

	while ((ev = t_look(fd)) != want && now_ms() < end)
		pause_ms(1);
	return ev;
}

/* In A: an XTI listener on 7003 that echoes what a client sends until
 * the client's orderly release; then an XTI client to B's 7004 that
 * sends TCP_BYTES and releases. */
static int tcp_xti_side(const char *dev, int rfd, int srv_ready)
{
	struct sockaddr_in me = sin_of(ADDR_A, 7003), peer, srv;
	struct t_bind b, rb;
	struct t_call call;
	static unsigned char buf[65536];
	int l, c, flags, n;
	size_t total = 0;

	l = t_open(dev, O_RDWR, NULL);
	REQUIRE(l >= 0);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&me;
	b.addr.len = sizeof(me);
	b.qlen = 4;
	memset(&rb, 0, sizeof(rb));
	REQUIRE(t_bind(l, &b, &rb) == 0);
	CHECK_EQ(rb.qlen, 4u);
	ready(rfd);
	memset(&call, 0, sizeof(call));
	call.addr.buf = (char *)&peer;
	call.addr.maxlen = sizeof(peer);
	CHECK_RET(t_listen(l, &call), 0);
	CHECK(peer.sin_addr.s_addr == sin_of(ADDR_B, 0).sin_addr.s_addr);
	c = t_open(dev, O_RDWR, NULL);
	REQUIRE(c >= 0);
	REQUIRE(t_bind(c, NULL, NULL) == 0);
	CHECK_RET(t_accept(l, c, &call), 0);
	for (;;) {
		flags = 0;
		n = t_rcv(c, (char *)buf, sizeof(buf), &flags);
		if (n < 0) {
			CHECK_EQ(t_errno, TLOOK);
			CHECK_EQ(t_look(c), T_ORDREL);
			CHECK_RET(t_rcvrel(c), 0);
			break;
		}
		total += (size_t)n;
		CHECK_RET(t_snd(c, (char *)buf, (unsigned)n, 0), n);
	}
	CHECK_EQ(total, (size_t)TCP_BYTES);
	CHECK_RET(t_sndrel(c), 0);
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(l), 0);
	/* the client, once B's server listens */
	CHECK(wait_ready(srv_ready));
	close(srv_ready);
	c = t_open(dev, O_RDWR, NULL);
	REQUIRE(c >= 0);
	REQUIRE(t_bind(c, NULL, NULL) == 0);
	srv = sin_of(ADDR_B, 7004);
	memset(&call, 0, sizeof(call));
	call.addr.buf = (char *)&srv;
	call.addr.len = sizeof(srv);
	CHECK_RET(t_connect(c, &call, NULL), 0);
	for (size_t off = 0; off < TCP_BYTES;) {
		unsigned k = TCP_BYTES - off > 10000 ? 10000
						     : (unsigned)(TCP_BYTES - off);

		for (unsigned i = 0; i < k; i++)
			buf[i] = pattern(off + i, 9);
		n = t_snd(c, (char *)buf, k, 0);
		CHECK_EQ(n, (int)k);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	CHECK_RET(t_sndrel(c), 0);
	CHECK_EQ(xt_wait_look(c, T_ORDREL, 10000), T_ORDREL);
	CHECK_RET(t_rcvrel(c), 0);
	CHECK_RET(t_close(c), 0);
	return t_failed;
}

/* In B: a socket client of A's 7003 (send, read the echo), then a socket
 * server on 7004 that checks every byte it gets. */
static int tcp_socket_side(int rfd)
{
	struct sockaddr_in a = sin_of(ADDR_A, 7003), me = sin_of(ADDR_B, 7004);
	static unsigned char buf[65536];
	struct timeval tv = { 10, 0 };
	size_t sent = 0, got = 0;
	int s = socket(AF_INET, SOCK_STREAM, 0), ls, c, one = 1;
	bool same = true;

	REQUIRE(s >= 0);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	REQUIRE(connect(s, (struct sockaddr *)&a, sizeof(a)) == 0);
	while (got < TCP_BYTES) {
		ssize_t n;

		if (sent < TCP_BYTES) {
			size_t k = TCP_BYTES - sent > 7777 ? 7777
							    : TCP_BYTES - sent;

			for (size_t i = 0; i < k; i++)
				buf[i] = pattern(sent + i, 5);
			n = send(s, buf, k, 0);
			REQUIRE(n > 0);
			sent += (size_t)n;
			if (sent == TCP_BYTES)
				shutdown(s, SHUT_WR);
		}
		n = recv(s, buf, sizeof(buf), sent < TCP_BYTES ? MSG_DONTWAIT
							       : 0);
		if (n < 0 && errno == EAGAIN)
			continue;
		CHECK(n > 0);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern(got + (size_t)i, 5))
				same = false;
		got += (size_t)n;
	}
	CHECK(same);
	CHECK_EQ(got, (size_t)TCP_BYTES);
	CHECK_RET((int)recv(s, buf, 1, 0), 0);	/* the XTI side released */
	close(s);
	/* the server */
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	REQUIRE(bind(ls, (struct sockaddr *)&me, sizeof(me)) == 0);
	REQUIRE(listen(ls, 4) == 0);
	ready(rfd);
	c = accept(ls, NULL, NULL);
	REQUIRE(c >= 0);
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	got = 0;
	for (;;) {
		ssize_t n = recv(c, buf, sizeof(buf), 0);

		CHECK(n >= 0);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern(got + (size_t)i, 9))
				same = false;
		got += (size_t)n;
	}
	CHECK(same);
	CHECK_EQ(got, (size_t)TCP_BYTES);
	shutdown(c, SHUT_WR);
	close(c);
	close(ls);
	return t_failed;
}

static void test_tcp(const char *dev)
{
	int pa[2], pb[2];
	pid_t a, b;

	printf("-- TCP %s\n", dev);
	fflush(stdout);
	REQUIRE(pipe(pa) == 0 && pipe(pb) == 0);
	if ((a = fork()) == 0) {
		close(pa[0]);
		close(pb[1]);
		enter(NS_A);
		_exit(tcp_xti_side(dev, pa[1], pb[0]) != 0);
	}
	close(pa[1]);
	CHECK(wait_ready(pa[0]));
	close(pa[0]);
	if ((b = fork()) == 0) {
		close(pb[0]);
		signal(SIGPIPE, SIG_IGN);
		enter(NS_B);
		_exit(tcp_socket_side(pb[1]) != 0);
	}
	close(pb[1]);
	close(pb[0]);
	CHECK_EQ(child_status(b), 0);
	CHECK_EQ(child_status(a), 0);
}

int main(void)
{
	static const char *const udp[] = { "/dev/udp", "/dev/inet/udp" };
	static const char *const tcp[] = { "/dev/tcp", "/dev/inet/tcp" };

	if (geteuid() != 0 || sh("command -v ip >/dev/null") != 0) {
		printf("SKIP: needs root and ip(8)\n");
		return 77;
	}
	if (!setup()) {
		teardown();
		printf("SKIP: network namespaces not allowed here\n");
		return 77;
	}
	for (int i = 0; i < 2; i++)
		test_udp(udp[i]);
	for (int i = 0; i < 2; i++)
		test_tcp(tcp[i]);
	teardown();
	T_DONE();
}
