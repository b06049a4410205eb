/*
 * inet.h -- private to the Internet transport providers (inet*.c).
 *
 * Six devices, two families over the kernel's sockets:
 *
 *   /dev/inet/udp, /dev/inet/tcp, /dev/inet/rawip	"XTI over sockets"
 *	(the papers' XTIoS): one socket call per TPI primitive, straight
 *	from the put procedure.  The reference.
 *   /dev/udp, /dev/tcp, /dev/rawip			the batching family
 *	(pr->fast): the write side queues and a flush moves many messages
 *	per kernel crossing (sendmmsg, UDP GSO, coalesced stream writes);
 *	the read side receives in batches (recvmmsg, UDP GRO) while the
 *	stream above takes them.
 *
 * One TPI part serves all six (inet.c): open and close, the kernel
 * socket, T_INFO_REQ, T_ADDR_REQ, T_CAPABILITY_REQ, T_BIND_REQ,
 * T_UNBIND_REQ, T_OPTMGMT_REQ (the shared options code, topt.h, applied
 * to the socket: inet_opt.c), M_FLUSH, the statistics ioctl, and every
 * address check.  Each protocol adds what is its own through struct
 * inet_ops: connectionless data for UDP and raw IP (inet_dg.c),
 * connections and byte streams for TCP (inet_tcp.c).
 *
 * The socket.  Every endpoint has one from open on (options negotiated
 * before t_bind need it), IPv4, non-blocking, close-on-exec.  A T_BIND_REQ
 * with an IPv6 address replaces it by an IPv6 socket with the same
 * options (those negotiated so far are applied again).  The socket is
 * the endpoint's kernel event source (ep->ke, kev.c): the I/O thread
 * calls ops->run with POLLIN/POLLOUT when it is armed and ready, and the
 * stream head calls it with KEV_PULL (a reader wants what the kernel
 * has) or KEV_WAIT (a reader is about to sleep: pull, and arm POLLIN so
 * the I/O thread serves the next arrival).  Nobody waiting, nothing
 * armed: data stays in the kernel, where its own flow control works.
 *
 * Addresses in netbufs are a struct sockaddr_in (16 bytes, AF_INET) or
 * a struct sockaddr_in6 (28 bytes, AF_INET6); any other length or
 * family is TBADADDR.  ADDR_size is 28.
 *
 * Locking.  ep->lock (a strlock: short holds, taken for every data
 * request of /dev/tcp) protects the fields marked "lock"; it is never
 * held across putnext/qreply (they run other modules' code) nor across a
 * socket call that may block (none do: the socket is non-blocking).
 * Data paths have their own try-locks in the protocol's part (one
 * flusher, one puller at a time).
 */
#ifndef STREAMS_INET_H
#define STREAMS_INET_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stream.h>
#include <sys/tihdr.h>

#include "strsubr.h"
#include "topt.h"
#include "tpi.h"

#define INET_ADDR_SIZE	((t_scalar_t)sizeof(struct sockaddr_in6))

enum inet_kind { IK_UDP, IK_TCP, IK_RAW };

struct inet_ep;

/* What a protocol adds to the common TPI part.  Every function is
 * called inside an entry of the endpoint's queues (D_MP: concurrently). */
struct inet_ops {
	/* After the common open (socket made): 0 or an errno. */
	int (*open)(struct inet_ep *ep);
	/* Before the socket is closed and ep freed. */
	void (*close)(struct inet_ep *ep);
	/* A request the common part does not answer (T_CONN_REQ,
	 * T_CONN_RES, T_DISCON_REQ, T_DATA_REQ, T_EXDATA_REQ,
	 * T_OPTDATA_REQ, T_ORDREL_REQ, T_UNITDATA_REQ), checked by
	 * tpi_check(); prim -1: plain M_DATA. */
	void (*req)(struct inet_ep *ep, mblk_t *mp, t_scalar_t prim);
	/* T_BIND_REQ succeeded (lock held; qlen granted in ep->qlen):
	 * 0, or a TLI error with *unixerr (the bind is undone). */
	int (*bound)(struct inet_ep *ep, int *unixerr);
	/* T_UNBIND_REQ (lock held), before the socket is renewed. */
	void (*unbound)(struct inet_ep *ep);
	/* The write and read service procedures. */
	void (*wsrv)(struct inet_ep *ep);
	void (*rsrv)(struct inet_ep *ep);
	/* The kernel event source (see above); must tolerate concurrent
	 * calls. */
	void (*run)(struct inet_ep *ep, unsigned revents);
	/* M_FLUSH of the write side (FLUSHW), after flushq (lock held):
	 * drop what the protocol holds of its own. */
	void (*wflush)(struct inet_ep *ep);
	/* SO_RCVBUF was set (lock held), or NULL. */
	void (*rcvbuf)(struct inet_ep *ep);
};

