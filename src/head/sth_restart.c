/*
 * sth_restart.c -- SA_RESTART for the ppoll wait the kernel will not
 * restart.
 *
 * A reader of a stream over a kernel socket (ke_direct: /dev/udp,
 * /dev/tcp, /dev/inet/udp and the others) sleeps in ppoll() on the
 * socket and the head's eventfd (read_wait_direct in sth_read.c).  Linux
 * never restarts ppoll after a signal handler ran, SA_RESTART or not: it
 * fails with EINTR.  A futex sleep, what every other stream's reader
 * uses, is restarted as the handler asks.  So that a read on a
 * socket-backed stream behaves the same, the wait decides itself:
 *
 *   - sth_restart_begin() blocks every signal the thread does not block
 *     already (not the ones a fault raises) and gives a signalfd watching
 *     them, for the poll set: a signal that comes during the wait makes
 *     it readable instead of interrupting the wait.
 *   - sth_restart_end() looks, while they are still blocked, at which of
 *     them are pending and how each is handled now (sigaction): a handler
 *     without SA_RESTART means EINTR; handlers with it, ignored signals
 *     and default actions mean wait again.  Then it puts the thread's
 *     mask back, and the kernel runs the handlers (the signals are never
 *     read from the signalfd).
 *
 * Nothing is cached about handlers: what decides is how each pending
 * signal is handled at the instant it ends the wait.  The cost is three
 * system calls per wait (the mask, the look, the mask).  So a process
 * that catches no signal a wait would keep out (the kernel's SigCgt, read
 * from /proc/self/status at most every 100 ms, less libc's own 32 and 33
 * and the fault signals: the library's copy guard catches SIGSEGV and
 * SIGBUS in every process) waits as before: ppoll alone, where no
 * handler can run.  An EINTR there (libc's setuid signal, restarting; or
 * a handler installed since the last read) reads SigCgt again and asks
 * how each caught signal is handled: EINTR only if one of them has a
 * handler without SA_RESTART (which signal it was, the wait cannot
 * tell).
 *
 * sth_restart_nap() is a short sleep (a writer waiting for memory) that
 * honours SA_RESTART the same way: a timed ppoll on the signalfd alone.
 *
 * The signalfd is one per thread, kept between waits and re-armed only
 * when its set must change (the thread blocked other signals).  Every
 * one is on a list, so that a child after fork() closes the ones of the
 * threads it does not have; a thread's own is closed when it exits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sthead.h"

/* A thread's signalfd, on sfd_list (sth_restart_lock). */
struct sfd {
	struct sfd *next;
	int fd;
	sigset_t set;		/* what it watches */
	int idle;		/* wake-ups in a row that found nothing */
};

pthread_mutex_t sth_restart_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sfd *sfd_list;		/* sth_restart_lock */
static pthread_key_t sfd_key;
static pthread_once_t sfd_once = PTHREAD_ONCE_INIT;
static __thread struct sfd *my_sfd;	/* this thread's */

/* Is fd a signalfd?  (All of them share one anonymous inode; another
 * of the application's at the same number cannot be told from ours.)
 * Without /proc, cannot tell: taken as one. */
