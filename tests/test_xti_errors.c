/*
 * test_xti_errors -- t_errno, t_errlist, t_nerr, t_strerror, t_error,
 * t_sysconf.  t_errno is an lvalue of its own in each thread; every
 * error number has its message (t_strerror is t_errlist's entry, an
 * unknown number a message too); t_error writes "msg: message" to stderr,
 * with strerror(errno) after a TSYSERR, no prefix for an empty or NULL
 * msg, and keeps errno; t_sysconf(_SC_T_IOV_MAX) is T_IOV_MAX and an
 * unknown name TSYSERR/EINVAL.
 */
#include "ferry.h"

static int other_errno = -1;
static int *other_addr;

static void *thread_main(void *arg)
{
	(void)arg;
	other_errno = t_errno;		/* a fresh thread: 0 */
	t_errno = TNODATA;
	other_addr = &t_errno;
	return NULL;
}

/* What t_error(msg) writes, with t_errno te and errno e. */
static void error_text(const char *msg, int te, int e, char *out, size_t n)
{
	int p[2], saved = dup(2), r, after;
	ssize_t k;

	REQUIRE(pipe(p) == 0);
	REQUIRE(dup2(p[1], 2) == 2);
	t_errno = te;
	errno = e;
	r = t_error(msg);
	after = errno;
	fflush(stderr);
	dup2(saved, 2);
	CHECK_EQ(r, 0);
	CHECK_EQ(after, e);
	close(saved);
	close(p[1]);
	k = read(p[0], out, n - 1);
	out[k > 0 ? k : 0] = '\0';
	close(p[0]);
}

int main(void)
{
	pthread_t th;
	char buf[256];

	/* per thread */
	t_errno = TLOOK;
	REQUIRE(pthread_create(&th, NULL, thread_main, NULL) == 0);
	pthread_join(th, NULL);
	CHECK_EQ(other_errno, 0);
	CHECK_EQ(t_errno, TLOOK);
	CHECK(other_addr != &t_errno);
	/* the list */
	CHECK_EQ(t_nerr, TPROTO + 1);
	for (int i = 1; i < t_nerr; i++) {
		CHECK(t_errlist[i] != NULL && t_errlist[i][0] != '\0');
		CHECK(t_strerror(i) == t_errlist[i]);
	}
	CHECK(strcmp(t_strerror(TBADF), "Illegal file descriptor") == 0);
	CHECK(t_strerror(-1) != NULL && t_strerror(t_nerr) != NULL);
	CHECK(strcmp(t_strerror(1000), "Unknown error") == 0);
	/* t_error */
	error_text("conn", TLOOK, 0, buf, sizeof(buf));
	CHECK(strcmp(buf, "conn: An event requires attention\n") == 0);
	error_text("open", TSYSERR, EPERM, buf, sizeof(buf));
	CHECK(strcmp(buf, "open: System error: Operation not permitted\n") == 0);
	error_text("", TFLOW, 0, buf, sizeof(buf));
	CHECK(strcmp(buf, "Can't send message - (blocked)\n") == 0);
	error_text(NULL, TBADF, 0, buf, sizeof(buf));
	CHECK(strcmp(buf, "Illegal file descriptor\n") == 0);
	/* t_sysconf */
	CHECK_EQ(t_sysconf(_SC_T_IOV_MAX), T_IOV_MAX);
	CHECK_EQ(T_IOV_MAX, 16);
	CHECK_TSYS(t_sysconf(-5), EINVAL);
	CHECK_TSYS(t_sysconf(_SC_T_IOV_MAX + 1000), EINVAL);
	T_DONE();
}
