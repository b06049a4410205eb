/*
 * sp_xti.c -- XTI endpoints over IPv4 loopback, one t_snd()/t_rcv() or
 * t_sndudata()/t_rcvudata() per message: the STREAMS rows of the network
 * tests, in the papers' terms.
 *
 *	xtios	XTI over sockets: /dev/inet/udp, /dev/inet/tcp
 *	tpi	STREAMS TPI providers: /dev/udp, /dev/tcp
 *
 * How this works
 *
 *   Only the public XTI API (<xti.h>, libxti) is used, the way an XTI
 *   program ported from another system would: each process t_open()s the
 *   device after the fork (its own STREAMS executive), t_bind()s a
 *   sockaddr_in for 127.0.0.1 port 0 and publishes what t_getprotaddr()
 *   says it is bound to.  The two devices of each family run the same
 *   code; only the device name differs.
 *
 *   UDP: the sender sends t_sndudata() to the receiver's address; the
 *   receiver remembers the sender's address for UDP_RR replies.  A
 *   T_UDERROR_IND (t_errno TLOOK) is taken with t_rcvuderr(), counted
 *   (the count is in the point's note), and the datagram in hand is sent
 *   again: the error is about an earlier one, which was counted as sent.
 *
 *   TCP: the receiver binds with qlen 1; the sender t_connect()s without
 *   blocking (a provider may confirm the connection only once it is
 *   accepted) and finishes with t_rcvconnect() in tx_ready, after the
 *   receiver has t_listen()ed and t_accept()ed on a second endpoint of
 *   the same device.  The sender ends with t_sndrel() and waits for the
 *   receiver's T_ORDREL before t_close() (a t_close with data still in
 *   the provider's queues may discard it); the receiver sees T_ORDREL
 *   (or T_DISCONNECT) as its end of data and answers with its own
 *   t_sndrel (xt_release).  Neither waits more than XT_REL_MS: a
 *   provider that stops taking data leaves a note and a shortfall the
 *   driver reports as an error, not a hang.
 *
 *   --bufsize is XTI_SNDBUF and XTI_RCVBUF (level XTI_GENERIC) with
 *   t_optmgmt(T_NEGOTIATE) on every endpoint before it binds (the
 *   accepting endpoint too); what T_CURRENT then reports is the granted
 *   size the point reports, as getsockopt() is for the sockets rows.
 *
 *   available() opens the device once, in a short-lived child of the
 *   parent: when t_open fails (no provider registered: ENOENT, TSYSERR,
 *   TBADNAME) every point of the row is "skipped: provider not
 *   available", never a zero.
 *
 *   Errors map to errno for the driver: TSYSERR gives errno, TFLOW
 *   EAGAIN, TBADDATA EMSGSIZE, TLOOK what the event means (T_DISCONNECT
 *   ECONNRESET, T_ORDREL end of data or EPIPE), anything else EPROTO.
 *   EINTR (SIGALRM, SIGUSR1) comes back as -1/EINTR, never retried here.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xti.h>
#include <xti_inet.h>

#include "strperf-point.h"

#define XT_POLL_MS	10000	/* t_listen / t_rcvconnect set-up bound */
#define XT_UDERR_MAX	64	/* error indications taken in one send */
#define XT_REL_MS	5000	/* wait for the peer's orderly release */

struct xt_priv {
	const char *dev;		/* the device this endpoint is on */
	struct sockaddr_in peer;	/* UDP: where sends go */
	int connecting;			/* TCP sender: t_rcvconnect pending */
	int eof;			/* TCP: the peer's release was taken */
	unsigned long uderr;		/* T_UDERROR_IND taken */
	int rel_timeout;		/* TCP: the peer never released */
};

static struct xt_priv *priv_of(struct sp_ep *ep)
{
	return ep->priv;
}

static const char *dev_of(const struct sp_point *pt)
{
	const char *n = pt->impl->name;
	int tcp = pt->test->family == SP_FAM_TCP;

	if (!strcmp(n, "tpi"))
		return tcp ? "/dev/tcp" : "/dev/udp";
	return tcp ? "/dev/inet/tcp" : "/dev/inet/udp";
}

/* The last XTI error as text, for set-up failures. */
static const char *xt_str(void)
{
	static char buf[96];

	if (t_errno == TSYSERR)
		snprintf(buf, sizeof(buf), "%s", strerror(errno));
	else
		snprintf(buf, sizeof(buf), "%s", t_strerror(t_errno));
	return buf;
}

