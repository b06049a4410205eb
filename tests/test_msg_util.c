/*
 * test_msg_util -- linkb, unlinkb, rmvb, adjmsg, msgdsize and friends,
 * msgpullup, pullupmsg, datamsg, and the ioctl reply helpers.
 */
#include <errno.h>

#include <limits.h>

#include "t.h"
#include "harness.h"

static mblk_t *mkblk(int type, const char *s)
{
	return th_msg(type, s, strlen(s));
}

/* Concatenate the bytes of all blocks into buf (NUL-terminated). */
static const char *flat(const mblk_t *mp)
{
	static char buf[1024];
	size_t n = 0;
	for (; mp; mp = mp->b_cont) {
		memcpy(buf + n, mp->b_rptr, MBLKL(mp));
		n += MBLKL(mp);
	}
	buf[n] = 0;
	return buf;
}

static int nblocks(const mblk_t *mp)
{
	int n = 0;
	for (; mp; mp = mp->b_cont)
		n++;
	return n;
}

static void test_link(void)
{
	mblk_t *a = mkblk(M_DATA, "ab"), *b = mkblk(M_DATA, "cd"),
	       *c = mkblk(M_DATA, "ef"), *r;

	linkb(a, b);
	linkb(a, c);
	CHECK_EQ(nblocks(a), 3);
	CHECK(strcmp(flat(a), "abcdef") == 0);
	CHECK_EQ(msgdsize(a), 6);

	/* rmvb of the middle, of the head, of a stranger */
	r = rmvb(a, b);
	CHECK_PTR(r, a);
	CHECK_PTR(b->b_cont, NULL);
	CHECK(strcmp(flat(a), "abef") == 0);
	CHECK_PTR(rmvb(a, b), (mblk_t *)-1);
	r = rmvb(a, a);
	CHECK_PTR(r, c);
	CHECK_PTR(a->b_cont, NULL);

	/* unlinkb */
	linkb(a, b);
	r = unlinkb(a);
	CHECK_PTR(r, b);
	CHECK_PTR(a->b_cont, NULL);
	CHECK_PTR(unlinkb(a), NULL);
	CHECK_PTR(linkmsg(NULL, a), a);
	freemsg(a);
	freemsg(b);
	freemsg(c);
}

static void test_sizes(void)
{
	mblk_t *mp = mkblk(M_PROTO, "pppp");

	linkb(mp, mkblk(M_DATA, "dd"));
	linkb(mp, mkblk(M_DATA, "ddd"));
	CHECK_EQ(msgdsize(mp), 5);	/* M_DATA only */
	CHECK_EQ(msgsize(mp), 9);	/* all blocks */
	CHECK_EQ(xmsgsize(mp), 4);	/* leading M_PROTO run */
	CHECK(datamsg(M_DATA) && datamsg(M_PROTO) && datamsg(M_PCPROTO) &&
	      datamsg(M_DELAY));
	CHECK(!datamsg(M_IOCTL) && !datamsg(M_FLUSH) && !datamsg(M_CTL));
	freemsg(mp);
}

static void test_adjmsg(void)
{
	mblk_t *mp;

	/* head trim across blocks; emptied later blocks are removed */
	mp = mkblk(M_DATA, "abc");
	linkb(mp, mkblk(M_DATA, "de"));
	linkb(mp, mkblk(M_DATA, "fgh"));
	CHECK_EQ(adjmsg(mp, 5), 1);
	CHECK(strcmp(flat(mp), "fgh") == 0);
	CHECK_EQ(nblocks(mp), 2);	/* first block stays, emptied */
	CHECK_EQ(MBLKL(mp), 0);
	freemsg(mp);

	/* tail trim across blocks */
	mp = mkblk(M_DATA, "abc");
	linkb(mp, mkblk(M_DATA, "de"));
	linkb(mp, mkblk(M_DATA, "fgh"));
	CHECK_EQ(adjmsg(mp, -4), 1);
	CHECK(strcmp(flat(mp), "abcd") == 0);
	CHECK_EQ(nblocks(mp), 2);
	freemsg(mp);

	/* only the leading same-type run counts */
	mp = mkblk(M_PROTO, "pp");
	linkb(mp, mkblk(M_DATA, "dddd"));
	CHECK_EQ(adjmsg(mp, 3), 0);
	CHECK_EQ(adjmsg(mp, -3), 0);
	CHECK(strcmp(flat(mp), "ppdddd") == 0);	/* unchanged on failure */
	CHECK_EQ(adjmsg(mp, -2), 1);
	CHECK(strcmp(flat(mp), "dddd") == 0);
	CHECK_EQ(adjmsg(mp, 0), 1);
	freemsg(mp);

	/* too long */
	mp = mkblk(M_DATA, "abc");
	CHECK_EQ(adjmsg(mp, 4), 0);
	CHECK_EQ(adjmsg(mp, -4), 0);
	CHECK(strcmp(flat(mp), "abc") == 0);
	CHECK_EQ(adjmsg(mp, -3), 1);
	CHECK_EQ(MBLKL(mp), 0);
	/* the most negative length: refused (its negation overflows) */
	CHECK_EQ(adjmsg(mp, -SSIZE_MAX - 1), 0);
	CHECK_EQ(adjmsg(mp, SSIZE_MAX), 0);
	freemsg(mp);
	CHECK_EQ(adjmsg(NULL, 1), 0);
}

