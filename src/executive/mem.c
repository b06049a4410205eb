/*
 * mem.c -- allocation of message blocks and data blocks.
 *
 * How it works.  An mblk is an object of its own (class STR_CLASS_MBLK).
 * A data chunk is a dblk followed by its buffer, in one of seven size
 * classes, or a bare dblk for esballoc (STR_CLASS_ESB).  Every free chunk
 * in a cache carries a paired mblk (db_mblk), so allocb() takes one object
 * from the cache and has both.  freeb() of the last reference to a dblk
 * pairs the freeing mblk with the chunk and caches them together; freeb()
 * of any other reference caches the mblk alone.  Which mblk came with
 * which dblk therefore never matters (dupb, pullupmsg swap freely).
 *
 * Caches: each thread has a magazine per class (struct strmag, no lock);
 * full or empty magazines exchange STR_MAGBATCH objects with a per-class
 * depot under a lock.  A depot keeps up to its base size for good and
 * grows to DEPOT_BURST times that while a burst needs it (a writer that
 * queues 64 K one-byte messages before its reader runs, whose frees then
 * come back all at once); what the depot held unused for a whole
 * DEPOT_TRIM_NS beyond its base goes back to the C heap, a batch at a time,
 * whenever the depot is next used.  Past the burst size frees go to the
 * heap at once.
 * Sanitizer builds and STREAMS_NOCACHE=1 bypass the caches so that use
 * after free is caught.
 *
 * Memory limit: streams_set_memlimit() makes the buffer bytes in use
 * count (one atomic add per allocation while a limit is set; the block is
 * marked DBLK_CHARGED and uncharged when freed); past the limit allocb()
 * fails and bufcall callbacks wait for memory (timer.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strsubr.h"

/* Buffer bytes of each data class. */
static const size_t str_class_size[STR_NDATACLASSES] = {
	128, 512, 1024, 2048, 4096, 16384, 65536
};
/* Objects a depot keeps per class before returning them to the heap. */
static const int str_depot_max[STR_NCLASSES] = {
	8192, 4096, 2048, 1024, 512, 128, 32, 4096, 16384
};

#define CHUNK_HDR	((sizeof(dblk_t) + 15) & ~(size_t)15)

#define DEPOT_BURST	8		/* a depot grows to this times its base */
#define DEPOT_TRIM_NS	1000000000ull	/* surplus unused this long is freed */
#define DEPOT_TRIM_BATCH 256		/* objects freed per depot call */

struct strdepot {
	strlock_t lock;
	int count;		/* objects in slot[]; lock */
	int max;		/* base size, kept for good; const */
	int cap;		/* slots in slot[] (grows to max * DEPOT_BURST);
				   lock */
	int low;		/* fewest objects held since trimmed; lock */
	uint64_t trimmed;	/* when the current trim interval began;
				   lock */
	void **slot;		/* stack of free objects; lock */
};

static struct strdepot str_depot[STR_NCLASSES];
static int str_nocache;
size_t strmem_limit;			/* 0: none; atomic (LIMIT()): any
					   thread may change it while
					   others allocate */
static _Atomic size_t strmem_used;	/* buffer bytes, while limited */

void strmem_init(void)
{
	const char *e = getenv("STREAMS_NOCACHE");

#if STR_ASAN
	str_nocache = 1;
#endif
	if (e != NULL && *e != '\0' && *e != '0')
		str_nocache = 1;
	for (int i = 0; i < STR_NCLASSES; i++) {
		str_depot[i].max = str_depot_max[i];
		str_depot[i].cap = 0;
		str_depot[i].low = 0;
		str_depot[i].trimmed = 0;
		str_depot[i].slot = NULL;
		str_depot[i].count = 0;
	}
}

static inline int size_class(size_t size)
{
	if (likely(size <= 128))
		return 0;
	if (size <= 1024)
		return size <= 512 ? 1 : 2;
	if (size <= 4096)
		return size <= 2048 ? 3 : 4;
	if (size <= 16384)
		return 5;
	if (size <= 65536)
		return 6;
	return STR_CLASS_BIG;
}

/* ---- heap objects ---- */

