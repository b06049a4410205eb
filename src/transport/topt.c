/*
 * topt.c -- XTI options management for every transport provider.
 *
 * How this works
 * --------------
 * topt_mgmt() makes two passes over the request's option buffer.  The
 * first (scan) checks the framing of every option and the size of every
 * value that counts, finds each option's definition, and adds up the
 * bytes the answer needs; it acts on nothing, so a malformed buffer is
 * refused (TBADOPT) with the endpoint unchanged.  One block of that size
 * is then allocated and the second pass acts on each option in order
 * (up to and including the first T_ALLOPT), writing one answer option per
 * option (or per option of the level for T_ALLOPT) with its status, and
 * keeping the worst status for MGMT_flags.
 *
 * The user's bytes are never read in place as structures: headers and
 * values are copied out with memcpy, so a buffer at any address and any
 * alignment is safe.  Every length is checked against what is left of
 * the buffer before it is used, and every sum of lengths with an
 * overflow check, since all of it comes from an unprivileged user.
 *
 * Nothing here locks: the provider calls it serialised per endpoint, and
 * the table is read-only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topt.h"

#define HDRLEN		sizeof(struct t_opthdr)
#define ALIGNSZ		sizeof(t_uscalar_t)
#define OUT_MAX		((size_t)0x7fffffff)	/* OPT_length is a t_scalar_t */

/* Bytes of padding after n to the next multiple of ALIGNSZ. */
static size_t pad(size_t n)
{
	return (ALIGNSZ - n % ALIGNSZ) % ALIGNSZ;
}

/* n rounded up to ALIGNSZ; n is always small here (an option). */
static size_t aligned(size_t n)
{
	return n + pad(n);
}

/* *acc += n, false on overflow or past OUT_MAX. */
static bool add_size(size_t *acc, size_t n)
{
	size_t r;

	if (__builtin_add_overflow(*acc, n, &r) || r > OUT_MAX)
		return false;
	*acc = r;
	return true;
}

/* Rank of a status for "the worst single result". */
static int rank(t_uscalar_t st)
{
	switch (st) {
	case T_SUCCESS:
		return 0;
	case T_PARTSUCCESS:
		return 1;
	case T_FAILURE:
		return 2;
	case T_READONLY:
		return 3;
	default:		/* T_NOTSUPPORT */
		return 4;
	}
}

static t_uscalar_t worse(t_uscalar_t a, t_uscalar_t b)
{
	return rank(a) >= rank(b) ? a : b;
}

/* ---- the definitions ---- */

const struct topt_def *topt_find(const struct topt_table *t,
				 t_uscalar_t level, t_uscalar_t name)
{
	if (t == NULL || t->defs == NULL)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->defs[i].level == level && t->defs[i].name == name)
			return &t->defs[i];
	if (name == TOPT_NONAME)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->defs[i].level == level && t->defs[i].oldname == name)
			return &t->defs[i];
	return NULL;
}

static bool level_known(const struct topt_table *t, t_uscalar_t level)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->defs[i].level == level)
			return true;
	return false;
}

static size_t bytes_max(const struct topt_def *d)
{
	return d->maxlen < TOPT_MAXBYTES ? d->maxlen : TOPT_MAXBYTES;
}

/* The largest value of d, in bytes. */
static size_t val_max(const struct topt_def *d)
{
	switch (d->type) {
	case TOPT_LINGER:
		return sizeof(struct t_linger);
	case TOPT_KPALIVE:
		return sizeof(struct t_kpalive);
	case TOPT_BYTES:
		return bytes_max(d);
	default:
		return sizeof(t_scalar_t);
	}
}

/* Room to reserve for a value of d that a provider hands back (a
 * granted or current TOPT_BYTES value may be up to TOPT_MAXBYTES). */
static size_t val_room(const struct topt_def *d)
{
	return d->type == TOPT_BYTES ? TOPT_MAXBYTES : val_max(d);
}

/* Is vlen a right size for a value of d?  (0 is handled by callers.) */
static bool size_ok(const struct topt_def *d, size_t vlen)
{
	switch (d->type) {
	case TOPT_SCALAR:
	case TOPT_BOOL:
		return vlen == sizeof(t_scalar_t);
	case TOPT_UCHAR:
		return vlen == 1 || vlen == sizeof(t_uscalar_t);
	case TOPT_LINGER:
		return vlen == sizeof(struct t_linger);
	case TOPT_KPALIVE:
		return vlen == sizeof(t_scalar_t) ||
		       vlen == sizeof(struct t_kpalive);
	case TOPT_BYTES:
		return vlen <= bytes_max(d);
	default:
		return false;	/* a table entry of no known type */
	}
}

