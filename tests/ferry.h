/*
 * ferry.h -- ferry-clip testing of XTI: the test plays the transport
 * provider.
 *
 * A STREAMS pipe: its end xfd gets timod and becomes an XTI endpoint
 * (t_sync); the test reads what the library sends from the other end,
 * pfd, and writes the provider's answers and indications there.  Calls
 * that wait for an answer (every TI_* ioctl, T_CONN_REQ, T_CONN_RES,
 * T_DISCON_REQ) need the answer to come from another thread: the ferry
 * thread runs a queue of steps, each "read one message, check that it is
 * exactly this one, send these answers".  The test queues a step
 * (ferry_push), makes the XTI call, then ferry_sync() waits for the
 * queue to drain and adds the ferry's checks to the program's count.
 * Messages the library sends without waiting (data, T_ORDREL_REQ, ...)
 * and indications going up need no thread: ferry_get()/ferry_put().
 *
 * The fm_* builders make every TPI primitive: requests exactly as libxti
 * lays them out (each region after the structure at a 4-byte aligned
 * offset, offset 0 when empty), so a comparison checks every byte.
 * Header-only (static functions) so that each test links it alone.
 */
#ifndef STREAMS_TEST_FERRY_H
#define STREAMS_TEST_FERRY_H

#include "sth.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/tihdr.h>
#include <sys/timod.h>
#include <xti.h>

