/*
 * test_xti_look -- t_look and TLOOK.  Every event t_look reports
 * (T_LISTEN, T_CONNECT, T_DATA, T_EXDATA, T_DISCONNECT, T_UDERR,
 * T_ORDREL, T_GODATA, T_GOEXDATA; 0 for none) from a message at the
 * stream head, left there; and, for each state where an event can
 * arrive, every function that XNS 5.2 makes fail TLOOK on it ("Events
 * and TLOOK error indication"): the call fails TLOOK, t_look() tells the
 * event, the state does not change and nothing goes to the provider,
 * whether the message is still at the head or was taken and held by an
 * earlier call.
 */
#include "ferry.h"

enum { C_CONNECT, C_UNBIND, C_SNDUDATA, C_SNDVUDATA, C_RCVUDATA,
       C_RCVVUDATA, C_RCVCONNECT, C_SNDDIS, C_ACCEPT, C_LISTEN, C_SND,
       C_SNDV, C_RCV, C_RCVV, C_SNDREL, C_SNDRELDATA, C_RCVREL,
       C_RCVRELDATA };

static const char *const cname[] = {
	"t_connect", "t_unbind", "t_sndudata", "t_sndvudata", "t_rcvudata",
	"t_rcvvudata", "t_rcvconnect", "t_snddis", "t_accept", "t_listen",
	"t_snd", "t_sndv", "t_rcv", "t_rcvv", "t_sndrel", "t_sndreldata",
	"t_rcvrel", "t_rcvreldata",
};

static int call(int c, int fd, int seq)
{
	char buf[16] = "data", ab[16];
	struct t_iovec iov = { buf, 4 };
	struct t_call tc;
	struct t_unitdata ud;
	struct t_discon d;
	int flags;

	memset(&tc, 0, sizeof(tc));
	tc.addr.buf = ab;
	tc.addr.maxlen = sizeof(ab);
	tc.addr.len = 2;
	tc.sequence = seq;
	memset(&ud, 0, sizeof(ud));
	ud.addr = tc.addr;
	ud.udata.buf = buf;
	ud.udata.len = 4;
	ud.udata.maxlen = sizeof(buf);
	memset(&d, 0, sizeof(d));
	switch (c) {
	case C_CONNECT: return t_connect(fd, &tc, NULL);
	case C_UNBIND: return t_unbind(fd);
	case C_SNDUDATA: return t_sndudata(fd, &ud);
	case C_SNDVUDATA: return t_sndvudata(fd, &ud, &iov, 1);
	case C_RCVUDATA: return t_rcvudata(fd, &ud, &flags);
	case C_RCVVUDATA: return t_rcvvudata(fd, &ud, &iov, 1, &flags);
	case C_RCVCONNECT: return t_rcvconnect(fd, NULL);
	case C_SNDDIS: return t_snddis(fd, &tc);
	case C_ACCEPT: return t_accept(fd, fd, &tc);
	case C_LISTEN: return t_listen(fd, &tc);
	case C_SND: return t_snd(fd, buf, 4, 0);
	case C_SNDV: return t_sndv(fd, &iov, 1, 0);
	case C_RCV: return t_rcv(fd, buf, sizeof(buf), &flags);
	case C_RCVV: return t_rcvv(fd, &iov, 1, &flags);
	case C_SNDREL: return t_sndrel(fd);
	case C_SNDRELDATA: return t_sndreldata(fd, &d);
	case C_RCVREL: return t_rcvrel(fd);
	case C_RCVRELDATA: return t_rcvreldata(fd, &d);
	}
	return 0;
}

#define END	(-1)

static const struct look_case {
	int serv, ts, state;
	unsigned qlen;		/* bind with this qlen first */
	int listens;		/* connection indications taken first */
	int event;
	int calls[12];
} cases[] = {
	{ T_COTS, TS_UNBND, T_IDLE, 1, 0, T_LISTEN,
	  { C_CONNECT, C_UNBIND, END } },
	{ T_CLTS, TS_IDLE, T_IDLE, 0, 0, T_DATA, { C_UNBIND, END } },
	{ T_CLTS, TS_IDLE, T_IDLE, 0, 0, T_UDERR,
	  { C_SNDUDATA, C_SNDVUDATA, C_RCVUDATA, C_RCVVUDATA, END } },
	{ T_COTS, TS_WCON_CREQ, T_OUTCON, 0, 0, T_DISCONNECT,
	  { C_RCVCONNECT, C_SNDDIS, END } },
	{ T_COTS, TS_UNBND, T_INCON, 2, 1, T_LISTEN, { C_ACCEPT, END } },
	{ T_COTS, TS_UNBND, T_INCON, 2, 1, T_DISCONNECT,
	  { C_ACCEPT, C_SNDDIS, C_LISTEN, END } },
	{ T_COTS_ORD, TS_DATA_XFER, T_DATAXFER, 0, 0, T_DISCONNECT,
	  { C_SND, C_SNDV, C_SNDREL, C_SNDRELDATA, C_RCVREL, C_RCVRELDATA,
	    C_SNDDIS, C_RCV, C_RCVV, END } },
	{ T_COTS_ORD, TS_DATA_XFER, T_DATAXFER, 0, 0, T_ORDREL,
	  { C_RCV, C_RCVV, END } },
	{ T_COTS_ORD, TS_WIND_ORDREL, T_OUTREL, 0, 0, T_DISCONNECT,
	  { C_RCVREL, C_RCVRELDATA, C_SNDDIS, C_RCV, C_RCVV, END } },
	{ T_COTS_ORD, TS_WIND_ORDREL, T_OUTREL, 0, 0, T_ORDREL,
	  { C_RCV, C_RCVV, END } },
	{ T_COTS_ORD, TS_WREQ_ORDREL, T_INREL, 0, 0, T_DISCONNECT,
	  { C_SND, C_SNDV, C_SNDREL, C_SNDRELDATA, C_SNDDIS, END } },
};

