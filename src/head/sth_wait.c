/*
 * sth_wait.c -- sleeping in the stream head.
 *
 * A caller that must wait (no data, flow control, an ioctl reply) bumps
 * the waiter count of the condition, reads the condition's futex word,
 * re-checks the condition, then calls sth_sleep.  Wakers bump the word
 * and wake only when the waiter count says someone sleeps, so data flows
 * without system calls.  Sleeping leaves the executive entry, so service
 * procedures this thread enabled run first and plumbing can proceed.  A
 * signal handler interrupts the sleep with EINTR (a futex wait without
 * deadline is restarted by SA_RESTART, as the kernel restarts syscalls).
 * A futex wait with a deadline never is: a sleep with a deadline (an
 * ioctl waiting for its answer) waits without one, and a callout at the
 * deadline wakes it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sthead.h"

/* How long a reader or writer spins before sleeping: a message or a
 * back-enable often comes within microseconds, and a sleep costs the
 * waker a system call.  STREAMS_SPIN_US (default 20; 0 never spins). */
static long spin_ns;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;
static int spin_gap;

static void spin_config(void)
{
	const char *e = getenv("STREAMS_SPIN_US");
	long us = 20;
	int g;

	if (e != NULL && *e != '\0') {
		us = strtol(e, NULL, 10);
		if (us < 0 || us > 100000)
			us = 20;
	}
	spin_ns = us * 1000;
	e = getenv("STREAMS_SPIN_GAP");
	g = e ? atoi(e) : 8;
	spin_gap = g < 1 ? 1 : g > 100000 ? 100000 : g;
}

static long spin_budget(void)
{
	pthread_once(&spin_once, spin_config);
	return spin_ns;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Pauses between looks at the awaited condition (STREAMS_SPIN_GAP,
 * default 8, about 0.2 us): each look reads a line the other side
 * writes, so not looking constantly leaves it to the writer.  Every
 * eighth look yields the CPU instead; yield_first makes that the first
 * failed look: a writer stopped by flow control or a reader that emptied
 * its queue often waits for a thread on its own CPU, which pauses cannot
 * let run (one CPU, 1024-byte messages through a pipe: 6.6 against 9.9 M
 * messages/s), and pays one sched_yield when it does not.  A ready()
 * that yields itself (a look that is a system call) passes false. */
bool sth_spin(struct strthread *t, bool (*ready)(void *), void *arg,
	      bool yield_first)
{
	long budget = spin_budget(), until = 0;

	if (budget == 0)
		return ready(arg);
	str_run_local(t);	/* what we enabled may be what we wait for */
	for (unsigned k = 0;; k++) {
		if (ready(arg))
			return true;
		/* the thread we wait for may share our CPU: let it run */
		if ((k & 7) == (yield_first ? 0u : 7u))
			sched_yield();
		else
			for (int i = 0; i < spin_gap; i++)
				relax();
		long n = (long)str_now_ns();
		if (until == 0)
			until = n + budget;
		else if (n >= until)
			return false;
	}
}

void sth_pause_ns(long ns)
{
	uint64_t until = str_now_ns() + (uint64_t)ns;

	do {
		for (int i = 0; i < 4; i++)
			relax();
	} while (str_now_ns() < until);
}

long sth_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The deadline of a sleep that SA_RESTART handlers may interrupt: its
 * word moves, and every sleeper on it looks again. */
static void sleep_expired(void *arg)
{
	int *word = arg;

	__atomic_add_fetch(word, 1, __ATOMIC_ACQ_REL);
	str_futex_wake(word, INT_MAX);
}

int sth_sleep(struct strthread **tp, int *word, int seen, long deadline_ms)
{
	struct timespec dl, *dlp = NULL;
	toid_t co = 0;
	long left;
	int r;

	if (deadline_ms >= 0) {
		if ((left = deadline_ms - sth_now_ms()) <= 0)
			return ETIMEDOUT;
		long ticks = drv_usectohz(left * 1000L);
		co = timeout(sleep_expired, word, ticks > 0 ? ticks : 1);
		if (co == 0) {		/* (no callout: as it can) */
			dl.tv_sec = deadline_ms / 1000;
			dl.tv_nsec = (deadline_ms % 1000) * 1000000L;
			dlp = &dl;
		}
	}
	str_exit(*tp);
	r = str_futex_wait(word, seen, dlp);
	*tp = str_enter();
	if (co != 0)
		(void)untimeout(co);
	if (r == EINTR)
		return EINTR;
	if (r == ETIMEDOUT || (deadline_ms >= 0 && sth_now_ms() >= deadline_ms))
		return ETIMEDOUT;
	return 0;
}

void sth_wake_readers(struct sthead *sh)
{
	sth_wake(&sh->sh_rseq, &sh->sh_rwaiters);
	int n = __atomic_load_n(&sh->sh_kwaiters, __ATOMIC_SEQ_CST);

	if (n > 0) {
		/* a token for each sleeper (the eventfd is a semaphore) */
		uint64_t v = (uint64_t)n;
		int fd = __atomic_load_n(&sh->sh_kevfd, __ATOMIC_ACQUIRE);

		if (fd >= 0)
			(void)!write(fd, &v, sizeof(v));
	}
}

void sth_wake(int *word, int *waiters)
{
	/* the waker's queue update must be ordered before this load, and a
	 * waiter bumps *waiters before re-checking, so one of the two sees
	 * the other.  On x86 the queue lock's release is an exchange, a full
	 * barrier already; elsewhere fence. */
#if !defined(__x86_64__) && !defined(__i386__)
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	if (__atomic_load_n(waiters, __ATOMIC_RELAXED) == 0)
		return;
	__atomic_add_fetch(word, 1, __ATOMIC_ACQ_REL);
	str_futex_wake(word, 0x7fffffff);
}
