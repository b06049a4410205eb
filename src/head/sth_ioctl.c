/*
 * sth_ioctl.c -- the STREAMS ioctls (streamio), multiplexer links, and
 * ioctls passed to modules and drivers.
 *
 * The head answers I_* commands itself, except I_STR, I_LINK/I_PLINK,
 * I_UNLINK/I_PUNLINK and unknown commands, which become M_IOCTL messages
 * sent down the stream.  One ioctl runs at a time per stream
 * (sh_iocbusy): a second caller sleeps until the first ends, for at most
 * its own time-out (15 s when it has none: ETIME), and a signal ends its
 * wait (EINTR).  The caller of the ioctl in progress waits for the
 * M_IOCACK (its ioc_error, if any, is the call's error) or M_IOCNAK with
 * the same id, or for the time-out (I_STR ic_timout, 15 s by default:
 * ETIME; none for a transparent ioctl), a hangup (ENXIO), an error, the
 * stream's linking under a multiplexer (EINVAL), or a signal (EINTR).
 * An unknown command is a transparent ioctl: ioc_count is TRANSPARENT,
 * b_cont carries the argument pointer, and the module asks for user
 * memory with M_COPYIN/M_COPYOUT, which the head serves and answers with
 * M_IOCDATA.  A copy request that comes when nobody waits for it any
 * more (the caller timed out or was interrupted) is answered with a
 * failed M_IOCDATA, so the module can let go of the ioctl.
 *
 * User memory.  Argument structures and ioctl data are copied with
 * sth_ucopy, which fails with EFAULT on a bad address instead of
 * crashing.
 *
 * Links.  I_LINK puts the stream named by the argument below the
 * multiplexing driver at the bottom of this stream: the lower stream's
 * head queue pair takes the driver's st_muxrinit/st_muxwinit procedures
 * and the driver gets M_IOCTL I_LINK with a linkblk.  Links are kept on
 * the controlling stream; persistent ones (I_PLINK) on a global list and
 * survive its close.  All link changes are serialised by sth_link_lock.
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
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sthead.h"
#include "../drivers/shmpipe.h"

#define STRTIMOUT	15	/* seconds, default I_STR time-out */
#define IOCBLKSZ	64	/* room for iocblk, copyreq, copyresp */
#define IOC_ERRMAX	4095	/* largest errno a module may answer with */

pthread_mutex_t sth_link_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sth_link *sth_plinks;		/* sth_link_lock */
static int sth_next_muxid = 1;			/* sth_link_lock */
static _Atomic unsigned int sth_next_iocid = 1;

/* ---- user memory ---- */

static int copyin(void *dst, const void *src, size_t n)
{
	return sth_ucopy(dst, src, n);
}

static int copyout(void *dst, const void *src, size_t n)
{
	return sth_ucopy(dst, src, n);
}

/* A NUL-terminated name of at most max chars; EINVAL if longer. */
static int copyin_name(char *dst, const char *src, size_t max)
{
	for (size_t i = 0; i <= max; i++) {
		if (copyin(&dst[i], src + i, 1) != 0)
			return EFAULT;
		if (dst[i] == '\0')
			return 0;
	}
	return EINVAL;
}

/* ---- sending ioctls down ---- */

struct ictx {
	struct sth_file *f;
	struct sthead *sh;
	struct strthread *t;
	bool held;
	void *str_dp;		/* I_STR: where an M_COPYOUT goes */
	long str_copied;	/* I_STR: bytes it copied there, or -1 */
	struct sth_file *other;	/* I_FDINSERT's stream, held to the end */
	bool quiet;		/* a last close's unlink: the stream's hangup
				   or error and signals do not stop it (the
				   driver must hear of it: SVR4's
				   STR_NOERROR | STR_NOSIG) */
};

/* The ioctl's caller is about to sleep: keep its file (EBADF: a close
 * has dropped its last reference already). */
static int ioc_hold(struct ictx *c)
{
	return sth_call_hold(c->f, &c->held);
}

/* Turn copy request mp (whose copyreq is *cq) into its M_IOCDATA: the
 * copyresp over the copyreq, same id, cp_rval err (0: the copy was
 * done), data (M_COPYIN's, or NULL) after it; then down the stream. */
static void copy_answer(struct sthead *sh, mblk_t *mp,
			const struct copyreq *cq, int err, mblk_t *data)
{
	struct copyresp *cp = (struct copyresp *)mp->b_rptr;

	mp->b_datap->db_type = M_IOCDATA;
	memset(cp, 0, sizeof(*cp));
	cp->cp_cmd = cq->cq_cmd;
	cp->cp_cr = cq->cq_cr;
	cp->cp_id = cq->cq_id;
	cp->cp_flag = cq->cq_flag;
	cp->cp_private = cq->cq_private;
	cp->cp_rval = err ? (caddr_t)(long)err : NULL;
	mp->b_wptr = mp->b_rptr + sizeof(*cp);
	freemsg(mp->b_cont);
	mp->b_cont = data;
	putnext(sh->sh_sd.sd_wq, mp);
}

/* Answer copy request mp (M_COPYIN/M_COPYOUT) nobody will serve with a
 * failed M_IOCDATA, so the module ends the ioctl; free it if it is too
 * short to be one. */
static void copy_refuse(struct sthead *sh, mblk_t *mp)
{
	struct copyreq cq;

	if (MBLKL(mp) < sizeof(cq)) {
		freemsg(mp);
		return;
	}
	memcpy(&cq, mp->b_rptr, sizeof(cq));
	copy_answer(sh, mp, &cq, EINVAL, NULL);
}

/* A reply nobody waits for: a copy request is refused, the rest freed. */
static void reply_drop(struct sthead *sh, mblk_t *mp)
{
	if (mp->b_datap->db_type == M_COPYIN ||
	    mp->b_datap->db_type == M_COPYOUT)
		copy_refuse(sh, mp);
	else
		freemsg(mp);
}

void sth_ioc_reply(struct sthead *sh, mblk_t *mp)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;
	bool mine = false;

	/* an ack or nak is read whole (ioc_error, ioc_count, ioc_rval); a
	 * copy request's size is checked where it is served */
	size_t need = mp->b_datap->db_type == M_IOCACK ||
		      mp->b_datap->db_type == M_IOCNAK ?
		      sizeof(struct iocblk) :
		      sizeof(unsigned int) + offsetof(struct iocblk, ioc_id);

	if (MBLKL(mp) >= need) {
		pthread_mutex_lock(&sh->sh_lock);
		if (sh->sh_iocid != 0 && ioc->ioc_id == sh->sh_iocid &&
		    sh->sh_iocmsg == NULL) {
			sh->sh_iocmsg = mp;
			mine = true;
		}
		pthread_mutex_unlock(&sh->sh_lock);
	}
	if (!mine)
		reply_drop(sh, mp);	/* nobody waits for it any more */
	sth_wake(&sh->sh_iseq, &sh->sh_iwaiters);
}

/* The state that ends any wait on the stream: 0 or errno. */
static int ioc_state(struct sthead *sh)
{
	int fl = sh_flags(sh), e = 0;

	if (fl & STRCLOSED)
		return EBADF;
	if (fl & STPLEX)
		return EINVAL;	/* linked under a multiplexer meanwhile */
	if (fl & (STRHUP | STRPEERGONE))
		return ENXIO;
	if (fl & (STRDERR | STWRERR)) {
		pthread_mutex_lock(&sh->sh_lock);
		e = sh->sh_rerror ? sh->sh_rerror : sh->sh_werror;
		pthread_mutex_unlock(&sh->sh_lock);
	}
	return e;
}

/* Take the stream's ioctl slot, waiting until deadline (ms, -1 never):
 * 0, ETIME, EINTR, or the error the stream's state gives.  Inside an
 * entry (c->t). */
