/*
 * test_topt_mgmt -- topt_mgmt() as XNS 5.2 t_optmgmt describes it, on a
 * table built here and an endpoint whose values live in a topt_store:
 * T_NEGOTIATE, T_CHECK, T_DEFAULT and T_CURRENT; every status
 * (T_SUCCESS, T_PARTSUCCESS by clamping and by the provider granting
 * less, T_FAILURE for illegal values and for the provider refusing,
 * T_READONLY, T_NOTSUPPORT for unknown options, unknown levels and
 * privileged options) and the overall result as the worst of them;
 * the value returned for each status; T_ALLOPT per level for each
 * action (read-only, privileged and TOPT_NOALL options, options after
 * it not acted on); both numberings of an option; the boolean, linger,
 * keep-alive, unsigned char and byte-string rules; XTI_DEBUG with no
 * value; TBADFLAG.  Each answer is compared byte for byte with the
 * buffer it must be, built here option by option.
 */
#include "t.h"
#include "harness.h"
#include "topt.h"

#define LVL_X	0x7000		/* a private level: a signed scalar */

static const struct topt_def defs[] = {
	TOPT_GENERIC_DEFS(4096),		/* 0-5 */
	{ INET_IP, T_IP_OPTIONS, IP_OPTIONS, TOPT_BYTES, TOPT_ASSOC, 40,
	  0, 0, 0 },				/* 6 */
	{ INET_IP, T_IP_TOS, IP_TOS, TOPT_UCHAR, TOPT_ASSOC, 0, 0, 0, 255 },
	{ INET_IP, T_IP_TTL, IP_TTL, TOPT_UCHAR, TOPT_ASSOC | TOPT_CLAMP, 0,
	  64, 1, 255 },				/* 8 */
	{ INET_IP, T_IP_REUSEADDR, IP_REUSEADDR, TOPT_BOOL, 0, 0, T_NO, 0, 0 },
	{ INET_IP, T_IP_BROADCAST, IP_BROADCAST, TOPT_BOOL, TOPT_NOALL, 0,
	  T_NO, 0, 0 },				/* 10 */
	{ INET_TCP, T_TCP_NODELAY, TOPT_NONAME, TOPT_BOOL, 0, 0, T_NO, 0, 0 },
	{ INET_TCP, T_TCP_MAXSEG, TOPT_NONAME, TOPT_SCALAR, TOPT_RDONLY, 0,
	  536, 0, 65535 },			/* 12 */
	{ INET_TCP, T_TCP_KEEPALIVE, TOPT_NONAME, TOPT_KPALIVE, 0, 0, T_NO,
	  1, 10000 },				/* 13 */
	{ LVL_X, 1, 101, TOPT_SCALAR, 0, 0, 0, -10, 10 },	/* 14 */
	{ LVL_X, 2, TOPT_NONAME, TOPT_LINGER, 0, 0, T_NO, -100, 100 },
};

/* The endpoint: values in a store, and knobs for the provider's ops. */
struct ep {
	struct topt_store s;	/* first: topt_store_ops need it there */
	int sets;		/* set calls */
	bool fail_set, bogus_set, fail_get;
	t_scalar_t grant_max;	/* scalars above it: granted it, if > 0 */
};

static int ep_get(void *e, const struct topt_def *d, union topt_val *v)
{
	struct ep *ep = e;

	if (ep->fail_get)
		return -1;
	return topt_store_ops.get(e, d, v);
}

/* Grants at most 65536 for XTI_SNDBUF, like a kernel would. */
static t_uscalar_t ep_set(void *e, const struct topt_def *d,
			  union topt_val *v)
{
	struct ep *ep = e;

	ep->sets++;
	if (ep->fail_set || ep->bogus_set) {
		memset(v, 0x5a, sizeof(*v));	/* must not be returned */
		return ep->fail_set ? T_FAILURE : 0x999;
	}
	if (ep->grant_max > 0 && d->type == TOPT_SCALAR &&
	    v->i > ep->grant_max) {
		v->i = ep->grant_max;
		topt_store_ops.set(e, d, v);
		return T_PARTSUCCESS;
	}
	if (d->level == XTI_GENERIC && d->name == XTI_SNDBUF &&
	    (t_uscalar_t)v->i > 65536) {
		v->i = 65536;
		topt_store_ops.set(e, d, v);
		return T_PARTSUCCESS;
	}
	return topt_store_ops.set(e, d, v);
}

static const struct topt_ops ops = { ep_get, ep_set };
static const struct topt_table tab = { defs, sizeof(defs) / sizeof(defs[0]),
				       &ops };

/* ---- option buffers ---- */

struct buf {
	unsigned char b[8192];
	size_t len;
};

static void b_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

/* Append an option at the next multiple of 4 (the last one unpadded). */
static void b_opt(struct buf *b, t_uscalar_t level, t_uscalar_t name,
		  t_uscalar_t status, const void *val, size_t vlen)
{
	size_t at = (b->len + 3) & ~(size_t)3;
	struct t_opthdr h = { (t_uscalar_t)(sizeof(h) + vlen), level, name,
			      status };

	REQUIRE(at + sizeof(h) + vlen <= sizeof(b->b));
	memset(b->b + b->len, 0, at - b->len);
	memcpy(b->b + at, &h, sizeof(h));
	if (vlen > 0)
		memcpy(b->b + at + sizeof(h), val, vlen);
	b->len = at + sizeof(h) + vlen;
}

