/*
 * test_sth_rw -- read(), write(), readv() and writev() on streams (POSIX
 * read/write, STREAMS parts): the read modes RNORM, RMSGN and RMSGD set
 * with I_SRDOPT (message boundaries, partial reads, the rest kept or
 * discarded), the control modes RPROTNORM (EBADMSG), RPROTDAT and
 * RPROTDIS, zero-length messages (read first: 0 and consumed; after data
 * in byte-stream mode: the read stops before it), zero-length writes
 * (a message on a device; nothing on a pipe unless SNDZERO), gather and
 * scatter, a blocking read woken by another thread's write, O_NONBLOCK
 * and EAGAIN, signals interrupting blocked reads and writes (EINTR
 * without SA_RESTART, restarted with it), and flow control of a pipe
 * writer (EAGAIN when the other end's read queue is full; a blocked
 * writer resumes only once the reader drains below the low water mark,
 * nothing lost).
 */
#include "sth.h"
#include "sthead.h"		/* sth_ucopy */

#include <limits.h>
#include <stdlib.h>
#include <sys/uio.h>

static void put_ctl(int fd, const char *ctl, const char *dat, int flags)
{
	struct strbuf c = { 0, (int)strlen(ctl), (char *)ctl };
	struct strbuf d = { 0, dat ? (int)strlen(dat) : -1, (char *)dat };

	CHECK_RET(putmsg(fd, &c, dat ? &d : NULL, flags), 0);
}

static void test_modes(void)
{
	int fd = open_echo(O_NONBLOCK), v, b;
	char buf[64];

	/* default: byte stream, control-normal */
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RNORM | RPROTNORM);

	/* RNORM ignores boundaries */
	CHECK_RET(write(fd, "abc", 3), 3);
	CHECK_RET(write(fd, "defg", 4), 4);
	CHECK_RET(nread(fd, &b), 2);
	CHECK_EQ(b, 3);
	CHECK_RET(read(fd, buf, sizeof(buf)), 7);
	CHECK_MEM(buf, "abcdefg", 7);
	/* a partial read keeps the rest */
	CHECK_RET(write(fd, "hello", 5), 5);
	CHECK_RET(write(fd, "world", 5), 5);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "he", 2);
	CHECK_RET(nread(fd, &b), 2);
	CHECK_EQ(b, 3);
	CHECK_RET(read(fd, buf, 5), 5);
	CHECK_MEM(buf, "llowo", 5);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "rld", 3);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);

	/* RMSGN: one message per read, the rest stays */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGN | RPROTNORM);
	CHECK_RET(write(fd, "abc", 3), 3);
	CHECK_RET(write(fd, "defg", 4), 4);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "abc", 3);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "de", 2);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_EQ(b, 2);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "fg", 2);
	CHECK_RET(nread(fd, &b), 0);

	/* RMSGD: one message per read, the rest discarded */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGD), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGD | RPROTNORM);
	CHECK_RET(write(fd, "abc", 3), 3);
	CHECK_RET(write(fd, "defg", 4), 4);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "ab", 2);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_EQ(b, 4);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "defg", 4);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);

	/* POSIX read: "if nbyte is zero ... the read() function shall
	 * return zero and have no other results" (in every mode) */
	CHECK_RET(write(fd, "xyz", 3), 3);
	CHECK_RET(read(fd, buf, 0), 0);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_EQ(b, 3);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);

	/* bad modes */
	CHECK_ERR(ioctl(fd, I_SRDOPT, 0x100), EINVAL);
	CHECK_ERR(ioctl(fd, I_SRDOPT, RNORM | RPROTDAT | RPROTDIS), EINVAL);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RMSGD | RPROTNORM);		/* unchanged */
	CHECK_RET(close(fd), 0);
}

