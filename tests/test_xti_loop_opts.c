/*
 * test_xti_loop_opts -- t_optmgmt end to end: libxti, timod and the
 * options code the loopback providers share (src/transport/topt.c).
 *
 * On /dev/ticots: T_DEFAULT of T_ALLOPT at XTI_GENERIC lists the
 * XTI_GENERIC options with their defaults (XTI_LINGER off with T_UNSPEC,
 * XTI_RCVBUF/XTI_SNDBUF 65536, XTI_RCVLOWAT/XTI_SNDLOWAT 1; XTI_DEBUG
 * too when privileged); T_NEGOTIATE of XTI_LINGER, XTI_RCVBUF,
 * XTI_RCVLOWAT, XTI_SNDBUF and XTI_SNDLOWAT in one buffer, each answered
 * in order with T_SUCCESS, then T_CURRENT (one option, and T_ALLOPT)
 * shows them while T_DEFAULT does not change and another endpoint keeps
 * its own; T_CHECK of a legal value (T_SUCCESS, nothing changed), of a
 * value out of range (T_PARTSUCCESS with the value it would get) and of
 * an illegal one (T_FAILURE), none of them applied; T_NEGOTIATE of an
 * illegal value (T_FAILURE, the current value kept); T_NEGOTIATE of
 * T_ALLOPT back to the defaults.  An unknown option name and an unknown
 * level are answered with status T_NOTSUPPORT (the call succeeds, the
 * overall result is T_NOTSUPPORT) while a known option in the same
 * buffer is negotiated.  Errors: TBADFLAG, TBADOPT (T_CHECK of T_ALLOPT,
 * a header longer than the buffer), TBUFOVFLW.  /dev/ticlts and
 * /dev/ticotsord answer T_DEFAULT of T_ALLOPT with the same options.
 */
#include "ferry.h"

#define CLTS	"/dev/ticlts"
#define COTS	"/dev/ticots"
#define ORD	"/dev/ticotsord"

/* an option buffer being built */
struct obuf {
	union {
		char b[512];
		t_uscalar_t align;
	};
	unsigned len;
};

static void ob_add(struct obuf *o, t_uscalar_t level, t_uscalar_t name,
		   const void *v, unsigned vlen)
{
	struct t_opthdr h = { sizeof(h) + vlen, level, name, 0 };

	REQUIRE(o->len + h.len + 8 <= sizeof(o->b));
	memcpy(o->b + o->len, &h, sizeof(h));
	if (vlen > 0)
		memcpy(o->b + o->len + sizeof(h), v, vlen);
	o->len += (unsigned)((h.len + sizeof(t_uscalar_t) - 1) &
			     ~(sizeof(t_uscalar_t) - 1));
}

static void ob_u(struct obuf *o, t_uscalar_t name, t_uscalar_t v)
{
	ob_add(o, XTI_GENERIC, name, &v, sizeof(v));
}

static void ob_linger(struct obuf *o, t_scalar_t onoff, t_scalar_t secs)
{
	struct t_linger l = { onoff, secs };

	ob_add(o, XTI_GENERIC, XTI_LINGER, &l, sizeof(l));
}

/* t_optmgmt of in with flags; the answer in out.  t_optmgmt's result;
 * *result gets ret.flags. */
static int mgmt(int fd, long flags, const struct obuf *in, struct obuf *out,
		long *result)
{
	struct t_optmgmt req, ret;
	int r;

	memset(&req, 0, sizeof(req));
	req.opt.buf = (char *)in->b;
	req.opt.len = in->len;
	req.flags = flags;
	memset(&ret, 0, sizeof(ret));
	memset(out, 0, sizeof(*out));
	ret.opt.buf = out->b;
	ret.opt.maxlen = sizeof(out->b);
	ret.flags = -1;
	r = t_optmgmt(fd, &req, &ret);
	out->len = ret.opt.len;
	if (result != NULL)
		*result = ret.flags;
	return r;
}

/* The i-th option of an answer (NULL past the end). */
static struct t_opthdr *nth(struct obuf *o, int i)
{
	struct netbuf nb = { sizeof(o->b), o->len, o->b };
	struct t_opthdr *h = T_OPT_FIRSTHDR(&nb);

