/*
 * xti_decode.c -- validating what the transport provider sends.
 *
 * Every ack and indication the library reads passes through one of these
 * before any field is used.  Each takes the control part exactly as it
 * was received, (ctl, len), copies the fixed structure out (no alignment
 * is assumed of ctl), checks the primitive type, and checks each
 * (offset, length) pair: an empty region (length 0) is always valid
 * whatever its offset; a non-empty one must lie wholly after the
 * structure and inside the len bytes, without overflow.  Values that
 * have a fixed range (service type, state, size fields) are checked too.
 * A failure returns -1 and leaves the caller to report TPROTO; nothing
 * here reads outside (ctl, len).  tests/fuzz/fuzz_xti.c drives them.
 */
#include <string.h>

#include "xti_impl.h"

#define NEED(type)						\
	do {							\
		if (ctl == NULL || len < 0 ||			\
		    (size_t)len < sizeof(struct type))		\
			return -1;				\
	} while (0)

static int region(const void *ctl, int len, size_t hdr, t_scalar_t off,
		  t_scalar_t rlen, struct xti_region *r)
{
	if (rlen == 0) {
		r->p = ctl;
		r->len = 0;
		return 0;
	}
	if (rlen < 0 || off < 0 || (size_t)off < hdr ||
	    (size_t)off > (size_t)len ||
	    (size_t)rlen > (size_t)len - (size_t)off)
		return -1;
	r->p = (const char *)ctl + off;
	r->len = (size_t)rlen;
	return 0;
}

int xti_dec_prim(const void *ctl, int len, t_scalar_t *prim)
{
	if (ctl == NULL || len < (int)sizeof(t_scalar_t))
		return -1;
	memcpy(prim, ctl, sizeof(*prim));
	return 0;
}

static bool size_ok(t_scalar_t v)
{
	return v >= T_INVALID;
}

static int info_ok(const struct T_info_ack *ia)
{
	if (ia->PRIM_type != T_INFO_ACK)
		return -1;
	if (ia->SERV_type != T_COTS && ia->SERV_type != T_COTS_ORD &&
	    ia->SERV_type != T_CLTS)
		return -1;
	if (ia->CURRENT_state < 0 || ia->CURRENT_state >= TS_NOSTATES)
		return -1;
	if (!size_ok(ia->TSDU_size) || !size_ok(ia->ETSDU_size) ||
	    !size_ok(ia->CDATA_size) || !size_ok(ia->DDATA_size) ||
	    !size_ok(ia->ADDR_size) || !size_ok(ia->OPT_size) ||
	    !size_ok(ia->TIDU_size))
		return -1;
	return 0;
}

int xti_dec_info_ack(const void *ctl, int len, struct T_info_ack *info)
{
	NEED(T_info_ack);
	memcpy(info, ctl, sizeof(*info));
	return info_ok(info);
}

int xti_dec_ok_ack(const void *ctl, int len, struct xti_dec_ack *a)
{
	t_scalar_t prim;

	if (xti_dec_prim(ctl, len, &prim) != 0)
		return -1;
	memset(a, 0, sizeof(*a));
	a->prim = prim;
	if (prim == T_OK_ACK) {
		struct T_ok_ack ok;
		NEED(T_ok_ack);
		memcpy(&ok, ctl, sizeof(ok));
		a->req = ok.CORRECT_prim;
		return 0;
	}
	if (prim == T_ERROR_ACK) {
		struct T_error_ack ea;
		NEED(T_error_ack);
		memcpy(&ea, ctl, sizeof(ea));
		a->req = ea.ERROR_prim;
		a->tli = ea.TLI_error;
		a->unixerr = ea.UNIX_error;
		if (a->tli <= 0 || a->tli > TPROTO)
			return -1;
		return 0;
	}
	return -1;
}

