/*
 * test_inet_udp -- the UDP providers through XTI, both families
 * (/dev/inet/udp: XTI over sockets; /dev/udp: batching), over 127.0.0.1
 * and ::1: t_info, binding to any address (port chosen and reported,
 * equal to what the kernel says), addresses of the wrong length or
 * family (TBADADDR), a port in use (TADDRBUSY), datagrams both ways with
 * the right source, mixed sizes and mixed destinations in one burst
 * (the GSO runs and the groups around them), zero-length datagrams,
 * TBADDATA over TSDU_size, interoperation with plain sockets in both
 * directions, ICMP port unreachable as T_UDERROR_IND (t_rcvuderr with
 * the destination and ECONNREFUSED), the statistics ioctl (and fewer
 * sending calls than datagrams on the batching provider), options
 * negotiated against the kernel, TNODATA when non-blocking, and
 * datagrams whose data is a chain of up to 1100 blocks (a module above
 * the provider splits them), and datagrams of one size sent in whole
 * GSO messages.
 */
#include <fcntl.h>

#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/inet_stats.h>
#include <xti_inet.h>

#ifndef UDP_GRO
#define UDP_GRO		104
#endif

static const char *dev;
static int fam;

static socklen_t sa_len(void)
{
	return fam == AF_INET6 ? sizeof(struct sockaddr_in6)
			       : sizeof(struct sockaddr_in);
}

