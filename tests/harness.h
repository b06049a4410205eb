/*
 * harness.h -- streams for testing the executive without a stream head.
 *
 * th_stream() builds a stream: a minimal head (its read put procedure
 * queues what arrives, its write put procedure passes messages down), the
 * named test driver and the named modules pushed in order.  Tests send
 * with th_send() (put into the head's write queue) and look at what came
 * up with getq(sd->sd_rq).
 *
 * Test drivers:  "tsink" (counts and frees; or queues if told to),
 *                "techo" (sends every message back up),
 *                "tsinkq" (queues on its write queue: service procedure
 *                          that does nothing until released).
 * Test modules:  "tpass"  D_MP pass-through, put only
 *                "tpassq" D_MP pass-through with a service procedure
 *                "tpassp" no flags (queue-pair perimeter), put only
 *                "tpassm" D_MTPERMOD, put only
 *                "tpassr" D_MTPERQ, put only
 *                "tnosrv" D_MP, put only, no service (for back-enable tests)
 */
#ifndef STREAMS_TEST_HARNESS_H
#define STREAMS_TEST_HARNESS_H

#include <stdarg.h>
#include <sys/stream.h>
#include <sys/strexec.h>

#include "strsubr.h"

extern struct cdevsw th_tsink, th_techo, th_tsinkq;
extern struct fmodsw th_tpass, th_tpassq, th_tpassp, th_tpassm, th_tpassr;

/* Register everything above (idempotent). */
void th_register(void);

/* Build a stream: driver name, then module names, NULL-terminated.
 * Modules are pushed in order, so the last named is on top. */
struct stdata *th_stream(const char *drv, ...);
void th_close(struct stdata *sd);

/* Send mp down from the head (inside an entry). */
void th_send(struct stdata *sd, mblk_t *mp);
/* A one-block M_DATA message holding len bytes of value v. */
mblk_t *th_data(size_t len, int v);
/* A one-block message of type holding the n bytes at p (exits if there
 * is no memory). */
mblk_t *th_msg(int type, const void *p, size_t n);

/* Total messages the tsink driver of sd has consumed. */
long th_sink_count(struct stdata *sd);

/* Every message block, queue and stream allocated since th_mark() freed? */
void th_mark(void);
int th_leaks(void);	/* prints what leaked; 0 if nothing */

#endif
