/*
 * xti_conn.c -- connection establishment: t_connect, t_rcvconnect,
 * t_listen, t_accept, t_snddis.
 *
 * T_CONN_REQ, T_CONN_RES and T_DISCON_REQ go down with putmsg (their
 * user data as the data part) and are acknowledged by T_OK_ACK or
 * T_ERROR_ACK (xti_ack_wait).  The confirmation and the indications come
 * up with getmsg.  An indication that is not the one a call waits for is
 * held (a T_DISCON_IND refusing the connection, a T_CONN_IND on a
 * listener that connects, ...) and the call fails TLOOK; t_look() then
 * reports it and the matching call consumes it.
 *
 * The outstanding connection indications (ocnt) are the T_CONN_INDs
 * received with t_listen() and not yet accepted or refused; their
 * sequence numbers are checked here (TBADSEQ) and choose the next state
 * (accept1/2/3, snddis1/2, rcvdis2/3 of the state table).
 *
 * t_accept() onto another endpoint names it by the ACCEPTOR_id its
 * provider gives (TI_CAPABILITY, TC1_ACCEPTOR_ID); 0 means the listening
 * endpoint itself.  Two endpoints are of the same provider when their
 * streams end in the same driver (I_LIST).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stropts.h>

#include "xti_impl.h"

/* ---- building a request: structure, then regions (aligned) ---- */

struct req {
	char *buf;
	size_t len, cap;
	char stack[512];
};

static int req_init(struct req *q, size_t hdr, size_t extra)
{
	q->cap = hdr + extra + 8;
	q->buf = q->cap <= sizeof(q->stack) ? q->stack : malloc(q->cap);
	q->len = hdr;
	if (q->buf == NULL)
		return xti_syserr(ENOMEM);
	memset(q->buf, 0, q->cap);
	return 0;
}

static void req_free(struct req *q)
{
	if (q->buf != q->stack)
		free(q->buf);
}

/* Append the application's bytes; their offset in *off (0 if none). */
static int req_add(struct req *q, const struct netbuf *nb, t_scalar_t *off,
		   t_scalar_t *len)
{
	size_t at = XTI_ALIGN4(q->len);

	*len = (t_scalar_t)nb->len;
	*off = 0;
	if (nb->len == 0)
		return 0;
	if (at + nb->len > q->cap)
		return xti_syserr(EINVAL);
	if (xti_uin(q->buf + at, nb->buf, nb->len) != 0)
		return xti_syserr(EFAULT);
	*off = (t_scalar_t)at;
	q->len = at + nb->len;
	return 0;
}

/* Is a T_DISCON_IND waiting for the application: at the head, held,
 * or in the hands of another thread's read that will hold it (it holds
 * it just after it stops being a reader: looked at again a few times
 * over a few milliseconds)? */
static bool disconnect_crossed(struct xti_ep *ep)
{
	int err = t_errno;
	bool seen = false;

	for (int i = 0; i < 10 && !seen; i++) {
		if (i > 0)
			usleep(1000);
		seen = xti_look_for(ep, T_DISCONNECT) == T_DISCONNECT ||
		       __atomic_load_n(&ep->ep_rd_active, __ATOMIC_SEQ_CST) > 0;
	}
	t_errno = err;
	return seen;
}

/* Send an acknowledged request (control part ctl, the application's
 * data ud as the data part) and wait for the ack of prim: 0, or -1 with
 * t_errno.  Flow control on a non-blocking endpoint is TSYSERR EAGAIN
 * (TFLOW is for data). */
