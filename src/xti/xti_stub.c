/* xti_stub.c -- STUB: replaced by the XTI library. */
#include <xti.h>
int t_nerr = 0;
