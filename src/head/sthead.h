/*
 * sthead.h -- the stream head: where applications meet STREAMS.
 *
 * How the stream head works
 * -------------------------
 * Descriptors.  Every stream owns an AF_UNIX stream socketpair, its
 * "mirror".  The descriptors an application gets from open() are dups of
 * the mirror's application end, so they are real kernel descriptors:
 * numbers never collide, close() and dup() work, and poll/select/epoll can
 * wait on them beside sockets.  The library never reads data from them:
 * the POSIX calls (sth_posix.c) look the number up in the descriptor table
 * (sth_fd.c) and come here for streams, to libc for everything else.
 *
 * Readiness.  While someone may be waiting in the kernel on a stream
 * (poll/select in progress, or the descriptor was given to epoll) the
 * mirror is "armed" and mirrors the head's state: a byte queued for
 * readability, an out-of-band byte for POLLPRI, a full send buffer for
 * "not writable", a shutdown for hangup (sth_poll.c).  poll() and select()
 * compute the exact STREAMS events themselves; the mirror only wakes them.
 * Unarmed, readers and writers sleep on futexes and no system call is made
 * while data flows.
 *
 * Reading (sth_read.c).  The head's read put procedure (strrput) queues
 * data with putq on the head read queue and wakes sleepers; read/getmsg
 * take messages with getq, so SVR4 flow control and back-enabling of the
 * queue below happen as the reader drains.
 *
 * Drivers over a kernel descriptor (a socket, another process's ring:
 * sd_kev, kev.c).  A reader that finds nothing asks the driver to pull
 * what the kernel already has (KEV_PULL; also before a non-blocking read
 * says EAGAIN), and before it sleeps to arrange a wake-up (KEV_WAIT); a
 * look that is not a read (I_PEEK, I_NREAD) says KEV_LOOK, which a
 * driver may answer without a system call.  When the driver allows it
 * (ke_direct) a reader sleeps in poll() on the driver's descriptor and
 * the head's eventfd instead of its futex, and pulls what woke it itself:
 * one wake-up per arrival, as for a socket reader (read_wait_direct).
 *
 * Writing (sth_write.c).  write/putmsg check canputnext() on the head
 * write queue, build messages and putnext() them.  A writer that finds the
 * stream full sleeps until the head write queue's service procedure, run
 * by a back-enable, wakes it.  Service procedures enabled on the way run
 * when the call leaves the library.
 *
 * Locks, outer to inner: the link lock (every I_LINK/I_UNLINK and a last
 * close), a stream's plumbing lock (sth_plumb_lock: the pipe pair lock,
 * then the executive's sd_plumb: push, pop, close), sh_rlock (one
 * reader at a time; biased to the thread that usually reads, lock.c),
 * sh_lock (head state), then queue locks.
 * Descriptor table: sth_fd_lock, taken alone.  One ioctl at a time per
 * stream (sh_iocbusy) is not a lock: its waiters sleep interruptibly,
 * with a time-out (sth_ioctl.c).
 */
#ifndef STREAMS_STHEAD_H
#define STREAMS_STHEAD_H

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stream.h>
#include <sys/stropts.h>
#include <sys/uio.h>

#include "strsubr.h"

/* sh_flag: head state (sh_lock for writers; read racily with atomics) */
#define STRHUP		0x0001	/* M_HANGUP received */
#define STRDERR		0x0002	/* read error set */
#define STWRERR		0x0004	/* write error set */
#define STRPRI		0x0008	/* a high priority message is queued */
#define STPLEX		0x0010	/* linked below a multiplexer */
#define STRISTTY	0x0020	/* SO_ISTTY */
#define STRPIPE		0x0040	/* one end of a STREAMS pipe */
#define STRCLOSED	0x0080	/* being closed */
#define STRMREAD	0x0100	/* SO_MREADON: send M_READ before blocking */
#define STRDELIM	0x0200	/* SO_DELIM */
#define STRNDELAY	0x0400	/* SO_NDELON: old-style non-blocking */
#define STRTOSTOP	0x0800
#define STRPEERGONE	0x1000	/* pipe: the other end is closed */
#define STRCLONE	0x2000	/* opened through the clone driver */
#define STRBANDQ	0x4000	/* a band > 0 message may be queued ahead
				   of the read cache (set after queueing,
				   cleared by the reader before looking) */
