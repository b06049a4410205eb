/*
 * test_tirdwr_rw -- tirdwr on a connected endpoint, ferry-clip style:
 * tirdwr is pushed on one end of a STREAMS pipe and the test plays the
 * transport provider on the other end with getmsg/putmsg.  Data both
 * ways with read/write (T_DATA_IND and T_OPTDATA_IND lose their control
 * part, plain M_DATA passes, zero-length data is dropped both ways, with
 * a plain pipe as the control that shows it would have arrived);
 * T_ORDREL_IND reads as end of file and makes pop and close send
 * T_ORDREL_REQ; T_DISCON_IND passes its data, then hangs up, and close
 * sends nothing; T_EXDATA_IND and every other TPI message from below, and
 * any control part from the user, make every later call fail with EPROTO;
 * pop and close without any of these send T_DISCON_REQ.
 */
#include "sth.h"

#include <sys/tihdr.h>

#define BUFSZ	256

static void open_rw(int fds[2])
{
	open_pipe(fds);
	REQUIRE(ioctl(fds[0], I_PUSH, "tirdwr") == 0);
}

struct got {
	int rc, flags;
	unsigned char ctl[BUFSZ], dat[BUFSZ];
	int ctllen, datlen;
};

static void get1(int fd, struct got *g)
{
	struct strbuf c = { sizeof(g->ctl), 0, (char *)g->ctl };
	struct strbuf d = { sizeof(g->dat), 0, (char *)g->dat };

	memset(g, 0, sizeof(*g));
	g->rc = getmsg(fd, &c, &d, &g->flags);
	g->ctllen = c.len;
	g->datlen = d.len;
}

/* putmsg of ctl (NULL: none) and dat (NULL: none; "" zero-length). */
static int put1(int fd, const void *ctl, int ctllen, const char *dat,
		int hi)
{
	struct strbuf c = { 0, ctllen, (char *)ctl };
	struct strbuf d = { 0, dat ? (int)strlen(dat) : 0, (char *)dat };

	return putmsg(fd, ctl ? &c : NULL, dat ? &d : NULL, hi ? RS_HIPRI : 0);
}

/* The provider received exactly the data s, no control part. */
static void check_data(int fd, const char *s)
{
	struct got g;

	get1(fd, &g);
	CHECK_EQ(g.rc, 0);
	CHECK_EQ(g.flags, 0);
	CHECK_EQ(g.ctllen, -1);
	CHECK_EQ(g.datlen, (int)strlen(s));
	CHECK_MEM(g.dat, s, strlen(s));
}

static const struct T_discon_req the_discon = { T_DISCON_REQ, -1 };
static const struct T_ordrel_req the_ordrel = { T_ORDREL_REQ };

/* The provider received exactly the primitive p (len bytes, M_PROTO). */
static void check_prim(int fd, const void *p, int len)
{
	struct got g;

	get1(fd, &g);
	CHECK_EQ(g.rc, 0);
	CHECK_EQ(g.flags, 0);
	CHECK_EQ(g.ctllen, len);
	CHECK_EQ(g.datlen, -1);
	CHECK_MEM(g.ctl, p, (size_t)len);
}

/* Close the user's end; the provider's end gets what tirdwr sent, if
 * anything (want NULL: nothing), then end of file. */
static void close_user(int fds[2], const void *want, int len)
{
	char b[8];

	CHECK_RET(close(fds[0]), 0);
	if (want != NULL)
		check_prim(fds[1], want, len);
	CHECK_RET(nread(fds[1], NULL), 0);
	CHECK_RET(read(fds[1], b, sizeof(b)), 0);
	close(fds[1]);
}

static const struct T_data_ind dind = { T_DATA_IND, 0 };

static void test_data_up(void)
{
	int fds[2];
	char buf[BUFSZ];
	struct T_optdata_ind od = { T_OPTDATA_IND, 0, 0, 0 };
	struct got g;

	open_rw(fds);
	CHECK_RET(write(fds[1], "hello", 5), 5);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 5);
	CHECK_MEM(buf, "hello", 5);
	/* a T_DATA_IND reads as plain data (as M_PROTO it would be
	 * EBADMSG in the default read mode) */
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "world", 0), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 5);
	CHECK_MEM(buf, "world", 5);
	CHECK_RET(put1(fds[1], &od, sizeof(od), "opt", 0), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "opt", 3);
	/* getmsg sees no control part */
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "xyz", 0), 0);
	get1(fds[0], &g);
	CHECK_EQ(g.rc, 0);
	CHECK_EQ(g.ctllen, -1);
	CHECK_EQ(g.datlen, 3);
	CHECK_MEM(g.dat, "xyz", 3);
	/* zero-length data of any kind is dropped: it would read as EOF */
	CHECK_RET(put1(fds[1], NULL, 0, "", 0), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "", 0), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), NULL, 0), 0);
	CHECK_RET(put1(fds[1], &od, sizeof(od), NULL, 0), 0);
	CHECK_RET(nread(fds[0], NULL), 0);
	/* band data keeps its band */
	CHECK_RET(putpmsg(fds[1], &(struct strbuf){ 0, sizeof(dind),
						     (char *)&dind },
			  &(struct strbuf){ 0, 4, "band" }, 3, MSG_BAND), 0);
	{
		int band = 0, flags = MSG_ANY;
		struct strbuf c = { sizeof(g.ctl), 0, (char *)g.ctl };
		struct strbuf d = { sizeof(g.dat), 0, (char *)g.dat };
		CHECK_RET(getpmsg(fds[0], &c, &d, &band, &flags), 0);
		CHECK_EQ(flags, MSG_BAND);
		CHECK_EQ(band, 3);
		CHECK_EQ(c.len, -1);
		CHECK_EQ(d.len, 4);
	}
	/* several messages, in order */
	CHECK_RET(write(fds[1], "a", 1), 1);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "bc", 0), 0);
	CHECK_RET(write(fds[1], "d", 1), 1);
	CHECK_RET(nread(fds[0], NULL), 3);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "abcd", 4);
	close_user(fds, &the_discon, sizeof(the_discon));

	/* control: without tirdwr, the zero-length message does arrive */
	open_pipe(fds);
	CHECK_RET(put1(fds[1], NULL, 0, "", 0), 0);
	CHECK_RET(nread(fds[0], NULL), 1);
	close(fds[0]);
	close(fds[1]);
}

