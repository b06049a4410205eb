/*
 * test_xti_data -- connection-mode data against a ferry-clip provider.
 *
 * t_snd: T_DATA_REQ with MORE_flag from T_MORE, a TSDU longer than
 * TIDU_size cut into TIDU-sized T_DATA_REQs (MORE_flag on all but the
 * last unless T_MORE), T_EXPEDITED as T_EXDATA_REQ in band 1, zero-length
 * TSDUs only with T_SENDZERO (and never a zero-length T_MORE fragment),
 * TBADDATA beyond TSDU_size/ETSDU_size (also a TSDU built from several
 * T_MORE sends), TNOTSUPPORT for expedited data when ETSDU_size is
 * T_INVALID, TBADFLAG, TLOOK with a disconnect pending (not with an
 * orderly release: XNS 5), TFLOW when asynchronous and flow controlled,
 * a partial count when part was taken, then t_look() T_GODATA or
 * T_GOEXDATA once the stream drains; TSYSERR EINTR when a signal comes
 * while a synchronous send waits for room.
 *
 * t_rcv: T_DATA_IND data and T_MORE from MORE_flag; a short buffer takes
 * part and leaves the rest (T_MORE until the TSDU's end); expedited data
 * (T_EXPEDITED) overtakes the rest of a normal TSDU; plain M_DATA and
 * T_OPTDATA_IND; zero-length TSDUs; TNODATA; TLOOK for T_DISCON_IND and
 * T_ORDREL_IND (t_look tells which); TSYSERR EINTR.
 *
 * t_sndv/t_rcvv: gathering into one TSDU, scattering in order, T_IOV_MAX
 * (t_sysconf) and TBADDATA beyond it or for none.
 */
#include "ferry.h"

static struct ferry *dataxfer(int serv)
{
	return ferry_ep(serv, TS_DATA_XFER);
}

static struct ferry *dataxfer_info(struct T_info_ack ia)
{
	struct ferry *f = ferry_new();

	REQUIRE(ferry_sync_ep(f, &ia) == T_DATAXFER);
	return f;
}

