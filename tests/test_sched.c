/*
 * test_sched -- the scheduler: a service procedure never runs twice at
 * once, however many threads enable it; a queue that re-enables itself
 * without end is handed to the worker threads; a driver's thread may hold
 * its own lock across qenable and putq; streams_run and
 * streams_set_workers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "t.h"
#include "qtest.h"

static _Atomic int inside, max_inside, consumed;

static int slow_srv(queue_t *q)
{
	mblk_t *mp;
	int v = atomic_fetch_add(&inside, 1) + 1;
	int o = atomic_load(&max_inside);
	while (v > o && !atomic_compare_exchange_weak(&max_inside, &o, v))
		;
	while ((mp = getq(q)) != NULL) {
		for (volatile int i = 0; i < 2000; i++)
			;
		freemsg(mp);
		atomic_fetch_add(&consumed, 1);
	}
	atomic_fetch_sub(&inside, 1);
	return 0;
}

static int slow_put(queue_t *q, mblk_t *mp)
{
	putq(q, mp);
	return 0;
}

static struct module_info s_minfo = { 0, "slow", 0, INFPSZ, 1 << 30, 1 << 20 };
static struct qinit slow_init = { slow_put, slow_srv, qt_open, NULL, NULL, &s_minfo, NULL };

static queue_t *sq;
#define PER_THREAD 5000

static void *enabler(void *arg)
{
	for (int i = 0; i < PER_THREAD; i++) {
		put(sq, qt_msg(M_DATA, 0, 1, i));
		qenable(sq);
	}
	return arg;
}

static void test_never_twice(void)
{
	pthread_t th[4];
	queue_t *rq = str_allocq(&slow_init, &slow_init, D_MP, NULL, QP_MOD);

	REQUIRE(rq != NULL);
	rq->q_flag &= ~QPROCSOFF;
	WR(rq)->q_flag &= ~QPROCSOFF;
	sq = WR(rq);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, enabler, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(streams_quiesce(5000), 0);
	qenable(sq);	/* anything left after the last run */
	CHECK_EQ(streams_quiesce(5000), 0);
	CHECK_EQ(atomic_load(&max_inside), 1);
	CHECK_EQ(atomic_load(&consumed), 4 * PER_THREAD);
	CHECK_EQ(qsize(sq), 0);
	qt_free(rq);
}

/* A service that re-enables itself N times: the local run list hands it
 * off to the global list after its budget, and workers finish it. */
static _Atomic int storm_runs, storm_on_other;
static int main_tid;
#define STORM 20000

static int storm_srv(queue_t *q)
{
	if ((int)syscall(SYS_gettid) != main_tid)
		atomic_fetch_add(&storm_on_other, 1);
	if (atomic_fetch_add(&storm_runs, 1) + 1 < STORM)
		qenable(q);
	return 0;
}

static struct qinit storm_init = { slow_put, storm_srv, qt_open, NULL, NULL, &s_minfo, NULL };

static void test_storm(int workers)
{
	queue_t *rq = str_allocq(&storm_init, &storm_init, D_MP, NULL, QP_MOD);

	REQUIRE(rq != NULL);
	rq->q_flag &= ~QPROCSOFF;
	WR(rq)->q_flag &= ~QPROCSOFF;
	CHECK_EQ(streams_set_workers(workers), 0);
	atomic_store(&storm_runs, 0);
	atomic_store(&storm_on_other, 0);
	main_tid = (int)syscall(SYS_gettid);
	qenable(WR(rq));
	if (workers == 0) {
		/* nobody else runs it: the main thread must, via streams_run */
		CHECK(atomic_load(&storm_runs) < STORM);
		CHECK(streams_run() > 0);
	}
	CHECK_EQ(streams_quiesce(10000), 0);
	CHECK_EQ(atomic_load(&storm_runs), STORM);
	if (workers > 0)
		CHECK(atomic_load(&storm_on_other) > 0);
	else
		CHECK_EQ(atomic_load(&storm_on_other), 0);
	struct strstats st;
	streams_stats(&st);
	CHECK_EQ(st.workers, workers);
	qt_free(rq);
}

/* A driver's own thread (outside any entry) may hold its own lock across
 * qenable and putq (DDI): the service procedure that takes that lock
 * runs on a worker, after the thread lets go, not inside the call on the
 * thread holding it (where an error-checking mutex said EDEADLK, and a
 * plain one waited for good).  With no workers the application runs the
 * services itself: then in the call, as before. */
static pthread_mutex_t dl_lock;
static _Atomic int dl_err = -1, dl_tid;

static int dl_srv(queue_t *q)
{
	mblk_t *mp;

	atomic_store(&dl_err, pthread_mutex_lock(&dl_lock));
	atomic_store(&dl_tid, (int)syscall(SYS_gettid));
	if (atomic_load(&dl_err) == 0)
		pthread_mutex_unlock(&dl_lock);
	while ((mp = getq(q)) != NULL)
		freemsg(mp);
	return 0;
}

static struct qinit dl_init = { slow_put, dl_srv, qt_open, NULL, NULL, &s_minfo, NULL };

static void test_lock_across_enable(void)
{
	pthread_mutexattr_t a;
	queue_t *rq = str_allocq(&dl_init, &dl_init, D_MP, NULL, QP_MOD);

	REQUIRE(rq != NULL);
	rq->q_flag &= ~QPROCSOFF;
	WR(rq)->q_flag &= ~QPROCSOFF;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&dl_lock, &a);
	for (int how = 0; how < 2; how++) {
		atomic_store(&dl_err, -1);
		pthread_mutex_lock(&dl_lock);
		if (how == 0)
			qenable(WR(rq));
		else
			CHECK_EQ(putq(WR(rq), qt_msg(M_PCPROTO, 0, 1, 1)), 1);
		pthread_mutex_unlock(&dl_lock);
		CHECK_EQ(streams_quiesce(5000), 0);
		CHECK_EQ(atomic_load(&dl_err), 0);
		CHECK(atomic_load(&dl_tid) != (int)syscall(SYS_gettid));
	}
	qt_free(rq);
	pthread_mutex_destroy(&dl_lock);
}

int main(void)
{
	th_mark();
	CHECK_EQ(streams_set_workers(-1), -EINVAL);
	test_lock_across_enable();
	test_never_twice();
	test_storm(2);
	test_storm(0);
	CHECK_EQ(streams_set_workers(1), 0);
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
