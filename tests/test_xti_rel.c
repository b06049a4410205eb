/*
 * test_xti_rel -- the end of a connection against a ferry-clip provider.
 *
 * Orderly release: t_sndrel's T_ORDREL_REQ (T_DATAXFER -> T_OUTREL,
 * T_INREL -> T_IDLE), t_rcvrel of a T_ORDREL_IND (T_DATAXFER -> T_INREL,
 * T_OUTREL -> T_IDLE), TNOREL when none is first, TLOOK while a
 * disconnect is pending, TFLOW when asynchronous and flow controlled,
 * TNOTSUPPORT on T_COTS; with data: t_sndreldata's T_ORDREL_REQ with the
 * data, TBADDATA beyond DDATA_size, t_rcvreldata's data (TBUFOVFLW
 * after the state changed); without ORDRELDATA data to send is TBADDATA
 * and the calls are t_sndrel and t_rcvrel (XNS 5.2).
 *
 * Abortive release: t_snddis in T_DATAXFER flushes what waits to be sent
 * and sends T_DISCON_REQ (SEQ_number -1, the data) acknowledged by
 * T_OK_ACK (T_IDLE), provider errors leave the state, TBADDATA, TLOOK;
 * in T_OUTCON too.  t_rcvdis: reason and data, TBUFOVFLW (T_IDLE, the
 * reason and sequence given all the same), a NULL discon, TNODIS when the disconnect is not first.
 */
#include "ferry.h"

static void test_orderly(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_DATA_XFER);
	struct fmsg w, m;
	char buf[16];
	int flags;

	CHECK_TERR(t_rcvrel(f->xfd), TNOREL);
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "d", 1));
	CHECK_TERR(t_rcvrel(f->xfd), TNOREL);	/* data first */
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 1);
	CHECK_RET(t_sndrel(f->xfd), 0);
	FERRY_GOT(f, fm_ordrel_req(&w));
	CHECK_STATE(f->xfd, T_OUTREL);
	CHECK_TERR(t_sndrel(f->xfd), TOUTSTATE);
	CHECK_TERR(t_snd(f->xfd, "x", 1, 0), TOUTSTATE);
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "more", 4));
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 4);
	ferry_put(f, fm_ordrel_ind(&m));
	CHECK_RET(t_look(f->xfd), T_ORDREL);
	CHECK_RET(t_rcvrel(f->xfd), 0);
	CHECK_STATE(f->xfd, T_IDLE);
	CHECK_RET(t_look(f->xfd), 0);
	FERRY_NOTHING(f);
	ferry_free(f);

	/* the other way round */
	f = ferry_ep(T_COTS_ORD, TS_DATA_XFER);
	ferry_put(f, fm_ordrel_ind(&m));
	CHECK_RET(t_rcvrel(f->xfd), 0);
	CHECK_STATE(f->xfd, T_INREL);
	CHECK_TERR(t_rcvrel(f->xfd), TOUTSTATE);
	CHECK_RET(t_snd(f->xfd, "last", 4, 0), 4);
	FERRY_GOT(f, fm_data(fm_plain(&w), "last", 4));
	CHECK_RET(t_sndrel(f->xfd), 0);
	FERRY_GOT(f, fm_ordrel_req(&w));
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);

	/* a disconnect comes first */
	f = ferry_ep(T_COTS_ORD, TS_DATA_XFER);
	ferry_put(f, fm_discon_ind(&m, 1, -1));
	CHECK_TERR(t_rcvrel(f->xfd), TLOOK);
	CHECK_TERR(t_sndrel(f->xfd), TLOOK);
	CHECK_TERR(t_rcvreldata(f->xfd, NULL), TLOOK);
	FERRY_NOTHING(f);
	/* held by t_rcv, and an orderly release behind it */
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TLOOK);
	ferry_put(f, fm_ordrel_ind(&m));
	CHECK_TERR(t_rcvrel(f->xfd), TLOOK);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);

	/* T_COTS has no orderly release */
	f = ferry_ep(T_COTS, TS_DATA_XFER);
	CHECK_TERR(t_sndrel(f->xfd), TNOTSUPPORT);
	CHECK_TERR(t_rcvrel(f->xfd), TNOTSUPPORT);
	CHECK_TERR(t_sndreldata(f->xfd, NULL), TNOTSUPPORT);
	CHECK_TERR(t_rcvreldata(f->xfd, NULL), TNOTSUPPORT);
	FERRY_NOTHING(f);
	ferry_free(f);
}

