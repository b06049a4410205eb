/*
 * xti_io.c -- talking to the transport provider: timod ioctls, reading
 * messages, acknowledged requests, and looking at what is pending.
 *
 * Reading (xti_read).  A reader takes one whole message with getpmsg:
 * the control part always into a library buffer (grown while MORECTL),
 * the data part either into the caller's buffer (t_rcv, t_rcvudata: what
 * does not fit stays at the head for the next call) or into a library
 * buffer sized from the provider's limits and grown while MOREDATA.  A
 * T_OK_ACK or T_ERROR_ACK met on the way belongs to the thread waiting
 * for it (ep_req_busy): it is handed over in ep_ack, or dropped when
 * nobody waits (it would be a provider's garbage), and reading goes on.
 *
 * Waiting for an ack (xti_ack_wait).  The waiter reads with
 * getmsg(RS_HIPRI) only while no reader is inside getmsg; readers do not
 * enter while it does.  So either a reader takes the ack and hands it
 * over, or the waiter reads it itself: it is never left unread while the
 * waiter sleeps.  On a non-blocking descriptor the waiter sleeps in
 * poll(POLLPRI) (the ack of a request is due whatever O_NONBLOCK says);
 * a signal does not abandon the wait (the request was sent: its ack will
 * come), as in SVR4's libnsl.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <stropts.h>
#include <unistd.h>

#include "xti_impl.h"

bool xti_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

/* errno of a failed stream call -> t_errno */
static int io_err(int e)
{
	switch (e) {
	case EAGAIN:
		return xti_err(TNODATA);
	case EBADF:
	case ENOSTR:
		return xti_err(TBADF);
	default:
		return xti_syserr(e);
	}
}

/* ---- timod ioctls ---- */

/* Does the answer to cmd have a size the caller's buffer is made for
 * (a T_info_ack, a ti_sync_ack, a T_capability_ack, a T_ok_ack)? */
static bool fixed_answer(int cmd)
{
	return cmd == TI_GETINFO || cmd == TI_SYNC || cmd == TI_CAPABILITY ||
	       cmd == TI_UNBIND;
}

/* The head copies back the whole answer (ic_len says how much), so the
 * buffer given to I_STR must hold the largest timod sends, XTI_IOCMAX:
 * a caller's smaller buffer is filled through one of that size, unless
 * the answer's size is fixed.  (That one is mapped, not malloc'ed: a
 * 64 KiB block freed at the top of the heap can leave malloc trimming
 * and growing it for every large buffer after -- a brk() per received
 * GRO batch in /dev/udp, half its throughput at 16 KiB.)  An answer
 * larger than cap then comes back cut to cap bytes, and cap is returned:
 * the caller tells the cut answer from a whole one (TBUFOVFLW for the
 * application's buffer, not TPROTO). */
