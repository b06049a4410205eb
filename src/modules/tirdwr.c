/*
 * tirdwr.c -- the transport interface read/write module (tirdwr(7M)).
 *
 * How this works
 * --------------
 * Pushed on a connected transport endpoint, tirdwr lets a program use
 * plain read(2) and write(2) (and getmsg/putmsg without control parts)
 * instead of TLI/XTI calls.
 *
 * Push.  The open procedure turns the queue pair on first (so nothing can
 * slip past it afterwards), then freezes the stream and looks at what
 * already waits at the stream head: only ordinary data may be there --
 * M_DATA, T_DATA_IND (or T_OPTDATA_IND without T_ODF_EX) made of M_DATA,
 * and M_SIG, which concerns processes, not the transport.  Anything else
 * (another TPI message, high priority messages) fails the push with
 * EPROTO, as SVR4 does; the procedures are turned off again and what
 * arrived meanwhile passes on unchanged.  Otherwise the waiting data
 * primitives lose their control part and zero-length data is removed, so
 * that what a reader finds is what it would have found had tirdwr been
 * there all along.  (The stream head puts its reader's cache back on its
 * queue before a push, so nothing is hidden from this look.)
 *
 * Up (read side).  M_DATA passes, except zero-length data, which would
 * read as end of file and is dropped.  T_DATA_IND (and T_OPTDATA_IND of
 * normal data) passes as its M_DATA.  T_ORDREL_IND becomes a zero-length
 * M_DATA, the end of file, and is remembered.  T_DISCON_IND passes any
 * data it carries, then becomes M_HANGUP: writes fail with ENXIO, reads
 * return what is left, then 0.  Every other TPI message (T_EXDATA_IND,
 * T_OPTDATA_IND with T_ODF_EX, acks, malformed ones) is a protocol error:
 * M_ERROR EPROTO up, after which data and TPI messages are dropped both
 * ways (the head fails every call with EPROTO anyway).  Other message
 * types (M_FLUSH, M_SIG, M_ERROR, M_HANGUP, ioctl replies) pass.
 *
 * Down (write side).  M_DATA passes (a provider takes plain M_DATA as
 * T_DATA_REQ), zero-length data is dropped, M_PROTO/M_PCPROTO from the
 * user is a protocol error (M_ERROR EPROTO up).  Other messages pass.
 *
 * Pop and close.  If a T_ORDREL_IND was received, a T_ORDREL_REQ goes
 * down to complete the orderly release (SVR4).  If not, and no
 * T_DISCON_IND was seen, the connection is taken to be still up and a
 * T_DISCON_REQ (SEQ_number -1) goes down, so that closing the stream or
 * popping the module never leaves the remote side waiting: this is the
 * only knowledge tirdwr has, since it never asks the provider for its
 * state.  After a disconnect nothing is sent; after a protocol error the
 * same rule holds (the connection is still up at the provider; SVR4
 * sent nothing then, leaving it to the provider's close).  SVR4's
 * tirdwr sent only the T_ORDREL_REQ; the T_DISCON_REQ is this library's
 * choice.  The provider's answer to that T_DISCON_REQ (T_OK_ACK) reaches
 * whoever reads the stream after a pop.  The block that needs is
 * allocated when the module is pushed, and one spare block for an end
 * of file, hangup or error sent up when the provider's block is shared
 * and no new one can be had (renewed once memory allows): one such is
 * never lost for want of memory; an error that could not be sent at all
 * is not taken as sent (what follows still passes, and the next bad
 * message tries again).  After a protocol error, T_ORDREL_IND and
 * T_DISCON_IND are still noted for the close.
 *
 * Locking: queue-pair perimeter (D_MTQPAIR): put procedures, open and
 * close of one instance never run at the same time, so the private state
 * needs no lock.  No service procedures: flow control is the provider's
 * and the head's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/strconf.h>
#include <sys/tihdr.h>

#include "../drivers/drvutil.h"

#define TRW_ORDREL	0x01	/* T_ORDREL_IND received */
#define TRW_DISCON	0x02	/* T_DISCON_IND received */
#define TRW_FATAL	0x04	/* M_ERROR EPROTO sent up */

