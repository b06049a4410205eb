/*
 * inet_tcp.c -- TCP for the Internet transport providers: /dev/inet/tcp
 * (XTI over sockets, one socket call per TPI primitive) and /dev/tcp (the
 * batching family, pr->fast), both T_COTS_ORD over a kernel TCP socket
 * (TPI Revision 2.0.0, as the loopback providers tiloop*.c do it).
 *
 * How this works
 * --------------
 * The common part (inet.c) owns the endpoint, its socket and the local
 * primitives; this file adds connections and the byte stream through
 * struct inet_ops.
 *
 * Calling out.  T_CONN_REQ (TS_IDLE, not a listener) starts a
 * non-blocking connect(), answers T_OK_ACK at once (state TS_WCON_CREQ)
 * and arms POLLOUT.  When the socket becomes writable (or reports an
 * error) SO_ERROR says how it went: T_CONN_CON with the peer's address
 * (TS_DATA_XFER), or T_DISCON_IND with the errno as DISCON_reason
 * (ECONNREFUSED when nobody listens), SEQ_number -1, TS_IDLE.  Connect
 * data is not supported (CDATA_size T_INVALID): data on T_CONN_REQ is
 * TBADDATA.  Options of the request (topt_assoc) are applied once the
 * request is known good, just before the connect.
 *
 * Listening.  A bind with CONIND_number > 0 (capped at TCP_MAXQLEN)
 * makes the socket listen(qlen); the listener is always armed for
 * POLLIN while it has fewer than qlen pending indications.  The puller
 * of a listener accepts (accept4, non-blocking, close-on-exec) until qlen
 * connections are pending, each with a SEQ_number and a T_CONN_IND (SRC
 * the caller's address, no options); the rest waits in the kernel's
 * backlog.  T_CONN_RES gives the accepted socket to the acceptor
 * (inet_socket_adopt): the listener itself (ACCEPTOR_id 0 or its own:
 * only with exactly one indication pending, else TINDOUT -- its listening
 * socket is closed, so what still waits in the kernel backlog is reset)
 * or another endpoint of the same provider in TS_UNBND or TS_IDLE.
 * T_DISCON_REQ with a SEQ_number refuses: the accepted socket is closed
 * with SO_LINGER {1, 0}, so the caller sees a reset (ECONNRESET, not
 * ECONNREFUSED: the kernel had already completed the handshake).  A
 * caller that resets its connection before it is answered is withdrawn:
 * the pending sockets are looked at every TCP_PEND_MS while any wait
 * (and at each pull of the listener), and T_DISCON_IND with that
 * SEQ_number goes up (pend_check).
 *
 * Sending.  Data requests (T_DATA_REQ, T_OPTDATA_REQ, plain M_DATA) in
 * TS_DATA_XFER or TS_WREQ_ORDREL go out with send(MSG_DONTWAIT |
 * MSG_NOSIGNAL) straight from the put procedure when nothing waits before
 * them; what the kernel does not take (EAGAIN, a partial send) goes back
 * to the head of the write queue (putbq), where the stream head's flow
 * control sees it, and POLLOUT is armed: the I/O thread (run) and the
 * write service procedure send the rest, in order.  One flusher at a
 * time (wlock, a try-lock; a thread that finds it taken leaves
 * flush_again and the holder looks again before it leaves, so nothing
 * queued is stranded).  MORE_flag means nothing to a byte stream.
 *   /dev/inet/tcp sends each message with its own call.
 *   /dev/tcp sends a lone message at once when the write queue is empty,
 *   it does not say T_MORE, and the last send was more than TCP_IDLE_NS
 *   ago or something was received since (request/response keeps the
 *   latency of /dev/inet/tcp); otherwise it is
 *   queued (the write queue does not enable its service procedure on
 *   putq; a write up to TCP_COAL_MAX bytes is copied onto the end of the
 *   last block queued, str_putq_append, so the flusher handles one block
 *   per many writes) and flushed with one sendmsg() of up to TCP_BATCH
 *   blocks / TCP_BATCH_BYTES: by the writer at once when TCP_BATCH
 *   writes, TCP_BATCH_BYTES or half the queue's high water are queued,
 *   else by a timeout (TCP_MORE_TICKS, one tick) that the first queued
 *   message sets, so the tail of a burst waits at most a tick.  (Waking
 *   the I/O thread for each message instead made batches of a dozen
 *   and a cross-CPU handoff per batch.)  With TCP_NODELAY negotiated on,
 *   the I/O thread is kicked at once by arming POLLOUT (a TCP socket
 *   with room is writable at once), as before.  A T_MORE sequence is
 *   gathered the same way and flushed by the writer when it ends (the
 *   first message without T_MORE) or when a batch is full.
 * Expedited data (T_EXDATA_REQ, T_OPTDATA_REQ with T_ODF_EX) is sent
 * with MSG_OOB, in order with normal data: TCP's urgent pointer marks
 * only the LAST byte of it as urgent; the bytes before it arrive as
 * normal data.  T_ORDREL_REQ sets fin_pending: shutdown(SHUT_WR) is done
 * by the flusher when the write queue has drained.
 *
 * Receiving.  The puller (rlock: one at a time, with the pull_again note
 * of shmpipe.c) reads while the stream above has room (canput of our
 * read queue and inet_rfull): /dev/inet/tcp one recv() of up to TIDU per
 * T_DATA_IND, /dev/tcp readv() of up to 64 KiB split into T_DATA_INDs of
 * at most TIDU bytes (a short piece is copied into a block of its size,
 * so queued indications never pin big buffers), straight to the stream
 * head when our read queue is idle (q_idle), else behind what it holds.
 * It runs for KEV_PULL
 * and KEV_WAIT (a reader), POLLIN (the I/O thread) and the read service
 * procedure (back-enabled when the head drains, if somebody waits).  When
 * the socket is empty and somebody waits (inet_waited_for or KEV_WAIT)
 * POLLIN is armed.  A reader may also sleep in poll() on the socket
 * itself (ke_direct) and pull what woke it.  A look (KEV_LOOK: I_NREAD,
 * I_PEEK; libxti looks before every send) reads only when the socket is
 * not known to be empty (rx_quiet: found empty, POLLIN armed, no report
 * since).  Caveat of ke_direct: an unconnected TCP socket reports POLLHUP,
 * and one whose end of file was taken stays readable, so a reader
 * blocked on an endpoint in TS_UNBND, TS_IDLE or TS_WREQ_ORDREL (no XTI
 * call blocks there) would wake again and again.  recv() 0 is the peer's FIN: T_ORDREL_IND (TS_DATA_XFER
 * -> TS_WREQ_ORDREL, TS_WIND_ORDREL -> TS_IDLE); an error (ECONNRESET, or
 * one a send met: werr) is T_DISCON_IND with the errno (EPIPE reported as
 * ECONNRESET), SEQ_number -1, TS_IDLE, our unsent data discarded.
 * Urgent data stays in line (SO_OOBINLINE): a read stops short just
 * before the urgent byte, and TCP_INQ says the kernel holds more, so
 * the puller asks SIOCATMARK and sends that byte up alone as
 * T_EXDATA_IND (band 1), in its place in the stream.  (Out of line,
 * a plain read that starts at the mark skips the byte and the kernel
 * forgets it: data would be lost.)  A read that starts at the mark does
 * not stop (the urgent byte alone after everything before it was read,
 * the usual interrupt; or a read that ended exactly at the mark), so
 * after the socket was found empty the puller polls it first (POLLPRI
 * says an urgent byte is in it: then SIOCATMARK before the read), and
 * after a read that filled its blocks it asks SIOCATMARK (rx_next).
 * Limits: a second urgent byte before the first is read moves the mark
 * (TCP has one urgent pointer); and Linux's tcp_poll reads the urgent
 * state before it looks at the data, so a lone urgent segment taken in
 * by the other CPU between the two reads (a few instructions, unless the
 * polling vCPU is stopped right there) shows POLLIN without POLLPRI and
 * its byte is read as data (asking SIOCATMARK after every poll would
 * close that, at the cost of one more system call per read).
 *
 * Abortive release.  T_DISCON_REQ on a connection sets SO_LINGER {1, 0}
 * and replaces the socket (the old one's close sends a reset), discards
 * both directions' queued data, sends M_FLUSH (FLUSHRW) up and T_OK_ACK:
 * TS_IDLE.  Closing an endpoint with a connection or an attempt resets
 * it the same way, unless it had released its side (T_ORDREL_REQ): then
 * what it still had to send and the FIN go to the kernel first (waiting
 * at most TCP_CLOSE_WAIT s), as a socket's close delivers them; pending
 * accepted sockets of a listener are reset.
 *
 * Endpoint reuse.  TS_IDLE is bound: after a connection ends the
 * endpoint still holds its old socket ("stale": nothing reads or writes
 * it except the flusher finishing what was sent before an orderly
 * release).  The next T_CONN_REQ replaces it (inet_socket_renew) and binds
 * the new one to the same address (every connection's socket has
 * SO_REUSEADDR: the old connection may be in TIME_WAIT, an acceptor may
 * hold a connection on its listener's port); if the port is taken all
 * the same (an acceptor whose listener listens on it) the same IP with
 * a new port -- never for a listener, which stays on its port.  An
 * endpoint with CONIND_number > 0 is renewed and listens again as soon as
 * its connection has ended and its data is sent (by the read side or by
 * the write service procedure).  T_UNBIND_REQ drops what still waits.
 *
 * Locking.  Three locks, always taken in this order:
 *   rlock (struct tcp_pp) -> ep->lock -> wlock.
 * rlock (a strlock_t) is the puller's: socket reads and accepts, and
 * whatever ends a connection from the read side; T_DISCON_REQ and
 * T_CONN_RES on a listener take it (blocking) so no read is in flight
 * when the socket changes, and let it go through rlock_drop, which does
 * the pull a report left noted meanwhile (pull_again).  rlock is never
 * let go with such a note unread: a listener's POLLIN report is one-shot.
 * rx_ok says whether the socket's read side
 * belongs to a live connection; it goes to 0 only with rlock held, so
 * after that no puller touches the socket.  wlock is the flusher's:
 * every send and shutdown; a holder never waits for ep->lock (it reads
 * only atomics), so a thread holding ep->lock may wait for wlock.  The
 * put procedure takes wlock only with strtrylock under ep->lock.  ep->lock
 * is held across inet_up/inet_ok_ack/inet_error_ack so that a state change
 * and the message announcing it are one step (they only queue, as
 * tiloop's tl_up), never across a call that may block.  The common
 * part's ep->rx_lock and ep->tx_lock are not used here (nothing of ours
 * nests inside them); inet_assoc_opts takes ep->lock itself, so it is
 * called without it (T_CONN_REQ and T_CONN_RES, which hold the lock to
 * check the request first, call topt_assoc).
 *
 * The I/O thread never waits for a lock of the endpoint: a thread that
 * replaces the socket holds ep->lock (and rlock, wlock) while the
 * common part's str_kev_detach waits for the I/O thread to leave our run
 * function.  Everything reachable from run tries (strtrylock,
 * lock_or_retry) and, when it fails, arms the event again and leaves:
 * an end of file is read again, a connection error is kept in werr
 * until reported, a finished connect still reports POLLOUT.
 *
 * Running out.  Nothing read from a socket is dropped for want of
 * memory: the blocks an indication needs are had before the read (a
 * short piece without a block of its own goes up in the big one).  A
 * pull that finds no memory, and an accept that fails for want of
 * descriptors or memory, read or accept nothing and set retry: the
 * pending-indication timer (pend_tick, every TCP_PEND_MS) pulls again,
 * since no report of the socket's would.  A renew that gets no socket
 * leaves nothing of the old connection watched.  Not covered: the
 * T_ORDREL_IND or T_DISCON_IND of a state change is lost when its
 * 16-byte block cannot be had.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../drivers/drvutil.h"
#include "inet.h"
#include "tpi.h"

#define TCP_MAXQLEN	128		/* largest CONIND_number granted */
#define TCP_BATCH	256		/* blocks per sendmsg, and writes
					   queued that make the writer flush
					   (fast) */