/* t_errno checks */
#define CHECK_TERR(call, te) do {					\
	long long _r;							\
	int _te, _w = (te);						\
	t_errno = 0;							\
	_r = (long long)(call);						\
	_te = t_errno;							\
	t_checked++;							\
	if (_r != -1 || _te != _w) {					\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s: got %lld t_errno %d (%s),"\
			" want -1 t_errno %d (%s)\n", __FILE__, __LINE__, \
			#call, _r, _te, t_strerror(_te), _w,		\
			t_strerror(_w));				\
	}								\
} while (0)

/* TSYSERR with errno e */
#define CHECK_TSYS(call, e) do {					\
	long long _r;							\
	int _te, _e, _w = (e);						\
	t_errno = 0;							\
	errno = 0;							\
	_r = (long long)(call);						\
	_te = t_errno;							\
	_e = errno;							\
	t_checked++;							\
	if (_r != -1 || _te != TSYSERR || _e != _w) {			\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s: got %lld t_errno %d errno"\
			" %d (%s), want TSYSERR errno %d (%s)\n", __FILE__, \
			__LINE__, #call, _r, _te, _e, strerror(_e), _w,	\
			strerror(_w));					\
	}								\
} while (0)

/* TPROTO (errno EPROTO): the provider sent garbage */
#define CHECK_TPROTO(call) do {						\
	long long _r;							\
	int _te, _e;							\
	t_errno = 0;							\
	errno = 0;							\
	_r = (long long)(call);						\
	_te = t_errno;							\
	_e = errno;							\
	t_checked++;							\
	if (_r != -1 || _te != TPROTO || _e != EPROTO) {		\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: %s: got %lld t_errno %d errno"\
			" %d, want TPROTO/EPROTO\n", __FILE__, __LINE__, \
			#call, _r, _te, _e);				\
	}								\
} while (0)

#define CHECK_STATE(fd, st) CHECK_RET(t_getstate(fd), st)

/* ---- endpoints of real providers (the test_xti_loop_* programs) ---- */

/* t_bind fd to name (NULL: any address) asking qlen: the qlen granted,
 * or -1 with t_errno.  The bound address into got (64 bytes) and its
 * length into *gotlen when given. */
static inline int xt_bind(int fd, const char *name, unsigned qlen,
			  char *got, unsigned *gotlen)
{
	struct t_bind req, ret;
	char buf[64];

	memset(&req, 0, sizeof(req));
	if (name != NULL) {
		req.addr.buf = (char *)name;
		req.addr.len = (unsigned)strlen(name);
	}
	req.qlen = qlen;
	memset(&ret, 0, sizeof(ret));
	ret.addr.buf = got != NULL ? got : buf;
	ret.addr.maxlen = 64;
	ret.qlen = 12345;		/* t_bind must set it */
	if (t_bind(fd, &req, &ret) != 0)
		return -1;
	if (gotlen != NULL)
		*gotlen = ret.addr.len;
	return (int)ret.qlen;
}

/* The first event at fd (t_look), waiting up to 3 s for one. */
static inline int xt_look_wait(int fd)
{
	long end = now_ms() + 3000;
	int ev;

	while ((ev = t_look(fd)) == 0 && now_ms() < end)
		pause_ms(1);
	return ev;
}

/* ---- messages ---- */

#define FM_CTL	512
#define FM_DAT	2048

struct fmsg {
	int hipri;
	int band;
	int clen;			/* -1: no control part */
	int dlen;			/* -1: no data part */
	unsigned char ctl[FM_CTL];
	unsigned char dat[FM_DAT];
};

#define FALIGN(n)	(((n) + 3) & ~3)

static inline struct fmsg *fm_clear(struct fmsg *m)
{
	m->hipri = 0;
	m->band = 0;
	m->clen = -1;
	m->dlen = -1;
	return m;
}

/* Append n bytes to the control part; their offset. */
static inline int fm_ctl(struct fmsg *m, const void *p, int n)
{
	int at = m->clen < 0 ? 0 : m->clen;

	REQUIRE(at + n <= FM_CTL);
	if (n > 0)
		memcpy(m->ctl + at, p, (size_t)n);
	m->clen = at + n;
	return at;
}

/* A region: aligned after what is there; (off, len) into the struct's
 * fields at loff/ooff (byte offsets). */
static inline void fm_region(struct fmsg *m, int loff, int ooff,
			     const void *p, int n)
{
	t_scalar_t l = n, o = 0;

	if (n > 0) {
		int at = FALIGN(m->clen);
		REQUIRE(at + n <= FM_CTL);
		memset(m->ctl + m->clen, 0, (size_t)(at - m->clen));
		memcpy(m->ctl + at, p, (size_t)n);
		m->clen = at + n;
		o = at;
	}
	memcpy(m->ctl + loff, &l, sizeof(l));
	memcpy(m->ctl + ooff, &o, sizeof(o));
}

static inline struct fmsg *fm_data(struct fmsg *m, const void *p, int n)
{
	REQUIRE(n <= FM_DAT);
	if (n > 0)
		memcpy(m->dat, p, (size_t)n);
	m->dlen = n;
	return m;
}

#define FM_STRUCT(m, type, hp, ...) do {				\
	struct type _s = { __VA_ARGS__ };				\
	fm_clear(m);							\
	(m)->hipri = (hp);						\
	fm_ctl(m, &_s, sizeof(_s));					\
} while (0)

#define FM_REG(m, type, lf, of, p, n) \
	fm_region(m, offsetof(struct type, lf), offsetof(struct type, of), p, n)

/* Primitives of the same layout share a builder.  Data: { PRIM_type,
 * MORE_flag } in band (1 for expedited data). */
_Static_assert(sizeof(struct T_exdata_req) == sizeof(struct T_data_req) &&
	       sizeof(struct T_data_ind) == sizeof(struct T_data_req) &&
	       sizeof(struct T_exdata_ind) == sizeof(struct T_data_req),
	       "data primitives are { PRIM_type, MORE_flag }");

static inline struct fmsg *fm_more(struct fmsg *m, int prim, int more,
				   int band)
{
	FM_STRUCT(m, T_data_req, 0, prim, more);
	m->band = band;
	return m;
}

/* { PRIM_type, address length and offset, OPT_length, OPT_offset }:
 * T_CONN_REQ (DEST), T_CONN_CON (RES), T_UNITDATA_REQ (DEST),
 * T_UNITDATA_IND (SRC). */
#define FM_SAME_AO(type, al, ao)					\
	_Static_assert(sizeof(struct type) ==				\
		       sizeof(struct T_unitdata_req) &&			\
		       offsetof(struct type, al) ==			\
		       offsetof(struct T_unitdata_req, DEST_length) &&	\
		       offsetof(struct type, ao) ==			\
		       offsetof(struct T_unitdata_req, DEST_offset) &&	\
		       offsetof(struct type, OPT_length) ==		\
		       offsetof(struct T_unitdata_req, OPT_length) &&	\
		       offsetof(struct type, OPT_offset) ==		\
		       offsetof(struct T_unitdata_req, OPT_offset),	\
		       #type " is laid out as T_unitdata_req")
FM_SAME_AO(T_conn_req, DEST_length, DEST_offset);
FM_SAME_AO(T_conn_con, RES_length, RES_offset);
FM_SAME_AO(T_unitdata_ind, SRC_length, SRC_offset);

static inline struct fmsg *fm_addr_opt(struct fmsg *m, int prim,
				       const void *a, int al, const void *o,
				       int ol)
{
	FM_STRUCT(m, T_unitdata_req, 0, prim, 0, 0, 0, 0);
	FM_REG(m, T_unitdata_req, DEST_length, DEST_offset, a, al);
	FM_REG(m, T_unitdata_req, OPT_length, OPT_offset, o, ol);
	return m;
}

/* requests (as libxti builds them) */
static inline struct fmsg *fm_info_req(struct fmsg *m)
{
	FM_STRUCT(m, T_info_req, 1, T_INFO_REQ);
	return m;
}

static inline struct fmsg *fm_bind_req(struct fmsg *m, const void *a, int al,
				       unsigned qlen)
{
	FM_STRUCT(m, T_bind_req, 0, T_BIND_REQ, 0, 0, qlen);
	FM_REG(m, T_bind_req, ADDR_length, ADDR_offset, a, al);
	return m;
}

static inline struct fmsg *fm_unbind_req(struct fmsg *m)
{
	FM_STRUCT(m, T_unbind_req, 0, T_UNBIND_REQ);
	return m;
}

static inline struct fmsg *fm_optmgmt_req(struct fmsg *m, const void *o,
					  int ol, int flags)
{
	FM_STRUCT(m, T_optmgmt_req, 0, T_OPTMGMT_REQ, 0, 0, flags);
	FM_REG(m, T_optmgmt_req, OPT_length, OPT_offset, o, ol);
	return m;
}

static inline struct fmsg *fm_addr_req(struct fmsg *m)
{
	FM_STRUCT(m, T_addr_req, 1, T_ADDR_REQ);
	return m;
}

static inline struct fmsg *fm_cap_req(struct fmsg *m, unsigned bits)
{
	FM_STRUCT(m, T_capability_req, 1, T_CAPABILITY_REQ, bits);
	return m;
}

static inline struct fmsg *fm_conn_req(struct fmsg *m, const void *a, int al,
				       const void *o, int ol)
{
	return fm_addr_opt(m, T_CONN_REQ, a, al, o, ol);
}

static inline struct fmsg *fm_conn_res(struct fmsg *m, unsigned id,
				       const void *o, int ol, int seq)
{
	FM_STRUCT(m, T_conn_res, 0, T_CONN_RES, id, 0, 0, seq);
	FM_REG(m, T_conn_res, OPT_length, OPT_offset, o, ol);
	return m;
}

static inline struct fmsg *fm_discon_req(struct fmsg *m, int seq)
{
	FM_STRUCT(m, T_discon_req, 0, T_DISCON_REQ, seq);
	return m;
}

static inline struct fmsg *fm_data_req(struct fmsg *m, int more)
{
	return fm_more(m, T_DATA_REQ, more, 0);
}

/* Plain M_DATA: what libxti sends for normal data that ends a TSDU
 * (TPI takes it as T_DATA_REQ with MORE_flag 0). */
static inline struct fmsg *fm_plain(struct fmsg *m)
{
	return fm_clear(m);
}

static inline struct fmsg *fm_exdata_req(struct fmsg *m, int more)
{
	return fm_more(m, T_EXDATA_REQ, more, 1);
}

static inline struct fmsg *fm_ordrel_req(struct fmsg *m)
{
	FM_STRUCT(m, T_ordrel_req, 0, T_ORDREL_REQ);
	return m;
}

static inline struct fmsg *fm_unitdata_req(struct fmsg *m, const void *a,
					   int al, const void *o, int ol)
{
	return fm_addr_opt(m, T_UNITDATA_REQ, a, al, o, ol);
}

/* acks and indications (as a provider sends them) */
static inline struct fmsg *fm_info_ack(struct fmsg *m,
				       const struct T_info_ack *ia)
{
	fm_clear(m);
	m->hipri = 1;
	fm_ctl(m, ia, sizeof(*ia));
	return m;
}

static inline struct fmsg *fm_ok_ack(struct fmsg *m, int prim)
{
	FM_STRUCT(m, T_ok_ack, 1, T_OK_ACK, prim);
	return m;
}

static inline struct fmsg *fm_error_ack(struct fmsg *m, int prim, int tli,
					int ux)
{
	FM_STRUCT(m, T_error_ack, 1, T_ERROR_ACK, prim, tli, ux);
	return m;
}

static inline struct fmsg *fm_bind_ack(struct fmsg *m, const void *a, int al,
				       unsigned qlen)
{
	FM_STRUCT(m, T_bind_ack, 1, T_BIND_ACK, 0, 0, qlen);
	FM_REG(m, T_bind_ack, ADDR_length, ADDR_offset, a, al);
	return m;
}

static inline struct fmsg *fm_optmgmt_ack(struct fmsg *m, const void *o,
					  int ol, int flags)
{
	FM_STRUCT(m, T_optmgmt_ack, 1, T_OPTMGMT_ACK, 0, 0, flags);
	FM_REG(m, T_optmgmt_ack, OPT_length, OPT_offset, o, ol);
	return m;
}

static inline struct fmsg *fm_addr_ack(struct fmsg *m, const void *l, int ll,
				       const void *r, int rl)
{
	FM_STRUCT(m, T_addr_ack, 1, T_ADDR_ACK, 0, 0, 0, 0);
	FM_REG(m, T_addr_ack, LOCADDR_length, LOCADDR_offset, l, ll);
	FM_REG(m, T_addr_ack, REMADDR_length, REMADDR_offset, r, rl);
	return m;
}

static inline struct fmsg *fm_cap_ack(struct fmsg *m, unsigned bits,
				      const struct T_info_ack *ia, unsigned id)
{
	struct T_capability_ack ca;

	memset(&ca, 0, sizeof(ca));
	ca.PRIM_type = T_CAPABILITY_ACK;
	ca.CAP_bits1 = bits;
	if (ia != NULL)
		ca.INFO_ack = *ia;
	ca.ACCEPTOR_id = id;
	fm_clear(m);
	m->hipri = 1;
	fm_ctl(m, &ca, sizeof(ca));
	return m;
}

static inline struct fmsg *fm_conn_ind(struct fmsg *m, const void *a, int al,
				       const void *o, int ol, int seq)
{
	FM_STRUCT(m, T_conn_ind, 0, T_CONN_IND, 0, 0, 0, 0, seq);
	FM_REG(m, T_conn_ind, SRC_length, SRC_offset, a, al);
	FM_REG(m, T_conn_ind, OPT_length, OPT_offset, o, ol);
	return m;
}

static inline struct fmsg *fm_conn_con(struct fmsg *m, const void *a, int al,
				       const void *o, int ol)
{
	return fm_addr_opt(m, T_CONN_CON, a, al, o, ol);
}

static inline struct fmsg *fm_discon_ind(struct fmsg *m, int reason, int seq)
{
	FM_STRUCT(m, T_discon_ind, 0, T_DISCON_IND, reason, seq);
	return m;
}

static inline struct fmsg *fm_data_ind(struct fmsg *m, int more)
{
	return fm_more(m, T_DATA_IND, more, 0);
}

static inline struct fmsg *fm_exdata_ind(struct fmsg *m, int more)
{
	return fm_more(m, T_EXDATA_IND, more, 1);
}

static inline struct fmsg *fm_ordrel_ind(struct fmsg *m)
{
	FM_STRUCT(m, T_ordrel_ind, 0, T_ORDREL_IND);
	return m;
}

static inline struct fmsg *fm_unitdata_ind(struct fmsg *m, const void *a,
					   int al, const void *o, int ol)
{
	return fm_addr_opt(m, T_UNITDATA_IND, a, al, o, ol);
}

static inline struct fmsg *fm_uderror_ind(struct fmsg *m, const void *a,
					  int al, const void *o, int ol,
					  int err)
{
	FM_STRUCT(m, T_uderror_ind, 0, T_UDERROR_IND, 0, 0, 0, 0, err);
	FM_REG(m, T_uderror_ind, DEST_length, DEST_offset, a, al);
	FM_REG(m, T_uderror_ind, OPT_length, OPT_offset, o, ol);
	return m;
}

/* A provider's characteristics for tests: service type and state, small
 * sizes so that limits are easy to reach. */
static inline struct T_info_ack fi_info(int serv, int state)
{
	struct T_info_ack ia;

	memset(&ia, 0, sizeof(ia));
	ia.PRIM_type = T_INFO_ACK;
	ia.TSDU_size = serv == T_CLTS ? 1024 : 4096;
	ia.ETSDU_size = serv == T_CLTS ? T_INVALID : 64;
	ia.CDATA_size = serv == T_CLTS ? T_INVALID : 64;
	ia.DDATA_size = serv == T_CLTS ? T_INVALID : 32;
	ia.ADDR_size = 32;
	ia.OPT_size = 128;
	ia.TIDU_size = 1024;
	ia.SERV_type = serv;
	ia.CURRENT_state = state;
	ia.PROVIDER_flag = SENDZERO | (serv == T_COTS_ORD ? ORDRELDATA : 0);
	return ia;
}

/* ---- comparing ---- */

static inline void fm_dump(const char *what, const struct fmsg *m)
{
	fprintf(stderr, "    %s: %s band %d ctl %d:", what,
		m->hipri ? "hipri" : "normal", m->band, m->clen);
	for (int i = 0; i < m->clen && i < 64; i++)
		fprintf(stderr, "%s%02x", i % 4 ? "" : " ", m->ctl[i]);
	fprintf(stderr, " data %d:", m->dlen);
	for (int i = 0; i < m->dlen && i < 32; i++)
		fprintf(stderr, " %02x", m->dat[i]);
	fprintf(stderr, "\n");
}

/* Equal in type, band, every control byte and every data byte? */
static inline bool fm_equal(const struct fmsg *a, const struct fmsg *b)
{
	return a->hipri == b->hipri && (a->hipri || a->band == b->band) &&
	       a->clen == b->clen && a->dlen == b->dlen &&
	       (a->clen <= 0 || memcmp(a->ctl, b->ctl, (size_t)a->clen) == 0) &&
	       (a->dlen <= 0 || memcmp(a->dat, b->dat, (size_t)a->dlen) == 0);
}

/* ---- the provider's end ---- */

/* Read one message from fd (waiting up to ms; -1 forever).  0, or -1 */
static inline int fm_read(int fd, struct fmsg *m, int ms)
{
	struct strbuf c = { FM_CTL, 0, (char *)m->ctl };
	struct strbuf d = { FM_DAT, 0, (char *)m->dat };
	int band = 0, flags = MSG_ANY, r;

	if (ms >= 0) {
		struct pollfd pf = { fd, POLLIN | POLLPRI, 0 };
		if (poll(&pf, 1, ms) <= 0)
			return -1;
	}
	do {
		r = getpmsg(fd, &c, &d, &band, &flags);
	} while (r < 0 && errno == EINTR);
	if (r != 0)
		return -1;
	fm_clear(m);
	m->hipri = flags == MSG_HIPRI;
	m->band = band;
	m->clen = c.len;
	m->dlen = d.len;
	return 0;
}

static inline int fm_write(int fd, const struct fmsg *m)
{
	struct strbuf c = { 0, m->clen, (char *)m->ctl };
	struct strbuf d = { 0, m->dlen, (char *)m->dat };

	return putpmsg(fd, m->clen >= 0 ? &c : NULL, m->dlen >= 0 ? &d : NULL,
		       m->hipri ? 0 : m->band, m->hipri ? MSG_HIPRI : MSG_BAND);
}

#define FERRY_NREP	4

struct fstep {
	int line;
	bool any;			/* accept whatever comes */
	struct fmsg want;
	int nrep;
	struct fmsg rep[FERRY_NREP];
	int delay_ms;			/* before answering */
	bool wait_first;		/* read only once the head's first
					   message is of want's type (what
					   comes before it must go away: up
					   to 2 s) */
};

struct ferry {
	int xfd, pfd;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct fstep **steps;		/* lock */
	int nsteps, cap, done;		/* lock */
	bool stop;			/* lock */
	int checked, failed;		/* lock */
	struct fmsg last;		/* last message read by the thread */
};

static inline void fstep_init(struct fstep *s)
{
	memset(s, 0, sizeof(*s));
	fm_clear(&s->want);
}

/* Wait (up to 2 s) for the first message at fd to have want's type. */
static inline void ferry_wait_first(int fd, const struct fmsg *want)
{
	for (int i = 0; i < 2000; i++) {
		char cb[16];
		struct strpeek sp;

		memset(&sp, 0, sizeof(sp));
		sp.ctlbuf.maxlen = sizeof(cb);
		sp.ctlbuf.buf = cb;
		if (ioctl(fd, I_PEEK, &sp) == 1 && sp.ctlbuf.len >= 4 &&
		    want->clen >= 4 && memcmp(cb, want->ctl, 4) == 0)
			return;
		pause_ms(1);
	}
}

static void *ferry_main(void *arg)
{
	struct ferry *f = arg;

	for (;;) {
		struct fstep *s;
		struct fmsg got;
		bool ok;

		pthread_mutex_lock(&f->lock);
		while (!f->stop && f->done == f->nsteps)
			pthread_cond_wait(&f->cv, &f->lock);
		if (f->done == f->nsteps) {
			pthread_mutex_unlock(&f->lock);
			return NULL;
		}
		s = f->steps[f->done];
		pthread_mutex_unlock(&f->lock);
		if (s->wait_first)
			ferry_wait_first(f->pfd, &s->want);
		ok = fm_read(f->pfd, &got, -1) == 0;
		if (ok && got.clen == -1 && got.dlen == 4 &&
		    memcmp(got.dat, "STOP", 4) == 0)
			ok = false;		/* ferry_sync gave up */
		if (ok && !s->any)
			ok = fm_equal(&got, &s->want);
		if (!ok) {
			fprintf(stderr, "ferry step of line %d: FAIL: not the "
				"message expected\n", s->line);
			fm_dump("want", &s->want);
			fm_dump("got ", &got);
		}
		if (s->delay_ms > 0)
			pause_ms(s->delay_ms);
		for (int i = 0; i < s->nrep; i++)
			if (fm_write(f->pfd, &s->rep[i]) != 0) {
				fprintf(stderr, "ferry step of line %d: answer"
					" %d: %s\n", s->line, i,
					strerror(errno));
				ok = false;
			}
		pthread_mutex_lock(&f->lock);
		f->last = got;
		f->checked++;
		if (!ok)
			f->failed++;
		f->done++;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->lock);
	}
}

/* The ferry thread on pfd, for xfd (two ends of a pipe or of a loop
 * driver pair); timod pushed on xfd if push. */
static inline struct ferry *ferry_start(int xfd, int pfd, bool push)
{
	struct ferry *f = calloc(1, sizeof(*f));

	REQUIRE(f != NULL);
	f->xfd = xfd;
	f->pfd = pfd;
	if (push)
		REQUIRE(ioctl(f->xfd, I_PUSH, "timod") == 0);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cv, NULL);
	REQUIRE(pthread_create(&f->th, NULL, ferry_main, f) == 0);
	return f;
}

static inline struct ferry *ferry_new_fds(int xfd, int pfd)
{
	return ferry_start(xfd, pfd, true);
}

/* A STREAMS pipe: xfd (timod) and pfd. */
static inline struct ferry *ferry_new(void)
{
	int p[2];

	open_pipe(p);
	return ferry_new_fds(p[0], p[1]);
}

/* Queue a step (copied). */
static inline void ferry_push(struct ferry *f, const struct fstep *s)
{
	struct fstep *c = malloc(sizeof(*c));

	REQUIRE(c != NULL);
	*c = *s;
	pthread_mutex_lock(&f->lock);
	if (f->nsteps == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		f->steps = realloc(f->steps, (size_t)f->cap * sizeof(*f->steps));
		REQUIRE(f->steps != NULL);
	}
	f->steps[f->nsteps++] = c;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->lock);
}

