/*
 * xti_impl.h -- the XTI library's private interface (libxti).
 *
 * How libxti works
 * ----------------
 * An endpoint is a stream descriptor with the timod module pushed.  The
 * library keeps, per descriptor number, a struct xti_ep: the XTI state,
 * the provider's sizes (T_info_ack), the bound qlen, the sequence numbers
 * of the connection indications the user has received but not answered,
 * and the messages it took off the stream without delivering them yet
 * (the "held" list: a T_DISCON_IND met while waiting for something else,
 * reported by TLOOK and t_look(), consumed by t_rcvdis() and friends).
 *
 * Requests that the provider acknowledges synchronously (bind, unbind,
 * options, info, addresses, capability, sync) go through timod's TI_*
 * ioctls (xti_ioctl).  The others are putmsg/getmsg of TPI primitives:
 * T_CONN_REQ, T_CONN_RES and T_DISCON_REQ are acknowledged by a T_OK_ACK
 * or T_ERROR_ACK read with getmsg (xti_ack_*), data and indications flow
 * as they come.
 *
 * Every answer from the provider is decoded by the functions of
 * xti_decode.c, which take (ctl, len) and validate every length and
 * offset before anything is read; garbage gives TPROTO (errno EPROTO).
 *
 * Locking.  The endpoint table maps descriptor numbers to endpoints
 * without locks on lookup (xti_get): endpoints are reference counted and
 * their memory is recycled, never freed, so a racing lookup of a stale
 * pointer is harmless (it checks the table again after taking its
 * reference).  ep_lock protects an endpoint's fields; it is never held
 * across a call that may sleep (getmsg, putmsg, ioctl, poll).  Threads
 * sleeping for an endpoint's state wait on ep_cv with ep_lock.
 *
 * The data calls (t_snd, t_rcv, t_sndudata, t_rcvudata) take no lock
 * and no reference on their common path.  They find their endpoint
 * through the thread's cache (xti_get_cached): each thread keeps a
 * reference to the last endpoint it used, so calls on the same
 * descriptor take and drop none; a miss (another descriptor, or the
 * number now names another endpoint) swaps it (xti_ep.c).  Their start
 * (xti_begin_snd, xti_begin_rd) reads what it checks and what the call
 * needs without ep_lock: the state and the provider's sizes (written
 * under the lock with atomic stores: xti_set_state, xti_set_info) and
 * whether anything is held (ep_held, stored atomically: xti_held_any).
 * Only when something is held does a sender take the lock to see what;
 * a reader with something held gives its turn back and looks under the
 * lock.  A reader takes its read turn with one atomic increment of
 * ep_rd_active (see below for the ack waiter), and goes the locked way
 * when an ack waiter reads or the checks fail.  The state read may be
 * one another thread is changing at that moment: the lock would give
 * the same a moment later, and a reader that meets the ack of the
 * request changing it checks again (the ev of its xti_rd).  What they
 * write after the stream call is written only when it changes, and the
 * fields they read then are atomic: ep_ucont and ep_cont (written with
 * atomic stores, read without the lock), ep_sndacc (atomic stores under
 * the lock; read without it), ep_rd_active (atomic: readers enter and
 * leave without the lock) and ep_req_busy (atomic stores under the
 * lock; a leaving reader reads it to know whether a request's waiter
 * may wait for it).
 *
 * Readers and acknowledgements.  Any thread reading the stream with
 * getmsg(0) (t_rcv, t_listen, ...) may take the T_OK_ACK another thread
 * waits for; it hands it over (ep_ack).  A thread waiting for an ack
 * reads with getmsg(RS_HIPRI) only while no other library thread reads
 * the stream (ep_rd_active == 0), and readers do not start while it
 * does (ep_ack_reading), so an ack is never left unread while its
 * waiter sleeps.  Without a lock on the readers' side this is Dekker's
 * exclusion: a reader increments ep_rd_active, then loads
 * ep_ack_reading; the waiter (under ep_lock) sets ep_ack_reading, then
 * loads ep_rd_active; all four sequentially consistent, so at least one
 * sees the other and stands back (xti_io.c).  One acknowledged request
 * is outstanding per endpoint at a time (ep_req_busy): the stream head
 * keeps only one high priority message.
 *
 * Closing.  libstreams calls xti_fd_closed() (sth_set_closed_hook) before
 * a stream descriptor number is given back to the kernel, so an endpoint
 * never outlives its descriptor: a new endpoint that reuses the number
 * starts afresh (a thread's cache that still holds the old one sees
 * that the table names another and lets it go).  A dup of an endpoint
 * is not an endpoint until t_sync() is called on it.  The library is
 * per process: exec() does not carry streams (they live in the
 * process), so nothing survives it.
 */
