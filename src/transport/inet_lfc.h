/*
 * inet_lfc.h -- flow control between /dev/udp endpoints on one host
 * ("local flow control"; inet_lfc.c says how it works).
 */
#ifndef STREAMS_INET_LFC_H
#define STREAMS_INET_LFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct lfc_rec;				/* the shared record (inet_lfc.c) */

/* A receiving endpoint's record, while it publishes one. */
struct lfc_own {
	struct lfc_rec *_Atomic rec;	/* NULL: none; set under the
					   endpoint's lock with rx_lock held,
					   read by the puller (rx_lock) */
	int fd;				/* the record's file (holds its lock) */
	int pid;			/* the process that published it */
	char name[64];			/* its shm name, to unlink */
};

/* What a sender knows of one destination (port) on this host. */
struct lfc_peer {
	int family;			/* AF_INET, AF_INET6; 0 unused */
	uint16_t port;			/* network order */
	struct lfc_rec *rec;		/* mapped record, or NULL: none */
	uint64_t checked;		/* ns: when rec was looked up */
	bool ignored;			/* stalled: sent to without waiting
					   (still charged) until the receiver
					   consumes again */
	uint64_t ignored_at;		/* its consumed count then */
	bool pinned;			/* in use by the batch being sent:
					   not replaced (lfc_unpin) */
};

#define LFC_PEERS	16

/* A sending endpoint's records (tx_lock) and the wait for credit. */
struct lfc_send {
	struct lfc_peer peer[LFC_PEERS];
	unsigned next;			/* the entry to replace next */
	struct lfc_peer *wait;		/* waiting for credit from it */
	uint64_t wait_since;		/* ns: since we last sent to it */
	uint64_t wait_consumed;		/* its consumed count last seen */
	uint64_t delay;			/* ns: the next retry's delay */
};

/* How long a sender may send nothing to a receiver that has no room
 * before it sends to it as plain UDP (until it consumes again). */
#define LFC_STALL_NS	250000000ull
/* How long after the last charge its datagrams are surely in the socket
 * (or lost): a send may return while they wait in the kernel's backlog
 * for its softirq. */
#define LFC_SETTLE_NS	20000000ull

/* The receive memory the kernel charges for one UDP message of len
 * bytes: one datagram (seg 0), or a GSO message of segments of seg. */
uint64_t lfc_cost(size_t len, size_t seg);

/* Receiver.  Publish a record for a socket bound to laddr (any address
 * or loopback; others publish nothing); false when none was published
 * (another live endpoint has the port, no shared memory). */
bool lfc_publish(struct lfc_own *o, int fd, const struct sockaddr *laddr,
		 socklen_t len);
void lfc_unpublish(struct lfc_own *o);
/* The socket's receive buffer, again (after SO_RCVBUF changed). */
void lfc_set_rcvbuf(struct lfc_own *o, int fd);
/* Before a receive call: sent, if nothing was charged for
 * LFC_SETTLE_NS (all of it has arrived or is lost), else 0. */
uint64_t lfc_quiet(struct lfc_own *o);
/* After it: the call took cost (lfc_cost of each message); drained: it
 * found the socket empty, so what was sent and quiet before (quiet0) is
 * consumed.  True when it found the socket empty but senders are still
 * owed: look again after LFC_SETTLE_NS. */
bool lfc_consumed(struct lfc_own *o, uint64_t cost, bool drained,
		  uint64_t quiet0);

/* Sender.  The record for a destination, or NULL (not on this host's
 * loopback, or no receiver publishing; *full: every entry of s is
 * pinned, so none could be made for it).  The entry returned is pinned
 * (not replaced, its record kept mapped) until lfc_unpin. */
struct lfc_peer *lfc_lookup(struct lfc_send *s, const struct sockaddr *to,
			    socklen_t len, bool *full);
void lfc_unpin(struct lfc_send *s);
/* Reserve room for messages of cost[0..n) (0: not to p) at p's
 * receiver, in order: how many of them may go (all of them while p is
 * ignored).  What is reserved and then not sent goes back with
 * lfc_unsend. */
int lfc_reserve(struct lfc_peer *p, const uint64_t *cost, int n);
/* Charge cost without asking for room (a datagram that does not wait). */
void lfc_charge(struct lfc_peer *p, uint64_t cost);
void lfc_unsend(struct lfc_peer *p, uint64_t cost);
/* The sender found no room at p: how long to wait before looking again
 * (ns), or 0 when it has sent nothing to p for LFC_STALL_NS and p is
 * now ignored. */
uint64_t lfc_wait(struct lfc_send *s, struct lfc_peer *p);
/* Still no room for any message where s waits (its head message, put
 * back in order, waits for that receiver): a flush need not take the
 * queue apart to find that out (and wake its writer for nothing). */
bool lfc_blocked(struct lfc_send *s);
/* Something went to the receiver waited for: the wait is over. */
void lfc_sent(struct lfc_send *s);
void lfc_send_free(struct lfc_send *s);

#endif
