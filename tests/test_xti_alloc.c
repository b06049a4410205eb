/*
 * test_xti_alloc -- t_alloc and t_free: each structure type with the
 * buffers its fields name sized from the endpoint's t_info (T_CALL's
 * udata the larger of connect and discon, T_UNITDATA's the tsdu), len 0;
 * fields not named left NULL/0; a size of 0 gives no buffer; T_INVALID
 * and T_INFINITE sizes fail TSYSERR/EINVAL when the field is named and
 * leave it empty with T_ALL; T_INFO needs no endpoint; TNOSTRUCTYPE;
 * TBADF.  t_free frees all (the ASan build checks for leaks) and takes
 * NULL.
 */
#include "ferry.h"

static void test_sizes(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_UNBND);
	struct t_bind *b;
	struct t_optmgmt *o;
	struct t_call *c;
	struct t_discon *d;
	struct t_info *ti;

	b = t_alloc(f->xfd, T_BIND, T_ALL);
	REQUIRE(b != NULL);
	CHECK(b->addr.buf != NULL);
	CHECK_EQ(b->addr.maxlen, 32);
	CHECK_EQ(b->addr.len, 0);
	CHECK_EQ(b->qlen, 0);
	memset(b->addr.buf, 1, 32);
	CHECK_RET(t_free(b, T_BIND), 0);
	o = t_alloc(f->xfd, T_OPTMGMT, T_OPT);
	REQUIRE(o != NULL);
	CHECK_EQ(o->opt.maxlen, 128);
	CHECK(o->opt.buf != NULL);
	CHECK_RET(t_free(o, T_OPTMGMT), 0);
	c = t_alloc(f->xfd, T_CALL, T_ALL);
	REQUIRE(c != NULL);
	CHECK_EQ(c->addr.maxlen, 32);
	CHECK_EQ(c->opt.maxlen, 128);
	CHECK_EQ(c->udata.maxlen, 64);	/* max(connect 64, discon 32) */
	CHECK(c->udata.buf != NULL);
	CHECK_RET(t_free(c, T_CALL), 0);
	c = t_alloc(f->xfd, T_CALL, T_ADDR);
	REQUIRE(c != NULL);
	CHECK_EQ(c->addr.maxlen, 32);
	CHECK(c->opt.buf == NULL && c->opt.maxlen == 0);
	CHECK(c->udata.buf == NULL && c->udata.maxlen == 0);
	CHECK_RET(t_free(c, T_CALL), 0);
	d = t_alloc(f->xfd, T_DIS, T_ALL);
	REQUIRE(d != NULL);
	CHECK_EQ(d->udata.maxlen, 32);
	CHECK_RET(t_free(d, T_DIS), 0);
	ti = t_alloc(-1, T_INFO, 0);	/* any fd */
	REQUIRE(ti != NULL);
	CHECK_RET(t_free(ti, T_INFO), 0);
	CHECK(t_alloc(f->xfd, 99, T_ALL) == NULL);
	CHECK_EQ(t_errno, TNOSTRUCTYPE);
	CHECK(t_alloc(-1, T_BIND, T_ALL) == NULL);
	CHECK_EQ(t_errno, TBADF);
	CHECK_TERR(t_free(ti, 99), TNOSTRUCTYPE);
	CHECK_RET(t_free(NULL, T_CALL), 0);
	ferry_free(f);
}

static void test_limits(void)
{
	struct ferry *f = ferry_ep(T_CLTS, TS_UNBND);
	struct t_unitdata *u;
	struct t_uderr *e;
	struct t_call *c;

	u = t_alloc(f->xfd, T_UNITDATA, T_ALL);
	REQUIRE(u != NULL);
	CHECK_EQ(u->addr.maxlen, 32);
	CHECK_EQ(u->opt.maxlen, 128);
	CHECK_EQ(u->udata.maxlen, 1024);
	CHECK_RET(t_free(u, T_UNITDATA), 0);
	e = t_alloc(f->xfd, T_UDERROR, T_ALL);
	REQUIRE(e != NULL);
	CHECK_EQ(e->addr.maxlen, 32);
	CHECK_EQ(e->opt.maxlen, 128);
	CHECK_RET(t_free(e, T_UDERROR), 0);
	/* connect/discon are T_INVALID here */
	c = t_alloc(f->xfd, T_CALL, T_ALL);
	REQUIRE(c != NULL);
	CHECK(c->udata.buf == NULL && c->udata.maxlen == 0);
	CHECK_EQ(c->addr.maxlen, 32);
	CHECK_RET(t_free(c, T_CALL), 0);
	errno = 0;
	CHECK(t_alloc(f->xfd, T_CALL, T_ADDR | T_UDATA) == NULL);
	CHECK_EQ(t_errno, TSYSERR);
	CHECK_EQ(errno, EINVAL);
	CHECK(t_alloc(f->xfd, T_DIS, T_UDATA) == NULL);
	CHECK_EQ(t_errno, TSYSERR);
	ferry_free(f);

	/* infinite address, no TSDU, no options */
	struct T_info_ack ia = fi_info(T_CLTS, TS_UNBND);
	ia.ADDR_size = T_INFINITE;
	ia.TSDU_size = 0;
	ia.OPT_size = 0;
	f = ferry_new();
	CHECK_RET(ferry_sync_ep(f, &ia), T_UNBND);
	u = t_alloc(f->xfd, T_UNITDATA, T_ALL);
	REQUIRE(u != NULL);
	CHECK(u->addr.buf == NULL && u->addr.maxlen == 0);
	CHECK(u->opt.buf == NULL && u->opt.maxlen == 0);
	CHECK(u->udata.buf == NULL && u->udata.maxlen == 0);
	CHECK_RET(t_free(u, T_UNITDATA), 0);
	u = t_alloc(f->xfd, T_UNITDATA, T_OPT | T_UDATA);	/* sizes 0 */
	REQUIRE(u != NULL);
	CHECK(u->opt.buf == NULL && u->udata.buf == NULL);
	CHECK_RET(t_free(u, T_UNITDATA), 0);
	errno = 0;
	CHECK(t_alloc(f->xfd, T_BIND, T_ADDR) == NULL);
	CHECK_EQ(t_errno, TSYSERR);
	CHECK_EQ(errno, EINVAL);
	ferry_free(f);
}

int main(void)
{
	test_sizes();
	test_limits();
	T_DONE();
}
