/*
 * inet_lfc.c -- flow control between /dev/udp endpoints on one host.
 *
 * How this works
 * --------------
 * UDP gives a receiver no way to slow its sender: what its socket has no
 * room for, the kernel drops.  Between two batching UDP endpoints
 * (/dev/udp) of this host that talk over loopback, a sender can do
 * better: it can hold back what the receiver's socket has no room for,
 * as a stream holds back what the queue below has no room for.
 *
 * The receiver publishes a record in shared memory when it binds to the
 * any address or a loopback one: /dev/shm/streams-udp-<netns>-<4|6>-<port>
 * (made under a temporary name, filled in and locked, then linked into
 * place; an OFD lock held on it while the endpoint lives, so a record
 * whose owner died is known, not used, and replaced; a process's first
 * publication removes every such stale record).  In it:
 *
 *   rcvbuf	the socket's receive buffer (SO_RCVBUF, as the kernel doubled
 *		it);
 *   sent	what senders charged for the messages they sent or are
 *		sending: each reserves what it may send with a compare and
 *		swap (so senders side by side cannot spend the same room),
 *		and takes back what the kernel did not take; sent_at: when
 *		a sender last charged;
 *   consumed	what the receiver has taken out of its socket: it adds what
 *		each receive call took (never more than sent).  A datagram
 *		that never arrives (a loss) would be owed for ever, so when a
 *		receive call finds the socket empty after nothing was charged
 *		for LFC_SETTLE_NS (a send may return while its datagrams wait
 *		in the kernel's backlog for its softirq), consumed is made
 *		sent.  A receiver left owed after an empty socket looks again
 *		once that time has passed (inet_dg.c's settle).
 *
 * Charges are the receive memory the kernel charges for a message
 * (lfc_cost: measured on Linux 6.x loopback, rounded up), so sent -
 * consumed bounds what waits in the socket.  The kernel takes a message
 * that fits within rcvbuf, or any message into an empty socket, and
 * frees memory back only in steps of a quarter of rcvbuf; so a sender
 * may send a message that keeps sent - consumed within three quarters of
 * rcvbuf, or any when it is 0 (lfc_reserve).  A flush (inet_dg.c) sends what was reserved; the rest
 * stays on the write queue, whose water marks stop the writer above
 * (blocking, or EAGAIN/TFLOW), and the flush looks again after a short
 * delay (20 us, doubling to 1 ms while the receiver consumes nothing).
 * A sender that could send nothing to a receiver for LFC_STALL_NS (it
 * stopped reading, or died) sends to it as plain UDP, still charging,
 * until it consumes again.
 *
 * Datagrams from anywhere else (a plain socket, another host) are not
 * charged but are counted as consumed: they may make a sender think
 * there is more room than there is, and may then overflow the socket,
 * as before.  A record is outside input: its owner (our uid, mode
 * 0600), lock, magic, version, family, port, address and size are
 * checked, and one that passes and lies can at worst make a sender wait
 * LFC_STALL_NS at a time.  A forked child's copy of a receiver does not
 * touch the parent's record when it closes.
 *
 * Locking: a receiver's record pointer changes under the endpoint's lock
 * with rx_lock held, and consumed is written by the puller (rx_lock); a
 * sender's table is its tx_lock's.  The shared counters are atomic.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inet_lfc.h"
#include "strsubr.h"

#define LFC_MAGIC	0x3143464cu	/* "LFC1" */
#define LFC_VERSION	1
#define LFC_SIZE	4096
#define LFC_LIVE	1
#define LFC_CLOSED	2
#define LFC_DIR		"/dev/shm/"
#define LFC_RECHECK_NS	100000000ull	/* a missing record: look again */
#define LFC_DELAY_MIN	20000ull
#define LFC_DELAY_MAX	1000000ull
#define LFC_OPEN	(O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)

struct lfc_rec {
	uint32_t magic;			/* LFC_MAGIC, stored last */
	uint32_t version;
	uint32_t state;			/* atomic: LFC_LIVE, LFC_CLOSED */
	uint32_t family;		/* AF_INET, AF_INET6 */
	uint16_t port;			/* network order */
	uint16_t pad[3];
	unsigned char addr[16];		/* bound address; zeros: any */
	int64_t rcvbuf;			/* atomic: the receiver's */
	_Alignas(64) uint64_t sent;	/* atomic: senders reserve (CAS) */
	uint64_t sent_at;		/* atomic: ns of the last charge */
	_Alignas(64) uint64_t consumed;	/* atomic: the receiver */
};

