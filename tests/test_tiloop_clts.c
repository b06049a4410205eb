/*
 * test_tiloop_clts -- /dev/ticlts, raw TPI: T_UNITDATA_REQ becomes
 * T_UNITDATA_IND at the endpoint bound to DEST, with the sender's
 * address as SRC, its options and its data (every field checked);
 * zero-length datagrams with and without a data part; a datagram to
 * oneself; 16384 bytes (TSDU_size) go.  T_UDERROR_IND (DEST and options
 * echoed) for: nobody at DEST (ECONNREFUSED; also an address bound only
 * on another provider), DEST_length 0 or 65 (EINVAL), over 16384 bytes
 * (EMSGSIZE), malformed options (ENOPROTOOPT); the endpoint works after
 * each.  Unbound: T_UNITDATA_REQ is fatal, as write() on ticlts is.
 * Unbinding the receiver drops what waited for it and later datagrams
 * get ECONNREFUSED; datagrams held by flow control for a receiver that
 * closes come back as T_UDERROR_IND.  Two senders to one receiver: all
 * arrive, in order per sender.
 */
#include "test_tiloop_lib.h"

struct opt1 {
	struct t_opthdr h;
	t_scalar_t v;
};

static const struct opt1 good_opt = {
	{ sizeof(struct opt1), XTI_GENERIC, XTI_RCVLOWAT, 0 }, 10
};

static int send_ud(int fd, const void *dest, int dlen, const void *opt,
		   int olen, const void *dat, int datlen)
{
	struct T_unitdata_req r = { T_UNITDATA_REQ, 0, 0, 0, 0 };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	cb.p.unitdata_req.DEST_length = dlen;
	if (dlen > 0)
		cb.p.unitdata_req.DEST_offset = cb_add(&cb, dest, (size_t)dlen);
	if (olen > 0) {
		cb.p.unitdata_req.OPT_length = olen;
		cb.p.unitdata_req.OPT_offset = cb_add(&cb, opt, (size_t)olen);
	}
	return cb_send(fd, &cb, dat, datlen, 0);
}

static void expect_ud(int fd, const char *src, bool withopt, const void *dat,
		      int datlen)
{
	struct tmsg *m = tm_new();
	struct T_unitdata_ind *u = &m->c.p.unitdata_ind;

	REQUIRE(tm_get(fd, m, false, WAIT_MS));
	CHECK_EQ(m->rc, 0);
	CHECK_EQ(m->flags, MSG_BAND);
	CHECK_EQ(m->band, 0);
	CHECK_EQ(u->PRIM_type, T_UNITDATA_IND);
	CHECK_EQ(u->SRC_length, (int)strlen(src));
	CHECK_EQ(u->SRC_offset, (int)sizeof(*u));
	CHECK_MEM(m->c.b + u->SRC_offset, src, strlen(src));
	if (withopt) {
		CHECK_EQ(u->OPT_length, (int)sizeof(good_opt));
		CHECK_EQ(u->OPT_offset % 4, 0);
		CHECK_MEM(m->c.b + u->OPT_offset, &good_opt, sizeof(good_opt));
		CHECK_EQ(m->clen, u->OPT_offset + u->OPT_length);
	} else {
		CHECK_EQ(u->OPT_length, 0);
		CHECK_EQ(m->clen, u->SRC_offset + u->SRC_length);
	}
	CHECK_EQ(m->dlen, datlen);
	if (datlen > 0 && m->dlen == datlen)
		CHECK_MEM(m->d, dat, (size_t)datlen);
	tm_free(m);
}

static void expect_uderr(int fd, const void *dest, int dlen, bool withopt,
			 t_scalar_t etype)
{
	struct tmsg *m = tm_new();
	struct T_uderror_ind *u = &m->c.p.uderror_ind;

	REQUIRE(tm_get(fd, m, false, WAIT_MS));
	CHECK_EQ(m->rc, 0);
	CHECK_EQ(u->PRIM_type, T_UDERROR_IND);
	CHECK_EQ(u->ERROR_type, etype);
	CHECK_EQ(u->DEST_length, dlen);
	if (dlen > 0)
		CHECK_MEM(m->c.b + u->DEST_offset, dest, (size_t)dlen);
	CHECK_EQ(u->OPT_length, withopt ? (int)sizeof(good_opt) : 0);
	if (withopt)
		CHECK_MEM(m->c.b + u->OPT_offset, &good_opt, sizeof(good_opt));
	CHECK_EQ(m->dlen, -1);
	tm_free(m);
}

