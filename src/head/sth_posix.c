/*
 * sth_posix.c -- the POSIX calls, for stream descriptors and all others.
 *
 * A program linked with -lstreams calls these instead of libc's (symbol
 * interposition: the library comes before libc in the lookup order).  Each
 * call looks the descriptor up in the descriptor table with two loads; a
 * descriptor that is not a stream goes to libc's function, found with
 * dlsym(RTLD_NEXT) (raw system calls in a program without dlsym), with its
 * arguments untouched.  Stream descriptors go to the stream head.
 *
 * Calls libc makes internally (fopen, ...) do not come here: a stream can
 * be opened only with open()/openat(); fdopen() on a stream descriptor
 * gives a FILE whose reads and writes bypass the stream head (fclose() is
 * caught so the descriptor is forgotten).  recv/send and fstat on a stream
 * descriptor see the mirror socket.
 */
/* This file defines open and open64, fcntl and fcntl64 side by side:
 * it must see libc's plain names, not the large-file redirections. */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sthead.h"

struct sth_libc sth_real;
static pthread_once_t sth_posix_once = PTHREAD_ONCE_INIT;

typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *,
			const sigset_t *);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *,
			 struct timeval *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *,
			  const struct timespec *, const sigset_t *);
typedef int (*epoll_ctl_fn)(int, int, int, struct epoll_event *);
typedef int (*fclose_fn)(FILE *);
typedef int (*close_range_fn)(unsigned int, unsigned int, int);
typedef void (*closefrom_fn)(int);

static poll_fn real_poll;
static ppoll_fn real_ppoll;
static select_fn real_select;
static pselect_fn real_pselect;
static epoll_ctl_fn real_epoll_ctl;
static fclose_fn real_fclose;
static close_range_fn real_close_range;
static closefrom_fn real_closefrom;

/* ---- raw system call fallbacks (no dlsym: a static program) ---- */

static int raw_open(const char *p, int fl, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, fl);
	m = va_arg(ap, int);
	va_end(ap);
	return (int)syscall(SYS_openat, AT_FDCWD, p, fl, m);
}
static int raw_close(int fd) { return (int)syscall(SYS_close, fd); }
static ssize_t raw_read(int fd, void *b, size_t n) { return syscall(SYS_read, fd, b, n); }
static ssize_t raw_write(int fd, const void *b, size_t n) { return syscall(SYS_write, fd, b, n); }
static ssize_t raw_readv(int fd, const struct iovec *v, int n) { return syscall(SYS_readv, fd, v, n); }
static ssize_t raw_writev(int fd, const struct iovec *v, int n) { return syscall(SYS_writev, fd, v, n); }
static int raw_ioctl(int fd, unsigned long c, ...)
{
	va_list ap;
	void *a;

	va_start(ap, c);
	a = va_arg(ap, void *);
	va_end(ap);
	return (int)syscall(SYS_ioctl, fd, c, a);
}
static int raw_fcntl(int fd, int c, ...)
{
	va_list ap;
	long a;

	va_start(ap, c);
	a = va_arg(ap, long);
	va_end(ap);
	return (int)syscall(SYS_fcntl, fd, c, a);
}
static int raw_dup(int fd) { return (int)syscall(SYS_dup, fd); }
static int raw_dup2(int a, int b)
{
	if (a == b)
		return (int)syscall(SYS_fcntl, a, F_GETFD) < 0 ? -1 : b;
	return (int)syscall(SYS_dup3, a, b, 0);
}
static int raw_dup3(int a, int b, int fl) { return (int)syscall(SYS_dup3, a, b, fl); }
static int raw_ppoll(struct pollfd *f, nfds_t n, const struct timespec *t,
		     const sigset_t *m)
{
	return (int)syscall(SYS_ppoll, f, n, t, m, (size_t)_NSIG / 8);
}
static int raw_poll(struct pollfd *f, nfds_t n, int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	return raw_ppoll(f, n, ms < 0 ? NULL : &ts, NULL);
}
static int raw_epoll_ctl(int e, int op, int fd, struct epoll_event *ev)
{
	return (int)syscall(SYS_epoll_ctl, e, op, fd, ev);
}