/* Objects taken from and given back to the C heap, counted for
 * streams_stats() (by the thread doing it, if it has a strthread). */
static inline void heap_count(int id)
{
	struct strthread *t = str_self_tls;

	if (t != NULL)
		strstat_add(t, id, 1);
}

static void heap_release(void *p)
{
	heap_count(ST_HEAP_FREE);
	free(p);
}

static void *heap_new(int cls, size_t bigsize)
{
	size_t sz;

	if (cls == STR_CLASS_MBLK)
		sz = sizeof(mblk_t);
	else if (cls == STR_CLASS_ESB)
		sz = CHUNK_HDR;
	else if (cls == STR_CLASS_BIG)
		sz = CHUNK_HDR + bigsize;
	else
		sz = CHUNK_HDR + str_class_size[cls];
	heap_count(ST_HEAP_NEW);
	return malloc(sz);
}

/* ---- depot ---- */

static void heap_free_obj(int cls, void *obj);

/* Beyond its base size (lock held): take into out[] (at most
 * DEPOT_TRIM_BATCH) the objects that stayed unused for a whole interval,
 * for the caller to free after unlocking; how many. */
static int depot_trim(struct strdepot *d, void **out)
{
	uint64_t now;
	int n;

	if (d->count <= d->max)
		return 0;
	now = str_now_ns();
	if (now - d->trimmed < DEPOT_TRIM_NS)
		return 0;
	n = d->count - d->max;
	if (n > d->low)
		n = d->low;
	if (n > DEPOT_TRIM_BATCH)
		n = DEPOT_TRIM_BATCH;
	d->count -= n;
	d->low -= n;
	memcpy(out, d->slot + d->count, (size_t)n * sizeof(void *));
	if (d->low == 0 || d->count <= d->max) {
		/* this interval's surplus is gone: watch a new one */
		d->trimmed = now;
		d->low = d->count;
	}
	return n;
}

/* Move up to n objects from the depot into buf; returns how many. */
static int depot_get(int cls, void **buf, int n)
{
	struct strdepot *d = &str_depot[cls];
	void *trim[DEPOT_TRIM_BATCH];
	int got, nt;

	strlock(&d->lock);
	got = d->count < n ? d->count : n;
	d->count -= got;
	if (got)
		memcpy(buf, d->slot + d->count, got * sizeof(void *));
	if (d->count < d->low)
		d->low = d->count;
	nt = depot_trim(d, trim);
	strunlock(&d->lock);
	for (int i = 0; i < nt; i++)
		heap_free_obj(cls, trim[i]);
	return got;
}

/* Room for n more objects (lock held): grow slot[] up to the burst size. */
static int depot_room(struct strdepot *d, int n)
{
	int want = d->count + n, cap = d->cap;

	if (want > cap && cap < d->max * DEPOT_BURST) {
		void **p;

		if (cap == 0)
			cap = d->max;
		while (cap < want && cap < d->max * DEPOT_BURST)
			cap *= 2;
		if (cap > d->max * DEPOT_BURST)
			cap = d->max * DEPOT_BURST;
		p = realloc(d->slot, (size_t)cap * sizeof(void *));
		if (p != NULL) {
			d->slot = p;
			d->cap = cap;
		}
	}
	return d->cap - d->count;
}

/* Move n objects from buf into the depot; what does not fit is freed. */
static void depot_put(int cls, void **buf, int n)
{
	struct strdepot *d = &str_depot[cls];
	void *trim[DEPOT_TRIM_BATCH];
	int room, nt;

	strlock(&d->lock);
	room = depot_room(d, n);
	if (room > n)
		room = n;
	if (room > 0) {
		memcpy(d->slot + d->count, buf, room * sizeof(void *));
		d->count += room;
	}
	nt = depot_trim(d, trim);
	strunlock(&d->lock);
	for (int i = room; i < n; i++)
		heap_free_obj(cls, buf[i]);
	for (int i = 0; i < nt; i++)
		heap_free_obj(cls, trim[i]);
}

/* ---- object level: one object of a class, with caches ---- */

