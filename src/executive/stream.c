/*
 * stream.c -- streams and queue pairs: allocation, open, push, pop, close.
 *
 * How it works
 * ------------
 * A queue pair is allocated with its perimeter (perim.c) and procedures
 * off (QPROCSOFF).  To insert a pair P below the pair A above it (the
 * stream head when pushing), P's own q_next pointers are set first
 * (P.wq -> what A.wq pointed to, P.rq -> A.rq), then P's open procedure
 * runs, then qprocson() swings the neighbours onto P:
 *	OTHERQ(P.rq->q_next)->q_next = P.wq	(write side, from above)
 *	OTHERQ(P.wq->q_next)->q_next = P.rq	(read side, from below)
 * OTHERQ of a neighbour works across a STREAMS pipe's crossing too.
 * qprocsoff() swings them back around P.  Removing P is then: qprocsoff,
 * take P off the run lists, wait a grace period (no thread can still be
 * inside P's procedures unless it entered P's perimeter, and close waits
 * for that), call close, flush, free.
 *
 * Plumbing (push, pop, close, link) is serialised by the stream's
 * sd_plumb mutex, held by the caller of these functions.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strsubr.h"

extern void str_qband_free(queue_t *q);

__thread struct stdata *str_frozen_tls STR_TLS_IE;

/* ---- queue pairs ---- */

/* (atomic stores: a linked stream's head queues change procedures while
 * puts from a pipe's peer or a driver may be reading them, q_info) */
static void setq_one(queue_t *q, struct qinit *qi)
{
	struct module_info *mi = qi->qi_minfo;

	__atomic_store_n(&q->q_mstat, qi->qi_mstat, __ATOMIC_RELAXED);
	__atomic_store_n(&q->q_minpsz, mi ? mi->mi_minpsz : 0,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&q->q_maxpsz, mi ? mi->mi_maxpsz : INFPSZ,
			 __ATOMIC_RELAXED);
	qlock(q);		/* (putq and getq read the marks under it) */
	q->q_hiwat = mi ? mi->mi_hiwat : 5120;
	q->q_lowat = mi ? mi->mi_lowat : 1024;
	qunlock(q);
	__atomic_store_n(&q->q_qinfo, qi, __ATOMIC_RELEASE);
}

void str_setq(queue_t *rq, struct qinit *rinit, struct qinit *winit)
{
	setq_one(rq, rinit);
	setq_one(rq + 1, winit);
}

queue_t *str_allocq(struct qinit *rinit, struct qinit *winit,
		    unsigned int flags, void *mod, int kind)
{
	struct strqpair *qp;
	struct strsyncq *sq, *dummy = NULL, **modsq = &dummy;
	bool perq;
	queue_t *rq, *wq;

	if (rinit == NULL || winit == NULL)
		return NULL;
	qp = aligned_alloc(64, (sizeof(*qp) + 63) & ~(size_t)63);
	if (qp == NULL)
		return NULL;
	memset(qp, 0, sizeof(*qp));
	rq = &qp->qp_q[0];
	wq = &qp->qp_q[1];
	/* QWANTR from the start, as SVR4's qattach: the first ordinary
	 * message queued schedules the service procedure */
	rq->q_flag = QREADR | QUSE | QPROCSOFF | QWANTR;
	wq->q_flag = QUSE | QPROCSOFF | QWANTR;
	str_setq(rq, rinit, winit);
	if (kind == QP_MOD && mod != NULL)
		modsq = &((struct fmodsw *)mod)->f_syncq;
	else if ((kind == QP_DRV || kind == QP_MUX) && mod != NULL)
		modsq = &((struct cdevsw *)mod)->d_syncq;
	if (modsq != &dummy)
		pthread_mutex_lock(&strreg_lock);
	sq = str_perim_for(flags, modsq, &perq);
	if (modsq != &dummy)
		pthread_mutex_unlock(&strreg_lock);
	if (!(flags & D_MP) && sq == NULL) {
		free(qp);
		return NULL;
	}
	if (flags & D_MP) {
		rq->q_flag |= QMTSAFE;
		wq->q_flag |= QMTSAFE;
	}
	rq->q_syncq = sq;
	if (perq) {
		wq->q_syncq = strsyncq_alloc();
		if (wq->q_syncq == NULL) {
			strsyncq_release(sq);
			free(qp);
			return NULL;
		}
		rq->q_flag |= QPERQ;
		wq->q_flag |= QPERQ;
	} else {
		wq->q_syncq = sq;
		if (sq != NULL)
			__atomic_add_fetch(&sq->sq_refs, 1, __ATOMIC_RELAXED);
	}
	if (flags & (D_MTPERMOD | D_MTOUTPERIM)) {
		rq->q_flag |= QPERMOD;
		wq->q_flag |= QPERMOD;
	}
	qp->qp_syncq = sq;
	qp->qp_kind = kind;
	qp->qp_mod = mod;
	rq->q_mod = wq->q_mod = mod;
	STRSTAT(ST_QUEUE_ALLOC);
	return rq;
}

