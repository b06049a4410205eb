/*
 * inet_dg.c -- connectionless data of the Internet providers: UDP
 * (/dev/inet/udp, /dev/udp) and raw IP (/dev/inet/rawip, /dev/rawip).
 *
 * How this works
 * --------------
 * T_UNITDATA_REQ is checked (state TS_IDLE; DEST a sockaddr of the
 * socket's family; data within TSDU_size; options well formed): what is
 * wrong is answered with T_UDERROR_IND, ERROR_type an errno (EINVAL for
 * the address, EMSGSIZE, ENOPROTOOPT), as the loopback provider does.
 *
 * XTI over sockets (!pr->fast): each datagram is one sendmsg() from the
 * put procedure; each T_UNITDATA_IND one recvmsg().
 *
 * Options given with a datagram (T_UNITDATA_REQ's OPT; XTI: for that
 * datagram only) are IP_TTL and IP_TOS, the only ones the table lets a
 * datagram carry (TOPT_ASSOC): they go as ancillary data of its own
 * sendmsg (IP_TTL/IP_TOS, IPV6_HOPLIMIT/IPV6_TCLASS), the socket's own
 * settings untouched.  Such a datagram is never part of a batch.
 *
 * Batching (pr->fast).  Sending: a datagram that finds the write queue
 * empty after the endpoint was idle (nothing sent for IDLE_NS, and a
 * quarter of a nanosecond more per byte of the datagram: idle_ns) goes
 * out at once, so a request/response exchange pays nothing.  Otherwise
 * it is queued (the write queue is noenable'd: putq alone does not run
 * the service procedure), and the queue is flushed by the writer itself
 * when BATCH datagrams wait (2 * BATCH blocks) or another of the size
 * just queued would not fit in one GSO message (GSO_BYTES), or within a
 * tick by a timeout (the "kick") that the first datagram queued sets:
 * stragglers never wait longer, and no second thread sends while the
 * writer is writing (it would take the receiver's CPU).  A flush takes
 * up to BATCH datagrams and sends them with one sendmmsg(): each run of
 * consecutive datagrams of one size to one destination is one message
 * with UDP_SEGMENT (GSO: the kernel handles the run as one packet until
 * it must be split; up to 128 segments, 64 on a kernel before 6.13:
 * gso_probe), the others a message each.  What the kernel refuses for want of buffer space waits
 * on the write queue, in order, until POLLOUT; the writer above is flow
 * controlled by the queue's water marks as with any driver.
 *
 * Receiving: the socket has UDP_GRO on, and recvmmsg() takes up to VLEN
 * buffers of 64 KiB at a time; a buffer the kernel coalesced (cmsg
 * UDP_GRO: the segment size) is split back into its datagrams.  Small
 * datagrams are copied into blocks of their own; larger ones (over
 * COPY_MAX, in a buffer at least an eighth full) go up in blocks that
 * point into the buffer, which is then lent to the stream and freed with
 * its last datagram: the reader's copy is the only one.  Pulling
 * stops when the stream above is flow controlled; the read service
 * procedure, back-enabled when the stream head drains, pulls again.
 *
 * Who pulls: the stream head when a reader finds nothing (KEV_PULL; also
 * before a non-blocking read says EAGAIN) and before it sleeps
 * (KEV_WAIT), the read service procedure, and the I/O thread when POLLIN
 * was armed because somebody sleeps until more comes (a reader, a
 * poller, an epoll or SIGPOLL watcher: inet_waited_for).  Nobody
 * waiting, nothing armed: datagrams stay in the socket, under its own
 * limits.  A look that is not a read (KEV_LOOK: I_PEEK, I_NREAD; libxti
 * looks on every send) asks the socket only when it may have something
 * (rx_ready) or at most every LOOK_NS, so it costs no system call in a
 * sending loop.  One puller at a time (rx_lock, trylock); a pull asked
 * for while another runs is noted (pull_again) and done by the running
 * puller before it lets go.
 *
 * Drops: the batching UDP socket has SO_RXQ_OVFL on, so a received
 * datagram carries the kernel's count of those it dropped for want of
 * buffer (counted as rx_overflows).  When it grows, readers sleep at once
 * for NOSPIN_NS instead of spinning (strkev's ke_nospin_until): on a CPU
 * shared with the sender a spinning, yielding reader hands the sender
 * whole time slices, in which it overruns the socket (16 KiB datagrams,
 * both on one CPU: 93% lost and 10 K/s received; sleeping, 56% and 34 K,
 * where sockets lose 48% and receive 42 K).
 *
 * Local flow control (inet_lfc.c): between /dev/udp endpoints of this
 * host over loopback, a bound receiver publishes how much room its
 * socket has, and a flush sends only what fits there (lfc_trim: one
 * reservation per run of messages to one receiver), leaving the rest on
 * the write queue, whose water marks stop the writer; it looks again
 * after a short delay (credit_retry, on the callout thread).  The
 * receiver counts what each receive call took (pull_locked) and, when it
 * found its socket empty with senders still owed, looks again once they
 * have been quiet (settle).  Both on one CPU, 16 KiB datagrams: 58-60%
 * lost before, none now, at 52-70 K/s received.
 *
 * ICMP errors: IP_RECVERR (IPV6_RECVERR) is on, so the kernel queues the
 * errors of datagrams sent; they are read from the error queue (POLLERR,
 * or a send/receive that fails with the error) and sent up as
 * T_UDERROR_IND: DEST the datagram's destination, ERROR_type the errno
 * (ECONNREFUSED for port unreachable).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inet.h"
#include "inet_lfc.h"
#include "tpi.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
#ifndef UDP_GRO
#define UDP_GRO		104
#endif

#define BATCH		128		/* datagrams per flush */
#define GSO_SEGS_OLD	64		/* segments per GSO message before
					   Linux 6.13 (UDP_MAX_SEGMENTS) */
/* segments per GSO message: BATCH if this kernel takes more than
 * GSO_SEGS_OLD (gso_probe), else GSO_SEGS_OLD; set once */
static int gso_segs = GSO_SEGS_OLD;
static pthread_once_t gso_once = PTHREAD_ONCE_INIT;
#define GSO_BYTES	65000		/* bytes per GSO message */
#define IOVS		(4 * BATCH)	/* iovecs per flush */
#define VLEN		8		/* buffers per recvmmsg */
#define RXBUF		65536		/* bytes per receive buffer */
#define COPY_MAX	512		/* datagrams up to this size are
					   copied; larger ones are lent */
#define IDLE_NS		1000		/* idle_ns's least: idle this long,
					   send at once (a streaming writer
					   of small datagrams comes back in
					   well under a microsecond; a
					   request/response peer after a
					   round trip, several) */
#define LOOK_NS		50000		/* a look at an empty socket at most
					   this often (KEV_LOOK) */

/* A receive buffer.  Datagrams of more than COPY_MAX bytes go up in
 * blocks that point into it (esballoc, then dupb per datagram), so the
 * reader's copy is the only one; it is freed when the last of them is. */
struct rxb {
	frtn_t fr;			/* free(this) */
	unsigned char data[];
};

/* Receive buffers of the batching providers (RXBUF) come back through
 * a pool: one goes to the stream with each large GRO batch and comes
 * back with its last datagram, and malloc/free of 64 KiB blocks can
 * make the heap's top grow and shrink for every one (a brk() each). */
#define RXB_POOL	32
static pthread_mutex_t rxb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rxb *rxb_pool[RXB_POOL];	/* rxb_lock */
static int rxb_npool;			/* rxb_lock */

static void rxb_free(char *arg)
{
	struct rxb *b = (struct rxb *)(void *)arg;

	pthread_mutex_lock(&rxb_lock);
	if (rxb_npool < RXB_POOL) {
		rxb_pool[rxb_npool++] = b;
		b = NULL;
	}
	pthread_mutex_unlock(&rxb_lock);
	free(b);
}

static struct rxb *rxb_new(size_t size)
{
	struct rxb *b = NULL;

	if (size == RXBUF) {
		pthread_mutex_lock(&rxb_lock);
		if (rxb_npool > 0)
			b = rxb_pool[--rxb_npool];
		pthread_mutex_unlock(&rxb_lock);
		if (b != NULL)
			return b;
	}
	b = malloc(sizeof(*b) + size);
	if (b != NULL) {
		b->fr.free_func = size == RXBUF ? (void (*)())rxb_free
						: (void (*)())free;
		b->fr.free_arg = (char *)b;
	}
	return b;
}

/* A retry on the callout thread (struct dg's credit and settle): id is
 * set while it is pending or running (a close waits for it); one asked
 * for meanwhile is noted in want (its delay, ns) and made when the
 * running one returns (retry_done).  kick_lock. */
