/*
 * tpi.c -- validating TPI primitives and answering them (see tpi.h).
 */
#include <errno.h>
#include <string.h>

#include "tpi.h"

/* One (length, offset) pair of a primitive, and the error it implies. */
struct tpi_field {
	unsigned char len_at;		/* offsetof the length field */
	unsigned char off_at;		/* offsetof the offset field */
	unsigned char err;		/* TLI error when out of range */
};

struct tpi_desc {
	unsigned short size;		/* sizeof the structure */
	unsigned char acked;		/* answered by an ack */
	unsigned char request;		/* sent by the user */
	struct tpi_field f[2];		/* regions (len_at 0: none) */
};

#define F(type, l, o, e) { offsetof(struct type, l), offsetof(struct type, o), e }
#define REQ(type, ack, ...) { sizeof(struct type), ack, 1, { __VA_ARGS__ } }
#define IND(type, ...) { sizeof(struct type), 0, 0, { __VA_ARGS__ } }

static const struct tpi_desc tpi_desc[] = {
	[T_CONN_REQ] = REQ(T_conn_req, 1,
			   F(T_conn_req, DEST_length, DEST_offset, TBADADDR),
			   F(T_conn_req, OPT_length, OPT_offset, TBADOPT)),
	[T_CONN_RES] = REQ(T_conn_res, 1,
			   F(T_conn_res, OPT_length, OPT_offset, TBADOPT)),
	[T_DISCON_REQ] = REQ(T_discon_req, 1),
	[T_DATA_REQ] = REQ(T_data_req, 0),
	[T_EXDATA_REQ] = REQ(T_exdata_req, 0),
	[T_INFO_REQ] = REQ(T_info_req, 1),
	[T_BIND_REQ] = REQ(T_bind_req, 1,
			   F(T_bind_req, ADDR_length, ADDR_offset, TBADADDR)),
	[T_UNBIND_REQ] = REQ(T_unbind_req, 1),
	/* errors in a T_UNITDATA_REQ are reported by T_UDERROR_IND, but
	 * it is "acked" only in that sense: the caller decides */
	[T_UNITDATA_REQ] = REQ(T_unitdata_req, 0,
			       F(T_unitdata_req, DEST_length, DEST_offset, TBADADDR),
			       F(T_unitdata_req, OPT_length, OPT_offset, TBADOPT)),
	[T_OPTMGMT_REQ] = REQ(T_optmgmt_req, 1,
			      F(T_optmgmt_req, OPT_length, OPT_offset, TBADOPT)),
	[T_ORDREL_REQ] = REQ(T_ordrel_req, 0),
	[T_CONN_IND] = IND(T_conn_ind,
			   F(T_conn_ind, SRC_length, SRC_offset, TSYSERR),
			   F(T_conn_ind, OPT_length, OPT_offset, TSYSERR)),
	[T_CONN_CON] = IND(T_conn_con,
			   F(T_conn_con, RES_length, RES_offset, TSYSERR),
			   F(T_conn_con, OPT_length, OPT_offset, TSYSERR)),
	[T_DISCON_IND] = IND(T_discon_ind),
	[T_DATA_IND] = IND(T_data_ind),
	[T_EXDATA_IND] = IND(T_exdata_ind),
	[T_INFO_ACK] = IND(T_info_ack),
	[T_BIND_ACK] = IND(T_bind_ack,
			   F(T_bind_ack, ADDR_length, ADDR_offset, TSYSERR)),
	[T_ERROR_ACK] = IND(T_error_ack),
	[T_OK_ACK] = IND(T_ok_ack),
	[T_UNITDATA_IND] = IND(T_unitdata_ind,
			       F(T_unitdata_ind, SRC_length, SRC_offset, TSYSERR),
			       F(T_unitdata_ind, OPT_length, OPT_offset, TSYSERR)),
	[T_UDERROR_IND] = IND(T_uderror_ind,
			      F(T_uderror_ind, DEST_length, DEST_offset, TSYSERR),
			      F(T_uderror_ind, OPT_length, OPT_offset, TSYSERR)),
	[T_OPTMGMT_ACK] = IND(T_optmgmt_ack,
			      F(T_optmgmt_ack, OPT_length, OPT_offset, TSYSERR)),
	[T_ORDREL_IND] = IND(T_ordrel_ind),
	[T_OPTDATA_REQ] = REQ(T_optdata_req, 0,
			      F(T_optdata_req, OPT_length, OPT_offset, TBADOPT)),
	[T_ADDR_REQ] = REQ(T_addr_req, 1),
	[T_OPTDATA_IND] = IND(T_optdata_ind,
			      F(T_optdata_ind, OPT_length, OPT_offset, TSYSERR)),
	[T_ADDR_ACK] = IND(T_addr_ack,
			   F(T_addr_ack, LOCADDR_length, LOCADDR_offset, TSYSERR),
			   F(T_addr_ack, REMADDR_length, REMADDR_offset, TSYSERR)),
	[T_CAPABILITY_REQ] = REQ(T_capability_req, 1),
	[T_CAPABILITY_ACK] = IND(T_capability_ack),
};

