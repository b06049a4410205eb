/*
 * xti_ep.c -- the endpoint table: descriptor number -> struct xti_ep.
 *
 * The table is an array of pointers sized once from RLIMIT_NOFILE (its
 * pages cost nothing until touched), read without a lock.  Endpoints are
 * reference counted: the table holds one reference, every call in
 * progress another.  Their memory is never given back to malloc but
 * recycled through xti_free (type-stable), so xti_get() may load a
 * pointer that is being removed, take a reference on whatever endpoint
 * now lives there, see that the table no longer names it, and let go:
 * nothing is ever read from freed memory.
 *
 * libstreams tells us (xti_fd_closed, registered with
 * sth_set_closed_hook) when a descriptor number stops naming a stream:
 * close(), dup2() over it, close_range(), fclose(), or a stale number the
 * kernel handed out again.  The endpoint is then taken out of the table;
 * calls still running on it finish on the detached endpoint.
 *
 * The thread's cache (xti_get_cached, for the data calls).  Taking and
 * dropping a reference are two locked instructions per call; a thread
 * that calls again and again on one descriptor keeps one reference
 * instead, in xti_tc (fd, ep).  A call finds ep there when the table
 * still names ep at fd (two plain loads, ep_fd too for good measure):
 * the reference the cache holds keeps ep off the recycling list, so ep
 * cannot have left the table and come back (xti_ep_new installs only
 * endpoints nobody references), and a new endpoint on the same number,
 * whoever made it, is another struct: a miss.  A miss takes a reference
 * with xti_get, which the cache keeps, and drops the one it held (the
 * last one recycles an endpoint closed meanwhile).  The cached reference
 * goes when the thread caches another endpoint, when the thread exits
 * (xti_tc_key's destructor), and when the thread itself closes or
 * replaces the endpoint (tc_forget); until then a closed endpoint costs
 * only its memory, detached and marked EPF_DEAD like one a running call
 * holds.  A call lends the cached reference (xti_tc.depth counts the
 * calls of the thread using it): a call that runs while another is in
 * progress in the same thread (a signal handler's) takes its own
 * reference on a miss and leaves the cache alone.  After fork() the
 * child's only thread keeps its cache (the table and the counts are
 * copied with it); the references of the threads that did not follow
 * only keep those endpoints' memory.  What those threads were doing
 * inside an endpoint is forgotten in the child (fork_child): a reader's
 * count in ep_rd_active, an ack being read or taken for a request in
 * flight, a lock or condition variable they held or waited on;
 * otherwise the child's first request would wait for an ack that a
 * reader which is not there was to take.
 *
 * Lock order: xti_tab_lock alone (never with an ep_lock).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sthead.h"
#include "xti_impl.h"

#define TAB_MAX		(1 << 20)
#define TAB_MIN		1024

static struct xti_ep **xti_tab;		/* [fd]; atomic entries */
static int xti_cap;			/* atomic; 0 before init */
static pthread_mutex_t xti_tab_lock = PTHREAD_MUTEX_INITIALIZER;
static int xti_hifd = -1;		/* highest fd ever in the table;
					   xti_tab_lock */
static struct xti_ep *xti_free;		/* recycled endpoints; xti_tab_lock */
static pthread_once_t xti_once = PTHREAD_ONCE_INIT;

/* The thread's last endpoint of a data call (see the top of the file). */
struct xti_tcache {
	struct xti_ep *ep;		/* holds a reference; NULL: none */
	int fd;				/* ep->ep_fd */
	int depth;			/* calls of the thread lent ep */
	bool keyed;			/* xti_tc_key set: dropped at exit */
};
static __thread struct xti_tcache xti_tc STR_TLS_IE = { NULL, -1, 0, false };
static pthread_key_t xti_tc_key;	/* its destructor: tc_exit */
static bool xti_tc_ok;			/* xti_tc_key made; set before
					   xti_cap */
