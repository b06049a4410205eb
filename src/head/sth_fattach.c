/*
 * sth_fattach.c -- named STREAMS pipes between processes: an end that
 * fattach() gave a name in one process, opened by open() in another,
 * and connld.
 *
 * How this works
 * --------------
 * Publishing.  fattach() of a pipe end (sth_open.c) also publishes the
 * name: the process listens on an AF_UNIX socket in the registry
 * directory ($STREAMS_FATTACH_DIR, else /dev/shm/streams-fattach, made
 * mode 1777 like /tmp), named after the attached file's st_dev and
 * st_ino, so every path to that file finds it.  The socket gets the
 * file's permissions (a class that may read or write the file may
 * connect).  A socket there that nobody listens on any more (its process
 * died) is replaced; one that answers means the file is attached by
 * another process: EBUSY.  fdetach(), and the process's exit, unlink
 * the socket; a fork child forgets the names (it does not listen).
 *
 * Opening.  An open() of a path the process does not know as a stream
 * looks here last.  So that ordinary opens stay free, every process
 * keeps the count of published names in one shared word (a System V
 * shared memory page of fixed key, 0666, made by the first publisher:
 * unlike a mapped file it cannot be truncated under its readers): while
 * it is 0 an open costs one load; a process that has not found the
 * page looks for it at most once a second.  When
 * it is not 0, the path and its socket's name are stat()ed, and the
 * socket, if there is one, connected:
 * the listener must run as the file's owner (or root), else the path is
 * opened as a plain file.  The opener sends its open flags; the
 * listening process answers with an error, or with the segment, the
 * doorbell socket and the descriptor socket of a shmpipe end (SCM_RIGHTS)
 * and its side; the opener checks them and makes a stream head over that
 * end (sth_pipe_join).  A listener thread per process (started with the
 * first name) accepts and answers, one opener at a time, each bounded
 * by a time-out.
 *
 * Without connld, openers share the attached end: the listening process
 * converts the pipe to the shmpipe driver if both ends are still inside
 * it (as a fork would) and hands out that end; each opener has a stream
 * head of its own over it, like a fork child holding an end.  With
 * connld pushed on the attached end, each open makes a new pipe in the
 * listening process: one end goes to the opener, the other down the
 * attached end as a M_PASSFP carrying the opener's uid and gid (from
 * SO_PEERCRED), for the server to I_RECVFD.  An open inside the
 * attaching process does the same without the socket (sth_connld_open).
 *
 * Limits.  A process that dies without exit() (a signal, exec) leaves
 * its sockets, which nobody answers (openers get the plain file, the
 * next fattach of the file replaces them), and its names counted, which
 * only makes every open in every process cost two stat() calls.  The
 * count is world-writable, so another local user can make opens look or
 * not look (a name then reads as the plain file) -- not reach a stream:
 * the listener's owner is checked.  The page stays after the last
 * process (4 KiB, one per IPC namespace).  Only absolute paths are
 * looked up (open() of a relative path goes to libc).
 *
 * Locks: fa_lock (the published names, the listener's state) ranks above
 * the stream locks taken while answering; fa_maplock only guards
 * mapping the count.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sthead.h"

#define FA_DIR		"/dev/shm/streams-fattach"
#define FA_ENV		"STREAMS_FATTACH_DIR"
#define FA_SHMKEY	((key_t)0x53545246)	/* "STRF": the count */
#define FA_SHMSIZE	4096
#define FA_MAGIC	0x53464154u	/* "SFAT" */
#define FA_VERSION	1
#define FA_TIMEOUT_MS	5000	/* an answer, or a request, takes at most */
#define FA_RETRY_MS	1000	/* looking again for the count */

struct fa_req {
	uint32_t magic;
	uint32_t version;
	int32_t oflag;
	uint32_t pad;
};

struct fa_rep {
	uint32_t magic;
	uint32_t version;
	int32_t err;		/* 0: three descriptors come with it */
	int32_t side;
};

/* A name this process publishes. */
struct fa_name {
	struct fa_name *next;
	struct sthead *sh;	/* held while published */
	char *path;		/* as given to fattach */
	char *sock;		/* the socket's path */
	int lfd;		/* listening; closed by the listener thread
				   once the name is on fa_dead */
};

