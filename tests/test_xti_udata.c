/*
 * test_xti_udata -- connectionless data against a ferry-clip provider.
 *
 * t_sndudata: the exact T_UNITDATA_REQ (destination after the structure,
 * options at the next aligned offset, the data part), zero-length
 * datagrams only with T_SENDZERO, TBADDATA beyond TSDU_size, TBADADDR and
 * TBADOPT beyond ADDR_size and OPT_size, TLOOK with a T_UDERROR_IND
 * pending, TFLOW when asynchronous and flow controlled.
 *
 * t_rcvudata: source address, options and data of a T_UNITDATA_IND; a
 * short data buffer gives the datagram in pieces with T_MORE, address
 * and options only with the first; TBUFOVFLW when the address or options
 * do not fit, and the datagram is gone; TNODATA; TLOOK when a
 * T_UDERROR_IND comes, which t_rcvuderr then returns (destination,
 * options, error; TNOUDERR when none; NULL uderr clears it; TBUFOVFLW);
 * TSYSERR EINTR.  t_sndvudata/t_rcvvudata gather and scatter.  All of
 * them fail TNOTSUPPORT on a connection-mode endpoint.
 */
#include "ferry.h"

static void test_snd(void)
{
	struct ferry *f = ferry_ep(T_CLTS, TS_IDLE);
	struct fmsg w, m;
	struct t_unitdata ud;
	char opt[12] = "options-1234", big[1100];

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = "dest";
	ud.addr.len = 4;
	ud.opt.buf = opt;
	ud.opt.len = sizeof(opt);
	ud.udata.buf = "dgram";
	ud.udata.len = 5;
	CHECK_RET(t_sndudata(f->xfd, &ud), 0);
	FERRY_GOT(f, fm_data(fm_unitdata_req(&w, "dest", 4, opt, sizeof(opt)),
			     "dgram", 5));
	ud.addr.buf = "d";
	ud.addr.len = 1;
	ud.opt.len = 0;
	CHECK_RET(t_sndudata(f->xfd, &ud), 0);
	FERRY_GOT(f, fm_data(fm_unitdata_req(&w, "d", 1, NULL, 0), "dgram", 5));
	ud.udata.len = 0;
	CHECK_RET(t_sndudata(f->xfd, &ud), 0);		/* T_SENDZERO */
	FERRY_GOT(f, fm_data(fm_unitdata_req(&w, "d", 1, NULL, 0), "", 0));
	CHECK_STATE(f->xfd, T_IDLE);
	/* limits */
	memset(big, 'q', sizeof(big));
	ud.udata.buf = big;
	ud.udata.len = 1025;				/* TSDU 1024 */
	CHECK_TERR(t_sndudata(f->xfd, &ud), TBADDATA);
	ud.udata.len = 1024;
	ud.addr.buf = big;
	ud.addr.len = 33;
	CHECK_TERR(t_sndudata(f->xfd, &ud), TBADADDR);
	ud.addr.len = 32;
	ud.opt.buf = big;
	ud.opt.len = 129;
	CHECK_TERR(t_sndudata(f->xfd, &ud), TBADOPT);
	CHECK_TSYS(t_sndudata(f->xfd, NULL), EFAULT);
	FERRY_NOTHING(f);
	/* an error indication pending: TLOOK */
	ferry_put(f, fm_uderror_ind(&m, "dest", 4, NULL, 0, 113));
	ud.opt.len = 0;
	CHECK_TERR(t_sndudata(f->xfd, &ud), TLOOK);
	FERRY_NOTHING(f);
	CHECK_RET(t_look(f->xfd), T_UDERR);
	struct t_uderr ue;
	char ab[8];
	memset(&ue, 0, sizeof(ue));
	ue.addr.buf = ab;
	ue.addr.maxlen = sizeof(ab);
	CHECK_RET(t_rcvuderr(f->xfd, &ue), 0);
	CHECK_EQ(ue.addr.len, 4);
	CHECK_MEM(ab, "dest", 4);
	CHECK_EQ(ue.error, 113);
	CHECK_TERR(t_rcvuderr(f->xfd, &ue), TNOUDERR);
	CHECK_RET(t_sndudata(f->xfd, &ud), 0);
	CHECK(fm_read(f->pfd, &w, 1000) == 0);
	ferry_free(f);

	/* no T_SENDZERO */
	struct T_info_ack ia = fi_info(T_CLTS, TS_IDLE);
	ia.PROVIDER_flag = 0;
	f = ferry_new();
	CHECK_RET(ferry_sync_ep(f, &ia), T_IDLE);
	ud.addr.len = 1;
	ud.udata.len = 0;
	CHECK_TERR(t_sndudata(f->xfd, &ud), TBADDATA);
	FERRY_NOTHING(f);
	/* flow control */
	CHECK_RET(set_nonblock(f->xfd, true), 0);
	ud.udata.len = 1024;
	int n = 0;
	while (t_sndudata(f->xfd, &ud) == 0 && n < 100000)
		n++;
	CHECK(n > 0);
	CHECK_EQ(t_errno, TFLOW);
	while (fm_read(f->pfd, &w, 0) == 0)
		n--;
	CHECK_EQ(n, 0);
	CHECK_RET(t_look(f->xfd), T_GODATA);
	ferry_free(f);

	/* a provider with no limit on addresses and options (T_INFINITE):
	 * an address of nearly 4 GiB makes a control part no putmsg can
	 * carry (TSYSERR ERANGE), not a wrapped size and a write past the
	 * library's buffer */
	ia = fi_info(T_CLTS, TS_IDLE);
	ia.ADDR_size = T_INFINITE;
	ia.OPT_size = T_INFINITE;
	f = ferry_new();
	CHECK_RET(ferry_sync_ep(f, &ia), T_IDLE);
	ud.addr.len = 0xfffffff0u;
	ud.opt.len = 16;
	ud.udata.len = 1;
	CHECK_TSYS(t_sndudata(f->xfd, &ud), ERANGE);
	FERRY_NOTHING(f);
	ferry_free(f);
}