static void loop_addr(struct sockaddr_storage *ss, unsigned short port)
{
	memset(ss, 0, sizeof(*ss));
	if (fam == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons(port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s4->sin_port = htons(port);
	}
}

static unsigned short port_of(const void *a)
{
	const struct sockaddr_storage *ss = a;

	return ntohs(ss->ss_family == AF_INET6 ?
		     ((const struct sockaddr_in6 *)a)->sin6_port :
		     ((const struct sockaddr_in *)a)->sin_port);
}

/* An endpoint bound to loopback port 0; *addr gets the bound address. */
static int open_bound(struct sockaddr_storage *addr)
{
	struct sockaddr_storage req;
	struct t_bind b, r;
	int fd = t_open(dev, O_RDWR, NULL);

	REQUIRE(fd >= 0);
	loop_addr(&req, 0);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&req;
	b.addr.len = sa_len();
	memset(&r, 0, sizeof(r));
	r.addr.buf = (char *)addr;
	r.addr.maxlen = sizeof(*addr);
	REQUIRE(t_bind(fd, &b, &r) == 0);
	CHECK_EQ(r.addr.len, sa_len());
	CHECK(port_of(addr) != 0);
	return fd;
}

static int rcv(int fd, void *buf, unsigned max, struct sockaddr_storage *src,
	       int *flags)
{
	struct t_unitdata ud;
	long end = now_ms() + 5000;
	int fl = fcntl(fd, F_GETFL), r;

	/* looks, never blocks: a datagram that does not come fails the
	 * test after 5 s instead of hanging it */
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = (char *)src;
	ud.addr.maxlen = sizeof(*src);
	ud.udata.buf = buf;
	ud.udata.maxlen = max;
	for (;;) {
		*flags = 0;
		if (t_rcvudata(fd, &ud, flags) == 0) {
			r = (int)ud.udata.len;
			break;
		}
		if (t_errno != TNODATA || now_ms() > end) {
			r = -1;
			break;
		}
		pause_ms(1);
	}
	fcntl(fd, F_SETFL, fl);
	return r;
}

static int snd(int fd, const struct sockaddr_storage *to, const void *p,
	       unsigned n)
{
	struct t_unitdata ud;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = (char *)to;
	ud.addr.len = sa_len();
	ud.udata.buf = (char *)p;
	ud.udata.len = n;
	return t_sndudata(fd, &ud);
}

static void get_stats(int fd, struct inet_stats *st)
{
	struct strioctl ic = { INET_IOC_STATS, -1, sizeof(*st), (char *)st };

	memset(st, 0, sizeof(*st));
	CHECK_RET(ioctl(fd, I_STR, &ic), 0);
}

static void test_info_bind(void)
{
	struct t_info ti;
	struct sockaddr_storage a, bad;
	struct sockaddr_in6 in6;
	struct t_bind b;
	int fd, fd2, s;

	fd = t_open(dev, O_RDWR, &ti);
	REQUIRE(fd >= 0);
	CHECK_EQ(ti.servtype, T_CLTS);
	CHECK_EQ(ti.tsdu, 65507);
	CHECK_EQ(ti.addr, (long)sizeof(struct sockaddr_in6));
	CHECK_EQ(ti.etsdu, T_INVALID);
	CHECK_EQ(ti.connect, T_INVALID);
	CHECK_EQ(ti.flags & T_SENDZERO, T_SENDZERO);
	/* a NULL request binds to any address and says which */
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&a;
	b.addr.maxlen = sizeof(a);
	CHECK_RET(t_bind(fd, NULL, &b), 0);
	CHECK_EQ(b.addr.len, sizeof(struct sockaddr_in));
	CHECK_EQ(((struct sockaddr_in *)&a)->sin_family, AF_INET);
	CHECK(port_of(&a) != 0);
	CHECK_STATE(fd, T_IDLE);
	CHECK_RET(t_unbind(fd), 0);
	/* wrong lengths and families */
	loop_addr(&bad, 0);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&bad;
	b.addr.len = 10;
	CHECK_TERR(t_bind(fd, &b, NULL), TBADADDR);
	b.addr.len = sa_len() + 1;
	CHECK_TERR(t_bind(fd, &b, NULL), TBADADDR);
	((struct sockaddr *)&bad)->sa_family = AF_UNIX;
	b.addr.len = sa_len();
	CHECK_TERR(t_bind(fd, &b, NULL), TBADADDR);
	memset(&in6, 0, sizeof(in6));
	in6.sin6_family = AF_INET;	/* IPv4 family, IPv6 length */
	b.addr.buf = (char *)&in6;
	b.addr.len = sizeof(in6);
	CHECK_TERR(t_bind(fd, &b, NULL), TBADADDR);
	CHECK_STATE(fd, T_UNBND);
	/* a port in use */
	s = socket(fam, SOCK_DGRAM, 0);
	REQUIRE(s >= 0);
	loop_addr(&a, 0);
	REQUIRE(bind(s, (struct sockaddr *)&a, sa_len()) == 0);
	{
		socklen_t l = sizeof(a);

		REQUIRE(getsockname(s, (struct sockaddr *)&a, &l) == 0);
	}
	b.addr.buf = (char *)&a;
	b.addr.len = sa_len();
	CHECK_TERR(t_bind(fd, &b, NULL), TADDRBUSY);
	close(s);
	CHECK_RET(t_bind(fd, &b, NULL), 0);	/* free again */
	/* sending while unbound */
	fd2 = t_open(dev, O_RDWR, NULL);
	REQUIRE(fd2 >= 0);
	CHECK_TERR(snd(fd2, &a, "x", 1), TOUTSTATE);
	CHECK_RET(t_close(fd2), 0);
	CHECK_RET(t_close(fd), 0);
}

static void test_data(void)
{
	struct sockaddr_storage aa, ba, ca, src;
	static unsigned char big[65507], got[65536];
	int a, b, c, flags, n;
	static const unsigned sizes[] = { 1, 1, 1, 64, 64, 0, 1000, 1000,
					  16384, 16384, 16384, 16384, 7,
					  65507 };
	const int ns = (int)(sizeof(sizes) / sizeof(sizes[0]));

	a = open_bound(&aa);
	b = open_bound(&ba);
	c = open_bound(&ca);
	for (unsigned i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7 + 3);
	/* bursts of mixed sizes, every other datagram to c (each burst
	 * fits the receivers' socket buffers: UDP drops what does not) */
	for (int rep = 0; rep < 20; rep++) {
		for (int i = 0; i < ns; i++) {
			big[0] = (unsigned char)i;
			CHECK_RET(snd(a, (i & 1) ? &ca : &ba, big, sizes[i]), 0);
		}
		for (int i = 0; i < ns; i++) {
			int to = (i & 1) ? c : b;

			n = rcv(to, got, sizeof(got), &src, &flags);
			CHECK_EQ(n, (int)sizes[i]);
			CHECK_EQ(flags, 0);
			CHECK_EQ(port_of(&src), port_of(&aa));
			if (n > 1)
				CHECK(memcmp(got + 1, big + 1,
					     (size_t)n - 1) == 0);
			if (n > 0)
				CHECK_EQ(got[0], (unsigned char)i);
		}
	}
	/* over TSDU_size: the library says TBADDATA */
	{
		static unsigned char huge[65508];

		CHECK_TERR(snd(a, &ba, huge, sizeof(huge)), TBADDATA);
	}
	/* asynchronous: nothing there */
	CHECK_RET(fcntl(b, F_SETFL, O_NONBLOCK), 0);
	{
		struct t_unitdata ud;

		memset(&ud, 0, sizeof(ud));
		ud.udata.buf = (char *)got;
		ud.udata.maxlen = sizeof(got);
		CHECK_TERR(t_rcvudata(b, &ud, &flags), TNODATA);
	}
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
	CHECK_RET(t_close(c), 0);
}

/* t_optmgmt(fd) of the option (o, olen) with flags, the answer into
 * (r, rmax): the call's result; *rflags the answer's flags. */
static int optmgmt(int fd, t_scalar_t flags, const void *o, unsigned olen,
		   void *r, unsigned rmax, t_scalar_t *rflags)
{
	struct t_optmgmt req, ret;
	int rv;

	memset(&req, 0, sizeof(req));
	req.flags = flags;
	req.opt.buf = (char *)o;
	req.opt.len = olen;
	memset(&ret, 0, sizeof(ret));
	ret.opt.buf = r;
	ret.opt.maxlen = rmax;
	rv = t_optmgmt(fd, &req, &ret);
	*rflags = ret.flags;
	return rv;
}

/* Two bound endpoints, the receiver b with a 4 MiB XTI_RCVBUF (a burst
 * is sent before anything is read). */
static void open_sender_receiver(int *a, struct sockaddr_storage *aa,
				 int *b, struct sockaddr_storage *ba)
{
	t_scalar_t fl;
	struct {
		struct t_opthdr h;
		t_scalar_t v;
	} o = { { sizeof(o), XTI_GENERIC, XTI_RCVBUF, 0 }, 4 << 20 }, r;

	*a = open_bound(aa);
	*b = open_bound(ba);
	CHECK_RET(optmgmt(*b, T_NEGOTIATE, &o, sizeof(o), &r, sizeof(r),
			  &fl), 0);
}

/* A long burst: all delivered, and the batching provider needs fewer
 * sending calls than datagrams. */
static void test_burst(void)
{
	struct sockaddr_storage aa, ba, src;
	struct inet_stats sa, sb;
	char buf[128];
	int a, b, flags, n = 2000, got = 0;

	open_sender_receiver(&a, &aa, &b, &ba);
	for (int i = 0; i < n; i++) {
		memcpy(buf, &i, sizeof(i));
		CHECK_RET(snd(a, &ba, buf, 64), 0);
	}
	for (int i = 0; i < n; i++) {
		int k;

		if (rcv(b, buf, sizeof(buf), &src, &flags) != 64)
			break;
		memcpy(&k, buf, sizeof(k));
		CHECK_EQ(k, i);
		if (k != i)
			break;
		got++;
	}
	CHECK_EQ(got, n);
	get_stats(a, &sa);
	get_stats(b, &sb);
	CHECK_EQ(sa.tx_msgs, (uint64_t)n);
	CHECK_EQ(sa.tx_sent, (uint64_t)n);
	CHECK_EQ(sa.tx_drops, 0);
	CHECK_EQ(sb.rx_msgs, (uint64_t)n);
	CHECK_EQ(sb.rx_bytes, (uint64_t)n * 64);
	if (strcmp(dev, "/dev/udp") == 0)
		/* every datagram but the first waited for a batch (main()
		 * set STREAMS_INET_IDLE_NS); the I/O thread flushes what a
		 * batch has when it comes, so batches are of any size */
		CHECK(sa.tx_calls < sa.tx_msgs);
	else
		CHECK_EQ(sa.tx_calls, (uint64_t)n);
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
}

/* Two threads sending on one endpoint: the provider counts every
 * datagram and byte (the first writer counts without locked
 * instructions, the other with them), and every one arrives. */
struct sender {
	int fd, n, base;
	struct sockaddr_storage *to;
};

static void *send_thread(void *arg)
{
	struct sender *s = arg;
	char buf[40];

	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < s->n; i++) {
		int v = s->base + i;
		memcpy(buf, &v, sizeof(v));
		if (snd(s->fd, s->to, buf, sizeof(buf)) != 0)
			break;
	}
	return NULL;
}

