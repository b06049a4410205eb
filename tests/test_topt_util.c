/*
 * test_topt_util -- the rest of topt.h: topt_find (both names, levels,
 * TOPT_NONAME), topt_size (exact bytes), topt_default, topt_put (exact
 * bytes and padding of every type, starting after an odd length, not
 * fitting, bad arguments), the topt_store and its ops (defaults, set and
 * get, a definition from another table refused), and topt_assoc (only
 * TOPT_ASSOC options applied; unknown, read-only, privileged without
 * privilege and illegal values ignored; clamped values applied clamped;
 * both names).
 */
#include "t.h"
#include "harness.h"
#include "topt.h"

static const struct topt_def defs[] = {
	TOPT_GENERIC_DEFS(8192),			/* 0-5 */
	{ INET_IP, T_IP_OPTIONS, IP_OPTIONS, TOPT_BYTES, TOPT_ASSOC, 12,
	  0, 0, 0 },					/* 6 */
	{ INET_IP, T_IP_TOS, IP_TOS, TOPT_UCHAR, TOPT_ASSOC, 0, 0, 0, 255 },
	{ INET_IP, T_IP_TTL, IP_TTL, TOPT_UCHAR, TOPT_ASSOC | TOPT_CLAMP, 0,
	  64, 1, 255 },					/* 8 */
	{ INET_TCP, T_TCP_KEEPALIVE, TOPT_NONAME, TOPT_KPALIVE, TOPT_ASSOC, 0,
	  T_NO, 1, 100 },				/* 9 */
	{ INET_TCP, T_TCP_MAXSEG, TOPT_NONAME, TOPT_SCALAR,
	  TOPT_RDONLY | TOPT_ASSOC, 0, 536, 0, 65535 },	/* 10 */
	{ INET_UDP, T_UDP_CHECKSUM, UDP_CHECKSUM, TOPT_BOOL,
	  TOPT_ASSOC | TOPT_PRIV, 0, T_YES, 0, 0 },	/* 11 */
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static const struct topt_table tab = { defs, NDEFS, &topt_store_ops };

struct buf {
	unsigned char b[512];
	size_t len;
};

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

#define V(x) (&(t_scalar_t){ (x) }), sizeof(t_scalar_t)

static void test_find(void)
{
	CHECK_PTR(topt_find(&tab, XTI_GENERIC, XTI_SNDBUF), &defs[4]);
	CHECK_PTR(topt_find(&tab, XTI_GENERIC, XTI_DEBUG), &defs[0]);
	CHECK_PTR(topt_find(&tab, INET_IP, T_IP_TOS), &defs[7]);
	CHECK_PTR(topt_find(&tab, INET_IP, IP_TOS), &defs[7]);
	CHECK_PTR(topt_find(&tab, INET_IP, IP_TTL), &defs[8]);
	CHECK_PTR(topt_find(&tab, INET_IP, IP_OPTIONS), &defs[6]);
	CHECK_PTR(topt_find(&tab, INET_UDP, T_UDP_CHECKSUM), &defs[11]);
	/* the name belongs to its level */
	CHECK_PTR(topt_find(&tab, INET_TCP, IP_TOS), NULL);
	CHECK_PTR(topt_find(&tab, INET_TCP, XTI_SNDBUF), NULL);
	CHECK_PTR(topt_find(&tab, 0x5151, XTI_SNDBUF), NULL);
	CHECK_PTR(topt_find(&tab, XTI_GENERIC, 0x4242), NULL);
	CHECK_PTR(topt_find(&tab, XTI_GENERIC, T_ALLOPT), NULL);
	/* TOPT_NONAME marks "no older name": it is never found */
	CHECK_PTR(topt_find(&tab, XTI_GENERIC, TOPT_NONAME), NULL);
	CHECK_PTR(topt_find(&tab, INET_TCP, TOPT_NONAME), NULL);
	CHECK_PTR(topt_find(NULL, XTI_GENERIC, XTI_SNDBUF), NULL);
}

static void test_size(void)
{
	/* generic: 20 + 24 + 4 * 20; IP_OPTIONS 16 + 12; TOS, TTL 20;
	 * KEEPALIVE 24; MAXSEG 20; CHECKSUM 20 */
	CHECK_EQ(topt_size(&tab), 124 + 28 + 40 + 24 + 20 + 20);
	CHECK_EQ(topt_size(&(struct topt_table){ defs, 0, NULL }), 0);
	CHECK_EQ(topt_size(NULL), 0);
	/* an odd maxlen is padded; beyond TOPT_MAXBYTES it is capped */
	struct topt_def odd[] = {
		{ 1, 1, TOPT_NONAME, TOPT_BYTES, 0, 5, 0, 0, 0 },
		{ 1, 2, TOPT_NONAME, TOPT_BYTES, 0, 999, 0, 0, 0 },
	};
	CHECK_EQ(topt_size(&(struct topt_table){ odd, 2, NULL }),
		 24 + 16 + TOPT_MAXBYTES);
}

static void test_default(void)
{
	union topt_val v;

	memset(&v, 0x55, sizeof(v));
	topt_default(&defs[4], &v);
	CHECK_EQ(v.i, 8192);
	topt_default(&defs[1], &v);
	CHECK_EQ(v.linger.l_onoff, T_NO);
	CHECK_EQ(v.linger.l_linger, T_UNSPEC);
	topt_default(&defs[9], &v);
	CHECK_EQ(v.kp.kp_onoff, T_NO);
	CHECK_EQ(v.kp.kp_timeout, T_UNSPEC);
	topt_default(&defs[6], &v);
	CHECK_EQ(v.bytes.len, 0);
	topt_default(&defs[8], &v);
	CHECK_EQ(v.i, 64);
}

static void test_put(void)
{
	unsigned char buf[256];
	struct buf want;
	union topt_val v;
	size_t len = 3;

	memset(buf, 0xee, sizeof(buf));
	memset(&want, 0, sizeof(want));
	want.len = 3;
	memset(want.b, 0xee, 3);
	/* starts at 4 (after 3 bytes), padding zeroed */
	v.i = 1234;
	CHECK(topt_put(buf, &len, sizeof(buf), XTI_GENERIC, XTI_SNDBUF,
		       TOPT_SCALAR, &v, T_SUCCESS));
	b_opt(&want, XTI_GENERIC, XTI_SNDBUF, T_SUCCESS, V(1234));
	CHECK_EQ(len, 24);
	/* a uchar goes in a t_uscalar_t */
	v.i = 0x7f;
	CHECK(topt_put(buf, &len, sizeof(buf), INET_IP, T_IP_TTL, TOPT_UCHAR,
		       &v, T_SUCCESS));
	b_opt(&want, INET_IP, T_IP_TTL, T_SUCCESS, V(0x7f));
	v.linger.l_onoff = T_YES;
	v.linger.l_linger = 9;
	CHECK(topt_put(buf, &len, sizeof(buf), XTI_GENERIC, XTI_LINGER,
		       TOPT_LINGER, &v, T_READONLY));
	b_opt(&want, XTI_GENERIC, XTI_LINGER, T_READONLY, &v.linger,
	      sizeof(v.linger));
	v.kp.kp_onoff = T_YES;
	v.kp.kp_timeout = 2;
	CHECK(topt_put(buf, &len, sizeof(buf), INET_TCP, T_TCP_KEEPALIVE,
		       TOPT_KPALIVE, &v, T_SUCCESS));
	b_opt(&want, INET_TCP, T_TCP_KEEPALIVE, T_SUCCESS, &v.kp,
	      sizeof(v.kp));
	/* 5 bytes: padded to 8 */
	v.bytes.len = 5;
	memcpy(v.bytes.b, "hello", 5);
	CHECK(topt_put(buf, &len, sizeof(buf), INET_IP, T_IP_OPTIONS,
		       TOPT_BYTES, &v, T_SUCCESS));
	b_opt(&want, INET_IP, T_IP_OPTIONS, T_SUCCESS, "hello", 5);
	want.len = (want.len + 3) & ~(size_t)3;
	v.i = T_YES;
	CHECK(topt_put(buf, &len, sizeof(buf), INET_UDP, T_UDP_CHECKSUM,
		       TOPT_BOOL, &v, T_SUCCESS));
	b_opt(&want, INET_UDP, T_UDP_CHECKSUM, T_SUCCESS, V(T_YES));
	CHECK_EQ(len, want.len);
	CHECK(memcmp(buf, want.b, want.len) == 0);

	/* not fitting: false, nothing written, *len unchanged */
	{
		unsigned char small[64];
		size_t l = 40;

		memset(small, 0xaa, sizeof(small));
		v.i = 1;
		CHECK(!topt_put(small, &l, 59, 1, 2, TOPT_SCALAR, &v, 0));
		CHECK_EQ(l, 40);
		CHECK_EQ(small[40], 0xaa);
		CHECK(topt_put(small, &l, 60, 1, 2, TOPT_SCALAR, &v, 0));
		CHECK_EQ(l, 60);
		/* padding counts: 17 bytes need 20 */
		l = 40;
		v.bytes.len = 1;
		CHECK(!topt_put(small, &l, 59, 1, 2, TOPT_BYTES, &v, 0));
		CHECK(topt_put(small, &l, 60, 1, 2, TOPT_BYTES, &v, 0));
		/* *len past max, odd len near max */
		l = 61;
		CHECK(!topt_put(small, &l, 60, 1, 2, TOPT_BYTES, &v, 0));
		l = 41;
		CHECK(!topt_put(small, &l, 63, 1, 2, TOPT_SCALAR, &v, 0));
		CHECK_EQ(l, 41);
		l = 0;
		v.bytes.len = TOPT_MAXBYTES + 1;
		CHECK(!topt_put(buf, &l, sizeof(buf), 1, 2, TOPT_BYTES, &v,
				0));
		CHECK(!topt_put(buf, &l, sizeof(buf), 1, 2,
				(enum topt_type)99, &v, 0));
		CHECK(!topt_put(NULL, &l, sizeof(buf), 1, 2, TOPT_SCALAR, &v,
				0));
		CHECK(!topt_put(buf, NULL, sizeof(buf), 1, 2, TOPT_SCALAR, &v,
				0));
		CHECK_EQ(l, 0);
	}
}

struct ep {
	struct topt_store s;
};

static void test_store(void)
{
	static const struct topt_def other = { XTI_GENERIC, XTI_SNDBUF,
		TOPT_NONAME, TOPT_SCALAR, 0, 0, 1, 0, 10 };
	struct ep ep;
	union topt_val v;

	REQUIRE(topt_store_init(&ep.s, &tab) == 0);
	CHECK_PTR(ep.s.t, &tab);
	for (size_t i = 0; i < NDEFS; i++) {
		union topt_val d;

		topt_default(&defs[i], &d);
		CHECK_EQ(topt_store_ops.get(&ep, &defs[i], &v), 0);
		CHECK(memcmp(&v, &d, sizeof(v)) == 0);
	}
	v.i = 777;
	CHECK_EQ(topt_store_ops.set(&ep, &defs[4], &v), T_SUCCESS);
	v.i = 0;
	CHECK_EQ(topt_store_ops.get(&ep, &defs[4], &v), 0);
	CHECK_EQ(v.i, 777);
	/* slots are separate */
	CHECK_EQ(topt_store_ops.get(&ep, &defs[2], &v), 0);
	CHECK_EQ(v.i, 8192);
	/* a definition that is not in the table: refused */
	CHECK_EQ(topt_store_ops.get(&ep, &other, &v), -1);
	CHECK_EQ(topt_store_ops.set(&ep, &other, &v), T_FAILURE);
	CHECK_EQ(topt_store_ops.get(&ep, (const struct topt_def *)
				     ((const char *)&defs[1] + 4), &v), -1);
	CHECK_EQ(topt_store_ops.get(&ep, &defs[NDEFS], &v), -1);
	topt_store_fini(&ep.s);
	CHECK(ep.s.vals == NULL);
	CHECK_EQ(topt_store_ops.get(&ep, &defs[4], &v), -1);
	/* an empty table */
	REQUIRE(topt_store_init(&ep.s, &(struct topt_table){ defs, 0,
		&topt_store_ops }) == 0);
	topt_store_fini(&ep.s);
}

static t_scalar_t val(struct ep *ep, int i)
{
	union topt_val v;

	REQUIRE(topt_store_ops.get(ep, &defs[i], &v) == 0);
	return v.i;
}

static void test_assoc(void)
{
	struct buf in;
	struct ep ep;
	union topt_val v;

	REQUIRE(topt_store_init(&ep.s, &tab) == 0);
	memset(&in, 0, sizeof(in));
	b_opt(&in, INET_IP, IP_TOS, 0, "\x28", 1);	/* old name, 1 byte */
	b_opt(&in, XTI_GENERIC, XTI_SNDBUF, 0, V(100));	/* not ASSOC */
	b_opt(&in, 0x5151, 3, 0, "zz", 2);		/* unknown */
	b_opt(&in, INET_IP, T_IP_TTL, 0, V(1000));	/* clamped to 255 */
	b_opt(&in, INET_TCP, T_TCP_MAXSEG, 0, V(100));	/* read-only */
	b_opt(&in, INET_UDP, T_UDP_CHECKSUM, 0, V(T_NO));	/* privileged */
	b_opt(&in, INET_TCP, T_TCP_KEEPALIVE, 0,
	      (&(struct t_kpalive){ T_YES, -4 }), sizeof(struct t_kpalive));
	b_opt(&in, INET_IP, T_IP_OPTIONS, 0, "abcdef", 6);
	CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, false), 0);
	CHECK_EQ(val(&ep, 7), 0x28);
	CHECK_EQ(val(&ep, 4), 8192);
	CHECK_EQ(val(&ep, 8), 255);
	CHECK_EQ(val(&ep, 10), 536);
	CHECK_EQ(val(&ep, 11), T_YES);
	REQUIRE(topt_store_ops.get(&ep, &defs[9], &v) == 0);
	CHECK_EQ(v.kp.kp_onoff, T_NO);		/* illegal: ignored */
	REQUIRE(topt_store_ops.get(&ep, &defs[6], &v) == 0);
	CHECK_EQ(v.bytes.len, 6);
	CHECK(memcmp(v.bytes.b, "abcdef", 6) == 0);
	/* privileged: applied */
	CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, true), 0);
	CHECK_EQ(val(&ep, 11), T_NO);
	CHECK_EQ(val(&ep, 10), 536);
	/* a legal keep-alive is applied */
	memset(&in, 0, sizeof(in));
	b_opt(&in, INET_TCP, T_TCP_KEEPALIVE, 0,
	      (&(struct t_kpalive){ T_YES, 50 }), sizeof(struct t_kpalive));
	CHECK_EQ(topt_assoc(&tab, &ep, in.b, in.len, false), 0);
	REQUIRE(topt_store_ops.get(&ep, &defs[9], &v) == 0);
	CHECK_EQ(v.kp.kp_onoff, T_YES);
	CHECK_EQ(v.kp.kp_timeout, 50);
	/* no options, no table */
	CHECK_EQ(topt_assoc(&tab, &ep, in.b, 0, false), 0);
	CHECK_EQ(topt_assoc(NULL, &ep, NULL, 0, false), 0);
	CHECK_EQ(topt_assoc(NULL, &ep, in.b, in.len, false), TBADOPT);
	topt_store_fini(&ep.s);
}

int main(void)
{
	th_mark();
	test_find();
	test_size();
	test_default();
	test_put();
	test_store();
	test_assoc();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
