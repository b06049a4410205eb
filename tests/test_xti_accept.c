/*
 * test_xti_accept -- the passive side against a ferry-clip provider:
 * t_listen, t_accept, t_snddis and t_rcvdis of outstanding connection
 * indications.
 *
 * t_listen: a T_CONN_IND's address, options, data and sequence number in
 * call (T_INCON), TBUFOVFLW with the indication taken (T_INCON, the
 * sequence returned and usable), TBADQLEN on an endpoint bound with qlen
 * 0, TQFULL with qlen indications outstanding, TNODATA when
 * asynchronous, TLOOK for a T_DISCON_IND of an outstanding indication
 * (t_rcvdis: rcvdis2 to T_IDLE, rcvdis3 staying T_INCON), TSYSERR EINTR.
 *
 * t_accept on the listener itself: the exact T_CONN_RES (ACCEPTOR_id 0,
 * options, sequence, data), T_DATAXFER; TINDOUT with more than one
 * indication outstanding; TBADSEQ; TLOOK with another indication or a
 * disconnect waiting; provider errors.  Onto another endpoint: its
 * ACCEPTOR_id from TI_CAPABILITY (T_CAPABILITY_REQ asking
 * TC1_ACCEPTOR_ID) in the T_CONN_RES; accept2 (listener to T_IDLE),
 * accept3 (stays T_INCON), the acceptor in T_DATAXFER, an unbound
 * acceptor allowed; TRESQLEN, TOUTSTATE, TBADF, TPROVMISMATCH (other
 * service type, other driver).  t_snddis of an indication: T_DISCON_REQ
 * with its sequence and data, snddis1/snddis2, TBADSEQ.
 */
#include "ferry.h"

static char ab[32], ob[64], db[64];

static void call_in(struct t_call *c)
{
	memset(c, 0, sizeof(*c));
	c->addr.buf = ab;
	c->addr.maxlen = sizeof(ab);
	c->opt.buf = ob;
	c->opt.maxlen = sizeof(ob);
	c->udata.buf = db;
	c->udata.maxlen = sizeof(db);
}

/* An endpoint bound with qlen (the provider agrees). */
static struct ferry *listener(int serv, unsigned qlen)
{
	struct ferry *f = ferry_ep(serv, TS_UNBND);
	struct fmsg w, a;
	struct t_bind b;

	memset(&b, 0, sizeof(b));
	b.qlen = qlen;
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, qlen),
		     fm_bind_ack(&a, "L", 1, qlen));
	CHECK_RET(t_bind(f->xfd, &b, NULL), 0);
	ferry_sync(f);
	return f;
}

static void ind(struct ferry *f, const char *who, int seq)
{
	struct fmsg m;

	ferry_put(f, fm_data(fm_conn_ind(&m, who, (int)strlen(who), "OPT!", 4,
					 seq), "data", 4));
}

static void test_listen(void)
{
	struct ferry *f = listener(T_COTS, 2);
	struct t_call c;
	struct fmsg m;
	struct t_discon d;

	ind(f, "caller", 7);
	call_in(&c);
	CHECK_RET(t_look(f->xfd), T_LISTEN);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	CHECK_EQ(c.addr.len, 6);
	CHECK_MEM(ab, "caller", 6);
	CHECK_EQ(c.opt.len, 4);
	CHECK_MEM(ob, "OPT!", 4);
	CHECK_EQ(c.udata.len, 4);
	CHECK_MEM(db, "data", 4);
	CHECK_EQ(c.sequence, 7);
	CHECK_STATE(f->xfd, T_INCON);
	/* second, with TBUFOVFLW: still taken, sequence given */
	ind(f, "second-caller", 8);
	call_in(&c);
	c.addr.maxlen = 4;
	c.sequence = -5;
	CHECK_TERR(t_listen(f->xfd, &c), TBUFOVFLW);
	CHECK_EQ(c.sequence, 8);
	CHECK_STATE(f->xfd, T_INCON);
	/* two outstanding, qlen 2 */
	CHECK_TERR(t_listen(f->xfd, &c), TQFULL);
	/* the provider disconnects 7: TLOOK from t_listen?  It is full:
	 * t_look and t_rcvdis see it */
	ferry_put(f, fm_data(fm_discon_ind(&m, 104, 7), "bye", 3));
	CHECK_RET(t_look(f->xfd), T_DISCONNECT);
	memset(&d, 0, sizeof(d));
	d.udata.buf = db;
	d.udata.maxlen = sizeof(db);
	CHECK_RET(t_rcvdis(f->xfd, &d), 0);
	CHECK_EQ(d.reason, 104);
	CHECK_EQ(d.sequence, 7);
	CHECK_EQ(d.udata.len, 3);
	CHECK_STATE(f->xfd, T_INCON);		/* rcvdis3: 8 is left */
	CHECK_TERR(t_rcvdis(f->xfd, &d), TNODIS);
	/* a disconnect met by t_listen: held, TLOOK */
	ferry_put(f, fm_discon_ind(&m, 105, 8));
	call_in(&c);
	CHECK_TERR(t_listen(f->xfd, &c), TLOOK);
	CHECK_RET(t_look(f->xfd), T_DISCONNECT);
	CHECK_TERR(t_listen(f->xfd, &c), TLOOK);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_IDLE);		/* rcvdis2 */
	CHECK_RET(t_look(f->xfd), 0);
	/* asynchronous: nothing there */
	CHECK_RET(set_nonblock(f->xfd, true), 0);
	CHECK_TERR(t_listen(f->xfd, &c), TNODATA);
	CHECK_RET(set_nonblock(f->xfd, false), 0);
	/* a signal while waiting */
	struct kicker k;
	catch_sig(SIGUSR1, false);
	kicker_start(&k, SIGUSR1);
	CHECK_TSYS(t_listen(f->xfd, &c), EINTR);
	kicker_stop(&k);
	CHECK_STATE(f->xfd, T_IDLE);
	CHECK_TSYS(t_listen(f->xfd, NULL), EFAULT);
	FERRY_NOTHING(f);
	ferry_free(f);

	/* qlen 0 */
	f = listener(T_COTS_ORD, 0);
	CHECK_TERR(t_listen(f->xfd, &c), TBADQLEN);
	ferry_free(f);
}