void str_freeq(queue_t *rq)
{
	struct strqpair *qp = q_pair(rq);
	queue_t *wq = rq + 1;

	if (rq->q_syncq != NULL)
		strsyncq_release(rq->q_syncq);
	if (wq->q_syncq != NULL)
		strsyncq_release(wq->q_syncq);
	str_qband_free(rq);
	str_qband_free(wq);
	STRSTAT(ST_QUEUE_FREE);
	free(qp);
}

/* ---- procedures on and off ---- */

static void qflag_set(queue_t *q, unsigned long f, bool on)
{
	qlock(q);
	__atomic_store_n(&q->q_flag, on ? (q->q_flag | f) : (q->q_flag & ~f),
			 __ATOMIC_RELEASE);
	qunlock(q);
}

void qprocson(queue_t *q)
{
	queue_t *rq, *wq, *n;

	if (q == NULL) {
		str_bad("qprocson(NULL)", q);
		return;
	}
	rq = RD(q);
	wq = WR(q);
	if (!(rq->q_flag & QPROCSOFF))
		return;
	qflag_set(rq, QPROCSOFF, false);
	qflag_set(wq, QPROCSOFF, false);
	n = __atomic_load_n(&rq->q_next, __ATOMIC_ACQUIRE);
	if (n != NULL)
		__atomic_store_n(&OTHERQ(n)->q_next, wq, __ATOMIC_RELEASE);
	n = __atomic_load_n(&wq->q_next, __ATOMIC_ACQUIRE);
	if (n != NULL)
		__atomic_store_n(&OTHERQ(n)->q_next, rq, __ATOMIC_RELEASE);
}

void qprocsoff(queue_t *q)
{
	queue_t *rq, *wq, *above, *below;

	if (q == NULL) {
		str_bad("qprocsoff(NULL)", q);
		return;
	}
	rq = RD(q);
	wq = WR(q);
	/* the other bits change under service procedures running now */
	if (__atomic_load_n(&rq->q_flag, __ATOMIC_RELAXED) & QPROCSOFF)
		return;
	above = __atomic_load_n(&rq->q_next, __ATOMIC_ACQUIRE);
	below = __atomic_load_n(&wq->q_next, __ATOMIC_ACQUIRE);
	if (above != NULL && OTHERQ(above)->q_next == wq)
		__atomic_store_n(&OTHERQ(above)->q_next, below,
				 __ATOMIC_RELEASE);
	if (below != NULL && OTHERQ(below)->q_next == rq)
		__atomic_store_n(&OTHERQ(below)->q_next, above,
				 __ATOMIC_RELEASE);
	qflag_set(rq, QPROCSOFF, true);
	qflag_set(wq, QPROCSOFF, true);
}

/* ---- open and close procedures ---- */

