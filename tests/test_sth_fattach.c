/*
 * test_sth_fattach.c -- named STREAMS pipes between unrelated processes
 * (src/head/sth_fattach.c): fattach() here, open() in a separately
 * exec'd program (this one, run again with posix_spawn and a role as
 * argument), without and with connld; fdetach; no leftovers.
 *
 * The registry is a private directory ($STREAMS_FATTACH_DIR), so the
 * test sees exactly what it leaves there.
 */
#include "sth.h"

#include <dirent.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>

extern char **environ;

static char dir[64], file1[96], file2[96];

/* ---- the other process ---- */

static int bad;

#define HCHECK(c) do {							\
	if (!(c)) {							\
		fprintf(stderr, "helper %s:%d: FAIL: %s (errno %d %s)\n",	\
			__FILE__, __LINE__, #c, errno, strerror(errno));	\
		bad++;							\
	}								\
} while (0)

/* Shares the attached end: talks, then sees the hangup when the other
 * end closes. */
static int helper_shared(const char *path)
{
	struct pollfd p;
	char b[64];
	int fd = open(path, O_RDWR);

	HCHECK(fd >= 0);
	if (fd < 0)
		return 1;
	HCHECK(isastream(fd) == 1);
	HCHECK(write(fd, "hello from B", 12) == 12);
	p.fd = fd;
	p.events = POLLIN;
	HCHECK(poll(&p, 1, 5000) == 1 && (p.revents & POLLIN));
	HCHECK(read(fd, b, sizeof(b)) == 4 && memcmp(b, "to B", 4) == 0);
	HCHECK(write(fd, "got it", 6) == 6);
	/* the server closes its end: hangup, then end of file, EPIPE */
	p.revents = 0;
	HCHECK(poll(&p, 1, 5000) == 1 && (p.revents & POLLHUP));
	HCHECK(read(fd, b, sizeof(b)) == 0);
	errno = 0;
	HCHECK(write(fd, "x", 1) == -1 && errno == EPIPE);
	close(fd);
	return bad;
}

/* Gets a pipe of its own through connld. */
static int helper_connld(const char *path, const char *tag)
{
	char b[64], want[64];
	int fd = open(path, O_RDWR), n;

	HCHECK(fd >= 0);
	if (fd < 0)
		return 1;
	HCHECK(isastream(fd) == 1);
	n = snprintf(b, sizeof(b), "I am %s", tag);
	HCHECK(write(fd, b, (size_t)n) == n);
	n = snprintf(want, sizeof(want), "hello %s", tag);
	HCHECK(read(fd, b, sizeof(b)) == n && memcmp(b, want, (size_t)n) == 0);
	/* the server closes the new pipe: end of file */
	HCHECK(read(fd, b, sizeof(b)) == 0);
	close(fd);
	return bad;
}

/* Opens through connld, writes, and exits: the server sees the
 * hangup. */
static int helper_quit(const char *path)
{
	int fd = open(path, O_WRONLY);

	HCHECK(fd >= 0);
	HCHECK(write(fd, "bye", 3) == 3);
	return bad;
}

/* Opens what is a plain file again (after fdetach). */
static int helper_plain(const char *path)
{
	char b[16];
	int fd = open(path, O_RDONLY);

	HCHECK(fd >= 0);
	if (fd < 0)
		return 1;
	HCHECK(isastream(fd) == 0);
	HCHECK(read(fd, b, sizeof(b)) == 5 && memcmp(b, "plain", 5) == 0);
	close(fd);
	return bad;
}

/* Opens and closes at once. */
static int helper_touch(const char *path)
{
	int fd = open(path, O_RDWR);

	HCHECK(fd >= 0 && isastream(fd) == 1);
	close(fd);
	return bad;
}

/* Opening an attached end whose other end is gone: ENXIO. */
static int helper_enxio(const char *path)
{
	errno = 0;
	HCHECK(open(path, O_RDWR) == -1 && errno == ENXIO);
	return bad;
}

/* Attaching a file another process has attached: EBUSY. */
static int helper_busy(const char *path)
{
	int fds[2];

	HCHECK(s_pipe(fds) == 0);
	errno = 0;
	HCHECK(fattach(fds[1], path) == -1 && errno == EBUSY);
	close(fds[0]);
	close(fds[1]);
	return bad;
}

