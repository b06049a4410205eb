/*
 * test_sth_open -- opening and closing streams through the POSIX calls:
 * the /dev/streams/<drv>, /dev/streams/<drv>/<minor> and
 * /dev/streams/clone/<drv> names, unknown names, O_NONBLOCK and the file
 * status flags, two opens of one minor sharing a stream, clone opens
 * getting new ones, the last close running the close procedures (module
 * counts, I_LIST of a reopened minor) and honouring I_SETCLTIME while the
 * write side cannot drain, dup/dup2/dup3/F_DUPFD/close of stream
 * descriptors, isastream, fattach/fdetach (SUSv2 fattach/fdetach), and
 * autopush (autopush_add, then the modules show in I_LIST), and clone
 * opens never taking a minor a stream has.
 */
#include "sth.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <sys/strconf.h>

/* Write s on wfd and read it back on rfd (non-blocking read): 1 if it
 * arrived exactly. */
static int echoes(int wfd, int rfd, const char *s)
{
	char buf[256];
	size_t n = strlen(s);
	int fl = fcntl(rfd, F_GETFL);
	ssize_t r;

	if (write(wfd, s, n) != (ssize_t)n)
		return 0;
	fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
	r = read(rfd, buf, sizeof(buf));
	fcntl(rfd, F_SETFL, fl);
	return r == (ssize_t)n && memcmp(buf, s, n) == 0;
}

static bool readable_now(int fd)
{
	int b;

	return nread(fd, &b) > 0;
}

static void test_names(void)
{
	int a, b, c, d, e;
	char buf[16];

	/* /dev/streams/<drv>: minor 0 */
	a = open("/dev/streams/echo", O_RDWR);
	CHECK(a >= 0);
	CHECK_RET(isastream(a), 1);
	CHECK(echoes(a, a, "minor zero"));
	/* /dev/streams/<drv>/0 is the same stream */
	b = open("/dev/streams/echo/0", O_RDWR);
	CHECK(b >= 0);
	CHECK(b != a);
	CHECK_RET(write(a, "shared", 6), 6);
	CHECK_RET(read(b, buf, sizeof(buf)), 6);
	CHECK_MEM(buf, "shared", 6);
	CHECK(!readable_now(a));
	/* another minor is another stream */
	c = open("/dev/streams/echo/5", O_RDWR);
	CHECK(c >= 0);
	CHECK_RET(write(c, "five", 4), 4);
	CHECK(!readable_now(a));
	CHECK_RET(nread(c, NULL), 1);
	CHECK_RET(read(c, buf, sizeof(buf)), 4);
	/* clone opens: a new stream each */
	d = open("/dev/streams/clone/echo", O_RDWR);
	e = open("/dev/streams/clone/echo", O_RDWR);
	CHECK(d >= 0 && e >= 0);
	CHECK_RET(write(d, "d", 1), 1);
	CHECK_RET(nread(e, NULL), 0);
	CHECK_RET(nread(a, NULL), 0);
	CHECK_RET(read(d, buf, sizeof(buf)), 1);
	CHECK_RET(write(e, "ee", 2), 2);
	CHECK_RET(nread(d, NULL), 0);
	CHECK_RET(read(e, buf, sizeof(buf)), 2);
	/* a driver's open failing: its error (echo has minors < 1024) */
	CHECK_ERR(open("/dev/streams/echo/2000", O_RDWR), ENXIO);
	/* names that do not exist */
	CHECK_ERR(open("/dev/streams/nosuchdrv", O_RDWR), ENOENT);
	CHECK_ERR(open("/dev/streams/clone/nosuchdrv", O_RDWR), ENOENT);
	CHECK_ERR(open("/dev/streams/echo/x1", O_RDWR), ENOENT);
	CHECK_ERR(open("/dev/streams/echo/", O_RDWR), ENOENT);
	CHECK_ERR(open("/dev/streams/clone/echo/3", O_RDWR), ENOENT);
	CHECK_ERR(open("/dev/streams/", O_RDWR), ENOENT);
	/* POSIX open: O_CREAT|O_EXCL of an existing name */
	CHECK_ERR(open("/dev/streams/echo/0", O_RDWR | O_CREAT | O_EXCL, 0600),
		  EEXIST);
	/* openat with an absolute path names the stream too */
	int f = openat(AT_FDCWD, "/dev/streams/echo/0", O_RDWR);
	CHECK(f >= 0);
	CHECK_RET(isastream(f), 1);
	CHECK(echoes(f, a, "openat"));
	CHECK_RET(close(f), 0);
	CHECK_RET(close(a), 0);
	CHECK_RET(close(b), 0);
	CHECK_RET(close(c), 0);
	CHECK_RET(close(d), 0);
	CHECK_RET(close(e), 0);
	CHECK_ERR(close(e), EBADF);
}

