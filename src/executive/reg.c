/*
 * reg.c -- the registry of modules and drivers, and autopush.
 *
 * Modules (struct fmodsw) and drivers (struct cdevsw) register at run
 * time and are found by name (I_PUSH, /dev/streams/<name>) or major.
 * Every open instance holds its entry (f_count/d_count), so an entry in
 * use cannot be unregistered (-EBUSY).  Autopush configurations name a
 * driver major and a minor, a range of minors or all minors, and up to
 * MAXAPUSH modules pushed at open.
 *
 * All state is under strreg_lock, which is the outermost lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strsubr.h"

#define MAX_MAJOR	4096
#define DYN_MAJOR_BASE	231	/* first dynamically allocated major */

pthread_mutex_t strreg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fmodsw *fmod_list;		/* strreg_lock */
static struct cdevsw *cdev_list;		/* strreg_lock */
static struct cdevsw *cdev_major[MAX_MAJOR];	/* strreg_lock */
static unsigned int next_modid = 1000;		/* strreg_lock */

struct apush {
	struct apush *next;
	struct strapush sap;
};
static struct apush *apush_list;		/* strreg_lock */

/* ---- validation ---- */

static bool qinit_ok(const struct qinit *qi)
{
	return qi != NULL && qi->qi_putp != NULL;
}

static bool streamtab_ok(const struct streamtab *st, bool driver)
{
	if (st == NULL || !qinit_ok(st->st_rdinit) ||
	    !qinit_ok(st->st_wrinit) || st->st_rdinit->qi_qopen == NULL)
		return false;
	/* a multiplexer gives both lower sides or neither */
	if ((st->st_muxrinit == NULL) != (st->st_muxwinit == NULL))
		return false;
	if (st->st_muxrinit != NULL &&
	    (!driver || !qinit_ok(st->st_muxrinit) ||
	     !qinit_ok(st->st_muxwinit)))
		return false;
	return true;
}

static bool name_ok(const char *name, size_t max)
{
	size_t n;

	if (name == NULL)
		return false;
	n = strnlen(name, max + 1);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (name[i] == '/' || (unsigned char)name[i] <= ' ')
			return false;
	return true;
}

/* ---- modules ---- */

static struct fmodsw *fmod_find_locked(const char *name)
{
	for (struct fmodsw *f = fmod_list; f != NULL; f = f->f_next)
		if (strcmp(f->f_name, name) == 0)
			return f;
	return NULL;
}

int register_strmod(struct fmodsw *fmod)
{
	if (fmod == NULL || !name_ok(fmod->f_name, FMNAMESZ) ||
	    !streamtab_ok(fmod->f_str, false))
		return -EINVAL;
	if (!str_core_ready)
		str_init_core();
	pthread_mutex_lock(&strreg_lock);
	for (struct fmodsw *f = fmod_list; f != NULL; f = f->f_next) {
		if (f == fmod || strcmp(f->f_name, fmod->f_name) == 0) {
			pthread_mutex_unlock(&strreg_lock);
			return -EEXIST;
		}
	}
	fmod->f_count = 0;
	fmod->f_syncq = NULL;
	if (fmod->f_str->st_rdinit->qi_minfo != NULL &&
	    fmod->f_str->st_rdinit->qi_minfo->mi_idnum != 0)
		fmod->f_modid = fmod->f_str->st_rdinit->qi_minfo->mi_idnum;
	else
		fmod->f_modid = next_modid++;
	fmod->f_next = fmod_list;
	fmod_list = fmod;
	pthread_mutex_unlock(&strreg_lock);
	return 0;
}

int unregister_strmod(struct fmodsw *fmod)
{
	struct fmodsw **pp;

	if (fmod == NULL)
		return -EINVAL;
	pthread_mutex_lock(&strreg_lock);
	for (pp = &fmod_list; *pp != NULL; pp = &(*pp)->f_next)
		if (*pp == fmod)
			break;
	if (*pp == NULL) {
		pthread_mutex_unlock(&strreg_lock);
		return -ENOENT;
	}
	if (fmod->f_count > 0) {
		pthread_mutex_unlock(&strreg_lock);
		return -EBUSY;
	}
	/* autopush lists naming it stay; pushing then fails with EINVAL */
	*pp = fmod->f_next;
	fmod->f_next = NULL;
	strsyncq_release(fmod->f_syncq);
	fmod->f_syncq = NULL;
	pthread_mutex_unlock(&strreg_lock);
	return 0;
}

struct fmodsw *fmod_find(const char *name)
{
	struct fmodsw *f;

	if (name == NULL)
		return NULL;
	if (!str_initialised)
		str_init();
	pthread_mutex_lock(&strreg_lock);
	f = fmod_find_locked(name);
	pthread_mutex_unlock(&strreg_lock);
	return f;
}

/* Count one more instance; 0, or EINVAL if f is not registered. */
int strreg_hold_mod(struct fmodsw *f)
{
	int err = EINVAL;

	pthread_mutex_lock(&strreg_lock);
	for (struct fmodsw *p = fmod_list; p != NULL; p = p->f_next)
		if (p == f) {
			f->f_count++;
			err = 0;
			break;
		}
	pthread_mutex_unlock(&strreg_lock);
	return err;
}

