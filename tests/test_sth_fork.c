/*
 * test_sth_fork.c -- STREAMS pipes between processes: s_pipe(), then
 * fork(), each process keeping an end (src/drivers/shmpipe.c).
 *
 * Every scenario forks a child that plays one end and exits with the
 * number of its own failures; the parent checks the other end and the
 * child's status.  Children leave with exit(), not child_exit(): what a
 * writer queued beyond what the reader has taken is still inside the
 * writing process, and, like stdio's buffers, goes out at exit() only.
 */
#include "sth.h"
#include "sthead.h"

#include <stdint.h>
#include <sys/epoll.h>

#define NMSG 3000


static void child_exit(int bad)
{
	fflush(stderr);
	exit(bad);
}

static size_t msg_len(int i)
{
	return (size_t)((i * 37) % 2000) + 1;
}

static void fill(unsigned char *b, size_t n, int i)
{
	for (size_t k = 0; k < n; k++)
		b[k] = (unsigned char)(i * 7 + k);
}

/* Messages one way, boundaries kept, then end of file when the child
 * exits, then EPIPE on writing. */
static void test_oneway(void)
{
	static unsigned char buf[4096], want[4096];
	int fds[2];
	pid_t pid;

	pid = fork_with_pipe(fds);
	if (pid == 0) {
		int bad = 0;
		for (int i = 0; i < NMSG; i++) {
			fill(buf, msg_len(i), i);
			if (write(fds[1], buf, msg_len(i)) != (ssize_t)msg_len(i))
				bad++;
		}
		child_exit(bad);
	}
	close(fds[1]);
	CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGD), 0);
	for (int i = 0; i < NMSG; i++) {
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n != (ssize_t)msg_len(i)) {
			CHECK_EQ(n, msg_len(i));
			break;
		}
		fill(want, msg_len(i), i);
		if (memcmp(buf, want, msg_len(i)) != 0) {
			CHECK_MEM(buf, want, msg_len(i));
			break;
		}
	}
	CHECK_EQ(wait_child(pid), 0);
	/* the other end is gone: what was sent was all read, now EOF */
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 0);
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(fds[0], "x", 1), EPIPE);
	close(fds[0]);
}

/* Control and data parts, priority messages, both directions. */
static void test_msgs(void)
{
	int fds[2];
	pid_t pid;

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		char c[64], d[64];
		struct strbuf ctl = { sizeof(c), 0, c }, dat = { sizeof(d), 0, d };
		int flags = 0, bad = 0;

		close(fds[0]);
		/* echo every message back with the same parts and priority */
		for (int i = 0; i < 100; i++) {
			flags = 0;
			if (getmsg(fds[1], &ctl, &dat, &flags) != 0) {
				bad++;
				break;
			}
			if (putmsg(fds[1], ctl.len >= 0 ? &ctl : NULL,
				   dat.len >= 0 ? &dat : NULL,
				   flags == RS_HIPRI ? RS_HIPRI : 0) != 0)
				bad++;
		}
		child_exit(bad);
	}
	close(fds[1]);
	for (int i = 0; i < 100; i++) {
		char c[16], d[16], rc[64], rd[64];
		struct strbuf ctl = { 0, 0, c }, dat = { 0, 0, d };
		struct strbuf rctl = { sizeof(rc), 0, rc };
		struct strbuf rdat = { sizeof(rd), 0, rd };
		int flags = 0, hi = (i % 3 == 0);

		ctl.len = snprintf(c, sizeof(c), "ctl%d", i);
		dat.len = snprintf(d, sizeof(d), "data%d", i);
		CHECK_RET(putmsg(fds[0], &ctl, &dat, hi ? RS_HIPRI : 0), 0);
		CHECK_RET(getmsg(fds[0], &rctl, &rdat, &flags), 0);
		CHECK_EQ(flags, hi ? RS_HIPRI : 0);
		CHECK_EQ(rctl.len, ctl.len);
		CHECK_EQ(rdat.len, dat.len);
		CHECK(rctl.len == ctl.len && memcmp(rc, c, (size_t)ctl.len) == 0);
		CHECK(rdat.len == dat.len && memcmp(rd, d, (size_t)dat.len) == 0);
	}
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
}

/* getmsg(RS_HIPRI), then getpmsg(MSG_BAND, 1), with ordinary data at
 * the head: the reader skips it and sleeps, and what the other process
 * sends then (into the ring, which only a pull brings up) still wakes
 * it; the ordinary data is read last.  A hang is a failure. */
static int getmsg_skips_front(void)
{
	char c[16], d[16], k = 'g';
	struct strbuf ctl, dat;
	int fds[2], flags, band;
	pid_t pid;

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct strbuf h = { 0, 2, "hi" }, b = { 0, 2, "b1" };
		int bad = 0;
		char g;

		close(fds[0]);
		if (write(fds[1], "plain", 5) != 5)
			bad++;
		usleep(100000);		/* the reader sleeps by now */
		if (putmsg(fds[1], &h, NULL, RS_HIPRI) != 0)
			bad++;
		if (read(fds[1], &g, 1) != 1)
			bad++;
		usleep(100000);
		if (putpmsg(fds[1], NULL, &b, 1, MSG_BAND) != 0)
			bad++;
		if (read(fds[1], &g, 1) != 1)	/* until all is read */
			bad++;
		child_exit(bad);
	}
	close(fds[1]);
	ctl = (struct strbuf){ sizeof(c), 0, c };
	dat = (struct strbuf){ sizeof(d), 0, d };
	flags = RS_HIPRI;
	CHECK_RET(getmsg(fds[0], &ctl, &dat, &flags), 0);
	CHECK_EQ(flags, RS_HIPRI);
	CHECK(ctl.len == 2 && memcmp(c, "hi", 2) == 0);
	CHECK_EQ(dat.len, -1);
	CHECK_RET(write(fds[0], &k, 1), 1);
	ctl = (struct strbuf){ sizeof(c), 0, c };
	dat = (struct strbuf){ sizeof(d), 0, d };
	band = 1;
	flags = MSG_BAND;
	CHECK_RET(getpmsg(fds[0], &ctl, &dat, &band, &flags), 0);
	CHECK_EQ(flags, MSG_BAND);
	CHECK_EQ(band, 1);
	CHECK_EQ(ctl.len, -1);
	CHECK(dat.len == 2 && memcmp(d, "b1", 2) == 0);
	CHECK_RET(read(fds[0], d, sizeof(d)), 5);
	CHECK_MEM(d, "plain", 5);
	CHECK_RET(write(fds[0], &k, 1), 1);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
	return 0;
}