_Static_assert(sizeof(struct lfc_rec) <= LFC_SIZE, "record too big");

static uint64_t pow2ceil(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/*
 * Receive memory charged for a message (Linux 6.x loopback, UDP_GRO on
 * at the receiver): one datagram of L bytes has a linear head of the
 * next power of two above L and its headers (the small-head cache under
 * 640 bytes: 832 in all) and 256 of sk_buff, or pages from about 16 KiB
 * on (L + 832); a GSO message stays one buffer of its payload and 832.
 * Rounded up: headers of IPv6, and a margin.
 */
uint64_t lfc_cost(size_t len, size_t seg)
{
	uint64_t h = (uint64_t)len + 448;

	if (seg != 0 && seg < len)
		return (uint64_t)len + 1024;
	if (h <= 16384)
		return 256 + (h <= 576 ? 576 : pow2ceil(h));
	return (uint64_t)len + 1024;
}

/* The network namespace this thread is in (its inode), or 0. */
static unsigned long netns_id(void)
{
	struct stat st;

	if (stat("/proc/thread-self/ns/net", &st) == 0 ||
	    stat("/proc/self/ns/net", &st) == 0)
		return (unsigned long)st.st_ino;
	return 0;
}

static void rec_name(char *buf, size_t size, int family, uint16_t port)
{
	snprintf(buf, size, LFC_DIR "streams-udp-%lu-%d-%u", netns_id(),
		 family == AF_INET6 ? 6 : 4, (unsigned)ntohs(port));
}

/* The family, port and address of sa (len bytes) as a record keeps
 * them; false when it is neither.  *loop: a loopback (or any) address. */
static bool split_addr(const struct sockaddr *sa, socklen_t len, int *family,
		       uint16_t *port, unsigned char addr[16], bool *loop,
		       bool *any)
{
	memset(addr, 0, 16);
	if (sa == NULL)
		return false;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;

		memcpy(&in, sa, sizeof(in));
		*family = AF_INET;
		*port = in.sin_port;
		memcpy(addr, &in.sin_addr, 4);
		*any = in.sin_addr.s_addr == htonl(INADDR_ANY);
		*loop = (ntohl(in.sin_addr.s_addr) >> 24) == 127;
		return true;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;

		memcpy(&in6, sa, sizeof(in6));
		*port = in6.sin6_port;
		if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
			/* to a v4 address: a v4 receiver's record */
			*family = AF_INET;
			memcpy(addr, &in6.sin6_addr.s6_addr[12], 4);
			*any = false;
			*loop = in6.sin6_addr.s6_addr[12] == 127;
			return true;
		}
		*family = AF_INET6;
		memcpy(addr, &in6.sin6_addr, 16);
		*any = IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr);
		*loop = IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr);
		return true;
	}
	return false;
}

/* ---- the receiver ---- */

