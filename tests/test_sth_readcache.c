/*
 * test_sth_readcache -- what a reader gets from its cache.  A read or a
 * getmsg that finds several ordinary messages queued takes the whole run
 * into the reader's cache (sth_read.c) and returns the first; the next
 * calls are served from the cache, most of them the short way (whole
 * plain messages: read_plain, getmsg_plain), which must give exactly
 * what the general way gives.  Each case here first gets a run cached,
 * then puts something between: a band message (read first), a high
 * priority message (getmsg's first), an error, a flush (the cache goes
 * with the queue), a message that does not fit (in each read mode), a
 * bad buffer (EFAULT, the message kept), zero-length messages, control
 * parts too long for the buffer or not asked for (MORECTL, MOREDATA);
 * and what the cache hands out is paid back to flow control exactly.
 * A lone message, which read takes without the cache, is read the same
 * way, and one taken before a flush never comes back after it, even when
 * its copy faults (userfaultfd holds the copy while the flush comes).
 */
#include "sth.h"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static void put3(int fd, const char *a, const char *b, const char *c)
{
	CHECK_RET(write(fd, a, strlen(a)), (ssize_t)strlen(a));
	CHECK_RET(write(fd, b, strlen(b)), (ssize_t)strlen(b));
	CHECK_RET(write(fd, c, strlen(c)), (ssize_t)strlen(c));
}

/* An echo stream (testmod pushed, non-blocking) whose reader has
 * "bbb" and "ccc" cached, having read "aaa". */
static int cached_run(void)
{
	int fd = open_tm(O_NONBLOCK);
	char buf[8];

	put3(fd, "aaa", "bbb", "ccc");
	CHECK_RET(read(fd, buf, 3), 3);
	CHECK_MEM(buf, "aaa", 3);
	return fd;
}

/* RPROTDIS, a high priority message read in part: what is left of its
 * data is still a priority message (first, ahead of the cached run, and
 * the only one: a second is refused while it waits); read, it is gone. */
static void test_protdis_hipri_rest(void)
{
	int fd = cached_run();
	char buf[64];

	CHECK_RET(ioctl(fd, I_SRDOPT, RNORM | RPROTDIS), 0);
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "P", 1, "12345", 5), 0);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "12", 2);
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "Q", 1, "XY", 2), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 9);
	CHECK_MEM(buf, "345bbbccc", 9);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	/* and now a priority message is taken again */
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "R", 1, "Z", 1), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	CHECK_MEM(buf, "Z", 1);
	CHECK_RET(close(fd), 0);
}

/* A band message comes after a run was cached: a byte stream read takes
 * it first, then the cached run. */
static void test_band(void)
{
	int fd = cached_run();
	char buf[64];

	CHECK_RET(sendup_data(fd, "BAND", 1, 0), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 10);
	CHECK_MEM(buf, "BANDbbbccc", 10);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(close(fd), 0);
}

/* A high priority message after a cached run: getmsg gives it first. */
static void test_hipri(void)
{
	int fd = open_tm(O_NONBLOCK), flags = 0;
	char cb[16], db[16];
	struct strbuf c = { sizeof(cb), -1, cb }, d = { sizeof(db), -1, db };

	put3(fd, "aaa", "bbb", "ccc");
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(d.len, 3);
	CHECK_MEM(db, "aaa", 3);
	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, "PRI", 3, NULL, -1), 0);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(flags, RS_HIPRI);
	CHECK_EQ(c.len, 3);
	CHECK_MEM(cb, "PRI", 3);
	CHECK_EQ(d.len, -1);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(flags, 0);
	CHECK_EQ(c.len, -1);
	CHECK_EQ(d.len, 3);
	CHECK_MEM(db, "bbb", 3);
	/* MSG_HIPRI with only ordinary ones left: nothing for it */
	flags = RS_HIPRI;
	CHECK_ERR(getmsg(fd, &c, &d, &flags), EAGAIN);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_MEM(db, "ccc", 3);
	CHECK_RET(close(fd), 0);
}

