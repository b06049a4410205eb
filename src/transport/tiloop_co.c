/*
 * tiloop_co.c -- connections of the loopback providers ticots and
 * ticotsord: setup, data, orderly and abortive release (TPI 2.0.0).
 *
 * How this works
 * --------------
 * Setup.  T_CONN_REQ looks the destination up in the namespace.  If an
 * endpoint listens there (bound with CONIND_number > 0, in TS_IDLE or
 * TS_WRES_CIND, fewer pending indications than granted, room in its read
 * side: one that does not read is not sent more) a struct
 * tl_pend records the attempt on the listener's list, the caller gets
 * T_OK_ACK and the listener T_CONN_IND with the caller's address, its
 * options and connect data, and a SEQ_number.  Otherwise the caller gets
 * T_OK_ACK then T_DISCON_IND (ECONNREFUSED).  T_CONN_RES links the
 * caller with the acceptor (the listener itself for ACCEPTOR_id 0, else
 * the endpoint holding that ACCEPTOR_id) and sends the caller
 * T_CONN_CON; T_DISCON_REQ with the SEQ_number refuses.  A caller that
 * withdraws or closes, and a listener that closes, end the pending
 * attempts with T_DISCON_IND on the other side.
 *
 * Data.  T_DATA_REQ, T_EXDATA_REQ, T_OPTDATA_REQ and plain M_DATA (taken
 * as T_DATA_REQ with MORE_flag 0) become the matching indication in the
 * request's own block and go to the peer (tl_send: at once, or after
 * what waits on our write queue).  TSDU and ETSDU sizes are counted over
 * MORE fragments; a TSDU over the limit is a fatal EPROTO, as any data
 * request out of state -- except in TS_IDLE, where a request that raced
 * with a disconnect is dropped silently (TPI).
 *
 * Orderly release (ticotsord).  T_ORDREL_REQ turns into our T_ORDREL_IND
 * (with any data after it: ORDRELDATA) and is held in ep->ordrel until
 * our write queue is empty, so it follows all our data.  When it is
 * delivered the peer moves to TS_WREQ_ORDREL (or from TS_WIND_ORDREL to
 * TS_IDLE).  An endpoint that becomes TS_IDLE while data of its own
 * still waits (it sent T_ORDREL_REQ in TS_WREQ_ORDREL, or both sides
 * released at once) delivers that data and its release at once, past
 * flow control (force(): bounded by its write queue), so a TS_IDLE
 * endpoint never has anything left of an old connection.  The link
 * between the two ends is dropped when both releases are delivered.
 *
 * Abortive release.  T_DISCON_REQ (and close) discards what our write
 * queue and the peer's hold for each other, sends the peer T_DISCON_IND
 * (after whatever it already had), and sends ourselves M_FLUSH (FLUSHRW)
 * and T_OK_ACK.  A closing endpoint first delivers data and release it
 * already asked for with T_ORDREL_REQ; other data it still held is
 * dropped.  T_ORDREL_REQ in TS_IDLE is dropped like data (a release
 * that raced with a disconnect), not answered with EPROTO.  A listener
 * (CONIND_number > 0) does not call out: T_CONN_REQ gets TOUTSTATE.
 * T_CONN_RES onto the listener itself while it has other indications
 * pending gets TINDOUT.
 *
 * DISCON_reason: ECONNREFUSED (nobody listening, queue or read side
 * full, refused by the listener, listener closed), ECONNABORTED (at a
 * listener: the caller withdrew or closed), ECONNRESET (the peer
 * disconnected or closed).  SEQ_number is -1 except at a listener.
 *
 * Everything below runs with ns->lock held where tiloop.c's rule says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tiloop.h"
#include "tpi.h"

/* ---- helpers, lock held ---- */

/* Detach and return the data blocks after the first block. */
static mblk_t *take_data(mblk_t *mp)
{
	mblk_t *d = mp->b_cont;

	mp->b_cont = NULL;
	return d;
}

static mblk_t *discon_alloc(void)
{
	return tpi_proto(sizeof(struct T_discon_ind), M_PROTO);
}