static bool lock_rec(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

/* The same file at name as open descriptor fd? */
static bool same_file(const char *name, int fd)
{
	struct stat a, b;

	return stat(name, &a) == 0 && fstat(fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A record at name whose owner is gone: removed.  (Its lock is free:
 * the owner's descriptor is closed.) */
static void remove_stale(const char *name)
{
	int fd = open(name, LFC_OPEN);

	if (fd < 0)
		return;
	if (lock_rec(fd) && same_file(name, fd))
		(void)unlink(name);
	close(fd);
}

/* Records whose owners died without closing (killed) are replaced when
 * their port is published again, which for ephemeral ports may be never:
 * a process's first publication removes every stale one.  (Not the
 * temporary files, "<name>.<pid>.<ptr>", which a publisher locks only
 * after making them.) */
static void sweep(void)
{
	static int swept;
	char path[sizeof(LFC_DIR) + 256];
	DIR *d;
	struct dirent *e;

	if (__atomic_exchange_n(&swept, 1, __ATOMIC_ACQ_REL) ||
	    (d = opendir(LFC_DIR)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "streams-udp-", 12) == 0 &&
		    strchr(e->d_name, '.') == NULL &&
		    strlen(e->d_name) < 256) {
			snprintf(path, sizeof(path), LFC_DIR "%s", e->d_name);
			remove_stale(path);
		}
	closedir(d);
}

bool lfc_publish(struct lfc_own *o, int fd, const struct sockaddr *laddr,
		 socklen_t len)
{
	char tmp[96];
	struct lfc_rec *r;
	unsigned char addr[16];
	int family, rfd, rb = 0;
	socklen_t rl = sizeof(rb);
	uint16_t port;
	bool loop, any;

	if (atomic_load_explicit(&o->rec, memory_order_relaxed) != NULL)
		return true;
	if (!split_addr(laddr, len, &family, &port, addr, &loop, &any) ||
	    !(loop || any) || port == 0)
		return false;
	sweep();
	rec_name(o->name, sizeof(o->name), family, port);
	snprintf(tmp, sizeof(tmp), "%s.%d.%p", o->name, (int)getpid(),
		 (void *)o);
	rfd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		   0600);
	if (rfd < 0)
		return false;
	r = NULL;
	if (ftruncate(rfd, LFC_SIZE) != 0 || !lock_rec(rfd) ||
	    (r = mmap(NULL, LFC_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      rfd, 0)) == MAP_FAILED) {
		r = NULL;
		goto fail;
	}
	r->version = LFC_VERSION;
	r->state = LFC_LIVE;
	r->family = (uint32_t)family;
	r->port = port;
	memcpy(r->addr, addr, sizeof(r->addr));
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, &rl) != 0)
		rb = 0;
	r->rcvbuf = rb;
	__atomic_store_n(&r->magic, LFC_MAGIC, __ATOMIC_RELEASE);
	if (link(tmp, o->name) != 0) {
		if (errno != EEXIST)
			goto fail;
		remove_stale(o->name);
		if (link(tmp, o->name) != 0)
			goto fail;	/* a live owner has the port */
	}
	(void)unlink(tmp);
	o->fd = rfd;
	o->pid = getpid();
	atomic_store_explicit(&o->rec, r, memory_order_release);
	return true;
fail:
	if (r != NULL)
		munmap(r, LFC_SIZE);
	(void)unlink(tmp);
	close(rfd);
	return false;
}

void lfc_unpublish(struct lfc_own *o)
{
	struct lfc_rec *r = atomic_load_explicit(&o->rec,
						 memory_order_relaxed);

	if (r == NULL)
		return;
	if (o->pid == getpid()) {
		/* (a forked child's copy leaves the parent's record be) */
		__atomic_store_n(&r->state, LFC_CLOSED, __ATOMIC_RELEASE);
		if (same_file(o->name, o->fd))
			(void)unlink(o->name);
	}
	atomic_store_explicit(&o->rec, NULL, memory_order_release);
	munmap(r, LFC_SIZE);
	close(o->fd);
	o->fd = -1;
}

void lfc_set_rcvbuf(struct lfc_own *o, int fd)
{
	struct lfc_rec *r = atomic_load_explicit(&o->rec,
						 memory_order_acquire);
	int rb = 0;
	socklen_t rl = sizeof(rb);

	if (r != NULL && getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, &rl) == 0)
		__atomic_store_n(&r->rcvbuf, (int64_t)rb, __ATOMIC_RELEASE);
}

uint64_t lfc_quiet(struct lfc_own *o)
{
	struct lfc_rec *r = atomic_load_explicit(&o->rec,
						 memory_order_acquire);
	uint64_t s1, s2, t;

	if (r == NULL)
		return 0;
	/* sent_at is stored before a charge is added: the same sent on
	 * both sides of it means no charge between */
	s1 = __atomic_load_n(&r->sent, __ATOMIC_ACQUIRE);
	t = __atomic_load_n(&r->sent_at, __ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&r->sent, __ATOMIC_ACQUIRE);
	if (s1 != s2 || str_now_ns() - t < LFC_SETTLE_NS)
		return 0;
	return s1;
}

