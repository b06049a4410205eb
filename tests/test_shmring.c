/*
 * test_shmring -- the shared-memory ring's records as another process
 * could write them (src/drivers/shmring.h): what shr_get accepts, what
 * it takes for a broken record (EPROTO, the ring emptied, nothing
 * leaked), and that shr_carries agrees with it.
 *
 * Records are written raw here, in the ring's format: a 16-byte header
 * (u32 length of the whole record, u16 blocks, u8 band, u8 pad, u32
 * b_flag, u32 pad), then per block an 8-byte header (u8 type, 3 pad,
 * u32 length) and its bytes, every part padded to 8.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "t.h"
#include "harness.h"
#include "shmring.h"

struct blk {
	unsigned char type;
	const char *data;
	size_t len;
};

static unsigned char rec[4096];

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* A raw record of nblk blocks; len_adj is added to its length field
 * (and as much slack appended when positive). */
static size_t mkrec(unsigned band, uint32_t flag, const struct blk *b,
		    int nblk, int len_adj, int nblk_field)
{
	size_t off = 16;
	uint16_t n = (uint16_t)(nblk_field >= 0 ? nblk_field : nblk);

	memset(rec, 0, sizeof(rec));
	for (int i = 0; i < nblk; i++) {
		rec[off] = b[i].type;
		put32(rec + off + 4, (uint32_t)b[i].len);
		off += 8;
		memcpy(rec + off, b[i].data, b[i].len);
		off += (b[i].len + 7) & ~(size_t)7;
	}
	if (len_adj > 0)
		off += (size_t)len_adj;
	put32(rec, (uint32_t)((int)off + (len_adj < 0 ? len_adj : 0)));
	memcpy(rec + 4, &n, 2);
	rec[6] = (unsigned char)band;
	put32(rec + 8, flag);
	return off;
}

static struct shr_seg seg;

/* Put the record raw into ring 0, get it: the message or NULL (*err). */
static mblk_t *roundtrip(size_t len, int *err)
{
	mblk_t *mp;

	shr_plock(&seg, 0);
	REQUIRE(shr_put_raw(&seg, 0, rec, len));
	shr_punlock(&seg, 0);
	shr_clock(&seg, 0);
	mp = shr_get(&seg, 0, err);
	shr_cunlock(&seg, 0);
	return mp;
}

/* The record is broken: EPROTO and the ring left empty. */
#define CHECK_BROKEN(len) do {						\
	int _e = -1;							\
	CHECK_PTR(roundtrip(len, &_e), NULL);				\
	CHECK_EQ(_e, EPROTO);						\
	CHECK(!shr_peek(&seg, 0));					\
} while (0)

static void test_good(void)
{
	struct blk pd[] = { { M_PROTO, "ctl", 3 }, { M_DATA, "abcdefghij", 10 },
			    { M_DATA, "", 0 } };
	struct blk pc[] = { { M_PCPROTO, "hi", 2 } };
	struct blk fl1[] = { { M_FLUSH, "\x03", 1 } };
	struct blk fl2[] = { { M_FLUSH, "\x07\x05", 2 } };
	struct blk z[] = { { M_DATA, "", 0 } };
	mblk_t *mp;
	int err = -1;

	mp = roundtrip(mkrec(3, MSGMARK | MSGDELIM, pd, 3, 0, -1), &err);
	REQUIRE(mp != NULL);
	CHECK_EQ(err, 0);
	CHECK_EQ(mp->b_datap->db_type, M_PROTO);
	CHECK_EQ(mp->b_band, 3);
	CHECK_EQ(mp->b_flag, MSGMARK | MSGDELIM);
	CHECK_EQ(MBLKL(mp), 3);
	CHECK(memcmp(mp->b_rptr, "ctl", 3) == 0);
	REQUIRE(mp->b_cont != NULL && mp->b_cont->b_cont != NULL);
	CHECK_EQ(mp->b_cont->b_datap->db_type, M_DATA);
	CHECK_EQ(MBLKL(mp->b_cont), 10);
	CHECK(memcmp(mp->b_cont->b_rptr, "abcdefghij", 10) == 0);
	CHECK_EQ(MBLKL(mp->b_cont->b_cont), 0);
	CHECK(shr_carries(mp));
	freemsg(mp);

	for (int i = 0; i < 4; i++) {
		struct blk *b = i == 0 ? pc : i == 1 ? fl1 : i == 2 ? fl2 : z;

		mp = roundtrip(mkrec(0, 0, b, 1, 0, -1), &err);
		if (mp == NULL)
			fprintf(stderr, "case %d err %d\n", i, err);
		REQUIRE(mp != NULL);
		CHECK_EQ(err, 0);
		CHECK_EQ(mp->b_datap->db_type, b[0].type);
		CHECK_EQ(MBLKL(mp), b[0].len);
		CHECK(shr_carries(mp));
		freemsg(mp);
	}
	CHECK(!shr_peek(&seg, 0));
	/* empty ring: NULL, no error */
	err = -1;
	shr_clock(&seg, 0);
	CHECK_PTR(shr_get(&seg, 0, &err), NULL);
	shr_cunlock(&seg, 0);
	CHECK_EQ(err, 0);
}

