/*
 * sth_sig.c -- SIGPOLL: I_SETSIG registrations and delivery.
 *
 * A process registers the events (S_INPUT, S_RDNORM, ...) it wants a
 * SIGPOLL for; each registration is per process, and since the stream
 * lives in this process, the registered process is this one (or a
 * process given by pid through the executive, for tests).  Events are
 * raised by the head as they happen: a message arriving at the front of
 * the read queue, a high priority message, the stream becoming writable
 * again (S_OUTPUT, S_WRBAND), M_ERROR, M_HANGUP, M_SIG with SIGPOLL
 * (S_MSG).  S_BANDURG with S_RDBAND sends SIGURG instead of SIGPOLL for
 * band messages.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sthead.h"

static void recompute(struct sthead *sh)
{
	int ev = 0;

	for (struct sth_sig *s = sh->sh_sigs; s != NULL; s = s->s_next)
		ev |= s->s_events;
	__atomic_store_n(&sh->sh_sigevents, ev, __ATOMIC_RELEASE);
}

int sth_setsig(struct sthead *sh, int events)
{
	pid_t me = getpid();
	struct sth_sig **pp, *s;

	if (events & ~S_ALL)
		return EINVAL;
	if ((events & S_BANDURG) && !(events & S_RDBAND))
		return EINVAL;
	pthread_mutex_lock(&sh->sh_lock);
	for (pp = &sh->sh_sigs; (s = *pp) != NULL; pp = &s->s_next)
		if (s->s_pid == me)
			break;
	if (events == 0) {
		if (s == NULL) {
			pthread_mutex_unlock(&sh->sh_lock);
			return EINVAL;
		}
		*pp = s->s_next;
		free(s);
	} else if (s != NULL) {
		s->s_events = events;
	} else {
		s = calloc(1, sizeof(*s));
		if (s == NULL) {
			pthread_mutex_unlock(&sh->sh_lock);
			return EAGAIN;
		}
		s->s_pid = me;
		s->s_events = events;
		s->s_next = sh->sh_sigs;
		sh->sh_sigs = s;
	}
	recompute(sh);
	pthread_mutex_unlock(&sh->sh_lock);
	if (events != 0)
		sth_kevwatch(sh);	/* signals need the driver's wake-ups */
	return 0;
}

/* A descriptor of sh was closed by the application: POSIX close()
 * unregisters the calling process for the stream's SIGPOLL events (even
 * if other descriptors of the process still name it).  The lock is only
 * tried, for a while: a signal handler that closes the stream may have
 * interrupted its own thread holding sh_lock (in I_SETSIG, say), which
 * would wait for itself; then the registration stays. */
void sth_sig_forget(struct sthead *sh)
{
	pid_t me = getpid();
	struct sth_sig **pp, *s;
	int tries = 0;

	if (__atomic_load_n(&sh->sh_sigevents, __ATOMIC_ACQUIRE) == 0)
		return;
	while (pthread_mutex_trylock(&sh->sh_lock) != 0) {
		if (++tries > 2000)
			return;
		sched_yield();
	}
	for (pp = &sh->sh_sigs; (s = *pp) != NULL; pp = &s->s_next)
		if (s->s_pid == me) {
			*pp = s->s_next;
			free(s);
			recompute(sh);
			break;
		}
	pthread_mutex_unlock(&sh->sh_lock);
}

/* In a child just forked (one thread): its copy of a stream is its own,
 * and what arrives there is for it, so the registrations it inherited
 * (its parent's, for the parent's copy) go; it makes its own with
 * I_SETSIG.  (A parent's registration left here made data on the child's
 * copy signal the parent, which SIGPOLL's default action kills.) */
void sth_sig_atfork_child(struct sthead *sh)
{
	struct sth_sig *s = sh->sh_sigs, *next;

	sh->sh_sigs = NULL;
	for (; s != NULL; s = next) {
		next = s->s_next;
		free(s);
	}
	__atomic_store_n(&sh->sh_sigevents, 0, __ATOMIC_RELEASE);
}

int sth_getsig(struct sthead *sh, int *events)
{
	pid_t me = getpid();
	int err = EINVAL;

	pthread_mutex_lock(&sh->sh_lock);
	for (struct sth_sig *s = sh->sh_sigs; s != NULL; s = s->s_next) {
		if (s->s_pid == me) {
			*events = s->s_events;
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&sh->sh_lock);
	return err;
}

void sth_sigpoll(struct sthead *sh, int event, int band)
{
	int fired = event;

	(void)band;
	if (event & (S_RDNORM | S_RDBAND))
		fired |= S_INPUT;
	if (!(__atomic_load_n(&sh->sh_sigevents, __ATOMIC_ACQUIRE) & fired))
		return;
	/* who gets which signal, noted under the lock and sent after it
	 * (and after the caller's outermost entry, str_signal): a signal
	 * to this process may run its handler at once, and a handler that
	 * reads the stream takes sh_lock and the reader lock */
	struct { pid_t pid; int sig; } one[8], *to = one;
	int n = 0, cap = 8;

	pthread_mutex_lock(&sh->sh_lock);
	for (struct sth_sig *s = sh->sh_sigs; s != NULL; s = s->s_next) {
		if (!(s->s_events & fired))
			continue;
		if (n == cap) {
			void *m = malloc(sizeof(*to) * (size_t)cap * 2);
			if (m == NULL)
				break;
			memcpy(m, to, sizeof(*to) * (size_t)n);
			if (to != one)
				free(to);
			to = m;
			cap *= 2;
		}
		to[n].pid = s->s_pid;
		to[n++].sig = ((event & S_RDBAND) && (s->s_events & S_BANDURG))
			      ? SIGURG : SIGPOLL;
	}
	pthread_mutex_unlock(&sh->sh_lock);
	for (int i = 0; i < n; i++)
		str_signal(to[i].pid, to[i].sig);
	if (to != one)
		free(to);
}
