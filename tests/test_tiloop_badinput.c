/*
 * test_tiloop_badinput -- malformed primitives on the loopback
 * providers, each on a fresh endpoint: a control part too short for
 * PRIM_type, an unknown primitive, indications and acknowledgements sent
 * down (all M_ERROR EPROTO); acknowledged requests shorter than their
 * structure (T_ERROR_ACK TSYSERR/EINVAL), unacknowledged ones (EPROTO);
 * addresses and options outside the control part, negative, or with
 * offset + length overflowing (TBADADDR, TBADOPT; EPROTO for
 * T_UNITDATA_REQ and T_OPTDATA_REQ); I_FLUSH of both sides leaves the
 * endpoint working; then a thousand random control parts with random
 * data: the library survives, each endpoint either died with EPROTO or
 * still answers T_INFO_REQ, and no stream is left over.
 */
#include "test_tiloop_lib.h"

static const char *const devs[] = { DEV_CLTS, DEV_COTS, DEV_ORD };

static int send_raw(int fd, const void *ctl, int clen, int flags)
{
	struct strbuf c = { 0, clen, (char *)ctl };

	return putmsg(fd, &c, NULL, flags);
}

static void test_fatal_forms(void)
{
	for (int i = 0; i < 3; i++) {
		t_scalar_t prims[] = { 99, -1, 29, T_CONN_IND, T_OK_ACK,
				       T_DATA_IND, T_INFO_ACK, T_ERROR_ACK };
		char two[2] = { 5, 0 };
		int fd = open_ep(devs[i]);

		CHECK_RET(send_raw(fd, two, 2, 0), 0);
		expect_merror(fd, EPROTO);
		close(fd);
		for (size_t k = 0; k < sizeof(prims) / sizeof(prims[0]); k++) {
			struct T_conn_ind ci;
			memset(&ci, 0, sizeof(ci));
			ci.PRIM_type = prims[k];
			fd = open_ep(devs[i]);
			CHECK_RET(send_raw(fd, &ci, sizeof(ci), 0), 0);
			expect_merror(fd, EPROTO);
			close(fd);
		}
	}
}

static void test_short(void)
{
	struct { t_scalar_t prim; int len; } acked[] = {
		{ T_BIND_REQ, 12 }, { T_CONN_REQ, 16 }, { T_CONN_RES, 16 },
		{ T_DISCON_REQ, 4 }, { T_OPTMGMT_REQ, 12 },
		{ T_CAPABILITY_REQ, 4 },
	};
	struct { t_scalar_t prim; int len; } unacked[] = {
		{ T_DATA_REQ, 4 }, { T_EXDATA_REQ, 4 }, { T_OPTDATA_REQ, 12 },
		{ T_UNITDATA_REQ, 16 },
	};
	t_scalar_t buf[8];

	for (size_t k = 0; k < sizeof(acked) / sizeof(acked[0]); k++) {
		int fd = open_ep(DEV_COTS);
		memset(buf, 0, sizeof(buf));
		buf[0] = acked[k].prim;
		CHECK_RET(send_raw(fd, buf, acked[k].len, 0), 0);
		expect_err(fd, acked[k].prim, TSYSERR, EINVAL);
		CHECK_EQ(ep_state(fd), TS_UNBND);
		close(fd);
	}
	for (size_t k = 0; k < sizeof(unacked) / sizeof(unacked[0]); k++) {
		int fd = open_ep(k == 3 ? DEV_CLTS : DEV_COTS);
		memset(buf, 0, sizeof(buf));
		buf[0] = unacked[k].prim;
		CHECK_RET(send_raw(fd, buf, unacked[k].len, 0), 0);
		expect_merror(fd, EPROTO);
		close(fd);
	}
}

/* Regions: each (offset, length) pair that must be refused. */
static const t_scalar_t bad_regions[][2] = {
	{ 1000, 4 }, { 16, 1000 }, { -4, 4 }, { 4, -1 },
	{ 0x7fffffff, 8 }, { 8, 0x7fffffff }, { 40, 1 },
};
#define NBAD (sizeof(bad_regions) / sizeof(bad_regions[0]))

