/*
 * <xti.h> -- the X/Open Transport Interface (XNS Issue 5.2).
 * Link with -lxti (pkg-config xti).  Each function returns -1 with
 * t_errno set on failure (and errno with TSYSERR).
 */
#ifndef _XTI_H
#define _XTI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>	/* _SC_T_IOV_MAX */

#ifdef __cplusplus
extern "C" {
#endif

#ifndef _T_SCALAR_T
#define _T_SCALAR_T
typedef int32_t t_scalar_t;
typedef uint32_t t_uscalar_t;
#endif

/* t_errno: per thread */
extern int *_t_errno(void);
#define t_errno (*(_t_errno()))
extern const char *t_errlist[];
extern int t_nerr;

/* t_errno values */
#define TBADADDR	1	/* incorrect address format */
#define TBADOPT		2	/* incorrect option format */
#define TACCES		3	/* incorrect permissions */
#define TBADF		4	/* illegal transport fd */
#define TNOADDR		5	/* couldn't allocate address */
#define TOUTSTATE	6	/* out of state */
#define TBADSEQ		7	/* bad call sequence number */
#define TSYSERR		8	/* system error (see errno) */
#define TLOOK		9	/* event requires attention */
#define TBADDATA	10	/* illegal amount of data */
#define TBUFOVFLW	11	/* buffer not large enough */
#define TFLOW		12	/* flow control */
#define TNODATA		13	/* no data */
#define TNODIS		14	/* no disconnect indication */
#define TNOUDERR	15	/* no unitdata error indication */
#define TBADFLAG	16	/* bad flags */
#define TNOREL		17	/* no orderly release indication */
#define TNOTSUPPORT	18	/* primitive or type not supported */
#define TSTATECHNG	19	/* state is in process of changing */
#define TNOSTRUCTYPE	20	/* unsupported struct type (t_alloc) */
#define TBADNAME	21	/* invalid transport provider name */
#define TBADQLEN	22	/* qlen is zero */
#define TADDRBUSY	23	/* address in use */
#define TINDOUT		24	/* outstanding connection indications */
#define TPROVMISMATCH	25	/* transport provider mismatch */
#define TRESQLEN	26	/* resfd in t_accept has qlen > 0 */
#define TRESADDR	27	/* resfd not bound to same address */
#define TQFULL		28	/* incoming connection queue full */
#define TPROTO		29	/* XTI protocol error */

/* t_look events */
#define T_LISTEN	0x0001	/* connection indication received */
#define T_CONNECT	0x0002	/* connection confirmation received */
#define T_DATA		0x0004	/* normal data received */
#define T_EXDATA	0x0008	/* expedited data received */
#define T_DISCONNECT	0x0010	/* disconnection received */
#define T_UDERR		0x0040	/* datagram error indication */
#define T_ORDREL	0x0080	/* orderly release indication */
#define T_GODATA	0x0100	/* sending normal data possible again */
#define T_GOEXDATA	0x0200	/* sending expedited data possible again */

/* flags */
#define T_MORE		0x001	/* more data */
#define T_EXPEDITED	0x002	/* expedited data */
#define T_PUSH		0x004	/* send data immediately */
#define T_NEGOTIATE	0x004	/* set options */
#define T_CHECK		0x008	/* check options */
#define T_DEFAULT	0x010	/* get default options */
#define T_SUCCESS	0x020	/* successful */
#define T_FAILURE	0x040	/* failure */
#define T_CURRENT	0x080	/* get current options */
#define T_PARTSUCCESS	0x100	/* partial success */
#define T_READONLY	0x200	/* read-only */
#define T_NOTSUPPORT	0x400	/* not supported */

/* t_info flags */
#define T_SENDZERO	0x001	/* zero-length TSDUs may be sent */
#define T_ORDRELDATA	0x002	/* orderly release with data */

/* service types */
#define T_COTS		1
#define T_COTS_ORD	2
#define T_CLTS		3

/* t_alloc structure types */
#define T_BIND		1
#define T_OPTMGMT	2
#define T_CALL		3
#define T_DIS		4
#define T_UNITDATA	5
#define T_UDERROR	6
#define T_INFO		7

/* t_alloc fields */
#define T_ADDR		0x01
#define T_OPT		0x02
#define T_UDATA		0x04
#define T_ALL		0xffff

/* t_getstate states */
#define T_UNBND		1
#define T_IDLE		2
#define T_OUTCON	3
#define T_INCON		4
#define T_DATAXFER	5
#define T_OUTREL	6
#define T_INREL		7

/* option values */
#define T_YES		1
#define T_NO		0
#define T_UNUSED	(-1)
#define T_NULL		0
#define T_ABSREQ	0x8000
#define T_INFINITE	(-1)
#define T_INVALID	(-2)
#define T_UNSPEC	(~0 - 2)	/* unspecified value (uscalar) */
#define T_ALLOPT	0

/* XTI_GENERIC level options */
#define XTI_GENERIC	0xffff
#define XTI_DEBUG	0x0001
#define XTI_LINGER	0x0080
#define XTI_RCVBUF	0x1002
#define XTI_RCVLOWAT	0x1004
#define XTI_SNDBUF	0x1001
#define XTI_SNDLOWAT	0x1003

struct t_linger {
	t_scalar_t l_onoff;
	t_scalar_t l_linger;
};

struct netbuf {
	unsigned int maxlen;
	unsigned int len;
	void *buf;
};

struct t_info {
	t_scalar_t addr;	/* max size of an address */
	t_scalar_t options;	/* max bytes of options */
	t_scalar_t tsdu;	/* max size of a TSDU */
	t_scalar_t etsdu;	/* max size of an ETSDU */
	t_scalar_t connect;	/* max data on connect */
	t_scalar_t discon;	/* max data on disconnect */
	t_scalar_t servtype;	/* T_COTS, T_COTS_ORD, T_CLTS */
	t_scalar_t flags;	/* T_SENDZERO, T_ORDRELDATA */
};

struct t_opthdr {
	t_uscalar_t len;	/* header + value */
	t_uscalar_t level;
	t_uscalar_t name;
	t_uscalar_t status;
};

struct t_bind {
	struct netbuf addr;
	unsigned int qlen;
};

struct t_optmgmt {
	struct netbuf opt;
	t_scalar_t flags;
};

struct t_discon {
	struct netbuf udata;
	int reason;
	int sequence;
};

struct t_call {
	struct netbuf addr;
	struct netbuf opt;
	struct netbuf udata;
	int sequence;
};

struct t_unitdata {
	struct netbuf addr;
	struct netbuf opt;
	struct netbuf udata;
};

struct t_uderr {
	struct netbuf addr;
	struct netbuf opt;
	t_scalar_t error;
};

struct t_iovec {
	void *iov_base;
	size_t iov_len;
};

#define T_IOV_MAX	16

/* Walking option buffers */
#define _T_ALIGN_SZ	(sizeof(t_uscalar_t))
#define T_ALIGN(p)	(((uintptr_t)(p) + _T_ALIGN_SZ - 1) & ~(_T_ALIGN_SZ - 1))
#define T_OPT_DATA(tohp) ((unsigned char *)((char *)(tohp) + sizeof(struct t_opthdr)))
#define T_OPT_FIRSTHDR(nbp) \
	((((char *)(nbp)->buf + sizeof(struct t_opthdr)) <= \
	  ((char *)(nbp)->buf + (nbp)->len)) ? \
	 (struct t_opthdr *)(nbp)->buf : (struct t_opthdr *)0)
#define _T_NEXTHDR(pbuf, buflen, popt) \
	((((char *)T_ALIGN((char *)(popt) + (popt)->len) + \
	   sizeof(struct t_opthdr)) <= ((char *)(pbuf) + (buflen))) ? \
	 (struct t_opthdr *)T_ALIGN((char *)(popt) + (popt)->len) : \
	 (struct t_opthdr *)0)
#define T_OPT_NEXTHDR(nbp, tohp) _T_NEXTHDR((nbp)->buf, (nbp)->len, (tohp))

int t_accept(int fd, int resfd, const struct t_call *call);
void *t_alloc(int fd, int struct_type, int fields);
int t_bind(int fd, const struct t_bind *req, struct t_bind *ret);
int t_close(int fd);
int t_connect(int fd, const struct t_call *sndcall, struct t_call *rcvcall);
int t_error(const char *errmsg);
int t_free(void *ptr, int struct_type);
int t_getinfo(int fd, struct t_info *info);
int t_getprotaddr(int fd, struct t_bind *boundaddr, struct t_bind *peeraddr);
int t_getstate(int fd);
int t_listen(int fd, struct t_call *call);
int t_look(int fd);
int t_open(const char *name, int oflag, struct t_info *info);
int t_optmgmt(int fd, const struct t_optmgmt *req, struct t_optmgmt *ret);
int t_rcv(int fd, void *buf, unsigned int nbytes, int *flags);
int t_rcvconnect(int fd, struct t_call *call);
int t_rcvdis(int fd, struct t_discon *discon);
int t_rcvrel(int fd);
int t_rcvreldata(int fd, struct t_discon *discon);
int t_rcvudata(int fd, struct t_unitdata *unitdata, int *flags);
int t_rcvuderr(int fd, struct t_uderr *uderr);
int t_rcvv(int fd, struct t_iovec *iov, unsigned int iovcount, int *flags);
int t_rcvvudata(int fd, struct t_unitdata *unitdata, struct t_iovec *iov,
		unsigned int iovcount, int *flags);
int t_snd(int fd, void *buf, unsigned int nbytes, int flags);
int t_snddis(int fd, const struct t_call *call);
int t_sndrel(int fd);
int t_sndreldata(int fd, struct t_discon *discon);
int t_sndudata(int fd, const struct t_unitdata *unitdata);
int t_sndv(int fd, const struct t_iovec *iov, unsigned int iovcount,
	   int flags);
int t_sndvudata(int fd, struct t_unitdata *unitdata, struct t_iovec *iov,
		unsigned int iovcount);
const char *t_strerror(int errnum);
int t_sync(int fd);
int t_sysconf(int name);
int t_unbind(int fd);

/* t_sysconf names: glibc's <unistd.h> already names _SC_T_IOV_MAX
 * (an enumerator, included above); use its value so either header may
 * come first */
#ifndef _SC_T_IOV_MAX
#define _SC_T_IOV_MAX	1
#endif

#ifdef __cplusplus
}
#endif

#endif /* _XTI_H */
