/*
 * test_inet_tcp_stress -- many connections at once on /dev/inet/tcp and
 * /dev/tcp over 127.0.0.1 and ::1: a server thread listening with qlen 8
 * accepts each caller onto a new endpoint served by a thread of its own
 * (an echo), while client threads each open, bind, connect, exchange
 * messages of random sizes (every byte checked), and end their
 * connections by orderly release or, every third one, abortively; the
 * echo sees T_ORDREL or T_DISCONNECT accordingly.  Meant for the
 * sanitizers (ThreadSanitizer above all): accepts, adoptions, kernel
 * event sources and data paths of many endpoints racing.
 */
#include "test_inet_tcp_lib.h"

#define NCLI	6		/* client threads */
#define NCONN	6		/* connections per client */
#define NMSG	20		/* messages per connection */
#define MAXMSG	8192

struct echo {
	int fd;
	int ok;			/* 1 ended well */
	pthread_t th;
};

struct server {
	int lfd;
	int n;			/* connections to accept */
	struct echo e[NCLI * NCONN];
	int accepted;
	pthread_t th;
};

struct client {
	struct sa a;		/* the server */
	unsigned seed;
	int ok;			/* connections that went as planned */
	pthread_t th;
};

static void *echo_main(void *arg)
{
	struct echo *e = arg;
	static __thread char buf[MAXMSG];
	struct t_discon d;
	int flags;

	for (;;) {
		int r = t_rcv(e->fd, buf, sizeof(buf), &flags);

		if (r < 0)
			break;
		for (int done = 0; done < r;) {
			int w = t_snd(e->fd, buf + done, (unsigned)(r - done),
				      0);

			if (w < 0)
				goto out;
			done += w;
		}
	}
out:
	if (t_errno == TLOOK) {
		int ev = t_look(e->fd);

		if (ev == T_ORDREL && t_rcvrel(e->fd) == 0 &&
		    t_sndrel(e->fd) == 0)
			e->ok = 1;
		memset(&d, 0, sizeof(d));
		if (ev == T_DISCONNECT && t_rcvdis(e->fd, &d) == 0 &&
		    d.reason == ECONNRESET)
			e->ok = 1;
	}
	t_close(e->fd);
	return NULL;
}

/* Accept every caller onto a new endpoint.  With qlen 8 more
 * indications can come while one is being accepted: t_accept then says
 * TLOOK, and the server listens for them first (XTI's rule). */
static void *server_main(void *arg)
{
	struct server *s = arg;
	int pend[8], npend = 0;

	while (s->accepted < s->n) {
		struct echo *e = &s->e[s->accepted];
		struct t_discon d;
		int seq;

		if (npend == 0) {
			if (xt_listen(s->lfd, &seq, NULL) != 0)
				break;
			pend[npend++] = seq;
		}
		e->fd = xt_open();
		if (e->fd < 0)
			break;
		if (xt_accept(s->lfd, e->fd, pend[0]) != 0) {
			int ev = t_errno == TLOOK ? t_look(s->lfd) : -1;

			t_close(e->fd);
			if (ev == T_LISTEN && npend < 8 &&
			    xt_listen(s->lfd, &seq, NULL) == 0) {
				pend[npend++] = seq;
				continue;
			}
			memset(&d, 0, sizeof(d));
			if (ev == T_DISCONNECT && t_rcvdis(s->lfd, &d) == 0) {
				for (int i = 0; i < npend; i++)
					if (pend[i] == d.sequence)
						pend[i] = pend[--npend];
				continue;
			}
			fprintf(stderr, "t_accept: %s, event %d\n",
				t_strerror(t_errno), ev);
			break;
		}
		memmove(pend, pend + 1, (size_t)--npend * sizeof(pend[0]));
		if (pthread_create(&e->th, NULL, echo_main, e) != 0)
			break;
		s->accepted++;
	}
	return NULL;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* One connection: 0 when everything went as it should. */
static int one_conn(struct client *c, int k)
{
	char out[MAXMSG], in[MAXMSG];
	struct t_call call;
	int fd = xt_open(), flags, r = -1;

	if (fd < 0)
		return -1;
	memset(&call, 0, sizeof(call));
	call.addr.buf = (char *)&c->a.u;
	call.addr.len = c->a.len;
	if (xt_bind_lo(fd, 0, 0, NULL) != 0 || t_connect(fd, &call, NULL) != 0)
		goto out;
	for (int m = 0; m < NMSG; m++) {
		unsigned n = 1 + rnd(&c->seed) % MAXMSG;

		for (unsigned i = 0; i < n; i++)
			out[i] = (char)rnd(&c->seed);
		if (t_snd(fd, out, n, 0) != (int)n ||
		    xt_rcv_all(fd, in, n) != 0 || memcmp(in, out, n) != 0)
			goto out;
	}
	if (k % 3 == 2) {
		if (t_snddis(fd, NULL) != 0)
			goto out;
	} else {
		if (t_sndrel(fd) != 0)
			goto out;
		if (t_rcv(fd, in, sizeof(in), &flags) != -1 ||
		    t_errno != TLOOK || t_rcvrel(fd) != 0)
			goto out;
	}
	r = 0;
out:
	if (r != 0)
		fprintf(stderr, "connection %d: t_errno %d (%s)\n", k, t_errno,
			t_strerror(t_errno));
	t_close(fd);
	return r;
}

static void *client_main(void *arg)
{
	struct client *c = arg;

	for (int k = 0; k < NCONN; k++)
		if (one_conn(c, k) == 0)
			c->ok++;
	return NULL;
}

static void test_stress(void)
{
	static struct server s;
	struct client c[NCLI];
	struct sa a;
	int i, good = 0;

	memset(&s, 0, sizeof(s));
	s.lfd = xt_listener(8, &a);
	REQUIRE(s.lfd >= 0);
	s.n = NCLI * NCONN;
	REQUIRE(pthread_create(&s.th, NULL, server_main, &s) == 0);
	for (i = 0; i < NCLI; i++) {
		c[i].a = a;
		c[i].seed = (unsigned)i * 7919u + 1;
		c[i].ok = 0;
		REQUIRE(pthread_create(&c[i].th, NULL, client_main, &c[i]) == 0);
	}
	for (i = 0; i < NCLI; i++) {
		pthread_join(c[i].th, NULL);
		good += c[i].ok;
	}
	pthread_join(s.th, NULL);
	CHECK_EQ(good, NCLI * NCONN);
	CHECK_EQ(s.accepted, NCLI * NCONN);
	for (i = 0; i < s.accepted; i++) {
		pthread_join(s.e[i].th, NULL);
		CHECK_EQ(s.e[i].ok, 1);
	}
	CHECK_RET(t_close(s.lfd), 0);
}

int main(void)
{
	FOR_EACH_CFG(test_stress());
	T_DONE();
}
