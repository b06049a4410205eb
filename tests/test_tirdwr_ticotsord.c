/*
 * test_tirdwr_ticotsord -- timod and tirdwr over a real provider, the
 * loopback /dev/ticotsord.  Endpoints are set up through timod (TI_BIND,
 * TI_GETINFO, TI_GETMYNAME, TI_GETPEERNAME, TI_SYNC answered by the
 * provider itself; T_CONN_REQ/T_CONN_IND/T_CONN_RES/T_CONN_CON with
 * putmsg/getmsg passing through timod), then timod is popped and tirdwr
 * pushed: read and write carry data both ways, including more than the
 * queues hold at once; an orderly release from the peer reads as end of
 * file and closing sends the peer T_ORDREL_REQ (it sees T_ORDREL_IND);
 * a disconnect hangs the stream up (writes fail with ENXIO) and nothing
 * is sent on close; popping tirdwr while connected disconnects (the
 * provider's T_OK_ACK for T_DISCON_REQ reaches the user).  Every wait is
 * bounded.
 */
#include "sth.h"

#include <sys/timod.h>

#define DEV	"/dev/ticotsord"
#define WAIT_MS	3000
#define BUFSZ	512

struct got {
	int rc, flags;
	union {
		t_scalar_t prim;
		union T_primitives p;
		unsigned char b[BUFSZ];
	} c;
	unsigned char dat[BUFSZ];
	int ctllen, datlen;
};

/* The next message within WAIT_MS (false: none came). */
static bool get1(int fd, struct got *g)
{
	struct strbuf c = { sizeof(g->c.b), 0, (char *)g->c.b };
	struct strbuf d = { sizeof(g->dat), 0, (char *)g->dat };
	struct pollfd p = { fd, POLLIN | POLLPRI | POLLRDBAND, 0 };

	memset(g, 0, sizeof(*g));
	g->rc = -1;
	if (poll(&p, 1, WAIT_MS) != 1)
		return false;
	g->rc = getmsg(fd, &c, &d, &g->flags);
	g->ctllen = c.len;
	g->datlen = d.len;
	return true;
}

/* The next message is the primitive prim (false otherwise). */
static bool expect(int fd, struct got *g, t_scalar_t prim)
{
	bool ok = get1(fd, g) && g->rc == 0 &&
		  g->ctllen >= (int)sizeof(t_scalar_t) && g->c.prim == prim;

	CHECK(ok);
	if (!ok)
		fprintf(stderr, "  wanted primitive %d: rc %d ctllen %d prim %d\n",
			(int)prim, g->rc, g->ctllen,
			g->ctllen >= 4 ? (int)g->c.prim : -1);
	return ok;
}

static bool quiet(int fd)
{
	struct pollfd p = { fd, POLLIN | POLLPRI | POLLRDBAND, 0 };

	return poll(&p, 1, 30) == 0;
}

static int put_ctl(int fd, const void *ctl, int len, int flags)
{
	struct strbuf c = { 0, len, (char *)ctl };

	return putmsg(fd, &c, NULL, flags);
}

/* TI_BIND through timod: the bound address goes to out (outlen). */
static int ti_bind(int fd, const char *addr, uint32_t qlen, char *out,
		   int *outlen, uint32_t *granted)
{
	union {
		struct T_bind_req r;
		struct T_bind_ack a;
		unsigned char b[BUFSZ];
	} u;
	int len = 0, n = addr ? (int)strlen(addr) : 0, r;

	memset(&u, 0, sizeof(u));
	u.r.PRIM_type = T_BIND_REQ;
	u.r.ADDR_length = n;
	u.r.ADDR_offset = n ? (t_scalar_t)sizeof(u.r) : 0;
	u.r.CONIND_number = qlen;
	if (n)
		memcpy(u.b + sizeof(u.r), addr, (size_t)n);
	r = do_str(fd, TI_BIND, &u, sizeof(u), 0, &len);
	if (r != 0)
		return r;
	CHECK_EQ(u.a.PRIM_type, T_BIND_ACK);
	CHECK(len >= (int)sizeof(u.a));
	CHECK(u.a.ADDR_length > 0 && u.a.ADDR_length <= 64);
	CHECK(u.a.ADDR_offset + u.a.ADDR_length <= len);
	*outlen = u.a.ADDR_length;
	memcpy(out, u.b + u.a.ADDR_offset, (size_t)u.a.ADDR_length);
	*granted = u.a.CONIND_number;
	return 0;
}

