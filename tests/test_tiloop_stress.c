/*
 * test_tiloop_stress -- many threads on the loopback providers at once:
 * client threads connect to one ticotsord listener (retrying when its
 * queue is full), exchange numbered TSDUs with an echo thread per
 * accepted connection and check every echo, then end the connection in
 * turn by orderly release, by T_DISCON_REQ, by closing at once, or by
 * closing with data still on the way; an accepting thread answers every
 * indication onto a new endpoint.  Meanwhile on ticlts two threads
 * exchange datagrams while a third keeps closing and re-binding one of
 * their addresses, and a ticots listener keeps coming and going (it
 * accepts, refuses or just closes) while a caller keeps calling it.
 * Everything must end: every client finishes, every
 * echo thread sees its connection end, no stream is left.  Meant to run
 * clean under ThreadSanitizer as well.
 */
#include "test_tiloop_lib.h"

/* CHECK and REQUIRE count in plain ints: the threads use these. */
static int s_failed, s_checked;		/* atomic */

#define SCHECK(c) ({							\
	bool _ok = (c);							\
	__atomic_add_fetch(&s_checked, 1, __ATOMIC_RELAXED);		\
	if (!_ok) {							\
		__atomic_add_fetch(&s_failed, 1, __ATOMIC_RELAXED);	\
		fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #c); \
	}								\
	_ok;								\
})

static int s_open(const char *dev)
{
	int fd = open(dev, O_RDWR);

	if (!SCHECK(fd >= 0))
		abort();
	return fd;
}

static bool s_bind(int fd, const char *addr, struct tmsg *m)
{
	return SCHECK(send_bind(fd, addr, 0) == 0) &&
	       SCHECK(tm_get(fd, m, true, WAIT_MS) && m->rc == 0) &&
	       SCHECK(m->c.prim == T_BIND_ACK);
}

static bool s_ok(int fd, t_scalar_t prim, struct tmsg *m)
{
	return SCHECK(tm_get(fd, m, true, WAIT_MS) && m->rc == 0) &&
	       SCHECK(m->c.prim == T_OK_ACK) &&
	       SCHECK(m->c.p.ok_ack.CORRECT_prim == prim);
}

static int s_ordrel(int fd)
{
	struct T_ordrel_req r = { T_ORDREL_REQ };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	return cb_send(fd, &cb, NULL, -1, 0);
}

#define NCLIENT	4
#define NITER	25
#define NMSG	20
#define MAXCONN	(NCLIENT * NITER + 8)

static int listener;
static int stop;			/* atomic: the acceptor may stop */
static pthread_t echoers[MAXCONN];	/* acceptor thread only */
static int nechoers;			/* acceptor thread only */
static int echo_ends;			/* atomic */

static void *echo_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct tmsg *m = tm_new();

	for (;;) {
		if (!SCHECK(tm_get(fd, m, false, 10 * WAIT_MS)) ||
		    !SCHECK(m->rc == 0))
			break;
		if (m->c.prim == T_DATA_IND) {
			/* dropped silently if the client is gone already */
			SCHECK(send_data(fd, T_DATA_REQ, 0, m->d, m->dlen) == 0);
		} else if (m->c.prim == T_ORDREL_IND) {
			SCHECK(s_ordrel(fd) == 0);
			break;
		} else {
			SCHECK(m->c.prim == T_DISCON_IND);
			break;
		}
	}
	__atomic_add_fetch(&echo_ends, 1, __ATOMIC_RELAXED);
	tm_free(m);
	close(fd);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct tmsg *m = tm_new();

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (!tm_get(listener, m, false, 20))
			continue;
		if (!SCHECK(m->rc == 0))
			break;
		if (m->c.prim == T_DISCON_IND)
			continue;	/* a client gave up meanwhile */
		if (!SCHECK(m->c.prim == T_CONN_IND))
			continue;
		int acc = s_open(DEV_ORD);
		t_scalar_t seq = m->c.p.conn_ind.SEQ_number;
		SCHECK(send_conn_res(listener, ep_token(acc), seq, NULL, 0,
				     NULL, -1) == 0);
		if (!SCHECK(tm_get(listener, m, true, WAIT_MS) &&
			    m->rc == 0)) {
			close(acc);
			continue;
		}
		if (m->c.prim == T_ERROR_ACK) {
			/* the caller withdrew between indication and answer */
			SCHECK(m->c.p.error_ack.TLI_error == TBADSEQ ||
			       m->c.p.error_ack.TLI_error == TOUTSTATE);
			close(acc);
			continue;
		}
		SCHECK(m->c.prim == T_OK_ACK);
		if (!SCHECK(nechoers < MAXCONN) ||
		    !SCHECK(pthread_create(&echoers[nechoers], NULL, echo_main,
					   (void *)(intptr_t)acc) == 0)) {
			close(acc);
			continue;
		}
		nechoers++;
	}
	tm_free(m);
	return NULL;
}