static pthread_mutex_t fa_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fa_name *fa_names;	/* fa_lock */
static struct fa_name *fa_dead;		/* detached, to free; fa_lock */
static int fa_wakefd = -1;		/* the listener's eventfd; fa_lock */
static bool fa_running;			/* the listener runs; fa_lock */
static bool fa_exiting;			/* at exit: publish nothing; fa_lock */
static bool fa_hooks;			/* atexit/atfork set; fa_lock */
static struct sthead *fa_serving;	/* the listener answers an opener of
					   it; fa_lock */
static pthread_cond_t fa_servedcv = PTHREAD_COND_INITIALIZER;

static pthread_mutex_t fa_maplock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *fa_count;		/* the shared count, mapped; set once
					   (fa_maplock), read atomically */
static bool fa_count_rw;		/* mapped for writing; fa_maplock */
static long fa_count_tried;		/* when we last looked; atomic */

static const char *fa_dir(void)
{
	const char *d = getenv(FA_ENV);

	return d != NULL && d[0] == '/' ? d : FA_DIR;
}

static long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The registry directory, made if need be; 0 or an errno.  One another
 * user could write into without the sticky bit is not used. */
static int fa_mkdir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 01777) == 0)
		(void)chmod(dir, 01777);	/* (the umask took bits) */
	else if (errno != EEXIST)
		return errno;
	if (lstat(dir, &st) != 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	if (st.st_uid != 0 && st.st_uid != geteuid() &&
	    (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return EPERM;
	return 0;
}

/* Attach the count: for writing (a publisher: made if missing) or for
 * reading.  The mapping, or NULL. */
static uint32_t *fa_count_map(bool rw)
{
	uint32_t *c;
	void *m;
	int id;

	pthread_mutex_lock(&fa_maplock);
	c = __atomic_load_n(&fa_count, __ATOMIC_ACQUIRE);
	if (c != NULL && (fa_count_rw || !rw))
		goto out;
	c = NULL;
	id = shmget(FA_SHMKEY, FA_SHMSIZE, rw ? IPC_CREAT | 0666 : 0);
	if (id < 0)
		goto out;
	m = shmat(id, NULL, rw ? 0 : SHM_RDONLY);
	if (m == (void *)-1)
		goto out;
	c = m;
	/* a read-only attachment that was there stays (readers may hold
	 * it): one page, once */
	__atomic_store_n(&fa_count, c, __ATOMIC_RELEASE);
	fa_count_rw = rw;
out:
	pthread_mutex_unlock(&fa_maplock);
	return c;
}

/* Is anything published anywhere?  One load, usually. */
static bool fa_any(void)
{
	uint32_t *c = __atomic_load_n(&fa_count, __ATOMIC_ACQUIRE);

	if (c == NULL) {
		long now = mono_ms(), last;

		last = __atomic_load_n(&fa_count_tried, __ATOMIC_RELAXED);
		if (last != 0 && now - last < FA_RETRY_MS)
			return false;
		__atomic_store_n(&fa_count_tried, now ? now : 1,
				 __ATOMIC_RELAXED);
		if ((c = fa_count_map(false)) == NULL)
			return false;
	}
	return __atomic_load_n(c, __ATOMIC_ACQUIRE) != 0;
}

static void fa_count_add(int d)
{
	uint32_t *c = __atomic_load_n(&fa_count, __ATOMIC_ACQUIRE);

	if (c != NULL)
		__atomic_add_fetch(c, (uint32_t)d, __ATOMIC_ACQ_REL);
}

/* The socket path of the file st; 0 or ENAMETOOLONG. */
static int fa_sockname(const struct stat *st, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%" PRIx64 ".%"
		     PRIx64, fa_dir(), (uint64_t)st->st_dev,
		     (uint64_t)st->st_ino);
	return n >= (int)sizeof(sa->sun_path) ? ENAMETOOLONG : 0;
}

/* ---- serving openers (the listener thread) ---- */

/* Is connld on sh?  (sd_plumb held) */
static bool connld_on(struct sthead *sh)
{
	for (queue_t *q = __atomic_load_n(&sh->sh_sd.sd_wq->q_next,
					  __ATOMIC_ACQUIRE);
	     q != NULL && q->q_stream == &sh->sh_sd;
	     q = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE)) {
		if (q_pair(q)->qp_kind == QP_MOD &&
		    strcmp(q->q_qinfo->qi_minfo->mi_idname, "connld") == 0)
			return true;
	}
	return false;
}

