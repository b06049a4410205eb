/*
 * timod.c -- the transport interface module (timod(7M)).
 *
 * How this works
 * --------------
 * Pushed on a transport stream, timod turns the TI_* ioctls of
 * <sys/timod.h> into TPI primitives and the provider's answers back into
 * the ioctl's result, so that a TLI/XTI library can do a request and wait
 * for its acknowledgement in one ioctl(I_STR) call.
 *
 * Down (write put procedure).  A TI_* ioctl arrives as M_IOCTL from I_STR
 * with the TPI request as its data.  timod checks that the request is the
 * primitive the ioctl stands for and is at least as long as its structure
 * (else M_IOCNAK EINVAL), trims what follows the structure and the
 * regions it names (the caller's buffer may be larger than the request),
 * makes it M_PROTO or
 * M_PCPROTO as the TPI says for that primitive and sends it down.  The
 * M_IOCTL block itself is kept until the answer comes.  TI_GETMYNAME and
 * TI_GETPEERNAME send a T_ADDR_REQ (whatever their data), TI_GETADDRS
 * the caller's, TI_SYNC a T_INFO_REQ.  A request whose regions point
 * outside it is sent as it is: the provider's T_ERROR_ACK (TBADADDR,
 * TBADOPT) is the answer.
 * TRANSPARENT TI_* ioctls and every other ioctl (TI_SETMYNAME and
 * TI_SETPEERNAME among them: providers answer those themselves) pass
 * down unchanged.  Every message that needs memory to be built is
 * allocated here, before anything is sent, so a shortage is answered
 * with M_IOCNAK ENOMEM while nothing has happened; answering on the read
 * side never allocates (except copyb of an ack whose block is shared,
 * which falls back to leaving its type).
 *
 * Up (read put procedure).  While an ioctl is outstanding, the answer to
 * it is the ack it expects (T_INFO_ACK, T_BIND_ACK, ...; T_OK_ACK naming
 * T_UNBIND_REQ), or a T_ERROR_ACK naming its request.  The ack becomes
 * the data of an M_IOCACK (TI_GETMYNAME/TI_GETPEERNAME: the address bytes
 * only, ENOTCONN when there is no remote address; TI_SYNC: a struct
 * ti_sync_ack); a T_ERROR_ACK becomes an M_IOCACK with ioc_rval
 * TI_ERR(TLI_error, UNIX_error) and no data.  An answer shorter than its
 * structure, with regions outside it, or a T_ERROR_ACK with errors out of
 * range, fails the ioctl with EPROTO, as does one over 64 KiB (the head
 * copies the whole answer to the caller's buffer, which must hold the
 * largest: libxti's buffers are 64 KiB).  Every other message passes
 * untouched, in order, both ways: timod has no queues of its own (no
 * service procedures), so flow control is the provider's and the head's.
 *
 * Late answers.  The stream head runs one ioctl at a time; a TI_* ioctl
 * arriving while another is outstanding can only mean the head gave up on
 * the older one (ETIME, or a signal: the XTI library retries its queries
 * after EINTR).  The new one replaces it and the old one's expected
 * answer is remembered as stale, in a short FIFO (TM_NSTALE; beyond it
 * the oldest is forgotten).  The provider answers in order within a
 * priority (T_INFO_REQ, T_ADDR_REQ and T_CAPABILITY_REQ go down as
 * M_PCPROTO and pass normal requests sent before them), so an old
 * request's answer comes before a newer one's of its priority: an answer
 * that matches a stale entry is that late answer (the oldest such entry)
 * and is dropped -- never passed up as an ordinary message (a
 * T_BIND_ACK nobody asked for would only confuse the library's state
 * machine), even when the old and new ioctls wait for the same primitive
 * (two TI_GETINFO).  Once an answer comes, the older entries that can no
 * longer be answered go: those of its priority, and after a normal
 * request's answer the high priority ones too (stale_drop).  An upward
 * M_FLUSH that flushes the read side empties the FIFO, and the ioctl
 * outstanding then leaves no entry when replaced (what they waited for
 * may have been flushed below: a retried TI_GETINFO would otherwise have
 * its own answer taken for the late one).  An outstanding ioctl that is
 * never replaced keeps waiting; its late answer becomes an M_IOCACK the
 * head discards, since its id is no longer awaited.  Either way a caller
 * that saw ETIME must resynchronise (TI_SYNC or TI_GETINFO: the
 * provider's CURRENT_state tells what the timed-out request did).
 *
 * TI_SYNC: tsa_info is the provider's T_info_ack, tsa_qlen the
 * CONIND_number of the last T_BIND_ACK that passed (0 after a T_OK_ACK
 * of T_UNBIND_REQ), tsa_flags 0: whether expedited data waits at the
 * head is not something a module below it can tell reliably.
 *
 * Locking: D_MP, no perimeter.  tm_lock guards the outstanding ioctl;
 * tm_watch lets the read side skip the lock when no answer is due, and
 * tm_qlen is atomic.  Nothing is held across putnext.  Close runs after
 * the executive has turned the procedures off and waited, so it frees
 * without the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sys/strconf.h>
#include <sys/timod.h>

#include "../drivers/drvutil.h"
#include "../transport/tpi.h"

#define TM_NSTALE	4	/* replaced ioctls whose answers are dropped */