struct tirdwr {
	unsigned int tr_flags;	/* TRW_*; perimeter */
	mblk_t *tr_spare;	/* for EOF, hangup or error when the
				   provider's block cannot be reused;
				   perimeter */
	mblk_t *tr_closereq;	/* the T_ORDREL_REQ/T_DISCON_REQ of close;
				   open and close only */
};

static t_scalar_t prim_of(const mblk_t *mp)
{
	t_scalar_t v;

	memcpy(&v, mp->b_rptr, sizeof(v));
	return v;
}

static bool all_data(const mblk_t *mp)
{
	for (; mp != NULL; mp = mp->b_cont)
		if (mp->b_datap->db_type != M_DATA)
			return false;
	return true;
}

/*
 * Is mp (M_PROTO/M_PCPROTO) a primitive carrying normal data?  T_DATA_IND,
 * or T_OPTDATA_IND without T_ODF_EX (its options are dropped with it).
 */
static bool data_prim(const mblk_t *mp)
{
	t_scalar_t prim, fl;

	if (mp->b_datap->db_type != M_PROTO || MBLKL(mp) < sizeof(prim))
		return false;
	prim = prim_of(mp);
	if (prim == T_DATA_IND)
		return MBLKL(mp) >= sizeof(struct T_data_ind);
	if (prim != T_OPTDATA_IND || MBLKL(mp) < sizeof(struct T_optdata_ind))
		return false;
	memcpy(&fl, mp->b_rptr + offsetof(struct T_optdata_ind, DATA_flag),
	       sizeof(fl));
	return !(fl & T_ODF_EX);
}

/* ---- push: the stream head's queue (the stream is frozen) ---- */

static bool head_ok(queue_t *hq)
{
	for (mblk_t *mp = hq->q_first; mp != NULL; mp = mp->b_next) {
		switch (mp->b_datap->db_type) {
		case M_DATA:
			if (!all_data(mp))
				return false;
			break;
		case M_SIG:
			break;
		case M_PROTO:
			if (!data_prim(mp) || !all_data(mp->b_cont))
				return false;
			break;
		default:
			return false;
		}
	}
	return true;
}

static void head_strip(queue_t *hq)
{
	mblk_t *mp, *next, *d;

	for (mp = hq->q_first; mp != NULL; mp = next) {
		next = mp->b_next;
		if (mp->b_datap->db_type == M_PROTO) {
			rmvq(hq, mp);
			d = unlinkb(mp);
			if (d != NULL)
				d->b_band = mp->b_band;
			freeb(mp);
			/* same band, same place: insq cannot refuse it */
			if (d != NULL && (msgdsize(d) == 0 || !insq(hq, next, d)))
				freemsg(d);
		} else if (mp->b_datap->db_type == M_DATA && msgdsize(mp) == 0) {
			rmvq(hq, mp);
			freemsg(mp);
		}
	}
}

static void tr_free(struct tirdwr *p)
{
	if (p->tr_spare != NULL)
		freemsg(p->tr_spare);
	if (p->tr_closereq != NULL)
		freemsg(p->tr_closereq);
	free(p);
}

