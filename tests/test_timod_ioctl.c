/*
 * test_timod_ioctl -- every TI_* ioctl of <sys/timod.h> through timod,
 * ferry-clip style: timod is pushed on one end of a STREAMS pipe and a
 * second thread plays the transport provider on the other end with
 * getmsg/putmsg.  For each ioctl: the exact primitive that arrives at the
 * provider (type and every byte; the caller's buffer is bigger than the
 * request and filled with junk, which must not go down), the provider's
 * success answer returned as the ioctl's data, and its T_ERROR_ACK
 * returned as the positive value TI_ERR(TLI_error, UNIX_error) with no
 * data.  Requests that do not match the ioctl or are too short fail with
 * EINVAL and send nothing; malformed answers fail with EPROTO; TI_SYNC
 * reports the CONIND_number of the last bind; TRANSPARENT TI_* ioctls
 * and TI_SETMYNAME/TI_SETPEERNAME pass down unchanged (testmod on the
 * provider's end counts them).
 */
#include "sth.h"

#include <sys/timod.h>

#define JUNK	0xa5
#define BUFSZ	256

/* The provider: reads one message from fd, then sends the answer. */
struct prov {
	int fd;
	int rc;				/* getmsg's result */
	int flags;			/* its flags: RS_HIPRI or 0 */
	unsigned char ctl[BUFSZ];
	int ctllen;
	unsigned char dat[BUFSZ];
	int datlen;
	const void *ans;		/* the answer (NULL: none) */
	int anslen;
	int anshi;			/* send it high priority */
	int arc;			/* putmsg's result */
	pthread_t th;
};

static void *prov_main(void *arg)
{
	struct prov *p = arg;
	struct strbuf c = { sizeof(p->ctl), 0, (char *)p->ctl };
	struct strbuf d = { sizeof(p->dat), 0, (char *)p->dat };

	p->flags = 0;
	p->rc = getmsg(p->fd, &c, &d, &p->flags);
	p->ctllen = c.len;
	p->datlen = d.len;
	if (p->ans != NULL) {
		struct strbuf a = { 0, p->anslen, (char *)p->ans };
		p->arc = putmsg(p->fd, &a, NULL, p->anshi ? RS_HIPRI : 0);
	}
	return NULL;
}

static void prov_start(struct prov *p, int fd, const void *ans, int anslen,
		       int anshi)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->ans = ans;
	p->anslen = anslen;
	p->anshi = anshi;
	REQUIRE(pthread_create(&p->th, NULL, prov_main, p) == 0);
}

/* Join and check that exactly the request req (reqlen bytes, high
 * priority or not) arrived, with no data part. */
#define PROV_CHECK(p, req, reqlen, hi) do {				\
	pthread_join((p)->th, NULL);					\
	CHECK_EQ((p)->rc, 0);						\
	CHECK_EQ((p)->flags, (hi) ? RS_HIPRI : 0);			\
	CHECK_EQ((p)->ctllen, (reqlen));				\
	CHECK_EQ((p)->datlen, -1);					\
	CHECK_MEM((p)->ctl, (req), (size_t)(reqlen));			\
	CHECK_EQ((p)->arc, 0);						\
} while (0)

/* A timod stream: fds[0] the user's end with timod, fds[1] the
 * provider's. */
static void open_ti(int fds[2])
{
	open_pipe(fds);
	REQUIRE(ioctl(fds[0], I_PUSH, "timod") == 0);
}

static void close_ti(int fds[2])
{
	close(fds[0]);
	close(fds[1]);
}

/* buf: the request at its start, junk after it. */
static void fill(unsigned char *buf, const void *req, size_t len)
{
	memset(buf, JUNK, BUFSZ);
	memcpy(buf, req, len);
}

static int error_ack(unsigned char *b, t_scalar_t prim, t_scalar_t tli,
		     t_scalar_t ux)
{
	struct T_error_ack e = { T_ERROR_ACK, prim, tli, ux };

	memcpy(b, &e, sizeof(e));
	return (int)sizeof(e);
}

