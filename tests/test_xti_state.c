/*
 * test_xti_state -- the XTI state table, as XNS 5.2 draws it: every
 * state-dependent function called in every state where the table has no
 * box for it fails TOUTSTATE, changes nothing and sends nothing to the
 * provider; a function of the wrong service type fails TNOTSUPPORT
 * whatever the state (connection-mode calls on T_CLTS, connectionless
 * ones on T_COTS/T_COTS_ORD, orderly release on T_COTS).  Each endpoint
 * is put in its state by t_sync() from the provider's TPI state (the
 * mapping of TI_SYNC: TS_UNBND, TS_IDLE, TS_WCON_CREQ, TS_WRES_CIND,
 * TS_DATA_XFER, TS_WIND_ORDREL, TS_WREQ_ORDREL).  The table of allowed
 * states below is written from the standard, independently of the
 * library's.  The state-independent calls (t_look, t_getstate,
 * t_getinfo, t_getprotaddr, t_alloc, t_sync, t_close) work in every
 * state.
 */
#include "ferry.h"

enum { F_BIND, F_UNBIND, F_OPTMGMT, F_CONNECT, F_RCVCONNECT, F_LISTEN,
       F_ACCEPT, F_SND, F_SNDV, F_RCV, F_RCVV, F_SNDDIS, F_RCVDIS,
       F_SNDREL, F_SNDRELDATA, F_RCVREL, F_RCVRELDATA, F_SNDUDATA,
       F_SNDVUDATA, F_RCVUDATA, F_RCVVUDATA, F_RCVUDERR, F_N };

#define B(s)	(1u << (s))
#define CONN	1	/* connection mode only */
#define CL	2	/* connectionless only */
#define ORD	3	/* T_COTS_ORD only */

static const struct {
	const char *name;
	unsigned allowed;	/* XTI states (T_UNBND..T_INREL) */
	int serv;
} fn[F_N] = {
	[F_BIND] = { "t_bind", B(T_UNBND), 0 },
	[F_UNBIND] = { "t_unbind", B(T_IDLE), 0 },
	[F_OPTMGMT] = { "t_optmgmt", B(T_UNBND) | B(T_IDLE) | B(T_OUTCON) |
			B(T_INCON) | B(T_DATAXFER) | B(T_OUTREL) |
			B(T_INREL), 0 },
	[F_CONNECT] = { "t_connect", B(T_IDLE), CONN },
	[F_RCVCONNECT] = { "t_rcvconnect", B(T_OUTCON), CONN },
	[F_LISTEN] = { "t_listen", B(T_IDLE) | B(T_INCON), CONN },
	[F_ACCEPT] = { "t_accept", B(T_INCON), CONN },
	[F_SND] = { "t_snd", B(T_DATAXFER) | B(T_INREL), CONN },
	[F_SNDV] = { "t_sndv", B(T_DATAXFER) | B(T_INREL), CONN },
	[F_RCV] = { "t_rcv", B(T_DATAXFER) | B(T_OUTREL), CONN },
	[F_RCVV] = { "t_rcvv", B(T_DATAXFER) | B(T_OUTREL), CONN },
	[F_SNDDIS] = { "t_snddis", B(T_OUTCON) | B(T_INCON) | B(T_DATAXFER) |
		       B(T_OUTREL) | B(T_INREL), CONN },
	[F_RCVDIS] = { "t_rcvdis", B(T_OUTCON) | B(T_INCON) | B(T_DATAXFER) |
		       B(T_OUTREL) | B(T_INREL), CONN },
	[F_SNDREL] = { "t_sndrel", B(T_DATAXFER) | B(T_INREL), ORD },
	[F_SNDRELDATA] = { "t_sndreldata", B(T_DATAXFER) | B(T_INREL), ORD },
	[F_RCVREL] = { "t_rcvrel", B(T_DATAXFER) | B(T_OUTREL), ORD },
	[F_RCVRELDATA] = { "t_rcvreldata", B(T_DATAXFER) | B(T_OUTREL), ORD },
	[F_SNDUDATA] = { "t_sndudata", B(T_IDLE), CL },
	[F_SNDVUDATA] = { "t_sndvudata", B(T_IDLE), CL },
	[F_RCVUDATA] = { "t_rcvudata", B(T_IDLE), CL },
	[F_RCVVUDATA] = { "t_rcvvudata", B(T_IDLE), CL },
	[F_RCVUDERR] = { "t_rcvuderr", B(T_IDLE), CL },
};

