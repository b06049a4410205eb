/*
 * sth.h -- helpers for the stream head tests (test_sth_*.c): checks of a
 * call's result and errno, opening the library's drivers, sending a
 * message up from testmod (TM_SENDUP), and bounded waits on real state.
 */
#ifndef STREAMS_TEST_STH_H
#define STREAMS_TEST_STH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stropts.h>
#include <sys/stream.h>
#include <sys/strexec.h>
#include <sys/testmod.h>

#include "t.h"
#include "harness.h"


/* call must fail with errno e */
#define CHECK_ERR(call, e) do {						\
	long long _r;							\
	int _e, _w = (e);						\
	errno = 0;							\
	_r = (long long)(call);						\
	_e = errno;							\
	t_checked++;							\
	if (_r != -1 || _e != _w) {					\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s: got %lld errno %d (%s),"	\
			" want -1 errno %d (%s)\n", __FILE__, __LINE__,	\
			#call, _r, _e, strerror(_e), _w, strerror(_w));	\
	}								\
} while (0)

/* call must return v */
#define CHECK_RET(call, v) do {						\
	long long _r, _w = (long long)(v);				\
	int _e;								\
	errno = 0;							\
	_r = (long long)(call);						\
	_e = errno;							\
	t_checked++;							\
	if (_r != _w) {							\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s: got %lld (errno %d %s),"	\
			" want %lld\n", __FILE__, __LINE__, #call, _r, _e,	\
			strerror(_e), _w);				\
	}								\
} while (0)

/* two memory areas equal */
#define CHECK_MEM(a, b, n) do {						\
	t_checked++;							\
	if (memcmp((a), (b), (n)) != 0) {				\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: memcmp(%s, %s, %s)\n",	\
			__FILE__, __LINE__, #a, #b, #n);		\
	}								\
} while (0)

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* CPU seconds the process has used (user and system): a wait that
 * spins shows here */
static inline double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* getmsg of one message into data (its length to *dlen when not NULL),
 * the control part discarded: getmsg's result. */
static inline int getmsg_data(int fd, char *data, int max, int *dlen)
{
	struct strbuf c, d;
	char cb[256];
	int flags = 0, r;

	c.maxlen = sizeof(cb);
	c.buf = cb;
	d.maxlen = max;
	d.buf = data;
	r = getmsg(fd, &c, &d, &flags);
	if (dlen != NULL)
		*dlen = d.len;
	return r;
}

static inline void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static inline pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A new stream of the echo driver (a clone open); REQUIREd. */
static inline int open_echo(int oflag)
{
	int fd = open("/dev/streams/clone/echo", O_RDWR | oflag);

	REQUIRE(fd >= 0);
	return fd;
}

/* An echo stream with testmod pushed. */
static inline int open_tm(int oflag)
{
	int fd = open_echo(oflag);

	REQUIRE(ioctl(fd, I_PUSH, "testmod") == 0);
	return fd;
}

/* fork() with stdio flushed first (nothing printed twice). */
static inline pid_t fork_flushed(void)
{
	fflush(stdout);
	fflush(stderr);
	return fork();
}

/* The exit status of child pid: 100 if a signal killed it, -1 if it is
 * not our child. */
static inline int wait_child(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFSIGNALED(st))
		fprintf(stderr, "child killed by signal %d\n", WTERMSIG(st));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

/* A STREAMS pipe; REQUIREd. */
static inline void open_pipe(int fds[2])
{
	REQUIRE(s_pipe(fds) == 0);
	REQUIRE(fds[0] >= 0 && fds[1] >= 0 && fds[0] != fds[1]);
}

/* A pipe, then a child holding its end 1 (end 0 closed there): the
 * child's pid, 0 in the child. */
static inline pid_t fork_with_pipe(int fds[2])
{
	pid_t pid;

	open_pipe(fds);
	pid = fork_flushed();
	REQUIRE(pid >= 0);
	if (pid == 0)
		close(fds[0]);
	return pid;
}

static inline int set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* Write 1 KiB messages on fd until flow control refuses one (EAGAIN),
 * then leave fd blocking: a writer on it now sleeps. */
static inline void fill_to_full(int fd)
{
	static const char blk[1024];

	CHECK_RET(set_nonblock(fd, true), 0);
	while (write(fd, blk, sizeof(blk)) == (ssize_t)sizeof(blk))
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(set_nonblock(fd, false), 0);
}

/* I_STR with the data in buf (len bytes; the reply overwrites it).
 * Returns ioctl's result; *outlen gets ic_len back. */
static inline int do_str(int fd, int cmd, void *buf, int len, int timeout,
			 int *outlen)
{
	struct strioctl si = { cmd, timeout, len, buf };
	int r = ioctl(fd, I_STR, &si);

	if (outlen != NULL)
		*outlen = si.ic_len;
	return r;
}

/* testmod TM_SENDUP (or cmd TM_SENDUP_KEEP: a dupmsg of it, testmod
 * keeping the original): a message of type with ctllen bytes of ctl in
 * the first block and, if datlen >= 0, datlen bytes of dat in a second. */
static inline int sendup_as(int fd, int cmd, int type, int band, int flag,
			    const void *ctl, int ctllen, const void *dat,
			    int datlen)
{
	struct tm_sendup su;

	memset(&su, 0, sizeof(su));
	su.type = type;
	su.band = band;
	su.flag = flag;
	su.ctllen = ctllen;
	su.datlen = datlen;
	if (ctllen > 0)
		memcpy(su.data, ctl, (size_t)ctllen);
	if (datlen > 0)
		memcpy(su.data + ctllen, dat, (size_t)datlen);
	return do_str(fd, cmd, &su, (int)sizeof(su), 0, NULL);
}

static inline int sendup(int fd, int type, int band, int flag,
			 const void *ctl, int ctllen, const void *dat,
			 int datlen)
{
	return sendup_as(fd, TM_SENDUP, type, band, flag, ctl, ctllen, dat,
			 datlen);
}

/* M_DATA up from testmod */
static inline int sendup_data(int fd, const char *s, int band, int flag)
{
	return sendup(fd, M_DATA, band, flag, s, (int)strlen(s), NULL, -1);
}

/* One or two byte M_xxx with the bytes given (M_ERROR, M_SIG, ...). */
static inline int sendup_bytes(int fd, int type, int n, int b0, int b1)
{
	unsigned char b[2] = { (unsigned char)b0, (unsigned char)b1 };

	return sendup(fd, type, 0, 0, b, n, NULL, -1);
}

/* M_SETOPTS up from testmod */
static inline int sendup_setopts(int fd, const struct stroptions *so)
{
	return sendup(fd, M_SETOPTS, 0, 0, so, (int)sizeof(*so), NULL, -1);
}

/* Give the head read queue of rfd the water marks hi and lo (M_SETOPTS
 * SO_HIWAT|SO_LOWAT from testmod, pushed for it): the tests of flow
 * control do not depend on the library's defaults. */
static inline int set_marks(int rfd, unsigned long hi, unsigned long lo)
{
	struct stroptions so;

	if (ioctl(rfd, I_FIND, "testmod") != 1 &&
	    ioctl(rfd, I_PUSH, "testmod") != 0)
		return -1;
	memset(&so, 0, sizeof(so));
	so.so_flags = SO_HIWAT | SO_LOWAT;
	so.so_hiwat = hi;
	so.so_lowat = lo;
	return sendup_setopts(rfd, &so);
}

/* A testmod M_PCPROTO of ctl up fd's stream, then a getmsg(RS_HIPRI)
 * that must return it (the head takes it: none is held there). */
static inline void hipri_roundtrip(int fd, const char *ctl)
{
	char cb[64];
	struct strbuf c = { sizeof(cb), 0, cb };
	int fl = RS_HIPRI, n = (int)strlen(ctl);

	CHECK_RET(sendup(fd, M_PCPROTO, 0, 0, ctl, n, NULL, -1), 0);
	CHECK_RET(getmsg(fd, &c, NULL, &fl), 0);
	CHECK_EQ(c.len, n);
	CHECK_MEM(cb, ctl, (size_t)n);
}

/* I_NREAD: number of messages; *bytes the size of the first. */
static inline int nread(int fd, int *bytes)
{
	int b = -1, r = ioctl(fd, I_NREAD, &b);

	if (bytes != NULL)
		*bytes = b;
	return r;
}

/* Number of names I_LIST shows (modules and driver). */
static inline int nlist(int fd)
{
	return ioctl(fd, I_LIST, NULL);
}

/* Is thread tid asleep in a system call (state S)?  Waits up to 2 s;
 * used only to make a "blocked" test likely to really block. */
static inline bool wait_blocked(pid_t tid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	for (int i = 0; i < 2000; i++) {
		int fd = open(path, O_RDONLY);
		ssize_t n;

		if (fd < 0)
			return false;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			char *p = strrchr(buf, ')');
			if (p != NULL && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D'))
				return true;
		}
		pause_ms(1);
	}
	return false;
}

/* A thread making one read (th_reader) or write of len zero bytes
 * (th_writer) on fd: its tid published first, its result (atomic) and
 * errno kept; th_started waits until it sleeps in the call. */
struct th_call {
	int fd;
	size_t len;		/* at most TH_CALL_MAX */
	pid_t tid;		/* atomic */
	ssize_t ret;		/* atomic */
	int err;
};
#define TH_CALL_MAX	1024

static inline void *th_reader(void *arg)
{
	struct th_call *t = arg;
	char buf[TH_CALL_MAX];

	__atomic_store_n(&t->tid, my_tid(), __ATOMIC_RELEASE);
	ssize_t r = read(t->fd, buf, t->len);
	t->err = errno;
	__atomic_store_n(&t->ret, r, __ATOMIC_RELEASE);
	return NULL;
}

static inline void *th_writer(void *arg)
{
	struct th_call *t = arg;
	char buf[TH_CALL_MAX] = { 0 };

	__atomic_store_n(&t->tid, my_tid(), __ATOMIC_RELEASE);
	ssize_t r = write(t->fd, buf, t->len);
	t->err = errno;
	__atomic_store_n(&t->ret, r, __ATOMIC_RELEASE);
	return NULL;
}

static inline void th_started(struct th_call *t)
{
	pid_t tid;

	while ((tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE)) == 0)
		pause_ms(1);
	CHECK(wait_blocked(tid));
}

/* A thread that sends a signal to another every few ms until stopped:
 * interrupts a blocking call however the two threads are scheduled. */
struct kicker {
	pthread_t target;
	int sig;
	int stop;		/* atomic */
	int sent;		/* atomic */
	pthread_t self;
};

__attribute__((unused)) static void *kicker_main(void *arg)
{
	struct kicker *k = arg;

	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		pause_ms(5);
		if (__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE))
			break;
		pthread_kill(k->target, k->sig);
		__atomic_add_fetch(&k->sent, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static inline void kicker_start(struct kicker *k, int sig)
{
	memset(k, 0, sizeof(*k));
	k->target = pthread_self();
	k->sig = sig;
	REQUIRE(pthread_create(&k->self, NULL, kicker_main, k) == 0);
}

static inline void kicker_stop(struct kicker *k)
{
	__atomic_store_n(&k->stop, 1, __ATOMIC_RELEASE);
	pthread_join(k->self, NULL);
}

/* Wait up to ms for the kicker to have sent n signals. */
static inline void kicker_wait(struct kicker *k, int n, int ms)
{
	long end = now_ms() + ms;

	while (__atomic_load_n(&k->sent, __ATOMIC_RELAXED) < n &&
	       now_ms() < end)
		pause_ms(1);
}

/* Handler counting signals, installed without SA_RESTART. */
__attribute__((unused)) static volatile sig_atomic_t sigcount[65];

__attribute__((unused)) static void count_sig(int sig)
{
	if (sig > 0 && sig < 65)
		sigcount[sig]++;
}

static inline void catch_sig(int sig, bool restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count_sig;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = restart ? SA_RESTART : 0;
	REQUIRE(sigaction(sig, &sa, NULL) == 0);
}

/* Wait up to ms for sigcount[sig] to reach n (delivery may lag). */
static inline bool wait_sig(int sig, int n, int ms)
{
	long end = now_ms() + ms;

	while (sigcount[sig] < n) {
		if (now_ms() > end)
			return false;
		pause_ms(1);
	}
	return true;
}

/*
 * Run fn in a child process, so that a crash (a bad pointer the library
 * dereferences) fails one check instead of ending the program.  Call it
 * before the program opens any stream or starts a thread: the child is
 * then a copy of a single-threaded process.  fn returns its failures.
 */
#define CHECK_ISOLATED(fn) check_isolated(#fn, fn, 10, __FILE__, __LINE__)
/* the same, killed (SIGALRM) if it runs longer than secs: a hang */
#define CHECK_ISOLATED_T(fn, secs) \
	check_isolated(#fn, fn, secs, __FILE__, __LINE__)

static inline void check_isolated(const char *name, int (*fn)(void),
				  int secs, const char *file, int line)
{
	int st = 0;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int before = t_failed;
		alarm((unsigned)secs);
		int bad = fn() + (t_failed - before);
		fflush(stdout);
		fflush(stderr);
		_exit(bad ? 1 : 0);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	t_checked++;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		t_failed++;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
			fprintf(stderr, "%s:%d: FAIL: %s: still running after"
				" %d s (a hang)\n", file, line, name, secs);
		else if (WIFSIGNALED(st))
			fprintf(stderr, "%s:%d: FAIL: %s: killed by signal %d"
				" (%s)\n", file, line, name, WTERMSIG(st),
				strsignal(WTERMSIG(st)));
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
			fprintf(stderr, "%s:%d: FAIL: %s: checks failed in the"
				" child\n", file, line, name);
		else
			fprintf(stderr, "%s:%d: FAIL: %s: the child exited with"
				" status %d (a sanitizer's report above?)\n",
				file, line, name,
				WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
}

/* An address where nothing can be read or written: a page reserved
 * with PROT_NONE (kept, so that no later mapping takes its place). */
static inline void *bad_address(void)
{
	static void *page;

	if (page == NULL) {
		page = mmap(NULL, 4096, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		REQUIRE(page != MAP_FAILED);
	}
	return page;
}

/* A descriptor number that is not open now (use it at once). */
static inline int bad_fd(void)
{
	int fd = dup(2);

	REQUIRE(fd >= 0);
	close(fd);
	return fd;
}

static inline long streams_in_use(void)
{
	struct strstats st;

	streams_quiesce(2000);
	streams_stats(&st);
	return (long)st.stream_inuse;
}

#endif