/* A thread of the parent sleeps reading a pipe end when another thread
 * forks: the child (which reads nothing) must not take what then comes
 * for the parent's sleeper -- its copy of the stream counted no waiter
 * of its own, so its I/O thread leaves the shared ring alone. */
static int sk_fd;

static void *sk_reader(void *arg)
{
	char *c = arg;

	if (read(sk_fd, c, 1) != 1)
		c[0] = '?';
	return NULL;
}

static int fork_beside_reader(void)
{
	struct timespec ts;
	char got = 0;
	pthread_t t;
	int fds[2], j;
	pid_t pid;

	open_pipe(fds);
	sk_fd = fds[1];
	REQUIRE(pthread_create(&t, NULL, sk_reader, &got) == 0);
	usleep(50000);			/* asleep in read() */
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		usleep(500000);		/* alive while the data comes */
		_exit(0);
	}
	usleep(50000);
	CHECK_RET(write(fds[0], "x", 1), 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	j = pthread_timedjoin_np(t, NULL, &ts);
	CHECK_EQ(j, 0);
	CHECK_EQ(got, 'x');
	CHECK_EQ(wait_child(pid), 0);
	return 0;
}

static void test_fork_beside_reader(void)
{
	for (int i = 0; i < 3; i++)
		CHECK_ISOLATED_T(fork_beside_reader, 10);
}

/* The other process leaves more than this end's head takes, and exits:
 * what it sent is still read, but a write now fails at once with EPIPE
 * (it was taken and dropped without a word until the ring was drained,
 * which a process that only writes never does). */
static void test_write_after_peer_left(void)
{
	static char buf[4096];
	int fds[2];
	long got = 0;
	pid_t pid;
	ssize_t r;

	pid = fork_with_pipe(fds);
	if (pid == 0) {
		long sent = 0;

		if (fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0)
			child_exit(1);
		while (write(fds[1], buf, sizeof(buf)) == (ssize_t)sizeof(buf))
			sent += (long)sizeof(buf);
		child_exit(errno == EAGAIN && sent > 65536 ? 0 : 1);
	}
	close(fds[1]);
	CHECK_EQ(wait_child(pid), 0);
	usleep(200000);			/* the hangup reaches the I/O thread */
	CHECK_ERR(write(fds[0], "x", 1), EPIPE);
	CHECK_RET(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	while ((r = read(fds[0], buf, sizeof(buf))) > 0)
		got += r;
	CHECK_EQ(r, 0);			/* then the end of file */
	CHECK(got > 65536);
	close(fds[0]);
}

static void test_getmsg_skips_front(void)
{
	CHECK_ISOLATED_T(getmsg_skips_front, 10);
}

/* A writer far ahead of a reader that sleeps first: it blocks, nothing
 * is lost or reordered. */
static void test_flow(void)
{
	static uint32_t buf[1024];
	const int nchunk = 2048;	/* 8 MiB in 4 KiB writes */
	int fds[2];
	pid_t pid;
	uint32_t next = 0;
	size_t got = 0, want = (size_t)nchunk * sizeof(buf);

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		uint32_t seq = 0;
		int bad = 0;
		close(fds[0]);
		for (int c = 0; c < nchunk; c++) {
			for (size_t k = 0; k < 1024; k++)
				buf[k] = seq++;
			if (write(fds[1], buf, sizeof(buf)) != sizeof(buf))
				bad++;
		}
		child_exit(bad);
	}
	close(fds[1]);
	pause_ms(200);		/* the child fills the pipe and blocks */
	while (got < want) {
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n <= 0 || n % 4 != 0) {
			CHECK(n > 0 && n % 4 == 0);
			break;
		}
		for (ssize_t k = 0; k < n / 4; k++)
			if (buf[k] != next++) {
				CHECK_EQ(buf[k], next - 1);
				got = want;
				break;
			}
		got += (size_t)n;
	}
	CHECK_EQ(next, want / 4);
	CHECK_EQ(wait_child(pid), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 0);
	close(fds[0]);
}

/* A STREAMS pipe, then fork(): the child keeps fds[1], the parent
 * fds[0]; with sync, a plain pipe too, to say "written" (the child
 * keeps sync[1], the parent sync[0]). */
static pid_t fork_ends(int fds[2], int *sync)
{
	pid_t pid;

	open_pipe(fds);
	if (sync != NULL)
		REQUIRE(pipe(sync) == 0);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	close(pid == 0 ? fds[0] : fds[1]);
	if (sync != NULL)
		close(pid == 0 ? sync[0] : sync[1]);
	return pid;
}

/* A write() between processes goes from the writer's buffer straight
 * into the ring (shmpipe's ke_write): a buffer that faults at once, or
 * after its first 1000 bytes, is EFAULT and leaves nothing in the ring;
 * what is written around it arrives whole and in order. */
