/*
 * test_sth_datapath -- the stream head's data path against SVR4's
 * strread/strwrite/strrput, cases a review found (helper-26):
 *  - a part-read band message goes back in its band (RNORM, RMSGN,
 *    RPROTDAT, RPROTDIS);
 *  - FLUSHR (from below or I_FLUSH) takes everything, M_HPDATA and a
 *    descriptor in flight too; I_FLUSHBAND leaves a high priority
 *    message in front;
 *  - M_ERROR with a write error alone leaves what waits to be read;
 *  - SIGPIPE goes to the writing thread, and only with SNDPIPE;
 *  - M_READ carries the count the read asks for;
 *  - write(): the largest packet is min(q_maxpsz, strmsgsz) (ERANGE
 *    when a minimum forbids splitting), q_maxpsz 0 takes nothing, one
 *    under q_minpsz is refused (ERANGE); SO_WROFF's head room and
 *    SO_DELIM's MSGDELIM reach the module below; a bad buffer sends
 *    nothing (EFAULT);
 *  - reading a band message one byte at a time while another thread
 *    flushes (the message put back was read after putbq: ASan's
 *    use-after-free).
 */
#include "sth.h"

#include <sys/testmod.h>

static void test_band_rest(void)
{
	char buf[64];
	struct strbuf d = { sizeof(buf), 0, buf };
	int fd = open_tm(O_NONBLOCK), band, flags;

	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN), 0);
	CHECK_RET(sendup(fd, M_DATA, 1, 0, "AB", 2, "CD", 2), 0);
	CHECK_RET(sendup(fd, M_DATA, 1, 0, "EF", 2, NULL, -1), 0);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "AB", 2);
	band = 0;
	flags = MSG_ANY;
	CHECK_RET(getpmsg(fd, NULL, &d, &band, &flags), 0);
	CHECK_EQ(d.len, 2);
	CHECK_MEM(buf, "CD", 2);
	CHECK_EQ(band, 1);
	close(fd);

	fd = open_tm(O_NONBLOCK);	/* RPROTDAT: the control block read */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN | RPROTDAT), 0);
	CHECK_RET(sendup(fd, M_PROTO, 1, 0, "PP", 2, "DD", 2), 0);
	CHECK_RET(sendup(fd, M_DATA, 1, 0, "EF", 2, NULL, -1), 0);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "DD", 2);
	close(fd);

	fd = open_tm(O_NONBLOCK);	/* byte stream */
	CHECK_RET(sendup(fd, M_DATA, 1, 0, "AB", 2, "CD", 2), 0);
	CHECK_RET(sendup(fd, M_DATA, 1, 0, "EF", 2, NULL, -1), 0);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_RET(read(fd, buf, 2), 2);
	CHECK_MEM(buf, "CD", 2);
	close(fd);

	fd = open_tm(O_NONBLOCK);	/* RPROTDIS: the control part dropped */
	CHECK_RET(ioctl(fd, I_SRDOPT, RMSGN | RPROTDIS), 0);
	CHECK_RET(sendup(fd, M_PROTO, 1, 0, "PP", 2, "DD", 2), 0);
	CHECK_RET(sendup(fd, M_DATA, 1, 0, "EF", 2, NULL, -1), 0);
	CHECK_RET(read(fd, buf, 1), 1);
	CHECK_RET(read(fd, buf, 2), 1);
	CHECK_MEM(buf, "D", 1);
	close(fd);
}