static void test_data_down(void)
{
	int fds[2];

	open_rw(fds);
	CHECK_RET(write(fds[0], "abc", 3), 3);
	check_data(fds[1], "abc");
	CHECK_RET(put1(fds[0], NULL, 0, "putmsg", 0), 0);
	check_data(fds[1], "putmsg");
	/* zero-length writes are dropped */
	CHECK_RET(ioctl(fds[0], I_SWROPT, SNDZERO), 0);
	CHECK_RET(write(fds[0], "", 0), 0);
	CHECK_RET(put1(fds[0], NULL, 0, "", 0), 0);
	CHECK_RET(nread(fds[1], NULL), 0);
	CHECK_RET(write(fds[0], "z", 1), 1);
	check_data(fds[1], "z");
	close_user(fds, &the_discon, sizeof(the_discon));

	/* control: without tirdwr they arrive */
	open_pipe(fds);
	CHECK_RET(ioctl(fds[0], I_SWROPT, SNDZERO), 0);
	CHECK_RET(write(fds[0], "", 0), 0);
	CHECK_RET(put1(fds[0], NULL, 0, "", 0), 0);
	CHECK_RET(nread(fds[1], NULL), 2);
	close(fds[0]);
	close(fds[1]);
}

static const struct T_ordrel_ind ordrel = { T_ORDREL_IND };

static void test_ordrel(void)
{
	int fds[2];
	char buf[BUFSZ];

	open_rw(fds);
	CHECK_RET(write(fds[1], "last", 4), 4);
	CHECK_RET(put1(fds[1], &ordrel, sizeof(ordrel), NULL, 0), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "last", 4);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 0);		/* EOF */
	/* half closed: the user may still send */
	CHECK_RET(write(fds[0], "more", 4), 4);
	check_data(fds[1], "more");
	/* close completes the release */
	close_user(fds, &the_ordrel, sizeof(the_ordrel));

	/* pop after the release: T_ORDREL_REQ too; then the module is gone
	 * and TPI messages reach the user as they are */
	open_rw(fds);
	CHECK_RET(put1(fds[1], &ordrel, sizeof(ordrel), NULL, 0), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 0);
	CHECK_RET(ioctl(fds[0], I_POP, 0), 0);
	check_prim(fds[1], &the_ordrel, sizeof(the_ordrel));
	CHECK_RET(nread(fds[1], NULL), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "raw", 0), 0);
	CHECK_ERR(read(fds[0], buf, sizeof(buf)), EBADMSG);
	close_user(fds, NULL, 0);
}

static void test_discon(void)
{
	int fds[2];
	char buf[BUFSZ];
	struct T_discon_ind di = { T_DISCON_IND, 104, -1 };

	open_rw(fds);
	CHECK_RET(write(fds[1], "d1", 2), 2);
	CHECK_RET(put1(fds[1], &di, sizeof(di), "bye", 0), 0);
	/* what came before the disconnect, its data, then 0 for ever */
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 5);
	CHECK_MEM(buf, "d1bye", 5);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 0);
	/* writes fail (EPIPE on a pipe end; ENXIO on a device) */
	CHECK_ERR(write(fds[0], "x", 1), EPIPE);
	{
		struct pollfd pf = { fds[0], POLLIN, 0 };
		CHECK_RET(poll(&pf, 1, 0), 1);
		CHECK(pf.revents & POLLHUP);
	}
	/* after a disconnect, close sends nothing */
	close_user(fds, NULL, 0);

	/* a release then a disconnect: the disconnect wins */
	open_rw(fds);
	CHECK_RET(put1(fds[1], &ordrel, sizeof(ordrel), NULL, 0), 0);
	CHECK_RET(put1(fds[1], &di, sizeof(di), NULL, 0), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 0);
	close_user(fds, NULL, 0);
}

