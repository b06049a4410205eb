/*
 * timer.c -- callouts: timeout, bufcall, esbbcall and their q variants.
 *
 * How it works
 * ------------
 * Every callout has an id, a state and a callback.  Timeouts wait in a
 * binary heap ordered by deadline; bufcalls wait on a list until memory is
 * likely available (testb() of their size succeeds after a freeb kicked
 * us, or at the next tick).  The callout thread moves due callouts to a
 * ready list and runs them one at a time inside an entry; callouts made
 * with qtimeout/qbufcall run inside their queue's perimeter (deferred on
 * the syncq when it is busy, then run by its owner).
 *
 * States: PENDING (heap or bufcall list), READY (ready list), DEFERRED
 * (on a syncq), RUNNING, and freed once done.  untimeout()/unbufcall():
 * PENDING or READY -> removed; DEFERRED -> marked cancelled (the syncq
 * owner skips it, which may be the caller itself); RUNNING in another
 * thread -> wait until it returns; RUNNING in the caller (a callback
 * cancelling itself) -> return at once.
 *
 * Locks: co_lock protects everything here; callbacks run without it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "strsubr.h"

enum co_kind { CO_TIMEOUT, CO_BUFCALL };
enum co_state { CO_PENDING, CO_READY, CO_DEFERRED, CO_RUNNING };

struct strcallout {
	struct strcallout *co_link;	/* ready list or syncq; MUST be first */
	struct strcallout *co_hnext;	/* id hash chain */
	struct strcallout *co_bnext;	/* bufcall waiting list */
	int co_id;
	enum co_kind co_kind;
	enum co_state co_state;
	int co_cancelled;
	int co_runner;			/* tid while RUNNING */
	void (*co_func)();
	void *co_arg;			/* timeout argument */
	long co_larg;			/* bufcall argument */
	int co_qarg;			/* qbufcall: pass co_arg, not co_larg */
	queue_t *co_q;			/* q variants: run in its perimeter */
	uint64_t co_when;		/* deadline, ns on CLOCK_MONOTONIC */
	size_t co_size;			/* bufcall: wanted size */
	int co_heapidx;
};

#define NHASH 1024

static pthread_mutex_t co_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t co_done = PTHREAD_COND_INITIALIZER;	/* co_lock */
static struct strcallout *co_hash[NHASH];	/* co_lock */
static struct strcallout **co_heap;		/* co_lock */
static int co_nheap, co_heapcap;		/* co_lock */
static struct strcallout *co_bufq;		/* co_lock: waiting bufcalls */
static int co_nbuf;				/* co_lock */
static struct strcallout *co_readyh, *co_readyt;	/* co_lock */
static int co_nextid = 1;			/* co_lock */
static int co_wakeword;				/* futex for the thread */
static int co_thread_running;			/* co_lock */
static int co_stop;				/* co_lock */
static pthread_t co_thread;
static uint64_t co_epoch;			/* executive start, ns */
_Atomic int strbufcall_waiting;

#define NS_PER_TICK (1000000000ull / HZ)
/* A bufcall waits this long after the C heap last refused a block:
 * testb only knows the memory limit, and with none set a callback
 * that cannot allocate either came back at once, without end. */
#define HEAP_RETRY_NS 10000000ull

/* Has the C heap refused no block for HEAP_RETRY_NS before now? */
static bool heap_settled(uint64_t now)
{
	uint64_t hf = atomic_load_explicit(&strmem_heap_fail_ns,
					   memory_order_relaxed);

	return hf == 0 || (now > hf && now - hf >= HEAP_RETRY_NS);
}

long str_lbolt(void)
{
	if (co_epoch == 0)
		co_epoch = str_now_ns();
	return (long)((str_now_ns() - co_epoch) / NS_PER_TICK);
}

static inline int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

/* ---- id hash (co_lock) ---- */

static void hash_add(struct strcallout *co)
{
	struct strcallout **b = &co_hash[co->co_id % NHASH];
	co->co_hnext = *b;
	*b = co;
}

static struct strcallout *hash_find(int id)
{
	struct strcallout *co;

	for (co = co_hash[(unsigned)id % NHASH]; co; co = co->co_hnext)
		if (co->co_id == id)
			return co;
	return NULL;
}

static void hash_del(struct strcallout *co)
{
	struct strcallout **pp = &co_hash[co->co_id % NHASH];

	for (; *pp != NULL; pp = &(*pp)->co_hnext)
		if (*pp == co) {
			*pp = co->co_hnext;
			return;
		}
}