static void test_flushes(void)
{
	char buf[64];
	struct strbuf c = { sizeof(buf), 0, buf }, d = { sizeof(buf), 0, buf };
	struct strbuf pc = { 0, 2, "PC" };
	struct bandinfo bi = { 3, FLUSHR };
	struct strrecvfd rf;
	int fd = open_tm(O_NONBLOCK), b, flags = 0, p[2], q[2], dn;

	/* FLUSHR from below: an M_HPDATA goes too */
	CHECK_RET(sendup(fd, M_HPDATA, 0, 0, "hp", 2, NULL, -1), 0);
	CHECK_RET(sendup(fd, M_DATA, 0, 0, "nd", 2, NULL, -1), 0);
	CHECK_RET(nread(fd, &b), 2);
	CHECK_RET(sendup_bytes(fd, M_FLUSH, 1, FLUSHR, 0), 0);
	CHECK_RET(nread(fd, &b), 0);
	CHECK_ERR(getmsg(fd, &c, &d, &flags), EAGAIN);
	/* and through I_FLUSH */
	CHECK_RET(sendup(fd, M_HPDATA, 0, 0, "hp", 2, NULL, -1), 0);
	CHECK_RET(ioctl(fd, I_FLUSH, FLUSHR), 0);
	CHECK_RET(nread(fd, &b), 0);
	close(fd);

	/* a descriptor in flight, flushed at the receiver or by the
	 * sender's FLUSHW crossing the pipe: gone (and closed) */
	dn = open("/dev/null", O_RDONLY);
	REQUIRE(dn >= 0);
	open_pipe(p);
	set_nonblock(p[1], true);
	CHECK_RET(ioctl(p[0], I_SENDFD, dn), 0);
	CHECK_RET(nread(p[1], &b), 1);
	CHECK_RET(ioctl(p[1], I_FLUSH, FLUSHR), 0);
	CHECK_RET(nread(p[1], &b), 0);
	CHECK_ERR(ioctl(p[1], I_RECVFD, &rf), EAGAIN);
	open_pipe(q);
	set_nonblock(q[1], true);
	CHECK_RET(ioctl(q[0], I_SENDFD, dn), 0);
	CHECK_RET(ioctl(q[0], I_FLUSH, FLUSHW), 0);
	CHECK_RET(nread(q[1], &b), 0);
	CHECK_ERR(ioctl(q[1], I_RECVFD, &rf), EAGAIN);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(dn);

	/* I_FLUSHBAND of another band: the high priority message stays
	 * first (and still the only one) */
	fd = open_echo(O_NONBLOCK);
	CHECK_RET(write(fd, "aaaa", 4), 4);
	CHECK_RET(write(fd, "bbbb", 4), 4);
	CHECK_RET(read(fd, buf, 1), 1);	/* the reader caches the rest */
	CHECK_RET(putmsg(fd, &pc, NULL, RS_HIPRI), 0);
	CHECK_RET(ioctl(fd, I_FLUSHBAND, &bi), 0);
	flags = 0;
	c.maxlen = d.maxlen = sizeof(buf);
	CHECK_RET(getmsg(fd, &c, &d, &flags), 0);
	CHECK_EQ(flags, RS_HIPRI);
	close(fd);
	fd = open_echo(O_NONBLOCK);
	CHECK_RET(putmsg(fd, &pc, NULL, RS_HIPRI), 0);
	CHECK_RET(ioctl(fd, I_FLUSHBAND, &bi), 0);
	CHECK_RET(putmsg(fd, &pc, NULL, RS_HIPRI), 0);
	CHECK_RET(nread(fd, &b), 1);
	close(fd);
}

static void test_write_error_keeps_reads(void)
{
	char buf[64];
	int fd = open_tm(O_NONBLOCK), b;

	CHECK_RET(sendup_data(fd, "keep me", 0, 0), 0);
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, NOERROR, EIO), 0);
	CHECK_ERR(write(fd, "x", 1), EIO);
	CHECK_RET(nread(fd, &b), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 7);
	close(fd);
	fd = open_tm(O_NONBLOCK);
	CHECK_RET(sendup_data(fd, "keep me", 0, 0), 0);
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, 0, EPIPE), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 7);
	close(fd);
	/* a read error does flush */
	fd = open_tm(O_NONBLOCK);
	CHECK_RET(sendup_data(fd, "gone", 0, 0), 0);
	CHECK_RET(sendup_bytes(fd, M_ERROR, 2, EIO, NOERROR), 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EIO);
	close(fd);
}

/* A writing thread that blocks SIGPIPE gets EPIPE and the signal stays
 * pending on it; the process lives (another thread does not take it). */
static int wfd;
static long w_ret;
static int w_err, w_pend;

