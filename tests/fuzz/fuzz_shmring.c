/*
 * fuzz_shmring -- libFuzzer target for the records of the shared-memory
 * rings (src/drivers/shmring.c): what another process may have written
 * into a STREAMS pipe's ring.
 *
 * How this works
 * --------------
 * The input, padded with zeros to a multiple of 8 and cut at half a
 * ring, is written raw into ring 0 of a segment as if a producer had
 * put it there (shr_put_raw); then shr_get takes messages until the ring
 * is empty or it reports a broken record.  Every message it returns must
 * be one a ring carries (shr_carries) and must come back the same
 * through shr_put and shr_get on ring 1.  A broken record must leave
 * ring 0 empty.  The same input also goes into a second segment, read
 * in step by a stream head's direct read (shr_get_data, with a room that
 * changes from record to record and a copy that fails now and then,
 * shr_get when it declines): what it takes must be what shr_get took
 * from the first, a one-block M_DATA message in band 0 with no flags; a
 * failed copy must leave the record.  Crashes, sanitizer reports and
 * leaks are what libFuzzer reports; a broken invariant traps.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stream.h>
#include <sys/strexec.h>
#include "shmring.h"

#define MUST(c) do { if (!(c)) __builtin_trap(); } while (0)

static struct shr_seg seg, seg2;
static unsigned char buf[256 * 1024], out[256 * 1024];
static unsigned ncopy;

/* shr_get_data's copy: as sth_ucopy, but every fifth call faults */
static int copy_some(void *dst, const void *src, size_t n)
{
	if (++ncopy % 5 == 0)
		return EFAULT;
	memcpy(dst, src, n);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	streams_set_workers(0);
	MUST(shr_create(&seg, &fd) == 0);	/* fd kept for the run */
	MUST(shr_create(&seg2, &fd) == 0);
	return 0;
}

static bool same(const mblk_t *a, const mblk_t *b)
{
	if (a->b_band != b->b_band || a->b_flag != b->b_flag)
		return false;
	for (; a != NULL && b != NULL; a = a->b_cont, b = b->b_cont) {
		if (a->b_datap->db_type != b->b_datap->db_type ||
		    MBLKL(a) != MBLKL(b) ||
		    memcmp(a->b_rptr, b->b_rptr, MBLKL(a)) != 0)
			return false;
	}
	return a == NULL && b == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < shr_maxrec(&seg) ? size : shr_maxrec(&seg);
	size_t len = (n + 7) & ~(size_t)7;
	mblk_t *mp;
	int err;

	memcpy(buf, data, n);
	memset(buf + n, 0, len - n);
	MUST(shr_put_raw(&seg, 0, buf, len));
	MUST(shr_put_raw(&seg2, 0, buf, len));
	for (unsigned k = 0;; k++) {
		size_t room = k % 3 == 0 ? 16 : sizeof(out);
		mblk_t *back, *mp2 = NULL;
		ssize_t got;
		size_t need;
		int err2 = 0;

		got = shr_get_data(&seg2, 0, out, room, copy_some);
		if (got == -EFAULT)	/* left in place: again */
			got = shr_get_data(&seg2, 0, out, room, copy_some);
		MUST(got >= 0 && (size_t)got <= room);
		if (got == 0)
			mp2 = shr_get(&seg2, 0, &err2);
		if ((mp = shr_get(&seg, 0, &err)) == NULL) {
			MUST(got == 0 && mp2 == NULL && err2 == err);
			break;
		}
		if (got > 0)
			MUST(mp->b_datap->db_type == M_DATA &&
			     mp->b_cont == NULL && mp->b_band == 0 &&
			     mp->b_flag == 0 && MBLKL(mp) == (size_t)got &&
			     memcmp(mp->b_rptr, out, (size_t)got) == 0);
		else
			MUST(mp2 != NULL && same(mp, mp2));
		freemsg(mp2);
		MUST(err == 0 && shr_carries(mp));
		need = shr_recsize(&seg, mp);
		MUST(need != 0 && shr_room(&seg, 1, need));
		shr_put(&seg, 1, mp);
		back = shr_get(&seg, 1, &err);
		MUST(back != NULL && same(mp, back));
		MUST(!shr_peek(&seg, 1));
		freemsg(back);
		freemsg(mp);
	}
	/* (no allocation of half a ring or less fails here) */
	MUST(err == EPROTO || err == 0);
	MUST(!shr_peek(&seg, 0));
	MUST(!shr_peek(&seg2, 0));
	return 0;
}
