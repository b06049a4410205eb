/*
 * test_sth_iocwait -- how ioctls sent down a stream wait and end
 * (streamio, SVR4 strdoioctl): one ioctl at a time per stream, a second
 * caller's wait bounded by its time-out (ETIME) and ended by a signal
 * (EINTR), but not by one caught with SA_RESTART; the error an M_IOCACK carries; an I_STR answer longer than
 * the request, or given by M_COPYOUT; copy requests that come when the
 * caller has gone (answered, so the module lets go) or are too short;
 * I_LINK against an ioctl in progress on the lower stream; a slow ioctl
 * on one multiplexer not holding up links on another.  Then the smaller
 * cases of the same review: I_FDINSERT naming an unusable stream,
 * I_LIST with a large array, FIOCLEX/FIONCLEX, I_ANCHOR popped through,
 * descriptors received without close-on-exec.
 */
#include "t.h"
#include "sth.h"

#include <sys/testmod.h>

static long mblks_in_use(void)
{
	struct strstats st;

	streams_quiesce(2000);
	streams_stats(&st);
	return (long)st.mblk_inuse;
}

struct slow {
	int fd, cmd, timeout, len;
	int r, err;
	long took;
	pthread_t t;
};

static void *slow_main(void *arg)
{
	struct slow *s = arg;
	char b[8] = { 0 };
	long t0 = now_ms();

	s->r = do_str(s->fd, s->cmd, b, s->len, s->timeout, NULL);
	s->err = s->r < 0 ? errno : 0;
	s->took = now_ms() - t0;
	return NULL;
}

/* Start an I_STR that waits (TM_NOREPLY) in another thread. */
static void slow_start(struct slow *s, int fd, int timeout)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->cmd = TM_NOREPLY;
	s->timeout = timeout;
	REQUIRE(pthread_create(&s->t, NULL, slow_main, s) == 0);
	pause_ms(100);		/* (it has sent its M_IOCTL) */
}

static void test_second_ioctl(void)
{
	int fd = open_tm(0);
	struct slow s;
	struct kicker k;
	char b[8] = "abc";
	long t0;

	/* the second caller's own time-out ends its wait for the first */
	slow_start(&s, fd, 2);
	t0 = now_ms();
	CHECK_ERR(do_str(fd, TM_ECHO, b, 3, 1, NULL), ETIME);
	CHECK(now_ms() - t0 >= 900 && now_ms() - t0 < 2500);
	pthread_join(s.t, NULL);
	CHECK_EQ(s.err, ETIME);
	/* the first gone, the second goes through */
	CHECK_RET(do_str(fd, TM_ECHO, b, 3, 1, NULL), 3);

	/* and a signal ends it */
	catch_sig(SIGUSR1, false);
	slow_start(&s, fd, 2);
	kicker_start(&k, SIGUSR1);
	t0 = now_ms();
	CHECK_ERR(do_str(fd, TM_ECHO, b, 3, 10, NULL), EINTR);
	kicker_stop(&k);
	CHECK(now_ms() - t0 < 2000);
	pthread_join(s.t, NULL);
	CHECK_EQ(s.err, ETIME);
	/* a signal caught with SA_RESTART does not: the waits for the slot
	 * and for the answer end at their time-outs, the handler run */
	catch_sig(SIGUSR2, true);
	slow_start(&s, fd, 2);
	kicker_start(&k, SIGUSR2);
	t0 = now_ms();
	CHECK_ERR(do_str(fd, TM_ECHO, b, 3, 1, NULL), ETIME);
	kicker_stop(&k);
	CHECK(now_ms() - t0 >= 900 && now_ms() - t0 < 2500);
	CHECK(sigcount[SIGUSR2] > 0);
	pthread_join(s.t, NULL);
	CHECK_EQ(s.err, ETIME);
	kicker_start(&k, SIGUSR2);
	t0 = now_ms();
	CHECK_ERR(do_str(fd, TM_NOREPLY, b, 3, 1, NULL), ETIME);
	kicker_stop(&k);
	CHECK(now_ms() - t0 >= 900 && now_ms() - t0 < 2500);
	signal(SIGUSR2, SIG_IGN);
	/* a transparent ioctl behind an I_STR likewise */
	slow_start(&s, fd, 1);
	{
		int v = 5;
		CHECK_RET(ioctl(fd, TM_TRANSPARENT, &v), 0);
		CHECK_EQ(v, 6);
	}
	pthread_join(s.t, NULL);
	CHECK_EQ(s.err, ETIME);
	close(fd);
}

