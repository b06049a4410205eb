/*
 * test_inet_tcp_bulk -- volume and failure on /dev/inet/tcp and /dev/tcp
 * over 127.0.0.1 and ::1: 64 MiB from one endpoint to another with every
 * byte checked (a pattern computed from its offset, so a byte lost,
 * repeated or reordered is seen), in writes of varied sizes, while the
 * receiver reads in pieces of other sizes; 1 GiB when INET_BIG=1 is set;
 * the INET_IOC_STATS counts agree with what moved.  Small messages
 * saying T_MORE take fewer socket calls than messages on /dev/tcp.  A non-blocking
 * sender facing a receiver that stops reading gets TFLOW after a bounded
 * amount, and goes on once the receiver reads.  A peer that vanishes
 * (a plain socket closed with SO_LINGER 0) in the middle of a transfer:
 * the XTI sender blocked in t_snd, and the XTI receiver blocked in t_rcv,
 * both come back with TLOOK and T_DISCONNECT.
 */
#include "test_inet_tcp_lib.h"

#include <stropts.h>
#include <sys/inet_stats.h>

static inline unsigned char pat(uint64_t off)
{
	uint64_t x = off * 0x9e3779b97f4a7c15ull;

	return (unsigned char)((x >> 29) ^ (off >> 10));
}

struct sender {
	int fd;
	uint64_t total;
	int r;
	pthread_t th;
};

static void *send_main(void *arg)
{
	struct sender *sd = arg;
	static const unsigned sizes[] = { 65536, 1, 1000, 16384, 7, 40000,
					  65536, 300, 4096, 65536 };
	char *buf = malloc(65536);
	uint64_t off = 0;
	unsigned k = 0;

	sd->r = -1;
	if (buf == NULL)
		return NULL;
	while (off < sd->total) {
		unsigned n = sizes[k++ % 10];

		if (n > sd->total - off)
			n = (unsigned)(sd->total - off);
		for (unsigned i = 0; i < n; i++)
			buf[i] = (char)pat(off + i);
		for (unsigned done = 0; done < n;) {
			int r = t_snd(sd->fd, buf + done, n - done, 0);

			if (r <= 0) {
				fprintf(stderr, "t_snd: %d t_errno %d at %llu\n",
					r, t_errno, (unsigned long long)off);
				free(buf);
				return NULL;
			}
			done += (unsigned)r;
		}
		off += n;
	}
	free(buf);
	sd->r = t_sndrel(sd->fd);
	return NULL;
}

static int stats(int fd, struct inet_stats *st)
{
	struct strioctl ic = { INET_IOC_STATS, -1, sizeof(*st), (char *)st };

	memset(st, 0, sizeof(*st));
	return ioctl(fd, I_STR, &ic);
}

static void test_transfer(uint64_t total)
{
	static const unsigned rsizes[] = { 65536, 3, 8192, 65536, 100000 };
	struct sender sd;
	struct inet_stats ss, rs;
	char *buf = malloc(100000);
	uint64_t off = 0;
	unsigned k = 0;
	int c, s, flags, bad = 0;
	long t0 = now_ms();

	REQUIRE(buf != NULL);
	REQUIRE(xt_pair(&c, &s) == 0);
	sd.fd = c;
	sd.total = total;
	REQUIRE(pthread_create(&sd.th, NULL, send_main, &sd) == 0);
	for (;;) {
		int r = t_rcv(s, buf, rsizes[k++ % 5], &flags);

		if (r < 0)
			break;
		for (int i = 0; i < r && bad < 5; i++)
			if ((unsigned char)buf[i] != pat(off + (uint64_t)i)) {
				fprintf(stderr, "byte %llu: %02x, want %02x\n",
					(unsigned long long)(off + (uint64_t)i),
					(unsigned char)buf[i],
					pat(off + (uint64_t)i));
				bad++;
			}
		off += (uint64_t)r;
	}
	CHECK_EQ(t_errno, TLOOK);
	CHECK_RET(t_look(s), T_ORDREL);
	CHECK_RET(t_rcvrel(s), 0);
	pthread_join(sd.th, NULL);
	CHECK_EQ(sd.r, 0);
	CHECK_EQ(off, total);
	CHECK_EQ(bad, 0);
	CHECK_RET(t_sndrel(s), 0);
	CHECK_EQ(xt_wait_event(c, T_ORDREL, 5000), T_ORDREL);
	CHECK_RET(t_rcvrel(c), 0);
	/* what the counts say */
	CHECK_RET(stats(c, &ss), 0);
	CHECK_RET(stats(s, &rs), 0);
	CHECK_EQ(ss.tx_bytes, total);
	CHECK_EQ(ss.tx_drops, 0);
	CHECK_EQ(ss.tx_sent, ss.tx_msgs);
	CHECK_EQ(rs.rx_bytes, total);
	CHECK(rs.rx_calls > 0 && rs.rx_calls <= rs.rx_msgs);
	fprintf(stderr, "   %llu MiB in %ld ms: tx %llu msgs %llu calls, "
		"rx %llu msgs %llu calls\n",
		(unsigned long long)(total >> 20), now_ms() - t0,
		(unsigned long long)ss.tx_msgs,
		(unsigned long long)ss.tx_calls,
		(unsigned long long)rs.rx_msgs,
		(unsigned long long)rs.rx_calls);
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(s), 0);
	free(buf);
}

