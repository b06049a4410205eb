/*
 * sth_open.c -- opening and closing streams.
 *
 * Names.  open() comes here for
 *	/dev/streams/<driver>		minor 0 (a clone open for D_CLONE)
 *	/dev/streams/<driver>/<minor>	that minor
 *	/dev/streams/clone/<driver>	a clone open: the driver picks a minor
 *	an alias a driver registered (/dev/udp, /dev/ticots, ...)
 *	a name given to a stream with fattach()
 *	a pipe end another process attached (sth_fattach.c)
 * and every other path goes to libc.
 *
 * Open.  A non-clone open of a (major, minor) that has a stream already
 * reopens it: the open procedures of the driver and each module run
 * again, as in SVR4, and a new open file shares the stream.  Otherwise a
 * new stream is made (head, mirror, driver), the driver's open runs with
 * DRVOPEN or CLONEOPEN, and the autopush configuration of the resulting
 * device is applied.
 *
 * Close.  The last close of a stream unlinks what is linked below it,
 * waits for its write side to drain (up to I_SETCLTIME, 15 s by default,
 * not for O_NONBLOCK), pops every module and closes the driver, calling
 * their close procedures; a STREAMS pipe's other end gets M_HANGUP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/strexec.h>

#include "sthead.h"

#define STRHIGH		65536	/* head read queue high water (a Linux pipe holds 64 KiB) */
#define STRLOW		16384	/* head read queue low water */
#define STRMSGSZ	65536	/* largest data part of a message */
#define STRCTLSZ	1024	/* largest control part */
#define STRCLTIME	15000	/* ms a close waits for the write side */

static struct module_info sth_minfo = {
	0, "strhead", 0, INFPSZ, STRHIGH, STRLOW
};
static int sth_qopen(queue_t *q, dev_t *d, int o, int s, cred_t *c)
{
	return 0;
}
struct qinit sth_rinit = { strrput, NULL, sth_qopen, NULL, NULL, &sth_minfo, NULL };
struct qinit sth_winit = { strwput, strwsrv, NULL, NULL, NULL, &sth_minfo, NULL };

/* ---- open streams by device, and names ---- */

struct sth_name {
	struct sth_name *n_next;
	char *n_path;
	char *n_driver;		/* alias: driver to open */
	int n_clone;		/* alias: clone open */
	struct sthead *n_sh;	/* fattach: the stream (held) */
};

pthread_mutex_t sth_names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sth_name *sth_names;		/* sth_names_lock */
static int sth_nattached;			/* atomic: fattach count */

#define NDEVHASH 256
struct sth_devent {
	struct sth_devent *next;
	dev_t dev;
	struct sthead *sh;
};
pthread_mutex_t sth_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sth_devent *sth_devtab[NDEVHASH];	/* sth_dev_lock */
/* serialises creating a stream for a (major, minor) with finding it */
pthread_mutex_t sth_open_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned devhash(dev_t d)
{
	return (unsigned)((d * 0x9e3779b97f4a7c15ull) >> 56) % NDEVHASH;
}

static void dev_add(struct sthead *sh)
{
	struct sth_devent *e = malloc(sizeof(*e));

	if (e == NULL)
		return;		/* only reopen by minor is lost */
	e->dev = sh->sh_dev;
	e->sh = sh;
	pthread_mutex_lock(&sth_dev_lock);
	e->next = sth_devtab[devhash(e->dev)];
	sth_devtab[devhash(e->dev)] = e;
	pthread_mutex_unlock(&sth_dev_lock);
}

static void dev_del(struct sthead *sh)
{
	struct sth_devent **pp, *e;

	pthread_mutex_lock(&sth_dev_lock);
	for (pp = &sth_devtab[devhash(sh->sh_dev)]; (e = *pp) != NULL;
	     pp = &e->next) {
		if (e->sh == sh) {
			*pp = e->next;
			free(e);
			break;
		}
	}
	pthread_mutex_unlock(&sth_dev_lock);
}

/* The live stream of dev, held; NULL if none. */
static struct sthead *dev_find(dev_t dev)
{
	struct sth_devent *e;
	struct sthead *sh = NULL;

