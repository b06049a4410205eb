/*
 * shmpipe.c -- the driver under a STREAMS pipe end whose other end may be
 * in another process.
 *
 * How this works
 * --------------
 * A STREAMS pipe made by s_pipe() starts as two stream heads wired to
 * each other in this process (src/head/sth_pipe.c).  When the process
 * forks, both processes hold both ends, and messages must cross between
 * their executives: just before the fork each pipe is given this driver
 * under both ends (shmpipe_convert), and from then on end i writes into
 * ring i of a shared-memory segment and reads ring 1 - i (shmring.h).
 *
 * Write side: messages go into the ring at once when there is room and
 * nothing is queued ahead of them; otherwise onto the write queue, which
 * fills, so the stream head blocks writers as with any driver.  A
 * write() on an end with no module pushed skips the message block: the
 * head hands the driver the writer's buffer (strkev's ke_write), and
 * the bytes are copied once, into the ring, under the same conditions
 * (else the head sends the message the ordinary way).  High
 * priority messages may use a reserve the ordinary ones may not, so an
 * M_FLUSH or M_PCPROTO is not stuck behind a full ring.  M_FLUSH flushes
 * this end's write queue and crosses (the head at the other end turns it
 * around, as for any pipe); M_IOCTL is refused.  Only data, protocol,
 * M_FLUSH and M_PASSFP messages cross (shr_carries); any other a module
 * sends down is dropped here, and the reader takes a record of any other
 * kind as broken (M_ERROR EPROTO): another process wrote it.
 *
 * Read side: "pulling" moves records from the ring up the stream while
 * the next queue accepts them.  It runs in the read service procedure
 * (back-enabled when the head drains), in the I/O thread when the
 * doorbell rings (kev.c), and in a reader's own thread just before its
 * stream head would wait (sd_kev).  One puller at a time per end
 * (the pull lock, a try-lock: whoever holds it sees the new records).  A
 * read() on an end with no module pushed and nothing at its head takes
 * the next record straight into the reader's buffer when it is plain
 * data that fits (strkev's ke_read: holding the pull lock, and only if
 * the head is still empty then, so records keep the ring's order); any
 * other record is pulled.  With both short ways, a 1 KiB message cost
 * 1310 user instructions, writer and reader together, against 2164
 * through message blocks (2026-11-28).  Both copy application memory
 * with a ring lock held that other processes' writers (or readers) of
 * that ring wait for: a page fault on a slow mapping (FUSE, NFS,
 * userfaultfd) holds them up as long.
 *
 * Doorbells and hangup.  The two ends share a SOCK_SEQPACKET socketpair,
 * one socket per end, close-on-exec, held by every process holding that
 * end.  A side that must wake the other (shmring.h says when) sends one
 * byte on its socket.  Each end keeps its socket armed with the I/O
 * thread, so a doorbell runs the puller and restarts a waiting write
 * queue, and when every process has closed the other end its socket
 * reports hangup: once the ring is drained, M_HANGUP goes up.
 *
 * Descriptors (I_SENDFD).  A M_PASSFP cannot be copied into the ring:
 * its descriptor means nothing in another process.  Each pipe has a
 * second socketpair for them (SOCK_STREAM, never armed, one socket per
 * end like the doorbells).  The writer, with the ring's producer lock
 * held and room found, sends the descriptor with SCM_RIGHTS on its end's
 * socket in a 16-byte packet naming a sequence number unique among all
 * processes (pid << 32 | count) and, as SCM_CREDENTIALS, the sender's
 * effective uid and gid (which the kernel accepts only if they are the
 * sending process's own); then puts a small M_PASSFP record into the
 * ring carrying that number.  The receiver takes the uid and gid from
 * the packet's credentials (SO_PASSCRED), never from the record, which
 * the other process writes as it likes; a packet without them is
 * refused.  Producers
 * are serialised, so packets and records are in the same order, and a
 * packet is in the socket before its record is published.  The puller
 * that meets the record (it holds the consumers' lock, whichever process
 * it is in) reads the next packet, checks the number, and sends up an
 * ordinary M_PASSFP (sth_passfp_new) at the record's place in the
 * message order.  So a descriptor goes to the process that pulls its
 * record even when several hold the receiving end.  Descriptors never
 * received: those in a head's queue are closed with the message, those
 * in the socket by the kernel with the socket's last holder.  A stream
 * descriptor is refused by I_SENDFD on such a pipe (EXDEV, sth_ioctl.c):
 * its stream lives in the sending process only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/cmn_err.h>
#include <sys/strconf.h>

#include "strsubr.h"
#include "drvutil.h"
#include "shmring.h"
#include "shmpipe.h"

#define HIPRI_RESERVE	8192	/* ring bytes only high priority may use */
#define PULL_BATCH	64	/* records a reader's pull takes at once */
#define PULL_RUN_BYTES	16384	/* bytes a run holds back from the head */

