/*
 * test_timod_flow -- what timod does besides answering ioctls, on a
 * STREAMS pipe whose other end plays the provider: unrelated messages
 * pass untouched and in order both ways while an ioctl is outstanding
 * (data, TPI messages, acks that answer something else); M_FLUSH passes
 * both ways and leaves an outstanding ioctl alone; the late answer to an
 * ioctl the head gave up on (ETIME with ic_timout, or EINTR) is dropped,
 * never passed up: when nothing replaced it, when a newer ioctl did (one
 * or several, of another kind or the same kind), when an older one is
 * never answered at all; after that such messages pass again; a memory
 * shortage answers ENOMEM with nothing sent down; closing with ioctls
 * outstanding leaks nothing.
 */
#include "sth.h"

#include <sys/timod.h>

#define BUFSZ	256

static const struct T_info_ack the_info = {
	T_INFO_ACK, 1024, 16, -2, -2, 8, 128, 1024, T_COTS, TS_IDLE, 0
};

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

/* One message read with getmsg. */
struct got {
	int rc, flags;
	unsigned char ctl[BUFSZ], dat[BUFSZ];
	int ctllen, datlen;
};

static void get1(int fd, struct got *g)
{
	struct strbuf c = { sizeof(g->ctl), 0, (char *)g->ctl };
	struct strbuf d = { sizeof(g->dat), 0, (char *)g->dat };

	memset(g, 0, sizeof(*g));
	g->rc = getmsg(fd, &c, &d, &g->flags);
	g->ctllen = c.len;
	g->datlen = d.len;
}

static int put1(int fd, const void *ctl, int ctllen, const char *dat,
		int hi)
{
	struct strbuf c = { 0, ctllen, (char *)ctl };
	struct strbuf d = { 0, dat ? (int)strlen(dat) : 0, (char *)dat };

	return putmsg(fd, ctl ? &c : NULL, dat ? &d : NULL, hi ? RS_HIPRI : 0);
}

#define CHECK_GOT(g, hi, c, clen, d, dlen) do {				\
	CHECK_EQ((g)->rc, 0);						\
	CHECK_EQ((g)->flags, (hi) ? RS_HIPRI : 0);			\
	CHECK_EQ((g)->ctllen, (clen));					\
	CHECK_EQ((g)->datlen, (dlen));					\
	if ((clen) > 0)							\
		CHECK_MEM((g)->ctl, (c), (size_t)(clen));		\
	if ((dlen) > 0)							\
		CHECK_MEM((g)->dat, (d), (size_t)(dlen));		\
} while (0)

/* ---- unrelated traffic while TI_BIND is outstanding ---- */

struct bindmsg {
	struct T_bind_req r;
	char addr[4];
};

struct order {
	int fds[2];
	struct got req, down1, down2;
	int rc[8];
};

static const struct T_data_req dreq = { T_DATA_REQ, 0 };
static const struct T_data_ind dind = { T_DATA_IND, 0 };
static const struct T_error_ack other_err = { T_ERROR_ACK, T_CONN_REQ,
					      TOUTSTATE, 0 };
static const struct T_ok_ack other_ok = { T_OK_ACK, T_CONN_REQ };
static const struct T_ok_ack unbind_ok = { T_OK_ACK, T_UNBIND_REQ };
static const struct bindmsg bind_ack = {
	{ T_BIND_ACK, 4, sizeof(struct T_bind_ack), 2 }, "B-1"
};

/* The provider: takes the T_BIND_REQ; then, the ioctl still waiting,
 * writes down through timod on the user's end and reads that at its
 * own; sends up data and TPI messages that answer nothing outstanding;
 * then answers. */
