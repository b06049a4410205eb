/*
 * test_xti_threads -- endpoints used by several threads.  A thread
 * asleep in t_rcv() while another calls t_snddis(): the reader takes the
 * T_OK_ACK off the stream and hands it to the waiting t_snddis(), which
 * completes (T_IDLE), and the reader gives up with TOUTSTATE instead of
 * sleeping on a connection that is gone; meanwhile t_getstate() says
 * TSTATECHNG.  Readers that come and go (non-blocking t_rcv, leaving
 * the stream without ep_lock) while t_snddis waits for its ack: the
 * ack is taken by one side or the other and the wait always ends.  A
 * writer and a reader on one
 * endpoint at once, through an echoing provider, lose and reorder
 * nothing.  Many threads making endpoints (_xti_attach), using and
 * closing them (t_close or close()) while descriptor numbers are reused:
 * the endpoint table stays consistent (run under ThreadSanitizer too).
 */
#include "ferry.h"

#include "xti_impl.h"

struct reader {
	int fd;
	int r, te;
	pid_t tid;
	pthread_t th;
};

static void *rcv_main(void *arg)
{
	struct reader *rd = arg;
	char buf[16];
	int flags;

	__atomic_store_n(&rd->tid, my_tid(), __ATOMIC_RELEASE);
	rd->r = t_rcv(rd->fd, buf, sizeof(buf), &flags);
	rd->te = t_errno;
	return NULL;
}

static void test_ack_handover(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_DATA_XFER);
	struct reader rd;
	struct fmsg w, a;

	memset(&rd, 0, sizeof(rd));
	rd.fd = f->xfd;
	REQUIRE(pthread_create(&rd.th, NULL, rcv_main, &rd) == 0);
	while (__atomic_load_n(&rd.tid, __ATOMIC_ACQUIRE) == 0)
		pause_ms(1);
	/* the reader is inside getmsg (the library counts it) and asleep */
	struct xti_ep *ep = xti_get(f->xfd);
	REQUIRE(ep != NULL);
	for (int i = 0; i < 5000; i++) {
		int in = __atomic_load_n(&ep->ep_rd_active, __ATOMIC_SEQ_CST);
		if (in == 1)
			break;
		pause_ms(1);
	}
	xti_put(ep);
	CHECK(wait_blocked(rd.tid));
	ferry_expect(f, __LINE__, fm_discon_req(&w, -1),
		     fm_ok_ack(&a, T_DISCON_REQ));
	CHECK_RET(t_snddis(f->xfd, NULL), 0);
	ferry_sync(f);
	CHECK_STATE(f->xfd, T_IDLE);
	pthread_join(rd.th, NULL);
	CHECK_EQ(rd.r, -1);
	CHECK_EQ(rd.te, TOUTSTATE);
	ferry_free(f);
}

struct discer {
	int fd;
	int r;
	pthread_t th;
};

static void *snddis_main(void *arg)
{
	struct discer *d = arg;

	d->r = t_snddis(d->fd, NULL);
	return NULL;
}

/* t_getstate while another thread's request waits for its ack */
static void test_statechng(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_DATA_XFER);
	struct discer d = { f->xfd, -2, 0 };
	struct fstep s;
	struct xti_ep *ep;
	bool busy = false;

	fstep_init(&s);
	s.line = __LINE__;
	fm_discon_req(&s.want, -1);
	fm_ok_ack(&s.rep[s.nrep++], T_DISCON_REQ);
	s.delay_ms = 300;		/* the ack comes late */
	ferry_push(f, &s);
	REQUIRE(pthread_create(&d.th, NULL, snddis_main, &d) == 0);
	ep = xti_get(f->xfd);
	REQUIRE(ep != NULL);
	for (int i = 0; i < 250 && !busy; i++) {
		pthread_mutex_lock(&ep->ep_lock);
		busy = ep->ep_req_busy;
		pthread_mutex_unlock(&ep->ep_lock);
		if (!busy)
			pause_ms(1);
	}
	xti_put(ep);
	CHECK(busy);
	CHECK_TERR(t_getstate(f->xfd), TSTATECHNG);
	pthread_join(d.th, NULL);
	ferry_sync(f);
	CHECK_EQ(d.r, 0);
	CHECK_STATE(f->xfd, T_IDLE);
	ferry_free(f);
}

/* A reader that tries t_rcv for ms milliseconds on a non-blocking
 * endpoint where no data comes. */
struct spinner {
	int fd;
	int ms;
	int bad;
	int started;
	pthread_t th;
};

