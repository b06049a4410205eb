/*
 * sth_poll.c -- readiness of streams: the exact poll events, and the
 * mirror that makes the kernel's poll/select/epoll see them.
 *
 * sth_poll_events() computes the STREAMS events of a stream from its
 * head (SVR4 strpoll): POLLPRI for a high priority message at the front,
 * POLLIN with POLLRDNORM or POLLRDBAND for an ordinary one, POLLOUT /
 * POLLWRNORM when band 0 can be written, POLLWRBAND when a band above 0
 * that has been written can (or none has been), POLLERR on an error,
 * POLLHUP after a hangup (and then never POLLOUT), POLLNVAL when the
 * stream is linked below a multiplexer.
 *
 * The mirror.  Each stream's socketpair shows the kernel an
 * approximation: readable (a byte queued to the application end), urgent
 * (an out-of-band byte: POLLPRI), writable (the application end's tiny
 * send buffer empty) or not (filled), hung up (the library end shut
 * down; M_UNHANGUP rebuilds the pair under the same descriptor numbers).
 * An error shows as readable and writable, so that an event loop calls
 * read or write and gets the error.  The mirror is kept only while armed:
 * during a poll()/select() call on the stream (which then recomputes the
 * exact events itself), or forever once the descriptor has been given to
 * epoll.  Updates are serialised by sh_mlock; a caller that cannot take
 * it leaves sh_mdirty for the holder to redo.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sthead.h"

int sth_poll_events(struct sthead *sh, int events)
{
	queue_t *rq = sh->sh_sd.sd_rq;
	int fl = sh_flags(sh), rev = 0;
	mblk_t *mp;

	if (fl & STPLEX)
		return POLLNVAL;
	if (fl & (STRDERR | STWRERR))
		rev |= POLLERR;
	qlock(rq);
	mp = rq->q_first;
	if (mp != NULL) {
		if (mp->b_datap->db_type >= QPCTL)
			rev |= POLLPRI;
		else if (mp->b_band == 0)
			rev |= POLLIN | POLLRDNORM;
		else
			rev |= POLLIN | POLLRDBAND;
	}
	qunlock(rq);
	/* the reader's cache holds ordinary band-0 messages; what is in the
	 * queue (priority, bands) comes first, so only add */
	if (!(rev & (POLLIN | POLLPRI)) && sth_rcache_any(sh))
		rev |= POLLIN | POLLRDNORM;
	if (fl & (STRHUP | STRPEERGONE | STRCLOSED)) {
		rev |= POLLHUP;
	} else if (events & (POLLOUT | POLLWRNORM | POLLWRBAND)) {
		if ((events & (POLLOUT | POLLWRNORM)) &&
		    bcanputnext(sh->sh_sd.sd_wq, 0))
			rev |= POLLOUT | POLLWRNORM;
		if ((events & POLLWRBAND) &&
		    str_bcanputnext_any(sh->sh_sd.sd_wq))
			rev |= POLLWRBAND;
	}
	return rev & (events | POLLERR | POLLHUP | POLLNVAL);
}

/* What the kernel should see now. */
static int mirror_want(struct sthead *sh)
{
	int ev = sth_poll_events(sh, POLLIN | POLLRDNORM | POLLRDBAND |
				 POLLPRI | POLLOUT);
	int want = 0;

	if (ev & (POLLIN | POLLRDNORM | POLLRDBAND))
		want |= MIR_IN;
	if (ev & POLLPRI)
		want |= MIR_PRI | MIR_IN;
	if (ev & POLLOUT)
		want |= MIR_OUT;
	if (ev & POLLHUP)
		want |= MIR_HUP | MIR_IN;
	/* (writable for an error -- never with a hangup, which POLLOUT
	 * excludes) */
	if (ev & (POLLERR | POLLNVAL))
		want |= MIR_IN | ((ev & POLLHUP) ? 0 : MIR_OUT);
	return want;
}

static void drain(int fd, int flags)
{
	char buf[256];

	while (recv(fd, buf, sizeof(buf), flags | MSG_DONTWAIT) > 0)
		;
}

static void mirror_sync(struct sthead *sh);

/*
 * epoll sets watching a mirror being remade.  An epoll registration
 * belongs to the description it was made on; the new pair's description
 * is another, and the old one's registrations go with it.  So before the
 * pair is replaced, the process's epoll instances are asked (their
 * /proc/self/fdinfo lists each watched descriptor with its events, data
 * and inode) which of them watch the mirror's inode, and the same
 * registrations are made again on the new description afterwards.  Only
 * at M_UNHANGUP: nothing is kept or done when epoll_ctl is called.
 */
