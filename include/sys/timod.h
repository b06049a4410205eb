/*
 * <sys/timod.h> -- the timod module's ioctls.  Pushed on a transport
 * stream, timod turns each of these (sent with I_STR, the TPI request as
 * data) into the TPI primitive, and the provider's answer into the ioctl's
 * result: the ack as returned data, or T_ERROR_ACK as the return value
 * (TLI error in the low byte, errno in the next: see below).
 */
#ifndef _SYS_TIMOD_H
#define _SYS_TIMOD_H

#include <sys/tihdr.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIMOD		('T' << 8)
#define TI_GETINFO	(TIMOD | 140)	/* T_INFO_REQ -> T_INFO_ACK */
#define TI_OPTMGMT	(TIMOD | 141)	/* T_OPTMGMT_REQ -> T_OPTMGMT_ACK */
#define TI_BIND		(TIMOD | 142)	/* T_BIND_REQ -> T_BIND_ACK */
#define TI_UNBIND	(TIMOD | 143)	/* T_UNBIND_REQ -> T_OK_ACK */
#define TI_GETMYNAME	(TIMOD | 144)	/* local address (netbuf) */
#define TI_GETPEERNAME	(TIMOD | 145)	/* remote address (netbuf) */
#define TI_SETMYNAME	(TIMOD | 146)	/* accepted, EINVAL */
#define TI_SETPEERNAME	(TIMOD | 147)	/* accepted, EINVAL */
#define TI_SYNC		(TIMOD | 148)	/* struct ti_sync_req -> _ack */
#define TI_GETADDRS	(TIMOD | 149)	/* T_ADDR_REQ -> T_ADDR_ACK */
#define TI_CAPABILITY	(TIMOD | 150)	/* T_CAPABILITY_REQ -> _ACK */

/*
 * A failed TI_* ioctl returns -1 with errno 0... not quite: it returns a
 * positive value (ioc_rval) built as (UNIX_error << 8) | TLI_error when
 * the provider answered T_ERROR_ACK, and -1 with errno for system errors.
 */
#define TI_ERR(tli, sys)	(((sys) << 8) | (tli))
#define TI_TLIERR(rv)		((rv) & 0xff)
#define TI_SYSERR(rv)		(((rv) >> 8) & 0xff)

/* TI_SYNC */
struct ti_sync_req {
	uint32_t tsr_flags;
};
#define TSRF_INFO_REQ		0x01	/* return T_info_ack */
#define TSRF_IS_EXP_IN_RCVBUF	0x02	/* expedited data pending? */
#define TSRF_QLEN_REQ		0x04	/* return the bound qlen */

struct ti_sync_ack {
	struct T_info_ack tsa_info;	/* PRIM_type T_INFO_ACK */
	uint32_t tsa_qlen;
	uint32_t tsa_flags;
};
#define TSAF_EXP_QUEUED		0x01

#ifdef __cplusplus
}
#endif

#endif /* _SYS_TIMOD_H */