/* Fill the T_DISCON_IND block bp, chain data, deliver to to. */
static void discon_send(struct tl_ep *to, mblk_t *bp, t_scalar_t reason,
			t_scalar_t seq, mblk_t *data)
{
	struct T_discon_ind d = { T_DISCON_IND, reason, seq };

	if (bp == NULL && (bp = discon_alloc()) == NULL) {
		freemsg(data);	/* no memory at all: nothing to tell with */
		return;
	}
	memcpy(bp->b_rptr, &d, sizeof(d));
	bp->b_wptr = bp->b_rptr + sizeof(d);
	bp->b_cont = data;
	tl_deliver(to, bp);
}

/* to's connection (or attempt) ended: its own T_DISCON_IND. */
static void discon_to(struct tl_ep *to, t_scalar_t reason, mblk_t *data)
{
	mblk_t *bp = to->discon;

	to->discon = NULL;
	discon_send(to, bp, reason, -1, data);
}

static t_scalar_t next_seq(struct tl_ns *ns)
{
	t_scalar_t s = ns->next_seq;

	ns->next_seq = s >= TL_SEQ_MAX ? 1 : s + 1;
	return s;
}

static void pend_unlink(struct tl_pend *p)
{
	struct tl_ep *l = p->listener;
	struct tl_pend **pp;

	for (pp = &l->pend; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	l->npend--;
	if (l->state == TS_WRES_CIND && l->npend == 0)
		l->state = TS_IDLE;
	p->caller->conn = NULL;
}

static void pend_free(struct tl_pend *p)
{
	freemsg(p->discon);
	free(p);
}

static struct tl_pend *pend_find(struct tl_ep *l, t_scalar_t seq)
{
	struct tl_pend *p;

	for (p = l->pend; p != NULL; p = p->next)
		if (p->seq == seq)
			return p;
	return NULL;
}

static void link_eps(struct tl_ep *a, struct tl_ep *b)
{
	a->peer = b;
	b->peer = a;
	a->state = b->state = TS_DATA_XFER;
	a->ordrel_sent = b->ordrel_sent = false;
	a->tsdu = a->etsdu = b->tsdu = b->etsdu = 0;
	a->raddr = b->addr;
	b->raddr = a->addr;
}

static void unlink_eps(struct tl_ep *a)
{
	struct tl_ep *b = a->peer;

	if (b != NULL)
		b->peer = NULL;
	a->peer = NULL;
}

/* Discard what ep still has to send on its connection. */
static void drop_out(struct tl_ep *ep)
{
	flushq(ep->wq, FLUSHALL);
	freemsg(ep->ordrel);
	ep->ordrel = NULL;
	ep->tsdu = ep->etsdu = 0;
}

/* The band a data indication goes up in: 1 for expedited data.  (On
 * the sender's write queue a message waits in the band it was written
 * in, the band whose flow control the stream head's writer obeyed.) */
static unsigned char up_band(const mblk_t *mp)
{
	t_scalar_t v[2];

	if (mp->b_datap->db_type != M_PROTO || MBLKL(mp) < sizeof(v))
		return 0;
	memcpy(v, mp->b_rptr, sizeof(v));
	return v[0] == T_EXDATA_IND ||
	       (v[0] == T_OPTDATA_IND && (v[1] & T_ODF_EX)) ? 1 : 0;
}

/* Does ep's write queue hold nothing that data going up in band must
 * stay behind (lock held)? */
static bool wq_clear(struct tl_ep *ep, unsigned char band)
{
	mblk_t *mp = __atomic_load_n(&ep->wq->q_first, __ATOMIC_RELAXED);

	if (band == 0 || mp == NULL)
		return mp == NULL;
	for (; mp != NULL; mp = mp->b_next)
		if (up_band(mp) >= band)
			return false;
	return true;
}

/* Pass held mp to to, in the band it goes up in. */
static void deliver_held(struct tl_ep *to, mblk_t *mp)
{
	mp->b_band = up_band(mp);
	tl_deliver(to, mp);
}

/* ---- orderly release ---- */

static void force(struct tl_ep *ep);

/* from's T_ORDREL_IND reached to. */
static void rx_ordrel(struct tl_ep *to, struct tl_ep *from)
{
	from->ordrel_sent = true;
	if (to->state == TS_DATA_XFER) {
		to->state = TS_WREQ_ORDREL;
	} else if (to->state == TS_WIND_ORDREL) {
		to->state = TS_IDLE;
		if (!to->ordrel_sent)
			force(to);	/* both released at once */
	}
	if (from->peer == to && from->ordrel_sent && to->ordrel_sent)
		unlink_eps(from);
}

static void send_ordrel(struct tl_ep *ep)
{
	struct tl_ep *peer = ep->peer;
	mblk_t *mp = ep->ordrel;

	ep->ordrel = NULL;
	tl_deliver(peer, mp);
	rx_ordrel(peer, ep);
}

/* Deliver everything ep still sends, past flow control, and its
 * release: ep has become TS_IDLE or is closing. */
static void force(struct tl_ep *ep)
{
	mblk_t *mp;

	while ((mp = getq(ep->wq)) != NULL)
		deliver_held(ep->peer, mp);
	if (ep->ordrel != NULL)
		send_ordrel(ep);
}

void tl_co_push(struct tl_ep *ep)
{
	mblk_t *mp;

	while ((mp = getq(ep->wq)) != NULL) {
		if (ep->peer == NULL) {
			freemsg(mp);
			continue;
		}
		if (mp->b_datap->db_type < QPCTL &&
		    !tl_can_deliver(ep, ep->peer, up_band(mp))) {
			putbq(ep->wq, mp);
			return;
		}
		deliver_held(ep->peer, mp);
	}
	if (ep->ordrel != NULL && ep->peer != NULL)
		send_ordrel(ep);
}

/* The connection of ep (connected) ends by ep's doing: the peer gets
 * T_DISCON_IND with data; both sides' unsent data is discarded. */
static void abort_conn(struct tl_ep *ep, t_scalar_t reason, mblk_t *data)
{
	struct tl_ep *peer = ep->peer;

	drop_out(ep);
	unlink_eps(ep);
	if (peer == NULL) {
		freemsg(data);
		return;
	}
	drop_out(peer);
	peer->state = TS_IDLE;
	discon_to(peer, reason, data);
}

/* ---- T_CONN_REQ ---- */

/* The resources a T_CONN_REQ needs, taken before the lock. */
struct creq {
	mblk_t *ok, *ind, *discon;
	struct tl_pend *pend;
};

static void creq_free(struct creq *c)
{
	freemsg(c->ok);
	freemsg(c->ind);
	freemsg(c->discon);
	if (c->pend != NULL)
		pend_free(c->pend);
}

/* l takes a connect indication now: a listener with room in its queue
 * of pending ones and in its read side (a listener that does not read
 * would otherwise be sent an indication, and a disconnect, for every
 * connect its callers withdraw: its read side full counts as its queue
 * full, refused) */
static bool listening(struct tl_ep *l)
{
	return l != NULL && l->qlen > 0 && l->npend < l->qlen &&
	       (l->state == TS_IDLE || l->state == TS_WRES_CIND) &&
	       tl_has_room(l);
}

/* Under the lock: the attempt is recorded at l and announced. */
static void creq_pend(struct tl_ep *ep, struct tl_ep *l, struct creq *c,
		      const unsigned char *opt, size_t optlen, mblk_t *data)
{
	struct T_conn_ind ci = { T_CONN_IND, 0, 0, 0, 0, 0 };
	struct tl_pend *p = c->pend, **pp;
	size_t off = sizeof(ci);

	c->pend = NULL;
	p->seq = next_seq(ep->ns);
	p->caller = ep;
	p->listener = l;
	for (pp = &l->pend; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = p;
	l->npend++;
	l->state = TS_WRES_CIND;
	ep->conn = p;
	ci.SRC_length = (t_scalar_t)ep->addr.len;
	ci.SRC_offset = tpi_put_bytes(c->ind, &off, ep->addr.b, ep->addr.len);
	ci.OPT_length = (t_scalar_t)optlen;
	ci.OPT_offset = tpi_put_bytes(c->ind, &off, opt, optlen);
	ci.SEQ_number = p->seq;
	memcpy(c->ind->b_rptr, &ci, sizeof(ci));
	c->ind->b_cont = data;
	tl_up(ep, c->ok);
	tl_deliver(l, c->ind);
	c->ok = c->ind = NULL;
}

void tl_co_conn_req(struct tl_ep *ep, mblk_t *mp)
{
	struct T_conn_req r;
	struct T_ok_ack ok = { T_OK_ACK, T_CONN_REQ };
	const unsigned char *dest, *opt;
	struct creq c = { NULL, NULL, NULL, NULL };
	struct tl_ep *l;
	size_t optlen;
	int err = 0;

	memcpy(&r, mp->b_rptr, sizeof(r));
	dest = tpi_region(mp, r.DEST_offset, r.DEST_length);
	opt = tpi_region(mp, r.OPT_offset, r.OPT_length);
	optlen = (size_t)r.OPT_length;
	if (r.DEST_length == 0 || r.DEST_length > TL_ADDR_SIZE)
		err = TBADADDR;
	else if (!tl_data_only(mp) || tpi_datalen(mp) > (size_t)ep->info->cdata)
		err = TBADDATA;
	if (err != 0) {
		tl_error_ack(ep, mp, T_CONN_REQ, err, 0);
		return;
	}
	c.ok = tpi_proto(sizeof(ok), M_PCPROTO);
	c.ind = tpi_proto(sizeof(struct T_conn_ind) + TL_ADDR_SIZE + optlen + 8,
			 M_PROTO);
	c.pend = calloc(1, sizeof(*c.pend));
	if (c.pend != NULL)
		c.pend->discon = discon_alloc();
	c.discon = discon_alloc();
	if (c.ok == NULL || c.ind == NULL || c.pend == NULL ||
	    c.pend->discon == NULL || c.discon == NULL) {
		creq_free(&c);
		tl_error_ack(ep, mp, T_CONN_REQ, TSYSERR, ENOMEM);
		return;
	}
	memcpy(c.ok->b_rptr, &ok, sizeof(ok));
	tl_lock(ep->ns);
	if (ep->state != TS_IDLE || ep->qlen > 0)
		err = TOUTSTATE;	/* a listener does not call out */
	else if (optlen > 0 && topt_assoc(&tl_opt_table, &ep->opts, opt,
					  optlen, ep->priv) != 0)
		err = TBADOPT;
	if (err != 0) {
		tl_unlock(ep->ns);
		creq_free(&c);
		tl_error_ack(ep, mp, T_CONN_REQ, err, 0);
		return;
	}
	if (ep->discon == NULL) {
		ep->discon = c.discon;
		c.discon = NULL;
	}
	ep->raddr.len = (unsigned int)r.DEST_length;
	memcpy(ep->raddr.b, dest, ep->raddr.len);
	l = tl_ns_lookup(ep->ns, dest, (size_t)r.DEST_length);
	if (listening(l)) {
		ep->state = TS_WCON_CREQ;
		creq_pend(ep, l, &c, opt, optlen, take_data(mp));
	} else {
		/* refused at once: T_OK_ACK, then T_DISCON_IND */
		tl_up(ep, c.ok);
		c.ok = NULL;
		ep->state = TS_IDLE;
		discon_to(ep, ECONNREFUSED, NULL);
	}
	tl_unlock(ep->ns);
	creq_free(&c);
	freemsg(mp);
}

/* ---- T_CONN_RES ---- */

/* Is acc a valid acceptor for listener l?  0 or the TLI error. */
static int acceptor_ok(struct tl_ep *l, struct tl_ep *acc)
{
	if (acc == l)
		return l->npend > 1 ? TINDOUT : 0;
	if (acc->qlen > 0)
		return TRESQLEN;
	if (acc->state != TS_IDLE && acc->state != TS_UNBND)
		return TOUTSTATE;
	return 0;
}

void tl_co_conn_res(struct tl_ep *ep, mblk_t *mp)
{
	struct T_conn_res r;
	struct T_ok_ack ok = { T_OK_ACK, T_CONN_RES };
	struct T_conn_con cc = { T_CONN_CON, 0, 0, 0, 0 };
	const unsigned char *opt;
	mblk_t *okb, *con, *dis;
	struct tl_ep *acc = ep, *caller;
	struct tl_pend *p = NULL;
	size_t optlen, off = sizeof(cc);
	int err = 0;

	memcpy(&r, mp->b_rptr, sizeof(r));
	opt = tpi_region(mp, r.OPT_offset, r.OPT_length);
	optlen = (size_t)r.OPT_length;
	if (!tl_data_only(mp) || tpi_datalen(mp) > (size_t)ep->info->cdata) {
		tl_error_ack(ep, mp, T_CONN_RES, TBADDATA, 0);
		return;
	}
	okb = tpi_proto(sizeof(ok), M_PCPROTO);
	con = tpi_proto(sizeof(cc) + TL_ADDR_SIZE + optlen + 8, M_PROTO);
	dis = discon_alloc();
	if (okb == NULL || con == NULL || dis == NULL) {
		freemsg(okb);
		freemsg(con);
		freemsg(dis);
		tl_error_ack(ep, mp, T_CONN_RES, TSYSERR, ENOMEM);
		return;
	}
	memcpy(okb->b_rptr, &ok, sizeof(ok));
	tl_lock(ep->ns);
	if (ep->state != TS_WRES_CIND)
		err = TOUTSTATE;
	else if (r.ACCEPTOR_id != 0 &&
		 (acc = tl_ns_acceptor(ep->ns, r.ACCEPTOR_id, &err)) == NULL)
		;
	else if ((err = acceptor_ok(ep, acc)) != 0)
		;
	else if ((p = pend_find(ep, r.SEQ_number)) == NULL)
		err = TBADSEQ;
	else if (optlen > 0 && topt_assoc(&tl_opt_table, &acc->opts, opt,
					  optlen, acc->priv) != 0)
		err = TBADOPT;
	if (err != 0) {
		tl_unlock(ep->ns);
		freemsg(okb);
		freemsg(con);
		freemsg(dis);
		tl_error_ack(ep, mp, T_CONN_RES, err, 0);
		return;
	}
	caller = p->caller;
	pend_unlink(p);
	if (acc->state == TS_UNBND) {
		/* bound to the listener's address, which it does not own */
		acc->addr = ep->addr;
		acc->owner = false;
	}
	if (acc->discon == NULL) {
		acc->discon = dis;
		dis = NULL;
	}
	link_eps(acc, caller);
	cc.RES_length = (t_scalar_t)acc->addr.len;
	cc.RES_offset = tpi_put_bytes(con, &off, acc->addr.b, acc->addr.len);
	cc.OPT_length = (t_scalar_t)optlen;
	cc.OPT_offset = tpi_put_bytes(con, &off, opt, optlen);
	memcpy(con->b_rptr, &cc, sizeof(cc));
	con->b_cont = take_data(mp);
	tl_up(ep, okb);
	tl_deliver(caller, con);
	tl_unlock(ep->ns);
	pend_free(p);
	freemsg(dis);
	freemsg(mp);
}

/* ---- T_DISCON_REQ ---- */

void tl_co_discon_req(struct tl_ep *ep, mblk_t *mp)
{
	struct T_discon_req r;
	struct tl_pend *p;
	mblk_t *fl;
	int err = 0;

	memcpy(&r, mp->b_rptr, sizeof(r));
	if (!tl_data_only(mp) || tpi_datalen(mp) > (size_t)ep->info->ddata) {
		tl_error_ack(ep, mp, T_DISCON_REQ, TBADDATA, 0);
		return;
	}
	if ((fl = tpi_proto(1, M_FLUSH)) == NULL) {
		tl_error_ack(ep, mp, T_DISCON_REQ, TSYSERR, ENOMEM);
		return;
	}
	fl->b_rptr[0] = FLUSHRW;
	tl_lock(ep->ns);
	switch (ep->state) {
	case TS_WCON_CREQ:
		/* withdraw our attempt: the listener hears of it */
		p = ep->conn;
		pend_unlink(p);
		discon_send(p->listener, p->discon, ECONNABORTED, p->seq,
			    take_data(mp));
		p->discon = NULL;
		pend_free(p);
		ep->state = TS_IDLE;
		break;
	case TS_WRES_CIND:
		/* refuse an indication */
		if ((p = pend_find(ep, r.SEQ_number)) == NULL) {
			err = TBADSEQ;
			break;
		}
		pend_unlink(p);
		p->caller->state = TS_IDLE;
		discon_to(p->caller, ECONNREFUSED, take_data(mp));
		pend_free(p);
		break;
	case TS_DATA_XFER:
	case TS_WIND_ORDREL:
	case TS_WREQ_ORDREL:
		abort_conn(ep, ECONNRESET, take_data(mp));
		ep->state = TS_IDLE;
		flushq(ep->rq, FLUSHDATA);
		tl_up(ep, fl);
		fl = NULL;
		break;
	default:
		err = TOUTSTATE;
		break;
	}
	if (err != 0) {
		tl_unlock(ep->ns);
		freemsg(fl);
		tl_error_ack(ep, mp, T_DISCON_REQ, err, 0);
		return;
	}
	tl_unlock(ep->ns);
	freemsg(fl);
	tl_ok_ack(ep, mp, T_DISCON_REQ);
}

/* ---- data ---- */

/* Send ind (an indication for the peer, going up in its b_band) now, or
 * after what waits: then it waits in wband, the band it was written in
 * (so that the writers of that band are held back by it). */
static void tl_send(struct tl_ep *ep, mblk_t *ind, unsigned char wband)
{
	unsigned char band = ind->b_band;

	if (ep->peer == NULL) {
		freemsg(ind);
		return;
	}
	if (wq_clear(ep, band) && tl_can_deliver(ep, ep->peer, band)) {
		tl_deliver(ep->peer, ind);
		return;
	}
	ind->b_band = wband;
	if (!putq(ep->wq, ind))
		freemsg(ind);
}

/* The first block of mp, writable by us (a copy if it is shared). */
static mblk_t *own_block(mblk_t *mp)
{
	mblk_t *nb;

	if (mp->b_datap->db_ref == 1)
		return mp;
	if ((nb = copyb(mp)) == NULL)
		return NULL;
	nb->b_cont = take_data(mp);
	freeb(mp);
	return nb;
}

/*
 * Turn a data request into its indication, in place where possible:
 * NULL when no memory (mp is then untouched).  *ex, *more and the
 * options (*opt, *optlen) are what the request said.
 */
static mblk_t *data_ind(mblk_t *mp, t_scalar_t prim, bool *ex, bool *more,
			const unsigned char **opt, size_t *optlen)
{
	struct T_optdata_req od;
	struct T_data_req d;
	mblk_t *bp;

	*ex = prim == T_EXDATA_REQ;
	*opt = NULL;
	*optlen = 0;
	if (prim < 0) {			/* plain M_DATA */
		struct T_data_ind di = { T_DATA_IND, 0 };

		if ((bp = tpi_proto(sizeof(di), M_PROTO)) == NULL)
			return NULL;
		memcpy(bp->b_rptr, &di, sizeof(di));
		bp->b_cont = mp;
		*more = false;
		return bp;
	}
	if ((bp = own_block(mp)) == NULL)
		return NULL;
	bp->b_datap->db_type = M_PROTO;
	if (prim == T_OPTDATA_REQ) {
		memcpy(&od, bp->b_rptr, sizeof(od));
		*ex = (od.DATA_flag & T_ODF_EX) != 0;
		*more = (od.DATA_flag & T_ODF_MORE) != 0;
		od.PRIM_type = T_OPTDATA_IND;
		od.DATA_flag &= T_ODF_EX | T_ODF_MORE;
		if (od.OPT_length == 0)
			od.OPT_offset = 0;
		memcpy(bp->b_rptr, &od, sizeof(od));
		*opt = tpi_region(bp, od.OPT_offset, od.OPT_length);
		*optlen = (size_t)od.OPT_length;
		if (*optlen == 0)
			bp->b_wptr = bp->b_rptr + sizeof(od);
	} else {
		memcpy(&d, bp->b_rptr, sizeof(d));
		*more = d.MORE_flag > 0;
		d.PRIM_type = prim == T_EXDATA_REQ ? T_EXDATA_IND : T_DATA_IND;
		d.MORE_flag = *more ? T_MORE_FLAG : 0;
		memcpy(bp->b_rptr, &d, sizeof(d));
		bp->b_wptr = bp->b_rptr + sizeof(d);
	}
	return bp;
}

void tl_co_data(struct tl_ep *ep, mblk_t *mp, t_scalar_t prim)
{
	const unsigned char *opt;
	size_t dlen, optlen, *acc, lim;
	unsigned char wband = mp->b_band;	/* the writer's */
	bool ex, more;
	mblk_t *ind;

	dlen = prim < 0 ? msgdsize(mp) : tpi_datalen(mp);
	if ((prim >= 0 && !tl_data_only(mp)) ||
	    dlen > (size_t)ep->info->tidu) {
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	if ((ind = data_ind(mp, prim, &ex, &more, &opt, &optlen)) == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	ind->b_band = ex ? 1 : 0;
	acc = ex ? &ep->etsdu : &ep->tsdu;
	lim = (size_t)(ex ? ep->info->etsdu : ep->info->tsdu);
	tl_lock(ep->ns);
	if (ep->state == TS_IDLE) {
		/* raced with a disconnect: TPI says drop it */
		tl_unlock(ep->ns);
		freemsg(ind);
		return;
	}
	if (!tpi_allowed(ep->state, T_DATA_REQ) || *acc + dlen > lim ||
	    (optlen > 0 && topt_assoc(&tl_opt_table, &ep->opts, opt, optlen,
				      ep->priv) != 0)) {
		tl_unlock(ep->ns);
		tpi_fatal(ep->wq, ind, EPROTO);
		return;
	}
	*acc = more ? *acc + dlen : 0;
	tl_send(ep, ind, wband);
	tl_unlock(ep->ns);
}

/* ---- T_ORDREL_REQ ---- */

void tl_co_ordrel_req(struct tl_ep *ep, mblk_t *mp)
{
	struct T_ordrel_ind oi = { T_ORDREL_IND };
	mblk_t *bp;

	if (!tl_data_only(mp) ||
	    tpi_datalen(mp) > (size_t)ep->info->ddata) {
		tpi_fatal(ep->wq, mp, EPROTO);
		return;
	}
	if ((bp = own_block(mp)) == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	bp->b_datap->db_type = M_PROTO;
	bp->b_band = 0;
	memcpy(bp->b_rptr, &oi, sizeof(oi));
	bp->b_wptr = bp->b_rptr + sizeof(oi);
	tl_lock(ep->ns);
	switch (ep->state) {
	case TS_IDLE:
		/* raced with a disconnect, as for data */
		freemsg(bp);
		break;
	case TS_DATA_XFER:
		ep->state = TS_WIND_ORDREL;
		ep->ordrel = bp;
		if (wq_clear(ep, 0))
			send_ordrel(ep);
		break;
	case TS_WREQ_ORDREL:
		ep->state = TS_IDLE;
		ep->ordrel = bp;
		force(ep);
		break;
	default:
		tl_unlock(ep->ns);
		tpi_fatal(ep->wq, bp, EPROTO);
		return;
	}
	tl_unlock(ep->ns);
}

/* ---- close ---- */

void tl_co_close(struct tl_ep *ep)
{
	struct tl_pend *p;

	/* a listener's pending callers are refused */
	while ((p = ep->pend) != NULL) {
		struct tl_ep *c = p->caller;

		pend_unlink(p);
		c->state = TS_IDLE;
		discon_to(c, ECONNREFUSED, NULL);
		pend_free(p);
	}
	/* our own attempt is withdrawn */
	if ((p = ep->conn) != NULL) {
		struct tl_ep *l = p->listener;

		pend_unlink(p);
		discon_send(l, p->discon, ECONNABORTED, p->seq, NULL);
		p->discon = NULL;
		pend_free(p);
	}
	if (ep->peer != NULL && ep->ordrel != NULL)
		force(ep);	/* what we sent before T_ORDREL_REQ arrives */
	if (ep->peer != NULL)
		abort_conn(ep, ECONNRESET, NULL);
	drop_out(ep);
	ep->state = TS_UNBND;
}