void topt_default(const struct topt_def *d, union topt_val *v)
{
	memset(v, 0, sizeof(*v));
	switch (d->type) {
	case TOPT_LINGER:
		v->linger.l_onoff = d->def;
		v->linger.l_linger = T_UNSPEC;
		break;
	case TOPT_KPALIVE:
		v->kp.kp_onoff = d->def;
		v->kp.kp_timeout = T_UNSPEC;
		break;
	case TOPT_BYTES:
		v->bytes.len = 0;
		break;
	default:
		v->i = d->def;
		break;
	}
}

/* ---- values: bytes <-> union topt_val ---- */

static void decode(const struct topt_def *d, const unsigned char *p,
		   size_t vlen, union topt_val *v)
{
	memset(v, 0, sizeof(*v));
	switch (d->type) {
	case TOPT_UCHAR:
		if (vlen == 1)
			v->i = p[0];
		else
			memcpy(&v->i, p, sizeof(v->i));
		break;
	case TOPT_LINGER:
		memcpy(&v->linger, p, sizeof(v->linger));
		break;
	case TOPT_KPALIVE:
		memcpy(&v->kp.kp_onoff, p, sizeof(v->kp.kp_onoff));
		v->kp.kp_timeout = T_UNSPEC;
		if (vlen == sizeof(v->kp))
			memcpy(&v->kp.kp_timeout,
			       p + sizeof(v->kp.kp_onoff),
			       sizeof(v->kp.kp_timeout));
		break;
	case TOPT_BYTES:
		v->bytes.len = (unsigned int)vlen;
		memcpy(v->bytes.b, p, vlen);
		break;
	default:
		memcpy(&v->i, p, sizeof(v->i));
		break;
	}
}

/*
 * Write v of type type into p (room for val_max bytes), in the size the
 * user used (hint: the requested value's length; 0 for the natural
 * size).  Returns the length written.
 */
static size_t encode(unsigned type, const union topt_val *v, size_t hint,
		     unsigned char *p)
{
	size_t n;

	switch (type) {
	case TOPT_UCHAR:
		if (hint == 1) {
			p[0] = (unsigned char)v->i;
			return 1;
		}
		memcpy(p, &v->i, sizeof(v->i));
		return sizeof(v->i);
	case TOPT_LINGER:
		memcpy(p, &v->linger, sizeof(v->linger));
		return sizeof(v->linger);
	case TOPT_KPALIVE:
		if (hint == sizeof(v->kp.kp_onoff)) {
			memcpy(p, &v->kp.kp_onoff, sizeof(v->kp.kp_onoff));
			return sizeof(v->kp.kp_onoff);
		}
		memcpy(p, &v->kp, sizeof(v->kp));
		return sizeof(v->kp);
	case TOPT_BYTES:
		n = v->bytes.len < TOPT_MAXBYTES ? v->bytes.len : TOPT_MAXBYTES;
		memcpy(p, v->bytes.b, n);
		return n;
	default:
		memcpy(p, &v->i, sizeof(v->i));
		return sizeof(v->i);
	}
}

/* ---- legality of a value ---- */

/* x against [min, max]: T_SUCCESS, or T_PARTSUCCESS with x clamped
 * (TOPT_CLAMP), or T_FAILURE.  Unsigned when min >= 0. */
static t_uscalar_t range(const struct topt_def *d, t_scalar_t *x)
{
	bool low, high;

	if (d->min >= 0) {
		low = (t_uscalar_t)*x < (t_uscalar_t)d->min;
		high = (t_uscalar_t)*x > (t_uscalar_t)d->max;
	} else {
		low = *x < d->min;
		high = *x > d->max;
	}
	if (!low && !high)
		return T_SUCCESS;
	if (!(d->flags & TOPT_CLAMP))
		return T_FAILURE;
	*x = low ? d->min : d->max;
	return T_PARTSUCCESS;
}

/* A time that may be T_UNSPEC or T_INFINITE (linger) or T_UNSPEC only
 * (keep-alive); other negative values are illegal. */
static t_uscalar_t time_ok(const struct topt_def *d, t_scalar_t *x,
			   bool infinite_ok)
{
	if (*x == T_UNSPEC || (infinite_ok && *x == T_INFINITE))
		return T_SUCCESS;
	if (*x < 0)
		return T_FAILURE;
	return range(d, x);
}

