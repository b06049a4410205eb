/*
 * test_inet_tcp_opts -- INET_TCP options on /dev/tcp and /dev/inet/tcp
 * as XTI has them, in each of the four configurations:
 *
 *   - TCP_MAXSEG is read-only (T_READONLY on T_NEGOTIATE), and a
 *     T_NEGOTIATE of T_ALLOPT (back to the defaults) leaves a later
 *     connection's segment size alone (it set a 536-byte limit before);
 *   - TCP_KEEPALIVE's time beyond what Linux takes (546 minutes) is
 *     clamped, T_PARTSUCCESS, instead of failing with keep-alive left
 *     on;
 *   - a T_CONN_REQ refused (a bad address) changes none of its options;
 *   - an accepted connection has the accepting endpoint's options, not
 *     those its listener negotiated (accept4 copies the listener's);
 *   - IP_REUSEADDR is read-only T_YES (the provider needs it).
 */
#include "test_inet_tcp_lib.h"

struct kp {
	struct t_opthdr h;
	struct t_kpalive v;
};

struct u32 {
	struct t_opthdr h;
	t_uscalar_t v;
};

/* One option's request (value vlen bytes, or none) with flags; what
 * came back into *out (up to outmax); the result's flags, or -1. */
static long opt1(int fd, long flags, t_uscalar_t level, t_uscalar_t name,
		 const void *val, size_t vlen, void *out, size_t outmax)
{
	unsigned char in[64];
	struct t_opthdr h = { (t_uscalar_t)(sizeof(h) + vlen), level, name, 0 };
	struct t_optmgmt req, ret;

	memcpy(in, &h, sizeof(h));
	if (vlen > 0)
		memcpy(in + sizeof(h), val, vlen);
	req.opt.buf = (char *)in;
	req.opt.len = (int)h.len;
	req.opt.maxlen = 0;
	req.flags = flags;
	ret.opt.buf = out;
	ret.opt.maxlen = (int)outmax;
	ret.opt.len = 0;
	ret.flags = 0;
	if (t_optmgmt(fd, &req, &ret) != 0)
		return -1;
	return ret.flags;
}

/* T_CURRENT of a t_uscalar_t option, whose status must be st */
static t_uscalar_t cur_st(int fd, t_uscalar_t level, t_uscalar_t name,
			  long st)
{
	struct u32 o;

	memset(&o, 0, sizeof(o));
	CHECK_RET(opt1(fd, T_CURRENT, level, name, NULL, 0, &o, sizeof(o)),
		  st);
	CHECK_EQ(o.h.name, name);
	return o.v;
}

static t_uscalar_t cur_u32(int fd, t_uscalar_t level, t_uscalar_t name)
{
	return cur_st(fd, level, name, T_SUCCESS);
}

static struct t_kpalive cur_kp(int fd)
{
	struct kp o;

	memset(&o, 0, sizeof(o));
	(void)opt1(fd, T_CURRENT, INET_TCP, T_TCP_KEEPALIVE, NULL, 0, &o,
		   sizeof(o));
	CHECK_EQ(o.h.name, T_TCP_KEEPALIVE);
	return o.v;
}

static void test_maxseg(void)
{
	unsigned char all[512];
	t_uscalar_t v = 1000;
	struct u32 o;
	int c, s;

	c = xt_open();
	REQUIRE(c >= 0);
	CHECK_RET(opt1(c, T_NEGOTIATE, INET_TCP, T_TCP_MAXSEG, &v, sizeof(v),
		       &o, sizeof(o)), T_READONLY);
	CHECK_RET(t_close(c), 0);
	/* every INET_TCP option back to its default, then a connection:
	 * its segments as large as loopback allows (about 32 K here; a
	 * T_ALLOPT reset used to leave TCP_MAXSEG's limit of 536) */
	{
		struct sa a;
		int lfd = xt_listener(1, &a), seq = -1;

		c = xt_open();
		s = xt_open();
		REQUIRE(lfd >= 0 && c >= 0 && s >= 0);
		CHECK(opt1(c, T_NEGOTIATE, INET_TCP, T_ALLOPT, NULL, 0, all,
			   sizeof(all)) >= 0);
		CHECK_RET(xt_bind_lo(c, 0, 0, NULL), 0);
		CHECK_RET(xt_call(c, &a), 0);
		CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
		CHECK_RET(xt_accept(lfd, s, seq), 0);
		CHECK_RET(xt_connected(c), 0);
		v = cur_st(c, INET_TCP, T_TCP_MAXSEG, T_READONLY);
		CHECK(v > 1000);
		if (v <= 1000)
			fprintf(stderr, "segment size %u\n", (unsigned)v);
		CHECK_RET(t_close(lfd), 0);
	}
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(s), 0);
}

static void test_keepalive_clamp(void)
{
	struct t_kpalive k = { T_YES, 600 }, got;
	struct kp o;
	int fd = xt_open();

	REQUIRE(fd >= 0);
	memset(&o, 0, sizeof(o));
	CHECK_RET(opt1(fd, T_NEGOTIATE, INET_TCP, T_TCP_KEEPALIVE, &k,
		       sizeof(k), &o, sizeof(o)), T_PARTSUCCESS);
	CHECK_EQ(o.v.kp_onoff, T_YES);
	CHECK_EQ(o.v.kp_timeout, 546);
	got = cur_kp(fd);
	CHECK_EQ(got.kp_onoff, T_YES);
	CHECK_EQ(got.kp_timeout, 546);
	/* off again, and an illegal value changes nothing */
	k.kp_onoff = T_NO;
	k.kp_timeout = T_UNSPEC;
	CHECK_RET(opt1(fd, T_NEGOTIATE, INET_TCP, T_TCP_KEEPALIVE, &k,
		       sizeof(k), &o, sizeof(o)), T_SUCCESS);
	k.kp_onoff = T_YES;
	k.kp_timeout = -5;
	CHECK_RET(opt1(fd, T_NEGOTIATE, INET_TCP, T_TCP_KEEPALIVE, &k,
		       sizeof(k), &o, sizeof(o)), T_FAILURE);
	CHECK_EQ(cur_kp(fd).kp_onoff, T_NO);
	CHECK_RET(t_close(fd), 0);
}