static void test_write_efault(void)
{
	unsigned char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *edge;
	int fds[2];
	pid_t pid;

	REQUIRE(two != MAP_FAILED);
	REQUIRE(mprotect(two + 4096, 4096, PROT_NONE) == 0);
	edge = two + 4096 - 1000;	/* 1000 good bytes, then the hole */
	memset(two, 'e', 4096);
	pid = fork_ends(fds, NULL);
	if (pid == 0) {
		static const char *want[] = { "one", "two", "three" };
		char d[8192];
		int bad = 0;

		for (int i = 0; i < 3; i++) {
			struct strbuf dat = { sizeof(d), 0, d };
			int flags = 0;

			if (getmsg(fds[1], NULL, &dat, &flags) != 0 ||
			    dat.len != (int)strlen(want[i]) ||
			    memcmp(d, want[i], strlen(want[i])) != 0) {
				fprintf(stderr, "message %d: len %d\n", i,
					dat.len);
				bad++;
			}
		}
		exit(bad);
	}
	CHECK_RET(write(fds[0], "one", 3), 3);
	CHECK_ERR(write(fds[0], bad_address(), 100), EFAULT);
	CHECK_RET(write(fds[0], "two", 3), 3);
	CHECK_ERR(write(fds[0], edge, 3000), EFAULT);
	CHECK_RET(write(fds[0], "three", 5), 5);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
	munmap(two, 8192);
}

/* A read() between processes takes a plain message straight from the
 * ring (shmpipe's ke_read): into a buffer that faults it is EFAULT and
 * the message stays for the next read; one longer than the buffer is
 * read in parts (RNORM), and the parts of the rest in order. */
static void test_read_efault(void)
{
	char buf[256];
	int fds[2], sync[2];
	pid_t pid = fork_ends(fds, sync);

	if (pid == 0) {
		char big[100];
		int bad = 0;

		memset(big, 'b', sizeof(big));
		bad += write(fds[1], "abc", 3) != 3;
		bad += write(fds[1], big, sizeof(big)) != sizeof(big);
		bad += write(fds[1], "xyz", 3) != 3;
		bad += write(sync[1], "w", 1) != 1;	/* all three written */
		close(sync[1]);
		exit(bad);
	}
	CHECK_RET(read(sync[0], buf, 1), 1);
	CHECK_ERR(read(fds[0], bad_address(), sizeof(buf)), EFAULT);
	CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGN), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 3);
	CHECK(memcmp(buf, "abc", 3) == 0);
	CHECK_RET(read(fds[0], buf, 30), 30);
	CHECK_RET(read(fds[0], buf + 30, sizeof(buf) - 30), 70);
	CHECK_RET(read(fds[0], buf + 100, sizeof(buf) - 100), 3);
	CHECK(memcmp(buf + 100, "xyz", 3) == 0);
	for (int i = 0; i < 100; i++)
		if (buf[i] != 'b') {
			CHECK_EQ(buf[i], 'b');
			break;
		}
	CHECK_EQ(wait_child(pid), 0);
	close(sync[0]);
	close(fds[0]);
}

/* With a module pushed, data goes through it both ways: neither the
 * write into the ring nor the read out of it passes the module by
 * (testmod counts what passes, TM_COUNT). */
static void test_direct_module(void)
{
	char buf[16];
	int fds[2], sync[2];
	pid_t pid = fork_ends(fds, sync);

	if (pid == 0) {
		int bad = 0;

		bad += ioctl(fds[1], I_PUSH, "testmod") != 0;
		bad += ioctl(fds[1], I_SRDOPT, RMSGN) != 0;
		for (int i = 0; i < 10; i++)
			bad += write(fds[1], "m", 1) != 1;
		bad += do_str(fds[1], TM_COUNT, NULL, 0, 0, NULL) < 10;
		/* the ten are in the ring before the reader reads */
		bad += write(sync[1], "w", 1) != 1;
		close(sync[1]);
		/* (and the reader's ten back) */
		for (int i = 0; i < 10; i++)
			bad += read(fds[1], buf, sizeof(buf)) != 1;
		exit(bad);
	}
	CHECK_RET(ioctl(fds[0], I_PUSH, "testmod"), 0);
	CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGN), 0);
	CHECK_RET(read(sync[0], buf, 1), 1);
	close(sync[0]);
	for (int i = 0; i < 10; i++)
		CHECK_RET(read(fds[0], buf, sizeof(buf)), 1);
	CHECK(do_str(fds[0], TM_COUNT, NULL, 0, 0, NULL) >= 10);
	for (int i = 0; i < 10; i++)
		CHECK_RET(write(fds[0], "r", 1), 1);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
}

/* A reader's pull from a full ring stops at the head's high water mark
 * (STRHIGH, 64 KiB) within a run (PULL_RUN_BYTES, 16 KiB): 4 KiB
 * messages, so 16 at the head after one read, not a whole PULL_BATCH of
 * 64 held back from flow control and queued at once. */
static void test_pull_bounded(void)
{
	static char buf[4096];
	int fds[2], sync[2], n;
	pid_t pid;
	char c;

	/* (sync, a Linux pipe: "the ring is full") */
	pid = fork_ends(fds, sync);
	if (pid == 0) {
		int bad = 0, sent = 0;

		CHECK_RET(set_nonblock(fds[1], true), 0);
		while (write(fds[1], buf, sizeof(buf)) == sizeof(buf))
			sent++;
		bad += errno != EAGAIN || sent < 64;
		CHECK_RET(set_nonblock(fds[1], false), 0);
		bad += write(sync[1], "f", 1) != 1;
		/* stay until the parent has looked */
		bad += read(fds[1], &c, 1) != 1;
		child_exit(bad);
	}
	CHECK_RET(read(sync[0], &c, 1), 1);
	close(sync[0]);
	CHECK_RET(read(fds[0], &c, 1), 1);
	n = ioctl(fds[0], I_NREAD, &(int){ 0 });
	CHECK(n >= 16 && n <= 16 + 4 + 1);
	if (n < 16 || n > 21)
		fprintf(stderr, "messages at the head: %d\n", n);
	CHECK_RET(write(fds[0], "x", 1), 1);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
}

/* Records that cross a module with a perimeter keep their order: while
 * a thread of ours writes through testmod (holding its queue-pair
 * perimeter), records pulled up meet the busy perimeter and are left to
 * its owner, which delivers them at once; the pull must not hold those
 * before them back in a run (shmpipe.c batches only straight into the
 * head). */
#define ORDER_N 100000

/* Read n records numbered 0, 1, ... (4 bytes each, one per read):
 * how many came in order before the first that did not. */
