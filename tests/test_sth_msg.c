/*
 * test_sth_msg -- putmsg, getmsg, putpmsg and getpmsg (POSIX/XSI
 * STREAMS): control and data parts, control or data only, zero-length
 * parts, maxlen -1 (the part stays, len -1) and 0, short buffers giving
 * MORECTL/MOREDATA and the rest on the next call, a high priority
 * message overtaking ordinary ones and the remainder of a partly read
 * one, RS_HIPRI and MSG_HIPRI/MSG_BAND/MSG_ANY with bands (MSG_BAND takes
 * only band >= *bandp), band and high priority messages read before
 * ordinary ones a reader has already taken into its cache, EINVAL for bad flags and bands and for high
 * priority without a control part, ENOSTR, EBADF, ERANGE for a control
 * part over 1024 or a data part over 65536 bytes, EBADMSG for a passed
 * descriptor at the front, a blocking getmsg woken by another thread,
 * and a hung-up stream that, drained, returns empty parts.  The direct
 * entries libxti uses (streams_getpmsg_direct, streams_putpmsg_direct:
 * the strbufs used in place) give the same results and errors.
 */
#include "sth.h"

#include <stdlib.h>
#include <sys/socket.h>

struct bufs {
	char cb[256], db[256];
	struct strbuf c, d;
	int flags, band;
};

static void reset(struct bufs *b, int cmax, int dmax)
{
	memset(b->cb, 0, sizeof(b->cb));
	memset(b->db, 0, sizeof(b->db));
	b->c.maxlen = cmax;
	b->c.len = -99;
	b->c.buf = b->cb;
	b->d.maxlen = dmax;
	b->d.len = -99;
	b->d.buf = b->db;
	b->flags = 0;
	b->band = 0;
}

/* putmsg of strings; NULL: no part */
static int mput(int fd, const char *ctl, const char *dat, int flags)
{
	struct strbuf c = { 0, ctl ? (int)strlen(ctl) : -1, (char *)ctl };
	struct strbuf d = { 0, dat ? (int)strlen(dat) : -1, (char *)dat };

	return putmsg(fd, ctl ? &c : NULL, dat ? &d : NULL, flags);
}

static int pput(int fd, const char *ctl, const char *dat, int band,
		int flags)
{
	struct strbuf c = { 0, ctl ? (int)strlen(ctl) : -1, (char *)ctl };
	struct strbuf d = { 0, dat ? (int)strlen(dat) : -1, (char *)dat };

	return putpmsg(fd, ctl ? &c : NULL, dat ? &d : NULL, band, flags);
}