#define FDMAGIC		0x53465044u	/* "SFPD": a descriptor's record */

/* In the ring: the record a M_PASSFP becomes. */
struct shp_fdrec {
	uint32_t magic;
	uint32_t uid;			/* the sender's, for its own packet:
					   a receiver does not trust them */
	uint32_t gid;
	uint32_t pad;
	uint64_t seq;
};

/* On the descriptor socket, with the descriptor: its number. */
struct shp_fdmsg {
	uint32_t magic;
	uint32_t pad;
	uint64_t seq;
};

static uint32_t fdseq_next;		/* atomic */

/* One process's mapping of one pipe's segment, shared by its two ends. */
struct shp_map {
	struct shr_seg seg;
	int memfd;			/* the segment, to share it; fixed */
	int refs;			/* ends of this process using it; atomic */
};

struct shp_end {
	struct strkev ke;		/* ke_fd: this end's doorbell socket */
	struct shp_map *map;
	int side;			/* writes ring side, reads 1 - side */
	queue_t *rq;
	strlock_t pull;			/* one puller at a time (try-lock) */
	int peer_gone;			/* the other end's socket hung up;
					   atomic */
	int hung;			/* M_HANGUP sent; set under the pull
					   lock, read by shp_run (atomic) */
	int wblocked;			/* the write queue waits for room;
					   atomic */
	int pull_again;			/* 1: pull once more, 2: and arm;
					   atomic (see pull) */
	bufcall_id_t bufcall;		/* waiting for memory; pull lock */
	int retry_armed;		/* a look for room is due; atomic */
	toid_t retry_id;		/* its timeout, for close; set by the
					   write service procedure, atomic */
	int fdsock;			/* descriptors: sent on it by this
					   end's producers, received by its
					   consumers; fixed */
};

