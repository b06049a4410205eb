/*
 * sth_write.c -- the write side of the stream head: write/writev and
 * putmsg/putpmsg, and the head write queue's procedures.
 *
 * A write checks the stream's errors, then flow control with
 * bcanputnext() on the head write queue: a full queue below marks itself
 * QWANTW and the writer sleeps (or fails with EAGAIN) until that queue
 * drains below its low water mark and back-enables the head write queue,
 * whose service procedure (strwsrv) wakes the writers.  Data is copied
 * into messages of at most min(q_maxpsz of the queue below, strmsgsz)
 * bytes with SO_WROFF bytes of head room, and sent with putnext().  A
 * write smaller than q_minpsz, or larger than q_maxpsz when q_minpsz is
 * not 0, fails with ERANGE.  A zero-length write sends a zero-length
 * message, except on a pipe without SNDZERO.  A write() that is one
 * message as it is (the usual case) takes a short way (write_plain).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sthead.h"

int strwput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

void sth_back_take(queue_t *wq, bool *b0, bool *band)
{
	qlock(wq);
	*b0 = (wq->q_flag & QBACK) != 0;
	*band = false;
	__atomic_store_n(&wq->q_flag, wq->q_flag & ~QBACK, __ATOMIC_RELAXED);
	for (int b = 0; b < wq->q_nband; b++) {
		if (wq->q_bandp[b].qb_flag & QB_BACK) {
			__atomic_store_n(&wq->q_bandp[b].qb_flag,
					 wq->q_bandp[b].qb_flag & ~QB_BACK,
					 __ATOMIC_RELAXED);
			*band = true;
		}
	}
	qunlock(wq);
}

/* Back-enabled: the stream below drained; let the writers go. */
int strwsrv(queue_t *q)
{
	struct sthead *sh = SH(q->q_stream);	/* not q_ptr: set_lower_procs */
	bool band, b0;

	/* which flow control was relieved: band 0's (QBACK), a band's
	 * (QB_BACK), or neither (an enable of ours, to wake the writers) */
	sth_back_take(q, &b0, &band);
	sth_wake(&sh->sh_wseq, &sh->sh_wwaiters);
	sth_changed(sh);
	/* S_OUTPUT only for band 0's relief (a band's alone is not one) */
	if (unlikely(__atomic_load_n(&sh->sh_sigevents, __ATOMIC_RELAXED)))
		sth_sigpoll(sh, (band ? S_WRBAND : 0) |
			    ((b0 || !band) && bcanputnext(q, 0) ? S_OUTPUT : 0),
			    0);
	return 0;
}

struct wctx {
	struct sth_file *f;
	struct sthead *sh;
	struct strthread *t;
	bool held;
};

/* SIGPIPE to the writing thread, as a kernel pipe sends it (a thread
 * that blocks it then finds it pending, and EPIPE; the process is not
 * killed through another thread). */
static void sigpipe_self(void)
{
	str_signal(0, SIGPIPE);		/* (after the write's exit) */
}

/*
 * Whether the stream takes writes: 0, or the errno (a write error, EPIPE
 * on a pipe whose other end is gone, ENXIO after a hangup, EINVAL when
 * linked below a multiplexer).  SIGPIPE as SVR4/POSIX say.  fl: its
 * flags, of which one is set.
 */
static int write_state_slow(struct sthead *sh, int fl)
{
	int e = 0;

	if (fl & STPLEX)
		return EINVAL;
	if (fl & STWRERR) {
		pthread_mutex_lock(&sh->sh_lock);
		e = sh->sh_werror;
		if (e != 0 && (sh->sh_erropt & WERRNONPERSIST)) {
			sh->sh_werror = 0;
			__atomic_and_fetch(&sh->sh_flag, ~STWRERR,
					   __ATOMIC_ACQ_REL);
		}
		bool sigpipe = (sh->sh_wropt & SNDPIPE) != 0;
		pthread_mutex_unlock(&sh->sh_lock);
		if (e != 0) {
			if (sigpipe)
				sigpipe_self();
			return e;
		}
	}
	if (fl & (STRHUP | STRPEERGONE | STRCLOSED)) {
		if (fl & STRPIPE) {
			if (__atomic_load_n(&sh->sh_wropt, __ATOMIC_RELAXED) &
			    SNDPIPE)
				sigpipe_self();
			return EPIPE;
		}
		return ENXIO;
	}
	return 0;
}