static uint32_t read_in_order(int fd, uint32_t n)
{
	uint32_t v, next = 0;

	while (next < n) {
		ssize_t r = read(fd, &v, sizeof(v));

		if (r != sizeof(v) || v != next) {
			CHECK_RET(r, (ssize_t)sizeof(v));
			CHECK_EQ(v, next);
			break;
		}
		next++;
	}
	return next;
}

static volatile int order_stop;

static void *order_writer(void *arg)
{
	int fd = *(int *)arg;

	while (!order_stop)
		(void)write(fd, "w", 1);
	return NULL;
}

static void test_pull_order_module(void)
{
	int fds[2];
	pthread_t t;
	pid_t pid = fork_ends(fds, NULL);

	if (pid == 0) {
		int bad = 0;
		char sink[256];
		ssize_t r;

		/* non-blocking both ways: what the parent's thread writes is
		 * taken whenever ours does not go, so that thread goes on */
		CHECK_RET(set_nonblock(fds[1], true), 0);
		for (uint32_t i = 0; i < ORDER_N;) {
			if (write(fds[1], &i, sizeof(i)) == sizeof(i)) {
				if (++i % 16 != 0)
					continue;
			} else if (errno != EAGAIN) {
				bad++;	/* (the parent gave up: EPIPE) */
				break;
			}
			while (read(fds[1], sink, sizeof(sink)) > 0)
				;
		}
		/* then all of it, until the parent closes */
		while ((r = read(fds[1], sink, sizeof(sink))) != 0) {
			if (r < 0 && errno != EAGAIN)
				break;
			if (r < 0)
				pause_ms(1);
		}
		child_exit(bad);
	}
	CHECK_RET(ioctl(fds[0], I_PUSH, "testmod"), 0);
	order_stop = 0;
	REQUIRE(pthread_create(&t, NULL, order_writer, &fds[0]) == 0);
	CHECK_EQ(read_in_order(fds[0], ORDER_N), ORDER_N);
	order_stop = 1;
	pthread_join(t, NULL);
	close(fds[0]);
	CHECK_EQ(wait_child(pid), 0);
}

/* Another thread's pulls (I_NREAD looks, which pull what the ring has)
 * beside a reader that takes records straight from the ring
 * (shmpipe's ke_read): the reader gets every record once and in order,
 * never one from the ring ahead of those a pull has queued. */
#define PULLER_N 20000
static _Atomic int nread_stop;

static void *nread_looker(void *arg)
{
	int fd = *(int *)arg, n;

	while (!nread_stop)
		(void)ioctl(fd, I_NREAD, &n);
	return NULL;
}

static void test_read_order_puller(void)
{
	int fds[2];
	pthread_t t;
	pid_t pid = fork_ends(fds, NULL);

	if (pid == 0) {
		int bad = 0;

		for (uint32_t i = 0; i < PULLER_N && !bad; i++)
			bad += write(fds[1], &i, sizeof(i)) != sizeof(i);
		exit(bad);
	}
	CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGN), 0);
	nread_stop = 0;
	REQUIRE(pthread_create(&t, NULL, nread_looker, &fds[0]) == 0);
	CHECK_EQ(read_in_order(fds[0], PULLER_N), PULLER_N);
	nread_stop = 1;
	pthread_join(t, NULL);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
}

/* poll() in one process wakes when the other writes; non-blocking reads
 * say EAGAIN before. */
static void test_poll(void)
{
	int fds[2];
	pid_t pid;
	char c;

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		pause_ms(100);
		child_exit(write(fds[1], "p", 1) == 1 ? 0 : 1);
	}
	close(fds[1]);
	CHECK_RET(set_nonblock(fds[0], true), 0);
	CHECK_ERR(read(fds[0], &c, 1), EAGAIN);
	struct pollfd p = { fds[0], POLLIN, 0 };
	long t0 = now_ms();
	CHECK_RET(poll(&p, 1, 5000), 1);
	CHECK(p.revents & POLLIN);
	CHECK(now_ms() - t0 < 4000);
	CHECK_RET(read(fds[0], &c, 1), 1);
	CHECK_EQ(c, 'p');
	CHECK_EQ(wait_child(pid), 0);
	CHECK_RET(set_nonblock(fds[0], false), 0);
	close(fds[0]);
}

/* Request/response round trips: a blocked reader on each side. */
static void test_pingpong(void)
{
	int fds[2];
	pid_t pid;

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int bad = 0;
		unsigned char b[8];
		close(fds[0]);
		for (int i = 0; i < 2000; i++) {
			if (read(fds[1], b, 1) != 1)
				bad++;
			b[0]++;
			if (write(fds[1], b, 1) != 1)
				bad++;
		}
		child_exit(bad);
	}
	close(fds[1]);
	unsigned char b = 0;
	int ok = 1;
	for (int i = 0; i < 2000 && ok; i++) {
		unsigned char r = 0;
		ok = write(fds[0], &b, 1) == 1 && read(fds[0], &r, 1) == 1 &&
		     r == (unsigned char)(b + 1);
		b = (unsigned char)(r + 1);
	}
	CHECK(ok);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
}

/* An end held by both processes: the child's exit is not a hangup while
 * the parent still holds the other end; the parent's own two ends still
 * talk; the pipe shows no driver; closing the last copy hangs up. */
static void test_shared_ends(void)
{
	int fds[2];
	pid_t pid;
	char b[8];

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0)
		child_exit(write(fds[1], "c", 1) == 1 ? 0 : 1);
	CHECK_EQ(wait_child(pid), 0);
	CHECK_RET(read(fds[0], b, sizeof(b)), 1);
	CHECK_EQ(b[0], 'c');
	CHECK_RET(write(fds[0], "pq", 2), 2);
	CHECK_RET(read(fds[1], b, sizeof(b)), 2);
	CHECK_MEM(b, "pq", 2);
	CHECK_RET(set_nonblock(fds[0], true), 0);
	CHECK_ERR(read(fds[0], b, 1), EAGAIN);	/* no hangup yet */
	CHECK_RET(nlist(fds[0]), 0);		/* no driver shown */
	close(fds[1]);
	CHECK_RET(set_nonblock(fds[0], false), 0);
	CHECK_RET(read(fds[0], b, 1), 0);	/* now end of file */
	close(fds[0]);
}

