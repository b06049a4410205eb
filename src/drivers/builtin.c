/*
 * builtin.c -- the drivers and modules that come with the library,
 * registered when the executive starts: echo, nuls, loop, mux (and mux2,
 * the same driver under a second name), pipe (spx), clone,
 * the loopback transport providers ticlts, ticots, ticotsord (also opened as
 * /dev/ticlts, /dev/ticots, /dev/ticotsord); nullmod, pipemod, testmod,
 * timod, tirdwr; the Internet providers (inet.c: /dev/udp, /dev/tcp,
 * /dev/rawip, /dev/inet/udp, /dev/inet/tcp, /dev/inet/rawip).
 *
 * clone: opening /dev/streams/clone/<name> is a clone open of <name>; the
 * clone driver itself (major of "clone", minor = the target's major) is
 * handled by the stream head and never opened as a stream.
 */
#include <errno.h>
#include <stdio.h>

#include <sys/strconf.h>

#include "drvutil.h"

extern struct cdevsw echo_cdev, nuls_cdev, loop_cdev, mux_cdev, mux2_cdev;
extern struct cdevsw spx_cdev;
extern struct cdevsw ticlts_cdev, ticots_cdev, ticotsord_cdev;
extern struct cdevsw shmpipe_cdev;
extern struct fmodsw nullmod_fmod, pipemod_fmod, testmod_fmod;
extern struct fmodsw timod_fmod, tirdwr_fmod, connld_fmod;
void inet_register(void);

static int clone_open(queue_t *q, dev_t *devp, int oflag, int sflag,
		      cred_t *cr)
{
	return ENXIO;		/* the head redirects clone opens */
}

static int clone_put(queue_t *q, mblk_t *mp)
{
	freemsg(mp);
	return 0;
}

static struct module_info clone_minfo = { 2000, "clone", 0, INFPSZ, 1, 0 };
static struct qinit clone_rinit = { clone_put, NULL, clone_open, NULL, NULL, &clone_minfo, NULL };
static struct qinit clone_winit = { clone_put, NULL, NULL, NULL, NULL, &clone_minfo, NULL };
static struct streamtab clone_info = { &clone_rinit, &clone_winit, NULL, NULL };
struct cdevsw clone_cdev = {
	.d_name = "clone", .d_str = &clone_info, .d_flag = D_MP,
};

/* Called once by str_init() (an explicit call: a constructor would be
 * dropped by a static link, since nothing refers to this file). */
void strdrv_builtin_register(void)
{
	struct cdevsw *devs[] = { &clone_cdev, &echo_cdev, &nuls_cdev,
				  &loop_cdev, &mux_cdev, &mux2_cdev, &spx_cdev,
				  &shmpipe_cdev,
				  &ticlts_cdev, &ticots_cdev, &ticotsord_cdev };
	struct fmodsw *mods[] = { &nullmod_fmod, &pipemod_fmod,
				  &testmod_fmod, &timod_fmod, &tirdwr_fmod,
				  &connld_fmod };
	/* the transport providers' conventional names: clone opens */
	static const char *const alias[][2] = {
		{ "/dev/ticlts", "ticlts" },
		{ "/dev/ticots", "ticots" },
		{ "/dev/ticotsord", "ticotsord" },
	};

	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (register_strdev(devs[i], 0) < 0)
			fprintf(stderr, "streams: cannot register %s\n",
				devs[i]->d_name);
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (register_strmod(mods[i]) < 0)
			fprintf(stderr, "streams: cannot register %s\n",
				mods[i]->f_name);
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strdev_alias(alias[i][0], alias[i][1], 1) < 0)
			fprintf(stderr, "streams: cannot name %s\n",
				alias[i][0]);
	inet_register();
}