#define STRBROKEN	0x8000	/* fork(): another thread was changing its
				   plumbing; unusable in the child (EIO) */

/* Mirror event bits (sh_mwant / sh_mhave) */
#define MIR_IN		0x01
#define MIR_PRI		0x02
#define MIR_OUT		0x04
#define MIR_HUP		0x08

struct sthead;

/* One open() of a stream: the "open file". */
struct sth_file {
	struct sthead *f_sh;		/* the stream; holds one open */
	int f_oflag;			/* O_NONBLOCK etc.; atomic */
	int f_refs;			/* descriptor numbers naming it;
					   sth_fd_lock */
	int f_holds;			/* calls in progress that slept; atomic */
};

/* A link of a lower stream below a multiplexing driver. */
struct sth_link {
	struct sth_link *l_next;	/* link lock */
	struct sth_link *l_allnext;	/* every link (sth_ioctl.c's
					   list); link lock */
	struct sthead *l_lower;		/* the linked stream (held) */
	struct sthead *l_upper;		/* the controlling stream (held if
					   persistent) */
	struct cdevsw *l_mux;		/* the multiplexing driver */
	int l_muxid;
	int l_persist;			/* I_PLINK */
};

/* A process asking for SIGPOLL (I_SETSIG). */
struct sth_sig {
	struct sth_sig *s_next;		/* sh_lock */
	pid_t s_pid;
	int s_events;			/* S_* */
};

/*
 * Fields are grouped by who writes them, one cache line group each, so a
 * pipe's writer and reader do not bounce each other's lines: read-mostly
 * state, the reader's lock, the reader's wake-up word, the writer's, and
 * the cold rest.
 */
#define STH_LINE __attribute__((aligned(64)))

struct sthead {
	struct stdata sh_sd;		/* the executive's stream: FIRST */

	/* read-mostly: checked on every call, changed rarely */
	int sh_flag STH_LINE;		/* STR*; changed atomically */
	int sh_rdopt;			/* read mode + RPROT*; sh_lock */
	int sh_wropt;			/* SNDZERO, SNDPIPE; sh_lock */
	int sh_erropt;			/* RERR*|WERR*; sh_lock */
	size_t sh_wroff;		/* write offset (SO_WROFF); sh_lock */
	size_t sh_strmsgsz;		/* largest data part (0: none) */
	size_t sh_strctlsz;		/* largest control part */
	int sh_marmed;			/* pollers now, + 1 << 16 if epoll; atomic */
	int sh_sigevents;		/* union of I_SETSIG events; atomic */
	struct sthead *sh_peer;		/* pipe: other end; plumbing lock */
	mblk_t *sh_pipehup;		/* pipe: the M_HANGUP its last close
					   sends the peer, had with the pipe
					   (never lacking); plumbing lock */
	struct sth_pair *sh_pair;	/* pipe: shared plumbing lock */
	int sh_mfd_app;			/* private dup of the application end */
	int sh_mfd_lib;			/* the library's end */
	unsigned int sh_mforkgen;	/* fork generation of the mirror (its
					   own sockets after fork; the child's
					   single thread) */
	/* read-side flush generations, each bumped in the read queue's lock
	 * hold that flushes (sth_rflush), so that a reader can tell whether
	 * what it took before a flush would have gone with it */
	unsigned int sh_rflushgen;	/* every flush of band 0 (alone or with
					   the rest); atomic */
	unsigned int sh_rflushall;	/* every flush of the whole queue;
					   atomic */
	unsigned int *sh_rbandgen;	/* [NBAND]: [b] every flush of band b
					   alone; allocated by the first,
					   freed with the head; atomic */
	unsigned int sh_rbandmiss;	/* flushes of a band alone that found
					   no sh_rbandgen (no memory); atomic */

	/* the reader's: one reader at a time, and its read cache, a run of
	 * ordinary band-0 messages taken from the head read queue in one
	 * lock hold, read before the queue (sth_read.c) */
	struct strblock sh_rlock STH_LINE;	/* biased to its usual reader */
	mblk_t *sh_rcache;		/* first cached (b_next); sh_rlock */
	int sh_rcache_any;		/* sh_rcache != NULL, for lookers
					   outside sh_rlock; sh_rlock, atomic */
	unsigned int sh_rcache_gen;	/* sh_rflushgen when taken; sh_rlock */
	unsigned long sh_rdebt;		/* bytes read from cached messages, not
					   yet given back to q_count; sh_rlock */
	unsigned long sh_rdebt_blocks;	/* the same in blocks; sh_rlock */