static void *sigpipe_writer(void *arg)
{
	sigset_t s, p;
	int sig;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	w_ret = write(wfd, "x", 1);
	w_err = errno;
	sigpending(&p);
	w_pend = sigismember(&p, SIGPIPE);
	if (w_pend)
		sigwait(&s, &sig);
	return NULL;
}

static int sigpipe_thread(void)
{
	pthread_t th;
	int p[2];

	signal(SIGPIPE, SIG_DFL);
	open_pipe(p);
	close(p[1]);
	wfd = p[0];
	REQUIRE(pthread_create(&th, NULL, sigpipe_writer, NULL) == 0);
	pthread_join(th, NULL);
	CHECK_EQ(w_ret, -1);
	CHECK_EQ(w_err, EPIPE);
	CHECK_EQ(w_pend, 1);
	return 0;
}

static void test_sigpipe(void)
{
	int p[2], v = -1;

	CHECK_ISOLATED(sigpipe_thread);
	/* without SNDPIPE: EPIPE, no signal */
	catch_sig(SIGPIPE, false);
	sigcount[SIGPIPE] = 0;
	open_pipe(p);
	CHECK_RET(ioctl(p[0], I_SWROPT, 0), 0);
	CHECK_RET(ioctl(p[0], I_GWROPT, &v), 0);
	CHECK_EQ(v, 0);
	close(p[1]);
	CHECK_ERR(write(p[0], "x", 1), EPIPE);
	pause_ms(50);
	CHECK_EQ(sigcount[SIGPIPE], 0);
	/* with it: EPIPE and SIGPIPE */
	CHECK_RET(ioctl(p[0], I_SWROPT, SNDPIPE), 0);
	CHECK_ERR(write(p[0], "x", 1), EPIPE);
	CHECK(wait_sig(SIGPIPE, 1, 1000));
	pause_ms(50);
	CHECK_EQ(sigcount[SIGPIPE], 1);		/* one write, one signal */
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
}

/* A module that records what M_READ brings. */
static long mread_count = -2, mread_len = -2;	/* atomic */

static int mr_wput(queue_t *q, mblk_t *mp)
{
	if (mp->b_datap->db_type == M_READ) {
		long n = -1;

		if (MBLKL(mp) >= (long)sizeof(long))
			memcpy(&n, mp->b_rptr, sizeof(n));
		__atomic_store_n(&mread_len, (long)MBLKL(mp), __ATOMIC_RELEASE);
		__atomic_store_n(&mread_count, n, __ATOMIC_RELEASE);
	}
	putnext(q, mp);
	return 0;
}

static int mr_rput(queue_t *q, mblk_t *mp)
{
	putnext(q, mp);
	return 0;
}

static int mr_open(queue_t *q, dev_t *d, int o, int s, cred_t *c)
{
	(void)d;
	(void)o;
	(void)s;
	(void)c;
	qprocson(q);
	return 0;
}

static int mr_close(queue_t *q, int f, cred_t *c)
{
	(void)f;
	(void)c;
	qprocsoff(q);
	return 0;
}

static struct module_info mr_mi = { 4243, "mrd", 0, INFPSZ, 65536, 16384 };
static struct qinit mr_ri = { mr_rput, NULL, mr_open, mr_close, NULL, &mr_mi,
			      NULL };
static struct qinit mr_wi = { mr_wput, NULL, NULL, NULL, NULL, &mr_mi, NULL };
static struct streamtab mr_tab = { &mr_ri, &mr_wi, NULL, NULL };
static struct fmodsw mr_mod = { .f_name = "mrd", .f_str = &mr_tab,
				.f_flag = D_MP };

static void *late_writer(void *arg)
{
	pause_ms(200);
	REQUIRE(write(*(int *)arg, "go", 2) == 2);
	return NULL;
}