static int call(int f, int fd)
{
	char buf[16] = "data", abuf[16] = "addr";
	struct t_iovec iov[1] = { { buf, 4 } };
	struct t_call c;
	struct t_discon d;
	struct t_unitdata ud;
	struct t_uderr ue;
	struct t_optmgmt om;
	int flags;

	memset(&c, 0, sizeof(c));
	c.addr.buf = abuf;
	c.addr.len = 4;
	c.addr.maxlen = sizeof(abuf);
	c.sequence = 1;
	memset(&d, 0, sizeof(d));
	memset(&ud, 0, sizeof(ud));
	ud.addr = c.addr;
	ud.udata.buf = buf;
	ud.udata.len = 4;
	ud.udata.maxlen = sizeof(buf);
	memset(&ue, 0, sizeof(ue));
	memset(&om, 0, sizeof(om));
	om.flags = T_CURRENT;
	switch (f) {
	case F_BIND: return t_bind(fd, NULL, NULL);
	case F_UNBIND: return t_unbind(fd);
	case F_OPTMGMT: return t_optmgmt(fd, &om, &om);
	case F_CONNECT: return t_connect(fd, &c, NULL);
	case F_RCVCONNECT: return t_rcvconnect(fd, NULL);
	case F_LISTEN: return t_listen(fd, &c);
	case F_ACCEPT: return t_accept(fd, fd, &c);
	case F_SND: return t_snd(fd, buf, 4, 0);
	case F_SNDV: return t_sndv(fd, iov, 1, 0);
	case F_RCV: return t_rcv(fd, buf, sizeof(buf), &flags);
	case F_RCVV: return t_rcvv(fd, iov, 1, &flags);
	case F_SNDDIS: return t_snddis(fd, &c);
	case F_RCVDIS: return t_rcvdis(fd, &d);
	case F_SNDREL: return t_sndrel(fd);
	case F_SNDRELDATA: return t_sndreldata(fd, &d);
	case F_RCVREL: return t_rcvrel(fd);
	case F_RCVRELDATA: return t_rcvreldata(fd, &d);
	case F_SNDUDATA: return t_sndudata(fd, &ud);
	case F_SNDVUDATA: return t_sndvudata(fd, &ud, iov, 1);
	case F_RCVUDATA: return t_rcvudata(fd, &ud, &flags);
	case F_RCVVUDATA: return t_rcvvudata(fd, &ud, iov, 1, &flags);
	case F_RCVUDERR: return t_rcvuderr(fd, &ue);
	}
	return 0;
}

static bool serv_fits(int need, int serv)
{
	switch (need) {
	case CONN:
		return serv != T_CLTS;
	case CL:
		return serv == T_CLTS;
	case ORD:
		return serv == T_COTS_ORD;
	default:
		return true;
	}
}

static const int tpi_of[] = {
	[T_UNBND] = TS_UNBND, [T_IDLE] = TS_IDLE, [T_OUTCON] = TS_WCON_CREQ,
	[T_INCON] = TS_WRES_CIND, [T_DATAXFER] = TS_DATA_XFER,
	[T_OUTREL] = TS_WIND_ORDREL, [T_INREL] = TS_WREQ_ORDREL,
};

