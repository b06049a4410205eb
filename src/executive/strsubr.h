/*
 * strsubr.h -- the private framework of the STREAMS executive.
 *
 * How the executive works
 * -----------------------
 * One executive per process.  A stream is a chain of queue pairs: the
 * stream head's pair at the top, pushed modules below it, a driver at the
 * bottom.  Messages move by put procedures (called in the caller's thread)
 * and by service procedures (run by the scheduler, sched.c).
 *
 * Entries.  Every thread that touches queues does so between str_enter()
 * and str_exit() (the stream head, the scheduler and the timer callbacks
 * do this for modules).  An entry is a read-side critical section of a
 * quiescent-state scheme (rcu.c): plumbing changes (pop, close, unlink)
 * unhook queues, wait one grace period for every entry in progress to end,
 * and only then close and free them.  So putnext() reads q_next without a
 * lock.  Entries never sleep; code that must sleep leaves its entry first.
 *
 * Perimeters (perim.c).  Modules without D_MP run inside a perimeter: a
 * syncq shared per queue pair (default, D_MTQPAIR), per queue (D_MTPERQ)
 * or per module (D_MTPERMOD).  A thread that finds the perimeter busy does
 * not wait: it leaves the call (put, service, callback) on the syncq and
 * the thread inside runs it before leaving.  No deadlock, order kept.
 *
 * Lock order (outer to inner):
 *	registry lock (reg.c)
 *	stream plumbing mutex (sd_plumb)
 *	perimeter (a state, never held while waiting on anything below)
 *	queue lock (q_lock)  -- one queue at a time, never two
 *	run list locks (sched.c), callout lock (timer.c), stats registry lock
 * Message allocation (mem.c) takes no lock on its fast path.
 */
#ifndef STREAMS_STRSUBR_H
#define STREAMS_STRSUBR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>
#include <sys/stream.h>
#include <sys/strconf.h>
#include <sys/strexec.h>

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* Thread-locals read on every message: the initial-exec model makes each
 * read one %fs-relative load instead of a call to __tls_get_addr (the
 * general model a shared library gets; 12-15 calls per write+read on a
 * pipe, 170 instructions).  They come out of the static TLS block, which
 * glibc keeps room in for libraries loaded later (dlopen) as well: these
 * are a few pointers. */
#define STR_TLS_IE	__attribute__((tls_model("initial-exec")))

#if defined(__SANITIZE_THREAD__)
#define STR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STR_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define STR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STR_ASAN 1
#endif
#endif

/* ------------------------------------------------------------------ */
/* Locks (lock.c): a word-sized mutex that spins briefly, then sleeps on
 * a futex.  0 free, 1 locked, 2 locked with sleepers.                  */
/* ------------------------------------------------------------------ */

typedef int strlock_t;
#define STRLOCK_INIT 0

void strlock_slow(strlock_t *l);
void strunlock_slow(strlock_t *l);