bool sth_connld_pushed(struct sthead *sh)
{
	bool on;

	sth_plumb_lock(sh);
	on = connld_on(sh);
	sth_plumb_unlock(sh);
	return on;
}

/* Send pipe end fd down sh as a M_PASSFP from uid, gid: 0 or an errno
 * (EAGAIN: the server's end is full, as I_SENDFD says). */
static int connld_pass(struct sthead *sh, int fd, uid_t uid, gid_t gid)
{
	struct strthread *t;
	mblk_t *mp;
	int nfd, err = 0;

	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);	/* ours: registers streams */
	if (nfd < 0)
		return errno;
	t = str_enter();
	if (sh_flags(sh) & (STRHUP | STRPEERGONE | STRCLOSED | STWRERR))
		err = ENXIO;
	else if (!bcanputnext(sh->sh_sd.sd_wq, 0))
		err = EAGAIN;
	else if ((mp = sth_passfp_new(nfd, uid, gid)) == NULL)
		err = ENOSR;
	else
		putnext(sh->sh_sd.sd_wq, mp);
	str_exit(t);
	if (err != 0 && err != ENOSR)
		close(nfd);
	return err;
}

/* A new pipe for an opener with connld on sh: the opener's end in
 * *mine (with fds and side set when shared with another process), the
 * other end sent down sh.  0 or an errno. */
static int connld_pipe(struct sthead *sh, uid_t uid, gid_t gid,
		       int *mine, int fds[3], int *side)
{
	struct sth_file *f;
	struct sthead *end;
	struct strthread *t;
	int p[2], err;

	if (sth_pipe(p) != 0)
		return errno != 0 ? errno : EMFILE;
	if (fds != NULL) {
		/* the opener's end crosses first, so nothing written on
		 * the server's end is left in this process's copy */
		t = str_enter();
		f = sth_lookup(p[1]);
		end = f != NULL ? f->f_sh : NULL;
		if (end != NULL)
			sth_hold(end);
		str_exit(t);
		err = end != NULL ? sth_pipe_share(end, fds, side) : EBADF;
		if (end != NULL)
			sth_rele(end);
		if (err != 0)
			goto fail;
	}
	if ((err = connld_pass(sh, p[0], uid, gid)) != 0) {
		if (fds != NULL)
			for (int i = 0; i < 3; i++)
				close(fds[i]);
		goto fail;
	}
	close(p[0]);
	*mine = p[1];
	return 0;
fail:
	close(p[0]);
	close(p[1]);
	return err;
}