void strreg_rele_mod(struct fmodsw *f)
{
	pthread_mutex_lock(&strreg_lock);
	f->f_count--;
	pthread_mutex_unlock(&strreg_lock);
}

/* ---- drivers ---- */

static struct cdevsw *cdev_find_locked(const char *name)
{
	for (struct cdevsw *d = cdev_list; d != NULL; d = d->d_next)
		if (strcmp(d->d_name, name) == 0)
			return d;
	return NULL;
}

int register_strdev(struct cdevsw *cdev, major_t major)
{
	if (cdev == NULL || !name_ok(cdev->d_name, DEVNAMESZ) ||
	    !streamtab_ok(cdev->d_str, true))
		return -EINVAL;
	if (major >= MAX_MAJOR)
		return -ENXIO;
	if (!str_core_ready)
		str_init_core();
	pthread_mutex_lock(&strreg_lock);
	for (struct cdevsw *d = cdev_list; d != NULL; d = d->d_next) {
		if (d == cdev || strcmp(d->d_name, cdev->d_name) == 0) {
			pthread_mutex_unlock(&strreg_lock);
			return -EEXIST;
		}
	}
	if (major == 0) {
		for (major = DYN_MAJOR_BASE; major < MAX_MAJOR; major++)
			if (cdev_major[major] == NULL)
				break;
		if (major == MAX_MAJOR) {
			for (major = 1; major < DYN_MAJOR_BASE; major++)
				if (cdev_major[major] == NULL)
					break;
			if (major == DYN_MAJOR_BASE) {
				pthread_mutex_unlock(&strreg_lock);
				return -ENXIO;
			}
		}
	} else if (cdev_major[major] != NULL) {
		pthread_mutex_unlock(&strreg_lock);
		return -EBUSY;
	}
	cdev->d_major = major;
	cdev->d_count = 0;
	cdev->d_syncq = NULL;
	if (cdev->d_str->st_rdinit->qi_minfo != NULL &&
	    cdev->d_str->st_rdinit->qi_minfo->mi_idnum != 0)
		cdev->d_modid = cdev->d_str->st_rdinit->qi_minfo->mi_idnum;
	else
		cdev->d_modid = next_modid++;
	cdev_major[major] = cdev;
	cdev->d_next = cdev_list;
	cdev_list = cdev;
	pthread_mutex_unlock(&strreg_lock);
	return (int)major;
}

int unregister_strdev(struct cdevsw *cdev, major_t major)
{
	struct cdevsw **pp;

	if (cdev == NULL)
		return -EINVAL;
	pthread_mutex_lock(&strreg_lock);
	for (pp = &cdev_list; *pp != NULL; pp = &(*pp)->d_next)
		if (*pp == cdev)
			break;
	if (*pp == NULL) {
		pthread_mutex_unlock(&strreg_lock);
		return -ENOENT;
	}
	if (major != 0 && major != cdev->d_major) {
		pthread_mutex_unlock(&strreg_lock);
		return -EINVAL;
	}
	if (cdev->d_count > 0) {
		pthread_mutex_unlock(&strreg_lock);
		return -EBUSY;
	}
	*pp = cdev->d_next;
	cdev->d_next = NULL;
	cdev_major[cdev->d_major] = NULL;
	/* its autopush configuration goes with it */
	for (struct apush **ap = &apush_list; *ap != NULL;) {
		if ((*ap)->sap.sap_major == cdev->d_major) {
			struct apush *dead = *ap;
			*ap = dead->next;
			free(dead);
		} else {
			ap = &(*ap)->next;
		}
	}
	strsyncq_release(cdev->d_syncq);
	cdev->d_syncq = NULL;
	pthread_mutex_unlock(&strreg_lock);
	return 0;
}

struct cdevsw *cdev_find(const char *name)
{
	struct cdevsw *d;

	if (name == NULL)
		return NULL;
	if (!str_initialised)
		str_init();
	pthread_mutex_lock(&strreg_lock);
	d = cdev_find_locked(name);
	pthread_mutex_unlock(&strreg_lock);
	return d;
}

struct cdevsw *cdev_get(major_t major)
{
	struct cdevsw *d = NULL;

	if (major >= MAX_MAJOR)
		return NULL;
	if (!str_initialised)
		str_init();
	pthread_mutex_lock(&strreg_lock);
	d = cdev_major[major];
	pthread_mutex_unlock(&strreg_lock);
	return d;
}

int strreg_hold_dev(struct cdevsw *d)
{
	int err = ENXIO;

	pthread_mutex_lock(&strreg_lock);
	if (d != NULL && d->d_major < MAX_MAJOR && cdev_major[d->d_major] == d) {
		d->d_count++;
		err = 0;
	}
	pthread_mutex_unlock(&strreg_lock);
	return err;
}

void strreg_rele_dev(struct cdevsw *d)
{
	pthread_mutex_lock(&strreg_lock);
	d->d_count--;
	pthread_mutex_unlock(&strreg_lock);
}

