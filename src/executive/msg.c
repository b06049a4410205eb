/*
 * msg.c -- message utilities: copying, linking, trimming, pulling up, and
 * the small helpers modules use to build replies.
 *
 * Allocation and freeing of single blocks is in mem.c.  Everything here
 * works on whole messages (b_cont chains) and never touches a queue.
 * Functions that can fail leave their argument unchanged when they do.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "strsubr.h"

mblk_t *copyb(mblk_t *bp)
{
	dblk_t *dbp;
	mblk_t *nbp;
	size_t size, off;

	if (unlikely(bp == NULL || bp->b_datap == NULL)) {
		str_bad("copyb of a NULL or freed message", bp);
		return NULL;
	}
	dbp = bp->b_datap;
	size = (size_t)(dbp->db_lim - dbp->db_base);
	if (unlikely(bp->b_rptr < dbp->db_base || bp->b_wptr < bp->b_rptr ||
		     bp->b_wptr > dbp->db_lim)) {
		/* pointers outside the buffer: copy just the bytes */
		size = bp->b_wptr > bp->b_rptr ? MBLKL(bp) : 0;
		off = 0;
	} else {
		off = (size_t)(bp->b_rptr - dbp->db_base);
	}
	nbp = allocb(size, BPRI_MED);
	if (nbp == NULL)
		return NULL;
	nbp->b_datap->db_type = dbp->db_type;
	nbp->b_band = bp->b_band;
	nbp->b_flag = bp->b_flag;
	nbp->b_rptr = nbp->b_wptr = nbp->b_datap->db_base + off;
	if (bp->b_wptr > bp->b_rptr) {
		memcpy(nbp->b_wptr, bp->b_rptr, MBLKL(bp));
		nbp->b_wptr += MBLKL(bp);
	}
	return nbp;
}

/* Apply fn (copyb or dupb) to every block of mp; NULL if any fails. */
static mblk_t *msg_map(mblk_t *mp, mblk_t *(*fn)(mblk_t *))
{
	mblk_t *head = NULL, **tail = &head;

	for (; mp != NULL; mp = mp->b_cont) {
		if ((*tail = fn(mp)) == NULL) {
			freemsg(head);
			return NULL;
		}
		tail = &(*tail)->b_cont;
	}
	return head;
}

mblk_t *copymsg(mblk_t *mp)
{
	return msg_map(mp, copyb);
}

mblk_t *dupmsg(mblk_t *mp)
{
	return msg_map(mp, dupb);
}

void linkb(mblk_t *mp, mblk_t *bp)
{
	if (unlikely(mp == NULL)) {
		str_bad("linkb to a NULL message", mp);
		return;
	}
	while (mp->b_cont != NULL)
		mp = mp->b_cont;
	mp->b_cont = bp;
}

/* Solaris linkmsg: like linkb, but mp may be NULL; returns the head. */
mblk_t *linkmsg(mblk_t *mp, mblk_t *bp)
{
	if (mp == NULL)
		return bp;
	linkb(mp, bp);
	return mp;
}

mblk_t *unlinkb(mblk_t *mp)
{
	mblk_t *rest;

	if (mp == NULL)
		return NULL;
	rest = mp->b_cont;
	mp->b_cont = NULL;
	return rest;
}

mblk_t *rmvb(mblk_t *mp, mblk_t *bp)
{
	mblk_t *prev = NULL, *p;

	for (p = mp; p != NULL; prev = p, p = p->b_cont) {
		if (p == bp) {
			if (prev == NULL)
				mp = bp->b_cont;
			else
				prev->b_cont = bp->b_cont;
			bp->b_cont = NULL;
			return mp;
		}
	}
	return (mblk_t *)-1;
}

size_t msgdsize(const mblk_t *mp)
{
	size_t n = 0;

	for (; mp != NULL; mp = mp->b_cont)
		if (mp->b_datap->db_type == M_DATA && mp->b_wptr > mp->b_rptr)
			n += MBLKL(mp);
	return n;
}

size_t msgsize(const mblk_t *mp)
{
	size_t n = 0;

	for (; mp != NULL; mp = mp->b_cont)
		if (mp->b_wptr > mp->b_rptr)
			n += MBLKL(mp);
	return n;
}

/* Bytes in the leading blocks that have the type of the first block. */
size_t xmsgsize(const mblk_t *mp)
{
	unsigned char type;
	size_t n = 0;

	if (mp == NULL)
		return 0;
	type = mp->b_datap->db_type;
	for (; mp != NULL && mp->b_datap->db_type == type; mp = mp->b_cont)
		if (mp->b_wptr > mp->b_rptr)
			n += MBLKL(mp);
	return n;
}

