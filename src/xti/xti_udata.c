/*
 * xti_udata.c -- connectionless data: t_sndudata, t_sndvudata,
 * t_rcvudata, t_rcvvudata, t_rcvuderr.
 *
 * A datagram goes down as one T_UNITDATA_REQ (destination and options in
 * the control part, the data as the data part) and comes up as one
 * T_UNITDATA_IND.  t_rcvudata() puts the data straight into the caller's
 * udata buffer; a datagram longer than that is returned in pieces, T_MORE
 * set, the address and options only with the first piece (ep_ucont: the
 * next message without a control part is the rest).  Address or options
 * longer than the caller's buffers: TBUFOVFLW and the datagram is
 * dropped.  A datagram t_rcvuderr() reads when another thread took the
 * error it saw is held and t_rcvudata() delivers it first.  A
 * T_UDERROR_IND met by t_rcvudata() is held (TLOOK) for
 * t_rcvuderr(), which never waits (TNOUDERR).
 *
 * t_sndudata and t_rcvudata take no lock when nothing is held and no
 * ack waiter reads (xti_impl.h): the checks, the sizes and the held
 * list are atomic loads, the read turn one atomic increment.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "xti_impl.h"

static int sndudata(int fd, const struct t_unitdata *uud, const char *dat,
		    unsigned int dlen, bool gathered)
{
	struct t_unitdata ud;
	struct T_unitdata_req ur;
	struct xti_sizes sz;
	struct xti_ep *ep;
	char stack[512], *ctl = stack;
	size_t clen, ooff;
	int r = -1, ev;

	ep = xti_begin_snd(fd, NEED_CLTS, EV_SNDUDATA, T_UDERR, &sz, &ev);
	if (ep == NULL)
		return -1;
	if (xti_uin(&ud, uud, sizeof(ud)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	if (!gathered) {
		dat = ud.udata.buf;
		dlen = ud.udata.len;
	}
	if (!xti_size_ok(sz.addr, ud.addr.len)) {
		xti_err(TBADADDR);
		goto out;
	}
	if (!xti_size_ok(sz.opt, ud.opt.len)) {
		xti_err(TBADOPT);
		goto out;
	}
	if ((dlen == 0 && !(sz.pflag & SENDZERO)) || dlen > INT_MAX ||
	    sz.tsdu == T_INVALID ||
	    (sz.tsdu > 0 && dlen > (unsigned int)sz.tsdu)) {
		xti_err(TBADDATA);
		goto out;
	}
	/* (t_look still asks the provider) */
	if (xti_send_stop(ep, ev, T_UDERR) != 0)
		goto out;
	ooff = XTI_ALIGN4(sizeof(ur) + (size_t)ud.addr.len);
	clen = ud.opt.len ? ooff + ud.opt.len : sizeof(ur) + ud.addr.len;
	if (clen > INT_MAX) {
		/* (a provider whose sizes are T_INFINITE: no control part
		 * that long can be sent) */
		xti_syserr(ERANGE);
		goto out;
	}
	if (clen > sizeof(stack) && (ctl = malloc(clen)) == NULL) {
		xti_syserr(ENOMEM);
		goto out;
	}
	memset(ctl, 0, clen);
	ur.PRIM_type = T_UNITDATA_REQ;
	ur.DEST_length = (t_scalar_t)ud.addr.len;
	ur.DEST_offset = ud.addr.len ? (t_scalar_t)sizeof(ur) : 0;
	ur.OPT_length = (t_scalar_t)ud.opt.len;
	ur.OPT_offset = ud.opt.len ? (t_scalar_t)ooff : 0;
	memcpy(ctl, &ur, sizeof(ur));
	if ((ud.addr.len &&
	     xti_uin(ctl + sizeof(ur), ud.addr.buf, ud.addr.len) != 0) ||
	    (ud.opt.len && xti_uin(ctl + ooff, ud.opt.buf, ud.opt.len) != 0)) {
		xti_syserr(EFAULT);
		goto out;
	}
	if (xti_putmsg(fd, ctl, (int)clen, dat, (int)dlen, 0) != 0) {
		if (t_errno == TFLOW) {
			pthread_mutex_lock(&ep->ep_lock);
			ep->ep_flags |= EPF_FLOW;
			pthread_mutex_unlock(&ep->ep_lock);
		}
		goto out;
	}
	r = 0;
