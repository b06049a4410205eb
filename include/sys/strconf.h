/*
 * <sys/strconf.h> -- registration of STREAMS modules and drivers at run time,
 * as in Linux Fast-STREAMS: a module fills a struct fmodsw, a driver a
 * struct cdevsw, and registers it; the executive then finds it by name
 * (I_PUSH, autopush, /dev/streams/<name>) or by major device number.
 *
 *	static struct fmodsw mymod = {
 *		.f_name = "mymod", .f_str = &mymodinfo, .f_flag = D_MP,
 *	};
 *	register_strmod(&mymod);
 *
 * Errors are returned as negative errno values (LfS convention):
 * -EINVAL bad entry, -EEXIST duplicate name, -EBUSY in use / major taken,
 * -ENOENT not registered, -ENOMEM, -ENXIO no free major.
 */
#ifndef _SYS_STRCONF_H
#define _SYS_STRCONF_H

#include <sys/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FMNAMESZ	8	/* longest module name (I_LOOK, I_LIST) */
#define DEVNAMESZ	31	/* longest driver name */
#define MAXAPUSH	8	/* modules autopushed per device */
#define NSTRPUSH	64	/* default push limit per stream */

#ifndef THIS_MODULE
#define THIS_MODULE	((void *)0)
#endif

struct fmodsw {
	const char *f_name;		/* module name, at most FMNAMESZ chars */
	struct streamtab *f_str;	/* queue initialisation */
	unsigned int f_flag;		/* D_MP, D_MTPERMOD, D_MTQPAIR, ... */
	unsigned int f_modid;		/* set at registration: module id */
	void *f_kmod;			/* accepted for LfS compatibility */
	/* private to the executive */
	int f_count;			/* open instances; registry lock */
	struct strsyncq *f_syncq;	/* D_MTPERMOD perimeter */
	struct fmodsw *f_next;		/* registry list */
};

struct cdevsw {
	const char *d_name;		/* driver name, at most DEVNAMESZ chars */
	struct streamtab *d_str;	/* queue initialisation */
	unsigned int d_flag;		/* D_MP, ..., D_CLONE */
	unsigned int d_modid;		/* set at registration: module id */
	void *d_kmod;			/* accepted for LfS compatibility */
	mode_t d_mode;			/* accepted */
	major_t d_major;		/* set at registration: major number */
	/* private to the executive */
	int d_count;			/* open streams; registry lock */
	struct strsyncq *d_syncq;	/* D_MTPERMOD perimeter */
	struct cdevsw *d_next;		/* registry list */
};

int register_strmod(struct fmodsw *fmod);
int unregister_strmod(struct fmodsw *fmod);
/* major 0 allocates a free major; returns the major (> 0) or -errno. */
int register_strdev(struct cdevsw *cdev, major_t major);
int unregister_strdev(struct cdevsw *cdev, major_t major);
/* register_strnod / unregister_strnod: LfS aliases of the above. */
#define register_strnod(cdev, minor)	register_strdev((cdev), 0)

/* Make open(path) open driver (a clone open when clone is non-zero):
 * how /dev/ticots, /dev/udp, ... reach their drivers.  0, -EINVAL (path
 * not absolute), -EEXIST (path already named), -ENOMEM. */
int strdev_alias(const char *path, const char *driver, int clone);

struct fmodsw *fmod_find(const char *name);	/* NULL if none */
struct cdevsw *cdev_find(const char *name);
struct cdevsw *cdev_get(major_t major);

/* Autopush configuration (the sad driver's SAD_SAP does the same). */
struct strapush {
	unsigned int sap_cmd;		/* SAP_ONE, SAP_RANGE, SAP_ALL, SAP_CLEAR */
	major_t sap_major;
	minor_t sap_minor;
	minor_t sap_lastminor;		/* SAP_RANGE: last minor */
	unsigned int sap_npush;		/* modules in sap_list */
	char sap_list[MAXAPUSH][FMNAMESZ + 1];
	int sap_anchor;			/* anchor position (0: none) */
};

#define SAP_CLEAR	0	/* remove configuration */
#define SAP_ONE		1	/* one minor */
#define SAP_RANGE	2	/* minors sap_minor..sap_lastminor */
#define SAP_ALL		3	/* every minor */
#define SAP_ANCHOR	4	/* flag: sap_anchor is valid */

/* 0 or -errno (-EINVAL, -ENOSTR no such driver, -EEXIST overlaps,
 * -ENODEV no such configuration). */
int autopush_add(struct strapush *sap);
int autopush_del(struct strapush *sap);
/* Copy the configuration that applies to (major, minor) into *sap;
 * 0, or -ENODEV when nothing applies. */
int autopush_find(major_t major, minor_t minor, struct strapush *sap);

#ifdef __cplusplus
}
#endif

#endif /* _SYS_STRCONF_H */