/* An answer: every option padded, the last one too. */
static void b_pad(struct buf *b)
{
	b->len = (b->len + 3) & ~(size_t)3;
}

static void dump(const char *what, const struct buf *b)
{
	fprintf(stderr, "  %s (%zu):", what, b->len);
	for (size_t i = 0; i < b->len; i++)
		fprintf(stderr, "%s%02x", i % 4 ? "" : " ", b->b[i]);
	fprintf(stderr, "\n");
}

static void check_buf(const char *file, int line, const struct buf *got,
		      const struct buf *want)
{
	t_checked++;
	if (got->len != want->len || memcmp(got->b, want->b, want->len)) {
		t_failed++;
		fprintf(stderr, "%s:%d: FAIL: answer differs\n", file, line);
		dump("got ", got);
		dump("want", want);
	}
}
#define CHECK_BUF(g, w) check_buf(__FILE__, __LINE__, (g), (w))

/* topt_mgmt on in; the answer copied to out. */
static int mgmt(struct ep *ep, t_scalar_t flags, const struct buf *in,
		bool priv, struct buf *out, t_scalar_t *result)
{
	mblk_t *mp = (mblk_t *)&mp;
	t_scalar_t r = -1;
	int ue = -1, e;
	/* an exact copy: ASan sees any read past the end */
	unsigned char *copy = malloc(in->len > 0 ? in->len : 1);

	REQUIRE(copy != NULL);
	memcpy(copy, in->b, in->len);
	e = topt_mgmt(&tab, ep, flags, copy, in->len, priv, &mp, &r, &ue);
	free(copy);
	b_init(out);
	if (e == 0) {
		size_t n;

		REQUIRE(mp != NULL);
		n = (size_t)(mp->b_wptr - mp->b_rptr);
		REQUIRE(n <= sizeof(out->b));
		CHECK_EQ(mp->b_datap->db_type, M_DATA);
		CHECK_EQ((uintptr_t)mp->b_rptr % sizeof(t_uscalar_t), 0);
		CHECK_EQ(ue, 0);
		memcpy(out->b, mp->b_rptr, n);
		out->len = n;
		freemsg(mp);
	} else {
		CHECK(mp == NULL);
		if (e != TSYSERR)
			CHECK_EQ(ue, 0);
	}
	*result = r;
	return e;
}

static void ep_init(struct ep *ep)
{
	memset(ep, 0, sizeof(*ep));
	REQUIRE(topt_store_init(&ep->s, &tab) == 0);
}

static t_scalar_t S(t_scalar_t x)
{
	return x;
}
#define V(x) (&(t_scalar_t){ S(x) }), sizeof(t_scalar_t)

/* The current value of a scalar option through T_CURRENT. */
static t_scalar_t current(struct ep *ep, t_uscalar_t level, t_uscalar_t name)
{
	struct buf in, out;
	struct t_opthdr h;
	t_scalar_t r, v = -12345;

	b_init(&in);
	b_opt(&in, level, name, 0, NULL, 0);
	REQUIRE(mgmt(ep, T_CURRENT, &in, false, &out, &r) == 0);
	REQUIRE(out.len >= sizeof(h) + sizeof(v));
	memcpy(&h, out.b, sizeof(h));
	CHECK_EQ(h.status, T_SUCCESS);
	memcpy(&v, out.b + sizeof(h), sizeof(v));
	return v;
}

/* One option in, one answer expected. */
static void one(struct ep *ep, t_scalar_t flags, bool priv, t_uscalar_t level,
		t_uscalar_t name, const void *val, size_t vlen,
		t_uscalar_t status, const void *rval, size_t rlen, int line)
{
	struct buf in, out, want;
	t_scalar_t r;
	int e;

	b_init(&in);
	b_opt(&in, level, name, 0, val, vlen);
	b_init(&want);
	b_opt(&want, level, name, status, rval, rlen);
	b_pad(&want);
	e = mgmt(ep, flags, &in, priv, &out, &r);
	t_checked++;
	if (e != 0 || r != (t_scalar_t)status) {
		t_failed++;
		fprintf(stderr, "%s:%d: FAIL: error %d result %#x, want %#x\n",
			__FILE__, line, e, (unsigned)r, (unsigned)status);
	}
	check_buf(__FILE__, line, &out, &want);
}
/* ONE(ep, flags, priv, level, name, val, vlen, status, rval, rlen) */
#define ONE(...) one(__VA_ARGS__, __LINE__)

/* ---- the tests ---- */

