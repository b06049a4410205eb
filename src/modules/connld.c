/*
 * connld.c -- the connld module: unique connections through a named
 * STREAMS pipe.
 *
 * How this works
 * --------------
 * A server pushes connld on a pipe end and fattach()es that end to a
 * path.  Every open() of the path -- in the server's process or in any
 * other -- then makes a new pipe: the opener gets one end, and the
 * other end travels down the attached end as a M_PASSFP, carrying the
 * opener's uid and gid, to the pipe's other end, where the server takes
 * it with I_RECVFD.
 *
 * In SVR4 connld's open procedure does this on each open of the
 * attached stream.  Here an open of an attached path does not run the
 * stream's open procedures (the stream head shares or hands out the
 * stream, sth_open.c and sth_fattach.c), so the stream head does the
 * work when it finds this module on the attached stream
 * (sth_connld_pushed); the module itself only passes messages through,
 * and is the mark.
 */
#include <errno.h>

#include <sys/strconf.h>

static int connld_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		       cred_t *cr)
{
	return sflag == MODOPEN ? 0 : ENXIO;
}

static int connld_close(queue_t *q, int oflag, cred_t *cr)
{
	return 0;
}

/* Messages pass through; flow control is the neighbours' business
 * (no service procedure, so canputnext looks past this module). */
static int connld_put(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static struct module_info connld_minfo = { 3010, "connld", 0, INFPSZ, 65536, 16384 };
static struct qinit connld_rinit = { connld_put, NULL, connld_open, connld_close, NULL, &connld_minfo, NULL };
static struct qinit connld_winit = { connld_put, NULL, NULL, NULL, NULL, &connld_minfo, NULL };
static struct streamtab connld_info = { &connld_rinit, &connld_winit, NULL, NULL };

struct fmodsw connld_fmod = {
	.f_name = "connld", .f_str = &connld_info, .f_flag = D_MP,
};