struct timod {
	pthread_mutex_t tm_lock;
	mblk_t *tm_ioc;		/* outstanding M_IOCTL (data sent); tm_lock */
	int tm_cmd;		/* its TI_* command; tm_lock */
	t_scalar_t tm_req;	/* the request it sent; tm_lock */
	t_scalar_t tm_ack;	/* the ack that answers it; tm_lock */
	mblk_t *tm_reply;	/* TI_SYNC: block for the ti_sync_ack; tm_lock */
	struct {
		t_scalar_t req, ack;
	} tm_stale[TM_NSTALE];	/* replaced ioctls' answers, oldest first;
				   tm_lock */
	int tm_nstale;		/* entries in tm_stale; tm_lock */
	bool tm_flushed;	/* a flush of the read side came after
				   tm_ioc went down: its answer may be gone,
				   and replacing it leaves no stale entry;
				   tm_lock */
	int tm_watch;		/* an answer may be due; written under
				   tm_lock, read without it (atomic) */
	uint32_t tm_qlen;	/* CONIND_number of the last bind; atomic */
};

/* What each TI_* ioctl sends and waits for. */
struct ti_cmd {
	int cmd;
	t_scalar_t req;		/* primitive sent down */
	t_scalar_t ack;		/* primitive that answers it */
	unsigned char type;	/* M_PROTO or M_PCPROTO (TPI) */
	unsigned char has_req;	/* the caller supplies the request */
};

static const struct ti_cmd ti_cmds[] = {
	{ TI_GETINFO, T_INFO_REQ, T_INFO_ACK, M_PCPROTO, 1 },
	{ TI_OPTMGMT, T_OPTMGMT_REQ, T_OPTMGMT_ACK, M_PROTO, 1 },
	{ TI_BIND, T_BIND_REQ, T_BIND_ACK, M_PROTO, 1 },
	{ TI_UNBIND, T_UNBIND_REQ, T_OK_ACK, M_PROTO, 1 },
	{ TI_GETMYNAME, T_ADDR_REQ, T_ADDR_ACK, M_PCPROTO, 0 },
	{ TI_GETPEERNAME, T_ADDR_REQ, T_ADDR_ACK, M_PCPROTO, 0 },
	{ TI_SYNC, T_INFO_REQ, T_INFO_ACK, M_PCPROTO, 0 },
	{ TI_GETADDRS, T_ADDR_REQ, T_ADDR_ACK, M_PCPROTO, 1 },
	{ TI_CAPABILITY, T_CAPABILITY_REQ, T_CAPABILITY_ACK, M_PCPROTO, 1 },
};

