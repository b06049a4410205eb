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
static struct xti_ep *xti_free;		/* recycled endpoints; xti_tab_lock */
static pthread_once_t xti_once = PTHREAD_ONCE_INIT;

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
	xti_tab = calloc(cap, sizeof(*xti_tab));
	if (xti_tab != NULL)
		__atomic_store_n(&xti_cap, (int)cap, __ATOMIC_RELEASE);
	sth_ucopy_init();
	sth_set_closed_hook(xti_fd_closed);
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
static void ep_reset(struct xti_ep *ep, int fd)
{
	ep->ep_fd = fd;
	ep->ep_state = T_UNBND;
	memset(&ep->ep_info, 0, sizeof(ep->ep_info));
	ep->ep_qlen = 0;
	ep->ep_ocnt = 0;
	ep->ep_seq = NULL;
	ep->ep_seqcap = 0;
	ep->ep_nseq = 0;
	ep->ep_sequnk = false;
	ep->ep_flags = 0;
	ep->ep_held = NULL;
	ep->ep_heldtail = &ep->ep_held;
	for (int i = 0; i < 2; i++) {
		__atomic_store_n(&ep->ep_cont[i], -1, __ATOMIC_RELAXED);
		__atomic_store_n(&ep->ep_sndacc[i], 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&ep->ep_ucont, false, __ATOMIC_RELAXED);
	__atomic_store_n(&ep->ep_rd_active, 0, __ATOMIC_SEQ_CST);
	ep->ep_ack_reading = false;
	__atomic_store_n(&ep->ep_req_busy, false, __ATOMIC_SEQ_CST);
	ep->ep_ack_have = false;
	ep->ep_acklen = 0;
}

struct xti_ep *xti_ep_new(int fd)
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
	ep_reset(ep, fd);
	pthread_mutex_unlock(&ep->ep_lock);
	__atomic_store_n(&ep->ep_refs, 2, __ATOMIC_RELEASE);
	pthread_mutex_lock(&xti_tab_lock);
	old = xti_tab[fd];
	__atomic_store_n(&xti_tab[fd], ep, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&xti_tab_lock);
	if (old != NULL) {
		pthread_mutex_lock(&old->ep_lock);
		old->ep_flags |= EPF_DEAD;
		pthread_mutex_unlock(&old->ep_lock);
		xti_put(old);
	}
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
	if (!was)
		return;
	pthread_mutex_lock(&ep->ep_lock);
	ep->ep_flags |= EPF_DEAD;
	pthread_mutex_unlock(&ep->ep_lock);
	xti_put(ep);
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
	if (ep == NULL)
		return;
	pthread_mutex_lock(&ep->ep_lock);
	ep->ep_flags |= EPF_DEAD;
	pthread_cond_broadcast(&ep->ep_cv);
	pthread_mutex_unlock(&ep->ep_lock);
	xti_put(ep);
}

/* ---- held messages (ep_lock held) ---- */

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
	*ep->ep_heldtail = m;
	ep->ep_heldtail = &m->m_next;
}

struct xti_msg *xti_held_pop(struct xti_ep *ep)
{
	struct xti_msg *m = ep->ep_held;

	if (m == NULL)
		return NULL;
	ep->ep_held = m->m_next;
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
		*pp = m->m_next;
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
	ep->ep_held = keep;
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
