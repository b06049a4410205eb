/*
 * <sys/testmod.h> -- ioctls of the test and example drivers and modules
 * that come with the library (testmod, mux, loop).
 */
#ifndef _SYS_TESTMOD_H
#define _SYS_TESTMOD_H

#define TM_IOC		('T' << 8)
#define TM_ECHO		(TM_IOC | 1)	/* I_STR: ACK with the same data,
					   rval = its length */
#define TM_NAK		(TM_IOC | 2)	/* I_STR: NAK with the int given */
#define TM_TRANSPARENT	(TM_IOC | 3)	/* transparent: *(int *)arg += 1 */
#define TM_NOREPLY	(TM_IOC | 4)	/* never answered */
#define TM_SENDUP	(TM_IOC | 5)	/* I_STR: send struct tm_sendup up */
#define TM_COUNT	(TM_IOC | 6)	/* I_STR: rval = messages passed */
#define TM_TRANSOUT	(TM_IOC | 7)	/* transparent: copy out 16 bytes
					   "testmod-copyout\0" to arg */
#define TM_ACKERR	(TM_IOC | 8)	/* I_STR int e: M_IOCACK carrying
					   ioc_error e */
#define TM_REPLYLEN	(TM_IOC | 9)	/* I_STR int n: ACK with n bytes
					   of 'r' (n <= 65536) */
#define TM_STRCOPYOUT	(TM_IOC | 10)	/* I_STR: answered by M_COPYOUT of
					   "copyout\0", then M_IOCACK */
#define TM_SHORTCOPY	(TM_IOC | 11)	/* any: an M_COPYIN shorter than a
					   copyreq (a broken module) */
#define TM_LATECOPY	(TM_IOC | 12)	/* I_STR int ms: after ms an
					   M_COPYIN holding a state block
					   until its M_IOCDATA comes */
#define TM_STATES	(TM_IOC | 13)	/* I_STR: rval = TM_LATECOPY state
					   blocks held */
#define TM_SENDUP_KEEP	(TM_IOC | 15)	/* I_STR struct tm_sendup: send up
					   a dupmsg of it, keep the original
					   (as a module keeping a copy to
					   send again) */
#define TM_KEPT		(TM_IOC | 16)	/* I_STR: rval = the kept message's
					   first block type | the second's
					   << 8 (-1: none kept) */
#define TM_CRBAD	(TM_IOC | 14)	/* I_STR: rval = TM_LATECOPY
					   requests whose ioc_cr, looked at
					   when the copy was asked, was not
					   the caller's */

/* TM_SENDUP: a message the module sends toward the stream head. */
struct tm_sendup {
	int type;		/* M_* */
	int band;
	int flag;		/* b_flag, e.g. MSGMARK */
	int ctllen;		/* bytes of data[] in the first block */
	int datlen;		/* bytes of data[] in an M_DATA block after it
				   (-1: none) */
	unsigned char data[240];
};

#define MUX_IOC		('M' << 8)
#define MUX_ROUTE	(MUX_IOC | 1)	/* I_STR int: muxid for writes */
#define MUX_NLINKS	(MUX_IOC | 2)	/* I_STR: the driver's links, as
					   the return value */

#endif /* _SYS_TESTMOD_H */