static int new_id(void)
{
	int id;

	do {
		id = co_nextid;
		co_nextid = id == INT_MAX ? 1 : id + 1;	/* (no overflow) */
	} while (hash_find(id) != NULL);
	return id;
}

/* ---- heap (co_lock) ---- */

static void heap_swap(int a, int b)
{
	struct strcallout *t = co_heap[a];
	co_heap[a] = co_heap[b];
	co_heap[b] = t;
	co_heap[a]->co_heapidx = a;
	co_heap[b]->co_heapidx = b;
}

static void heap_up(int i)
{
	while (i > 0) {
		int p = (i - 1) / 2;
		if (co_heap[p]->co_when <= co_heap[i]->co_when)
			break;
		heap_swap(i, p);
		i = p;
	}
}

static void heap_down(int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < co_nheap && co_heap[l]->co_when < co_heap[m]->co_when)
			m = l;
		if (r < co_nheap && co_heap[r]->co_when < co_heap[m]->co_when)
			m = r;
		if (m == i)
			break;
		heap_swap(i, m);
		i = m;
	}
}

static bool heap_add(struct strcallout *co)
{
	if (co_nheap == co_heapcap) {
		int ncap = co_heapcap ? co_heapcap * 2 : 64;
		struct strcallout **nh = realloc(co_heap, ncap * sizeof(*nh));
		if (nh == NULL)
			return false;
		co_heap = nh;
		co_heapcap = ncap;
	}
	co->co_heapidx = co_nheap;
	co_heap[co_nheap++] = co;
	heap_up(co->co_heapidx);
	return true;
}

static void heap_del(struct strcallout *co)
{
	int i = co->co_heapidx;

	co_nheap--;
	if (i != co_nheap) {
		co_heap[i] = co_heap[co_nheap];
		co_heap[i]->co_heapidx = i;
		heap_down(i);
		heap_up(i);
	}
	co->co_heapidx = -1;
}

/* ---- lists (co_lock) ---- */

static void ready_add(struct strcallout *co)
{
	co->co_state = CO_READY;
	co->co_link = NULL;
	if (co_readyt != NULL)
		co_readyt->co_link = co;
	else
		co_readyh = co;
	co_readyt = co;
}

static bool ready_del(struct strcallout *co)
{
	struct strcallout *p, *prev = NULL;

	for (p = co_readyh; p != NULL; prev = p, p = p->co_link) {
		if (p != co)
			continue;
		if (prev != NULL)
			prev->co_link = co->co_link;
		else
			co_readyh = co->co_link;
		if (co_readyt == co)
			co_readyt = prev;
		co->co_link = NULL;
		return true;
	}
	return false;
}

static void buf_del(struct strcallout *co)
{
	struct strcallout **pp;

	for (pp = &co_bufq; *pp != NULL; pp = &(*pp)->co_bnext)
		if (*pp == co) {
			*pp = co->co_bnext;
			co_nbuf--;
			return;
		}
}

/* ---- the callout thread ---- */

static void wake_thread(void)
{
	__atomic_add_fetch(&co_wakeword, 1, __ATOMIC_ACQ_REL);
	str_futex_wake(&co_wakeword, 1);
}

/* Run one callout's function and retire it.  Inside the perimeter if it
 * has one (possibly on the syncq owner's thread). */
void strcallout_invoke(struct strcallout *co)
{
	pthread_mutex_lock(&co_lock);
	if (co->co_cancelled) {
		hash_del(co);
		pthread_mutex_unlock(&co_lock);
		pthread_cond_broadcast(&co_done);
		free(co);
		return;
	}
	co->co_state = CO_RUNNING;
	co->co_runner = gettid_();
	pthread_mutex_unlock(&co_lock);

	if (co->co_kind == CO_TIMEOUT) {
		STRSTAT(ST_TIMEOUT_RUNS);
		co->co_func(co->co_arg);
	} else {
		STRSTAT(ST_BUFCALL_RUNS);
		if (co->co_qarg)
			co->co_func(co->co_arg);
		else
			co->co_func(co->co_larg);
	}

	pthread_mutex_lock(&co_lock);
	hash_del(co);
	pthread_mutex_unlock(&co_lock);
	pthread_cond_broadcast(&co_done);
	free(co);
}

/* Inside the entry the callout thread made before taking co off the
 * ready list (so a fork, which waits for entries to end, never finds a
 * callout taken and not yet run: the child would never run it). */
