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
 * the reader drains.  read() follows the read mode (RNORM, RMSGD, RMSGN;
 * RPROTNORM, RPROTDAT, RPROTDIS); a zero-length message met first is taken
 * and read returns 0, in every mode.  getmsg() returns the control and data
 * parts of the first message separately and puts back what did not fit
 * (MORECTL, MOREDATA); what remains of a high priority message stays high
 * priority (as M_HPDATA when only data remains).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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
	sth_wake(&sh->sh_rseq, &sh->sh_rwaiters);
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
		if ((how & FLUSHBAND) && MBLKL(mp) >= 2) {
			flushband(q, mp->b_rptr[1], FLUSHALL);
		} else {
			flushq(q, FLUSHDATA);
		}
		/* a flushed high priority message no longer blocks */
		qlock(q);
		bool hp = false;
		for (mblk_t *m = q->q_first; m && is_hipri(m); m = m->b_next)
			if (datamsg(m->b_datap->db_type) ||
			    m->b_datap->db_type == M_HPDATA)
				hp = true;
		qunlock(q);
		if (!hp)
			set_flag(sh, STRPRI, false);
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
		/* SVR4: flush the head and everything below */
		flushq(q, FLUSHALL);
		set_flag(sh, STRPRI, false);
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
		if (mode != RFILL)
			sh->sh_rdopt = (sh->sh_rdopt & ~RMODEMASK) | mode;
		if (prot == RPROTNORM || prot == RPROTDAT || prot == RPROTDIS)
			sh->sh_rdopt = (sh->sh_rdopt & ~RPROTMASK) | prot;
	}
	if (so.so_flags & SO_WROFF)
		sh->sh_wroff = so.so_wroff;
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
		kill(getpid(), sig);
}