static void test_protmodes(void)
{
	int fd = open_echo(O_NONBLOCK), b, v;
	char buf[64];
	struct strbuf c = { sizeof(buf), 0, buf }, d;
	char dbuf[64];
	int flags = 0;

	d.maxlen = sizeof(dbuf);
	d.buf = dbuf;
	/* RPROTNORM: a control part at the front is EBADMSG, left queued */
	put_ctl(fd, "CTL", "DAT", 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EBADMSG);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_EQ(b, 3);		/* I_NREAD counts the data blocks only */
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(c.len, 3);
	CHECK_EQ(d.len, 3);
	/* data first: the byte stream read stops before the M_PROTO */
	CHECK_RET(write(fd, "ab", 2), 2);
	put_ctl(fd, "C", "D", 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EBADMSG);
	/* and so does a high priority control message */
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	CHECK_RET(nread(fd, NULL), 0);
	put_ctl(fd, "P", "Q", RS_HIPRI);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EBADMSG);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);

	/* RPROTDAT: the control part is read as data, before the data */
	CHECK_RET(ioctl(fd, I_SRDOPT, RNORM | RPROTDAT), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RNORM | RPROTDAT);
	put_ctl(fd, "CTL", "DAT", 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 6);
	CHECK_MEM(buf, "CTLDAT", 6);
	put_ctl(fd, "P", "Q", RS_HIPRI);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "PQ", 2);
	/* after it a new high priority message is accepted */
	put_ctl(fd, "R", NULL, RS_HIPRI);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	CHECK_MEM(buf, "R", 1);
	/* RMSGN with RPROTDAT: a partial read keeps the rest */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN | RPROTDAT), 0);
	put_ctl(fd, "CTL", "DAT", 0);
	CHECK_RET(read(fd, buf, 4), 4);
	CHECK_MEM(buf, "CTLD", 4);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "AT", 2);

	/* RPROTDIS: the control part is dropped, the data read */
	CHECK_RET(ioctl(fd, I_SRDOPT, RNORM | RPROTDIS), 0);
	CHECK_RET(ioctl(fd, I_GRDOPT, &v), 0);
	CHECK_EQ(v, RNORM | RPROTDIS);
	put_ctl(fd, "CTL", "DAT", 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 3);
	CHECK_MEM(buf, "DAT", 3);
	put_ctl(fd, "P", "Q", RS_HIPRI);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	CHECK_MEM(buf, "Q", 1);
	put_ctl(fd, "P2", "Q2", RS_HIPRI);	/* the first one is gone */
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "Q2", 2);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CHECK_RET(close(fd), 0);
}