/* A thread of the parent asleep in a read at the fork holds its file;
 * the child has no such thread, so its copy of that end closes with its
 * last descriptor there (it stayed open until the child exited: the
 * other end saw no hangup once the parent closed its own copy). */
static void test_fork_beside_sleeper(void)
{
	struct th_call s = { 0 };
	int fds[2], go[2];
	struct pollfd pf;
	pthread_t t;
	pid_t pid;
	char c;

	open_pipe(fds);
	REQUIRE(pipe(go) == 0);
	s.fd = fds[1];
	s.len = 8;
	REQUIRE(pthread_create(&t, NULL, th_reader, &s) == 0);
	th_started(&s);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		close(fds[1]);
		close(go[1]);
		child_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	CHECK_RET(write(fds[0], "w", 1), 1);
	pthread_join(t, NULL);
	CHECK_EQ(s.ret, 1);
	CHECK_RET(close(fds[1]), 0);
	/* both copies of end 1 closed: the hangup, the child still alive */
	pf.fd = fds[0];
	pf.events = POLLIN;
	pf.revents = 0;
	CHECK_RET(poll(&pf, 1, 3000), 1);
	CHECK_EQ(pf.revents & POLLHUP, POLLHUP);
	CHECK_RET(write(go[1], "x", 1), 1);
	CHECK_EQ(wait_child(pid), 0);
	close(go[1]);
	CHECK_RET(close(fds[0]), 0);
}

/* A child that keeps every descriptor and does nothing until told to
 * go (a byte on *go_w); idle_child_end tells it and checks its exit. */
static pid_t idle_child(int *go_w)
{
	int go[2];
	pid_t pid;
	char c;

	REQUIRE(pipe(go) == 0);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		child_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	*go_w = go[1];
	return pid;
}

static void idle_child_end(pid_t pid, int go_w)
{
	CHECK_RET(write(go_w, "x", 1), 1);
	CHECK_EQ(wait_child(pid), 0);
	close(go_w);
}

/* The parent watches its end with epoll and forks a child that keeps
 * the end open and does nothing: what the other end sends is the
 * parent's, all of it (the child's I/O thread, still armed by the
 * parent's watch, pulled records into its own copy of the end, where
 * nobody read them). */
static void test_watch_not_inherited(void)
{
	int fds[2], go, ep, got = 0;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	char b[8];
	pid_t pid;

	open_pipe(fds);
	ep = epoll_create1(EPOLL_CLOEXEC);
	REQUIRE(ep >= 0);
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev), 0);
	CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGN), 0);
	pid = idle_child(&go);
	for (int i = 0; i < 200; i++)
		CHECK_RET(write(fds[1], "m", 1), 1);
	pause_ms(300);		/* (time for a child's thread to take them) */
	CHECK_RET(set_nonblock(fds[0], true), 0);
	long end = now_ms() + 3000;
	while (got < 200 && now_ms() < end) {
		if (read(fds[0], b, sizeof(b)) == 1)
			got++;
		else
			(void)epoll_wait(ep, &out, 1, 50);
	}
	CHECK_EQ(got, 200);
	idle_child_end(pid, go);
	close(ep);
	CHECK_RET(close(fds[0]), 0);
	CHECK_RET(close(fds[1]), 0);
}

/* A writer asleep on a full pipe while another thread forks (the pipe
 * becomes one between processes): the reader's draining wakes it (the
 * relief went to the new driver's service procedure, not to the head
 * the writer sleeps on). */
static void test_fork_beside_blocked_writer(void)
{
	struct th_call w = { 0 };
	int fds[2], go;
	static char blk[1024];
	pthread_t t;
	pid_t pid;

	open_pipe(fds);
	fill_to_full(fds[1]);
	w.fd = fds[1];
	w.len = sizeof(blk);
	REQUIRE(pthread_create(&t, NULL, th_writer, &w) == 0);
	th_started(&w);
	pid = idle_child(&go);
	/* drain: the writer's message gets through */
	CHECK_RET(set_nonblock(fds[0], true), 0);
	long end = now_ms() + 5000;
	while (__atomic_load_n(&w.ret, __ATOMIC_ACQUIRE) == 0 &&
	       now_ms() < end) {
		if (read(fds[0], blk, sizeof(blk)) <= 0)
			pause_ms(1);
	}
	idle_child_end(pid, go);
	CHECK_RET(close(fds[0]), 0);	/* (wakes it with EPIPE if stuck) */
	pthread_join(t, NULL);
	CHECK_EQ(w.ret, (ssize_t)sizeof(blk));
	CHECK_RET(close(fds[1]), 0);
}

/* Two processes writing into one end: each must see the room the
 * other's writing took.  The child writes 400 + 300 records while the
 * parent reads 300, so the ring holds about 400 unread records (406 KiB
 * of its 512 KiB) and its producer has gone round it more than once
 * since the parent last looked (never: it has not written yet); the
 * parent's big writes must not find room that is not there (they used
 * to overwrite unread records, and the reader got EPROTO). */
static void tell(int fd) { char c = 1; REQUIRE(write(fd, &c, 1) == 1); }
static void await(int fd) { char c; REQUIRE(read(fd, &c, 1) == 1); }