static void test_negotiate_scalar(void)
{
	struct ep ep;
	t_scalar_t big = (t_scalar_t)0xfffffff0u;

	ep_init(&ep);
	/* in range: T_SUCCESS, the value requested */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_SNDBUF, V(8192),
	    T_SUCCESS, V(8192));
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_SNDBUF), 8192);
	/* the provider grants less: T_PARTSUCCESS, the value granted */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_SNDBUF, V(100000),
	    T_PARTSUCCESS, V(65536));
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_SNDBUF), 65536);
	/* TOPT_CLAMP below min: clamped to min, T_PARTSUCCESS */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_RCVBUF, V(0),
	    T_PARTSUCCESS, V(1));
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_RCVBUF), 1);
	/* min >= 0: compared unsigned, so 0xfffffff0 is above max */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_RCVBUF, &big,
	    sizeof(big), T_PARTSUCCESS, V(0x7fffffff));
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_RCVBUF), 0x7fffffff);
	/* no TOPT_CLAMP: out of range is T_FAILURE, the value requested,
	 * nothing changed; signed when min < 0 */
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 1, V(-4), T_SUCCESS, V(-4));
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 1, V(11), T_FAILURE, V(11));
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 1, V(-11), T_FAILURE, V(-11));
	CHECK_EQ(current(&ep, LVL_X, 1), -4);
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 1, V(-10), T_SUCCESS, V(-10));
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 1, V(10), T_SUCCESS, V(10));
	CHECK_EQ(current(&ep, LVL_X, 1), 10);
	/* the provider refuses: T_FAILURE with the value requested; a
	 * status it should not return counts as T_FAILURE */
	ep.fail_set = true;
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_SNDBUF, V(4000),
	    T_FAILURE, V(4000));
	ep.fail_set = false;
	ep.bogus_set = true;
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_SNDLOWAT, V(3),
	    T_FAILURE, V(3));
	ep.bogus_set = false;
	/* clamped, then refused: T_FAILURE with the value requested */
	ep.fail_set = true;
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_RCVBUF, V(0),
	    T_FAILURE, V(0));
	ep.fail_set = false;
	topt_store_fini(&ep.s);
}

static void test_negotiate_bool(void)
{
	struct ep ep;

	ep_init(&ep);
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_NODELAY, V(T_YES),
	    T_SUCCESS, V(T_YES));
	CHECK_EQ(current(&ep, INET_TCP, T_TCP_NODELAY), T_YES);
	/* anything but T_YES/T_NO: T_FAILURE, unchanged */
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_NODELAY, V(2),
	    T_FAILURE, V(2));
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_NODELAY, V(-1),
	    T_FAILURE, V(-1));
	CHECK_EQ(current(&ep, INET_TCP, T_TCP_NODELAY), T_YES);
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_NODELAY, V(T_NO),
	    T_SUCCESS, V(T_NO));
	CHECK_EQ(current(&ep, INET_TCP, T_TCP_NODELAY), T_NO);
	topt_store_fini(&ep.s);
}

static void test_negotiate_linger(void)
{
	static const struct { struct t_linger l; t_uscalar_t st; } cases[] = {
		{ { T_YES, 5 }, T_SUCCESS },
		{ { T_YES, 0 }, T_SUCCESS },
		{ { T_YES, T_INFINITE }, T_SUCCESS },
		{ { T_YES, T_UNSPEC }, T_SUCCESS },
		{ { T_NO, T_UNSPEC }, T_SUCCESS },
		{ { T_YES, 0x7fffffff }, T_SUCCESS },
		{ { T_YES, -5 }, T_FAILURE },		/* negative: illegal */
		{ { T_YES, T_INVALID }, T_FAILURE },
		{ { T_NO, -100 }, T_FAILURE },
		{ { 2, 5 }, T_FAILURE },		/* l_onoff not a bool */
		{ { -1, 5 }, T_FAILURE },
	};
	struct t_linger cur = { T_YES, 7 };
	struct buf in, out, want;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_LINGER,
		    &cases[i].l, sizeof(cases[i].l), cases[i].st,
		    &cases[i].l, sizeof(cases[i].l));
	/* a range with negative numbers does not make them legal */
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 2,
	    (&(struct t_linger){ T_YES, -5 }), sizeof(cur), T_FAILURE,
	    (&(struct t_linger){ T_YES, -5 }), sizeof(cur));
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 2,
	    (&(struct t_linger){ T_YES, 101 }), sizeof(cur), T_FAILURE,
	    (&(struct t_linger){ T_YES, 101 }), sizeof(cur));
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 2,
	    (&(struct t_linger){ T_YES, 100 }), sizeof(cur), T_SUCCESS,
	    (&(struct t_linger){ T_YES, 100 }), sizeof(cur));
	/* a failure changes nothing: the last success stays */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_LINGER, &cur,
	    sizeof(cur), T_SUCCESS, &cur, sizeof(cur));
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_LINGER,
	    (&(struct t_linger){ T_YES, -7 }), sizeof(cur), T_FAILURE,
	    (&(struct t_linger){ T_YES, -7 }), sizeof(cur));
	b_init(&in);
	b_opt(&in, XTI_GENERIC, XTI_LINGER, 0, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, XTI_GENERIC, XTI_LINGER, T_SUCCESS, &cur, sizeof(cur));
	CHECK_BUF(&out, &want);
	/* the default: l_onoff T_NO, l_linger T_UNSPEC */
	CHECK_EQ(mgmt(&ep, T_DEFAULT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, XTI_GENERIC, XTI_LINGER, T_SUCCESS,
	      (&(struct t_linger){ T_NO, T_UNSPEC }), sizeof(cur));
	CHECK_BUF(&out, &want);
	topt_store_fini(&ep.s);
}

