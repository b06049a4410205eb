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
 * signal is handled at the instant it ends the wait.  The cost is two
 * sigprocmask calls per wait (and the sigaction look only when a signal
 * came).
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
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sthead.h"

/* A thread's signalfd, on sfd_list (sth_restart_lock). */
struct sfd {
	struct sfd *next;
	int fd;
	sigset_t set;		/* what it watches */
};

pthread_mutex_t sth_restart_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sfd *sfd_list;		/* sth_restart_lock */
static pthread_key_t sfd_key;
static pthread_once_t sfd_once = PTHREAD_ONCE_INIT;
static __thread struct sfd *my_sfd;	/* this thread's */

static void sfd_drop(void *arg)
{
	struct sfd *s = arg, **pp;

	pthread_mutex_lock(&sth_restart_lock);
	for (pp = &sfd_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	pthread_mutex_unlock(&sth_restart_lock);
	sth_real.close(s->fd);
	free(s);
	if (my_sfd == s)
		my_sfd = NULL;
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

int sth_restart_begin(struct sth_rwait *w)
{
	sigset_t all, watch;
	struct sfd *s = my_sfd;

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
		s->fd = signalfd(-1, &watch, SFD_NONBLOCK | SFD_CLOEXEC);
		if (s->fd < 0) {
			free(s);
			goto fail;
		}
		s->set = watch;
		pthread_once(&sfd_once, sfd_key_init);
		pthread_mutex_lock(&sth_restart_lock);
		s->next = sfd_list;
		sfd_list = s;
		pthread_mutex_unlock(&sth_restart_lock);
		my_sfd = s;
		(void)pthread_setspecific(sfd_key, s);
	}
	w->watch = watch;
	return s->fd;
fail:
	pthread_sigmask(SIG_SETMASK, &w->old, NULL);
	return -1;
}

bool sth_restart_end(struct sth_rwait *w, bool woke)
{
	bool intr = false;
	sigset_t pend;

	if (woke && sigpending(&pend) == 0) {
		for (int i = 1; i < NSIG; i++) {
			struct sigaction sa;

			if (sigismember(&pend, i) != 1 ||
			    sigismember(&w->watch, i) != 1 ||
			    sigaction(i, NULL, &sa) != 0)
				continue;
			if ((sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction != NULL
			    : (sa.sa_handler != SIG_DFL &&
			       sa.sa_handler != SIG_IGN))
				intr |= !(sa.sa_flags & SA_RESTART);
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
		sth_real.close(s->fd);
		free(s);
	}
	sfd_list = keep;
}
