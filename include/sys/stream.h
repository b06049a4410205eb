/*
 * <sys/stream.h> -- SVR4.2 MP STREAMS DDI/DKI for modules and drivers.
 *
 * The names, types and semantics are those of UNIX System V Release 4.2
 * (STREAMS Programmer's Guide, DDI/DKI Reference) with the Solaris MT
 * additions (perimeter flags, qprocson/qprocsoff, freezestr, qtimeout,
 * qbufcall) and the Linux Fast-STREAMS registration calls
 * (register_strmod, register_strdev; see <sys/strconf.h>).
 *
 * Fields marked "private" belong to the executive: modules must not touch
 * them.  Everything else may be read by modules as the standard allows.
 */
#ifndef _SYS_STREAM_H
#define _SYS_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Basic DDI types                                                     */
/* ------------------------------------------------------------------ */

#ifndef _STREAMS_MAJOR_T
#define _STREAMS_MAJOR_T
typedef unsigned int major_t;
typedef unsigned int minor_t;
#endif

typedef int toid_t;			/* timeout id (0 = none) */
typedef int bufcall_id_t;		/* bufcall id (0 = none) */
typedef int timeout_id_t;

/* Credentials handed to open and close procedures. */
typedef struct cred {
	uid_t cr_uid;
	gid_t cr_gid;
	uid_t cr_ruid;
	gid_t cr_rgid;
	uid_t cr_suid;
	gid_t cr_sgid;
	unsigned int cr_ngroups;
	gid_t cr_groups[32];
} cred_t;

/* Ticks per second of lbolt, timeout() and qtimeout(). */
#ifndef HZ
#define HZ 1000
#endif

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

/* Free routine of an esballoc()ed data buffer. */
typedef struct free_rtn {
	void (*free_func)();		/* called as free_func(free_arg) */
	char *free_arg;
} frtn_t;

struct queue;

typedef struct datab {
	struct free_rtn *db_frtnp;	/* esballoc free routine, else NULL */
	unsigned char *db_base;		/* first byte of the buffer */
	unsigned char *db_lim;		/* one past the last byte */
	unsigned int db_ref;		/* message blocks referencing this; read only
					   for modules, changed atomically */
	unsigned char db_type;		/* message type, M_* */
	unsigned char db_class;		/* private: allocation class */
	unsigned short db_flag;		/* DBLK_* */
	size_t db_size;			/* db_lim - db_base */
	struct msgb *db_mblk;		/* private: mblk allocated with this dblk */
	void *db_chunk;			/* private: allocation this lives in */
} dblk_t;

#define db_freep db_frtnp

/* db_flag */
#define DBLK_REFMIN	0x01	/* not used; for source compatibility */
#define DBLK_ESB	0x02	/* private: external buffer (esballoc) */
#define DBLK_CHARGED	0x04	/* private: counted against the memory limit */

typedef struct msgb {
	struct msgb *b_next;		/* next message on the queue */
	struct msgb *b_prev;		/* previous message on the queue */
	struct msgb *b_cont;		/* next block of this message */
	unsigned char *b_rptr;		/* first unread byte */
	unsigned char *b_wptr;		/* first unwritten byte */
	struct datab *b_datap;		/* data block */
	unsigned char b_band;		/* priority band */
	unsigned char b_pad1;
	unsigned short b_flag;		/* MSG* flags */
	unsigned int b_merged;		/* private: writes coalesced into this
					   message (str_putq_append) */
	struct queue *b_queue;		/* private: queue the message is on */
	void *b_private;		/* private */
} mblk_t;

/* b_flag */
#define MSGMARK		0x0001	/* last byte of message is "marked" */
#define MSGNOLOOP	0x0002	/* do not loop back to sender */
#define MSGDELIM	0x0004	/* message is delimited */
#define MSGNOGET	0x0008	/* getq does not return message */
#define MSGATTEN	0x0010	/* attention to on read side */
#define MSGMARKNEXT	0x0020	/* private: stream head mark of next message */
#define MSGNOTMARKNEXT	0x0040	/* private */
#define MSGCROSSED	0x0100	/* M_FLUSH flags already switched at the
				   midpoint of a STREAMS pipe (pipemod) */