static void ring_doorbell(struct shp_end *e)
{
	char c = 0;

	/* a full socket already holds a doorbell: nothing lost */
	(void)send(e->ke.ke_fd, &c, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void drain_doorbells(struct shp_end *e)
{
	char buf[64];

	/* (anything but a byte is dropped: descriptors come elsewhere) */
	while (recv(e->ke.ke_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* Does anyone sleep until we pull more (sd_kevwant)? */
static bool waited_for(struct shp_end *e)
{
	return __atomic_load_n(&e->rq->q_stream->sd_kevwant,
			       __ATOMIC_SEQ_CST) > 0;
}

/*
 * Keep the doorbell socket armed: for doorbells while someone here
 * waits for the ring (a reader, poller or watcher) or for room (the
 * write queue), else for the hangup alone -- a doorbell then is for a
 * reader in another process holding this end, and is left in the
 * socket for it (an I/O thread here would eat it and not pull).  A
 * waiter counts itself before it rearms, and whoever disarms looks
 * again afterwards, so a waiter's arming is never undone.
 */
static void rearm(struct shp_end *e)
{
	if (__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE))
		return;
	if (!waited_for(e) && !__atomic_load_n(&e->wblocked, __ATOMIC_SEQ_CST)) {
		(void)str_kev_arm(&e->ke, POLLRDHUP);
		if (!waited_for(e) &&
		    !__atomic_load_n(&e->wblocked, __ATOMIC_SEQ_CST))
			return;
	}
	(void)str_kev_rearm(&e->ke, POLLIN);
}

/* ---- read side: pulling ---- */

static void kick(void *arg)
{
	qenable(arg);
}

/* The next descriptor on the socket, which must be numbered seq, and its
 * sender's user and group as the kernel vouches for them (SO_PASSCRED:
 * the ring's record is the other process's to write); -1 if there is
 * none or it is not, or comes without them (consumers' lock held). */
static int fd_recv(struct shp_end *e, uint64_t seq, uid_t *uid, gid_t *gid)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int)) +
			 CMSG_SPACE(sizeof(struct ucred))];
	} cm;
	bool cred = false;
	struct shp_fdmsg m;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	n = recvmsg(e->fdsock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	for (c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c != NULL;
	     c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred u;

			memcpy(&u, CMSG_DATA(c), sizeof(u));
			*uid = u.uid;
			*gid = u.gid;
			cred = true;
			continue;
		}
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t j = 0; j < k; j++) {
			int x;

			memcpy(&x, CMSG_DATA(c) + j * sizeof(int), sizeof(x));
			if (fd < 0)
				fd = x;
			else
				close(x);	/* more than one: not ours */
		}
	}
	if (fd >= 0 && (n != (ssize_t)sizeof(m) || m.magic != FDMAGIC ||
			m.seq != seq || !cred ||
			(mh.msg_flags & MSG_CTRUNC))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * A M_PASSFP record pulled (pull lock and consumers' lock held): the
 * M_PASSFP with its descriptor, or NULL with *err EPROTO when the
 * record or its packet is not what it should be, ENOMEM when no memory
 * (the descriptor is closed).
 */
static mblk_t *fd_claim(struct shp_end *e, mblk_t *rec, int *err)
{
	struct shp_fdrec r;
	mblk_t *mp;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	int fd;

	if (rec->b_cont != NULL || MBLKL(rec) != sizeof(r)) {
		freemsg(rec);
		*err = EPROTO;
		return NULL;
	}
	memcpy(&r, rec->b_rptr, sizeof(r));
	freemsg(rec);
	if (r.magic != FDMAGIC || (fd = fd_recv(e, r.seq, &uid, &gid)) < 0) {
		*err = EPROTO;
		return NULL;
	}
	mp = sth_passfp_new(fd, uid, gid);
	if (mp == NULL)
		*err = ENOMEM;
	return mp;
}

/* One pass of pulling, pull lock held: move records up while the stream
 * takes them; with arm, a ring found empty asks the producer for a
 * doorbell.  Returns whether the producer must be rung. */
static bool pull_locked(struct shp_end *e, bool arm)
{
	struct shr_seg *seg = &e->map->seg;
	int in = 1 - e->side, err = 0;
	bool wake = false, again;
	mblk_t *mp;
	queue_t *nq;

	do {
		bool blocked = false;

		shr_clock(seg, in);
		/* the head queues the records of a pull as one run, with
		 * one wake-up (batch.c), not one putq and one look at the
		 * sleepers per record; a run ends after PULL_BATCH records
		 * or PULL_RUN_BYTES, so that canputnext counts it before the
		 * next: the head holds at most that much above its high
		 * water mark.  Only straight into the head: through a module
		 * a record may reach the head from another thread (the
		 * owner of a busy perimeter, a service procedure) while the
		 * run still holds the records before it, so there each goes
		 * at once */
		size_t run = 0;

		str_batch_begin();
		for (int n = 0;; n++) {
			bool full = n > 0 && n % PULL_BATCH == 0;

			if (full && !arm) {
				/* enough for a reader that comes back for
				 * more: a small batch stays in the cache */
				break;
			}
			if (full || run >= PULL_RUN_BYTES) {
				str_batch_end();
				str_batch_begin();
				run = 0;
			}
			if (!canputnext(e->rq)) {
				blocked = true;	/* back-enabled later */
				break;
			}
			if ((mp = shr_get(seg, in, &err)) == NULL)
				break;
			if (mp->b_datap->db_type == M_PASSFP &&
			    (mp = fd_claim(e, mp, &err)) == NULL) {
				if (err == ENOMEM)
					err = 0;	/* the record is gone */
				break;
			}
			run += msgsize(mp) + 1;	/* (empty ones too) */
			nq = __atomic_load_n(&e->rq->q_next, __ATOMIC_ACQUIRE);
			if (!(__atomic_load_n(&nq->q_flag, __ATOMIC_RELAXED) &
			      QHEAD))
				str_batch_flush();	/* (what came before) */
			putnext(e->rq, mp);
		}
		str_batch_end();
		if (shr_wake_producer(seg, in))
			wake = true;
		/* stopped with the ring empty: say we wait for data */
		again = arm && !blocked && err == 0 && shr_wait_data(seg, in);
		shr_cunlock(seg, in);
	} while (again);
	if (err == ENOMEM && e->bufcall == 0)
		e->bufcall = qbufcall(e->rq, 4096, BPRI_MED, kick, e->rq);
	else if (err == EPROTO)
		putnextctl1(e->rq, M_ERROR, EPROTO);	/* a broken record */
	if (err == 0 && !shr_peek(seg, in) && !e->hung &&
	    __atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&e->hung, 1, __ATOMIC_RELEASE);
		putnextctl(e->rq, M_HANGUP);
	}
	return wake;
}

/*
 * Pull, unless another thread is pulling: then leave it a note
 * (pull_again, with the arm request) that it reads after unlocking, so
 * a doorbell that arrives while a reader finishes is never lost.
 */
static void pull(struct shp_end *e, bool arm)
{
	struct shr_seg *seg = &e->map->seg;
	bool wake = false;
	int note;

	/* the common look while spinning: nothing there, nothing to do */
	if (!arm && !shr_peek(seg, 1 - e->side) &&
	    !__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE))
		return;
	note = arm ? 2 : 1;
	for (;;) {
		if (!strtrylock(&e->pull)) {
			__atomic_or_fetch(&e->pull_again, note,
					  __ATOMIC_SEQ_CST);
			if (!strtrylock(&e->pull))
				break;	/* the holder will see the note */
		}
		__atomic_and_fetch(&e->pull_again, ~note, __ATOMIC_SEQ_CST);
		if (pull_locked(e, note & 2))
			wake = true;
		strunlock(&e->pull);
		note = __atomic_exchange_n(&e->pull_again, 0,
					   __ATOMIC_SEQ_CST);
		if (note == 0)
			break;
	}
	if (wake)
		ring_doorbell(e);
}