static void test_two_senders(void)
{
	struct sockaddr_storage aa, ba, src;
	struct inet_stats sa, sb;
	int a, b, flags, n = 1000, got[2] = { 0, 0 }, bad = 0;
	struct sender s[2];
	pthread_t th[2];
	char buf[64];

	open_sender_receiver(&a, &aa, &b, &ba);
	for (int i = 0; i < 2; i++) {
		s[i] = (struct sender){ a, n, i * n, &ba };
		REQUIRE(pthread_create(&th[i], NULL, send_thread, &s[i]) == 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2 * n; i++) {
		int k;

		if (rcv(b, buf, sizeof(buf), &src, &flags) != 40)
			break;
		memcpy(&k, buf, sizeof(k));
		/* each sender's datagrams in its order */
		if (k < 0 || k >= 2 * n || k - (k / n) * n != got[k / n]++)
			bad++;
	}
	CHECK_EQ(got[0], n);
	CHECK_EQ(got[1], n);
	CHECK_EQ(bad, 0);
	get_stats(a, &sa);
	get_stats(b, &sb);
	CHECK_EQ(sa.tx_msgs, (uint64_t)(2 * n));
	CHECK_EQ(sa.tx_bytes, (uint64_t)(2 * n) * 40);
	CHECK_EQ(sa.tx_sent, (uint64_t)(2 * n));
	CHECK_EQ(sb.rx_msgs, (uint64_t)(2 * n));
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
}

/* A plain UDP socket bound to the loopback: its fd, address into *sa. */
static int sock_bound(struct sockaddr_storage *sa)
{
	socklen_t l = sizeof(*sa);
	int s = socket(fam, SOCK_DGRAM, 0);

	REQUIRE(s >= 0);
	loop_addr(sa, 0);
	REQUIRE(bind(s, (struct sockaddr *)sa, sa_len()) == 0);
	REQUIRE(getsockname(s, (struct sockaddr *)sa, &l) == 0);
	return s;
}

static void test_interop(void)
{
	struct sockaddr_storage xa, sa, src;
	char buf[256];
	int x, s, flags;

	x = open_bound(&xa);
	s = sock_bound(&sa);
	/* socket -> XTI */
	CHECK_RET((int)sendto(s, "hello", 5, 0, (struct sockaddr *)&xa,
			      sa_len()), 5);
	CHECK_RET(rcv(x, buf, sizeof(buf), &src, &flags), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ(port_of(&src), port_of(&sa));
	/* XTI -> socket */
	for (int i = 0; i < 10; i++)
		CHECK_RET(snd(x, &sa, "world", 5), 0);
	for (int i = 0; i < 10; i++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		struct timeval tv = { 5, 0 };

		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		CHECK_RET((int)recvfrom(s, buf, sizeof(buf), 0,
					(struct sockaddr *)&from, &fl), 5);
		CHECK_EQ(port_of(&from), port_of(&xa));
	}
	close(s);
	CHECK_RET(t_close(x), 0);
}

static void test_uderr(void)
{
	struct sockaddr_storage xa, closed, dest;
	struct t_uderr ue;
	socklen_t l = sizeof(closed);
	char buf[16];
	int x, s, flags, ev = 0;
	long end;

	x = open_bound(&xa);
	/* a port nobody listens on */
	s = socket(fam, SOCK_DGRAM, 0);
	loop_addr(&closed, 0);
	REQUIRE(bind(s, (struct sockaddr *)&closed, sa_len()) == 0);
	REQUIRE(getsockname(s, (struct sockaddr *)&closed, &l) == 0);
	close(s);
	CHECK_RET(snd(x, &closed, "x", 1), 0);
	end = now_ms() + 5000;
	while ((ev = t_look(x)) == 0 && now_ms() < end)
		pause_ms(1);
	CHECK_EQ(ev, T_UDERR);
	{
		struct sockaddr_storage src;

		CHECK_TERR(rcv(x, buf, sizeof(buf), &src, &flags), TLOOK);
	}
	memset(&ue, 0, sizeof(ue));
	ue.addr.buf = (char *)&dest;
	ue.addr.maxlen = sizeof(dest);
	CHECK_RET(t_rcvuderr(x, &ue), 0);
	CHECK_EQ(ue.error, ECONNREFUSED);
	CHECK_EQ(ue.addr.len, sa_len());
	CHECK_EQ(port_of(&dest), port_of(&closed));
	CHECK_RET(t_close(x), 0);
}

/* An option whose value is one t_scalar_t. */
struct iopt {
	struct t_opthdr h;
	t_scalar_t v;
};

/* Negotiate XTI_GENERIC option name to v on fd: the answer has flags fl
 * and value got, and T_CURRENT then reads got back. */
static void negotiate(int fd, t_uscalar_t name, t_scalar_t v, t_scalar_t fl,
		      t_scalar_t got)
{
	struct iopt o = { { sizeof(o), XTI_GENERIC, name, 0 }, v }, r;
	t_scalar_t rf;

	CHECK_RET(optmgmt(fd, T_NEGOTIATE, &o, sizeof(o), &r, sizeof(r), &rf),
		  0);
	CHECK_EQ(rf, fl);
	CHECK_EQ(r.v, got);
	CHECK_RET(optmgmt(fd, T_CURRENT, &o, sizeof(o), &r, sizeof(r), &rf),
		  0);
	CHECK_EQ(r.v, got);
}

static void test_options(void)
{
	struct iopt o = { { sizeof(o), XTI_GENERIC, XTI_SNDBUF, 0 }, 0 }, r;
	struct {
		struct t_opthdr h;
		t_uscalar_t v;
	} ttl = { { sizeof(ttl), INET_IP, T_IP_TTL, 0 }, 7 }, rt;
	t_scalar_t fl;
	int fd = t_open(dev, O_RDWR, NULL);

	REQUIRE(fd >= 0);
	/* a buffer size the kernel grants as asked */
	negotiate(fd, XTI_SNDBUF, 65536, T_SUCCESS, 65536);
	/* one above what the kernel allows: granted less */
	o.v = 0x7fffff00;
	CHECK_RET(optmgmt(fd, T_NEGOTIATE, &o, sizeof(o), &r, sizeof(r), &fl),
		  0);
	CHECK_EQ(fl, T_PARTSUCCESS);
	CHECK(r.v > 0 && r.v < 0x7fffff00);
	/* XTI_SNDLOWAT: the room the write queue wants before a blocked
	 * writer goes on (its high water, 64 KiB, less its low water);
	 * more than the queue holds is granted as its high water */
	o.h.name = XTI_SNDLOWAT;
	CHECK_RET(optmgmt(fd, T_CURRENT, &o, sizeof(o), &r, sizeof(r), &fl),
		  0);
	CHECK_EQ(r.v, 65536 - 16384);
	negotiate(fd, XTI_SNDLOWAT, 1000, T_SUCCESS, 1000);
	negotiate(fd, XTI_SNDLOWAT, 1 << 20, T_PARTSUCCESS, 65536);
	/* IP_TTL by both names */
	CHECK_RET(optmgmt(fd, T_NEGOTIATE, &ttl, sizeof(ttl), &rt, sizeof(rt),
			  &fl), 0);
	CHECK_EQ(fl, T_SUCCESS);
	ttl.h.name = IP_TTL;
	CHECK_RET(optmgmt(fd, T_CURRENT, &ttl, sizeof(ttl), &rt, sizeof(rt),
			  &fl), 0);
	CHECK_EQ(rt.v, 7u);
	CHECK_EQ(rt.h.name, (t_uscalar_t)IP_TTL);
	/* an option nobody knows */
	o.h.level = INET_UDP;
	o.h.name = 0x7777;
	o.v = 1;
	CHECK_RET(optmgmt(fd, T_NEGOTIATE, &o, sizeof(o), &r, sizeof(r), &fl),
		  0);
	CHECK_EQ(fl, T_NOTSUPPORT);
	CHECK_RET(t_close(fd), 0);
	/* UDP_CHECKSUM off: IPv4 only (IPv6 always has it) */
	{
		struct sockaddr_storage a;
		struct iopt c = { { sizeof(c), INET_UDP, T_UDP_CHECKSUM, 0 },
				  T_NO };

		fd = open_bound(&a);
		CHECK_RET(optmgmt(fd, T_NEGOTIATE, &c, sizeof(c), &r,
				  sizeof(r), &fl), 0);
		CHECK_EQ(fl, fam == AF_INET6 ? T_FAILURE : T_SUCCESS);
		CHECK_RET(optmgmt(fd, T_CURRENT, &c, sizeof(c), &r,
				  sizeof(r), &fl), 0);
		CHECK_EQ(r.v, fam == AF_INET6 ? T_YES : T_NO);
		CHECK_RET(t_close(fd), 0);
	}
}

/* ---- options given with one datagram ----
 * T_IP_TTL and T_IP_TOS with t_sndudata apply to that datagram only
 * (XTI): a socket receiving with IP_RECVTTL/IP_RECVTOS (IPv6: hop limit,
 * traffic class) sees them on it and the endpoint's own values on the
 * datagrams around it, queued in one batch or sent alone; afterwards
 * the endpoint's values are what they were. */
struct ttltos {
	struct t_opthdr h1;
	t_uscalar_t ttl;
	struct t_opthdr h2;
	t_uscalar_t tos;
};

static int snd_opts(int fd, const struct sockaddr_storage *to,
		    const char *p, int ttl, int tos)
{
	struct ttltos o = { { sizeof(o.h1) + sizeof(o.ttl), INET_IP,
			      T_IP_TTL, 0 }, (t_uscalar_t)ttl,
			    { sizeof(o.h2) + sizeof(o.tos), INET_IP,
			      T_IP_TOS, 0 }, (t_uscalar_t)tos };
	struct t_unitdata ud;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = (char *)to;
	ud.addr.len = sa_len();
	ud.udata.buf = (char *)p;
	ud.udata.len = (unsigned)strlen(p);
	ud.opt.buf = (char *)&o;
	ud.opt.len = ttl >= 0 ? sizeof(o) : 0;
	return t_sndudata(fd, &ud);
}

/* The next datagram on socket s: its first byte, TTL and TOS. */
static int rcv_ttltos(int s, int *ttl, int *tos)
{
	union {
		char b[256];
		struct cmsghdr align;
	} cm;
	char buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cm.b,
			     .msg_controllen = sizeof(cm.b) };
	struct cmsghdr *c;

	*ttl = *tos = -1;
	if (recvmsg(s, &mh, 0) < 1)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		int v = 0;

		if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)) {
			*tos = *(unsigned char *)CMSG_DATA(c);
			continue;
		}
		memcpy(&v, CMSG_DATA(c), sizeof(v));
		if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
		    (c->cmsg_level == IPPROTO_IPV6 &&
		     c->cmsg_type == IPV6_HOPLIMIT))
			*ttl = v;
		else if (c->cmsg_level == IPPROTO_IPV6 &&
			 c->cmsg_type == IPV6_TCLASS)
			*tos = v;
	}
	return buf[0];
}