#ifndef STREAMS_XTI_IMPL_H
#define STREAMS_XTI_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/tihdr.h>
#include <sys/timod.h>
#include <sys/strexec.h>
#include <xti.h>

/* T_UNINIT: no endpoint (the library's own state 0) */
#define T_UNINIT	0
#define XTI_NSTATES	8	/* T_UNINIT .. T_INREL */

/* ---- events of the XTI state tables (xti_state.c) ---- */
enum xti_event {
	EV_OPENED, EV_BIND, EV_OPTMGMT, EV_UNBIND, EV_CLOSED,
	EV_CONNECT1, EV_CONNECT2, EV_RCVCONNECT, EV_LISTEN,
	EV_ACCEPT1, EV_ACCEPT2, EV_ACCEPT3, EV_SND, EV_RCV,
	EV_SNDDIS1, EV_SNDDIS2, EV_RCVDIS1, EV_RCVDIS2, EV_RCVDIS3,
	EV_SNDREL, EV_RCVREL, EV_PASSCONN,
	EV_SNDUDATA, EV_RCVUDATA, EV_RCVUDERR,
	EV_COUNT
};

/* The next state after event ev in state st, or -1 if not allowed. */
int xti_next_state(int ev, int st);
static inline bool xti_ev_ok(int ev, int st)
{
	return xti_next_state(ev, st) >= 0;
}

/* ---- a message the library holds ---- */
struct xti_msg {
	struct xti_msg *m_next;
	t_scalar_t m_prim;		/* PRIM_type; -1: data without control */
	int m_clen;			/* control bytes */
	int m_dlen;			/* data bytes (from m_doff) */
	int m_doff;			/* data already delivered */
	int m_band;
	char *m_ctl;			/* m_clen bytes */
	char *m_dat;			/* m_dlen bytes */
};

/* ep_flags */
#define EPF_FLOW	0x01	/* TFLOW seen on normal data: T_GODATA */
#define EPF_EXFLOW	0x02	/* ... on expedited data: T_GOEXDATA */
#define EPF_DEAD	0x08	/* closed: no longer in the table */

/* One transport endpoint. */
struct xti_ep {
	int ep_refs;			/* atomic: table + calls in progress */
	int ep_fd;			/* descriptor; set before publishing */
	struct xti_ep *ep_free;		/* recycling list; xti_tab_lock */
	pthread_mutex_t ep_lock;	/* everything below */
	pthread_cond_t ep_cv;		/* readers, ack waiters */

	int ep_state;			/* T_UNBND .. T_INREL (atomic stores
					   under the lock: xti_set_state) */
	struct T_info_ack ep_info;	/* provider's sizes, last known
					   (each field stored atomically
					   under the lock: xti_set_info) */
	unsigned int ep_qlen;		/* qlen of the bind */
	int ep_ocnt;			/* outstanding connection indications */
	int *ep_seq;			/* their sequence numbers */
	int ep_nseq, ep_seqcap;		/* known numbers; room */
	bool ep_sequnk;			/* after t_sync: numbers unknown */
	unsigned int ep_flags;		/* EPF_* */
	struct xti_msg *ep_held;	/* taken, not yet delivered (FIFO);
					   stored atomically (and each
					   m_next) so that xti_held_any
					   needs no lock */
	struct xti_msg **ep_heldtail;
	int ep_cont[2];			/* atomic: rest of a T_DATA_IND (0)
					   or T_EXDATA_IND (1) at the head:
					   its MORE_flag, or -1 for none */
	bool ep_ucont;			/* atomic: rest of a T_UNITDATA_IND
					   at the head */
	uint64_t ep_sndacc[2];		/* bytes of the TSDU/ETSDU being sent
					   (stored atomically) */