#define TSRF_ALL (TSRF_INFO_REQ | TSRF_IS_EXP_IN_RCVBUF | TSRF_QLEN_REQ)

static const struct ti_cmd *ti_find(int cmd)
{
	for (size_t i = 0; i < sizeof(ti_cmds) / sizeof(ti_cmds[0]); i++)
		if (ti_cmds[i].cmd == cmd)
			return &ti_cmds[i];
	return NULL;
}

/* Field of a primitive at byte offset at (the caller checked the size). */
static t_scalar_t tfield(const mblk_t *mp, size_t at)
{
	t_scalar_t v;

	memcpy(&v, mp->b_rptr + at, sizeof(v));
	return v;
}

static int timod_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		      cred_t *cr)
{
	struct timod *p;

	if (sflag != MODOPEN)
		return ENXIO;
	if (q->q_ptr != NULL)
		return 0;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return ENOMEM;
	pthread_mutex_init(&p->tm_lock, NULL);
	q->q_ptr = WR(q)->q_ptr = p;
	return 0;
}

static int timod_close(queue_t *q, int oflag, cred_t *cr)
{
	struct timod *p = q->q_ptr;

	if (p == NULL)
		return 0;
	if (p->tm_ioc != NULL)
		freemsg(p->tm_ioc);
	if (p->tm_reply != NULL)
		freemsg(p->tm_reply);
	pthread_mutex_destroy(&p->tm_lock);
	free(p);
	q->q_ptr = WR(q)->q_ptr = NULL;
	return 0;
}

/* ---- down: building the request ---- */

/* End of the last byte the request names (it passed tpi_check). */
static size_t req_extent(const mblk_t *mp, t_scalar_t prim)
{
	size_t end = tpi_size(prim);
	size_t lo = 0, oo = 0;

	switch (prim) {
	case T_BIND_REQ:
		lo = offsetof(struct T_bind_req, ADDR_length);
		oo = offsetof(struct T_bind_req, ADDR_offset);
		break;
	case T_OPTMGMT_REQ:
		lo = offsetof(struct T_optmgmt_req, OPT_length);
		oo = offsetof(struct T_optmgmt_req, OPT_offset);
		break;
	default:
		return end;
	}
	if (tfield(mp, lo) > 0) {
		size_t e = (size_t)tfield(mp, oo) + (size_t)tfield(mp, lo);
		if (e > end)
			end = e;
	}
	return end;
}

/*
 * The caller's request, checked and made into the primitive to send:
 * 0 with *reqp set (the ioctl's data, now detached), or an errno.
 */
static int take_request(const struct ti_cmd *c, mblk_t *ioc, mblk_t **reqp)
{
	mblk_t *d = ioc->b_cont;
	t_scalar_t prim;
	int uerr;

	if (d == NULL || msgdsize(d) < sizeof(t_scalar_t))
		return EINVAL;
	if (d->b_cont != NULL && !pullupmsg(d, -1))
		return ENOMEM;
	if (MBLKL(d) < sizeof(t_scalar_t) || tfield(d, 0) != c->req ||
	    MBLKL(d) < tpi_size(c->req))
		return EINVAL;
	if (d->b_datap->db_ref > 1) {
		mblk_t *n = copyb(d);
		if (n == NULL)
			return ENOMEM;
		freemsg(d);
		ioc->b_cont = d = n;
	}
	d->b_datap->db_type = c->type;
	if (tpi_check(d, &prim, &uerr) == 0)
		d->b_wptr = d->b_rptr + req_extent(d, prim);
	ioc->b_cont = NULL;
	*reqp = d;
	return 0;
}

/* A request built here (T_ADDR_REQ, T_INFO_REQ): the ioctl's data is
 * not needed. */
