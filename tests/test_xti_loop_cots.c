/*
 * test_xti_loop_cots -- XTI over the loopback connection providers
 * /dev/ticots and /dev/ticotsord (src/transport/tiloop*.c), end to end:
 * t_open's t_info, t_bind to a name and to any address, t_getprotaddr;
 * an asynchronous t_connect with connect data, t_listen, t_accept on the
 * listener and onto another endpoint (TI_CAPABILITY's ACCEPTOR_id), the
 * accept data back through t_rcvconnect; data both ways with TSDU
 * boundaries (T_MORE), a message larger than a buffer, expedited data;
 * a refused connection (t_snddis of the indication: the caller's
 * t_rcvconnect fails TLOOK, t_rcvdis gives ECONNREFUSED); orderly
 * release with data on ticotsord; abortive release seen by the peer's
 * t_look and t_rcvdis; a connection to nobody refused; t_optmgmt of an
 * XTI_GENERIC option; t_unbind and t_close.  The synchronous t_connect
 * runs with the server in another thread.
 */
#include "ferry.h"

#define COTS	"/dev/ticots"
#define ORD	"/dev/ticotsord"

static void test_info(void)
{
	struct t_info ti;
	int fd = t_open(COTS, O_RDWR, &ti);

	REQUIRE(fd >= 0);
	CHECK_EQ(ti.servtype, T_COTS);
	CHECK_EQ(ti.tsdu, 65536);
	CHECK_EQ(ti.etsdu, 1024);
	CHECK_EQ(ti.connect, 1024);
	CHECK_EQ(ti.discon, 1024);
	CHECK_EQ(ti.addr, 64);
	CHECK_EQ(ti.flags & T_SENDZERO, T_SENDZERO);
	CHECK_EQ(ti.flags & T_ORDRELDATA, 0);
	CHECK_RET(ioctl(fd, I_FIND, "timod"), 1);
	CHECK_STATE(fd, T_UNBND);
	CHECK_RET(t_close(fd), 0);
	fd = t_open(ORD, O_RDWR, &ti);
	REQUIRE(fd >= 0);
	CHECK_EQ(ti.servtype, T_COTS_ORD);
	CHECK_EQ(ti.flags & T_ORDRELDATA, T_ORDRELDATA);
	CHECK_RET(t_close(fd), 0);
}