	pthread_mutex_lock(&sth_dev_lock);
	for (e = sth_devtab[devhash(dev)]; e != NULL; e = e->next) {
		if (e->dev == dev && !(sh_flags(e->sh) & STRCLOSED)) {
			sh = e->sh;
			sth_hold(sh);
			break;
		}
	}
	pthread_mutex_unlock(&sth_dev_lock);
	return sh;
}

/* Register /dev/<alias> for a driver (transport providers use this). */
int strdev_alias(const char *path, const char *driver, int clone)
{
	struct sth_name *n;

	if (path == NULL || driver == NULL || path[0] != '/')
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	n->n_path = strdup(path);
	n->n_driver = strdup(driver);
	n->n_clone = clone;
	if (n->n_path == NULL || n->n_driver == NULL) {
		free(n->n_path);
		free(n->n_driver);
		free(n);
		return -ENOMEM;
	}
	pthread_mutex_lock(&sth_names_lock);
	for (struct sth_name *p = sth_names; p != NULL; p = p->n_next) {
		if (strcmp(p->n_path, path) == 0) {
			pthread_mutex_unlock(&sth_names_lock);
			free(n->n_path);
			free(n->n_driver);
			free(n);
			return -EEXIST;
		}
	}
	n->n_next = sth_names;
	sth_names = n;
	pthread_mutex_unlock(&sth_names_lock);
	return 0;
}

/* ---- references ---- */

void sth_hold(struct sthead *sh)
{
	str_stream_hold(&sh->sh_sd);
}

void sth_rele(struct sthead *sh)
{
	str_stream_rele(&sh->sh_sd);
}

static void sth_free_head(struct stdata *sd)
{
	struct sthead *sh = SH(sd);
	struct sth_sig *s, *n;

	if (sh->sh_mfd_app >= 0)
		sth_real.close(sh->sh_mfd_app);
	if (sh->sh_mfd_lib >= 0)
		sth_real.close(sh->sh_mfd_lib);
	if (sh->sh_kevfd >= 0)
		sth_real.close(sh->sh_kevfd);
	for (s = sh->sh_sigs; s != NULL; s = n) {
		n = s->s_next;
		free(s);
	}
	if (sh->sh_iocmsg != NULL)
		freemsg(sh->sh_iocmsg);
	freemsg(sh->sh_pipehup);
	sth_rcache_free(sh);
	if (sh->sh_pair != NULL &&
	    __atomic_sub_fetch(&sh->sh_pair->p_refs, 1, __ATOMIC_ACQ_REL) == 0) {
		pthread_mutex_destroy(&sh->sh_pair->p_lock);
		free(sh->sh_pair);
	}
	pthread_mutex_destroy(&sh->sh_lock);
	pthread_mutex_destroy(&sh->sh_mlock);
}

struct sthead *sth_alloc(void)
{
	struct stdata *sd;
	struct sthead *sh;
	int sv[2], one = 1;

	sth_posix_init();
	sth_ucopy_init();
	sth_fork_init();
	if (sth_fd_init() != 0) {
		errno = ENOMEM;
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       sv) != 0)
		return NULL;
	sd = str_stream_alloc_size(&sth_rinit, &sth_winit, sizeof(*sh));
	if (sd == NULL) {
		sth_real.close(sv[0]);
		sth_real.close(sv[1]);
		errno = ENOMEM;
		return NULL;
	}
	sh = SH(sd);
	pthread_mutex_init(&sh->sh_lock, NULL);
	pthread_mutex_init(&sh->sh_mlock, NULL);
	sh->sh_rdopt = RNORM | RPROTNORM;
	sh->sh_erropt = RERRNORM | WERRNORM;
	sh->sh_strmsgsz = STRMSGSZ;
	sh->sh_strctlsz = STRCTLSZ;
	sh->sh_closetime = STRCLTIME;
	sh->sh_mfd_app = sv[0];
	sh->sh_mfd_lib = sv[1];
	sh->sh_kevfd = -1;
	sh->sh_asyncfd = -1;
	/* a tiny send buffer on the application end: "not writable" is
	 * shown by filling it, which then takes a few bytes */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
	sh->sh_mhave = MIR_OUT;		/* a new socket is writable */
	sd->sd_head = sh;
	sd->sd_head_free = sth_free_head;
	sh->sh_sd.sd_rq->q_ptr = sh;
	sh->sh_sd.sd_wq->q_ptr = sh;
	return sh;
}

