/* timod.c -- STUB: replaced by the real module. */
#include <errno.h>
#include <sys/strconf.h>
#include "../drivers/drvutil.h"

static int timod_open(queue_t *q, dev_t *devp, int oflag, int sflag, cred_t *cr)
{
	return ENXIO;
}
static int timod_close(queue_t *q, int oflag, cred_t *cr) { return 0; }
static int timod_put(queue_t *q, mblk_t *mp) { putnext(q, mp); return 0; }
static struct module_info timod_minfo = { 0, "timod", 0, INFPSZ, 65536, 16384 };
static struct qinit timod_rinit = { timod_put, NULL, timod_open, timod_close, NULL, &timod_minfo, NULL };
static struct qinit timod_winit = { timod_put, NULL, NULL, NULL, NULL, &timod_minfo, NULL };
static struct streamtab timod_info = { &timod_rinit, &timod_winit, NULL, NULL };
struct fmodsw timod_fmod = { .f_name = "timod", .f_str = &timod_info, .f_flag = D_MP };
