/*
 * inet_opt.c -- XTI options of the Internet transport providers, applied
 * to the endpoint's kernel socket.
 *
 * How this works
 * --------------
 * The tables below describe the options of each protocol for the shared
 * options code (topt.h), which parses T_OPTMGMT_REQ and the options of
 * T_UNITDATA_REQ/T_CONN_REQ/T_OPTDATA_REQ.  Reading an option asks the
 * socket (getsockopt); negotiating one sets it (setsockopt) and reads back
 * what the kernel granted, so the answer says T_PARTSUCCESS with the real
 * value when the kernel changed it (a buffer clamped to net.core.*mem_max,
 * for instance: Linux reports twice the size it was asked for, its own
 * bookkeeping, and half of that is what the user was granted).
 *
 *   XTI_GENERIC	XTI_DEBUG (kept, no effect), XTI_LINGER (SO_LINGER),
 *			XTI_RCVBUF/XTI_SNDBUF (SO_RCVBUF/SO_SNDBUF),
 *			XTI_RCVLOWAT (SO_RCVLOWAT), XTI_SNDLOWAT (Linux has
 *			no settable SO_SNDLOWAT: the room the provider's
 *			write queue must have before a writer blocked by
 *			flow control goes on, i.e. its low water mark is
 *			its high water less this; granted at most high
 *			water)
 *   INET_IP		IP_OPTIONS, IP_TOS (IPV6_TCLASS on IPv6), IP_TTL
 *			(IPV6_UNICAST_HOPS), IP_REUSEADDR (SO_REUSEADDR;
 *			read-only T_YES on TCP, whose provider needs it),
 *			IP_DONTROUTE, IP_BROADCAST (SO_*)
 *   INET_UDP		UDP_CHECKSUM (SO_NO_CHECK inverted; IPv4: IPv6 has
 *			it always, T_NO fails there)
 *   INET_TCP		TCP_NODELAY, TCP_MAXSEG (read-only: the segment
 *			size in use), TCP_KEEPALIVE (SO_KEEPALIVE and
 *			TCP_KEEPIDLE: kp_timeout is in minutes, at most 546)
 *
 * What the user negotiated is remembered (ep->opt_set, ep->opt_val), so
 * a socket made again (an IPv6 bind, an unbind, the end of a connection)
 * gets the same options.  Callers hold ep->lock.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "inet.h"

#define INET_BUFDEF	212992	/* the kernel's default wmem/rmem */

#define IP_DEFS(assoc, reuse)						\
	{ INET_IP, T_IP_OPTIONS, IP_OPTIONS, TOPT_BYTES, 0, 40, 0, 0, 0 }, \
	{ INET_IP, T_IP_TOS, IP_TOS, TOPT_UCHAR, (assoc), 0, 0, 0, 255 }, \
	{ INET_IP, T_IP_TTL, IP_TTL, TOPT_UCHAR, (assoc), 0, 64, 1, 255 }, \
	{ INET_IP, T_IP_REUSEADDR, TOPT_NONAME, TOPT_BOOL, (reuse), 0,	\
	  (reuse) ? T_YES : T_NO, 0, 0 },					\
	{ INET_IP, T_IP_DONTROUTE, TOPT_NONAME, TOPT_BOOL, 0, 0, T_NO, 0, 0 }, \
	{ INET_IP, T_IP_BROADCAST, TOPT_NONAME, TOPT_BOOL, 0, 0, T_NO, 0, 0 }

static const struct topt_def udp_defs[] = {
	TOPT_GENERIC_DEFS(INET_BUFDEF),
	IP_DEFS(TOPT_ASSOC, 0),
	{ INET_UDP, T_UDP_CHECKSUM, TOPT_NONAME, TOPT_BOOL, 0, 0, T_YES, 0, 0 },
};

static const struct topt_def raw_defs[] = {
	TOPT_GENERIC_DEFS(INET_BUFDEF),
	IP_DEFS(TOPT_ASSOC, 0),
};