static void test_parts(void)
{
	int fd = open_echo(O_NONBLOCK);
	struct bufs b;

	/* control and data */
	CHECK_RET(mput(fd, "ctl", "data", 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 3);
	CHECK_MEM(b.cb, "ctl", 3);
	CHECK_EQ(b.d.len, 4);
	CHECK_MEM(b.db, "data", 4);
	CHECK_EQ(b.flags, 0);
	/* control only: no data part, len -1 */
	CHECK_RET(mput(fd, "onlyctl", NULL, 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 7);
	CHECK_EQ(b.d.len, -1);
	/* data only: no control part */
	CHECK_RET(mput(fd, NULL, "onlydata", 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, -1);
	CHECK_EQ(b.d.len, 8);
	CHECK_MEM(b.db, "onlydata", 8);
	/* zero-length parts: len 0 */
	CHECK_RET(mput(fd, "", "", 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 0);
	CHECK_EQ(b.d.len, 0);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_RET(mput(fd, NULL, "", 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, -1);
	CHECK_EQ(b.d.len, 0);
	/* neither part: nothing is sent, 0 returned */
	CHECK_RET(mput(fd, NULL, NULL, 0), 0);
	struct strbuf none = { 0, -1, NULL };
	CHECK_RET(putmsg(fd, &none, &none, 0), 0);
	CHECK_RET(pput(fd, NULL, NULL, 3, MSG_BAND), 0);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_ERR(getmsg(fd, &b.c, &b.d, &b.flags), EAGAIN);
	/* maxlen is ignored by putmsg */
	struct strbuf c = { -5, 2, "xy" };
	CHECK_RET(putmsg(fd, &c, NULL, 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 2);
	CHECK_RET(close(fd), 0);
}

static void test_partial(void)
{
	int fd = open_echo(O_NONBLOCK);
	struct bufs b;

	/* maxlen -1: the control part stays, len -1 */
	CHECK_RET(mput(fd, "CTRL", "DATA", 0), 0);
	reset(&b, -1, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MORECTL);
	CHECK_EQ(b.c.len, -1);
	CHECK_EQ(b.d.len, 4);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 4);
	CHECK_MEM(b.cb, "CTRL", 4);
	CHECK_EQ(b.d.len, -1);
	/* maxlen -1 for the data part */
	CHECK_RET(mput(fd, "CTRL", "DATA", 0), 0);
	reset(&b, 256, -1);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MOREDATA);
	CHECK_EQ(b.c.len, 4);
	CHECK_EQ(b.d.len, -1);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, -1);
	CHECK_EQ(b.d.len, 4);
	CHECK_MEM(b.db, "DATA", 4);
	/* a NULL pointer is the same as maxlen -1 */
	CHECK_RET(mput(fd, "CTRL", "DATA", 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, NULL, &b.d, &b.flags), MORECTL);
	CHECK_EQ(b.d.len, 4);
	CHECK_RET(getmsg(fd, &b.c, NULL, &b.flags), 0);
	CHECK_EQ(b.c.len, 4);
	CHECK_RET(nread(fd, NULL), 0);
	/* maxlen 0: a non-empty part stays, len 0 */
	CHECK_RET(mput(fd, "CTRL", "DATA", 0), 0);
	reset(&b, 0, 0);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MORECTL | MOREDATA);
	CHECK_EQ(b.c.len, 0);
	CHECK_EQ(b.d.len, 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 4);
	CHECK_EQ(b.d.len, 4);
	/* maxlen 0 and a zero-length part: the part is removed */
	CHECK_RET(mput(fd, NULL, "", 0), 0);
	reset(&b, 0, 0);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, -1);
	CHECK_EQ(b.d.len, 0);
	CHECK_RET(nread(fd, NULL), 0);
	/* short buffers: MORECTL|MOREDATA, then the rest */
	CHECK_RET(mput(fd, "0123456789", "abcdefghij", 0), 0);
	reset(&b, 4, 3);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MORECTL | MOREDATA);
	CHECK_EQ(b.c.len, 4);
	CHECK_MEM(b.cb, "0123", 4);
	CHECK_EQ(b.d.len, 3);
	CHECK_MEM(b.db, "abc", 3);
	reset(&b, 4, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MORECTL);
	CHECK_EQ(b.c.len, 4);
	CHECK_MEM(b.cb, "4567", 4);
	CHECK_EQ(b.d.len, 7);
	CHECK_MEM(b.db, "defghij", 7);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 2);
	CHECK_MEM(b.cb, "89", 2);
	CHECK_EQ(b.d.len, -1);
	CHECK_RET(nread(fd, NULL), 0);
	/* only the data is too long */
	CHECK_RET(mput(fd, "c", "0123456789", 0), 0);
	reset(&b, 256, 6);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MOREDATA);
	CHECK_EQ(b.c.len, 1);
	CHECK_EQ(b.d.len, 6);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, -1);
	CHECK_EQ(b.d.len, 4);
	CHECK_MEM(b.db, "6789", 4);
	/* a remainder of a high priority message stays high priority */
	CHECK_RET(mput(fd, "HP", "0123456789", RS_HIPRI), 0);
	reset(&b, 256, 4);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MOREDATA);
	CHECK_EQ(b.flags, RS_HIPRI);
	reset(&b, 256, 256);
	b.flags = RS_HIPRI;
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.flags, RS_HIPRI);
	CHECK_EQ(b.d.len, 6);
	CHECK_RET(close(fd), 0);
}

