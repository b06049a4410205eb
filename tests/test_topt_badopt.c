/*
 * test_topt_badopt -- malformed option buffers, in topt_mgmt() and
 * topt_assoc(): TBADOPT for bytes left over that cannot hold a header, a
 * len shorter than the header or past the end of the buffer (up to
 * 0xffffffff), a header that is not where T_OPT_NEXTHDR puts it, a value
 * of the wrong size for a known option's type (where values count),
 * T_NEGOTIATE of an option with no value, T_ALLOPT with a value or with
 * T_CHECK or on an association; and the buffers that are fine: padding
 * after the last option (whole or part), values of any size for unknown
 * options and for T_DEFAULT/T_CURRENT, a buffer at an odd address, many
 * options.  A refused buffer changes nothing on the endpoint, even when
 * the bad option comes after good ones; nor does TSYSERR/ENOMEM when no
 * block can be had for the answer.
 */
#include <errno.h>

#include "t.h"
#include "harness.h"
#include "topt.h"

static const struct topt_def defs[] = {
	TOPT_GENERIC_DEFS(4096),
	{ INET_IP, T_IP_OPTIONS, IP_OPTIONS, TOPT_BYTES, TOPT_ASSOC, 40,
	  0, 0, 0 },
	{ INET_IP, T_IP_TOS, IP_TOS, TOPT_UCHAR, TOPT_ASSOC, 0, 0, 0, 255 },
	{ INET_TCP, T_TCP_NODELAY, TOPT_NONAME, TOPT_BOOL, TOPT_ASSOC, 0,
	  T_NO, 0, 0 },
	{ INET_TCP, T_TCP_KEEPALIVE, TOPT_NONAME, TOPT_KPALIVE, 0, 0, T_NO,
	  1, 10000 },
};

struct ep {
	struct topt_store s;
	int sets;
};

static t_uscalar_t ep_set(void *e, const struct topt_def *d,
			  union topt_val *v)
{
	((struct ep *)e)->sets++;
	return topt_store_ops.set(e, d, v);
}

static const struct topt_ops ops = { NULL, ep_set };
static const struct topt_table tab = { defs, sizeof(defs) / sizeof(defs[0]),
				       &ops };

struct buf {
	unsigned char b[100000];
	size_t len;
};

static struct buf in, want;

static void b_init(struct buf *b)
{
	memset(b->b, 0, 256);
	b->len = 0;
}

/* Append a header saying len, at the next multiple of 4, and vlen bytes
 * of value after it. */
static void b_hdr(struct buf *b, t_uscalar_t len, t_uscalar_t level,
		  t_uscalar_t name, t_uscalar_t status, const void *val,
		  size_t vlen)
{
	size_t at = (b->len + 3) & ~(size_t)3;
	struct t_opthdr h = { len, level, name, status };

	REQUIRE(at + sizeof(h) + vlen <= sizeof(b->b));
	memset(b->b + b->len, 0, at - b->len);
	memcpy(b->b + at, &h, sizeof(h));
	if (vlen > 0)
		memcpy(b->b + at + sizeof(h), val, vlen);
	b->len = at + sizeof(h) + vlen;
}

static void b_opt(struct buf *b, t_uscalar_t level, t_uscalar_t name,
		  t_uscalar_t status, const void *val, size_t vlen)
{
	b_hdr(b, (t_uscalar_t)(sizeof(struct t_opthdr) + vlen), level, name,
	      status, val, vlen);
}

#define V(x) (&(t_scalar_t){ (x) }), sizeof(t_scalar_t)

#define ANY	((t_uscalar_t)-1)	/* any answer will do */

/* topt_mgmt on (p, n): its error; with 0 the answer (padded) must be
 * want and the result status (unless status is ANY). */
