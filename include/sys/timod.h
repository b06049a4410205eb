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

/*
 * Each is sent with I_STR.  ic_dp holds the TPI request (its structure
 * and any address/options after it, offsets relative to its start),
 * ic_len its length; on success the returned data is the provider's ack
 * (structure + its addresses/options), ic_len its length.
 */
#define TIMOD		('T' << 8)
#define TI_GETINFO	(TIMOD | 140)	/* T_info_req -> T_info_ack */
#define TI_OPTMGMT	(TIMOD | 141)	/* T_optmgmt_req -> T_optmgmt_ack */
#define TI_BIND		(TIMOD | 142)	/* T_bind_req -> T_bind_ack */
#define TI_UNBIND	(TIMOD | 143)	/* T_unbind_req -> T_ok_ack */
#define TI_GETMYNAME	(TIMOD | 144)	/* no request; returns the local
					   address bytes (via T_ADDR_REQ) */
#define TI_GETPEERNAME	(TIMOD | 145)	/* no request; the remote address
					   bytes, ENOTCONN when none */
#define TI_SETMYNAME	(TIMOD | 146)	/* passed to the provider as an
					   M_IOCTL (EINVAL if it has none) */
#define TI_SETPEERNAME	(TIMOD | 147)	/* likewise */
#define TI_SYNC		(TIMOD | 148)	/* ti_sync_req -> ti_sync_ack */
#define TI_GETADDRS	(TIMOD | 149)	/* T_addr_req -> T_addr_ack */
#define TI_CAPABILITY	(TIMOD | 150)	/* T_capability_req -> _ack */

/*
 * A request the provider refuses with T_ERROR_ACK makes the ioctl return
 * a positive value, (UNIX_error << 8) | TLI_error, with no data; -1 with
 * errno is a system error of the ioctl itself (EINVAL: the request does
 * not match the ioctl or is too short; ETIME; ...).
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
	struct T_info_ack tsa_info;	/* PRIM_type T_INFO_ACK; CURRENT_state */
	uint32_t tsa_qlen;		/* CONIND_number of the last bind */
	uint32_t tsa_flags;		/* TSAF_* */
};
#define TSAF_EXP_QUEUED		0x01

#ifdef __cplusplus
}
#endif

#endif /* _SYS_TIMOD_H */
