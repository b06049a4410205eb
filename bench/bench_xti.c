/*
 * bench_xti -- the cost of one XTI data call, against the stream calls
 * underneath it, measured in the same run.
 *
 * One thread, two endpoints of a loopback provider: it sends a batch of
 * messages from one to the other, then receives them, and again, timing
 * the sends and the receives apart.  The figure is nanoseconds per call.
 *
 *   clts: t_sndudata / t_rcvudata over /dev/ticlts (one datagram each)
 *   cots: t_snd / t_rcv over /dev/ticots (one TSDU each)
 *   and, as the floor, putmsg / getmsg of the same TPI primitives
 *   (T_UNITDATA_REQ, T_DATA_REQ; the indications read back) on the same
 *   streams: what the library adds is the difference.
 *
 * Options: --msgs N per measurement (default 200000), --size B bytes per
 * message (1), --batch K messages between receives (256), --reps R
 * (5): the median of R measurements is printed, with the lowest.
 * --only clts-xti|clts-raw|cots-xti|cots-raw runs one line (for perf).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stropts.h>
#include <sys/tihdr.h>
#include <xti.h>

static long nmsgs = 200000;
static int size = 1, batch = 256, reps = 5;
static const char *only;		/* one line, or NULL for all */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void die(const char *what)
{
	t_error(what);
	exit(1);
}

/* The two sides of one measurement: send one message, receive one. */
struct pair {
	int a, b;			/* sender, receiver */
	char *buf, *rbuf;
	int (*snd)(struct pair *p);
	int (*rcv)(struct pair *p);
};