static void *order_main(void *arg)
{
	struct order *o = arg;
	int u = o->fds[0], pv = o->fds[1];

	get1(pv, &o->req);
	o->rc[0] = (int)write(u, "down-1", 6);
	o->rc[1] = put1(u, &dreq, sizeof(dreq), "down-2", 0);
	get1(pv, &o->down1);
	get1(pv, &o->down2);
	o->rc[2] = (int)write(pv, "up-1", 4);
	o->rc[3] = put1(pv, &dind, sizeof(dind), "up-2", 0);
	o->rc[4] = put1(pv, &the_info, sizeof(the_info), NULL, 1);
	o->rc[5] = put1(pv, &other_err, sizeof(other_err), NULL, 0);
	o->rc[6] = put1(pv, &other_ok, sizeof(other_ok), NULL, 0);
	o->rc[7] = put1(pv, &bind_ack, sizeof(bind_ack), NULL, 1);
	return NULL;
}

static void test_order(void)
{
	struct order o;
	struct bindmsg req = {
		{ T_BIND_REQ, 4, sizeof(struct T_bind_req), 2 }, "b-1"
	};
	unsigned char buf[BUFSZ];
	pthread_t th;
	struct got g;
	int len = -1;

	memset(&o, 0, sizeof(o));
	open_ti(o.fds);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &req, sizeof(req));
	REQUIRE(pthread_create(&th, NULL, order_main, &o) == 0);
	CHECK_RET(do_str(o.fds[0], TI_BIND, buf, BUFSZ, 0, &len), 0);
	pthread_join(th, NULL);
	CHECK_EQ(len, sizeof(bind_ack));
	CHECK_MEM(buf, &bind_ack, sizeof(bind_ack));
	CHECK_GOT(&o.req, 0, &req, (int)sizeof(req), "", -1);
	CHECK_EQ(o.rc[0], 6);
	CHECK_EQ(o.rc[2], 4);
	for (int i = 3; i < 8; i++)
		CHECK_EQ(o.rc[i], 0);
	CHECK_EQ(o.rc[1], 0);
	/* down, in order, untouched */
	CHECK_GOT(&o.down1, 0, "", -1, "down-1", 6);
	CHECK_GOT(&o.down2, 0, &dreq, (int)sizeof(dreq), "down-2", 6);
	/* up: the high priority one first (the head's rule), then the
	 * ordinary ones in the order sent */
	CHECK_RET(nread(o.fds[0], NULL), 5);
	get1(o.fds[0], &g);
	CHECK_GOT(&g, 1, &the_info, (int)sizeof(the_info), "", -1);
	get1(o.fds[0], &g);
	CHECK_GOT(&g, 0, "", -1, "up-1", 4);
	get1(o.fds[0], &g);
	CHECK_GOT(&g, 0, &dind, (int)sizeof(dind), "up-2", 4);
	get1(o.fds[0], &g);
	CHECK_GOT(&g, 0, &other_err, (int)sizeof(other_err), "", -1);
	get1(o.fds[0], &g);
	CHECK_GOT(&g, 0, &other_ok, (int)sizeof(other_ok), "", -1);
	CHECK_RET(nread(o.fds[0], NULL), 0);

	/* with no ioctl outstanding, acks pass up as they are */
	CHECK_RET(put1(o.fds[1], &bind_ack, sizeof(bind_ack), NULL, 1), 0);
	get1(o.fds[0], &g);
	CHECK_GOT(&g, 1, &bind_ack, (int)sizeof(bind_ack), "", -1);
	CHECK_RET(put1(o.fds[1], &unbind_ok, sizeof(unbind_ok), NULL, 1), 0);
	get1(o.fds[0], &g);
	CHECK_GOT(&g, 1, &unbind_ok, (int)sizeof(unbind_ok), "", -1);
	/* and requests the user sends with putmsg go down as they are */
	CHECK_RET(put1(o.fds[0], &req, sizeof(req), NULL, 0), 0);
	get1(o.fds[1], &g);
	CHECK_GOT(&g, 0, &req, (int)sizeof(req), "", -1);
	close_ti(o.fds);
}

/* ---- M_FLUSH ---- */

struct flushp {
	int fds[2];
	struct got req;
	int rc;
};

static void *flush_main(void *arg)
{
	struct flushp *f = arg;

	get1(f->fds[1], &f->req);
	/* both directions flushed while the ioctl waits */
	f->rc = ioctl(f->fds[1], I_FLUSH, FLUSHRW);
	f->rc |= put1(f->fds[1], &the_info, sizeof(the_info), NULL, 1);
	return NULL;
}

