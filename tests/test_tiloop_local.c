/*
 * test_tiloop_local -- the local primitives of /dev/ticlts, /dev/ticots
 * and /dev/ticotsord, raw TPI: T_INFO_REQ (every field of T_INFO_ACK, on
 * each provider, CURRENT_state following bind and unbind), T_BIND_REQ
 * (an address given, none given: a unique 8-byte address; TADDRBUSY;
 * CONIND_number granted up to 16, ignored on ticlts; TBADADDR over 64
 * bytes; TOUTSTATE when bound; separate address spaces per provider),
 * T_UNBIND_REQ (T_OK_ACK after an M_FLUSH that leaves nothing behind,
 * the address free again, TOUTSTATE when unbound), T_ADDR_REQ (unbound,
 * bound), T_CAPABILITY_REQ (as M_PROTO and M_PCPROTO: answered in kind;
 * TC1_INFO, TC1_ACCEPTOR_ID with a non-zero token unique per endpoint,
 * none on ticlts; bits not asked not set), T_OPTMGMT_REQ (T_DEFAULT,
 * T_NEGOTIATE then T_CURRENT of XTI_SNDBUF, T_CHECK, an unknown option
 * T_NOTSUPPORT, XTI_DEBUG refused to a non-root opener, TBADFLAG,
 * TBADOPT for a malformed buffer), M_IOCTL answered EINVAL, and
 * primitives of the other service type (TNOTSUPPORT, EPROTO).
 */
#include "test_tiloop_lib.h"

static void check_info(const char *dev, t_scalar_t serv, t_scalar_t tsdu,
		       t_scalar_t etsdu, t_scalar_t cdata, t_scalar_t flags)
{
	int fd = open_ep(dev);
	struct tmsg *m = tm_new();
	struct T_info_ack *ia = &m->c.p.info_ack;

	CHECK_RET(send_simple(fd, T_INFO_REQ, 0), 0);
	REQUIRE(tm_get(fd, m, true, WAIT_MS));
	CHECK_EQ(m->rc, 0);
	CHECK_EQ(m->flags, MSG_HIPRI);
	CHECK_EQ(m->clen, (int)sizeof(*ia));
	CHECK_EQ(m->dlen, -1);
	CHECK_EQ(ia->PRIM_type, T_INFO_ACK);
	CHECK_EQ(ia->TSDU_size, tsdu);
	CHECK_EQ(ia->ETSDU_size, etsdu);
	CHECK_EQ(ia->CDATA_size, cdata);
	CHECK_EQ(ia->DDATA_size, cdata);
	CHECK_EQ(ia->ADDR_size, 64);
	/* the six XTI_GENERIC options, 16-byte header + value each */
	CHECK_EQ(ia->OPT_size, 5 * (16 + 4) + (16 + 8));
	CHECK_EQ(ia->TIDU_size, tsdu);
	CHECK_EQ(ia->SERV_type, serv);
	CHECK_EQ(ia->CURRENT_state, TS_UNBND);
	CHECK_EQ(ia->PROVIDER_flag, flags);
	/* as M_PCPROTO too */
	CHECK_RET(send_simple(fd, T_INFO_REQ, RS_HIPRI), 0);
	REQUIRE(tm_get(fd, m, true, WAIT_MS));
	CHECK_EQ(m->c.prim, T_INFO_ACK);
	bind_ok(fd, NULL, 0);
	CHECK_EQ(ep_state(fd), TS_IDLE);
	CHECK_RET(send_simple(fd, T_UNBIND_REQ, 0), 0);
	expect_ok(fd, T_UNBIND_REQ);
	CHECK_EQ(ep_state(fd), TS_UNBND);
	CHECK(tm_none(fd));
	tm_free(m);
	close(fd);
}

