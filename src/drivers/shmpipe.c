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
 * fills, so the stream head blocks writers as with any driver.  High
 * priority messages may use a reserve the ordinary ones may not, so an
 * M_FLUSH or M_PCPROTO is not stuck behind a full ring.  M_FLUSH flushes
 * this end's write queue and crosses (the head at the other end turns it
 * around, as for any pipe); M_IOCTL is refused.
 *
 * Read side: "pulling" moves records from the ring up the stream while
 * the next queue accepts them.  It runs in the read service procedure
 * (back-enabled when the head drains), in the I/O thread when the
 * doorbell rings (kev.c), and in a reader's own thread just before its
 * stream head would wait (sd_kev).  One puller at a time per end
 * (sp_pull, a try-lock: whoever holds it sees the new records).
 *
 * Doorbells and hangup.  The two ends share a SOCK_SEQPACKET socketpair,
 * one socket per end, close-on-exec, held by every process holding that
 * end.  A side that must wake the other (shmring.h says when) sends one
 * byte on its socket.  Each end keeps its socket armed with the I/O
 * thread, so a doorbell runs the puller and restarts a waiting write
 * queue, and when every process has closed the other end its socket
 * reports hangup: once the ring is drained, M_HANGUP goes up.
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

#include <sys/strconf.h>

#include "strsubr.h"
#include "drvutil.h"
#include "shmring.h"
#include "shmpipe.h"

#define HIPRI_RESERVE	8192	/* ring bytes only high priority may use */
#define PULL_BATCH	64	/* records a reader's pull takes at once */

/* One process's mapping of one pipe's segment, shared by its two ends. */
struct shp_map {
	struct shr_seg seg;
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
	int hung;			/* M_HANGUP sent; pull lock */
	int wblocked;			/* the write queue waits for room;
					   atomic */
	int pull_again;			/* 1: pull once more, 2: and arm;
					   atomic (see pull) */
	bufcall_id_t bufcall;		/* waiting for memory; pull lock */
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

