/*
 * fuzz_script.h -- the script the TPI fuzz targets (fuzz_tpi, fuzz_inet)
 * play against real streams of a set of providers.
 *
 * The input:
 *
 *	setup		1 byte: the provider (setup % ndevs; a target may
 *			read other bits of it: fs_setup)
 *	record...	hdr, ctl length (2 bytes, little endian), ctl,
 *			[data length (2 bytes), data]
 *
 * hdr: bits 0-1 the endpoint (three are open, 3 means 2), bit 2 send it
 * high priority (M_PCPROTO), bit 3 a data part follows, bits 4-5 what
 * to do -- 0 putmsg as it is, 1 putmsg after the fix-ups below, 2 close
 * the endpoint and open it again, 3 write() the data alone -- and bit 6
 * the peer of the fix-ups is the endpoint itself rather than the next.
 *
 * After each record every endpoint is drained with non-blocking getmsg
 * (the endpoints are O_NONBLOCK), so a sequence of primitives walks the
 * providers through their states.  What cannot be guessed from the
 * outside is filled in by the fix-ups, taken from the answers drained so
 * far: a T_CONN_REQ or T_UNITDATA_REQ gets the address the peer was bound
 * to (from its T_BIND_ACK) appended as its destination, a T_CONN_RES the
 * ACCEPTOR_id of the peer (from its T_CAPABILITY_ACK) and the SEQ_number
 * of the last T_CONN_IND on the endpoint, a T_DISCON_REQ that
 * SEQ_number, a T_BIND_REQ what the target's bind_fixup makes of it.
 *
 * One translation unit includes this: its state is static.
 */
#ifndef STREAMS_FUZZ_SCRIPT_H
#define STREAMS_FUZZ_SCRIPT_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stropts.h>
#include <sys/stream.h>
#include <sys/tihdr.h>

#define NEP		3
#define CTL_MAX		1024		/* putmsg limit of a control part */
#define ADDR_MAX	128
#define DRAIN_MAX	256		/* messages drained per endpoint */

/* What a target adds to the script. */
struct fs_target {
	const char *const *devs;	/* the providers */
	int ndevs;
	/* every record's control part, before it is acted on (NULL: none) */
	void (*record)(const unsigned char *c, size_t n, bool hipri);
	/* a T_BIND_REQ that is fixed up (n >= sizeof(struct T_bind_req),
	 * room for CTL_MAX): its new length (NULL: left as it is) */
	size_t (*bind_fixup)(unsigned char *c, size_t n);
	/* every request about to be put (NULL: none) */
	void (*confine)(unsigned char *c, size_t n);
};

/* One endpoint and what its answers told about it. */
struct endp {
	int fd;
	unsigned char addr[ADDR_MAX];	/* from T_BIND_ACK */
	size_t addrlen;
	bool have_id;
	t_uscalar_t acceptor_id;	/* from T_CAPABILITY_ACK */
	t_scalar_t seq;			/* of the last T_CONN_IND */
};

/* All of these belong to libFuzzer's one fuzzing thread. */
static struct endp ep[NEP];
static unsigned char rbuf_ctl[65536], rbuf_dat[65536];
static bool trace;	/* set by the target from its environment */
static const struct fs_target *fs;	/* the target running */
static unsigned char fs_setup;	/* this input's setup byte */

static void ep_open(struct endp *e, int prov)
{
	memset(e, 0, sizeof(*e));
	e->fd = open(fs->devs[prov], O_RDWR | O_NONBLOCK);
}

static void ep_close(struct endp *e)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

static t_scalar_t get_scalar(const unsigned char *p, size_t at)
{
	t_scalar_t v;

	memcpy(&v, p + at, sizeof(v));
	return v;
}

static void put_scalar(unsigned char *p, size_t at, t_scalar_t v)
{
	memcpy(p + at, &v, sizeof(v));
}

/* Remember what an answer says about endpoint e. */
static void learn(struct endp *e, const unsigned char *c, size_t n)
{
	t_scalar_t prim, len, off;

	if (n < sizeof(t_scalar_t))
		return;
	prim = get_scalar(c, 0);
	if (prim == T_BIND_ACK && n >= sizeof(struct T_bind_ack)) {
		len = get_scalar(c, offsetof(struct T_bind_ack, ADDR_length));
		off = get_scalar(c, offsetof(struct T_bind_ack, ADDR_offset));
		if (len >= 0 && len <= ADDR_MAX && off >= 0 &&
		    (size_t)off <= n && (size_t)len <= n - (size_t)off) {
			memcpy(e->addr, c + off, (size_t)len);
			e->addrlen = (size_t)len;
		}
	} else if (prim == T_CAPABILITY_ACK &&
		   n >= sizeof(struct T_capability_ack)) {
		struct T_capability_ack ca;

		memcpy(&ca, c, sizeof(ca));
		if (ca.CAP_bits1 & TC1_ACCEPTOR_ID) {
			e->have_id = true;
			e->acceptor_id = ca.ACCEPTOR_id;
		}
	} else if (prim == T_CONN_IND && n >= sizeof(struct T_conn_ind)) {
		e->seq = get_scalar(c, offsetof(struct T_conn_ind, SEQ_number));
	}
}