static const struct T_info_ack the_info = {
	T_INFO_ACK, 4096, 64, -2, -2, 16, 512, 4096, T_COTS_ORD, TS_IDLE,
	XPG4_1
};

/* The ioctl cmd with request req (reqlen bytes) in a junk-filled buffer,
 * answered with T_ERROR_ACK(prim, tli, ux): returns the ioctl's value,
 * checks no data came back and what went down. */
static int refused(int fds[2], int cmd, const void *req, int reqlen,
		   const void *down, int downlen, int downhi, t_scalar_t prim,
		   t_scalar_t tli, t_scalar_t ux)
{
	unsigned char buf[BUFSZ], ans[32];
	struct prov p;
	int r, len = -1, n = error_ack(ans, prim, tli, ux);

	fill(buf, req, (size_t)reqlen);
	prov_start(&p, fds[1], ans, n, 1);
	r = do_str(fds[0], cmd, buf, BUFSZ, 0, &len);
	PROV_CHECK(&p, down, downlen, downhi);
	if (r != -1)
		CHECK_EQ(len, 0);	/* no data with the return value */
	return r;
}

static void test_getinfo(void)
{
	int fds[2], len = -1;
	struct T_info_req req = { T_INFO_REQ };
	unsigned char buf[BUFSZ];
	struct prov p;

	open_ti(fds);
	fill(buf, &req, sizeof(req));
	prov_start(&p, fds[1], &the_info, sizeof(the_info), 1);
	CHECK_RET(do_str(fds[0], TI_GETINFO, buf, BUFSZ, 0, &len), 0);
	PROV_CHECK(&p, &req, (int)sizeof(req), 1);
	CHECK_EQ(len, sizeof(the_info));
	CHECK_MEM(buf, &the_info, sizeof(the_info));

	CHECK_RET(refused(fds, TI_GETINFO, &req, sizeof(req), &req,
			  sizeof(req), 1, T_INFO_REQ, TSYSERR, ENOMEM),
		  TI_ERR(TSYSERR, ENOMEM));
	CHECK_EQ(TI_TLIERR(TI_ERR(TSYSERR, ENOMEM)), TSYSERR);
	CHECK_EQ(TI_SYSERR(TI_ERR(TSYSERR, ENOMEM)), ENOMEM);
	/* nothing else reached the user */
	CHECK_RET(nread(fds[0], NULL), 0);
	close_ti(fds);
}

struct optreq {
	struct T_optmgmt_req r;
	struct T_opthdr oh;
	uint32_t val;
};

static void test_optmgmt(void)
{
	int fds[2], len = -1;
	struct optreq req = {
		{ T_OPTMGMT_REQ, sizeof(struct T_opthdr) + 4,
		  sizeof(struct T_optmgmt_req), T_NEGOTIATE },
		{ sizeof(struct T_opthdr) + 4, 0xffff, 1, 0 }, 7
	};
	struct optreq ack = {
		{ T_OPTMGMT_ACK, sizeof(struct T_opthdr) + 4,
		  sizeof(struct T_optmgmt_ack), T_SUCCESS },
		{ sizeof(struct T_opthdr) + 4, 0xffff, 1, T_SUCCESS }, 7
	};
	unsigned char buf[BUFSZ];
	struct prov p;

	open_ti(fds);
	fill(buf, &req, sizeof(req));
	prov_start(&p, fds[1], &ack, sizeof(ack), 1);
	CHECK_RET(do_str(fds[0], TI_OPTMGMT, buf, BUFSZ, 0, &len), 0);
	PROV_CHECK(&p, &req, (int)sizeof(req), 0);	/* M_PROTO */
	CHECK_EQ(len, sizeof(ack));
	CHECK_MEM(buf, &ack, sizeof(ack));

	CHECK_RET(refused(fds, TI_OPTMGMT, &req, sizeof(req), &req,
			  sizeof(req), 0, T_OPTMGMT_REQ, TBADOPT, 0),
		  TI_ERR(TBADOPT, 0));

	/* options outside the request: sent as they are (all BUFSZ bytes),
	 * for the provider to refuse with TBADOPT */
	{
		struct optreq bad = req;
		unsigned char whole[BUFSZ];
		bad.r.OPT_offset = 1000;
		fill(whole, &bad, sizeof(bad));
		CHECK_RET(refused(fds, TI_OPTMGMT, &bad, sizeof(bad), whole,
				  BUFSZ, 0, T_OPTMGMT_REQ, TBADOPT, 0),
			  TI_ERR(TBADOPT, 0));
	}
	/* no options at all: just the structure goes down */
	{
		struct T_optmgmt_req bare = { T_OPTMGMT_REQ, 0, 0, T_CURRENT };
		CHECK_RET(refused(fds, TI_OPTMGMT, &bare, sizeof(bare), &bare,
				  sizeof(bare), 0, T_OPTMGMT_REQ, TNOTSUPPORT,
				  0), TI_ERR(TNOTSUPPORT, 0));
	}
	close_ti(fds);
}