struct ep_reg {
	int epfd, tfd;
	struct epoll_event ev;
};

#define EP_REGS_MAX	64

static int ep_regs_find(ino_t ino, struct ep_reg *reg, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while (n < max && (e = readdir(d)) != NULL) {
		char path[64], link[32], *buf, *line;
		int epfd = atoi(e->d_name), fd;
		size_t len = 0, cap = 4096;
		ssize_t k;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
		    epfd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", epfd);
		k = readlink(path, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = '\0';
		if (strcmp(link, "anon_inode:[eventpoll]") != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
		if ((fd = sth_real.open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		/* all of it: a line per watched descriptor */
		buf = malloc(cap);
		while (buf != NULL &&
		       (k = sth_real.read(fd, buf + len, cap - len - 1)) > 0) {
			len += (size_t)k;
			if (cap - len - 1 == 0) {
				char *nb = realloc(buf, cap * 2);
				if (nb == NULL) {
					free(buf);
					buf = NULL;
					break;
				}
				buf = nb;
				cap *= 2;
			}
		}
		sth_real.close(fd);
		if (buf == NULL)
			continue;
		buf[len] = '\0';
		for (line = buf; line != NULL && n < max;
		     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			int tfd;
			unsigned int evs;
			unsigned long long data;
			unsigned long tino;

			if (sscanf(line, "tfd: %d events: %x data: %llx pos:%*d "
				   "ino:%lx", &tfd, &evs, &data, &tino) != 4 ||
			    (ino_t)tino != ino)
				continue;
			reg[n].epfd = epfd;
			reg[n].tfd = tfd;
			reg[n].ev.events = evs;
			reg[n].ev.data.u64 = data;
			n++;
		}
		free(buf);
	}
	closedir(d);
	return n;
}

static bool names_stream(int fd, struct sthead *sh)
{
	struct sth_file *f = fd >= 0 ? sth_lookup(fd) : NULL;

	return f != NULL && f->f_sh == sh;
}

/* A fresh socketpair under the same descriptor numbers (undo hangup). */
static void mirror_rebuild(struct sthead *sh)
{
	int sv[2], one = 1, fl, sig = 0, first = -1, nreg = 0;
	struct ep_reg reg[EP_REGS_MAX];
	struct f_owner_ex own;
	struct stat st;
	bool async;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       sv) != 0)
		return;
	if (fstat(sh->sh_mfd_app, &st) == 0 &&
	    __atomic_load_n(&sh->sh_marmed, __ATOMIC_ACQUIRE) >= (1 << 16))
		nreg = ep_regs_find(st.st_ino, reg, EP_REGS_MAX);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
	/* O_ASYNC and its owner and signal belong to the description the
	 * descriptors name: the new one gets them too */
	fl = sth_real.fcntl(sh->sh_mfd_app, F_GETFL);
	async = fl >= 0 && (fl & O_ASYNC) &&
		sth_real.fcntl(sh->sh_mfd_app, F_GETOWN_EX, &own) == 0;
	if (async) {
		sig = sth_real.fcntl(sh->sh_mfd_app, F_GETSIG);
		sth_real.fcntl(sv[0], F_SETOWN_EX, &own);
		if (sig > 0)
			sth_real.fcntl(sv[0], F_SETSIG, sig);
	}
	for (int fd = 0; fd < sth_fdcap; fd++) {
		if (names_stream(fd, sh)) {
			sth_real.dup3(sv[0], fd, (sth_real.fcntl(fd, F_GETFD) &
						  FD_CLOEXEC) ? O_CLOEXEC : 0);
			if (first < 0)
				first = fd;
		}
	}
	sth_real.dup3(sv[0], sh->sh_mfd_app, O_CLOEXEC);
	sth_real.dup3(sv[1], sh->sh_mfd_lib, O_CLOEXEC);
	sth_real.close(sv[0]);
	sth_real.close(sv[1]);
	/* (through the application's number it was set through, still
	 * naming the stream, or another: the signal's si_fd) */
	if (async) {
		int afd = __atomic_load_n(&sh->sh_asyncfd, __ATOMIC_ACQUIRE);
		if (!names_stream(afd, sh))
			afd = first >= 0 ? first : sh->sh_mfd_app;
		sth_real.fcntl(afd, F_SETFL, O_NONBLOCK | O_ASYNC);
	}
	/* the registrations made through numbers that still name the
	 * stream first; then one made through a number closed since (a dup
	 * kept the description) goes on under another of the stream's
	 * numbers, as it went on on the old description, where that set
	 * has none under it (one per set and number: the others are lost) */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nreg; i++) {
			bool live = names_stream(reg[i].tfd, sh);
			int tfd = live ? reg[i].tfd : first;
			if (live == (pass == 0) && tfd >= 0)
				(void)syscall(SYS_epoll_ctl, reg[i].epfd,
					      EPOLL_CTL_ADD, tfd, &reg[i].ev);
		}
	sh->sh_mhave = MIR_OUT;
}

/*
 * After fork() the child's descriptors name the parent's mirror sockets:
 * a shutdown() for a hangup, or a byte for readability, in one process
 * would show in the other.  The child (one thread, nothing else running)
 * gives each stream a fresh pair under the same numbers.  An epoll
 * instance inherited from the parent is the parent's too and still
 * watches the old sockets (changing it here would change it there): a
 * child that waits on its streams makes its own epoll instance.
 */
void sth_mirrors_atfork_child(void)
{
	static unsigned int gen;
	int cap = __atomic_load_n(&sth_fdcap, __ATOMIC_ACQUIRE), one = 1;

	gen++;
	for (int fd = 0; fd < cap; fd++) {
		struct sth_file *f = sth_fdtab != NULL ? sth_fdtab[fd] : NULL;
		struct sthead *sh;
		int sv[2];

		if (f == NULL)
			continue;
		sh = f->f_sh;
		if (sh->sh_mforkgen != gen) {
			sh->sh_mforkgen = gen;
			sth_sig_atfork_child(sh);	/* (once a stream) */
			/* nothing of this process has armed it yet (the
			 * parent's epoll sets are the parent's), and it is
			 * synced when something does: not here, where a
			 * queue lock a parent thread held at the fork is
			 * held for good (the child hung in fork()) */
			__atomic_store_n(&sh->sh_marmed, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&sh->sh_mdirty, 1, __ATOMIC_RELAXED);
			pthread_mutex_init(&sh->sh_mlock, NULL);
			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				       SOCK_CLOEXEC, 0, sv) != 0)
				continue;	/* keeps the shared pair */
			setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &one,
				   sizeof(one));
			sth_real.dup3(sv[0], sh->sh_mfd_app, O_CLOEXEC);
			sth_real.dup3(sv[1], sh->sh_mfd_lib, O_CLOEXEC);
			sth_real.close(sv[0]);
			sth_real.close(sv[1]);
			sh->sh_mhave = MIR_OUT;
		}
		sth_real.dup3(sh->sh_mfd_app, fd,
			      (sth_real.fcntl(fd, F_GETFD) & FD_CLOEXEC) ?
			      O_CLOEXEC : 0);
	}
}