static void test_exchange(void)
{
	int a = open_ep(DEV_CLTS), b = open_ep(DEV_CLTS);
	char *big = malloc(16385);

	REQUIRE(big != NULL);
	memset(big, 'u', 16385);
	bind_ok(a, "a", 0);
	bind_ok(b, "bee", 0);
	CHECK_RET(send_ud(a, "bee", 3, &good_opt, sizeof(good_opt), "hello",
			  5), 0);
	expect_ud(b, "a", true, "hello", 5);
	CHECK_RET(send_ud(b, "a", 1, NULL, 0, "back", 4), 0);
	expect_ud(a, "bee", false, "back", 4);
	/* zero length, with and without a data part */
	CHECK_RET(send_ud(a, "bee", 3, NULL, 0, "", 0), 0);
	expect_ud(b, "a", false, NULL, 0);
	CHECK_RET(send_ud(a, "bee", 3, NULL, 0, NULL, -1), 0);
	expect_ud(b, "a", false, NULL, -1);
	/* to oneself; the largest datagram */
	CHECK_RET(send_ud(a, "a", 1, NULL, 0, big, 16384), 0);
	expect_ud(a, "a", false, big, 16384);
	CHECK(tm_none(a) && tm_none(b));
	free(big);
	close(a);
	close(b);
}

static void test_errors(void)
{
	int a = open_ep(DEV_CLTS), other = open_ep(DEV_COTS);
	char *big = calloc(1, 16385), addr65[65];
	struct opt1 bad = { { 2, XTI_GENERIC, XTI_RCVLOWAT, 0 }, 0 };

	REQUIRE(big != NULL);
	memset(addr65, 'k', sizeof(addr65));
	bind_ok(a, "a", 0);
	bind_ok(other, "cots", 0);
	CHECK_RET(send_ud(a, "nobody", 6, &good_opt, sizeof(good_opt), "x",
			  1), 0);
	expect_uderr(a, "nobody", 6, true, ECONNREFUSED);
	CHECK_RET(send_ud(a, "cots", 4, NULL, 0, "x", 1), 0);
	expect_uderr(a, "cots", 4, false, ECONNREFUSED);
	CHECK_RET(send_ud(a, NULL, 0, NULL, 0, "x", 1), 0);
	expect_uderr(a, NULL, 0, false, EINVAL);
	CHECK_RET(send_ud(a, addr65, 65, NULL, 0, "x", 1), 0);
	expect_uderr(a, addr65, 65, false, EINVAL);
	CHECK_RET(send_ud(a, "a", 1, NULL, 0, big, 16385), 0);
	expect_uderr(a, "a", 1, false, EMSGSIZE);
	CHECK_RET(send_ud(a, "a", 1, &bad, sizeof(bad), "x", 1), 0);
	{
		struct tmsg *m = tm_new();
		REQUIRE(tm_get(a, m, false, WAIT_MS));
		CHECK_EQ(m->c.prim, T_UDERROR_IND);
		CHECK_EQ(m->c.p.uderror_ind.ERROR_type, ENOPROTOOPT);
		CHECK_EQ(m->c.p.uderror_ind.OPT_length, (int)sizeof(bad));
		tm_free(m);
	}
	CHECK_EQ(ep_state(a), TS_IDLE);
	CHECK_RET(send_ud(a, "a", 1, NULL, 0, "ok", 2), 0);
	expect_ud(a, "a", false, "ok", 2);
	CHECK(tm_none(a));
	/* unbound: fatal; write(): fatal */
	int u = open_ep(DEV_CLTS);
	CHECK_RET(send_ud(u, "a", 1, NULL, 0, "x", 1), 0);
	expect_merror(u, EPROTO);
	close(u);
	CHECK_RET(write(a, "x", 1), 1);
	expect_merror(a, EPROTO);
	free(big);
	close(a);
	close(other);
}

