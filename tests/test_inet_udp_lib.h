/*
 * test_inet_udp_lib.h -- what the test_inet_udp_* programs on /dev/udp
 * share: loopback addresses, binding, sending a datagram, the
 * provider's counts, a monotonic clock.
 */
#ifndef STREAMS_TEST_INET_UDP_LIB_H
#define STREAMS_TEST_INET_UDP_LIB_H

#include <fcntl.h>

#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/inet_stats.h>
#include <time.h>
#include <xti_inet.h>

static void loop_addr(struct sockaddr_in *a, unsigned short port)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->sin_port = htons(port);
}

/* A /dev/udp endpoint bound to 127.0.0.1:port (0: any port); its
 * address in *got. */
static int open_bound_port(struct sockaddr_in *got, unsigned short port)
{
	struct sockaddr_in req;
	struct t_bind b, r;
	int fd = t_open("/dev/udp", O_RDWR, NULL);

	REQUIRE(fd >= 0);
	loop_addr(&req, port);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&req;
	b.addr.len = sizeof(req);
	memset(&r, 0, sizeof(r));
	r.addr.buf = (char *)got;
	r.addr.maxlen = sizeof(*got);
	REQUIRE(t_bind(fd, &b, &r) == 0);
	return fd;
}

static int open_bound(struct sockaddr_in *got)
{
	return open_bound_port(got, 0);
}

static int snd(int fd, const struct sockaddr_in *to, const void *p,
	       unsigned n)
{
	struct t_unitdata ud;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = (char *)to;
	ud.addr.len = sizeof(*to);
	ud.udata.buf = (char *)p;
	ud.udata.len = n;
	return t_sndudata(fd, &ud);
}

/* t_rcvudata into buf (max bytes), waiting for it up to ms (-1: as
 * long as t_rcvudata does): its length, or -1 (t_errno; or nothing came
 * in time) */
static int rcv_ms(int fd, char *buf, unsigned max, int ms)
{
	struct sockaddr_in from;
	struct t_unitdata ud;
	struct pollfd p = { fd, POLLIN, 0 };
	int flags = 0;

	if (ms >= 0 && poll(&p, 1, ms) != 1)
		return -1;
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = (char *)&from;
	ud.addr.maxlen = sizeof(from);
	ud.udata.buf = buf;
	ud.udata.maxlen = max;
	if (t_rcvudata(fd, &ud, &flags) != 0)
		return -1;
	return (int)ud.udata.len;
}

/* XTI_RCVBUF of bytes on fd (the kernel doubles it, as SO_RCVBUF) */
static void set_rcvbuf(int fd, int bytes)
{
	struct {
		struct t_opthdr h;
		t_uscalar_t v;
	} o = { { sizeof(o), XTI_GENERIC, XTI_RCVBUF, 0 },
		(t_uscalar_t)bytes };
	struct t_optmgmt req, ret;
	char rb[64];

	memset(&req, 0, sizeof(req));
	req.opt.buf = (char *)&o;
	req.opt.len = sizeof(o);
	req.flags = T_NEGOTIATE;
	memset(&ret, 0, sizeof(ret));
	ret.opt.buf = rb;
	ret.opt.maxlen = sizeof(rb);
	CHECK_RET(t_optmgmt(fd, &req, &ret), 0);
}

static struct inet_stats stats(int fd)
{
	struct inet_stats st;
	struct strioctl ic = { INET_IOC_STATS, -1, sizeof(st), (char *)&st };

	memset(&st, 0, sizeof(st));
	CHECK_RET(ioctl(fd, I_STR, &ic), 0);
	CHECK_EQ(ic.ic_len, (int)sizeof(st));
	return st;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
