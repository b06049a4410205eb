/*
 * test_xti_loop_ep -- endpoints as descriptors, and the asynchronous
 * mode, over the loopback providers through libxti.
 *
 * t_bind with a NULL request (and a ret) binds to an address of the
 * provider's choosing and reports it: qlen 0, the same address as
 * t_getprotaddr's, different for two endpoints, and usable (a datagram
 * sent to it on /dev/ticlts arrives).  close() on endpoints: on one end
 * of a connection (the peer sees T_DISCONNECT, ECONNRESET), on a
 * listener with a caller pending (the caller sees T_DISCONNECT,
 * ECONNREFUSED); the closed number is TBADF for XTI, and a t_open that
 * gets the same number back is a fresh endpoint.  A dup() of a connected
 * endpoint is TBADF until t_sync, which finds T_DATAXFER; data goes
 * through the dup, also after t_close of the original; dup2() of another
 * endpoint over a number (descriptor reuse as across exec) is TBADF until
 * t_sync, which gives that endpoint's state.  O_NONBLOCK: t_rcv TNODATA
 * on an empty connection, t_snd TFLOW once the peer stops reading
 * (after a partial count or none), T_GODATA from t_look when the peer
 * has read, every byte delivered in order.
 */
#include "ferry.h"

#define CLTS	"/dev/ticlts"
#define COTS	"/dev/ticots"
#define ORD	"/dev/ticotsord"

/* A connected pair on dev: *c the caller, *s the accepting endpoint
 * (another endpoint than the listener *l, left bound with qlen 1). */
static void pair(const char *dev, const char *name, int *l, int *c, int *s)
{
	struct t_call sc, lc;

	*l = t_open(dev, O_RDWR, NULL);
	*c = t_open(dev, O_RDWR, NULL);
	*s = t_open(dev, O_RDWR, NULL);
	REQUIRE(*l >= 0 && *c >= 0 && *s >= 0);
	REQUIRE(xt_bind(*l, name, 1, NULL, NULL) == 1);
	REQUIRE(xt_bind(*c, NULL, 0, NULL, NULL) == 0);
	REQUIRE(set_nonblock(*c, true) == 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = (char *)name;
	sc.addr.len = (unsigned)strlen(name);
	CHECK_TERR(t_connect(*c, &sc, NULL), TNODATA);
	memset(&lc, 0, sizeof(lc));
	CHECK_RET(t_listen(*l, &lc), 0);
	lc.addr.len = 0;
	lc.udata.len = 0;
	CHECK_RET(t_accept(*l, *s, &lc), 0);
	CHECK_EQ(xt_look_wait(*c), T_CONNECT);
	CHECK_RET(t_rcvconnect(*c, NULL), 0);
	REQUIRE(set_nonblock(*c, false) == 0);
	CHECK_STATE(*c, T_DATAXFER);
	CHECK_STATE(*s, T_DATAXFER);
	CHECK_STATE(*l, T_IDLE);
}

static void test_bind_null(void)
{
	int a = t_open(COTS, O_RDWR, NULL), b = t_open(COTS, O_RDWR, NULL);
	char ab[64], bb[64], pb[64];
	struct t_bind ret, bound;

	REQUIRE(a >= 0 && b >= 0);
	memset(&ret, 0, sizeof(ret));
	ret.addr.buf = ab;
	ret.addr.maxlen = sizeof(ab);
	ret.qlen = 99;
	CHECK_RET(t_bind(a, NULL, &ret), 0);
	CHECK_STATE(a, T_IDLE);
	CHECK_EQ(ret.addr.len, 8);		/* eight hex digits */
	CHECK_EQ(ret.qlen, 0);
	memset(&bound, 0, sizeof(bound));
	bound.addr.buf = pb;
	bound.addr.maxlen = sizeof(pb);
	CHECK_RET(t_getprotaddr(a, &bound, NULL), 0);
	CHECK_EQ(bound.addr.len, ret.addr.len);
	CHECK_MEM(pb, ab, ret.addr.len);
	ret.addr.buf = bb;
	CHECK_RET(t_bind(b, NULL, &ret), 0);
	CHECK_EQ(ret.addr.len, 8);
	CHECK(memcmp(ab, bb, 8) != 0);
	/* with qlen 0 nobody can call it */
	CHECK_TERR(t_listen(a, &(struct t_call){ 0 }), TBADQLEN);
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);

	/* on ticlts the address reported is where datagrams arrive */
	int r = t_open(CLTS, O_RDWR, NULL), s = t_open(CLTS, O_RDWR, NULL);
	struct t_unitdata ud;
	char db[32];
	int flags = -1;

	REQUIRE(r >= 0 && s >= 0);
	memset(&ret, 0, sizeof(ret));
	ret.addr.buf = ab;
	ret.addr.maxlen = sizeof(ab);
	CHECK_RET(t_bind(r, NULL, &ret), 0);
	CHECK(ret.addr.len > 0);
	CHECK_RET(t_bind(s, NULL, NULL), 0);
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = ab;
	ud.addr.len = ret.addr.len;
	ud.udata.buf = "to-any";
	ud.udata.len = 6;
	CHECK_RET(t_sndudata(s, &ud), 0);
	memset(&ud, 0, sizeof(ud));
	ud.udata.buf = db;
	ud.udata.maxlen = sizeof(db);
	CHECK_RET(t_rcvudata(r, &ud, &flags), 0);
	CHECK_EQ(ud.udata.len, 6);
	CHECK_MEM(db, "to-any", 6);
	CHECK_EQ(flags, 0);
	CHECK_RET(t_close(r), 0);
	CHECK_RET(t_close(s), 0);
}