static void tc_exit(void *arg);

/* The child of fork(): its only thread is not inside libxti (fork is not
 * called from it), so every endpoint is idle there whatever the parent's
 * other threads were doing.  Limits: an ack still on its way to a
 * request of one of those threads stays on the stream, and the child's
 * first request reads it (TPROTO if it answers another primitive); and
 * the table's lock is not held across fork() (a prepare handler holding
 * it could deadlock with the stream head's, which runs after ours and
 * converts pipes, possibly through xti_fd_closed), so a thread that was
 * changing the table at that instant leaves the child's copy half
 * changed. */
static void fork_child(void)
{
	pthread_mutex_init(&xti_tab_lock, NULL);
	for (int fd = 0; fd <= xti_hifd && fd < xti_cap; fd++) {
		struct xti_ep *ep = xti_tab[fd];

		if (ep == NULL)
			continue;
		pthread_mutex_init(&ep->ep_lock, NULL);
		pthread_cond_init(&ep->ep_cv, NULL);
		ep->ep_rd_active = 0;
		ep->ep_ack_reading = false;
		ep->ep_req_busy = false;
		ep->ep_ack_have = false;	/* a vanished request's */
	}
}

static void init_once(void)
{
	struct rlimit rl;
	rlim_t cap = TAB_MIN;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		cap = rl.rlim_max;
		if (cap == RLIM_INFINITY || cap > TAB_MAX)
			cap = TAB_MAX;
		if (cap < TAB_MIN)
			cap = TAB_MIN;
	}
	xti_tc_ok = pthread_key_create(&xti_tc_key, tc_exit) == 0;
	xti_tab = calloc(cap, sizeof(*xti_tab));
	if (xti_tab != NULL)
		__atomic_store_n(&xti_cap, (int)cap, __ATOMIC_RELEASE);
	sth_ucopy_init();
	sth_set_closed_hook(xti_fd_closed);
	pthread_atfork(NULL, NULL, fork_child);
}

void xti_init(void)
{
	pthread_once(&xti_once, init_once);
}

static inline int tab_cap(void)
{
	return __atomic_load_n(&xti_cap, __ATOMIC_ACQUIRE);
}

static inline struct xti_ep *tab_load(int fd)
{
	return __atomic_load_n(&xti_tab[fd], __ATOMIC_ACQUIRE);
}

struct xti_ep *xti_get(int fd)
{
	struct xti_ep *ep;
	int r;