/* Messages from below that make the stream fail with EPROTO. */
static void bad_up(const void *ctl, int ctllen, const char *dat, int hi)
{
	int fds[2];
	char buf[BUFSZ];

	open_rw(fds);
	CHECK_RET(write(fds[1], "ok", 2), 2);
	CHECK_RET(put1(fds[1], ctl, ctllen, dat, hi), 0);
	CHECK_RET(write(fds[1], "after", 5), 5);
	CHECK_ERR(read(fds[0], buf, sizeof(buf)), EPROTO);
	CHECK_ERR(write(fds[0], "x", 1), EPROTO);
	CHECK_ERR(read(fds[0], buf, sizeof(buf)), EPROTO);
	/* nothing of the user's went down; the connection is still up as
	 * far as tirdwr knows, so close disconnects */
	close_user(fds, &the_discon, sizeof(the_discon));
}

static void test_eproto_up(void)
{
	struct T_exdata_ind ex = { T_EXDATA_IND, 0 };
	struct T_optdata_ind odx = { T_OPTDATA_IND, T_ODF_EX, 0, 0 };
	struct T_conn_ind ci = { T_CONN_IND, 0, 0, 0, 0, 1 };
	struct T_info_ack ia = { T_INFO_ACK };
	struct T_ok_ack ok = { T_OK_ACK, T_CONN_REQ };
	t_scalar_t unknown = 99;
	short tiny = T_DATA_IND;

	bad_up(&ex, sizeof(ex), "urgent", 0);
	bad_up(&odx, sizeof(odx), "urgent", 0);
	bad_up(&ci, sizeof(ci), NULL, 0);
	bad_up(&ia, sizeof(ia), NULL, 1);
	bad_up(&ok, sizeof(ok), NULL, 1);
	bad_up(&dind, sizeof(dind), "hipri", 1);	/* data as M_PCPROTO */
	bad_up(&unknown, sizeof(unknown), NULL, 0);
	bad_up(&tiny, sizeof(tiny), NULL, 0);		/* no PRIM_type */
	bad_up(&dind, 6, "short", 0);			/* short T_DATA_IND */

	/* after the error, the end of the connection is still noted for
	 * the close: an orderly release is completed, a disconnect needs
	 * nothing */
	for (int k = 0; k < 2; k++) {
		struct T_discon_ind di = { T_DISCON_IND, 0, -1 };
		int fds[2];
		char buf[BUFSZ];

		open_rw(fds);
		CHECK_RET(put1(fds[1], &ex, sizeof(ex), "urgent", 0), 0);
		CHECK_ERR(read(fds[0], buf, sizeof(buf)), EPROTO);
		if (k == 0) {
			CHECK_RET(put1(fds[1], &ordrel, sizeof(ordrel), NULL,
				       0), 0);
			CHECK_ERR(read(fds[0], buf, sizeof(buf)), EPROTO);
			close_user(fds, &the_ordrel, sizeof(the_ordrel));
		} else {
			CHECK_RET(put1(fds[1], &di, sizeof(di), NULL, 0), 0);
			CHECK_ERR(read(fds[0], buf, sizeof(buf)), EPROTO);
			close_user(fds, NULL, 0);
		}
	}
}

/* A control part from the user: EPROTO, nothing sent down. */
static void bad_down(int hi)
{
	int fds[2];
	char buf[BUFSZ];
	struct T_data_req dr = { T_DATA_REQ, 0 };

	open_rw(fds);
	CHECK_RET(put1(fds[0], &dr, sizeof(dr), "data", hi), 0);
	CHECK_ERR(write(fds[0], "x", 1), EPROTO);
	CHECK_ERR(read(fds[0], buf, sizeof(buf)), EPROTO);
	CHECK_ERR(put1(fds[0], NULL, 0, "y", 0), EPROTO);
	CHECK_RET(nread(fds[1], NULL), 0);
	close_user(fds, &the_discon, sizeof(the_discon));
}

static void test_eproto_down(void)
{
	bad_down(0);
	bad_down(1);
}

static void test_pop(void)
{
	int fds[2];
	char buf[8];

	/* popped while connected: T_DISCON_REQ (SEQ_number -1) */
	open_rw(fds);
	CHECK_RET(write(fds[0], "data", 4), 4);
	CHECK_RET(ioctl(fds[0], I_POP, 0), 0);
	check_data(fds[1], "data");
	check_prim(fds[1], &the_discon, sizeof(the_discon));
	CHECK_RET(nread(fds[1], NULL), 0);
	/* the module is gone: a control part now goes down as it is */
	CHECK_RET(put1(fds[0], &the_ordrel, sizeof(the_ordrel), NULL, 0), 0);
	check_prim(fds[1], &the_ordrel, sizeof(the_ordrel));
	/* pushed again: works again */
	CHECK_RET(ioctl(fds[0], I_PUSH, "tirdwr"), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "again", 0), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 5);
	CHECK_MEM(buf, "again", 5);
	close_user(fds, &the_discon, sizeof(the_discon));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	th_mark();
	test_data_up();
	test_data_down();
	test_ordrel();
	test_discon();
	test_eproto_up();
	test_eproto_down();
	test_pop();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
