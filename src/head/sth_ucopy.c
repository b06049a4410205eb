/*
 * sth_ucopy.c -- copying to and from application memory with EFAULT.
 *
 * A kernel copies user memory with fault handling; a bad pointer given
 * to read(), getmsg() or putmsg() gets EFAULT, not a crash.  We do the
 * same in user space: while sth_ucopy() copies, a per-thread jump buffer
 * is armed; a SIGSEGV or SIGBUS raised by that copy jumps back and the
 * copy fails with EFAULT.  The handler is installed once with SA_NODEFER
 * (the jump leaves the signal unblocked without a system call) and hands
 * every fault that is not ours to whatever was installed before it: the
 * default action, a sanitizer, or the application's own handler.  A
 * program that installs its own SIGSEGV handler later loses the EFAULT
 * (its handler sees the fault), which is no worse than a crash.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "sthead.h"

static __thread sigjmp_buf *volatile ucopy_jmp;
static __thread sigset_t ucopy_mask;	/* the mask when the fault came */
static struct sigaction old_segv, old_bus;
static pthread_once_t ucopy_once = PTHREAD_ONCE_INIT;

static void ucopy_fault(int sig, siginfo_t *si, void *ctx)
{
	sigjmp_buf *jb = ucopy_jmp;
	struct sigaction *old;

	if (jb != NULL) {
		ucopy_jmp = NULL;
		ucopy_mask = ((ucontext_t *)ctx)->uc_sigmask;
		siglongjmp(*jb, 1);
	}
	/* not a guarded copy: what would have happened without us */
	old = sig == SIGSEGV ? &old_segv : &old_bus;
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction != NULL) {
			old->sa_sigaction(sig, si, ctx);
			return;
		}
	} else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	/* default: restore it; the faulting instruction runs again and
	 * the fault takes its course */
	sigaction(sig, old, NULL);
}

static void ucopy_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ucopy_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
}

void sth_ucopy_init(void)
{
	pthread_once(&ucopy_once, ucopy_install);
}

/* After a jump out of the handler: the jump skipped the return that
 * would have restored the signal mask of the faulting code (and a
 * wrapper around our handler, a sanitizer's, may have blocked more), so
 * put back the mask the fault interrupted, on this rare path only. */
static int faulted(void)
{
	pthread_sigmask(SIG_SETMASK, &ucopy_mask, NULL);
	return EFAULT;
}

int sth_ucopy(void *dst, const void *src, size_t n)
{
	sigjmp_buf jb;

	if (n == 0)
		return 0;
	if (dst == NULL || src == NULL)
		return EFAULT;		/* never valid (and memcpy's contract) */
	if (sigsetjmp(jb, 0) != 0)
		return faulted();
	ucopy_jmp = &jb;
	memcpy(dst, src, n);
	ucopy_jmp = NULL;
	return 0;
}

/* A copy of the application's NUL-terminated string of at most max
 * bytes: 0 with *out (free it), EFAULT, or ENAMETOOLONG. */
int sth_ustrdup(const char *u, size_t max, char **out)
{
	sigjmp_buf jb;
	size_t n;
	char *p;

	if (u == NULL)
		return EFAULT;
	if (sigsetjmp(jb, 0) != 0)
		return faulted();
	ucopy_jmp = &jb;
	/* a plain loop: a library strnlen may be a sanitizer's, which
	 * faults where this handler cannot step in */
	for (n = 0; n <= max && ((const volatile char *)u)[n] != '\0'; n++)
		;
	ucopy_jmp = NULL;
	if (n > max)
		return ENAMETOOLONG;
	p = malloc(n + 1);
	if (p == NULL)
		return ENOMEM;
	if (sth_ucopy(p, u, n) != 0) {
		free(p);
		return EFAULT;
	}
	p[n] = '\0';
	*out = p;
	return 0;
}

int sth_uiov(const struct iovec *u, int cnt, struct iovec *loc, int nloc,
	     struct iovec **out)
{
	struct iovec *v = loc;

	if (cnt < 0 || cnt > 1024)
		return EINVAL;
	if (cnt > nloc && (v = malloc((size_t)cnt * sizeof(*v))) == NULL)
		return ENOMEM;
	if (sth_ucopy(v, u, (size_t)cnt * sizeof(*v)) != 0) {
		if (v != loc)
			free(v);
		return EFAULT;
	}
	*out = v;
	return 0;
}