	while (h != NULL && i-- > 0)
		h = T_OPT_NEXTHDR(&nb, h);
	return h;
}

/* The option (level, name) of an answer. */
static struct t_opthdr *find(struct obuf *o, t_uscalar_t level,
			     t_uscalar_t name)
{
	struct t_opthdr *h;

	for (int i = 0; (h = nth(o, i)) != NULL; i++)
		if (h->level == level && h->name == name)
			return h;
	return NULL;
}

static t_uscalar_t val(const struct t_opthdr *h)
{
	t_uscalar_t v;

	memcpy(&v, T_OPT_DATA(h), sizeof(v));
	return v;
}

/* One XTI_GENERIC option of an answer: its status and value. */
#define CHECK_OPT(o, name, st, v) do {					\
	struct t_opthdr *_h = find(o, XTI_GENERIC, name);		\
	CHECK(_h != NULL);						\
	if (_h != NULL) {						\
		CHECK_EQ(_h->len, sizeof(*_h) + sizeof(t_uscalar_t));	\
		CHECK_EQ(_h->status, st);				\
		CHECK_EQ(val(_h), v);					\
	}								\
} while (0)

#define CHECK_LINGER(o, st, on, secs) do {				\
	struct t_opthdr *_h = find(o, XTI_GENERIC, XTI_LINGER);		\
	struct t_linger _l;						\
	CHECK(_h != NULL);						\
	if (_h != NULL) {						\
		CHECK_EQ(_h->len, sizeof(*_h) + sizeof(_l));		\
		CHECK_EQ(_h->status, st);				\
		memcpy(&_l, T_OPT_DATA(_h), sizeof(_l));		\
		CHECK_EQ(_l.l_onoff, on);				\
		CHECK_EQ(_l.l_linger, secs);				\
	}								\
} while (0)

/* The five unprivileged XTI_GENERIC options of an answer, T_SUCCESS. */
#define CHECK_GENERIC(o, on, secs, rbuf, rlow, sbuf, slow) do {	\
	CHECK_LINGER(o, T_SUCCESS, on, secs);				\
	CHECK_OPT(o, XTI_RCVBUF, T_SUCCESS, rbuf);			\
	CHECK_OPT(o, XTI_RCVLOWAT, T_SUCCESS, rlow);			\
	CHECK_OPT(o, XTI_SNDBUF, T_SUCCESS, sbuf);			\
	CHECK_OPT(o, XTI_SNDLOWAT, T_SUCCESS, slow);			\
} while (0)

/* Options of T_ALLOPT at XTI_GENERIC in an answer: the five (XTI_DEBUG
 * too when privileged), every one at XTI_GENERIC. */
static void check_all_generic(struct obuf *o)
{
	struct t_opthdr *h;
	int n = 0;

	for (; (h = nth(o, n)) != NULL; n++)
		CHECK_EQ(h->level, XTI_GENERIC);
	if (geteuid() == 0) {
		CHECK_EQ(n, 6);
		CHECK(find(o, XTI_GENERIC, XTI_DEBUG) != NULL);
	} else {
		CHECK(n == 5 || n == 6);
	}
}

static void all_req(struct obuf *in)
{
	memset(in, 0, sizeof(*in));
	ob_add(in, XTI_GENERIC, T_ALLOPT, NULL, 0);
}

static void test_defaults(const char *dev)
{
	int fd = t_open(dev, O_RDWR, NULL);
	struct obuf in, out;
	long res;

	REQUIRE(fd >= 0);
	all_req(&in);
	CHECK_RET(mgmt(fd, T_DEFAULT, &in, &out, &res), 0);
	CHECK_EQ(res, T_SUCCESS);
	check_all_generic(&out);
	CHECK_GENERIC(&out, T_NO, T_UNSPEC, 65536, 1, 65536, 1);
	CHECK_RET(t_close(fd), 0);
}

