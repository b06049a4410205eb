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
#endif
}

void str_synchronize(void)
{
	struct strthread *self = str_self(), *t;

	STR_ASSERT(self->t_depth == 0, "str_synchronize inside an entry", self);
	pthread_mutex_lock(&str_gp_lock);
	if (str_rcu_membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else
		atomic_thread_fence(memory_order_seq_cst);
	/* Thread structures are never freed (thread.c), so the list can be
	 * walked without the lock once its head is read: new threads are
	 * added at the head and enter after the barrier anyway. */
	pthread_mutex_lock(&strthread_lock);
	t = strthread_list;
	pthread_mutex_unlock(&strthread_lock);
	for (; t != NULL; t = t->t_next) {
		unsigned long v;
		int spins = 0;

		if (t == self)
			continue;
		v = atomic_load_explicit(&t->t_rcu, memory_order_acquire);
		if (!(v & 1))
			continue;
		while (atomic_load_explicit(&t->t_rcu, memory_order_acquire)
		       == v) {
			if (++spins < 64) {
				sched_yield();
			} else {
				struct timespec ts = { 0, 50000 };
				nanosleep(&ts, NULL);
			}
		}
	}
	pthread_mutex_unlock(&str_gp_lock);
	STRSTAT(ST_GRACE_PERIODS);
}

/* Leaving the outermost entry with service procedures enabled locally:
 * run them first (still inside), then leave. */
void str_exit_slow(struct strthread *t)
{
	strsched_run_local(t);
	if (--t->t_depth == 0)
		atomic_store_explicit(&t->t_rcu, 0, memory_order_release);
}