static void *next_sym(const char *name, void *fallback)
{
	void *p = dlsym(RTLD_NEXT, name);
	return p != NULL ? p : fallback;
}

static void resolve(void)
{
	sth_real.open = next_sym("open", (void *)raw_open);
	sth_real.close = next_sym("close", (void *)raw_close);
	sth_real.read = next_sym("read", (void *)raw_read);
	sth_real.write = next_sym("write", (void *)raw_write);
	sth_real.readv = next_sym("readv", (void *)raw_readv);
	sth_real.writev = next_sym("writev", (void *)raw_writev);
	sth_real.ioctl = next_sym("ioctl", (void *)raw_ioctl);
	sth_real.fcntl = next_sym("fcntl", (void *)raw_fcntl);
	sth_real.dup = next_sym("dup", (void *)raw_dup);
	sth_real.dup2 = next_sym("dup2", (void *)raw_dup2);
	sth_real.dup3 = next_sym("dup3", (void *)raw_dup3);
	real_poll = next_sym("poll", (void *)raw_poll);
	real_ppoll = next_sym("ppoll", (void *)raw_ppoll);
	real_select = next_sym("select", NULL);
	real_pselect = next_sym("pselect", NULL);
	real_epoll_ctl = next_sym("epoll_ctl", (void *)raw_epoll_ctl);
	real_fclose = next_sym("fclose", NULL);
	real_close_range = next_sym("close_range", NULL);
	real_closefrom = next_sym("closefrom", NULL);
}

extern void (*str_shutdown_stream)(struct stdata *);
extern void (*str_shutdown_heads)(void);
void sth_fd_shutdown(void);

static void init_once(void)
{
	resolve();
	str_shutdown_stream = sth_shutdown_stream;
	str_shutdown_heads = sth_fd_shutdown;
	pthread_atfork(NULL, NULL, sth_mirrors_atfork_child);
}

/* once: streams opened by several threads at once set the hooks once */
void sth_posix_init(void)
{
	pthread_once(&sth_posix_once, init_once);
}

#define REAL(fn) (likely(sth_real.fn != NULL) ? sth_real.fn \
		  : (sth_posix_init(), sth_real.fn))

static inline bool maybe_stream(int fd)
{
	return sth_lookup(fd) != NULL;
}

/* ---- open ---- */

static int open_common(int dirfd, const char *path, int flags, mode_t mode,
		       bool at)
{
	char buf[PATH_MAX];

	/* (the path is the caller's: read it without trusting it; one
	 * that faults or has no end the real call answers) */
	sth_ucopy_init();
	if (path != NULL && sth_ustrcpy(buf, path, sizeof(buf)) == 0 &&
	    buf[0] == '/') {
		int r = sth_open_path(buf, flags, mode);
		if (r != -2)
			return r;
	}
	if (at)
		return (int)syscall(SYS_openat, dirfd, path, flags, mode);
	return REAL(open)(path, flags, mode);
}

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return open_common(AT_FDCWD, path, flags, m, false);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return open_common(AT_FDCWD, path, flags, m, false);
}

int __open_2(const char *path, int flags)
{
	return open_common(AT_FDCWD, path, flags, 0, false);
}

int __open64_2(const char *path, int flags)
{
	return open_common(AT_FDCWD, path, flags, 0, false);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return open_common(dirfd, path, flags, m, true);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = open_mode(flags, ap);
	va_end(ap);
	return open_common(dirfd, path, flags, m, true);
}

/* ---- close and duplication ---- */

/* The application closes fd (close, fclose, close_range, closefrom, a
 * dup2 onto it): forgotten, its open file returned for release after the
 * kernel's close, and -- POSIX close() -- the process's I_SETSIG
 * registration on the stream is undone (the library's own closes of
 * streams it dup'd, sth_close_internal, leave it). */