static void test_priority(void)
{
	int fd = open_echo(O_NONBLOCK);
	struct bufs b;

	/* a high priority message goes before ordinary ones */
	CHECK_RET(mput(fd, "A", "a", 0), 0);
	CHECK_RET(mput(fd, "B", "b", 0), 0);
	CHECK_RET(mput(fd, "H", "h", RS_HIPRI), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.flags, RS_HIPRI);
	CHECK_MEM(b.cb, "H", 1);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.flags, 0);
	CHECK_MEM(b.cb, "A", 1);
	/* RS_HIPRI asks for a high priority message only */
	reset(&b, 256, 256);
	b.flags = RS_HIPRI;
	CHECK_ERR(getmsg(fd, &b.c, &b.d, &b.flags), EAGAIN);
	CHECK_RET(nread(fd, NULL), 1);
	/* a partly read message waits behind a newer high priority one */
	CHECK_RET(mput(fd, NULL, "0123456789", 0), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);	/* B */
	reset(&b, 256, 4);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), MOREDATA);
	CHECK_RET(mput(fd, "URGENT", NULL, RS_HIPRI), 0);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.flags, RS_HIPRI);
	CHECK_EQ(b.c.len, 6);
	CHECK_MEM(b.cb, "URGENT", 6);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.flags, 0);
	CHECK_EQ(b.d.len, 6);
	CHECK_MEM(b.db, "456789", 6);
	CHECK_RET(close(fd), 0);
}

static void test_bands(void)
{
	int fd = open_echo(O_NONBLOCK);
	struct bufs b;

	CHECK_RET(pput(fd, NULL, "b0", 0, MSG_BAND), 0);
	CHECK_RET(pput(fd, NULL, "b1", 1, MSG_BAND), 0);
	CHECK_RET(pput(fd, "c5", "b5", 5, MSG_BAND), 0);
	CHECK_RET(pput(fd, NULL, "b3", 3, MSG_BAND), 0);
	/* higher bands first; MSG_ANY takes the first */
	reset(&b, 256, 256);
	b.flags = MSG_ANY;
	CHECK_RET(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.flags, MSG_BAND);
	CHECK_EQ(b.band, 5);
	CHECK_EQ(b.c.len, 2);
	CHECK_MEM(b.db, "b5", 2);
	/* MSG_BAND takes the first only if its band is >= *bandp */
	reset(&b, 256, 256);
	b.flags = MSG_BAND;
	b.band = 4;
	CHECK_ERR(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), EAGAIN);
	reset(&b, 256, 256);
	b.flags = MSG_BAND;
	b.band = 3;
	CHECK_RET(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.band, 3);
	CHECK_EQ(b.flags, MSG_BAND);
	CHECK_MEM(b.db, "b3", 2);
	reset(&b, 256, 256);
	b.flags = MSG_BAND;
	b.band = 2;
	CHECK_ERR(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), EAGAIN);
	/* MSG_HIPRI: only a high priority message */
	reset(&b, 256, 256);
	b.flags = MSG_HIPRI;
	CHECK_ERR(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), EAGAIN);
	CHECK_RET(pput(fd, "hp", "x", 0, MSG_HIPRI), 0);
	reset(&b, 256, 256);
	b.flags = MSG_HIPRI;
	CHECK_RET(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.flags, MSG_HIPRI);
	CHECK_EQ(b.band, 0);
	CHECK_MEM(b.cb, "hp", 2);
	/* a high priority message passes the MSG_BAND test */
	CHECK_RET(pput(fd, "hq", NULL, 0, MSG_HIPRI), 0);
	reset(&b, 256, 256);
	b.flags = MSG_BAND;
	b.band = 200;
	CHECK_RET(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.flags, MSG_HIPRI);
	CHECK_EQ(b.band, 0);
	/* getmsg takes band messages too, flags 0 */
	reset(&b, 256, 256);
	CHECK_RET(getmsg(fd, &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.flags, 0);
	CHECK_MEM(b.db, "b1", 2);
	reset(&b, 256, 256);
	b.flags = MSG_ANY;
	CHECK_RET(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.band, 0);
	CHECK_EQ(b.flags, MSG_BAND);
	CHECK_MEM(b.db, "b0", 2);
	/* putmsg sends band 0 */
	CHECK_RET(mput(fd, NULL, "p", 0), 0);
	reset(&b, 256, 256);
	b.flags = MSG_ANY;
	b.band = 0;
	CHECK_RET(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.band, 0);
	CHECK_RET(close(fd), 0);
}

