/*
 * inet.c -- the TPI part shared by the Internet transport providers:
 * /dev/inet/udp, /dev/inet/tcp, /dev/inet/rawip (XTI over sockets) and
 * /dev/udp, /dev/tcp, /dev/rawip (batching).  See inet.h for the whole
 * design.
 *
 * How this works
 * --------------
 * Every open is an endpoint with a kernel socket (IPv4 until a bind says
 * IPv6).  The write put procedure checks every primitive (tpi_check, the
 * TPI state table) and answers the local ones here: T_INFO_REQ,
 * T_ADDR_REQ, T_CAPABILITY_REQ, T_BIND_REQ (bind(2), port 0 reported as
 * the port the kernel chose), T_UNBIND_REQ (a fresh socket: a bound
 * socket cannot be unbound), T_OPTMGMT_REQ (topt_mgmt over inet_opt.c),
 * M_FLUSH, and the INET_IOC_STATS ioctl.  Everything else goes to the
 * protocol (ops->req).  Answers go up through the read queue (inet_up),
 * so they stay in order with indications queued before them.
 *
 * Raw IP: the IP protocol of a /dev/rawip endpoint is the port field of
 * the address it binds (sin_port / sin6_port, in network byte order like
 * a port; 0 means IPPROTO_RAW, which can only send).  The socket is made
 * again for that protocol.
 *
 * Lock order: inet_tok_lock (the ACCEPTOR_id list), then an endpoint's
 * lock, then the executive's queue locks (inside putq, flushq...).
 *
 * The numbers (T_INFO_ACK):
 *
 *		TSDU	ETSDU	CDATA	DDATA	ADDR	TIDU	SERV_type
 *   udp	65507	-2	-2	-2	28	65507	T_CLTS
 *   rawip	65507	-2	-2	-2	28	65507	T_CLTS
 *   tcp	0	-1	-2	-2	28	65536	T_COTS_ORD
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/cmn_err.h>
#include <sys/strconf.h>
#include <sys/inet_stats.h>

#include "../drivers/drvutil.h"
#include "inet.h"
#include "tpi.h"

#define INET_RHIWAT	65536
#define INET_RLOWAT	16384
#define INET_WHIWAT	65536
#define INET_WLOWAT	16384
#define INET_MAXQLEN	128

static pthread_mutex_t inet_tok_lock = PTHREAD_MUTEX_INITIALIZER;
static struct inet_ep *inet_tok_list;		/* inet_tok_lock */
static t_uscalar_t inet_tok_next = 1;		/* inet_tok_lock */
static unsigned int inet_minor_next = 1;	/* atomic */

/* How long an endpoint of the batching family must have been idle for a
 * lone message to go out at once: STREAMS_INET_IDLE_NS, else the
 * protocol's default dflt (tests make it huge to send everything through
 * the batches, or 0 to send nothing through them).  Read once. */
uint64_t inet_idle_ns(uint64_t dflt)
{
	static uint64_t v = UINT64_MAX;
	uint64_t x = __atomic_load_n(&v, __ATOMIC_RELAXED);

	if (x == UINT64_MAX) {
		const char *e = getenv("STREAMS_INET_IDLE_NS");

		x = e != NULL && *e != '\0' ? strtoull(e, NULL, 10) :
		    UINT64_MAX - 1;
		__atomic_store_n(&v, x, __ATOMIC_RELAXED);
	}
	return x == UINT64_MAX - 1 ? dflt : x;
}

/* ---- sockets and addresses ---- */

static int new_socket(const struct inet_proto *pr, int family, int proto)
{
	int fd = socket(family, pr->type | SOCK_NONBLOCK | SOCK_CLOEXEC,
			proto);

	if (fd < 0)
		return -errno;
	if (family == AF_INET6) {
		int one = 1;	/* IPv4 goes through IPv4 endpoints */

		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
				 sizeof(one));
	}
	return fd;
}