static void test_unbind_close(void)
{
	int a = open_ep(DEV_CLTS), b = open_ep(DEV_CLTS);
	char rec[1000];
	int n = 0, back = 0;

	memset(rec, 0, sizeof(rec));
	bind_ok(a, "a", 0);
	bind_ok(b, "b", 0);
	/* unbinding drops what waited and refuses what comes after */
	CHECK_RET(send_ud(a, "b", 1, NULL, 0, "1", 1), 0);
	CHECK_RET(send_ud(a, "b", 1, NULL, 0, "2", 1), 0);
	CHECK(wait_fd(b, POLLIN, WAIT_MS));
	CHECK_RET(send_simple(b, T_UNBIND_REQ, 0), 0);
	expect_ok(b, T_UNBIND_REQ);
	CHECK(tm_none(b));
	CHECK_RET(send_ud(a, "b", 1, NULL, 0, "3", 1), 0);
	expect_uderr(a, "b", 1, false, ECONNREFUSED);
	/* held by flow control, then the receiver closes */
	bind_ok(b, "b", 0);
	CHECK_EQ(set_nonblock(a, true), 0);
	while (send_ud(a, "b", 1, NULL, 0, rec, sizeof(rec)) == 0)
		REQUIRE(++n < 100000);
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(set_nonblock(a, false), 0);
	close(b);
	{
		struct tmsg *m = tm_new();
		while (tm_get(a, m, false, 200) && m->rc == 0 &&
		       m->c.prim == T_UDERROR_IND) {
			CHECK_EQ(m->c.p.uderror_ind.ERROR_type, ECONNREFUSED);
			CHECK_EQ(m->c.p.uderror_ind.DEST_length, 1);
			back++;
		}
		tm_free(m);
	}
	CHECK(back > 0 && back < n);
	CHECK_EQ(ep_state(a), TS_IDLE);
	close(a);
}

static void test_two_senders(void)
{
	enum { N = 400 };
	int s[2] = { open_ep(DEV_CLTS), open_ep(DEV_CLTS) };
	int r = open_ep(DEV_CLTS), next[2] = { 0, 0 };
	struct tmsg *m = tm_new();
	int sent[2] = { 0, 0 }, got = 0;

	bind_ok(s[0], "s0", 0);
	bind_ok(s[1], "s1", 0);
	bind_ok(r, "r", 0);
	CHECK_EQ(set_nonblock(s[0], true), 0);
	CHECK_EQ(set_nonblock(s[1], true), 0);
	/* interleave sending (until flow control stops it) and reading */
	while (got < 2 * N) {
		for (int i = 0; i < 2; i++) {
			int v[64] = { 0 };
			while (sent[i] < N) {
				v[0] = i;
				v[1] = sent[i];
				if (send_ud(s[i], "r", 1, NULL, 0, v,
					    sizeof(v)) != 0) {
					CHECK_EQ(errno, EAGAIN);
					break;
				}
				sent[i]++;
			}
		}
		if (!tm_get(r, m, false, WAIT_MS) || m->rc != 0 ||
		    m->c.prim != T_UNITDATA_IND) {
			CHECK(!"a datagram");
			break;
		}
		int v[2];
		memcpy(v, m->d, sizeof(v));
		CHECK(v[0] == 0 || v[0] == 1);
		if (v[0] == 0 || v[0] == 1) {
			CHECK_EQ(v[1], next[v[0]]);
			next[v[0]] = v[1] + 1;
		}
		CHECK_EQ(m->c.p.unitdata_ind.SRC_length, 2);
		got++;
	}
	CHECK_EQ(next[0], N);
	CHECK_EQ(next[1], N);
	CHECK(tm_none(s[0]) && tm_none(s[1]) && tm_none(r));
	tm_free(m);
	close(s[0]);
	close(s[1]);
	close(r);
}

/* count datagrams at r, each an ordinary T_UNITDATA_IND of one int, the
 * i-th carrying i; then nothing more */