/* Check *v for d: T_SUCCESS, T_PARTSUCCESS (*v clamped) or T_FAILURE. */
static t_uscalar_t legal(const struct topt_def *d, union topt_val *v)
{
	t_scalar_t on;

	switch (d->type) {
	case TOPT_SCALAR:
	case TOPT_UCHAR:
		return range(d, &v->i);
	case TOPT_BOOL:
		return v->i == T_YES || v->i == T_NO ? T_SUCCESS : T_FAILURE;
	case TOPT_LINGER:
		on = v->linger.l_onoff;
		if (on != T_YES && on != T_NO)
			return T_FAILURE;
		return time_ok(d, &v->linger.l_linger, true);
	case TOPT_KPALIVE:
		on = v->kp.kp_onoff;
		if (on != T_YES && on != T_NO && on != (T_YES | T_GARBAGE))
			return T_FAILURE;
		return time_ok(d, &v->kp.kp_timeout, false);
	case TOPT_BYTES:
		return T_SUCCESS;
	default:
		return T_FAILURE;
	}
}

/* ---- walking the request ---- */

/* One option of the request, copied out of it. */
struct topt_in {
	struct t_opthdr h;
	const unsigned char *val;	/* h.len - HDRLEN bytes */
	size_t vlen;
	const struct topt_def *d;	/* NULL: not supported */
};

/*
 * The option at *off of (in, inlen): 0 with *o filled and *off moved to
 * the next header, 1 at the end, -1 when malformed.
 */
static int next_opt(const unsigned char *in, size_t inlen, size_t *off,
		    struct topt_in *o)
{
	size_t rem, p;

	if (*off >= inlen)
		return 1;
	rem = inlen - *off;
	if (rem < HDRLEN)
		return -1;
	memcpy(&o->h, in + *off, HDRLEN);
	if (o->h.len < HDRLEN || o->h.len > rem)
		return -1;
	o->val = in + *off + HDRLEN;
	o->vlen = o->h.len - HDRLEN;
	*off += o->h.len;
	p = pad(*off);
	*off = p < inlen - *off ? *off + p : inlen;
	return 0;
}

/* What topt_mgmt and topt_assoc are doing. */
enum act { A_NEGOTIATE, A_CHECK, A_DEFAULT, A_CURRENT, A_ASSOC };

/* Does the value of known option o have a size its action accepts? */
static bool value_ok(const struct topt_in *o, enum act a)
{
	switch (a) {
	case A_DEFAULT:
	case A_CURRENT:
		return true;		/* values are ignored */
	case A_CHECK:
		return o->vlen == 0 || size_ok(o->d, o->vlen);
	default:
		if (o->vlen == 0 && (o->d->flags & TOPT_EMPTY))
			return true;
		return size_ok(o->d, o->vlen);
	}
}

/* May option d be part of a T_ALLOPT answer for action a? */
static bool in_allopt(const struct topt_def *d, enum act a, bool priv)
{
	if (d->flags & TOPT_NOALL)
		return false;
	if (a != A_NEGOTIATE)
		return true;
	if (d->flags & TOPT_RDONLY)
		return false;
	return priv || !(d->flags & TOPT_PRIV);
}

/* Answer bytes of T_ALLOPT at level for action a. */
static size_t allopt_size(const struct topt_table *t, t_uscalar_t level,
			  enum act a, bool priv)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->defs[i].level == level &&
		    in_allopt(&t->defs[i], a, priv))
			n += aligned(HDRLEN + val_room(&t->defs[i]));
	return n > 0 ? n : aligned(HDRLEN);
}

/* Answer bytes for option o (not T_ALLOPT). */
static size_t answer_size(const struct topt_in *o, enum act a)
{
	size_t vmax = o->d != NULL ? val_room(o->d) : 0;

	if (a == A_DEFAULT || a == A_CURRENT)
		return aligned(HDRLEN + vmax);
	/* the value requested, or one granted in another length */
	return aligned(HDRLEN + (o->vlen > vmax ? o->vlen : vmax));
}

/*
 * First pass: check every option, return 0 with *need the answer's
 * size, or the TLI error (*unixerr for TSYSERR).
 */
