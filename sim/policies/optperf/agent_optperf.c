/*
 * agent_optperf.c: Cannikin (Nie et al., Middleware '24), adaptive total batch with
 * OptPerf's unequal local batches on every GPU of the cluster.
 *
 * Cannikin is built on AdaptDL (Cannikin §4.5): the job keeps the GPUs it
 * was given (here, on a dedicated cluster, all of them; Cannikin has no
 * auto-scaler), and before every epoch its adaptive-batch engine takes the
 * total batch B* that maximises goodput B·E(B)/OptPerf(B) over AdaptDL's 50
 * geometric candidates of the batch range, then loads each GPU's share of
 * the optimal split r_opt (Cannikin §4.1, Fig. 4; the candidates are
 * AdaptDL's, adaptdl/goodput.py GoodputFunction.optimize).  This agent does
 * that at every epoch end once it has a model (§4.1: "before the start of
 * each epoch"; B and r change only at epoch boundaries), so it has no
 * adaptation interval and no periodic round.
 *
 * Decisions where the paper leaves a choice:
 *  - Batch range [minB_G, maxB_G] of the job on this cluster (the same
 *    range JABAS gives Pollux, JABAS §7.1 Table 4), clipped by what the GPUs
 *    hold without accumulation: the paper never mentions gradient
 *    accumulation, so candidates above Σ max_batch are skipped (AdaptDL
 *    gives them goodput 0).
 *  - Performance model and learning (Cannikin §4.2, Fig. 9): the job's
 *    truth is OptPerf's cluster fitted to the profile the simulator's perf
 *    model uses (hb_optperf_from_perf); cfg.iter_s is the Eq. 7 time of the
 *    split on it.  Cannikin itself starts with no model
 *    (solver/cannikin_ctl.h): epoch 1 runs the job's initial batch (minB_G,
 *    the user's B₀, as static DDP realises it on these GPUs) with an even
 *    split; epoch 2 the B* of the proportional model of epoch 1's
 *    measurements (each GPU's per-sample times, the model Eq. 8 balances;
 *    §4.5 ranks every candidate "after the initial epoch") with Eq. 8's
 *    split; from the end of epoch 2 each GPU's lines are fitted to what it
 *    measured (two distinct local batches per GPU) and B* and r_opt are
 *    chosen on that fitted model every epoch.  Measurements
 *    are exact (the truth is itself linear), so from epoch 3 the fitted
 *    model equals the truth and the choice is the profile's OptPerf.
 *  - A GPU that measured only one local batch (identical GPUs: Eq. 8
 *    repeats the even split) leaves its lines unidentified; then the
 *    profile's model is used, as for AdaptDL (§6).
 *  - When B* is kept (hysteresis) but the model's split of the current B
 *    differs from the split in use (the first model epoch after Eq. 8), the
 *    new split is loaded at the same B (§4.5: OptPerf(B*) and r_opt are
 *    recomputed every epoch).
 *  - Noise scale: Cannikin estimates the GNS with its unbiased
 *    heterogeneous estimator (§4.3-4.4); it is modelled as exact, the true
 *    phi of the shared convergence model (hb_sim_phi) at the current total
 *    batch (minB_G at the start), with B₀ = the model's m0.  Weighted
 *    aggregation (Eq. 9) makes a step statistically the same as a
 *    homogeneous step at the same total B (§4.3, §5.2.1), so E(B) is
 *    the shared model's; the unequal-batch what-if penalty
 *    (hb_stats_unequal_factor, 1 unless --unequal-k) is the only difference.
 *  - Hysteresis: B changes only when goodput(B*) exceeds the current
 *    batch's goodput by AdaptDL's factor 1.05 (adaptdl/torch/data.py,
 *    AdaptiveDataLoaderHelper._speedup_threshold), which Cannikin's loader
 *    keeps.  Nothing in the paper says Cannikin never decreases B (that is
 *    JABAS's observation of Pollux, JABAS §2.1), so B may go down when the
 *    goodput says so.
 *  - GNS monitoring overhead: charged (hb_sim_gns_overhead, a fraction of
 *    the iteration time).  Cannikin needs no extra gradient all-reduce: each
 *    node combines its local |g_i|² (before the all-reduce) with the global
 *    |g|² (after it) and only scalars are all-reduced (§4.3-4.4).  That is
 *    the same mechanism as AdaptDL's, whose per-replica norms are gathered by
 *    backward hooks before the all-reduce (adaptdl/torch/adascale.py,
 *    AdaScale._backward_hook), and JABAS measured that monitoring at 14.3 %
 *    of ResNet-50's training time (JABAS §7.7); Cannikin inherits it with its
 *    AdaptDL base and adds
 *    the Theorem 4.1 weights, an n×n solve once per configuration.
 *  - A new B on the same GPUs is applied in place (HB_APPLY_INPLACE):
 *    AdaptDL changes the batch without a restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"        /* hb_cannikin_decide, hb_agent_alloc_granted, hb_agent_gns_overhead_s */