/*
 * adjmsg: trim len bytes from the head (len > 0) or the tail (len < 0) of
 * the leading run of blocks that share the first block's type.  Blocks
 * emptied by the trim are freed, except the first.  Fails (0, message
 * unchanged) when the run holds fewer than |len| bytes.
 */
int adjmsg(mblk_t *mp, ssize_t len)
{
	size_t want;

	if (mp == NULL)
		return 0;
	/* (negated as size_t: -len overflows for SSIZE_MIN) */
	want = len < 0 ? (size_t)0 - (size_t)len : (size_t)len;
	if (xmsgsize(mp) < want)
		return 0;
	if (len >= 0) {
		mblk_t *bp = mp, *prev = NULL;

		while (want > 0 && bp != NULL) {
			size_t n = MBLKL(bp) < want ? MBLKL(bp) : want;
			bp->b_rptr += n;
			want -= n;
			if (prev != NULL && bp->b_rptr == bp->b_wptr) {
				prev->b_cont = bp->b_cont;
				freeb(bp);
				bp = prev->b_cont;
			} else {
				prev = bp;
				bp = bp->b_cont;
			}
		}
	} else {
		unsigned char type = mp->b_datap->db_type;

		while (want > 0) {
			mblk_t *bp, *last = NULL, *before = NULL, *p = NULL;
			size_t n;

			/* last non-empty block of the leading run */
			for (bp = mp; bp != NULL && bp->b_datap->db_type == type;
			     p = bp, bp = bp->b_cont) {
				if (bp->b_wptr > bp->b_rptr) {
					last = bp;
					before = p;
				}
			}
			if (last == NULL)
				break;
			n = MBLKL(last) < want ? MBLKL(last) : want;
			last->b_wptr -= n;
			want -= n;
			if (last != mp && last->b_wptr == last->b_rptr) {
				before->b_cont = last->b_cont;
				freeb(last);
			}
		}
	}
	return 1;
}

/*
 * msgpullup: a new message whose first block holds the first len bytes of
 * the leading same-type run of mp (all of it when len is -1), followed by
 * copies of what remains.  mp is unchanged.  NULL when the run is shorter
 * than len or memory is short.
 */
mblk_t *msgpullup(mblk_t *mp, ssize_t len)
{
	size_t run, want, done = 0, off = 0;
	mblk_t *nmp, *bp = mp, *rest = NULL;

	if (mp == NULL || len < -1)
		return NULL;
	run = xmsgsize(mp);
	want = len == -1 ? run : (size_t)len;
	if (want > run)
		return NULL;
	if ((nmp = allocb(want, BPRI_MED)) == NULL)
		return NULL;
	nmp->b_datap->db_type = mp->b_datap->db_type;
	nmp->b_band = mp->b_band;
	nmp->b_flag = mp->b_flag;
	/* cursor (bp, off) walks the bytes of the run */
	while (done < want) {
		size_t n = MBLKL(bp) - off;
		if (n > want - done)
			n = want - done;
		memcpy(nmp->b_wptr, bp->b_rptr + off, n);
		nmp->b_wptr += n;
		done += n;
		off += n;
		if (off == MBLKL(bp)) {
			bp = bp->b_cont;
			off = 0;
		}
	}
	/* the rest, from the cursor on, is copied */
	if (bp != NULL) {
		if (off == 0) {
			rest = copymsg(bp);
		} else if ((rest = copyb(bp)) != NULL) {
			rest->b_rptr += off;
			if (bp->b_cont != NULL &&
			    (rest->b_cont = copymsg(bp->b_cont)) == NULL) {
				freeb(rest);
				rest = NULL;
			}
		}
		if (rest == NULL) {
			freeb(nmp);
			return NULL;
		}
	}
	nmp->b_cont = rest;
	return nmp;
}

/*
 * pullupmsg: make the first len bytes of the leading same-type run (all
 * of it for -1) contiguous in the first block of mp, in place.  1 on
 * success, 0 (mp unchanged) when too short or out of memory.
 */