static int make_request(const struct ti_cmd *c, mblk_t *ioc, mblk_t **reqp,
			mblk_t **replyp)
{
	mblk_t *d = ioc->b_cont, *r, *reply = NULL;
	uint32_t flags;

	if (c->cmd == TI_SYNC) {
		if (d == NULL || msgdsize(d) < sizeof(flags))
			return EINVAL;
		if (d->b_cont != NULL && !pullupmsg(d, -1))
			return ENOMEM;
		memcpy(&flags, d->b_rptr, sizeof(flags));
		if (flags & ~(uint32_t)TSRF_ALL)
			return EINVAL;
		if ((reply = allocb(sizeof(struct ti_sync_ack), BPRI_HI)) == NULL)
			return ENOMEM;
	}
	if ((r = allocb(sizeof(t_scalar_t), BPRI_HI)) == NULL) {
		if (reply != NULL)
			freeb(reply);
		return ENOMEM;
	}
	r->b_datap->db_type = c->type;
	memcpy(r->b_wptr, &c->req, sizeof(c->req));
	r->b_wptr += sizeof(c->req);
	if (d != NULL) {
		freemsg(d);
		ioc->b_cont = NULL;
	}
	*reqp = r;
	*replyp = reply;
	return 0;
}

/* Remember ioc as the outstanding ioctl; one still outstanding (timed
 * out at the head) is replaced and its answer will be dropped. */
static void ti_wait(struct timod *p, const struct ti_cmd *c, mblk_t *ioc,
		    mblk_t *reply)
{
	mblk_t *old, *oldreply;

	pthread_mutex_lock(&p->tm_lock);
	old = p->tm_ioc;
	oldreply = p->tm_reply;
	if (old != NULL && !p->tm_flushed) {
		if (p->tm_nstale == TM_NSTALE) {
			memmove(&p->tm_stale[0], &p->tm_stale[1],
				sizeof(p->tm_stale[0]) * (TM_NSTALE - 1));
			p->tm_nstale--;
		}
		p->tm_stale[p->tm_nstale].req = p->tm_req;
		p->tm_stale[p->tm_nstale].ack = p->tm_ack;
		p->tm_nstale++;
	}
	p->tm_ioc = ioc;
	p->tm_flushed = false;
	p->tm_cmd = c->cmd;
	p->tm_req = c->req;
	p->tm_ack = c->ack;
	p->tm_reply = reply;
	__atomic_store_n(&p->tm_watch, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->tm_lock);
	if (old != NULL)
		freemsg(old);
	if (oldreply != NULL)
		freemsg(oldreply);
}

static void timod_ioctl(queue_t *q, mblk_t *mp)
{
	struct timod *p = q->q_ptr;
	const struct ti_cmd *c;
	struct iocblk *ioc;
	mblk_t *req = NULL, *reply = NULL;
	int err;

	if (MBLKL(mp) < sizeof(*ioc)) {
		putnext(q, mp);		/* not an ioctl we can read */
		return;
	}
	ioc = (struct iocblk *)mp->b_rptr;
	c = ti_find(ioc->ioc_cmd);
	if (c == NULL || ioc->ioc_count == TRANSPARENT) {
		putnext(q, mp);
		return;
	}
	if (c->has_req)
		err = take_request(c, mp, &req);
	else
		err = make_request(c, mp, &req, &reply);
	if (err != 0) {
		drv_nak(q, mp, err);
		return;
	}
	ti_wait(p, c, mp, reply);
	putnext(q, req);
}

static int timod_wput(queue_t *q, mblk_t *mp)
{
	switch (mp->b_datap->db_type) {
	case M_IOCTL:
		timod_ioctl(q, mp);
		return 0;
	case M_FLUSH:
		mod_flush(q, mp);
		return 0;
	default:
		putnext(q, mp);
		return 0;
	}
}

/* ---- up: answering the ioctl ---- */

#define TIMOD_ANSMAX	65536	/* bytes of an answer (STRMSGSZ) */