	while (recv(e->ke.ke_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* Keep the doorbell socket armed (a no-op when it already is). */
static void rearm(struct shp_end *e)
{
	if (!__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE))
		(void)str_kev_rearm(&e->ke, POLLIN);
}

/* ---- read side: pulling ---- */

/* Does anyone sleep until we pull more (sd_kevwant)? */
static bool waited_for(struct shp_end *e)
{
	return __atomic_load_n(&e->rq->q_stream->sd_kevwant,
			       __ATOMIC_SEQ_CST) > 0;
}

static void kick(void *arg)
{
	qenable(arg);
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

	do {
		bool blocked = false;

		shr_clock(seg, in);
		for (int n = 0;; n++) {
			if (!canputnext(e->rq)) {
				blocked = true;	/* back-enabled later */
				break;
			}
			if (n == PULL_BATCH && !arm) {
				/* enough for a reader that comes back for
				 * more: a small batch stays in the cache */
				break;
			}
			if ((mp = shr_get(seg, in, &err)) == NULL)
				break;
			putnext(e->rq, mp);
		}
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
		e->hung = 1;
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

/* Put mp into the ring; false when it must wait for room: then the
 * consumer has been asked for a doorbell, and wblocked was set before
 * asking, so the doorbell's handler (shp_run) always sees it. */
static bool ring_put(struct shp_end *e, mblk_t *mp, bool *wake)
{
	struct shr_seg *seg = &e->map->seg;
	size_t need = shr_recsize(seg, mp);
	bool ok;

	if (need == 0) {
		/* larger than a ring can ever carry: an error, not a loss */
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
		shr_wait_room(seg, e->side);
		ok = shr_room(seg, e->side, need);
	}
	if (ok) {
		shr_put(seg, e->side, mp);
		if (shr_wake_consumer(seg, e->side))
			*wake = true;
	}
	shr_punlock(seg, e->side);
	if (ok)
		freemsg(mp);
	return ok;
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
	bool wake = false;

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
	case M_PASSFP:
		/* descriptors do not cross processes through the ring */
		freemsg(mp);
		putnextctl1(e->rq, M_ERROR, EPROTO);
		return 0;
	default:
		break;
	}
	if (__atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE)) {
		freemsg(mp);
		return 0;
	}
	if ((hipri(mp) || q_idle(q)) && ring_put(e, mp, &wake)) {
		if (wake)
			ring_doorbell(e);
		return 0;
	}
	/* (mp belongs to the queue once putq returns) */
	if (!hipri(mp))
		__atomic_store_n(&e->wblocked, 1, __ATOMIC_RELEASE);
	putq(q, mp);
	return 0;
}

/* ---- events ---- */

static void shp_run(struct strkev *ke, unsigned revents)
{
	struct shp_end *e = (struct shp_end *)ke;
	queue_t *wq = WR(e->rq);

	if (revents & (KEV_PULL | KEV_LOOK)) {	/* a reader reading, a look */
		pull(e, false);
		return;
	}
	if (revents & KEV_WAIT) {	/* a reader about to sleep */
		pull(e, true);
		return;
	}
	/* the I/O thread: a doorbell, or the other end gone */
	if (revents & (POLLHUP | POLLERR))
		__atomic_store_n(&e->peer_gone, 1, __ATOMIC_RELEASE);
	if (revents & POLLIN)
		drain_doorbells(e);
	/* Serve whoever rang, if anyone in this process waits (a sleeping
	 * reader or poller, an epoll or SIGPOLL watcher): then the next
	 * wake-up is armed too.  Nobody waiting here: the records stay in
	 * the ring for a reader -- of this process or of another holding
	 * the same end.  A hangup is delivered once the ring is drained. */
	if (waited_for(e) || __atomic_load_n(&e->peer_gone, __ATOMIC_ACQUIRE))
		pull(e, true);
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

static void map_rele(struct shp_map *m)
{
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		shr_unmap(&m->seg);
		free(m);
	}
}

static int shp_close(queue_t *q, int oflag, cred_t *cr)
{
	struct shp_end *e = q->q_ptr;

	__atomic_store_n(&e->rq->q_stream->sd_kev, NULL, __ATOMIC_RELEASE);
	if (e->bufcall != 0)
		qunbufcall(q, e->bufcall);
	str_kev_detach(&e->ke);
	close(e->ke.ke_fd);
	map_rele(e->map);
	q->q_ptr = WR(q)->q_ptr = NULL;
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

static struct shp_end *end_new(struct shp_map *m, int side, int fd)
{
	struct shp_end *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->ke.ke_fd = fd;
	e->ke.ke_run = shp_run;
	e->map = m;
	e->side = side;
	return e;
}

static void end_free(struct shp_end *e)
{
	str_kev_detach(&e->ke);
	close(e->ke.ke_fd);
	map_rele(e->map);
	free(e);
}

int shmpipe_convert(struct stdata *a, queue_t *a_low_wq, queue_t *a_up_rq,
		    struct stdata *b, queue_t *b_low_wq, queue_t *b_up_rq,
		    cred_t *cr)
{
	struct shp_map *m;
	struct shp_end *ea, *eb;
	queue_t *a_old = __atomic_load_n(&a_low_wq->q_next, __ATOMIC_ACQUIRE);
	int sv[2], memfd, err;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return ENOMEM;
	if ((err = -shr_create(&m->seg, &memfd)) != 0) {
		free(m);
		return err;
	}
	close(memfd);		/* the mappings keep the segment */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		err = errno;
		shr_unmap(&m->seg);
		free(m);
		return err;
	}
	/* both consumers start idle: the first record rings */
	m->seg.hdr->ring[0].cwait = 1;
	m->seg.hdr->ring[1].cwait = 1;
	m->refs = 2;
	ea = end_new(m, 0, sv[0]);
	eb = end_new(m, 1, sv[1]);
	if (ea == NULL || eb == NULL) {
		free(ea);
		free(eb);
		close(sv[0]);
		close(sv[1]);
		shr_unmap(&m->seg);
		free(m);
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

bool shmpipe_is(const struct cdevsw *cdev)
{
	return cdev == &shmpipe_cdev;
}
