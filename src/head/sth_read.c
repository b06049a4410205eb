/*
 * sth_read.c -- the read side of the stream head: what arrives from below
 * (strrput), read/readv and getmsg/getpmsg.
 *
 * strrput runs in the thread of whoever put the message (a driver's
 * service procedure, the writer of a STREAMS pipe).  Data and protocol
 * messages go on the head read queue with putq; a sleeping reader is woken
 * only if one sleeps.  Everything else is acted on at once: M_FLUSH,
 * M_ERROR, M_HANGUP, M_SETOPTS, M_PCSIG, ioctl replies.  Only one high
 * priority message waits at the head at a time; another is dropped.  M_SIG
 * waits in line and raises its signal when it reaches the front.
 *
 * Readers take messages with getq (one reader at a time, sh_rlock), so the
 * head read queue's water marks throttle the writer and back-enable it as
 * the reader drains.  Several plain messages queued are taken as a run
 * into the reader's cache (still counted, paid back as they are read);
 * a lone one is taken off on its own (str_getq_lone); whole plain
 * messages go to read() and getmsg() the short way (read_plain,
 * getmsg_plain), anything else through the general loop.  read()
 * follows the read mode (RNORM, RMSGD, RMSGN, RFILL -- a byte stream
 * read that waits until the buffer is full, a zero-length or priority
 * message, a hangup, an error or a signal ends it;
 * RPROTNORM, RPROTDAT, RPROTDIS); a zero-length message met first is taken
 * and read returns 0, in every mode.  getmsg() returns the control and data
 * parts of the first message separately and puts back what did not fit
 * (MORECTL, MOREDATA); what remains of a high priority message stays high
 * priority (as M_HPDATA when only data remains), unless a flush that
 * would have taken it came while the reader copied (the flush
 * generations, sth_rflush).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "sthead.h"

static inline bool is_hipri(const mblk_t *mp)
{
	return mp->b_datap->db_type >= QPCTL;
}

static inline bool is_ctl_block(const mblk_t *bp)
{
	unsigned char t = bp->b_datap->db_type;
	return t == M_PROTO || t == M_PCPROTO;
}

/* ---- things arriving from below ---- */

static void wake_all(struct sthead *sh)
{
	sth_wake_readers(sh);
	sth_wake(&sh->sh_wseq, &sh->sh_wwaiters);
	sth_wake(&sh->sh_iseq, &sh->sh_iwaiters);
	sth_changed(sh);
}

static void set_flag(struct sthead *sh, int f, bool on)
{
	if (on)
		__atomic_or_fetch(&sh->sh_flag, f, __ATOMIC_ACQ_REL);
	else
		__atomic_and_fetch(&sh->sh_flag, ~f, __ATOMIC_ACQ_REL);
}

/*
 * M_FLUSH from below.  On a pipe end the flags come from the other end's
 * point of view until switched at the pipe's midpoint: by pipemod when it
 * is pushed (it marks the message MSGCROSSED), otherwise here.  A flush
 * turned around down the write side is marked MSGNOLOOP so that the head
 * it reaches next does not turn it around again.
 */
static void do_flush(struct sthead *sh, queue_t *q, mblk_t *mp)
{
	unsigned char how;

	if (MBLKL(mp) < 1) {
		freemsg(mp);
		return;
	}
	how = mp->b_rptr[0];
	if ((sh_flags(sh) & STRPIPE) && !(mp->b_flag & MSGCROSSED)) {
		unsigned char sw = how & ~FLUSHRW;
		if (how & FLUSHR)
			sw |= FLUSHW;
		if (how & FLUSHW)
			sw |= FLUSHR;
		how = mp->b_rptr[0] = sw;
	}
	mp->b_flag &= ~MSGCROSSED;
	if (how & FLUSHR) {
		if ((how & FLUSHBAND) && MBLKL(mp) >= 2)
			sth_rflush(sh, mp->b_rptr[1]);
		else	/* everything (SVR4 flushq FLUSHALL): M_HPDATA and
			 * a descriptor in flight too */
			sth_rflush(sh, -1);
		sth_changed(sh);
	}
	if ((how & FLUSHW) && !(mp->b_flag & MSGNOLOOP)) {
		mp->b_rptr[0] &= ~FLUSHR;
		mp->b_flag |= MSGNOLOOP;
		qreply(q, mp);		/* down the write side */
	} else {
		freemsg(mp);
	}
}

static void do_error(struct sthead *sh, queue_t *q, mblk_t *mp)
{
	int r, w;
	bool any;

	if (MBLKL(mp) < 1) {
		freemsg(mp);
		return;
	}
	r = mp->b_rptr[0];
	w = MBLKL(mp) >= 2 ? mp->b_rptr[1] : r;
	freemsg(mp);
	pthread_mutex_lock(&sh->sh_lock);
	if (r != NOERROR) {
		sh->sh_rerror = r;
		set_flag(sh, STRDERR, r != 0);
	}
	if (w != NOERROR) {
		sh->sh_werror = w;
		set_flag(sh, STWRERR, w != 0);
	}
	any = (r != NOERROR && r != 0) || (w != NOERROR && w != 0);
	pthread_mutex_unlock(&sh->sh_lock);
	if (any) {
		/* SVR4: flush the sides in error, here and below (a write
		 * error alone leaves what waits to be read readable) */
		if (r != NOERROR && r != 0)
			sth_rflush(sh, -1);	/* (and STRPRI) */
		putnextctl1(OTHERQ(q), M_FLUSH,
			    (r != NOERROR && r && w != NOERROR && w) ? FLUSHRW
			    : (r != NOERROR && r) ? FLUSHR : FLUSHW);
		sth_sigpoll(sh, S_ERROR, 0);
	}
	wake_all(sh);
}

static void do_setopts(struct sthead *sh, queue_t *q, mblk_t *mp)
{
	struct stroptions so;

	if (MBLKL(mp) < sizeof(so)) {
		freemsg(mp);
		return;
	}
	memcpy(&so, mp->b_rptr, sizeof(so));
	freemsg(mp);
	pthread_mutex_lock(&sh->sh_lock);
	if (so.so_flags & SO_READOPT) {
		int mode = so.so_readopt & RMODEMASK;
		int prot = so.so_readopt & RPROTMASK;
		int ro = sh->sh_rdopt;

		ro = (ro & ~RMODEMASK) | mode;
		if (prot == RPROTNORM || prot == RPROTDAT || prot == RPROTDIS)
			ro = (ro & ~RPROTMASK) | prot;
		/* (readers and writers look without sh_lock) */
		__atomic_store_n(&sh->sh_rdopt, ro, __ATOMIC_RELAXED);
	}
	if (so.so_flags & SO_WROFF)
		__atomic_store_n(&sh->sh_wroff, so.so_wroff,
				 __ATOMIC_RELAXED);
	if (so.so_flags & SO_ERROPT)
		sh->sh_erropt = so.so_erropt & (RERRMASK | WERRMASK);
	pthread_mutex_unlock(&sh->sh_lock);
	if (so.so_flags & SO_MINPSZ)
		strqset(q, QMINPSZ, 0, so.so_minpsz);
	if (so.so_flags & SO_MAXPSZ)
		strqset(q, QMAXPSZ, 0, so.so_maxpsz);
	if (so.so_flags & SO_BAND) {
		if (so.so_flags & SO_HIWAT)
			strqset(q, QHIWAT, so.so_band, (long)so.so_hiwat);
		if (so.so_flags & SO_LOWAT)
			strqset(q, QLOWAT, so.so_band, (long)so.so_lowat);
	} else {
		if (so.so_flags & SO_HIWAT)
			strqset(q, QHIWAT, 0, (long)so.so_hiwat);
		if (so.so_flags & SO_LOWAT)
			strqset(q, QLOWAT, 0, (long)so.so_lowat);
	}
	if (so.so_flags & SO_NDELON)
		set_flag(sh, STRNDELAY, true);
	if (so.so_flags & SO_NDELOFF)
		set_flag(sh, STRNDELAY, false);
	if (so.so_flags & SO_ISTTY)
		set_flag(sh, STRISTTY, true);
	if (so.so_flags & SO_ISNTTY)
		set_flag(sh, STRISTTY, false);
	if (so.so_flags & SO_TOSTOP)
		set_flag(sh, STRTOSTOP, true);
	if (so.so_flags & SO_TONSTOP)
		set_flag(sh, STRTOSTOP, false);
	if (so.so_flags & SO_MREADON)
		set_flag(sh, STRMREAD, true);
	if (so.so_flags & SO_MREADOFF)
		set_flag(sh, STRMREAD, false);
	if (so.so_flags & SO_DELIM)
		set_flag(sh, STRDELIM, true);
	if (so.so_flags & SO_NODELIM)
		set_flag(sh, STRDELIM, false);
	sth_changed(sh);
}

/* M_SIG/M_PCSIG: the signal goes to this process (the only one that
 * shares the stream); SIGPOLL only to those who asked with I_SETSIG. */
static void raise_sig(struct sthead *sh, mblk_t *mp)
{
	int sig = MBLKL(mp) >= 1 ? mp->b_rptr[0] : 0;

	if (sig <= 0 || sig >= NSIG)
		return;
	if (sig == SIGPOLL)
		sth_sigpoll(sh, S_MSG, 0);
	else
		str_signal(getpid(), sig);	/* (after the read's exit) */
}

static bool is_msig(const mblk_t *mp, void *arg)
{
	(void)arg;
	return mp->b_datap->db_type == M_SIG;
}

/* M_SIGs that have come to the front, the reader having taken what was
 * before them (rlock held): raised now, as SVR4's strread and strgetmsg
 * do after each message -- not when a later read meets them, and not
 * seen by poll as something to read meanwhile. */
