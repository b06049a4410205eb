/*
 * test_xti_open -- making and unmaking endpoints: t_open, t_close,
 * t_sync, t_getinfo, t_getstate, and endpoints as real descriptors.
 *
 * t_open of a STREAMS pipe end given a name with fattach(): timod pushed
 * (or found already there: I_FIND), T_INFO_REQ answered, the T_info_ack
 * returned as struct t_info (T_SENDZERO and T_ORDRELDATA from the
 * PROVIDER_flag), state T_UNBND; a stream already bound takes its state
 * from TI_SYNC; O_NONBLOCK gives an asynchronous endpoint; TBADFLAG,
 * TBADNAME (no such name, not a stream), provider errors.
 *
 * t_sync: the XTI state from the provider's (TI_SYNC), including the
 * races settled by the first message at the head; TSTATECHNG while the
 * provider waits for an ack; TBADF for a descriptor that is not a stream
 * or has no timod.  A dup() is not an endpoint until t_sync.  close() on
 * an endpoint forgets it: a new stream given the same number is not one
 * (TBADF) until t_sync makes it one; the same after dup2() over it.
 * t_close: the descriptor is closed.  t_getinfo asks the provider again.
 */
#include "ferry.h"

static char path[64];

static void mkpath(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/xti-open-%d", (int)getpid());
	fd = open(path, O_CREAT | O_RDWR, 0600);
	REQUIRE(fd >= 0);
	close(fd);
}

static void test_open(void)
{
	int p[2], fd;
	struct ferry *f;
	struct fmsg w, a;
	struct T_info_ack ia = fi_info(T_COTS_ORD, TS_UNBND);
	struct t_info ti;

	open_pipe(p);
	f = ferry_start(p[0], p[1], false);	/* no timod yet */
	REQUIRE(fattach(p[0], path) == 0);
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	memset(&ti, 0x55, sizeof(ti));
	fd = t_open(path, O_RDWR, &ti);
	ferry_sync(f);
	CHECK(fd >= 0 && fd != p[0]);
	CHECK_RET(ioctl(p[0], I_FIND, "timod"), 1);	/* pushed */
	CHECK_EQ(ti.addr, 32);
	CHECK_EQ(ti.options, 128);
	CHECK_EQ(ti.tsdu, 4096);
	CHECK_EQ(ti.etsdu, 64);
	CHECK_EQ(ti.connect, 64);
	CHECK_EQ(ti.discon, 32);
	CHECK_EQ(ti.servtype, T_COTS_ORD);
	CHECK_EQ(ti.flags, T_SENDZERO | T_ORDRELDATA);
	CHECK_STATE(fd, T_UNBND);
	CHECK_RET(isastream(fd), 1);
	/* t_getinfo asks again */
	ia.TSDU_size = 100;
	ia.PROVIDER_flag = 0;
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	CHECK_RET(t_getinfo(fd, &ti), 0);
	ferry_sync(f);
	CHECK_EQ(ti.tsdu, 100);
	CHECK_EQ(ti.flags, 0);
	ferry_expect(f, __LINE__, fm_info_req(&w),
		     fm_error_ack(&a, T_INFO_REQ, TSYSERR, EIO));
	CHECK_TSYS(t_getinfo(fd, &ti), EIO);
	ferry_sync(f);
	CHECK_TSYS(t_getinfo(fd, NULL), EFAULT);
	/* t_close: no longer an endpoint, the descriptor closed */
	CHECK_RET(t_close(fd), 0);
	CHECK_TERR(t_getstate(fd), TBADF);
	CHECK_ERR(fcntl(fd, F_GETFD), EBADF);
	CHECK_TERR(t_close(fd), TBADF);

	/* timod there already; asynchronous; a NULL info */
	ia = fi_info(T_CLTS, TS_UNBND);
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	fd = t_open(path, O_RDWR | O_NONBLOCK, NULL);
	ferry_sync(f);
	CHECK(fd >= 0);
	CHECK_RET(ioctl(fd, I_LIST, NULL), 1);		/* timod only once */
	CHECK_STATE(fd, T_UNBND);
	struct t_unitdata ud;
	int flags;
	memset(&ud, 0, sizeof(ud));
	/* (unbound: TOUTSTATE first; bind it through the provider) */
	ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0, 0),
		     fm_bind_ack(&a, "u", 1, 0));
	CHECK_RET(t_bind(fd, NULL, NULL), 0);
	ferry_sync(f);
	CHECK_TERR(t_rcvudata(fd, &ud, &flags), TNODATA);
	CHECK_RET(t_close(fd), 0);

	/* a provider already bound: the state from TI_SYNC */
	ia = fi_info(T_COTS, TS_IDLE);
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	fd = t_open(path, O_RDWR, NULL);
	ferry_sync(f);
	CHECK_STATE(fd, T_IDLE);
	CHECK_RET(t_close(fd), 0);
	/* the provider refuses */
	ferry_expect(f, __LINE__, fm_info_req(&w),
		     fm_error_ack(&a, T_INFO_REQ, TSYSERR, ENOMEM));
	CHECK_TSYS(t_open(path, O_RDWR, NULL), ENOMEM);
	ferry_sync(f);

	CHECK_RET(fdetach(path), 0);
	ferry_free(f);
}

static void test_open_errors(void)
{
	struct t_info ti;

	CHECK_TERR(t_open(path, O_RDONLY, &ti), TBADFLAG);
	CHECK_TERR(t_open(path, O_WRONLY, &ti), TBADFLAG);
	CHECK_TERR(t_open(path, O_RDWR | O_APPEND, &ti), TBADFLAG);
	CHECK_TERR(t_open(NULL, O_RDWR, &ti), TBADNAME);
	CHECK_TERR(t_open("/nonexistent/xti/device", O_RDWR, &ti), TBADNAME);
	CHECK_TERR(t_open(path, O_RDWR, &ti), TBADNAME);	/* a file */
}

