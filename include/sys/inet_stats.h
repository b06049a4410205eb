/*
 * <sys/inet_stats.h> -- counts of an Internet transport endpoint
 * (/dev/udp, /dev/tcp, /dev/rawip and /dev/inet/...), read with
 *
 *	struct strioctl ic = { INET_IOC_STATS, -1, sizeof(st), (char *)&st };
 *	ioctl(fd, I_STR, &ic);
 *
 * so that loss is reported, not hidden: what the sending provider
 * accepted (tx_msgs) against what the receiving one delivered (rx_msgs).
 * The call counts show how many kernel crossings moved them.
 */
#ifndef _SYS_INET_STATS_H
#define _SYS_INET_STATS_H

#include <stdint.h>

#define INET_IOC_STATS	(('I' << 8) | 0x51)

struct inet_stats {
	uint64_t tx_msgs;	/* messages accepted from above */
	uint64_t tx_bytes;	/* their bytes */
	uint64_t tx_sent;	/* messages the kernel took */
	uint64_t tx_calls;	/* socket calls that sent them */
	uint64_t tx_drops;	/* messages dropped by an error */
	uint64_t rx_msgs;	/* messages sent up */
	uint64_t rx_bytes;	/* their bytes */
	uint64_t rx_calls;	/* socket calls that received them */
	uint64_t rx_drops;	/* messages received but not sent up
				   (no memory) */
	uint64_t rx_overflows;	/* datagrams the kernel dropped at the
				   socket for want of buffer space, as it
				   last said (/dev/udp; 0 elsewhere) */
};
/* (a caller built before rx_overflows passes the size without it, and
 * gets the rest) */
#define INET_STATS_SIZE_V1	(9 * sizeof(uint64_t))

#endif