static const struct topt_def tcp_defs[] = {
	TOPT_GENERIC_DEFS(INET_BUFDEF),
	/* (SO_REUSEADDR always on: the provider's rebinds need it,
	 * inet_tcp.c's sock_setup) */
	IP_DEFS(0, TOPT_RDONLY),
	/* also taken with T_CONN_REQ/T_CONN_RES (the connection's own) */
	{ INET_TCP, T_TCP_NODELAY, TOPT_NONAME, TOPT_BOOL, TOPT_ASSOC, 0, T_NO,
	  0, 0 },
	/* read-only in XTI: the segment size in use (TCP_MAXSEG's limit
	 * once set would stay on every later connection's socket) */
	{ INET_TCP, T_TCP_MAXSEG, TOPT_NONAME, TOPT_SCALAR, TOPT_RDONLY, 0,
	  536, 0, 0 },
	/* kp_timeout in minutes, up to Linux's TCP_KEEPIDLE of 32767 s */
	{ INET_TCP, T_TCP_KEEPALIVE, TOPT_NONAME, TOPT_KPALIVE,
	  TOPT_CLAMP | TOPT_ASSOC, 0, T_NO, 1, 32767 / 60 },
};

static int opt_get(void *ep, const struct topt_def *d, union topt_val *v);
static t_uscalar_t opt_set(void *ep, const struct topt_def *d,
			   union topt_val *v);
static const struct topt_ops inet_opt_ops = { opt_get, opt_set };

#define TABLE(defs) { defs, sizeof(defs) / sizeof(defs[0]), &inet_opt_ops }
const struct topt_table inet_udp_opts = TABLE(udp_defs);
const struct topt_table inet_raw_opts = TABLE(raw_defs);
const struct topt_table inet_tcp_opts = TABLE(tcp_defs);

static size_t slot(const struct inet_ep *ep, const struct topt_def *d)
{
	return (size_t)(d - ep->pr->opts->defs);
}

int inet_opt_init(struct inet_ep *ep)
{
	const struct topt_table *t = ep->pr->opts;

	ep->opt_val = calloc(t->n, sizeof(*ep->opt_val));
	if (ep->opt_val == NULL)
		return ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		topt_default(&t->defs[i], &ep->opt_val[i]);
	ep->opt_set = 0;
	return 0;
}

void inet_opt_fini(struct inet_ep *ep)
{
	free(ep->opt_val);
	ep->opt_val = NULL;
}

static int geti(int fd, int level, int name, int *x)
{
	socklen_t l = sizeof(*x);

	return getsockopt(fd, level, name, x, &l);
}

static int seti(struct inet_ep *ep, int level, int name, int x)
{
	return setsockopt(ep->ke.ke_fd, level, name, &x, sizeof(x));
}

static bool v6(const struct inet_ep *ep)
{
	return ep->family == AF_INET6;
}

/* The socket level and name of an option that is one int (or a
 * boolean int) on the socket; false if it is not one. */
static bool int_opt(const struct inet_ep *ep, const struct topt_def *d,
		    int *level, int *name, bool *inv)
{
	*inv = false;
	switch (d->level) {
	case XTI_GENERIC:
		*level = SOL_SOCKET;
		switch (d->name) {
		case XTI_RCVBUF: *name = SO_RCVBUF; return true;
		case XTI_SNDBUF: *name = SO_SNDBUF; return true;
		case XTI_RCVLOWAT: *name = SO_RCVLOWAT; return true;
		}
		return false;
	case INET_IP:
		switch (d->name) {
		case T_IP_TOS:
			*level = v6(ep) ? IPPROTO_IPV6 : IPPROTO_IP;
			*name = v6(ep) ? IPV6_TCLASS : IP_TOS;
			return true;
		case T_IP_TTL:
			*level = v6(ep) ? IPPROTO_IPV6 : IPPROTO_IP;
			*name = v6(ep) ? IPV6_UNICAST_HOPS : IP_TTL;
			return true;
		}
		*level = SOL_SOCKET;
		switch (d->name) {
		case T_IP_REUSEADDR: *name = SO_REUSEADDR; return true;
		case T_IP_DONTROUTE: *name = SO_DONTROUTE; return true;
		case T_IP_BROADCAST: *name = SO_BROADCAST; return true;
		}
		return false;
	case INET_UDP:
		if (d->name == T_UDP_CHECKSUM) {
			*level = SOL_SOCKET;
			*name = SO_NO_CHECK;
			*inv = true;
			return true;
		}
		return false;
	case INET_TCP:
		if (d->name == T_TCP_NODELAY || d->name == T_TCP_MAXSEG) {
			*level = IPPROTO_TCP;
			*name = d->name == T_TCP_NODELAY ? TCP_NODELAY
							 : TCP_MAXSEG;
			return true;
		}
		return false;
	}
	return false;
}

/* Kernel value -> option value (buffers: the kernel reports double). */
static t_scalar_t from_kernel(const struct topt_def *d, int x, bool inv)
{
	if (d->type == TOPT_BOOL)
		return (inv ? !x : !!x) ? T_YES : T_NO;
	if (d->level == XTI_GENERIC &&
	    (d->name == XTI_RCVBUF || d->name == XTI_SNDBUF))
		return x / 2;
	return x;
}

