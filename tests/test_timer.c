/*
 * test_timer -- timeout/untimeout, qtimeout inside the perimeter,
 * bufcall/esbbcall/unbufcall against a memory limit.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <limits.h>
#include <stropts.h>

#include "t.h"
#include "harness.h"

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static _Atomic int fired;
static _Atomic long fired_arg;
static _Atomic int fired_tid;
static double fired_at;

static void on_timeout(void *arg)
{
	fired_at = now_ms();
	atomic_store(&fired_arg, (long)arg);
	atomic_store(&fired_tid, (int)syscall(SYS_gettid));
	atomic_fetch_add(&fired, 1);
}

static void wait_for(_Atomic int *v, int want, int ms)
{
	for (int i = 0; i < ms && atomic_load(v) < want; i++)
		msleep(1);
}

/* The name (comm) of thread tid of this process, "" if unreadable. */
static const char *thread_name(int tid)
{
	static char name[32];
	char path[64];
	FILE *f;

	name[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(name, sizeof(name), f) == NULL)
			name[0] = '\0';
		fclose(f);
	}
	name[strcspn(name, "\n")] = '\0';
	return name;
}

static void test_fire_and_cancel(void)
{
	double t0 = now_ms();
	toid_t id;

	atomic_store(&fired, 0);
	id = timeout(on_timeout, (void *)42L, drv_usectohz(20000));
	CHECK(id > 0);
	wait_for(&fired, 1, 2000);
	CHECK_EQ(atomic_load(&fired), 1);
	CHECK_EQ(atomic_load(&fired_arg), 42);
	CHECK(fired_at - t0 >= 19.0);
	CHECK_EQ(untimeout(id), -1);		/* already fired */
	/* on the callout thread, which says what it is */
	CHECK(atomic_load(&fired_tid) != (int)syscall(SYS_gettid));
	CHECK_STR(thread_name(atomic_load(&fired_tid)), "streams-callout");

	atomic_store(&fired, 0);
	id = timeout(on_timeout, NULL, HZ);	/* a second away */
	long left = untimeout(id);
	CHECK(left > HZ / 2 && left <= HZ);
	msleep(30);
	CHECK_EQ(atomic_load(&fired), 0);
	CHECK_EQ(untimeout(id), -1);
	CHECK_EQ(untimeout(0), -1);
	CHECK_EQ(untimeout(-5), -1);
	CHECK_EQ(timeout(NULL, NULL, 1), 0);
	/* "forever" stays in the future (the deadline once wrapped into
	 * the past and fired at once) */
	id = timeout(on_timeout, NULL, LONG_MAX);
	CHECK(id > 0);
	msleep(30);
	CHECK_EQ(atomic_load(&fired), 0);
	CHECK(untimeout(id) > HZ);
	id = timeout(on_timeout, NULL, drv_usectohz(LONG_MAX));
	msleep(10);
	CHECK_EQ(atomic_load(&fired), 0);
	CHECK(untimeout(id) > HZ);

	/* order by deadline, not by registration */
	atomic_store(&fired, 0);
	timeout(on_timeout, (void *)2L, drv_usectohz(40000));
	timeout(on_timeout, (void *)1L, drv_usectohz(10000));
	wait_for(&fired, 1, 2000);
	CHECK_EQ(atomic_load(&fired_arg), 1);
	wait_for(&fired, 2, 2000);
	CHECK_EQ(atomic_load(&fired_arg), 2);
}

/* untimeout of a running callback waits for it to return */
static _Atomic int slow_started, slow_done;

static void slow_cb(void *arg)
{
	atomic_store(&slow_started, 1);
	msleep(60);
	atomic_store(&slow_done, 1);
}

static _Atomic toid_t self_id;
static _Atomic long self_result = 99;

static void self_cancel(void *arg)
{
	atomic_store(&self_result, untimeout(atomic_load(&self_id)));
}

static void test_running(void)
{
	toid_t id = timeout(slow_cb, NULL, 0);
	wait_for(&slow_started, 1, 2000);
	REQUIRE(atomic_load(&slow_started));
	CHECK_EQ(untimeout(id), -1);
	CHECK_EQ(atomic_load(&slow_done), 1);	/* waited */

	/* a few ticks, so the id is stored before the callback reads it */
	atomic_store(&self_id, timeout(self_cancel, NULL, drv_usectohz(5000)));
	for (int i = 0; i < 2000 && atomic_load(&self_result) == 99; i++)
		msleep(1);
	CHECK_EQ(atomic_load(&self_result), -1);	/* no deadlock */
}