static void *obj_get_slow(struct strthread *t, int cls)
{
	struct strmag *m = &t->t_mag[cls];

	m->count = depot_get(cls, m->slot, STR_MAGBATCH);
	if (m->count > 0)
		return m->slot[--m->count];
	return NULL;
}

static inline void *mblk_get(struct strthread *t)
{
	struct strmag *m = &t->t_mag[STR_CLASS_MBLK];
	void *o;

	if (likely(m->count > 0))
		return m->slot[--m->count];
	if (!str_nocache && (o = obj_get_slow(t, STR_CLASS_MBLK)) != NULL)
		return o;
	return heap_new(STR_CLASS_MBLK, 0);
}

static inline void mblk_put(struct strthread *t, mblk_t *mp)
{
	struct strmag *m = &t->t_mag[STR_CLASS_MBLK];

	if (unlikely(str_nocache)) {
		heap_release(mp);
		return;
	}
	if (unlikely(m->count == STR_MAGSIZE)) {
		m->count -= STR_MAGBATCH;
		depot_put(STR_CLASS_MBLK, m->slot + m->count, STR_MAGBATCH);
	}
	m->slot[m->count++] = mp;
}

/* Free a chunk and its paired mblk to the heap. */
static void heap_free_obj(int cls, void *obj)
{
	if (cls != STR_CLASS_MBLK) {
		dblk_t *dbp = obj;
		heap_release(dbp->db_mblk);
	}
	heap_release(obj);
}

/* A chunk of class cls with a paired mblk, or NULL. */
static inline dblk_t *chunk_get(struct strthread *t, int cls, size_t size)
{
	struct strmag *m;
	dblk_t *dbp;
	mblk_t *mp;

	if (likely(cls != STR_CLASS_BIG)) {
		m = &t->t_mag[cls];
		if (likely(m->count > 0))
			return m->slot[--m->count];
		if (!str_nocache && (dbp = obj_get_slow(t, cls)) != NULL)
			return dbp;
	}
	dbp = heap_new(cls, size);
	if (dbp == NULL)
		return NULL;
	mp = mblk_get(t);
	if (mp == NULL) {
		heap_release(dbp);
		return NULL;
	}
	dbp->db_mblk = mp;
	dbp->db_class = (unsigned char)cls;
	if (cls == STR_CLASS_ESB) {
		dbp->db_base = dbp->db_lim = NULL;
	} else {
		dbp->db_base = (unsigned char *)dbp + CHUNK_HDR;
	}
	dbp->db_chunk = dbp;
	return dbp;
}

/* Cache a chunk whose paired mblk is db_mblk. */
static inline void chunk_put(struct strthread *t, dblk_t *dbp)
{
	int cls = dbp->db_class;
	struct strmag *m;

	if (unlikely(cls == STR_CLASS_BIG || str_nocache)) {
		heap_free_obj(cls, dbp);
		return;
	}
	m = &t->t_mag[cls];
	if (unlikely(m->count == STR_MAGSIZE)) {
		m->count -= STR_MAGBATCH;
		depot_put(cls, m->slot + m->count, STR_MAGBATCH);
	}
	m->slot[m->count++] = dbp;
}

/* ---- memory limit ---- */

#define LIMIT()	__atomic_load_n(&strmem_limit, __ATOMIC_RELAXED)

static bool mem_charge(size_t size)
{
	size_t used = atomic_fetch_add(&strmem_used, size) + size;
	size_t lim = LIMIT();

	if (used > lim && lim != 0) {
		atomic_fetch_sub(&strmem_used, size);
		return false;
	}
	return true;
}

static void mem_uncharge(size_t size)
{
	atomic_fetch_sub(&strmem_used, size);
}

int streams_set_memlimit(size_t bytes)
{
	if (!str_initialised)
		str_init();
	__atomic_store_n(&strmem_limit, bytes, __ATOMIC_RELAXED);
	return 0;
}

/* ---- public allocation ---- */