static void test_close(void)
{
	struct t_discon d;
	int l, c, s;

	/* close() on one end of a connection */
	pair(ORD, "ep-close", &l, &c, &s);
	CHECK_RET(close(s), 0);
	CHECK_TERR(t_getstate(s), TBADF);
	CHECK_TERR(t_snd(s, "x", 1, 0), TBADF);
	CHECK_EQ(xt_look_wait(c), T_DISCONNECT);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(c, &d), 0);
	CHECK_EQ(d.reason, ECONNRESET);
	CHECK_STATE(c, T_IDLE);
	/* the number again, from t_open: a fresh endpoint */
	int n = t_open(ORD, O_RDWR, NULL);
	CHECK_EQ(n, s);
	CHECK_STATE(n, T_UNBND);
	CHECK_TERR(t_snd(n, "x", 1, 0), TOUTSTATE);
	CHECK_RET(t_close(n), 0);

	/* close() on a listener with a caller pending */
	struct t_call sc;
	CHECK_RET(set_nonblock(c, true), 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = "ep-close";
	sc.addr.len = 8;
	CHECK_TERR(t_connect(c, &sc, NULL), TNODATA);
	CHECK_EQ(xt_look_wait(l), T_LISTEN);
	CHECK_RET(close(l), 0);
	CHECK_TERR(t_look(l), TBADF);
	CHECK_EQ(xt_look_wait(c), T_DISCONNECT);
	CHECK_TERR(t_rcvconnect(c, NULL), TLOOK);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(c, &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	CHECK_STATE(c, T_IDLE);
	CHECK_RET(close(c), 0);
	CHECK_TERR(t_close(c), TBADF);
}

static void test_dup(void)
{
	char buf[32];
	int l, c, s, d, flags;

	pair(COTS, "ep-dup", &l, &c, &s);
	d = dup(s);
	REQUIRE(d >= 0);
	CHECK_TERR(t_getstate(d), TBADF);	/* not an endpoint yet */
	CHECK_TERR(t_snd(d, "x", 1, 0), TBADF);
	CHECK_RET(t_sync(d), T_DATAXFER);
	CHECK_STATE(d, T_DATAXFER);
	CHECK_RET(t_snd(d, "via-dup", 7, 0), 7);
	CHECK_RET(t_rcv(c, buf, sizeof(buf), &flags), 7);
	CHECK_MEM(buf, "via-dup", 7);
	/* the original closed: the stream stays, through the dup */
	CHECK_RET(t_close(s), 0);
	CHECK_TERR(t_getstate(s), TBADF);
	CHECK_RET(t_snd(c, "back", 4, 0), 4);
	CHECK_RET(t_rcv(d, buf, sizeof(buf), &flags), 4);
	CHECK_MEM(buf, "back", 4);
	CHECK_EQ(flags, 0);

	/* dup2 of another endpoint over d: d is that stream now, not an
	 * endpoint until t_sync */
	int u = t_open(COTS, O_RDWR, NULL);
	REQUIRE(u >= 0);
	CHECK_RET(xt_bind(u, NULL, 0, NULL, NULL), 0);
	CHECK_RET(dup2(u, d), d);		/* closes the connection */
	CHECK_TERR(t_getstate(d), TBADF);
	CHECK_RET(t_sync(d), T_IDLE);
	CHECK_STATE(d, T_IDLE);
	CHECK_EQ(xt_look_wait(c), T_DISCONNECT);
	CHECK_RET(t_rcvdis(c, NULL), 0);
	CHECK_RET(t_unbind(d), 0);		/* u's stream */
	CHECK_RET(t_sync(u), T_UNBND);
	CHECK_RET(t_close(d), 0);
	CHECK_RET(t_close(u), 0);
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(l), 0);
}