/* Options that are always on for ep, whatever its socket says: UDP over
 * IPv6 always has its checksum (RFC 8200; Linux ignores SO_NO_CHECK
 * there); TCP's IP_REUSEADDR is read-only, on (before the socket has been
 * set up too: inet_tcp.c's sock_setup). */
static bool always_yes(const struct inet_ep *ep, const struct topt_def *d)
{
	return (d->level == INET_UDP && d->name == T_UDP_CHECKSUM &&
		v6(ep)) ||
	       (ep->pr->type == SOCK_STREAM && d->level == INET_IP &&
		d->name == T_IP_REUSEADDR);
}

/* d's value on socket fd (ep's, or the one it had) */
static int get_on(struct inet_ep *ep, int fd, const struct topt_def *d,
		  union topt_val *v)
{
	int level, name, x;
	bool inv;

	if (always_yes(ep, d)) {
		v->i = T_YES;
		return 0;
	}

	if (int_opt(ep, d, &level, &name, &inv)) {
		if (geti(fd, level, name, &x) < 0)
			return -1;
		v->i = from_kernel(d, x, inv);
		return 0;
	}
	if (d->level == XTI_GENERIC && d->name == XTI_LINGER) {
		struct linger l;
		socklen_t len = sizeof(l);

		if (getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len) < 0)
			return -1;
		v->linger.l_onoff = l.l_onoff ? T_YES : T_NO;
		v->linger.l_linger = l.l_onoff ? l.l_linger : T_UNSPEC;
		return 0;
	}
	if (d->level == INET_IP && d->name == T_IP_OPTIONS) {
		socklen_t len = TOPT_MAXBYTES;

		v->bytes.len = 0;
		if (v6(ep))
			return 0;
		if (getsockopt(fd, IPPROTO_IP, IP_OPTIONS, v->bytes.b,
			       &len) < 0)
			return -1;
		v->bytes.len = len;
		return 0;
	}
	if (d->level == INET_TCP && d->name == T_TCP_KEEPALIVE) {
		int on, idle;

		if (geti(fd, SOL_SOCKET, SO_KEEPALIVE, &on) < 0 ||
		    geti(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle) < 0)
			return -1;
		v->kp.kp_onoff = on ? T_YES : T_NO;
		v->kp.kp_timeout = (idle + 59) / 60;
		return 0;
	}
	if (d->level == XTI_GENERIC && d->name == XTI_SNDLOWAT) {
		long hi, lo;

		if (strqget(ep->wq, QHIWAT, 0, &hi) != 0 ||
		    strqget(ep->wq, QLOWAT, 0, &lo) != 0)
			return -1;
		v->i = hi - lo > 1 ? (t_scalar_t)(hi - lo) : 1;
		return 0;
	}
	/* XTI_DEBUG: the provider's own */
	*v = ep->opt_val[slot(ep, d)];
	return 0;
}

static int opt_get(void *arg, const struct topt_def *d, union topt_val *v)
{
	struct inet_ep *ep = arg;

	return get_on(ep, ep->ke.ke_fd, d, v);
}

/* Set d to *v on the socket; *v the granted value on return. */
static t_uscalar_t apply(struct inet_ep *ep, const struct topt_def *d,
			 union topt_val *v)
{
	int level, name, x;
	bool inv;

