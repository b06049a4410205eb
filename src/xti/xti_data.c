/*
 * xti_data.c -- data transfer in connection mode: t_snd, t_sndv, t_rcv,
 * t_rcvv.
 *
 * Sending.  A TSDU (or ETSDU) goes down as T_DATA_REQ (T_EXDATA_REQ)
 * messages of at most TIDU_size bytes (and the stream head's largest
 * message), MORE_flag set on every one but the last of the call, and on
 * the last too when the caller sets T_MORE.  The last piece of normal
 * data without T_MORE goes as plain M_DATA, which TPI has every provider
 * take as T_DATA_REQ with MORE_flag 0: the stream head then allocates,
 * copies and the provider checks and frees no control block (a 256-byte
 * t_snd over /dev/tcp: 1690 -> 1390 instructions).  Zero bytes still go
 * as T_DATA_REQ, which a provider can tell from nothing.  Expedited
 * data goes in band 1 unless the provider takes it inline (EXPINLINE).
 * The library counts the bytes of the TSDU being sent so that one
 * longer than TSDU_size is refused (TBADDATA) across calls too.  In
 * asynchronous mode a call stopped by flow control returns what was
 * accepted, or TFLOW when nothing was; t_look() then reports T_GODATA
 * (T_GOEXDATA) once the stream takes data again.
 *
 * Receiving.  t_rcv() takes one message with getmsg, the data part
 * straight into the caller's buffer; what does not fit stays at the head
 * and the next t_rcv() returns it, T_MORE set until the TSDU's last
 * byte.  ep_cont remembers, for normal and expedited data, that the
 * next message without a control part is the rest of a T_DATA_IND
 * (T_EXDATA_IND) and its MORE_flag.  Expedited data overtakes the rest
 * of a normal TSDU (band 1 is ahead at the head).  A T_DISCON_IND or
 * T_ORDREL_IND met instead is held: TLOOK.
 *
 * t_snd and t_rcv take no lock when nothing is held and no ack waiter
 * reads (xti_impl.h): the checks, the sizes and TSDU count and the held
 * list are atomic loads, the read turn one atomic increment; ep_cont is
 * atomic, and ep_sndacc is written (under the lock) only when it
 * changes.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "xti_impl.h"

#define SND_CHUNK	65536	/* the stream head's largest data part */

struct snd_args {
	int flags;
	bool exp;
	int band;
	unsigned int chunk;
};

/* What the checks before sending need of the endpoint. */
struct snd_snap {
	t_scalar_t lim;			/* TSDU_size or ETSDU_size */
	int pf, tidu;
	uint64_t acc;
};

/* Take snap for a send with flags, of the endpoint's sizes sz. */
static void snd_snap(struct xti_ep *ep, const struct xti_sizes *sz,
		     int flags, struct snd_snap *sn)
{
	bool exp = (flags & T_EXPEDITED) != 0;

	sn->lim = exp ? sz->etsdu : sz->tsdu;
	sn->pf = sz->pflag;
	sn->tidu = sz->tidu;
	sn->acc = __atomic_load_n(&ep->ep_sndacc[exp], __ATOMIC_RELAXED);
}

/* Checks before sending nbytes; fills a.  0 or -1 with t_errno. */
static int snd_check(const struct snd_snap *sn, unsigned int nbytes,
		     int flags, struct snd_args *a)
{
	t_scalar_t lim = sn->lim;
	uint64_t acc = sn->acc;
	int pf = sn->pf, tidu = sn->tidu;

	if (flags & ~(T_MORE | T_EXPEDITED | T_PUSH))
		return xti_err(TBADFLAG);
	a->flags = flags;
	a->exp = (flags & T_EXPEDITED) != 0;
	if (lim == T_INVALID)
		return xti_err(TNOTSUPPORT);
	if (nbytes > INT_MAX)
		return xti_err(TBADDATA);
	if (nbytes == 0 && ((flags & T_MORE) ||
			    (acc == 0 && !(pf & SENDZERO))))
		return xti_err(TBADDATA);
	if (lim > 0 && acc + nbytes > (uint64_t)lim)
		return xti_err(TBADDATA);
	a->band = a->exp && !(pf & EXPINLINE) ? 1 : 0;
	a->chunk = tidu > 0 && tidu < SND_CHUNK ? (unsigned int)tidu
						 : SND_CHUNK;
	return 0;
}