int xti_dec_bind_ack(const void *ctl, int len, struct xti_region *addr,
		     unsigned int *qlen)
{
	struct T_bind_ack ba;

	NEED(T_bind_ack);
	memcpy(&ba, ctl, sizeof(ba));
	if (ba.PRIM_type != T_BIND_ACK)
		return -1;
	*qlen = ba.CONIND_number;
	return region(ctl, len, sizeof(ba), ba.ADDR_offset, ba.ADDR_length,
		      addr);
}

int xti_dec_optmgmt_ack(const void *ctl, int len, struct xti_region *opt,
			t_scalar_t *flags)
{
	struct T_optmgmt_ack oa;

	NEED(T_optmgmt_ack);
	memcpy(&oa, ctl, sizeof(oa));
	if (oa.PRIM_type != T_OPTMGMT_ACK)
		return -1;
	*flags = oa.MGMT_flags;
	return region(ctl, len, sizeof(oa), oa.OPT_offset, oa.OPT_length, opt);
}

int xti_dec_addr_ack(const void *ctl, int len, struct xti_region *loc,
		     struct xti_region *rem)
{
	struct T_addr_ack aa;

	NEED(T_addr_ack);
	memcpy(&aa, ctl, sizeof(aa));
	if (aa.PRIM_type != T_ADDR_ACK)
		return -1;
	if (region(ctl, len, sizeof(aa), aa.LOCADDR_offset, aa.LOCADDR_length,
		   loc) != 0)
		return -1;
	return region(ctl, len, sizeof(aa), aa.REMADDR_offset,
		      aa.REMADDR_length, rem);
}

/* A shorter ack carries the fields its CAP_bits1 names: the INFO_ack
 * with TC1_INFO, everything with TC1_ACCEPTOR_ID; the rest reads 0. */
int xti_dec_capability_ack(const void *ctl, int len,
			   struct T_capability_ack *ack)
{
	size_t need = offsetof(struct T_capability_ack, INFO_ack);

	if (ctl == NULL || len < 0 || (size_t)len < need)
		return -1;
	memset(ack, 0, sizeof(*ack));
	memcpy(ack, ctl, (size_t)len < sizeof(*ack) ? (size_t)len : sizeof(*ack));
	if (ack->PRIM_type != T_CAPABILITY_ACK)
		return -1;
	if (ack->CAP_bits1 & TC1_INFO) {
		need = offsetof(struct T_capability_ack, ACCEPTOR_id);
		if ((size_t)len < need || info_ok(&ack->INFO_ack) != 0)
			return -1;
	}
	if ((ack->CAP_bits1 & TC1_ACCEPTOR_ID) &&
	    (size_t)len < sizeof(struct T_capability_ack))
		return -1;
	return 0;
}

int xti_dec_sync_ack(const void *buf, int len, struct ti_sync_ack *ack)
{
	const void *ctl = buf;

	NEED(ti_sync_ack);
	memcpy(ack, ctl, sizeof(*ack));
	return info_ok(&ack->tsa_info);
}

int xti_dec_conn_ind(const void *ctl, int len, struct xti_dec_conn *c)
{
	struct T_conn_ind ci;

	NEED(T_conn_ind);
	memcpy(&ci, ctl, sizeof(ci));
	if (ci.PRIM_type != T_CONN_IND)
		return -1;
	c->seq = ci.SEQ_number;
	if (region(ctl, len, sizeof(ci), ci.SRC_offset, ci.SRC_length,
		   &c->addr) != 0)
		return -1;
	return region(ctl, len, sizeof(ci), ci.OPT_offset, ci.OPT_length,
		      &c->opt);
}

int xti_dec_conn_con(const void *ctl, int len, struct xti_dec_conn *c)
{
	struct T_conn_con cc;

	NEED(T_conn_con);
	memcpy(&cc, ctl, sizeof(cc));
	if (cc.PRIM_type != T_CONN_CON)
		return -1;
	c->seq = -1;
	if (region(ctl, len, sizeof(cc), cc.RES_offset, cc.RES_length,
		   &c->addr) != 0)
		return -1;
	return region(ctl, len, sizeof(cc), cc.OPT_offset, cc.OPT_length,
		      &c->opt);
}