/* qtimeout callbacks run inside the queue's perimeter */
static void test_qtimeout(void)
{
	struct stdata *sd = th_stream("tsink", "tpassp", NULL);
	REQUIRE(sd != NULL);
	queue_t *q = str_top(sd);
	struct strsyncq *sqp = q->q_syncq;
	REQUIRE(sqp != NULL);

	atomic_store(&fired, 0);
	strperim_enter_wait(sqp);	/* we are "inside the module" */
	qtimeout(q, on_timeout, (void *)7L, 0);
	msleep(50);
	CHECK_EQ(atomic_load(&fired), 0);	/* deferred on the syncq */
	strperim_exit(sqp);			/* runs it here, now */
	CHECK_EQ(atomic_load(&fired), 1);
	CHECK_EQ(atomic_load(&fired_tid), (int)syscall(SYS_gettid));

	/* cancelling a deferred callout from inside the perimeter */
	atomic_store(&fired, 0);
	strperim_enter_wait(sqp);
	toid_t id = qtimeout(q, on_timeout, NULL, 0);
	msleep(50);
	CHECK_EQ(quntimeout(q, id), 0);
	strperim_exit(sqp);
	msleep(20);
	CHECK_EQ(atomic_load(&fired), 0);

	/* a pending qtimeout is cancelled when its queue is closed */
	qtimeout(q, on_timeout, NULL, 10 * HZ);
	th_close(sd);
	struct strstats st;
	streams_stats(&st);
	CHECK_EQ(st.timeouts_pending, 0);
}

static _Atomic int bc_calls;
static _Atomic long bc_arg;

static void on_bufcall(long arg)
{
	atomic_store(&bc_arg, arg);
	atomic_fetch_add(&bc_calls, 1);
}

static void test_bufcall(void)
{
	mblk_t *hog, *mp;
	bufcall_id_t id;

	CHECK_EQ(streams_set_memlimit(16384), 0);
	hog = allocb(12000, BPRI_MED);
	REQUIRE(hog != NULL);
	CHECK_PTR(allocb(8000, BPRI_MED), NULL);
	id = bufcall(8000, BPRI_MED, on_bufcall, 5);
	CHECK(id > 0);
	msleep(30);
	CHECK_EQ(atomic_load(&bc_calls), 0);	/* memory still short */
	freeb(hog);
	wait_for(&bc_calls, 1, 2000);
	CHECK_EQ(atomic_load(&bc_calls), 1);
	CHECK_EQ(atomic_load(&bc_arg), 5);
	mp = allocb(8000, BPRI_MED);
	CHECK(mp != NULL);
	freemsg(mp);

	/* unbufcall: never called */
	hog = allocb(12000, BPRI_MED);
	id = bufcall(8000, BPRI_MED, on_bufcall, 6);
	unbufcall(id);
	freeb(hog);
	msleep(30);
	CHECK_EQ(atomic_load(&bc_calls), 1);

	/* esbbcall: called as soon as possible */
	esbbcall(BPRI_MED, on_bufcall, 9);
	wait_for(&bc_calls, 2, 2000);
	CHECK_EQ(atomic_load(&bc_arg), 9);
	CHECK_EQ(streams_set_memlimit(0), 0);
	CHECK_EQ(bufcall(10, BPRI_MED, NULL, 0), 0);

	struct strstats st;
	streams_stats(&st);
	CHECK_EQ(st.bufcalls_pending, 0);
	CHECK(st.bufcall_runs >= 2);
}

#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
/* (ThreadSanitizer cannot follow a child that starts threads after
 * fork(), and ASan's runtime does not always survive one: see
 * test_sth_fork) */
/* fork() while other threads add and cancel timeouts and the callout
 * thread moves due ones: the child gets the callout heap whole (it was
 * copied in the middle of a change: 4 runs in 10 of test_sth_fork had a
 * child die in heap_del), and every timeout it sets fires, cancelled
 * ones never. */
static _Atomic int fk_stop;
static _Atomic int child_fired;

static void on_noop(void *arg)
{
	(void)arg;
}

