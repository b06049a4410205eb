/*
 * bench_pipe -- messages per second through a STREAMS pipe against a
 * Linux pipe and a UNIX-domain socketpair, measured in the same run.
 *
 * A writer thread writes messages of one size as fast as it can for the
 * test time, then stops; a reader thread reads them, asking for exactly
 * one message's size per call (so a byte stream gives one message per
 * read, as a message stream does).  The rate is messages received by the
 * reader per second, counted until it has read everything written; a run
 * where the reader did not get every byte is an error, not a figure.
 *
 *   impls: pipe (Linux), socketpair (AF_UNIX SOCK_STREAM),
 *          streams (s_pipe, write/read), streams-msg (putmsg/getmsg),
 *          with 0, 1, 4, 16 nullmod modules pushed on the writing end
 *   sizes: 1 64 1024 16384 by default
 *
 * Placement: on a machine whose cores share cache lines slowly, whether
 * the two threads run on one core or two decides the result more than
 * the implementation does, and an unpinned run lands either way.  So the
 * threads are pinned, the same way for every implementation:
 * --placement split (writer and reader on different CPUs, the default),
 * same (both on one CPU), or os (not pinned).
 *
 * Output: a table, and CSV rows
 * placement,impl,modules,size,msgs_per_s,ratio_to_pipe with --csv FILE.
 * --impls a,b runs only the named implementations (for profiling one;
 * without pipe the ratio column is 0).
 * Median of --reps runs of --ms milliseconds each.  Split placement also
 * measures how long a cache line takes to pass between the two CPUs,
 * before and after the table (row "split,handoff,0,64,BEFORE,AFTER"):
 * the state of the host, which moves the STREAMS rows by 2x and more.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <stropts.h>

enum impl { IMPL_PIPE, IMPL_SOCKPAIR, IMPL_STREAMS, IMPL_STREAMS_MSG };
static const char *impl_name[] = { "pipe", "socketpair", "streams",
				   "streams-msg" };

static int placement;		/* 0 split, 1 same, 2 os */
static const char *placement_name[] = { "split", "same", "os" };