struct bindmsg {
	struct T_bind_req r;
	char addr[8];
};

static void bind_ok(int fds[2], uint32_t conind, uint32_t granted)
{
	struct bindmsg req = {
		{ T_BIND_REQ, 8, sizeof(struct T_bind_req), conind },
		"abcdefg"
	};
	struct bindmsg ack = {
		{ T_BIND_ACK, 8, sizeof(struct T_bind_ack), granted },
		"ABCDEFG"
	};
	unsigned char buf[BUFSZ];
	struct prov p;
	int len = -1;

	ack.r.PRIM_type = T_BIND_ACK;
	fill(buf, &req, sizeof(req));
	prov_start(&p, fds[1], &ack, sizeof(ack), 1);
	CHECK_RET(do_str(fds[0], TI_BIND, buf, BUFSZ, 0, &len), 0);
	PROV_CHECK(&p, &req, (int)sizeof(req), 0);
	CHECK_EQ(len, sizeof(ack));
	CHECK_MEM(buf, &ack, sizeof(ack));
}

/* TI_SYNC with flags: *sa gets the answer; returns the ioctl's value. */
static int do_sync(int fds[2], uint32_t flags, const void *ans, int anslen,
		   struct ti_sync_ack *sa, int *lenp)
{
	struct ti_sync_req sr = { flags };
	struct T_info_req ir = { T_INFO_REQ };
	unsigned char buf[BUFSZ];
	struct prov p;
	int r;

	fill(buf, &sr, sizeof(sr));
	prov_start(&p, fds[1], ans, anslen, 1);
	r = do_str(fds[0], TI_SYNC, buf, BUFSZ, 0, lenp);
	PROV_CHECK(&p, &ir, (int)sizeof(ir), 1);
	memcpy(sa, buf, sizeof(*sa));
	return r;
}

