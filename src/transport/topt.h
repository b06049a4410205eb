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
 * T_READONLY, T_NOTSUPPORT; an option or a level the provider does not
 * know is T_NOTSUPPORT, never an error of the call) and the overall
 * result (the worst single status).  The option name the user wrote is
 * the name returned, so both numberings of an option work.
 *
 * The option buffer (XNS 5.2, t_optmgmt): options one after the other,
 * each a struct t_opthdr (len = header + value) and its value, the next
 * header at the next multiple of sizeof(t_uscalar_t) counted from the
 * start of the buffer (what T_OPT_NEXTHDR computes).  TBADOPT, before
 * anything is acted on, for: bytes left over that cannot hold a header,
 * a len shorter than the header or running past the buffer, a value of
 * the wrong size for a known option's type where the value counts
 * (T_NEGOTIATE -- where no value at all is wrong too, but for
 * TOPT_EMPTY options --, T_CHECK with a value, topt_assoc; T_DEFAULT and
 * T_CURRENT ignore values), T_ALLOPT with a value or with T_CHECK (XNS
 * allows T_ALLOPT only with T_NEGOTIATE, T_DEFAULT and T_CURRENT).  A
 * value of the right size but an illegal content (a boolean other than
 * T_YES/T_NO, a negative linger time, a scalar out of range without
 * TOPT_CLAMP) is that option's T_FAILURE.
 *
 * Unlike the letter of XNS 5.2 t_optmgmt ("all options must address the
 * same level ... or the level specified is unsupported: TBADOPT"), a
 * request may mix levels (as Solaris and programs written for it do) and
 * an unknown level gets T_NOTSUPPORT for its options, like an unknown
 * option at a known level.
 *
 * Returned values (XNS 5.2): for T_SUCCESS, T_FAILURE, T_NOTSUPPORT and
 * T_READONLY the value is the one requested, byte for byte; for
 * T_PARTSUCCESS it is the value granted.  T_DEFAULT/T_CURRENT return the
 * default/current value (T_READONLY for TOPT_RDONLY options); an option
 * not supported is returned as its header only.  T_CHECK of a header
 * alone returns the header only with T_SUCCESS, T_READONLY or
 * T_NOTSUPPORT.  T_ALLOPT: T_NEGOTIATE sets every option of the level
 * that the caller may set (not TOPT_RDONLY, TOPT_PRIV only when
 * privileged, never TOPT_NOALL) to its default; T_DEFAULT/T_CURRENT
 * return every option of the level but TOPT_NOALL ones; the options
 * after a T_ALLOPT are not acted on ("the function returns as soon as
 * this option has been processed").
 *
 * Options sent with T_CONN_REQ, T_CONN_RES, T_UNITDATA_REQ and
 * T_OPTDATA_REQ go through topt_assoc(): validated the same way, and
 * applied with the provider's set operation (only TOPT_ASSOC options are
 * meaningful there; others, unknown ones, privileged ones without
 * privilege, read-only ones and illegal values are ignored as XTI
 * allows).
 *
 * A provider with no kernel object behind an endpoint keeps values in a
 * struct topt_store and uses topt_store_ops as its ops.
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
	TOPT_SCALAR,		/* t_scalar_t in [min, max]; compared as
				   t_uscalar_t when min >= 0 (the XNS type
				   of XTI_RCVBUF & co.), so huge values are
				   above max, not below min */
	TOPT_BOOL,		/* t_uscalar_t T_YES or T_NO */
	TOPT_LINGER,		/* struct t_linger: l_onoff T_YES/T_NO,
				   l_linger T_UNSPEC, T_INFINITE or in
				   [min, max] (negative: illegal) */
	TOPT_KPALIVE,		/* struct t_kpalive (kp_timeout optional:
				   4 or 8 bytes); kp_onoff T_NO, T_YES or
				   T_YES|T_GARBAGE, kp_timeout T_UNSPEC or
				   in [min, max] */
	TOPT_BYTES,		/* 0..maxlen bytes (maxlen <= TOPT_MAXBYTES) */
	TOPT_UCHAR,		/* unsigned char in [min, max], given as one
				   byte (XNS 5.2) or in a t_uscalar_t (XNS
				   4); returned in the size the user wrote,
				   a t_uscalar_t for T_DEFAULT/T_CURRENT */
};

/* topt_def.flags */
#define TOPT_RDONLY	0x01	/* negotiate -> T_READONLY */
#define TOPT_PRIV	0x02	/* negotiating needs privilege (root):
				   others get T_NOTSUPPORT (reading the
				   default or current value is allowed) */
#define TOPT_ASSOC	0x04	/* association-related: also accepted on
				   T_CONN_REQ/T_UNITDATA_REQ/T_OPTDATA_REQ */