#define NPRIM (sizeof(tpi_desc) / sizeof(tpi_desc[0]))

static const struct tpi_desc *desc(t_scalar_t prim)
{
	if (prim < 0 || (size_t)prim >= NPRIM || tpi_desc[prim].size == 0)
		return NULL;
	return &tpi_desc[prim];
}

size_t tpi_size(t_scalar_t prim)
{
	const struct tpi_desc *d = desc(prim);

	return d ? d->size : 0;
}

bool tpi_acked(t_scalar_t prim)
{
	const struct tpi_desc *d = desc(prim);

	return d != NULL && d->acked;
}

static t_scalar_t field(const mblk_t *mp, unsigned at)
{
	t_scalar_t v;

	memcpy(&v, mp->b_rptr + at, sizeof(v));
	return v;
}

int tpi_check(const mblk_t *mp, t_scalar_t *primp, int *unixerr)
{
	const struct tpi_desc *d;
	size_t size;

	*primp = -1;
	*unixerr = 0;
	if (mp == NULL || (mp->b_datap->db_type != M_PROTO &&
			   mp->b_datap->db_type != M_PCPROTO)) {
		*unixerr = EPROTO;
		return TSYSERR;
	}
	size = (size_t)(mp->b_wptr - mp->b_rptr);
	if (mp->b_wptr < mp->b_rptr || size < sizeof(t_scalar_t)) {
		*unixerr = EPROTO;
		return TSYSERR;
	}
	*primp = field(mp, 0);
	if ((d = desc(*primp)) == NULL)
		return TNOTSUPPORT;
	if (size < d->size) {
		*unixerr = EINVAL;
		return TSYSERR;
	}
	for (int i = 0; i < 2; i++) {
		const struct tpi_field *f = &d->f[i];

		if (f->len_at == 0)
			break;
		if (tpi_region(mp, field(mp, f->off_at),
			       field(mp, f->len_at)) == NULL) {
			if (f->err == TSYSERR)
				*unixerr = EPROTO;
			return f->err;
		}
	}
	return 0;
}

bool tpi_allowed(int state, t_scalar_t prim)
{
	switch (prim) {
	case T_INFO_REQ:
	case T_ADDR_REQ:
	case T_CAPABILITY_REQ:
	case T_OPTMGMT_REQ:
		return state >= TS_UNBND && state < TS_NOSTATES;
	case T_BIND_REQ:
		return state == TS_UNBND;
	case T_UNBIND_REQ:
	case T_CONN_REQ:
	case T_UNITDATA_REQ:
		return state == TS_IDLE;
	case T_CONN_RES:
		return state == TS_WRES_CIND;
	case T_DISCON_REQ:
		return state == TS_WCON_CREQ || state == TS_WRES_CIND ||
		       state == TS_DATA_XFER || state == TS_WIND_ORDREL ||
		       state == TS_WREQ_ORDREL;
	case T_DATA_REQ:
	case T_EXDATA_REQ:
	case T_OPTDATA_REQ:
	case T_ORDREL_REQ:
		return state == TS_DATA_XFER || state == TS_WREQ_ORDREL;
	default:
		return false;
	}
}

