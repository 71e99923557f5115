/*
 * agent_elastic_fixed.c: the IBM paper's fixed-batch baseline (Saxena et al.,
 * MASCOTS 2020, IV-B; notes/elastic.md §6 "Baseline"): "the same DP
 * optimizer every Δ" as the elastic scaler (arbiter_elastic.c), with each
 * job's total batch fixed at its setting, so only the GPU count is elastic.
 *
 * Four policies, one per batch setting of IV-A/IV-D (notes §6 "Batch-size
 * settings for baseline jobs"); they share the elastic agent's callbacks
 * (agent_elastic.c) and differ only in hb_elastic_fixed_batch:
 *   elastic-fixed         the job's own setting: the batch the trace asks for
 *                         (the IBM generator, --synthetic ibm, draws the
 *                         paper's Random-BS there), clipped to the model's
 *                         [minB_G, maxB_G] on the cluster (every policy keeps
 *                         B_G inside them, tests/trace_replay/policy_bounds;
 *                         the paper's settings lie inside by construction); a
 *                         job that asks for none runs at its minimum, the
 *                         simulator's convention for req_batch 0 (sim.h),
 *                         i.e. Min-BS
 *   elastic-fixed-max     Max-BS: the job's largest batch (b_max)
 *   elastic-fixed-min     Min-BS: the job's smallest batch (b_min)
 *   elastic-fixed-random  Random-BS drawn by the policy: uniform over the
 *                         multiples of minB_L in [b_min, b_max], one draw per
 *                         job from its own stream (the run's seed and the job
 *                         id), so the draw does not depend on event order;
 *                         for traces that carry no batch
 * Policy names rather than a knob, so that one `hetbatch sim` compares the
 * settings side by side (the paper's Fig. 8 compares Max-BS and Min-BS runs
 * against the elastic scaler on one workload).
 *
 * The batch never changes: every configuration a job runs has B_G equal to
 * its fixed batch (tests/arbiter_elastic_fixed checks it over traces).  The
 * split over k GPUs follows the paper's ceil(b/k) in minB_L units
 * (elastic_share.h), so a batch that does not divide evenly runs with the
 * remainder spread one unit per GPU, as OptPerf's unequal batches do.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"            /* hb_ddp_iter_time */
#include "elastic_share.h"
#include "policy.h"
#include "rng.h"

/* Random-BS streams: one per job, apart from the simulator's own streams
 * (rng.h's numbered ones are small integers). */
#define RANDOM_BS_STREAM (UINT64_C(0x1b3e) << 32)

long hb_elastic_fixed_split(long b, int unit, int k, int *lbs)
{
	long u, q, r;

	if (unit < 1 || k < 1 || b < 1 || b % unit != 0)
		return 0;
	u = b / unit;
	if (k > u)
		return 0;
	q = u / k;
	r = u % k;
	for (int i = 0; lbs && i < k; i++)
		lbs[i] = (int)(unit * (q + (i < r)));
	return unit * (q + (r > 0));
}

/* Random-BS (notes §6): uniform over the multiples of unit in [lo, hi]; lo
 * when there is none (the job then has no feasible count unless unit
 * divides lo). */
static long random_bs(const struct hb_sim *sim, const struct hb_sim_job *job, long lo, long hi, int unit)
{
	struct hb_rng r;
	long first = (lo + unit - 1) / unit, last = hi / unit;

	if (last < first)
		return lo;
	hb_rng_seed(&r, sim->opts.seed, RANDOM_BS_STREAM | (uint32_t)job->id);
	return unit * (first + (long)hb_rng_below(&r, (uint64_t)(last - first + 1)));
}

long hb_elastic_fixed_batch(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	int unit = job->perf && job->perf->min_lbs > 0 ? job->perf->min_lbs : 1;

	if (job->agent == &hb_agent_elastic_fixed)
		return job->req_batch <= job->min_gbs ? job->min_gbs
		       : job->req_batch >= job->max_gbs ? job->max_gbs : job->req_batch;
	if (job->agent == &hb_agent_elastic_fixed_max)
		return job->max_gbs;
	if (job->agent == &hb_agent_elastic_fixed_min)
		return job->min_gbs;
	if (job->agent == &hb_agent_elastic_fixed_random)
		return random_bs(sim, job, job->min_gbs, job->max_gbs, unit);
	return 0; /* the elastic scaler: the JSA picks the batch */
}

long hb_elastic_fixed_timing_batch(const int *profiled, int n, long m)
{
	for (int i = 0; i < n; i++)
		if (profiled[i] >= m)
			return profiled[i];
	return 0;
}

