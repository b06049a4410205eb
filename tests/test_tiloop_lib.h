/*
 * test_tiloop_lib.h -- raw TPI over the loopback providers for the
 * test_tiloop_* programs: building primitives into a control buffer,
 * putmsg/getmsg with bounded waits, and checks of every field of the
 * answers.  No XTI, no timod: what the provider says is what is checked.
 *
 * Acknowledgements are read with RS_HIPRI (they are M_PCPROTO), so data
 * waiting at the stream head does not get in the way; indications are
 * read in arrival order.  Every wait is bounded (a hang fails a check).
 */
#ifndef STREAMS_TEST_TILOOP_LIB_H
#define STREAMS_TEST_TILOOP_LIB_H

#include "sth.h"

#include <stdlib.h>
#include <sys/tihdr.h>
#include <xti.h>

#define DEV_CLTS	"/dev/ticlts"
#define DEV_COTS	"/dev/ticots"
#define DEV_ORD		"/dev/ticotsord"
#define WAIT_MS		3000	/* for what must come */
#define QUIET_MS	30	/* for what must not */

/* ---- control buffers ---- */

struct cbuf {
	union {
		t_scalar_t prim;
		union T_primitives p;
		unsigned char b[1024];
	};
	int len;
};

/* Start a control part with the structure s of n bytes. */
static inline void cb_init(struct cbuf *cb, const void *s, size_t n)
{
	memset(cb->b, 0, sizeof(cb->b));
	memcpy(cb->b, s, n);
	cb->len = (int)n;
}

/* Append n bytes (aligned to 4), returning their offset. */
static inline t_scalar_t cb_add(struct cbuf *cb, const void *p, size_t n)
{
	int at = (cb->len + 3) & ~3;

	memcpy(cb->b + at, p, n);
	cb->len = at + (int)n;
	return at;
}

/* putmsg of a control part and an optional data part (dlen < 0: none) */
static inline int cb_send(int fd, const struct cbuf *cb, const void *dat,
			  int dlen, int flags)
{
	struct strbuf c = { 0, cb->len, (char *)cb->b };
	struct strbuf d = { 0, dlen, (char *)dat };

	return putmsg(fd, &c, dlen >= 0 ? &d : NULL, flags);
}

/* ---- receiving ---- */

#define DMAX	140000

struct tmsg {
	int rc, err, flags, band;
	int clen, dlen;
	union {
		t_scalar_t prim;
		union T_primitives p;
		unsigned char b[1024];
	} c;
	unsigned char *d;	/* DMAX bytes */
};

/* (no REQUIRE: the stress test's threads use it) */
static inline struct tmsg *tm_new(void)
{
	struct tmsg *m = calloc(1, sizeof(*m));

	if (m == NULL || (m->d = malloc(DMAX)) == NULL)
		abort();
	return m;
}

static inline void tm_free(struct tmsg *m)
{
	free(m->d);
	free(m);
}

static inline bool wait_fd(int fd, short ev, int ms)
{
	struct pollfd p = { fd, ev, 0 };

	return poll(&p, 1, ms) > 0;
}

/* Next message (hipri only if hipri), waiting up to ms: true if one came
 * (or the stream reported an error, m->rc -1 with m->err). */
static inline bool tm_get(int fd, struct tmsg *m, bool hipri, int ms)
{
	struct strbuf c = { sizeof(m->c.b), -1, (char *)m->c.b };
	struct strbuf d = { DMAX, -1, (char *)m->d };
	short ev = hipri ? POLLPRI : (POLLIN | POLLRDBAND | POLLPRI);

	memset(&m->c, 0, sizeof(m->c));
	m->rc = -1;
	m->err = 0;
	if (!wait_fd(fd, ev, ms))
		return false;
	m->flags = hipri ? MSG_HIPRI : MSG_ANY;
	m->band = 0;
	errno = 0;
	m->rc = getpmsg(fd, &c, &d, &m->band, &m->flags);
	m->err = m->rc < 0 ? errno : 0;
	m->clen = c.len;
	m->dlen = d.len;
	return true;
}

/* Nothing arrives for a short while. */
static inline bool tm_none(int fd)
{
	return !wait_fd(fd, POLLIN | POLLRDBAND | POLLPRI, QUIET_MS);
}

/* ---- checks of answers (each returns whether it held) ---- */

#define EXPECT(c) ({ bool _ok = (c); CHECK(_ok); _ok; })