static void test_flush(void)
{
	int fds[2], len = -1;
	struct flushp f;
	struct T_info_req ir = { T_INFO_REQ };
	unsigned char buf[BUFSZ];
	pthread_t th;

	open_ti(fds);
	/* FLUSHR by the user: what waits at its head goes */
	CHECK_RET(write(fds[1], "one", 3), 3);
	CHECK_RET(write(fds[1], "two", 3), 3);
	CHECK_RET(nread(fds[0], NULL), 2);
	CHECK_RET(ioctl(fds[0], I_FLUSH, FLUSHR), 0);
	CHECK_RET(nread(fds[0], NULL), 0);
	/* FLUSHW by the user: what it wrote and the provider has not read */
	CHECK_RET(write(fds[0], "three", 5), 5);
	CHECK_RET(nread(fds[1], NULL), 1);
	CHECK_RET(ioctl(fds[0], I_FLUSH, FLUSHW), 0);
	CHECK_RET(nread(fds[1], NULL), 0);
	/* the provider's flush comes up through timod: FLUSHW at its end
	 * empties what it sent that the user has not read */
	CHECK_RET(write(fds[1], "four", 4), 4);
	CHECK_RET(nread(fds[0], NULL), 1);
	CHECK_RET(ioctl(fds[1], I_FLUSH, FLUSHW), 0);
	CHECK_RET(nread(fds[0], NULL), 0);
	/* data still flows after */
	CHECK_RET(write(fds[1], "five", 4), 4);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "five", 4);

	/* a flush while an ioctl waits leaves the ioctl alone */
	memset(&f, 0, sizeof(f));
	f.fds[0] = fds[0];
	f.fds[1] = fds[1];
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &ir, sizeof(ir));
	REQUIRE(pthread_create(&th, NULL, flush_main, &f) == 0);
	CHECK_RET(do_str(fds[0], TI_GETINFO, buf, BUFSZ, 0, &len), 0);
	pthread_join(th, NULL);
	CHECK_EQ(f.rc, 0);
	CHECK_GOT(&f.req, 1, &ir, (int)sizeof(ir), "", -1);
	CHECK_EQ(len, sizeof(the_info));
	CHECK_MEM(buf, &the_info, sizeof(the_info));
	CHECK_RET(nread(fds[0], NULL), 0);
	close_ti(fds);
}

/* ---- time-outs, interruptions and late answers ---- */

static const struct T_info_req ir = { T_INFO_REQ };

struct silent {
	int fd;
	struct got req;
};

/* Takes the request and answers nothing. */
static void *silent_main(void *arg)
{
	struct silent *s = arg;

	get1(s->fd, &s->req);
	return NULL;
}

/*
 * ioctl cmd with request req, which the provider takes and does not
 * answer; the head gives up: after 1 s (ic_timout 1, ETIME) when etime,
 * else at a signal (EINTR; a kicker sends SIGUSR1 every few ms).
 */
static void give_up(int fds[2], int cmd, const void *req, int reqlen,
		    int hi, bool etime)
{
	struct silent s = { fds[1] };
	unsigned char buf[BUFSZ];
	struct kicker k;
	pthread_t th;
	long t0;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, req, (size_t)reqlen);
	REQUIRE(pthread_create(&th, NULL, silent_main, &s) == 0);
	t0 = now_ms();
	if (etime) {
		CHECK_ERR(do_str(fds[0], cmd, buf, BUFSZ, 1, NULL), ETIME);
		CHECK(now_ms() - t0 >= 900);
	} else {
		kicker_start(&k, SIGUSR1);
		CHECK_ERR(do_str(fds[0], cmd, buf, BUFSZ, 0, NULL), EINTR);
		kicker_stop(&k);
	}
	pthread_join(th, NULL);
	CHECK_GOT(&s.req, hi, req, reqlen, "", -1);
}

/* The provider: takes the request, sends the late answers to older
 * ioctls (n of them, high priority), then its answer (NULL: none). */
struct late {
	int fd;
	struct got req;
	const void *old[3];
	int oldlen[3];
	int n;
	const void *ans;
	int anslen;
	int rc;
};