static void test_snd(void)
{
	struct ferry *f = dataxfer(T_COTS_ORD);
	struct fmsg w;
	static char big[2500];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	CHECK_RET(t_snd(f->xfd, "hello", 5, 0), 5);
	FERRY_GOT(f, fm_data(fm_plain(&w), "hello", 5));
	CHECK_RET(t_snd(f->xfd, "part", 4, T_MORE), 4);
	FERRY_GOT(f, fm_data(fm_data_req(&w, 1), "part", 4));
	CHECK_RET(t_snd(f->xfd, "end", 3, T_PUSH), 3);
	FERRY_GOT(f, fm_data(fm_plain(&w), "end", 3));
	/* TIDU 1024: cut in three */
	CHECK_RET(t_snd(f->xfd, big, sizeof(big), 0), (int)sizeof(big));
	FERRY_GOT(f, fm_data(fm_data_req(&w, 1), big, 1024));
	FERRY_GOT(f, fm_data(fm_data_req(&w, 1), big + 1024, 1024));
	FERRY_GOT(f, fm_data(fm_plain(&w), big + 2048, 452));
	CHECK_RET(t_snd(f->xfd, big, 1500, T_MORE), 1500);
	FERRY_GOT(f, fm_data(fm_data_req(&w, 1), big, 1024));
	FERRY_GOT(f, fm_data(fm_data_req(&w, 1), big + 1024, 476));
	CHECK_RET(t_snd(f->xfd, big, 100, 0), 100);	/* (ends it) */
	FERRY_GOT(f, fm_data(fm_plain(&w), big, 100));
	/* expedited */
	CHECK_RET(t_snd(f->xfd, "URG", 3, T_EXPEDITED), 3);
	FERRY_GOT(f, fm_data(fm_exdata_req(&w, 0), "URG", 3));
	CHECK_RET(t_snd(f->xfd, "U", 1, T_EXPEDITED | T_MORE), 1);
	FERRY_GOT(f, fm_data(fm_exdata_req(&w, 1), "U", 1));
	CHECK_RET(t_snd(f->xfd, "V", 1, T_EXPEDITED), 1);
	FERRY_GOT(f, fm_data(fm_exdata_req(&w, 0), "V", 1));
	/* zero length (T_SENDZERO) */
	CHECK_RET(t_snd(f->xfd, "", 0, 0), 0);
	FERRY_GOT(f, fm_data(fm_data_req(&w, 0), "", 0));
	CHECK_TERR(t_snd(f->xfd, "", 0, T_MORE), TBADDATA);
	/* limits: TSDU 4096, ETSDU 64 */
	static char huge[5000];
	CHECK_TERR(t_snd(f->xfd, huge, 4097, 0), TBADDATA);
	CHECK_TERR(t_snd(f->xfd, huge, 65, T_EXPEDITED), TBADDATA);
	CHECK_RET(t_snd(f->xfd, huge, 3000, T_MORE), 3000);
	for (int i = 0; i < 3; i++)
		CHECK(fm_read(f->pfd, &w, 1000) == 0);
	CHECK_TERR(t_snd(f->xfd, huge, 1097, 0), TBADDATA);
	CHECK_RET(t_snd(f->xfd, huge, 1096, 0), 1096);	/* exactly 4096 */
	CHECK(fm_read(f->pfd, &w, 1000) == 0);
	CHECK(fm_read(f->pfd, &w, 1000) == 0);
	CHECK_RET(t_snd(f->xfd, huge, 4096, 0), 4096);	/* a new TSDU */
	for (int i = 0; i < 4; i++)
		CHECK(fm_read(f->pfd, &w, 1000) == 0);
	/* flags */
	CHECK_TERR(t_snd(f->xfd, "x", 1, 0x100), TBADFLAG);
	CHECK_TERR(t_snd(f->xfd, "x", 1, T_NEGOTIATE << 4), TBADFLAG);
	FERRY_NOTHING(f);
	ferry_free(f);

	/* no T_SENDZERO, no expedited data */
	struct T_info_ack ia = fi_info(T_COTS, TS_DATA_XFER);
	ia.PROVIDER_flag = 0;
	ia.ETSDU_size = T_INVALID;
	f = dataxfer_info(ia);
	CHECK_TERR(t_snd(f->xfd, "", 0, 0), TBADDATA);
	CHECK_TERR(t_snd(f->xfd, "x", 1, T_EXPEDITED), TNOTSUPPORT);
	/* ... but a zero-length end of a TSDU is not a zero-length TSDU */
	CHECK_RET(t_snd(f->xfd, "x", 1, T_MORE), 1);
	FERRY_GOT(f, fm_data(fm_data_req(&w, 1), "x", 1));
	CHECK_RET(t_snd(f->xfd, "", 0, 0), 0);
	FERRY_GOT(f, fm_data(fm_data_req(&w, 0), "", 0));
	FERRY_NOTHING(f);
	ferry_free(f);
}

static void test_snd_look(void)
{
	struct ferry *f = dataxfer(T_COTS_ORD);
	struct fmsg m, w;

	/* an orderly release pending: sending goes on (XNS 5) */
	ferry_put(f, fm_ordrel_ind(&m));
	CHECK_RET(t_snd(f->xfd, "ab", 2, 0), 2);
	FERRY_GOT(f, fm_data(fm_plain(&w), "ab", 2));
	CHECK_RET(t_rcvrel(f->xfd), 0);
	CHECK_STATE(f->xfd, T_INREL);
	CHECK_RET(t_snd(f->xfd, "cd", 2, 0), 2);	/* T_INREL sends */
	FERRY_GOT(f, fm_data(fm_plain(&w), "cd", 2));
	/* a disconnect pending: TLOOK, nothing sent */
	ferry_put(f, fm_discon_ind(&m, 3, -1));
	CHECK_TERR(t_snd(f->xfd, "ef", 2, 0), TLOOK);
	struct t_iovec iov = { "ef", 2 };
	CHECK_TERR(t_sndv(f->xfd, &iov, 1, 0), TLOOK);
	FERRY_NOTHING(f);
	CHECK_RET(t_look(f->xfd), T_DISCONNECT);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
}

/* Fill the stream until t_snd says TFLOW; the messages sent. */
static int fill(struct ferry *f, int flags, int n)
{
	static char buf[1024];
	int k = 0;

	for (;;) {
		int r = t_snd(f->xfd, buf, (unsigned)n, flags);
		if (r < 0)
			break;
		k++;
		if (k > 100000)
			break;
	}
	return k;
}

static int drain(struct ferry *f)
{
	struct fmsg m;
	int k = 0;

	while (fm_read(f->pfd, &m, 0) == 0)
		k++;
	return k;
}