/* Message types.  Ordinary messages are below QPCTL, high priority ones at
 * or above it. */
#define QNORM		0x00
#define M_DATA		0x00
#define M_PROTO		0x01
#define M_MULTIDATA	0x02
#define M_BREAK		0x08
#define M_PASSFP	0x09
#define M_EVENT		0x0a
#define M_SIG		0x0b
#define M_DELAY		0x0c
#define M_CTL		0x0d
#define M_IOCTL		0x0e
#define M_SETOPTS	0x10
#define M_RSE		0x11
#define M_TRAIL		0x12
#define M_BACKWASH	0x13
#define M_NOTIFY	0x14

#define QPCTL		0x80
#define M_IOCACK	0x81
#define M_IOCNAK	0x82
#define M_PCPROTO	0x83
#define M_PCSIG		0x84
#define M_READ		0x85
#define M_FLUSH		0x86
#define M_STOP		0x87
#define M_START		0x88
#define M_HANGUP	0x89
#define M_ERROR		0x8a
#define M_COPYIN	0x8b
#define M_COPYOUT	0x8c
#define M_IOCDATA	0x8d
#define M_PCRSE		0x8e
#define M_STOPI		0x8f
#define M_STARTI	0x90
#define M_PCEVENT	0x91
#define M_UNHANGUP	0x92
#define M_HPDATA	0x93
#define M_LETSPLAY	0x94
#define M_DONTPLAY	0x95
#define M_BACKDONE	0x96
#define M_PCTTY		0x97
#define M_PCSETOPTS	0x98

/* M_FLUSH flags (first byte of the message) */
#define FLUSHR		0x01
#define FLUSHW		0x02
#define FLUSHRW		0x03
#define FLUSHBAND	0x04

/* flushq()/flushband() flag */
#define FLUSHALL	1
#define FLUSHDATA	0

/* Buffer allocation priorities (accepted, all treated alike) */
#define BPRI_LO		1
#define BPRI_MED	2
#define BPRI_HI		3
#define BPRI_FT		4

/* Largest message priority band. */
#define NBAND		256

/* ------------------------------------------------------------------ */
/* Queues                                                              */
/* ------------------------------------------------------------------ */

struct module_info {
	unsigned short mi_idnum;	/* module id */
	const char *mi_idname;		/* module name */
	long mi_minpsz;			/* minimum packet size */
	long mi_maxpsz;			/* maximum packet size (INFPSZ: any) */
	unsigned long mi_hiwat;		/* high water mark */
	unsigned long mi_lowat;		/* low water mark */
};

struct module_stat {
	long ms_pcnt;			/* put procedure calls */
	long ms_scnt;			/* service procedure calls */
	long ms_ocnt;			/* opens */
	long ms_ccnt;			/* closes */
	long ms_acnt;			/* admin calls */
	char *ms_xptr;			/* module private statistics */
	short ms_xsize;
	unsigned int ms_flags;
};

typedef int (*qi_putp_t)(struct queue *, mblk_t *);
typedef int (*qi_srvp_t)(struct queue *);
typedef int (*qi_qopen_t)(struct queue *, dev_t *, int, int, cred_t *);
typedef int (*qi_qclose_t)(struct queue *, int, cred_t *);
typedef int (*qi_qadmin_t)(void);

struct qinit {
	qi_putp_t qi_putp;		/* put procedure */
	qi_srvp_t qi_srvp;		/* service procedure */
	qi_qopen_t qi_qopen;		/* open (read side only) */
	qi_qclose_t qi_qclose;		/* close (read side only) */
	qi_qadmin_t qi_qadmin;		/* unused */
	struct module_info *qi_minfo;
	struct module_stat *qi_mstat;
};

struct streamtab {
	struct qinit *st_rdinit;
	struct qinit *st_wrinit;
	struct qinit *st_muxrinit;	/* lower read side of a multiplexer */
	struct qinit *st_muxwinit;	/* lower write side of a multiplexer */
};