#include "cannikin_ctl.h"      /* Cannikin's controller: even split, Eq. 8, fitted model */
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

/* Goodput of total batch b on the OptPerf cluster cl (the model B* was
 * chosen with); 0 when the GPUs cannot hold b.  real (n entries) receives
 * the real split, *sol (may be NULL) the solution. */
static int goodput_of(const struct hb_optperf_cluster *cl, const struct hb_cannikin_input *in, long b, double *real,
		      double *out, struct hb_optperf_solution *solp, struct hb_error *err)
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
	if (solp)
		*solp = sol;
	return 0;
}

/* The model's integer split of the current batch, when it differs from the
 * split in use: Cannikin keeps B but loads the new r_opt (§4.5, "Total batch
 * size selection": r_opt follows the updated performance metrics).
 * Returns 1 and fills split and d->choice for it, 0 when nothing changes. */
static int resplit_current(const struct hb_optperf_cluster *mdl, const struct hb_cannikin_input *in, double *real,
			   long *split, struct hb_cannikin_decision *d, struct hb_error *err)
{
	struct hb_optperf_solution sol;
	double g, *dl = real;
	int same = 1;

	if (goodput_of(mdl, in, in->cur_gbs, real, &g, &sol, err) < 0)
		return -1;
	if (!(g > 0))
		return 0;
	if (hb_optperf_round(mdl, in->cur_gbs, real, split, NULL, err) < 0)
		return -1;
	for (size_t i = 0; i < mdl->n; i++)
		if (split[i] != in->cur_local[i])
			same = 0;
	if (same)
		return 0;
	d->choice.batch = in->cur_gbs;
	d->choice.iter_s = sol.iter_s;
	d->choice.efficiency = hb_optperf_efficiency(in->phi, in->m0, (double)in->cur_gbs);
	d->choice.goodput = g;
	d->choice.regime = sol.regime;
	for (size_t i = 0; i < mdl->n; i++)
		dl[i] = (double)split[i];
	d->choice.int_iter_s = hb_optperf_iter_time(mdl, dl);
	return 1;
}

/* cfg for total batch b and the integer split on the truth op (iter_s is
 * the truth's Eq. 7 time of the split, whatever model chose it). */