static void test_flow(void)
{
	struct T_info_ack ia = fi_info(T_COTS, TS_DATA_XFER);
	struct ferry *f;
	static char buf[4096];
	int sent, got;

	ia.ETSDU_size = 1024;
	f = dataxfer_info(ia);
	CHECK_RET(set_nonblock(f->xfd, true), 0);
	sent = fill(f, 0, 1024);
	CHECK(sent > 0);
	CHECK_EQ(t_errno, TFLOW);
	CHECK_TERR(t_snd(f->xfd, buf, 10, 0), TFLOW);
	CHECK_RET(t_look(f->xfd), 0);		/* still full */
	got = drain(f);
	CHECK_EQ(got, sent);
	CHECK_RET(t_look(f->xfd), T_GODATA);
	CHECK_RET(t_look(f->xfd), 0);		/* reported once */
	/* part of a send taken: its count */
	sent = fill(f, 0, 1024);
	got = drain(f);
	CHECK_EQ(got, sent);
	sent = 0;
	for (int i = 0; i < 62; i++)
		sent += t_snd(f->xfd, buf, 1024, 0) == 1024;
	int r = t_snd(f->xfd, buf, 4096, 0);
	CHECK(r == -1 || (r > 0 && r < 4096 && r % 1024 == 0) || r == 4096);
	if (r > 0 && r < 4096) {
		CHECK_TERR(t_snd(f->xfd, buf, 1024, 0), TFLOW);
	}
	drain(f);
	CHECK_RET(t_look(f->xfd), T_GODATA);
	/* expedited: band 1 */
	sent = fill(f, T_EXPEDITED, 1024);
	CHECK(sent > 0);
	CHECK_EQ(t_errno, TFLOW);
	CHECK_RET(t_look(f->xfd), 0);
	got = drain(f);
	CHECK_EQ(got, sent);
	CHECK_RET(t_look(f->xfd), T_GOEXDATA);
	/* synchronous and full: a signal ends the wait */
	sent = fill(f, 0, 1024);
	CHECK(sent > 0);
	CHECK_RET(set_nonblock(f->xfd, false), 0);
	struct kicker k;
	catch_sig(SIGUSR1, false);
	kicker_start(&k, SIGUSR1);
	CHECK_TSYS(t_snd(f->xfd, buf, 10, 0), EINTR);
	kicker_stop(&k);
	CHECK_EQ(drain(f), sent);
	ferry_free(f);
}

