/*
 * strperf-point -- measure one point (test, implementation, message size)
 * and print one JSON line.
 *
 *   strperf-point --test UDP_STREAM --impl sockets --size 64 --time 10 \
 *                 --bufsize 131071 [--rx-waitall]
 *   strperf-point --list		tests and implementations, as JSON
 *
 * How this works
 *
 *   Three processes.  The parent forks a receiver and a sender, then only
 *   supervises: it waits for each child's result on a pipe, enforces a hard
 *   deadline of --time + 30 s, kills and reaps both children on any failure
 *   or on SIGINT/SIGTERM/SIGHUP, and prints the JSON line.  Children die
 *   with the parent (PR_SET_PDEATHSIG).
 *
 *   The children synchronise over a SOCK_SEQPACKET socketpair:
 *
 *	receiver: rx_open, send RXADDR ------> sender: tx_open
 *	receiver: rx_accept  <------ TXADDR    (sender's own address)
 *	receiver: send READY ------>           sender: tx_ready, start
 *	                                               the clock
 *	                      <------ DONE     sender: time is up, close
 *	receiver: drain until idle, report
 *
 *   The sender sends as fast as it can until SIGALRM (setitimer, no
 *   SA_RESTART, repeating every 50 ms so a blocked call is always woken),
 *   then closes its endpoint and sends DONE.  The receiver receives in a
 *   plain blocking loop; a watcher thread reads the control socket and,
 *   once DONE has come and nothing has arrived for --idle-ms (or 2 s after
 *   DONE at most), interrupts the loop with SIGUSR1.  End of file on a
 *   byte stream ends it at once.
 *
 *   Rates: tx = messages the sender sent / the sender's measured time;
 *   rx = messages the receiver received / the same time.  For byte streams
 *   a message is --size bytes of the byte count.  In the request/response
 *   tests (*_RR) the sender is the client, the receiver answers each
 *   request, and tx = rx = completed round trips / time.
 *
 *   Exit status: 0 (status "ok" or "skipped"), 1 (status "error", JSON
 *   still printed), 2 (bad arguments, message on stderr only).
 *
 * Implementations are tables of functions (strperf-point.h); sp_impls[]
 * below lists them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strperf-point.h"

#define SP_VERSION	"1"
#define SP_MAX_STREAM	(16u << 20)	/* largest byte-stream message */
#define SP_MAX_UDP	65507		/* IPv4 UDP payload limit */
#define SP_MAX_TIME	3600.0
#define SP_MAX_BUF	(1 << 30)
#define SP_GRACE_S	30.0		/* default hard deadline slack */
#define SP_DRAIN_MAX_S	2.0		/* receiver drain bound after DONE */
#define SP_SETUP_MS	10000		/* each set-up step of a child */

/* ---- the tables ---- */

static const struct sp_test sp_tests[] = {
	{ "UDP_STREAM",  SP_FAM_UDP,  SP_MODE_STREAM, SP_MAX_UDP },
	{ "TCP_STREAM",  SP_FAM_TCP,  SP_MODE_STREAM, SP_MAX_STREAM },
	{ "UDP_RR",      SP_FAM_UDP,  SP_MODE_RR,     SP_MAX_UDP },
	{ "TCP_RR",      SP_FAM_TCP,  SP_MODE_RR,     SP_MAX_STREAM },
	{ "PIPE_STREAM", SP_FAM_PIPE, SP_MODE_STREAM, SP_MAX_STREAM },
};

/*
 * Every implementation, in the order reports list them.  Names repeat
 * across families ("sockets" is UDP for UDP_* and TCP for TCP_*).
 */
static const struct sp_impl *const sp_impls[] = {
	&sp_udp_sockets,
	&sp_udp_sockets_nice,
	&sp_tcp_sockets,
	&sp_tcp_sockets_nice,
	&sp_udp_xtios,
	&sp_udp_tpi,
	&sp_tcp_xtios,
	&sp_tcp_tpi,
	&sp_pipe_pipe,
	&sp_pipe_socketpair,
	&sp_pipe_streams,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const family_names[] = {
	[SP_FAM_UDP] = "udp", [SP_FAM_TCP] = "tcp", [SP_FAM_PIPE] = "pipe",
};

/* ---- shared helpers ---- */

static char sp_errbuf[256];
static struct sp_point point;
static int idle_ms = 200;
static double grace_s = SP_GRACE_S;	/* hard deadline: testtime + this */

/* --fault, for the tests of the watchdog: a child misbehaves on purpose */
enum { FAULT_NONE, FAULT_HANG_TX, FAULT_HANG_RX, FAULT_DIE_TX, FAULT_DIE_RX,
       FAULT_MUTE_RX,	/* RR server answers once, then never again */
       FAULT_STOP_RX };	/* stream receiver stops reading after one */
static int fault;

static void maybe_fault(int hang, int die)
{
	if (fault == hang)
		for (;;)
			pause();
	if (fault == die)
		_exit(3);
}

int sp_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sp_errbuf, sizeof(sp_errbuf), fmt, ap);
	va_end(ap);
	return -1;
}

void sp_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

int sp_set_sockbufs(struct sp_ep *ep, int fd)
{
	int v = ep->pt ? ep->pt->bufsize : 0;
	socklen_t len;

	if (v > 0 &&
	    (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) < 0 ||
	     setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0))
		return sp_fail("SO_SNDBUF/SO_RCVBUF %d: %s", v,
			       strerror(errno));
	len = sizeof(ep->sndbuf);
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &ep->sndbuf, &len) < 0)
		ep->sndbuf = -1;
	len = sizeof(ep->rcvbuf);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &ep->rcvbuf, &len) < 0)
		ep->rcvbuf = -1;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("strperf-point: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(try strperf-point --help)\n", stderr);
	exit(2);
}