static int ioctl_common(int fd, int cmd, void *buf, int len, int cap,
			int retries, int timout)
{
	struct strioctl si;
	char *big = NULL, *dp = buf;
	bool cut_ok;
	int r;

	if (cap < len)
		cap = len;
	if (cap > XTI_IOCMAX)
		cap = XTI_IOCMAX;
	if (cap > len)
		memset((char *)buf + len, 0, (size_t)(cap - len));
	if (cap < XTI_IOCMAX && !fixed_answer(cmd)) {
		big = mmap(NULL, XTI_IOCMAX, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (big == MAP_FAILED)
			return xti_syserr(ENOMEM);
		memcpy(big, buf, (size_t)len);
		dp = big;
	}
	for (;;) {
		si.ic_cmd = cmd;
		si.ic_timout = timout;
		si.ic_len = len;
		si.ic_dp = dp;
		r = ioctl(fd, I_STR, &si);
		if (r < 0 && errno == EINTR && retries-- > 0) {
			if (big != NULL)	/* (the request again) */
				memcpy(big, buf, (size_t)len);
			continue;
		}
		break;
	}
	cut_ok = big != NULL;
	if (big != NULL) {
		if (r >= 0 && si.ic_len >= 0)
			memcpy(buf, big, (size_t)(si.ic_len < cap ? si.ic_len
							       : cap));
		munmap(big, XTI_IOCMAX);
	}
	if (r < 0) {
		if (errno == EBADF || errno == ENOSTR)
			return xti_err(TBADF);
		if (errno == EPROTO)	/* timod found the answer malformed */
			return xti_proto();
		return xti_syserr(errno);
	}
	if (r > 0)
		return xti_tpi_err(TI_TLIERR(r), TI_SYSERR(r));
	if (si.ic_len < 0 || (si.ic_len > cap && !cut_ok))
		return xti_proto();
	return si.ic_len > cap ? cap : si.ic_len;
}

int xti_ioctl(int fd, int cmd, void *buf, int len, int cap, bool retry)
{
	return ioctl_common(fd, cmd, buf, len, cap, retry ? INT_MAX : 0, 0);
}

int xti_getinfo(int fd, struct T_info_ack *ia)
{
	union {
		struct T_info_req req;
		struct T_info_ack ack;
		char room[128];
	} u;
	int n;

	u.req.PRIM_type = T_INFO_REQ;
	n = xti_ioctl(fd, TI_GETINFO, &u, sizeof(u.req), sizeof(u), true);
	if (n < 0)
		return -1;
	if (xti_dec_info_ack(&u, n, ia) != 0)
		return xti_proto();
	return 0;
}

/* TI_SYNC; brief: a few tries of a second each (signals may keep
 * coming), for a call that already failed and only looks */
static int sync_fd(int fd, struct ti_sync_ack *sa, bool brief)
{
	union {
		struct ti_sync_req req;
		struct ti_sync_ack ack;
		char room[128];
	} u;
	int n;

	u.req.tsr_flags = TSRF_INFO_REQ | TSRF_QLEN_REQ;
	n = ioctl_common(fd, TI_SYNC, &u, sizeof(u.req), sizeof(u),
			 brief ? 3 : INT_MAX, brief ? 1 : 0);
	if (n < 0)
		return -1;
	if (xti_dec_sync_ack(&u, n, sa) != 0)
		return xti_proto();
	return 0;
}

int xti_sync_fd(int fd, struct ti_sync_ack *sa)
{
	return sync_fd(fd, sa, false);
}

int xti_sync_brief(int fd, struct ti_sync_ack *sa)
{
	return sync_fd(fd, sa, true);
}

int xti_sync_info(struct xti_ep *ep, struct ti_sync_ack *sa)
{
	return xti_sync_fd(ep->ep_fd, sa);
}

/* The first message at the head: its primitive (-1: data without a
 * control part, -2: none, -3: unreadable). */
static t_scalar_t peek_prim(int fd)
{
	char cb[32];
	struct strpeek sp;
	t_scalar_t prim;

	memset(&sp, 0, sizeof(sp));
	sp.ctlbuf.maxlen = sizeof(cb);
	sp.ctlbuf.buf = cb;
	sp.databuf.maxlen = 0;
	sp.databuf.buf = NULL;
	sp.flags = 0;
	if (ioctl(fd, I_PEEK, &sp) <= 0)
		return -2;
	if (sp.ctlbuf.len < 0)
		return -1;
	if (xti_dec_prim(cb, sp.ctlbuf.len, &prim) != 0)
		return -3;
	return prim;
}

static bool is_data_prim(t_scalar_t p)
{
	return p == -1 || p == T_DATA_IND || p == T_EXDATA_IND ||
	       p == T_OPTDATA_IND;
}

int xti_state_from_tpi(int fd, int ts)
{
	t_scalar_t p;

	switch (ts) {
	case TS_UNBND:
		return T_UNBND;
	case TS_IDLE:
		/* data or a disconnect not yet read: the user is still in
		 * the connection */
		p = peek_prim(fd);
		if (is_data_prim(p) || p == T_DISCON_IND)
			return T_DATAXFER;
		if (p == T_ORDREL_IND)
			return T_OUTREL;
		return T_IDLE;
	case TS_WCON_CREQ:
		return T_OUTCON;
	case TS_WRES_CIND:
		return T_INCON;
	case TS_DATA_XFER:
		return peek_prim(fd) == T_CONN_CON ? T_OUTCON : T_DATAXFER;
	case TS_WIND_ORDREL:
		return T_OUTREL;
	case TS_WREQ_ORDREL:
		/* the orderly release (or data before it) not yet read */
		p = peek_prim(fd);
		if (is_data_prim(p) || p == T_ORDREL_IND)
			return T_DATAXFER;
		return T_INREL;
	default:
		return -1;	/* waiting for an ack: changing */
	}
}

/* ---- reading ---- */

void xti_rd_init(struct xti_rd *r, void *udata, int umax)
{
	memset(r, 0, offsetof(struct xti_rd, cstack));
	r->cbuf = r->cstack;
	r->cmax = sizeof(r->cstack);
	r->dbuf = udata;
	r->dmax = umax;
	r->duser = udata != NULL || umax >= 0;
	if (r->dmax < 0)
		r->dmax = 0;
	r->clen = r->dlen = -1;
	r->prim = -1;
	r->ev = -1;
}

void xti_rd_lib(struct xti_rd *r, t_scalar_t lim, int ev)
{
	xti_rd_init(r, NULL, -1);
	r->dmax = lim > 0 && lim < XTI_IOCMAX ? lim + 1 : 4096;
	r->ev = ev;
}

void xti_rd_free(struct xti_rd *r)
{
	if (r->cown)
		free(r->cbuf);
	if (r->down)
		free(r->dbuf);
	r->cbuf = r->cstack;
	r->cown = false;
	r->dbuf = NULL;
	r->down = false;
}

/* Grow a library buffer to at least want bytes (doubling); false when
 * it would pass the limit or memory is short. */
static bool grow(char **buf, int *max, bool *own, int want, int limit)
{
	int n = *max > 0 ? *max : 256;
	char *p;

	if (want > limit)
		return false;
	while (n < want)
		n = n > limit / 2 ? limit : n * 2;
	if (*own) {
		p = realloc(*buf, (size_t)n);
	} else {
		p = malloc((size_t)n);
		if (p != NULL && *max > 0 && *buf != NULL)
			memcpy(p, *buf, (size_t)*max);
	}
	if (p == NULL)
		return false;
	*buf = p;
	*max = n;
	*own = true;
	return true;
}

/* Readers enter and leave the stream (see the top of the file).  A
 * reader of event ev (not -1) does not enter when the state no longer
 * allows it (another thread's call changed it since xti_begin).
 *
 * Entering and an ack waiter's start exclude each other as in Dekker's
 * algorithm, each side storing its own flag before loading the other's
 * (all four sequentially consistent): a reader increments ep_rd_active,
 * then loads ep_ack_reading; the waiter, under ep_lock, sets
 * ep_ack_reading, then loads ep_rd_active.  At least one of them sees
 * the other.  A reader that sees ep_ack_reading set backs out (leaves
 * as below) and enters the locked way: under ep_lock, waiting on ep_cv
 * while ep_ack_reading is set.  A waiter that sees a reader in clears
 * ep_ack_reading again, still under the lock, and sleeps until a
 * reader leaves.  So the common entry (xti_begin_rd with no ack waiter
 * reading) takes no lock, and an ack is never left unread while its
 * waiter sleeps: whoever is in getmsg(0) takes it.
 *
 * A reader that took no ack leaves without the lock: it decrements
 * ep_rd_active, then reads ep_req_busy (both sequentially consistent),
 * and only when a request is out takes the lock to wake its waiter.  A
 * waiter that saw the reader still in (its load of ep_rd_active before
 * the decrement) had set ep_req_busy before, so the reader sees it set
 * and its broadcast, under the lock the waiter holds until it sleeps,
 * is not lost.  A reader holding an ack leaves under the lock, handing
 * the ack over before the waiter can see ep_rd_active at 0. */
static void rd_enter_locked(struct xti_ep *ep)
{
	while (ep->ep_ack_reading)
		pthread_cond_wait(&ep->ep_cv, &ep->ep_lock);
}

static bool rd_enter(struct xti_ep *ep, int ev)
{
	bool ok;

	pthread_mutex_lock(&ep->ep_lock);
	rd_enter_locked(ep);
	ok = ev < 0 || xti_ev_ok(ev, ep->ep_state);
	if (ok)
		__atomic_add_fetch(&ep->ep_rd_active, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&ep->ep_lock);
	return ok;
}

static bool rd_is_ack(const struct xti_rd *r)
{
	return r != NULL && r->hipri && r->clen >= (int)sizeof(t_scalar_t) &&
	       (r->prim == T_OK_ACK || r->prim == T_ERROR_ACK);
}

/* Control bytes c (clen) of a high priority message: an ack? */
static bool ack_bytes(const char *c, int clen)
{
	t_scalar_t prim;

	if (clen < (int)sizeof(prim))
		return false;
	memcpy(&prim, c, sizeof(prim));
	return prim == T_OK_ACK || prim == T_ERROR_ACK;
}

/* Give ack c (clen bytes) to the request that waits for it (ep_lock
 * held). */
static void ack_give_locked(struct xti_ep *ep, const char *c, int clen)
{
	if (ep->ep_req_busy && !ep->ep_ack_have) {
		int n = clen < (int)sizeof(ep->ep_ack) ?
			clen : (int)sizeof(ep->ep_ack);
		memcpy(ep->ep_ack, c, (size_t)n);
		ep->ep_acklen = n;
		ep->ep_ack_have = true;
	}
	if (ep->ep_req_busy)
		pthread_cond_broadcast(&ep->ep_cv);
}

/* A reader reading the rest of r's message got, from rd_once, a whole
 * high priority message instead (control part cl bytes appended at
 * r's control end, no data part): another thread's ack, which goes
 * ahead of the rest?  Then it goes to its waiter (the reader still
 * inside, r unchanged) and true: read on for the rest. */
static bool ack_pass(struct xti_ep *ep, const struct xti_rd *r, int rv,
		     int flags, int cl, int dl)
{
	const char *c = r->cbuf + (r->clen < 0 ? 0 : r->clen);

	if (cl < 0 || dl >= 0 || flags != MSG_HIPRI ||
	    (rv & (MORECTL | MOREDATA)) || !ack_bytes(c, cl))
		return false;
	pthread_mutex_lock(&ep->ep_lock);
	ack_give_locked(ep, c, cl);
	pthread_mutex_unlock(&ep->ep_lock);
	return true;
}

/* Leave; an ack r holds goes to its waiter.  True if r was an ack. */
static bool rd_leave(struct xti_ep *ep, struct xti_rd *r)
{
	if (!rd_is_ack(r)) {
		__atomic_sub_fetch(&ep->ep_rd_active, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&ep->ep_req_busy, __ATOMIC_SEQ_CST)) {
			pthread_mutex_lock(&ep->ep_lock);
			pthread_cond_broadcast(&ep->ep_cv);
			pthread_mutex_unlock(&ep->ep_lock);
		}
		return false;
	}
	pthread_mutex_lock(&ep->ep_lock);
	ack_give_locked(ep, r->cbuf, r->clen);
	__atomic_sub_fetch(&ep->ep_rd_active, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&ep->ep_lock);
	return true;
}