struct conn {
	int lis, cli;		/* listener (accepts on itself), caller */
	char laddr[64], caddr[64];
	int laddrlen, caddrlen;
};

/* Two ticotsord endpoints with timod, connected: lis accepted on
 * itself.  Returns false (after failed checks) if anything went wrong. */
static bool connect_pair(struct conn *k, const char *name)
{
	struct {
		struct T_conn_req r;
		char a[64];
	} cr;
	struct T_conn_res res;
	uint32_t granted = 0;
	struct got g;

	memset(k, 0, sizeof(*k));
	k->lis = open(DEV, O_RDWR);
	k->cli = open(DEV, O_RDWR);
	REQUIRE(k->lis >= 0 && k->cli >= 0);
	CHECK_RET(ioctl(k->lis, I_PUSH, "timod"), 0);
	CHECK_RET(ioctl(k->cli, I_PUSH, "timod"), 0);
	CHECK_RET(ti_bind(k->lis, name, 1, k->laddr, &k->laddrlen, &granted),
		  0);
	CHECK_EQ(granted, 1);
	CHECK_EQ(k->laddrlen, (int)strlen(name));
	CHECK_MEM(k->laddr, name, strlen(name));
	CHECK_RET(ti_bind(k->cli, NULL, 0, k->caddr, &k->caddrlen, &granted),
		  0);
	CHECK_EQ(granted, 0);

	memset(&cr, 0, sizeof(cr));
	cr.r.PRIM_type = T_CONN_REQ;
	cr.r.DEST_length = k->laddrlen;
	cr.r.DEST_offset = sizeof(cr.r);
	memcpy(cr.a, k->laddr, (size_t)k->laddrlen);
	CHECK_RET(put_ctl(k->cli, &cr, (int)sizeof(cr.r) + k->laddrlen, 0),
		  0);
	if (!expect(k->cli, &g, T_OK_ACK))
		return false;
	CHECK_EQ(g.c.p.ok_ack.CORRECT_prim, T_CONN_REQ);
	if (!expect(k->lis, &g, T_CONN_IND))
		return false;
	res.PRIM_type = T_CONN_RES;
	res.ACCEPTOR_id = 0;
	res.OPT_length = 0;
	res.OPT_offset = 0;
	res.SEQ_number = g.c.p.conn_ind.SEQ_number;
	CHECK_RET(put_ctl(k->lis, &res, sizeof(res), 0), 0);
	if (!expect(k->lis, &g, T_OK_ACK))
		return false;
	CHECK_EQ(g.c.p.ok_ack.CORRECT_prim, T_CONN_RES);
	return expect(k->cli, &g, T_CONN_CON);
}

