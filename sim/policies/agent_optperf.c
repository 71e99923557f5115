/*
 * agent_optperf.c: Cannikin (notes/cannikin.md), adaptive total batch with
 * OptPerf's unequal local batches on every GPU of the cluster.
 *
 * Cannikin is a library on top of AdaptDL (§3.6): the job keeps the GPUs it
 * was given (here, on a dedicated cluster, all of them; Cannikin has no
 * auto-scaler), and before every epoch its adaptive-batch engine takes the
 * total batch B* that maximises goodput B·E(B)/OptPerf(B) over AdaptDL's 50
 * geometric candidates of the batch range, then loads each GPU's share of
 * the optimal split r_opt (§3.1 step 2, §3.2).  This agent does exactly that
 * at the start and at every epoch end (§3.1: "before every epoch"; §7.1
 * item 6: B and r are re-chosen only at epoch boundaries), so it has no
 * adaptation interval and no periodic round.
 *
 * Decisions where the note leaves a choice:
 *  - Batch range [minB_G, maxB_G] of the job on this cluster (the same
 *    range JABAS gives Pollux, jabas.md §6 Table 4), clipped by what the GPUs
 *    hold without accumulation: Cannikin never mentions gradient
 *    accumulation (§7.2 item 8), so candidates above Σ max_batch are
 *    skipped (AdaptDL gives them goodput 0).
 *  - Performance model: OptPerf's per-GPU lines are fitted to the same
 *    profile the simulator's perf model uses (hb_optperf_from_perf), and
 *    that OptPerf cluster is both Cannikin's prediction and the ground truth
 *    of the iteration time: cfg.iter_s is the Eq. 7 time of the integer
 *    split on it.  Cannikin's two learning epochs (even split, then Eq. 8,
 *    §3.3) are not modelled: like every agent here it starts from the
 *    profiled model, so OptPerf applies from the first epoch (the paper
 *    reaches it by the third, §6 Fig. 9).
 *  - Noise scale: Cannikin estimates the GNS with its unbiased
 *    heterogeneous estimator (§4.3-4.4); it is modelled as exact, the true
 *    phi of the shared convergence model (hb_sim_phi) at the current total
 *    batch (minB_G at the start), with B₀ = the model's m0.  Weighted
 *    aggregation (Eq. 9) makes a step statistically the same as a
 *    homogeneous step at the same total B (§4.1, §7.1 item 8), so E(B) is
 *    the shared model's; the unequal-batch what-if penalty
 *    (hb_stats_unequal_factor, 1 unless --unequal-k) is the only difference.
 *  - Hysteresis: B changes only when goodput(B*) exceeds the current
 *    batch's goodput by AdaptDL's factor 1.05, which Cannikin's loader keeps
 *    (§3.2 [C]).  Nothing in the note says Cannikin never decreases B (that
 *    is JABAS's observation of Pollux, jabas.md §5), so B may go down when
 *    the goodput says so.
 *  - GNS monitoring overhead: charged (hb_sim_gns_overhead, a fraction of
 *    the iteration time).  Cannikin needs no extra gradient all-reduce: each
 *    node combines its local |g_i|² (before the all-reduce) with the global
 *    |g|² (after it) and only scalars are all-reduced (§4.3-4.4).  That is
 *    the same mechanism as AdaptDL's, whose per-replica norms are gathered by
 *    backward hooks before the all-reduce (pollux.md §1.3), and JABAS
 *    measured that monitoring at 14.3 % of ResNet-50's training time
 *    (jabas.md §7.7); Cannikin inherits it with its AdaptDL base and adds
 *    the Theorem 4.1 weights, an n×n solve once per configuration.
 *  - A new B on the same GPUs is applied in place (HB_APPLY_INPLACE):
 *    AdaptDL changes the batch without a restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"        /* hb_cannikin_decide, hb_agent_alloc_granted, hb_agent_gns_overhead_s */
#include "optperf.h"           /* hb_optperf_choose_batch, hb_optperf_solve, hb_optperf_iter_time */
#include "optperf_profile.h"   /* hb_optperf_from_perf: OptPerf's cluster from the perf model */
#include "policy.h"
#include "sim.h"

/* "node0:52, node1:40-41, ...": each node's local batches (a range when the
 * rounding gave its GPUs different ones). */