/* Connect fd to the listener; false if refused (queue full). */
static bool connect_once(int fd, struct tmsg *m)
{
	if (!SCHECK(send_conn_req(fd, "stress", NULL, 0, NULL, -1) == 0) ||
	    !s_ok(fd, T_CONN_REQ, m))
		return false;
	if (!SCHECK(tm_get(fd, m, false, 10 * WAIT_MS) && m->rc == 0))
		return false;
	if (m->c.prim == T_DISCON_IND) {
		SCHECK(m->c.p.discon_ind.DISCON_reason == ECONNREFUSED);
		return false;
	}
	return SCHECK(m->c.prim == T_CONN_CON);
}

static void *client_main(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct tmsg *m = tm_new();

	for (int it = 0; it < NITER; it++) {
		int fd = s_open(DEV_ORD), v[4], tries = 0;

		if (!s_bind(fd, NULL, m))
			break;
		while (!connect_once(fd, m) && SCHECK(++tries < 5000))
			pause_ms(1);
		for (int i = 0; i < NMSG; i++) {
			v[0] = id;
			v[1] = it;
			v[2] = i;
			v[3] = -i;
			SCHECK(send_data(fd, T_DATA_REQ, 0, v, sizeof(v)) == 0);
			if (it % 4 == 3 && i > NMSG / 2)
				continue;	/* do not wait: close with data */
			if (SCHECK(tm_get(fd, m, false, 10 * WAIT_MS)) &&
			    SCHECK(m->rc == 0 && m->c.prim == T_DATA_IND))
				SCHECK(m->dlen == (int)sizeof(v) &&
				       memcmp(m->d, v, sizeof(v)) == 0);
		}
		switch (it % 4) {
		case 0:
			SCHECK(s_ordrel(fd) == 0);
			SCHECK(tm_get(fd, m, false, 10 * WAIT_MS) &&
			       m->c.prim == T_ORDREL_IND);
			SCHECK(ep_state(fd) == TS_IDLE);
			break;
		case 1:
			SCHECK(send_discon(fd, -1, NULL, -1) == 0);
			s_ok(fd, T_DISCON_REQ, m);
			break;
		default:
			break;
		}
		set_nonblock(fd, true);
		close(fd);
	}
	tm_free(m);
	return NULL;
}

/* ---- ticlts: datagrams while an address comes and goes ---- */

static int clts_stop;	/* atomic */

static int send_ud(int fd, const char *dest, int v)
{
	struct T_unitdata_req r = { T_UNITDATA_REQ, 0, 0, 0, 0 };
	struct cbuf cb;

	cb_init(&cb, &r, sizeof(r));
	cb.p.unitdata_req.DEST_length = (t_scalar_t)strlen(dest);
	cb.p.unitdata_req.DEST_offset = cb_add(&cb, dest, strlen(dest));
	return cb_send(fd, &cb, &v, sizeof(v), 0);
}

static void *ud_sender(void *arg)
{
	int fd = s_open(DEV_CLTS), n = 0;
	struct tmsg *m = tm_new();

	(void)arg;
	s_bind(fd, "sender", m);
	SCHECK(set_nonblock(fd, true) == 0);
	while (!__atomic_load_n(&clts_stop, __ATOMIC_ACQUIRE)) {
		if (send_ud(fd, "flaky", n) == 0)
			n++;
		else
			SCHECK(errno == EAGAIN);
		/* errors for datagrams sent while nobody had "flaky" */
		while (tm_get(fd, m, false, 0) && m->rc == 0)
			SCHECK(m->c.prim == T_UDERROR_IND &&
			       m->c.p.uderror_ind.ERROR_type == ECONNREFUSED);
		if (n % 64 == 0)
			pause_ms(1);
	}
	SCHECK(n > 0);
	tm_free(m);
	close(fd);
	return NULL;
}

static void *ud_flaky(void *arg)
{
	struct tmsg *m = tm_new();
	int got = 0;

	(void)arg;
	for (int i = 0; i < 200; i++) {
		int fd = s_open(DEV_CLTS);
		if (s_bind(fd, "flaky", m)) {
			for (int k = 0; k < 5; k++) {
				while (tm_get(fd, m, false, 0) && m->rc == 0) {
					SCHECK(m->c.prim == T_UNITDATA_IND);
					got++;
				}
				pause_ms(1);
			}
		}
		if (i % 2)
			set_nonblock(fd, true);
		close(fd);
	}
	SCHECK(got > 0);
	tm_free(m);
	return NULL;
}