static int scan(const struct topt_table *t, enum act a, const unsigned char *in,
		size_t inlen, bool priv, size_t *need, int *unixerr)
{
	struct topt_in o;
	size_t off = 0;
	bool acting = true;	/* not past a T_ALLOPT */
	int r;

	*need = 0;
	while ((r = next_opt(in, inlen, &off, &o)) == 0) {
		size_t n;

		if (o.h.name == T_ALLOPT) {
			if (a == A_CHECK || a == A_ASSOC || o.vlen != 0)
				return TBADOPT;
			n = level_known(t, o.h.level) ?
			    allopt_size(t, o.h.level, a, priv) :
			    aligned(HDRLEN);
		} else {
			o.d = topt_find(t, o.h.level, o.h.name);
			if (o.d != NULL && !value_ok(&o, a))
				return TBADOPT;
			n = answer_size(&o, a);
		}
		if (acting && !add_size(need, n)) {
			*unixerr = ENOMEM;
			return TSYSERR;
		}
		if (o.h.name == T_ALLOPT)
			acting = false;
	}
	return r < 0 ? TBADOPT : 0;
}

/* ---- writing the answer ---- */

struct obuf {
	unsigned char *p;
	size_t len, max;
	t_uscalar_t worst;
};

/* Append one option; false when it does not fit (nothing written). */
static bool put_raw(unsigned char *buf, size_t *len, size_t max,
		    t_uscalar_t level, t_uscalar_t name, t_uscalar_t status,
		    const void *val, size_t vlen)
{
	struct t_opthdr h;
	size_t at, need;

	if (*len > max || vlen > OUT_MAX || pad(*len) > max - *len)
		return false;
	at = *len + pad(*len);
	need = aligned(HDRLEN + vlen);
	if (need > max - at)
		return false;
	memset(buf + *len, 0, at - *len);
	h.len = (t_uscalar_t)(HDRLEN + vlen);
	h.level = level;
	h.name = name;
	h.status = status;
	memcpy(buf + at, &h, HDRLEN);
	if (vlen > 0)
		memcpy(buf + at + HDRLEN, val, vlen);
	memset(buf + at + HDRLEN + vlen, 0, need - HDRLEN - vlen);
	*len = at + need;
	return true;
}

static void out(struct obuf *ob, t_uscalar_t level, t_uscalar_t name,
		t_uscalar_t status, const void *val, size_t vlen)
{
	/* scan() sized the block for every answer: cannot fail */
	if (put_raw(ob->p, &ob->len, ob->max, level, name, status, val, vlen))
		ob->worst = worse(ob->worst, status);
}

/* Answer with value v of option o's definition, in the user's size. */
static void out_val(struct obuf *ob, const struct topt_in *o,
		    t_uscalar_t status, const union topt_val *v, size_t hint)
{
	unsigned char b[sizeof(union topt_val)];
	size_t n = encode(o->d->type, v, hint, b);

	out(ob, o->h.level, o->h.name, status, b, n);
}

/* Answer with the value the user sent, unchanged. */
static void out_echo(struct obuf *ob, const struct topt_in *o,
		     t_uscalar_t status)
{
	out(ob, o->h.level, o->h.name, status, o->val, o->vlen);
}

/* Normalise what a provider's set returned. */
static t_uscalar_t set_status(t_uscalar_t st)
{
	return st == T_SUCCESS || st == T_PARTSUCCESS ? st : T_FAILURE;
}

/* The status a value for option d would get, and *v clamped; no set. */
static t_uscalar_t judge(const struct topt_in *o, bool priv,
			 union topt_val *v)
{
	if ((o->d->flags & TOPT_PRIV) && !priv)
		return T_NOTSUPPORT;
	if (o->d->flags & TOPT_RDONLY)
		return T_READONLY;
	if (o->vlen == 0 && (o->d->flags & TOPT_EMPTY)) {
		memset(v, 0, sizeof(*v));
		return T_SUCCESS;
	}
	decode(o->d, o->val, o->vlen, v);
	return legal(o->d, v);
}

/* T_NEGOTIATE or T_CHECK (with a value) of known option o. */
static void do_set(const struct topt_table *t, void *ep, struct obuf *ob,
		   const struct topt_in *o, enum act a, bool priv)
{
	union topt_val v;
	t_uscalar_t st = judge(o, priv, &v);

	if (st != T_SUCCESS && st != T_PARTSUCCESS) {
		out_echo(ob, o, st);
		return;
	}
	if (a == A_NEGOTIATE)
		st = worse(st, t->ops != NULL && t->ops->set != NULL ?
			   set_status(t->ops->set(ep, o->d, &v)) : T_FAILURE);
	if (st == T_PARTSUCCESS)
		out_val(ob, o, st, &v, o->vlen);
	else
		out_echo(ob, o, st);
}