struct xti_ep *xti_begin_rd(int fd, int need, int ev)
{
	struct xti_ep *ep = xti_get_cached(fd);
	int err;

	if (ep == NULL)
		return NULL;
	/* the common entry: no ack waiter reads, the checks pass */
	__atomic_add_fetch(&ep->ep_rd_active, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&ep->ep_ack_reading, __ATOMIC_SEQ_CST) &&
	    xti_begin_err(ep, need, ev, -1) == 0)
		return ep;
	rd_leave(ep, NULL);
	/* the locked one */
	pthread_mutex_lock(&ep->ep_lock);
	err = xti_begin_err(ep, need, ev, -1);
	if (err == 0 && ep->ep_ack_reading) {
		/* an ack waiter reads: wait for it, then check again (its
		 * request may have changed the state) */
		rd_enter_locked(ep);
		err = xti_begin_err(ep, need, ev, -1);
	}
	if (err == 0)
		__atomic_add_fetch(&ep->ep_rd_active, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&ep->ep_lock);
	if (err != 0) {
		xti_put_cached(ep);
		xti_err(err);
		return NULL;
	}
	return ep;
}

void xti_rd_quit(struct xti_ep *ep)
{
	rd_leave(ep, NULL);
}

/* One getpmsg into r at its current fill; the stream's return value or
 * -1 with errno. */
