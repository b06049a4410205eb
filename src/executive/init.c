/*
 * init.c -- start-up and shutdown of the executive.
 *
 * str_init() runs once, on first use of anything: grace periods, the
 * allocator, the clock, fork handlers and the exit handler.  Threads
 * (workers, the callout thread) start only when first needed, so a
 * program that links the library but never opens a stream pays nothing.
 * After fork() the child keeps its streams but not the parent's other
 * threads; its scheduler and callout thread restart on demand.
 * streams_shutdown() (also at exit) runs what is scheduled, closes every
 * stream, stops the threads and frees every cached block.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>

#include "strsubr.h"

int str_initialised;		/* everything ready, drivers registered */
int str_core_ready;		/* the executive itself ready */
int str_shutting_down;			/* atomic */
static pthread_once_t str_once = PTHREAD_ONCE_INIT;
static pthread_once_t str_builtin_once = PTHREAD_ONCE_INIT;

/* The drivers and modules that come with the library (drivers/builtin.c):
 * registered explicitly, since a static link would drop a constructor. */
extern void strdrv_builtin_register(void);

extern void str_rcu_init(void);
extern void strthread_atfork_child(void);
extern void str_foreach_stream(void (*fn)(struct stdata *));

/* Close one stream at shutdown: the stream head replaces this with its
 * own close; by default pop everything, close the driver and drop the
 * opener's reference. */
static void default_shutdown_stream(struct stdata *sd)
{
	cred_t cr;

	str_getcred(&cr);
	pthread_mutex_lock(&sd->sd_plumb);
	str_close_all(sd, 0, &cr);
	pthread_mutex_unlock(&sd->sd_plumb);
	str_stream_rele(sd);
}

void (*str_shutdown_stream)(struct stdata *) = default_shutdown_stream;
/* The stream head's own first step (forget every descriptor), if any. */
void (*str_shutdown_heads)(void);

void (*str_fork_heads)(bool prepare);

/* After the gate (str_fork_prepare), the locks no holder keeps across an
 * entry: the head's, the registry and the stream list, the callout lock,
 * then the depots (the callout thread frees memory under its lock).  The
 * parent and the child (where the forking thread owns them) let them go
 * in the other order: unlocked, not made anew, so a thread checker sees
 * them released. */
static void atfork_prepare(void)
{
	if (str_fork_heads != NULL)
		str_fork_heads(true);
	pthread_mutex_lock(&strreg_lock);
	pthread_mutex_lock(&str_all_lock);
	strtimer_atfork_prepare();
	strmem_atfork_prepare();
}

static void atfork_parent(void)
{
	strmem_atfork_parent();
	strtimer_atfork_parent();
	pthread_mutex_unlock(&str_all_lock);
	pthread_mutex_unlock(&strreg_lock);
	if (str_fork_heads != NULL)
		str_fork_heads(false);
}

static void atfork_child(void)
{
	atfork_parent();
	str_fork_child();
	strthread_atfork_child();
	strsched_atfork_child();
	strtimer_atfork_child();
	strkev_atfork_child();
}

static void at_exit(void)
{
	streams_shutdown();
}

static void init_once(void)
{
	str_rcu_init();
	strmem_init();
	(void)str_lbolt();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	/* registered after: its prepare handler runs before the one above
	 * (no entry holds the callout lock or a depot lock then) and after
	 * every handler that the stream head registers later (the
	 * conversion of pipes to shared memory enters); its parent handler
	 * after the one above */
	pthread_atfork(str_fork_prepare, str_fork_parent, NULL);
	atexit(at_exit);
	__atomic_store_n(&str_core_ready, 1, __ATOMIC_RELEASE);
}

static void builtin_once(void)
{
	strdrv_builtin_register();
	__atomic_store_n(&str_initialised, 1, __ATOMIC_RELEASE);
}

/* The executive alone (registration uses this, so that registering the
 * built-in drivers does not recurse into str_init). */
void str_init_core(void)
{
	pthread_once(&str_once, init_once);
}

void str_init(void)
{
	pthread_once(&str_once, init_once);
	pthread_once(&str_builtin_once, builtin_once);
}

extern pthread_mutex_t strthread_lock;
extern struct strthread *strthread_list;

/* Is any other thread inside the executive right now? */
static bool others_inside(void)
{
	struct strthread *self = str_self_tls, *t;
	bool busy = false;

	pthread_mutex_lock(&strthread_lock);
	for (t = strthread_list; t != NULL; t = t->t_next)
		if (t != self && !t->t_dead &&
		    (atomic_load(&t->t_rcu) & 1))
			busy = true;
	pthread_mutex_unlock(&strthread_lock);
	return busy;
}

void streams_shutdown(void)
{
	if (!str_initialised || str_shutting_down)
		return;
	__atomic_store_n(&str_shutting_down, 1, __ATOMIC_RELEASE);
	/* drain what is scheduled, close every stream (their close
	 * procedures may schedule more), drain again, stop the threads */
	streams_run();
	if (str_shutdown_heads != NULL)
		str_shutdown_heads();
	str_foreach_stream(str_shutdown_stream);
	strkev_shutdown();
	strsched_shutdown();
	strtimer_shutdown();
	/* other threads of the program may still be using messages: only
	 * free the caches when nobody else is inside */
	if (!others_inside())
		strmem_shutdown();
}
