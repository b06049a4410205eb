/*
 * shmpipe.h -- the driver that carries a STREAMS pipe between processes
 * (shmpipe.c).
 */
#ifndef STREAMS_SHMPIPE_H
#define STREAMS_SHMPIPE_H

#include <stdbool.h>
#include <sys/stream.h>
#include <sys/strconf.h>

#include "strsubr.h"

/*
 * Give the two ends a and b of an in-process pipe a shmpipe driver each,
 * connected through a new shared-memory segment: x_low_wq is end x's
 * lowest write queue (its q_next, now the other end's entry, becomes the
 * driver), x_up_rq where x's driver sends messages up (x's entry).  Both
 * ends' sd_plumb held, outside entries.  0, or an errno with both ends
 * unchanged.
 */
int shmpipe_convert(struct stdata *a, queue_t *a_low_wq, queue_t *a_up_rq,
		    struct stdata *b, queue_t *b_low_wq, queue_t *b_up_rq,
		    cred_t *cr);

/*
 * Another process joins an end (a named pipe, sth_fattach.c).
 * shmpipe_share: new close-on-exec descriptors for the end under sd (the
 * segment, its doorbell socket, its descriptor socket) and which side it
 * is; sd_plumb held.  0, or ENXIO when sd is not a shmpipe end or its
 * other end is gone, or an errno.
 * shmpipe_join: give sd, a new stream head without a driver, that end
 * from those descriptors (received from outside: checked; they are
 * always consumed).  0 or an errno (EPROTO: not a pipe's descriptors).
 */
int shmpipe_share(struct stdata *sd, int fds[3], int *side);
int shmpipe_join(struct stdata *sd, const int fds[3], int side, cred_t *cr);

/* Is cdev the shmpipe driver?  (hidden from I_LIST on pipe ends) */
bool shmpipe_is(const struct cdevsw *cdev);

extern struct cdevsw shmpipe_cdev;

/* Provided by the stream head (sth_ioctl.c): the M_PASSFP of I_SENDFD.
 * sth_passfp_new makes one that owns fd (closed if NULL is returned);
 * sth_passfp_peek returns the descriptor one carries (still its own),
 * -1 if mp is not such a message. */
mblk_t *sth_passfp_new(int fd, uid_t uid, gid_t gid);
int sth_passfp_peek(const mblk_t *mp, uid_t *uid, gid_t *gid);

#endif
