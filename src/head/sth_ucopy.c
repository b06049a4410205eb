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
 *
 * On x86-64 (outside the sanitizer builds, whose checks must see every
 * access) sth_ucopy() needs no jump buffer: it copies with a routine of
 * its own whose instructions lie between ucopy_begin and ucopy_end, and
 * the handler, finding the fault's instruction pointer in that range,
 * resumes at ucopy_efault, which returns EFAULT, as a kernel's exception
 * table does.  The copy then costs what a call and a copy cost: no
 * registers saved per call (sigsetjmp was a tenth of a getmsg).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "sthead.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UCOPY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define UCOPY_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && !defined(UCOPY_SANITIZED)
#define UCOPY_ASM 1
#else
#define UCOPY_ASM 0
#endif

#if UCOPY_ASM
/*
 * int ucopy_x86(void *dst, const void *src, size_t n): 0, or EFAULT when
 * an access faults (the handler resumes at ucopy_efault).  Short copies
 * (the strbufs, flags, TPI headers) with moves that overlap at the end:
 * under 4 bytes one at a time, under 16 two 4- or 8-byte moves, under
 * 256 16 bytes at a time.  From 256 bytes: with AVX up to 8 KiB 128
 * bytes a loop (four 32-byte moves), without it up to 2 KiB 64 bytes a
 * loop (four 16-byte moves), the last 32 or 16 bytes moved apart; longer
 * copies with rep movsb.  rep movsb is slow to start (two 1 KiB copies
 * from and to a 64 KiB working set: 28 ns against 14 with the AVX loop,
 * 23 with SSE; at 256 bytes 22 against 4 and 6 ns) and as fast as any
 * loop from about 2 KiB (SSE) or 8 KiB (AVX) on -- except where the
 * destination lies 1 to 31 bytes above the source in a page's offsets
 * ((dst - src) mod 4096): there this host's AMD EPYC (no ERMS flag)
 * copies 16 KiB in 14 us instead of 0.5, about a byte a cycle.  Where
 * two buffers fall that way is up to the allocator and the address
 * space layout, so a 16 KiB TCP_STREAM run took 9 K or 18 K user cycles
 * per message from one run to the next.  Those copies (offsets 1 to 63)
 * take the loop whatever their length.  The AVX path ends with
 * vzeroupper, as does the fault path when AVX is in use.
 */
extern char ucopy_begin[], ucopy_end[], ucopy_efault[];
int ucopy_x86(void *dst, const void *src, size_t n);
/* 1: the AVX loop (set once, before any stream exists; STREAMS_NOAVX=1
 * keeps the SSE loop, so its tests run on machines with AVX too).
 * "used": only the asm reads it, which link-time optimisation cannot see. */
unsigned char ucopy_avx __attribute__((used, visibility("hidden")));
__asm__(
	"	.text\n"
	"	.globl ucopy_x86, ucopy_begin, ucopy_end, ucopy_efault\n"
	"	.hidden ucopy_x86, ucopy_begin, ucopy_end, ucopy_efault\n"
	"	.p2align 4\n"
	"	.type ucopy_x86, @function\n"
	"ucopy_x86:\n"
	"ucopy_begin:\n"
	"	cmp $16, %rdx\n"
	"	jae 16f\n"
	"	cmp $8, %rdx\n"
	"	jae 8f\n"
	"	cmp $4, %rdx\n"
	"	jae 4f\n"
	"	test %rdx, %rdx\n"
	"	jz 0f\n"
	"1:	movzbl (%rsi), %eax\n"
	"	movb %al, (%rdi)\n"
	"	inc %rsi\n"
	"	inc %rdi\n"
	"	dec %rdx\n"
	"	jnz 1b\n"
	"0:	xor %eax, %eax\n"
	"	ret\n"
	"4:	movl (%rsi), %eax\n"
	"	movl -4(%rsi,%rdx), %ecx\n"
	"	movl %eax, (%rdi)\n"
	"	movl %ecx, -4(%rdi,%rdx)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"8:	movq (%rsi), %rax\n"
	"	movq -8(%rsi,%rdx), %rcx\n"
	"	movq %rax, (%rdi)\n"
	"	movq %rcx, -8(%rdi,%rdx)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"16:	cmp $256, %rdx\n"
	"	jae 256f\n"
	"	movdqu -16(%rsi,%rdx), %xmm1\n"
	"	lea -16(%rdi,%rdx), %r8\n"
	"17:	movdqu (%rsi), %xmm0\n"
	"	movdqu %xmm0, (%rdi)\n"
	"	add $16, %rsi\n"
	"	add $16, %rdi\n"
	"	sub $16, %rdx\n"
	"	cmp $16, %rdx\n"
	"	ja 17b\n"
	"	movdqu %xmm1, (%r8)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	/* 256 bytes or more */
	"256:	cmp $8192, %rdx\n"
	"	ja 10f\n"
	"	cmpb $0, ucopy_avx(%rip)\n"
	"	je 64f\n"
	"32:	vmovdqu -32(%rsi,%rdx), %ymm4\n"
	"	lea -32(%rdi,%rdx), %r8\n"
	"33:	vmovdqu (%rsi), %ymm0\n"
	"	vmovdqu 32(%rsi), %ymm1\n"
	"	vmovdqu 64(%rsi), %ymm2\n"
	"	vmovdqu 96(%rsi), %ymm3\n"
	"	vmovdqu %ymm0, (%rdi)\n"
	"	vmovdqu %ymm1, 32(%rdi)\n"
	"	vmovdqu %ymm2, 64(%rdi)\n"
	"	vmovdqu %ymm3, 96(%rdi)\n"
	"	sub $-128, %rsi\n"
	"	sub $-128, %rdi\n"
	"	add $-128, %rdx\n"
	"	cmp $128, %rdx\n"
	"	ja 33b\n"
	"34:	cmp $32, %rdx\n"
	"	jbe 35f\n"
	"	vmovdqu (%rsi), %ymm0\n"
	"	vmovdqu %ymm0, (%rdi)\n"
	"	add $32, %rsi\n"
	"	add $32, %rdi\n"
	"	sub $32, %rdx\n"
	"	jmp 34b\n"
	"35:	vmovdqu %ymm4, (%r8)\n"
	"	vzeroupper\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"64:	cmp $2048, %rdx\n"
	"	jae 10f\n"
	"63:	movdqu -16(%rsi,%rdx), %xmm4\n"
	"	lea -16(%rdi,%rdx), %r8\n"
	"65:	movdqu (%rsi), %xmm0\n"
	"	movdqu 16(%rsi), %xmm1\n"
	"	movdqu 32(%rsi), %xmm2\n"
	"	movdqu 48(%rsi), %xmm3\n"
	"	movdqu %xmm0, (%rdi)\n"
	"	movdqu %xmm1, 16(%rdi)\n"
	"	movdqu %xmm2, 32(%rdi)\n"
	"	movdqu %xmm3, 48(%rdi)\n"
	"	add $64, %rsi\n"
	"	add $64, %rdi\n"
	"	sub $64, %rdx\n"
	"	cmp $64, %rdx\n"
	"	ja 65b\n"
	"66:	cmp $16, %rdx\n"
	"	jbe 67f\n"
	"	movdqu (%rsi), %xmm0\n"
	"	movdqu %xmm0, (%rdi)\n"
	"	add $16, %rsi\n"
	"	add $16, %rdi\n"
	"	sub $16, %rdx\n"
	"	jmp 66b\n"
	"67:	movdqu %xmm4, (%r8)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	/* rep movsb, unless the destination lies 1 to 63 bytes above
	 * the source in a page's offsets: then the loop */
	"10:	mov %rdi, %rax\n"
	"	sub %rsi, %rax\n"
	"	and $4095, %eax\n"
	"	cmp $64, %eax\n"
	"	jae 9f\n"
	"	test %eax, %eax\n"
	"	jz 9f\n"
	"	cmpb $0, ucopy_avx(%rip)\n"
	"	jne 32b\n"
	"	jmp 63b\n"
	"9:	mov %rdx, %rcx\n"
	"	rep movsb\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"ucopy_end:\n"
	"ucopy_efault:\n"
	"	cmpb $0, ucopy_avx(%rip)\n"
	"	je 1f\n"
	"	vzeroupper\n"
	"1:	mov $14, %eax\n"	/* EFAULT */
	"	ret\n"
	"	.size ucopy_x86, .-ucopy_x86\n");
