/*
 * testmod.c -- a module that answers test ioctls (<sys/testmod.h>) and
 * otherwise passes everything through.
 *
 *   TM_ECHO         I_STR: ACK with the same data, rval = its length
 *   TM_NAK          I_STR: NAK with the errno given (an int)
 *   TM_TRANSPARENT  transparent ioctl: copy in an int at arg, add one,
 *                   copy it out (M_COPYIN, M_IOCDATA, M_COPYOUT, ...)
 *   TM_TRANSOUT     transparent ioctl: copy out 16 bytes to arg
 *   TM_NOREPLY      never answered (time-out tests)
 *   TM_SENDUP       I_STR struct tm_sendup: send that message up
 *   TM_SENDUP_KEEP  the same, a dupmsg of it, keeping the original
 *                   (TM_KEPT: its block types)
 *   TM_COUNT        I_STR: rval = messages passed through so far
 *   TM_ACKERR       I_STR int: M_IOCACK with that ioc_error
 *   TM_REPLYLEN     I_STR int n: M_IOCACK with n bytes of 'r'
 *   TM_STRCOPYOUT   I_STR: M_COPYOUT of 8 bytes, then M_IOCACK
 *   TM_SHORTCOPY    an M_COPYIN too short to be one
 *   TM_LATECOPY     I_STR int ms: an M_COPYIN ms later, holding a state
 *                   block until its M_IOCDATA (TM_STATES counts them;
 *                   TM_CRBAD those whose ioc_cr was not the caller's then)
 *
 * Queue-pair perimeter (no flags): it is also the library's example of a
 * module that needs no locking of its own.
 */
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <sys/strconf.h>
#include <sys/testmod.h>

#include "../drivers/drvutil.h"

struct tm_priv {
	long passed;		/* messages passed; perimeter */
	void *uaddr;		/* transparent ioctl's user address */
	queue_t *wq;		/* our write queue */
	mblk_t *late;		/* TM_LATECOPY waiting; perimeter */
	toid_t late_id;		/* its time-out; perimeter */
	int states;		/* TM_LATECOPY states held; perimeter */
	int crbad;		/* TM_CRBAD; perimeter */
	mblk_t *kept;		/* TM_SENDUP_KEEP's original; perimeter */
};

static int testmod_open(queue_t *q, dev_t *devp, int oflag, int sflag,
			cred_t *cr)
{
	struct tm_priv *p;

	if (sflag != MODOPEN)
		return ENXIO;
	if (q->q_ptr != NULL)
		return 0;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return ENOMEM;
	p->wq = WR(q);
	q->q_ptr = WR(q)->q_ptr = p;
	return 0;
}

static int testmod_close(queue_t *q, int oflag, cred_t *cr)
{
	struct tm_priv *p = q->q_ptr;

	if (p->late != NULL) {
		quntimeout(q, p->late_id);
		freemsg(p->late);
	}
	freemsg(p->kept);
	free(q->q_ptr);
	q->q_ptr = WR(q)->q_ptr = NULL;
	return 0;
}

/* TM_SENDUP: build the message described and send it up; with keep
 * (TM_SENDUP_KEEP) a dupmsg of it, the original kept in *keep. */
static int sendup(queue_t *wq, mblk_t *data, mblk_t **keep)
{
	struct tm_sendup su;
	mblk_t *mp, *dp = NULL;

	if (data == NULL || msgdsize(data) < offsetof(struct tm_sendup, data) ||
	    !pullupmsg(data, -1))
		return EINVAL;
	memset(&su, 0, sizeof(su));
	memcpy(&su, data->b_rptr, MBLKL(data) < sizeof(su) ? MBLKL(data)
							    : sizeof(su));
	if (su.ctllen < 0 || su.type < 0 || su.type > 0xff ||
	    su.band < 0 || su.band > 255 || su.datlen < -1 ||
	    (size_t)su.ctllen + (size_t)(su.datlen > 0 ? su.datlen : 0) >
	    sizeof(su.data))
		return EINVAL;
	if ((mp = allocb((size_t)su.ctllen, BPRI_MED)) == NULL)
		return ENOMEM;
	mp->b_datap->db_type = (unsigned char)su.type;
	mp->b_band = (unsigned char)su.band;
	mp->b_flag = (unsigned short)su.flag;
	memcpy(mp->b_wptr, su.data, (size_t)su.ctllen);
	mp->b_wptr += su.ctllen;
	if (su.datlen >= 0) {
		if ((dp = allocb((size_t)su.datlen, BPRI_MED)) == NULL) {
			freemsg(mp);
			return ENOMEM;
		}
		memcpy(dp->b_wptr, su.data + su.ctllen, (size_t)su.datlen);
		dp->b_wptr += su.datlen;
		mp->b_cont = dp;
	}
	if (keep != NULL) {
		mblk_t *dup = dupmsg(mp);

		if (dup == NULL) {
			freemsg(mp);
			return ENOMEM;
		}
		freemsg(*keep);
		*keep = mp;
		mp = dup;
	}
	qreply(wq, mp);
	return 0;
}