static int mgmt(struct ep *ep, t_scalar_t flags, const unsigned char *p,
		size_t n, t_uscalar_t status, int line)
{
	mblk_t *mp = (mblk_t *)&mp;
	t_scalar_t r = -1;
	int ue = -1, e;
	/* an exact copy: ASan sees any read past the end */
	unsigned char *copy = malloc(n > 0 ? n : 1);

	REQUIRE(copy != NULL);
	memcpy(copy, p, n);
	e = topt_mgmt(&tab, ep, flags, copy, n, false, &mp, &r, &ue);
	free(copy);
	t_checked++;
	if (e != 0) {
		if (mp != NULL || ue != 0) {
			t_failed++;
			fprintf(stderr, "%s:%d: FAIL: error %d: mp %p ue %d\n",
				__FILE__, line, e, (void *)mp, ue);
		}
		return e;
	}
	while (want.len % 4 != 0)
		want.b[want.len++] = 0;
	if (status != ANY && (r != (t_scalar_t)status ||
	    (size_t)(mp->b_wptr - mp->b_rptr) != want.len ||
	    memcmp(mp->b_rptr, want.b, want.len) != 0)) {
		t_failed++;
		fprintf(stderr, "%s:%d: FAIL: answer: result %#x len %zu, "
			"want %#x len %zu\n", __FILE__, line, (unsigned)r,
			(size_t)(mp->b_wptr - mp->b_rptr), (unsigned)status,
			want.len);
	}
	freemsg(mp);
	return e;
}
#define MGMT(ep, f, st) mgmt(ep, f, in.b, in.len, st, __LINE__)

static void ep_init(struct ep *ep)
{
	memset(ep, 0, sizeof(*ep));
	REQUIRE(topt_store_init(&ep->s, &tab) == 0);
}

/* The framing of the buffer. */
static void test_framing(void)
{
	static const t_scalar_t acts[] = { T_NEGOTIATE, T_CHECK, T_DEFAULT,
					   T_CURRENT };
	struct ep ep;

	ep_init(&ep);
	for (size_t a = 0; a < 4; a++) {
		t_scalar_t f = acts[a];

		/* fewer bytes than a header */
		for (size_t n = 1; n < sizeof(struct t_opthdr); n++) {
			b_init(&in);
			b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(1000));
			in.len = n;
			CHECK_EQ(MGMT(&ep, f, 0), TBADOPT);
		}
		/* len shorter than the header */
		for (t_uscalar_t l = 0; l < sizeof(struct t_opthdr); l++) {
			b_init(&in);
			b_hdr(&in, l, XTI_GENERIC, XTI_SNDBUF, 0, V(1000));
			CHECK_EQ(MGMT(&ep, f, 0), TBADOPT);
		}
		/* len past the end, by one and by a lot */
		static const t_uscalar_t past[] = { 21, 24, 1000, 0x7fffffff,
						    0x80000000u, 0xfffffff0u,
						    0xffffffffu };
		for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
			b_init(&in);
			b_hdr(&in, past[i], XTI_GENERIC, XTI_SNDBUF, 0,
			      V(1000));
			CHECK_EQ(MGMT(&ep, f, 0), TBADOPT);
		}
		/* a good option, then a short tail */
		for (size_t tail = 1; tail < sizeof(struct t_opthdr); tail++) {
			b_init(&in);
			b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(1000));
			memset(in.b + in.len, 0, tail);
			in.len += tail;
			CHECK_EQ(MGMT(&ep, f, 0), TBADOPT);
		}
		/* a good option, then one running past the end */
		b_init(&in);
		b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(1000));
		b_hdr(&in, 40, XTI_GENERIC, XTI_RCVBUF, 0, V(1000));
		CHECK_EQ(MGMT(&ep, f, 0), TBADOPT);
	}
	CHECK_EQ(ep.sets, 0);
	topt_store_fini(&ep.s);
}

/* The next header is at the next multiple of 4 (T_OPT_NEXTHDR); one
 * packed right after an odd-sized option is not a header. */