static inline void mblk_init(mblk_t *mp, dblk_t *dbp)
{
	mp->b_next = mp->b_prev = mp->b_cont = NULL;
	mp->b_rptr = mp->b_wptr = dbp->db_base;
	mp->b_datap = dbp;
	mp->b_band = 0;
	mp->b_pad1 = 0;
	mp->b_flag = 0;
	mp->b_merged = 0;
	mp->b_queue = NULL;
	mp->b_private = NULL;
}

static mblk_t *alloc_fail(struct strthread *t)
{
	strstat_add(t, ST_ALLOC_FAIL, 1);
	return NULL;
}

/* When the C heap last refused a block (0: never); bufcalls wait a
 * while after it (timer.c), as testb cannot see it coming. */
_Atomic uint64_t strmem_heap_fail_ns;

static mblk_t *heap_fail(struct strthread *t)
{
	atomic_store_explicit(&strmem_heap_fail_ns, str_now_ns(),
			      memory_order_relaxed);
	return alloc_fail(t);
}

mblk_t *allocb(size_t size, unsigned int pri)
{
	struct strthread *t = str_self();
	int cls = size_class(size);
	unsigned short charged = 0;
	dblk_t *dbp;
	mblk_t *mp;

	(void)pri;
	if (unlikely(size > (size_t)SSIZE_MAX / 2))
		return alloc_fail(t);
	if (unlikely(LIMIT() != 0)) {
		if (!mem_charge(size))
			return alloc_fail(t);
		charged = DBLK_CHARGED;
	}
	dbp = chunk_get(t, cls, size);
	if (unlikely(dbp == NULL)) {
		if (charged)
			mem_uncharge(size);
		return heap_fail(t);
	}
	mp = dbp->db_mblk;
	dbp->db_frtnp = NULL;
	dbp->db_lim = dbp->db_base + size;
	dbp->db_ref = 1;
	dbp->db_type = M_DATA;
	dbp->db_flag = charged;
	dbp->db_size = size;
	mblk_init(mp, dbp);
	strstat_add(t, ST_DBLK_ALLOC, 1);
	strstat_add(t, ST_MBLK_ALLOC, 1);
	return mp;
}

static mblk_t *esballoc_common(unsigned char *base, size_t size,
			       frtn_t *frtn)
{
	struct strthread *t = str_self();
	dblk_t *dbp;
	mblk_t *mp;

	if (unlikely(frtn == NULL || frtn->free_func == NULL ||
		     (base == NULL && size != 0)))
		return alloc_fail(t);
	dbp = chunk_get(t, STR_CLASS_ESB, 0);
	if (unlikely(dbp == NULL))
		return heap_fail(t);
	mp = dbp->db_mblk;
	dbp->db_frtnp = frtn;
	dbp->db_base = base;
	dbp->db_lim = base + size;
	dbp->db_ref = 1;
	dbp->db_type = M_DATA;
	dbp->db_flag = DBLK_ESB;
	dbp->db_size = size;
	mblk_init(mp, dbp);
	strstat_add(t, ST_DBLK_ALLOC, 1);
	strstat_add(t, ST_MBLK_ALLOC, 1);
	return mp;
}

mblk_t *esballoc(unsigned char *base, size_t size, unsigned int pri,
		 frtn_t *frtn)
{
	(void)pri;
	return esballoc_common(base, size, frtn);
}

mblk_t *desballoc(unsigned char *base, size_t size, unsigned int pri,
		  frtn_t *frtn)
{
	(void)pri;
	return esballoc_common(base, size, frtn);
}

int testb(size_t size, unsigned int pri)
{
	(void)pri;
	if (size > (size_t)SSIZE_MAX / 2)
		return 0;
	size_t lim = LIMIT();

	if (lim != 0 && atomic_load(&strmem_used) + size > lim)
		return 0;
	return 1;
}