static void expect_seq(int r, int count)
{
	struct tmsg *m = tm_new();
	int v;

	for (int i = 0; i < count; i++) {
		if (!tm_get(r, m, false, WAIT_MS) || m->rc != 0 ||
		    m->c.prim != T_UNITDATA_IND || m->dlen != sizeof(v)) {
			CHECK(!"a datagram");
			break;
		}
		CHECK_EQ(m->flags, MSG_BAND);
		CHECK_EQ(m->band, 0);
		memcpy(&v, m->d, sizeof(v));
		CHECK_EQ(v, i);
	}
	CHECK(tm_none(r));
	tm_free(m);
}

/* A T_UNITDATA_REQ sent as M_PCPROTO to a full receiver is held as an
 * ordinary message: it waits its turn, and the write service procedure
 * does not run over and over while it waits (a high priority message
 * put back re-enables its queue at once). */
static void test_hipri_held(void)
{
	int s = open_ep(DEV_CLTS), r = open_ep(DEV_CLTS), n = 0;
	struct T_unitdata_req u = { T_UNITDATA_REQ, 2, 0, 0, 0 };
	struct strstats a, b;
	struct cbuf cb;

	bind_ok(s, "hs", 0);
	bind_ok(r, "hr", 0);
	CHECK_EQ(set_nonblock(s, true), 0);
	while (send_ud(s, "hr", 2, NULL, 0, &n, sizeof(n)) == 0 && n < 100000)
		n++;
	CHECK_EQ(errno, EAGAIN);
	cb_init(&cb, &u, sizeof(u));
	cb.p.unitdata_req.DEST_offset = cb_add(&cb, "hr", 2);
	CHECK_RET(cb_send(s, &cb, &n, sizeof(n), RS_HIPRI), 0);
	CHECK_RET(streams_stats(&a), 0);
	pause_ms(100);
	CHECK_RET(streams_stats(&b), 0);
	CHECK(b.svc_runs - a.svc_runs < 1000);
	/* every datagram, the last one last */
	expect_seq(r, n + 1);
	close(s);
	close(r);
}

/* Datagrams written in band 2 wait in band 2, so the writer meets flow
 * control (they waited in band 0, where the stream head, checking band 2,
 * never looked: no EAGAIN, ever); all arrive once the receiver reads. */
static void test_band2_held(void)
{
	int s = open_ep(DEV_CLTS), r = open_ep(DEV_CLTS), n = 0;
	struct T_unitdata_req u = { T_UNITDATA_REQ, 2, 0, 0, 0 };
	struct strbuf d = { 0, sizeof(n), (char *)&n };
	struct cbuf cb;

	bind_ok(s, "bs", 0);
	bind_ok(r, "br", 0);
	CHECK_EQ(set_nonblock(s, true), 0);
	cb_init(&cb, &u, sizeof(u));
	cb.p.unitdata_req.DEST_offset = cb_add(&cb, "br", 2);
	struct strbuf c = { 0, cb.len, (char *)cb.b };
	while (putpmsg(s, &c, &d, 2, MSG_BAND) == 0 && n < 100000)
		n++;
	CHECK_EQ(errno, EAGAIN);
	CHECK(n < 100000);
	expect_seq(r, n);
	close(s);
	close(r);
}

/* A sender that never reads its T_UDERROR_INDs: those past its read
 * queue's high water mark are dropped, not kept without bound; it is
 * told of the first ones and works on. */
static void test_uderror_bounded(void)
{
	int s = open_ep(DEV_CLTS), r = open_ep(DEV_CLTS), n = 0;
	struct strstats a, b;

	bind_ok(s, "us", 0);
	bind_ok(r, "ur", 0);
	CHECK_RET(streams_stats(&a), 0);
	for (int i = 0; i < 20000; i++)
		CHECK_RET(send_ud(s, "nobody", 6, NULL, 0, &i, sizeof(i)), 0);
	CHECK_RET(streams_stats(&b), 0);
	CHECK(b.mblk_inuse - a.mblk_inuse < 5000);
	expect_uderr(s, "nobody", 6, false, ECONNREFUSED);
	CHECK_RET(send_ud(s, "ur", 2, NULL, 0, &n, sizeof(n)), 0);
	expect_seq(r, 1);
	close(s);
	close(r);
}

int main(void)
{
	test_exchange();
	test_errors();
	test_unbind_close();
	test_two_senders();
	test_hipri_held();
	test_band2_held();
	test_uderror_bounded();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