static void test_msgpullup(void)
{
	mblk_t *mp, *np;

	mp = mkblk(M_PROTO, "ab");
	linkb(mp, mkblk(M_PROTO, "cde"));
	linkb(mp, mkblk(M_DATA, "XYZ"));

	np = msgpullup(mp, 4);
	REQUIRE(np != NULL);
	CHECK_EQ(MBLKL(np), 4);
	CHECK_EQ(np->b_datap->db_type, M_PROTO);
	CHECK(strcmp(flat(np), "abcdeXYZ") == 0);
	CHECK_EQ(nblocks(np), 3);	/* "abcd", "e", "XYZ" */
	CHECK(np->b_cont->b_datap != mp->b_cont->b_datap);	/* copies */
	freemsg(np);

	np = msgpullup(mp, -1);
	REQUIRE(np != NULL);
	CHECK_EQ(MBLKL(np), 5);
	CHECK_EQ(nblocks(np), 2);
	CHECK(strcmp(flat(np), "abcdeXYZ") == 0);
	freemsg(np);

	CHECK_PTR(msgpullup(mp, 6), NULL);	/* run is 5 bytes */
	CHECK_PTR(msgpullup(mp, -2), NULL);
	CHECK(strcmp(flat(mp), "abcdeXYZ") == 0);	/* unchanged */
	CHECK_EQ(nblocks(mp), 3);

	np = msgpullup(mp, 0);
	REQUIRE(np != NULL);
	CHECK_EQ(MBLKL(np), 0);
	CHECK(strcmp(flat(np), "abcdeXYZ") == 0);
	freemsg(np);
	freemsg(mp);
}

static void test_pullupmsg(void)
{
	mblk_t *mp, *first;

	mp = mkblk(M_PROTO, "ab");
	linkb(mp, mkblk(M_PROTO, "cde"));
	linkb(mp, mkblk(M_DATA, "XYZ"));
	first = mp;
	CHECK_EQ(pullupmsg(mp, 4), 1);
	CHECK_PTR(mp, first);		/* same head mblk */
	CHECK_EQ(MBLKL(mp), 4);
	CHECK_EQ(mp->b_datap->db_type, M_PROTO);
	CHECK(strcmp(flat(mp), "abcdeXYZ") == 0);
	CHECK_EQ(nblocks(mp), 3);	/* "abcd", "e", "XYZ" */

	CHECK_EQ(pullupmsg(mp, 6), 0);	/* across types: fails */
	CHECK(strcmp(flat(mp), "abcdeXYZ") == 0);
	CHECK_EQ(pullupmsg(mp, -1), 1);
	CHECK_EQ(MBLKL(mp), 5);
	CHECK_EQ(nblocks(mp), 2);
	CHECK(strcmp(flat(mp), "abcdeXYZ") == 0);
	CHECK_EQ(mp->b_cont->b_datap->db_type, M_DATA);
	CHECK_EQ(pullupmsg(mp, -5), 0);
	freemsg(mp);

	/* a shared block pulled up: the other reference keeps the old data */
	mp = mkblk(M_DATA, "12");
	linkb(mp, mkblk(M_DATA, "34"));
	mblk_t *dp = dupb(mp);
	CHECK_EQ(pullupmsg(mp, -1), 1);
	CHECK(strcmp(flat(mp), "1234") == 0);
	CHECK_EQ(MBLKL(dp), 2);
	CHECK(memcmp(dp->b_rptr, "12", 2) == 0);
	CHECK_EQ(dp->b_datap->db_ref, 1);
	freemsg(mp);
	freeb(dp);
}

