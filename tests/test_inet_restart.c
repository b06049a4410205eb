/*
 * test_inet_restart -- a signal caught with SA_RESTART does not end a
 * blocking read of a stream over a kernel socket; one caught without it
 * does (EINTR).
 *
 * The readers of /dev/udp, /dev/inet/udp and /dev/tcp sleep in ppoll on
 * the socket, which Linux never restarts (sth_restart.c).  For each, a
 * thread blocks in getmsg; the test sends it signals whose handlers were
 * installed with sigaction(SA_RESTART) and with signal() (BSD semantics:
 * restarting), checks that each handler ran and the reader still waits,
 * then sends data, which the reader must get.  Then the handler is
 * installed again without SA_RESTART, and the same signal must end the
 * wait with EINTR -- also when it is changed with signal() compiled as
 * ISO C (sysv_signal: not restarting) between two signals.  A restarting
 * signal the reader's thread blocks stays pending without making the
 * reader spin.  A first handler with SA_RESTART, installed while the
 * reader of a process that caught nothing waits, does not end the wait.
 */
#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

static int rfd;
static int rerr;
static int rgot;		/* atomic: -2 while the reader waits */
static int rlen;
static char rbuf[64];
static int ran[NSIG];		/* atomic: handler calls per signal */
static sigset_t rblock;		/* what the reader blocks */

