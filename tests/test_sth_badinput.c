/*
 * test_sth_badinput -- bad input to every STREAMS call: EBADF for
 * descriptors that are not open, ENOSTR (getmsg/putmsg family; both
 * said before a bad flag or pointer is looked at), ENOTTY
 * (streamio ioctls) and EINVAL (fattach) for descriptors that are not
 * streams, unknown module names, pushing past the limit, I_POP on an
 * empty stack, I_LINK loops, oversized messages (ERANGE; EINVAL for
 * I_STR), bad vectors, and NULL or unmapped pointers in and to strbuf,
 * strioctl, str_list, strpeek, strfdinsert and data buffers: EFAULT (or
 * EINVAL where documented), never a crash.  Every pointer case runs in a
 * child process of its own (CHECK_ISOLATED), so that a crash fails that
 * check and the others still run.
 */
#include "sth.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>

static void *bad;	/* a PROT_NONE page, made before the children */
static char *edge;	/* the end of a readable page followed by a
			   PROT_NONE one: copies across it fault midway */
static void *volatile null;	/* NULL the compiler cannot see */
static char *hole;	/* a PROT_NONE page between two readable ones: a
			   copy from across it faults in its middle */

/* ---- descriptors that are not open, or not streams ---- */

static void test_ebadf(void)
{
	char buf[8];
	struct strbuf c = { sizeof(buf), 1, buf }, d = { sizeof(buf), 1, buf };
	int flags = 0, band = 0, fd;
	struct iovec v = { buf, 1 };

	fd = bad_fd();
	CHECK_ERR(getmsg(fd, &c, &d, &flags), EBADF);
	CHECK_ERR(putmsg(fd, &c, &d, 0), EBADF);
	flags = MSG_ANY;
	CHECK_ERR(getpmsg(fd, &c, &d, &band, &flags), EBADF);
	CHECK_ERR(putpmsg(fd, &c, &d, 0, MSG_BAND), EBADF);
	CHECK_ERR(isastream(fd), EBADF);
	CHECK_ERR(fattach(fd, "/tmp"), EBADF);
	CHECK_ERR(ioctl(fd, I_PUSH, "nullmod"), EBADF);
	CHECK_ERR(ioctl(fd, I_NREAD, &flags), EBADF);
	CHECK_ERR(ioctl(fd, I_STR, NULL), EBADF);
	CHECK_ERR(read(fd, buf, 1), EBADF);
	CHECK_ERR(write(fd, buf, 1), EBADF);
	CHECK_ERR(readv(fd, &v, 1), EBADF);
	CHECK_ERR(writev(fd, &v, 1), EBADF);
	CHECK_ERR(close(fd), EBADF);
	CHECK_ERR(dup(fd), EBADF);
	CHECK_ERR(fcntl(fd, F_GETFL), EBADF);
	struct pollfd pf = { fd, POLLIN, 0 };
	CHECK_RET(poll(&pf, 1, 0), 1);
	CHECK_EQ(pf.revents, POLLNVAL);
	flags = 0;
	CHECK_ERR(getmsg(-1, &c, &d, &flags), EBADF);
	CHECK_ERR(putmsg(-5, &c, &d, 0), EBADF);
	CHECK_ERR(isastream(-1), EBADF);
	/* a stream descriptor after its close */
	fd = open_echo(0);
	CHECK_RET(close(fd), 0);
	CHECK_ERR(putmsg(fd, &c, &d, 0), EBADF);
	CHECK_ERR(putmsg(fd, (struct strbuf *)8, &d, 0), EBADF);
	{
		int bad_flags = 12345;
		CHECK_ERR(getmsg(fd, &c, &d, &bad_flags), EBADF);
	}
	CHECK_ERR(write(fd, buf, 1), EBADF);
	CHECK_ERR(ioctl(fd, I_PUSH, "nullmod"), EBADF);
	/* I_SENDFD, I_LINK and I_FDINSERT name a descriptor too */
	int p[2], m = open("/dev/streams/mux", O_RDWR);
	REQUIRE(m >= 0);
	open_pipe(p);
	CHECK_ERR(ioctl(p[0], I_SENDFD, bad_fd()), EBADF);
	CHECK_ERR(ioctl(m, I_LINK, bad_fd()), EBADF);
	CHECK_ERR(ioctl(m, I_PLINK, bad_fd()), EBADF);
	CHECK_RET(close(m), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

static void test_enostr(void)
{
	char path[] = "/tmp/sth-bad-XXXXXX", buf[8];
	int f = mkstemp(path), sv[2], lp[2], nul;
	struct strbuf c = { sizeof(buf), 1, buf }, d = { sizeof(buf), 1, buf };
	int flags = 0, band = 0;

	REQUIRE(f >= 0);
	unlink(path);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	REQUIRE(pipe(lp) == 0);
	nul = open("/dev/null", O_RDWR);
	REQUIRE(nul >= 0);
	int fds[4] = { f, sv[0], lp[1], nul };
	for (int i = 0; i < 4; i++) {
		int fd = fds[i];
		flags = 0;
		CHECK_ERR(getmsg(fd, &c, &d, &flags), ENOSTR);
		CHECK_ERR(putmsg(fd, &c, &d, 0), ENOSTR);
		flags = MSG_ANY;
		CHECK_ERR(getpmsg(fd, &c, &d, &band, &flags), ENOSTR);
		CHECK_ERR(putpmsg(fd, &c, &d, 1, MSG_BAND), ENOSTR);
		/* not a stream is said before bad flags or pointers */
		flags = 12345;
		CHECK_ERR(getmsg(fd, &c, &d, &flags), ENOSTR);
		band = 300;
		flags = MSG_BAND;
		CHECK_ERR(getpmsg(fd, &c, &d, &band, &flags), ENOSTR);
		band = 0;
		CHECK_ERR(getmsg(fd, (struct strbuf *)8, &d, &flags), ENOSTR);
		CHECK_ERR(putmsg(fd, (struct strbuf *)8, &d, 0), ENOSTR);
		CHECK_RET(isastream(fd), 0);
		CHECK_ERR(fattach(fd, "/tmp"), EINVAL);
		/* POSIX ioctl: ENOTTY, not a STREAMS device */
		CHECK_ERR(ioctl(fd, I_PUSH, "nullmod"), ENOTTY);
		CHECK_ERR(ioctl(fd, I_POP, 0), ENOTTY);
		CHECK_ERR(ioctl(fd, I_LIST, NULL), ENOTTY);
	}
	/* a stream descriptor is refused where a stream is wanted */
	int e = open_echo(0), m = open("/dev/streams/mux", O_RDWR);
	REQUIRE(m >= 0);
	CHECK_ERR(ioctl(m, I_LINK, f), EINVAL);
	struct strfdinsert fi;
	void *slot = NULL;
	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf.len = sizeof(void *);
	fi.ctlbuf.buf = (char *)&slot;
	fi.databuf.len = -1;
	fi.fildes = f;
	CHECK_ERR(ioctl(e, I_FDINSERT, &fi), EINVAL);
	CHECK_RET(close(m), 0);
	CHECK_RET(close(e), 0);
	close(f);
	close(sv[0]);
	close(sv[1]);
	close(lp[0]);
	close(lp[1]);
	close(nul);
}

static void test_plumbing_errors(void)
{
	int fd = open_echo(0), n, m1, m2;

	CHECK_ERR(ioctl(fd, I_POP, 0), EINVAL);
	CHECK_ERR(ioctl(fd, I_PUSH, "nosuchmd"), EINVAL);
	CHECK_ERR(ioctl(fd, I_PUSH, "NULLMOD"), EINVAL);
	CHECK_ERR(ioctl(fd, I_PUSH, "nullmod "), EINVAL);
	CHECK_ERR(ioctl(fd, I_PUSH, "echo"), EINVAL);	/* a driver */
	CHECK_ERR(ioctl(fd, I_FIND, "123456789"), EINVAL);
	/* push limit */
	for (n = 0; n < NSTRPUSH + 2; n++)
		if (ioctl(fd, I_PUSH, "nullmod") != 0)
			break;
	CHECK_EQ(n, NSTRPUSH);
	CHECK_ERR(ioctl(fd, I_PUSH, "nullmod"), EINVAL);
	CHECK_ERR(ioctl(fd, I_PUSH, "testmod"), EINVAL);
	CHECK_RET(nlist(fd), NSTRPUSH + 1);
	CHECK_RET(close(fd), 0);	/* pops them all */
	/* link loops and non-multiplexers */
	m1 = open("/dev/streams/mux", O_RDWR);
	m2 = open("/dev/streams/mux2", O_RDWR);	/* (another driver) */
	REQUIRE(m1 >= 0 && m2 >= 0);
	fd = open_echo(0);
	CHECK_ERR(ioctl(m1, I_LINK, m1), EINVAL);
	CHECK_ERR(ioctl(fd, I_LINK, m1), EINVAL);
	int id = ioctl(m1, I_LINK, m2);
	CHECK(id > 0);
	CHECK_ERR(ioctl(m2, I_LINK, m1), EINVAL);
	CHECK_ERR(ioctl(m1, I_LINK, m2), EINVAL);
	CHECK_RET(ioctl(m1, I_UNLINK, id), 0);
	CHECK_ERR(ioctl(m1, I_UNLINK, id), EINVAL);
	CHECK_ERR(ioctl(m1, I_UNLINK, 0), EINVAL);
	CHECK_ERR(ioctl(m1, I_UNLINK, -7), EINVAL);
	CHECK_RET(close(fd), 0);
	CHECK_RET(close(m1), 0);
	CHECK_RET(close(m2), 0);
}

static void test_sizes(void)
{
	int fd = open_echo(O_NONBLOCK), p[2];
	char *big = calloc(1, 200000);
	struct strbuf c = { 0, 1025, big }, d = { 0, 65537, big };

	REQUIRE(big != NULL);
	CHECK_ERR(putmsg(fd, &c, NULL, 0), ERANGE);
	CHECK_ERR(putmsg(fd, NULL, &d, 0), ERANGE);
	CHECK_ERR(putmsg(fd, &c, &d, RS_HIPRI), ERANGE);
	CHECK_ERR(putpmsg(fd, &c, &d, 9, MSG_BAND), ERANGE);
	c.len = 1 << 30;
	CHECK_ERR(putmsg(fd, &c, NULL, 0), ERANGE);
	d.len = 0x7fffffff;
	CHECK_ERR(putmsg(fd, NULL, &d, 0), ERANGE);
	/* I_FDINSERT: the control part is limited too */
	struct strfdinsert fi;
	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf.len = 2000;
	fi.ctlbuf.buf = big;
	fi.databuf.len = -1;
	fi.fildes = fd;
	CHECK_ERR(ioctl(fd, I_FDINSERT, &fi), ERANGE);
	fi.ctlbuf.len = 8;
	fi.databuf.len = 70000;
	fi.databuf.buf = big;
	CHECK_ERR(ioctl(fd, I_FDINSERT, &fi), ERANGE);
	CHECK_RET(nread(fd, NULL), 0);
	/* I_STR data over the largest message: EINVAL */
	CHECK_ERR(do_str(fd, 1, big, 70000, 0, NULL), EINVAL);
	/* a pipe: the same limits */
	open_pipe(p);
	c.len = 1025;
	CHECK_ERR(putmsg(p[0], &c, NULL, 0), ERANGE);
	CHECK_RET(nread(p[1], NULL), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	/* vectors */
	struct iovec v[2] = { { big, 1 }, { big, 1 } };
	volatile int neg = -1, zero = 0, huge = 100000;
	CHECK_ERR(readv(fd, v, neg), EINVAL);
	CHECK_ERR(writev(fd, v, huge), EINVAL);
	CHECK_RET(writev(fd, v, zero), 0);
	/* iovec lengths adding up past SSIZE_MAX */
	struct iovec w[2] = { { big, (size_t)1 << 62 }, { big, (size_t)1 << 62 } };
	CHECK_ERR(writev(fd, w, 2), EINVAL);
	CHECK_ERR(readv(fd, w, 2), EINVAL);
	CHECK_RET(close(fd), 0);
	free(big);
}

/* ---- pointers: each in a child ---- */

#define BAD(name, ...)							\
static int name(void)							\
{									\
	int fd = open_tm(O_NONBLOCK);					\
	char buf[64];							\
	(void)buf;							\
	__VA_ARGS__;							\
	ioctl(fd, I_FLUSH, FLUSHR);					\
	CHECK_RET(write(fd, "ok", 2), 2);				\
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);			\
	CHECK_RET(close(fd), 0);					\
	return 0;							\
}

/* getmsg */
BAD(gm_ctl_struct,
	int fl = 0;
	CHECK_RET(write(fd, "x", 1), 1);
	CHECK_ERR(getmsg(fd, bad, NULL, &fl), EFAULT);
	CHECK_RET(nread(fd, NULL), 1))
BAD(gm_dat_struct,
	int fl = 0;
	CHECK_RET(write(fd, "x", 1), 1);
	CHECK_ERR(getmsg(fd, NULL, bad, &fl), EFAULT);
	CHECK_RET(nread(fd, NULL), 1))
BAD(gm_dat_buf,
	int fl = 0;
	struct strbuf d = { 16, 0, bad };
	CHECK_RET(write(fd, "x", 1), 1);
	CHECK_ERR(getmsg(fd, NULL, &d, &fl), EFAULT))
BAD(gm_dat_null_buf,
	int fl = 0;
	struct strbuf d = { 16, 0, NULL };
	CHECK_RET(write(fd, "x", 1), 1);
	CHECK_ERR(getmsg(fd, NULL, &d, &fl), EFAULT))
BAD(gm_ctl_buf,
	int fl = 0;
	struct strbuf c = { 16, 0, bad };
	struct strbuf pc = { 0, 2, "cc" };
	CHECK_RET(putmsg(fd, &pc, NULL, 0), 0);
	CHECK_ERR(getmsg(fd, &c, NULL, &fl), EFAULT))
/* a message with both parts: one part's buffer faulting (the control
 * part's if bad_ctl, else the data part's) leaves the whole message
 * unread (the other part was consumed) */
static void gm_both(int fd, bool bad_ctl)
{
	int fl = 0;
	char cb[8], db[8];
	struct strbuf c = { 16, 0, bad_ctl ? bad : cb };
	struct strbuf d = { 16, 0, bad_ctl ? db : bad };
	struct strbuf pc = { 0, 4, "ctl!" }, pd = { 0, 4, "dat!" };

	CHECK_RET(putmsg(fd, &pc, &pd, 0), 0);
	CHECK_ERR(getmsg(fd, &c, &d, &fl), EFAULT);
	c.buf = cb;
	d.buf = db;
	CHECK_RET(getmsg(fd, &c, &d, &fl), 0);
	CHECK(c.len == 4 && memcmp(cb, "ctl!", 4) == 0);
	CHECK(d.len == 4 && memcmp(db, "dat!", 4) == 0);
}
BAD(gm_ctl_buf_both, gm_both(fd, true))
BAD(gm_dat_buf_both, gm_both(fd, false))
BAD(gm_flags,
	struct strbuf d = { 16, 0, buf };
	CHECK_RET(write(fd, "x", 1), 1);
	CHECK_ERR(getmsg(fd, NULL, &d, bad), EFAULT))
BAD(gm_flags_null,
	struct strbuf d = { 16, 0, buf };
	CHECK_RET(write(fd, "x", 1), 1);
	errno = 0;
	CHECK_RET(getmsg(fd, NULL, &d, NULL), -1);
	CHECK(errno == EFAULT || errno == EINVAL))
BAD(gpm_band,
	struct strbuf d = { 16, 0, buf };
	int fl = MSG_ANY;
	CHECK_RET(write(fd, "x", 1), 1);
	CHECK_ERR(getpmsg(fd, NULL, &d, bad, &fl), EFAULT))
/* putmsg */
BAD(pm_ctl_struct, CHECK_ERR(putmsg(fd, bad, NULL, 0), EFAULT))
BAD(pm_dat_struct, CHECK_ERR(putmsg(fd, NULL, bad, 0), EFAULT))
BAD(pm_ctl_buf,
	struct strbuf c = { 0, 8, bad };
	CHECK_ERR(putmsg(fd, &c, NULL, 0), EFAULT))
BAD(pm_dat_buf,
	struct strbuf d = { 0, 8, bad };
	CHECK_ERR(putmsg(fd, NULL, &d, 0), EFAULT))
BAD(pm_dat_null_buf,
	struct strbuf d = { 0, 8, NULL };
	CHECK_ERR(putmsg(fd, NULL, &d, 0), EFAULT))
BAD(ppm_dat_buf,
	struct strbuf d = { 0, 8, bad };
	CHECK_ERR(putpmsg(fd, NULL, &d, 2, MSG_BAND), EFAULT))
/* read and write buffers */
BAD(rd_buf,
	CHECK_RET(write(fd, "data", 4), 4);
	CHECK_ERR(read(fd, bad, 4), EFAULT);
	CHECK_RET(nread(fd, NULL), 1))
BAD(rd_null,
	CHECK_RET(write(fd, "data", 4), 4);
	CHECK_ERR(read(fd, null, 4), EFAULT))
/* copies that fault midway: the 16-byte loop and the short (byte at a
 * time) copy; nothing is taken or left half-written */
static int wr_fault(int fd, const char *from, size_t n)
{
	CHECK_ERR(write(fd, from, n), EFAULT);
	CHECK_RET(nread(fd, NULL), 0);
	return 0;
}
BAD(wr_straddle_long, wr_fault(fd, edge - 16, 64))
BAD(wr_straddle_short, wr_fault(fd, edge - 3, 7))
BAD(rd_straddle_long,
	char msg[64] = "0123456789";
	CHECK_RET(write(fd, msg, sizeof(msg)), 64);
	CHECK_ERR(read(fd, edge - 16, 64), EFAULT);
	CHECK_RET(nread(fd, NULL), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 64);
	CHECK(memcmp(buf, msg, 64) == 0))
BAD(rd_straddle_short,
	CHECK_RET(write(fd, "abcdefg", 7), 7);
	CHECK_ERR(read(fd, edge - 3, 7), EFAULT);
	CHECK_RET(read(fd, buf, sizeof(buf)), 7);
	CHECK(memcmp(buf, "abcdefg", 7) == 0))
/* the same across the long copies: the vector loop (1000 bytes) and rep
 * movsb (12000) */
static int rd_straddle_n(int fd, size_t n)
{
	char *msg = malloc(n), *back = malloc(n + 1);
	int fl = 0;

	REQUIRE(msg != NULL && back != NULL);
	for (size_t i = 0; i < n; i++)
		msg[i] = (char)(i * 7 + i / 253);
	struct strbuf w = { 0, (int)n, msg };
	struct strbuf r = { (int)n + 1, 0, back };
	CHECK_RET(putmsg(fd, NULL, &w, 0), 0);
	CHECK_ERR(read(fd, edge - n / 2, n), EFAULT);
	CHECK_RET(nread(fd, NULL), 1);
	CHECK_RET(getmsg(fd, NULL, &r, &fl), 0);
	CHECK(r.len == (int)n && memcmp(back, msg, n) == 0);
	free(msg);
	free(back);
	return 0;
}
BAD(wr_straddle_loop, wr_fault(fd, edge - 600, 1000))
BAD(wr_straddle_rep, wr_fault(fd, edge - 9000, 12000))
/* the source's end is readable (the long copies load it first), its
 * middle is not: the fault comes inside the AVX loop (rep movsb with
 * STREAMS_NOAVX=1) */
BAD(wr_hole, wr_fault(fd, hole - 1000, 6000))
BAD(rd_straddle_loop, rd_straddle_n(fd, 1000))
BAD(rd_straddle_rep, rd_straddle_n(fd, 12000))
BAD(wr_buf, CHECK_ERR(write(fd, bad, 4), EFAULT))
BAD(wr_null, CHECK_ERR(write(fd, null, 4), EFAULT))
BAD(rdv_iov,
	CHECK_RET(write(fd, "data", 4), 4);
	CHECK_ERR(readv(fd, bad, 1), EFAULT))
BAD(wrv_iov, CHECK_ERR(writev(fd, bad, 1), EFAULT))
/* strioctl */
BAD(str_struct, CHECK_ERR(ioctl(fd, I_STR, bad), EFAULT))
BAD(str_data,
	struct strioctl si = { TM_ECHO, 0, 8, bad };
	CHECK_ERR(ioctl(fd, I_STR, &si), EFAULT))
BAD(str_data_null,
	struct strioctl si = { TM_ECHO, 0, 8, NULL };
	CHECK_ERR(ioctl(fd, I_STR, &si), EFAULT))
BAD(str_len,
	struct strioctl si = { TM_ECHO, 0, -3, buf };
	CHECK_ERR(ioctl(fd, I_STR, &si), EINVAL))
/* str_list */
BAD(list_struct, CHECK_ERR(ioctl(fd, I_LIST, bad), EFAULT))
BAD(list_names,
	struct str_list sl = { 3, bad };
	CHECK_ERR(ioctl(fd, I_LIST, &sl), EFAULT))
BAD(list_names_null,
	struct str_list sl = { 3, NULL };
	CHECK_ERR(ioctl(fd, I_LIST, &sl), EFAULT))
/* strpeek */
BAD(peek_struct,
	CHECK_RET(write(fd, "p", 1), 1);
	CHECK_ERR(ioctl(fd, I_PEEK, bad), EFAULT))
BAD(peek_buf,
	struct strpeek sp;
	memset(&sp, 0, sizeof(sp));
	sp.ctlbuf.maxlen = -1;
	sp.databuf = (struct strbuf){ 8, 0, bad };
	CHECK_RET(write(fd, "p", 1), 1);
	CHECK_ERR(ioctl(fd, I_PEEK, &sp), EFAULT);
	CHECK_RET(nread(fd, NULL), 1))
BAD(peek_null_buf,
	struct strpeek sp;
	memset(&sp, 0, sizeof(sp));
	sp.ctlbuf.maxlen = -1;
	sp.databuf = (struct strbuf){ 8, 0, NULL };
	CHECK_RET(write(fd, "p", 1), 1);
	CHECK_ERR(ioctl(fd, I_PEEK, &sp), EFAULT))
/* strfdinsert */
BAD(fdins_ctl,
	struct strfdinsert fi;
	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf = (struct strbuf){ 0, sizeof(void *), bad };
	fi.databuf.len = -1;
	fi.fildes = fd;
	CHECK_ERR(ioctl(fd, I_FDINSERT, &fi), EFAULT))
BAD(fdins_dat,
	struct strfdinsert fi;
	void *slot = NULL;
	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf = (struct strbuf){ 0, sizeof(void *), (char *)&slot };
	fi.databuf = (struct strbuf){ 0, 8, bad };
	fi.fildes = fd;
	CHECK_ERR(ioctl(fd, I_FDINSERT, &fi), EFAULT))
/* names */
BAD(push_name, CHECK_ERR(ioctl(fd, I_PUSH, bad), EFAULT))
BAD(push_null, CHECK_ERR(ioctl(fd, I_PUSH, NULL), EFAULT))
BAD(find_null, CHECK_ERR(ioctl(fd, I_FIND, NULL), EFAULT))
BAD(look_null, CHECK_ERR(ioctl(fd, I_LOOK, NULL), EFAULT))
/* other argument pointers */
BAD(flushband_null, CHECK_ERR(ioctl(fd, I_FLUSHBAND, NULL), EFAULT))
BAD(nread_null, CHECK_ERR(ioctl(fd, I_NREAD, NULL), EFAULT))
BAD(grdopt_null, CHECK_ERR(ioctl(fd, I_GRDOPT, NULL), EFAULT))
BAD(setcltime_null, CHECK_ERR(ioctl(fd, I_SETCLTIME, NULL), EFAULT))
BAD(recvfd_null,
	struct strrecvfd rf;
	int p[2];
	open_pipe(p);
	CHECK_RET(ioctl(p[0], I_SENDFD, fd), 0);
	CHECK_ERR(ioctl(p[1], I_RECVFD, NULL), EFAULT);
	CHECK_RET(ioctl(p[1], I_RECVFD, &rf), 0);
	CHECK_RET(close(rf.fd), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0))
BAD(transparent_bad, CHECK_ERR(ioctl(fd, TM_TRANSPARENT, bad), EFAULT))
/* s_pipe */
static int pipe_null(void)
{
	CHECK_ERR(s_pipe(NULL), EFAULT);
	return 0;
}
static int pipe_bad(void)
{
	CHECK_ERR(s_pipe(bad), EFAULT);
	return 0;
}
/* fattach/fdetach */
static int fattach_null(void)
{
	int fd = open_echo(0);

	errno = 0;
	CHECK_RET(fattach(fd, NULL), -1);
	CHECK(errno == EFAULT || errno == EINVAL);
	CHECK_RET(close(fd), 0);
	errno = 0;
	CHECK_RET(fdetach(NULL), -1);
	CHECK(errno == EFAULT || errno == EINVAL);
	return 0;
}

static int fattach_bad(void)
{
	int fd = open_echo(0);

	CHECK_ERR(fattach(fd, bad), EFAULT);
	CHECK_ERR(fdetach(bad), EFAULT);
	CHECK_RET(close(fd), 0);
	return 0;
}

/* open() of a path the caller cannot read: EFAULT, as libc's (every
 * open passes the stream head's name lookup first); a path that ends
 * right before an unreadable page is read whole. */
static int open_bad_path(void)
{
	char *p = edge - 8;

	CHECK_ERR(open(bad, O_RDONLY), EFAULT);
	CHECK_ERR(openat(AT_FDCWD, bad, O_RDONLY), EFAULT);
	memcpy(p, "/nonexi", 7);
	p[7] = 'x';	/* no end before the unreadable page */
	CHECK_ERR(open(p, O_RDONLY), EFAULT);
	memcpy(p, "/dev/nu", 7);
	p[7] = '\0';
	CHECK_ERR(open(p, O_RDONLY), ENOENT);
	return 0;
}

static void test_pointers(void)
{
	bad = bad_address();
	edge = mmap(NULL, 20480, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(edge != MAP_FAILED);
	REQUIRE(mprotect(edge + 16384, 4096, PROT_NONE) == 0);
	edge += 16384;
	hole = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(hole != MAP_FAILED);
	hole += 4096;
	REQUIRE(mprotect(hole, 4096, PROT_NONE) == 0);
	CHECK_ISOLATED(wr_straddle_long);
	CHECK_ISOLATED(wr_straddle_short);
	CHECK_ISOLATED(rd_straddle_long);
	CHECK_ISOLATED(rd_straddle_short);
	CHECK_ISOLATED(wr_straddle_loop);
	CHECK_ISOLATED(wr_straddle_rep);
	CHECK_ISOLATED(wr_hole);
	CHECK_ISOLATED(rd_straddle_loop);
	CHECK_ISOLATED(rd_straddle_rep);
	CHECK_ISOLATED(gm_ctl_struct);
	CHECK_ISOLATED(open_bad_path);
	CHECK_ISOLATED(gm_dat_struct);
	CHECK_ISOLATED(gm_dat_buf);
	CHECK_ISOLATED(gm_dat_null_buf);
	CHECK_ISOLATED(gm_ctl_buf);
	CHECK_ISOLATED(gm_ctl_buf_both);
	CHECK_ISOLATED(gm_dat_buf_both);
	CHECK_ISOLATED(gm_flags);
	CHECK_ISOLATED(gm_flags_null);
	CHECK_ISOLATED(gpm_band);
	CHECK_ISOLATED(pm_ctl_struct);
	CHECK_ISOLATED(pm_dat_struct);
	CHECK_ISOLATED(pm_ctl_buf);
	CHECK_ISOLATED(pm_dat_buf);
	CHECK_ISOLATED(pm_dat_null_buf);
	CHECK_ISOLATED(ppm_dat_buf);
	CHECK_ISOLATED(rd_buf);
	CHECK_ISOLATED(rd_null);
	CHECK_ISOLATED(wr_buf);
	CHECK_ISOLATED(wr_null);
	CHECK_ISOLATED(rdv_iov);
	CHECK_ISOLATED(wrv_iov);
	CHECK_ISOLATED(str_struct);
	CHECK_ISOLATED(str_data);
	CHECK_ISOLATED(str_data_null);
	CHECK_ISOLATED(str_len);
	CHECK_ISOLATED(list_struct);
	CHECK_ISOLATED(list_names);
	CHECK_ISOLATED(list_names_null);
	CHECK_ISOLATED(peek_struct);
	CHECK_ISOLATED(peek_buf);
	CHECK_ISOLATED(peek_null_buf);
	CHECK_ISOLATED(fdins_ctl);
	CHECK_ISOLATED(fdins_dat);
	CHECK_ISOLATED(push_name);
	CHECK_ISOLATED(push_null);
	CHECK_ISOLATED(find_null);
	CHECK_ISOLATED(look_null);
	CHECK_ISOLATED(flushband_null);
	CHECK_ISOLATED(nread_null);
	CHECK_ISOLATED(grdopt_null);
	CHECK_ISOLATED(setcltime_null);
	CHECK_ISOLATED(recvfd_null);
	CHECK_ISOLATED(transparent_bad);
	CHECK_ISOLATED(pipe_null);
	CHECK_ISOLATED(pipe_bad);
	CHECK_ISOLATED(fattach_null);
	CHECK_ISOLATED(fattach_bad);
}

int main(void)
{
	/* the children first, while no stream or thread exists */
	test_pointers();
	th_mark();
	test_ebadf();
	test_enostr();
	test_plumbing_errors();
	test_sizes();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
