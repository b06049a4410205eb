/*
 * test_xti_garbage -- what a broken provider sends.  The decoding
 * functions (xti_decode.c) directly: every primitive the library reads,
 * too short, of the wrong type, and with each (offset, length) pair just
 * inside, just outside, negative, overflowing, or over the structure
 * itself; values out of range (service type, state, sizes, TLI_error).
 * Then whole calls through a ferry-clip provider answering garbage:
 * malformed acks of TI_* ioctls (timod's EPROTO or the library's check),
 * T_OK_ACK/T_ERROR_ACK that are short or carry impossible errors, and
 * indications with regions outside their control part, too short, of an
 * unknown type, or without any: each gives TPROTO with errno EPROTO,
 * never a crash, and the endpoint goes on working with the next good
 * message.  A provider that goes away (hangup): TSYSERR.
 */
#include "ferry.h"

#include "xti_impl.h"

#define S(x)	(int)sizeof(struct x)

static void test_regions(void)
{
	struct {
		struct T_conn_ind ci;
		char room[32];
	} b;
	struct xti_dec_conn c;
	int len = S(T_conn_ind) + 32;
	static const struct { t_scalar_t off, len; int ok; } r[] = {
		{ 24, 32, 1 },		/* exactly the rest */
		{ 24, 33, 0 },		/* one past */
		{ 56, 0, 1 },		/* empty, offset at the end */
		{ 9999, 0, 1 },		/* empty: the offset does not matter */
		{ 56, 1, 0 },
		{ 20, 4, 0 },		/* over the structure */
		{ 0, 4, 0 },
		{ -4, 4, 0 },
		{ 24, -1, 0 },
		{ 24, 0x7fffffff, 0 },	/* overflows */
		{ 0x7fffffff, 0x7fffffff, 0 },
		{ 40, 16, 1 },
	};

	memset(&b, 0, sizeof(b));
	b.ci.PRIM_type = T_CONN_IND;
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		b.ci.SRC_offset = r[i].off;
		b.ci.SRC_length = r[i].len;
		b.ci.OPT_offset = 0;
		b.ci.OPT_length = 0;
		CHECK_EQ(xti_dec_conn_ind(&b, len, &c), r[i].ok ? 0 : -1);
		if (r[i].ok && r[i].len > 0) {
			CHECK_PTR(c.addr.p, (char *)&b + r[i].off);
			CHECK_EQ(c.addr.len, r[i].len);
		}
		/* the same pair as the options */
		b.ci.SRC_length = 0;
		b.ci.OPT_offset = r[i].off;
		b.ci.OPT_length = r[i].len;
		CHECK_EQ(xti_dec_conn_ind(&b, len, &c), r[i].ok ? 0 : -1);
	}
	b.ci.OPT_length = 0;
	CHECK_EQ(xti_dec_conn_ind(&b, S(T_conn_ind) - 1, &c), -1);
	CHECK_EQ(xti_dec_conn_ind(&b, -1, &c), -1);
	CHECK_EQ(xti_dec_conn_ind(NULL, 100, &c), -1);
	b.ci.PRIM_type = T_CONN_CON;
	CHECK_EQ(xti_dec_conn_ind(&b, len, &c), -1);
	CHECK_EQ(xti_dec_conn_con(&b, len, &c), 0);
}