/* T_CHECK of known option o with no value: is it there, may it be set? */
static void do_probe(struct obuf *ob, const struct topt_in *o, bool priv)
{
	t_uscalar_t st = T_SUCCESS;

	if ((o->d->flags & TOPT_PRIV) && !priv)
		st = T_NOTSUPPORT;
	else if (o->d->flags & TOPT_RDONLY)
		st = T_READONLY;
	out(ob, o->h.level, o->h.name, st, NULL, 0);
}

/* T_DEFAULT or T_CURRENT of d, answered under name. */
static void do_get(const struct topt_table *t, void *ep, struct obuf *ob,
		   const struct topt_def *d, t_uscalar_t name, enum act a)
{
	struct topt_in o = { .d = d };
	t_uscalar_t st = (d->flags & TOPT_RDONLY) ? T_READONLY : T_SUCCESS;
	union topt_val v;

	o.h.level = d->level;
	o.h.name = name;
	if (a == A_DEFAULT) {
		topt_default(d, &v);
	} else if (t->ops == NULL || t->ops->get == NULL ||
		   t->ops->get(ep, d, &v) != 0) {
		out(ob, d->level, name, T_FAILURE, NULL, 0);
		return;
	}
	out_val(ob, &o, st, &v, 0);
}

/* T_NEGOTIATE of d to its default, for T_ALLOPT. */
static void do_reset(const struct topt_table *t, void *ep, struct obuf *ob,
		     const struct topt_def *d)
{
	struct topt_in o = { .d = d };
	union topt_val v, asked;
	t_uscalar_t st = T_FAILURE;

	o.h.level = d->level;
	o.h.name = d->name;
	topt_default(d, &v);
	asked = v;
	if (t->ops != NULL && t->ops->set != NULL)
		st = set_status(t->ops->set(ep, d, &v));
	out_val(ob, &o, st, st == T_PARTSUCCESS ? &v : &asked, 0);
}

static void do_allopt(const struct topt_table *t, void *ep, struct obuf *ob,
		      const struct topt_in *o, enum act a, bool priv)
{
	bool any = false;

	for (size_t i = 0; i < t->n; i++) {
		const struct topt_def *d = &t->defs[i];

		if (d->level != o->h.level)
			continue;
		any = true;
		if (!in_allopt(d, a, priv))
			continue;
		if (a == A_NEGOTIATE)
			do_reset(t, ep, ob, d);
		else
			do_get(t, ep, ob, d, d->name, a);
	}
	if (!any)
		out(ob, o->h.level, T_ALLOPT, T_NOTSUPPORT, NULL, 0);
}

/* Second pass: act on each option, up to the first T_ALLOPT. */
static void act(const struct topt_table *t, void *ep, enum act a,
		const unsigned char *in, size_t inlen, bool priv,
		struct obuf *ob)
{
	struct topt_in o;
	size_t off = 0;

	while (next_opt(in, inlen, &off, &o) == 0) {
		if (o.h.name == T_ALLOPT) {
			do_allopt(t, ep, ob, &o, a, priv);
			return;
		}
		o.d = topt_find(t, o.h.level, o.h.name);
		if (o.d == NULL) {
			if (a == A_NEGOTIATE || a == A_CHECK)
				out_echo(ob, &o, T_NOTSUPPORT);
			else
				out(ob, o.h.level, o.h.name, T_NOTSUPPORT,
				    NULL, 0);
		} else if (a == A_DEFAULT || a == A_CURRENT) {
			do_get(t, ep, ob, o.d, o.h.name, a);
		} else if (a == A_CHECK && o.vlen == 0) {
			do_probe(ob, &o, priv);
		} else {
			do_set(t, ep, ob, &o, a, priv);
		}
	}
}

