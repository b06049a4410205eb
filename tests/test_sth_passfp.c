/*
 * test_sth_passfp.c -- I_SENDFD and I_RECVFD over a STREAMS pipe whose
 * ends are in different processes (src/drivers/shmpipe.c: the
 * descriptor goes on the doorbell socket, a record in the ring keeps
 * its place among the messages).
 *
 * Each scenario forks a child that plays one end and exits with the
 * number of its failures; the parent plays the other end.
 */
#include "sth.h"
#include "sthead.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>


/* Descriptors open in this process. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	REQUIRE(d != NULL);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;		/* the directory's own */
}

/* A temporary file holding text, open for reading and writing. */
static int temp_file(const char *text)
{
	char name[] = "/tmp/test_sth_passfpXXXXXX";
	int fd = mkstemp(name);

	REQUIRE(fd >= 0);
	unlink(name);
	REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	return fd;
}

/* A file and a socket to the child, which uses both. */
static void test_file_and_socket(void)
{
	int fds[2], sv[2], file;
	char b[64];
	pid_t pid;

	file = temp_file("passed file");
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	pid = fork_with_pipe(fds);
	if (pid == 0) {
		struct strrecvfd rf;
		int bad = 0;

		close(file);
		close(sv[0]);
		close(sv[1]);
		/* the file: reads from its start, at the shared offset */
		memset(&rf, 0xff, sizeof(rf));
		if (ioctl(fds[1], I_RECVFD, &rf) != 0 || rf.fd < 0)
			exit(1);
		bad += rf.uid != geteuid() || rf.gid != getegid();
		bad += lseek(rf.fd, 0, SEEK_SET) != 0;
		bad += read(rf.fd, b, sizeof(b)) != 11 ||
		       memcmp(b, "passed file", 11) != 0;
		bad += write(rf.fd, " and more", 9) != 9;
		close(rf.fd);
		/* the socket: a reply through it */
		if (ioctl(fds[1], I_RECVFD, &rf) != 0 || rf.fd < 0)
			exit(bad + 1);
		bad += write(rf.fd, "via socket", 10) != 10;
		close(rf.fd);
		bad += write(fds[1], "done", 4) != 4;
		exit(bad);
	}
	close(fds[1]);
	CHECK_RET(ioctl(fds[0], I_SENDFD, file), 0);
	CHECK_RET(ioctl(fds[0], I_SENDFD, sv[1]), 0);
	close(sv[1]);
	CHECK_RET(read(fds[0], b, sizeof(b)), 4);
	CHECK_MEM(b, "done", 4);
	CHECK_RET(read(sv[0], b, sizeof(b)), 10);
	CHECK_MEM(b, "via socket", 10);
	/* the child's write went to the same open file */
	CHECK_RET(pread(file, b, sizeof(b), 0), 20);
	CHECK_MEM(b, "passed file and more", 20);
	CHECK_EQ(wait_child(pid), 0);
	close(sv[0]);
	close(file);
	close(fds[0]);
}

/* data, descriptor, data: read() stops at the descriptor (EBADMSG),
 * I_RECVFD on data is EBADMSG too, and the order holds.  Then the other
 * way: the child sends, the parent receives. */
static void test_order(void)
{
	int fds[2], file;
	char b[16];
	pid_t pid;

	file = temp_file("x");
	pid = fork_with_pipe(fds);
	if (pid == 0) {
		struct strrecvfd rf;
		struct stat a, c;
		int bad = 0;

		bad += ioctl(fds[1], I_SRDOPT, RMSGD) != 0;
		bad += read(fds[1], b, sizeof(b)) != 5 ||
		       memcmp(b, "first", 5) != 0;
		errno = 0;
		bad += read(fds[1], b, sizeof(b)) != -1 || errno != EBADMSG;
		bad += ioctl(fds[1], I_RECVFD, &rf) != 0;
		bad += fstat(rf.fd, &a) != 0 || fstat(file, &c) != 0 ||
		       a.st_ino != c.st_ino || a.st_dev != c.st_dev;
		/* close-on-exec is not inherited from the sender's copy */
		bad += fcntl(rf.fd, F_GETFD) < 0;
		close(rf.fd);
		errno = 0;
		bad += ioctl(fds[1], I_RECVFD, &rf) != -1 || errno != EBADMSG;
		bad += read(fds[1], b, sizeof(b)) != 6 ||
		       memcmp(b, "second", 6) != 0;
		/* now the child sends: data, descriptor */
		bad += write(fds[1], "back", 4) != 4;
		bad += ioctl(fds[1], I_SENDFD, file) != 0;
		bad += write(fds[1], "end", 3) != 3;
		exit(bad);
	}
	close(fds[1]);
	CHECK_RET(write(fds[0], "first", 5), 5);
	CHECK_RET(ioctl(fds[0], I_SENDFD, file), 0);
	CHECK_RET(write(fds[0], "second", 6), 6);
	{
		struct strrecvfd rf;
		struct stat a, c;

		CHECK_RET(ioctl(fds[0], I_SRDOPT, RMSGD), 0);
		CHECK_ERR(ioctl(fds[0], I_RECVFD, &rf), EBADMSG);
		CHECK_RET(read(fds[0], b, sizeof(b)), 4);
		CHECK_MEM(b, "back", 4);
		CHECK_ERR(read(fds[0], b, sizeof(b)), EBADMSG);
		CHECK_RET(ioctl(fds[0], I_RECVFD, &rf), 0);
		CHECK_EQ(rf.uid, geteuid());
		CHECK_EQ(rf.gid, getegid());
		CHECK_RET(fstat(rf.fd, &a), 0);
		CHECK_RET(fstat(file, &c), 0);
		CHECK_EQ(a.st_ino, c.st_ino);
		CHECK(rf.fd != file);
		close(rf.fd);
		CHECK_RET(read(fds[0], b, sizeof(b)), 3);
		CHECK_MEM(b, "end", 3);
	}
	CHECK_EQ(wait_child(pid), 0);
	close(file);
	close(fds[0]);
}