static int shp_rsrv(queue_t *q)
{
	struct shp_end *e = q->q_ptr;

	strlock(&e->pull);
	e->bufcall = 0;
	strunlock(&e->pull);
	/* a reader reading pulls for itself; only a sleeping one, or a
	 * watcher, needs us to go on (the head has room again) */
	if (waited_for(e))
		pull(e, true);
	return 0;
}

static int shp_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

/* ---- write side ---- */

static bool hipri(const mblk_t *mp)
{
	return mp->b_datap->db_type >= QPCTL;
}

/* The ring record for a M_PASSFP: NULL if mp is not a descriptor of
 * ours (then it is dropped) or no memory. */
static mblk_t *fdrec_new(mblk_t *mp, int *fdp)
{
	struct shp_fdrec r = { .magic = FDMAGIC };
	uid_t uid;
	gid_t gid;
	mblk_t *rec;

	if ((*fdp = sth_passfp_peek(mp, &uid, &gid)) < 0 ||
	    (rec = allocb(sizeof(r), BPRI_MED)) == NULL)
		return NULL;
	r.uid = (uint32_t)uid;
	r.gid = (uint32_t)gid;
	r.seq = (uint64_t)getpid() << 32 |
		__atomic_fetch_add(&fdseq_next, 1, __ATOMIC_RELAXED);
	rec->b_datap->db_type = M_PASSFP;
	memcpy(rec->b_wptr, &r, sizeof(r));
	rec->b_wptr += sizeof(r);
	return rec;
}

/* Send fd numbered by rec on the descriptor socket (producer lock held):
 * 0, EAGAIN when it cannot go now (the socket full: nobody there has
 * taken the ones before; or the kernel's limit of descriptors in flight
 * reached) -- try again later --, or another errno when it never will
 * (the other end gone). */
static int fd_send(struct shp_end *e, const mblk_t *rec, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int)) +
			 CMSG_SPACE(sizeof(struct ucred))];
	} cm;
	struct shp_fdrec r;
	struct ucred u;
	struct shp_fdmsg m = { .magic = FDMAGIC };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	struct cmsghdr *c;

	memcpy(&r, rec->b_rptr, sizeof(r));
	m.seq = r.seq;
	memset(&cm, 0, sizeof(cm));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	/* the sender's user and group at I_SENDFD (its effective ones),
	 * which the kernel accepts only if they are this process's */
	u.pid = getpid();
	u.uid = (uid_t)r.uid;
	u.gid = (gid_t)r.gid;
	c = CMSG_NXTHDR(&mh, c);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(u));
	memcpy(CMSG_DATA(c), &u, sizeof(u));
	for (;;) {
		if (sendmsg(e->fdsock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) ==
		    (ssize_t)sizeof(m))
			return 0;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == ENOBUFS ||
		    errno == ETOOMANYREFS)
			return EAGAIN;
		return errno != 0 ? errno : EPIPE;
	}
}

/* Put mp into the ring; false when it must wait for room: then the
 * consumer has been asked for a doorbell, and wblocked was set before
 * asking, so the doorbell's handler (shp_run) always sees it.  A
 * M_PASSFP goes as a record, its descriptor on the socket; when the
 * descriptor cannot go now it is false too (the caller's retry timer
 * tries again), and only a descriptor for an end nobody holds any more
 * is dropped. */
