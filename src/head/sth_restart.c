/*
 * sth_restart.c -- SA_RESTART for the waits the kernel will not restart.
 *
 * A reader of a stream over a kernel socket (ke_direct: /dev/udp,
 * /dev/tcp, /dev/inet/udp and the others) sleeps in ppoll() on the
 * socket and the head's eventfd (read_wait_direct in sth_read.c).  Linux never restarts ppoll
 * after a signal handler ran, SA_RESTART or not: it fails with EINTR.
 * A futex sleep, what every other stream's reader uses, is restarted as
 * the handler asks.  So that a read on a socket-backed stream behaves the
 * same, signals whose handlers have SA_RESTART are kept out of the wait:
 *
 *   - sth_restart_prepare() gives the mask for ppoll: the thread's mask
 *     plus the signals caught with SA_RESTART that the thread does not
 *     block, and a signalfd on those signals for the poll set.
 *   - Such a signal that arrives makes the signalfd readable: ppoll
 *     returns it as an event (not EINTR), its return puts the thread's
 *     mask back, and the kernel runs the handler on the way out (the
 *     signal is never read from the signalfd).  The reader sees no data
 *     and waits again, as a restarted call would.
 *   - Signals caught without SA_RESTART stay open to the wait: EINTR.
 *
 * Which signals have SA_RESTART handlers: asked of the kernel (one
 * sigaction() query per signal) when the set may have changed, that is
 * after a call of sigaction(), signal(), sigset(), bsd_signal(),
 * sysv_signal() or siginterrupt() -- this library defines them, calls
 * libc's and counts a generation.  Handlers installed with the raw
 * system call are not seen until one of those is next called.  While
 * no handler has SA_RESTART (the usual program) nothing is added to a
 * wait.
 *
 * The signalfd is one per thread, kept between waits (closed by the
 * thread's key destructor) and re-armed only when its signal set must
 * change.
 *
 * A futex wait with a deadline (an ioctl waiting for its answer) is not
 * restarted either: sth_sleep asks sth_restart_any() and, while some
 * handler has SA_RESTART, waits without the deadline and has a callout
 * wake it there (sth_wait.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sthead.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);
typedef int (*siginterrupt_fn)(int, int);

static sigaction_fn real_sigaction;
static signal_fn real_signal, real_sysv_signal, real_bsd_signal, real_sigset;
static siginterrupt_fn real_siginterrupt;

/* bumped after every change of a handler (any thread, also a handler) */
static unsigned sig_gen = 1;
/* the set as of sig_seen (sth_restart_lock, taken around fork() with
 * the head's other short locks: sth_fork.c); read racily by waiters, who
 * only compare sig_seen with sig_gen before trusting it */
pthread_mutex_t sth_restart_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t sig_restart;	/* bit s-1: signal s restarts */
static unsigned sig_seen;	/* sig_gen when it was computed */

static pthread_key_t sig_key;
static pthread_once_t sig_once = PTHREAD_ONCE_INIT;
static __thread int sig_fd = -1;	/* this thread's signalfd */
static __thread uint64_t sig_fd_set;	/* what it watches */

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* resolved before main (dlsym is not safe in a signal handler, and a
 * handler may install another); and at the first call if that comes
 * first, from another library's constructor */
__attribute__((constructor)) static void sig_resolve(void)
{
	real_sigaction = (sigaction_fn)next("sigaction");
	real_signal = (signal_fn)next("signal");
	real_sysv_signal = (signal_fn)next("sysv_signal");
	real_bsd_signal = (signal_fn)next("bsd_signal");
	real_sigset = (signal_fn)next("sigset");
	real_siginterrupt = (siginterrupt_fn)next("siginterrupt");
}

static inline void changed(void)
{
	__atomic_add_fetch(&sig_gen, 1, __ATOMIC_ACQ_REL);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r;

	if (real_sigaction == NULL)
		sig_resolve();
	if (real_sigaction == NULL) {
		errno = ENOSYS;
		return -1;
	}
	r = real_sigaction(sig, act, old);
	if (act != NULL)
		changed();
	return r;
}