static void test_negotiate_kpalive(void)
{
	struct t_kpalive kp8 = { T_YES | T_GARBAGE, 10 };
	t_scalar_t on = T_YES;
	struct buf in, out, want;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	/* kp_timeout left out: 4 bytes, answered in 4 bytes */
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_KEEPALIVE, &on,
	    sizeof(on), T_SUCCESS, &on, sizeof(on));
	b_init(&in);
	b_opt(&in, INET_TCP, T_TCP_KEEPALIVE, 0, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, INET_TCP, T_TCP_KEEPALIVE, T_SUCCESS,
	      (&(struct t_kpalive){ T_YES, T_UNSPEC }),
	      sizeof(struct t_kpalive));
	CHECK_BUF(&out, &want);
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_KEEPALIVE, &kp8,
	    sizeof(kp8), T_SUCCESS, &kp8, sizeof(kp8));
	/* kp_onoff other than T_NO, T_YES, T_YES|T_GARBAGE */
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_KEEPALIVE,
	    (&(struct t_kpalive){ T_GARBAGE, 10 }), sizeof(kp8), T_FAILURE,
	    (&(struct t_kpalive){ T_GARBAGE, 10 }), sizeof(kp8));
	/* negative, T_INFINITE, below min (no clamp), above max */
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_KEEPALIVE,
	    (&(struct t_kpalive){ T_YES, -5 }), sizeof(kp8), T_FAILURE,
	    (&(struct t_kpalive){ T_YES, -5 }), sizeof(kp8));
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_KEEPALIVE,
	    (&(struct t_kpalive){ T_YES, T_INFINITE }), sizeof(kp8),
	    T_FAILURE, (&(struct t_kpalive){ T_YES, T_INFINITE }),
	    sizeof(kp8));
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_KEEPALIVE,
	    (&(struct t_kpalive){ T_YES, 0 }), sizeof(kp8), T_FAILURE,
	    (&(struct t_kpalive){ T_YES, 0 }), sizeof(kp8));
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_KEEPALIVE,
	    (&(struct t_kpalive){ T_YES, 10001 }), sizeof(kp8), T_FAILURE,
	    (&(struct t_kpalive){ T_YES, 10001 }), sizeof(kp8));
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, INET_TCP, T_TCP_KEEPALIVE, T_SUCCESS, &kp8, sizeof(kp8));
	CHECK_BUF(&out, &want);
	topt_store_fini(&ep.s);
}

static void test_uchar_bytes(void)
{
	unsigned char tos = 0x10, opts[40];
	t_uscalar_t ttl = 300;
	struct buf in, out, want;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	for (size_t i = 0; i < sizeof(opts); i++)
		opts[i] = (unsigned char)(i * 7 + 1);
	/* one byte (XNS 5.2): answered in one byte, padded */
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_TOS, &tos, 1, T_SUCCESS,
	    &tos, 1);
	CHECK_EQ(current(&ep, INET_IP, T_IP_TOS), 0x10);
	/* in a t_uscalar_t (XNS 4), out of range: T_FAILURE */
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_TOS, &ttl, sizeof(ttl),
	    T_FAILURE, &ttl, sizeof(ttl));
	/* TOPT_CLAMP: 300 becomes 255; 0 becomes 1; one byte stays one */
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_TTL, &ttl, sizeof(ttl),
	    T_PARTSUCCESS, V(255));
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_TTL, "\0", 1,
	    T_PARTSUCCESS, "\1", 1);
	CHECK_EQ(current(&ep, INET_IP, T_IP_TTL), 1);
	/* bytes: 0 and 40 bytes, read back */
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_OPTIONS, opts, 0,
	    T_SUCCESS, opts, 0);
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_OPTIONS, opts, 40,
	    T_SUCCESS, opts, 40);
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_OPTIONS, opts, 13,
	    T_SUCCESS, opts, 13);
	b_init(&in);
	b_opt(&in, INET_IP, T_IP_OPTIONS, 0, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, INET_IP, T_IP_OPTIONS, T_SUCCESS, opts, 13);
	b_pad(&want);
	CHECK_BUF(&out, &want);
	/* the default of a byte string: empty */
	CHECK_EQ(mgmt(&ep, T_DEFAULT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, INET_IP, T_IP_OPTIONS, T_SUCCESS, NULL, 0);
	CHECK_BUF(&out, &want);
	/* T_DEFAULT/T_CURRENT of a uchar: in a t_uscalar_t */
	ONE(&ep, T_DEFAULT, false, INET_IP, T_IP_TTL, NULL, 0, T_SUCCESS,
	    V(64));
	ONE(&ep, T_CURRENT, false, INET_IP, T_IP_TTL, NULL, 0, T_SUCCESS,
	    V(1));
	topt_store_fini(&ep.s);
}

/* XNS: privileged options are T_NOTSUPPORT for others; XTI_DEBUG with
 * no value turns debugging off. */