/* Not writable any more: the application end's send buffer filled. */
static void fill_app(struct sthead *sh)
{
	for (int i = 0; i < 64; i++)
		if (send(sh->sh_mfd_app, "o", 1, MSG_DONTWAIT |
			 MSG_NOSIGNAL) != 1)
			break;
}

/* Bring the kernel's view to want (sh_mlock held). */
static void mirror_sync(struct sthead *sh)
{
	int want = mirror_want(sh), have = sh->sh_mhave;
	char c = 0;

	if ((have & MIR_HUP) && !(want & MIR_HUP)) {
		mirror_rebuild(sh);
		have = sh->sh_mhave;
	}
	if ((want & MIR_HUP) && !(have & MIR_HUP)) {
		/* never writable with a hangup: the application end's send
		 * buffer is filled first (after the shutdown it cannot be,
		 * and epoll said EPOLLOUT with EPOLLHUP) */
		if (have & MIR_OUT) {
			fill_app(sh);
			have &= ~MIR_OUT;
		}
		/* the application end now reads EOF and polls HUP (an
		 * urgent byte sent already stays until its message is
		 * read, below) */
		shutdown(sh->sh_mfd_lib, SHUT_RDWR);
		have |= MIR_HUP | MIR_IN;
	}
	if ((have & MIR_PRI) && !(want & MIR_PRI)) {
		recv(sh->sh_mfd_app, &c, 1, MSG_OOB | MSG_DONTWAIT);
		have &= ~MIR_PRI;
		if (!(have & MIR_HUP)) {	/* (hung up: EOF stays) */
			drain(sh->sh_mfd_app, 0);
			have &= ~MIR_IN;
		}
	}
	if (!(have & MIR_HUP)) {
		if ((have & MIR_IN) && !(want & MIR_IN)) {
			drain(sh->sh_mfd_app, 0);
			have &= ~MIR_IN;
		}
		if ((want & MIR_IN) && !(have & MIR_IN)) {
			if (send(sh->sh_mfd_lib, "i", 1, MSG_DONTWAIT |
				 MSG_NOSIGNAL) == 1)
				have |= MIR_IN;
		}
		if ((want & MIR_PRI) && !(have & MIR_PRI)) {
			if (send(sh->sh_mfd_lib, "p", 1, MSG_OOB | MSG_DONTWAIT |
				 MSG_NOSIGNAL) == 1)
				have |= MIR_PRI | MIR_IN;
		}
	}
	if ((want & MIR_OUT) && !(have & MIR_OUT)) {
		drain(sh->sh_mfd_lib, 0);
		have |= MIR_OUT;
	} else if (!(want & MIR_OUT) && (have & MIR_OUT)) {
		fill_app(sh);
		have &= ~MIR_OUT;
	}
	sh->sh_mhave = have;
}