static int helper(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && strcmp(argv[2], "shared") == 0)
		return helper_shared(argv[3]);
	if (argc == 5 && strcmp(argv[2], "connld") == 0)
		return helper_connld(argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[2], "quit") == 0)
		return helper_quit(argv[3]);
	if (argc == 4 && strcmp(argv[2], "plain") == 0)
		return helper_plain(argv[3]);
	if (argc == 4 && strcmp(argv[2], "touch") == 0)
		return helper_touch(argv[3]);
	if (argc == 4 && strcmp(argv[2], "enxio") == 0)
		return helper_enxio(argv[3]);
	if (argc == 4 && strcmp(argv[2], "busy") == 0)
		return helper_busy(argv[3]);
	fprintf(stderr, "helper: bad arguments\n");
	return 2;
}

/* ---- this process ---- */

/* Run this program again as a helper: role, path[, tag]. */
static pid_t spawn(const char *role, const char *path, const char *tag)
{
	char self[PATH_MAX];
	char *argv[] = { self, "--helper", (char *)role, (char *)path,
			 (char *)tag, NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	REQUIRE(n > 0);
	self[n] = '\0';
	fflush(stdout);
	fflush(stderr);
	REQUIRE(posix_spawn(&pid, self, NULL, NULL, argv, environ) == 0);
	return pid;
}

static void make_file(const char *path, const char *text)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

/* Entries of the registry directory other than "." and "..". */
static int registry_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	REQUIRE(d != NULL);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		n++;
	}
	closedir(d);
	return n;
}

/* Without connld: the other process shares the attached end. */
static void test_shared(void)
{
	int fds[2];
	char b[64];
	pid_t pid, pid2;

	open_pipe(fds);
	CHECK_RET(fattach(fds[1], file1), 0);
	CHECK_EQ(registry_entries(), 1);	/* its socket */
	/* a second attach, by another process: EBUSY */
	pid2 = spawn("busy", file1, NULL);
	CHECK_EQ(wait_child(pid2), 0);
	pid = spawn("shared", file1, NULL);
	CHECK_RET(read(fds[0], b, sizeof(b)), 12);
	CHECK_MEM(b, "hello from B", 12);
	CHECK_RET(write(fds[0], "to B", 4), 4);
	CHECK_RET(read(fds[0], b, sizeof(b)), 6);
	CHECK_MEM(b, "got it", 6);
	close(fds[0]);		/* B sees the hangup */
	CHECK_EQ(wait_child(pid), 0);
	pid = spawn("enxio", file1, NULL);
	CHECK_EQ(wait_child(pid), 0);
	close(fds[1]);
	CHECK_RET(fdetach(file1), 0);
	CHECK_EQ(registry_entries(), 0);
	/* not attached any more: the plain file, here and there */
	CHECK_ERR(fdetach(file1), EINVAL);
	pid = spawn("plain", file1, NULL);
	CHECK_EQ(wait_child(pid), 0);
}

/* A reader asleep on the attached end since before another process
 * first opened it (the pipe then got its cross-process driver under
 * it) still gets what is written to it. */
static void *read_one(void *arg)
{
	int *fdp = arg;
	char c = 0;

	if (read(fdp[0], &c, 1) != 1)
		c = 0;
	fdp[1] = c;
	return NULL;
}

static void test_early_reader(void)
{
	int fds[2], arg[2];
	pthread_t t;
	pid_t pid;

	open_pipe(fds);
	CHECK_RET(fattach(fds[1], file1), 0);
	arg[0] = fds[1];
	arg[1] = -1;
	REQUIRE(pthread_create(&t, NULL, read_one, arg) == 0);
	usleep(50000);		/* (asleep, or about to be) */
	pid = spawn("touch", file1, NULL);
	CHECK_EQ(wait_child(pid), 0);
	CHECK_RET(write(fds[0], "r", 1), 1);
	pthread_join(t, NULL);
	CHECK_EQ(arg[1], 'r');
	CHECK_RET(fdetach(file1), 0);
	close(fds[0]);
	close(fds[1]);
}

/* Serve one connld opener: its pipe end arrives on fds[0]. */
static void serve_one(int srv, const char *tag)
{
	struct strrecvfd rf;
	char b[64], want[64];
	int n;

	memset(&rf, 0xff, sizeof(rf));
	CHECK_RET(ioctl(srv, I_RECVFD, &rf), 0);
	CHECK_EQ(rf.uid, geteuid());
	CHECK_EQ(rf.gid, getegid());
	if (rf.fd < 0)
		return;
	CHECK_RET(isastream(rf.fd), 1);
	n = snprintf(want, sizeof(want), "I am %s", tag);
	CHECK_RET(read(rf.fd, b, sizeof(b)), n);
	CHECK_MEM(b, want, (size_t)n);
	n = snprintf(b, sizeof(b), "hello %s", tag);
	CHECK_RET(write(rf.fd, b, (size_t)n), n);
	close(rf.fd);
}

