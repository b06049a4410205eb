/*
 * test_xti_connect -- t_connect and t_rcvconnect against a ferry-clip
 * provider.  Synchronous: the exact T_CONN_REQ (destination, options at
 * the next aligned offset, user data as the data part), T_OK_ACK, then
 * T_CONN_CON whose responding address, options and data land in rcvcall
 * (T_DATAXFER; TBUFOVFLW when rcvcall is too small, connected anyway;
 * rcvcall NULL).  A T_DISCON_IND instead of the confirmation: TLOOK,
 * T_OUTCON, t_look() T_DISCONNECT, t_rcvdis() gives its reason and data
 * (T_IDLE).  Every T_ERROR_ACK error comes back (state T_IDLE).
 * TBADADDR, TBADOPT, TBADDATA for values beyond the provider's sizes
 * (nothing sent); TLOOK on a listener with a connection indication
 * pending.  Asynchronous (O_NONBLOCK by fcntl): TNODATA and T_OUTCON
 * after the ack, t_rcvconnect() TNODATA until the confirmation, then
 * T_DATAXFER.  A signal while waiting for the confirmation: TSYSERR
 * EINTR, T_OUTCON, and t_rcvconnect() completes later.
 */
#include "ferry.h"

struct opt1 {
	struct t_opthdr h;
	t_scalar_t v;
};

static const struct opt1 opt = { { sizeof(struct opt1), XTI_GENERIC,
				   XTI_RCVBUF, 0 }, 4096 };

static char rab[32], rob[64], rdb[64];

static void call_in(struct t_call *c)
{
	memset(c, 0, sizeof(*c));
	c->addr.buf = rab;
	c->addr.maxlen = sizeof(rab);
	c->opt.buf = rob;
	c->opt.maxlen = sizeof(rob);
	c->udata.buf = rdb;
	c->udata.maxlen = sizeof(rdb);
}

static void call_out(struct t_call *c, const char *addr, bool with_opt,
		     const char *data)
{
	memset(c, 0, sizeof(*c));
	c->addr.buf = (char *)addr;
	c->addr.len = (unsigned)strlen(addr);
	if (with_opt) {
		c->opt.buf = (char *)&opt;
		c->opt.len = sizeof(opt);
	}
	if (data != NULL) {
		c->udata.buf = (char *)data;
		c->udata.len = (unsigned)strlen(data);
	}
}

static void test_sync(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_IDLE);
	struct fstep s;
	struct t_call sc, rc;

	call_out(&sc, "peer", true, "hello");
	call_in(&rc);
	fstep_init(&s);
	s.line = __LINE__;
	fm_data(fm_conn_req(&s.want, "peer", 4, &opt, sizeof(opt)), "hello", 5);
	fm_ok_ack(&s.rep[s.nrep++], T_CONN_REQ);
	fm_data(fm_conn_con(&s.rep[s.nrep++], "responder", 9, &opt,
			    sizeof(opt)), "welcome", 7);
	ferry_push(f, &s);
	CHECK_RET(t_connect(f->xfd, &sc, &rc), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_DATAXFER);
	CHECK_EQ(rc.addr.len, 9);
	CHECK_MEM(rab, "responder", 9);
	CHECK_EQ(rc.opt.len, sizeof(opt));
	CHECK_MEM(rob, &opt, sizeof(opt));
	CHECK_EQ(rc.udata.len, 7);
	CHECK_MEM(rdb, "welcome", 7);
	CHECK_TERR(t_connect(f->xfd, &sc, &rc), TOUTSTATE);
	FERRY_NOTHING(f);
	/* a disconnect after the connection: held by t_rcv, then taken
	 * (the library's held list starts afresh with the connection) */
	struct fmsg m;
	char buf[8];
	int flags;
	ferry_put(f, fm_discon_ind(&m, 5, -1));
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TLOOK);
	CHECK_RET(t_look(f->xfd), T_DISCONNECT);
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TLOOK);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_IDLE);
	CHECK_RET(t_look(f->xfd), 0);
	ferry_free(f);

	/* rcvcall NULL; no options, no data */
	f = ferry_ep(T_COTS, TS_IDLE);
	call_out(&sc, "p", false, NULL);
	fstep_init(&s);
	s.line = __LINE__;
	fm_conn_req(&s.want, "p", 1, NULL, 0);
	fm_ok_ack(&s.rep[s.nrep++], T_CONN_REQ);
	fm_conn_con(&s.rep[s.nrep++], "p", 1, NULL, 0);
	ferry_push(f, &s);
	CHECK_RET(t_connect(f->xfd, &sc, NULL), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_free(f);

	/* rcvcall too small: TBUFOVFLW, connected */
	f = ferry_ep(T_COTS, TS_IDLE);
	call_in(&rc);
	rc.addr.maxlen = 3;
	fstep_init(&s);
	s.line = __LINE__;
	fm_conn_req(&s.want, "p", 1, NULL, 0);
	fm_ok_ack(&s.rep[s.nrep++], T_CONN_REQ);
	fm_conn_con(&s.rep[s.nrep++], "responder", 9, NULL, 0);
	ferry_push(f, &s);
	CHECK_TERR(t_connect(f->xfd, &sc, &rc), TBUFOVFLW);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_free(f);
}

