/*
 * tiloop.h -- private to the loopback transport providers (tiloop*.c).
 *
 * The providers are two parts behind the interface below:
 *
 *   TPI part (tiloop.c, tiloop_co.c): open/close, the TPI state machine,
 *	parsing every primitive, building every answer, and what happens
 *	to an endpoint when something arrives for it (tl_rx_*: a peer's
 *	T_ORDREL_IND moves it to TS_WREQ_ORDREL, a T_DISCON_IND to TS_IDLE).
 *
 *   Namespace and delivery part (tiloop_ns.c): the address space of one
 *	provider (which endpoint is bound to which address, unique
 *	addresses for T_BIND_REQ with no address), ACCEPTOR_id tokens,
 *	and handing a message to another endpoint with flow control
 *	(tl_can_deliver / tl_deliver, and the list of senders waiting for
 *	a full receiver, woken by tl_wake_senders).
 *
 * The TPI part never touches another endpoint's queues itself: it finds
 * endpoints through tl_ns_* and reaches them through tl_deliver.  A driver
 * that carries the same providers between processes (shared memory) can
 * keep the TPI part and replace tiloop_ns.c.
 *
 * Everything shared between endpoints is protected by the provider's
 * namespace lock, ns->lock (see tiloop.c for the whole rule).
 */
#ifndef STREAMS_TILOOP_H
#define STREAMS_TILOOP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stream.h>
#include <sys/tihdr.h>

#include "topt.h"
#include "tpi.h"

#define TL_ADDR_SIZE	64	/* ADDR_size: addresses are 1..64 bytes */
#define TL_MAXQLEN	16	/* largest CONIND_number granted */
#define TL_HASH		64	/* buckets of the bind table */
#define TL_SEQ_MAX	0x3fffffff

/* What the T_INFO_ACK says; constant per provider. */
struct tl_info {
	const char *name;
	t_scalar_t serv_type;		/* T_CLTS, T_COTS, T_COTS_ORD */
	t_scalar_t tsdu, etsdu, cdata, ddata, tidu;
	t_scalar_t flags;		/* PROVIDER_flag */
};

struct tl_addr {
	unsigned int len;		/* 0: none */
	unsigned char b[TL_ADDR_SIZE];
};

struct tl_ep;

/* One provider's namespace (statically initialised, tiloop.c). */
struct tl_ns {
	pthread_mutex_t lock;
	const struct tl_info *info;	/* const */
	unsigned int index;		/* const: 1..3, low bits of tokens */
	struct tl_ep *bound[TL_HASH];	/* lock: endpoints owning an address */
	struct tl_ep *all;		/* lock: every open endpoint */
	t_scalar_t next_seq;		/* lock: SEQ_number of T_CONN_IND */
	unsigned long next_addr;	/* lock: for unique addresses */
	t_uscalar_t next_token;		/* lock: ACCEPTOR_id counter */
};

/* A T_CONN_IND the listener has not answered yet. */
struct tl_pend {
	struct tl_pend *next;		/* lock: listener's list, oldest first */
	struct tl_ep *caller;		/* lock */
	struct tl_ep *listener;		/* lock */
	t_scalar_t seq;			/* const */
	mblk_t *discon;			/* the listener's T_DISCON_IND if the
					   caller withdraws; allocated early */
};

struct tl_ep {
	struct tl_ns *ns;		/* const */
	const struct tl_info *info;	/* const */
	queue_t *rq, *wq;		/* const while open */
	bool priv;			/* const: opened by uid 0 */
	t_uscalar_t token;		/* const after open: ACCEPTOR_id */

	/* everything below: ns->lock */
	struct topt_store opts;		/* option values */
	int state;			/* TS_* */
	struct tl_addr addr;		/* local address (an acceptor that was
					   unbound shares its listener's) */
	bool owner;			/* addr is in the bind table */
	struct tl_ep *hnext;		/* bind table chain */
	struct tl_ep *anext;		/* ns->all chain */
	t_uscalar_t qlen;		/* CONIND_number granted */
	struct tl_pend *pend;		/* listener: pending indications */
	unsigned int npend;
	struct tl_pend *conn;		/* caller in TS_WCON_CREQ: its entry */
	struct tl_ep *peer;		/* connected peer, kept until both
					   orderly releases are delivered */
	struct tl_addr raddr;		/* remote address while connected */
	mblk_t *ordrel;			/* our T_ORDREL_IND, waiting for our
					   write queue to drain */
	bool ordrel_sent;		/* our T_ORDREL_IND was delivered */
	size_t tsdu, etsdu;		/* bytes of the (E)TSDU being sent */
	mblk_t *discon;			/* our T_DISCON_IND, allocated early */
	struct tl_ep *wait_on;		/* receiver we wait for (flow) */
	struct tl_ep *wait_next;	/* on wait_on->waiters */
	struct tl_ep *waiters;		/* senders waiting for our read side */
};