/* Both ends connected: timod's queries answered by the provider. */
static void check_queries(struct conn *k)
{
	unsigned char buf[BUFSZ];
	struct T_info_req ir = { T_INFO_REQ };
	struct ti_sync_req sr = { TSRF_INFO_REQ | TSRF_QLEN_REQ };
	struct ti_sync_ack sa;
	struct T_info_ack ia;
	int len = -1;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &ir, sizeof(ir));
	CHECK_RET(do_str(k->cli, TI_GETINFO, buf, BUFSZ, 0, &len), 0);
	CHECK_EQ(len, sizeof(ia));
	memcpy(&ia, buf, sizeof(ia));
	CHECK_EQ(ia.PRIM_type, T_INFO_ACK);
	CHECK_EQ(ia.SERV_type, T_COTS_ORD);
	CHECK_EQ(ia.CURRENT_state, TS_DATA_XFER);

	memset(buf, 0, sizeof(buf));
	CHECK_RET(do_str(k->cli, TI_GETPEERNAME, buf, BUFSZ, 0, &len), 0);
	CHECK_EQ(len, k->laddrlen);
	CHECK_MEM(buf, k->laddr, (size_t)k->laddrlen);
	CHECK_RET(do_str(k->cli, TI_GETMYNAME, buf, BUFSZ, 0, &len), 0);
	CHECK_EQ(len, k->caddrlen);
	CHECK_MEM(buf, k->caddr, (size_t)k->caddrlen);
	CHECK_RET(do_str(k->lis, TI_GETPEERNAME, buf, BUFSZ, 0, &len), 0);
	CHECK_EQ(len, k->caddrlen);
	CHECK_MEM(buf, k->caddr, (size_t)k->caddrlen);

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &sr, sizeof(sr));
	CHECK_RET(do_str(k->lis, TI_SYNC, buf, BUFSZ, 0, &len), 0);
	CHECK_EQ(len, sizeof(sa));
	memcpy(&sa, buf, sizeof(sa));
	CHECK_EQ(sa.tsa_info.PRIM_type, T_INFO_ACK);
	CHECK_EQ(sa.tsa_info.CURRENT_state, TS_DATA_XFER);
	CHECK_EQ(sa.tsa_qlen, 1);
	CHECK_EQ(sa.tsa_flags, 0);
}

/* timod off, tirdwr on. */
static void to_rdwr(int fd)
{
	CHECK_RET(ioctl(fd, I_POP, 0), 0);
	CHECK_RET(ioctl(fd, I_PUSH, "tirdwr"), 0);
	CHECK_RET(ioctl(fd, I_FIND, "timod"), 0);
}

