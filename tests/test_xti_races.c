/*
 * test_xti_races -- libxti calls on one endpoint from two threads, at
 * the instants where one thread's read meets what another thread waits
 * for (a review found them, helper-27).  This program is linked with
 * -Wl,--wrap=streams_getpmsg_direct: the wrapper below only delays a
 * thread's read, to hold the window open, and changes nothing else.
 *  - t_rcv reading the rest of a message (a T_DISCON_IND with data)
 *    while another thread's t_snddis waits for its ack: the ack goes to
 *    its waiter (t_snddis returns), t_rcv says TLOOK;
 *  - a T_DISCON_REQ crossing the peer's disconnect: TLOOK, not
 *    TOUTSTATE;
 *  - t_rcvuderr whose error another thread's t_rcvudata took: the
 *    datagram it reads instead is kept for t_rcvudata.
 * And t_sync while a disconnect, release or data is unread keeps the
 * library's state (it used to guess T_DATAXFER).
 */
#include "sth.h"

#include <xti.h>

#include "ferry.h"

int __real_streams_getpmsg_direct(int, struct strbuf *, struct strbuf *,
				  int *, int *);

static __thread int delay_ms;	/* this thread's reads wait this long */
static __thread bool after_more; /* (only after a MOREDATA read) */

int __wrap_streams_getpmsg_direct(int fd, struct strbuf *c,
				  struct strbuf *d, int *band, int *flags);
int __wrap_streams_getpmsg_direct(int fd, struct strbuf *c,
				  struct strbuf *d, int *band, int *flags)
{
	int rv;

	if (delay_ms > 0 && after_more)
		pause_ms(delay_ms);
	rv = __real_streams_getpmsg_direct(fd, c, d, band, flags);
	after_more = rv > 0 && (rv & MOREDATA);
	return rv;
}