static bool ring_put(struct shp_end *e, mblk_t *mp, bool *wake)
{
	struct shr_seg *seg = &e->map->seg;
	mblk_t *rec = NULL;
	size_t need;
	int fd = -1, fe = 0;
	bool ok;

	if (mp->b_datap->db_type == M_PASSFP) {
		if ((rec = fdrec_new(mp, &fd)) == NULL) {
			freemsg(mp);	/* closes the descriptor */
			return true;
		}
	}
	need = shr_recsize(seg, rec != NULL ? rec : mp);
	if (need == 0) {
		/* larger than a ring can ever carry: an error, not a loss */
		freemsg(rec);
		freemsg(mp);
		putnextctl1(e->rq, M_ERROR, EMSGSIZE);
		return true;
	}
	if (!hipri(mp))
		need += HIPRI_RESERVE;
	shr_plock(seg, e->side);
	ok = shr_room(seg, e->side, need);
	if (!ok) {
		__atomic_store_n(&e->wblocked, 1, __ATOMIC_SEQ_CST);
		rearm(e);	/* for the doorbell saying there is room */
		shr_wait_room(seg, e->side);
		ok = shr_room(seg, e->side, need);
	}
	if (ok && rec != NULL && (fe = fd_send(e, rec, fd)) == EAGAIN)
		ok = false;	/* the descriptor waits, and what follows */
	if (ok && fe == 0) {
		shr_put(seg, e->side, rec != NULL ? rec : mp);
		if (shr_wake_consumer(seg, e->side))
			*wake = true;
	}
	shr_punlock(seg, e->side);
	if (rec != NULL)
		freemsg(rec);
	if (ok)
		freemsg(mp);	/* a descriptor sent: ours is closed */
	return ok;
}

/* The doorbell saying the ring has room again is one byte on a socket
 * every process holding this end shares: with writers blocked in two
 * processes, one process's I/O thread takes it and the other never
 * hears.  So a blocked write queue also looks again a tick later, and
 * every tick while the ring stays full. */
#define ROOM_RETRY_TICKS 1

static void room_retry(void *arg)
{
	struct shp_end *e = arg;

	__atomic_store_n(&e->retry_armed, 0, __ATOMIC_RELEASE);
	qenable(WR(e->rq));
}

static void arm_retry(queue_t *q, struct shp_end *e)
{
	toid_t id;

	if (__atomic_exchange_n(&e->retry_armed, 1, __ATOMIC_ACQ_REL))
		return;
	id = qtimeout(q, (void (*)())room_retry, e, ROOM_RETRY_TICKS);
	if (id == 0)
		__atomic_store_n(&e->retry_armed, 0, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&e->retry_id, id, __ATOMIC_RELEASE);
}

static int shp_wsrv(queue_t *q)
{
	struct shp_end *e = q->q_ptr;
	bool wake = false;
	mblk_t *mp;

	__atomic_store_n(&e->wblocked, 0, __ATOMIC_RELAXED);
	while ((mp = getq(q)) != NULL) {
		if (__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE)) {
			freemsg(mp);	/* nobody will ever read it */
			continue;
		}
		if (!ring_put(e, mp, &wake)) {
			putbq(q, mp);
			arm_retry(q, e);
			break;
		}
	}
	if (wake)
		ring_doorbell(e);
	return 0;
}

static int shp_wput(queue_t *q, mblk_t *mp)
{
	struct shp_end *e = q->q_ptr;
	bool wake = false, tried;

	switch (mp->b_datap->db_type) {
	case M_FLUSH:
		if (mp->b_rptr < mp->b_wptr && (mp->b_rptr[0] & FLUSHW)) {
			if (mp->b_rptr[0] & FLUSHBAND && MBLKL(mp) >= 2)
				flushband(q, mp->b_rptr[1], FLUSHALL);
			else
				flushq(q, FLUSHALL);
		}
		break;
	case M_IOCTL:
		drv_nak(q, mp, EINVAL);
		return 0;
	default:
		break;
	}
	if (__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE) ||
	    !shr_carries(mp)) {
		freemsg(mp);	/* nobody to read it; or cannot cross */
		return 0;
	}
	tried = hipri(mp) || q_idle(q);
	if (tried && ring_put(e, mp, &wake)) {
		if (wake)
			ring_doorbell(e);
		return 0;
	}
	/* (mp belongs to the queue once putq returns) */
	if (!hipri(mp))
		__atomic_store_n(&e->wblocked, 1, __ATOMIC_RELEASE);
	drv_putq(q, mp);
	if (tried)
		arm_retry(q, e);	/* (a descriptor that could not go:
					   no doorbell says when it can) */
	return 0;
}

