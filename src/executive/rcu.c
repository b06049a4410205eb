/*
 * rcu.c -- grace periods for plumbing changes.
 *
 * A thread inside the executive (str_enter .. str_exit) has an odd value
 * in t_rcu, unique to that entry.  str_synchronize() makes every thread
 * execute a memory barrier (membarrier(2) private expedited, registered at
 * start-up), then waits until each thread that was inside has left or
 * re-entered.  A thread that enters after the barrier sees the plumbing
 * change, so it cannot reach what was unhooked.  With membarrier the entry
 * costs two plain stores; without it (old kernels, ThreadSanitizer builds)
 * the entry uses a full fence.
 *
 * fork().  A thread that forks while others are inside an entry would
 * give the child their queue, reader and driver locks held by threads
 * the child does not have.  So fork's prepare handler closes a gate:
 * STR_ENTRY_FORK set in str_entry_slow, the same barrier, then it waits
 * until no other thread is inside an entry.  A thread entering meanwhile
 * sees the gate (in the word every entry loads anyway) and waits
 * outside, holding no entry's locks, until the parent handler opens it
 * again; the child starts with it open.
 * Entries never sleep, so the wait is short; a thread that takes a lock
 * outside an entry and then enters (none should) could still block it,
 * so the wait ends after STR_FORK_WAIT_MS and the fork goes on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "strsubr.h"

int str_rcu_membarrier;
extern pthread_mutex_t strthread_lock;
extern struct strthread *strthread_list;
static pthread_mutex_t str_gp_lock = PTHREAD_MUTEX_INITIALIZER;

void str_rcu_init(void)
{
#if !STR_TSAN
	long r = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (r > 0 && (r & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0) == 0)
		str_rcu_membarrier = 1;
	else
		str_entry_slow = STR_ENTRY_FENCE;
#endif
}

static long now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000L + now.tv_nsec / 1000000;
}

/* Every thread through a memory barrier (membarrier(2), or only our
 * own fence without it: then each entry fences itself), then the first
 * of the threads.  Thread structures are never freed (thread.c), so the
 * list can be walked without the lock once its head is read: new
 * threads are added at the head and enter after the barrier anyway. */
static struct strthread *barrier_threads(void)
{
	struct strthread *t;

	if (str_rcu_membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else
		atomic_thread_fence(memory_order_seq_cst);
	pthread_mutex_lock(&strthread_lock);
	t = strthread_list;
	pthread_mutex_unlock(&strthread_lock);
	return t;
}

/* Wait until thread t's entry counter is no longer v (it left that
 * entry): true, or false once end_ms (now_ms; -1: never) has passed. */
static bool wait_moved(struct strthread *t, unsigned long v, long end_ms)
{
	for (int spins = 0;
	     atomic_load_explicit(&t->t_rcu, memory_order_acquire) == v;) {
		if (++spins < 64) {
			sched_yield();
			continue;
		}
		if (end_ms >= 0 && now_ms() > end_ms)
			return false;
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
	return true;
}

void str_synchronize(void)
{
	struct strthread *self = str_self(), *t;

	STR_ASSERT(self->t_depth == 0, "str_synchronize inside an entry", self);
	pthread_mutex_lock(&str_gp_lock);
	for (t = barrier_threads(); t != NULL; t = t->t_next) {
		unsigned long v;

		if (t == self)
			continue;
		v = atomic_load_explicit(&t->t_rcu, memory_order_acquire);
		if (v & 1)
			(void)wait_moved(t, v, -1);
	}
	pthread_mutex_unlock(&str_gp_lock);
	STRSTAT(ST_GRACE_PERIODS);
}

/* Leaving the outermost entry with service procedures enabled locally:
 * run them first (still inside), then leave. */
void str_exit_slow(struct strthread *t)
{
	strsched_run_local(t);
	if (--t->t_depth == 0) {
		atomic_store_explicit(&t->t_rcu, 0, memory_order_release);
		str_defer_flush(t);
	}
}

/* ---- fork ---- */

#define STR_FORK_WAIT_MS 2000

int str_entry_slow;			/* STR_ENTRY_*; atomic */
static struct strthread *str_fork_owner; /* the forking thread */

void str_enter_slow(struct strthread *t)
{
	int m = __atomic_load_n(&str_entry_slow, __ATOMIC_RELAXED);

	if ((m & STR_ENTRY_CHILD) &&
	    (__atomic_fetch_and(&str_entry_slow, ~STR_ENTRY_CHILD,
				__ATOMIC_ACQ_REL) & STR_ENTRY_CHILD)) {
		strtimer_child_start();
		m = __atomic_load_n(&str_entry_slow, __ATOMIC_RELAXED);
	}
	for (;;) {
		if (m & STR_ENTRY_FENCE)	/* the store, then a fence */
			atomic_exchange_explicit(&t->t_rcu, t->t_rcu,
						 memory_order_seq_cst);
		m = __atomic_load_n(&str_entry_slow, __ATOMIC_SEQ_CST);
		if (!(m & STR_ENTRY_FORK) ||
		    __atomic_load_n(&str_fork_owner, __ATOMIC_RELAXED) == t)
			return;
		/* step out, wait for the gate to open, step in again */
		atomic_store_explicit(&t->t_rcu, 0, memory_order_release);
		while ((m = __atomic_load_n(&str_entry_slow,
					    __ATOMIC_ACQUIRE)) &
		       STR_ENTRY_FORK)
			(void)str_futex_wait(&str_entry_slow, m, NULL);
		atomic_exchange_explicit(&t->t_rcu, (++t->t_seq << 1) | 1,
					 memory_order_seq_cst);
		m = 0;	/* (that exchange was the fence) */
	}
}

void str_fork_prepare(void)
{
	struct strthread *self = str_self_tls, *t;
	long end = now_ms() + STR_FORK_WAIT_MS;

	__atomic_store_n(&str_fork_owner, self, __ATOMIC_RELAXED);
	__atomic_or_fetch(&str_entry_slow, STR_ENTRY_FORK, __ATOMIC_SEQ_CST);
	for (t = barrier_threads(); t != NULL; t = t->t_next) {
		unsigned long v;

		if (t == self)
			continue;
		/* out of every entry: one it enters now steps out again */
		while ((v = atomic_load_explicit(&t->t_rcu,
						 memory_order_acquire)) & 1)
			if (!wait_moved(t, v, end))
				return;	/* a stuck entry: fork anyway */
	}
}

void str_fork_parent(void)
{
	__atomic_store_n(&str_fork_owner, NULL, __ATOMIC_RELAXED);
	__atomic_and_fetch(&str_entry_slow, ~STR_ENTRY_FORK, __ATOMIC_SEQ_CST);
	str_futex_wake(&str_entry_slow, 0x7fffffff);
}

void str_fork_child(void)
{
	/* a grace period another thread was in is not the child's (the
	 * lock guards no data) */
	pthread_mutex_init(&str_gp_lock, NULL);
	str_fork_owner = NULL;
	__atomic_and_fetch(&str_entry_slow, ~STR_ENTRY_FORK, __ATOMIC_RELAXED);
}
