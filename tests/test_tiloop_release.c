/*
 * test_tiloop_release -- the end of connections, raw TPI.  Orderly
 * release on /dev/ticotsord: T_ORDREL_IND after all earlier data, states
 * TS_WIND_ORDREL / TS_WREQ_ORDREL / TS_IDLE on both sides, data still
 * flowing the other way, both sides releasing at once, release with
 * data (ORDRELDATA; over 1024 bytes fatal), release behind data held by
 * flow control, the final release with data still held (delivered at
 * once, the sender TS_IDLE at once), data and a second release out of
 * state (fatal).  Abortive release: T_DISCON_REQ with data (M_FLUSH then
 * T_OK_ACK: nothing stale to read; the peer reads what it had, then
 * T_DISCON_IND ECONNRESET with the data; TBADDATA over 1024) from
 * TS_DATA_XFER, TS_WIND_ORDREL and TS_WREQ_ORDREL.  Close at every stage
 * of a connection: either end in data transfer, the listener after it
 * handed the connection on, either end during orderly release, an end
 * with data and release still held (delivered before the disconnect),
 * an end with data held and no release (dropped), ends already released.
 */
#include "test_tiloop_lib.h"

static void expect_ordrel(int fd, const void *dat, int dlen)
{
	struct tmsg *m = tm_new();

	REQUIRE(tm_get(fd, m, false, WAIT_MS));
	CHECK_EQ(m->rc, 0);
	CHECK_EQ(m->flags, MSG_BAND);
	CHECK_EQ(m->clen, (int)sizeof(struct T_ordrel_ind));
	CHECK_EQ(m->c.prim, T_ORDREL_IND);
	CHECK_EQ(m->dlen, dlen);
	if (dlen > 0 && m->dlen == dlen)
		CHECK_MEM(m->d, dat, (size_t)dlen);
	tm_free(m);
}

static int send_ordrel_f(int fd, const void *dat, int dlen, int flags)
{
	struct T_ordrel_req r = { T_ORDREL_REQ };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	return cb_send(fd, &cb, dat, dlen, flags);
}

static int send_ordrel(int fd, const void *dat, int dlen)
{
	return send_ordrel_f(fd, dat, dlen, 0);
}

static void test_orderly(void)
{
	int fds[3], a, b;

	make_conn(DEV_ORD, "ord", false, fds);
	a = fds[0];
	b = fds[1];
	CHECK_RET(send_data(a, T_DATA_REQ, 0, "d1", 2), 0);
	CHECK_RET(send_ordrel(a, NULL, -1), 0);
	CHECK_EQ(ep_state(a), TS_WIND_ORDREL);
	expect_data(b, T_DATA_IND, 0, "d1", 2);
	expect_ordrel(b, NULL, -1);
	CHECK_EQ(ep_state(b), TS_WREQ_ORDREL);
	/* the other direction still works */
	CHECK_RET(send_data(b, T_DATA_REQ, 0, "r1", 2), 0);
	CHECK_RET(send_data(b, T_EXDATA_REQ, 0, "r2", 2), 0);
	expect_data(a, T_EXDATA_IND, 0, "r2", 2);
	expect_data(a, T_DATA_IND, 0, "r1", 2);
	CHECK_RET(send_ordrel(b, NULL, -1), 0);
	CHECK_EQ(ep_state(b), TS_IDLE);
	expect_ordrel(a, NULL, -1);
	CHECK_EQ(ep_state(a), TS_IDLE);
	/* done: no remote address, free to go again */
	CHECK_RET(send_simple(a, T_UNBIND_REQ, 0), 0);
	expect_ok(a, T_UNBIND_REQ);
	CHECK(tm_none(a) && tm_none(b));
	close_conn(fds);
	/* both at once */
	make_conn(DEV_ORD, "both", true, fds);
	a = fds[0];
	b = fds[2];
	CHECK_RET(send_data(a, T_DATA_REQ, 0, "A", 1), 0);
	CHECK_RET(send_data(b, T_DATA_REQ, 0, "B", 1), 0);
	CHECK_RET(send_ordrel(a, NULL, -1), 0);
	CHECK_RET(send_ordrel(b, NULL, -1), 0);
	expect_data(a, T_DATA_IND, 0, "B", 1);
	expect_ordrel(a, NULL, -1);
	expect_data(b, T_DATA_IND, 0, "A", 1);
	expect_ordrel(b, NULL, -1);
	CHECK_EQ(ep_state(a), TS_IDLE);
	CHECK_EQ(ep_state(b), TS_IDLE);
	/* the listener listens again */
	int c = open_ep(DEV_ORD);
	bind_ok(c, NULL, 0);
	CHECK_RET(send_conn_req(c, "both", NULL, 0, NULL, -1), 0);
	expect_ok(c, T_CONN_REQ);
	t_scalar_t seq = expect_conn_ind(b, NULL, NULL, -1);
	CHECK(seq > 0);
	close(c);
	expect_discon_ind(b, ECONNABORTED, seq, NULL, -1);
	close_conn(fds);
}