static void run_one(struct strcallout *co)
{
	struct strsyncq *sq = co->co_q != NULL ? co->co_q->q_syncq : NULL;

	if (sq == NULL) {
		strcallout_invoke(co);
	} else if (strperim_enter_callout(sq, co)) {
		strcallout_invoke(co);
		strperim_exit(sq);
	}
}

static void *callout_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&co_lock);
	while (!co_stop) {
		uint64_t now = str_now_ns();
		struct strcallout *co;

		while (co_nheap > 0 && co_heap[0]->co_when <= now) {
			co = co_heap[0];
			heap_del(co);
			ready_add(co);
		}
		if (co_bufq != NULL && heap_settled(now)) {
			struct strcallout **pp = &co_bufq;
			while ((co = *pp) != NULL) {
				if (testb(co->co_size, BPRI_MED)) {
					*pp = co->co_bnext;
					co_nbuf--;
					ready_add(co);
				} else {
					pp = &co->co_bnext;
				}
			}
			if (co_bufq != NULL)
				atomic_store(&strbufcall_waiting, 1);
		}
		/* (while the heap backs off, frees do not wake us: the
		 * tick below looks again) */
		if (co_readyh != NULL) {
			/* enter first: co_lock is not held across the fork
			 * gate an entry may wait at */
			pthread_mutex_unlock(&co_lock);
			struct strthread *t = str_enter();
			pthread_mutex_lock(&co_lock);
			if ((co = co_readyh) != NULL) {	/* not cancelled */
				co_readyh = co->co_link;
				if (co_readyh == NULL)
					co_readyt = NULL;
				co->co_link = NULL;
				co->co_state = CO_DEFERRED;	/* until it runs */
			}
			pthread_mutex_unlock(&co_lock);
			if (co != NULL)
				run_one(co);
			str_exit(t);
			pthread_mutex_lock(&co_lock);
			continue;
		}
		/* sleep until the next deadline, a tick if bufcalls wait,
		 * or a wake-up */
		int seen = __atomic_load_n(&co_wakeword, __ATOMIC_ACQUIRE);
		struct timespec dl, *dlp = NULL;
		uint64_t when = UINT64_MAX;
		if (co_nheap > 0)
			when = co_heap[0]->co_when;
		if (co_bufq != NULL && now + NS_PER_TICK < when)
			when = now + NS_PER_TICK;
		if (when != UINT64_MAX) {
			dl.tv_sec = (time_t)(when / 1000000000ull);
			dl.tv_nsec = (long)(when % 1000000000ull);
			dlp = &dl;
		}
		pthread_mutex_unlock(&co_lock);
		str_futex_wait(&co_wakeword, seen, dlp);
		pthread_mutex_lock(&co_lock);
	}
	pthread_mutex_unlock(&co_lock);
	return NULL;
}

/* co_lock held */
static void ensure_thread(void)
{
	if (co_thread_running || co_stop)
		return;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	if (str_thread_create(&co_thread, &a, callout_main, NULL,
			      "streams-callout") == 0)
		co_thread_running = 1;
	pthread_attr_destroy(&a);
}

/* ---- registration ---- */

static struct strcallout *callout_new(enum co_kind kind, queue_t *q,
				      void (*func)())
{
	struct strcallout *co;

	if (func == NULL) {
		str_bad("timeout or bufcall with a NULL function", NULL);
		return NULL;
	}
	if (!str_initialised)
		str_init();
	co = calloc(1, sizeof(*co));
	if (co != NULL) {
		co->co_kind = kind;
		co->co_func = func;
		co->co_q = q;
		co->co_heapidx = -1;
	}
	return co;
}

/* Give co an id and file it (heap or bufcall list); 0 on failure, co
 * freed.  Wakes the callout thread when it must look again. */
static int callout_add(struct strcallout *co)
{
	enum co_kind kind = co->co_kind;	/* co may run and go once filed */
	bool wake = true;
	int id;

	pthread_mutex_lock(&co_lock);
	if (co_stop)
		goto fail;
	co->co_id = id = new_id();
	co->co_state = CO_PENDING;
	if (co->co_kind == CO_TIMEOUT) {
		if (!heap_add(co))
			goto fail;
		wake = co->co_heapidx == 0;	/* new earliest deadline */
	} else {
		co->co_bnext = co_bufq;
		co_bufq = co;
		co_nbuf++;
	}
	hash_add(co);
	ensure_thread();
	pthread_mutex_unlock(&co_lock);
	if (kind == CO_BUFCALL)
		atomic_store(&strbufcall_waiting, 1);
	STRSTAT(kind == CO_TIMEOUT ? ST_TIMEOUTS : ST_BUFCALLS);
	if (wake)
		wake_thread();
	return id;
fail:
	pthread_mutex_unlock(&co_lock);
	free(co);
	return 0;
}

