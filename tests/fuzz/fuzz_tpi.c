/*
 * fuzz_tpi -- libFuzzer target for TPI parsing (tpi.c) and for the
 * loopback transport providers /dev/ticlts, /dev/ticots, /dev/ticotsord
 * driven through real streams.
 *
 * How this works
 * --------------
 * The input is a script in fuzz_script.h's format; the setup byte names
 * the provider (0 ticlts, 1 ticots, 2 ticotsord).  Every control part
 * first goes through tpi_check() (and tpi_allowed() in every state) as
 * an M_PROTO/M_PCPROTO block of exactly its bytes; then the script puts
 * it down an endpoint's stream, fixed up or not, and drains every
 * endpoint (bind, connect, accept, data, release, unbind...).
 *
 * While a provider cannot be opened only the tpi_check part runs.
 * Crashes, sanitizer reports, leaks and hangs (getmsg never blocks: the
 * endpoints are O_NONBLOCK) are what libFuzzer reports.
 * FUZZ_TPI_TRACE=1 in the environment prints each request and answer,
 * to see how far a seed gets.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include <sys/strexec.h>
#include "tpi.h"
#include "fuzz_script.h"

static const char *const devs[] = { "/dev/ticlts", "/dev/ticots",
				     "/dev/ticotsord" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* service procedures run in the calling thread, on the way out of
	 * each call: a run depends on its input only */
	streams_set_workers(0);
	trace = getenv("FUZZ_TPI_TRACE") != NULL;
	return 0;
}

/* The TPI helpers on the control part as a block of its own. */
static void check_block(const unsigned char *c, size_t n, bool hipri)
{
	t_scalar_t prim;
	mblk_t *mp;
	int ue, r;

	if ((mp = allocb(n, BPRI_MED)) == NULL)
		return;
	memcpy(mp->b_wptr, c, n);
	mp->b_wptr += n;
	mp->b_datap->db_type = hipri ? M_PCPROTO : M_PROTO;
	r = tpi_check(mp, &prim, &ue);
	if (r == 0 && tpi_size(prim) > n)
		__builtin_trap();	/* accepted a block too short */
	if (prim >= 0) {
		(void)tpi_acked(prim);
		for (int st = -1; st <= TS_NOSTATES; st++)
			(void)tpi_allowed(st, prim);
	}
	freemsg(mp);
}

static const struct fs_target tpi_target = {
	.devs = devs,
	.ndevs = 3,
	.record = check_block,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fs_run(&tpi_target, data, size);
}
