/*
 * test_timer -- timeout/untimeout, qtimeout inside the perimeter,
 * bufcall/esbbcall/unbufcall against a memory limit.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

int main(void)
{
	th_mark();
	test_fire_and_cancel();
	test_running();
	test_qtimeout();
	test_bufcall();
	CHECK_EQ(drv_hztousec(HZ), 1000000);
	CHECK_EQ(drv_usectohz(1), 1);
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
