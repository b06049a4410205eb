/*
 * test_sth_ioctl -- the streamio(7) ioctls of <sys/stropts.h>, with their
 * documented errors (SVR4 streamio, HP-UX/AIX streamio, POSIX ioctl
 * STREAMS section): I_PUSH (unknown module, push limit), I_POP (empty
 * stack), I_LOOK, I_FIND, I_LIST (NULL: the count), I_FLUSH,
 * I_FLUSHBAND, I_STR with testmod (TM_ECHO, TM_NAK, TM_NOREPLY and
 * ETIME), I_SRDOPT/I_GRDOPT, I_SWROPT/I_GWROPT, I_NREAD, I_PEEK,
 * I_CANPUT, I_CKBAND, I_GETBAND, I_ATMARK, I_SETSIG/I_GETSIG (SIGPOLL on
 * input), I_SETCLTIME/I_GETCLTIME, I_SERROPT/I_GERROPT (non-persistent
 * errors), I_ANCHOR (EPERM for an unprivileged pop at the anchor),
 * I_SENDFD/I_RECVFD across a pipe, I_FDINSERT (which keeps the stream
 * it names while it sleeps) connecting two opens of
 * the "pipe" driver, transparent ioctls through testmod (M_COPYIN and
 * M_COPYOUT, EFAULT on a bad address), unknown commands, and bad
 * pointers for structure arguments (EFAULT, no crash).
 */
#include "sth.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <sys/strconf.h>

/* An address nothing can be read from or written to. */
static void *unmapped(void)
{
	return bad_address();
}

static void test_push_pop(void)
{
	int fd = open_echo(0), n;
	char name[FMNAMESZ + 1];
	struct str_mlist ml[3];
	struct str_list sl = { 3, ml };

	/* empty stack */
	CHECK_RET(nlist(fd), 1);
	CHECK_ERR(ioctl(fd, I_POP, 0), EINVAL);
	CHECK_ERR(ioctl(fd, I_LOOK, name), EINVAL);
	CHECK_RET(ioctl(fd, I_FIND, "nullmod"), 0);
	/* unknown names */
	CHECK_ERR(ioctl(fd, I_PUSH, "nosuchmd"), EINVAL);
	CHECK_ERR(ioctl(fd, I_PUSH, "nullmodnullmod"), EINVAL);
	CHECK_ERR(ioctl(fd, I_PUSH, ""), EINVAL);
	CHECK_ERR(ioctl(fd, I_FIND, "nosuchmd"), EINVAL);
	CHECK_RET(nlist(fd), 1);
	/* push, look, find, list */
	CHECK_RET(ioctl(fd, I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(fd, I_PUSH, "testmod"), 0);
	memset(name, 'x', sizeof(name));
	CHECK_RET(ioctl(fd, I_LOOK, name), 0);
	CHECK(strcmp(name, "testmod") == 0);
	CHECK_RET(ioctl(fd, I_FIND, "nullmod"), 1);
	CHECK_RET(ioctl(fd, I_FIND, "testmod"), 1);
	CHECK_RET(ioctl(fd, I_FIND, "pipemod"), 0);
	CHECK_RET(nlist(fd), 3);
	CHECK_RET(ioctl(fd, I_LIST, &sl), 0);
	CHECK_EQ(sl.sl_nmods, 3);
	CHECK(strcmp(ml[0].l_name, "testmod") == 0);
	CHECK(strcmp(ml[1].l_name, "nullmod") == 0);
	CHECK(strcmp(ml[2].l_name, "echo") == 0);
	/* fewer slots than names: filled up to sl_nmods */
	memset(ml, 0, sizeof(ml));
	sl.sl_nmods = 2;
	CHECK_RET(ioctl(fd, I_LIST, &sl), 0);
	CHECK_EQ(sl.sl_nmods, 2);
	CHECK(strcmp(ml[1].l_name, "nullmod") == 0);
	CHECK_EQ(ml[2].l_name[0], 0);
	sl.sl_nmods = 0;
	CHECK_ERR(ioctl(fd, I_LIST, &sl), EINVAL);
	sl.sl_nmods = -1;
	CHECK_ERR(ioctl(fd, I_LIST, &sl), EINVAL);
	/* the stream still carries data through both */
	CHECK_RET(write(fd, "through", 7), 7);
	CHECK_RET(read(fd, name, sizeof(name)), 7);
	/* pop in order */
	CHECK_RET(ioctl(fd, I_POP, 0), 0);
	CHECK_RET(ioctl(fd, I_LOOK, name), 0);
	CHECK(strcmp(name, "nullmod") == 0);
	CHECK_RET(ioctl(fd, I_FIND, "testmod"), 0);
	CHECK_RET(ioctl(fd, I_POP, 0), 0);
	CHECK_ERR(ioctl(fd, I_POP, 0), EINVAL);
	/* the push limit (NSTRPUSH): EINVAL past it */
	for (n = 0; n < NSTRPUSH + 5; n++)
		if (ioctl(fd, I_PUSH, "nullmod") != 0)
			break;
	CHECK_EQ(n, NSTRPUSH);
	CHECK_EQ(errno, EINVAL);
	CHECK_RET(nlist(fd), NSTRPUSH + 1);
	CHECK_RET(write(fd, "deep", 4), 4);
	CHECK_RET(read(fd, name, sizeof(name)), 4);
	CHECK_MEM(name, "deep", 4);
	for (int i = 0; i < n; i++)
		if (ioctl(fd, I_POP, 0) != 0) {
			CHECK_RET(ioctl(fd, I_POP, 0), 0);
			break;
		}
	CHECK_RET(nlist(fd), 1);
	CHECK_RET(close(fd), 0);
}

static void test_flush(void)
{
	int fd = open_echo(O_NONBLOCK), b;
	char blk[1000];
	struct bandinfo bi;

	/* FLUSHR: the head read queue is emptied */
	CHECK_RET(write(fd, "one", 3), 3);
	CHECK_RET(write(fd, "two", 3), 3);
	CHECK_RET(nread(fd, NULL), 2);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_ERR(read(fd, blk, sizeof(blk)), EAGAIN);
	/* FLUSHW: what waits on the write side below is discarded */
	memset(blk, 'w', sizeof(blk));
	while (write(fd, blk, sizeof(blk)) > 0)
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(ioctl(fd, I_CANPUT, 0), 0);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHW), 0);
	CHECK_RET(ioctl(fd, I_CANPUT, 0), 1);
	int queued = nread(fd, NULL);
	CHECK(queued > 0);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	CHECK_RET(streams_quiesce(2000), 0);
	CHECK_RET(nread(fd, NULL), 0);	/* nothing more came up */
	/* FLUSHRW on a stuffed stream: everything goes */
	while (write(fd, blk, sizeof(blk)) > 0)
		;
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHRW), 0);
	CHECK_RET(streams_quiesce(2000), 0);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_RET(ioctl(fd, I_CANPUT, 0), 1);
	/* bad flags */
	CHECK_ERR(ioctl(fd, I_FLUSH, 0), EINVAL);
	CHECK_ERR(ioctl(fd, I_FLUSH, FLUSHBAND), EINVAL);
	CHECK_ERR(ioctl(fd, I_FLUSH, 0x10), EINVAL);

	/* I_FLUSHBAND: only that band */
	struct strbuf d = { 0, 2, "b0" };
	CHECK_RET(putpmsg(fd, NULL, &d, 0, MSG_BAND), 0);
	d.buf = "b1";
	CHECK_RET(putpmsg(fd, NULL, &d, 1, MSG_BAND), 0);
	d.buf = "b2";
	CHECK_RET(putpmsg(fd, NULL, &d, 2, MSG_BAND), 0);
	CHECK_RET(putpmsg(fd, NULL, &d, 2, MSG_BAND), 0);
	CHECK_RET(nread(fd, &b), 4);
	bi.bi_pri = 2;
	bi.bi_flag = FLUSHR;
	CHECK_RET(ioctl(fd, I_FLUSHBAND, &bi), 0);
	CHECK_RET(nread(fd, NULL), 2);
	CHECK_RET(ioctl(fd, I_CKBAND, 2), 0);
	CHECK_RET(ioctl(fd, I_CKBAND, 1), 1);
	CHECK_RET(ioctl(fd, I_CKBAND, 0), 1);
	bi.bi_flag = 0;
	CHECK_ERR(ioctl(fd, I_FLUSHBAND, &bi), EINVAL);
	bi.bi_flag = 0x40;
	CHECK_ERR(ioctl(fd, I_FLUSHBAND, &bi), EINVAL);
	CHECK_RET(nread(fd, NULL), 2);
	CHECK_RET(close(fd), 0);
}

