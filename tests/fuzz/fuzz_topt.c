/*
 * fuzz_topt -- libFuzzer target for the options code (topt.c).
 *
 * How this works
 * --------------
 * The input is [mode][flags: 4 bytes][option buffer...].  mode picks
 * what runs: bit 0 privileged, bits 1-2 the action (T_NEGOTIATE,
 * T_CHECK, T_DEFAULT, T_CURRENT) unless bit 3 says "use the 4 flag bytes
 * as MGMT_flags as they are", bit 4 topt_assoc instead of topt_mgmt,
 * bits 5-7 knobs of the provider below (refuse every set, fail every
 * get, grant less than asked).  The table is what a TCP-like provider
 * has: the XTI_GENERIC options and INET_IP/INET_TCP/INET_UDP ones of
 * every value type, both numberings, read-only, privileged, clamped and
 * TOPT_NOALL entries.  Values live in a topt_store.
 *
 * Besides the sanitizers, the target checks what topt.h promises and
 * aborts when it does not hold: the answer is a well formed option
 * buffer (headers at multiples of 4, lengths inside, valid statuses),
 * MGMT_flags is the worst status in it, errors are only TBADFLAG (for
 * exactly the bad flags) and TBADOPT, and nothing on the endpoint
 * changes for an error, T_CHECK, T_DEFAULT or T_CURRENT.  Then
 * topt_put() gets the same bytes as values.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stream.h>
#include "topt.h"

static const struct topt_def defs[] = {
	TOPT_GENERIC_DEFS(65536),
	{ INET_IP, T_IP_OPTIONS, IP_OPTIONS, TOPT_BYTES, TOPT_ASSOC, 40,
	  0, 0, 0 },
	{ INET_IP, T_IP_TOS, IP_TOS, TOPT_UCHAR, TOPT_ASSOC, 0, 0, 0, 255 },
	{ INET_IP, T_IP_TTL, IP_TTL, TOPT_UCHAR, TOPT_ASSOC | TOPT_CLAMP, 0,
	  64, 1, 255 },
	{ INET_IP, T_IP_REUSEADDR, IP_REUSEADDR, TOPT_BOOL, 0, 0, T_NO, 0, 0 },
	{ INET_IP, T_IP_DONTROUTE, IP_DONTROUTE, TOPT_BOOL, TOPT_ASSOC, 0,
	  T_NO, 0, 0 },
	{ INET_IP, T_IP_BROADCAST, IP_BROADCAST, TOPT_BOOL, TOPT_NOALL, 0,
	  T_NO, 0, 0 },
	{ INET_TCP, T_TCP_NODELAY, TCP_NODELAY, TOPT_BOOL, 0, 0, T_NO, 0, 0 },
	{ INET_TCP, T_TCP_MAXSEG, TCP_MAXSEG, TOPT_SCALAR, TOPT_RDONLY, 0,
	  536, 0, 65535 },
	{ INET_TCP, T_TCP_KEEPALIVE, TCP_KEEPALIVE, TOPT_KPALIVE, 0, 0, T_NO,
	  1, 0x7fffffff },
	{ INET_UDP, T_UDP_CHECKSUM, UDP_CHECKSUM, TOPT_BOOL,
	  TOPT_ASSOC | TOPT_PRIV, 0, T_YES, 0, 0 },
	{ 0x7000, 1, 2, TOPT_SCALAR, TOPT_CLAMP, 0, 0, -1000, 1000 },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

struct ep {
	struct topt_store s;	/* first: topt_store_ops use it */
	bool refuse, fail_get, grant_less;
};

static int ep_get(void *e, const struct topt_def *d, union topt_val *v)
{
	if (((struct ep *)e)->fail_get)
		return -1;
	return topt_store_ops.get(e, d, v);
}

static t_uscalar_t ep_set(void *e, const struct topt_def *d,
			  union topt_val *v)
{
	struct ep *ep = e;

	if (ep->refuse) {
		memset(v, 0xa5, sizeof(*v));
		return T_FAILURE;
	}
	if (ep->grant_less && d->type == TOPT_SCALAR && v->i > 4096) {
		v->i = 4096;
		topt_store_ops.set(e, d, v);
		return T_PARTSUCCESS;
	}
	if (ep->grant_less && d->type == TOPT_BYTES && v->bytes.len > 8) {
		v->bytes.len = 8;
		topt_store_ops.set(e, d, v);
		return T_PARTSUCCESS;
	}
	return topt_store_ops.set(e, d, v);
}