#define TOPT_NOALL	0x08	/* left out of T_ALLOPT */
#define TOPT_CLAMP	0x10	/* out-of-range values are clamped and
				   reported T_PARTSUCCESS, not T_FAILURE */
#define TOPT_EMPTY	0x20	/* negotiating it with no value (header
				   only) sets the value 0: XTI_DEBUG, where
				   "no value" turns debugging off */

struct topt_def {
	t_uscalar_t level;
	t_uscalar_t name;	/* XNS 5.2 number */
	t_uscalar_t oldname;	/* older number at this level, TOPT_NONAME */
	unsigned char type;	/* enum topt_type */
	unsigned char flags;	/* TOPT_* */
	unsigned short maxlen;	/* TOPT_BYTES: longest value */
	t_scalar_t def;		/* default (scalar, bool, uchar; linger:
				   l_onoff, l_linger T_UNSPEC; kpalive:
				   kp_onoff, kp_timeout T_UNSPEC) */
	t_scalar_t min, max;	/* accepted range of a scalar, uchar,
				   l_linger or kp_timeout */
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
	 * T_PARTSUCCESS (granted differs from asked) or T_FAILURE (nothing
	 * changed); anything else is taken as T_FAILURE. */
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
 * return (b_rptr..b_wptr; may be empty; every option padded to a
 * multiple of sizeof(t_uscalar_t), the last one too) and *resultp the
 * MGMT_flags of the ack (the overall result: the worst status, T_SUCCESS
 * when there is no option).  Or a TLI error: TBADFLAG (mgmt_flags not
 * exactly one of the four actions), TBADOPT (see above), TSYSERR with
 * *unixerr (ENOMEM; EINVAL for a NULL table); nothing changed on the
 * endpoint for TBADFLAG/TBADOPT, which are found before acting.
 */
int topt_mgmt(const struct topt_table *t, void *ep, t_scalar_t mgmt_flags,
	      const unsigned char *in, size_t inlen, bool privileged,
	      mblk_t **outp, t_scalar_t *resultp, int *unixerr);

/* Apply the options of a T_CONN_REQ/T_CONN_RES/T_UNITDATA_REQ/
 * T_OPTDATA_REQ: 0, or TBADOPT for a malformed buffer or T_ALLOPT
 * (nothing applied). */
int topt_assoc(const struct topt_table *t, void *ep, const unsigned char *in,
	       size_t inlen, bool privileged);

/* Bytes needed to return every option of the table once, each padded
 * (T_info_ack OPT_size; the largest answer to T_ALLOPT at any level).
 * A request naming options many times can get a larger answer. */
size_t topt_size(const struct topt_table *t);

/* The definition of (level, name) in t, by either name (the XNS 5.2 name
 * first); NULL if none. */
const struct topt_def *topt_find(const struct topt_table *t,
				 t_uscalar_t level, t_uscalar_t name);

/* The default value of option d. */
void topt_default(const struct topt_def *d, union topt_val *v);

/* Append option (level, name) with value v of type type and status to
 * the buffer (buf, *len, max): for building the options of indications
 * (T_UNITDATA_IND, T_CONN_IND...).  The option starts at *len rounded up
 * to a multiple of sizeof(t_uscalar_t) (relative to buf); *len ends past
 * its padding.  TOPT_UCHAR values are written in a t_uscalar_t, TOPT_KPALIVE
 * with both fields.  false (nothing written) when it does not fit or
 * v->bytes.len > TOPT_MAXBYTES. */
bool topt_put(unsigned char *buf, size_t *len, size_t max, t_uscalar_t level,
	      t_uscalar_t name, enum topt_type type, const union topt_val *v,
	      t_uscalar_t status);

/* Values kept by the provider itself, one slot per table entry. */
struct topt_store {
	const struct topt_table *t;
	union topt_val *vals;		/* t->n values, initialised to defaults */
};
/* 0, or ENOMEM. */
int topt_store_init(struct topt_store *s, const struct topt_table *t);
void topt_store_fini(struct topt_store *s);
/* ops for a provider whose endpoint's first member is a struct topt_store */
extern const struct topt_ops topt_store_ops;

/* The XTI_GENERIC entries every provider's table starts with: XTI_DEBUG,
 * XTI_LINGER, XTI_RCVBUF, XTI_RCVLOWAT, XTI_SNDBUF, XTI_SNDLOWAT, with
 * the provider's default buffer size. */
#define TOPT_GENERIC_DEFS(bufdef)					\
	{ XTI_GENERIC, XTI_DEBUG, TOPT_NONAME, TOPT_SCALAR,		\
	  TOPT_PRIV | TOPT_EMPTY, 0, 0, 0, 0x7fffffff },		\
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