static void on_sig(int s)
{
	__atomic_add_fetch(&ran[s], 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	int r;

	(void)arg;
	pthread_sigmask(SIG_BLOCK, &rblock, NULL);
	r = getmsg_data(rfd, rbuf, sizeof(rbuf), &rlen);
	rerr = r < 0 ? errno : 0;
	__atomic_store_n(&rgot, r, __ATOMIC_RELEASE);
	return NULL;
}

static int waiting(void)
{
	return __atomic_load_n(&rgot, __ATOMIC_ACQUIRE) == -2;
}

static void start(pthread_t *t, int fd)
{
	rfd = fd;
	rgot = -2;
	rlen = -1;
	REQUIRE(pthread_create(t, NULL, reader, NULL) == 0);
	pause_ms(50);			/* asleep by now */
	CHECK(waiting());
}

#ifndef __SANITIZE_THREAD__

/* Five signals sig to the waiting reader t: each handler must run and
 * the reader must go on waiting. */
static void poke_restart(pthread_t t, int sig)
{
	int before = __atomic_load_n(&ran[sig], __ATOMIC_RELAXED);

	for (int i = 0; i < 5; i++) {
		pthread_kill(t, sig);
		pause_ms(20);
	}
	CHECK_EQ(__atomic_load_n(&ran[sig], __ATOMIC_RELAXED), before + 5);
	CHECK(waiting());
}
#endif


static void install(int sig, int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = flags;
	CHECK_RET(sigaction(sig, &sa, NULL), 0);
}

/* The reader's wait on fd; send() makes the data it must then get. */
static void check_waits(int fd, void (*send)(void *), void *arg)
{
	pthread_t t;

#ifndef __SANITIZE_THREAD__
	/* restarting: sigaction with SA_RESTART, and signal().  (Not under
	 * ThreadSanitizer, whose own handler takes the signal and delivers
	 * it again later, into a wait that then fails with EINTR.) */
	install(SIGUSR1, SA_RESTART);
	REQUIRE(signal(SIGUSR2, on_sig) != SIG_ERR);
	start(&t, fd);
	poke_restart(t, SIGUSR1);
	poke_restart(t, SIGUSR2);
	send(arg);
	pthread_join(t, NULL);
	CHECK_EQ(rgot, 0);
	CHECK_EQ(rlen, 1);
	CHECK_EQ(rbuf[0], 'x');

	/* the handler changed while the reader waits: how it is when the
	 * signal comes decides (sysv_signal: no SA_RESTART) */
	install(SIGUSR1, SA_RESTART);
	start(&t, fd);
	poke_restart(t, SIGUSR1);
	REQUIRE(sysv_signal(SIGUSR1, on_sig) != SIG_ERR);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	CHECK_EQ(rgot, -1);
	CHECK_EQ(rerr, EINTR);
#endif

	/* not restarting: EINTR */
	install(SIGUSR1, 0);
	start(&t, fd);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	CHECK_EQ(rgot, -1);
	CHECK_EQ(rerr, EINTR);

#ifndef __SANITIZE_THREAD__
	/* restarting but blocked by the reader: pending, and no spinning */
	double c0, c1;

	sigaddset(&rblock, SIGUSR2);
	start(&t, fd);
	pthread_kill(t, SIGUSR2);
	c0 = cpu_s();
	pause_ms(300);
	c1 = cpu_s();
	printf("  a blocked SIGUSR2 pending: %.3f s of CPU in 0.3 s\n",
	       c1 - c0);
	CHECK(c1 - c0 < 0.1);
	CHECK(waiting());
	send(arg);
	pthread_join(t, NULL);
	CHECK_EQ(rgot, 0);
	CHECK_EQ(rlen, 1);
	sigemptyset(&rblock);
#else
	(void)send;
	(void)arg;
#endif
}

static void send_stream(void *arg)
{
	CHECK_RET((int)send(*(int *)arg, "x", 1, 0), 1);
}

/* Descriptors of signalfds open in this process (closed, with
 * close_them: the library's, under it). */
static int signalfds_close(bool close_them)
{
	char path[64], link[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		k = readlink(path, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = '\0';
		if (strcmp(link, "anon_inode:[signalfd]") != 0)
			continue;
		n++;
		if (close_them)
			close(fd);
	}
	return n;
}

static int signalfds(void)
{
	return signalfds_close(false);
}

static int wfd;

static void *waiter(void *arg)
{
	char db[64];

	(void)arg;
	(void)getmsg_data(wfd, db, sizeof(db), NULL);
	return NULL;
}

/* Each waiting thread has a signalfd; a child forked beside them keeps
 * none of theirs. */
static void test_fork_signalfds(void)
{
	pthread_t t[4];
	struct sockaddr_in a;
	int before = signalfds(), st;
	pid_t pid;

	wfd = t_open("/dev/udp", O_RDWR, NULL);
	REQUIRE(wfd >= 0);
	a = bind_lo4(wfd, 0);
	for (int i = 0; i < 4; i++)
		REQUIRE(pthread_create(&t[i], NULL, waiter, NULL) == 0);
	pause_ms(100);
	CHECK(signalfds() >= before + 4);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(signalfds() == before ? 0 : 1);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	for (int i = 0; i < 4; i++)
		send_dgram(&a);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_RET(t_close(wfd), 0);
}

#ifndef __SANITIZE_THREAD__
/* A signal sent to the process while one thread waits in a read and the
 * others do not block it: a read that ends with EINTR is in the thread
 * whose handler ran (the signal is that thread's), and one that goes on
 * waiting saw no handler of its own run. */
static pid_t rtid;		/* the reader's */
static int ran_here;		/* atomic: handler runs in the reader */

static void on_tid(int s)
{
	(void)s;
	if ((pid_t)syscall(SYS_gettid) == __atomic_load_n(&rtid,
							 __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&ran_here, 1, __ATOMIC_RELAXED);
}

static void *tid_reader(void *arg)
{
	char db[64];
	int r;

	(void)arg;
	__atomic_store_n(&rtid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	r = getmsg_data(rfd, db, sizeof(db), NULL);
	rerr = r < 0 ? errno : 0;
	__atomic_store_n(&rgot, r, __ATOMIC_RELEASE);
	return NULL;
}

static int by_stop;		/* atomic */

static void *bystander(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&by_stop, __ATOMIC_ACQUIRE))
		pause_ms(2);
	return NULL;
}

static void test_process_signal(int fd, struct sockaddr_in *a)
{
	struct sigaction sa;
	int mismatch = 0, eintr = 0;
	sigset_t u1, old;
	pthread_t by;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tid;		/* no SA_RESTART */
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	/* the signal is for the reader or a bystander thread, not this one
	 * (the kernel would pick this one first) */
	by_stop = 0;
	REQUIRE(pthread_create(&by, NULL, bystander, NULL) == 0);
	sigemptyset(&u1);
	sigaddset(&u1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &u1, &old);
	rfd = fd;
	for (int i = 0; i < 30; i++) {
		pthread_t t;

		rgot = -2;
		ran_here = 0;
		REQUIRE(pthread_create(&t, NULL, tid_reader, NULL) == 0);
		pause_ms(20);
		kill(getpid(), SIGUSR1);
		pause_ms(20);
		if (waiting())
			send_dgram(a);
		pthread_join(t, NULL);
		if (rgot == -1) {
			eintr++;
			mismatch += rerr != EINTR || ran_here != 1;
		} else {
			mismatch += ran_here != 0;
		}
	}
	printf("  30 signals to the process: %d reads ended with EINTR, "
	       "%d not in the thread whose handler ran\n", eintr, mismatch);
	CHECK_EQ(mismatch, 0);
	__atomic_store_n(&by_stop, 1, __ATOMIC_RELEASE);
	pthread_join(by, NULL);
	signal(SIGUSR1, SIG_IGN);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
#endif

/* setuid() in another thread (glibc signals every thread) does not end
 * a read. */
static void test_setuid(int fd)
{
	pthread_t t;

	start(&t, fd);
	CHECK_RET(setuid(getuid()), 0);
	pause_ms(50);
	CHECK(waiting());
	{
		struct sockaddr_in a;
		socklen_t al = sizeof(a);
		struct t_bind got;

		memset(&got, 0, sizeof(got));
		got.addr.buf = (char *)&a;
		got.addr.maxlen = al;
		REQUIRE(t_getprotaddr(fd, &got, NULL) == 0);
		send_dgram(&a);
	}
	pthread_join(t, NULL);
	CHECK_EQ(rgot, 0);
}

#ifndef __SANITIZE_THREAD__
/* The application closes the reader's signalfd (a child's "close all"
 * loop, say): the wait neither spins nor stops working. */
static void test_sfd_closed(int fd, struct sockaddr_in *a)
{
	pthread_t t;
	double c0;

	start(&t, fd);
	CHECK(signalfds_close(true) >= 1);
	c0 = cpu_s();
	pause_ms(300);
	printf("  its signalfd closed: %.3f s of CPU in 0.3 s\n",
	       cpu_s() - c0);
	CHECK(cpu_s() - c0 < 0.1);
	CHECK(waiting());
	send_dgram(a);
	pthread_join(t, NULL);
	CHECK_EQ(rgot, 0);
}
#endif

#ifndef __SANITIZE_THREAD__
/* Signals sent to the process and taken by another thread (this one,
 * which does not block them) make the reader's signalfd readable for a
 * moment with nothing left for the reader: it keeps its signalfd, and
 * makes no new one (each such pair of wake-ups used to forget it, open,
 * and make another).  Whether the reader wakes before the other thread
 * takes the signal is up to the kernel: the case is not forced. */
static void test_process_signals_no_leak(int fd, struct sockaddr_in *a)
{
	pthread_t t;
	int before;

	install(SIGUSR1, SA_RESTART);
	start(&t, fd);
	pause_ms(20);
	before = signalfds();
	for (int i = 0; i < 200; i++) {
		kill(getpid(), SIGUSR1);
		pause_ms(1);
	}
	pause_ms(20);
	printf("  200 signals to the process: signalfds %d before, %d after\n",
	       before, signalfds());
	CHECK(signalfds() <= before + 1);
	CHECK(waiting());
	send_dgram(a);
	pthread_join(t, NULL);
	CHECK_EQ(rgot, 0);
	signal(SIGUSR1, SIG_DFL);
}

/* The process caught no signal (but the fault signals) when the reader
 * went to sleep (so it waits in ppoll alone, and knows of no handler for
 * up to 100 ms): the
 * first handler, with SA_RESTART, installed and run during the wait does
 * not end it. */
static void test_first_handler(int fd, struct sockaddr_in *a)
{
	pthread_t t;

	start(&t, fd);
	/* catching nothing but the fault signals (the library's copy
	 * guard: SIGSEGV, SIGBUS), it waits without a signalfd */
	CHECK_EQ(signalfds(), 0);
	install(SIGUSR1, SA_RESTART);
	pthread_kill(t, SIGUSR1);
	pause_ms(20);
	CHECK_EQ(__atomic_load_n(&ran[SIGUSR1], __ATOMIC_RELAXED), 1);
	CHECK(waiting());
	send_dgram(a);
	pthread_join(t, NULL);
	CHECK_EQ(rgot, 0);
	CHECK_EQ(rlen, 1);
	signal(SIGUSR1, SIG_DFL);
}
#endif

int main(void)
{
	static const char *const udp[] = { "/dev/udp", "/dev/inet/udp" };
	static const char *const tcp[] = { "/dev/tcp", "/dev/inet/tcp" };

	alarm(60);
	sigemptyset(&rblock);
	for (int i = 0; i < 2; i++) {
		int fd = t_open(udp[i], O_RDWR, NULL);
		struct sockaddr_in a;

		REQUIRE(fd >= 0);
		a = bind_lo4(fd, 0);
		printf("%s\n", udp[i]);
#ifndef __SANITIZE_THREAD__
		if (i == 0)
			test_first_handler(fd, &a);
#endif
		check_waits(fd, send_dgram, &a);
#ifndef __SANITIZE_THREAD__
		/* (not under ThreadSanitizer: it delivers signals itself;
		 * and a close of a descriptor another thread polls is what
		 * it reports) */
		test_process_signal(fd, &a);
		test_sfd_closed(fd, &a);
		test_process_signals_no_leak(fd, &a);
#endif
		test_setuid(fd);
		CHECK_RET(t_close(fd), 0);
	}
	for (int i = 0; i < 2; i++) {
		int fd = t_open(tcp[i], O_RDWR, NULL), l, s;
		struct sockaddr_in a;
		socklen_t al = sizeof(a);
		struct t_call call;

		REQUIRE(fd >= 0);
		l = socket(AF_INET, SOCK_STREAM, 0);
		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		REQUIRE(bind(l, (struct sockaddr *)&a, sizeof(a)) == 0);
		REQUIRE(listen(l, 1) == 0);
		REQUIRE(getsockname(l, (struct sockaddr *)&a, &al) == 0);
		REQUIRE(t_bind(fd, NULL, NULL) == 0);
		memset(&call, 0, sizeof(call));
		call.addr.buf = (char *)&a;
		call.addr.len = sizeof(a);
		REQUIRE(t_connect(fd, &call, NULL) == 0);
		s = accept(l, NULL, NULL);
		REQUIRE(s >= 0);
		printf("%s\n", tcp[i]);
		check_waits(fd, send_stream, &s);
		close(s);
		close(l);
		CHECK_RET(t_close(fd), 0);
	}
	test_fork_signalfds();
	T_DONE();
}