static int fill_config(const struct hb_cannikin_input *in, const struct hb_optperf_input *op, long b,
		       const long *split, struct hb_job_config *cfg, struct hb_error *err)
{
	double *dl = malloc(op->cl.n * sizeof(double));
	int equal = 1;

	if (!dl)
		return hb_runtime_error(err, "cannikin: out of memory for %zu GPUs", op->cl.n);
	for (size_t i = 0; i < op->cl.n; i++) {
		dl[i] = (double)split[i];
		if (split[i] != split[0])
			equal = 0;
	}
	if (cfg->alloc != in->alloc)
		memcpy(cfg->alloc, in->alloc, sizeof(int) * (size_t)in->perf->nnodes);
	cfg->ngpus = (int)op->cl.n;
	cfg->global_bs = b;
	cfg->local_bs = equal ? (int)split[0] : 0;
	free(cfg->gpu_local_bs);
	cfg->gpu_local_bs = NULL;
	if (!equal) {
		if (!(cfg->gpu_local_bs = malloc(op->cl.n * sizeof(int)))) {
			free(dl);
			return hb_runtime_error(err, "cannikin: out of memory for %zu GPUs", op->cl.n);
		}
		for (size_t i = 0; i < op->cl.n; i++)
			cfg->gpu_local_bs[i] = (int)split[i];
	}
	cfg->iter_s = hb_optperf_iter_time(&op->cl, dl);
	cfg->overhead_per_iter_s = 0.0;
	cfg->eff_factor = hb_stats_unequal_factor(in->stats, dl, (int)op->cl.n);
	format_split(in->perf, op, split, b, cfg->layout, sizeof(cfg->layout));
	free(dl);
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
	const struct hb_optperf_cluster *mdl;
	struct hb_optperf_input op;
	long *split = NULL;
	double *dl = NULL;
	int rc = -1, resplit = 0;

	memset(d, 0, sizeof(*d));
	if (!cfg->alloc)
		return hb_runtime_error(err, "cannikin: the configuration has no allocation array");
	if (hb_optperf_from_perf(in->perf, in->alloc, &op, err) < 0)
		return -1;
	mdl = in->model ? in->model : &op.cl;
	if (mdl->n != op.cl.n) {
		hb_input_error(err, "cannikin: the learned model has %zu GPUs, the allocation %zu", mdl->n, op.cl.n);
		goto out;
	}
	{
		double cap = 0.0;

		for (size_t i = 0; i < op.cl.n; i++)
			cap += (double)op.cl.node[i].max_batch;
		if (cap < (double)in->min_gbs) {
			hb_input_error(err,
				       "cannikin: the %zu GPUs hold at most %.0f samples per iteration (sum of their "
				       "memory caps), below minB_G %ld, and Cannikin has no gradient accumulation "
				       "(the paper never uses it)",
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
	if (hb_optperf_choose_batch(mdl, &gp, NULL, split, &d->choice, err) < 0) {
		hb_error_prefix(err, "cannikin: batch range [%ld, %ld], phi %.1f", in->min_gbs, in->max_gbs, in->phi);
		goto out;
	}
	if (local)
		memcpy(local, split, op.cl.n * sizeof(*split));
	if (in->cur_gbs > 0) {
		int keep;

		if (goodput_of(mdl, in, in->cur_gbs, dl, &d->cur_goodput, NULL, err) < 0)
			goto out;
		keep = d->choice.batch == in->cur_gbs || !(d->choice.goodput > in->speedup_threshold * d->cur_goodput);
		if (keep && in->model && in->cur_local) {
			struct hb_optperf_choice best = d->choice;

			if ((resplit = resplit_current(mdl, in, dl, split, d, err)) < 0)
				goto out;
			if (resplit) {
				if (local)
					memcpy(local, split, op.cl.n * sizeof(*split));
				snprintf(d->why, sizeof(d->why),
					 "phi %.0f: keep B %ld (B* %ld, goodput x%.4f), new r_opt (OptPerf %.4f s, %s)",
					 in->phi, in->cur_gbs, best.batch,
					 d->cur_goodput > 0 ? best.goodput / d->cur_goodput : 0.0, d->choice.iter_s,
					 hb_optperf_regime_name(d->choice.regime));
				keep = 0;
			} else {
				d->choice = best;
			}
		}
		if (keep) {
			if (d->choice.batch == in->cur_gbs)
				snprintf(d->why, sizeof(d->why), "phi %.0f: B* %ld is the current batch", in->phi,
					 d->choice.batch);
			else
				snprintf(d->why, sizeof(d->why), "phi %.0f: B* %ld speedup %.4f <= %.2f over B %ld: keep",
					 in->phi, d->choice.batch,
					 d->cur_goodput > 0 ? d->choice.goodput / d->cur_goodput : 0.0,
					 in->speedup_threshold, in->cur_gbs);
			rc = 0;
			goto out;
		}
	}
	if (fill_config(in, &op, d->choice.batch, split, cfg, err) < 0)
		goto out;
	d->apply = 1;
	if (resplit)
		; /* why was written by the re-split */
	else if (in->cur_gbs > 0)
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

/* ---------------------------------------------------------------------------
 * The agent: Cannikin's controller on the simulated job
 */

/* Per job: the truth it measures and the controller that learns from it. */
struct optperf_state {
	struct hb_optperf_input truth;  /* the profile's OptPerf cluster on the job's GPUs: what "measuring" returns */
	struct hb_cannikin_ctl ctl;     /* Cannikin's measurements and fitted model */
	long *local;                    /* split in use, truth.cl.n entries */
	int *alloc;                     /* the GPUs the state was built for */
};

static void optperf_free(void *state, struct hb_sim_job *job)
{
	struct optperf_state *st = job->agent_state;

	(void)state;
	if (!st)
		return;
	hb_optperf_input_free(&st->truth);
	hb_cannikin_ctl_free(&st->ctl);
	free(st->local);
	free(st->alloc);
	free(st);
	job->agent_state = NULL;
}

/* One epoch's measurements at the split in use: each GPU's a(b) and P(b)
 * (Eq. 3) and the communication (γ, T_o, T_u), exact: the simulator's truth
 * is the same Eq. 7 model, so IVW has nothing to weigh here. */
static int measure(struct optperf_state *st, struct hb_error *err)
{
	const struct hb_optperf_cluster *cl = &st->truth.cl;
	double *a = malloc(cl->n * sizeof(double)), *p = malloc(cl->n * sizeof(double));
	struct hb_cannikin_comm_obs comm = {
		.gamma = cl->gamma, .overlap_s = cl->overlap_comm_s, .last_s = cl->last_comm_s,
	};
	int rc;

	if (!a || !p) {
		free(a);
		free(p);
		return hb_runtime_error(err, "optperf: out of memory for %zu GPUs", cl->n);
	}
	for (size_t i = 0; i < cl->n; i++) {
		const struct hb_optperf_node *nd = &cl->node[i];
		double b = (double)st->local[i];

		a[i] = nd->fwd_per_sample_s * b + nd->fwd_fixed_s;
		p[i] = nd->bwd_per_sample_s * b + nd->bwd_fixed_s;
	}
	rc = hb_cannikin_ctl_observe(&st->ctl, st->local, a, p, &comm, 1, err);
	free(a);
	free(p);
	return rc;
}

/* Apply total b with the controller's split of the current phase; note
 * (may be NULL) says how b was chosen. */
static int apply_phase_split(struct hb_sim *sim, struct hb_sim_job *job, struct optperf_state *st, long b, int how,
			     const char *note, struct hb_error *err)
{
	struct hb_cannikin_input in = { .perf = job->perf, .stats = job->stats, .alloc = st->alloc };
	struct hb_job_config cfg;
	char why[400];
	int rc;

	if (hb_cannikin_ctl_split(&st->ctl, b, st->local, err) < 0)
		return -1;
	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "optperf %s: out of memory", job->name);
	if ((rc = fill_config(&in, &st->truth, b, st->local, &cfg, err)) == 0) {
		cfg.overhead_per_iter_s = hb_agent_gns_overhead_s(sim, job, cfg.iter_s);
		snprintf(why, sizeof(why), "epoch %ld: B %ld, %s (no performance model yet, §4.2)%s%s", job->epoch + 1,
			 b, hb_cannikin_ctl_phase(&st->ctl) == HB_CANNIKIN_EVEN ? "even split" : "Eq. 8 split",
			 note ? "; B on the proportional model: " : "", note ? note : "");
		rc = hb_sim_apply(sim, job, &cfg, how, why, err);
	}
	hb_job_config_free(&cfg);
	return rc;
}

/* What hb_cannikin_decide needs, on model, at the job's current batch;
 * cur_local is the split in use, or NULL where Eq. 8 will replace it. */
static struct hb_cannikin_input decide_input(struct hb_sim *sim, struct hb_sim_job *job,
					     const struct optperf_state *st, const struct hb_optperf_cluster *model,
					     const long *cur_local)
{
	const long cur = job->cfg.global_bs;
	const struct hb_cannikin_input in = {
		.perf = job->perf,
		.stats = job->stats,
		.alloc = st->alloc,
		.phi = hb_sim_phi(sim, job, (double)cur),
		.m0 = job->stats->m0,
		.min_gbs = job->min_gbs,
		.max_gbs = job->max_gbs,
		.cur_gbs = cur,
		.speedup_threshold = HB_CANNIKIN_SPEEDUP_THRESHOLD,
		.model = model,
		.cur_local = cur_local,
	};

	return in;
}

/* Epoch 2: the total batch on the proportional model of epoch 1's
 * measurements (hb_cannikin_ctl_prop_model: §4.5's OptPerf_init "after the
 * initial epoch", AdaptDL's one-batch extrapolation) with AdaptDL's 1.05
 * hysteresis, split by Eq. 8 (§4.2: "B is the total batch size for the
 * upcoming epoch"). */
static int choose_eq8(struct hb_sim *sim, struct hb_sim_job *job, struct optperf_state *st, struct hb_error *err)
{
	struct hb_optperf_node *nodes = calloc(st->truth.cl.n, sizeof(*nodes));
	struct hb_optperf_cluster prop;
	const long cur = job->cfg.global_bs;
	const struct hb_cannikin_input in = decide_input(sim, job, st, &prop, NULL);
	struct hb_cannikin_decision d;
	struct hb_job_config cfg;
	int rc = -1;

	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!nodes || !cfg.alloc) {
		hb_runtime_error(err, "optperf %s: out of memory", job->name);
		goto out;
	}
	if (hb_cannikin_ctl_prop_model(&st->ctl, nodes, &prop, err) < 0 ||
	    hb_cannikin_decide(&in, &cfg, NULL, &d, err) < 0)
		goto out;
	rc = apply_phase_split(sim, job, st, d.apply ? d.choice.batch : cur, HB_APPLY_INPLACE, d.why, err);
out:
	if (rc < 0)
		hb_error_prefix(err, "optperf %s on %s, epoch %ld", job->name, sim->cl->name, job->epoch);
	hb_job_config_free(&cfg);
	free(nodes);
	return rc;
}

/* From the third epoch: B* and r_opt on the fitted model (§4.5). */
static int choose_on_model(struct hb_sim *sim, struct hb_sim_job *job, struct optperf_state *st, struct hb_error *err)
{
	struct hb_optperf_node *nodes = calloc(st->truth.cl.n, sizeof(*nodes));
	struct hb_optperf_cluster model;
	struct hb_cannikin_input in = decide_input(sim, job, st, &model, st->local);
	struct hb_cannikin_decision d;
	struct hb_job_config cfg;
	long *split = malloc(st->truth.cl.n * sizeof(*split));
	int rc = -1;

	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!nodes || !split || !cfg.alloc) {
		hb_runtime_error(err, "optperf %s: out of memory", job->name);
		goto out;
	}
	if (hb_cannikin_ctl_model(&st->ctl, nodes, &model, err) < 0)
		goto out;
	/* Identical GPUs get the same batch in epochs 1 and 2, so their fixed
	 * costs are not identified (a line through the origin makes every B
	 * equally fast and B would never grow).  On such an allocation Cannikin
	 * is AdaptDL (§6: "identical to AdaptDL" in homogeneous clusters), and
	 * AdaptDL's throughput model is what every Pollux-family agent here
	 * takes from the profile: use the profile's model. */
	if (!hb_cannikin_ctl_identified(&st->ctl))
		in.model = &st->truth.cl;
	if (hb_cannikin_decide(&in, &cfg, split, &d, err) < 0)
		goto out;
	if (d.apply) {
		memcpy(st->local, split, st->truth.cl.n * sizeof(*split));
		cfg.overhead_per_iter_s = hb_agent_gns_overhead_s(sim, job, cfg.iter_s);
		rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_INPLACE, d.why, err);
	} else {
		hb_sim_note(sim, job, "adapt", "epoch %ld: %s", job->epoch, d.why);
		rc = 0;
	}
out:
	if (rc < 0)
		hb_error_prefix(err, "optperf %s on %s, epoch %ld", job->name, sim->cl->name, job->epoch);
	hb_job_config_free(&cfg);
	free(split);
	free(nodes);
	return rc;
}