mblk_t *tpi_reuse(mblk_t *mp, size_t size, unsigned char type)
{
	mblk_t *bp;

	if (mp != NULL && mp->b_datap->db_ref == 1 &&
	    (size_t)(mp->b_datap->db_lim - mp->b_datap->db_base) >= size) {
		if (mp->b_cont != NULL) {
			freemsg(mp->b_cont);
			mp->b_cont = NULL;
		}
		bp = mp;
	} else {
		if ((bp = allocb(size, BPRI_HI)) == NULL)
			return NULL;
		freemsg(mp);
	}
	bp->b_datap->db_type = type;
	bp->b_rptr = bp->b_datap->db_base;
	bp->b_wptr = bp->b_rptr + size;
	bp->b_band = 0;
	bp->b_flag = 0;
	memset(bp->b_rptr, 0, size);
	return bp;
}

void tpi_fatal(queue_t *q, mblk_t *mp, int err)
{
	mblk_t *bp = tpi_reuse(mp, 2, M_ERROR);

	if (bp == NULL) {
		/* no memory for even two bytes: the stream is unusable */
		freemsg(mp);
		putnextctl1(RD(q), M_ERROR, err);
		return;
	}
	bp->b_rptr[0] = (unsigned char)err;
	bp->b_rptr[1] = (unsigned char)err;
	qreply(q, bp);
}

/* The T_OK_ACK or T_ERROR_ACK answering mp, in its own block when it can;
 * NULL without memory (mp untouched). */
static mblk_t *ok_ack(mblk_t *mp, t_scalar_t prim)
{
	mblk_t *bp = tpi_reuse(mp, sizeof(struct T_ok_ack), M_PCPROTO);
	struct T_ok_ack ok = { T_OK_ACK, prim };

	if (bp != NULL)
		memcpy(bp->b_rptr, &ok, sizeof(ok));
	return bp;
}

static mblk_t *error_ack(mblk_t *mp, t_scalar_t prim, int tli, int unixerr)
{
	mblk_t *bp = tpi_reuse(mp, sizeof(struct T_error_ack), M_PCPROTO);
	struct T_error_ack e = { T_ERROR_ACK, prim, tli,
				 tli == TSYSERR ? unixerr : 0 };

	if (bp != NULL)
		memcpy(bp->b_rptr, &e, sizeof(e));
	return bp;
}

void tpi_up(queue_t *wq, mblk_t *mp)
{
	if (!putq(RD(wq), mp))
		freemsg(mp);
}

/* Send the answer bp to request mp (NULL: no memory, the fatal answer)
 * with qreply, or up through the read queue. */
static void answer(queue_t *wq, mblk_t *mp, mblk_t *bp, bool up)
{
	if (bp == NULL)
		tpi_fatal(wq, mp, ENOMEM);
	else if (up)
		tpi_up(wq, bp);
	else
		qreply(wq, bp);
}

void tpi_ok_ack(queue_t *q, mblk_t *mp, t_scalar_t prim)
{
	answer(q, mp, ok_ack(mp, prim), false);
}

void tpi_error_ack(queue_t *q, mblk_t *mp, t_scalar_t prim, int tli,
		   int unixerr)
{
	answer(q, mp, error_ack(mp, prim, tli, unixerr), false);
}

void tpi_ok_ack_up(queue_t *wq, mblk_t *mp, t_scalar_t prim)
{
	answer(wq, mp, ok_ack(mp, prim), true);
}

void tpi_error_ack_up(queue_t *wq, mblk_t *mp, t_scalar_t prim, int tli,
		      int unixerr)
{
	answer(wq, mp, error_ack(mp, prim, tli, unixerr), true);
}