bool lfc_consumed(struct lfc_own *o, uint64_t cost, bool drained,
		  uint64_t quiet0)
{
	struct lfc_rec *r = atomic_load_explicit(&o->rec,
						 memory_order_acquire);
	uint64_t c0, c, s;

	if (r == NULL)
		return false;
	c0 = __atomic_load_n(&r->consumed, __ATOMIC_RELAXED);
	s = __atomic_load_n(&r->sent, __ATOMIC_ACQUIRE);
	c = c0 + cost;
	if ((int64_t)(c - s) > 0)	/* (others' datagrams are not owed) */
		c = s;
	if (drained && (int64_t)(quiet0 - c) > 0)
		c = quiet0;		/* lost, or not counted: not owed */
	if (c != c0)
		__atomic_store_n(&r->consumed, c, __ATOMIC_RELEASE);
	return drained && c != s;
}

/* ---- the sender ---- */

static void peer_drop(struct lfc_peer *p)
{
	if (p->rec != NULL)
		munmap(p->rec, LFC_SIZE);
	p->rec = NULL;
	p->ignored = false;
}

/* Map the record for (family, port), if a receiver publishes one that
 * takes datagrams sent to addr. */
static struct lfc_rec *rec_map(int family, uint16_t port,
			       const unsigned char addr[16])
{
	char name[64];
	struct stat st;
	struct lfc_rec *r;
	static const unsigned char zero[16];
	int fd;

	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	rec_name(name, sizeof(name), family, port);
	if ((fd = open(name, LFC_OPEN)) < 0)
		return NULL;
	/* ours (another user's could lie, or be cut short under us), and
	 * held by a live owner (a dead one's is stale) */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
	    st.st_size < LFC_SIZE || fcntl(fd, F_OFD_GETLK, &fl) != 0 ||
	    fl.l_type == F_UNLCK) {
		close(fd);
		return NULL;
	}
	r = mmap(NULL, LFC_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r == MAP_FAILED)
		return NULL;
	if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != LFC_MAGIC ||
	    r->version != LFC_VERSION || r->family != (uint32_t)family ||
	    r->port != port ||
	    __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != LFC_LIVE ||
	    (memcmp(r->addr, zero, 16) != 0 &&
	     memcmp(r->addr, addr, family == AF_INET ? 4 : 16) != 0)) {
		munmap(r, LFC_SIZE);
		return NULL;
	}
	return r;
}

struct lfc_peer *lfc_lookup(struct lfc_send *s, const struct sockaddr *to,
			    socklen_t len, bool *full)
{
	unsigned char addr[16];
	int family;
	uint16_t port;
	bool loop, any;
	struct lfc_peer *p = NULL;

	*full = false;
	if (!split_addr(to, len, &family, &port, addr, &loop, &any) ||
	    !loop)
		return NULL;
	for (int i = 0; i < LFC_PEERS; i++)
		if (s->peer[i].family == family && s->peer[i].port == port) {
			p = &s->peer[i];
			break;
		}
	if (p != NULL && p->pinned)
		return p->rec != NULL ? p : NULL;	/* (as it was) */
	if (p != NULL && p->rec != NULL &&
	    __atomic_load_n(&p->rec->state, __ATOMIC_ACQUIRE) != LFC_LIVE) {
		peer_drop(p);		/* closed: look for a new one */
		p->checked = 0;
	}
	if (p == NULL) {
		int i;

		for (i = 0; i < LFC_PEERS &&
			    s->peer[s->next % LFC_PEERS].pinned; i++)
			s->next++;
		if (i == LFC_PEERS) {
			*full = true;	/* all in use by this batch */
			return NULL;
		}
		p = &s->peer[s->next++ % LFC_PEERS];
		if (s->wait == p)
			s->wait = NULL;
		peer_drop(p);
		p->family = family;
		p->port = port;
		p->checked = 0;
	}
	if (p->rec == NULL) {
		uint64_t now = str_now_ns();

		if (p->checked != 0 && now - p->checked < LFC_RECHECK_NS)
			return NULL;
		p->checked = now;
		if ((p->rec = rec_map(family, port, addr)) == NULL)
			return NULL;
	}
	if (p->ignored &&
	    __atomic_load_n(&p->rec->consumed, __ATOMIC_ACQUIRE) !=
	    p->ignored_at)
		p->ignored = false;	/* it reads again */
	p->pinned = true;
	return p;
}

void lfc_unpin(struct lfc_send *s)
{
	for (int i = 0; i < LFC_PEERS; i++)
		s->peer[i].pinned = false;
}