static int tirdwr_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		       cred_t *cr)
{
	struct tirdwr *p;
	bool ok;

	if (sflag != MODOPEN)
		return ENXIO;
	if (q->q_ptr != NULL)
		return 0;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return ENOMEM;
	p->tr_spare = allocb(sizeof(struct T_discon_req), BPRI_HI);
	p->tr_closereq = allocb(sizeof(struct T_discon_req), BPRI_HI);
	if (p->tr_spare == NULL || p->tr_closereq == NULL) {
		tr_free(p);
		return ENOMEM;
	}
	q->q_ptr = WR(q)->q_ptr = p;
	/* on before looking: whatever arrives from now on comes through
	 * here (and waits at the perimeter until this open is done) */
	qprocson(q);
	freezestr(q);
	ok = head_ok(q->q_next);
	if (ok)
		head_strip(q->q_next);
	unfreezestr(q);
	if (!ok) {
		qprocsoff(q);
		q->q_ptr = WR(q)->q_ptr = NULL;
		tr_free(p);
		return EPROTO;
	}
	return 0;
}

static int tirdwr_close(queue_t *q, int oflag, cred_t *cr)
{
	struct tirdwr *p = q->q_ptr;
	mblk_t *mp;

	if (p == NULL)
		return 0;
	mp = p->tr_closereq;
	if (!(p->tr_flags & TRW_DISCON) && mp != NULL) {
		t_scalar_t v = (p->tr_flags & TRW_ORDREL) ? T_ORDREL_REQ
							   : T_DISCON_REQ;
		mp->b_datap->db_type = M_PROTO;
		memcpy(mp->b_wptr, &v, sizeof(v));
		mp->b_wptr += sizeof(v);
		if (v == T_DISCON_REQ) {
			v = -1;		/* SEQ_number: not refusing a T_CONN_IND */
			memcpy(mp->b_wptr, &v, sizeof(v));
			mp->b_wptr += sizeof(v);
		}
		p->tr_closereq = NULL;
		putnext(WR(q), mp);
	}
	tr_free(p);
	q->q_ptr = WR(q)->q_ptr = NULL;
	return 0;
}

/* ---- messages sent up by the module ---- */

/*
 * A block of type with len bytes for a message sent up in place of mp:
 * mp's own block when it is not shared, else a new one, else (memory
 * short) the spare, renewed when memory allows.  mp is consumed; NULL
 * only when there is no memory and the spare is gone too.
 */
static mblk_t *up_block(struct tirdwr *p, mblk_t *mp, unsigned char type,
			size_t len)
{
	dblk_t *db = mp->b_datap;
	mblk_t *b;

	if (mp->b_cont != NULL) {
		freemsg(mp->b_cont);
		mp->b_cont = NULL;
	}
	if (db->db_ref == 1 && (size_t)(db->db_lim - db->db_base) >= len) {
		b = mp;
	} else {
		freemsg(mp);
		if ((b = allocb(len, BPRI_HI)) == NULL) {
			b = p->tr_spare;
			p->tr_spare = NULL;
		}
		if (b == NULL)
			return NULL;
	}
	if (p->tr_spare == NULL)	/* (used before: try again) */
		p->tr_spare = allocb(sizeof(struct T_discon_req), BPRI_HI);
	b->b_datap->db_type = type;
	b->b_band = 0;
	b->b_flag = 0;
	b->b_rptr = b->b_datap->db_base;
	b->b_wptr = b->b_rptr + len;
	return b;
}

/* A protocol error: M_ERROR EPROTO up (from either side), mp consumed.
 * Only once the error is sent does everything after it go (were it
 * lost, the reader would wait for good on a stream that drops all). */
static void fatal(queue_t *q, struct tirdwr *p, mblk_t *mp)
{
	mblk_t *b;

	if ((b = up_block(p, mp, M_ERROR, 1)) == NULL)
		return;
	p->tr_flags |= TRW_FATAL;
	b->b_rptr[0] = EPROTO;
	if (q->q_flag & QREADR)
		putnext(q, b);
	else
		qreply(q, b);
}

/* The data of mp (a data primitive) up without its control part. */
static void pass_data(queue_t *q, mblk_t *mp)
{
	mblk_t *d = unlinkb(mp);

	if (d != NULL)
		d->b_band = mp->b_band;
	freeb(mp);
	if (d == NULL || msgdsize(d) == 0) {
		if (d != NULL)
			freemsg(d);
		return;
	}
	putnext(q, d);
}