#define TCP_BATCH_BYTES	(256 * 1024)	/* bytes per sendmsg (fast) */
#define TCP_IOV		256		/* iovec entries per sendmsg */
#define TCP_RDBYTES	65536		/* bytes per readv (fast) */
#define TCP_RDBLK	16		/* blocks per readv (fast) */
#define TCP_IDLE_NS	10000		/* fast: a lone message goes at once
					   after this much quiet (default of
					   STREAMS_INET_IDLE_NS) */
#define TCP_MORE_TICKS	1		/* fast: longest a T_MORE sequence is
					   held (ticks of HZ) */
#define TCP_PULL_MAX	64		/* reads per pass of the puller */
#define TCP_PEND_MS	100		/* pending indications are looked at
					   this often for callers gone */
#define TCP_SMALL	4096		/* a piece up to this is copied */
#define TCP_COAL_MAX	1024		/* fast: a write up to this is copied
					   onto the last one queued */
#define TCP_COAL_BLK	8192		/* fast: size of a block that
					   gathers them */
#define TCP_CLOSE_WAIT	2	/* seconds a closing endpoint may wait to hand
				   what it released to the kernel */

#ifndef TCP_INQ
#define TCP_INQ		36
#define TCP_CM_INQ	TCP_INQ
#endif

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/* A connection accepted by a listener, announced by T_CONN_IND. */
struct tcp_pend {
	struct tcp_pend *next;		/* ep->lock: oldest first */
	int fd;
	t_scalar_t seq;
	struct sockaddr_storage addr;	/* the caller */
};

struct tcp_pp {
	strlock_t rlock;		/* the puller (see Locking) */
	int pull_again;			/* atomic: 1 pull again, 2 and arm */
	strlock_t wlock;		/* the flusher */
	int flush_again;		/* atomic */
	int rx_ok;			/* atomic; set under ep->lock, cleared
					   under rlock and ep->lock */
	int listening;			/* atomic; written under ep->lock */
	int wcon;			/* atomic: connect() in progress */
	int fin_pending;		/* atomic: shutdown(SHUT_WR) when the
					   write queue has drained */
	int werr;			/* atomic: a send failed with this */
	int wblocked;			/* atomic: waiting for POLLOUT */
	int relisten;			/* atomic: a listener's connection
					   ended; listen again once drained */
	int err_watch;			/* atomic: past the end of file in
					   TS_WREQ_ORDREL: the socket is
					   armed for an error alone */
	bool rx_empty;			/* rlock: the socket was found empty
					   or drained: poll before the next
					   read (rx_next) */
	bool rx_atmark;			/* rlock: the last read filled its
					   blocks: look for the mark first */
	int rx_quiet;			/* atomic: the socket was found empty
					   and POLLIN armed, not reported yet:
					   a look (KEV_LOOK) has nothing to
					   read */
	unsigned nq;			/* writes queued since the last flush:
					   added to under inet_lock, zeroed by
					   the flusher (wlock) without it, so
					   only a hint (a lost add or zeroing
					   moves a flush by one write); atomic
					   loads and stores */
	uint64_t last_tx;		/* atomic: time of the last send */
	uint64_t last_rx;		/* atomic: rx_msgs at the last send */
	bool stale;			/* ep->lock: the socket belongs to a
					   connection that has ended */
	bool more_held;			/* ep->lock: /dev/tcp gathers a T_MORE
					   sequence */
	bool closing;			/* ep->lock: no more timeouts */
	toid_t tmo;			/* ep->lock: the timeout bounding how
					   long a T_MORE sequence is held */
	toid_t ptmo;			/* ep->lock: the next look at pending
					   indications (pend_check) */
	struct tcp_pend *pend;		/* ep->lock: pending indications */
	int retry;			/* atomic: a pull failed for want of
					   descriptors (accept) or memory:
					   pend_tick pulls again */
	unsigned npend;			/* ep->lock */
	t_scalar_t next_seq;		/* ep->lock */
	size_t rbsize;			/* const: bytes per receive block */
	mblk_t *rxb[TCP_RDBLK];		/* rlock: receive blocks kept */
};

static struct tcp_pp *PP(struct inet_ep *ep)
{
	return ep->pp;
}

static int sock(struct inet_ep *ep)
{
	return __atomic_load_n(&ep->ke.ke_fd, __ATOMIC_RELAXED);
}

static bool connected_state(int st)
{
	return st == TS_DATA_XFER || st == TS_WIND_ORDREL ||
	       st == TS_WREQ_ORDREL;
}

/*
 * The endpoint lock for work that may run in the I/O thread.  A thread
 * replacing the socket (inet_socket_renew/adopt, with ep->lock held)
 * waits in str_kev_detach until the I/O thread has left our run
 * function, so the I/O thread must never wait for ep->lock: it tries,
 * and when it fails it asks for the event again (rearm) and leaves.
 */
static bool lock_or_retry(struct inet_ep *ep, unsigned events)
{
	if (strtrylock(&ep->lock))
		return true;
	(void)str_kev_rearm(&ep->ke, events);
	return false;
}

static void set_linger0(int fd)
{
	struct linger lg = { 1, 0 };

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/* What every connection's socket has: urgent data stays in line (the
 * puller finds the mark, see rx_mark), each read says how many bytes are
 * left (TCP_INQ), and SO_REUSEADDR, so that once it is closed (in
 * TIME_WAIT) or while it lives on a port it shares, the endpoint that
 * had it, or its listener, can bind that port again (rebind: Linux lets
 * a bind share a port only if every socket on it allows it). */
static void sock_setup(int fd)
{
	int one = 1;

	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_INQ, &one, sizeof(one));
}

static void kick_out(struct inet_ep *ep)
{
	(void)str_kev_rearm(&ep->ke, POLLOUT);
}

/* Are all blocks after the first M_DATA? */
static bool data_only(const mblk_t *mp)
{
	for (mp = mp->b_cont; mp != NULL; mp = mp->b_cont)
		if (mp->b_datap->db_type != M_DATA)
			return false;
	return true;
}

/* ---- indications (ep->lock held) ---- */

static void send_discon(struct inet_ep *ep, t_scalar_t reason,
			t_scalar_t seq)
{
	struct T_discon_ind d = { T_DISCON_IND, reason, seq };
	mblk_t *bp = tpi_proto(sizeof(d), M_PROTO);

	if (bp == NULL)
		return;
	memcpy(bp->b_rptr, &d, sizeof(d));
	inet_up(ep, bp);
}

static void send_ordrel(struct inet_ep *ep)
{
	struct T_ordrel_ind o = { T_ORDREL_IND };
	mblk_t *bp = tpi_proto(sizeof(o), M_PROTO);

	if (bp == NULL)
		return;
	memcpy(bp->b_rptr, &o, sizeof(o));
	inet_up(ep, bp);
}

/* ---- the socket of an endpoint whose connection ended ---- */

/* Bind the (new) socket to ep's address again, and listen if ep is a
 * listener.  ep->lock held. */
static int rebind(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	int fd = sock(ep), one = 1, err = 0;

	if (ep->laddrlen == 0)
		return 0;
	/* (kept: the connection this socket will carry, see sock_setup) */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ep->laddr, ep->laddrlen) != 0 &&
	    errno != EINVAL) {
		err = errno;
		if (ep->qlen > 0)
			return err;	/* a listener stays on its port */
		/* the port is taken (we shared a listener's, and it listens
		 * again): same address, a new port */
		err = 0;
		struct sockaddr_storage a = ep->laddr;
		socklen_t al = sizeof(a);

		*inet_port(&a) = 0;
		if (bind(fd, (struct sockaddr *)&a, ep->laddrlen) == 0 &&
		    getsockname(fd, (struct sockaddr *)&a, &al) == 0) {
			ep->laddr = a;
			ep->laddrlen = al;
		}
	}
	if (ep->qlen > 0) {
		if (listen(fd, (int)ep->qlen) == 0) {
			STORE(pp->listening, 1);
			(void)str_kev_rearm(&ep->ke, POLLIN);
		} else {
			err = errno;
		}
	}
	return err;
}

/* Nothing of ours waits to be sent: no data queued, no FIN owed. */
static bool all_sent(struct inet_ep *ep)
{
	return __atomic_load_n(&ep->wq->q_first, __ATOMIC_RELAXED) == NULL &&
	       !LOAD(PP(ep)->fin_pending);
}

static bool is_oob(const mblk_t *mp);
static unsigned nmsgs(const mblk_t *mp);
static void close_drain(struct inet_ep *ep);

/* Send the bytes of message mp on blocking socket fd (an expedited one
 * with MSG_OOB): false if the socket failed or timed out. */
