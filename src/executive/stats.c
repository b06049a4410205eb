/*
 * stats.c -- executive statistics.
 *
 * Counters live in each thread's struct strthread and are written only by
 * that thread (strstat_add).  streams_stats() sums the live threads and
 * the totals folded in by threads that have exited.
 */
#include <errno.h>
#include <string.h>

#include "strsubr.h"

extern pthread_mutex_t strthread_lock;
extern struct strthread *strthread_list;
static uint64_t strstat_dead[ST_NCOUNTERS];	/* strthread_lock */

void strstat_fold(struct strthread *t)
{
	for (int i = 0; i < ST_NCOUNTERS; i++) {
		strstat_dead[i] += atomic_load_explicit(&t->t_stat[i],
							memory_order_relaxed);
		atomic_store_explicit(&t->t_stat[i], 0, memory_order_relaxed);
	}
}

extern int strtimer_npending(int *bufcalls);
extern int strsched_nworkers(void);

int streams_stats(struct strstats *st)
{
	uint64_t sum[ST_NCOUNTERS];
	struct strthread *t;
	int nbuf = 0;

	if (st == NULL)
		return -EINVAL;
	if (!str_initialised)
		str_init();
	pthread_mutex_lock(&strthread_lock);
	memcpy(sum, strstat_dead, sizeof(sum));
	for (t = strthread_list; t != NULL; t = t->t_next)
		for (int i = 0; i < ST_NCOUNTERS; i++)
			sum[i] += atomic_load_explicit(&t->t_stat[i],
						       memory_order_relaxed);
	pthread_mutex_unlock(&strthread_lock);

	memset(st, 0, sizeof(*st));
	st->mblk_alloc = sum[ST_MBLK_ALLOC];
	st->mblk_free = sum[ST_MBLK_FREE];
	st->dblk_alloc = sum[ST_DBLK_ALLOC];
	st->dblk_free = sum[ST_DBLK_FREE];
	st->msg_alloc = sum[ST_DBLK_ALLOC];
	st->alloc_fail = sum[ST_ALLOC_FAIL];
	st->esb_free_calls = sum[ST_ESB_FREE];
	st->queue_alloc = sum[ST_QUEUE_ALLOC];
	st->queue_free = sum[ST_QUEUE_FREE];
	st->stream_alloc = sum[ST_STREAM_ALLOC];
	st->stream_free = sum[ST_STREAM_FREE];
	st->svc_runs = sum[ST_SVC_RUNS];
	st->qenables = sum[ST_QENABLES];
	st->backenables = sum[ST_BACKENABLES];
	st->syncq_defers = sum[ST_SYNCQ_DEFERS];
	st->bufcalls = sum[ST_BUFCALLS];
	st->bufcall_runs = sum[ST_BUFCALL_RUNS];
	st->timeouts = sum[ST_TIMEOUTS];
	st->timeout_runs = sum[ST_TIMEOUT_RUNS];
	st->grace_periods = sum[ST_GRACE_PERIODS];
	st->heap_new = sum[ST_HEAP_NEW];
	st->heap_free = sum[ST_HEAP_FREE];
	st->bias_grants = sum[ST_BIAS_GRANTS];
	st->bias_revokes = sum[ST_BIAS_REVOKES];
	st->mblk_inuse = (int64_t)(st->mblk_alloc - st->mblk_free);
	st->dblk_inuse = (int64_t)(st->dblk_alloc - st->dblk_free);
	st->queue_inuse = (int64_t)(st->queue_alloc - st->queue_free);
	st->stream_inuse = (int64_t)(st->stream_alloc - st->stream_free);
	st->timeouts_pending = strtimer_npending(&nbuf);
	st->bufcalls_pending = nbuf;
	st->workers = strsched_nworkers();
	return 0;
}