static void test_zero(void)
{
	int fd = open_echo(O_NONBLOCK), p[2], b, v;
	char buf[16];

	/* a zero-length write on a device sends a zero-length message */
	CHECK_RET(write(fd, "", 0), 0);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_EQ(b, 0);
	/* read first: returns 0 and consumes it */
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	/* after data, in byte-stream mode: the read stops before it */
	CHECK_RET(write(fd, "ab", 2), 2);
	CHECK_RET(write(fd, "", 0), 0);
	CHECK_RET(write(fd, "cd", 2), 2);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "ab", 2);
	CHECK_RET(nread(fd, &b), 2);
	CHECK_EQ(b, 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	CHECK_MEM(buf, "cd", 2);
	/* message modes too */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	CHECK_RET(write(fd, "", 0), 0);
	CHECK_RET(write(fd, "e", 1), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 1);
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGD), 0);
	CHECK_RET(write(fd, "", 0), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 0);
	CHECK_RET(nread(fd, NULL), 0);
	CHECK_RET(close(fd), 0);

	/* a pipe: a zero-length write sends nothing ... */
	open_pipe(p);
	CHECK_RET(write(p[0], "", 0), 0);
	CHECK_RET(nread(p[1], NULL), 0);
	/* ... unless SNDZERO is set */
	CHECK_RET(ioctl(p[0], I_SWROPT, SNDZERO | SNDPIPE), 0);
	CHECK_RET(ioctl(p[0], I_GWROPT, &v), 0);
	CHECK_EQ(v, SNDZERO | SNDPIPE);
	CHECK_RET(write(p[0], "", 0), 0);
	CHECK_RET(nread(p[1], &b), 1);
	CHECK_EQ(b, 0);
	CHECK_RET(read(p[1], buf, sizeof(buf)), 0);
	CHECK_RET(nread(p[1], NULL), 0);
	CHECK_RET(ioctl(p[0], I_SWROPT, SNDPIPE), 0);
	CHECK_RET(write(p[0], "", 0), 0);
	CHECK_RET(nread(p[1], NULL), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* Every length to 600 bytes and the borders of the copy routines beyond
 * (the 16-byte loop, the AVX loop or, with STREAMS_NOAVX=1, the SSE loop,
 * rep movsb: 256, 2048, 8192), at shifting source and destination
 * alignments, through write/read and putmsg/getmsg: the bytes arrive and
 * nothing beside the reader's buffer is written. */
static int one_length(int p[2], int n, unsigned char *src, unsigned char *dst,
		      size_t dsz)
{
	int so = n % 16, doff = 16 + (n * 7) % 48, bad = 0;

	for (int i = 0; i < n; i++)
		src[so + i] = (unsigned char)(i * 31 + n + i / 251);
	memset(dst, 0xa5, dsz);
	if (n % 2 == 0 && n > 0) {	/* (write(0) sends nothing) */
		if (write(p[0], src + so, (size_t)n) != n ||
		    read(p[1], dst + doff, (size_t)n + 8) != n)
			bad++;
	} else {
		struct strbuf w = { 0, n, (char *)src + so };
		struct strbuf r = { n + 8, 0, (char *)dst + doff };
		int fl = 0;
		if (putmsg(p[0], NULL, &w, 0) != 0 ||
		    getmsg(p[1], NULL, &r, &fl) != 0 || r.len != n)
			bad++;
	}
	if (memcmp(dst + doff, src + so, (size_t)n) != 0)
		bad++;
	for (int i = 0; i < doff; i++)
		bad += dst[i] != 0xa5;
	for (size_t i = (size_t)(doff + n); i < dsz; i++)
		bad += dst[i] != 0xa5;
	return bad;
}

static void test_lengths(void)
{
	static const int border[] = { 1023, 1024, 1025, 2047, 2048, 2049,
				      4095, 4096, 4097, 8191, 8192, 8193,
				      8255, 12289, 16384, 16397 };
	enum { MAXN = 16400 };
	unsigned char *src = malloc(MAXN + 16), *dst = malloc(MAXN + 80);
	int p[2], bad = 0;

	REQUIRE(src != NULL && dst != NULL);
	open_pipe(p);
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGN), 0);
	for (int n = 0; n <= 600; n++)
		bad += one_length(p, n, src, dst, MAXN + 80);
	for (int n = 601; n < 8300; n += 97)
		bad += one_length(p, n, src, dst, MAXN + 80);
	for (size_t k = 0; k < sizeof(border) / sizeof(border[0]); k++)
		bad += one_length(p, border[k], src, dst, MAXN + 80);
	CHECK_EQ(bad, 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	free(src);
	free(dst);
}

/* The long copies by the destination's offset from the source within a
 * page: rep movsb where that offset is 0 or 64 and more, the AVX (SSE,
 * STREAMS_NOAVX=1) loop where it is 1 to 63, on which some x86 CPUs'
 * rep movsb crawls byte by byte (sth_ucopy.c).  Called directly, for
 * the library's own blocks are not where a test could place them. */
static void test_ucopy_offsets(void)
{
	static const int delta[] = { 0, 1, 8, 31, 32, 63, 64, 65, 4032, 4095 };
	static const size_t len[] = { 2048, 2049, 8193, 16384, 16397 };
	enum { PAGE = 4096, SLACK = 64 };
	unsigned char *src = aligned_alloc(PAGE, 5 * PAGE);
	unsigned char *dst = aligned_alloc(PAGE, 7 * PAGE);
	int bad = 0;

	REQUIRE(src != NULL && dst != NULL);
	sth_ucopy_init();
	for (size_t k = 0; k < sizeof(len) / sizeof(len[0]); k++)
		for (size_t d = 0; d < sizeof(delta) / sizeof(delta[0]); d++) {
			size_t so = (k * 24) % 64, n = len[k];
			unsigned char *s = src + so;
			unsigned char *t = dst + PAGE + so + delta[d];

			for (size_t i = 0; i < n; i++)
				s[i] = (unsigned char)(i * 13 + d + k + i / 255);
			memset(dst, 0x5a, 7 * PAGE);
			CHECK_EQ(sth_ucopy(t, s, n), 0);
			bad += memcmp(t, s, n) != 0;
			for (unsigned char *c = t - SLACK; c < t; c++)
				bad += *c != 0x5a;
			for (unsigned char *c = t + n; c < t + n + SLACK; c++)
				bad += *c != 0x5a;
		}
	CHECK_EQ(bad, 0);
	free(src);
	free(dst);
}