static void test_reldata(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_DATA_XFER);
	struct fmsg w, m;
	struct t_discon d;
	char db[8], big[40];

	memset(&d, 0, sizeof(d));
	d.udata.buf = "bye";
	d.udata.len = 3;
	memset(big, 0, sizeof(big));
	struct t_discon bd = { { 0, 33, big }, 0, 0 };
	CHECK_TERR(t_sndreldata(f->xfd, &bd), TBADDATA);	/* DDATA 32 */
	CHECK_RET(t_sndreldata(f->xfd, &d), 0);
	FERRY_GOT(f, fm_data(fm_ordrel_req(&w), "bye", 3));
	CHECK_STATE(f->xfd, T_OUTREL);
	ferry_put(f, fm_data(fm_ordrel_ind(&m), "ciao!", 5));
	memset(&d, 0, sizeof(d));
	d.udata.buf = db;
	d.udata.maxlen = 4;
	CHECK_TERR(t_rcvreldata(f->xfd, &d), TBUFOVFLW);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);

	f = ferry_ep(T_COTS_ORD, TS_DATA_XFER);
	CHECK_RET(t_sndreldata(f->xfd, NULL), 0);
	FERRY_GOT(f, fm_ordrel_req(&w));
	ferry_put(f, fm_data(fm_ordrel_ind(&m), "ciao!", 5));
	d.udata.maxlen = sizeof(db);
	d.udata.len = 0;
	CHECK_RET(t_rcvreldata(f->xfd, &d), 0);
	CHECK_EQ(d.udata.len, 5);
	CHECK_MEM(db, "ciao!", 5);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);

	/* without ORDRELDATA (XNS 5.2): data to send is TBADDATA; without
	 * data they are t_sndrel and t_rcvrel (no data, reason 0) */
	struct T_info_ack ia = fi_info(T_COTS_ORD, TS_DATA_XFER);
	ia.PROVIDER_flag = 0;
	f = ferry_new();
	CHECK_RET(ferry_sync_ep(f, &ia), T_DATAXFER);
	CHECK_EQ(d.udata.len, 5);
	CHECK_TERR(t_sndreldata(f->xfd, &d), TBADDATA);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_put(f, fm_ordrel_ind(&m));
	d.udata.len = 9;
	d.reason = 9;
	CHECK_RET(t_rcvreldata(f->xfd, &d), 0);
	CHECK_EQ(d.udata.len, 0);
	CHECK_EQ(d.reason, 0);
	CHECK_STATE(f->xfd, T_INREL);
	d.udata.len = 0;
	CHECK_RET(t_sndreldata(f->xfd, &d), 0);
	FERRY_GOT(f, fm_ordrel_req(&w));
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
}

static void test_sndrel_flow(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_DATA_XFER);
	static char buf[1024];
	struct fmsg m;
	int n = 0;

	CHECK_RET(set_nonblock(f->xfd, true), 0);
	while (t_snd(f->xfd, buf, sizeof(buf), 0) > 0 && n < 100000)
		n++;
	CHECK_EQ(t_errno, TFLOW);
	CHECK_TERR(t_sndrel(f->xfd), TFLOW);
	CHECK_STATE(f->xfd, T_DATAXFER);
	while (fm_read(f->pfd, &m, 0) == 0)
		n--;
	CHECK_EQ(n, 0);
	CHECK_RET(t_look(f->xfd), T_GODATA);
	CHECK_RET(t_sndrel(f->xfd), 0);
	CHECK_STATE(f->xfd, T_OUTREL);
	ferry_free(f);
}