int pullupmsg(mblk_t *mp, ssize_t len)
{
	size_t run, want, done = 0;
	mblk_t *nbp, *bp;
	dblk_t *tmp;
	unsigned char *r, *w;

	if (mp == NULL || len < -1)
		return 0;
	run = xmsgsize(mp);
	want = len == -1 ? run : (size_t)len;
	if (want > run)
		return 0;
	/* already contiguous and aligned */
	if (MBLKL(mp) >= want && ((uintptr_t)mp->b_rptr & 7) == 0)
		return 1;
	if ((nbp = allocb(want, BPRI_MED)) == NULL)
		return 0;
	nbp->b_datap->db_type = mp->b_datap->db_type;
	/* copy want bytes from mp's chain into nbp */
	for (bp = mp; done < want; bp = bp->b_cont) {
		size_t n = MBLKL(bp);
		if (n > want - done)
			n = want - done;
		memcpy(nbp->b_wptr, bp->b_rptr, n);
		nbp->b_wptr += n;
		bp->b_rptr += n;
		done += n;
	}
	/* swap data blocks: mp gets the new buffer, nbp the old one */
	tmp = mp->b_datap;
	r = mp->b_rptr;
	w = mp->b_wptr;
	mp->b_datap = nbp->b_datap;
	mp->b_rptr = nbp->b_rptr;
	mp->b_wptr = nbp->b_wptr;
	nbp->b_datap = tmp;
	nbp->b_rptr = r;
	nbp->b_wptr = w;
	/* nbp holds what is left of the old first block; keep it in the
	 * chain if it has bytes, and drop emptied same-run blocks */
	nbp->b_cont = mp->b_cont;
	mp->b_cont = nbp;
	{
		mblk_t *prev = mp;
		bp = nbp;
		while (bp != NULL && bp->b_rptr == bp->b_wptr &&
		       bp->b_datap->db_type == mp->b_datap->db_type) {
			prev->b_cont = bp->b_cont;
			freeb(bp);
			bp = prev->b_cont;
		}
	}
	return 1;
}

/* ---- helpers for ioctl replies and errors ---- */

mblk_t *allocb_tmpl(size_t size, const mblk_t *tmpl)
{
	mblk_t *mp = allocb(size, BPRI_MED);

	if (mp != NULL && tmpl != NULL) {
		mp->b_datap->db_type = tmpl->b_datap->db_type;
		mp->b_band = tmpl->b_band;
		mp->b_flag = tmpl->b_flag;
	}
	return mp;
}

/* An ioctl's block: room for its iocblk and the copyreq or copyresp it
 * becomes on the way (the copyreq is the largest). */
#define IOC_MAX2(a, b)	((a) > (b) ? (a) : (b))
#define IOC_ROOM	IOC_MAX2(sizeof(struct iocblk), \
				 IOC_MAX2(sizeof(struct copyreq), \
					  sizeof(struct copyresp)))

mblk_t *mkiocb(unsigned int cmd)
{
	static _Atomic unsigned int ioc_id = 0x40000000u;
	struct iocblk *ioc;
	mblk_t *mp;

	/* (room for the copyreq or copyresp it may be turned into) */
	if ((mp = allocb(IOC_ROOM, BPRI_MED)) == NULL)
		return NULL;
	mp->b_datap->db_type = M_IOCTL;
	ioc = (struct iocblk *)mp->b_rptr;
	memset(ioc, 0, sizeof(*ioc));
	ioc->ioc_cmd = (int)cmd;
	ioc->ioc_id = atomic_fetch_add(&ioc_id, 1);
	ioc->ioc_flag = IOC_NATIVE;
	mp->b_wptr += sizeof(*ioc);
	return mp;
}

/* Turn mp into M_ERROR with error and send it upstream (q is a write
 * queue, answered with qreply, or a read queue, passed on; the error
 * travels toward the stream head). */
void merror(queue_t *q, mblk_t *mp, int error)
{
	if (mp->b_cont != NULL) {
		freemsg(mp->b_cont);
		mp->b_cont = NULL;
	}
	mp->b_datap->db_type = M_ERROR;
	mp->b_rptr = mp->b_datap->db_base;
	mp->b_wptr = mp->b_rptr;
	if (MBLKTAIL(mp) >= 1) {
		*mp->b_wptr++ = (unsigned char)error;
		if (q_isread(q))
			putnext(q, mp);
		else
			qreply(q, mp);
	} else {
		freemsg(mp);
		putnextctl1(q_isread(q) ? q : OTHERQ(q), M_ERROR,
			    error);
	}
}

void mioc2ack(mblk_t *mp, mblk_t *dp, size_t count, int rval)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;

	mp->b_datap->db_type = M_IOCACK;
	ioc->ioc_count = count;
	ioc->ioc_error = 0;
	ioc->ioc_rval = rval;
	if (mp->b_cont != NULL)
		freemsg(mp->b_cont);
	mp->b_cont = dp;
}