/* Descriptors nobody receives are closed with the end: whether they
 * reached the stream head, wait in the end's list or in the socket. */
static void test_unclaimed(void)
{
	int fds[2], before, file;
	struct pollfd pfd;
	pid_t pid;

	file = temp_file("y");
	before = count_fds();
	pid = fork_with_pipe(fds);
	if (pid == 0) {
		int bad = 0;

		for (int i = 0; i < 5; i++)
			bad += ioctl(fds[1], I_SENDFD, file) != 0;
		bad += write(fds[1], "z", 1) != 1;
		exit(bad);
	}
	close(fds[1]);
	CHECK_EQ(wait_child(pid), 0);
	/* something is there: the first descriptor */
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	CHECK_RET(poll(&pfd, 1, 5000), 1);
	CHECK(count_fds() > before + 1);
	close(fds[0]);
	CHECK_EQ(count_fds(), before);
	close(file);
}

/* The same when the receiver takes one and goes away: the child's
 * copies of what it did not take are closed at its exit, and the
 * sender's copies are closed once sent. */
static void test_unclaimed_child(void)
{
	int fds[2], before, file;
	char b[4];
	pid_t pid;

	file = temp_file("w");
	pid = fork_with_pipe(fds);
	if (pid == 0) {
		struct strrecvfd rf;
		int bad = 0;

		bad += ioctl(fds[1], I_RECVFD, &rf) != 0;
		close(rf.fd);
		bad += write(fds[1], "k", 1) != 1;
		exit(bad);
	}
	before = count_fds();	/* (the fork gave the pipe its driver) */
	for (int i = 0; i < 3; i++)
		CHECK_RET(ioctl(fds[0], I_SENDFD, file), 0);
	CHECK_RET(read(fds[0], b, sizeof(b)), 1);
	CHECK_EQ(wait_child(pid), 0);
	CHECK_EQ(count_fds(), before);
	close(fds[1]);
	close(fds[0]);
	close(file);
}

/* More descriptors in flight than the kernel lets the sender have
 * (RLIMIT_NOFILE: ETOOMANYREFS; a root sender first gives up root, whom
 * the limit does not bind): every one still arrives, in order with the
 * data around it -- a descriptor that cannot go waits at the sender,
 * with what follows it.  (They used to be dropped, silently.) */
#define INFLIGHT_N	120

