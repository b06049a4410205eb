/*
 * test_inet_tcp_reuse -- a TCP endpoint after its connection ends, on
 * /dev/inet/tcp and /dev/tcp, driven with raw TPI (putmsg/getmsg) against
 * plain sockets on 127.0.0.1:
 *  - TS_IDLE has no peer address any more (T_ADDR_ACK REMADDR empty);
 *  - a listener that accepted onto itself listens again on its own port,
 *    also while another acceptor holds a connection on that port or its
 *    old connection is in TIME_WAIT; a client reconnects from its port;
 *  - data sent before T_ORDREL_REQ all arrives, then the FIN, even when
 *    the endpoint calls out again, or accepts, at once;
 *  - a data request that crosses a disconnect and the next indication is
 *    dropped, not a stream error; an unbound endpoint is idle (no busy
 *    write service procedure);
 *  - expedited data (band 1) is flow controlled as normal data is;
 *  - a reset after the peer's FIN (TS_WREQ_ORDREL) is T_DISCON_IND.
 */
#include "sth.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/tihdr.h>
#include <xti.h>

static const char *dev;

static union {
	long align;
	char b[1024];
} cb;
static char db[65536];

static int tput(int fd, const void *ctl, int cl, const void *d, int dl,
	       int flags)
{
	struct strbuf c = { 0, cl, (char *)ctl }, dd = { 0, dl, (char *)d };

	return putmsg(fd, cl >= 0 ? &c : NULL, dl >= 0 ? &dd : NULL, flags);
}

/* The next message within ms: its PRIM_type, -2 data only, -1 none,
 * -4 a stream error (EPROTO). */
static int get(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN | POLLPRI | POLLRDBAND, 0 };
	struct strbuf c = { sizeof(cb.b), 0, cb.b }, d = { sizeof(db), 0, db };
	int fl = 0;

	if (poll(&p, 1, ms) <= 0)
		return -1;
	if (getmsg(fd, &c, &d, &fl) < 0)
		return errno == EPROTO ? -4 : -5;
	return c.len >= (int)sizeof(t_scalar_t) ? (int)*(t_scalar_t *)cb.b
						 : -2;
}

/* Wait for prim, skipping nothing. */
static bool expect(int fd, int prim)
{
	int p = get(fd, 3000);

	if (p != prim)
		fprintf(stderr, "  got %d, wanted %d\n", p, prim);
	return p == prim;
}