/* ---- what the children tell each other and the parent ---- */

enum { CTL_RXADDR = 1, CTL_TXADDR, CTL_READY, CTL_DONE };

struct sp_ctl {
	uint32_t type;
	uint64_t count;
	struct sp_addr addr;
};

struct sp_result {
	int32_t status;		/* 0 ok, -1 failed */
	int32_t sndbuf, rcvbuf;
	uint64_t msgs;		/* datagrams, calls, or round trips */
	uint64_t bytes;
	uint64_t fails;		/* sends refused (ENOBUFS/EAGAIN) */
	uint64_t shorts;	/* datagrams of the wrong size */
	double elapsed;		/* sender: seconds it sent */
	double drain;		/* receiver: seconds from DONE to the end */
	int32_t drain_capped;
	double rr_wait_max;	/* sender, RR: longest time without a reply */
	char note[256];
	char info[160];		/* the implementation's ep->info */
};

static int ctl_send(int fd, uint32_t type, uint64_t count,
		    const struct sp_addr *a)
{
	struct sp_ctl m = { .type = type, .count = count };
	ssize_t n;

	if (a)
		m.addr = *a;
	do
		n = send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m))
		return sp_fail("control send: %s",
			       n < 0 ? strerror(errno) : "short");
	return 0;
}