static void test_info(void)
{
	check_info(DEV_CLTS, T_CLTS, 16384, T_INVALID, T_INVALID,
		   SENDZERO | XPG4_1);
	check_info(DEV_COTS, T_COTS, 65536, 1024, 1024, SENDZERO | XPG4_1);
	check_info(DEV_ORD, T_COTS_ORD, 65536, 1024, 1024,
		   SENDZERO | XPG4_1 | ORDRELDATA);
	/* the other names of the same drivers */
	int fd = open("/dev/streams/clone/ticotsord", O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(ep_state(fd), TS_UNBND);
	close(fd);
}

static void test_bind(void)
{
	int a = open_ep(DEV_COTS), b = open_ep(DEV_COTS);
	int c = open_ep(DEV_ORD), d = open_ep(DEV_CLTS);
	char big[66], got1[70], got2[70];
	struct T_bind_req r = { T_BIND_REQ, 0, 0, 0 };
	struct cbuf cb;

	/* an address given; CONIND_number 3 granted */
	bind_ok(a, "alpha", 3);
	CHECK_EQ(ep_state(a), TS_IDLE);
	/* the same address again: TADDRBUSY, state unchanged */
	CHECK_RET(send_bind(b, "alpha", 0), 0);
	expect_err(b, T_BIND_REQ, TADDRBUSY, 0);
	CHECK_EQ(ep_state(b), TS_UNBND);
	/* another provider is another address space */
	bind_ok(c, "alpha", 0);
	/* ticlts: no connect indications, CONIND_number 0 */
	CHECK_RET(send_bind(d, "alpha", 5), 0);
	CHECK(expect_bind_ack(d, "alpha", 0, NULL));
	/* bound already: TOUTSTATE */
	CHECK_RET(send_bind(a, "beta", 0), 0);
	expect_err(a, T_BIND_REQ, TOUTSTATE, 0);
	/* CONIND_number over 16 is cut to 16 */
	CHECK_RET(send_bind(b, "beta", 1000), 0);
	CHECK(expect_bind_ack(b, "beta", 16, NULL));
	/* no address: a unique one, eight bytes */
	CHECK_RET(send_simple(b, T_UNBIND_REQ, 0), 0);
	expect_ok(b, T_UNBIND_REQ);
	CHECK_RET(send_bind(b, NULL, 0), 0);
	CHECK(expect_bind_ack(b, NULL, 0, got1));
	CHECK_EQ(strlen(got1), 8);
	CHECK_RET(send_simple(b, T_UNBIND_REQ, 0), 0);
	expect_ok(b, T_UNBIND_REQ);
	CHECK_RET(send_bind(b, NULL, 0), 0);
	CHECK(expect_bind_ack(b, NULL, 0, got2));
	CHECK(strcmp(got1, got2) != 0);
	/* a user may bind an address like the provider's own: the
	 * provider then skips it */
	CHECK_RET(send_simple(b, T_UNBIND_REQ, 0), 0);
	expect_ok(b, T_UNBIND_REQ);
	int e = open_ep(DEV_COTS);
	char next[16];
	snprintf(next, sizeof(next), "%08lx", strtoul(got2, NULL, 16) + 1);
	bind_ok(e, next, 0);
	CHECK_RET(send_bind(b, NULL, 0), 0);
	CHECK(expect_bind_ack(b, NULL, 0, got1));
	CHECK(strcmp(got1, next) != 0);
	close(e);
	/* 65 bytes: TBADADDR; 64 is fine */
	memset(big, 'x', sizeof(big));
	cb_init(&cb, &r, sizeof(r));
	cb.p.bind_req.ADDR_length = 65;
	cb.p.bind_req.ADDR_offset = cb_add(&cb, big, 65);
	int f = open_ep(DEV_COTS);
	CHECK_RET(cb_send(f, &cb, NULL, -1, 0), 0);
	expect_err(f, T_BIND_REQ, TBADADDR, 0);
	big[64] = '\0';
	bind_ok(f, big, 0);
	close(f);
	/* unbind frees the address; unbind when unbound: TOUTSTATE */
	CHECK_RET(send_simple(a, T_UNBIND_REQ, 0), 0);
	expect_ok(a, T_UNBIND_REQ);
	CHECK_RET(send_simple(a, T_UNBIND_REQ, 0), 0);
	expect_err(a, T_UNBIND_REQ, TOUTSTATE, 0);
	int g = open_ep(DEV_COTS);
	bind_ok(g, "alpha", 0);
	close(g);
	/* closing frees an address too */
	close(c);
	c = open_ep(DEV_ORD);
	bind_ok(c, "alpha", 0);
	CHECK(tm_none(a) && tm_none(b) && tm_none(c) && tm_none(d));
	close(a);
	close(b);
	close(c);
	close(d);
}

static void test_addr(void)
{
	int a = open_ep(DEV_ORD);
	struct tmsg *m = tm_new();
	struct T_addr_ack *aa = &m->c.p.addr_ack;

	CHECK_RET(send_simple(a, T_ADDR_REQ, 0), 0);
	REQUIRE(tm_get(a, m, true, WAIT_MS));
	CHECK_EQ(m->c.prim, T_ADDR_ACK);
	CHECK_EQ(m->clen, (int)sizeof(*aa));
	CHECK_EQ(aa->LOCADDR_length, 0);
	CHECK_EQ(aa->REMADDR_length, 0);
	bind_ok(a, "here", 0);
	CHECK_RET(send_simple(a, T_ADDR_REQ, RS_HIPRI), 0);
	REQUIRE(tm_get(a, m, true, WAIT_MS));
	CHECK_EQ(m->c.prim, T_ADDR_ACK);
	CHECK_EQ(aa->LOCADDR_length, 4);
	CHECK_EQ(aa->LOCADDR_offset, (int)sizeof(*aa));
	CHECK_MEM(m->c.b + aa->LOCADDR_offset, "here", 4);
	CHECK_EQ(aa->REMADDR_length, 0);
	CHECK_EQ(m->clen, (int)sizeof(*aa) + 4);
	tm_free(m);
	close(a);
}

static void check_cap(int fd, t_uscalar_t bits, int flags, t_uscalar_t want,
		      t_uscalar_t *id)
{
	struct T_capability_req r = { T_CAPABILITY_REQ, bits };
	struct tmsg *m = tm_new();
	struct T_capability_ack *ca = &m->c.p.capability_ack;
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	CHECK_RET(cb_send(fd, &cb, NULL, -1, flags), 0);
	REQUIRE(tm_get(fd, m, false, WAIT_MS));
	CHECK_EQ(m->rc, 0);
	/* answered as M_PCPROTO only when asked as M_PCPROTO */
	CHECK_EQ(m->flags, flags == RS_HIPRI ? MSG_HIPRI : MSG_BAND);
	CHECK_EQ(m->clen, (int)sizeof(*ca));
	CHECK_EQ(ca->PRIM_type, T_CAPABILITY_ACK);
	CHECK_EQ(ca->CAP_bits1, want);
	if (want & TC1_INFO) {
		CHECK_EQ(ca->INFO_ack.PRIM_type, T_INFO_ACK);
		CHECK_EQ(ca->INFO_ack.ADDR_size, 64);
		CHECK_EQ(ca->INFO_ack.CURRENT_state, TS_UNBND);
	} else {
		CHECK_EQ(ca->INFO_ack.PRIM_type, 0);
	}
	if (want & TC1_ACCEPTOR_ID)
		CHECK(ca->ACCEPTOR_id != 0);
	else
		CHECK_EQ(ca->ACCEPTOR_id, 0);
	*id = ca->ACCEPTOR_id;
	tm_free(m);
}

static void test_capability(void)
{
	int a = open_ep(DEV_COTS), b = open_ep(DEV_COTS);
	int c = open_ep(DEV_CLTS);
	t_uscalar_t ia, ia2, ib, ic;

	check_cap(a, TC1_INFO | TC1_ACCEPTOR_ID, 0,
		  TC1_INFO | TC1_ACCEPTOR_ID, &ia);
	check_cap(a, TC1_ACCEPTOR_ID, RS_HIPRI, TC1_ACCEPTOR_ID, &ia2);
	CHECK_EQ(ia, ia2);
	check_cap(b, TC1_INFO | TC1_ACCEPTOR_ID | 0x100, RS_HIPRI,
		  TC1_INFO | TC1_ACCEPTOR_ID, &ib);
	CHECK(ia != ib);
	check_cap(b, TC1_INFO, 0, TC1_INFO, &ib);
	check_cap(b, 0, 0, 0, &ib);
	/* ticlts accepts no connections: no ACCEPTOR_id */
	check_cap(c, TC1_INFO | TC1_ACCEPTOR_ID, 0, TC1_INFO, &ic);
	close(a);
	close(b);
	close(c);
}

/* One option of T_OPTMGMT: header + 4-byte value. */
struct opt1 {
	struct t_opthdr h;
	t_scalar_t v;
};

/* T_OPTMGMT_REQ with buf; the ack's MGMT_flags, option copied to out. */
static t_scalar_t optmgmt(int fd, t_scalar_t flags, const void *buf, int len,
			  void *out, int *outlen)
{
	struct T_optmgmt_req r = { T_OPTMGMT_REQ, 0, 0, flags };
	struct tmsg *m = tm_new();
	struct cbuf cb;
	t_scalar_t res = -1;

	cb_init(&cb, &r, sizeof(r));
	if (len > 0) {
		cb.p.optmgmt_req.OPT_length = len;
		cb.p.optmgmt_req.OPT_offset = cb_add(&cb, buf, (size_t)len);
	}
	CHECK_RET(cb_send(fd, &cb, NULL, -1, 0), 0);
	if (tm_get(fd, m, true, WAIT_MS) && m->rc == 0) {
		if (m->c.prim == T_OPTMGMT_ACK) {
			struct T_optmgmt_ack *a = &m->c.p.optmgmt_ack;
			CHECK_EQ(m->clen, a->OPT_length > 0 ?
				 a->OPT_offset + a->OPT_length :
				 (int)sizeof(*a));
			res = a->MGMT_flags;
			*outlen = a->OPT_length;
			memcpy(out, m->c.b + a->OPT_offset,
			       (size_t)a->OPT_length);
		} else if (m->c.prim == T_ERROR_ACK) {
			CHECK_EQ(m->c.p.error_ack.ERROR_prim, T_OPTMGMT_REQ);
			res = -1000 - m->c.p.error_ack.TLI_error;
		}
	}
	tm_free(m);
	return res;
}

static void test_optmgmt(void)
{
	int fd = open_ep(DEV_COTS), n = 0;
	struct opt1 o = { { sizeof(o), XTI_GENERIC, XTI_SNDBUF, 0 }, 0 };
	struct opt1 out[8];

	/* default of XTI_SNDBUF: 65536 */
	CHECK_EQ(optmgmt(fd, T_DEFAULT, &o, (int)sizeof(o), out, &n),
		 T_SUCCESS);
	CHECK_EQ(n, (int)sizeof(o));
	CHECK_EQ(out[0].h.level, XTI_GENERIC);
	CHECK_EQ(out[0].h.name, XTI_SNDBUF);
	CHECK_EQ(out[0].h.status, T_SUCCESS);
	CHECK_EQ(out[0].v, 65536);
	/* negotiate 4096, then it is the current value */
	o.v = 4096;
	CHECK_EQ(optmgmt(fd, T_NEGOTIATE, &o, (int)sizeof(o), out, &n),
		 T_SUCCESS);
	CHECK_EQ(out[0].v, 4096);
	CHECK_EQ(optmgmt(fd, T_CURRENT, &o, (int)sizeof(o), out, &n),
		 T_SUCCESS);
	CHECK_EQ(out[0].v, 4096);
	/* per endpoint */
	int other = open_ep(DEV_COTS);
	CHECK_EQ(optmgmt(other, T_CURRENT, &o, (int)sizeof(o), out, &n),
		 T_SUCCESS);
	CHECK_EQ(out[0].v, 65536);
	close(other);
	/* T_CHECK of a legal value */
	CHECK_EQ(optmgmt(fd, T_CHECK, &o, (int)sizeof(o), out, &n),
		 T_SUCCESS);
	/* an option nobody knows */
	struct opt1 u = { { sizeof(u), XTI_GENERIC, 0x7777, 0 }, 1 };
	CHECK_EQ(optmgmt(fd, T_NEGOTIATE, &u, (int)sizeof(u), out, &n),
		 T_NOTSUPPORT);
	CHECK_EQ(out[0].h.status, T_NOTSUPPORT);
	/* bad flags, malformed buffer */
	CHECK_EQ(optmgmt(fd, T_NEGOTIATE | T_CHECK, &o, (int)sizeof(o), out,
			 &n), -1000 - TBADFLAG);
	struct opt1 bad = { { 4, XTI_GENERIC, XTI_SNDBUF, 0 }, 0 };
	CHECK_EQ(optmgmt(fd, T_NEGOTIATE, &bad, (int)sizeof(bad), out, &n),
		 -1000 - TBADOPT);
	/* no options at all: nothing to say, T_SUCCESS */
	CHECK_EQ(optmgmt(fd, T_CURRENT, NULL, 0, out, &n), T_SUCCESS);
	CHECK_EQ(n, 0);
	/* XTI_DEBUG needs privilege: an endpoint opened as another user
	 * gets T_NOTSUPPORT, root's gets its way */
	struct opt1 dbg = { { sizeof(dbg), XTI_GENERIC, XTI_DEBUG, 0 }, 1 };
	if (geteuid() == 0) {
		CHECK_EQ(optmgmt(fd, T_NEGOTIATE, &dbg, (int)sizeof(dbg), out,
				 &n), T_SUCCESS);
		REQUIRE(seteuid(65534) == 0);
		int np = open_ep(DEV_COTS);
		REQUIRE(seteuid(0) == 0);
		CHECK_EQ(optmgmt(np, T_NEGOTIATE, &dbg, (int)sizeof(dbg), out,
				 &n), T_NOTSUPPORT);
		close(np);
	} else {
		CHECK_EQ(optmgmt(fd, T_NEGOTIATE, &dbg, (int)sizeof(dbg), out,
				 &n), T_NOTSUPPORT);
	}
	/* works in any state */
	bind_ok(fd, "opts", 0);
	CHECK_EQ(optmgmt(fd, T_CURRENT, &o, (int)sizeof(o), out, &n),
		 T_SUCCESS);
	CHECK_EQ(out[0].v, 4096);
	close(fd);
}

static void test_ioctl_and_wrong_type(void)
{
	int fd = open_ep(DEV_COTS), cl = open_ep(DEV_CLTS);
	char buf[8] = { 0 };

	/* an ioctl the provider does not know */
	CHECK_ERR(do_str(fd, 0x7401, buf, sizeof(buf), 0, NULL), EINVAL);
	/* connection primitives on ticlts: TNOTSUPPORT */
	bind_ok(cl, "dgram", 0);
	CHECK_RET(send_conn_req(cl, "x", NULL, 0, NULL, -1), 0);
	expect_err(cl, T_CONN_REQ, TNOTSUPPORT, 0);
	CHECK_RET(send_discon(cl, -1, NULL, -1), 0);
	expect_err(cl, T_DISCON_REQ, TNOTSUPPORT, 0);
	CHECK_RET(send_conn_res(cl, 0, 1, NULL, 0, NULL, -1), 0);
	expect_err(cl, T_CONN_RES, TNOTSUPPORT, 0);
	CHECK_EQ(ep_state(cl), TS_IDLE);
	/* ...data primitives: fatal */
	CHECK_RET(send_data(cl, T_DATA_REQ, 0, "x", 1), 0);
	expect_merror(cl, EPROTO);
	close(cl);
	/* T_UNITDATA_REQ on ticots: fatal */
	struct T_unitdata_req ud = { T_UNITDATA_REQ, 0, 0, 0, 0 };
	struct cbuf cb;
	bind_ok(fd, NULL, 0);
	cb_init(&cb, &ud, sizeof(ud));
	CHECK_RET(cb_send(fd, &cb, "x", 1, 0), 0);
	expect_merror(fd, EPROTO);
	close(fd);
	/* T_ORDREL_REQ on ticots (no orderly release): fatal */
	int fds[3];
	make_conn(DEV_COTS, "noord", true, fds);
	CHECK_RET(send_simple(fds[0], T_ORDREL_REQ, 0), 0);
	expect_merror(fds[0], EPROTO);
	close_conn(fds);
}

int main(void)
{
	test_info();
	test_bind();
	test_addr();
	test_capability();
	test_optmgmt();
	test_ioctl_and_wrong_type();
	T_DONE();
}
