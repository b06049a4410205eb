/* tiloop.c -- STUB: replaced by the loopback transport providers. */
#include <errno.h>
#include <sys/strconf.h>
#include "../drivers/drvutil.h"

static int tl_open(queue_t *q, dev_t *devp, int oflag, int sflag, cred_t *cr)
{
	return ENXIO;
}
static int tl_close(queue_t *q, int oflag, cred_t *cr) { return 0; }
static int tl_put(queue_t *q, mblk_t *mp) { freemsg(mp); return 0; }
static struct module_info tl_minfo = { 0, "tl", 0, INFPSZ, 65536, 16384 };
static struct qinit tl_rinit = { tl_put, NULL, tl_open, tl_close, NULL, &tl_minfo, NULL };
static struct qinit tl_winit = { tl_put, NULL, NULL, NULL, NULL, &tl_minfo, NULL };
static struct streamtab tl_info = { &tl_rinit, &tl_winit, NULL, NULL };
struct cdevsw ticlts_cdev = { .d_name = "ticlts", .d_str = &tl_info, .d_flag = D_MP };
struct cdevsw ticots_cdev = { .d_name = "ticots", .d_str = &tl_info, .d_flag = D_MP };
struct cdevsw ticotsord_cdev = { .d_name = "ticotsord", .d_str = &tl_info, .d_flag = D_MP };
