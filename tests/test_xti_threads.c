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
 *
 * The thread's endpoint cache (the data calls keep a reference to the
 * last endpoint a thread used): a descriptor number closed and given to
 * a new endpoint, by the same thread or another, is the new endpoint at
 * once (a connection-mode one refuses datagrams, TNOTSUPPORT; an
 * unbound one TOUTSTATE; a bound one receives with its own address); the
 * closed endpoint is recycled when the thread moves on or exits; a
 * forked child sees the same.  Threads sending and receiving datagrams
 * on an endpoint while another thread closes it: every call that starts
 * after the close fails TBADF, none succeeds, and once the number names
 * a new unbound endpoint they fail TOUTSTATE.
 *
 * fork() while a thread of the parent sleeps in t_rcv: in the child that
 * reader does not exist, and a request that waits for its ack there
 * (t_snddis) completes instead of waiting for the reader to hand it over.
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

/* ---- the thread's endpoint cache ---- */

#define CLTS	"/dev/ticlts"
#define COTS	"/dev/ticots"

static int ep_refs(struct xti_ep *ep)
{
	return __atomic_load_n(&ep->ep_refs, __ATOMIC_ACQUIRE);
}

/* A non-blocking connectionless endpoint bound to name. */
static int clts_bound(const char *name)
{
	int fd = t_open(CLTS, O_RDWR | O_NONBLOCK, NULL);

	REQUIRE(fd >= 0);
	REQUIRE(xt_bind(fd, name, 0, NULL, NULL) == 0);
	return fd;
}

static int dg_send(int fd, const char *to, const char *msg)
{
	struct t_unitdata ud;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = (char *)to;
	ud.addr.len = (unsigned)strlen(to);
	ud.udata.buf = (char *)msg;
	ud.udata.len = (unsigned)strlen(msg);
	return t_sndudata(fd, &ud);
}

/* Receive a datagram; 0 when it is msg from the address from (from
 * NULL: any), else -1 (t_errno of a failed call kept). */
static int dg_recv(int fd, const char *from, const char *msg)
{
	struct t_unitdata ud;
	char ab[64], db[64];
	int flags;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = ab;
	ud.addr.maxlen = sizeof(ab);
	ud.udata.buf = db;
	ud.udata.maxlen = sizeof(db);
	if (t_rcvudata(fd, &ud, &flags) != 0)
		return -1;
	if (from != NULL &&
	    (ud.addr.len != strlen(from) || memcmp(ab, from, ud.addr.len) ||
	     ud.udata.len != strlen(msg) || memcmp(db, msg, ud.udata.len) ||
	     flags != 0))
		return -1;
	return 0;
}

/* Another thread that makes the data calls it is told to, one at a
 * time. */
enum { W_RCV = 1, W_SND, W_EXIT };
struct worker {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int cmd;			/* W_*; 0: done */
	int fd;
	const char *addr, *msg;		/* W_RCV: from; W_SND: to */
	int r, te;
	pthread_t th;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->cmd == 0)
			pthread_cond_wait(&w->cv, &w->lock);
		if (w->cmd == W_EXIT)
			break;
		pthread_mutex_unlock(&w->lock);
		t_errno = 0;
		if (w->cmd == W_RCV)
			w->r = dg_recv(w->fd, w->addr, w->msg);
		else
			w->r = dg_send(w->fd, w->addr, w->msg);
		w->te = t_errno;
		pthread_mutex_lock(&w->lock);
		w->cmd = 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void worker_start(struct worker *w)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cv, NULL);
	REQUIRE(pthread_create(&w->th, NULL, worker_main, w) == 0);
}

/* Have w make one call: its return; its t_errno in *te. */
static int worker_do(struct worker *w, int cmd, int fd, const char *addr,
		     const char *msg, int *te)
{
	int r;

	pthread_mutex_lock(&w->lock);
	w->fd = fd;
	w->addr = addr;
	w->msg = msg;
	w->cmd = cmd;
	pthread_cond_broadcast(&w->cv);
	while (w->cmd != 0)
		pthread_cond_wait(&w->cv, &w->lock);
	r = w->r;
	if (te != NULL)
		*te = w->te;
	pthread_mutex_unlock(&w->lock);
	return r;
}

static void worker_stop(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->cmd = W_EXIT;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->lock);
}

/* The endpoint at fd (the table's), without keeping a reference. */
static struct xti_ep *ep_at(int fd)
{
	struct xti_ep *ep = xti_get(fd);

	if (ep != NULL)
		xti_put(ep);
	return ep;
}

/* One thread: t_rcvudata on b, t_close(b), and the number again for a
 * connection-mode endpoint, then for an unbound and a bound
 * connectionless one. */