static void format_split(const struct hb_perf *perf, const struct hb_optperf_input *op, const long *local, long b,
			 char *buf, size_t size)
{
	size_t k = 0, used;

	used = (size_t)snprintf(buf, size, "OptPerf B %ld:", b);
	while (k < op->cl.n && used < size) {
		int node = op->perf_node[k];
		long lo = local[k], hi = local[k];
		size_t j = k;

		while (j < op->cl.n && op->perf_node[j] == node) {
			if (local[j] < lo)
				lo = local[j];
			if (local[j] > hi)
				hi = local[j];
			j++;
		}
		if (lo == hi)
			used += (size_t)snprintf(buf + used, size - used, " %s:%zux%ld", perf->nodes[node].name, j - k,
						 lo);
		else
			used += (size_t)snprintf(buf + used, size - used, " %s:%zux%ld-%ld", perf->nodes[node].name,
						 j - k, lo, hi);
		k = j;
	}
}

/* Goodput of total batch b on the OptPerf cluster (the model B* was chosen
 * with); 0 when the GPUs cannot hold b. */
static int goodput_of(const struct hb_optperf_cluster *cl, const struct hb_cannikin_input *in, long b, double *real,
		      double *out, struct hb_error *err)
{
	struct hb_optperf_solution sol;
	double lo = 0.0, hi = 0.0;

	*out = 0.0;
	for (size_t i = 0; i < cl->n; i++) {
		lo += (double)cl->node[i].min_batch;
		hi += (double)cl->node[i].max_batch;
	}
	if ((double)b < lo || (double)b > hi)
		return 0;
	if (hb_optperf_solve(cl, b, real, &sol, err) < 0)
		return -1;
	*out = (double)b * hb_optperf_efficiency(in->phi, in->m0, (double)b) / sol.iter_s;
	return 0;
}

int hb_cannikin_decide(const struct hb_cannikin_input *in, struct hb_job_config *cfg, long *local,
		       struct hb_cannikin_decision *d, struct hb_error *err)
{
	const struct hb_optperf_goodput gp = {
		.phi = in->phi,
		.m0 = in->m0,
		.b_min = in->min_gbs,
		.b_max = in->max_gbs,
		.n_candidates = HB_OPTPERF_DEFAULT_CANDIDATES,
	};
	struct hb_optperf_input op;
	long *split = NULL;
	double *dl = NULL;
	int rc = -1, equal = 1;

	memset(d, 0, sizeof(*d));
	if (!cfg->alloc)
		return hb_runtime_error(err, "cannikin: the configuration has no allocation array");
	if (hb_optperf_from_perf(in->perf, in->alloc, &op, err) < 0)
		return -1;
	{
		double cap = 0.0;

		for (size_t i = 0; i < op.cl.n; i++)
			cap += (double)op.cl.node[i].max_batch;
		if (cap < (double)in->min_gbs) {
			hb_input_error(err,
				       "cannikin: the %zu GPUs hold at most %.0f samples per iteration (sum of their "
				       "memory caps), below minB_G %ld, and Cannikin has no gradient accumulation "
				       "(notes/cannikin.md §7.2 item 8)",
				       op.cl.n, cap, in->min_gbs);
			goto out;
		}
	}
	split = malloc(op.cl.n * sizeof(*split));
	dl = malloc(op.cl.n * sizeof(*dl));
	if (!split || !dl) {
		hb_runtime_error(err, "cannikin: out of memory for %zu GPUs", op.cl.n);
		goto out;
	}
	if (hb_optperf_choose_batch(&op.cl, &gp, NULL, split, &d->choice, err) < 0) {
		hb_error_prefix(err, "cannikin: batch range [%ld, %ld], phi %.1f", in->min_gbs, in->max_gbs, in->phi);
		goto out;
	}
	if (local)
		memcpy(local, split, op.cl.n * sizeof(*split));
	if (in->cur_gbs > 0) {
		if (goodput_of(&op.cl, in, in->cur_gbs, dl, &d->cur_goodput, err) < 0)
			goto out;
		if (d->choice.batch == in->cur_gbs) {
			snprintf(d->why, sizeof(d->why), "phi %.0f: B* %ld is the current batch", in->phi,
				 d->choice.batch);
			rc = 0;
			goto out;
		}
		if (!(d->choice.goodput > in->speedup_threshold * d->cur_goodput)) {
			snprintf(d->why, sizeof(d->why), "phi %.0f: B* %ld speedup %.4f <= %.2f over B %ld: keep", in->phi,
				 d->choice.batch, d->cur_goodput > 0 ? d->choice.goodput / d->cur_goodput : 0.0,
				 in->speedup_threshold, in->cur_gbs);
			rc = 0;
			goto out;
		}
	}
	for (size_t i = 0; i < op.cl.n; i++) {
		dl[i] = (double)split[i];
		if (split[i] != split[0])
			equal = 0;
	}
	if (cfg->alloc != in->alloc)
		memcpy(cfg->alloc, in->alloc, sizeof(int) * (size_t)in->perf->nnodes);
	cfg->ngpus = (int)op.cl.n;
	cfg->global_bs = d->choice.batch;
	cfg->local_bs = equal ? (int)split[0] : 0;
	free(cfg->gpu_local_bs);
	cfg->gpu_local_bs = NULL;
	if (!equal) {
		if (!(cfg->gpu_local_bs = malloc(op.cl.n * sizeof(int)))) {
			hb_runtime_error(err, "cannikin: out of memory for %zu GPUs", op.cl.n);
			goto out;
		}
		for (size_t i = 0; i < op.cl.n; i++)
			cfg->gpu_local_bs[i] = (int)split[i];
	}
	cfg->iter_s = hb_optperf_iter_time(&op.cl, dl);
	cfg->overhead_per_iter_s = 0.0;
	cfg->eff_factor = hb_stats_unequal_factor(in->stats, dl, (int)op.cl.n);
	format_split(in->perf, &op, split, d->choice.batch, cfg->layout, sizeof(cfg->layout));
	d->apply = 1;
	if (in->cur_gbs > 0)
		snprintf(d->why, sizeof(d->why), "phi %.0f: B %ld -> B* %ld, goodput x%.4f (E %.4f, OptPerf %.4f s, %s)",
			 in->phi, in->cur_gbs, d->choice.batch,
			 d->cur_goodput > 0 ? d->choice.goodput / d->cur_goodput : 0.0, d->choice.efficiency,
			 d->choice.iter_s, hb_optperf_regime_name(d->choice.regime));
	else
		snprintf(d->why, sizeof(d->why), "phi %.0f: B* %ld of %zu candidates (E %.4f, OptPerf %.4f s, %s)",
			 in->phi, d->choice.batch, d->choice.n_feasible, d->choice.efficiency, d->choice.iter_s,
			 hb_optperf_regime_name(d->choice.regime));
	rc = 0;
out:
	free(split);
	free(dl);
	hb_optperf_input_free(&op);
	return rc;
}