static void test_rcv(void)
{
	struct ferry *f = ferry_ep(T_CLTS, TS_IDLE);
	struct fmsg m;
	struct t_unitdata ud;
	char ab[16], ob[16], db[16];
	int flags;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = ab;
	ud.addr.maxlen = sizeof(ab);
	ud.opt.buf = ob;
	ud.opt.maxlen = sizeof(ob);
	ud.udata.buf = db;
	ud.udata.maxlen = sizeof(db);
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "from", 4, "opts", 4),
			     "payload", 7));
	CHECK_RET(t_look(f->xfd), T_DATA);
	flags = -1;
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_EQ(ud.addr.len, 4);
	CHECK_MEM(ab, "from", 4);
	CHECK_EQ(ud.opt.len, 4);
	CHECK_MEM(ob, "opts", 4);
	CHECK_EQ(ud.udata.len, 7);
	CHECK_MEM(db, "payload", 7);
	CHECK_EQ(flags, 0);
	CHECK_STATE(f->xfd, T_IDLE);
	/* in pieces */
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "src", 3, NULL, 0),
			     "0123456789", 10));
	ud.udata.maxlen = 4;
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_EQ(ud.addr.len, 3);
	CHECK_EQ(ud.udata.len, 4);
	CHECK_MEM(db, "0123", 4);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_EQ(ud.addr.len, 0);
	CHECK_EQ(ud.opt.len, 0);
	CHECK_EQ(ud.udata.len, 4);
	CHECK_MEM(db, "4567", 4);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_EQ(ud.udata.len, 2);
	CHECK_MEM(db, "89", 2);
	CHECK_EQ(flags, 0);
	/* the address does not fit: TBUFOVFLW, the datagram is gone */
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "a-long-address", 14, NULL,
					     0), "lost-datagram", 13));
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "ok", 2, NULL, 0), "next", 4));
	ud.addr.maxlen = 8;
	CHECK_TERR(t_rcvudata(f->xfd, &ud, &flags), TBUFOVFLW);
	ud.udata.maxlen = sizeof(db);
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_EQ(ud.addr.len, 2);
	CHECK_EQ(ud.udata.len, 4);
	CHECK_MEM(db, "next", 4);
	/* maxlen 0: not wanted */
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "a-long-address", 14, NULL,
					     0), "x", 1));
	ud.addr.maxlen = 0;
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_EQ(ud.addr.len, 0);
	CHECK_EQ(ud.udata.len, 1);
	ud.addr.maxlen = sizeof(ab);
	/* an error indication: TLOOK, then the datagram behind it */
	ferry_put(f, fm_uderror_ind(&m, "to", 2, "o", 1, 5));
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "f", 1, NULL, 0), "after", 5));
	CHECK_TERR(t_rcvudata(f->xfd, &ud, &flags), TLOOK);
	CHECK_RET(t_look(f->xfd), T_UDERR);
	CHECK_TERR(t_rcvudata(f->xfd, &ud, &flags), TLOOK);
	struct t_uderr ue;
	memset(&ue, 0, sizeof(ue));
	ue.addr.buf = ab;
	ue.addr.maxlen = 1;
	CHECK_TERR(t_rcvuderr(f->xfd, &ue), TBUFOVFLW);
	CHECK_TERR(t_rcvuderr(f->xfd, &ue), TNOUDERR);	/* (discarded) */
	CHECK_RET(t_rcvudata(f->xfd, &ud, &flags), 0);
	CHECK_MEM(db, "after", 5);
	ferry_put(f, fm_uderror_ind(&m, "to", 2, NULL, 0, 6));
	CHECK_RET(t_rcvuderr(f->xfd, NULL), 0);
	CHECK_RET(t_look(f->xfd), 0);
	/* nothing */
	CHECK_RET(set_nonblock(f->xfd, true), 0);
	CHECK_TERR(t_rcvudata(f->xfd, &ud, &flags), TNODATA);
	CHECK_RET(set_nonblock(f->xfd, false), 0);
	struct kicker k;
	catch_sig(SIGUSR1, false);
	kicker_start(&k, SIGUSR1);
	CHECK_TSYS(t_rcvudata(f->xfd, &ud, &flags), EINTR);
	kicker_stop(&k);
	CHECK_TSYS(t_rcvudata(f->xfd, NULL, &flags), EFAULT);
	CHECK_TSYS(t_rcvudata(f->xfd, &ud, NULL), EFAULT);
	ferry_free(f);
}

