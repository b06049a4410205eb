/*
 * t.h -- the checks every test program uses.  A failed check prints where
 * and what, the program goes on, and T_DONE() exits non-zero if anything
 * failed.  Values are printed so a failure says what was seen.
 */
#ifndef STREAMS_TEST_T_H
#define STREAMS_TEST_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed, t_checked;

/* T_TSAN: built with ThreadSanitizer; T_SANITIZED: with it or with
 * AddressSanitizer.  Checks of how fast something happens (a writer
 * streaming, a message sent before a tick) cannot hold in those builds,
 * which run several times slower: they are skipped there, and say so. */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif
#ifndef T_TSAN
#define T_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define T_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_SANITIZED 1
#endif
#endif
#ifndef T_SANITIZED
#define T_SANITIZED T_TSAN
#endif

#define CHECK(c) do {							\
	t_checked++;							\
	if (!(c)) {							\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #c); \
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	t_checked++;							\
	if (_a != _b) {							\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s == %s (%lld != %lld)\n", \
			__FILE__, __LINE__, #a, #b, _a, _b);		\
	}								\
} while (0)

#define CHECK_PTR(a, b) do {						\
	const void *_a = (const void *)(a), *_b = (const void *)(b);	\
	t_checked++;							\
	if (_a != _b) {							\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s == %s (%p != %p)\n",	\
			__FILE__, __LINE__, #a, #b, _a, _b);		\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *_a = (a), *_b = (b);				\
	t_checked++;							\
	if (strcmp(_a, _b) != 0) {					\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s == %s (\"%s\" != \"%s\")\n", \
			__FILE__, __LINE__, #a, #b, _a, _b);		\
	}								\
} while (0)

/* Must hold for the test to make sense at all. */
#define REQUIRE(c) do {							\
	t_checked++;							\
	if (!(c)) {							\
		fprintf(stderr, "%s:%d: FATAL: %s\n", __FILE__, __LINE__, #c); \
		exit(1);						\
	}								\
} while (0)

#define T_DONE() do {							\
	printf("%s: %d checks, %d failed\n", __FILE__, t_checked, t_failed); \
	return t_failed ? 1 : 0;					\
} while (0)

/*
 * n children, one after the other, each exiting with child()'s value:
 * how many did not exit with 0 (each named on stderr), and in *hung how
 * many of those were killed after 5 s.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline int t_forks(int n, int (*child)(void), int *hung)
{
	int bad = 0;

	*hung = 0;
	for (int i = 0; i < n; i++) {
		int st = 0, waited = 0;
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0)
			_exit(child());
		while (waitpid(pid, &st, WNOHANG) == 0) {
			struct timespec ms = { 0, 1000000 };
			if (++waited > 5000) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				(*hung)++;
				st = 0;
				break;
			}
			nanosleep(&ms, NULL);
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			bad++;
			fprintf(stderr, "child %d: status %#x\n", i, st);
		}
	}
	return bad;
}

#endif