/* Read exactly n bytes (bounded). */
static ssize_t read_n(int fd, unsigned char *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t k;

		if (poll(&p, 1, WAIT_MS) != 1)
			break;
		k = read(fd, b + got, n - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

#define BIG	(256 * 1024)

struct writer {
	int fd;
	const unsigned char *b;
	ssize_t rc;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	w->rc = write(w->fd, w->b, BIG);
	return NULL;
}

static void test_data(void)
{
	struct conn k;
	unsigned char buf[BUFSZ];
	unsigned char *big = malloc(BIG), *in = malloc(BIG);
	struct writer w;
	pthread_t th;

	REQUIRE(big != NULL && in != NULL);
	if (!connect_pair(&k, "rdwr-data"))
		goto out;
	check_queries(&k);
	to_rdwr(k.lis);
	to_rdwr(k.cli);
	CHECK_RET(write(k.cli, "ping", 4), 4);
	CHECK_RET(read_n(k.lis, buf, 4), 4);
	CHECK_MEM(buf, "ping", 4);
	CHECK_RET(write(k.lis, "pong!", 5), 5);
	CHECK_RET(read_n(k.cli, buf, 5), 5);
	CHECK_MEM(buf, "pong!", 5);
	/* more than the queues hold: the writer blocks until read */
	for (size_t i = 0; i < BIG; i++)
		big[i] = (unsigned char)(i * 7 + i / 251);
	w.fd = k.cli;
	w.b = big;
	w.rc = -2;
	REQUIRE(pthread_create(&th, NULL, writer_main, &w) == 0);
	CHECK_RET(read_n(k.lis, in, BIG), BIG);
	pthread_join(th, NULL);
	CHECK_EQ(w.rc, BIG);
	CHECK_MEM(in, big, BIG);
	/* zero-length writes carry nothing */
	CHECK_RET(ioctl(k.cli, I_SWROPT, SNDZERO), 0);
	CHECK_RET(write(k.cli, "", 0), 0);
	CHECK(quiet(k.lis));
	/* close of one end while connected disconnects the other */
	CHECK_RET(close(k.cli), 0);
	{
		struct pollfd p = { k.lis, POLLIN, 0 };
		CHECK_RET(poll(&p, 1, WAIT_MS), 1);
		CHECK(p.revents & POLLHUP);
	}
	CHECK_RET(read(k.lis, buf, sizeof(buf)), 0);
	CHECK_ERR(write(k.lis, "x", 1), ENXIO);
	CHECK_RET(close(k.lis), 0);
out:
	free(big);
	free(in);
}

/* The caller stays on TPI (timod); the listener reads with tirdwr. */
static void test_ordrel(void)
{
	struct conn k;
	struct T_ordrel_req orq = { T_ORDREL_REQ };
	unsigned char buf[BUFSZ];
	struct got g;

	if (!connect_pair(&k, "rdwr-ordrel"))
		return;
	to_rdwr(k.lis);
	CHECK_RET(write(k.cli, "tail", 4), 4);
	CHECK_RET(put_ctl(k.cli, &orq, sizeof(orq), 0), 0);
	CHECK_RET(read_n(k.lis, buf, 4), 4);
	CHECK_MEM(buf, "tail", 4);
	CHECK_RET(read(k.lis, buf, sizeof(buf)), 0);		/* EOF */
	/* half closed: the listener may still send */
	CHECK_RET(write(k.lis, "late", 4), 4);
	if (expect(k.cli, &g, T_DATA_IND)) {
		CHECK_EQ(g.datlen, 4);
		CHECK_MEM(g.dat, "late", 4);
	}
	/* close completes the release: the caller sees T_ORDREL_IND */
	CHECK_RET(close(k.lis), 0);
	expect(k.cli, &g, T_ORDREL_IND);
	CHECK(quiet(k.cli));
	CHECK_RET(close(k.cli), 0);
}

static void test_discon(void)
{
	struct conn k;
	struct T_discon_req dr = { T_DISCON_REQ, -1 };
	unsigned char buf[BUFSZ];
	struct got g;

	/* the peer disconnects: hangup, ENXIO, nothing sent on close */
	if (!connect_pair(&k, "rdwr-discon"))
		return;
	to_rdwr(k.lis);
	CHECK_RET(write(k.cli, "last words", 10), 10);
	CHECK_RET(read_n(k.lis, buf, 10), 10);
	CHECK_RET(put_ctl(k.cli, &dr, sizeof(dr), 0), 0);
	expect(k.cli, &g, T_OK_ACK);
	CHECK_EQ(g.c.p.ok_ack.CORRECT_prim, T_DISCON_REQ);
	{
		struct pollfd p = { k.lis, POLLIN, 0 };
		CHECK_RET(poll(&p, 1, WAIT_MS), 1);
		CHECK(p.revents & POLLHUP);
	}
	CHECK_RET(read(k.lis, buf, sizeof(buf)), 0);
	CHECK_ERR(write(k.lis, "x", 1), ENXIO);
	CHECK_RET(close(k.lis), 0);
	CHECK(quiet(k.cli));
	CHECK_RET(close(k.cli), 0);

	/* popping tirdwr while connected disconnects: the peer gets
	 * T_DISCON_IND, the user the provider's T_OK_ACK of T_DISCON_REQ */
	if (!connect_pair(&k, "rdwr-pop"))
		return;
	to_rdwr(k.lis);
	CHECK_RET(ioctl(k.lis, I_POP, 0), 0);
	expect(k.cli, &g, T_DISCON_IND);
	expect(k.lis, &g, T_OK_ACK);
	CHECK_EQ(g.c.p.ok_ack.CORRECT_prim, T_DISCON_REQ);
	CHECK_RET(close(k.lis), 0);
	CHECK_RET(close(k.cli), 0);
}

int main(void)
{
	int fd = open(DEV, O_RDWR);

	signal(SIGPIPE, SIG_IGN);
	REQUIRE(fd >= 0);
	close(fd);
	th_mark();
	test_data();
	test_ordrel();
	test_discon();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