/* ns per send and per receive, one measurement. */
static void measure(struct pair *p, double *snd, double *rcv)
{
	double ts = 0, tr = 0;

	for (long i = 0; i < nmsgs; i += batch) {
		double t0 = now_ns(), t1, t2;
		for (int k = 0; k < batch; k++)
			if (p->snd(p) != 0)
				die("send");
		t1 = now_ns();
		for (int k = 0; k < batch; k++)
			if (p->rcv(p) != 0)
				die("receive");
		t2 = now_ns();
		ts += t1 - t0;
		tr += t2 - t1;
	}
	*snd = ts / (double)nmsgs;
	*rcv = tr / (double)nmsgs;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static void report(const char *name, const char *which, struct pair *p,
		   const char *sn, const char *rn)
{
	double s[64], r[64];
	int n = reps > 64 ? 64 : reps;
	char line[32];

	snprintf(line, sizeof(line), "%s-%s", name, which);
	if (only != NULL && strcmp(only, line) != 0)
		return;

	for (int i = 0; i < n; i++)
		measure(p, &s[i], &r[i]);
	qsort(s, (size_t)n, sizeof(s[0]), cmp_d);
	qsort(r, (size_t)n, sizeof(r[0]), cmp_d);
	printf("%-5s %-11s %7.1f ns (min %6.1f)   %-11s %7.1f ns (min %6.1f)\n",
	       name, sn, s[n / 2], s[0], rn, r[n / 2], r[0]);
}

/* ---- connectionless ---- */

static struct t_unitdata sud, rud;
static char srcaddr[64];

static int x_sndudata(struct pair *p)
{
	return t_sndudata(p->a, &sud);
}

static int x_rcvudata(struct pair *p)
{
	int fl;

	return t_rcvudata(p->b, &rud, &fl);
}

static struct {
	struct T_unitdata_req r;
	char addr[4];
} ureq;

static int raw_put_udata(struct pair *p)
{
	struct strbuf c = { 0, (int)(sizeof(ureq.r) + 1), (char *)&ureq };
	struct strbuf d = { 0, size, p->buf };

	return putmsg(p->a, &c, &d, 0);
}

static int raw_get(struct pair *p)
{
	char cb[128];
	struct strbuf c = { sizeof(cb), 0, cb };
	struct strbuf d = { size, 0, p->rbuf };
	int fl = 0;

	return getmsg(p->b, &c, &d, &fl) == 0 && d.len == size ? 0 : -1;
}

static void bind_name(int fd, const char *name, unsigned qlen)
{
	struct t_bind req;

	memset(&req, 0, sizeof(req));
	if (name != NULL) {
		req.addr.buf = (char *)name;
		req.addr.len = (unsigned)strlen(name);
	}
	req.qlen = qlen;
	if (t_bind(fd, &req, NULL) != 0)
		die("t_bind");
}

static void bench_clts(struct pair *p)
{
	p->a = t_open("/dev/ticlts", O_RDWR, NULL);
	p->b = t_open("/dev/ticlts", O_RDWR, NULL);
	if (p->a < 0 || p->b < 0)
		die("t_open /dev/ticlts");
	bind_name(p->a, "A", 0);
	bind_name(p->b, "B", 0);
	memset(&sud, 0, sizeof(sud));
	sud.addr.buf = "B";
	sud.addr.len = 1;
	sud.udata.buf = p->buf;
	sud.udata.len = (unsigned)size;
	memset(&rud, 0, sizeof(rud));
	rud.addr.buf = srcaddr;
	rud.addr.maxlen = sizeof(srcaddr);
	rud.udata.buf = p->rbuf;
	rud.udata.maxlen = (unsigned)size;
	ureq.r.PRIM_type = T_UNITDATA_REQ;
	ureq.r.DEST_length = 1;
	ureq.r.DEST_offset = sizeof(ureq.r);
	ureq.addr[0] = 'B';

	p->snd = x_sndudata;
	p->rcv = x_rcvudata;
	report("clts", "xti", p, "t_sndudata", "t_rcvudata");
	p->snd = raw_put_udata;
	p->rcv = raw_get;
	report("clts", "raw", p, "putmsg", "getmsg");
	t_close(p->a);
	t_close(p->b);
}

/* ---- connection mode ---- */

static int x_snd(struct pair *p)
{
	return t_snd(p->a, p->buf, (unsigned)size, 0) == size ? 0 : -1;
}

static int x_rcv(struct pair *p)
{
	int fl;

	return t_rcv(p->b, p->rbuf, (unsigned)size, &fl) == size ? 0 : -1;
}

static int raw_put_data(struct pair *p)
{
	struct T_data_req dr = { T_DATA_REQ, 0 };
	struct strbuf c = { 0, sizeof(dr), (char *)&dr };
	struct strbuf d = { 0, size, p->buf };

	return putmsg(p->a, &c, &d, 0);
}

static void bench_cots(struct pair *p)
{
	struct t_call sc, lc, ac;
	int srv = t_open("/dev/ticots", O_RDWR, NULL);
	int cli = t_open("/dev/ticots", O_RDWR | O_NONBLOCK, NULL);

	if (srv < 0 || cli < 0)
		die("t_open /dev/ticots");
	bind_name(srv, "bench-xti-srv", 1);
	bind_name(cli, NULL, 0);
	memset(&sc, 0, sizeof(sc));
	sc.addr.buf = "bench-xti-srv";
	sc.addr.len = 13;
	if (t_connect(cli, &sc, NULL) == 0 || t_errno != TNODATA)
		die("t_connect");
	memset(&lc, 0, sizeof(lc));
	if (t_listen(srv, &lc) != 0)
		die("t_listen");
	memset(&ac, 0, sizeof(ac));
	ac.sequence = lc.sequence;
	if (t_accept(srv, srv, &ac) != 0)
		die("t_accept");
	if (t_rcvconnect(cli, NULL) != 0)
		die("t_rcvconnect");
	fcntl(cli, F_SETFL, 0);

	p->a = cli;
	p->b = srv;
	p->snd = x_snd;
	p->rcv = x_rcv;
	report("cots", "xti", p, "t_snd", "t_rcv");
	p->snd = raw_put_data;
	p->rcv = raw_get;
	report("cots", "raw", p, "putmsg", "getmsg");
	t_close(cli);
	t_close(srv);
}

int main(int argc, char **argv)
{
	struct pair p;

	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--msgs") == 0)
			nmsgs = atol(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--size") == 0)
			size = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--batch") == 0)
			batch = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--reps") == 0)
			reps = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--only") == 0)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--msgs N] [--size B] "
				"[--batch K] [--reps R] [--only LINE]\n", argv[0]);
			return 2;
		}
	}
	if (nmsgs < 1 || size < 1 || size > 65536 || batch < 1 || reps < 1) {
		fprintf(stderr, "bench_xti: bad option value\n");
		return 2;
	}
	nmsgs = (nmsgs + batch - 1) / batch * batch;
	memset(&p, 0, sizeof(p));
	p.buf = calloc(1, (size_t)size);
	p.rbuf = calloc(1, (size_t)size);
	if (p.buf == NULL || p.rbuf == NULL)
		return 1;
	printf("bench_xti: %ld messages of %d bytes, batches of %d, median "
	       "of %d\n", nmsgs, size, batch, reps);
	bench_clts(&p);
	bench_cots(&p);
	free(p.buf);
	free(p.rbuf);
	return 0;
}