/* Take everything queued at every endpoint's stream head. */
static void drain(void)
{
	for (int i = 0; i < NEP; i++) {
		struct endp *e = &ep[i];

		for (int k = 0; e->fd >= 0 && k < DRAIN_MAX; k++) {
			struct strbuf c = { sizeof(rbuf_ctl), 0,
					    (char *)rbuf_ctl };
			struct strbuf d = { sizeof(rbuf_dat), 0,
					    (char *)rbuf_dat };
			int flags = 0;

			if (getmsg(e->fd, &c, &d, &flags) < 0) {
				if (trace && errno != EAGAIN)
					fprintf(stderr, "  ep%d: getmsg: %s\n",
						i, strerror(errno));
				break;	/* EAGAIN: empty; or an error */
			}
			if (trace)
				fprintf(stderr, "  ep%d: got prim %d ctl %d "
					"data %d\n", i, c.len >= 4 ?
					(int)get_scalar(rbuf_ctl, 0) : -1,
					c.len, d.len);
			if (c.len > 0)
				learn(e, rbuf_ctl, (size_t)c.len);
		}
	}
}

/*
 * The fix-ups of a request in c (n bytes, room for CTL_MAX): the peer's
 * address as destination, the acceptor and sequence of a T_CONN_RES,
 * the sequence of a T_DISCON_REQ.  Returns the new length.
 */
static size_t fixup(unsigned char *c, size_t n, struct endp *self,
		    struct endp *peer)
{
	size_t dl, doff;
	t_scalar_t prim;

	if (n < sizeof(t_scalar_t))
		return n;
	prim = get_scalar(c, 0);
	switch (prim) {
	case T_CONN_REQ:
		dl = offsetof(struct T_conn_req, DEST_length);
		doff = offsetof(struct T_conn_req, DEST_offset);
		if (n < sizeof(struct T_conn_req))
			return n;
		break;
	case T_UNITDATA_REQ:
		dl = offsetof(struct T_unitdata_req, DEST_length);
		doff = offsetof(struct T_unitdata_req, DEST_offset);
		if (n < sizeof(struct T_unitdata_req))
			return n;
		break;
	case T_BIND_REQ:
		if (fs->bind_fixup == NULL || n < sizeof(struct T_bind_req))
			return n;
		return fs->bind_fixup(c, n);
	case T_DISCON_REQ:
		if (n >= sizeof(struct T_discon_req))
			put_scalar(c, offsetof(struct T_discon_req,
					       SEQ_number), self->seq);
		return n;
	case T_CONN_RES:
		if (n < sizeof(struct T_conn_res))
			return n;
		put_scalar(c, offsetof(struct T_conn_res, ACCEPTOR_id),
			   peer->have_id ? (t_scalar_t)peer->acceptor_id : 0);
		put_scalar(c, offsetof(struct T_conn_res, SEQ_number),
			   self->seq);
		return n;
	default:
		return n;
	}
	while (n % 4 != 0)
		c[n++] = 0;
	if (n + peer->addrlen > CTL_MAX)
		return n;
	memcpy(c + n, peer->addr, peer->addrlen);
	put_scalar(c, dl, (t_scalar_t)peer->addrlen);
	put_scalar(c, doff, (t_scalar_t)n);
	return n + peer->addrlen;
}

static size_t take16(const uint8_t **p, size_t *left)
{
	size_t v;

	if (*left < 2) {
		*left = 0;
		return 0;
	}
	v = (size_t)(*p)[0] | (size_t)(*p)[1] << 8;
	*p += 2;
	*left -= 2;
	return v;
}

/* Run the script (data, size) against target t. */
static int fs_run(const struct fs_target *t, const uint8_t *data,
		  size_t size)
{
	static unsigned char ctl[CTL_MAX + 4];
	const uint8_t *p = data;
	size_t left = size;
	int prov;

	if (size < 1)
		return 0;
	fs = t;
	fs_setup = p[0];
	prov = p[0] % t->ndevs;
	p++;
	left--;
	for (int i = 0; i < NEP; i++)
		ep_open(&ep[i], prov);

	while (left > 0) {
		unsigned hdr = *p++;
		int i = (hdr & 3) == 3 ? 2 : hdr & 3;
		bool hipri = hdr & 0x04, hasdata = hdr & 0x08;
		int op = (hdr >> 4) & 3;
		struct endp *self = &ep[i];
		struct endp *peer = (hdr & 0x40) ? self : &ep[(i + 1) % NEP];
		size_t clen, dlen = 0;
		const uint8_t *dat = NULL;
		int r;

		left--;
		clen = take16(&p, &left);
		if (clen > left)
			clen = left;
		if (clen > CTL_MAX)
			clen = CTL_MAX;
		memcpy(ctl, p, clen);
		p += clen;
		left -= clen;
		if (hasdata) {
			dlen = take16(&p, &left);
			if (dlen > left)
				dlen = left;
			dat = p;
			p += dlen;
			left -= dlen;
		}
		if (t->record != NULL)
			t->record(ctl, clen, hipri);
		if (op == 2) {
			ep_close(self);
			ep_open(self, prov);
			continue;
		}
		if (self->fd < 0)
			continue;
		if (op == 3) {
			if (dlen > 0)
				(void)write(self->fd, dat, dlen);
		} else {
			struct strbuf c = { 0, 0, (char *)ctl };
			struct strbuf d = { 0, (int)dlen, (char *)dat };

			if (op == 1)
				clen = fixup(ctl, clen, self, peer);
			if (t->confine != NULL)
				t->confine(ctl, clen);
			c.len = (int)clen;
			r = putmsg(self->fd, &c, hasdata ? &d : NULL,
				   hipri ? RS_HIPRI : 0);
			if (trace)
				fprintf(stderr, "ep%d: put prim %d ctl %d "
					"data %d: %s\n", i, clen >= 4 ?
					(int)get_scalar(ctl, 0) : -1, c.len,
					hasdata ? d.len : -1,
					r == 0 ? "ok" : strerror(errno));
		}
		drain();
	}
	drain();
	for (int i = 0; i < NEP; i++)
		ep_close(&ep[i]);
	return 0;
}

#endif
