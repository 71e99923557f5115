/*
 * trace.c: activity records, interval unions and their attribution to
 * external ids (phases).  See trace.h for the meaning of each result.
 *
 * Attribution, in one pass of sorts and sweeps (O(n log n)):
 *   1. check every record (end >= start) and find the earliest start, the
 *      base all interval arithmetic is relative to (exact doubles);
 *   2. sort a copy of the correlation pairs by correlation id, rejecting an
 *      id paired with two external ids, and look each record's id up;
 *   3. sort the records by (external id, stream, start): each run of one
 *      (external id, stream) is already in start order, so one sweep gives
 *      that stream's busy time; each run of one external id, re-sorted by
 *      start, gives the group's union.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* ------------------------------------------------------------------------
 * The trace container
 */

void hb_trace_init(struct hb_trace *t)
{
	memset(t, 0, sizeof(*t));
}

void hb_trace_free(struct hb_trace *t)
{
	free(t->recs);
	free(t->corrs);
	hb_trace_init(t);
}

void hb_trace_clear(struct hb_trace *t)
{
	t->nrecs = 0;
	t->ncorrs = 0;
	t->dropped = 0;
	t->untimed = 0;
}

/* Make room for `need` elements of `elem` bytes in *arr (capacity *cap),
 * doubling; the array is unchanged on failure. */
static int reserve(void **arr, size_t *cap, size_t need, size_t elem, struct hb_error *err)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 256;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return hb_runtime_error(err, "trace: %zu entries do not fit in memory", need);
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return hb_runtime_error(err, "trace: %zu entries do not fit in memory", need);
	p = realloc(*arr, ncap * elem);
	if (!p)
		return hb_runtime_error(err, "trace: out of memory for %zu entries", ncap);
	*arr = p;
	*cap = ncap;
	return 0;
}

int hb_trace_add_rec(struct hb_trace *t, const struct hb_trace_rec *r, struct hb_error *err)
{
	if (reserve((void **)&t->recs, &t->recs_cap, t->nrecs + 1, sizeof(*t->recs), err))
		return -1;
	t->recs[t->nrecs++] = *r;
	return 0;
}

int hb_trace_add_corr(struct hb_trace *t, uint32_t corr, uint64_t ext_id, struct hb_error *err)
{
	if (reserve((void **)&t->corrs, &t->corrs_cap, t->ncorrs + 1, sizeof(*t->corrs), err))
		return -1;
	t->corrs[t->ncorrs].corr = corr;
	t->corrs[t->ncorrs].ext_id = ext_id;
	t->ncorrs++;
	return 0;
}

int hb_trace_move(struct hb_trace *dst, struct hb_trace *src, struct hb_error *err)
{
	if (dst == src)
		return 0;
	if (dst->nrecs == 0 && dst->ncorrs == 0) {
		/* Nothing to keep in dst: take src's arrays whole. */
		long dropped = dst->dropped + src->dropped;
		long untimed = dst->untimed + src->untimed;

		free(dst->recs);
		free(dst->corrs);
		*dst = *src;
		dst->dropped = dropped;
		dst->untimed = untimed;
		hb_trace_init(src);
		return 0;
	}
	if (reserve((void **)&dst->recs, &dst->recs_cap, dst->nrecs + src->nrecs, sizeof(*dst->recs), err) ||
	    reserve((void **)&dst->corrs, &dst->corrs_cap, dst->ncorrs + src->ncorrs, sizeof(*dst->corrs), err))
		return -1;
	if (src->nrecs)
		memcpy(dst->recs + dst->nrecs, src->recs, src->nrecs * sizeof(*src->recs));
	if (src->ncorrs)
		memcpy(dst->corrs + dst->ncorrs, src->corrs, src->ncorrs * sizeof(*src->corrs));
	dst->nrecs += src->nrecs;
	dst->ncorrs += src->ncorrs;
	dst->dropped += src->dropped;
	dst->untimed += src->untimed;
	hb_trace_clear(src);
	return 0;
}

/* ------------------------------------------------------------------------
 * Interval unions
 */

