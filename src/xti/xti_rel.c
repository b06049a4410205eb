/*
 * xti_rel.c -- the end of a connection: t_rcvdis, t_sndrel,
 * t_sndreldata, t_rcvrel, t_rcvreldata.
 *
 * t_rcvdis(), t_rcvrel() and t_rcvreldata() never wait: the indication
 * is either held by the library (an earlier call met it and answered
 * TLOOK) or the first message at the stream head, else TNODIS/TNOREL.
 * A disconnect takes precedence over an orderly release (TPI design):
 * t_rcvrel() answers TLOOK while a T_DISCON_IND is pending.
 *
 * T_ORDREL_REQ is not acknowledged: t_sndrel() is a putmsg, TFLOW when
 * flow controlled in asynchronous mode.  Orderly release with data
 * (t_sndreldata, t_rcvreldata) needs a T_COTS_ORD provider that sets
 * ORDRELDATA (XTI's T_ORDRELDATA).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xti_impl.h"

/* The indication prim: held, or read now if it is first at the head.
 * NULL with t_errno: notfound when there is none, TLOOK when a
 * disconnect is pending instead (lookdis). */
static struct xti_msg *take_ind(struct xti_ep *ep, t_scalar_t prim,
				int notfound, bool lookdis)
{
	struct xti_msg *m;
	struct xti_rd r;
	t_scalar_t lim;
	int ev, want = prim == T_DISCON_IND ? T_DISCONNECT : T_ORDREL;

	pthread_mutex_lock(&ep->ep_lock);
	if (lookdis) {
		for (m = ep->ep_held; m != NULL; m = m->m_next)
			if (m->m_prim == T_DISCON_IND)
				break;
		if (m != NULL) {
			pthread_mutex_unlock(&ep->ep_lock);
			xti_err(TLOOK);
			return NULL;
		}
	}
	m = xti_held_take(ep, prim);
	lim = ep->ep_info.DDATA_size;
	pthread_mutex_unlock(&ep->ep_lock);
	if (m != NULL)
		return m;
	ev = xti_look_for(ep, lookdis ? want | T_DISCONNECT : want);
	if (ev < 0)
		return NULL;
	if (ev == 0) {
		xti_err(notfound);
		return NULL;
	}
	if (ev != want) {
		xti_err(TLOOK);
		return NULL;
	}
	xti_rd_lib(&r, lim, -1);
	/* (not waiting: another thread reading meanwhile may have taken
	 * the indication the look saw -- and held it, answering TLOOK) */
	r.nowait = true;
	m = xti_read_msg(ep, &r, notfound);
	if (m == NULL) {
		if (t_errno != notfound)
			return NULL;
		pthread_mutex_lock(&ep->ep_lock);
		m = xti_held_take(ep, prim);
		pthread_mutex_unlock(&ep->ep_lock);
		if (m == NULL)
			xti_err(notfound);
		return m;
	}
	if (m->m_prim == prim)
		return m;
	/* not what the head showed a moment ago (another thread read) */
	if (xti_dec_event(m->m_ctl, m->m_prim == -1 ? -1 : m->m_clen,
			  false) > 0) {
		pthread_mutex_lock(&ep->ep_lock);
		xti_held_push(ep, m);
		pthread_mutex_unlock(&ep->ep_lock);
		xti_err(TLOOK);
	} else {
		xti_msg_free(m);
		xti_proto();
	}
	return NULL;
}

/* Hand the reason (and for a disconnect, the sequence) and udata to the
 * caller's t_discon; after the state changed, so TBUFOVFLW loses only
 * the data: the reason and sequence are given first (with several
 * connect indications outstanding, the sequence is the only way to know
 * which one went). */
static int discon_out(struct t_discon *ud, const struct t_discon *d,
		      const struct xti_msg *m, int reason, int seq, bool dis)
{
	if (ud == NULL)
		return 0;
	if (xti_uout(&ud->reason, &reason, sizeof(int)) != 0 ||
	    (dis && xti_uout(&ud->sequence, &seq, sizeof(int)) != 0))
		return xti_syserr(EFAULT);
	if (xti_nb_fits(&d->udata, (size_t)m->m_dlen) != 0)
		return xti_err(TBUFOVFLW);
	if (xti_nb_put(&ud->udata, &d->udata, m->m_dat, (size_t)m->m_dlen))
		return xti_syserr(EFAULT);
	return 0;
}