static void test_negotiate(void)
{
	int fd = t_open(COTS, O_RDWR, NULL), other = t_open(COTS, O_RDWR, NULL);
	struct obuf in, out;
	long res;

	REQUIRE(fd >= 0 && other >= 0);
	/* five options in one request, answered in order */
	memset(&in, 0, sizeof(in));
	ob_linger(&in, T_YES, 5);
	ob_u(&in, XTI_RCVBUF, 8192);
	ob_u(&in, XTI_RCVLOWAT, 10);
	ob_u(&in, XTI_SNDBUF, 16384);
	ob_u(&in, XTI_SNDLOWAT, 20);
	CHECK_RET(mgmt(fd, T_NEGOTIATE, &in, &out, &res), 0);
	CHECK_EQ(res, T_SUCCESS);
	CHECK_EQ(out.len, in.len);
	static const t_uscalar_t order[] = { XTI_LINGER, XTI_RCVBUF,
		XTI_RCVLOWAT, XTI_SNDBUF, XTI_SNDLOWAT };
	for (int i = 0; i < 5; i++) {
		struct t_opthdr *h = nth(&out, i);
		CHECK(h != NULL);
		if (h != NULL)
			CHECK_EQ(h->name, order[i]);
	}
	CHECK(nth(&out, 5) == NULL);
	CHECK_GENERIC(&out, T_YES, 5, 8192, 10, 16384, 20);
	CHECK_STATE(fd, T_UNBND);
	/* T_CURRENT: one option, and all of them */
	memset(&in, 0, sizeof(in));
	ob_u(&in, XTI_SNDBUF, 0);
	CHECK_RET(mgmt(fd, T_CURRENT, &in, &out, &res), 0);
	CHECK_EQ(res, T_SUCCESS);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 16384);
	all_req(&in);
	CHECK_RET(mgmt(fd, T_CURRENT, &in, &out, &res), 0);
	CHECK_EQ(res, T_SUCCESS);
	check_all_generic(&out);
	CHECK_GENERIC(&out, T_YES, 5, 8192, 10, 16384, 20);
	/* defaults unchanged; another endpoint has its own */
	CHECK_RET(mgmt(fd, T_DEFAULT, &in, &out, &res), 0);
	CHECK_OPT(&out, XTI_RCVBUF, T_SUCCESS, 65536);
	CHECK_RET(mgmt(other, T_CURRENT, &in, &out, &res), 0);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 65536);
	CHECK_LINGER(&out, T_SUCCESS, T_NO, T_UNSPEC);

	/* T_CHECK: legal, out of range, illegal; nothing applied */
	memset(&in, 0, sizeof(in));
	ob_u(&in, XTI_SNDBUF, 4096);
	CHECK_RET(mgmt(fd, T_CHECK, &in, &out, &res), 0);
	CHECK_EQ(res, T_SUCCESS);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 4096);
	memset(&in, 0, sizeof(in));
	ob_u(&in, XTI_RCVBUF, 0);		/* below the least, 1 */
	CHECK_RET(mgmt(fd, T_CHECK, &in, &out, &res), 0);
	CHECK_EQ(res, T_PARTSUCCESS);
	CHECK_OPT(&out, XTI_RCVBUF, T_PARTSUCCESS, 1);
	memset(&in, 0, sizeof(in));
	ob_linger(&in, 7, 5);			/* l_onoff neither */
	CHECK_RET(mgmt(fd, T_CHECK, &in, &out, &res), 0);
	CHECK_EQ(res, T_FAILURE);
	CHECK_EQ(nth(&out, 0)->status, T_FAILURE);
	/* ... and T_NEGOTIATE of it fails the option, not the call */
	CHECK_RET(mgmt(fd, T_NEGOTIATE, &in, &out, &res), 0);
	CHECK_EQ(res, T_FAILURE);
	CHECK_EQ(nth(&out, 0)->status, T_FAILURE);
	all_req(&in);
	CHECK_RET(mgmt(fd, T_CURRENT, &in, &out, &res), 0);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 16384);
	CHECK_OPT(&out, XTI_RCVBUF, T_SUCCESS, 8192);
	CHECK_LINGER(&out, T_SUCCESS, T_YES, 5);

	/* T_NEGOTIATE of T_ALLOPT: every option back to its default */
	CHECK_RET(mgmt(fd, T_NEGOTIATE, &in, &out, &res), 0);
	CHECK_EQ(res, T_SUCCESS);
	check_all_generic(&out);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 65536);
	CHECK_RET(mgmt(fd, T_CURRENT, &in, &out, &res), 0);
	CHECK_GENERIC(&out, T_NO, T_UNSPEC, 65536, 1, 65536, 1);
	CHECK_RET(t_close(other), 0);
	CHECK_RET(t_close(fd), 0);
}