static void test_refused_connect(void)
{
	struct u32 o = { { sizeof(o), INET_TCP, T_TCP_NODELAY, 0 }, T_YES };
	char bad[3] = { 1, 2, 3 };
	struct t_call c;
	int fd = xt_open();

	REQUIRE(fd >= 0);
	CHECK_RET(xt_bind_lo(fd, 0, 0, NULL), 0);
	memset(&c, 0, sizeof(c));
	c.addr.buf = bad;
	c.addr.len = sizeof(bad);
	c.opt.buf = (char *)&o;
	c.opt.len = sizeof(o);
	CHECK_RET(t_connect(fd, &c, NULL), -1);
	CHECK_EQ(t_errno, TBADADDR);
	CHECK_EQ(cur_u32(fd, INET_TCP, T_TCP_NODELAY), T_NO);
	CHECK_RET(t_close(fd), 0);
}

/* A caller connected to listener lfd (at a), accepted on acc: the
 * caller's fd. */
static int call_accept(int lfd, const struct sa *a, int acc)
{
	int c = xt_open(), seq = -1;

	REQUIRE(c >= 0);
	CHECK_RET(xt_bind_lo(c, 0, 0, NULL), 0);
	CHECK_RET(xt_call(c, a), 0);
	CHECK_RET(xt_listen(lfd, &seq, NULL), 0);
	CHECK_RET(xt_accept(lfd, acc, seq), 0);
	CHECK_RET(xt_connected(c), 0);
	return c;
}

static void test_acceptor_options(void)
{
	struct t_kpalive k = { T_YES, 7 };
	t_uscalar_t yes = T_YES;
	struct kp o;
	struct sa a;
	int lfd, c, s, s2;

	lfd = xt_open();
	REQUIRE(lfd >= 0);
	CHECK_RET(opt1(lfd, T_NEGOTIATE, INET_TCP, T_TCP_KEEPALIVE, &k,
		       sizeof(k), &o, sizeof(o)), T_SUCCESS);
	CHECK_RET(opt1(lfd, T_NEGOTIATE, INET_TCP, T_TCP_NODELAY, &yes,
		       sizeof(yes), &o, sizeof(o)), T_SUCCESS);
	CHECK_RET(xt_bind_lo(lfd, 0, 2, &a), 2);
	/* a fresh acceptor: its own (default) options */
	s = xt_open();
	REQUIRE(s >= 0);
	c = call_accept(lfd, &a, s);
	CHECK_EQ(cur_kp(s).kp_onoff, T_NO);
	CHECK_EQ(cur_u32(s, INET_TCP, T_TCP_NODELAY), T_NO);
	/* one that negotiated keep-alive itself keeps its own time */
	s2 = xt_open();
	REQUIRE(s2 >= 0);
	k.kp_timeout = 3;
	CHECK_RET(opt1(s2, T_NEGOTIATE, INET_TCP, T_TCP_KEEPALIVE, &k,
		       sizeof(k), &o, sizeof(o)), T_SUCCESS);
	CHECK_RET(t_close(c), 0);
	c = call_accept(lfd, &a, s2);
	CHECK_EQ(cur_kp(s2).kp_onoff, T_YES);
	CHECK_EQ(cur_kp(s2).kp_timeout, 3);
	CHECK_EQ(cur_u32(s2, INET_TCP, T_TCP_NODELAY), T_NO);
	/* the listener's own are untouched */
	CHECK_EQ(cur_kp(lfd).kp_onoff, T_YES);
	CHECK_EQ(cur_kp(lfd).kp_timeout, 7);
	CHECK_RET(t_close(c), 0);
	CHECK_RET(t_close(s), 0);
	CHECK_RET(t_close(s2), 0);
	CHECK_RET(t_close(lfd), 0);
}

/* IP_REUSEADDR stays on for a TCP endpoint (the provider rebinds with
 * it): read-only, T_YES. */
static void test_reuseaddr(void)
{
	t_uscalar_t no = T_NO;
	struct u32 o;
	int fd = xt_open();

	REQUIRE(fd >= 0);
	CHECK_RET(opt1(fd, T_NEGOTIATE, INET_IP, T_IP_REUSEADDR, &no,
		       sizeof(no), &o, sizeof(o)), T_READONLY);
	CHECK_EQ(cur_st(fd, INET_IP, T_IP_REUSEADDR, T_READONLY), T_YES);
	CHECK_RET(xt_bind_lo(fd, 0, 0, NULL), 0);
	CHECK_EQ(cur_st(fd, INET_IP, T_IP_REUSEADDR, T_READONLY), T_YES);
	CHECK_RET(t_close(fd), 0);
}

int main(void)
{
	FOR_EACH_CFG({
		test_reuseaddr();
		test_maxseg();
		test_keepalive_clamp();
		test_refused_connect();
		test_acceptor_options();
	});
	T_DONE();
}