/* A read error after a cached run, then a flush of the read side. */
static void test_error_flush(void)
{
	int fd = cached_run();
	char buf[64];

	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_RET(close(fd), 0);

	fd = cached_run();
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, EIO, 0), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);	/* persistent */
	CHECK_RET(close(fd), 0);
}

/* A cached message longer than the buffer, in each read mode. */
static void test_too_long(void)
{
	static const int modes[] = { RNORM, RMSGN, RMSGD };
	char buf[64];

	for (int i = 0; i < 3; i++) {
		int fd = open_tm(O_NONBLOCK);

		CHECK_RET(ioctl(fd, I_SRDOPT, modes[i]), 0);
		put3(fd, "aaa", "bbbbbb", "cc");
		CHECK_RET(read(fd, buf, 3), 3);
		CHECK_MEM(buf, "aaa", 3);
		CHECK_RET(read(fd, buf, 4), 4);
		CHECK_MEM(buf, "bbbb", 4);
		if (modes[i] == RNORM) {
			/* the rest, and on past the boundary */
			CHECK_RET(read(fd, buf, sizeof(buf)), 4);
			CHECK_MEM(buf, "bbcc", 4);
		} else if (modes[i] == RMSGN) {
			CHECK_RET(read(fd, buf, sizeof(buf)), 2);
			CHECK_MEM(buf, "bb", 2);
			CHECK_RET(read(fd, buf, sizeof(buf)), 2);
			CHECK_MEM(buf, "cc", 2);
		} else {
			/* RMSGD: the rest was discarded */
			CHECK_RET(read(fd, buf, sizeof(buf)), 2);
			CHECK_MEM(buf, "cc", 2);
		}
		CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
		CHECK_RET(close(fd), 0);
	}
	/* message modes: one whole message per read, even with room */
	int fd = open_tm(O_NONBLOCK);

	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	put3(fd, "aa", "bb", "cc");
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "bb", 2);
	CHECK_RET(close(fd), 0);
}

/* A bad buffer: EFAULT, and the cached message is still there. */
static void test_fault(void)
{
	int fd = cached_run(), flags = 0;
	char buf[64];
	struct strbuf d = { sizeof(buf), -1, bad_address() };

	CHECK_ERR(read(fd, bad_address(), 3), EFAULT);
	CHECK_ERR(getmsg(fd, NULL, &d, &flags), EFAULT);
	CHECK_RET(read(fd, buf, 3), 3);
	CHECK_MEM(buf, "bbb", 3);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "ccc", 3);
	CHECK_RET(close(fd), 0);
}

/* Zero-length messages in a cached run: one read ends before one, the
 * next returns 0 for it. */
static void test_zero(void)
{
	int fd = open_tm(O_NONBLOCK);
	char buf[64];

	put3(fd, "x", "aaa", "bbb");
	CHECK_RET(write(fd, "", 0), 0);
	CHECK_RET(write(fd, "ccc", 3), 3);
	CHECK_RET(read(fd, buf, 1), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 6);
	CHECK_MEM(buf, "aaabbb", 6);
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "ccc", 3);
	CHECK_RET(close(fd), 0);
}

/* Control parts from a cached run: too long for the buffer, not asked
 * for, asked for where there is none; and getpmsg's flags. */