static void test_two_producers(void)
{
	static unsigned char b[65536];
	int fds[2], p2c[2], c2p[2], wrote = 0, ok = 0;
	pid_t pid;

	open_pipe(fds);
	REQUIRE(pipe(p2c) == 0 && pipe(c2p) == 0);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int bad = 0;
		memset(b, 'a', 1000);
		for (int i = 0; i < 700; i++) {
			if (i == 400) {
				tell(c2p[1]);
				await(p2c[0]);
			}
			bad += write(fds[1], b, 1000) != 1000;
		}
		tell(c2p[1]);
		await(p2c[0]);
		child_exit(bad);
	}
	CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGD), 0);
	await(c2p[0]);
	for (int i = 0; i < 300; i++)
		CHECK_RET(read(fds[0], b, sizeof(b)), 1000);
	tell(p2c[1]);
	await(c2p[0]);
	memset(b, 'p', sizeof(b));
	CHECK_RET(set_nonblock(fds[1], true), 0);
	for (int i = 0; i < 4; i++)
		wrote += write(fds[1], b, 60000) == 60000;
	CHECK_RET(set_nonblock(fds[0], true), 0);
	for (int i = 0; i < 400; i++) {
		ssize_t n = read(fds[0], b, sizeof(b));
		ok += n == 1000 && b[0] == 'a' && b[999] == 'a';
	}
	CHECK_EQ(ok, 400);
	for (int i = 0; i < wrote; i++) {
		/* (they wait in this process's write queue for room) */
		struct pollfd pf = { fds[0], POLLIN, 0 };
		CHECK_RET(poll(&pf, 1, 5000), 1);
		ssize_t n = read(fds[0], b, sizeof(b));
		CHECK(n == 60000 && b[0] == 'p' && b[59999] == 'p');
	}
	tell(p2c[1]);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[0]);
	close(fds[1]);
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
}

/* Two processes blocked writing into one end, a slow reader: each
 * writer must hear that the ring has room again (the doorbell is one
 * byte on a socket both share, so one of them used to sleep for good). */
static void test_two_blocked_writers(void)
{
	static unsigned char b[65536];
	enum { N = 3000 };

	for (int round = 0; round < 3; round++) {
		int fds[2], got = 0;
		pid_t pid[2];

		open_pipe(fds);
		for (int c = 0; c < 2; c++) {
			pid[c] = fork_flushed();
			REQUIRE(pid[c] >= 0);
			if (pid[c] == 0) {
				int bad = 0;
				close(fds[0]);
				memset(b, 'a' + c, 3000);
				for (int i = 0; i < N + c * 500; i++)
					bad += write(fds[1], b, 3000) != 3000;
				child_exit(bad);
			}
		}
		close(fds[1]);
		CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGD), 0);
		for (;;) {
			struct pollfd pf = { fds[0], POLLIN, 0 };
			if (poll(&pf, 1, 5000) != 1)
				break;		/* a writer asleep for good */
			if (read(fds[0], b, sizeof(b)) <= 0)
				break;		/* both gone: end of file */
			if ((++got & 63) == 0)
				pause_ms(2);	/* let the ring fill */
		}
		CHECK_EQ(got, 2 * N + 500);
		for (int c = 0; c < 2; c++) {
			if (got != 2 * N + 500)
				kill(pid[c], SIGKILL);
			CHECK_EQ(wait_child(pid[c]), 0);
		}
		close(fds[0]);
	}
}

/* I_SETSIG is the registering process's: a child's copy of a stream does
 * not signal its parent (it used to: data on the child's copy sent the
 * parent SIGPOLL, whose default action kills), and the parent's own
 * registration still works. */
static volatile sig_atomic_t polls;

static void count_poll(int sig)
{
	(void)sig;
	polls++;
}

static void test_sig_not_inherited(void)
{
	int fd = open_echo(O_NONBLOCK);
	pid_t pid;
	char b[4];

	CHECK_RET(ioctl(fd, I_SETSIG, S_INPUT), 0);
	signal(SIGPOLL, count_poll);
	polls = 0;
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int bad = write(fd, "x", 1) != 1;
		pause_ms(50);
		bad += read(fd, b, sizeof(b)) != 1;
		child_exit(bad);
	}
	CHECK_EQ(wait_child(pid), 0);
	pause_ms(50);
	CHECK_EQ(polls, 0);
	CHECK_RET(write(fd, "y", 1), 1);
	for (int i = 0; i < 2000 && polls == 0; i++)
		pause_ms(1);
	CHECK_EQ(polls, 1);
	CHECK_RET(read(fd, b, sizeof(b)), 1);
	signal(SIGPOLL, SIG_IGN);
	CHECK_RET(close(fd), 0);
}

#ifndef __SANITIZE_ADDRESS__	/* (not run under ASan: see main) */
/* fork() while two other threads write and read a STREAMS pipe: the
 * child gets out of fork() (its fork handler used to wait for a queue
 * lock one of those threads held at the fork, and 1 child in 5 hung). */
static volatile int fk_stop;
static int fk_fds[2];

static void *fk_writer(void *arg)
{
	char b[100] = { 0 };

	(void)arg;
	while (!fk_stop)
		(void)!write(fk_fds[1], b, sizeof(b));
	return NULL;
}

static void *fk_reader(void *arg)
{
	char b[100];

	(void)arg;
	while (!fk_stop)
		(void)!read(fk_fds[0], b, sizeof(b));
	return NULL;
}

/* What a child does with the pipe the threads were using: 0 if every
 * call answered as it should (data, or EAGAIN on a full or empty end). */
static int fk_child_use(void)
{
	struct pollfd p[2] = { { fk_fds[0], POLLIN, 0 },
			       { fk_fds[1], POLLOUT, 0 } };
	char b[100] = { 0 };
	ssize_t n;

	for (int i = 0; i < 20; i++) {
		n = write(fk_fds[1], b, sizeof(b));
		if (n != (ssize_t)sizeof(b) && !(n < 0 && errno == EAGAIN))
			return 10 + (n < 0 ? errno : 0);
		if (poll(p, 2, 0) < 0)
			return 2;
		n = read(fk_fds[0], b, sizeof(b));
		if (n < 0 && errno != EAGAIN)
			return 100 + errno;
	}
	if (close(fk_fds[0]) != 0 || close(fk_fds[1]) != 0)
		return 4;
	return 0;
}

/* And with use, the child then uses that pipe itself: no lock those
 * threads held at the fork may be held in the child (before the fork
 * handler waited for the threads to leave the executive, 52 children of
 * 200 hung). */
static int fk_child_idle(void)
{
	return 0;
}

/* 100 children of child(), forked while threads a(aa) and b(bb) run
 * until fk_stop: none may hang or fail. */