/* A reader's cache (the run of ordinary messages it has taken off the
 * queue) does not let them pass what comes later with a higher priority:
 * a band message and a high priority message sent after the cache was
 * filled are read first, also when a getpmsg that refused the band
 * message (MSG_HIPRI, MSG_BAND above it) looked in between. */
static void test_bands_behind_cache(void)
{
	static const struct {
		int flags, band;	/* the refusing look; 0: none */
	} look[] = { { 0, 0 }, { MSG_HIPRI, 0 }, { MSG_BAND, 2 } };
	struct bufs b;
	int p[2];

	for (size_t k = 0; k < sizeof(look) / sizeof(look[0]); k++) {
		open_pipe(p);
		set_nonblock(p[1], true);
		CHECK_RET(mput(p[0], NULL, "a", 0), 0);
		CHECK_RET(mput(p[0], NULL, "b", 0), 0);
		CHECK_RET(mput(p[0], NULL, "c", 0), 0);
		reset(&b, 256, 256);
		CHECK_RET(getmsg(p[1], &b.c, &b.d, &b.flags), 0);
		CHECK_MEM(b.db, "a", 1);	/* b and c are cached now */
		CHECK_RET(pput(p[0], NULL, "B1", 1, MSG_BAND), 0);
		if (look[k].flags != 0) {
			reset(&b, 256, 256);
			b.flags = look[k].flags;
			b.band = look[k].band;
			CHECK_ERR(getpmsg(p[1], &b.c, &b.d, &b.band,
					  &b.flags), EAGAIN);
		} else {
			CHECK_RET(mput(p[0], "H", NULL, RS_HIPRI), 0);
			reset(&b, 256, 256);
			b.flags = MSG_ANY;
			CHECK_RET(getpmsg(p[1], &b.c, &b.d, &b.band,
					  &b.flags), 0);
			CHECK_EQ(b.flags, MSG_HIPRI);
			CHECK_MEM(b.cb, "H", 1);
		}
		static const char *const order[] = { "B1", "b", "c" };
		for (int i = 0; i < 3; i++) {
			reset(&b, 256, 256);
			b.flags = MSG_ANY;
			CHECK_RET(getpmsg(p[1], &b.c, &b.d, &b.band, &b.flags),
				  0);
			CHECK_EQ(b.band, (i == 0 ? 1 : 0));
			CHECK_EQ(b.d.len, (int)strlen(order[i]));
			CHECK_MEM(b.db, order[i], strlen(order[i]));
		}
		reset(&b, 256, 256);
		CHECK_ERR(getmsg(p[1], &b.c, &b.d, &b.flags), EAGAIN);
		CHECK_RET(close(p[0]), 0);
		CHECK_RET(close(p[1]), 0);
	}
}

static void test_einval(void)
{
	int fd = open_echo(O_NONBLOCK);
	struct bufs b;

	/* putmsg */
	CHECK_ERR(mput(fd, "c", "d", 2), EINVAL);
	CHECK_ERR(mput(fd, "c", "d", MSG_BAND), EINVAL);
	CHECK_ERR(mput(fd, NULL, "d", RS_HIPRI), EINVAL);
	CHECK_ERR(mput(fd, NULL, NULL, RS_HIPRI), EINVAL);
	/* putpmsg */
	CHECK_ERR(pput(fd, "c", "d", 0, 0), EINVAL);
	CHECK_ERR(pput(fd, "c", "d", 0, MSG_ANY), EINVAL);
	CHECK_ERR(pput(fd, "c", "d", 0, MSG_HIPRI | MSG_BAND), EINVAL);
	CHECK_ERR(pput(fd, "c", "d", 1, MSG_HIPRI), EINVAL);
	CHECK_ERR(pput(fd, NULL, "d", 0, MSG_HIPRI), EINVAL);
	CHECK_ERR(pput(fd, "c", "d", 256, MSG_BAND), EINVAL);
	CHECK_ERR(pput(fd, "c", "d", -1, MSG_BAND), EINVAL);
	CHECK_RET(nread(fd, NULL), 0);		/* nothing was sent */
	/* getmsg */
	CHECK_RET(mput(fd, "c", "d", 0), 0);
	reset(&b, 256, 256);
	b.flags = 2;
	CHECK_ERR(getmsg(fd, &b.c, &b.d, &b.flags), EINVAL);
	b.flags = MSG_BAND;
	CHECK_ERR(getmsg(fd, &b.c, &b.d, &b.flags), EINVAL);
	/* getpmsg */
	b.flags = 0;
	CHECK_ERR(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), EINVAL);
	b.flags = MSG_HIPRI | MSG_ANY;
	CHECK_ERR(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), EINVAL);
	b.flags = 0x40;
	CHECK_ERR(getpmsg(fd, &b.c, &b.d, &b.band, &b.flags), EINVAL);
	CHECK_RET(nread(fd, NULL), 1);		/* still there */
	CHECK_RET(close(fd), 0);
}