static void test_sync(void)
{
	static const struct { int ts; int st; } map[] = {
		{ TS_UNBND, T_UNBND }, { TS_IDLE, T_IDLE },
		{ TS_WCON_CREQ, T_OUTCON }, { TS_WRES_CIND, T_INCON },
		{ TS_DATA_XFER, T_DATAXFER }, { TS_WIND_ORDREL, T_OUTREL },
		{ TS_WREQ_ORDREL, T_INREL },
	};
	static const int changing[] = { TS_WACK_BREQ, TS_WACK_UREQ,
		TS_WACK_OPTREQ, TS_WACK_CREQ, TS_WACK_CRES, TS_WACK_DREQ6,
		TS_WACK_DREQ7, TS_WACK_DREQ9, TS_WACK_DREQ10, TS_WACK_DREQ11 };
	struct ferry *f = ferry_new();
	struct T_info_ack ia;
	struct fmsg m;

	CHECK_TERR(t_getstate(f->xfd), TBADF);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		ia = fi_info(T_COTS_ORD, map[i].ts);
		CHECK_RET(ferry_sync_ep(f, &ia), map[i].st);
		CHECK_STATE(f->xfd, map[i].st);
	}
	for (size_t i = 0; i < sizeof(changing) / sizeof(int); i++) {
		ia = fi_info(T_COTS, changing[i]);
		CHECK_TERR(ferry_sync_ep(f, &ia), TSTATECHNG);
	}
	/* the races: what the user has not read yet decides */
	ferry_free(f);
	f = ferry_new();
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "x", 1));
	ia = fi_info(T_COTS, TS_IDLE);
	CHECK_RET(ferry_sync_ep(f, &ia), T_DATAXFER);
	ferry_free(f);
	f = ferry_new();
	ferry_put(f, fm_discon_ind(&m, 1, -1));
	CHECK_RET(ferry_sync_ep(f, &ia), T_DATAXFER);
	CHECK_RET(t_rcvdis(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
	f = ferry_new();
	ferry_put(f, fm_conn_con(&m, "r", 1, NULL, 0));
	ia = fi_info(T_COTS, TS_DATA_XFER);
	CHECK_RET(ferry_sync_ep(f, &ia), T_OUTCON);
	CHECK_RET(t_rcvconnect(f->xfd, NULL), 0);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_free(f);
	f = ferry_new();
	ferry_put(f, fm_ordrel_ind(&m));
	ia = fi_info(T_COTS_ORD, TS_WREQ_ORDREL);
	CHECK_RET(ferry_sync_ep(f, &ia), T_DATAXFER);
	CHECK_RET(t_rcvrel(f->xfd), 0);
	CHECK_STATE(f->xfd, T_INREL);
	ferry_free(f);

	/* not endpoints */
	int p[2], fd;
	open_pipe(p);
	CHECK_TERR(t_sync(p[0]), TBADF);		/* no timod */
	fd = open(path, O_RDWR);
	CHECK_TERR(t_sync(fd), TBADF);		/* not a stream */
	close(fd);
	CHECK_TERR(t_sync(fd), TBADF);		/* closed */
	CHECK_TERR(t_sync(-1), TBADF);
	CHECK_TERR(t_getstate(-1), TBADF);
	close(p[0]);
	close(p[1]);
}

static void test_descriptors(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_IDLE);
	struct T_info_ack ia = fi_info(T_COTS, TS_IDLE);
	int d, old = f->xfd, p[2];

	/* a dup is not an endpoint until t_sync */
	d = dup(f->xfd);
	CHECK(d >= 0);
	CHECK_TERR(t_getstate(d), TBADF);
	struct fmsg w, a;
	ferry_expect(f, __LINE__, fm_info_req(&w), fm_info_ack(&a, &ia));
	CHECK_RET(t_sync(d), T_IDLE);
	ferry_sync(f);
	CHECK_STATE(d, T_IDLE);
	CHECK_STATE(f->xfd, T_IDLE);
	/* dup2 over the original: forgotten */
	CHECK_RET(dup2(d, old), old);
	CHECK_TERR(t_getstate(old), TBADF);
	CHECK_STATE(d, T_IDLE);
	/* close(): forgotten; a new stream on the same number is not an
	 * endpoint */
	open_pipe(p);
	CHECK_RET(close(old), 0);
	CHECK_RET(close(d), 0);
	CHECK_TERR(t_getstate(d), TBADF);
	CHECK_RET(fcntl(p[0], F_DUPFD, old), old);	/* the lowest free */
	CHECK_RET(isastream(old), 1);
	CHECK_TERR(t_getstate(old), TBADF);
	CHECK_TERR(t_look(old), TBADF);
	CHECK_TERR(t_snd(old, "x", 1, 0), TBADF);
	close(old);
	close(p[0]);
	close(p[1]);
	/* an endpoint again on a reused number, from its own provider */
	struct ferry *g = ferry_new();
	ia = fi_info(T_CLTS, TS_UNBND);
	CHECK_RET(ferry_sync_ep(g, &ia), T_UNBND);
	CHECK_STATE(g->xfd, T_UNBND);
	f->xfd = dup(f->pfd);		/* (ferry_free closes it) */
	ferry_free(f);
	ferry_free(g);
}

int main(void)
{
	mkpath();
	test_open();
	test_open_errors();
	test_sync();
	test_descriptors();
	unlink(path);
	T_DONE();
}