/* The flags that give a write an error (write_state_slow says which). */
#define WSTATE_FLAGS (STPLEX | STWRERR | STRHUP | STRPEERGONE | STRCLOSED)

/* The error a write gets from the stream's state, or 0: inline for the
 * usual case of no error at all (a write looks twice). */
static inline int write_state(struct sthead *sh)
{
	int fl = sh_flags(sh);

	if (likely(!(fl & WSTATE_FLAGS)))
		return 0;
	return write_state_slow(sh, fl);
}

static bool wnonblocking(struct wctx *c)
{
	return (__atomic_load_n(&c->f->f_oflag, __ATOMIC_RELAXED) &
		(O_NONBLOCK | O_NDELAY)) != 0;
}

struct wspin {
	int *word;
	int seen;
};

static bool word_moved(void *arg)
{
	struct wspin *w = arg;

	return __atomic_load_n(w->word, __ATOMIC_ACQUIRE) != w->seen;
}

/* Wait until band may be written (or the stream's state changes).
 * 0 when writable, or an errno. */
static int wait_flow(struct wctx *c, unsigned char band)
{
	struct sthead *sh = c->sh;
	queue_t *wq = sh->sh_sd.sd_wq;
	int err;

	for (;;) {
		if ((err = write_state(sh)) != 0)
			return err;
		if (bcanputnext(wq, band))
			return 0;
		if (wnonblocking(c))
			return EAGAIN;
		if ((err = sth_call_hold(c->f, &c->held)) != 0)
			return err;
		__atomic_add_fetch(&sh->sh_wwaiters, 1, __ATOMIC_ACQ_REL);
		int seen = __atomic_load_n(&sh->sh_wseq, __ATOMIC_ACQUIRE);
		struct wspin ws = { &sh->sh_wseq, seen };
		if (!bcanputnext(wq, band) && write_state(sh) == 0 &&
		    !sth_spin(c->t, word_moved, &ws, true))
			err = sth_sleep(&c->t, &sh->sh_wseq, seen, -1);
		__atomic_sub_fetch(&sh->sh_wwaiters, 1, __ATOMIC_ACQ_REL);
		if (err != 0)
			return err;
	}
}

/* allocb that waits for memory when blocking; NULL and *errp when not. */
static mblk_t *alloc_wait(struct wctx *c, size_t size, int *errp)
{
	mblk_t *mp;

	while ((mp = allocb(size, BPRI_MED)) == NULL) {
		if (wnonblocking(c)) {
			*errp = EAGAIN;
			return NULL;
		}
		if ((*errp = sth_call_hold(c->f, &c->held)) != 0)
			return NULL;
		str_exit(c->t);
		int r = sth_restart_nap(1000000);	/* 1 ms */
		c->t = str_enter();
		if (r != 0) {
			*errp = r;
			return NULL;
		}
		if ((*errp = write_state(c->sh)) != 0)
			return NULL;
	}
	return mp;
}

/* Limits of the queue below the head: minimum and maximum packet size
 * (INFPSZ: none) and the stream's largest message. */
static void packet_limits(struct sthead *sh, long *minp, long *maxp)
{
	queue_t *n = __atomic_load_n(&sh->sh_sd.sd_wq->q_next,
				     __ATOMIC_ACQUIRE);

	/* (atomic: the queue below a pipe end is its peer's head read
	 * queue, whose limits change when the peer is linked) */
	*minp = n ? __atomic_load_n(&n->q_minpsz, __ATOMIC_RELAXED) : 0;
	*maxp = n ? __atomic_load_n(&n->q_maxpsz, __ATOMIC_RELAXED) : INFPSZ;
}

/*
 * write() of len (> 0) bytes that is one message as it is: no error, no
 * write offset, and the queue below and strmsgsz take it whole.  The
 * general loop's checks and its iovec and packet cursors cost more than
 * the message itself; this sends the same message the same way (flow
 * control, the wait for memory, STRDELIM, EFAULT) and returns the bytes
 * written, or -1 with *errp.  -2: not such a write, nothing done.
 */
