/* topt.c -- STUB: replaced by the options code. */
#include <errno.h>
#include "topt.h"

int topt_mgmt(const struct topt_table *t, void *ep, t_scalar_t mgmt_flags,
	      const unsigned char *in, size_t inlen, bool privileged,
	      mblk_t **outp, t_scalar_t *resultp, int *unixerr)
{
	*unixerr = ENOSYS;
	return TSYSERR;
}