/* Move ep's event source to socket fd (lock held); an accepted one
 * (listener_set: the options its listener negotiated) loses those of
 * them ep did not negotiate. */
static int switch_socket(struct inet_ep *ep, int fd, int family,
			 uint64_t listener_set)
{
	int old = ep->ke.ke_fd, err;

	strlock(&ep->rx_lock);
	strlock(&ep->tx_lock);
	str_kev_detach(&ep->ke);
	ep->ke.ke_fd = fd;
	ep->family = family;
	err = -str_kev_attach(&ep->ke);
	if (err != 0) {
		ep->ke.ke_fd = old;
		(void)str_kev_attach(&ep->ke);
	} else {
		inet_opt_reapply(ep);
		if (listener_set != 0 && old >= 0)
			inet_opt_unlisten(ep, old, listener_set);
		close(old);
	}
	strunlock(&ep->tx_lock);
	strunlock(&ep->rx_lock);
	/* (a datagram flush that found tx_lock taken meanwhile left its work
	 * to the holder, flush_again: the caller sends it once the new
	 * socket is bound, inet_dg.c) */
	return err;
}

int inet_socket_renew(struct inet_ep *ep, int family)
{
	int fd = new_socket(ep->pr, family, ep->raw_proto), err;

	if (fd < 0)
		return -fd;
	if ((err = switch_socket(ep, fd, family, 0)) != 0)
		close(fd);
	return err;
}

int inet_socket_adopt(struct inet_ep *ep, int fd, int family,
		      uint64_t listener_set)
{
	return switch_socket(ep, fd, family, listener_set);
}

void inet_socket_unconnect(struct inet_ep *ep)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };

	strlock(&ep->rx_lock);
	strlock(&ep->tx_lock);
	str_kev_detach(&ep->ke);
	(void)connect(ep->ke.ke_fd, &sa, sizeof(sa));
	(void)str_kev_attach(&ep->ke);
	strunlock(&ep->tx_lock);
	strunlock(&ep->rx_lock);
}

socklen_t inet_addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

int inet_addr_ok(const struct inet_ep *ep, const void *a, t_scalar_t len,
		 bool same_family)
{
	sa_family_t fam;

	if (a == NULL || len < (t_scalar_t)sizeof(sa_family_t))
		return TBADADDR;
	memcpy(&fam, a, sizeof(fam));
	if (!((fam == AF_INET && len == sizeof(struct sockaddr_in)) ||
	      (fam == AF_INET6 && len == sizeof(struct sockaddr_in6))))
		return TBADADDR;
	if (same_family && fam != ep->family)
		return TBADADDR;
	return 0;
}

int inet_addr_in(const struct inet_ep *ep, const void *a, t_scalar_t len,
		 bool same_family, struct sockaddr_storage *ss,
		 socklen_t *sl)
{
	int err = inet_addr_ok(ep, a, len, same_family);

	if (err != 0)
		return err;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, a, (size_t)len);
	*sl = (socklen_t)len;
	return 0;
}

int inet_tli_error(int err)
{
	switch (err) {
	case EADDRINUSE:
		return TADDRBUSY;
	case EACCES:
	case EPERM:
		return TACCES;
	case EADDRNOTAVAIL:
		return TNOADDR;
	case EAFNOSUPPORT:
	case EINVAL:
		return TBADADDR;
	default:
		return TSYSERR;
	}
}

/* ---- the ACCEPTOR_id list ---- */

void inet_token_hold(void)
{
	pthread_mutex_lock(&inet_tok_lock);
}

void inet_token_rele(void)
{
	pthread_mutex_unlock(&inet_tok_lock);
}

struct inet_ep *inet_acceptor(const struct inet_proto *pr, t_uscalar_t id,
			      int *tli)
{
	for (struct inet_ep *e = inet_tok_list; e != NULL; e = e->tnext)
		if (e->token == id) {
			if (e->pr != pr) {
				*tli = TPROVMISMATCH;
				return NULL;
			}
			return e;
		}
	*tli = TBADF;
	return NULL;
}