static void *late_main(void *arg)
{
	struct late *l = arg;

	get1(l->fd, &l->req);
	for (int i = 0; i < l->n; i++)
		l->rc |= put1(l->fd, l->old[i], l->oldlen[i], NULL, 1);
	if (l->ans != NULL)
		l->rc |= put1(l->fd, l->ans, l->anslen, NULL, 1);
	return NULL;
}

/* ioctl cmd with request req, answered by l's provider thread; checks
 * that what went down is req (hi: high priority), or T_INFO_REQ for
 * TI_SYNC; returns the ioctl's value. */
static int late_call(int fds[2], struct late *l, int cmd, const void *req,
		     int reqlen, int hi, unsigned char *buf, int *lenp)
{
	const void *down = cmd == TI_SYNC ? (const void *)&ir : req;
	int downlen = cmd == TI_SYNC ? (int)sizeof(ir) : reqlen;
	pthread_t th;
	int r;

	l->fd = fds[1];
	memset(buf, 0, BUFSZ);
	memcpy(buf, req, (size_t)reqlen);
	REQUIRE(pthread_create(&th, NULL, late_main, l) == 0);
	r = do_str(fds[0], cmd, buf, BUFSZ, 0, lenp);
	pthread_join(th, NULL);
	CHECK_EQ(l->rc, 0);
	CHECK_GOT(&l->req, hi, down, downlen, "", -1);
	return r;
}

static const struct bindmsg breq = {
	{ T_BIND_REQ, 4, sizeof(struct T_bind_req), 0 }, "t-1"
};
static const struct T_optmgmt_req oreq = { T_OPTMGMT_REQ, 0, 0, T_CURRENT };
static const struct T_optmgmt_ack oack = { T_OPTMGMT_ACK, 0, 0, T_SUCCESS };
static const struct T_unbind_req ureq = { T_UNBIND_REQ };

static void test_timeout(void)
{
	int fds[2];
	struct got g;

	open_ti(fds);
	/* timed out, nothing newer: the late answer is dropped (it becomes
	 * an ioctl reply nobody waits for) */
	give_up(fds, TI_GETINFO, &ir, sizeof(ir), 1, true);
	CHECK_RET(put1(fds[1], &the_info, sizeof(the_info), NULL, 1), 0);
	CHECK_RET(nread(fds[0], NULL), 0);
	/* after it, the same message passes again */
	CHECK_RET(put1(fds[1], &the_info, sizeof(the_info), NULL, 1), 0);
	get1(fds[0], &g);
	CHECK_GOT(&g, 1, &the_info, (int)sizeof(the_info), "", -1);
	close_ti(fds);
}