/* Wait up to ms for a control message of the given type. */
static int ctl_recv(int fd, uint32_t type, struct sp_ctl *m, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return sp_fail("control: peer silent for %d ms", ms);
	do
		n = recv(fd, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return sp_fail("control: peer process went away");
	if (n != (ssize_t)sizeof(*m))
		return sp_fail("control recv: %s",
			       n < 0 ? strerror(errno) : "bad length");
	if (m->type != type)
		return sp_fail("control: got message %u, want %u", m->type,
			       type);
	if (m->addr.len > SP_ADDR_MAX)
		return sp_fail("control: address too long");
	return 0;
}

static void put_result(int fd, struct sp_result *r, int failed)
{
	ssize_t n;

	if (failed) {
		r->status = -1;
		snprintf(r->note, sizeof(r->note), "%s",
			 sp_errbuf[0] ? sp_errbuf : "failed");
	}
	do
		n = write(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
}

/* ---- the sender ---- */

/* 0 while the test runs; then counts SIGALRMs, one per 50 ms */
static volatile sig_atomic_t tx_stop;

/* a round trip in flight when time is up may finish within this many */
#define SP_RR_FINISH_TICKS	20
/* a wait for a reply this long is named in the point's note */
#define SP_RR_WAIT_NOTE_S	0.1

static void on_alarm(int sig)
{
	if (tx_stop < 1000)
		tx_stop++;
}

/* Keep this process (and the threads it starts later) on one CPU. */
static int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return sp_fail("sched_setaffinity(CPU %d): %s", cpu,
			       strerror(errno));
	return 0;
}

static int set_nice(int v, const char *who)
{
	if (v && setpriority(PRIO_PROCESS, 0, v) < 0)
		return sp_fail("%s setpriority(%d): %s", who, v,
			       strerror(errno));
	return 0;
}

static int arm_timer(double secs)
{
	struct itimerval it = { 0 };
	struct sigaction sa = { .sa_handler = on_alarm };

	sigemptyset(&sa.sa_mask);	/* no SA_RESTART: calls see EINTR */
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		return sp_fail("sigaction: %s", strerror(errno));
	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec = (suseconds_t)((secs - (time_t)secs) * 1e6);
	if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	it.it_interval.tv_usec = 50000;
	if (setitimer(ITIMER_REAL, &it, NULL) < 0)
		return sp_fail("setitimer: %s", strerror(errno));
	return 0;
}

static void disarm_timer(void)
{
	struct itimerval it = { 0 };

	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * One whole message for the request/response tests: a byte stream may take
 * several calls.  Returns 1 when done, 0 when stopped or at end of file,
 * -1 on error.  The client (stop != NULL) lets a round trip that is in
 * flight when time is up finish, for at most SP_RR_FINISH_TICKS alarms (a
 * lost datagram is never resent), so it does not close a connection with
 * a reply on the way.  The server sees the client's close, or a reset (or
 * for UDP a refused reply) if the client gave up, as the end.
 */
static int rr_xfer(struct sp_ep *ep, char *buf, int out,
		   volatile sig_atomic_t *stop, int *stopflag_atomic)
{
	const struct sp_impl *im = ep->pt->impl;
	size_t len = ep->pt->size, done = 0;
	ssize_t n;

	while (done < len) {
		if (out)
			n = im->send(ep, buf + done, len - done);
		else
			n = im->recv(ep, buf + done, len - done, 1);
		if (n > 0) {
			if (!im->byte_stream)
				return (size_t)n == len ? 1 : -1;
			done += n;
			continue;
		}
		if (n == 0)
			return 0;
		if (!stop && (errno == ECONNRESET || errno == EPIPE ||
			      errno == ECONNREFUSED))
			return 0;
		if (errno != EINTR)
			return sp_fail("%s: %s", out ? "send" : "recv",
				       strerror(errno));
		if ((stop && *stop > SP_RR_FINISH_TICKS) ||
		    (stopflag_atomic &&
		     __atomic_load_n(stopflag_atomic, __ATOMIC_RELAXED)))
			return 0;
	}
	return 1;
}

static int sender_run(struct sp_ep *ep, char *buf, struct sp_result *r)
{
	const struct sp_impl *im = ep->pt->impl;
	size_t len = ep->pt->size;
	double t0, t1;
	ssize_t n;
	int rc = 0;

	if (arm_timer(ep->pt->testtime) < 0)
		return -1;
	t0 = now_s();
	if (ep->pt->test->mode == SP_MODE_STREAM) {
		while (!tx_stop) {
			n = im->send(ep, buf, len);
			if (n > 0) {
				r->msgs++;
				r->bytes += n;
				if (!im->byte_stream && (size_t)n != len)
					r->shorts++;
			} else if (n < 0 && errno == EINTR) {
				continue;
			} else if (n < 0 && (errno == ENOBUFS ||
					     errno == EAGAIN)) {
				r->fails++;
			} else {
				rc = sp_fail("send: %s", n < 0 ?
					     strerror(errno) : "returned 0");
				break;
			}
		}
	} else {
		double t_last = t0, t;

		while (!tx_stop) {
			int a = rr_xfer(ep, buf, 1, &tx_stop, NULL), b;

			if (a <= 0) {
				rc = a;
				break;
			}
			r->bytes += len;
			b = rr_xfer(ep, buf, 0, &tx_stop, NULL);
			if (b <= 0) {
				rc = b;
				break;
			}
			r->msgs++;
			t = now_s();
			if (t - t_last > r->rr_wait_max)
				r->rr_wait_max = t - t_last;
			t_last = t;
		}
		/* a round trip that never completed (a lost datagram) */
		if (now_s() - t_last > r->rr_wait_max)
			r->rr_wait_max = now_s() - t_last;
	}
	t1 = now_s();
	disarm_timer();
	if (ep->pt->test->mode == SP_MODE_STREAM && im->byte_stream)
		r->msgs = r->bytes / len;
	r->elapsed = t1 - t0;
	return rc;
}

static int sender_main(int ctl, int res, struct sp_shared *sh)
{
	const struct sp_impl *im = point.impl;
	struct sp_ep ep = { .fd = -1, .lfd = -1, .pt = &point,
			    .sndbuf = -1, .rcvbuf = -1 };
	struct sp_result r = { 0 };
	struct sp_addr self = { 0 };
	struct sp_ctl m;
	char *buf = NULL;
	int i, failed = 1;

	if (pin_cpu(point.cpu_tx) < 0 ||
	    set_nice(im->nice_tx, "sender") < 0)
		goto out;
	buf = malloc(point.size);
	if (!buf) {
		sp_fail("out of memory for %zu bytes", point.size);
		goto out;
	}
	memset(buf, 'S', point.size);
	if (ctl_recv(ctl, CTL_RXADDR, &m, SP_SETUP_MS) < 0)
		goto out;
	if (im->tx_open(&ep, sh, &m.addr, &self) < 0)
		goto out;
	for (i = 0; i < SP_SHARED_FDS; i++)
		sp_close_fd(&sh->fd[i]);
	if (ctl_send(ctl, CTL_TXADDR, 0, &self) < 0)
		goto out;
	if (ctl_recv(ctl, CTL_READY, &m, SP_SETUP_MS) < 0)
		goto out;
	if (im->tx_ready && im->tx_ready(&ep) < 0)
		goto out;
	maybe_fault(FAULT_HANG_TX, FAULT_DIE_TX);
	if (sender_run(&ep, buf, &r) < 0)
		goto out;
	/* end of data for byte streams, before the receiver is told */
	im->close(&ep);
	if (ctl_send(ctl, CTL_DONE, r.msgs, NULL) < 0)
		goto out;
	r.sndbuf = ep.sndbuf;
	r.rcvbuf = ep.rcvbuf;
	failed = 0;
out:
	if (failed)
		im->close(&ep);
	snprintf(r.info, sizeof(r.info), "%s", ep.info);
	put_result(res, &r, failed);
	free(buf);
	return failed;
}

/* ---- the receiver ---- */

static int rx_stop;			/* atomic: watcher -> main loop */
static int rx_finished;			/* atomic: main loop -> watcher */
static uint64_t rx_bytes_seen;		/* atomic: main loop -> watcher */

struct watcher {
	pthread_t main_thread;
	int ctl;
	int failed;			/* the sender went away, or deadline */
	int done;			/* DONE received */
	int capped;			/* stopped by the drain bound */
	double t_done, t_end;
	char why[160];
};

static void on_usr1(int sig)
{
}

static void *watcher_main(void *arg)
{
	struct watcher *w = arg;
	struct pollfd p = { .fd = w->ctl, .events = POLLIN };
	double deadline = now_s() + point.testtime + grace_s * 0.8;
	double t_last = 0, now;
	uint64_t last = 0, cur;
	struct sp_ctl m;
	ssize_t n;

	while (!__atomic_load_n(&rx_finished, __ATOMIC_ACQUIRE)) {
		int stop = __atomic_load_n(&rx_stop, __ATOMIC_RELAXED);

		if (!stop && !w->done) {
			if (poll(&p, 1, 20) <= 0)
				goto check;
			n = recv(w->ctl, &m, sizeof(m), MSG_DONTWAIT);
			if (n == (ssize_t)sizeof(m) && m.type == CTL_DONE) {
				w->done = 1;
				w->t_done = t_last = now_s();
				last = __atomic_load_n(&rx_bytes_seen,
						       __ATOMIC_RELAXED);
			} else if (n == 0 || (n < 0 && errno != EAGAIN &&
					      errno != EINTR)) {
				w->failed = 1;
				snprintf(w->why, sizeof(w->why),
					 "sender went away before DONE");
				stop = 1;
			} else if (n > 0) {
				w->failed = 1;
				snprintf(w->why, sizeof(w->why),
					 "unexpected control message");
				stop = 1;
			}
		} else {
			struct timespec ts = { 0, 20 * 1000000L };

			nanosleep(&ts, NULL);
		}
check:
		now = now_s();
		if (w->done && !stop) {
			cur = __atomic_load_n(&rx_bytes_seen, __ATOMIC_RELAXED);
			if (cur != last) {
				last = cur;
				t_last = now;
			}
			if (now - t_last >= idle_ms / 1000.0) {
				stop = 1;
			} else if (now - w->t_done >= SP_DRAIN_MAX_S) {
				w->capped = 1;
				stop = 1;
			}
		}
		if (!stop && now > deadline) {
			w->failed = 1;
			snprintf(w->why, sizeof(w->why),
				 "receiver deadline passed without DONE: "
				 "the sender is stuck (in a send or its "
				 "close that never returns?)");
			stop = 1;
		}
		if (stop) {
			if (!__atomic_load_n(&rx_stop, __ATOMIC_RELAXED))
				w->t_end = now;
			__atomic_store_n(&rx_stop, 1, __ATOMIC_RELEASE);
			pthread_kill(w->main_thread, SIGUSR1);
		}
	}
	if (w->t_end == 0)
		w->t_end = now_s();
	return NULL;
}

static int receiver_run(struct sp_ep *ep, char *buf, struct sp_result *r)
{
	const struct sp_impl *im = ep->pt->impl;
	size_t len = ep->pt->size;
	ssize_t n;

	if (ep->pt->test->mode == SP_MODE_STREAM) {
		while (!__atomic_load_n(&rx_stop, __ATOMIC_RELAXED)) {
			n = im->recv(ep, buf, len, ep->pt->rx_waitall);
			if (n > 0) {
				r->msgs++;
				r->bytes += n;
				if (!im->byte_stream && (size_t)n != len)
					r->shorts++;
				__atomic_store_n(&rx_bytes_seen, r->bytes,
						 __ATOMIC_RELAXED);
				while (fault == FAULT_STOP_RX &&
				       !__atomic_load_n(&rx_stop,
							__ATOMIC_RELAXED)) {
					struct timespec ts = { 0, 10000000L };

					nanosleep(&ts, NULL);
				}
			} else if (n == 0) {
				break;		/* end of data */
			} else if (errno != EINTR) {
				return sp_fail("recv: %s", strerror(errno));
			}
		}
		if (im->byte_stream)
			r->msgs = r->bytes / len;
		return 0;
	}
	for (;;) {
		int a = rr_xfer(ep, buf, 0, NULL, &rx_stop), b;

		if (a <= 0)
			return a;
		r->bytes += len;
		__atomic_store_n(&rx_bytes_seen, r->bytes, __ATOMIC_RELAXED);
		b = rr_xfer(ep, buf, 1, NULL, &rx_stop);
		if (b <= 0)
			return b;
		r->msgs++;
		while (fault == FAULT_MUTE_RX &&
		       !__atomic_load_n(&rx_stop, __ATOMIC_RELAXED)) {
			struct timespec ts = { 0, 10 * 1000000L };

			nanosleep(&ts, NULL);
		}
	}
}

static int receiver_main(int ctl, int res, struct sp_shared *sh)
{
	const struct sp_impl *im = point.impl;
	struct sp_ep ep = { .fd = -1, .lfd = -1, .pt = &point,
			    .sndbuf = -1, .rcvbuf = -1 };
	struct sp_result r = { 0 };
	struct sp_addr self = { 0 };
	struct watcher w = { .ctl = ctl };
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct sp_ctl m;
	pthread_t tid;
	char *buf = NULL;
	int i, failed = 1, started = 0, rc;

	if (pin_cpu(point.cpu_rx) < 0 ||
	    set_nice(im->nice_rx, "receiver") < 0)
		goto out;
	buf = malloc(point.size);
	if (!buf) {
		sp_fail("out of memory for %zu bytes", point.size);
		goto out;
	}
	memset(buf, 'R', point.size);
	sigemptyset(&sa.sa_mask);	/* no SA_RESTART */
	if (sigaction(SIGUSR1, &sa, NULL) < 0) {
		sp_fail("sigaction: %s", strerror(errno));
		goto out;
	}
	if (im->rx_open(&ep, sh, &self) < 0)
		goto out;
	for (i = 0; i < SP_SHARED_FDS; i++)
		sp_close_fd(&sh->fd[i]);
	if (ctl_send(ctl, CTL_RXADDR, 0, &self) < 0)
		goto out;
	if (ctl_recv(ctl, CTL_TXADDR, &m, SP_SETUP_MS) < 0)
		goto out;
	if (im->rx_accept && im->rx_accept(&ep, &m.addr) < 0)
		goto out;
	w.main_thread = pthread_self();
	rc = pthread_create(&tid, NULL, watcher_main, &w);
	if (rc) {
		sp_fail("pthread_create: %s", strerror(rc));
		goto out;
	}
	started = 1;
	if (ctl_send(ctl, CTL_READY, 0, NULL) < 0)
		goto out;
	maybe_fault(FAULT_HANG_RX, FAULT_DIE_RX);
	if (receiver_run(&ep, buf, &r) < 0)
		goto out;
	failed = 0;
out:
	if (started) {
		__atomic_store_n(&rx_finished, 1, __ATOMIC_RELEASE);
		/* the watcher loops at most 20 ms more */
		pthread_join(tid, NULL);
		if (!failed && w.failed) {
			sp_fail("%s", w.why);
			failed = 1;
		}
		if (w.done)
			r.drain = w.t_end - w.t_done;
		else if (!failed)	/* end of file before DONE: wait */
			ctl_recv(ctl, CTL_DONE, &m, SP_SETUP_MS);
		r.drain_capped = w.capped;
	}
	r.sndbuf = ep.sndbuf;
	r.rcvbuf = ep.rcvbuf;
	im->close(&ep);
	snprintf(r.info, sizeof(r.info), "%s", ep.info);
	put_result(res, &r, failed);
	free(buf);
	return failed;
}

/* ---- the parent ---- */

static pid_t kids[2] = { -1, -1 };	/* receiver, sender */
static int kid_status[2];		/* their wait status, once reaped */
static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_signal;

static void on_term(int sig)
{
	int e = errno;

	got_signal = sig;
	if (sig_pipe[1] >= 0) {
		ssize_t r = write(sig_pipe[1], "x", 1);

		(void)r;
	}
	errno = e;
}

static void kill_kids(void)
{
	for (int i = 0; i < 2; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGKILL);
}

/* Reap both children; those still running after wait_s are killed. */
static void reap_kids(double wait_s)
{
	double end = now_s() + wait_s;
	int i, left;

	for (;;) {
		left = 0;
		for (i = 0; i < 2; i++) {
			if (kids[i] <= 0)
				continue;
			pid_t r = waitpid(kids[i], &kid_status[i], WNOHANG);

			if (r == kids[i] || (r < 0 && errno == ECHILD))
				kids[i] = -1;
			else
				left++;
		}
		if (!left)
			return;
		if (now_s() > end) {
			kill_kids();
			for (i = 0; i < 2; i++)
				if (kids[i] > 0) {
					while (waitpid(kids[i], &kid_status[i],
						       0) < 0 && errno == EINTR)
						;
					kids[i] = -1;
				}
			return;
		}
		struct timespec ts = { 0, 2 * 1000000L };

		nanosleep(&ts, NULL);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A measured number, or null when the point measured nothing. */
static void json_u64(const char *key, uint64_t v, int ok)
{
	if (ok)
		printf("\"%s\":%llu,", key, (unsigned long long)v);
	else
		printf("\"%s\":null,", key);
}

static void json_dbl(const char *key, const char *fmt, double v, int ok)
{
	printf("\"%s\":", key);
	if (ok)
		printf(fmt, v);
	else
		fputs("null", stdout);
	putchar(',');
}

/*
 * The JSON line.  Only an "ok" point has numbers: a skipped point or one
 * that failed has null in every measured field (and its note says why),
 * so no report can take it for a zero.
 */
static void print_json(const char *status, const char *note,
		       const struct sp_result *tx, const struct sp_result *rx)
{
	static const struct sp_result none;
	const struct sp_point *p = &point;
	int ok = !strcmp(status, "ok");
	double el, txr = 0, rxr = 0;
	uint64_t txm, rxm;

	if (!tx)
		tx = &none;
	if (!rx)
		rx = &none;
	el = tx->elapsed;
	txm = tx->msgs;
	rxm = p->test->mode == SP_MODE_RR ? tx->msgs : rx->msgs;
	if (el > 0) {
		txr = txm / el;
		rxr = rxm / el;
	}
	printf("{\"test\":\"%s\",\"impl\":\"%s\",\"family\":\"%s\","
	       "\"msg_size\":%zu,\"testtime\":%.6g,",
	       p->test->name, p->impl->name, family_names[p->test->family],
	       p->size, p->testtime);
	json_dbl("elapsed", "%.6f", el, ok);
	printf("\"bufsize\":%d,\"rx_waitall\":%s,\"cpu_tx\":%d,"
	       "\"cpu_rx\":%d,", p->bufsize, p->rx_waitall ? "true" : "false",
	       p->cpu_tx, p->cpu_rx);
	json_u64("tx_msgs", txm, ok);
	json_u64("rx_msgs", rxm, ok);
	json_dbl("tx_per_s", "%.1f", txr, ok);
	json_dbl("rx_per_s", "%.1f", rxr, ok);
	json_u64("tx_bytes", tx->bytes, ok);
	json_u64("rx_bytes", p->test->mode == SP_MODE_RR ?
		 tx->msgs * p->size : rx->bytes, ok);
	json_u64("tx_fail", tx->fails, ok);
	json_u64("rx_short", rx->shorts + tx->shorts, ok);
	json_u64("server_msgs", p->test->mode == SP_MODE_RR ? rx->msgs : 0,
		 ok);
	json_dbl("drain_s", "%.3f", rx->drain, ok);
	printf("\"tx_sndbuf\":%d,\"rx_rcvbuf\":%d,\"nice_tx\":%d,"
	       "\"nice_rx\":%d,\"version\":\"%s\",\"status\":\"%s\","
	       "\"note\":",
	       ok ? tx->sndbuf : -1, ok ? rx->rcvbuf : -1, p->impl->nice_tx,
	       p->impl->nice_rx, SP_VERSION, status);
	json_str(stdout, note);
	printf("}\n");
	fflush(stdout);
}

/* Read one result; 1 got it, 0 the child closed without one, -1 error. */
static int read_result(int fd, struct sp_result *r)
{
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(*r)) {
		n = read(fd, (char *)r + got, sizeof(*r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		got += n;
	}
	r->note[sizeof(r->note) - 1] = 0;
	r->info[sizeof(r->info) - 1] = 0;
	return 1;
}

static void child_setup(pid_t parent)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sp_close_fd(&sig_pipe[0]);
	sp_close_fd(&sig_pipe[1]);
}

/* Can a process lower its nice value to v here?  0 yes, else errno. */
static int probe_nice(int v)
{
	pid_t pid;
	int st;

	if (v >= 0)
		return 0;
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(setpriority(PRIO_PROCESS, 0, v) < 0 ? errno & 0x7f : 0);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EPERM;
}

static int run_point(void)
{
	struct sp_shared sh;
	struct sp_result res[2] = { { 0 } };	/* receiver, sender */
	int have[2] = { 0, 0 }, pfd[2][2] = { { -1, -1 }, { -1, -1 } };
	int ctl[2] = { -1, -1 }, i, e, failed = 0, rc = 1;
	char note[600] = "", why[300];
	double deadline;
	pid_t me = getpid();
	struct sigaction sa = { .sa_handler = on_term };

	for (i = 0; i < SP_SHARED_FDS; i++)
		sh.fd[i] = -1;
	if (point.impl->available &&
	    point.impl->available(&point, why, sizeof(why)) < 0) {
		print_json("skipped", why, NULL, NULL);
		return 0;
	}
	e = probe_nice(point.impl->nice_tx);
	if (e) {
		snprintf(why, sizeof(why),
			 "setpriority(%d) refused: %s (needs CAP_SYS_NICE)",
			 point.impl->nice_tx, strerror(e));
		print_json("skipped", why, NULL, NULL);
		return 0;
	}

	sigemptyset(&sa.sa_mask);
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGHUP, &sa, NULL) < 0) {
		snprintf(note, sizeof(note), "setup: %s", strerror(errno));
		goto out;
	}
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    pipe2(pfd[0], O_CLOEXEC) < 0 || pipe2(pfd[1], O_CLOEXEC) < 0) {
		snprintf(note, sizeof(note), "setup: %s", strerror(errno));
		goto out;
	}
	if (point.impl->prefork && point.impl->prefork(&point, &sh) < 0) {
		snprintf(note, sizeof(note), "prefork: %s", sp_errbuf);
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 2 && !got_signal; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			snprintf(note, sizeof(note), "fork: %s",
				 strerror(errno));
			goto out;
		}
		if (kids[i] == 0) {
			child_setup(me);
			sp_close_fd(&pfd[i][0]);
			sp_close_fd(&pfd[!i][0]);
			sp_close_fd(&pfd[!i][1]);
			sp_close_fd(&ctl[!i]);
			_exit(i == 0 ? receiver_main(ctl[0], pfd[0][1], &sh)
				     : sender_main(ctl[1], pfd[1][1], &sh));
		}
	}
	for (i = 0; i < SP_SHARED_FDS; i++)
		sp_close_fd(&sh.fd[i]);
	sp_close_fd(&ctl[0]);
	sp_close_fd(&ctl[1]);
	sp_close_fd(&pfd[0][1]);
	sp_close_fd(&pfd[1][1]);

	deadline = now_s() + point.testtime + grace_s;
	while (!(have[0] && have[1]) && !failed) {
		struct pollfd p[3];
		int n = 0, idx[3], r;
		double left = deadline - now_s();

		if (got_signal)
			break;
		if (left <= 0) {
			snprintf(note, sizeof(note),
				 "hard deadline (%.1f s) passed; killed",
				 point.testtime + grace_s);
			failed = 1;
			break;
		}
		for (i = 0; i < 2; i++)
			if (!have[i]) {
				p[n] = (struct pollfd){ pfd[i][0], POLLIN, 0 };
				idx[n++] = i;
			}
		p[n] = (struct pollfd){ sig_pipe[0], POLLIN, 0 };
		idx[n++] = -1;
		r = poll(p, n, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR) {
			snprintf(note, sizeof(note), "poll: %s",
				 strerror(errno));
			failed = 1;
			break;
		}
		for (int j = 0; r > 0 && j < n; j++) {
			if (!p[j].revents || idx[j] < 0)
				continue;
			i = idx[j];
			e = read_result(pfd[i][0], &res[i]);
			if (e <= 0) {
				snprintf(note, sizeof(note),
					 "%s died without a result",
					 i ? "sender" : "receiver");
				failed = 1;
				break;
			}
			have[i] = 1;
			if (res[i].status < 0)
				failed = 1;
		}
	}
	if (got_signal) {
		snprintf(note, sizeof(note), "interrupted by signal %d",
			 (int)got_signal);
		failed = 1;
	}
	if (failed) {
		kill_kids();
		/* say which side failed first, then what the other saw */
		for (i = 0; i < 2; i++)
			if (have[i] && res[i].status < 0) {
				size_t l = strlen(note);

				snprintf(note + l, sizeof(note) - l, "%s%s: %s",
					 l ? "; " : "",
					 i ? "sender" : "receiver",
					 res[i].note);
			}
		goto out;
	}
	reap_kids(5.0);
	/* a child that reported and then failed (a sanitizer, say) */
	for (i = 0; i < 2; i++)
		if (!WIFEXITED(kid_status[i]) || WEXITSTATUS(kid_status[i])) {
			snprintf(note, sizeof(note), "%s ended with %s %d "
				 "after its report", i ? "sender" : "receiver",
				 WIFEXITED(kid_status[i]) ? "status" : "signal",
				 WIFEXITED(kid_status[i]) ?
				 WEXITSTATUS(kid_status[i]) :
				 WTERMSIG(kid_status[i]));
			goto out;
		}
	{
		char info[800] = "";
		size_t l = 0;
		int lost = point.test->mode == SP_MODE_STREAM &&
			   point.impl->byte_stream && !res[0].drain_capped &&
			   res[0].bytes < res[1].bytes;

		if (res[0].drain_capped)
			l += snprintf(info + l, sizeof(info) - l,
				      "receiver still busy %.0f s after the "
				      "sender stopped; stopped it; ",
				      SP_DRAIN_MAX_S);
		if (res[1].fails)
			l += snprintf(info + l, sizeof(info) - l,
				      "%llu sends refused (ENOBUFS/EAGAIN); ",
				      (unsigned long long)res[1].fails);
		for (i = 1; i >= 0; i--)
			if (res[i].info[0])
				l += snprintf(info + l, sizeof(info) - l,
					      "%s: %s; ", i ? "sender" : "receiver",
					      res[i].info);
		if (point.test->mode == SP_MODE_RR &&
		    res[1].rr_wait_max >= SP_RR_WAIT_NOTE_S)
			l += snprintf(info + l, sizeof(info) - l,
				      "the client once waited %.2f s for a "
				      "reply (a lost message is not resent: "
				      "it stalls the round trips until time "
				      "is up); ", res[1].rr_wait_max);
		if (point.test->mode == SP_MODE_STREAM &&
		    res[0].msgs < res[1].msgs)
			l += snprintf(info + l, sizeof(info) - l,
				      "%llu messages sent but not received "
				      "(%.2f%%); ",
				      (unsigned long long)(res[1].msgs -
							   res[0].msgs),
				      100.0 * (res[1].msgs - res[0].msgs) /
					      res[1].msgs);
		if (l >= 2 && l < sizeof(info))
			info[l - 2] = 0;
		/* a byte stream that did not deliver what it took is broken:
		 * no rate stands for it */
		if (lost) {
			snprintf(note, sizeof(note), "the byte stream delivered "
				 "%llu of the %llu bytes sent%s%s",
				 (unsigned long long)res[0].bytes,
				 (unsigned long long)res[1].bytes,
				 info[0] ? "; " : "", info);
			goto out;
		}
		print_json("ok", info, &res[1], &res[0]);
	}
	rc = 0;