int inet_assoc_opts(struct inet_ep *ep, const unsigned char *opt,
		    size_t len)
{
	int err;

	if (len == 0)
		return 0;
	inet_lock(ep);
	err = topt_assoc(ep->pr->opts, ep, opt, len, ep->priv);
	inet_unlock(ep);
	return err;
}

/* ---- local primitives ---- */

static void fill_info(const struct inet_ep *ep, struct T_info_ack *ia)
{
	const struct inet_proto *pr = ep->pr;

	ia->PRIM_type = T_INFO_ACK;
	ia->TSDU_size = pr->tsdu;
	ia->ETSDU_size = pr->etsdu;
	ia->CDATA_size = pr->cdata;
	ia->DDATA_size = pr->ddata;
	ia->ADDR_size = INET_ADDR_SIZE;
	ia->OPT_size = (t_scalar_t)topt_size(pr->opts);
	ia->TIDU_size = pr->tidu;
	ia->SERV_type = pr->serv_type;
	ia->CURRENT_state = ep->state;
	ia->PROVIDER_flag = pr->flags;
}

static void info_req(struct inet_ep *ep, mblk_t *mp)
{
	mblk_t *bp = tpi_reuse(mp, sizeof(struct T_info_ack), M_PCPROTO);
	struct T_info_ack ia;

	if (bp == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	inet_lock(ep);
	fill_info(ep, &ia);
	inet_unlock(ep);
	memcpy(bp->b_rptr, &ia, sizeof(ia));
	inet_up(ep, bp);
}

static void addr_req(struct inet_ep *ep, mblk_t *mp)
{
	mblk_t *bp = tpi_proto(TPI_ADDR_ACK_SIZE(INET_ADDR_SIZE), M_PCPROTO);

	if (bp == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	freemsg(mp);
	inet_lock(ep);
	tpi_addr_ack_fill(bp, &ep->laddr,
			  ep->state != TS_UNBND ? ep->laddrlen : 0,
			  &ep->raddr, ep->raddrlen);
	inet_unlock(ep);
	inet_up(ep, bp);
}

static void capability_req(struct inet_ep *ep, mblk_t *mp)
{
	t_uscalar_t can = TC1_INFO;
	struct T_info_ack ia;
	mblk_t *bp;

	if (ep->pr->serv_type != T_CLTS)
		can |= TC1_ACCEPTOR_ID;
	inet_lock(ep);
	fill_info(ep, &ia);
	inet_unlock(ep);
	if ((bp = tpi_capability_ack(mp, can, &ia, ep->token)) == NULL) {
		tpi_fatal(ep->wq, mp, ENOMEM);
		return;
	}
	inet_up(ep, bp);
}

/* The protocol a /dev/rawip bind asks for (see the top). */
in_port_t *inet_port(struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ?
	       &((struct sockaddr_in6 *)ss)->sin6_port :
	       &((struct sockaddr_in *)ss)->sin_port;
}

static int raw_proto_of(struct sockaddr_storage *ss)
{
	int proto = ntohs(*inet_port(ss));

	return proto == 0 ? IPPROTO_RAW : proto;
}

/* bind(2) ep's socket to ss (lock held): 0 or a TLI error. */
static int do_bind(struct inet_ep *ep, struct sockaddr_storage *ss,
		   socklen_t sl, int *uerr)
{
	int err;

	/* (an IP protocol is a byte: no such protocol, no such address) */
	if (ep->pr->kind == IK_RAW && raw_proto_of(ss) > 255)
		return TBADADDR;
	if (ss->ss_family != ep->family ||
	    (ep->pr->kind == IK_RAW && raw_proto_of(ss) != ep->raw_proto)) {
		if (ep->pr->kind == IK_RAW)
			ep->raw_proto = raw_proto_of(ss);
		if ((err = inet_socket_renew(ep, ss->ss_family)) != 0) {
			*uerr = err;
			return err == EAFNOSUPPORT ? TBADADDR : TSYSERR;
		}
	}
	if (ep->pr->kind == IK_RAW) {
		/* the port field named the protocol; bind(2) wants 0 */
		*inet_port(ss) = 0;
	}
	if (bind(ep->ke.ke_fd, (struct sockaddr *)ss, sl) < 0) {
		*uerr = errno;
		return inet_tli_error(errno);
	}
	ep->laddrlen = sizeof(ep->laddr);
	if (getsockname(ep->ke.ke_fd, (struct sockaddr *)&ep->laddr,
			&ep->laddrlen) < 0) {
		*uerr = errno;
		return TSYSERR;
	}
	if (ep->pr->kind == IK_RAW)
		*inet_port(&ep->laddr) = htons((uint16_t)ep->raw_proto);
	return 0;
}

static void bind_req(struct inet_ep *ep, mblk_t *mp)
{
	struct T_bind_req r;
	struct T_bind_ack a = { T_BIND_ACK, 0, 0, 0 };
	struct sockaddr_storage ss;
	socklen_t sl;
	size_t off = sizeof(a);
	mblk_t *bp;
	int err, uerr = 0;

	memcpy(&r, mp->b_rptr, sizeof(r));
	if (r.ADDR_length == 0) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &any, sizeof(any));
		sl = sizeof(any);
	} else if ((err = inet_addr_in(ep, tpi_region(mp, r.ADDR_offset,
						      r.ADDR_length),
				       r.ADDR_length, false, &ss, &sl)) != 0) {
		inet_error_ack(ep, mp, T_BIND_REQ, err, 0);
		return;
	}
	bp = tpi_proto(sizeof(a) + INET_ADDR_SIZE + 4, M_PCPROTO);
	if (bp == NULL) {
		inet_error_ack(ep, mp, T_BIND_REQ, TSYSERR, ENOMEM);
		return;
	}
	inet_lock(ep);
	if (ep->state != TS_UNBND) {
		inet_unlock(ep);
		freemsg(bp);
		inet_error_ack(ep, mp, T_BIND_REQ, TOUTSTATE, 0);
		return;
	}
	if ((err = do_bind(ep, &ss, sl, &uerr)) == 0) {
		ep->qlen = 0;
		if (ep->pr->serv_type != T_CLTS)
			ep->qlen = r.CONIND_number > INET_MAXQLEN ?
				   INET_MAXQLEN : r.CONIND_number;
		ep->state = TS_IDLE;
		if (ep->pr->ops->bound != NULL &&
		    (err = ep->pr->ops->bound(ep, &uerr)) != 0) {
			ep->state = TS_UNBND;
			ep->laddrlen = 0;
			ep->qlen = 0;
			(void)inet_socket_renew(ep, ep->family);
		}
	} else {
		/* a socket that failed to bind may be half-bound (raw):
		 * start again clean */
		ep->laddrlen = 0;
	}
	if (err != 0) {
		inet_unlock(ep);
		freemsg(bp);
		inet_error_ack(ep, mp, T_BIND_REQ, err, uerr);
		return;
	}
	a.CONIND_number = (t_scalar_t)ep->qlen;
	a.ADDR_length = (t_scalar_t)ep->laddrlen;
	a.ADDR_offset = tpi_put_bytes(bp, &off, &ep->laddr, ep->laddrlen);
	inet_unlock(ep);
	memcpy(bp->b_rptr, &a, sizeof(a));
	freemsg(mp);
	inet_up(ep, bp);
}