static void test_privileged(void)
{
	struct ep ep;

	ep_init(&ep);
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_DEBUG, V(3),
	    T_NOTSUPPORT, V(3));
	CHECK_EQ(ep.sets, 0);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_DEBUG), 0);
	ONE(&ep, T_NEGOTIATE, true, XTI_GENERIC, XTI_DEBUG, V(3), T_SUCCESS,
	    V(3));
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_DEBUG), 3);
	/* no value: off (privileged); not privileged: T_NOTSUPPORT */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_DEBUG, NULL, 0,
	    T_NOTSUPPORT, NULL, 0);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_DEBUG), 3);
	ONE(&ep, T_NEGOTIATE, true, XTI_GENERIC, XTI_DEBUG, NULL, 0,
	    T_SUCCESS, NULL, 0);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_DEBUG), 0);
	/* T_CHECK says the same; reading is allowed to all */
	ONE(&ep, T_CHECK, false, XTI_GENERIC, XTI_DEBUG, NULL, 0,
	    T_NOTSUPPORT, NULL, 0);
	ONE(&ep, T_CHECK, true, XTI_GENERIC, XTI_DEBUG, NULL, 0, T_SUCCESS,
	    NULL, 0);
	ONE(&ep, T_CHECK, false, XTI_GENERIC, XTI_DEBUG, V(1), T_NOTSUPPORT,
	    V(1));
	ONE(&ep, T_DEFAULT, false, XTI_GENERIC, XTI_DEBUG, NULL, 0,
	    T_SUCCESS, V(0));
	ONE(&ep, T_CURRENT, false, XTI_GENERIC, XTI_DEBUG, NULL, 0,
	    T_SUCCESS, V(0));
	topt_store_fini(&ep.s);
}

static void test_readonly(void)
{
	struct ep ep;

	ep_init(&ep);
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_MAXSEG, V(1000),
	    T_READONLY, V(1000));
	ONE(&ep, T_NEGOTIATE, true, INET_TCP, T_TCP_MAXSEG, V(1000),
	    T_READONLY, V(1000));
	CHECK_EQ(ep.sets, 0);
	ONE(&ep, T_CHECK, false, INET_TCP, T_TCP_MAXSEG, NULL, 0, T_READONLY,
	    NULL, 0);
	ONE(&ep, T_CHECK, false, INET_TCP, T_TCP_MAXSEG, V(7), T_READONLY,
	    V(7));
	ONE(&ep, T_DEFAULT, false, INET_TCP, T_TCP_MAXSEG, NULL, 0,
	    T_READONLY, V(536));
	ONE(&ep, T_CURRENT, false, INET_TCP, T_TCP_MAXSEG, NULL, 0,
	    T_READONLY, V(536));
	/* read-only beats an illegal value: T_READONLY */
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, T_TCP_MAXSEG, V(-1),
	    T_READONLY, V(-1));
	topt_store_fini(&ep.s);
}

/* Unknown options and levels: T_NOTSUPPORT, never an error. */
static void test_notsupport(void)
{
	struct ep ep;

	ep_init(&ep);
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, 0x4242, V(1), T_NOTSUPPORT,
	    V(1));
	ONE(&ep, T_NEGOTIATE, false, 0x5151, XTI_SNDBUF, V(1), T_NOTSUPPORT,
	    V(1));
	/* any value size: returned as it came, padded */
	ONE(&ep, T_NEGOTIATE, false, 0x5151, 9, "abc", 3, T_NOTSUPPORT,
	    "abc", 3);
	ONE(&ep, T_NEGOTIATE, false, 0x5151, 9, NULL, 0, T_NOTSUPPORT, NULL,
	    0);
	ONE(&ep, T_CHECK, false, 0x5151, 9, "abcde", 5, T_NOTSUPPORT,
	    "abcde", 5);
	ONE(&ep, T_CHECK, false, XTI_GENERIC, 0x4242, NULL, 0, T_NOTSUPPORT,
	    NULL, 0);
	/* T_DEFAULT/T_CURRENT: the header only */
	ONE(&ep, T_DEFAULT, false, 0x5151, 9, "abcde", 5, T_NOTSUPPORT,
	    NULL, 0);
	ONE(&ep, T_CURRENT, false, XTI_GENERIC, 0x4242, NULL, 0,
	    T_NOTSUPPORT, NULL, 0);
	/* TOPT_NONAME is not a name a user can reach */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, TOPT_NONAME, V(1),
	    T_NOTSUPPORT, V(1));
	CHECK_EQ(ep.sets, 0);
	topt_store_fini(&ep.s);
}

static void test_check(void)
{
	struct ep ep;

	ep_init(&ep);
	/* with a value: the status T_NEGOTIATE would give, no change */
	ONE(&ep, T_CHECK, false, XTI_GENERIC, XTI_SNDBUF, V(9000), T_SUCCESS,
	    V(9000));
	ONE(&ep, T_CHECK, false, XTI_GENERIC, XTI_RCVBUF, V(0),
	    T_PARTSUCCESS, V(1));
	ONE(&ep, T_CHECK, false, INET_TCP, T_TCP_NODELAY, V(5), T_FAILURE,
	    V(5));
	ONE(&ep, T_CHECK, false, LVL_X, 1, V(99), T_FAILURE, V(99));
	CHECK_EQ(ep.sets, 0);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_SNDBUF), 4096);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_RCVBUF), 4096);
	/* the header only: supported, no value returned */
	ONE(&ep, T_CHECK, false, XTI_GENERIC, XTI_SNDBUF, NULL, 0, T_SUCCESS,
	    NULL, 0);
	ONE(&ep, T_CHECK, false, INET_TCP, T_TCP_KEEPALIVE, NULL, 0,
	    T_SUCCESS, NULL, 0);
	topt_store_fini(&ep.s);
}