/* streams_getpmsg_direct into b (a 256-byte control buffer) */
static int dget(int fd, struct bufs *b, int dmax, int flags, int band)
{
	reset(b, 256, dmax);
	b->flags = flags;
	b->band = band;
	return streams_getpmsg_direct(fd, &b->c, &b->d, &b->band, &b->flags);
}

/* streams_getpmsg_direct/streams_putpmsg_direct: getpmsg and putpmsg
 * with the arguments used in place; the same answers and errors. */
static void test_direct(void)
{
	int fd = open_echo(O_NONBLOCK), pfd[2];
	struct bufs b;
	struct strbuf c = { 0, 2, "cc" }, d = { 0, 3, "ddd" };

	CHECK_RET(streams_putpmsg_direct(fd, &c, &d, 0, MSG_BAND), 0);
	CHECK_RET(streams_putpmsg_direct(fd, NULL, &d, 7, MSG_BAND), 0);
	CHECK_RET(streams_putpmsg_direct(fd, &c, NULL, 0, MSG_HIPRI), 0);
	/* high priority first, then band 7, then band 0 */
	CHECK_RET(dget(fd, &b, 256, MSG_ANY, 0), 0);
	CHECK_EQ(b.flags, MSG_HIPRI);
	CHECK_EQ(b.c.len, 2);
	CHECK_EQ(b.d.len, -1);
	CHECK_RET(dget(fd, &b, 256, MSG_BAND, 5), 0);
	CHECK_EQ(b.flags, MSG_BAND);
	CHECK_EQ(b.band, 7);
	CHECK_EQ(b.c.len, -1);
	CHECK_EQ(b.d.len, 3);
	CHECK_MEM(b.db, "ddd", 3);
	/* a short data buffer: MOREDATA, the rest next time */
	CHECK_RET(dget(fd, &b, 2, MSG_ANY, 0), MOREDATA);
	CHECK_EQ(b.c.len, 2);
	CHECK_EQ(b.d.len, 2);
	CHECK_RET(dget(fd, &b, 256, MSG_ANY, 0), 0);
	CHECK_EQ(b.d.len, 1);
	CHECK_MEM(b.db, "d", 1);
	CHECK_ERR(dget(fd, &b, 256, MSG_ANY, 0), EAGAIN);
	/* bad arguments */
	CHECK_ERR(streams_getpmsg_direct(fd, &b.c, &b.d, NULL, &b.flags),
		  EINVAL);
	CHECK_ERR(streams_getpmsg_direct(fd, &b.c, &b.d, &b.band, NULL),
		  EINVAL);
	CHECK_ERR(dget(fd, &b, 256, MSG_HIPRI | MSG_ANY, 0), EINVAL);
	CHECK_ERR(streams_putpmsg_direct(fd, &c, &d, 256, MSG_BAND), EINVAL);
	CHECK_ERR(streams_putpmsg_direct(fd, &c, &d, 0, MSG_ANY), EINVAL);
	CHECK_ERR(streams_putpmsg_direct(fd, NULL, &d, 0, MSG_HIPRI), EINVAL);
	/* a bad data buffer is still caught */
	d.buf = (char *)8;
	CHECK_ERR(streams_putpmsg_direct(fd, NULL, &d, 0, MSG_BAND), EFAULT);
	CHECK_RET(nread(fd, NULL), 0);
	/* not a stream, not a descriptor */
	CHECK_RET(socketpair(AF_UNIX, SOCK_STREAM, 0, pfd), 0);
	CHECK_ERR(dget(pfd[0], &b, 256, MSG_ANY, 0), ENOSTR);
	CHECK_ERR(streams_putpmsg_direct(pfd[0], &c, NULL, 0, MSG_BAND),
		  ENOSTR);
	CHECK_RET(close(pfd[0]), 0);
	CHECK_RET(close(pfd[1]), 0);
	CHECK_ERR(dget(pfd[0], &b, 256, MSG_ANY, 0), EBADF);
	CHECK_ERR(streams_putpmsg_direct(pfd[0], &c, NULL, 0, MSG_BAND),
		  EBADF);
	CHECK_RET(close(fd), 0);
	/* STREAMS_GETPMSG_NOWAIT: on a blocking stream with nothing, EAGAIN
	 * at once (the flag cleared); with something, the message */
	fd = open_echo(0);
	CHECK_ERR(dget(fd, &b, 256, MSG_ANY | STREAMS_GETPMSG_NOWAIT, 0),
		  EAGAIN);
	CHECK_EQ(b.flags & STREAMS_GETPMSG_NOWAIT, 0);
	d.buf = "ddd";
	CHECK_RET(streams_putpmsg_direct(fd, NULL, &d, 0, MSG_BAND), 0);
	CHECK_RET(dget(fd, &b, 256, MSG_ANY | STREAMS_GETPMSG_NOWAIT, 0), 0);
	CHECK_EQ(b.flags, MSG_BAND);
	CHECK_EQ(b.d.len, 3);
	CHECK_RET(close(fd), 0);
}