static void test_bind_unbind_sync(void)
{
	int fds[2], len = -1;
	struct ti_sync_ack sa;
	struct T_unbind_req ur = { T_UNBIND_REQ };
	struct T_ok_ack ok = { T_OK_ACK, T_UNBIND_REQ };
	unsigned char buf[BUFSZ];
	struct prov p;

	open_ti(fds);
	/* before any bind: qlen 0 */
	CHECK_RET(do_sync(fds, TSRF_INFO_REQ | TSRF_QLEN_REQ, &the_info,
			  sizeof(the_info), &sa, &len), 0);
	CHECK_EQ(len, sizeof(sa));
	CHECK_MEM(&sa.tsa_info, &the_info, sizeof(the_info));
	CHECK_EQ(sa.tsa_qlen, 0);
	CHECK_EQ(sa.tsa_flags, 0);

	bind_ok(fds, 5, 3);
	CHECK_RET(do_sync(fds, TSRF_QLEN_REQ, &the_info, sizeof(the_info),
			  &sa, &len), 0);
	CHECK_EQ(len, sizeof(sa));
	CHECK_EQ(sa.tsa_qlen, 3);	/* what the provider granted */
	CHECK_MEM(&sa.tsa_info, &the_info, sizeof(the_info));

	{
		struct bindmsg req = {
			{ T_BIND_REQ, 8, sizeof(struct T_bind_req), 1 }, "xyz"
		};
		CHECK_RET(refused(fds, TI_BIND, &req, sizeof(req), &req,
				  sizeof(req), 0, T_BIND_REQ, TADDRBUSY, 0),
			  TI_ERR(TADDRBUSY, 0));
		/* a bind without an address: the structure only */
		struct T_bind_req bare = { T_BIND_REQ, 0, 0, 0 };
		CHECK_RET(refused(fds, TI_BIND, &bare, sizeof(bare), &bare,
				  sizeof(bare), 0, T_BIND_REQ, TOUTSTATE, 0),
			  TI_ERR(TOUTSTATE, 0));
	}

	/* unbind: T_OK_ACK naming T_UNBIND_REQ; qlen back to 0 */
	fill(buf, &ur, sizeof(ur));
	prov_start(&p, fds[1], &ok, sizeof(ok), 1);
	CHECK_RET(do_str(fds[0], TI_UNBIND, buf, BUFSZ, 0, &len), 0);
	PROV_CHECK(&p, &ur, (int)sizeof(ur), 0);
	CHECK_EQ(len, sizeof(ok));
	CHECK_MEM(buf, &ok, sizeof(ok));
	CHECK_RET(do_sync(fds, 0, &the_info, sizeof(the_info), &sa, &len), 0);
	CHECK_EQ(sa.tsa_qlen, 0);

	CHECK_RET(refused(fds, TI_UNBIND, &ur, sizeof(ur), &ur, sizeof(ur), 0,
			  T_UNBIND_REQ, TOUTSTATE, 0), TI_ERR(TOUTSTATE, 0));
	/* TI_SYNC refused by the provider */
	{
		struct ti_sync_req sr = { TSRF_INFO_REQ };
		struct T_info_req ir = { T_INFO_REQ };
		CHECK_RET(refused(fds, TI_SYNC, &sr, sizeof(sr), &ir,
				  sizeof(ir), 1, T_INFO_REQ, TSYSERR, EIO),
			  TI_ERR(TSYSERR, EIO));
	}
	/* a T_INFO_ACK too short to copy: EPROTO */
	{
		struct T_info_ack shortack = the_info;
		CHECK_ERR(do_sync(fds, 0, &shortack, 8, &sa, &len), EPROTO);
	}
	CHECK_RET(nread(fds[0], NULL), 0);
	close_ti(fds);
}

struct addrack {
	struct T_addr_ack a;
	char loc[8];
	char rem[12];
};

static int name_call(int fds[2], int cmd, const struct addrack *ack,
		     int acklen, unsigned char *buf, int *lenp)
{
	struct T_addr_req ar = { T_ADDR_REQ };
	struct prov p;
	int r;

	memset(buf, JUNK, BUFSZ);
	prov_start(&p, fds[1], ack, acklen, 1);
	r = do_str(fds[0], cmd, buf, BUFSZ, 0, lenp);
	PROV_CHECK(&p, &ar, (int)sizeof(ar), 1);
	return r;
}