static void loopback(struct sockaddr_in *sin, in_port_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = port;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

/* Take a published or received address; refuse all but 127.0.0.1:port. */
static int xt_inaddr(const void *buf, size_t len, struct sockaddr_in *sin,
		     const char *what)
{
	if (len != sizeof(*sin))
		return sp_fail("%s: %zu bytes, want a sockaddr_in (%zu)", what,
			       len, sizeof(*sin));
	memcpy(sin, buf, sizeof(*sin));
	if (sin->sin_family != AF_INET ||
	    sin->sin_addr.s_addr != htonl(INADDR_LOOPBACK) ||
	    sin->sin_port == 0)
		return sp_fail("%s is not 127.0.0.1:port", what);
	return 0;
}

/* ---- options: --bufsize ---- */

struct xt_bufopt {
	struct t_opthdr h;
	t_uscalar_t v;
};

/* The value of option name in an answer, or -1. */
static int opt_value(const struct t_optmgmt *ret, t_uscalar_t name)
{
	const struct t_opthdr *h;

	for (h = T_OPT_FIRSTHDR(&ret->opt); h; h = T_OPT_NEXTHDR(&ret->opt, h))
		if (h->level == XTI_GENERIC && h->name == name &&
		    h->len >= sizeof(*h) + sizeof(t_uscalar_t) &&
		    h->status != T_NOTSUPPORT && h->status != T_FAILURE) {
			t_uscalar_t v;

			memcpy(&v, T_OPT_DATA(h), sizeof(v));
			return v > 0x7fffffff ? 0x7fffffff : (int)v;
		}
	return -1;
}

/*
 * XTI_SNDBUF and XTI_RCVBUF to --bufsize (when it is not 0), then the
 * values in effect into ep->sndbuf/rcvbuf (-1 when the provider does not
 * say).  A provider that refuses the sizes fails the set-up: the rows must
 * all run with the same buffers.
 */
static int xt_setbufs(struct sp_ep *ep, int fd)
{
	struct xt_bufopt req[2], ans[2];
	struct t_optmgmt rq, rt;
	int v = ep->pt->bufsize;

	memset(req, 0, sizeof(req));
	req[0].h.len = req[1].h.len = sizeof(req[0]);
	req[0].h.level = req[1].h.level = XTI_GENERIC;
	req[0].h.name = XTI_SNDBUF;
	req[1].h.name = XTI_RCVBUF;
	req[0].v = req[1].v = (t_uscalar_t)v;
	memset(&rq, 0, sizeof(rq));
	memset(&rt, 0, sizeof(rt));
	rq.opt.buf = req;
	rq.opt.len = sizeof(req);
	rq.opt.maxlen = sizeof(req);
	rt.opt.buf = ans;
	rt.opt.maxlen = sizeof(ans);
	if (v > 0) {
		rq.flags = T_NEGOTIATE;
		if (t_optmgmt(fd, &rq, &rt) < 0)
			return sp_fail("t_optmgmt XTI_SNDBUF/XTI_RCVBUF %d: %s",
				       v, xt_str());
		if (rt.flags != T_SUCCESS && rt.flags != T_PARTSUCCESS)
			return sp_fail("t_optmgmt XTI_SNDBUF/XTI_RCVBUF %d: "
				       "refused (flags 0x%x)", v,
				       (unsigned)rt.flags);
	}
	rq.flags = T_CURRENT;
	memset(ans, 0, sizeof(ans));
	rt.opt.len = 0;
	if (t_optmgmt(fd, &rq, &rt) < 0) {
		ep->sndbuf = ep->rcvbuf = -1;
		return 0;
	}
	ep->sndbuf = opt_value(&rt, XTI_SNDBUF);
	ep->rcvbuf = opt_value(&rt, XTI_RCVBUF);
	return 0;
}

/* ---- opening ---- */

/*
 * A new endpoint on the point's device with the buffers set, bound to
 * 127.0.0.1 port 0 (qlen for a listener), or not bound (bindit 0: an
 * endpoint for t_accept).  Its own address, if self, from t_getprotaddr.
 * Returns the descriptor or -1.
 */
static int xt_endpoint(struct sp_ep *ep, int bindit, unsigned qlen,
		       struct sp_addr *self)
{
	const char *dev = dev_of(ep->pt);
	struct sockaddr_in sin, got;
	struct t_bind req, ret;
	int fd;

	fd = t_open(dev, O_RDWR, NULL);
	if (fd < 0)
		return sp_fail("t_open %s: %s", dev, xt_str());
	if (xt_setbufs(ep, fd) < 0)
		goto fail;
	if (!bindit) {
		if (t_bind(fd, NULL, NULL) < 0) {
			sp_fail("t_bind %s: %s", dev, xt_str());
			goto fail;
		}
		return fd;
	}
	loopback(&sin, 0);
	memset(&req, 0, sizeof(req));
	req.addr.buf = &sin;
	req.addr.len = req.addr.maxlen = sizeof(sin);
	req.qlen = qlen;
	memset(&ret, 0, sizeof(ret));
	ret.addr.buf = &got;
	ret.addr.maxlen = sizeof(got);
	if (t_bind(fd, &req, &ret) < 0) {
		sp_fail("t_bind %s 127.0.0.1: %s", dev, xt_str());
		goto fail;
	}
	if (qlen && ret.qlen < 1) {
		sp_fail("t_bind %s: qlen %u granted, want 1", dev, ret.qlen);
		goto fail;
	}
	if (self) {
		memset(&ret, 0, sizeof(ret));
		ret.addr.buf = &got;
		ret.addr.maxlen = sizeof(got);
		if (t_getprotaddr(fd, &ret, NULL) < 0) {
			sp_fail("t_getprotaddr %s: %s", dev, xt_str());
			goto fail;
		}
		if (xt_inaddr(&got, ret.addr.len, &sin, "t_getprotaddr") < 0)
			goto fail;
		self->len = sizeof(sin);
		memcpy(self->data, &sin, sizeof(sin));
	}
	return fd;
fail:
	t_close(fd);
	return -1;
}

static int xt_priv_new(struct sp_ep *ep)
{
	struct xt_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return sp_fail("out of memory");
	p->dev = dev_of(ep->pt);
	ep->priv = p;
	return 0;
}

/*
 * A ThreadSanitizer build cannot follow the executive into the forked
 * processes (see sp_pipe.c); otherwise the device must open.  The probe
 * runs in a child of its own, so the supervising parent never starts a
 * STREAMS executive of its own before it forks the sender and receiver:
 * they start from a process that has touched no stream.
 */
static int xt_available(const struct sp_point *pt, char *why, size_t len)
{
#if defined(__SANITIZE_THREAD__)
	(void)pt;
	snprintf(why, len, "not in a ThreadSanitizer build");
	return -1;
#else
	const char *dev = dev_of(pt);
	char msg[200] = "";
	int pfd[2], st, fd;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(why, len, "probe: pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "probe: fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		fd = t_open(dev, O_RDWR, NULL);
		if (fd < 0)
			snprintf(msg, sizeof(msg), "t_open %s: %s", dev,
				 xt_str());
		else
			t_close(fd);
		if (msg[0] && write(pfd[1], msg, strlen(msg)) < 0)
			_exit(2);
		_exit(fd < 0);
	}
	close(pfd[1]);
	/* the child's message, or end of file when it exits; a t_open
	 * that hangs is killed after XT_POLL_MS */
	for (;;) {
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		int r = poll(&pf, 1, XT_POLL_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			kill(pid, SIGKILL);
			snprintf(msg, sizeof(msg), "t_open %s did not return "
				 "within %d ms", dev, XT_POLL_MS);
			got = -1;
			break;
		}
		if ((size_t)got >= sizeof(msg) - 1)
			break;
		n = read(pfd[0], msg + got, sizeof(msg) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	if (got >= 0)
		msg[got] = 0;
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			st = -1;
			break;
		}
	if (st == 0 && got >= 0)
		return 0;
	if (!msg[0])
		snprintf(msg, sizeof(msg), "t_open %s: the probe process "
			 "ended with status 0x%x", dev, (unsigned)st);
	snprintf(why, len, "provider not available (%s)", msg);
	return -1;
#endif
}

/* ---- errors ---- */

/* What an event that t_errno TLOOK announced means; consumes it. */
static int xt_look(struct sp_ep *ep, int *eof)
{
	int ev = t_look(ep->fd);

	*eof = 0;
	switch (ev) {
	case T_DISCONNECT:
		t_rcvdis(ep->fd, NULL);
		*eof = 1;
		return ECONNRESET;
	case T_ORDREL:
		/* the peer is done: answer at once, it waits for this
		 * before its t_close (xt_release) */
		if (t_rcvrel(ep->fd) == 0 && t_getstate(ep->fd) == T_INREL)
			t_sndrel(ep->fd);
		*eof = 1;
		return EPIPE;
	case T_UDERR:
		t_rcvuderr(ep->fd, NULL);
		priv_of(ep)->uderr++;
		return ECONNREFUSED;
	case -1:
		return t_errno == TSYSERR ? errno : EPROTO;
	default:
		return EPROTO;
	}
}

/* errno for the XTI error of the last call (eof: the peer is done). */
static int xt_errno(struct sp_ep *ep, int *eof)
{
	*eof = 0;
	switch (t_errno) {
	case TSYSERR:
		return errno;
	case TFLOW:
		return EAGAIN;
	case TBADDATA:
		return EMSGSIZE;
	case TLOOK:
		return xt_look(ep, eof);
	default:
		return EPROTO;
	}
}

/* ---- UDP ---- */

static int udp_rx_open(struct sp_ep *ep, struct sp_shared *sh,
		       struct sp_addr *self)
{
	if (xt_priv_new(ep) < 0)
		return -1;
	ep->fd = xt_endpoint(ep, 1, 0, self);
	return ep->fd < 0 ? -1 : 0;
}

static int udp_tx_open(struct sp_ep *ep, struct sp_shared *sh,
		       const struct sp_addr *peer, struct sp_addr *self)
{
	if (xt_priv_new(ep) < 0)
		return -1;
	if (xt_inaddr(peer->data, peer->len, &priv_of(ep)->peer,
		      "receiver's address") < 0)
		return -1;
	ep->fd = xt_endpoint(ep, 1, 0, self);
	return ep->fd < 0 ? -1 : 0;
}

static int udp_rx_accept(struct sp_ep *ep, const struct sp_addr *peer)
{
	return xt_inaddr(peer->data, peer->len, &priv_of(ep)->peer,
			 "sender's address");
}

static ssize_t udp_send(struct sp_ep *ep, const void *buf, size_t len)
{
	struct xt_priv *p = priv_of(ep);
	struct t_unitdata ud;
	int e, eof, tries = 0;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = &p->peer;
	ud.addr.len = ud.addr.maxlen = sizeof(p->peer);
	ud.udata.buf = (void *)buf;
	ud.udata.len = ud.udata.maxlen = (unsigned)len;
	for (;;) {
		if (t_sndudata(ep->fd, &ud) == 0)
			return (ssize_t)len;
		e = xt_errno(ep, &eof);
		/* an error indication about an earlier datagram: this one
		 * was not sent yet; in RR tests it is the end */
		if (e == ECONNREFUSED &&
		    ep->pt->test->mode == SP_MODE_STREAM &&
		    ++tries < XT_UDERR_MAX)
			continue;
		errno = e;
		return -1;
	}
}

static ssize_t udp_recv(struct sp_ep *ep, void *buf, size_t len, int waitall)
{
	struct t_unitdata ud;
	int flags = 0, eof;

	memset(&ud, 0, sizeof(ud));
	ud.udata.buf = buf;
	ud.udata.maxlen = (unsigned)len;
	if (t_rcvudata(ep->fd, &ud, &flags) == 0)
		return ud.udata.len;
	errno = xt_errno(ep, &eof);
	return -1;
}

/* ---- TCP ---- */

static int tcp_rx_open(struct sp_ep *ep, struct sp_shared *sh,
		       struct sp_addr *self)
{
	if (xt_priv_new(ep) < 0)
		return -1;
	ep->lfd = xt_endpoint(ep, 1, 1, self);
	return ep->lfd < 0 ? -1 : 0;
}

static int tcp_tx_open(struct sp_ep *ep, struct sp_shared *sh,
		       const struct sp_addr *peer, struct sp_addr *self)
{
	struct sockaddr_in to;
	struct t_call call;
	int fl;

	if (xt_priv_new(ep) < 0)
		return -1;
	if (xt_inaddr(peer->data, peer->len, &to, "receiver's address") < 0)
		return -1;
	ep->fd = xt_endpoint(ep, 1, 0, self);
	if (ep->fd < 0)
		return -1;
	memset(&call, 0, sizeof(call));
	call.addr.buf = &to;
	call.addr.len = call.addr.maxlen = sizeof(to);
	fl = fcntl(ep->fd, F_GETFL);
	if (fl < 0 || fcntl(ep->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return sp_fail("O_NONBLOCK: %s", strerror(errno));
	if (t_connect(ep->fd, &call, NULL) == 0)
		priv_of(ep)->connecting = 0;
	else if (t_errno == TNODATA)
		priv_of(ep)->connecting = 1;
	else
		return sp_fail("t_connect %s: %s", priv_of(ep)->dev, xt_str());
	if (fcntl(ep->fd, F_SETFL, fl) < 0)
		return sp_fail("F_SETFL: %s", strerror(errno));
	return 0;
}

/* Wait up to XT_POLL_MS for fd to have something to read. */
static int xt_wait(int fd, const char *what)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN | POLLPRI };
	int r;

	do
		r = poll(&pf, 1, XT_POLL_MS);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return sp_fail("poll for %s: %s", what, strerror(errno));
	if (r == 0)
		return sp_fail("no %s within %d ms", what, XT_POLL_MS);
	return 0;
}

/* The sender, after the receiver accepted: the connection is confirmed. */
static int tcp_tx_ready(struct sp_ep *ep)
{
	struct xt_priv *p = priv_of(ep);

	if (!p->connecting)
		return 0;
	if (xt_wait(ep->fd, "connection confirmation") < 0)
		return -1;
	if (t_rcvconnect(ep->fd, NULL) < 0)
		return sp_fail("t_rcvconnect %s: %s", p->dev, xt_str());
	p->connecting = 0;
	return 0;
}

static int tcp_rx_accept(struct sp_ep *ep, const struct sp_addr *peer)
{
	struct sockaddr_in want, from, got;
	struct t_call call;

	if (xt_inaddr(peer->data, peer->len, &want, "sender's address") < 0)
		return -1;
	memset(&call, 0, sizeof(call));
	call.addr.buf = &from;
	call.addr.maxlen = sizeof(from);
	if (xt_wait(ep->lfd, "connect indication") < 0)
		return -1;
	if (t_listen(ep->lfd, &call) < 0)
		return sp_fail("t_listen %s: %s", priv_of(ep)->dev, xt_str());
	if (xt_inaddr(&from, call.addr.len, &got, "caller's address") < 0)
		return -1;
	if (got.sin_port != want.sin_port)
		return sp_fail("t_listen: connection is not from the sender");
	ep->fd = xt_endpoint(ep, 0, 0, NULL);
	if (ep->fd < 0)
		return -1;
	if (t_accept(ep->lfd, ep->fd, &call) < 0)
		return sp_fail("t_accept %s: %s", priv_of(ep)->dev, xt_str());
	t_close(ep->lfd);
	ep->lfd = -1;
	/* what the accepted endpoint has now */
	return xt_setbufs(ep, ep->fd);
}

static ssize_t tcp_send(struct sp_ep *ep, const void *buf, size_t len)
{
	int n, eof;

	if (len > 0x7fffffff)
		len = 0x7fffffff;
	n = t_snd(ep->fd, (void *)buf, (unsigned)len, 0);
	if (n >= 0)
		return n;
	errno = xt_errno(ep, &eof);
	return -1;
}

/* One t_rcv, or with waitall t_rcv until len bytes, end of data or an
 * interruption.  A zero-length piece is not the end of data: the end is
 * T_ORDREL or T_DISCONNECT, remembered once taken. */
static ssize_t tcp_recv(struct sp_ep *ep, void *buf, size_t len, int waitall)
{
	struct xt_priv *p = priv_of(ep);
	size_t got = 0;
	int n, flags, e;

	if (len > 0x7fffffff)
		len = 0x7fffffff;
	while (!p->eof) {
		flags = 0;
		n = t_rcv(ep->fd, (char *)buf + got, (unsigned)(len - got),
			  &flags);
		if (n < 0) {
			e = xt_errno(ep, &p->eof);
			if (got || p->eof)
				break;
			errno = e;
			return -1;
		}
		got += n;
		if (got && (!waitall || got >= len))
			break;
	}
	return got;
}

/*
 * The end of a connection, both ways orderly, so that t_close discards
 * nothing still on its way: a side that has not released yet sends
 * T_ORDREL_REQ (t_sndrel); a side that has (T_OUTREL) then waits up to
 * XT_REL_MS for the peer's T_ORDREL (or T_DISCONNECT), reading and
 * dropping any data still arriving.  A receiver that took the sender's
 * release (T_INREL) answers it with its own.  Only then t_close.
 */
static void xt_release(struct sp_ep *ep)
{
	static char sink[65536];
	struct pollfd pf = { .fd = ep->fd, .events = POLLIN | POLLPRI };
	struct pollfd pw = { .fd = ep->fd, .events = POLLOUT };
	struct timespec t0, t;
	int st = t_getstate(ep->fd), flags, ms, fl;

	/* never block in a close: the release waits for room, but not
	 * longer than XT_REL_MS */
	fl = fcntl(ep->fd, F_GETFL);
	if (fl >= 0)
		fcntl(ep->fd, F_SETFL, fl | O_NONBLOCK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (st == T_INREL || st == T_DATAXFER) {
		if (t_sndrel(ep->fd) == 0)
			break;
		if (t_errno != TFLOW)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = XT_REL_MS - (int)((t.tv_sec - t0.tv_sec) * 1000 +
				       (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0) {
			/* the data sent before it never left */
			priv_of(ep)->rel_timeout = 2;
			return;
		}
		pw.revents = 0;
		poll(&pw, 1, ms < 50 ? ms : 50);
	}
	if (st == T_INREL)
		return;
	while (t_getstate(ep->fd) == T_OUTREL) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = XT_REL_MS - (int)((t.tv_sec - t0.tv_sec) * 1000 +
				       (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0) {
			priv_of(ep)->rel_timeout = 1;
			return;
		}
		if (poll(&pf, 1, ms) <= 0)
			continue;
		switch (t_look(ep->fd)) {
		case T_ORDREL:
			t_rcvrel(ep->fd);
			break;
		case T_DISCONNECT:
			t_rcvdis(ep->fd, NULL);
			return;
		case T_DATA:
		case T_EXDATA:
			if (t_rcv(ep->fd, sink, sizeof(sink), &flags) < 0 &&
			    t_errno != TLOOK && t_errno != TNODATA)
				return;
			break;
		case -1:
			return;
		default:
			break;
		}
	}
}

static void xt_close(struct sp_ep *ep)
{
	struct xt_priv *p = priv_of(ep);

	if (ep->fd >= 0) {
		if (ep->pt->test->family == SP_FAM_TCP)
			xt_release(ep);
		t_close(ep->fd);
		ep->fd = -1;
	}
	if (ep->lfd >= 0) {
		t_close(ep->lfd);
		ep->lfd = -1;
	}
	if (p && p->uderr)
		snprintf(ep->info, sizeof(ep->info),
			 "%lu T_UDERROR_IND taken", p->uderr);
	if (p && p->rel_timeout == 1)
		snprintf(ep->info, sizeof(ep->info), "no T_ORDREL from the "
			 "peer within %d ms of t_sndrel; closed", XT_REL_MS);
	if (p && p->rel_timeout == 2)
		snprintf(ep->info, sizeof(ep->info), "t_sndrel found no room "
			 "for %d ms: the provider stopped taking data "
			 "(flow control never lifted); closed", XT_REL_MS);
	free(p);
	ep->priv = NULL;
}

#define XT_UDP							\
	.family = SP_FAM_UDP,					\
	.modes = SP_MODE_STREAM | SP_MODE_RR,			\
	.byte_stream = 0,					\
	.available = xt_available,				\
	.rx_open = udp_rx_open,					\
	.tx_open = udp_tx_open,					\
	.rx_accept = udp_rx_accept,				\
	.send = udp_send,					\
	.recv = udp_recv,					\
	.close = xt_close

#define XT_TCP							\
	.family = SP_FAM_TCP,					\
	.modes = SP_MODE_STREAM | SP_MODE_RR,			\
	.byte_stream = 1,					\
	.available = xt_available,				\
	.rx_open = tcp_rx_open,					\
	.tx_open = tcp_tx_open,					\
	.rx_accept = tcp_rx_accept,				\
	.tx_ready = tcp_tx_ready,				\
	.send = tcp_send,					\
	.recv = tcp_recv,					\
	.close = xt_close

const struct sp_impl sp_udp_xtios = {
	.name = "xtios",
	.desc = "STREAMS XTI over sockets, /dev/inet/udp: one "
		"t_sndudata()/t_rcvudata() per message",
	XT_UDP,
};

const struct sp_impl sp_udp_tpi = {
	.name = "tpi",
	.desc = "STREAMS TPI UDP provider, /dev/udp, through XTI: one "
		"t_sndudata()/t_rcvudata() per message",
	XT_UDP,
};

const struct sp_impl sp_tcp_xtios = {
	.name = "xtios",
	.desc = "STREAMS XTI over sockets, /dev/inet/tcp: one "
		"t_snd()/t_rcv() per message",
	XT_TCP,
};

const struct sp_impl sp_tcp_tpi = {
	.name = "tpi",
	.desc = "STREAMS TPI TCP provider, /dev/tcp, through XTI: one "
		"t_snd()/t_rcv() per message",
	XT_TCP,
};