static void test_mread(void)
{
	struct stroptions so;
	pthread_t th;
	char buf[100];
	int fd;

	REQUIRE(register_strmod(&mr_mod) == 0);
	fd = open_echo(0);
	REQUIRE(ioctl(fd, I_PUSH, "mrd") == 0);
	REQUIRE(ioctl(fd, I_PUSH, "testmod") == 0);
	memset(&so, 0, sizeof(so));
	so.so_flags = SO_MREADON;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	REQUIRE(pthread_create(&th, NULL, late_writer, &fd) == 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 2);
	pthread_join(th, NULL);
	CHECK_EQ(__atomic_load_n(&mread_len, __ATOMIC_ACQUIRE),
		 sizeof(long));
	CHECK_EQ(__atomic_load_n(&mread_count, __ATOMIC_ACQUIRE), 100);
	close(fd);
}

static void set_psz(int fd, long min, long max)
{
	struct stroptions so;

	memset(&so, 0, sizeof(so));
	so.so_flags = SO_MINPSZ | SO_MAXPSZ | SO_HIWAT;
	so.so_minpsz = min;
	so.so_maxpsz = max;
	so.so_hiwat = 1 << 20;
	REQUIRE(ioctl(fd, I_PUSH, "testmod") == 0);
	REQUIRE(sendup_setopts(fd, &so) == 0);
	REQUIRE(ioctl(fd, I_POP, 0) == 0);
}

