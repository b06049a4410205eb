/*
 * test_inet_udp_lfc -- flow control between /dev/udp endpoints of one
 * host (src/transport/inet_lfc.c).
 *
 * A receiver that does not keep up holds its sender back instead of
 * losing what its socket has no room for: a non-blocking sender gets
 * TFLOW, and everything it was let send arrives, in order, once the
 * receiver reads; a reader slower than a blocking sender loses nothing.
 * A receiver that stops reading for good costs its sender one wait of
 * LFC_STALL_NS (250 ms), then datagrams go as plain UDP.  The receiver's record
 * lives as long as its binding; a stale one is replaced and a garbage
 * one is refused or outwaited.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_inet_udp_lib.h"

#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "inet_lfc.h"		/* (test_reserve_race: the sender's side) */

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
	char *buf = malloc(65536);

	if (buf == NULL)		/* (no CHECK off the main thread) */
		abort();

	for (sl->got = 0; sl->got < sl->n; sl->got++) {
		uint32_t v;

		if (rcv(sl->fd, buf, 65536) != (int)sl->sz)
			break;
		memcpy(&v, buf, sizeof(v));
		if (v != (uint32_t)sl->got)
			break;
		if (sl->got % 256 == 255)
			pause_ms(1);	/* slower than the sender */
	}
	free(buf);
	return NULL;
}

/* n numbered datagrams of sz bytes from s to ra, where r reads them
 * slowly in a thread: how many it got, in order. */
static int to_slow_reader(int r, int s, const struct sockaddr_in *ra, int n,
			  unsigned sz)
{
	static char buf[16384];
	struct slow sl = { r, n, sz, 0 };
	pthread_t t;

	REQUIRE(sz <= sizeof(buf));
	REQUIRE(pthread_create(&t, NULL, slow_reader, &sl) == 0);
	memset(buf, 's', sizeof(buf));
	for (int k = 0; k < n; k++) {
		uint32_t v = (uint32_t)k;

		memcpy(buf, &v, sizeof(v));
		CHECK_RET(snd(s, ra, buf, sz), 0);
	}
	REQUIRE(pthread_join(t, NULL) == 0);
	return sl.got;
}

/* A blocking sender faster than its reader, at several sizes: nothing
 * lost, nothing out of order. */
static void test_slow_reader(void)
{
	static const unsigned sizes[] = { 1 + 3, 256, 1024, 16384 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct sockaddr_in ra, sa;
		int r = open_bound(&ra), s = open_bound(&sa);
		int n = sizes[i] >= 16384 ? 3000 : 20000;
		int got = to_slow_reader(r, s, &ra, n, sizes[i]);

		CHECK_EQ(got, n);
		CHECK_EQ(stats(r).rx_overflows, 0);
		printf("test_slow_reader: %u bytes: %d of %d\n", sizes[i],
		       got, n);
		CHECK_RET(t_close(s), 0);
		CHECK_RET(t_close(r), 0);
	}
}

/* A receiver whose whole buffer is smaller than one message (16 KiB
 * datagrams, GSO'd three to a message, into 8 KiB): the kernel takes a
 * message whatever its size while what it holds is within the buffer,
 * so each goes once the one before is read, none lost (a sender that
 * waited for room for the whole message would wait for ever, then fall
 * back to plain UDP and lose them). */
static void test_small_buffer(void)
{
	enum { N = 300, SZ = 16384 };
	struct sockaddr_in ra, sa;
	int r = open_bound(&ra), s = open_bound(&sa), got;

	set_rcvbuf(r, 4096);
	got = to_slow_reader(r, s, &ra, N, SZ);
	CHECK_EQ(got, N);
	CHECK_EQ(stats(r).rx_overflows, 0);
	printf("test_small_buffer: %d of %d\n", got, N);
	CHECK_RET(t_close(s), 0);
	CHECK_RET(t_close(r), 0);
}

/* A receiver that never reads holds a blocking sender back for one
 * stall (250 ms), not for ever; then the kernel drops what does not
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
	CHECK(el >= 0.2);		/* one stall: 250 ms */
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

/* A record at port beside a plain socket on it, as how says; 10
 * datagrams from /dev/udp to the port: seconds until all arrived. */
enum lie { HELD, UNHELD, FOREIGN, OPEN_MODE };

