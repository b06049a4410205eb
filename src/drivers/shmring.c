/*
 * shmring.c -- message rings in shared memory (see shmring.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shmring.h"

#define HDRSIZE		4096u
#define ALIGN8(n)	(((n) + 7) & ~(size_t)7)

struct rec_hdr {
	uint32_t len;		/* whole record, multiple of 8 */
	uint16_t nblk;
	uint8_t band;
	uint8_t pad;
	uint32_t flag;		/* b_flag of the first block */
	uint32_t pad2;
};

struct blk_hdr {
	uint8_t type;
	uint8_t pad[3];
	uint32_t len;
};

#define MAXBLKS 64		/* blocks per message carried */

/* The b_flag bits a record carries; a record with any other is broken. */
#define REC_FLAGS	(MSGMARK | MSGDELIM)

/* Whether a message of this shape may be a record (shr_types in
 * shmring.h): the first block's type, then M_DATA blocks only; M_FLUSH
 * alone, 1 or 2 bytes of known bits; high priority in band 0. */
static bool rec_ok(unsigned char type, size_t nblk, const unsigned char *b,
		   size_t len, unsigned band)
{
	switch (type) {
	case M_DATA:
	case M_PROTO:
		return true;
	case M_PCPROTO:
	case M_PASSFP:
		return band == 0;
	case M_FLUSH:
		return band == 0 && nblk == 1 && (len == 1 || len == 2) &&
		       (b[0] & ~(FLUSHR | FLUSHW | FLUSHBAND)) == 0 &&
		       (len == 2 || !(b[0] & FLUSHBAND));
	default:
		return false;
	}
}

bool shr_carries(const mblk_t *mp)
{
	size_t nblk = 0;

	for (const mblk_t *bp = mp->b_cont; bp != NULL; bp = bp->b_cont) {
		if (bp->b_datap->db_type != M_DATA)
			return false;
		nblk++;
	}
	return rec_ok(mp->b_datap->db_type, nblk + 1, mp->b_rptr,
		      (size_t)(mp->b_wptr - mp->b_rptr),
		      mp->b_datap->db_type >= QPCTL ? 0 : mp->b_band);
}

static int map_rings(struct shr_seg *seg, int fd, size_t ringsize)
{
	size_t len = HDRSIZE + 4 * ringsize;
	unsigned char *base;

	/* reserve, then map the header once and each data area twice */
	base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (mmap(base, HDRSIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0) == MAP_FAILED)
		goto fail;
	for (int i = 0; i < 2; i++) {
		unsigned char *d = base + HDRSIZE + (size_t)i * 2 * ringsize;
		off_t off = (off_t)(HDRSIZE + (size_t)i * ringsize);

		if (mmap(d, ringsize, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, off) == MAP_FAILED ||
		    mmap(d + ringsize, ringsize, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, off) == MAP_FAILED)
			goto fail;
		seg->data[i] = d;
	}
	seg->map = base;
	seg->maplen = len;
	seg->hdr = (struct shr_hdr *)base;
	seg->ringsize = ringsize;
	return 0;
fail:;
	int err = -errno;
	munmap(base, len);
	return err;
}

#define SHR_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

