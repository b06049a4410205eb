/*
 * test_tiloop_data -- data on a connection of /dev/ticots and
 * /dev/ticotsord, raw TPI: T_DATA_REQ with MORE_flag keeps TSDU
 * boundaries (MORE_flag 7 reads back as 1); plain write() is T_DATA_REQ
 * with MORE_flag 0, split by the stream head at 65536 (TIDU); zero-length
 * TSDUs (SENDZERO) with and without a data part; many TSDUs both ways in
 * order; T_EXDATA_REQ arrives in band 1 ahead of normal data already
 * waiting at the reader; T_OPTDATA_REQ (options passed on, T_ODF_MORE,
 * T_ODF_EX in band 1); a TSDU over 65536 bytes over MORE fragments and
 * an ETSDU over 1024 are fatal (M_ERROR EPROTO), as bad options on
 * T_OPTDATA_REQ are; data out of state (unbound, waiting for a connect
 * confirmation, listening) is fatal, data in TS_IDLE (after a
 * disconnect raced with it) is dropped and the stream still works.
 */
#include "test_tiloop_lib.h"

#include <sys/uio.h>

struct opt1 {
	struct t_opthdr h;
	t_scalar_t v;
};

static const struct opt1 good_opt = {
	{ sizeof(struct opt1), XTI_GENERIC, XTI_RCVBUF, 0 }, 4096
};

/* Wait until fd has n messages at its stream head. */
static bool wait_nread(int fd, int n)
{
	for (int i = 0; i < 2000; i++) {
		if (nread(fd, NULL) >= n)
			return nread(fd, NULL) == n;
		pause_ms(1);
	}
	return false;
}

static void test_more(const char *dev)
{
	int fds[3];

	make_conn(dev, "more", false, fds);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 1, "ab", 2), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 7, "cd", 2), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "ef", 2), 0);
	expect_data(fds[1], T_DATA_IND, T_MORE_FLAG, "ab", 2);
	expect_data(fds[1], T_DATA_IND, T_MORE_FLAG, "cd", 2);
	expect_data(fds[1], T_DATA_IND, 0, "ef", 2);
	/* the other way, and a full 65536-byte TSDU in one request */
	char *big = malloc(65536);
	REQUIRE(big != NULL);
	for (int i = 0; i < 65536; i++)
		big[i] = (char)(i * 7);
	CHECK_RET(send_data(fds[1], T_DATA_REQ, 0, big, 65536), 0);
	expect_data(fds[0], T_DATA_IND, 0, big, 65536);
	free(big);
	CHECK(tm_none(fds[0]) && tm_none(fds[1]));
	close_conn(fds);
}

static void test_write(void)
{
	int fds[3];
	char *buf = malloc(100000);
	struct tmsg *m = tm_new();
	struct iovec iov[2] = { { "vec", 3 }, { "tor", 3 } };

	REQUIRE(buf != NULL);
	for (int i = 0; i < 100000; i++)
		buf[i] = (char)(i % 251);
	make_conn(DEV_ORD, "write", false, fds);
	CHECK_RET(write(fds[0], "plain", 5), 5);
	expect_data(fds[1], T_DATA_IND, 0, "plain", 5);
	CHECK_RET(writev(fds[0], iov, 2), 6);
	expect_data(fds[1], T_DATA_IND, 0, "vector", 6);
	/* a big write: the stream head cuts it at the TIDU */
	CHECK_RET(write(fds[0], buf, 100000), 100000);
	expect_data(fds[1], T_DATA_IND, 0, buf, 65536);
	expect_data(fds[1], T_DATA_IND, 0, buf + 65536, 100000 - 65536);
	/* zero-length TSDUs: a write of 0, a request with an empty data
	 * part, a request with none */
	CHECK_RET(write(fds[0], "", 0), 0);
	expect_data(fds[1], T_DATA_IND, 0, NULL, 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "", 0), 0);
	expect_data(fds[1], T_DATA_IND, 0, NULL, 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, NULL, -1), 0);
	expect_data(fds[1], T_DATA_IND, 0, NULL, -1);
	/* many, both ways, in order */
	for (int i = 0; i < 300; i++) {
		int v = i;
		CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, &v, sizeof(v)), 0);
		v = -i;
		CHECK_RET(send_data(fds[1], T_DATA_REQ, 0, &v, sizeof(v)), 0);
	}
	for (int i = 0; i < 300; i++) {
		int v = i;
		expect_data(fds[1], T_DATA_IND, 0, &v, sizeof(v));
		v = -i;
		expect_data(fds[0], T_DATA_IND, 0, &v, sizeof(v));
	}
	CHECK(tm_none(fds[0]) && tm_none(fds[1]));
	tm_free(m);
	free(buf);
	close_conn(fds);
}