static void test_packet_sizes(void)
{
	static char buf[70000];
	struct strbuf d = { 0, 3, "abc" };
	int p[2], q[2], b;

	open_pipe(p);
	set_nonblock(p[0], true);
	set_nonblock(p[1], true);
	set_psz(p[1], 1, INFPSZ);	/* a minimum: no splitting */
	CHECK_ERR(write(p[0], buf, 65537), ERANGE);	/* > strmsgsz */
	CHECK_RET(nread(p[1], &b), 0);
	CHECK_RET(write(p[0], buf, 65536), 65536);
	CHECK_RET(nread(p[1], &b), 1);
	open_pipe(q);
	set_nonblock(q[1], true);
	set_psz(q[1], 0, 0);		/* takes nothing */
	CHECK_RET(write(q[0], "abc", 3), 0);
	CHECK_RET(nread(q[1], &b), 0);
	CHECK_ERR(putmsg(q[0], NULL, &d, 0), ERANGE);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/* ---- seemod: what the stream head's writes look like below it ---- */

static long see_room = -1;	/* head room of the last M_DATA (atomic) */
static int see_delim = -1;	/* its MSGDELIM (atomic) */
static int see_count;		/* M_DATA messages seen (atomic) */

static int seemod_wput(queue_t *q, mblk_t *mp)
{
	if (mp->b_datap->db_type == M_DATA) {
		__atomic_store_n(&see_room,
				 (long)(mp->b_rptr - mp->b_datap->db_base),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&see_delim, (mp->b_flag & MSGDELIM) != 0,
				 __ATOMIC_RELEASE);
		__atomic_add_fetch(&see_count, 1, __ATOMIC_ACQ_REL);
	}
	putnext(q, mp);
	return 0;
}

static struct module_info seemod_minfo = { 3998, "seemod", 0, INFPSZ, 65536, 16384 };
/* (its read side and open and close are mrd's: pass-through) */
static struct qinit seemod_rinit = { mr_rput, NULL, mr_open, mr_close, NULL, &seemod_minfo, NULL };
static struct qinit seemod_winit = { seemod_wput, NULL, NULL, NULL, NULL, &seemod_minfo, NULL };
static struct streamtab seemod_info = { &seemod_rinit, &seemod_winit, NULL, NULL };
static struct fmodsw seemod_fmod = { .f_name = "seemod", .f_str = &seemod_info, .f_flag = D_MP };

/* write() of one message as SO_WROFF and SO_DELIM ask (the head room
 * below the data, MSGDELIM), and a write under the minimum packet size
 * of the queue below refused whole. */
static void test_write_shape(void)
{
	struct stroptions so;
	char buf[64];
	int fd, p[2], b;

	REQUIRE(register_strmod(&seemod_fmod) == 0);
	fd = open_echo(O_NONBLOCK);
	REQUIRE(ioctl(fd, I_PUSH, "seemod") == 0);
	REQUIRE(ioctl(fd, I_PUSH, "testmod") == 0);
	CHECK_RET(write(fd, "plain", 5), 5);
	CHECK_EQ(__atomic_load_n(&see_room, __ATOMIC_ACQUIRE), 0);
	CHECK_EQ(__atomic_load_n(&see_delim, __ATOMIC_ACQUIRE), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 5);
	memset(&so, 0, sizeof(so));
	so.so_flags = SO_DELIM;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	CHECK_RET(write(fd, "delim", 5), 5);
	CHECK_EQ(__atomic_load_n(&see_room, __ATOMIC_ACQUIRE), 0);
	CHECK_EQ(__atomic_load_n(&see_delim, __ATOMIC_ACQUIRE), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 5);
	so.so_flags = SO_WROFF;
	so.so_wroff = 48;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	CHECK_RET(write(fd, "room", 4), 4);
	CHECK(__atomic_load_n(&see_room, __ATOMIC_ACQUIRE) >= 48);
	CHECK_EQ(__atomic_load_n(&see_delim, __ATOMIC_ACQUIRE), 1);
	CHECK_RET(read(fd, buf, sizeof(buf)), 4);
	CHECK_MEM(buf, "room", 4);
	so.so_flags = SO_WROFF | SO_NODELIM;
	so.so_wroff = 0;
	CHECK_RET(sendup_setopts(fd, &so), 0);
	CHECK_RET(write(fd, "again", 5), 5);
	CHECK_EQ(__atomic_load_n(&see_room, __ATOMIC_ACQUIRE), 0);
	CHECK_EQ(__atomic_load_n(&see_delim, __ATOMIC_ACQUIRE), 0);
	CHECK_RET(read(fd, buf, sizeof(buf)), 5);
	CHECK_EQ(__atomic_load_n(&see_count, __ATOMIC_ACQUIRE), 4);
	/* a bad buffer: EFAULT, nothing sent */
	CHECK_ERR(write(fd, bad_address(), 4), EFAULT);
	CHECK_EQ(__atomic_load_n(&see_count, __ATOMIC_ACQUIRE), 4);
	close(fd);

	open_pipe(p);
	set_nonblock(p[0], true);
	set_nonblock(p[1], true);
	set_psz(p[1], 4, INFPSZ);
	CHECK_ERR(write(p[0], "ab", 2), ERANGE);
	CHECK_RET(nread(p[1], &b), 0);
	CHECK_RET(write(p[0], "abcd", 4), 4);
	CHECK_RET(nread(p[1], &b), 1);
	CHECK_EQ(b, 4);
	close(p[0]);
	close(p[1]);
}

/* One-byte reads of band-1 messages while another thread flushes. */
static int up[2], up_stop;	/* atomic */

static void *band_writer(void *arg)
{
	char buf[64] = { 0 };
	struct strbuf d = { 0, 64, buf };

	(void)arg;
	while (!__atomic_load_n(&up_stop, __ATOMIC_ACQUIRE))
		(void)putpmsg(up[0], NULL, &d, 1, MSG_BAND);
	return NULL;
}

static void *flusher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&up_stop, __ATOMIC_ACQUIRE)) {
		(void)ioctl(up[1], I_FLUSH, FLUSHR);
		sched_yield();
	}
	return NULL;
}

static void test_putback_vs_flush(void)
{
	pthread_t t[2];
	long end;
	char c;

	open_pipe(up);
	set_nonblock(up[0], true);
	set_nonblock(up[1], true);
	REQUIRE(pthread_create(&t[0], NULL, band_writer, NULL) == 0);
	REQUIRE(pthread_create(&t[1], NULL, flusher, NULL) == 0);
	end = now_ms() + 1500;
	while (now_ms() < end)
		(void)read(up[1], &c, 1);
	__atomic_store_n(&up_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	close(up[0]);
	close(up[1]);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_sigpipe();		/* (forks: first, before any thread) */
	test_band_rest();
	test_flushes();
	test_write_error_keeps_reads();
	test_mread();
	test_packet_sizes();
	test_write_shape();
	test_putback_vs_flush();
	CHECK_EQ(streams_in_use(), 0);
	T_DONE();
}