/* ---- namespace and delivery (tiloop_ns.c); all with ns->lock held ---- */

static inline void tl_lock(struct tl_ns *ns) { pthread_mutex_lock(&ns->lock); }
static inline void tl_unlock(struct tl_ns *ns) { pthread_mutex_unlock(&ns->lock); }

/* An endpoint opens (gets its token) and closes. */
void tl_ns_attach(struct tl_ns *ns, struct tl_ep *ep);
void tl_ns_detach(struct tl_ep *ep);

/* Bind ep to (a, len), or to a new unique address when len is 0:
 * 0, or TADDRBUSY.  ep->addr holds the address bound. */
int tl_ns_bind(struct tl_ep *ep, const unsigned char *a, size_t len);
void tl_ns_unbind(struct tl_ep *ep);

/* The endpoint bound to (a, len), or NULL. */
struct tl_ep *tl_ns_lookup(struct tl_ns *ns, const unsigned char *a,
			   size_t len);

/* The endpoint of ACCEPTOR_id id; NULL with *tli TBADF (no such
 * endpoint) or TPROVMISMATCH (an endpoint of another provider). */
struct tl_ep *tl_ns_acceptor(struct tl_ns *ns, t_uscalar_t id, int *tli);

/* May from hand to a message of band now?  If not, from is put on
 * to's list of waiting senders, and its write queue is enabled when
 * to's read side drains (tl_wake_senders). */
bool tl_can_deliver(struct tl_ep *from, struct tl_ep *to, unsigned char band);
/* Has to room for a message of band 0 now (no waiting for it)? */
bool tl_has_room(struct tl_ep *to);

/* Queue mp on to's read side, in order (no flow control: the caller
 * asked tl_can_deliver when it matters). */
void tl_deliver(struct tl_ep *to, mblk_t *mp);

/* to's read side made room: enable every waiting sender. */
void tl_wake_senders(struct tl_ep *to);

/* ep stops waiting on anybody (it closes). */
void tl_unwait(struct tl_ep *ep);

/* ---- TPI part: tiloop.c ---- */

/* Send mp up ep's read side, in order with everything sent so far;
 * answer a request with T_OK_ACK/T_ERROR_ACK that way (tpi.h). */
static inline void tl_up(struct tl_ep *ep, mblk_t *mp)
{
	tpi_up(ep->wq, mp);
}

static inline void tl_ok_ack(struct tl_ep *ep, mblk_t *mp, t_scalar_t prim)
{
	tpi_ok_ack_up(ep->wq, mp, prim);
}

static inline void tl_error_ack(struct tl_ep *ep, mblk_t *mp, t_scalar_t prim,
				int tli, int unixerr)
{
	tpi_error_ack_up(ep->wq, mp, prim, tli, unixerr);
}

extern const struct topt_table tl_opt_table;

/* Are all blocks after the first M_DATA?  (Data of a primitive.) */
static inline bool tl_data_only(const mblk_t *mp)
{
	for (mp = mp->b_cont; mp != NULL; mp = mp->b_cont)
		if (mp->b_datap->db_type != M_DATA)
			return false;
	return true;
}

/* ---- TPI part: connections and data (tiloop_co.c) ---- */

void tl_co_conn_req(struct tl_ep *ep, mblk_t *mp);
void tl_co_conn_res(struct tl_ep *ep, mblk_t *mp);
void tl_co_discon_req(struct tl_ep *ep, mblk_t *mp);
/* T_DATA_REQ, T_EXDATA_REQ, T_OPTDATA_REQ and plain M_DATA */
void tl_co_data(struct tl_ep *ep, mblk_t *mp, t_scalar_t prim);
void tl_co_ordrel_req(struct tl_ep *ep, mblk_t *mp);
/* The write service procedure's work, lock held: send what flow
 * control allows, then a waiting T_ORDREL_IND. */
void tl_co_push(struct tl_ep *ep);
/* ep closes, lock held: its connections and pending ones end. */
void tl_co_close(struct tl_ep *ep);

/* ---- connectionless (tiloop.c) ---- */
void tl_cl_push(struct tl_ep *ep);

#endif