static void test_ack_error(void)
{
	int fd = open_tm(0), e = EIO;

	CHECK_ERR(do_str(fd, TM_ACKERR, &e, sizeof(e), 0, NULL), EIO);
	e = ENOSPC;
	CHECK_ERR(do_str(fd, TM_ACKERR, &e, sizeof(e), 0, NULL), ENOSPC);
	e = 0;
	CHECK_RET(do_str(fd, TM_ACKERR, &e, sizeof(e), 0, NULL), 0);
	/* an error that is no errno: EPROTO, not the value itself */
	e = -3;
	CHECK_ERR(do_str(fd, TM_ACKERR, &e, sizeof(e), 0, NULL), EPROTO);
	e = 100000;
	CHECK_ERR(do_str(fd, TM_ACKERR, &e, sizeof(e), 0, NULL), EPROTO);
	close(fd);
}

static void test_str_answer(void)
{
	int fd = open_tm(0), len = -1;
	char buf[256];

	/* an answer longer than the request: all of it, ic_len says so */
	memset(buf, 0, sizeof(buf));
	*(int *)buf = 200;
	CHECK_RET(do_str(fd, TM_REPLYLEN, buf, sizeof(int), 0, &len), 200);
	CHECK_EQ(len, 200);
	CHECK_EQ(buf[0], 'r');
	CHECK_EQ(buf[199], 'r');
	CHECK_EQ(buf[200], 0);
	/* shorter: ic_len shrinks */
	*(int *)buf = 2;
	CHECK_RET(do_str(fd, TM_REPLYLEN, buf, 64, 0, &len), 2);
	CHECK_EQ(len, 2);
	/* none: 0 */
	*(int *)buf = 0;
	CHECK_RET(do_str(fd, TM_REPLYLEN, buf, 64, 0, &len), 0);
	CHECK_EQ(len, 0);
	/* an M_COPYOUT answering an I_STR goes to ic_dp */
	memset(buf, 0, sizeof(buf));
	CHECK_RET(do_str(fd, TM_STRCOPYOUT, buf, 0, 0, &len), 0);
	CHECK_EQ(len, 8);
	CHECK(memcmp(buf, "copyout", 8) == 0);
	close(fd);
}

/* Overwrite the stack below the caller (where a call it made had its
 * frames). */
static void __attribute__((noinline)) clobber_stack(void)
{
	volatile unsigned char b[16384];

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = 0xa5;
}

static void test_copy_requests(void)
{
	int fd = open_tm(0), ms = 600;
	long before = mblks_in_use();
	struct kicker k;

	/* too short to be a copy request: EPROTO, and nothing kept */
	for (int i = 0; i < 50; i++)
		CHECK_ERR(do_str(fd, TM_SHORTCOPY, NULL, 0, 2, NULL), EPROTO);
	CHECK_EQ(mblks_in_use(), before);

	/* a copy request after the caller timed out: answered with a
	 * failed M_IOCDATA, so the module frees its state */
	ms = 1500;
	CHECK_ERR(do_str(fd, TM_LATECOPY, &ms, sizeof(ms), 1, NULL), ETIME);
	clobber_stack();	/* (what the ioctl left on it) */
	pause_ms(900);		/* the request comes at 1.5 s */
	CHECK_RET(do_str(fd, TM_STATES, NULL, 0, 0, NULL), 0);
	/* and the ioctl's credentials were still there for it (they were
	 * on the caller's stack) */
	CHECK_RET(do_str(fd, TM_CRBAD, NULL, 0, 0, NULL), 0);
	/* after a signal likewise */
	catch_sig(SIGUSR1, false);
	ms = 300;
	kicker_start(&k, SIGUSR1);
	CHECK_ERR(do_str(fd, TM_LATECOPY, &ms, sizeof(ms), 5, NULL), EINTR);
	kicker_stop(&k);
	pause_ms(600);
	CHECK_RET(do_str(fd, TM_STATES, NULL, 0, 0, NULL), 0);
	/* and the module is free for the next */
	ms = 10;	/* (an I_STR's copy-in from no address: EFAULT) */
	CHECK_ERR(do_str(fd, TM_LATECOPY, &ms, sizeof(ms), 5, NULL), EFAULT);
	CHECK_RET(do_str(fd, TM_STATES, NULL, 0, 0, NULL), 0);
	close(fd);
	CHECK_EQ(mblks_in_use(), before);
}

static int open_mux(void)
{
	int fd = open("/dev/streams/mux", O_RDWR);

	REQUIRE(fd >= 0);
	return fd;
}

struct linker {
	int m, e, id;
	long took;
	pthread_t t;
};

static void *link_main(void *arg)
{
	struct linker *l = arg;
	long t0 = now_ms();

	l->id = ioctl(l->m, I_LINK, l->e);
	l->took = now_ms() - t0;
	return NULL;
}