static void test_alignment(void)
{
	struct t_opthdr h = { sizeof(h) + 4, XTI_GENERIC, XTI_SNDBUF, 0 };
	t_scalar_t v = 1000;
	struct ep ep;

	ep_init(&ep);
	/* unknown option of 1 byte, then SNDBUF at offset 17: misread */
	b_init(&in);
	b_opt(&in, 0x5151, 7, 0, "x", 1);
	memcpy(in.b + in.len, &h, sizeof(h));
	memcpy(in.b + in.len + sizeof(h), &v, sizeof(v));
	in.len += sizeof(h) + sizeof(v);
	CHECK_EQ(MGMT(&ep, T_NEGOTIATE, 0), TBADOPT);
	CHECK_EQ(ep.sets, 0);
	/* the same at offset 20: fine */
	b_init(&in);
	b_opt(&in, 0x5151, 7, 0, "x", 1);
	b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, &v, sizeof(v));
	b_init(&want);
	b_opt(&want, 0x5151, 7, T_NOTSUPPORT, "x", 1);
	b_opt(&want, XTI_GENERIC, XTI_SNDBUF, T_SUCCESS, &v, sizeof(v));
	CHECK_EQ(MGMT(&ep, T_NEGOTIATE, T_NOTSUPPORT), 0);
	CHECK_EQ(ep.sets, 1);
	/* padding after the last option, whole or part: fine */
	for (size_t extra = 0; extra <= 3; extra++) {
		b_init(&in);
		b_opt(&in, 0x5151, 7, 0, "x", 1);
		in.len += extra;
		b_init(&want);
		b_opt(&want, 0x5151, 7, T_NOTSUPPORT, "x", 1);
		CHECK_EQ(MGMT(&ep, T_NEGOTIATE, T_NOTSUPPORT), 0);
	}
	/* the buffer itself at an odd address: read with memcpy */
	b_init(&in);
	b_opt(&in, XTI_GENERIC, XTI_RCVBUF, 0, V(3000));
	b_opt(&in, INET_TCP, T_TCP_NODELAY, 0, V(T_YES));
	memmove(in.b + 1, in.b, in.len);
	b_init(&want);
	b_opt(&want, XTI_GENERIC, XTI_RCVBUF, T_SUCCESS, V(3000));
	b_opt(&want, INET_TCP, T_TCP_NODELAY, T_SUCCESS, V(T_YES));
	CHECK_EQ(mgmt(&ep, T_NEGOTIATE, in.b + 1, in.len, T_SUCCESS,
		      __LINE__), 0);
	topt_store_fini(&ep.s);
}

/* Value sizes of known options. */
static void test_sizes(void)
{
	static const struct { t_uscalar_t level, name; size_t vlen; } bad[] = {
		{ XTI_GENERIC, XTI_SNDBUF, 1 },
		{ XTI_GENERIC, XTI_SNDBUF, 2 },
		{ XTI_GENERIC, XTI_SNDBUF, 8 },
		{ XTI_GENERIC, XTI_DEBUG, 8 },
		{ XTI_GENERIC, XTI_LINGER, 4 },
		{ XTI_GENERIC, XTI_LINGER, 12 },
		{ INET_TCP, T_TCP_NODELAY, 1 },
		{ INET_TCP, T_TCP_NODELAY, 8 },
		{ INET_TCP, T_TCP_KEEPALIVE, 6 },
		{ INET_TCP, T_TCP_KEEPALIVE, 12 },
		{ INET_IP, T_IP_TOS, 2 },
		{ INET_IP, T_IP_TOS, 8 },
		{ INET_IP, IP_TOS, 3 },
		{ INET_IP, T_IP_OPTIONS, 41 },
		{ INET_IP, T_IP_OPTIONS, 1000 },
	};
	static const struct { t_uscalar_t level, name; } novalue[] = {
		{ XTI_GENERIC, XTI_SNDBUF }, { XTI_GENERIC, XTI_LINGER },
		{ INET_TCP, T_TCP_NODELAY }, { INET_TCP, T_TCP_KEEPALIVE },
		{ INET_IP, T_IP_TOS },
	};
	unsigned char junk[1000];
	struct ep ep;

	memset(junk, 1, sizeof(junk));
	ep_init(&ep);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b_init(&in);
		b_opt(&in, bad[i].level, bad[i].name, 0, junk, bad[i].vlen);
		CHECK_EQ(MGMT(&ep, T_NEGOTIATE, 0), TBADOPT);
		CHECK_EQ(MGMT(&ep, T_CHECK, 0), TBADOPT);
		CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, true), TBADOPT);
		/* values do not count for T_DEFAULT/T_CURRENT */
		CHECK_EQ(MGMT(&ep, T_DEFAULT, ANY), 0);
	}
	/* T_NEGOTIATE needs a value (XTI_DEBUG excepted, see test_mgmt);
	 * T_CHECK without one asks whether the option is there */
	for (size_t i = 0; i < sizeof(novalue) / sizeof(novalue[0]); i++) {
		b_init(&in);
		b_opt(&in, novalue[i].level, novalue[i].name, 0, NULL, 0);
		CHECK_EQ(MGMT(&ep, T_NEGOTIATE, 0), TBADOPT);
		CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, true), TBADOPT);
		b_init(&want);
		b_opt(&want, novalue[i].level, novalue[i].name, T_SUCCESS,
		      NULL, 0);
		CHECK_EQ(MGMT(&ep, T_CHECK, T_SUCCESS), 0);
	}
	/* unknown options: any size at all */
	for (size_t n = 0; n < 70; n++) {
		b_init(&in);
		b_opt(&in, XTI_GENERIC, 0x4242, 0, junk, n);
		b_init(&want);
		b_opt(&want, XTI_GENERIC, 0x4242, T_NOTSUPPORT, junk, n);
		CHECK_EQ(MGMT(&ep, T_NEGOTIATE, T_NOTSUPPORT), 0);
	}
	CHECK_EQ(ep.sets, 0);
	topt_store_fini(&ep.s);
}