int topt_mgmt(const struct topt_table *t, void *ep, t_scalar_t mgmt_flags,
	      const unsigned char *in, size_t inlen, bool privileged,
	      mblk_t **outp, t_scalar_t *resultp, int *unixerr)
{
	struct obuf ob = { .worst = T_SUCCESS };
	size_t need;
	enum act a;
	mblk_t *mp;
	int err;

	*outp = NULL;
	*resultp = 0;
	*unixerr = 0;
	switch (mgmt_flags) {
	case T_NEGOTIATE:
		a = A_NEGOTIATE;
		break;
	case T_CHECK:
		a = A_CHECK;
		break;
	case T_DEFAULT:
		a = A_DEFAULT;
		break;
	case T_CURRENT:
		a = A_CURRENT;
		break;
	default:
		return TBADFLAG;
	}
	if (t == NULL || (t->n > 0 && t->defs == NULL)) {
		*unixerr = EINVAL;
		return TSYSERR;
	}
	if (in == NULL)
		inlen = 0;
	if ((err = scan(t, a, in, inlen, privileged, &need, unixerr)) != 0)
		return err;
	if ((mp = allocb(need, BPRI_MED)) == NULL) {
		*unixerr = ENOMEM;
		return TSYSERR;
	}
	ob.p = mp->b_rptr;
	ob.max = need;
	act(t, ep, a, in, inlen, privileged, &ob);
	mp->b_wptr = mp->b_rptr + ob.len;
	*outp = mp;
	*resultp = (t_scalar_t)ob.worst;
	return 0;
}

int topt_assoc(const struct topt_table *t, void *ep, const unsigned char *in,
	       size_t inlen, bool privileged)
{
	struct topt_in o;
	size_t off = 0, need;
	int unixerr;

	if (in == NULL)
		inlen = 0;
	if (t == NULL || (t->n > 0 && t->defs == NULL))
		return inlen == 0 ? 0 : TBADOPT;
	if (scan(t, A_ASSOC, in, inlen, privileged, &need, &unixerr) != 0)
		return TBADOPT;
	while (next_opt(in, inlen, &off, &o) == 0) {
		union topt_val v;
		t_uscalar_t st;

		o.d = topt_find(t, o.h.level, o.h.name);
		if (o.d == NULL || !(o.d->flags & TOPT_ASSOC))
			continue;
		st = judge(&o, privileged, &v);
		if ((st == T_SUCCESS || st == T_PARTSUCCESS) &&
		    t->ops != NULL && t->ops->set != NULL)
			(void)t->ops->set(ep, o.d, &v);
	}
	return 0;
}

size_t topt_size(const struct topt_table *t)
{
	size_t n = 0;

	if (t == NULL || t->defs == NULL)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		n += aligned(HDRLEN + val_max(&t->defs[i]));
	return n;
}

bool topt_put(unsigned char *buf, size_t *len, size_t max, t_uscalar_t level,
	      t_uscalar_t name, enum topt_type type, const union topt_val *v,
	      t_uscalar_t status)
{
	unsigned char b[sizeof(union topt_val)];
	size_t n;

	if (buf == NULL || len == NULL || v == NULL || type > TOPT_UCHAR)
		return false;
	if (type == TOPT_BYTES && v->bytes.len > TOPT_MAXBYTES)
		return false;
	n = encode(type, v, 0, b);
	return put_raw(buf, len, max, level, name, status, b, n);
}

/* ---- values kept by the provider ---- */

int topt_store_init(struct topt_store *s, const struct topt_table *t)
{
	s->t = t;
	s->vals = calloc(t->n > 0 ? t->n : 1, sizeof(*s->vals));
	if (s->vals == NULL)
		return ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		topt_default(&t->defs[i], &s->vals[i]);
	return 0;
}

void topt_store_fini(struct topt_store *s)
{
	free(s->vals);
	s->vals = NULL;
}

/* The slot of d in s, or NULL when d is not an entry of s's table. */
static union topt_val *slot(struct topt_store *s, const struct topt_def *d)
{
	uintptr_t off;

	if (s == NULL || s->vals == NULL || s->t == NULL)
		return NULL;
	off = (uintptr_t)d - (uintptr_t)s->t->defs;
	if ((uintptr_t)d < (uintptr_t)s->t->defs || off % sizeof(*d) != 0 ||
	    off / sizeof(*d) >= s->t->n)
		return NULL;
	return &s->vals[off / sizeof(*d)];
}

static int store_get(void *ep, const struct topt_def *d, union topt_val *v)
{
	union topt_val *sv = slot(ep, d);

	if (sv == NULL)
		return -1;
	*v = *sv;
	return 0;
}

static t_uscalar_t store_set(void *ep, const struct topt_def *d,
			     union topt_val *v)
{
	union topt_val *sv = slot(ep, d);

	if (sv == NULL)
		return T_FAILURE;
	*sv = *v;
	return T_SUCCESS;
}

const struct topt_ops topt_store_ops = { store_get, store_set };
