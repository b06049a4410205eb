/*
 * <sys/strlog.h> -- STREAMS error and trace logging.
 *
 * strlog() records a message in the executive's log: a ring of the most
 * recent records readable with strlog_read(), copied to standard error for
 * SL_CONSOLE and SL_FATAL, and to the file named by the environment
 * variable STREAMS_LOG if set.  Returns 1 if the message was logged.
 */
#ifndef _SYS_STRLOG_H
#define _SYS_STRLOG_H

#include <stdarg.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_ERROR	0x0001	/* for the error logger */
#define SL_TRACE	0x0002	/* for the trace logger */
#define SL_NOTIFY	0x0004	/* also mail the administrator (ignored) */
#define SL_CONSOLE	0x0008	/* also print on the console */
#define SL_FATAL	0x0010	/* fatal error */
#define SL_WARN		0x0020	/* warning */
#define SL_NOTE		0x0040	/* notice */
#define SL_NOPUTBUF	0x0080	/* accepted, ignored */

#define LOGMSGSZ	1024	/* longest formatted message */

struct log_ctl {
	short mid;		/* module id */
	short sid;		/* sub-id (minor) */
	char level;		/* trace level */
	short flags;		/* SL_* */
	long ltime;		/* lbolt ticks */
	time_t ttime;		/* seconds since the epoch */
	int seq_no;		/* sequence number */
	int pri;
};

struct strlog_rec {
	struct log_ctl lc;
	char msg[LOGMSGSZ];
};

int strlog(short mid, short sid, char level, unsigned short flags,
	   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int vstrlog(short mid, short sid, char level, unsigned short flags,
	    const char *fmt, va_list ap);

/* Trace filter: trace messages (SL_TRACE) are recorded only for module ids
 * and levels enabled here; mid -1 matches every module.  Errors always are. */
int strlog_trace(short mid, short sid, char level);

/* Copy out up to max records newer than sequence number *seq, oldest first;
 * *seq is advanced past what was copied.  Returns the number copied. */
int strlog_read(struct strlog_rec *recs, int max, int *seq);

#ifdef __cplusplus
}
#endif

#endif /* _SYS_STRLOG_H */