static void test_ordrel_data(void)
{
	int fds[3];
	char big[1100];

	memset(big, 'z', sizeof(big));
	make_conn(DEV_ORD, "reldata", false, fds);
	CHECK_RET(send_ordrel(fds[0], "bye", 3), 0);
	expect_ordrel(fds[1], "bye", 3);
	CHECK_RET(send_ordrel(fds[1], big, 1024), 0);
	expect_ordrel(fds[0], big, 1024);
	CHECK_EQ(ep_state(fds[0]), TS_IDLE);
	CHECK_EQ(ep_state(fds[1]), TS_IDLE);
	close_conn(fds);
	/* too much: fatal */
	make_conn(DEV_ORD, "reldata", false, fds);
	CHECK_RET(send_ordrel(fds[0], big, 1025), 0);
	expect_merror(fds[0], EPROTO);
	CHECK(tm_none(fds[1]));
	close_conn(fds);
	/* out of state: data after our release, a second release */
	make_conn(DEV_ORD, "reldata", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "x", 1), 0);
	expect_merror(fds[0], EPROTO);
	close_conn(fds);
	make_conn(DEV_ORD, "reldata", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	expect_merror(fds[0], EPROTO);
	close_conn(fds);
	make_conn(DEV_ORD, "reldata", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	{
		struct T_optdata_req r = { T_OPTDATA_REQ, 0, 0, 0 };
		struct cbuf cb;
		cb_init(&cb, &r, sizeof(r));
		CHECK_RET(cb_send(fds[0], &cb, "x", 1, 0), 0);
	}
	expect_merror(fds[0], EPROTO);
	/* in TS_IDLE (a disconnect raced with it) it is dropped, as data */
	int i = open_ep(DEV_ORD);
	bind_ok(i, NULL, 0);
	CHECK_RET(send_ordrel(i, "x", 1), 0);
	CHECK_EQ(ep_state(i), TS_IDLE);
	CHECK(tm_none(i));
	close(i);
	/* and unbound */
	int u = open_ep(DEV_ORD);
	CHECK_RET(send_ordrel(u, NULL, -1), 0);
	expect_merror(u, EPROTO);
	close(u);
	close_conn(fds);
}

/* Fill a's way to b (non-blocking, 1000-byte records numbered from 0)
 * until EAGAIN: a's write queue is then full.  Returns the number sent. */
static int fill(int a)
{
	char rec[1000];
	int n = 0;

	memset(rec, 0, sizeof(rec));
	CHECK_EQ(set_nonblock(a, true), 0);
	for (;;) {
		memcpy(rec, &n, sizeof(n));
		int r = send_data(a, T_DATA_REQ, 0, rec, sizeof(rec));
		if (r < 0) {
			CHECK_EQ(errno, EAGAIN);
			break;
		}
		n++;
		REQUIRE(n < 100000);
	}
	CHECK_EQ(set_nonblock(a, false), 0);
	return n;
}

static void drain(int b, int from, int to)
{
	char rec[1000];

	memset(rec, 0, sizeof(rec));
	for (int i = from; i < to; i++) {
		memcpy(rec, &i, sizeof(i));
		if (!expect_data(b, T_DATA_IND, 0, rec, sizeof(rec)))
			break;
	}
}

static void test_ordrel_behind_flow(void)
{
	int fds[3], n;

	/* a's release waits behind its held data (sent as M_PCPROTO, which
	 * the stream head does not hold back, while a's queue is full) */
	make_conn(DEV_ORD, "flowrel", false, fds);
	n = fill(fds[0]);
	CHECK_RET(send_ordrel_f(fds[0], "end", 3, RS_HIPRI), 0);
	CHECK_EQ(ep_state(fds[0]), TS_WIND_ORDREL);
	CHECK_EQ(ep_state(fds[1]), TS_DATA_XFER);	/* not there yet */
	drain(fds[1], 0, n);
	expect_ordrel(fds[1], "end", 3);
	CHECK_EQ(ep_state(fds[1]), TS_WREQ_ORDREL);
	/* the final release with data held: delivered past flow control,
	 * the sender idle at once */
	n = fill(fds[1]);
	CHECK_RET(send_ordrel_f(fds[1], NULL, -1, RS_HIPRI), 0);
	CHECK_EQ(ep_state(fds[1]), TS_IDLE);
	CHECK_EQ(ep_state(fds[0]), TS_IDLE);
	drain(fds[0], 0, n);
	expect_ordrel(fds[0], NULL, -1);
	CHECK(tm_none(fds[0]) && tm_none(fds[1]));
	close_conn(fds);
}

static void test_abortive(void)
{
	int fds[3], a, b;
	char big[1100];

	memset(big, 'q', sizeof(big));
	make_conn(DEV_COTS, "abort", false, fds);
	a = fds[0];
	b = fds[1];
	CHECK_RET(send_data(b, T_DATA_REQ, 0, "stale", 5), 0);
	CHECK_RET(send_data(a, T_DATA_REQ, 0, "kept", 4), 0);
	CHECK(wait_fd(a, POLLIN, WAIT_MS));
	CHECK_RET(send_discon(a, -1, big, 1025), 0);
	expect_err(a, T_DISCON_REQ, TBADDATA, 0);
	CHECK_EQ(ep_state(a), TS_DATA_XFER);
	CHECK_RET(send_discon(a, 12345, "abort", 5), 0);
	expect_ok(a, T_DISCON_REQ);
	/* our side was flushed: "stale" is gone */
	CHECK(tm_none(a));
	CHECK_EQ(ep_state(a), TS_IDLE);
	/* the peer reads what it had, then the disconnect */
	expect_data(b, T_DATA_IND, 0, "kept", 4);
	expect_discon_ind(b, ECONNRESET, -1, "abort", 5);
	CHECK_EQ(ep_state(b), TS_IDLE);
	close_conn(fds);
	/* from the release states */
	make_conn(DEV_ORD, "abort2", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	expect_ordrel(fds[1], NULL, -1);
	CHECK_RET(send_discon(fds[0], -1, NULL, -1), 0);	/* WIND_ORDREL */
	expect_ok(fds[0], T_DISCON_REQ);
	expect_discon_ind(fds[1], ECONNRESET, -1, NULL, -1);
	CHECK_EQ(ep_state(fds[1]), TS_IDLE);
	close_conn(fds);
	make_conn(DEV_ORD, "abort3", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	expect_ordrel(fds[1], NULL, -1);
	CHECK_RET(send_discon(fds[1], -1, "x", 1), 0);	/* WREQ_ORDREL */
	expect_ok(fds[1], T_DISCON_REQ);
	expect_discon_ind(fds[0], ECONNRESET, -1, "x", 1);
	CHECK_EQ(ep_state(fds[0]), TS_IDLE);
	CHECK(tm_none(fds[0]) && tm_none(fds[1]));
	close_conn(fds);
}

static void test_close(void)
{
	int fds[3];

	/* data transfer: either end */
	make_conn(DEV_COTS, "cl", false, fds);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "last", 4), 0);
	close(fds[0]);
	expect_data(fds[1], T_DATA_IND, 0, "last", 4);
	expect_discon_ind(fds[1], ECONNRESET, -1, NULL, -1);
	CHECK_EQ(ep_state(fds[1]), TS_IDLE);
	close(fds[1]);
	close(fds[2]);
	make_conn(DEV_COTS, "cl", false, fds);
	close(fds[1]);
	expect_discon_ind(fds[0], ECONNRESET, -1, NULL, -1);
	close(fds[0]);
	close(fds[2]);
	/* the listener closes: the connection it handed on lives */
	make_conn(DEV_COTS, "cl", false, fds);
	close(fds[2]);
	CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, "on", 2), 0);
	expect_data(fds[1], T_DATA_IND, 0, "on", 2);
	CHECK(tm_none(fds[0]));
	close(fds[0]);
	close(fds[1]);
	/* during orderly release: the end that released, the other end */
	make_conn(DEV_ORD, "cl", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	expect_ordrel(fds[1], NULL, -1);
	close(fds[0]);
	expect_discon_ind(fds[1], ECONNRESET, -1, NULL, -1);
	close(fds[1]);
	close(fds[2]);
	make_conn(DEV_ORD, "cl", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	expect_ordrel(fds[1], NULL, -1);
	close(fds[1]);
	expect_discon_ind(fds[0], ECONNRESET, -1, NULL, -1);
	close(fds[0]);
	close(fds[2]);
	/* data and release held by flow control: delivered, then the
	 * disconnect (O_NONBLOCK: close does not wait for the queue) */
	int n;
	make_conn(DEV_ORD, "cl", false, fds);
	n = fill(fds[0]);
	CHECK_RET(send_ordrel_f(fds[0], NULL, -1, RS_HIPRI), 0);
	CHECK_EQ(set_nonblock(fds[0], true), 0);
	close(fds[0]);
	drain(fds[1], 0, n);
	expect_ordrel(fds[1], NULL, -1);
	expect_discon_ind(fds[1], ECONNRESET, -1, NULL, -1);
	close(fds[1]);
	close(fds[2]);
	/* data held, no release: dropped, the peer gets what reached it */
	make_conn(DEV_COTS, "cl", false, fds);
	n = fill(fds[0]);
	CHECK_EQ(set_nonblock(fds[0], true), 0);
	close(fds[0]);
	{
		struct tmsg *m = tm_new();
		int k = 0;
		while (tm_get(fds[1], m, false, WAIT_MS) && m->rc == 0 &&
		       m->c.prim == T_DATA_IND) {
			int v;
			memcpy(&v, m->d, sizeof(v));
			CHECK_EQ(v, k);
			k++;
		}
		CHECK_EQ(m->c.prim, T_DISCON_IND);
		CHECK_EQ(m->c.p.discon_ind.DISCON_reason, ECONNRESET);
		CHECK(k < n);
		tm_free(m);
	}
	close(fds[1]);
	close(fds[2]);
	/* both released: closing tells nobody anything */
	make_conn(DEV_ORD, "cl", false, fds);
	CHECK_RET(send_ordrel(fds[0], NULL, -1), 0);
	CHECK_RET(send_ordrel(fds[1], NULL, -1), 0);
	expect_ordrel(fds[0], NULL, -1);
	expect_ordrel(fds[1], NULL, -1);
	close(fds[0]);
	CHECK(tm_none(fds[1]));
	CHECK_EQ(ep_state(fds[1]), TS_IDLE);
	close(fds[1]);
	close(fds[2]);
}

int main(void)
{
	test_orderly();
	test_ordrel_data();
	test_ordrel_behind_flow();
	test_abortive();
	test_close();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