static void test_decoders(void)
{
	union {
		struct T_info_ack ia;
		struct T_ok_ack ok;
		struct T_error_ack ea;
		struct T_bind_ack ba;
		struct T_optmgmt_ack oa;
		struct T_addr_ack aa;
		struct T_capability_ack ca;
		struct ti_sync_ack sa;
		struct T_discon_ind di;
		struct T_data_ind da;
		struct T_optdata_ind od;
		struct T_unitdata_ind ui;
		struct T_uderror_ind ue;
		char room[128];
	} u;
	struct T_info_ack ia;
	struct xti_dec_ack a;
	struct xti_region r1, r2;
	unsigned qlen;
	t_scalar_t fl, prim;
	struct T_capability_ack ca;
	struct ti_sync_ack sa;
	struct xti_dec_data dd;
	struct xti_dec_udata du;
	int reason, seq;

	CHECK_EQ(xti_dec_prim("ab", 2, &prim), -1);
	/* T_INFO_ACK */
	u.ia = fi_info(T_COTS, TS_IDLE);
	CHECK_EQ(xti_dec_info_ack(&u, S(T_info_ack), &ia), 0);
	CHECK_EQ(xti_dec_info_ack(&u, S(T_info_ack) - 1, &ia), -1);
	u.ia.SERV_type = 4;
	CHECK_EQ(xti_dec_info_ack(&u, S(T_info_ack), &ia), -1);
	u.ia = fi_info(T_COTS, TS_NOSTATES);
	CHECK_EQ(xti_dec_info_ack(&u, S(T_info_ack), &ia), -1);
	u.ia = fi_info(T_COTS, TS_IDLE);
	u.ia.TSDU_size = -3;
	CHECK_EQ(xti_dec_info_ack(&u, S(T_info_ack), &ia), -1);
	u.ia = fi_info(T_COTS, TS_IDLE);
	u.ia.PRIM_type = T_BIND_ACK;
	CHECK_EQ(xti_dec_info_ack(&u, S(T_info_ack), &ia), -1);
	/* acks */
	u.ok = (struct T_ok_ack){ T_OK_ACK, T_CONN_REQ };
	CHECK_EQ(xti_dec_ok_ack(&u, S(T_ok_ack), &a), 0);
	CHECK_EQ(a.req, T_CONN_REQ);
	CHECK_EQ(xti_dec_ok_ack(&u, 4, &a), -1);
	u.ea = (struct T_error_ack){ T_ERROR_ACK, T_CONN_REQ, TBADADDR, 0 };
	CHECK_EQ(xti_dec_ok_ack(&u, S(T_error_ack), &a), 0);
	CHECK_EQ(a.tli, TBADADDR);
	CHECK_EQ(xti_dec_ok_ack(&u, S(T_error_ack) - 1, &a), -1);
	u.ea.TLI_error = 0;
	CHECK_EQ(xti_dec_ok_ack(&u, S(T_error_ack), &a), -1);
	u.ea.TLI_error = TPROTO + 1;
	CHECK_EQ(xti_dec_ok_ack(&u, S(T_error_ack), &a), -1);
	u.ea.PRIM_type = T_INFO_ACK;
	CHECK_EQ(xti_dec_ok_ack(&u, S(T_error_ack), &a), -1);
	/* bind, optmgmt, addr */
	memset(&u, 0, sizeof(u));
	u.ba = (struct T_bind_ack){ T_BIND_ACK, 4, 16, 5 };
	CHECK_EQ(xti_dec_bind_ack(&u, 20, &r1, &qlen), 0);
	CHECK_EQ(qlen, 5);
	CHECK_EQ(xti_dec_bind_ack(&u, 19, &r1, &qlen), -1);
	u.ba.ADDR_offset = 12;
	CHECK_EQ(xti_dec_bind_ack(&u, 20, &r1, &qlen), -1);
	u.oa = (struct T_optmgmt_ack){ T_OPTMGMT_ACK, 8, 16, T_SUCCESS };
	CHECK_EQ(xti_dec_optmgmt_ack(&u, 24, &r1, &fl), 0);
	CHECK_EQ(fl, T_SUCCESS);
	CHECK_EQ(xti_dec_optmgmt_ack(&u, 23, &r1, &fl), -1);
	u.aa = (struct T_addr_ack){ T_ADDR_ACK, 2, 20, 2, 22 };
	CHECK_EQ(xti_dec_addr_ack(&u, 24, &r1, &r2), 0);
	CHECK_EQ(xti_dec_addr_ack(&u, 23, &r1, &r2), -1);
	u.aa.LOCADDR_offset = -20;
	CHECK_EQ(xti_dec_addr_ack(&u, 24, &r1, &r2), -1);
	/* capability: the fields its bits name */
	memset(&u, 0, sizeof(u));
	u.ca.PRIM_type = T_CAPABILITY_ACK;
	u.ca.CAP_bits1 = TC1_ACCEPTOR_ID;
	u.ca.ACCEPTOR_id = 9;
	CHECK_EQ(xti_dec_capability_ack(&u, S(T_capability_ack), &ca), 0);
	CHECK_EQ(ca.ACCEPTOR_id, 9);
	CHECK_EQ(xti_dec_capability_ack(&u, S(T_capability_ack) - 4, &ca), -1);
	u.ca.CAP_bits1 = 0;
	CHECK_EQ(xti_dec_capability_ack(&u, 8, &ca), 0);
	u.ca.CAP_bits1 = TC1_INFO;
	CHECK_EQ(xti_dec_capability_ack(&u, S(T_capability_ack), &ca), -1);
	u.ca.INFO_ack = fi_info(T_CLTS, TS_UNBND);
	CHECK_EQ(xti_dec_capability_ack(&u, S(T_capability_ack), &ca), 0);
	CHECK_EQ(xti_dec_capability_ack(&u, 7, &ca), -1);
	/* TI_SYNC */
	memset(&u, 0, sizeof(u));
	u.sa.tsa_info = fi_info(T_COTS, TS_DATA_XFER);
	u.sa.tsa_qlen = 3;
	CHECK_EQ(xti_dec_sync_ack(&u, sizeof(u.sa), &sa), 0);
	CHECK_EQ(sa.tsa_qlen, 3);
	CHECK_EQ(xti_dec_sync_ack(&u, sizeof(u.sa) - 1, &sa), -1);
	u.sa.tsa_info.CURRENT_state = -1;
	CHECK_EQ(xti_dec_sync_ack(&u, sizeof(u.sa), &sa), -1);
	/* indications */
	u.di = (struct T_discon_ind){ T_DISCON_IND, 5, 6 };
	CHECK_EQ(xti_dec_discon_ind(&u, S(T_discon_ind), &reason, &seq), 0);
	CHECK(reason == 5 && seq == 6);
	CHECK_EQ(xti_dec_discon_ind(&u, S(T_discon_ind) - 1, &reason, &seq),
		 -1);
	u.da = (struct T_data_ind){ T_EXDATA_IND, 1 };
	CHECK_EQ(xti_dec_data_ind(&u, 8, &dd), 0);
	CHECK(dd.exp && dd.more);
	CHECK_EQ(xti_dec_data_ind(&u, 7, &dd), -1);
	u.da.PRIM_type = T_ORDREL_IND;
	CHECK_EQ(xti_dec_data_ind(&u, 8, &dd), -1);
	memset(&u, 0, sizeof(u));
	u.od = (struct T_optdata_ind){ T_OPTDATA_IND, T_ODF_MORE, 4, 16 };
	CHECK_EQ(xti_dec_data_ind(&u, 20, &dd), 0);
	CHECK(!dd.exp && dd.more && dd.opt.len == 4);
	CHECK_EQ(xti_dec_data_ind(&u, 19, &dd), -1);
	u.ui = (struct T_unitdata_ind){ T_UNITDATA_IND, 4, 20, 4, 24 };
	CHECK_EQ(xti_dec_unitdata_ind(&u, 28, &du), 0);
	CHECK_EQ(xti_dec_unitdata_ind(&u, 27, &du), -1);
	u.ui.OPT_offset = 8;
	CHECK_EQ(xti_dec_unitdata_ind(&u, 28, &du), -1);
	u.ue = (struct T_uderror_ind){ T_UDERROR_IND, 4, 24, 0, 0, 33 };
	CHECK_EQ(xti_dec_uderror_ind(&u, 28, &du), 0);
	CHECK_EQ(du.error, 33);
	CHECK_EQ(xti_dec_uderror_ind(&u, 23, &du), -1);
	/* events */
	CHECK_EQ(xti_dec_event(NULL, -1, false), T_DATA);
	CHECK_EQ(xti_dec_event(NULL, -1, true), T_EXDATA);
	CHECK_EQ(xti_dec_event(&u, 2, false), -1);
	prim = 77;
	CHECK_EQ(xti_dec_event(&prim, 4, false), -1);
	prim = T_OPTDATA_IND;
	CHECK_EQ(xti_dec_event(&prim, 4, false), -1);
}

