/*
 * sth_pipe.c -- STREAMS pipes: s_pipe().
 *
 * As in SVR4, a pipe is two stream heads whose write queues lead into
 * each other's read queues, with no driver: a write on one end arrives at
 * the other end's head, through whatever modules are pushed on either end
 * (modules are pushed below each head, so the path is A's modules
 * downward, then B's modules upward).  Both ends share one plumbing lock
 * (sh_pair), since popping a module at one end rewires a queue pointer of
 * the other.  Closing an end sends M_HANGUP to the other and cuts the
 * cross pointers before the closing end's queues are freed; the other end
 * then reads what is left, then end of file, and its writes fail with
 * EPIPE and SIGPIPE.
 *
 * Pipes live in this process.  Pipes between processes (after fork, named
 * FIFOs) need a shared-memory driver between two executives; the head
 * already treats any stream with STRPIPE the same way, so such a driver
 * would present each end as an ordinary pipe end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "sthead.h"

int s_pipe(int fds[2])
{
	return sth_pipe(fds);
}

int sth_pipe(int fds[2])
{
	struct sthead *a, *b;
	struct sth_pair *pair;
	int fa, fb, err;

	int probe[2];

	if (!str_initialised)
		str_init();
	sth_ucopy_init();
	if (fds == NULL || sth_ucopy(probe, fds, sizeof(probe)) != 0)
		return sth_err(EFAULT);
	pair = calloc(1, sizeof(*pair));
	if (pair == NULL)
		return sth_err(ENOMEM);
	pthread_mutex_init(&pair->p_lock, NULL);
	a = sth_alloc();
	b = a ? sth_alloc() : NULL;
	if (a == NULL || b == NULL) {
		err = errno;
		if (a)
			sth_rele(a);
		pthread_mutex_destroy(&pair->p_lock);
		free(pair);
		return sth_err(err);
	}
	pair->p_refs = 2;
	a->sh_pair = b->sh_pair = pair;
	a->sh_flag |= STRPIPE;
	b->sh_flag |= STRPIPE;
	a->sh_wropt = b->sh_wropt = SNDPIPE;
	a->sh_peer = b;
	b->sh_peer = a;
	/* head to head */
	__atomic_store_n(&a->sh_sd.sd_wq->q_next, b->sh_sd.sd_rq,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&b->sh_sd.sd_wq->q_next, a->sh_sd.sd_rq,
			 __ATOMIC_RELEASE);
	sth_plumb_lock(a);
	fa = sth_new_fd(a, O_RDWR);
	sth_plumb_unlock(a);
	sth_plumb_lock(b);
	fb = fa >= 0 ? sth_new_fd(b, O_RDWR) : -1;
	sth_plumb_unlock(b);
	/* the opens hold the streams now */
	if (fa < 0 || fb < 0) {
		err = errno;
		if (fa >= 0)
			close(fa);
		sth_rele(a);
		sth_rele(b);
		return sth_err(err);
	}
	sth_rele(a);
	sth_rele(b);
	probe[0] = fa;
	probe[1] = fb;
	if (sth_ucopy(fds, probe, sizeof(probe)) != 0) {
		close(fa);
		close(fb);
		return sth_err(EFAULT);
	}
	return 0;
}

/* The last write queue of sh's own (its head's, or its lowest module's):
 * the one whose q_next crosses to the peer. */
static queue_t *crossing_wq(struct sthead *sh)
{
	queue_t *q = sh->sh_sd.sd_wq, *n;

	while ((n = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE)) != NULL &&
	       n->q_stream == &sh->sh_sd)
		q = n;
	return q;
}

/* Last close of a pipe end (pair lock and plumbing held). */
void sth_pipe_close(struct sthead *sh)
{
	struct sthead *peer = sh->sh_peer;
	struct strthread *t;

	if (peer == NULL)
		return;
	/* the other end hears the hangup through its modules */
	t = str_enter();
	putnextctl(crossing_wq(sh), M_HANGUP);
	str_exit(t);
	__atomic_or_fetch(&peer->sh_flag, STRPEERGONE, __ATOMIC_ACQ_REL);
	__atomic_store_n(&crossing_wq(peer)->q_next, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&crossing_wq(sh)->q_next, NULL, __ATOMIC_RELEASE);
	peer->sh_peer = NULL;
	sh->sh_peer = NULL;
	sth_wake(&peer->sh_rseq, &peer->sh_rwaiters);
	sth_wake(&peer->sh_wseq, &peer->sh_wwaiters);
	sth_wake(&peer->sh_iseq, &peer->sh_iwaiters);
	sth_changed(peer);
	/* nothing may still run on our queues from the peer's side */
	str_synchronize();
}
