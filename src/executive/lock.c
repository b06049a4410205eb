/*
 * lock.c -- the executive's mutex (strlock_t) and futex helpers.
 *
 * A strlock is one int: 0 free, 1 locked, 2 locked and someone may sleep.
 * The fast paths are inline in strsubr.h (one CAS to lock, one exchange to
 * unlock).  The slow path spins briefly, since critical sections are a few
 * dozen instructions, then sleeps on the futex.
 *
 * A biased lock (struct strblock) wraps a strlock for data that one thread
 * nearly always takes alone (the stream head's reader lock).  After a
 * thread has taken it STRBLOCK_FIRST times in a row it gets the bias: it
 * then takes the lock by announcing itself in its own t_bheld and
 * checking that the bias is still its own, lets go with a plain store,
 * and no locked instruction is executed.  Any other thread takes the
 * strlock, clears the bias, makes every thread of the process execute a
 * full barrier (membarrier(2), as rcu.c does) and waits while the old
 * holder's t_bheld names the lock: either the holder saw the bias gone
 * and took the slow path, or it is inside and will leave.  Each
 * revocation doubles the takings in a row that earn a new bias, so locks
 * that threads share stop being biased at all.  Without membarrier (and
 * under ThreadSanitizer) the fast path uses sequentially consistent
 * accesses instead of the barrier: correct, just not free.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "strsubr.h"

int str_futex_wait(int *addr, int val, const struct timespec *abs_mono)
{
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
	long r = syscall(SYS_futex, addr, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG,
			 val, abs_mono, NULL, FUTEX_BITSET_MATCH_ANY);
	return r == 0 ? 0 : errno;
}

void str_futex_wake(int *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL,
		NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

void strlock_slow(strlock_t *l)
{
	for (int spin = 0; spin < 100; spin++) {
		int v = __atomic_load_n(l, __ATOMIC_RELAXED);
		if (v == 0) {
			int z = 0;
			if (__atomic_compare_exchange_n(l, &z, 1, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return;
		} else if (v == 2) {
			break;
		}
		cpu_relax();
	}
	/* Mark contended; sleep until we take it as contended. */
	while (__atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE) != 0)
		str_futex_wait(l, 2, NULL);
}

void strunlock_slow(strlock_t *l)
{
	/* Value was 2: the lock is now 0; wake one sleeper. */
	str_futex_wake(l, 1);
}

/* ---- biased locks (strsubr.h explains them) ---- */

#define STRBLOCK_FIRST	16		/* takings in a row for a first bias */
#define STRBLOCK_MAX	(1u << 20)	/* ... after many revocations */

/* Take the bias from its holder o (b_lock held): after the barrier o
 * either sees b_bias changed or has announced itself in t_bheld, and is
 * then waited for -- or, for a trylock (!wait), given the bias back
 * (it is inside: the lock is its, and a later taker must still revoke
 * and wait).  The wait yields the CPU, then sleeps: the holder may be
 * inside for long (a page fault on the reader's buffer, its spin). */
static bool bias_revoke(struct strblock *b, struct strthread *o, bool wait)
{
	atomic_store_explicit(&b->b_bias, NULL, memory_order_seq_cst);
#if !STR_TSAN
	if (str_rcu_membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
	if (atomic_load_explicit(&o->t_bheld, memory_order_seq_cst) == b &&
	    !wait) {
		atomic_store_explicit(&b->b_bias, o, memory_order_release);
		return false;
	}
	b->b_need = b->b_need < STRBLOCK_MAX / 2 ? b->b_need * 2 :
		STRBLOCK_MAX;
	b->b_run = 0;
	STRSTAT(ST_BIAS_REVOKES);
	for (int i = 0; atomic_load_explicit(&o->t_bheld,
					     memory_order_seq_cst) == b; i++) {
		if (i < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 50000 };
			nanosleep(&ts, NULL);
		}
	}
	return true;
}

/* b_lock is held by t: count the taking, give t the bias when it has
 * taken the lock often enough in a row. */
static void taken(struct strblock *b, struct strthread *t)
{
	if (b->b_need == 0)
		b->b_need = STRBLOCK_FIRST;
	if (b->b_last != t) {
		b->b_last = t;
		b->b_run = 0;
	}
	if (++b->b_run >= b->b_need &&
	    atomic_load_explicit(&b->b_bias, memory_order_relaxed) == NULL) {
		atomic_store_explicit(&b->b_bias, t, memory_order_release);
		strstat_add(t, ST_BIAS_GRANTS, 1);
	}
}

void strblock_lock_slow(struct strblock *b, struct strthread *t)
{
	struct strthread *o;

	strlock(&b->b_lock);
	o = atomic_load_explicit(&b->b_bias, memory_order_relaxed);
	if (o != NULL && o != t)
		bias_revoke(b, o, true);
	taken(b, t);
	atomic_store_explicit(&b->b_owner, t, memory_order_relaxed);
}

bool strblock_trylock_slow(struct strblock *b, struct strthread *t)
{
	struct strthread *o;

	if (!strtrylock(&b->b_lock))
		return false;
	o = atomic_load_explicit(&b->b_bias, memory_order_relaxed);
	if (o != NULL && o != t && !bias_revoke(b, o, false)) {
		/* its holder is inside: the lock is not ours */
		strunlock(&b->b_lock);
		return false;
	}
	taken(b, t);
	atomic_store_explicit(&b->b_owner, t, memory_order_relaxed);
	return true;
}