static void test_vectors(void)
{
	int fd = open_echo(O_NONBLOCK), b;
	char x[2], y[1], z[10];
	struct iovec wv[3] = { { "ab", 2 }, { "", 0 }, { "cde", 3 } };
	struct iovec rv[3] = { { x, 2 }, { y, 1 }, { z, 10 } };

	/* writev: one message of everything */
	CHECK_RET(writev(fd, wv, 3), 5);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_EQ(b, 5);
	/* readv scatters */
	CHECK_RET(readv(fd, rv, 3), 5);
	CHECK_MEM(x, "ab", 2);
	CHECK_MEM(y, "c", 1);
	CHECK_MEM(z, "de", 2);
	/* readv across messages in byte-stream mode */
	CHECK_RET(write(fd, "1234", 4), 4);
	CHECK_RET(write(fd, "5678", 4), 4);
	memset(z, 0, sizeof(z));
	CHECK_RET(readv(fd, rv, 3), 8);
	CHECK_MEM(x, "12", 2);
	CHECK_MEM(y, "3", 1);
	CHECK_MEM(z, "45678", 5);
	/* bad vectors (counts in variables: the compiler would object) */
	volatile int neg = -1, huge = IOV_MAX + 1;
	CHECK_ERR(readv(fd, rv, neg), EINVAL);
	CHECK_ERR(writev(fd, wv, neg), EINVAL);
	CHECK_ERR(writev(fd, wv, huge), EINVAL);
	CHECK_RET(writev(fd, wv, 0), 0);
	CHECK_RET(close(fd), 0);
}

/* A write larger than the largest message is split (SVR4 strmsgsz). */
static void test_big_write(void)
{
	int fd = open_echo(O_NONBLOCK), b;
	size_t n = 100000;
	char *w = malloc(n), *r = malloc(n + 10);

	REQUIRE(w && r);
	for (size_t i = 0; i < n; i++)
		w[i] = (char)(i * 7 + 3);
	CHECK_RET(write(fd, w, n), (long long)n);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_EQ(b, 65536);
	size_t got = 0;
	for (int i = 0; i < 10 && got < n; i++) {
		ssize_t k = read(fd, r + got, n + 10 - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	CHECK_EQ(got, n);
	CHECK_MEM(r, w, n);
	CHECK_RET(close(fd), 0);
	free(w);
	free(r);
}

/* ---- blocking ---- */

struct rd {
	int fd;
	pid_t tid;		/* atomic */
	ssize_t ret;
	int err;
	size_t want;		/* 0: the whole buffer */
	char buf[64];
};

static void *reader(void *arg)
{
	struct rd *r = arg;

	__atomic_store_n(&r->tid, my_tid(), __ATOMIC_RELEASE);
	r->ret = read(r->fd, r->buf, r->want ? r->want : sizeof(r->buf));
	r->err = errno;
	return NULL;
}

static pid_t tid_of(struct rd *r)
{
	pid_t t;

	while ((t = __atomic_load_n(&r->tid, __ATOMIC_ACQUIRE)) == 0)
		pause_ms(1);
	return t;
}

static void test_block_read(void)
{
	struct rd r = { 0 };
	pthread_t th;
	int p[2];

	/* on a device */
	r.fd = open_echo(0);
	REQUIRE(pthread_create(&th, NULL, reader, &r) == 0);
	CHECK(wait_blocked(tid_of(&r)));
	CHECK_RET(write(r.fd, "wake", 4), 4);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 4);
	CHECK_MEM(r.buf, "wake", 4);
	CHECK_RET(close(r.fd), 0);

	/* on a pipe, woken by the other end */
	open_pipe(p);
	memset(&r, 0, sizeof(r));
	r.fd = p[1];
	REQUIRE(pthread_create(&th, NULL, reader, &r) == 0);
	CHECK(wait_blocked(tid_of(&r)));
	CHECK_RET(write(p[0], "pipe!", 5), 5);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 5);
	CHECK_MEM(r.buf, "pipe!", 5);

	/* O_NONBLOCK */
	CHECK_RET(set_nonblock(p[1], true), 0);
	CHECK_ERR(read(p[1], r.buf, sizeof(r.buf)), EAGAIN);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* RFILL: a byte stream read that waits until its buffer is full; a
 * zero-length message, a hangup (or a signal, an error, priority data)
 * ends it with what it has; non-blocking, what there is. */
static void rfill_start(struct rd *r, pthread_t *th, int fd, size_t want)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->want = want;
	REQUIRE(pthread_create(th, NULL, reader, r) == 0);
	CHECK(wait_blocked(tid_of(r)));
}