/* Send nbytes of buf; the bytes sent, or -1 with t_errno. */
static int snd_data(struct xti_ep *ep, const char *buf, unsigned int nbytes,
		    const struct snd_args *a)
{
	struct T_data_req dr;
	unsigned int sent = 0;
	int err = 0;
	bool whole;

	dr.PRIM_type = a->exp ? T_EXDATA_REQ : T_DATA_REQ;
	do {
		unsigned int n = nbytes - sent;
		int clen;

		if (n > a->chunk)
			n = a->chunk;
		dr.MORE_flag = (sent + n < nbytes || (a->flags & T_MORE)) ? 1 : 0;
		clen = !a->exp && !dr.MORE_flag && n > 0 ? -1 : (int)sizeof(dr);
		if (xti_putmsg(ep->ep_fd, &dr, clen, buf + sent, (int)n,
			       a->band) != 0) {
			err = t_errno;
			break;
		}
		sent += n;
	} while (sent < nbytes);
	/* a whole TSDU sent when none was begun: nothing to write */
	whole = sent == nbytes && !(a->flags & T_MORE);
	if (err == TFLOW || !whole ||
	    __atomic_load_n(&ep->ep_sndacc[a->exp], __ATOMIC_RELAXED) != 0) {
		pthread_mutex_lock(&ep->ep_lock);
		if (err == TFLOW)
			ep->ep_flags |= a->exp ? EPF_EXFLOW : EPF_FLOW;
		__atomic_store_n(&ep->ep_sndacc[a->exp],
				 whole ? 0 : ep->ep_sndacc[a->exp] + sent,
				 __ATOMIC_RELAXED);
		pthread_mutex_unlock(&ep->ep_lock);
	}
	if (sent == 0 && err != 0)
		return -1;		/* t_errno (errno) still set */
	return (int)sent;
}

static int snd_common(int fd, const char *buf, unsigned int nbytes,
		      int flags)
{
	struct xti_sizes sz;
	struct snd_args a;
	struct snd_snap sn;
	struct xti_ep *ep;
	int r = -1, ev;

	ep = xti_begin_snd(fd, NEED_CONN, EV_SND, T_DISCONNECT, &sz, &ev);
	if (ep == NULL)
		return -1;
	snd_snap(ep, &sz, flags, &sn);
	if (snd_check(&sn, nbytes, flags, &a) != 0)
		goto out;
	if (xti_send_stop(ep, ev, T_DISCONNECT) != 0)
		goto out;
	r = snd_data(ep, buf, nbytes, &a);
out:
	xti_put_cached(ep);
	return r;
}

int t_snd(int fd, void *buf, unsigned int nbytes, int flags)
{
	return snd_common(fd, buf, nbytes, flags);
}

/* Gather the application's t_iovec array into one buffer; its length
 * in *len.  NULL with t_errno. */
