/*
 * qtest.h -- bare queue pairs for queue and flow-control tests: a pair
 * whose procedures count their calls, linked by hand into chains.
 */
#ifndef STREAMS_TEST_QTEST_H
#define STREAMS_TEST_QTEST_H

#include "harness.h"

struct qcount {
	_Atomic int svc_runs;
	_Atomic int put_calls;
	_Atomic int inside;	/* threads inside a procedure now */
	_Atomic int max_inside;
};

static int qt_put(queue_t *q, mblk_t *mp)
{
	struct qcount *c = q->q_ptr;
	if (c)
		atomic_fetch_add(&c->put_calls, 1);
	putq(q, mp);
	return 0;
}

static int qt_srv(queue_t *q)
{
	struct qcount *c = q->q_ptr;
	if (c)
		atomic_fetch_add(&c->svc_runs, 1);
	return 0;
}

static int qt_open(queue_t *q, dev_t *d, int o, int s, cred_t *c)
{
	return 0;
}

static struct module_info qt_minfo = { 0, "qt", 0, INFPSZ, 100, 50 };
static struct qinit qt_srv_init = { qt_put, qt_srv, qt_open, NULL, NULL, &qt_minfo, NULL };
static struct qinit qt_nosrv_init = { qt_put, NULL, qt_open, NULL, NULL, &qt_minfo, NULL };

/* A pair with procedures on; both queues count into *c. */
static inline queue_t *qt_pair(bool srv, struct qcount *c)
{
	struct qinit *qi = srv ? &qt_srv_init : &qt_nosrv_init;
	queue_t *rq = str_allocq(qi, qi, D_MP, NULL, QP_MOD);
	if (rq == NULL) {
		fprintf(stderr, "qt_pair: no memory\n");
		exit(1);
	}
	rq->q_ptr = c;
	WR(rq)->q_ptr = c;
	rq->q_flag &= ~QPROCSOFF;
	WR(rq)->q_flag &= ~QPROCSOFF;
	return rq;
}

/* Link pair b below pair a (write flow a -> b, read flow b -> a). */
static inline void qt_link(queue_t *a_rq, queue_t *b_rq)
{
	WR(a_rq)->q_next = WR(b_rq);
	b_rq->q_next = a_rq;
}

/* The services a test's calls enabled have run: a thread outside any
 * entry (the test, as a driver's own thread would) hands what it
 * enables to the scheduler's workers. */
static inline void qt_settle(void)
{
	if (streams_quiesce(5000) != 0) {
		fprintf(stderr, "qt_settle: services still pending\n");
		exit(1);
	}
}

/* The services run so far of a pair counting into c, once settled. */
static inline int qt_runs(struct qcount *c)
{
	qt_settle();
	return atomic_load(&c->svc_runs);
}

/* q's flags once settled (the workers write them as they run what the
 * test enabled) */
static inline unsigned long qt_flag(queue_t *q)
{
	qt_settle();
	return __atomic_load_n(&q->q_flag, __ATOMIC_ACQUIRE);
}

static inline void qt_free(queue_t *rq)
{
	qt_settle();	/* (none may be on a run list as it goes) */
	flushq(rq, FLUSHALL);
	flushq(WR(rq), FLUSHALL);
	str_freeq(rq);
}

/* A message of type/band with len bytes, first byte tag. */
static inline mblk_t *qt_msg(int type, int band, size_t len, int tag)
{
	mblk_t *mp = allocb(len ? len : 1, BPRI_MED);
	if (mp == NULL)
		exit(1);
	mp->b_datap->db_type = (unsigned char)type;
	mp->b_band = (unsigned char)band;
	mp->b_rptr[0] = (unsigned char)tag;
	mp->b_wptr += len;
	mp->b_private = (void *)(long)tag;	/* tag even when len is 0 */
	return mp;
}

static inline int qt_tag(mblk_t *mp)
{
	return (int)(long)mp->b_private;
}

#endif
