/*
 * test_inet_udp_stream -- /dev/udp's choice between sending a datagram at
 * once and batching it, with the default idle time (this program leaves
 * STREAMS_INET_IDLE_NS unset, unlike test_inet_udp).
 *
 * A writer streaming large datagrams comes back for the next one after
 * its own copy of the bytes, microseconds for 16 KiB: that is not idle,
 * so the datagrams are queued and go out three to a GSO message (one
 * send call for three).  When the idle time did not grow with the size,
 * most went alone: 0.84 send calls a datagram in the benchmark here, 0.5
 * in this test.  A request/response exchange still sends each datagram
 * at once, not a tick later.
 */
#include "test_inet_udp_lib.h"


/* t_rcvudata into buf (max bytes): its length, or -1 (t_errno) */
static int rcv(int fd, char *buf, unsigned max)
{
	return rcv_ms(fd, buf, max, -1);
}

/* 16 KiB datagrams in a tight loop to a socket that never reads (what
 * does not fit its buffer the kernel drops: this is about the sender) */
static void test_stream_batches(void)
{
	enum { N = 600, SZ = 16384 };
	static char buf[SZ];
	struct sockaddr_in xa, sa;
	socklen_t l = sizeof(sa);
	int x, s;

	x = open_bound(&xa);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	REQUIRE(s >= 0);
	loop_addr(&sa, 0);
	REQUIRE(bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	REQUIRE(getsockname(s, (struct sockaddr *)&sa, &l) == 0);
	memset(buf, 's', sizeof(buf));
	for (int i = 0; i < N; i++)
		CHECK_RET(snd(x, &sa, buf, SZ), 0);
	/* what is queued goes within a tick */
	struct inet_stats st;
	for (int i = 0; i < 200; i++) {
		st = stats(x);
		if (st.tx_sent == N)
			break;
		pause_ms(5);
	}
	CHECK_EQ(st.tx_msgs, (uint64_t)N);
	CHECK_EQ(st.tx_sent, (uint64_t)N);
	printf("test_stream_batches: %llu send calls for %d datagrams\n",
	       (unsigned long long)st.tx_calls, N);
	if (T_SANITIZED)
		printf("test_stream_batches: a sanitizer's build is too slow "
		       "to stream: batching not checked\n");
	else
		CHECK(st.tx_calls * 10 <= (uint64_t)N * 4);
	close(s);
	CHECK_RET(t_close(x), 0);
}

/* Request and response between two /dev/udp endpoints: each datagram
 * goes at once, and is in the peer's socket when t_sndudata returns
 * (loopback delivers in the sender's system call), so the peer's
 * t_rcvudata does not wait: a half of a round trip takes tens of
 * microseconds.  Queued, each would wait for the kick, about a tick
 * (1 ms).  The median half is checked: on a machine busy with other
 * work a third of them can be slow (preempted between send and
 * receive), not most. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void test_request_response(void)
{
	enum { N = 50, SZ = 16384 };
	static char buf[SZ];
	struct sockaddr_in aa, ba;
	double half[2 * N], t0;
	int a, b;

	a = open_bound(&aa);
	b = open_bound(&ba);
	memset(buf, 'r', sizeof(buf));
	for (int i = 0; i < 2 * N; i++) {
		int x = i % 2 ? b : a, y = i % 2 ? a : b;

		t0 = now_s();
		CHECK_RET(snd(x, i % 2 ? &aa : &ba, buf, SZ), 0);
		CHECK_EQ(rcv(y, buf, SZ), SZ);
		half[i] = now_s() - t0;
	}
	qsort(half, 2 * N, sizeof(half[0]), cmp_double);
	printf("test_request_response: half a round trip %.0f us (median), "
	       "%.0f us (90th percentile)\n", half[N] * 1e6,
	       half[2 * N * 9 / 10] * 1e6);
	/* (under TSan a half alone can take that long) */
	if (!T_TSAN)
		CHECK(half[N] < 500e-6);
	CHECK_EQ(stats(a).tx_calls, (uint64_t)N);
	CHECK_EQ(stats(b).tx_calls, (uint64_t)N);
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
}

/* Datagrams the kernel drops at a /dev/udp socket (its buffer full,
 * nobody reading) are counted (rx_overflows, from SO_RXQ_OVFL): the
 * kernel reports its count with the next datagram it queues.  A caller
 * built before that field gets the rest. */
static void test_overflows(void)
{
	enum { N = 200, SZ = 16384 };
	static char buf[SZ];
	struct sockaddr_in ra;
	int r, s, got = 0, small = 1 << 16;

	r = open_bound(&ra);
	/* a small buffer: the kernel keeps what fits, drops the rest */
	set_rcvbuf(r, small);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	REQUIRE(s >= 0);
	memset(buf, 'o', sizeof(buf));
	for (int i = 0; i < N; i++)
		CHECK_EQ(sendto(s, buf, SZ, 0, (struct sockaddr *)&ra,
				sizeof(ra)), SZ);
	REQUIRE(t_getstate(r) == T_IDLE);
	REQUIRE(fcntl(r, F_SETFL, O_NONBLOCK) == 0);
	while (rcv(r, buf, SZ) == SZ)
		got++;
	CHECK_EQ(t_errno, TNODATA);
	CHECK(got > 0 && got < N);
	/* the next datagram queued carries the count */
	CHECK_EQ(sendto(s, buf, SZ, 0, (struct sockaddr *)&ra, sizeof(ra)),
		 SZ);
	pause_ms(20);
	CHECK_EQ(rcv(r, buf, SZ), SZ);
	struct inet_stats st = stats(r);
	printf("test_overflows: %d of %d kept, %llu dropped\n", got, N,
	       (unsigned long long)st.rx_overflows);
	CHECK_EQ(st.rx_overflows, (uint64_t)(N - got));
	CHECK_EQ(st.rx_msgs, (uint64_t)(got + 1));
	/* the size before rx_overflows: the rest; less: EINVAL */
	{
		struct inet_stats o;
		struct strioctl ic = { INET_IOC_STATS, -1,
				       (int)INET_STATS_SIZE_V1, (char *)&o };

		memset(&o, 0xee, sizeof(o));
		CHECK_RET(ioctl(r, I_STR, &ic), 0);
		CHECK_EQ(ic.ic_len, (int)INET_STATS_SIZE_V1);
		CHECK_EQ(o.rx_msgs, (uint64_t)(got + 1));
		CHECK_EQ(o.rx_overflows, 0xeeeeeeeeeeeeeeeeull);
		ic.ic_len = (int)INET_STATS_SIZE_V1 - 1;
		CHECK_ERR(ioctl(r, I_STR, &ic), EINVAL);
	}
	close(s);
	CHECK_RET(t_close(r), 0);
}

int main(void)
{
	REQUIRE(getenv("STREAMS_INET_IDLE_NS") == NULL);
	test_stream_batches();
	test_request_response();
	test_overflows();
	T_DONE();
}