struct retry {
	toid_t id;
	uint64_t want;
};

struct dg {
	int pull_again;			/* atomic: 1 pull, 2 pull and arm */
	int flush_again;		/* atomic */
	int kicked;			/* atomic, written under kick_lock: a
					   kick is pending or running */
	toid_t kick_id;			/* that timeout, pending or running
					   (cleared when it has returned);
					   kick_lock */
	bool kick_closing;		/* no more kicks; kick_lock */
	pthread_mutex_t kick_lock;
	size_t gso_max;			/* atomic: largest datagram GSO may
					   carry (the kernel refused a run of
					   larger ones: a path MTU below them,
					   checksums off); 0 none */
	int rx_ready;			/* atomic: the socket may have data
					   (POLLIN came, or the last pull did
					   not find it empty); clear: a
					   KEV_PULL costs no system call, and
					   POLLIN is armed */
	uint64_t tx_last;		/* atomic: ns of the last send */
	uint64_t look_last;		/* atomic: ns of the last KEV_LOOK
					   that asked the socket */
	struct rxb *rxb[VLEN];		/* rx_lock: receive buffers, one per
					   recvmmsg slot (made on demand) */
	/* flow control with local receivers (inet_lfc.c) */
	struct lfc_send lfc;		/* tx_lock: their records */
	uint64_t credit_delay;		/* tx_lock: the retry flush_batch
					   asked for (ns; 0 none) */
	struct retry credit;		/* kick_lock: that retry (on wq) */
	struct retry settle;		/* kick_lock: the receiver's look
					   again (on rq) */
	struct lfc_own own;		/* our record as a receiver (see
					   struct lfc_own) */
};

/* Idle for a datagram of len bytes: IDLE_NS, and a quarter of a
 * nanosecond a byte more, for the writer's own time to make the next
 * datagram of that size (at 16 KiB a streaming writer comes back after
 * about 2 us here, its copy into a block most of it; a request/response
 * peer after a round trip of tens).  With 1 us for every size, most
 * 16 KiB datagrams went out alone, as with sockets.  STREAMS_INET_IDLE_NS,
 * when set, is the whole of it, whatever the size. */
static uint64_t idle_ns(size_t len)
{
	return inet_idle_ns(IDLE_NS + len / 4);
}

/* A look at a queue without its lock (a hint: the caller copes with a
 * message arriving or leaving just after). */
static bool q_empty(queue_t *q)
{
	return __atomic_load_n(&q->q_first, __ATOMIC_ACQUIRE) == NULL;
}

static struct dg *DG(struct inet_ep *ep)
{
	return ep->pp;
}

/* ---- indications ---- */

/* T_UDERROR_IND for a datagram to (dest, dl) with errno etype. */
static void uderror(struct inet_ep *ep, const void *dest, size_t dl,
		    t_scalar_t etype)
{
	struct T_uderror_ind u = { T_UDERROR_IND, 0, 0, 0, 0, etype };
	size_t off = sizeof(u);
	mblk_t *bp;

	/* as a datagram past the socket's buffer: a sender that leaves its
	 * errors unread loses those past the read queue's high water mark
	 * (the loopback providers' rule; they queued without bound) */
	if (!bcanput(ep->rq, 0))
		return;
	if (dl > (size_t)INET_ADDR_SIZE)
		dl = 0;
	if ((bp = tpi_proto(sizeof(u) + dl + 8, M_PROTO)) == NULL)
		return;
	u.DEST_length = (t_scalar_t)dl;
	u.DEST_offset = tpi_put_bytes(bp, &off, dest, dl);
	bp->b_wptr = bp->b_rptr + off;
	memcpy(bp->b_rptr, &u, sizeof(u));
	inet_up(ep, bp);
}

/* Answer the request mp (consumed) with T_UDERROR_IND. */
static void uderror_req(struct inet_ep *ep, mblk_t *mp, t_scalar_t etype)
{
	struct T_unitdata_req r;
	const void *dest;

	memcpy(&r, mp->b_rptr, sizeof(r));
	dest = tpi_region(mp, r.DEST_offset, r.DEST_length);
	uderror(ep, dest, dest ? (size_t)r.DEST_length : 0, etype);
	INET_COUNT(ep, tx_drops, 1);
	freemsg(mp);
}

/* Read the socket's error queue: one T_UDERROR_IND per error. */
static void read_errors(struct inet_ep *ep)
{
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage ss;
		char cbuf[512];
		char dummy[1];
		struct iovec iov = { dummy, sizeof(dummy) };
		struct msghdr mh = { &ss, sizeof(ss), &iov, 1, cbuf,
				     sizeof(cbuf), 0 };
		struct cmsghdr *c;

		if (recvmsg(ep->ke.ke_fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
			struct sock_extended_err ee;

			if (!((c->cmsg_level == IPPROTO_IP &&
			       c->cmsg_type == IP_RECVERR) ||
			      (c->cmsg_level == IPPROTO_IPV6 &&
			       c->cmsg_type == IPV6_RECVERR)))
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			uderror(ep, &ss, mh.msg_namelen ?
				inet_addr_len(&ss) : 0, (t_scalar_t)ee.ee_errno);
		}
	}
}

/* Is err a pending asynchronous error (an ICMP report) that a socket
 * call returned instead of doing its work? */
static bool async_error(int err)
{
	return err == ECONNREFUSED || err == EHOSTUNREACH ||
	       err == ENETUNREACH || err == EHOSTDOWN || err == ENETDOWN ||
	       err == EPROTO || err == ENOPROTOOPT || err == EMSGSIZE ||
	       err == ETIMEDOUT;
}

/* ---- sending ---- */

/* A destination: what a checked T_UNITDATA_REQ may name (inet_addr_ok:
 * exactly a sockaddr_in or a sockaddr_in6), without the room of a
 * sockaddr_storage, so that a flush's BATCH of them stay small. */
union dgname {
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/* The destination of a checked T_UNITDATA_REQ. */
static void req_dest(const mblk_t *mp, union dgname *n, socklen_t *sl)
{
	struct T_unitdata_req r;

	memcpy(&r, mp->b_rptr, sizeof(r));
	memcpy(n, mp->b_rptr + r.DEST_offset, (size_t)r.DEST_length);
	*sl = (socklen_t)r.DEST_length;
}

/* The data blocks of mp into iov (at most max): how many, or -1. */
static int fill_iov(const mblk_t *mp, struct iovec *iov, int max)
{
	int n = 0;

	for (mp = mp->b_cont; mp != NULL; mp = mp->b_cont) {
		if (mp->b_wptr == mp->b_rptr)
			continue;
		if (n == max)
			return -1;
		iov[n].iov_base = mp->b_rptr;
		iov[n].iov_len = (size_t)(mp->b_wptr - mp->b_rptr);
		n++;
	}
	return n;
}

/* Room for a UDP_SEGMENT control message. */
union segcm {
	char buf[CMSG_SPACE(sizeof(uint16_t))];
	struct cmsghdr align;
};

/* mh's datagram is a GSO run of seg-byte segments (UDP_SEGMENT, in cm). */
static void set_segment(struct msghdr *mh, union segcm *cm, uint16_t seg)
{
	struct cmsghdr *c;

	mh->msg_control = cm->buf;
	mh->msg_controllen = sizeof(cm->buf);
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
}

/* The raw IP header the kernel wants us to build: only IPPROTO_RAW.
 * sa: a sockaddr_storage or a union dgname (inet_port looks at the
 * family and the port only). */
static void fix_raw_dest(struct inet_ep *ep, void *sa)
{
	if (ep->pr->kind == IK_RAW)
		*inet_port(sa) = 0;
}

/*
 * Send one datagram now (tx_lock held).  0 when it is done with (sent,
 * or dropped with T_UDERROR_IND: mp consumed), or EAGAIN when the kernel
 * has no room (mp untouched).
 */
/* ---- options of one datagram ---- */

#define DGOPT_MAX	4		/* ancillary options per datagram */

struct dgopts {
	int family;
	size_t len;
	union {
		char buf[DGOPT_MAX * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
};

/* topt_assoc's setter: option d, checked against its range, becomes a
 * control message. */
static t_uscalar_t dgopt_set(void *arg, const struct topt_def *d,
			     union topt_val *v)
{
	struct dgopts *o = arg;
	struct cmsghdr *c = (struct cmsghdr *)(o->u.buf + o->len);
	bool v6 = o->family == AF_INET6;
	int val = (int)v->i;