static void test_errors(void)
{
	int fd = open_echo(O_NONBLOCK), nul, sv[2], closed;
	struct bufs b;
	char *big = calloc(1, 70000);

	REQUIRE(big != NULL);
	/* ENOSTR on descriptors that are not streams */
	nul = open("/dev/null", O_RDWR);
	REQUIRE(nul >= 0);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	reset(&b, 256, 256);
	CHECK_ERR(getmsg(nul, &b.c, &b.d, &b.flags), ENOSTR);
	CHECK_ERR(mput(nul, "c", "d", 0), ENOSTR);
	b.flags = MSG_ANY;
	CHECK_ERR(getpmsg(sv[0], &b.c, &b.d, &b.band, &b.flags), ENOSTR);
	CHECK_ERR(pput(sv[0], "c", "d", 1, MSG_BAND), ENOSTR);
	/* EBADF */
	closed = dup(nul);
	close(closed);
	b.flags = 0;
	CHECK_ERR(getmsg(closed, &b.c, &b.d, &b.flags), EBADF);
	CHECK_ERR(mput(closed, "c", "d", 0), EBADF);
	b.flags = MSG_ANY;
	CHECK_ERR(getpmsg(closed, &b.c, &b.d, &b.band, &b.flags), EBADF);
	CHECK_ERR(pput(closed, "c", "d", 0, MSG_BAND), EBADF);
	CHECK_ERR(mput(-1, "c", "d", 0), EBADF);
	/* ERANGE: control part over 1024 bytes, data part over 65536 */
	struct strbuf c = { 0, 1025, big }, d = { 0, 65537, big };
	CHECK_ERR(putmsg(fd, &c, NULL, 0), ERANGE);
	CHECK_ERR(putmsg(fd, NULL, &d, 0), ERANGE);
	CHECK_ERR(putpmsg(fd, &c, NULL, 1, MSG_BAND), ERANGE);
	CHECK_ERR(putpmsg(fd, NULL, &d, 1, MSG_BAND), ERANGE);
	CHECK_RET(nread(fd, NULL), 0);
	c.len = 1024;
	d.len = 65536;
	CHECK_RET(putmsg(fd, &c, &d, 0), 0);
	struct strbuf rc = { 2048, 0, big }, rd = { 65536, 0, big + 2048 };
	int fl = 0;
	CHECK_RET(getmsg(fd, &rc, &rd, &fl), 0);
	CHECK_EQ(rc.len, 1024);
	CHECK_EQ(rd.len, 65536);
	/* EAGAIN: nothing there */
	reset(&b, 256, 256);
	CHECK_ERR(getmsg(fd, &b.c, &b.d, &b.flags), EAGAIN);
	close(nul);
	close(sv[0]);
	close(sv[1]);
	CHECK_RET(close(fd), 0);
	free(big);
}