static char *iov_gather(const struct t_iovec *uiov, unsigned int cnt,
			unsigned int *len)
{
	struct t_iovec iov[T_IOV_MAX];
	char *buf = xti_iov_in(uiov, cnt, iov, len);

	if (buf != NULL && xti_iov_gather(buf, iov, cnt) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int t_sndv(int fd, const struct t_iovec *iov, unsigned int iovcount,
	   int flags)
{
	unsigned int len;
	char *buf;
	int r;

	buf = iov_gather(iov, iovcount, &len);
	if (buf == NULL)
		return -1;
	r = snd_common(fd, buf, len, flags);
	free(buf);
	return r;
}

/* ---- receiving ---- */

/* Deliver from a held data message; the rest stays held. */
static int rcv_held(struct xti_ep *ep, struct xti_msg *m, char *buf,
		    unsigned int nbytes, int *flagsp)
{
	struct xti_dec_data d;
	unsigned int n = (unsigned int)(m->m_dlen - m->m_doff);
	int fl;

	memset(&d, 0, sizeof(d));
	if (m->m_prim != -1 && xti_dec_data_ind(m->m_ctl, m->m_clen, &d) != 0)
		d.exp = m->m_band > 0;
	if (m->m_prim == -1)
		d.exp = m->m_band > 0;
	if (n > nbytes)
		n = nbytes;
	if (n > 0 && xti_uout(buf, m->m_dat + m->m_doff, n) != 0) {
		pthread_mutex_lock(&ep->ep_lock);
		xti_held_front(ep, m);	/* (back first, where it was) */
		pthread_mutex_unlock(&ep->ep_lock);
		return xti_syserr(EFAULT);
	}
	m->m_doff += (int)n;
	fl = d.exp ? T_EXPEDITED : 0;
	if (m->m_doff < m->m_dlen || d.more)
		fl |= T_MORE;
	if (m->m_doff < m->m_dlen) {
		/* put it back in front */
		pthread_mutex_lock(&ep->ep_lock);
		xti_held_front(ep, m);
		pthread_mutex_unlock(&ep->ep_lock);
	} else {
		xti_msg_free(m);
	}
	if (xti_uout(flagsp, &fl, sizeof(fl)) != 0)
		return xti_syserr(EFAULT);
	return (int)n;
}

static bool is_data(t_scalar_t prim)
{
	return prim == -1 || prim == T_DATA_IND || prim == T_EXDATA_IND ||
	       prim == T_OPTDATA_IND;
}

/* The first held message when it is data (taken); TLOOK when another
 * event is held; 0 when nothing is held. */
static int held_data(struct xti_ep *ep, struct xti_msg **mp)
{
	int r = 0;

	*mp = NULL;
	pthread_mutex_lock(&ep->ep_lock);
	if (ep->ep_held != NULL) {
		if (is_data(ep->ep_held->m_prim))
			*mp = xti_held_pop(ep);
		else
			r = xti_err(TLOOK);
	}
	pthread_mutex_unlock(&ep->ep_lock);
	return r;
}

static int rcv_common(int fd, char *buf, unsigned int nbytes, int *flagsp)
{
	struct xti_dec_data d;
	struct xti_msg *m;
	struct xti_ep *ep;
	struct xti_rd r;
	int rv = -1, fl = 0, k, c[2], v;
	bool held;

	ep = xti_begin_rd(fd, NEED_CONN, EV_RCV);
	if (ep == NULL)
		return -1;
	held = xti_held_any(ep);
	if (xti_uout(flagsp, &fl, sizeof(fl)) != 0) {
		xti_rd_quit(ep);
		xti_put_cached(ep);
		return xti_syserr(EFAULT);
	}
	if (held) {
		/* data held, or another event (TLOOK) */
		xti_rd_quit(ep);
		if (held_data(ep, &m) != 0) {
			xti_put_cached(ep);
			return -1;
		}
		if (m != NULL) {
			rv = rcv_held(ep, m, buf, nbytes, flagsp);
			xti_put_cached(ep);
			return rv;
		}
		/* another thread took it meanwhile: read */
	}
	if (nbytes > INT_MAX)
		nbytes = INT_MAX;
	xti_rd_init(&r, buf, (int)nbytes);
	r.ev = EV_RCV;
	r.entered = !held;		/* taken by xti_begin_rd */
	if (xti_read(ep, &r) != 0)
		goto out;
	memset(&d, 0, sizeof(d));
	if (r.prim == -1) {
		/* the rest of a message, or plain M_DATA */
		c[0] = __atomic_load_n(&ep->ep_cont[0], __ATOMIC_RELAXED);
		c[1] = __atomic_load_n(&ep->ep_cont[1], __ATOMIC_RELAXED);
		k = c[1] >= 0 && (r.band > 0 || c[0] < 0);
		d.exp = k == 1;
		d.more = c[k] > 0;		/* the TSDU goes on after */
		if (!r.more)
			v = -1;			/* all of it read */
		else if (c[k] < 0)
			v = 0;			/* plain M_DATA, split */
		else
			v = c[k];
		if (v != c[k])
			__atomic_store_n(&ep->ep_cont[k], v, __ATOMIC_RELAXED);
	} else if (is_data(r.prim)) {
		if (xti_dec_data_ind(r.cbuf, r.clen, &d) != 0) {
			if (r.more)
				xti_read_rest(ep, &r);
			xti_proto();
			goto out;
		}
		v = r.more ? (d.more ? 1 : 0) : -1;
		if (__atomic_load_n(&ep->ep_cont[d.exp], __ATOMIC_RELAXED) != v)
			__atomic_store_n(&ep->ep_cont[d.exp], v,
					 __ATOMIC_RELAXED);
	} else if (r.prim == T_DISCON_IND || r.prim == T_ORDREL_IND) {
		xti_hold(ep, &r);
		goto out;
	} else {
		if (r.more)
			xti_read_rest(ep, &r);
		xti_proto();
		goto out;
	}
	fl = (d.exp ? T_EXPEDITED : 0) | (r.more || d.more ? T_MORE : 0);
	if (xti_uout(flagsp, &fl, sizeof(fl)) != 0) {
		xti_syserr(EFAULT);
		goto out;
	}
	rv = r.dlen > 0 ? r.dlen : 0;
out:
	xti_rd_free(&r);
	xti_put_cached(ep);
	return rv;
}

int t_rcv(int fd, void *buf, unsigned int nbytes, int *flags)
{
	return rcv_common(fd, buf, nbytes, flags);
}

int t_rcvv(int fd, struct t_iovec *uiov, unsigned int iovcount, int *flags)
{
	struct t_iovec iov[T_IOV_MAX];
	unsigned int total;
	char *buf;
	int r;

	buf = xti_iov_in(uiov, iovcount, iov, &total);
	if (buf == NULL)
		return -1;
	if (xti_iov_writable(iov, iovcount) != 0) {
		free(buf);
		return -1;
	}
	r = rcv_common(fd, buf, total, flags);
	if (r > 0 && xti_iov_scatter(iov, iovcount, buf, (size_t)r) != 0)
		r = -1;
	free(buf);
	return r;
}