static void test_rfill(void)
{
	struct rd r;
	pthread_t th;
	char buf[8];
	int p[2], v;

	open_pipe(p);
	CHECK_RET(ioctl(p[1], I_SRDOPT, RFILL), 0);
	CHECK_RET(ioctl(p[1], I_GRDOPT, &v), 0);
	CHECK_EQ(v & RMODEMASK, RFILL);
	rfill_start(&r, &th, p[1], 6);
	CHECK_RET(write(p[0], "ab", 2), 2);
	pause_ms(20);
	CHECK(wait_blocked(r.tid));	/* still waiting: 2 of 6 */
	CHECK_RET(write(p[0], "cdef", 4), 4);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 6);
	CHECK_MEM(r.buf, "abcdef", 6);
	/* data there before the read: it still waits for the rest */
	CHECK_RET(write(p[0], "AB", 2), 2);
	rfill_start(&r, &th, p[1], 4);
	CHECK_RET(write(p[0], "CD", 2), 2);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 4);
	CHECK_MEM(r.buf, "ABCD", 4);
	/* what is more than asked for stays; non-blocking: what there is */
	CHECK_RET(write(p[0], "ghijk", 5), 5);
	CHECK_RET(read(p[1], buf, 3), 3);
	CHECK_MEM(buf, "ghi", 3);
	CHECK_RET(set_nonblock(p[1], true), 0);
	CHECK_RET(read(p[1], buf, 6), 2);
	CHECK_MEM(buf, "jk", 2);
	CHECK_ERR(read(p[1], buf, 6), EAGAIN);
	CHECK_RET(set_nonblock(p[1], false), 0);
	/* a zero-length message ends it, and is the next read's 0 */
	rfill_start(&r, &th, p[1], 6);
	CHECK_RET(write(p[0], "xy", 2), 2);
	pause_ms(20);
	{
		struct strbuf z = { 0, 0, buf };	/* (a pipe's write of
							   0 sends nothing) */
		CHECK_RET(putmsg(p[0], NULL, &z, 0), 0);
	}
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 2);
	CHECK_MEM(r.buf, "xy", 2);
	CHECK_RET(read(p[1], buf, 6), 0);
	/* so does the hangup */
	rfill_start(&r, &th, p[1], 6);
	CHECK_RET(write(p[0], "z", 1), 1);
	pause_ms(20);
	CHECK_RET(close(p[0]), 0);
	pthread_join(th, NULL);
	CHECK_EQ(r.ret, 1);
	CHECK_MEM(r.buf, "z", 1);
	CHECK_RET(close(p[1]), 0);
}

/* Fill p[0]'s way to p[1] with non-blocking writes of n bytes; returns
 * the bytes written. */
static long fill_pipe(int wfd, size_t n)
{
	char *blk = calloc(1, n);
	long total = 0;
	ssize_t k;

	REQUIRE(blk != NULL);
	REQUIRE(set_nonblock(wfd, true) == 0);
	while ((k = write(wfd, blk, n)) > 0 && total < 10000000)
		total += k;
	CHECK_EQ(k, -1);
	CHECK_EQ(errno, EAGAIN);
	REQUIRE(set_nonblock(wfd, false) == 0);
	free(blk);
	return total;
}

