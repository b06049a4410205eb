/*
 * bench_exec -- cost of the executive's primitives on this machine.
 *
 *   allocb+freeb       one pair, 64-byte buffer
 *   putnext hop        a message through 0/1/4/16 pass-through modules to a
 *                      sink; per-hop cost is (t(16) - t(0)) / 16
 *   putq+getq          a module whose put procedure queues and whose service
 *                      procedure dequeues and passes on, one message per entry
 *                      and 64 per entry
 *
 * Each figure is the median of --reps runs of about --ms milliseconds.
 * Output: a table on stdout, and CSV rows (name,value,unit) with --csv FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static int reps = 7;
static int run_ms = 200;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median over reps of ns per operation of fn(n) doing n operations. */
static double measure(void (*fn)(long), long calib)
{
	double v[64];
	long n = calib;

	/* size n so one run takes about run_ms */
	for (;;) {
		double t = now_s();
		fn(n);
		t = now_s() - t;
		if (t > run_ms / 4000.0 || n > (1L << 40))
			break;
		n *= 4;
	}
	{
		double t = now_s();
		fn(n);
		t = now_s() - t;
		n = (long)(n * (run_ms / 1000.0) / (t > 0 ? t : 1e-9)) + 1;
	}
	for (int r = 0; r < reps; r++) {
		double t = now_s();
		fn(n);
		v[r] = (now_s() - t) * 1e9 / n;
	}
	qsort(v, reps, sizeof(v[0]), cmp_d);
	return v[reps / 2];
}

static void b_alloc(long n)
{
	for (long i = 0; i < n; i++) {
		mblk_t *mp = allocb(64, BPRI_MED);
		__asm__ volatile("" : : "r"(mp) : "memory");
		freeb(mp);
	}
}

static struct stdata *cur;
static long sent;	/* messages sent into cur, to check delivery */

static void b_send(long n)
{
	queue_t *wq = cur->sd_wq;
	struct strthread *t = str_enter();
	for (long i = 0; i < n; i++) {
		mblk_t *mp = allocb(64, BPRI_MED);
		mp->b_wptr += 64;
		putnext(wq, mp);
	}
	str_exit(t);
	sent += n;
}

/* one message per entry: put() enters, the service runs on the way out */
static void b_srv1(long n)
{
	queue_t *wq = cur->sd_wq;
	for (long i = 0; i < n; i++) {
		mblk_t *mp = allocb(64, BPRI_MED);
		mp->b_wptr += 64;
		put(wq, mp);
	}
	sent += n;
}

/* 64 messages per entry: the service procedure drains them in one run */
static void b_srv64(long n)
{
	queue_t *wq = cur->sd_wq;
	for (long i = 0; i < n; i += 64) {
		struct strthread *t = str_enter();
		for (int k = 0; k < 64; k++) {
			mblk_t *mp = allocb(64, BPRI_MED);
			mp->b_wptr += 64;
			putnext(wq, mp);
		}
		str_exit(t);
		sent += 64;
	}
}

/* module "tsrvq": put always queues, service passes everything on */
static int sq_put(queue_t *q, mblk_t *mp)
{
	putq(q, mp);
	return 0;
}

static int sq_srv(queue_t *q)
{
	mblk_t *mp;
	while ((mp = getq(q)) != NULL) {
		if (!canputnext(q)) {
			putbq(q, mp);
			break;
		}
		putnext(q, mp);
	}
	return 0;
}

static int sq_open(queue_t *q, dev_t *d, int o, int s, cred_t *c) { return 0; }
static struct module_info sq_mi = { 0, "tsrvq", 0, INFPSZ, 1 << 20, 1 << 16 };
static struct qinit sq_ri = { sq_put, sq_srv, sq_open, NULL, NULL, &sq_mi, NULL };
static struct qinit sq_wi = { sq_put, sq_srv, NULL, NULL, NULL, &sq_mi, NULL };
static struct streamtab sq_tab = { &sq_ri, &sq_wi, NULL, NULL };
static struct fmodsw sq_mod = { .f_name = "tsrvq", .f_str = &sq_tab, .f_flag = D_MP };

static struct stdata *open_stack(const char *mod, int n)
{
	sent = 0;
	static const char *names[17];
	for (int i = 0; i < 17; i++)
		names[i] = i < n ? mod : NULL;
	return th_stream("tsink", names[0], names[1], names[2], names[3],
			 names[4], names[5], names[6], names[7], names[8],
			 names[9], names[10], names[11], names[12], names[13],
			 names[14], names[15], (const char *)NULL);
}

static FILE *csv;

/* A figure counts only if every message sent reached the driver. */
static void check_delivery(const char *what)
{
	long got = th_sink_count(cur);
	if (got != sent) {
		fprintf(stderr, "bench_exec: %s: sent %ld, delivered %ld\n",
			what, sent, got);
		exit(1);
	}
}

static struct stdata *open_stack(const char *mod, int n);

static void report(const char *name, double value, const char *unit)
{
	printf("  %-40s %10.1f %s\n", name, value, unit);
	if (csv)
		fprintf(csv, "%s,%.3f,%s\n", name, value, unit);
}

int main(int argc, char **argv)
{
	static const int depths[] = { 0, 1, 4, 16 };
	double hop[2][4];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
			csv = fopen(argv[++i], "w");
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
			run_ms = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--csv FILE] [--reps N] [--ms MS]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 64 || run_ms < 1) {
		fprintf(stderr, "bench_exec: --reps 1..64, --ms >= 1\n");
		return 2;
	}
	if (csv)
		fprintf(csv, "name,value,unit\n");
	th_register();
	if (register_strmod(&sq_mod) != 0)
		return 1;
	printf("STREAMS executive primitives (median of %d runs)\n", reps);
	report("allocb+freeb (64 B)", measure(b_alloc, 1024), "ns/pair");

	for (int k = 0; k < 2; k++) {
		const char *mod = k == 0 ? "tpass" : "tpassp";
		for (int d = 0; d < 4; d++) {
			char name[80];
			cur = open_stack(mod, depths[d]);
			if (cur == NULL)
				return 1;
			hop[k][d] = measure(b_send, 1024);
			check_delivery(mod);
			th_close(cur);
			snprintf(name, sizeof(name), "message through %2d %s modules",
				 depths[d], k == 0 ? "D_MP" : "perimeter");
			report(name, hop[k][d], "ns/msg");
		}
		report(k == 0 ? "putnext hop, D_MP module" :
		       "putnext hop, queue-pair perimeter module",
		       (hop[k][3] - hop[k][0]) / 16.0, "ns/hop");
	}
	cur = open_stack("tsrvq", 1);
	report("putq+getq via service, 1 msg per entry", measure(b_srv1, 1024),
	       "ns/msg");
	report("putq+getq via service, 64 msgs per entry",
	       measure(b_srv64, 1024), "ns/msg");
	check_delivery("tsrvq");
	th_close(cur);
	if (csv)
		fclose(csv);
	return 0;
}
