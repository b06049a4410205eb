/*
 * test_tirdwr_push -- what pushing tirdwr does with what already waits at
 * the stream head (SVR4 tirdwr(7)): only ordinary data may wait there;
 * any other message (a TPI indication or ack, high priority messages,
 * expedited data, a malformed primitive) fails I_PUSH with EPROTO and
 * leaves the stream as it was (the message still there, the module not
 * pushed, nothing sent down).  Otherwise queued T_DATA_IND and
 * T_OPTDATA_IND lose their control part (keeping their band) and
 * zero-length data is removed.  Messages a reader already took into the
 * head's read cache are looked at too.  Pushed on a STREAMS pipe end; the
 * test plays the provider on the other end.
 */
#include "sth.h"

#include <sys/tihdr.h>

#define BUFSZ	256

struct got {
	int rc, flags, band;
	unsigned char ctl[BUFSZ], dat[BUFSZ];
	int ctllen, datlen;
};

static void get1(int fd, struct got *g)
{
	struct strbuf c = { sizeof(g->ctl), 0, (char *)g->ctl };
	struct strbuf d = { sizeof(g->dat), 0, (char *)g->dat };

	memset(g, 0, sizeof(*g));
	g->flags = MSG_ANY;
	g->rc = getpmsg(fd, &c, &d, &g->band, &g->flags);
	g->ctllen = c.len;
	g->datlen = d.len;
}

static int put1(int fd, const void *ctl, int ctllen, const char *dat,
		int hi)
{
	struct strbuf c = { 0, ctllen, (char *)ctl };
	struct strbuf d = { 0, dat ? (int)strlen(dat) : 0, (char *)dat };

	return putmsg(fd, ctl ? &c : NULL, dat ? &d : NULL, hi ? RS_HIPRI : 0);
}

static void close_both(int fds[2])
{
	close(fds[0]);
	close(fds[1]);
}

static const struct T_data_ind dind = { T_DATA_IND, 0 };

/* ctl (and dat) waits at the head: the push fails with EPROTO and
 * changes nothing. */
static void refused(const void *ctl, int ctllen, const char *dat, int hi)
{
	int fds[2];
	struct got g;

	open_pipe(fds);
	CHECK_RET(write(fds[1], "before", 6), 6);
	CHECK_RET(put1(fds[1], ctl, ctllen, dat, hi), 0);
	CHECK_RET(nread(fds[0], NULL), 2);
	CHECK_ERR(ioctl(fds[0], I_PUSH, "tirdwr"), EPROTO);
	CHECK_RET(ioctl(fds[0], I_FIND, "tirdwr"), 0);
	CHECK_RET(nlist(fds[0]), 0);
	/* nothing went down (no T_DISCON_REQ from a close) */
	CHECK_RET(nread(fds[1], NULL), 0);
	/* both messages still there, as they were */
	CHECK_RET(nread(fds[0], NULL), 2);
	if (hi) {
		get1(fds[0], &g);
		CHECK_EQ(g.flags, MSG_HIPRI);
		CHECK_EQ(g.ctllen, ctllen);
		CHECK_MEM(g.ctl, ctl, (size_t)ctllen);
	}
	get1(fds[0], &g);
	CHECK_EQ(g.ctllen, -1);
	CHECK_EQ(g.datlen, 6);
	CHECK_MEM(g.dat, "before", 6);
	if (!hi) {
		get1(fds[0], &g);
		CHECK_EQ(g.flags, MSG_BAND);
		CHECK_EQ(g.ctllen, ctllen);
		CHECK_MEM(g.ctl, ctl, (size_t)ctllen);
		if (dat != NULL) {
			CHECK_EQ(g.datlen, (int)strlen(dat));
			CHECK_MEM(g.dat, dat, strlen(dat));
		}
	}
	/* and the push works once they are gone */
	CHECK_RET(nread(fds[0], NULL), 0);
	CHECK_RET(ioctl(fds[0], I_PUSH, "tirdwr"), 0);
	close_both(fds);
}

static void test_refused(void)
{
	struct T_ordrel_ind orl = { T_ORDREL_IND };
	struct T_discon_ind di = { T_DISCON_IND, 1, -1 };
	struct T_exdata_ind ex = { T_EXDATA_IND, 0 };
	struct T_optdata_ind odx = { T_OPTDATA_IND, T_ODF_EX, 0, 0 };
	struct T_conn_con cc = { T_CONN_CON, 0, 0, 0, 0 };
	struct T_info_ack ia = { T_INFO_ACK };
	t_scalar_t unknown = 77;
	short tiny = T_DATA_IND;

	refused(&orl, sizeof(orl), NULL, 0);
	refused(&di, sizeof(di), NULL, 0);
	refused(&ex, sizeof(ex), "urgent", 0);
	refused(&odx, sizeof(odx), "urgent", 0);
	refused(&cc, sizeof(cc), NULL, 0);
	refused(&unknown, sizeof(unknown), NULL, 0);
	refused(&tiny, sizeof(tiny), "x", 0);
	refused(&ia, sizeof(ia), NULL, 1);		/* high priority */
	refused(&dind, sizeof(dind), "hi", 1);
}