	if (d->level != INET_IP || (d->name != T_IP_TTL &&
				    d->name != T_IP_TOS) ||
	    o->len + CMSG_SPACE(sizeof(int)) > sizeof(o->u.buf))
		return T_FAILURE;
	memset(c, 0, CMSG_SPACE(sizeof(int)));
	c->cmsg_level = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
	if (d->name == T_IP_TTL)
		c->cmsg_type = v6 ? IPV6_HOPLIMIT : IP_TTL;
	else
		c->cmsg_type = v6 ? IPV6_TCLASS : IP_TOS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &val, sizeof(int));
	o->len += CMSG_SPACE(sizeof(int));
	return T_SUCCESS;
}

static const struct topt_ops dgopt_ops = { NULL, dgopt_set };

/* The options of T_UNITDATA_REQ mp as control messages in *o: 0, or
 * TBADOPT when they are not well formed or not allowed with data. */
static int dg_opts(struct inet_ep *ep, const mblk_t *mp, struct dgopts *o)
{
	struct topt_table t = *ep->pr->opts;
	struct T_unitdata_req r;

	memcpy(&r, mp->b_rptr, sizeof(r));
	o->family = __atomic_load_n(&ep->family, __ATOMIC_RELAXED);
	o->len = 0;
	t.ops = &dgopt_ops;
	return topt_assoc(&t, o, tpi_region(mp, r.OPT_offset, r.OPT_length),
			  (size_t)r.OPT_length, ep->priv);
}

/* Does mp (a checked request) carry options? */
static bool has_opts(const mblk_t *mp)
{
	const union T_primitives *p = (const void *)mp->b_rptr;

	return mp->b_datap->db_type != M_DATA &&
	       p->type == T_UNITDATA_REQ && p->unitdata_req.OPT_length > 0;
}

/* Unbound meanwhile (tx_lock held)?  Then what is still to be sent is
 * dropped: the socket is a new one, not bound where the endpoint was. */
static bool gone_unbound(struct inet_ep *ep)
{
	return __atomic_load_n(&ep->state, __ATOMIC_ACQUIRE) == TS_UNBND;
}

/* The destination of a message (or the peer of a connected endpoint,
 * for a datagram without one). */
static const struct sockaddr *mm_dest(struct inet_ep *ep,
				      const struct msghdr *mh, socklen_t *len)
{
	if (mh->msg_namelen != 0) {
		*len = mh->msg_namelen;
		return mh->msg_name;
	}
	*len = ep->raddrlen;		/* (fixed while connected) */
	return (const struct sockaddr *)&ep->raddr;
}

/* Send mp alone (tx_lock held): 0 (sent, or answered with an error:
 * *sent says which), or EAGAIN (no room: mp is the caller's again). */
static int send_dg(struct inet_ep *ep, mblk_t *mp, bool *sent)
{
	union dgname ss;
	struct iovec iov[64];
	struct msghdr mh = { 0 };
	struct dgopts o;
	int n, tries = 0;

	*sent = false;
	if (gone_unbound(ep)) {
		freemsg(mp);
		INET_COUNT(ep, tx_drops, 1);
		return 0;
	}

	req_dest(mp, &ss, &mh.msg_namelen);
	fix_raw_dest(ep, &ss);
	mh.msg_name = &ss;
	if ((n = fill_iov(mp, iov, 64)) < 0) {
		/* a long chain: send a flat copy */
		mblk_t *flat = msgpullup(mp->b_cont, -1);

		if (flat == NULL) {
			uderror_req(ep, mp, ENOBUFS);
			return 0;
		}
		freemsg(mp->b_cont);
		mp->b_cont = flat;
		n = fill_iov(mp, iov, 64);
	}
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)n;
	if (has_opts(mp)) {
		if (dg_opts(ep, mp, &o) != 0) {	/* (checked when put) */
			uderror_req(ep, mp, ENOPROTOOPT);
			return 0;
		}
		mh.msg_control = o.len > 0 ? o.u.buf : NULL;
		mh.msg_controllen = o.len;
	}
	for (;;) {
		ssize_t r = sendmsg(ep->ke.ke_fd, &mh,
				   MSG_DONTWAIT | MSG_NOSIGNAL);

		INET_COUNT(ep, tx_calls, 1);
		if (r >= 0) {
			INET_COUNT(ep, tx_sent, 1);
			freemsg(mp);
			*sent = true;
			return 0;
		}
		if (errno == EAGAIN || errno == ENOBUFS)
			return EAGAIN;
		if (errno == EINTR)
			continue;
		if (async_error(errno) && tries++ == 0) {
			/* an earlier datagram's error came back here */
			read_errors(ep);
			continue;
		}
		uderror_req(ep, mp, errno);
		return 0;
	}
}

/* send_dg of a datagram charged cost at lp's receiver (lp NULL: none):
 * what was not sent is taken back. */
static int send_charged(struct inet_ep *ep, mblk_t *mp, struct lfc_peer *lp,
			uint64_t cost)
{
	bool sent;
	int err = send_dg(ep, mp, &sent);

	if (!sent && lp != NULL)
		lfc_unsend(lp, cost);
	return err;
}

/* The local receiver (inet_lfc.c) a datagram goes to, or NULL (tx_lock
 * held). */
static struct lfc_peer *dg_peer(struct inet_ep *ep, const mblk_t *mp)
{
	union dgname n;
	struct msghdr mh = { .msg_name = &n };
	socklen_t dl;
	const struct sockaddr *to;
	bool full;

	if (!ep->pr->fast || ep->pr->kind != IK_UDP)
		return NULL;
	req_dest(mp, &n, &mh.msg_namelen);
	to = mm_dest(ep, &mh, &dl);
	return lfc_lookup(&DG(ep)->lfc, to, dl, &full);
}

/* A datagram that does not wait for room at a local receiver (options
 * of its own, a long chain): sent alone, charged all the same, so what
 * the receiver takes out of its socket is owed. */
static int send_one(struct inet_ep *ep, mblk_t *mp)
{
	struct lfc_peer *lp = dg_peer(ep, mp);
	uint64_t cost = 0;
	int err;

	if (lp != NULL)
		lfc_charge(lp, cost = lfc_cost(tpi_datalen(mp), 0));
	err = send_charged(ep, mp, lp, cost);
	lfc_unpin(&DG(ep)->lfc);
	return err;
}

/* Datagrams mp[0..n) share destination and size: may they be one GSO
 * message? */
static bool gso_ok(struct inet_ep *ep, size_t size)
{
	return ep->pr->kind == IK_UDP && size > 0 &&
	       size <= __atomic_load_n(&DG(ep)->gso_max, __ATOMIC_RELAXED);
}

static bool same_dest(const mblk_t *a, const mblk_t *b)
{
	struct T_unitdata_req ra, rb;

	memcpy(&ra, a->b_rptr, sizeof(ra));
	memcpy(&rb, b->b_rptr, sizeof(rb));
	return ra.DEST_length == rb.DEST_length &&
	       memcmp(a->b_rptr + ra.DEST_offset, b->b_rptr + rb.DEST_offset,
		      (size_t)ra.DEST_length) == 0;
}

/* msgs[from..to) back at the head of the write queue, in order. */
static void put_back(struct inet_ep *ep, mblk_t **msgs, int from, int to)
{
	while (to-- > from)
		putbq(ep->wq, msgs[to]);
}

/* What a flush_batch came to. */
enum fb { FB_ROOM, FB_FULL, FB_CREDIT };

/*
 * Messages mm[0..*nmm) about to be sent (datagrams msgs[first[k]..) of
 * each): reserve room for them at the local receivers they go to
 * (inet_lfc.c): peer[k] and cost[k] for message k (NULL, 0: not to
 * one), the entries pinned until the batch is done (lfc_unpin).  What
 * may not go now is put back on the queue (*nmm, *nmsg cut), and *wait
 * is the receiver that had no room for the first of it (NULL: the
 * table of receivers was full; the rest goes in the next batch).
 */
static void lfc_trim(struct inet_ep *ep, mblk_t **msgs, int *nmsg,
		     struct mmsghdr *mm, int *nmm, int *first, int *count,
		     size_t *sizes, uint64_t *cost, struct lfc_peer **peer,
		     struct lfc_peer **wait)
{
	struct dg *d = DG(ep);
	int k, fit = 0;
	bool full = false;

