/*
 * test_inet_udp_tpi -- the UDP providers through TPI directly (putmsg and
 * getmsg on /dev/udp and /dev/inet/udp, no timod): every primitive in
 * the states where it is allowed and where it is not, the exact answers:
 *
 *   TS_UNBND	T_INFO_REQ (the numbers), T_UNBIND_REQ and T_CONN_REQ
 *		(TOUTSTATE), a T_BIND_REQ too short (TSYSERR EINVAL), with
 *		a bad address (TBADADDR), T_CONN_RES (TNOTSUPPORT)
 *   TS_IDLE	T_BIND_REQ again (TOUTSTATE), T_ADDR_REQ, T_CAPABILITY_REQ,
 *		T_OPTMGMT_REQ, T_UNITDATA_REQ both ways, T_CONN_REQ (bad
 *		address, connect data: TBADADDR, TBADDATA), T_DISCON_REQ
 *		(TOUTSTATE)
 *   connected	(TS_DATA_XFER, as Solaris UDP allows) T_CONN_REQ ->
 *		T_OK_ACK + T_CONN_CON, T_ADDR_REQ with the peer, T_DATA_REQ,
 *		T_UNITDATA_REQ without a destination, write(); datagrams from
 *		others are not received; ICMP port unreachable from the peer
 *		as T_UDERROR_IND; T_DISCON_REQ back to TS_IDLE on the same
 *		address
 *   and	T_DATA_REQ when not connected, an unknown primitive:
 *		M_ERROR EPROTO (the stream's read and write fail); a
 *		T_UNITDATA_REQ sent as M_PCPROTO to a full local receiver
 *		waits its turn without the service procedure spinning
 */
#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <xti_inet.h>

static struct sockaddr_in lo(unsigned port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s.sin_port = htons(port);
	return s;
}

static t_scalar_t prim_of(const struct fmsg *m)
{
	t_scalar_t p = -1;

	if (m->clen >= 4)
		memcpy(&p, m->ctl, sizeof(p));
	return p;
}

/* Send m on fd and read the answer into a. */
static void ask(int fd, const struct fmsg *m, struct fmsg *a)
{
	REQUIRE(fm_write(fd, m) == 0);
	REQUIRE(fm_read(fd, a, 5000) == 0);
}

static void expect_error(int fd, const struct fmsg *m, int prim, int tli,
			 int ux, int line)
{
	struct fmsg a, want;

	ask(fd, m, &a);
	fm_error_ack(&want, prim, tli, ux);
	if (!fm_equal(&a, &want)) {
		fprintf(stderr, "line %d: ", line);
		fm_dump("got", &a);
		fm_dump("want", &want);
	}
	CHECK(fm_equal(&a, &want));
}
#define EXPECT_ERROR(fd, m, p, t, u) expect_error(fd, m, p, t, u, __LINE__)

static void expect_ok(int fd, const struct fmsg *m, int prim)
{
	struct fmsg a, want;

	ask(fd, m, &a);
	fm_ok_ack(&want, prim);
	CHECK(fm_equal(&a, &want));
}

static int state_of(int fd)
{
	struct fmsg m, a;
	struct T_info_ack ia;

	ask(fd, fm_info_req(&m), &a);
	REQUIRE(a.clen >= (int)sizeof(ia));
	memcpy(&ia, a.ctl, sizeof(ia));
	CHECK_EQ(ia.PRIM_type, T_INFO_ACK);
	return (int)ia.CURRENT_state;
}

/* Bind fd to 127.0.0.1 port 0: the address bound. */
static struct sockaddr_in bind_lo(int fd)
{
	struct sockaddr_in s = lo(0), got;
	struct fmsg m, a;
	struct T_bind_ack ba;