out:
	if (ctl != stack)
		free(ctl);
	xti_put_cached(ep);
	return r;
}

int t_sndudata(int fd, const struct t_unitdata *unitdata)
{
	return sndudata(fd, unitdata, NULL, 0, false);
}

int t_sndvudata(int fd, struct t_unitdata *unitdata, struct t_iovec *uiov,
		unsigned int iovcount)
{
	struct t_iovec iov[T_IOV_MAX];
	unsigned int total;
	char *buf;
	int r;

	buf = xti_iov_in(uiov, iovcount, iov, &total);
	if (buf == NULL)
		return -1;
	if (xti_iov_gather(buf, iov, iovcount) != 0) {
		free(buf);
		return -1;
	}
	r = sndudata(fd, unitdata, buf, total, true);
	free(buf);
	return r;
}

/* A datagram held (t_rcvuderr read it looking for an error another
 * thread took): delivered from the held list, in order, before the
 * stream's.  ep_lock held; m taken off the list by the caller.  0 with
 * *dlen, or -1 with t_errno (TBUFOVFLW: it is dropped). */
static int held_udata(struct xti_ep *ep, struct xti_msg *m,
		      struct t_unitdata *uud, const struct t_unitdata *ud,
		      char *dbuf, unsigned int dmax, int *dlen, int *flagsp)
{
	struct xti_dec_udata u;
	int n = m->m_dlen - m->m_doff, fl = 0;

	memset(&u, 0, sizeof(u));
	if (m->m_doff == 0 && m->m_prim == T_UNITDATA_IND &&
	    (xti_dec_unitdata_ind(m->m_ctl, m->m_clen, &u) != 0 ||
	     xti_nb_fits(&ud->addr, u.addr.len) != 0 ||
	     xti_nb_fits(&ud->opt, u.opt.len) != 0)) {
		xti_msg_free(m);	/* dropped, as one read is */
		return xti_err(TBUFOVFLW);
	}
	if ((unsigned int)n > dmax) {
		n = (int)dmax;
		fl = T_MORE;
	}
	if ((n > 0 && xti_uout(dbuf, m->m_dat + m->m_doff, (size_t)n) != 0) ||
	    (m->m_doff == 0 &&
	     (xti_nb_put(&uud->addr, &ud->addr, u.addr.p, u.addr.len) != 0 ||
	      xti_nb_put(&uud->opt, &ud->opt, u.opt.p, u.opt.len) != 0)) ||
	    xti_uout(flagsp, &fl, sizeof(fl)) != 0) {
		xti_held_front(ep, m);
		return xti_syserr(EFAULT);
	}
	m->m_doff += n;
	*dlen = n;
	if (fl & T_MORE)
		xti_held_front(ep, m);	/* the rest, next */
	else
		xti_msg_free(m);
	return 0;
}

/* Receive a datagram (or its next piece) with its data into dbuf (dmax
 * bytes); *dlen gets the length.  0, or -1 with t_errno. */