static void test_expedited(void)
{
	int fds[3];
	char big[1100];

	memset(big, 'e', sizeof(big));
	make_conn(DEV_COTS, "exp", true, fds);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "n1", 2), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "n2", 2), 0);
	CHECK_RET(send_data(fds[0], T_EXDATA_REQ, 0, "x!", 2), 0);
	CHECK(wait_nread(fds[2], 3));
	expect_data(fds[2], T_EXDATA_IND, 0, "x!", 2);
	expect_data(fds[2], T_DATA_IND, 0, "n1", 2);
	expect_data(fds[2], T_DATA_IND, 0, "n2", 2);
	/* an ETSDU of 1024 bytes, in two fragments */
	CHECK_RET(send_data(fds[0], T_EXDATA_REQ, 1, big, 600), 0);
	CHECK_RET(send_data(fds[0], T_EXDATA_REQ, 0, big, 424), 0);
	expect_data(fds[2], T_EXDATA_IND, T_MORE_FLAG, big, 600);
	expect_data(fds[2], T_EXDATA_IND, 0, big, 424);
	/* normal TSDU counting is apart from expedited */
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 1, "a", 1), 0);
	CHECK_RET(send_data(fds[0], T_EXDATA_REQ, 0, big, 1024), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "b", 1), 0);
	CHECK(wait_nread(fds[2], 3));
	expect_data(fds[2], T_EXDATA_IND, 0, big, 1024);
	expect_data(fds[2], T_DATA_IND, T_MORE_FLAG, "a", 1);
	expect_data(fds[2], T_DATA_IND, 0, "b", 1);
	/* over the ETSDU: fatal for the sender */
	CHECK_RET(send_data(fds[0], T_EXDATA_REQ, 1, big, 600), 0);
	CHECK_RET(send_data(fds[0], T_EXDATA_REQ, 0, big, 600), 0);
	expect_merror(fds[0], EPROTO);
	expect_data(fds[2], T_EXDATA_IND, T_MORE_FLAG, big, 600);
	close_conn(fds);
	/* one ETSDU of 1025: fatal at once */
	make_conn(DEV_COTS, "exp2", true, fds);
	CHECK_RET(send_data(fds[0], T_EXDATA_REQ, 0, big, 1025), 0);
	expect_merror(fds[0], EPROTO);
	CHECK(tm_none(fds[2]));
	close_conn(fds);
}

static int send_optdata(int fd, t_scalar_t flags, const void *opt, int olen,
			const void *dat, int dlen)
{
	struct T_optdata_req r = { T_OPTDATA_REQ, flags, 0, 0 };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	if (olen > 0) {
		cb.p.optdata_req.OPT_length = olen;
		cb.p.optdata_req.OPT_offset = cb_add(&cb, opt, (size_t)olen);
	}
	return cb_send(fd, &cb, dat, dlen, 0);
}

static void expect_optdata(int fd, t_scalar_t flags, bool withopt,
			   const void *dat, int dlen)
{
	struct tmsg *m = tm_new();
	struct T_optdata_ind *oi = &m->c.p.optdata_ind;

	REQUIRE(tm_get(fd, m, false, WAIT_MS));
	CHECK_EQ(m->rc, 0);
	CHECK_EQ(oi->PRIM_type, T_OPTDATA_IND);
	CHECK_EQ(oi->DATA_flag, flags);
	CHECK_EQ(m->band, (flags & T_ODF_EX) ? 1 : 0);
	if (withopt) {
		CHECK_EQ(oi->OPT_length, (int)sizeof(good_opt));
		CHECK_MEM(m->c.b + oi->OPT_offset, &good_opt,
			  sizeof(good_opt));
	} else {
		CHECK_EQ(oi->OPT_length, 0);
		CHECK_EQ(m->clen, (int)sizeof(*oi));
	}
	CHECK_EQ(m->dlen, dlen);
	if (dlen > 0 && m->dlen == dlen)
		CHECK_MEM(m->d, dat, (size_t)dlen);
	tm_free(m);
}