static void test_replaced(void)
{
	int fds[2], len = -1;
	unsigned char buf[BUFSZ];
	struct ti_sync_req sr = { TSRF_QLEN_REQ };
	struct ti_sync_ack sa;
	struct T_error_ack e = { T_ERROR_ACK, T_BIND_REQ, TADDRBUSY, 0 };
	struct got g;

	catch_sig(SIGUSR1, false);
	open_ti(fds);
	/* interrupted, then replaced by a newer ioctl: the late answer to
	 * the old one is dropped, the newer one gets its own */
	give_up(fds, TI_BIND, &breq, sizeof(breq), 0, false);
	{
		struct late l = { .old = { &bind_ack },
				  .oldlen = { sizeof(bind_ack) }, .n = 1,
				  .ans = &the_info,
				  .anslen = sizeof(the_info) };
		CHECK_RET(late_call(fds, &l, TI_GETINFO, &ir, sizeof(ir), 1,
				    buf, &len), 0);
		CHECK_EQ(len, sizeof(the_info));
		CHECK_MEM(buf, &the_info, sizeof(the_info));
		CHECK_RET(nread(fds[0], NULL), 0);
	}
	/* the provider did bind: TI_SYNC reports the qlen it granted */
	{
		struct late l = { .ans = &the_info,
				  .anslen = sizeof(the_info) };
		CHECK_RET(late_call(fds, &l, TI_SYNC, &sr, sizeof(sr), 1, buf,
				    &len), 0);
		CHECK_EQ(len, sizeof(sa));
		memcpy(&sa, buf, sizeof(sa));
		CHECK_EQ(sa.tsa_qlen, bind_ack.r.CONIND_number);
	}

	/* a late T_ERROR_ACK is dropped too */
	give_up(fds, TI_BIND, &breq, sizeof(breq), 0, false);
	{
		struct late l = { .old = { &e }, .oldlen = { sizeof(e) },
				  .n = 1, .ans = &the_info,
				  .anslen = sizeof(the_info) };
		CHECK_RET(late_call(fds, &l, TI_GETINFO, &ir, sizeof(ir), 1,
				    buf, &len), 0);
		CHECK_EQ(len, sizeof(the_info));
		CHECK_RET(nread(fds[0], NULL), 0);
	}
	/* the stale memory is gone once the newer one is answered: the
	 * same T_ERROR_ACK now passes up */
	CHECK_RET(put1(fds[1], &e, sizeof(e), NULL, 1), 0);
	get1(fds[0], &g);
	CHECK_GOT(&g, 1, &e, (int)sizeof(e), "", -1);

	/* the same ioctl again (the XTI library retries its queries after
	 * EINTR): the first answer is the old one's, the second the new */
	give_up(fds, TI_GETINFO, &ir, sizeof(ir), 1, false);
	{
		struct T_info_ack a1 = the_info, a2 = the_info;
		a1.CURRENT_state = TS_UNBND;
		a2.CURRENT_state = TS_DATA_XFER;
		struct late l = { .old = { &a1 }, .oldlen = { sizeof(a1) },
				  .n = 1, .ans = &a2, .anslen = sizeof(a2) };
		CHECK_RET(late_call(fds, &l, TI_GETINFO, &ir, sizeof(ir), 1,
				    buf, &len), 0);
		CHECK_EQ(len, sizeof(a2));
		CHECK_MEM(buf, &a2, sizeof(a2));
		CHECK_RET(nread(fds[0], NULL), 0);
	}

	/* two replaced in a row, answered in order */
	give_up(fds, TI_BIND, &breq, sizeof(breq), 0, false);
	give_up(fds, TI_OPTMGMT, &oreq, sizeof(oreq), 0, false);
	{
		struct late l = { .old = { &bind_ack, &oack },
				  .oldlen = { sizeof(bind_ack), sizeof(oack) },
				  .n = 2, .ans = &the_info,
				  .anslen = sizeof(the_info) };
		CHECK_RET(late_call(fds, &l, TI_GETINFO, &ir, sizeof(ir), 1,
				    buf, &len), 0);
		CHECK_EQ(len, sizeof(the_info));
		CHECK_MEM(buf, &the_info, sizeof(the_info));
		CHECK_RET(nread(fds[0], NULL), 0);
	}

	/* an old one that is never answered: the answer to the one after
	 * it is still recognised as late (the provider answers in order) */
	give_up(fds, TI_GETINFO, &ir, sizeof(ir), 1, false);
	give_up(fds, TI_BIND, &breq, sizeof(breq), 0, false);
	{
		struct late l = { .old = { &bind_ack },
				  .oldlen = { sizeof(bind_ack) }, .n = 1,
				  .ans = &unbind_ok,
				  .anslen = sizeof(unbind_ok) };
		CHECK_RET(late_call(fds, &l, TI_UNBIND, &ureq, sizeof(ureq), 0,
				    buf, &len), 0);
		CHECK_EQ(len, sizeof(unbind_ok));
		CHECK_MEM(buf, &unbind_ok, sizeof(unbind_ok));
		CHECK_RET(nread(fds[0], NULL), 0);
	}
	/* and the never-answered one is forgotten: its kind passes again */
	CHECK_RET(put1(fds[1], &the_info, sizeof(the_info), NULL, 1), 0);
	get1(fds[0], &g);
	CHECK_GOT(&g, 1, &the_info, (int)sizeof(the_info), "", -1);

	/* closing with an ioctl that was given up and never answered, and
	 * more replaced ones than timod remembers */
	for (int i = 0; i < 6; i++)
		give_up(fds, TI_GETINFO, &ir, sizeof(ir), 1, false);
	close_ti(fds);
	signal(SIGUSR1, SIG_IGN);
}

