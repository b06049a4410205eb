/*
 * test_xti_loop_qlen -- a listener with qlen > 1 over the loopback
 * provider /dev/ticots (and /dev/ticotsord), end to end through libxti.
 *
 * t_bind reports the qlen the provider grants (asked 3: 3; asked 100:
 * the provider's limit 16; qlen 0 on the callers).  Four callers connect
 * asynchronously to a listener bound with qlen 3: three are pending (each
 * T_OUTCON, t_rcvconnect TNODATA), the fourth is refused by the provider
 * because the queue is full (its blocking t_connect fails TLOOK, t_rcvdis
 * gives ECONNREFUSED).  The listener sees T_LISTEN; after one t_listen,
 * t_accept fails TLOOK while more indications wait; t_listen takes the
 * other two in the callers' order (address, connect data, distinct
 * sequence numbers); a fourth t_listen is TQFULL.  With three outstanding:
 * t_accept onto the listener is TINDOUT, an unknown sequence TBADSEQ in
 * t_accept and t_snddis (and t_snddis with no call).  Then, in a chosen
 * order: the third caller accepted onto another bound endpoint (accept3,
 * the listener stays T_INCON), the first refused with t_snddis and data
 * (snddis2; that caller's t_rcvconnect TLOOK, t_rcvdis ECONNREFUSED with
 * the data; its sequence then TBADSEQ), the second accepted onto the
 * listener itself (accept1).  Data on each connection reaches the right
 * peer.
 *
 * On ticotsord with qlen 2: a caller that withdraws (t_snddis in
 * T_OUTCON) shows at the listener as T_DISCONNECT, t_rcvdis gives its
 * sequence and ECONNABORTED (rcvdis3: the listener stays T_INCON); the
 * slots freed by accepts take new callers; accept onto an unbound
 * endpoint (accept2: the listener back to T_IDLE), orderly release
 * across it.
 */
#include "ferry.h"

#define COTS	"/dev/ticots"
#define ORD	"/dev/ticotsord"

/* Asynchronous t_connect to name with connect data ud. */
static int connect_async(int fd, const char *name, const char *ud)
{
	struct t_call sc;

	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = (char *)name;
	sc.addr.len = (unsigned)strlen(name);
	sc.udata.buf = (char *)ud;
	sc.udata.len = (unsigned)strlen(ud);
	return t_connect(fd, &sc, NULL);
}

/* The indication t_listen gives */
struct ind {
	char addr[64], data[64];
	struct t_call c;
};

static void ind_init(struct ind *i)
{
	memset(i, 0, sizeof(*i));
	i->c.addr.buf = i->addr;
	i->c.addr.maxlen = sizeof(i->addr);
	i->c.udata.buf = i->data;
	i->c.udata.maxlen = sizeof(i->data);
	i->c.sequence = -77;
}

/* t_accept(lfd, resfd) of sequence seq */
static int accept_seq(int lfd, int resfd, int seq)
{
	struct t_call ac;

	memset(&ac, 0, sizeof(ac));
	ac.sequence = seq;
	return t_accept(lfd, resfd, &ac);
}

/* t_snddis of sequence seq */
static int refuse_seq(int lfd, int seq, const char *ud)
{
	struct t_call c;

	memset(&c, 0, sizeof(c));
	c.sequence = seq;
	if (ud != NULL) {
		c.udata.buf = (char *)ud;
		c.udata.len = (unsigned)strlen(ud);
	}
	return t_snddis(lfd, &c);
}

/* A message from a to b, checked. */
static void exchange(int a, int b, const char *msg)
{
	char buf[64];
	int flags = -1, n = (int)strlen(msg);

	CHECK_RET(t_snd(a, (char *)msg, (unsigned)n, 0), n);
	CHECK_RET(t_rcv(b, buf, sizeof(buf), &flags), n);
	CHECK_MEM(buf, msg, (size_t)n);
	CHECK_EQ(flags, 0);
}

static void test_bind_qlen(void)
{
	int a = t_open(COTS, O_RDWR, NULL), b = t_open(COTS, O_RDWR, NULL);
	int c = t_open(ORD, O_RDWR, NULL);

	REQUIRE(a >= 0 && b >= 0 && c >= 0);
	CHECK_RET(xt_bind(a, "qlen-three", 3, NULL, NULL), 3);
	CHECK_RET(xt_bind(b, "qlen-many", 100, NULL, NULL), 16);
	CHECK_RET(xt_bind(c, NULL, 0, NULL, NULL), 0);
	CHECK_STATE(a, T_IDLE);
	CHECK_STATE(b, T_IDLE);
	/* unbound and bound again: a new qlen */
	CHECK_RET(t_unbind(b), 0);
	CHECK_RET(xt_bind(b, "qlen-many", 2, NULL, NULL), 2);
	/* a listener does not call out (the provider says TOUTSTATE) */
	CHECK_TERR(connect_async(a, "qlen-many", "x"), TOUTSTATE);
	CHECK_STATE(a, T_IDLE);
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
	CHECK_RET(t_close(c), 0);
}