static void test_ctl(void)
{
	int fd = open_tm(O_NONBLOCK), flags = 0, band = 0;
	char cb[16], db[16];
	struct strbuf c = { sizeof(cb), -1, cb }, d = { sizeof(db), -1, db };

	for (int i = 0; i < 4; i++)
		CHECK_RET(sendup(fd, M_PROTO, 0, 0, "CC", 2, "dd", 2), 0);
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, 2);
	CHECK_EQ(d.len, 2);
	/* the control part does not fit */
	c.maxlen = 1;
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), MORECTL);
	CHECK_EQ(c.len, 1);
	CHECK_EQ(d.len, 2);
	CHECK_MEM(db, "dd", 2);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, 1);
	CHECK_MEM(cb, "C", 1);
	CHECK_EQ(d.len, -1);
	/* the data part not asked for */
	c.maxlen = sizeof(cb);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, NULL, &flags), MOREDATA);
	CHECK_EQ(c.len, 2);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, -1);
	CHECK_EQ(d.len, 2);
	/* getpmsg MSG_BAND 0 takes a band-0 message: MSG_BAND, band 0 */
	flags = MSG_BAND;
	band = 0;
	CHECK_RET(getpmsg(fd, &c, &d, &band, &flags), 0);
	CHECK_EQ(flags, MSG_BAND);
	CHECK_EQ(band, 0);
	CHECK_EQ(c.len, 2);
	CHECK_EQ(d.len, 2);
	/* a data part where no control part was asked for */
	CHECK_RET(write(fd, "eee", 3), 3);
	CHECK_RET(write(fd, "fff", 3), 3);
	flags = 0;
	CHECK_RET(getmsg(fd, NULL, &d, &flags), 0);
	CHECK_EQ(d.len, 3);
	CHECK_MEM(db, "eee", 3);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, -1);
	CHECK_MEM(db, "fff", 3);
	CHECK_ERR(getmsg(fd, &c, &d, &flags), EAGAIN);
	/* the control part too long with no data: MORECTL, then the rest */
	CHECK_RET(sendup(fd, M_PROTO, 0, 0, "CCCC", 4, NULL, -1), 0);
	CHECK_RET(sendup(fd, M_PROTO, 0, 0, "DD", 2, NULL, -1), 0);
	c.maxlen = 3;
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), MORECTL);
	CHECK_EQ(c.len, 3);
	CHECK_EQ(d.len, -1);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, 1);
	flags = 0;
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, 2);
	CHECK_MEM(cb, "DD", 2);
	CHECK_RET(close(fd), 0);
}

/* Fill a pipe's other end to its high water with putmsg (ctl and data)
 * or write, then drain it with getmsg or read: every round takes as many
 * as the first (what the cache handed out was all paid back to the
 * queue's flow control). */
static int fill(int wfd, bool msg)
{
	char cb[] = "0123456789", db[] = "abcdefghij";
	struct strbuf c = { 0, 10, cb }, d = { 0, 10, db };
	int n = 0;

	for (;;) {
		int r = msg ? putmsg(wfd, &c, &d, 0)
			    : (int)write(wfd, db, 10);

		if (r < 0) {
			CHECK_EQ(errno, EAGAIN);
			return n;
		}
		n++;
	}
}

static void test_accounting(void)
{
	for (int msg = 0; msg < 2; msg++) {
		int p[2], first = -1;
		char cb[16], db[16];

		open_pipe(p);
		CHECK_RET(set_marks(p[1], 200, 100), 0);
		CHECK_RET(set_nonblock(p[0], true), 0);
		CHECK_RET(set_nonblock(p[1], true), 0);
		for (int round = 0; round < 3; round++) {
			int n = fill(p[0], msg), got = 0;

			CHECK(n > 2);
			if (first < 0)
				first = n;
			CHECK_EQ(n, first);
			for (;;) {
				struct strbuf c = { sizeof(cb), -1, cb };
				struct strbuf d = { sizeof(db), -1, db };
				int flags = 0, r = msg ? getmsg(p[1], &c, &d, &flags)
						     : (int)read(p[1], db, 10);

				if (r < 0)
					break;
				CHECK_EQ(msg ? d.len : r, 10);
				got++;
			}
			CHECK_EQ(errno, EAGAIN);
			CHECK_EQ(got, n);
		}
		CHECK_RET(close(p[0]), 0);
		CHECK_RET(close(p[1]), 0);
	}
}

/* One message queued at a time (a reader keeping up with its writer):
 * read takes it off on its own (str_getq_lone), and must give what the
 * general way gives: a partial read leaves the rest (RNORM) or drops it
 * (RMSGD), a bad buffer keeps it, a read error is reported (M_ERROR
 * flushed the message), and flow control is paid back exactly (a pipe filled after 50 such reads takes
 * as many messages as before them). */
