/*
 * sth_fd.c -- the descriptor table: which descriptor numbers are streams.
 *
 * sth_fdtab[fd] is the open file (struct sth_file) a stream descriptor
 * names, NULL for every other descriptor.  Lookups take no lock: they
 * happen inside an executive entry, and an open file is freed only after
 * a grace period once no descriptor names it and no call holds it.  The
 * table is sized once from RLIMIT_NOFILE (zero pages cost nothing until
 * touched).  An open file counts in f_refs every descriptor naming it and
 * every call sleeping on it; the last release closes it.  A hook
 * (sth_set_closed_hook) hears of every number that stops naming a stream.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sthead.h"

#define FDCAP_MAX	(1 << 20)
#define FDCAP_MIN	1024

struct sth_file **sth_fdtab;
int sth_fdcap;
pthread_mutex_t sth_fd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t sth_fd_once = PTHREAD_ONCE_INIT;
static int sth_fd_initerr;
/* Told when a number stops naming a stream, before the kernel can give
 * it out again (libxti forgets its endpoint); atomic. */
static void (*sth_closed_hook)(int fd);

void sth_set_closed_hook(void (*fn)(int fd))
{
	__atomic_store_n(&sth_closed_hook, fn, __ATOMIC_RELEASE);
}

static void closed_note(int fd)
{
	void (*fn)(int) = __atomic_load_n(&sth_closed_hook, __ATOMIC_ACQUIRE);

	if (fn != NULL)
		fn(fd);
}

static void fd_init_once(void)
{
	struct rlimit rl;
	rlim_t cap = FDCAP_MIN;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		cap = rl.rlim_max;
		if (cap == RLIM_INFINITY || cap > FDCAP_MAX)
			cap = FDCAP_MAX;
		if (cap < FDCAP_MIN)
			cap = FDCAP_MIN;
	}
	sth_fdtab = calloc(cap, sizeof(*sth_fdtab));
	if (sth_fdtab == NULL) {
		sth_fd_initerr = ENOMEM;
		return;
	}
	__atomic_store_n(&sth_fdcap, (int)cap, __ATOMIC_RELEASE);
}

int sth_fd_init(void)
{
	pthread_once(&sth_fd_once, fd_init_once);
	return sth_fd_initerr;
}

struct sth_file *sth_file_new(struct sthead *sh, int oflag)
{
	struct sth_file *f = calloc(1, sizeof(*f));

	if (f != NULL) {
		f->f_sh = sh;
		f->f_oflag = oflag;
	}
	return f;
}

/* Name f by fd; takes one reference for the name.  A stale entry (the
 * kernel gave the number out again after a close we did not see) goes
 * to *stale, for the caller to release once it holds no lock and is in
 * no entry: releasing it may close its stream, which takes the link lock
 * and that stream's plumbing lock (callers hold another's). */
int sth_fd_install(int fd, struct sth_file *f, struct sth_file **stale)
{
	int err;

	*stale = NULL;
	if ((err = sth_fd_init()) != 0)
		return err;
	if (fd < 0 || fd >= sth_fdcap)
		return EMFILE;
	__atomic_add_fetch(&f->f_refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&sth_fd_lock);
	*stale = sth_fdtab[fd];
	__atomic_store_n(&sth_fdtab[fd], f, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sth_fd_lock);
	if (*stale != NULL)
		closed_note(fd);
	return 0;
}

/* Forget fd; returns its open file (the caller releases it) or NULL. */
struct sth_file *sth_fd_remove(int fd)
{
	struct sth_file *f;

	if (fd < 0 || fd >= __atomic_load_n(&sth_fdcap, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&sth_fd_lock);
	f = sth_fdtab[fd];
	if (f != NULL)
		__atomic_store_n(&sth_fdtab[fd], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sth_fd_lock);
	if (f != NULL)
		closed_note(fd);
	return f;
}

/* Shutdown: forget every stream descriptor; the streams close as their
 * last descriptor goes (without waiting for their write sides). */
void sth_fd_shutdown(void)
{
	int cap = __atomic_load_n(&sth_fdcap, __ATOMIC_ACQUIRE);

	for (int fd = 0; fd < cap; fd++) {
		if (__atomic_load_n(&sth_fdtab[fd], __ATOMIC_ACQUIRE) == NULL)
			continue;
		struct sth_file *f = sth_fd_remove(fd);
		if (f != NULL)
			sth_file_rele(f);
	}
}

/* In a fork's child (one thread): the parent's other threads, asleep in
 * calls that held open files, are not here, and their holds would keep
 * the child's copies open for good; each file counts the numbers naming
 * it, nothing more. */
void sth_fd_atfork_child(void)
{
	int cap = __atomic_load_n(&sth_fdcap, __ATOMIC_ACQUIRE);

	for (int fd = 0; fd < cap; fd++)
		if (sth_fdtab[fd] != NULL)
			sth_fdtab[fd]->f_refs = 0;
	for (int fd = 0; fd < cap; fd++)
		if (sth_fdtab[fd] != NULL)
			sth_fdtab[fd]->f_refs++;
}

/* Take one more reference, inside the entry that found f: false when
 * its last one is gone already (a close of its last descriptor is under
 * way, and f goes with the grace period) -- taking one then would close
 * it a second time. */
bool sth_file_tryhold(struct sth_file *f)
{
	int n = __atomic_load_n(&f->f_refs, __ATOMIC_ACQUIRE);

	do {
		if (n <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&f->f_refs, &n, n + 1, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return true;
}

/* A call inside the entry that found f is about to leave it to wait:
 * keep f (once; *held says so).  EBADF when a close on another thread
 * has dropped its last reference already: the stream is closing, and a
 * hold taken from zero would close it a second time. */
int sth_call_hold(struct sth_file *f, bool *held)
{
	if (*held)
		return 0;
	if (!sth_file_tryhold(f))
		return EBADF;
	*held = true;
	return 0;
}

/* Drop one reference; the last closes the file (outside any entry). */
void sth_file_rele(struct sth_file *f)
{
	if (f == NULL)
		return;
	if (__atomic_sub_fetch(&f->f_refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	sth_close_file(f);
}

int sth_not_stream(int fd)
{
	return sth_real.fcntl(fd, F_GETFD) < 0 ? EBADF : ENOSTR;
}

int sth_fd_errno(int fd, int err)
{
	struct strthread *t = str_enter();
	bool ours = sth_lookup(fd) != NULL;

	str_exit(t);
	return ours ? err : sth_not_stream(fd);
}
