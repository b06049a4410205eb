/*
 * tiloop.c -- the loopback transport providers ticlts (T_CLTS), ticots
 * (T_COTS) and ticotsord (T_COTS_ORD): TPI Revision 2.0.0 endpoints that
 * talk to each other inside the process.
 *
 * How this works
 * --------------
 * Every open is a new endpoint (struct tl_ep, tiloop.h).  Addresses are
 * opaque strings of 1..64 bytes in a space of each provider's own; a
 * T_BIND_REQ with no address gets eight hex digits nobody else holds.
 * This file has the TPI part common to the three providers: open and
 * close, the write put procedure that checks every primitive (tpi_check)
 * and answers the local ones (T_INFO_REQ, T_ADDR_REQ, T_CAPABILITY_REQ,
 * T_BIND_REQ, T_UNBIND_REQ, T_OPTMGMT_REQ), connectionless data
 * (T_UNITDATA_REQ), M_FLUSH, and the service procedures.  Connections
 * and their data are in tiloop_co.c; finding endpoints and handing them
 * messages is tiloop_ns.c, behind the interface of tiloop.h, so that a
 * driver carrying these providers between processes can replace it.
 *
 * The numbers (T_INFO_ACK):
 *
 *		TSDU	ETSDU	CDATA	DDATA	ADDR	TIDU	PROVIDER_flag
 *   ticlts	16384	-2	-2	-2	64	16384	SENDZERO|XPG4_1
 *   ticots	65536	1024	1024	1024	64	65536	SENDZERO|XPG4_1
 *   ticotsord	65536	1024	1024	1024	64	65536	...|ORDRELDATA
 *
 * OPT_size is what the XTI_GENERIC options take (topt_size); at most 16
 * pending connect indications (CONIND_number) are granted.
 *
 * Sending.  A message for another endpoint is delivered with putq on the
 * receiver's read queue when the sender's write queue holds nothing of
 * its band or above and the receiver has room (tl_can_deliver); else it
 * waits on the sender's write queue, so the stream head's writer blocks
 * (or gets EAGAIN) once that queue is full.  The receiver's read service
 * procedure passes messages up as its stream head takes them and then
 * enables the waiting senders' write queues.  A message waits in the
 * band it was written in, whose flow control the stream head's writer
 * obeys (a writer of band 2, or of expedited data in band 0, is held
 * back by what it left waiting); it goes up in band 0, or band 1 for
 * expedited data, which overtakes normal data waiting but no expedited
 * data; high priority messages are never held.  (So data written in a
 * higher band goes ahead of data waiting in a lower one, as on any
 * STREAMS queue; libxti writes normal data in band 0 and expedited data
 * in band 1.)
 *
 * Locking and lifetime -- the rule
 * --------------------------------
 * One mutex per provider, ns->lock, protects every field another
 * endpoint can see or change (the state, the address, the connection
 * links, the pending indications, the waiter lists: all of struct tl_ep
 * below "ns->lock"), and is held around every getq/putq/putbq/flushq on
 * a write queue of the provider and every delivery onto another
 * endpoint's read queue, so that a decision (still connected? room?)
 * and the enqueueing it allows are one step.  It is never held across
 * put, putnext or qreply: those run other modules' code, which may come
 * back into a provider.  What is called under it (putq, getq, bcanput,
 * flushq, qenable, allocb, freemsg) takes only queue locks and runs no
 * module code.  Lock order: ns->lock, then the executive's queue and
 * scheduler locks (inside those calls); no two ns->locks are ever held.
 *
 * An endpoint reaches another only through the namespace or a link, and
 * only with ns->lock held.  Close takes ns->lock, ends every connection
 * and pending connection, unlinks the endpoint from every list and from
 * the namespace, and releases the lock: from then on no thread can find
 * it.  The executive calls close only after it turned the pair's
 * procedures off and waited a grace period (stream.c), so none of the
 * endpoint's own procedures is running or will run, and close frees the
 * endpoint at once.  A queue of another endpoint is used (putq, bcanput,
 * qenable) only under ns->lock while that endpoint is still reachable,
 * i.e. before its close; what was put there is flushed by the executive
 * after close, and the pair is freed only after a further grace period.
 *
 * Only the read service procedure passes messages up (putnext).  Every
 * answer and indication goes through the endpoint's read queue (tl_up),
 * so nothing can overtake what was queued before it -- the M_FLUSH and
 * T_OK_ACK of a T_DISCON_REQ come after any data another thread
 * delivered before the disconnect; the T_OK_ACK of a T_CONN_REQ before
 * the T_CONN_CON.  Only rejections that change nothing (tpi_reject,
 * tpi_fatal), M_IOCNAK and the M_FLUSH turned back up are answered
 * directly.
 *
 * Every open makes a new endpoint, with a minor number from a counter;
 * opening /dev/streams/<provider>/<minor> of an open endpoint (a reopen)
 * gives that endpoint again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/strconf.h>

#include "../drivers/drvutil.h"
#include "tiloop.h"
#include "tpi.h"

#define TL_RHIWAT	32768
#define TL_RLOWAT	8192
#define TL_WHIWAT	32768
#define TL_WLOWAT	8192
#define TL_BUFDEF	65536	/* XTI_RCVBUF/XTI_SNDBUF default */