/*
 * A write() straight into the ring (strkev's ke_write): the bytes go
 * from the writer's buffer to the ring, with no message block made,
 * copied and freed on the way.  Only when shp_wput would have put that
 * message into the ring at once: nothing queued before it, the peer
 * there, room without waiting.  Otherwise 0, and the head sends the
 * message the ordinary way, which queues or waits as shp_wput does.
 */
static int shp_write(struct strkev *ke, const void *buf, size_t len,
		     int flag, int (*copy)(void *, const void *, size_t))
{
	struct shp_end *e = (struct shp_end *)ke;
	struct shr_seg *seg = &e->map->seg;
	size_t need = shr_datasize(seg, len);
	bool wake = false;
	int err;

	if (need == 0 || !q_idle(WR(e->rq)) ||
	    __atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE))
		return 0;
	shr_plock(seg, e->side);
	if (!shr_room(seg, e->side, need + HIPRI_RESERVE)) {
		shr_punlock(seg, e->side);
		return 0;
	}
	err = shr_put_data(seg, e->side, buf, len, flag, copy);
	if (err == 0)
		wake = shr_wake_consumer(seg, e->side);
	shr_punlock(seg, e->side);
	if (wake)
		ring_doorbell(e);
	return err != 0 ? -err : 1;
}

/*
 * A read() straight from the ring (strkev's ke_read): the next record,
 * when it is plain data that fits, goes into the reader's buffer with
 * no message block made, queued, copied and freed.  Only the front
 * record, and only with the pull lock held and the queue above still
 * empty: a pull that ran since the head looked has queued its records
 * there (a pull's run is at the head by the time it lets the lock go),
 * and those come first.  The caller holds the head's reader lock, so
 * the reader's cache stays empty.  Any other record, an empty ring: 0,
 * and the head pulls.  The last record taken from a ring whose writer
 * has gone leaves the hangup to a pull, as pull_locked sends it.
 */
static ssize_t shp_read(struct strkev *ke, void *buf, size_t len,
			int (*copy)(void *, const void *, size_t))
{
	struct shp_end *e = (struct shp_end *)ke;
	struct shr_seg *seg = &e->map->seg;
	int in = 1 - e->side, note;
	bool wake;
	ssize_t r;

	if (!shr_peek(seg, in) || !strtrylock(&e->pull))
		return 0;
	if (__atomic_load_n(&e->rq->q_next->q_first, __ATOMIC_ACQUIRE) !=
	    NULL) {
		r = 0;		/* a pull came first: read what it queued */
		wake = false;
	} else {
		shr_clock(seg, in);
		r = shr_get_data(seg, in, buf, len, copy);
		wake = shr_wake_producer(seg, in);
		shr_cunlock(seg, in);
	}
	strunlock(&e->pull);
	if (wake)
		ring_doorbell(e);
	/* a pull asked for while we held the lock is ours to do (pull);
	 * and the hangup after the last record */
	note = __atomic_exchange_n(&e->pull_again, 0, __ATOMIC_SEQ_CST);
	if (note != 0 || (__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE) &&
			  !shr_peek(seg, in)))
		pull(e, (note & 2) != 0);
	return r;
}

/* ---- events ---- */

static void shp_run(struct strkev *ke, unsigned revents)
{
	struct shp_end *e = (struct shp_end *)ke;
	queue_t *wq = WR(e->rq);
	bool gone;

	if (revents & (KEV_PULL | KEV_LOOK)) {	/* a reader reading, a look */
		pull(e, false);
		return;
	}
	if (revents & KEV_WAIT) {	/* a reader about to sleep */
		pull(e, true);
		rearm(e);
		return;
	}
	/* the I/O thread: a doorbell, or the other end gone */
	gone = (revents & (POLLHUP | POLLERR)) &&
	       !__atomic_exchange_n(&e->peer_gone, 1, __ATOMIC_ACQ_REL);
	/* (a doorbell nobody here will act on is left in the socket: it
	 * may be for a reader of another process holding this end, whose
	 * I/O thread would otherwise find nothing to wake it -- after a
	 * fork, say) */
	if ((revents & POLLIN) &&
	    (waited_for(e) || __atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE) ||
	     __atomic_load_n(&e->wblocked, __ATOMIC_ACQUIRE)))
		drain_doorbells(e);
	/* Serve whoever rang, if anyone in this process waits (a sleeping
	 * reader or poller, an epoll or SIGPOLL watcher): then the next
	 * wake-up is armed too.  Nobody waiting here: the records stay in
	 * the ring for a reader -- of this process or of another holding
	 * the same end.  A hangup is delivered once the ring is drained. */
	if (waited_for(e) || __atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE))
		pull(e, true);
	if (gone && !__atomic_load_n(&e->hung, __ATOMIC_ACQUIRE))
		/* the hangup waits until what came before it is read, which
		 * may be long, or never: meanwhile nobody reads what is
		 * written, so writes fail at once (EPIPE, as after it) */
		(void)putnextctl2(e->rq, M_ERROR, NOERROR, EPIPE);
	if (__atomic_load_n(&e->wblocked, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE))
		qenable(wq);
	/* the I/O thread's reports are one-shot: ask for the next */
	rearm(e);
}