static void test_datagram_options(void)
{
	struct sockaddr_storage xa, sa;
	struct {
		struct t_opthdr h;
		t_uscalar_t v;
	} q = { { sizeof(q), INET_IP, T_IP_TTL, 0 }, 0 }, r;
	struct timeval tv = { 5, 0 };
	static const struct { const char *d; int ttl, tos; } seq[] = {
		{ "a", 7, 0x20 }, { "b", -1, 0 }, { "c", -1, 0 },
		{ "d", 9, 0x40 }, { "e", 11, 0 }, { "f", -1, 0 },
	};
	int x, s, one = 1, ttl, tos, ttl0;
	t_scalar_t fl;

	x = open_bound(&xa);
	s = sock_bound(&sa);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fam == AF_INET6) {
		REQUIRE(setsockopt(s, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one,
				   sizeof(one)) == 0);
		REQUIRE(setsockopt(s, IPPROTO_IPV6, IPV6_RECVTCLASS, &one,
				   sizeof(one)) == 0);
	} else {
		REQUIRE(setsockopt(s, IPPROTO_IP, IP_RECVTTL, &one,
				   sizeof(one)) == 0);
		REQUIRE(setsockopt(s, IPPROTO_IP, IP_RECVTOS, &one,
				   sizeof(one)) == 0);
	}
	CHECK_RET(optmgmt(x, T_CURRENT, &q, sizeof(q), &r, sizeof(r), &fl), 0);
	ttl0 = (int)r.v;
	CHECK(ttl0 > 0 && ttl0 < 256 && ttl0 != 7 && ttl0 != 9);
	/* a batch (this test's provider queues all but a burst's first),
	 * then one at a time */
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
			CHECK_RET(snd_opts(x, &sa, seq[i].d, seq[i].ttl,
					   seq[i].tos), 0);
			if (round == 1) {
				CHECK_RET(rcv_ttltos(s, &ttl, &tos),
					  seq[i].d[0]);
				CHECK_EQ(ttl, seq[i].ttl >= 0 ? seq[i].ttl
							      : ttl0);
				CHECK_EQ(tos, seq[i].tos);
			}
		}
		for (size_t i = 0; round == 0 &&
				   i < sizeof(seq) / sizeof(seq[0]); i++) {
			CHECK_RET(rcv_ttltos(s, &ttl, &tos), seq[i].d[0]);
			CHECK_EQ(ttl, seq[i].ttl >= 0 ? seq[i].ttl : ttl0);
			CHECK_EQ(tos, seq[i].tos);
		}
	}
	CHECK_RET(optmgmt(x, T_CURRENT, &q, sizeof(q), &r, sizeof(r), &fl), 0);
	CHECK_EQ(r.v, (t_uscalar_t)ttl0);
	/* options not well formed (a header longer than the buffer):
	 * T_UDERROR_IND, the datagram not sent; an option a datagram may
	 * not carry (XTI_SNDBUF) is ignored */
	{
		struct {
			struct t_opthdr h;
			t_scalar_t v;
		} bad = { { 64, INET_IP, T_IP_TTL, 0 }, 5 };
		struct t_unitdata ud;
		struct t_uderr ue;

		memset(&ud, 0, sizeof(ud));
		ud.addr.buf = (char *)&sa;
		ud.addr.len = sa_len();
		ud.udata.buf = "z";
		ud.udata.len = 1;
		ud.opt.buf = (char *)&bad;
		ud.opt.len = sizeof(bad);
		CHECK_RET(t_sndudata(x, &ud), 0);
		for (int i = 0; i < 5000 && t_look(x) != T_UDERR; i++)
			pause_ms(1);
		memset(&ue, 0, sizeof(ue));
		CHECK_RET(t_rcvuderr(x, &ue), 0);
		CHECK_EQ(ue.error, ENOPROTOOPT);
		bad.h.len = sizeof(bad);
		bad.h.level = XTI_GENERIC;
		bad.h.name = XTI_SNDBUF;
		bad.v = 4096;
		ud.udata.buf = "y";
		CHECK_RET(t_sndudata(x, &ud), 0);
		CHECK_RET(rcv_ttltos(s, &ttl, &tos), 'y');
		CHECK_EQ(ttl, ttl0);
	}
	close(s);
	CHECK_RET(t_close(x), 0);
}