static bool send_whole(int fd, mblk_t *mp)
{
	int flags = MSG_NOSIGNAL | (is_oob(mp) ? MSG_OOB : 0);

	for (mblk_t *b = is_oob(mp) ? mp->b_cont : mp; b != NULL;
	     b = b->b_cont)
		while (b->b_wptr > b->b_rptr) {
			ssize_t r = send(fd, b->b_rptr,
					 (size_t)(b->b_wptr - b->b_rptr),
					 flags);

			if (r > 0)
				b->b_rptr += r;
			else if (r < 0 && errno != EINTR)
				return false;
		}
	return true;
}

/* Make fd blocking, each send giving up after TCP_CLOSE_WAIT s. */
static void blocking_sends(int fd)
{
	struct timeval tv = { TCP_CLOSE_WAIT, 0 };
	int fl = fcntl(fd, F_GETFL);

	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/*
 * A released connection's last data when its endpoint takes a new
 * socket before the kernel took it all (T_CONN_REQ or T_CONN_RES right
 * after T_ORDREL_REQ): a thread of its own sends it on (a duplicate of)
 * the old socket, then the FIN, and closes it -- what the kernel does
 * for a closed socket.  (Counted as sent when handed over.)
 */
struct tcp_drain {
	int fd;
	bool fin;
	mblk_t *first;			/* b_next list, in order */
};

static void *drain_main(void *arg)
{
	struct tcp_drain *d = arg;
	bool ok = true;
	mblk_t *mp;

	blocking_sends(d->fd);
	while ((mp = d->first) != NULL) {
		d->first = mp->b_next;
		mp->b_next = NULL;
		if (ok)
			ok = send_whole(d->fd, mp);
		freemsg(mp);
	}
	if (ok && d->fin)
		(void)shutdown(d->fd, SHUT_WR);
	close(d->fd);
	free(d);
	return NULL;
}

/* Hand what ep's old connection still has to send to a drainer (wlock
 * and ep->lock held, before the socket is replaced).  Without memory or
 * a thread it is sent here, as a closing endpoint's is (close_drain). */
static void drain_off(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	struct tcp_drain *d;
	mblk_t *mp, **tail;
	pthread_attr_t at;
	pthread_t t;
	bool started = false;

	if (all_sent(ep))
		return;
	if ((d = calloc(1, sizeof(*d))) != NULL &&
	    (d->fd = fcntl(sock(ep), F_DUPFD_CLOEXEC, 0)) >= 0) {
		d->fin = LOAD(pp->fin_pending) != 0;
		tail = &d->first;
		while ((mp = getq(ep->wq)) != NULL) {
			INET_COUNT(ep, tx_sent, nmsgs(mp));
			*tail = mp;
			tail = &mp->b_next;
		}
		if (pthread_attr_init(&at) == 0) {
			(void)pthread_attr_setdetachstate(
				&at, PTHREAD_CREATE_DETACHED);
			started = str_thread_create(&t, &at, drain_main, d,
						    "streams-tcpdrn") == 0;
			pthread_attr_destroy(&at);
		}
		if (!started)
			drain_main(d);	/* (frees d) */
	} else {
		if (d != NULL)
			free(d);
		close_drain(ep);
	}
	STORE(pp->fin_pending, 0);
}

/* Give ep a fresh socket bound as before: ep->lock held, no puller on the
 * socket (rx_ok 0 or rlock held).  Takes wlock.  Without reset, what a
 * released connection still had to send goes on (drain_off). */
static int renew(struct inet_ep *ep, bool reset)
{
	struct tcp_pp *pp = PP(ep);
	int err;

	strlock(&pp->wlock);
	if (reset)
		set_linger0(sock(ep));
	else if (pp->stale)
		drain_off(ep);
	flushq(ep->wq, FLUSHALL);
	STORE(pp->fin_pending, 0);
	STORE(pp->wblocked, 0);
	STORE(pp->nq, 0);
	/* the family of the address it is bound to: an acceptor bound to
	 * an IPv4 address may have carried an IPv6 call */
	err = inet_socket_renew(ep, ep->laddrlen > 0 ? ep->laddr.ss_family
						     : ep->family);
	if (err != 0 && reset)
		/* no new socket (EMFILE...): the connection is aborted all
		 * the same, in place (a TCP socket disconnected this way
		 * sends its reset and stays, unconnected, for the next
		 * renew) */
		inet_socket_unconnect(ep);
	strunlock(&pp->wlock);
	/* the old connection is over, whatever comes of it: nothing of it
	 * is watched (a failed renew leaves a closed or unconnected
	 * socket, whose POLLOUT and POLLHUP would come back at once, for
	 * ever, were wcon or err_watch left set) */
	STORE(pp->wcon, 0);
	STORE(pp->err_watch, 0);
	STORE(pp->werr, 0);
	STORE(pp->rx_ok, 0);
	if (err != 0)
		return err;
	pp->stale = false;
	pp->rx_empty = true;		/* (no puller: see above) */
	pp->rx_atmark = false;
	STORE(pp->relisten, 0);
	STORE(pp->rx_quiet, 0);
	return rebind(ep);
}

/* A listener's connection ended: listen again when nothing of ours
 * waits to be sent; otherwise the write side does it when drained. */
static void relisten(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	if (ep->qlen == 0 || !pp->stale)
		return;
	if (all_sent(ep)) {
		(void)renew(ep, false);
	} else {
		STORE(pp->relisten, 1);	/* tcp_wsrv, once drained */
		qenable(ep->wq);
	}
}

/* ---- listening ---- */

static void pend_close(struct tcp_pend *p)
{
	set_linger0(p->fd);
	close(p->fd);
	free(p);
}

static void pend_close_all(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	struct tcp_pend *p;

	while ((p = pp->pend) != NULL) {
		pp->pend = p->next;
		pend_close(p);
	}
	pp->npend = 0;
}

static struct tcp_pend *pend_take(struct inet_ep *ep, t_scalar_t seq)
{
	struct tcp_pp *pp = PP(ep);
	struct tcp_pend **pq, *p;

	for (pq = &pp->pend; (p = *pq) != NULL; pq = &p->next)
		if (p->seq == seq) {
			*pq = p->next;
			pp->npend--;
			return p;
		}
	return NULL;
}

static bool pend_has(struct inet_ep *ep, t_scalar_t seq)
{
	struct tcp_pend *p;

	for (p = PP(ep)->pend; p != NULL; p = p->next)
		if (p->seq == seq)
			return true;
	return false;
}

/* Accept while fewer than qlen are pending: rlock held. */
/* Indications whose caller has gone (reset the connection before we
 * accepted it: POLLERR, POLLHUP; a FIN alone is a call that may still be
 * accepted) are withdrawn: T_DISCON_IND with their SEQ_number, reason
 * ECONNRESET.  ep->lock held. */
static void pend_check(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	struct pollfd pf[TCP_MAXQLEN];
	struct tcp_pend *p, **pq;
	int n = 0;

	for (p = pp->pend; p != NULL && n < TCP_MAXQLEN; p = p->next) {
		pf[n].fd = p->fd;
		pf[n].events = 0;	/* (errors and hangup: always) */
		pf[n].revents = 0;
		n++;
	}
	if (n == 0 || poll(pf, (nfds_t)n, 0) <= 0)
		return;
	n = 0;
	for (pq = &pp->pend; (p = *pq) != NULL && n < TCP_MAXQLEN;) {
		if (pf[n++].revents & (POLLERR | POLLHUP)) {
			*pq = p->next;
			pp->npend--;
			send_discon(ep, ECONNRESET, p->seq);
			pend_close(p);
		} else {
			pq = &p->next;
		}
	}
	if (pp->npend == 0 && ep->state == TS_WRES_CIND)
		ep->state = TS_IDLE;
}

static void pend_tick(void *arg);

/* While indications wait, look at them every TCP_PEND_MS; and pull
 * again as often while a pull could not (retry).  ep->lock held. */
static void pend_watch(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	if ((pp->npend > 0 || LOAD(pp->retry)) && pp->ptmo == 0 &&
	    !pp->closing)
		pp->ptmo = timeout(pend_tick, ep,
				   drv_usectohz(TCP_PEND_MS * 1000));
}

static void pull(struct inet_ep *ep, bool arm);

static void pend_tick(void *arg)
{
	struct inet_ep *ep = arg;
	struct tcp_pp *pp = PP(ep);

	/* a listener's pull: accept_more; or a read that had no memory */
	pull(ep, inet_waited_for(ep));
	inet_lock(ep);
	pp->ptmo = 0;		/* (only now: close waits for us by it) */
	pend_watch(ep);
	inet_unlock(ep);
}

static void accept_more(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	if (!lock_or_retry(ep, POLLIN))
		return;
	pend_check(ep);
	STORE(pp->retry, 0);
	while (LOAD(pp->listening) && pp->npend < ep->qlen &&
	       (ep->state == TS_IDLE || ep->state == TS_WRES_CIND)) {
		struct T_conn_ind ci = { T_CONN_IND, 0, 0, 0, 0, 0 };
		socklen_t al = sizeof(struct sockaddr_storage);
		struct tcp_pend *p, **pq;
		size_t off = sizeof(ci);
		mblk_t *ind;
		int fd;

		ind = tpi_proto(sizeof(ci) + INET_ADDR_SIZE + 8, M_PROTO);
		p = calloc(1, sizeof(*p));
		if (ind == NULL || p == NULL) {
			freemsg(ind);
			free(p);
			STORE(pp->retry, 1);	/* (pend_watch) */
			break;
		}
		fd = accept4(sock(ep), (struct sockaddr *)&p->addr, &al,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			int e = errno;

			freemsg(ind);
			free(p);
			if (e == EINTR || e == ECONNABORTED)
				continue;
			if (e == EAGAIN || e == EWOULDBLOCK)
				(void)str_kev_rearm(&ep->ke, POLLIN);
			else	/* EMFILE, ENFILE, ENOBUFS, ENOMEM: the
				   caller waits in the backlog; look again
				   in a while (pend_watch) */
				STORE(pp->retry, 1);
			break;
		}
		sock_setup(fd);
		p->fd = fd;
		p->seq = pp->next_seq;
		pp->next_seq = pp->next_seq >= 0x3fffffff ? 1 :
			       pp->next_seq + 1;
		for (pq = &pp->pend; *pq != NULL; pq = &(*pq)->next)
			;
		*pq = p;
		pp->npend++;
		ci.SRC_length = (t_scalar_t)inet_addr_len(&p->addr);
		ci.SRC_offset = tpi_put_bytes(ind, &off, &p->addr,
					      (size_t)ci.SRC_length);
		ci.SEQ_number = p->seq;
		memcpy(ind->b_rptr, &ci, sizeof(ci));
		ep->state = TS_WRES_CIND;
		inet_up(ep, ind);
	}
	pend_watch(ep);
	inet_unlock(ep);
}

/* ---- the write side ---- */

/* Bytes of a queued message's data (after a T_EXDATA_REQ block). */
static bool is_oob(const mblk_t *mp)
{
	return mp->b_datap->db_type != M_DATA;
}

/* Drop n sent bytes from the front of mp's data; true if all went. */
static bool consume(mblk_t *mp, size_t *n)
{
	mblk_t *b = is_oob(mp) ? mp->b_cont : mp;

	for (; b != NULL; b = b->b_cont) {
		size_t l = (size_t)(b->b_wptr - b->b_rptr);

		if (l > *n) {
			b->b_rptr += *n;
			*n = 0;
			return false;
		}
		b->b_rptr += l;
		*n -= l;
	}
	return true;
}

/* Send up to max messages from v[0..cnt) with one call; wlock held.
 * Returns how many went entirely; *err an errno (EAGAIN: the rest
 * waits), with v[ret] maybe partly sent. */
static unsigned send_batch(struct inet_ep *ep, mblk_t **v, unsigned cnt,
			   int *err)
{
	struct iovec iov[TCP_IOV];
	struct msghdr mh;
	unsigned i, ni = 0, done = 0;
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
	size_t n;
	ssize_t r;

	*err = 0;
	for (i = 0; i < cnt; i++) {
		mblk_t *b = is_oob(v[i]) ? v[i]->b_cont : v[i];

		for (; b != NULL && ni < TCP_IOV; b = b->b_cont)
			if (b->b_wptr > b->b_rptr) {
				iov[ni].iov_base = b->b_rptr;
				iov[ni].iov_len = (size_t)(b->b_wptr - b->b_rptr);
				ni++;
			}
		if (is_oob(v[i]))
			flags |= MSG_OOB;	/* alone in its batch */
	}
	if (ni == 0)
		return cnt;		/* nothing but empty messages */
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = ni;
	do
		r = sendmsg(sock(ep), &mh, flags);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		*err = errno == EWOULDBLOCK ? EAGAIN : errno;
		return 0;
	}
	INET_COUNT(ep, tx_calls, 1);
	__atomic_store_n(&PP(ep)->last_tx, str_now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&PP(ep)->last_rx,
			 __atomic_load_n(&ep->cnt.rx_msgs, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	n = (size_t)r;
	for (i = 0; i < cnt; i++) {
		if (!consume(v[i], &n))
			break;
		done++;
	}
	if (done < cnt)
		*err = EAGAIN;		/* the kernel took part */
	return done;
}

/* The writes a queued message stands for (see queue_msg). */
static unsigned nmsgs(const mblk_t *mp)
{
	return 1u + mp->b_merged;
}

/* A send failed for good: remember it for the read side, which reports
 * the disconnect; what waits is dropped.  wlock held. */
static void send_failed(struct inet_ep *ep, int err)
{
	mblk_t *mp;

	if (err == EPIPE)
		err = ECONNRESET;
	if (LOAD(PP(ep)->werr) == 0)
		STORE(PP(ep)->werr, err);
	while ((mp = getq(ep->wq)) != NULL) {
		INET_COUNT(ep, tx_drops, nmsgs(mp));
		freemsg(mp);
	}
	STORE(PP(ep)->fin_pending, 0);
}

/*
 * Send what the write queue holds, first (if not NULL) before it; wlock
 * held.  Returns true when the kernel refused output (POLLOUT armed).
 */
static bool flush_locked(struct inet_ep *ep, mblk_t *first)
{
	struct tcp_pp *pp = PP(ep);
	unsigned batch = ep->pr->fast ? TCP_BATCH : 1;
	mblk_t *v[TCP_BATCH];

	STORE(pp->nq, 0);
	for (;;) {
		unsigned cnt = 0, done, i, n;
		size_t bytes = 0;
		int err;

		if (first != NULL) {
			v[cnt++] = first;
			bytes += msgdsize(first);
			first = NULL;
		}
		while (cnt < batch && bytes < TCP_BATCH_BYTES &&
		       (cnt == 0 || !is_oob(v[cnt - 1]))) {
			mblk_t *mp;

			/* (no getq of an empty queue: it writes q_flag,
			 * which the stream head reads without a lock) */
			if (__atomic_load_n(&ep->wq->q_first,
					    __ATOMIC_RELAXED) == NULL)
				break;
			mp = getq(ep->wq);

			if (mp == NULL)
				break;
			if (cnt > 0 && is_oob(mp)) {
				/* urgent data goes alone, next time */
				if (!putbq(ep->wq, mp))
					freemsg(mp);
				break;
			}
			v[cnt++] = mp;
			bytes += msgdsize(mp);
		}
		if (cnt == 0)
			break;
		done = send_batch(ep, v, cnt, &err);
		for (i = 0, n = 0; i < done; i++) {
			n += nmsgs(v[i]);
			freemsg(v[i]);
		}
		INET_COUNT(ep, tx_sent, n);
		if (err == 0)
			continue;
		if (err == EAGAIN) {
			/* back to the head of the queue, in order */
			for (i = cnt; i > done; i--)
				if (!putbq(ep->wq, v[i - 1]))
					freemsg(v[i - 1]);
			STORE(pp->wblocked, 1);
			(void)str_kev_rearm(&ep->ke, POLLOUT);
			return true;
		}
		for (i = done; i < cnt; i++) {
			INET_COUNT(ep, tx_drops, nmsgs(v[i]));
			freemsg(v[i]);
		}
		send_failed(ep, err);
		return false;
	}
	STORE(pp->wblocked, 0);
	if (LOAD(pp->fin_pending) &&
	    __atomic_load_n(&ep->wq->q_first, __ATOMIC_RELAXED) == NULL) {
		STORE(pp->fin_pending, 0);
		(void)shutdown(sock(ep), SHUT_WR);
	}
	return false;
}

static void pull(struct inet_ep *ep, bool arm);

/* After a flusher let wlock go: a failed send is reported by the read
 * side, a listener whose connection ended may listen again. */
static void after_flush(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	if (LOAD(pp->werr) != 0)
		pull(ep, true);
	if (LOAD(pp->relisten))
		qenable(ep->wq);	/* listen again (tcp_wsrv) */
}

/* Flush unless another thread is: it then sees flush_again. */
static void flush(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	bool blocked;

	for (;;) {
		if (!strtrylock(&pp->wlock)) {
			STORE(pp->flush_again, 1);
			if (!strtrylock(&pp->wlock))
				return;	/* the holder will look again */
		}
		STORE(pp->flush_again, 0);
		blocked = flush_locked(ep, NULL);
		strunlock(&pp->wlock);
		/* Blocked: POLLOUT comes back -- unless the I/O thread ran
		 * for an earlier POLLOUT while we held wlock (its report was
		 * in flight, so arming again was a no-op, and it cleared
		 * wblocked and left us flush_again): then try once more,
		 * which arms POLLOUT for real. */
		if (!__atomic_exchange_n(&pp->flush_again, 0, __ATOMIC_ACQ_REL))
			break;
	}
	if (!blocked)
		after_flush(ep);
}

/* ---- data requests ---- */

/* A T_MORE sequence held too long goes now (the callout thread). */
static void more_timeout(void *arg)
{
	struct inet_ep *ep = arg;
	struct tcp_pp *pp = PP(ep);

	flush(ep);
	inet_lock(ep);
	pp->tmo = 0;		/* (only now: close waits for us by it) */
	pp->more_held = false;
	if (!pp->closing &&
	    __atomic_load_n(&ep->wq->q_first, __ATOMIC_RELAXED) != NULL)
		kick_out(ep);	/* what came during our flush */
	inet_unlock(ep);
}

/*
 * /dev/tcp: is this message alone, so that it goes at once?  Not if it
 * says more follows; yes after a quiet spell (TCP_IDLE_NS), or when the
 * endpoint received something since its last send: a request/response
 * exchange, which waits for each answer and never forms a batch.
 */
static bool lone(struct inet_ep *ep, bool more)
{
	struct tcp_pp *pp = PP(ep);

	if (more)
		return false;
	if (__atomic_load_n(&ep->cnt.rx_msgs, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&pp->last_rx, __ATOMIC_RELAXED))
		return true;
	return str_now_ns() - __atomic_load_n(&pp->last_tx, __ATOMIC_RELAXED) >
	       inet_idle_ns(TCP_IDLE_NS);
}

/*
 * Queue data for the flusher.  /dev/tcp copies a small normal message
 * onto the end of the last one queued when that has room (a byte stream
 * keeps no boundaries), and starts a block with room (TCP_COAL_BLK) for
 * the next: the flusher then takes and frees one block per many writes
 * instead of one per write.
 */
static void queue_msg(struct inet_ep *ep, mblk_t *m)
{
	size_t len = (size_t)(m->b_wptr - m->b_rptr);
	mblk_t *c;

	if (ep->pr->fast && m->b_datap->db_type == M_DATA &&
	    m->b_cont == NULL && len <= TCP_COAL_MAX) {
		if (str_putq_append(ep->wq, m)) {
			freemsg(m);
			return;
		}
		if ((c = allocb(TCP_COAL_BLK, BPRI_MED)) != NULL) {
			memcpy(c->b_wptr, m->b_rptr, len);
			c->b_wptr += len;
			freemsg(m);
			m = c;
		}
	}
	if (!putq(ep->wq, m)) {
		INET_COUNT(ep, tx_drops, 1);
		freemsg(m);
	}
}

static void tcp_data(struct inet_ep *ep, mblk_t *mp, t_scalar_t prim)
{
	struct tcp_pp *pp = PP(ep);
	const unsigned char *opt = NULL;
	size_t dlen, optlen = 0;
	bool ex = false, more = false, direct = false, held = false;
	bool seq_end = false;
	size_t qb;
	mblk_t *m;

	if (prim < 0) {
		dlen = msgdsize(mp);
	} else {
		if (!data_only(mp)) {
			tpi_fatal(ep->wq, mp, EPROTO);
			return;
		}
		if (prim == T_OPTDATA_REQ) {
			struct T_optdata_req od;

			memcpy(&od, mp->b_rptr, sizeof(od));
			ex = (od.DATA_flag & T_ODF_EX) != 0;
			more = (od.DATA_flag & T_ODF_MORE) != 0;
			opt = tpi_region(mp, od.OPT_offset, od.OPT_length);
			optlen = (size_t)od.OPT_length;
		} else {
			struct T_data_req d;

			memcpy(&d, mp->b_rptr, sizeof(d));
			ex = prim == T_EXDATA_REQ;
			more = d.MORE_flag != 0;
		}
		dlen = tpi_datalen(mp);
	}
	if ((ep->pr->tidu > 0 && dlen > (size_t)ep->pr->tidu) ||
	    (optlen > 0 && inet_assoc_opts(ep, opt, optlen) != 0)) {
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	inet_lock(ep);
	if (ep->state == TS_IDLE || ep->state == TS_WRES_CIND) {
		/* raced with a disconnect: TPI says drop it (a listener
		 * that accepted onto itself may be listening again, with
		 * the next call indicated, before the user has read the
		 * T_DISCON_IND) */
		inet_unlock(ep);
		freemsg(mp);
		return;
	}
	if (!tpi_allowed(ep->state, T_DATA_REQ)) {
		inet_unlock(ep);
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	inet_count_tx(ep, dlen);
	if (dlen == 0) {
		/* nothing goes on a byte stream */
		inet_unlock(ep);
		INET_COUNT(ep, tx_sent, 1);
		freemsg(mp);
		return;
	}
	if (ex) {
		m = mp;			/* its M_PROTO block marks MSG_OOB */
		/* in order with what was sent before it, as send(MSG_OOB)
		 * is: not ahead in band 1 of the write queue */
		m->b_band = 0;
	} else if (prim < 0) {
		m = mp;
	} else {
		m = mp->b_cont;
		mp->b_cont = NULL;
		freeb(mp);
	}
	if (all_sent(ep) && (!ep->pr->fast || lone(ep, more)))
		direct = strtrylock(&pp->wlock);
	if (direct && !all_sent(ep)) {
		/* a flusher held what it had taken off the queue when we
		 * looked, and put part of it back before letting wlock go:
		 * m goes behind that (a flusher holds taken messages only
		 * while it holds wlock, so under wlock this look is sure) */
		queue_msg(ep, m);
		m = NULL;
	}
	if (!direct) {
		queue_msg(ep, m);
		STORE(pp->nq, LOAD(pp->nq) + 1);	/* (no lock xadd) */
		if (ep->pr->fast && more) {
			/* gathered until the sequence ends, or the timeout */
			pp->more_held = true;
			if (pp->tmo == 0 && !pp->closing)
				pp->tmo = timeout(more_timeout, ep,
						  TCP_MORE_TICKS);
			held = pp->tmo != 0;
		} else if (pp->more_held) {
			pp->more_held = false;
			seq_end = true;
		} else if (ep->pr->fast &&
			   !__atomic_load_n(&ep->nodelay, __ATOMIC_RELAXED)) {
			/* a stream of writes: the writer sends full
			 * batches, the timeout what is left of one */
			if (pp->tmo == 0 && !pp->closing)
				pp->tmo = timeout(more_timeout, ep,
						  TCP_MORE_TICKS);
			held = pp->tmo != 0;
		}
	}
	inet_unlock(ep);
	if (direct) {
		bool blocked = flush_locked(ep, m);

		strunlock(&pp->wlock);
		/* (blocked or not: see flush()) */
		if (LOAD(pp->flush_again))
			flush(ep);
		else if (!blocked)
			after_flush(ep);
		return;
	}
	if (!ep->pr->fast) {
		/* the holder of wlock sees flush_again; a blocked socket
		 * is served when POLLOUT comes */
		if (!LOAD(pp->wblocked))
			flush(ep);
		return;
	}
	qb = __atomic_load_n(&ep->wq->q_count, __ATOMIC_RELAXED);
	if (LOAD(pp->nq) >= TCP_BATCH || qb >= TCP_BATCH_BYTES ||
	    qb >= __atomic_load_n(&ep->wq->q_hiwat, __ATOMIC_RELAXED) / 2 ||
	    seq_end)
		flush(ep);	/* a full batch (before the queue is full and
				   the writer waits), or a T_MORE sequence
				   ends */
	else if (!held && !LOAD(pp->wblocked))
		kick_out(ep);	/* the I/O thread flushes soon */
}

static void tcp_ordrel_req(struct inet_ep *ep, mblk_t *mp)
{
	struct tcp_pp *pp = PP(ep);

	if (!data_only(mp) || tpi_datalen(mp) > 0) {
		tpi_fatal(ep->wq, mp, EPROTO);	/* no ORDRELDATA on TCP */
		return;
	}
	inet_lock(ep);
	switch (ep->state) {
	case TS_IDLE:
	case TS_WRES_CIND:
		break;		/* raced with a disconnect, as for data */
	case TS_DATA_XFER:
		ep->state = TS_WIND_ORDREL;
		STORE(pp->fin_pending, 1);
		break;
	case TS_WREQ_ORDREL:
		ep->state = TS_IDLE;
		STORE(pp->err_watch, 0);	/* our FIN goes: done */
		ep->raddrlen = 0;	/* no peer any more (T_ADDR_ACK) */
		pp->stale = true;
		STORE(pp->fin_pending, 1);
		relisten(ep);
		break;
	default:
		inet_unlock(ep);
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	inet_unlock(ep);
	freemsg(mp);
	flush(ep);
}

/* ---- the read side ---- */

/* Send a received message up: straight to the stream head when our read
 * queue is idle (nothing queued, its service procedure neither scheduled
 * nor holding a message), which spares a thread hand-off; else behind
 * what is queued.  rlock held, no other lock. */
static void rx_send(struct inet_ep *ep, mblk_t *mp)
{
	if (q_idle(ep->rq))
		putnext(ep->rq, mp);
	else
		inet_up(ep, mp);
}

/* A receive block of the cache (rlock held). */
static mblk_t *rx_block(struct tcp_pp *pp, unsigned i)
{
	if (pp->rxb[i] == NULL)
		pp->rxb[i] = allocb(pp->rbsize, BPRI_MED);
	return pp->rxb[i];
}

/* Send n bytes of block i up as a T_DATA_IND, hd its control block
 * (rlock held).  Cannot fail: what was read from the socket is gone from
 * it, so everything it needs was had before the read. */
static void rx_up(struct inet_ep *ep, unsigned i, size_t n, mblk_t *hd)
{
	struct tcp_pp *pp = PP(ep);
	struct T_data_ind di = { T_DATA_IND, 0 };
	mblk_t *b = pp->rxb[i], *s;

	memcpy(hd->b_rptr, &di, sizeof(di));
	if (n <= TCP_SMALL && n < pp->rbsize / 2 &&
	    (s = allocb(n, BPRI_MED)) != NULL) {
		/* a short piece gets a block of its size: the big one stays
		 * for the next read (without memory for it, the big one
		 * goes up) */
		memcpy(s->b_wptr, b->b_rptr, n);
		s->b_wptr += n;
		hd->b_cont = s;
	} else {
		b->b_wptr = b->b_rptr + n;
		hd->b_cont = b;
		pp->rxb[i] = NULL;
	}
	INET_COUNT(ep, rx_msgs, 1);
	INET_COUNT(ep, rx_bytes, n);
	rx_send(ep, hd);
}

/* One read: bytes sent up, 0 at end of file, -1 with *err; *inq the
 * bytes the kernel still holds (-1 not known). */
static ssize_t rx_data(struct inet_ep *ep, int *err, int *inq)
{
	struct tcp_pp *pp = PP(ep);
	struct iovec iov[TCP_RDBLK];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr mh;
	struct cmsghdr *c;
	mblk_t *hd[TCP_RDBLK];
	unsigned i, nb = 1;
	ssize_t r;
	size_t left;

	if (ep->pr->fast) {
		nb = (unsigned)(TCP_RDBYTES / pp->rbsize);
		if (nb < 1)
			nb = 1;
		if (nb > TCP_RDBLK)
			nb = TCP_RDBLK;
	}
	for (i = 0; i < nb; i++) {
		mblk_t *b = rx_block(pp, i);

		/* (each block's indication too, before the read) */
		if (b == NULL ||
		    (hd[i] = tpi_proto(sizeof(struct T_data_ind),
				       M_PROTO)) == NULL) {
			if (i == 0) {
				*err = ENOMEM;
				return -1;
			}
			break;
		}
		iov[i].iov_base = b->b_rptr;
		iov[i].iov_len = pp->rbsize;
	}
	nb = i;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = nb;
	mh.msg_control = &cm;
	mh.msg_controllen = sizeof(cm);
	do
		r = recvmsg(sock(ep), &mh, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		int e = errno;

		for (i = 0; i < nb; i++)
			freeb(hd[i]);
		if (r == 0)
			return 0;
		*err = e == EWOULDBLOCK ? EAGAIN : e;
		return -1;
	}
	*inq = -1;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == IPPROTO_TCP && c->cmsg_type == TCP_CM_INQ)
			memcpy(inq, CMSG_DATA(c), sizeof(*inq));
	INET_COUNT(ep, rx_calls, 1);
	left = (size_t)r;
	for (i = 0; i < nb; i++) {
		size_t n = left < pp->rbsize ? left : pp->rbsize;

		if (n > 0)
			rx_up(ep, i, n, hd[i]);
		else
			freeb(hd[i]);
		left -= n;
	}
	return r;
}

/*
 * Before a read, and after one that stopped short while the kernel holds
 * more (a read stops before the urgent byte, SO_OOBINLINE): if the
 * socket is at the mark, that byte goes up alone as T_EXDATA_IND (rlock
 * held).  1 if it did, 0 if not at the mark, -1 at the mark without
 * memory for it (nothing read: the byte waits in the socket).
 */
static int rx_mark(struct inet_ep *ep)
{
	struct T_exdata_ind xi = { T_EXDATA_IND, 0 };
	unsigned char c;
	mblk_t *hd, *d;
	int at = 0;

	if (ioctl(sock(ep), SIOCATMARK, &at) != 0 || !at)
		return 0;
	/* (the blocks first: a byte read is gone from the socket) */
	hd = tpi_proto(sizeof(xi), M_PROTO);
	d = allocb(1, BPRI_MED);
	if (hd == NULL || d == NULL) {
		freemsg(hd);
		freemsg(d);
		return -1;
	}
	if (recv(sock(ep), &c, 1, MSG_DONTWAIT) != 1) {
		freemsg(hd);
		freemsg(d);
		return 0;
	}
	INET_COUNT(ep, rx_calls, 1);
	memcpy(hd->b_rptr, &xi, sizeof(xi));
	*d->b_wptr++ = c;
	hd->b_cont = d;
	hd->b_band = 1;
	INET_COUNT(ep, rx_msgs, 1);
	INET_COUNT(ep, rx_bytes, 1);
	rx_send(ep, hd);
	return 1;
}

/*
 * The next read (rlock held): rx_data's result, or 1 when the urgent
 * byte at the mark went up alone instead.  A read that starts at the mark
 * does not stop there (SO_OOBINLINE) and would take the urgent byte as
 * ordinary data, so first:
 *  - after the socket was found empty (rx_empty), a poll of it: nothing,
 *    and the pull ends as a read would have (EAGAIN); data without
 *    POLLPRI (no urgent byte anywhere in it), and the read is safe, for
 *    an urgent byte that comes after what is there now is behind it and
 *    the read stops before it; data with POLLPRI, and SIOCATMARK says
 *    whether the first byte is the urgent one (it is there, so the answer
 *    holds for the read).  SIOCATMARK alone on an empty socket would race
 *    with an urgent byte arriving before the read.
 *  - after a read that filled its blocks exactly with more in the
 *    kernel (rx_atmark), SIOCATMARK: the next byte may be at the mark.
 * The poll is a system call (the kernel's, not the library's poll) in
 * place of the read that would have found nothing.
 */
static ssize_t rx_next(struct inet_ep *ep, int *err, int *inq)
{
	struct tcp_pp *pp = PP(ep);
	bool look = pp->rx_atmark;

	pp->rx_atmark = false;
	if (pp->rx_empty) {
		struct pollfd p = { sock(ep), POLLIN | POLLPRI, 0 };
		struct timespec zero = { 0, 0 };
		long n;

		do
			n = syscall(SYS_ppoll, &p, 1, &zero, NULL, 0);
		while (n < 0 && errno == EINTR);
		if (n == 0) {
			*err = EAGAIN;
			return -1;
		}
		if (n > 0) {		/* (failed: read, as before) */
			pp->rx_empty = false;	/* (or an error or end of
						   file: the read says) */
			look = (p.revents & POLLPRI) != 0;
		}
	}
	if (look) {
		int m = rx_mark(ep);

		if (m > 0) {
			pp->rx_empty = true;	/* (maybe: look again) */
			return 1;
		}
		if (m < 0) {
			/* (a read now would take the urgent byte as
			 * ordinary data) */
			pp->rx_atmark = true;
			*err = ENOMEM;
			return -1;
		}
	}
	return rx_data(ep, err, inq);
}

/* The peer's FIN (rlock held). */
static void rx_eof(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	if (!lock_or_retry(ep, POLLIN))
		return;		/* the end of file is read again */
	STORE(pp->rx_ok, 0);
	if (ep->state == TS_DATA_XFER) {
		ep->state = TS_WREQ_ORDREL;
		send_ordrel(ep);
		/* the socket stays readable (its end of file): watch it for
		 * a reset alone (tcp_run) */
		STORE(pp->err_watch, 1);
		(void)str_kev_rearm(&ep->ke, POLLERR);
	} else if (ep->state == TS_WIND_ORDREL) {
		ep->state = TS_IDLE;
		ep->raddrlen = 0;
		pp->stale = true;
		send_ordrel(ep);
		relisten(ep);
	}
	inet_unlock(ep);
}

/* The connection is gone (rlock held): T_DISCON_IND. */
static void conn_lost(struct inet_ep *ep, int err)
{
	struct tcp_pp *pp = PP(ep);

	if (err == EPIPE)
		err = ECONNRESET;
	/* kept until reported: a reset is returned by one call only */
	if (LOAD(pp->werr) == 0)
		STORE(pp->werr, err);
	if (!lock_or_retry(ep, POLLIN))
		return;
	STORE(pp->rx_ok, 0);
	STORE(pp->err_watch, 0);
	if (connected_state(ep->state)) {
		strlock(&pp->wlock);
		flushq(ep->wq, FLUSHALL);
		STORE(pp->fin_pending, 0);
		strunlock(&pp->wlock);
		STORE(pp->werr, 0);
		ep->state = TS_IDLE;
		ep->raddrlen = 0;
		pp->stale = true;
		send_discon(ep, err, -1);
		relisten(ep);
	} else {
		STORE(pp->werr, 0);
	}
	inet_unlock(ep);
}

/* One pass of pulling, rlock held. */
static void pull_locked(struct inet_ep *ep, bool arm)
{
	struct tcp_pp *pp = PP(ep);
	int err, n;

	if (LOAD(pp->listening)) {
		accept_more(ep);
		return;
	}
	if ((err = LOAD(pp->werr)) != 0) {
		conn_lost(ep, err);
		return;
	}
	if (LOAD(pp->retry))
		STORE(pp->retry, 0);	/* (set again if this fails too) */
	for (n = 0; LOAD(pp->rx_ok); n++) {
		ssize_t r;
		int inq = -1;

		if (!canput(ep->rq) || inet_rfull(ep, 0))
			return;		/* the read service procedure pulls */
		if (n == TCP_PULL_MAX) {
			if (arm)	/* more to read: let the I/O thread */
				(void)str_kev_rearm(&ep->ke, POLLIN);
			return;
		}
		r = rx_next(ep, &err, &inq);
		if (r > 0) {
			if (inq == 0 || inq < 0)
				pp->rx_empty = true;	/* drained */
			else if ((size_t)r % pp->rbsize != 0) {
				/* stopped short of more: the urgent byte?
				 * Taken, the socket may be empty now; no
				 * memory for it: looked at first next time */
				int m = rx_mark(ep);

				if (m > 0)
					pp->rx_empty = true;
				else if (m < 0)
					pp->rx_atmark = true;
			} else
				pp->rx_atmark = true;	/* filled: the next
							   byte may be it */
			continue;
		}
		if (r == 0) {
			if ((err = LOAD(pp->werr)) != 0)
				conn_lost(ep, err);
			else
				rx_eof(ep);
			return;
		}
		if (err == EAGAIN) {
			pp->rx_empty = true;
			if (arm) {
				/* (before arming: a report clears it) */
				STORE(pp->rx_quiet, 1);
				(void)str_kev_rearm(&ep->ke, POLLIN);
			}
			return;
		}
		if (err == ENOMEM) {
			/* nothing was read: pull again in a while (a
			 * reader's next look may come first) */
			STORE(pp->retry, 1);
			inet_lock(ep);
			pend_watch(ep);
			inet_unlock(ep);
			return;
		}
		conn_lost(ep, err);
		return;
	}
}

/*
 * Pull, unless another thread is pulling: then leave it a note
 * (pull_again, with the arm request) that it reads after unlocking.
 */
static void pull(struct inet_ep *ep, bool arm)
{
	struct tcp_pp *pp = PP(ep);
	int note = arm ? 2 : 1;

	for (;;) {
		if (!strtrylock(&pp->rlock)) {
			__atomic_or_fetch(&pp->pull_again, note,
					  __ATOMIC_SEQ_CST);
			if (!strtrylock(&pp->rlock))
				return;	/* the holder will see the note */
		}
		__atomic_and_fetch(&pp->pull_again, ~note, __ATOMIC_SEQ_CST);
		pull_locked(ep, (note & 2) != 0);
		strunlock(&pp->rlock);
		note = __atomic_exchange_n(&pp->pull_again, 0,
					   __ATOMIC_SEQ_CST);
		if (note == 0)
			break;
	}
}

/* Let go of rlock taken without pull(): a pull that found it taken left
 * its note (pull_again) for the holder to act on, and that is us -- a
 * listener's POLLIN report, one-shot, would otherwise be lost for good. */
static void rlock_drop(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	int note;

	strunlock(&pp->rlock);
	note = __atomic_exchange_n(&pp->pull_again, 0, __ATOMIC_SEQ_CST);
	if (note != 0)
		pull(ep, (note & 2) != 0);
}

/* ---- connecting ---- */

/* The outcome of connect() (POLLOUT or an error in TS_WCON_CREQ). */
static void conn_done(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	struct T_conn_con cc = { T_CONN_CON, 0, 0, 0, 0 };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss), el = sizeof(int);
	size_t off = sizeof(cc);
	int err = 0, fd;
	mblk_t *con;
	bool up = false;

	con = tpi_proto(sizeof(cc) + INET_ADDR_SIZE + 8, M_PROTO);
	if (!lock_or_retry(ep, POLLOUT)) {
		freemsg(con);
		return;
	}
	if (ep->state != TS_WCON_CREQ) {
		inet_unlock(ep);
		freemsg(con);
		return;
	}
	fd = sock(ep);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err == 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) != 0) {
		if (errno == ENOTCONN) {
			/* not yet (a spurious report): wait on */
			inet_unlock(ep);
			freemsg(con);
			(void)str_kev_rearm(&ep->ke, POLLOUT);
			return;
		}
		err = errno;
	}
	STORE(pp->wcon, 0);
	if (err == 0 && con != NULL) {
		memcpy(&ep->raddr, &ss, sizeof(ss));
		ep->raddrlen = inet_addr_len(&ss);
		cc.RES_length = (t_scalar_t)ep->raddrlen;
		cc.RES_offset = tpi_put_bytes(con, &off, &ss, ep->raddrlen);
		memcpy(con->b_rptr, &cc, sizeof(cc));
		ep->state = TS_DATA_XFER;
		inet_up(ep, con);
		STORE(pp->rx_quiet, 0);
		pp->rx_empty = true;	/* (no puller before rx_ok) */
		pp->rx_atmark = false;
		STORE(pp->rx_ok, 1);
		up = true;
	} else {
		freemsg(con);
		if (err == 0) {
			err = ENOMEM;
			set_linger0(fd);
		}
		ep->state = TS_IDLE;
		pp->stale = true;
		ep->raddrlen = 0;
		send_discon(ep, err, -1);
	}
	inet_unlock(ep);
	if (up && inet_waited_for(ep))
		pull(ep, true);
}

static void tcp_conn_req(struct inet_ep *ep, mblk_t *mp)
{
	struct tcp_pp *pp = PP(ep);
	struct T_conn_req r;
	struct sockaddr_storage ss;
	socklen_t sl;
	mblk_t *ok;
	int err, rc, e;

	memcpy(&r, mp->b_rptr, sizeof(r));
	if (!data_only(mp) || tpi_datalen(mp) > 0) {
		inet_error_ack(ep, mp, T_CONN_REQ, TBADDATA, 0);
		return;
	}
	ok = tpi_proto(sizeof(struct T_ok_ack), M_PCPROTO);
	if (ok == NULL) {
		inet_error_ack(ep, mp, T_CONN_REQ, TSYSERR, ENOMEM);
		return;
	}
	inet_lock(ep);
	if (ep->state != TS_IDLE || ep->qlen > 0) {
		err = TOUTSTATE;	/* a listener does not call out */
		goto fail;
	}
	/* a fresh socket first: of the family the endpoint is bound in,
	 * which the address must have */
	if (pp->stale && (e = renew(ep, false)) != 0) {
		err = TSYSERR;
		inet_unlock(ep);
		freemsg(ok);
		inet_error_ack(ep, mp, T_CONN_REQ, err, e);
		return;
	}
	err = inet_addr_in(ep, tpi_region(mp, r.DEST_offset, r.DEST_length),
			   r.DEST_length, true, &ss, &sl);
	if (err != 0)
		goto fail;
	/* the connection's options, once the request is known good (a
	 * refused one changes nothing), on the socket it will use */
	if (r.OPT_length > 0 &&
	    topt_assoc(ep->pr->opts, ep,
		       tpi_region(mp, r.OPT_offset, r.OPT_length),
		       (size_t)r.OPT_length, ep->priv) != 0) {
		err = TBADOPT;
		goto fail;
	}
	sock_setup(sock(ep));
	rc = connect(sock(ep), (struct sockaddr *)&ss, sl);
	e = rc == 0 ? 0 : errno;
	if (rc == 0 || e == EINPROGRESS || e == EINTR || e == EAGAIN) {
		struct T_ok_ack oa = { T_OK_ACK, T_CONN_REQ };

		memcpy(ok->b_rptr, &oa, sizeof(oa));
		ep->state = TS_WCON_CREQ;
		memcpy(&ep->raddr, &ss, sizeof(ss));
		ep->raddrlen = sl;
		STORE(pp->wcon, 1);
		inet_up(ep, ok);
		inet_unlock(ep);
		freemsg(mp);
		(void)str_kev_rearm(&ep->ke, POLLOUT);
		return;
	}
	if (e == ECONNREFUSED || e == ENETUNREACH || e == EHOSTUNREACH ||
	    e == ETIMEDOUT || e == ECONNRESET) {
		/* failed at once: accepted, then disconnected */
		struct T_ok_ack oa = { T_OK_ACK, T_CONN_REQ };

		memcpy(ok->b_rptr, &oa, sizeof(oa));
		inet_up(ep, ok);
		pp->stale = true;
		send_discon(ep, e, -1);
		inet_unlock(ep);
		freemsg(mp);
		return;
	}
	pp->stale = true;	/* a socket a connect failed on */
	inet_unlock(ep);
	freemsg(ok);
	err = inet_tli_error(e);
	inet_error_ack(ep, mp, T_CONN_REQ, err, e);
	return;
fail:
	inet_unlock(ep);
	freemsg(ok);
	inet_error_ack(ep, mp, T_CONN_REQ, err, 0);
}

/* ---- T_CONN_RES ---- */

static void lock2(struct inet_ep *a, struct inet_ep *b)
{
	if (a == b) {
		inet_lock(a);
	} else if (a < b) {
		inet_lock(a);
		inet_lock(b);
	} else {
		inet_lock(b);
		inet_lock(a);
	}
}

static void unlock2(struct inet_ep *a, struct inet_ep *b)
{
	inet_unlock(a);
	if (a != b)
		inet_unlock(b);
}

static void tcp_conn_res(struct inet_ep *ep, mblk_t *mp)
{
	struct tcp_pp *pp = PP(ep), *ap;
	struct T_conn_res r;
	struct inet_ep *acc = ep;
	struct tcp_pend *p;
	struct sockaddr_storage la;
	socklen_t ll = sizeof(la);
	int err = 0, uerr = 0, fam;
	bool held = false;

	memcpy(&r, mp->b_rptr, sizeof(r));
	if (!data_only(mp) || tpi_datalen(mp) > 0) {
		inet_error_ack(ep, mp, T_CONN_RES, TBADDATA, 0);
		return;
	}
	if (r.ACCEPTOR_id != 0 && r.ACCEPTOR_id != ep->token) {
		inet_token_hold();
		held = true;
		acc = inet_acceptor(ep->pr, r.ACCEPTOR_id, &err);
		if (acc == NULL) {
			inet_token_rele();
			inet_error_ack(ep, mp, T_CONN_RES, err, 0);
			return;
		}
	}
	ap = PP(acc);
	strlock(&pp->rlock);	/* no accept in flight on the listener */
	lock2(ep, acc);
	if (ep->state != TS_WRES_CIND)
		err = TOUTSTATE;
	else if (acc == ep)
		err = pp->npend > 1 ? TINDOUT : 0;
	else if (acc->qlen > 0)
		err = TRESQLEN;
	else if (acc->state != TS_IDLE && acc->state != TS_UNBND)
		err = TOUTSTATE;
	if (err == 0 && !pend_has(ep, r.SEQ_number))
		err = TBADSEQ;
	/* the connection's options, once the response is known good (a
	 * refused one changes nothing): remembered by the acceptor, so its
	 * new socket below gets them too */
	if (err == 0 && r.OPT_length > 0 &&
	    topt_assoc(acc->pr->opts, acc,
		       tpi_region(mp, r.OPT_offset, r.OPT_length),
		       (size_t)r.OPT_length, acc->priv) != 0)
		err = TBADOPT;
	if (err != 0)
		goto fail;
	p = pend_take(ep, r.SEQ_number);
	fam = p->addr.ss_family;
	if (acc == ep)
		STORE(pp->listening, 0);
	/* the acceptor's old socket may still be finishing a connection:
	 * what it was sending goes on by itself */
	strlock(&ap->wlock);
	if (ap->stale)
		drain_off(acc);
	flushq(acc->wq, FLUSHALL);
	STORE(ap->fin_pending, 0);
	STORE(ap->wblocked, 0);
	uerr = inet_socket_adopt(acc, p->fd, fam,
				 acc == ep ? 0 : ep->opt_set);
	strunlock(&ap->wlock);
	if (uerr != 0) {
		/* the acceptor kept its socket (switch_socket put it back):
		 * the indication is still outstanding, TS_WRES_CIND, as TPI
		 * has it after T_ERROR_ACK; the user may accept again or
		 * refuse it */
		p->next = pp->pend;
		pp->pend = p;
		pp->npend++;
		if (acc == ep)
			STORE(pp->listening, 1);
		err = TSYSERR;
		goto fail;
	}
	acc->family = fam;
	if (acc->state == TS_UNBND || acc->laddrlen == 0 || acc == ep) {
		if (getsockname(p->fd, (struct sockaddr *)&la, &ll) == 0) {
			acc->laddr = la;
			acc->laddrlen = ll;
		}
	}
	memcpy(&acc->raddr, &p->addr, sizeof(p->addr));
	acc->raddrlen = inet_addr_len(&p->addr);
	ap->stale = false;
	STORE(ap->werr, 0);
	STORE(ap->wcon, 0);
	acc->state = TS_DATA_XFER;
	if (acc != ep && pp->npend == 0)
		ep->state = TS_IDLE;
	free(p);
	inet_ok_ack(ep, mp, T_CONN_RES);
	STORE(ap->rx_quiet, 0);
	ap->rx_empty = true;		/* (no puller before rx_ok) */
	ap->rx_atmark = false;
	STORE(ap->rx_ok, 1);
	unlock2(ep, acc);
	rlock_drop(ep);
	if (inet_waited_for(acc))
		pull(acc, true);
	if (acc != ep)
		pull(ep, true);		/* room for another indication */
	if (held)
		inet_token_rele();
	return;
fail:
	unlock2(ep, acc);
	rlock_drop(ep);
	if (held)
		inet_token_rele();
	inet_error_ack(ep, mp, T_CONN_RES, err, uerr);
}

/* ---- T_DISCON_REQ ---- */

static void tcp_discon_req(struct inet_ep *ep, mblk_t *mp)
{
	struct tcp_pp *pp = PP(ep);
	struct T_discon_req r;
	struct tcp_pend *p;
	mblk_t *fl;
	int err = 0, e;
	bool more = false;

	memcpy(&r, mp->b_rptr, sizeof(r));
	if (!data_only(mp) || tpi_datalen(mp) > 0) {
		inet_error_ack(ep, mp, T_DISCON_REQ, TBADDATA, 0);
		return;
	}
	if ((fl = tpi_proto(1, M_FLUSH)) == NULL) {
		inet_error_ack(ep, mp, T_DISCON_REQ, TSYSERR, ENOMEM);
		return;
	}
	fl->b_rptr[0] = FLUSHRW;
	strlock(&pp->rlock);
	inet_lock(ep);
	switch (ep->state) {
	case TS_WCON_CREQ:
		/* withdraw the attempt: a reset if it got through */
		ep->state = TS_IDLE;
		ep->raddrlen = 0;
		if ((e = renew(ep, true)) != 0)
			pp->stale = true;
		break;
	case TS_WRES_CIND:
		if ((p = pend_take(ep, r.SEQ_number)) == NULL) {
			err = TBADSEQ;
			break;
		}
		pend_close(p);
		if (pp->npend == 0)
			ep->state = TS_IDLE;
		more = true;
		break;
	case TS_DATA_XFER:
	case TS_WIND_ORDREL:
	case TS_WREQ_ORDREL:
		STORE(pp->rx_ok, 0);
		ep->state = TS_IDLE;
		ep->raddrlen = 0;
		pp->stale = true;	/* until renew puts a socket in */
		(void)renew(ep, true);
		flushq(ep->rq, FLUSHDATA);
		inet_up(ep, fl);
		fl = NULL;
		break;
	default:
		err = TOUTSTATE;
		break;
	}
	if (err != 0) {
		inet_unlock(ep);
		rlock_drop(ep);
		freemsg(fl);
		inet_error_ack(ep, mp, T_DISCON_REQ, err, 0);
		return;
	}
	inet_ok_ack(ep, mp, T_DISCON_REQ);
	inet_unlock(ep);
	rlock_drop(ep);
	freemsg(fl);
	if (more)
		pull(ep, true);		/* room for another indication */
}

/* ---- struct inet_ops ---- */

static int tcp_open(struct inet_ep *ep)
{
	struct tcp_pp *pp = calloc(1, sizeof(*pp));

	if (pp == NULL)
		return ENOMEM;
	pp->next_seq = 1;
	pp->rbsize = ep->pr->tidu > 0 ? (size_t)ep->pr->tidu : 65536;
	if (pp->rbsize > TCP_RDBYTES)
		pp->rbsize = TCP_RDBYTES;
	__atomic_store_n(&ep->pp, pp, __ATOMIC_RELEASE);
	if (ep->pr->fast)
		noenable(ep->wq);	/* we decide when a batch goes */
	/* expedited data waits in band 0, in line (tcp_data): band 1
	 * writers are held back by what band 0 holds */
	str_bandfc(ep->wq);
	/* readers may sleep in poll() on the socket: when it is readable
	 * a KEV_PULL moves data, an end or an error up (see ke_direct) */
	ep->ke.ke_direct = 1;
	return 0;
}


/*
 * Closing after an orderly release (T_ORDREL_REQ sent): what still waits
 * on the write queue, and the FIN behind it, go to the kernel, which
 * delivers them after close as it does for a socket.  Blocking sends,
 * bounded by SO_SNDTIMEO; what does not fit in that time is dropped.
 * Nothing else runs on the endpoint any more.
 */
static void close_drain(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	int fd = sock(ep);
	bool ok = true;
	mblk_t *mp;

	blocking_sends(fd);
	while ((mp = getq(ep->wq)) != NULL) {
		if (ok)
			ok = send_whole(fd, mp);
		INET_COUNT(ep, tx_calls, 1);
		if (ok)
			INET_COUNT(ep, tx_sent, nmsgs(mp));
		else
			INET_COUNT(ep, tx_drops, nmsgs(mp));
		freemsg(mp);
	}
	if (ok && LOAD(pp->fin_pending))
		(void)shutdown(fd, SHUT_WR);
	STORE(pp->fin_pending, 0);
}

static void tcp_close(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);
	toid_t id, pid;

	if (pp == NULL)
		return;
	/* no more runs from the I/O thread (the common part's detach
	 * after this is then a no-op), no more T_MORE timeouts (untimeout
	 * waits for one that runs) */
	str_kev_detach(&ep->ke);
	inet_lock(ep);
	pp->closing = true;
	id = pp->tmo;
	pid = pp->ptmo;
	inet_unlock(ep);
	if (id != 0)
		(void)untimeout(id);
	if (pid != 0)
		(void)untimeout(pid);
	inet_lock(ep);
	pend_close_all(ep);
	STORE(pp->listening, 0);
	if (ep->state == TS_WIND_ORDREL || (ep->state == TS_IDLE &&
					    LOAD(pp->fin_pending)))
		close_drain(ep);	/* released: the data still goes */
	else if (connected_state(ep->state) || ep->state == TS_WCON_CREQ)
		set_linger0(sock(ep));	/* closing a connection aborts it */
	inet_unlock(ep);
	for (unsigned i = 0; i < TCP_RDBLK; i++)
		freemsg(pp->rxb[i]);
	__atomic_store_n(&ep->pp, NULL, __ATOMIC_RELEASE);
	free(pp);
}

