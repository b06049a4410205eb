/*
 * test_inet_idle -- a reader blocked on an Internet endpoint that has
 * nothing to read sleeps: it costs (almost) no CPU, whatever the socket
 * below says.  For each provider, a thread blocks in getmsg() on a bound,
 * idle endpoint (an unconnected TCP socket reports POLLHUP all the time;
 * a TCP listener's queue can be full while more connections wait in the
 * kernel), the process's CPU time over 400 ms is measured, and a signal
 * then ends the wait with EINTR.  A UDP reader is also woken by a
 * datagram, to show the sleep still ends when something comes.
 */
#include "ferry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

static int rfd;
static int rerr;
static int rgot;		/* atomic: -2 while the reader waits */

static void on_usr1(int s)
{
	(void)s;
}

static void *reader(void *arg)
{
	char db[256];
	int r = getmsg_data(rfd, db, sizeof(db), NULL);

	(void)arg;
	rerr = r < 0 ? errno : 0;
	__atomic_store_n(&rgot, r, __ATOMIC_RELEASE);
	return NULL;
}



/* Block a reader on fd for 400 ms: the CPU it used; then end it with
 * poke (NULL: a signal, EINTR). */
static double idle_cost(int fd, void (*poke)(void *), void *arg)
{
	pthread_t t;
	double c0, c1;

	rfd = fd;
	rgot = -2;
	REQUIRE(pthread_create(&t, NULL, reader, NULL) == 0);
	pause_ms(100);			/* asleep by now */
	c0 = cpu_s();
	pause_ms(400);
	c1 = cpu_s();
	if (poke != NULL) {
		poke(arg);
	} else {
		for (int i = 0; i < 50 &&
		     __atomic_load_n(&rgot, __ATOMIC_ACQUIRE) == -2; i++) {
			pthread_kill(t, SIGUSR1);
			pause_ms(10);
		}
	}
	pthread_join(t, NULL);
	return c1 - c0;
}

int main(void)
{
	static const char *const devs[] = { "/dev/udp", "/dev/inet/udp",
					    "/dev/tcp", "/dev/inet/tcp" };
	struct sigaction sa;

	alarm(30);	/* a reader that spins never sees its signal: fail */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);

	for (int i = 0; i < 4; i++) {
		int fd = t_open(devs[i], O_RDWR, NULL), lfd, cl[6];
		struct sockaddr_in a;
		double used;

		REQUIRE(fd >= 0);
		a = bind_lo4(fd, 0);
		used = idle_cost(fd, NULL, NULL);
		printf("%s bound, idle: %.3f s of CPU in 0.4 s\n", devs[i],
		       used);
		CHECK(used < 0.1);
		CHECK_EQ(rgot, -1);
		CHECK_EQ(rerr, EINTR);
		if (i < 2) {		/* woken by a datagram */
			used = idle_cost(fd, send_dgram, &a);
			CHECK(used < 0.1);
			CHECK(rgot >= 0);
		} else {
			/* a listener with qlen 1 and more callers waiting in
			 * the kernel's backlog than it may indicate */
			lfd = t_open(devs[i], O_RDWR, NULL);
			REQUIRE(lfd >= 0);
			a = bind_lo4(lfd, 1);
			for (int k = 0; k < 6; k++) {
				/* the kernel's backlog is small too: the
				 * callers beyond it wait in connect() */
				cl[k] = socket(AF_INET, SOCK_STREAM |
					       SOCK_NONBLOCK, 0);
				(void)connect(cl[k], (struct sockaddr *)&a,
					      sizeof(a));
			}
			pause_ms(100);
			/* the first indication is read; the others wait */
			{
				struct strbuf c, d;
				char cb[256], db[64];
				int flags = 0;

				c.maxlen = sizeof(cb);
				c.buf = cb;
				d.maxlen = sizeof(db);
				d.buf = db;
				CHECK_RET(getmsg(lfd, &c, &d, &flags), 0);
			}
			used = idle_cost(lfd, NULL, NULL);
			printf("%s listener, queue full: %.3f s of CPU in "
			       "0.4 s\n", devs[i], used);
			CHECK(used < 0.1);
			CHECK_EQ(rerr, EINTR);
			for (int k = 0; k < 6; k++)
				close(cl[k]);
			CHECK_RET(t_close(lfd), 0);
		}
		CHECK_RET(t_close(fd), 0);
	}
	T_DONE();
}