static int ioc_begin(struct ictx *c, long deadline)
{
	struct sthead *sh = c->sh;
	int err;

	for (;;) {
		int seen, z = 0;

		err = 0;
		if (!c->quiet && (err = ioc_state(sh)) != 0)
			return err;
		if (__atomic_compare_exchange_n(&sh->sh_iocbusy, &z, 1, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return 0;
		__atomic_add_fetch(&sh->sh_iwaiters, 1, __ATOMIC_SEQ_CST);
		seen = __atomic_load_n(&sh->sh_iseq, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&sh->sh_iocbusy, __ATOMIC_SEQ_CST) != 0 &&
		    (err = ioc_hold(c)) == 0)
			err = sth_sleep(&c->t, &sh->sh_iseq, seen, deadline);
		__atomic_sub_fetch(&sh->sh_iwaiters, 1, __ATOMIC_ACQ_REL);
		if (err == ETIMEDOUT)
			return ETIME;
		if (err != 0 && !(c->quiet && err == EINTR))
			return err;
	}
}

static void ioc_end(struct sthead *sh)
{
	__atomic_store_n(&sh->sh_iocbusy, 0, __ATOMIC_SEQ_CST);
	sth_wake(&sh->sh_iseq, &sh->sh_iwaiters);
}

/* The deadline (ms) for the slot of an ioctl that waits timeout_s for
 * its answer (-1: forever): the same, or 15 s. */
static long slot_deadline(int timeout_s)
{
	return sth_now_ms() + (timeout_s < 0 ? STRTIMOUT : timeout_s) * 1000L;
}

static mblk_t *new_ioctl(int cmd, size_t count, cred_t *cr)
{
	mblk_t *mp = allocb(IOCBLKSZ, BPRI_HI);
	struct iocblk *ioc;

	if (mp == NULL)
		return NULL;
	mp->b_datap->db_type = M_IOCTL;
	memset(mp->b_rptr, 0, IOCBLKSZ);
	ioc = (struct iocblk *)mp->b_rptr;
	ioc->ioc_cmd = cmd;
	/* (kept: a module may look at it after we gave up waiting) */
	ioc->ioc_cr = str_cred_keep(cr);
	do
		ioc->ioc_id = atomic_fetch_add(&sth_next_iocid, 1);
	while (ioc->ioc_id == 0);
	ioc->ioc_flag = IOC_NATIVE;
	ioc->ioc_count = count;
	mp->b_wptr += sizeof(*ioc);
	return mp;
}

/* Turn reply mp (M_COPYIN/M_COPYOUT) into M_IOCDATA; EFAULT if the copy
 * failed (the module then drops the ioctl). */
static int serve_copy(struct ictx *c, mblk_t *mp)
{
	struct copyreq cq;
	mblk_t *data = NULL;
	int err = 0;

	if (MBLKL(mp) < sizeof(cq)) {
		freemsg(mp);
		return EPROTO;
	}
	memcpy(&cq, mp->b_rptr, sizeof(cq));
	if (mp->b_datap->db_type == M_COPYIN) {
		if (cq.cq_size > (size_t)c->sh->sh_strmsgsz && c->sh->sh_strmsgsz)
			err = EINVAL;
		else if ((data = allocb(cq.cq_size, BPRI_MED)) == NULL)
			err = EAGAIN;
		else if ((err = copyin(data->b_wptr, cq.cq_addr, cq.cq_size)) == 0)
			data->b_wptr += cq.cq_size;
	} else {
		size_t have = mp->b_cont ? msgdsize(mp->b_cont) : 0;
		size_t n = cq.cq_size < have ? cq.cq_size : have;
		char *buf = NULL;
		if (n > 0 && mp->b_cont != NULL) {
			if (pullupmsg(mp->b_cont, -1) == 0)
				err = EAGAIN;
			else
				buf = (char *)mp->b_cont->b_rptr;
		}
		if (err == 0 && c->str_dp != NULL) {
			/* an I_STR's answer: into its buffer */
			err = copyout(c->str_dp, buf, n);
			if (err == 0)
				c->str_copied = (long)n;
		} else if (err == 0) {
			err = copyout(cq.cq_addr, buf, n);
		}
		if (mp->b_cont != NULL) {
			freemsg(mp->b_cont);
			mp->b_cont = NULL;
		}
	}
	copy_answer(c->sh, mp, &cq, err, data);
	return err;
}

/* From now on the replies with ioctl id id are ours (0: none); one left
 * from before, nobody's, is dropped. */
static void expect_reply(struct sthead *sh, unsigned int id)
{
	mblk_t *old;

	pthread_mutex_lock(&sh->sh_lock);
	sh->sh_iocid = id;
	old = sh->sh_iocmsg;
	sh->sh_iocmsg = NULL;
	pthread_mutex_unlock(&sh->sh_lock);
	if (old != NULL)
		reply_drop(sh, old);
}

/*
 * Send the M_IOCTL mp down and wait for its end.  timeout_s < 0 waits
 * forever.  0 with *ackp the M_IOCACK (the caller frees it), or errno.
 * Called with the stream's ioctl slot (ioc_begin).
 */
static int do_ioctl(struct ictx *c, mblk_t *mp, int timeout_s, mblk_t **ackp)
{
	struct sthead *sh = c->sh;
	unsigned int id = ((struct iocblk *)mp->b_rptr)->ioc_id;
	long deadline = timeout_s < 0 ? -1 : sth_now_ms() + timeout_s * 1000L;
	int err;

	*ackp = NULL;
	if (!c->quiet && (err = ioc_state(sh)) != 0) {
		freemsg(mp);
		return err;
	}
	expect_reply(sh, id);
	putnext(sh->sh_sd.sd_wq, mp);
	for (;;) {
		mblk_t *r;
		int seen;

		__atomic_add_fetch(&sh->sh_iwaiters, 1, __ATOMIC_ACQ_REL);
		seen = __atomic_load_n(&sh->sh_iseq, __ATOMIC_ACQUIRE);
		pthread_mutex_lock(&sh->sh_lock);
		r = sh->sh_iocmsg;
		sh->sh_iocmsg = NULL;
		pthread_mutex_unlock(&sh->sh_lock);
		if (r == NULL && (c->quiet || (err = ioc_state(sh)) == 0) &&
		    (err = ioc_hold(c)) == 0) {
			err = sth_sleep(&c->t, &sh->sh_iseq, seen, deadline);
			if (err == ETIMEDOUT)
				err = ETIME;
			else if (err == EINTR && c->quiet)
				err = 0;
		}
		__atomic_sub_fetch(&sh->sh_iwaiters, 1, __ATOMIC_ACQ_REL);
		if (r == NULL) {
			if (err != 0)
				break;
			continue;
		}
		switch (r->b_datap->db_type) {
		case M_IOCACK:
			/* (the reply is at least an iocblk: strrput) */
			err = ((struct iocblk *)r->b_rptr)->ioc_error;
			if (err < 0 || err > IOC_ERRMAX)
				err = EPROTO;	/* (no errno: a bad reply) */
			if (err != 0)
				freemsg(r);
			else
				*ackp = r;
			goto done;
		case M_IOCNAK:
			err = ((struct iocblk *)r->b_rptr)->ioc_error;
			if (err <= 0 || err > IOC_ERRMAX)
				err = EINVAL;	/* (none, or no errno) */
			freemsg(r);
			goto done;
		default:	/* M_COPYIN, M_COPYOUT */
			if ((err = serve_copy(c, r)) != 0)
				goto done;
			continue;
		}
	}
done:
	expect_reply(sh, 0);
	return err;
}

/* I_STR */
static int ioc_str(struct ictx *c, void *arg, int *rvalp)
{
	struct strioctl si;
	cred_t cr;
	mblk_t *mp, *ack;
	int err, timeout;

	if ((err = copyin(&si, arg, sizeof(si))) != 0)
		return err;
	if (si.ic_len < 0 || (c->sh->sh_strmsgsz &&
			      (size_t)si.ic_len > c->sh->sh_strmsgsz))
		return EINVAL;
	if (si.ic_timout < -1)
		return EINVAL;
	timeout = si.ic_timout == 0 ? STRTIMOUT : si.ic_timout;
	str_getcred(&cr);
	mp = new_ioctl(si.ic_cmd, (size_t)si.ic_len, &cr);
	if (mp == NULL)
		return EAGAIN;
	if (si.ic_len > 0) {
		mblk_t *d = allocb((size_t)si.ic_len, BPRI_MED);
		if (d == NULL) {
			freemsg(mp);
			return EAGAIN;
		}
		if ((err = copyin(d->b_wptr, si.ic_dp, (size_t)si.ic_len))) {
			freemsg(d);
			freemsg(mp);
			return err;
		}
		d->b_wptr += si.ic_len;
		mp->b_cont = d;
	}
	if ((err = ioc_begin(c, slot_deadline(timeout))) != 0) {
		freemsg(mp);
		return err;
	}
	c->str_dp = si.ic_dp;
	c->str_copied = -1;
	err = do_ioctl(c, mp, timeout, &ack);
	c->str_dp = NULL;
	ioc_end(c->sh);
	if (err != 0)
		return err;
	{
		/* ic_len says what came back: the caller's buffer must hold
		 * the largest answer (streamio), whatever it sent */
		struct iocblk *ioc = (struct iocblk *)ack->b_rptr;
		size_t n = ioc->ioc_count;
		if (ack->b_cont != NULL && n > 0) {
			if (!pullupmsg(ack->b_cont, -1)) {
				freemsg(ack);
				return EAGAIN;
			}
			if (n > MBLKL(ack->b_cont))
				n = MBLKL(ack->b_cont);
			err = copyout(si.ic_dp, ack->b_cont->b_rptr, n);
		} else {
			/* an M_COPYOUT's bytes, if the module sent its
			 * answer that way */
			n = c->str_copied > 0 ? (size_t)c->str_copied : 0;
		}
		si.ic_len = (int)n;
		if (err == 0)
			err = copyout(arg, &si, sizeof(si));
		*rvalp = ioc->ioc_rval;
		freemsg(ack);
	}
	return err;
}

/* An unknown command: a transparent ioctl. */
static int ioc_transparent(struct ictx *c, unsigned long cmd, void *arg,
			   int *rvalp)
{
	cred_t cr;
	mblk_t *mp, *d, *ack;
	int err;

	str_getcred(&cr);
	mp = new_ioctl((int)cmd, TRANSPARENT, &cr);
	d = allocb(sizeof(void *), BPRI_MED);
	if (mp == NULL || d == NULL) {
		if (mp)
			freemsg(mp);
		if (d)
			freemsg(d);
		return EAGAIN;
	}
	memcpy(d->b_wptr, &arg, sizeof(arg));
	d->b_wptr += sizeof(arg);
	mp->b_cont = d;
	if ((err = ioc_begin(c, slot_deadline(-1))) != 0) {
		freemsg(mp);
		return err;
	}
	/* no time-out: the module may wait for anything (SVR4: INFTIM) */
	err = do_ioctl(c, mp, -1, &ack);
	ioc_end(c->sh);
	if (err != 0)
		return err;
	*rvalp = ((struct iocblk *)ack->b_rptr)->ioc_rval;
	freemsg(ack);
	return 0;
}

/* ---- plumbing ioctls ---- */

static int ioc_push(struct ictx *c, void *arg)
{
	char name[FMNAMESZ + 1];
	struct sthead *sh = c->sh;
	struct fmodsw *fm;
	cred_t cr;
	dev_t dev;
	int err;

	if ((err = copyin_name(name, arg, FMNAMESZ)) != 0)
		return err;
	if ((fm = fmod_find(name)) == NULL)
		return EINVAL;
	str_getcred(&cr);
	if ((err = ioc_state(sh)) != 0)
		return err;
	str_exit(c->t);
	sth_plumb_lock(sh);
	/* the module's open sees the head read queue as it is: the
	 * reader's cache goes back on it first (tirdwr looks at it) */
	c->t = str_enter();
	strblock_lock(&sh->sh_rlock);
	sth_rcache_unload(sh);
	strblock_unlock(&sh->sh_rlock);
	str_exit(c->t);
	dev = sh->sh_sd.sd_dev;
	if (sh_flags(sh) & (STRHUP | STRCLOSED))
		err = ENXIO;
	else if (sh_flags(sh) & STPLEX)
		err = EINVAL;		/* linked meanwhile */
	else if (sh->sh_sd.sd_pushcnt >= NSTRPUSH)
		err = EINVAL;
	else
		err = str_push(&sh->sh_sd, fm, &dev,
			       __atomic_load_n(&c->f->f_oflag, __ATOMIC_RELAXED),
			       &cr);
	sth_plumb_unlock(sh);
	c->t = str_enter();
	return err;
}

static int ioc_pop(struct ictx *c)
{
	struct sthead *sh = c->sh;
	cred_t cr;
	int err;

	if ((err = ioc_state(sh)) != 0)
		return err;
	str_getcred(&cr);
	str_exit(c->t);
	sth_plumb_lock(sh);
	if (sh_flags(sh) & (STRHUP | STRCLOSED))
		err = ENXIO;
	else if (sh_flags(sh) & STPLEX)
		err = EINVAL;		/* linked meanwhile */
	else
		err = str_pop(&sh->sh_sd,
			      __atomic_load_n(&c->f->f_oflag, __ATOMIC_RELAXED),
			      &cr);
	sth_plumb_unlock(sh);
	c->t = str_enter();
	return err;
}

/* Names on the stream, top module first, the driver last (none on a
 * pipe end).  Returns the count; fills names[] up to max. */
static int stack_names(struct sthead *sh, struct str_mlist *names, int max)
{
	int n = 0;

	for (queue_t *q = sh->sh_sd.sd_wq->q_next; q != NULL; q = q->q_next) {
		struct strqpair *qp;
		const char *nm = NULL;

		if (q->q_stream != &sh->sh_sd || q_isread(q))
			break;
		qp = q_pair(q);
		if (qp->qp_kind == QP_MOD)
			nm = ((struct fmodsw *)qp->qp_mod)->f_name;
		else if (qp->qp_kind == QP_DRV && (sh_flags(sh) & STRPIPE))
			nm = NULL;	/* a pipe's carrier between processes */
		else if (qp->qp_kind == QP_DRV)
			nm = ((struct cdevsw *)qp->qp_mod)->d_name;
		if (nm == NULL)
			continue;
		if (names != NULL && n < max) {
			strncpy(names[n].l_name, nm, FMNAMESZ);
			names[n].l_name[FMNAMESZ] = '\0';
		}
		n++;
	}
	return n;
}

static int ioc_look(struct ictx *c, void *arg)
{
	queue_t *top = str_top(&c->sh->sh_sd);
	const char *nm;
	char name[FMNAMESZ + 1];

	if (top == NULL || q_pair(top)->qp_kind != QP_MOD)
		return EINVAL;
	nm = ((struct fmodsw *)q_pair(top)->qp_mod)->f_name;
	memset(name, 0, sizeof(name));
	strncpy(name, nm, FMNAMESZ);
	return copyout(arg, name, strlen(name) + 1);
}

static int ioc_find(struct ictx *c, void *arg, int *rvalp)
{
	char name[FMNAMESZ + 1];
	struct fmodsw *fm;
	int err;

	if ((err = copyin_name(name, arg, FMNAMESZ)) != 0)
		return err;
	if ((fm = fmod_find(name)) == NULL)
		return EINVAL;
	*rvalp = 0;
	for (queue_t *q = c->sh->sh_sd.sd_wq->q_next; q != NULL; q = q->q_next) {
		if (q->q_stream != &c->sh->sh_sd || q_isread(q))
			break;
		if (q_pair(q)->qp_kind == QP_MOD && q_pair(q)->qp_mod == fm)
			*rvalp = 1;
	}
	return 0;
}

static int ioc_list(struct ictx *c, void *arg, int *rvalp)
{
	struct str_list sl;
	struct str_mlist *names;
	int n, err;

	if (arg == NULL) {
		*rvalp = stack_names(c->sh, NULL, 0);
		return 0;
	}
	if ((err = copyin(&sl, arg, sizeof(sl))) != 0)
		return err;
	if (sl.sl_nmods < 1)
		return EINVAL;
	if (sl.sl_nmods > NSTRPUSH + 1)
		sl.sl_nmods = NSTRPUSH + 1;	/* more than a stack holds */
	names = calloc((size_t)sl.sl_nmods, sizeof(*names));
	if (names == NULL)
		return EAGAIN;
	n = stack_names(c->sh, names, sl.sl_nmods);
	if (n > sl.sl_nmods)
		n = sl.sl_nmods;
	err = copyout(sl.sl_modlist, names, (size_t)n * sizeof(*names));
	free(names);
	if (err == 0) {
		sl.sl_nmods = n;
		err = copyout(arg, &sl, sizeof(sl));
	}
	*rvalp = 0;
	return err;
}

/* ---- flushing and read-queue queries ---- */

static int send_flush(struct sthead *sh, int how, int band, bool useband)
{
	mblk_t *mp = allocb(2, BPRI_HI);

	if (mp == NULL)
		return EAGAIN;
	mp->b_datap->db_type = M_FLUSH;
	*mp->b_wptr++ = (unsigned char)(how | (useband ? FLUSHBAND : 0));
	*mp->b_wptr++ = (unsigned char)band;
	/* the head's own read queue first, as SVR4's strflush */
	if (how & FLUSHR) {
		sth_rflush(sh, useband ? band : -1);	/* (and STRPRI) */
	}
	putnext(sh->sh_sd.sd_wq, mp);
	return 0;
}

/* Read-side ioctls look at the queue as it is: put the reader's cache
 * back first (the reader lock orders this with readers). */
static void read_side_begin(struct sthead *sh)
{
	strblock_lock(&sh->sh_rlock);
	sth_rcache_unload(sh);
}

static void read_side_end(struct sthead *sh)
{
	strblock_unlock(&sh->sh_rlock);
}

static int ioc_nread(struct ictx *c, void *arg, int *rvalp)
{
	queue_t *rq = c->sh->sh_sd.sd_rq;
	int bytes = 0, msgs = 0;

	read_side_begin(c->sh);
	qlock(rq);
	for (mblk_t *mp = rq->q_first; mp != NULL; mp = mp->b_next) {
		if (msgs == 0)
			bytes = (int)msgdsize(mp);
		msgs++;
	}
	qunlock(rq);
	read_side_end(c->sh);
	*rvalp = msgs;
	return copyout(arg, &bytes, sizeof(bytes));
}

static int ioc_peek(struct ictx *c, void *arg, int *rvalp)
{
	struct strpeek sp;
	queue_t *rq = c->sh->sh_sd.sd_rq;
	mblk_t *cp = NULL;
	int err, hp;

	if ((err = copyin(&sp, arg, sizeof(sp))) != 0)
		return err;
	if (sp.flags != 0 && sp.flags != RS_HIPRI)
		return EINVAL;
	read_side_begin(c->sh);
	qlock(rq);
	mblk_t *mp = rq->q_first;
	/* (what the front is, looked at under the lock: once let go, a
	 * reader may free it) */
	unsigned char ft = mp != NULL ? mp->b_datap->db_type : 0;
	bool want = mp != NULL && (sp.flags == 0 || ft >= QPCTL),
	     nopeek = ft == M_SIG || ft == M_PASSFP;
	if (want && !nopeek)
		cp = dupmsg(mp);	/* data shared, safe after unlock */
	qunlock(rq);
	read_side_end(c->sh);
	*rvalp = 0;
	if (cp == NULL)
		return want && nopeek && sp.flags == 0 ? EBADMSG : 0;
	hp = cp->b_datap->db_type >= QPCTL;
	int clen = -1, dlen = -1;
	for (mblk_t *bp = cp; bp != NULL; bp = bp->b_cont) {
		unsigned char t = bp->b_datap->db_type;
		bool isctl = t == M_PROTO || t == M_PCPROTO;
		struct strbuf *sb = isctl ? &sp.ctlbuf : &sp.databuf;
		int *lenp = isctl ? &clen : &dlen;
		int have = *lenp < 0 ? 0 : *lenp;
		int n = (int)MBLKL(bp);
		if (sb->maxlen < 0) {
			continue;
		}
		if (n > sb->maxlen - have)
			n = sb->maxlen - have;
		if (n > 0 && (err = copyout(sb->buf + have, bp->b_rptr,
					    (size_t)n)) != 0)
			break;
		*lenp = have + n;
	}
	freemsg(cp);
	if (err != 0)
		return err;
	sp.ctlbuf.len = clen;
	sp.databuf.len = dlen;
	sp.flags = hp ? RS_HIPRI : 0;
	*rvalp = 1;
	return copyout(arg, &sp, sizeof(sp));
}

/* ---- passing descriptors ---- */

struct passfp {
	int fd;
	uid_t uid;
	gid_t gid;
	frtn_t frtn;
	struct str_deferred defer;	/* the close, outside any entry */
};

static void passfp_close(struct str_deferred *d)
{
	struct passfp *p = (struct passfp *)((char *)d -
					      offsetof(struct passfp, defer));

	/* forgets a stream too; the process's I_SETSIG on it stays: the
	 * library's close */
	sth_close_internal(p->fd);
	free(p);
}

/* A M_PASSFP never received: close the descriptor it carries -- once
 * the thread freeing it has left the library's entries and let go of
 * the stream head's link and plumbing locks (a flush may free it inside
 * an entry, under those: the last close of a stream waits for a grace
 * period, which would wait for that very entry, and takes those locks). */
static void passfp_free(char *arg)
{
	struct passfp *p = (struct passfp *)arg;

	if (p->fd >= 0)
		str_defer(&p->defer, passfp_close);
	else
		free(p);
}

/* A M_PASSFP carrying fd (which it owns from now on, even when NULL is
 * returned: then fd is closed) from uid and gid. */
mblk_t *sth_passfp_new(int fd, uid_t uid, gid_t gid)
{
	struct passfp *p;
	mblk_t *mp;

	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		close(fd);
		return NULL;
	}
	p->fd = fd;
	p->uid = uid;
	p->gid = gid;
	p->frtn.free_func = passfp_free;
	p->frtn.free_arg = (char *)p;
	mp = esballoc((unsigned char *)p, sizeof(*p), BPRI_MED, &p->frtn);
	if (mp == NULL) {
		passfp_free((char *)p);
		return NULL;
	}
	mp->b_datap->db_type = M_PASSFP;
	mp->b_wptr += sizeof(*p);
	return mp;
}

