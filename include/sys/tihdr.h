/*
 * <sys/tihdr.h> -- the Transport Provider Interface (TPI, revision 2.0.0):
 * the primitives a transport user and a transport provider exchange as
 * STREAMS messages.  A request or response is an M_PROTO (or M_PCPROTO)
 * block holding one of the structures below, any addresses and options
 * at the offsets it names within that block, and user data in M_DATA
 * blocks after it.
 */
#ifndef _SYS_TIHDR_H
#define _SYS_TIHDR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef _T_SCALAR_T
#define _T_SCALAR_T
typedef int32_t t_scalar_t;
typedef uint32_t t_uscalar_t;
#endif

/* Primitives from the user (requests) */
#define T_CONN_REQ	0
#define T_CONN_RES	1
#define T_DISCON_REQ	2
#define T_DATA_REQ	3
#define T_EXDATA_REQ	4
#define T_INFO_REQ	5
#define T_BIND_REQ	6
#define T_UNBIND_REQ	7
#define T_UNITDATA_REQ	8
#define T_OPTMGMT_REQ	9
#define T_ORDREL_REQ	10
/* Primitives from the provider (indications, confirmations, acks) */
#define T_CONN_IND	11
#define T_CONN_CON	12
#define T_DISCON_IND	13
#define T_DATA_IND	14
#define T_EXDATA_IND	15
#define T_INFO_ACK	16
#define T_BIND_ACK	17
#define T_ERROR_ACK	18
#define T_OK_ACK	19
#define T_UNITDATA_IND	20
#define T_UDERROR_IND	21
#define T_OPTMGMT_ACK	22
#define T_ORDREL_IND	23
#define T_OPTDATA_REQ	24
#define T_ADDR_REQ	25
#define T_OPTDATA_IND	26
#define T_ADDR_ACK	27
#define T_CAPABILITY_REQ 28
#define T_CAPABILITY_ACK 30

/* Provider states */
#define TS_UNBND	0	/* unbound */
#define TS_WACK_BREQ	1	/* waiting ack of T_BIND_REQ */
#define TS_WACK_UREQ	2	/* waiting ack of T_UNBIND_REQ */
#define TS_IDLE		3	/* idle */
#define TS_WACK_OPTREQ	4	/* waiting ack of T_OPTMGMT_REQ */
#define TS_WACK_CREQ	5	/* waiting ack of T_CONN_REQ */
#define TS_WCON_CREQ	6	/* waiting T_CONN_CON */
#define TS_WRES_CIND	7	/* waiting T_CONN_RES */
#define TS_WACK_CRES	8	/* waiting ack of T_CONN_RES */
#define TS_DATA_XFER	9	/* data transfer */
#define TS_WIND_ORDREL	10	/* sent T_ORDREL_REQ, waiting T_ORDREL_IND */
#define TS_WREQ_ORDREL	11	/* got T_ORDREL_IND, may send T_ORDREL_REQ */
#define TS_WACK_DREQ6	12	/* waiting ack of T_DISCON_REQ from ... */
#define TS_WACK_DREQ7	13
#define TS_WACK_DREQ9	14
#define TS_WACK_DREQ10	15
#define TS_WACK_DREQ11	16
#define TS_NOSTATES	17

/* TPI errors (T_ERROR_ACK TLI_error): the XTI t_errno values */
#define TBADADDR	1
#define TBADOPT		2
#define TACCES		3
#define TBADF		4
#define TNOADDR		5
#define TOUTSTATE	6
#define TBADSEQ		7
#define TSYSERR		8
#define TLOOK		9
#define TBADDATA	10
#define TBUFOVFLW	11
#define TFLOW		12
#define TNODATA		13
#define TNODIS		14
#define TNOUDERR	15
#define TBADFLAG	16
#define TNOREL		17
#define TNOTSUPPORT	18
#define TSTATECHNG	19
#define TNOSTRUCTYPE	20
#define TBADNAME	21
#define TBADQLEN	22
#define TADDRBUSY	23
#define TINDOUT		24
#define TPROVMISMATCH	25
#define TRESQLEN	26
#define TRESADDR	27
#define TQFULL		28
#define TPROTO		29

/* SERV_type */
#define T_COTS		1	/* connection oriented */
#define T_COTS_ORD	2	/* ... with orderly release */
#define T_CLTS		3	/* connectionless */

