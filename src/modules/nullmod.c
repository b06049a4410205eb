/*
 * nullmod.c -- the pass-through module, with put and service procedures:
 * messages go straight on unless the next queue is full, then wait on
 * this module's queue until back-enabled.  M_FLUSH flushes this module's
 * queue of that direction and is passed on.  D_MP.
 */
#include <errno.h>

#include <sys/strconf.h>

#include "../drivers/drvutil.h"

static int nullmod_open(queue_t *q, dev_t *devp, int oflag, int sflag,
			cred_t *cr)
{
	return sflag == MODOPEN ? 0 : ENXIO;
}

static int nullmod_close(queue_t *q, int oflag, cred_t *cr)
{
	return 0;
}

static int nullmod_put(queue_t *q, mblk_t *mp)
{
	if (mp->b_datap->db_type == M_FLUSH)
		mod_flush(q, mp);
	else
		pass_or_queue(q, mp);
	return 0;
}

static int nullmod_srv(queue_t *q)
{
	drain_queue(q);
	return 0;
}

static struct module_info nullmod_minfo = { 3001, "nullmod", 0, INFPSZ, 65536, 16384 };
static struct qinit nullmod_rinit = { nullmod_put, nullmod_srv, nullmod_open, nullmod_close, NULL, &nullmod_minfo, NULL };
static struct qinit nullmod_winit = { nullmod_put, nullmod_srv, NULL, NULL, NULL, &nullmod_minfo, NULL };
static struct streamtab nullmod_info = { &nullmod_rinit, &nullmod_winit, NULL, NULL };

struct fmodsw nullmod_fmod = {
	.f_name = "nullmod", .f_str = &nullmod_info, .f_flag = D_MP,
};