static void test_refused(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_IDLE);
	struct fstep s;
	struct t_call sc, rc;
	struct t_discon d;
	char db[32];

	call_out(&sc, "peer", false, NULL);
	call_in(&rc);
	fstep_init(&s);
	s.line = __LINE__;
	fm_conn_req(&s.want, "peer", 4, NULL, 0);
	fm_ok_ack(&s.rep[s.nrep++], T_CONN_REQ);
	fm_data(fm_discon_ind(&s.rep[s.nrep++], 61, -1), "nope", 4);
	ferry_push(f, &s);
	CHECK_TERR(t_connect(f->xfd, &sc, &rc), TLOOK);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_OUTCON);
	CHECK_RET(t_look(f->xfd), T_DISCONNECT);
	CHECK_TERR(t_rcvconnect(f->xfd, NULL), TLOOK);
	memset(&d, 0, sizeof(d));
	d.udata.buf = db;
	d.udata.maxlen = sizeof(db);
	CHECK_RET(t_rcvdis(f->xfd, &d), 0);
	CHECK_EQ(d.reason, 61);
	CHECK_EQ(d.sequence, -1);
	CHECK_EQ(d.udata.len, 4);
	CHECK_MEM(db, "nope", 4);
	CHECK_STATE(f->xfd, T_IDLE);
	CHECK_RET(t_look(f->xfd), 0);
	CHECK_TERR(t_rcvdis(f->xfd, &d), TOUTSTATE);
	ferry_free(f);
}

static void test_errors(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_IDLE);
	struct fmsg w, a, m;
	struct t_call sc;
	char big[200];
	static const int errs[] = { TBADADDR, TBADOPT, TACCES, TADDRBUSY,
				    TBADDATA, TOUTSTATE };

	call_out(&sc, "peer", false, NULL);
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		ferry_expect(f, __LINE__, fm_conn_req(&w, "peer", 4, NULL, 0),
			     fm_error_ack(&a, T_CONN_REQ, errs[i], 0));
		CHECK_TERR(t_connect(f->xfd, &sc, NULL), errs[i]);
		ferry_sync(f);
		CHECK_STATE(f->xfd, T_IDLE);
	}
	ferry_expect(f, __LINE__, fm_conn_req(&w, "peer", 4, NULL, 0),
		     fm_error_ack(&a, T_CONN_REQ, TSYSERR, ECONNREFUSED));
	CHECK_TSYS(t_connect(f->xfd, &sc, NULL), ECONNREFUSED);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	/* beyond the provider's sizes: nothing sent */
	memset(big, 'b', sizeof(big));
	sc.udata.buf = big;
	sc.udata.len = 65;		/* CDATA_size 64 */
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TBADDATA);
	sc.udata.len = 64;
	sc.addr.buf = big;
	sc.addr.len = 33;		/* ADDR_size 32 */
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TBADADDR);
	sc.addr.len = 4;
	sc.opt.buf = big;
	sc.opt.len = 129;		/* OPT_size 128 */
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TBADOPT);
	CHECK_TSYS(t_connect(f->xfd, NULL, NULL), EFAULT);
	FERRY_NOTHING(f);
	CHECK_STATE(f->xfd, T_IDLE);
	/* an ack of another primitive is the provider's error */
	call_out(&sc, "peer", false, NULL);
	ferry_expect(f, __LINE__, fm_conn_req(&w, "peer", 4, NULL, 0),
		     fm_ok_ack(&a, T_DISCON_REQ));
	CHECK_TPROTO(t_connect(f->xfd, &sc, NULL));
	ferry_sync(f);
	ferry_free(f);

	/* a listener with a connection indication waiting: TLOOK */
	f = ferry_ep(T_COTS, TS_UNBND);
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 1),
		     fm_bind_ack(&a, "L", 1, 1));
	struct t_bind b = { { 0, 0, NULL }, 1 };
	CHECK_RET(t_bind(f->xfd, &b, NULL), 0);
	ferry_sync(f);
	ferry_put(f, fm_conn_ind(&m, "caller", 6, NULL, 0, 3));
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TLOOK);
	CHECK_RET(t_look(f->xfd), T_LISTEN);
	FERRY_NOTHING(f);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);

	/* connectionless: not supported */
	f = ferry_ep(T_CLTS, TS_IDLE);
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TNOTSUPPORT);
	CHECK_TERR(t_rcvconnect(f->xfd, NULL), TNOTSUPPORT);
	ferry_free(f);
}