static double lying_case(enum lie how)
{
	char path[128];
	static char rec[4096];
	struct sockaddr_in ra, sa;
	int r = open_bound(&ra), s, f;
	unsigned short port = ntohs(ra.sin_port);

	/* a live record's bytes, then a lie: sent (at 64) far above
	 * consumed (at 128), the socket full for ever */
	rec_path(path, sizeof(path), port);
	f = open(path, O_RDONLY);
	REQUIRE(f >= 0);
	REQUIRE(read(f, rec, sizeof(rec)) == (ssize_t)sizeof(rec));
	close(f);
	CHECK_RET(t_close(r), 0);
	uint64_t big = 1ull << 50;
	memcpy(rec + 64, &big, sizeof(big));
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	REQUIRE(u >= 0);
	REQUIRE(bind(u, (struct sockaddr *)&ra, sizeof(ra)) == 0);
	f = open(path, O_RDWR | O_CREAT | O_EXCL,
		 how == OPEN_MODE ? 0644 : 0600);
	REQUIRE(f >= 0);
	REQUIRE(fchmod(f, how == OPEN_MODE ? 0644 : 0600) == 0);
	REQUIRE(write(f, rec, sizeof(rec)) == (ssize_t)sizeof(rec));
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	if (how != UNHELD)
		REQUIRE(fcntl(f, F_OFD_SETLK, &fl) == 0);
	if (how == FOREIGN)
		REQUIRE(fchown(f, 65534, 65534) == 0);
	s = open_bound(&sa);
	double t0 = now_s();
	static char buf[100];
	for (int k = 0; k < 10; k++)
		CHECK_RET(snd(s, &ra, buf, sizeof(buf)), 0);
	int got = 0;
	struct timeval tv = { 5, 0 };
	REQUIRE(setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
	while (got < 10 && recv(u, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf))
		got++;
	double el = now_s() - t0;
	CHECK_EQ(got, 10);
	CHECK_RET(t_close(s), 0);
	close(u);
	close(f);
	unlink(path);
	return el;
}

/* A record that lies (right magic and size, a socket full for ever),
 * held by a live owner of ours: the sender waits one stall (250 ms),
 * then sends as plain UDP; nothing hangs.  The same record not held (its
 * owner died), another user's, or open to others, is not used at all. */
static void test_lying_record(void)
{
	double held, unheld, foreign, open;

	if (geteuid() != 0) {
		printf("test_lying_record: FOREIGN needs root: skipped\n");
		foreign = 0;
	} else {
		foreign = lying_case(FOREIGN);
	}
	held = lying_case(HELD);
	unheld = lying_case(UNHELD);
	open = lying_case(OPEN_MODE);
	printf("test_lying_record: held %.3f s, unheld %.3f, foreign %.3f, "
	       "open to others %.3f\n", held, unheld, foreign, open);
	CHECK(held >= 0.2 && held < 5.0);
	CHECK(unheld < 0.2);
	CHECK(foreign < 0.2);
	CHECK(open < 0.2);
}

struct sender {
	int fd, id, n;
	unsigned sz;
	struct sockaddr_in to;
	int failed;			/* sends that failed (checked by main) */
};

static void *sender_main(void *arg)
{
	struct sender *sn = arg;
	static char bufs[4][1024];
	char *buf = bufs[sn->id];

	memset(buf, 0, sn->sz);
	for (int k = 0; k < sn->n; k++) {
		uint32_t v[2] = { (uint32_t)sn->id, (uint32_t)k };

		memcpy(buf, v, sizeof(v));
		if (snd(sn->fd, &sn->to, buf, sn->sz) != 0)
			sn->failed++;
	}
	return NULL;
}

/* Three senders to one slow reader: they cannot all spend the same
 * room; nothing lost, each sender's datagrams in its order. */
static void test_many_senders(void)
{
	enum { NS = 3, N = 6000, SZ = 256 };
	struct sockaddr_in ra;
	struct sender sn[NS];
	pthread_t t[NS];
	int r = open_bound(&ra), next[NS] = { 0 }, got = 0;
	static char buf[2048];

	for (int i = 0; i < NS; i++) {
		struct sockaddr_in a;

		sn[i] = (struct sender){ open_bound(&a), i, N, SZ, ra, 0 };
		REQUIRE(pthread_create(&t[i], NULL, sender_main, &sn[i]) == 0);
	}
	for (; got < NS * N; got++) {
		uint32_t v[2];

		if (rcv(r, buf, sizeof(buf)) != SZ)
			break;
		memcpy(v, buf, sizeof(v));
		if (v[0] >= NS || v[1] != (uint32_t)next[v[0]]++)
			break;
		if (got % 512 == 511)
			pause_ms(1);
	}
	for (int i = 0; i < NS; i++) {
		REQUIRE(pthread_join(t[i], NULL) == 0);
		CHECK_EQ(sn[i].failed, 0);
		CHECK_RET(t_close(sn[i].fd), 0);
	}
	CHECK_EQ(got, NS * N);
	CHECK_EQ(stats(r).rx_overflows, 0);
	printf("test_many_senders: %d of %d\n", got, NS * N);
	CHECK_RET(t_close(r), 0);
}

/* One sender to more receivers than it keeps records for (6 > 4),
 * round robin: records come and go from its table between batches;
 * nothing lost at any of them. */
static void test_many_receivers(void)
{
	enum { NR = 6, N = 2000, SZ = 1024 };
	struct sockaddr_in ra[NR], sa;
	struct slow sl[NR];
	pthread_t t[NR];
	int r[NR], s = open_bound(&sa);
	static char buf[SZ];

	for (int i = 0; i < NR; i++) {
		r[i] = open_bound(&ra[i]);
		sl[i] = (struct slow){ r[i], N, SZ, 0 };
		REQUIRE(pthread_create(&t[i], NULL, slow_reader, &sl[i]) == 0);
	}
	memset(buf, 0, sizeof(buf));
	for (int k = 0; k < N; k++)
		for (int i = 0; i < NR; i++) {
			uint32_t v = (uint32_t)k;

			memcpy(buf, &v, sizeof(v));
			CHECK_RET(snd(s, &ra[i], buf, SZ), 0);
		}
	for (int i = 0; i < NR; i++) {
		REQUIRE(pthread_join(t[i], NULL) == 0);
		CHECK_EQ(sl[i].got, N);
		CHECK_EQ(stats(r[i]).rx_overflows, 0);
		CHECK_RET(t_close(r[i]), 0);
	}
	printf("test_many_receivers: %d receivers, %d each\n", NR, N);
	CHECK_RET(t_close(s), 0);
}

static int closed_rc = -2;		/* close_later's t_close */

static void *close_later(void *arg)
{
	int *fd = arg;
	char *buf = malloc(16384);

	if (buf == NULL)
		abort();
	for (int i = 0; i < 20; i++)
		(void)rcv(*fd, buf, 16384);
	closed_rc = t_close(*fd);
	free(buf);
	return NULL;
}

/* The receiver closes while a sender streams 16 KiB datagrams at it
 * (its record closed mid-batch): the sender goes on, nothing hangs. */
static void test_receiver_closes(void)
{
	enum { N = 3000, SZ = 16384 };
	static char buf[SZ];
	struct sockaddr_in ra, sa;
	int r = open_bound(&ra), s = open_bound(&sa), ok = 0;
	pthread_t t;

	alarm(30);
	REQUIRE(pthread_create(&t, NULL, close_later, &r) == 0);
	memset(buf, 'c', sizeof(buf));
	for (int k = 0; k < N; k++)
		if (snd(s, &ra, buf, SZ) == 0)
			ok++;
		else if (t_errno == TLOOK)
			(void)t_look(s);	/* (port unreachable) */
	REQUIRE(pthread_join(t, NULL) == 0);
	alarm(0);
	CHECK_EQ(closed_rc, 0);
	CHECK(ok > 0);
	printf("test_receiver_closes: %d of %d sent\n", ok, N);
	CHECK_RET(t_close(s), 0);
}

/* A forked child's copy of a receiver, closed when the child exits,
 * leaves the parent's record; a connected receiver has none (it takes
 * only its peer's datagrams), and has one again once disconnected. */
static void test_fork_and_connect(void)
{
	char path[128];
	struct stat st;
	struct sockaddr_in ra, sa;
	int r = open_bound(&ra), s = open_bound(&sa), status;
	pid_t pid;

	rec_path(path, sizeof(path), ntohs(ra.sin_port));
	CHECK_RET(stat(path, &st), 0);
	REQUIRE((pid = fork()) >= 0);
	if (pid == 0) {
		t_close(r);
		_exit(0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_RET(stat(path, &st), 0);

	/* T_CONN_REQ and T_DISCON_REQ as TPI (XTI has no connect for a
	 * connectionless endpoint) */
	struct fmsg m, a, want;

	REQUIRE(fm_write(r, fm_conn_req(&m, &sa, sizeof(sa), NULL, 0)) == 0);
	REQUIRE(fm_read(r, &a, 3000) == 0);
	CHECK(fm_equal(&a, fm_ok_ack(&want, T_CONN_REQ)));
	REQUIRE(fm_read(r, &a, 3000) == 0);
	CHECK(fm_equal(&a, fm_conn_con(&want, &sa, sizeof(sa), NULL, 0)));
	CHECK_ERR(stat(path, &st), ENOENT);
	REQUIRE(fm_write(r, fm_discon_req(&m, -1)) == 0);
	REQUIRE(fm_read(r, &a, 3000) == 0);
	CHECK(fm_equal(&a, fm_ok_ack(&want, T_DISCON_REQ)));
	CHECK_RET(stat(path, &st), 0);
	CHECK_RET(t_close(s), 0);
	CHECK_RET(t_close(r), 0);
	CHECK_ERR(stat(path, &st), ENOENT);
}

struct racer {
	struct sockaddr_in to;
	const uint64_t *sent;		/* the record's sent (offset 64) */
	int64_t lim;
	int iters, got, over;
};

static void *racer_main(void *arg)
{
	struct racer *rc = arg;
	struct lfc_send s;
	bool full;
	uint64_t c = 1000;

	memset(&s, 0, sizeof(s));
	struct lfc_peer *p = lfc_lookup(&s, (struct sockaddr *)&rc->to,
					sizeof(rc->to), &full);
	if (p == NULL) {
		rc->over = -1;
		return NULL;
	}
	for (int i = 0; i < rc->iters; i++) {
		int held = 0;

		/* take all the room there is, then give it back */
		while (lfc_reserve(p, &c, 1) == 1) {
			held++;
			if ((int64_t)__atomic_load_n(rc->sent,
						     __ATOMIC_ACQUIRE) > rc->lim)
				rc->over++;
		}
		rc->got += held;
		lfc_unsend(p, c * (uint64_t)held);
	}
	lfc_unpin(&s);
	lfc_send_free(&s);
	return NULL;
}

/* Two senders reserving room at one receiver side by side (the
 * sender's calls of inet_lfc.c, on the record a /dev/udp receiver
 * published): what they hold together never passes three quarters of
 * its buffer, however their reservations interleave. */
static void test_reserve_race(void)
{
	enum { NT = 2 };
	char path[128];
	struct sockaddr_in ra;
	struct racer rc[NT];
	pthread_t t[NT];
	int r = open_bound(&ra), f, got = 0, over = 0;

	set_rcvbuf(r, 2048);		/* the kernel makes it 4608 */
	rec_path(path, sizeof(path), ntohs(ra.sin_port));
	REQUIRE((f = open(path, O_RDONLY)) >= 0);
	const unsigned char *rec = mmap(NULL, 4096, PROT_READ, MAP_SHARED,
					f, 0);
	REQUIRE(rec != MAP_FAILED);
	close(f);
	int64_t rb;
	memcpy(&rb, rec + 40, sizeof(rb));
	CHECK(rb >= 4096 && rb < 65536);
	for (int i = 0; i < NT; i++) {
		rc[i] = (struct racer){ ra, (const uint64_t *)(rec + 64),
					rb - rb / 4, 200000, 0, 0 };
		REQUIRE(pthread_create(&t[i], NULL, racer_main, &rc[i]) == 0);
	}
	for (int i = 0; i < NT; i++) {
		REQUIRE(pthread_join(t[i], NULL) == 0);
		CHECK(rc[i].over >= 0);
		got += rc[i].got;
		over += rc[i].over;
	}
	printf("test_reserve_race: %d reservations, %d over the limit\n",
	       got, over);
	CHECK(got > 0);
	CHECK_EQ(over, 0);
	CHECK_EQ(*(const uint64_t *)(rec + 64), 0);	/* all given back */
	munmap((void *)rec, 4096);
	CHECK_RET(t_close(r), 0);
}

/* A killed receiver's record (nobody holds its lock) is removed by the
 * first publication of a process, a live one's left: this must run
 * before any other test publishes. */
static void test_sweep(void)
{
	char dead[128], live[128];
	struct sockaddr_in ra;
	struct stat st;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd, fl_fd, r;

	/* privileged ports nothing here binds, one pair per process (the
	 * asan and tsan builds' runs may overlap) */
	unsigned short port = (unsigned short)(1 + getpid() % 500 * 2);

	rec_path(dead, sizeof(dead), port);
	rec_path(live, sizeof(live), port + 1);
	unlink(dead);
	unlink(live);
	REQUIRE((fd = open(dead, O_RDWR | O_CREAT | O_EXCL, 0600)) >= 0);
	close(fd);
	REQUIRE((fl_fd = open(live, O_RDWR | O_CREAT | O_EXCL, 0600)) >= 0);
	REQUIRE(fcntl(fl_fd, F_OFD_SETLK, &fl) == 0);
	r = open_bound(&ra);
	CHECK_ERR(stat(dead, &st), ENOENT);
	CHECK_RET(stat(live, &st), 0);
	CHECK_RET(t_close(r), 0);
	close(fl_fd);
	unlink(live);
}

int main(void)
{
	test_sweep();
	test_held_back();
	test_slow_reader();
	test_small_buffer();
	test_stall();
	test_record();
	test_lying_record();
	test_many_senders();
	test_many_receivers();
	test_receiver_closes();
	test_fork_and_connect();
	test_reserve_race();
	T_DONE();
}