/* The stream died with M_ERROR EPROTO (or e): getmsg and putmsg fail. */
static inline bool expect_merror(int fd, int e)
{
	struct tmsg *m = tm_new();
	struct cbuf cb;
	struct T_info_req ir = { T_INFO_REQ };
	bool ok;

	ok = EXPECT(tm_get(fd, m, false, WAIT_MS));
	CHECK_EQ(m->rc, -1);
	CHECK_EQ(m->err, e);
	ok = ok && m->rc == -1 && m->err == e;
	cb_init(&cb, &ir, sizeof(ir));
	CHECK_ERR(cb_send(fd, &cb, NULL, -1, 0), e);
	tm_free(m);
	return ok;
}

static inline bool expect_ok(int fd, t_scalar_t prim)
{
	struct tmsg *m = tm_new();
	bool ok = EXPECT(tm_get(fd, m, true, WAIT_MS)) && m->rc == 0;

	CHECK_EQ(m->rc, 0);
	CHECK_EQ(m->flags, MSG_HIPRI);
	CHECK_EQ(m->clen, (int)sizeof(struct T_ok_ack));
	CHECK_EQ(m->dlen, -1);
	CHECK_EQ(m->c.prim, T_OK_ACK);
	CHECK_EQ(m->c.p.ok_ack.CORRECT_prim, prim);
	ok = ok && m->c.prim == T_OK_ACK && m->c.p.ok_ack.CORRECT_prim == prim;
	tm_free(m);
	return ok;
}

static inline bool expect_err(int fd, t_scalar_t prim, int tli, int ue)
{
	struct tmsg *m = tm_new();
	bool ok = EXPECT(tm_get(fd, m, true, WAIT_MS)) && m->rc == 0;

	CHECK_EQ(m->rc, 0);
	CHECK_EQ(m->flags, MSG_HIPRI);
	CHECK_EQ(m->clen, (int)sizeof(struct T_error_ack));
	CHECK_EQ(m->c.prim, T_ERROR_ACK);
	CHECK_EQ(m->c.p.error_ack.ERROR_prim, prim);
	CHECK_EQ(m->c.p.error_ack.TLI_error, tli);
	CHECK_EQ(m->c.p.error_ack.UNIX_error, ue);
	ok = ok && m->c.prim == T_ERROR_ACK &&
	     m->c.p.error_ack.TLI_error == tli;
	tm_free(m);
	return ok;
}

/* ---- requests ---- */

static inline int open_ep(const char *dev)
{
	int fd = open(dev, O_RDWR);

	REQUIRE(fd >= 0);
	return fd;
}

static inline int send_simple(int fd, t_scalar_t prim, int flags)
{
	struct cbuf cb;

	cb_init(&cb, &prim, sizeof(prim));
	return cb_send(fd, &cb, NULL, -1, flags);
}

static inline int send_bind(int fd, const char *addr, t_uscalar_t qlen)
{
	struct T_bind_req r = { T_BIND_REQ, 0, 0, qlen };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	if (addr != NULL && *addr != '\0') {
		cb.p.bind_req.ADDR_length = (t_scalar_t)strlen(addr);
		cb.p.bind_req.ADDR_offset = cb_add(&cb, addr, strlen(addr));
	}
	return cb_send(fd, &cb, NULL, -1, 0);
}

/* T_BIND_ACK with the address addr (any, if NULL) and CONIND_number
 * qlen; the address bound is copied to got (NUL-terminated) if not NULL. */
static inline bool expect_bind_ack(int fd, const char *addr, t_uscalar_t qlen,
				   char *got)
{
	struct tmsg *m = tm_new();
	bool ok = EXPECT(tm_get(fd, m, true, WAIT_MS)) && m->rc == 0;
	struct T_bind_ack *a = &m->c.p.bind_ack;

	CHECK_EQ(m->c.prim, T_BIND_ACK);
	CHECK_EQ(a->CONIND_number, qlen);
	CHECK(a->ADDR_length > 0 && a->ADDR_length <= 64);
	CHECK(a->ADDR_offset >= (t_scalar_t)sizeof(*a));
	CHECK_EQ(m->clen, a->ADDR_offset + a->ADDR_length);
	ok = ok && m->c.prim == T_BIND_ACK && a->CONIND_number == qlen &&
	     a->ADDR_length > 0 && a->ADDR_length <= 64 &&
	     m->clen == a->ADDR_offset + a->ADDR_length;
	if (ok && addr != NULL) {
		CHECK_EQ(a->ADDR_length, (int)strlen(addr));
		CHECK_MEM(m->c.b + a->ADDR_offset, addr, strlen(addr));
		ok = a->ADDR_length == (int)strlen(addr) &&
		     memcmp(m->c.b + a->ADDR_offset, addr, strlen(addr)) == 0;
	}
	if (ok && got != NULL) {
		memcpy(got, m->c.b + a->ADDR_offset, (size_t)a->ADDR_length);
		got[a->ADDR_length] = '\0';
	}
	tm_free(m);
	return ok;
}

