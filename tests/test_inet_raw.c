/*
 * test_inet_raw -- raw IP through XTI (/dev/inet/rawip and /dev/rawip):
 * the IP protocol chosen by the port field of the bound address (253,
 * "for experimentation", RFC 3692), the bound address reporting it,
 * datagrams between two endpoints over 127.0.0.1 (IPv4 raw sockets
 * deliver the IP header: the test checks it names protocol 253 and that
 * the payload follows it) and over ::1 (no header), a plain raw socket
 * receiving what an XTI endpoint sends, a burst through the batching
 * provider, and a protocol over 255 (TBADADDR).  Needs root (raw
 * sockets): exits 77 without.
 */
#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>

#define PROTO	253

static int open_raw(const char *dev, int fam, void *addr, unsigned *alen)
{
	struct sockaddr_storage ss;
	struct t_bind b, r;
	int fd = t_open(dev, O_RDWR, NULL);

	REQUIRE(fd >= 0);
	memset(&ss, 0, sizeof(ss));
	if (fam == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons(PROTO);
		b.addr.len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s4->sin_port = htons(PROTO);
		b.addr.len = sizeof(*s4);
	}
	b.addr.buf = (char *)&ss;
	b.qlen = 0;
	memset(&r, 0, sizeof(r));
	r.addr.buf = addr;
	r.addr.maxlen = sizeof(struct sockaddr_storage);
	REQUIRE(t_bind(fd, &b, &r) == 0);
	CHECK_EQ(r.addr.len, b.addr.len);
	/* the port field says the protocol */
	CHECK_EQ(ntohs(fam == AF_INET6 ?
		       ((struct sockaddr_in6 *)addr)->sin6_port :
		       ((struct sockaddr_in *)addr)->sin_port), PROTO);
	*alen = r.addr.len;
	return fd;
}

/* The next datagram on fd whose payload starts with tag (raw endpoints
 * see every packet of the protocol, their own too); its payload length,
 * or -1. */
static int rcv_tagged(int fd, int fam, unsigned char tag, unsigned char *out,
		      int max)
{
	static unsigned char buf[70000];
	struct sockaddr_storage src;
	struct t_unitdata ud;
	long end = now_ms() + 5000;

	while (now_ms() < end) {
		int flags = 0, hl = 0, n;

		memset(&ud, 0, sizeof(ud));
		ud.addr.buf = (char *)&src;
		ud.addr.maxlen = sizeof(src);
		ud.udata.buf = (char *)buf;
		ud.udata.maxlen = sizeof(buf);
		if (t_rcvudata(fd, &ud, &flags) != 0)
			return -1;
		n = (int)ud.udata.len;
		if (fam == AF_INET) {
			struct iphdr ih;

			if (n < (int)sizeof(ih))
				return -1;
			memcpy(&ih, buf, sizeof(ih));
			CHECK_EQ(ih.protocol, PROTO);
			hl = ih.ihl * 4;
		}
		if (n > hl && buf[hl] == tag) {
			if (n - hl > max)
				return -1;
			memcpy(out, buf + hl, (size_t)(n - hl));
			return n - hl;
		}
	}
	return -1;
}

static void test_dev(const char *dev, int fam)
{
	struct sockaddr_storage aa, ba;
	struct t_unitdata ud;
	unsigned al, bl;
	unsigned char msg[3000], got[3000];
	int a, b, n;

	printf("-- %s %s\n", dev, fam == AF_INET6 ? "::1" : "127.0.0.1");
	fflush(stdout);
	a = open_raw(dev, fam, &aa, &al);
	b = open_raw(dev, fam, &ba, &bl);
	for (int i = 0; i < 50; i++) {
		unsigned len = 1 + (unsigned)(i * 53) % 2500;

		msg[0] = (unsigned char)(0x80 | (i & 0x3f));
		for (unsigned k = 1; k < len; k++)
			msg[k] = (unsigned char)(k * 3 + (unsigned)i);
		memset(&ud, 0, sizeof(ud));
		ud.addr.buf = (char *)&ba;
		ud.addr.len = bl;
		ud.udata.buf = (char *)msg;
		ud.udata.len = len;
		CHECK_RET(t_sndudata(a, &ud), 0);
		n = rcv_tagged(b, fam, msg[0], got, sizeof(got));
		CHECK_EQ(n, (int)len);
		if (n == (int)len)
			CHECK(memcmp(got, msg, len) == 0);
	}
	/* a plain raw socket sees what XTI sends */
	if (fam == AF_INET) {
		int s = socket(AF_INET, SOCK_RAW, PROTO);
		struct timeval tv = { 5, 0 };
		unsigned char buf[4096];
		ssize_t r;

		REQUIRE(s >= 0);
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		msg[0] = 0x7f;
		memcpy(msg + 1, "raw!", 4);
		memset(&ud, 0, sizeof(ud));
		ud.addr.buf = (char *)&ba;
		ud.addr.len = bl;
		ud.udata.buf = (char *)msg;
		ud.udata.len = 5;
		CHECK_RET(t_sndudata(a, &ud), 0);
		do
			r = recv(s, buf, sizeof(buf), 0);
		while (r > 20 && buf[20] != 0x7f);
		CHECK_EQ(r, 25);
		CHECK(r == 25 && memcmp(buf + 20, msg, 5) == 0);
		close(s);
	}
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
}

/* A protocol that is not one (over 255): TBADADDR, and the endpoint
 * still binds to a good one after. */
static void test_bad_proto(const char *dev)
{
	struct sockaddr_in s;
	struct t_bind b;
	int fd = t_open(dev, O_RDWR, NULL);

	REQUIRE(fd >= 0);
	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s.sin_port = htons(300);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&s;
	b.addr.len = sizeof(s);
	CHECK_TERR(t_bind(fd, &b, NULL), TBADADDR);
	s.sin_port = htons(PROTO);
	CHECK_RET(t_bind(fd, &b, NULL), 0);
	CHECK_RET(t_close(fd), 0);
}

int main(void)
{
	static const char *const devs[] = { "/dev/inet/rawip", "/dev/rawip" };

	if (geteuid() != 0) {
		printf("SKIP: raw sockets need root\n");
		return 77;
	}
	for (int d = 0; d < 2; d++) {
		test_dev(devs[d], AF_INET);
		test_dev(devs[d], AF_INET6);
		test_bad_proto(devs[d]);
	}
	T_DONE();
}