/* ---- open and close ---- */

static int shp_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		    cred_t *cr)
{
	struct shp_end *e = q->q_ptr;

	/* only attached by shmpipe_convert(), with q_ptr set */
	if (e == NULL || sflag != DRVOPEN)
		return ENXIO;
	e->rq = q;
	e->ke.ke_rq = q;
	return 0;
}

static void map_free(struct shp_map *m)
{
	shr_unmap(&m->seg);
	close(m->memfd);
	free(m);
}

static void map_rele(struct shp_map *m)
{
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
		map_free(m);
}

static int shp_close(queue_t *q, int oflag, cred_t *cr)
{
	struct shp_end *e = q->q_ptr;

	__atomic_store_n(&e->rq->q_stream->sd_kev, NULL, __ATOMIC_RELEASE);
	if (e->bufcall != 0)
		qunbufcall(q, e->bufcall);
	toid_t id = __atomic_exchange_n(&e->retry_id, 0, __ATOMIC_ACQ_REL);
	if (id != 0)
		quntimeout(q, id);	/* (waits for it if it runs) */
	str_kev_detach(&e->ke);
	close(e->ke.ke_fd);
	map_rele(e->map);
	q->q_ptr = WR(q)->q_ptr = NULL;
	close(e->fdsock);
	free(e);
	return 0;
}

/* The ring is the pipe's buffer: the write queue only holds a message
 * that did not fit, and is full as soon as it holds one. */
static struct module_info shp_rminfo = { 2006, "shmpipe", 0, INFPSZ, 65536, 16384 };
static struct module_info shp_wminfo = { 2006, "shmpipe", 0, INFPSZ, 1, 0 };
static struct qinit shp_rinit = { shp_rput, shp_rsrv, shp_open, shp_close, NULL, &shp_rminfo, NULL };
static struct qinit shp_winit = { shp_wput, shp_wsrv, NULL, NULL, NULL, &shp_wminfo, NULL };
static struct streamtab shp_info = { &shp_rinit, &shp_winit, NULL, NULL };

struct cdevsw shmpipe_cdev = {
	.d_name = "shmpipe", .d_str = &shp_info, .d_flag = D_MP,
};

static struct shp_end *end_new(struct shp_map *m, int side, int fd,
			      int fdsock)
{
	struct shp_end *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->ke.ke_fd = fd;
	e->fdsock = fdsock;
	/* descriptors come with their sender's credentials (fd_recv) */
	(void)setsockopt(fdsock, SOL_SOCKET, SO_PASSCRED, &(int){ 1 },
			 sizeof(int));
	e->ke.ke_run = shp_run;
	e->ke.ke_write = shp_write;
	e->ke.ke_read = shp_read;
	e->map = m;
	e->side = side;
	return e;
}

static void end_free(struct shp_end *e)
{
	str_kev_detach(&e->ke);
	close(e->ke.ke_fd);
	map_rele(e->map);
	close(e->fdsock);
	free(e);
}

