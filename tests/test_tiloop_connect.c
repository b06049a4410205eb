/*
 * test_tiloop_connect -- connection setup on /dev/ticots and
 * /dev/ticotsord, raw TPI: T_CONN_REQ -> T_OK_ACK, T_CONN_IND at the
 * listener (caller's address, options, connect data, SEQ_number) ->
 * T_CONN_RES onto the listener itself (ACCEPTOR_id 0) or onto another
 * endpoint, unbound (it takes the listener's address) or bound ->
 * T_OK_ACK and T_CONN_CON (responding address, options, data); states
 * and T_ADDR_ACK of every end after; refusals with T_DISCON_IND
 * (ECONNREFUSED: nobody bound, bound without a queue, queue full,
 * listener busy in a connection, refused by the listener with data);
 * a caller withdrawing (ECONNABORTED with its SEQ_number at the
 * listener); every error of T_CONN_REQ (TOUTSTATE unbound, listening or
 * connected; TBADADDR; TBADDATA; TBADOPT) and of T_CONN_RES (TOUTSTATE,
 * TBADF, TPROVMISMATCH, TRESQLEN, TOUTSTATE acceptor, TBADSEQ, TBADDATA,
 * TINDOUT, TBADOPT) with the listener still able to accept after each;
 * T_DISCON_REQ errors (TBADSEQ, TOUTSTATE, TBADDATA); three pending
 * indications accepted out of order onto three endpoints with data
 * checked on every pair; closes during setup (listener with pending
 * indications, caller before the answer, acceptor before T_CONN_RES);
 * and a listener that does not read, its callers connecting and
 * withdrawing: what waits for it stays bounded (later ones refused).
 */
#include "test_tiloop_lib.h"

struct opt1 {
	struct t_opthdr h;
	t_scalar_t v;
};

static const struct opt1 good_opt = {
	{ sizeof(struct opt1), XTI_GENERIC, XTI_SNDBUF, 0 }, 8192
};
static const struct opt1 bad_opt = {
	{ 3, XTI_GENERIC, XTI_SNDBUF, 0 }, 8192
};

/* T_ADDR_ACK of fd: local and remote addresses ("" if none). */
static void check_addr(int fd, const char *loc, const char *rem)
{
	struct tmsg *m = tm_new();
	struct T_addr_ack *a = &m->c.p.addr_ack;

	CHECK_RET(send_simple(fd, T_ADDR_REQ, 0), 0);
	REQUIRE(tm_get(fd, m, true, WAIT_MS));
	CHECK_EQ(m->c.prim, T_ADDR_ACK);
	CHECK_EQ(a->LOCADDR_length, (int)strlen(loc));
	if (*loc)
		CHECK_MEM(m->c.b + a->LOCADDR_offset, loc, strlen(loc));
	CHECK_EQ(a->REMADDR_length, (int)strlen(rem));
	if (*rem)
		CHECK_MEM(m->c.b + a->REMADDR_offset, rem, strlen(rem));
	tm_free(m);
}

/* Data both ways between a and b. */
static void check_pair(int a, int b, const char *tag)
{
	CHECK_RET(send_data(a, T_DATA_REQ, 0, tag, (int)strlen(tag)), 0);
	expect_data(b, T_DATA_IND, 0, tag, (int)strlen(tag));
	CHECK_RET(send_data(b, T_DATA_REQ, 0, tag, (int)strlen(tag)), 0);
	expect_data(a, T_DATA_IND, 0, tag, (int)strlen(tag));
}