static __attribute__((noinline)) void sig_front_slow(struct sthead *sh)
{
	queue_t *q = sh->sh_sd.sd_rq;
	bool nonempty;
	mblk_t *mp;

	if (sth_rcache_any(sh))
		return;
	while ((mp = str_getq_if(q, is_msig, NULL, &nonempty, NULL)) != NULL) {
		raise_sig(sh, mp);
		freemsg(mp);
	}
}

static inline void sig_front(struct sthead *sh)
{
	/* (q_nodd 0: only plain band-0 data queued, the usual case) */
	if (unlikely(__atomic_load_n(&sh->sh_sd.sd_rq->q_nodd,
				     __ATOMIC_RELAXED) != 0))
		sig_front_slow(sh);
}

/* A batch's run of ordinary messages (batch.c): queued, and the readers
 * woken, once.  key is sh_rflushgen when they came: a read-side flush
 * since then would have discarded them. */
static void rput_run(queue_t *q, mblk_t *first, int n, unsigned key)
{
	struct sthead *sh = SH(q->q_stream);	/* not q_ptr: set_lower_procs */
	bool was_empty;

	/* (checked in the queue lock hold: a flush bumps it in its own) */
	if (!str_putq_run_gen(q, first, n, &sh->sh_rflushgen, key,
			      &was_empty)) {
		for (mblk_t *next; n-- > 0 && first != NULL; first = next) {
			next = first->b_next;
			first->b_next = NULL;
			freemsg(first);
		}
		return;
	}
	sth_wake_readers(sh);
	sth_changed(sh);
	if (unlikely(__atomic_load_n(&sh->sh_sigevents, __ATOMIC_RELAXED)) &&
	    was_empty)
		sth_sigpoll(sh, S_RDNORM, 0);
}

int strrput(queue_t *q, mblk_t *mp)
{
	struct sthead *sh = SH(q->q_stream);	/* not q_ptr: set_lower_procs */
	unsigned char type = mp->b_datap->db_type;

	/* in a batch (batch.c), ordinary band-0 data waits in the thread;
	 * anything else first lets out what waits */
	if ((type == M_DATA || type == M_PROTO) && mp->b_band == 0 &&
	    str_batch_add(q, mp, rput_run,
			  __atomic_load_n(&sh->sh_rflushgen, __ATOMIC_ACQUIRE)))
		return 0;
	str_batch_flush();
	switch (type) {
	case M_PCPROTO:
	case M_HPDATA:
		/* one high priority message at the head at a time */
		if (__atomic_fetch_or(&sh->sh_flag, STRPRI, __ATOMIC_ACQ_REL) &
		    STRPRI) {
			freemsg(mp);
			return 0;
		}
		/* fall through */
	case M_DATA:
	case M_PROTO:
	case M_PASSFP: {
		/* a reader may take and free mp as soon as it is queued */
		unsigned char band = mp->b_band;
		bool first = __atomic_load_n(&q->q_first, __ATOMIC_RELAXED) ==
			     NULL;
		if (unlikely(__atomic_load_n(&sh->sh_sigevents,
					     __ATOMIC_RELAXED)) &&
		    band != 0 && type < QPCTL && !first) {
			/* S_RDBAND: a band message goes ahead of lower
			 * bands: first unless something as urgent is */
			qlock(q);
			mblk_t *f = q->q_first;
			first = f == NULL ||
				(!is_hipri(f) && f->b_band < band);
			qunlock(q);
		}
		putq(q, mp);
		/* after queueing: a reader clears it before looking */
		if (band != 0 && type < QPCTL)
			set_flag(sh, STRBANDQ, true);
		sth_wake_readers(sh);
		sth_changed(sh);
		if (unlikely(__atomic_load_n(&sh->sh_sigevents,
					     __ATOMIC_RELAXED)) &&
		    (first || type >= QPCTL))
			sth_sigpoll(sh, type >= QPCTL ? S_HIPRI
				    : band ? S_RDBAND : S_RDNORM, band);
		return 0;
	}
	case M_SIG:
		/* raised when it reaches the front: now, if nothing waits
		 * (in the queue or in a reader's cache) */
		if (__atomic_load_n(&q->q_first, __ATOMIC_ACQUIRE) == NULL &&
		    !sth_rcache_any(sh)) {
			raise_sig(sh, mp);
			freemsg(mp);
		} else {
			putq(q, mp);
		}
		return 0;
	case M_PCSIG:
		raise_sig(sh, mp);
		freemsg(mp);
		return 0;
	case M_FLUSH:
		do_flush(sh, q, mp);
		return 0;
	case M_ERROR:
		do_error(sh, q, mp);
		return 0;
	case M_HANGUP:
		freemsg(mp);
		set_flag(sh, STRHUP, true);
		sth_sigpoll(sh, S_HANGUP, 0);
		wake_all(sh);
		return 0;
	case M_UNHANGUP:
		freemsg(mp);
		set_flag(sh, STRHUP, false);
		wake_all(sh);
		return 0;
	case M_SETOPTS:
	case M_PCSETOPTS:
		do_setopts(sh, q, mp);
		return 0;
	case M_IOCACK:
	case M_IOCNAK:
	case M_COPYIN:
	case M_COPYOUT:
		sth_ioc_reply(sh, mp);
		return 0;
	case M_IOCTL:
		/* an ioctl that crossed a pipe: nobody here answers it */
		if (MBLKL(mp) >= sizeof(struct iocblk)) {
			struct iocblk *ioc = (struct iocblk *)mp->b_rptr;
			mp->b_datap->db_type = M_IOCNAK;
			ioc->ioc_error = EINVAL;
			ioc->ioc_rval = -1;
			ioc->ioc_count = 0;
			if (mp->b_cont) {
				freemsg(mp->b_cont);
				mp->b_cont = NULL;
			}
			qreply(q, mp);
		} else {
			freemsg(mp);
		}
		return 0;
	default:
		/* M_CTL, M_DELAY, M_BREAK, M_START, M_STOP, ... end here */
		freemsg(mp);
		return 0;
	}
}

/* ---- the read cache (sh_rlock held) ----
 *
 * A reader takes the run of plain band-0 messages (M_DATA, M_PROTO) at
 * the front of the head read queue, usually the whole queue in one step
 * (str_getq_run), and reads them from here.  They
 * stay counted in q_count until read: the reader's "debt" (bytes and
 * blocks read from cached messages) is given back with str_qcredit, at
 * once when that takes the queue below its low water mark (so writers
 * and POLLOUT see SVR4 flow control exactly), otherwise lazily: when the
 * cache empties, before sleeping, when a quarter of high water is owed.
 * High priority and band messages still go first (STRPRI, STRBANDQ), a
 * read-side flush empties the cache (sh_rflushgen), and anything that
 * looks at the queue as a whole first puts the cache back
 * (sth_rcache_unload).
 */

static inline void msgsz(const mblk_t *mp, unsigned long *bytes,
			 unsigned long *blocks)
{
	unsigned long b = 0, n = 0;

	for (; mp != NULL; mp = mp->b_cont) {
		if (mp->b_wptr > mp->b_rptr)
			b += (unsigned long)(mp->b_wptr - mp->b_rptr);
		n++;
	}
	*bytes = b;
	*blocks = n;
}

static void rcredit(struct sthead *sh)
{
	if (sh->sh_rdebt != 0 || sh->sh_rdebt_blocks != 0) {
		str_qcredit(sh->sh_sd.sd_rq, sh->sh_rdebt, sh->sh_rdebt_blocks);
		sh->sh_rdebt = sh->sh_rdebt_blocks = 0;
	}
}

/* Free the cache; with credit, give its bytes (and the debt) back. */
static void rcache_drop(struct sthead *sh, bool credit)
{
	mblk_t *mp = sh->sh_rcache, *n;
	unsigned long b, bl;

	for (; mp != NULL; mp = n) {
		n = mp->b_next;
		mp->b_next = NULL;
		if (credit) {
			msgsz(mp, &b, &bl);
			sh->sh_rdebt += b;
			sh->sh_rdebt_blocks += bl;
		}
		freemsg(mp);
	}
	sh->sh_rcache = NULL;
	__atomic_store_n(&sh->sh_rcache_any, 0, __ATOMIC_RELEASE);
	if (credit)
		rcredit(sh);
	else
		sh->sh_rdebt = sh->sh_rdebt_blocks = 0;
}

/* A flush since the run was taken discards it. */
static inline void rcache_check(struct sthead *sh)
{
	unsigned g = __atomic_load_n(&sh->sh_rflushgen, __ATOMIC_ACQUIRE);

	if (unlikely(g != sh->sh_rcache_gen)) {
		rcache_drop(sh, true);
		__atomic_store_n(&sh->sh_rcache_gen, g, __ATOMIC_RELEASE);
	}
}

void sth_rcache_free(struct sthead *sh)
{
	rcache_drop(sh, false);		/* the stream is going away */
	free(sh->sh_rbandgen);
	sh->sh_rbandgen = NULL;
}

/* The counter that a flush of band b alone (b > 0) bumps: its own, or,
 * with no memory for the table of them, the one that makes every band
 * message a reader holds count as flushed. */