int shmpipe_convert(struct stdata *a, queue_t *a_low_wq, queue_t *a_up_rq,
		    struct stdata *b, queue_t *b_low_wq, queue_t *b_up_rq,
		    cred_t *cr)
{
	struct shp_map *m;
	struct shp_end *ea, *eb;
	queue_t *a_old = __atomic_load_n(&a_low_wq->q_next, __ATOMIC_ACQUIRE);
	int sv[2], fsv[2], err;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return ENOMEM;
	if ((err = -shr_create(&m->seg, &m->memfd)) != 0) {
		free(m);
		return err;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		err = errno;
		map_free(m);
		return err;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fsv) < 0) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		map_free(m);
		return err;
	}
	/* both consumers start idle: the first record rings */
	m->seg.hdr->ring[0].cwait = 1;
	m->seg.hdr->ring[1].cwait = 1;
	m->refs = 2;
	ea = end_new(m, 0, sv[0], fsv[0]);
	eb = end_new(m, 1, sv[1], fsv[1]);
	if (ea == NULL || eb == NULL) {
		free(ea);
		free(eb);
		for (int i = 0; i < 2; i++) {
			close(sv[i]);
			close(fsv[i]);
		}
		map_free(m);
		return ENOMEM;
	}
	if ((err = -str_kev_attach(&ea->ke)) != 0 ||
	    (err = -str_kev_attach(&eb->ke)) != 0) {
		end_free(ea);
		end_free(eb);
		return err;
	}
	/* from here each end belongs to its driver once attached */
	if ((err = str_attach_driver(a, &shmpipe_cdev, ea, a_low_wq, a_up_rq,
				     cr)) != 0) {
		end_free(ea);
		end_free(eb);
		return err;
	}
	if ((err = str_attach_driver(b, &shmpipe_cdev, eb, b_low_wq, b_up_rq,
				     cr)) != 0) {
		/* undo a: its writes go straight across again */
		queue_t *drv = RD(__atomic_load_n(&a_low_wq->q_next,
						  __ATOMIC_ACQUIRE));
		__atomic_store_n(&a_low_wq->q_next, a_old, __ATOMIC_RELEASE);
		a->sd_cdev = NULL;
		str_qdetach(drv, O_NONBLOCK, cr);	/* frees ea */
		end_free(eb);
		return err;
	}
	__atomic_store_n(&a->sd_kev, &ea->ke, __ATOMIC_RELEASE);
	__atomic_store_n(&b->sd_kev, &eb->ke, __ATOMIC_RELEASE);
	rearm(ea);
	rearm(eb);
	return 0;
}

int shmpipe_share(struct stdata *sd, int fds[3], int *side)
{
	struct strkev *ke = __atomic_load_n(&sd->sd_kev, __ATOMIC_ACQUIRE);
	struct shp_end *e = (struct shp_end *)ke;
	int src[3];

	if (ke == NULL || ke->ke_run != shp_run)
		return ENXIO;
	struct pollfd p = { e->ke.ke_fd, 0, 0 };

	/* nobody holds the other end any more (asked of the socket: the
	 * I/O thread may not have heard yet) */
	if (__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE) ||
	    (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR))))
		return ENXIO;
	src[0] = e->map->memfd;
	src[1] = e->ke.ke_fd;
	src[2] = e->fdsock;
	for (int i = 0; i < 3; i++) {
		if ((fds[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 0)) < 0) {
			int err = errno;
			while (i-- > 0)
				close(fds[i]);
			return err;
		}
	}
	*side = e->side;
	return 0;
}

/* Is fd a connected AF_UNIX socket of this type? */
static bool unix_socket(int fd, int type)
{
	int t = -1, d = -1;
	socklen_t l = sizeof(t);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &l) != 0 || t != type)
		return false;
	l = sizeof(d);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &l) == 0 &&
	       d == AF_UNIX;
}

int shmpipe_join(struct stdata *sd, const int fds[3], int side, cred_t *cr)
{
	struct shp_map *m;
	struct shp_end *e;
	int err;

	if ((side != 0 && side != 1) || !unix_socket(fds[1], SOCK_SEQPACKET) ||
	    !unix_socket(fds[2], SOCK_STREAM)) {
		err = EPROTO;
		goto fail;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		err = ENOMEM;
		goto fail;
	}
	if ((err = -shr_map(&m->seg, fds[0])) != 0) {
		free(m);
		goto fail;
	}
	m->memfd = fds[0];
	m->refs = 1;
	if ((e = end_new(m, side, fds[1], fds[2])) == NULL) {
		map_free(m);
		close(fds[1]);
		close(fds[2]);
		return ENOMEM;
	}
	if ((err = -str_kev_attach(&e->ke)) != 0 ||
	    (err = str_attach_driver(sd, &shmpipe_cdev, e, sd->sd_wq,
				     sd->sd_rq, cr)) != 0) {
		end_free(e);
		return err;
	}
	__atomic_store_n(&sd->sd_kev, &e->ke, __ATOMIC_RELEASE);
	rearm(e);
	return 0;
fail:
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	return err;
}

bool shmpipe_is(const struct cdevsw *cdev)
{
	return cdev == &shmpipe_cdev;
}