static ssize_t write_plain(struct wctx *c, const void *buf, size_t len,
			   int *errp)
{
	struct sthead *sh = c->sh;
	struct strkev *ke;
	long minpsz, maxpsz;
	mblk_t *mp;

	packet_limits(sh, &minpsz, &maxpsz);
	if (len == 0 || minpsz != 0 ||
	    (maxpsz != INFPSZ && (maxpsz < 0 || (size_t)maxpsz < len)) ||
	    (sh->sh_strmsgsz != 0 && sh->sh_strmsgsz < len) ||
	    __atomic_load_n(&sh->sh_wroff, __ATOMIC_RELAXED) != 0)
		return -2;
	if ((*errp = wait_flow(c, 0)) != 0)
		return -1;
	if ((ke = __atomic_load_n(&sh->sh_sd.sd_kev, __ATOMIC_ACQUIRE)) !=
	    NULL && ke->ke_write != NULL &&
	    __atomic_load_n(&sh->sh_sd.sd_wq->q_next, __ATOMIC_ACQUIRE) ==
	    WR(ke->ke_rq)) {
		/* no module below: the driver may take the bytes itself */
		int r = ke->ke_write(ke, buf, len, (sh_flags(sh) & STRDELIM) ?
				     MSGDELIM : 0, sth_ucopy);

		if (r > 0)
			return (ssize_t)len;
		if (r < 0) {
			*errp = -r;
			return -1;
		}
	}
	if ((mp = alloc_wait(c, len, errp)) == NULL)
		return -1;
	if (sth_ucopy(mp->b_wptr, buf, len) != 0) {
		freemsg(mp);
		*errp = EFAULT;
		return -1;
	}
	mp->b_wptr += len;
	if (sh_flags(sh) & STRDELIM)
		mp->b_flag |= MSGDELIM;
	putnext(sh->sh_sd.sd_wq, mp);
	return (ssize_t)len;
}

/* trusted: uiov is the library's own (write()), not copied in */
ssize_t sth_write(int fd, const struct iovec *uiov, int iovcnt, bool trusted,
		  bool *handled)
{
	struct wctx c = { NULL, NULL, NULL, false };
	struct iovec loc[8], *iov0;
	const struct iovec *iov;
	struct sth_file *f;
	struct sthead *sh;
	size_t total = 0, done = 0, iovoff = 0, chunk, wroff;
	long minpsz, maxpsz;
	int err = 0;

	c.t = str_enter();
	if ((f = sth_lookup(fd)) == NULL) {
		str_exit(c.t);
		*handled = false;
		return -1;
	}
	*handled = true;
	c.f = f;
	c.sh = sh = f->f_sh;
	/* (the flags alone: write_state_slow may raise SIGPIPE, which
	 * the general path below does once) */
	if (trusted && iovcnt == 1 && !(sh_flags(sh) & WSTATE_FLAGS)) {
		ssize_t r = write_plain(&c, uiov->iov_base, uiov->iov_len,
					&err);

		if (r != -2) {
			sth_changed(sh);
			str_exit(c.t);
			if (c.held)
				sth_file_rele(f);
			return r >= 0 ? r : sth_err(err);
		}
	}
	if (trusted)
		iov0 = (struct iovec *)uiov;
	else if ((err = sth_uiov(uiov, iovcnt, loc, 8, &iov0)) != 0) {
		str_exit(c.t);
		return sth_err(err);
	}
	iov = iov0;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - total) {
			str_exit(c.t);
			if (!trusted && iov0 != loc)
				free(iov0);
			return sth_err(EINVAL);
		}
		total += iov[i].iov_len;
	}
	if ((err = write_state(sh)) != 0)
		goto out;
	if (total == 0 && (sh_flags(sh) & STRPIPE) &&
	    !(__atomic_load_n(&sh->sh_wropt, __ATOMIC_RELAXED) & SNDZERO))
		goto out;		/* a pipe sends nothing */
	packet_limits(sh, &minpsz, &maxpsz);
	if (maxpsz == 0)
		goto out;	/* takes nothing: SVR4 writes 0 bytes */
	/* the largest packet is the smaller of q_maxpsz and strmsgsz;
	 * with a minimum a write cannot be split, so must fit one */
	if (sh->sh_strmsgsz != 0 &&
	    (maxpsz == INFPSZ || maxpsz > (long)sh->sh_strmsgsz))
		maxpsz = (long)sh->sh_strmsgsz;
	if ((long)total < minpsz ||
	    (maxpsz != INFPSZ && minpsz != 0 && total > (size_t)maxpsz)) {
		err = ERANGE;
		goto out;
	}
	chunk = maxpsz == INFPSZ || maxpsz < 0 ? SIZE_MAX : (size_t)maxpsz;
	wroff = __atomic_load_n(&sh->sh_wroff, __ATOMIC_RELAXED);
	do {
		size_t n = total - done < chunk ? total - done : chunk;
		mblk_t *mp;

		if ((err = wait_flow(&c, 0)) != 0)
			break;
		if ((mp = alloc_wait(&c, wroff + n, &err)) == NULL)
			break;
		mp->b_rptr += wroff;
		mp->b_wptr = mp->b_rptr;
		/* gather n bytes from the iovec cursor */
		for (size_t left = n; left > 0;) {
			size_t room = iov->iov_len - iovoff;
			size_t k = room < left ? room : left;
			if (sth_ucopy(mp->b_wptr, (const char *)iov->iov_base +
				      iovoff, k) != 0) {
				err = EFAULT;
				break;
			}
			mp->b_wptr += k;
			iovoff += k;
			left -= k;
			if (iovoff == iov->iov_len) {
				iov++;
				iovoff = 0;
			}
		}
		if (err != 0) {
			freemsg(mp);	/* bad buffer: nothing of this part */
			break;
		}
		if (sh_flags(sh) & STRDELIM)
			mp->b_flag |= MSGDELIM;
		putnext(sh->sh_sd.sd_wq, mp);
		done += n;
	} while (done < total);