static void test_default_current(void)
{
	struct buf in, out, want;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_RCVBUF, V(5000),
	    T_SUCCESS, V(5000));
	ONE(&ep, T_DEFAULT, false, XTI_GENERIC, XTI_RCVBUF, NULL, 0,
	    T_SUCCESS, V(4096));
	ONE(&ep, T_CURRENT, false, XTI_GENERIC, XTI_RCVBUF, NULL, 0,
	    T_SUCCESS, V(5000));
	/* values in the request are ignored, whatever their size */
	ONE(&ep, T_CURRENT, false, XTI_GENERIC, XTI_RCVBUF, "xyz", 3,
	    T_SUCCESS, V(5000));
	ONE(&ep, T_DEFAULT, false, XTI_GENERIC, XTI_LINGER, V(1), T_SUCCESS,
	    (&(struct t_linger){ T_NO, T_UNSPEC }), sizeof(struct t_linger));
	/* several options, in order */
	b_init(&in);
	b_opt(&in, XTI_GENERIC, XTI_SNDLOWAT, 0, NULL, 0);
	b_opt(&in, INET_TCP, T_TCP_NODELAY, 0, NULL, 0);
	b_opt(&in, XTI_GENERIC, XTI_RCVBUF, 0, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_SUCCESS);
	b_init(&want);
	b_opt(&want, XTI_GENERIC, XTI_SNDLOWAT, T_SUCCESS, V(1));
	b_opt(&want, INET_TCP, T_TCP_NODELAY, T_SUCCESS, V(T_NO));
	b_opt(&want, XTI_GENERIC, XTI_RCVBUF, T_SUCCESS, V(5000));
	CHECK_BUF(&out, &want);
	/* the provider cannot read it now: T_FAILURE, header only */
	ep.fail_get = true;
	ONE(&ep, T_CURRENT, false, XTI_GENERIC, XTI_RCVBUF, NULL, 0,
	    T_FAILURE, NULL, 0);
	ONE(&ep, T_DEFAULT, false, XTI_GENERIC, XTI_RCVBUF, NULL, 0,
	    T_SUCCESS, V(4096));
	ep.fail_get = false;
	topt_store_fini(&ep.s);
}

/* The overall result is the worst single status, in any order. */
static void test_worst(void)
{
	static const struct { t_uscalar_t level, name; t_scalar_t v;
			      t_uscalar_t st; } o[] = {
		{ XTI_GENERIC, XTI_SNDBUF, 5000, T_SUCCESS },
		{ XTI_GENERIC, XTI_RCVBUF, 0, T_PARTSUCCESS },
		{ INET_TCP, T_TCP_NODELAY, 7, T_FAILURE },
		{ INET_TCP, T_TCP_MAXSEG, 100, T_READONLY },
		{ XTI_GENERIC, XTI_DEBUG, 1, T_NOTSUPPORT },
	};
	struct buf in, out, want;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	/* growing: each new status is the worst so far */
	for (size_t n = 1; n <= 5; n++) {
		b_init(&in);
		b_init(&want);
		for (size_t i = 0; i < n; i++) {
			t_scalar_t got = o[i].st == T_PARTSUCCESS ? 1 : o[i].v;

			b_opt(&in, o[i].level, o[i].name, 0, V(o[i].v));
			b_opt(&want, o[i].level, o[i].name, o[i].st, V(got));
		}
		CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
		CHECK_EQ(r, o[n - 1].st);
		CHECK_BUF(&out, &want);
	}
	/* reversed: the worst first, the result the same */
	for (size_t n = 1; n <= 5; n++) {
		b_init(&in);
		for (size_t i = 5 - n; i < 5; i++)
			b_opt(&in, o[4 - i].level, o[4 - i].name, 0,
			      V(o[4 - i].v));
		CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
		CHECK_EQ(r, o[n - 1].st);
	}
	/* no option at all: T_SUCCESS, empty answer */
	b_init(&in);
	for (int f = 0; f < 4; f++) {
		static const t_scalar_t fl[] = { T_NEGOTIATE, T_CHECK,
						 T_DEFAULT, T_CURRENT };

		CHECK_EQ(mgmt(&ep, fl[f], &in, false, &out, &r), 0);
		CHECK_EQ(r, T_SUCCESS);
		CHECK_EQ(out.len, 0);
	}
	topt_store_fini(&ep.s);
}

/* The generic level's answer to T_ALLOPT, for T_DEFAULT. */
static void want_generic(struct buf *w, t_scalar_t rcvbuf, t_scalar_t sndbuf,
			 bool debug)
{
	b_init(w);
	if (debug)
		b_opt(w, XTI_GENERIC, XTI_DEBUG, T_SUCCESS, V(0));
	b_opt(w, XTI_GENERIC, XTI_LINGER, T_SUCCESS,
	      (&(struct t_linger){ T_NO, T_UNSPEC }), sizeof(struct t_linger));
	b_opt(w, XTI_GENERIC, XTI_RCVBUF, T_SUCCESS, V(rcvbuf));
	b_opt(w, XTI_GENERIC, XTI_RCVLOWAT, T_SUCCESS, V(1));
	b_opt(w, XTI_GENERIC, XTI_SNDBUF, T_SUCCESS, V(sndbuf));
	b_opt(w, XTI_GENERIC, XTI_SNDLOWAT, T_SUCCESS, V(1));
}