/* A message with just a primitive type, or a raw control part. */
static struct fmsg *raw(struct fmsg *m, const void *ctl, int clen, int hipri)
{
	fm_clear(m);
	m->hipri = hipri;
	fm_ctl(m, ctl, clen);
	return m;
}

static void test_ioctl_answers(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_UNBND);
	struct fmsg w, a;
	struct T_bind_ack ba = { T_BIND_ACK, 4, 8, 0 };	/* over itself */
	struct T_info_ack ia = fi_info(T_COTS, TS_UNBND);
	char bad[16];
	struct t_bind ret;
	struct t_info ti;

	memset(&ret, 0, sizeof(ret));
	ret.addr.buf = bad;
	ret.addr.maxlen = sizeof(bad);
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
		     raw(&a, &ba, sizeof(ba), 1));
	CHECK_TPROTO(t_bind(f->xfd, NULL, &ret));
	ferry_sync(f);
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
		     raw(&a, &ba, 8, 1));		/* short: timod */
	CHECK_TPROTO(t_bind(f->xfd, NULL, &ret));
	ferry_sync(f);
	/* a T_INFO_ACK with impossible values */
	ia.SERV_type = 9;
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	CHECK_TPROTO(t_getinfo(f->xfd, &ti));
	ferry_sync(f);
	ia = fi_info(T_COTS, 99);
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	CHECK_TPROTO(t_sync(f->xfd));
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_UNBND);		/* unchanged */
	/* a T_INFO_ACK followed by more than the library's buffer for it
	 * holds: what follows the structure goes no further (a stack
	 * overflow in t_getinfo before; the sanitizer builds see it) */
	{
		unsigned char big[FM_CTL];

		memset(big, 0x5a, sizeof(big));
		ia = fi_info(T_COTS, TS_UNBND);
		memcpy(big, &ia, sizeof(ia));
		ferry_expect(f, __LINE__, fm_info_req(&w),
			     raw(&a, big, (int)sizeof(big), 1));
		CHECK_RET(t_getinfo(f->xfd, &ti), 0);
		CHECK_EQ(ti.servtype, T_COTS);
		ferry_sync(f);
	}
	/* still works */
	ia = fi_info(T_COTS, TS_UNBND);
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	CHECK_RET(t_getinfo(f->xfd, &ti), 0);
	ferry_sync(f);
	ferry_free(f);
}

