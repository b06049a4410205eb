/*
 * test_xti_bind -- t_bind, t_unbind, t_optmgmt, t_getprotaddr against a
 * ferry-clip provider: the exact T_BIND_REQ (address, CONIND_number; a
 * NULL req binds to any address with an empty address and qlen 0), the
 * bound address and negotiated qlen returned in ret, TBUFOVFLW with the
 * bind done (T_IDLE) when ret is too small, maxlen 0 meaning "not
 * wanted", every T_ERROR_ACK error carried back (TADDRBUSY, TNOADDR,
 * TACCES, TBADADDR, TSYSERR with its errno), TBADADDR for an address
 * longer than the provider's, TOUTSTATE outside T_UNBND; t_unbind's
 * T_UNBIND_REQ and TLOOK when a connection indication or a datagram is
 * waiting; t_optmgmt's T_OPTMGMT_REQ with the options and flags, the
 * returned options and flags, TBADFLAG, TBADOPT for malformed option
 * headers, TBUFOVFLW, errors from the provider; t_getprotaddr's
 * T_ADDR_REQ with the addresses per state and TBUFOVFLW.
 */
#include "ferry.h"

static void test_bind(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_UNBND);
	struct fmsg w, a;
	char addr[16] = "server-addr", got[32];
	struct t_bind req, ret;

	CHECK_STATE(f->xfd, T_UNBND);
	/* a named address, qlen 5; the provider negotiates 3 */
	req.addr.buf = addr;
	req.addr.len = 11;
	req.addr.maxlen = sizeof(addr);
	req.qlen = 5;
	memset(&ret, 0, sizeof(ret));
	ret.addr.buf = got;
	ret.addr.maxlen = sizeof(got);
	ferry_expect(f, __LINE__, fm_bind_req(&w, addr, 11, 5),
		     fm_bind_ack(&a, "bound-to", 8, 3));
	CHECK_RET(t_bind(f->xfd, &req, &ret), 0);
	ferry_sync(f);
	CHECK_EQ(ret.addr.len, 8);
	CHECK_MEM(got, "bound-to", 8);
	CHECK_EQ(ret.qlen, 3);
	CHECK_STATE(f->xfd, T_IDLE);
	/* bind again: the library's state table says no */
	CHECK_TERR(t_bind(f->xfd, &req, &ret), TOUTSTATE);
	FERRY_NOTHING(f);

	/* unbind: T_UNBIND_REQ, T_OK_ACK */
	ferry_expect(f, __LINE__, fm_unbind_req(&w),
		     fm_ok_ack(&a, T_UNBIND_REQ));
	CHECK_RET(t_unbind(f->xfd), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_UNBND);
	CHECK_TERR(t_unbind(f->xfd), TOUTSTATE);

	/* NULL req: any address, qlen 0; NULL ret */
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
		     fm_bind_ack(&a, "any", 3, 0));
	CHECK_RET(t_bind(f->xfd, NULL, NULL), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_expect(f, __LINE__, fm_unbind_req(&w),
		     fm_ok_ack(&a, T_UNBIND_REQ));
	CHECK_RET(t_unbind(f->xfd), 0);
	ferry_sync(f);

	/* ret too small: TBUFOVFLW, but bound */
	ret.addr.maxlen = 4;
	ret.addr.len = 99;
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
		     fm_bind_ack(&a, "longer-address", 14, 0));
	CHECK_TERR(t_bind(f->xfd, NULL, &ret), TBUFOVFLW);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_expect(f, __LINE__, fm_unbind_req(&w),
		     fm_ok_ack(&a, T_UNBIND_REQ));
	CHECK_RET(t_unbind(f->xfd), 0);
	ferry_sync(f);

	/* maxlen 0: the address is not wanted, no error */
	ret.addr.maxlen = 0;
	ret.addr.len = 99;
	ret.qlen = 77;
	req.qlen = 2;
	ferry_expect(f, __LINE__, fm_bind_req(&w, addr, 11, 2),
		     fm_bind_ack(&a, "longer-address", 14, 2));
	CHECK_RET(t_bind(f->xfd, &req, &ret), 0);
	ferry_sync(f);
	CHECK_EQ(ret.addr.len, 0);
	CHECK_EQ(ret.qlen, 2);
	ferry_free(f);

	/* an answer longer than the library's buffer for it (sized from
	 * ADDR_size and ret's maxlen; here an address beyond ADDR_size, as
	 * a provider whose addresses have no limit can send one beyond any
	 * size the library picks): TBUFOVFLW, bound, as for any address
	 * too long for ret -- not TPROTO */
	struct T_info_ack ia = fi_info(T_COTS, TS_UNBND);
	static char huge[400];
	ia.ADDR_size = 100;
	f = ferry_new();
	CHECK_RET(ferry_sync_ep(f, &ia), T_UNBND);
	memset(huge, 'h', sizeof(huge));
	ret.addr.maxlen = 50;
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
		     fm_bind_ack(&a, huge, (int)sizeof(huge), 0));
	CHECK_TERR(t_bind(f->xfd, NULL, &ret), TBUFOVFLW);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
}