	int ep_rd_active;		/* atomic: threads reading with
					   getmsg(0), or entering (seq_cst,
					   with ep_ack_reading) */
	bool ep_ack_reading;		/* a thread reads with RS_HIPRI
					   (seq_cst stores under the lock;
					   entering readers load it) */
	bool ep_req_busy;		/* an acknowledged request is out
					   (stored atomically) */
	bool ep_ack_have;		/* ep_ack holds an ack taken by a reader */
	char ep_ack[64];
	int ep_acklen;
};

/* ep_state and ep_info are written under ep_lock with atomic stores,
 * so that the data calls' entries may read them without it
 * (xti_begin_err, xti_begin_snd): a state or sizes some other thread is
 * changing at that moment are read before or after the change, each
 * field of ep_info on its own. */
static inline void xti_set_state(struct xti_ep *ep, int st)
{
	__atomic_store_n(&ep->ep_state, st, __ATOMIC_RELAXED);
}
void xti_set_info(struct xti_ep *ep, const struct T_info_ack *ia);
/* What a send checks of ep_info (six of its eleven fields). */
struct xti_sizes {
	t_scalar_t tsdu, etsdu, tidu, addr, opt, pflag;
};
/* Is any message held?  (Without ep_lock: only a hint that the caller
 * must look under the lock.) */
static inline bool xti_held_any(const struct xti_ep *ep)
{
	return __atomic_load_n(&ep->ep_held, __ATOMIC_RELAXED) != NULL;
}

/* The service types a call needs (xti_begin). */
#define NEED_ANY	0
#define NEED_CONN	1	/* connection mode: not T_CLTS */
#define NEED_CLTS	2
#define NEED_ORD	3	/* T_COTS_ORD */
/* Start a call: the endpoint of fd (referenced, not locked) when its
 * service type fits and event ev1 or ev2 (-1: none) is allowed in its
 * state; else NULL with t_errno TBADF, TNOTSUPPORT or TOUTSTATE. */
struct xti_ep *xti_begin(int fd, int need, int ev1, int ev2);
/* The same, but a successful start returns with ep_lock held. */
struct xti_ep *xti_begin_locked(int fd, int need, int ev1, int ev2);
/* The start of t_snd and t_sndudata (event ev): as xti_begin, the
 * endpoint through the thread's cache (xti_get_cached: release with
 * xti_put_cached), and what the send needs of it: the provider's sizes
 * in *sz, the first held event in mask in *held (0: none).  ep_lock is
 * taken only when something is held. */
struct xti_ep *xti_begin_snd(int fd, int need, int ev, int mask,
			     struct xti_sizes *sz, int *held);
/* xti_begin's checks (with or without ep_lock): 0 or the t_errno to
 * fail with. */
int xti_begin_err(const struct xti_ep *ep, int need, int ev1, int ev2);

/* ---- the endpoint table (xti_ep.c) ---- */
/* The endpoint of fd, with a reference; NULL with t_errno TBADF. */
struct xti_ep *xti_get(int fd);
void xti_put(struct xti_ep *ep);
/* The same for the data calls, through the thread's cache of the last
 * endpoint it used, which holds a reference: a thread calling again on
 * the same descriptor takes and drops none (xti_ep.c).  A call releases
 * the endpoint with xti_put_cached, not xti_put. */
struct xti_ep *xti_get_cached(int fd);
void xti_put_cached(struct xti_ep *ep);
/* A fresh endpoint for fd with the provider's sizes ia, in state with
 * qlen (in T_INCON: indications outstanding, their numbers unknown), set
 * up before it is installed in the table in place of any other (a call
 * racing with t_open on the number never sees it half made); referenced
 * once for the caller.  NULL: ENOMEM. */
struct xti_ep *xti_ep_new(int fd, const struct T_info_ack *ia, int state,
			  unsigned int qlen);
/* Take ep out of the table (t_close); drops the table's reference. */
void xti_ep_remove(struct xti_ep *ep);
/* Called by libstreams when fd stops naming a stream. */
void xti_fd_closed(int fd);
void xti_init(void);