static void test_async_connect(void)
{
	int srv = t_open(ORD, O_RDWR, NULL), cli = t_open(ORD, O_RDWR, NULL);
	char caddr[64], buf[128], ob[64];
	unsigned clen = 0;
	struct t_call sc, lc, ac, rc;
	struct t_bind b, p;
	int flags;

	REQUIRE(srv >= 0 && cli >= 0);
	CHECK_RET(xt_bind(srv, "xti-loop-srv", 2, NULL, NULL), 2);
	CHECK_RET(xt_bind(cli, NULL, 0, caddr, &clen), 0);
	CHECK_EQ(clen, 8);			/* eight hex digits */
	/* t_getprotaddr */
	memset(&b, 0, sizeof(b));
	memset(&p, 0, sizeof(p));
	b.addr.buf = buf;
	b.addr.maxlen = sizeof(buf);
	p.addr.buf = ob;
	p.addr.maxlen = sizeof(ob);
	CHECK_RET(t_getprotaddr(srv, &b, &p), 0);
	CHECK_EQ(b.addr.len, 12);
	CHECK_MEM(buf, "xti-loop-srv", 12);
	CHECK_EQ(p.addr.len, 0);
	/* connect asynchronously, with data */
	CHECK_RET(set_nonblock(cli, true), 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = "xti-loop-srv";
	sc.addr.len = 12;
	sc.udata.buf = "hello";
	sc.udata.len = 5;
	CHECK_TERR(t_connect(cli, &sc, NULL), TNODATA);
	CHECK_STATE(cli, T_OUTCON);
	CHECK_TERR(t_rcvconnect(cli, NULL), TNODATA);
	/* the server listens */
	CHECK_RET(t_look(srv), T_LISTEN);
	memset(&lc, 0, sizeof(lc));
	lc.addr.buf = buf;
	lc.addr.maxlen = sizeof(buf);
	lc.udata.buf = ob;
	lc.udata.maxlen = sizeof(ob);
	CHECK_RET(t_listen(srv, &lc), 0);
	CHECK_EQ(lc.addr.len, clen);
	CHECK_MEM(buf, caddr, clen);
	CHECK_EQ(lc.udata.len, 5);
	CHECK_MEM(ob, "hello", 5);
	CHECK_STATE(srv, T_INCON);
	/* accept on the listener, with data */
	memset(&ac, 0, sizeof(ac));
	ac.sequence = lc.sequence;
	ac.udata.buf = "welcome";
	ac.udata.len = 7;
	CHECK_RET(t_accept(srv, srv, &ac), 0);
	CHECK_STATE(srv, T_DATAXFER);
	CHECK_RET(t_look(cli), T_CONNECT);
	memset(&rc, 0, sizeof(rc));
	rc.addr.buf = buf;
	rc.addr.maxlen = sizeof(buf);
	rc.udata.buf = ob;
	rc.udata.maxlen = sizeof(ob);
	CHECK_RET(t_rcvconnect(cli, &rc), 0);
	CHECK_EQ(rc.udata.len, 7);
	CHECK_MEM(ob, "welcome", 7);
	CHECK_STATE(cli, T_DATAXFER);
	CHECK_RET(set_nonblock(cli, false), 0);
	/* the peer's address */
	p.addr.len = 0;
	CHECK_RET(t_getprotaddr(cli, NULL, &p), 0);
	CHECK_EQ(p.addr.len, 12);
	/* data both ways, with TSDU boundaries */
	CHECK_RET(t_snd(cli, "abc", 3, T_MORE), 3);
	CHECK_RET(t_snd(cli, "def", 3, 0), 3);
	CHECK_RET(t_rcv(srv, buf, sizeof(buf), &flags), 3);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcv(srv, buf, sizeof(buf), &flags), 3);
	CHECK_MEM(buf, "def", 3);
	CHECK_EQ(flags, 0);
	CHECK_RET(t_snd(srv, "0123456789", 10, 0), 10);
	CHECK_RET(t_rcv(cli, buf, 4, &flags), 4);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcv(cli, buf, 100, &flags), 6);
	CHECK_MEM(buf, "456789", 6);
	CHECK_EQ(flags, 0);
	CHECK_RET(t_snd(cli, "!", 1, T_EXPEDITED), 1);
	CHECK_RET(t_look(srv), T_EXDATA);
	CHECK_RET(t_rcv(srv, buf, sizeof(buf), &flags), 1);
	CHECK_EQ(flags, T_EXPEDITED);
	/* a large TSDU (more than the 16 KiB it takes by TIDU... one piece
	 * here: TIDU 65536), read in 1000-byte pieces */
	static char big[60000], got[60000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)i;
	CHECK_RET(t_snd(cli, big, sizeof(big), 0), (int)sizeof(big));
	size_t have = 0;
	do {
		int n = t_rcv(srv, got + have, 1000, &flags);
		if (n <= 0)
			break;
		have += (size_t)n;
	} while (flags & T_MORE);
	CHECK_EQ(have, sizeof(big));
	CHECK_MEM(got, big, sizeof(big));
	/* orderly release with data */
	struct t_discon d;
	memset(&d, 0, sizeof(d));
	d.udata.buf = "bye";
	d.udata.len = 3;
	CHECK_RET(t_sndreldata(cli, &d), 0);
	CHECK_STATE(cli, T_OUTREL);
	CHECK_RET(t_look(srv), T_ORDREL);
	CHECK_TERR(t_rcv(srv, buf, sizeof(buf), &flags), TLOOK);
	memset(&d, 0, sizeof(d));
	d.udata.buf = ob;
	d.udata.maxlen = sizeof(ob);
	CHECK_RET(t_rcvreldata(srv, &d), 0);
	CHECK_EQ(d.udata.len, 3);
	CHECK_MEM(ob, "bye", 3);
	CHECK_STATE(srv, T_INREL);
	CHECK_RET(t_snd(srv, "last", 4, 0), 4);
	CHECK_RET(t_sndrel(srv), 0);
	CHECK_STATE(srv, T_IDLE);
	CHECK_RET(t_rcv(cli, buf, sizeof(buf), &flags), 4);
	CHECK_RET(t_rcvrel(cli), 0);
	CHECK_STATE(cli, T_IDLE);
	CHECK_RET(t_unbind(cli), 0);
	CHECK_STATE(cli, T_UNBND);
	CHECK_RET(t_close(cli), 0);
	CHECK_RET(t_close(srv), 0);
}

struct server {
	int fd, acc;		/* listener, acceptor */
	int r;
	pthread_t th;
};

/* listen, then accept onto another endpoint */
static void *server_main(void *arg)
{
	struct server *s = arg;
	struct t_call c;

	memset(&c, 0, sizeof(c));
	s->r = -1;
	if (t_listen(s->fd, &c) != 0)
		return NULL;
	c.udata.len = 0;
	c.addr.len = 0;
	if (t_accept(s->fd, s->acc, &c) != 0)
		return NULL;
	s->r = 0;
	return NULL;
}