static void pin(int which)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (placement == 2 || n < 1)
		return;
	CPU_ZERO(&set);
	CPU_SET(placement == 1 ? 0 : which % n, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct run {
	enum impl impl;
	int wfd, rfd;
	size_t size;
	double seconds;
	_Atomic int stop;
	long sent;		/* messages written */
	long got;		/* messages read */
	long err;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *writer(void *arg)
{
	struct run *r = arg;

	pin(0);
	char *buf = calloc(1, r->size);
	struct strbuf d = { 0, (int)r->size, buf };
	long n = 0;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		for (int k = 0; k < 64; k++) {
			int ok;
			if (r->impl == IMPL_STREAMS_MSG)
				ok = putmsg(r->wfd, NULL, &d, 0) == 0;
			else
				ok = write(r->wfd, buf, r->size) == (ssize_t)r->size;
			if (!ok) {
				r->err++;
				goto out;
			}
			n++;
		}
	}
out:
	r->sent = n;
	free(buf);
	/* end of data: the reader sees end of file once it has drained */
	close(r->wfd);
	return NULL;
}

static void *reader(void *arg)
{
	struct run *r = arg;

	pin(1);
	char *buf = malloc(r->size);
	long bytes = 0;
	int flags = 0;
	struct strbuf d = { (int)r->size, 0, buf };

	for (;;) {
		ssize_t k;
		if (r->impl == IMPL_STREAMS_MSG) {
			d.maxlen = (int)r->size;
			flags = 0;
			k = getmsg(r->rfd, NULL, &d, &flags) < 0 ? -1 : d.len;
		} else {
			k = read(r->rfd, buf, r->size);
		}
		if (k == 0 || (k < 0 && r->impl == IMPL_STREAMS_MSG &&
			       d.len <= 0))
			break;		/* end of file: writer closed */
		if (k < 0) {
			r->err++;
			break;
		}
		bytes += k;
	}
	r->got = bytes / (long)r->size;
	free(buf);
	return NULL;
}

static int open_pair(enum impl impl, int nmods, int fds[2])
{
	switch (impl) {
	case IMPL_PIPE:
		if (pipe(fds) != 0)
			return -1;
		/* the same buffer a STREAMS pipe end has (64 KiB) */
		fcntl(fds[1], F_SETPIPE_SZ, 65536);
		return 0;
	case IMPL_SOCKPAIR:
		return socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
	default:
		if (s_pipe(fds) != 0)
			return -1;
		for (int i = 0; i < nmods; i++)
			if (ioctl(fds[0], I_PUSH, "nullmod") != 0)
				return -1;
		return 0;
	}
}

/* One run: messages per second, or -1. */
static double one_run(enum impl impl, int nmods, size_t size, double secs)
{
	struct run r = { .impl = impl, .size = size, .seconds = secs };
	pthread_t tw, tr;
	int fds[2];
	double t0, t1;

	if (open_pair(impl, nmods, fds) != 0) {
		perror("bench_pipe: open");
		return -1;
	}
	r.wfd = fds[0];
	r.rfd = fds[1];
	if (impl == IMPL_PIPE) {
		r.wfd = fds[1];
		r.rfd = fds[0];
	}
	t0 = now_s();
	pthread_create(&tr, NULL, reader, &r);
	pthread_create(&tw, NULL, writer, &r);
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	atomic_store(&r.stop, 1);
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	t1 = now_s();
	close(r.rfd);
	if (r.err || r.got != r.sent) {
		fprintf(stderr, "bench_pipe: %s size %zu: sent %ld got %ld err %ld\n",
			impl_name[impl], size, r.sent, r.got, r.err);
		return -1;
	}
	return r.got / (t1 - t0);
}

/* ns per read() of 1 byte from /dev/zero: through the library's read()
 * (a descriptor that is not a stream) or libc's own read(). */
static double passthrough_ns(bool direct)
{
	ssize_t (*libc_read)(int, void *, size_t) =
		(ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	int fd = open("/dev/zero", O_RDONLY);
	char c;
	long n = 2000000;
	double t0, t1;

	if (fd < 0 || libc_read == NULL)
		return -1;
	t0 = now_s();
	for (long i = 0; i < n; i++)
		if ((direct ? libc_read(fd, &c, 1) : read(fd, &c, 1)) != 1)
			return -1;
	t1 = now_s();
	close(fd);
	return (t1 - t0) * 1e9 / n;
}

/*
 * One-way hand-off of a cache line between the writer's and the reader's
 * CPU (as pinned by --placement), in ns: two threads take turns bumping
 * one counter.  A STREAMS pipe's cost between two CPUs is such hand-offs
 * (queue, message, data), so this says which state the host is in: on
 * this kind of shared VM it is either about 60 ns or about 250 ns,
 * depending on where the host has placed the two vCPUs at the time.
 */
#define HANDOFF_N	200000
static _Atomic long handoff_line __attribute__((aligned(64)));

static void *handoff_peer(void *arg)
{
	(void)arg;
	pin(1);
	for (long i = 1; i < HANDOFF_N; i += 2) {
		while (atomic_load_explicit(&handoff_line,
					    memory_order_acquire) != i)
			;
		atomic_store_explicit(&handoff_line, i + 1,
				      memory_order_release);
	}
	return NULL;
}

static void *handoff_run(void *arg)
{
	double *ns = arg, t0;
	pthread_t t;

	pin(0);
	atomic_store(&handoff_line, 0);
	if (pthread_create(&t, NULL, handoff_peer, NULL) != 0) {
		*ns = -1;
		return NULL;
	}
	t0 = now_s();
	for (long i = 0; i < HANDOFF_N; i += 2) {
		while (atomic_load_explicit(&handoff_line,
					    memory_order_acquire) != i)
			;
		atomic_store_explicit(&handoff_line, i + 1,
				      memory_order_release);
	}
	pthread_join(t, NULL);
	*ns = (now_s() - t0) * 1e9 / HANDOFF_N;
	return NULL;
}

/* Median of three hand-offs (a thread of its own, so that the caller
 * stays unpinned); -1 if it could not run. */
static int cmp_d(const void *a, const void *b);
static double handoff_ns(void)
{
	double v[3];

	for (int k = 0; k < 3; k++) {
		pthread_t t;

		if (pthread_create(&t, NULL, handoff_run, &v[k]) != 0)
			return -1;
		pthread_join(t, NULL);
		if (v[k] < 0)
			return -1;
	}
	qsort(v, 3, sizeof(v[0]), cmp_d);
	return v[1];
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t sizes[16] = { 1, 64, 1024, 16384 };
	int nsizes = 4, reps = 3, ms = 300;
	static const int mods[] = { 0, 1, 4, 16 };
	FILE *csv = NULL;
	bool short_run = false;
	bool want[4] = { true, true, true, true };	/* --impls */
	double handoff[2] = { 0, 0 };	/* split only: ns before, after */

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv = fopen(argv[++i], "w");
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quick"))
			short_run = true;
		else if (!strcmp(argv[i], "--placement") && i + 1 < argc) {
			const char *p = argv[++i];
			placement = !strcmp(p, "split") ? 0 : !strcmp(p, "same")
				    ? 1 : !strcmp(p, "os") ? 2 : -1;
			if (placement < 0) {
				fprintf(stderr, "bench_pipe: --placement split|same|os\n");
				return 2;
			}
		}
		else if (!strcmp(argv[i], "--impls") && i + 1 < argc) {
			memset(want, 0, sizeof(want));
			for (char *p = strtok(argv[++i], ","); p;
			     p = strtok(NULL, ",")) {
				int k = IMPL_PIPE;
				while (k <= IMPL_STREAMS_MSG && strcmp(p, impl_name[k]))
					k++;
				if (k > IMPL_STREAMS_MSG) {
					fprintf(stderr, "bench_pipe: --impls "
						"pipe,socketpair,streams,streams-msg\n");
					return 2;
				}
				want[k] = true;
			}
		} else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			nsizes = 0;
			for (char *p = strtok(argv[++i], ","); p && nsizes < 16;
			     p = strtok(NULL, ","))
				sizes[nsizes++] = strtoul(p, NULL, 10);
		} else {
			fprintf(stderr, "usage: %s [--csv FILE] [--reps N] [--ms MS] "
				"[--sizes a,b,c] [--impls a,b] [--quick] "
				"[--placement split|same|os]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 31 || ms < 10 || nsizes < 1) {
		fprintf(stderr, "bench_pipe: bad arguments\n");
		return 2;
	}
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] < 1 || sizes[i] > 65536) {
			fprintf(stderr, "bench_pipe: sizes 1..65536\n");
			return 2;
		}
	signal(SIGPIPE, SIG_IGN);
	if (csv)
		fprintf(csv, "placement,impl,modules,size,msgs_per_s,ratio_to_pipe\n");
	printf("messages/s, writer and reader threads (%s CPUs), median of "
	       "%d x %d ms\n", placement_name[placement], reps, ms);
	if (placement == 0 && sysconf(_SC_NPROCESSORS_ONLN) > 1)
		handoff[0] = handoff_ns();
	printf("%-12s %4s %8s %14s %8s\n", "impl", "mods", "size", "msgs/s",
	       "x pipe");
	for (int s = 0; s < nsizes; s++) {
		double base = 0;
		for (int im = IMPL_PIPE; im <= IMPL_STREAMS_MSG; im++) {
			for (int m = 0; m < 4; m++) {
				double v[31];
				if (!want[im] || (im < IMPL_STREAMS && m > 0))
					break;
				if (short_run && m != 0 && m != 1)
					continue;
				for (int k = 0; k < reps; k++) {
					v[k] = one_run(im, mods[m], sizes[s],
						       ms / 1000.0);
					if (v[k] < 0)
						return 1;
				}
				qsort(v, reps, sizeof(v[0]), cmp_d);
				double med = v[reps / 2];
				if (im == IMPL_PIPE)
					base = med;
				/* without the pipe run there is no ratio: 0 */
				double ratio = base > 0 ? med / base : 0;
				printf("%-12s %4d %8zu %14.0f %8.2f\n",
				       impl_name[im], mods[m], sizes[s], med,
				       ratio);
				if (csv)
					fprintf(csv, "%s,%s,%d,%zu,%.0f,%.3f\n",
						placement_name[placement],
						impl_name[im], mods[m], sizes[s],
						med, ratio);
				fflush(stdout);
			}
		}
	}
	if (want[IMPL_PIPE]) {
		double v[3][2];
		for (int k = 0; k < 3; k++) {
			v[k][0] = passthrough_ns(true);
			v[k][1] = passthrough_ns(false);
		}
		double a[3] = { v[0][0], v[1][0], v[2][0] };
		double b[3] = { v[0][1], v[1][1], v[2][1] };
		qsort(a, 3, sizeof(a[0]), cmp_d);
		qsort(b, 3, sizeof(b[0]), cmp_d);
		printf("read() of a non-stream descriptor: libc %.1f ns, "
		       "through libstreams %.1f ns (%+.1f ns)\n", a[1], b[1],
		       b[1] - a[1]);
		if (csv)
			fprintf(csv, "%s,passthrough,0,1,%.1f,%.3f\n",
				placement_name[placement], b[1], b[1] / a[1]);
	}
	if (handoff[0] != 0) {
		/* the placement can change during the run: before and after */
		handoff[1] = handoff_ns();
		printf("cache-line hand-off between the two CPUs, one way: "
		       "%.1f ns before, %.1f ns after\n", handoff[0],
		       handoff[1]);
		if (csv)
			fprintf(csv, "%s,handoff,0,64,%.1f,%.1f\n",
				placement_name[placement], handoff[0],
				handoff[1]);
	}
	if (csv)
		fclose(csv);
	return 0;
}