static struct sth_file *app_remove(int fd)
{
	struct sth_file *f = sth_fd_remove(fd);

	if (f != NULL)
		sth_sig_forget(f->f_sh);	/* (f: the name's reference) */
	return f;
}

/* The number fd, a stream's, about to be forgotten before the kernel's
 * close: between the two, a call on another thread no longer finds the
 * stream and goes to the kernel, which must answer as for a closed
 * descriptor (EBADF), not with the stream's poll mirror (a read there
 * said EAGAIN).  So the number's kernel file becomes an O_PATH one
 * first, which read, write, ioctl, poll and the rest refuse with EBADF,
 * the number still taken (never given out while the table names it).
 * Without a descriptor to spare, the window stays; a number the kernel
 * has not open (a stale entry) is left alone, for close to say EBADF. */
static void vacate(int fd)
{
	int e = errno;
	int d;

	if (REAL(fcntl)(fd, F_GETFD, 0) < 0) {
		errno = e;
		return;
	}
	d = (int)syscall(SYS_openat, AT_FDCWD, "/", O_PATH | O_CLOEXEC);
	if (d >= 0) {
		(void)REAL(dup3)(d, fd, O_CLOEXEC);
		(void)REAL(close)(d);
	}
	errno = e;
}

/* fd about to be closed by the kernel: vacated and forgotten if it names
 * a stream; its open file (to release after that close) or NULL. */
static struct sth_file *close_forget(int fd, bool app)
{
	if (fd < 0 || !maybe_stream(fd))
		return NULL;
	vacate(fd);
	return app ? app_remove(fd) : sth_fd_remove(fd);
}

static int close_common(int fd, bool app)
{
	struct sth_file *f = close_forget(fd, app);
	int r = REAL(close)(fd);

	if (f != NULL) {
		int e = errno;
		sth_file_rele(f);
		errno = e;
	}
	return r;
}

int close(int fd)
{
	return close_common(fd, true);
}

int sth_close_internal(int fd)
{
	return close_common(fd, false);
}

int fclose(FILE *fp)
{
	struct sth_file *f = NULL;
	int r;

	/* (stdio's own writes never reach a stream: libc makes them
	 * inside itself, to the mirror; README) */
	if (fp != NULL)
		f = close_forget(fileno(fp), true);
	if (real_fclose == NULL)
		sth_posix_init();
	r = real_fclose(fp);
	if (f != NULL) {
		int e = errno;
		sth_file_rele(f);
		errno = e;
	}
	return r;
}

/* The streams named in [first, last], forgotten as close does before
 * the kernel's close (so that a number given out again at once is never
 * found naming a stream); released by range_release after it. */
struct range {
	struct sth_file **f;
	size_t n, cap;
};

static void range_forget(unsigned int first, unsigned int last,
			 struct range *rg)
{
	unsigned int cap = (unsigned int)__atomic_load_n(&sth_fdcap,
							 __ATOMIC_ACQUIRE);

	rg->f = NULL;
	rg->n = rg->cap = 0;
	for (unsigned int fd = first; fd <= last && fd < cap; fd++) {
		struct sth_file *f = app_remove((int)fd);

		if (f == NULL)
			continue;
		if (rg->n == rg->cap) {
			size_t c = rg->cap ? rg->cap * 2 : 16;
			void *m = realloc(rg->f, c * sizeof(*rg->f));

			if (m == NULL) {	/* let it go now, then */
				sth_file_rele(f);
				continue;
			}
			rg->f = m;
			rg->cap = c;
		}
		rg->f[rg->n++] = f;
	}
}

static void range_release(struct range *rg)
{
	int e = errno;

	for (size_t i = 0; i < rg->n; i++)
		sth_file_rele(rg->f[i]);
	free(rg->f);
	errno = e;
}