static int rd_once(int fd, struct xti_rd *r, int *band, int *flags,
		   int *clen, int *dlen)
{
	struct strbuf c, d;
	int cl = r->clen < 0 ? 0 : r->clen;
	int dl = r->dlen < 0 ? 0 : r->dlen;
	int rv;

	c.maxlen = r->cmax - cl;
	c.len = 0;
	c.buf = r->cbuf + cl;
	d.maxlen = r->dmax - dl;
	d.len = 0;
	d.buf = r->dbuf != NULL ? r->dbuf + dl : NULL;
	*band = 0;
	*flags = MSG_ANY | (r->nowait ? STREAMS_GETPMSG_NOWAIT : 0);
	rv = streams_getpmsg_direct(fd, &c, &d, band, flags);
	*clen = c.len;
	*dlen = d.len;
	return rv;
}

#define CTL_LIMIT	(XTI_IOCMAX + 4096)

/* Read a whole message into r (the caller is a reader).  0, or an
 * errno; EPROTO when it was malformed or too big (it is consumed). */
static int rd_get(struct xti_ep *ep, struct xti_rd *r)
{
	int band, flags, rv = 0, cl, dl;
	bool first = true, garbled = false, toolong = false;

	r->clen = r->dlen = -1;
	r->more = false;
	r->prim = -1;
	if (!r->duser && r->dbuf == NULL) {
		int want = r->dmax > 0 ? r->dmax : 4096;
		r->dmax = 0;
		if (!grow(&r->dbuf, &r->dmax, &r->down, want, XTI_MAXBUF))
			return ENOMEM;
	}
	for (;;) {
		bool want_ctl = (rv & MORECTL) != 0;
		int prev = rv;

		rv = rd_once(ep->ep_fd, r, &band, &flags, &cl, &dl);
		if (rv < 0)
			return first ? errno : EPROTO;
		/* an ack that overtook the rest of this message (a priority
		 * message goes ahead of what was put back) is its waiter's:
		 * the rest of an ordinary message comes back as one, so a
		 * priority message now is a new one -- also while control
		 * bytes are still owed (MORECTL) */
		if (!first && !r->hipri &&
		    ack_pass(ep, r, rv, flags, cl, dl)) {
			rv = prev;	/* (what the rest was) */
			continue;
		}
		if (first) {
			r->band = band;
			r->hipri = flags == MSG_HIPRI;
			if (rv == 0 && cl == 0 && dl == 0)
				return ENXIO;		/* hangup */
		} else if (want_ctl != (cl >= 0)) {
			garbled = true;		/* not the rest of it */
		}
		if (cl >= 0)
			r->clen = (r->clen < 0 ? 0 : r->clen) + cl;
		if (dl >= 0)
			r->dlen = (r->dlen < 0 ? 0 : r->dlen) + dl;
		first = false;
		if ((rv & MORECTL) && !grow(&r->cbuf, &r->cmax, &r->cown,
					    r->cmax * 2, CTL_LIMIT)) {
			toolong = true;
			r->clen = 0;		/* read on, keep nothing */
		}
		if ((rv & MOREDATA) && !r->duser && !(rv & MORECTL) &&
		    r->dlen >= r->dmax &&
		    !grow(&r->dbuf, &r->dmax, &r->down, r->dmax * 2,
			  XTI_MAXBUF)) {
			toolong = true;
			r->dlen = 0;
		}
		if ((rv & MORECTL) || ((rv & MOREDATA) && !r->duser))
			continue;
		r->more = (rv & MOREDATA) != 0;
		break;
	}
	if (r->clen >= 0 && xti_dec_prim(r->cbuf, r->clen, &r->prim) != 0)
		garbled = true;
	if (garbled || toolong)
		return EPROTO;
	return 0;
}

