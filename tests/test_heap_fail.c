/*
 * test_heap_fail -- what must work while the C heap refuses memory (no
 * memory limit set, so testb cannot tell):
 *   a bufcall whose callback cannot allocate either and sets the
 *   bufcall again is tried again at most about every 10 ms instead of
 *   at once, without end (it spun a CPU for as long as malloc failed);
 *   once memory is back it runs and gets its block;
 *   the close of a loop or pipe (spx) end hangs its partner up with a
 *   block allocated at open (the hangup was lost: the partner's reader
 *   slept for good), and the close of an s_pipe end its peer.
 * malloc is this program's own (it fails on demand), so the caches are
 * bypassed (STREAMS_NOCACHE) and sanitizer builds, which have their own
 * malloc, skip the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include <stropts.h>

#include "t.h"
#include "harness.h"

#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
extern void *__libc_malloc(size_t);
static _Atomic int heap_fails;

void *malloc(size_t n)
{
	if (atomic_load_explicit(&heap_fails, memory_order_relaxed))
		return NULL;
	return __libc_malloc(n);
}

static _Atomic int runs, got;

static void try_alloc(long size)
{
	mblk_t *mp = allocb((size_t)size, BPRI_MED);

	atomic_fetch_add(&runs, 1);
	if (mp == NULL) {
		if (bufcall((size_t)size, BPRI_MED, try_alloc, size) == 0)
			abort();	/* (calloc'd: not refused) */
		return;
	}
	freeb(mp);
	atomic_store(&got, 1);
}

static void on_timeout(void *arg)
{
	(void)arg;
}

/* a and b connected: a closed while the heap refuses, b hung up (reads
 * end of file, not EAGAIN) */
static void hangup_without_heap(int a, int b)
{
	char c;

	REQUIRE(a >= 0 && b >= 0);
	REQUIRE(fcntl(b, F_SETFL, O_NONBLOCK) == 0);
	CHECK_EQ(read(b, &c, 1) < 0 ? errno : 0, EAGAIN);
	atomic_store(&heap_fails, 1);
	int r = close(a);
	ssize_t n = read(b, &c, 1);
	atomic_store(&heap_fails, 0);
	CHECK_EQ(r, 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(close(b), 0);
}

static void test_hangups(void)
{
	/* (the first loop opened in this process: minors 0 and 1) */
	int a = open("/dev/streams/clone/loop", O_RDWR);
	int b = open("/dev/streams/loop/1", O_RDWR);

	hangup_without_heap(a, b);
	/* the SVR3 pipe: two opens connected with I_FDINSERT */
	a = open("/dev/streams/pipe", O_RDWR);
	b = open("/dev/streams/pipe", O_RDWR);
	REQUIRE(a >= 0 && b >= 0);
	void *slot = NULL;
	struct strfdinsert fi = { { 0, sizeof(void *), (char *)&slot },
				  { 0, -1, NULL }, 0, b, 0 };
	REQUIRE(ioctl(a, I_FDINSERT, &fi) == 0);
	hangup_without_heap(a, b);
	/* and s_pipe's (the peer gone is a flag of the head's) */
	int p[2];
	REQUIRE(s_pipe(p) == 0);
	hangup_without_heap(p[0], p[1]);
}

int main(void)
{
	setenv("STREAMS_NOCACHE", "1", 1);
	th_mark();
	/* the callout thread running first: its start needs the heap */
	REQUIRE(timeout(on_timeout, NULL, 1) != 0);
	freeb(allocb(64, BPRI_MED));

	atomic_store(&heap_fails, 1);
	REQUIRE(allocb(64, BPRI_MED) == NULL);
	REQUIRE(bufcall(64, BPRI_MED, try_alloc, 64) != 0);
	struct timespec ts = { 0, 300 * 1000000L };
	nanosleep(&ts, NULL);
	int n = atomic_load(&runs);
	atomic_store(&heap_fails, 0);
	CHECK(n >= 2);			/* tried again meanwhile */
	CHECK(n <= 60);			/* (about 30 in 300 ms) */
	for (int i = 0; i < 1000 && !atomic_load(&got); i++) {
		struct timespec ms = { 0, 1000000L };
		nanosleep(&ms, NULL);
	}
	CHECK_EQ(atomic_load(&got), 1);
	printf("callback runs while the heap refused (300 ms): %d\n", n);
	test_hangups();
	CHECK_EQ(th_leaks(), 0);	/* (the hangups' blocks: sent or freed) */
	T_DONE();
}
#else
int main(void)
{
	printf("SKIP: a sanitizer's malloc cannot be replaced\n");
	return 77;
}
#endif
