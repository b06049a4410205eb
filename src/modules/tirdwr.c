/* tirdwr.c -- STUB: replaced by the real module. */
#include <errno.h>
#include <sys/strconf.h>
#include "../drivers/drvutil.h"

static int tirdwr_open(queue_t *q, dev_t *devp, int oflag, int sflag, cred_t *cr)
{
	return ENXIO;
}
static int tirdwr_close(queue_t *q, int oflag, cred_t *cr) { return 0; }
static int tirdwr_put(queue_t *q, mblk_t *mp) { putnext(q, mp); return 0; }
static struct module_info tirdwr_minfo = { 0, "tirdwr", 0, INFPSZ, 65536, 16384 };
static struct qinit tirdwr_rinit = { tirdwr_put, NULL, tirdwr_open, tirdwr_close, NULL, &tirdwr_minfo, NULL };
static struct qinit tirdwr_winit = { tirdwr_put, NULL, NULL, NULL, NULL, &tirdwr_minfo, NULL };
static struct streamtab tirdwr_info = { &tirdwr_rinit, &tirdwr_winit, NULL, NULL };
struct fmodsw tirdwr_fmod = { .f_name = "tirdwr", .f_str = &tirdwr_info, .f_flag = D_MP };