/*
 * CLOSE_RANGE_CLOEXEC closes nothing now: the streams stay named.
 * CLOSE_RANGE_UNSHARE closes the range in the caller's own copy of the
 * descriptor table; the library's table is the process's, so the streams
 * are forgotten all the same (the caller's numbers will be given out
 * again; other threads sharing the old table lose them -- the usual
 * caller, a fork's child before exec, has none).  Arguments the kernel
 * refuses are refused first, the streams untouched.
 */
int close_range(unsigned int first, unsigned int last, int flags)
{
	struct range rg;
	int r;

	if (real_close_range == NULL)
		sth_posix_init();
	if ((flags & ~(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)) ||
	    first > last)
		return sth_err(EINVAL);
	if (flags & CLOSE_RANGE_CLOEXEC)
		rg.n = 0, rg.f = NULL;
	else
		range_forget(first, last, &rg);
	if (real_close_range != NULL)
		r = real_close_range(first, last, flags);
	else
		r = (int)syscall(SYS_close_range, first, last, flags);
	range_release(&rg);
	return r;
}

/* glibc's closefrom closes through its own close_range, not ours. */
void closefrom(int lowfd)
{
	struct range rg;

	if (real_close_range == NULL)
		sth_posix_init();
	if (lowfd < 0)
		lowfd = 0;
	range_forget((unsigned int)lowfd, ~0U, &rg);
	if (real_closefrom != NULL)
		real_closefrom(lowfd);
	else
		(void)syscall(SYS_close_range, (unsigned int)lowfd, ~0U, 0);
	range_release(&rg);
}

/* The open file fd names, held for a dup of fd about to be made: NULL
 * when fd names no stream, or its last close is under way (a hold taken
 * after the kernel's dup could rise from zero, and the new number would
 * name a file freed under it). */
static struct sth_file *dup_hold(int fd)
{
	struct strthread *t = str_enter();
	struct sth_file *f = sth_lookup(fd);

	if (f != NULL && !sth_file_tryhold(f))
		f = NULL;
	str_exit(t);
	return f;
}

/* After the kernel's dup of fd (newfd, or -1): newfd names f (fd's open
 * file, held by dup_hold, or NULL); the hold is let go; errno kept. */
static void dup_note(int fd, int newfd, struct sth_file *f)
{
	struct sth_file *old = NULL, *stale = NULL;
	int e = errno;

	if (newfd >= 0 && newfd != fd) {
		old = app_remove(newfd);	/* what newfd named before */
		if (f != NULL)
			(void)sth_fd_install(newfd, f, &stale);
	}
	sth_file_rele(f);
	sth_file_rele(old);
	sth_file_rele(stale);
	errno = e;
}

int dup(int fd)
{
	struct sth_file *f = maybe_stream(fd) ? dup_hold(fd) : NULL;
	int r = REAL(dup)(fd);

	if (f != NULL)
		dup_note(fd, r, f);
	return r;
}

static int dup_to(int fd, int newfd, int flags, bool three)
{
	bool involved = maybe_stream(fd) || maybe_stream(newfd);
	struct sth_file *f = involved ? dup_hold(fd) : NULL;
	int r = three ? REAL(dup3)(fd, newfd, flags) : REAL(dup2)(fd, newfd);

	if (involved)
		dup_note(fd, r, f);
	return r;
}

int dup2(int fd, int newfd)
{
	return dup_to(fd, newfd, 0, false);
}

int dup3(int fd, int newfd, int flags)
{
	return dup_to(fd, newfd, flags, true);
}