static void unbind_req(struct inet_ep *ep, mblk_t *mp)
{
	mblk_t *fl = tpi_proto(1, M_FLUSH);
	int err;

	if (fl == NULL) {
		inet_error_ack(ep, mp, T_UNBIND_REQ, TSYSERR, ENOMEM);
		return;
	}
	fl->b_rptr[0] = FLUSHRW;
	inet_lock(ep);
	if (ep->state != TS_IDLE) {
		inet_unlock(ep);
		freemsg(fl);
		inet_error_ack(ep, mp, T_UNBIND_REQ, TOUTSTATE, 0);
		return;
	}
	if (ep->pr->ops->unbound != NULL)
		ep->pr->ops->unbound(ep);
	/* unbound before the socket changes (under tx_lock): a datagram
	 * a racing writer queued is dropped, not sent from a port the
	 * kernel would pick for the new socket (inet_dg.c) */
	__atomic_store_n(&ep->state, TS_UNBND, __ATOMIC_RELEASE);
	if ((err = inet_socket_renew(ep, ep->family)) != 0) {
		__atomic_store_n(&ep->state, TS_IDLE, __ATOMIC_RELEASE);
		inet_unlock(ep);
		freemsg(fl);
		inet_error_ack(ep, mp, T_UNBIND_REQ, TSYSERR, err);
		return;
	}
	ep->laddrlen = 0;
	ep->raddrlen = 0;
	ep->qlen = 0;
	flushq(ep->wq, FLUSHALL);
	flushq(ep->rq, FLUSHDATA);
	inet_up(ep, fl);
	inet_unlock(ep);
	inet_ok_ack(ep, mp, T_UNBIND_REQ);
}