static void tcp_req(struct inet_ep *ep, mblk_t *mp, t_scalar_t prim)
{
	switch (prim) {
	case -1:
	case T_DATA_REQ:
	case T_EXDATA_REQ:
	case T_OPTDATA_REQ:
		tcp_data(ep, mp, prim);
		break;
	case T_CONN_REQ:
		tcp_conn_req(ep, mp);
		break;
	case T_CONN_RES:
		tcp_conn_res(ep, mp);
		break;
	case T_DISCON_REQ:
		tcp_discon_req(ep, mp);
		break;
	case T_ORDREL_REQ:
		tcp_ordrel_req(ep, mp);
		break;
	case T_UNITDATA_REQ:
		tpi_fatal(ep->wq, mp, EPROTO);
		break;
	default:
		inet_error_ack(ep, mp, prim, TNOTSUPPORT, 0);
		break;
	}
}

static int tcp_bound(struct inet_ep *ep, int *unixerr)
{
	struct tcp_pp *pp = PP(ep);

	pp->stale = false;
	sock_setup(sock(ep));
	if (ep->qlen > TCP_MAXQLEN)
		ep->qlen = TCP_MAXQLEN;
	if (ep->qlen == 0)
		return 0;
	if (listen(sock(ep), (int)ep->qlen) != 0) {
		*unixerr = errno;
		return inet_tli_error(errno);
	}
	pp->next_seq = pp->next_seq > 0 ? pp->next_seq : 1;
	STORE(pp->listening, 1);
	(void)str_kev_rearm(&ep->ke, POLLIN);
	return 0;
}