static void test_bind_errors(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_UNBND);
	struct fmsg w, a;
	char big[33];
	struct t_bind req;
	static const int errs[] = { TADDRBUSY, TNOADDR, TACCES, TBADADDR,
				    TOUTSTATE };

	memset(big, 'x', sizeof(big));
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
			     fm_error_ack(&a, T_BIND_REQ, errs[i], 0));
		CHECK_TERR(t_bind(f->xfd, NULL, NULL), errs[i]);
		ferry_sync(f);
		CHECK_STATE(f->xfd, T_UNBND);
	}
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
		     fm_error_ack(&a, T_BIND_REQ, TSYSERR, ENOMEM));
	CHECK_TSYS(t_bind(f->xfd, NULL, NULL), ENOMEM);
	ferry_sync(f);
	/* an address longer than the provider's ADDR_size (32) */
	req.addr.buf = big;
	req.addr.len = sizeof(big);
	req.qlen = 0;
	CHECK_TERR(t_bind(f->xfd, &req, NULL), TBADADDR);
	FERRY_NOTHING(f);
	/* a bad pointer */
	req.addr.buf = bad_address();
	req.addr.len = 4;
	CHECK_TSYS(t_bind(f->xfd, &req, NULL), EFAULT);
	CHECK_TSYS(t_bind(f->xfd, bad_address(), NULL), EFAULT);
	FERRY_NOTHING(f);
	CHECK_TERR(t_bind(-1, NULL, NULL), TBADF);
	CHECK_TERR(t_bind(f->pfd, NULL, NULL), TBADF);
	CHECK_STATE(f->xfd, T_UNBND);
	ferry_free(f);
}

static void test_unbind_look(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_IDLE);
	struct ferry *g = ferry_ep(T_CLTS, TS_IDLE);
	struct fmsg w, a, m;

	CHECK_STATE(f->xfd, T_IDLE);
	/* a connection indication waits: TLOOK (T_LISTEN) */
	ferry_put(f, fm_conn_ind(&m, "caller", 6, NULL, 0, 7));
	CHECK_TERR(t_unbind(f->xfd), TLOOK);
	CHECK_RET(t_look(f->xfd), T_LISTEN);
	FERRY_NOTHING(f);
	CHECK_STATE(f->xfd, T_IDLE);
	/* a datagram waits: TLOOK (T_DATA) */
	ferry_put(g, fm_data(fm_unitdata_ind(&m, "from", 4, NULL, 0), "dg", 2));
	CHECK_TERR(t_unbind(g->xfd), TLOOK);
	CHECK_RET(t_look(g->xfd), T_DATA);
	FERRY_NOTHING(g);
	/* an error ack */
	ferry_free(f);
	f = ferry_ep(T_COTS, TS_IDLE);
	ferry_expect(f, __LINE__, fm_unbind_req(&w),
		     fm_error_ack(&a, T_UNBIND_REQ, TOUTSTATE, 0));
	CHECK_TERR(t_unbind(f->xfd), TOUTSTATE);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
	ferry_free(g);
}

struct opt1 {
	struct t_opthdr h;
	t_scalar_t v;
};