static inline void bind_ok(int fd, const char *addr, t_uscalar_t qlen)
{
	CHECK_RET(send_bind(fd, addr, qlen), 0);
	expect_bind_ack(fd, addr, qlen, NULL);
}

/* T_INFO_REQ: the CURRENT_state (-1 if no answer). */
static inline int ep_state(int fd)
{
	struct tmsg *m = tm_new();
	int st = -1;

	if (send_simple(fd, T_INFO_REQ, RS_HIPRI) == 0 &&
	    tm_get(fd, m, true, WAIT_MS) && m->rc == 0 &&
	    m->c.prim == T_INFO_ACK)
		st = m->c.p.info_ack.CURRENT_state;
	tm_free(m);
	return st;
}

/* The endpoint's ACCEPTOR_id. */
static inline t_uscalar_t ep_token(int fd)
{
	struct T_capability_req r = { T_CAPABILITY_REQ, TC1_ACCEPTOR_ID };
	struct tmsg *m = tm_new();
	struct cbuf cb;
	t_uscalar_t id = 0;

	cb_init(&cb, &r, sizeof(r));
	/* as M_PCPROTO, so that the answer is one too */
	if (cb_send(fd, &cb, NULL, -1, RS_HIPRI) == 0 &&
	    tm_get(fd, m, true, WAIT_MS) && m->rc == 0 &&
	    m->c.prim == T_CAPABILITY_ACK)
		id = m->c.p.capability_ack.ACCEPTOR_id;
	tm_free(m);
	return id;
}

/* T_CONN_REQ to addr with options (opt, olen) and data (dlen < 0: none). */
static inline int send_conn_req(int fd, const char *addr, const void *opt,
				int olen, const void *dat, int dlen)
{
	struct T_conn_req r = { T_CONN_REQ, 0, 0, 0, 0 };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	cb.p.conn_req.DEST_length = (t_scalar_t)strlen(addr);
	cb.p.conn_req.DEST_offset = cb_add(&cb, addr, strlen(addr));
	if (olen > 0) {
		cb.p.conn_req.OPT_length = olen;
		cb.p.conn_req.OPT_offset = cb_add(&cb, opt, (size_t)olen);
	}
	return cb_send(fd, &cb, dat, dlen, 0);
}

static inline int send_conn_res(int fd, t_uscalar_t acceptor, t_scalar_t seq,
				const void *opt, int olen, const void *dat,
				int dlen)
{
	struct T_conn_res r = { T_CONN_RES, acceptor, 0, 0, seq };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	if (olen > 0) {
		cb.p.conn_res.OPT_length = olen;
		cb.p.conn_res.OPT_offset = cb_add(&cb, opt, (size_t)olen);
	}
	return cb_send(fd, &cb, dat, dlen, 0);
}

static inline int send_discon(int fd, t_scalar_t seq, const void *dat,
			      int dlen)
{
	struct T_discon_req r = { T_DISCON_REQ, seq };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	return cb_send(fd, &cb, dat, dlen, 0);
}

/* T_CONN_IND with SRC src (any if NULL) and data (dat, dlen; -1: none):
 * returns its SEQ_number, or -1. */
static inline t_scalar_t expect_conn_ind(int fd, const char *src,
					 const void *dat, int dlen)
{
	struct tmsg *m = tm_new();
	struct T_conn_ind *ci = &m->c.p.conn_ind;
	t_scalar_t seq = -1;
	bool ok = EXPECT(tm_get(fd, m, false, WAIT_MS)) && m->rc == 0;

	CHECK_EQ(m->flags, MSG_BAND);
	CHECK_EQ(m->band, 0);
	CHECK_EQ(m->c.prim, T_CONN_IND);
	ok = ok && m->c.prim == T_CONN_IND;
	if (ok && src != NULL) {
		CHECK_EQ(ci->SRC_length, (int)strlen(src));
		CHECK_MEM(m->c.b + ci->SRC_offset, src, strlen(src));
	}
	if (ok) {
		CHECK(ci->SEQ_number > 0);
		CHECK_EQ(m->dlen, dlen);
		if (dlen > 0)
			CHECK_MEM(m->d, dat, (size_t)dlen);
		seq = ci->SEQ_number;
	}
	tm_free(m);
	return seq;
}