	/* sleeping readers: data, error, hangup (futex word bumped on each
	 * wake-up; waiters counted so wakers make no system call when
	 * nobody sleeps) */
	int sh_rseq STH_LINE;
	int sh_rwaiters;		/* atomic */
	int sh_kwaiters;		/* readers asleep in poll() on the
					   driver's descriptor (ke_direct),
					   counted in sh_rwaiters too; atomic */
	int sh_kevfd;			/* eventfd waking them; -1 until the
					   first needs it (made under sh_lock,
					   fixed after: atomic) */

	/* sleeping writers: flow control relieved */
	int sh_wseq STH_LINE;
	int sh_wwaiters;		/* atomic */

	/* cold */
	pthread_mutex_t sh_lock STH_LINE;	/* head state */
	int sh_iocbusy;			/* an ioctl is in progress (one at
					   a time; waiters sleep on sh_iseq);
					   atomic */
	int sh_rerror;			/* read error (0 none); sh_lock */
	int sh_werror;			/* write error; sh_lock */
	unsigned int sh_closetime;	/* ms to drain at close; sh_lock */
	int sh_opens;			/* open files; plumbing lock */
	dev_t sh_dev;
	int sh_iseq;			/* ioctl replies (futex word) */
	int sh_iwaiters;		/* atomic */
	unsigned int sh_iocid;		/* ioctl id awaited (0: none); sh_lock */
	mblk_t *sh_iocmsg;		/* reply received; sh_lock */
	pthread_mutex_t sh_mlock;	/* the mirror's state below */
	int sh_mhave;			/* MIR_* the kernel shows now; sh_mlock */
	int sh_asyncfd;			/* the number O_ASYNC was last set
					   through (a signal's si_fd), -1;
					   atomic */
	int sh_mdirty;			/* state changed since last sync; atomic */
	struct sth_sig *sh_sigs;	/* I_SETSIG registrations; sh_lock */
	struct sth_link *sh_links;	/* links below this stream; link lock */
	struct sth_link *sh_linkedby;	/* this stream's own link, if linked */
};

struct sth_pair {
	pthread_mutex_t p_lock;
	int p_refs;			/* ends alive; atomic */
	/* while both ends live in this process only (sth_pipe.c) */
	struct sthead *p_end[2];	/* sth_pipes_lock */
	struct sth_pair *p_next;	/* sth_pipes_lock */
	struct sth_pair **p_prevp;	/* sth_pipes_lock; NULL: not listed */
};

static inline struct sthead *SH(struct stdata *sd)
{
	return (struct sthead *)sd;
}

/* Plumbing (push, pop, link, close) of a stream; see sh_pair. */
/* (what the thread defers meanwhile -- a passed descriptor's close, a
 * signal -- waits for the unlock: it may take these locks) */
static inline void sth_plumb_lock(struct sthead *sh)
{
	str_defer_block();
	if (sh->sh_pair != NULL)
		pthread_mutex_lock(&sh->sh_pair->p_lock);
	pthread_mutex_lock(&sh->sh_sd.sd_plumb);
}

static inline void sth_plumb_unlock(struct sthead *sh)
{
	pthread_mutex_unlock(&sh->sh_sd.sd_plumb);
	if (sh->sh_pair != NULL)
		pthread_mutex_unlock(&sh->sh_pair->p_lock);
	str_defer_unblock();
}

/* sth_poll.c: after fork the child's streams get mirror sockets of
 * their own (a hangup in one process must not show in the other). */
void sth_mirrors_atfork_child(void);

/* sth_pipe.c: give every in-process pipe its cross-process driver (done
 * before fork; tests call it to run that path between threads). */
void sth_pipes_convert_all(void);
void sth_fork_init(void);		/* sth_fork.c */

/* Let the driver move what it already has up the stream (a STREAMS pipe
 * end reading another process's ring), inside an entry: KEV_PULL for a
 * reader that goes on reading, KEV_WAIT for one about to sleep. */
static inline void sth_pull(struct sthead *sh, unsigned how)
{
	struct strkev *ke = __atomic_load_n(&sh->sh_sd.sd_kev,
					    __ATOMIC_ACQUIRE);

	if (ke != NULL)
		ke->ke_run(ke, how);
}

