/*
 * fuzz_inet -- libFuzzer target for the Internet transport providers
 * /dev/udp, /dev/inet/udp, /dev/tcp and /dev/inet/tcp, driven through
 * real streams with random TPI primitives and option buffers.
 *
 * How this works
 * --------------
 * The input is a script in fuzz_tpi's format (see fuzz_tpi.c):
 *
 *	setup		1 byte: provider (0 udp, 1 inet/udp, 2 tcp, 3
 *			inet/tcp) and, bit 2, IPv6 for the fix-ups
 *	record...	hdr, ctl length (2 bytes, little endian), ctl,
 *			[data length (2 bytes), data]
 *
 * with the same fix-ups (the peer's bound address as destination, the
 * ACCEPTOR_id and SEQ_number of a T_CONN_RES...), and one more: a
 * T_BIND_REQ that is fixed up binds to the loopback address, port 0.
 *
 * Nothing may leave the machine: every address in a request that is put
 * (fixed up or not) is rewritten to the loopback address before it goes
 * down, whatever its port, and the target runs in a network namespace of
 * its own when it may make one (root), where only loopback exists.
 * Endpoints are O_NONBLOCK and drained with non-blocking getmsg after
 * each request; crashes, sanitizer reports, leaks and hangs are what
 * libFuzzer reports.  FUZZ_INET_TRACE=1 prints each request and answer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stropts.h>
#include <sys/stream.h>
#include <sys/strexec.h>
#include <sys/tihdr.h>

#define NEP		3
#define CTL_MAX		1024		/* putmsg limit of a control part */
#define ADDR_MAX	128
#define DRAIN_MAX	256		/* messages drained per endpoint */

static const char *const devs[] = { "/dev/udp", "/dev/inet/udp",
				     "/dev/tcp", "/dev/inet/tcp" };

/* One endpoint and what its answers told about it. */
struct endp {
	int fd;
	unsigned char addr[ADDR_MAX];	/* from T_BIND_ACK */
	size_t addrlen;
	bool have_id;
	t_uscalar_t acceptor_id;	/* from T_CAPABILITY_ACK */
	t_scalar_t seq;			/* of the last T_CONN_IND */
};

/* All of these belong to libFuzzer's one fuzzing thread. */
static struct endp ep[NEP];
static unsigned char rbuf_ctl[65536], rbuf_dat[65536];
static bool trace;	/* FUZZ_INET_TRACE set: print what happens */
static bool v6;		/* this input's fix-ups use IPv6 */

/* A network namespace of our own with only loopback, up. */
static void own_netns(void)
{
	struct ifreq ifr;
	int s;

	if (unshare(CLONE_NEWNET) != 0)
		return;
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		(void)ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	streams_set_workers(0);
	trace = getenv("FUZZ_INET_TRACE") != NULL;
	own_netns();
	return 0;
}

static void ep_open(struct endp *e, int prov)
{
	memset(e, 0, sizeof(*e));
	e->fd = open(devs[prov], O_RDWR | O_NONBLOCK);
}

static void ep_close(struct endp *e)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

static t_scalar_t get_scalar(const unsigned char *p, size_t at)
{
	t_scalar_t v;

	memcpy(&v, p + at, sizeof(v));
	return v;
}

static void put_scalar(unsigned char *p, size_t at, t_scalar_t v)
{
	memcpy(p + at, &v, sizeof(v));
}

/* Remember what an answer says about endpoint e. */
static void learn(struct endp *e, const unsigned char *c, size_t n)
{
	t_scalar_t prim, len, off;

	if (n < sizeof(t_scalar_t))
		return;
	prim = get_scalar(c, 0);
	if (prim == T_BIND_ACK && n >= sizeof(struct T_bind_ack)) {
		len = get_scalar(c, offsetof(struct T_bind_ack, ADDR_length));
		off = get_scalar(c, offsetof(struct T_bind_ack, ADDR_offset));
		if (len >= 0 && len <= ADDR_MAX && off >= 0 &&
		    (size_t)off <= n && (size_t)len <= n - (size_t)off) {
			memcpy(e->addr, c + off, (size_t)len);
			e->addrlen = (size_t)len;
		}
	} else if (prim == T_CAPABILITY_ACK &&
		   n >= sizeof(struct T_capability_ack)) {
		struct T_capability_ack ca;

		memcpy(&ca, c, sizeof(ca));
		if (ca.CAP_bits1 & TC1_ACCEPTOR_ID) {
			e->have_id = true;
			e->acceptor_id = ca.ACCEPTOR_id;
		}
	} else if (prim == T_CONN_IND && n >= sizeof(struct T_conn_ind)) {
		e->seq = get_scalar(c, offsetof(struct T_conn_ind, SEQ_number));
	}
}