	ask(fd, fm_bind_req(&m, &s, sizeof(s), 0), &a);
	REQUIRE(prim_of(&a) == T_BIND_ACK);
	memcpy(&ba, a.ctl, sizeof(ba));
	CHECK_EQ(ba.ADDR_length, (t_scalar_t)sizeof(got));
	CHECK_EQ(ba.CONIND_number, 0);
	memcpy(&got, a.ctl + ba.ADDR_offset, sizeof(got));
	CHECK(got.sin_port != 0);
	CHECK_EQ(got.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	return got;
}

/* The next T_UNITDATA_IND at fd: its source port and data. */
static int rcv_ind(int fd, unsigned *port, char *data, int max)
{
	struct fmsg a;
	struct T_unitdata_ind u;
	struct sockaddr_in src;

	if (fm_read(fd, &a, 3000) != 0)
		return -1;
	if (prim_of(&a) != T_UNITDATA_IND)
		return -2;
	memcpy(&u, a.ctl, sizeof(u));
	CHECK_EQ(u.SRC_length, (t_scalar_t)sizeof(src));
	memcpy(&src, a.ctl + u.SRC_offset, sizeof(src));
	*port = ntohs(src.sin_port);
	if (a.dlen > max)
		return -3;
	if (a.dlen > 0)
		memcpy(data, a.dat, (size_t)a.dlen);
	return a.dlen < 0 ? 0 : a.dlen;
}

static void test_dev(const char *dev)
{
	struct fmsg m, a, want;
	struct sockaddr_in aa, ba, ca, bad;
	char buf[64];
	unsigned port;
	int A, B, C, n;

	printf("-- %s\n", dev);
	fflush(stdout);
	A = open(dev, O_RDWR);
	B = open(dev, O_RDWR);
	C = open(dev, O_RDWR);
	REQUIRE(A >= 0 && B >= 0 && C >= 0);

	/* TS_UNBND */
	{
		struct T_info_ack ia;

		ask(A, fm_info_req(&m), &a);
		memcpy(&ia, a.ctl, sizeof(ia));
		CHECK_EQ(a.hipri, 1);
		CHECK_EQ(ia.TSDU_size, 65507);
		CHECK_EQ(ia.ETSDU_size, T_INVALID);
		CHECK_EQ(ia.CDATA_size, T_INVALID);
		CHECK_EQ(ia.ADDR_size, (t_scalar_t)sizeof(struct sockaddr_in6));
		CHECK_EQ(ia.SERV_type, T_CLTS);
		CHECK_EQ(ia.CURRENT_state, TS_UNBND);
		CHECK(ia.OPT_size > 0);
	}
	EXPECT_ERROR(A, fm_unbind_req(&m), T_UNBIND_REQ, TOUTSTATE, 0);
	bad = lo(9);
	EXPECT_ERROR(A, fm_conn_req(&m, &bad, sizeof(bad), NULL, 0),
		     T_CONN_REQ, TOUTSTATE, 0);
	fm_clear(&m);
	{
		t_scalar_t p = T_BIND_REQ;

		fm_ctl(&m, &p, sizeof(p));	/* too short */
	}
	EXPECT_ERROR(A, &m, T_BIND_REQ, TSYSERR, EINVAL);
	EXPECT_ERROR(A, fm_bind_req(&m, &bad, 12, 0), T_BIND_REQ, TBADADDR, 0);
	EXPECT_ERROR(A, fm_conn_res(&m, 0, NULL, 0, 1), T_CONN_RES,
		     TNOTSUPPORT, 0);
	CHECK_EQ(state_of(A), TS_UNBND);

	/* TS_IDLE */
	aa = bind_lo(A);
	ba = bind_lo(B);
	ca = bind_lo(C);
	CHECK_EQ(state_of(A), TS_IDLE);
	EXPECT_ERROR(A, fm_bind_req(&m, NULL, 0, 0), T_BIND_REQ, TOUTSTATE, 0);
	EXPECT_ERROR(A, fm_discon_req(&m, -1), T_DISCON_REQ, TOUTSTATE, 0);
	ask(A, fm_addr_req(&m), &a);
	CHECK(fm_equal(&a, fm_addr_ack(&want, &aa, sizeof(aa), NULL, 0)));
	ask(A, fm_cap_req(&m, TC1_INFO | TC1_ACCEPTOR_ID), &a);
	{
		struct T_capability_ack ca2;

		memcpy(&ca2, a.ctl, sizeof(ca2));
		CHECK_EQ(ca2.PRIM_type, T_CAPABILITY_ACK);
		CHECK_EQ(ca2.CAP_bits1, TC1_INFO);	/* no acceptors */
		CHECK_EQ(ca2.INFO_ack.CURRENT_state, TS_IDLE);
	}
	{
		struct {
			struct t_opthdr h;
			t_uscalar_t v;
		} o = { { sizeof(o), INET_IP, T_IP_TTL, 0 }, 33 }, r;

		ask(A, fm_optmgmt_req(&m, &o, sizeof(o), T_NEGOTIATE), &a);
		r = o;
		r.h.status = T_SUCCESS;
		CHECK(fm_equal(&a, fm_optmgmt_ack(&want, &r, sizeof(r),
						   T_SUCCESS)));
	}
	REQUIRE(fm_write(A, fm_data(fm_unitdata_req(&m, &ba, sizeof(ba),
						    NULL, 0), "one", 3)) == 0);
	CHECK_EQ(rcv_ind(B, &port, buf, sizeof(buf)), 3);
	CHECK_EQ(port, ntohs(aa.sin_port));
	EXPECT_ERROR(A, fm_conn_req(&m, &bad, 10, NULL, 0), T_CONN_REQ,
		     TBADADDR, 0);
	EXPECT_ERROR(A, fm_data(fm_conn_req(&m, &ba, sizeof(ba), NULL, 0),
				"cd", 2), T_CONN_REQ, TBADDATA, 0);

	/* connected to B */
	expect_ok(A, fm_conn_req(&m, &ba, sizeof(ba), NULL, 0), T_CONN_REQ);
	REQUIRE(fm_read(A, &a, 3000) == 0);
	CHECK(fm_equal(&a, fm_conn_con(&want, &ba, sizeof(ba), NULL, 0)));
	CHECK_EQ(state_of(A), TS_DATA_XFER);
	ask(A, fm_addr_req(&m), &a);
	CHECK(fm_equal(&a, fm_addr_ack(&want, &aa, sizeof(aa), &ba,
				       sizeof(ba))));
	REQUIRE(fm_write(A, fm_data(fm_more(&m, T_DATA_REQ, 0, 0), "two",
				    3)) == 0);
	REQUIRE(fm_write(A, fm_data(fm_unitdata_req(&m, NULL, 0, NULL, 0),
				    "three", 5)) == 0);
	CHECK_RET((int)write(A, "four", 4), 4);
	n = rcv_ind(B, &port, buf, sizeof(buf));
	CHECK(n == 3 && memcmp(buf, "two", 3) == 0);
	n = rcv_ind(B, &port, buf, sizeof(buf));
	CHECK(n == 5 && memcmp(buf, "three", 5) == 0);
	n = rcv_ind(B, &port, buf, sizeof(buf));
	CHECK(n == 4 && memcmp(buf, "four", 4) == 0);
	CHECK_EQ(port, ntohs(aa.sin_port));
	/* T_OPTDATA_REQ: its options go with the datagram, checked as a
	 * T_UNITDATA_REQ's are (malformed: T_UDERROR_IND, not sent) */
	{
		struct {
			struct t_opthdr h;
			t_uscalar_t v;
		} o = { { sizeof(o), INET_IP, T_IP_TTL, 0 }, 7 };

		FM_STRUCT(&m, T_optdata_req, 0, T_OPTDATA_REQ, 0, 0, 0);
		FM_REG(&m, T_optdata_req, OPT_length, OPT_offset, &o,
		       sizeof(o));
		REQUIRE(fm_write(A, fm_data(&m, "five", 4)) == 0);
		n = rcv_ind(B, &port, buf, sizeof(buf));
		CHECK(n == 4 && memcmp(buf, "five", 4) == 0);
		o.h.len = 64;		/* longer than the buffer */
		FM_STRUCT(&m, T_optdata_req, 0, T_OPTDATA_REQ, 0, 0, 0);
		FM_REG(&m, T_optdata_req, OPT_length, OPT_offset, &o,
		       sizeof(o));
		REQUIRE(fm_write(A, fm_data(&m, "six", 3)) == 0);
		REQUIRE(fm_read(A, &a, 3000) == 0);
		CHECK(fm_equal(&a, fm_uderror_ind(&want, NULL, 0, NULL, 0,
						  ENOPROTOOPT)));
		CHECK_EQ(fm_read(B, &a, 200), -1);	/* not sent */
	}
	/* C's datagram does not reach a connected A; B's does */
	REQUIRE(fm_write(C, fm_data(fm_unitdata_req(&m, &aa, sizeof(aa),
						    NULL, 0), "nope", 4)) == 0);
	REQUIRE(fm_write(B, fm_data(fm_unitdata_req(&m, &aa, sizeof(aa),
						    NULL, 0), "back", 4)) == 0);
	n = rcv_ind(A, &port, buf, sizeof(buf));
	CHECK(n == 4 && memcmp(buf, "back", 4) == 0);
	CHECK_EQ(port, ntohs(ba.sin_port));
	CHECK_EQ(fm_read(A, &a, 200), -1);	/* nothing from C */
	/* the peer goes away: port unreachable */
	CHECK_RET(close(B), 0);
	REQUIRE(fm_write(A, fm_data(fm_more(&m, T_DATA_REQ, 0, 0), "x",
				    1)) == 0);
	REQUIRE(fm_read(A, &a, 3000) == 0);
	CHECK(fm_equal(&a, fm_uderror_ind(&want, &ba, sizeof(ba), NULL, 0,
					  ECONNREFUSED)));
	/* disconnected: TS_IDLE, the same address */
	expect_ok(A, fm_discon_req(&m, -1), T_DISCON_REQ);
	CHECK_EQ(state_of(A), TS_IDLE);
	ask(A, fm_addr_req(&m), &a);
	CHECK(fm_equal(&a, fm_addr_ack(&want, &aa, sizeof(aa), NULL, 0)));
	REQUIRE(fm_write(C, fm_data(fm_unitdata_req(&m, &aa, sizeof(aa),
						    NULL, 0), "again", 5)) == 0);
	n = rcv_ind(A, &port, buf, sizeof(buf));
	CHECK(n == 5 && memcmp(buf, "again", 5) == 0);
	CHECK_EQ(port, ntohs(ca.sin_port));

	/* fatal: T_DATA_REQ while not connected */
	REQUIRE(fm_write(A, fm_data(fm_more(&m, T_DATA_REQ, 0, 0), "y",
				    1)) == 0);
	pause_ms(50);
	CHECK_RET((int)read(A, buf, sizeof(buf)) < 0 ? errno : 0, EPROTO);
	CHECK_RET(close(A), 0);
	/* fatal: an unknown primitive */
	{
		t_scalar_t p = 99;

		fm_clear(&m);
		fm_ctl(&m, &p, sizeof(p));
		REQUIRE(fm_write(C, &m) == 0);
		pause_ms(50);
		CHECK_EQ((int)write(C, "z", 1) < 0 ? errno : 0, EPROTO);
	}
	CHECK_RET(close(C), 0);
	(void)ca;
}

/* /dev/udp (a local receiver's room is known: datagrams wait for it on
 * the sender's write queue): a T_UNITDATA_REQ sent as M_PCPROTO to a
 * full receiver waits as an ordinary message, in its turn, and the
 * write service procedure does not run over and over while it waits (a
 * high priority message at the tail broke the queue's order, and one put
 * back re-enables its queue at once). */
static void test_hipri_held(void)
{
	int A = open("/dev/udp", O_RDWR), B = open("/dev/udp", O_RDWR);
	struct sockaddr_in bb;
	struct strstats s0, s1;
	struct fmsg m;
	unsigned port;
	char buf[8];
	int n = 0, got = 0, bad = 0;

	REQUIRE(A >= 0 && B >= 0);
	(void)bind_lo(A);
	bb = bind_lo(B);
	REQUIRE(fcntl(A, F_SETFL, O_NONBLOCK) == 0);
	for (; n < 200000; n++)
		if (fm_write(A, fm_data(fm_unitdata_req(&m, &bb, sizeof(bb),
							NULL, 0), &n,
					sizeof(n))) != 0)
			break;
	CHECK_EQ(errno, EAGAIN);
	fm_data(fm_unitdata_req(&m, &bb, sizeof(bb), NULL, 0), &n, sizeof(n));
	m.hipri = 1;
	CHECK_RET(fm_write(A, &m), 0);
	CHECK_RET(streams_stats(&s0), 0);
	pause_ms(100);
	CHECK_RET(streams_stats(&s1), 0);
	CHECK(s1.svc_runs - s0.svc_runs < 1000);
	/* every datagram, in order, the last one last */
	for (int k = 0; k <= n; k++) {
		int v = -1;
		if (rcv_ind(B, &port, buf, sizeof(buf)) != (int)sizeof(v))
			break;
		memcpy(&v, buf, sizeof(v));
		bad += v != k;
		got++;
	}
	CHECK_EQ(got, n + 1);
	CHECK_EQ(bad, 0);
	CHECK_RET(close(A), 0);
	CHECK_RET(close(B), 0);
}

/* A sender that leaves its errors unread: T_UDERROR_INDs for refused
 * datagrams stop queueing at the read side's high water mark (each
 * later one is lost, as UDP loses datagrams past its buffer); they were
 * queued without bound. */
static void test_uderror_bounded(const char *dev)
{
	int A = open(dev, O_RDWR), n = 0;
	struct sockaddr_in bad;
	struct fmsg m, a;

	REQUIRE(A >= 0);
	(void)bind_lo(A);
	bad = lo(9);
	bad.sin_family = AF_UNIX;		/* refused: EINVAL */
	for (int k = 0; k < 30000; k++)
		REQUIRE(fm_write(A, fm_data(fm_unitdata_req(&m, &bad,
					sizeof(bad), NULL, 0), "x", 1)) == 0);
	while (fm_read(A, &a, 100) == 0) {
		CHECK_EQ(prim_of(&a), T_UDERROR_IND);
		n++;
	}
	CHECK(n > 100);
	CHECK(n < 10000);		/* (about 64 KiB of them) */
	printf("%s: %d of 30000 errors kept for a reader that did not read\n",
	       dev, n);
	CHECK_RET(close(A), 0);
}

int main(void)
{
	test_dev("/dev/inet/udp");
	test_dev("/dev/udp");
	test_hipri_held();
	test_uderror_bounded("/dev/udp");
	test_uderror_bounded("/dev/inet/udp");
	T_DONE();
}