static inline bool sth_has_kev(struct sthead *sh)
{
	return __atomic_load_n(&sh->sh_sd.sd_kev, __ATOMIC_RELAXED) != NULL;
}

/* A reader or poller is about to sleep until the driver's source has
 * more: counted first, then the driver pulls and arms its wake-up.
 * Counted on every stream, with a source or not: a pipe gets one while
 * its readers sleep (a fork, a named pipe's first open elsewhere), and
 * its driver then arms for the sleepers it finds counted; the end of
 * the wait must undo exactly what its beginning did. */
static inline void sth_kevwait_begin(struct sthead *sh)
{
	__atomic_add_fetch(&sh->sh_sd.sd_kevwant, 1, __ATOMIC_SEQ_CST);
	sth_pull(sh, KEV_WAIT);
}

static inline void sth_kevwait_end(struct sthead *sh)
{
	__atomic_sub_fetch(&sh->sh_sd.sd_kevwant, 1, __ATOMIC_SEQ_CST);
}

/* Someone outside the library (epoll, SIGPOLL) waits on this stream:
 * counted for good. */
static inline void sth_kevwatch(struct sthead *sh)
{
	if (__atomic_exchange_n(&sh->sh_sd.sd_kevwatch, 1,
				__ATOMIC_ACQ_REL) == 0) {
		struct strthread *t = str_enter();
		__atomic_add_fetch(&sh->sh_sd.sd_kevwant, 1, __ATOMIC_SEQ_CST);
		sth_pull(sh, KEV_WAIT);
		str_exit(t);
	}
}

static inline int sh_flags(struct sthead *sh)
{
	return __atomic_load_n(&sh->sh_flag, __ATOMIC_ACQUIRE);
}

/* ---- sth_fd.c: descriptor table ---- */
extern struct sth_file **sth_fdtab;
extern int sth_fdcap;

static inline struct sth_file *sth_lookup(int fd)
{
	if ((unsigned)fd >= (unsigned)__atomic_load_n(&sth_fdcap,
						      __ATOMIC_ACQUIRE))
		return NULL;
	return __atomic_load_n(&sth_fdtab[fd], __ATOMIC_ACQUIRE);
}

/* A call on fd failed with err before looking at the descriptor (a bad
 * argument): EBADF or ENOSTR if fd is not an open stream, as the call
 * would have said first, else err. */
int sth_fd_errno(int fd, int err);
/* fd names no stream: EBADF if it is not open at all, else ENOSTR. */
int sth_not_stream(int fd);
int sth_fd_init(void);
/* 0 or errno; *stale: the caller releases it, holding no lock */
int sth_fd_install(int fd, struct sth_file *f, struct sth_file **stale);
struct sth_file *sth_fd_remove(int fd);		/* NULL if not ours */
bool sth_file_tryhold(struct sth_file *f);	/* false: closing */
int sth_call_hold(struct sth_file *f, bool *held);	/* EBADF: closing */
void sth_fd_atfork_child(void);
int sth_close_internal(int fd);	/* close(), keeping I_SETSIG */
void sth_file_rele(struct sth_file *f);		/* last ref closes;
						   NULL: nothing */
struct sth_file *sth_file_new(struct sthead *sh, int oflag);
/* fn(fd) is called when fd stops naming a stream (close, dup2 over it,
 * a stale number reused), before the number can be handed out again by
 * close(); one hook (libxti's endpoint table).  fn must not sleep. */
void sth_set_closed_hook(void (*fn)(int fd));

/* ---- sth_open.c ---- */
extern struct qinit sth_rinit, sth_winit;
/* Open by path: a new descriptor, or -1 with errno; -2: not a STREAMS
 * path (the caller goes to libc). */
int sth_open_path(const char *path, int oflag, mode_t mode);
/* Open (major, minor) of cdev with sflag; returns a descriptor. */
int sth_open_dev(struct cdevsw *cdev, minor_t minor, int oflag, int clone);
void sth_close_file(struct sth_file *f);
void sth_close_open(struct sthead *sh, int oflag);
void sth_close_locked(struct sthead *sh, int oflag, cred_t *cr);
void sth_close_wake(struct sthead *sh);
void sth_hold(struct sthead *sh);
void sth_rele(struct sthead *sh);
/* New head with its mirror; NULL with errno. */
struct sthead *sth_alloc(void);
/* A new descriptor naming a new open of sh (sd_plumb held); *stale: what
 * the number named before (sth_fd_install), released by the caller after
 * it unlocks. */
