/*
 * <xti_inet.h> -- XTI options of the Internet protocol suite (XNS 5.2),
 * with the older names programs still use.  The older names are defined
 * with the values glibc's netinet headers give them where glibc has them
 * (so either header may come first), otherwise with the XNS 4 values;
 * the providers accept both numberings at their level.
 */
#ifndef _XTI_INET_H
#define _XTI_INET_H

#include <xti.h>

#ifdef __cplusplus
extern "C" {
#endif

/* levels */
#define INET_IP		0x0
#define INET_TCP	0x6
#define INET_UDP	0x11

/* INET_TCP */
#define T_TCP_NODELAY	0x1
#define T_TCP_MAXSEG	0x2
#define T_TCP_KEEPALIVE	0x8

/* INET_UDP */
#define T_UDP_CHECKSUM	0x0600

/* INET_IP */
#define T_IP_OPTIONS	0x0100
#define T_IP_TOS	0x0101
#define T_IP_TTL	0x0102
#define T_IP_REUSEADDR	0x0104
#define T_IP_DONTROUTE	0x0105
#define T_IP_BROADCAST	0x0106

/* older names */
#ifndef TCP_NODELAY
#define TCP_NODELAY	1		/* = glibc's */
#endif
#ifndef TCP_MAXSEG
#define TCP_MAXSEG	2		/* = glibc's */
#endif
#ifndef TCP_KEEPALIVE
#define TCP_KEEPALIVE	T_TCP_KEEPALIVE
#endif
#ifndef UDP_CHECKSUM
#define UDP_CHECKSUM	T_UDP_CHECKSUM
#endif
#ifndef IP_OPTIONS
#define IP_OPTIONS	4		/* = glibc's */
#endif
#ifndef IP_TOS
#define IP_TOS		1		/* = glibc's */
#endif
#ifndef IP_TTL
#define IP_TTL		2		/* = glibc's */
#endif
#ifndef IP_REUSEADDR
#define IP_REUSEADDR	T_IP_REUSEADDR
#endif
#ifndef IP_DONTROUTE
#define IP_DONTROUTE	T_IP_DONTROUTE
#endif
#ifndef IP_BROADCAST
#define IP_BROADCAST	T_IP_BROADCAST
#endif

/* TCP keep-alive */
struct t_kpalive {
	t_scalar_t kp_onoff;
	t_scalar_t kp_timeout;	/* minutes */
};
#define T_GARBAGE	0x02

/* IP type of service: precedence and TOS bits */
#define T_ROUTINE	0
#define T_PRIORITY	1
#define T_IMMEDIATE	2
#define T_FLASH		3
#define T_OVERRIDEFLASH	4
#define T_CRITIC_ECP	5
#define T_INETCONTROL	6
#define T_NETCONTROL	7
#define T_NOTOS		0
#define T_LDELAY	(1 << 4)
#define T_HITHRPT	(1 << 3)
#define T_HIREL		(1 << 2)
#define T_LOCOST	(1 << 1)
#define SET_TOS(prec, tos)	((0x7 & (prec)) << 5 | (0x1c & (tos)))

#ifdef __cplusplus
}
#endif

#endif /* _XTI_INET_H */
