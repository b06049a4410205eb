/*
 * xti_bind.c -- t_bind, t_unbind, t_optmgmt, t_getprotaddr: the
 * requests timod turns into a TPI primitive and its acknowledgement
 * (TI_BIND, TI_UNBIND, TI_OPTMGMT, TI_GETADDRS).
 *
 * The ioctl buffer holds the request and has room for the ack: its
 * structure and the address or options the provider may return (the
 * provider's ADDR_size/OPT_size, or a default when those are infinite).
 * An ack that does not fit comes back truncated; the library tells that
 * from garbage by its length (the whole buffer) and reports TBUFOVFLW
 * when the caller wanted the value, as it does when the value is longer
 * than the caller's maxlen.  A maxlen of 0 means "not wanted" (XNS 5.2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xti_impl.h"

#define DEFAULT_ROOM	1024	/* for values of infinite size */

/* Room for a value of a field whose limit is lim, at least have. */
static int room(t_scalar_t lim, size_t have, size_t want)
{
	size_t n = lim > 0 ? (size_t)lim : DEFAULT_ROOM;

	if (n < have)
		n = have;
	if (n < want)
		n = want;
	return n > XTI_IOCMAX ? XTI_IOCMAX : (int)n;
}

static void *ioc_buf(size_t hdr, int extra, int *cap)
{
	size_t n = hdr + (size_t)extra + 64;

	if (n > XTI_IOCMAX)
		n = XTI_IOCMAX;
	*cap = (int)n;
	return calloc(1, n);
}

/* Hand a value v to the application's netbuf unb (nb: its copy) and the
 * n bytes of x beside it (qlen, flags): 0, or -1 with TBUFOVFLW when nb
 * is too small, TSYSERR EFAULT. */
static int nb_out(struct netbuf *unb, const struct netbuf *nb,
		  const struct xti_region *v, void *ux, const void *x,
		  size_t n)
{
	if (xti_nb_fits(nb, v->len) != 0)
		return xti_err(TBUFOVFLW);
	if (xti_nb_put(unb, nb, v->p, v->len) != 0 ||
	    xti_uout(ux, x, n) != 0)
		return xti_syserr(EFAULT);
	return 0;
}

/* A TI_BIND or TI_UNBIND the head gave up on (a signal, or ETIME) after
 * its request went down: the provider may have done it.  Ask it
 * (TI_SYNC) and take its state when the request leads there (bound or
 * unbound), so that the library's state does not stay behind the
 * provider's; the caller's error (TSYSERR EINTR or ETIME) stands.  (A
 * request still queued below, behind flow control, is overtaken by the
 * high priority query: the state it finds is then the old one.) */
static void resync_given_up(struct xti_ep *ep, int fd)
{
	struct ti_sync_ack sa;
	int te = t_errno, e = errno;

	if (te != TSYSERR || (e != EINTR && e != ETIME))
		return;
	if (xti_sync_brief(fd, &sa) == 0) {
		int ts = sa.tsa_info.CURRENT_state;

		pthread_mutex_lock(&ep->ep_lock);
		if (ts == TS_IDLE && ep->ep_state == T_UNBND) {
			xti_set_state(ep, T_IDLE);
			ep->ep_qlen = sa.tsa_qlen;
		} else if (ts == TS_UNBND && ep->ep_state == T_IDLE) {
			xti_set_state(ep, T_UNBND);
			ep->ep_qlen = 0;
		}
		pthread_mutex_unlock(&ep->ep_lock);
	}
	t_errno = te;
	errno = e;
}