void sth_mirror_update(struct sthead *sh)
{
	__atomic_store_n(&sh->sh_mdirty, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&sh->sh_mdirty, __ATOMIC_ACQUIRE)) {
		if (pthread_mutex_trylock(&sh->sh_mlock) != 0)
			return;		/* the holder redoes it */
		while (__atomic_exchange_n(&sh->sh_mdirty, 0, __ATOMIC_ACQ_REL))
			mirror_sync(sh);
		pthread_mutex_unlock(&sh->sh_mlock);
	}
}

/* (inside an entry: the sync looks at the queues below the head, which
 * a pop on another thread frees only after the entries in progress) */
void sth_mirror_arm(struct sthead *sh, bool persistent)
{
	int v = persistent ? (1 << 16) : 1;

	if (persistent && (__atomic_load_n(&sh->sh_marmed, __ATOMIC_ACQUIRE) &
			   ~0xffff))
		return;		/* already armed for good */
	struct strthread *t = str_enter();
	__atomic_add_fetch(&sh->sh_marmed, v, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&sh->sh_mlock);
	__atomic_store_n(&sh->sh_mdirty, 0, __ATOMIC_RELEASE);
	mirror_sync(sh);
	pthread_mutex_unlock(&sh->sh_mlock);
	/* a change during the sync found the lock taken and left its
	 * update to us: redo it, as sth_mirror_update's holder does */
	if (__atomic_load_n(&sh->sh_mdirty, __ATOMIC_SEQ_CST))
		sth_mirror_update(sh);
	str_exit(t);
}

void sth_mirror_disarm(struct sthead *sh)
{
	__atomic_sub_fetch(&sh->sh_marmed, 1, __ATOMIC_ACQ_REL);
}

/*
 * O_ASYNC (fcntl F_SETFL, ioctl FIOASYNC): the kernel signals the owner
 * of the mirror's application end (F_SETOWN, F_SETOWN_EX and F_SETSIG on
 * a stream descriptor go to it) when the mirror changes: a stream
 * becoming readable, writable again, or hung up.  The mirror is armed for
 * good from then on, as for epoll, and its driver watched.  Every open
 * of a stream names one mirror description: O_ASYNC is the stream's, on
 * or off for all its opens at once, and kept only in the description
 * (F_GETFL asks it: sth_async).  fd is the application's descriptor.
 */
int sth_set_async(struct sth_file *f, int fd, bool on)
{
	struct sthead *sh = f->f_sh;
	int fl = sth_real.fcntl(fd, F_GETFL);

	if (fl < 0)
		return errno;
	if (!(fl & O_ASYNC) == !on)
		return 0;		/* as asked already */
	/* through fd: the number a signal's si_fd gives (F_SETSIG) */
	if (sth_real.fcntl(fd, F_SETFL, on ? fl | O_ASYNC : fl & ~O_ASYNC) != 0)
		return errno;
	if (on) {
		__atomic_store_n(&sh->sh_asyncfd, fd, __ATOMIC_RELEASE);
		sth_mirror_arm(sh, true);
		sth_kevwatch(sh);
	}
	return 0;
}

bool sth_async(int fd)
{
	int fl = sth_real.fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ASYNC);
}
