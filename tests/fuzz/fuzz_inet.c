/*
 * fuzz_inet -- libFuzzer target for the Internet transport providers
 * /dev/udp, /dev/inet/udp, /dev/tcp and /dev/inet/tcp, driven through
 * real streams with random TPI primitives and option buffers.
 *
 * How this works
 * --------------
 * The input is a script in fuzz_script.h's format (fuzz_tpi plays the
 * same against the loopback providers).  The setup byte names the
 * provider (0 udp, 1 inet/udp, 2 tcp, 3 inet/tcp) and, bit 2, IPv6 for
 * the fix-ups; a T_BIND_REQ that is fixed up binds to the loopback
 * address, port 0.
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
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <sys/strexec.h>
#include "fuzz_script.h"

static const char *const devs[] = { "/dev/udp", "/dev/inet/udp",
				     "/dev/tcp", "/dev/inet/tcp" };

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
	bool v6 = (fs_setup & 4) != 0;
	size_t al = v6 ? sizeof(s6) : sizeof(s4);

	n = sizeof(struct T_bind_req);
	memcpy(c + n, v6 ? (void *)&s6 : (void *)&s4, al);
	put_scalar(c, offsetof(struct T_bind_req, ADDR_length), (t_scalar_t)al);
	put_scalar(c, offsetof(struct T_bind_req, ADDR_offset), (t_scalar_t)n);
	return n + al;
}
static const struct fs_target inet_target = {
	.devs = devs,
	.ndevs = 4,
	.bind_fixup = bind_fixup,
	.confine = confine,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fs_run(&inet_target, data, size);
}
