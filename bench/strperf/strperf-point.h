/*
 * strperf-point.h -- the interface between the strperf-point driver and the
 * implementations it measures.
 *
 * How this works
 *
 *   The driver (strperf-point.c) owns everything that is the same for every
 *   implementation: argument checking, the fork of a sender and a receiver
 *   process, the control socket between them, the timer that ends the test,
 *   counting, the watchdog, and the JSON line.  An implementation only says
 *   how to make a pair of endpoints and how to move one message:
 *
 *	prefork    (optional) make what both processes must inherit (pipe(2))
 *	rx_open    receiver: make its endpoint; publish an address for the
 *		   sender (any bytes, up to SP_ADDR_MAX; may be empty)
 *	tx_open    sender: make its endpoint from the receiver's address;
 *		   publish its own address (for replies in RR tests)
 *	rx_accept  receiver: finish the association (accept a connection,
 *		   connect a datagram endpoint to the sender's address)
 *	tx_ready   (optional) sender: once the receiver is ready, before the
 *		   clock starts (confirm a connection: t_rcvconnect)
 *	send/recv  move one message; return bytes moved, or -1 with errno
 *	close      release the endpoint (a byte stream sender's close is the
 *		   receiver's end of data)
 *
 *   Set-up functions return 0, or -1 after sp_fail("what: %s", ...) so the
 *   report says what went wrong.  close may leave a line in ep->info (what
 *   it counted on the way: error indications taken, ...): it goes into the
 *   point's note.
 *
 *   Each process opens its own endpoint after the fork, so an implementation
 *   whose descriptors live in a per-process STREAMS executive works the
 *   same way as one on kernel sockets.  send and recv run with SIGALRM /
 *   SIGUSR1 able to interrupt them: they must return -1 with errno EINTR (or
 *   a partial count) when interrupted and never retry on EINTR themselves.
 *
 *   Adding an implementation: write the functions above in a new file,
 *   declare its struct sp_impl here, and list it in sp_impls[] in
 *   strperf-point.c.  The driver's --list output, and so the strperf report,
 *   pick it up from there.
 */
#ifndef STRPERF_POINT_H
#define STRPERF_POINT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SP_ADDR_MAX	128	/* bytes of an endpoint address */
#define SP_SHARED_FDS	4	/* descriptors prefork may hand down */

/* Families of tests; an implementation serves exactly one. */
enum sp_family {
	SP_FAM_UDP,		/* datagrams over IPv4 loopback */
	SP_FAM_TCP,		/* byte stream over IPv4 loopback */
	SP_FAM_PIPE,		/* local one-way channel between processes */
};

/* What a test does with its endpoints. */
enum sp_mode {
	SP_MODE_STREAM = 1,	/* sender sends as fast as it can */
	SP_MODE_RR = 2,		/* request/response round trips */
};

/* One measurement, as asked on the command line. */
struct sp_point {
	const struct sp_test *test;
	const struct sp_impl *impl;
	size_t size;		/* bytes per message */
	double testtime;	/* seconds the sender sends */
	int bufsize;		/* SO_*BUF, F_SETPIPE_SZ; 0: default */
	int rx_waitall;		/* receiver reads full messages (MSG_WAITALL) */
	int cpu_tx, cpu_rx;	/* the CPU each side runs on; -1: any */
};

/* An address passed from one side to the other over the control socket. */
struct sp_addr {
	uint32_t len;
	unsigned char data[SP_ADDR_MAX];
};

/* What prefork hands to both children; open functions take what they use. */
struct sp_shared {
	int fd[SP_SHARED_FDS];	/* -1 when unused or taken */
};

/* One side's endpoint. */
struct sp_ep {
	int fd;			/* the data descriptor, -1 when closed */
	int lfd;		/* a listening descriptor, -1 when none */
	void *priv;		/* implementation state */
	const struct sp_point *pt;
	int sndbuf;		/* buffers the system granted, -1 unknown */
	int rcvbuf;
	char info[160];		/* set by close: for the point's note */
};

struct sp_impl {
	const char *name;		/* as given to --impl */
	enum sp_family family;
	unsigned modes;			/* SP_MODE_* this impl can run */
	int byte_stream;		/* no message boundaries: count bytes */
	size_t max_size;		/* largest message, 0: the test's */
	int nice_tx, nice_rx;		/* setpriority() of sender, receiver */
	const char *desc;		/* one line for --list and the report */

	/* 0 if it can run here, else -1 with a reason in why */
	int (*available)(const struct sp_point *pt, char *why, size_t len);
	int (*prefork)(const struct sp_point *pt, struct sp_shared *sh);
	int (*rx_open)(struct sp_ep *ep, struct sp_shared *sh,
		       struct sp_addr *self);
	int (*tx_open)(struct sp_ep *ep, struct sp_shared *sh,
		       const struct sp_addr *peer, struct sp_addr *self);
	int (*rx_accept)(struct sp_ep *ep, const struct sp_addr *peer);
	int (*tx_ready)(struct sp_ep *ep);
	ssize_t (*send)(struct sp_ep *ep, const void *buf, size_t len);
	ssize_t (*recv)(struct sp_ep *ep, void *buf, size_t len, int waitall);
	void (*close)(struct sp_ep *ep);
};

struct sp_test {
	const char *name;		/* UDP_STREAM, ... */
	enum sp_family family;
	enum sp_mode mode;
	size_t max_size;
};

/* Helpers the implementations share (strperf-point.c). */
int sp_set_sockbufs(struct sp_ep *ep, int fd);
void sp_close_fd(int *fd);
/* Say what failed (kept until the driver reports it); returns -1. */
int sp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Implementations (sp_sockets.c, sp_xti.c, sp_pipe.c). */
extern const struct sp_impl sp_udp_sockets, sp_udp_sockets_nice;
extern const struct sp_impl sp_tcp_sockets, sp_tcp_sockets_nice;
extern const struct sp_impl sp_udp_xtios, sp_udp_tpi;
extern const struct sp_impl sp_tcp_xtios, sp_tcp_tpi;
extern const struct sp_impl sp_pipe_pipe, sp_pipe_socketpair, sp_pipe_streams;

#endif /* STRPERF_POINT_H */