static void test_accept_self(void)
{
	struct ferry *f = listener(T_COTS_ORD, 4);
	struct fmsg w, a, m;
	struct t_call c, ac;
	struct fstep s;

	ind(f, "A", 11);
	call_in(&c);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	memset(&ac, 0, sizeof(ac));
	ac.sequence = 12;
	CHECK_TERR(t_accept(f->xfd, f->xfd, &ac), TBADSEQ);
	/* another indication waiting: TLOOK */
	ind(f, "B", 12);
	ac.sequence = 11;
	CHECK_TERR(t_accept(f->xfd, f->xfd, &ac), TLOOK);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	CHECK_EQ(c.sequence, 12);
	/* two outstanding: not on the listener itself */
	CHECK_TERR(t_accept(f->xfd, f->xfd, &ac), TINDOUT);
	/* refuse 12 with data: snddis2 (11 left) */
	memset(&c, 0, sizeof(c));
	c.sequence = 12;
	c.udata.buf = "no";
	c.udata.len = 2;
	ferry_expect(f, __LINE__, fm_data(fm_discon_req(&w, 12), "no", 2),
		     fm_ok_ack(&a, T_DISCON_REQ));
	CHECK_RET(t_snddis(f->xfd, &c), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_INCON);
	CHECK_TERR(t_snddis(f->xfd, &c), TBADSEQ);
	CHECK_TERR(t_snddis(f->xfd, NULL), TBADSEQ);
	/* a disconnect waiting: TLOOK */
	ferry_put(f, fm_discon_ind(&m, 1, 11));
	CHECK_TERR(t_accept(f->xfd, f->xfd, &ac), TLOOK);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_IDLE);
	FERRY_NOTHING(f);
	/* now accept one on the listener: T_CONN_RES, ACCEPTOR_id 0 */
	ind(f, "C", 13);
	call_in(&c);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	memset(&ac, 0, sizeof(ac));
	ac.sequence = 13;
	ac.opt.buf = "OPTS";
	ac.opt.len = 4;
	ac.udata.buf = "welcome";
	ac.udata.len = 7;
	fstep_init(&s);
	s.line = __LINE__;
	fm_data(fm_conn_res(&s.want, 0, "OPTS", 4, 13), "welcome", 7);
	fm_ok_ack(&s.rep[s.nrep++], T_CONN_RES);
	ferry_push(f, &s);
	CHECK_RET(t_accept(f->xfd, f->xfd, &ac), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_DATAXFER);		/* accept1 */
	CHECK_TERR(t_accept(f->xfd, f->xfd, &ac), TOUTSTATE);
	ferry_free(f);

	/* provider errors; TBADDATA */
	f = listener(T_COTS, 1);
	ind(f, "D", 14);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	memset(&ac, 0, sizeof(ac));
	ac.sequence = 14;
	static const int errs[] = { TBADSEQ, TBADOPT, TACCES, TBADDATA,
				    TRESADDR, TRESQLEN, TBADF };
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		ferry_expect(f, __LINE__, fm_conn_res(&w, 0, NULL, 0, 14),
			     fm_error_ack(&a, T_CONN_RES, errs[i], 0));
		CHECK_TERR(t_accept(f->xfd, f->xfd, &ac), errs[i]);
		ferry_sync(f);
		CHECK_STATE(f->xfd, T_INCON);
	}
	char big[100];
	memset(big, 0, sizeof(big));
	ac.udata.buf = big;
	ac.udata.len = 65;			/* CDATA_size 64 */
	CHECK_TERR(t_accept(f->xfd, f->xfd, &ac), TBADDATA);
	CHECK_TSYS(t_accept(f->xfd, f->xfd, NULL), EFAULT);
	FERRY_NOTHING(f);
	ferry_free(f);
}