static void on_child(void *arg)
{
	(void)arg;
	atomic_fetch_add(&child_fired, 1);
}

static toid_t fk_ids[2][16];	/* the churners' (each its own row) */

static void *fk_churn(void *arg)
{
	unsigned seed = (unsigned)(long)arg;
	toid_t *ids = fk_ids[(long)arg - 1];

	while (!atomic_load(&fk_stop)) {
		int i = (int)(rand_r(&seed) % 16);
		if (ids[i] != 0)
			untimeout(ids[i]);
		ids[i] = timeout(on_noop, NULL,
				 drv_usectohz(1000 * (rand_r(&seed) % 4)));
	}
	for (int i = 0; i < 16; i++)
		if (ids[i] != 0)
			untimeout(ids[i]);
	memset(ids, 0, 16 * sizeof(*ids));
	return NULL;
}

static int fk_child(void)
{
	toid_t ids[20];

	for (int i = 0; i < 20; i++)		/* every 4th a second away */
		ids[i] = timeout(on_child, NULL, i % 4 == 0 ? HZ :
				 drv_usectohz(1000 * (i % 3)));
	for (int i = 0; i < 20; i += 4)		/* and cancelled */
		if (ids[i] == 0 || untimeout(ids[i]) < 0)
			atomic_fetch_add(&child_fired, 100);
	/* the parent's timeouts copied with the heap go too */
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 16; i++)
			if (fk_ids[r][i] != 0)
				untimeout(fk_ids[r][i]);
	wait_for(&child_fired, 15, 2000);
	msleep(5);
	return atomic_load(&child_fired) == 15 ? 0 : 1;
}

/* A timeout set before the fork fires in the child too, once the child
 * calls the library (it had no callout thread until it set a timeout
 * of its own): with the executive alone, and with a stream head. */
static _Atomic int pre_fired;

static void on_pre(void *arg)
{
	(void)arg;
	atomic_fetch_add(&pre_fired, 1);
}

static int pre_child(void)
{
	/* (its first entry into the library starts the child's callouts) */
	(void)streams_run();
	wait_for(&pre_fired, 1, 2000);
	return atomic_load(&pre_fired) == 1 ? 0 : 1;
}

static void test_timeout_across_fork(bool with_head)
{
	int hung, bad, fds[2] = { -1, -1 };
	toid_t id;

	if (with_head)
		REQUIRE(s_pipe(fds) == 0);
	atomic_store(&pre_fired, 0);
	id = timeout(on_pre, NULL, drv_usectohz(100000));
	REQUIRE(id > 0);
	bad = t_forks(1, pre_child, &hung);	/* (before it fires) */
	CHECK_EQ(hung, 0);
	CHECK_EQ(bad, 0);
	wait_for(&pre_fired, 1, 2000);
	CHECK_EQ(atomic_load(&pre_fired), 1);
	if (with_head) {
		CHECK_EQ(close(fds[0]), 0);
		CHECK_EQ(close(fds[1]), 0);
	}
}

static void test_fork_beside_timers(void)
{
	pthread_t t[2];
	int hung, bad;

	atomic_store(&fk_stop, 0);
	REQUIRE(pthread_create(&t[0], NULL, fk_churn, (void *)1L) == 0);
	REQUIRE(pthread_create(&t[1], NULL, fk_churn, (void *)2L) == 0);
	bad = t_forks(200, fk_child, &hung);
	atomic_store(&fk_stop, 1);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	CHECK_EQ(hung, 0);
	CHECK_EQ(bad, 0);
}
#endif

int main(void)
{
	th_mark();
	test_fire_and_cancel();
	test_running();
	test_qtimeout();
	test_bufcall();
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
	test_timeout_across_fork(false);	/* (before any stream) */
	test_timeout_across_fork(true);
	test_fork_beside_timers();
#endif
	CHECK_EQ(drv_hztousec(HZ), 1000000);
	CHECK_EQ(drv_usectohz(1), 1);
	CHECK_EQ(drv_usectohz(1001), 2);
	/* saturated, not overflowed */
	CHECK_EQ(drv_usectohz(LONG_MAX), LONG_MAX / (1000000 / HZ) + 1);
	CHECK_EQ(drv_hztousec(LONG_MAX), LONG_MAX);
	CHECK_EQ(drv_hztousec(-1), 0);
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