/* Take everything queued at every endpoint's stream head. */
static void drain(void)
{
	for (int i = 0; i < NEP; i++) {
		struct endp *e = &ep[i];

		for (int k = 0; e->fd >= 0 && k < DRAIN_MAX; k++) {
			struct strbuf c = { sizeof(rbuf_ctl), 0,
					    (char *)rbuf_ctl };
			struct strbuf d = { sizeof(rbuf_dat), 0,
					    (char *)rbuf_dat };
			int flags = 0;

			if (getmsg(e->fd, &c, &d, &flags) < 0) {
				if (trace && errno != EAGAIN)
					fprintf(stderr, "  ep%d: getmsg: %s\n",
						i, strerror(errno));
				break;	/* EAGAIN: empty; or an error */
			}
			if (trace)
				fprintf(stderr, "  ep%d: got prim %d ctl %d "
					"data %d\n", i, c.len >= 4 ?
					(int)get_scalar(rbuf_ctl, 0) : -1,
					c.len, d.len);
			if (c.len > 0)
				learn(e, rbuf_ctl, (size_t)c.len);
		}
	}
}


/* Rewrite the address at (lenfield, offfield) of request c (n bytes) to
 * the loopback address of its family, keeping its port. */
static void to_loopback(unsigned char *c, size_t n, size_t lenf, size_t offf)
{
	t_scalar_t len = get_scalar(c, lenf), off = get_scalar(c, offf);
	sa_family_t fam;

	if (len < (t_scalar_t)sizeof(fam) || off < 0 || (size_t)off > n ||
	    (size_t)len > n - (size_t)off)
		return;
	memcpy(&fam, c + off, sizeof(fam));
	if (len >= (t_scalar_t)offsetof(struct sockaddr_in6, sin6_scope_id)) {
		struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;

		memcpy(c + off + offsetof(struct sockaddr_in6, sin6_addr),
		       &lo6, sizeof(lo6));
	}
	if (len >= (t_scalar_t)(offsetof(struct sockaddr_in, sin_addr) +
				sizeof(struct in_addr))) {
		struct in_addr lo = { htonl(INADDR_LOOPBACK) };

		if (fam != AF_INET6)
			memcpy(c + off + offsetof(struct sockaddr_in, sin_addr),
			       &lo, sizeof(lo));
	}
}

/* Every address a request names goes to loopback. */
static void confine(unsigned char *c, size_t n)
{
	t_scalar_t prim;

	if (n < sizeof(t_scalar_t))
		return;
	prim = get_scalar(c, 0);
	if (prim == T_BIND_REQ && n >= sizeof(struct T_bind_req))
		to_loopback(c, n, offsetof(struct T_bind_req, ADDR_length),
			    offsetof(struct T_bind_req, ADDR_offset));
	else if (prim == T_CONN_REQ && n >= sizeof(struct T_conn_req))
		to_loopback(c, n, offsetof(struct T_conn_req, DEST_length),
			    offsetof(struct T_conn_req, DEST_offset));
	else if (prim == T_UNITDATA_REQ && n >= sizeof(struct T_unitdata_req))
		to_loopback(c, n, offsetof(struct T_unitdata_req, DEST_length),
			    offsetof(struct T_unitdata_req, DEST_offset));
}

/* A fixed-up T_BIND_REQ: loopback, port 0. */
static size_t bind_fixup(unsigned char *c, size_t n)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in s4 = { .sin_family = AF_INET,
				  .sin_addr = { htonl(INADDR_LOOPBACK) } };
	size_t al = v6 ? sizeof(s6) : sizeof(s4);

	n = sizeof(struct T_bind_req);
	memcpy(c + n, v6 ? (void *)&s6 : (void *)&s4, al);
	put_scalar(c, offsetof(struct T_bind_req, ADDR_length), (t_scalar_t)al);
	put_scalar(c, offsetof(struct T_bind_req, ADDR_offset), (t_scalar_t)n);
	return n + al;
}
/*
 * The fix-ups of a request in c (n bytes, room for CTL_MAX): the peer's
 * address as destination, the acceptor and sequence of a T_CONN_RES,
 * the sequence of a T_DISCON_REQ.  Returns the new length.
 */