static void test_acks(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_IDLE);
	struct fmsg w, a, m;
	struct t_call sc;
	struct T_error_ack ea = { T_ERROR_ACK, T_CONN_REQ, 0, 0 };
	t_scalar_t p = T_OK_ACK;

	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = "x";
	sc.addr.len = 1;
	ferry_expect(f, __LINE__, fm_conn_req(&w, "x", 1, NULL, 0),
		     raw(&a, &p, 4, 1));
	CHECK_TPROTO(t_connect(f->xfd, &sc, NULL));
	ferry_sync(f);
	ferry_expect(f, __LINE__, fm_conn_req(&w, "x", 1, NULL, 0),
		     raw(&a, &ea, sizeof(ea), 1));
	CHECK_TPROTO(t_connect(f->xfd, &sc, NULL));
	ferry_sync(f);
	ea.TLI_error = 4000;
	ferry_expect(f, __LINE__, fm_conn_req(&w, "x", 1, NULL, 0),
		     raw(&a, &ea, sizeof(ea), 1));
	CHECK_TPROTO(t_connect(f->xfd, &sc, NULL));
	ferry_sync(f);
	/* an ack with a data part and a long control part */
	char longack[100];
	memset(longack, 0, sizeof(longack));
	memcpy(longack, &(struct T_ok_ack){ T_OK_ACK, T_CONN_REQ }, 8);
	ferry_expect(f, __LINE__, fm_conn_req(&w, "x", 1, NULL, 0),
		     fm_data(raw(&a, longack, sizeof(longack), 1), "zz", 2));
	CHECK_TPROTO(t_connect(f->xfd, &sc, NULL));
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
	/* an unsolicited ack is dropped by a reader */
	f = ferry_ep(T_COTS, TS_DATA_XFER);
	char buf[8];
	int flags;
	ferry_put(f, fm_ok_ack(&m, T_CONN_REQ));
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "after", 5));
	CHECK_RET(t_look(f->xfd), 0);			/* (an ack: none) */
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 5);
	CHECK_MEM(buf, "after", 5);
	CHECK_RET(set_nonblock(f->xfd, true), 0);
	ferry_put(f, fm_error_ack(&m, T_CONN_REQ, TBADADDR, 0));
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TNODATA);
	ferry_free(f);
}