/* Flow control state of one priority band (band >= 1). */
typedef struct qband {
	struct qband *qb_next;
	unsigned long qb_count;		/* bytes queued in this band */
	struct msgb *qb_first;
	struct msgb *qb_last;
	unsigned long qb_hiwat;
	unsigned long qb_lowat;
	unsigned long qb_flag;		/* QB_* */
	unsigned long qb_mblkcnt;	/* message blocks queued in this band */
} qband_t;

#define QB_FULL		0x01	/* band is considered full */
#define QB_WANTW	0x02	/* someone wants to write to the band */
#define QB_BACK		0x04	/* band was back-enabled */

struct stdata;
struct strsyncq;

/*
 * The field order is the executive's (source compatibility needs only the
 * names): read-mostly fields first, then the fields every putq/getq
 * writes on a line of their own, so a queue shared by a producer and a
 * consumer thread does not bounce the lines the producer only reads.
 */
typedef struct queue {
	/* read-mostly */
	struct qinit *q_qinfo;		/* procedures and limits */
	struct queue *q_next;		/* next queue in the flow; changed only
					   by plumbing (push/pop/link) */
	void *q_ptr;			/* module private data */
	long q_minpsz;			/* minimum packet size accepted */
	long q_maxpsz;			/* maximum packet size accepted */
	unsigned long q_hiwat;		/* high water mark */
	unsigned long q_lowat;		/* low water mark */
	struct stdata *q_stream;	/* private: stream of this queue */

	/* written by every putq and getq: q lock */
	struct msgb *q_first __attribute__((aligned(64)));
					/* first message queued */
	struct msgb *q_last;		/* last message queued */
	unsigned long q_count;		/* bytes queued in band 0 */
	unsigned long q_mblkcnt;	/* blocks queued in band 0 */
	unsigned long q_flag;		/* Q* flags */
	struct qband *q_bandp;		/* bands 1..q_nband */
	unsigned char q_nband;		/* number of qband structures */
	unsigned char q_pad1[3];
	int q_lock;			/* private: queue lock word (strlock) */

	/* ---- private to the executive ---- */
	struct queue *q_link;		/* scheduler list; run list or owner */
	struct strsyncq *q_syncq;	/* perimeter, NULL for D_MP */
	struct module_stat *q_mstat;	/* statistics, may be NULL */
	unsigned int q_sflag;		/* private state; q lock */
	unsigned int q_nodd;		/* messages queued that are not plain
					   band-0 M_DATA/M_PROTO; q lock */
	int q_onrunq;			/* on the global run list; run list lock */
	void *q_mod;			/* owning fmodsw/cdevsw entry */
	struct queue *q_nfsrv;		/* unused, kept for compatibility */
} __attribute__((aligned(64))) queue_t;

/* q_flag */
#define QENAB		0x0001	/* queue is enabled (on the run list) */
#define QWANTR		0x0002	/* someone wants to read: enable on putq */
#define QWANTW		0x0004	/* someone wants to write: back-enable */
#define QFULL		0x0008	/* queue is full */
#define QREADR		0x0010	/* this is the read queue of its pair */
#define QUSE		0x0020	/* queue is in use */
#define QNOENB		0x0040	/* do not enable from putq */
#define QUP		0x0080	/* unused */
#define QBACK		0x0100	/* queue has been back-enabled */
#define QHLIST		0x0200	/* unused */
#define QPAIR		0x0800	/* unused */
#define QPERQ		0x1000	/* per queue perimeter */
#define QPERMOD		0x2000	/* per module perimeter */
#define QMTSAFE		0x4000	/* D_MP: no perimeter */
#define QMTOUTPERIM	0x8000	/* unused */
#define QINSERVICE	0x10000	/* service procedure is running */
#define QWCLOSE		0x20000	/* queue is being closed */
#define QEND		0x40000	/* private: queue ends the stream */
#define QPROCSOFF	0x80000	/* put and service procedures are off */
#define QHEAD		0x100000 /* queue belongs to a stream head */
#define QBANDFC		0x200000 /* private: bcanput of any band answers as
				    for band 0 (a driver that keeps priority
				    data in line with the rest, in band 0) */

/* Fields for strqget()/strqset(). */
typedef enum qfields {
	QHIWAT = 0,
	QLOWAT = 1,
	QMAXPSZ = 2,
	QMINPSZ = 3,
	QCOUNT = 4,
	QFIRST = 5,
	QLAST = 6,
	QFLAG = 7,
	QSTRUIOT = 8,
	QBAD = 9
} qfields_t;