/* ---- public: timeouts ---- */

static toid_t timeout_ns(queue_t *q, void (*func)(), void *arg, uint64_t ns)
{
	struct strcallout *co = callout_new(CO_TIMEOUT, q, func);
	uint64_t now = str_now_ns();

	if (co == NULL)
		return 0;
	co->co_arg = arg;
	/* (saturated: a timeout of "forever" must not wrap into the past) */
	co->co_when = ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
	return callout_add(co);
}

static toid_t timeout_common(queue_t *q, void (*func)(), void *arg,
			     long ticks)
{
	if (ticks < 0)
		ticks = 0;
	return timeout_ns(q, func, arg,
			  (uint64_t)ticks > UINT64_MAX / NS_PER_TICK
				? UINT64_MAX : (uint64_t)ticks * NS_PER_TICK);
}

toid_t str_qtimeout_ns(queue_t *q, void (*func)(), void *arg, uint64_t ns)
{
	if (q == NULL) {
		str_bad("str_qtimeout_ns(NULL)", q);
		return 0;
	}
	return timeout_ns(q, func, arg, ns);
}

toid_t timeout(void (*func)(), void *arg, long ticks)
{
	return timeout_common(NULL, func, arg, ticks);
}

toid_t qtimeout(queue_t *q, void (*func)(), void *arg, long ticks)
{
	if (q == NULL) {
		str_bad("qtimeout(NULL)", q);
		return 0;
	}
	return timeout_common(q, func, arg, ticks);
}

/* Cancel id of the given kind.  Returns ticks left (PENDING timeouts),
 * 0 when it was ready or deferred, -1 when unknown, done or running. */
static long cancel(int id, enum co_kind kind)
{
	struct strcallout *co;
	long left = -1;
	int me = gettid_();

	if (id <= 0)
		return -1;
	pthread_mutex_lock(&co_lock);
	for (;;) {
		co = hash_find(id);
		if (co == NULL || co->co_kind != kind)
			break;
		if (co->co_state == CO_PENDING) {
			if (kind == CO_TIMEOUT) {
				uint64_t now = str_now_ns();
				left = co->co_when > now ? (long)((co->co_when - now) /
					NS_PER_TICK) : 0;
				heap_del(co);
			} else {
				left = 0;
				buf_del(co);
			}
			hash_del(co);
			free(co);
			break;
		}
		if (co->co_state == CO_READY) {
			ready_del(co);
			hash_del(co);
			free(co);
			left = 0;
			break;
		}
		if (co->co_state == CO_DEFERRED) {
			/* the callout thread or a syncq owner will skip it */
			co->co_cancelled = 1;
			left = 0;
			break;
		}
		/* RUNNING */
		if (co->co_runner == me)
			break;
		pthread_cond_wait(&co_done, &co_lock);
	}
	pthread_mutex_unlock(&co_lock);
	return left;
}

long untimeout(toid_t id)
{
	return cancel(id, CO_TIMEOUT);
}

long quntimeout(queue_t *q, toid_t id)
{
	(void)q;
	return cancel(id, CO_TIMEOUT);
}

/* ---- public: bufcalls ---- */

static bufcall_id_t bufcall_common(queue_t *q, size_t size, void (*func)(),
				   void *parg, long larg, int qarg)
{
	struct strcallout *co = callout_new(CO_BUFCALL, q, func);

	if (co == NULL)
		return 0;
	co->co_arg = parg;
	co->co_larg = larg;
	co->co_qarg = qarg;
	co->co_size = size;
	return callout_add(co);
}

bufcall_id_t bufcall(size_t size, unsigned int pri, void (*func)(),
		     long arg)
{
	(void)pri;
	return bufcall_common(NULL, size, func, NULL, arg, 0);
}

bufcall_id_t esbbcall(unsigned int pri, void (*func)(), long arg)
{
	(void)pri;
	return bufcall_common(NULL, 0, func, NULL, arg, 0);
}

bufcall_id_t qbufcall(queue_t *q, size_t size, unsigned int pri,
		      void (*func)(), void *arg)
{
	(void)pri;
	if (q == NULL) {
		str_bad("qbufcall(NULL)", q);
		return 0;
	}
	return bufcall_common(q, size, func, arg, 0, 1);
}