/* EBADMSG: a passed descriptor at the front. */
static void test_ebadmsg(void)
{
	int p[2], x = open_echo(0);
	struct bufs b;
	struct strrecvfd rf;

	open_pipe(p);
	CHECK_RET(ioctl(p[0], I_SENDFD, x), 0);
	reset(&b, 256, 256);
	CHECK_ERR(getmsg(p[1], &b.c, &b.d, &b.flags), EBADMSG);
	b.flags = MSG_ANY;
	CHECK_ERR(getpmsg(p[1], &b.c, &b.d, &b.band, &b.flags), EBADMSG);
	char buf[8];
	CHECK_ERR(read(p[1], buf, sizeof(buf)), EBADMSG);
	/* still there for I_RECVFD */
	CHECK_RET(ioctl(p[1], I_RECVFD, &rf), 0);
	CHECK(rf.fd >= 0);
	CHECK_RET(isastream(rf.fd), 1);
	close(rf.fd);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	CHECK_RET(close(x), 0);
}

struct gm {
	int fd;
	pid_t tid;		/* atomic */
	int ret, flags;
	char c[16], d[16];
	struct strbuf cb, db;
};

static void *getter(void *arg)
{
	struct gm *g = arg;

	__atomic_store_n(&g->tid, my_tid(), __ATOMIC_RELEASE);
	g->cb = (struct strbuf){ sizeof(g->c), 0, g->c };
	g->db = (struct strbuf){ sizeof(g->d), 0, g->d };
	g->ret = getmsg(g->fd, &g->cb, &g->db, &g->flags);
	return NULL;
}

static void test_blocking_and_hangup(void)
{
	int p[2];
	struct gm g = { 0 };
	struct bufs b;
	pthread_t th;

	open_pipe(p);
	/* a blocking getmsg woken by a putmsg from the other end */
	g.fd = p[1];
	REQUIRE(pthread_create(&th, NULL, getter, &g) == 0);
	while (__atomic_load_n(&g.tid, __ATOMIC_ACQUIRE) == 0)
		pause_ms(1);
	CHECK(wait_blocked(__atomic_load_n(&g.tid, __ATOMIC_ACQUIRE)));
	CHECK_RET(mput(p[0], "hello", "world", 0), 0);
	pthread_join(th, NULL);
	CHECK_EQ(g.ret, 0);
	CHECK_EQ(g.cb.len, 5);
	CHECK_EQ(g.db.len, 5);
	CHECK_MEM(g.c, "hello", 5);

	/* hangup: what is queued is read normally, then len 0 */
	CHECK_RET(mput(p[0], "last", "words", 0), 0);
	CHECK_RET(pput(p[0], NULL, "band", 2, MSG_BAND), 0);
	CHECK_RET(close(p[0]), 0);
	reset(&b, 256, 256);
	b.flags = MSG_ANY;
	CHECK_RET(getpmsg(p[1], &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.band, 2);
	CHECK_EQ(b.d.len, 4);
	reset(&b, 256, 256);
	CHECK_RET(getmsg(p[1], &b.c, &b.d, &b.flags), 0);
	CHECK_EQ(b.c.len, 4);
	CHECK_EQ(b.d.len, 5);
	for (int i = 0; i < 2; i++) {
		reset(&b, 256, 256);
		CHECK_RET(getmsg(p[1], &b.c, &b.d, &b.flags), 0);
		CHECK_EQ(b.c.len, 0);
		CHECK_EQ(b.d.len, 0);
		CHECK_EQ(b.flags, 0);
	}
	reset(&b, 256, 256);
	b.flags = MSG_ANY;
	CHECK_RET(getpmsg(p[1], &b.c, &b.d, &b.band, &b.flags), 0);
	CHECK_EQ(b.c.len, 0);
	CHECK_EQ(b.d.len, 0);
	/* putmsg on the hung-up pipe: EPIPE */
	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(mput(p[1], "c", "d", 0), EPIPE);
	CHECK_RET(close(p[1]), 0);
}

int main(void)
{
	th_mark();
	test_parts();
	test_partial();
	test_priority();
	test_bands();
	test_bands_behind_cache();
	test_einval();
	test_direct();
	test_errors();
	test_ebadmsg();
	test_blocking_and_hangup();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