static void test_optmgmt(void)
{
	struct ferry *f = ferry_ep(T_COTS_ORD, TS_UNBND);
	struct fmsg w, a;
	struct opt1 o = { { sizeof(struct opt1), XTI_GENERIC, XTI_SNDBUF,
			    0 }, 8192 };
	struct opt1 back = { { sizeof(struct opt1), XTI_GENERIC, XTI_SNDBUF,
			       T_SUCCESS }, 16384 };
	char rbuf[64];
	struct t_optmgmt req, ret;
	static const int flags[] = { T_NEGOTIATE, T_CHECK, T_DEFAULT,
				     T_CURRENT };

	for (size_t i = 0; i < 4; i++) {
		req.opt.buf = (char *)&o;
		req.opt.len = sizeof(o);
		req.opt.maxlen = sizeof(o);
		req.flags = flags[i];
		ret.opt.buf = rbuf;
		ret.opt.maxlen = sizeof(rbuf);
		ret.opt.len = 0;
		ret.flags = 0;
		ferry_expect(f, __LINE__,
			     fm_optmgmt_req(&w, &o, sizeof(o), flags[i]),
			     fm_optmgmt_ack(&a, &back, sizeof(back),
					    T_SUCCESS));
		CHECK_RET(t_optmgmt(f->xfd, &req, &ret), 0);
		ferry_sync(f);
		CHECK_EQ(ret.opt.len, sizeof(back));
		CHECK_MEM(rbuf, &back, sizeof(back));
		CHECK_EQ(ret.flags, T_SUCCESS);
		CHECK_STATE(f->xfd, T_UNBND);
	}
	/* flags */
	req.flags = T_NEGOTIATE | T_CHECK;
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBADFLAG);
	req.flags = 0;
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBADFLAG);
	req.flags = T_SUCCESS;
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBADFLAG);
	/* malformed option headers */
	req.flags = T_NEGOTIATE;
	o.h.len = sizeof(o) + 4;
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBADOPT);
	o.h.len = sizeof(struct t_opthdr) - 1;
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBADOPT);
	req.opt.len = 3;
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBADOPT);
	FERRY_NOTHING(f);
	o.h.len = sizeof(o);
	req.opt.len = sizeof(o);
	/* ret too small */
	ret.opt.maxlen = 8;
	ferry_expect(f, __LINE__, fm_optmgmt_req(&w, &o, sizeof(o),
						 T_NEGOTIATE),
		     fm_optmgmt_ack(&a, &back, sizeof(back), T_SUCCESS));
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBUFOVFLW);
	ferry_sync(f);
	/* errors from the provider */
	ret.opt.maxlen = sizeof(rbuf);
	ferry_expect(f, __LINE__, fm_optmgmt_req(&w, &o, sizeof(o),
						 T_NEGOTIATE),
		     fm_error_ack(&a, T_OPTMGMT_REQ, TBADOPT, 0));
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TBADOPT);
	ferry_sync(f);
	ferry_expect(f, __LINE__, fm_optmgmt_req(&w, &o, sizeof(o),
						 T_NEGOTIATE),
		     fm_error_ack(&a, T_OPTMGMT_REQ, TACCES, 0));
	CHECK_TERR(t_optmgmt(f->xfd, &req, &ret), TACCES);
	ferry_sync(f);
	/* an empty option buffer with T_DEFAULT goes down as it is */
	req.opt.len = 0;
	req.flags = T_DEFAULT;
	ferry_expect(f, __LINE__, fm_optmgmt_req(&w, NULL, 0, T_DEFAULT),
		     fm_optmgmt_ack(&a, NULL, 0, T_SUCCESS));
	CHECK_RET(t_optmgmt(f->xfd, &req, &ret), 0);
	ferry_sync(f);
	CHECK_EQ(ret.opt.len, 0);
	/* NULL and bad pointers */
	CHECK_TSYS(t_optmgmt(f->xfd, NULL, &ret), EFAULT);
	CHECK_TSYS(t_optmgmt(f->xfd, &req, NULL), EFAULT);
	FERRY_NOTHING(f);
	ferry_free(f);
}