int sth_connld_open(struct sthead *sh, int oflag)
{
	int fd, err;

	err = connld_pipe(sh, geteuid(), getegid(), &fd, NULL, NULL);
	if (err != 0)
		return sth_err(err);
	if ((oflag & (O_NONBLOCK | O_NDELAY)) &&
	    fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
		close(fd);
		return -1;
	}
	if ((oflag & O_CLOEXEC) && fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait up to FA_TIMEOUT_MS for fd to be readable: 0 or an errno. */
static int wait_in(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int r;

	do
		r = poll(&p, 1, FA_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	return r > 0 ? 0 : r == 0 ? ETIMEDOUT : errno;
}

/* Send rep, with fds when rep->err is 0. */
static void send_rep(int conn, const struct fa_rep *rep, const int fds[3])
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} cm;
	struct iovec iov = { (void *)rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (rep->err == 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(3 * sizeof(int));
		memcpy(CMSG_DATA(c), fds, 3 * sizeof(int));
	}
	(void)sendmsg(conn, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Answer one opener of sh on conn. */
static void serve(struct sthead *sh, int conn)
{
	struct fa_rep rep = { FA_MAGIC, FA_VERSION, 0, 0 };
	struct fa_req req;
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	int fds[3], mine = -1;

	if (wait_in(conn) != 0 ||
	    recv(conn, &req, sizeof(req), MSG_DONTWAIT) != (ssize_t)sizeof(req) ||
	    req.magic != FA_MAGIC || req.version != FA_VERSION ||
	    getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &uc, &ul) != 0)
		return;		/* not an opener of ours: nothing said */
	if (sth_connld_pushed(sh))
		rep.err = connld_pipe(sh, uc.uid, uc.gid, &mine, fds,
				      &rep.side);
	else if (sh_flags(sh) & (STRHUP | STRPEERGONE | STRCLOSED))
		rep.err = ENXIO;
	else
		rep.err = sth_pipe_share(sh, fds, &rep.side);
	if (mine >= 0)
		close(mine);	/* the opener's: fds hold it meanwhile */
	send_rep(conn, &rep, fds);
	if (rep.err == 0)
		for (int i = 0; i < 3; i++)
			close(fds[i]);
}

/* Free what fdetach left (fa_lock held). */
static void reap_dead(void)
{
	struct fa_name *n;

	while ((n = fa_dead) != NULL) {
		fa_dead = n->next;
		close(n->lfd);
		free(n->path);
		free(n->sock);
		free(n);
	}
}

/* The stream still published on lfd, held and marked as being served;
 * NULL once detached. */
static struct sthead *fa_find(int lfd)
{
	struct sthead *sh = NULL;

	pthread_mutex_lock(&fa_lock);
	for (struct fa_name *n = fa_names; n != NULL; n = n->next) {
		if (n->lfd == lfd) {
			sh = n->sh;
			sth_hold(sh);
			fa_serving = sh;
			break;
		}
	}
	pthread_mutex_unlock(&fa_lock);
	return sh;
}

/* Done serving sh: an fdetach waiting for that may go on. */
static void fa_served(struct sthead *sh)
{
	pthread_mutex_lock(&fa_lock);
	fa_serving = NULL;
	pthread_cond_broadcast(&fa_servedcv);
	pthread_mutex_unlock(&fa_lock);
	sth_rele(sh);
}

/*
 * The listener: waits on every name's socket and the wake-up, accepts
 * and answers.  The descriptors it polls stay open while it polls: only
 * this thread closes them (reap_dead, at the top of each round).
 */
static void *listener(void *arg)
{
	struct pollfd *pf = NULL;
	size_t cap = 0;

	(void)arg;
	for (;;) {
		size_t n = 1;

		pthread_mutex_lock(&fa_lock);
		reap_dead();
		if (fa_names == NULL) {
			/* nothing to listen for: the thread ends */
			fa_running = false;
			close(fa_wakefd);
			fa_wakefd = -1;
			pthread_mutex_unlock(&fa_lock);
			break;
		}
		for (struct fa_name *m = fa_names; m != NULL; m = m->next)
			n++;
		if (n > cap) {
			struct pollfd *np = realloc(pf, n * sizeof(*pf));
			if (np == NULL) {
				pthread_mutex_unlock(&fa_lock);
				sleep(1);	/* no memory: later */
				continue;
			}
			pf = np;
			cap = n;
		}
		pf[0].fd = fa_wakefd;
		pf[0].events = POLLIN;
		n = 1;
		for (struct fa_name *m = fa_names; m != NULL; m = m->next) {
			pf[n].fd = m->lfd;
			pf[n].events = POLLIN;
			n++;
		}
		pthread_mutex_unlock(&fa_lock);
		if (poll(pf, n, -1) <= 0)
			continue;
		if (pf[0].revents & POLLIN) {
			uint64_t v;
			(void)!read(pf[0].fd, &v, sizeof(v));
		}
		for (size_t i = 1; i < n; i++) {
			struct sthead *sh;
			int conn;

			if (!(pf[i].revents & POLLIN))
				continue;
			conn = accept4(pf[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (conn < 0)
				continue;
			if ((sh = fa_find(pf[i].fd)) != NULL) {
				serve(sh, conn);
				fa_served(sh);
			}
			close(conn);	/* detached: the opener sees EOF */
		}
	}
	free(pf);
	return NULL;
}

/* Wake the listener to look at the names again (fa_lock held). */
static void wake_listener(void)
{
	uint64_t one = 1;

	if (fa_wakefd >= 0)
		(void)!write(fa_wakefd, &one, sizeof(one));
}

/* At exit: no name outlives the process. */
static void fa_atexit(void)
{
	pthread_mutex_lock(&fa_lock);
	fa_exiting = true;
	for (struct fa_name *n = fa_names; n != NULL; n = n->next) {
		unlink(n->sock);
		fa_count_add(-1);
	}
	pthread_mutex_unlock(&fa_lock);
}

/* A fork child does not listen: it forgets the names, which stay the
 * parent's (the streams stay attached by name inside the child). */
static void fa_atfork_child(void)
{
	struct fa_name *n;

	pthread_mutex_init(&fa_lock, NULL);
	pthread_mutex_init(&fa_maplock, NULL);
	pthread_cond_init(&fa_servedcv, NULL);
	fa_serving = NULL;
	while ((n = fa_names) != NULL || (n = fa_dead) != NULL) {
		if (n == fa_names)
			fa_names = n->next;
		else
			fa_dead = n->next;
		close(n->lfd);
		if (n->sh != NULL)
			sth_rele(n->sh);
		free(n->path);
		free(n->sock);
		free(n);
	}
	if (fa_wakefd >= 0)
		close(fa_wakefd);
	fa_wakefd = -1;
	fa_running = false;
}

/* ---- publishing ---- */

/* A socket bound and listening at sa: the descriptor, or -errno
 * (EBUSY: another process listens there). */
static int fa_listen(struct sockaddr_un *sa, mode_t fmode)
{
	mode_t smode = 0;
	int s;

	/* each class that may read or write the file may connect */
	for (int shift = 0; shift <= 6; shift += 3)
		if (fmode & (06 << shift))
			smode |= 06 << shift;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	if (bind(s, (struct sockaddr *)sa, sizeof(*sa)) != 0) {
		int c, err = errno;

		if (err != EADDRINUSE) {
			close(s);
			return -err;
		}
		/* there already: alive, or left by a process that died */
		c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		err = c < 0 ? errno
		      : connect(c, (struct sockaddr *)sa, sizeof(*sa)) == 0
		      ? EBUSY : errno == ECONNREFUSED ? 0 : errno;
		if (c >= 0)
			close(c);
		if (err == 0 && unlink(sa->sun_path) != 0)
			err = errno;
		if (err == 0 && bind(s, (struct sockaddr *)sa, sizeof(*sa)) != 0)
			err = errno == EADDRINUSE ? EBUSY : errno;
		if (err != 0) {
			close(s);
			return -err;
		}
	}
	if (chmod(sa->sun_path, smode) != 0 || listen(s, 64) != 0) {
		int err = errno;
		unlink(sa->sun_path);
		close(s);
		return -err;
	}
	return s;
}

int sth_fattach_publish(struct sthead *sh, const char *path)
{
	struct sockaddr_un sa;
	struct fa_name *n;
	struct stat st;
	int err, lfd;

	if (!(sh_flags(sh) & STRPIPE))
		return 0;	/* only pipe ends cross processes */
	if (stat(path, &st) != 0)
		return errno;
	if ((err = fa_sockname(&st, &sa)) != 0 || (err = fa_mkdir(fa_dir())))
		return err;
	if (fa_count_map(true) == NULL)
		return EACCES;
	n = calloc(1, sizeof(*n));
	if (n == NULL || (n->path = strdup(path)) == NULL ||
	    (n->sock = strdup(sa.sun_path)) == NULL) {
		if (n != NULL)
			free(n->path);
		free(n);
		return ENOMEM;
	}
	pthread_mutex_lock(&fa_lock);
	if (fa_exiting) {
		err = ESHUTDOWN;
		goto fail;
	}
	if (!fa_hooks) {
		atexit(fa_atexit);
		pthread_atfork(NULL, NULL, fa_atfork_child);
		fa_hooks = true;
	}
	if ((lfd = fa_listen(&sa, st.st_mode)) < 0) {
		err = -lfd;
		goto fail;
	}
	n->lfd = lfd;
	n->sh = sh;
	sth_hold(sh);
	if (!fa_running) {
		pthread_t tid;
		pthread_attr_t at;

		if (fa_wakefd < 0)
			fa_wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		err = fa_wakefd < 0 ? errno
		      : str_thread_create(&tid, &at, listener, NULL,
					  "streams-fattach");
		pthread_attr_destroy(&at);
		if (err != 0) {
			unlink(n->sock);
			close(lfd);
			sth_rele(sh);
			goto fail;
		}
		fa_running = true;
	}
	n->next = fa_names;
	fa_names = n;
	fa_count_add(1);
	wake_listener();
	pthread_mutex_unlock(&fa_lock);
	return 0;
fail:
	pthread_mutex_unlock(&fa_lock);
	free(n->path);
	free(n->sock);
	free(n);
	return err;
}

void sth_fattach_unpublish(const char *path)
{
	struct fa_name **pp, *n;

	pthread_mutex_lock(&fa_lock);
	for (pp = &fa_names; (n = *pp) != NULL; pp = &n->next) {
		if (strcmp(n->path, path) == 0) {
			/* n is the listener's to free once on fa_dead (it
			 * may, while we wait below): what we need, first */
			struct sthead *sh = n->sh;

			*pp = n->next;
			unlink(n->sock);
			fa_count_add(-1);
			n->sh = NULL;
			n->next = fa_dead;
			fa_dead = n;
			wake_listener();
			/* an opener being answered is the last one: then
			 * the stream is no longer ours (fdetach is synchronous) */
			while (fa_serving == sh)
				pthread_cond_wait(&fa_servedcv, &fa_lock);
			sth_rele(sh);
			break;
		}
	}
	pthread_mutex_unlock(&fa_lock);
}

/* ---- opening a name published by another process ---- */

/* The answer of the process listening on s: a new descriptor, or
 * -errno.  Everything that comes is checked. */
static int fa_ask(int s, int oflag)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct fa_req req = { FA_MAGIC, FA_VERSION, oflag, 0 };
	struct fa_rep rep;
	struct iovec iov = { &rep, sizeof(rep) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	int fds[4], nfd = 0, err;
	ssize_t n;

	if (send(s, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return -errno;
	if ((err = wait_in(s)) != 0)
		return -err;
	n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL;
	     c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t j = 0; j < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     j++) {
			int x;
			memcpy(&x, CMSG_DATA(c) + j * sizeof(int), sizeof(x));
			if (nfd < 4)
				fds[nfd++] = x;
			else
				close(x);
		}
	}
	err = 0;
	if (n != (ssize_t)sizeof(rep) || rep.magic != FA_MAGIC ||
	    rep.version != FA_VERSION || (mh.msg_flags & MSG_CTRUNC))
		err = EPROTO;
	else if (rep.err != 0)
		err = rep.err > 0 && rep.err < 4096 ? rep.err : EPROTO;
	else if (nfd != 3)
		err = EPROTO;
	if (err != 0) {
		for (int i = 0; i < nfd; i++)
			close(fds[i]);
		return -err;
	}
	return sth_pipe_join(fds, rep.side, oflag);
}

int sth_fattach_open(const char *path, int oflag)
{
	struct sockaddr_un sa;
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	struct stat st, ss;
	int s, fd;

	if (!fa_any() || stat(path, &st) != 0 || fa_sockname(&st, &sa) != 0 ||
	    lstat(sa.sun_path, &ss) != 0 || !S_ISSOCK(ss.st_mode))
		return -2;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -2;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockopt(s, SOL_SOCKET, SO_PEERCRED, &uc, &ul) != 0 ||
	    (uc.uid != 0 && uc.uid != st.st_uid)) {
		/* nobody attached it, or somebody who may not have */
		close(s);
		return -2;
	}
	if ((oflag & O_CREAT) && (oflag & O_EXCL)) {
		close(s);
		return sth_err(EEXIST);
	}
	fd = fa_ask(s, oflag);
	close(s);
	return fd < 0 ? sth_err(-fd) : fd;
}