/* ---- datagrams whose data is a long chain of blocks ----
 * A module above the provider splits each T_UNITDATA_REQ's data into
 * chain_blocks blocks: around the batch's 1024 iovecs (one datagram
 * with more blocks than a sendmmsg message may carry, one that fills it
 * exactly, two that do not fit together) every datagram arrives whole.
 * (The batch used to send such a datagram empty, drop those after it,
 * or spin for good on one of exactly 1024 blocks.) */
static volatile int chain_blocks = 1;

static int ch_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		   cred_t *cr)
{
	(void)q; (void)devp; (void)oflag; (void)cr;
	return sflag == MODOPEN ? 0 : ENXIO;
}

static int ch_close(queue_t *q, int oflag, cred_t *cr)
{
	(void)q; (void)oflag; (void)cr;
	return 0;
}

static int ch_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static int ch_wput(queue_t *q, mblk_t *mp)
{
	t_scalar_t prim;

	if (mp->b_datap->db_type == M_PROTO && mp->b_cont != NULL &&
	    MBLKL(mp) >= (ssize_t)sizeof(prim) &&
	    (memcpy(&prim, mp->b_rptr, sizeof(prim)), prim == T_UNITDATA_REQ)
	    && chain_blocks > 1) {
		mblk_t *d = msgpullup(mp->b_cont, -1), *head = NULL;
		mblk_t **tail = &head;
		size_t len = d != NULL ? MBLKL(d) : 0, off = 0;
		size_t per = len / (size_t)chain_blocks;

		for (int i = 0; d != NULL && i < chain_blocks; i++) {
			size_t k = i == chain_blocks - 1 ? len - off : per;
			mblk_t *b = allocb(k ? k : 1, BPRI_MED);
			if (b == NULL)
				break;
			memcpy(b->b_wptr, d->b_rptr + off, k);
			b->b_wptr += k;
			off += k;
			*tail = b;
			tail = &b->b_cont;
		}
		if (d != NULL && off == len) {
			freemsg(mp->b_cont);
			mp->b_cont = head;
		} else {
			freemsg(head);
		}
		freemsg(d);
	}
	putnext(q, mp);
	return 0;
}

