/*
 * pipemod.c -- the pipe flush module.  Pushed on one end of a STREAMS
 * pipe, it sits at the pipe's midpoint, where the meaning of M_FLUSH's
 * flags turns around: what one end calls its write side is the other
 * end's read side.  It switches FLUSHR and FLUSHW and marks the message
 * as switched (MSGCROSSED) so the stream head does not switch it again.
 * Everything else passes unchanged.  D_MP.
 */
#include <errno.h>

#include <sys/strconf.h>

static int pipemod_open(queue_t *q, dev_t *devp, int oflag, int sflag,
			cred_t *cr)
{
	return sflag == MODOPEN ? 0 : ENXIO;
}

static int pipemod_close(queue_t *q, int oflag, cred_t *cr)
{
	return 0;
}

static int pipemod_put(queue_t *q, mblk_t *mp)
{
	if (mp->b_datap->db_type == M_FLUSH && MBLKL(mp) >= 1 &&
	    !(mp->b_flag & MSGCROSSED)) {
		unsigned char f = mp->b_rptr[0], sw = f & ~FLUSHRW;
		if (f & FLUSHR)
			sw |= FLUSHW;
		if (f & FLUSHW)
			sw |= FLUSHR;
		mp->b_rptr[0] = sw;
		mp->b_flag |= MSGCROSSED;
	}
	putnext(q, mp);
	return 0;
}

static struct module_info pipemod_minfo = { 3002, "pipemod", 0, INFPSZ, 65536, 16384 };
static struct qinit pipemod_rinit = { pipemod_put, NULL, pipemod_open, pipemod_close, NULL, &pipemod_minfo, NULL };
static struct qinit pipemod_winit = { pipemod_put, NULL, NULL, NULL, NULL, &pipemod_minfo, NULL };
static struct streamtab pipemod_info = { &pipemod_rinit, &pipemod_winit, NULL, NULL };

struct fmodsw pipemod_fmod = {
	.f_name = "pipemod", .f_str = &pipemod_info, .f_flag = D_MP,
};
