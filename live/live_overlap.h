/*
 * live_overlap.h: the last micro-step of a live iteration, with every
 * gradient bucket all-reduced as soon as backward has filled it on every
 * VSW, overlapped with the rest of backward (as PyTorch DDP's bucket hooks
 * and IIDP's main VSW do).
 *
 * Threads: one per VSW runs data, forward and backward (hooked:
 * workload.h hb_wl_backward_hooked); the calling thread (the only one that
 * talks to the other ranks) waits for buckets to become ready, in
 * reduction order, and for each one
 *   copies VSW 0's slice aside when gradient metrics are asked for,
 *   sums the VSWs' slices into the main VSW's (local aggregation),
 *   scales it by the rank's share of the global batch,
 *   starts its sum over the ranks (allreduce.h hb_ar_reducer),
 * while polling the started sums; as each finishes (in order), overlapping
 * weight sync (OWS) runs the optimizer on that bucket's parameters at once.
 * Sequential weight sync (SWS) updates everything after the last sum.
 *
 * A bucket is ready when every VSW's backward has passed below its first
 * float.  On cuda a VSW's hook synchronises its stream when it passes a
 * bucket boundary (so "ready" is true on the device, not only enqueued);
 * on cpu streams are synchronous and that costs nothing.
 *
 * Collective order: every rank starts every bucket's sum, in the same
 * order, even when its own backward failed (it then sums what its buffer
 * holds and returns -1 afterwards), so the ranks' all-reduces stay matched
 * and the failure is agreed on at the iteration's end instead of hanging
 * the peers.
 */
#ifndef HB_LIVE_OVERLAP_H
#define HB_LIVE_OVERLAP_H

#include "allreduce.h"
#include "device.h"
#include "error.h"
#include "workload.h"

struct hb_live_step {
	struct hb_wl_state *st;
	const struct hb_device_ops *ops;
	struct hb_stream *const *streams; /* one per VSW */
	int n_vsw;
	struct hb_stream *comm;  /* the calling thread's stream: aggregation, scaling, optimizer */
	struct hb_ar_reducer *red;
	const long *boff, *blen; /* bucket k's slice [boff[k], boff[k] + blen[k]), reduction order */
	int nbuckets;
	float share;             /* local_bs / global batch */
	int ows;                 /* 1: update each bucket as its sum ends */
	long step;               /* the optimizer step of this iteration (1-based) */
	long batch;              /* the data batch of this micro-step */
	int accumulate;          /* 1: backward adds to the gradients (GA micro-steps before) */
	int failed;              /* 1: this rank already failed this iteration: no compute, sums only */
	float *snap;             /* NULL, or host floats for VSW 0's gradients before aggregation */
};

struct hb_live_step_times {
	double backward_done_s;  /* hb_now() when the last bucket was ready (all backward finished) */
	double snap_s;           /* time spent copying the metrics snapshot (not training work) */
};

/* Run it (see the top of the file).  0, or -1 with err set (after every
 * bucket's sum, unless the reducer itself failed). */
int hb_live_last_step(const struct hb_live_step *s, struct hb_live_step_times *tm, struct hb_error *err);

#endif
