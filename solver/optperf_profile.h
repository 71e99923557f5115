/*
 * optperf_profile.h: OptPerf inputs from the profile-driven perf model.
 *
 * Cannikin models each worker (one GPU) as a(b) = q b + s (data, forward,
 * parameter update) and P(b) = k b + m (backward), Cannikin §3.2.1, Eq. 3.
 * We fit those two lines per GPU type by least squares (gsl_fit_linear) over
 * the profiled local batches with one VSW: forward = zeta T_fb(1) plus the
 * data time, backward = (1 - zeta) T_fb(1), and the optimizer step and BN
 * sync added to s (they do not grow with the batch).  gamma is 0: the perf
 * model overlaps T_o with the whole backward (optperf_profile.c).  T_o
 * and T_u are the all-reduce times of the perf model's Eq. 3 regression for
 * the allocation; OptPerf has one communication constant per allocation
 * (Cannikin §3.2.2), so the slowest node's values are used.  max_batch is each type's
 * largest profiled local batch (memory cap).
 */
#ifndef HB_OPTPERF_PROFILE_H
#define HB_OPTPERF_PROFILE_H

#include "optperf.h"
#include "perfmodel.h"

struct hb_optperf_input {
	struct hb_optperf_node *node;  /* one per allocated GPU, owned */
	int *perf_node;                /* perf node index of each entry, owned */
	struct hb_optperf_cluster cl;  /* points at node[] */
};

/* Build OptPerf's cluster for allocation alloc (GPUs per perf node). */
int hb_optperf_from_perf(const struct hb_perf *p, const int *alloc, struct hb_optperf_input *out,
			 struct hb_error *err);
void hb_optperf_input_free(struct hb_optperf_input *in);

#endif