/* Send the outstanding ioctl's reply up from the read queue q. */
static void ioc_reply(queue_t *q, mblk_t *ioc, unsigned char type, int err,
		      int rval, mblk_t *data)
{
	struct iocblk *ib = (struct iocblk *)ioc->b_rptr;

	if (data != NULL && msgsize(data) > TIMOD_ANSMAX) {
		/* (every block: an ack whose shared block could not be
		 * copied is still M_PCPROTO, which msgdsize counts as 0) */
		/* the head copies a whole answer out (ic_len is what came
		 * back): none larger than a library's largest buffer */
		freemsg(data);
		data = NULL;
		type = M_IOCNAK;
		err = EPROTO;
	}
	ioc->b_datap->db_type = type;
	ib->ioc_error = err;
	ib->ioc_rval = type == M_IOCNAK ? -1 : rval;
	ib->ioc_count = data != NULL ? MBLKL(data) : 0;
	if (ioc->b_cont != NULL)
		freemsg(ioc->b_cont);
	ioc->b_cont = data;
	putnext(q, ioc);
}

/* T_ERROR_ACK: the ioctl's positive return value, or EPROTO when the
 * provider's errors do not fit it. */
static void error_reply(queue_t *q, mblk_t *ioc, mblk_t *ack)
{
	t_scalar_t tli, ux;

	if (MBLKL(ack) < sizeof(struct T_error_ack)) {
		ioc_reply(q, ioc, M_IOCNAK, EPROTO, 0, NULL);
		freemsg(ack);
		return;
	}
	tli = tfield(ack, offsetof(struct T_error_ack, TLI_error));
	ux = tfield(ack, offsetof(struct T_error_ack, UNIX_error));
	freemsg(ack);
	if (tli <= 0 || tli > 0xff || ux < 0 || ux > 0xff)
		ioc_reply(q, ioc, M_IOCNAK, EPROTO, 0, NULL);
	else
		ioc_reply(q, ioc, M_IOCACK, 0, TI_ERR(tli, ux), NULL);
}

/* TI_SYNC: the ti_sync_ack in the block allocated when it went down. */
static mblk_t *sync_reply(struct timod *p, mblk_t *reply, mblk_t *ack)
{
	struct ti_sync_ack sa;

	memset(&sa, 0, sizeof(sa));
	memcpy(&sa.tsa_info, ack->b_rptr, sizeof(sa.tsa_info));
	sa.tsa_qlen = __atomic_load_n(&p->tm_qlen, __ATOMIC_RELAXED);
	sa.tsa_flags = 0;
	reply->b_rptr = reply->b_wptr = reply->b_datap->db_base;
	memcpy(reply->b_wptr, &sa, sizeof(sa));
	reply->b_wptr += sizeof(sa);
	freemsg(ack);
	return reply;
}

/* TI_GETMYNAME / TI_GETPEERNAME: just the address bytes, in place.
 * NULL with *err set when there are none to give. */
static mblk_t *name_reply(int cmd, mblk_t *ack, int *err)
{
	t_scalar_t prim, len, off;
	int uerr;
	unsigned char *a;

	if (tpi_check(ack, &prim, &uerr) != 0) {
		*err = EPROTO;
		return NULL;
	}
	if (cmd == TI_GETMYNAME) {
		len = tfield(ack, offsetof(struct T_addr_ack, LOCADDR_length));
		off = tfield(ack, offsetof(struct T_addr_ack, LOCADDR_offset));
	} else {
		len = tfield(ack, offsetof(struct T_addr_ack, REMADDR_length));
		off = tfield(ack, offsetof(struct T_addr_ack, REMADDR_offset));
		if (len == 0) {
			*err = ENOTCONN;
			return NULL;
		}
	}
	a = tpi_region(ack, off, len);
	ack->b_rptr = a;
	ack->b_wptr = a + len;
	return ack;
}