/* With connld: each opener its own pipe, the other end to the server. */
static void test_connld(void)
{
	struct strrecvfd rf;
	int fds[2], mine;
	char b[16];
	pid_t a, c;

	open_pipe(fds);
	CHECK_RET(ioctl(fds[1], I_PUSH, "connld"), 0);
	CHECK_RET(fattach(fds[1], file2), 0);
	/* one at a time, so each is served in order */
	a = spawn("connld", file2, "first");
	serve_one(fds[0], "first");
	CHECK_EQ(wait_child(a), 0);
	c = spawn("connld", file2, "second");
	serve_one(fds[0], "second");
	CHECK_EQ(wait_child(c), 0);
	/* an opener that goes away: its message, then the hangup */
	c = spawn("quit", file2, NULL);
	CHECK_RET(ioctl(fds[0], I_RECVFD, &rf), 0);
	CHECK_EQ(wait_child(c), 0);
	{
		struct pollfd p = { rf.fd, POLLIN, 0 };

		CHECK_RET(read(rf.fd, b, sizeof(b)), 3);
		CHECK_MEM(b, "bye", 3);
		CHECK_RET(poll(&p, 1, 5000), 1);
		CHECK(p.revents & POLLHUP);
		CHECK_RET(read(rf.fd, b, sizeof(b)), 0);
		CHECK_ERR(write(rf.fd, "x", 1), EPIPE);
		close(rf.fd);
	}
	/* an open in this process gets a new pipe as well */
	mine = open(file2, O_RDWR);
	CHECK(mine >= 0);
	CHECK_RET(ioctl(fds[0], I_RECVFD, &rf), 0);
	CHECK_RET(write(mine, "local", 5), 5);
	CHECK_RET(read(rf.fd, b, sizeof(b)), 5);
	CHECK_MEM(b, "local", 5);
	close(rf.fd);
	close(mine);
	/* nothing else was sent to the server */
	CHECK_RET(set_nonblock(fds[0], true), 0);
	CHECK_ERR(ioctl(fds[0], I_RECVFD, &rf), EAGAIN);
	CHECK_RET(fdetach(file2), 0);
	close(fds[0]);
	close(fds[1]);
	CHECK_EQ(registry_entries(), 0);
}

/* Whatever way the test ends: its files go (the registry directory
 * only if empty: what the checks found there stays to be seen). */
static void cleanup(void)
{
	unlink(file1);
	unlink(file2);
	rmdir(dir);
}

/* fattach needs the caller to own the file (EPERM) and the owner to be
 * able to write it (EACCES), unless privileged; fdetach needs ownership
 * too.  As root, checked in a child made "nobody"; as anyone else, with
 * a file root owns. */
static int perm_child(void)
{
	char own[] = "/tmp/test_sth_fattach_ownXXXXXX";
	int p[2], f;

	if (s_pipe(p) != 0)
		return 1;
	errno = 0;
	HCHECK(fattach(p[0], file1) == -1 && errno == EPERM);
	f = mkstemp(own);
	HCHECK(f >= 0);
	if (f < 0)
		return 1;
	HCHECK(fchmod(f, 0444) == 0);
	errno = 0;
	HCHECK(fattach(p[0], own) == -1 && errno == EACCES);
	HCHECK(fchmod(f, 0644) == 0);
	HCHECK(fattach(p[0], own) == 0);
	HCHECK(fdetach(own) == 0);
	close(f);
	unlink(own);
	close(p[0]);
	close(p[1]);
	return bad;
}

static void test_permissions(void)
{
	int p[2], st = -1;
	pid_t pid;

	if (geteuid() != 0) {
		open_pipe(p);
		CHECK_ERR(fattach(p[0], "/etc/passwd"), EPERM);
		CHECK_RET(close(p[0]), 0);
		CHECK_RET(close(p[1]), 0);
		return;
	}
	CHECK_RET(chmod(file1, 0666), 0);	/* (root's, open to all) */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		_exit(perm_child() ? 1 : 0);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_RET(chmod(file1, 0600), 0);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--helper") == 0)
		return helper(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "/tmp/test_sth_fattachXXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	REQUIRE(setenv("STREAMS_FATTACH_DIR", dir, 1) == 0);
	snprintf(file1, sizeof(file1), "%s.one", dir);
	snprintf(file2, sizeof(file2), "%s.two", dir);
	atexit(cleanup);
	make_file(file1, "plain");
	make_file(file2, "plain");
	test_shared();
	test_early_reader();
	test_connld();
	test_permissions();
	CHECK_EQ(streams_in_use(), 0);
	/* nothing remains */
	CHECK_EQ(registry_entries(), 0);
	CHECK_RET(rmdir(dir), 0);
	T_DONE();
}