static void test_names(void)
{
	int fds[2], len = -1;
	struct addrack ack = {
		{ T_ADDR_ACK, 7, sizeof(struct T_addr_ack), 9,
		  sizeof(struct T_addr_ack) + 8 },
		"local-1", "remote-22"
	};
	struct T_addr_req ar = { T_ADDR_REQ };
	unsigned char buf[BUFSZ];

	open_ti(fds);
	CHECK_RET(name_call(fds, TI_GETMYNAME, &ack, sizeof(ack), buf, &len),
		  0);
	CHECK_EQ(len, 7);
	CHECK_MEM(buf, "local-1", 7);
	CHECK_RET(name_call(fds, TI_GETPEERNAME, &ack, sizeof(ack), buf,
			    &len), 0);
	CHECK_EQ(len, 9);
	CHECK_MEM(buf, "remote-22", 9);

	/* TI_GETADDRS: the whole T_ADDR_ACK */
	{
		struct prov p;
		fill(buf, &ar, sizeof(ar));
		prov_start(&p, fds[1], &ack, sizeof(ack), 1);
		CHECK_RET(do_str(fds[0], TI_GETADDRS, buf, BUFSZ, 0, &len), 0);
		PROV_CHECK(&p, &ar, (int)sizeof(ar), 1);
		CHECK_EQ(len, sizeof(ack));
		CHECK_MEM(buf, &ack, sizeof(ack));
	}
	CHECK_RET(refused(fds, TI_GETADDRS, &ar, sizeof(ar), &ar, sizeof(ar),
			  1, T_ADDR_REQ, TNOTSUPPORT, 0),
		  TI_ERR(TNOTSUPPORT, 0));

	/* not connected: no remote address */
	{
		struct addrack un = ack;
		un.a.REMADDR_length = 0;
		un.a.REMADDR_offset = 0;
		CHECK_ERR(name_call(fds, TI_GETPEERNAME, &un, sizeof(un), buf,
				    &len), ENOTCONN);
		/* and not bound: an empty local address */
		un.a.LOCADDR_length = 0;
		CHECK_RET(name_call(fds, TI_GETMYNAME, &un,
				    sizeof(struct T_addr_ack), buf, &len), 0);
		CHECK_EQ(len, 0);
	}
	/* an address outside the ack: EPROTO */
	{
		struct addrack bad = ack;
		bad.a.LOCADDR_offset = 500;
		CHECK_ERR(name_call(fds, TI_GETMYNAME, &bad, sizeof(bad), buf,
				    &len), EPROTO);
		bad = ack;
		bad.a.REMADDR_length = -1;
		CHECK_ERR(name_call(fds, TI_GETPEERNAME, &bad, sizeof(bad),
				    buf, &len), EPROTO);
		/* too short to be a T_ADDR_ACK */
		CHECK_ERR(name_call(fds, TI_GETMYNAME, &ack, 12, buf, &len),
			  EPROTO);
	}
	/* refused: a positive value, no data */
	{
		struct prov p;
		unsigned char ans[32];
		int n = error_ack(ans, T_ADDR_REQ, TNOTSUPPORT, 0);
		memset(buf, JUNK, BUFSZ);
		prov_start(&p, fds[1], ans, n, 1);
		CHECK_RET(do_str(fds[0], TI_GETPEERNAME, buf, BUFSZ, 0, &len),
			  TI_ERR(TNOTSUPPORT, 0));
		PROV_CHECK(&p, &ar, (int)sizeof(ar), 1);
		CHECK_EQ(len, 0);
	}
	/* no data at all with TI_GETMYNAME: still a T_ADDR_REQ; the head
	 * copies the whole answer back whatever ic_len was (streamio: the
	 * buffer must hold the largest answer), so to no buffer: EFAULT */
	{
		struct prov p;
		prov_start(&p, fds[1], &ack, sizeof(ack), 1);
		CHECK_ERR(do_str(fds[0], TI_GETMYNAME, NULL, 0, 0, &len),
			  EFAULT);
		PROV_CHECK(&p, &ar, (int)sizeof(ar), 1);
	}
	/* and with a request of 0 bytes into a buffer: all of it */
	{
		struct prov p;
		memset(buf, JUNK, BUFSZ);
		prov_start(&p, fds[1], &ack, sizeof(ack), 1);
		CHECK_RET(do_str(fds[0], TI_GETMYNAME, buf, 0, 0, &len), 0);
		PROV_CHECK(&p, &ar, (int)sizeof(ar), 1);
		CHECK(len > 0);
	}
	CHECK_RET(nread(fds[0], NULL), 0);
	close_ti(fds);
}

