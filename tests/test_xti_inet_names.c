/*
 * test_xti_inet_names -- <xti_inet.h> beside glibc's netinet headers.
 *
 * <xti_inet.h> comes first here, glibc's headers after it: the order in
 * which a clash would show (glibc defines its names unconditionally, so a
 * redefinition with other tokens is a compiler warning; the values are
 * checked below).
 * The XNS 5.2 names have their XNS values; the older names a program
 * may use (TCP_NODELAY, TCP_MAXSEG, IP_OPTIONS, IP_TOS, IP_TTL) have
 * glibc's values, so code using them with setsockopt and with t_optmgmt
 * agrees; the ones glibc lacks (TCP_KEEPALIVE, UDP_CHECKSUM,
 * IP_REUSEADDR, IP_DONTROUTE, IP_BROADCAST) are the XNS 5.2 values.  The
 * levels are the protocol numbers.  The XNS names and the older ones
 * differ where they must: both are accepted by the providers at their
 * level (test_topt_mgmt).
 */
#include <xti_inet.h>

#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include "t.h"

int main(void)
{
	/* levels */
	CHECK_EQ(INET_IP, IPPROTO_IP);
	CHECK_EQ(INET_TCP, IPPROTO_TCP);
	CHECK_EQ(INET_UDP, IPPROTO_UDP);
	/* XNS 5.2 names */
	CHECK_EQ(T_TCP_NODELAY, 0x1);
	CHECK_EQ(T_TCP_MAXSEG, 0x2);
	CHECK_EQ(T_TCP_KEEPALIVE, 0x8);
	CHECK_EQ(T_UDP_CHECKSUM, 0x0600);
	CHECK_EQ(T_IP_OPTIONS, 0x0100);
	CHECK_EQ(T_IP_TOS, 0x0101);
	CHECK_EQ(T_IP_TTL, 0x0102);
	CHECK_EQ(T_IP_REUSEADDR, 0x0104);
	CHECK_EQ(T_IP_DONTROUTE, 0x0105);
	CHECK_EQ(T_IP_BROADCAST, 0x0106);
	/* older names: glibc's values where glibc has them */
	CHECK_EQ(TCP_NODELAY, 1);
	CHECK_EQ(TCP_MAXSEG, 2);
	CHECK_EQ(IP_OPTIONS, 4);
	CHECK_EQ(IP_TOS, 1);
	CHECK_EQ(IP_TTL, 2);
	/* ... else the XNS values */
	CHECK_EQ(TCP_KEEPALIVE, T_TCP_KEEPALIVE);
	CHECK_EQ(UDP_CHECKSUM, T_UDP_CHECKSUM);
	CHECK_EQ(IP_REUSEADDR, T_IP_REUSEADDR);
	CHECK_EQ(IP_DONTROUTE, T_IP_DONTROUTE);
	CHECK_EQ(IP_BROADCAST, T_IP_BROADCAST);
	/* usable with both interfaces: glibc's still work on a socket */
	int s = socket(AF_INET, SOCK_STREAM, 0), on = 1;
	CHECK(s >= 0);
	CHECK_EQ(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)), 0);
	CHECK_EQ(setsockopt(s, IPPROTO_IP, IP_TTL, &on, sizeof(on)), 0);
	/* TOS helpers and t_kpalive */
	CHECK_EQ(SET_TOS(T_FLASH, T_LDELAY), (3 << 5) | 0x10);
	struct t_kpalive kp = { T_YES, 2 };
	CHECK_EQ(kp.kp_onoff + kp.kp_timeout, 3);
	T_DONE();
}
