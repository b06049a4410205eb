/*
 * lock.c -- the executive's mutex (strlock_t) and futex helpers.
 *
 * A strlock is one int: 0 free, 1 locked, 2 locked and someone may sleep.
 * The fast paths are inline in strsubr.h (one CAS to lock, one exchange to
 * unlock).  The slow path spins briefly, since critical sections are a few
 * dozen instructions, then sleeps on the futex.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
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