/* held messages (ep_lock held) */
void xti_held_push(struct xti_ep *ep, struct xti_msg *m);
void xti_held_front(struct xti_ep *ep, struct xti_msg *m);	/* first */
struct xti_msg *xti_held_pop(struct xti_ep *ep);
struct xti_msg *xti_held_take(struct xti_ep *ep, t_scalar_t prim);
void xti_held_flush(struct xti_ep *ep, bool keep_discon);
void xti_msg_free(struct xti_msg *m);
/* outstanding sequence numbers (ep_lock held) */
int xti_seq_add(struct xti_ep *ep, int seq);	/* 0 or ENOMEM */
bool xti_seq_has(struct xti_ep *ep, int seq);
void xti_seq_del(struct xti_ep *ep, int seq);
void xti_seq_clear(struct xti_ep *ep);
/* Forget data-transfer leftovers when a connection ends. */
void xti_conn_reset(struct xti_ep *ep);

/* ---- errors (xti_errors.c) ---- */
static inline int xti_err(int terr)
{
	t_errno = terr;
	return -1;
}
int xti_syserr(int e);			/* TSYSERR with errno e; -1 */
int xti_proto(void);			/* TPROTO, errno EPROTO; -1 */
/* The error a T_ERROR_ACK (or a timod ioctl's positive return) carries:
 * t_errno (and errno for TSYSERR) set, -1. */
int xti_tpi_err(int tli, int unixerr);

/* ---- application memory: EFAULT instead of a crash ---- */
int xti_uin(void *dst, const void *usrc, size_t n);	/* 0 or EFAULT */
int xti_uout(void *udst, const void *src, size_t n);	/* 0 or EFAULT */

/* ---- decoding what the provider sends (xti_decode.c) ----
 * Each takes the control part (ctl, len) as received and fills the
 * decoded form; 0 when valid, -1 when not (the caller answers TPROTO).
 * Regions point into ctl. */
struct xti_region {
	const char *p;
	size_t len;
};

int xti_dec_prim(const void *ctl, int len, t_scalar_t *prim);
int xti_dec_info_ack(const void *ctl, int len, struct T_info_ack *info);
struct xti_dec_ack {
	t_scalar_t prim;		/* T_OK_ACK or T_ERROR_ACK */
	t_scalar_t req;			/* CORRECT_prim / ERROR_prim */
	int tli, unixerr;		/* for T_ERROR_ACK */
};
int xti_dec_ok_ack(const void *ctl, int len, struct xti_dec_ack *a);
int xti_dec_bind_ack(const void *ctl, int len, struct xti_region *addr,
		     unsigned int *qlen);
int xti_dec_optmgmt_ack(const void *ctl, int len, struct xti_region *opt,
			t_scalar_t *flags);
int xti_dec_addr_ack(const void *ctl, int len, struct xti_region *loc,
		     struct xti_region *rem);
int xti_dec_capability_ack(const void *ctl, int len,
			   struct T_capability_ack *ack);
int xti_dec_sync_ack(const void *buf, int len, struct ti_sync_ack *ack);
struct xti_dec_conn {
	struct xti_region addr, opt;
	int seq;			/* T_CONN_IND only */
};
int xti_dec_conn_ind(const void *ctl, int len, struct xti_dec_conn *c);
int xti_dec_conn_con(const void *ctl, int len, struct xti_dec_conn *c);
int xti_dec_discon_ind(const void *ctl, int len, int *reason, int *seq);
struct xti_dec_data {
	bool exp;			/* expedited */
	bool more;			/* MORE_flag */
	struct xti_region opt;		/* T_OPTDATA_IND */
};
int xti_dec_data_ind(const void *ctl, int len, struct xti_dec_data *d);
struct xti_dec_udata {
	struct xti_region addr, opt;
	t_scalar_t error;		/* T_UDERROR_IND */
};
int xti_dec_unitdata_ind(const void *ctl, int len, struct xti_dec_udata *u);
int xti_dec_uderror_ind(const void *ctl, int len, struct xti_dec_udata *u);
/* The t_look() event a message with this control part means (0 for
 * acks), -1 for garbage. */
int xti_dec_event(const void *ctl, int len, bool exp_cont);