int t_rcvdis(int fd, struct t_discon *discon)
{
	struct t_discon d;
	struct xti_msg *m;
	struct xti_ep *ep;
	int r = -1, reason, seq;

	ep = xti_begin(fd, NEED_CONN, EV_RCVDIS1, EV_RCVDIS2);
	if (ep == NULL)
		return -1;
	memset(&d, 0, sizeof(d));
	if (discon != NULL && xti_uin(&d, discon, sizeof(d)) != 0) {
		xti_put(ep);
		return xti_syserr(EFAULT);
	}
	m = take_ind(ep, T_DISCON_IND, TNODIS, false);
	if (m == NULL)
		goto out;
	if (xti_dec_discon_ind(m->m_ctl, m->m_clen, &reason, &seq) != 0) {
		xti_proto();
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	if (ep->ep_state == T_INCON) {
		xti_seq_del(ep, seq);	/* rcvdis2 / rcvdis3 */
		xti_set_state(ep, ep->ep_ocnt > 0 ? T_INCON : T_IDLE);
	} else {
		xti_set_state(ep, T_IDLE);	/* rcvdis1 */
		xti_conn_reset(ep);
	}
	pthread_mutex_unlock(&ep->ep_lock);
	r = discon_out(discon, &d, m, reason, seq, true);
out:
	xti_msg_free(m);
	xti_put(ep);
	return r;
}

/* The release of event ev is done: the next state, and when the
 * connection is over, its leftovers forgotten. */
static void rel_done(struct xti_ep *ep, int ev)
{
	pthread_mutex_lock(&ep->ep_lock);
	if (xti_ev_ok(ev, ep->ep_state))
		xti_set_state(ep, xti_next_state(ev, ep->ep_state));
	if (ep->ep_state == T_IDLE)
		xti_conn_reset(ep);
	pthread_mutex_unlock(&ep->ep_lock);
}

/* The arguments of a release call: the application's discon (if any)
 * copied into d, else d zeroed; *lim gets the release data's limit:
 * DDATA_size, or 0 when the provider has no ORDRELDATA (XNS 5.2: then
 * t_sndreldata and t_rcvreldata behave as t_sndrel and t_rcvrel, and
 * data given to send is TBADDATA).  0 or -1 with t_errno. */
static int rel_args(struct xti_ep *ep, const struct t_discon *discon,
		    struct t_discon *d, t_scalar_t *lim)
{
	int flags;

	pthread_mutex_lock(&ep->ep_lock);
	flags = ep->ep_info.PROVIDER_flag;
	*lim = ep->ep_info.DDATA_size;
	pthread_mutex_unlock(&ep->ep_lock);
	if (!(flags & ORDRELDATA))
		*lim = 0;
	memset(d, 0, sizeof(*d));
	if (discon != NULL && xti_uin(d, discon, sizeof(*d)) != 0)
		return xti_syserr(EFAULT);
	return 0;
}

static int sndrel(int fd, struct t_discon *discon)
{
	struct t_discon d;
	struct T_ordrel_req or;
	struct xti_ep *ep;
	int r = -1;
	t_scalar_t lim;

	ep = xti_begin(fd, NEED_ORD, EV_SNDREL, -1);
	if (ep == NULL)
		return -1;
	if (rel_args(ep, discon, &d, &lim) != 0)
		goto out;
	if (!xti_size_ok(lim, d.udata.len)) {
		xti_err(TBADDATA);
		goto out;
	}
	if (xti_look_stop(ep, T_DISCONNECT) != 0)
		goto out;
	or.PRIM_type = T_ORDREL_REQ;
	if (xti_putmsg(fd, &or, sizeof(or), d.udata.buf,
		       d.udata.len > 0 ? (int)d.udata.len : -1, 0) != 0) {
		if (t_errno == TFLOW) {
			pthread_mutex_lock(&ep->ep_lock);
			ep->ep_flags |= EPF_FLOW;
			pthread_mutex_unlock(&ep->ep_lock);
		}
		goto out;
	}
	rel_done(ep, EV_SNDREL);
	r = 0;
out:
	xti_put(ep);
	return r;
}

int t_sndrel(int fd)
{
	return sndrel(fd, NULL);
}

int t_sndreldata(int fd, struct t_discon *discon)
{
	return sndrel(fd, discon);
}

static int rcvrel(int fd, struct t_discon *discon, bool withdata)
{
	struct t_discon d;
	struct xti_msg *m = NULL;
	struct xti_ep *ep;
	t_scalar_t lim;
	int r = -1;

	ep = xti_begin(fd, NEED_ORD, EV_RCVREL, -1);
	if (ep == NULL)
		return -1;
	if (rel_args(ep, discon, &d, &lim) != 0)
		goto out;
	m = take_ind(ep, T_ORDREL_IND, TNOREL, true);
	if (m == NULL)
		goto out;
	rel_done(ep, EV_RCVREL);
	r = withdata ? discon_out(discon, &d, m, 0, 0, false) : 0;
out:
	xti_msg_free(m);
	xti_put(ep);
	return r;
}

int t_rcvrel(int fd)
{
	return rcvrel(fd, NULL, false);
}

int t_rcvreldata(int fd, struct t_discon *discon)
{
	return rcvrel(fd, discon, true);
}