static void test_optdata(void)
{
	int fds[3];
	struct opt1 bad = { { 5, XTI_GENERIC, XTI_RCVBUF, 0 }, 1 };

	make_conn(DEV_ORD, "opt", false, fds);
	CHECK_RET(send_optdata(fds[0], 0, &good_opt, sizeof(good_opt),
			       "o1", 2), 0);
	expect_optdata(fds[1], 0, true, "o1", 2);
	CHECK_RET(send_optdata(fds[0], T_ODF_MORE, NULL, 0, "o2", 2), 0);
	expect_optdata(fds[1], T_ODF_MORE, false, "o2", 2);
	CHECK_RET(send_optdata(fds[0], 0, NULL, 0, "o3", 2), 0);
	expect_optdata(fds[1], 0, false, "o3", 2);
	CHECK_RET(send_optdata(fds[1], T_ODF_EX, &good_opt, sizeof(good_opt),
			       "ex", 2), 0);
	expect_optdata(fds[0], T_ODF_EX, true, "ex", 2);
	/* unknown flag bits are not passed on */
	CHECK_RET(send_optdata(fds[1], 0x40, NULL, 0, "f", 1), 0);
	expect_optdata(fds[0], 0, false, "f", 1);
	/* malformed options: fatal */
	CHECK_RET(send_optdata(fds[0], 0, &bad, sizeof(bad), "x", 1), 0);
	expect_merror(fds[0], EPROTO);
	CHECK(tm_none(fds[1]));
	close_conn(fds);
}

static void test_tsdu_limit(void)
{
	int fds[3];
	char *big = calloc(1, 40000);

	REQUIRE(big != NULL);
	make_conn(DEV_COTS, "tsdu", false, fds);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 1, big, 40000), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, big, 25536), 0);
	expect_data(fds[1], T_DATA_IND, T_MORE_FLAG, big, 40000);
	expect_data(fds[1], T_DATA_IND, 0, big, 25536);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 1, big, 40000), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, big, 25537), 0);
	expect_merror(fds[0], EPROTO);
	expect_data(fds[1], T_DATA_IND, T_MORE_FLAG, big, 40000);
	CHECK(tm_none(fds[1]));
	close_conn(fds);
	free(big);
}

static void test_out_of_state(void)
{
	int u = open_ep(DEV_COTS), i = open_ep(DEV_COTS), l = open_ep(DEV_COTS);
	int c = open_ep(DEV_COTS);

	/* unbound: fatal */
	CHECK_RET(send_data(u, T_DATA_REQ, 0, "x", 1), 0);
	expect_merror(u, EPROTO);
	close(u);
	u = open_ep(DEV_ORD);
	CHECK_RET(write(u, "x", 1), 1);
	expect_merror(u, EPROTO);
	close(u);
	/* idle: dropped, nothing else happens */
	bind_ok(i, NULL, 0);
	CHECK_RET(send_data(i, T_DATA_REQ, 0, "x", 1), 0);
	CHECK_RET(send_data(i, T_EXDATA_REQ, 0, "x", 1), 0);
	CHECK_RET(write(i, "x", 1), 1);
	CHECK_RET(send_optdata(i, 0, NULL, 0, "x", 1), 0);
	CHECK_EQ(ep_state(i), TS_IDLE);
	CHECK(tm_none(i));
	/* waiting for the confirmation: fatal; listening: fatal */
	bind_ok(l, "oos", 1);
	bind_ok(c, NULL, 0);
	CHECK_RET(send_conn_req(c, "oos", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	CHECK(expect_conn_ind(l, NULL, NULL, -1) > 0);
	CHECK_RET(send_data(l, T_DATA_REQ, 0, "x", 1), 0);
	expect_merror(l, EPROTO);
	CHECK_RET(send_data(c, T_EXDATA_REQ, 0, "x", 1), 0);
	expect_merror(c, EPROTO);
	close(l);
	close(c);
	/* a disconnect that raced with data: the data is dropped */
	int fds[3];
	make_conn(DEV_COTS, "race", false, fds);
	CHECK_RET(send_discon(fds[1], -1, NULL, -1), 0);
	expect_ok(fds[1], T_DISCON_REQ);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "late", 4), 0);
	CHECK_RET(write(fds[0], "late", 4), 4);
	expect_discon_ind(fds[0], ECONNRESET, -1, NULL, -1);
	CHECK_EQ(ep_state(fds[0]), TS_IDLE);
	CHECK(tm_none(fds[0]) && tm_none(fds[1]));
	close_conn(fds);
	close(i);
}

int main(void)
{
	test_more(DEV_COTS);
	test_more(DEV_ORD);
	test_write();
	test_expedited();
	test_optdata();
	test_tsdu_limit();
	test_out_of_state();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