	*wait = NULL;
	for (k = 0; k < *nmm; k++) {
		socklen_t sl;
		const struct sockaddr *to = mm_dest(ep, &mm[k].msg_hdr, &sl);
		size_t len = sizes[first[k]] * (size_t)count[k];

		if ((peer[k] = lfc_lookup(&d->lfc, to, sl, &full)) == NULL &&
		    full)
			break;
		cost[k] = peer[k] == NULL ? 0 :
			  lfc_cost(len, count[k] > 1 ? sizes[first[k]] : 0);
	}
	/* one reservation for each run of messages to one receiver (and
	 * those to none between) */
	while (fit < k) {
		struct lfc_peer *p = peer[fit];
		int from = fit, j = fit + 1, got;

		if (p == NULL) {
			fit++;
			continue;
		}
		while (j < k && (peer[j] == p || peer[j] == NULL))
			j++;
		got = lfc_reserve(p, cost + from, j - from);
		if (got > 0)
			lfc_sent(&d->lfc);
		fit = from + got;
		if (got < j - from) {
			*wait = p;
			break;
		}
	}
	if (fit < *nmm) {
		put_back(ep, msgs, first[fit], *nmsg);
		*nmsg = first[fit];
		*nmm = fit;
	}
}

/*
 * Send up to BATCH queued datagrams with one sendmmsg (tx_lock held).
 * FB_FULL when the kernel had no room, FB_CREDIT when a local receiver
 * had none (d->credit_delay: when to look again); what is left was put
 * back on the queue, in order.
 */
static enum fb flush_batch(struct inet_ep *ep, bool *more)
{
	mblk_t *msgs[BATCH];
	size_t sizes[BATCH];
	struct mmsghdr mm[BATCH];
	union dgname names[BATCH];
	struct iovec iov[IOVS];
	union segcm cm[BATCH];
	int nmsg = 0, nmm = 0, niov = 0, first[BATCH + 1], count[BATCH];
	int sent, segs = __atomic_load_n(&gso_segs, __ATOMIC_RELAXED);
	uint64_t cost[BATCH];
	struct lfc_peer *peer[BATCH], *wait = NULL;
	enum fb res = FB_ROOM;