static unsigned *rband_gen(struct sthead *sh, unsigned char b)
{
	unsigned *v = __atomic_load_n(&sh->sh_rbandgen, __ATOMIC_ACQUIRE);

	if (v == NULL) {
		unsigned *n = calloc(NBAND, sizeof(*n)), *none = NULL;

		if (n == NULL)
			return &sh->sh_rbandmiss;
		if (__atomic_compare_exchange_n(&sh->sh_rbandgen, &none, n,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			v = n;
		} else {
			free(n);
			v = none;
		}
	}
	return &v[b];
}

/* Each flush bumps its generations in the lock hold that empties the
 * queue, as a reader's take reads them (str_getq_run, rsnap_take).  A
 * flush that reaches band 0 drops the cache too: now if no reader is
 * reading, else when the reader looks next or lets go.  A flush of
 * everything takes the high priority message with it: STRPRI goes,
 * unless another has come since.  (A band's flush leaves them, the one
 * a reader may be reading too: STRPRI stays.) */
void sth_rflush(struct sthead *sh, int band)
{
	queue_t *q = sh->sh_sd.sd_rq;

	if (band < 0) {
		str_flush_gen(q, FLUSHALL, false, 0, &sh->sh_rflushgen,
			      &sh->sh_rflushall);
		qlock(q);
		bool hp = false;
		for (mblk_t *m = q->q_first; m && is_hipri(m); m = m->b_next)
			if (datamsg(m->b_datap->db_type) ||
			    m->b_datap->db_type == M_HPDATA)
				hp = true;
		qunlock(q);
		if (!hp)
			set_flag(sh, STRPRI, false);
	} else if (band == 0)
		str_flush_gen(q, FLUSHALL, true, 0, &sh->sh_rflushgen, NULL);
	else
		str_flush_gen(q, FLUSHALL, true, (unsigned char)band,
			      rband_gen(sh, (unsigned char)band), NULL);
	if (band <= 0 && strblock_trylock(&sh->sh_rlock)) {
		rcache_check(sh);
		strblock_unlock(&sh->sh_rlock);
	}
}

/* Let go of the reader lock leaving no flushed cache behind.  A flush
 * bumps sh_rflushgen, then tries the lock; one that found it taken left
 * the cache to the holder, who looks at the generation before letting
 * go and once more after: one of the two sees the other.  (After letting
 * go: a biased lock's release is a plain store, which the load could
 * pass, but the flusher's failed trylock revoked the bias with a
 * membarrier first; an unbiased one's is an exchange, a full barrier on
 * x86.  Elsewhere, without membarrier and under TSan, the look is a
 * sequentially consistent read-modify-write.) */
static void rlock_release(struct sthead *sh)
{
	unsigned g;

	rcache_check(sh);
	strblock_unlock(&sh->sh_rlock);
#if (defined(__x86_64__) || defined(__i386__)) && !STR_TSAN
	if (str_rcu_membarrier)
		g = __atomic_load_n(&sh->sh_rflushgen, __ATOMIC_SEQ_CST);
	else
#endif
		g = __atomic_fetch_add(&sh->sh_rflushgen, 0, __ATOMIC_SEQ_CST);
	if (g != __atomic_load_n(&sh->sh_rcache_gen, __ATOMIC_ACQUIRE) &&
	    strblock_trylock(&sh->sh_rlock)) {
		rcache_check(sh);
		strblock_unlock(&sh->sh_rlock);
	}
}

bool sth_rcache_any(struct sthead *sh)
{
	if (__atomic_load_n(&sh->sh_rflushgen, __ATOMIC_ACQUIRE) !=
	    __atomic_load_n(&sh->sh_rcache_gen, __ATOMIC_ACQUIRE))
		return false;
	return __atomic_load_n(&sh->sh_rcache_any, __ATOMIC_ACQUIRE) != 0;
}

/* <sys/strexec.h>: is anything at fd's stream head for a reader?  Two
 * loads and no system call: libxti asks before every send whether an
 * event may be waiting (I_PEEK only then). */
int streams_head_queued(int fd)
{
	struct strthread *t = str_enter();
	struct sth_file *f = sth_lookup(fd);
	struct sthead *sh;
	int r;

	if (f == NULL) {
		str_exit(t);
		errno = EBADF;
		return -1;
	}
	sh = f->f_sh;
	r = __atomic_load_n(&sh->sh_sd.sd_rq->q_first, __ATOMIC_ACQUIRE) !=
	    NULL || sth_rcache_any(sh) ||
	    (sh_flags(sh) & (STRHUP | STRDERR | STPLEX | STRCLOSED)) != 0;
	str_exit(t);
	return r;
}

void sth_rcache_unload(struct sthead *sh)
{
	rcache_check(sh);
	/* (still counted; not put back if a flush came since the check,
	 * which would have taken it: it is dropped as flushed instead) */
	if (sh->sh_rcache != NULL) {
		if (str_putbq_run(sh->sh_sd.sd_rq, sh->sh_rcache,
				  &sh->sh_rflushgen, sh->sh_rcache_gen)) {
			sh->sh_rcache = NULL;
			__atomic_store_n(&sh->sh_rcache_any, 0,
					 __ATOMIC_RELEASE);
		} else {
			rcache_check(sh);
		}
	}
	rcredit(sh);
}

/* str_getq_run leaves b_prev and b_queue as they were on the queue: they
 * are cleared here, on a line the reader touches anyway, rather than in a
 * walk over the whole run when it is taken (a long run does not fit in
 * the cache: that walk missed on every message). */
static inline mblk_t *rcache_pop(struct sthead *sh)
{
	mblk_t *mp = sh->sh_rcache;

	sh->sh_rcache = mp->b_next;
	if (sh->sh_rcache == NULL)
		__atomic_store_n(&sh->sh_rcache_any, 0, __ATOMIC_RELEASE);
	mp->b_next = mp->b_prev = NULL;
	mp->b_queue = NULL;
	return mp;
}

static inline void rcache_push_front(struct sthead *sh, mblk_t *mp)
{
	mp->b_next = sh->sh_rcache;
	sh->sh_rcache = mp;
	__atomic_store_n(&sh->sh_rcache_any, 1, __ATOMIC_RELEASE);
}

/*
 * A cached message went from (b0, bl0) to what rem has left (NULL: all
 * read): owe the difference.  Pay when it can change flow control: the
 * queue is full (QFULL) and what is really unread has fallen below low
 * water; or the cache is empty (keep the count exact when idle); or a
 * quarter of high water is owed (a writer would otherwise find the queue
 * full early).
 */
static void rconsumed(struct sthead *sh, unsigned long b0, unsigned long bl0,
		      const mblk_t *rem)
{
	queue_t *rq = sh->sh_sd.sd_rq;
	unsigned long b1 = 0, bl1 = 0, cnt, blk, lim;

	if (rem != NULL)
		msgsz(rem, &b1, &bl1);
	sh->sh_rdebt += b0 - b1;
	sh->sh_rdebt_blocks += bl0 - bl1;
	lim = __atomic_load_n(&rq->q_hiwat, __ATOMIC_RELAXED) / 4;
	if (sh->sh_rcache == NULL || sh->sh_rdebt >= lim ||
	    sh->sh_rdebt_blocks >= lim) {
		rcredit(sh);
		return;
	}
	if (__atomic_load_n(&rq->q_flag, __ATOMIC_RELAXED) & QFULL) {
		cnt = __atomic_load_n(&rq->q_count, __ATOMIC_RELAXED) -
		      sh->sh_rdebt;
		blk = __atomic_load_n(&rq->q_mblkcnt, __ATOMIC_RELAXED) -
		      sh->sh_rdebt_blocks;
		unsigned long lo = __atomic_load_n(&rq->q_lowat,
						   __ATOMIC_RELAXED);

		if (blk == 0 || (cnt < lo && blk < lo))
			rcredit(sh);
	}
}

static bool urgent(const mblk_t *mp)
{
	return mp->b_datap->db_type >= QPCTL || mp->b_band != 0;
}

typedef bool (*rmatch_fn)(const mblk_t *, void *);

/* What a reader took off the queue itself (not a cached message): the
 * flushes that would have taken it, and their generations as the take
 * saw them, under the queue's lock that those flushes bump them in.  A
 * message put back unfinished goes back only if none of them moved
 * (rputback): what a flush freed while a reader copied from it must not
 * come back after the flush. */
struct rsnap {
	bool hipri;		/* only a flush of everything takes it */
	unsigned char band;	/* else: everything, or its band alone */
	unsigned all, gen, bgen, miss;
};

static void rsnap_take(struct sthead *sh, const mblk_t *mp, struct rsnap *s)
{
	const unsigned *v = __atomic_load_n(&sh->sh_rbandgen,
					    __ATOMIC_ACQUIRE);

	s->hipri = is_hipri(mp);
	s->band = s->hipri ? 0 : mp->b_band;
	s->all = __atomic_load_n(&sh->sh_rflushall, __ATOMIC_ACQUIRE);
	s->gen = __atomic_load_n(&sh->sh_rflushgen, __ATOMIC_ACQUIRE);
	s->miss = __atomic_load_n(&sh->sh_rbandmiss, __ATOMIC_ACQUIRE);
	s->bgen = v != NULL && s->band != 0
			  ? __atomic_load_n(&v[s->band], __ATOMIC_ACQUIRE)
			  : 0;
}

struct rsnap_ref {
	struct sthead *sh;
	const struct rsnap *s;
};

/* (str_putbq_unless: under the queue's lock) */
static bool rsnap_flushed(const mblk_t *mp, void *arg)
{
	const struct rsnap_ref *r = arg;
	const struct rsnap *s = r->s;
	struct sthead *sh = r->sh;
	const unsigned *v;

	(void)mp;
	if (!s->hipri && s->band == 0)	/* (a flush of all bumps gen too) */
		return __atomic_load_n(&sh->sh_rflushgen, __ATOMIC_ACQUIRE) !=
		       s->gen;
	if (__atomic_load_n(&sh->sh_rflushall, __ATOMIC_ACQUIRE) != s->all)
		return true;
	if (s->hipri)
		return false;
	if (__atomic_load_n(&sh->sh_rbandmiss, __ATOMIC_ACQUIRE) != s->miss)
		return true;
	v = __atomic_load_n(&sh->sh_rbandgen, __ATOMIC_ACQUIRE);
	return v != NULL &&
	       __atomic_load_n(&v[s->band], __ATOMIC_ACQUIRE) != s->bgen;
}

/* A reader is done with the high priority message it took (snap): STRPRI
 * goes -- unless a flush of everything came since the take, which let
 * STRPRI go itself: set again since, it is another message's. */
static void hipri_done(struct sthead *sh, const struct rsnap *s)
{
	if (__atomic_load_n(&sh->sh_rflushall, __ATOMIC_ACQUIRE) == s->all)
		set_flag(sh, STRPRI, false);
}

/* getmsg's criteria (or none) for str_getq_if, noting what the take saw;
 * urgent: only a high priority or band message */
struct take_arg {
	rmatch_fn match;
	void *arg;
	bool urgent;
	struct sthead *sh;
	struct rsnap *snap;
};

static bool take_match(const mblk_t *mp, void *arg)
{
	struct take_arg *t = arg;

	if ((t->urgent && !urgent(mp)) ||
	    (t->match != NULL && !t->match(mp, t->arg)))
		return false;
	rsnap_take(t->sh, mp, t->snap);
	return true;
}

/* Take the run of plain messages at the front of the queue into the
 * empty cache (nothing if the front is not plain). */
static void rcache_fill(struct sthead *sh)
{
	unsigned g;
	mblk_t *mp = str_getq_run(sh->sh_sd.sd_rq, &sh->sh_rflushgen, &g);

	if (mp != NULL) {
		/* g: the generation when it was taken (a flush since then
		 * discards it at the next look) */
		sh->sh_rcache = mp;
		__atomic_store_n(&sh->sh_rcache_gen, g, __ATOMIC_RELEASE);
		__atomic_store_n(&sh->sh_rcache_any, 1, __ATOMIC_RELEASE);
	}
}

/*
 * The next message for a reader, in STREAMS order: high priority and
 * band messages queued ahead of the cache first, then the cache, then the
 * queue (refilling the cache with a run).  match (getmsg's criteria) may
 * refuse the message that is first: NULL then, with *nonempty true.
 * *cached says the message is still counted (report it to rconsumed);
 * otherwise *snap is what rputback needs.
 */
static mblk_t *rtake(struct sthead *sh, rmatch_fn match, void *arg,
		     bool *nonempty, bool *cached, struct rsnap *snap)
{
	queue_t *rq = sh->sh_sd.sd_rq;
	mblk_t *mp;

	*nonempty = false;
	*cached = false;
	rcache_check(sh);
	/* nothing cached and nothing queued (a byte-stream read looking
	 * for more after what it has, or a reader about to sleep): no lock
	 * needed to say so.  A message whose put has not reached q_first is
	 * one that arrives after this look, as it would after the lock. */
	if (sh->sh_rcache == NULL &&
	    __atomic_load_n(&rq->q_first, __ATOMIC_ACQUIRE) == NULL &&
	    !(sh_flags(sh) & STRBANDQ))
		return NULL;
	if (sh->sh_rcache == NULL)
		rcache_fill(sh);
	if (sh->sh_rcache != NULL) {
		int fl = sh_flags(sh);
		if (unlikely(fl & (STRPRI | STRBANDQ))) {
			/* something may go before the cache (cleared
			 * before looking, set again while urgent messages
			 * remain: taken ahead of them, or refused by match) */
			struct take_arg u = { match, arg, true, sh, snap };
			bool ne, left;
			if (fl & STRBANDQ)
				set_flag(sh, STRBANDQ, false);
			mp = str_getq_if(rq, take_match, &u, &ne, &left);
			if (left)
				set_flag(sh, STRBANDQ, true);
			if (mp != NULL) {
				*nonempty = true;
				return mp;
			}
		}
		*nonempty = true;
		if (match != NULL && !match(sh->sh_rcache, arg))
			return NULL;
		*cached = true;
		return rcache_pop(sh);
	}
	/* nothing plain at the front: one message as getq takes it */
	struct take_arg u = { match, arg, false, sh, snap };
	bool left;
	if (sh_flags(sh) & STRBANDQ)
		set_flag(sh, STRBANDQ, false);
	mp = str_getq_if(rq, take_match, &u, nonempty, &left);
	if (left)
		set_flag(sh, STRBANDQ, true);	/* more to go first */
	return mp;
}

/* Put back what a reader did not finish.  A cached message goes back to
 * the front of the cache (still counted), after its read part is owed
 * (a flush since drops the cache, this with it); any other goes back on
 * the queue with putbq, unless a flush that would have taken it came
 * since it was taken (snap). */
static void rputback(struct sthead *sh, mblk_t *mp, bool cached,
		     unsigned long b0, unsigned long bl0,
		     const struct rsnap *snap)
{
	if (cached) {
		/* (back first: rconsumed pays at once when the cache is
		 * empty, and a part-read message keeps it from being so) */
		rcache_push_front(sh, mp);
		rconsumed(sh, b0, bl0, mp);
		return;
	}
	/* (read before putting back: once queued, a flush may free it) */
	bool band = mp->b_band != 0 && mp->b_datap->db_type < QPCTL;
	struct rsnap_ref r = { sh, snap };

	if (str_putbq_unless(sh->sh_sd.sd_rq, mp, rsnap_flushed, &r) && band)
		set_flag(sh, STRBANDQ, true);
}

/* ---- common reader plumbing ---- */

struct rctx {
	struct sth_file *f;
	struct sthead *sh;
	struct strthread *t;
	bool held;		/* f held across a sleep */
	size_t want;		/* read(): bytes still wanted (M_READ) */
};

/* Pending read error, consumed if non-persistent; 0 if none. */
int sth_read_error(struct sthead *sh)
{
	int e;

	if (!(sh_flags(sh) & STRDERR))
		return 0;
	pthread_mutex_lock(&sh->sh_lock);
	e = sh->sh_rerror;
	if (e != 0 && (sh->sh_erropt & RERRNONPERSIST)) {
		sh->sh_rerror = 0;
		set_flag(sh, STRDERR, false);
	}
	pthread_mutex_unlock(&sh->sh_lock);
	return e;
}

static bool nonblocking(struct rctx *c)
{
	return (__atomic_load_n(&c->f->f_oflag, __ATOMIC_RELAXED) &
		(O_NONBLOCK | O_NDELAY)) != 0;
}

/*
 * Sleep until the read queue, the error or the hangup state changes.
 * 0 to look again, or an errno (EINTR).  Called with sh_rlock held (and
 * the cache empty); it is let go while sleeping, so that ioctls looking
 * at the read side are not held up by a sleeping reader.
 */
static bool readable(void *arg)
{
	struct sthead *sh = arg;

	return __atomic_load_n(&sh->sh_sd.sd_rq->q_first, __ATOMIC_ACQUIRE) ||
	       sth_rcache_any(sh) ||
	       (sh_flags(sh) & (STRHUP | STRDERR | STRCLOSED | STPLEX));
}

/*
 * While spinning for data, take it once it is worth a batch or once it
 * stops coming: a reader that pounced on every message would take them
 * one at a time and fight the writer for the queue lock on every one,
 * while a lone message (a request) waits only one more look.
 */
#define SETTLE_BATCH 32
#define SETTLE_GAP_NS 1000	/* between looks while a run grows */

struct settle {
	struct sthead *sh;
	unsigned long last;		/* blocks queued at the last look */
};

static bool settled(void *arg)
{
	struct settle *st = arg;
	struct sthead *sh = st->sh;
	unsigned long n;

	if (sh_flags(sh) & (STRHUP | STRDERR | STRCLOSED | STPLEX | STRPRI))
		return true;
	if (sth_rcache_any(sh))
		return true;
	sth_pull(sh, KEV_PULL);		/* another process's ring, say */
	n = __atomic_load_n(&sh->sh_sd.sd_rq->q_mblkcnt, __ATOMIC_RELAXED);
	if (n == 0) {
		if (__atomic_load_n(&sh->sh_sd.sd_rq->q_first, __ATOMIC_ACQUIRE))
			return true;	/* band messages only */
		st->last = 0;
		return false;
	}
	if (n >= SETTLE_BATCH || n == st->last)
		return true;
	if (st->last != 0)
		/* still coming: each look takes the queue lock's line
		 * from the writer, who pays for it on its next putq.
		 * Let it queue a few undisturbed before looking again. */
		sth_pause_ns(SETTLE_GAP_NS);
	st->last = n;
	return false;
}

/* A reader is about to sleep (rlock held, let go here): hold the file,
 * give back the bytes read so far, and with mread tell the stream
 * (STRMREAD: M_READ).  EBADF, rlock still held, when a close on another
 * thread has dropped the file's last reference already (the stream is
 * closing; taking one from zero would close it twice). */
static int wait_begin(struct rctx *c, bool mread)
{
	struct sthead *sh = c->sh;
	int err;

	if ((err = sth_call_hold(c->f, &c->held)) != 0)
		return err;
	rcredit(sh);
	rlock_release(sh);
	if (mread && (sh_flags(sh) & STRMREAD)) {
		/* M_READ carries the count the read asks for (a long) */
		mblk_t *mp = allocb(sizeof(long), BPRI_HI);

		if (mp != NULL) {
			long n = c->want > LONG_MAX ? LONG_MAX : (long)c->want;

			mp->b_datap->db_type = M_READ;
			memcpy(mp->b_wptr, &n, sizeof(n));
			mp->b_wptr += sizeof(n);
			putnext(sh->sh_sd.sd_wq, mp);
		}
	}
	return 0;
}

/* The eventfd that wakes readers asleep in poll() on the driver's
 * descriptor (a semaphore: each sleeper a token); -1 if none can be had. */
static int kevfd(struct sthead *sh)
{
	int fd = __atomic_load_n(&sh->sh_kevfd, __ATOMIC_ACQUIRE);

	if (fd >= 0)
		return fd;
	pthread_mutex_lock(&sh->sh_lock);
	if ((fd = sh->sh_kevfd) < 0) {
		fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
		__atomic_store_n(&sh->sh_kevfd, fd, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sh->sh_lock);
	return fd;
}

/*
 * Wait for data on a stream whose driver lets its readers sleep on its
 * own descriptor (ke_direct: a socket): poll() on it and on the head's
 * eventfd, so an arrival wakes the reader once, in the kernel, as it
 * would wake a socket reader, and anything else that makes the stream
 * readable (an error, a hangup, a message from another thread) comes
 * through sth_wake_readers() and the eventfd.  When poll says the
 * socket has something, the reader pulls it up itself before it looks
 * at the head again.  rlock held on entry and
 * on return (let go while sleeping).  The poll has a timeout as a
 * safety net: a driver may replace its descriptor (a socket made again
 * by a bind) while a reader sleeps on the old one.  -1: the socket's
 * readiness moved nothing, wait the usual way (read_wait goes on).
 */
static int read_wait_direct(struct rctx *c, struct strkev *ke, int efd)
{
	struct sthead *sh = c->sh;
	struct pollfd p[3];
	int err = 0, np = 2;
	long r = 0;

	if ((err = wait_begin(c, true)) != 0)
		return err;
	__atomic_add_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&sh->sh_kwaiters, 1, __ATOMIC_SEQ_CST);
	/* what came before we were counted (the socket itself needs no
	 * look: poll says at once when it has something) */
	p[0].revents = 0;
	if (!readable(sh)) {
		struct timespec ts = { 0, 250 * 1000000L };

		p[0].fd = __atomic_load_n(&ke->ke_fd, __ATOMIC_RELAXED);
		p[0].events = POLLIN;
		p[1].fd = efd;
		p[1].events = POLLIN;
		p[0].revents = p[1].revents = 0;
		str_exit(c->t);
		/* ppoll is never restarted: signals are kept out of the
		 * wait, and what they mean decided after (sth_restart.c) */
		struct sth_rwait rw;
		p[2].fd = sth_restart_begin(&rw);
		if (p[2].fd >= 0) {
			p[2].events = POLLIN;
			p[2].revents = 0;
			np = 3;
		}
		r = syscall(SYS_ppoll, p, np, &ts, NULL, 0);
		/* (with the signals blocked, or none caught, only libc's own
		 * -- setuid's in another thread, restarting -- interrupts
		 * it; or a handler installed since the last look) */
		if (r < 0 && errno == EINTR && np == 2 && sth_restart_eintr())
			err = EINTR;
		if (np == 3) {
			if (sth_restart_end(&rw, r > 0 ? p[2].revents : 0))
				err = EINTR;
			if (r > 0 && p[2].revents &&
			    (p[0].revents | p[1].revents) == 0)
				r = 0;	/* only signals: look again */
			if (r < 0)
				r = 0;
		}
		c->t = str_enter();
		if (r > 0 && (p[1].revents & POLLIN)) {
			uint64_t v;

			(void)!read(efd, &v, sizeof(v));
		}
	}
	__atomic_sub_fetch(&sh->sh_kwaiters, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
	/* no longer counted: what we pull up ourselves wakes nobody */
	if (r > 0 && (p[0].revents & (POLLIN | POLLERR)))
		sth_pull(sh, KEV_PULL | (p[0].revents & POLLERR));
	strblock_lock(&sh->sh_rlock);
	/* The socket said "ready" (a hangup alone, as an unconnected TCP
	 * socket says; or data the driver will not take now, as a
	 * listener's pending connections beyond its queue) and nothing
	 * came of it: poll would say so again at once.  Wait the other
	 * way, for the driver's own wake-up. */
	if (err == 0 && r > 0 && p[0].revents != 0 &&
	    !(p[1].revents & POLLIN) && !readable(sh))
		return -1;
	return err;
}

/* sth_spin's look for a reader of a ke_direct stream: pull what the
 * socket has, then is there something to read? */
static bool pulled(void *arg)
{
	struct sthead *sh = arg;

	sth_pull(sh, KEV_PULL);
	if (readable(sh))
		return true;
	/* the answer may have to come from a thread on this CPU: each
	 * look is a system call anyway, let it run between looks */
	sched_yield();
	return false;
}

static int read_wait(struct rctx *c)
{
	struct sthead *sh = c->sh;
	struct strkev *ke;
	int seen, err, efd;
	bool told = false;		/* M_READ sent for this wait */

	struct settle st = { sh, 0 };
	ke = __atomic_load_n(&sh->sh_sd.sd_kev, __ATOMIC_ACQUIRE);
	if (ke != NULL && ke->ke_direct && (efd = kevfd(sh)) >= 0) {
		/* an answer is often a few microseconds away: look for it
		 * (each look a non-blocking read of the socket) for the
		 * spin budget before paying for a sleep and a wake-up --
		 * unless the socket lost datagrams lately while its readers
		 * spun (ke_nospin_until) */
		if (str_now_ns() >= __atomic_load_n(&ke->ke_nospin_until,
						    __ATOMIC_RELAXED)) {
			/* (an answer needs its peer to run first) */
			sched_yield();
			if (sth_spin(c->t, pulled, sh, false))
				return 0;
		}
		if ((err = read_wait_direct(c, ke, efd)) >= 0)
			return err;
		told = true;
	}
	sth_pull(sh, KEV_PULL);
	if (readable(sh))
		return 0;
	if (sth_spin(c->t, settled, &st, true))
		return 0;
	if ((err = wait_begin(c, !told)) != 0)
		return err;
	/* the driver pulls once more and arranges to wake us when more
	 * comes (before we count as a waiter: what it pulls now needs no
	 * wake-up, and readable() below sees it) */
	sth_kevwait_begin(sh);
	__atomic_add_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
	seen = __atomic_load_n(&sh->sh_rseq, __ATOMIC_ACQUIRE);
	if (readable(sh))
		err = 0;
	else
		err = sth_sleep(&c->t, &sh->sh_rseq, seen, -1);
	__atomic_sub_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
	sth_kevwait_end(sh);
	strblock_lock(&sh->sh_rlock);
	return err;
}

/* A message type read() cannot handle at the front: the error to give. */
static int frontier_error(mblk_t *mp, int rdopt)
{
	unsigned char t = mp->b_datap->db_type;

	if (t == M_PASSFP)
		return EBADMSG;
	if ((t == M_PROTO || t == M_PCPROTO) && (rdopt & RPROTMASK) ==
	    RPROTNORM)
		return EBADMSG;
	return 0;
}

/* ---- read ---- */

/* Copy from the message into the iovec cursor; consumed bytes are taken
 * off the blocks' b_rptr.  Returns bytes copied; *fault on a bad user
 * address (what was copied before it stays copied). */
static size_t copy_out(mblk_t *mp, const struct iovec **iovp, int *iovcnt,
		       size_t *iovoff, size_t want, bool *fault)
{
	size_t done = 0;

	for (mblk_t *bp = mp; bp != NULL && done < want; bp = bp->b_cont) {
		while (bp->b_rptr < bp->b_wptr && done < want && *iovcnt > 0) {
			const struct iovec *v = *iovp;
			size_t room = v->iov_len - *iovoff;
			size_t n = MBLKL(bp);
			if (n > room)
				n = room;
			if (n > want - done)
				n = want - done;
			if (sth_ucopy((char *)v->iov_base + *iovoff,
				      bp->b_rptr, n) != 0) {
				*fault = true;
				return done;
			}
			bp->b_rptr += n;
			done += n;
			*iovoff += n;
			if (*iovoff == v->iov_len) {
				(*iovp)++;
				(*iovcnt)--;
				*iovoff = 0;
			}
		}
	}
	return done;
}

/* Drop leading empty blocks; NULL if the message is all consumed. */
static mblk_t *trim_front(mblk_t *mp)
{
	while (mp != NULL && mp->b_rptr >= mp->b_wptr) {
		mblk_t *n = mp->b_cont;
		freeb(mp);
		mp = n;
	}
	return mp;
}

/* mp's first block as type: in a copy of its unread bytes if its data
 * block is shared (a module may hold a dupmsg of the message, whose
 * blocks must stay as it sent them); in place if no copy can be had. */
static mblk_t *retype(mblk_t *mp, unsigned char type)
{
	if (mp->b_datap->db_type == type)
		return mp;
	if (__atomic_load_n(&mp->b_datap->db_ref, __ATOMIC_ACQUIRE) > 1) {
		size_t n = mp->b_wptr > mp->b_rptr ? MBLKL(mp) : 0;
		mblk_t *nb = allocb(n, BPRI_MED);

		if (nb != NULL) {
			memcpy(nb->b_wptr, mp->b_rptr, n);
			nb->b_wptr += n;
			nb->b_band = mp->b_band;
			nb->b_flag = mp->b_flag;
			nb->b_cont = mp->b_cont;
			mp->b_cont = NULL;
			freeb(mp);
			mp = nb;
		}
	}
	mp->b_datap->db_type = type;
	return mp;
}

/* The rest of a message whose front blocks went: it keeps the band and
 * the MSGMARK/MSGDELIM of the message it was (only a first block carries
 * them), so it goes back in its place. */
static mblk_t *rest_of(mblk_t *mp, unsigned char band, unsigned short flag)
{
	mp = trim_front(mp);
	if (mp != NULL) {
		mp->b_band = band;
		mp->b_flag |= flag & (MSGMARK | MSGDELIM);
	}
	return mp;
}

/* May the short ways read now?  Not while an error, a priority message
 * or a band message waits (a flushed cache dropped first).  rlock held. */
static inline bool plain_ok(struct sthead *sh)
{
	rcache_check(sh);
	return !(sh_flags(sh) & (STRDERR | STRPRI | STRBANDQ));
}

/* The front of the reader's cache for the short ways (read_plain,
 * getmsg_plain), filled from the queue if empty: NULL when an error, a
 * priority message or a band message waits, or the front is not a band-0
 * message of the run (*empty false), or nothing is queued (*empty true).
 * rlock held. */
static inline mblk_t *plain_front(struct sthead *sh, bool *empty)
{
	mblk_t *mp;

	*empty = false;
	if (!plain_ok(sh))
		return NULL;
	if (sh->sh_rcache == NULL) {
		if (__atomic_load_n(&sh->sh_sd.sd_rq->q_first,
				    __ATOMIC_ACQUIRE) == NULL) {
			*empty = true;
			return NULL;
		}
		rcache_fill(sh);
	}
	mp = sh->sh_rcache;
	return mp != NULL && mp->b_band == 0 ? mp : NULL;
}

/* With the reader's cache empty and no error, priority or band message
 * waiting, the queue's only message if it is a band-0 M_DATA block of
 * 1..room bytes, no longer queued or counted (str_getq_lone); else NULL
 * and nothing done.  rlock held. */
static inline mblk_t *lone_front(struct sthead *sh, size_t room,
				 unsigned *gen)
{
	/* (one block counted, the cache empty and so nothing owed: one
	 * message queued, as far as a look without the lock can tell) */
	if (sh->sh_rcache != NULL ||
	    __atomic_load_n(&sh->sh_sd.sd_rq->q_mblkcnt, __ATOMIC_RELAXED) !=
	    1)
		return NULL;
	if (!plain_ok(sh))
		return NULL;
	return str_getq_lone(sh->sh_sd.sd_rq, room, &sh->sh_rflushgen, gen);
}

/* After a whole message was read: is the read complete?  In a message
 * mode one message is; a byte stream goes on until the buffer is full. */
static inline bool plain_done(int rdopt, const struct iovec *iov,
			      size_t iovoff)
{
	return ((rdopt & RMODEMASK) != RNORM &&
		(rdopt & RMODEMASK) != RFILL) || iovoff == iov->iov_len;
}

/* With nothing queued at the head: the driver's next message straight
 * into the reader's buffer, when the driver can (strkev's ke_read) and
 * no module sits between it and the head.  Bytes, 0, or -errno. */
static ssize_t read_direct(struct sthead *sh, void *buf, size_t room)
{
	struct strkev *ke = __atomic_load_n(&sh->sh_sd.sd_kev,
					    __ATOMIC_ACQUIRE);

	if (ke == NULL || ke->ke_read == NULL || room == 0 ||
	    __atomic_load_n(&ke->ke_rq->q_next, __ATOMIC_ACQUIRE) !=
	    sh->sh_sd.sd_rq)
		return 0;
	return ke->ke_read(ke, buf, room, sth_ucopy);
}

/*
 * The common read, taken before the general loop: whole one-block M_DATA
 * messages from the reader's cache (or a lone one from the queue) into a
 * single buffer, while no error,
 * priority message or band message is waiting.  Exactly what the loop
 * would do with them, without its questions.  True when the read is
 * complete (the buffer full, a message mode's one message, or a byte
 * stream found nothing more); false leaves the rest, with *copied and
 * *iovoff where they are, to the loop.  rlock held.
 */
static bool read_plain(struct sthead *sh, const struct iovec *iov,
		       size_t *iovoff, int rdopt, ssize_t *copied)
{
	for (;;) {
		size_t len, room = iov->iov_len - *iovoff;
		bool empty, cached = false;
		unsigned gen;
		/* a lone message is taken off and uncounted (a reader keeping
		 * up finds one at a time: one lock hold does); otherwise the
		 * front of the cache, which stays counted until read */
		mblk_t *mp = lone_front(sh, room, &gen);

		if (mp == NULL) {
			if ((mp = plain_front(sh, &empty)) == NULL) {
				ssize_t r = empty ? read_direct(sh,
					(char *)iov->iov_base + *iovoff,
					room) : 0;

				if (r > 0) {
					*iovoff += (size_t)r;
					*copied += r;
					if (plain_done(rdopt, iov, *iovoff))
						return true;
					continue;
				}
				/* nothing queued: a byte stream with something
				 * already is done (the loop would say so) --
				 * RFILL waits on in the loop -- else the loop
				 * waits (or, after a fault, pulls and says
				 * EFAULT) */
				return r == 0 && empty && *copied > 0 &&
				       (rdopt & RMODEMASK) != RFILL;
			}
			if (!str_data_fits(mp, room))
				return false;
			cached = true;
		}
		len = (size_t)(mp->b_wptr - mp->b_rptr);
		if (sth_ucopy((char *)iov->iov_base + *iovoff, mp->b_rptr,
			      len) != 0) {
			if (!cached) {	/* (unless flushed meanwhile) */
				struct rsnap sn = { .gen = gen };
				struct rsnap_ref r = { sh, &sn };
				str_putbq_unless(sh->sh_sd.sd_rq, mp,
						 rsnap_flushed, &r);
			}
			return false;	/* the loop says EFAULT */
		}
		if (cached)
			rcache_pop(sh);
		*iovoff += len;
		*copied += (ssize_t)len;
		freeb(mp);
		if (cached)
			rconsumed(sh, len, 1, NULL);
		if (plain_done(rdopt, iov, *iovoff))
			return true;
	}
}

/* trusted: uiov is the library's own (read()), not copied in */
ssize_t sth_read(int fd, const struct iovec *uiov, int iovcnt, bool trusted,
		 bool *handled)
{
	struct rctx c = { NULL, NULL, NULL, false };
	struct iovec loc[8], *iov0;
	const struct iovec *iov;
	struct sth_file *f;
	struct sthead *sh;
	size_t want = 0, iovoff = 0;
	ssize_t copied = 0;
	int err = 0, rdopt;
	bool fault = false, pulled = false, hup_looked = false;

	c.t = str_enter();
	if ((f = sth_lookup(fd)) == NULL) {
		str_exit(c.t);
		*handled = false;
		return -1;
	}
	*handled = true;
	c.f = f;
	c.sh = sh = f->f_sh;
	if (trusted)
		iov0 = (struct iovec *)uiov;
	else if ((err = sth_uiov(uiov, iovcnt, loc, 8, &iov0)) != 0) {
		str_exit(c.t);
		return sth_err(err);
	}
	iov = iov0;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - want) {
			str_exit(c.t);
			if (!trusted && iov0 != loc)
				free(iov0);
			return sth_err(EINVAL);
		}
		want += iov[i].iov_len;
	}
	if (sh_flags(sh) & STPLEX) {
		err = EINVAL;
		goto out_noread;
	}
	if (want == 0) {
		/* POSIX: zero bytes asked for, zero returned, nothing else
		 * (an error already pending may be reported) */
		err = sth_read_error(sh);
		goto out_noread;
	}
	strblock_lock(&sh->sh_rlock);
	rdopt = __atomic_load_n(&sh->sh_rdopt, __ATOMIC_RELAXED);
	if (iovcnt == 1 && read_plain(sh, iov, &iovoff, rdopt, &copied))
		goto done;
	for (;;) {
		mblk_t *mp;
		unsigned char type;
		size_t n, len;

		if (unlikely(sh_flags(sh) & STPLEX)) {
			/* linked below a multiplexer while we slept: its
			 * queue is the multiplexer's now */
			if (copied == 0)
				err = EINVAL;
			break;
		}
		if (unlikely(sh_flags(sh) & STRDERR) && copied > 0)
			break;	/* what was read is returned; the error is
				   the next call's */
		if ((err = sth_read_error(sh)) != 0)
			break;
		bool ne, cached;
		struct rsnap snap;
		unsigned long b0 = 0, bl0 = 0;
		unsigned char band0;
		unsigned short flag0;
		mp = rtake(sh, NULL, NULL, &ne, &cached, &snap);
		if (mp != NULL && cached)
			msgsz(mp, &b0, &bl0);
		if (mp == NULL) {
			if (sh_flags(sh) & (STRHUP | STRCLOSED)) {
				/* what came before the hangup was queued
				 * before its flag was set: one more look
				 * finds what arrived since ours */
				if (!hup_looked) {
					hup_looked = true;
					continue;
				}
				break;		/* what we have, or EOF */
			}
			/* what we have -- RFILL, blocking: only once the
			 * buffer is full */
			if (copied > 0 &&
			    ((rdopt & RMODEMASK) != RFILL || nonblocking(&c)))
				break;
			if (want == 0)
				break;
			if (nonblocking(&c)) {
				/* what the driver's kernel source already
				 * has (a socket) is not "no data" */
				if (!pulled && sth_has_kev(sh)) {
					pulled = true;
					sth_pull(sh, KEV_PULL);
					continue;
				}
				err = EAGAIN;
				break;
			}
			c.want = want - (size_t)copied;
			if ((err = read_wait(&c)) != 0) {
				if (copied > 0)
					err = 0;	/* (RFILL) what it has */
				break;
			}
			continue;
		}
		type = mp->b_datap->db_type;
		band0 = mp->b_band;
		flag0 = mp->b_flag;
		if (type == M_SIG) {
			raise_sig(sh, mp);
			freemsg(mp);
			continue;
		}
		if ((err = frontier_error(mp, rdopt)) != 0) {
			rputback(sh, mp, cached, b0, bl0, &snap);
			if (copied > 0)
				err = 0;
			break;
		}
		if (type == M_PROTO || type == M_PCPROTO) {
			if ((rdopt & RPROTMASK) == RPROTDIS) {
				/* drop the control part, keep the data */
				bool hp = type == M_PCPROTO;
				while (mp != NULL && is_ctl_block(mp)) {
					mblk_t *n2 = mp->b_cont;
					freeb(mp);
					mp = n2;
				}
				mp = rest_of(mp, band0, flag0);
				if (mp == NULL) {
					/* (what is left of a priority
					 * message stays one, STRPRI with it:
					 * its data goes first) */
					if (hp)
						hipri_done(sh, &snap);
					if (cached)
						rconsumed(sh, b0, bl0, NULL);
					continue;
				}
				if (hp)
					mp = retype(mp, M_HPDATA);
				type = mp->b_datap->db_type;
			}
		}
		len = msgsize(mp);
		if (len == 0) {
			/* a zero-length message: first, it is EOF-like; after
			 * data, it ends this read and waits for the next */
			if (copied == 0) {
				if (is_hipri(mp))
					hipri_done(sh, &snap);
				freemsg(mp);
				if (cached)
					rconsumed(sh, b0, bl0, NULL);
			} else {
				rputback(sh, mp, cached, b0, bl0, &snap);
			}
			break;
		}
		if (copied > 0 && is_hipri(mp)) {
			/* a byte stream read stops before priority data */
			rputback(sh, mp, cached, b0, bl0, &snap);
			break;
		}
		n = copy_out(mp, &iov, &iovcnt, &iovoff, want - copied, &fault);
		copied += n;
		if (fault) {
			/* what was copied counts; the rest stays unread, a
			 * priority message's rest a priority message, as
			 * below */
			mp = rest_of(mp, band0, flag0);
			if (mp != NULL) {
				if (type >= QPCTL &&
				    mp->b_datap->db_type < QPCTL)
					mp = retype(mp, M_HPDATA);
				rputback(sh, mp, cached, b0, bl0, &snap);
			} else {
				if (cached)
					rconsumed(sh, b0, bl0, NULL);
				if (type >= QPCTL)
					hipri_done(sh, &snap);
			}
			if (copied == 0)
				err = EFAULT;
			break;
		}
		mp = rest_of(mp, band0, flag0);
		if (mp == NULL) {
			if (cached)
				rconsumed(sh, b0, bl0, NULL);
			if (type >= QPCTL)
				hipri_done(sh, &snap);
			if ((rdopt & RMODEMASK) != RNORM &&
			    (rdopt & RMODEMASK) != RFILL)
				break;	/* message modes: one message */
			if ((size_t)copied == want)
				break;
			continue;	/* byte stream: go on, no waiting */
		}
		/* bytes left in this message */
		if ((rdopt & RMODEMASK) == RMSGD) {
			if (type >= QPCTL)
				hipri_done(sh, &snap);
			freemsg(mp);
			if (cached)
				rconsumed(sh, b0, bl0, NULL);
		} else {
			if (type >= QPCTL && mp->b_datap->db_type < QPCTL)
				mp = retype(mp, M_HPDATA);
			rputback(sh, mp, cached, b0, bl0, &snap);
		}
		break;
	}
done:
	sig_front(sh);
	rlock_release(sh);
out_noread:
	sth_changed(sh);
	str_exit(c.t);
	if (c.held)
		sth_file_rele(f);
	if (!trusted && iov0 != loc)
		free(iov0);
	if (err != 0)
		return sth_err(err);
	return copied;
}