static const struct topt_def tl_opt_defs[] = {
	TOPT_GENERIC_DEFS(TL_BUFDEF),
};

const struct topt_table tl_opt_table = {
	tl_opt_defs, sizeof(tl_opt_defs) / sizeof(tl_opt_defs[0]),
	&topt_store_ops,
};

static const struct tl_info tl_info_clts = {
	"ticlts", T_CLTS, 16384, T_INVALID, T_INVALID, T_INVALID, 16384,
	SENDZERO | XPG4_1,
};
static const struct tl_info tl_info_cots = {
	"ticots", T_COTS, 65536, 1024, 1024, 1024, 65536,
	SENDZERO | XPG4_1,
};
static const struct tl_info tl_info_cotsord = {
	"ticotsord", T_COTS_ORD, 65536, 1024, 1024, 1024, 65536,
	SENDZERO | XPG4_1 | ORDRELDATA,
};

#define TL_NS(inf, idx) {						\
	.lock = PTHREAD_MUTEX_INITIALIZER, .info = (inf), .index = (idx), \
	.next_seq = 1, .next_addr = 1, .next_token = 1 }

static struct tl_ns tl_ns_clts = TL_NS(&tl_info_clts, 1);
static struct tl_ns tl_ns_cots = TL_NS(&tl_info_cots, 2);
static struct tl_ns tl_ns_cotsord = TL_NS(&tl_info_cotsord, 3);

static unsigned int tl_minor_next = 1;	/* atomic */

static void fill_info(const struct tl_ep *ep, struct T_info_ack *ia)
{
	const struct tl_info *in = ep->info;

	ia->PRIM_type = T_INFO_ACK;
	ia->TSDU_size = in->tsdu;
	ia->ETSDU_size = in->etsdu;
	ia->CDATA_size = in->cdata;
	ia->DDATA_size = in->ddata;
	ia->ADDR_size = TL_ADDR_SIZE;
	ia->OPT_size = (t_scalar_t)topt_size(&tl_opt_table);
	ia->TIDU_size = in->tidu;
	ia->SERV_type = in->serv_type;
	ia->CURRENT_state = ep->state;
	ia->PROVIDER_flag = in->flags;
}

/* ---- local primitives ---- */

