/*
 * kev.c -- kernel event sources: how a driver whose data lives behind a
 * kernel descriptor (a socket, an eventfd) hears that the descriptor is
 * ready, without a thread of its own.
 *
 * How this works
 * --------------
 * A driver fills a struct strkev (its descriptor, its read queue, a run
 * function) and attaches it.  When it has nothing more to read, or the
 * kernel refused output, it arms the source for POLLIN and/or POLLOUT.
 * One I/O thread per process waits on every armed source with epoll
 * (EPOLLONESHOT: one report per arming, so a descriptor that stays
 * readable while the driver is busy reading it costs no wake-ups) and
 * calls the run function, inside an entry, with the events that came.
 * The driver reads or writes what it can, sends messages up or enables
 * its queues, and arms again if it must wait once more.
 *
 * The run function may also be called by other threads: a stream head
 * about to wait for data calls it (sd_kev) so a reader pulls what the
 * kernel already has without waiting for the I/O thread.  A driver's run
 * function must therefore tolerate concurrent calls (try-lock and return
 * is enough: whoever holds the lock will see the data).  Only D_MP
 * drivers may use kernel event sources: the I/O thread enters no
 * perimeter.
 *
 * Lifetime.  Slots in kev_slot[] name attached sources; epoll carries
 * (generation, slot), so an event for a source detached meanwhile is
 * recognised and dropped.  The I/O thread marks the source it is running
 * (kev_running) under kev_lock; str_kev_detach() clears the slot under
 * the same lock and then waits until the I/O thread is no longer running
 * that source, so after it returns nothing calls the run function again.
 * Stream heads call run functions only on streams they hold open, and a
 * driver detaches in its close procedure, after the last such call.
 *
 * After fork() the child shares the parent's epoll instance: it makes
 * its own, registers its copies of the attached sources again, armed as
 * they were, and starts its own I/O thread on the next arming.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "strsubr.h"

#define KEV_BATCH 64

static pthread_mutex_t kev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strkev **kev_slot;	/* attached sources; kev_lock */
static unsigned kev_nslot;		/* size of kev_slot; kev_lock */
static unsigned kev_nfree_hint;		/* first slot that may be free */
static int kev_epfd = -1;		/* epoll instance; kev_lock */
static int kev_stopfd = -1;		/* eventfd waking the thread to stop */
static int kev_thread_running;		/* kev_lock */
static int kev_stop;			/* kev_lock */
static pthread_t kev_thread;
static pthread_t kev_thread_id;		/* valid while running */
static struct strkev *kev_running;	/* source whose run function the I/O
					   thread is in; kev_lock to set,
					   atomic to read */

#define KEV_DATA(ke) (((uint64_t)(ke)->ke_gen << 32) | (ke)->ke_slot)

static unsigned ep_events(unsigned events)
{
	unsigned e = EPOLLONESHOT;

	if (events & POLLIN)
		e |= EPOLLIN | EPOLLRDHUP;
	if (events & POLLOUT)
		e |= EPOLLOUT;
	if (events & POLLRDHUP)
		e |= EPOLLRDHUP;	/* the hangup alone */
	if (events & POLLERR)
		e |= EPOLLERR;		/* an error alone (always reported,
					   but a one-shot arming must name
					   something to be live) */
	return e;
}

static unsigned poll_events(unsigned e)
{
	unsigned r = 0;

	if (e & EPOLLIN)
		r |= POLLIN;
	if (e & EPOLLOUT)
		r |= POLLOUT;
	if (e & EPOLLERR)
		r |= POLLERR;
	if (e & (EPOLLHUP | EPOLLRDHUP))
		r |= POLLHUP;
	return r;
}

/* kev_lock held */
static int setup_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ~0ull };

	if (kev_epfd >= 0)
		return 0;
	kev_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (kev_epfd < 0)
		return -errno;
	kev_stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (kev_stopfd < 0 ||
	    epoll_ctl(kev_epfd, EPOLL_CTL_ADD, kev_stopfd, &ev) < 0) {
		int err = -errno;
		if (kev_stopfd >= 0)
			close(kev_stopfd);
		close(kev_epfd);
		kev_epfd = kev_stopfd = -1;
		return err;
	}
	return 0;
}

