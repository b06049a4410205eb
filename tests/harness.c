/*
 * harness.c -- test drivers, modules and a minimal stream head for the
 * executive tests (see harness.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ---- minimal head ---- */

static int head_rput(queue_t *q, mblk_t *mp)
{
	putq(q, mp);
	return 0;
}

static int head_wput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info head_minfo = { 0, "thead", 0, INFPSZ, 1 << 20, 1 << 18 };
static struct qinit head_rinit = { head_rput, NULL, NULL, NULL, NULL, &head_minfo, NULL };
static struct qinit head_winit = { head_wput, NULL, NULL, NULL, NULL, &head_minfo, NULL };

/* ---- drivers ---- */

struct sinkpriv {
	_Atomic long count;
};

static int drv_open(queue_t *q, dev_t *devp, int oflag, int sflag, cred_t *cr)
{
	struct sinkpriv *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return ENOMEM;
	q->q_ptr = p;
	WR(q)->q_ptr = p;
	return 0;
}

static int drv_close(queue_t *q, int oflag, cred_t *cr)
{
	free(q->q_ptr);
	q->q_ptr = NULL;
	WR(q)->q_ptr = NULL;
	return 0;
}

static int sink_wput(queue_t *q, mblk_t *mp)
{
	struct sinkpriv *p = q->q_ptr;
	if (mp->b_datap->db_type == M_FLUSH) {
		if (*mp->b_rptr & FLUSHR) {
			*mp->b_rptr &= ~FLUSHW;
			qreply(q, mp);
			return 0;
		}
	}
	atomic_fetch_add(&p->count, 1);
	freemsg(mp);
	return 0;
}

static int echo_wput(queue_t *q, mblk_t *mp)
{
	qreply(q, mp);
	return 0;
}