static void test_indications(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_DATA_XFER);
	struct fmsg m;
	char buf[32];
	int flags;
	struct T_conn_con cc = { T_CONN_CON, 4, 100, 0, 0 };
	struct T_discon_ind di = { T_DISCON_IND, 1, -1 };
	t_scalar_t unknown = 77, dat = T_DATA_IND;

	/* garbage, then a good message: TPROTO, then the data */
	ferry_put(f, fm_data(raw(&m, &dat, 4, 0), "x", 1));	/* short */
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "good", 4));
	CHECK_TPROTO(t_rcv(f->xfd, buf, sizeof(buf), &flags));
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 4);
	ferry_put(f, raw(&m, &unknown, 4, 0));
	CHECK_TPROTO(t_look(f->xfd));
	CHECK_TPROTO(t_rcv(f->xfd, buf, sizeof(buf), &flags));
	CHECK_RET(t_look(f->xfd), 0);
	ferry_put(f, raw(&m, "ab", 2, 0));			/* 2 bytes */
	CHECK_TPROTO(t_look(f->xfd));
	CHECK_TPROTO(t_rcv(f->xfd, buf, sizeof(buf), &flags));
	ferry_put(f, raw(&m, &cc, sizeof(cc), 0));	/* wrong state too */
	CHECK_TPROTO(t_rcv(f->xfd, buf, sizeof(buf), &flags));
	/* a short disconnect: held as it came; t_rcvdis finds it bad */
	ferry_put(f, raw(&m, &di, 8, 0));
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TLOOK);
	CHECK_TPROTO(t_rcvdis(f->xfd, NULL));
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "again", 5));
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 5);
	ferry_free(f);

	/* a T_CONN_CON whose address is outside it */
	f = ferry_ep(T_COTS, TS_WCON_CREQ);
	ferry_put(f, raw(&m, &cc, sizeof(cc), 0));
	CHECK_TPROTO(t_rcvconnect(f->xfd, NULL));
	CHECK_STATE(f->xfd, T_OUTCON);
	ferry_put(f, fm_conn_con(&m, "ok", 2, NULL, 0));
	CHECK_RET(t_rcvconnect(f->xfd, NULL), 0);
	ferry_free(f);

	/* a T_CONN_IND with a negative length; one with a huge data part */
	struct T_conn_ind ci = { T_CONN_IND, -1, 24, 0, 0, 1 };
	struct t_call c;
	static char big[2000];
	f = ferry_ep(T_COTS, TS_UNBND);
	struct fmsg w, a;
	struct t_bind b = { { 0, 0, NULL }, 5 };
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 5),
		     fm_bind_ack(&a, NULL, 0, 5));
	CHECK_RET(t_bind(f->xfd, &b, NULL), 0);
	ferry_sync(f);
	ferry_put(f, raw(&m, &ci, sizeof(ci), 0));
	memset(&c, 0, sizeof(c));
	CHECK_TPROTO(t_listen(f->xfd, &c));
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_put(f, fm_data(fm_conn_ind(&m, "a", 1, NULL, 0, 2), big,
			     sizeof(big)));
	c.udata.buf = buf;
	c.udata.maxlen = sizeof(buf);
	CHECK_TERR(t_listen(f->xfd, &c), TBUFOVFLW);	/* (over CDATA) */
	CHECK_STATE(f->xfd, T_INCON);
	ferry_free(f);

	/* connectionless */
	f = ferry_ep(T_CLTS, TS_IDLE);
	struct T_unitdata_ind ui = { T_UNITDATA_IND, 4, 16, 0, 0 };
	struct T_uderror_ind ue = { T_UDERROR_IND, 0, 0, 4, 10, 0 };
	struct t_unitdata ud;
	memset(&ud, 0, sizeof(ud));
	ud.udata.buf = buf;
	ud.udata.maxlen = sizeof(buf);
	ferry_put(f, fm_data(raw(&m, &ui, sizeof(ui), 0), "d", 1));
	CHECK_TPROTO(t_rcvudata(f->xfd, &ud, &flags));
	ferry_put(f, raw(&m, &ue, sizeof(ue), 0));
	CHECK_TERR(t_rcvudata(f->xfd, &ud, &flags), TLOOK);
	CHECK_TPROTO(t_rcvuderr(f->xfd, NULL));
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "s", 1, NULL, 0), "ok", 2));
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_EQ(ud.udata.len, 2);
	ferry_free(f);
}

static void test_hangup(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_DATA_XFER);
	char buf[8];
	int flags, fd;

	fd = f->pfd;
	f->pfd = dup(f->xfd);		/* (ferry_free closes it) */
	close(fd);
	errno = 0;
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), -1);
	CHECK_EQ(t_errno, TSYSERR);
	ferry_free(f);
}

int main(void)
{
	test_regions();
	test_decoders();
	test_ioctl_answers();
	test_acks();
	test_indications();
	test_hangup();
	T_DONE();
}
