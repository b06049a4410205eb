/*
 * thread.c -- per-thread executive state.
 *
 * Each thread that enters the executive gets a struct strthread on first
 * use: its entry counter for grace periods (rcu.c), its local run list
 * (sched.c), its statistics (stats.c) and its caches of free message
 * chunks (mem.c).  The registry links them so grace periods and
 * streams_stats() can visit every thread.  A pthread key destructor
 * returns the caches and folds the counters at exit.  The structures are
 * never freed, only reused by later threads, so a grace period may read
 * a thread's entry counter without holding the registry lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "strsubr.h"

__thread struct strthread *str_self_tls STR_TLS_IE;

pthread_mutex_t strthread_lock = PTHREAD_MUTEX_INITIALIZER;
struct strthread *strthread_list;	/* strthread_lock */
static pthread_key_t strthread_key;
static pthread_once_t strthread_once = PTHREAD_ONCE_INIT;

static void strthread_dtor(void *arg)
{
	struct strthread *t = arg;

	/* Anything still enabled locally must still run. */
	if (t->t_runq_head != NULL) {
		t->t_depth = 1;
		str_exit_slow(t);
	}
	strmem_thread_flush(t);
	pthread_mutex_lock(&strthread_lock);
	strstat_fold(t);
	atomic_store_explicit(&t->t_rcu, 0, memory_order_release);
	t->t_depth = 0;
	t->t_dead = 1;
	pthread_mutex_unlock(&strthread_lock);
	str_self_tls = NULL;
}

static void strthread_key_init(void)
{
	pthread_key_create(&strthread_key, strthread_dtor);
}

struct strthread *str_thread_init(void)
{
	struct strthread *t;

	if (!str_core_ready)
		str_init_core();
	pthread_once(&strthread_once, strthread_key_init);
	pthread_mutex_lock(&strthread_lock);
	for (t = strthread_list; t != NULL; t = t->t_next)
		if (t->t_dead)
			break;
	if (t != NULL) {
		/* reuse: keep t_next, t_rcu and t_bheld (others may look at
		 * them at any time: they are NULL already) and the entry
		 * counter's history */
		unsigned long seq = t->t_seq;
		size_t keep = offsetof(struct strthread, t_bheld) +
			sizeof(t->t_bheld);
		memset((char *)t + keep, 0, sizeof(*t) - keep);
		t->t_seq = seq;
	} else {
		t = calloc(1, sizeof(*t));
		if (t == NULL)
			abort();	/* cannot run without per-thread state */
		t->t_next = strthread_list;
		strthread_list = t;
	}
	t->t_tid = (int)syscall(SYS_gettid);
	pthread_mutex_unlock(&strthread_lock);
	str_self_tls = t;
	pthread_setspecific(strthread_key, t);
	return t;
}

/* After fork() only the forking thread survives in the child. */
void strthread_atfork_child(void)
{
	struct strthread *self = str_self_tls, *t;

	pthread_mutex_init(&strthread_lock, NULL);
	for (t = strthread_list; t != NULL; t = t->t_next) {
		if (t != self && !t->t_dead) {
			/* the thread is gone; its cached chunks are lost to
			 * the child (plain heap memory, reclaimed at exit) */
			strstat_fold(t);
			for (int i = 0; i < STR_NCLASSES; i++)
				t->t_mag[i].count = 0;
			t->t_runq_head = t->t_runq_tail = NULL;
			atomic_store_explicit(&t->t_rcu, 0,
					      memory_order_relaxed);
			/* a biased lock it held stays held, as a plain
			 * lock would: what it protects may be half
			 * changed */
			struct strblock *b = atomic_load_explicit(
				&t->t_bheld, memory_order_relaxed);
			if (b != NULL) {
				__atomic_store_n(&b->b_lock, 1,
						 __ATOMIC_RELAXED);
				atomic_store_explicit(&b->b_bias, NULL,
						      memory_order_relaxed);
				atomic_store_explicit(&b->b_owner, t,
						      memory_order_relaxed);
			}
			atomic_store_explicit(&t->t_bheld, NULL,
					      memory_order_relaxed);
			t->t_depth = 0;
			t->t_dead = 1;
		}
	}
}

/* ---- signals held for the outermost exit ---- */

static void send_signal(pid_t pid, int sig)
{
	if (pid == 0)
		pthread_kill(pthread_self(), sig);
	else
		kill(pid, sig);
}