/* PROVIDER_flag of T_info_ack */
#define SENDZERO	0x0001	/* zero-length TSDUs may be sent */
#define EXPINLINE	0x0002	/* expedited data inline */
#define XPG4_1		0x0004	/* supports XPG4 semantics */
#define ORDRELDATA	0x0008	/* data with orderly release (XTI's
				   T_ORDRELDATA in t_info.flags) */
#define T_SNDZERO	SENDZERO

/* MGMT_flags of T_optmgmt_req/ack (the XTI values) */
#ifndef T_NEGOTIATE
#define T_NEGOTIATE	0x004
#define T_CHECK		0x008
#define T_DEFAULT	0x010
#define T_SUCCESS	0x020
#define T_FAILURE	0x040
#define T_CURRENT	0x080
#define T_PARTSUCCESS	0x100
#define T_READONLY	0x200
#define T_NOTSUPPORT	0x400
#endif

/* DATA_flag / flags of data primitives */
#define T_MORE_FLAG	0x0001	/* more data follows in this TSDU */
#define T_ODF_MORE	T_MORE_FLAG
#define T_ODF_EX	0x0002	/* T_OPTDATA: expedited */

/* CAP_bits1 of T_capability_req/ack */
#define TC1_INFO	0x0001	/* INFO_ack is valid */
#define TC1_ACCEPTOR_ID	0x0002	/* ACCEPTOR_id is valid */
#define TC1_CAP_BITS2	0x80000000

/* Structures.  Lengths and offsets are in bytes within the M_PROTO block. */

struct T_conn_req {
	t_scalar_t PRIM_type;		/* T_CONN_REQ */
	t_scalar_t DEST_length;
	t_scalar_t DEST_offset;
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
};

struct T_conn_res {
	t_scalar_t PRIM_type;		/* T_CONN_RES */
	t_uscalar_t ACCEPTOR_id;	/* the accepting endpoint */
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
	t_scalar_t SEQ_number;		/* of the T_CONN_IND */
};

struct T_discon_req {
	t_scalar_t PRIM_type;		/* T_DISCON_REQ */
	t_scalar_t SEQ_number;		/* -1, or a T_CONN_IND to refuse */
};

struct T_data_req {
	t_scalar_t PRIM_type;		/* T_DATA_REQ */
	t_scalar_t MORE_flag;
};

struct T_exdata_req {
	t_scalar_t PRIM_type;		/* T_EXDATA_REQ */
	t_scalar_t MORE_flag;
};

struct T_info_req {
	t_scalar_t PRIM_type;		/* T_INFO_REQ */
};

struct T_bind_req {
	t_scalar_t PRIM_type;		/* T_BIND_REQ */
	t_scalar_t ADDR_length;
	t_scalar_t ADDR_offset;
	t_uscalar_t CONIND_number;	/* queue of pending T_CONN_INDs */
};

struct T_unbind_req {
	t_scalar_t PRIM_type;		/* T_UNBIND_REQ */
};

struct T_unitdata_req {
	t_scalar_t PRIM_type;		/* T_UNITDATA_REQ */
	t_scalar_t DEST_length;
	t_scalar_t DEST_offset;
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
};

struct T_optmgmt_req {
	t_scalar_t PRIM_type;		/* T_OPTMGMT_REQ */
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
	t_scalar_t MGMT_flags;
};

struct T_ordrel_req {
	t_scalar_t PRIM_type;		/* T_ORDREL_REQ */
};

struct T_optdata_req {
	t_scalar_t PRIM_type;		/* T_OPTDATA_REQ */
	t_scalar_t DATA_flag;		/* T_ODF_MORE, T_ODF_EX */
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
};

struct T_addr_req {
	t_scalar_t PRIM_type;		/* T_ADDR_REQ */
};

struct T_capability_req {
	t_scalar_t PRIM_type;		/* T_CAPABILITY_REQ */
	t_uscalar_t CAP_bits1;		/* TC1_* wanted */
};

struct T_conn_ind {
	t_scalar_t PRIM_type;		/* T_CONN_IND */
	t_scalar_t SRC_length;
	t_scalar_t SRC_offset;
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
	t_scalar_t SEQ_number;
};

struct T_conn_con {
	t_scalar_t PRIM_type;		/* T_CONN_CON */
	t_scalar_t RES_length;
	t_scalar_t RES_offset;
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
};

struct T_discon_ind {
	t_scalar_t PRIM_type;		/* T_DISCON_IND */
	t_scalar_t DISCON_reason;
	t_scalar_t SEQ_number;
};

struct T_data_ind {
	t_scalar_t PRIM_type;		/* T_DATA_IND */
	t_scalar_t MORE_flag;
};

