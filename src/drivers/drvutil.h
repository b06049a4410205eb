/*
 * drvutil.h -- what every driver and module of this library does the
 * same way: answer M_FLUSH, refuse unknown ioctls.
 */
#ifndef STREAMS_DRVUTIL_H
#define STREAMS_DRVUTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/stream.h>

/* Flush q's data as M_FLUSH mp asks: the band it names (FLUSHBAND),
 * else all of it; mp is left alone. */
void drv_flush_queue(queue_t *q, const mblk_t *mp);

/* A driver's write side got M_FLUSH: flush its queues and send the read
 * part back up (SVR4 driver convention).  Consumes mp. */
void drv_flush(queue_t *wq, mblk_t *mp);

/* A module got M_FLUSH on q: flush its queue of that direction and pass
 * it on.  Consumes mp. */
void mod_flush(queue_t *q, mblk_t *mp);

/* NAK an M_IOCTL with error.  Consumes mp; q is the queue it came on. */
void drv_nak(queue_t *q, mblk_t *mp, int error);

/* ACK an M_IOCTL with rval and the data dp (may be NULL). */
void drv_ack(queue_t *q, mblk_t *mp, mblk_t *dp, int rval);

/*
 * May a put procedure on q pass a message straight on?  Only when nothing
 * is queued and the service procedure is neither scheduled nor running: a
 * service procedure between its getq and its putnext holds an older
 * message, which must not be overtaken.
 */
static inline bool q_idle(queue_t *q)
{
	return __atomic_load_n(&q->q_first, __ATOMIC_ACQUIRE) == NULL &&
	       !(__atomic_load_n(&q->q_flag, __ATOMIC_ACQUIRE) &
		 (QENAB | QINSERVICE));
}

/* putq, or free mp when the queue cannot take it (its band's structure
 * could not be allocated): putq leaves it to the caller then. */
void drv_putq(queue_t *q, mblk_t *mp);

/* Pass mp on from q respecting flow control and order: putnext if q is
 * idle and the next queue takes it (or it is high priority), else putq. */
void pass_or_queue(queue_t *q, mblk_t *mp);

/* Service procedure body: send queued messages on while flow allows. */
void drain_queue(queue_t *q);

/*
 * The minors of a driver's streams, counted per minor (a stream of a
 * minor may still be closing when the head makes another of it).  A clone
 * open takes a minor no stream has, searching on from the one given last
 * (a minor just let go is not handed out again at once); minor 0 is
 * never a clone's.  The counts are allocated at the first open.
 */
struct drv_minors {
	pthread_mutex_t lock;
	minor_t max;		/* minors below this; const */
	minor_t next;		/* where a clone's search starts; lock */
	unsigned char *used;	/* streams of each minor; lock */
};
#define DRV_MAXMINOR	0x100000	/* the minors a path can name */
#define DRV_MINORS_INIT(n)	{ PTHREAD_MUTEX_INITIALIZER, (n), 1, NULL }

/* Count a stream of *minor, or with clone first choose *minor: 0, or
 * ENXIO (out of range, or every minor taken), ENOMEM. */
int drv_minor_open(struct drv_minors *dm, bool clone, minor_t *minor);

/* A stream of minor has closed. */
void drv_minor_close(struct drv_minors *dm, minor_t minor);

/* The open and close procedures of a driver whose streams need nothing
 * but their minor, kept in q_ptr (as minor + 1): a reopen is let be. */
int drv_minor_qopen(struct drv_minors *dm, queue_t *q, dev_t *devp,
		    int sflag);
void drv_minor_qclose(struct drv_minors *dm, queue_t *q);

#endif