static sighandler_t call_signal(signal_fn *fnp, int sig, sighandler_t h)
{
	sighandler_t r;
	signal_fn fn;

	if (*fnp == NULL)
		sig_resolve();
	if ((fn = *fnp) == NULL) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	r = fn(sig, h);
	changed();
	return r;
}

sighandler_t signal(int sig, sighandler_t h)
{
	return call_signal(&real_signal, sig, h);
}

sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return call_signal(&real_sysv_signal, sig, h);
}

sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return call_signal(&real_bsd_signal, sig, h);
}

sighandler_t sigset(int sig, sighandler_t h)
{
	return call_signal(&real_sigset, sig, h);
}

int siginterrupt(int sig, int flag)
{
	int r;

	if (real_siginterrupt == NULL)
		sig_resolve();
	if (real_siginterrupt == NULL) {
		errno = ENOSYS;
		return -1;
	}
	r = real_siginterrupt(sig, flag);
	changed();
	return r;
}

/* The signals caught with SA_RESTART now (as bits), asked of the kernel
 * when a handler changed since the last time. */
static uint64_t restart_set(void)
{
	unsigned g = __atomic_load_n(&sig_gen, __ATOMIC_ACQUIRE);
	uint64_t set = 0;

	if (__atomic_load_n(&sig_seen, __ATOMIC_ACQUIRE) == g)
		return __atomic_load_n(&sig_restart, __ATOMIC_ACQUIRE);
	if (real_sigaction == NULL)
		return 0;
	pthread_mutex_lock(&sth_restart_lock);
	for (int s = 1; s < NSIG && s <= 64; s++) {
		struct sigaction sa;

		if (s == SIGKILL || s == SIGSTOP)
			continue;
		if (real_sigaction(s, NULL, &sa) != 0)
			continue;
		if ((sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction == NULL
		    : (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN))
			continue;
		if (sa.sa_flags & SA_RESTART)
			set |= 1ull << (s - 1);
	}
	/* a change during the queries bumped sig_gen past g: the next
	 * look asks again */
	__atomic_store_n(&sig_restart, set, __ATOMIC_RELEASE);
	__atomic_store_n(&sig_seen, g, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sth_restart_lock);
	return set;
}

static void sig_fd_close(void *arg)
{
	(void)arg;
	if (sig_fd >= 0) {
		sth_real.close(sig_fd);
		sig_fd = -1;
	}
}

static void sig_key_init(void)
{
	(void)pthread_key_create(&sig_key, sig_fd_close);
}

static void bits_to_set(uint64_t bits, sigset_t *s)
{
	sigemptyset(s);
	for (int i = 0; i < 64; i++)
		if (bits & (1ull << i))
			sigaddset(s, i + 1);
}

bool sth_restart_any(void)
{
	return restart_set() != 0;
}

int sth_restart_prepare(sigset_t *mask)
{
	uint64_t want = restart_set(), cur_bits = 0;
	sigset_t cur, fdset;

	if (want == 0)
		return -1;
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0)
		return -1;
	for (int s = 1; s <= 64 && s < NSIG; s++)
		if (sigismember(&cur, s) == 1)
			cur_bits |= 1ull << (s - 1);
	/* a blocked signal stays pending: watching it would wake the wait
	 * at once, for ever */
	want &= ~cur_bits;
	if (want == 0)
		return -1;
	if (sig_fd < 0 || sig_fd_set != want) {
		int fd;

		bits_to_set(want, &fdset);
		fd = signalfd(sig_fd, &fdset, SFD_NONBLOCK | SFD_CLOEXEC);
		if (fd < 0)
			return -1;
		if (sig_fd < 0) {
			pthread_once(&sig_once, sig_key_init);
			/* (any non-NULL value: the destructor then runs) */
			(void)pthread_setspecific(sig_key, &sig_fd);
		}
		sig_fd = fd;
		sig_fd_set = want;
	}
	*mask = cur;
	for (int s = 1; s <= 64 && s < NSIG; s++)
		if (want & (1ull << (s - 1)))
			sigaddset(mask, s);
	return sig_fd;
}
