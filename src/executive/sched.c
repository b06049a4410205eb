/*
 * sched.c -- the STREAMS scheduler: running service procedures.
 *
 * How it works
 * ------------
 * qenable() (or putq deciding to enable) sets QENAB under the queue lock
 * and calls strsched_enable() once.  A thread inside an entry appends the
 * queue to its own run list (no lock) and runs it on the way out of the
 * outermost entry (str_exit), so the service procedure of a queue a write
 * filled runs right after the write, in the writer's thread, as in SVR4's
 * runqueues() at system call exit.  A thread outside any entry uses the
 * global run list, served by worker threads (one per CPU by default,
 * started on first need, STREAMS_WORKERS or streams_set_workers()).
 *
 * A queue's service procedure never runs twice at once: running clears
 * QENAB and sets QINSERVICE; an enable while it runs only sets QENAB, and
 * the runner puts the queue back on a run list when the procedure returns.
 *
 * Locks: str_runq_lock protects the global list (q_link) and q_onrunq;
 * it nests inside no other lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "strsubr.h"

#define LOCAL_BUDGET	4096	/* services run locally before handing off */
#define MAX_WORKERS	256

static strlock_t str_runq_lock;
static queue_t *str_runq_head, *str_runq_tail;	/* str_runq_lock */
static int str_runq_len;			/* str_runq_lock */
static int str_sched_word;			/* futex: bumped on work */
static int str_sched_idle;			/* workers asleep; atomic */
static int str_sched_active;			/* services running; atomic */

static pthread_mutex_t str_workers_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t str_workers[MAX_WORKERS];	/* str_workers_lock */
static int str_nworkers;			/* running; atomic */
static int str_want_workers = -1;		/* -1: default; written under
						   str_workers_lock, atomic */
static int str_workers_stop;			/* atomic */

int strsched_nworkers(void)
{
	return __atomic_load_n(&str_nworkers, __ATOMIC_RELAXED);
}

/* ---- running one queue ---- */

void str_svc_invoke(queue_t *q)
{
	bool again;

	STRSTAT(ST_SVC_RUNS);
	struct module_stat *ms = q_stat(q);
	/* (none: the queue was enabled under procedures since replaced by
	 * ones without, a linked stream's head queue given back) */
	int (*srv)(queue_t *) = q_info(q)->qi_srvp;

	if (unlikely(ms != NULL))
		__atomic_add_fetch(&ms->ms_scnt, 1, __ATOMIC_RELAXED);
	if (likely(srv != NULL))
		srv(q);
	qlock(q);
	__atomic_store_n(&q->q_flag, q->q_flag & ~QINSERVICE,
			 __ATOMIC_RELAXED);
	again = (q->q_flag & (QENAB | QPROCSOFF)) == QENAB;
	if ((q->q_flag & QENAB) && (q->q_flag & QPROCSOFF))
		__atomic_store_n(&q->q_flag, q->q_flag & ~QENAB,
				 __ATOMIC_RELAXED);
	qunlock(q);
	if (again)
		strsched_enable(q);
}

void str_runservice(queue_t *q)
{
	struct strsyncq *sq;

	qlock(q);
	if (unlikely(q->q_flag & QPROCSOFF)) {
		__atomic_store_n(&q->q_flag, q->q_flag & ~QENAB,
				 __ATOMIC_RELAXED);
		qunlock(q);
		return;
	}
	/* (QBACK stays for the service procedure to look at and clear,
	 * as the stream head's does: SVR4) */
	__atomic_store_n(&q->q_flag, (q->q_flag & ~QENAB) | QINSERVICE,
			 __ATOMIC_RELAXED);
	qunlock(q);
	sq = q->q_syncq;
	if (sq == NULL) {
		str_svc_invoke(q);
	} else if (strperim_enter_svc(sq, q)) {
		str_svc_invoke(q);
		strperim_exit(sq);
	}
}

/* ---- run lists ---- */

static void global_add(queue_t *q)
{
	strlock(&str_runq_lock);
	q->q_link = NULL;
	if (str_runq_tail != NULL)
		str_runq_tail->q_link = q;
	else
		__atomic_store_n(&str_runq_head, q, __ATOMIC_RELEASE);
	str_runq_tail = q;
	str_runq_len++;
	q->q_onrunq = 1;
	strunlock(&str_runq_lock);
	strsched_wake();
}