static void tcp_unbound(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	pend_close_all(ep);
	STORE(pp->listening, 0);
	STORE(pp->rx_ok, 0);
	strlock(&pp->wlock);	/* what an old connection still sent */
	flushq(ep->wq, FLUSHALL);
	STORE(pp->fin_pending, 0);
	STORE(pp->wblocked, 0);
	strunlock(&pp->wlock);
	STORE(pp->werr, 0);
	STORE(pp->relisten, 0);
	STORE(pp->err_watch, 0);
	pp->stale = false;
}

static void tcp_wsrv(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	flush(ep);
	/* a listener whose connection ended and whose data is sent
	 * listens again */
	if (LOAD(pp->relisten)) {
		/* (may run in the I/O thread: no waiting, see
		 * lock_or_retry; a kick brings us back) */
		if (!strtrylock(&pp->rlock)) {
			kick_out(ep);
			return;
		}
		if (!lock_or_retry(ep, POLLOUT)) {
			rlock_drop(ep);
			return;
		}
		if (!pp->stale || ep->state != TS_IDLE) {
			/* no longer a listener whose connection ended
			 * (unbound, connected again): nothing to do, and
			 * after_flush must stop enabling us */
			STORE(pp->relisten, 0);
		} else if (all_sent(ep)) {
			STORE(pp->relisten, 0);	/* (whatever renew says) */
			(void)renew(ep, false);
		}
		inet_unlock(ep);
		rlock_drop(ep);
	}
}