static void test_vectors(void)
{
	struct ferry *f = ferry_ep(T_CLTS, TS_IDLE);
	struct fmsg w, m;
	struct t_unitdata ud;
	struct t_iovec iov[T_IOV_MAX + 1];
	char a[4], b[4], ab[8];
	int flags;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = "to";
	ud.addr.len = 2;
	iov[0].iov_base = "gat";
	iov[0].iov_len = 3;
	iov[1].iov_base = "her";
	iov[1].iov_len = 3;
	CHECK_RET(t_sndvudata(f->xfd, &ud, iov, 2), 0);
	FERRY_GOT(f, fm_data(fm_unitdata_req(&w, "to", 2, NULL, 0), "gather",
			     6));
	CHECK_TERR(t_sndvudata(f->xfd, &ud, iov, T_IOV_MAX + 1), TBADDATA);
	CHECK_TERR(t_sndvudata(f->xfd, &ud, iov, 0), TBADDATA);
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "src", 3, NULL, 0), "scatter",
			     7));
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = ab;
	ud.addr.maxlen = sizeof(ab);
	iov[0].iov_base = a;
	iov[0].iov_len = 4;
	iov[1].iov_base = b;
	iov[1].iov_len = 4;
	CHECK_RET(t_rcvvudata(f->xfd, &ud, iov, 2, &flags), 7);
	CHECK_MEM(a, "scat", 4);
	CHECK_MEM(b, "ter", 3);
	CHECK_EQ(ud.addr.len, 3);
	CHECK_EQ(flags, 0);
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "src", 3, NULL, 0), "scatter",
			     7));
	CHECK_RET(t_rcvvudata(f->xfd, &ud, iov, 1, &flags), 4);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcvvudata(f->xfd, &ud, iov, 1, &flags), 3);
	CHECK_MEM(a, "ter", 3);
	CHECK_EQ(ud.addr.len, 0);
	CHECK_EQ(flags, 0);
	CHECK_TERR(t_rcvvudata(f->xfd, &ud, iov, T_IOV_MAX + 1, &flags),
		   TBADDATA);
	FERRY_NOTHING(f);
	ferry_free(f);

	f = ferry_ep(T_COTS, TS_IDLE);
	CHECK_TERR(t_sndudata(f->xfd, &ud), TNOTSUPPORT);
	CHECK_TERR(t_rcvudata(f->xfd, &ud, &flags), TNOTSUPPORT);
	CHECK_TERR(t_rcvuderr(f->xfd, NULL), TNOTSUPPORT);
	CHECK_TERR(t_sndvudata(f->xfd, &ud, iov, 1), TNOTSUPPORT);
	CHECK_TERR(t_rcvvudata(f->xfd, &ud, iov, 1, &flags), TNOTSUPPORT);
	ferry_free(f);
}

/* Last (a caught fault leaves a sanitizer's signals blocked: see
 * test_xti_data): t_rcvvudata into a vector with an unmapped part fails
 * before it takes the datagram, which comes whole to a good vector. */
static void test_efault(void)
{
	struct ferry *f = ferry_ep(T_CLTS, TS_IDLE);
	struct fmsg m;
	struct t_unitdata ud;
	char a[8], ab[8];
	struct t_iovec iov[2] = { { a, 2 }, { bad_address(), 4 } };
	int flags;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = ab;
	ud.addr.maxlen = sizeof(ab);
	ferry_put(f, fm_data(fm_unitdata_ind(&m, "src", 3, NULL, 0), "kept",
			     4));
	CHECK_TSYS(t_rcvvudata(f->xfd, &ud, iov, 2, &flags), EFAULT);
	iov[1].iov_base = a + 2;
	CHECK_RET(set_nonblock(f->xfd, true), 0);	/* TNODATA if lost */
	CHECK_RET(t_rcvvudata(f->xfd, &ud, iov, 2, &flags), 4);
	CHECK_MEM(a, "kept", 4);
	CHECK_EQ(ud.addr.len, 3);
	CHECK_EQ(flags, 0);
	FERRY_NOTHING(f);
	ferry_free(f);
}

int main(void)
{
	test_snd();
	test_rcv();
	test_vectors();
	test_efault();
	T_DONE();
}