int sth_new_fd(struct sthead *sh, int oflag, struct sth_file **stale);
void sth_shutdown_stream(struct stdata *sd);

/*
 * The calls on descriptors look fd up inside their own entry (never an
 * entry of the caller's: a call may sleep).  *handled is false when fd
 * is not a stream (the caller goes to libc); getmsg/putmsg fail with
 * ENOSTR or EBADF then.
 */

/* ---- sth_read.c ---- */
/* Put the read cache back on the front of the head read queue (sh_rlock
 * held): for ioctls that look at the queue as it is. */
void sth_rcache_unload(struct sthead *sh);
/* Messages in the read cache that a reader would still get (racy). */
bool sth_rcache_any(struct sthead *sh);
void sth_rcache_free(struct sthead *sh);
/* Flush the head read queue (everything, SVR4 flushq FLUSHALL, when band
 * is -1; else band's messages alone, flushband FLUSHALL), with the read
 * cache and the generations that readers look at. */
void sth_rflush(struct sthead *sh, int band);
ssize_t sth_read(int fd, const struct iovec *iov, int iovcnt, bool trusted,
		 bool *handled);
int sth_getpmsg(int fd, struct strbuf *ctl, struct strbuf *dat,
		int *bandp, int *flagsp, bool pmsg);
int strrput(queue_t *q, mblk_t *mp);

/* ---- sth_write.c ---- */
/* Take the head write queue wq's back-enables (under its lock): band
 * 0's (QBACK: *b0), any band's (QB_BACK: *band), all cleared. */
void sth_back_take(queue_t *wq, bool *b0, bool *band);
ssize_t sth_write(int fd, const struct iovec *iov, int iovcnt, bool trusted,
		  bool *handled);
int sth_putpmsg(int fd, const struct strbuf *ctl, const struct strbuf *dat,
		int band, int flags, bool pmsg);
int sth_putmsg_fdinsert(struct sth_file *f, struct strthread **tp,
			const struct strbuf *ctl, const struct strbuf *dat,
			int flags, queue_t *fdq, int fdoff, bool *held);
int strwsrv(queue_t *q);
int strwput(queue_t *q, mblk_t *mp);

/* ---- sth_ioctl.c ---- */
int sth_ioctl(int fd, unsigned long cmd, void *arg, bool *handled);
void sth_ioc_reply(struct sthead *sh, mblk_t *mp);	/* from strrput */
/* Links: one lock for every link change, taken before any plumbing
 * lock.  sth_unlink_all_locked: undo the links below sh (its last close). */
void sth_links_lock(void);
void sth_links_unlock(void);
void sth_unlink_all_locked(struct sthead *sh);

/* ---- sth_wait.c: sleeping ---- */
/* Leave the entry, sleep on *word while it equals seen (the caller bumps
 * *waiters first and rechecks), re-enter.  deadline_ms < 0: forever.
 * 0 woken, EINTR signal, ETIMEDOUT. */
int sth_sleep(struct strthread **tp, int *word, int seen, long deadline_ms);
long sth_now_ms(void);
void sth_wake(int *word, int *waiters);
/* Wake sh's sleeping readers, those in poll() on the driver's descriptor
 * too. */
void sth_wake_readers(struct sthead *sh);
/* The read error a reader gets now (consumed if not persistent), or 0
 * (sth_read.c). */
int sth_read_error(struct sthead *sh);
/* Spin a little (STREAMS_SPIN_US) until ready(arg); true if it became
 * ready.  Runs this thread's enabled service procedures first.
 * yield_first: give up the CPU at the first failed look (sth_wait.c). */
bool sth_spin(struct strthread *t, bool (*ready)(void *), void *arg,
	      bool yield_first);
/* Wait about ns without looking at anything another thread writes (no
 * system call; sth_wait.c). */
void sth_pause_ns(long ns);

/* ---- sth_poll.c ---- */
int sth_poll_events(struct sthead *sh, int events);	/* exact revents */
void sth_mirror_update(struct sthead *sh);		/* state changed */
void sth_mirror_arm(struct sthead *sh, bool persistent);
void sth_mirror_disarm(struct sthead *sh);
/* O_ASYNC on or off through the application's fd naming f; 0 or errno.
 * sth_async: is it on (the mirror's description says). */
