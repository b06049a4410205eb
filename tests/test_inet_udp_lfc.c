/*
 * test_inet_udp_lfc -- flow control between /dev/udp endpoints of one
 * host (src/transport/inet_lfc.c).
 *
 * A receiver that does not keep up holds its sender back instead of
 * losing what its socket has no room for: a non-blocking sender gets
 * TFLOW, and everything it was let send arrives, in order, once the
 * receiver reads; a reader slower than a blocking sender loses nothing.
 * A receiver that stops reading for good costs its sender one wait of
 * LFC_STALL_NS, then datagrams go as plain UDP.  The receiver's record
 * lives as long as its binding; a stale one is replaced and a garbage
 * one is refused or outwaited.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_inet_udp_lib.h"

#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>

/* t_rcvudata into buf, waiting up to 5 s: its length, or -1 (a loss
 * must fail the test, not hang it) */
static int rcv(int fd, char *buf, unsigned max)
{
	return rcv_ms(fd, buf, max, 5000);
}

static unsigned long netns(void)
{
	struct stat st;

	REQUIRE(stat("/proc/thread-self/ns/net", &st) == 0);
	return (unsigned long)st.st_ino;
}

static void rec_path(char *buf, size_t n, unsigned short port)
{
	snprintf(buf, n, "/dev/shm/streams-udp-%lu-4-%u", netns(), port);
}

/* Blocking reads of want numbered datagrams of sz bytes, in order. */
static int read_numbered(int fd, int want, unsigned sz, int first)
{
	static char buf[65536];
	int got = 0;

	for (; got < want; got++) {
		uint32_t v;

		if (rcv(fd, buf, sizeof(buf)) != (int)sz)
			break;
		memcpy(&v, buf, sizeof(v));
		if (v != (uint32_t)(first + got)) {
			printf("datagram %d carries %u\n", first + got, v);
			break;
		}
	}
	return got;
}

/* A receiver that does not read: the non-blocking sender is held back
 * (TFLOW) once the socket is full, and everything it was let send
 * arrives, in order, when the receiver reads. */
static void test_held_back(void)
{
	enum { SZ = 1024, MAX = 20000 };
	static char buf[SZ];
	struct sockaddr_in ra, sa;
	int r = open_bound(&ra), s = open_bound(&sa), sent = 0;

	REQUIRE(fcntl(s, F_SETFL, O_NONBLOCK) == 0);
	memset(buf, 'h', sizeof(buf));
	for (; sent < MAX; sent++) {
		uint32_t v = (uint32_t)sent;

		memcpy(buf, &v, sizeof(v));
		if (snd(s, &ra, buf, SZ) != 0)
			break;
	}
	CHECK_EQ(t_errno, TFLOW);
	/* more than the socket holds (about 100 of 1 KiB in 212992
	 * bytes), less than everything */
	CHECK(sent > 50 && sent < MAX);
	int got = read_numbered(r, sent, SZ, 0);
	CHECK_EQ(got, sent);
	struct inet_stats st = stats(r);
	CHECK_EQ(st.rx_overflows, 0);
	CHECK_EQ(st.rx_msgs, (uint64_t)sent);
	/* and the sender goes on */
	REQUIRE(fcntl(s, F_SETFL, 0) == 0);
	uint32_t v = (uint32_t)sent;
	memcpy(buf, &v, sizeof(v));
	CHECK_RET(snd(s, &ra, buf, SZ), 0);
	CHECK_EQ(read_numbered(r, 1, SZ, sent), 1);
	printf("test_held_back: %d sent before TFLOW, all received\n", sent);
	CHECK_RET(t_close(s), 0);
	CHECK_RET(t_close(r), 0);
}

struct slow {
	int fd, n;
	unsigned sz;
	int got;
};

static void *slow_reader(void *arg)
{
	struct slow *sl = arg;
	static char buf[65536];

	for (sl->got = 0; sl->got < sl->n; sl->got++) {
		uint32_t v;

		if (rcv(sl->fd, buf, sizeof(buf)) != (int)sl->sz)
			break;
		memcpy(&v, buf, sizeof(v));
		if (v != (uint32_t)sl->got)
			break;
		if (sl->got % 256 == 255)
			pause_ms(1);	/* slower than the sender */
	}
	return NULL;
}

/* A blocking sender faster than its reader, at several sizes: nothing
 * lost, nothing out of order. */
static void test_slow_reader(void)
{
	static const unsigned sizes[] = { 1 + 3, 256, 1024, 16384 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		static char buf[16384];
		struct sockaddr_in ra, sa;
		struct slow sl;
		pthread_t t;
		int r = open_bound(&ra), s = open_bound(&sa);
		int n = sizes[i] >= 16384 ? 3000 : 20000;

		sl.fd = r;
		sl.n = n;
		sl.sz = sizes[i];
		REQUIRE(pthread_create(&t, NULL, slow_reader, &sl) == 0);
		memset(buf, 's', sizeof(buf));
		for (int k = 0; k < n; k++) {
			uint32_t v = (uint32_t)k;

			memcpy(buf, &v, sizeof(v));
			CHECK_RET(snd(s, &ra, buf, sizes[i]), 0);
		}
		REQUIRE(pthread_join(t, NULL) == 0);
		CHECK_EQ(sl.got, n);
		CHECK_EQ(stats(r).rx_overflows, 0);
		printf("test_slow_reader: %u bytes: %d of %d\n", sizes[i],
		       sl.got, n);
		CHECK_RET(t_close(s), 0);
		CHECK_RET(t_close(r), 0);
	}
}