static int fcntl_common(int fd, int cmd, long arg)
{
	struct strthread *t;
	struct sth_file *f;
	int r;

	if (!maybe_stream(fd))
		return REAL(fcntl)(fd, cmd, arg);
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		f = dup_hold(fd);
		r = REAL(fcntl)(fd, cmd, arg);
		if (f != NULL)
			dup_note(fd, r, f);
		return r;
	case F_GETFL:
		t = str_enter();
		f = sth_lookup(fd);
		r = f ? (__atomic_load_n(&f->f_oflag, __ATOMIC_RELAXED) &
			 ~O_CLOEXEC) : -1;
		str_exit(t);
		if (r >= 0 && sth_async(fd))
			r |= O_ASYNC;	/* the stream's (sth_set_async) */
		return r >= 0 ? r : REAL(fcntl)(fd, cmd, arg);
	case F_SETFL:
		t = str_enter();
		f = sth_lookup(fd);
		r = 0;
		if (f != NULL) {
			int keep = f->f_oflag & ~(O_NONBLOCK | O_NDELAY | O_APPEND);
			__atomic_store_n(&f->f_oflag, keep |
					 ((int)arg & (O_NONBLOCK | O_NDELAY |
						      O_APPEND)),
					 __ATOMIC_RELEASE);
			r = sth_set_async(f, fd, (int)arg & O_ASYNC);
		}
		str_exit(t);
		if (f == NULL)
			return REAL(fcntl)(fd, cmd, arg);
		return r != 0 ? sth_err(r) : 0;
	default:
		return REAL(fcntl)(fd, cmd, arg);
	}
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

/* ---- data ---- */

