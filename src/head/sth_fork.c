/*
 * sth_fork.c -- the stream head's part of fork().
 *
 * A child must get every table of the head whole and no lock of it
 * taken (its other threads are gone; a lock one of them held would be
 * held for good).  The executive's gate (rcu.c) already keeps every
 * thread out of its entries while fork() copies the process; the head's
 * locks fall in two groups around it:
 *
 * - Locks held across an entry or taken under one that is:
 *   sth_open_lock (a driver's open runs under it), the link lock
 *   (unlinking enters), the name table's (a fattach takes a plumbing
 *   lock under it) and the pipe list's (a closing pipe end takes it
 *   under the link lock).  Their holders may be waiting to enter, so
 *   they are taken here, in the prepare handler registered after the
 *   executive's, which runs before the gate closes.  The pipes are
 *   converted to shared memory in the same handler (sth_pipe.c), first,
 *   with new pipes held back (sth_pipes_create).
 * - Short locks no holder keeps across an entry (the descriptor table,
 *   the device table, the restarting signals' set): taken after the gate, by the executive's prepare
 *   handler through str_fork_heads, so no thread inside an entry waits
 *   for them while the gate waits for it.
 *
 * The parent and the child let everything go (in the child the forking
 * thread holds them all; unlocked, not made anew, so a thread checker
 * sees them released).  A stream's own plumbing lock cannot be taken
 * around the fork (it is held across a drain of up to 15 s): a stream
 * whose lock was held is marked broken in the child instead (below).
 */
#include <errno.h>

#include "sthead.h"

extern pthread_mutex_t sth_open_lock, sth_link_lock, sth_names_lock;
extern pthread_mutex_t sth_pipes_create, sth_pipes_lock;
extern pthread_mutex_t sth_fd_lock, sth_dev_lock, sth_restart_lock;

static pthread_once_t sth_fork_once = PTHREAD_ONCE_INIT;

/* The pipes are converted first, holding none of the others: letting go
 * of a converted end may be its last close, which takes the link lock. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&sth_pipes_create);
	sth_pipes_convert_all();
	pthread_mutex_lock(&sth_open_lock);
	pthread_mutex_lock(&sth_link_lock);
	pthread_mutex_lock(&sth_names_lock);
	pthread_mutex_lock(&sth_pipes_lock);
}

/* The parent, and the child, whose forking thread holds them all. */
static void fork_release(void)
{
	pthread_mutex_unlock(&sth_pipes_lock);
	pthread_mutex_unlock(&sth_names_lock);
	pthread_mutex_unlock(&sth_link_lock);
	pthread_mutex_unlock(&sth_open_lock);
	pthread_mutex_unlock(&sth_pipes_create);
}

/*
 * In the child: a stream whose plumbing lock (or its pipe's) another
 * thread held at the fork is in the middle of a push, pop, open or close
 * that will never finish.  Its locks are made anew and it is marked
 * broken: reads, writes and ioctls fail with EIO, an open of its device
 * with EIO, and closing it only lets the descriptor go, its modules and
 * memory kept as they are (a thread of the parent may have been half-way
 * through freeing them).
 */
static bool held_elsewhere(pthread_mutex_t *m)
{
	if (pthread_mutex_trylock(m) != 0)
		return true;
	pthread_mutex_unlock(m);
	return false;
}

static void break_if_held(struct stdata *sd)
{
	struct sthead *sh = sd->sd_head;
	bool held;

	if (sh == NULL)
		return;
	held = sh->sh_pair != NULL && held_elsewhere(&sh->sh_pair->p_lock);
	held |= held_elsewhere(&sd->sd_plumb);
	if (!held)
		return;
	if (sh->sh_pair != NULL)
		pthread_mutex_init(&sh->sh_pair->p_lock, NULL);
	pthread_mutex_init(&sd->sd_plumb, NULL);
	sth_hold(sh);			/* kept for good */
	sh->sh_rerror = sh->sh_werror = EIO;
	__atomic_or_fetch(&sh->sh_flag, STRBROKEN | STRDERR | STWRERR,
			  __ATOMIC_RELAXED);
}

/* In the child: nobody sleeps on its copy of a stream (the one thread
 * forked, awake), and the eventfd that woke readers asleep in poll() is
 * the parent's too -- tokens written for the parent's sleepers would be
 * taken here, and theirs there: the child makes its own when it needs
 * one. */
static void no_sleepers(struct stdata *sd)
{
	struct sthead *sh = sd->sd_head;

	if (sh == NULL)
		return;
	sh->sh_rwaiters = sh->sh_kwaiters = 0;
	sh->sh_wwaiters = sh->sh_iwaiters = 0;
	sh->sh_iocbusy = 0;	/* (a parent's thread waiting for an ack
				   held the ioctl slot) */
	if (sh->sh_kevfd >= 0) {
		sth_real.close(sh->sh_kevfd);
		sh->sh_kevfd = -1;
	}
}

static void fork_child(void)
{
	fork_release();
	sth_fd_atfork_child();
	sth_restart_atfork_child();
	str_fork_each_stream(break_if_held);
	str_fork_each_stream(no_sleepers);
}

/* After the gate (init.c's prepare, parent and child handlers). */
static void fork_gated(bool prepare)
{
	if (prepare) {
		pthread_mutex_lock(&sth_fd_lock);
		pthread_mutex_lock(&sth_dev_lock);
		pthread_mutex_lock(&sth_restart_lock);
	} else {
		pthread_mutex_unlock(&sth_restart_lock);
		pthread_mutex_unlock(&sth_dev_lock);
		pthread_mutex_unlock(&sth_fd_lock);
	}
}

static void fork_init(void)
{
	str_init_core();
	str_fork_heads = fork_gated;
	/* after the executive's: this prepare handler runs before the
	 * gate closes */
	pthread_atfork(fork_prepare, fork_release, fork_child);
}

/* Before the first stream head exists (and after str_init). */
void sth_fork_init(void)
{
	pthread_once(&sth_fork_once, fork_init);
}