static void forks_beside(void *(*a)(void *), void *aa, void *(*b)(void *),
			 void *bb, int (*child)(void))
{
	pthread_t t[2];
	int hung, bad;

	fk_stop = 0;
	REQUIRE(pthread_create(&t[0], NULL, a, aa) == 0);
	REQUIRE(pthread_create(&t[1], NULL, b, bb) == 0);
	bad = t_forks(100, child, &hung);
	fk_stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	CHECK_EQ(hung, 0);
	CHECK_EQ(bad, 0);
}

static void test_fork_beside_threads(bool use)
{
	open_pipe(fk_fds);
	CHECK_RET(set_nonblock(fk_fds[0], true), 0);
	CHECK_RET(set_nonblock(fk_fds[1], true), 0);
	forks_beside(fk_writer, NULL, fk_reader, NULL,
		     use ? fk_child_use : fk_child_idle);
	close(fk_fds[0]);
	close(fk_fds[1]);
}

/* fork() while other threads open and close streams (clone opens, opens
 * of new minors, pipes): the child opens, uses and closes streams of its
 * own.  The locks those threads hold outside any entry (the open lock,
 * the link lock a close takes, the grace-period lock, the descriptor
 * table's, the pipe list's) are not copied held into the child (before,
 * 35 children of 50 hung in open or close). */
static void *fk_opener(void *arg)
{
	int k = 0;

	while (!fk_stop) {
		char path[64];
		int fd, p[2];

		if (arg != NULL) {
			fd = open("/dev/streams/clone/echo", O_RDWR);
		} else {
			snprintf(path, sizeof(path), "/dev/streams/echo/%d",
				 100 + k++ % 50);
			fd = open(path, O_RDWR);
		}
		if (fd >= 0)
			close(fd);
		if (arg == NULL && s_pipe(p) == 0) {
			close(p[0]);
			close(p[1]);
		}
	}
	return NULL;
}

static int fk_child_open(void)
{
	char b[4];
	int fd, p[2];

	if ((fd = open("/dev/streams/clone/echo", O_RDWR)) < 0)
		return 1;
	if (write(fd, "ab", 2) != 2 || read(fd, b, sizeof(b)) != 2 ||
	    close(fd) != 0)
		return 2;
	if ((fd = open("/dev/streams/echo/7", O_RDWR)) < 0 || close(fd) != 0)
		return 3;
	if (s_pipe(p) != 0)
		return 4;
	if (write(p[0], "cd", 2) != 2 || read(p[1], b, sizeof(b)) != 2 ||
	    close(p[0]) != 0 || close(p[1]) != 0)
		return 5;
	return 0;
}

static void test_fork_beside_opens(void)
{
	forks_beside(fk_opener, NULL, fk_opener, (void *)1, fk_child_open);
}

/* fork() while other threads push and pop on a stream the child shares
 * and open again a device the child opens: a stream whose plumbing lock
 * was held at the fork is unusable in the child (EIO) but never hangs it
 * (before, 31 children of 36 hung in its close). */
static int fk_shared;

static void *fk_plumber(void *arg)
{
	while (!fk_stop) {
		if (arg != NULL) {
			(void)ioctl(fk_shared, I_PUSH, "nullmod");
			(void)ioctl(fk_shared, I_POP, 0);
		} else {
			int fd = open("/dev/streams/echo/7", O_RDWR);
			if (fd >= 0)
				close(fd);
		}
	}
	return NULL;
}

static int fk_child_plumb(void)
{
	char b[4];
	ssize_t n;
	int fd = open("/dev/streams/echo/7", O_RDWR);

	if (fd < 0 && errno != EIO)
		return 1;
	if (fd >= 0 && close(fd) != 0)
		return 2;
	n = write(fk_shared, "x", 1);
	if (n != 1 && !(n < 0 && errno == EIO))
		return 3;
	if (n == 1 && read(fk_shared, b, sizeof(b)) != 1)
		return 4;
	if (close(fk_shared) != 0)
		return 5;
	return 0;
}

static void test_fork_beside_plumbing(void)
{
	fk_shared = open("/dev/streams/clone/echo", O_RDWR);
	REQUIRE(fk_shared >= 0);
	forks_beside(fk_plumber, NULL, fk_plumber, (void *)1, fk_child_plumb);
	CHECK_RET(close(fk_shared), 0);
}
#endif

/* A reader that never sleeps (non-blocking reads only) still learns
 * that the other process closed its end: end of file. */
static void test_nonblock_eof(void)
{
	int fds[2];
	char b[4];
	pid_t pid;

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		long end = now_ms() + 5000;
		ssize_t n = -1;

		close(fds[1]);
		set_nonblock(fds[0], true);
		while (now_ms() < end &&
		       (n = read(fds[0], b, sizeof(b))) < 0 && errno == EAGAIN)
			usleep(1000);
		child_exit(n == 0 ? 0 : 1);
	}
	close(fds[0]);
	usleep(50000);
	close(fds[1]);
	CHECK_EQ(wait_child(pid), 0);
}

/* Each process's streams have their own mirror: what the child's poll()
 * shows the kernel about its copy of an end is not seen by an epoll set
 * watching the parent's copy, and an epoll instance the child makes
 * sees the child's streams. */