static void test_allopt(void)
{
	struct ep ep;

	ep_init(&ep);
	/* XNS: T_ALLOPT only with T_NEGOTIATE, T_DEFAULT, T_CURRENT */
	b_init(&in);
	b_opt(&in, XTI_GENERIC, T_ALLOPT, 0, NULL, 0);
	CHECK_EQ(MGMT(&ep, T_CHECK, 0), TBADOPT);
	CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, true), TBADOPT);
	/* an unknown level does not change that */
	b_init(&in);
	b_opt(&in, 0x5151, T_ALLOPT, 0, NULL, 0);
	CHECK_EQ(MGMT(&ep, T_CHECK, 0), TBADOPT);
	/* it has no value */
	b_init(&in);
	b_opt(&in, XTI_GENERIC, T_ALLOPT, 0, V(0));
	CHECK_EQ(MGMT(&ep, T_NEGOTIATE, 0), TBADOPT);
	CHECK_EQ(MGMT(&ep, T_DEFAULT, 0), TBADOPT);
	CHECK_EQ(MGMT(&ep, T_CURRENT, 0), TBADOPT);
	/* options after it are not acted on, but must be well formed */
	b_init(&in);
	b_opt(&in, XTI_GENERIC, T_ALLOPT, 0, NULL, 0);
	b_hdr(&in, 12, XTI_GENERIC, XTI_SNDBUF, 0, NULL, 0);
	CHECK_EQ(MGMT(&ep, T_NEGOTIATE, 0), TBADOPT);
	b_init(&in);
	b_opt(&in, INET_TCP, T_ALLOPT, 0, NULL, 0);
	b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, &(t_scalar_t){ 1 }, 2);
	CHECK_EQ(MGMT(&ep, T_NEGOTIATE, 0), TBADOPT);
	CHECK_EQ(ep.sets, 0);
	topt_store_fini(&ep.s);
}

/* A refused buffer changes nothing, whatever came before the fault. */
static void test_nothing_changed(void)
{
	struct ep ep;
	union topt_val v;

	ep_init(&ep);
	b_init(&in);
	b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(9000));
	b_opt(&in, XTI_GENERIC, XTI_RCVBUF, 0, V(9000));
	b_opt(&in, INET_TCP, T_TCP_NODELAY, 0, &(t_scalar_t){ T_YES }, 1);
	CHECK_EQ(MGMT(&ep, T_NEGOTIATE, 0), TBADOPT);
	CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, true), TBADOPT);
	b_init(&in);
	b_opt(&in, INET_TCP, T_TCP_NODELAY, 0, V(T_YES));
	b_hdr(&in, 17, XTI_GENERIC, XTI_RCVBUF, 0, NULL, 0);
	CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, true), TBADOPT);
	CHECK_EQ(ep.sets, 0);
	REQUIRE(topt_store_ops.get(&ep, &defs[4], &v) == 0);
	CHECK_EQ(v.i, 4096);
	REQUIRE(topt_store_ops.get(&ep, &defs[8], &v) == 0);
	CHECK_EQ(v.i, T_NO);
	topt_store_fini(&ep.s);
}