/* The common step: expect want, answer with one message (or none). */
static inline void ferry_expect(struct ferry *f, int line,
				const struct fmsg *want,
				const struct fmsg *answer)
{
	struct fstep *s = malloc(sizeof(*s));

	REQUIRE(s != NULL);
	fstep_init(s);
	s->line = line;
	if (want != NULL)
		s->want = *want;
	else
		s->any = true;
	if (answer != NULL)
		s->rep[s->nrep++] = *answer;
	ferry_push(f, s);
	free(s);
}

/* Wait for the queue to drain (up to 5 s) and count the ferry's checks
 * in the program's.  True when everything went as expected. */
static inline bool ferry_sync_at(struct ferry *f, const char *file,
				 int line)
{
	long end = now_ms() + 5000;
	bool ok;

	pthread_mutex_lock(&f->lock);
	while (f->done < f->nsteps && now_ms() < end) {
		pthread_mutex_unlock(&f->lock);
		pause_ms(1);
		pthread_mutex_lock(&f->lock);
	}
	ok = f->done == f->nsteps;
	t_checked += f->checked + 1;
	t_failed += f->failed;
	ok = ok && f->failed == 0;
	f->checked = f->failed = 0;
	pthread_mutex_unlock(&f->lock);
	if (!ok) {
		t_failed++;
		fprintf(stderr, "%s:%d: FAIL: ferry steps not done as"
			" expected\n", file, line);
	}
	return ok;
}
#define ferry_sync(f) ferry_sync_at(f, __FILE__, __LINE__)