static int rcvudata(int fd, struct t_unitdata *uud, char *dbuf,
		    unsigned int dmax, int *dlen, int *flagsp)
{
	struct t_unitdata ud;
	struct xti_dec_udata u;
	struct xti_ep *ep;
	struct xti_rd r;
	bool cont, held;
	int rv = -1, fl = 0;

	ep = xti_begin_rd(fd, NEED_CLTS, EV_RCVUDATA);
	if (ep == NULL)
		return -1;
	/* a held message: a T_UDERROR_IND means TLOOK, a datagram goes
	 * first */
	held = xti_held_any(ep);
	if (xti_uin(&ud, uud, sizeof(ud)) != 0 ||
	    xti_uout(flagsp, &fl, sizeof(fl)) != 0) {
		xti_rd_quit(ep);
		xti_put_cached(ep);
		return xti_syserr(EFAULT);
	}
	if (dbuf == NULL) {
		dbuf = ud.udata.buf;
		dmax = ud.udata.maxlen;
	}
	if (held) {
		/* a held datagram first; a held error means TLOOK */
		struct xti_msg *m;

		pthread_mutex_lock(&ep->ep_lock);
		m = ep->ep_held;
		if (m != NULL && (m->m_prim == T_UNITDATA_IND ||
				  m->m_prim == -1)) {
			m = xti_held_pop(ep);
			rv = held_udata(ep, m, uud, &ud, dbuf, dmax, dlen,
					flagsp);
		} else {
			rv = m != NULL ? xti_err(TLOOK) : 1;
		}
		pthread_mutex_unlock(&ep->ep_lock);
		if (rv != 1) {
			xti_rd_quit(ep);
			xti_put_cached(ep);
			return rv;
		}
		rv = -1;	/* (taken meanwhile: read as usual) */
	}
	if (dmax > INT_MAX)
		dmax = INT_MAX;
	xti_rd_init(&r, dbuf, (int)dmax);
	r.ev = EV_RCVUDATA;
	r.entered = true;		/* taken by xti_begin_rd */
	if (xti_read(ep, &r) != 0)
		goto out;
	memset(&u, 0, sizeof(u));
	u.addr.p = u.opt.p = r.cbuf;
	cont = __atomic_load_n(&ep->ep_ucont, __ATOMIC_RELAXED);
	if (r.prim == T_UDERROR_IND) {
		xti_hold(ep, &r);
		goto out;
	}
	if (r.prim == T_UNITDATA_IND) {
		if (xti_dec_unitdata_ind(r.cbuf, r.clen, &u) != 0) {
			if (r.more)
				xti_read_rest(ep, &r);
			xti_proto();
			goto out;
		}
	} else if (r.prim != -1 || (!cont && r.band != 0)) {
		if (r.more)
			xti_read_rest(ep, &r);
		xti_proto();
		goto out;
	}
	/* (a message without control part: the rest of a datagram, or a
	 * plain M_DATA datagram without address) */
	if (xti_nb_fits(&ud.addr, u.addr.len) != 0 ||
	    xti_nb_fits(&ud.opt, u.opt.len) != 0) {
		if (r.more)
			xti_read_rest(ep, &r);	/* dropped */
		__atomic_store_n(&ep->ep_ucont, false, __ATOMIC_RELAXED);
		xti_err(TBUFOVFLW);
		goto out;
	}
	if (r.more != cont)
		__atomic_store_n(&ep->ep_ucont, r.more, __ATOMIC_RELAXED);
	fl = r.more ? T_MORE : 0;
	*dlen = r.dlen > 0 ? r.dlen : 0;
	if (xti_nb_put(&uud->addr, &ud.addr, u.addr.p, u.addr.len) != 0 ||
	    xti_nb_put(&uud->opt, &ud.opt, u.opt.p, u.opt.len) != 0 ||
	    xti_uout(flagsp, &fl, sizeof(fl)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	rv = 0;
out:
	xti_rd_free(&r);
	xti_put_cached(ep);
	return rv;
}

int t_rcvudata(int fd, struct t_unitdata *unitdata, int *flags)
{
	unsigned int len;
	int n;

	if (rcvudata(fd, unitdata, NULL, 0, &n, flags) != 0)
		return -1;
	len = (unsigned int)n;
	if (xti_uout(&unitdata->udata.len, &len, sizeof(len)) != 0)
		return xti_syserr(EFAULT);
	return 0;
}

int t_rcvvudata(int fd, struct t_unitdata *unitdata, struct t_iovec *uiov,
		unsigned int iovcount, int *flags)
{
	struct t_iovec iov[T_IOV_MAX];
	unsigned int total;
	char *buf;
	int n, r = 0;

	buf = xti_iov_in(uiov, iovcount, iov, &total);
	if (buf == NULL)
		return -1;
	if (xti_iov_writable(iov, iovcount) != 0) {
		free(buf);
		return -1;
	}
	if (rcvudata(fd, unitdata, buf, total, &n, flags) != 0) {
		free(buf);
		return -1;
	}
	if (n > 0 && xti_iov_scatter(iov, iovcount, buf, (size_t)n) != 0)
		r = -1;
	free(buf);
	return r == 0 ? n : r;
}

int t_rcvuderr(int fd, struct t_uderr *uderr)
{
	struct t_uderr ue;
	struct xti_dec_udata u;
	struct xti_msg *m;
	struct xti_ep *ep;
	struct xti_rd r;
	t_scalar_t err;
	int rv = -1, ev;

	ep = xti_begin(fd, NEED_CLTS, EV_RCVUDERR, -1);
	if (ep == NULL)
		return -1;
	memset(&ue, 0, sizeof(ue));
	if (uderr != NULL && xti_uin(&ue, uderr, sizeof(ue)) != 0) {
		xti_put(ep);
		return xti_syserr(EFAULT);
	}
	pthread_mutex_lock(&ep->ep_lock);
	m = xti_held_take(ep, T_UDERROR_IND);
	pthread_mutex_unlock(&ep->ep_lock);
	if (m == NULL) {
		ev = xti_look_for(ep, T_UDERR);
		if (ev <= 0) {
			if (ev == 0)
				xti_err(TNOUDERR);
			goto out;
		}
		xti_rd_init(&r, NULL, -1);
		/* (not waiting: a reader meanwhile may have taken and held
		 * the error the look saw) */
		r.nowait = true;
		m = xti_read_msg(ep, &r, TNOUDERR);
		if (m == NULL && t_errno == TNOUDERR) {
			pthread_mutex_lock(&ep->ep_lock);
			m = xti_held_take(ep, T_UDERROR_IND);
			pthread_mutex_unlock(&ep->ep_lock);
			if (m == NULL)
				xti_err(TNOUDERR);
		}
		if (m == NULL)
			goto out;
		if (m->m_prim != T_UDERROR_IND) {
			/* another thread took it meanwhile: what we read is
			 * a datagram, held for t_rcvudata */
			if (m->m_prim == T_UNITDATA_IND || m->m_prim == -1) {
				pthread_mutex_lock(&ep->ep_lock);
				xti_held_push(ep, m);
				pthread_mutex_unlock(&ep->ep_lock);
				m = NULL;
			}
			xti_err(TNOUDERR);
			goto out;
		}
	}
	if (xti_dec_uderror_ind(m->m_ctl, m->m_clen, &u) != 0) {
		xti_proto();
		goto out;
	}
	if (uderr == NULL) {
		rv = 0;
		goto out;
	}
	if (xti_nb_fits(&ue.addr, u.addr.len) != 0 ||
	    xti_nb_fits(&ue.opt, u.opt.len) != 0) {
		xti_err(TBUFOVFLW);
		goto out;
	}
	err = u.error;
	if (xti_nb_put(&uderr->addr, &ue.addr, u.addr.p, u.addr.len) != 0 ||
	    xti_nb_put(&uderr->opt, &ue.opt, u.opt.p, u.opt.len) != 0 ||
	    xti_uout(&uderr->error, &err, sizeof(err)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	rv = 0;
out:
	xti_msg_free(m);
	xti_put(ep);
	return rv;
}
