/*
 * fuzz_xti -- libFuzzer target for libxti: what a transport provider
 * sends the library.
 *
 * How this works
 * --------------
 * The first byte picks the mode.
 *
 * Below 0x80: one decoding function of xti_decode.c (byte % 15) gets the
 * rest of the input as a control part.  When it accepts it, every byte
 * of every region it returned is read (the sanitizers check that they
 * lie inside the input) and the values it promises are checked: regions
 * inside the input and after the structure, TLI_error in range, a valid
 * service type and state.  A broken promise aborts.
 *
 * From 0x80: whole XTI calls.  Bytes 1..4 are the endpoint: service
 * type, XTI state, bound qlen and PROVIDER_flag bits; byte 5 the number
 * of calls.  Then messages, each [kind][ctl length][data length][ctl]
 * [data] (kind: bit 0 high priority, bit 1 band 1, bit 2 no control
 * part, bit 3 no data part), written into the provider's end of a
 * STREAMS pipe; the other end is made an endpoint without asking the
 * provider (_xti_attach) and is non-blocking.  What is left of the input
 * picks, byte by byte, calls that read what the provider sent (t_look,
 * t_rcv, t_rcvv, t_rcvudata, t_rcvvudata, t_rcvuderr, t_listen,
 * t_rcvconnect, t_rcvdis, t_rcvrel, t_rcvreldata) or send without
 * waiting for an ack (t_snd, t_sndrel, t_sndudata), with buffers of
 * sizes from those bytes.  No call may crash, read or write out of
 * bounds, leak, or block; t_errno must be a valid XTI error.  Calls that
 * wait for an acknowledgement or go through timod are not run: there is
 * no provider to answer them (the decoders cover their acks).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stropts.h>
#include <sys/tihdr.h>
#include <xti.h>

#include "xti_impl.h"

#define NEED_ABORT(c) do { if (!(c)) abort(); } while (0)

static volatile unsigned sink;

static void touch(const struct xti_region *r, const uint8_t *base,
		  size_t len, size_t hdr)
{
	if (r->len == 0)
		return;
	NEED_ABORT((const uint8_t *)r->p >= base + hdr &&
		   (const uint8_t *)r->p + r->len <= base + len);
	for (size_t i = 0; i < r->len; i++)
		sink += (unsigned char)r->p[i];
}

static void decode(int which, const uint8_t *p, size_t n)
{
	int len = n > 65536 ? 65536 : (int)n;
	struct T_info_ack ia;
	struct xti_dec_ack a;
	struct xti_region r1, r2;
	struct xti_dec_conn c;
	struct xti_dec_data d;
	struct xti_dec_udata u;
	struct T_capability_ack ca;
	struct ti_sync_ack sa;
	unsigned qlen;
	t_scalar_t fl, prim;
	int reason, seq;

	switch (which) {
	case 0:
		if (xti_dec_info_ack(p, len, &ia) == 0)
			NEED_ABORT(ia.SERV_type >= T_COTS &&
				   ia.SERV_type <= T_CLTS &&
				   ia.CURRENT_state >= 0 &&
				   ia.CURRENT_state < TS_NOSTATES);
		break;
	case 1:
		if (xti_dec_ok_ack(p, len, &a) == 0 && a.prim == T_ERROR_ACK)
			NEED_ABORT(a.tli > 0 && a.tli <= TPROTO);
		break;
	case 2:
		if (xti_dec_bind_ack(p, len, &r1, &qlen) == 0)
			touch(&r1, p, len, sizeof(struct T_bind_ack));
		break;
	case 3:
		if (xti_dec_optmgmt_ack(p, len, &r1, &fl) == 0)
			touch(&r1, p, len, sizeof(struct T_optmgmt_ack));
		break;
	case 4:
		if (xti_dec_addr_ack(p, len, &r1, &r2) == 0) {
			touch(&r1, p, len, sizeof(struct T_addr_ack));
			touch(&r2, p, len, sizeof(struct T_addr_ack));
		}
		break;
	case 5:
		if (xti_dec_capability_ack(p, len, &ca) == 0 &&
		    (ca.CAP_bits1 & TC1_INFO))
			NEED_ABORT(ca.INFO_ack.PRIM_type == T_INFO_ACK);
		break;
	case 6:
		if (xti_dec_sync_ack(p, len, &sa) == 0)
			NEED_ABORT(sa.tsa_info.PRIM_type == T_INFO_ACK);
		break;
	case 7:
	case 8:
		if ((which == 7 ? xti_dec_conn_ind(p, len, &c)
				: xti_dec_conn_con(p, len, &c)) == 0) {
			touch(&c.addr, p, len, sizeof(struct T_conn_con));
			touch(&c.opt, p, len, sizeof(struct T_conn_con));
		}
		break;
	case 9:
		xti_dec_discon_ind(p, len, &reason, &seq);
		break;
	case 10:
		if (xti_dec_data_ind(p, len, &d) == 0)
			touch(&d.opt, p, len, sizeof(struct T_data_ind));
		break;
	case 11:
	case 12:
		if ((which == 11 ? xti_dec_unitdata_ind(p, len, &u)
				 : xti_dec_uderror_ind(p, len, &u)) == 0) {
			touch(&u.addr, p, len, sizeof(struct T_unitdata_ind));
			touch(&u.opt, p, len, sizeof(struct T_unitdata_ind));
		}
		break;
	case 13:
		xti_dec_event(p, len, (len & 1) != 0);
		break;
	default:
		xti_dec_prim(p, len, &prim);
		break;
	}
}

/* ---- whole calls ---- */

struct in {
	const uint8_t *p;
	size_t n;
};

