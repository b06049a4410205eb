/*
 * test_sth_stress -- many threads on one STREAMS pipe: two writers send
 * numbered records into one end (one with write, one with putmsg), a
 * reader takes them from the other in message mode; every record arrives
 * once, whole, and in order for its writer, through flow control (the
 * writers block and are woken many times).  Then the same with four
 * nullmod modules on the way (two pushed on each end), with the reader
 * polling before each read, and with a high water mark at the reader so
 * small that the writers sleep and are woken every few records; the
 * last case is repeated for two seconds (a race that reorders messages
 * shows only now and then); and read-side flushes landing while the
 * reader holds messages in its cache; and poll() beside modules pushed
 * and popped.  Meant to run clean under
 * ThreadSanitizer.
 */
#include "sth.h"

#include <sched.h>
#include <stdlib.h>

#define NWRITERS	2
#define RECSZ		48

static int nrec = 200000;	/* per writer; fewer under sanitizers */
static bool quiet;		/* no line per run */

struct rec {
	int writer;
	int seq;
	unsigned char fill[RECSZ - 2 * sizeof(int)];
};

struct wr {
	int fd, id, err, done;
};

static void *writer(void *arg)
{
	struct wr *w = arg;
	struct rec r;

	for (int i = 0; i < nrec; i++) {
		r.writer = w->id;
		r.seq = i;
		memset(r.fill, (unsigned char)(i + w->id), sizeof(r.fill));
		if (w->id == 0) {
			if (write(w->fd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
				w->err = errno;
				break;
			}
		} else {
			struct strbuf d = { 0, sizeof(r), (char *)&r };
			if (putmsg(w->fd, NULL, &d, 0) != 0) {
				w->err = errno;
				break;
			}
		}
		w->done++;
	}
	return NULL;
}

struct rd {
	int fd, use_poll;
	int slow;		/* pause now and then: writers must back up */
	int next[NWRITERS];
	int bad_len, bad_writer, bad_seq, bad_fill, total, err;
	int first_writer, first_want, first_got;	/* first bad seq */
};

static void *reader(void *arg)
{
	struct rd *r = arg;
	struct rec rec;
	int want = NWRITERS * nrec;

	while (r->total < want) {
		if (r->use_poll) {
			struct pollfd pf = { r->fd, POLLIN, 0 };
			if (poll(&pf, 1, 10000) != 1 || !(pf.revents & POLLIN)) {
				r->err = ETIMEDOUT;
				break;
			}
		}
		ssize_t k = read(r->fd, &rec, sizeof(rec));
		if (k < 0 && errno == EINTR)
			continue;
		if (k != (ssize_t)sizeof(rec)) {
			r->bad_len++;
			r->err = k < 0 ? errno : 0;
			break;
		}
		if (rec.writer < 0 || rec.writer >= NWRITERS) {
			r->bad_writer++;
			continue;
		}
		if (rec.seq != r->next[rec.writer] && r->bad_seq++ == 0) {
			r->first_writer = rec.writer;
			r->first_want = r->next[rec.writer];
			r->first_got = rec.seq;
		}
		r->next[rec.writer] = rec.seq + 1;
		if (r->slow && (r->total & 127) == 0) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
		for (size_t i = 0; i < sizeof(rec.fill); i++)
			if (rec.fill[i] != (unsigned char)(rec.seq + rec.writer)) {
				r->bad_fill++;
				break;
			}
		r->total++;
	}
	return NULL;
}

/* nmods nullmods; use_poll: the reader polls first; marks: a high water
 * mark at the reader (testmod pushed for it) so small that the writers
 * block every few records */
static void run(int nmods, int use_poll, int marks)
{
	int p[2];
	struct wr w[NWRITERS];
	struct rd r;
	pthread_t wt[NWRITERS], rt;
	long t0 = now_ms();
	struct strstats st0, st1;

	streams_stats(&st0);
	open_pipe(p);
	for (int i = 0; i < nmods; i++)
		CHECK_RET(ioctl(p[i % 2], I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGN), 0);
	if (marks)
		CHECK_RET(set_marks(p[1], (unsigned long)marks,
				    (unsigned long)marks / 4), 0);
	memset(&r, 0, sizeof(r));
	r.fd = p[1];
	r.slow = marks != 0;
	r.use_poll = use_poll;
	REQUIRE(pthread_create(&rt, NULL, reader, &r) == 0);
	for (int i = 0; i < NWRITERS; i++) {
		w[i] = (struct wr){ p[0], i, 0, 0 };
		REQUIRE(pthread_create(&wt[i], NULL, writer, &w[i]) == 0);
	}
	for (int i = 0; i < NWRITERS; i++) {
		pthread_join(wt[i], NULL);
		CHECK_EQ(w[i].err, 0);
		CHECK_EQ(w[i].done, nrec);
	}
	pthread_join(rt, NULL);
	CHECK_EQ(r.err, 0);
	CHECK_EQ(r.total, NWRITERS * nrec);
	CHECK_EQ(r.bad_len, 0);
	CHECK_EQ(r.bad_writer, 0);
	CHECK_EQ(r.bad_seq, 0);
	if (r.bad_seq != 0)
		fprintf(stderr, "%d modules%s, high water %d: writer %d: record"
			" %d arrived when %d was due\n", nmods,
			use_poll ? ", polling" : "", marks, r.first_writer,
			r.first_got, r.first_want);
	CHECK_EQ(r.bad_fill, 0);
	for (int i = 0; i < NWRITERS; i++)
		CHECK_EQ(r.next[i], nrec);
	CHECK_RET(nread(p[1], NULL), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	streams_stats(&st1);
	/* with the small high water mark the writers really were held
	 * back and let go again */
	if (marks)
		CHECK(st1.backenables > st0.backenables);
	if (!quiet)
		printf("%d modules%s, high water %d: %d records in %ld ms, "
	       "%llu back-enables\n", nmods, use_poll ? ", polling" : "",
	       marks, NWRITERS * nrec, now_ms() - t0,
	       (unsigned long long)(st1.backenables - st0.backenables));
}

/* ---- readers taking turns, then readers at once ----
 *
 * One writer sends numbered records; two threads read the same end,
 * first in turns of TURN records (each turn takes the reader lock's bias
 * from the other thread: revocation while the holder is away), then both
 * at once (revocation while the holder is inside).  Every record arrives
 * exactly once, and each reader sees increasing numbers. */
#define TURN	300

struct turns {
	int fd, n;
	int turn;		/* whose turn, -1: both at once; atomic */
	int next;		/* record due in turns; the turn's reader */
	int taken;		/* records read; atomic */
	unsigned char *seen;	/* per record; atomic */
	int bad_order, bad_len, err;	/* atomic */
};

struct turn_rd {
	struct turns *t;
	int id;
};

static void *turn_reader(void *arg)
{
	struct turn_rd *me = arg;
	struct turns *t = me->t;
	int last = -1;

	while (__atomic_load_n(&t->taken, __ATOMIC_ACQUIRE) < t->n) {
		int turn = __atomic_load_n(&t->turn, __ATOMIC_ACQUIRE);
		struct rec rec;

		if (turn >= 0 && turn != me->id) {
			sched_yield();
			continue;
		}
		ssize_t k = read(t->fd, &rec, sizeof(rec));
		if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd pf = { t->fd, POLLIN, 0 };
			(void)poll(&pf, 1, 10);
			continue;
		}
		if (k != (ssize_t)sizeof(rec) || rec.seq < 0 ||
		    rec.seq >= t->n) {
			__atomic_add_fetch(&t->bad_len, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&t->err, k < 0 ? errno : EPROTO,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&t->taken, t->n, __ATOMIC_RELEASE);
			break;
		}
		if (rec.seq <= last ||
		    (turn >= 0 && rec.seq != t->next))
			__atomic_add_fetch(&t->bad_order, 1, __ATOMIC_RELAXED);
		last = rec.seq;
		__atomic_add_fetch(&t->seen[rec.seq], 1, __ATOMIC_RELAXED);
		int got = __atomic_add_fetch(&t->taken, 1, __ATOMIC_ACQ_REL);
		if (turn >= 0) {
			t->next = rec.seq + 1;
			if (got % TURN == 0)
				__atomic_store_n(&t->turn,
						 got >= t->n / 2 ? -1 : 1 - me->id,
						 __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void *turn_writer(void *arg)
{
	struct turns *t = arg;
	struct rec r;

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < t->n; i++) {
		r.seq = i;
		if (write(t->fd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
			__atomic_store_n(&t->err, errno, __ATOMIC_RELAXED);
			break;
		}
	}
	return NULL;
}

static void turns(void)
{
	int p[2];
	struct turns t;
	struct turn_rd rd[2];
	struct turns w;
	pthread_t wt, rt[2];
	struct strstats st0, st1;

	streams_stats(&st0);
	open_pipe(p);
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGN), 0);
	CHECK_RET(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	memset(&t, 0, sizeof(t));
	t.fd = p[1];
	t.n = nrec;
	t.seen = calloc((size_t)t.n, 1);
	REQUIRE(t.seen != NULL);
	w = t;
	w.fd = p[0];
	for (int i = 0; i < 2; i++) {
		rd[i] = (struct turn_rd){ &t, i };
		REQUIRE(pthread_create(&rt[i], NULL, turn_reader, &rd[i]) == 0);
	}
	REQUIRE(pthread_create(&wt, NULL, turn_writer, &w) == 0);
	pthread_join(wt, NULL);
	pthread_join(rt[0], NULL);
	pthread_join(rt[1], NULL);
	CHECK_EQ(w.err, 0);
	CHECK_EQ(t.err, 0);
	CHECK_EQ(t.bad_len, 0);
	CHECK_EQ(t.bad_order, 0);
	CHECK_EQ(t.taken, t.n);
	int missing = 0, twice = 0;
	for (int i = 0; i < t.n; i++) {
		missing += t.seen[i] == 0;
		twice += t.seen[i] > 1;
	}
	CHECK_EQ(missing, 0);
	CHECK_EQ(twice, 0);
	free(t.seen);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	/* the turns gave the reader lock's bias to a thread and took it
	 * back more than once */
	streams_stats(&st1);
	CHECK(st1.bias_grants - st0.bias_grants >= 2);
	CHECK(st1.bias_revokes - st0.bias_revokes >= 1);
	printf("2 readers in turns of %d, then at once: %d records, %llu "
	       "biases given, %llu taken back\n", TURN, t.n,
	       (unsigned long long)(st1.bias_grants - st0.bias_grants),
	       (unsigned long long)(st1.bias_revokes - st0.bias_revokes));
}

/* ---- the biased lock itself (lock.c) ----
 *
 * A thread that earned the bias is inside on its fast path: another
 * thread's trylock fails (and leaves it the bias), a third thread's lock
 * waits until it leaves; a holder's own trylock fails, whichever way it
 * holds the lock. */
static struct strblock tb;
static int tb_in, tb_go, tb_v_in, tb_overlap;	/* atomic */

static void *tb_holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 64; i++) {
		strblock_lock(&tb);
		strblock_unlock(&tb);
	}
	strblock_lock(&tb);
	__atomic_store_n(&tb_in, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&tb_go, __ATOMIC_SEQ_CST))
		pause_ms(1);
	__atomic_store_n(&tb_in, 0, __ATOMIC_SEQ_CST);
	strblock_unlock(&tb);
	return NULL;
}

static void *tb_taker(void *arg)
{
	(void)arg;
	strblock_lock(&tb);
	if (__atomic_load_n(&tb_in, __ATOMIC_SEQ_CST))
		__atomic_store_n(&tb_overlap, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tb_v_in, 1, __ATOMIC_SEQ_CST);
	strblock_unlock(&tb);
	return NULL;
}

static void test_biased_lock(void)
{
	pthread_t h, v;

	REQUIRE(pthread_create(&h, NULL, tb_holder, NULL) == 0);
	while (!__atomic_load_n(&tb_in, __ATOMIC_SEQ_CST))
		pause_ms(1);
	CHECK(atomic_load(&tb.b_bias) != NULL);		/* it was biased */
	CHECK(!strblock_trylock(&tb));
	CHECK(!strblock_trylock(&tb));			/* still not */
	REQUIRE(pthread_create(&v, NULL, tb_taker, NULL) == 0);
	pause_ms(50);
	CHECK_EQ(__atomic_load_n(&tb_v_in, __ATOMIC_SEQ_CST), 0);
	__atomic_store_n(&tb_go, 1, __ATOMIC_SEQ_CST);
	pthread_join(h, NULL);
	pthread_join(v, NULL);
	CHECK_EQ(tb_v_in, 1);
	CHECK_EQ(tb_overlap, 0);
	/* the holder's own trylock fails: on the slow path, then (taking
	 * it again and again) on the fast one */
	int nested = 0;
	for (int i = 0; i < 1 << 12; i++) {
		strblock_lock(&tb);
		if (strblock_trylock(&tb)) {
			nested++;
			strblock_unlock(&tb);
		}
		strblock_unlock(&tb);
	}
	CHECK_EQ(nested, 0);
	CHECK(atomic_load(&tb.b_bias) == str_self());
	CHECK(strblock_trylock(&tb));
	strblock_unlock(&tb);
}

/* ---- a high priority message behind ordinary data ----
 *
 * A reader blocked in getmsg(RS_HIPRI) behind an ordinary message must
 * wake for each high priority message that comes, however its arrival
 * falls against the reader's look at the queue.  A missed wake-up is
 * reported after HP_SECS (an ordinary message then wakes the reader, so
 * the test ends instead of hanging). */
#define HP_N	20000
#define HP_SECS	20

struct hp {
	int wfd, rfd;
	int got;		/* atomic: messages the reader has */
	int bad, stuck;		/* atomic */
};

static void *hp_reader(void *arg)
{
	struct hp *h = arg;

	for (int i = 0; i < HP_N &&
			!__atomic_load_n(&h->stuck, __ATOMIC_SEQ_CST); i++) {
		int v = -1, fl = RS_HIPRI;
		struct strbuf c = { sizeof(v), 0, (char *)&v };
		int r;

		while ((r = getmsg(h->rfd, &c, NULL, &fl)) < 0 &&
		       errno == EINTR)
			;
		if (r != 0 || c.len != sizeof(v) || v != i) {
			__atomic_store_n(&h->bad, 1, __ATOMIC_SEQ_CST);
			break;
		}
		__atomic_store_n(&h->got, i + 1, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&h->got, HP_N, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_hipri_wakeup(void)
{
	struct hp h = { 0 };
	int p[2];
	pthread_t rt;
	unsigned seed = 1;

	open_pipe(p);
	h.wfd = p[0];
	h.rfd = p[1];
	CHECK_RET(write(p[0], "d", 1), 1);	/* ordinary, stays in front */
	REQUIRE(pthread_create(&rt, NULL, hp_reader, &h) == 0);
	for (int i = 0; i < HP_N && !h.bad; i++) {
		struct strbuf c = { 0, sizeof(i), (char *)&i };
		long t0 = now_ms();

		/* one high priority message at a time (the head keeps one) */
		while (__atomic_load_n(&h.got, __ATOMIC_SEQ_CST) < i) {
			if (now_ms() - t0 > HP_SECS * 1000) {
				__atomic_store_n(&h.stuck, 1, __ATOMIC_SEQ_CST);
				break;
			}
			sched_yield();
		}
		if (h.stuck)
			break;
		/* now and then let the reader fall asleep first */
		seed = seed * 1103515245 + 12345;
		for (unsigned k = (seed >> 16) % 2000; k > 0; k--)
			__asm__ volatile("" ::: "memory");
		if (putmsg(p[0], &c, NULL, RS_HIPRI) != 0) {
			h.bad = 1;
			break;
		}
	}
	if (h.stuck)
		CHECK_RET(write(p[0], "e", 1), 1);	/* wakes it to end */
	pthread_join(rt, NULL);
	CHECK_EQ(h.stuck, 0);
	CHECK_EQ(h.bad, 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* A read-side flush (I_FLUSH here; M_FLUSH alike) while the reader holds
 * its lock, with messages in its cache: the flush leaves the cache to
 * the reader, who must drop it and give its bytes back before it lets
 * go.  Otherwise poll says there is nothing to read while the queue,
 * still charged with the flushed bytes, keeps the writer flow
 * controlled: a poll-driven reader and its writer both wait for good. */
struct fl {
	int rfd;
	int go, done, stop;	/* atomic */
};

static void *fl_flusher(void *arg)
{
	struct fl *f = arg;
	unsigned seed = 7;

	for (;;) {
		while (!__atomic_load_n(&f->go, __ATOMIC_ACQUIRE)) {
			if (__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE))
				return NULL;
			sched_yield();
		}
		__atomic_store_n(&f->go, 0, __ATOMIC_RELAXED);
		seed = seed * 1103515245 + 12345;
		for (unsigned k = (seed >> 16) % 400; k > 0; k--)
			__asm__ volatile("" ::: "memory");
		ioctl(f->rfd, I_FLUSH, FLUSHR);
		__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	}
}

static void test_flush_while_reading(void)
{
	struct fl f = { 0 };
	char buf[1024];
	int p[2], stuck = 0, n = 0;
	pthread_t ft;
	long end = now_ms() + 1500;

	memset(buf, 'x', sizeof(buf));
	open_pipe(p);
	f.rfd = p[1];
	set_nonblock(p[0], true);
	set_nonblock(p[1], true);
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGD), 0);
	REQUIRE(pthread_create(&ft, NULL, fl_flusher, &f) == 0);
	for (; n < 20000 && now_ms() < end && !stuck; n++) {
		while (write(p[0], buf, sizeof(buf)) == (ssize_t)sizeof(buf))
			;			/* up to flow control */
		(void)!read(p[1], buf, 1);	/* the run into the cache */
		__atomic_store_n(&f.done, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&f.go, 1, __ATOMIC_RELEASE);
		for (int k = 0; k < 3; k++)
			(void)!read(p[1], buf, 1);
		while (!__atomic_load_n(&f.done, __ATOMIC_ACQUIRE))
			sched_yield();
		struct pollfd pf = { p[1], POLLIN, 0 };
		int ready = poll(&pf, 1, 0);
		if (write(p[0], buf, 1) == 1)
			(void)!read(p[1], buf, 1);
		else if (ready == 0)
			stuck++;	/* nothing to read, yet no room */
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
	pthread_join(ft, NULL);
	CHECK_EQ(stuck, 0);
	CHECK(n > 20);		/* (fewer beside busy processes) */
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* poll() on a stream while its modules are pushed and popped: poll arms
 * the stream's mirror, which looks at the queues below the head (can a
 * write go on?); it used to do that outside the library's entry, so a
 * popped module's queues could be freed under it (ASan: use after
 * free). */
struct pp {
	int fd;
	_Atomic int stop;
	long polls;
};

static void *pp_poller(void *arg)
{
	struct pp *a = arg;

	while (!atomic_load(&a->stop)) {
		struct pollfd pf = { a->fd, POLLOUT | POLLWRBAND | POLLIN, 0 };
		if (poll(&pf, 1, 0) < 0)
			break;
		a->polls++;
	}
	return NULL;
}

static void test_poll_beside_pop(void)
{
	struct pp a = { 0 };
	pthread_t t;
	int p[2], rounds = 0, bad = 0;
	long end = now_ms() + 1000;

	open_pipe(p);
	a.fd = p[0];
	REQUIRE(pthread_create(&t, NULL, pp_poller, &a) == 0);
	while (now_ms() < end) {
		if (ioctl(p[0], I_PUSH, "nullmod") != 0 ||
		    ioctl(p[0], I_POP, 0) != 0)
			bad++;
		rounds++;
	}
	atomic_store(&a.stop, 1);
	pthread_join(t, NULL);
	CHECK_EQ(bad, 0);
	CHECK(a.polls > 0 && rounds > 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

int main(void)
{
	/* sanitizers slow everything down several times */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	nrec = 20000;
#endif
	th_mark();
	test_poll_beside_pop();
	test_flush_while_reading();
	test_hipri_wakeup();
	test_biased_lock();
	turns();
	run(0, 0, 0);
	run(4, 0, 0);
	run(4, 1, 0);
	nrec /= 4;
	run(0, 0, 4 * RECSZ);
	run(4, 1, 4 * RECSZ);
	/* then, for two seconds, the case most likely to show a message
	 * overtaking another: four nullmods whose queues are often flow
	 * controlled while their service procedures run on workers */
	long end = now_ms() + 2000;
	int reps = 0;
	quiet = true;
	while (now_ms() < end && t_failed == 0) {
		run(4, 0, 64 * RECSZ);
		reps++;
	}
	printf("4 modules, high water %d: %d runs of %d records\n",
	       64 * RECSZ, reps, NWRITERS * nrec);
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