#define INFPSZ		(-1L)	/* infinite packet size */

/* ------------------------------------------------------------------ */
/* ioctl and copy messages                                             */
/* ------------------------------------------------------------------ */

struct iocblk {
	int ioc_cmd;			/* ioctl command */
	cred_t *ioc_cr;			/* caller's credentials */
	unsigned int ioc_id;		/* ioctl id */
	unsigned int ioc_flag;		/* IOC_* data model */
	size_t ioc_count;		/* bytes of data (TRANSPARENT if so) */
	int ioc_rval;			/* return value for M_IOCACK */
	int ioc_error;			/* error for M_IOCNAK */
};

#define TRANSPARENT	((size_t)-1)

#define IOC_MODELS	0x0f
#define IOC_ILP32	0x01
#define IOC_LP64	0x02
#define IOC_NATIVE	IOC_LP64
#define IOC_NONE	0x00

struct copyreq {
	int cq_cmd;			/* ioctl command (from ioc_cmd) */
	cred_t *cq_cr;
	unsigned int cq_id;		/* ioctl id (from ioc_id) */
	unsigned int cq_flag;		/* STRCANON, RECOPY */
	mblk_t *cq_private;		/* module private state */
	void *cq_addr;			/* user address to copy from/to */
	size_t cq_size;			/* bytes to copy */
};

struct copyresp {
	int cp_cmd;
	cred_t *cp_cr;
	unsigned int cp_id;
	unsigned int cp_flag;
	mblk_t *cp_private;
	void *cp_rval;			/* 0: success, else failure */
};

#define STRCANON	0x01
#define RECOPY		0x02

/* M_CTL-style wrapper used by some modules; keep for compatibility */
typedef struct iocblk *IOCP;

/* ------------------------------------------------------------------ */
/* M_SETOPTS                                                           */
/* ------------------------------------------------------------------ */

struct stroptions {
	unsigned long so_flags;		/* which options are set */
	short so_readopt;		/* read option */
	unsigned short so_wroff;	/* write offset */
	long so_minpsz;			/* minimum read packet size */
	long so_maxpsz;			/* maximum read packet size */
	unsigned long so_hiwat;		/* read queue high water mark */
	unsigned long so_lowat;		/* read queue low water mark */
	unsigned char so_band;		/* band for water marks */
	unsigned short so_erropt;	/* error option */
	unsigned short so_copyopt;
	unsigned short so_tail;
};

#define SO_ALL		0x003f
#define SO_READOPT	0x0001
#define SO_WROFF	0x0002
#define SO_MINPSZ	0x0004
#define SO_MAXPSZ	0x0008
#define SO_HIWAT	0x0010
#define SO_LOWAT	0x0020
#define SO_MREADON	0x0040
#define SO_MREADOFF	0x0080
#define SO_NDELON	0x0100
#define SO_NDELOFF	0x0200
#define SO_ISTTY	0x0400
#define SO_ISNTTY	0x0800
#define SO_TOSTOP	0x1000
#define SO_TONSTOP	0x2000
#define SO_BAND		0x4000
#define SO_DELIM	0x8000
#define SO_NODELIM	0x010000
#define SO_STRHOLD	0x020000
#define SO_ERROPT	0x040000
#define SO_COPYOPT	0x080000
#define SO_MAXBLK	0x100000
#define SO_TAIL		0x200000

/* M_ERROR: no error on this side */
#define NOERROR		((unsigned char)-1)

/* ------------------------------------------------------------------ */
/* Open and close                                                      */
/* ------------------------------------------------------------------ */

/* sflag passed to open procedures */
#define DRVOPEN		0x00	/* ordinary driver open */
#define MODOPEN		0x01	/* module push */
#define CLONEOPEN	0x02	/* clone open: driver chooses the minor */

