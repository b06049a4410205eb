/*
 * xti_state.c -- the XTI state tables (XNS 5.2, "State Transitions").
 *
 * One row per event, one column per state; each cell is the next state,
 * or 0 (empty box: the event is not allowed, the call fails TOUTSTATE).
 * States are stored + 1 so that 0 can mean "not allowed" (T_UNINIT is a
 * valid next state: "closed").  A function is allowed in exactly the
 * states where its event has a cell; the outstanding-indication count
 * (ocnt) chooses between accept1/2/3, snddis1/2 and rcvdis1/2/3, as the
 * tables do.
 *
 * Events (outgoing: the user's calls; incoming: what the user receives):
 *   opened bind optmgmt unbind closed
 *   connect1  t_connect in synchronous mode, success
 *   connect2  t_connect TNODATA (asynchronous) or TLOOK (disconnect)
 *   rcvconnect listen
 *   accept1   fd == resfd, ocnt == 1     accept2  fd != resfd, ocnt == 1
 *   accept3   fd != resfd, ocnt > 1
 *   snd rcv sndrel rcvrel
 *   snddis1   ocnt <= 1                  snddis2  ocnt > 1
 *   rcvdis1   ocnt <= 0   rcvdis2 ocnt == 1   rcvdis3 ocnt > 1
 *   pass_conn the connection accepted onto this endpoint (XNS 5.2 lets
 *             an unbound endpoint take one: the provider binds it)
 *   sndudata rcvudata rcvuderr (connectionless)
 */
#include "xti_impl.h"

#define S(x)	((x) + 1)	/* stored state */

static const signed char xti_table[EV_COUNT][XTI_NSTATES] = {
	/*		  UNINIT     UNBND      IDLE         OUTCON       INCON        DATAXFER      OUTREL     INREL */
	[EV_OPENED]	= { S(T_UNBND) },
	[EV_BIND]	= { 0, S(T_IDLE) },
	[EV_OPTMGMT]	= { 0, S(T_UNBND), S(T_IDLE), S(T_OUTCON), S(T_INCON), S(T_DATAXFER), S(T_OUTREL), S(T_INREL) },
	[EV_UNBIND]	= { 0, 0, S(T_UNBND) },
	[EV_CLOSED]	= { 0, S(T_UNINIT), S(T_UNINIT), S(T_UNINIT), S(T_UNINIT), S(T_UNINIT), S(T_UNINIT), S(T_UNINIT) },
	[EV_CONNECT1]	= { 0, 0, S(T_DATAXFER) },
	[EV_CONNECT2]	= { 0, 0, S(T_OUTCON) },
	[EV_RCVCONNECT]	= { 0, 0, 0, S(T_DATAXFER) },
	[EV_LISTEN]	= { 0, 0, S(T_INCON), 0, S(T_INCON) },
	[EV_ACCEPT1]	= { 0, 0, 0, 0, S(T_DATAXFER) },
	[EV_ACCEPT2]	= { 0, 0, 0, 0, S(T_IDLE) },
	[EV_ACCEPT3]	= { 0, 0, 0, 0, S(T_INCON) },
	[EV_SND]	= { 0, 0, 0, 0, 0, S(T_DATAXFER), 0, S(T_INREL) },
	[EV_RCV]	= { 0, 0, 0, 0, 0, S(T_DATAXFER), S(T_OUTREL), 0 },
	[EV_SNDDIS1]	= { 0, 0, 0, S(T_IDLE), S(T_IDLE), S(T_IDLE), S(T_IDLE), S(T_IDLE) },
	[EV_SNDDIS2]	= { 0, 0, 0, 0, S(T_INCON) },
	[EV_RCVDIS1]	= { 0, 0, 0, S(T_IDLE), 0, S(T_IDLE), S(T_IDLE), S(T_IDLE) },
	[EV_RCVDIS2]	= { 0, 0, 0, 0, S(T_IDLE) },
	[EV_RCVDIS3]	= { 0, 0, 0, 0, S(T_INCON) },
	[EV_SNDREL]	= { 0, 0, 0, 0, 0, S(T_OUTREL), 0, S(T_IDLE) },
	[EV_RCVREL]	= { 0, 0, 0, 0, 0, S(T_INREL), S(T_IDLE), 0 },
	[EV_PASSCONN]	= { 0, S(T_DATAXFER), S(T_DATAXFER) },
	[EV_SNDUDATA]	= { 0, 0, S(T_IDLE) },
	[EV_RCVUDATA]	= { 0, 0, S(T_IDLE) },
	[EV_RCVUDERR]	= { 0, 0, S(T_IDLE) },
};