out:
	sth_changed(sh);
	str_exit(c.t);
	if (c.held)
		sth_file_rele(f);
	if (!trusted && iov0 != loc)
		free(iov0);
	if (done > 0)
		return (ssize_t)done;	/* a partial write counts */
	if (err != 0)
		return sth_err(err);
	return 0;
}

/* putmsg on an open file, inside the caller's entry (c->t). */
static int putpmsg_common(struct wctx *cp, const struct strbuf *ctl,
			  const struct strbuf *dat, int band, int flags,
			  bool pmsg, queue_t *fdq, int fdoff)
{
#define c (*cp)
	struct sthead *sh = c.sh;
	bool hipri, has_ctl, has_dat;
	int clen = 0, dlen = 0, err = 0;
	long minpsz, maxpsz;
	mblk_t *cmp = NULL, *dmp = NULL, *mp;
	size_t wroff;

	if (!pmsg) {
		if (flags != 0 && flags != RS_HIPRI)
			return EINVAL;
		hipri = flags == RS_HIPRI;
		band = 0;
	} else {
		if ((flags != MSG_HIPRI && flags != MSG_BAND) || band < 0 ||
		    band > 255 || (flags == MSG_HIPRI && band != 0))
			return EINVAL;
		hipri = flags == MSG_HIPRI;
	}
	has_ctl = ctl != NULL && ctl->len >= 0;
	has_dat = dat != NULL && dat->len >= 0;
	if (hipri && !has_ctl)
		return EINVAL;
	if (has_ctl)
		clen = ctl->len;
	if (has_dat)
		dlen = dat->len;
	if (fdq != NULL && (fdoff < 0 || (size_t)fdoff > (size_t)clen ||
			    (size_t)clen - (size_t)fdoff < sizeof(queue_t *) ||
			    (fdoff % sizeof(void *)) != 0))
		return EINVAL;

	if ((err = write_state(sh)) != 0)
		goto out;
	if (!has_ctl && !has_dat)
		goto out;		/* nothing to send: 0 */
	packet_limits(sh, &minpsz, &maxpsz);
	if ((size_t)clen > sh->sh_strctlsz ||
	    (sh->sh_strmsgsz != 0 && (size_t)dlen > sh->sh_strmsgsz) ||
	    (has_dat && (dlen < minpsz ||
			 (maxpsz != INFPSZ && dlen > maxpsz)))) {
		err = ERANGE;
		goto out;
	}
	if (!hipri && (err = wait_flow(&c, (unsigned char)band)) != 0)
		goto out;
	if (has_ctl) {
		if ((cmp = alloc_wait(&c, (size_t)clen, &err)) == NULL)
			goto out;
		cmp->b_datap->db_type = hipri ? M_PCPROTO : M_PROTO;
		if (sth_ucopy(cmp->b_wptr, ctl->buf, (size_t)clen) != 0) {
			freemsg(cmp);
			err = EFAULT;
			goto out;
		}
		if (fdq != NULL)
			memcpy(cmp->b_wptr + fdoff, &fdq, sizeof(fdq));
		cmp->b_wptr += clen;
	}
	if (has_dat) {
		wroff = __atomic_load_n(&sh->sh_wroff, __ATOMIC_RELAXED);
		if ((dmp = alloc_wait(&c, wroff + (size_t)dlen, &err)) == NULL) {
			if (cmp)
				freemsg(cmp);
			goto out;
		}
		dmp->b_rptr += wroff;
		dmp->b_wptr = dmp->b_rptr;
		if (sth_ucopy(dmp->b_wptr, dat->buf, (size_t)dlen) != 0) {
			freemsg(dmp);
			if (cmp)
				freemsg(cmp);
			err = EFAULT;
			goto out;
		}
		dmp->b_wptr += dlen;
	}
	mp = cmp != NULL ? cmp : dmp;
	if (cmp != NULL)
		cmp->b_cont = dmp;
	mp->b_band = hipri ? 0 : (unsigned char)band;
	putnext(sh->sh_sd.sd_wq, mp);
out:
	sth_changed(sh);
	return err;
#undef c
}