out:
	if (rc) {
		kill_kids();
		reap_kids(0);
		fprintf(stderr, "strperf-point: error: %s %s size %zu: %s\n",
			point.test->name, point.impl->name, point.size, note);
		print_json("error", note, have[1] ? &res[1] : NULL,
			   have[0] ? &res[0] : NULL);
	}
	for (i = 0; i < SP_SHARED_FDS; i++)
		sp_close_fd(&sh.fd[i]);
	sp_close_fd(&ctl[0]);
	sp_close_fd(&ctl[1]);
	for (i = 0; i < 2; i++) {
		sp_close_fd(&pfd[i][0]);
		sp_close_fd(&pfd[i][1]);
	}
	sp_close_fd(&sig_pipe[0]);
	sp_close_fd(&sig_pipe[1]);
	if (got_signal)
		return 128 + got_signal;
	return rc;
}

/* ---- command line ---- */

static const struct sp_test *find_test(const char *name)
{
	for (size_t i = 0; i < NELEM(sp_tests); i++)
		if (!strcmp(sp_tests[i].name, name))
			return &sp_tests[i];
	return NULL;
}

static const struct sp_impl *find_impl(const struct sp_test *t,
				       const char *name)
{
	for (size_t i = 0; i < NELEM(sp_impls); i++)
		if (sp_impls[i]->family == t->family &&
		    (sp_impls[i]->modes & t->mode) &&
		    !strcmp(sp_impls[i]->name, name))
			return sp_impls[i];
	return NULL;
}