int shr_create(struct shr_seg *seg, int *memfd)
{
	size_t ringsize = SHR_RINGSIZE;
	int fd, err;

	fd = memfd_create("streams-pipe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* sealed at its size: a peer process cannot shrink it under our
	 * mappings (our next access would be a SIGBUS) */
	if (ftruncate(fd, (off_t)(HDRSIZE + 2 * ringsize)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, SHR_SEALS) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if ((err = map_rings(seg, fd, ringsize)) != 0) {
		close(fd);
		return err;
	}
	memset(seg->hdr, 0, sizeof(*seg->hdr));
	seg->hdr->ringsize = (uint32_t)ringsize;
	seg->hdr->version = SHR_VERSION;
	__atomic_store_n(&seg->hdr->magic, SHR_MAGIC, __ATOMIC_RELEASE);
	*memfd = fd;
	return 0;
}

int shr_map(struct shr_seg *seg, int memfd)
{
	struct stat st;
	uint32_t hdr[3];
	size_t ringsize;

	if (fstat(memfd, &st) < 0)
		return -errno;
	int seals = fcntl(memfd, F_GET_SEALS);

	/* (not a memfd: -1, whose bits would all pass) */
	if (seals < 0 || (seals & SHR_SEALS) != SHR_SEALS)
		return -EPROTO;		/* it could shrink under us */
	if (pread(memfd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return -EPROTO;
	ringsize = hdr[2];
	if (hdr[0] != SHR_MAGIC || hdr[1] != SHR_VERSION ||
	    ringsize < 4096 || (ringsize & (ringsize - 1)) != 0 ||
	    ringsize > (1u << 30) ||
	    (size_t)st.st_size != HDRSIZE + 2 * ringsize)
		return -EPROTO;
	return map_rings(seg, memfd, ringsize);
}

void shr_unmap(struct shr_seg *seg)
{
	if (seg->map != NULL)
		munmap(seg->map, seg->maplen);
	memset(seg, 0, sizeof(*seg));
}

size_t shr_maxrec(const struct shr_seg *seg)
{
	return seg->ringsize / 2;
}

size_t shr_recsize(const struct shr_seg *seg, const mblk_t *mp)
{
	size_t n = sizeof(struct rec_hdr);
	int nblk = 0;

	for (const mblk_t *bp = mp; bp != NULL; bp = bp->b_cont) {
		size_t len = (size_t)(bp->b_wptr - bp->b_rptr);
		if (++nblk > MAXBLKS || len > shr_maxrec(seg))
			return 0;
		n += sizeof(struct blk_hdr) + ALIGN8(len);
		if (n > shr_maxrec(seg))
			return 0;
	}
	return n;
}

/* ---- locks ---- */

#define SHR_SLEEPERS	0x80000000u

static pid_t shr_pid;		/* this process's pid, 0 after fork; atomic */
static pthread_once_t shr_once = PTHREAD_ONCE_INIT;

static void forget_pid(void)
{
	shr_pid = 0;
}

static void pid_init(void)
{
	pthread_atfork(NULL, NULL, forget_pid);
}

static uint32_t my_pid(void)
{
	pid_t p = __atomic_load_n(&shr_pid, __ATOMIC_RELAXED);

	if (p == 0) {
		pthread_once(&shr_once, pid_init);
		p = getpid();
		__atomic_store_n(&shr_pid, p, __ATOMIC_RELAXED);
	}
	return (uint32_t)p;
}

static long futex(uint32_t *w, int op, uint32_t v, const struct timespec *t)
{
	return syscall(SYS_futex, w, op, v, t, NULL, 0);
}

static void lock_slow(uint32_t *l, uint32_t me)
{
	const struct timespec nap = { 0, 50 * 1000 * 1000 };

	for (int i = 0; i < 64; i++) {
		uint32_t z = 0;
		if (__atomic_load_n(l, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(l, &z, me, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	for (;;) {
		uint32_t v = __atomic_load_n(l, __ATOMIC_RELAXED);

		if (v == 0) {
			/* others may sleep: keep the mark when taking it */
			if (__atomic_compare_exchange_n(l, &v, me | SHR_SLEEPERS,
							false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return;
			continue;
		}
		if (!(v & SHR_SLEEPERS) &&
		    !__atomic_compare_exchange_n(l, &v, v | SHR_SLEEPERS, false,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		v |= SHR_SLEEPERS;
		if (futex(l, FUTEX_WAIT, v, &nap) < 0 && errno == ETIMEDOUT) {
			/* a holder that died never gives it back */
			pid_t owner = (pid_t)(v & ~SHR_SLEEPERS);
			if (owner != 0 && kill(owner, 0) < 0 &&
			    errno == ESRCH &&
			    __atomic_compare_exchange_n(l, &v,
							me | SHR_SLEEPERS, false,
							__ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return;
		}
	}
}

static inline void lock(uint32_t *l)
{
	uint32_t me = my_pid(), z = 0;

	if (__atomic_compare_exchange_n(l, &z, me, false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
		return;
	lock_slow(l, me);
}

static inline void unlock(uint32_t *l)
{
	if (__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) & SHR_SLEEPERS)
		futex(l, FUTEX_WAKE, 1, NULL);
}

void shr_plock(struct shr_seg *seg, int i)
{
	lock(&seg->hdr->ring[i].plock);
}

void shr_punlock(struct shr_seg *seg, int i)
{
	unlock(&seg->hdr->ring[i].plock);
}

void shr_clock(struct shr_seg *seg, int i)
{
	lock(&seg->hdr->ring[i].clock);
}

void shr_cunlock(struct shr_seg *seg, int i)
{
	unlock(&seg->hdr->ring[i].clock);
}

/* ---- producer ---- */

/* Free bytes of a ring whose producer is at tail and consumer at head;
 * 0 when they are further apart than the ring (a head seen long ago, or
 * positions a peer process corrupted). */
static size_t free_bytes(const struct shr_seg *seg, uint64_t tail,
			 uint64_t head)
{
	uint64_t used = tail - head;

	return used <= seg->ringsize ? seg->ringsize - (size_t)used : 0;
}

static size_t room(struct shr_seg *seg, int i)
{
	struct shr_ring *r = &seg->hdr->ring[i];
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_SEQ_CST);

	return free_bytes(seg, tail, head);
}

bool shr_room(struct shr_seg *seg, int i, size_t need)
{
	struct shr_ring *r = &seg->hdr->ring[i];
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);

	uint64_t head;

	/* the head seen last time first: no look at the consumer's line
	 * while the ring has room anyway (plock held: head_seen is ours).
	 * Another process holding this end may have produced more than a
	 * ring since this one last looked: then that head says nothing. */
	if (free_bytes(seg, tail, seg->head_seen[i]) >= need)
		return true;
	head = __atomic_load_n(&r->head, __ATOMIC_SEQ_CST);
	seg->head_seen[i] = head;
	return free_bytes(seg, tail, head) >= need;
}

void shr_wait_room(struct shr_seg *seg, int i)
{
	__atomic_store_n(&seg->hdr->ring[i].pwait, 1, __ATOMIC_SEQ_CST);
}

/* A record of len bytes written at p (tail): its header, then the tail
 * moved past it, which publishes it (producer's lock held). */
static void rec_publish(struct shr_ring *r, unsigned char *p, uint64_t tail,
			struct rec_hdr *rh, size_t len)
{
	rh->len = (uint32_t)len;
	memcpy(p, rh, sizeof(*rh));
	__atomic_store_n(&r->tail, tail + len, __ATOMIC_SEQ_CST);
}

void shr_put(struct shr_seg *seg, int i, const mblk_t *mp)
{
	struct shr_ring *r = &seg->hdr->ring[i];
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	unsigned char *p = seg->data[i] + (tail & (seg->ringsize - 1));
	struct rec_hdr rh = { 0 };
	size_t off = sizeof(rh);

	for (const mblk_t *bp = mp; bp != NULL; bp = bp->b_cont) {
		struct blk_hdr bh = { 0 };
		size_t len = (size_t)(bp->b_wptr - bp->b_rptr);

		bh.type = bp->b_datap->db_type;
		bh.len = (uint32_t)len;
		memcpy(p + off, &bh, sizeof(bh));
		off += sizeof(bh);
		if (len != 0)
			memcpy(p + off, bp->b_rptr, len);
		off += ALIGN8(len);
		rh.nblk++;
	}
	rh.band = mp->b_datap->db_type >= QPCTL ? 0 : mp->b_band;
	rh.flag = mp->b_flag & REC_FLAGS;
	rec_publish(r, p, tail, &rh, off);
}

size_t shr_datasize(const struct shr_seg *seg, size_t len)
{
	size_t n = sizeof(struct rec_hdr) + sizeof(struct blk_hdr);

	if (len > shr_maxrec(seg) || n + ALIGN8(len) > shr_maxrec(seg))
		return 0;
	return n + ALIGN8(len);
}

int shr_put_data(struct shr_seg *seg, int i, const void *src, size_t len,
		 int flag, int (*copy)(void *, const void *, size_t))
{
	struct shr_ring *r = &seg->hdr->ring[i];
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	unsigned char *p = seg->data[i] + (tail & (seg->ringsize - 1));
	struct rec_hdr rh = { 0 };
	struct blk_hdr bh = { 0 };
	size_t off = sizeof(rh) + sizeof(bh);
	int err;

	/* (nothing is published until tail moves; what a failed copy
	 * wrote past the tail is wiped, so the peer, which maps the ring,
	 * never sees bytes that were not sent) */
	if (len != 0 && (err = copy(p + off, src, len)) != 0) {
		memset(p + off, 0, len);
		return err;
	}
	bh.type = M_DATA;
	bh.len = (uint32_t)len;
	memcpy(p + sizeof(rh), &bh, sizeof(bh));
	rh.nblk = 1;
	rh.flag = (uint32_t)flag & REC_FLAGS;
	rec_publish(r, p, tail, &rh, off + ALIGN8(len));
	return 0;
}

bool shr_put_raw(struct shr_seg *seg, int i, const void *b, size_t len)
{
	struct shr_ring *r = &seg->hdr->ring[i];
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);

	if ((len & 7) != 0 || len > room(seg, i))
		return false;
	memcpy(seg->data[i] + (tail & (seg->ringsize - 1)), b, len);
	__atomic_store_n(&r->tail, tail + len, __ATOMIC_SEQ_CST);
	return true;
}

bool shr_wake_consumer(struct shr_seg *seg, int i)
{
	struct shr_ring *r = &seg->hdr->ring[i];

	if (__atomic_load_n(&r->cwait, __ATOMIC_SEQ_CST) == 0)
		return false;
	return __atomic_exchange_n(&r->cwait, 0, __ATOMIC_SEQ_CST) != 0;
}

/* ---- consumer ---- */

bool shr_peek(struct shr_seg *seg, int i)
{
	struct shr_ring *r = &seg->hdr->ring[i];

	return __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&r->head, __ATOMIC_RELAXED);
}

bool shr_wait_data(struct shr_seg *seg, int i)
{
	struct shr_ring *r = &seg->hdr->ring[i];

	__atomic_store_n(&r->cwait, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->tail, __ATOMIC_SEQ_CST) ==
	    __atomic_load_n(&r->head, __ATOMIC_RELAXED))
		return false;
	__atomic_store_n(&r->cwait, 0, __ATOMIC_RELAXED);
	return true;
}

/* A record another process wrote: trust nothing in it. */
mblk_t *shr_get(struct shr_seg *seg, int i, int *err)
{
	struct shr_ring *r = &seg->hdr->ring[i];
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	const unsigned char *p = seg->data[i] + (head & (seg->ringsize - 1));
	size_t avail = (size_t)(tail - head), off;
	struct rec_hdr rh;
	mblk_t *mp = NULL, **tailp = &mp;

	*err = 0;
	if (avail == 0)
		return NULL;
	memcpy(&rh, p, sizeof(rh));
	if (avail > seg->ringsize || rh.len < sizeof(rh) || rh.len > avail ||
	    (rh.len & 7) != 0 || rh.nblk == 0 || rh.nblk > MAXBLKS ||
	    (rh.flag & ~(uint32_t)REC_FLAGS) != 0)
		goto corrupt;
	off = sizeof(rh);
	for (unsigned b = 0; b < rh.nblk; b++) {
		struct blk_hdr bh;
		mblk_t *bp;

		if (rh.len - off < sizeof(bh))
			goto corrupt_free;
		memcpy(&bh, p + off, sizeof(bh));
		off += sizeof(bh);
		if (bh.len > rh.len - off || ALIGN8(bh.len) > rh.len - off)
			goto corrupt_free;
		if ((bp = allocb(bh.len, BPRI_MED)) == NULL) {
			freemsg(mp);
			*err = ENOMEM;
			return NULL;
		}
		bp->b_datap->db_type = bh.type;
		memcpy(bp->b_wptr, p + off, bh.len);
		bp->b_wptr += bh.len;
		off += ALIGN8(bh.len);
		*tailp = bp;
		tailp = &bp->b_cont;
		/* checked in our copy: the peer may write the ring still */
		if (b == 0 ? !rec_ok(bh.type, rh.nblk, bp->b_rptr, bh.len,
				     rh.band)
			   : bh.type != M_DATA)
			goto corrupt_free;
	}
	if (off != rh.len)
		goto corrupt_free;
	mp->b_band = rh.band;
	mp->b_flag = (unsigned short)rh.flag;
	__atomic_store_n(&r->head, head + rh.len, __ATOMIC_SEQ_CST);
	return mp;
corrupt_free:
	freemsg(mp);
corrupt:
	/* a broken record: drop everything written so far */
	__atomic_store_n(&r->head, tail, __ATOMIC_SEQ_CST);
	*err = EPROTO;
	return NULL;
}

ssize_t shr_get_data(struct shr_seg *seg, int i, void *dst, size_t room,
		     int (*copy)(void *, const void *, size_t))
{
	struct shr_ring *r = &seg->hdr->ring[i];
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	const unsigned char *p = seg->data[i] + (head & (seg->ringsize - 1));
	size_t avail = (size_t)(tail - head), off = sizeof(struct rec_hdr);
	struct rec_hdr rh;
	struct blk_hdr bh;
	int err;

	if (avail < off + sizeof(bh) || avail > seg->ringsize)
		return 0;
	/* (checked in our copies: the peer may write the ring still) */
	memcpy(&rh, p, sizeof(rh));
	memcpy(&bh, p + off, sizeof(bh));
	off += sizeof(bh);
	if (rh.nblk != 1 || rh.band != 0 || rh.flag != 0 ||
	    bh.type != M_DATA || bh.len == 0 || bh.len > room ||
	    rh.len != off + ALIGN8((size_t)bh.len) || rh.len > avail)
		return 0;
	if ((err = copy(dst, p + off, bh.len)) != 0)
		return -err;
	__atomic_store_n(&r->head, head + rh.len, __ATOMIC_SEQ_CST);
	return (ssize_t)bh.len;
}

bool shr_wake_producer(struct shr_seg *seg, int i)
{
	struct shr_ring *r = &seg->hdr->ring[i];

	if (__atomic_load_n(&r->pwait, __ATOMIC_SEQ_CST) == 0)
		return false;
	if (room(seg, i) < seg->ringsize / 2)
		return false;
	return __atomic_exchange_n(&r->pwait, 0, __ATOMIC_SEQ_CST) != 0;
}