/* the message that makes event ev */
static struct fmsg *event_msg(struct fmsg *m, int ev, int seq)
{
	switch (ev) {
	case T_LISTEN:
		return fm_conn_ind(m, "who", 3, NULL, 0, seq + 1);
	case T_DATA:
		return fm_data(fm_unitdata_ind(m, "who", 3, NULL, 0), "d", 1);
	case T_UDERR:
		return fm_uderror_ind(m, "who", 3, NULL, 0, 1);
	case T_DISCONNECT:
		return fm_discon_ind(m, 1, seq);
	case T_ORDREL:
		return fm_ordrel_ind(m);
	}
	return NULL;
}

static void test_tlook(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct look_case *lc = &cases[i];
		struct ferry *f = ferry_ep(lc->serv, lc->ts);
		struct fmsg w, a, m;
		int seq = 40;

		if (lc->qlen > 0) {
			struct t_bind b = { { 0, 0, NULL }, lc->qlen };
			ferry_expect(f, __LINE__, fm_bind_req(&w, NULL, 0,
							     lc->qlen),
				     fm_bind_ack(&a, "L", 1, lc->qlen));
			CHECK_RET(t_bind(f->xfd, &b, NULL), 0);
			ferry_sync(f);
		}
		for (int k = 0; k < lc->listens; k++) {
			struct t_call c;
			memset(&c, 0, sizeof(c));
			ferry_put(f, fm_conn_ind(&m, "c", 1, NULL, 0, seq));
			CHECK_RET(t_listen(f->xfd, &c), 0);
			CHECK_EQ(c.sequence, seq);
		}
		CHECK_STATE(f->xfd, lc->state);
		CHECK_RET(t_look(f->xfd), 0);
		ferry_put(f, event_msg(&m, lc->event, seq));
		CHECK_RET(t_look(f->xfd), lc->event);
		for (int k = 0; lc->calls[k] != END; k++) {
			int r, te;

			t_errno = 0;
			r = call(lc->calls[k], f->xfd, seq);
			te = t_errno;
			t_checked++;
			if (r != -1 || te != TLOOK) {
				t_failed++;
				fprintf(stderr, "FAIL: case %zu: %s gave %d "
					"t_errno %d, want TLOOK\n", i,
					cname[lc->calls[k]], r, te);
			}
			CHECK_RET(t_look(f->xfd), lc->event);
			CHECK_STATE(f->xfd, lc->state);
		}
		FERRY_NOTHING(f);
		ferry_free(f);
	}
}

static void test_events(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_WCON_CREQ);
	struct fmsg m;
	char buf[8];
	int flags;

	CHECK_RET(t_look(f->xfd), 0);
	ferry_put(f, fm_conn_con(&m, "r", 1, NULL, 0));
	CHECK_RET(t_look(f->xfd), T_CONNECT);
	CHECK_RET(t_look(f->xfd), T_CONNECT);		/* left there */
	CHECK_RET(t_rcvconnect(f->xfd, NULL), 0);
	CHECK_RET(t_look(f->xfd), 0);
	ferry_put(f, fm_data(fm_data_ind(&m, 0), "n", 1));
	CHECK_RET(t_look(f->xfd), T_DATA);
	ferry_put(f, fm_data(fm_exdata_ind(&m, 0), "x", 1));
	CHECK_RET(t_look(f->xfd), T_EXDATA);		/* ahead: band 1 */
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 1);
	CHECK_EQ(flags, T_EXPEDITED);
	CHECK_RET(t_look(f->xfd), T_DATA);
	CHECK_RET(t_rcv(f->xfd, buf, sizeof(buf), &flags), 1);
	CHECK_RET(t_look(f->xfd), 0);
	CHECK_TERR(t_look(-1), TBADF);
	CHECK_TERR(t_look(f->pfd), TBADF);
	ferry_free(f);
}

int main(void)
{
	test_tlook();
	test_events();
	T_DONE();
}