static void test_lone(void)
{
	int fd = open_tm(O_NONBLOCK), p[2], before, after;
	char buf[64];

	CHECK_RET(write(fd, "0123456789", 10), 10);
	CHECK_RET(read(fd, buf, 4), 4);
	CHECK_MEM(buf, "0123", 4);
	CHECK_RET(read(fd, buf, sizeof(buf)), 6);
	CHECK_MEM(buf, "456789", 6);
	CHECK_RET(write(fd, "kept", 4), 4);
	CHECK_ERR(read(fd, bad_address(), 4), EFAULT);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "kept", 4);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGD), 0);
	CHECK_RET(write(fd, "abcdef", 6), 6);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "ab", 2);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(ioctl(fd, I_SRDOPT, RNORM), 0);
	CHECK_RET(write(fd, "late", 4), 4);
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, EIO, 0), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	CHECK_RET(close(fd), 0);

	open_pipe(p);
	CHECK_RET(set_marks(p[1], 200, 100), 0);
	CHECK_RET(set_nonblock(p[0], true), 0);
	CHECK_RET(set_nonblock(p[1], true), 0);
	before = fill(p[0], false);
	while (read(p[1], buf, sizeof(buf)) > 0)
		;
	for (int i = 0; i < 50; i++) {
		CHECK_RET(write(p[0], "abcdefghij", 10), 10);
		CHECK_RET(nread(p[1], NULL), 1);
		CHECK_RET(read(p[1], buf, sizeof(buf)), 10);
		CHECK_RET(nread(p[1], NULL), 0);
	}
	after = fill(p[0], false);
	CHECK(before > 2);
	CHECK_EQ(after, before);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/*
 * A flush while a reader's copy faults: a message taken before the flush
 * must not come back after it, and one the flush would not have taken
 * must.  The reader's buffer is a page registered with userfaultfd, so
 * its copy stops at the first touch; meanwhile another thread (the
 * monitor) flushes and sends a new message, then unmaps the page and
 * closes the userfaultfd: the copy resumes, faults (EFAULT), and what
 * the next reads find says what was put back.
 */
struct uf_arg {
	int uffd;
	char *page;
	long len;
	int (*act)(void);		/* the monitor's: 0 if done */
	int faulted, acted;		/* what the monitor did (checked
					   after the join) */
	bool resolve;			/* after act, give the page (the
					   copy goes on); else take it away
					   (the copy faults) */
};

static int uf_rfd, uf_wfd;		/* the reader's end, the writer's */
static int uf_flush_how, uf_flush_band;	/* FLUSHR, or I_FLUSHBAND */

static void *uf_monitor(void *arg)
{
	struct uf_arg *a = arg;
	struct uffd_msg m;
	struct pollfd p = { a->uffd, POLLIN, 0 };

	if (poll(&p, 1, 5000) == 1 &&
	    read(a->uffd, &m, sizeof(m)) == (ssize_t)sizeof(m) &&
	    m.event == UFFD_EVENT_PAGEFAULT) {
		a->faulted = 1;
		a->acted = a->act() == 0;
		if (a->resolve) {
			static char zero[65536];
			struct uffdio_copy cp = {
				.dst = (unsigned long)a->page,
				.src = (unsigned long)zero,
				.len = (unsigned long)a->len,
			};

			if (a->len <= (long)sizeof(zero) &&
			    ioctl(a->uffd, UFFDIO_COPY, &cp) == 0)
				return NULL;	/* the test unmaps */
			a->acted = 0;
		}
	}
	munmap(a->page, (size_t)a->len);
	close(a->uffd);		/* wakes the copy: it faults now */
	a->page = NULL;
	return NULL;
}

/* the flush asked for, then "new" from the writer */
static int flush_and_send(void)
{
	int r;

	if (uf_flush_band < 0) {
		r = ioctl(uf_rfd, I_FLUSH, uf_flush_how);
	} else {
		struct bandinfo bi = { (unsigned char)uf_flush_band, FLUSHR };
		r = ioctl(uf_rfd, I_FLUSHBAND, &bi);
	}
	if (r != 0 || write(uf_wfd, "new", 3) != 3)
		return -1;
	return 0;
}