/* After handing over an ack: let its request finish; may the caller
 * still do what it does? */
static bool still_ok(struct xti_ep *ep, int ev)
{
	bool ok;

	pthread_mutex_lock(&ep->ep_lock);
	while (ep->ep_req_busy && !(ep->ep_flags & EPF_DEAD))
		pthread_cond_wait(&ep->ep_cv, &ep->ep_lock);
	ok = ev < 0 || xti_ev_ok(ev, ep->ep_state);
	pthread_mutex_unlock(&ep->ep_lock);
	return ok;
}

int xti_read(struct xti_ep *ep, struct xti_rd *r)
{
	int err;

	for (;;) {
		if (r->entered)
			r->entered = false;	/* taken by xti_begin_rd */
		else if (!rd_enter(ep, r->ev))
			return xti_err(TOUTSTATE);
		err = rd_get(ep, r);
		if (!rd_leave(ep, err == 0 ? r : NULL))
			break;
		/* an ack: read on, unless another thread's request
		 * changed the state under us */
		if (!still_ok(ep, r->ev))
			return xti_err(TOUTSTATE);
	}
	if (err == 0)
		return 0;
	if (err == EPROTO)
		return xti_proto();
	return io_err(err);
}

int xti_read_rest(struct xti_ep *ep, struct xti_rd *r)
{
	int err = 0, band, flags, rv, cl, dl;

	if (r->duser) {
		char *p = NULL;
		int max = 0;
		bool own = false;
		int have = r->dlen > 0 ? r->dlen : 0;

		if (!grow(&p, &max, &own, have + 4096, XTI_MAXBUF))
			return xti_syserr(ENOMEM);
		if (have > 0 && xti_uin(p, r->dbuf, (size_t)have) != 0) {
			free(p);
			return xti_syserr(EFAULT);
		}
		r->dbuf = p;
		r->dmax = max;
		r->down = true;
		r->duser = false;
	}
	rd_enter(ep, -1);
	while (r->more) {
		if (r->dlen >= r->dmax &&
		    !grow(&r->dbuf, &r->dmax, &r->down, r->dmax * 2,
			  XTI_MAXBUF)) {
			r->dlen = 0;	/* too long: read on, keep nothing */
			err = EPROTO;
		}
		rv = rd_once(ep->ep_fd, r, &band, &flags, &cl, &dl);
		if (rv < 0) {
			err = errno;
			break;
		}
		if (ack_pass(ep, r, rv, flags, cl, dl))
			continue;	/* (the rest is still to come) */
		if (dl >= 0)
			r->dlen = (r->dlen < 0 ? 0 : r->dlen) + dl;
		if (cl >= 0) {
			err = EPROTO;	/* not the rest of this message */
			break;
		}
		r->more = (rv & MOREDATA) != 0;
	}
	rd_leave(ep, NULL);
	if (err == 0)
		return 0;
	return err == EPROTO ? xti_proto() : io_err(err);
}