/* many small messages saying T_MORE: /dev/tcp gathers them into fewer
 * socket calls than messages; /dev/inet/tcp makes one call each */
static void test_batching(void)
{
	enum { N = 2000 };
	struct inet_stats st;
	char buf[N * 8];
	int c, s;

	REQUIRE(xt_pair(&c, &s) == 0);
	for (int i = 0; i < N; i++) {
		char m[8];

		memset(m, 'a' + i % 26, sizeof(m));
		CHECK_RET(t_snd(c, m, sizeof(m), i < N - 1 ? T_MORE : 0),
			  (int)sizeof(m));
	}
	CHECK_RET(xt_rcv_all(s, buf, sizeof(buf)), 0);
	for (int i = 0; i < N; i++)
		if (buf[i * 8] != 'a' + i % 26 || buf[i * 8 + 7] != 'a' + i % 26) {
			CHECK_EQ(buf[i * 8], 'a' + i % 26);
			break;
		}
	CHECK_RET(stats(c, &st), 0);
	CHECK_EQ(st.tx_msgs, N);
	CHECK_EQ(st.tx_sent, N);
	if (strcmp(cur->dev, "/dev/tcp") == 0)
		CHECK(st.tx_calls < st.tx_msgs);
	else
		CHECK(st.tx_calls >= st.tx_msgs);
	fprintf(stderr, "   %d messages with T_MORE: %llu calls\n", N,
		(unsigned long long)st.tx_calls);
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(s), 0);
}

/* the receiver stops reading: TFLOW, memory bounded */
static void test_tflow(void)
{
	static char buf[65536];
	uint64_t sent = 0, got = 0;
	int c, s, flags, r;

	REQUIRE(xt_pair(&c, &s) == 0);
	memset(buf, 'f', sizeof(buf));
	CHECK_RET(set_nonblock(c, true), 0);
	for (;;) {
		r = t_snd(c, buf, sizeof(buf), 0);
		if (r < 0)
			break;
		sent += (uint64_t)r;
		if (sent > (256u << 20))
			break;
	}
	CHECK_EQ(r, -1);
	CHECK_EQ(t_errno, TFLOW);
	CHECK(sent > 0);
	CHECK(sent < (64u << 20));	/* kernel buffers and queues only */
	/* the receiver reads everything; the sender goes on */
	CHECK_RET(set_nonblock(s, true), 0);
	long end = now_ms() + 10000;
	while (got < sent && now_ms() < end) {
		r = t_rcv(s, buf, sizeof(buf), &flags);
		if (r > 0)
			got += (uint64_t)r;
		else
			pause_ms(1);
	}
	CHECK_EQ(got, sent);
	CHECK_RET(t_snd(c, "more", 4, 0), 4);
	CHECK_RET(set_nonblock(s, false), 0);
	CHECK_RET(xt_rcv_all(s, buf, 4), 0);
	CHECK_MEM(buf, "more", 4);
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(s), 0);
}