/* Driver and module flags (d_flag, f_flag): concurrency and kind. */
#define D_NEW		0x0000	/* SVR4 style (always) */
#define D_OLD		0x0001	/* not supported */
#define D_MP		0x0002	/* MT safe: no perimeter */
#define D_MTPERMOD	0x0004	/* one thread at a time per module */
#define D_MTQPAIR	0x0008	/* one thread at a time per queue pair */
#define D_MTPERQ	0x0010	/* one thread at a time per queue */
#define D_MTOUTPERIM	0x0020	/* accepted, treated as D_MTPERMOD */
#define D_MTOCEXCL	0x0040	/* accepted (open/close are exclusive anyway) */
#define D_MTPUTSHARED	0x0080	/* accepted, ignored */
#define D_MTSVCSHARED	0x0100	/* accepted, ignored */
#define D_MTINNER_MOD	0x0200	/* accepted, ignored */
#define D_MTOUTER_MOD	0x0400	/* accepted, ignored */
#define D_HOTPLUG	0x0800
#define D_CLONE		0x1000	/* every open is a clone open */
#define D_MODULE	0x2000	/* private: entry is a module */
#define D_UP		0x4000	/* unused */
#define D_SYNCSTR	0x8000	/* accepted, ignored */
#define D_64BIT		0x10000
#define D_MTPERQ_MASK	(D_MP | D_MTPERMOD | D_MTQPAIR | D_MTPERQ | D_MTOUTPERIM)

/* ------------------------------------------------------------------ */
/* Linkage for multiplexing drivers                                    */
/* ------------------------------------------------------------------ */

struct linkblk {
	queue_t *l_qtop;		/* upper write queue of the multiplexer */
	queue_t *l_qbot;		/* lower write queue (of the linked stream) */
	int l_index;			/* unique link id */
};

/* ------------------------------------------------------------------ */
/* Message utilities                                                   */
/* ------------------------------------------------------------------ */

mblk_t *allocb(size_t size, unsigned int pri);
mblk_t *esballoc(unsigned char *base, size_t size, unsigned int pri,
		 frtn_t *frtn);
mblk_t *desballoc(unsigned char *base, size_t size, unsigned int pri,
		  frtn_t *frtn);
int testb(size_t size, unsigned int pri);
void freeb(mblk_t *bp);
void freemsg(mblk_t *mp);
mblk_t *dupb(mblk_t *bp);
mblk_t *dupmsg(mblk_t *mp);
mblk_t *copyb(mblk_t *bp);
mblk_t *copymsg(mblk_t *mp);
void linkb(mblk_t *mp, mblk_t *bp);
mblk_t *unlinkb(mblk_t *mp);
mblk_t *rmvb(mblk_t *mp, mblk_t *bp);
int adjmsg(mblk_t *mp, ssize_t len);
size_t msgdsize(const mblk_t *mp);
size_t msgsize(const mblk_t *mp);
size_t xmsgsize(const mblk_t *mp);
mblk_t *msgpullup(mblk_t *mp, ssize_t len);
int pullupmsg(mblk_t *mp, ssize_t len);
mblk_t *linkmsg(mblk_t *mp, mblk_t *bp);
mblk_t *allocb_tmpl(size_t size, const mblk_t *tmpl);
mblk_t *mkiocb(unsigned int cmd);
void merror(queue_t *q, mblk_t *mp, int error);
void mioc2ack(mblk_t *mp, mblk_t *dp, size_t count, int rval);
void miocack(queue_t *q, mblk_t *mp, int count, int rval);
void miocnak(queue_t *q, mblk_t *mp, int count, int error);
mblk_t *mexchange(queue_t *q, mblk_t *mp, size_t size, int type,
		  int32_t primtype);

/* Copy-in/copy-out helpers for transparent ioctls (Solaris mcopyin). */
void mcopyin(mblk_t *mp, void *priv, size_t size, void *useraddr);
void mcopyout(mblk_t *mp, void *priv, size_t size, void *useraddr,
	      mblk_t *dp);

/* Callbacks are unprototyped as in SVR4: called as func(arg). */
bufcall_id_t bufcall(size_t size, unsigned int pri, void (*func)(),
		     long arg);
bufcall_id_t esbbcall(unsigned int pri, void (*func)(), long arg);
void unbufcall(bufcall_id_t id);

/* ------------------------------------------------------------------ */
/* Queue utilities                                                     */
/* ------------------------------------------------------------------ */