/* ---- getmsg / getpmsg ---- */

struct gm_want {
	int mode;		/* MSG_HIPRI, MSG_BAND, MSG_ANY */
	int band;
};

static bool gm_match(const mblk_t *mp, void *arg)
{
	struct gm_want *w = arg;

	if (mp->b_datap->db_type == M_SIG)
		return true;		/* consumed on the way */
	if (w->mode == MSG_HIPRI)
		return is_hipri(mp);
	if (w->mode == MSG_BAND)
		return is_hipri(mp) || mp->b_band >= w->band;
	return true;
}

/* Copy up to max bytes of the blocks of part into the application's
 * buf, leaving them there (consume_part takes them off once every part
 * is copied).  Bytes copied, or -1 on a bad buf. */
static int copy_part(const mblk_t *part, char *buf, int max)
{
	int done = 0;

	for (const mblk_t *bp = part; bp != NULL && done < max;
	     bp = bp->b_cont) {
		int n = (int)MBLKL(bp);
		if (n > max - done)
			n = max - done;
		if (sth_ucopy(buf + done, bp->b_rptr, (size_t)n) != 0)
			return -1;
		done += n;
	}
	return done;
}

/* The first n bytes of part, copied out by copy_part, are read. */
static void consume_part(mblk_t *part, int n)
{
	for (mblk_t *bp = part; bp != NULL && n > 0; bp = bp->b_cont) {
		int k = (int)MBLKL(bp) < n ? (int)MBLKL(bp) : n;
		bp->b_rptr += k;
		n -= k;
	}
}