static int call_open(queue_t *rq, dev_t *devp, int oflag, int sflag,
		     cred_t *cr)
{
	struct strsyncq *sq = rq->q_syncq;
	struct strthread *t;
	int err;

	if (sq != NULL)
		strperim_enter_wait(sq);
	t = str_enter();
	err = rq->q_qinfo->qi_qopen(rq, devp, oflag, sflag, cr);
	if (rq->q_mstat != NULL)
		__atomic_add_fetch(&rq->q_mstat->ms_ocnt, 1, __ATOMIC_RELAXED);
	if (sq != NULL)
		strperim_exit(sq);	/* what it runs, inside the entry */
	str_exit(t);
	return err;
}

static void call_close(queue_t *rq, int oflag, cred_t *cr)
{
	struct strsyncq *sq = rq->q_syncq;
	struct strthread *t;

	if (rq->q_qinfo->qi_qclose == NULL)
		return;
	if (sq != NULL)
		strperim_enter_wait(sq);
	t = str_enter();
	rq->q_qinfo->qi_qclose(rq, oflag, cr);
	if (rq->q_mstat != NULL)
		__atomic_add_fetch(&rq->q_mstat->ms_ccnt, 1, __ATOMIC_RELAXED);
	if (sq != NULL)
		strperim_exit(sq);	/* what it runs, inside the entry */
	str_exit(t);
}

static void rele_owner(queue_t *rq)
{
	struct strqpair *qp = q_pair(rq);

	if (qp->qp_kind == QP_MOD && qp->qp_mod != NULL)
		strreg_rele_mod(qp->qp_mod);
	else if ((qp->qp_kind == QP_DRV) && qp->qp_mod != NULL)
		strreg_rele_dev(qp->qp_mod);
}

/* A pair whose procedures are off, off the run lists (and its callouts
 * cancelled with callouts), then a grace period when outside any entry.
 * Done twice to settle a dying pair: a thread inside during the first
 * grace period may have moved it to the global run list (sched.c). */
static void settle_pair(queue_t *rq, bool callouts)
{
	strsched_unschedule(rq);
	strsched_unschedule(rq + 1);
	if (callouts)
		strcallout_cancel_queue(rq);
	if (!str_inside())
		str_synchronize();
}

/*
 * Close and free a pair that is linked in a stream: procedures off, off
 * the run lists, grace period, close, flush, free.
 */
void str_qdetach(queue_t *rq, int oflag, cred_t *cr)
{
	queue_t *wq = rq + 1;

	STR_ASSERT(!str_inside(), "queue pair closed inside an entry", rq);
	qprocsoff(rq);
	settle_pair(rq, false);
	call_close(rq, oflag, cr);
	/* close may have enabled or scheduled: settle once more */
	settle_pair(rq, true);
	{
		struct strthread *t = str_enter();
		flushq(rq, FLUSHALL);
		flushq(wq, FLUSHALL);
		str_exit(t);
	}
	rele_owner(rq);
	str_freeq(rq);
}

/* ---- streams ---- */

pthread_mutex_t str_all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stdata *str_all;		/* str_all_lock */

struct stdata *str_stream_alloc(struct qinit *rinit, struct qinit *winit)
{
	return str_stream_alloc_size(rinit, winit, sizeof(struct stdata));
}

struct stdata *str_stream_alloc_size(struct qinit *rinit, struct qinit *winit,
				     size_t size)
{
	struct stdata *sd;
	queue_t *rq;

	if (!str_initialised)
		str_init();
	if (size < sizeof(*sd))
		return NULL;
	/* cache-line aligned: the head lays its fields out by line */
	size = (size + 63) & ~(size_t)63;
	sd = aligned_alloc(64, size);
	if (sd == NULL)
		return NULL;
	memset(sd, 0, size);
	rq = str_allocq(rinit, winit, D_MP, NULL, QP_HEAD);
	if (rq == NULL) {
		free(sd);
		return NULL;
	}
	pthread_mutex_init(&sd->sd_plumb, NULL);
	sd->sd_rq = rq;
	sd->sd_wq = rq + 1;
	rq->q_stream = sd;
	(rq + 1)->q_stream = sd;
	rq->q_flag |= QHEAD;
	(rq + 1)->q_flag |= QHEAD;
	/* the head has nobody above: its procedures are on from the start */
	rq->q_flag &= ~QPROCSOFF;
	(rq + 1)->q_flag &= ~QPROCSOFF;
	sd->sd_refs = 1;
	pthread_mutex_lock(&str_all_lock);
	sd->sd_all_next = str_all;
	if (str_all != NULL)
		str_all->sd_all_prev = sd;
	str_all = sd;
	pthread_mutex_unlock(&str_all_lock);
	STRSTAT(ST_STREAM_ALLOC);
	return sd;
}