static inline bool expect_conn_con(int fd, const char *res, const void *dat,
				   int dlen)
{
	struct tmsg *m = tm_new();
	struct T_conn_con *cc = &m->c.p.conn_con;
	bool ok = EXPECT(tm_get(fd, m, false, WAIT_MS)) && m->rc == 0;

	CHECK_EQ(m->c.prim, T_CONN_CON);
	ok = ok && m->c.prim == T_CONN_CON;
	if (ok && res != NULL) {
		CHECK_EQ(cc->RES_length, (int)strlen(res));
		CHECK_MEM(m->c.b + cc->RES_offset, res, strlen(res));
		CHECK_EQ(cc->OPT_length, 0);
		CHECK_EQ(m->dlen, dlen);
		if (dlen > 0)
			CHECK_MEM(m->d, dat, (size_t)dlen);
	}
	tm_free(m);
	return ok;
}

static inline bool expect_discon_ind(int fd, t_scalar_t reason,
				     t_scalar_t seq, const void *dat,
				     int dlen)
{
	struct tmsg *m = tm_new();
	bool ok = EXPECT(tm_get(fd, m, false, WAIT_MS)) && m->rc == 0;

	CHECK_EQ(m->flags, MSG_BAND);
	CHECK_EQ(m->clen, (int)sizeof(struct T_discon_ind));
	CHECK_EQ(m->c.prim, T_DISCON_IND);
	CHECK_EQ(m->c.p.discon_ind.DISCON_reason, reason);
	CHECK_EQ(m->c.p.discon_ind.SEQ_number, seq);
	CHECK_EQ(m->dlen, dlen);
	if (dlen > 0 && m->dlen == dlen)
		CHECK_MEM(m->d, dat, (size_t)dlen);
	ok = ok && m->c.prim == T_DISCON_IND &&
	     m->c.p.discon_ind.DISCON_reason == reason &&
	     m->c.p.discon_ind.SEQ_number == seq;
	tm_free(m);
	return ok;
}

/* A connection on dev: a listener bound to laddr (qlen 1), a caller,
 * and the accepting endpoint (the listener itself if self).  Everything
 * checked on the way.  fds: [0] caller, [1] acceptor, [2] listener. */
static inline void make_conn(const char *dev, const char *laddr, bool self,
			     int fds[3])
{
	t_scalar_t seq;

	fds[2] = open_ep(dev);
	bind_ok(fds[2], laddr, 1);
	fds[0] = open_ep(dev);
	bind_ok(fds[0], NULL, 0);
	fds[1] = self ? fds[2] : open_ep(dev);
	CHECK_RET(send_conn_req(fds[0], laddr, NULL, 0, NULL, -1), 0);
	expect_ok(fds[0], T_CONN_REQ);
	seq = expect_conn_ind(fds[2], NULL, NULL, -1);
	CHECK_RET(send_conn_res(fds[2], self ? 0 : ep_token(fds[1]), seq,
				NULL, 0, NULL, -1), 0);
	expect_ok(fds[2], T_CONN_RES);
	expect_conn_con(fds[0], laddr, NULL, -1);
	CHECK_EQ(ep_state(fds[0]), TS_DATA_XFER);
	CHECK_EQ(ep_state(fds[1]), TS_DATA_XFER);
}

static inline void close_conn(int fds[3])
{
	close(fds[0]);
	if (fds[1] != fds[2])
		close(fds[1]);
	close(fds[2]);
}

/* ---- data ---- */

/* T_DATA_REQ / T_EXDATA_REQ with MORE_flag more. */
static inline int send_data(int fd, t_scalar_t prim, int more,
			    const void *dat, int dlen)
{
	struct T_data_req r = { prim, more };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	return cb_send(fd, &cb, dat, dlen, 0);
}

/* The indication prim (T_DATA_IND/T_EXDATA_IND) with more and the data. */
static inline bool expect_data(int fd, t_scalar_t prim, int more,
			       const void *dat, int dlen)
{
	struct tmsg *m = tm_new();
	bool ok = EXPECT(tm_get(fd, m, false, WAIT_MS)) && m->rc == 0;

	CHECK_EQ(m->c.prim, prim);
	CHECK_EQ(m->clen, (int)sizeof(struct T_data_ind));
	CHECK_EQ(m->c.p.data_ind.MORE_flag, more);
	CHECK_EQ(m->band, prim == T_EXDATA_IND ? 1 : 0);
	CHECK_EQ(m->dlen, dlen);
	if (dlen > 0 && m->dlen == dlen)
		CHECK_MEM(m->d, dat, (size_t)dlen);
	ok = ok && m->c.prim == prim && m->c.p.data_ind.MORE_flag == more &&
	     m->dlen == dlen;
	tm_free(m);
	return ok;
}

#endif