	if (always_yes(ep, d))
		return v->i == T_YES ? T_SUCCESS : T_FAILURE;
	if (int_opt(ep, d, &level, &name, &inv)) {
		int want = d->type == TOPT_BOOL ?
			   ((v->i == T_YES) != inv) : (int)v->i;
		t_scalar_t asked = v->i;

		if (seti(ep, level, name, want) < 0)
			return T_FAILURE;
		if (level == SOL_SOCKET && name == SO_RCVBUF &&
		    ep->pr->ops->rcvbuf != NULL)
			ep->pr->ops->rcvbuf(ep);
		if (geti(ep->ke.ke_fd, level, name, &x) == 0)
			v->i = from_kernel(d, x, inv);
		return v->i == asked ? T_SUCCESS : T_PARTSUCCESS;
	}
	if (d->level == XTI_GENERIC && d->name == XTI_LINGER) {
		struct linger l = { v->linger.l_onoff == T_YES, 0 };
		t_uscalar_t r = T_SUCCESS;

		if (v->linger.l_linger == T_INFINITE) {
			l.l_linger = 32767;	/* the kernel has no forever */
			v->linger.l_linger = 32767;
			r = T_PARTSUCCESS;
		} else if (v->linger.l_linger == T_UNSPEC) {
			l.l_linger = 60;
		} else {
			l.l_linger = (int)v->linger.l_linger;
		}
		if (setsockopt(ep->ke.ke_fd, SOL_SOCKET, SO_LINGER, &l,
			       sizeof(l)) < 0)
			return T_FAILURE;
		return r;
	}
	if (d->level == INET_IP && d->name == T_IP_OPTIONS) {
		if (v6(ep))
			return v->bytes.len == 0 ? T_SUCCESS : T_FAILURE;
		if (setsockopt(ep->ke.ke_fd, IPPROTO_IP, IP_OPTIONS,
			       v->bytes.b, v->bytes.len) < 0)
			return T_FAILURE;
		return T_SUCCESS;
	}
	if (d->level == INET_TCP && d->name == T_TCP_KEEPALIVE) {
		int on = v->kp.kp_onoff != T_NO;

		/* the time first: if it is refused, nothing has changed */
		if (on && v->kp.kp_timeout != T_UNSPEC &&
		    seti(ep, IPPROTO_TCP, TCP_KEEPIDLE,
			 (int)v->kp.kp_timeout * 60) < 0)
			return T_FAILURE;
		if (seti(ep, SOL_SOCKET, SO_KEEPALIVE, on) < 0)
			return T_FAILURE;
		return T_SUCCESS;
	}
	if (d->level == XTI_GENERIC && d->name == XTI_SNDLOWAT) {
		/* room the write queue must have before a blocked writer
		 * goes on: its low water mark is high water less that */
		long hi;
		t_uscalar_t r = T_SUCCESS;

		if (strqget(ep->wq, QHIWAT, 0, &hi) != 0)
			return T_FAILURE;
		if (v->i > hi) {
			v->i = (t_scalar_t)hi;
			r = T_PARTSUCCESS;
		}
		if (strqset(ep->wq, QLOWAT, 0, hi - v->i) != 0)
			return T_FAILURE;
		return r;
	}
	return T_SUCCESS;		/* XTI_DEBUG: kept */
}

static t_uscalar_t opt_set(void *arg, const struct topt_def *d,
			   union topt_val *v)
{
	struct inet_ep *ep = arg;
	size_t i = slot(ep, d);
	t_uscalar_t r = apply(ep, d, v);

	if (r == T_SUCCESS || r == T_PARTSUCCESS) {
		ep->opt_val[i] = *v;
		if (i < 64)
			ep->opt_set |= 1ULL << i;
		if (d->level == INET_IP && d->name == T_IP_TTL)
			ep->ttl = (int)v->i;
		else if (d->level == INET_IP && d->name == T_IP_TOS)
			ep->tos = (int)v->i;
		else if (d->level == INET_TCP && d->name == T_TCP_NODELAY)
			__atomic_store_n(&ep->nodelay, v->i == T_YES,
					 __ATOMIC_RELAXED);
	}
	return r;
}

/*
 * ep's socket is now one accept4 made, which took the listener's socket
 * options with it.  Those the listener negotiated (listener_set) and ep
 * did not go back to what ep's own socket had (oldfd, still open): XTI
 * gives an accepted connection the responding endpoint's options.
 */
void inet_opt_unlisten(struct inet_ep *ep, int oldfd, uint64_t listener_set)
{
	const struct topt_table *t = ep->pr->opts;

	for (size_t i = 0; i < t->n && i < 64; i++) {
		const struct topt_def *d = &t->defs[i];
		union topt_val v;

		if (!(listener_set & ~ep->opt_set & (1ULL << i)) ||
		    (d->flags & TOPT_RDONLY) ||
		    (d->level == XTI_GENERIC &&
		     (d->name == XTI_DEBUG || d->name == XTI_SNDLOWAT)))
			continue;	/* (those two are not the socket's) */
		memset(&v, 0, sizeof(v));
		if (get_on(ep, oldfd, d, &v) == 0)
			(void)apply(ep, d, &v);
	}
}

void inet_opt_reapply(struct inet_ep *ep)
{
	const struct topt_table *t = ep->pr->opts;

	for (size_t i = 0; i < t->n && i < 64; i++)
		if (ep->opt_set & (1ULL << i)) {
			union topt_val v = ep->opt_val[i];

			(void)apply(ep, &t->defs[i], &v);
		}
}