/*
 * The application's getmsg arguments, copied in (and the results copied
 * out) once, so that a bad pointer anywhere is EFAULT.
 */
static int gm_copyin(struct strbuf *uctl, struct strbuf *udat, int *ubandp,
		     int *uflagsp, bool pmsg, struct strbuf *ctl,
		     struct strbuf *dat, int *band, int *flags)
{
	if (uflagsp == NULL || (pmsg && ubandp == NULL))
		return EINVAL;
	if (sth_ucopy(flags, uflagsp, sizeof(int)) ||
	    (pmsg && sth_ucopy(band, ubandp, sizeof(int))) ||
	    (uctl && sth_ucopy(ctl, uctl, sizeof(*ctl))) ||
	    (udat && sth_ucopy(dat, udat, sizeof(*dat))))
		return EFAULT;
	return 0;
}

static int gm_copyout(struct strbuf *uctl, struct strbuf *udat, int *ubandp,
		      int *uflagsp, bool pmsg, const struct strbuf *ctl,
		      const struct strbuf *dat, int band, int flags)
{
	if ((uctl && sth_ucopy(&uctl->len, &ctl->len, sizeof(int))) ||
	    (udat && sth_ucopy(&udat->len, &dat->len, sizeof(int))) ||
	    sth_ucopy(uflagsp, &flags, sizeof(int)) ||
	    (pmsg && sth_ucopy(ubandp, &band, sizeof(int))))
		return EFAULT;
	return 0;
}