static bool is_signalfd(int fd)
{
	char path[40] = "/proc/self/fd/", link[40], d[12];
	size_t at = strlen(path), nd = 0;
	ssize_t k;

	/* (no snprintf: a fork's child calls this) */
	if (fd < 0)
		return false;
	do
		d[nd++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	while (nd > 0)
		path[at++] = d[--nd];
	path[at] = '\0';
	k = readlink(path, link, sizeof(link) - 1);
	if (k < 0)
		return errno != ENOENT ||
		       readlink("/proc/self/exe", link, sizeof(link)) < 0;
	link[k] = '\0';
	return strcmp(link, "anon_inode:[signalfd]") == 0;
}

/* Off the list (sth_restart_lock held); closed unless the number is no
 * longer ours.  Under the lock, so that a fork never sees one that is
 * open and not listed. */
static void sfd_unlist(struct sfd *s, bool close_it)
{
	struct sfd **pp;

	for (pp = &sfd_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	if (close_it && is_signalfd(s->fd))	/* (not a reused number) */
		sth_real.close(s->fd);
}

static void sfd_drop(void *arg)
{
	struct sfd *s = arg;

	pthread_mutex_lock(&sth_restart_lock);
	sfd_unlist(s, true);
	pthread_mutex_unlock(&sth_restart_lock);
	if (my_sfd == s)
		my_sfd = NULL;
	free(s);
}

/* The number is no longer our signalfd (the application closed it, and
 * may have reused it): forget it, closing nothing; the next wait makes
 * another. */
static void sfd_forget(void)
{
	struct sfd *s = my_sfd;

	if (s == NULL)
		return;
	pthread_mutex_lock(&sth_restart_lock);
	sfd_unlist(s, false);
	pthread_mutex_unlock(&sth_restart_lock);
	(void)pthread_setspecific(sfd_key, NULL);
	my_sfd = NULL;
	free(s);
}

static void sfd_key_init(void)
{
	(void)pthread_key_create(&sfd_key, sfd_drop);
}

/* The signals a wait keeps out: all but those it cannot block (SIGKILL,
 * SIGSTOP), those a fault raises, and libc's own (32, 33). */
static void blockable(sigset_t *s)
{
	sigfillset(s);
	sigdelset(s, SIGKILL);
	sigdelset(s, SIGSTOP);
	sigdelset(s, SIGSEGV);
	sigdelset(s, SIGBUS);
	sigdelset(s, SIGFPE);
	sigdelset(s, SIGILL);
	sigdelset(s, SIGTRAP);
	sigdelset(s, SIGSYS);
	for (int i = 32; i < SIGRTMIN; i++)
		sigdelset(s, i);
}

static bool same_set(const sigset_t *a, const sigset_t *b)
{
	for (int i = 1; i < NSIG; i++)
		if (sigismember(a, i) != sigismember(b, i))
			return false;
	return true;
}

/* The signals the process catches (bit s-1: signal s) that a wait keeps
 * out (blockable); read again when older than 100 ms, or now with
 * fresh. */
#define CAUGHT_TTL_NS	100000000ull

static uint64_t caught_mask, caught_when;	/* atomic */

static uint64_t caught(bool fresh)
{
	uint64_t now = str_now_ns(), m = 0;
	char buf[4096], *p;
	sigset_t bl;
	ssize_t k;
	int fd;

	if (!fresh && now - __atomic_load_n(&caught_when, __ATOMIC_ACQUIRE) <
		      CAUGHT_TTL_NS)
		return __atomic_load_n(&caught_mask, __ATOMIC_RELAXED);
	fd = sth_real.open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ~0ull;		/* cannot tell: as if caught */
	k = sth_real.read(fd, buf, sizeof(buf) - 1);
	sth_real.close(fd);
	if (k <= 0)
		return ~0ull;
	buf[k] = '\0';
	if ((p = strstr(buf, "SigCgt:")) == NULL)
		return ~0ull;
	m = strtoull(p + 7, NULL, 16);
	/* only what a wait would keep out: not libc's own, nor the
	 * signals a fault raises (the library's own copy guard catches
	 * SIGSEGV and SIGBUS in every process; no fault happens inside
	 * ppoll) */
	blockable(&bl);
	for (int i = 1; i <= 64; i++)
		if (i >= NSIG || sigismember(&bl, i) != 1)
			m &= ~(1ull << (i - 1));
	__atomic_store_n(&caught_mask, m, __ATOMIC_RELAXED);
	__atomic_store_n(&caught_when, now, __ATOMIC_RELEASE);
	return m;
}

int sth_restart_begin(struct sth_rwait *w)
{
	sigset_t all, watch;
	struct sfd *s = my_sfd;

	if (caught(false) == 0)
		return -1;		/* no handler can run */
	blockable(&all);
	if (pthread_sigmask(SIG_BLOCK, &all, &w->old) != 0)
		return -1;
	/* what the thread blocks already stays pending: watching it would
	 * wake the wait at once, for ever */
	sigemptyset(&watch);
	for (int i = 1; i < NSIG; i++)
		if (sigismember(&all, i) == 1 && sigismember(&w->old, i) != 1)
			sigaddset(&watch, i);
	if (s != NULL && !same_set(&s->set, &watch)) {
		if (signalfd(s->fd, &watch, 0) < 0)
			goto fail;
		s->set = watch;
	}
	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			goto fail;
		pthread_once(&sfd_once, sfd_key_init);
		pthread_mutex_lock(&sth_restart_lock);
		s->fd = signalfd(-1, &watch, SFD_NONBLOCK | SFD_CLOEXEC);
		if (s->fd >= 0) {
			s->next = sfd_list;
			sfd_list = s;
		}
		pthread_mutex_unlock(&sth_restart_lock);
		if (s->fd < 0) {
			free(s);
			goto fail;
		}
		s->set = watch;
		my_sfd = s;
		(void)pthread_setspecific(sfd_key, s);
	}
	w->watch = watch;
	return s->fd;
fail:
	pthread_sigmask(SIG_SETMASK, &w->old, NULL);
	return -1;
}

/* How sig is handled now: true for a handler without SA_RESTART. */
static bool interrupts(int sig)
{
	struct sigaction sa;

	if (sigaction(sig, NULL, &sa) != 0)
		return false;
	if ((sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction == NULL
	    : (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN))
		return false;
	return !(sa.sa_flags & SA_RESTART);
}

bool sth_restart_eintr(void)
{
	uint64_t m = caught(true);

	if (m == ~0ull)
		return true;		/* cannot tell */
	for (int sig = 1; sig <= 64 && m != 0; sig++, m >>= 1)
		if ((m & 1) && interrupts(sig))
			return true;
	return false;
}

int sth_restart_nap(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	struct sth_rwait w;
	struct pollfd p;
	int r;

	p.fd = sth_restart_begin(&w);
	if (p.fd < 0) {
		r = (int)syscall(SYS_ppoll, NULL, 0, &ts, NULL, 0);
		return r < 0 && errno == EINTR && sth_restart_eintr() ?
		       EINTR : 0;
	}
	p.events = POLLIN;
	p.revents = 0;
	r = (int)syscall(SYS_ppoll, &p, 1, &ts, NULL, 0);
	return sth_restart_end(&w, r > 0 ? p.revents : 0) ? EINTR : 0;
}

#define END_MAX	64		/* signals taken at one end */

bool sth_restart_end(struct sth_rwait *w, short revents)
{
	static const struct timespec zero = { 0, 0 };
	siginfo_t info[END_MAX];
	bool intr = false;
	int n = 0, sig;
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);

	if (revents & POLLNVAL)
		sfd_forget();		/* closed under us */
	/*
	 * Every signal that came, whether or not it woke the wait (one
	 * that came as ppoll returned for data would otherwise have its
	 * handler run at the restore with the wait going on).  They are
	 * taken off the pending sets -- the thread's and the process's: a
	 * signal sent to the process that this thread would have taken,
	 * had it not blocked it, is this thread's (any thread not blocking
	 * it may get it) -- and sent again to this thread alone, still
	 * blocked, with their siginfo; the restore then delivers them here.
	 */
	while (n < END_MAX &&
	       (sig = sigtimedwait(&w->watch, &info[n], &zero)) > 0) {
		intr |= interrupts(sig);
		n++;
	}
	for (int i = 0; i < n; i++)
		(void)syscall(SYS_rt_tgsigqueueinfo, pid, tid, info[i].si_signo,
			      &info[i]);
	if (my_sfd != NULL) {
		/* woken with nothing to take, twice running: the number may
		 * be another file of the application's now -- or another
		 * thread took a signal sent to the process, which made the
		 * signalfd readable for a moment: still a signalfd, ours */
		if ((revents & POLLIN) && n == 0) {
			if (++my_sfd->idle >= 2) {
				my_sfd->idle = 0;
				if (!is_signalfd(my_sfd->fd))
					sfd_forget();
			}
		} else {
			my_sfd->idle = 0;
		}
	}
	/* the handlers run now */
	pthread_sigmask(SIG_SETMASK, &w->old, NULL);
	return intr;
}

/* In a child just forked: it has only the forking thread; the others'
 * signalfds came with it and nothing would close them. */
void sth_restart_atfork_child(void)
{
	struct sfd *s, *next, *keep = NULL;

	for (s = sfd_list; s != NULL; s = next) {
		next = s->next;
		if (s == my_sfd) {
			s->next = NULL;
			keep = s;
			continue;
		}
		if (is_signalfd(s->fd))		/* (not a reused number) */
			sth_real.close(s->fd);
		free(s);
	}
	sfd_list = keep;
}