static void tl_info_req(struct tl_ep *ep, mblk_t *mp)
{
	mblk_t *bp = tpi_reuse(mp, sizeof(struct T_info_ack), M_PCPROTO);
	struct T_info_ack ia;

	if (bp == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	tl_lock(ep->ns);
	fill_info(ep, &ia);
	tl_unlock(ep->ns);
	memcpy(bp->b_rptr, &ia, sizeof(ia));
	tl_up(ep, bp);
}

static bool connected_state(int st)
{
	return st == TS_DATA_XFER || st == TS_WIND_ORDREL ||
	       st == TS_WREQ_ORDREL;
}

static void tl_addr_req(struct tl_ep *ep, mblk_t *mp)
{
	mblk_t *bp = tpi_proto(TPI_ADDR_ACK_SIZE(TL_ADDR_SIZE), M_PCPROTO);
	bool loc, rem;

	if (bp == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	freemsg(mp);
	tl_lock(ep->ns);
	loc = ep->state != TS_UNBND;
	rem = connected_state(ep->state);
	tpi_addr_ack_fill(bp, ep->addr.b, loc ? ep->addr.len : 0,
			  ep->raddr.b, rem ? ep->raddr.len : 0);
	tl_unlock(ep->ns);
	tl_up(ep, bp);
}

static void tl_capability_req(struct tl_ep *ep, mblk_t *mp)
{
	t_uscalar_t can = TC1_INFO;
	struct T_info_ack ia;
	mblk_t *bp;

	if (ep->info->serv_type != T_CLTS)
		can |= TC1_ACCEPTOR_ID;
	tl_lock(ep->ns);
	fill_info(ep, &ia);
	tl_unlock(ep->ns);
	if ((bp = tpi_capability_ack(mp, can, &ia, ep->token)) == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	tl_up(ep, bp);
}

static void tl_bind_req(struct tl_ep *ep, mblk_t *mp)
{
	struct T_bind_req r;
	struct T_bind_ack a = { T_BIND_ACK, 0, 0, 0 };
	const unsigned char *addr;
	size_t off = sizeof(a);
	mblk_t *bp;
	int err;

	memcpy(&r, mp->b_rptr, sizeof(r));
	addr = tpi_region(mp, r.ADDR_offset, r.ADDR_length);
	if (r.ADDR_length > TL_ADDR_SIZE) {
		tl_error_ack(ep, mp, T_BIND_REQ, TBADADDR, 0);
		return;
	}
	bp = tpi_proto(sizeof(a) + TL_ADDR_SIZE + 4, M_PCPROTO);
	if (bp == NULL) {
		tl_error_ack(ep, mp, T_BIND_REQ, TSYSERR, ENOMEM);
		return;
	}
	tl_lock(ep->ns);
	if (ep->state != TS_UNBND) {
		tl_unlock(ep->ns);
		freemsg(bp);
		tl_error_ack(ep, mp, T_BIND_REQ, TOUTSTATE, 0);
		return;
	}
	if ((err = tl_ns_bind(ep, addr, (size_t)r.ADDR_length)) != 0) {
		tl_unlock(ep->ns);
		freemsg(bp);
		tl_error_ack(ep, mp, T_BIND_REQ, err, 0);
		return;
	}
	ep->state = TS_IDLE;
	ep->qlen = 0;
	if (ep->info->serv_type != T_CLTS)
		ep->qlen = r.CONIND_number > TL_MAXQLEN ? TL_MAXQLEN
							: r.CONIND_number;
	a.CONIND_number = ep->qlen;
	a.ADDR_length = (t_scalar_t)ep->addr.len;
	a.ADDR_offset = tpi_put_bytes(bp, &off, ep->addr.b, ep->addr.len);
	tl_unlock(ep->ns);
	memcpy(bp->b_rptr, &a, sizeof(a));
	freemsg(mp);
	tl_up(ep, bp);
}

static void tl_unbind_req(struct tl_ep *ep, mblk_t *mp)
{
	mblk_t *fl = tpi_proto(1, M_FLUSH);

	if (fl == NULL) {
		tl_error_ack(ep, mp, T_UNBIND_REQ, TSYSERR, ENOMEM);
		return;
	}
	fl->b_rptr[0] = FLUSHRW;
	tl_lock(ep->ns);
	if (ep->state != TS_IDLE) {
		tl_unlock(ep->ns);
		freemsg(fl);
		tl_error_ack(ep, mp, T_UNBIND_REQ, TOUTSTATE, 0);
		return;
	}
	tl_ns_unbind(ep);
	ep->state = TS_UNBND;
	ep->qlen = 0;
	/* nothing sent or received while bound survives the unbind */
	flushq(ep->wq, FLUSHALL);
	flushq(ep->rq, FLUSHDATA);
	tl_up(ep, fl);
	tl_unlock(ep->ns);
	/* after the M_FLUSH: only we queue high priority messages here */
	tl_ok_ack(ep, mp, T_UNBIND_REQ);
}

static void tl_optmgmt_req(struct tl_ep *ep, mblk_t *mp)
{
	struct T_optmgmt_req r;
	mblk_t *out = NULL, *bp;
	t_scalar_t result = 0;
	int err, uerr = 0;

	memcpy(&r, mp->b_rptr, sizeof(r));
	tl_lock(ep->ns);
	err = topt_mgmt(&tl_opt_table, &ep->opts, r.MGMT_flags,
			tpi_region(mp, r.OPT_offset, r.OPT_length),
			(size_t)r.OPT_length, ep->priv, &out, &result, &uerr);
	tl_unlock(ep->ns);
	if (err != 0) {
		tl_error_ack(ep, mp, T_OPTMGMT_REQ, err, uerr);
		return;
	}
	if ((bp = tpi_optmgmt_ack(out, result)) == NULL) {
		tl_error_ack(ep, mp, T_OPTMGMT_REQ, TSYSERR, ENOMEM);
		return;
	}
	freemsg(mp);
	tl_up(ep, bp);
}

/* ---- connectionless data ---- */

/* Answer the T_UNITDATA_REQ req (consumed) with T_UDERROR_IND. */
static void tl_uderror(struct tl_ep *ep, mblk_t *req, t_scalar_t etype)
{
	struct T_unitdata_req r;
	struct T_uderror_ind u = { T_UDERROR_IND, 0, 0, 0, 0, etype };
	const unsigned char *dest, *opt;
	size_t dl, ol, off = sizeof(u);
	mblk_t *bp;

	/* as UDP's: a sender that leaves its errors unread loses those past
	 * its read queue's high water mark (nothing holds it back: each
	 * failed datagram is done with at once) */
	if (!bcanput(ep->rq, 0)) {
		freemsg(req);
		return;
	}
	memcpy(&r, req->b_rptr, sizeof(r));
	dest = tpi_region(req, r.DEST_offset, r.DEST_length);
	opt = tpi_region(req, r.OPT_offset, r.OPT_length);
	dl = (size_t)r.DEST_length;
	ol = (size_t)r.OPT_length;
	bp = tpi_proto(sizeof(u) + dl + ol + 8, M_PROTO);
	if (bp != NULL) {
		u.DEST_length = (t_scalar_t)dl;
		u.DEST_offset = tpi_put_bytes(bp, &off, dest, dl);
		u.OPT_length = (t_scalar_t)ol;
		u.OPT_offset = tpi_put_bytes(bp, &off, opt, ol);
		bp->b_wptr = bp->b_rptr + off;
		memcpy(bp->b_rptr, &u, sizeof(u));
		tl_up(ep, bp);
	}
	freemsg(req);
}

/* The destination of a T_UNITDATA_REQ, lock held. */
static struct tl_ep *ud_dest(struct tl_ep *ep, const mblk_t *req)
{
	struct T_unitdata_req r;

	memcpy(&r, req->b_rptr, sizeof(r));
	return tl_ns_lookup(ep->ns, tpi_region(req, r.DEST_offset,
					       r.DEST_length),
			    (size_t)r.DEST_length);
}

/*
 * T_UNITDATA_REQ.  Well-formed datagrams that cannot be sent are
 * answered with T_UDERROR_IND, ERROR_type an errno: EINVAL (DEST_length
 * 0 or over ADDR_size), EMSGSIZE (over TSDU_size), ENOPROTOOPT (bad
 * options), ECONNREFUSED (nobody bound at DEST).  The indication is
 * built here with the sender's address; a datagram that has to wait for
 * flow control waits on the write queue behind its request block, which
 * keeps DEST for tl_cl_push.
 */
static void tl_unitdata_req(struct tl_ep *ep, mblk_t *mp)
{
	struct T_unitdata_req r;
	struct T_unitdata_ind u = { T_UNITDATA_IND, 0, 0, 0, 0 };
	const unsigned char *opt;
	struct tl_ep *dest;
	size_t off = sizeof(u), dlen = tpi_datalen(mp);
	t_scalar_t etype = 0;
	mblk_t *ind;

	memcpy(&r, mp->b_rptr, sizeof(r));
	opt = tpi_region(mp, r.OPT_offset, r.OPT_length);
	if (!tl_data_only(mp)) {
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	ind = tpi_proto(sizeof(u) + TL_ADDR_SIZE + (size_t)r.OPT_length + 8,
		       M_PROTO);
	if (ind == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	tl_lock(ep->ns);
	if (ep->state != TS_IDLE) {
		tl_unlock(ep->ns);
		freemsg(ind);
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	dest = NULL;
	if (r.DEST_length == 0 || r.DEST_length > TL_ADDR_SIZE)
		etype = EINVAL;
	else if (dlen > (size_t)ep->info->tsdu)
		etype = EMSGSIZE;
	else if (r.OPT_length > 0 &&
		 topt_assoc(&tl_opt_table, &ep->opts, opt,
			    (size_t)r.OPT_length, ep->priv) != 0)
		etype = ENOPROTOOPT;
	else if ((dest = ud_dest(ep, mp)) == NULL)
		etype = ECONNREFUSED;
	if (etype != 0) {
		tl_unlock(ep->ns);
		freemsg(ind);
		tl_uderror(ep, mp, etype);
		return;
	}
	u.SRC_length = (t_scalar_t)ep->addr.len;
	u.SRC_offset = tpi_put_bytes(ind, &off, ep->addr.b, ep->addr.len);
	u.OPT_length = r.OPT_length;
	u.OPT_offset = tpi_put_bytes(ind, &off, opt, (size_t)r.OPT_length);
	memcpy(ind->b_rptr, &u, sizeof(u));
	ind->b_cont = mp->b_cont;
	mp->b_cont = NULL;
	if (__atomic_load_n(&ep->wq->q_first, __ATOMIC_RELAXED) == NULL &&
	    tl_can_deliver(ep, dest, 0)) {
		freeb(mp);
		tl_deliver(dest, ind);
	} else {
		/* held as an ordinary message, whatever it came as: one sent
		 * M_PCPROTO would have putbq re-enable this queue for as long
		 * as the receiver stays full (and overtake those held before) */
		if (mp->b_datap->db_type != M_PROTO && mp->b_datap->db_ref > 1) {
			mblk_t *nb = copyb(mp);

			freeb(mp);
			mp = nb;
		}
		if (mp == NULL) {
			freemsg(ind);
		} else {
			/* (in the band it was written in, whose writers
			 * the stream head holds back by it) */
			mp->b_datap->db_type = M_PROTO;
			mp->b_cont = ind;
			if (!putq(ep->wq, mp))
				freemsg(mp);
		}
	}
	tl_unlock(ep->ns);
}

/* Write service of ticlts, lock held: each waiting datagram is a request
 * block (DEST) followed by its indication. */
void tl_cl_push(struct tl_ep *ep)
{
	struct tl_ep *dest;
	mblk_t *mp, *ind;

	while ((mp = getq(ep->wq)) != NULL) {
		if ((dest = ud_dest(ep, mp)) == NULL) {
			/* the receiver went away while this waited */
			freemsg(mp->b_cont);
			mp->b_cont = NULL;
			tl_uderror(ep, mp, ECONNREFUSED);
			continue;
		}
		if (!tl_can_deliver(ep, dest, 0)) {
			putbq(ep->wq, mp);
			return;
		}
		ind = mp->b_cont;
		mp->b_cont = NULL;
		freeb(mp);
		tl_deliver(dest, ind);
	}
}

/* ---- the write side ---- */

static void tl_flush(struct tl_ep *ep, mblk_t *mp)
{
	unsigned char how;

	if (MBLKL(mp) < 1) {
		freemsg(mp);
		return;
	}
	how = mp->b_rptr[0];
	tl_lock(ep->ns);
	if (how & FLUSHW) {
		if ((how & FLUSHBAND) && MBLKL(mp) >= 2)
			flushband(ep->wq, mp->b_rptr[1], FLUSHDATA);
		else
			flushq(ep->wq, FLUSHDATA);
		/* a release waiting behind flushed data may go now */
		if (ep->ordrel != NULL)
			qenable(ep->wq);
	}
	if (how & FLUSHR) {
		if ((how & FLUSHBAND) && MBLKL(mp) >= 2)
			flushband(ep->rq, mp->b_rptr[1], FLUSHDATA);
		else
			flushq(ep->rq, FLUSHDATA);
	}
	tl_unlock(ep->ns);
	if (how & FLUSHR) {
		mp->b_rptr[0] &= ~FLUSHW;
		qreply(ep->wq, mp);
	} else {
		freemsg(mp);
	}
}

static void tl_proto_req(struct tl_ep *ep, mblk_t *mp)
{
	t_scalar_t prim;
	int err, uerr;
	bool cl = ep->info->serv_type == T_CLTS;

	if ((err = tpi_check(mp, &prim, &uerr)) != 0) {
		tpi_reject(ep->wq, mp, prim, err, uerr);
		return;
	}
	switch (prim) {
	case T_INFO_REQ:
		tl_info_req(ep, mp);
		break;
	case T_ADDR_REQ:
		tl_addr_req(ep, mp);
		break;
	case T_CAPABILITY_REQ:
		tl_capability_req(ep, mp);
		break;
	case T_BIND_REQ:
		tl_bind_req(ep, mp);
		break;
	case T_UNBIND_REQ:
		tl_unbind_req(ep, mp);
		break;
	case T_OPTMGMT_REQ:
		tl_optmgmt_req(ep, mp);
		break;
	case T_UNITDATA_REQ:
		if (cl)
			tl_unitdata_req(ep, mp);
		else
			tpi_fatal(ep->wq, mp, EPROTO);
		break;
	case T_CONN_REQ:
	case T_CONN_RES:
	case T_DISCON_REQ:
		if (cl)
			tl_error_ack(ep, mp, prim, TNOTSUPPORT, 0);
		else if (prim == T_CONN_REQ)
			tl_co_conn_req(ep, mp);
		else if (prim == T_CONN_RES)
			tl_co_conn_res(ep, mp);
		else
			tl_co_discon_req(ep, mp);
		break;
	case T_DATA_REQ:
	case T_EXDATA_REQ:
	case T_OPTDATA_REQ:
		if (cl)
			tpi_fatal(ep->wq, mp, EPROTO);
		else
			tl_co_data(ep, mp, prim);
		break;
	case T_ORDREL_REQ:
		if (ep->info->serv_type != T_COTS_ORD)
			tpi_fatal(ep->wq, mp, EPROTO);
		else
			tl_co_ordrel_req(ep, mp);
		break;
	default:
		/* an indication or acknowledgement sent downstream */
		tpi_reject(ep->wq, mp, prim, TNOTSUPPORT, 0);
		break;
	}
}

static int tl_wput(queue_t *q, mblk_t *mp)
{
	struct tl_ep *ep = q->q_ptr;

	switch (mp->b_datap->db_type) {
	case M_DATA:
		if (ep->info->serv_type == T_CLTS)
			tpi_fatal(q, mp, EPROTO);
		else
			tl_co_data(ep, mp, -1);
		break;
	case M_PROTO:
	case M_PCPROTO:
		tl_proto_req(ep, mp);
		break;
	case M_FLUSH:
		tl_flush(ep, mp);
		break;
	case M_IOCTL:
		drv_nak(q, mp, EINVAL);
		break;
	default:
		freemsg(mp);
		break;
	}
	return 0;
}

static int tl_wsrv(queue_t *q)
{
	struct tl_ep *ep = q->q_ptr;

	tl_lock(ep->ns);
	if (ep->info->serv_type == T_CLTS)
		tl_cl_push(ep);
	else
		tl_co_push(ep);
	tl_unlock(ep->ns);
	return 0;
}

/* ---- the read side ---- */

static int tl_rput(queue_t *q, mblk_t *mp)
{
	/* nothing is below a driver: put by nobody but ourselves */
	putnext(q, mp);
	return 0;
}

/* Pass up what the stream head takes, then let waiting senders go. */
static int tl_rsrv(queue_t *q)
{
	struct tl_ep *ep = q->q_ptr;
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(q, mp->b_band)) {
			putbq(q, mp);
			break;
		}
		putnext(q, mp);
	}
	tl_lock(ep->ns);
	tl_wake_senders(ep);
	tl_unlock(ep->ns);
	return 0;
}

/* ---- open and close ---- */

static int tl_open(struct tl_ns *ns, queue_t *q, dev_t *devp, cred_t *cr)
{
	struct tl_ep *ep;
	unsigned int m;

	if (q->q_ptr != NULL)
		return 0;		/* a reopen of the same endpoint */
	if ((ep = calloc(1, sizeof(*ep))) == NULL)
		return ENOMEM;
	if (topt_store_init(&ep->opts, &tl_opt_table) != 0) {
		free(ep);
		return ENOMEM;
	}
	/* make band 1 (expedited data) now, so putq of it cannot fail */
	if (strqset(q, QHIWAT, 1, TL_RHIWAT) != 0 ||
	    strqset(q, QLOWAT, 1, TL_RLOWAT) != 0 ||
	    strqset(WR(q), QHIWAT, 1, TL_WHIWAT) != 0 ||
	    strqset(WR(q), QLOWAT, 1, TL_WLOWAT) != 0) {
		topt_store_fini(&ep->opts);
		free(ep);
		return ENOMEM;
	}
	ep->ns = ns;
	ep->info = ns->info;
	ep->rq = q;
	ep->wq = WR(q);
	ep->priv = cr != NULL && cr->cr_uid == 0;
	ep->state = TS_UNBND;
	tl_lock(ns);
	tl_ns_attach(ns, ep);
	tl_unlock(ns);
	q->q_ptr = WR(q)->q_ptr = ep;
	m = __atomic_fetch_add(&tl_minor_next, 1, __ATOMIC_RELAXED);
	*devp = makedevice(getmajor(*devp), m & 0xfffff);
	return 0;
}

static int tl_open_clts(queue_t *q, dev_t *devp, int oflag, int sflag,
			cred_t *cr)
{
	return tl_open(&tl_ns_clts, q, devp, cr);
}

static int tl_open_cots(queue_t *q, dev_t *devp, int oflag, int sflag,
			cred_t *cr)
{
	return tl_open(&tl_ns_cots, q, devp, cr);
}

static int tl_open_cotsord(queue_t *q, dev_t *devp, int oflag, int sflag,
			   cred_t *cr)
{
	return tl_open(&tl_ns_cotsord, q, devp, cr);
}

static int tl_close(queue_t *q, int oflag, cred_t *cr)
{
	struct tl_ep *ep = q->q_ptr;
	struct tl_ns *ns = ep->ns;

	tl_lock(ns);
	if (ep->info->serv_type != T_CLTS)
		tl_co_close(ep);
	tl_wake_senders(ep);
	tl_unwait(ep);
	tl_ns_detach(ep);
	tl_unlock(ns);
	q->q_ptr = WR(q)->q_ptr = NULL;
	topt_store_fini(&ep->opts);
	freemsg(ep->discon);
	freemsg(ep->ordrel);
	free(ep);
	return 0;
}

#define TL_MINFO(id, nm, maxpsz)					\
	{ (id), (nm), 0, (maxpsz), TL_RHIWAT, TL_RLOWAT }

static struct module_info tl_rminfo[3] = {
	TL_MINFO(2101, "ticlts", INFPSZ),
	TL_MINFO(2102, "ticots", INFPSZ),
	TL_MINFO(2103, "ticotsord", INFPSZ),
};
static struct module_info tl_wminfo[3] = {
	{ 2101, "ticlts", 0, INFPSZ, TL_WHIWAT, TL_WLOWAT },
	{ 2102, "ticots", 0, 65536, TL_WHIWAT, TL_WLOWAT },
	{ 2103, "ticotsord", 0, 65536, TL_WHIWAT, TL_WLOWAT },
};

static struct qinit tl_rinit[3] = {
	{ tl_rput, tl_rsrv, tl_open_clts, tl_close, NULL, &tl_rminfo[0], NULL },
	{ tl_rput, tl_rsrv, tl_open_cots, tl_close, NULL, &tl_rminfo[1], NULL },
	{ tl_rput, tl_rsrv, tl_open_cotsord, tl_close, NULL, &tl_rminfo[2], NULL },
};
static struct qinit tl_winit[3] = {
	{ tl_wput, tl_wsrv, NULL, NULL, NULL, &tl_wminfo[0], NULL },
	{ tl_wput, tl_wsrv, NULL, NULL, NULL, &tl_wminfo[1], NULL },
	{ tl_wput, tl_wsrv, NULL, NULL, NULL, &tl_wminfo[2], NULL },
};
static struct streamtab tl_tab[3] = {
	{ &tl_rinit[0], &tl_winit[0], NULL, NULL },
	{ &tl_rinit[1], &tl_winit[1], NULL, NULL },
	{ &tl_rinit[2], &tl_winit[2], NULL, NULL },
};

struct cdevsw ticlts_cdev = {
	.d_name = "ticlts", .d_str = &tl_tab[0], .d_flag = D_MP,
};
struct cdevsw ticots_cdev = {
	.d_name = "ticots", .d_str = &tl_tab[1], .d_flag = D_MP,
};
struct cdevsw ticotsord_cdev = {
	.d_name = "ticotsord", .d_str = &tl_tab[2], .d_flag = D_MP,
};
