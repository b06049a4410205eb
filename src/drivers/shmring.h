/*
 * shmring.h -- message rings in shared memory, for drivers that carry
 * STREAMS messages between processes (shmpipe.c).
 *
 * How this works
 * --------------
 * A segment is a memfd holding a header page and two rings, one per
 * direction, sealed at its size (a peer process cannot shrink it under
 * the others' mappings); ring i is written by side i and read by side
 * 1 - i.  Each
 * ring's data area is mapped twice, back to back, so a record never
 * wraps: a writer copies a whole record at tail % size and a reader reads
 * one at head % size, whatever the position.  tail and head are byte
 * counts that only grow.
 *
 * A record is one STREAMS message: a header (total length, number of
 * blocks, the message's band and b_flag), then each block's type and
 * length followed by its bytes, every part 8-byte aligned.  Messages are
 * copied in and out: nothing in a ring points into either process.
 *
 * Several processes may hold the same side (after fork() both parent and
 * child hold every end they had), so producers of a ring serialise on
 * its plock and consumers on its clock: a word holding the owner's pid
 * (one compare-and-swap to take, one exchange to give back; waiters
 * sleep on it as a shared futex).  A waiter that finds the owner's
 * process gone takes the lock over: the ring's indices are only ever
 * published whole, so there is nothing to repair.
 *
 * Waking.  A consumer that finds its ring empty sets cwait, looks once
 * more, and then waits on its descriptor; a producer that publishes a
 * record and sees cwait clears it and rings the consumer's doorbell.  A
 * producer that finds no room sets pwait and waits likewise; a consumer
 * that has freed at least half the ring and sees pwait rings the
 * producer.  The doorbells are the driver's business (a socketpair whose
 * hangup also tells each side the other has gone): the ring only says
 * when one is needed.  Every flag access is sequentially consistent, so
 * either the waiter sees the new state or the other side sees the flag.
 */
#ifndef STREAMS_SHMRING_H
#define STREAMS_SHMRING_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stream.h>
#include <sys/types.h>

#define SHR_MAGIC	0x53485250u	/* "SHRP" */
#define SHR_VERSION	4	/* 4: M_PASSFP records (shmpipe.c) */
#define SHR_RINGSIZE	(512u * 1024)	/* per direction, power of two */

/* Each field on its own cache line: tail is written by the producer and
 * read by the consumer, head the other way round, the locks are touched
 * by one side only, and the wait flags are written rarely. */
struct shr_ring {
	uint64_t tail __attribute__((aligned(64)));	/* bytes written;
							   atomic */
	uint64_t head __attribute__((aligned(64)));	/* bytes consumed;
							   atomic */
	uint32_t plock __attribute__((aligned(64)));	/* producers' lock:
							   owner pid |
							   SHR_SLEEPERS */
	uint32_t clock __attribute__((aligned(64)));	/* consumers' lock */
	uint32_t pwait __attribute__((aligned(64)));	/* a producer waits
							   for room; atomic */
	uint32_t cwait;			/* a consumer waits for data; atomic */
};

struct shr_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t ringsize;
	uint32_t pad;
	struct shr_ring ring[2];
};

/* A process's mapping of a segment. */
struct shr_seg {
	struct shr_hdr *hdr;		/* the shared header */
	unsigned char *data[2];		/* ring i's data, mapped twice */
	size_t ringsize;
	size_t maplen;			/* whole reserved mapping */
	void *map;
	uint64_t head_seen[2];		/* ring i's head as a producer here
					   last read it (it only grows, so
					   room counted from it is never too
					   much); plock */
};

/* Whether mp is a message a ring carries: M_DATA, M_PROTO, M_PCPROTO,
 * M_FLUSH or M_PASSFP (as shmpipe.c's record) in its first block, M_DATA
 * in the others, an M_FLUSH one block of 1-2 bytes of known bits.
 * (Only MSGMARK and MSGDELIM of b_flag cross, and high priority goes in
 * band 0.)  shr_get checks every record it reads the same way: anything
 * else is a broken record. */
bool shr_carries(const mblk_t *mp);

/* Make a new segment (memfd, close-on-exec, sealed against resizing)
 * and map it: 0 or -errno. */
int shr_create(struct shr_seg *seg, int *memfd);
/* Map an existing segment received from another process: 0, -errno,
 * -EPROTO when it is not a valid segment (or not sealed). */
int shr_map(struct shr_seg *seg, int memfd);
void shr_unmap(struct shr_seg *seg);

/* The largest message a ring carries (record bytes). */
size_t shr_maxrec(const struct shr_seg *seg);
/* Bytes a record for mp takes; 0 if it can never fit. */
size_t shr_recsize(const struct shr_seg *seg, const mblk_t *mp);

/* Producer side i: lock, put messages, unlock.  shr_room says whether
 * need bytes fit; shr_put copies mp in (the caller made sure it fits;
 * the caller frees mp).  When it does not fit, shr_wait_room asks the
 * consumer for a doorbell once half the ring is free; look once more
 * with shr_room after asking. */
void shr_plock(struct shr_seg *seg, int i);
void shr_punlock(struct shr_seg *seg, int i);
bool shr_room(struct shr_seg *seg, int i, size_t need);
void shr_put(struct shr_seg *seg, int i, const mblk_t *mp);
void shr_wait_room(struct shr_seg *seg, int i);
/* A message of one M_DATA block of len bytes (b_flag flag), copied
 * straight from src by copy (a stream head's copy from application
 * memory, which may fail): the record's size (0: never fits a ring),
 * and the put, lock held and room checked like shr_put's -- 0, or
 * copy's error with nothing published. */
size_t shr_datasize(const struct shr_seg *seg, size_t len);
int shr_put_data(struct shr_seg *seg, int i, const void *src, size_t len,
		 int flag, int (*copy)(void *, const void *, size_t));
/* For tests and fuzzing, producer's lock held: append len bytes (a
 * multiple of 8 that fits) to ring i as if they were records; false if
 * they do not fit. */
bool shr_put_raw(struct shr_seg *seg, int i, const void *b, size_t len);
/* After putting: must the consumer's doorbell be rung?  (clears cwait) */
bool shr_wake_consumer(struct shr_seg *seg, int i);

/* Consumer of ring i: lock, get, unlock.  shr_get returns the next
 * message (freshly allocated), NULL when the ring is empty (*err 0) or
 * when no memory (*err ENOMEM; the record stays).  shr_peek says whether
 * anything is there.  shr_wait_data sets cwait and returns true if data
 * arrived meanwhile (then cwait is cleared again). */
void shr_clock(struct shr_seg *seg, int i);
void shr_cunlock(struct shr_seg *seg, int i);
mblk_t *shr_get(struct shr_seg *seg, int i, int *err);
bool shr_peek(struct shr_seg *seg, int i);
/* The next record straight into dst by copy (a stream head's copy to
 * application memory), consumers' lock held: its length when it is a
 * one-block M_DATA message in band 0 with no b_flag, of 1..room bytes;
 * 0 and nothing done when the ring is empty or the record is any other
 * (shr_get takes it, and judges it); copy's error, negated, with the
 * record left in place. */
ssize_t shr_get_data(struct shr_seg *seg, int i, void *dst, size_t room,
		     int (*copy)(void *, const void *, size_t));
bool shr_wait_data(struct shr_seg *seg, int i);
/* After getting: must the producer's doorbell be rung?  (clears pwait
 * once half the ring is free) */
bool shr_wake_producer(struct shr_seg *seg, int i);

#endif