static struct module_info ch_mi = { 0, "chainer", 0, INFPSZ, 1 << 20, 1024 };
static struct qinit ch_ri = { ch_rput, NULL, ch_open, ch_close, NULL, &ch_mi, NULL };
static struct qinit ch_wi = { ch_wput, NULL, NULL, NULL, NULL, &ch_mi, NULL };
static struct streamtab ch_tab = { &ch_ri, &ch_wi, NULL, NULL };
static struct fmodsw ch_fmod = { .f_name = "chainer", .f_str = &ch_tab, .f_flag = D_MP };

static void chain_send(int fd, const struct sockaddr_in *to, int blocks,
		       int len, char c)
{
	struct fmsg m;

	chain_blocks = blocks;
	fm_unitdata_req(&m, to, sizeof(*to), NULL, 0);
	m.dlen = len;
	memset(m.dat, c, (size_t)len);
	CHECK_RET(fm_write(fd, &m), 0);
}

static void chain_expect(int r, int len, char c)
{
	static char buf[70000];
	ssize_t n = recv(r, buf, sizeof(buf), 0);

	CHECK_EQ(n, len);
	CHECK(n == len && (len == 0 || (buf[0] == c && buf[len - 1] == c)));
}

static void test_long_chains(void)
{
	static const int nb[] = { 1, 60, 1023, 1024, 1025, 1100 };
	struct sockaddr_in me = { .sin_family = AF_INET }, to;
	socklen_t tl = sizeof(to);
	struct timeval tv = { 2, 0 };
	struct fmsg m, a;
	int r, fd;

	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = socket(AF_INET, SOCK_DGRAM, 0);
	REQUIRE(r >= 0 && bind(r, (struct sockaddr *)&me, sizeof(me)) == 0);
	REQUIRE(getsockname(r, (struct sockaddr *)&to, &tl) == 0);
	REQUIRE(setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
	fd = open(dev, O_RDWR);
	REQUIRE(fd >= 0);
	CHECK_RET(ioctl(fd, I_PUSH, "chainer"), 0);
	REQUIRE(fm_write(fd, fm_bind_req(&m, &me, sizeof(me), 0)) == 0);
	REQUIRE(fm_read(fd, &a, 5000) == 0);
	for (size_t i = 0; i < sizeof(nb) / sizeof(nb[0]); i++) {
		chain_send(fd, &to, nb[i], 1100, (char)('a' + i));
		chain_expect(r, 1100, (char)('a' + i));
	}
	/* in one batch (the first of a burst goes at once): two that do
	 * not fit in one sendmmsg together, of different sizes and of one */
	chain_send(fd, &to, 1, 10, 'x');
	chain_send(fd, &to, 100, 1100, 'p');
	chain_send(fd, &to, 1000, 1000, 'q');
	chain_send(fd, &to, 100, 1100, 'r');
	chain_send(fd, &to, 1000, 1100, 's');
	chain_expect(r, 10, 'x');
	chain_expect(r, 1100, 'p');
	chain_expect(r, 1000, 'q');
	chain_expect(r, 1100, 'r');
	chain_expect(r, 1100, 's');
	chain_blocks = 1;
	CHECK_RET(close(fd), 0);
	close(r);
}

/* Datagrams of one size queued on the batching provider go out in whole
 * GSO messages: 16 KiB ones three to a message (three fit in 65000
 * bytes, four do not), not three and a straggler.  A plain socket with
 * UDP_GRO receives each GSO message whole and says its segment size. */
/* What a UDP_GRO receiver got for n datagrams of sz bytes: messages,
 * how many held one datagram, the most datagrams in one (until n came,
 * or 5 s of nothing). */
struct gro_seen {
	int segs, msgs, singles, most;
};

static struct gro_seen gro_count(int s, int sz, int n)
{
	static char buf[65536];
	struct gro_seen g = { 0, 0, 0, 0 };

	while (g.segs < n) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cm;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { 0 };
		struct pollfd p = { s, POLLIN, 0 };
		struct cmsghdr *c;
		int gso = 0;
		ssize_t r;

		if (poll(&p, 1, 5000) != 1)
			break;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof(cm.b);
		r = recvmsg(s, &mh, MSG_DONTWAIT);
		if (r <= 0)
			break;
		for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
				memcpy(&gso, CMSG_DATA(c), sizeof(gso));
		CHECK_EQ(r % sz, 0);
		CHECK(gso == 0 || gso == sz);
		g.segs += (int)(r / sz);
		g.singles += r == sz;
		if (r / sz > g.most)
			g.most = (int)(r / sz);
		g.msgs++;
	}
	return g;
}

