/*
 * <sys/cmn_err.h> -- console messages from modules and drivers.
 * CE_PANIC prints and aborts the process.  A format starting with '!'
 * goes only to the log (see <sys/strlog.h>), '^' only to the console
 * (standard error).
 */
#ifndef _SYS_CMN_ERR_H
#define _SYS_CMN_ERR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CE_CONT		0
#define CE_NOTE		1
#define CE_WARN		2
#define CE_PANIC	3
#define CE_IGNORE	4

void cmn_err(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void vcmn_err(int level, const char *fmt, va_list ap);

#ifdef __cplusplus
}
#endif

#endif /* _SYS_CMN_ERR_H */
