/*
 * topt.h -- XTI options management, shared by every transport provider.
 *
 * How this works
 * --------------
 * A provider describes the options it knows in a table of struct
 * topt_def (level, XNS 5.2 name, the older name at that level if it has
 * one, value type, flags, default and accepted range), and gives two
 * operations: read an option's current value on an endpoint, and set it
 * (the provider applies the value -- to a kernel socket, or to its own
 * state -- and reports back the value actually granted).  topt_mgmt()
 * then does everything T_OPTMGMT_REQ asks, the same way for every
 * provider: it walks the request's t_opthdr buffer (rejecting malformed
 * buffers with TBADOPT), acts for T_NEGOTIATE, T_CHECK, T_DEFAULT and
 * T_CURRENT (T_ALLOPT expanding to every option of a level), sets each
 * returned option's status (T_SUCCESS, T_PARTSUCCESS, T_FAILURE,
 * T_READONLY, T_NOTSUPPORT; an option the provider does not know is
 * T_NOTSUPPORT, never an error of the call) and the overall result (the
 * worst single status).  The option name the user wrote is the name
 * returned, so both numberings of an option work.
 *
 * Options sent with T_CONN_REQ, T_CONN_RES, T_UNITDATA_REQ and
 * T_OPTDATA_REQ go through topt_assoc(): validated the same way, and
 * applied with the provider's set operation (only TOPT_ASSOC options are
 * meaningful there; others are ignored as XTI allows).
 *
 * A provider with no kernel object behind an endpoint keeps values in a
 * struct topt_store and uses topt_store_get/topt_store_set as its ops.
 *
 * Nothing here sleeps or takes locks: callers serialise per endpoint.
 */
#ifndef STREAMS_TOPT_H
#define STREAMS_TOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stream.h>
#include <sys/tihdr.h>
#include <xti.h>
#include <xti_inet.h>

#define TOPT_NONAME	((t_uscalar_t)-1)	/* no older name */
#define TOPT_MAXBYTES	40			/* TOPT_BYTES values (IP_OPTIONS) */

/* Value types: how the value after the t_opthdr looks. */
enum topt_type {
	TOPT_SCALAR,		/* t_scalar_t in [min, max] */
	TOPT_BOOL,		/* t_uscalar_t T_YES or T_NO */
	TOPT_LINGER,		/* struct t_linger */
	TOPT_KPALIVE,		/* struct t_kpalive (kp_timeout optional) */
	TOPT_BYTES,		/* 0..maxlen bytes */
	TOPT_UCHAR,		/* unsigned char in a t_uscalar_t (IP_TOS, IP_TTL) */
};

/* topt_def.flags */
#define TOPT_RDONLY	0x01	/* negotiate -> T_READONLY */
#define TOPT_PRIV	0x02	/* negotiating needs privilege (root):
				   others get T_NOTSUPPORT */
#define TOPT_ASSOC	0x04	/* association-related: also accepted on
				   T_CONN_REQ/T_UNITDATA_REQ/T_OPTDATA_REQ */
#define TOPT_NOALL	0x08	/* left out of T_ALLOPT */
#define TOPT_CLAMP	0x10	/* out-of-range values are clamped and
				   reported T_PARTSUCCESS, not T_FAILURE */

struct topt_def {
	t_uscalar_t level;
	t_uscalar_t name;	/* XNS 5.2 number */
	t_uscalar_t oldname;	/* older number at this level, TOPT_NONAME */
	unsigned char type;	/* enum topt_type */
	unsigned char flags;	/* TOPT_* */
	unsigned short maxlen;	/* TOPT_BYTES: longest value */
	t_scalar_t def;		/* default (scalar, bool; linger: l_onoff T_NO) */
	t_scalar_t min, max;	/* accepted range of a scalar */
};

/* An option value, whatever its type. */
union topt_val {
	t_scalar_t i;				/* SCALAR, BOOL, UCHAR */
	struct t_linger linger;
	struct t_kpalive kp;
	struct {
		unsigned int len;
		unsigned char b[TOPT_MAXBYTES];
	} bytes;
};