int strrput(queue_t *q, mblk_t *mp)
{
	struct sthead *sh = q->q_ptr;
	unsigned char type = mp->b_datap->db_type;

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
		putq(q, mp);
		sth_wake(&sh->sh_rseq, &sh->sh_rwaiters);
		sth_changed(sh);
		if (unlikely(__atomic_load_n(&sh->sh_sigevents,
					     __ATOMIC_RELAXED)) &&
		    (first || type >= QPCTL))
			sth_sigpoll(sh, type >= QPCTL ? S_HIPRI
				    : band ? S_RDBAND : S_RDNORM, band);
		return 0;
	}
	case M_SIG:
		/* raised when it reaches the front: now, if nothing waits */
		if (q->q_first == NULL) {
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

/* ---- common reader plumbing ---- */

struct rctx {
	struct sth_file *f;
	struct sthead *sh;
	struct strthread *t;
	bool held;		/* f held across a sleep */
};

/* Pending read error, consumed if non-persistent; 0 if none. */
static int read_error(struct sthead *sh)
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
 * 0 to look again, or an errno (EINTR).  Called with sh_rlock held, which
 * stays held: readers queue behind the sleeping one, as in SVR4.
 */
static bool readable(void *arg)
{
	struct sthead *sh = arg;

	return __atomic_load_n(&sh->sh_sd.sd_rq->q_first, __ATOMIC_ACQUIRE) ||
	       (sh_flags(sh) & (STRHUP | STRDERR | STRCLOSED | STPLEX));
}

static int read_wait(struct rctx *c)
{
	struct sthead *sh = c->sh;
	int seen, err;

	if (sth_spin(c->t, readable, sh))
		return 0;

	if (!c->held) {
		__atomic_add_fetch(&c->f->f_refs, 1, __ATOMIC_ACQ_REL);
		c->held = true;
	}
	if (sh_flags(sh) & STRMREAD)
		putnextctl(sh->sh_sd.sd_wq, M_READ);
	__atomic_add_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
	seen = __atomic_load_n(&sh->sh_rseq, __ATOMIC_ACQUIRE);
	if (readable(sh))
		err = 0;
	else
		err = sth_sleep(&c->t, &sh->sh_rseq, seen, -1);
	__atomic_sub_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
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
 * off the blocks' b_rptr.  Returns bytes copied. */
static size_t copy_out(mblk_t *mp, const struct iovec **iovp, int *iovcnt,
		       size_t *iovoff, size_t want)
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
			memcpy((char *)v->iov_base + *iovoff, bp->b_rptr, n);
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

ssize_t sth_read(int fd, const struct iovec *iov, int iovcnt, bool *handled)
{
	struct rctx c = { NULL, NULL, NULL, false };
	struct sth_file *f;
	struct sthead *sh;
	queue_t *rq;
	size_t want = 0, iovoff = 0;
	ssize_t copied = 0;
	int err = 0, rdopt;

	c.t = str_enter();
	if ((f = sth_lookup(fd)) == NULL) {
		str_exit(c.t);
		*handled = false;
		return -1;
	}
	*handled = true;
	c.f = f;
	c.sh = sh = f->f_sh;
	rq = sh->sh_sd.sd_rq;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - want) {
			str_exit(c.t);
			return sth_err(EINVAL);
		}
		want += iov[i].iov_len;
	}
	if (sh_flags(sh) & STPLEX) {
		err = EINVAL;
		goto out_noread;
	}
	strlock(&sh->sh_rlock);
	rdopt = __atomic_load_n(&sh->sh_rdopt, __ATOMIC_RELAXED);
	for (;;) {
		mblk_t *mp;
		unsigned char type;
		size_t n, len;

		if ((err = read_error(sh)) != 0)
			break;
		mp = getq(rq);
		if (mp == NULL) {
			if (copied > 0 || (sh_flags(sh) & (STRHUP | STRCLOSED)))
				break;		/* what we have, or EOF */
			if (want == 0)
				break;
			if (nonblocking(&c)) {
				err = EAGAIN;
				break;
			}
			if ((err = read_wait(&c)) != 0)
				break;
			continue;
		}
		type = mp->b_datap->db_type;
		if (type == M_SIG) {
			raise_sig(sh, mp);
			freemsg(mp);
			continue;
		}
		if ((err = frontier_error(mp, rdopt)) != 0) {
			putbq(rq, mp);
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
				if (hp)
					set_flag(sh, STRPRI, false);
				if (mp == NULL)
					continue;
				if (hp)
					mp->b_datap->db_type = M_HPDATA;
				type = mp->b_datap->db_type;
			}
		}
		len = msgsize(mp);
		if (len == 0) {
			/* a zero-length message: first, it is EOF-like; after
			 * data, it ends this read and waits for the next */
			if (copied == 0) {
				if (is_hipri(mp))
					set_flag(sh, STRPRI, false);
				freemsg(mp);
			} else {
				putbq(rq, mp);
			}
			break;
		}
		if (copied > 0 && is_hipri(mp)) {
			/* a byte stream read stops before priority data */
			putbq(rq, mp);
			break;
		}
		n = copy_out(mp, &iov, &iovcnt, &iovoff, want - copied);
		copied += n;
		mp = trim_front(mp);
		if (mp == NULL) {
			if (type >= QPCTL)
				set_flag(sh, STRPRI, false);
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
				set_flag(sh, STRPRI, false);
			freemsg(mp);
		} else {
			if (type >= QPCTL && mp->b_datap->db_type < QPCTL)
				mp->b_datap->db_type = M_HPDATA;
			putbq(rq, mp);
		}
		break;
	}
	strunlock(&sh->sh_rlock);
out_noread:
	sth_changed(sh);
	str_exit(c.t);
	if (c.held)
		sth_file_rele(f);
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

/* Copy up to max bytes of the blocks of part into buf; consumed bytes are
 * taken off.  Returns bytes copied. */
static int copy_part(mblk_t *part, char *buf, int max)
{
	int done = 0;

	for (mblk_t *bp = part; bp != NULL && done < max; bp = bp->b_cont) {
		int n = (int)MBLKL(bp);
		if (n > max - done)
			n = max - done;
		memcpy(buf + done, bp->b_rptr, (size_t)n);
		bp->b_rptr += n;
		done += n;
	}
	return done;
}

/* Plausibility of a user buffer: NULL with a length, or an address in
 * the first page or outside user space, is EFAULT. */
static bool bad_addr(const void *p, int len)
{
	uintptr_t a = (uintptr_t)p;

	if (len <= 0)
		return false;
	return a < 4096 || a >= 0x800000000000ull || a + (uintptr_t)len < a;
}