	if (fd < 0 || fd >= tab_cap()) {
		xti_err(TBADF);
		return NULL;
	}
	for (;;) {
		ep = tab_load(fd);
		if (ep == NULL) {
			xti_err(TBADF);
			return NULL;
		}
		r = __atomic_load_n(&ep->ep_refs, __ATOMIC_ACQUIRE);
		if (r <= 0)
			continue;	/* being recycled: the table changes */
		if (!__atomic_compare_exchange_n(&ep->ep_refs, &r, r + 1, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		if (tab_load(fd) == ep && ep->ep_fd == fd)
			return ep;
		xti_put(ep);
	}
}

/* The thread exits: drop its cached reference. */
static void tc_exit(void *arg)
{
	struct xti_tcache *c = arg;
	struct xti_ep *ep = c->ep;

	c->ep = NULL;
	c->fd = -1;
	c->keyed = false;	/* (the key's value is NULL now) */
	if (ep != NULL)
		xti_put(ep);
}

/* A miss: ep (a new reference) for a call of this thread.  Cached in
 * place of the last one unless a call of the thread is lent that one or
 * the thread cannot have it dropped at exit; then the call keeps its
 * own reference (xti_put_cached drops it). */
static struct xti_ep *tc_miss(struct xti_tcache *c, struct xti_ep *ep)
{
	struct xti_ep *old = c->ep;

	if (c->depth > 0)
		return ep;
	if (!c->keyed) {
		if (!xti_tc_ok || pthread_setspecific(xti_tc_key, c) != 0)
			return ep;
		c->keyed = true;
	}
	c->ep = ep;
	c->fd = ep->ep_fd;
	c->depth = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (old != NULL)
		xti_put(old);
	return ep;
}

struct xti_ep *xti_get_cached(int fd)
{
	struct xti_tcache *c = &xti_tc;
	struct xti_ep *ep = c->ep;

	/* (fd was below tab_cap when cached, and the table never shrinks) */
	if (ep != NULL && c->fd == fd && tab_load(fd) == ep &&
	    ep->ep_fd == fd) {
		c->depth++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return ep;
	}
	ep = xti_get(fd);
	if (ep == NULL)
		return NULL;
	return tc_miss(c, ep);
}

void xti_put_cached(struct xti_ep *ep)
{
	struct xti_tcache *c = &xti_tc;

	if (c->depth > 0 && ep == c->ep) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		c->depth--;
		return;
	}
	xti_put(ep);
}

/* ep leaves the table by this thread's hand (t_close, a close, an
 * endpoint made in its place): its cached reference goes now, unless a
 * call of the thread is lent it (it goes at the next miss then). */
static void tc_forget(struct xti_ep *ep)
{
	struct xti_tcache *c = &xti_tc;

	if (c->ep != ep || c->depth > 0)
		return;
	c->ep = NULL;
	c->fd = -1;
	xti_put(ep);
}

static void ep_clear(struct xti_ep *ep)
{
	struct xti_msg *m;

	while ((m = xti_held_pop(ep)) != NULL)
		xti_msg_free(m);
	free(ep->ep_seq);
	ep->ep_seq = NULL;
	ep->ep_seqcap = 0;
	ep->ep_nseq = 0;
	ep->ep_ocnt = 0;
}

void xti_put(struct xti_ep *ep)
{
	if (__atomic_sub_fetch(&ep->ep_refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_lock(&ep->ep_lock);
	ep_clear(ep);
	pthread_mutex_unlock(&ep->ep_lock);
	pthread_mutex_lock(&xti_tab_lock);
	ep->ep_free = xti_free;
	xti_free = ep;
	pthread_mutex_unlock(&xti_tab_lock);
}

/* Fields of a fresh endpoint (not yet visible to anyone else). */
static void ep_reset(struct xti_ep *ep, int fd, const struct T_info_ack *ia,
		     int state, unsigned int qlen)
{
	ep->ep_fd = fd;
	xti_set_state(ep, state);
	xti_set_info(ep, ia);
	ep->ep_qlen = qlen;
	/* in T_INCON: some indications outstanding, numbers unknown */
	ep->ep_ocnt = state == T_INCON ? 1 : 0;
	ep->ep_seq = NULL;
	ep->ep_seqcap = 0;
	ep->ep_nseq = 0;
	ep->ep_sequnk = state == T_INCON;
	ep->ep_flags = 0;
	__atomic_store_n(&ep->ep_held, NULL, __ATOMIC_RELAXED);
	ep->ep_heldtail = &ep->ep_held;
	for (int i = 0; i < 2; i++) {
		__atomic_store_n(&ep->ep_cont[i], -1, __ATOMIC_RELAXED);
		__atomic_store_n(&ep->ep_sndacc[i], 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&ep->ep_ucont, false, __ATOMIC_RELAXED);
	__atomic_store_n(&ep->ep_rd_active, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ep->ep_ack_reading, false, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ep->ep_req_busy, false, __ATOMIC_SEQ_CST);
	ep->ep_ack_have = false;
	ep->ep_acklen = 0;
}

/* ep has left the table: marked dead (its sleepers woken when wake),
 * and the table's reference and this thread's cached one dropped. */
static void ep_gone(struct xti_ep *ep, bool wake)
{
	pthread_mutex_lock(&ep->ep_lock);
	ep->ep_flags |= EPF_DEAD;
	if (wake)
		pthread_cond_broadcast(&ep->ep_cv);
	pthread_mutex_unlock(&ep->ep_lock);
	tc_forget(ep);
	xti_put(ep);
}

struct xti_ep *xti_ep_new(int fd, const struct T_info_ack *ia, int state,
			  unsigned int qlen)
{
	struct xti_ep *ep, *old;

	xti_init();
	if (fd < 0 || fd >= tab_cap())
		return NULL;
	pthread_mutex_lock(&xti_tab_lock);
	ep = xti_free;
	if (ep != NULL)
		xti_free = ep->ep_free;
	pthread_mutex_unlock(&xti_tab_lock);
	if (ep == NULL) {
		ep = calloc(1, sizeof(*ep));
		if (ep == NULL)
			return NULL;
		pthread_mutex_init(&ep->ep_lock, NULL);
		pthread_cond_init(&ep->ep_cv, NULL);
	}
	pthread_mutex_lock(&ep->ep_lock);
	ep_reset(ep, fd, ia, state, qlen);
	pthread_mutex_unlock(&ep->ep_lock);
	__atomic_store_n(&ep->ep_refs, 2, __ATOMIC_RELEASE);
	pthread_mutex_lock(&xti_tab_lock);
	old = xti_tab[fd];
	__atomic_store_n(&xti_tab[fd], ep, __ATOMIC_RELEASE);
	if (fd > xti_hifd)
		xti_hifd = fd;
	pthread_mutex_unlock(&xti_tab_lock);
	if (old != NULL)
		ep_gone(old, false);
	return ep;
}

void xti_ep_remove(struct xti_ep *ep)
{
	bool was = false;
	int fd = ep->ep_fd;

	pthread_mutex_lock(&xti_tab_lock);
	if (fd >= 0 && fd < tab_cap() && xti_tab[fd] == ep) {
		__atomic_store_n(&xti_tab[fd], NULL, __ATOMIC_RELEASE);
		was = true;
	}
	pthread_mutex_unlock(&xti_tab_lock);
	if (was)
		ep_gone(ep, false);
}

void xti_fd_closed(int fd)
{
	struct xti_ep *ep;

	if (fd < 0 || fd >= tab_cap() || tab_load(fd) == NULL)
		return;
	pthread_mutex_lock(&xti_tab_lock);
	ep = xti_tab[fd];
	if (ep != NULL)
		__atomic_store_n(&xti_tab[fd], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&xti_tab_lock);
	if (ep != NULL)
		ep_gone(ep, true);
}

/* ---- held messages (ep_lock held) ----
 * ep_held (and every m_next on the list) is stored atomically: the data
 * calls look whether anything is held without the lock (xti_held_any). */

void xti_msg_free(struct xti_msg *m)
{
	if (m == NULL)
		return;
	free(m->m_ctl);
	free(m->m_dat);
	free(m);
}

void xti_held_push(struct xti_ep *ep, struct xti_msg *m)
{
	m->m_next = NULL;
	__atomic_store_n(ep->ep_heldtail, m, __ATOMIC_RELAXED);
	ep->ep_heldtail = &m->m_next;
}

void xti_held_front(struct xti_ep *ep, struct xti_msg *m)
{
	m->m_next = ep->ep_held;
	__atomic_store_n(&ep->ep_held, m, __ATOMIC_RELAXED);
	if (m->m_next == NULL)
		ep->ep_heldtail = &m->m_next;
}

struct xti_msg *xti_held_pop(struct xti_ep *ep)
{
	struct xti_msg *m = ep->ep_held;

	if (m == NULL)
		return NULL;
	__atomic_store_n(&ep->ep_held, m->m_next, __ATOMIC_RELAXED);
	if (ep->ep_held == NULL)
		ep->ep_heldtail = &ep->ep_held;
	m->m_next = NULL;
	return m;
}

/* The first held message of type prim, taken off the list; NULL. */
struct xti_msg *xti_held_take(struct xti_ep *ep, t_scalar_t prim)
{
	struct xti_msg **pp, *m;

	for (pp = &ep->ep_held; (m = *pp) != NULL; pp = &m->m_next) {
		if (m->m_prim != prim)
			continue;
		__atomic_store_n(pp, m->m_next, __ATOMIC_RELAXED);
		if (ep->ep_heldtail == &m->m_next)
			ep->ep_heldtail = pp;
		m->m_next = NULL;
		return m;
	}
	return NULL;
}

/* Drop held messages; keep_discon keeps the T_DISCON_INDs (they name
 * outstanding connection indications). */
void xti_held_flush(struct xti_ep *ep, bool keep_discon)
{
	struct xti_msg *m, *keep = NULL, **kt = &keep;

	while ((m = xti_held_pop(ep)) != NULL) {
		if (keep_discon && m->m_prim == T_DISCON_IND) {
			*kt = m;
			kt = &m->m_next;
		} else {
			xti_msg_free(m);
		}
	}
	__atomic_store_n(&ep->ep_held, keep, __ATOMIC_RELAXED);
	ep->ep_heldtail = keep != NULL ? kt : &ep->ep_held;
}

void xti_conn_reset(struct xti_ep *ep)
{
	for (int i = 0; i < 2; i++) {
		__atomic_store_n(&ep->ep_cont[i], -1, __ATOMIC_RELAXED);
		__atomic_store_n(&ep->ep_sndacc[i], 0, __ATOMIC_RELAXED);
	}
	ep->ep_flags &= ~(EPF_FLOW | EPF_EXFLOW);
	xti_held_flush(ep, false);
}

/* ---- outstanding connection indications (ep_lock held) ----
 * ep_seq[0 .. ep_nseq) are the known sequence numbers; after a t_sync
 * in T_INCON (ep_sequnk) ep_ocnt may count some the library never saw. */

int xti_seq_add(struct xti_ep *ep, int seq)
{
	if (ep->ep_nseq == ep->ep_seqcap) {
		int cap = ep->ep_seqcap ? ep->ep_seqcap * 2 : 8;
		int *n = realloc(ep->ep_seq, (size_t)cap * sizeof(*n));
		if (n == NULL)
			return ENOMEM;
		ep->ep_seq = n;
		ep->ep_seqcap = cap;
	}
	ep->ep_seq[ep->ep_nseq++] = seq;
	ep->ep_ocnt++;
	return 0;
}

bool xti_seq_has(struct xti_ep *ep, int seq)
{
	for (int i = 0; i < ep->ep_nseq; i++)
		if (ep->ep_seq[i] == seq)
			return true;
	return ep->ep_sequnk && ep->ep_ocnt > ep->ep_nseq;
}

void xti_seq_del(struct xti_ep *ep, int seq)
{
	for (int i = 0; i < ep->ep_nseq; i++) {
		if (ep->ep_seq[i] == seq) {
			memmove(&ep->ep_seq[i], &ep->ep_seq[i + 1],
				(size_t)(ep->ep_nseq - i - 1) * sizeof(int));
			ep->ep_nseq--;
			ep->ep_ocnt--;
			return;
		}
	}
	if (ep->ep_sequnk && ep->ep_ocnt > ep->ep_nseq)
		ep->ep_ocnt--;
}

void xti_seq_clear(struct xti_ep *ep)
{
	ep->ep_ocnt = 0;
	ep->ep_nseq = 0;
	ep->ep_sequnk = false;
}

/* ---- application memory ---- */

int xti_uin(void *dst, const void *usrc, size_t n)
{
	return sth_ucopy(dst, usrc, n);
}

int xti_uout(void *udst, const void *src, size_t n)
{
	return sth_ucopy(udst, src, n);
}