static void *kev_main(void *arg)
{
	struct epoll_event evs[KEV_BATCH];

	(void)arg;
	for (;;) {
		int n = epoll_wait(kev_epfd, evs, KEV_BATCH, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < n; i++) {
			uint64_t d = evs[i].data.u64;
			struct strkev *ke = NULL;
			struct strthread *t;

			if (d == ~0ull) {
				pthread_mutex_lock(&kev_lock);
				int stop = kev_stop;
				pthread_mutex_unlock(&kev_lock);
				if (stop)
					return NULL;
				continue;
			}
			pthread_mutex_lock(&kev_lock);
			if ((uint32_t)d < kev_nslot) {
				ke = kev_slot[(uint32_t)d];
				if (ke != NULL && ke->ke_gen != (uint32_t)(d >> 32))
					ke = NULL;
			}
			if (ke != NULL) {
				ke->ke_armed = 0;
				__atomic_store_n(&kev_running, ke,
						 __ATOMIC_RELEASE);
			}
			pthread_mutex_unlock(&kev_lock);
			if (ke == NULL)
				continue;
			t = str_enter();
			ke->ke_run(ke, poll_events(evs[i].events));
			str_exit(t);
			__atomic_store_n(&kev_running, NULL, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/* kev_lock held */
static int ensure_thread(void)
{
	pthread_attr_t a;
	int err;

	if (kev_thread_running)
		return 0;
	if (kev_stop)
		return -ESHUTDOWN;
	if ((err = setup_epoll()) != 0)
		return err;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	err = str_thread_create(&kev_thread, &a, kev_main, NULL, "streams-io");
	pthread_attr_destroy(&a);
	if (err != 0)
		return -err;
	kev_thread_id = kev_thread;
	kev_thread_running = 1;
	return 0;
}

int str_kev_attach(struct strkev *ke)
{
	struct epoll_event ev = { 0 };
	unsigned i;
	int err;

	if (ke == NULL || ke->ke_fd < 0 || ke->ke_run == NULL)
		return -EINVAL;
	if (!str_core_ready)
		str_init_core();
	pthread_mutex_lock(&kev_lock);
	if ((err = setup_epoll()) != 0)
		goto out;
	for (i = kev_nfree_hint; i < kev_nslot; i++)
		if (kev_slot[i] == NULL)
			break;
	if (i == kev_nslot) {
		unsigned n = kev_nslot ? kev_nslot * 2 : 64;
		struct strkev **s = realloc(kev_slot, n * sizeof(*s));
		if (s == NULL) {
			err = -ENOMEM;
			goto out;
		}
		memset(s + kev_nslot, 0, (n - kev_nslot) * sizeof(*s));
		kev_slot = s;
		kev_nslot = n;
	}
	ke->ke_slot = i;
	ke->ke_gen++;
	ke->ke_armed = 0;
	/* registered disarmed: a oneshot with no events reports nothing */
	ev.events = EPOLLONESHOT;
	ev.data.u64 = KEV_DATA(ke);
	if (epoll_ctl(kev_epfd, EPOLL_CTL_ADD, ke->ke_fd, &ev) < 0) {
		err = -errno;
		goto out;
	}
	kev_slot[i] = ke;
	kev_nfree_hint = i + 1;
	ke->ke_attached = 1;
out:
	pthread_mutex_unlock(&kev_lock);
	return err;
}

/* Arm ke for events (kev_lock held). */
static int arm_locked(struct strkev *ke, unsigned events)
{
	struct epoll_event ev;
	int err;

	if (!ke->ke_attached)
		return -EINVAL;
	events &= POLLIN | POLLOUT | POLLRDHUP | POLLERR;
	if ((err = ensure_thread()) != 0)
		return err;
	ev.events = ep_events(events);
	ev.data.u64 = KEV_DATA(ke);
	if (epoll_ctl(kev_epfd, EPOLL_CTL_MOD, ke->ke_fd, &ev) < 0)
		return -errno;
	ke->ke_armed = events;
	return 0;
}

/* events: POLLIN, POLLOUT, and POLLRDHUP for a report of the hangup
 * alone (a socket whose data is left for another process to read; an
 * arming with no event at all would report nothing, not even that), or
 * POLLERR for an error alone (a socket whose end of file was read). */
int str_kev_arm(struct strkev *ke, unsigned events)
{
	int err;

	pthread_mutex_lock(&kev_lock);
	err = arm_locked(ke, events);
	pthread_mutex_unlock(&kev_lock);
	return err;
}

/* The events armed and the ones added are one step under kev_lock: an
 * EPOLL_CTL_MOD replaces the whole mask, so two threads adding POLLIN
 * and POLLOUT from a stale reading would leave one of them unarmed. */
int str_kev_rearm(struct strkev *ke, unsigned events)
{
	int err = 0;

	events &= POLLIN | POLLOUT | POLLRDHUP | POLLERR;
	pthread_mutex_lock(&kev_lock);
	if ((ke->ke_armed & events) != events)
		err = arm_locked(ke, ke->ke_armed | events);
	pthread_mutex_unlock(&kev_lock);
	return err;
}

void str_kev_detach(struct strkev *ke)
{
	pthread_mutex_lock(&kev_lock);
	if (!ke->ke_attached) {
		pthread_mutex_unlock(&kev_lock);
		return;
	}
	kev_slot[ke->ke_slot] = NULL;
	if (ke->ke_slot < kev_nfree_hint)
		kev_nfree_hint = ke->ke_slot;
	ke->ke_attached = 0;
	ke->ke_armed = 0;
	if (kev_epfd >= 0)
		(void)epoll_ctl(kev_epfd, EPOLL_CTL_DEL, ke->ke_fd, NULL);
	pthread_mutex_unlock(&kev_lock);
	/* the I/O thread may be running this source now: wait it out
	 * (unless this is the I/O thread itself, inside that run) */
	if (kev_thread_running && pthread_equal(pthread_self(), kev_thread_id))
		return;
	while (__atomic_load_n(&kev_running, __ATOMIC_ACQUIRE) == ke)
		sched_yield();
}

void strkev_shutdown(void)
{
	int running;

	pthread_mutex_lock(&kev_lock);
	kev_stop = 1;
	running = kev_thread_running;
	pthread_mutex_unlock(&kev_lock);
	if (running) {
		uint64_t one = 1;
		if (write(kev_stopfd, &one, sizeof(one)) < 0)
			abort();	/* an eventfd write cannot fail here */
		pthread_join(kev_thread, NULL);
	}
	pthread_mutex_lock(&kev_lock);
	kev_thread_running = 0;
	pthread_mutex_unlock(&kev_lock);
}

/* In a fork's child nothing waits for a driver's wake-ups: the sleepers
 * are the parent's threads, its SIGPOLL registrations are not inherited
 * (sth_sig_atfork_child), and its epoll watches are the parent's (the
 * child's own epoll_ctl counts its watch again).  Otherwise the child's
 * I/O thread would pull for waiters it does not have -- taking, from a
 * ring the two processes share, what the parent waits for. */
static void kevwant_child(struct stdata *sd)
{
	__atomic_store_n(&sd->sd_kevwatch, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd->sd_kevwant, 0, __ATOMIC_RELAXED);
}

void strkev_atfork_child(void)
{
	str_fork_each_stream(kevwant_child);
	pthread_mutex_init(&kev_lock, NULL);
	kev_thread_running = 0;
	kev_running = NULL;
	if (kev_epfd < 0)
		return;
	close(kev_epfd);
	close(kev_stopfd);
	kev_epfd = kev_stopfd = -1;
	if (setup_epoll() != 0)
		return;
	for (unsigned i = 0; i < kev_nslot; i++) {
		struct strkev *ke = kev_slot[i];
		struct epoll_event ev;

		if (ke == NULL)
			continue;
		ev.events = ke->ke_armed ? ep_events(ke->ke_armed)
					 : EPOLLONESHOT;
		ev.data.u64 = KEV_DATA(ke);
		if (epoll_ctl(kev_epfd, EPOLL_CTL_ADD, ke->ke_fd, &ev) < 0)
			ke->ke_armed = 0;
	}
	if (!kev_stop)
		for (unsigned i = 0; i < kev_nslot; i++)
			if (kev_slot[i] != NULL && kev_slot[i]->ke_armed) {
				(void)ensure_thread();
				break;
			}
}