static int cmp_interval_start(const void *a, const void *b)
{
	const struct hb_interval *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Union length of n intervals sorted by start, all with end >= start: keep
 * one open run [cs, ce) and close it at the first interval that starts
 * after it ends. */
static double sweep_sorted(const struct hb_interval *iv, size_t n)
{
	double total = 0, cs, ce;
	size_t i;

	if (n == 0)
		return 0;
	cs = iv[0].start;
	ce = iv[0].end;
	for (i = 1; i < n; i++) {
		if (iv[i].start > ce) {
			total += ce - cs;
			cs = iv[i].start;
			ce = iv[i].end;
		} else if (iv[i].end > ce) {
			ce = iv[i].end;
		}
	}
	return total + (ce - cs);
}

int hb_interval_union(const struct hb_interval *iv, size_t n, double *length, struct hb_error *err)
{
	struct hb_interval *copy;
	size_t i;

	for (i = 0; i < n; i++)
		if (!(iv[i].end >= iv[i].start)) /* also catches NaN */
			return hb_input_error(err, "interval %zu: end %.17g < start %.17g", i, iv[i].end,
					      iv[i].start);
	*length = 0;
	if (n == 0)
		return 0;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return hb_runtime_error(err, "interval union: out of memory for %zu intervals", n);
	memcpy(copy, iv, n * sizeof(*copy));
	qsort(copy, n, sizeof(*copy), cmp_interval_start);
	*length = sweep_sorted(copy, n);
	free(copy);
	return 0;
}

/* ------------------------------------------------------------------------
 * Attribution
 */

/* A record reduced to what grouping needs. */
struct item {
	uint64_t ext;       /* external id, HB_TRACE_NO_EXT when none */
	uint64_t start;     /* ns */
	uint64_t end;       /* ns */
	uint32_t stream;
};

static int cmp_corr(const void *a, const void *b)
{
	const struct hb_trace_corr *x = a, *y = b;

	if (x->corr != y->corr)
		return (x->corr > y->corr) - (x->corr < y->corr);
	return (x->ext_id > y->ext_id) - (x->ext_id < y->ext_id);
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->ext != y->ext)
		return (x->ext > y->ext) - (x->ext < y->ext);
	if (x->stream != y->stream)
		return (x->stream > y->stream) - (x->stream < y->stream);
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_corr_key(const void *key, const void *elem)
{
	uint32_t k = *(const uint32_t *)key, c = ((const struct hb_trace_corr *)elem)->corr;

	return (k > c) - (k < c);
}

/* The external id paired with corr in the sorted pairs, or HB_TRACE_NO_EXT
 * (any of several identical pairs will do). */
static uint64_t lookup_ext(const struct hb_trace_corr *map, size_t n, uint32_t corr)
{
	const struct hb_trace_corr *p = n ? bsearch(&corr, map, n, sizeof(*map), cmp_corr_key) : NULL;

	return p ? p->ext_id : HB_TRACE_NO_EXT;
}

/* Sorted copy of t's pairs; a correlation id with two external ids is an
 * input error (identical repeats are fine). */
static int corr_map(const struct hb_trace *t, struct hb_trace_corr **out, struct hb_error *err)
{
	struct hb_trace_corr *map;
	size_t i;

	*out = NULL;
	if (t->ncorrs == 0)
		return 0;
	map = malloc(t->ncorrs * sizeof(*map));
	if (!map)
		return hb_runtime_error(err, "trace: out of memory for %zu correlation pairs", t->ncorrs);
	memcpy(map, t->corrs, t->ncorrs * sizeof(*map));
	qsort(map, t->ncorrs, sizeof(*map), cmp_corr);
	for (i = 1; i < t->ncorrs; i++)
		if (map[i].corr == map[i - 1].corr && map[i].ext_id != map[i - 1].ext_id) {
			hb_input_error(err, "trace: correlation id %" PRIu32 " paired with external ids %" PRIu64
				       " and %" PRIu64, map[i].corr, map[i - 1].ext_id, map[i].ext_id);
			free(map);
			return -1;
		}
	*out = map;
	return 0;
}

int hb_trace_group(const struct hb_trace *t, struct hb_trace_group **out, int *n, struct hb_error *err)
{
	struct hb_trace_corr *map = NULL;
	struct item *items = NULL;
	struct hb_interval *iv = NULL;
	struct hb_trace_group *groups, *g;
	struct hb_trace_busy *busy;
	size_t i, j, k, ngroups = 0, nbusy = 0;
	uint64_t base = UINT64_MAX;
	int rc = -1;

	*out = NULL;
	*n = 0;
	for (i = 0; i < t->nrecs; i++) {
		const struct hb_trace_rec *r = &t->recs[i];

		if (r->end_ns < r->start_ns)
			return hb_input_error(err, "trace record %zu: end_ns %" PRIu64 " < start_ns %" PRIu64
					      " (stream %" PRIu32 ", correlation id %" PRIu32 ")",
					      i, r->end_ns, r->start_ns, r->stream, r->corr);
		if (r->start_ns < base)
			base = r->start_ns;
	}
	if (corr_map(t, &map, err))
		return -1;
	if (t->nrecs == 0) {
		free(map);
		return 0;
	}

	items = malloc(t->nrecs * sizeof(*items));
	iv = malloc(t->nrecs * sizeof(*iv));
	if (!items || !iv) {
		hb_runtime_error(err, "trace: out of memory for %zu records", t->nrecs);
		goto out;
	}
	for (i = 0; i < t->nrecs; i++) {
		items[i].ext = lookup_ext(map, t->ncorrs, t->recs[i].corr);
		items[i].start = t->recs[i].start_ns;
		items[i].end = t->recs[i].end_ns;
		items[i].stream = t->recs[i].stream;
	}
	qsort(items, t->nrecs, sizeof(*items), cmp_item);
	for (i = 0; i < t->nrecs; i++) {
		/* Relative to the earliest start: exact in a double below 2^53 ns. */
		iv[i].start = (double)(items[i].start - base);
		iv[i].end = (double)(items[i].end - base);
		if (i == 0 || items[i].ext != items[i - 1].ext) {
			ngroups++;
			nbusy++;
		} else if (items[i].stream != items[i - 1].stream) {
			nbusy++;
		}
	}
	if (ngroups > INT_MAX) {
		hb_runtime_error(err, "trace: %zu groups, more than an int counts", ngroups);
		goto out;
	}

	/* One block: the groups, then every group's streams. */
	groups = malloc(ngroups * sizeof(*groups) + nbusy * sizeof(*busy));
	if (!groups) {
		hb_runtime_error(err, "trace: out of memory for %zu groups", ngroups);
		goto out;
	}
	busy = (struct hb_trace_busy *)(groups + ngroups);

	g = groups;
	for (i = 0; i < t->nrecs; i = j) {
		/* items[i, j): one external id. */
		for (j = i; j < t->nrecs && items[j].ext == items[i].ext; j++)
			;
		g->ext_id = items[i].ext;
		g->nrecs = (long)(j - i);
		g->nstreams = 0;
		g->streams = busy;
		g->sum_s = 0;
		g->first_start_ns = items[i].start;
		g->last_end_ns = items[i].end;
		for (k = i; k < j; k++) {
			if (items[k].start < g->first_start_ns)
				g->first_start_ns = items[k].start;
			if (items[k].end > g->last_end_ns)
				g->last_end_ns = items[k].end;
			g->sum_s += (double)(items[k].end - items[k].start) * 1e-9;
		}
		for (k = i; k < j;) {
			/* items[k, m): one stream, already in start order. */
			size_t m;

			for (m = k; m < j && items[m].stream == items[k].stream; m++)
				;
			busy->stream = items[k].stream;
			busy->nrecs = (long)(m - k);
			busy->busy_s = sweep_sorted(iv + k, m - k) * 1e-9;
			busy++;
			g->nstreams++;
			k = m;
		}
		qsort(iv + i, j - i, sizeof(*iv), cmp_interval_start);
		g->union_s = sweep_sorted(iv + i, j - i) * 1e-9;
		g++;
	}
	*out = groups;
	*n = (int)ngroups;
	rc = 0;
out:
	free(map);
	free(items);
	free(iv);
	return rc;
}

void hb_trace_group_free(struct hb_trace_group *groups)
{
	free(groups);
}

static int cmp_group_key(const void *key, const void *elem)
{
	uint64_t k = *(const uint64_t *)key, e = ((const struct hb_trace_group *)elem)->ext_id;

	return (k > e) - (k < e);
}

const struct hb_trace_group *hb_trace_group_find(const struct hb_trace_group *groups, int n, uint64_t ext_id)
{
	return n > 0 ? bsearch(&ext_id, groups, (size_t)n, sizeof(*groups), cmp_group_key) : NULL;
}

static int cmp_busy_key(const void *key, const void *elem)
{
	uint32_t k = *(const uint32_t *)key, s = ((const struct hb_trace_busy *)elem)->stream;

	return (k > s) - (k < s);
}

const struct hb_trace_busy *hb_trace_group_stream(const struct hb_trace_group *g, uint32_t stream)
{
	return g->nstreams > 0 ? bsearch(&stream, g->streams, (size_t)g->nstreams, sizeof(*g->streams),
					 cmp_busy_key) : NULL;
}