int xti_dec_discon_ind(const void *ctl, int len, int *reason, int *seq)
{
	struct T_discon_ind di;

	NEED(T_discon_ind);
	memcpy(&di, ctl, sizeof(di));
	if (di.PRIM_type != T_DISCON_IND)
		return -1;
	*reason = di.DISCON_reason;
	*seq = di.SEQ_number;
	return 0;
}

int xti_dec_data_ind(const void *ctl, int len, struct xti_dec_data *d)
{
	t_scalar_t prim;

	memset(d, 0, sizeof(*d));
	d->opt.p = ctl;
	if (xti_dec_prim(ctl, len, &prim) != 0)
		return -1;
	if (prim == T_DATA_IND || prim == T_EXDATA_IND) {
		struct T_data_ind di;
		NEED(T_data_ind);
		memcpy(&di, ctl, sizeof(di));
		d->exp = prim == T_EXDATA_IND;
		d->more = di.MORE_flag != 0;
		return 0;
	}
	if (prim == T_OPTDATA_IND) {
		struct T_optdata_ind oi;
		NEED(T_optdata_ind);
		memcpy(&oi, ctl, sizeof(oi));
		d->exp = (oi.DATA_flag & T_ODF_EX) != 0;
		d->more = (oi.DATA_flag & T_ODF_MORE) != 0;
		return region(ctl, len, sizeof(oi), oi.OPT_offset,
			      oi.OPT_length, &d->opt);
	}
	return -1;
}

int xti_dec_unitdata_ind(const void *ctl, int len, struct xti_dec_udata *u)
{
	struct T_unitdata_ind ui;

	NEED(T_unitdata_ind);
	memcpy(&ui, ctl, sizeof(ui));
	if (ui.PRIM_type != T_UNITDATA_IND)
		return -1;
	u->error = 0;
	if (region(ctl, len, sizeof(ui), ui.SRC_offset, ui.SRC_length,
		   &u->addr) != 0)
		return -1;
	return region(ctl, len, sizeof(ui), ui.OPT_offset, ui.OPT_length,
		      &u->opt);
}

int xti_dec_uderror_ind(const void *ctl, int len, struct xti_dec_udata *u)
{
	struct T_uderror_ind ue;

	NEED(T_uderror_ind);
	memcpy(&ue, ctl, sizeof(ue));
	if (ue.PRIM_type != T_UDERROR_IND)
		return -1;
	u->error = ue.ERROR_type;
	if (region(ctl, len, sizeof(ue), ue.DEST_offset, ue.DEST_length,
		   &u->addr) != 0)
		return -1;
	return region(ctl, len, sizeof(ue), ue.OPT_offset, ue.OPT_length,
		      &u->opt);
}

int xti_dec_event(const void *ctl, int len, bool exp_cont)
{
	t_scalar_t prim;

	if (len < 0)
		return exp_cont ? T_EXDATA : T_DATA;	/* data, no control */
	if (xti_dec_prim(ctl, len, &prim) != 0)
		return -1;
	switch (prim) {
	case T_CONN_IND:
		return T_LISTEN;
	case T_CONN_CON:
		return T_CONNECT;
	case T_DATA_IND:
	case T_UNITDATA_IND:
		return T_DATA;
	case T_EXDATA_IND:
		return T_EXDATA;
	case T_OPTDATA_IND: {
		struct T_optdata_ind oi;
		if ((size_t)len < offsetof(struct T_optdata_ind, OPT_length))
			return -1;
		memcpy(&oi, ctl, offsetof(struct T_optdata_ind, OPT_length));
		return (oi.DATA_flag & T_ODF_EX) ? T_EXDATA : T_DATA;
	}
	case T_DISCON_IND:
		return T_DISCONNECT;
	case T_UDERROR_IND:
		return T_UDERR;
	case T_ORDREL_IND:
		return T_ORDREL;
	case T_OK_ACK:
	case T_ERROR_ACK:
		return 0;
	default:
		return -1;
	}
}
