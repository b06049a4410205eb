/*
 * xti_open.c -- t_open, t_close, t_sync, t_getinfo, t_getstate,
 * t_sysconf.
 *
 * t_open() opens the provider's device with open() (the stream head's),
 * pushes timod unless it is already there (I_FIND), asks the provider for
 * its characteristics (TI_GETINFO) and makes the descriptor an endpoint.
 * A stream opened through an fattach()ed name may already be bound or
 * connected: its state is then taken from the provider as t_sync() does.
 *
 * t_sync() makes any stream descriptor with timod an endpoint (a dup()
 * of an endpoint, a descriptor passed with I_SENDFD) or refreshes an
 * existing one: TI_SYNC returns the provider's T_info_ack, state and
 * bound qlen, and the first message at the stream head settles the
 * races between the provider's state and what the user has read (data
 * not yet read after the provider saw a disconnect, ...).  A provider
 * waiting for an acknowledgement is in a transient state: TSTATECHNG.
 * The sequence numbers of connection indications received before a
 * t_sync() are not known; the provider checks them.  (XNS also has
 * t_sync() resynchronise after an exec(); here the streams live in the
 * process that opened them, so nothing crosses an exec(): the library,
 * like the executive, is per process.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stropts.h>
#include <unistd.h>

#include "xti_impl.h"

static void info_to_t(const struct T_info_ack *ia, struct t_info *ti)
{
	ti->addr = ia->ADDR_size;
	ti->options = ia->OPT_size;
	ti->tsdu = ia->TSDU_size;
	ti->etsdu = ia->ETSDU_size;
	ti->connect = ia->CDATA_size;
	ti->discon = ia->DDATA_size;
	ti->servtype = ia->SERV_type;
	ti->flags = 0;
	if (ia->PROVIDER_flag & SENDZERO)
		ti->flags |= T_SENDZERO;
	if (ia->PROVIDER_flag & ORDRELDATA)
		ti->flags |= T_ORDRELDATA;
}

static int info_out(struct t_info *uinfo, const struct T_info_ack *ia)
{
	struct t_info ti;

	info_to_t(ia, &ti);
	return xti_uout(uinfo, &ti, sizeof(ti)) != 0 ? xti_syserr(EFAULT) : 0;
}

static int open_fail(int fd, int terr, int e)
{
	close(fd);
	t_errno = terr;
	errno = e;
	return -1;
}

int t_open(const char *name, int oflag, struct t_info *info)
{
	struct T_info_ack ia;
	struct ti_sync_ack sa;
	struct xti_ep *ep;
	unsigned int qlen = 0;
	int fd, r, state;

	xti_init();
	if ((oflag & O_ACCMODE) != O_RDWR ||
	    (oflag & ~(O_ACCMODE | O_NONBLOCK)) != 0)
		return xti_err(TBADFLAG);
	if (name == NULL)
		return xti_err(TBADNAME);
	fd = open(name, oflag);
	if (fd < 0)
		return errno == ENOENT || errno == ENXIO ?
			xti_err(TBADNAME) : xti_syserr(errno);
	if (isastream(fd) != 1)
		return open_fail(fd, TBADNAME, ENOSTR);
	r = ioctl(fd, I_FIND, "timod");
	if (r == 0)
		r = ioctl(fd, I_PUSH, "timod");
	else if (r == 1)
		r = 0;
	if (r != 0)
		return open_fail(fd, TSYSERR, errno);
	if (xti_getinfo(fd, &ia) != 0)
		return open_fail(fd, t_errno, errno);
	state = T_UNBND;
	if (ia.CURRENT_state != TS_UNBND) {
		/* an fattach()ed stream in use: as t_sync() */
		if (xti_sync_fd(fd, &sa) != 0)
			return open_fail(fd, t_errno, errno);
		ia = sa.tsa_info;
		qlen = sa.tsa_qlen;
		state = xti_state_from_tpi(fd, ia.CURRENT_state);
		if (state < 0)
			return open_fail(fd, TSTATECHNG, 0);
	}
	ep = xti_ep_new(fd, &ia, state, qlen);
	if (ep == NULL)
		return open_fail(fd, TSYSERR, ENOMEM);
	if (info != NULL && info_out(info, &ia) != 0) {
		xti_ep_remove(ep);
		xti_put(ep);
		return open_fail(fd, TSYSERR, EFAULT);
	}
	xti_put(ep);
	return fd;
}

