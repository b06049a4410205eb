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
 * Pipes between processes.  Just before fork() (a pthread_atfork prepare
 * handler) every pipe whose two ends are both open here is converted:
 * each end gets the shmpipe driver at its bottom, the two drivers joined
 * by a shared-memory segment (src/drivers/shmpipe.c), so that whichever
 * process holds an end after the fork talks to whichever holds the other.
 * A converted end is an ordinary stream with a driver (no sh_peer): the
 * head still treats it as a pipe end (STRPIPE: flush turned around,
 * EPIPE, I_SENDFD), and hangup comes from the driver when every process
 * has closed the other end.  Messages already queued in a head when the
 * process forks are in both processes' copies; a pipe stays converted.
 * New pipes are not made while a fork converts (sth_pipes_create).
 *
 * Named pipes (sth_fattach.c) convert one pipe the same way when another
 * process opens its attached end (sth_pipe_share), and that process
 * makes a stream head over the end it was given (sth_pipe_join).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <sys/cmn_err.h>

#include "sthead.h"
#include "../drivers/shmpipe.h"

/* Pipes whose two ends are both in this process, for fork to convert. */
pthread_mutex_t sth_pipes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sth_pair *sth_pipes;		/* sth_pipes_lock */
/* Held across fork(): no pipe is made half-way through a conversion. */
pthread_mutex_t sth_pipes_create = PTHREAD_MUTEX_INITIALIZER;

static void list_add(struct sth_pair *p)
{
	pthread_mutex_lock(&sth_pipes_lock);
	p->p_next = sth_pipes;
	if (sth_pipes != NULL)
		sth_pipes->p_prevp = &p->p_next;
	p->p_prevp = &sth_pipes;
	sth_pipes = p;
	pthread_mutex_unlock(&sth_pipes_lock);
}

/* sth_pipes_lock held */
static void list_del(struct sth_pair *p)
{
	if (p->p_prevp == NULL)
		return;
	*p->p_prevp = p->p_next;
	if (p->p_next != NULL)
		p->p_next->p_prevp = p->p_prevp;
	p->p_prevp = NULL;
	p->p_next = NULL;
}

int s_pipe(int fds[2])
{
	return sth_pipe(fds);
}