/* putmsg/putpmsg on strbufs in the library's hands. */
static int putpmsg_direct(int fd, const struct strbuf *ctl,
			  const struct strbuf *dat, int band, int flags,
			  bool pmsg)
{
	struct wctx c = { NULL, NULL, NULL, false };
	int err;

	c.t = str_enter();
	if ((c.f = sth_lookup(fd)) == NULL) {
		str_exit(c.t);
		return sth_err(sth_not_stream(fd));
	}
	c.sh = c.f->f_sh;
	err = putpmsg_common(&c, ctl, dat, band, flags, pmsg, NULL, 0);
	str_exit(c.t);
	if (c.held)
		sth_file_rele(c.f);
	return err ? sth_err(err) : 0;
}

int sth_putpmsg(int fd, const struct strbuf *uctl, const struct strbuf *udat,
		int band, int flags, bool pmsg)
{
	struct strbuf lctl, ldat;

	/* the strbufs themselves, copied in: a bad pointer is EFAULT (on
	 * a stream: EBADF and ENOSTR come first) */
	if ((uctl != NULL && sth_ucopy(&lctl, uctl, sizeof(lctl)) != 0) ||
	    (udat != NULL && sth_ucopy(&ldat, udat, sizeof(ldat)) != 0))
		return sth_err(sth_fd_errno(fd, EFAULT));
	return putpmsg_direct(fd, uctl != NULL ? &lctl : NULL,
			      udat != NULL ? &ldat : NULL, band, flags, pmsg);
}

int streams_putpmsg_direct(int fd, const struct strbuf *ctl,
			   const struct strbuf *dat, int band, int flags)
{
	return putpmsg_direct(fd, ctl, dat, band, flags, true);
}

/* I_FDINSERT: putmsg with fdq's address at fdoff of the control part;
 * inside the caller's entry *tp.  0 or errno. */
int sth_putmsg_fdinsert(struct sth_file *f, struct strthread **tp,
			const struct strbuf *ctl, const struct strbuf *dat,
			int flags, queue_t *fdq, int fdoff, bool *held)
{
	struct wctx c = { f, f->f_sh, *tp, *held };
	int err = putpmsg_common(&c, ctl, dat, 0, flags, false, fdq, fdoff);

	*tp = c.t;
	*held = c.held;
	return err;
}