static void test_eintr(void)
{
	struct kicker k;
	int fd = open_echo(0), p[2];
	char buf[100];

	catch_sig(SIGUSR1, false);
	/* a blocked read */
	kicker_start(&k, SIGUSR1);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EINTR);
	kicker_stop(&k);
	/* a blocked getmsg too */
	struct strbuf d = { sizeof(buf), 0, buf };
	int flags = 0;
	kicker_start(&k, SIGUSR1);
	CHECK_ERR(getmsg(fd, NULL, &d, &flags), EINTR);
	kicker_stop(&k);
	CHECK_RET(close(fd), 0);

	/* a blocked write on a full pipe */
	open_pipe(p);
	long total = fill_pipe(p[0], 1000);
	CHECK(total > 0);
	kicker_start(&k, SIGUSR1);
	CHECK_ERR(write(p[0], buf, sizeof(buf)), EINTR);
	kicker_stop(&k);
	/* putmsg likewise */
	struct strbuf wd = { 0, 10, buf };
	kicker_start(&k, SIGUSR1);
	CHECK_ERR(putmsg(p[0], NULL, &wd, 0), EINTR);
	kicker_stop(&k);
	/* nothing of the interrupted calls arrived */
	int bytes = 0, b;
	CHECK_RET(set_nonblock(p[1], true), 0);
	while ((b = (int)read(p[1], buf, sizeof(buf))) > 0)
		bytes += b;
	CHECK_EQ(bytes, total);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
	signal(SIGUSR1, SIG_IGN);
}

/* With SA_RESTART a signal does not end the read. */
struct late {
	struct kicker *k;
	int fd;
};

static void *late_writer(void *arg)
{
	struct late *l = arg;

	kicker_wait(l->k, 4, 5000);
	write(l->fd, "late", 4);
	return NULL;
}