static void test_sync_connect(void)
{
	struct server s;
	int cli = t_open(COTS, O_RDWR, NULL);
	struct t_call sc, rc;
	struct t_discon d;
	char buf[64];
	int flags;

	memset(&s, 0, sizeof(s));
	s.fd = t_open(COTS, O_RDWR, NULL);
	s.acc = t_open(COTS, O_RDWR, NULL);	/* unbound: bound for us */
	REQUIRE(s.fd >= 0 && s.acc >= 0 && cli >= 0);
	CHECK_RET(xt_bind(s.fd, "xti-loop-sync", 1, NULL, NULL), 1);
	CHECK_RET(xt_bind(cli, NULL, 0, NULL, NULL), 0);
	REQUIRE(pthread_create(&s.th, NULL, server_main, &s) == 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = "xti-loop-sync";
	sc.addr.len = 13;
	memset(&rc, 0, sizeof(rc));
	rc.addr.buf = buf;
	rc.addr.maxlen = sizeof(buf);
	CHECK_RET(t_connect(cli, &sc, &rc), 0);
	pthread_join(s.th, NULL);
	CHECK_EQ(s.r, 0);
	CHECK_STATE(cli, T_DATAXFER);
	CHECK_STATE(s.fd, T_IDLE);		/* accept2 */
	CHECK_STATE(s.acc, T_DATAXFER);
	CHECK_RET(t_snd(cli, "ping", 4, 0), 4);
	CHECK_RET(t_rcv(s.acc, buf, sizeof(buf), &flags), 4);
	CHECK_MEM(buf, "ping", 4);
	/* abortive release, seen by the peer */
	memset(&sc, 0, sizeof(sc));
	sc.udata.buf = "abort";
	sc.udata.len = 5;
	CHECK_RET(t_snddis(s.acc, &sc), 0);
	CHECK_STATE(s.acc, T_IDLE);
	CHECK_RET(t_look(cli), T_DISCONNECT);
	CHECK_TERR(t_snd(cli, "x", 1, 0), TLOOK);
	memset(&d, 0, sizeof(d));
	d.udata.buf = buf;
	d.udata.maxlen = sizeof(buf);
	CHECK_RET(t_rcvdis(cli, &d), 0);
	CHECK_EQ(d.reason, ECONNRESET);
	CHECK_EQ(d.udata.len, 5);
	CHECK_STATE(cli, T_IDLE);
	/* a refused connection: t_snddis of the indication */
	CHECK_RET(set_nonblock(cli, true), 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = "xti-loop-sync";
	sc.addr.len = 13;
	CHECK_TERR(t_connect(cli, &sc, NULL), TNODATA);
	struct t_call lc;
	memset(&lc, 0, sizeof(lc));
	CHECK_RET(t_listen(s.fd, &lc), 0);
	CHECK_RET(t_snddis(s.fd, &lc), 0);
	CHECK_STATE(s.fd, T_IDLE);
	CHECK_TERR(t_rcvconnect(cli, NULL), TLOOK);
	CHECK_RET(t_rcvdis(cli, &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	CHECK_STATE(cli, T_IDLE);
	/* nobody there */
	sc.addr.buf = "xti-loop-nobody";
	sc.addr.len = 15;
	CHECK_TERR(t_connect(cli, &sc, NULL), TNODATA);
	CHECK_EQ(xt_look_wait(cli), T_DISCONNECT);
	CHECK_RET(t_rcvdis(cli, &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	CHECK_RET(t_close(cli), 0);
	CHECK_RET(t_close(s.fd), 0);
	CHECK_RET(t_close(s.acc), 0);
}

static void test_options(void)
{
	int fd = t_open(COTS, O_RDWR, NULL);
	struct {
		struct t_opthdr h;
		t_uscalar_t v;
	} o = { { sizeof(o), XTI_GENERIC, XTI_SNDBUF, 0 }, 32768 }, back;
	struct t_optmgmt req, ret;

	REQUIRE(fd >= 0);
	req.opt.buf = (char *)&o;
	req.opt.len = sizeof(o);
	req.flags = T_NEGOTIATE;
	memset(&back, 0, sizeof(back));
	ret.opt.buf = (char *)&back;
	ret.opt.maxlen = sizeof(back);
	CHECK_RET(t_optmgmt(fd, &req, &ret), 0);
	CHECK_EQ(ret.opt.len, sizeof(back));
	CHECK_EQ(back.h.level, XTI_GENERIC);
	CHECK_EQ(back.h.name, XTI_SNDBUF);
	CHECK(ret.flags == T_SUCCESS || ret.flags == T_PARTSUCCESS);
	req.flags = T_CURRENT;
	CHECK_RET(t_optmgmt(fd, &req, &ret), 0);
	CHECK_EQ(back.h.name, XTI_SNDBUF);
	CHECK_RET(t_close(fd), 0);
}

int main(void)
{
	test_info();
	test_async_connect();
	test_sync_connect();
	test_options();
	T_DONE();
}