static void test_regions(void)
{
	t_scalar_t b[10];

	for (size_t k = 0; k < NBAD; k++) {
		t_scalar_t off = bad_regions[k][0], len = bad_regions[k][1];
		int fd;

		/* T_BIND_REQ ADDR */
		memset(b, 0, sizeof(b));
		b[0] = T_BIND_REQ;
		b[1] = len;
		b[2] = off;
		fd = open_ep(DEV_COTS);
		CHECK_RET(send_raw(fd, b, 40, 0), 0);
		expect_err(fd, T_BIND_REQ, TBADADDR, 0);
		CHECK_EQ(ep_state(fd), TS_UNBND);
		bind_ok(fd, NULL, 0);
		/* T_CONN_REQ DEST, then OPT */
		memset(b, 0, sizeof(b));
		b[0] = T_CONN_REQ;
		b[1] = len;
		b[2] = off;
		CHECK_RET(send_raw(fd, b, 40, 0), 0);
		expect_err(fd, T_CONN_REQ, TBADADDR, 0);
		b[1] = 4;
		b[2] = 20;
		b[3] = len;
		b[4] = off;
		CHECK_RET(send_raw(fd, b, 40, 0), 0);
		expect_err(fd, T_CONN_REQ, TBADOPT, 0);
		/* T_OPTMGMT_REQ OPT */
		memset(b, 0, sizeof(b));
		b[0] = T_OPTMGMT_REQ;
		b[1] = len;
		b[2] = off;
		b[3] = T_CURRENT;
		CHECK_RET(send_raw(fd, b, 40, 0), 0);
		expect_err(fd, T_OPTMGMT_REQ, TBADOPT, 0);
		CHECK_EQ(ep_state(fd), TS_IDLE);
		close(fd);
		/* T_CONN_RES OPT, at a listener with an indication */
		int l = open_ep(DEV_COTS), c = open_ep(DEV_COTS);
		bind_ok(l, "regions", 1);
		bind_ok(c, NULL, 0);
		CHECK_RET(send_conn_req(c, "regions", NULL, 0, NULL, -1), 0);
		expect_ok(c, T_CONN_REQ);
		t_scalar_t seq = expect_conn_ind(l, NULL, NULL, -1);
		memset(b, 0, sizeof(b));
		b[0] = T_CONN_RES;
		b[2] = len;
		b[3] = off;
		b[4] = seq;
		CHECK_RET(send_raw(l, b, 40, 0), 0);
		expect_err(l, T_CONN_RES, TBADOPT, 0);
		CHECK_EQ(ep_state(l), TS_WRES_CIND);
		/* T_OPTDATA_REQ OPT, on the connection: fatal */
		CHECK_RET(send_conn_res(l, 0, seq, NULL, 0, NULL, -1), 0);
		expect_ok(l, T_CONN_RES);
		expect_conn_con(c, "regions", NULL, -1);
		memset(b, 0, sizeof(b));
		b[0] = T_OPTDATA_REQ;
		b[2] = len;
		b[3] = off;
		CHECK_RET(send_raw(c, b, 40, 0), 0);
		expect_merror(c, EPROTO);
		close(c);
		close(l);
		/* T_UNITDATA_REQ DEST: fatal */
		fd = open_ep(DEV_CLTS);
		bind_ok(fd, NULL, 0);
		memset(b, 0, sizeof(b));
		b[0] = T_UNITDATA_REQ;
		b[1] = len;
		b[2] = off;
		CHECK_RET(send_raw(fd, b, 40, 0), 0);
		expect_merror(fd, EPROTO);
		close(fd);
	}
}

static void test_flush(void)
{
	int fds[3];

	make_conn(DEV_ORD, "flush", false, fds);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "gone", 4), 0);
	CHECK(wait_fd(fds[1], POLLIN, WAIT_MS));
	CHECK_RET(ioctl(fds[1], I_FLUSH, FLUSHRW), 0);
	CHECK(tm_none(fds[1]));
	CHECK_RET(ioctl(fds[0], I_FLUSH, FLUSHRW), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "kept", 4), 0);
	expect_data(fds[1], T_DATA_IND, 0, "kept", 4);
	CHECK_EQ(ep_state(fds[0]), TS_DATA_XFER);
	close_conn(fds);
}

static void test_random(void)
{
	unsigned int seed = 12345;
	unsigned char ctl[96], dat[64];
	struct tmsg *m = tm_new();
	int fds[3] = { -1, -1, -1 };

	for (int i = 0; i < 1000; i++) {
		const char *dev = devs[rand_r(&seed) % 3];
		int fd, clen = (int)(rand_r(&seed) % sizeof(ctl));
		int dlen = (int)(rand_r(&seed) % (sizeof(dat) + 1)) - 1;
		bool conn = dev != devs[0] && rand_r(&seed) % 2;

		for (size_t k = 0; k < sizeof(ctl); k++)
			ctl[k] = (unsigned char)rand_r(&seed);
		/* small values are the interesting ones */
		for (int k = 0; k + 4 <= clen; k += 4) {
			t_scalar_t v = (t_scalar_t)(rand_r(&seed) % 128) - 8;
			if (rand_r(&seed) % 4)
				memcpy(ctl + k, &v, sizeof(v));
		}
		t_scalar_t prim = (t_scalar_t)(rand_r(&seed) % 31);
		memcpy(ctl, &prim, sizeof(prim));
		if (conn) {
			make_conn(dev, "random", true, fds);
			fd = fds[0];
		} else {
			fd = open_ep(dev);
			if (rand_r(&seed) % 2)
				bind_ok(fd, NULL, 0);
		}
		struct strbuf c = { 0, clen, (char *)ctl };
		struct strbuf d = { 0, dlen, (char *)dat };
		putmsg(fd, &c, dlen >= 0 ? &d : NULL,
		       rand_r(&seed) % 4 ? 0 : RS_HIPRI);
		/* drain what came back; the endpoint is dead or alive */
		while (tm_get(fd, m, false, 0) && m->rc >= 0)
			;
		if (m->rc < 0 && m->err != 0) {
			CHECK_EQ(m->err, EPROTO);
		} else {
			int st = ep_state(fd);
			CHECK(st >= TS_UNBND && st < TS_NOSTATES);
		}
		if (conn)
			close_conn(fds);
		else
			close(fd);
	}
	tm_free(m);
}

int main(void)
{
	test_fatal_forms();
	test_short();
	test_regions();
	test_flush();
	test_random();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