static void tcp_rsrv(struct inet_ep *ep)
{
	mblk_t *mp;

	/* what waits on our read queue goes first */
	while ((mp = getq(ep->rq)) != NULL) {
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(ep->rq, mp->b_band)) {
			putbq(ep->rq, mp);
			return;
		}
		putnext(ep->rq, mp);
	}
	/* a reader reading pulls for itself; a sleeping one, or a
	 * watcher, needs us to go on now that the head has room */
	if (inet_waited_for(ep) || LOAD(PP(ep)->listening))
		pull(ep, true);
}

static void tcp_run(struct inet_ep *ep, unsigned revents)
{
	/* the source is attached before ops->open runs: a report can
	 * come first (kev.c's generations live in the strkev, so a stale
	 * event for a slot's previous owner can reach a new endpoint) */
	struct tcp_pp *pp = __atomic_load_n(&ep->pp, __ATOMIC_ACQUIRE);

	if (pp == NULL)
		return;
	if (revents & KEV_LOOK) {
		/* a look (libxti looks before every send): no system call
		 * while the socket is known empty; otherwise read, and arm
		 * POLLIN to learn when it stops being empty */
		if (!LOAD(pp->rx_quiet) || LOAD(pp->werr) ||
		    LOAD(pp->listening))
			pull(ep, true);
		return;
	}
	if (revents & (KEV_PULL | KEV_WAIT)) {
		pull(ep, (revents & KEV_WAIT) != 0 || inet_waited_for(ep));
		return;
	}
	/* the I/O thread: a one-shot report disarms every event, so a
	 * look must read again (and arm again) */
	STORE(pp->rx_quiet, 0);
	if (LOAD(pp->wcon) && (revents & (POLLOUT | POLLERR | POLLHUP)))
		conn_done(ep);
	if (revents & (POLLOUT | POLLERR | POLLHUP)) {
		STORE(pp->wblocked, 0);
		flush(ep);
	}
	if ((revents & (POLLERR | POLLHUP)) && LOAD(pp->err_watch) &&
	    LOAD(pp->werr) == 0) {
		/* past the end of file (TS_WREQ_ORDREL): a reset now */
		int e = 0;
		socklen_t el = sizeof(e);

		if (getsockopt(sock(ep), SOL_SOCKET, SO_ERROR, &e, &el) == 0 &&
		    e != 0)
			STORE(pp->werr, e);
	}
	if ((revents & (POLLIN | POLLERR | POLLHUP)) &&
	    (inet_waited_for(ep) || LOAD(pp->listening) || LOAD(pp->werr)))
		pull(ep, true);
	/* a one-shot report disarms every event: ask again for what is
	 * still wanted */
	if (LOAD(pp->wblocked) || LOAD(pp->wcon))
		(void)str_kev_rearm(&ep->ke, POLLOUT);
	if (LOAD(pp->rx_ok) && inet_waited_for(ep) && canput(ep->rq) &&
	    !inet_rfull(ep, 0))
		(void)str_kev_rearm(&ep->ke, POLLIN);
	if (LOAD(pp->err_watch) && LOAD(pp->werr) == 0)
		(void)str_kev_rearm(&ep->ke, POLLERR);
}

static void tcp_wflush(struct inet_ep *ep)
{
	struct tcp_pp *pp = PP(ep);

	/* a release waiting behind flushed data may go now */
	if (LOAD(pp->fin_pending))
		kick_out(ep);
}

const struct inet_ops inet_tcp_ops = {
	.open = tcp_open,
	.close = tcp_close,
	.req = tcp_req,
	.bound = tcp_bound,
	.unbound = tcp_unbound,
	.wsrv = tcp_wsrv,
	.rsrv = tcp_rsrv,
	.run = tcp_run,
	.wflush = tcp_wflush,
};