static void test_str(void)
{
	int fd = open_tm(0), len, v;
	char buf[64];
	long t0;

	/* TM_ECHO: the data comes back, rval its length */
	strcpy(buf, "hello, module");
	CHECK_RET(do_str(fd, TM_ECHO, buf, 13, 0, &len), 13);
	CHECK_EQ(len, 13);
	CHECK_MEM(buf, "hello, module", 13);
	CHECK_RET(do_str(fd, TM_ECHO, NULL, 0, 0, &len), 0);
	CHECK_EQ(len, 0);
	/* TM_NAK: the module's errno */
	v = ENOSPC;
	CHECK_ERR(do_str(fd, TM_NAK, &v, sizeof(v), 0, NULL), ENOSPC);
	v = EPROTO;
	CHECK_ERR(do_str(fd, TM_NAK, &v, sizeof(v), -1, NULL), EPROTO);
	v = -5;		/* (not an errno: testmod refuses it) */
	CHECK_ERR(do_str(fd, TM_NAK, &v, sizeof(v), -1, NULL), EINVAL);
	v = 70000;
	CHECK_ERR(do_str(fd, TM_NAK, &v, sizeof(v), -1, NULL), EINVAL);
	/* TM_NOREPLY: ETIME when ic_timout runs out */
	t0 = now_ms();
	CHECK_ERR(do_str(fd, TM_NOREPLY, NULL, 0, 1, NULL), ETIME);
	CHECK(now_ms() - t0 >= 900);
	CHECK(now_ms() - t0 < 5000);
	/* the next ioctl is not confused by it */
	strcpy(buf, "again");
	CHECK_RET(do_str(fd, TM_ECHO, buf, 5, 0, &len), 5);
	CHECK_RET(do_str(fd, TM_COUNT, NULL, 0, 0, NULL), 0);
	/* bad strioctl */
	CHECK_ERR(do_str(fd, TM_ECHO, buf, -1, 0, NULL), EINVAL);
	CHECK_ERR(do_str(fd, TM_ECHO, buf, 5, -2, NULL), EINVAL);
	/* a command nobody knows: the driver refuses it */
	CHECK_ERR(do_str(fd, 0x7a7a, buf, 5, 0, NULL), EINVAL);
	CHECK_RET(close(fd), 0);
}

static void test_options(void)
{
	int fd = open_echo(0), v;

	CHECK_RET(ioctl(fd, I_GWROPT, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_RET(ioctl(fd, I_SWROPT, SNDZERO), 0);
	CHECK_RET(ioctl(fd, I_GWROPT, &v), 0);
	CHECK_EQ(v, SNDZERO);
	CHECK_ERR(ioctl(fd, I_SWROPT, 0x80), EINVAL);
	CHECK_RET(ioctl(fd, I_GWROPT, &v), 0);
	CHECK_EQ(v, SNDZERO);
	CHECK_RET(ioctl(fd, I_SWROPT, 0), 0);
	CHECK_RET(ioctl(fd, I_GWROPT, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGD | RPROTDIS), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGD | RPROTDIS);
	CHECK_ERR(ioctl(fd, I_SRDOPT, 0x20), EINVAL);
	CHECK_ERR(ioctl(fd, I_SRDOPT, RPROTDAT | RPROTNORM), EINVAL);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGD | RPROTDIS);
	/* a mode alone leaves the protocol option as it was */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGN | RPROTDIS);
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGD | RPROTNORM), 0);
	CHECK_RET(ioctl(fd, I_GETCLTIME, &v), 0);
	CHECK_EQ(v, 15000);
	v = 100;
	CHECK_RET(ioctl(fd, I_SETCLTIME, &v), 0);
	v = 0;
	CHECK_RET(ioctl(fd, I_GETCLTIME, &v), 0);
	CHECK_EQ(v, 100);
	v = -5;
	CHECK_ERR(ioctl(fd, I_SETCLTIME, &v), EINVAL);
	CHECK_RET(close(fd), 0);
}

