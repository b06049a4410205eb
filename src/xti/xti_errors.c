/*
 * xti_errors.c -- t_errno, t_errlist, t_nerr, t_strerror(), t_error().
 *
 * t_errno is one int per thread (xti.h makes it the lvalue *_t_errno()).
 * The messages follow the wording of XNS 5.2.  A T_ERROR_ACK's error is
 * turned into t_errno here (xti_tpi_err): a TLI_error outside the XTI
 * range, or TSYSERR without an errno, is a protocol error (TPROTO).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xti_impl.h"

static __thread int xti_errno_tls __attribute__((tls_model("initial-exec")));

int *_t_errno(void)
{
	return &xti_errno_tls;
}

const char *t_errlist[] = {
	[0] = "Error 0",
	[TBADADDR] = "Incorrect address format",
	[TBADOPT] = "Incorrect options format",
	[TACCES] = "Illegal permissions",
	[TBADF] = "Illegal file descriptor",
	[TNOADDR] = "Couldn't allocate address",
	[TOUTSTATE] = "Routine will place interface out of state",
	[TBADSEQ] = "Illegal called/calling sequence number",
	[TSYSERR] = "System error",
	[TLOOK] = "An event requires attention",
	[TBADDATA] = "Illegal amount of data",
	[TBUFOVFLW] = "Buffer not large enough",
	[TFLOW] = "Can't send message - (blocked)",
	[TNODATA] = "No message currently available",
	[TNODIS] = "Disconnect message not found",
	[TNOUDERR] = "Unitdata error message not found",
	[TBADFLAG] = "Incorrect flags specified",
	[TNOREL] = "Orderly release message not found",
	[TNOTSUPPORT] = "Primitive not supported by provider",
	[TSTATECHNG] = "State is in process of changing",
	[TNOSTRUCTYPE] = "Unsupported structure type requested",
	[TBADNAME] = "Invalid transport provider name",
	[TBADQLEN] = "Listener queue length limit is zero",
	[TADDRBUSY] = "Transport address is in use",
	[TINDOUT] = "Outstanding connection indications",
	[TPROVMISMATCH] = "Listener-acceptor transport provider mismatch",
	[TRESQLEN] = "Connection acceptor has listen queue length limit "
		     "greater than zero",
	[TRESADDR] = "Connection acceptor-listener addresses not same but "
		     "required by transport",
	[TQFULL] = "Incoming connection queue is full",
	[TPROTO] = "Protocol error",
};

int t_nerr = (int)(sizeof(t_errlist) / sizeof(t_errlist[0]));

const char *t_strerror(int errnum)
{
	if (errnum < 0 || errnum >= t_nerr || t_errlist[errnum] == NULL)
		return "Unknown error";
	return t_errlist[errnum];
}

int t_error(const char *errmsg)
{
	int terr = t_errno, e = errno;

	if (errmsg != NULL && errmsg[0] != '\0')
		fprintf(stderr, "%s: ", errmsg);
	if (terr == TSYSERR)
		fprintf(stderr, "%s: %s\n", t_strerror(terr), strerror(e));
	else
		fprintf(stderr, "%s\n", t_strerror(terr));
	errno = e;
	return 0;
}

int xti_syserr(int e)
{
	t_errno = TSYSERR;
	errno = e;
	return -1;
}

int xti_proto(void)
{
	t_errno = TPROTO;
	errno = EPROTO;
	return -1;
}

int xti_tpi_err(int tli, int unixerr)
{
	if (tli <= 0 || tli > TPROTO)
		return xti_proto();
	if (tli == TSYSERR)
		return xti_syserr(unixerr > 0 ? unixerr : EPROTO);
	return xti_err(tli);
}