int t_bind(int fd, const struct t_bind *req, struct t_bind *ret)
{
	struct t_bind rq, rt;
	struct T_bind_req br;
	struct xti_region addr;
	struct xti_ep *ep;
	struct T_info_ack ia;
	unsigned int qlen = 0;
	char *buf = NULL;
	int cap, n, r = -1;

	ep = xti_begin(fd, NEED_ANY, EV_BIND, -1);
	if (ep == NULL)
		return -1;
	memset(&rq, 0, sizeof(rq));
	memset(&rt, 0, sizeof(rt));
	if ((req != NULL && xti_uin(&rq, req, sizeof(rq)) != 0) ||
	    (ret != NULL && xti_uin(&rt, ret, sizeof(rt)) != 0)) {
		xti_syserr(EFAULT);
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	ia = ep->ep_info;
	pthread_mutex_unlock(&ep->ep_lock);
	if (!xti_size_ok(ia.ADDR_size, rq.addr.len)) {
		xti_err(TBADADDR);
		goto out;
	}
	buf = ioc_buf(sizeof(struct T_bind_ack),
		      room(ia.ADDR_size, rq.addr.len, rt.addr.maxlen + 1UL),
		      &cap);
	if (buf == NULL) {
		xti_syserr(ENOMEM);
		goto out;
	}
	if (sizeof(br) + rq.addr.len > (size_t)cap) {
		xti_err(TBADADDR);
		goto out;
	}
	br.PRIM_type = T_BIND_REQ;
	br.ADDR_length = (t_scalar_t)rq.addr.len;
	br.ADDR_offset = rq.addr.len ? (t_scalar_t)sizeof(br) : 0;
	br.CONIND_number = rq.qlen;
	memcpy(buf, &br, sizeof(br));
	if (rq.addr.len > 0 &&
	    xti_uin(buf + sizeof(br), rq.addr.buf, rq.addr.len) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	n = xti_ioctl(fd, TI_BIND, buf, (int)(sizeof(br) + rq.addr.len), cap,
		      false);
	if (n < 0) {
		resync_given_up(ep, fd);
		goto out;
	}
	if (xti_dec_bind_ack(buf, n, &addr, &qlen) != 0) {
		struct T_bind_ack ba;
		/* truncated (the whole buffer came back): too long for us */
		if (n != cap || n < (int)sizeof(ba)) {
			xti_proto();
			goto out;
		}
		memcpy(&ba, buf, sizeof(ba));
		if (ba.PRIM_type != T_BIND_ACK) {
			xti_proto();
			goto out;
		}
		qlen = ba.CONIND_number;
		addr.p = buf;
		addr.len = rt.addr.maxlen + 1UL;	/* more than fits */
	}
	pthread_mutex_lock(&ep->ep_lock);
	if (xti_ev_ok(EV_BIND, ep->ep_state))
		xti_set_state(ep, T_IDLE);
	ep->ep_qlen = qlen;
	pthread_mutex_unlock(&ep->ep_lock);
	if (ret == NULL) {
		r = 0;
		goto out;
	}
	r = nb_out(&ret->addr, &rt.addr, &addr, &ret->qlen, &qlen,
		   sizeof(qlen));
out:
	free(buf);
	xti_put(ep);
	return r;
}

int t_unbind(int fd)
{
	union {
		struct T_unbind_req req;
		struct T_ok_ack ack;
		char room[64];
	} u;
	struct xti_dec_ack a;
	struct xti_ep *ep;
	int n, r = -1;

	ep = xti_begin(fd, NEED_ANY, EV_UNBIND, -1);
	if (ep == NULL)
		return -1;
	/* any event waiting (XNS 5.2): an indication, data, a datagram's
	 * error -- which the unbind would otherwise drop unseen */
	if (xti_look_stop(ep, T_LISTEN | T_DATA | T_EXDATA | T_UDERR |
			  T_DISCONNECT | T_ORDREL) != 0)
		goto out;
	u.req.PRIM_type = T_UNBIND_REQ;
	n = xti_ioctl(fd, TI_UNBIND, &u, sizeof(u.req), sizeof(u), false);
	if (n < 0) {
		resync_given_up(ep, fd);
		goto out;
	}
	if (xti_dec_ok_ack(&u, n, &a) != 0 || a.prim != T_OK_ACK ||
	    a.req != T_UNBIND_REQ) {
		xti_proto();
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	xti_set_state(ep, T_UNBND);
	ep->ep_qlen = 0;
	__atomic_store_n(&ep->ep_ucont, false, __ATOMIC_RELAXED);
	xti_seq_clear(ep);
	xti_conn_reset(ep);
	pthread_mutex_unlock(&ep->ep_lock);
	r = 0;
out:
	xti_put(ep);
	return r;
}

/* The option buffer is a sequence of t_opthdr, each at an aligned
 * offset, its len covering header and value, all inside the buffer. */
static bool opts_ok(const char *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct t_opthdr oh;
		if (len - off < sizeof(oh))
			return false;
		memcpy(&oh, p + off, sizeof(oh));
		if (oh.len < sizeof(oh) || oh.len > len - off)
			return false;
		off += (oh.len + _T_ALIGN_SZ - 1) & ~(_T_ALIGN_SZ - 1);
	}
	return true;
}

static bool mgmt_flag_ok(t_scalar_t f)
{
	return f == T_NEGOTIATE || f == T_CHECK || f == T_DEFAULT ||
	       f == T_CURRENT;
}

int t_optmgmt(int fd, const struct t_optmgmt *req, struct t_optmgmt *ret)
{
	struct t_optmgmt rq, rt;
	struct T_optmgmt_req orq;
	struct xti_region opt;
	struct xti_ep *ep;
	t_scalar_t flags, lim;
	char *buf = NULL;
	int cap, n, r = -1;

	ep = xti_begin(fd, NEED_ANY, EV_OPTMGMT, -1);
	if (ep == NULL)
		return -1;
	if (xti_uin(&rq, req, sizeof(rq)) != 0 ||
	    xti_uin(&rt, ret, sizeof(rt)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	if (!mgmt_flag_ok(rq.flags)) {
		xti_err(TBADFLAG);
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	lim = ep->ep_info.OPT_size;
	pthread_mutex_unlock(&ep->ep_lock);
	if (rq.opt.len > XTI_IOCMAX - sizeof(orq) - 64) {
		xti_err(TBADOPT);
		goto out;
	}
	buf = ioc_buf(sizeof(struct T_optmgmt_ack),
		      room(lim, rq.opt.len, rt.opt.maxlen + 1UL), &cap);
	if (buf == NULL) {
		xti_syserr(ENOMEM);
		goto out;
	}
	if (rq.opt.len > 0 &&
	    xti_uin(buf + sizeof(orq), rq.opt.buf, rq.opt.len) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	if (!opts_ok(buf + sizeof(orq), rq.opt.len)) {
		xti_err(TBADOPT);
		goto out;
	}
	orq.PRIM_type = T_OPTMGMT_REQ;
	orq.OPT_length = (t_scalar_t)rq.opt.len;
	orq.OPT_offset = rq.opt.len ? (t_scalar_t)sizeof(orq) : 0;
	orq.MGMT_flags = rq.flags;
	memcpy(buf, &orq, sizeof(orq));
	n = xti_ioctl(fd, TI_OPTMGMT, buf, (int)(sizeof(orq) + rq.opt.len),
		      cap, true);
	if (n < 0)
		goto out;
	if (xti_dec_optmgmt_ack(buf, n, &opt, &flags) != 0) {
		struct T_optmgmt_ack oa;
		if (n == cap && n >= (int)sizeof(oa)) {
			memcpy(&oa, buf, sizeof(oa));
			if (oa.PRIM_type == T_OPTMGMT_ACK) {
				xti_err(TBUFOVFLW);	/* truncated */
				goto out;
			}
		}
		xti_proto();
		goto out;
	}
	r = nb_out(&ret->opt, &rt.opt, &opt, &ret->flags, &flags,
		   sizeof(flags));
out:
	free(buf);
	xti_put(ep);
	return r;
}

int t_getprotaddr(int fd, struct t_bind *boundaddr, struct t_bind *peeraddr)
{
	struct t_bind b, p;
	struct xti_region loc, rem;
	struct xti_ep *ep;
	t_scalar_t lim;
	char *buf = NULL;
	int cap, n, r = -1, st;

	ep = xti_get(fd);
	if (ep == NULL)
		return -1;
	memset(&b, 0, sizeof(b));
	memset(&p, 0, sizeof(p));
	if ((boundaddr != NULL && xti_uin(&b, boundaddr, sizeof(b)) != 0) ||
	    (peeraddr != NULL && xti_uin(&p, peeraddr, sizeof(p)) != 0)) {
		xti_syserr(EFAULT);
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	lim = ep->ep_info.ADDR_size;
	st = ep->ep_state;
	pthread_mutex_unlock(&ep->ep_lock);
	buf = ioc_buf(sizeof(struct T_addr_ack),
		      2 * room(lim, 0, (b.addr.maxlen > p.addr.maxlen ?
					 b.addr.maxlen : p.addr.maxlen) + 1UL),
		      &cap);
	if (buf == NULL) {
		xti_syserr(ENOMEM);
		goto out;
	}
	((struct T_addr_req *)(void *)buf)->PRIM_type = T_ADDR_REQ;
	n = xti_ioctl(fd, TI_GETADDRS, buf, sizeof(struct T_addr_req), cap,
		      true);
	if (n < 0)
		goto out;
	if (xti_dec_addr_ack(buf, n, &loc, &rem) != 0) {
		xti_proto();
		goto out;
	}
	if (st == T_UNBND)
		loc.len = 0;
	if (st != T_DATAXFER && st != T_OUTREL && st != T_INREL)
		rem.len = 0;
	if ((boundaddr != NULL && xti_nb_fits(&b.addr, loc.len) != 0) ||
	    (peeraddr != NULL && xti_nb_fits(&p.addr, rem.len) != 0)) {
		xti_err(TBUFOVFLW);
		goto out;
	}
	if ((boundaddr != NULL &&
	     xti_nb_put(&boundaddr->addr, &b.addr, loc.p, loc.len) != 0) ||
	    (peeraddr != NULL &&
	     xti_nb_put(&peeraddr->addr, &p.addr, rem.p, rem.len) != 0)) {
		xti_syserr(EFAULT);
		goto out;
	}
	r = 0;
out:
	free(buf);
	xti_put(ep);
	return r;
}
