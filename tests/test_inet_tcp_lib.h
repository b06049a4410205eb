/*
 * test_inet_tcp_lib.h -- what the test_inet_tcp_* programs share: the
 * four configurations every test runs in (/dev/inet/tcp and /dev/tcp,
 * over 127.0.0.1 and ::1), loopback addresses, binding, connecting an
 * XTI caller to an XTI listener, and waiting for an event.
 */
#ifndef STREAMS_TEST_INET_TCP_LIB_H
#define STREAMS_TEST_INET_TCP_LIB_H

#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <xti_inet.h>

struct cfg {
	const char *dev;
	int family;
};

static const struct cfg cfgs[] = {
	{ "/dev/inet/tcp", AF_INET },
	{ "/dev/tcp", AF_INET },
	{ "/dev/inet/tcp", AF_INET6 },
	{ "/dev/tcp", AF_INET6 },
};

static const struct cfg *cur;	/* the configuration running */

/* A socket address of the loopback of family with port (host order). */
struct sa {
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
		struct sockaddr_storage ss;
	} u;
	socklen_t len;
};

static inline struct sa sa_lo(int family, unsigned port)
{
	struct sa a;

	memset(&a, 0, sizeof(a));
	if (family == AF_INET6) {
		a.u.in6.sin6_family = AF_INET6;
		a.u.in6.sin6_port = htons((uint16_t)port);
		a.u.in6.sin6_addr = in6addr_loopback;
		a.len = sizeof(a.u.in6);
	} else {
		a.u.in.sin_family = AF_INET;
		a.u.in.sin_port = htons((uint16_t)port);
		a.u.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.len = sizeof(a.u.in);
	}
	return a;
}

static inline unsigned sa_port(const struct sa *a)
{
	return ntohs(a->u.sa.sa_family == AF_INET6 ? a->u.in6.sin6_port
						   : a->u.in.sin_port);
}

/* Is ::1 usable here? */
static inline bool have_ipv6(void)
{
	struct sa a = sa_lo(AF_INET6, 0);
	int s = socket(AF_INET6, SOCK_STREAM, 0), ok;

	if (s < 0)
		return false;
	ok = bind(s, &a.u.sa, a.len) == 0;
	close(s);
	return ok;
}

static inline int xt_open(void)
{
	return t_open(cur->dev, O_RDWR, NULL);
}

/* Bind fd to the loopback, port (0: any), qlen: the qlen granted or -1;
 * the bound address into *got when given. */
static inline int xt_bind_lo(int fd, unsigned port, unsigned qlen,
			     struct sa *got)
{
	struct sa a = sa_lo(cur->family, port), r;
	struct t_bind req, ret;

	memset(&r, 0, sizeof(r));
	req.addr.buf = (char *)&a.u;
	req.addr.len = a.len;
	req.addr.maxlen = 0;
	req.qlen = qlen;
	ret.addr.buf = (char *)&r.u;
	ret.addr.maxlen = sizeof(r.u);
	ret.addr.len = 0;
	ret.qlen = 0;
	if (t_bind(fd, &req, &ret) != 0)
		return -1;
	r.len = ret.addr.len;
	if (got != NULL)
		*got = r;
	return (int)ret.qlen;
}

/* A listener on the loopback (any port): its fd, address into *a. */
static inline int xt_listener(unsigned qlen, struct sa *a)
{
	int fd = xt_open();

	if (fd < 0)
		return -1;
	if (xt_bind_lo(fd, 0, qlen, a) != (int)qlen) {
		t_close(fd);
		return -1;
	}
	return fd;
}

/* Start a connection from cli to a, without waiting: 0 or -1. */
static inline int xt_call(int cli, const struct sa *a)
{
	struct t_call c;
	int r;

	memset(&c, 0, sizeof(c));
	c.addr.buf = (char *)&a->u;
	c.addr.len = a->len;
	if (set_nonblock(cli, true) != 0)
		return -1;
	r = t_connect(cli, &c, NULL);
	set_nonblock(cli, false);
	return r == -1 && t_errno == TNODATA ? 0 : -1;
}

/* The caller's T_CONNECT, waited for: 0 or -1. */
static inline int xt_connected(int cli)
{
	return t_rcvconnect(cli, NULL);
}

/* Wait for one indication at the listener; *seq its sequence and the
 * caller's address into *from when given: 0 or -1. */
static inline int xt_listen(int lfd, int *seq, struct sa *from)
{
	struct t_call c;
	struct sa f;

	memset(&c, 0, sizeof(c));
	memset(&f, 0, sizeof(f));
	c.addr.buf = (char *)&f.u;
	c.addr.maxlen = sizeof(f.u);
	if (t_listen(lfd, &c) != 0)
		return -1;
	f.len = c.addr.len;
	*seq = c.sequence;
	if (from != NULL)
		*from = f;
	return 0;
}

static inline int xt_accept(int lfd, int acc, int seq)
{
	struct t_call c;

	memset(&c, 0, sizeof(c));
	c.sequence = seq;
	return t_accept(lfd, acc, &c);
}

/* A connected pair: *c the caller, *s the accepting endpoint (a new one
 * bound for us).  0 or -1. */
static inline int xt_pair(int *c, int *s)
{
	struct sa a;
	int lfd = xt_listener(1, &a), seq = -1, r = -1;

	*c = xt_open();
	*s = xt_open();
	if (lfd < 0 || *c < 0 || *s < 0)
		goto out;
	if (xt_bind_lo(*c, 0, 0, NULL) != 0 || xt_call(*c, &a) != 0 ||
	    xt_listen(lfd, &seq, NULL) != 0 || xt_accept(lfd, *s, seq) != 0 ||
	    xt_connected(*c) != 0)
		goto out;
	r = 0;
out:
	if (lfd >= 0)
		t_close(lfd);
	return r;
}

/* Wait up to ms for event ev at fd (t_look); the last event seen. */
static inline int xt_wait_event(int fd, int ev, int ms)
{
	long end = now_ms() + ms;
	int e;

	while ((e = t_look(fd)) != ev && now_ms() < end)
		pause_ms(1);
	return e;
}

/* Read exactly n bytes (blocking t_rcv): 0 or -1. */
static inline int xt_rcv_all(int fd, char *buf, size_t n)
{
	size_t have = 0;
	int flags;

	while (have < n) {
		int r = t_rcv(fd, buf + have, (unsigned)(n - have), &flags);

		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return 0;
}

#define FOR_EACH_CFG(body) do {						\
	bool _v6 = have_ipv6();						\
	for (size_t _i = 0; _i < sizeof(cfgs) / sizeof(cfgs[0]); _i++) {	\
		cur = &cfgs[_i];					\
		if (cur->family == AF_INET6 && !_v6)			\
			continue;					\
		fprintf(stderr, "-- %s %s\n", cur->dev,		\
			cur->family == AF_INET6 ? "::1" : "127.0.0.1");	\
		body;							\
	}								\
} while (0)

#endif