/* The int an I_STR carries, or dflt. */
static int int_data(const mblk_t *mp, int dflt)
{
	int v = dflt;

	if (mp->b_cont != NULL && MBLKL(mp->b_cont) >= sizeof(int))
		memcpy(&v, mp->b_cont->b_rptr, sizeof(int));
	return v;
}

/* TM_LATECOPY's time-out: ask for a copy nobody may wait for now. */
static void late_copy(void *arg)
{
	struct tm_priv *p = arg;
	mblk_t *mp = p->late, *state = allocb(8, BPRI_MED);
	const cred_t *cr = ((struct iocblk *)mp->b_rptr)->ioc_cr;
	gid_t g[32];
	int ng = getgroups(32, g);

	/* (the caller may have given up long ago: its credentials must
	 * still be there) */
	if (cr == NULL || cr->cr_uid != geteuid() || cr->cr_gid != getegid() ||
	    cr->cr_ngroups != (unsigned)(ng < 0 ? 0 : ng))
		p->crbad++;
	p->late = NULL;
	if (state == NULL) {
		drv_nak(p->wq, mp, ENOMEM);
		return;
	}
	p->states++;
	mcopyin(mp, state, sizeof(int), NULL);
	qreply(p->wq, mp);
}

static void testmod_ioctl(queue_t *q, mblk_t *mp)
{
	struct iocblk *ioc = (struct iocblk *)mp->b_rptr;
	struct tm_priv *p = q->q_ptr;
	int v, err;

	switch (ioc->ioc_cmd) {
	case TM_ECHO:
		if (ioc->ioc_count == TRANSPARENT) {
			drv_nak(q, mp, EINVAL);
			return;
		}
		{
			mblk_t *d = mp->b_cont;
			mp->b_cont = NULL;
			drv_ack(q, mp, d, d ? (int)msgdsize(d) : 0);
		}
		return;
	case TM_NAK:
		v = EPERM;
		if (mp->b_cont != NULL && MBLKL(mp->b_cont) >= sizeof(int))
			memcpy(&v, mp->b_cont->b_rptr, sizeof(int));
		if (v < 0 || v > 4095)
			v = EINVAL;	/* (not an errno: the caller's) */
		drv_nak(q, mp, v);
		return;
	case TM_TRANSPARENT:
		if (ioc->ioc_count != TRANSPARENT || mp->b_cont == NULL ||
		    MBLKL(mp->b_cont) < sizeof(void *)) {
			drv_nak(q, mp, EINVAL);
			return;
		}
		/* a copy response does not carry the address: keep it */
		memcpy(&p->uaddr, mp->b_cont->b_rptr, sizeof(void *));
		mcopyin(mp, (void *)1, sizeof(int), p->uaddr);
		qreply(q, mp);
		return;
	case TM_TRANSOUT:
		if (ioc->ioc_count != TRANSPARENT) {
			drv_nak(q, mp, EINVAL);
			return;
		} else {
			mblk_t *d = allocb(16, BPRI_MED);
			if (d == NULL) {
				drv_nak(q, mp, ENOMEM);
				return;
			}
			memcpy(d->b_wptr, "testmod-copyout", 16);
			d->b_wptr += 16;
			mcopyout(mp, (void *)3, 16, NULL, d);
			qreply(q, mp);
		}
		return;
	case TM_NOREPLY:
		freemsg(mp);
		return;
	case TM_SENDUP:
	case TM_SENDUP_KEEP:
		err = sendup(q, mp->b_cont,
			     ioc->ioc_cmd == TM_SENDUP_KEEP ? &p->kept : NULL);
		if (err)
			drv_nak(q, mp, err);
		else
			drv_ack(q, mp, NULL, 0);
		return;
	case TM_KEPT:
		drv_ack(q, mp, NULL, p->kept == NULL ? -1 :
			p->kept->b_datap->db_type |
			(p->kept->b_cont ? p->kept->b_cont->b_datap->db_type
					 << 8 : 0));
		return;
	case TM_COUNT:
		drv_ack(q, mp, NULL, (int)p->passed);
		return;
	case TM_ACKERR:
		v = int_data(mp, EIO);
		freemsg(mp->b_cont);
		mp->b_cont = NULL;
		mp->b_datap->db_type = M_IOCACK;
		ioc->ioc_error = v;
		ioc->ioc_rval = 0;
		ioc->ioc_count = 0;
		qreply(q, mp);
		return;
	case TM_REPLYLEN:
		v = int_data(mp, 0);
		if (v < 0 || v > 65536) {
			drv_nak(q, mp, EINVAL);
			return;
		} else {
			mblk_t *d = allocb((size_t)v, BPRI_MED);
			if (d == NULL) {
				drv_nak(q, mp, ENOMEM);
				return;
			}
			memset(d->b_wptr, 'r', (size_t)v);
			d->b_wptr += v;
			drv_ack(q, mp, d, v);
		}
		return;
	case TM_STRCOPYOUT: {
		mblk_t *d = allocb(8, BPRI_MED);
		if (d == NULL) {
			drv_nak(q, mp, ENOMEM);
			return;
		}
		memcpy(d->b_wptr, "copyout", 8);
		d->b_wptr += 8;
		mcopyout(mp, (void *)4, 8, NULL, d);
		qreply(q, mp);
		return;
	}
	case TM_SHORTCOPY:
		/* long enough to name the ioctl, too short for the rest */
		mcopyin(mp, NULL, sizeof(int), NULL);
		mp->b_wptr = mp->b_rptr + 6 * sizeof(int);
		qreply(q, mp);
		return;
	case TM_LATECOPY:
		if (p->late != NULL) {
			drv_nak(q, mp, EBUSY);
			return;
		}
		v = int_data(mp, 100);
		p->late = mp;
		p->late_id = qtimeout(q, late_copy, p,
				      drv_usectohz((clock_t)v * 1000));
		if (p->late_id == 0) {	/* no callout to be had */
			p->late = NULL;
			drv_nak(q, mp, ENOMEM);
		}
		return;
	case TM_STATES:
		drv_ack(q, mp, NULL, p->states);
		return;
	case TM_CRBAD:
		drv_ack(q, mp, NULL, p->crbad);
		return;
	default:
		putnext(q, mp);		/* for modules and drivers below */
		return;
	}
}