static void test_capability(void)
{
	int fds[2], len = -1;
	struct T_capability_req req = { T_CAPABILITY_REQ, TC1_INFO };
	struct T_capability_ack ack = { T_CAPABILITY_ACK, TC1_INFO, the_info,
					0 };
	unsigned char buf[BUFSZ];
	struct prov p;

	open_ti(fds);
	fill(buf, &req, sizeof(req));
	prov_start(&p, fds[1], &ack, sizeof(ack), 1);
	CHECK_RET(do_str(fds[0], TI_CAPABILITY, buf, BUFSZ, 0, &len), 0);
	PROV_CHECK(&p, &req, (int)sizeof(req), 1);
	CHECK_EQ(len, sizeof(ack));
	CHECK_MEM(buf, &ack, sizeof(ack));
	CHECK_RET(refused(fds, TI_CAPABILITY, &req, sizeof(req), &req,
			  sizeof(req), 1, T_CAPABILITY_REQ, TNOTSUPPORT, 0),
		  TI_ERR(TNOTSUPPORT, 0));
	close_ti(fds);
}

/* T_ERROR_ACKs whose errors do not fit a return value: EPROTO. */
static void test_error_ack_range(void)
{
	int fds[2];
	struct T_info_req req = { T_INFO_REQ };

	open_ti(fds);
	CHECK_ERR(refused(fds, TI_GETINFO, &req, sizeof(req), &req,
			  sizeof(req), 1, T_INFO_REQ, 0, 0), EPROTO);
	CHECK_ERR(refused(fds, TI_GETINFO, &req, sizeof(req), &req,
			  sizeof(req), 1, T_INFO_REQ, 256, 0), EPROTO);
	CHECK_ERR(refused(fds, TI_GETINFO, &req, sizeof(req), &req,
			  sizeof(req), 1, T_INFO_REQ, TSYSERR, 300), EPROTO);
	CHECK_ERR(refused(fds, TI_GETINFO, &req, sizeof(req), &req,
			  sizeof(req), 1, T_INFO_REQ, TSYSERR, -1), EPROTO);
	CHECK_RET(refused(fds, TI_GETINFO, &req, sizeof(req), &req,
			  sizeof(req), 1, T_INFO_REQ, TPROTO, 255),
		  TI_ERR(TPROTO, 255));
	CHECK_RET(nread(fds[0], NULL), 0);
	close_ti(fds);
}

/* Requests that do not match their ioctl, or are too short: EINVAL, and
 * nothing goes down. */
static void test_bad_requests(void)
{
	static const struct {
		int cmd;
		t_scalar_t prim;
		int size;
	} reqs[] = {
		{ TI_GETINFO, T_INFO_REQ, sizeof(struct T_info_req) },
		{ TI_OPTMGMT, T_OPTMGMT_REQ, sizeof(struct T_optmgmt_req) },
		{ TI_BIND, T_BIND_REQ, sizeof(struct T_bind_req) },
		{ TI_UNBIND, T_UNBIND_REQ, sizeof(struct T_unbind_req) },
		{ TI_GETADDRS, T_ADDR_REQ, sizeof(struct T_addr_req) },
		{ TI_CAPABILITY, T_CAPABILITY_REQ,
		  sizeof(struct T_capability_req) },
	};
	int fds[2];
	unsigned char buf[BUFSZ];
	t_scalar_t prim;

	open_ti(fds);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		int cmd = reqs[i].cmd;

		/* no request */
		CHECK_ERR(do_str(fds[0], cmd, NULL, 0, 0, NULL), EINVAL);
		memset(buf, 0, BUFSZ);
		CHECK_ERR(do_str(fds[0], cmd, buf, 2, 0, NULL), EINVAL);
		/* another primitive */
		prim = reqs[(i + 1) % 6].prim;
		memcpy(buf, &prim, sizeof(prim));
		CHECK_ERR(do_str(fds[0], cmd, buf, BUFSZ, 0, NULL), EINVAL);
		prim = T_CONN_REQ;
		memcpy(buf, &prim, sizeof(prim));
		CHECK_ERR(do_str(fds[0], cmd, buf, BUFSZ, 0, NULL), EINVAL);
		prim = -1;
		memcpy(buf, &prim, sizeof(prim));
		CHECK_ERR(do_str(fds[0], cmd, buf, BUFSZ, 0, NULL), EINVAL);
		/* the right primitive, one byte short of its structure */
		prim = reqs[i].prim;
		memcpy(buf, &prim, sizeof(prim));
		if (reqs[i].size > (int)sizeof(prim))
			CHECK_ERR(do_str(fds[0], cmd, buf, reqs[i].size - 1,
					 0, NULL), EINVAL);
	}
	/* TI_SYNC: short, unknown flags */
	{
		uint32_t fl = TSRF_INFO_REQ;
		CHECK_ERR(do_str(fds[0], TI_SYNC, &fl, 2, 0, NULL), EINVAL);
		CHECK_ERR(do_str(fds[0], TI_SYNC, NULL, 0, 0, NULL), EINVAL);
		fl = 0x80;
		CHECK_ERR(do_str(fds[0], TI_SYNC, &fl, sizeof(fl), 0, NULL),
			  EINVAL);
	}
	/* nothing reached the provider */
	CHECK_RET(nread(fds[1], NULL), 0);
	close_ti(fds);
}