static void test_async(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_IDLE);
	struct fmsg w, a, m;
	struct t_call sc, rc;

	CHECK_RET(set_nonblock(f->xfd, true), 0);
	call_out(&sc, "peer", false, "hi");
	ferry_expect(f, __LINE__,
		     fm_data(fm_conn_req(&w, "peer", 4, NULL, 0), "hi", 2),
		     fm_ok_ack(&a, T_CONN_REQ));
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TNODATA);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_OUTCON);
	CHECK_TERR(t_rcvconnect(f->xfd, NULL), TNODATA);
	CHECK_RET(t_look(f->xfd), 0);
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TOUTSTATE);
	ferry_put(f, fm_data(fm_conn_con(&m, "peer!", 5, &opt, sizeof(opt)),
			     "ok", 2));
	CHECK_RET(t_look(f->xfd), T_CONNECT);
	call_in(&rc);
	CHECK_RET(t_rcvconnect(f->xfd, &rc), 0);
	CHECK_EQ(rc.addr.len, 5);
	CHECK_MEM(rab, "peer!", 5);
	CHECK_EQ(rc.opt.len, sizeof(opt));
	CHECK_EQ(rc.udata.len, 2);
	CHECK_MEM(rdb, "ok", 2);
	CHECK_STATE(f->xfd, T_DATAXFER);
	CHECK_TERR(t_rcvconnect(f->xfd, &rc), TOUTSTATE);
	ferry_free(f);

	/* refused while asynchronous */
	f = ferry_ep(T_COTS, TS_IDLE);
	CHECK_RET(set_nonblock(f->xfd, true), 0);
	call_out(&sc, "peer", false, NULL);
	ferry_expect(f, __LINE__, fm_conn_req(&w, "peer", 4, NULL, 0),
		     fm_ok_ack(&a, T_CONN_REQ));
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TNODATA);
	ferry_sync(f);
	ferry_put(f, fm_discon_ind(&m, 111, -1));
	CHECK_TERR(t_rcvconnect(f->xfd, &rc), TLOOK);
	CHECK_STATE(f->xfd, T_OUTCON);
	CHECK_RET(t_look(f->xfd), T_DISCONNECT);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_IDLE);
	/* TBUFOVFLW from t_rcvconnect: connected anyway */
	ferry_expect(f, __LINE__, fm_conn_req(&w, "peer", 4, NULL, 0),
		     fm_ok_ack(&a, T_CONN_REQ));
	CHECK_TERR(t_connect(f->xfd, &sc, NULL), TNODATA);
	ferry_sync(f);
	ferry_put(f, fm_data(fm_conn_con(&m, "p", 1, NULL, 0), "12345", 5));
	call_in(&rc);
	rc.udata.maxlen = 4;
	CHECK_TERR(t_rcvconnect(f->xfd, &rc), TBUFOVFLW);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_free(f);
}

static void test_eintr(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_IDLE);
	struct fmsg w, a, m;
	struct t_call sc;
	struct kicker k;

	catch_sig(SIGUSR1, false);
	call_out(&sc, "peer", false, NULL);
	ferry_expect(f, __LINE__, fm_conn_req(&w, "peer", 4, NULL, 0),
		     fm_ok_ack(&a, T_CONN_REQ));
	kicker_start(&k, SIGUSR1);
	CHECK_TSYS(t_connect(f->xfd, &sc, NULL), EINTR);
	kicker_stop(&k);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_OUTCON);
	ferry_put(f, fm_conn_con(&m, "peer", 4, NULL, 0));
	CHECK_RET(t_rcvconnect(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_free(f);
}

int main(void)
{
	test_sync();
	test_refused();
	test_errors();
	test_async();
	test_eintr();
	T_DONE();
}