/* How much of what the receiver of r holds may be ours (its backlog
 * sent - consumed): its rcvbuf, less a quarter, because the kernel
 * gives memory back to the socket only once it has freed a quarter of
 * rcvbuf (udp_rmem_release's forward_threshold) or emptied its queue, so
 * up to that much more is charged than is queued. */
#define LFC_QMAX	((int64_t)1 << 50)	/* more than any rcvbuf */

static int64_t limit(struct lfc_rec *r)
{
	int64_t rb = __atomic_load_n(&r->rcvbuf, __ATOMIC_RELAXED);

	if (rb < 0 || rb > (int64_t)1 << 40)
		rb = 0;
	return rb - rb / 4;
}

int lfc_reserve(struct lfc_peer *p, const uint64_t *cost, int n)
{
	struct lfc_rec *r = p->rec;
	int64_t lim = limit(r);
	uint64_t s = __atomic_load_n(&r->sent, __ATOMIC_ACQUIRE);

	for (;;) {
		/* consumed after sent: the backlog seen is at least the
		 * real one */
		uint64_t c = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE);
		int64_t q = (int64_t)(s - c);
		uint64_t total = 0;
		int k;

		/* (the record is the receiver's to write: a backlog
		 * beyond any buffer is full, not an overflow) */
		if (q < 0)
			q = 0;
		else if (q > LFC_QMAX)
			q = LFC_QMAX;
		for (k = 0; k < n; k++) {
			if (cost[k] == 0)
				continue;	/* not to this receiver */
			/* the kernel takes a message that fits, or any
			 * message into an empty socket (Linux 6.x;
			 * before, any while within rcvbuf) */
			if (q != 0 && q + (int64_t)cost[k] > lim &&
			    !p->ignored)
				break;
			q += (int64_t)cost[k];
			total += cost[k];
		}
		if (total == 0)
			return k;
		__atomic_store_n(&r->sent_at, str_now_ns(), __ATOMIC_RELEASE);
		if (__atomic_compare_exchange_n(&r->sent, &s, s + total, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return k;
		/* another sender reserved meanwhile: again, with its s */
	}
}

void lfc_charge(struct lfc_peer *p, uint64_t cost)
{
	__atomic_store_n(&p->rec->sent_at, str_now_ns(), __ATOMIC_RELEASE);
	__atomic_add_fetch(&p->rec->sent, cost, __ATOMIC_ACQ_REL);
}

void lfc_unsend(struct lfc_peer *p, uint64_t cost)
{
	if (cost != 0)
		__atomic_sub_fetch(&p->rec->sent, cost, __ATOMIC_ACQ_REL);
}

uint64_t lfc_wait(struct lfc_send *s, struct lfc_peer *p)
{
	uint64_t now = str_now_ns();
	uint64_t c = __atomic_load_n(&p->rec->consumed, __ATOMIC_ACQUIRE);

	if (s->wait != p) {
		s->wait = p;
		s->wait_since = now;
		s->wait_consumed = c;
		s->delay = LFC_DELAY_MIN;
		return s->delay;
	}
	if (now - s->wait_since > LFC_STALL_NS) {
		/* nothing sent to it for that long: plain UDP until it
		 * reads again (a receiver that keeps consuming others'
		 * datagrams does not keep us here) */
		p->ignored = true;
		p->ignored_at = c;
		s->wait = NULL;
		return 0;
	}
	if (c != s->wait_consumed) {
		s->wait_consumed = c;	/* it reads: look again soon */
		s->delay = LFC_DELAY_MIN;
	} else if (s->delay < LFC_DELAY_MAX) {
		s->delay *= 2;
	}
	return s->delay;
}

bool lfc_blocked(struct lfc_send *s)
{
	struct lfc_peer *p = s->wait;
	struct lfc_rec *r;
	int64_t q;

	if (p == NULL || p->rec == NULL || p->ignored)
		return false;
	r = p->rec;
	q = (int64_t)(__atomic_load_n(&r->sent, __ATOMIC_ACQUIRE) -
		      __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE));
	/* (the least any message costs: lfc_cost(0, 0)) */
	return q > 0 && q + 832 > limit(r);
}

void lfc_sent(struct lfc_send *s)
{
	s->wait = NULL;
}

void lfc_send_free(struct lfc_send *s)
{
	for (int i = 0; i < LFC_PEERS; i++)
		peer_drop(&s->peer[i]);
	s->wait = NULL;
}