static void test_getprotaddr(void)
{
	static const int ts[] = { TS_UNBND, TS_IDLE, TS_DATA_XFER };
	static const int st[] = { T_UNBND, T_IDLE, T_DATAXFER };

	for (int i = 0; i < 3; i++) {
		struct ferry *f = ferry_ep(T_COTS, ts[i]);
		struct fmsg w, a;
		char lb[32], rb[32];
		struct t_bind b, p;

		CHECK_STATE(f->xfd, st[i]);
		memset(&b, 0, sizeof(b));
		memset(&p, 0, sizeof(p));
		b.addr.buf = lb;
		b.addr.maxlen = sizeof(lb);
		b.addr.len = 99;
		p.addr.buf = rb;
		p.addr.maxlen = sizeof(rb);
		p.addr.len = 99;
		ferry_expect(f, __LINE__, fm_addr_req(&w),
			     fm_addr_ack(&a, i ? "local" : NULL, i ? 5 : 0,
					 i == 2 ? "remote!" : NULL,
					 i == 2 ? 7 : 0));
		CHECK_RET(t_getprotaddr(f->xfd, &b, &p), 0);
		ferry_sync(f);
		CHECK_EQ(b.addr.len, i ? 5 : 0);
		CHECK_EQ(p.addr.len, i == 2 ? 7 : 0);
		if (i == 2) {
			CHECK_MEM(lb, "local", 5);
			CHECK_MEM(rb, "remote!", 7);
			/* too small */
			p.addr.maxlen = 3;
			ferry_expect(f, __LINE__, fm_addr_req(&w),
				     fm_addr_ack(&a, "local", 5, "remote!", 7));
			CHECK_TERR(t_getprotaddr(f->xfd, &b, &p), TBUFOVFLW);
			ferry_sync(f);
		}
		ferry_free(f);
	}
	CHECK_TERR(t_getprotaddr(-1, NULL, NULL), TBADF);
}

/* A kicker that starts only once the provider (the ferry) has taken the
 * request of step: interrupted before that, the library's state query
 * (high priority) could overtake the request still queued at the
 * provider -- a case the library does not handle yet (README). */
struct kick_after {
	struct ferry *f;
	int step;
	pthread_t target;
	int stop;		/* atomic */
	pthread_t self;
};

static void *kick_after_main(void *arg)
{
	struct kick_after *k = arg;

	for (;;) {
		pthread_mutex_lock(&k->f->lock);
		bool taken = k->f->done > k->step;
		pthread_mutex_unlock(&k->f->lock);
		if (taken || __atomic_load_n(&k->stop, __ATOMIC_ACQUIRE))
			break;
		pause_ms(1);
	}
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		pthread_kill(k->target, SIGUSR1);
		pause_ms(5);
	}
	return NULL;
}

static void kick_after_start(struct kick_after *k, struct ferry *f, int step)
{
	*k = (struct kick_after){ f, step, pthread_self(), 0, 0 };
	REQUIRE(pthread_create(&k->self, NULL, kick_after_main, k) == 0);
}

static void kick_after_stop(struct kick_after *k)
{
	__atomic_store_n(&k->stop, 1, __ATOMIC_RELEASE);
	pthread_join(k->self, NULL);
}

/* t_bind and t_unbind interrupted by a signal after the request went
 * down: TSYSERR EINTR, and the state is the provider's, which did it
 * (asked with TI_SYNC: its T_INFO_REQ), not the one before the call. */
static void test_bind_eintr(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_UNBND);
	struct T_info_ack ia = fi_info(T_COTS, TS_IDLE);
	struct fmsg w, a;
	struct kick_after k;
	int step;

	catch_sig(SIGUSR1, false);
	step = f->nsteps;
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0), NULL);
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	kick_after_start(&k, f, step);
	CHECK_TSYS(t_bind(f->xfd, NULL, NULL), EINTR);
	kick_after_stop(&k);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);

	ia.CURRENT_state = TS_UNBND;
	step = f->nsteps;
	ferry_expect(f, __LINE__, fm_unbind_req(&w), NULL);
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	kick_after_start(&k, f, step);
	CHECK_TSYS(t_unbind(f->xfd), EINTR);
	kick_after_stop(&k);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_UNBND);
	ferry_free(f);
	signal(SIGUSR1, SIG_IGN);
}

int main(void)
{
	test_bind();
	test_bind_eintr();
	test_bind_errors();
	test_unbind_look();
	test_optmgmt();
	test_getprotaddr();
	T_DONE();
}