void str_stream_hold(struct stdata *sd)
{
	__atomic_add_fetch(&sd->sd_refs, 1, __ATOMIC_RELAXED);
}

void str_stream_rele(struct stdata *sd)
{
	if (__atomic_sub_fetch(&sd->sd_refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_lock(&str_all_lock);
	if (sd->sd_all_prev != NULL)
		sd->sd_all_prev->sd_all_next = sd->sd_all_next;
	else
		str_all = sd->sd_all_next;
	if (sd->sd_all_next != NULL)
		sd->sd_all_next->sd_all_prev = sd->sd_all_prev;
	pthread_mutex_unlock(&str_all_lock);
	if (sd->sd_head_free != NULL)
		sd->sd_head_free(sd);
	{
		struct strthread *t = str_enter();
		flushq(sd->sd_rq, FLUSHALL);
		flushq(sd->sd_wq, FLUSHALL);
		str_exit(t);
	}
	strsched_unschedule(sd->sd_rq);
	strsched_unschedule(sd->sd_wq);
	strcallout_cancel_queue(sd->sd_rq);
	STR_ASSERT(!str_inside(), "stream freed inside an entry", sd);
	str_synchronize();
	str_freeq(sd->sd_rq);
	pthread_mutex_destroy(&sd->sd_plumb);
	free(sd);
	STRSTAT(ST_STREAM_FREE);
}

/* Every stream, in a child just after fork() (its only thread: no lock). */
void str_fork_each_stream(void (*fn)(struct stdata *))
{
	for (struct stdata *sd = str_all; sd != NULL; sd = sd->sd_all_next)
		fn(sd);
}

/* Streams still open, for shutdown: calls fn on each with a hold. */
void str_foreach_stream(void (*fn)(struct stdata *))
{
	for (;;) {
		struct stdata *sd;

		pthread_mutex_lock(&str_all_lock);
		for (sd = str_all; sd != NULL; sd = sd->sd_all_next)
			if (!(sd->sd_eflag & SDE_CLOSING))
				break;
		if (sd != NULL) {
			sd->sd_eflag |= SDE_CLOSING;
			str_stream_hold(sd);
		}
		pthread_mutex_unlock(&str_all_lock);
		if (sd == NULL)
			return;
		fn(sd);
		str_stream_rele(sd);
	}
}

queue_t *str_top(struct stdata *sd)
{
	queue_t *n = __atomic_load_n(&sd->sd_wq->q_next, __ATOMIC_ACQUIRE);

	if (n == NULL || n->q_stream != sd)
		return NULL;
	return RD(n);
}

/* A queue pair for driver cdev in sd, its read queue leading to up_rq
 * and its write queue ending the stream (held: 0, or ENXIO, ENOMEM). */
static int drv_pair_new(struct stdata *sd, struct cdevsw *cdev,
			queue_t *up_rq, queue_t **rqp)
{
	queue_t *rq;

	if (cdev == NULL || strreg_hold_dev(cdev) != 0)
		return ENXIO;
	rq = str_allocq(cdev->d_str->st_rdinit, cdev->d_str->st_wrinit,
			cdev->d_flag, cdev, QP_DRV);
	if (rq == NULL) {
		strreg_rele_dev(cdev);
		return ENOMEM;
	}
	rq->q_stream = sd;
	(rq + 1)->q_stream = sd;
	(rq + 1)->q_next = NULL;
	rq->q_next = up_rq;
	*rqp = rq;
	return 0;
}

/* An open procedure (a driver's or a module's) failed: what it left
 * goes before its pair is freed -- its procedures, if it turned them on
 * (qprocson), unhooked; its service procedures off the run lists and
 * its callouts cancelled, each followed by a grace period, so that no
 * thread or callout that entered it is still in it (as str_qdetach);
 * what it queued flushed. */
static void open_failed(queue_t *rq)
{
	qprocsoff(rq);
	settle_pair(rq, false);
	settle_pair(rq, true);
	flushq(rq, FLUSHALL);
	flushq(rq + 1, FLUSHALL);
}

/* The driver's open failed: its pair goes, with what it left. */
static void drv_pair_undo(queue_t *rq, struct cdevsw *cdev)
{
	open_failed(rq);
	strreg_rele_dev(cdev);
	str_freeq(rq);
}

/* The driver's open succeeded. */
static void drv_pair_opened(queue_t *rq)
{
	q_pair(rq)->qp_q[0].q_sflag |= QS_OPENED;
	qprocson(rq);	/* no-op if the driver's open did it */
}

int str_open_driver(struct stdata *sd, struct cdevsw *cdev, dev_t *devp,
		    int oflag, int sflag, cred_t *cr)
{
	queue_t *rq;
	int err;

	/* below the head: P.wq -> nothing (a driver ends the stream),
	 * P.rq -> head rq */
	if ((err = drv_pair_new(sd, cdev, sd->sd_rq, &rq)) != 0)
		return err;
	sd->sd_cdev = cdev;
	err = call_open(rq, devp, oflag, sflag, cr);
	if (err != 0) {
		drv_pair_undo(rq, cdev);
		sd->sd_cdev = NULL;
		return err;
	}
	sd->sd_dev = *devp;
	drv_pair_opened(rq);
	return 0;
}

/*
 * Put driver cdev at the bottom of sd, below its modules: lowest_wq (the
 * stream's lowest write queue) will lead into the driver's write queue,
 * and the driver's read queue leads to up_rq.  The pair's q_ptr is priv
 * before its open procedure runs (a reopen for the driver), and
 * lowest_wq->q_next changes only after the open succeeded.  Used when a
 * STREAMS pipe starts crossing processes.  sd_plumb held.
 */
int str_attach_driver(struct stdata *sd, struct cdevsw *cdev, void *priv,
		      queue_t *lowest_wq, queue_t *up_rq, cred_t *cr)
{
	dev_t dev = 0;
	queue_t *rq;
	int err;

	if ((err = drv_pair_new(sd, cdev, up_rq, &rq)) != 0)
		return err;
	rq->q_ptr = (rq + 1)->q_ptr = priv;
	dev = makedevice(cdev->d_major, 0);
	err = call_open(rq, &dev, O_RDWR, DRVOPEN, cr);
	if (err != 0) {
		drv_pair_undo(rq, cdev);
		return err;
	}
	drv_pair_opened(rq);
	sd->sd_cdev = cdev;
	__atomic_store_n(&lowest_wq->q_next, rq + 1, __ATOMIC_RELEASE);
	return 0;
}

int str_push(struct stdata *sd, struct fmodsw *f, dev_t *devp, int oflag,
	     cred_t *cr)
{
	queue_t *rq, *below;
	int err;

	if (f == NULL || strreg_hold_mod(f) != 0)
		return EINVAL;
	rq = str_allocq(f->f_str->st_rdinit, f->f_str->st_wrinit, f->f_flag,
			f, QP_MOD);
	if (rq == NULL) {
		strreg_rele_mod(f);
		return ENOMEM;
	}
	rq->q_stream = sd;
	(rq + 1)->q_stream = sd;
	below = __atomic_load_n(&sd->sd_wq->q_next, __ATOMIC_ACQUIRE);
	(rq + 1)->q_next = below;
	rq->q_next = sd->sd_rq;
	err = call_open(rq, devp, oflag, MODOPEN, cr);
	if (err != 0) {
		open_failed(rq);
		strreg_rele_mod(f);
		str_freeq(rq);
		return err;
	}
	rq->q_sflag |= QS_OPENED;
	qprocson(rq);
	sd->sd_pushcnt++;
	return 0;
}

int str_pop(struct stdata *sd, int oflag, cred_t *cr)
{
	queue_t *top = str_top(sd);

	if (top == NULL || q_pair(top)->qp_kind != QP_MOD)
		return EINVAL;
	/* below the anchor only a privileged process pops (Solaris) */
	if (sd->sd_anchor > 0 && sd->sd_pushcnt <= sd->sd_anchor &&
	    drv_priv(cr) != 0)
		return EPERM;
	str_qdetach(top, oflag, cr);
	sd->sd_pushcnt--;
	if (sd->sd_pushcnt < sd->sd_anchor)
		sd->sd_anchor = 0;	/* popped through it: gone */
	return 0;
}

void str_close_all(struct stdata *sd, int oflag, cred_t *cr)
{
	queue_t *top;

	while ((top = str_top(sd)) != NULL) {
		if (q_pair(top)->qp_kind == QP_MOD)
			sd->sd_pushcnt--;
		else
			sd->sd_cdev = NULL;
		str_qdetach(top, oflag, cr);
	}
	sd->sd_anchor = 0;
}

/* ---- freezestr ---- */

static queue_t *next_pair_down(struct stdata *sd, queue_t *wq)
{
	queue_t *n = __atomic_load_n(&wq->q_next, __ATOMIC_ACQUIRE);

	if (n == NULL || n->q_stream != sd || q_isread(n))
		return NULL;
	return n;
}

void freezestr(queue_t *q)
{
	struct stdata *sd;
	queue_t *wq;

	if (q == NULL) {
		str_bad("freezestr(NULL)", q);
		return;
	}
	sd = q->q_stream;
	if (sd == NULL) {
		strlock(&RD(q)->q_lock);
		strlock(&WR(q)->q_lock);
		return;
	}
	STR_ASSERT(str_frozen_tls == NULL, "freezestr: already frozen", q);
	for (wq = sd->sd_wq; wq != NULL; wq = next_pair_down(sd, wq)) {
		strlock(&RD(wq)->q_lock);
		strlock(&wq->q_lock);
	}
	__atomic_store_n(&sd->sd_frozen, 1, __ATOMIC_RELEASE);
	str_frozen_tls = sd;
}

void unfreezestr(queue_t *q)
{
	struct stdata *sd;
	queue_t *wq;

	if (q == NULL) {
		str_bad("unfreezestr(NULL)", q);
		return;
	}
	sd = q->q_stream;
	if (sd == NULL) {
		strunlock(&WR(q)->q_lock);
		strunlock(&RD(q)->q_lock);
		return;
	}
	STR_ASSERT(str_frozen_tls == sd, "unfreezestr: not frozen here", q);
	str_frozen_tls = NULL;
	__atomic_store_n(&sd->sd_frozen, 0, __ATOMIC_RELEASE);
	for (wq = sd->sd_wq; wq != NULL; wq = next_pair_down(sd, wq)) {
		strunlock(&wq->q_lock);
		strunlock(&RD(wq)->q_lock);
	}
}

int qcountstrm(queue_t *q)
{
	long n = 0;

	for (; q != NULL; q = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE)) {
		/* (under the queue's lock: a putq of a higher band moves
		 * the band array) */
		qlock(q);
		n += (long)q->q_count;
		for (int b = 0; b < q->q_nband; b++)
			n += (long)q->q_bandp[b].qb_count;
		qunlock(q);
		if (n > 1000000000L)
			break;
	}
	return (int)n;
}