static void test_allopt(void)
{
	struct buf in, out, want;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	b_init(&in);
	b_opt(&in, XTI_GENERIC, T_ALLOPT, 0, NULL, 0);
	/* T_DEFAULT: every option of the level, privileged ones too */
	CHECK_EQ(mgmt(&ep, T_DEFAULT, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_SUCCESS);
	want_generic(&want, 4096, 4096, true);
	CHECK_BUF(&out, &want);
	CHECK_EQ(out.len, topt_size(&(struct topt_table){ defs, 6, &ops }));
	/* T_CURRENT after changes */
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_RCVBUF, V(1111),
	    T_SUCCESS, V(1111));
	ONE(&ep, T_NEGOTIATE, false, XTI_GENERIC, XTI_SNDBUF, V(2222),
	    T_SUCCESS, V(2222));
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	want_generic(&want, 1111, 2222, true);
	CHECK_BUF(&out, &want);
	/* T_NEGOTIATE: every option the user may set, to its default;
	 * unprivileged: XTI_DEBUG left out */
	ep.sets = 0;
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_SUCCESS);
	want_generic(&want, 4096, 4096, false);
	CHECK_BUF(&out, &want);
	CHECK_EQ(ep.sets, 5);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_SNDBUF), 4096);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_RCVBUF), 4096);
	/* privileged: XTI_DEBUG too */
	ONE(&ep, T_NEGOTIATE, true, XTI_GENERIC, XTI_DEBUG, V(9), T_SUCCESS,
	    V(9));
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, true, &out, &r), 0);
	want_generic(&want, 4096, 4096, true);
	CHECK_BUF(&out, &want);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_DEBUG), 0);
	/* the provider grants less: the value granted; it refuses: the
	 * default asked for */
	ep.grant_max = 2048;
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_PARTSUCCESS);
	b_init(&want);
	b_opt(&want, XTI_GENERIC, XTI_LINGER, T_SUCCESS,
	      (&(struct t_linger){ T_NO, T_UNSPEC }), sizeof(struct t_linger));
	b_opt(&want, XTI_GENERIC, XTI_RCVBUF, T_PARTSUCCESS, V(2048));
	b_opt(&want, XTI_GENERIC, XTI_RCVLOWAT, T_SUCCESS, V(1));
	b_opt(&want, XTI_GENERIC, XTI_SNDBUF, T_PARTSUCCESS, V(2048));
	b_opt(&want, XTI_GENERIC, XTI_SNDLOWAT, T_SUCCESS, V(1));
	CHECK_BUF(&out, &want);
	ep.grant_max = 0;
	ep.fail_set = true;
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_FAILURE);
	b_init(&want);
	b_opt(&want, XTI_GENERIC, XTI_LINGER, T_FAILURE,
	      (&(struct t_linger){ T_NO, T_UNSPEC }), sizeof(struct t_linger));
	b_opt(&want, XTI_GENERIC, XTI_RCVBUF, T_FAILURE, V(4096));
	b_opt(&want, XTI_GENERIC, XTI_RCVLOWAT, T_FAILURE, V(1));
	b_opt(&want, XTI_GENERIC, XTI_SNDBUF, T_FAILURE, V(4096));
	b_opt(&want, XTI_GENERIC, XTI_SNDLOWAT, T_FAILURE, V(1));
	CHECK_BUF(&out, &want);
	ep.fail_set = false;
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_SUCCESS);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_RCVBUF), 4096);

	/* INET_TCP: read-only MAXSEG is in T_DEFAULT (T_READONLY), not in
	 * T_NEGOTIATE */
	b_init(&in);
	b_opt(&in, INET_TCP, T_ALLOPT, 0, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_DEFAULT, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_READONLY);
	b_init(&want);
	b_opt(&want, INET_TCP, T_TCP_NODELAY, T_SUCCESS, V(T_NO));
	b_opt(&want, INET_TCP, T_TCP_MAXSEG, T_READONLY, V(536));
	b_opt(&want, INET_TCP, T_TCP_KEEPALIVE, T_SUCCESS,
	      (&(struct t_kpalive){ T_NO, T_UNSPEC }),
	      sizeof(struct t_kpalive));
	CHECK_BUF(&out, &want);
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_SUCCESS);
	b_init(&want);
	b_opt(&want, INET_TCP, T_TCP_NODELAY, T_SUCCESS, V(T_NO));
	b_opt(&want, INET_TCP, T_TCP_KEEPALIVE, T_SUCCESS,
	      (&(struct t_kpalive){ T_NO, T_UNSPEC }),
	      sizeof(struct t_kpalive));
	CHECK_BUF(&out, &want);

	/* INET_IP: the XNS 5.2 names, TOPT_NOALL (BROADCAST) left out */
	b_init(&in);
	b_opt(&in, INET_IP, T_ALLOPT, 0, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_DEFAULT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, INET_IP, T_IP_OPTIONS, T_SUCCESS, NULL, 0);
	b_opt(&want, INET_IP, T_IP_TOS, T_SUCCESS, V(0));
	b_opt(&want, INET_IP, T_IP_TTL, T_SUCCESS, V(64));
	b_opt(&want, INET_IP, T_IP_REUSEADDR, T_SUCCESS, V(T_NO));
	CHECK_BUF(&out, &want);

	/* an unknown level: T_NOTSUPPORT, the header */
	b_init(&in);
	b_opt(&in, 0x5151, T_ALLOPT, 0, NULL, 0);
	b_init(&want);
	b_opt(&want, 0x5151, T_ALLOPT, T_NOTSUPPORT, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_NOTSUPPORT);
	CHECK_BUF(&out, &want);
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
	CHECK_EQ(r, T_NOTSUPPORT);
	CHECK_BUF(&out, &want);

	/* options before it are acted on, options after it are not */
	b_init(&in);
	b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(9000));
	b_opt(&in, INET_TCP, T_ALLOPT, 0, NULL, 0);
	b_opt(&in, XTI_GENERIC, XTI_RCVBUF, 0, V(7777));
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, XTI_GENERIC, XTI_SNDBUF, T_SUCCESS, V(9000));
	b_opt(&want, INET_TCP, T_TCP_NODELAY, T_SUCCESS, V(T_NO));
	b_opt(&want, INET_TCP, T_TCP_KEEPALIVE, T_SUCCESS,
	      (&(struct t_kpalive){ T_NO, T_UNSPEC }),
	      sizeof(struct t_kpalive));
	CHECK_BUF(&out, &want);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_SNDBUF), 9000);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_RCVBUF), 4096);
	topt_store_fini(&ep.s);
}