void tpi_addr_ack_fill(mblk_t *bp, const void *loc, size_t ll,
		       const void *rem, size_t rl)
{
	struct T_addr_ack a = { T_ADDR_ACK, 0, 0, 0, 0 };
	size_t off = sizeof(a);

	if (ll > 0) {
		a.LOCADDR_length = (t_scalar_t)ll;
		a.LOCADDR_offset = tpi_put_bytes(bp, &off, loc, ll);
	}
	if (rl > 0) {
		a.REMADDR_length = (t_scalar_t)rl;
		a.REMADDR_offset = tpi_put_bytes(bp, &off, rem, rl);
	}
	memcpy(bp->b_rptr, &a, sizeof(a));
	bp->b_wptr = bp->b_rptr + off;
}

mblk_t *tpi_capability_ack(mblk_t *mp, t_uscalar_t can,
			   const struct T_info_ack *ia, t_uscalar_t token)
{
	struct T_capability_req r;
	struct T_capability_ack ca;
	mblk_t *bp;

	memcpy(&r, mp->b_rptr, sizeof(r));
	if ((bp = tpi_reuse(mp, sizeof(ca), mp->b_datap->db_type)) == NULL)
		return NULL;
	memset(&ca, 0, sizeof(ca));
	ca.PRIM_type = T_CAPABILITY_ACK;
	ca.CAP_bits1 = r.CAP_bits1 & can;
	if (ca.CAP_bits1 & TC1_INFO)
		ca.INFO_ack = *ia;
	if (ca.CAP_bits1 & TC1_ACCEPTOR_ID)
		ca.ACCEPTOR_id = token;
	memcpy(bp->b_rptr, &ca, sizeof(ca));
	return bp;
}

mblk_t *tpi_optmgmt_ack(mblk_t *out, t_scalar_t result)
{
	struct T_optmgmt_ack a = { T_OPTMGMT_ACK, 0, 0, result };
	size_t n = (size_t)(out->b_wptr - out->b_rptr), off = sizeof(a);
	mblk_t *bp = tpi_proto(sizeof(a) + n + 4, M_PCPROTO);

	if (bp != NULL) {
		a.OPT_length = (t_scalar_t)n;
		a.OPT_offset = tpi_put_bytes(bp, &off, out->b_rptr, n);
		bp->b_wptr = bp->b_rptr + off;
		memcpy(bp->b_rptr, &a, sizeof(a));
	}
	freemsg(out);
	return bp;
}

void tpi_reject(queue_t *q, mblk_t *mp, t_scalar_t prim, int tli,
		int unixerr)
{
	if (prim >= 0 && tpi_acked(prim))
		tpi_error_ack(q, mp, prim, tli, unixerr);
	else
		tpi_fatal(q, mp, EPROTO);
}

size_t tpi_datalen(const mblk_t *mp)
{
	size_t n = 0;

	for (mp = mp->b_cont; mp != NULL; mp = mp->b_cont)
		if (mp->b_datap->db_type == M_DATA && mp->b_wptr > mp->b_rptr)
			n += (size_t)(mp->b_wptr - mp->b_rptr);
	return n;
}

mblk_t *tpi_proto(size_t size, unsigned char type)
{
	mblk_t *bp = allocb(size, BPRI_HI);

	if (bp == NULL)
		return NULL;
	bp->b_datap->db_type = type;
	memset(bp->b_rptr, 0, size);
	bp->b_wptr = bp->b_rptr + size;
	return bp;
}

t_scalar_t tpi_put_bytes(mblk_t *bp, size_t *off, const void *p, size_t n)
{
	size_t at = (*off + 3) & ~(size_t)3;	/* options stay aligned */

	if (n == 0) {
		bp->b_wptr = bp->b_rptr + *off;
		return 0;
	}
	memset(bp->b_rptr + *off, 0, at - *off);
	memcpy(bp->b_rptr + at, p, n);
	*off = at + n;
	bp->b_wptr = bp->b_rptr + *off;
	return (t_scalar_t)at;
}