struct xti_msg *xti_rd_to_msg(struct xti_rd *r)
{
	struct xti_msg *m = calloc(1, sizeof(*m));
	int cl = r->clen > 0 ? r->clen : 0;
	int dl = r->dlen > 0 ? r->dlen : 0;

	if (m == NULL)
		return NULL;
	m->m_prim = r->prim;
	m->m_band = r->band;
	m->m_clen = cl;
	m->m_dlen = dl;
	m->m_ctl = malloc((size_t)cl + 1);
	m->m_dat = malloc((size_t)dl + 1);
	if (m->m_ctl == NULL || m->m_dat == NULL) {
		xti_msg_free(m);
		return NULL;
	}
	memcpy(m->m_ctl, r->cbuf, (size_t)cl);
	if (dl > 0) {
		int bad = r->duser ? xti_uin(m->m_dat, r->dbuf, (size_t)dl)
				   : (memcpy(m->m_dat, r->dbuf, (size_t)dl), 0);
		if (bad) {
			xti_msg_free(m);
			return NULL;
		}
	}
	return m;
}

int xti_hold(struct xti_ep *ep, struct xti_rd *r)
{
	struct xti_msg *m;

	if (r->more && xti_read_rest(ep, r) != 0)
		return -1;
	m = xti_rd_to_msg(r);
	if (m == NULL)
		return xti_syserr(ENOMEM);
	pthread_mutex_lock(&ep->ep_lock);
	xti_held_push(ep, m);
	pthread_mutex_unlock(&ep->ep_lock);
	return xti_err(TLOOK);
}

struct xti_msg *xti_read_msg(struct xti_ep *ep, struct xti_rd *r,
			     int notfound)
{
	struct xti_msg *m;

	if (xti_read(ep, r) != 0) {
		if (t_errno == TNODATA)
			xti_err(notfound);
		xti_rd_free(r);
		return NULL;
	}
	if (r->more)
		xti_read_rest(ep, r);
	m = xti_rd_to_msg(r);
	xti_rd_free(r);
	if (m == NULL)
		xti_syserr(ENOMEM);
	return m;
}

/* ---- acknowledged requests ---- */

void xti_req_begin(struct xti_ep *ep)
{
	pthread_mutex_lock(&ep->ep_lock);
	while (ep->ep_req_busy)
		pthread_cond_wait(&ep->ep_cv, &ep->ep_lock);
	__atomic_store_n(&ep->ep_req_busy, true, __ATOMIC_SEQ_CST);
	ep->ep_ack_have = false;
	pthread_mutex_unlock(&ep->ep_lock);
}

/* The caller has set the state its request's ack brought: readers that
 * handed the ack over check it once the request ends (still_ok). */
void xti_req_end(struct xti_ep *ep)
{
	pthread_mutex_lock(&ep->ep_lock);
	__atomic_store_n(&ep->ep_req_busy, false, __ATOMIC_SEQ_CST);
	ep->ep_ack_have = false;
	pthread_cond_broadcast(&ep->ep_cv);
	pthread_mutex_unlock(&ep->ep_lock);
}

int xti_putmsg(int fd, const void *ctl, int clen, const void *dat,
	       int dlen, int band)
{
	struct strbuf c = { 0, clen, (char *)ctl };
	struct strbuf d = { 0, dlen, (char *)dat };

	if (streams_putpmsg_direct(fd, clen >= 0 ? &c : NULL,
				   dlen >= 0 ? &d : NULL, band, MSG_BAND) == 0)
		return 0;
	if (errno == EAGAIN)
		return xti_err(TFLOW);
	if (errno == EBADF || errno == ENOSTR)
		return xti_err(TBADF);
	return xti_syserr(errno);
}

/* Read a high priority message (the ack): 0 with *len set, or an errno.
 * What does not fit the buffer is read and dropped. */