/* accept onto another endpoint r, whose provider says ACCEPTOR_id id */
static void accept_on(struct ferry *f, struct ferry *r, int seq, unsigned id)
{
	struct fmsg w, a;
	struct t_call ac;

	memset(&ac, 0, sizeof(ac));
	ac.sequence = seq;
	ferry_expect(r, __LINE__, fm_cap_req(&w, TC1_ACCEPTOR_ID),
		     fm_cap_ack(&a, TC1_ACCEPTOR_ID, NULL, id));
	ferry_expect(f, __LINE__, fm_conn_res(&w, id, NULL, 0, seq),
		     fm_ok_ack(&a, T_CONN_RES));
	CHECK_RET(t_accept(f->xfd, r->xfd, &ac), 0);
	ferry_sync(r);
	ferry_sync(f);
}

static void test_accept_other(void)
{
	struct ferry *f = listener(T_COTS, 3);
	struct ferry *r1 = ferry_ep(T_COTS, TS_IDLE);
	struct ferry *r2 = ferry_ep(T_COTS, TS_UNBND);
	struct ferry *r3 = listener(T_COTS, 1);
	struct ferry *r4 = ferry_ep(T_COTS, TS_DATA_XFER);
	struct ferry *r5 = ferry_ep(T_CLTS, TS_IDLE);
	struct t_call c, ac;

	ind(f, "A", 21);
	ind(f, "B", 22);
	call_in(&c);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	memset(&ac, 0, sizeof(ac));
	ac.sequence = 21;
	/* acceptors that cannot take it */
	CHECK_TERR(t_accept(f->xfd, r3->xfd, &ac), TRESQLEN);
	CHECK_TERR(t_accept(f->xfd, r4->xfd, &ac), TOUTSTATE);
	CHECK_TERR(t_accept(f->xfd, r5->xfd, &ac), TPROVMISMATCH);
	CHECK_TERR(t_accept(f->xfd, r5->pfd, &ac), TBADF);
	CHECK_TERR(t_accept(f->xfd, -1, &ac), TBADF);
	ac.sequence = 99;
	CHECK_TERR(t_accept(f->xfd, r1->xfd, &ac), TBADSEQ);
	FERRY_NOTHING(f);
	FERRY_NOTHING(r1);
	/* accept3: two outstanding, the listener stays T_INCON */
	accept_on(f, r1, 21, 0x1234);
	CHECK_STATE(f->xfd, T_INCON);
	CHECK_STATE(r1->xfd, T_DATAXFER);
	/* accept2 onto an unbound endpoint: the listener goes T_IDLE */
	accept_on(f, r2, 22, 0x5678);
	CHECK_STATE(f->xfd, T_IDLE);
	CHECK_STATE(r2->xfd, T_DATAXFER);
	ferry_free(r1);
	ferry_free(r2);
	ferry_free(r3);
	ferry_free(r4);
	ferry_free(r5);
	ferry_free(f);
}

/* an acceptor on another driver (the loop driver) */
static void test_mismatch(void)
{
	struct ferry *f = listener(T_COTS, 1);
	int a = open("/dev/streams/clone/loop", O_RDWR);
	int b = open("/dev/streams/loop/1", O_RDWR);
	struct ferry *r;
	struct T_info_ack ia = fi_info(T_COTS, TS_IDLE);
	struct t_call c, ac;

	REQUIRE(a >= 0 && b >= 0);
	r = ferry_new_fds(a, b);
	CHECK_RET(ferry_sync_ep(r, &ia), T_IDLE);
	ind(f, "A", 31);
	call_in(&c);
	CHECK_RET(t_listen(f->xfd, &c), 0);
	memset(&ac, 0, sizeof(ac));
	ac.sequence = 31;
	CHECK_TERR(t_accept(f->xfd, r->xfd, &ac), TPROVMISMATCH);
	FERRY_NOTHING(f);
	CHECK_STATE(f->xfd, T_INCON);
	ferry_free(r);
	ferry_free(f);
}

int main(void)
{
	test_listen();
	test_accept_self();
	test_accept_other();
	test_mismatch();
	T_DONE();
}