static void optmgmt_req(struct inet_ep *ep, mblk_t *mp)
{
	struct T_optmgmt_req r;
	mblk_t *out = NULL, *bp;
	t_scalar_t result = 0;
	int err, uerr = 0;

	memcpy(&r, mp->b_rptr, sizeof(r));
	inet_lock(ep);
	err = topt_mgmt(ep->pr->opts, ep, r.MGMT_flags,
			tpi_region(mp, r.OPT_offset, r.OPT_length),
			(size_t)r.OPT_length, ep->priv, &out, &result, &uerr);
	inet_unlock(ep);
	if (err != 0) {
		inet_error_ack(ep, mp, T_OPTMGMT_REQ, err, uerr);
		return;
	}
	if ((bp = tpi_optmgmt_ack(out, result)) == NULL) {
		inet_error_ack(ep, mp, T_OPTMGMT_REQ, TSYSERR, ENOMEM);
		return;
	}
	freemsg(mp);
	inet_up(ep, bp);
}

static void proto_req(struct inet_ep *ep, mblk_t *mp)
{
	t_scalar_t prim;
	int err, uerr;

	if ((err = tpi_check(mp, &prim, &uerr)) != 0) {
		tpi_reject(ep->wq, mp, prim, err, uerr);
		return;
	}
	switch (prim) {
	case T_INFO_REQ:
		info_req(ep, mp);
		break;
	case T_ADDR_REQ:
		addr_req(ep, mp);
		break;
	case T_CAPABILITY_REQ:
		capability_req(ep, mp);
		break;
	case T_BIND_REQ:
		bind_req(ep, mp);
		break;
	case T_UNBIND_REQ:
		unbind_req(ep, mp);
		break;
	case T_OPTMGMT_REQ:
		optmgmt_req(ep, mp);
		break;
	case T_UNITDATA_REQ:
	case T_CONN_REQ:
	case T_CONN_RES:
	case T_DISCON_REQ:
	case T_DATA_REQ:
	case T_EXDATA_REQ:
	case T_OPTDATA_REQ:
	case T_ORDREL_REQ:
		ep->pr->ops->req(ep, mp, prim);
		break;
	default:
		/* an indication or acknowledgement sent downstream */
		tpi_reject(ep->wq, mp, prim, TNOTSUPPORT, 0);
		break;
	}
}

/* ---- the write side ---- */

