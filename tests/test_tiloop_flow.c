/*
 * test_tiloop_flow -- flow control without loss on the loopback
 * providers: a writer whose peer does not read blocks in putmsg (the
 * thread is seen asleep, having sent far fewer than it means to) and
 * finishes once the peer reads, every TSDU arriving once and in order;
 * a non-blocking writer gets EAGAIN and no POLLOUT while its way is full,
 * POLLOUT again once the reader drains, and nothing is lost; expedited
 * data sent in band 1 while normal data is held reaches the reader
 * first, and a high priority request (T_INFO_REQ) is answered at once;
 * a writer blocked when its peer closes wakes up (the data is dropped,
 * T_DISCON_IND follows); on ticlts, datagrams to a receiver that does not
 * read wait at the sender and all arrive once it reads.
 */
#include "test_tiloop_lib.h"

#define REC	1000

struct writer {
	int fd, n, sent, err;
	pid_t tid;
};

static void *write_all(void *arg)
{
	struct writer *w = arg;
	char rec[REC];

	__atomic_store_n(&w->tid, my_tid(), __ATOMIC_RELEASE);
	memset(rec, 'w', sizeof(rec));
	for (int i = 0; i < w->n; i++) {
		memcpy(rec, &i, sizeof(i));
		if (send_data(w->fd, T_DATA_REQ, 0, rec, sizeof(rec)) != 0) {
			w->err = errno;
			break;
		}
		__atomic_store_n(&w->sent, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void read_recs(int fd, int from, int to)
{
	char rec[REC];

	memset(rec, 'w', sizeof(rec));
	for (int i = from; i < to; i++) {
		memcpy(rec, &i, sizeof(i));
		if (!expect_data(fd, T_DATA_IND, 0, rec, sizeof(rec)))
			break;
	}
}

static void test_blocking(const char *dev)
{
	int fds[3];
	struct writer w = { 0, 2000, 0, 0, 0 };
	pthread_t t;

	make_conn(dev, "block", false, fds);
	w.fd = fds[0];
	REQUIRE(pthread_create(&t, NULL, write_all, &w) == 0);
	while (__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE) == 0)
		pause_ms(1);
	CHECK(wait_blocked(w.tid));
	int stuck = __atomic_load_n(&w.sent, __ATOMIC_ACQUIRE);
	CHECK(stuck > 10 && stuck < w.n);
	pause_ms(20);
	CHECK_EQ(__atomic_load_n(&w.sent, __ATOMIC_ACQUIRE), stuck);
	read_recs(fds[1], 0, w.n);
	pthread_join(t, NULL);
	CHECK_EQ(w.err, 0);
	CHECK_EQ(w.sent, w.n);
	CHECK(tm_none(fds[1]));
	close_conn(fds);
}

static void test_nonblocking(void)
{
	int fds[3], n = 0;
	char rec[REC];

	memset(rec, 'w', sizeof(rec));
	make_conn(DEV_COTS, "nb", true, fds);
	CHECK_EQ(set_nonblock(fds[0], true), 0);
	for (;;) {
		memcpy(rec, &n, sizeof(n));
		if (send_data(fds[0], T_DATA_REQ, 0, rec, sizeof(rec)) != 0)
			break;
		REQUIRE(++n < 100000);
	}
	CHECK_EQ(errno, EAGAIN);
	CHECK(!wait_fd(fds[0], POLLOUT, 0));
	CHECK_ERR(write(fds[0], rec, sizeof(rec)), EAGAIN);
	/* high priority is not held back */
	CHECK_EQ(ep_state(fds[0]), TS_DATA_XFER);
	/* nor is expedited data, sent in band 1 */
	{
		struct T_exdata_req r = { T_EXDATA_REQ, 0 };
		struct strbuf c = { 0, sizeof(r), (char *)&r };
		struct strbuf d = { 0, 3, "exp" };
		CHECK_RET(putpmsg(fds[0], &c, &d, 1, MSG_BAND), 0);
	}
	expect_data(fds[2], T_EXDATA_IND, 0, "exp", 3);
	/* the reader drains: the writer may go on, nothing lost */
	int half = n / 2;
	read_recs(fds[2], 0, half);
	CHECK(wait_fd(fds[0], POLLOUT, WAIT_MS));
	for (int i = 0; i < 10; i++) {
		memcpy(rec, &n, sizeof(n));
		CHECK_RET(send_data(fds[0], T_DATA_REQ, 0, rec, sizeof(rec)),
			  0);
		n++;
	}
	read_recs(fds[2], half, n);
	CHECK(tm_none(fds[2]));
	close_conn(fds);
}

static void test_peer_closes(void)
{
	int fds[3];
	struct writer w = { 0, 5000, 0, 0, 0 };
	pthread_t t;

	make_conn(DEV_ORD, "gone", false, fds);
	w.fd = fds[0];
	REQUIRE(pthread_create(&t, NULL, write_all, &w) == 0);
	while (__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE) == 0)
		pause_ms(1);
	CHECK(wait_blocked(w.tid));
	CHECK(__atomic_load_n(&w.sent, __ATOMIC_ACQUIRE) < w.n);
	close(fds[1]);
	pthread_join(t, NULL);	/* woken; the rest is dropped */
	CHECK_EQ(w.err, 0);
	CHECK_EQ(w.sent, w.n);
	expect_discon_ind(fds[0], ECONNRESET, -1, NULL, -1);
	CHECK_EQ(ep_state(fds[0]), TS_IDLE);
	close(fds[0]);
	close(fds[2]);
}

static int send_ud(int fd, const char *dest, const void *dat, int len)
{
	struct T_unitdata_req r = { T_UNITDATA_REQ, 0, 0, 0, 0 };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	cb.p.unitdata_req.DEST_length = (t_scalar_t)strlen(dest);
	cb.p.unitdata_req.DEST_offset = cb_add(&cb, dest, strlen(dest));
	return cb_send(fd, &cb, dat, len, 0);
}

struct udw {
	int fd, n, id, err;
};

static void *ud_writer(void *arg)
{
	struct udw *w = arg;
	int v[REC / sizeof(int)];

	memset(v, 0, sizeof(v));
	for (int i = 0; i < w->n; i++) {
		v[0] = w->id;
		v[1] = i;
		if (send_ud(w->fd, "sink", v, sizeof(v)) != 0) {
			w->err = errno;
			break;
		}
	}
	return NULL;
}

static void test_clts(void)
{
	int r = open_ep(DEV_CLTS), next[2] = { 0, 0 };
	struct udw w[2];
	pthread_t t[2];
	struct tmsg *m = tm_new();

	bind_ok(r, "sink", 0);
	for (int i = 0; i < 2; i++) {
		w[i].fd = open_ep(DEV_CLTS);
		w[i].n = 1500;
		w[i].id = i;
		w[i].err = 0;
		bind_ok(w[i].fd, NULL, 0);
		REQUIRE(pthread_create(&t[i], NULL, ud_writer, &w[i]) == 0);
	}
	pause_ms(50);	/* let them fill everything */
	for (int k = 0; k < 3000; k++) {
		int v[2];
		if (!tm_get(r, m, false, WAIT_MS) || m->rc != 0 ||
		    m->c.prim != T_UNITDATA_IND) {
			CHECK(!"a datagram");
			break;
		}
		memcpy(v, m->d, sizeof(v));
		if (v[0] == 0 || v[0] == 1) {
			CHECK_EQ(v[1], next[v[0]]);
			next[v[0]] = v[1] + 1;
		} else {
			CHECK(!"a sender's datagram");
		}
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(w[i].err, 0);
		CHECK_EQ(next[i], w[i].n);
		CHECK(tm_none(w[i].fd));
		close(w[i].fd);
	}
	CHECK(tm_none(r));
	tm_free(m);
	close(r);
}

/* Data written in one band and held in another escaped the flow control
 * the stream head applies to the band written: expedited data written in
 * band 0, normal data in band 2.  Each now meets EAGAIN with its peer not
 * reading, and all of it arrives, in order, once the peer reads. */
static void test_band_mismatch(t_scalar_t prim, int band)
{
	int fds[3], n = 0, len = prim == T_EXDATA_REQ ? 1000 : REC;
	struct T_data_req r = { prim, 0 };
	struct strbuf c = { 0, sizeof(r), (char *)&r };
	char rec[REC];
	struct strbuf d = { 0, len, rec };

	memset(rec, 'w', sizeof(rec));
	make_conn(DEV_COTS, "bands", true, fds);
	CHECK_EQ(set_nonblock(fds[0], true), 0);
	for (;;) {
		memcpy(rec, &n, sizeof(n));
		if (putpmsg(fds[0], &c, &d, band, MSG_BAND) != 0)
			break;
		if (++n >= 5000)
			break;
	}
	CHECK_EQ(errno, EAGAIN);
	CHECK(n < 5000);
	for (int i = 0; i < n; i++) {
		memcpy(rec, &i, sizeof(i));
		if (!expect_data(fds[2], prim == T_EXDATA_REQ ? T_EXDATA_IND
							       : T_DATA_IND,
				 0, rec, len))
			break;
	}
	CHECK(tm_none(fds[2]));
	close_conn(fds);
}

int main(void)
{
	test_band_mismatch(T_EXDATA_REQ, 0);
	test_band_mismatch(T_DATA_REQ, 2);
	test_blocking(DEV_COTS);
	test_blocking(DEV_ORD);
	test_nonblocking();
	test_peer_closes();
	test_clts();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
