/*
 * log.c -- cmn_err, strlog and the executive's bad-input reporter.
 *
 * strlog records go to a ring of the last LOG_RING records (readable with
 * strlog_read, so tests can check what a module logged), to standard
 * error for SL_CONSOLE/SL_FATAL, and to the file named by STREAMS_LOG.
 * Trace records (SL_TRACE only) are kept only for module ids enabled by
 * strlog_trace().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/cmn_err.h>
#include <sys/strlog.h>

#include "strsubr.h"

#define LOG_RING 256
#define NTRACE	 32

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strlog_rec log_ring[LOG_RING];	/* log_lock */
static int log_seq;				/* log_lock: last written */
static FILE *log_file;				/* log_lock */
static int log_file_tried;			/* log_lock */
static struct { short mid, sid; char level; } log_trace[NTRACE];
static int log_ntrace;				/* log_lock */

static FILE *log_out(void)
{
	if (!log_file_tried) {
		const char *p = getenv("STREAMS_LOG");
		log_file_tried = 1;
		if (p != NULL && *p != '\0') {
			if (strcmp(p, "stderr") == 0)
				log_file = stderr;
			else
				log_file = fopen(p, "ae");
		}
	}
	return log_file;
}

int strlog_trace(short mid, short sid, char level)
{
	pthread_mutex_lock(&log_lock);
	if (log_ntrace == NTRACE) {
		pthread_mutex_unlock(&log_lock);
		return -ENOSPC;
	}
	log_trace[log_ntrace].mid = mid;
	log_trace[log_ntrace].sid = sid;
	log_trace[log_ntrace].level = level;
	log_ntrace++;
	pthread_mutex_unlock(&log_lock);
	return 0;
}

static bool traced(short mid, short sid, char level)
{
	for (int i = 0; i < log_ntrace; i++)
		if ((log_trace[i].mid == -1 || log_trace[i].mid == mid) &&
		    (log_trace[i].sid == -1 || log_trace[i].sid == sid) &&
		    level <= log_trace[i].level)
			return true;
	return false;
}

int vstrlog(short mid, short sid, char level, unsigned short flags,
	    const char *fmt, va_list ap)
{
	struct strlog_rec *r;
	FILE *f;

	if (fmt == NULL)
		return 0;
	pthread_mutex_lock(&log_lock);
	if (!(flags & (SL_ERROR | SL_CONSOLE | SL_FATAL | SL_WARN |
		       SL_NOTE)) && !traced(mid, sid, level)) {
		pthread_mutex_unlock(&log_lock);
		return 0;
	}
	log_seq++;
	r = &log_ring[log_seq % LOG_RING];
	r->lc.mid = mid;
	r->lc.sid = sid;
	r->lc.level = level;
	r->lc.flags = (short)flags;
	r->lc.ltime = str_lbolt();
	r->lc.ttime = time(NULL);
	r->lc.seq_no = log_seq;
	r->lc.pri = 0;
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	if (flags & (SL_CONSOLE | SL_FATAL))
		fprintf(stderr, "strlog(%d,%d): %s\n", mid, sid, r->msg);
	if ((f = log_out()) != NULL) {
		fprintf(f, "%ld %d %d %d %#x %s\n", (long)r->lc.ttime, mid, sid,
			level, flags, r->msg);
		fflush(f);
	}
	pthread_mutex_unlock(&log_lock);
	return 1;
}

int strlog(short mid, short sid, char level, unsigned short flags,
	   const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vstrlog(mid, sid, level, flags, fmt, ap);
	va_end(ap);
	return r;
}

int strlog_read(struct strlog_rec *recs, int max, int *seq)
{
	int n = 0, from;

	if (recs == NULL || seq == NULL || max <= 0)
		return 0;
	pthread_mutex_lock(&log_lock);
	from = *seq + 1;
	if (from < log_seq - LOG_RING + 1)
		from = log_seq - LOG_RING + 1;
	if (from < 1)
		from = 1;
	for (; from <= log_seq && n < max; from++)
		recs[n++] = log_ring[from % LOG_RING];
	*seq = from - 1;
	pthread_mutex_unlock(&log_lock);
	return n;
}

void vcmn_err(int level, const char *fmt, va_list ap)
{
	char buf[LOGMSGSZ];
	const char *prefix = "";
	bool console = true, logit = true;

	if (fmt == NULL || level == CE_IGNORE)
		return;
	if (*fmt == '!') {
		console = false;
		fmt++;
	} else if (*fmt == '^') {
		logit = false;
		fmt++;
	}
	vsnprintf(buf, sizeof(buf), fmt, ap);
	switch (level) {
	case CE_NOTE:
		prefix = "NOTICE: ";
		break;
	case CE_WARN:
		prefix = "WARNING: ";
		break;
	case CE_PANIC:
		prefix = "PANIC: ";
		console = true;
		break;
	}
	if (console)
		fprintf(stderr, "%s%s%s", prefix, buf,
			level == CE_CONT ? "" : "\n");
	if (logit)
		strlog(0, 0, 0, level == CE_WARN ? SL_WARN :
		       level == CE_PANIC ? SL_FATAL : SL_NOTE, "%s%s", prefix,
		       buf);
	if (level == CE_PANIC)
		abort();
}

void cmn_err(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcmn_err(level, fmt, ap);
	va_end(ap);
}

/*
 * Bad input from a module (NULL or freed message, NULL queue...): in a
 * debug build (STREAMS_DEBUG=1 or STR_DEBUG) report and abort so the
 * bug is found; otherwise log an error and let the caller refuse the
 * call.  Never corrupts memory either way.
 */
static int str_debug = -1;
static _Atomic long str_bad_count;

long str_bad_calls(void)
{
	return atomic_load(&str_bad_count);
}

void str_bad(const char *what, const void *ptr)
{
	atomic_fetch_add(&str_bad_count, 1);
	if (str_debug < 0) {
		const char *e = getenv("STREAMS_DEBUG");
#ifdef STR_DEBUG
		str_debug = !(e != NULL && *e == '0');
#else
		str_debug = e != NULL && *e != '\0' && *e != '0';
#endif
	}
	strlog(0, 0, 0, SL_ERROR, "STREAMS: %s (%p)", what, ptr);
	if (str_debug) {
		fprintf(stderr, "STREAMS assertion: %s (%p)\n", what, ptr);
		abort();
	}
}