static int getpmsg_local(int fd, struct strbuf *ctl, struct strbuf *dat,
			 int *bandp, int *flagsp, bool pmsg, bool nowait);

int sth_getpmsg(int fd, struct strbuf *uctl, struct strbuf *udat,
		int *ubandp, int *uflagsp, bool pmsg)
{
	struct strbuf lctl, ldat;
	int band = 0, flags = 0, r, err;

	err = gm_copyin(uctl, udat, ubandp, uflagsp, pmsg, &lctl, &ldat,
			&band, &flags);
	if (err != 0)		/* (on a stream: EBADF, ENOSTR first) */
		return sth_err(sth_fd_errno(fd, err));
	r = getpmsg_local(fd, uctl ? &lctl : NULL, udat ? &ldat : NULL,
			  pmsg ? &band : NULL, &flags, pmsg, false);
	if (r < 0)
		return r;
	if (gm_copyout(uctl, udat, ubandp, uflagsp, pmsg, &lctl, &ldat, band,
		       flags))
		return sth_err(EFAULT);
	return r;
}

int streams_getpmsg_direct(int fd, struct strbuf *ctl, struct strbuf *dat,
			   int *bandp, int *flagsp)
{
	bool nowait;

	if (bandp == NULL || flagsp == NULL)
		return sth_err(EINVAL);
	nowait = (*flagsp & STREAMS_GETPMSG_NOWAIT) != 0;
	*flagsp &= ~STREAMS_GETPMSG_NOWAIT;
	return getpmsg_local(fd, ctl, dat, bandp, flagsp, true, nowait);
}