/* What a M_PASSFP made by sth_passfp_new carries; the descriptor stays
 * the message's (closed when it is freed).  -1 if mp is not one. */
int sth_passfp_peek(const mblk_t *mp, uid_t *uid, gid_t *gid)
{
	const struct passfp *p;

	if (mp->b_datap->db_type != M_PASSFP ||
	    mp->b_datap->db_frtnp == NULL ||
	    mp->b_datap->db_frtnp->free_func != passfp_free ||
	    MBLKL(mp) != sizeof(*p))
		return -1;
	p = (const struct passfp *)mp->b_rptr;
	*uid = p->uid;
	*gid = p->gid;
	return p->fd;
}

static int ioc_sendfd(struct ictx *c, int fd)
{
	struct sthead *sh = c->sh;
	mblk_t *mp;
	int err, nfd;

	if (!(sh_flags(sh) & STRPIPE))
		return EINVAL;	/* not a STREAMS pipe */
	if ((err = ioc_state(sh)) != 0)
		return err;
	/* the receiving end must have room (SVR4 EAGAIN) */
	if (!bcanputnext(sh->sh_sd.sd_wq, 0))
		return EAGAIN;
	if (fd < 0 || sth_real.fcntl(fd, F_GETFD) < 0)
		return EBADF;
	/* A stream lives in this process's executive: across processes
	 * its descriptor would reach only the kernel socket behind it. */
	if (__atomic_load_n(&sh->sh_sd.sd_kev, __ATOMIC_ACQUIRE) != NULL &&
	    sth_lookup(fd) != NULL)
		return EXDEV;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);	/* ours: registers streams */
	if (nfd < 0)
		return errno;
	mp = sth_passfp_new(nfd, geteuid(), getegid());
	if (mp == NULL)
		return EAGAIN;
	putnext(sh->sh_sd.sd_wq, mp);
	return 0;
}