int sth_set_async(struct sth_file *f, int fd, bool on);
bool sth_async(int fd);
static inline void sth_changed(struct sthead *sh)
{
	if (unlikely(__atomic_load_n(&sh->sh_marmed, __ATOMIC_ACQUIRE)))
		sth_mirror_update(sh);
}

/* ---- sth_sig.c ---- */
void sth_sigpoll(struct sthead *sh, int event, int band);
int sth_setsig(struct sthead *sh, int events);
int sth_getsig(struct sthead *sh, int *events);
void sth_sig_forget(struct sthead *sh);
void sth_sig_atfork_child(struct sthead *sh);

/* ---- sth_restart.c ---- */
/* A ppoll wait that decides EINTR as SA_RESTART says: begin blocks the
 * signals and gives a signalfd for the poll set (-1: wait as usual, no
 * end); end, with that fd's revents, restores the mask (the handlers
 * run) and says whether the wait ends with EINTR. */
struct sth_rwait {
	sigset_t old, watch;
};
int sth_restart_begin(struct sth_rwait *w);
bool sth_restart_end(struct sth_rwait *w, short revents);
/* After a plain wait's EINTR: does the process catch a signal now whose
 * handler has no SA_RESTART? */
bool sth_restart_eintr(void);
/* Sleep ns (or less), honouring SA_RESTART: 0, or EINTR. */
int sth_restart_nap(long ns);
void sth_restart_atfork_child(void);

/* ---- sth_posix.c: the real libc calls ---- */
struct sth_libc {
	int (*open)(const char *, int, ...);
	int (*close)(int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	int (*ioctl)(int, unsigned long, ...);
	int (*fcntl)(int, int, ...);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
};
extern struct sth_libc sth_real;
void sth_posix_init(void);

/* Error helpers: set errno, return -1. */
static inline int sth_err(int e)
{
	extern int *__errno_location(void);
	*__errno_location() = e;
	return -1;
}

/* Application memory (sth_ucopy.c): 0 or EFAULT, never a crash. */
void sth_ucopy_init(void);
int sth_ucopy(void *dst, const void *src, size_t n);
/* The application's NUL-terminated string into dst (max bytes, the NUL
 * included): 0, EFAULT, or ENAMETOOLONG. */
int sth_ustrcpy(char *dst, const char *u, size_t max);
int sth_ustrdup(const char *u, size_t max, char **out);
/* A local copy of an application's iovec array (at most IOV_MAX): 0 or
 * errno; *out is loc or allocated (free it if != loc). */
int sth_uiov(const struct iovec *u, int cnt, struct iovec *loc, int nloc,
	     struct iovec **out);

/* Pipes (sth_pipe.c) */
int sth_pipe(int fds[2]);
/* Named pipes between processes: descriptors another process can join
 * sh's end with (sh converted to the shmpipe driver first if both ends
 * are here): 0 or an errno (ENXIO: not a pipe end, or its other end is
 * gone).  sth_pipe_join: a new descriptor for such an end, from those
 * descriptors (always consumed): the descriptor, or -errno. */
int sth_pipe_share(struct sthead *sh, int fds[3], int *side);
mblk_t *sth_passfp_new(int fd, uid_t uid, gid_t gid);
int sth_pipe_join(const int fds[3], int side, int oflag);

/* Named pipes between processes, and connld (sth_fattach.c).
 * sth_fattach_publish: let other processes open path to sh (a pipe end;
 * anything else is left alone): 0, EBUSY when another process has
 * attached that file, or an errno (the name then works here only).
 * sth_fattach_open: open a path another process attached: the
 * descriptor, -1 with errno, or -2 when nothing is attached there.
 * sth_connld_pushed / sth_connld_open: is connld on sh; an open of sh
 * that makes a new pipe (the descriptor, or -1 with errno). */
int sth_fattach_publish(struct sthead *sh, const char *path);
void sth_fattach_unpublish(const char *path);
int sth_fattach_open(const char *path, int oflag);
bool sth_connld_pushed(struct sthead *sh);
int sth_connld_open(struct sthead *sh, int oflag);

#endif /* STREAMS_STHEAD_H */