static void test_cache_same_thread(void)
{
	int a = clts_bound("cache-a"), b = clts_bound("cache-b"), c;
	struct xti_ep *old;

	CHECK_RET(dg_send(a, "cache-b", "one"), 0);
	CHECK_EQ(xt_look_wait(b), T_DATA);
	CHECK_RET(dg_recv(b, "cache-a", "one"), 0);
	old = ep_at(b);
	REQUIRE(old != NULL);
	CHECK_EQ(ep_refs(old), 2);	/* the table's, the cache's */
	CHECK_RET(t_close(b), 0);
	CHECK_EQ(ep_refs(old), 0);	/* recycled: the cache let go */
	c = t_open(COTS, O_RDWR | O_NONBLOCK, NULL);
	REQUIRE(c == b);
	CHECK_TERR(dg_recv(c, NULL, NULL), TNOTSUPPORT);
	CHECK_TERR(dg_send(c, "cache-a", "two"), TNOTSUPPORT);
	CHECK_STATE(c, T_UNBND);
	CHECK_RET(t_close(c), 0);
	c = t_open(CLTS, O_RDWR | O_NONBLOCK, NULL);
	REQUIRE(c == b);
	CHECK_TERR(dg_recv(c, NULL, NULL), TOUTSTATE);
	CHECK_TERR(dg_send(c, "cache-a", "two"), TOUTSTATE);
	CHECK_RET(xt_bind(c, "cache-c", 0, NULL, NULL), 0);
	CHECK_RET(dg_send(a, "cache-c", "three"), 0);
	CHECK_EQ(xt_look_wait(c), T_DATA);
	CHECK_RET(dg_recv(c, "cache-a", "three"), 0);
	CHECK_RET(dg_send(c, "cache-a", "four"), 0);
	CHECK_EQ(xt_look_wait(a), T_DATA);
	CHECK_RET(dg_recv(a, "cache-c", "four"), 0);
	/* a plain close() drops the cache's reference too */
	old = ep_at(a);
	REQUIRE(old != NULL);
	CHECK_EQ(ep_refs(old), 2);
	close(a);
	CHECK_EQ(ep_refs(old), 0);
	CHECK_RET(t_close(c), 0);
}

/* Another thread caches b; this one closes b and makes new endpoints
 * with its number; the other thread's calls reach each new one. */
static void test_cache_other_thread(void)
{
	int a = clts_bound("cache2-a"), b = clts_bound("cache2-b"), c, te;
	struct xti_ep *old, *ep;
	struct worker w;

	worker_start(&w);
	CHECK_RET(dg_send(a, "cache2-b", "one"), 0);
	CHECK_EQ(xt_look_wait(b), T_DATA);
	CHECK_EQ(worker_do(&w, W_RCV, b, "cache2-a", "one", &te), 0);
	old = ep_at(b);
	REQUIRE(old != NULL);
	CHECK_EQ(ep_refs(old), 2);	/* the table's, the worker's cache */
	CHECK_RET(t_close(b), 0);
	CHECK_EQ(ep_refs(old), 1);	/* detached, still cached */
	c = t_open(COTS, O_RDWR | O_NONBLOCK, NULL);
	REQUIRE(c == b);
	CHECK(ep_at(c) != old);
	CHECK_EQ(worker_do(&w, W_RCV, c, "cache2-a", "two", &te), -1);
	CHECK_EQ(te, TNOTSUPPORT);
	CHECK_EQ(ep_refs(old), 0);	/* the worker moved on: recycled */
	CHECK_EQ(worker_do(&w, W_SND, c, "cache2-a", "two", &te), -1);
	CHECK_EQ(te, TNOTSUPPORT);
	CHECK_RET(t_close(c), 0);
	/* an unbound connectionless endpoint, then bound */
	c = t_open(CLTS, O_RDWR | O_NONBLOCK, NULL);
	REQUIRE(c == b);
	CHECK_EQ(worker_do(&w, W_SND, c, "cache2-a", "two", &te), -1);
	CHECK_EQ(te, TOUTSTATE);
	CHECK_RET(xt_bind(c, "cache2-c", 0, NULL, NULL), 0);
	CHECK_EQ(worker_do(&w, W_SND, c, "cache2-a", "three", &te), 0);
	CHECK_EQ(xt_look_wait(a), T_DATA);
	CHECK_RET(dg_recv(a, "cache2-c", "three"), 0);
	CHECK_RET(dg_send(a, "cache2-c", "four"), 0);
	CHECK_EQ(xt_look_wait(c), T_DATA);
	CHECK_EQ(worker_do(&w, W_RCV, c, "cache2-a", "four", &te), 0);
	/* the worker exits with c cached: its reference goes */
	ep = ep_at(c);
	REQUIRE(ep != NULL);
	CHECK_EQ(ep_refs(ep), 2);
	worker_stop(&w);
	CHECK_EQ(ep_refs(ep), 1);
	/* and with a closed endpoint cached: recycled at its exit */
	worker_start(&w);
	CHECK_EQ(worker_do(&w, W_SND, c, "cache2-a", "five", &te), 0);
	CHECK_RET(t_close(c), 0);
	CHECK_EQ(ep_refs(ep), 1);
	worker_stop(&w);
	CHECK_EQ(ep_refs(ep), 0);
	CHECK_EQ(xt_look_wait(a), T_DATA);
	CHECK_RET(dg_recv(a, "cache2-c", "five"), 0);
	CHECK_RET(t_close(a), 0);
}