static queue_t *global_pop(void)
{
	queue_t *q;

	if (__atomic_load_n(&str_runq_head, __ATOMIC_RELAXED) == NULL)
		return NULL;
	strlock(&str_runq_lock);
	q = str_runq_head;
	if (q != NULL) {
		__atomic_store_n(&str_runq_head, q->q_link, __ATOMIC_RELAXED);
		if (str_runq_head == NULL)
			str_runq_tail = NULL;
		q->q_link = NULL;
		q->q_onrunq = 0;
		str_runq_len--;
		__atomic_add_fetch(&str_sched_active, 1, __ATOMIC_ACQ_REL);
	}
	strunlock(&str_runq_lock);
	return q;
}

static void sched_done(int n);

/*
 * A thread inside an entry adds to its own run list.  A thread outside
 * any entry (a driver's own thread, an open) hands the queue to the
 * workers: running the service procedure in its call would break the
 * DDI's promise that a driver may hold its own locks across qenable,
 * putq and the rest (a service procedure taking the same lock would wait
 * for itself); with no workers (streams_set_workers(0): the application
 * runs the services itself; or shutting down) it runs them on its way
 * out of the entry it makes, as inside one.  It enters either way, so a
 * dying queue is settled by strsched_unschedule(), a grace period, and
 * strsched_unschedule() once more: a thread that was inside during the
 * first may have handed it to the global list before it left
 * (str_qdetach, str_push's failure).
 */
void strsched_enable(queue_t *q)
{
	struct strthread *t = str_self();
	bool outside = t->t_depth == 0;

	strstat_add(t, ST_QENABLES, 1);
	if (outside)
		str_enter();
	if (outside &&
	    __atomic_load_n(&str_want_workers, __ATOMIC_RELAXED) != 0 &&
	    !__atomic_load_n(&str_shutting_down, __ATOMIC_ACQUIRE)) {
		int ran = 0;

		global_add(q);
		/* no worker could be started (a thread limit): nobody else
		 * would run it; so this thread does, as with none wanted */
		if (__atomic_load_n(&str_nworkers, __ATOMIC_ACQUIRE) == 0)
			ran = strsched_run_global(1);
		str_exit(t);
		sched_done(ran);
		return;
	}
	q->q_link = NULL;
	if (t->t_runq_tail != NULL)
		t->t_runq_tail->q_link = q;
	else
		t->t_runq_head = q;
	t->t_runq_tail = q;
	if (outside)
		str_exit(t);
}

/* Take q off the global run list if it is there (queue being freed). */
void strsched_unschedule(queue_t *q)
{
	queue_t *p, *prev = NULL;
	/* inside an entry: fork's gate never copies the list half
	 * unlinked */
	struct strthread *t = str_enter();

	strlock(&str_runq_lock);
	if (q->q_onrunq) {
		for (p = str_runq_head; p != NULL; prev = p, p = p->q_link) {
			if (p != q)
				continue;
			if (prev != NULL)
				prev->q_link = q->q_link;
			else
				__atomic_store_n(&str_runq_head, q->q_link,
						 __ATOMIC_RELAXED);
			if (str_runq_tail == q)
				str_runq_tail = prev;
			q->q_link = NULL;
			str_runq_len--;
			break;
		}
		q->q_onrunq = 0;
	}
	strunlock(&str_runq_lock);
	str_exit(t);
	/* A worker that popped q already is inside an entry: the grace
	 * period the caller waits next covers it. */
}

/* Drain this thread's run list (inside its outermost entry). */
int strsched_run_local(struct strthread *t)
{
	int n = 0;
	queue_t *q;

	if (t->t_running)
		return 0;
	t->t_running = 1;
	while ((q = t->t_runq_head) != NULL) {
		t->t_runq_head = q->q_link;
		if (t->t_runq_head == NULL)
			t->t_runq_tail = NULL;
		q->q_link = NULL;
		if (++n > LOCAL_BUDGET) {
			/* a storm of re-enables: let the workers share it */
			global_add(q);
			continue;
		}
		str_runservice(q);
	}
	t->t_running = 0;
	return n;
}

/*
 * Run up to budget queues from the global list.  Each popped queue counts
 * in str_sched_active until the caller calls sched_done(n) after leaving
 * its entry, since what those services enable runs on the way out and is
 * still "pending" for streams_quiesce().
 */
int strsched_run_global(int budget)
{
	int n = 0;
	queue_t *q;

	while (n < budget && (q = global_pop()) != NULL) {
		str_runservice(q);
		n++;
	}
	return n;
}

static void sched_done(int n)
{
	if (n > 0)
		__atomic_sub_fetch(&str_sched_active, n, __ATOMIC_ACQ_REL);
}

int strsched_pending(void)
{
	return __atomic_load_n(&str_runq_head, __ATOMIC_RELAXED) != NULL ||
	       __atomic_load_n(&str_sched_active, __ATOMIC_RELAXED) != 0;
}