static void test_snddis(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_DATA_XFER);
	struct fmsg w, a, m;
	struct t_call c;
	char big[40];

	/* data not yet taken by the provider is flushed */
	CHECK_RET(t_snd(f->xfd, "queued", 6, 0), 6);
	CHECK_RET(t_snd(f->xfd, "queued", 6, 0), 6);
	CHECK_RET(nread(f->pfd, NULL), 2);
	memset(&c, 0, sizeof(c));
	c.udata.buf = "abort";
	c.udata.len = 5;
	struct fstep s;
	fstep_init(&s);
	s.line = __LINE__;
	s.wait_first = true;	/* the data must be flushed */
	fm_data(fm_discon_req(&s.want, -1), "abort", 5);
	fm_error_ack(&s.rep[s.nrep++], T_DISCON_REQ, TOUTSTATE, 0);
	ferry_push(f, &s);
	CHECK_TERR(t_snddis(f->xfd, &c), TOUTSTATE);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_expect(f, __LINE__, fm_data(fm_discon_req(&w, -1), "abort", 5),
		     fm_ok_ack(&a, T_DISCON_REQ));
	CHECK_RET(t_snddis(f->xfd, &c), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	CHECK_TERR(t_snddis(f->xfd, &c), TOUTSTATE);
	FERRY_NOTHING(f);
	ferry_free(f);

	f = ferry_ep(T_COTS, TS_DATA_XFER);
	memset(big, 0, sizeof(big));
	c.udata.buf = big;
	c.udata.len = 33;		/* DDATA_size 32 */
	CHECK_TERR(t_snddis(f->xfd, &c), TBADDATA);
	ferry_put(f, fm_discon_ind(&m, 2, -1));
	CHECK_TERR(t_snddis(f->xfd, NULL), TLOOK);
	FERRY_NOTHING(f);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	ferry_free(f);

	/* in T_OUTCON, no data */
	f = ferry_ep(T_COTS, TS_WCON_CREQ);
	CHECK_STATE(f->xfd, T_OUTCON);
	ferry_expect(f, __LINE__, fm_discon_req(&w, -1),
		     fm_ok_ack(&a, T_DISCON_REQ));
	CHECK_RET(t_snddis(f->xfd, NULL), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
}

static void test_rcvdis(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_DATA_XFER);
	struct fmsg m;
	struct t_discon d;
	char db[8], buf[8];
	int flags;

	memset(&d, 0, sizeof(d));
	d.udata.buf = db;
	d.udata.maxlen = 2;
	CHECK_TERR(t_rcvdis(f->xfd, &d), TNODIS);
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "x", 1));
	ferry_put(f, fm_data(fm_discon_ind(&m, 77, -1), "reason", 6));
	CHECK_TERR(t_rcvdis(f->xfd, &d), TNODIS);	/* data first */
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 1);
	d.reason = 0;
	d.sequence = 5;
	CHECK_TERR(t_rcvdis(f->xfd, &d), TBUFOVFLW);
	CHECK_EQ(d.reason, 77);		/* given all the same */
	CHECK_EQ(d.sequence, -1);
	CHECK_STATE(f->xfd, T_IDLE);
	CHECK_RET(t_look(f->xfd), 0);
	ferry_free(f);

	f = ferry_ep(T_COTS, TS_WREQ_ORDREL);
	CHECK_STATE(f->xfd, T_INREL);
	ferry_put(f, fm_data(fm_discon_ind(&m, 78, -1), "reason", 6));
	d.udata.maxlen = sizeof(db);
	CHECK_RET(t_rcvdis(f->xfd, &d), 0);
	CHECK_EQ(d.reason, 78);
	CHECK_EQ(d.udata.len, 6);
	CHECK_MEM(db, "reason", 6);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
}

int main(void)
{
	test_orderly();
	test_reldata();
	test_sndrel_flow();
	test_snddis();
	test_rcvdis();
	T_DONE();
}