/* Data carried by an indication (T_DISCON_IND) goes up before it. */
static void pass_cont(queue_t *q, mblk_t *mp)
{
	mblk_t *d = unlinkb(mp);

	if (d == NULL)
		return;
	if (msgdsize(d) == 0 || !all_data(d))
		freemsg(d);
	else
		putnext(q, d);
}

static void rd_proto(queue_t *q, struct tirdwr *p, mblk_t *mp)
{
	mblk_t *b;

	if (data_prim(mp)) {
		if (!all_data(mp->b_cont))	/* (a TPI message inside) */
			fatal(q, p, mp);
		else
			pass_data(q, mp);
		return;
	}
	if (MBLKL(mp) < sizeof(t_scalar_t)) {
		fatal(q, p, mp);
		return;
	}
	switch (prim_of(mp)) {
	case T_ORDREL_IND:
		p->tr_flags |= TRW_ORDREL;
		pass_cont(q, mp);
		if ((b = up_block(p, mp, M_DATA, 0)) != NULL)
			putnext(q, b);		/* end of file */
		return;
	case T_DISCON_IND:
		p->tr_flags |= TRW_DISCON;
		p->tr_flags &= ~TRW_ORDREL;
		pass_cont(q, mp);
		if ((b = up_block(p, mp, M_HANGUP, 0)) != NULL)
			putnext(q, b);
		return;
	default:
		fatal(q, p, mp);
		return;
	}
}

/* Both directions alike: empty data and anything after a fatal error
 * go, other data passes; a TPI message is proto's (the read side's
 * indications, or on the write side always fatal). */
static int tirdwr_put(queue_t *q, mblk_t *mp,
		      void (*proto)(queue_t *, struct tirdwr *, mblk_t *))
{
	struct tirdwr *p = q->q_ptr;

	switch (mp->b_datap->db_type) {
	case M_DATA:
		if ((p->tr_flags & TRW_FATAL) || msgdsize(mp) == 0)
			freemsg(mp);
		else
			putnext(q, mp);
		return 0;
	case M_PROTO:
	case M_PCPROTO:
		if (!(p->tr_flags & TRW_FATAL)) {
			proto(q, p, mp);
			return 0;
		}
		/* dropped; the end of the connection still noted, so that
		 * close sends what it still needs (or nothing) */
		if (proto == rd_proto && MBLKL(mp) >= sizeof(t_scalar_t)) {
			if (prim_of(mp) == T_ORDREL_IND)
				p->tr_flags |= TRW_ORDREL;
			else if (prim_of(mp) == T_DISCON_IND)
				p->tr_flags = (p->tr_flags | TRW_DISCON) &
					      ~TRW_ORDREL;
		}
		freemsg(mp);
		return 0;
	default:
		putnext(q, mp);
		return 0;
	}
}

static int tirdwr_rput(queue_t *q, mblk_t *mp)
{
	return tirdwr_put(q, mp, rd_proto);
}

static int tirdwr_wput(queue_t *q, mblk_t *mp)
{
	return tirdwr_put(q, mp, fatal);
}

static struct module_info tirdwr_minfo = { 3005, "tirdwr", 0, INFPSZ, 65536, 16384 };
static struct qinit tirdwr_rinit = { tirdwr_rput, NULL, tirdwr_open, tirdwr_close, NULL, &tirdwr_minfo, NULL };
static struct qinit tirdwr_winit = { tirdwr_wput, NULL, NULL, NULL, NULL, &tirdwr_minfo, NULL };
static struct streamtab tirdwr_info = { &tirdwr_rinit, &tirdwr_winit, NULL, NULL };

struct fmodsw tirdwr_fmod = {
	.f_name = "tirdwr", .f_str = &tirdwr_info, .f_flag = D_MTQPAIR,
};