static void test_ioc_helpers(void)
{
	mblk_t *mp = mkiocb(1234), *mp2 = mkiocb(1234);
	struct iocblk *ioc;

	REQUIRE(mp != NULL && mp2 != NULL);
	CHECK_EQ(mp->b_datap->db_type, M_IOCTL);
	ioc = (struct iocblk *)mp->b_rptr;
	CHECK_EQ(ioc->ioc_cmd, 1234);
	CHECK(ioc->ioc_id != ((struct iocblk *)mp2->b_rptr)->ioc_id);
	mioc2ack(mp, th_data(3, 'x'), 3, 7);
	CHECK_EQ(mp->b_datap->db_type, M_IOCACK);
	CHECK_EQ(ioc->ioc_count, 3);
	CHECK_EQ(ioc->ioc_rval, 7);
	CHECK_EQ(ioc->ioc_error, 0);
	CHECK_EQ(msgdsize(mp->b_cont), 3);
	freemsg(mp);
	freemsg(mp2);

	/* mkiocb's block takes the copyreq mcopyin makes of it */
	mp = mkiocb(99);
	REQUIRE(mp != NULL);
	mcopyin(mp, (void *)5, 4, (void *)0x1000);
	CHECK_EQ(mp->b_datap->db_type, M_COPYIN);
	CHECK_EQ(MBLKL(mp), sizeof(struct copyreq));
	CHECK(mp->b_wptr <= mp->b_datap->db_lim);
	struct copyreq *cq = (struct copyreq *)mp->b_rptr;
	CHECK_EQ(cq->cq_cmd, 99);
	CHECK_EQ(cq->cq_size, 4);
	CHECK_PTR(cq->cq_addr, (void *)0x1000);
	CHECK_PTR(cq->cq_private, (void *)5);
	freemsg(mp);
	/* a module's own M_IOCTL with room for its iocblk alone: the copy
	 * request cannot be made in it, and it becomes a NAK (ENOMEM) */
	mp = allocb(sizeof(struct iocblk), BPRI_MED);
	REQUIRE(mp != NULL);
	if ((size_t)(mp->b_datap->db_lim - mp->b_datap->db_base) <
	    sizeof(struct copyreq)) {
		mp->b_datap->db_type = M_IOCTL;
		memset(mp->b_rptr, 0, sizeof(struct iocblk));
		((struct iocblk *)mp->b_rptr)->ioc_cmd = 77;
		mp->b_wptr += sizeof(struct iocblk);
		mcopyout(mp, NULL, 4, (void *)0x1000, th_data(4, 'o'));
		CHECK_EQ(mp->b_datap->db_type, M_IOCNAK);
		ioc = (struct iocblk *)mp->b_rptr;
		CHECK_EQ(ioc->ioc_cmd, 77);
		CHECK_EQ(ioc->ioc_error, ENOMEM);
		CHECK_EQ(ioc->ioc_count, 0);
		CHECK(mp->b_wptr <= mp->b_datap->db_lim);
	}
	freemsg(mp);

	mp = mexchange(NULL, NULL, 16, M_PCPROTO, 42);
	REQUIRE(mp != NULL);
	CHECK_EQ(mp->b_datap->db_type, M_PCPROTO);
	CHECK_EQ(MBLKL(mp), 16);
	CHECK_EQ(*(int32_t *)mp->b_rptr, 42);
	mblk_t *again = mexchange(NULL, mp, 8, M_PROTO, 7);
	CHECK_PTR(again, mp);		/* reused: big enough, unshared */
	CHECK_EQ(MBLKL(again), 8);
	freemsg(again);
}

int main(void)
{
	th_mark();
	test_link();
	test_sizes();
	test_adjmsg();
	test_msgpullup();
	test_pullupmsg();
	test_ioc_helpers();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