/* ---- talking to the provider (xti_io.c) ---- */
/* I_STR cmd: the request is len bytes of buf, which has room for cap
 * bytes of reply.  Reply length, or -1 with t_errno set (a T_ERROR_ACK's
 * error, or TSYSERR).  Retries EINTR when retry is set. */
int xti_ioctl(int fd, int cmd, void *buf, int len, int cap, bool retry);
/* TI_SYNC / TI_GETINFO into ep (ep_lock not held). */
int xti_sync_info(struct xti_ep *ep, struct ti_sync_ack *sa);
int xti_sync_fd(int fd, struct ti_sync_ack *sa);	/* before an ep */
/* the same, briefly: 3 tries of 1 s at most (a call that failed looks) */
int xti_sync_brief(int fd, struct ti_sync_ack *sa);
int xti_getinfo(int fd, struct T_info_ack *ia);
/* The XTI state matching provider state ts (with the head's first
 * message peeked for the usual races); -1 for a transient state. */
int xti_state_from_tpi(int fd, int ts);
/* Is the endpoint's descriptor in non-blocking mode? */
bool xti_nonblock(int fd);

/* A message read from the stream. */
struct xti_rd {
	char *cbuf;			/* control part */
	int cmax, clen;			/* clen -1: no control part */
	char *dbuf;			/* data part */
	int dmax, dlen;			/* dlen -1: no data part */
	int band;
	bool hipri;
	bool more;			/* data left at the head (MOREDATA) */
	bool duser;			/* dbuf is the application's */
	bool cown, down;		/* cbuf/dbuf malloc'ed by us */
	t_scalar_t prim;		/* -1: no control part */
	bool entered;			/* the caller has the read turn
					   (xti_begin_rd): xti_read does not
					   take it again */
	int ev;				/* the caller's event: when another
					   thread's request completes while
					   reading, TOUTSTATE if it is no
					   longer allowed (-1: no check) */
	bool nowait;			/* never wait, whatever O_NONBLOCK
					   (a call that must not: t_rcvdis,
					   t_rcvrel, t_rcvuderr) */
	char cstack[256];
};
void xti_rd_init(struct xti_rd *r, void *udata, int umax);
/* A read into library buffers with room for data of the provider's size
 * lim (an info field: CDATA_size, DDATA_size), for a call of event ev
 * (-1: none). */
void xti_rd_lib(struct xti_rd *r, t_scalar_t lim, int ev);
void xti_rd_free(struct xti_rd *r);
/* Read one message (acks met on the way go to their waiter).  With
 * r->dbuf set by xti_rd_init the data goes there and what does not fit
 * stays at the head (r->more); without, the library reads it all.
 * 0, or -1 with t_errno (TNODATA when non-blocking and nothing is there;
 * TSYSERR with EINTR, or the stream's error). */
int xti_read(struct xti_ep *ep, struct xti_rd *r);
/* xti_begin for a reader of event ev: also takes the read turn (after
 * any ack waiter's read), without ep_lock when no ack waiter reads; the
 * endpoint comes through the thread's cache (release with
 * xti_put_cached).  The caller then either reads with an xti_rd whose
 * entered is set (and ev is ev) or gives the turn back with
 * xti_rd_quit. */
struct xti_ep *xti_begin_rd(int fd, int need, int ev);
void xti_rd_quit(struct xti_ep *ep);
/* Read the rest of r's data (continuations) into a library buffer
 * (copying what is in a user buffer first).  0 or -1 with t_errno. */
int xti_read_rest(struct xti_ep *ep, struct xti_rd *r);
/* Make a held message of r (its data must be all read). */
struct xti_msg *xti_rd_to_msg(struct xti_rd *r);
/* Keep r's message (an event the call does not take) on the held list:
 * -1 with t_errno TLOOK (or the error reading the rest met). */
int xti_hold(struct xti_ep *ep, struct xti_rd *r);
/* Read one whole message with r (set up by the caller, freed here) and
 * make it a held message, not held yet.  NULL with t_errno; TNODATA
 * (another thread took what t_look showed) becomes notfound. */
struct xti_msg *xti_read_msg(struct xti_ep *ep, struct xti_rd *r,
			     int notfound);