/* Choose B* on the job's GPUs and apply it when the rule says so. */
static int choose(struct hb_sim *sim, struct hb_sim_job *job, const int *alloc, long cur_gbs, int how,
		  struct hb_error *err)
{
	struct hb_cannikin_input in = {
		.perf = job->perf,
		.stats = job->stats,
		.alloc = alloc,
		.phi = hb_sim_phi(sim, job, (double)(cur_gbs > 0 ? cur_gbs : job->min_gbs)),
		.m0 = job->stats->m0,
		.min_gbs = job->min_gbs,
		.max_gbs = job->max_gbs,
		.cur_gbs = cur_gbs,
		.speedup_threshold = HB_CANNIKIN_SPEEDUP_THRESHOLD,
	};
	struct hb_cannikin_decision d;
	struct hb_job_config cfg;
	int rc = 0;

	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "optperf %s: out of memory", job->name);
	if (hb_cannikin_decide(&in, &cfg, NULL, &d, err) < 0) {
		hb_error_prefix(err, "optperf %s on %s, epoch %ld", job->name, sim->cl->name, job->epoch);
		rc = -1;
	} else if (d.apply) {
		cfg.overhead_per_iter_s = hb_agent_gns_overhead_s(sim, job, cfg.iter_s);
		rc = hb_sim_apply(sim, job, &cfg, how, d.why, err);
	} else {
		hb_sim_note(sim, job, "adapt", "epoch %ld: %s", job->epoch, d.why);
	}
	hb_job_config_free(&cfg);
	return rc;
}

static int optperf_start(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	int *alloc = malloc(sizeof(int) * (size_t)job->perf->nnodes);
	int rc;

	if (!alloc)
		return hb_runtime_error(err, "optperf %s: out of memory", job->name);
	if (job->min_gbs < 1 || job->max_gbs < job->min_gbs) {
		free(alloc);
		return hb_input_error(err, "optperf %s: global batch bounds [%ld, %ld] are not a range", job->name,
				      job->min_gbs, job->max_gbs);
	}
	hb_agent_alloc_granted(job, alloc);
	rc = choose(sim, job, alloc, 0, HB_APPLY_START, err);
	free(alloc);
	return rc;
}

static int optperf_on_epoch_end(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	return choose(sim, job, job->cfg.alloc, job->cfg.global_bs, HB_APPLY_INPLACE, err);
}

const struct hb_agent_ops hb_agent_optperf = {
	.name = "optperf",
	.summary = "Cannikin: goodput-optimal total batch before every epoch, OptPerf unequal local batches, all GPUs",
	.interval = NULL,     /* sim.c treats a missing callback as "none" */
	.round_s = NULL,
	.start = optperf_start,
	.on_adapt = NULL,
	.on_epoch_end = optperf_on_epoch_end,
	.on_round = NULL,
	.free_state = NULL,
};