/* A high priority request passes a normal one sent before it: a TI_BIND
 * given up and replaced by a TI_GETINFO can be answered after it, and
 * its late T_BIND_ACK is still dropped (the GETINFO's answer does not
 * make timod forget it).  And an upward flush of the read side makes
 * timod forget what it waited for (flushed below, it never comes): the
 * retried TI_GETINFO's answer is its own, not taken for the late one. */
static void test_priority_and_flush(void)
{
	int fds[2], len = -1;
	unsigned char buf[BUFSZ];
	struct got g;

	catch_sig(SIGUSR1, false);
	open_ti(fds);
	give_up(fds, TI_BIND, &breq, sizeof(breq), 0, false);
	{
		struct late l = { .ans = &the_info,
				  .anslen = sizeof(the_info) };
		CHECK_RET(late_call(fds, &l, TI_GETINFO, &ir, sizeof(ir), 1,
				    buf, &len), 0);
		CHECK_EQ(len, sizeof(the_info));
	}
	CHECK_RET(put1(fds[1], &bind_ack, sizeof(bind_ack), NULL, 1), 0);
	CHECK_RET(nread(fds[0], NULL), 0);		/* dropped */
	CHECK_RET(put1(fds[1], &bind_ack, sizeof(bind_ack), NULL, 1), 0);
	get1(fds[0], &g);				/* then passes */
	CHECK_GOT(&g, 1, &bind_ack, (int)sizeof(bind_ack), "", -1);

	give_up(fds, TI_GETINFO, &ir, sizeof(ir), 1, false);
	/* FLUSHR from the provider's end crosses the pipe as the provider's
	 * flush of its read side */
	CHECK_RET(ioctl(fds[1], I_FLUSH, FLUSHR), 0);
	{
		struct T_info_ack a2 = the_info;
		a2.CURRENT_state = TS_DATA_XFER;
		struct late l = { .ans = &a2, .anslen = sizeof(a2) };
		long t0 = now_ms();
		CHECK_RET(late_call(fds, &l, TI_GETINFO, &ir, sizeof(ir), 1,
				    buf, &len), 0);
		CHECK(now_ms() - t0 < 5000);
		CHECK_EQ(len, sizeof(a2));
		CHECK_MEM(buf, &a2, sizeof(a2));
	}
	CHECK_RET(nread(fds[0], NULL), 0);
	close_ti(fds);
	signal(SIGUSR1, SIG_IGN);
}

/* ---- memory shortage ---- */

static void test_nomem(void)
{
	int fds[2], len = -1;
	unsigned char buf[BUFSZ];
	struct ti_sync_req sr = { TSRF_INFO_REQ };

	open_ti(fds);
	/* TI_GETMYNAME without data: the head's M_IOCTL (64 bytes) fits,
	 * timod's T_ADDR_REQ does not */
	CHECK_EQ(streams_set_memlimit(64 + 3), 0);
	CHECK_ERR(do_str(fds[0], TI_GETMYNAME, NULL, 0, 0, NULL), ENOMEM);
	CHECK_EQ(streams_set_memlimit(0), 0);
	CHECK_RET(nread(fds[1], NULL), 0);
	/* TI_SYNC: the M_IOCTL and its 64 bytes of data fit, the reply
	 * block timod reserves does not */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &sr, sizeof(sr));
	CHECK_EQ(streams_set_memlimit(64 + 64 + 10), 0);
	CHECK_ERR(do_str(fds[0], TI_SYNC, buf, 64, 0, &len), ENOMEM);
	CHECK_EQ(streams_set_memlimit(0), 0);
	CHECK_RET(nread(fds[1], NULL), 0);
	close_ti(fds);
}

int main(void)
{
	test_priority_and_flush();
	th_mark();
	test_order();
	test_flush();
	test_timeout();
	test_replaced();
	test_nomem();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