	*more = false;
	if (gone_unbound(ep)) {
		flushq(ep->wq, FLUSHALL);
		return FB_ROOM;
	}
	if (ep->pr->kind == IK_UDP && lfc_blocked(&DG(ep)->lfc) &&
	    !q_empty(ep->wq)) {
		/* the head still waits for room at a local receiver */
		uint64_t delay = lfc_wait(&DG(ep)->lfc, DG(ep)->lfc.wait);

		if (delay != 0) {
			DG(ep)->credit_delay = delay;
			return FB_CREDIT;
		}
	}
	for (int k; nmsg < BATCH &&
		    (k = str_getq_n(ep->wq, msgs + nmsg, BATCH - nmsg)) > 0;)
		for (; k > 0; k--, nmsg++)
			sizes[nmsg] = tpi_datalen(msgs[nmsg]);
	if (nmsg == 0)
		return FB_ROOM;
	*more = nmsg == BATCH;
	/* group into messages: runs for GSO, else one each */
	for (int i = 0; i < nmsg;) {
		int j = i + 1, k, n;
		size_t total = sizes[i];
		struct msghdr *mh = &mm[nmm].msg_hdr;

		if (gso_ok(ep, sizes[i]))
			while (j < nmsg && j - i < segs &&
			       sizes[j] == sizes[i] &&
			       total + sizes[j] <= GSO_BYTES &&
			       same_dest(msgs[i], msgs[j]) &&
			       !has_opts(msgs[j]))
				total += sizes[j++];
		memset(mh, 0, sizeof(*mh));
		req_dest(msgs[i], &names[nmm], &mh->msg_namelen);
		fix_raw_dest(ep, &names[nmm]);
		mh->msg_name = &names[nmm];
		mh->msg_iov = &iov[niov];
		for (k = i; k < j; k++) {
			n = fill_iov(msgs[k], &iov[niov], IOVS - niov);
			if (n < 0)
				break;		/* no iovecs left for msgs[k] */
			niov += n;
		}
		if ((k == i || has_opts(msgs[i])) && nmm > 0) {
			/* out of iovecs, or a datagram with options of its
			 * own next: send what is grouped so far and put the
			 * rest back */
			put_back(ep, msgs, i, nmsg);
			nmsg = i;
			*more = true;
			break;
		}
		if (k == i || has_opts(msgs[i])) {
			/* more blocks than a message may carry, or options
			 * of its own: on its own (send_one; flattened) */
			if (send_one(ep, msgs[i]) == EAGAIN) {
				put_back(ep, msgs, i, nmsg);
				return FB_FULL;
			}
			i++;
			continue;
		}
		j = k;	/* a run ends before a datagram that did not fit */
		mh->msg_iovlen = (size_t)(&iov[niov] - mh->msg_iov);
		if (j - i > 1)
			set_segment(mh, &cm[nmm], (uint16_t)sizes[i]);
		first[nmm] = i;
		count[nmm] = j - i;
		nmm++;
		i = j;
	}
	first[nmm] = nmsg;
	if (ep->pr->kind == IK_UDP) {
		int was = nmm;

		lfc_trim(ep, msgs, &nmsg, mm, &nmm, first, count, sizes, cost,
			 peer, &wait);
		if (nmm < was)
			*more = true;
		if (wait != NULL) {
			uint64_t delay = lfc_wait(&DG(ep)->lfc, wait);

			/* 0: it stalled and is sent to as plain UDP now */
			DG(ep)->credit_delay = delay;
			if (delay != 0)
				res = FB_CREDIT;
		}
	} else {
		memset(peer, 0, sizeof(peer[0]) * (size_t)nmm);
		memset(cost, 0, sizeof(cost[0]) * (size_t)nmm);
	}
	sent = 0;
	while (sent < nmm) {
		int r = sendmmsg(ep->ke.ke_fd, &mm[sent], (unsigned)(nmm - sent),
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		INET_COUNT(ep, tx_calls, 1);
		if (r > 0) {
			for (int k = sent; k < sent + r; k++) {
				INET_COUNT(ep, tx_sent, count[k]);
				for (int m = first[k]; m < first[k] + count[k];
				     m++)
					freemsg(msgs[m]);
			}
			sent += r;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == ENOBUFS) {
			put_back(ep, msgs, first[sent], nmsg);
			for (int k = sent; k < nmm; k++)
				if (peer[k] != NULL)
					lfc_unsend(peer[k], cost[k]);
			res = FB_FULL;
			break;
		}
		if (count[sent] > 1 && (errno == EINVAL || errno == EIO ||
					errno == EMSGSIZE)) {
			/* GSO refused (a path MTU below the size, checksum
			 * off...): not for this size or larger again */
			size_t sz = sizes[first[sent]];

			if (sz - 1 < __atomic_load_n(&DG(ep)->gso_max,
						     __ATOMIC_RELAXED))
				__atomic_store_n(&DG(ep)->gso_max, sz - 1,
						 __ATOMIC_RELAXED);
		}
		/* the first message failed: send its datagrams one by one
		 * (errors reported per datagram; each charged alone) and
		 * go on */
		struct lfc_peer *p = peer[sent];

		if (p != NULL)
			lfc_unsend(p, cost[sent]);
		for (int m = first[sent]; m < first[sent] + count[sent]; m++) {
			uint64_t c = 0;

			if (p != NULL)
				lfc_charge(p, c = lfc_cost(sizes[m], 0));
			if (send_charged(ep, msgs[m], p, c) == EAGAIN) {
				put_back(ep, msgs, m, nmsg);
				res = FB_FULL;
				break;
			}
		}
		if (res == FB_FULL) {
			for (int k = sent + 1; k < nmm; k++)
				if (peer[k] != NULL)
					lfc_unsend(peer[k], cost[k]);
			break;
		}
		sent++;
	}
	lfc_unpin(&DG(ep)->lfc);
	return res;
}

static void credit_retry(struct inet_ep *ep, uint64_t delay);

/* Flush the write queue (any thread; one at a time). */
static void flush(struct inet_ep *ep)
{
	struct dg *d = DG(ep);
	bool more, room = true;
	enum fb res = FB_ROOM;

	do {
		if (!strtrylock(&ep->tx_lock)) {
			__atomic_store_n(&d->flush_again, 1, __ATOMIC_RELEASE);
			/* the holder may have looked already: try again */
			if (!strtrylock(&ep->tx_lock))
				return;
		}
		__atomic_store_n(&d->flush_again, 0, __ATOMIC_RELAXED);
		if (ep->pr->fast) {
			do {
				res = flush_batch(ep, &more);
			} while (res == FB_ROOM && more);
			room = res != FB_FULL;
		} else {
			/* XTI over sockets: a sendmsg per datagram */
			mblk_t *mp;

			while ((mp = getq(ep->wq)) != NULL)
				if (send_one(ep, mp) == EAGAIN) {
					putbq(ep->wq, mp);
					room = false;
					break;
				}
		}
		if (room)
			__atomic_store_n(&d->tx_last, str_now_ns(),
					 __ATOMIC_RELAXED);
		uint64_t delay = res == FB_CREDIT ? d->credit_delay : 0;
		strunlock(&ep->tx_lock);
		/* No room: wait for POLLOUT.  If the I/O thread ran for an
		 * earlier report meanwhile (arming was then a no-op) it left
		 * flush_again: try once more, which arms for real. */
		if (!room)
			(void)str_kev_rearm(&ep->ke, POLLOUT);
		/* no credit at a local receiver: look again soon */
		if (delay != 0)
			credit_retry(ep, delay);
	} while (__atomic_exchange_n(&d->flush_again, 0, __ATOMIC_ACQ_REL));
}

/* A flush that found tx_lock taken left its work to the holder
 * (flush_again): the holder calls this once it has let tx_lock go. */
static void flush_owed(struct inet_ep *ep)
{
	if (__atomic_load_n(&DG(ep)->flush_again, __ATOMIC_SEQ_CST))
		flush(ep);
}

/* The kick: what waits on the queue is flushed within a tick, whoever
 * sends next.  A timeout rather than the I/O thread: a second thread
 * flushing while the writer writes would take a second CPU from the
 * receiver for the same work.
 *
 * kicked (a hint read without the lock) and kick_id change together
 * under kick_lock: kicked is 1 only while a kick is pending or running
 * and will look at the queue after it has let kick_id go.  A writer puts
 * its datagram on the queue, then reads kicked (a full fence between, as
 * the kick stores kicked before it looks at the queue): either the kick
 * sees the datagram, or the writer sees kicked 0 and kicks itself.  (A
 * writer that set kicked itself while a kick was running left kicked 1
 * with nothing pending when that kick found the queue already sent: the
 * next datagrams waited for a full batch, for ever if none came.) */
static void kick_fire(void *arg)
{
	struct inet_ep *ep = arg;
	struct dg *d = DG(ep);
	bool now = false;

	if (!q_empty(ep->wq))
		flush(ep);
	/* kick_id stays set while we run: a close waits for us
	 * (quntimeout) */
	pthread_mutex_lock(&d->kick_lock);
	d->kick_id = 0;
	__atomic_store_n(&d->kicked, 0, __ATOMIC_SEQ_CST);
	if (!d->kick_closing && !q_empty(ep->wq)) {
		/* queued while we flushed: kick again for it */
		d->kick_id = qtimeout(ep->wq, (void (*)())kick_fire, ep, 1);
		__atomic_store_n(&d->kicked, d->kick_id != 0,
				 __ATOMIC_SEQ_CST);
		now = d->kick_id == 0;	/* no memory: flush now */
	}
	pthread_mutex_unlock(&d->kick_lock);
	if (now)
		flush(ep);
}

static void kick(struct inet_ep *ep)
{
	struct dg *d = DG(ep);
	bool now;

	pthread_mutex_lock(&d->kick_lock);
	if (d->kick_closing) {
		pthread_mutex_unlock(&d->kick_lock);
		return;
	}
	if (d->kick_id == 0)
		d->kick_id = qtimeout(ep->wq, (void (*)())kick_fire, ep, 1);
	__atomic_store_n(&d->kicked, d->kick_id != 0, __ATOMIC_SEQ_CST);
	now = d->kick_id == 0;		/* no memory: flush now */
	pthread_mutex_unlock(&d->kick_lock);
	if (now)
		flush(ep);
}

/* Arm retry t to call fn(ep) on q after delay ns, unless the endpoint
 * closes or t is pending or running already (then once more after it).
 * False when there was no memory for it. */
static bool retry_arm(struct inet_ep *ep, struct retry *t, queue_t *q,
		      void (*fn)(void *), uint64_t delay)
{
	struct dg *d = DG(ep);
	bool ok = true;

	pthread_mutex_lock(&d->kick_lock);
	if (d->kick_closing) {
		/* (closing: nothing more is done) */
	} else if (t->id != 0) {
		t->want = delay;
	} else {
		t->id = str_qtimeout_ns(q, (void (*)())fn, ep, delay);
		ok = t->id != 0;
	}
	pthread_mutex_unlock(&d->kick_lock);
	return ok;
}

/* The end of fn, retry t's callback: arm it again if that was asked
 * for while it ran. */
static void retry_done(struct inet_ep *ep, struct retry *t, queue_t *q,
		       void (*fn)(void *))
{
	struct dg *d = DG(ep);

	pthread_mutex_lock(&d->kick_lock);
	t->id = 0;
	if (t->want != 0 && !d->kick_closing)
		t->id = str_qtimeout_ns(q, (void (*)())fn, ep, t->want);
	t->want = 0;
	pthread_mutex_unlock(&d->kick_lock);
}

/* The credit retry: a flush that found a local receiver without room
 * for what waits looks again after delay (inet_lfc.c's lfc_wait). */
static void credit_fire(void *arg)
{
	struct inet_ep *ep = arg;

	flush(ep);
	retry_done(ep, &DG(ep)->credit, ep->wq, credit_fire);
}

static void credit_retry(struct inet_ep *ep, uint64_t delay)
{
	if (!retry_arm(ep, &DG(ep)->credit, ep->wq, credit_fire, delay))
		kick(ep);		/* no memory: a tick, then */
}

/* ---- T_UNITDATA_REQ ---- */

/* Check a T_UNITDATA_REQ: 0, or the errno of its T_UDERROR_IND. */
static int check_req(struct inet_ep *ep, mblk_t *mp, size_t *lenp)
{
	struct T_unitdata_req r;
	size_t len = tpi_datalen(mp);

	memcpy(&r, mp->b_rptr, sizeof(r));
	/* a connected endpoint may leave the destination out */
	if (!(r.DEST_length == 0 &&
	      __atomic_load_n(&ep->state, __ATOMIC_RELAXED) == TS_DATA_XFER) &&
	    inet_addr_ok(ep, tpi_region(mp, r.DEST_offset, r.DEST_length),
			 r.DEST_length, true) != 0)
		return EINVAL;
	if (len > (size_t)ep->pr->tsdu)
		return EMSGSIZE;
	*lenp = len;
	return 0;
}

static bool data_only(const mblk_t *mp)
{
	for (mp = mp->b_cont; mp != NULL; mp = mp->b_cont)
		if (mp->b_datap->db_type != M_DATA)
			return false;
	return true;
}

static void unitdata_req(struct inet_ep *ep, mblk_t *mp)
{
	struct dg *d = DG(ep);
	struct T_unitdata_req r;
	size_t len = 0;
	bool was_empty = true;
	int err;

	if (!data_only(mp) ||
	    (__atomic_load_n(&ep->state, __ATOMIC_RELAXED) != TS_IDLE &&
	     __atomic_load_n(&ep->state, __ATOMIC_RELAXED) != TS_DATA_XFER)) {
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	if ((err = check_req(ep, mp, &len)) != 0) {
		uderror_req(ep, mp, err);
		return;
	}
	inet_count_tx(ep, len);
	memcpy(&r, mp->b_rptr, sizeof(r));
	if (r.OPT_length > 0) {
		/* options for this datagram only: checked now, sent as its
		 * ancillary data (send_one) */
		struct dgopts o;

		if (dg_opts(ep, mp, &o) != 0) {
			uderror_req(ep, mp, ENOPROTOOPT);
			return;
		}
	}
	/* XTI over sockets: a sendmsg per datagram, unless others wait;
	 * batching: only a lone datagram goes now */
	if (q_empty(ep->wq) &&
	    (!ep->pr->fast ||
	     str_now_ns() - __atomic_load_n(&d->tx_last, __ATOMIC_RELAXED) >
	     idle_ns(len)) &&
	    strtrylock(&ep->tx_lock)) {
		/* (room at a local receiver reserved first: inet_lfc.c) */
		struct lfc_peer *lp = dg_peer(ep, mp);
		uint64_t c = lp != NULL ? lfc_cost(len, 0) : 0;

		if (lp == NULL || lfc_reserve(lp, &c, 1) == 1) {
			if (lp != NULL)
				lfc_sent(&d->lfc);
			err = send_charged(ep, mp, lp, c);
		} else {
			err = EAGAIN;		/* it waits on the queue */
		}
		lfc_unpin(&d->lfc);
		if (ep->pr->fast)
			__atomic_store_n(&d->tx_last, str_now_ns(),
					 __ATOMIC_RELAXED);
		strunlock(&ep->tx_lock);
		flush_owed(ep);
		if (err == 0)
			return;
	}
	if (mp->b_band == 0) {
		was_empty = str_putq_one(ep->wq, mp);
	} else if (!putq(ep->wq, mp)) {
		freemsg(mp);		/* (no memory for the band) */
		INET_COUNT(ep, tx_drops, 1);
		return;
	}
	if (!ep->pr->fast) {
		/* the write service procedure sends it (putq enabled it),
		 * or POLLOUT once the kernel has room */
		(void)str_kev_rearm(&ep->ke, POLLOUT);
		return;
	}
	/* flush when another datagram of this size would no longer fit
	 * in one GSO message: the queue goes out in whole ones (three of
	 * 16 KiB; about 60 of 1 KiB, as q_count counts the TPI headers
	 * too) rather than full ones plus a straggler.  Datagrams too big
	 * for two to a GSO message go two to a flush, as before. */
	size_t queued = __atomic_load_n(&ep->wq->q_count, __ATOMIC_RELAXED);

	if (__atomic_load_n(&ep->wq->q_mblkcnt, __ATOMIC_RELAXED) >= 2 * BATCH ||
	    queued >= GSO_BYTES ||
	    (len <= GSO_BYTES / 2 && queued + len > GSO_BYTES))
		flush(ep);
	else if (was_empty) {
		/* (the queue before kicked: see kick_fire).  Behind others
		 * there is nothing to do: whoever queued the first of them
		 * made sure of a flush, which takes the queue up to an
		 * empty one, ours with it. */
#if STR_TSAN
		/* TSan does not model fences: a sequentially consistent
		 * read-modify-write orders the same way */
		if (!__atomic_fetch_add(&d->kicked, 0, __ATOMIC_SEQ_CST))
			kick(ep);
#else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&d->kicked, __ATOMIC_SEQ_CST))
			kick(ep);
#endif
	}
}

/* ---- connected datagram endpoints ---- */

static int dg_bound(struct inet_ep *ep, int *unixerr);
static void dg_unbound(struct inet_ep *ep);

/*
 * T_CONN_REQ on a datagram endpoint (as Solaris UDP allows): connect(2)
 * the socket to DEST, answer T_OK_ACK and T_CONN_CON at once; the
 * endpoint is then TS_DATA_XFER, takes T_UNITDATA_REQ with or without a
 * destination and T_DATA_REQ, receives only from its peer, and gets the
 * peer's ICMP errors as T_UDERROR_IND.  T_DISCON_REQ undoes it.
 */
static void dg_conn_req(struct inet_ep *ep, mblk_t *mp)
{
	struct T_conn_req r;
	struct T_conn_con cc = { T_CONN_CON, 0, 0, 0, 0 };
	struct sockaddr_storage ss;
	socklen_t sl;
	size_t off = sizeof(cc);
	mblk_t *con;
	int err;

	memcpy(&r, mp->b_rptr, sizeof(r));
	if ((err = inet_addr_in(ep, tpi_region(mp, r.DEST_offset,
					       r.DEST_length),
				r.DEST_length, true, &ss, &sl)) != 0) {
		inet_error_ack(ep, mp, T_CONN_REQ, TBADADDR, 0);
		return;
	}
	if (tpi_datalen(mp) > 0) {	/* no connect data */
		inet_error_ack(ep, mp, T_CONN_REQ, TBADDATA, 0);
		return;
	}
	if ((con = tpi_proto(sizeof(cc) + INET_ADDR_SIZE + 4,
			     M_PROTO)) == NULL) {
		inet_error_ack(ep, mp, T_CONN_REQ, TSYSERR, ENOMEM);
		return;
	}
	if (ep->pr->fast)
		flush(ep);		/* what was sent before goes first */
	inet_lock(ep);
	if (ep->state != TS_IDLE) {
		inet_unlock(ep);
		freemsg(con);
		inet_error_ack(ep, mp, T_CONN_REQ, TOUTSTATE, 0);
		return;
	}
	if (r.OPT_length > 0 &&
	    topt_assoc(ep->pr->opts, ep, tpi_region(mp, r.OPT_offset,
						    r.OPT_length),
		       (size_t)r.OPT_length, ep->priv) != 0) {
		inet_unlock(ep);
		freemsg(con);
		inet_error_ack(ep, mp, T_CONN_REQ, TBADOPT, 0);
		return;
	}
	fix_raw_dest(ep, &ss);
	if (connect(ep->ke.ke_fd, (struct sockaddr *)&ss, sl) < 0) {
		err = errno;
		inet_unlock(ep);
		freemsg(con);
		inet_error_ack(ep, mp, T_CONN_REQ, TSYSERR, err);
		return;
	}
	memcpy(&ep->raddr, tpi_region(mp, r.DEST_offset, r.DEST_length),
	       (size_t)r.DEST_length);
	ep->raddrlen = sl;
	/* it takes only its peer's datagrams now: local senders to its
	 * port are no longer owed room there (inet_lfc.c) */
	dg_unbound(ep);
	__atomic_store_n(&ep->state, TS_DATA_XFER, __ATOMIC_RELEASE);
	cc.RES_length = (t_scalar_t)sl;
	cc.RES_offset = tpi_put_bytes(con, &off, &ep->raddr, sl);
	memcpy(con->b_rptr, &cc, sizeof(cc));
	inet_unlock(ep);
	inet_ok_ack(ep, mp, T_CONN_REQ);
	inet_up(ep, con);
}

/* (Replacing the socket holds tx_lock, so a flush may be owed after it:
 * done once the new socket is bound, not before, for a datagram sent on
 * it unbound would make the kernel bind it to a port of its choosing.) */
static void dg_discon_req(struct inet_ep *ep, mblk_t *mp)
{
	struct sockaddr_storage la;
	socklen_t ll;
	int err;

	if (ep->pr->fast)
		flush(ep);
	inet_lock(ep);
	if (ep->state != TS_DATA_XFER) {
		inet_unlock(ep);
		inet_error_ack(ep, mp, T_DISCON_REQ, TOUTSTATE, 0);
		return;
	}
	/* a fresh socket bound where this one was: disconnecting a UDP
	 * socket may give back a port the kernel chose */
	la = ep->laddr;
	ll = ep->laddrlen;
	fix_raw_dest(ep, &la);		/* bind(2) wants port 0 */
	dg_unbound(ep);			/* (dg_bound publishes anew) */
	if ((err = inet_socket_renew(ep, ep->family)) != 0 ||
	    (bind(ep->ke.ke_fd, (struct sockaddr *)&la, ll) < 0 &&
	     (err = errno) != 0)) {
		inet_unlock(ep);
		inet_error_ack(ep, mp, T_DISCON_REQ, TSYSERR, err);
		flush_owed(ep);
		return;
	}
	(void)dg_bound(ep, &err);
	ep->raddrlen = 0;
	__atomic_store_n(&ep->state, TS_IDLE, __ATOMIC_RELEASE);
	inet_unlock(ep);
	inet_ok_ack(ep, mp, T_DISCON_REQ);
	flush_owed(ep);
}

/* T_DATA_REQ, T_OPTDATA_REQ (or M_DATA) on a connected endpoint: one
 * datagram to the peer, sent as a T_UNITDATA_REQ without a destination
 * (and with T_OPTDATA_REQ's options) would be. */
static void dg_data_req(struct inet_ep *ep, mblk_t *mp, t_scalar_t prim)
{
	struct T_unitdata_req u = { T_UNITDATA_REQ, 0, 0, 0, 0 };
	const unsigned char *opt = NULL;
	size_t olen = 0;
	mblk_t *bp;

	if (__atomic_load_n(&ep->state, __ATOMIC_ACQUIRE) != TS_DATA_XFER ||
	    prim == T_EXDATA_REQ || prim == T_ORDREL_REQ) {
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	if (prim == T_OPTDATA_REQ) {
		struct T_optdata_req od;

		memcpy(&od, mp->b_rptr, sizeof(od));
		olen = (size_t)od.OPT_length;
		opt = tpi_region(mp, od.OPT_offset, od.OPT_length);
		/* no expedited data on a datagram endpoint */
		if ((od.DATA_flag & T_ODF_EX) || (olen > 0 && opt == NULL)) {
			tpi_fatal(ep->wq, mp, EPROTO);
			return;
		}
	}
	/* (the options right after the primitive: 20 bytes, aligned) */
	if ((bp = tpi_proto(sizeof(u) + olen, M_PROTO)) == NULL) {
		freemsg(mp);
		INET_COUNT(ep, tx_drops, 1);
		return;
	}
	if (olen > 0) {
		u.OPT_length = (t_scalar_t)olen;
		u.OPT_offset = (t_scalar_t)sizeof(u);
		memcpy(bp->b_rptr + sizeof(u), opt, olen);
	}
	memcpy(bp->b_rptr, &u, sizeof(u));
	if (prim == -1) {		/* plain M_DATA */
		bp->b_cont = mp;
	} else {			/* the data after its T_DATA_REQ */
		bp->b_cont = mp->b_cont;
		mp->b_cont = NULL;
		freeb(mp);
	}
	unitdata_req(ep, bp);
}

static void dg_req(struct inet_ep *ep, mblk_t *mp, t_scalar_t prim)
{
	switch (prim) {
	case T_UNITDATA_REQ:
		unitdata_req(ep, mp);
		break;
	case T_CONN_REQ:
		dg_conn_req(ep, mp);
		break;
	case T_DISCON_REQ:
		dg_discon_req(ep, mp);
		break;
	case T_CONN_RES:
		inet_error_ack(ep, mp, prim, TNOTSUPPORT, 0);
		break;
	case T_DATA_REQ:
	case T_OPTDATA_REQ:
	case -1:
		dg_data_req(ep, mp, prim);
		break;
	default:
		/* connection-oriented data on a datagram endpoint */
		tpi_fatal(ep->wq, mp, EPROTO);
		break;
	}
}

static void dg_wsrv(struct inet_ep *ep)
{
	flush(ep);
}

/* ---- receiving ---- */

/* Send one datagram up (rx_lock held; the caller counts it): false when
 * out of memory.  With
 * lend (an esballoc'ed block over the receive buffer holding data) the
 * data block points into that buffer instead of being a copy. */
static bool deliver(struct inet_ep *ep, const struct sockaddr_storage *src,
		    socklen_t sl, const unsigned char *data, size_t len,
		    mblk_t *lend)
{
	struct T_unitdata_ind u = { T_UNITDATA_IND, 0, 0, 0, 0 };
	size_t off = sizeof(u);
	mblk_t *bp, *dp;

	if (sl > (socklen_t)INET_ADDR_SIZE)
		sl = 0;
	bp = allocb(sizeof(u) + sl + 4, BPRI_MED);
	dp = lend != NULL ? dupb(lend) : allocb(len, BPRI_MED);
	if (bp == NULL || dp == NULL) {
		freemsg(bp);
		freemsg(dp);
		return false;
	}
	bp->b_datap->db_type = M_PROTO;
	u.SRC_length = (t_scalar_t)sl;
	u.SRC_offset = tpi_put_bytes(bp, &off, src, sl);
	memcpy(bp->b_rptr, &u, sizeof(u));
	bp->b_wptr = bp->b_rptr + off;
	if (lend != NULL) {
		dp->b_rptr = (unsigned char *)data;
		dp->b_wptr = dp->b_rptr + len;
	} else {
		memcpy(dp->b_wptr, data, len);
		dp->b_wptr += len;
	}
	bp->b_cont = dp;
	if (q_empty(ep->rq)) {
		putnext(ep->rq, bp);
	} else if (!putq(ep->rq, bp)) {
		freemsg(bp);		/* (not counted as received) */
		return false;
	}
	return true;
}

/* One pass of receiving (rx_lock held).  Returns true when the socket
 * was found empty (arming POLLIN makes sense), false when the stream is
 * flow controlled or memory ran out. */
/* The segment size of what msghdr mh received (len bytes): UDP_GRO's,
 * else len (one datagram; and with no control part at all). */
static size_t gro_seg(struct msghdr *mh, size_t len)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int g;

			memcpy(&g, CMSG_DATA(c), sizeof(g));
			if (g > 0)
				return (size_t)g;
		}
	return len;
}

/* How long readers sleep at once after the socket dropped datagrams
 * (see strkev's ke_nospin_until) before they spin again. */
#define NOSPIN_NS	50000000

/* A received message's drop count (SO_RXQ_OVFL: the socket's total so
 * far, sent when not 0): when it grew, tell readers not to spin. */
static void note_drops(struct inet_ep *ep, struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			/* (rx_overflows: written here only, rx_lock) */
			if (v != __atomic_load_n(&ep->cnt.rx_overflows,
						 __ATOMIC_RELAXED)) {
				__atomic_store_n(&ep->cnt.rx_overflows, v,
						 __ATOMIC_RELAXED);
				__atomic_store_n(&ep->ke.ke_nospin_until,
						 str_now_ns() + NOSPIN_NS,
						 __ATOMIC_RELAXED);
			}
		}
}

/* Datagrams in len bytes of segments of seg. */
static uint64_t segs(size_t len, size_t seg)
{
	return seg == 0 ? 1 : (len + seg - 1) / seg;
}

static void pull(struct inet_ep *ep, bool arm);

/* The settle: a receiver that found its socket empty while local senders
 * were still owed (inet_lfc.c) looks again once they have been quiet
 * long enough for it to write off what never came. */
static void settle_fire(void *arg)
{
	struct inet_ep *ep = arg;

	pull(ep, false);
	retry_done(ep, &DG(ep)->settle, ep->rq, settle_fire);
}

static void settle(struct inet_ep *ep)
{
	(void)retry_arm(ep, &DG(ep)->settle, ep->rq, settle_fire,
			LFC_SETTLE_NS + 1000000);
}

static bool pull_locked(struct inet_ep *ep)
{
	struct dg *d = DG(ep);
	int vlen = ep->pr->fast ? VLEN : 1;
	size_t bufsz = ep->pr->fast ? RXBUF : (size_t)ep->pr->tsdu + 64;

	for (;;) {
		struct mmsghdr mm[VLEN];
		struct iovec iov[VLEN];
		struct sockaddr_storage names[VLEN];
		union {
			char buf[CMSG_SPACE(sizeof(int)) +
				 CMSG_SPACE(sizeof(uint32_t))];
			struct cmsghdr align;
		} cm[VLEN];
		int n;

		if (inet_rfull(ep, 0))
			return false;
		for (int i = 0; i < vlen; i++)
			if (d->rxb[i] == NULL &&
			    (d->rxb[i] = rxb_new(bufsz)) == NULL)
				return false;
		for (int i = 0; i < vlen; i++) {
			iov[i].iov_base = d->rxb[i]->data;
			iov[i].iov_len = bufsz;
			memset(&mm[i].msg_hdr, 0, sizeof(mm[i].msg_hdr));
			mm[i].msg_hdr.msg_name = &names[i];
			mm[i].msg_hdr.msg_namelen = sizeof(names[i]);
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			if (ep->pr->fast) {
				mm[i].msg_hdr.msg_control = cm[i].buf;
				mm[i].msg_hdr.msg_controllen = sizeof(cm[i].buf);
			}
		}
		/* what local senders sent, if they are quiet (inet_lfc.c) */
		uint64_t quiet0 = lfc_quiet(&d->own), cost = 0;

		if (vlen == 1) {
			ssize_t r = recvmsg(ep->ke.ke_fd, &mm[0].msg_hdr,
					    MSG_DONTWAIT);

			n = r < 0 ? -1 : 1;
			if (r >= 0)
				mm[0].msg_len = (unsigned)r;
		} else {
			n = recvmmsg(ep->ke.ke_fd, mm, (unsigned)vlen,
				     MSG_DONTWAIT, NULL);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (async_error(errno) || errno == ECONNRESET) {
				read_errors(ep);
				continue;
			}
			/* EAGAIN, or nothing to read */
			if (lfc_consumed(&d->own, 0, true, quiet0))
				settle(ep);
			__atomic_store_n(&d->rx_ready, 0, __ATOMIC_RELEASE);
			return true;
		}
		INET_COUNT(ep, rx_calls, 1);
		if (ep->pr->fast && n > 0)	/* (the last has the latest) */
			note_drops(ep, &mm[n - 1].msg_hdr);
		/* the stream head queues what one call received at once */
		str_batch_begin();
		for (int i = 0; i < n; i++) {
			struct msghdr *mh = &mm[i].msg_hdr;
			/* (no control part without pr->fast: one datagram) */
			size_t len = mm[i].msg_len, seg = gro_seg(mh, len);
			const unsigned char *p = iov[i].iov_base;
			mblk_t *lend = NULL;
			bool ok = true;
			uint64_t nd = 0, nb = 0;

			cost += lfc_cost(len, seg < len ? seg : 0);
			/* big datagrams filling at least an eighth of the
			 * buffer: lend it, take a new one */
			if (seg > COPY_MAX && len >= bufsz / 8 &&
			    (lend = esballoc(d->rxb[i]->data, bufsz, BPRI_MED,
					     &d->rxb[i]->fr)) != NULL)
				d->rxb[i] = NULL;
			do {
				size_t k = len < seg ? len : seg;

				if (!deliver(ep, &names[i], mh->msg_namelen,
					     p, k, lend)) {
					ok = false;
					break;
				}
				nd++;
				nb += k;
				p += k;
				len -= k;
			} while (len > 0);
			/* (every datagram counted, those of a GRO batch
			 * with one add) */
			INET_COUNT(ep, rx_msgs, nd);
			INET_COUNT(ep, rx_bytes, nb);
			if (lend != NULL)
				freeb(lend);	/* the datagrams keep it */
			if (!ok) {
				/* no memory: what this call received and
				 * could not send up is lost, and counted */
				uint64_t lost = segs(len, seg);

				for (int j = i + 1; j < n; j++)
					lost += segs(mm[j].msg_len,
						     gro_seg(&mm[j].msg_hdr,
							     mm[j].msg_len));
				INET_COUNT(ep, rx_drops, lost);
				str_batch_end();
				for (int j = i + 1; j < n; j++) {
					size_t l = mm[j].msg_len;
					size_t g = gro_seg(&mm[j].msg_hdr, l);

					cost += lfc_cost(l, g < l ? g : 0);
				}
				lfc_consumed(&d->own, cost, false, quiet0);
				return false;
			}
		}
		str_batch_end();
		if (lfc_consumed(&d->own, cost, n < vlen, quiet0))
			settle(ep);
		if (n < vlen) {
			__atomic_store_n(&d->rx_ready, 0, __ATOMIC_RELEASE);
			return true;
		}
	}
}

static void pull(struct inet_ep *ep, bool arm)
{
	struct dg *d = DG(ep);
	bool empty;

	for (;;) {
		if (!strtrylock(&ep->rx_lock)) {
			/* the puller will pull again (and arm if asked) */
			int want = arm ? 2 : 1;
			int cur = __atomic_load_n(&d->pull_again,
						  __ATOMIC_RELAXED);

			while (cur < want &&
			       !__atomic_compare_exchange_n(&d->pull_again,
				&cur, want, false, __ATOMIC_ACQ_REL,
				__ATOMIC_RELAXED))
				;
			if (!strtrylock(&ep->rx_lock))
				return;
		}
		for (;;) {
			int again = __atomic_exchange_n(&d->pull_again, 0,
							__ATOMIC_ACQ_REL);

			if (again == 2)
				arm = true;
			empty = pull_locked(ep);
			if (__atomic_load_n(&d->pull_again,
					    __ATOMIC_ACQUIRE) == 0)
				break;
		}
		/* found empty: if somebody sleeps until more comes, the
		 * I/O thread must serve the next arrival */
		if (empty && (arm || inet_waited_for(ep)))
			(void)str_kev_rearm(&ep->ke, POLLIN);
		strunlock(&ep->rx_lock);
		if (__atomic_load_n(&d->pull_again, __ATOMIC_ACQUIRE) == 0)
			return;
	}
}

static void dg_rsrv(struct inet_ep *ep)
{
	pull(ep, false);
}

static void dg_run(struct inet_ep *ep, unsigned revents)
{
	struct dg *d = DG(ep);

	if (revents & KEV_LOOK) {
		/* a look (libxti's I_PEEK on every send, t_look): the
		 * socket is asked when it may have something, or now and
		 * then, so a look costs no system call at all in a loop */
		uint64_t now = str_now_ns();

		if (__atomic_load_n(&d->rx_ready, __ATOMIC_ACQUIRE) ||
		    now - __atomic_load_n(&d->look_last, __ATOMIC_RELAXED) >
		    LOOK_NS) {
			__atomic_store_n(&d->look_last, now, __ATOMIC_RELAXED);
			pull(ep, false);
		}
		return;
	}
	if (revents & KEV_PULL) {	/* a reader: look at the socket */
		if ((revents & POLLERR) &&
		    strtrylock(&ep->rx_lock)) {
			read_errors(ep);	/* it woke on POLLERR */
			strunlock(&ep->rx_lock);
		}
		pull(ep, false);
		return;
	}
	if (revents & KEV_WAIT) {
		pull(ep, true);
		return;
	}
	/* the I/O thread: its reports are one-shot, so whatever was
	 * armed (room to send, a reader's POLLIN) is disarmed now */
	if (!q_empty(ep->wq))
		flush(ep);
	if (revents & POLLERR) {
		if (strtrylock(&ep->rx_lock)) {
			read_errors(ep);
			strunlock(&ep->rx_lock);
		}
	}
	if (revents & (POLLIN | POLLERR | POLLHUP))
		__atomic_store_n(&d->rx_ready, 1, __ATOMIC_RELEASE);
	if ((revents & (POLLIN | POLLERR | POLLHUP)) || inet_waited_for(ep))
		pull(ep, inet_waited_for(ep));
}

/* ---- open, bind, close ---- */

/* Does this kernel take a GSO message of more than GSO_SEGS_OLD
 * segments (Linux 6.13 and later)?  Asked once, with 65 one-byte
 * segments from a loopback socket to itself; any failure (no loopback
 * here, an older kernel's EINVAL) leaves GSO_SEGS_OLD.  A refusal
 * learnt later from a send could not tell this limit from the others
 * that say EINVAL (checksums off, the path's MTU). */
static void gso_probe(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	static const char seg[GSO_SEGS_OLD + 1];
	struct iovec iov = { (void *)seg, sizeof(seg) };
	union segcm cm;
	struct msghdr mh = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &l) == 0) {
		mh.msg_name = &a;
		mh.msg_namelen = sizeof(a);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		set_segment(&mh, &cm, 1);
		if (sendmsg(fd, &mh, MSG_DONTWAIT) == (ssize_t)sizeof(seg))
			__atomic_store_n(&gso_segs, BATCH, __ATOMIC_RELAXED);
	}
	close(fd);
}