static struct sockaddr_in lo(unsigned port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int tpi_open(void)
{
	int fd = open(dev, O_RDWR);

	REQUIRE(fd >= 0);
	return fd;
}

/* Bound to 127.0.0.1:port with qlen: the port bound. */
static unsigned tpi_bind(int fd, unsigned port, unsigned qlen)
{
	struct {
		struct T_bind_req r;
		struct sockaddr_in a;
	} m = { { T_BIND_REQ, sizeof(m.a), sizeof(m.r), qlen }, lo(port) };
	struct sockaddr_in a;

	REQUIRE(tput(fd, &m, sizeof(m), NULL, -1, 0) == 0);
	REQUIRE(get(fd, 3000) == T_BIND_ACK);
	memcpy(&a, cb.b + ((struct T_bind_ack *)cb.b)->ADDR_offset, sizeof(a));
	return ntohs(a.sin_port);
}

static void tpi_conn_req(int fd, unsigned port)
{
	struct {
		struct T_conn_req r;
		struct sockaddr_in a;
	} m;

	memset(&m, 0, sizeof(m));
	m.r.PRIM_type = T_CONN_REQ;
	m.r.DEST_length = sizeof(m.a);
	m.r.DEST_offset = sizeof(m.r);
	m.a = lo(port);
	REQUIRE(tput(fd, &m, sizeof(m), NULL, -1, 0) == 0);
}

static void tpi_conn_res(int fd, t_uscalar_t acc, t_scalar_t seq)
{
	struct T_conn_res r;

	memset(&r, 0, sizeof(r));
	r.PRIM_type = T_CONN_RES;
	r.ACCEPTOR_id = acc;
	r.SEQ_number = seq;
	REQUIRE(tput(fd, &r, sizeof(r), NULL, -1, 0) == 0);
}

static int tpi_data(int fd, const void *d, int n)
{
	struct T_data_req r = { T_DATA_REQ, 0 };

	return tput(fd, &r, sizeof(r), d, n, 0);
}

static int tpi_ordrel(int fd)
{
	struct T_ordrel_req r = { T_ORDREL_REQ };

	return tput(fd, &r, sizeof(r), NULL, -1, 0);
}

static t_uscalar_t tpi_token(int fd)
{
	struct T_capability_req r = { T_CAPABILITY_REQ, TC1_ACCEPTOR_ID };

	REQUIRE(tput(fd, &r, sizeof(r), NULL, -1, RS_HIPRI) == 0);
	REQUIRE(get(fd, 3000) == T_CAPABILITY_ACK);
	return ((struct T_capability_ack *)cb.b)->ACCEPTOR_id;
}

static int tpi_state(int fd)
{
	struct T_info_req r = { T_INFO_REQ };

	REQUIRE(tput(fd, &r, sizeof(r), NULL, -1, RS_HIPRI) == 0);
	REQUIRE(get(fd, 3000) == T_INFO_ACK);
	return ((struct T_info_ack *)cb.b)->CURRENT_state;
}

/* T_ADDR_ACK: local port and the remote address's length. */
static void tpi_addr(int fd, unsigned *port, int *remlen)
{
	struct T_addr_req r = { T_ADDR_REQ };
	struct T_addr_ack *a = (struct T_addr_ack *)cb.b;
	struct sockaddr_in la;

	REQUIRE(tput(fd, &r, sizeof(r), NULL, -1, 0) == 0);
	REQUIRE(get(fd, 3000) == T_ADDR_ACK);
	memcpy(&la, cb.b + a->LOCADDR_offset, sizeof(la));
	*port = ntohs(la.sin_port);
	*remlen = a->REMADDR_length;
}

static void tpi_sndbuf(int fd, t_scalar_t v)
{
	struct {
		struct T_optmgmt_req r;
		struct t_opthdr h;
		t_scalar_t v;
	} m;

	memset(&m, 0, sizeof(m));
	m.r.PRIM_type = T_OPTMGMT_REQ;
	m.r.OPT_length = sizeof(m.h) + sizeof(m.v);
	m.r.OPT_offset = sizeof(m.r);
	m.r.MGMT_flags = T_NEGOTIATE;
	m.h.len = sizeof(m.h) + sizeof(m.v);
	m.h.level = XTI_GENERIC;
	m.h.name = XTI_SNDBUF;
	m.v = v;
	REQUIRE(tput(fd, &m, sizeof(m), NULL, -1, 0) == 0);
	REQUIRE(get(fd, 3000) == T_OPTMGMT_ACK);
}

/* A listening socket on 127.0.0.1: its fd, port into *port. */
static int sock_listener(unsigned *port)
{
	struct sockaddr_in a = lo(0);
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	REQUIRE(s >= 0);
	REQUIRE(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0);
	REQUIRE(listen(s, 8) == 0);
	REQUIRE(getsockname(s, (struct sockaddr *)&a, &al) == 0);
	*port = ntohs(a.sin_port);
	return s;
}

static int sock_call(unsigned port)
{
	struct sockaddr_in a = lo(port);
	int c = socket(AF_INET, SOCK_STREAM, 0);

	REQUIRE(c >= 0);
	if (connect(c, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(c);
		return -1;
	}
	return c;
}

static void sock_reset(int s)
{
	struct linger lg = { 1, 0 };

	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s);
}

/* x calls out to a socket listener s: the accepted socket. */
static int tpi_connected(int x, int s, unsigned port)
{
	int p;

	tpi_conn_req(x, port);
	CHECK(expect(x, T_OK_ACK));
	CHECK(expect(x, T_CONN_CON));
	p = accept(s, NULL, NULL);
	REQUIRE(p >= 0);
	return p;
}

/* ---- the tests ---- */

static void test_no_peer_when_idle(void)
{
	unsigned port, lp;
	int s = sock_listener(&port), rl;
	char b[8];

	for (int how = 0; how < 2; how++) {
		int x = tpi_open(), p;

		tpi_bind(x, 0, 0);
		p = tpi_connected(x, s, port);
		tpi_addr(x, &lp, &rl);
		CHECK_EQ(rl, sizeof(struct sockaddr_in));
		if (how == 0) {
			sock_reset(p);
			CHECK(expect(x, T_DISCON_IND));
		} else {
			CHECK_RET(tpi_ordrel(x), 0);
			CHECK_RET((int)read(p, b, sizeof(b)), 0);
			close(p);
			CHECK(expect(x, T_ORDREL_IND));
		}
		CHECK_EQ(tpi_state(x), TS_IDLE);
		tpi_addr(x, &lp, &rl);
		CHECK_EQ(rl, 0);
		close(x);
	}
	close(s);
}

/* A listener accepted onto itself; its connection reset by the caller:
 * it listens again on its port (another acceptor holding a connection
 * on that port or not). */
static void test_relisten_same_port(void)
{
	for (int other = 0; other < 2; other++) {
		int l = tpi_open(), a = tpi_open(), c1 = -1, c2, c3;
		unsigned port = tpi_bind(l, 0, 2), p2;
		int rl;

		if (other) {
			c1 = sock_call(port);
			REQUIRE(c1 >= 0);
			CHECK(expect(l, T_CONN_IND));
			tpi_conn_res(l, tpi_token(a),
				     ((struct T_conn_ind *)cb.b)->SEQ_number);
			CHECK(expect(l, T_OK_ACK));
		}
		c2 = sock_call(port);
		REQUIRE(c2 >= 0);
		CHECK(expect(l, T_CONN_IND));
		tpi_conn_res(l, 0, ((struct T_conn_ind *)cb.b)->SEQ_number);
		CHECK(expect(l, T_OK_ACK));
		sock_reset(c2);
		CHECK(expect(l, T_DISCON_IND));
		pause_ms(100);
		tpi_addr(l, &p2, &rl);
		CHECK_EQ(p2, port);
		c3 = sock_call(port);
		CHECK(c3 >= 0);
		CHECK(expect(l, T_CONN_IND));
		if (c3 >= 0)
			close(c3);
		if (c1 >= 0)
			close(c1);
		close(a);
		close(l);
	}
}

/* A client bound to a port released first (its old connection is in
 * TIME_WAIT) and calls again: from the same port. */
static void test_rebind_time_wait(void)
{
	unsigned port, p0, p1;
	int s = sock_listener(&port), x = tpi_open(), p, rl;
	char b[8];

	p0 = tpi_bind(x, 0, 0);
	p = tpi_connected(x, s, port);
	CHECK_RET(tpi_ordrel(x), 0);
	CHECK_RET((int)read(p, b, sizeof(b)), 0);
	close(p);
	CHECK(expect(x, T_ORDREL_IND));
	p = tpi_connected(x, s, port);
	tpi_addr(x, &p1, &rl);
	CHECK_EQ(p1, p0);
	close(p);
	close(x);
	close(s);
}

/* Data sent before T_ORDREL_REQ, held up by a peer that reads nothing,
 * then the endpoint calls out again (how 0) or accepts a call (how 1):
 * the first peer still gets every byte, then end of file. */
static void test_release_then_reuse(void)
{
	static char blk[8192];

	for (int how = 0; how < 2; how++) {
		unsigned port, port2;
		int s = sock_listener(&port), s2 = sock_listener(&port2);
		int x = tpi_open(), p, r;
		long sent = 0, got = 0;
		bool order = true;

		tpi_sndbuf(x, 4096);
		tpi_bind(x, 0, 0);
		p = tpi_connected(x, s, port);
		shutdown(p, SHUT_WR);
		CHECK(expect(x, T_ORDREL_IND));
		set_nonblock(x, true);
		for (int i = 0; i < 4000; i++) {
			memset(blk, 'a' + i % 26, sizeof(blk));
			if (tpi_data(x, blk, sizeof(blk)) != 0)
				break;
			sent += sizeof(blk);
		}
		/* the queue is full: the peer takes a little at a time until
		 * the release fits in behind what waits */
		while (tpi_ordrel(x) != 0 && errno == EAGAIN) {
			r = (int)read(p, blk, 1024);
			for (int i = 0; i < r; i++)
				order &= blk[i] == 'a' + (got + i) / 8192 % 26;
			if (r > 0)
				got += r;
		}
		set_nonblock(x, false);
		CHECK(sent > 16384);
		if (how == 0) {
			tpi_conn_req(x, port2);
			CHECK(expect(x, T_OK_ACK));
			CHECK(expect(x, T_CONN_CON));
		} else {
			int l = tpi_open(), c;
			unsigned lp = tpi_bind(l, 0, 1);

			c = sock_call(lp);
			REQUIRE(c >= 0);
			CHECK(expect(l, T_CONN_IND));
			tpi_conn_res(l, tpi_token(x),
				     ((struct T_conn_ind *)cb.b)->SEQ_number);
			CHECK(expect(l, T_OK_ACK));
			close(c);
			close(l);
		}
		while ((r = (int)read(p, blk, sizeof(blk))) > 0) {
			for (int i = 0; i < r; i++)
				order &= blk[i] == 'a' + (got + i) / 8192 % 26;
			got += r;
		}
		CHECK_EQ(r, 0);
		CHECK_EQ(got, sent);
		CHECK(order);
		close(p);
		close(x);
		close(s);
		close(s2);
	}
}

/* A data request that crosses a disconnect (a listener accepted onto
 * itself, the caller reset) and the next call's indication: dropped; the
 * stream gives T_DISCON_IND, then T_CONN_IND, no error. */
static void test_data_across_relisten(void)
{
	int l = tpi_open(), c, c2;
	unsigned port = tpi_bind(l, 0, 1);

	c = sock_call(port);
	REQUIRE(c >= 0);
	CHECK(expect(l, T_CONN_IND));
	tpi_conn_res(l, 0, ((struct T_conn_ind *)cb.b)->SEQ_number);
	CHECK(expect(l, T_OK_ACK));
	sock_reset(c);
	pause_ms(100);
	CHECK_RET(tpi_data(l, "one", 3), 0);
	pause_ms(100);
	c2 = sock_call(port);
	CHECK(c2 >= 0);
	pause_ms(100);
	CHECK_RET(tpi_data(l, "two", 3), 0);
	pause_ms(100);
	CHECK(expect(l, T_DISCON_IND));
	CHECK(expect(l, T_CONN_IND));
	CHECK_EQ(tpi_state(l), TS_WRES_CIND);
	if (c2 >= 0)
		close(c2);
	close(l);
}


/* A listener accepted onto itself released with data still waiting (it
 * would listen again once drained), then unbound: it does nothing. */
static void test_unbind_is_idle(void)
{
	static char blk[8192];
	struct T_unbind_req u = { T_UNBIND_REQ };
	int l = tpi_open(), c, rcv = 4096, p;
	unsigned port;
	double c0;

	tpi_sndbuf(l, 4096);
	port = tpi_bind(l, 0, 1);
	c = socket(AF_INET, SOCK_STREAM, 0);
	REQUIRE(c >= 0);
	setsockopt(c, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	{
		struct sockaddr_in a = lo(port);
		REQUIRE(connect(c, (struct sockaddr *)&a, sizeof(a)) == 0);
	}
	CHECK(expect(l, T_CONN_IND));
	tpi_conn_res(l, 0, ((struct T_conn_ind *)cb.b)->SEQ_number);
	CHECK(expect(l, T_OK_ACK));
	shutdown(c, SHUT_WR);
	CHECK(expect(l, T_ORDREL_IND));
	set_nonblock(l, true);
	while (tpi_data(l, blk, sizeof(blk)) == 0)
		;
	while (tpi_ordrel(l) != 0 && errno == EAGAIN)
		(void)!read(c, blk, 1024);
	set_nonblock(l, false);
	REQUIRE(tput(l, &u, sizeof(u), NULL, -1, 0) == 0);
	while ((p = get(l, 2000)) >= 0 && p != T_OK_ACK && p != T_ERROR_ACK)
		;
	CHECK_EQ(p, T_OK_ACK);
	close(c);
	pause_ms(200);
	c0 = cpu_s();
	pause_ms(1000);
	CHECK(cpu_s() - c0 < 0.3);
	close(l);
}

/* Expedited data waits in line with normal data, so it is held back by
 * the same flow control: with a peer that reads nothing, a band-1 write
 * gets EAGAIN too; blocking, it goes on once the peer reads. */
static int ex_done;		/* atomic */

static void *ex_writer(void *arg)
{
	static char blk[8192];
	struct T_exdata_req e = { T_EXDATA_REQ, 0 };
	struct strbuf c = { 0, sizeof(e), (char *)&e };
	struct strbuf d = { 0, sizeof(blk), blk };

	if (putpmsg(*(int *)arg, &c, &d, 1, MSG_BAND) == 0)
		__atomic_store_n(&ex_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_expedited_flow(void)
{
	static char blk[8192];
	struct T_exdata_req e = { T_EXDATA_REQ, 0 };
	struct strbuf c = { 0, sizeof(e), (char *)&e };
	struct strbuf d = { 0, sizeof(blk), blk };
	unsigned port;
	int s = sock_listener(&port), x = tpi_open(), p, rcv = 4096;
	long normal = 0, ex = 0;
	pthread_t t;

	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	tpi_sndbuf(x, 4096);
	tpi_bind(x, 0, 0);
	p = tpi_connected(x, s, port);
	set_nonblock(x, true);
	while (normal < (64L << 20) && tpi_data(x, blk, sizeof(blk)) == 0)
		normal += sizeof(blk);
	CHECK(normal < (4L << 20));
	while (ex < (64L << 20) && putpmsg(x, &c, &d, 1, MSG_BAND) == 0)
		ex += sizeof(blk);
	CHECK_EQ(errno, EAGAIN);
	CHECK(ex < (1L << 20));
	set_nonblock(x, false);
	/* blocking: waits until the peer reads */
	__atomic_store_n(&ex_done, 0, __ATOMIC_RELEASE);
	REQUIRE(pthread_create(&t, NULL, ex_writer, &x) == 0);
	pause_ms(300);
	CHECK_EQ(__atomic_load_n(&ex_done, __ATOMIC_ACQUIRE), 0);
	set_nonblock(p, true);
	for (int i = 0; i < 5000 &&
			!__atomic_load_n(&ex_done, __ATOMIC_ACQUIRE); i++)
		if (read(p, blk, sizeof(blk)) <= 0)
			pause_ms(1);
	pthread_join(t, NULL);
	CHECK_EQ(__atomic_load_n(&ex_done, __ATOMIC_ACQUIRE), 1);
	close(p);
	close(x);
	close(s);
}

/* The peer's FIN (T_ORDREL_IND), then its reset: T_DISCON_IND, without
 * our sending anything. */
static void test_reset_after_fin(void)
{
	unsigned port;
	int s = sock_listener(&port), x = tpi_open(), p;

	tpi_bind(x, 0, 0);
	p = tpi_connected(x, s, port);
	shutdown(p, SHUT_WR);
	CHECK(expect(x, T_ORDREL_IND));
	CHECK_EQ(tpi_state(x), TS_WREQ_ORDREL);
	sock_reset(p);
	CHECK(expect(x, T_DISCON_IND));
	CHECK_EQ(tpi_state(x), TS_IDLE);
	close(x);
	close(s);
}

/* A caller that resets its connection before the listener answered its
 * indication: T_DISCON_IND with that SEQ_number, the listener TS_IDLE;
 * one that only closes (FIN) can still be accepted. */
static void test_withdrawn_indication(void)
{
	int l = tpi_open(), a = tpi_open(), c, c2;
	unsigned port = tpi_bind(l, 0, 2);
	t_scalar_t seq;
	char b[8];

	c = sock_call(port);
	REQUIRE(c >= 0);
	CHECK(expect(l, T_CONN_IND));
	seq = ((struct T_conn_ind *)cb.b)->SEQ_number;
	sock_reset(c);
	CHECK(expect(l, T_DISCON_IND));
	CHECK_EQ(((struct T_discon_ind *)cb.b)->SEQ_number, seq);
	CHECK_EQ(((struct T_discon_ind *)cb.b)->DISCON_reason, ECONNRESET);
	CHECK_EQ(tpi_state(l), TS_IDLE);
	/* a FIN alone: still there to accept, its data and end with it */
	c2 = sock_call(port);
	REQUIRE(c2 >= 0);
	CHECK(expect(l, T_CONN_IND));
	seq = ((struct T_conn_ind *)cb.b)->SEQ_number;
	CHECK_RET((int)write(c2, "hi", 2), 2);
	shutdown(c2, SHUT_WR);
	pause_ms(3 * 100 + 50);
	tpi_conn_res(l, tpi_token(a), seq);
	CHECK(expect(l, T_OK_ACK));
	CHECK_EQ(get(a, 3000), T_DATA_IND);
	CHECK(expect(a, T_ORDREL_IND));
	(void)b;
	close(c2);
	close(a);
	close(l);
}

/* An acceptor bound to 127.0.0.1 takes a call to an IPv6 listener;
 * after it ends the acceptor calls an IPv4 address again. */
static void test_acceptor_family(void)
{
	struct {
		struct T_bind_req r;
		struct sockaddr_in6 a;
	} m;
	struct sockaddr_in6 a6;
	unsigned port;
	int l = tpi_open(), a = tpi_open(), c, s, p;

	c = socket(AF_INET6, SOCK_STREAM, 0);
	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_addr = in6addr_loopback;
	if (c < 0 || bind(c, (struct sockaddr *)&a6, sizeof(a6)) != 0) {
		if (c >= 0)
			close(c);
		close(a);
		close(l);
		return;		/* no ::1 here */
	}
	memset(&m, 0, sizeof(m));
	m.r.PRIM_type = T_BIND_REQ;
	m.r.ADDR_length = sizeof(m.a);
	m.r.ADDR_offset = sizeof(m.r);
	m.r.CONIND_number = 1;
	m.a.sin6_family = AF_INET6;
	m.a.sin6_addr = in6addr_loopback;
	REQUIRE(tput(l, &m, sizeof(m), NULL, -1, 0) == 0);
	REQUIRE(get(l, 3000) == T_BIND_ACK);
	memcpy(&a6, cb.b + ((struct T_bind_ack *)cb.b)->ADDR_offset,
	       sizeof(a6));
	tpi_bind(a, 0, 0);
	REQUIRE(connect(c, (struct sockaddr *)&a6, sizeof(a6)) == 0);
	CHECK(expect(l, T_CONN_IND));
	tpi_conn_res(l, tpi_token(a), ((struct T_conn_ind *)cb.b)->SEQ_number);
	CHECK(expect(l, T_OK_ACK));
	sock_reset(c);
	CHECK(expect(a, T_DISCON_IND));
	s = sock_listener(&port);
	p = tpi_connected(a, s, port);
	close(p);
	close(s);
	close(a);
	close(l);
}

/* T_DISCON_REQ when no descriptor is left for the endpoint's next
 * socket: the connection is reset all the same. */
static void test_discon_without_fds(void)
{
	struct T_discon_req r = { T_DISCON_REQ, -1 };
	struct rlimit old, lim;
	unsigned port;
	int s = sock_listener(&port), x = tpi_open(), p, nf = 0, ack, n;
	static int fill[4096];
	struct pollfd pf;
	char b[8];

	tpi_bind(x, 0, 0);
	p = tpi_connected(x, s, port);
	REQUIRE(getrlimit(RLIMIT_NOFILE, &old) == 0);
	lim = old;
	lim.rlim_cur = 512;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &lim) == 0);
	while (nf < 4096 && (fill[nf] = dup(0)) >= 0)
		nf++;
	CHECK_EQ(errno, EMFILE);
	REQUIRE(tput(x, &r, sizeof(r), NULL, -1, 0) == 0);
	ack = get(x, 3000);
	while (nf > 0)
		close(fill[--nf]);
	REQUIRE(setrlimit(RLIMIT_NOFILE, &old) == 0);
	CHECK_EQ(ack, T_OK_ACK);
	CHECK_EQ(tpi_state(x), TS_IDLE);
	pf.fd = p;
	pf.events = POLLIN;
	pf.revents = 0;
	n = poll(&pf, 1, 2000);
	CHECK_EQ(n, 1);
	CHECK_ERR(read(p, b, sizeof(b)), ECONNRESET);
	/* and the endpoint calls out again */
	close(p);
	p = tpi_connected(x, s, port);
	close(p);
	close(x);
	close(s);
}

int main(void)
{
	static const char *const devs[] = { "/dev/inet/tcp", "/dev/tcp" };

	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < 2; i++) {
		dev = devs[i];
		fprintf(stderr, "-- %s\n", dev);
		test_no_peer_when_idle();
		test_relisten_same_port();
		test_rebind_time_wait();
		test_release_then_reuse();
		test_data_across_relisten();
		test_unbind_is_idle();
		test_expedited_flow();
		test_reset_after_fin();
		test_discon_without_fds();
		test_withdrawn_indication();
		test_acceptor_family();
	}
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