int xti_next_state(int ev, int st)
{
	if (ev < 0 || ev >= EV_COUNT || st < 0 || st >= XTI_NSTATES)
		return -1;
	return xti_table[ev][st] - 1;
}

/* ep_info field by field: a T_info_ack is t_scalar_t fields only. */
#define INFO_N	(sizeof(struct T_info_ack) / sizeof(t_scalar_t))
_Static_assert(sizeof(struct T_info_ack) == INFO_N * sizeof(t_scalar_t),
	       "T_info_ack is t_scalar_t fields");

void xti_set_info(struct xti_ep *ep, const struct T_info_ack *ia)
{
	t_scalar_t *d = (t_scalar_t *)&ep->ep_info;
	const t_scalar_t *s = (const t_scalar_t *)ia;

	for (size_t i = 0; i < INFO_N; i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

/* What a send checks of ep_info, field by field (with or without
 * ep_lock: see xti_set_state). */
static void sizes_load(const struct xti_ep *ep, struct xti_sizes *sz)
{
#define LD(f)	__atomic_load_n(&ep->ep_info.f, __ATOMIC_RELAXED)
	sz->tsdu = LD(TSDU_size);
	sz->etsdu = LD(ETSDU_size);
	sz->tidu = LD(TIDU_size);
	sz->addr = LD(ADDR_size);
	sz->opt = LD(OPT_size);
	sz->pflag = LD(PROVIDER_flag);
#undef LD
}

int xti_begin_err(const struct xti_ep *ep, int need, int ev1, int ev2)
{
	int st = __atomic_load_n(&ep->ep_state, __ATOMIC_RELAXED);
	int svc = __atomic_load_n(&ep->ep_info.SERV_type, __ATOMIC_RELAXED);

	if ((need == NEED_CONN && svc == T_CLTS) ||
	    (need == NEED_CLTS && svc != T_CLTS) ||
	    (need == NEED_ORD && svc != T_COTS_ORD))
		return TNOTSUPPORT;
	if (ev1 >= 0 && !xti_ev_ok(ev1, st) &&
	    (ev2 < 0 || !xti_ev_ok(ev2, st)))
		return TOUTSTATE;
	return 0;
}

/* A start that failed with t_errno err: the caller's reference to ep
 * (cached: from xti_get_cached) goes; NULL. */
static struct xti_ep *begin_fail(struct xti_ep *ep, int err, bool cached)
{
	if (cached)
		xti_put_cached(ep);
	else
		xti_put(ep);
	xti_err(err);
	return NULL;
}

/* xti_begin_locked's checks on ep, referenced by the caller (cached:
 * with xti_get_cached): ep with ep_lock held, or NULL with the reference
 * dropped and t_errno set. */
static struct xti_ep *begin_checked(struct xti_ep *ep, int need, int ev1,
				    int ev2, bool cached)
{
	int err;

	if (ep == NULL)
		return NULL;
	pthread_mutex_lock(&ep->ep_lock);
	err = xti_begin_err(ep, need, ev1, ev2);
	if (err == 0)
		return ep;
	pthread_mutex_unlock(&ep->ep_lock);
	return begin_fail(ep, err, cached);
}

struct xti_ep *xti_begin_locked(int fd, int need, int ev1, int ev2)
{
	return begin_checked(xti_get(fd), need, ev1, ev2, false);
}

/* Nothing held (the common case): the checks and the sizes are read
 * without ep_lock (atomic loads of fields written under it with atomic
 * stores), as the lock would give them a moment later.  A held message
 * (a T_DISCON_IND, a T_UDERROR_IND) is looked at under the lock. */
struct xti_ep *xti_begin_snd(int fd, int need, int ev, int mask,
			     struct xti_sizes *sz, int *held)
{
	struct xti_ep *ep = xti_get_cached(fd);
	int err;

	if (ep == NULL)
		return NULL;
	if (!xti_held_any(ep)) {
		err = xti_begin_err(ep, need, ev, -1);
		if (err != 0)
			return begin_fail(ep, err, true);
		sizes_load(ep, sz);
		*held = 0;
		return ep;
	}
	ep = begin_checked(ep, need, ev, -1, true);
	if (ep == NULL)
		return NULL;
	sizes_load(ep, sz);
	*held = xti_held_event(ep, mask);
	pthread_mutex_unlock(&ep->ep_lock);
	return ep;
}

struct xti_ep *xti_begin(int fd, int need, int ev1, int ev2)
{
	struct xti_ep *ep = xti_begin_locked(fd, need, ev1, ev2);

	if (ep != NULL)
		pthread_mutex_unlock(&ep->ep_lock);
	return ep;
}