static int byte(struct in *in)
{
	if (in->n == 0)
		return -1;
	in->n--;
	return *in->p++;
}

static void put_messages(int pfd, struct in *in, int count)
{
	static char zero[256];

	for (int i = 0; i < count && in->n >= 3; i++) {
		int kind = byte(in), cl = byte(in), dl = byte(in);
		struct strbuf c = { 0, 0, NULL }, d = { 0, 0, NULL };

		if ((size_t)cl > in->n)
			cl = (int)in->n;
		c.len = cl;
		c.buf = (char *)in->p;
		in->p += cl;
		in->n -= (size_t)cl;
		if ((size_t)dl > in->n) {
			d.buf = zero;		/* (data need not be input) */
		} else {
			d.buf = (char *)in->p;
			in->p += dl;
			in->n -= (size_t)dl;
		}
		d.len = dl;
		putpmsg(pfd, (kind & 4) ? NULL : &c, (kind & 8) ? NULL : &d,
			(kind & 1) ? 0 : (kind & 2) ? 1 : 0,
			(kind & 1) ? MSG_HIPRI : MSG_BAND);
	}
}

static void one_call(int fd, int what, int size)
{
	static char buf[2048], ab[128], ob[128];
	struct t_iovec iov[2] = { { buf, (size_t)size / 2 },
				  { buf + 1024, (size_t)size - size / 2 } };
	struct t_unitdata ud;
	struct t_uderr ue;
	struct t_call c;
	struct t_discon d;
	int flags, r = 0;

	memset(&ud, 0, sizeof(ud));
	ud.addr.buf = ab;
	ud.addr.maxlen = (unsigned)size % sizeof(ab);
	ud.opt.buf = ob;
	ud.opt.maxlen = (unsigned)(size / 3) % sizeof(ob);
	ud.udata.buf = buf;
	ud.udata.maxlen = (unsigned)size;
	memset(&ue, 0, sizeof(ue));
	ue.addr = ud.addr;
	ue.opt = ud.opt;
	memset(&c, 0, sizeof(c));
	c.addr = ud.addr;
	c.opt = ud.opt;
	c.udata = ud.udata;
	memset(&d, 0, sizeof(d));
	d.udata = ud.udata;
	t_errno = 0;
	switch (what % 15) {
	case 0: r = t_look(fd); break;
	case 1: r = t_rcv(fd, buf, (unsigned)size, &flags); break;
	case 2: r = t_rcvv(fd, iov, 2, &flags); break;
	case 3: r = t_rcvudata(fd, &ud, &flags); break;
	case 4: r = t_rcvvudata(fd, &ud, iov, 2, &flags); break;
	case 5: r = t_rcvuderr(fd, (what & 16) ? NULL : &ue); break;
	case 6: r = t_listen(fd, &c); break;
	case 7: r = t_rcvconnect(fd, (what & 16) ? NULL : &c); break;
	case 8: r = t_rcvdis(fd, (what & 16) ? NULL : &d); break;
	case 9: r = t_rcvrel(fd); break;
	case 10: r = t_rcvreldata(fd, &d); break;
	case 11: r = t_snd(fd, buf, (unsigned)size % 64, what & (T_MORE |
							       T_EXPEDITED));
		break;
	case 12: r = t_sndrel(fd); break;
	case 13:
		ud.addr.len = ud.addr.maxlen;
		ud.udata.len = (unsigned)size % 64;
		r = t_sndudata(fd, &ud);
		break;
	default: r = t_getstate(fd); break;
	}
	if (r == -1)
		NEED_ABORT(t_errno > 0 && t_errno <= TPROTO);
	NEED_ABORT(t_getstate(fd) >= T_UNBND && t_getstate(fd) <= T_INREL);
}

static void calls(const uint8_t *p, size_t n)
{
	struct in in = { p, n };
	struct T_info_ack ia;
	int fds[2], serv, state, qlen, pf, count;

	serv = byte(&in) % 3 + 1;
	state = byte(&in) % 7 + 1;
	qlen = byte(&in) % 4;
	pf = byte(&in);
	count = byte(&in) % 16;
	if (count < 0 || s_pipe(fds) != 0)
		return;
	if (serv == T_CLTS && state > T_IDLE)
		state = T_IDLE;
	memset(&ia, 0, sizeof(ia));
	ia.PRIM_type = T_INFO_ACK;
	ia.TSDU_size = (pf & 1) ? 0 : 512;
	ia.ETSDU_size = (pf & 2) ? T_INVALID : 64;
	ia.CDATA_size = (pf & 4) ? T_INFINITE : 32;
	ia.DDATA_size = (pf & 8) ? T_INVALID : 32;
	ia.ADDR_size = 64;
	ia.OPT_size = (pf & 16) ? T_INFINITE : 64;
	ia.TIDU_size = 256;
	ia.SERV_type = serv;
	ia.PROVIDER_flag = ((pf & 32) ? SENDZERO : 0) |
			   ((pf & 64) ? ORDRELDATA : 0) |
			   ((pf & 128) ? EXPINLINE : 0);
	put_messages(fds[1], &in, count);
	fcntl(fds[0], F_SETFL, O_RDWR | O_NONBLOCK);
	fcntl(fds[1], F_SETFL, O_RDWR | O_NONBLOCK);
	if (_xti_attach(fds[0], &ia, state, (unsigned)qlen) == 0) {
		for (int i = 0; i < 24; i++) {
			int what = byte(&in), size = byte(&in);
			if (what < 0 || size < 0)
				break;
			one_call(fds[0], what, size * 8);
		}
	}
	t_close(fds[0]);
	close(fds[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] < 0x80)
		decode(data[0] % 15, data + 1, size - 1);
	else
		calls(data + 1, size - 1);
	return 0;
}