static void check_data(struct got *g, const char *s, int band)
{
	CHECK_EQ(g->rc, 0);
	CHECK_EQ(g->ctllen, -1);
	CHECK_EQ(g->datlen, (int)strlen(s));
	CHECK_MEM(g->dat, s, strlen(s));
	CHECK_EQ(g->band, band);
}

static void test_strip(void)
{
	int fds[2];
	struct T_optdata_ind od = { T_OPTDATA_IND, 0, 0, 0 };
	struct strbuf c = { 0, sizeof(dind), (char *)&dind };
	struct strbuf d = { 0, 5, "band2" };
	struct got g;
	char buf[BUFSZ];

	open_pipe(fds);
	CHECK_RET(write(fds[1], "a", 1), 1);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "b", 0), 0);
	CHECK_RET(put1(fds[1], NULL, 0, "", 0), 0);		/* dropped */
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "", 0), 0);	/* dropped */
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), NULL, 0), 0); /* dropped */
	CHECK_RET(put1(fds[1], &od, sizeof(od), "c", 0), 0);
	CHECK_RET(putpmsg(fds[1], &c, &d, 2, MSG_BAND), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "d", 0), 0);
	CHECK_RET(nread(fds[0], NULL), 8);
	CHECK_RET(ioctl(fds[0], I_PUSH, "tirdwr"), 0);
	CHECK_RET(nread(fds[0], NULL), 5);
	get1(fds[0], &g);
	check_data(&g, "band2", 2);		/* band 2 goes first */
	get1(fds[0], &g);
	check_data(&g, "a", 0);
	get1(fds[0], &g);
	check_data(&g, "b", 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "cd", 2);
	CHECK_RET(nread(fds[0], NULL), 0);
	close_both(fds);
}

/* A reader took a run of messages into the head's read cache; what is
 * left there is looked at like the rest of the queue. */
static void test_read_cache(void)
{
	int fds[2];
	struct T_ordrel_ind orl = { T_ORDREL_IND };
	struct got g;
	char buf[BUFSZ];

	open_pipe(fds);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "x1", 0), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "x2", 0), 0);
	CHECK_RET(put1(fds[1], &orl, sizeof(orl), NULL, 0), 0);
	get1(fds[0], &g);
	CHECK_EQ(g.ctllen, sizeof(dind));
	CHECK_EQ(g.datlen, 2);
	CHECK_ERR(ioctl(fds[0], I_PUSH, "tirdwr"), EPROTO);
	CHECK_RET(nread(fds[0], NULL), 2);
	get1(fds[0], &g);
	CHECK_EQ(g.ctllen, sizeof(dind));
	CHECK_MEM(g.dat, "x2", 2);
	get1(fds[0], &g);
	CHECK_EQ(g.ctllen, sizeof(orl));
	CHECK_EQ(g.datlen, -1);

	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "y1", 0), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "y2", 0), 0);
	CHECK_RET(put1(fds[1], &dind, sizeof(dind), "y3", 0), 0);
	get1(fds[0], &g);
	CHECK_MEM(g.dat, "y1", 2);
	CHECK_RET(ioctl(fds[0], I_PUSH, "tirdwr"), 0);
	CHECK_RET(read(fds[0], buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "y2y3", 4);
	close_both(fds);
}

/* Pushed over other modules, and pushed and popped many times: nothing
 * leaks, nothing is left behind. */
static void test_stack(void)
{
	int fds[2];
	char buf[BUFSZ];

	open_pipe(fds);
	CHECK_RET(ioctl(fds[0], I_PUSH, "nullmod"), 0);
	for (int i = 0; i < 20; i++) {
		CHECK_RET(ioctl(fds[0], I_PUSH, "tirdwr"), 0);
		CHECK_RET(put1(fds[1], &dind, sizeof(dind), "k", 0), 0);
		CHECK_RET(read(fds[0], buf, sizeof(buf)), 1);
		CHECK_RET(ioctl(fds[0], I_POP, 0), 0);
		/* the T_DISCON_REQ of the pop */
		CHECK_RET(nread(fds[1], NULL), 1);
		CHECK_RET(ioctl(fds[1], I_FLUSH, FLUSHR), 0);
	}
	CHECK_RET(nlist(fds[0]), 1);
	/* tirdwr only once on top of itself: its open looks at the head,
	 * which holds only data */
	CHECK_RET(ioctl(fds[0], I_PUSH, "tirdwr"), 0);
	CHECK_RET(ioctl(fds[0], I_PUSH, "tirdwr"), 0);
	CHECK_RET(nlist(fds[0]), 3);
	close_both(fds);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	th_mark();
	test_refused();
	test_strip();
	test_read_cache();
	test_stack();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