/*
 * The common getmsg, taken before the general loop: a band-0 message
 * from the reader's cache that is one M_PROTO block, one M_DATA block,
 * or the two, each fitting the buffer given for it, asked for with
 * MSG_ANY (or MSG_BAND 0), while no error, priority message or band
 * message is waiting.  Exactly what the loop would do with it, without
 * its questions.  True when done (getmsg returns 0); false leaves
 * everything to the loop.  rlock held.
 */
static bool getmsg_plain(struct sthead *sh, struct strbuf *ctl,
			 struct strbuf *dat, const struct gm_want *w,
			 int *bandp, int *flagsp, bool pmsg)
{
	mblk_t *mp, *cp = NULL, *dp;
	size_t clen = 0, dlen = 0;
	bool empty;

	if (w->mode != MSG_ANY && (w->mode != MSG_BAND || w->band != 0))
		return false;
	if ((mp = plain_front(sh, &empty)) == NULL)
		return false;
	dp = mp;
	if (mp->b_datap->db_type == M_PROTO) {
		cp = mp;
		dp = mp->b_cont;
		clen = (size_t)(cp->b_wptr - cp->b_rptr);
		if (cp->b_wptr < cp->b_rptr || ctl == NULL ||
		    ctl->maxlen < 0 || clen > (size_t)ctl->maxlen)
			return false;
	}
	if (dp != NULL) {
		dlen = (size_t)(dp->b_wptr - dp->b_rptr);
		if (dp->b_datap->db_type != M_DATA || dp->b_cont != NULL ||
		    dp->b_wptr < dp->b_rptr || dat == NULL ||
		    dat->maxlen < 0 || dlen > (size_t)dat->maxlen)
			return false;
	}
	/* (control part first, as the loop copies) */
	if (cp != NULL && sth_ucopy(ctl->buf, cp->b_rptr, clen) != 0)
		return false;		/* the loop says EFAULT */
	if (dp != NULL && sth_ucopy(dat->buf, dp->b_rptr, dlen) != 0)
		return false;
	rcache_pop(sh);
	if (ctl != NULL)
		ctl->len = cp != NULL ? (int)clen : -1;
	if (dat != NULL)
		dat->len = dp != NULL ? (int)dlen : -1;
	if (pmsg) {
		*flagsp = MSG_BAND;
		*bandp = 0;
	} else {
		*flagsp = 0;
	}
	rconsumed(sh, clen + dlen, dp != NULL && cp != NULL ? 2 : 1, NULL);
	freemsg(mp);
	return true;
}