/* A receiver that never reads holds a blocking sender back for one
 * stall (50 ms), not for ever; then the kernel drops what does not
 * fit, as for any UDP socket. */
static void test_stall(void)
{
	enum { SZ = 1024, N = 3000 };
	static char buf[SZ];
	struct sockaddr_in ra, sa;
	int r = open_bound(&ra), s = open_bound(&sa);
	double t0 = now_s();

	alarm(30);			/* held for ever: killed, failed */
	memset(buf, 'x', sizeof(buf));
	for (int k = 0; k < N; k++)
		CHECK_RET(snd(s, &ra, buf, SZ), 0);
	alarm(0);
	double el = now_s() - t0;
	CHECK(el >= 0.045);
	CHECK(el < 5.0);
	printf("test_stall: %d datagrams sent in %.3f s\n", N, el);
	CHECK_RET(t_close(s), 0);
	CHECK_RET(t_close(r), 0);
}

/* The record is there while the endpoint is bound, gone after unbind
 * and close; a stale one (nobody holds its lock) is replaced; one a live
 * owner holds is left, and the endpoint works without. */
static void test_record(void)
{
	char path[128];
	struct sockaddr_in ra;
	struct stat st;
	int r = open_bound(&ra);
	unsigned short port = ntohs(ra.sin_port);

	rec_path(path, sizeof(path), port);
	CHECK_RET(stat(path, &st), 0);
	CHECK(st.st_size >= 4096);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_RET(t_unbind(r), 0);
	CHECK_ERR(stat(path, &st), ENOENT);
	CHECK_RET(t_close(r), 0);

	/* stale: garbage nobody holds */
	int f = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(f >= 0);
	CHECK_EQ(write(f, "garbage", 7), 7);
	close(f);
	r = open_bound_port(&ra, port);
	CHECK_RET(stat(path, &st), 0);
	CHECK(st.st_size >= 4096);		/* a new record */
	CHECK_RET(t_close(r), 0);
	CHECK_ERR(stat(path, &st), ENOENT);

	/* held by a live owner: left alone */
	f = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(f >= 0);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	REQUIRE(fcntl(f, F_OFD_SETLK, &fl) == 0);
	r = open_bound_port(&ra, port);
	CHECK_RET(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 0);		/* still the other's */
	{
		/* and a sender to it is not held back by the foreign file */
		struct sockaddr_in sa;
		int s = open_bound(&sa);
		static char buf[64];

		memset(buf, 0, sizeof(buf));
		CHECK_RET(snd(s, &ra, buf, sizeof(buf)), 0);
		CHECK_EQ(read_numbered(r, 1, sizeof(buf), 0), 1);
		CHECK_RET(t_close(s), 0);
	}
	CHECK_RET(t_close(r), 0);
	CHECK_RET(stat(path, &st), 0);		/* not ours to remove */
	close(f);
	unlink(path);
}

/* A record that lies: right magic and size (copied from a live one),
 * counters that claim the socket is full.  The sender waits one stall,
 * then sends as plain UDP; nothing hangs. */
static void test_lying_record(void)
{
	char path[128];
	static char rec[4096];
	struct sockaddr_in ra, sa;
	int r = open_bound(&ra), s, f;
	unsigned short port = ntohs(ra.sin_port);

	rec_path(path, sizeof(path), port);
	f = open(path, O_RDONLY);
	REQUIRE(f >= 0);
	REQUIRE(read(f, rec, sizeof(rec)) == (ssize_t)sizeof(rec));
	close(f);
	CHECK_RET(t_close(r), 0);
	/* a socket on the port, and the lying record beside it */
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	REQUIRE(u >= 0);
	REQUIRE(bind(u, (struct sockaddr *)&ra, sizeof(ra)) == 0);
	/* sent (at 64) far above consumed (at 128) */
	uint64_t big = 1ull << 50;
	memcpy(rec + 64, &big, sizeof(big));
	f = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(f >= 0);
	REQUIRE(write(f, rec, sizeof(rec)) == (ssize_t)sizeof(rec));
	close(f);
	s = open_bound(&sa);
	double t0 = now_s();
	static char buf[100];
	for (int k = 0; k < 10; k++)
		CHECK_RET(snd(s, &ra, buf, sizeof(buf)), 0);
	int got = 0;
	struct timeval tv = { 2, 0 };
	REQUIRE(setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
	while (got < 10 && recv(u, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf))
		got++;
	double el = now_s() - t0;
	CHECK_EQ(got, 10);
	CHECK(el < 2.0);
	printf("test_lying_record: 10 datagrams through in %.3f s\n", el);
	CHECK_RET(t_close(s), 0);
	close(u);
	unlink(path);
}

int main(void)
{
	test_held_back();
	test_slow_reader();
	test_stall();
	test_record();
	test_lying_record();
	T_DONE();
}