/* Drop the reference of mp to its dblk; the last one frees the data. */
void freeb(mblk_t *mp)
{
	struct strthread *t;
	dblk_t *dbp;

	if (unlikely(mp == NULL)) {
		str_bad("freeb(NULL)", mp);
		return;
	}
	dbp = mp->b_datap;
	if (unlikely(dbp == NULL)) {
		str_bad("freeb of a freed or corrupt message", mp);
		return;
	}
	t = str_self();
	strstat_add(t, ST_MBLK_FREE, 1);
	mp->b_datap = NULL;	/* catches double frees of this mblk */
	/* db_ref == 1: ours is the only reference, nobody can add one */
	if (__atomic_load_n(&dbp->db_ref, __ATOMIC_ACQUIRE) != 1) {
		if (__atomic_sub_fetch(&dbp->db_ref, 1, __ATOMIC_ACQ_REL) != 0) {
			mblk_put(t, mp);
			return;
		}
	} else {
		dbp->db_ref = 0;
	}
	/* last reference: pair mp with the chunk and cache both */
	strstat_add(t, ST_DBLK_FREE, 1);
	if (unlikely(dbp->db_flag & DBLK_ESB)) {
		frtn_t *fr = dbp->db_frtnp;
		dbp->db_frtnp = NULL;
		strstat_add(t, ST_ESB_FREE, 1);
		fr->free_func(fr->free_arg);
	} else if (unlikely(dbp->db_flag & DBLK_CHARGED)) {
		/* only what was charged: the limit may have been set or
		 * cleared while this block lived */
		mem_uncharge(dbp->db_size);
	}
	dbp->db_mblk = mp;
	chunk_put(t, dbp);
	if (unlikely(atomic_load_explicit(&strbufcall_waiting,
					  memory_order_relaxed)))
		strbufcall_kick();
}

void freemsg(mblk_t *mp)
{
	while (mp != NULL) {
		mblk_t *next = mp->b_cont;
		freeb(mp);
		mp = next;
	}
}

mblk_t *dupb(mblk_t *bp)
{
	struct strthread *t;
	mblk_t *mp;

	if (unlikely(bp == NULL || bp->b_datap == NULL)) {
		str_bad("dupb of a NULL or freed message", bp);
		return NULL;
	}
	t = str_self();
	mp = mblk_get(t);
	if (unlikely(mp == NULL))
		return alloc_fail(t);
	__atomic_add_fetch(&bp->b_datap->db_ref, 1, __ATOMIC_RELAXED);
	mp->b_next = mp->b_prev = mp->b_cont = NULL;
	mp->b_rptr = bp->b_rptr;
	mp->b_wptr = bp->b_wptr;
	mp->b_datap = bp->b_datap;
	mp->b_band = bp->b_band;
	mp->b_pad1 = 0;
	mp->b_flag = bp->b_flag;
	mp->b_merged = 0;
	mp->b_queue = NULL;
	mp->b_private = NULL;
	strstat_add(t, ST_MBLK_ALLOC, 1);
	return mp;
}

/* fork(): no depot lock may be copied taken into the child.  The prepare
 * handler runs after every other library prepare handler (it is
 * registered first), so nothing allocates between it and the fork. */
void strmem_atfork_prepare(void)
{
	for (int cls = 0; cls < STR_NCLASSES; cls++)
		strlock(&str_depot[cls].lock);
}

/* (the child too: its forking thread holds them) */
void strmem_atfork_parent(void)
{
	for (int cls = STR_NCLASSES; cls-- > 0;)
		strunlock(&str_depot[cls].lock);
}

/* Return a thread's cached objects to the depots (thread exit). */
void strmem_thread_flush(struct strthread *t)
{
	for (int cls = 0; cls < STR_NCLASSES; cls++) {
		struct strmag *m = &t->t_mag[cls];
		if (m->count > 0)
			depot_put(cls, m->slot, m->count);
		m->count = 0;
	}
}

/* Free every cached object (shutdown). */
void strmem_shutdown(void)
{
	struct strthread *t = str_self_tls;

	if (t != NULL)
		strmem_thread_flush(t);
	/* chunks first: they carry mblks, which are freed with them */
	for (int cls = 0; cls < STR_NCLASSES; cls++) {
		struct strdepot *d = &str_depot[cls];
		strlock(&d->lock);
		for (int i = 0; i < d->count; i++)
			heap_free_obj(cls, d->slot[i]);
		d->count = 0;
		free(d->slot);
		d->slot = NULL;
		d->cap = 0;
		strunlock(&d->lock);
	}
}
