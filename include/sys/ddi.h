/*
 * <sys/ddi.h> -- SVR4.2 DDI helpers for modules and drivers.
 */
#ifndef _SYS_DDI_H
#define _SYS_DDI_H

#include <sys/types.h>
#include <sys/sysmacros.h>
#include <sys/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline major_t getmajor(dev_t dev) { return (major_t)major(dev); }
static inline minor_t getminor(dev_t dev) { return (minor_t)minor(dev); }
static inline dev_t makedevice(major_t maj, minor_t min)
{
	return makedev(maj, min);
}
#define getemajor(dev)	getmajor(dev)
#define geteminor(dev)	getminor(dev)
#define etoimajor(m)	(m)
#define itoemajor(m, prev) (m)

/* drv_getparm parameters */
#define LBOLT	1	/* ticks since the executive started */
#define UPROCP	2
#define PPGRP	3
#define UCRED	4
#define TIME	5	/* seconds since the epoch */
#define PPID	6
#define PSID	7
#define SYSCRED	8

int drv_getparm(unsigned int parm, void *valuep);
long drv_hztousec(long ticks);
long drv_usectohz(long usec);
void drv_usecwait(long usec);
int drv_priv(cred_t *cr);	/* 0 if privileged, else EPERM */

/* Kernel memory, mapped onto the C heap. */
#define KM_SLEEP	0
#define KM_NOSLEEP	1
void *kmem_alloc(size_t size, int flag);
void *kmem_zalloc(size_t size, int flag);
void kmem_free(void *ptr, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* _SYS_DDI_H */