static void test_private_mirror(void)
{
	int fds[2], go[2], done[2], ep;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLPRI };
	struct epoll_event out[2];
	pid_t pid;
	char b;

	open_pipe(fds);
	REQUIRE(pipe(go) == 0 && pipe(done) == 0);
	CHECK_RET(write(fds[1], "z", 1), 1);	/* queued at fds[0]'s head */
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		int bad = 0;
		close(go[1]);
		close(done[0]);
		bad += read(go[0], &b, 1) != 1;
		bad += poll(&p, 1, 0) != 1;	/* its own copy of "z" */
		int cep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event cev = { .events = EPOLLIN }, cout;
		bad += cep < 0 ||
		       epoll_ctl(cep, EPOLL_CTL_ADD, fds[0], &cev) != 0 ||
		       epoll_wait(cep, &cout, 1, 1000) != 1 ||
		       !(cout.events & EPOLLIN);
		close(cep);
		bad += write(done[1], "d", 1) != 1;
		bad += read(go[0], &b, 1) != 1;
		child_exit(bad);
	}
	close(go[0]);
	close(done[1]);
	CHECK_RET(read(fds[0], &b, 1), 1);	/* the parent's copy */
	ep = epoll_create1(EPOLL_CLOEXEC);
	REQUIRE(ep >= 0);
	CHECK_RET(epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev), 0);
	CHECK_RET(epoll_wait(ep, out, 2, 0), 0);
	CHECK_RET(write(go[1], "x", 1), 1);
	CHECK_RET(read(done[0], &b, 1), 1);
	CHECK_RET(epoll_wait(ep, out, 2, 100), 0);	/* nothing for us */
	CHECK_RET(write(go[1], "x", 1), 1);
	CHECK_EQ(wait_child(pid), 0);
	close(ep);
	close(go[1]);
	close(done[0]);
	close(fds[0]);
	close(fds[1]);
}

/* ---- the same path between threads (so ThreadSanitizer sees it) ---- */

struct tw {
	int fd;
	int n;
	int bad;
	bool close_after;
};

static void *writer(void *arg)
{
	struct tw *w = arg;
	unsigned char b[2048];

	for (int i = 0; i < w->n; i++) {
		size_t len = msg_len(i);
		fill(b, len, i);
		if (write(w->fd, b, len) != (ssize_t)len)
			w->bad++;
	}
	if (w->close_after)
		close(w->fd);
	return NULL;
}

static void *reader(void *arg)
{
	struct tw *w = arg;
	unsigned char b[4096], want[2048];

	if (ioctl(w->fd, I_SRDOPT, RMSGD) != 0)
		w->bad++;
	for (int i = 0; i < w->n; i++) {
		ssize_t n = read(w->fd, b, sizeof(b));
		fill(want, msg_len(i), i);
		if (n != (ssize_t)msg_len(i) ||
		    memcmp(b, want, msg_len(i)) != 0) {
			w->bad++;
			break;
		}
	}
	return NULL;
}

static bool converted(int fd)
{
	struct strthread *t = str_enter();
	struct sth_file *f = sth_lookup(fd);
	bool yes = f != NULL && __atomic_load_n(&f->f_sh->sh_sd.sd_kev,
						__ATOMIC_ACQUIRE) != NULL;
	str_exit(t);
	return yes;
}

/* The shared segments of converted pipes are sealed at their size: a
 * peer process cannot shrink one under our mappings.  Found among our
 * descriptors by name (memfd:streams-pipe). */
static int sealed_segments(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		char path[64], name[256];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t k = readlink(path, name, sizeof(name) - 1);
		if (k <= 0)
			continue;
		name[k] = '\0';
		if (strstr(name, "memfd:streams-pipe") == NULL)
			continue;
		int seals = fcntl(fd, F_GET_SEALS);
		CHECK_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
		CHECK_ERR(ftruncate(fd, 4096), EPERM);
		n++;
	}
	return n;
}

/* Both directions at once, then one end closes: the other reads all,
 * then end of file. */
static void test_threads(void)
{
	int fds[2], n = 20000;
	pthread_t t[4];
	char c;

	open_pipe(fds);
	CHECK(!converted(fds[0]));
	sth_pipes_convert_all();
	CHECK(converted(fds[0]) && converted(fds[1]));
	CHECK_RET(nlist(fds[0]), 0);
	CHECK(sealed_segments() >= 1);
	struct tw w0 = { fds[0], n, 0, false }, r1 = { fds[1], n, 0, false };
	struct tw w1 = { fds[1], n, 0, false }, r0 = { fds[0], n, 0, false };
	REQUIRE(pthread_create(&t[0], NULL, writer, &w0) == 0);
	REQUIRE(pthread_create(&t[1], NULL, reader, &r1) == 0);
	REQUIRE(pthread_create(&t[2], NULL, writer, &w1) == 0);
	REQUIRE(pthread_create(&t[3], NULL, reader, &r0) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(w0.bad + w1.bad + r0.bad + r1.bad, 0);
	/* now a writer that closes when done, against a reader */
	struct tw wc = { fds[1], n, 0, true }, rc = { fds[0], n, 0, false };
	REQUIRE(pthread_create(&t[0], NULL, writer, &wc) == 0);
	REQUIRE(pthread_create(&t[1], NULL, reader, &rc) == 0);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	CHECK_EQ(wc.bad + rc.bad, 0);
	CHECK_RET(read(fds[0], &c, 1), 0);
	CHECK_ERR(write(fds[0], "x", 1), EPIPE);
	close(fds[0]);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_threads();
#ifdef STR_TSAN
	/* ThreadSanitizer cannot follow a process that starts threads
	 * after fork(): the cross-process cases run in the other builds */
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
#endif
	test_oneway();
	test_msgs();
	test_getmsg_skips_front();
	test_write_after_peer_left();
	test_fork_beside_reader();
	test_flow();
	test_write_efault();
	test_read_efault();
	test_direct_module();
	test_pull_bounded();
	test_pull_order_module();
	test_read_order_puller();
	test_poll();
	test_pingpong();
	test_shared_ends();
	test_fork_beside_sleeper();
	test_watch_not_inherited();
	test_fork_beside_blocked_writer();
	test_two_producers();
	test_two_blocked_writers();
	test_sig_not_inherited();
#ifndef __SANITIZE_ADDRESS__
	/* (not under ASan: there the child's fork handler, restarting the
	 * I/O thread, waited for good for the new thread to run in 1 fork
	 * of 100 -- a thread created in the child of a threaded process,
	 * which the sanitizer's runtime does not seem to survive; never
	 * seen in the normal build, 0 in 500) */
	test_fork_beside_threads(false);
	test_fork_beside_threads(true);
	test_fork_beside_opens();
	test_fork_beside_plumbing();
#endif
	test_nonblock_eof();
	test_private_mirror();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