mblk_t *getq(queue_t *q);
int putq(queue_t *q, mblk_t *mp);
int putbq(queue_t *q, mblk_t *mp);
int insq(queue_t *q, mblk_t *emp, mblk_t *mp);
void rmvq(queue_t *q, mblk_t *mp);
void flushq(queue_t *q, int flag);
void flushband(queue_t *q, unsigned char band, int flag);
int qsize(queue_t *q);
int canput(queue_t *q);
int bcanput(queue_t *q, unsigned char band);
int canputnext(queue_t *q);
int bcanputnext(queue_t *q, unsigned char band);
void qenable(queue_t *q);
void enableok(queue_t *q);
void noenable(queue_t *q);
queue_t *backq(queue_t *q);
int strqget(queue_t *q, qfields_t what, unsigned char pri, long *valp);
int strqset(queue_t *q, qfields_t what, unsigned char pri, long val);
void qprocson(queue_t *q);
void qprocsoff(queue_t *q);
void freezestr(queue_t *q);
void unfreezestr(queue_t *q);
int qreply(queue_t *q, mblk_t *mp);
int put(queue_t *q, mblk_t *mp);
int putnext(queue_t *q, mblk_t *mp);
int putctl(queue_t *q, int type);
int putctl1(queue_t *q, int type, int param);
int putctl2(queue_t *q, int type, int param1, int param2);
int putnextctl(queue_t *q, int type);
int putnextctl1(queue_t *q, int type, int param);
int putnextctl2(queue_t *q, int type, int param1, int param2);
void qwriter(queue_t *q, mblk_t *mp, void (*func)(queue_t *, mblk_t *),
	     int perimeter);
int SAMESTR(queue_t *q);
queue_t *OTHERQ(queue_t *q);
queue_t *RD(queue_t *q);
queue_t *WR(queue_t *q);
int qcountstrm(queue_t *q);

/* qwriter perimeter argument */
#define PERIM_INNER	1
#define PERIM_OUTER	2

/* ------------------------------------------------------------------ */
/* Timers                                                              */
/* ------------------------------------------------------------------ */

/* timeout: func(arg) after ticks (HZ per second); returns 0 on failure.
 * untimeout: cancel; returns ticks that were left, -1 if it had fired or
 * was unknown.  Waits for a running callback unless called from it. */
toid_t timeout(void (*func)(), void *arg, long ticks);
long untimeout(toid_t id);
/* q variants run the callback inside q's perimeter. */
toid_t qtimeout(queue_t *q, void (*func)(), void *arg, long ticks);
long quntimeout(queue_t *q, toid_t id);
bufcall_id_t qbufcall(queue_t *q, size_t size, unsigned int pri,
		      void (*func)(), void *arg);
void qunbufcall(queue_t *q, bufcall_id_t id);

/* ------------------------------------------------------------------ */
/* Inline conveniences (SVR4 macros)                                   */
/* ------------------------------------------------------------------ */

/* datamsg: M_DATA, M_PROTO, M_PCPROTO and M_DELAY carry data. */
#define datamsg(type) \
	((type) == M_DATA || (type) == M_PROTO || (type) == M_PCPROTO || \
	 (type) == M_DELAY)

#define pcmsg(type)	((type) >= QPCTL)

/* Length of one block. */
#define MBLKL(mp)	((size_t)((mp)->b_wptr - (mp)->b_rptr))
#define MBLKSIZE(mp)	((size_t)((mp)->b_datap->db_lim - (mp)->b_datap->db_base))
#define MBLKHEAD(mp)	((size_t)((mp)->b_rptr - (mp)->b_datap->db_base))
#define MBLKTAIL(mp)	((size_t)((mp)->b_datap->db_lim - (mp)->b_wptr))
#define DB_TYPE(mp)	((mp)->b_datap->db_type)
#define DB_BASE(mp)	((mp)->b_datap->db_base)
#define DB_LIM(mp)	((mp)->b_datap->db_lim)
#define DB_REF(mp)	((mp)->b_datap->db_ref)

#ifdef __cplusplus
}
#endif

#include <sys/strconf.h>
#include <sys/ddi.h>

#endif /* _SYS_STREAM_H */