/* a band's flush from the writer's end (it reaches the reader's head
 * from below), then a second high priority message, then "new" */
static int flush_below_and_send(void)
{
	struct bandinfo bi = { 1, FLUSHW };
	struct strbuf c = { 3, 3, "2nd" };

	if (ioctl(uf_wfd, I_FLUSHBAND, &bi) != 0 ||
	    putmsg(uf_wfd, &c, NULL, RS_HIPRI) != 0 ||
	    write(uf_wfd, "new", 3) != 3)
		return -1;
	return 0;
}

/* A page whose first touch waits for the monitor; false if this kernel
 * or sandbox has no userfaultfd. */
static bool uf_setup(struct uf_arg *a, const char *name)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	a->len = sysconf(_SC_PAGESIZE);
	/* (user-mode faults only: no privilege needed, and the copy is
	 * the library's, in user mode) */
#ifdef UFFD_USER_MODE_ONLY
	a->uffd = (int)syscall(SYS_userfaultfd,
			       O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (a->uffd < 0 && errno == EINVAL)
#endif
		a->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (a->uffd < 0 && (errno == ENOSYS || errno == EPERM)) {
		printf("%s: no userfaultfd here (%s): not run\n", name,
		       strerror(errno));
		return false;
	}
	REQUIRE(a->uffd >= 0);
	REQUIRE(ioctl(a->uffd, UFFDIO_API, &api) == 0);
	a->page = mmap(NULL, (size_t)a->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(a->page != MAP_FAILED);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)a->page;
	reg.range.len = (unsigned long)a->len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	REQUIRE(ioctl(a->uffd, UFFDIO_REGISTER, &reg) == 0);
	a->act = flush_and_send;
	a->faulted = a->acted = 0;
	a->resolve = false;
	return true;
}

/* The reader's call, into the page (set up by the test), while the
 * monitor flushes: it must fail EFAULT after the monitor acted. */
enum uf_call { UF_READ, UF_GETPMSG_DATA, UF_GETMSG_CTL };

static void uf_run(struct uf_arg *a, enum uf_call call)
{
	pthread_t th;
	ssize_t r;
	int e;

	REQUIRE(pthread_create(&th, NULL, uf_monitor, a) == 0);
	if (call == UF_READ) {
		r = read(uf_rfd, a->page, 3);
	} else if (call == UF_GETPMSG_DATA) {
		struct strbuf d = { 3, 0, a->page };
		int band = 0, flags = MSG_ANY;
		r = getpmsg(uf_rfd, NULL, &d, &band, &flags);
	} else {
		struct strbuf c = { 3, 0, a->page };
		int flags = 0;
		r = getmsg(uf_rfd, &c, NULL, &flags);
	}
	e = errno;
	pthread_join(th, NULL);
	CHECK_EQ(r, -1);
	CHECK_EQ(e, EFAULT);
	CHECK_EQ(a->faulted, 1);
	CHECK_EQ(a->acted, 1);
}

/* the next message at the reader: band, flags, data (or control) */
static void expect_next(int fd, int band, int flags, const char *what)
{
	char cb[16], db[16];
	struct strbuf c = { sizeof(cb), 0, cb }, d = { sizeof(db), 0, db };
	int b = 0, fl = MSG_ANY;

	CHECK_RET(getpmsg(fd, &c, &d, &b, &fl), 0);
	CHECK_EQ(b, band);
	CHECK_EQ(fl, flags);
	if (flags == MSG_HIPRI) {
		CHECK_EQ(c.len, (int)strlen(what));
		CHECK_MEM(cb, what, strlen(what));
	} else {
		CHECK_EQ(d.len, (int)strlen(what));
		CHECK_MEM(db, what, strlen(what));
	}
}

static void expect_empty(int fd)
{
	char b[16];
	struct strbuf d = { sizeof(b), 0, b };
	int band = 0, fl = MSG_ANY;

	CHECK_ERR(getpmsg(fd, NULL, &d, &band, &fl), EAGAIN);
}

/* A read error that comes while a byte-stream read copies a message: the
 * read returns what it took, and the next read the error. */