static void test_broken(void)
{
	struct blk ioc[] = { { M_IOCACK, "0123456789abcdef", 16 } };
	struct blk err1[] = { { M_ERROR, "\x47", 1 } };
	struct blk hang[] = { { M_HANGUP, "", 0 } };
	struct blk junk[] = { { 0xf7, "x", 1 } };
	struct blk pp[] = { { M_PROTO, "a", 1 }, { M_PROTO, "b", 1 } };
	struct blk dpc[] = { { M_DATA, "a", 1 }, { M_PCPROTO, "b", 1 } };
	struct blk flbits[] = { { M_FLUSH, "\x40", 1 } };
	struct blk flband1[] = { { M_FLUSH, "\x05", 1 } };
	struct blk fl3[] = { { M_FLUSH, "\x01\x00\x00", 3 } };
	struct blk fl0[] = { { M_FLUSH, "", 0 } };
	struct blk fld[] = { { M_FLUSH, "\x01", 1 }, { M_DATA, "x", 1 } };
	struct blk pc[] = { { M_PCPROTO, "hi", 2 } };
	struct blk d[] = { { M_DATA, "hello", 5 } };

	CHECK_BROKEN(mkrec(0, 0, ioc, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, err1, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, hang, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, junk, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, pp, 2, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, dpc, 2, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, flbits, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, flband1, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, fl3, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, fl0, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, fld, 2, 0, -1));
	CHECK_BROKEN(mkrec(4, 0, pc, 1, 0, -1));	/* hipri in a band */
	CHECK_BROKEN(mkrec(0, 0x8000, d, 1, 0, -1));	/* unknown flag */
	CHECK_BROKEN(mkrec(0, MSGNOGET, d, 1, 0, -1));
	CHECK_BROKEN(mkrec(0, 0, d, 1, 8, -1));		/* slack after */
	CHECK_BROKEN(mkrec(0, 0, d, 1, 0, 0));		/* no blocks */
	CHECK_BROKEN(mkrec(0, 0, d, 1, 0, 2));		/* a block short */
	CHECK_BROKEN(mkrec(0, 0, d, 1, 0, 65));		/* too many */
	/* the block's length past the record */
	mkrec(0, 0, d, 1, 0, -1);
	put32(rec + 16 + 4, 9);
	CHECK_BROKEN(24 + 8);
	/* the record's length not a multiple of 8, shorter than a header */
	put32(rec, 30);
	CHECK_BROKEN(32);
	put32(rec, 8);
	CHECK_BROKEN(32);
	/* a good record after a broken one goes with it */
	{
		size_t n1 = mkrec(0, 0, ioc, 1, 0, -1);
		unsigned char two[256];
		size_t n2;

		memcpy(two, rec, n1);
		n2 = mkrec(0, 0, d, 1, 0, -1);
		memcpy(two + n1, rec, n2);
		memcpy(rec, two, n1 + n2);
		CHECK_BROKEN(n1 + n2);
	}
	/* and the ring works after */
	{
		int err = -1;
		mblk_t *mp = roundtrip(mkrec(0, 0, d, 1, 0, -1), &err);

		REQUIRE(mp != NULL);
		CHECK_EQ(MBLKL(mp), 5);
		freemsg(mp);
	}
}

/* What shr_carries lets a writer put in: the same rules. */

static void test_carries(void)
{
	static const struct {
		int type, type2;
		const char *s;
		size_t n;
		bool ok;
	} c[] = {
		{ M_DATA, -1, "x", 1, true },
		{ M_PROTO, M_DATA, "x", 1, true },
		{ M_PCPROTO, -1, "x", 1, true },
		{ M_FLUSH, -1, "\x02", 1, true },
		{ M_FLUSH, -1, "\x06\x01", 2, true },
		{ M_FLUSH, -1, "\x06", 1, false },
		{ M_FLUSH, -1, "\x82", 1, false },
		{ M_FLUSH, M_DATA, "\x02", 1, false },
		{ M_PROTO, M_PROTO, "x", 1, false },
		{ M_IOCTL, -1, "x", 1, false },
		{ M_CTL, -1, "x", 1, false },
		{ M_SIG, -1, "\x0e", 1, false },
		{ M_ERROR, -1, "\x47", 1, false },
		{ M_SETOPTS, -1, "x", 1, false },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		mblk_t *mp = th_msg(c[i].type, c[i].s, c[i].n);

		if (c[i].type2 >= 0)
			mp->b_cont = th_msg(c[i].type2, "y", 1);
		if (shr_carries(mp) != c[i].ok)
			fprintf(stderr, "case %zu\n", i);
		CHECK_EQ(shr_carries(mp), c[i].ok);
		freemsg(mp);
	}
}

/* A segment offered by another process that is not a sealed memfd (an
 * ordinary file with a good header and size, which its owner could
 * shrink under us: SIGBUS) is refused. */
static void test_unsealed(void)
{
	char path[] = "/tmp/test_shmring.XXXXXX";
	struct shr_seg other;
	uint32_t hdr[3] = { SHR_MAGIC, SHR_VERSION, 4096 };
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	unlink(path);
	REQUIRE(ftruncate(fd, 4096 + 2 * 4096) == 0);
	REQUIRE(pwrite(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr));
	CHECK_EQ(shr_map(&other, fd), -EPROTO);
	close(fd);
}

int main(void)
{
	int fd = -1;

	REQUIRE(shr_create(&seg, &fd) == 0);
	test_good();
	test_broken();
	test_carries();
	test_unsealed();
	shr_unmap(&seg);
	close(fd);
	T_DONE();
}