#define NCALL	4

static void test_cots_queue(void)
{
	int lfd = t_open(COTS, O_RDWR, NULL), acc = t_open(COTS, O_RDWR, NULL);
	int cli[NCALL];
	char caddr[NCALL][64], ud[NCALL][8];
	unsigned clen[NCALL];
	struct ind in[3];
	struct t_discon d;
	char db[64];
	int seq[3];

	REQUIRE(lfd >= 0 && acc >= 0);
	CHECK_RET(xt_bind(lfd, "qlen-listener", 3, NULL, NULL), 3);
	CHECK_RET(xt_bind(acc, NULL, 0, NULL, NULL), 0);
	for (int i = 0; i < NCALL; i++) {
		cli[i] = t_open(COTS, O_RDWR, NULL);
		REQUIRE(cli[i] >= 0);
		CHECK_RET(xt_bind(cli[i], NULL, 0, caddr[i], &clen[i]), 0);
		snprintf(ud[i], sizeof(ud[i]), "call%d", i);
	}
	/* three pending */
	for (int i = 0; i < 3; i++) {
		CHECK_RET(set_nonblock(cli[i], true), 0);
		CHECK_TERR(connect_async(cli[i], "qlen-listener", ud[i]),
			   TNODATA);
		CHECK_STATE(cli[i], T_OUTCON);
		CHECK_TERR(t_rcvconnect(cli[i], NULL), TNODATA);
	}
	/* the fourth: the queue is full, refused; a blocking t_connect
	 * meets the T_DISCON_IND */
	CHECK_TERR(connect_async(cli[3], "qlen-listener", ud[3]), TLOOK);
	CHECK_RET(t_look(cli[3]), T_DISCONNECT);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(cli[3], &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	CHECK_EQ(d.sequence, -1);
	CHECK_STATE(cli[3], T_IDLE);

	/* the listener: one t_listen, then TLOOK from t_accept while more
	 * indications wait */
	CHECK_EQ(xt_look_wait(lfd), T_LISTEN);
	CHECK_STATE(lfd, T_IDLE);
	ind_init(&in[0]);
	CHECK_RET(t_listen(lfd, &in[0].c), 0);
	CHECK_STATE(lfd, T_INCON);
	CHECK_EQ(xt_look_wait(lfd), T_LISTEN);
	CHECK_TERR(accept_seq(lfd, acc, in[0].c.sequence), TLOOK);
	CHECK_STATE(lfd, T_INCON);
	CHECK_STATE(acc, T_IDLE);
	for (int i = 1; i < 3; i++) {
		ind_init(&in[i]);
		CHECK_RET(t_listen(lfd, &in[i].c), 0);
		CHECK_STATE(lfd, T_INCON);
	}
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(in[i].c.addr.len, clen[i]);
		CHECK_MEM(in[i].addr, caddr[i], clen[i]);
		CHECK_EQ(in[i].c.udata.len, 5);
		CHECK_MEM(in[i].data, ud[i], 5);
		seq[i] = in[i].c.sequence;
		CHECK(seq[i] != -77);
	}
	CHECK(seq[0] != seq[1] && seq[1] != seq[2] && seq[0] != seq[2]);
	/* qlen indications outstanding */
	struct ind extra;
	ind_init(&extra);
	CHECK_TERR(t_listen(lfd, &extra.c), TQFULL);
	CHECK_RET(t_look(lfd), 0);
	/* three outstanding: not onto the listener itself */
	CHECK_TERR(accept_seq(lfd, lfd, seq[1]), TINDOUT);
	/* unknown sequence numbers */
	int bad = seq[0] + seq[1] + seq[2] + 1000;
	CHECK_TERR(accept_seq(lfd, acc, bad), TBADSEQ);
	CHECK_TERR(refuse_seq(lfd, bad, NULL), TBADSEQ);
	CHECK_TERR(t_snddis(lfd, NULL), TBADSEQ);
	CHECK_STATE(lfd, T_INCON);
	CHECK_STATE(acc, T_IDLE);

	/* the third caller onto acc: accept3, two left */
	CHECK_RET(accept_seq(lfd, acc, seq[2]), 0);
	CHECK_STATE(lfd, T_INCON);
	CHECK_STATE(acc, T_DATAXFER);
	CHECK_EQ(xt_look_wait(cli[2]), T_CONNECT);
	CHECK_RET(t_rcvconnect(cli[2], NULL), 0);
	CHECK_STATE(cli[2], T_DATAXFER);
	CHECK_TERR(t_rcvconnect(cli[0], NULL), TNODATA);
	CHECK_TERR(t_rcvconnect(cli[1], NULL), TNODATA);
	CHECK_TERR(accept_seq(lfd, lfd, seq[0]), TINDOUT);
	CHECK_TERR(refuse_seq(lfd, seq[2], NULL), TBADSEQ);
	CHECK_TERR(accept_seq(lfd, acc, seq[0]), TOUTSTATE);	/* taken */

	/* refuse the first, with data: snddis2, one left */
	CHECK_RET(refuse_seq(lfd, seq[0], "no"), 0);
	CHECK_STATE(lfd, T_INCON);
	CHECK_EQ(xt_look_wait(cli[0]), T_DISCONNECT);
	CHECK_TERR(t_rcvconnect(cli[0], NULL), TLOOK);
	memset(&d, 0, sizeof(d));
	d.udata.buf = db;
	d.udata.maxlen = sizeof(db);
	CHECK_RET(t_rcvdis(cli[0], &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	CHECK_EQ(d.udata.len, 2);
	CHECK_MEM(db, "no", 2);
	CHECK_STATE(cli[0], T_IDLE);
	CHECK_TERR(refuse_seq(lfd, seq[0], NULL), TBADSEQ);
	CHECK_TERR(accept_seq(lfd, lfd, seq[0]), TBADSEQ);

	/* the second onto the listener itself: accept1 */
	CHECK_RET(accept_seq(lfd, lfd, seq[1]), 0);
	CHECK_STATE(lfd, T_DATAXFER);
	CHECK_EQ(xt_look_wait(cli[1]), T_CONNECT);
	CHECK_RET(t_rcvconnect(cli[1], NULL), 0);
	CHECK_STATE(cli[1], T_DATAXFER);
	CHECK_TERR(t_listen(lfd, &extra.c), TOUTSTATE);

	/* each connection joins the right pair */
	for (int i = 0; i < NCALL; i++)
		CHECK_RET(set_nonblock(cli[i], false), 0);
	exchange(cli[2], acc, "to-acc");
	exchange(acc, cli[2], "from-acc");
	exchange(cli[1], lfd, "to-listener");
	exchange(lfd, cli[1], "from-listener");
	CHECK_RET(set_nonblock(acc, true), 0);
	int fl;
	CHECK_TERR(t_rcv(acc, db, sizeof(db), &fl), TNODATA);
	/* the refused caller can call again: nobody listens now */
	CHECK_TERR(connect_async(cli[0], "qlen-listener", "again"), TLOOK);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(cli[0], &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);

	/* abortive release of both */
	CHECK_RET(t_snddis(lfd, NULL), 0);
	CHECK_STATE(lfd, T_IDLE);
	CHECK_EQ(xt_look_wait(cli[1]), T_DISCONNECT);
	CHECK_RET(t_rcvdis(cli[1], NULL), 0);
	CHECK_RET(t_snddis(cli[2], NULL), 0);
	CHECK_EQ(xt_look_wait(acc), T_DISCONNECT);
	CHECK_RET(t_rcvdis(acc, NULL), 0);
	CHECK_STATE(acc, T_IDLE);
	for (int i = 0; i < NCALL; i++)
		CHECK_RET(t_close(cli[i]), 0);
	CHECK_RET(t_close(acc), 0);
	CHECK_RET(t_close(lfd), 0);
}

static void test_ord_withdraw(void)
{
	int lfd = t_open(ORD, O_RDWR, NULL);
	int acc[2], cli[3];
	struct ind in[3];
	struct t_discon d;
	char buf[64];
	int flags;

	REQUIRE(lfd >= 0);
	CHECK_RET(xt_bind(lfd, "qlen-ord", 2, NULL, NULL), 2);
	for (int i = 0; i < 2; i++) {
		acc[i] = t_open(ORD, O_RDWR, NULL);	/* left unbound */
		REQUIRE(acc[i] >= 0);
	}
	for (int i = 0; i < 3; i++) {
		cli[i] = t_open(ORD, O_RDWR, NULL);
		REQUIRE(cli[i] >= 0);
		CHECK_RET(xt_bind(cli[i], NULL, 0, NULL, NULL), 0);
		CHECK_RET(set_nonblock(cli[i], true), 0);
	}
	CHECK_TERR(connect_async(cli[0], "qlen-ord", "a"), TNODATA);
	CHECK_TERR(connect_async(cli[1], "qlen-ord", "b"), TNODATA);
	ind_init(&in[0]);
	ind_init(&in[1]);
	CHECK_RET(t_listen(lfd, &in[0].c), 0);
	CHECK_RET(t_listen(lfd, &in[1].c), 0);
	CHECK_MEM(in[0].data, "a", 1);
	CHECK_MEM(in[1].data, "b", 1);
	/* the first caller withdraws: rcvdis3 */
	CHECK_RET(t_snddis(cli[0], NULL), 0);
	CHECK_STATE(cli[0], T_IDLE);
	CHECK_EQ(xt_look_wait(lfd), T_DISCONNECT);
	CHECK_TERR(accept_seq(lfd, acc[0], in[1].c.sequence), TLOOK);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(lfd, &d), 0);
	CHECK_EQ(d.reason, ECONNABORTED);
	CHECK_EQ(d.sequence, in[0].c.sequence);
	CHECK_STATE(lfd, T_INCON);
	CHECK_TERR(accept_seq(lfd, acc[0], in[0].c.sequence), TBADSEQ);
	/* the slot is free again: a third caller */
	CHECK_TERR(connect_async(cli[2], "qlen-ord", "c"), TNODATA);
	ind_init(&in[2]);
	CHECK_RET(t_listen(lfd, &in[2].c), 0);
	CHECK_MEM(in[2].data, "c", 1);
	CHECK(in[2].c.sequence != in[1].c.sequence);
	/* accept in reverse order, onto unbound endpoints */
	CHECK_RET(accept_seq(lfd, acc[0], in[2].c.sequence), 0);
	CHECK_STATE(lfd, T_INCON);			/* accept3 */
	CHECK_RET(accept_seq(lfd, acc[1], in[1].c.sequence), 0);
	CHECK_STATE(lfd, T_IDLE);			/* accept2 */
	CHECK_STATE(acc[0], T_DATAXFER);
	CHECK_STATE(acc[1], T_DATAXFER);
	CHECK_RET(t_look(lfd), 0);
	CHECK_EQ(xt_look_wait(cli[2]), T_CONNECT);
	CHECK_RET(t_rcvconnect(cli[2], NULL), 0);
	CHECK_EQ(xt_look_wait(cli[1]), T_CONNECT);
	CHECK_RET(t_rcvconnect(cli[1], NULL), 0);
	CHECK_RET(set_nonblock(cli[1], false), 0);
	CHECK_RET(set_nonblock(cli[2], false), 0);
	exchange(cli[2], acc[0], "c-to-0");
	exchange(cli[1], acc[1], "b-to-1");
	/* orderly release across acc[1] */
	CHECK_RET(t_sndrel(cli[1]), 0);
	CHECK_STATE(cli[1], T_OUTREL);
	CHECK_EQ(xt_look_wait(acc[1]), T_ORDREL);
	CHECK_RET(t_rcvrel(acc[1]), 0);
	CHECK_STATE(acc[1], T_INREL);
	CHECK_RET(t_snd(acc[1], "tail", 4, 0), 4);
	CHECK_RET(t_sndrel(acc[1]), 0);
	CHECK_STATE(acc[1], T_IDLE);
	CHECK_RET(t_rcv(cli[1], buf, sizeof(buf), &flags), 4);
	CHECK_MEM(buf, "tail", 4);
	CHECK_EQ(xt_look_wait(cli[1]), T_ORDREL);
	CHECK_RET(t_rcvrel(cli[1]), 0);
	CHECK_STATE(cli[1], T_IDLE);
	/* the listener takes callers again */
	CHECK_TERR(connect_async(cli[0], "qlen-ord", "d"), TNODATA);
	ind_init(&in[0]);
	CHECK_RET(t_listen(lfd, &in[0].c), 0);
	CHECK_MEM(in[0].data, "d", 1);
	CHECK_RET(refuse_seq(lfd, in[0].c.sequence, NULL), 0);
	CHECK_STATE(lfd, T_IDLE);			/* snddis1 */
	CHECK_EQ(xt_look_wait(cli[0]), T_DISCONNECT);
	CHECK_RET(t_rcvdis(cli[0], &d), 0);
	CHECK_EQ(d.reason, ECONNREFUSED);
	for (int i = 0; i < 3; i++)
		CHECK_RET(t_close(cli[i]), 0);
	CHECK_RET(t_close(acc[0]), 0);
	CHECK_RET(t_close(acc[1]), 0);
	CHECK_RET(t_close(lfd), 0);
}

int main(void)
{
	test_bind_qlen();
	test_cots_queue();
	test_ord_withdraw();
	T_DONE();
}