static void test_unknown(void)
{
	int fd = t_open(ORD, O_RDWR, NULL);
	struct obuf in, out;
	struct t_opthdr *h;
	long res;

	REQUIRE(fd >= 0);
	memset(&in, 0, sizeof(in));
	ob_u(&in, 0x7777, 1);			/* no such name */
	ob_u(&in, XTI_SNDBUF, 12288);
	ob_add(&in, 0x4321, 1, &(t_uscalar_t){ 1 }, sizeof(t_uscalar_t));
	CHECK_RET(mgmt(fd, T_NEGOTIATE, &in, &out, &res), 0);
	CHECK_EQ(res, T_NOTSUPPORT);
	h = nth(&out, 0);
	CHECK(h != NULL && h->name == 0x7777 && h->status == T_NOTSUPPORT);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 12288);
	h = nth(&out, 2);
	CHECK(h != NULL && h->level == 0x4321 && h->status == T_NOTSUPPORT);
	CHECK(nth(&out, 3) == NULL);
	/* the known one was applied */
	memset(&in, 0, sizeof(in));
	ob_u(&in, XTI_SNDBUF, 0);
	CHECK_RET(mgmt(fd, T_CURRENT, &in, &out, &res), 0);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 12288);
	/* T_CHECK and T_DEFAULT of an unknown one: the same status */
	memset(&in, 0, sizeof(in));
	ob_u(&in, 0x7777, 1);
	CHECK_RET(mgmt(fd, T_CHECK, &in, &out, &res), 0);
	CHECK_EQ(res, T_NOTSUPPORT);
	CHECK_RET(mgmt(fd, T_DEFAULT, &in, &out, &res), 0);
	CHECK_EQ(res, T_NOTSUPPORT);
	/* T_ALLOPT of an unknown level */
	memset(&in, 0, sizeof(in));
	ob_add(&in, 0x5151, T_ALLOPT, NULL, 0);
	CHECK_RET(mgmt(fd, T_CURRENT, &in, &out, &res), 0);
	CHECK_EQ(res, T_NOTSUPPORT);
	CHECK_EQ(nth(&out, 0)->status, T_NOTSUPPORT);
	CHECK_RET(t_close(fd), 0);
}

static void test_errors(void)
{
	int fd = t_open(COTS, O_RDWR, NULL);
	struct t_optmgmt req, ret;
	struct obuf in, out;
	char small[40];

	REQUIRE(fd >= 0);
	all_req(&in);
	CHECK_TERR(mgmt(fd, 0, &in, &out, NULL), TBADFLAG);
	CHECK_TERR(mgmt(fd, T_DEFAULT | T_CHECK, &in, &out, NULL), TBADFLAG);
	CHECK_TERR(mgmt(fd, T_CHECK, &in, &out, NULL), TBADOPT);
	memset(&in, 0, sizeof(in));
	ob_u(&in, XTI_SNDBUF, 4096);
	in.len -= 4;				/* header says 20 */
	CHECK_TERR(mgmt(fd, T_NEGOTIATE, &in, &out, NULL), TBADOPT);
	/* the answer does not fit */
	all_req(&in);
	memset(&req, 0, sizeof(req));
	req.opt.buf = in.b;
	req.opt.len = in.len;
	req.flags = T_DEFAULT;
	memset(&ret, 0, sizeof(ret));
	ret.opt.buf = small;
	ret.opt.maxlen = sizeof(small);
	CHECK_TERR(t_optmgmt(fd, &req, &ret), TBUFOVFLW);
	/* the endpoint is as it was */
	CHECK_STATE(fd, T_UNBND);
	memset(&in, 0, sizeof(in));
	ob_u(&in, XTI_SNDBUF, 0);
	CHECK_RET(mgmt(fd, T_CURRENT, &in, &out, NULL), 0);
	CHECK_OPT(&out, XTI_SNDBUF, T_SUCCESS, 65536);
	CHECK_RET(t_close(fd), 0);
}

int main(void)
{
	test_defaults(COTS);
	test_defaults(CLTS);
	test_defaults(ORD);
	test_negotiate();
	test_unknown();
	test_errors();
	T_DONE();
}