static int rput_pass(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

/* tsinkq: write side queues; service is a no-op (tests drain it). */
static int sinkq_wput(queue_t *q, mblk_t *mp)
{
	putq(q, mp);
	return 0;
}

static int sinkq_wsrv(queue_t *q)
{
	return 0;
}

static struct module_info drv_minfo = { 0, "tdrv", 0, INFPSZ, 5120, 1024 };
static struct qinit sink_rinit = { rput_pass, NULL, drv_open, drv_close, NULL, &drv_minfo, NULL };
static struct qinit sink_winit = { sink_wput, NULL, NULL, NULL, NULL, &drv_minfo, NULL };
static struct streamtab sink_tab = { &sink_rinit, &sink_winit, NULL, NULL };
static struct qinit echo_winit = { echo_wput, NULL, NULL, NULL, NULL, &drv_minfo, NULL };
static struct streamtab echo_tab = { &sink_rinit, &echo_winit, NULL, NULL };
static struct qinit sinkq_winit = { sinkq_wput, sinkq_wsrv, NULL, NULL, NULL, &drv_minfo, NULL };
static struct streamtab sinkq_tab = { &sink_rinit, &sinkq_winit, NULL, NULL };

struct cdevsw th_tsink = { .d_name = "tsink", .d_str = &sink_tab, .d_flag = D_MP };
struct cdevsw th_techo = { .d_name = "techo", .d_str = &echo_tab, .d_flag = D_MP };
struct cdevsw th_tsinkq = { .d_name = "tsinkq", .d_str = &sinkq_tab, .d_flag = D_MP };

/* ---- modules ---- */

static int mod_open(queue_t *q, dev_t *devp, int oflag, int sflag, cred_t *cr)
{
	return sflag == MODOPEN ? 0 : ENXIO;
}

static int mod_close(queue_t *q, int oflag, cred_t *cr)
{
	return 0;
}

static int pass_put(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static int passq_put(queue_t *q, mblk_t *mp)
{
	if (mp->b_datap->db_type >= QPCTL || (q->q_first == NULL && canputnext(q)))
		putnext(q, mp);
	else
		putq(q, mp);
	return 0;
}

static int passq_srv(queue_t *q)
{
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		if (mp->b_datap->db_type < QPCTL && !bcanputnext(q, mp->b_band)) {
			putbq(q, mp);
			break;
		}
		putnext(q, mp);
	}
	return 0;
}

static struct module_info mod_minfo = { 0, "tmod", 0, INFPSZ, 5120, 1024 };
static struct qinit pass_rinit = { pass_put, NULL, mod_open, mod_close, NULL, &mod_minfo, NULL };
static struct qinit pass_winit = { pass_put, NULL, NULL, NULL, NULL, &mod_minfo, NULL };
static struct streamtab pass_tab = { &pass_rinit, &pass_winit, NULL, NULL };
static struct qinit passq_rinit = { passq_put, passq_srv, mod_open, mod_close, NULL, &mod_minfo, NULL };
static struct qinit passq_winit = { passq_put, passq_srv, NULL, NULL, NULL, &mod_minfo, NULL };
static struct streamtab passq_tab = { &passq_rinit, &passq_winit, NULL, NULL };

struct fmodsw th_tpass = { .f_name = "tpass", .f_str = &pass_tab, .f_flag = D_MP };
struct fmodsw th_tpassq = { .f_name = "tpassq", .f_str = &passq_tab, .f_flag = D_MP };
struct fmodsw th_tpassp = { .f_name = "tpassp", .f_str = &pass_tab, .f_flag = 0 };
struct fmodsw th_tpassm = { .f_name = "tpassm", .f_str = &pass_tab, .f_flag = D_MTPERMOD };
struct fmodsw th_tpassr = { .f_name = "tpassr", .f_str = &pass_tab, .f_flag = D_MTPERQ };

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static void reg_all(void)
{
	if (register_strdev(&th_tsink, 0) <= 0 || register_strdev(&th_techo, 0) <= 0 ||
	    register_strdev(&th_tsinkq, 0) <= 0 ||
	    register_strmod(&th_tpass) || register_strmod(&th_tpassq) ||
	    register_strmod(&th_tpassp) || register_strmod(&th_tpassm) ||
	    register_strmod(&th_tpassr)) {
		fprintf(stderr, "harness: registration failed\n");
		exit(1);
	}
}

void th_register(void)
{
	pthread_once(&reg_once, reg_all);
}

struct stdata *th_stream(const char *drv, ...)
{
	struct stdata *sd;
	struct cdevsw *d;
	cred_t cr;
	dev_t dev;
	va_list ap;
	const char *m;

	th_register();
	str_getcred(&cr);
	d = cdev_find(drv);
	if (d == NULL)
		return NULL;
	sd = str_stream_alloc(&head_rinit, &head_winit);
	if (sd == NULL)
		return NULL;
	dev = makedevice(d->d_major, 0);
	pthread_mutex_lock(&sd->sd_plumb);
	if (str_open_driver(sd, d, &dev, 0, DRVOPEN, &cr) != 0) {
		pthread_mutex_unlock(&sd->sd_plumb);
		str_stream_rele(sd);
		return NULL;
	}
	va_start(ap, drv);
	while ((m = va_arg(ap, const char *)) != NULL) {
		if (str_push(sd, fmod_find(m), &dev, 0, &cr) != 0) {
			va_end(ap);
			pthread_mutex_unlock(&sd->sd_plumb);
			th_close(sd);
			return NULL;
		}
	}
	va_end(ap);
	pthread_mutex_unlock(&sd->sd_plumb);
	return sd;
}

void th_close(struct stdata *sd)
{
	cred_t cr;

	str_getcred(&cr);
	pthread_mutex_lock(&sd->sd_plumb);
	str_close_all(sd, 0, &cr);
	pthread_mutex_unlock(&sd->sd_plumb);
	str_stream_rele(sd);
}

void th_send(struct stdata *sd, mblk_t *mp)
{
	put(sd->sd_wq, mp);
}

mblk_t *th_data(size_t len, int v)
{
	mblk_t *mp = allocb(len, BPRI_MED);
	if (mp == NULL)
		return NULL;
	memset(mp->b_wptr, v, len);
	mp->b_wptr += len;
	return mp;
}

mblk_t *th_msg(int type, const void *p, size_t n)
{
	mblk_t *mp = allocb(n, BPRI_MED);

	if (mp == NULL) {
		fprintf(stderr, "th_msg: no memory\n");
		exit(1);
	}
	mp->b_datap->db_type = (unsigned char)type;
	memcpy(mp->b_wptr, p, n);
	mp->b_wptr += n;
	return mp;
}

long th_sink_count(struct stdata *sd)
{
	queue_t *q = sd->sd_wq;
	queue_t *n;

	while ((n = q->q_next) != NULL)
		q = n;
	return atomic_load(&((struct sinkpriv *)q->q_ptr)->count);
}

static struct strstats mark;

void th_mark(void)
{
	streams_quiesce(2000);
	streams_stats(&mark);
}

int th_leaks(void)
{
	struct strstats now;
	int bad = 0;

	streams_quiesce(2000);
	streams_stats(&now);
#define L(f) if (now.f - mark.f != 0) { \
		fprintf(stderr, "leak: %s %+lld\n", #f, (long long)(now.f - mark.f)); bad = 1; }
	L(mblk_inuse) L(dblk_inuse) L(queue_inuse) L(stream_inuse)
	L(timeouts_pending) L(bufcalls_pending)
#undef L
	return bad;
}