/* an XTI endpoint connected to a plain socket server */
static int xt_to_socket(int *ls_out, int *s_out)
{
	struct sa a = sa_lo(cur->family, 0);
	socklen_t al = a.len;
	struct t_call c;
	int ls, cli;

	ls = socket(cur->family, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, &a.u.sa, a.len) != 0 ||
	    getsockname(ls, &a.u.sa, &al) != 0 || listen(ls, 1) != 0)
		return -1;
	cli = xt_open();
	if (cli < 0 || xt_bind_lo(cli, 0, 0, NULL) != 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&a.u;
	c.addr.len = a.len;
	if (t_connect(cli, &c, NULL) != 0)
		return -1;
	*s_out = accept(ls, NULL, NULL);
	*ls_out = ls;
	return *s_out < 0 ? -1 : cli;
}

struct blaster {
	int fd;
	int r, te;
	uint64_t sent;
	pthread_t th;
};

static void *blast_main(void *arg)
{
	struct blaster *b = arg;
	static char buf[65536];
	long end = now_ms() + 10000;

	while (now_ms() < end) {
		int r = t_snd(b->fd, buf, sizeof(buf), 0);

		if (r < 0) {
			b->r = r;
			b->te = t_errno;
			return NULL;
		}
		b->sent += (uint64_t)r;
	}
	b->r = 0;		/* never failed: the test fails */
	return NULL;
}

static void abort_sock(int s)
{
	struct linger lg = { 1, 0 };

	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s);
}

static void test_vanish(void)
{
	struct blaster b;
	struct t_discon d;
	char buf[65536];
	int ls, s, cli, flags;
	size_t have = 0;

	/* the sender blocks in t_snd; the reader goes away */
	cli = xt_to_socket(&ls, &s);
	REQUIRE(cli >= 0);
	memset(&b, 0, sizeof(b));
	b.fd = cli;
	REQUIRE(pthread_create(&b.th, NULL, blast_main, &b) == 0);
	while (have < (1u << 20)) {
		ssize_t r = recv(s, buf, sizeof(buf), 0);

		if (r <= 0)
			break;
		have += (size_t)r;
	}
	pause_ms(50);		/* let the sender fill everything */
	abort_sock(s);
	pthread_join(b.th, NULL);
	CHECK_EQ(b.r, -1);
	CHECK_EQ(b.te, TLOOK);
	CHECK_EQ(xt_wait_event(cli, T_DISCONNECT, 3000), T_DISCONNECT);
	memset(&d, 0, sizeof(d));
	CHECK_RET(t_rcvdis(cli, &d), 0);
	CHECK(d.reason == ECONNRESET || d.reason == EPIPE);
	CHECK_STATE(cli, T_IDLE);
	CHECK_RET(t_close(cli), 0);
	close(ls);

	/* the receiver waits in t_rcv; the sender goes away */
	cli = xt_to_socket(&ls, &s);
	REQUIRE(cli >= 0);
	memset(buf, 'v', sizeof(buf));
	CHECK_RET(send(s, buf, 1000, 0), 1000);
	CHECK_RET(xt_rcv_all(cli, buf, 1000), 0);
	abort_sock(s);
	CHECK_TERR(t_rcv(cli, buf, sizeof(buf), &flags), TLOOK);
	CHECK_RET(t_look(cli), T_DISCONNECT);
	CHECK_RET(t_rcvdis(cli, &d), 0);
	CHECK_EQ(d.reason, ECONNRESET);
	CHECK_RET(t_close(cli), 0);
	close(ls);
}

int main(void)
{
	const char *big = getenv("INET_BIG");
	uint64_t total = big != NULL && strcmp(big, "1") == 0 ? (1ull << 30)
							      : (64ull << 20);

	FOR_EACH_CFG({
		test_transfer(total);
		test_batching();
		test_tflow();
		test_vanish();
	});
	T_DONE();
}