static void do_flush(struct inet_ep *ep, mblk_t *mp)
{
	unsigned char how;

	if (MBLKL(mp) < 1) {
		freemsg(mp);
		return;
	}
	how = mp->b_rptr[0];
	inet_lock(ep);
	if (how & FLUSHW) {
		if ((how & FLUSHBAND) && MBLKL(mp) >= 2)
			flushband(ep->wq, mp->b_rptr[1], FLUSHDATA);
		else
			flushq(ep->wq, FLUSHDATA);
		if (ep->pr->ops->wflush != NULL)
			ep->pr->ops->wflush(ep);
	}
	if (how & FLUSHR) {
		if ((how & FLUSHBAND) && MBLKL(mp) >= 2)
			flushband(ep->rq, mp->b_rptr[1], FLUSHDATA);
		else
			flushq(ep->rq, FLUSHDATA);
	}
	inet_unlock(ep);
	if (how & FLUSHR) {
		mp->b_rptr[0] &= ~FLUSHW;
		qreply(ep->wq, mp);
	} else {
		freemsg(mp);
	}
}

static void do_ioctl(struct inet_ep *ep, mblk_t *mp)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;
	struct inet_stats st;
	mblk_t *bp;

	if (MBLKL(mp) < (long)sizeof(*ioc) || ioc->ioc_cmd != INET_IOC_STATS) {
		drv_nak(ep->wq, mp, EINVAL);
		return;
	}
	if (ioc->ioc_count == TRANSPARENT ||
	    ioc->ioc_count < (int)INET_STATS_SIZE_V1) {
		drv_nak(ep->wq, mp, EINVAL);
		return;
	}
	size_t len = (size_t)ioc->ioc_count < sizeof(st)
			     ? (size_t)ioc->ioc_count : sizeof(st);
	if ((bp = allocb(sizeof(st), BPRI_MED)) == NULL) {
		drv_nak(ep->wq, mp, ENOMEM);
		return;
	}
#define LD(f) __atomic_load_n(&ep->cnt.f, __ATOMIC_RELAXED)
	st.tx_msgs = LD(tx_msgs) + LD(tx_own_msgs);
	st.tx_bytes = LD(tx_bytes) + LD(tx_own_bytes);
	st.tx_sent = LD(tx_sent);
	st.tx_calls = LD(tx_calls);
	st.tx_drops = LD(tx_drops);
	st.rx_msgs = LD(rx_msgs);
	st.rx_bytes = LD(rx_bytes);
	st.rx_calls = LD(rx_calls);
	st.rx_drops = LD(rx_drops);
	st.rx_overflows = LD(rx_overflows);
#undef LD
	memcpy(bp->b_wptr, &st, len);
	bp->b_wptr += len;
	freemsg(mp->b_cont);
	mp->b_cont = bp;
	mp->b_datap->db_type = M_IOCACK;
	ioc->ioc_count = (int)len;
	ioc->ioc_rval = 0;
	ioc->ioc_error = 0;
	qreply(ep->wq, mp);
}

static int inet_wput(queue_t *q, mblk_t *mp)
{
	struct inet_ep *ep = q->q_ptr;

	switch (mp->b_datap->db_type) {
	case M_DATA:
		ep->pr->ops->req(ep, mp, -1);
		break;
	case M_PROTO:
	case M_PCPROTO:
		proto_req(ep, mp);
		break;
	case M_FLUSH:
		do_flush(ep, mp);
		break;
	case M_IOCTL:
		do_ioctl(ep, mp);
		break;
	default:
		freemsg(mp);
		break;
	}
	return 0;
}

static int inet_wsrv(queue_t *q)
{
	struct inet_ep *ep = q->q_ptr;

	ep->pr->ops->wsrv(ep);
	return 0;
}

/* ---- the read side ---- */

static int inet_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);		/* nothing is below a driver */
	return 0;
}