/* ---- workers ---- */

static void *worker_main(void *arg)
{
	struct strthread *t = str_self();

	(void)arg;
	t->t_worker = 1;
	while (!__atomic_load_n(&str_workers_stop, __ATOMIC_ACQUIRE)) {
		int seen = __atomic_load_n(&str_sched_word, __ATOMIC_ACQUIRE);
		struct strthread *e = str_enter();
		int n = strsched_run_global(64);
		str_exit(e);
		sched_done(n);
		if (n > 0)
			continue;
		__atomic_add_fetch(&str_sched_idle, 1, __ATOMIC_ACQ_REL);
		if (__atomic_load_n(&str_runq_head, __ATOMIC_ACQUIRE) == NULL &&
		    !__atomic_load_n(&str_workers_stop, __ATOMIC_ACQUIRE))
			str_futex_wait(&str_sched_word, seen, NULL);
		__atomic_sub_fetch(&str_sched_idle, 1, __ATOMIC_ACQ_REL);
	}
	return NULL;
}

static int default_workers(void)
{
	const char *e = getenv("STREAMS_WORKERS");
	long n;

	if (e != NULL && *e != '\0') {
		n = strtol(e, NULL, 10);
		if (n >= 0 && n <= MAX_WORKERS)
			return (int)n;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if (n > MAX_WORKERS)
		n = MAX_WORKERS;
	return (int)n;
}

void strsched_start(void)
{
	pthread_mutex_lock(&str_workers_lock);
	if (str_want_workers < 0)
		__atomic_store_n(&str_want_workers, default_workers(),
				 __ATOMIC_RELAXED);
	__atomic_store_n(&str_workers_stop, 0, __ATOMIC_RELEASE);
	while (str_nworkers < str_want_workers) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 256 * 1024);
		if (str_thread_create(&str_workers[str_nworkers], &a,
				      worker_main, NULL,
				      "streams-worker") != 0) {
			pthread_attr_destroy(&a);
			break;
		}
		pthread_attr_destroy(&a);
		__atomic_add_fetch(&str_nworkers, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&str_workers_lock);
}

static void stop_workers(void)
{
	pthread_mutex_lock(&str_workers_lock);
	__atomic_store_n(&str_workers_stop, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&str_sched_word, 1, __ATOMIC_ACQ_REL);
	str_futex_wake(&str_sched_word, MAX_WORKERS);
	for (int i = 0; i < str_nworkers; i++)
		pthread_join(str_workers[i], NULL);
	__atomic_store_n(&str_nworkers, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&str_workers_lock);
}

void strsched_wake(void)
{
	int want = __atomic_load_n(&str_want_workers, __ATOMIC_RELAXED);

	if (unlikely(__atomic_load_n(&str_nworkers, __ATOMIC_ACQUIRE) <
		     (want < 0 ? 1 : want)) &&
	    !__atomic_load_n(&str_shutting_down, __ATOMIC_ACQUIRE))
		strsched_start();
	__atomic_add_fetch(&str_sched_word, 1, __ATOMIC_ACQ_REL);
	if (__atomic_load_n(&str_sched_idle, __ATOMIC_ACQUIRE) > 0)
		str_futex_wake(&str_sched_word, 1);
}

int streams_set_workers(int n)
{
	if (n < 0 || n > MAX_WORKERS)
		return -EINVAL;
	if (!str_initialised)
		str_init();
	stop_workers();
	pthread_mutex_lock(&str_workers_lock);
	__atomic_store_n(&str_want_workers, n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&str_workers_lock);
	if (n > 0)
		strsched_start();
	return 0;
}

int streams_run(void)
{
	struct strthread *t;
	int n = 0, k;

	do {
		int g;
		t = str_enter();
		k = strsched_run_local(t);
		g = strsched_run_global(1 << 20);
		str_exit(t);
		sched_done(g);
		k += g;
		n += k;
	} while (k > 0);
	return n;
}

int streams_quiesce(int timeout_ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (str_nworkers == 0)
			streams_run();
		if (!strsched_pending())
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (now.tv_sec - start.tv_sec) * 1000 +
			  (now.tv_nsec - start.tv_nsec) / 1000000;
		if (ms >= timeout_ms)
			return -ETIMEDOUT;
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
}

void strsched_shutdown(void)
{
	stop_workers();
	streams_run();
}

void strsched_atfork_child(void)
{
	/* the workers did not survive the fork */
	str_runq_lock = STRLOCK_INIT;
	pthread_mutex_init(&str_workers_lock, NULL);
	str_nworkers = 0;
	str_sched_idle = 0;
	str_sched_active = 0;
	str_workers_stop = 0;
}