/* fork() with an endpoint cached: the child's number reused for another
 * endpoint is that endpoint; the parent's cache is unchanged. */
static void test_cache_fork(void)
{
	struct T_info_ack ia = fi_info(T_COTS, TS_DATA_XFER);
	int a = clts_bound("fork-a"), b = clts_bound("fork-b"), st;
	pid_t pid;

	CHECK_RET(dg_send(a, "fork-b", "one"), 0);
	CHECK_EQ(xt_look_wait(b), T_DATA);
	CHECK_RET(dg_recv(b, "fork-a", "one"), 0);
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct xti_ep *old = ep_at(b);
		int bad = 0, p[2];

		if (old == NULL || ep_refs(old) != 2)
			bad |= 1;
		close(b);
		if (old != NULL && ep_refs(old) != 0)
			bad |= 2;
		/* a pipe end on b's number, made an endpoint */
		if (s_pipe(p) != 0 || ioctl(p[0], I_PUSH, "timod") != 0 ||
		    dup2(p[0], b) != b ||
		    _xti_attach(b, &ia, T_DATAXFER, 0) != 0)
			_exit(100);
		if (dg_recv(b, NULL, NULL) != -1 || t_errno != TNOTSUPPORT)
			bad |= 4;
		if (t_snd(b, "x", 1, 0) != 1)
			bad |= 8;
		fflush(stderr);
		_exit(bad);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK_RET(dg_send(a, "fork-b", "two"), 0);
	CHECK_EQ(xt_look_wait(b), T_DATA);
	CHECK_RET(dg_recv(b, "fork-a", "two"), 0);
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
}

/* A connection through /dev/ticots: *srv accepted on the listener. */
static void co_pair(const char *name, int *srv, int *cli)
{
	struct t_call sc, lc, ac;
	char buf[64];

	*srv = t_open(COTS, O_RDWR, NULL);
	*cli = t_open(COTS, O_RDWR | O_NONBLOCK, NULL);
	REQUIRE(*srv >= 0 && *cli >= 0);
	REQUIRE(xt_bind(*srv, name, 1, NULL, NULL) == 1);
	REQUIRE(xt_bind(*cli, NULL, 0, NULL, NULL) == 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = (char *)name;
	sc.addr.len = (unsigned)strlen(name);
	CHECK_TERR(t_connect(*cli, &sc, NULL), TNODATA);
	memset(&lc, 0, sizeof(lc));
	lc.addr.buf = buf;
	lc.addr.maxlen = sizeof(buf);
	REQUIRE(t_listen(*srv, &lc) == 0);
	memset(&ac, 0, sizeof(ac));
	ac.sequence = lc.sequence;
	REQUIRE(t_accept(*srv, *srv, &ac) == 0);
	CHECK_EQ(xt_look_wait(*cli), T_CONNECT);
	REQUIRE(t_rcvconnect(*cli, NULL) == 0);
}

/* fork() while a thread sleeps in t_rcv: the child's t_snddis waits for
 * its T_OK_ACK, which the parent's reader would have handed over; in the
 * child there is no such reader, and the request must still complete. */
static void test_fork_reader(void)
{
	struct reader rd;
	struct xti_ep *ep;
	int srv, cli, st;
	pid_t pid;

	co_pair("fork-rd", &srv, &cli);
	memset(&rd, 0, sizeof(rd));
	rd.fd = srv;
	ep = ep_at(srv);
	REQUIRE(ep != NULL);
	REQUIRE(pthread_create(&rd.th, NULL, rcv_main, &rd) == 0);
	while (__atomic_load_n(&rd.tid, __ATOMIC_ACQUIRE) == 0)
		pause_ms(1);
	for (int i = 0; i < 5000 &&
	     __atomic_load_n(&ep->ep_rd_active, __ATOMIC_SEQ_CST) != 1; i++)
		pause_ms(1);
	CHECK_EQ(__atomic_load_n(&ep->ep_rd_active, __ATOMIC_SEQ_CST), 1);
	CHECK(wait_blocked(rd.tid));
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int bad = 0;

		alarm(10);		/* a hang is a failure */
		if (t_snddis(srv, NULL) != 0)
			bad |= 1;
		if (t_getstate(srv) != T_IDLE)
			bad |= 2;
		_exit(bad);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), 0);
	/* the parent's reader is still there and gets its data */
	CHECK_RET(t_snd(cli, "wake", 4, 0), 4);
	pthread_join(rd.th, NULL);
	CHECK_EQ(rd.r, 4);
	CHECK_RET(t_close(cli), 0);
	CHECK_RET(t_close(srv), 0);
}

