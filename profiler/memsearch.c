/*
 * memsearch.c: the memory profiler's search (runner.h, hb_memsearch).
 *
 * JABAS's memory profiler (notes/jabas.md 2.3) raises n one by one, or
 * jumps by the observed memory utilisation, until an out-of-memory error.
 * Fitting is monotone in n (n VSWs hold n copies of the per-VSW buffers),
 * so bisection on [1, cap] finds the same n_max in about log2(cap) trials.
 * A trial allocates the whole state, runs trial_iters iterations on the
 * calling thread (so lazily allocated library workspaces are counted),
 * and frees it; HB_DEV_NOMEM anywhere means "does not fit".
 */
#include <stdlib.h>

#include "runner.h"

/* 1 fits, 0 does not, -1 error. */
static int trial(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w, int lbs,
		 int n, int iters, uint64_t seed, struct hb_error *err)
{
	struct hb_stream *streams[HB_RUNNER_MAX_VSW] = { 0 };
	struct hb_wl_state *st = NULL;
	int rc = -1, made = 0;

	for (; made < n; made++)
		if (ops->stream_create(dev, &streams[made], err) < 0)
			goto out;
	rc = hb_wl_state_create(ops, dev, w, lbs, n, streams, seed, &st, err);
	if (rc == HB_DEV_NOMEM) {
		rc = 0;
		goto out;
	}
	if (rc < 0)
		goto out;
	rc = -1;
	for (int it = 0; it < iters; it++) {
		for (int i = 0; i < n; i++)
			if (hb_wl_data(st, i, it, err) < 0 || hb_wl_forward(st, i, err) < 0 ||
			    hb_wl_backward(st, i, err) < 0 || ops->stream_sync(streams[i], err) < 0)
				goto out;
		if (hb_wl_aggregate(st, err) < 0 || hb_wl_update(st, err) < 0 ||
		    ops->stream_sync(streams[0], err) < 0)
			goto out;
		for (int i = 1; i < n; i++)
			if (hb_wl_copy(st, i, err) < 0 || ops->stream_sync(streams[i], err) < 0)
				goto out;
	}
	rc = 1;
out:
	hb_wl_state_free(st);
	for (int i = 0; i < made; i++)
		ops->stream_destroy(streams[i]);
	return rc;
}

int hb_memsearch(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w,
		 const int *lbs, int nlbs, int cap, int trial_iters, uint64_t seed, int *n_max, int *ndone,
		 hb_memsearch_progress_fn *progress, void *ctx, struct hb_error *err)
{
	int hi_cap = cap;

	*ndone = 0;
	if (cap < 1 || cap > HB_RUNNER_MAX_VSW)
		return hb_input_error(err, "memory search: VSW cap %d outside 1..%d", cap, HB_RUNNER_MAX_VSW);
	for (int b = 0; b < nlbs; b++) {
		int lo = 0, hi = hi_cap;  /* invariant: lo fits (0 trivially), hi + 1 does not or is the cap */

		if (b > 0 && lbs[b] <= lbs[b - 1])
			return hb_input_error(err, "memory search: local batches must ascend (%d after %d)", lbs[b],
					      lbs[b - 1]);
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;
			int fits = trial(ops, dev, w, lbs[b], mid, trial_iters, seed, err);

			if (fits < 0)
				return -1;
			if (fits)
				lo = mid;
			else
				hi = mid - 1;
		}
		n_max[b] = lo;
		*ndone = b + 1;
		if (progress)
			progress(ctx, b + 1);
		if (lo == 0)
			break;
		hi_cap = lo;
	}
	return 0;
}