/* getmsg on local copies of the arguments (buffers are still the
 * application's); nowait: as if O_NONBLOCK were set. */
static int getpmsg_local(int fd, struct strbuf *ctl, struct strbuf *dat,
			 int *bandp, int *flagsp, bool pmsg, bool nowait)
{
	struct rctx c = { NULL, NULL, NULL, false };
	struct sth_file *f;
	struct sthead *sh;
	struct gm_want w;
	int err = 0, ret = 0, seen = 0;
	bool nonempty, pulled = false, counted = false, hup_looked = false;

	if (!pmsg) {
		if (*flagsp == 0)
			w.mode = MSG_ANY;
		else if (*flagsp == RS_HIPRI)
			w.mode = MSG_HIPRI;
		else
			return sth_err(sth_fd_errno(fd, EINVAL));
		w.band = 0;
	} else {
		w.mode = *flagsp;
		w.band = *bandp;
		if ((w.mode != MSG_HIPRI && w.mode != MSG_BAND &&
		     w.mode != MSG_ANY) || w.band < 0 || w.band > 255 ||
		    (w.mode == MSG_HIPRI && w.band != 0))
			return sth_err(sth_fd_errno(fd, EINVAL));
	}

	c.t = str_enter();
	if ((f = sth_lookup(fd)) == NULL) {
		str_exit(c.t);
		return sth_err(sth_not_stream(fd));
	}
	c.f = f;
	c.sh = sh = f->f_sh;
	if (sh_flags(sh) & STPLEX) {
		err = EINVAL;
		goto out_noread;
	}
	strblock_lock(&sh->sh_rlock);
	if (getmsg_plain(sh, ctl, dat, &w, bandp, flagsp, pmsg))
		goto done;
	for (;;) {
		mblk_t *mp, *cpart, *dpart, **pp;
		int clen, dlen, ctype;
		bool hp, cleft, dleft;

		if (unlikely(sh_flags(sh) & STPLEX)) {
			err = EINVAL;	/* linked meanwhile (sth_read) */
			break;
		}
		if ((err = sth_read_error(sh)) != 0)
			break;
		bool cached;
		struct rsnap snap;
		unsigned long b0 = 0, bl0 = 0;
		mp = rtake(sh, gm_match, &w, &nonempty, &cached, &snap);
		if (counted && (mp != NULL || !nonempty)) {
			/* (counted for the sleep below; not needed now) */
			__atomic_sub_fetch(&sh->sh_rwaiters, 1,
					   __ATOMIC_ACQ_REL);
			counted = false;
		}
		if (mp != NULL && cached)
			msgsz(mp, &b0, &bl0);
		if (mp == NULL) {
			if (sh_flags(sh) & (STRHUP | STRCLOSED)) {
				if (!hup_looked) {	/* (as sth_read) */
					hup_looked = true;
					continue;
				}
				/* hangup: drained, report empty parts */
				if (ctl)
					ctl->len = 0;
				if (dat)
					dat->len = 0;
				*flagsp = 0;
				if (pmsg)
					*bandp = 0;
				break;
			}
			if (nowait || nonblocking(&c)) {
				if (!pulled && sth_has_kev(sh)) {
					pulled = true;
					sth_pull(sh, KEV_PULL);
					continue;
				}
				err = EAGAIN;
				break;
			}
			if (nonempty && !counted) {
				/* a message is there but not the kind wanted:
				 * count ourselves a waiter, so that what comes
				 * now bumps sh_rseq, and look once more before
				 * sleeping (what came before we were counted
				 * woke nobody) */
				__atomic_add_fetch(&sh->sh_rwaiters, 1,
						   __ATOMIC_ACQ_REL);
				seen = __atomic_load_n(&sh->sh_rseq,
						       __ATOMIC_ACQUIRE);
				counted = true;
				continue;
			}
			if (nonempty) {
				/* still not: wait for the queue to change --
				 * and for the driver's source (another
				 * process's ring, a socket), which comes up
				 * only when pulled: the driver pulls now and
				 * arms its wake-up for us, as for a reader
				 * with nothing queued (read_wait) */
				if ((err = wait_begin(&c, false)) == 0) {
					sth_kevwait_begin(sh);
					err = sth_sleep(&c.t, &sh->sh_rseq,
							seen, -1);
					sth_kevwait_end(sh);
					strblock_lock(&sh->sh_rlock);
				}
				__atomic_sub_fetch(&sh->sh_rwaiters, 1,
						   __ATOMIC_ACQ_REL);
				counted = false;
			} else {
				err = read_wait(&c);
			}
			if (err != 0)
				break;
			continue;
		}
		if (mp->b_datap->db_type == M_SIG) {
			raise_sig(sh, mp);
			freemsg(mp);
			continue;
		}
		if (mp->b_datap->db_type == M_PASSFP) {
			rputback(sh, mp, cached, b0, bl0, &snap);
			err = EBADMSG;
			break;
		}
		hp = is_hipri(mp);
		ctype = mp->b_datap->db_type;
		unsigned char band = mp->b_band;	/* mp may be freed below */
		/* split: leading control blocks, then data blocks */
		cpart = NULL;
		pp = &mp;
		if (is_ctl_block(mp)) {
			cpart = mp;
			while ((*pp)->b_cont != NULL && is_ctl_block((*pp)->b_cont))
				pp = &(*pp)->b_cont;
			dpart = (*pp)->b_cont;
			(*pp)->b_cont = NULL;
		} else {
			dpart = mp;
		}
		/* both parts copied out before either is consumed: a
		 * buffer that faults leaves the whole message unread */
		clen = ctl != NULL && ctl->maxlen >= 0 && cpart != NULL ?
		       copy_part(cpart, ctl->buf, ctl->maxlen) : 0;
		dlen = clen >= 0 && dat != NULL && dat->maxlen >= 0 &&
		       dpart != NULL ? copy_part(dpart, dat->buf, dat->maxlen)
				     : 0;
		if (clen < 0 || dlen < 0) {
			if (cpart != NULL)
				(*pp)->b_cont = dpart;	/* (whole again) */
			rputback(sh, mp, cached, b0, bl0, &snap);
			err = EFAULT;
			break;
		}
		/* control part */
		cleft = false;
		if (ctl == NULL || ctl->maxlen < 0) {
			cleft = cpart != NULL;
			if (ctl != NULL)
				ctl->len = -1;
		} else if (cpart == NULL) {
			ctl->len = -1;
		} else {
			consume_part(cpart, clen);
			ctl->len = clen;
			cpart = trim_front(cpart);
			cleft = cpart != NULL && msgsize(cpart) > 0;
			if (cpart != NULL && !cleft) {
				freemsg(cpart);
				cpart = NULL;
			}
		}
		/* data part */
		dleft = false;
		if (dat == NULL || dat->maxlen < 0) {
			dleft = dpart != NULL;
			if (dat != NULL)
				dat->len = -1;
		} else if (dpart == NULL) {
			dat->len = -1;
		} else {
			consume_part(dpart, dlen);
			dat->len = dlen;
			dpart = trim_front(dpart);
			dleft = dpart != NULL && msgsize(dpart) > 0;
			if (dpart != NULL && !dleft) {
				freemsg(dpart);
				dpart = NULL;
			}
		}
		if (pmsg) {
			*flagsp = hp ? MSG_HIPRI : MSG_BAND;
			*bandp = hp ? 0 : band;
		} else {
			*flagsp = hp ? RS_HIPRI : 0;
		}
		ret = (cleft ? MORECTL : 0) | (dleft ? MOREDATA : 0);
		/* put back what is left, as one message */
		if (cpart != NULL || dpart != NULL) {
			mblk_t *rest;
			if (cpart != NULL) {
				rest = cpart;
				linkb(rest, dpart);
				rest = retype(rest, (unsigned char)ctype);
			} else {
				rest = dpart;
				if (hp)
					rest = retype(rest, M_HPDATA);
			}
			rest->b_band = band;
			rputback(sh, rest, cached, b0, bl0, &snap);
		} else {
			if (hp)
				hipri_done(sh, &snap);
			if (cached)
				rconsumed(sh, b0, bl0, NULL);
		}
		break;
	}
	if (counted)
		__atomic_sub_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
done:
	sig_front(sh);
	rlock_release(sh);
out_noread:
	sth_changed(sh);
	str_exit(c.t);
	if (c.held)
		sth_file_rele(f);
	if (err != 0)
		return sth_err(err);
	return ret;
}