static size_t fixup(unsigned char *c, size_t n, struct endp *self,
		    struct endp *peer)
{
	size_t dl, doff;
	t_scalar_t prim;

	if (n < sizeof(t_scalar_t))
		return n;
	prim = get_scalar(c, 0);
	switch (prim) {
	case T_CONN_REQ:
		dl = offsetof(struct T_conn_req, DEST_length);
		doff = offsetof(struct T_conn_req, DEST_offset);
		if (n < sizeof(struct T_conn_req))
			return n;
		break;
	case T_UNITDATA_REQ:
		dl = offsetof(struct T_unitdata_req, DEST_length);
		doff = offsetof(struct T_unitdata_req, DEST_offset);
		if (n < sizeof(struct T_unitdata_req))
			return n;
		break;
	case T_BIND_REQ:
		if (n < sizeof(struct T_bind_req))
			return n;
		return bind_fixup(c, n);
	case T_DISCON_REQ:
		if (n >= sizeof(struct T_discon_req))
			put_scalar(c, offsetof(struct T_discon_req,
					       SEQ_number), self->seq);
		return n;
	case T_CONN_RES:
		if (n < sizeof(struct T_conn_res))
			return n;
		put_scalar(c, offsetof(struct T_conn_res, ACCEPTOR_id),
			   peer->have_id ? (t_scalar_t)peer->acceptor_id : 0);
		put_scalar(c, offsetof(struct T_conn_res, SEQ_number),
			   self->seq);
		return n;
	default:
		return n;
	}
	while (n % 4 != 0)
		c[n++] = 0;
	if (n + peer->addrlen > CTL_MAX)
		return n;
	memcpy(c + n, peer->addr, peer->addrlen);
	put_scalar(c, dl, (t_scalar_t)peer->addrlen);
	put_scalar(c, doff, (t_scalar_t)n);
	return n + peer->addrlen;
}

static size_t take16(const uint8_t **p, size_t *left)
{
	size_t v;

	if (*left < 2) {
		*left = 0;
		return 0;
	}
	v = (size_t)(*p)[0] | (size_t)(*p)[1] << 8;
	*p += 2;
	*left -= 2;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char ctl[CTL_MAX + 4];
	const uint8_t *p = data;
	size_t left = size;
	int prov;

	if (size < 1)
		return 0;
	prov = p[0] % 4;
	v6 = (p[0] & 4) != 0;
	p++;
	left--;
	for (int i = 0; i < NEP; i++)
		ep_open(&ep[i], prov);

	while (left > 0) {
		unsigned hdr = *p++;
		int i = (hdr & 3) == 3 ? 2 : hdr & 3;
		bool hipri = hdr & 0x04, hasdata = hdr & 0x08;
		int op = (hdr >> 4) & 3;
		struct endp *self = &ep[i];
		struct endp *peer = (hdr & 0x40) ? self : &ep[(i + 1) % NEP];
		size_t clen, dlen = 0;
		const uint8_t *dat = NULL;
		int r;

		left--;
		clen = take16(&p, &left);
		if (clen > left)
			clen = left;
		if (clen > CTL_MAX)
			clen = CTL_MAX;
		memcpy(ctl, p, clen);
		p += clen;
		left -= clen;
		if (hasdata) {
			dlen = take16(&p, &left);
			if (dlen > left)
				dlen = left;
			dat = p;
			p += dlen;
			left -= dlen;
		}
		if (op == 2) {
			ep_close(self);
			ep_open(self, prov);
			continue;
		}
		if (self->fd < 0)
			continue;
		if (op == 3) {
			if (dlen > 0)
				(void)write(self->fd, dat, dlen);
		} else {
			struct strbuf c = { 0, 0, (char *)ctl };
			struct strbuf d = { 0, (int)dlen, (char *)dat };

			if (op == 1)
				clen = fixup(ctl, clen, self, peer);
			confine(ctl, clen);
			c.len = (int)clen;
			r = putmsg(self->fd, &c, hasdata ? &d : NULL,
				   hipri ? RS_HIPRI : 0);
			if (trace)
				fprintf(stderr, "ep%d: put prim %d ctl %d "
					"data %d: %s\n", i, clen >= 4 ?
					(int)get_scalar(ctl, 0) : -1, c.len,
					hasdata ? d.len : -1,
					r == 0 ? "ok" : strerror(errno));
		}
		drain();
	}
	drain();
	for (int i = 0; i < NEP; i++)
		ep_close(&ep[i]);
	return 0;
}