static void test_nonblock(void)
{
	static char chunk[4096], got[1 << 20];
	size_t sent = 0, have = 0, off = 0;
	int l, c, s, flags, r = 0;

	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)(i * 7);
	pair(COTS, "ep-nonblock", &l, &c, &s);
	CHECK_RET(set_nonblock(c, true), 0);
	CHECK_RET(set_nonblock(s, true), 0);
	CHECK_TERR(t_rcv(s, got, sizeof(got), &flags), TNODATA);
	CHECK_RET(t_look(c), 0);
	/* fill until flow control stops the sender (a partial count: the
	 * rest of the chunk next) */
	while (sent < sizeof(got) - sizeof(chunk)) {
		t_errno = 0;
		r = t_snd(c, chunk + off, (unsigned)(sizeof(chunk) - off), 0);
		if (r < 0)
			break;
		sent += (size_t)r;
		off = (off + (size_t)r) % sizeof(chunk);
	}
	CHECK_EQ(r, -1);
	CHECK_EQ(t_errno, TFLOW);
	CHECK(sent > 0);
	CHECK_TERR(t_snd(c, chunk + off, 1, 0), TFLOW);
	/* the receiver drains it all; T_GODATA at the sender */
	long end = now_ms() + 3000;
	while (have < sent && now_ms() < end) {
		int n = t_rcv(s, got + have, sizeof(got) - have, &flags);
		if (n > 0)
			have += (size_t)n;
		else if (n < 0 && t_errno == TNODATA)
			pause_ms(1);
		else
			break;
	}
	CHECK_EQ(have, sent);
	bool same = true;
	for (size_t i = 0; i < have; i++)
		if (got[i] != chunk[i % sizeof(chunk)]) {
			same = false;
			break;
		}
	CHECK(same);
	CHECK_EQ(xt_look_wait(c), T_GODATA);
	CHECK_RET(t_look(c), 0);		/* reported once */
	CHECK_RET(t_snd(c, chunk, 10, 0), 10);
	CHECK_RET(set_nonblock(s, false), 0);
	CHECK_RET(t_rcv(s, got, sizeof(got), &flags), 10);
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(s), 0);
	CHECK_RET(t_close(l), 0);
}

int main(void)
{
	test_bind_null();
	test_close();
	test_dup();
	test_nonblock();
	T_DONE();
}