struct T_exdata_ind {
	t_scalar_t PRIM_type;		/* T_EXDATA_IND */
	t_scalar_t MORE_flag;
};

struct T_info_ack {
	t_scalar_t PRIM_type;		/* T_INFO_ACK */
	t_scalar_t TSDU_size;
	t_scalar_t ETSDU_size;
	t_scalar_t CDATA_size;
	t_scalar_t DDATA_size;
	t_scalar_t ADDR_size;
	t_scalar_t OPT_size;
	t_scalar_t TIDU_size;
	t_scalar_t SERV_type;
	t_scalar_t CURRENT_state;
	t_scalar_t PROVIDER_flag;
};

struct T_bind_ack {
	t_scalar_t PRIM_type;		/* T_BIND_ACK */
	t_scalar_t ADDR_length;
	t_scalar_t ADDR_offset;
	t_uscalar_t CONIND_number;
};

struct T_error_ack {
	t_scalar_t PRIM_type;		/* T_ERROR_ACK */
	t_scalar_t ERROR_prim;		/* primitive in error */
	t_scalar_t TLI_error;		/* T* error */
	t_scalar_t UNIX_error;		/* errno, with TSYSERR */
};

struct T_ok_ack {
	t_scalar_t PRIM_type;		/* T_OK_ACK */
	t_scalar_t CORRECT_prim;	/* primitive acknowledged */
};

struct T_unitdata_ind {
	t_scalar_t PRIM_type;		/* T_UNITDATA_IND */
	t_scalar_t SRC_length;
	t_scalar_t SRC_offset;
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
};

struct T_uderror_ind {
	t_scalar_t PRIM_type;		/* T_UDERROR_IND */
	t_scalar_t DEST_length;
	t_scalar_t DEST_offset;
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
	t_scalar_t ERROR_type;
};

struct T_optmgmt_ack {
	t_scalar_t PRIM_type;		/* T_OPTMGMT_ACK */
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
	t_scalar_t MGMT_flags;
};

struct T_ordrel_ind {
	t_scalar_t PRIM_type;		/* T_ORDREL_IND */
};

struct T_optdata_ind {
	t_scalar_t PRIM_type;		/* T_OPTDATA_IND */
	t_scalar_t DATA_flag;
	t_scalar_t OPT_length;
	t_scalar_t OPT_offset;
};

struct T_addr_ack {
	t_scalar_t PRIM_type;		/* T_ADDR_ACK */
	t_scalar_t LOCADDR_length;
	t_scalar_t LOCADDR_offset;
	t_scalar_t REMADDR_length;
	t_scalar_t REMADDR_offset;
};

struct T_capability_ack {
	t_scalar_t PRIM_type;		/* T_CAPABILITY_ACK */
	t_uscalar_t CAP_bits1;
	struct T_info_ack INFO_ack;
	t_uscalar_t ACCEPTOR_id;
};

union T_primitives {
	t_scalar_t type;
	struct T_conn_req conn_req;
	struct T_conn_res conn_res;
	struct T_discon_req discon_req;
	struct T_data_req data_req;
	struct T_exdata_req exdata_req;
	struct T_info_req info_req;
	struct T_bind_req bind_req;
	struct T_unbind_req unbind_req;
	struct T_unitdata_req unitdata_req;
	struct T_optmgmt_req optmgmt_req;
	struct T_ordrel_req ordrel_req;
	struct T_optdata_req optdata_req;
	struct T_addr_req addr_req;
	struct T_capability_req capability_req;
	struct T_conn_ind conn_ind;
	struct T_conn_con conn_con;
	struct T_discon_ind discon_ind;
	struct T_data_ind data_ind;
	struct T_exdata_ind exdata_ind;
	struct T_info_ack info_ack;
	struct T_bind_ack bind_ack;
	struct T_error_ack error_ack;
	struct T_ok_ack ok_ack;
	struct T_unitdata_ind unitdata_ind;
	struct T_uderror_ind uderror_ind;
	struct T_optmgmt_ack optmgmt_ack;
	struct T_ordrel_ind ordrel_ind;
	struct T_optdata_ind optdata_ind;
	struct T_addr_ack addr_ack;
	struct T_capability_ack capability_ack;
};

/* Option header as carried in TPI option buffers (same as XTI t_opthdr) */
struct T_opthdr {
	t_uscalar_t len;	/* header + value, bytes */
	t_uscalar_t level;
	t_uscalar_t name;
	t_uscalar_t status;
};

#ifdef __cplusplus
}
#endif

#endif /* _SYS_TIHDR_H */