void miocack(queue_t *q, mblk_t *mp, int count, int rval)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;

	mp->b_datap->db_type = M_IOCACK;
	ioc->ioc_count = (size_t)count;
	ioc->ioc_error = 0;
	ioc->ioc_rval = rval;
	qreply(q, mp);
}

void miocnak(queue_t *q, mblk_t *mp, int count, int error)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;

	mp->b_datap->db_type = M_IOCNAK;
	ioc->ioc_count = (size_t)count;
	ioc->ioc_error = error ? error : EINVAL;
	ioc->ioc_rval = -1;
	qreply(q, mp);
}

/* Reuse mp as a message of size bytes and type if it is big enough and
 * unshared, else free it and allocate; the first 4 bytes get primtype
 * when primtype >= 0.  NULL (mp freed) when memory is short. */
mblk_t *mexchange(queue_t *q, mblk_t *mp, size_t size, int type,
		  int32_t primtype)
{
	(void)q;
	if (mp == NULL || mp->b_datap->db_ref > 1 ||
	    MBLKSIZE(mp) < size) {
		if (mp != NULL)
			freemsg(mp);
		if ((mp = allocb(size, BPRI_MED)) == NULL)
			return NULL;
	} else if (mp->b_cont != NULL) {
		freemsg(mp->b_cont);
		mp->b_cont = NULL;
	}
	mp->b_datap->db_type = (unsigned char)type;
	mp->b_rptr = mp->b_datap->db_base;
	mp->b_wptr = mp->b_rptr + size;
	if (primtype >= 0 && size >= sizeof(int32_t))
		*(int32_t *)mp->b_rptr = primtype;
	return mp;
}

/* Transparent ioctl helpers: turn the M_IOCTL or M_IOCDATA message mp
 * into M_COPYIN / M_COPYOUT requests. */
/* Rewrite the M_IOCTL/M_IOCDATA mp in place as a copy request. */
static void mkcopyreq(mblk_t *mp, unsigned char type, void *priv,
		      size_t size, void *useraddr)
{
	struct copyreq *cq = (struct copyreq *)mp->b_rptr;
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;
	int cmd = ioc->ioc_cmd;
	cred_t *cr = ioc->ioc_cr;
	unsigned int id = ioc->ioc_id, flag = ioc->ioc_flag;

	/* a TRANSPARENT M_IOCTL carries the user's address in b_cont */
	if (useraddr == NULL && mp->b_cont != NULL &&
	    MBLKL(mp->b_cont) >= sizeof(void *))
		memcpy(&useraddr, mp->b_cont->b_rptr, sizeof(void *));
	/* the copyreq is larger than an iocblk: from the block's start,
	 * and where even that has no room (a module's own small M_IOCTL),
	 * the ioctl fails ENOMEM instead of writing past the block */
	mp->b_rptr = mp->b_datap->db_base;
	if ((size_t)(mp->b_datap->db_lim - mp->b_rptr) < sizeof(*cq)) {
		ioc = (struct iocblk *)mp->b_rptr;
		*ioc = (struct iocblk){ .ioc_cmd = cmd, .ioc_cr = cr,
					.ioc_id = id, .ioc_flag = flag,
					.ioc_error = ENOMEM, .ioc_rval = -1 };
		mp->b_datap->db_type = M_IOCNAK;
		mp->b_wptr = mp->b_rptr + sizeof(*ioc);
		return;
	}
	cq = (struct copyreq *)mp->b_rptr;
	memset(cq, 0, sizeof(*cq));
	cq->cq_cmd = cmd;
	cq->cq_cr = cr;
	cq->cq_id = id;
	cq->cq_flag = flag & IOC_MODELS;
	cq->cq_private = priv;
	cq->cq_addr = useraddr;
	cq->cq_size = size;
	mp->b_datap->db_type = type;
	mp->b_wptr = mp->b_rptr + sizeof(*cq);
}

void mcopyin(mblk_t *mp, void *priv, size_t size, void *useraddr)
{
	mkcopyreq(mp, M_COPYIN, priv, size, useraddr);
	if (mp->b_cont != NULL) {
		freemsg(mp->b_cont);
		mp->b_cont = NULL;
	}
}

void mcopyout(mblk_t *mp, void *priv, size_t size, void *useraddr,
	      mblk_t *dp)
{
	mkcopyreq(mp, M_COPYOUT, priv, size, useraddr);
	if (dp != NULL) {
		if (mp->b_cont != NULL)
			freemsg(mp->b_cont);
		mp->b_cont = dp;
	}
}