static int send_error(void)
{
	return sendup_bytes(uf_rfd, M_ERROR, 2, EIO, 0);
}

static void test_error_mid_read(void)
{
	struct uf_arg a;
	pthread_t th;
	char buf[16];
	ssize_t r;

	if (!uf_setup(&a, "test_error_mid_read"))
		return;
	a.act = send_error;
	a.resolve = true;
	uf_rfd = uf_wfd = open_tm(O_NONBLOCK);
	CHECK_RET(write(uf_wfd, "old", 3), 3);
	REQUIRE(pthread_create(&th, NULL, uf_monitor, &a) == 0);
	r = read(uf_rfd, a.page, 64);	/* RNORM: room for more */
	pthread_join(th, NULL);
	CHECK_EQ(a.faulted, 1);
	CHECK_EQ(a.acted, 1);
	CHECK_EQ(r, 3);
	REQUIRE(a.page != NULL);
	CHECK_MEM(a.page, "old", 3);
	CHECK_ERR(read(uf_rfd, buf, sizeof(buf)), EIO);
	munmap(a.page, (size_t)a.len);
	close(a.uffd);
	CHECK_RET(close(uf_rfd), 0);
}

/* A flush of everything while a reader copies the high priority message
 * it took, then a new one: the reader, done, leaves STRPRI to the new one
 * (a third is still refused while that waits). */
static int flush_and_hipri(void)
{
	if (ioctl(uf_rfd, I_FLUSH, FLUSHR) != 0)
		return -1;
	return sendup(uf_rfd, M_PCPROTO, 0, 0, "H2", 2, NULL, -1);
}

static void test_hipri_flush_mid_read(void)
{
	struct uf_arg a;
	struct strbuf c;
	pthread_t th;
	int r, flags = 0;

	if (!uf_setup(&a, "test_hipri_flush_mid_read"))
		return;
	a.act = flush_and_hipri;
	a.resolve = true;
	uf_rfd = uf_wfd = open_tm(O_NONBLOCK);
	CHECK_RET(sendup(uf_rfd, M_PCPROTO, 0, 0, "H1", 2, NULL, -1), 0);
	c = (struct strbuf){ 16, 0, a.page };
	REQUIRE(pthread_create(&th, NULL, uf_monitor, &a) == 0);
	r = getmsg(uf_rfd, &c, NULL, &flags);
	pthread_join(th, NULL);
	CHECK_EQ(a.faulted, 1);
	CHECK_EQ(a.acted, 1);
	CHECK_EQ(r, 0);
	CHECK_EQ(flags, RS_HIPRI);
	CHECK_EQ(c.len, 2);
	REQUIRE(a.page != NULL);
	CHECK_MEM(a.page, "H1", 2);
	CHECK_RET(sendup(uf_rfd, M_PCPROTO, 0, 0, "H3", 2, NULL, -1), 0);
	expect_next(uf_rfd, 0, MSG_HIPRI, "H2");
	expect_empty(uf_rfd);
	munmap(a.page, (size_t)a.len);
	close(a.uffd);
	CHECK_RET(close(uf_rfd), 0);
}