static int dg_open(struct inet_ep *ep)
{
	struct dg *d;

	if (ep->pr->fast && ep->pr->kind == IK_UDP)
		pthread_once(&gso_once, gso_probe);
	if ((ep->pp = d = calloc(1, sizeof(struct dg))) == NULL)
		return ENOMEM;
	pthread_mutex_init(&d->kick_lock, NULL);
	d->gso_max = SIZE_MAX;
	d->own.fd = -1;
	if (ep->pr->fast)
		noenable(ep->wq);	/* putq alone does not flush */
	ep->ke.ke_direct = 1;		/* readers may sleep on the socket */
	return 0;
}

static int dg_bound(struct inet_ep *ep, int *unixerr)
{
	int one = 1, fd = ep->ke.ke_fd;

	if (ep->family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one,
				 sizeof(one));
	else
		(void)setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one,
				 sizeof(one));
	if (ep->pr->fast && ep->pr->kind == IK_UDP) {
		bool gro = setsockopt(fd, SOL_UDP, UDP_GRO, &one,
				      sizeof(one)) == 0;

		(void)setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one,
				 sizeof(one));
		/* local senders may hold back what we have no room for
		 * (inet_lfc.c; its costs are those of a GRO socket); the
		 * puller reads the record (rx_lock) */
		strlock(&ep->rx_lock);
		if (gro)
			(void)lfc_publish(&DG(ep)->own, fd,
					  (struct sockaddr *)&ep->laddr,
					  ep->laddrlen);
		strunlock(&ep->rx_lock);
	}
	__atomic_store_n(&DG(ep)->rx_ready, 1, __ATOMIC_RELEASE);
	(void)unixerr;
	return 0;
}