static int ack_read(int fd, char *buf, int max, int *len)
{
	char scratch[64];
	bool nb = xti_nonblock(fd);
	int rv;

	for (;;) {
		struct strbuf c = { max, 0, buf };
		struct strbuf d = { sizeof(scratch), 0, scratch };
		int flags = RS_HIPRI;

		if (nb) {
			struct pollfd pf = { fd, POLLPRI, 0 };
			if (poll(&pf, 1, -1) < 0) {
				if (errno == EINTR)
					continue;
				return errno;
			}
			if (pf.revents & (POLLERR | POLLHUP | POLLNVAL) &&
			    !(pf.revents & POLLPRI))
				return pf.revents & POLLNVAL ? EBADF : ENXIO;
		}
		rv = getmsg(fd, &c, &d, &flags);
		if (rv < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno;
		}
		if (c.len == 0 && d.len == 0 && rv == 0)
			return ENXIO;		/* hangup */
		*len = c.len;
		/* drop the rest of an oversized message */
		while (rv > 0) {
			struct strbuf c2 = { sizeof(scratch), 0, scratch };
			struct strbuf d2 = { sizeof(scratch), 0, scratch };
			flags = RS_HIPRI;
			rv = getmsg(fd, &c2, &d2, &flags);
			if (rv < 0 && errno != EINTR)
				break;
			*len = -1;		/* oversized: not an ack */
		}
		return 0;
	}
}

/* Every request is serialised (ep_req_busy), so any ack that arrives
 * answers ours: one for another primitive, or a malformed one, is the
 * provider's error (TPROTO), not a reason to wait on. */
int xti_ack_wait(struct xti_ep *ep, t_scalar_t prim)
{
	char buf[sizeof(ep->ep_ack)];
	struct xti_dec_ack a;
	int len = -1, err = 0;

	pthread_mutex_lock(&ep->ep_lock);
	for (;;) {
		if (ep->ep_ack_have) {
			len = ep->ep_acklen;
			memcpy(buf, ep->ep_ack, (size_t)len);
			ep->ep_ack_have = false;
			break;
		}
		if (ep->ep_flags & EPF_DEAD) {
			err = EBADF;
			break;
		}
		/* (Dekker's with entering readers: see rd_enter_locked) */
		if (!ep->ep_ack_reading) {
			__atomic_store_n(&ep->ep_ack_reading, true,
					 __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&ep->ep_rd_active,
					    __ATOMIC_SEQ_CST) == 0) {
				pthread_mutex_unlock(&ep->ep_lock);
				err = ack_read(ep->ep_fd, buf, sizeof(buf),
					       &len);
				pthread_mutex_lock(&ep->ep_lock);
				__atomic_store_n(&ep->ep_ack_reading, false,
						 __ATOMIC_SEQ_CST);
				pthread_cond_broadcast(&ep->ep_cv);
				break;
			}
			/* a reader is in: it takes the ack, or leaves and
			 * wakes us (readers that saw the flag back out and
			 * wait for the lock) */
			__atomic_store_n(&ep->ep_ack_reading, false,
					 __ATOMIC_SEQ_CST);
		}
		pthread_cond_wait(&ep->ep_cv, &ep->ep_lock);
	}
	pthread_mutex_unlock(&ep->ep_lock);
	if (err != 0)
		return io_err(err == EAGAIN ? EIO : err);
	if (xti_dec_ok_ack(buf, len, &a) != 0 || a.req != prim)
		return xti_proto();
	if (a.prim == T_OK_ACK)
		return 0;
	return xti_tpi_err(a.tli, a.unixerr);
}

/* ---- what is pending ---- */

static int msg_event(const struct xti_msg *m)
{
	return xti_dec_event(m->m_ctl, m->m_prim == -1 ? -1 : m->m_clen,
			     m->m_band > 0);
}

/* The event of the head's first message: 0 none, -1 garbage, -2 error
 * (errno). */
static int head_event(struct xti_ep *ep)
{
	char cb[32];
	struct strpeek sp;
	bool exp;
	int r;

	memset(&sp, 0, sizeof(sp));
	sp.ctlbuf.maxlen = sizeof(cb);
	sp.ctlbuf.buf = cb;
	sp.databuf.maxlen = 0;
	sp.flags = 0;
	r = ioctl(ep->ep_fd, I_PEEK, &sp);
	if (r < 0)
		return errno == EBADMSG ? -1 : -2;
	if (r == 0)
		return 0;
	exp = __atomic_load_n(&ep->ep_cont[1], __ATOMIC_RELAXED) >= 0;
	if (sp.ctlbuf.len < 0 && sp.databuf.len < 0)
		return -1;
	return xti_dec_event(cb, sp.ctlbuf.len, exp);
}

int xti_pending(struct xti_ep *ep)
{
	int ev;

	pthread_mutex_lock(&ep->ep_lock);
	ev = ep->ep_held != NULL ? msg_event(ep->ep_held) : 0;
	pthread_mutex_unlock(&ep->ep_lock);
	if (ev != 0)
		return ev < 0 ? xti_proto() : ev;
	ev = head_event(ep);
	if (ev == -2)
		return io_err(errno);
	if (ev == -1)
		return xti_proto();
	return ev;
}