int hb_elastic_fixed_config(const struct hb_sim_job *job, const struct hb_elastic_entry *e, const int *alloc,
			    struct hb_job_config *cfg, struct hb_error *err)
{
	const struct hb_perf *perf = job->perf;
	int k = 0, *lbs = NULL, equal, *cand = NULL, ncand = 0;
	double *dl = NULL, iter_s = 0.0;
	long m, mt;

	for (int i = 0; i < perf->nnodes; i++)
		k += alloc[i];
	lbs = malloc(sizeof(int) * (size_t)(k > 0 ? k : 1));
	dl = malloc(sizeof(double) * (size_t)(k > 0 ? k : 1));
	if (!lbs || !dl) {
		free(lbs);
		free(dl);
		return hb_runtime_error(err, "out of memory");
	}
	m = hb_elastic_fixed_split(e->b_fixed, e->min_lbs, k, lbs);
	if (hb_perf_alloc_lbs(perf, alloc, &cand, &ncand, err) < 0) {
		free(lbs);
		free(dl);
		return -1;
	}
	mt = m > 0 ? hb_elastic_fixed_timing_batch(cand, ncand, m) : 0;
	free(cand);
	if (m <= 0 || m > e->per_gpu_max || mt <= 0) {
		free(lbs);
		free(dl);
		return hb_input_error(err, "fixed batch %ld does not split over %d GPUs in multiples of %d of at most %ld "
				      "(a profiled per-GPU batch)", e->b_fixed, k, e->min_lbs, e->per_gpu_max);
	}
	/* The slowest GPU runs the largest share and sets the pace (the
	 * paper's t_proc(ceil(b/k)) + t_comm(p, k), III-B3), timed at the
	 * profiled batch that holds it (elastic_share.h). */
	if (hb_ddp_iter_time(perf, alloc, (int)mt, 0, &iter_s, NULL, err) < 0) {
		free(lbs);
		free(dl);
		return -1;
	}
	equal = lbs[0] == lbs[k - 1];
	for (int i = 0; i < k; i++)
		dl[i] = lbs[i];
	if (cfg->alloc != alloc)
		memcpy(cfg->alloc, alloc, sizeof(int) * (size_t)perf->nnodes);
	cfg->ngpus = k;
	cfg->global_bs = e->b_fixed;
	cfg->local_bs = equal ? lbs[0] : 0;
	free(cfg->gpu_local_bs);
	cfg->gpu_local_bs = equal ? NULL : lbs;
	cfg->iter_s = iter_s;
	cfg->overhead_per_iter_s = 0.0;
	cfg->eff_factor = job->stats ? hb_stats_unequal_factor(job->stats, dl, k) : 1.0;
	if (equal)
		snprintf(cfg->layout, sizeof(cfg->layout), "fixed B_G %ld: B_L %d x %d", e->b_fixed, lbs[0], k);
	else
		snprintf(cfg->layout, sizeof(cfg->layout), "fixed B_G %ld: B_L %d x %ld + %d x %ld", e->b_fixed, lbs[0],
			 e->b_fixed / e->min_lbs % k, lbs[k - 1], k - e->b_fixed / e->min_lbs % k);
	if (equal)
		free(lbs);
	free(dl);
	return 0;
}

#define FIXED_AGENT(var, nm, what)                                                                               \
	const struct hb_agent_ops var = {                                                                        \
		.name = nm,                                                                                      \
		.summary = "IBM IV-B baseline: the elastic DP's GPU count, total batch fixed at " what,         \
		.interval = NULL,                                                                                \
		.round_s = NULL,                                                                                 \
		.start = hb_elastic_agent_start,                                                                 \
		.on_adapt = NULL,                                                                                \
		.on_epoch_end = NULL,                                                                            \
		.on_round = NULL,                                                                                \
		.free_job = hb_elastic_agent_free_job,                                                           \
		.on_grant = hb_elastic_agent_on_grant,                                                           \
	}

FIXED_AGENT(hb_agent_elastic_fixed, "elastic-fixed", "the job's own setting (its request; none: Min-BS)");
FIXED_AGENT(hb_agent_elastic_fixed_max, "elastic-fixed-max", "the job's maximum (Max-BS)");
FIXED_AGENT(hb_agent_elastic_fixed_min, "elastic-fixed-min", "the job's minimum (Min-BS)");
FIXED_AGENT(hb_agent_elastic_fixed_random, "elastic-fixed-random", "a seeded uniform draw per job (Random-BS)");
