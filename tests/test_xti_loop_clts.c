/*
 * test_xti_loop_clts -- XTI over the loopback connectionless provider
 * /dev/ticlts, end to end: t_open's t_info (no expedited, connect or
 * disconnect data), binding to names and to any address, datagrams both
 * ways with the sender's bound address as source (t_rcvudata,
 * t_rcvvudata), a datagram read in pieces (T_MORE), zero-length
 * datagrams, the TSDU limit (TBADDATA), a datagram to an unknown
 * address answered by a T_UDERROR_IND (t_look T_UDERR, TLOOK from
 * t_rcvudata and t_sndudata, t_rcvuderr with the destination and an
 * error), t_alloc'd structures sized from the provider, TNODATA when
 * asynchronous, t_unbind with a datagram waiting (TLOOK).
 */
#include "ferry.h"

#define CLTS	"/dev/ticlts"

static int open_bound(const char *name)
{
	struct t_bind b;
	int fd = t_open(CLTS, O_RDWR, NULL);

	REQUIRE(fd >= 0);
	memset(&b, 0, sizeof(b));
	b.addr.buf = (char *)name;
	b.addr.len = (unsigned)strlen(name);
	REQUIRE(t_bind(fd, &b, NULL) == 0);
	return fd;
}

int main(void)
{
	struct t_info ti;
	struct t_unitdata ud, *au;
	struct t_uderr ue;
	char ab[64], db[64];
	int a, b, fd, flags;

	fd = t_open(CLTS, O_RDWR, &ti);
	REQUIRE(fd >= 0);
	CHECK_EQ(ti.servtype, T_CLTS);
	CHECK_EQ(ti.tsdu, 16384);
	CHECK_EQ(ti.etsdu, T_INVALID);
	CHECK_EQ(ti.connect, T_INVALID);
	CHECK_EQ(ti.discon, T_INVALID);
	CHECK_EQ(ti.addr, 64);
	CHECK_EQ(ti.flags & T_SENDZERO, T_SENDZERO);
	CHECK_RET(t_bind(fd, NULL, NULL), 0);	/* any address */
	CHECK_RET(t_close(fd), 0);

	a = open_bound("xti-clts-a");
	b = open_bound("xti-clts-b");
	/* a to b */
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = "xti-clts-b";
	ud.addr.len = 10;
	ud.udata.buf = "datagram";
	ud.udata.len = 8;
	CHECK_RET(t_sndudata(a, &ud), 0);
	CHECK_EQ(xt_look_wait(b), T_DATA);
	au = t_alloc(b, T_UNITDATA, T_ALL);
	REQUIRE(au != NULL);
	CHECK_EQ(au->addr.maxlen, 64);
	CHECK_EQ(au->udata.maxlen, 16384);
	CHECK_RET(t_rcvudata(b, au, &flags), 0);
	CHECK_EQ(au->addr.len, 10);
	CHECK_MEM(au->addr.buf, "xti-clts-a", 10);
	CHECK_EQ(au->udata.len, 8);
	CHECK_MEM(au->udata.buf, "datagram", 8);
	CHECK_EQ(flags, 0);
	/* b to a, read in pieces */
	ud.addr.buf = "xti-clts-a";
	ud.udata.buf = "0123456789";
	ud.udata.len = 10;
	CHECK_RET(t_sndudata(b, &ud), 0);
	CHECK_EQ(xt_look_wait(a), T_DATA);
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = ab;
	ud.addr.maxlen = sizeof(ab);
	ud.udata.buf = db;
	ud.udata.maxlen = 6;
	CHECK_RET(t_rcvudata(a, &ud, &flags), 0);
	CHECK_EQ(ud.addr.len, 10);
	CHECK_EQ(ud.udata.len, 6);
	CHECK_EQ(flags, T_MORE);
	CHECK_RET(t_rcvudata(a, &ud, &flags), 0);
	CHECK_EQ(ud.addr.len, 0);
	CHECK_EQ(ud.udata.len, 4);
	CHECK_MEM(db, "6789", 4);
	CHECK_EQ(flags, 0);
	/* vectors, and a zero-length datagram */
	struct t_iovec iov[2] = { { "vec", 3 }, { "tor", 3 } };
	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = "xti-clts-b";
	ud.addr.len = 10;
	CHECK_RET(t_sndvudata(a, &ud, iov, 2), 0);
	CHECK_RET(t_sndudata(a, &ud), 0);		/* udata.len 0 */
	CHECK_EQ(xt_look_wait(b), T_DATA);
	char v1[4], v2[8];
	struct t_iovec riov[2] = { { v1, 4 }, { v2, 8 } };
	au->udata.len = 0;
	CHECK_RET(t_rcvvudata(b, au, riov, 2, &flags), 6);
	CHECK_MEM(v1, "vect", 4);
	CHECK_MEM(v2, "or", 2);
	CHECK_RET(t_rcvudata(b, au, &flags), 0);
	CHECK_EQ(au->udata.len, 0);
	/* too big */
	static char big[16385];
	ud.udata.buf = big;
	ud.udata.len = sizeof(big);
	CHECK_TERR(t_sndudata(a, &ud), TBADDATA);
	ud.udata.len = 16384;
	CHECK_RET(t_sndudata(a, &ud), 0);
	CHECK_EQ(xt_look_wait(b), T_DATA);
	/* t_unbind with a datagram waiting */
	CHECK_TERR(t_unbind(b), TLOOK);
	CHECK_RET(t_rcvudata(b, au, &flags), 0);
	CHECK_EQ(au->udata.len, 16384);
	/* nobody at that address: T_UDERROR_IND */
	ud.addr.buf = "xti-clts-nobody";
	ud.addr.len = 15;
	ud.udata.buf = "lost";
	ud.udata.len = 4;
	CHECK_RET(t_sndudata(a, &ud), 0);
	CHECK_EQ(xt_look_wait(a), T_UDERR);
	CHECK_TERR(t_sndudata(a, &ud), TLOOK);
	CHECK_TERR(t_rcvudata(a, au, &flags), TLOOK);
	/* the error held by the library still stops an unbind */
	CHECK_TERR(t_unbind(a), TLOOK);
	memset(&ue, 0, sizeof(ue));
	ue.addr.buf = ab;
	ue.addr.maxlen = sizeof(ab);
	CHECK_RET(t_rcvuderr(a, &ue), 0);
	CHECK_EQ(ue.addr.len, 15);
	CHECK_MEM(ab, "xti-clts-nobody", 15);
	CHECK(ue.error != 0);
	CHECK_TERR(t_rcvuderr(a, &ue), TNOUDERR);
	/* asynchronous, nothing there */
	CHECK_RET(set_nonblock(b, true), 0);
	CHECK_TERR(t_rcvudata(b, au, &flags), TNODATA);
	CHECK_RET(t_free(au, T_UNITDATA), 0);
	CHECK_RET(t_unbind(b), 0);
	CHECK_STATE(b, T_UNBND);
	CHECK_RET(t_close(a), 0);
	CHECK_RET(t_close(b), 0);
	T_DONE();
}