/* ---- a listener that keeps closing, callers racing it ---- */

static int flaky_stop;	/* atomic */

static void *flaky_listener(void *arg)
{
	struct tmsg *m = tm_new();

	(void)arg;
	for (int i = 0; i < 150; i++) {
		int fd = s_open(DEV_COTS);
		struct T_bind_req r = { T_BIND_REQ, 2, 0, 2 };
		struct cbuf cb;

		cb_init(&cb, &r, sizeof(r));
		cb.p.bind_req.ADDR_offset = cb_add(&cb, "fl", 2);
		SCHECK(cb_send(fd, &cb, NULL, -1, 0) == 0);
		if (!SCHECK(tm_get(fd, m, true, WAIT_MS)) ||
		    m->c.prim != T_BIND_ACK) {
			/* the last one still holds "fl": it is closing */
			close(fd);
			continue;
		}
		if (tm_get(fd, m, false, 2) && m->rc == 0 &&
		    m->c.prim == T_CONN_IND) {
			t_scalar_t seq = m->c.p.conn_ind.SEQ_number;
			switch (i % 3) {
			case 0:		/* accept here, say one thing */
				send_conn_res(fd, 0, seq, NULL, 0, NULL, -1);
				if (tm_get(fd, m, true, WAIT_MS) &&
				    m->c.prim == T_OK_ACK)
					send_data(fd, T_DATA_REQ, 0, "hi", 2);
				break;
			case 1:		/* refuse */
				send_discon(fd, seq, NULL, -1);
				break;
			default:	/* just go */
				break;
			}
		}
		close(fd);
	}
	__atomic_store_n(&flaky_stop, 1, __ATOMIC_RELEASE);
	tm_free(m);
	return NULL;
}

static void *flaky_caller(void *arg)
{
	struct tmsg *m = tm_new();

	(void)arg;
	while (!__atomic_load_n(&flaky_stop, __ATOMIC_ACQUIRE)) {
		int fd = s_open(DEV_COTS);

		s_bind(fd, NULL, m);
		SCHECK(send_conn_req(fd, "fl", NULL, 0, NULL, -1) == 0);
		s_ok(fd, T_CONN_REQ, m);
		/* refused, accepted (then data and a disconnect), or the
		 * listener went away: all fine, as long as it is TPI */
		while (SCHECK(tm_get(fd, m, false, 10 * WAIT_MS)) &&
		       SCHECK(m->rc == 0)) {
			t_scalar_t p = m->c.prim;
			SCHECK(p == T_CONN_CON || p == T_DISCON_IND ||
			       p == T_DATA_IND);
			if (p == T_DISCON_IND || p == T_DATA_IND)
				break;
		}
		close(fd);
	}
	tm_free(m);
	return NULL;
}

int main(void)
{
	pthread_t acc, cl[NCLIENT], uds, udf, fll, flc;

	listener = open_ep(DEV_ORD);
	bind_ok(listener, "stress", 4);
	REQUIRE(pthread_create(&acc, NULL, accept_main, NULL) == 0);
	REQUIRE(pthread_create(&uds, NULL, ud_sender, NULL) == 0);
	REQUIRE(pthread_create(&udf, NULL, ud_flaky, NULL) == 0);
	REQUIRE(pthread_create(&fll, NULL, flaky_listener, NULL) == 0);
	REQUIRE(pthread_create(&flc, NULL, flaky_caller, NULL) == 0);
	for (int i = 0; i < NCLIENT; i++)
		REQUIRE(pthread_create(&cl[i], NULL, client_main,
				       (void *)(intptr_t)i) == 0);
	for (int i = 0; i < NCLIENT; i++)
		pthread_join(cl[i], NULL);
	pthread_join(udf, NULL);
	pthread_join(fll, NULL);
	pthread_join(flc, NULL);
	__atomic_store_n(&clts_stop, 1, __ATOMIC_RELEASE);
	pthread_join(uds, NULL);
	/* every connection ends at its echo thread too */
	for (int i = 0; i < 1000 && __atomic_load_n(&echo_ends,
			__ATOMIC_ACQUIRE) < NCLIENT * NITER; i++)
		pause_ms(5);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(acc, NULL);
	for (int i = 0; i < nechoers; i++)
		pthread_join(echoers[i], NULL);
	CHECK_EQ(nechoers, NCLIENT * NITER);
	CHECK_EQ(echo_ends, NCLIENT * NITER);
	close(listener);
	CHECK_EQ(streams_in_use(), 0);
	CHECK_EQ(s_failed, 0);
	t_checked += s_checked;
	T_DONE();
}