#endif

static __thread sigjmp_buf *volatile ucopy_jmp;
static __thread sigset_t ucopy_mask;	/* the mask when the fault came */
static struct sigaction old_segv, old_bus;
static pthread_once_t ucopy_once = PTHREAD_ONCE_INIT;

static void ucopy_fault(int sig, siginfo_t *si, void *ctx)
{
	sigjmp_buf *jb = ucopy_jmp;
	struct sigaction *old;

#if UCOPY_ASM
	greg_t *ip = &((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
	/* (si_code > 0: raised by the fault, not sent with kill) */
	if (si->si_code > 0 && *ip >= (greg_t)(uintptr_t)ucopy_begin &&
	    *ip < (greg_t)(uintptr_t)ucopy_end) {
		*ip = (greg_t)(uintptr_t)ucopy_efault;	/* the return of
							   the handler goes
							   there */
		return;
	}
#endif
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

#if UCOPY_ASM
	const char *e = getenv("STREAMS_NOAVX");

	__builtin_cpu_init();
	ucopy_avx = __builtin_cpu_supports("avx") &&
		    (e == NULL || *e == '\0' || *e == '0') ? 1 : 0;
#endif
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
	if (n == 0)
		return 0;
	if (dst == NULL || src == NULL)
		return EFAULT;		/* never valid (and memcpy's contract) */
#if UCOPY_ASM
	return ucopy_x86(dst, src, n);
#else
	sigjmp_buf jb;

	if (sigsetjmp(jb, 0) != 0)
		return faulted();
	ucopy_jmp = &jb;
	memcpy(dst, src, n);
	ucopy_jmp = NULL;
	return 0;
#endif
}

/* The application's NUL-terminated string into dst (max bytes, the NUL
 * included): 0, EFAULT, or ENAMETOOLONG.  A plain loop, byte by byte,
 * never past the end (as the kernel reads a path): a library strnlen
 * may be a sanitizer's, which faults where our handler cannot step in. */
int sth_ustrcpy(char *dst, const char *u, size_t max)
{
	sigjmp_buf jb;
	size_t n;

	if (u == NULL)
		return EFAULT;
	if (sigsetjmp(jb, 0) != 0)
		return faulted();
	ucopy_jmp = &jb;
	for (n = 0; n < max; n++) {
		char c = ((const volatile char *)u)[n];

		dst[n] = c;
		if (c == '\0')
			break;
	}
	ucopy_jmp = NULL;
	return n < max ? 0 : ENAMETOOLONG;
}

/* A copy of the application's NUL-terminated string of at most max
 * bytes: 0 with *out (free it), EFAULT, or ENAMETOOLONG. */
int sth_ustrdup(const char *u, size_t max, char **out)
{
	char *p = malloc(max + 1);
	int err;

	if (p == NULL)
		return ENOMEM;
	if ((err = sth_ustrcpy(p, u, max + 1)) != 0) {
		free(p);
		return err;
	}
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