static void test_link_and_ioctls(void)
{
	struct linker lk;
	int m = open_mux(), m2, e = open_tm(0), e2, e3;
	struct slow s;
	long t0;
	int id;

	/* an ioctl in progress on the stream to be linked: EINVAL */
	slow_start(&s, e, 1);
	CHECK_ERR(ioctl(m, I_LINK, e), EINVAL);
	pthread_join(s.t, NULL);
	CHECK_EQ(s.err, ETIME);
	/* free of ioctls: linked */
	CHECK(ioctl(m, I_LINK, e) > 0);

	/* an I_LINK waiting for a slow ioctl on one multiplexer does not
	 * hold up links under another */
	m2 = open_mux();
	e2 = open_tm(0);
	e3 = open_echo(0);
	REQUIRE(ioctl(m2, I_PUSH, "testmod") == 0);
	slow_start(&s, m2, 2);
	memset(&lk, 0, sizeof(lk));
	lk.m = m2;
	lk.e = e2;
	REQUIRE(pthread_create(&lk.t, NULL, link_main, &lk) == 0);
	pause_ms(200);		/* (it waits for m2's ioctl) */
	t0 = now_ms();
	id = ioctl(m, I_LINK, e3);
	CHECK(id > 0);
	CHECK(now_ms() - t0 < 1000);
	CHECK_RET(ioctl(m, I_UNLINK, id), 0);
	/* and it links once the slow one ends */
	pthread_join(lk.t, NULL);
	CHECK(lk.id > 0);
	CHECK(lk.took >= 1200);
	pthread_join(s.t, NULL);
	CHECK_EQ(s.err, ETIME);
	close(e3);
	close(m2);
	close(e2);
	close(m);
	close(e);
}

static void test_fdinsert_target(void)
{
	int a = open_echo(0), m = open_mux(), lo = open_echo(0), h = open_tm(0);
	char ctl[sizeof(queue_t *)];
	struct strfdinsert fi;

	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf.buf = ctl;
	fi.ctlbuf.len = sizeof(ctl);
	fi.databuf.len = -1;
	fi.offset = 0;
	/* linked under a multiplexer: EINVAL */
	REQUIRE(ioctl(m, I_LINK, lo) > 0);
	fi.fildes = lo;
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), EINVAL);
	/* hung up: ENXIO */
	REQUIRE(sendup(h, M_HANGUP, 0, 0, NULL, 0, NULL, -1) == 0);
	fi.fildes = h;
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), ENXIO);
	close(h);
	/* an error on it: that error */
	h = open_tm(0);
	REQUIRE(sendup_bytes(h, M_ERROR, 1, EPROTO, 0) == 0);
	fi.fildes = h;
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), EPROTO);
	close(h);
	close(m);
	close(lo);
	close(a);
}

static void test_small_cases(void)
{
	int fd = open_tm(0), p[2], f, flags;
	struct str_mlist names[100];
	struct str_list sl = { 100, names };
	struct strrecvfd rf;

	/* I_LIST: an array larger than any stack is filled as far as
	 * the stack goes */
	CHECK_RET(ioctl(fd, I_LIST, &sl), 0);
	CHECK_EQ(sl.sl_nmods, 2);
	CHECK(strcmp(names[0].l_name, "testmod") == 0);
	CHECK(strcmp(names[1].l_name, "echo") == 0);
	sl.sl_nmods = 0;
	CHECK_ERR(ioctl(fd, I_LIST, &sl), EINVAL);

	/* FIOCLEX / FIONCLEX are the descriptor's */
	CHECK_RET(ioctl(fd, FIOCLEX), 0);
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_RET(ioctl(fd, FIONCLEX), 0);
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);

	/* I_ANCHOR popped through (privileged) is gone: pushed again, the
	 * modules above the old anchor pop for anyone */
	CHECK_RET(ioctl(fd, I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(fd, I_ANCHOR, 0), 0);
	if (geteuid() == 0) {
		CHECK_RET(ioctl(fd, I_POP, 0), 0);	/* through it */
		CHECK_RET(ioctl(fd, I_PUSH, "nullmod"), 0);
		pid_t pid = fork_flushed();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			int ok = setuid(65534) == 0 && ioctl(fd, I_POP, 0) == 0;
			_exit(ok ? 0 : 1);
		}
		CHECK_EQ(wait_child(pid), 0);
	}
	close(fd);

	/* a received descriptor is not close-on-exec (SCM_RIGHTS alike) */
	open_pipe(p);
	f = open("/dev/null", O_RDONLY);
	REQUIRE(f >= 0);
	CHECK_RET(ioctl(p[0], I_SENDFD, f), 0);
	CHECK_RET(ioctl(p[1], I_RECVFD, &rf), 0);
	flags = fcntl(rf.fd, F_GETFD);
	CHECK_EQ(flags & FD_CLOEXEC, 0);
	close(rf.fd);
	close(f);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_second_ioctl();
	test_ack_error();
	test_str_answer();
	test_copy_requests();
	test_link_and_ioctls();
	test_fdinsert_target();
	test_small_cases();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