ssize_t read(int fd, void *buf, size_t n)
{
	if (likely(!maybe_stream(fd)))
		return REAL(read)(fd, buf, n);
	struct iovec v = { buf, n };
	bool handled;
	ssize_t r = sth_read(fd, &v, 1, true, &handled);
	return handled ? r : REAL(read)(fd, buf, n);
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		abort();
	return read(fd, buf, n);
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	if (likely(!maybe_stream(fd)))
		return REAL(readv)(fd, iov, iovcnt);
	if (iovcnt < 0 || iovcnt > IOV_MAX || (iovcnt > 0 && iov == NULL))
		return sth_err(EINVAL);
	bool handled;
	ssize_t r = sth_read(fd, iov, iovcnt, false, &handled);
	return handled ? r : REAL(readv)(fd, iov, iovcnt);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	if (likely(!maybe_stream(fd)))
		return REAL(write)(fd, buf, n);
	struct iovec v = { (void *)buf, n };
	bool handled;
	ssize_t r = sth_write(fd, &v, 1, true, &handled);
	return handled ? r : REAL(write)(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	if (likely(!maybe_stream(fd)))
		return REAL(writev)(fd, iov, iovcnt);
	if (iovcnt < 0 || iovcnt > IOV_MAX || (iovcnt > 0 && iov == NULL))
		return sth_err(EINVAL);
	bool handled;
	ssize_t r = sth_write(fd, iov, iovcnt, false, &handled);
	return handled ? r : REAL(writev)(fd, iov, iovcnt);
}

int ioctl(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (likely(!maybe_stream(fd)))
		return REAL(ioctl)(fd, cmd, arg);
	if (cmd == FIOCLEX || cmd == FIONCLEX)	/* the descriptor's own */
		return REAL(ioctl)(fd, cmd, arg);
	bool handled;
	int r = sth_ioctl(fd, cmd, arg, &handled);
	return handled ? r : REAL(ioctl)(fd, cmd, arg);
}

/* ---- STREAMS calls ---- */

int isastream(int fd)
{
	if (maybe_stream(fd))
		return 1;
	if (REAL(fcntl)(fd, F_GETFD) < 0)
		return -1;	/* EBADF */
	return 0;
}

int getmsg(int fd, struct strbuf *ctl, struct strbuf *dat, int *flagsp)
{
	return sth_getpmsg(fd, ctl, dat, NULL, flagsp, false);
}

int getpmsg(int fd, struct strbuf *ctl, struct strbuf *dat, int *bandp,
	    int *flagsp)
{
	return sth_getpmsg(fd, ctl, dat, bandp, flagsp, true);
}

int putmsg(int fd, const struct strbuf *ctl, const struct strbuf *dat,
	   int flags)
{
	return sth_putpmsg(fd, ctl, dat, 0, flags, false);
}

int putpmsg(int fd, const struct strbuf *ctl, const struct strbuf *dat,
	    int band, int flags)
{
	return sth_putpmsg(fd, ctl, dat, band, flags, true);
}

/* ---- readiness ---- */

#define POLL_RELOOK_MS	2	/* a round without a mirror that woke for
				   nothing asked */
#define POLL_BAND_MS	10	/* a wait for POLLWRBAND alone */

static int kernel_events(int ev)
{
	int k = 0;

	if (ev & (POLLIN | POLLRDNORM | POLLRDBAND))
		k |= POLLIN;
	if (ev & POLLPRI)
		k |= POLLPRI | POLLIN;
	if (ev & (POLLOUT | POLLWRNORM | POLLWRBAND))
		k |= POLLOUT;
	return k;
}

/*
 * poll over a set with at least one stream: arm the streams' mirrors,
 * compute their exact events, let the kernel wait on everything, and
 * recompute the streams' events when it returns.  deadline_ms < 0: none.
 */
static int poll_streams(struct pollfd *fds, nfds_t n, long timeout_ms,
			const sigset_t *mask)
{
	struct sthead *one[16], **sh = one;
	short *orig, origbuf[16];
	struct strthread *t;
	long deadline = timeout_ms < 0 ? -1 : sth_now_ms() + timeout_ms;
	int r = 0, saved = 0;

	if (n > 16) {
		sh = calloc(n, sizeof(*sh));
		orig = calloc(n, sizeof(*orig));
		if (sh == NULL || orig == NULL) {
			free(sh);
			free(orig);
			return sth_err(ENOMEM);
		}
	} else {
		orig = origbuf;
		memset(one, 0, sizeof(one));
	}
	t = str_enter();
	for (nfds_t i = 0; i < n; i++) {
		struct sth_file *f = fds[i].fd >= 0 ? sth_lookup(fds[i].fd) : NULL;
		sh[i] = f ? f->f_sh : NULL;
		if (sh[i] != NULL)
			sth_hold(sh[i]);
	}
	str_exit(t);
	for (nfds_t i = 0; i < n; i++) {
		orig[i] = fds[i].events;
		if (sh[i] != NULL)
			sth_mirror_arm(sh[i], false);
	}
	/* masked: the last round's kernel poll was woken by a mirror for
	 * nothing the caller asked (one readable byte stands for POLLIN,
	 * POLLRDBAND and POLLPRI alike: a high priority message lights
	 * POLLIN too), so the streams' mirrors sit out this round and their
	 * exact state is looked at again after a short wait, instead of the
	 * kernel returning at once for ever (a poll that spun a CPU) */
	bool masked = false;

	for (;;) {
		bool any = false, inexact = false, woke = false;
		int ms;

		t = str_enter();
		for (nfds_t i = 0; i < n; i++)
			if (sh[i] != NULL)
				sth_kevwait_begin(sh[i]);
		str_run_local(t);
		for (nfds_t i = 0; i < n; i++)
			if (sh[i] != NULL &&
			    sth_poll_events(sh[i], orig[i]) != 0)
				any = true;
		str_exit(t);
		ms = any ? 0 : deadline < 0 ? -1
			: (int)(deadline - sth_now_ms() > 0 ?
				deadline - sth_now_ms() : 0);
		for (nfds_t i = 0; i < n; i++) {
			if (sh[i] == NULL)
				continue;
			fds[i].events = masked ? 0 :
					(short)kernel_events(orig[i]);
			/* the mirror's "writable" is band 0's: a wait for
			 * band room alone looks again now and then */
			if ((orig[i] & POLLWRBAND) &&
			    !(orig[i] & (POLLOUT | POLLWRNORM)))
				inexact = true;
		}
		if (masked && (ms < 0 || ms > POLL_RELOOK_MS))
			ms = POLL_RELOOK_MS;
		else if (inexact && (ms < 0 || ms > POLL_BAND_MS))
			ms = POLL_BAND_MS;
		if (mask != NULL) {
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
			r = real_ppoll(fds, n, ms < 0 ? NULL : &ts, mask);
		} else {
			r = real_poll(fds, n, ms);
		}
		saved = errno;
		for (nfds_t i = 0; i < n; i++) {
			fds[i].events = orig[i];
			if (sh[i] != NULL) {
				sth_kevwait_end(sh[i]);
				if (r > 0 && fds[i].revents != 0)
					woke = true;
			}
		}
		if (r < 0)
			break;
		r = 0;
		t = str_enter();
		for (nfds_t i = 0; i < n; i++) {
			if (sh[i] != NULL)
				fds[i].revents = (short)sth_poll_events(sh[i],
									orig[i]);
			if (fds[i].revents != 0)
				r++;
		}
		str_exit(t);
		if (r > 0 || ms == 0)
			break;
		if (deadline >= 0 && sth_now_ms() >= deadline)
			break;
		/* the mirror woke us but the stream is not ready: again,
		 * without that mirror for a round */
		masked = woke;
	}
	for (nfds_t i = 0; i < n; i++) {
		if (sh[i] != NULL) {
			sth_mirror_disarm(sh[i]);
			sth_rele(sh[i]);
		}
	}
	if (sh != one) {
		free(sh);
		free(orig);
	}
	errno = saved;
	return r;
}

static bool any_stream(const struct pollfd *fds, nfds_t n)
{
	if (__atomic_load_n(&sth_fdcap, __ATOMIC_RELAXED) == 0)
		return false;
	for (nfds_t i = 0; i < n; i++)
		if (fds[i].fd >= 0 && maybe_stream(fds[i].fd))
			return true;
	return false;
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (real_poll == NULL)
		sth_posix_init();
	if (!any_stream(fds, n))
		return real_poll(fds, n, timeout);
	return poll_streams(fds, n, timeout, NULL);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return poll(fds, n, timeout);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
	  const sigset_t *mask)
{
	long ms;
	sigset_t empty;

	if (real_ppoll == NULL)
		sth_posix_init();
	if (!any_stream(fds, n))
		return real_ppoll(fds, n, ts, mask);
	if (ts != NULL && (ts->tv_sec < 0 || ts->tv_nsec < 0 ||
			   ts->tv_nsec >= 1000000000L))
		return sth_err(EINVAL);
	ms = ts == NULL ? -1 : ts->tv_sec * 1000L + (ts->tv_nsec + 999999) / 1000000;
	if (mask == NULL) {
		sigemptyset(&empty);
		sigprocmask(SIG_BLOCK, NULL, &empty);
		mask = &empty;
	}
	return poll_streams(fds, n, ms, mask);
}

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		const sigset_t *mask, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return ppoll(fds, n, ts, mask);
}

