/*
 * <sys/stropts.h> -- the STREAMS user interface (SVR4, XSI STREAMS).
 *
 * Stream descriptors are ordinary file descriptors; open(), close(),
 * read(), write(), readv(), writev(), ioctl(), poll(), select(), fcntl()
 * and dup() work on them as on any descriptor once the program links with
 * -lstreams.  The functions below are the STREAMS-only calls.
 */
#ifndef _SYS_STROPTS_H
#define _SYS_STROPTS_H

#include <sys/types.h>
#include <sys/ioctl.h>	/* SVR4 programs call ioctl() with only this header */

#ifdef __cplusplus
extern "C" {
#endif

#ifndef FMNAMESZ
#define FMNAMESZ	8
#endif

#define __SID		('S' << 8)

#define I_NREAD		(__SID | 1)	/* bytes in first message; returns #msgs */
#define I_PUSH		(__SID | 2)	/* push module (name) */
#define I_POP		(__SID | 3)	/* pop top module */
#define I_LOOK		(__SID | 4)	/* name of top module */
#define I_FLUSH		(__SID | 5)	/* flush FLUSHR/FLUSHW/FLUSHRW */
#define I_SRDOPT	(__SID | 6)	/* set read options */
#define I_GRDOPT	(__SID | 7)	/* get read options */
#define I_STR		(__SID | 8)	/* ioctl to a module or driver */
#define I_SETSIG	(__SID | 9)	/* ask for SIGPOLL on events */
#define I_GETSIG	(__SID | 10)	/* events asked for */
#define I_FIND		(__SID | 11)	/* is module (name) on the stream? */
#define I_LINK		(__SID | 12)	/* link a stream below a multiplexer */
#define I_UNLINK	(__SID | 13)	/* undo I_LINK */
#define I_RECVFD	(__SID | 14)	/* receive a descriptor */
#define I_PEEK		(__SID | 15)	/* look at the first message */
#define I_FDINSERT	(__SID | 16)	/* send a message naming another stream */
#define I_SENDFD	(__SID | 17)	/* pass a descriptor */
#define I_E_RECVFD	(__SID | 18)	/* accepted as I_RECVFD */
#define I_SWROPT	(__SID | 19)	/* set write options */
#define I_GWROPT	(__SID | 20)	/* get write options */
#define I_LIST		(__SID | 21)	/* list the modules and driver */
#define I_PLINK		(__SID | 22)	/* persistent link */
#define I_PUNLINK	(__SID | 23)	/* undo I_PLINK */
#define I_FLUSHBAND	(__SID | 28)	/* flush one band */
#define I_CKBAND	(__SID | 29)	/* a message of this band queued? */
#define I_GETBAND	(__SID | 30)	/* band of the first message */
#define I_ATMARK	(__SID | 31)	/* first message marked? */
#define I_SETCLTIME	(__SID | 32)	/* close time-out, milliseconds */
#define I_GETCLTIME	(__SID | 33)
#define I_CANPUT	(__SID | 34)	/* can a message of band be written? */
#define I_SERROPT	(__SID | 35)	/* set error options */
#define I_GERROPT	(__SID | 36)	/* get error options */
#define I_ANCHOR	(__SID | 37)	/* pops below this point need privilege */

/* A control or data buffer for getmsg/putmsg. */
struct strbuf {
	int maxlen;		/* buffer size (getmsg) */
	int len;		/* length of data */
	char *buf;		/* the buffer */
};

struct strpeek {
	struct strbuf ctlbuf;
	struct strbuf databuf;
	int flags;		/* in: RS_HIPRI or 0; out: RS_HIPRI if so */
};

struct strfdinsert {
	struct strbuf ctlbuf;
	struct strbuf databuf;
	int flags;		/* RS_HIPRI or 0 */
	int fildes;		/* stream whose read queue pointer is sent */
	int offset;		/* where in ctlbuf the pointer goes */
};

struct strioctl {
	int ic_cmd;		/* command */
	int ic_timout;		/* seconds; 0 default (15 s), -1 forever */
	int ic_len;		/* data length */
	char *ic_dp;		/* data */
};

struct strrecvfd {
	int fd;
	uid_t uid;
	gid_t gid;
	char fill[8];
};

struct str_mlist {
	char l_name[FMNAMESZ + 1];
};

struct str_list {
	int sl_nmods;		/* slots in sl_modlist */
	struct str_mlist *sl_modlist;
};

struct bandinfo {
	unsigned char bi_pri;
	int bi_flag;		/* FLUSHR, FLUSHW, FLUSHRW */
};

/* putmsg/getmsg flags */
#define RS_HIPRI	0x01	/* high priority message */

/* putpmsg/getpmsg flags */
#define MSG_HIPRI	0x01
#define MSG_ANY		0x02
#define MSG_BAND	0x04

/* getmsg return bits */
#define MORECTL		1
#define MOREDATA	2

/* I_SRDOPT read modes (low bits) and control-part options */
#define RNORM		0x0000	/* byte stream */
#define RMSGD		0x0001	/* message, discard the rest */
#define RMSGN		0x0002	/* message, keep the rest */
#define RFILL		0x0003	/* byte stream, fill the buffer */
#define RMODEMASK	0x0003
#define RPROTDAT	0x0004	/* control part delivered as data */
#define RPROTDIS	0x0008	/* control part discarded */
#define RPROTNORM	0x0010	/* control part: read fails EBADMSG */
#define RPROTMASK	0x001c

/* I_SWROPT write options */
#define SNDZERO		0x0001	/* zero-length write sends a message */
#define SNDPIPE		0x0002	/* SIGPIPE on write to a stream in error */
#define SNDHOLD		0x0004	/* accepted, ignored */

/* I_SETSIG events */
#define S_INPUT		0x0001	/* non-priority message arrived */
#define S_HIPRI		0x0002	/* high priority message arrived */
#define S_OUTPUT	0x0004	/* band 0 writable again */
#define S_MSG		0x0008	/* M_SIG with SIGPOLL arrived */
#define S_ERROR		0x0010	/* M_ERROR arrived */
#define S_HANGUP	0x0020	/* M_HANGUP arrived */
#define S_RDNORM	0x0040	/* band 0 message arrived */
#define S_WRNORM	S_OUTPUT
#define S_RDBAND	0x0080	/* band > 0 message arrived */
#define S_WRBAND	0x0100	/* a band > 0 writable again */
#define S_BANDURG	0x0200	/* with S_RDBAND: SIGURG instead */
#define S_ALL		0x03ff

/* I_ATMARK */
#define ANYMARK		0x01
#define LASTMARK	0x02

/* I_SERROPT */
#define RERRNORM	0x01	/* read errors persist (default) */
#define RERRNONPERSIST	0x02	/* a read error is reported once */
#define WERRNORM	0x04	/* write errors persist (default) */
#define WERRNONPERSIST	0x08	/* a write error is reported once */
#define RERRMASK	0x03
#define WERRMASK	0x0c

/* I_UNLINK all */
#define MUXID_ALL	(-1)

/* I_STR time-out meaning "forever" */
#define INFTIM		(-1)

/* Flush flags (also in <sys/stream.h>) */
#ifndef FLUSHR
#define FLUSHR		0x01
#define FLUSHW		0x02
#define FLUSHRW		0x03
#define FLUSHBAND	0x04
#endif

int isastream(int fd);
int getmsg(int fd, struct strbuf *ctlptr, struct strbuf *dataptr,
	   int *flagsp);
int getpmsg(int fd, struct strbuf *ctlptr, struct strbuf *dataptr,
	    int *bandp, int *flagsp);
int putmsg(int fd, const struct strbuf *ctlptr,
	   const struct strbuf *dataptr, int flags);
int putpmsg(int fd, const struct strbuf *ctlptr,
	    const struct strbuf *dataptr, int band, int flags);
int fattach(int fd, const char *path);
int fdetach(const char *path);

/*
 * s_pipe: a STREAMS pipe, two connected stream descriptors in fds[0] and
 * fds[1], full duplex and message preserving (SVR4 pipe(2) semantics; the
 * name is SVR3's).  0, or -1 with errno.
 */
int s_pipe(int fds[2]);

#ifdef __cplusplus
}
#endif

#endif /* _SYS_STROPTS_H */