/* The ack as the M_IOCACK's data: one M_DATA block. */
static mblk_t *as_data(mblk_t *d)
{
	if (d->b_cont != NULL) {
		freemsg(d->b_cont);
		d->b_cont = NULL;
	}
	if (d->b_datap->db_ref > 1) {
		mblk_t *n = copyb(d);
		if (n == NULL)
			return d;	/* shared: the head reads bytes only */
		freeb(d);
		d = n;
	}
	d->b_datap->db_type = M_DATA;
	return d;
}

static void ti_reply(queue_t *q, struct timod *p, mblk_t *ioc, int cmd,
		     mblk_t *reply, mblk_t *ack, t_scalar_t prim)
{
	mblk_t *d = ack;
	int err = 0;

	if (prim == T_ERROR_ACK) {
		if (reply != NULL)
			freemsg(reply);
		error_reply(q, ioc, ack);
		return;
	}
	t_scalar_t chk;
	int uerr;

	if (tpi_check(ack, &chk, &uerr) != 0) {
		err = EPROTO;	/* short, or a region outside it */
	} else {
		if (prim == T_INFO_ACK || prim == T_CAPABILITY_ACK ||
		    prim == T_OK_ACK) {
			/* nothing follows these structures: what a provider
			 * sends after one goes no further (the caller's
			 * buffer for the answer may be the structure's size,
			 * and the head copies all of an answer) */
			ack->b_wptr = ack->b_rptr + tpi_size(prim);
			if (ack->b_cont != NULL) {
				freemsg(ack->b_cont);
				ack->b_cont = NULL;
			}
		}
		if (cmd == TI_SYNC) {
			d = sync_reply(p, reply, ack);
			reply = NULL;
		} else if (cmd == TI_GETMYNAME || cmd == TI_GETPEERNAME) {
			d = name_reply(cmd, ack, &err);
		}
	}
	if (reply != NULL)
		freemsg(reply);
	if (err != 0) {
		freemsg(ack);
		ioc_reply(q, ioc, M_IOCNAK, err, 0, NULL);
		return;
	}
	ioc_reply(q, ioc, M_IOCACK, 0, 0, as_data(d));
}

/* Does prim (in mp) answer a request req that waits for ack? */
static bool answers(const mblk_t *mp, t_scalar_t prim, t_scalar_t req,
		    t_scalar_t ack)
{
	if (req < 0)
		return false;
	if (prim == T_ERROR_ACK)
		return MBLKL(mp) >= sizeof(struct T_error_ack) &&
		       tfield(mp, offsetof(struct T_error_ack, ERROR_prim)) ==
		       req;
	if (prim != ack)
		return false;
	if (prim == T_OK_ACK)
		return MBLKL(mp) >= sizeof(struct T_ok_ack) &&
		       tfield(mp, offsetof(struct T_ok_ack, CORRECT_prim)) ==
		       req;
	return true;
}

/* Is request req sent as M_PCPROTO (ti_cmds: TPI's choice)?  Those pass
 * M_PROTO requests sent before them. */
static bool req_hipri(t_scalar_t req)
{
	for (size_t i = 0; i < sizeof(ti_cmds) / sizeof(ti_cmds[0]); i++)
		if (ti_cmds[i].req == req)
			return ti_cmds[i].type == M_PCPROTO;
	return false;
}

/* An answer to a request of priority hipri came, older than stale entry
 * n: the entries before n that can no longer be answered go -- those of
 * its priority (a provider answers in order), and after a normal one's
 * answer the high priority ones too (sent earlier, they went ahead);
 * a normal request older than an answered high priority one may still
 * be answered.  tm_lock held. */
static void stale_drop(struct timod *p, int n, bool hipri)
{
	int k = 0;

	for (int i = 0; i < p->tm_nstale; i++) {
		if (i < n && (req_hipri(p->tm_stale[i].req) || !hipri))
			continue;
		p->tm_stale[k++] = p->tm_stale[i];
	}
	p->tm_nstale = k;
}

/* If mp answers the outstanding ioctl, answer it (or drop the late
 * answer to a replaced one) and return true; false: mp is not ours. */
