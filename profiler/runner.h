/*
 * runner.h: run n virtual stream workers (VSWs) of a workload on one device
 * and time the phases of an iteration as JABAS's computation profiler does
 * (notes/jabas.md 2.3): warm-up iterations, then measured ones, each with
 * data loading, forward (all VSWs in parallel), backward (all VSWs, then
 * the local aggregation of their gradients into the main VSW), the main
 * VSW's optimizer step, and the weight copy to the other VSWs.
 *
 * Each VSW is a host thread with its own stream; the threads meet at a
 * barrier between phases, so a phase's time is that of its slowest VSW.
 * Two clocks time every phase:
 *   events  the backend's timestamps around each VSW's work: a phase lasts
 *           from its first VSW's start to its last VSW's end;
 *   cupti   (cuda, when the tracer is on) the union of the intervals of
 *           the phase's kernels and copies on every stream, attributed by
 *           external correlation id (iteration x 8 + phase).
 * The profiler stores the CUPTI times when it has them and checks them
 * against the events (runner_result.max_gap).
 */
#ifndef HB_RUNNER_H
#define HB_RUNNER_H

#include <stdint.h>

#include "device.h"
#include "error.h"
#include "workload.h"

enum hb_phase { HB_PH_DATA, HB_PH_FWD, HB_PH_BWD, HB_PH_UPDATE, HB_PH_COPY, HB_PH_N };

#define HB_RUNNER_MAX_VSW 64

/* Name of a phase ("data", "fwd", ...). */
const char *hb_phase_name(enum hb_phase p);

struct hb_runner_opts {
	int local_bs;            /* samples per VSW mini-batch */
	int n_vsw;               /* VSWs (1 .. HB_RUNNER_MAX_VSW) */
	int warmup, iters;       /* warm-up and measured iterations (iters >= 1) */
	uint64_t seed;           /* weights and data */
	int trace;               /* 1: tag phases for the CUPTI tracer (cuda builds only) */
	const _Atomic int *stop; /* NULL, or: once *stop is non-zero the run ends after the current
				  * iteration (a neighbour that only loads the device, hb_measure_req
				  * share; its means then cover fewer than iters iterations) */
};

struct hb_runner_result {
	double events_s[HB_PH_N];   /* mean per measured iteration, from the backend's timestamps */
	double cupti_s[HB_PH_N];    /* same from CUPTI's kernel intervals (traced only) */
	int traced;                 /* 1 when cupti_s is filled */
	double wall_s;              /* mean host wall time of a whole iteration */
	double busy_s[HB_RUNNER_MAX_VSW]; /* traced: mean busy time per stream and iteration, streams in
				     * order of their CUPTI id */
	int nbusy;
	double mem_bytes;           /* device memory in use with the state allocated (total - free) */
	long dropped;               /* CUPTI records dropped during this measurement */
	long unattributed;          /* CUPTI records with no phase */
	double max_gap;             /* largest |cupti - events| / events over phases >= 1 ms, traced only */
	double loss_first, loss_last; /* VSW 0's training loss after the first and last iteration */
};

/* Allocate the state, run warmup + iters iterations, free it.  Returns 0,
 * HB_DEV_NOMEM when the state does not fit, or -1 with err filled. */
int hb_runner_measure(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w,
		      const struct hb_runner_opts *opts, struct hb_runner_result *res, struct hb_error *err);

/* The memory search of JABAS's memory profiler: for each local batch in
 * lbs (ascending), the largest number of VSWs in [1, cap] whose state fits
 * (cap shrinks to the previous batch's result, so n_max never grows with
 * the batch), found by bisection because fitting is monotone in n; stops
 * after the first batch where not even one VSW fits.  trial_iters
 * iterations run on each trial state so that lazily allocated library
 * workspaces are counted (cuda: 1; cpu allocates everything up front: 0).
 * n_max[i] receives the result for lbs[i]; *ndone how many were searched
 * (the last may be 0).  progress(ctx, i) after each batch, may be NULL. */
typedef void hb_memsearch_progress_fn(void *ctx, int done);
int hb_memsearch(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w,
		 const int *lbs, int nlbs, int cap, int trial_iters, uint64_t seed, int *n_max, int *ndone,
		 hb_memsearch_progress_fn *progress, void *ctx, struct hb_error *err);

#endif