static void test_flags(void)
{
	char buf[8];
	int a, b, d;

	a = open("/dev/streams/clone/echo", O_RDWR | O_NONBLOCK);
	REQUIRE(a >= 0);
	CHECK_ERR(read(a, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(fcntl(a, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_RET(fcntl(a, F_GETFL) & O_ACCMODE, O_RDWR);
	CHECK_RET(fcntl(a, F_SETFL, 0), 0);
	CHECK_RET(fcntl(a, F_GETFL) & O_NONBLOCK, 0);
	CHECK_RET(fcntl(a, F_GETFL) & O_ACCMODE, O_RDWR);
	/* a dup shares the open file description and its flags */
	d = dup(a);
	CHECK(d >= 0);
	CHECK_RET(fcntl(d, F_SETFL, O_NONBLOCK), 0);
	CHECK_RET(fcntl(a, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_ERR(read(a, buf, sizeof(buf)), EAGAIN);
	/* FIONBIO as well */
	int off = 0;
	CHECK_RET(ioctl(a, FIONBIO, &off), 0);
	CHECK_RET(fcntl(d, F_GETFL) & O_NONBLOCK, 0);
	CHECK_RET(fcntl(d, F_SETFL, O_NONBLOCK), 0);
	/* another open of the same stream has its own flags */
	CHECK_RET(fcntl(a, F_SETFL, O_NONBLOCK), 0);
	b = open("/dev/streams/echo/3", O_RDWR);
	CHECK(b >= 0);
	int b2 = open("/dev/streams/echo/3", O_RDWR | O_NONBLOCK);
	CHECK(b2 >= 0);
	CHECK_RET(fcntl(b, F_GETFL) & O_NONBLOCK, 0);
	CHECK_RET(fcntl(b2, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_ERR(read(b2, buf, sizeof(buf)), EAGAIN);
	/* close-on-exec is a descriptor flag */
	int x = open("/dev/streams/clone/echo", O_RDWR | O_CLOEXEC);
	CHECK(x >= 0);
	CHECK_RET(fcntl(x, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_RET(fcntl(a, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_RET(close(x), 0);
	CHECK_RET(close(a), 0);
	CHECK_RET(close(d), 0);
	CHECK_RET(close(b), 0);
	CHECK_RET(close(b2), 0);
}

/* dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC and close */
static void test_dup(void)
{
	long base = streams_in_use();
	int a, d, d2, d3, d4, nul, nul2;
	char buf[16];

	a = open_echo(0);
	CHECK_RET(streams_in_use(), base + 1);
	d = dup(a);
	CHECK(d >= 0 && d != a);
	CHECK_RET(isastream(d), 1);
	CHECK(echoes(d, a, "via dup"));
	/* closing the original leaves the stream to the dup */
	CHECK_RET(close(a), 0);
	CHECK_RET(isastream(d), 1);
	CHECK(echoes(d, d, "after close"));
	CHECK_RET(streams_in_use(), base + 1);
	/* dup2 over a regular descriptor makes it a stream */
	nul = open("/dev/null", O_RDWR);
	REQUIRE(nul >= 0);
	CHECK_RET(isastream(nul), 0);
	CHECK_RET(dup2(d, nul), nul);
	CHECK_RET(isastream(nul), 1);
	CHECK(echoes(nul, d, "dup2"));
	/* dup2 of a descriptor onto itself changes nothing */
	CHECK_RET(dup2(d, d), d);
	CHECK_RET(isastream(d), 1);
	/* dup2 of a regular file over a stream descriptor: no longer one */
	nul2 = open("/dev/null", O_RDWR);
	REQUIRE(nul2 >= 0);
	CHECK_RET(dup2(nul2, nul), nul);
	CHECK_RET(isastream(nul), 0);
	CHECK_RET(write(nul, "x", 1), 1);	/* /dev/null takes it */
	CHECK_RET(isastream(d), 1);
	/* dup3 with O_CLOEXEC */
	d3 = dup3(d, nul, O_CLOEXEC);
	CHECK_RET(d3, nul);
	CHECK_RET(isastream(d3), 1);
	CHECK_RET(fcntl(d3, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK(echoes(d3, d, "dup3"));
	/* F_DUPFD gives the lowest free number >= arg */
	d2 = fcntl(d, F_DUPFD, 200);
	CHECK(d2 >= 200);
	CHECK_RET(isastream(d2), 1);
	CHECK(echoes(d2, d, "F_DUPFD"));
	d4 = fcntl(d, F_DUPFD_CLOEXEC, 0);
	CHECK(d4 >= 0);
	CHECK_RET(fcntl(d4, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_RET(isastream(d4), 1);
	CHECK_RET(write(d4, "four", 4), 4);
	CHECK_RET(read(d2, buf, sizeof(buf)), 4);
	CHECK_RET(close(d), 0);
	CHECK_RET(close(d2), 0);
	CHECK_RET(close(d3), 0);
	CHECK_RET(streams_in_use(), base + 1);	/* d4 still holds it */
	CHECK_RET(close(d4), 0);
	CHECK_RET(streams_in_use(), base);	/* last close: gone */
	CHECK_ERR(close(d4), EBADF);
	CHECK_ERR(dup(d4), EBADF);
	CHECK_ERR(write(d4, "x", 1), EBADF);
	CHECK_ERR(read(d4, buf, 1), EBADF);
	CHECK_RET(close(nul2), 0);
}

static void test_isastream(void)
{
	char path[] = "/tmp/sth-open-XXXXXX";
	int f = mkstemp(path), sv[2], p[2], s = open_echo(0), bad;

	REQUIRE(f >= 0);
	CHECK_RET(isastream(s), 1);
	CHECK_RET(isastream(f), 0);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	REQUIRE(pipe(p) == 0);
	CHECK_RET(isastream(sv[0]), 0);
	CHECK_RET(isastream(p[0]), 0);
	bad = dup(f);
	REQUIRE(bad >= 0);
	close(bad);
	CHECK_ERR(isastream(bad), EBADF);
	CHECK_ERR(isastream(-1), EBADF);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	close(f);
	unlink(path);
	CHECK_RET(close(s), 0);
}

/* The last close runs every close procedure; earlier closes none. */
static void test_last_close(void)
{
	struct fmodsw *nm = fmod_find("nullmod"), *tm = fmod_find("testmod");
	struct cdevsw *echo = cdev_find("echo");
	int a, b, nmc, tmc, ec;
	struct str_mlist names[4];
	struct str_list sl = { 4, names };

	REQUIRE(nm != NULL && tm != NULL && echo != NULL);
	nmc = nm->f_count;
	tmc = tm->f_count;
	ec = echo->d_count;
	a = open("/dev/streams/echo/7", O_RDWR);
	REQUIRE(a >= 0);
	CHECK_RET(echo->d_count, ec + 1);
	CHECK_RET(ioctl(a, I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(a, I_PUSH, "testmod"), 0);
	CHECK_RET(nm->f_count, nmc + 1);
	CHECK_RET(tm->f_count, tmc + 1);
	b = open("/dev/streams/echo/7", O_RDWR);
	REQUIRE(b >= 0);
	/* the second open sees the modules the first pushed */
	CHECK_RET(nlist(b), 3);
	CHECK_RET(ioctl(b, I_LIST, &sl), 0);
	CHECK_RET(sl.sl_nmods, 3);
	CHECK(strcmp(names[0].l_name, "testmod") == 0);
	CHECK(strcmp(names[1].l_name, "nullmod") == 0);
	CHECK(strcmp(names[2].l_name, "echo") == 0);
	/* not the last close: nothing closed */
	CHECK_RET(close(a), 0);
	CHECK_RET(nm->f_count, nmc + 1);
	CHECK_RET(nlist(b), 3);
	CHECK(echoes(b, b, "still open"));
	/* the last close pops the modules and closes the driver */
	CHECK_RET(close(b), 0);
	CHECK_RET(nm->f_count, nmc);
	CHECK_RET(tm->f_count, tmc);
	CHECK_RET(echo->d_count, ec);
	/* a new open of the minor is a new stream: no modules */
	a = open("/dev/streams/echo/7", O_RDWR);
	REQUIRE(a >= 0);
	CHECK_RET(nlist(a), 1);
	CHECK_ERR(ioctl(a, I_LOOK, names[0].l_name), EINVAL);
	CHECK_RET(close(a), 0);
}

/* I_SETCLTIME: the last close waits that long for the write side to
 * drain, and not at all with O_NONBLOCK or when it is empty. */
static int stuffed_echo(void)
{
	int fd = open_echo(O_NONBLOCK);
	char blk[1024];
	int n = 0;

	memset(blk, 'c', sizeof(blk));
	/* nobody reads: the head read queue fills, then echo's write
	 * queue holds the rest until it is full too */
	while (write(fd, blk, sizeof(blk)) == (ssize_t)sizeof(blk) && n < 1000)
		n++;
	CHECK_EQ(errno, EAGAIN);
	CHECK(n > 5 && n < 1000);
	return fd;
}

static void test_cltime(void)
{
	int fd, v;
	long t0, dt;

	fd = open_echo(0);
	CHECK_RET(ioctl(fd, I_GETCLTIME, &v), 0);
	CHECK_EQ(v, 15000);		/* SVR4 default: 15 s */
	v = -1;
	CHECK_ERR(ioctl(fd, I_SETCLTIME, &v), EINVAL);
	v = 5000;
	CHECK_RET(ioctl(fd, I_SETCLTIME, &v), 0);
	v = 0;
	CHECK_RET(ioctl(fd, I_GETCLTIME, &v), 0);
	CHECK_EQ(v, 5000);
	/* nothing to drain: no wait */
	t0 = now_ms();
	CHECK_RET(close(fd), 0);
	CHECK(now_ms() - t0 < 1000);

	/* the write side stays full: the close waits the close time */
	fd = stuffed_echo();
	CHECK_RET(set_nonblock(fd, false), 0);
	v = 300;
	CHECK_RET(ioctl(fd, I_SETCLTIME, &v), 0);
	t0 = now_ms();
	CHECK_RET(close(fd), 0);
	dt = now_ms() - t0;
	CHECK(dt >= 290);
	CHECK(dt < 3000);

	/* close time 0: no wait */
	fd = stuffed_echo();
	CHECK_RET(set_nonblock(fd, false), 0);
	v = 0;
	CHECK_RET(ioctl(fd, I_SETCLTIME, &v), 0);
	t0 = now_ms();
	CHECK_RET(close(fd), 0);
	CHECK(now_ms() - t0 < 250);

	/* O_NONBLOCK: no wait either */
	fd = stuffed_echo();
	v = 5000;
	CHECK_RET(ioctl(fd, I_SETCLTIME, &v), 0);
	t0 = now_ms();
	CHECK_RET(close(fd), 0);
	CHECK(now_ms() - t0 < 1000);
}

/* The close of a loop end waits while its partner drains what it
 * wrote, and returns once all of it got there. */
struct drainer {
	int fd;
	pid_t closer;
	long want, got;
};

static void *drain_main(void *arg)
{
	struct drainer *d = arg;
	char buf[4096];
	long end = now_ms() + 5000;

	wait_blocked(d->closer);
	while (d->got < d->want && now_ms() < end) {
		ssize_t k = read(d->fd, buf, sizeof(buf));
		if (k > 0)
			d->got += k;
		else
			pause_ms(1);
	}
	return NULL;
}

static void test_cltime_drain(void)
{
	int a = open("/dev/streams/clone/loop", O_RDWR | O_NONBLOCK);
	int b = open("/dev/streams/loop/1", O_RDWR | O_NONBLOCK);
	struct drainer d;
	pthread_t th;
	char blk[1024];
	long total = 0, t0, dt;
	ssize_t k;
	int v = 5000;

	REQUIRE(a >= 0 && b >= 0);
	memset(blk, 'd', sizeof(blk));
	while ((k = write(a, blk, sizeof(blk))) > 0 && total < 10000000)
		total += k;
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(set_nonblock(a, false), 0);
	CHECK_RET(ioctl(a, I_SETCLTIME, &v), 0);
	d = (struct drainer){ b, my_tid(), total, 0 };
	REQUIRE(pthread_create(&th, NULL, drain_main, &d) == 0);
	t0 = now_ms();
	CHECK_RET(close(a), 0);
	dt = now_ms() - t0;
	pthread_join(th, NULL);
	CHECK(dt < 4000);		/* not the whole close time */
	CHECK_EQ(d.got, total);		/* and nothing was lost */
	CHECK_RET(close(b), 0);
}

static void test_fattach(void)
{
	char path[] = "/tmp/sth-fattach-XXXXXX";
	int tmp = mkstemp(path), fd, fd2, fd3, nul;
	char buf[16];

	REQUIRE(tmp >= 0);
	close(tmp);
	fd = open_echo(0);
	CHECK_RET(ioctl(fd, I_PUSH, "nullmod"), 0);
	CHECK_RET(fattach(fd, path), 0);
	/* the name now opens the stream */
	fd2 = open(path, O_RDWR);
	CHECK(fd2 >= 0);
	CHECK_RET(isastream(fd2), 1);
	CHECK_RET(nlist(fd2), 2);
	CHECK_RET(write(fd2, "named", 5), 5);
	CHECK_RET(read(fd, buf, sizeof(buf)), 5);
	CHECK_MEM(buf, "named", 5);
	/* attached once only */
	CHECK_ERR(fattach(fd, path), EBUSY);
	/* SUSv2 fattach errors */
	nul = open("/dev/null", O_RDWR);
	REQUIRE(nul >= 0);
	CHECK_ERR(fattach(nul, "/tmp"), EINVAL);	/* not a stream */
	close(nul);
	CHECK_ERR(fattach(nul, "/tmp"), EBADF);
	CHECK_ERR(fattach(fd, "/nonexistent-sth-dir/x"), ENOENT);
	fdetach("/nonexistent-sth-dir/x");	/* in case it was attached */
	CHECK_ERR(fattach(fd, ""), ENOENT);
	/* fdetach: "If there are no open file descriptors or other
	 * references to the STREAM, then a successful call to fdetach()
	 * has the same effect as performing the last close()": until
	 * then, the attached stream stays open without descriptors */
	CHECK_RET(close(fd2), 0);
	CHECK_RET(close(fd), 0);
	fd3 = open(path, O_RDWR);
	CHECK(fd3 >= 0);
	if (fd3 >= 0) {
		CHECK_RET(isastream(fd3), 1);
		CHECK_RET(nlist(fd3), 2);	/* the same stream */
		CHECK(echoes(fd3, fd3, "still attached"));
		CHECK_RET(close(fd3), 0);
	}
	CHECK_RET(fdetach(path), 0);
	/* the name is the file again */
	fd3 = open(path, O_RDWR);
	CHECK(fd3 >= 0);
	CHECK_RET(isastream(fd3), 0);
	if (fd3 >= 0)
		close(fd3);
	CHECK_ERR(fdetach(path), EINVAL);		/* not attached */
	CHECK_ERR(fdetach("/nonexistent-sth-dir/y"), ENOENT);
	unlink(path);
}

static void test_autopush(void)
{
	struct cdevsw *echo = cdev_find("echo");
	struct strapush sap;
	struct str_mlist names[4];
	struct str_list sl = { 4, names };
	int fd, other;

	REQUIRE(echo != NULL);
	memset(&sap, 0, sizeof(sap));
	sap.sap_cmd = SAP_ONE;
	sap.sap_major = echo->d_major;
	sap.sap_minor = 9;
	sap.sap_npush = 2;
	strcpy(sap.sap_list[0], "nullmod");
	strcpy(sap.sap_list[1], "testmod");
	CHECK_RET(autopush_add(&sap), 0);
	fd = open("/dev/streams/echo/9", O_RDWR);
	REQUIRE(fd >= 0);
	CHECK_RET(ioctl(fd, I_LIST, &sl), 0);
	CHECK_RET(sl.sl_nmods, 3);
	CHECK(strcmp(names[0].l_name, "testmod") == 0);
	CHECK(strcmp(names[1].l_name, "nullmod") == 0);
	CHECK(strcmp(names[2].l_name, "echo") == 0);
	CHECK(echoes(fd, fd, "autopushed"));
	/* a second open of the minor does not push again */
	other = open("/dev/streams/echo/9", O_RDWR);
	CHECK(other >= 0);
	CHECK_RET(nlist(other), 3);
	CHECK_RET(close(other), 0);
	/* other minors are untouched */
	other = open("/dev/streams/echo/10", O_RDWR);
	CHECK(other >= 0);
	CHECK_RET(nlist(other), 1);
	CHECK_RET(close(other), 0);
	CHECK_RET(close(fd), 0);
	/* an unknown module is refused at configuration */
	struct strapush bad = sap;
	bad.sap_minor = 11;
	strcpy(bad.sap_list[1], "nosuchmd");
	CHECK_RET(autopush_add(&bad), -EINVAL);
	CHECK_RET(autopush_del(&sap), 0);
	fd = open("/dev/streams/echo/9", O_RDWR);
	REQUIRE(fd >= 0);
	CHECK_RET(nlist(fd), 1);
	CHECK_RET(close(fd), 0);
}

/*
 * A stream descriptor closed behind the library's back (the raw system
 * call) leaves a stale entry.  When the kernel gives the number to the
 * library's next descriptor for an open of a stream, the stale stream is
 * released.  That last close takes the link lock and the stale stream's
 * plumbing lock: it must run after the open lets go of the opened
 * stream's plumbing lock (before, ThreadSanitizer reported the inversion
 * with the opened stream's own last close, which takes them the other
 * way).  A second open of a device stream and a dup get the number (a
 * new stream's own internal descriptors would take it first).
 */
static void test_stale_number(void)
{
	long base = streams_in_use();
	int p[2], fd, first;
	char buf[8];

	for (int kind = 0; kind < 2; kind++) {
		first = kind == 0 ? open("/dev/streams/echo/3", O_RDWR)
				  : open_echo(0);
		REQUIRE(first >= 0);
		REQUIRE(s_pipe(p) == 0);
		/* the kernel forgets p[1]; the library still maps it */
		CHECK_RET((int)syscall(SYS_close, p[1]), 0);
		fd = kind == 0 ? open("/dev/streams/echo/3", O_RDWR)
			       : dup(first);
		REQUIRE(fd >= 0);
		CHECK_EQ(fd, p[1]);		/* the lowest free number */
		CHECK_RET(isastream(fd), 1);
		CHECK(echoes(fd, first, "stale number"));
		/* the old end is gone: its peer sees the hangup */
		CHECK_RET(read(p[0], buf, sizeof(buf)), 0);
		CHECK_RET(close(p[0]), 0);
		CHECK_RET(close(fd), 0);
		CHECK_RET(close(first), 0);
	}
	CHECK_RET(streams_in_use(), base);
}

/* close_range and closefrom forget the streams they close (closefrom:
 * glibc's goes through its own close_range, which the library did not
 * see, and a number given out again still named the stream); refused
 * flags close nothing; CLOSE_RANGE_CLOEXEC closes nothing now. */
static void test_close_range(void)
{
	long base = streams_in_use();
	int nul = open("/dev/null", O_RDWR), s = open_echo(0), n;

	REQUIRE(nul >= 0 && s > nul);
	CHECK_ERR(close_range((unsigned)s, (unsigned)s, 0x80), EINVAL);
	CHECK_RET(isastream(s), 1);
	CHECK_RET(close_range((unsigned)s, (unsigned)s, CLOSE_RANGE_CLOEXEC), 0);
	CHECK_RET(isastream(s), 1);
	CHECK_EQ(fcntl(s, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_RET(close_range((unsigned)s, (unsigned)s, 0), 0);
	n = fcntl(nul, F_DUPFD, s);	/* the kernel gives s out again */
	CHECK_EQ(n, s);
	CHECK_RET(isastream(n), 0);
	CHECK_RET(close(n), 0);
	/* CLOSE_RANGE_UNSHARE: the caller's own table closes; the
	 * library's (the process's) forgets the stream all the same */
	s = open_echo(0);
	REQUIRE(s > nul);
	CHECK_RET(close_range((unsigned)s, (unsigned)s, CLOSE_RANGE_UNSHARE),
		  0);
	n = fcntl(nul, F_DUPFD, s);
	CHECK_EQ(n, s);
	CHECK_RET(isastream(n), 0);
	CHECK_RET(close(n), 0);
	s = open_echo(0);
	REQUIRE(s >= 0);
	closefrom(s);
	n = fcntl(nul, F_DUPFD, s);
	CHECK_EQ(n, s);
	CHECK_RET(isastream(n), 0);
	CHECK_RET(write(n, "x", 1), 1);		/* /dev/null's, not the stream's */
	CHECK_RET(close(n), 0);
	CHECK_RET(close(nul), 0);
	CHECK_RET(streams_in_use(), base);
}

/* The minor of fd's stream, a clone of drv with a module pushed: the
 * minor whose open finds that module; -1 if none up to 4096 does. */
static int marked_minor(const char *drv)
{
	char path[64], name[FMNAMESZ + 1];

	for (int k = 1; k < 4096; k++) {
		snprintf(path, sizeof(path), "/dev/streams/%s/%d", drv, k);
		int f = open(path, O_RDWR);
		if (f < 0)
			return -1;
		int r = ioctl(f, I_LOOK, name);
		close(f);
		if (r == 0 && strcmp(name, "nullmod") == 0)
			return k;
	}
	return -1;
}

/*
 * A clone open takes a minor no stream has: with minor m+1 held open by
 * name, the clone after the one given m gets another (a driver counting
 * its clones gave m+1 again, and an open of /dev/streams/<drv>/<m+1>
 * then found the clone's stream instead of the one opened by name).
 */
static void test_clone_minors(void)
{
	/* (mux and spx clone every open: no minor of theirs can be had by
	 * name, so they could only meet one of their own after a wrap) */
	static const char *drvs[] = { "nuls", "echo" };
	char path[64], name[FMNAMESZ + 1];

	for (size_t i = 0; i < sizeof(drvs) / sizeof(drvs[0]); i++) {
		snprintf(path, sizeof(path), "/dev/streams/clone/%s", drvs[i]);
		int c = open(path, O_RDWR);
		REQUIRE(c >= 0);
		REQUIRE(ioctl(c, I_PUSH, "nullmod") == 0);
		int m = marked_minor(drvs[i]);
		CHECK(m > 0);
		CHECK_EQ(close(c), 0);

		snprintf(path, sizeof(path), "/dev/streams/%s/%d", drvs[i],
			 m + 1);
		int held = open(path, O_RDWR);
		REQUIRE(held >= 0);
		snprintf(path, sizeof(path), "/dev/streams/clone/%s", drvs[i]);
		int x = open(path, O_RDWR);
		REQUIRE(x >= 0);
		REQUIRE(ioctl(x, I_PUSH, "nullmod") == 0);
		/* m + 1 is still the stream opened by name, no module */
		snprintf(path, sizeof(path), "/dev/streams/%s/%d", drvs[i],
			 m + 1);
		int again = open(path, O_RDWR);
		REQUIRE(again >= 0);
		CHECK_ERR(ioctl(again, I_LOOK, name), EINVAL);
		int mx = marked_minor(drvs[i]);
		CHECK(mx > 0 && mx != m + 1);
		CHECK_EQ(close(again), 0);
		CHECK_EQ(close(x), 0);
		CHECK_EQ(close(held), 0);
	}

	/* round the whole minor space of echo (1024) and on: the clones
	 * go past a minor held open by name, never onto it */
	int a = open("/dev/streams/clone/echo", O_RDWR);
	REQUIRE(a >= 0);
	REQUIRE(ioctl(a, I_PUSH, "nullmod") == 0);
	int ma = marked_minor("echo");
	REQUIRE(ma > 0);
	snprintf(path, sizeof(path), "/dev/streams/echo/%d", ma);
	int bad = 0;
	for (int k = 0; k < 1100; k++) {
		int x = open("/dev/streams/clone/echo", O_RDWR);
		int f = open(path, O_RDWR);
		if (x < 0 || f < 0 || ioctl(f, I_LOOK, name) != 0 ||
		    strcmp(name, "nullmod") != 0)
			bad++;
		close(f);
		close(x);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(close(a), 0);
}

int main(void)
{
	th_mark();
	test_names();
	test_flags();
	test_dup();
	test_isastream();
	test_last_close();
	test_cltime();
	test_cltime_drain();
	test_fattach();
	test_autopush();
	test_stale_number();
	test_close_range();
	test_clone_minors();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