static void test_queries(void)
{
	int fd = open_tm(O_NONBLOCK), b, v;
	char c[16], d[16];
	struct strpeek sp;

	/* I_NREAD: messages; *arg the bytes of the first */
	CHECK_RET(nread(fd, &b), 0);
	CHECK_EQ(b, 0);
	CHECK_RET(write(fd, "12345", 5), 5);
	CHECK_RET(write(fd, "", 0), 0);
	CHECK_RET(write(fd, "1234567", 7), 7);
	CHECK_RET(nread(fd, &b), 3);
	CHECK_EQ(b, 5);
	/* FIONREAD as well, for the first message */
	CHECK_RET(ioctl(fd, FIONREAD, &v), 0);
	CHECK_EQ(v, 5);
	/* I_PEEK: a copy of the first message, not consumed */
	memset(&sp, 0, sizeof(sp));
	sp.ctlbuf = (struct strbuf){ sizeof(c), 0, c };
	sp.databuf = (struct strbuf){ 3, 0, d };
	CHECK_RET(ioctl(fd, I_PEEK, &sp), 1);
	CHECK_EQ(sp.ctlbuf.len, -1);
	CHECK_EQ(sp.databuf.len, 3);
	CHECK_MEM(d, "123", 3);
	CHECK_EQ(sp.flags, 0);
	CHECK_RET(nread(fd, &b), 3);
	CHECK_EQ(b, 5);
	/* RS_HIPRI: only a high priority message */
	sp.flags = RS_HIPRI;
	sp.databuf.maxlen = sizeof(d);
	CHECK_RET(ioctl(fd, I_PEEK, &sp), 0);
	sp.flags = 3;
	CHECK_ERR(ioctl(fd, I_PEEK, &sp), EINVAL);
	struct strbuf hc = { 0, 2, "HC" }, hd = { 0, 2, "HD" };
	CHECK_RET(putmsg(fd, &hc, &hd, RS_HIPRI), 0);
	sp.flags = RS_HIPRI;
	sp.ctlbuf.maxlen = sizeof(c);
	CHECK_RET(ioctl(fd, I_PEEK, &sp), 1);
	CHECK_EQ(sp.flags, RS_HIPRI);
	CHECK_EQ(sp.ctlbuf.len, 2);
	CHECK_MEM(c, "HC", 2);
	CHECK_EQ(sp.databuf.len, 2);
	CHECK_MEM(d, "HD", 2);
	CHECK_RET(nread(fd, &b), 4);
	CHECK_EQ(b, 2);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	sp.flags = 0;
	CHECK_RET(ioctl(fd, I_PEEK, &sp), 0);	/* empty */

	/* bands: I_CKBAND, I_GETBAND */
	CHECK_ERR(ioctl(fd, I_GETBAND, &v), ENODATA);
	CHECK_RET(sendup_data(fd, "band3", 3, 0), 0);
	CHECK_RET(sendup_data(fd, "band0", 0, 0), 0);
	CHECK_RET(ioctl(fd, I_CKBAND, 3), 1);
	CHECK_RET(ioctl(fd, I_CKBAND, 0), 1);
	CHECK_RET(ioctl(fd, I_CKBAND, 2), 0);
	CHECK_ERR(ioctl(fd, I_CKBAND, -1), EINVAL);
	CHECK_ERR(ioctl(fd, I_CKBAND, 256), EINVAL);
	v = -1;
	CHECK_RET(ioctl(fd, I_GETBAND, &v), 0);
	CHECK_EQ(v, 3);
	CHECK_RET(read(fd, d, 5), 5);
	CHECK_RET(ioctl(fd, I_GETBAND, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_RET(ioctl(fd, I_CKBAND, 3), 0);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);

	/* I_CANPUT */
	CHECK_RET(ioctl(fd, I_CANPUT, 0), 1);
	CHECK_RET(ioctl(fd, I_CANPUT, 7), 1);
	CHECK_ERR(ioctl(fd, I_CANPUT, 256), EINVAL);
	CHECK_ERR(ioctl(fd, I_CANPUT, -2), EINVAL);

	/* I_ATMARK: marked messages (testmod sends them with MSGMARK) */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	CHECK_RET(ioctl(fd, I_ATMARK, ANYMARK), 0);	/* empty */
	CHECK_RET(sendup_data(fd, "m1", 0, MSGMARK), 0);
	CHECK_RET(sendup_data(fd, "m2", 0, 0), 0);
	CHECK_RET(sendup_data(fd, "m3", 0, MSGMARK), 0);
	CHECK_RET(ioctl(fd, I_ATMARK, ANYMARK), 1);
	CHECK_RET(ioctl(fd, I_ATMARK, LASTMARK), 0);	/* m3 is marked too */
	CHECK_RET(ioctl(fd, I_ATMARK, ANYMARK | LASTMARK), 0);
	CHECK_RET(read(fd, d, sizeof(d)), 2);
	CHECK_RET(ioctl(fd, I_ATMARK, ANYMARK), 0);
	CHECK_RET(ioctl(fd, I_ATMARK, LASTMARK), 0);
	CHECK_RET(read(fd, d, sizeof(d)), 2);
	CHECK_RET(ioctl(fd, I_ATMARK, ANYMARK), 1);
	CHECK_RET(ioctl(fd, I_ATMARK, LASTMARK), 1);
	CHECK_RET(ioctl(fd, I_ATMARK, ANYMARK | LASTMARK), 1);
	CHECK_ERR(ioctl(fd, I_ATMARK, 0), EINVAL);
	CHECK_ERR(ioctl(fd, I_ATMARK, 4), EINVAL);
	CHECK_ERR(ioctl(fd, I_ATMARK, 4 | ANYMARK), EINVAL);
	CHECK_RET(read(fd, d, sizeof(d)), 2);
	CHECK_RET(close(fd), 0);
}

static void test_sig(void)
{
	int fd = open_echo(O_NONBLOCK), v, base;
	char buf[16];

	catch_sig(SIGPOLL, true);
	catch_sig(SIGURG, true);
	CHECK_ERR(ioctl(fd, I_GETSIG, &v), EINVAL);	/* not registered */
	CHECK_ERR(ioctl(fd, I_SETSIG, 0), EINVAL);	/* nothing to undo */
	CHECK_ERR(ioctl(fd, I_SETSIG, 0x10000), EINVAL);
	CHECK_ERR(ioctl(fd, I_SETSIG, S_BANDURG), EINVAL);
	CHECK_RET(ioctl(fd, I_SETSIG, S_INPUT | S_HIPRI), 0);
	v = 0;
	CHECK_RET(ioctl(fd, I_GETSIG, &v), 0);
	CHECK_EQ(v, S_INPUT | S_HIPRI);
	/* S_INPUT: a message arrives */
	base = sigcount[SIGPOLL];
	CHECK_RET(write(fd, "in", 2), 2);
	CHECK(wait_sig(SIGPOLL, base + 1, 2000));
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	/* S_HIPRI: a high priority message arrives */
	base = sigcount[SIGPOLL];
	struct strbuf c = { 0, 1, "h" };
	CHECK_RET(putmsg(fd, &c, NULL, RS_HIPRI), 0);
	CHECK(wait_sig(SIGPOLL, base + 1, 2000));
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	/* S_RDBAND with S_BANDURG: SIGURG for band data */
	CHECK_RET(ioctl(fd, I_SETSIG, S_RDBAND | S_BANDURG), 0);
	CHECK_RET(ioctl(fd, I_GETSIG, &v), 0);
	CHECK_EQ(v, S_RDBAND | S_BANDURG);
	base = sigcount[SIGURG];
	struct strbuf d = { 0, 1, "u" };
	CHECK_RET(putpmsg(fd, NULL, &d, 1, MSG_BAND), 0);
	CHECK(wait_sig(SIGURG, base + 1, 2000));
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	/* unregistered: no more signals, I_GETSIG EINVAL */
	CHECK_RET(ioctl(fd, I_SETSIG, 0), 0);
	CHECK_ERR(ioctl(fd, I_GETSIG, &v), EINVAL);
	base = sigcount[SIGPOLL];
	CHECK_RET(write(fd, "quiet", 5), 5);
	pause_ms(20);
	CHECK_EQ(sigcount[SIGPOLL], base);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	/* a close of any of its descriptors unregisters the process
	 * (POSIX close()), though another still names the stream */
	int fd2 = dup(fd);
	REQUIRE(fd2 >= 0);
	CHECK_RET(ioctl(fd, I_SETSIG, S_INPUT), 0);
	CHECK_RET(close(fd), 0);
	CHECK_ERR(ioctl(fd2, I_GETSIG, &v), EINVAL);
	base = sigcount[SIGPOLL];
	CHECK_RET(write(fd2, "quiet", 5), 5);
	pause_ms(20);
	CHECK_EQ(sigcount[SIGPOLL], base);
	CHECK_RET(close(fd2), 0);
	signal(SIGPOLL, SIG_IGN);
	signal(SIGURG, SIG_DFL);
}

/* S_WRBAND: a band that was full (a pipe end's writer of band 1 met
 * EAGAIN) has room again once the other end drains; S_OUTPUT is band
 * 0's relief only. */
static void test_sig_wrband(void)
{
	int p[2], n = 0, base;
	char buf[1024];
	struct strbuf d = { 0, sizeof(buf), buf };

	catch_sig(SIGPOLL, true);
	open_pipe(p);
	memset(buf, 'b', sizeof(buf));
	CHECK_RET(set_nonblock(p[0], true), 0);
	CHECK_RET(set_nonblock(p[1], true), 0);
	CHECK_RET(ioctl(p[0], I_SETSIG, S_WRBAND), 0);
	while (putpmsg(p[0], NULL, &d, 1, MSG_BAND) == 0 && n < 10000)
		n++;
	CHECK_EQ(errno, EAGAIN);
	base = sigcount[SIGPOLL];
	while (read(p[1], buf, sizeof(buf)) > 0)
		;
	CHECK(wait_sig(SIGPOLL, base + 1, 2000));
	CHECK_RET(putpmsg(p[0], NULL, &d, 1, MSG_BAND), 0);
	/* S_OUTPUT alone, band 1 and band 0 both full, drained in one go:
	 * the relief of band 0 is told too */
	CHECK_RET(ioctl(p[0], I_SETSIG, S_OUTPUT), 0);
	while (putpmsg(p[0], NULL, &d, 1, MSG_BAND) == 0)
		;
	while (write(p[0], buf, sizeof(buf)) > 0)
		;
	CHECK_EQ(errno, EAGAIN);
	base = sigcount[SIGPOLL];
	while (read(p[1], buf, sizeof(buf)) > 0)
		;
	CHECK(wait_sig(SIGPOLL, base + 1, 2000));
	/* S_OUTPUT alone, band 1 full and band 0 never: the relief is a
	 * band's, not band 0's, and is not told */
	pause_ms(20);
	while (putpmsg(p[0], NULL, &d, 1, MSG_BAND) == 0)
		;
	CHECK_EQ(errno, EAGAIN);
	base = sigcount[SIGPOLL];
	while (read(p[1], buf, sizeof(buf)) > 0)
		;
	pause_ms(50);
	CHECK_EQ(sigcount[SIGPOLL], base);
	/* the library's own close of a stream it passed (a flushed
	 * M_PASSFP) leaves the process's registration */
	CHECK_RET(ioctl(p[0], I_SENDFD, p[0]), 0);
	CHECK_RET(ioctl(p[1], I_FLUSH, FLUSHR), 0);
	int ev = 0;
	CHECK_RET(ioctl(p[0], I_GETSIG, &ev), 0);
	CHECK_EQ(ev, S_OUTPUT);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	signal(SIGPOLL, SIG_IGN);
}

static void test_erropt(void)
{
	int fd = open_tm(O_NONBLOCK), v;
	char buf[8];

	CHECK_RET(ioctl(fd, I_GERROPT, &v), 0);
	CHECK_EQ(v, RERRNORM | WERRNORM);
	CHECK_ERR(ioctl(fd, I_SERROPT, 0x10), EINVAL);
	CHECK_RET(ioctl(fd, I_SERROPT, RERRNONPERSIST | WERRNONPERSIST), 0);
	CHECK_RET(ioctl(fd, I_GERROPT, &v), 0);
	CHECK_EQ(v, RERRNONPERSIST | WERRNONPERSIST);
	/* a read error is reported once */
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, EIO, NOERROR), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(write(fd, "w", 1), 1);	/* the write side is fine */
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	/* a write error too */
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, NOERROR, ENOSPC), 0);
	CHECK_ERR(write(fd, "w", 1), ENOSPC);
	CHECK_RET(write(fd, "w", 1), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	/* back to persistent */
	CHECK_RET(ioctl(fd, I_SERROPT, RERRNORM | WERRNORM), 0);
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, EIO, NOERROR), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	CHECK_RET(close(fd), 0);
}

