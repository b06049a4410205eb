/*
 * nuls.c -- the null sink driver: everything written is discarded,
 * nothing is ever read (reads block, or EAGAIN).  M_FLUSH is answered;
 * ioctls are refused.  Every open is its own stream.
 */
#include <errno.h>
#include <pthread.h>

#include <sys/strconf.h>

#include "drvutil.h"

static struct drv_minors nuls_minors = DRV_MINORS_INIT(DRV_MAXMINOR);

static int nuls_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		     cred_t *cr)
{
	return drv_minor_qopen(&nuls_minors, q, devp, sflag);
}

static int nuls_close(queue_t *q, int oflag, cred_t *cr)
{
	drv_minor_qclose(&nuls_minors, q);
	return 0;
}

static int nuls_wput(queue_t *q, mblk_t *mp)
{
	switch (mp->b_datap->db_type) {
	case M_FLUSH:
		drv_flush(q, mp);
		break;
	case M_IOCTL:
		drv_nak(q, mp, EINVAL);
		break;
	default:
		freemsg(mp);
		break;
	}
	return 0;
}

static int nuls_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info nuls_minfo = { 2002, "nuls", 0, INFPSZ, 65536, 16384 };
static struct qinit nuls_rinit = { nuls_rput, NULL, nuls_open, nuls_close, NULL, &nuls_minfo, NULL };
static struct qinit nuls_winit = { nuls_wput, NULL, NULL, NULL, NULL, &nuls_minfo, NULL };
static struct streamtab nuls_info = { &nuls_rinit, &nuls_winit, NULL, NULL };

struct cdevsw nuls_cdev = {
	.d_name = "nuls", .d_str = &nuls_info, .d_flag = D_MP,
};