/* Pass up what the stream head takes, then let the protocol pull more
 * from its socket. */
static int inet_rsrv(queue_t *q)
{
	struct inet_ep *ep = q->q_ptr;
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(q, mp->b_band)) {
			putbq(q, mp);
			return 0;
		}
		putnext(q, mp);
	}
	ep->pr->ops->rsrv(ep);
	return 0;
}

static void kev_run(struct strkev *ke, unsigned revents)
{
	struct inet_ep *ep = (struct inet_ep *)ke;

	ep->pr->ops->run(ep, revents);
}

/* ---- open and close ---- */

static int inet_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		     cred_t *cr)
{
	const struct inet_proto *pr;
	struct inet_ep *ep;
	unsigned int m;
	int fd, err;

	if (q->q_ptr != NULL)
		return 0;		/* a reopen of the same endpoint */
	pr = inet_proto_of(q);
	/* aligned as its counters' cache lines are */
	if ((ep = aligned_alloc(_Alignof(struct inet_ep),
				sizeof(*ep))) == NULL)
		return ENOMEM;
	memset(ep, 0, sizeof(*ep));
	ep->pr = pr;
	ep->raw_proto = pr->ipproto;
	if ((fd = new_socket(pr, AF_INET, pr->ipproto)) < 0) {
		free(ep);
		return -fd;
	}
	ep->lock = STRLOCK_INIT;
	ep->rx_lock = STRLOCK_INIT;
	ep->tx_lock = STRLOCK_INIT;
	ep->ke.ke_fd = fd;
	ep->ke.ke_rq = q;
	ep->ke.ke_run = kev_run;
	ep->family = AF_INET;
	ep->rq = q;
	ep->wq = WR(q);
	ep->priv = cr != NULL && cr->cr_uid == 0;
	ep->state = TS_UNBND;
	if ((err = inet_opt_init(ep)) != 0)
		goto fail;
	/* band 1 (expedited data) exists from the start */
	if (strqset(q, QHIWAT, 1, INET_RHIWAT) != 0 ||
	    strqset(WR(q), QHIWAT, 1, INET_WHIWAT) != 0) {
		err = ENOMEM;
		goto fail;
	}
	q->q_ptr = WR(q)->q_ptr = ep;
	/* the protocol's state first: the I/O thread may run ke_run as
	 * soon as the source is attached */
	if (pr->ops->open != NULL && (err = pr->ops->open(ep)) != 0) {
		q->q_ptr = WR(q)->q_ptr = NULL;
		goto fail;
	}
	if ((err = -str_kev_attach(&ep->ke)) != 0) {
		if (pr->ops->close != NULL)
			pr->ops->close(ep);
		q->q_ptr = WR(q)->q_ptr = NULL;
		goto fail;
	}
	inet_token_hold();
	ep->token = inet_tok_next++;
	if (inet_tok_next == 0)
		inet_tok_next = 1;
	ep->tnext = inet_tok_list;
	inet_tok_list = ep;
	inet_token_rele();
	__atomic_store_n(&q->q_stream->sd_kev, &ep->ke, __ATOMIC_RELEASE);
	m = __atomic_fetch_add(&inet_minor_next, 1, __ATOMIC_RELAXED);
	*devp = makedevice(getmajor(*devp), m & 0xfffff);
	return 0;
fail:
	inet_opt_fini(ep);
	close(ep->ke.ke_fd);
	free(ep);
	return err;
}

static int inet_close(queue_t *q, int oflag, cred_t *cr)
{
	struct inet_ep *ep = q->q_ptr;

	__atomic_store_n(&q->q_stream->sd_kev, NULL, __ATOMIC_RELEASE);
	inet_token_hold();
	for (struct inet_ep **pp = &inet_tok_list; *pp != NULL;
	     pp = &(*pp)->tnext)
		if (*pp == ep) {
			*pp = ep->tnext;
			break;
		}
	inet_token_rele();
	str_kev_detach(&ep->ke);
	if (ep->pr->ops->close != NULL)
		ep->pr->ops->close(ep);
	close(ep->ke.ke_fd);
	q->q_ptr = WR(q)->q_ptr = NULL;
	inet_opt_fini(ep);
	free(ep);
	return 0;
}