/* A UDP_GRO receiver with room for about 300 KB of GSO messages, even
 * at the default maximum, which is all there is without privilege. */
static int gro_sock(struct sockaddr_storage *sa)
{
	int s = sock_bound(sa), one = 1, big = 4 << 20;

	REQUIRE(setsockopt(s, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0);
	if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) != 0)
		REQUIRE(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big,
				   sizeof(big)) == 0);
	return s;
}

static void test_gso_whole(void)
{
	enum { N = 18, SZ = 16384 };
	struct sockaddr_storage xa, sa;
	static char buf[SZ];
	int x, s;

	x = open_bound(&xa);
	s = gro_sock(&sa);
	memset(buf, 'g', SZ);
	for (int i = 0; i < N; i++)
		CHECK_RET(snd(x, &sa, buf, SZ), 0);
	struct gro_seen g = gro_count(s, SZ, N);
	CHECK_EQ(g.segs, N);
	CHECK(g.most <= 3);
	/* the first goes out at once (nothing was queued), the last two
	 * when the kick comes; one more odd group if a kick came in the
	 * middle.  Flushing at four queued made every fourth a straggler
	 * (six singles, ten messages).  In a sanitizer's build a writer
	 * can take a tick for two datagrams: kicks split the groups. */
	if (T_SANITIZED) {
		printf("test_gso_whole: a sanitizer's build is too slow for "
		       "whole groups: %d messages, %d single\n", g.msgs,
		       g.singles);
	} else {
		CHECK(g.singles <= 3);
		CHECK(g.msgs <= N / 3 + 3);
	}
	close(s);
	CHECK_RET(t_close(x), 0);
}

