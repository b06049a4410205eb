/*
 * ddi.c -- the DDI helpers modules call: drv_getparm and friends, kmem,
 * and the credentials handed to open and close procedures.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/ddi.h>

#include "strsubr.h"

int drv_getparm(unsigned int parm, void *valuep)
{
	if (valuep == NULL)
		return -1;
	switch (parm) {
	case LBOLT:
		*(unsigned long *)valuep = (unsigned long)str_lbolt();
		return 0;
	case TIME:
		*(time_t *)valuep = time(NULL);
		return 0;
	case PPID:
		*(pid_t *)valuep = getpid();
		return 0;
	case PSID:
		*(pid_t *)valuep = getsid(0);
		return 0;
	case PPGRP:
		*(pid_t *)valuep = getpgrp();
		return 0;
	case UCRED:
	case SYSCRED: {
		static __thread cred_t cr;
		str_getcred(&cr);
		if (parm == SYSCRED)
			cr.cr_uid = cr.cr_ruid = 0;
		*(cred_t **)valuep = &cr;
		return 0;
	}
	default:
		return -1;
	}
}

#define USEC_PER_TICK	(1000000L / HZ)

/* (both saturate instead of overflowing) */
long drv_hztousec(long ticks)
{
	if (ticks <= 0)
		return 0;
	return ticks > LONG_MAX / USEC_PER_TICK ? LONG_MAX
						: ticks * USEC_PER_TICK;
}

long drv_usectohz(long usec)
{
	if (usec <= 0)
		return 0;
	return usec / USEC_PER_TICK + (usec % USEC_PER_TICK != 0);
}

void drv_usecwait(long usec)
{
	struct timespec ts;

	if (usec <= 0)
		return;
	ts.tv_sec = usec / 1000000;
	ts.tv_nsec = (usec % 1000000) * 1000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int drv_priv(cred_t *cr)
{
	return (cr != NULL && cr->cr_uid == 0) ? 0 : EPERM;
}

void *kmem_alloc(size_t size, int flag)
{
	(void)flag;
	return malloc(size ? size : 1);
}

void *kmem_zalloc(size_t size, int flag)
{
	(void)flag;
	return calloc(1, size ? size : 1);
}

void kmem_free(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

/* Credentials that outlive the call that made them (an M_IOCTL's
 * ioc_cr, which a module may look at after the caller gave up waiting):
 * one copy of each distinct set, kept for good on a list only ever
 * pushed onto (no lock: a fork finds it whole).  Out of memory: a set
 * nobody has, so that a privilege check fails. */
struct cred_kept {
	struct cred_kept *next;		/* const once pushed */
	cred_t cr;
};
static struct cred_kept *_Atomic cred_list;
static cred_t cred_nobody = { (uid_t)-1, (gid_t)-1, (uid_t)-1, (gid_t)-1,
			      (uid_t)-1, (gid_t)-1, 0, { 0 } };

cred_t *str_cred_keep(const cred_t *cr)
{
	struct cred_kept *k, *head;

	head = atomic_load_explicit(&cred_list, memory_order_acquire);
	for (;;) {
		for (k = head; k != NULL; k = k->next)
			if (memcmp(&k->cr, cr, sizeof(*cr)) == 0)
				return &k->cr;
		if ((k = malloc(sizeof(*k))) == NULL)
			return &cred_nobody;
		k->cr = *cr;
		k->next = head;
		if (atomic_compare_exchange_strong_explicit(
			    &cred_list, &head, k, memory_order_acq_rel,
			    memory_order_acquire))
			return &k->cr;
		free(k);	/* another pushed: look again (head is it) */
	}
}

void str_getcred(cred_t *cr)
{
	gid_t groups[32];
	int n;

	memset(cr, 0, sizeof(*cr));
	cr->cr_uid = geteuid();
	cr->cr_gid = getegid();
	cr->cr_ruid = getuid();
	cr->cr_rgid = getgid();
	cr->cr_suid = cr->cr_uid;
	cr->cr_sgid = cr->cr_gid;
	n = getgroups(32, groups);
	if (n > 0) {
		cr->cr_ngroups = (unsigned)n;
		memcpy(cr->cr_groups, groups, (size_t)n * sizeof(gid_t));
	}
}