/* Both numberings of an option; the user's own number comes back. */
static void test_names(void)
{
	struct buf in, out, want;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	CHECK(IP_TOS != T_IP_TOS);
	ONE(&ep, T_NEGOTIATE, false, INET_IP, IP_TOS, V(0x20), T_SUCCESS,
	    V(0x20));
	CHECK_EQ(current(&ep, INET_IP, T_IP_TOS), 0x20);
	CHECK_EQ(current(&ep, INET_IP, IP_TOS), 0x20);
	ONE(&ep, T_NEGOTIATE, false, INET_IP, T_IP_TOS, V(0x08), T_SUCCESS,
	    V(0x08));
	CHECK_EQ(current(&ep, INET_IP, IP_TOS), 0x08);
	ONE(&ep, T_DEFAULT, false, INET_IP, IP_TTL, NULL, 0, T_SUCCESS,
	    V(64));
	ONE(&ep, T_CHECK, false, INET_IP, IP_TTL, NULL, 0, T_SUCCESS, NULL,
	    0);
	ONE(&ep, T_NEGOTIATE, false, LVL_X, 101, V(5), T_SUCCESS, V(5));
	CHECK_EQ(current(&ep, LVL_X, 1), 5);
	/* both in one request, each answered under its own name */
	b_init(&in);
	b_opt(&in, INET_IP, IP_TTL, 0, NULL, 0);
	b_opt(&in, INET_IP, T_IP_TTL, 0, NULL, 0);
	CHECK_EQ(mgmt(&ep, T_CURRENT, &in, false, &out, &r), 0);
	b_init(&want);
	b_opt(&want, INET_IP, IP_TTL, T_SUCCESS, V(64));
	b_opt(&want, INET_IP, T_IP_TTL, T_SUCCESS, V(64));
	CHECK_BUF(&out, &want);
	/* an old name at another level is not this option */
	ONE(&ep, T_NEGOTIATE, false, INET_TCP, 101, V(5), T_NOTSUPPORT,
	    V(5));
	topt_store_fini(&ep.s);
}

static void test_flags(void)
{
	static const t_scalar_t bad[] = {
		0, T_NEGOTIATE | T_CHECK, T_DEFAULT | T_CURRENT, T_SUCCESS,
		T_PARTSUCCESS, T_NOTSUPPORT, -1, 0x1000, T_NEGOTIATE | 1,
		(t_scalar_t)0x80000004u,
	};
	struct buf in, out;
	struct ep ep;
	t_scalar_t r;

	ep_init(&ep);
	b_init(&in);
	b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(1000));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(mgmt(&ep, bad[i], &in, true, &out, &r), TBADFLAG);
	/* a bad flag wins over a malformed buffer */
	in.len = 7;
	CHECK_EQ(mgmt(&ep, 0, &in, false, &out, &r), TBADFLAG);
	CHECK_EQ(ep.sets, 0);
	CHECK_EQ(current(&ep, XTI_GENERIC, XTI_SNDBUF), 4096);
	topt_store_fini(&ep.s);
}

int main(void)
{
	th_mark();
	test_negotiate_scalar();
	test_negotiate_bool();
	test_negotiate_linger();
	test_negotiate_kpalive();
	test_uchar_bytes();
	test_privileged();
	test_readonly();
	test_notsupport();
	test_check();
	test_default_current();
	test_worst();
	test_allopt();
	test_names();
	test_flags();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