static size_t max_size(const struct sp_test *t, const struct sp_impl *im)
{
	if (im->max_size && im->max_size < t->max_size)
		return im->max_size;
	return t->max_size;
}

static void list_json(void)
{
	size_t i, j;
	int first;

	printf("{\"version\":\"%s\",\"tests\":[", SP_VERSION);
	for (i = 0; i < NELEM(sp_tests); i++) {
		const struct sp_test *t = &sp_tests[i];

		printf("%s{\"name\":\"%s\",\"family\":\"%s\",\"mode\":\"%s\","
		       "\"max_size\":%zu,\"impls\":[", i ? "," : "", t->name,
		       family_names[t->family],
		       t->mode == SP_MODE_RR ? "rr" : "stream", t->max_size);
		first = 1;
		for (j = 0; j < NELEM(sp_impls); j++) {
			const struct sp_impl *im = sp_impls[j];

			if (im->family != t->family || !(im->modes & t->mode))
				continue;
			printf("%s{\"name\":\"%s\",\"max_size\":%zu,"
			       "\"byte_stream\":%s,\"nice_tx\":%d,"
			       "\"nice_rx\":%d,\"desc\":",
			       first ? "" : ",", im->name, max_size(t, im),
			       im->byte_stream ? "true" : "false",
			       im->nice_tx, im->nice_rx);
			json_str(stdout, im->desc);
			putchar('}');
			first = 0;
		}
		printf("]}");
	}
	printf("]}\n");
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
"usage: strperf-point --test TEST --impl IMPL --size BYTES [options]\n"
"       strperf-point --list\n"
"\n"
"Measure one point: a sender process sends BYTES-sized messages to a\n"
"receiver process as fast as it can for --time seconds (127.0.0.1 only),\n"
"and print one JSON line with the messages sent and received per second.\n"
"\n"
"  --test TEST       ");
	for (i = 0; i < NELEM(sp_tests); i++)
		fprintf(f, "%s%s", i ? ", " : "", sp_tests[i].name);
	fprintf(f,
"\n  --impl IMPL       implementation; --list shows which serve which test\n"
"  --size BYTES      message size, 1 .. the test's limit (UDP: %d)\n"
"  --time SECONDS    how long the sender sends (default 10; max %.0f)\n"
"  --bufsize BYTES   SO_SNDBUF and SO_RCVBUF on both ends, F_SETPIPE_SZ for\n"
"                    pipes; 0 keeps the system default (default 131071)\n"
"  --rx-waitall      byte streams: the receiver reads whole messages\n"
"                    (MSG_WAITALL or a read loop) instead of one call of\n"
"                    up to BYTES\n"
"  --cpu-tx CPU, --cpu-rx CPU\n"
"                    run the sender / the receiver (and the threads they\n"
"                    start) on that CPU only (default: wherever Linux\n"
"                    puts them)\n"
"  --idle-ms MS      receiver stops after the sender is done and nothing\n"
"                    arrived for MS milliseconds (default 200)\n"
"  --grace SECONDS   hard deadline is --time + SECONDS (default 30); then\n"
"                    both processes are killed and the point is an error\n"
"  --fault WHAT      for testing the watchdog: hang-tx, hang-rx, die-tx or\n"
"                    die-rx makes that process hang or die after set-up;\n"
"                    mute-rx: an RR server answers once, then no more;\n"
"                    stop-rx: a stream receiver reads once, then no more\n"
"  --list            print the tests and implementations as JSON\n"
"\n"
"Exit status: 0 ok or skipped, 1 measurement error (JSON still printed),\n"
"2 bad arguments.\n", SP_MAX_UDP, SP_MAX_TIME);
}

