/*
 * tiloop_ns.c -- the loopback providers' namespace and delivery part.
 *
 * How this works
 * --------------
 * Each provider (ticlts, ticots, ticotsord) has one struct tl_ns: its
 * own address space.  Bound endpoints hang in a small hash table keyed
 * by the address bytes; every open endpoint is also on one list, which
 * is how an ACCEPTOR_id is found.  An ACCEPTOR_id is a counter shifted
 * left two bits with the provider's index (1..3) in the low bits, so it
 * is never 0, is unique per open, and tells an endpoint of another
 * provider (TPROVMISMATCH) from no endpoint at all (TBADF).
 *
 * Delivery is putq() on the receiver's read queue; the receiver's read
 * service procedure passes messages up as its stream head takes them.
 * A sender that finds that queue full (bcanput fails, which also marks
 * the queue QWANTW) is linked on the receiver's waiter list before it
 * gives up, and the receiver's read service procedure, after draining,
 * enables every waiter's write queue.  Both happen under ns->lock, and
 * the receiver drains before it takes the lock to wake, so a sender
 * either sees the room or is on the list when the wake-up looks at it.
 *
 * Everything here runs with ns->lock held (tiloop.c gives the rule).
 */
#include <stdio.h>
#include <string.h>

#include "tiloop.h"

static unsigned int hash(const unsigned char *a, size_t len)
{
	unsigned int h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ a[i]) * 16777619u;
	return h % TL_HASH;
}

void tl_ns_attach(struct tl_ns *ns, struct tl_ep *ep)
{
	ep->token = (ns->next_token << 2) | ns->index;
	ns->next_token = (ns->next_token + 1) & 0x3fffffff;
	if (ns->next_token == 0)
		ns->next_token = 1;
	ep->anext = ns->all;
	ns->all = ep;
}

void tl_ns_detach(struct tl_ep *ep)
{
	struct tl_ep **pp;

	tl_ns_unbind(ep);
	for (pp = &ep->ns->all; *pp != NULL; pp = &(*pp)->anext)
		if (*pp == ep) {
			*pp = ep->anext;
			break;
		}
	ep->anext = NULL;
}

struct tl_ep *tl_ns_lookup(struct tl_ns *ns, const unsigned char *a,
			   size_t len)
{
	struct tl_ep *ep;

	if (len == 0 || len > TL_ADDR_SIZE)
		return NULL;
	for (ep = ns->bound[hash(a, len)]; ep != NULL; ep = ep->hnext)
		if (ep->addr.len == len && memcmp(ep->addr.b, a, len) == 0)
			return ep;
	return NULL;
}

/* A unique address: eight hex digits of a counter, skipping any that a
 * user bound explicitly. */
static void new_addr(struct tl_ns *ns, struct tl_addr *ad)
{
	char buf[16];

	do {
		snprintf(buf, sizeof(buf), "%08lx", ns->next_addr & 0xffffffffUL);
		ns->next_addr++;
		ad->len = 8;
		memcpy(ad->b, buf, 8);
	} while (tl_ns_lookup(ns, ad->b, ad->len) != NULL);
}

int tl_ns_bind(struct tl_ep *ep, const unsigned char *a, size_t len)
{
	struct tl_ns *ns = ep->ns;
	unsigned int h;

	if (len == 0) {
		new_addr(ns, &ep->addr);
	} else {
		if (tl_ns_lookup(ns, a, len) != NULL)
			return TADDRBUSY;
		ep->addr.len = (unsigned int)len;
		memcpy(ep->addr.b, a, len);
	}
	h = hash(ep->addr.b, ep->addr.len);
	ep->hnext = ns->bound[h];
	ns->bound[h] = ep;
	ep->owner = true;
	return 0;
}

void tl_ns_unbind(struct tl_ep *ep)
{
	struct tl_ep **pp;

	if (ep->owner) {
		pp = &ep->ns->bound[hash(ep->addr.b, ep->addr.len)];
		for (; *pp != NULL; pp = &(*pp)->hnext)
			if (*pp == ep) {
				*pp = ep->hnext;
				break;
			}
		ep->hnext = NULL;
		ep->owner = false;
	}
	ep->addr.len = 0;
}

struct tl_ep *tl_ns_acceptor(struct tl_ns *ns, t_uscalar_t id, int *tli)
{
	struct tl_ep *ep;

	if ((id & 3) != ns->index) {
		*tli = (id & 3) != 0 ? TPROVMISMATCH : TBADF;
		return NULL;
	}
	for (ep = ns->all; ep != NULL; ep = ep->anext)
		if (ep->token == id)
			return ep;
	*tli = TBADF;
	return NULL;
}

/* ---- delivery and flow control ---- */

static void unwait(struct tl_ep *ep)
{
	struct tl_ep **pp;

	if (ep->wait_on == NULL)
		return;
	for (pp = &ep->wait_on->waiters; *pp != NULL; pp = &(*pp)->wait_next)
		if (*pp == ep) {
			*pp = ep->wait_next;
			break;
		}
	ep->wait_on = NULL;
	ep->wait_next = NULL;
}

void tl_unwait(struct tl_ep *ep)
{
	unwait(ep);
}

bool tl_can_deliver(struct tl_ep *from, struct tl_ep *to, unsigned char band)
{
	if (bcanput(to->rq, band))
		return true;
	if (from->wait_on != to) {
		unwait(from);
		from->wait_on = to;
		from->wait_next = to->waiters;
		to->waiters = from;
	}
	return false;
}

bool tl_has_room(struct tl_ep *to)
{
	return bcanput(to->rq, 0);
}

void tl_deliver(struct tl_ep *to, mblk_t *mp)
{
	if (!putq(to->rq, mp))
		freemsg(mp);	/* no band structure: cannot happen, the
				   bands used are made at open */
}

void tl_wake_senders(struct tl_ep *to)
{
	struct tl_ep *w;

	while ((w = to->waiters) != NULL) {
		to->waiters = w->wait_next;
		w->wait_on = NULL;
		w->wait_next = NULL;
		qenable(w->wq);
	}
}