static void test_many_in_flight(void)
{
	int fds[2], go[2], file, bad = 0;
	struct stat want;
	char b[8];
	pid_t pid;

	file = temp_file("many");
	REQUIRE(fstat(file, &want) == 0);
	REQUIRE(pipe(go) == 0);
	pid = fork_with_pipe(fds);
	if (pid == 0) {
		struct rlimit rl = { 48, 48 };

		close(go[1]);
		if (geteuid() == 0 && setuid(65534) != 0)
			exit(100);
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			exit(101);
		for (int i = 0; i < INFLIGHT_N; i++) {
			while (ioctl(fds[1], I_SENDFD, file) != 0) {
				if (errno != EAGAIN)
					exit(102);
				usleep(1000);
			}
			if (i % 40 == 39)
				bad += write(fds[1], "d", 1) != 1;
		}
		bad += write(fds[1], "end", 3) != 3;
		/* stay until the other end has everything */
		bad += read(go[0], b, 1) != 1;
		exit(bad);
	}
	close(go[0]);
	close(fds[1]);
	pause_ms(300);		/* the sender gets well ahead */
	alarm(30);
	for (int i = 0; i < INFLIGHT_N; i++) {
		struct strrecvfd rf;
		struct stat st;

		if (ioctl(fds[0], I_RECVFD, &rf) != 0) {
			bad++;
			fprintf(stderr, "descriptor %d: %s\n", i,
				strerror(errno));
			break;
		}
		if (fstat(rf.fd, &st) != 0 || st.st_ino != want.st_ino) {
			bad++;
			fprintf(stderr, "descriptor %d: not the file\n", i);
		}
		close(rf.fd);
		if (i % 40 == 39)
			if (read(fds[0], b, 1) != 1 || b[0] != 'd') {
				bad++;
				fprintf(stderr, "data %d: not d\n", i);
			}
	}
	CHECK_EQ(bad, 0);
	CHECK_RET(read(fds[0], b, sizeof(b)), 3);
	alarm(0);
	CHECK_RET(write(go[1], "x", 1), 1);
	CHECK_EQ(wait_child(pid), 0);
	close(go[1]);
	close(fds[0]);
	close(file);
}

/* A stream descriptor cannot cross: EXDEV, nothing sent; on a pipe
 * still inside this process it can. */
static void test_stream_fd(void)
{
	int fds[2], other[2], local[2];
	struct strrecvfd rf;
	char b[4];
	pid_t pid;

	pid = fork_with_pipe(fds);
	if (pid == 0) {
		exit(read(fds[1], b, sizeof(b)) == 2 ? 0 : 1);
	}
	close(fds[1]);
	open_pipe(other);
	CHECK_ERR(ioctl(fds[0], I_SENDFD, other[0]), EXDEV);
	CHECK_RET(write(fds[0], "ok", 2), 2);
	CHECK_EQ(wait_child(pid), 0);
	/* a pipe made after the fork is in this process only */
	open_pipe(local);
	CHECK_RET(ioctl(local[0], I_SENDFD, other[0]), 0);
	CHECK_RET(ioctl(local[1], I_RECVFD, &rf), 0);
	CHECK_RET(write(rf.fd, "s", 1), 1);
	CHECK_RET(read(other[1], b, sizeof(b)), 1);
	close(rf.fd);
	close(local[0]);
	close(local[1]);
	close(other[0]);
	close(other[1]);
	close(fds[0]);
}

/* The same path inside one process (sth_pipes_convert_all gives the
 * pipe its cross-process driver without a fork), with a receiver
 * thread: so ThreadSanitizer sees it too. */
struct recv_arg {
	int fd;
	int bad;
};

static void *receiver(void *arg)
{
	struct recv_arg *r = arg;
	struct strrecvfd rf;
	char b[8];

	for (int i = 0; i < 20; i++) {
		if (ioctl(r->fd, I_RECVFD, &rf) != 0) {
			r->bad++;
			break;
		}
		r->bad += pread(rf.fd, b, 1, 0) != 1 || b[0] != 'v';
		close(rf.fd);
		r->bad += read(r->fd, b, sizeof(b)) != 1 || b[0] != (char)i;
	}
	return NULL;
}

static void test_threads(void)
{
	int fds[2], other[2], file = temp_file("v");
	struct recv_arg r;
	pthread_t t;

	open_pipe(fds);
	sth_pipes_convert_all();
	r.fd = fds[1];
	r.bad = 0;
	REQUIRE(pthread_create(&t, NULL, receiver, &r) == 0);
	for (int i = 0; i < 20; i++) {
		char c = (char)i;
		CHECK_RET(ioctl(fds[0], I_SENDFD, file), 0);
		CHECK_RET(write(fds[0], &c, 1), 1);
	}
	pthread_join(t, NULL);
	CHECK_EQ(r.bad, 0);
	/* a stream descriptor: EXDEV on a converted pipe */
	open_pipe(other);
	CHECK_ERR(ioctl(fds[0], I_SENDFD, other[0]), EXDEV);
	close(other[0]);
	close(other[1]);
	close(fds[0]);
	close(fds[1]);
	close(file);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_threads();
#ifdef STR_TSAN
	/* ThreadSanitizer cannot follow a process that starts threads
	 * after fork(): the cross-process cases run in the other builds */
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
#endif
	test_file_and_socket();
	test_order();
	test_unclaimed();
	test_unclaimed_child();
	test_stream_fd();
	test_many_in_flight();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
