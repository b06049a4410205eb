/*
 * tpi.h -- what every transport provider does with TPI the same way.
 *
 * How this works
 * --------------
 * A request arrives on a provider's write side as an M_PROTO or M_PCPROTO
 * block holding one TPI structure (<sys/tihdr.h>), with any address and
 * options at (offset, length) pairs inside that same block, and user data
 * in M_DATA blocks after it.  tpi_check() validates all of that before a
 * provider looks at a field, so provider code never reads outside a block:
 * a block too short for its primitive, or a pair that points outside it
 * (negative, past the end, or overflowing), is rejected with the error the
 * field implies (TBADADDR, TBADOPT, TBADDATA; TSYSERR/EINVAL for a short
 * structure).  Requests a provider must acknowledge get T_ERROR_ACK; the
 * unacknowledged ones (T_DATA_REQ, T_EXDATA_REQ, T_OPTDATA_REQ,
 * T_ORDREL_REQ) get the TPI's fatal answer, M_ERROR with EPROTO, and a
 * block too short to hold even PRIM_type can only be answered that way.
 *
 * tpi_allowed() is the TPI state table: which requests the user may send
 * in which provider state (TS_*).  The reply helpers build the ack in the
 * request's own block when it is big enough and not shared, so answering
 * allocates nothing in the common case.
 */
#ifndef STREAMS_TPI_H
#define STREAMS_TPI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stream.h>
#include <sys/tihdr.h>

/* Size of the structure of primitive prim; 0 if prim is unknown. */
size_t tpi_size(t_scalar_t prim);

/* Is prim a request a provider acknowledges (T_OK_ACK/T_ERROR_ACK or its
 * own ack)?  The others are answered with M_ERROR when malformed. */
bool tpi_acked(t_scalar_t prim);

/*
 * Validate the request mp (its first block must be M_PROTO/M_PCPROTO).
 * Returns 0 with *primp set when the structure and every region it names
 * lie within the first block.  Otherwise returns the TLI error with
 * *unixerr set for TSYSERR, and *primp the primitive, or -1 when the
 * block cannot even hold PRIM_type.  Unknown primitive: TNOTSUPPORT.
 */
int tpi_check(const mblk_t *mp, t_scalar_t *primp, int *unixerr);

/* The bytes at (off, len) of mp's first block, or NULL if the region is
 * not inside it.  An empty region (len 0) is always valid, whatever its
 * offset: users commonly leave the offset of an absent field 0. */
static inline void *tpi_region(const mblk_t *mp, t_scalar_t off,
			       t_scalar_t len)
{
	size_t size = (size_t)(mp->b_wptr - mp->b_rptr);

	if (len == 0)
		return mp->b_rptr;
	if (off < 0 || len < 0 || (size_t)off > size ||
	    (size_t)len > size - (size_t)off)
		return NULL;
	return mp->b_rptr + off;
}

/* May the user send request prim in TPI state state (TS_*)? */
bool tpi_allowed(int state, t_scalar_t prim);

/*
 * A block of at least size bytes of type type for a reply: mp itself
 * when its first data block is big enough and not shared (any blocks
 * after it are freed), else a new block (mp freed).  NULL when no memory:
 * mp is then left untouched for the caller to retry.
 */
mblk_t *tpi_reuse(mblk_t *mp, size_t size, unsigned char type);

/* Reply on q (the provider's write queue: sent up its read side) with
 * T_OK_ACK or T_ERROR_ACK for prim, consuming mp.  When no memory is left
 * they fall back to M_ERROR ENOMEM, so a waiting user never hangs. */
void tpi_ok_ack(queue_t *q, mblk_t *mp, t_scalar_t prim);
void tpi_error_ack(queue_t *q, mblk_t *mp, t_scalar_t prim, int tli,
		   int unixerr);

/* The same for a provider that sends everything up through its own read
 * queue (putq on RD(wq): in order with the indications queued there, its
 * read service procedure passing them on), as the loopback and Internet
 * providers do. */
void tpi_up(queue_t *wq, mblk_t *mp);
void tpi_ok_ack_up(queue_t *wq, mblk_t *mp, t_scalar_t prim);
void tpi_error_ack_up(queue_t *wq, mblk_t *mp, t_scalar_t prim, int tli,
		      int unixerr);

/* T_ADDR_ACK of the addresses (loc, ll) and (rem, rl) (a length 0 leaves
 * one out) into bp, a block of TPI_ADDR_ACK_SIZE(the longest address)
 * from tpi_proto(). */
#define TPI_ADDR_ACK_SIZE(max)	(sizeof(struct T_addr_ack) + 2 * (max) + 8)
void tpi_addr_ack_fill(mblk_t *bp, const void *loc, size_t ll,
		       const void *rem, size_t rl);

/* The T_CAPABILITY_ACK answering the (checked) T_CAPABILITY_REQ mp, in
 * its block when it can: the bits asked for that are in can, ia and
 * token for TC1_INFO and TC1_ACCEPTOR_ID.  NULL without memory (mp
 * untouched). */
mblk_t *tpi_capability_ack(mblk_t *mp, t_uscalar_t can,
			   const struct T_info_ack *ia, t_uscalar_t token);

/* The T_OPTMGMT_ACK of result with the option buffer out (topt_mgmt's;
 * consumed): NULL without memory. */
mblk_t *tpi_optmgmt_ack(mblk_t *out, t_scalar_t result);

/* The fatal answer: M_ERROR with err for both directions, consuming mp. */
void tpi_fatal(queue_t *q, mblk_t *mp, int err);

/* Answer a request that failed tpi_check() (or any other rejection)
 * the way its kind requires: T_ERROR_ACK for acknowledged requests,
 * M_ERROR EPROTO otherwise. */
void tpi_reject(queue_t *q, mblk_t *mp, t_scalar_t prim, int tli,
		int unixerr);

/* A new M_PROTO/M_PCPROTO block of size bytes, zeroed; NULL if none. */
mblk_t *tpi_proto(size_t size, unsigned char type);

/* Copy (p, n) into bp's block at *off rounded up to 4 (*off advanced
 * past it, b_wptr set to *off): the region's offset, 0 if n is 0. */
t_scalar_t tpi_put_bytes(mblk_t *bp, size_t *off, const void *p, size_t n);

/* Total bytes of M_DATA in mp's continuation (after the M_PROTO block). */
size_t tpi_datalen(const mblk_t *mp);

#endif