int sth_getpmsg(int fd, struct strbuf *ctl, struct strbuf *dat,
		int *bandp, int *flagsp, bool pmsg)
{
	struct rctx c = { NULL, NULL, NULL, false };
	struct sth_file *f;
	struct sthead *sh;
	queue_t *rq;
	struct gm_want w;
	int err = 0, ret = 0;
	bool nonempty;

	if (flagsp == NULL || (pmsg && bandp == NULL))
		return sth_err(EINVAL);
	if (bad_addr(flagsp, sizeof(int)) || (pmsg && bad_addr(bandp, 4)) ||
	    (ctl && bad_addr(ctl, sizeof(*ctl))) ||
	    (dat && bad_addr(dat, sizeof(*dat))))
		return sth_err(EFAULT);
	if (!pmsg) {
		if (*flagsp == 0)
			w.mode = MSG_ANY;
		else if (*flagsp == RS_HIPRI)
			w.mode = MSG_HIPRI;
		else
			return sth_err(EINVAL);
		w.band = 0;
	} else {
		w.mode = *flagsp;
		w.band = *bandp;
		if ((w.mode != MSG_HIPRI && w.mode != MSG_BAND &&
		     w.mode != MSG_ANY) || w.band < 0 || w.band > 255 ||
		    (w.mode == MSG_HIPRI && w.band != 0))
			return sth_err(EINVAL);
	}
	if ((ctl && ctl->maxlen > 0 && bad_addr(ctl->buf, ctl->maxlen)) ||
	    (dat && dat->maxlen > 0 && bad_addr(dat->buf, dat->maxlen)))
		return sth_err(EFAULT);

	c.t = str_enter();
	if ((f = sth_lookup(fd)) == NULL) {
		str_exit(c.t);
		return sth_err(sth_real.fcntl(fd, F_GETFD) < 0 ? EBADF : ENOSTR);
	}
	c.f = f;
	c.sh = sh = f->f_sh;
	rq = sh->sh_sd.sd_rq;
	if (sh_flags(sh) & STPLEX) {
		err = EINVAL;
		goto out_noread;
	}
	strlock(&sh->sh_rlock);
	for (;;) {
		mblk_t *mp, *cpart, *dpart, **pp;
		int clen, dlen, ctype;
		bool hp, cleft, dleft;

		if ((err = read_error(sh)) != 0)
			break;
		mp = str_getq_if(rq, gm_match, &w, &nonempty);
		if (mp == NULL) {
			if (sh_flags(sh) & (STRHUP | STRCLOSED)) {
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
			if (nonblocking(&c)) {
				err = EAGAIN;
				break;
			}
			if (nonempty) {
				/* a message is there but not the kind wanted:
				 * wait for the queue to change */
				__atomic_add_fetch(&sh->sh_rwaiters, 1,
						   __ATOMIC_ACQ_REL);
				int seen = __atomic_load_n(&sh->sh_rseq,
							   __ATOMIC_ACQUIRE);
				if (!c.held) {
					__atomic_add_fetch(&f->f_refs, 1,
							   __ATOMIC_ACQ_REL);
					c.held = true;
				}
				err = sth_sleep(&c.t, &sh->sh_rseq, seen, -1);
				__atomic_sub_fetch(&sh->sh_rwaiters, 1,
						   __ATOMIC_ACQ_REL);
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
			putbq(rq, mp);
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
		/* control part */
		cleft = false;
		if (ctl == NULL || ctl->maxlen < 0) {
			cleft = cpart != NULL;
			if (ctl != NULL)
				ctl->len = -1;
		} else if (cpart == NULL) {
			ctl->len = -1;
		} else {
			clen = copy_part(cpart, ctl->buf, ctl->maxlen);
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
			dlen = copy_part(dpart, dat->buf, dat->maxlen);
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
				rest->b_datap->db_type = (unsigned char)ctype;
			} else {
				rest = dpart;
				if (hp)
					rest->b_datap->db_type = M_HPDATA;
			}
			rest->b_band = band;
			putbq(rq, rest);
		} else if (hp) {
			set_flag(sh, STRPRI, false);
		}
		break;
	}
	strunlock(&sh->sh_rlock);
out_noread:
	sth_changed(sh);
	str_exit(c.t);
	if (c.held)
		sth_file_rele(f);
	if (err != 0)
		return sth_err(err);
	return ret;
}