static inline void strlock(strlock_t *l)
{
	int z = 0;
	if (likely(__atomic_compare_exchange_n(l, &z, 1, false,
			__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		return;
	strlock_slow(l);
}

static inline bool strtrylock(strlock_t *l)
{
	int z = 0;
	return __atomic_compare_exchange_n(l, &z, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void strunlock(strlock_t *l)
{
	if (likely(__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) == 1))
		return;
	strunlock_slow(l);
}

/* pthread_create for the executive's own threads, returning once the
 * thread runs, named name (thread.c) */
int str_thread_create(pthread_t *t, const pthread_attr_t *a,
		      void *(*fn)(void *), void *arg, const char *name);

/* Nanoseconds on CLOCK_MONOTONIC (the vDSO: no system call). */
static inline uint64_t str_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* futex helpers (lock.c) */
int str_futex_wait(int *addr, int val, const struct timespec *abs_mono);
void str_futex_wake(int *addr, int n);

/* ------------------------------------------------------------------ */
/* Statistics (stats.c): per-thread counters, written only by their     */
/* thread with relaxed stores, summed by streams_stats().               */
/* ------------------------------------------------------------------ */

enum strstat_id {
	ST_MBLK_ALLOC, ST_MBLK_FREE, ST_DBLK_ALLOC, ST_DBLK_FREE,
	ST_ALLOC_FAIL, ST_ESB_FREE, ST_QUEUE_ALLOC,
	ST_QUEUE_FREE, ST_STREAM_ALLOC, ST_STREAM_FREE,
	ST_SVC_RUNS, ST_QENABLES, ST_BACKENABLES, ST_SYNCQ_DEFERS,
	ST_BUFCALLS, ST_BUFCALL_RUNS, ST_TIMEOUTS, ST_TIMEOUT_RUNS,
	ST_GRACE_PERIODS, ST_HEAP_NEW, ST_HEAP_FREE, ST_BIAS_GRANTS,
	ST_BIAS_REVOKES,
	ST_NCOUNTERS
};

/* ------------------------------------------------------------------ */
/* Per-thread state (thread.c)                                         */
/* ------------------------------------------------------------------ */

/* Allocation classes (mem.c): 0..6 data chunks (dblk + data, each
 * carrying a paired mblk), 7 dblk without data (esballoc), 8 mblks. */
#define STR_NDATACLASSES 7
#define STR_CLASS_ESB	7
#define STR_CLASS_MBLK	8
#define STR_NCLASSES	9
#define STR_CLASS_BIG	255	/* larger than the largest class: heap */
#define STR_MAGSIZE	128	/* per-thread cache slots per class */
#define STR_MAGBATCH	64	/* moved to and from the depot at once */

struct strmag {			/* per-thread cache of free objects */
	int count;
	void *slot[STR_MAGSIZE];
};

#define STR_NSIG_HELD	8	/* distinct (pid, signal) pairs held */

/* Work a thread does once it has left its outermost entry (str_defer):
 * the caller's storage, inside what the work frees. */
struct str_deferred {
	struct str_deferred *d_next;
	void (*d_fn)(struct str_deferred *);
};

struct strthread {
	struct strthread *t_next;	/* registry; thread registry lock */
	_Atomic unsigned long t_rcu;	/* 0 outside, odd inside (rcu.c);
					   written by this thread only */
	struct strblock *_Atomic t_bheld;	/* biased lock held on its
					   fast path (lock.c); this thread
					   writes, revokers read */
	int t_depth;			/* entry nesting; this thread */
	int t_worker;			/* this is a scheduler worker */
	unsigned long t_seq;		/* entry sequence; this thread */
	queue_t *t_runq_head;		/* local run list; this thread */
	queue_t *t_runq_tail;
	int t_running;			/* draining the local run list */
	_Atomic uint64_t t_stat[ST_NCOUNTERS];	/* this thread writes */
	struct strmag t_mag[STR_NCLASSES];	/* this thread */
	int t_batch;			/* str_batch_begin depth (batch.c);
					   this thread */
	int t_bn;			/* messages held for t_bq */
	struct queue *t_bq;		/* the queue they are for */
	struct msgb *t_bfirst, *t_blast;	/* the run (b_next) */
	void (*t_bfn)(struct queue *, struct msgb *, int, unsigned);
	unsigned t_bkey;		/* the run's key */
	int t_dead;			/* destructor ran */
	int t_tid;			/* kernel thread id */
	int t_nsig;			/* signals held for the outermost
					   exit (str_signal); this thread */
	struct { pid_t pid; int sig; } t_sig[STR_NSIG_HELD];
	struct str_deferred *t_defer;	/* str_defer's, newest first; this
					   thread */
	int t_nodefer;			/* library locks held outside an
					   entry (str_defer_block): what is
					   deferred waits; this thread */
};

extern __thread struct strthread *str_self_tls STR_TLS_IE;
struct strthread *str_thread_init(void);

static inline struct strthread *str_self(void)
{
	struct strthread *t = str_self_tls;
	if (unlikely(t == NULL))
		t = str_thread_init();
	return t;
}

/* Only the owning thread writes its counters: a relaxed load and store
 * is enough and costs no locked instruction. */
static inline void strstat_add(struct strthread *t, enum strstat_id id,
			       uint64_t n)
{
	uint64_t v = atomic_load_explicit(&t->t_stat[id], memory_order_relaxed);
	atomic_store_explicit(&t->t_stat[id], v + n, memory_order_relaxed);
}
#define STRSTAT(id)	strstat_add(str_self(), (id), 1)

void strstat_fold(struct strthread *t);	/* at thread exit */

/* ------------------------------------------------------------------ */
/* Biased locks (lock.c)                                               */
/* ------------------------------------------------------------------ */

/*
 * A lock that one thread, the one that has taken it many times in a row,
 * takes and lets go with plain stores: its "bias".  Any other thread
 * takes b_lock and revokes the bias first (membarrier, then waits for the
 * holder to leave).  For a stream read by one thread (the stream head's
 * reader lock) that removes two locked instructions per read.
 */
struct strblock {
	struct strthread *_Atomic b_bias;	/* NULL or the thread that may
						   take the fast path; set
						   under b_lock, atomic */
	strlock_t b_lock;		/* every other taking */
	struct strthread *_Atomic b_owner;	/* who holds b_lock (NULL:
						   nobody); its holder
						   writes, atomic */
	struct strthread *b_last;	/* last taker by b_lock; b_lock */
	unsigned int b_run;		/* its takings in a row; b_lock */
	unsigned int b_need;		/* takings in a row that earn the bias:
					   doubles at each revocation; b_lock */
};

/* read by every entry: hidden, so a load of the variable itself rather
 * than of its address from the GOT first */
extern int str_rcu_membarrier	/* membarrier(2) usable: cheap entries */
	__attribute__((visibility("hidden")));

void strblock_lock_slow(struct strblock *b, struct strthread *t);
bool strblock_trylock_slow(struct strblock *b, struct strthread *t);

/* The bias holder's fast path: announce (t_bheld), then look again at
 * the bias.  A revoker clears b_bias, makes every thread execute a full
 * barrier (membarrier), then waits while t_bheld names the lock: either
 * it sees the announcement or the holder sees the bias gone. */
static inline bool strblock_fast(struct strblock *b, struct strthread *t)
{
	if (atomic_load_explicit(&b->b_bias, memory_order_relaxed) != t ||
	    atomic_load_explicit(&t->t_bheld, memory_order_relaxed) != NULL)
		return false;
#if !STR_TSAN
	if (likely(str_rcu_membarrier)) {
		atomic_store_explicit(&t->t_bheld, b, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		if (likely(atomic_load_explicit(&b->b_bias,
						memory_order_acquire) == t))
			return true;
		atomic_store_explicit(&t->t_bheld, NULL, memory_order_release);
		return false;
	}
#endif
	atomic_store_explicit(&t->t_bheld, b, memory_order_seq_cst);
	if (atomic_load_explicit(&b->b_bias, memory_order_seq_cst) == t)
		return true;
	atomic_store_explicit(&t->t_bheld, NULL, memory_order_release);
	return false;
}

static inline void strblock_lock(struct strblock *b)
{
	struct strthread *t = str_self();

	if (!strblock_fast(b, t))
		strblock_lock_slow(b, t);
}

/* Fails for a thread that holds b already, as a plain lock's would. */
static inline bool strblock_trylock(struct strblock *b)
{
	struct strthread *t = str_self();

	if (atomic_load_explicit(&t->t_bheld, memory_order_relaxed) == b ||
	    atomic_load_explicit(&b->b_owner, memory_order_relaxed) == t)
		return false;
	return strblock_fast(b, t) || strblock_trylock_slow(b, t);
}

static inline void strblock_unlock(struct strblock *b)
{
	struct strthread *t = str_self();

	if (atomic_load_explicit(&t->t_bheld, memory_order_relaxed) == b) {
		atomic_store_explicit(&t->t_bheld, NULL, memory_order_release);
	} else {
		atomic_store_explicit(&b->b_owner, NULL, memory_order_relaxed);
		strunlock(&b->b_lock);
	}
}

/* ------------------------------------------------------------------ */
/* Entries and grace periods (rcu.c)                                   */
/* ------------------------------------------------------------------ */

void str_exit_slow(struct strthread *t);
/* Send sig to pid (0: the calling thread) once the caller has left its
 * outermost entry: a handler run at once would run inside library code,
 * under its locks (a SIGPOLL handler reading the stream whose reader
 * lock the signalling read holds).  Outside any entry it is sent now. */
void str_signal(pid_t pid, int sig);
/* fn(d) once the caller has left its outermost entry, in the order
 * asked (at once outside any): what must not run inside one, such as
 * the close of a stream (its grace period would wait for the caller). */
void str_defer(struct str_deferred *d, void (*fn)(struct str_deferred *));
/* The signals and work t held, now that it is outside every entry and
 * library lock (else nothing: they wait for that). */
void str_defer_flush(struct strthread *t);
/* Around a library lock held outside an entry (the stream head's link
 * and plumbing locks): deferred signals and work wait until it is let
 * go (a deferred close takes those locks; a handler may too). */
void str_defer_block(void);
void str_defer_unblock(void);
/* What an entry must do beyond its two stores (rcu.c), read once by every
 * entry after it has published itself: */
#define STR_ENTRY_FENCE	1	/* no membarrier: a full fence (exchange) */
#define STR_ENTRY_FORK	2	/* fork's gate is closed: wait outside */
#define STR_ENTRY_CHILD	4	/* a fork child's first entry: start what
				   the child needs (timer.c) */
extern int str_entry_slow	/* futex word (for STR_ENTRY_FORK) */
	__attribute__((visibility("hidden")));
void str_enter_slow(struct strthread *t);
void str_fork_prepare(void);
void str_fork_parent(void);
void str_fork_child(void);

static inline struct strthread *str_enter(void)
{
	struct strthread *t = str_self();
	if (t->t_depth++ == 0) {
		unsigned long v = (++t->t_seq << 1) | 1;
#if STR_TSAN
		/* TSan models neither membarrier nor fences: a seq_cst
		 * exchange orders this store before the entry's loads */
		atomic_exchange_explicit(&t->t_rcu, v, memory_order_seq_cst);
#else
		atomic_store_explicit(&t->t_rcu, v, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
#endif
		if (unlikely(__atomic_load_n(&str_entry_slow,
					     __ATOMIC_RELAXED)))
			str_enter_slow(t);
	}
	return t;
}

static inline void str_exit(struct strthread *t)
{
	if (t->t_depth == 1 && (t->t_runq_head != NULL || t->t_nsig != 0 ||
				t->t_defer != NULL)) {
		str_exit_slow(t);
		return;
	}
	if (--t->t_depth == 0)
		atomic_store_explicit(&t->t_rcu, 0, memory_order_release);
}

static inline bool str_inside(void)
{
	struct strthread *t = str_self_tls;
	return t != NULL && t->t_depth > 0;
}

/* Wait until every entry in progress when called has ended.  Must be
 * called outside any entry. */
void str_synchronize(void);

/* ------------------------------------------------------------------ */
/* Perimeters (perim.c)                                                */
/* ------------------------------------------------------------------ */

/* sq_state: 0 free, 1 busy, 2 busy with deferred work on the list. */
struct strsyncq {
	int sq_state;			/* atomic */
	strlock_t sq_lock;		/* protects the deferred list */
	mblk_t *sq_mhead, *sq_mtail;	/* deferred puts (b_next, b_queue) */
	queue_t *sq_qhead, *sq_qtail;	/* deferred service runs (q_link) */
	struct strcallout *sq_chead, *sq_ctail;	/* deferred callbacks */
	int sq_owner;			/* tid inside, for qwriter/debug */
	int sq_waiters;			/* blocking enters waiting (futex) */
	int sq_refs;			/* users of this syncq */
};

struct strsyncq *strsyncq_alloc(void);
void strsyncq_release(struct strsyncq *sq);

/* Non-blocking: true if now inside (must call strperim_exit), false if
 * the work was left on the syncq. */
bool strperim_enter_put(struct strsyncq *sq, queue_t *q, mblk_t *mp);
bool strperim_enter_svc(struct strsyncq *sq, queue_t *q);
bool strperim_enter_callout(struct strsyncq *sq, struct strcallout *co);
/* Blocking enter for open/close and plumbing. */
void strperim_enter_wait(struct strsyncq *sq);
void strperim_exit(struct strsyncq *sq);

/* ------------------------------------------------------------------ */
/* Queues and streams (stream.c, queue.c)                              */
/* ------------------------------------------------------------------ */

/* q_sflag, private queue state (q lock) */
#define QS_SVCDEFER	0x0002	/* service deferred on a syncq */
#define QS_OPENED	0x0004	/* open procedure succeeded */
#define QS_FREEZEWAIT	0x0008

/* A queue pair: read queue first so that OTHERQ is pointer arithmetic. */
struct strqpair {
	queue_t qp_q[2];		/* [0] read, [1] write */
	struct strsyncq *qp_syncq;	/* pair perimeter or NULL */
	struct module_stat qp_mstat[2];
	int qp_kind;			/* QP_HEAD, QP_MOD, QP_DRV, QP_MUX */
	void *qp_mod;			/* fmodsw or cdevsw */
	int qp_anchor;			/* I_ANCHOR set here */
};
#define QP_HEAD 1
#define QP_MOD	2
#define QP_DRV	3
#define QP_MUX	4

/* Is q the read queue of its pair?  QREADR never changes, but other bits
 * of q_flag do, under q's lock: read the word atomically. */
static inline bool q_isread(const queue_t *q)
{
	return (__atomic_load_n(&q->q_flag, __ATOMIC_RELAXED) & QREADR) != 0;
}

static inline struct strqpair *q_pair(queue_t *q)
{
	return (struct strqpair *)(RD(q));
}

/*
 * A stream.  The executive owns the plumbing fields; the stream head
 * (src/head) owns the sd_h* fields through its own header.
 */
struct stdata {
	queue_t *sd_rq;			/* stream head read queue; fixed */
	queue_t *sd_wq;			/* stream head write queue; fixed */
	pthread_mutex_t sd_plumb;	/* push, pop, link, close */
	int sd_pushcnt;			/* modules pushed; sd_plumb */
	int sd_anchor;			/* I_ANCHOR position; sd_plumb */
	int sd_frozen;			/* tid of freezestr holder; atomic */
	struct cdevsw *sd_cdev;		/* driver; fixed after open */
	dev_t sd_dev;			/* device; fixed after open */
	unsigned int sd_eflag;		/* SDE_* executive flags; sd_plumb */
	int sd_refs;			/* references; atomic */
	struct stdata *sd_all_next;	/* list of all streams; streams lock */
	struct stdata *sd_all_prev;
	void *sd_head;			/* stream head state (src/head) */
	struct strkev *sd_kev;		/* the driver's kernel event source a
					   head may pull from before waiting;
					   set by the driver (atomic) */
	int sd_kevwant;			/* who waits for the driver's wake-up:
					   sleeping readers and pollers, plus
					   one for good once epoll or SIGPOLL
					   watches; while > 0 a driver serving
					   its kernel source arms the next
					   wake-up; the head's, atomic */
	int sd_kevwatch;		/* epoll/SIGPOLL counted; atomic */
	void (*sd_head_free)(struct stdata *);
};

#define SDE_CLOSING	0x01
#define SDE_PLINKED	0x02	/* persistently linked below a mux */
#define SDE_LINKED	0x04	/* linked below a mux */

/* Allocate a stream with a head queue pair using the given qinits.  The
 * stream holds one reference. */
struct stdata *str_stream_alloc(struct qinit *rinit, struct qinit *winit);
/* The same, for a caller whose structure starts with struct stdata. */
struct stdata *str_stream_alloc_size(struct qinit *rinit, struct qinit *winit,
				     size_t size);
void str_stream_hold(struct stdata *sd);
void str_stream_rele(struct stdata *sd);

/* Open the driver below the head of sd (d_str of cdev) with *devp; on
 * success the driver pair is linked below the head and its procedures
 * are on.  sflag: DRVOPEN or CLONEOPEN.  0 or errno. */
int str_open_driver(struct stdata *sd, struct cdevsw *cdev, dev_t *devp,
		    int oflag, int sflag, cred_t *cr);
/* Push module f immediately below the stream head; 0 or errno. */
int str_attach_driver(struct stdata *sd, struct cdevsw *cdev, void *priv,
		      queue_t *lowest_wq, queue_t *up_rq, cred_t *cr);
int str_push(struct stdata *sd, struct fmodsw *f, dev_t *devp, int oflag,
	     cred_t *cr);
/* Pop the module immediately below the stream head; 0 or errno. */
int str_pop(struct stdata *sd, int oflag, cred_t *cr);
/* Pop every module and close the driver; frees the queues. */
void str_close_all(struct stdata *sd, int oflag, cred_t *cr);
/* Close and free one queue pair already unhooked from any flow. */
void str_qdetach(queue_t *rq, int oflag, cred_t *cr);
/* The queue pair of the driver or of the topmost module (below head). */
queue_t *str_top(struct stdata *sd);

/* Freeze helpers for queue ops (freezestr holds every q_lock). */
extern __thread struct stdata *str_frozen_tls STR_TLS_IE;
static inline void qlock(queue_t *q)
{
	if (unlikely(str_frozen_tls != NULL) && q->q_stream == str_frozen_tls)
		return;
	strlock(&q->q_lock);
}
static inline void qunlock(queue_t *q)
{
	if (unlikely(str_frozen_tls != NULL) && q->q_stream == str_frozen_tls)
		return;
	strunlock(&q->q_lock);
}

/* A control message of type without parameters, as putctl makes it:
 * for one that must be had ahead of its use (a hangup a close sends);
 * NULL without memory. */
mblk_t *str_ctlmsg(int type);

/* Credentials of the calling process. */
void str_getcred(cred_t *cr);
/* A copy of *cr (zero-filled as str_getcred makes it) that lives for
 * good: for pointers that outlive the caller (ioc_cr). */
cred_t *str_cred_keep(const cred_t *cr);

/* Allocate a queue pair with the given qinits; NULL on failure. */
queue_t *str_allocq(struct qinit *rinit, struct qinit *winit,
		    unsigned int flags, void *mod, int kind);
void str_freeq(queue_t *rq);
/* Set the qinits of a pair and its water marks from their module_info. */
void str_setq(queue_t *rq, struct qinit *rinit, struct qinit *winit);

/* Run q's service procedure (scheduler entry); handles perimeter. */
void str_runservice(queue_t *q);
/* Called inside the perimeter to run the service procedure of q. */
void str_svc_invoke(queue_t *q);
/* q's procedures: a linked stream's head queues change theirs under
 * running puts (str_setq). */
static inline struct qinit *q_info(queue_t *q)
{
	return __atomic_load_n(&q->q_qinfo, __ATOMIC_ACQUIRE);
}

static inline struct module_stat *q_stat(queue_t *q)
{
	return __atomic_load_n(&q->q_mstat, __ATOMIC_RELAXED);
}

/* Called inside the perimeter to run the put procedure of q. */
static inline void str_put_invoke(queue_t *q, mblk_t *mp)
{
	struct module_stat *ms = q_stat(q);

	if (unlikely(ms != NULL))
		__atomic_add_fetch(&ms->ms_pcnt, 1, __ATOMIC_RELAXED);
	q_info(q)->qi_putp(q, mp);
}

/* put() without entering: the caller is inside an entry. */
void str_put_slow(queue_t *q, mblk_t *mp);
static inline void str_put(queue_t *q, mblk_t *mp)
{
	if (likely(q->q_syncq == NULL &&
		   !(__atomic_load_n(&q->q_flag, __ATOMIC_RELAXED) &
		     QPROCSOFF))) {
		str_put_invoke(q, mp);
		return;
	}
	str_put_slow(q, mp);
}

/* Can a band above 0 be written below q (POLLWRBAND): one that exists
 * and is not full, or there is none yet. */
int str_bcanputnext_any(queue_t *q);
/* Every band of q is flow controlled as band 0 (QBANDFC): for a driver
 * that queues priority data in band 0, in line with the rest. */
void str_bandfc(queue_t *q);

/* getq, but only when match() accepts the first message (queue.c). */
mblk_t *str_getq_if(queue_t *q, bool (*match)(const mblk_t *, void *),
		    void *arg, bool *nonempty, bool *urgent_left);

/* The stream head's read cache (queue.c): take the run of plain band-0
 * messages (M_DATA, M_PROTO) at the front, which stay counted (their
 * b_prev and b_queue not yet cleared); give the bytes back as they are
 * read; put what is left back.  *seen is *gen (the head's flush
 * generation) read under the same lock hold as the take, and
 * str_flush_gen (flushq, or flushband when one_band) bumps *gen under
 * the lock hold of its flush: so a run taken before a flush is always
 * seen as older than it, and one taken after never. */
mblk_t *str_getq_run(queue_t *q, const unsigned *gen, unsigned *seen);
/* mp is one M_DATA block of 1..max bytes: what a read takes whole the
 * short way (str_getq_lone, sth_read.c's read_plain). */
static inline bool str_data_fits(const mblk_t *mp, size_t max)
{
	return mp->b_datap->db_type == M_DATA && mp->b_cont == NULL &&
	       mp->b_wptr > mp->b_rptr &&
	       (size_t)(mp->b_wptr - mp->b_rptr) <= max;
}

/* The stream head's short read of a lone message: q's only message when
 * it is one band-0 M_DATA block of 1..max bytes, taken off and uncounted
 * as getq takes it; NULL, nothing done, otherwise.  *seen is *gen read
 * under the same lock hold (as str_getq_run's). */
mblk_t *str_getq_lone(queue_t *q, size_t max, const unsigned *gen,
		      unsigned *seen);
/* putbq, unless flushed(mp, arg) says (under q's lock, where flushes
 * bump the counters it compares) that a flush came since mp was taken:
 * then mp is freed, as the flush would have freed it (also when a band
 * cannot be had).  True if put back.  For the stream head's readers,
 * who put back what they could not finish. */
bool str_putbq_unless(queue_t *q, mblk_t *mp,
		      bool (*flushed)(const mblk_t *, void *), void *arg);
/* flushq (flushband when one_band) bumping *gen and *gen2 (either may be
 * NULL) in the lock hold that empties the queue */
void str_flush_gen(queue_t *q, int flag, bool one_band, unsigned char band,
		   unsigned *gen, unsigned *gen2);

/* A byte stream's write coalescing (queue.c): mp's bytes (one M_DATA
 * block) appended to q's last message when that is a lone band-0 M_DATA
 * block of its own with room; true if done (free mp), else putq it. */
bool str_putq_append(queue_t *q, const mblk_t *mp);
/* Up to max messages from the front of q in one lock hold, as that many
 * getq calls would take them (stopping after one that back-enables, or
 * at an empty queue, marked QWANTR as getq does); how many (queue.c). */
int str_getq_n(queue_t *q, mblk_t **v, int max);
/* putq of one band-0, not high priority message; true if q was empty
 * before (queue.c) */
bool str_putq_one(queue_t *q, mblk_t *mp);
/* putq of a run of band-0, not high priority messages linked by b_next
 * (n of them), in one lock hold, only while *gen (if not NULL) is still
 * key (read under the queue lock, as str_flush_gen bumps it): false, and
 * nothing queued, when it is not.  *was_empty: q was empty before.  For
 * the stream head's batches. */
bool str_putq_run_gen(queue_t *q, mblk_t *first, int n, const unsigned *gen,
		      unsigned key, bool *was_empty);

/*
 * Deferred queueing (batch.c).  A thread that delivers many messages in a
 * row (the I/O thread with a batch of datagrams from one recvmmsg) opens
 * a batch; a put procedure that would putq an ordinary message and wake
 * the reader may instead hand it to str_batch_add, which keeps a run per
 * thread for one queue and gives it to fn (which queues it and wakes
 * once) when the batch ends, when the thread meets another queue, or when
 * str_batch_flush is called (before anything that must not overtake
 * it).  Runs only within an executive entry (the queue stays alive).
 */
typedef void (*str_batch_fn)(queue_t *q, mblk_t *first, int n,
			     unsigned key);
void str_batch_begin(void);
void str_batch_end(void);
void str_batch_flush_slow(struct strthread *t);
/* key: what the owner knows of its queue when mp comes (the head: its
 * read-side flush count); a new key starts a new run, and fn gets the
 * run's key (the head drops a run that a flush overtook) */
void str_batch_add_run(struct strthread *t, queue_t *q, mblk_t *mp,
		       str_batch_fn fn, unsigned key);
/* (inline: a put procedure asks on every message, and outside a batch,
 * nearly always, the answer is one load) */
static inline bool str_batch_add(queue_t *q, mblk_t *mp, str_batch_fn fn,
				 unsigned key)
{
	struct strthread *t = str_self_tls;

	if (t == NULL || t->t_batch == 0)
		return false;
	str_batch_add_run(t, q, mp, fn, key);
	return true;
}

/* Messages held in this thread's batch go out first. */
static inline void str_batch_flush(void)
{
	struct strthread *t = str_self_tls;

	if (unlikely(t != NULL && t->t_bn != 0))
		str_batch_flush_slow(t);
}
void str_qcredit(queue_t *q, unsigned long bytes, unsigned long blocks);
/* Put a run (b_next, still counted) back at the front of band 0, unless
 * *gen (bumped by a flush, under the queue lock) is no longer key: false
 * then, nothing done.  gen NULL: always. */
bool str_putbq_run(queue_t *q, mblk_t *run, const unsigned *gen,
		   unsigned key);

/* Back-enable the queue behind q (q has drained below low water). */
void str_backenable(queue_t *q, unsigned char band);

/* Scheduler (sched.c). */
void strsched_enable(queue_t *q);	/* q has QENAB set by caller */
void strsched_unschedule(queue_t *q);	/* remove from global list */
int strsched_run_local(struct strthread *t);
/* Run what this thread enabled, now, staying inside its entry (before a
 * caller spins or sleeps waiting for what those services would do). */
static inline void str_run_local(struct strthread *t)
{
	if (t->t_runq_head != NULL)
		strsched_run_local(t);
}
void strsched_start(void);
void strsched_wake(void);
void strsched_shutdown(void);
int strsched_run_global(int budget);
int strsched_pending(void);
void strsched_atfork_child(void);

/* Kernel event sources (kev.c): see the comment there. */
struct strkev {
	int ke_fd;			/* descriptor; fixed while attached */
	queue_t *ke_rq;			/* the driver's read queue; fixed */
	/* Called inside an entry: by the I/O thread with the events that
	 * came (POLLIN, POLLOUT, POLLHUP, POLLERR), or by a stream head
	 * with KEV_PULL or KEV_WAIT; must tolerate concurrent calls. */
	void (*ke_run)(struct strkev *ke, unsigned revents);
	/* Set by the driver (before it publishes sd_kev): a reader may
	 * sleep in poll() on ke_fd itself, because "ke_fd readable" always
	 * means a KEV_PULL moves something up (or reads an error: POLLERR
	 * comes with the KEV_PULL).  One wake-up per arrival, as a socket
	 * reader has, instead of the I/O thread's and then the head's. */
	int ke_direct;
	/* Set by the driver: until then (str_now_ns) a reader sleeps at
	 * once instead of spinning, because the source lost what it was
	 * sent while readers spun (a socket's drops: a sender beside the
	 * reader on its CPU is handed the time a spinning, yielding reader
	 * gives up, and overruns the socket); atomic */
	uint64_t ke_nospin_until;
	/* Set by the driver, or NULL: a write() of len bytes of
	 * application memory as one M_DATA message (b_flag flag), put
	 * straight where the driver's put procedure would put it, without
	 * a message block.  For a stream head whose write queue's q_next
	 * is the driver's write queue (no module between), once its flow
	 * control let the write go; copy is the head's copy from
	 * application memory.  1: done; 0: not now, nothing done (the
	 * head sends an ordinary message); or copy's errno, negated,
	 * nothing sent.  Called inside an entry. */
	int (*ke_write)(struct strkev *ke, const void *buf, size_t len,
			int flag, int (*copy)(void *, const void *, size_t));
	/* Set by the driver, or NULL: the reading side's counterpart, for
	 * a stream head whose read queue is the driver read queue's
	 * q_next and held nothing when it looked (the driver looks again
	 * under its own lock): the next message straight into
	 * application memory (len bytes of room) when it is one M_DATA
	 * block of band 0, no flags, that fits.  Its length; 0: not now,
	 * nothing done (the head pulls and reads the ordinary way); or
	 * copy's errno, negated, the message left.  Inside an entry. */
	ssize_t (*ke_read)(struct strkev *ke, void *buf, size_t len,
			   int (*copy)(void *, const void *, size_t));
	/* private to kev.c (kev_lock) */
	unsigned ke_slot;
	unsigned ke_gen;
	unsigned ke_armed;		/* POLLIN|POLLOUT armed now */
	int ke_attached;
};
/* ke_run's revents from a stream head: a reader wants what the source
 * has now (KEV_PULL), or is about to sleep, so the driver must also
 * arrange to be told when more comes (KEV_WAIT; the head counts itself
 * in sd_kevwant first, so whoever serves the wake-up arms the next one
 * while it sleeps). */
#define KEV_PULL	0x10000
#define KEV_WAIT	0x20000
/* A look at the stream head that is not a read (I_PEEK, I_NREAD: libxti
 * looks on every send): a driver may skip a system call when it knows
 * its source is empty. */
#define KEV_LOOK	0x40000
/* Register with the I/O thread (disarmed): 0 or -errno. */
int str_kev_attach(struct strkev *ke);
/* Ask for one report of events (POLLIN and/or POLLOUT; POLLRDHUP alone
 * asks for the hangup only, POLLERR alone for an error only). */
int str_kev_arm(struct strkev *ke, unsigned events);
/* The same, but no system call when those events are armed already. */
int str_kev_rearm(struct strkev *ke, unsigned events);
/* Unregister; on return the I/O thread no longer runs ke.  May be
 * called inside an entry (close procedures). */
void str_kev_detach(struct strkev *ke);
void strkev_shutdown(void);
void strkev_atfork_child(void);

/* Timers and bufcalls (timer.c). */
struct strcallout;
void strcallout_invoke(struct strcallout *co);	/* inside perimeter */
void strbufcall_kick(void);		/* memory was freed */
extern _Atomic int strbufcall_waiting;	/* bufcalls pending */
extern _Atomic uint64_t strmem_heap_fail_ns;	/* mem.c: heap refused */
void strtimer_shutdown(void);
/* qtimeout with a delay in nanoseconds instead of ticks (a provider's
 * retry that a tick would make too slow); cancelled with quntimeout. */
toid_t str_qtimeout_ns(queue_t *q, void (*func)(), void *arg, uint64_t ns);
/* fork: the stream head's short locks (none held across an entry), taken
 * after the gate closes (prepare true) and let go in the parent and the
 * child (false; init.c) */
extern void (*str_fork_heads)(bool prepare);
void str_fork_each_stream(void (*fn)(struct stdata *));
extern pthread_mutex_t str_all_lock;
void strtimer_atfork_prepare(void);
void strtimer_atfork_parent(void);
void strtimer_atfork_child(void);
/* A fork child's first entry (STR_ENTRY_CHILD): the callout thread for
 * the timeouts and bufcalls copied from the parent. */
void strtimer_child_start(void);
long str_lbolt(void);
void strcallout_cancel_queue(queue_t *q);

/* Memory accounting (mem.c). */
void strmem_thread_flush(struct strthread *t);
void strmem_shutdown(void);
void strmem_init(void);
void strmem_atfork_prepare(void);
void strmem_atfork_parent(void);

/* Registry (reg.c). */
int strreg_hold_mod(struct fmodsw *f);
void strreg_rele_mod(struct fmodsw *f);
int strreg_hold_dev(struct cdevsw *d);
void strreg_rele_dev(struct cdevsw *d);
extern pthread_mutex_t strreg_lock;

/* Perimeter for a module or driver entry with the given flags.  Returns
 * NULL for D_MP; *pair_shared says whether rq and wq share one. */
struct strsyncq *str_perim_for(unsigned int flags, struct strsyncq **modsq,
			       bool *per_queue);

/* Executive initialisation (init.c). */
void str_init(void);
void str_init_core(void);
extern int str_initialised;
extern int str_core_ready;
extern int str_shutting_down;

/* Debug checks: assertion that reports and aborts in debug builds, counts
 * and continues in release builds. */
void str_bad(const char *what, const void *ptr);
#ifdef STR_DEBUG
#define STR_ASSERT(c, what, p) do { if (unlikely(!(c))) str_bad(what, p); } while (0)
#else
#define STR_ASSERT(c, what, p) do { if (unlikely(!(c))) str_bad(what, p); } while (0)
#endif

#endif /* STREAMS_STRSUBR_H */