/* Epoch 1 runs at the job's initial batch as static DDP and LB-BSP run it
 * on the same GPUs: hb_agent_ddp_config's realisation of minB_G (equal local
 * batches on the profile's grid, the first batch the pollux agent takes
 * too), so that the four systems of Cannikin §5.1 start alike from the
 * user's B₀ (Table 5) and differ in what they do next.  Where DDP has no
 * plan (no grid batch fits), minB_G itself; either clipped into what the
 * GPUs hold and [minB_G, maxB_G]. */
static int optperf_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct optperf_state *st;
	long b, lo = 0, hi = 0;

	if (job->min_gbs < 1 || job->max_gbs < job->min_gbs)
		return hb_input_error(err, "optperf %s: global batch bounds [%ld, %ld] are not a range", job->name,
				      job->min_gbs, job->max_gbs);
	optperf_free(state, job);
	if (!(st = calloc(1, sizeof(*st))) || !(st->alloc = malloc(sizeof(int) * (size_t)job->perf->nnodes))) {
		free(st);
		return hb_runtime_error(err, "optperf %s: out of memory", job->name);
	}
	job->agent_state = st;
	hb_agent_alloc_granted(job, st->alloc);
	if (hb_optperf_from_perf(job->perf, st->alloc, &st->truth, err) < 0 ||
	    hb_cannikin_ctl_init(&st->ctl, &st->truth.cl, err) < 0)
		goto fail;
	if (!(st->local = calloc(st->truth.cl.n, sizeof(long)))) {
		hb_runtime_error(err, "optperf %s: out of memory", job->name);
		goto fail;
	}
	for (size_t i = 0; i < st->truth.cl.n; i++) {
		lo += st->truth.cl.node[i].min_batch;
		hi += st->truth.cl.node[i].max_batch;
	}
	if (hi < job->min_gbs) {
		hb_input_error(err,
			       "optperf %s: the %zu GPUs hold at most %ld samples per iteration (sum of their memory caps), "
			       "below minB_G %ld, and Cannikin has no gradient accumulation (the paper never uses it)",
			       job->name, st->truth.cl.n, hi, job->min_gbs);
		goto fail;
	}
	b = job->min_gbs;
	{
		struct hb_job_config ddp;
		struct hb_error derr = { 0 }; /* no DDP plan is not an error here: minB_G then */

		hb_job_config_init(&ddp, job->perf->nnodes);
		if (ddp.alloc && hb_agent_ddp_config(job->perf, st->alloc, job->min_gbs, &ddp, NULL, &derr) == 0 &&
		    ddp.global_bs <= job->max_gbs)
			b = ddp.global_bs;
		hb_job_config_free(&ddp);
	}
	if (b > hi)
		b = hi;
	if (b < lo)
		b = lo;
	if (apply_phase_split(sim, job, st, b, HB_APPLY_START, NULL, err) < 0)
		goto fail;
	return 0;
fail:
	hb_error_prefix(err, "optperf %s on %s", job->name, sim->cl->name);
	optperf_free(state, job);
	return -1;
}

static int optperf_on_epoch_end(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct optperf_state *st = job->agent_state;

	(void)state;
	if (!st)
		return hb_runtime_error(err, "optperf %s: epoch end before start", job->name);
	if (measure(st, err) < 0)
		return -1;
	if (hb_cannikin_ctl_phase(&st->ctl) == HB_CANNIKIN_EQ8)
		return choose_eq8(sim, job, st, err);
	return choose_on_model(sim, job, st, err);
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
	.free_job = optperf_free,
};