/* T_UNBIND_REQ, and a connect or disconnect (lock held): no longer a
 * receiver here, for local senders (inet_lfc.c). */
static void dg_unbound(struct inet_ep *ep)
{
	strlock(&ep->rx_lock);
	lfc_unpublish(&DG(ep)->own);
	strunlock(&ep->rx_lock);
}

/* SO_RCVBUF was negotiated (lock held): local senders' room. */
static void dg_rcvbuf(struct inet_ep *ep)
{
	lfc_set_rcvbuf(&DG(ep)->own, ep->ke.ke_fd);
}

static void dg_close(struct inet_ep *ep)
{
	struct dg *d = DG(ep);

	if (d == NULL)
		return;
	pthread_mutex_lock(&d->kick_lock);
	d->kick_closing = true;
	toid_t id = d->kick_id, cid = d->credit.id, sid = d->settle.id;
	pthread_mutex_unlock(&d->kick_lock);
	if (id != 0)
		(void)quntimeout(ep->wq, id);	/* waits if it runs */
	if (cid != 0)
		(void)quntimeout(ep->wq, cid);
	if (sid != 0)
		(void)quntimeout(ep->rq, sid);
	lfc_unpublish(&d->own);
	lfc_send_free(&d->lfc);
	pthread_mutex_destroy(&d->kick_lock);
	for (int i = 0; i < VLEN; i++)
		free(d->rxb[i]);
	free(d);
	ep->pp = NULL;
}

const struct inet_ops inet_dg_ops = {
	.open = dg_open,
	.close = dg_close,
	.req = dg_req,
	.bound = dg_bound,
	.unbound = dg_unbound,
	.rcvbuf = dg_rcvbuf,
	.wsrv = dg_wsrv,
	.rsrv = dg_rsrv,
	.run = dg_run,
};