/* Acknowledged requests: begin (waits for the endpoint's previous one),
 * send, wait for the ack of prim, end. */
void xti_req_begin(struct xti_ep *ep);
void xti_req_end(struct xti_ep *ep);
/* putmsg of a request; 0 or -1 with t_errno (TFLOW when flow
 * controlled and non-blocking, else TSYSERR). */
int xti_putmsg(int fd, const void *ctl, int clen, const void *dat,
	       int dlen, int band);
/* Wait for the T_OK_ACK/T_ERROR_ACK of prim: 0 for T_OK_ACK, -1 with
 * t_errno set otherwise. */
int xti_ack_wait(struct xti_ep *ep, t_scalar_t prim);

/* The event of the first held message or of the message at the head
 * (peeked, not taken); 0 if none; -1 with t_errno on error. */
int xti_pending(struct xti_ep *ep);
/* Does any held message, or the head's first message, mean one of the
 * events in mask?  Returns that event, 0 if none, -1 with t_errno. */
int xti_look_for(struct xti_ep *ep, int mask);
/* Its two halves: the held messages (ep_lock held; the event or 0) and
 * the head's first message (ep_lock not held; as xti_look_for). */
int xti_held_event(struct xti_ep *ep, int mask);
int xti_head_look(struct xti_ep *ep, int mask);
/* Before a call that such an event must stop: 0 if none waits, else -1
 * with t_errno TLOOK (or the error looking met). */
int xti_look_stop(struct xti_ep *ep, int mask);
/* The same for a send that found held (xti_held_event, under ep_lock):
 * the head is asked only when something is queued there, not on every
 * message. */
int xti_send_stop(struct xti_ep *ep, int held, int mask);

/* ---- the application's t_iovec arrays (t_sndv, t_rcvv, t_sndvudata,
 * t_rcvvudata) ---- */
/* Copy the array in (1 .. T_IOV_MAX entries, at most INT_MAX bytes in
 * all: else TBADDATA) and allocate a buffer for its bytes; their number
 * in *len.  NULL with t_errno (TBADDATA, TSYSERR EFAULT or ENOMEM). */
char *xti_iov_in(const struct t_iovec *uiov, unsigned int cnt,
		 struct t_iovec *iov, unsigned int *len);
/* Gather the bytes iov names into buf: 0, or -1 (TSYSERR EFAULT). */
int xti_iov_writable(const struct t_iovec *iov, unsigned int cnt);
int xti_iov_gather(char *buf, const struct t_iovec *iov, unsigned int cnt);
/* Scatter n bytes of buf over iov in order: 0, or -1 (TSYSERR EFAULT). */
int xti_iov_scatter(const struct t_iovec *iov, unsigned int cnt,
		    const char *buf, size_t n);

/* ---- netbufs ---- */
/* Copy a value out to the application's netbuf nb (read first): 0,
 * TBUFOVFLW when nb->maxlen > 0 is too small, or -1 (EFAULT). */
int xti_nb_fits(const struct netbuf *nb, size_t len);
int xti_nb_put(struct netbuf *unb, const struct netbuf *nb, const void *src,
	       size_t len);
/* The application's netbuf (copied in); 0 or EFAULT. */
int xti_nb_get(const struct netbuf *unb, struct netbuf *nb);
/* Check a region the application gives: len <= limit of the info field
 * (T_INFINITE: any, T_INVALID or 0: none). */
bool xti_size_ok(t_scalar_t limit, unsigned int len);

/* ---- test and fuzz entry: make an endpoint of fd without asking the
 * provider (info and state given). */
int _xti_attach(int fd, const struct T_info_ack *info, int state,
		unsigned int qlen);

#define XTI_MAXBUF	(1 << 20)	/* most the library reads into its
					   own buffers for one message */
#define XTI_IOCMAX	65536		/* largest I_STR buffer (STRMSGSZ) */
/* a region's offset in a TPI primitive the library builds: 4-aligned,
 * computed in size_t (a 32-bit length near 4 GiB must not wrap) */
#define XTI_ALIGN4(n)	(((size_t)(n) + 3) & ~(size_t)3)

#endif /* STREAMS_XTI_IMPL_H */