/* One device. */
struct inet_proto {
	const char *name;		/* driver name ("udp", "inet_udp") */
	const char *dev;		/* conventional path ("/dev/udp") */
	enum inet_kind kind;
	bool fast;			/* the batching family */
	int type;			/* SOCK_DGRAM, SOCK_STREAM, SOCK_RAW */
	int ipproto;			/* default protocol of the socket */
	t_scalar_t serv_type;		/* T_CLTS, T_COTS_ORD */
	t_scalar_t tsdu, etsdu, cdata, ddata, tidu, flags;
	const struct inet_ops *ops;
	const struct topt_table *opts;
	unsigned short id;		/* module id */
};

/* Counts of what moved (INET_IOC_STATS); updated atomically.  The
 * sending and the receiving side each have cache lines of their own (a
 * shared line made every count a cross-CPU miss). */
struct inet_counts {
	/* messages accepted from above: counted by the writing thread with
	 * plain stores when it is tx_owner (the first thread that wrote:
	 * usually the only one), else with atomic adds; the sum of both */
	_Alignas(64) struct strthread *_Atomic tx_owner;	/* set once */
	uint64_t tx_own_msgs;		/* tx_owner writes; atomic */
	uint64_t tx_own_bytes;
	uint64_t tx_msgs;		/* others; atomic */
	uint64_t tx_bytes;
	_Alignas(64) uint64_t tx_sent;	/* messages the kernel took */
	uint64_t tx_calls;		/* socket calls that sent */
	uint64_t tx_drops;		/* messages dropped (errors) */
	_Alignas(64) uint64_t rx_msgs;	/* messages sent up */
	uint64_t rx_bytes;
	uint64_t rx_calls;		/* socket calls that received */
	uint64_t rx_drops;		/* received, not sent up (memory) */
	uint64_t rx_overflows;		/* the kernel's drops at the socket
					   (SO_RXQ_OVFL), as last reported */
	char rx_pad[24];		/* nothing else on the line */
};

struct inet_ep {
	struct strkev ke;		/* ke_fd: the socket (lock to change;
					   the data paths read it without:
					   it changes only while no data can
					   flow, in states that allow none) */
	const struct inet_proto *pr;	/* const */
	queue_t *rq, *wq;		/* const while open */
	bool priv;			/* const: opened by uid 0 */
	t_uscalar_t token;		/* const: ACCEPTOR_id */
	strlock_t lock;

	int state;			/* lock: TS_* */
	int family;			/* lock: AF_INET or AF_INET6 */
	struct sockaddr_storage laddr;	/* lock: bound address */
	socklen_t laddrlen;		/* lock: 0 unbound */
	struct sockaddr_storage raddr;	/* lock: peer while connected */
	socklen_t raddrlen;		/* lock: 0 none */
	t_uscalar_t qlen;		/* lock: CONIND_number granted */

	/* options the user negotiated, applied again to a new socket */
	uint64_t opt_set;		/* lock: bit i: table entry i */
	union topt_val *opt_val;	/* lock: their values */
	int ttl, tos;			/* lock: INET_IP values in effect */
	int nodelay;			/* atomic: TCP_NODELAY negotiated on */
	int raw_proto;			/* lock: IP protocol of the socket */

	/* One thread at a time moves data through the socket in each
	 * direction (the data paths take them with trylock); a socket is
	 * replaced (inet_socket_renew/adopt) only with both held, so a
	 * data path never uses a descriptor that is being closed.  Order:
	 * lock, then rx_lock, then tx_lock. */
	strlock_t rx_lock;
	strlock_t tx_lock;

	struct inet_counts cnt;		/* atomic; own lines */
	void *pp;			/* the protocol's own state */
	struct inet_ep *tnext;		/* inet_lock: token list */
};

static inline void inet_lock(struct inet_ep *ep)
{
	strlock(&ep->lock);
}

static inline void inet_unlock(struct inet_ep *ep)
{
	strunlock(&ep->lock);
}

#define INET_COUNT(ep, field, n) \
	__atomic_add_fetch(&(ep)->cnt.field, (n), __ATOMIC_RELAXED)

/* A message of len bytes accepted from above (see struct inet_counts):
 * no locked instruction for the endpoint's usual writer. */
static inline void inet_count_tx(struct inet_ep *ep, uint64_t len)
{
	struct inet_counts *c = &ep->cnt;
	struct strthread *t = str_self();
	struct strthread *o = atomic_load_explicit(&c->tx_owner,
						   memory_order_relaxed);

	if (unlikely(o == NULL)) {
		atomic_compare_exchange_strong(&c->tx_owner, &o, t);
		o = atomic_load_explicit(&c->tx_owner, memory_order_relaxed);
	}
	if (likely(o == t)) {
		__atomic_store_n(&c->tx_own_msgs, __atomic_load_n(
			&c->tx_own_msgs, __ATOMIC_RELAXED) + 1,
			__ATOMIC_RELAXED);
		__atomic_store_n(&c->tx_own_bytes, __atomic_load_n(
			&c->tx_own_bytes, __ATOMIC_RELAXED) + len,
			__ATOMIC_RELAXED);
	} else {
		INET_COUNT(ep, tx_msgs, 1);
		INET_COUNT(ep, tx_bytes, len);
	}
}