/* Many options: the answer is sized right. */
static void test_many(void)
{
	struct ep ep;
	size_t n = 0;

	ep_init(&ep);
	b_init(&in);
	b_init(&want);
	while (in.len + 16 <= 65536) {
		b_opt(&in, XTI_GENERIC, XTI_LINGER, 0, NULL, 0);
		b_opt(&want, XTI_GENERIC, XTI_LINGER, T_SUCCESS,
		      (&(struct t_linger){ T_NO, T_UNSPEC }),
		      sizeof(struct t_linger));
		n++;
	}
	CHECK_EQ(n, 4096);
	CHECK_EQ(want.len, 4096 * 24);
	CHECK_EQ(MGMT(&ep, T_DEFAULT, T_SUCCESS), 0);
	/* 3000 unknown options of 1 byte, echoed and padded */
	b_init(&in);
	b_init(&want);
	for (int i = 0; i < 3000; i++) {
		b_opt(&in, 0x5151, (t_uscalar_t)i + 1, 0, "q", 1);
		b_opt(&want, 0x5151, (t_uscalar_t)i + 1, T_NOTSUPPORT, "q", 1);
	}
	CHECK_EQ(MGMT(&ep, T_CHECK, T_NOTSUPPORT), 0);
	topt_store_fini(&ep.s);
}

/* NULL buffers and tables. */
static void test_null(void)
{
	mblk_t *mp = (mblk_t *)&mp;
	t_scalar_t r = -1;
	struct ep ep;
	int ue = -1;

	ep_init(&ep);
	CHECK_EQ(topt_mgmt(&tab, &ep, T_CURRENT, NULL, 0, false, &mp, &r,
			   &ue), 0);
	REQUIRE(mp != NULL);
	CHECK_EQ(mp->b_wptr - mp->b_rptr, 0);
	CHECK_EQ(r, T_SUCCESS);
	freemsg(mp);
	CHECK_EQ(topt_mgmt(NULL, &ep, T_CURRENT, NULL, 0, false, &mp, &r,
			   &ue), TSYSERR);
	CHECK_EQ(ue, EINVAL);
	CHECK(mp == NULL);
	CHECK_EQ(topt_assoc(&tab, &ep, NULL, 0, false), 0);
	topt_store_fini(&ep.s);
}

/* No memory for the answer: TSYSERR, ENOMEM, nothing changed. */
static void test_nomem(void)
{
	mblk_t *mp = (mblk_t *)&mp;
	t_scalar_t r = -1;
	struct ep ep;
	int ue = -1;

	ep_init(&ep);
	b_init(&in);
	b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(1000));
	REQUIRE(streams_set_memlimit(1) == 0);
	CHECK_EQ(topt_mgmt(&tab, &ep, T_NEGOTIATE, in.b, in.len, false, &mp,
			   &r, &ue), TSYSERR);
	REQUIRE(streams_set_memlimit(0) == 0);
	CHECK_EQ(ue, ENOMEM);
	CHECK(mp == NULL);
	CHECK_EQ(ep.sets, 0);
	CHECK_EQ(topt_mgmt(&tab, &ep, T_NEGOTIATE, in.b, in.len, false, &mp,
			   &r, &ue), 0);
	CHECK_EQ(ep.sets, 1);
	freemsg(mp);
	topt_store_fini(&ep.s);
}

int main(void)
{
	th_mark();
	test_framing();
	test_alignment();
	test_sizes();
	test_allopt();
	test_nothing_changed();
	test_many();
	test_null();
	test_nomem();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