/* Unprivileged: I_POP at or below the anchor is EPERM. */
static int anchor_child(void)
{
	int fd;

	if (setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0)
		return 0;	/* cannot drop privileges: nothing to check */
	fd = open_echo(0);
	CHECK_RET(ioctl(fd, I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(fd, I_PUSH, "testmod"), 0);
	CHECK_RET(ioctl(fd, I_ANCHOR, 0), 0);
	CHECK_ERR(ioctl(fd, I_POP, 0), EPERM);
	CHECK_RET(nlist(fd), 3);
	/* above the anchor: pops are allowed */
	CHECK_RET(ioctl(fd, I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(fd, I_POP, 0), 0);
	CHECK_ERR(ioctl(fd, I_POP, 0), EPERM);
	CHECK_RET(nlist(fd), 3);
	CHECK_RET(close(fd), 0);
	return 0;
}

static void test_anchor(void)
{
	int fd = open_echo(0);

	CHECK_RET(ioctl(fd, I_PUSH, "nullmod"), 0);
	CHECK_RET(ioctl(fd, I_PUSH, "testmod"), 0);
	CHECK_RET(ioctl(fd, I_ANCHOR, 0), 0);
	/* "The anchor will only allow a privileged process to pop modules
	 * at or below it" (Solaris STREAMS Programming Guide) */
	if (geteuid() == 0)
		CHECK_RET(ioctl(fd, I_POP, 0), 0);
	else
		CHECK_ERR(ioctl(fd, I_POP, 0), EPERM);
	CHECK_RET(close(fd), 0);
}

/* I_ANCHOR beside pushes and pops: a pop holds the plumbing lock while
 * it waits for a grace period, so I_ANCHOR must not wait for that lock
 * inside the executive (before, the two threads hung within 0.5 s). */
static int an_fd;
static _Atomic int an_stop, an_done;

static void *an_anchor(void *arg)
{
	(void)arg;
	while (!an_stop)
		(void)ioctl(an_fd, I_ANCHOR, 0);
	return NULL;
}

static void *an_pushpop(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5000; i++) {
		(void)ioctl(an_fd, I_PUSH, "nullmod");
		(void)ioctl(an_fd, I_POP, 0);	/* EPERM when not root */
	}
	an_done = 1;
	return NULL;
}

static void test_anchor_beside_pops(void)
{
	pthread_t a, p;

	an_fd = open_echo(0);
	REQUIRE(pthread_create(&a, NULL, an_anchor, NULL) == 0);
	REQUIRE(pthread_create(&p, NULL, an_pushpop, NULL) == 0);
	for (int ms = 0; ms < 20000 && !an_done; ms++)
		usleep(1000);
	REQUIRE(an_done);	/* hung: nothing else can run */
	an_stop = 1;
	pthread_join(p, NULL);
	pthread_join(a, NULL);
	CHECK_RET(close(an_fd), 0);
}

/* The last descriptor of a stream closed while other threads push,
 * pop and look on it: their ioctls hold the file while they wait for
 * the plumbing lock outside the executive, so the stream is closed
 * after them and nothing is used once freed (the sanitizer builds see
 * it); each call returns success, or an error saying the descriptor is
 * gone, and no thread is left behind. */
static _Atomic int cl_fd;

/* the descriptor closed: EBADF, or ENOTTY once its number names
 * something else (the library's own descriptors) */
static bool gone(int e)
{
	return e == EBADF || e == ENOTTY;
}

static void *cl_plumb(void *arg)
{
	char name[FMNAMESZ + 1];
	int bad = 0;

	(void)arg;
	for (int i = 0; i < 40; i++) {
		int fd = cl_fd, r;

		if ((r = ioctl(fd, I_PUSH, "nullmod")) != 0 && !gone(errno))
			bad++;
		if ((r = ioctl(fd, I_LOOK, name)) != 0 && !gone(errno) &&
		    errno != EINVAL)
			bad++;
		if ((r = ioctl(fd, I_POP, 0)) != 0 && !gone(errno) &&
		    errno != EINVAL && errno != EPERM)
			bad++;
		(void)r;
	}
	return (void *)(long)bad;
}

static void test_close_beside_plumbing(void)
{
	for (int round = 0; round < 60; round++) {
		pthread_t t[3];
		void *bad;
		int fd = open_echo(0);

		REQUIRE(fd >= 0);
		cl_fd = fd;
		for (int i = 0; i < 3; i++)
			REQUIRE(pthread_create(&t[i], NULL, cl_plumb, NULL) == 0);
		usleep((useconds_t)(round % 7) * 100);
		CHECK_RET(close(fd), 0);
		for (int i = 0; i < 3; i++) {
			pthread_join(t[i], &bad);
			CHECK_EQ((long)bad, 0);
		}
	}
}

/* I_RECVFD waiting when a read error comes (M_ERROR): it returns the
 * error, as a read would (it slept on before); non-blocking, the error
 * and not EAGAIN.  An M_PASSFP the head did not make: EBADMSG. */
static int rf_fd;

static void *rf_wait(void *arg)
{
	struct strrecvfd rf;

	*(int *)arg = ioctl(rf_fd, I_RECVFD, &rf) < 0 ? errno : 0;
	return NULL;
}

static void test_recvfd_error(void)
{
	struct strrecvfd rf;
	struct timespec ts;
	pthread_t t;
	int e = -1, j;

	rf_fd = open_tm(0);
	REQUIRE(pthread_create(&t, NULL, rf_wait, &e) == 0);
	usleep(50000);
	CHECK_RET(sendup_bytes(rf_fd, M_ERROR, 2, EIO, 0), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	j = pthread_timedjoin_np(t, NULL, &ts);
	CHECK_EQ(j, 0);		/* (else stuck for good: left behind) */
	CHECK_EQ(e, EIO);
	CHECK_RET(fcntl(rf_fd, F_SETFL, O_NONBLOCK), 0);
	CHECK_ERR(ioctl(rf_fd, I_RECVFD, &rf), EIO);
	if (j == 0)
		CHECK_RET(close(rf_fd), 0);
	/* an M_PASSFP a module made (any bytes, here none): not a
	 * descriptor passed, EBADMSG, and it is gone */
	rf_fd = open_tm(O_NONBLOCK);
	CHECK_RET(sendup(rf_fd, M_PASSFP, 0, 0, NULL, 0, NULL, -1), 0);
	CHECK_RET(sendup(rf_fd, M_PASSFP, 0, 0, "12345678", 8, NULL, -1), 0);
	CHECK_ERR(ioctl(rf_fd, I_RECVFD, &rf), EBADMSG);
	CHECK_ERR(ioctl(rf_fd, I_RECVFD, &rf), EBADMSG);
	CHECK_ERR(ioctl(rf_fd, I_RECVFD, &rf), EAGAIN);
	CHECK_RET(close(rf_fd), 0);
}

static void test_passfd(void)
{
	int p[2], s = open_echo(0), f, n;
	char path[] = "/tmp/sth-ioctl-XXXXXX", buf[16];
	struct strrecvfd rf;
	long base = streams_in_use();

	f = mkstemp(path);
	REQUIRE(f >= 0);
	REQUIRE(write(f, "content", 7) == 7);
	unlink(path);
	open_pipe(p);
	/* a regular descriptor */
	CHECK_RET(ioctl(p[0], I_SENDFD, f), 0);
	CHECK_RET(nread(p[1], NULL), 1);
	memset(&rf, 0xff, sizeof(rf));
	CHECK_RET(ioctl(p[1], I_RECVFD, &rf), 0);
	CHECK(rf.fd >= 0 && rf.fd != f);
	CHECK_EQ(rf.uid, geteuid());
	CHECK_EQ(rf.gid, getegid());
	n = (int)pread(rf.fd, buf, sizeof(buf), 0);
	CHECK_EQ(n, 7);
	CHECK_MEM(buf, "content", 7);
	close(rf.fd);
	/* a stream descriptor; the sender closes its own at once */
	int s2 = dup(s);
	CHECK_RET(ioctl(p[1], I_SENDFD, s2), 0);
	CHECK_RET(close(s2), 0);
	CHECK_RET(ioctl(p[0], I_RECVFD, &rf), 0);
	CHECK_RET(isastream(rf.fd), 1);
	CHECK_RET(write(rf.fd, "via fd", 6), 6);
	CHECK_RET(read(s, buf, sizeof(buf)), 6);
	CHECK_RET(close(rf.fd), 0);
	/* errors */
	CHECK_ERR(ioctl(p[0], I_SENDFD, -1), EBADF);
	CHECK_ERR(ioctl(p[0], I_SENDFD, 1000000), EBADF);
	CHECK_RET(set_nonblock(p[1], true), 0);
	CHECK_ERR(ioctl(p[1], I_RECVFD, &rf), EAGAIN);
	CHECK_RET(write(p[0], "data", 4), 4);
	CHECK_ERR(ioctl(p[1], I_RECVFD, &rf), EBADMSG);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 4);
	/* "EINVAL: fildes is not connected to a stream pipe" */
	CHECK_ERR(ioctl(s, I_SENDFD, f), EINVAL);
	/* a passed descriptor nobody receives is closed with the pipe */
	int e = open_echo(0);
	CHECK_RET(ioctl(p[0], I_SENDFD, e), 0);
	CHECK_RET(close(e), 0);
	CHECK_RET(streams_in_use(), base + 3);	/* s, pipe ends, e */
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(streams_in_use(), base);
	close(f);
	CHECK_RET(close(s), 0);
}

static void test_fdinsert(void)
{
	int a = open("/dev/streams/pipe", O_RDWR);
	int b = open("/dev/streams/pipe", O_RDWR);
	struct strfdinsert fi;
	void *slot[2] = { 0, 0 };
	char buf[16];

	REQUIRE(a >= 0 && b >= 0);
	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf.len = sizeof(void *);
	fi.ctlbuf.buf = (char *)slot;
	fi.databuf.len = -1;
	fi.flags = 0;
	fi.fildes = b;
	fi.offset = 0;
	/* bad requests first */
	fi.offset = 1;
	fi.ctlbuf.len = 2 * sizeof(void *);
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), EINVAL);	/* misaligned */
	fi.offset = sizeof(void *);
	fi.ctlbuf.len = sizeof(void *);
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), EINVAL);	/* no room */
	fi.offset = 0;
	fi.flags = 5;
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), EINVAL);
	fi.flags = 0;
	int nul = open("/dev/null", O_RDWR);
	fi.fildes = nul;
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), EINVAL);	/* not a stream */
	close(nul);
	/* "EINVAL: the fildes member ... is not a valid, open STREAM
	 * file descriptor" */
	CHECK_ERR(ioctl(a, I_FDINSERT, &fi), EINVAL);
	/* connect a to b */
	fi.fildes = b;
	CHECK_RET(ioctl(a, I_FDINSERT, &fi), 0);
	CHECK_RET(write(a, "a->b", 4), 4);
	CHECK_RET(read(b, buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "a->b", 4);
	CHECK_RET(write(b, "b->a!", 5), 5);
	CHECK_RET(read(a, buf, sizeof(buf)), 5);
	CHECK_MEM(buf, "b->a!", 5);
	/* a full, a message for it from b, then b closes: a is hung up
	 * (reads what it has, then 0; writes fail ENXIO) and what it had
	 * queued for b is gone */
	char blk[1024] = { 0 };
	CHECK_RET(set_nonblock(a, true), 0);
	while (write(a, blk, sizeof(blk)) == (ssize_t)sizeof(blk))
		;
	CHECK_EQ(errno, EAGAIN);
	CHECK_RET(write(b, "bye", 3), 3);
	CHECK_RET(close(b), 0);
	struct pollfd pf = { a, POLLOUT | POLLIN, 0 };
	CHECK_RET(poll(&pf, 1, 2000), 1);
	CHECK_EQ(pf.revents, POLLIN | POLLHUP);
	CHECK_ERR(write(a, "x", 1), ENXIO);
	CHECK_RET(read(a, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "bye", 3);
	CHECK_RET(read(a, buf, sizeof(buf)), 0);
	CHECK_RET(close(a), 0);
}

/* I_FDINSERT asleep for flow control keeps the stream it names: a close
 * of that stream's descriptor meanwhile closes it only once the call is
 * done (it did at once, and the driver got a freed queue's address). */
struct fdi {
	int fd;
	struct strfdinsert fi;
	_Atomic int ret;
};

static void *fdi_main(void *arg)
{
	struct fdi *a = arg;

	atomic_store(&a->ret, ioctl(a->fd, I_FDINSERT, &a->fi) == 0 ? 0 : errno);
	return NULL;
}

static void test_fdinsert_hold(void)
{
	int p[2], e = open_echo(0);
	char buf[2048];
	void *slot = NULL;
	struct fdi a = { .ret = -1 };
	pthread_t t;
	long base;

	open_pipe(p);
	fill_to_full(p[0]);
	a.fd = p[0];
	a.fi.ctlbuf.len = sizeof(void *);
	a.fi.ctlbuf.buf = (char *)&slot;
	a.fi.databuf.len = -1;
	a.fi.fildes = e;
	base = streams_in_use();
	REQUIRE(pthread_create(&t, NULL, fdi_main, &a) == 0);
	pause_ms(100);
	CHECK_EQ(atomic_load(&a.ret), -1);		/* asleep */
	CHECK_RET(close(e), 0);
	pause_ms(50);
	CHECK_EQ(streams_in_use(), base);		/* still held */
	CHECK_RET(set_nonblock(p[1], true), 0);
	while (read(p[1], buf, sizeof(buf)) > 0)
		;
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&a.ret), 0);
	CHECK_EQ(streams_in_use(), base - 1);		/* closed now */
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* A stream's descriptor in an M_PASSFP that a flush drops: its close
 * waits until the flushing call has left the library (it ran inside,
 * where a stream's last close cannot wait for its grace period: a
 * STREAMS assertion, and with STREAMS_DEBUG an abort). */