static bool is_passfp(const mblk_t *mp, void *arg)
{
	(void)arg;
	return mp->b_datap->db_type == M_PASSFP;
}

static int ioc_recvfd(struct ictx *c, void *arg)
{
	struct sthead *sh = c->sh;
	struct strrecvfd rf;
	struct passfp *p;
	bool nonempty;
	mblk_t *mp;
	int err;

	if ((err = copyin(&rf, arg, sizeof(rf))) != 0)
		return err;
	for (;;) {
		/* linked under a multiplexer meanwhile, or a read error
		 * (M_ERROR): as a read would say */
		if (sh_flags(sh) & STPLEX)
			return EINVAL;
		if ((err = sth_read_error(sh)) != 0)
			return err;
		/* a pipe to another process: what its ring holds first */
		sth_pull(sh, KEV_PULL);
		read_side_begin(sh);
		mp = str_getq_if(sh->sh_sd.sd_rq, is_passfp, NULL, &nonempty,
				 NULL);
		read_side_end(sh);
		if (mp != NULL)
			break;
		if (nonempty)
			return EBADMSG;
		if (sh_flags(sh) & (STRHUP | STRPEERGONE | STRCLOSED))
			return ENXIO;
		if (__atomic_load_n(&c->f->f_oflag, __ATOMIC_RELAXED) &
		    (O_NONBLOCK | O_NDELAY))
			return EAGAIN;
		if ((err = ioc_hold(c)) != 0)
			return err;
		/* the driver pulls once more and arms its wake-up */
		sth_kevwait_begin(sh);
		__atomic_add_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
		int seen = __atomic_load_n(&sh->sh_rseq, __ATOMIC_ACQUIRE);
		err = 0;
		if (__atomic_load_n(&sh->sh_sd.sd_rq->q_first,
				    __ATOMIC_ACQUIRE) == NULL &&
		    !(sh_flags(sh) & (STRHUP | STRPEERGONE | STRCLOSED |
				      STRDERR | STPLEX)))
			err = sth_sleep(&c->t, &sh->sh_rseq, seen, -1);
		__atomic_sub_fetch(&sh->sh_rwaiters, 1, __ATOMIC_ACQ_REL);
		sth_kevwait_end(sh);
		if (err != 0)
			return err;
	}
	/* one the stream head made (I_SENDFD), whole: a module or driver
	 * can send any bytes up as M_PASSFP */
	memset(&rf, 0, sizeof(rf));
	if ((rf.fd = sth_passfp_peek(mp, &rf.uid, &rf.gid)) < 0) {
		freemsg(mp);
		return EBADMSG;
	}
	p = (struct passfp *)mp->b_rptr;
	if ((err = copyout(arg, &rf, sizeof(rf))) != 0) {
		putbq(sh->sh_sd.sd_rq, mp);	/* keep it for a retry */
		return err;
	}
	/* close-on-exec while in flight (an exec then closes it with the
	 * message); received, it is an ordinary descriptor, as SCM_RIGHTS
	 * makes one */
	(void)fcntl(p->fd, F_SETFD, 0);
	p->fd = -1;		/* received: freeing no longer closes it */
	freemsg(mp);
	return 0;
}