/* A lone band-0 message (the short read) and a flush of everything. */
static void test_lone_flush_fault(void)
{
	struct uf_arg a;
	char buf[16];

	if (!uf_setup(&a, "test_lone_flush_fault"))
		return;
	uf_rfd = uf_wfd = open_tm(O_NONBLOCK);
	uf_flush_how = FLUSHR;
	uf_flush_band = -1;
	CHECK_RET(write(uf_wfd, "old", 3), 3);
	uf_run(&a, UF_READ);
	CHECK_RET(read(uf_rfd, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "new", 3);
	CHECK_ERR(read(uf_rfd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(close(uf_rfd), 0);
}

/*
 * The general reader's take (a band message, a high priority one): put
 * back only if the flush that came would not have taken it.  On a pipe:
 * the writer's end sends, the reader's end reads and flushes.
 *   band 1, flush of band 1: gone;  band 1, flush of band 2: kept;
 *   high priority, flush of everything: gone;  flush of band 0: kept.
 */
static void band_flush_case(int mband, bool hipri, int fband, bool kept)
{
	struct uf_arg a;
	int p[2];
	char name[64];

	snprintf(name, sizeof(name), "test_band_flush_fault %d %d %d",
		 hipri ? -1 : mband, fband, kept);
	if (!uf_setup(&a, name))
		return;
	open_pipe(p);
	uf_wfd = p[0];
	uf_rfd = p[1];
	uf_flush_how = FLUSHR;
	uf_flush_band = fband;
	CHECK_RET(set_nonblock(uf_rfd, true), 0);
	{
		/* bands 1 and 2 exist at the reader (a band's flush past
		 * the highest band there is is no flush at all) */
		struct strbuf d = { 2, 2, "b2" };
		CHECK_RET(putpmsg(uf_wfd, NULL, &d, 2, MSG_BAND), 0);
		d.buf = "b1";
		CHECK_RET(putpmsg(uf_wfd, NULL, &d, 1, MSG_BAND), 0);
		expect_next(uf_rfd, 2, MSG_BAND, "b2");
		expect_next(uf_rfd, 1, MSG_BAND, "b1");
	}
	if (hipri) {
		struct strbuf c = { 3, 3, "old" };
		CHECK_RET(putmsg(uf_wfd, &c, NULL, RS_HIPRI), 0);
		uf_run(&a, UF_GETMSG_CTL);
		if (kept)
			expect_next(uf_rfd, 0, MSG_HIPRI, "old");
	} else {
		struct strbuf d = { 3, 3, "old" };
		CHECK_RET(putpmsg(uf_wfd, NULL, &d, mband, MSG_BAND), 0);
		uf_run(&a, UF_GETPMSG_DATA);
		if (kept)
			expect_next(uf_rfd, mband, MSG_BAND, "old");
	}
	expect_next(uf_rfd, 0, MSG_BAND, "new");
	expect_empty(uf_rfd);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/*
 * A high priority message a reader holds while a band's flush comes from
 * below: the flush leaves it (it goes back), and the head still counts it
 * as the one high priority message waiting, so a second one is dropped.
 * (The flush used to clear STRPRI: the second was queued too.)
 */
static void test_hipri_band_flush_below(void)
{
	struct uf_arg a;
	int p[2];

	if (!uf_setup(&a, "test_hipri_band_flush_below"))
		return;
	a.act = flush_below_and_send;
	open_pipe(p);
	uf_wfd = p[0];
	uf_rfd = p[1];
	CHECK_RET(set_nonblock(uf_rfd, true), 0);
	{
		struct strbuf d = { 2, 2, "b1" };
		CHECK_RET(putpmsg(uf_wfd, NULL, &d, 1, MSG_BAND), 0);
		expect_next(uf_rfd, 1, MSG_BAND, "b1");
	}
	struct strbuf c = { 3, 3, "old" };
	CHECK_RET(putmsg(uf_wfd, &c, NULL, RS_HIPRI), 0);
	uf_run(&a, UF_GETMSG_CTL);
	expect_next(uf_rfd, 0, MSG_HIPRI, "old");
	expect_next(uf_rfd, 0, MSG_BAND, "new");
	expect_empty(uf_rfd);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

static void test_band_flush_fault(void)
{
	band_flush_case(1, false, 1, false);
	band_flush_case(1, false, 2, true);
	band_flush_case(1, false, 0, true);
	band_flush_case(1, false, -1, false);
	band_flush_case(0, true, -1, false);
	band_flush_case(0, true, 0, true);
	band_flush_case(0, true, 1, true);
}

int main(void)
{
	th_mark();
	test_band();
	test_hipri();
	test_protdis_hipri_rest();
	test_error_flush();
	test_too_long();
	test_fault();
	test_zero();
	test_ctl();
	test_accounting();
	test_lone();
	test_lone_flush_fault();
	test_error_mid_read();
	test_hipri_flush_mid_read();
	test_band_flush_fault();
	test_hipri_band_flush_below();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