/* Send a message up to the endpoint (from the test's thread). */
static inline void ferry_put(struct ferry *f, const struct fmsg *m)
{
	REQUIRE(fm_write(f->pfd, m) == 0);
}

/* What the library sent must be exactly want (read within 1 s). */
#define FERRY_GOT(f, want) ferry_got_at(f, want, __FILE__, __LINE__)
static inline void ferry_got_at(struct ferry *f, const struct fmsg *want,
				const char *file, int line)
{
	struct fmsg got;
	bool ok = fm_read(f->pfd, &got, 1000) == 0 && fm_equal(&got, want);

	t_checked++;
	if (!ok) {
		t_failed++;
		fprintf(stderr, "%s:%d: FAIL: not the message expected\n",
			file, line);
		fm_dump("want", want);
		fm_dump("got ", &got);
	}
}

/* Nothing more was sent to the provider. */
#define FERRY_NOTHING(f) do {						\
	struct fmsg _g;							\
	t_checked++;							\
	if (fm_read((f)->pfd, &_g, 0) == 0) {				\
		t_failed++;						\
		fprintf(stderr, "%s:%d: FAIL: unexpected message\n",	\
			__FILE__, __LINE__);				\
		fm_dump("got ", &_g);					\
	}								\
} while (0)

static inline void ferry_free(struct ferry *f)
{
	pthread_mutex_lock(&f->lock);
	if (f->done < f->nsteps) {
		/* a step still waits for a message: wake it */
		struct fmsg m;
		fm_clear(&m);
		fm_data(&m, "STOP", 4);
		pthread_mutex_unlock(&f->lock);
		fm_write(f->xfd, &m);
		pthread_mutex_lock(&f->lock);
	}
	f->stop = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->th, NULL);
	for (int i = 0; i < f->nsteps; i++)
		free(f->steps[i]);
	free(f->steps);
	close(f->xfd);
	close(f->pfd);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cv);
	free(f);
}