struct topt_ops {
	/* The current value of option d on endpoint ep: 0, or -1 when it
	 * cannot be read now (that option is returned with T_FAILURE). */
	int (*get)(void *ep, const struct topt_def *d, union topt_val *v);
	/* Set option d to *v (already checked against the type and range);
	 * on return *v holds the value granted.  Returns T_SUCCESS,
	 * T_PARTSUCCESS (granted differs from asked) or T_FAILURE. */
	t_uscalar_t (*set)(void *ep, const struct topt_def *d,
			   union topt_val *v);
};

struct topt_table {
	const struct topt_def *defs;
	size_t n;
	const struct topt_ops *ops;
};

/*
 * Answer a T_OPTMGMT_REQ: mgmt_flags is MGMT_flags, (in, inlen) the
 * request's option buffer, privileged whether the opener had privilege.
 * Returns 0 with *outp a new M_DATA block holding the option buffer to
 * return (b_rptr..b_wptr; may be empty) and *resultp the MGMT_flags of
 * the ack (the overall result); or a TLI error (TBADFLAG, TBADOPT,
 * TSYSERR with *unixerr, e.g. ENOMEM), nothing changed on the endpoint
 * for TBADFLAG/TBADOPT found before acting.
 */
int topt_mgmt(const struct topt_table *t, void *ep, t_scalar_t mgmt_flags,
	      const unsigned char *in, size_t inlen, bool privileged,
	      mblk_t **outp, t_scalar_t *resultp, int *unixerr);

/* Apply the options of a T_CONN_REQ/T_CONN_RES/T_UNITDATA_REQ/
 * T_OPTDATA_REQ: 0, or TBADOPT for a malformed buffer (nothing applied). */
int topt_assoc(const struct topt_table *t, void *ep, const unsigned char *in,
	       size_t inlen, bool privileged);

/* Bytes needed to return every option of the table (T_info_ack
 * OPT_size, and the largest T_OPTMGMT_ACK topt_mgmt can build). */
size_t topt_size(const struct topt_table *t);

/* The definition of (level, name) in t, by either name; NULL if none. */
const struct topt_def *topt_find(const struct topt_table *t,
				 t_uscalar_t level, t_uscalar_t name);

/* Append option (level, name) with value v of type type and status to
 * the buffer (buf, *len, max): for building the options of indications
 * (T_UNITDATA_IND, T_CONN_IND...).  false when it does not fit. */
bool topt_put(unsigned char *buf, size_t *len, size_t max, t_uscalar_t level,
	      t_uscalar_t name, enum topt_type type, const union topt_val *v,
	      t_uscalar_t status);

/* Values kept by the provider itself, one slot per table entry. */
struct topt_store {
	const struct topt_table *t;
	union topt_val *vals;		/* t->n values, initialised to defaults */
};
int topt_store_init(struct topt_store *s, const struct topt_table *t);
void topt_store_fini(struct topt_store *s);
/* ops for a provider whose endpoint's first member is a struct topt_store */
extern const struct topt_ops topt_store_ops;

/* The XTI_GENERIC entries every provider's table starts with: XTI_DEBUG,
 * XTI_LINGER, XTI_RCVBUF, XTI_RCVLOWAT, XTI_SNDBUF, XTI_SNDLOWAT, with
 * the provider's default buffer size. */
#define TOPT_GENERIC_DEFS(bufdef)					\
	{ XTI_GENERIC, XTI_DEBUG, TOPT_NONAME, TOPT_SCALAR, TOPT_PRIV, 0,	\
	  0, 0, 0x7fffffff },						\
	{ XTI_GENERIC, XTI_LINGER, TOPT_NONAME, TOPT_LINGER, 0, 0,	\
	  T_NO, 0, 0x7fffffff },					\
	{ XTI_GENERIC, XTI_RCVBUF, TOPT_NONAME, TOPT_SCALAR, TOPT_CLAMP, 0, \
	  (bufdef), 1, 0x7fffffff },					\
	{ XTI_GENERIC, XTI_RCVLOWAT, TOPT_NONAME, TOPT_SCALAR, TOPT_CLAMP, 0, \
	  1, 1, 0x7fffffff },						\
	{ XTI_GENERIC, XTI_SNDBUF, TOPT_NONAME, TOPT_SCALAR, TOPT_CLAMP, 0, \
	  (bufdef), 1, 0x7fffffff },					\
	{ XTI_GENERIC, XTI_SNDLOWAT, TOPT_NONAME, TOPT_SCALAR, TOPT_CLAMP, 0, \
	  1, 1, 0x7fffffff }

#endif