void str_signal(pid_t pid, int sig)
{
	struct strthread *t = str_self_tls;

	if (t == NULL || (t->t_depth == 0 && t->t_nodefer == 0)) {
		send_signal(pid, sig);
		return;
	}
	/* (a signal pending twice is delivered once anyway) */
	for (int i = 0; i < t->t_nsig; i++)
		if (t->t_sig[i].pid == pid && t->t_sig[i].sig == sig)
			return;
	if (t->t_nsig == STR_NSIG_HELD) {
		send_signal(pid, sig);	/* (nine distinct: not seen) */
		return;
	}
	t->t_sig[t->t_nsig].pid = pid;
	t->t_sig[t->t_nsig++].sig = sig;
}

/* Outside every entry now: send what was held, oldest first, one off
 * the list at a time (a handler may enter the library again and send
 * the rest at its own exit, or leave with siglongjmp: the rest stays
 * for the next). */
static void signal_flush(struct strthread *t)
{
	while (t->t_nsig > 0 && t->t_depth == 0 && t->t_nodefer == 0) {
		pid_t pid = t->t_sig[0].pid;
		int sig = t->t_sig[0].sig;

		t->t_nsig--;
		memmove(&t->t_sig[0], &t->t_sig[1],
			sizeof(t->t_sig[0]) * (size_t)t->t_nsig);
		send_signal(pid, sig);
	}
}

/* ---- work deferred to the outermost exit ---- */

void str_defer(struct str_deferred *d, void (*fn)(struct str_deferred *))
{
	struct strthread *t = str_self_tls;

	d->d_fn = fn;
	if (t == NULL || (t->t_depth == 0 && t->t_nodefer == 0)) {
		fn(d);
		return;
	}
	d->d_next = t->t_defer;
	t->t_defer = d;
}

/* Outside every entry: run what was deferred, oldest first; what that
 * defers in turn (it may enter) runs at its own exit, or in a later
 * round here (so a nested exit may run newer work before older). */
static void defer_run(struct strthread *t)
{
	while (t->t_defer != NULL && t->t_depth == 0 && t->t_nodefer == 0) {
		struct str_deferred *d = t->t_defer, *fifo = NULL, *n;

		t->t_defer = NULL;
		for (; d != NULL; d = n) {	/* (newest first: reversed) */
			n = d->d_next;
			d->d_next = fifo;
			fifo = d;
		}
		for (d = fifo; d != NULL; d = n) {
			n = d->d_next;
			d->d_fn(d);
		}
	}
}

void str_defer_block(void)
{
	str_self()->t_nodefer++;
}

void str_defer_unblock(void)
{
	struct strthread *t = str_self();

	t->t_nodefer--;
	str_defer_flush(t);
}

void str_defer_flush(struct strthread *t)
{
	if (t->t_depth != 0 || t->t_nodefer != 0)
		return;
	if (t->t_nsig != 0)
		signal_flush(t);
	if (t->t_defer != NULL)
		defer_run(t);
}

/* ---- the executive's own threads ---- */

struct str_start {
	void *(*fn)(void *);
	void *arg;
	const char *name;		/* the thread's name (ps, top, perf) */
	int started;			/* futex word: 1 once running */
};

static void *str_start_tramp(void *p)
{
	struct str_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	(void)prctl(PR_SET_NAME, s->name, 0, 0, 0);
	__atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
	str_futex_wake(&s->started, 1);
	return fn(arg);		/* s is gone once started is seen */
}

/*
 * pthread_create for the executive's threads (I/O, callouts, workers),
 * returning only once the thread runs its function: by then the C
 * library and any sanitizer runtime have finished setting the thread up
 * (allocations under their own locks), so a fork() right after it -- the
 * conversion of pipes in a prepare handler starts the I/O thread just
 * before the fork -- never copies such a lock taken into the child.  The
 * thread is named (at most 15 characters) so that ps, top and perf tell
 * the executive's threads from the application's.
 */
int str_thread_create(pthread_t *t, const pthread_attr_t *a,
		      void *(*fn)(void *), void *arg, const char *name)
{
	struct str_start s = { fn, arg, name, 0 };
	int err = pthread_create(t, a, str_start_tramp, &s);

	if (err != 0)
		return err;
	while (!__atomic_load_n(&s.started, __ATOMIC_ACQUIRE))
		(void)str_futex_wait(&s.started, 0, NULL);
	return 0;
}