extern long str_bad_calls(void);

static void test_passfp_flushed_stream(void)
{
	int p[2], s = open_echo(0);
	long base, bad0 = str_bad_calls();

	open_pipe(p);
	base = streams_in_use();
	CHECK_RET(ioctl(p[0], I_SENDFD, s), 0);
	CHECK_RET(close(s), 0);
	CHECK_EQ(streams_in_use(), base);	/* the message holds it */
	CHECK_RET(ioctl(p[1], I_FLUSH, FLUSHR), 0);
	CHECK_EQ(streams_in_use(), base - 1);	/* closed by then */
	CHECK_EQ(str_bad_calls(), bad0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

static void test_transparent(void)
{
	int fd = open_tm(0), v = 41;
	char out[16];

	CHECK_RET(ioctl(fd, TM_TRANSPARENT, &v), 0);
	CHECK_EQ(v, 42);
	CHECK_RET(ioctl(fd, TM_TRANSPARENT, &v), 0);
	CHECK_EQ(v, 43);
	memset(out, 0, sizeof(out));
	CHECK_RET(ioctl(fd, TM_TRANSOUT, out), 0);
	CHECK_MEM(out, "testmod-copyout", 16);
	/* a bad address: EFAULT, and the stream goes on */
	CHECK_ERR(ioctl(fd, TM_TRANSPARENT, unmapped()), EFAULT);
	CHECK_ERR(ioctl(fd, TM_TRANSPARENT, NULL), EFAULT);
	CHECK_ERR(ioctl(fd, TM_TRANSOUT, unmapped()), EFAULT);
	CHECK_ERR(ioctl(fd, TM_TRANSOUT, (void *)8), EFAULT);
	CHECK_RET(ioctl(fd, TM_TRANSPARENT, &v), 0);
	CHECK_EQ(v, 44);
	/* an I_STR-only command sent transparently is refused */
	CHECK_ERR(ioctl(fd, TM_ECHO, &v), EINVAL);
	/* a command nobody knows: EINVAL */
	CHECK_ERR(ioctl(fd, 0x5a5a01, &v), EINVAL);
	CHECK_RET(ioctl(fd, I_POP, 0), 0);
	CHECK_ERR(ioctl(fd, TM_TRANSPARENT, &v), EINVAL);
	CHECK_RET(close(fd), 0);
}

/*
 * Bad pointers for structure arguments: EFAULT and a stream that still
 * works.  Each runs in its own child process (CHECK_ISOLATED), so that a
 * crash is reported as such and the others still run.
 */
static void *bad;	/* unmapped, set before the children are made */

static bool still_works(int fd)
{
	char buf[8];

	ioctl(fd, I_FLUSH, FLUSHR);
	return write(fd, "ok", 2) == 2 && read(fd, buf, sizeof(buf)) == 2;
}

#define BADPTR(name, ...)						\
static int name(void)							\
{									\
	int fd = open_tm(O_NONBLOCK);					\
	__VA_ARGS__;							\
	CHECK(still_works(fd));						\
	CHECK_RET(close(fd), 0);					\
	return 0;							\
}

BADPTR(bp_push_null, CHECK_ERR(ioctl(fd, I_PUSH, NULL), EFAULT))
BADPTR(bp_push, CHECK_ERR(ioctl(fd, I_PUSH, bad), EFAULT))
BADPTR(bp_find, CHECK_ERR(ioctl(fd, I_FIND, bad), EFAULT))
BADPTR(bp_look, CHECK_ERR(ioctl(fd, I_LOOK, bad), EFAULT))
BADPTR(bp_list, CHECK_ERR(ioctl(fd, I_LIST, bad), EFAULT))
BADPTR(bp_list_names,
	struct str_list sl = { 2, bad };
	CHECK_ERR(ioctl(fd, I_LIST, &sl), EFAULT))
BADPTR(bp_str, CHECK_ERR(ioctl(fd, I_STR, bad), EFAULT))
BADPTR(bp_str_null, CHECK_ERR(ioctl(fd, I_STR, NULL), EFAULT))
BADPTR(bp_str_data,
	struct strioctl si = { TM_ECHO, 0, 4, bad };
	CHECK_ERR(ioctl(fd, I_STR, &si), EFAULT))
BADPTR(bp_grdopt, CHECK_ERR(ioctl(fd, I_GRDOPT, bad), EFAULT))
BADPTR(bp_gwropt, CHECK_ERR(ioctl(fd, I_GWROPT, NULL), EFAULT))
BADPTR(bp_nread, CHECK_ERR(ioctl(fd, I_NREAD, bad), EFAULT))
BADPTR(bp_getcltime, CHECK_ERR(ioctl(fd, I_GETCLTIME, bad), EFAULT))
BADPTR(bp_setcltime, CHECK_ERR(ioctl(fd, I_SETCLTIME, bad), EFAULT))
BADPTR(bp_gerropt, CHECK_ERR(ioctl(fd, I_GERROPT, bad), EFAULT))
BADPTR(bp_flushband, CHECK_ERR(ioctl(fd, I_FLUSHBAND, bad), EFAULT))
BADPTR(bp_peek, CHECK_ERR(ioctl(fd, I_PEEK, bad), EFAULT))
BADPTR(bp_peek_bufs,
	struct strpeek sp;
	CHECK_RET(write(fd, "peek", 4), 4);
	memset(&sp, 0, sizeof(sp));
	sp.ctlbuf.maxlen = 16;
	sp.ctlbuf.buf = bad;
	sp.databuf.maxlen = 16;
	sp.databuf.buf = bad;
	CHECK_ERR(ioctl(fd, I_PEEK, &sp), EFAULT);
	CHECK_RET(nread(fd, NULL), 1))
BADPTR(bp_getband,
	CHECK_RET(write(fd, "band", 4), 4);
	CHECK_ERR(ioctl(fd, I_GETBAND, bad), EFAULT))
BADPTR(bp_getsig,
	CHECK_RET(ioctl(fd, I_SETSIG, S_INPUT), 0);
	CHECK_ERR(ioctl(fd, I_GETSIG, bad), EFAULT);
	CHECK_RET(ioctl(fd, I_SETSIG, 0), 0))
BADPTR(bp_fdinsert, CHECK_ERR(ioctl(fd, I_FDINSERT, bad), EFAULT))
BADPTR(bp_fdinsert_ctl,
	struct strfdinsert fi;
	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf.len = sizeof(void *);
	fi.ctlbuf.buf = bad;
	fi.databuf.len = -1;
	fi.fildes = fd;
	CHECK_ERR(ioctl(fd, I_FDINSERT, &fi), EFAULT))
BADPTR(bp_fdinsert_data,
	struct strfdinsert fi;
	void *slot = NULL;
	memset(&fi, 0, sizeof(fi));
	fi.ctlbuf.len = sizeof(void *);
	fi.ctlbuf.buf = (char *)&slot;
	fi.databuf.len = 8;
	fi.databuf.buf = bad;
	fi.fildes = fd;
	CHECK_ERR(ioctl(fd, I_FDINSERT, &fi), EFAULT))
BADPTR(bp_recvfd,
	int p[2];
	struct strrecvfd rf;
	/* a bad address keeps the descriptor for a later I_RECVFD */
	open_pipe(p);
	CHECK_RET(ioctl(p[0], I_SENDFD, fd), 0);
	CHECK_ERR(ioctl(p[1], I_RECVFD, bad), EFAULT);
	CHECK_RET(ioctl(p[1], I_RECVFD, &rf), 0);
	CHECK_RET(isastream(rf.fd), 1);
	CHECK_RET(close(rf.fd), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0))
BADPTR(bp_fionread, CHECK_ERR(ioctl(fd, FIONREAD, bad), EFAULT))

static void test_bad_pointers(void)
{
	bad = unmapped();
	CHECK_ISOLATED(bp_push_null);
	CHECK_ISOLATED(bp_push);
	CHECK_ISOLATED(bp_find);
	CHECK_ISOLATED(bp_look);
	CHECK_ISOLATED(bp_list);
	CHECK_ISOLATED(bp_list_names);
	CHECK_ISOLATED(bp_str);
	CHECK_ISOLATED(bp_str_null);
	CHECK_ISOLATED(bp_str_data);
	CHECK_ISOLATED(bp_grdopt);
	CHECK_ISOLATED(bp_gwropt);
	CHECK_ISOLATED(bp_nread);
	CHECK_ISOLATED(bp_getcltime);
	CHECK_ISOLATED(bp_setcltime);
	CHECK_ISOLATED(bp_gerropt);
	CHECK_ISOLATED(bp_flushband);
	CHECK_ISOLATED(bp_peek);
	CHECK_ISOLATED(bp_peek_bufs);
	CHECK_ISOLATED(bp_getband);
	CHECK_ISOLATED(bp_getsig);
	CHECK_ISOLATED(bp_fdinsert);
	CHECK_ISOLATED(bp_fdinsert_ctl);
	CHECK_ISOLATED(bp_fdinsert_data);
	CHECK_ISOLATED(bp_recvfd);
	CHECK_ISOLATED(bp_fionread);
}

int main(void)
{
	/* children first, while no stream or thread exists */
	CHECK_ISOLATED(anchor_child);
	test_bad_pointers();

	th_mark();
	test_push_pop();
	test_flush();
	test_str();
	test_options();
	test_queries();
	test_sig();
	test_sig_wrband();
	test_erropt();
	test_anchor();
	test_anchor_beside_pops();
	test_close_beside_plumbing();
	test_passfd();
	test_recvfd_error();
	test_fdinsert();
	test_fdinsert_hold();
	test_passfp_flushed_stream();
	test_transparent();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