/* ---- autopush ---- */

static bool apush_covers(const struct strapush *a, minor_t minor)
{
	switch (a->sap_cmd & ~SAP_ANCHOR) {
	case SAP_ALL:
		return true;
	case SAP_ONE:
		return a->sap_minor == minor;
	case SAP_RANGE:
		return minor >= a->sap_minor && minor <= a->sap_lastminor;
	}
	return false;
}

static bool apush_overlaps(const struct strapush *a, const struct strapush *b)
{
	unsigned int ca = a->sap_cmd & ~SAP_ANCHOR, cb = b->sap_cmd & ~SAP_ANCHOR;
	minor_t alo, ahi, blo, bhi;

	if (a->sap_major != b->sap_major)
		return false;
	if (ca == SAP_ALL || cb == SAP_ALL)
		return true;
	alo = a->sap_minor;
	ahi = ca == SAP_RANGE ? a->sap_lastminor : a->sap_minor;
	blo = b->sap_minor;
	bhi = cb == SAP_RANGE ? b->sap_lastminor : b->sap_minor;
	return alo <= bhi && blo <= ahi;
}

int autopush_add(struct strapush *sap)
{
	struct apush *ap;
	unsigned int cmd;

	if (sap == NULL)
		return -EINVAL;
	cmd = sap->sap_cmd & ~SAP_ANCHOR;
	if (cmd != SAP_ONE && cmd != SAP_RANGE && cmd != SAP_ALL)
		return -EINVAL;
	if (sap->sap_npush < 1 || sap->sap_npush > MAXAPUSH)
		return -EINVAL;
	if (cmd == SAP_RANGE && sap->sap_lastminor <= sap->sap_minor)
		return -ERANGE;
	if ((sap->sap_cmd & SAP_ANCHOR) &&
	    (sap->sap_anchor < 0 || (unsigned)sap->sap_anchor > sap->sap_npush))
		return -EINVAL;
	if (!str_initialised)
		str_init();
	pthread_mutex_lock(&strreg_lock);
	if (sap->sap_major >= MAX_MAJOR || cdev_major[sap->sap_major] == NULL) {
		pthread_mutex_unlock(&strreg_lock);
		return -ENOSTR;
	}
	for (unsigned i = 0; i < sap->sap_npush; i++) {
		char name[FMNAMESZ + 1];
		memcpy(name, sap->sap_list[i], FMNAMESZ);
		name[FMNAMESZ] = '\0';
		if (fmod_find_locked(name) == NULL) {
			pthread_mutex_unlock(&strreg_lock);
			return -EINVAL;
		}
	}
	for (ap = apush_list; ap != NULL; ap = ap->next) {
		if (apush_overlaps(&ap->sap, sap)) {
			pthread_mutex_unlock(&strreg_lock);
			return -EEXIST;
		}
	}
	ap = calloc(1, sizeof(*ap));
	if (ap == NULL) {
		pthread_mutex_unlock(&strreg_lock);
		return -ENOMEM;
	}
	ap->sap = *sap;
	for (unsigned i = 0; i < MAXAPUSH; i++)
		ap->sap.sap_list[i][FMNAMESZ] = '\0';
	ap->next = apush_list;
	apush_list = ap;
	pthread_mutex_unlock(&strreg_lock);
	return 0;
}

int autopush_del(struct strapush *sap)
{
	struct apush **pp;

	if (sap == NULL)
		return -EINVAL;
	pthread_mutex_lock(&strreg_lock);
	for (pp = &apush_list; *pp != NULL; pp = &(*pp)->next) {
		struct strapush *a = &(*pp)->sap;
		unsigned int c = a->sap_cmd & ~SAP_ANCHOR;
		if (a->sap_major != sap->sap_major)
			continue;
		/* SVR4: clear names the configuration by its first minor;
		 * an SAP_ALL configuration is named by minor 0 */
		if ((c == SAP_ALL && sap->sap_minor == 0) ||
		    (c != SAP_ALL && a->sap_minor == sap->sap_minor)) {
			struct apush *dead = *pp;
			*pp = dead->next;
			free(dead);
			pthread_mutex_unlock(&strreg_lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&strreg_lock);
	return -ENODEV;
}

int autopush_find(major_t major, minor_t minor, struct strapush *sap)
{
	struct apush *ap, *best = NULL;
	int rank = 0;

	pthread_mutex_lock(&strreg_lock);
	for (ap = apush_list; ap != NULL; ap = ap->next) {
		unsigned int c = ap->sap.sap_cmd & ~SAP_ANCHOR;
		int r = c == SAP_ONE ? 3 : c == SAP_RANGE ? 2 : 1;
		if (ap->sap.sap_major == major && apush_covers(&ap->sap, minor) &&
		    r > rank) {
			best = ap;
			rank = r;
		}
	}
	if (best != NULL && sap != NULL)
		*sap = best->sap;
	pthread_mutex_unlock(&strreg_lock);
	return best != NULL ? 0 : -ENODEV;
}