static void test_rcv(void)
{
	struct ferry *f = dataxfer(T_COTS_ORD);
	struct fmsg m;
	char buf[64];
	int flags;

	ferry_put(f, fm_data(fm_data_ind(&m, 0), "abc", 3));
	CHECK_RET(t_look(f->xfd), T_DATA);
	flags = -1;
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 3);
	CHECK_MEM(buf, "abc", 3);
	CHECK_EQ(flags, 0);
	ferry_put(f, fm_data(fm_data_ind(&m, 1), "def", 3));
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 3);
	CHECK_EQ(flags, T_MORE);
	/* a short buffer: the rest stays for the next calls */
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "abcdefgh", 8));
	CHECK_RET(t_rcv(f->xfd, buf, 3, &flags), 3);
	CHECK_MEM(buf, "abc", 3);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_look(f->xfd), T_DATA);
	CHECK_RET(t_rcv(f->xfd, buf, 3, &flags), 3);
	CHECK_MEM(buf, "def", 3);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcv(f->xfd, buf, 3, &flags), 2);
	CHECK_MEM(buf, "gh", 2);
	CHECK_EQ(flags, 0);
	/* ... of a fragment whose TSDU goes on */
	ferry_put(f, fm_data(fm_data_ind(&m, 1), "1234", 4));
	CHECK_RET(t_rcv(f->xfd, buf, 2, &flags), 2);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcv(f->xfd, buf, 2, &flags), 2);
	CHECK_MEM(buf, "34", 2);
	CHECK_EQ(flags, T_MORE);
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "5", 1));
	CHECK_RET(t_rcv(f->xfd, buf, 2, &flags), 1);
	CHECK_EQ(flags, 0);
	/* expedited */
	ferry_put(f, fm_data(fm_exdata_ind(&m, 0), "URG", 3));
	CHECK_RET(t_look(f->xfd), T_EXDATA);
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 3);
	CHECK_MEM(buf, "URG", 3);
	CHECK_EQ(flags, T_EXPEDITED);
	/* expedited data overtakes the rest of a normal TSDU */
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "0123456789", 10));
	CHECK_RET(t_rcv(f->xfd, buf, 4, &flags), 4);
	CHECK_EQ(flags, T_MORE);
	ferry_put(f, fm_data(fm_exdata_ind(&m, 0), "XYZ", 3));
	CHECK_RET(t_look(f->xfd), T_EXDATA);
	CHECK_RET(t_rcv(f->xfd, buf, 2, &flags), 2);
	CHECK_MEM(buf, "XY", 2);
	CHECK_EQ(flags, T_EXPEDITED | T_MORE);
	CHECK_RET(t_look(f->xfd), T_EXDATA);
	CHECK_RET(t_rcv(f->xfd, buf, 2, &flags), 1);
	CHECK_MEM(buf, "Z", 1);
	CHECK_EQ(flags, T_EXPEDITED);
	CHECK_RET(t_look(f->xfd), T_DATA);
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 6);
	CHECK_MEM(buf, "456789", 6);
	CHECK_EQ(flags, 0);
	/* plain M_DATA, and T_OPTDATA_IND (options dropped) */
	fm_clear(&m);
	ferry_put(f, fm_data(&m, "raw", 3));
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 3);
	CHECK_EQ(flags, 0);
	struct T_optdata_ind oi = { T_OPTDATA_IND, T_ODF_EX | T_ODF_MORE, 0, 0 };
	fm_clear(&m);
	fm_ctl(&m, &oi, sizeof(oi));
	FM_REG(&m, T_optdata_ind, OPT_length, OPT_offset, "options!", 8);
	fm_data(&m, "od", 2);
	m.band = 1;
	ferry_put(f, &m);
	CHECK_RET(t_look(f->xfd), T_EXDATA);
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 2);
	CHECK_MEM(buf, "od", 2);
	CHECK_EQ(flags, T_EXPEDITED | T_MORE);
	/* a zero-length TSDU */
	ferry_put(f, fm_data_ind(&m, 0));
	flags = -1;
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 0);
	CHECK_EQ(flags, 0);
	/* nothing there */
	CHECK_RET(set_nonblock(f->xfd, true), 0);
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TNODATA);
	CHECK_RET(set_nonblock(f->xfd, false), 0);
	/* a signal */
	struct kicker k;
	catch_sig(SIGUSR1, false);
	kicker_start(&k, SIGUSR1);
	CHECK_TSYS(t_rcv(f->xfd, buf, sizeof(buf), &flags), EINTR);
	kicker_stop(&k);
	CHECK_TSYS(t_rcv(f->xfd, buf, sizeof(buf), NULL), EFAULT);
	/* an orderly release: TLOOK until t_rcvrel */
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "last", 4));
	ferry_put(f, fm_ordrel_ind(&m));
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 4);
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TLOOK);
	CHECK_RET(t_look(f->xfd), T_ORDREL);
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TLOOK);
	CHECK_RET(t_rcvrel(f->xfd), 0);
	CHECK_STATE(f->xfd, T_INREL);
	CHECK_TERR(t_rcv(f->xfd, buf, sizeof(buf), &flags), TOUTSTATE);
	ferry_free(f);

	/* a disconnect (with data) in T_OUTREL */
	f = ferry_ep(T_COTS_ORD, TS_WIND_ORDREL);
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "x", 1));
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 1);
	ferry_put(f, fm_data(fm_discon_ind(&m, 9, -1), "why", 3));
	CHECK_TERR(t_rcv(f->xfd, buf, 2, &flags), TLOOK);
	CHECK_RET(t_look(f->xfd), T_DISCONNECT);
	struct t_discon d;
	char db[8];
	memset(&d, 0, sizeof(d));
	d.udata.buf = db;
	d.udata.maxlen = sizeof(db);
	CHECK_RET(t_rcvdis(f->xfd, &d), 0);
	CHECK_EQ(d.udata.len, 3);
	CHECK_MEM(db, "why", 3);
	CHECK_EQ(d.reason, 9);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
}