static void test_table(int serv)
{
	int last = serv == T_CLTS ? T_IDLE : T_INREL;

	for (int st = T_UNBND; st <= last; st++) {
		struct ferry *f = ferry_ep(serv, tpi_of[st]);
		int touts = 0, tns = 0;

		CHECK_STATE(f->xfd, st);
		for (int i = 0; i < F_N; i++) {
			int want = 0, r, te;

			if (!serv_fits(fn[i].serv, serv))
				want = TNOTSUPPORT;
			else if (!(fn[i].allowed & B(st)))
				want = TOUTSTATE;
			if (want == 0)
				continue;	/* allowed: elsewhere */
			t_errno = 0;
			r = call(i, f->xfd);
			te = t_errno;
			t_checked++;
			if (r != -1 || te != want) {
				t_failed++;
				fprintf(stderr, "FAIL: serv %d state %d: %s "
					"gave %d t_errno %d, want %d\n", serv,
					st, fn[i].name, r, te, want);
			}
			touts += want == TOUTSTATE;
			tns += want == TNOTSUPPORT;
			CHECK_STATE(f->xfd, st);
		}
		FERRY_NOTHING(f);
		/* every state has calls it forbids */
		CHECK(touts + tns > 0);
		/* state-independent calls */
		struct t_info ti;
		CHECK_RET(t_look(f->xfd), 0);
		void *ip = t_alloc(f->xfd, T_INFO, T_ALL);
		CHECK(ip != NULL);
		CHECK_RET(t_free(ip, T_INFO), 0);
		struct fmsg w, a;
		struct T_info_ack ia = fi_info(serv, tpi_of[st]);
		ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
		CHECK_RET(t_getinfo(f->xfd, &ti), 0);
		ferry_sync(f);
		CHECK_EQ(ti.servtype, serv);
		CHECK_RET(ferry_sync_ep(f, &ia), st);
		CHECK_STATE(f->xfd, st);
		CHECK_RET(t_close(f->xfd), 0);
		f->xfd = dup(f->pfd);	/* (ferry_free closes it) */
		ferry_free(f);
	}
}

/* Every function on descriptors that are not endpoints: TBADF. */
static void test_badf(void)
{
	int p[2], fd = bad_fd();
	struct t_info ti;
	struct t_bind b;

	open_pipe(p);			/* streams, no timod, no endpoint */
	for (int i = 0; i < F_N; i++) {
		int fds[3] = { p[0], fd, -1 };
		for (int k = 0; k < 3; k++) {
			int r, te;
			t_errno = 0;
			r = call(i, fds[k]);
			te = t_errno;
			t_checked++;
			if (r != -1 || te != TBADF) {
				t_failed++;
				fprintf(stderr, "FAIL: %s(%d) gave %d t_errno "
					"%d, want TBADF\n", fn[i].name,
					fds[k], r, te);
			}
		}
	}
	memset(&b, 0, sizeof(b));
	CHECK_TERR(t_getinfo(p[0], &ti), TBADF);
	CHECK_TERR(t_getprotaddr(p[0], &b, &b), TBADF);
	CHECK_TERR(t_getstate(p[0]), TBADF);
	CHECK_TERR(t_look(p[0]), TBADF);
	CHECK_TERR(t_close(p[0]), TBADF);
	CHECK_TERR(t_sync(p[0]), TBADF);
	CHECK_TERR(t_getinfo(fd, &ti), TBADF);
	CHECK_TERR(t_close(fd), TBADF);
	CHECK(t_alloc(p[0], T_CALL, T_ALL) == NULL);
	CHECK_EQ(t_errno, TBADF);
	CHECK_RET(isastream(p[0]), 1);		/* t_close did not close it */
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	void *p;

	test_badf();

	test_table(T_COTS);
	test_table(T_COTS_ORD);
	test_table(T_CLTS);
	p = t_alloc(-1, T_INFO, 0);
	CHECK(p != NULL);
	CHECK_RET(t_free(p, T_INFO), 0);
	T_DONE();
}
