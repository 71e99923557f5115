/*
 * trace.h: GPU activity records and their attribution to phases.
 *
 * The CUPTI tracer (cupti.c) turns CUPTI's activity buffers into a struct
 * hb_trace: one record per kernel, memcpy or memset that ran on the device
 * (start and end in ns, the stream, CUPTI's correlation id), plus the
 * external-correlation pairs (correlation id -> external id) CUPTI emits for
 * work launched while the host thread had an external id pushed.  The
 * profiler pushes ext_id = iteration * HB_TRACE_EXT_SLOTS + phase around
 * each phase of each virtual stream worker (VSW), so grouping the records
 * by external id gives, per phase of each iteration:
 *
 *   union_s   the length of the union of the phase's intervals across all
 *             streams: the wall time the device spent on that phase, with
 *             the VSWs' overlap counted once;
 *   busy      per stream, the union of that stream's intervals (a VSW's own
 *             busy time; intervals of one stream can overlap only when
 *             CUPTI reports it so, e.g. graph launches);
 *   sum_s     the plain sum of the lengths (sum_s > union_s shows overlap).
 *
 * This file is pure C (no CUDA headers) and builds everywhere, so tests and
 * the CPU-only build can feed it hand-made records.
 *
 * Timestamps are uint64 ns as CUPTI gives them (values near 1e18 are
 * normal); the attribution subtracts the trace's earliest start before any
 * floating-point arithmetic, so lengths are exact to the ns for traces up
 * to 2^53 ns (104 days) long.
 */
#ifndef HB_TRACE_H
#define HB_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* What kind of device activity a record is. */
enum hb_trace_kind {
	HB_TRACE_KERNEL = 1,      /* a kernel (CUPTI CONCURRENT_KERNEL) */
	HB_TRACE_MEMCPY = 2,      /* a memory copy (any direction) */
	HB_TRACE_MEMSET = 3,      /* a memory set */
};

/* The external id of records whose correlation id has no external id
 * (work launched with nothing pushed): the "unattributed" group. */
#define HB_TRACE_NO_EXT UINT64_MAX

/* External ids per iteration: the profiler's phases (data, forward,
 * backward, update, copy, ...) number 0 .. HB_TRACE_EXT_SLOTS - 1. */
#define HB_TRACE_EXT_SLOTS 8

static inline uint64_t hb_trace_ext_id(uint64_t iteration, unsigned phase)
{
	return iteration * HB_TRACE_EXT_SLOTS + phase;
}

/* One kernel, memcpy or memset as it ran on the device. */
struct hb_trace_rec {
	uint64_t start_ns, end_ns;  /* device timestamps, the interval [start_ns, end_ns) */
	uint32_t stream;            /* CUPTI stream id (one per VSW) */
	uint32_t corr;              /* CUPTI correlation id of the launching API call */
	uint8_t kind;               /* enum hb_trace_kind */
};

/* One CUPTI external-correlation pair: the work with correlation id `corr`
 * was launched while `ext_id` was pushed on the launching thread. */
struct hb_trace_corr {
	uint32_t corr;              /* CUPTI correlation id */
	uint64_t ext_id;            /* the id pushed with hb_cupti_push */
};

/* A trace: growable arrays, owned by the struct (hb_trace_init /
 * hb_trace_free).  A zero-filled struct is a valid empty trace. */
struct hb_trace {
	struct hb_trace_rec *recs;  /* activity records, in the order they arrived */
	size_t nrecs;               /* records in recs */
	size_t recs_cap;            /* allocated length of recs */
	struct hb_trace_corr *corrs;/* external-correlation pairs, in arrival order */
	size_t ncorrs;              /* pairs in corrs */
	size_t corrs_cap;           /* allocated length of corrs */
	long dropped;               /* records CUPTI dropped (no buffer space), as
				     * cuptiActivityGetNumDroppedRecords reported them */
	long untimed;               /* records CUPTI delivered without timestamps
				     * (start = end = 0: no device memory for
				     * them); counted here, not stored in recs */
};

void hb_trace_init(struct hb_trace *t);
/* Free the arrays; t is an empty trace afterwards. */
void hb_trace_free(struct hb_trace *t);
/* Empty t (records, pairs and counts) but keep the allocations. */
void hb_trace_clear(struct hb_trace *t);

/* Append one record or pair (copied).  Records are not checked here;
 * hb_trace_group rejects bad ones.  -1 only when out of memory. */
int hb_trace_add_rec(struct hb_trace *t, const struct hb_trace_rec *r, struct hb_error *err);
int hb_trace_add_corr(struct hb_trace *t, uint32_t corr, uint64_t ext_id, struct hb_error *err);

/* Move everything in src (records, pairs, dropped and untimed counts) to
 * the end of dst and leave src empty.  -1 only when out of memory, with
 * both traces unchanged. */
int hb_trace_move(struct hb_trace *dst, struct hb_trace *src, struct hb_error *err);

/* A half-open interval [start, end) in any unit. */
struct hb_interval {
	double start, end;
};

/*
 * The total length of the union of n intervals, in their unit, into
 * *length: sorts a copy by start and sweeps.  Zero-length intervals add
 * nothing; nested, identical and overlapping ones are counted once; the
 * order of the input does not matter and the input is not changed.
 * Errors: end < start (input error naming the index and the values; NaN
 * bounds count as bad too), out of memory.
 */
int hb_interval_union(const struct hb_interval *iv, size_t n, double *length, struct hb_error *err);

/* One stream's share of a group. */
struct hb_trace_busy {
	uint32_t stream;            /* CUPTI stream id */
	double busy_s;              /* union of this stream's intervals in the group, seconds */
	long nrecs;                 /* the group's records on this stream */
};

/* The records of one external id (one phase of one iteration). */
struct hb_trace_group {
	uint64_t ext_id;            /* external id; HB_TRACE_NO_EXT for the records that have none */
	double union_s;             /* union of all the group's intervals, all streams, seconds */
	double sum_s;               /* sum of the intervals' lengths, seconds (>= union_s) */
	uint64_t first_start_ns;    /* earliest start */
	uint64_t last_end_ns;       /* latest end */
	long nrecs;                 /* records in the group */
	int nstreams;               /* entries in streams */
	struct hb_trace_busy *streams; /* per stream, by ascending stream id; points into the
					* block hb_trace_group returned */
};

/*
 * Attribute t's records to external ids in one pass (O(n log n)): each
 * record's correlation id is looked up in t's pairs; records without a
 * pair (or with no external id pushed) form the group HB_TRACE_NO_EXT.
 * *out gets *n groups sorted by ascending ext_id, so the unattributed
 * group, when present, is the last one; groups with no records do not
 * appear.  An empty trace gives *n = 0 and *out = NULL.  Free *out with
 * hb_trace_group_free (one block: the groups and their streams).
 * t->dropped and t->untimed are not folded in: callers check them.
 * Errors (input): a record with end_ns < start_ns (the message names its
 * index, times, stream and correlation id); a correlation id paired with
 * two different external ids.  Out of memory (runtime).
 */
int hb_trace_group(const struct hb_trace *t, struct hb_trace_group **out, int *n, struct hb_error *err);
void hb_trace_group_free(struct hb_trace_group *groups);

/* The group with this external id among n groups from hb_trace_group, or
 * NULL (binary search). */
const struct hb_trace_group *hb_trace_group_find(const struct hb_trace_group *groups, int n, uint64_t ext_id);

/* Group g's share of one stream, or NULL when it has no records there. */
const struct hb_trace_busy *hb_trace_group_stream(const struct hb_trace_group *g, uint32_t stream);

#endif