static void test_vectors(void)
{
	struct ferry *f = dataxfer(T_COTS);
	struct fmsg w, m;
	char a[3], b[3], c[10];
	struct t_iovec iov[T_IOV_MAX + 1];
	int flags;

	CHECK_EQ(t_sysconf(_SC_T_IOV_MAX), T_IOV_MAX);
	CHECK_TSYS(t_sysconf(-1), EINVAL);
	iov[0].iov_base = "one ";
	iov[0].iov_len = 4;
	iov[1].iov_base = "";
	iov[1].iov_len = 0;
	iov[2].iov_base = "two";
	iov[2].iov_len = 3;
	CHECK_RET(t_sndv(f->xfd, iov, 3, 0), 7);
	FERRY_GOT(f, fm_data(fm_plain(&w), "one two", 7));
	for (int i = 0; i <= T_IOV_MAX; i++) {
		iov[i].iov_base = "z";
		iov[i].iov_len = 1;
	}
	CHECK_RET(t_sndv(f->xfd, iov, T_IOV_MAX, T_MORE), T_IOV_MAX);
	FERRY_GOT(f, fm_data(fm_data_req(&w, 1), "zzzzzzzzzzzzzzzz", 16));
	CHECK_TERR(t_sndv(f->xfd, iov, T_IOV_MAX + 1, 0), TBADDATA);
	CHECK_TERR(t_sndv(f->xfd, iov, 0, 0), TBADDATA);
	/* scatter */
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "abcdefghij", 10));
	iov[0].iov_base = a;
	iov[0].iov_len = 3;
	iov[1].iov_base = b;
	iov[1].iov_len = 3;
	iov[2].iov_base = c;
	iov[2].iov_len = sizeof(c);
	CHECK_RET(t_rcvv(f->xfd, iov, 3, &flags), 10);
	CHECK_MEM(a, "abc", 3);
	CHECK_MEM(b, "def", 3);
	CHECK_MEM(c, "ghij", 4);
	CHECK_EQ(flags, 0);
	/* short: T_MORE */
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "abcdefghij", 10));
	CHECK_RET(t_rcvv(f->xfd, iov, 2, &flags), 6);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcvv(f->xfd, iov, 3, &flags), 4);
	CHECK_MEM(a, "ghi", 3);
	CHECK_MEM(b, "j", 1);
	CHECK_EQ(flags, 0);
	CHECK_TERR(t_rcvv(f->xfd, iov, T_IOV_MAX + 1, &flags), TBADDATA);
	CHECK_TERR(t_rcvv(f->xfd, iov, 0, &flags), TBADDATA);
	FERRY_NOTHING(f);
	ferry_free(f);
}

/* Last: a fault caught by the stream head's copy leaves the signals a
 * sanitizer's handler wrapper blocked (ThreadSanitizer: all), which
 * would keep the EINTR tests above from seeing their signals. */
static void test_efault(void)
{
	struct ferry *f = dataxfer(T_COTS);

	CHECK_TSYS(t_snd(f->xfd, bad_address(), 4, 0), EFAULT);
	FERRY_NOTHING(f);
	/* t_rcvv into a vector with an unmapped or a read-only part fails
	 * before it takes the message, which t_rcv then gets whole */
	struct fmsg m;
	char a[8];
	struct t_iovec iov[2] = { { a, 2 }, { bad_address(), 4 } };
	int flags;
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "keep", 4));
	CHECK_RET(set_nonblock(f->xfd, true), 0);	/* TNODATA if lost */
	CHECK_TSYS(t_rcvv(f->xfd, iov, 2, &flags), EFAULT);
	iov[1].iov_base = (void *)"read-only";
	CHECK_TSYS(t_rcvv(f->xfd, iov, 2, &flags), EFAULT);
	CHECK_RET(t_rcv(f->xfd, a, sizeof(a), &flags), 4);
	CHECK_MEM(a, "keep", 4);
	CHECK_EQ(flags, 0);
	/* a t_rcv into a bad buffer loses nothing and keeps the order */
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "one", 3));
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "two", 3));
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "six", 3));
	CHECK_TSYS(t_rcv(f->xfd, bad_address(), 3, &flags), EFAULT);
	CHECK_RET(t_rcv(f->xfd, a, 3, &flags), 3);
	CHECK_MEM(a, "one", 3);
	CHECK_RET(t_rcv(f->xfd, a, 3, &flags), 3);
	CHECK_MEM(a, "two", 3);
	CHECK_RET(t_rcv(f->xfd, a, 3, &flags), 3);
	CHECK_MEM(a, "six", 3);
	ferry_free(f);
}

int main(void)
{
	test_snd();
	test_snd_look();
	test_flow();
	test_rcv();
	test_vectors();
	test_efault();
	T_DONE();
}