static int put_acked(struct xti_ep *ep, int fd, const void *ctl, int clen,
		     const struct netbuf *ud, t_scalar_t prim)
{
	int r = xti_putmsg(fd, ctl, clen, ud->buf,
			   ud->len > 0 ? (int)ud->len : -1, 0);

	if (r == 0) {
		r = xti_ack_wait(ep, prim);
		/* The library found the call valid in its state, and the
		 * provider did not: a disconnect may have crossed the
		 * request (the provider idle already, or the indication
		 * withdrawn).  Then the call's answer is TLOOK, the state
		 * the library's until t_rcvdis. */
		if (r != 0 && (prim == T_DISCON_REQ || prim == T_CONN_RES) &&
		    (t_errno == TOUTSTATE || t_errno == TBADSEQ) &&
		    disconnect_crossed(ep))
			return xti_err(TLOOK);
		return r;
	}
	if (t_errno == TFLOW)
		xti_syserr(EAGAIN);
	return r;
}

/* ---- handing a call's fields to the application ---- */

/* Does each value fit its netbuf? */
static bool call_fits(const struct t_call *c, size_t alen, size_t olen,
		      size_t dlen)
{
	return xti_nb_fits(&c->addr, alen) == 0 &&
	       xti_nb_fits(&c->opt, olen) == 0 &&
	       xti_nb_fits(&c->udata, dlen) == 0;
}

static int call_put(struct t_call *uc, const struct t_call *c,
		    const struct xti_dec_conn *dc, const char *dat,
		    size_t dlen, bool seq)
{
	if (xti_nb_put(&uc->addr, &c->addr, dc->addr.p, dc->addr.len) != 0 ||
	    xti_nb_put(&uc->opt, &c->opt, dc->opt.p, dc->opt.len) != 0 ||
	    xti_nb_put(&uc->udata, &c->udata, dat, dlen) != 0 ||
	    (seq && xti_uout(&uc->sequence, &dc->seq, sizeof(int)) != 0))
		return xti_syserr(EFAULT);
	return 0;
}

/* Is the first held message not prim?  Then it needs attention first. */
static bool held_other(struct xti_ep *ep, t_scalar_t prim,
		       struct xti_msg **mine)
{
	bool other;

	*mine = NULL;
	pthread_mutex_lock(&ep->ep_lock);
	other = ep->ep_held != NULL && ep->ep_held->m_prim != prim;
	if (ep->ep_held != NULL && !other)
		*mine = xti_held_pop(ep);
	pthread_mutex_unlock(&ep->ep_lock);
	return other;
}

/* After an answer to an indication whose count was not known (t_sync
 * in T_INCON): ask the provider whether any remain. */
static void incon_refresh(struct xti_ep *ep)
{
	struct ti_sync_ack sa;
	bool unk;

	pthread_mutex_lock(&ep->ep_lock);
	unk = ep->ep_sequnk && ep->ep_state == T_IDLE;
	pthread_mutex_unlock(&ep->ep_lock);
	if (!unk || xti_sync_info(ep, &sa) != 0)
		return;
	pthread_mutex_lock(&ep->ep_lock);
	if (sa.tsa_info.CURRENT_state == TS_WRES_CIND &&
	    ep->ep_state == T_IDLE) {
		xti_set_state(ep, T_INCON);
		ep->ep_ocnt = ep->ep_nseq + 1;
	} else {
		ep->ep_sequnk = false;
	}
	pthread_mutex_unlock(&ep->ep_lock);
}

/* ---- t_connect / t_rcvconnect ---- */

/* The confirmation (T_OUTCON): fill call, T_DATAXFER.  From the held
 * message m, or read. */