/* ---- I_FDINSERT ---- */

static int ioc_fdinsert(struct ictx *c, void *arg)
{
	struct strfdinsert fi;
	struct sth_file *of;
	queue_t *q;
	int err;

	if ((err = copyin(&fi, arg, sizeof(fi))) != 0)
		return err;
	if (fi.flags != 0 && fi.flags != RS_HIPRI)
		return EINVAL;
	of = sth_lookup(fi.fildes);
	/* not an open stream (streamio: EINVAL); held to the end of the
	 * call, which may sleep for flow control: its queue's address goes
	 * into the message after that */
	if (of == NULL || !sth_file_tryhold(of))
		return EINVAL;
	c->other = of;
	if (fi.ctlbuf.len < 0)
		return EINVAL;
	/* the stream named must be usable: linked under a multiplexer
	 * EINVAL, hung up ENXIO, an error its error (streamio) */
	if ((err = ioc_state(of->f_sh)) != 0)
		return err == EBADF ? EINVAL : err;
	/* the driver's read queue at the bottom of the other stream */
	q = str_top(&of->f_sh->sh_sd);
	while (q != NULL && WR(q)->q_next != NULL &&
	       WR(q)->q_next->q_stream == &of->f_sh->sh_sd)
		q = RD(WR(q)->q_next);
	if (q == NULL)
		q = of->f_sh->sh_sd.sd_rq;	/* a pipe end: its head */
	return sth_putmsg_fdinsert(c->f, &c->t, &fi.ctlbuf,
				   fi.databuf.len >= 0 ? &fi.databuf : NULL,
				   fi.flags, q, fi.offset, &c->held);
}

/* ---- links ---- */

/* (deferred work waits while it is held: sthead.h's plumbing lock) */
void sth_links_lock(void)
{
	str_defer_block();
	pthread_mutex_lock(&sth_link_lock);
}

void sth_links_unlock(void)
{
	pthread_mutex_unlock(&sth_link_lock);
	str_defer_unblock();
}

/* A link of mux with muxid: a persistent one on the global list, or one
 * below upper.  Link lock held. */
static struct sth_link *find_link(struct sthead *upper, struct cdevsw *mux,
				  int muxid, bool persist)
{
	struct sth_link *l = persist ? sth_plinks : upper->sh_links;

	for (; l != NULL; l = l->l_next)
		if (l->l_muxid == muxid && (!persist || l->l_mux == mux))
			return l;
	return NULL;
}

/* Every link, for the loop check by driver (link lock). */
static struct sth_link *sth_alllinks;

/*
 * Would a link of a stream of driver lower below one of driver upper
 * make a loop in the graph of multiplexing drivers (SVR4's check: a
 * driver may route between its own streams, so two of its opens linked
 * one below the other can loop)?  True if lower is upper or reaches it
 * through existing links: a walk over drivers, each looked at once
 * (more drivers below than it can note: refused as a loop).  Link lock
 * held.
 */
static bool driver_reaches(struct cdevsw *lower, struct cdevsw *upper)
{
	struct cdevsw *seen[128];
	int n = 0, next = 0;

	if (lower == NULL)
		return false;		/* a pipe end: no driver below */
	seen[n++] = lower;
	while (next < n) {
		struct cdevsw *d = seen[next++];

		if (d == upper)
			return true;
		for (struct sth_link *l = sth_alllinks; l != NULL;
		     l = l->l_allnext) {
			struct cdevsw *below = l->l_lower->sh_sd.sd_cdev;
			int k = 0;

			if (l->l_mux != d || below == NULL)
				continue;
			while (k < n && seen[k] != below)
				k++;
			if (k < n)
				continue;
			if (n == (int)(sizeof(seen) / sizeof(seen[0])))
				return true;
			seen[n++] = below;
		}
	}
	return false;
}