static double spin_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *spin_main(void *arg)
{
	struct spinner *s = arg;
	double end = spin_now_ms() + s->ms;
	char buf[8];
	int flags;

	for (int i = 0; spin_now_ms() < end; i++) {
		if (i == 1)
			__atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
		if (t_rcv(s->fd, buf, sizeof(buf), &flags) >= 0) {
			s->bad++;
			break;
		}
		if (t_errno == TOUTSTATE)
			break;
		if (t_errno != TNODATA) {
			s->bad++;
			break;
		}
	}
	__atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* t_snddis's ack waiter, finding a reader in, sleeps until the reader
 * leaves; the ack comes after the reader has stopped, so only the
 * reader's leaving wakes the waiter (a lost wake-up hangs here). */
static void test_quick_readers(void)
{
	for (int i = 0; i < 20; i++) {
		struct ferry *f = ferry_ep(T_COTS, TS_DATA_XFER);
		struct spinner sp = { f->xfd, 20, 0, 0, 0 };
		struct fstep s;

		CHECK_RET(set_nonblock(f->xfd, true), 0);
		fstep_init(&s);
		s.line = __LINE__;
		fm_discon_req(&s.want, -1);
		fm_ok_ack(&s.rep[s.nrep++], T_DISCON_REQ);
		s.delay_ms = 50;		/* after the reader stops */
		ferry_push(f, &s);
		REQUIRE(pthread_create(&sp.th, NULL, spin_main, &sp) == 0);
		while (!__atomic_load_n(&sp.started, __ATOMIC_ACQUIRE))
			sched_yield();
		CHECK_RET(t_snddis(f->xfd, NULL), 0);
		pthread_join(sp.th, NULL);
		ferry_sync(f);
		CHECK_STATE(f->xfd, T_IDLE);
		CHECK_EQ(sp.bad, 0);
		ferry_free(f);
	}
}

#define NMSG	2000

struct echo {
	int pfd;
	int n;
};

/* The provider: every T_DATA_REQ comes back as a T_DATA_IND. */
static void *echo_main(void *arg)
{
	struct echo *e = arg;
	struct fmsg m;
	struct T_data_ind di = { T_DATA_IND, 0 };

	/* (no REQUIRE here: the check counters are the main thread's) */
	for (int i = 0; i < e->n; i++) {
		if (fm_read(e->pfd, &m, 5000) != 0)
			break;
		memcpy(m.ctl, &di, sizeof(di));
		m.clen = sizeof(di);
		if (fm_write(e->pfd, &m) != 0)
			break;
	}
	return NULL;
}

struct rw {
	int fd;
	int bad;
};

static void *writer_main(void *arg)
{
	struct rw *w = arg;

	for (int i = 0; i < NMSG; i++)
		if (t_snd(w->fd, &i, sizeof(i), 0) != (int)sizeof(i))
			w->bad++;
	return NULL;
}

static void *reader_main(void *arg)
{
	struct rw *w = arg;

	for (int i = 0; i < NMSG; i++) {
		int v = -1, flags;
		if (t_rcv(w->fd, &v, sizeof(v), &flags) != (int)sizeof(v) ||
		    v != i || flags != 0)
			w->bad++;
	}
	return NULL;
}

static void test_full_duplex(void)
{
	struct ferry *f = ferry_ep(T_COTS, TS_DATA_XFER);
	struct echo e = { f->pfd, NMSG };
	struct rw wr = { f->xfd, 0 }, rr = { f->xfd, 0 };
	pthread_t te, tw, tr;

	REQUIRE(pthread_create(&te, NULL, echo_main, &e) == 0);
	REQUIRE(pthread_create(&tr, NULL, reader_main, &rr) == 0);
	REQUIRE(pthread_create(&tw, NULL, writer_main, &wr) == 0);
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	pthread_join(te, NULL);
	CHECK_EQ(wr.bad, 0);
	CHECK_EQ(rr.bad, 0);
	CHECK_STATE(f->xfd, T_DATAXFER);
	ferry_free(f);
}

#define NTHR	4
#define NITER	150

static void *churn_main(void *arg)
{
	struct T_info_ack ia = fi_info(T_COTS, TS_DATA_XFER);
	long bad = 0;

	for (int i = 0; i < NITER; i++) {
		int p[2];

		if (s_pipe(p) != 0) {
			bad++;
			continue;
		}
		if (ioctl(p[0], I_PUSH, "timod") != 0 ||
		    _xti_attach(p[0], &ia, T_DATAXFER, 0) != 0 ||
		    t_getstate(p[0]) != T_DATAXFER || t_look(p[0]) != 0)
			bad++;
		if (t_snd(p[0], "x", 1, 0) != 1)
			bad++;
		if ((i + (int)(long)arg) % 2)
			t_close(p[0]);
		else
			close(p[0]);
		close(p[1]);
	}
	return (void *)bad;
}

static void test_churn(void)
{
	pthread_t th[NTHR];
	long total = 0;

	for (long i = 0; i < NTHR; i++)
		REQUIRE(pthread_create(&th[i], NULL, churn_main,
				       (void *)i) == 0);
	for (int i = 0; i < NTHR; i++) {
		void *r;
		pthread_join(th[i], &r);
		total += (long)r;
	}
	CHECK_EQ(total, 0);
}

int main(void)
{
	test_ack_handover();
	test_statechng();
	test_quick_readers();
	test_full_duplex();
	test_churn();
	T_DONE();
}