static void test_full_setup(const char *dev)
{
	int l = open_ep(dev), c = open_ep(dev), acc = open_ep(dev);
	struct tmsg *m = tm_new();
	struct T_conn_ind *ci = &m->c.p.conn_ind;
	struct T_conn_con *cc = &m->c.p.conn_con;
	t_scalar_t seq;

	bind_ok(l, "listener", 2);
	bind_ok(c, "caller", 0);
	CHECK_RET(send_conn_req(c, "listener", &good_opt, sizeof(good_opt),
				"hello", 5), 0);
	expect_ok(c, T_CONN_REQ);
	CHECK_EQ(ep_state(c), TS_WCON_CREQ);
	/* the indication, every field */
	REQUIRE(tm_get(l, m, false, WAIT_MS));
	CHECK_EQ(m->rc, 0);
	CHECK_EQ(m->c.prim, T_CONN_IND);
	CHECK_EQ(ci->SRC_length, 6);
	CHECK_MEM(m->c.b + ci->SRC_offset, "caller", 6);
	CHECK_EQ(ci->OPT_length, (int)sizeof(good_opt));
	CHECK_EQ(ci->OPT_offset % 4, 0);
	CHECK_MEM(m->c.b + ci->OPT_offset, &good_opt, sizeof(good_opt));
	CHECK(ci->SEQ_number > 0);
	CHECK_EQ(m->clen, ci->OPT_offset + ci->OPT_length);
	CHECK_EQ(m->dlen, 5);
	CHECK_MEM(m->d, "hello", 5);
	seq = ci->SEQ_number;
	CHECK_EQ(ep_state(l), TS_WRES_CIND);
	/* accept onto an unbound endpoint, with options and data */
	CHECK_EQ(ep_state(acc), TS_UNBND);
	CHECK_RET(send_conn_res(l, ep_token(acc), seq, &good_opt,
				sizeof(good_opt), "welcome", 7), 0);
	expect_ok(l, T_CONN_RES);
	REQUIRE(tm_get(c, m, false, WAIT_MS));
	CHECK_EQ(m->c.prim, T_CONN_CON);
	CHECK_EQ(cc->RES_length, 8);
	CHECK_MEM(m->c.b + cc->RES_offset, "listener", 8);
	CHECK_EQ(cc->OPT_length, (int)sizeof(good_opt));
	CHECK_MEM(m->c.b + cc->OPT_offset, &good_opt, sizeof(good_opt));
	CHECK_EQ(m->dlen, 7);
	CHECK_MEM(m->d, "welcome", 7);
	CHECK_EQ(ep_state(c), TS_DATA_XFER);
	CHECK_EQ(ep_state(acc), TS_DATA_XFER);
	CHECK_EQ(ep_state(l), TS_IDLE);
	check_addr(c, "caller", "listener");
	check_addr(acc, "listener", "caller");
	check_addr(l, "listener", "");
	check_pair(c, acc, "pair");
	/* connected: no unbind; the other local primitives work */
	CHECK_RET(send_simple(c, T_UNBIND_REQ, 0), 0);
	expect_err(c, T_UNBIND_REQ, TOUTSTATE, 0);
	CHECK_RET(send_bind(c, "again", 0), 0);
	expect_err(c, T_BIND_REQ, TOUTSTATE, 0);
	CHECK(ep_token(c) != 0);
	{
		struct T_optmgmt_req r = { T_OPTMGMT_REQ, 0, 0, T_CURRENT };
		struct cbuf cb;
		struct tmsg *m2 = tm_new();
		cb_init(&cb, &r, sizeof(r));
		cb.p.optmgmt_req.OPT_length = (t_scalar_t)sizeof(good_opt);
		cb.p.optmgmt_req.OPT_offset = cb_add(&cb, &good_opt,
						     sizeof(good_opt));
		CHECK_RET(cb_send(acc, &cb, NULL, -1, 0), 0);
		REQUIRE(tm_get(acc, m2, true, WAIT_MS));
		CHECK_EQ(m2->c.prim, T_OPTMGMT_ACK);
		CHECK_EQ(m2->c.p.optmgmt_ack.MGMT_flags, T_SUCCESS);
		CHECK_EQ(m2->c.p.optmgmt_ack.OPT_length, (int)sizeof(good_opt));
		/* XTI_SNDBUF is not association-related: the T_CONN_RES
		 * options passed it on to the caller, but did not set it */
		struct opt1 got;
		memcpy(&got, m2->c.b + m2->c.p.optmgmt_ack.OPT_offset,
		       sizeof(got));
		CHECK_EQ(got.v, 65536);
		tm_free(m2);
	}
	/* the listener still owns its address */
	int x = open_ep(dev);
	CHECK_RET(send_bind(x, "listener", 0), 0);
	expect_err(x, T_BIND_REQ, TADDRBUSY, 0);
	close(x);
	/* the acceptor, disconnected, is idle and can unbind */
	CHECK_RET(send_discon(acc, -1, NULL, -1), 0);
	expect_ok(acc, T_DISCON_REQ);
	expect_discon_ind(c, ECONNRESET, -1, NULL, -1);
	CHECK_EQ(ep_state(acc), TS_IDLE);
	CHECK_RET(send_simple(acc, T_UNBIND_REQ, 0), 0);
	expect_ok(acc, T_UNBIND_REQ);
	/* the caller can call again; this time onto a bound acceptor */
	bind_ok(acc, "acceptor", 0);
	CHECK_RET(send_conn_req(c, "listener", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	seq = expect_conn_ind(l, "caller", NULL, -1);
	CHECK_RET(send_conn_res(l, ep_token(acc), seq, NULL, 0, NULL, -1), 0);
	expect_ok(l, T_CONN_RES);
	expect_conn_con(c, "acceptor", NULL, -1);
	check_addr(acc, "acceptor", "caller");
	check_pair(acc, c, "again");
	CHECK(tm_none(l) && tm_none(c) && tm_none(acc));
	tm_free(m);
	close(c);
	expect_discon_ind(acc, ECONNRESET, -1, NULL, -1);
	close(acc);
	close(l);
}

static void test_self_accept(void)
{
	int fds[3];

	make_conn(DEV_ORD, "self", true, fds);
	CHECK_EQ(ep_state(fds[2]), TS_DATA_XFER);
	check_pair(fds[0], fds[2], "self");
	/* a listener busy in its connection refuses */
	int d = open_ep(DEV_ORD);
	bind_ok(d, NULL, 0);
	CHECK_RET(send_conn_req(d, "self", NULL, 0, NULL, -1), 0);
	expect_ok(d, T_CONN_REQ);
	expect_discon_ind(d, ECONNREFUSED, -1, NULL, -1);
	CHECK_EQ(ep_state(d), TS_IDLE);
	/* and listens again when it is over */
	CHECK_RET(send_discon(fds[0], -1, NULL, -1), 0);
	expect_ok(fds[0], T_DISCON_REQ);
	expect_discon_ind(fds[2], ECONNRESET, -1, NULL, -1);
	CHECK_EQ(ep_state(fds[2]), TS_IDLE);
	CHECK_RET(send_conn_req(d, "self", NULL, 0, NULL, -1), 0);
	expect_ok(d, T_CONN_REQ);
	CHECK(expect_conn_ind(fds[2], NULL, NULL, -1) > 0);
	close(d);
	close_conn(fds);
}

static void test_refusals(void)
{
	int l = open_ep(DEV_COTS), c = open_ep(DEV_COTS);
	int c2 = open_ep(DEV_COTS), n = open_ep(DEV_COTS);
	t_scalar_t seq;

	bind_ok(c, "c1", 0);
	bind_ok(c2, "c2", 0);
	/* nobody at the address */
	CHECK_RET(send_conn_req(c, "nobody", NULL, 0, "x", 1), 0);
	expect_ok(c, T_CONN_REQ);
	expect_discon_ind(c, ECONNREFUSED, -1, NULL, -1);
	CHECK_EQ(ep_state(c), TS_IDLE);
	/* bound, but not listening */
	bind_ok(n, "notlistening", 0);
	CHECK_RET(send_conn_req(c, "notlistening", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	expect_discon_ind(c, ECONNREFUSED, -1, NULL, -1);
	CHECK(tm_none(n));
	/* queue of one, full */
	bind_ok(l, "busy", 1);
	CHECK_RET(send_conn_req(c, "busy", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	seq = expect_conn_ind(l, "c1", NULL, -1);
	CHECK_RET(send_conn_req(c2, "busy", NULL, 0, NULL, -1), 0);
	expect_ok(c2, T_CONN_REQ);
	expect_discon_ind(c2, ECONNREFUSED, -1, NULL, -1);
	CHECK_EQ(ep_state(c2), TS_IDLE);
	/* refused by the listener, with data */
	CHECK_RET(send_discon(l, seq + 1000, NULL, -1), 0);
	expect_err(l, T_DISCON_REQ, TBADSEQ, 0);
	CHECK_EQ(ep_state(l), TS_WRES_CIND);
	char big[1100];
	memset(big, 'd', sizeof(big));
	CHECK_RET(send_discon(l, seq, big, 1025), 0);
	expect_err(l, T_DISCON_REQ, TBADDATA, 0);
	CHECK_RET(send_discon(l, seq, "no thanks", 9), 0);
	expect_ok(l, T_DISCON_REQ);
	expect_discon_ind(c, ECONNREFUSED, -1, "no thanks", 9);
	CHECK_EQ(ep_state(l), TS_IDLE);
	CHECK_EQ(ep_state(c), TS_IDLE);
	/* T_DISCON_REQ in TS_IDLE: TOUTSTATE */
	CHECK_RET(send_discon(l, seq, NULL, -1), 0);
	expect_err(l, T_DISCON_REQ, TOUTSTATE, 0);
	/* the caller withdraws, with data: the listener hears ECONNABORTED
	 * and the SEQ_number of the indication */
	CHECK_RET(send_conn_req(c, "busy", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	seq = expect_conn_ind(l, "c1", NULL, -1);
	CHECK_RET(send_discon(c, -1, "bye", 3), 0);
	expect_ok(c, T_DISCON_REQ);
	expect_discon_ind(l, ECONNABORTED, seq, "bye", 3);
	CHECK_EQ(ep_state(c), TS_IDLE);
	CHECK_EQ(ep_state(l), TS_IDLE);
	/* answering it now: TOUTSTATE (nothing pending) */
	CHECK_RET(send_conn_res(l, 0, seq, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TOUTSTATE, 0);
	CHECK(tm_none(l) && tm_none(c) && tm_none(c2));
	close(l);
	close(c);
	close(c2);
	close(n);
}

static void test_conn_req_errors(void)
{
	int c = open_ep(DEV_COTS), l = open_ep(DEV_COTS);
	char big[1100];

	memset(big, 'a', sizeof(big));
	/* unbound */
	CHECK_RET(send_conn_req(c, "x", NULL, 0, NULL, -1), 0);
	expect_err(c, T_CONN_REQ, TOUTSTATE, 0);
	bind_ok(c, NULL, 0);
	/* a listener does not call */
	bind_ok(l, "lsn", 1);
	CHECK_RET(send_conn_req(l, "x", NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_REQ, TOUTSTATE, 0);
	/* addresses: empty, too long */
	CHECK_RET(send_conn_req(c, "", NULL, 0, NULL, -1), 0);
	expect_err(c, T_CONN_REQ, TBADADDR, 0);
	big[65] = '\0';
	CHECK_RET(send_conn_req(c, big, NULL, 0, NULL, -1), 0);
	expect_err(c, T_CONN_REQ, TBADADDR, 0);
	/* connect data: 1024 bytes is the limit */
	CHECK_RET(send_conn_req(c, "lsn", NULL, 0, big, 1025), 0);
	expect_err(c, T_CONN_REQ, TBADDATA, 0);
	/* options that are no option buffer */
	CHECK_RET(send_conn_req(c, "lsn", &bad_opt, sizeof(bad_opt), NULL,
				-1), 0);
	expect_err(c, T_CONN_REQ, TBADOPT, 0);
	CHECK_EQ(ep_state(c), TS_IDLE);
	CHECK(tm_none(l));
	/* all 1024 bytes go through */
	CHECK_RET(send_conn_req(c, "lsn", NULL, 0, big, 1024), 0);
	expect_ok(c, T_CONN_REQ);
	t_scalar_t seq = expect_conn_ind(l, NULL, big, 1024);
	/* waiting for the answer: TOUTSTATE */
	CHECK_RET(send_conn_req(c, "lsn", NULL, 0, NULL, -1), 0);
	expect_err(c, T_CONN_REQ, TOUTSTATE, 0);
	CHECK_RET(send_conn_res(l, 0, seq, NULL, 0, NULL, -1), 0);
	expect_ok(l, T_CONN_RES);
	expect_conn_con(c, "lsn", NULL, -1);
	/* connected: TOUTSTATE */
	CHECK_RET(send_conn_req(c, "lsn", NULL, 0, NULL, -1), 0);
	expect_err(c, T_CONN_REQ, TOUTSTATE, 0);
	close(c);
	expect_discon_ind(l, ECONNRESET, -1, NULL, -1);
	close(l);
}

static void test_conn_res_errors(void)
{
	int l = open_ep(DEV_COTS), c = open_ep(DEV_COTS), c2 = open_ep(DEV_COTS);
	int ql = open_ep(DEV_COTS), busy[3], gone = open_ep(DEV_COTS);
	int ord = open_ep(DEV_ORD), acc = open_ep(DEV_COTS);
	t_uscalar_t gone_id = ep_token(gone);
	t_scalar_t s1, s2;
	char big[1100];

	memset(big, 'b', sizeof(big));
	close(gone);
	bind_ok(l, "L", 2);
	bind_ok(c, "C", 0);
	bind_ok(c2, "C2", 0);
	/* nothing pending: TOUTSTATE */
	CHECK_RET(send_conn_res(l, 0, 1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TOUTSTATE, 0);
	CHECK_RET(send_conn_req(c, "L", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	s1 = expect_conn_ind(l, "C", NULL, -1);
	/* waiting for an answer: no unbind either */
	CHECK_RET(send_simple(l, T_UNBIND_REQ, 0), 0);
	expect_err(l, T_UNBIND_REQ, TOUTSTATE, 0);
	CHECK_RET(send_simple(c, T_UNBIND_REQ, 0), 0);
	expect_err(c, T_UNBIND_REQ, TOUTSTATE, 0);
	CHECK_RET(send_conn_req(c2, "L", NULL, 0, NULL, -1), 0);
	expect_ok(c2, T_CONN_REQ);
	s2 = expect_conn_ind(l, "C2", NULL, -1);
	CHECK(s1 != s2);
	/* an endpoint that is no more */
	CHECK_RET(send_conn_res(l, gone_id, s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TBADF, 0);
	CHECK_RET(send_conn_res(l, 0x7ffffffc, s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TBADF, 0);
	/* an endpoint of another provider */
	CHECK_RET(send_conn_res(l, ep_token(ord), s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TPROVMISMATCH, 0);
	/* an acceptor with a queue of its own */
	bind_ok(ql, "QL", 1);
	CHECK_RET(send_conn_res(l, ep_token(ql), s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TRESQLEN, 0);
	/* an acceptor already connected */
	make_conn(DEV_COTS, "elsewhere", false, busy);
	CHECK_RET(send_conn_res(l, ep_token(busy[1]), s1, NULL, 0, NULL, -1),
		  0);
	expect_err(l, T_CONN_RES, TOUTSTATE, 0);
	/* a sequence number never given */
	CHECK_RET(send_conn_res(l, ep_token(acc), s1 + s2 + 77, NULL, 0,
				NULL, -1), 0);
	expect_err(l, T_CONN_RES, TBADSEQ, 0);
	/* too much data */
	CHECK_RET(send_conn_res(l, ep_token(acc), s1, NULL, 0, big, 1025), 0);
	expect_err(l, T_CONN_RES, TBADDATA, 0);
	/* bad options */
	CHECK_RET(send_conn_res(l, ep_token(acc), s1, &bad_opt,
				sizeof(bad_opt), NULL, -1), 0);
	expect_err(l, T_CONN_RES, TBADOPT, 0);
	/* onto the listener itself with another indication pending */
	CHECK_RET(send_conn_res(l, 0, s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TINDOUT, 0);
	CHECK_RET(send_conn_res(l, ep_token(l), s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TINDOUT, 0);
	/* nothing changed by any of that */
	CHECK_EQ(ep_state(l), TS_WRES_CIND);
	CHECK_EQ(ep_state(c), TS_WCON_CREQ);
	CHECK_EQ(ep_state(acc), TS_UNBND);
	CHECK(tm_none(c) && tm_none(c2) && tm_none(acc));
	/* now the right way, 1024 bytes of data */
	CHECK_RET(send_conn_res(l, ep_token(acc), s1, NULL, 0, big, 1024), 0);
	expect_ok(l, T_CONN_RES);
	expect_conn_con(c, "L", big, 1024);
	CHECK_EQ(ep_state(l), TS_WRES_CIND);
	/* the last one may go onto the listener itself */
	CHECK_RET(send_conn_res(l, 0, s2, NULL, 0, NULL, -1), 0);
	expect_ok(l, T_CONN_RES);
	expect_conn_con(c2, "L", NULL, -1);
	check_pair(c, acc, "one");
	check_pair(c2, l, "two");
	close_conn(busy);
	close(l);
	close(c);
	close(c2);
	close(ql);
	close(ord);
	close(acc);
}

static void test_many_pending(void)
{
	enum { N = 3 };
	int l = open_ep(DEV_ORD), c[N], a[N];
	t_scalar_t seq[N];
	char name[N][8];

	bind_ok(l, "many", 3);
	for (int i = 0; i < N; i++) {
		c[i] = open_ep(DEV_ORD);
		a[i] = open_ep(DEV_ORD);
		snprintf(name[i], sizeof(name[i]), "call%d", i);
		bind_ok(c[i], name[i], 0);
		CHECK_RET(send_conn_req(c[i], "many", NULL, 0, name[i], 5), 0);
		expect_ok(c[i], T_CONN_REQ);
		seq[i] = expect_conn_ind(l, name[i], name[i], 5);
	}
	CHECK(seq[0] != seq[1] && seq[1] != seq[2] && seq[0] != seq[2]);
	/* a fourth: the queue of 3 is full */
	int d = open_ep(DEV_ORD);
	bind_ok(d, NULL, 0);
	CHECK_RET(send_conn_req(d, "many", NULL, 0, NULL, -1), 0);
	expect_ok(d, T_CONN_REQ);
	expect_discon_ind(d, ECONNREFUSED, -1, NULL, -1);
	close(d);
	/* accept 2, 0, 1: each caller gets its own acceptor */
	int order[N] = { 2, 0, 1 };
	for (int k = 0; k < N; k++) {
		int i = order[k];
		CHECK_RET(send_conn_res(l, ep_token(a[i]), seq[i], NULL, 0,
					name[i], 5), 0);
		expect_ok(l, T_CONN_RES);
		expect_conn_con(c[i], "many", name[i], 5);
		CHECK_EQ(ep_state(l), k == N - 1 ? TS_IDLE : TS_WRES_CIND);
	}
	for (int i = 0; i < N; i++)
		check_pair(c[i], a[i], name[i]);
	for (int i = 0; i < N; i++) {
		close(c[i]);
		expect_discon_ind(a[i], ECONNRESET, -1, NULL, -1);
		close(a[i]);
	}
	close(l);
}

static void test_close_during_setup(void)
{
	int l = open_ep(DEV_COTS), c = open_ep(DEV_COTS), c2 = open_ep(DEV_COTS);
	int acc = open_ep(DEV_COTS);
	t_scalar_t s1;

	bind_ok(l, "closing", 2);
	bind_ok(c, NULL, 0);
	bind_ok(c2, NULL, 0);
	/* the caller closes before the answer */
	CHECK_RET(send_conn_req(c, "closing", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	s1 = expect_conn_ind(l, NULL, NULL, -1);
	close(c);
	expect_discon_ind(l, ECONNABORTED, s1, NULL, -1);
	CHECK_EQ(ep_state(l), TS_IDLE);
	CHECK_RET(send_conn_res(l, 0, s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TOUTSTATE, 0);
	/* the acceptor closes before T_CONN_RES: TBADF */
	CHECK_RET(send_conn_req(c2, "closing", NULL, 0, NULL, -1), 0);
	expect_ok(c2, T_CONN_REQ);
	s1 = expect_conn_ind(l, NULL, NULL, -1);
	t_uscalar_t id = ep_token(acc);
	close(acc);
	CHECK_RET(send_conn_res(l, id, s1, NULL, 0, NULL, -1), 0);
	expect_err(l, T_CONN_RES, TBADF, 0);
	/* the listener closes with an indication pending */
	close(l);
	expect_discon_ind(c2, ECONNREFUSED, -1, NULL, -1);
	CHECK_EQ(ep_state(c2), TS_IDLE);
	/* and its address is free */
	int l2 = open_ep(DEV_COTS);
	bind_ok(l2, "closing", 1);
	close(l2);
	close(c2);
}

/* A listener that does not read, and callers that connect and withdraw
 * again and again (each withdrawal frees its place in the queue of
 * pending indications): what waits at the listener stays bounded by its
 * read side's high water mark -- a connect finding it full is refused
 * as one finding the queue full -- instead of a T_CONN_IND and a
 * T_DISCON_IND, each with 1 KiB of data, per round without end. */
static void test_withdraw_flood(void)
{
	int l = open_ep(DEV_COTS), c = open_ep(DEV_COTS), n = 0, refused = 0;
	char data[1024];
	struct tmsg *m = tm_new();

	memset(data, 'w', sizeof(data));
	bind_ok(l, "flood", 1);
	bind_ok(c, NULL, 0);
	for (int k = 0; k < 3000; k++) {
		CHECK_RET(send_conn_req(c, "flood", NULL, 0, data,
					(int)sizeof(data)), 0);
		if (!expect_ok(c, T_CONN_REQ))
			break;
		if (nread(c, NULL) > 0) {	/* refused at once */
			expect_discon_ind(c, ECONNREFUSED, -1, NULL, -1);
			refused++;
			continue;
		}
		CHECK_RET(send_discon(c, -1, NULL, -1), 0);
		if (!expect_ok(c, T_DISCON_REQ))
			break;
	}
	while (tm_get(l, m, false, 50))
		n++;
	CHECK(refused > 0);
	CHECK(n < 1000);	/* (about 64 KiB of them: 2 per round) */
	printf("withdraw flood: %d waiting at the listener, %d refused\n", n,
	       refused);
	tm_free(m);
	close(c);
	close(l);
}

int main(void)
{
	test_full_setup(DEV_COTS);
	test_full_setup(DEV_ORD);
	test_self_accept();
	test_refusals();
	test_conn_req_errors();
	test_conn_res_errors();
	test_many_pending();
	test_close_during_setup();
	test_withdraw_flood();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