/* Make xfd an endpoint with t_sync: the provider says ia.  Returns what
 * t_sync returned. */
static inline int ferry_sync_ep(struct ferry *f, const struct T_info_ack *ia)
{
	struct fmsg w, a;
	int r;

	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, ia));
	r = t_sync(f->xfd);
	ferry_sync(f);
	return r;
}

/* A ferry with an endpoint of service serv in provider state ts. */
static inline struct ferry *ferry_ep(int serv, int ts)
{
	struct ferry *f = ferry_new();
	struct T_info_ack ia = fi_info(serv, ts);

	REQUIRE(ferry_sync_ep(f, &ia) >= 0);
	return f;
}

/* t_bind an Internet endpoint to 127.0.0.1, port chosen by the
 * provider, with qlen: the address bound. */
static inline struct sockaddr_in bind_lo4(int fd, unsigned qlen)
{
	struct sockaddr_in s, got;
	struct t_bind b, r;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)&s;
	b.addr.len = sizeof(s);
	b.qlen = qlen;
	memset(&r, 0, sizeof(r));
	r.addr.buf = (char *)&got;
	r.addr.maxlen = sizeof(got);
	REQUIRE(t_bind(fd, &b, &r) == 0);
	return got;
}

/* One byte "x" from a plain UDP socket to arg (a struct sockaddr_in *):
 * a datagram a waiting reader must get. */
static inline void send_dgram(void *arg)
{
	struct sockaddr_in *to = arg;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	CHECK_RET((int)sendto(s, "x", 1, 0, (struct sockaddr *)to,
			      sizeof(*to)), 1);
	close(s);
}

#endif