static bool ti_answer(queue_t *q, struct timod *p, mblk_t *mp,
		      t_scalar_t prim)
{
	mblk_t *ioc = NULL, *reply = NULL;
	int cmd = 0;
	bool stale = false;

	pthread_mutex_lock(&p->tm_lock);
	for (int i = 0; i < p->tm_nstale; i++) {
		if (!answers(mp, prim, p->tm_stale[i].req, p->tm_stale[i].ack))
			continue;
		/* entry i is answered: it goes, with those before it that
		 * never will be (i is of its own priority) */
		stale_drop(p, i + 1, req_hipri(p->tm_stale[i].req));
		stale = true;
		break;
	}
	if (!stale && p->tm_ioc != NULL &&
	    answers(mp, prim, p->tm_req, p->tm_ack)) {
		ioc = p->tm_ioc;
		cmd = p->tm_cmd;
		reply = p->tm_reply;
		p->tm_ioc = p->tm_reply = NULL;
		stale_drop(p, p->tm_nstale, req_hipri(p->tm_req));
	}
	__atomic_store_n(&p->tm_watch, p->tm_ioc != NULL || p->tm_nstale > 0,
			 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->tm_lock);
	if (stale) {
		freemsg(mp);
		return true;
	}
	if (ioc == NULL)
		return false;
	ti_reply(q, p, ioc, cmd, reply, mp, prim);
	return true;
}

/* Remember what TI_SYNC reports from the acks that pass. */
static void ti_note(struct timod *p, const mblk_t *mp, t_scalar_t prim)
{
	if (prim == T_BIND_ACK && MBLKL(mp) >= sizeof(struct T_bind_ack)) {
		t_scalar_t n = tfield(mp, offsetof(struct T_bind_ack,
						   CONIND_number));
		__atomic_store_n(&p->tm_qlen, (uint32_t)n, __ATOMIC_RELAXED);
	} else if (prim == T_OK_ACK && MBLKL(mp) >= sizeof(struct T_ok_ack) &&
		   tfield(mp, offsetof(struct T_ok_ack, CORRECT_prim)) ==
		   T_UNBIND_REQ) {
		__atomic_store_n(&p->tm_qlen, 0, __ATOMIC_RELAXED);
	}
}

static int timod_rput(queue_t *q, mblk_t *mp)
{
	struct timod *p = q->q_ptr;
	t_scalar_t prim;

	switch (mp->b_datap->db_type) {
	case M_PROTO:
	case M_PCPROTO:
		if (MBLKL(mp) < sizeof(prim))
			break;
		prim = tfield(mp, 0);
		ti_note(p, mp, prim);
		if (__atomic_load_n(&p->tm_watch, __ATOMIC_ACQUIRE) &&
		    ti_answer(q, p, mp, prim))
			return 0;
		break;
	case M_FLUSH:
		if (MBLKL(mp) >= 1 && (mp->b_rptr[0] & FLUSHR)) {
			pthread_mutex_lock(&p->tm_lock);
			p->tm_nstale = 0;
			p->tm_flushed = p->tm_ioc != NULL;
			__atomic_store_n(&p->tm_watch, p->tm_ioc != NULL,
					 __ATOMIC_RELEASE);
			pthread_mutex_unlock(&p->tm_lock);
		}
		mod_flush(q, mp);
		return 0;
	default:
		break;
	}
	putnext(q, mp);
	return 0;
}

static struct module_info timod_minfo = { 3004, "timod", 0, INFPSZ, 65536, 16384 };
static struct qinit timod_rinit = { timod_rput, NULL, timod_open, timod_close, NULL, &timod_minfo, NULL };
static struct qinit timod_winit = { timod_wput, NULL, NULL, NULL, NULL, &timod_minfo, NULL };
static struct streamtab timod_info = { &timod_rinit, &timod_winit, NULL, NULL };

struct fmodsw timod_fmod = {
	.f_name = "timod", .f_str = &timod_info, .f_flag = D_MP,
};
