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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <time.h>

#include "sthead.h"

long sth_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int sth_sleep(struct strthread **tp, int *word, int seen, long deadline_ms)
{
	struct timespec dl, *dlp = NULL;
	int r;

	if (deadline_ms >= 0) {
		if (sth_now_ms() >= deadline_ms)
			return ETIMEDOUT;
		dl.tv_sec = deadline_ms / 1000;
		dl.tv_nsec = (deadline_ms % 1000) * 1000000L;
		dlp = &dl;
	}
	str_exit(*tp);
	r = str_futex_wait(word, seen, dlp);
	*tp = str_enter();
	if (r == EINTR)
		return EINTR;
	if (r == ETIMEDOUT)
		return ETIMEDOUT;
	return 0;
}

void sth_wake(int *word, int *waiters)
{
	/* the waker's queue update is ordered before this load by the
	 * queue lock's release (an exchange); a waiter bumps *waiters
	 * before re-checking, so one of the two sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(waiters, __ATOMIC_RELAXED) == 0)
		return;
	__atomic_add_fetch(word, 1, __ATOMIC_ACQ_REL);
	str_futex_wake(word, 0x7fffffff);
}