/* Is target somewhere below sh (through links)?  Link lock held. */
static bool below(struct sthead *sh, struct sthead *target, int depth)
{
	if (sh == target)
		return true;
	if (depth > 64)
		return true;	/* absurdly deep: refuse as a loop */
	for (struct sth_link *l = sh->sh_links; l; l = l->l_next)
		if (below(l->l_lower, target, depth + 1))
			return true;
	for (struct sth_link *l = sth_plinks; l; l = l->l_next)
		if (l->l_upper == sh && below(l->l_lower, target, depth + 1))
			return true;
	return false;
}

/* The bottom write queue of sh (its driver's). */
static queue_t *driver_wq(struct sthead *sh)
{
	queue_t *q = sh->sh_sd.sd_wq;

	while (q->q_next != NULL && q->q_next->q_stream == &sh->sh_sd &&
	       !q_isread(q->q_next))
		q = q->q_next;
	return q;
}

static void set_lower_procs(struct sthead *lsh, struct cdevsw *mux, bool on)
{
	queue_t *rq = lsh->sh_sd.sd_rq;
	struct streamtab *st = mux->d_str;

	/* A put that read the old procedures may still run after the
	 * switch, until the grace period below.  The multiplexer's own
	 * see q_ptr as the multiplexer sets it (NULL before its I_LINK,
	 * what its I_UNLINK left), never the head's; the head's do not
	 * look at q_ptr (they take the stream from q_stream). */
	if (on) {
		__atomic_store_n(&rq->q_ptr, NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&WR(rq)->q_ptr, NULL, __ATOMIC_RELAXED);
		str_setq(rq, st->st_muxrinit, st->st_muxwinit);
		q_pair(rq)->qp_kind = QP_MUX;
		q_pair(rq)->qp_mod = mux;
	} else {
		str_setq(rq, &sth_rinit, &sth_winit);
		q_pair(rq)->qp_kind = QP_HEAD;
		q_pair(rq)->qp_mod = NULL;
	}
	/* puts that read the old procedures are over after this */
	str_synchronize();
	if (!on) {
		__atomic_store_n(&rq->q_ptr, lsh, __ATOMIC_RELAXED);
		__atomic_store_n(&WR(rq)->q_ptr, lsh, __ATOMIC_RELAXED);
		/* a back-enable meant for the multiplexer's service
		 * procedure is not the head's to tell (S_OUTPUT) */
		bool b0, band;

		sth_back_take(WR(rq), &b0, &band);
	}
}

/* Send I_LINK/I_UNLINK (cmd) for l down via and wait for the driver's
 * answer.  Outside any entry; with via's ioctl slot if slot (else it is
 * taken here, waiting at most 15 s); quiet: for a last close (struct
 * ictx). */
static int link_ioctl(struct sthead *via, struct sth_link *l, int cmd,
		      bool slot, bool quiet)
{
	struct sth_file fake = { .f_sh = via, .f_refs = 1 };
	struct ictx c = { &fake, via, NULL, true, NULL, 0, NULL, quiet };
	struct linkblk *lb;
	mblk_t *mp, *d, *ack;
	cred_t cr;
	int err;

	str_getcred(&cr);
	c.t = str_enter();
	mp = new_ioctl(cmd, sizeof(*lb), &cr);
	d = allocb(sizeof(*lb), BPRI_MED);
	if (mp == NULL || d == NULL) {
		if (mp)
			freemsg(mp);
		if (d)
			freemsg(d);
		str_exit(c.t);
		return EAGAIN;
	}
	lb = (struct linkblk *)d->b_wptr;
	lb->l_qtop = driver_wq(via);
	lb->l_qbot = l->l_lower->sh_sd.sd_wq;
	lb->l_index = l->l_muxid;
	d->b_wptr += sizeof(*lb);
	mp->b_cont = d;
	if (!slot && (err = ioc_begin(&c, slot_deadline(-1))) != 0) {
		freemsg(mp);
		str_exit(c.t);
		return err;
	}
	err = do_ioctl(&c, mp, STRTIMOUT, &ack);
	if (!slot)
		ioc_end(via);
	if (err == 0)
		freemsg(ack);
	str_exit(c.t);
	return err;
}

static int ioc_link(struct ictx *c, int lfd, bool persist, int *rvalp)
{
	struct sthead *sh = c->sh, *lsh;
	struct sth_file *lf;
	struct cdevsw *mux = sh->sh_sd.sd_cdev;
	struct sth_link *l;
	int err;

	lf = sth_lookup(lfd);
	if (lf == NULL)
		return sth_real.fcntl(lfd, F_GETFD) < 0 ? EBADF : EINVAL;
	if ((err = ioc_state(sh)) != 0)
		return err;
	if (mux == NULL || mux->d_str->st_muxrinit == NULL)
		return EINVAL;		/* not a multiplexer */
	lsh = lf->f_sh;
	if (lsh == sh)
		return EINVAL;
	/* held while we are inside the entry that found it: the wait for
	 * the slot below may leave it, and a close of the lower stream's
	 * last descriptor meanwhile would free it */
	sth_hold(lsh);
	/* this stream's ioctl slot first: a wait for it is not made
	 * holding the link lock every link change needs */
	if ((err = ioc_begin(c, slot_deadline(-1))) != 0) {
		sth_rele(lsh);
		return err;
	}
	str_exit(c->t);
	c->t = NULL;
	sth_links_lock();
	/* the lower stream's plumbing lock while it becomes linked: a push
	 * or pop of it (which looks for STPLEX under that lock) is either
	 * done before or refused after */
	sth_plumb_lock(lsh);
	/* (an ioctl in progress on the lower stream: refused, as SVR4) */
	if ((sh_flags(lsh) & (STPLEX | STRCLOSED)) || below(lsh, sh, 0) ||
	    driver_reaches(lsh->sh_sd.sd_cdev, mux) ||
	    __atomic_load_n(&lsh->sh_iocbusy, __ATOMIC_SEQ_CST)) {
		sth_plumb_unlock(lsh);
		err = EINVAL;
		goto fail;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		sth_plumb_unlock(lsh);
		err = EAGAIN;
		goto fail;
	}
	l->l_muxid = sth_next_muxid++;
	if (sth_next_muxid <= 0)
		sth_next_muxid = 1;
	l->l_lower = lsh;		/* keeps the hold taken above */
	l->l_upper = sh;
	l->l_mux = mux;
	l->l_persist = persist;
	__atomic_or_fetch(&lsh->sh_flag, STPLEX, __ATOMIC_SEQ_CST);
	sth_wake_readers(lsh);
	sth_wake(&lsh->sh_wseq, &lsh->sh_wwaiters);
	sth_wake(&lsh->sh_iseq, &lsh->sh_iwaiters);	/* an ioctl begun */
	/* what a reader of the lower stream had taken into its cache goes
	 * back on the queue the multiplexer now serves (still counted) */
	c->t = str_enter();
	read_side_begin(lsh);
	read_side_end(lsh);
	str_exit(c->t);
	c->t = NULL;
	set_lower_procs(lsh, mux, true);
	sth_plumb_unlock(lsh);
	err = link_ioctl(sh, l, persist ? I_PLINK : I_LINK, true, false);
	if (err != 0) {
		set_lower_procs(lsh, mux, false);
		__atomic_and_fetch(&lsh->sh_flag, ~STPLEX, __ATOMIC_ACQ_REL);
		free(l);
		goto fail;
	}
	lsh->sh_linkedby = l;
	l->l_allnext = sth_alllinks;
	sth_alllinks = l;
	if (persist) {
		sth_hold(sh);		/* its memory outlives its close */
		l->l_next = sth_plinks;
		sth_plinks = l;
	} else {
		l->l_next = sh->sh_links;
		sh->sh_links = l;
	}
	*rvalp = l->l_muxid;
	sth_hold(lsh);			/* (an unlink may come now) */
	sth_links_unlock();
	ioc_end(sh);
	c->t = str_enter();
	/* what the lower stream's head had queued is the multiplexer's
	 * now: its lower read service procedure takes it on */
	if (__atomic_load_n(&lsh->sh_sd.sd_rq->q_first, __ATOMIC_ACQUIRE))
		qenable(lsh->sh_sd.sd_rq);
	sth_changed(lsh);		/* poll and epoll: POLLNVAL now */
	sth_rele(lsh);
	return 0;
fail:
	sth_links_unlock();
	ioc_end(sh);
	sth_rele(lsh);
	c->t = str_enter();
	return err;
}