/* M_IOCDATA: the answer to our M_COPYIN/M_COPYOUT. */
static void testmod_iocdata(queue_t *q, mblk_t *mp)
{
	struct copyresp *cp = (struct copyresp *)mp->b_rptr;
	int v;

	if (cp->cp_cmd == TM_LATECOPY || cp->cp_cmd == TM_STRCOPYOUT) {
		if (cp->cp_cmd == TM_LATECOPY) {
			struct tm_priv *p = q->q_ptr;
			freemsg((mblk_t *)cp->cp_private);
			p->states--;
		}
		if (cp->cp_rval != NULL) {
			freemsg(mp);	/* the head gave up */
			return;
		}
		drv_ack(q, mp, NULL, 0);
		return;
	}
	if (cp->cp_cmd != TM_TRANSPARENT && cp->cp_cmd != TM_TRANSOUT) {
		putnext(q, mp);
		return;
	}
	if (cp->cp_rval != NULL) {
		freemsg(mp);	/* the copy failed: the head gave up */
		return;
	}
	if (cp->cp_private == (void *)1) {
		/* copied in: add one, copy it back out */
		struct tm_priv *p = q->q_ptr;
		mblk_t *d = mp->b_cont;
		if (d == NULL || MBLKL(d) < sizeof(int)) {
			drv_nak(q, mp, EPROTO);
			return;
		}
		memcpy(&v, d->b_rptr, sizeof(v));
		v++;
		memcpy(d->b_rptr, &v, sizeof(v));
		mp->b_cont = NULL;
		mcopyout(mp, (void *)2, sizeof(int), p->uaddr, d);
		qreply(q, mp);
		return;
	}
	/* copied out: done */
	{
		struct iocblk *ioc = (struct iocblk *)mp->b_rptr;
		mp->b_datap->db_type = M_IOCACK;
		ioc->ioc_count = 0;
		ioc->ioc_error = 0;
		ioc->ioc_rval = 0;
		if (mp->b_cont) {
			freemsg(mp->b_cont);
			mp->b_cont = NULL;
		}
		qreply(q, mp);
	}
}

static int testmod_wput(queue_t *q, mblk_t *mp)
{
	struct tm_priv *p = q->q_ptr;

	switch (mp->b_datap->db_type) {
	case M_IOCTL:
		testmod_ioctl(q, mp);
		return 0;
	case M_IOCDATA:
		testmod_iocdata(q, mp);
		return 0;
	case M_FLUSH:
		mod_flush(q, mp);
		return 0;
	default:
		p->passed++;
		putnext(q, mp);
		return 0;
	}
}

static int testmod_rput(queue_t *q, mblk_t *mp)
{
	struct tm_priv *p = q->q_ptr;

	if (mp->b_datap->db_type == M_FLUSH) {
		mod_flush(q, mp);
		return 0;
	}
	p->passed++;
	putnext(q, mp);
	return 0;
}

static struct module_info testmod_minfo = { 3003, "testmod", 0, INFPSZ, 65536, 16384 };
static struct qinit testmod_rinit = { testmod_rput, NULL, testmod_open, testmod_close, NULL, &testmod_minfo, NULL };
static struct qinit testmod_winit = { testmod_wput, NULL, NULL, NULL, NULL, &testmod_minfo, NULL };
static struct streamtab testmod_info = { &testmod_rinit, &testmod_winit, NULL, NULL };

struct fmodsw testmod_fmod = {
	.f_name = "testmod", .f_str = &testmod_info, .f_flag = 0,
};