/* Transparent TI_* ioctls, TI_SETMYNAME/TI_SETPEERNAME and other
 * ioctls go down unchanged: they cross the pipe, pass testmod on the
 * provider's end (counted) and its head refuses them with EINVAL. */
static void test_pass_down(void)
{
	int fds[2], before, after;
	unsigned char buf[BUFSZ];
	struct T_info_req req = { T_INFO_REQ };

	open_ti(fds);
	REQUIRE(ioctl(fds[1], I_PUSH, "testmod") == 0);
	fill(buf, &req, sizeof(req));
	before = do_str(fds[1], TM_COUNT, NULL, 0, 0, NULL);
	CHECK_ERR(ioctl(fds[0], TI_GETINFO, buf), EINVAL);	/* transparent */
	CHECK_ERR(ioctl(fds[0], TI_BIND, buf), EINVAL);
	CHECK_ERR(do_str(fds[0], TI_SETMYNAME, buf, 16, 0, NULL), EINVAL);
	CHECK_ERR(do_str(fds[0], TI_SETPEERNAME, buf, 16, 0, NULL), EINVAL);
	CHECK_ERR(do_str(fds[0], TIMOD | 151, buf, 16, 0, NULL), EINVAL);
	CHECK_ERR(do_str(fds[0], TIMOD | 139, buf, 16, 0, NULL), EINVAL);
	after = do_str(fds[1], TM_COUNT, NULL, 0, 0, NULL);
	/* each: its M_IOCTL up through testmod, the M_IOCNAK back down */
	CHECK_EQ(after - before, 6 * 2);
	CHECK_RET(nread(fds[0], NULL), 0);
	CHECK_RET(nread(fds[1], NULL), 0);
	close_ti(fds);
}

static void test_push_pop(void)
{
	int fds[2];

	open_ti(fds);
	CHECK_RET(ioctl(fds[0], I_FIND, "timod"), 1);
	CHECK_RET(nlist(fds[0]), 1);
	CHECK_RET(ioctl(fds[0], I_POP, 0), 0);
	CHECK_RET(ioctl(fds[0], I_FIND, "timod"), 0);
	/* twice, and data still flows through it */
	CHECK_RET(ioctl(fds[0], I_PUSH, "timod"), 0);
	CHECK_RET(ioctl(fds[0], I_PUSH, "timod"), 0);
	CHECK_RET(write(fds[0], "ab", 2), 2);
	CHECK_RET(write(fds[1], "cde", 3), 3);
	{
		char b[8];
		CHECK_RET(read(fds[1], b, sizeof(b)), 2);
		CHECK_RET(read(fds[0], b, sizeof(b)), 3);
		CHECK_MEM(b, "cde", 3);
	}
	close_ti(fds);
}

int main(void)
{
	th_mark();
	test_push_pop();
	test_getinfo();
	test_optmgmt();
	test_bind_unbind_sync();
	test_names();
	test_capability();
	test_error_ack_range();
	test_bad_requests();
	test_pass_down();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