static int conn_con(struct xti_ep *ep, struct t_call *ucall,
		    const struct t_call *c)
{
	struct xti_dec_conn dc;
	struct xti_rd r;
	t_scalar_t lim;
	int rv = -1;

	pthread_mutex_lock(&ep->ep_lock);
	lim = ep->ep_info.CDATA_size;
	pthread_mutex_unlock(&ep->ep_lock);
	xti_rd_lib(&r, lim, EV_RCVCONNECT);
	if (xti_read(ep, &r) != 0)
		goto out;
	if (r.prim != T_CONN_CON) {
		int ev = xti_dec_event(r.cbuf, r.clen, false);
		if (ev == T_DISCONNECT || ev == T_LISTEN)
			rv = xti_hold(ep, &r);
		else
			xti_proto();
		goto out;
	}
	if (r.more || xti_dec_conn_con(r.cbuf, r.clen, &dc) != 0) {
		xti_proto();
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	xti_set_state(ep, T_DATAXFER);
	xti_conn_reset(ep);
	pthread_mutex_unlock(&ep->ep_lock);
	if (ucall == NULL) {
		rv = 0;
		goto out;
	}
	if (!call_fits(c, dc.addr.len, dc.opt.len, r.dlen > 0 ? r.dlen : 0)) {
		xti_err(TBUFOVFLW);
		goto out;
	}
	rv = call_put(ucall, c, &dc, r.dbuf, r.dlen > 0 ? r.dlen : 0, false);
out:
	xti_rd_free(&r);
	return rv;
}

static bool data_ok(t_scalar_t lim, unsigned int len)
{
	return xti_size_ok(lim, len);
}

int t_connect(int fd, const struct t_call *sndcall, struct t_call *rcvcall)
{
	struct t_call sc, rc;
	struct T_conn_req cr;
	struct T_info_ack ia;
	struct xti_ep *ep;
	struct req q;
	int r = -1;

	ep = xti_begin(fd, NEED_CONN, EV_CONNECT1, -1);
	if (ep == NULL)
		return -1;
	memset(&rc, 0, sizeof(rc));
	if (xti_uin(&sc, sndcall, sizeof(sc)) != 0 ||
	    (rcvcall != NULL && xti_uin(&rc, rcvcall, sizeof(rc)) != 0)) {
		xti_syserr(EFAULT);
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	ia = ep->ep_info;
	pthread_mutex_unlock(&ep->ep_lock);
	if (!xti_size_ok(ia.ADDR_size, sc.addr.len)) {
		xti_err(TBADADDR);
		goto out;
	}
	if (!xti_size_ok(ia.OPT_size, sc.opt.len)) {
		xti_err(TBADOPT);
		goto out;
	}
	if (!data_ok(ia.CDATA_size, sc.udata.len)) {
		xti_err(TBADDATA);
		goto out;
	}
	if (xti_look_stop(ep, T_LISTEN | T_DISCONNECT) != 0)
		goto out;
	if (req_init(&q, sizeof(cr), XTI_ALIGN4(sc.addr.len) + sc.opt.len) != 0)
		goto out;
	cr.PRIM_type = T_CONN_REQ;
	if (req_add(&q, &sc.addr, &cr.DEST_offset, &cr.DEST_length) != 0 ||
	    req_add(&q, &sc.opt, &cr.OPT_offset, &cr.OPT_length) != 0) {
		req_free(&q);
		goto out;
	}
	memcpy(q.buf, &cr, sizeof(cr));
	xti_req_begin(ep);
	r = put_acked(ep, fd, q.buf, (int)q.len, &sc.udata, T_CONN_REQ);
	req_free(&q);
	if (r == 0) {
		/* (before the request ends: a reader that handed the ack
		 * over looks at the state then) */
		pthread_mutex_lock(&ep->ep_lock);
		xti_set_state(ep, T_OUTCON);	/* connect2, until confirmed */
		pthread_mutex_unlock(&ep->ep_lock);
	}
	xti_req_end(ep);
	if (r != 0)
		goto out;
	if (xti_nonblock(fd)) {
		r = xti_err(TNODATA);
		goto out;
	}
	r = conn_con(ep, rcvcall, &rc);
out:
	xti_put(ep);
	return r;
}

int t_rcvconnect(int fd, struct t_call *call)
{
	struct t_call c;
	struct xti_msg *m;
	struct xti_ep *ep;
	int r = -1;

	ep = xti_begin(fd, NEED_CONN, EV_RCVCONNECT, -1);
	if (ep == NULL)
		return -1;
	memset(&c, 0, sizeof(c));
	if (call != NULL && xti_uin(&c, call, sizeof(c)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	if (held_other(ep, T_CONN_CON, &m)) {
		xti_err(TLOOK);
		goto out;
	}
	xti_msg_free(m);	/* never held: a T_CONN_CON is read at once */
	r = conn_con(ep, call, &c);
out:
	xti_put(ep);
	return r;
}

/* ---- t_listen ---- */

/* A connection indication (ctl, clen; data dat, dlen) for the user. */
static int conn_ind(struct xti_ep *ep, struct t_call *uc,
		    const struct t_call *c, const char *ctl, int clen,
		    const char *dat, int dlen)
{
	struct xti_dec_conn dc;
	int err;

	if (xti_dec_conn_ind(ctl, clen, &dc) != 0)
		return xti_proto();
	pthread_mutex_lock(&ep->ep_lock);
	err = xti_seq_add(ep, dc.seq);
	if (err == 0)
		xti_set_state(ep, T_INCON);
	pthread_mutex_unlock(&ep->ep_lock);
	if (err != 0)
		return xti_syserr(err);
	if (!call_fits(c, dc.addr.len, dc.opt.len, (size_t)dlen)) {
		if (xti_uout(&uc->sequence, &dc.seq, sizeof(int)) != 0)
			return xti_syserr(EFAULT);
		return xti_err(TBUFOVFLW);
	}
	return call_put(uc, c, &dc, dat, (size_t)dlen, true);
}

int t_listen(int fd, struct t_call *call)
{
	struct t_call c;
	struct xti_msg *m;
	struct xti_ep *ep;
	struct xti_rd r;
	t_scalar_t lim;
	int rv = -1, full;

	ep = xti_begin(fd, NEED_CONN, EV_LISTEN, -1);
	if (ep == NULL)
		return -1;
	if (xti_uin(&c, call, sizeof(c)) != 0) {
		xti_put(ep);
		return xti_syserr(EFAULT);
	}
	pthread_mutex_lock(&ep->ep_lock);
	lim = ep->ep_info.CDATA_size;
	full = ep->ep_qlen == 0 ? TBADQLEN :
	       ep->ep_ocnt >= (int)ep->ep_qlen ? TQFULL : 0;
	pthread_mutex_unlock(&ep->ep_lock);
	if (full) {
		xti_put(ep);
		return xti_err(full);
	}
	if (held_other(ep, T_CONN_IND, &m)) {
		xti_put(ep);
		return xti_err(TLOOK);
	}
	if (m != NULL) {
		rv = conn_ind(ep, call, &c, m->m_ctl, m->m_clen, m->m_dat,
			      m->m_dlen);
		xti_msg_free(m);
		xti_put(ep);
		return rv;
	}
	xti_rd_lib(&r, lim, EV_LISTEN);
	if (xti_read(ep, &r) != 0)
		goto out;
	if (r.prim == T_CONN_IND) {
		if (r.more)
			xti_proto();
		else
			rv = conn_ind(ep, call, &c, r.cbuf, r.clen, r.dbuf,
				      r.dlen > 0 ? r.dlen : 0);
	} else if (r.prim == T_DISCON_IND) {
		rv = xti_hold(ep, &r);
	} else {
		xti_proto();
	}
out:
	xti_rd_free(&r);
	xti_put(ep);
	return rv;
}

/* ---- t_accept ---- */

/* The driver at the bottom of fd's stream ("" for a pipe); 0 or -1. */
static int driver_name(int fd, char *name, size_t n)
{
	struct str_mlist ml[32];
	struct str_list sl = { 0, ml };
	int k = ioctl(fd, I_LIST, NULL);

	name[0] = '\0';
	if (k == 0)
		return 0;		/* a pipe: no driver */
	if (k < 0 || k > 32)
		return -1;
	sl.sl_nmods = k;
	if (ioctl(fd, I_LIST, &sl) != 0 || sl.sl_nmods <= 0 ||
	    sl.sl_nmods > k)
		return -1;
	strncpy(name, ml[sl.sl_nmods - 1].l_name, n - 1);
	name[n - 1] = '\0';
	return 0;
}

static bool same_provider(int a, int b)
{
	char na[FMNAMESZ + 1], nb[FMNAMESZ + 1];

	if (driver_name(a, na, sizeof(na)) != 0 ||
	    driver_name(b, nb, sizeof(nb)) != 0)
		return true;		/* cannot tell: the provider will */
	return strcmp(na, nb) == 0;
}

/* resfd's ACCEPTOR_id; 0 or -1 with t_errno. */
static int acceptor_id(int resfd, t_uscalar_t *id)
{
	union {
		struct T_capability_req req;
		struct T_capability_ack ack;
		char room[128];
	} u;
	struct T_capability_ack ca;
	int n;

	u.req.PRIM_type = T_CAPABILITY_REQ;
	u.req.CAP_bits1 = TC1_ACCEPTOR_ID;
	n = xti_ioctl(resfd, TI_CAPABILITY, &u, sizeof(u.req), sizeof(u),
		      true);
	if (n < 0)
		return -1;
	if (xti_dec_capability_ack(&u, n, &ca) != 0)
		return xti_proto();
	if (!(ca.CAP_bits1 & TC1_ACCEPTOR_ID))
		return xti_err(TNOTSUPPORT);
	*id = ca.ACCEPTOR_id;
	return 0;
}

/* Checks on the accepting endpoint res (not the listener). */
static int res_check(struct xti_ep *ep, struct xti_ep *res)
{
	int st, svc;
	unsigned int qlen;

	pthread_mutex_lock(&res->ep_lock);
	st = res->ep_state;
	qlen = res->ep_qlen;
	svc = res->ep_info.SERV_type;
	pthread_mutex_unlock(&res->ep_lock);
	pthread_mutex_lock(&ep->ep_lock);
	if (svc != ep->ep_info.SERV_type) {
		pthread_mutex_unlock(&ep->ep_lock);
		return xti_err(TPROVMISMATCH);
	}
	pthread_mutex_unlock(&ep->ep_lock);
	if (!same_provider(ep->ep_fd, res->ep_fd))
		return xti_err(TPROVMISMATCH);
	if (!xti_ev_ok(EV_PASSCONN, st))
		return xti_err(TOUTSTATE);
	if (st == T_IDLE && qlen > 0)
		return xti_err(TRESQLEN);
	return 0;
}

int t_accept(int fd, int resfd, const struct t_call *call)
{
	struct t_call c;
	struct T_conn_res cr;
	struct T_info_ack ia;
	struct xti_ep *ep, *res = NULL;
	t_uscalar_t id = 0;
	struct req q;
	int r = -1, err = 0;

	ep = xti_begin(fd, NEED_CONN, EV_ACCEPT1, -1);
	if (ep == NULL)
		return -1;
	if (resfd != fd) {
		res = xti_get(resfd);
		if (res == NULL)
			goto out;
		if (res_check(ep, res) != 0)
			goto out;
	}
	if (xti_uin(&c, call, sizeof(c)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	ia = ep->ep_info;
	if (res == NULL && ep->ep_ocnt > 1)
		err = TINDOUT;
	else if (!xti_seq_has(ep, c.sequence))
		err = TBADSEQ;
	pthread_mutex_unlock(&ep->ep_lock);
	if (err == 0 && !xti_size_ok(ia.OPT_size, c.opt.len))
		err = TBADOPT;
	if (err == 0 && !data_ok(ia.CDATA_size, c.udata.len))
		err = TBADDATA;
	if (err != 0) {
		xti_err(err);
		goto out;
	}
	if (xti_look_stop(ep, T_LISTEN | T_DISCONNECT) != 0)
		goto out;
	if (res != NULL && acceptor_id(resfd, &id) != 0)
		goto out;
	if (req_init(&q, sizeof(cr), c.opt.len) != 0)
		goto out;
	cr.PRIM_type = T_CONN_RES;
	cr.ACCEPTOR_id = id;
	cr.SEQ_number = c.sequence;
	if (req_add(&q, &c.opt, &cr.OPT_offset, &cr.OPT_length) != 0) {
		req_free(&q);
		goto out;
	}
	memcpy(q.buf, &cr, sizeof(cr));
	xti_req_begin(ep);
	r = put_acked(ep, fd, q.buf, (int)q.len, &c.udata, T_CONN_RES);
	req_free(&q);
	if (r == 0) {
		pthread_mutex_lock(&ep->ep_lock);
		xti_seq_del(ep, c.sequence);
		if (res == NULL)
			xti_set_state(ep, xti_next_state(EV_ACCEPT1, T_INCON));
		else
			xti_set_state(ep, ep->ep_ocnt > 0 ? T_INCON : T_IDLE);
		if (res == NULL)
			xti_conn_reset(ep);
		pthread_mutex_unlock(&ep->ep_lock);
		if (res != NULL) {
			pthread_mutex_lock(&res->ep_lock);
			xti_set_state(res, T_DATAXFER);	/* pass_conn */
			xti_conn_reset(res);
			pthread_mutex_unlock(&res->ep_lock);
		}
	}
	xti_req_end(ep);
	if (r != 0)
		goto out;
	incon_refresh(ep);
out:
	if (res != NULL)
		xti_put(res);
	xti_put(ep);
	return r;
}

/* ---- t_snddis ---- */

int t_snddis(int fd, const struct t_call *call)
{
	struct t_call c;
	struct T_discon_req dr;
	struct xti_ep *ep;
	t_scalar_t lim;
	int r = -1, st, err = 0;

	ep = xti_begin(fd, NEED_CONN, EV_SNDDIS1, -1);
	if (ep == NULL)
		return -1;
	memset(&c, 0, sizeof(c));
	if (call != NULL && xti_uin(&c, call, sizeof(c)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	pthread_mutex_lock(&ep->ep_lock);
	st = ep->ep_state;
	lim = ep->ep_info.DDATA_size;
	if (st == T_INCON && (call == NULL || !xti_seq_has(ep, c.sequence)))
		err = TBADSEQ;
	pthread_mutex_unlock(&ep->ep_lock);
	if (err == 0 && !data_ok(lim, c.udata.len))
		err = TBADDATA;
	if (err != 0) {
		xti_err(err);
		goto out;
	}
	if (xti_look_stop(ep, T_DISCONNECT) != 0)
		goto out;
	/* abortive: what is queued to send may go, and must not hold the
	 * disconnect behind flow control */
	if (st == T_DATAXFER || st == T_OUTREL || st == T_INREL)
		ioctl(fd, I_FLUSH, FLUSHW);
	dr.PRIM_type = T_DISCON_REQ;
	dr.SEQ_number = st == T_INCON ? c.sequence : -1;
	xti_req_begin(ep);
	r = put_acked(ep, fd, &dr, sizeof(dr), &c.udata, T_DISCON_REQ);
	if (r == 0) {
		pthread_mutex_lock(&ep->ep_lock);
		if (st == T_INCON) {
			xti_seq_del(ep, c.sequence);
			xti_set_state(ep, ep->ep_ocnt > 0 ? T_INCON : T_IDLE);
		} else {
			xti_set_state(ep, T_IDLE);
			xti_conn_reset(ep);
		}
		pthread_mutex_unlock(&ep->ep_lock);
	}
	xti_req_end(ep);
	if (r != 0)
		goto out;
	incon_refresh(ep);
out:
	xti_put(ep);
	return r;
}