int t_close(int fd)
{
	struct xti_ep *ep = xti_get(fd);

	if (ep == NULL)
		return -1;
	xti_ep_remove(ep);
	close(fd);
	xti_put(ep);
	return 0;
}

/* The provider's state ts is idle or released, but what waits at the
 * head made xti_state_from_tpi say state (a connection still to be
 * ended by the user's read)? */
static bool ts_pending(int ts, int state)
{
	return (ts == TS_IDLE && state != T_IDLE) ||
	       (ts == TS_WREQ_ORDREL && state == T_DATAXFER);
}

int t_sync(int fd)
{
	struct ti_sync_ack sa;
	struct xti_ep *ep;
	int state;

	xti_init();
	ep = xti_get(fd);
	if (ep == NULL) {
		if (isastream(fd) != 1 || ioctl(fd, I_FIND, "timod") != 1)
			return xti_err(TBADF);
	}
	if (xti_sync_fd(fd, &sa) != 0)
		goto fail;
	state = xti_state_from_tpi(fd, sa.tsa_info.CURRENT_state);
	if (state < 0) {
		xti_err(TSTATECHNG);
		goto fail;
	}
	if (ep == NULL) {
		ep = xti_ep_new(fd, &sa.tsa_info, state, sa.tsa_qlen);
		if (ep == NULL)
			return xti_syserr(ENOMEM);
	} else {
		pthread_mutex_lock(&ep->ep_lock);
		xti_set_info(ep, &sa.tsa_info);
		ep->ep_qlen = sa.tsa_qlen;
		/* held messages are events the provider already counted:
		 * the library's state is the right one then; and so it is
		 * while an indication the provider counted waits unread
		 * (the provider idle or released, a disconnect, release
		 * or data still at the head), when the library's state is
		 * one such an indication can end: then the provider's
		 * state is only a guess from what waits */
		bool pending = ts_pending(sa.tsa_info.CURRENT_state, state) &&
			       (ep->ep_state == T_OUTCON ||
				ep->ep_state == T_INCON ||
				ep->ep_state == T_DATAXFER ||
				ep->ep_state == T_OUTREL ||
				ep->ep_state == T_INREL);
		if (ep->ep_held == NULL && ep->ep_state != state && !pending) {
			if (state == T_INCON && ep->ep_ocnt == 0) {
				ep->ep_sequnk = true;
				ep->ep_ocnt = 1;
			} else if (state != T_INCON) {
				xti_seq_clear(ep);
			}
			xti_set_state(ep, state);
		}
		state = ep->ep_state;
		pthread_mutex_unlock(&ep->ep_lock);
	}
	xti_put(ep);
	return state;
fail:
	if (ep != NULL)
		xti_put(ep);
	return -1;
}

int t_getinfo(int fd, struct t_info *info)
{
	struct T_info_ack ia;
	struct xti_ep *ep = xti_get(fd);
	int r;

	if (ep == NULL)
		return -1;
	if (info == NULL) {
		xti_put(ep);
		return xti_syserr(EFAULT);
	}
	r = xti_getinfo(fd, &ia);
	if (r == 0) {
		pthread_mutex_lock(&ep->ep_lock);
		xti_set_info(ep, &ia);
		pthread_mutex_unlock(&ep->ep_lock);
		r = info_out(info, &ia);
	}
	xti_put(ep);
	return r;
}

int t_getstate(int fd)
{
	struct xti_ep *ep = xti_get(fd);
	int st;
	bool busy;

	if (ep == NULL)
		return -1;
	pthread_mutex_lock(&ep->ep_lock);
	st = ep->ep_state;
	busy = ep->ep_req_busy;
	pthread_mutex_unlock(&ep->ep_lock);
	xti_put(ep);
	if (busy)
		return xti_err(TSTATECHNG);
	return st;
}

int t_sysconf(int name)
{
	if (name == _SC_T_IOV_MAX)
		return T_IOV_MAX;
	return xti_syserr(EINVAL);
}

int _xti_attach(int fd, const struct T_info_ack *info, int state,
		unsigned int qlen)
{
	struct xti_ep *ep;

	if (info == NULL || state < T_UNBND || state > T_INREL)
		return xti_syserr(EINVAL);
	ep = xti_ep_new(fd, info, state, qlen);
	if (ep == NULL)
		return xti_syserr(ENOMEM);
	xti_put(ep);
	return 0;
}