int sth_pipe(int fds[2])
{
	struct sthead *a, *b;
	struct sth_pair *pair;
	struct sth_file *stale;
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
	/* each end's hangup for the other, had now: its close must not
	 * lack one (the peer's reader would wait for good) */
	a->sh_pipehup = str_ctlmsg(M_HANGUP);
	b->sh_pipehup = str_ctlmsg(M_HANGUP);
	if (a->sh_pipehup == NULL || b->sh_pipehup == NULL) {
		sth_rele(a);	/* (frees the pair and the blocks) */
		sth_rele(b);
		return sth_err(ENOSR);
	}
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
	pair->p_end[0] = a;
	pair->p_end[1] = b;
	pthread_mutex_lock(&sth_pipes_create);
	list_add(pair);
	pthread_mutex_unlock(&sth_pipes_create);
	sth_plumb_lock(a);
	fa = sth_new_fd(a, O_RDWR, &stale);
	err = fa < 0 ? errno : 0;
	sth_plumb_unlock(a);
	sth_file_rele(stale);
	fb = -1;
	if (fa >= 0) {
		sth_plumb_lock(b);
		fb = sth_new_fd(b, O_RDWR, &stale);
		err = fb < 0 ? errno : 0;
		sth_plumb_unlock(b);
		sth_file_rele(stale);
	}
	/* the opens hold the streams now */
	if (fa < 0 || fb < 0) {
		pthread_mutex_lock(&sth_pipes_lock);
		list_del(pair);
		pthread_mutex_unlock(&sth_pipes_lock);
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
	pthread_mutex_lock(&sth_pipes_lock);
	list_del(sh->sh_pair);
	pthread_mutex_unlock(&sth_pipes_lock);
	/* the other end hears the hangup through its modules (the block
	 * had with the pipe: an end with a peer has one) */
	mblk_t *hup = sh->sh_pipehup;

	sh->sh_pipehup = NULL;
	t = str_enter();
	putnext(crossing_wq(sh), hup);
	str_exit(t);
	__atomic_or_fetch(&peer->sh_flag, STRPEERGONE, __ATOMIC_ACQ_REL);
	__atomic_store_n(&crossing_wq(peer)->q_next, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&crossing_wq(sh)->q_next, NULL, __ATOMIC_RELEASE);
	peer->sh_peer = NULL;
	sh->sh_peer = NULL;
	sth_wake_readers(peer);
	sth_wake(&peer->sh_wseq, &peer->sh_wwaiters);
	sth_wake(&peer->sh_iseq, &peer->sh_iwaiters);
	sth_changed(peer);
	/* nothing may still run on our queues from the peer's side */
	str_synchronize();
}

/* ---- fork ---- */

/* Convert one pipe (prepare handler, outside entries). */
static void convert(struct sth_pair *p)
{
	struct sthead *a = p->p_end[0], *b = p->p_end[1];
	queue_t *a_low, *b_low, *a_up, *b_up;
	cred_t cr;
	int err;

	pthread_mutex_lock(&p->p_lock);
	pthread_mutex_lock(&a->sh_sd.sd_plumb);
	pthread_mutex_lock(&b->sh_sd.sd_plumb);
	if (a->sh_peer != b || b->sh_peer != a ||
	    (sh_flags(a) & STRCLOSED) || (sh_flags(b) & STRCLOSED))
		goto out;		/* an end closed meanwhile */
	a_low = crossing_wq(a);
	b_low = crossing_wq(b);
	b_up = __atomic_load_n(&a_low->q_next, __ATOMIC_ACQUIRE);
	a_up = __atomic_load_n(&b_low->q_next, __ATOMIC_ACQUIRE);
	str_getcred(&cr);
	err = shmpipe_convert(&a->sh_sd, a_low, a_up, &b->sh_sd, b_low, b_up,
			      &cr);
	if (err != 0) {
		cmn_err(CE_WARN, "fork: a STREAMS pipe cannot cross "
			"processes (error %d)", err);
		goto out;
	}
	a->sh_peer = NULL;
	b->sh_peer = NULL;
	pthread_mutex_lock(&sth_pipes_lock);
	list_del(p);
	pthread_mutex_unlock(&sth_pipes_lock);
	/* a writer asleep on a full end waited for the other head's read
	 * queue to back-enable it; that relief now goes to the driver's
	 * service procedure below it: wake the writers (and pollers) to
	 * look again, and sleep, if need be, on the new path */
	sth_wake(&a->sh_wseq, &a->sh_wwaiters);
	sth_wake(&b->sh_wseq, &b->sh_wwaiters);
	sth_changed(a);
	sth_changed(b);
out:
	pthread_mutex_unlock(&b->sh_sd.sd_plumb);
	pthread_mutex_unlock(&a->sh_sd.sd_plumb);
	pthread_mutex_unlock(&p->p_lock);
}

/* Convert every pipe of this process (tests call this directly, to run
 * the cross-process path between threads). */
void sth_pipes_convert_all(void)
{
	struct sth_pair **v = NULL;
	size_t n = 0, cap = 0;

	/* a snapshot with both ends held: converting takes plumbing locks,
	 * which rank above sth_pipes_lock */
	pthread_mutex_lock(&sth_pipes_lock);
	for (struct sth_pair *p = sth_pipes; p != NULL; p = p->p_next) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct sth_pair **nv = realloc(v, nc * sizeof(*v));
			if (nv == NULL)
				break;
			v = nv;
			cap = nc;
		}
		sth_hold(p->p_end[0]);
		sth_hold(p->p_end[1]);
		v[n++] = p;
	}
	pthread_mutex_unlock(&sth_pipes_lock);
	for (size_t i = 0; i < n; i++) {
		struct sth_pair *p = v[i];
		struct sthead *a = p->p_end[0], *b = p->p_end[1];

		convert(p);
		sth_rele(a);
		sth_rele(b);
	}
	free(v);
}

/* ---- named pipes ---- */

int sth_pipe_share(struct sthead *sh, int fds[3], int *side)
{
	int err;

	if (!(sh_flags(sh) & STRPIPE))
		return ENXIO;
	/* both ends here: give them the cross-process driver first */
	pthread_mutex_lock(&sth_pipes_create);
	pthread_mutex_lock(&sh->sh_pair->p_lock);
	bool local = sh->sh_peer != NULL;
	pthread_mutex_unlock(&sh->sh_pair->p_lock);
	/* (readers asleep on either end are counted as the driver's
	 * waiters, sth_kevwait_begin: it arms for them) */
	if (local)
		convert(sh->sh_pair);
	pthread_mutex_unlock(&sth_pipes_create);
	sth_plumb_lock(sh);
	err = (sh_flags(sh) & STRCLOSED) ? ENXIO
					 : shmpipe_share(&sh->sh_sd, fds, side);
	sth_plumb_unlock(sh);
	return err;
}

int sth_pipe_join(const int fds[3], int side, int oflag)
{
	struct sth_file *stale = NULL;
	struct sthead *sh;
	cred_t cr;
	int err, fd = -1;

	if (!str_initialised)
		str_init();
	if ((sh = sth_alloc()) == NULL) {
		err = errno;
		for (int i = 0; i < 3; i++)
			close(fds[i]);
		return -err;
	}
	sh->sh_flag |= STRPIPE;
	sh->sh_wropt = SNDPIPE;
	str_getcred(&cr);
	sth_plumb_lock(sh);
	err = shmpipe_join(&sh->sh_sd, fds, side, &cr);
	if (err == 0 && (fd = sth_new_fd(sh, oflag, &stale)) < 0) {
		err = errno;
		str_close_all(&sh->sh_sd, O_NONBLOCK, &cr);
	}
	sth_plumb_unlock(sh);
	sth_rele(sh);		/* sth_alloc's; the open holds one */
	sth_file_rele(stale);
	return err != 0 ? -err : fd;
}