/* ---- the common part (inet.c) ---- */

/* The device of a read queue of one of ours. */
const struct inet_proto *inet_proto_of(queue_t *q);
/* Register the six devices (builtin.c). */
void inet_register(void);

/*
 * The socket address of a netbuf (a, len) for ep: 0 with *ss and *sl set,
 * or TBADADDR (wrong length or family, or -- for a protocol's request
 * on a bound endpoint -- another family than the socket's when
 * same_family).
 */
int inet_addr_in(const struct inet_ep *ep, const void *a, t_scalar_t len,
		 bool same_family, struct sockaddr_storage *ss,
		 socklen_t *sl);
/* The same check alone: 0 or TBADADDR. */
int inet_addr_ok(const struct inet_ep *ep, const void *a, t_scalar_t len,
		 bool same_family);

/* How long a batching endpoint must have been idle for a lone message
 * to go at once: STREAMS_INET_IDLE_NS if set, else dflt. */
uint64_t inet_idle_ns(uint64_t dflt);

/* The port field of an IPv4 or IPv6 socket address. */
in_port_t *inet_port(struct sockaddr_storage *ss);

/* Bytes of a socket address as it goes into a netbuf (16 or 28; an
 * IPv4-mapped IPv6 address stays IPv6). */
socklen_t inet_addr_len(const struct sockaddr_storage *ss);

/* Replace ep's socket by a new one of family (lock held, rx_lock and
 * tx_lock NOT held: it takes them), options applied again, kernel event
 * source moved: 0 or an errno. */
int inet_socket_renew(struct inet_ep *ep, int family);

/* Replace ep's socket by fd (an accepted connection; lock held): the old
 * one is closed.  0 or an errno. */
int inet_socket_adopt(struct inet_ep *ep, int fd, int family,
		      uint64_t listener_set);
/* Abort ep's connection in place, keeping its socket (when no new one
 * could be had): connect(AF_UNSPEC), with the socket detached from the
 * I/O thread meanwhile, as a switch of sockets is, so that nothing the
 * I/O thread does on the descriptor overlaps it. */
void inet_socket_unconnect(struct inet_ep *ep);

/* The endpoint of ACCEPTOR_id id among the endpoints of protocol pr:
 * with its lock NOT held; NULL with *tli TBADF, or TPROVMISMATCH for an
 * endpoint of another provider.  The caller must hold a guarantee the
 * endpoint stays open (it is closed only through its own stream, whose
 * close waits for inet_tokens_lock: hold it with inet_token_hold). */
struct inet_ep *inet_acceptor(const struct inet_proto *pr, t_uscalar_t id,
			      int *tli);
void inet_token_hold(void);
void inet_token_rele(void);

/* Send mp up the read side, in order with what went before; answer a
 * request with T_OK_ACK/T_ERROR_ACK that way (tpi.h). */
static inline void inet_up(struct inet_ep *ep, mblk_t *mp)
{
	tpi_up(ep->wq, mp);
}

static inline void inet_ok_ack(struct inet_ep *ep, mblk_t *mp,
			       t_scalar_t prim)
{
	tpi_ok_ack_up(ep->wq, mp, prim);
}

static inline void inet_error_ack(struct inet_ep *ep, mblk_t *mp,
				  t_scalar_t prim, int tli, int unixerr)
{
	tpi_error_ack_up(ep->wq, mp, prim, tli, unixerr);
}

/* TLI error of a failed bind/connect errno. */
int inet_tli_error(int err);

/* Is the stream's read side flow controlled for band? */
static inline bool inet_rfull(struct inet_ep *ep, unsigned char band)
{
	return !bcanputnext(ep->rq, band);
}

/* Is somebody (a sleeping reader, a poller, an epoll or SIGPOLL
 * watcher) waiting for what the socket brings? */
static inline bool inet_waited_for(struct inet_ep *ep)
{
	return __atomic_load_n(&ep->rq->q_stream->sd_kevwant,
			       __ATOMIC_SEQ_CST) > 0;
}

/* Apply the associated options of a request (T_UNITDATA_REQ,
 * T_CONN_REQ, T_OPTDATA_REQ): 0 or TBADOPT. */
int inet_assoc_opts(struct inet_ep *ep, const unsigned char *opt,
		    size_t len);

/* ---- options (inet_opt.c) ---- */
extern const struct topt_table inet_udp_opts, inet_tcp_opts,
	inet_raw_opts;
/* The options of ep's socket applied again after renewal (lock held). */
void inet_opt_reapply(struct inet_ep *ep);
void inet_opt_unlisten(struct inet_ep *ep, int oldfd, uint64_t listener_set);
/* Values for the options the user negotiated: 0 or ENOMEM. */
int inet_opt_init(struct inet_ep *ep);
void inet_opt_fini(struct inet_ep *ep);

/* ---- protocols ---- */
extern const struct inet_ops inet_dg_ops;	/* inet_dg.c: UDP, raw IP */
extern const struct inet_ops inet_tcp_ops;	/* inet_tcp.c */

#endif