/* Threads sending datagrams to their own endpoint and receiving them
 * while the main thread closes it.  A call in flight at the close fails
 * as the stream says; every call that starts after t_close has returned
 * fails TBADF, and none succeeds.  Once each thread has seen that, the
 * main thread opens an unbound endpoint in every other round (it gets
 * the same number): calls then fail TOUTSTATE, the new endpoint's. */
#define RACE_THR	6
#define RACE_ROUNDS	30

struct race {
	int closed;			/* atomic: t_close has returned */
	int seen;			/* atomic: threads that failed since */
	int reopened;			/* atomic: the new endpoint is made
					   (or it is not made this round) */
};

struct racer {
	int fd;
	bool snd;
	const char *name;
	struct race *rs;
	int ok, late;			/* successes; after the close */
	int bad;			/* an error neither TBADF nor
					   TOUTSTATE after the close */
	int tout, badf;			/* TOUTSTATE before the reopening;
					   after it, TBADF */
	int touts;			/* TOUTSTATE after it */
	pthread_t th;
};

static void *racer_main(void *arg)
{
	struct racer *rc = arg;
	struct race *rs = rc->rs;
	bool seen = false;

	for (int after = 0; after < 3;) {
		int closed = __atomic_load_n(&rs->closed, __ATOMIC_ACQUIRE);
		int re = __atomic_load_n(&rs->reopened, __ATOMIC_ACQUIRE);
		int r = rc->snd ? dg_send(rc->fd, rc->name, "r")
				: dg_recv(rc->fd, NULL, NULL);
		int te = t_errno;

		if (!closed) {
			rc->ok += r == 0;
			continue;	/* TNODATA, TFLOW, in flight */
		}
		if (r == 0)
			rc->late++;
		else if (te != TBADF && te != TOUTSTATE)
			rc->bad = te;
		else if (!re)
			rc->tout += te == TOUTSTATE;
		else if (te == TOUTSTATE)
			rc->touts++;
		else
			rc->badf++;
		if (!seen) {
			seen = true;
			__atomic_add_fetch(&rs->seen, 1, __ATOMIC_ACQ_REL);
		}
		after += re;
	}
	return NULL;
}

static void test_cache_close_race(void)
{
	char name[32];
	int ok = 0;

	for (int round = 0; round < RACE_ROUNDS; round++) {
		struct racer rc[RACE_THR];
		struct race rs = { 0, 0, 0 };
		int x, y = -1;

		snprintf(name, sizeof(name), "race-%d", round);
		x = clts_bound(name);
		for (int i = 0; i < RACE_THR; i++) {
			rc[i] = (struct racer){ .fd = x, .snd = i % 2 == 0,
						.name = name, .rs = &rs };
			REQUIRE(pthread_create(&rc[i].th, NULL, racer_main,
					       &rc[i]) == 0);
		}
		pause_ms(round % 4 * 5);
		CHECK_RET(t_close(x), 0);
		__atomic_store_n(&rs.closed, 1, __ATOMIC_RELEASE);
		/* no call that began before the close is left */
		for (int i = 0; i < 5000 && __atomic_load_n(&rs.seen,
				__ATOMIC_ACQUIRE) < RACE_THR; i++)
			pause_ms(1);
		REQUIRE(__atomic_load_n(&rs.seen, __ATOMIC_ACQUIRE) ==
			RACE_THR);
		if (round % 2) {
			y = t_open(CLTS, O_RDWR | O_NONBLOCK, NULL);
			REQUIRE(y >= 0);
		}
		__atomic_store_n(&rs.reopened, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < RACE_THR; i++) {
			pthread_join(rc[i].th, NULL);
			CHECK_EQ(rc[i].late, 0);
			CHECK_EQ(rc[i].bad, 0);
			if (y == x) {
				CHECK_EQ(rc[i].badf, 0);
			} else {
				CHECK_EQ(rc[i].tout, 0);
				CHECK_EQ(rc[i].touts, 0);
			}
			ok += rc[i].ok;
		}
		if (y >= 0)
			CHECK_RET(t_close(y), 0);
	}
	CHECK(ok > 0);
}

int main(void)
{
	test_ack_handover();
	test_statechng();
	test_quick_readers();
	test_full_duplex();
	test_churn();
	test_cache_same_thread();
	test_cache_other_thread();
	test_cache_fork();
	test_fork_reader();
	test_cache_close_race();
	T_DONE();
}