static const struct topt_ops ops = { ep_get, ep_set };
static const struct topt_table tab = { defs, NDEFS, &ops };

static int rank(t_uscalar_t st)
{
	switch (st) {
	case T_SUCCESS:
		return 0;
	case T_PARTSUCCESS:
		return 1;
	case T_FAILURE:
		return 2;
	case T_READONLY:
		return 3;
	case T_NOTSUPPORT:
		return 4;
	default:
		return -1;
	}
}

#define MUST(c) do { if (!(c)) __builtin_trap(); } while (0)

/* The answer is a well formed option buffer; returns the worst status. */
static t_uscalar_t check_answer(const unsigned char *p, size_t n)
{
	t_uscalar_t worst = T_SUCCESS;
	size_t off = 0;

	MUST(n % sizeof(t_uscalar_t) == 0);
	while (off < n) {
		struct t_opthdr h;

		MUST(n - off >= sizeof(h));
		memcpy(&h, p + off, sizeof(h));
		MUST(h.len >= sizeof(h) && h.len <= n - off);
		MUST(rank(h.status) >= 0);
		if (rank(h.status) > rank(worst))
			worst = h.status;
		off += (h.len + 3) & ~(t_uscalar_t)3;
	}
	MUST(off == n);
	return worst;
}

static bool flags_ok(t_scalar_t f)
{
	return f == T_NEGOTIATE || f == T_CHECK || f == T_DEFAULT ||
	       f == T_CURRENT;
}

static void fuzz_put(const uint8_t *data, size_t size)
{
	unsigned char buf[64];
	union topt_val v;
	size_t len;

	if (size < 3)
		return;
	memset(&v, 0, sizeof(v));
	memcpy(&v, data + 3, size - 3 < sizeof(v) ? size - 3 : sizeof(v));
	len = data[1] % 70;
	if (topt_put(buf, &len, data[2] % 65, data[0], data[1],
		     (enum topt_type)(data[0] % 8), &v, T_SUCCESS)) {
		MUST(len % 4 == 0 && len <= data[2] % 65);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const t_scalar_t acts[] = { T_NEGOTIATE, T_CHECK, T_DEFAULT,
					   T_CURRENT };
	union topt_val before[NDEFS];
	t_scalar_t flags, result;
	struct ep ep;
	mblk_t *mp;
	int mode, ue, r;

	if (size < 5)
		return 0;
	mode = data[0];
	memcpy(&flags, data + 1, sizeof(flags));
	if (!(mode & 0x08))
		flags = acts[(mode >> 1) & 3];
	memset(&ep, 0, sizeof(ep));
	if (topt_store_init(&ep.s, &tab) != 0)
		return 0;
	ep.refuse = mode & 0x20;
	ep.fail_get = mode & 0x40;
	ep.grant_less = mode & 0x80;
	memcpy(before, ep.s.vals, sizeof(before));

	if (mode & 0x10) {
		r = topt_assoc(&tab, &ep, data + 5, size - 5, mode & 1);
		MUST(r == 0 || r == TBADOPT);
		if (r != 0)
			MUST(memcmp(before, ep.s.vals, sizeof(before)) == 0);
	} else {
		r = topt_mgmt(&tab, &ep, flags, data + 5, size - 5, mode & 1,
			      &mp, &result, &ue);
		MUST((r == TBADFLAG) == !flags_ok(flags));
		if (r == 0) {
			size_t n = (size_t)(mp->b_wptr - mp->b_rptr);

			MUST(mp != NULL && mp->b_datap->db_type == M_DATA);
			MUST(check_answer(mp->b_rptr, n) ==
			     (t_uscalar_t)result);
			freemsg(mp);
		} else {
			MUST(r == TBADFLAG || r == TBADOPT);
			MUST(mp == NULL);
		}
		if (r != 0 || flags != T_NEGOTIATE)
			MUST(memcmp(before, ep.s.vals, sizeof(before)) == 0);
	}
	topt_store_fini(&ep.s);
	fuzz_put(data + 5, size - 5);
	return 0;
}