static void test_restart(void)
{
	struct kicker k;
	struct late l;
	pthread_t th;
	char buf[16];
	int fd = open_echo(0);

	sigcount[SIGUSR2] = 0;
	catch_sig(SIGUSR2, true);
	kicker_start(&k, SIGUSR2);
	l.k = &k;
	l.fd = fd;
	REQUIRE(pthread_create(&th, NULL, late_writer, &l) == 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	kicker_stop(&k);
	pthread_join(th, NULL);
	CHECK(wait_sig(SIGUSR2, 1, 2000));
	CHECK_RET(close(fd), 0);
	signal(SIGUSR2, SIG_IGN);
}

/* ---- a writer waiting for memory ---- */

struct lift {
	struct kicker *k;
	int lifted;		/* atomic */
};

static void *lift_limit(void *arg)
{
	struct lift *l = arg;

	kicker_wait(l->k, 4, 5000);
	__atomic_store_n(&l->lifted, 1, __ATOMIC_RELEASE);
	streams_set_memlimit(0);
	return NULL;
}

/*
 * Past the memory limit a blocking write waits (a millisecond at a time)
 * for memory: a signal handled without SA_RESTART ends the wait with
 * EINTR, one with SA_RESTART does not; a non-blocking write says EAGAIN.
 */
static void test_nomem_wait(void)
{
	struct kicker k;
	struct lift l = { &k, 0 };
	pthread_t th;
	char buf[100], in[200];
	int p[2];

	memset(buf, 'm', sizeof(buf));
	open_pipe(p);
	CHECK_EQ(streams_set_memlimit(1), 0);
	CHECK_RET(set_nonblock(p[0], true), 0);
	CHECK_ERR(write(p[0], buf, sizeof(buf)), EAGAIN);
	CHECK_RET(set_nonblock(p[0], false), 0);

	catch_sig(SIGUSR1, false);
	kicker_start(&k, SIGUSR1);
	CHECK_ERR(write(p[0], buf, sizeof(buf)), EINTR);
	kicker_stop(&k);
	signal(SIGUSR1, SIG_IGN);

	sigcount[SIGUSR2] = 0;
	catch_sig(SIGUSR2, true);
	kicker_start(&k, SIGUSR2);
	REQUIRE(pthread_create(&th, NULL, lift_limit, &l) == 0);
	CHECK_RET(write(p[0], buf, sizeof(buf)), 100);
	CHECK_EQ(__atomic_load_n(&l.lifted, __ATOMIC_ACQUIRE), 1);
	kicker_stop(&k);
	pthread_join(th, NULL);
	CHECK(sigcount[SIGUSR2] >= 4);
	signal(SIGUSR2, SIG_IGN);
	CHECK_EQ(streams_set_memlimit(0), 0);

	/* the interrupted and refused writes left nothing behind */
	CHECK_RET(set_nonblock(p[1], true), 0);
	CHECK_RET(read(p[1], in, sizeof(in)), 100);
	CHECK_EQ(memcmp(in, buf, 100), 0);
	CHECK_ERR(read(p[1], in, sizeof(in)), EAGAIN);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

/* ---- write flow control on a pipe ---- */

#define NREC	40
#define RECSZ	1000

struct wr {
	int fd;
	pid_t tid;		/* atomic */
	int done;		/* records written; atomic */
	int err;
};

static void *writer(void *arg)
{
	struct wr *w = arg;
	char rec[RECSZ];

	__atomic_store_n(&w->tid, my_tid(), __ATOMIC_RELEASE);
	for (int i = 0; i < NREC; i++) {
		memset(rec, 'a' + i % 26, sizeof(rec));
		memcpy(rec, &i, sizeof(i));
		if (write(w->fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
			w->err = errno;
			break;
		}
		__atomic_store_n(&w->done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int done_of(struct wr *w)
{
	return __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

static void test_flow(void)
{
	int p[2], b, next = 0;
	struct wr w = { 0 };
	pthread_t th;
	char rec[RECSZ];

	open_pipe(p);
	/* the reading end's head: high water 5000, low water 1500 */
	CHECK_RET(set_marks(p[1], 5000, 1500), 0);
	/* non-blocking: EAGAIN once the other end's read queue is full:
	 * at 5 records (5000 bytes) */
	long total = fill_pipe(p[0], RECSZ);
	CHECK_EQ(total, 5000);
	CHECK_RET(set_nonblock(p[0], true), 0);
	CHECK_ERR(write(p[0], rec, 1), EAGAIN);
	CHECK_RET(set_nonblock(p[0], false), 0);
	CHECK_RET(ioctl(p[1], I_SRDOPT, RMSGN), 0);
	/* drain, then let a blocking writer fill it again */
	while (nread(p[1], NULL) > 0)
		CHECK_RET(read(p[1], rec, sizeof(rec)), RECSZ);
	w.fd = p[0];
	REQUIRE(pthread_create(&th, NULL, writer, &w) == 0);
	/* it blocks once the queue is full */
	long end = now_ms() + 5000;
	while (nread(p[1], &b) < 5 && now_ms() < end)
		pause_ms(1);
	CHECK(wait_blocked(__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE)));
	int stalled = done_of(&w);
	CHECK_EQ(stalled, 5);
	CHECK_RET(nread(p[1], NULL), 5);
	/* reading down to 2000 bytes (>= low water) does not wake it */
	while (nread(p[1], NULL) > 2) {
		CHECK_RET(read(p[1], rec, sizeof(rec)), RECSZ);
		int seq;
		memcpy(&seq, rec, sizeof(seq));
		CHECK_EQ(seq, next);
		next++;
	}
	pause_ms(30);
	CHECK_EQ(done_of(&w), stalled);
	CHECK_RET(nread(p[1], NULL), 2);
	/* one more (1000 < 1500): the writer goes on; read everything,
	 * in order */
	while (next < NREC) {
		ssize_t k = read(p[1], rec, sizeof(rec));
		CHECK_EQ(k, RECSZ);
		if (k != RECSZ)
			break;
		int seq;
		memcpy(&seq, rec, sizeof(seq));
		CHECK_EQ(seq, next);
		for (int i = (int)sizeof(seq); i < RECSZ; i++)
			if (rec[i] != 'a' + seq % 26) {
				CHECK_EQ(rec[i], 'a' + seq % 26);
				break;
			}
		next++;
	}
	pthread_join(th, NULL);
	CHECK_EQ(done_of(&w), NREC);
	CHECK_EQ(w.err, 0);
	CHECK_RET(nread(p[1], NULL), 0);
	CHECK_RET(close(p[0]), 0);
	CHECK_RET(close(p[1]), 0);
}

int main(void)
{
	th_mark();
	test_modes();
	test_protmodes();
	test_zero();
	test_lengths();
	test_ucopy_offsets();
	test_vectors();
	test_big_write();
	test_block_read();
	test_rfill();
	test_eintr();
	test_restart();
	test_nomem_wait();
	test_flow();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