static void close_unopened(struct sthead *lsh);

/*
 * Undo link l, telling the driver through via (the stream asking, whose
 * ioctl slot the caller holds, or the closing controlling stream).  If
 * the driver refuses and the controlling stream is not going away, the
 * link stays.  Link lock held, outside any entry.
 */
static int unlink_one(struct sth_link *l, struct sthead *via, bool closing)
{
	struct sthead *lsh = l->l_lower, *upper = l->l_upper;
	struct sth_link **pp;
	int err;

	err = link_ioctl(via, l, l->l_persist ? I_PUNLINK : I_UNLINK, !closing,
			 closing);
	if (err != 0 && !closing)
		return err;
	for (pp = l->l_persist ? &sth_plinks : &upper->sh_links; *pp != NULL;
	     pp = &(*pp)->l_next) {
		if (*pp == l) {
			*pp = l->l_next;
			break;
		}
	}
	for (pp = &sth_alllinks; *pp != NULL; pp = &(*pp)->l_allnext)
		if (*pp == l) {
			*pp = l->l_allnext;
			break;
		}
	set_lower_procs(lsh, l->l_mux, false);
	{
		/* (inside an entry: the flushes, and the mirror's sync,
		 * which looks at the queues below the head that a pop on
		 * another thread frees) */
		struct strthread *t = str_enter();
		/* (as an M_FLUSH at its head: a high priority message it
		 * held before the link is no longer awaited) */
		sth_rflush(lsh, -1);
		flushq(lsh->sh_sd.sd_wq, FLUSHALL);
		lsh->sh_linkedby = NULL;
		__atomic_and_fetch(&lsh->sh_flag, ~STPLEX, __ATOMIC_ACQ_REL);
		sth_changed(lsh);	/* flushed, usable again */
		str_exit(t);
	}
	if (l->l_persist)
		sth_rele(upper);
	close_unopened(lsh);
	sth_rele(lsh);
	free(l);
	return 0;
}

/* A stream no descriptor names any more, just unlinked: close it now.
 * Link lock held. */
static void close_unopened(struct sthead *lsh)
{
	cred_t cr;

	bool closed = false;

	sth_plumb_lock(lsh);
	if (lsh->sh_opens == 0 && !(sh_flags(lsh) & STRCLOSED)) {
		/* as its last close would have (sth_close_open): what is
		 * linked below it first, while it can still ask its driver */
		str_getcred(&cr);
		sth_unlink_all_locked(lsh);
		sth_close_locked(lsh, 0, &cr);
		closed = true;
	}
	sth_plumb_unlock(lsh);
	if (closed)
		sth_close_wake(lsh);
}

static int ioc_unlink(struct ictx *c, int muxid, bool persist)
{
	struct sthead *sh = c->sh;
	struct cdevsw *mux = sh->sh_sd.sd_cdev;
	int err = 0;

	if (muxid < 0 && muxid != MUXID_ALL)
		return EINVAL;
	if ((err = ioc_begin(c, slot_deadline(-1))) != 0)
		return err;
	str_exit(c->t);
	c->t = NULL;
	sth_links_lock();
	if (muxid == MUXID_ALL) {
		struct sth_link *l, *next;
		if (!persist) {
			while (err == 0 && (l = sh->sh_links) != NULL)
				err = unlink_one(l, sh, false);
		} else {
			for (l = sth_plinks; l != NULL && err == 0; l = next) {
				next = l->l_next;
				if (l->l_mux == mux)
					err = unlink_one(l, sh, false);
			}
		}
	} else {
		struct sth_link *l = find_link(sh, mux, muxid, persist);
		err = l != NULL ? unlink_one(l, sh, false) : EINVAL;
	}
	sth_links_unlock();
	ioc_end(sh);
	c->t = str_enter();
	return err;
}

/* The last close of sh: unlink everything linked below it (persistent
 * links stay).  Link lock held. */
void sth_unlink_all_locked(struct sthead *sh)
{
	while (sh->sh_links != NULL)
		unlink_one(sh->sh_links, sh, true);
}

/* ---- the switch ---- */

static int int_arg(void *arg)
{
	return (int)(intptr_t)arg;
}