/* The most segments this kernel takes in one GSO message: 128 since
 * Linux 6.13, 64 before. */
static int kernel_gso_segs(void)
{
	struct sockaddr_storage sa;
	int s = sock_bound(&sa), most = 64;
	static char one[128];
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { one, sizeof(one) };
	struct msghdr mh = { 0 };
	struct cmsghdr *c;
	uint16_t seg = 1;

	mh.msg_name = &sa;
	mh.msg_namelen = sa_len();
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.b;
	mh.msg_controllen = sizeof(cm.b);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	if (sendmsg(s, &mh, 0) == (ssize_t)sizeof(one))
		most = 128;
	close(s);
	return most;
}

/* Small datagrams go out as GSO messages of as many segments as the
 * kernel takes: 128 since Linux 6.13 (half the system calls of 64), and
 * 64 on a kernel that refuses more, as the provider's probe finds. */
static void test_gso_segs(void)
{
	enum { N = 1 + 3 * 128 };
	struct sockaddr_storage xa, sa;
	int x, s, most = kernel_gso_segs();

	x = open_bound(&xa);
	s = gro_sock(&sa);
	for (int i = 0; i < N; i++)
		CHECK_RET(snd(x, &sa, "s", 1), 0);
	struct gro_seen g = gro_count(s, 1, N);
	CHECK_EQ(g.segs, N);
	CHECK(g.most <= most);
	/* the first alone, then 3 x 128 (a kick that comes before 128 are
	 * queued, for a preempted writer, splits a group; in a sanitizer's
	 * build it can split them all) */
	if (most == 128 && !T_SANITIZED)
		CHECK(g.most > 64);
	close(s);
	CHECK_RET(t_close(x), 0);
}

int main(void)
{
	static const char *const devs[] = { "/dev/inet/udp", "/dev/udp" };

	/* the batching provider batches everything, however slow this
	 * build is (a sanitizer's): the first datagram of a burst only
	 * goes out at once */
	setenv("STREAMS_INET_IDLE_NS", "1000000000000", 1);

	for (int d = 0; d < 2; d++)
		for (int f = 0; f < 2; f++) {
			dev = devs[d];
			fam = f ? AF_INET6 : AF_INET;
			test_info_bind();
			test_data();
			test_burst();
			test_two_senders();
			test_interop();
			test_uderr();
			test_options();
			test_datagram_options();
		}
	dev = "/dev/udp";
	fam = AF_INET;
	test_gso_whole();
	test_gso_segs();
	REQUIRE(register_strmod(&ch_fmod) == 0);
	for (int d = 0; d < 2; d++) {
		dev = devs[d];
		test_long_chains();
	}
	T_DONE();
}
