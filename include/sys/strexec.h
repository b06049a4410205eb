/*
 * <sys/strexec.h> -- control of this process's STREAMS executive.
 *
 * Not part of SVR4: the functions a program or test uses to configure the
 * scheduler, read statistics (so that tests can assert that nothing
 * leaked) and shut the executive down.  All return 0 or -errno.
 */
#ifndef _SYS_STREXEC_H
#define _SYS_STREXEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct strstats {
	uint64_t mblk_alloc;		/* message blocks allocated */
	uint64_t mblk_free;		/* message blocks freed */
	uint64_t dblk_alloc;		/* data blocks allocated */
	uint64_t dblk_free;		/* data blocks freed */
	uint64_t msg_alloc;		/* allocb/esballoc that succeeded */
	uint64_t alloc_fail;		/* allocb/esballoc that failed */
	uint64_t esb_free_calls;	/* esballoc free routines called */
	uint64_t queue_alloc;		/* queue pairs allocated */
	uint64_t queue_free;		/* queue pairs freed */
	uint64_t stream_alloc;		/* streams created */
	uint64_t stream_free;		/* streams freed */
	uint64_t svc_runs;		/* service procedure runs */
	uint64_t qenables;		/* queues put on a run list */
	uint64_t backenables;		/* back-enables */
	uint64_t syncq_defers;		/* calls deferred by a busy perimeter */
	uint64_t bufcalls;		/* bufcall/esbbcall registered */
	uint64_t bufcall_runs;		/* bufcall callbacks run */
	uint64_t timeouts;		/* timeouts registered */
	uint64_t timeout_runs;		/* timeout callbacks run */
	uint64_t grace_periods;		/* plumbing grace periods waited */
	/* derived, filled in by streams_stats() */
	int64_t mblk_inuse;		/* mblk_alloc - mblk_free */
	int64_t dblk_inuse;
	int64_t queue_inuse;
	int64_t stream_inuse;
	int64_t timeouts_pending;
	int64_t bufcalls_pending;
	int workers;			/* scheduler worker threads running */
	/* the allocator's traffic with the C heap (mem.c): blocks taken
	 * from malloc and given back with free, past its caches */
	uint64_t heap_new;
	uint64_t heap_free;
	/* biased locks (the stream head's reader lock): biases given to a
	 * thread, and taken back when another thread wanted the lock */
	uint64_t bias_grants;
	uint64_t bias_revokes;
};

/* Sum the counters of every thread into *st. */
int streams_stats(struct strstats *st);

/* Is anything waiting at the stream head of fd for a reader (a message,
 * or a hangup or error to report)?  1 or 0 without a system call; -1
 * (EBADF) when fd is not a stream.  A hint: what the driver below has
 * not sent up yet is not counted. */
int streams_head_queued(int fd);

/* getpmsg and putpmsg for a library that builds the arguments itself
 * (libxti): the strbuf structures, *bandp and *flagsp are the caller's
 * own memory and are used in place, where getpmsg/putpmsg copy each in and
 * out so that a bad pointer is EFAULT (eight small guarded copies per
 * getpmsg).  The buffers they point to are still guarded.  Results,
 * errors and errno as getpmsg/putpmsg. */
struct strbuf;
int streams_getpmsg_direct(int fd, struct strbuf *ctl, struct strbuf *dat,
			   int *bandp, int *flagsp);
/* In *flagsp of streams_getpmsg_direct, beside MSG_ANY, MSG_BAND or
 * MSG_HIPRI: this call does not wait (EAGAIN), whatever the
 * descriptor's O_NONBLOCK (libxti's calls that never wait, on a
 * descriptor other threads read blocking).  Cleared on return. */
#define STREAMS_GETPMSG_NOWAIT	0x40000000
int streams_putpmsg_direct(int fd, const struct strbuf *ctl,
			   const struct strbuf *dat, int band, int flags);

/* Number of scheduler worker threads (default: one per CPU, or the
 * environment variable STREAMS_WORKERS).  0 means service procedures run
 * only on the way out of library calls and in streams_run(). */
int streams_set_workers(int n);

/* Run every pending service procedure and due callback in this thread;
 * returns how many were run. */
int streams_run(void);

/* Wait up to timeout_ms for the scheduler to have nothing pending;
 * 0 when idle, -ETIMEDOUT otherwise. */
int streams_quiesce(int timeout_ms);

/* Limit the bytes held by message data (0: no limit).  Beyond it allocb
 * fails and bufcall callbacks run when memory is freed. */
int streams_set_memlimit(size_t bytes);

/* Close every stream, stop the workers and free every cached block.  Runs
 * automatically at process exit. */
void streams_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* _SYS_STREXEC_H */