/* A new descriptor for a new open of sh (sd_plumb held). */
int sth_new_fd(struct sthead *sh, int oflag, struct sth_file **stale)
{
	struct sth_file *f;
	int fd, err;

	*stale = NULL;
	fd = sth_real.fcntl(sh->sh_mfd_app,
			    (oflag & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
	if (fd < 0)
		return -1;
	f = sth_file_new(sh, oflag & (O_ACCMODE | O_NONBLOCK | O_NDELAY |
				      O_CLOEXEC));
	if (f == NULL) {
		sth_real.close(fd);
		errno = ENOMEM;
		return -1;
	}
	if (sh->sh_opens++ == 0)
		sth_hold(sh);		/* the opens' reference */
	if ((err = sth_fd_install(fd, f, stale)) != 0) {
		sh->sh_opens--;
		free(f);
		sth_real.close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* ---- open ---- */

/* Run the open procedures of the driver and modules of sh again. */
static int reopen(struct sthead *sh, dev_t *devp, int oflag, cred_t *cr)
{
	queue_t *wq, *top = str_top(&sh->sh_sd);
	queue_t *pairs[NSTRPUSH + 2];
	int n = 0, err;

	/* driver first, then modules bottom-up, as SVR4 */
	for (wq = top ? WR(top) : NULL; wq != NULL && n < NSTRPUSH + 2;
	     wq = wq->q_next) {
		if (wq->q_stream != &sh->sh_sd || q_isread(wq))
			break;
		pairs[n++] = RD(wq);
	}
	for (int i = n - 1; i >= 0; i--) {
		queue_t *rq = pairs[i];
		struct strsyncq *sq = rq->q_syncq;
		int sflag = q_pair(rq)->qp_kind == QP_MOD ? MODOPEN : DRVOPEN;
		struct strthread *t;

		if (sq != NULL)
			strperim_enter_wait(sq);
		t = str_enter();
		err = rq->q_qinfo->qi_qopen(rq, devp, oflag, sflag, cr);
		if (sq != NULL)
			strperim_exit(sq);	/* its deferred work: inside */
		str_exit(t);
		if (err != 0)
			return err;
	}
	return 0;
}

static int autopush(struct sthead *sh, dev_t dev, int oflag, cred_t *cr)
{
	struct strapush sap;
	int err;

	if (autopush_find(getmajor(dev), getminor(dev), &sap) != 0)
		return 0;
	for (unsigned i = 0; i < sap.sap_npush; i++) {
		struct fmodsw *f = fmod_find(sap.sap_list[i]);
		if (f == NULL)
			return EINVAL;
		err = str_push(&sh->sh_sd, f, &dev, oflag, cr);
		if (err != 0)
			return err;
	}
	if ((sap.sap_cmd & SAP_ANCHOR) && sap.sap_anchor > 0)
		sh->sh_sd.sd_anchor = sap.sap_anchor;
	return 0;
}

int sth_open_dev(struct cdevsw *cdev, minor_t minor, int oflag, int clone)
{
	struct sth_file *stale = NULL;
	struct sthead *sh;
	cred_t cr;
	dev_t dev;
	int err, fd;

	str_getcred(&cr);
	if (strcmp(cdev->d_name, "clone") == 0) {
		/* the clone driver: minor names the driver to clone-open */
		struct cdevsw *target = cdev_get(minor);
		if (target == NULL || target == cdev)
			return sth_err(ENXIO);
		cdev = target;
		minor = 0;
		clone = 1;
	}
	if (cdev->d_flag & D_CLONE)
		clone = 1;
	dev = makedevice(cdev->d_major, minor);
	if (!clone) {
		pthread_mutex_lock(&sth_open_lock);
		sh = dev_find(dev);
		if (sh != NULL) {
			pthread_mutex_unlock(&sth_open_lock);
			sth_plumb_lock(sh);
			if (sh_flags(sh) & (STRCLOSED | STPLEX | STRBROKEN)) {
				err = sh_flags(sh) & STPLEX ? EINVAL :
				      sh_flags(sh) & STRBROKEN ? EIO : ENXIO;
				sth_plumb_unlock(sh);
				sth_rele(sh);
				return sth_err(err);
			}
			err = reopen(sh, &dev, oflag, &cr);
			fd = err ? -1 : sth_new_fd(sh, oflag, &stale);
			if (fd < 0 && err == 0)
				err = errno;
			sth_plumb_unlock(sh);
			sth_rele(sh);
			sth_file_rele(stale);
			return err ? sth_err(err) : fd;
		}
	}
	sh = sth_alloc();
	if (sh == NULL) {
		err = errno;
		goto fail_unlock;
	}
	sth_plumb_lock(sh);
	err = str_open_driver(&sh->sh_sd, cdev, &dev, oflag,
			      clone ? CLONEOPEN : DRVOPEN, &cr);
	if (err != 0) {
		sth_plumb_unlock(sh);
		sth_rele(sh);
		goto fail_unlock;
	}
	sh->sh_dev = dev;
	if (clone)
		__atomic_or_fetch(&sh->sh_flag, STRCLONE, __ATOMIC_RELEASE);
	err = autopush(sh, dev, oflag, &cr);
	if (err != 0) {
		str_close_all(&sh->sh_sd, oflag, &cr);
		sth_plumb_unlock(sh);
		sth_rele(sh);
		goto fail_unlock;
	}
	fd = sth_new_fd(sh, oflag, &stale);
	if (fd < 0) {
		err = errno;
		str_close_all(&sh->sh_sd, oflag, &cr);
		sth_plumb_unlock(sh);
		sth_rele(sh);
		goto fail_unlock;
	}
	dev_add(sh);
	sth_plumb_unlock(sh);
	sth_rele(sh);		/* sth_alloc's reference; the open holds one */
	if (!clone)
		pthread_mutex_unlock(&sth_open_lock);
	sth_file_rele(stale);
	return fd;

fail_unlock:
	if (!clone)
		pthread_mutex_unlock(&sth_open_lock);
	return sth_err(err);
}

/* Parse "name" or "name/minor" into a driver and minor. */
static int parse_dev(const char *p, struct cdevsw **cdevp, minor_t *minorp,
		     bool *has_minor)
{
	char name[DEVNAMESZ + 1];
	const char *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : strlen(p);

	*has_minor = false;
	if (n == 0 || n > DEVNAMESZ)
		return ENOENT;
	memcpy(name, p, n);
	name[n] = '\0';
	*cdevp = cdev_find(name);
	if (*cdevp == NULL)
		return ENOENT;
	*minorp = 0;
	if (slash != NULL) {
		char *end;
		unsigned long m = strtoul(slash + 1, &end, 10);
		if (slash[1] == '\0' || *end != '\0' || m > 0xfffff)
			return ENOENT;
		*minorp = (minor_t)m;
		*has_minor = true;
	}
	return 0;
}

int sth_open_path(const char *path, int oflag, mode_t mode)
{
	static const char prefix[] = "/dev/streams/";
	struct cdevsw *cdev;
	minor_t minor;
	bool has_minor;
	int err;

	(void)mode;
	if (path == NULL)
		return -2;
	if (strncmp(path, prefix, sizeof(prefix) - 1) == 0) {
		const char *p = path + sizeof(prefix) - 1;
		bool clone = false;

		if (!str_initialised)
			str_init();
		if (strncmp(p, "clone/", 6) == 0) {
			clone = true;
			p += 6;
		}
		err = parse_dev(p, &cdev, &minor, &has_minor);
		if (err != 0 || (clone && has_minor))
			return sth_err(err ? err : ENOENT);
		if ((oflag & O_CREAT) && (oflag & O_EXCL))
			return sth_err(EEXIST);
		return sth_open_dev(cdev, minor, oflag, clone);
	}
	/* the drivers' aliases (/dev/ticots...) exist once the executive
	 * has started: a first open by such a name starts it */
	if (!str_initialised && strncmp(path, "/dev/", 5) == 0)
		str_init();
	if (path[0] != '/' || sth_names == NULL)
		return sth_fattach_open(path, oflag);
	/* aliases and fattach names */
	pthread_mutex_lock(&sth_names_lock);
	for (struct sth_name *n = sth_names; n != NULL; n = n->n_next) {
		if (strcmp(n->n_path, path) != 0)
			continue;
		if (n->n_sh != NULL) {
			struct sthead *sh = n->n_sh;
			int fd;
			sth_hold(sh);
			pthread_mutex_unlock(&sth_names_lock);
			if (sth_connld_pushed(sh)) {
				/* a new pipe for each open */
				fd = sth_connld_open(sh, oflag);
				sth_rele(sh);
				return fd;
			}
			struct sth_file *stale = NULL;
			sth_plumb_lock(sh);
			fd = (sh_flags(sh) & STRCLOSED) ? sth_err(ENXIO)
				: sth_new_fd(sh, oflag, &stale);
			sth_plumb_unlock(sh);
			sth_rele(sh);
			sth_file_rele(stale);
			return fd;
		}
		char drv[DEVNAMESZ + 1];
		int clone = n->n_clone;
		strncpy(drv, n->n_driver, DEVNAMESZ);
		drv[DEVNAMESZ] = '\0';
		pthread_mutex_unlock(&sth_names_lock);
		cdev = cdev_find(drv);
		if (cdev == NULL)
			return sth_err(ENXIO);
		return sth_open_dev(cdev, 0, oflag, clone);
	}
	pthread_mutex_unlock(&sth_names_lock);
	return sth_fattach_open(path, oflag);
}

/* ---- fattach / fdetach ---- */

static int fattach_path(int fd, const char *path);

/* fattach's and fdetach's path: it must name something that exists
 * (SUSv2; else the errno), the caller must own it or be privileged
 * (EPERM), and fattach needs the owner's write permission too (EACCES,
 * XSI).  0 when all is well. */
static int path_may(const char *path, bool attach)
{
	struct stat st;
	uid_t me = geteuid();

	if (path[0] == '\0')
		return ENOENT;
	if (stat(path, &st) != 0)
		return errno;
	if (me == 0)
		return 0;
	if (st.st_uid != me)
		return EPERM;
	if (attach && !(st.st_mode & S_IWUSR))
		return EACCES;
	return 0;
}

int fattach(int fd, const char *upath)
{
	char *path;
	int err;

	sth_ucopy_init();
	if ((err = sth_ustrdup(upath, PATH_MAX, &path)) != 0)
		return sth_err(err);
	err = fattach_path(fd, path);
	free(path);
	return err;
}

static int fattach_path(int fd, const char *path)
{
	struct sth_file *f;
	struct sth_name *n;
	struct strthread *t;
	struct sthead *sh;
	int err;

	t = str_enter();
	f = sth_lookup(fd);
	if (f == NULL) {
		str_exit(t);
		return sth_err(sth_real.fcntl(fd, F_GETFD) < 0 ? EBADF : EINVAL);
	}
	sh = f->f_sh;
	sth_hold(sh);
	str_exit(t);
	if ((err = path_may(path, true)) != 0) {
		sth_rele(sh);
		return sth_err(err);
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL || (n->n_path = strdup(path)) == NULL) {
		free(n);
		sth_rele(sh);
		return sth_err(ENOMEM);
	}
	n->n_sh = sh;
	pthread_mutex_lock(&sth_names_lock);
	for (struct sth_name *p = sth_names; p != NULL; p = p->n_next) {
		if (strcmp(p->n_path, path) == 0) {
			pthread_mutex_unlock(&sth_names_lock);
			free(n->n_path);
			free(n);
			sth_rele(sh);
			return sth_err(EBUSY);
		}
	}
	/* other processes reach a pipe end by this name too (a failure
	 * other than EBUSY leaves the name to this process) */
	if (sth_fattach_publish(sh, path) == EBUSY) {
		pthread_mutex_unlock(&sth_names_lock);
		free(n->n_path);
		free(n);
		sth_rele(sh);
		return sth_err(EBUSY);
	}
	/* the name holds the stream open, as an open would (fdetach then
	 * is its last close if no descriptor is left) */
	sth_plumb_lock(sh);
	if (sh_flags(sh) & STRCLOSED) {
		/* its last close came first: the descriptor is gone */
		sth_plumb_unlock(sh);
		pthread_mutex_unlock(&sth_names_lock);
		sth_fattach_unpublish(path);
		free(n->n_path);
		free(n);
		sth_rele(sh);
		return sth_err(EBADF);
	}
	if (sh->sh_opens++ == 0)
		sth_hold(sh);
	sth_plumb_unlock(sh);
	n->n_next = sth_names;
	sth_names = n;
	__atomic_add_fetch(&sth_nattached, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&sth_names_lock);
	return 0;
}

static int fdetach_path(const char *path);

int fdetach(const char *upath)
{
	char *path;
	int err;

	sth_ucopy_init();
	if ((err = sth_ustrdup(upath, PATH_MAX, &path)) != 0)
		return sth_err(err);
	err = fdetach_path(path);
	free(path);
	return err;
}

static int fdetach_path(const char *path)
{
	struct sth_name **pp, *n;
	int err = path_may(path, false);

	if (err == EPERM)
		return sth_err(EPERM);
	pthread_mutex_lock(&sth_names_lock);
	for (pp = &sth_names; (n = *pp) != NULL; pp = &n->n_next) {
		if (n->n_sh != NULL && strcmp(n->n_path, path) == 0) {
			struct sthead *sh = n->n_sh;
			*pp = n->n_next;
			pthread_mutex_unlock(&sth_names_lock);
			sth_fattach_unpublish(path);
			free(n->n_path);
			free(n);
			sth_close_open(sh, O_NONBLOCK);
			sth_rele(sh);
			return 0;
		}
	}
	pthread_mutex_unlock(&sth_names_lock);
	return sth_err(err ? err : EINVAL);	/* exists: not attached */
}

/* ---- close ---- */

/* Wait up to the close time for the write queues below the head to
 * empty (sd_plumb held; it is released while sleeping is not needed:
 * the stream is ours alone now). */
static void drain_write_side(struct sthead *sh)
{
	long deadline = sth_now_ms() + sh->sh_closetime;

	for (;;) {
		bool empty = true;
		struct strthread *t = str_enter();
		for (queue_t *q = __atomic_load_n(&sh->sh_sd.sd_wq->q_next,
						  __ATOMIC_ACQUIRE);
		     q != NULL;
		     q = __atomic_load_n(&q->q_next, __ATOMIC_ACQUIRE)) {
			if (q->q_stream != &sh->sh_sd ||
			    (__atomic_load_n(&q->q_flag, __ATOMIC_RELAXED) &
			     QREADR))
				break;
			/* a service procedure between its getq and its
			 * putbq holds a message too */
			if (__atomic_load_n(&q->q_first, __ATOMIC_ACQUIRE) ||
			    (__atomic_load_n(&q->q_flag, __ATOMIC_ACQUIRE) &
			     (QENAB | QINSERVICE))) {
				empty = false;
				break;
			}
		}
		str_exit(t);
		if (empty || sth_now_ms() >= deadline)
			return;
		streams_run();
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
}

extern void sth_pipe_close(struct sthead *sh);

/*
 * Last close of a pipe end (plumbing held, outside entries).  As in SVR4
 * its modules are closed while the pipe is still whole, so that what
 * their close procedures send (tirdwr's T_ORDREL_REQ, for one) reaches
 * the other end; then the pipe is cut.
 */
static void pipe_close_end(struct sthead *sh, int oflag, cred_t *cr)
{
	queue_t *top;

	while ((top = str_top(&sh->sh_sd)) != NULL &&
	       q_pair(top)->qp_kind == QP_MOD) {
		sh->sh_sd.sd_pushcnt--;
		str_qdetach(top, oflag, cr);
	}
	sth_pipe_close(sh);
}

/*
 * The last reference to an open file went away (outside any entry).  The
 * stream closes with its last open (an fattach counts as one, and a link
 * below a multiplexer holds it too).
 */
void sth_close_file(struct sth_file *f)
{
	struct sthead *sh = f->f_sh;
	int oflag = f->f_oflag;

	str_synchronize();	/* nobody still looks at f */
	free(f);
	sth_close_open(sh, oflag);
}

/* The end of a stream whose last open ended (plumbing lock held, its
 * links below undone): closed, out of the device table, a pipe end cut
 * from its peer (which sees the hangup), every queue closed.  Sleepers
 * are woken by sth_close_wake once the lock is let go. */
void sth_close_locked(struct sthead *sh, int oflag, cred_t *cr)
{
	__atomic_or_fetch(&sh->sh_flag, STRCLOSED, __ATOMIC_RELEASE);
	dev_del(sh);
	if (sh_flags(sh) & STRPIPE)
		pipe_close_end(sh, oflag, cr);
	str_close_all(&sh->sh_sd, oflag, cr);
}

/* Wake anybody still sleeping on a closed stream (they hold no
 * descriptor). */
void sth_close_wake(struct sthead *sh)
{
	sth_wake_readers(sh);
	sth_wake(&sh->sh_wseq, &sh->sh_wwaiters);
	sth_wake(&sh->sh_iseq, &sh->sh_iwaiters);
}

/* One open of sh ends; the last one closes it. */
void sth_close_open(struct sthead *sh, int oflag)
{
	cred_t cr;

	sth_links_lock();	/* before the plumbing lock, always */
	sth_plumb_lock(sh);
	/* (a broken stream's modules are not closed: sth_fork.c) */
	if (--sh->sh_opens > 0 || (sh_flags(sh) & (STPLEX | STRBROKEN))) {
		bool last = sh->sh_opens == 0;
		sth_plumb_unlock(sh);
		sth_links_unlock();
		if (last)
			sth_rele(sh);	/* the link keeps its own reference */
		return;
	}
	str_getcred(&cr);
	sth_unlink_all_locked(sh);
	sth_links_unlock();
	if (!(oflag & (O_NONBLOCK | O_NDELAY)) && sh->sh_closetime > 0 &&
	    !(sh_flags(sh) & (STRHUP | STWRERR)) &&
	    /* at exit only what may leave the process: a driver with a
	     * kernel event source (a pipe to another process) */
	    (!str_shutting_down ||
	     __atomic_load_n(&sh->sh_sd.sd_kev, __ATOMIC_ACQUIRE) != NULL))
		drain_write_side(sh);
	sth_close_locked(sh, oflag, &cr);
	sth_plumb_unlock(sh);
	sth_close_wake(sh);
	sth_rele(sh);		/* the opens' reference */
}

/* Shutdown at exit: close a stream no descriptor will close now. */
void sth_shutdown_stream(struct stdata *sd)
{
	struct sthead *sh = SH(sd);
	cred_t cr;

	if (sd->sd_head != sh)
		return;		/* not a stream head's stream */
	str_getcred(&cr);
	sth_plumb_lock(sh);
	if (!(sh_flags(sh) & STRCLOSED)) {
		/* (as in sth_close_open: what may leave the process) */
		if (__atomic_load_n(&sd->sd_kev, __ATOMIC_ACQUIRE) != NULL &&
		    sh->sh_closetime > 0 && !(sh_flags(sh) & (STRHUP | STWRERR)))
			drain_write_side(sh);
		__atomic_or_fetch(&sh->sh_flag, STRCLOSED, __ATOMIC_RELEASE);
		if (sh_flags(sh) & STRPIPE)
			pipe_close_end(sh, O_NONBLOCK, &cr);
		str_close_all(sd, O_NONBLOCK, &cr);
	}
	sth_plumb_unlock(sh);
}