static int parse_ulong(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "test", required_argument, NULL, 't' },
		{ "impl", required_argument, NULL, 'i' },
		{ "size", required_argument, NULL, 's' },
		{ "time", required_argument, NULL, 'T' },
		{ "bufsize", required_argument, NULL, 'b' },
		{ "rx-waitall", no_argument, NULL, 'w' },
		{ "cpu-tx", required_argument, NULL, 'X' },
		{ "cpu-rx", required_argument, NULL, 'R' },
		{ "idle-ms", required_argument, NULL, 'I' },
		{ "grace", required_argument, NULL, 'g' },
		{ "fault", required_argument, NULL, 'f' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *tname = NULL, *iname = NULL, *sz = NULL;
	unsigned long long v;
	char *end;
	int c, list = 0;

	point.testtime = 10;
	point.bufsize = 131071;
	point.cpu_tx = point.cpu_rx = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			tname = optarg;
			break;
		case 'i':
			iname = optarg;
			break;
		case 's':
			sz = optarg;
			break;
		case 'T':
			errno = 0;
			point.testtime = strtod(optarg, &end);
			if (errno || *end || !*optarg ||
			    !isfinite(point.testtime) ||
			    point.testtime <= 0 || point.testtime > SP_MAX_TIME)
				die_usage("--time %s: want seconds, more than "
					  "0 and at most %.0f", optarg,
					  SP_MAX_TIME);
			break;
		case 'b':
			if (parse_ulong(optarg, &v) < 0 || v > SP_MAX_BUF)
				die_usage("--bufsize %s: want bytes, 0 .. %d",
					  optarg, SP_MAX_BUF);
			point.bufsize = (int)v;
			break;
		case 'w':
			point.rx_waitall = 1;
			break;
		case 'X':
		case 'R':
			if (parse_ulong(optarg, &v) < 0 || v >= CPU_SETSIZE)
				die_usage("--cpu-%s %s: want a CPU number, 0 .. "
					  "%d", c == 'X' ? "tx" : "rx", optarg,
					  CPU_SETSIZE - 1);
			if (c == 'X')
				point.cpu_tx = (int)v;
			else
				point.cpu_rx = (int)v;
			break;
		case 'I':
			if (parse_ulong(optarg, &v) < 0 || v < 10 || v > 10000)
				die_usage("--idle-ms %s: want 10 .. 10000",
					  optarg);
			idle_ms = (int)v;
			break;
		case 'g':
			errno = 0;
			grace_s = strtod(optarg, &end);
			if (errno || *end || !*optarg || !isfinite(grace_s) ||
			    grace_s < 1 || grace_s > SP_MAX_TIME)
				die_usage("--grace %s: want seconds, 1 .. %.0f",
					  optarg, SP_MAX_TIME);
			break;
		case 'f':
			if (!strcmp(optarg, "hang-tx"))
				fault = FAULT_HANG_TX;
			else if (!strcmp(optarg, "hang-rx"))
				fault = FAULT_HANG_RX;
			else if (!strcmp(optarg, "die-tx"))
				fault = FAULT_DIE_TX;
			else if (!strcmp(optarg, "die-rx"))
				fault = FAULT_DIE_RX;
			else if (!strcmp(optarg, "mute-rx"))
				fault = FAULT_MUTE_RX;
			else if (!strcmp(optarg, "stop-rx"))
				fault = FAULT_STOP_RX;
			else
				die_usage("--fault %s: want hang-tx, hang-rx, "
					  "die-tx, die-rx, mute-rx or stop-rx",
					  optarg);
			break;
		case 'l':
			list = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case '?':
			die_usage("unknown option, or option without its "
				  "value: %s", argv[optind - 1]);
			break;
		default:
			die_usage("bad option");
		}
	}
	if (optind < argc)
		die_usage("unexpected argument %s", argv[optind]);
	if (list) {
		list_json();
		return 0;
	}
	if (!tname)
		die_usage("--test is required");
	if (!iname)
		die_usage("--impl is required");
	if (!sz)
		die_usage("--size is required");
	point.test = find_test(tname);
	if (!point.test)
		die_usage("unknown test %s", tname);
	point.impl = find_impl(point.test, iname);
	if (!point.impl)
		die_usage("implementation %s does not serve %s (see --list)",
			  iname, tname);
	if (parse_ulong(sz, &v) < 0 || v == 0)
		die_usage("--size %s: want a whole number of bytes, at least 1",
			  sz);
	if (v > max_size(point.test, point.impl))
		die_usage("--size %llu: %s %s takes at most %zu bytes", v,
			  tname, iname, max_size(point.test, point.impl));
	point.size = (size_t)v;
	return run_point();
}
