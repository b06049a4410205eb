/*
 * sp_sockets.c -- Linux sockets over IPv4 loopback, one send()/recv() per
 * message: the baseline rows of every network test.
 *
 * How this works
 *
 *   UDP: the receiver binds 127.0.0.1 port 0 and publishes the port; the
 *   sender binds its own ephemeral port, connects to the receiver and
 *   publishes its address; the receiver then connects back, so both sides
 *   use plain send()/recv() and request/response tests can reply.
 *
 *   TCP: the receiver listens on 127.0.0.1 port 0 (buffers set before
 *   listen(), so the window scale matches --bufsize), the sender connects,
 *   the receiver accepts.  Nagle stays on, as in the papers' runs.
 *
 *   The "-nice" rows are the same functions; the driver runs the sender at
 *   nice -20 and the receiver at nice +19 (the papers' netperf_nice2).
 *   Only 127.0.0.1 is ever used: the address a peer publishes is checked
 *   to be loopback before anything connects to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "strperf-point.h"

/* Fill *sin with 127.0.0.1:port. */
static void sk_loopback(struct sockaddr_in *sin, in_port_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = port;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

/* Take a published address; refuse anything but IPv4 loopback. */
static int sk_peer(const struct sp_addr *a, struct sockaddr_in *sin)
{
	if (a->len != sizeof(*sin))
		return sp_fail("peer address: %u bytes, want %zu", a->len,
			       sizeof(*sin));
	memcpy(sin, a->data, sizeof(*sin));
	if (sin->sin_family != AF_INET ||
	    sin->sin_addr.s_addr != htonl(INADDR_LOOPBACK) ||
	    sin->sin_port == 0)
		return sp_fail("peer address is not 127.0.0.1:port");
	return 0;
}

/* Publish the bound address of fd. */
static int sk_self(int fd, struct sp_addr *self)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	if (getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		return sp_fail("getsockname: %s", strerror(errno));
	if (len != sizeof(sin))
		return sp_fail("getsockname: unexpected length %u", len);
	self->len = sizeof(sin);
	memcpy(self->data, &sin, sizeof(sin));
	return 0;
}

/* A socket of type, with --bufsize applied, bound to 127.0.0.1:0. */
static int sk_bound(struct sp_ep *ep, int type)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sp_fail("socket: %s", strerror(errno));
	if (type == SOCK_STREAM &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		sp_fail("SO_REUSEADDR: %s", strerror(errno));
		goto fail;
	}
	if (sp_set_sockbufs(ep, fd) < 0)
		goto fail;
	sk_loopback(&sin, 0);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		sp_fail("bind 127.0.0.1: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* ---- UDP ---- */

static int udp_rx_open(struct sp_ep *ep, struct sp_shared *sh,
		       struct sp_addr *self)
{
	ep->fd = sk_bound(ep, SOCK_DGRAM);
	if (ep->fd < 0)
		return -1;
	return sk_self(ep->fd, self);
}

static int udp_tx_open(struct sp_ep *ep, struct sp_shared *sh,
		       const struct sp_addr *peer, struct sp_addr *self)
{
	struct sockaddr_in sin;

	if (sk_peer(peer, &sin) < 0)
		return -1;
	ep->fd = sk_bound(ep, SOCK_DGRAM);
	if (ep->fd < 0)
		return -1;
	if (connect(ep->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return sp_fail("connect: %s", strerror(errno));
	return sk_self(ep->fd, self);
}

static int udp_rx_accept(struct sp_ep *ep, const struct sp_addr *peer)
{
	struct sockaddr_in sin;

	if (sk_peer(peer, &sin) < 0)
		return -1;
	if (connect(ep->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return sp_fail("connect: %s", strerror(errno));
	return 0;
}

/* ---- TCP ---- */

static int tcp_rx_open(struct sp_ep *ep, struct sp_shared *sh,
		       struct sp_addr *self)
{
	ep->lfd = sk_bound(ep, SOCK_STREAM);
	if (ep->lfd < 0)
		return -1;
	if (listen(ep->lfd, 1) < 0)
		return sp_fail("listen: %s", strerror(errno));
	return sk_self(ep->lfd, self);
}

static int tcp_tx_open(struct sp_ep *ep, struct sp_shared *sh,
		       const struct sp_addr *peer, struct sp_addr *self)
{
	struct sockaddr_in sin;

	if (sk_peer(peer, &sin) < 0)
		return -1;
	ep->fd = sk_bound(ep, SOCK_STREAM);
	if (ep->fd < 0)
		return -1;
	if (connect(ep->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return sp_fail("connect: %s", strerror(errno));
	return sk_self(ep->fd, self);
}

static int tcp_rx_accept(struct sp_ep *ep, const struct sp_addr *peer)
{
	struct sockaddr_in want, got;
	socklen_t len = sizeof(got);

	if (sk_peer(peer, &want) < 0)
		return -1;
	ep->fd = accept4(ep->lfd, (struct sockaddr *)&got, &len, SOCK_CLOEXEC);
	if (ep->fd < 0)
		return sp_fail("accept: %s", strerror(errno));
	sp_close_fd(&ep->lfd);
	if (len != sizeof(got) || got.sin_port != want.sin_port ||
	    got.sin_addr.s_addr != want.sin_addr.s_addr)
		return sp_fail("accept: connection is not from the sender");
	/* report what the accepted socket inherited */
	ep->sndbuf = ep->rcvbuf = -1;
	return sp_set_sockbufs(ep, ep->fd);
}

/* ---- data path, both families ---- */

static ssize_t sk_send(struct sp_ep *ep, const void *buf, size_t len)
{
	return send(ep->fd, buf, len, MSG_NOSIGNAL);
}

static ssize_t sk_recv(struct sp_ep *ep, void *buf, size_t len, int waitall)
{
	return recv(ep->fd, buf, len, waitall ? MSG_WAITALL : 0);
}

static void sk_close(struct sp_ep *ep)
{
	sp_close_fd(&ep->fd);
	sp_close_fd(&ep->lfd);
}

#define UDP_OPS							\
	.family = SP_FAM_UDP,					\
	.modes = SP_MODE_STREAM | SP_MODE_RR,			\
	.byte_stream = 0,					\
	.rx_open = udp_rx_open,					\
	.tx_open = udp_tx_open,					\
	.rx_accept = udp_rx_accept,				\
	.send = sk_send,					\
	.recv = sk_recv,					\
	.close = sk_close

#define TCP_OPS							\
	.family = SP_FAM_TCP,					\
	.modes = SP_MODE_STREAM | SP_MODE_RR,			\
	.byte_stream = 1,					\
	.rx_open = tcp_rx_open,					\
	.tx_open = tcp_tx_open,					\
	.rx_accept = tcp_rx_accept,				\
	.send = sk_send,					\
	.recv = sk_recv,					\
	.close = sk_close

const struct sp_impl sp_udp_sockets = {
	.name = "sockets",
	.desc = "Linux UDP sockets, one send()/recv() per message",
	UDP_OPS,
};

const struct sp_impl sp_udp_sockets_nice = {
	.name = "sockets-nice",
	.desc = "Linux UDP sockets, sender nice -20, receiver nice +19",
	.nice_tx = -20,
	.nice_rx = 19,
	UDP_OPS,
};

const struct sp_impl sp_tcp_sockets = {
	.name = "sockets",
	.desc = "Linux TCP sockets, one send()/recv() per message",
	TCP_OPS,
};

const struct sp_impl sp_tcp_sockets_nice = {
	.name = "sockets-nice",
	.desc = "Linux TCP sockets, sender nice -20, receiver nice +19",
	.nice_tx = -20,
	.nice_rx = 19,
	TCP_OPS,
};