/* select and pselect through poll_streams when a stream is in a set. */
static int select_common(int nfds, fd_set *rs, fd_set *ws, fd_set *es,
			 long ms, const sigset_t *mask, bool *handled)
{
	struct pollfd pf[FD_SETSIZE];
	bool strm[FD_SETSIZE];
	nfds_t n = 0;
	bool has = false;
	int r, count = 0;

	*handled = false;
	if (nfds < 0 || nfds > FD_SETSIZE)
		return 0;
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;
		if (rs && FD_ISSET(fd, rs))
			ev |= POLLIN | POLLRDNORM | POLLRDBAND;
		if (ws && FD_ISSET(fd, ws))
			ev |= POLLOUT | POLLWRNORM | POLLWRBAND;
		if (es && FD_ISSET(fd, es))
			ev |= POLLPRI;
		if (ev == 0)
			continue;
		strm[n] = maybe_stream(fd);
		if (strm[n]) {
			has = true;
			/* writable: a write() would not block -- band 0's
			 * room (POLLWRBAND says only that band 1 has some),
			 * or a hangup or error, which fail it at once */
			ev &= ~POLLWRBAND;
		}
		pf[n].fd = fd;
		pf[n].events = ev;
		pf[n].revents = 0;
		n++;
	}
	if (!has)
		return 0;
	*handled = true;
	r = poll_streams(pf, n, ms, mask);
	if (r < 0)
		return r;
	for (nfds_t i = 0; i < n; i++)
		if (pf[i].revents & POLLNVAL)
			return sth_err(EBADF);
	if (rs)
		FD_ZERO(rs);
	if (ws)
		FD_ZERO(ws);
	if (es)
		FD_ZERO(es);
	for (nfds_t i = 0; i < n; i++) {
		short rev = pf[i].revents, ev = pf[i].events;
		if (rs && (ev & POLLIN) &&
		    (rev & (POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR))) {
			FD_SET(pf[i].fd, rs);
			count++;
		}
		if (ws && (ev & POLLOUT) &&
		    (rev & (POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR |
			    (strm[i] ? POLLHUP : 0)))) {
			FD_SET(pf[i].fd, ws);
			count++;
		}
		if (es && (ev & POLLPRI) && (rev & POLLPRI)) {
			FD_SET(pf[i].fd, es);
			count++;
		}
	}
	return count;
}