void unbufcall(bufcall_id_t id)
{
	cancel(id, CO_BUFCALL);
}

void qunbufcall(queue_t *q, bufcall_id_t id)
{
	(void)q;
	cancel(id, CO_BUFCALL);
}

/* Memory was freed while bufcalls wait: let the callout thread look. */
void strbufcall_kick(void)
{
	if (atomic_exchange(&strbufcall_waiting, 0))
		wake_thread();
}

/* Cancel every callout that would run in q's pair (queue being freed);
 * scanned again until none is left: a callback running meanwhile (the
 * cancel waits for it) may have set itself again under a new id. */
void strcallout_cancel_queue(queue_t *q)
{
	queue_t *rq = RD(q), *wq = WR(q);
	int ids[64];
	int n;

	do {
		n = 0;
		pthread_mutex_lock(&co_lock);
		for (int b = 0; b < NHASH && n < 64; b++)
			for (struct strcallout *co = co_hash[b]; co && n < 64;
			     co = co->co_hnext)
				if ((co->co_q == rq || co->co_q == wq) &&
				    !co->co_cancelled)
					ids[n++] = co->co_id;
		pthread_mutex_unlock(&co_lock);
		for (int i = 0; i < n; i++) {
			cancel(ids[i], CO_TIMEOUT);
			cancel(ids[i], CO_BUFCALL);
		}
	} while (n > 0);
}

int strtimer_npending(int *bufcalls)
{
	int n;

	pthread_mutex_lock(&co_lock);
	n = co_nheap;
	for (struct strcallout *co = co_readyh; co; co = co->co_link)
		if (co->co_kind == CO_TIMEOUT)
			n++;
	if (bufcalls != NULL)
		*bufcalls = co_nbuf;
	pthread_mutex_unlock(&co_lock);
	return n;
}

void strtimer_shutdown(void)
{
	pthread_mutex_lock(&co_lock);
	co_stop = 1;
	int running = co_thread_running;
	pthread_mutex_unlock(&co_lock);
	wake_thread();
	if (running)
		pthread_join(co_thread, NULL);
	pthread_mutex_lock(&co_lock);
	co_thread_running = 0;
	/* drop whatever never ran */
	for (int b = 0; b < NHASH; b++) {
		struct strcallout *co = co_hash[b], *n;
		for (; co != NULL; co = n) {
			n = co->co_hnext;
			if (co->co_state != CO_DEFERRED &&
			    co->co_state != CO_RUNNING)
				free(co);
		}
		co_hash[b] = NULL;
	}
	free(co_heap);
	co_heap = NULL;
	co_nheap = co_heapcap = 0;
	co_bufq = NULL;
	co_nbuf = 0;
	co_readyh = co_readyt = NULL;
	pthread_mutex_unlock(&co_lock);
}

/* fork(): the heap, the lists and the hash are copied whole, never in
 * the middle of a change (the callout thread changes them under co_lock
 * outside any entry, so the fork gate alone does not stop it).  Taken
 * before the depot locks: the callout thread frees under co_lock. */
void strtimer_atfork_prepare(void)
{
	pthread_mutex_lock(&co_lock);
}

void strtimer_atfork_parent(void)
{
	pthread_mutex_unlock(&co_lock);
}

/* Timeouts or bufcalls waiting (co_lock held, or the fork child's sole
 * thread) */
static bool callouts_waiting(void)
{
	return co_nheap > 0 || co_bufq != NULL || co_readyh != NULL;
}

/* (after the parent handler, which let co_lock go)  The child's copies
 * of the parent's timeouts and bufcalls (a module's timer, a pipe's
 * bufcall) get a thread of their own at the child's first entry, not
 * here: by then the fork handlers (ours, a later library's) have run --
 * unless one of them enters the library itself -- so none runs while a
 * handler still rebuilds what it uses; a child that never calls the
 * library never runs them. */
void strtimer_atfork_child(void)
{
	pthread_cond_init(&co_done, NULL);
	co_thread_running = 0;
	if (callouts_waiting())
		__atomic_or_fetch(&str_entry_slow, STR_ENTRY_CHILD,
				  __ATOMIC_RELAXED);
}

/* str_enter_slow, the child's first entry */
void strtimer_child_start(void)
{
	pthread_mutex_lock(&co_lock);
	if (callouts_waiting())
		ensure_thread();
	pthread_mutex_unlock(&co_lock);
}