/* A connection over dev: *cli the caller, *acc the accepting endpoint. */
static void conn_pair(const char *dev, const char *name, int *cli, int *acc)
{
	struct t_call sc, lc;
	char ab[128], ob[256], ub[1024];
	int lis = t_open(dev, O_RDWR, NULL);

	*cli = t_open(dev, O_RDWR, NULL);
	*acc = t_open(dev, O_RDWR, NULL);
	REQUIRE(lis >= 0 && *cli >= 0 && *acc >= 0);
	REQUIRE(xt_bind(lis, name, 1, NULL, NULL) >= 0);
	REQUIRE(xt_bind(*cli, NULL, 0, NULL, NULL) >= 0 &&
		xt_bind(*acc, NULL, 0, NULL, NULL) >= 0);
	REQUIRE(set_nonblock(*cli, true) == 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = (char *)name;
	sc.addr.len = (unsigned)strlen(name);
	REQUIRE(t_connect(*cli, &sc, NULL) == -1 && t_errno == TNODATA);
	memset(&lc, 0, sizeof(lc));
	lc.addr.buf = ab;
	lc.addr.maxlen = sizeof(ab);
	lc.opt.buf = ob;
	lc.opt.maxlen = sizeof(ob);
	lc.udata.buf = ub;
	lc.udata.maxlen = sizeof(ub);
	REQUIRE(t_listen(lis, &lc) == 0);
	REQUIRE(t_accept(lis, *acc, &lc) == 0);
	REQUIRE(set_nonblock(*cli, false) == 0);
	REQUIRE(t_rcvconnect(*cli, NULL) == 0);
	t_close(lis);
}

static int acc;
static int rcv_r, rcv_te, dis_r, dis_te, dis_done;	/* atomic */

static void *reader(void *arg)
{
	char buf[10];
	int fl, r;

	(void)arg;
	delay_ms = 400;		/* the ack comes while we wait */
	r = t_rcv(acc, buf, sizeof(buf), &fl);
	__atomic_store_n(&rcv_te, t_errno, __ATOMIC_RELAXED);
	__atomic_store_n(&rcv_r, r, __ATOMIC_RELEASE);
	return NULL;
}

static void *discon(void *arg)
{
	int r;

	(void)arg;
	r = t_snddis(acc, NULL);
	__atomic_store_n(&dis_te, t_errno, __ATOMIC_RELAXED);
	__atomic_store_n(&dis_r, r, __ATOMIC_RELAXED);
	__atomic_store_n(&dis_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_ack_behind_rest(void)
{
	static char big[1000];
	struct t_call dc;
	pthread_t a, b;
	int cli;

	conn_pair("/dev/ticots", "xtirace", &cli, &acc);
	memset(&dc, 0, sizeof(dc));
	dc.udata.buf = big;
	dc.udata.len = sizeof(big);
	CHECK_RET(t_snddis(cli, &dc), 0);
	pause_ms(100);
	CHECK_RET(t_look(acc), T_DISCONNECT);
	REQUIRE(pthread_create(&a, NULL, reader, NULL) == 0);
	pause_ms(150);		/* the reader waits before its second read */
	REQUIRE(pthread_create(&b, NULL, discon, NULL) == 0);
	pthread_join(a, NULL);
	CHECK_EQ(__atomic_load_n(&rcv_r, __ATOMIC_ACQUIRE), -1);
	CHECK_EQ(__atomic_load_n(&rcv_te, __ATOMIC_RELAXED), TLOOK);
	for (int i = 0; i < 300 && !__atomic_load_n(&dis_done,
						    __ATOMIC_ACQUIRE); i++)
		pause_ms(10);
	CHECK_EQ(__atomic_load_n(&dis_done, __ATOMIC_ACQUIRE), 1);
	if (__atomic_load_n(&dis_done, __ATOMIC_ACQUIRE)) {
		pthread_join(b, NULL);
		/* crossed the peer's disconnect: TLOOK, not TOUTSTATE */
		if (dis_r != 0)
			CHECK_EQ(dis_te, TLOOK);
		CHECK_RET(t_look(acc), T_DISCONNECT);
		CHECK_RET(t_rcvdis(acc, NULL), 0);
		CHECK_RET(t_getstate(acc), T_IDLE);
	}
	t_close(acc);
	t_close(cli);
}

static int u, er, ete;		/* atomic */

static void *uderr_reader(void *arg)
{
	struct t_uderr e;
	char ab[64];
	int r;

	(void)arg;
	memset(&e, 0, sizeof(e));
	e.addr.buf = ab;
	e.addr.maxlen = sizeof(ab);
	delay_ms = 300;		/* between its look and its read */
	after_more = true;
	r = t_rcvuderr(u, &e);
	__atomic_store_n(&ete, t_errno, __ATOMIC_RELAXED);
	__atomic_store_n(&er, r, __ATOMIC_RELEASE);
	return NULL;
}

static void test_uderr_keeps_datagram(void)
{
	struct t_unitdata ud, rd;
	char b[64], ab[64];
	pthread_t t;
	int s, fl;

	u = t_open("/dev/ticlts", O_RDWR, NULL);
	s = t_open("/dev/ticlts", O_RDWR, NULL);
	REQUIRE(u >= 0 && s >= 0);
	REQUIRE(xt_bind(u, "xtiudrop", 0, NULL, NULL) >= 0 &&
		xt_bind(s, NULL, 0, NULL, NULL) >= 0);
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = "nobody";
	ud.addr.len = 6;
	ud.udata.buf = "x";
	ud.udata.len = 1;
	CHECK_RET(t_sndudata(u, &ud), 0);
	pause_ms(50);
	CHECK_RET(t_look(u), T_UDERR);
	ud.addr.buf = "xtiudrop";
	ud.addr.len = 8;
	ud.udata.buf = "PRECIOUS";
	ud.udata.len = 8;
	CHECK_RET(t_sndudata(s, &ud), 0);
	pause_ms(50);
	REQUIRE(pthread_create(&t, NULL, uderr_reader, NULL) == 0);
	pause_ms(100);		/* it has looked, not read */
	memset(&rd, 0, sizeof(rd));
	rd.addr.buf = ab;
	rd.addr.maxlen = sizeof(ab);
	rd.udata.buf = b;
	rd.udata.maxlen = sizeof(b);
	/* this thread takes the error (held: TLOOK) */
	CHECK_TERR(t_rcvudata(u, &rd, &fl), TLOOK);
	pthread_join(t, NULL);
	/* the other read the datagram: TNOUDERR, the datagram kept */
	CHECK_EQ(__atomic_load_n(&er, __ATOMIC_ACQUIRE), -1);
	CHECK_EQ(__atomic_load_n(&ete, __ATOMIC_RELAXED), TNOUDERR);
	CHECK_RET(t_rcvuderr(u, NULL), 0);
	CHECK_RET(t_look(u), T_DATA);
	REQUIRE(set_nonblock(u, true) == 0);
	memset(&rd, 0, sizeof(rd));
	rd.addr.buf = ab;
	rd.addr.maxlen = sizeof(ab);
	rd.udata.buf = b;
	rd.udata.maxlen = 3;	/* in pieces: T_MORE */
	CHECK_RET(t_rcvudata(u, &rd, &fl), 0);
	CHECK_EQ(rd.udata.len, 3);
	CHECK_EQ(fl, T_MORE);
	CHECK(rd.addr.len > 0);	/* the sender, with the first piece */
	rd.udata.buf = b + 3;
	rd.udata.maxlen = sizeof(b) - 3;
	CHECK_RET(t_rcvudata(u, &rd, &fl), 0);
	CHECK_EQ(rd.udata.len, 5);
	CHECK_EQ(fl, 0);
	CHECK_MEM(b, "PRECIOUS", 8);
	CHECK_TERR(t_rcvudata(u, &rd, &fl), TNODATA);
	t_close(u);
	t_close(s);
}

/* t_sync while a disconnect, release or data the provider counted is
 * unread: the library's state stays (T_OUTCON, T_OUTREL, T_INCON). */
static void test_sync_keeps_state(void)
{
	const char *dev = "/dev/ticotsord";
	struct t_call sc, lc;
	char ab[64];
	int lis, cli, c2, a2, l3, c3;

	lis = t_open(dev, O_RDWR, NULL);
	cli = t_open(dev, O_RDWR | O_NONBLOCK, NULL);
	REQUIRE(lis >= 0 && cli >= 0);
	REQUIRE(xt_bind(lis, "xtisync", 1, NULL, NULL) >= 0 &&
		xt_bind(cli, NULL, 0, NULL, NULL) >= 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = "xtisync";
	sc.addr.len = 7;
	CHECK_TERR(t_connect(cli, &sc, NULL), TNODATA);
	memset(&lc, 0, sizeof(lc));
	lc.addr.buf = ab;
	lc.addr.maxlen = sizeof(ab);
	CHECK_RET(t_listen(lis, &lc), 0);
	CHECK_RET(t_snddis(lis, &lc), 0);	/* refused */
	pause_ms(50);
	CHECK_RET(t_look(cli), T_DISCONNECT);
	CHECK_RET(t_sync(cli), T_OUTCON);
	CHECK_TERR(t_snd(cli, "x", 1, 0), TOUTSTATE);
	CHECK_RET(t_rcvdis(cli, NULL), 0);
	CHECK_RET(t_getstate(cli), T_IDLE);
	t_close(cli);
	t_close(lis);

	conn_pair(dev, "xtisync2", &c2, &a2);
	CHECK_RET(t_sndrel(a2), 0);
	pause_ms(50);
	CHECK_RET(t_rcvrel(c2), 0);
	CHECK_RET(t_snd(c2, "data", 4, 0), 4);
	CHECK_RET(t_sndrel(c2), 0);
	pause_ms(50);
	CHECK_RET(t_sync(a2), T_OUTREL);
	CHECK_TERR(t_snd(a2, "x", 1, 0), TOUTSTATE);
	t_close(a2);
	t_close(c2);

	l3 = t_open(dev, O_RDWR, NULL);
	c3 = t_open(dev, O_RDWR | O_NONBLOCK, NULL);
	REQUIRE(l3 >= 0 && c3 >= 0);
	REQUIRE(xt_bind(l3, "xtisync3", 1, NULL, NULL) >= 0 &&
		xt_bind(c3, NULL, 0, NULL, NULL) >= 0);
	sc.addr.buf = "xtisync3";
	sc.addr.len = 8;
	CHECK_TERR(t_connect(c3, &sc, NULL), TNODATA);
	CHECK_RET(t_listen(l3, &lc), 0);
	CHECK_RET(t_snddis(c3, NULL), 0);	/* withdrawn */
	pause_ms(50);
	CHECK_RET(t_sync(l3), T_INCON);
	CHECK_TERR(t_snd(l3, "x", 1, 0), TOUTSTATE);
	t_close(c3);
	t_close(l3);
}

int main(void)
{
	test_sync_keeps_state();
	test_ack_behind_rest();
	test_uderr_keeps_datagram();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