int select(int nfds, fd_set *rs, fd_set *ws, fd_set *es, struct timeval *tv)
{
	bool handled;
	long ms, start;
	int r;

	if (real_poll == NULL)
		sth_posix_init();
	if (tv != NULL && (tv->tv_sec < 0 || tv->tv_usec < 0))
		return sth_err(EINVAL);
	ms = tv == NULL ? -1 : tv->tv_sec * 1000L + (tv->tv_usec + 999) / 1000;
	start = sth_now_ms();
	r = select_common(nfds, rs, ws, es, ms, NULL, &handled);
	if (!handled) {
		if (real_select != NULL)
			return real_select(nfds, rs, ws, es, tv);
		return (int)syscall(SYS_select, nfds, rs, ws, es, tv);
	}
	if (tv != NULL) {
		/* Linux reports the time left */
		long left = ms - (sth_now_ms() - start);
		if (left < 0)
			left = 0;
		tv->tv_sec = left / 1000;
		tv->tv_usec = (left % 1000) * 1000;
	}
	return r;
}

int pselect(int nfds, fd_set *rs, fd_set *ws, fd_set *es,
	    const struct timespec *ts, const sigset_t *mask)
{
	bool handled;
	sigset_t cur;
	long ms;
	int r;

	if (real_poll == NULL)
		sth_posix_init();
	if (ts != NULL && (ts->tv_sec < 0 || ts->tv_nsec < 0 ||
			   ts->tv_nsec >= 1000000000L))
		return sth_err(EINVAL);
	ms = ts == NULL ? -1 : ts->tv_sec * 1000L + (ts->tv_nsec + 999999) / 1000000;
	if (mask == NULL) {
		sigprocmask(SIG_BLOCK, NULL, &cur);
		mask = &cur;
	}
	r = select_common(nfds, rs, ws, es, ms, mask, &handled);
	if (!handled) {
		if (real_pselect != NULL)
			return real_pselect(nfds, rs, ws, es, ts, mask);
		struct { const sigset_t *ss; size_t len; } data = { mask, _NSIG / 8 };
		return (int)syscall(SYS_pselect6, nfds, rs, ws, es, ts, &data);
	}
	return r;
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	if (real_epoll_ctl == NULL)
		sth_posix_init();
	if ((op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) && maybe_stream(fd)) {
		struct strthread *t = str_enter();
		struct sth_file *f = sth_lookup(fd);
		struct sthead *sh = f ? f->f_sh : NULL;
		if (sh)
			sth_hold(sh);
		str_exit(t);
		if (sh) {
			int e = errno;	/* (kept: epoll_ctl's own) */

			/* from now on the kernel always sees its state */
			sth_mirror_arm(sh, true);
			sth_kevwatch(sh);
			sth_rele(sh);
			errno = e;
		}
	}
	return real_epoll_ctl(epfd, op, fd, ev);
}
