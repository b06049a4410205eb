/*
 * echo.c -- the echo driver: what is written comes back up.
 *
 * Data, protocol and high priority messages written are sent back up the
 * same stream, subject to flow control: when the stream head's read
 * queue is full they wait on the driver's write queue, and the writer is
 * throttled by the usual back-enabling (the read queue's service
 * procedure, back-enabled when the head drains, re-enables the write
 * side).  M_FLUSH is answered as drivers do; ioctls are refused (EINVAL).
 * Every open of /dev/streams/clone/echo is a new stream (minor); other
 * opens of a minor share it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <sys/strconf.h>

#include "drvutil.h"

#define ECHO_MAXMINOR 1024

static struct drv_minors echo_minors = DRV_MINORS_INIT(ECHO_MAXMINOR);

static int echo_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		     cred_t *cr)
{
	return drv_minor_qopen(&echo_minors, q, devp, sflag);
}

static int echo_close(queue_t *q, int oflag, cred_t *cr)
{
	drv_minor_qclose(&echo_minors, q);
	return 0;
}

static int echo_wput(queue_t *q, mblk_t *mp)
{
	switch (mp->b_datap->db_type) {
	case M_FLUSH:
		drv_flush(q, mp);
		break;
	case M_IOCTL:
		drv_nak(q, mp, EINVAL);
		break;
	case M_DATA:
	case M_PROTO:
	case M_PCPROTO:
		if (mp->b_datap->db_type >= QPCTL ||
		    (q_idle(q) &&
		     bcanputnext(RD(q), mp->b_band)))
			qreply(q, mp);
		else
			drv_putq(q, mp);
		break;
	default:
		freemsg(mp);
		break;
	}
	return 0;
}

/* The write queue's q_next is NULL: messages go back up the read side. */
static int echo_wsrv(queue_t *q)
{
	mblk_t *mp;

	while ((mp = getq(q)) != NULL) {
		if (mp->b_datap->db_type < QPCTL &&
		    !bcanputnext(RD(q), mp->b_band)) {
			putbq(q, mp);
			break;
		}
		qreply(q, mp);
	}
	return 0;
}

/* Back-enabled when the head drains: let the write side go on. */
static int echo_rsrv(queue_t *q)
{
	qenable(WR(q));
	return 0;
}

static int echo_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info echo_minfo = { 2001, "echo", 0, INFPSZ, 65536, 16384 };
static struct qinit echo_rinit = { echo_rput, echo_rsrv, echo_open, echo_close, NULL, &echo_minfo, NULL };
static struct qinit echo_winit = { echo_wput, echo_wsrv, NULL, NULL, NULL, &echo_minfo, NULL };
static struct streamtab echo_info = { &echo_rinit, &echo_winit, NULL, NULL };

struct cdevsw echo_cdev = {
	.d_name = "echo", .d_str = &echo_info, .d_flag = D_MP,
};