int xti_held_event(struct xti_ep *ep, int mask)
{
	for (struct xti_msg *m = ep->ep_held; m != NULL; m = m->m_next) {
		int e = msg_event(m);
		if (e > 0 && (e & mask))
			return e;
	}
	return 0;
}

int xti_head_look(struct xti_ep *ep, int mask)
{
	int ev = head_event(ep);

	if (ev == -2)
		return io_err(errno);
	return ev > 0 && (ev & mask) ? ev : 0;
}

int xti_look_for(struct xti_ep *ep, int mask)
{
	int ev;

	pthread_mutex_lock(&ep->ep_lock);
	ev = xti_held_event(ep, mask);
	pthread_mutex_unlock(&ep->ep_lock);
	if (ev != 0)
		return ev;
	return xti_head_look(ep, mask);
}

int xti_look_stop(struct xti_ep *ep, int mask)
{
	int ev = xti_look_for(ep, mask);

	if (ev > 0)
		return xti_err(TLOOK);
	return ev;
}

int xti_send_stop(struct xti_ep *ep, int ev, int mask)
{
	if (ev == 0 && streams_head_queued(ep->ep_fd) != 0)
		ev = xti_head_look(ep, mask);
	if (ev > 0)
		return xti_err(TLOOK);
	return ev;
}

/* ---- netbufs ---- */

int xti_nb_get(const struct netbuf *unb, struct netbuf *nb)
{
	return xti_uin(nb, unb, sizeof(*nb));
}

int xti_nb_fits(const struct netbuf *nb, size_t len)
{
	if (nb->maxlen > 0 && len > nb->maxlen)
		return TBUFOVFLW;
	return 0;
}

int xti_nb_put(struct netbuf *unb, const struct netbuf *nb, const void *src,
	       size_t len)
{
	unsigned int l = nb->maxlen == 0 ? 0 : (unsigned int)len;

	if (l > 0 && xti_uout(nb->buf, src, l) != 0)
		return -1;
	return xti_uout(&unb->len, &l, sizeof(l)) != 0 ? -1 : 0;
}

bool xti_size_ok(t_scalar_t limit, unsigned int len)
{
	if (limit == T_INFINITE)
		return true;
	if (limit < 0)
		return len == 0;
	return len <= (unsigned int)limit;
}

/* ---- t_iovec arrays ---- */

char *xti_iov_in(const struct t_iovec *uiov, unsigned int cnt,
		 struct t_iovec *iov, unsigned int *len)
{
	size_t total = 0;
	char *buf;

	if (cnt == 0 || cnt > T_IOV_MAX) {
		xti_err(TBADDATA);
		return NULL;
	}
	if (xti_uin(iov, uiov, cnt * sizeof(iov[0])) != 0) {
		xti_syserr(EFAULT);
		return NULL;
	}
	for (unsigned int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > INT_MAX - total) {
			xti_err(TBADDATA);
			return NULL;
		}
		total += iov[i].iov_len;
	}
	buf = malloc(total + 1);
	if (buf == NULL) {
		xti_syserr(ENOMEM);
		return NULL;
	}
	*len = (unsigned int)total;
	return buf;
}

/* 0 when every byte the vector names can be written, else TSYSERR
 * EFAULT: a byte of each page it touches is read and written back, both
 * fault-safe, so that a receive does not take a message that it then
 * cannot deliver. */
int xti_iov_writable(const struct t_iovec *iov, unsigned int cnt)
{
	const uintptr_t pg = 4096;	/* no larger than any page */

	for (unsigned int i = 0; i < cnt; i++) {
		char *p = iov[i].iov_base, *end = p + iov[i].iov_len, c;

		/* its first byte, then the start of each page after */
		for (; p < end; p = (char *)(((uintptr_t)p | (pg - 1)) + 1))
			if (xti_uin(&c, p, 1) != 0 || xti_uout(p, &c, 1) != 0)
				return xti_syserr(EFAULT);
	}
	return 0;
}

int xti_iov_gather(char *buf, const struct t_iovec *iov, unsigned int cnt)
{
	size_t off = 0;

	for (unsigned int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > 0 &&
		    xti_uin(buf + off, iov[i].iov_base, iov[i].iov_len) != 0)
			return xti_syserr(EFAULT);
		off += iov[i].iov_len;
	}
	return 0;
}

int xti_iov_scatter(const struct t_iovec *iov, unsigned int cnt,
		    const char *buf, size_t n)
{
	size_t off = 0;

	for (unsigned int i = 0; i < cnt && off < n; i++) {
		size_t k = iov[i].iov_len;

		if (k > n - off)
			k = n - off;
		if (k > 0 && xti_uout(iov[i].iov_base, buf + off, k) != 0)
			return xti_syserr(EFAULT);
		off += k;
	}
	return 0;
}