/* ---- the six devices ---- */

/* One protocol's numbers, for both families (see the table at the top). */
#define UDP(name, dev, fast, id)					\
	{ name, dev, IK_UDP, fast, SOCK_DGRAM, IPPROTO_UDP, T_CLTS,	\
	  65507, T_INVALID, T_INVALID, T_INVALID, 65507,		\
	  SENDZERO | XPG4_1, &inet_dg_ops, &inet_udp_opts, id }
#define TCP(name, dev, fast, id)					\
	{ name, dev, IK_TCP, fast, SOCK_STREAM, IPPROTO_TCP, T_COTS_ORD,	\
	  0, T_INFINITE, T_INVALID, T_INVALID, 65536,			\
	  XPG4_1, &inet_tcp_ops, &inet_tcp_opts, id }
#define RAW(name, dev, fast, id)					\
	{ name, dev, IK_RAW, fast, SOCK_RAW, IPPROTO_RAW, T_CLTS,	\
	  65507, T_INVALID, T_INVALID, T_INVALID, 65507,		\
	  SENDZERO | XPG4_1, &inet_dg_ops, &inet_raw_opts, id }

static const struct inet_proto inet_protos[] = {
	UDP("inet_udp", "/dev/inet/udp", false, 2201),
	TCP("inet_tcp", "/dev/inet/tcp", false, 2202),
	RAW("inet_rawip", "/dev/inet/rawip", false, 2203),
	UDP("udp", "/dev/udp", true, 2211),
	TCP("tcp", "/dev/tcp", true, 2212),
	RAW("rawip", "/dev/rawip", true, 2213),
};
#define NPROTO (sizeof(inet_protos) / sizeof(inet_protos[0]))

static struct module_info inet_rminfo[NPROTO], inet_wminfo[NPROTO];
static struct qinit inet_rinit[NPROTO], inet_winit[NPROTO];
static struct streamtab inet_tab[NPROTO];
static struct cdevsw inet_cdev[NPROTO];

const struct inet_proto *inet_proto_of(queue_t *q)
{
	size_t i = (size_t)(q->q_qinfo - inet_rinit);

	return &inet_protos[i < NPROTO ? i : 0];
}

/* Called by strdrv_builtin_register(). */
void inet_register(void)
{
	for (size_t i = 0; i < NPROTO; i++) {
		const struct inet_proto *pr = &inet_protos[i];

		inet_rminfo[i] = (struct module_info){
			pr->id, (char *)pr->name, 0, INFPSZ, INET_RHIWAT,
			INET_RLOWAT };
		inet_wminfo[i] = (struct module_info){
			pr->id, (char *)pr->name, 0, INFPSZ, INET_WHIWAT,
			INET_WLOWAT };
		inet_rinit[i] = (struct qinit){ inet_rput, inet_rsrv,
			inet_open, inet_close, NULL, &inet_rminfo[i], NULL };
		inet_winit[i] = (struct qinit){ inet_wput, inet_wsrv, NULL,
			NULL, NULL, &inet_wminfo[i], NULL };
		inet_tab[i] = (struct streamtab){ &inet_rinit[i],
			&inet_winit[i], NULL, NULL };
		inet_cdev[i] = (struct cdevsw){ .d_name = (char *)pr->name,
			.d_str = &inet_tab[i], .d_flag = D_MP };
		if (register_strdev(&inet_cdev[i], 0) < 0 ||
		    strdev_alias(pr->dev, pr->name, 1) < 0)
			cmn_err(CE_WARN, "inet: cannot register %s", pr->dev);
	}
}