int sth_ioctl(int fd, unsigned long cmd, void *arg, bool *handled)
{
	struct ictx c = { NULL, NULL, NULL, false };
	struct sth_file *f;
	struct sthead *sh;
	int err = 0, rval = 0, v;

	c.t = str_enter();
	if ((f = sth_lookup(fd)) == NULL) {
		str_exit(c.t);
		*handled = false;
		return -1;
	}
	*handled = true;
	c.f = f;
	c.sh = sh = f->f_sh;
	if ((sh_flags(sh) & STPLEX) && cmd != I_UNLINK && cmd != I_PUNLINK) {
		err = EINVAL;
		goto out;
	}
	switch (cmd) {
	case I_PUSH:
	case I_POP:
	case I_LOOK:
	case I_FIND:
	case I_LIST:
	case I_ANCHOR:
	case I_LINK:
	case I_PLINK:
	case I_UNLINK:
	case I_PUNLINK:
		/* these leave the entry to wait for the plumbing or link
		 * lock: the file is held, so that a close of its last
		 * descriptor meanwhile closes the stream only after them,
		 * as a kernel's ioctl keeps its file -- unless that close
		 * has dropped the last reference already */
		if ((err = ioc_hold(&c)) != 0)
			goto out;
		break;
	default:
		break;
	}
	switch (cmd) {
	case I_PUSH:
		err = ioc_push(&c, arg);
		break;
	case I_POP:
		err = ioc_pop(&c);
		break;
	case I_LOOK:
	case I_FIND:
	case I_LIST:
		/* the stack as no push or pop leaves it half-made */
		str_exit(c.t);
		sth_plumb_lock(sh);
		c.t = str_enter();
		err = cmd == I_LOOK ? ioc_look(&c, arg) :
		      cmd == I_FIND ? ioc_find(&c, arg, &rval) :
				      ioc_list(&c, arg, &rval);
		str_exit(c.t);
		sth_plumb_unlock(sh);
		c.t = str_enter();
		break;
	case I_FLUSH:
		v = int_arg(arg);
		if (v != FLUSHR && v != FLUSHW && v != FLUSHRW)
			err = EINVAL;
		else if ((err = ioc_state(sh)) == 0)
			err = send_flush(sh, v, 0, false);
		break;
	case I_FLUSHBAND: {
		struct bandinfo bi;
		if ((err = copyin(&bi, arg, sizeof(bi))) != 0)
			break;
		if (bi.bi_flag != FLUSHR && bi.bi_flag != FLUSHW &&
		    bi.bi_flag != FLUSHRW)
			err = EINVAL;
		else if ((err = ioc_state(sh)) == 0)
			err = send_flush(sh, bi.bi_flag, bi.bi_pri, true);
		break;
	}
	case I_STR:
		err = ioc_str(&c, arg, &rval);
		break;
	case I_SRDOPT: {
		v = int_arg(arg);
		int mode = v & RMODEMASK, prot = v & RPROTMASK;
		if ((v & ~(RMODEMASK | RPROTMASK)) ||
		    (prot != 0 && prot != RPROTNORM && prot != RPROTDAT &&
		     prot != RPROTDIS)) {
			err = EINVAL;
			break;
		}
		pthread_mutex_lock(&sh->sh_lock);
		if (prot == 0)	/* (none given: as it was, SVR4 and Solaris) */
			prot = __atomic_load_n(&sh->sh_rdopt,
					       __ATOMIC_RELAXED) & RPROTMASK;
		__atomic_store_n(&sh->sh_rdopt, mode | (prot ? prot : RPROTNORM),
				 __ATOMIC_RELAXED);
		pthread_mutex_unlock(&sh->sh_lock);
		break;
	}
	case I_GRDOPT:
		v = __atomic_load_n(&sh->sh_rdopt, __ATOMIC_RELAXED);
		err = copyout(arg, &v, sizeof(v));
		break;
	case I_SWROPT:
		v = int_arg(arg);
		if (v & ~(SNDZERO | SNDPIPE | SNDHOLD))
			err = EINVAL;
		else
			__atomic_store_n(&sh->sh_wropt, v, __ATOMIC_RELAXED);
		break;
	case I_GWROPT:
		v = __atomic_load_n(&sh->sh_wropt, __ATOMIC_RELAXED);
		err = copyout(arg, &v, sizeof(v));
		break;
	case I_NREAD:
		sth_pull(sh, KEV_LOOK);
		err = ioc_nread(&c, arg, &rval);
		break;
	case I_PEEK:
		sth_pull(sh, KEV_LOOK);
		err = ioc_peek(&c, arg, &rval);
		break;
	case I_CANPUT:
		v = int_arg(arg);
		if (v < -1 || v > 255) {
			err = EINVAL;
		} else if (v == -1) {	/* ANYBAND */
			rval = 0;
			for (int b = 0; b <= 255 && !rval; b++)
				rval = bcanputnext(sh->sh_sd.sd_wq, (unsigned char)b);
		} else {
			rval = bcanputnext(sh->sh_sd.sd_wq, (unsigned char)v);
		}
		break;
	case I_CKBAND: {
		queue_t *rq = sh->sh_sd.sd_rq;
		v = int_arg(arg);
		if (v < 0 || v > 255) {
			err = EINVAL;
			break;
		}
		read_side_begin(sh);
		qlock(rq);
		for (mblk_t *mp = rq->q_first; mp != NULL; mp = mp->b_next)
			if (mp->b_datap->db_type < QPCTL && mp->b_band == v)
				rval = 1;
		qunlock(rq);
		read_side_end(sh);
		break;
	}
	case I_GETBAND: {
		queue_t *rq = sh->sh_sd.sd_rq;
		read_side_begin(sh);
		qlock(rq);
		mblk_t *mp = rq->q_first;
		v = mp ? mp->b_band : -1;
		qunlock(rq);
		read_side_end(sh);
		err = v < 0 ? ENODATA : copyout(arg, &v, sizeof(v));
		break;
	}
	case I_ATMARK: {
		queue_t *rq = sh->sh_sd.sd_rq;
		v = int_arg(arg);
		/* (both together is allowed: the last mark, XSI) */
		if (v == 0 || (v & ~(ANYMARK | LASTMARK)) != 0) {
			err = EINVAL;
			break;
		}
		read_side_begin(sh);
		qlock(rq);
		mblk_t *mp = rq->q_first;
		if (mp != NULL && (mp->b_flag & MSGMARK)) {
			rval = 1;
			if (v & LASTMARK)
				for (mblk_t *n = mp->b_next; n; n = n->b_next)
					if (n->b_flag & MSGMARK)
						rval = 0;
		}
		qunlock(rq);
		read_side_end(sh);
		break;
	}
	case I_SETSIG:
		err = sth_setsig(sh, int_arg(arg));
		break;
	case I_GETSIG:
		if ((err = sth_getsig(sh, &v)) == 0)
			err = copyout(arg, &v, sizeof(v));
		break;
	case I_SETCLTIME:
		if ((err = copyin(&v, arg, sizeof(v))) == 0) {
			if (v < 0)
				err = EINVAL;
			else
				__atomic_store_n(&sh->sh_closetime,
						 (unsigned)v, __ATOMIC_RELAXED);
		}
		break;
	case I_GETCLTIME:
		v = (int)__atomic_load_n(&sh->sh_closetime, __ATOMIC_RELAXED);
		err = copyout(arg, &v, sizeof(v));
		break;
	case I_SERROPT:
		v = int_arg(arg);
		if (v & ~(RERRMASK | WERRMASK) || (v & RERRMASK) == RERRMASK ||
		    (v & WERRMASK) == WERRMASK) {
			err = EINVAL;
			break;
		}
		pthread_mutex_lock(&sh->sh_lock);
		sh->sh_erropt = (v & RERRMASK ? v & RERRMASK : RERRNORM) |
				(v & WERRMASK ? v & WERRMASK : WERRNORM);
		pthread_mutex_unlock(&sh->sh_lock);
		break;
	case I_GERROPT:
		pthread_mutex_lock(&sh->sh_lock);
		v = sh->sh_erropt;
		pthread_mutex_unlock(&sh->sh_lock);
		err = copyout(arg, &v, sizeof(v));
		break;
	case I_ANCHOR:
		/* the plumbing lock outside the entry, as above: a pop
		 * holding it waits for a grace period (was a deadlock) */
		str_exit(c.t);
		sth_plumb_lock(sh);
		if (sh->sh_sd.sd_pushcnt == 0)
			err = EINVAL;
		else
			sh->sh_sd.sd_anchor = sh->sh_sd.sd_pushcnt;
		sth_plumb_unlock(sh);
		c.t = str_enter();
		break;
	case I_SENDFD:
		err = ioc_sendfd(&c, int_arg(arg));
		break;
	case I_RECVFD:
	case I_E_RECVFD:
		err = ioc_recvfd(&c, arg);
		break;
	case I_FDINSERT:
		err = ioc_fdinsert(&c, arg);
		break;
	case I_LINK:
	case I_PLINK:
		err = ioc_link(&c, int_arg(arg), cmd == I_PLINK, &rval);
		break;
	case I_UNLINK:
	case I_PUNLINK:
		err = ioc_unlink(&c, int_arg(arg), cmd == I_PUNLINK);
		break;
	case FIONBIO:
		if ((err = copyin(&v, arg, sizeof(v))) == 0) {
			if (v)
				__atomic_or_fetch(&f->f_oflag, O_NONBLOCK,
						  __ATOMIC_ACQ_REL);
			else
				__atomic_and_fetch(&f->f_oflag, ~O_NONBLOCK,
						   __ATOMIC_ACQ_REL);
		}
		break;
	case FIOASYNC:
		if ((err = copyin(&v, arg, sizeof(v))) == 0)
			err = sth_set_async(f, fd, v != 0);
		break;
	case FIONREAD: {
		queue_t *rq = sh->sh_sd.sd_rq;
		read_side_begin(sh);
		qlock(rq);
		v = rq->q_first ? (int)msgdsize(rq->q_first) : 0;
		qunlock(rq);
		read_side_end(sh);
		err = copyout(arg, &v, sizeof(v));
		break;
	}
	default:
		err = ioc_transparent(&c, cmd, arg, &rval);
		break;
	}
out:
	if (c.t != NULL) {
		sth_changed(sh);
		str_exit(c.t);
	}
	if (c.held)
		sth_file_rele(f);
	if (c.other != NULL)
		sth_file_rele(c.other);
	return err ? sth_err(err) : rval;
}
