/*
 * agent_pollux.c: the Pollux and Pollux-AS job agents as JABAS ported them
 * to a dedicated heterogeneous cluster (notes/jabas.md §5), with the
 * PolluxAgent machinery of notes/pollux.md §3.1.
 *
 * Pollux (jabas.md §5, §7.3 Fig. 17):
 *  - runs on ALL GPUs of the cluster for the whole job, one worker per GPU
 *    with the same local batch B_L everywhere and gradient accumulation (the
 *    DDP layout of solver/ddp.h; §10.17: B_L is limited by the smallest GPU
 *    memory and the slowest GPU paces every iteration);
 *  - starts at B_G = minB_G (the artifact's B_G^init, §10.13) and changes B_G
 *    only at epoch ends (§5 "changes B_G once per epoch"), never downwards;
 *  - chooses (m, s) = argmax GOODPUT on the current placement (pollux.md Eq.
 *    13) with the throughput model theta_sys fitted to the job's own
 *    observations (pollux.md §2.1) and the efficiency from the gradient noise
 *    scale (Eq. 6);
 *  - pays the GNS monitoring cost every iteration (§7.7: 14.3 % of the
 *    iteration for ResNet-50; hb_sim_gns_overhead);
 *  - runs out of memory on LLaMA2-7B "because of GNS monitoring" (§5, §7.2).
 *
 * Pollux-AS (jabas.md §5): the same agent starting on ONE node, the slowest
 * one, plus Pollux's goodput auto-scaling rule (pollux.md §7.4) evaluated at
 * every epoch end: if the fitted goodput per GPU of the current allocation
 * exceeds U = 2/3 of the ideal (single-GPU) goodput, add nodes one at a time
 * while the enlarged allocation keeps at least L = 1/2 of ideal; a change of
 * GPUs is a checkpoint-restart.
 *
 * Decisions taken where the notes leave room (each one also at its code):
 *  - Observations.  What the agent "measures" for the configuration it ran
 *    is the perf model's DDP time (the simulator's ground truth) times a
 *    log-normal factor exp(sigma z), sigma = 2 %, z from sim->rng_agent:
 *    per-epoch averages of a real step timer are that close.  Like AdaptDL's
 *    profile, observations of the same (N, K, m, s) are averaged into one
 *    fit sample.  The per-pass compute time T_grad (what an accumulation
 *    step measures, pollux.md §2.1 [ART]) is observed the same way from the
 *    slowest GPU's extra-micro-step time.
 *  - Gradient statistics.  phi is the job's TRUE noise scale at its current
 *    B_G (hb_sim_phi), noise-free, as the Pollux artifact's simulator uses it
 *    (pollux.md §8.1 item 5); AdaptDL's estimate is an EMA over thousands of
 *    iterations, so an epoch-end reading is accurate.  rng_gns is not used.
 *  - Fit cadence.  The real agent re-fits theta_sys every 30 s (pollux.md
 *    §3.1) but the JABAS port changes B_G only once per epoch (jabas.md §5),
 *    so a fit between two epoch ends cannot change anything the simulator
 *    sees: the agent fits once, at each decision, on all observations so far
 *    (the last 30 s fit before the decision).  round_s is therefore 0.  The
 *    fit uses the exploration priors and the artifact's regularisers with a
 *    seed derived from --seed, the job and the decision number.
 *  - Realising (m, s).  hb_goodput_argmax works on integer m; B_L must be a
 *    profiled local batch that fits every GPU type used (with the GNS
 *    buffer, below).  The agent keeps the argmax's s and takes the feasible
 *    B_L nearest to m (ties to the larger) for which the realised B_G stays
 *    in [current B_G, maxB_G]; when none does it keeps the current layout.
 *  - GNS memory.  AdaptDL keeps one more gradient-sized buffer per GPU for
 *    the noise-scale estimate (the previous or pre-conditioned gradient) in
 *    FP32: 4 bytes per parameter (GNS_BYTES_PER_PARAM).  A local batch is
 *    feasible for Pollux when it is profiled (n_max >= 1) on the GPU type
 *    AND the analytic footprint of one worker (models/analytic.h, the
 *    project's memory model; profiles record n_max, not bytes) plus that
 *    buffer fits the GPU.  This is what makes LLaMA2-7B OOM on cluster C
 *    (42.6 + 27 GB > 48 GB) while GPT3-XL fits, as JABAS reports.
 *  - Initial B_G.  minB_G realised on the job's GPUs with the fewest
 *    micro-steps and the nearest feasible B_L at or above minB_G/(K(s+1));
 *    on 16 GPUs with minB_L = 32 (ResNet-50) that is 512, not 256.
 *  - Pollux-AS ideal goodput (§10 item 16).  "Ideal scaling from a single
 *    GPU" = K x G_1, where G_1 = max GOODPUT of the FITTED model on one GPU
 *    with the memory limit of the slowest GPU type in the current allocation
 *    and without the never-decrease floor (the best one GPU could do; with
 *    the floor the efficiency term would cancel and the rule would scale
 *    from the first epoch).  The fitted model is homogeneous (pollux.md
 *    A17) and learnt from iterations paced by the slowest GPU held, so its
 *    one-GPU goodput is that of the slowest GPU type held.
 *  - Pollux-AS node order.  Nodes are added slowest-first (ascending FP32
 *    TFLOPS of the node's GPU type, ties in cluster order), continuing the
 *    "start on the slowest node" rule: the pace stays set by the slowest GPU
 *    held, which keeps the homogeneous fitted model valid for the enlarged
 *    allocation.
 *  - Pollux-AS L test.  The L test applies to every node added, the first
 *    one included: a U trigger whose first enlargement the same model
 *    predicts below L x ideal adds nothing (the restart would be wasted by
 *    the agent's own estimate).  Pollux-AS never releases nodes (jabas.md §5
 *    describes scale-up only) and applies no 2x exploration cap (a
 *    PolluxSched rule, pollux.md §3.2, not part of the port).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h" /* hb_agent_alloc_granted, hb_agent_gns_overhead_s */
#include "analytic.h"  /* hb_analytic_mem_bytes: one worker's memory footprint */
#include "ddp.h"       /* hb_ddp_iter_time: the DDP layout's true time */
#include "goodput.h"   /* theta_sys fit, efficiency, (m, s) argmax */
#include "sim.h"

/* ---- knobs --------------------------------------------------------------- */

/* Log-normal measurement noise on observed iteration times (see top). */
#define POLLUX_OBS_SIGMA 0.02

/* Pollux's auto-scaling thresholds (jabas.md §5, pollux.md §7.4). */
#define POLLUX_AS_U (2.0 / 3.0)
#define POLLUX_AS_L 0.5

/* GNS monitoring buffer: one FP32 gradient-sized tensor per GPU (see top). */
#define GNS_BYTES_PER_PARAM 4.0

/* ---- state --------------------------------------------------------------- */

/* One observed configuration: AdaptDL keys its profile by placement and
 * batch and averages repeated measurements. */
struct pollux_obs {
	int num_nodes;       /* N: nodes holding a worker */
	int num_replicas;    /* K: GPUs */
	int local_bs;        /* m */
	int accum_steps;     /* s: extra micro-steps */
	double iter_sum;     /* sum of observed T_iter, s */
	double compute_sum;  /* sum of observed T_grad (one pass), s */
	long count;          /* observations summed */
};

struct pollux_state {
	struct pollux_obs *obs;   /* history, one entry per distinct configuration */
	size_t nobs, cap_obs;
	long decisions;           /* epoch-end decisions taken (fit seeds) */
	int local_bs;             /* current B_L */
	int accum_steps;          /* current extra micro-steps */
	int *order;               /* AS: cluster nodes, slowest first */
	int held;                 /* AS: nodes order[0 .. held-1] are held */
};

/* The decision for one allocation. */
struct pollux_choice {
	int feasible;             /* 0: no feasible B_L, or no (m, s) in the limits */
	int num_nodes, num_replicas;
	struct hb_goodput_config argmax; /* the fitted model's argmax (m, s) */
	int local_bs;             /* realised B_L */
	int accum_steps;          /* realised s */
	long global_bs;           /* B_L K (s + 1) */
};

static long pollux_interval(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	(void)sim;
	(void)job;
	return 0; /* no adaptation points: B_G changes at epoch ends only (jabas.md §5) */
}

static void pollux_free_state(struct hb_sim_job *job)
{
	struct pollux_state *st = job->agent_state;

	if (!st)
		return;
	free(st->obs);
	free(st->order);
	free(st);
	job->agent_state = NULL;
}

static int state_new(struct hb_sim_job *job, struct pollux_state **out, struct hb_error *err)
{
	struct pollux_state *st = calloc(1, sizeof(*st));

	if (!st)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	job->agent_state = st;
	*out = st;
	return 0;
}

/* ---- memory and layouts ---------------------------------------------------- */

static const struct hb_gpu *node_gpu(const struct hb_sim *sim, int node)
{
	return &sim->cat->gpus[sim->cl->nodes[node].gpu];
}

/* One worker at local_bs plus the GNS buffer fits the node's GPU. */
static int gns_fits(const struct hb_sim *sim, const struct hb_sim_job *job, int node, int local_bs)
{
	const struct hb_gpu *g = node_gpu(sim, node);
	double need = hb_analytic_mem_bytes(g, job->model, local_bs, 1) + GNS_BYTES_PER_PARAM * job->model->params;

	return need <= g->mem_bytes;
}

/* Local batches Pollux can run on alloc: profiled on every type used
 * (hb_perf_alloc_lbs) and fitting with the GNS buffer.  Ascending. */
static int feasible_lbs(const struct hb_sim *sim, const struct hb_sim_job *job, const int *alloc, int **out,
			int *n, struct hb_error *err)
{
	int *lbs = NULL, nl = 0, k = 0;

	if (hb_perf_alloc_lbs(job->perf, alloc, &lbs, &nl, err) < 0)
		return -1;
	for (int i = 0; i < nl; i++) {
		int ok = 1;

		for (int node = 0; node < sim->cl->nnodes && ok; node++)
			if (alloc[node] > 0 && !gns_fits(sim, job, node, lbs[i]))
				ok = 0;
		if (ok)
			lbs[k++] = lbs[i];
	}
	*out = lbs;
	*n = k;
	return 0;
}

/* The feasible B_L nearest to m (ties to the larger) with lo <= B_L K (s+1)
 * <= hi; 0 when none. */
static int nearest_lbs(const int *lbs, int n, double m, int num_replicas, int accum_steps, long lo, long hi)
{
	int best = 0;
	double bd = INFINITY;

	for (int i = 0; i < n; i++) {
		long b = (long)lbs[i] * num_replicas * (accum_steps + 1);
		double d = fabs((double)lbs[i] - m);

		if (b < lo || b > hi)
			continue;
		if (d <= bd) { /* ascending: <= sends a tie to the larger */
			bd = d;
			best = lbs[i];
		}
	}
	return best;
}

static int alloc_shape(const struct hb_sim_job *job, const int *alloc, int *nodes, int *gpus, struct hb_error *err)
{
	return hb_perf_alloc_gpus(job->perf, alloc, gpus, nodes, err);
}

/* Fill cfg for (alloc, B_L, s) with the perf model's time. */
static int make_config(struct hb_sim *sim, struct hb_sim_job *job, const int *alloc, int local_bs, int accum_steps,
		       struct hb_job_config *cfg, struct hb_error *err)
{
	int nodes, gpus;

	hb_job_config_init(cfg, sim->cl->nnodes);
	if (!cfg->alloc)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	memcpy(cfg->alloc, alloc, sizeof(int) * (size_t)sim->cl->nnodes);
	if (alloc_shape(job, alloc, &nodes, &gpus, err) < 0 ||
	    hb_ddp_iter_time(job->perf, alloc, local_bs, accum_steps, &cfg->iter_s, NULL, err) < 0) {
		hb_job_config_free(cfg);
		return -1;
	}
	cfg->ngpus = gpus;
	cfg->local_bs = local_bs;
	cfg->global_bs = (long)local_bs * gpus * (accum_steps + 1);
	/* GNS monitoring every iteration (jabas.md §5, §7.7). */
	cfg->overhead_per_iter_s = hb_agent_gns_overhead_s(sim, job, cfg->iter_s);
	cfg->eff_factor = 1.0;
	snprintf(cfg->layout, sizeof(cfg->layout), "B_L %d x %d GPUs on %d nodes, GA %d", local_bs, gpus, nodes,
		 accum_steps);
	return 0;
}

static int apply(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const int *alloc,
		 int local_bs, int accum_steps, int how, const char *why, struct hb_error *err)
{
	struct hb_job_config cfg;
	int rc;

	if (make_config(sim, job, alloc, local_bs, accum_steps, &cfg, err) < 0)
		return -1;
	rc = hb_sim_apply(sim, job, &cfg, how, why, err);
	hb_job_config_free(&cfg);
	if (rc == 0) {
		st->local_bs = local_bs;
		st->accum_steps = accum_steps;
	}
	return rc;
}

static int oom_error(const struct hb_sim *sim, const struct hb_sim_job *job, const int *alloc, struct hb_error *err)
{
	const char *gpu = "?";
	double best = INFINITY;

	/* Name the tightest GPU type: the one with the least memory held. */
	for (int node = 0; node < sim->cl->nnodes; node++)
		if (alloc[node] > 0 && node_gpu(sim, node)->mem_bytes < best) {
			best = node_gpu(sim, node)->mem_bytes;
			gpu = node_gpu(sim, node)->name;
		}
	return hb_runtime_error(err,
				"OOM: model %s on cluster %s: no multiple of minB_L %d fits GPU %s (%.1f GB) with GNS "
				"monitoring (one worker plus a %.1f GB FP32 gradient buffer)",
				job->model->name, sim->cl->name, job->perf->min_lbs, gpu, best / 1e9,
				GNS_BYTES_PER_PARAM * job->model->params / 1e9);
}

/* ---- observations and the fit ---------------------------------------------- */

/* Record what the job measured while running its current configuration. */
static int observe(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	const int *alloc = job->cfg.alloc;
	int nodes, gpus;
	double iter_s, compute_s = 0.0;
	struct pollux_obs *o = NULL;

	if (alloc_shape(job, alloc, &nodes, &gpus, err) < 0 ||
	    hb_ddp_iter_time(job->perf, alloc, st->local_bs, st->accum_steps, &iter_s, NULL, err) < 0)
		return -1;
	/* T_grad: what one extra micro-step costs the slowest GPU. */
	for (int node = 0; node < sim->cl->nnodes; node++) {
		double t0, t1;

		if (alloc[node] == 0)
			continue;
		if (hb_perf_iter_time(job->perf, alloc, node, st->local_bs, 1, 0, &t0, err) < 0 ||
		    hb_perf_iter_time(job->perf, alloc, node, st->local_bs, 1, 1, &t1, err) < 0)
			return -1;
		if (t1 - t0 > compute_s)
			compute_s = t1 - t0;
	}
	iter_s *= exp(POLLUX_OBS_SIGMA * hb_rng_normal(&sim->rng_agent));
	compute_s *= exp(POLLUX_OBS_SIGMA * hb_rng_normal(&sim->rng_agent));

	for (size_t i = 0; i < st->nobs; i++) {
		struct pollux_obs *e = &st->obs[i];

		if (e->num_nodes == nodes && e->num_replicas == gpus && e->local_bs == st->local_bs &&
		    e->accum_steps == st->accum_steps) {
			o = e;
			break;
		}
	}
	if (!o) {
		if (st->nobs == st->cap_obs) {
			size_t cap = st->cap_obs ? 2 * st->cap_obs : 16;
			struct pollux_obs *na = realloc(st->obs, cap * sizeof(*na));

			if (!na)
				return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
			st->obs = na;
			st->cap_obs = cap;
		}
		o = &st->obs[st->nobs++];
		memset(o, 0, sizeof(*o));
		o->num_nodes = nodes;
		o->num_replicas = gpus;
		o->local_bs = st->local_bs;
		o->accum_steps = st->accum_steps;
	}
	o->iter_sum += iter_s;
	o->compute_sum += compute_s;
	o->count++;
	return 0;
}

/* theta_sys fitted to every observation so far (pollux.md §2.1). */
static int fit(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_goodput_fit_result *res,
	       struct hb_error *err)
{
	struct hb_goodput_sample *smp;
	struct hb_goodput_fit_options opt;
	int rc;

	if (st->nobs == 0)
		return hb_runtime_error(err, "%s: job %s: no observation to fit", job->agent->name, job->name);
	smp = calloc(st->nobs, sizeof(*smp));
	if (!smp)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	for (size_t i = 0; i < st->nobs; i++) {
		const struct pollux_obs *o = &st->obs[i];

		smp[i].num_nodes = o->num_nodes;
		smp[i].num_replicas = o->num_replicas;
		smp[i].local_bsz = o->local_bs;
		smp[i].accum_steps = o->accum_steps;
		smp[i].iter_s = o->iter_sum / (double)o->count;
		smp[i].compute_s = o->compute_sum / (double)o->count;
	}
	hb_goodput_fit_options_default(&opt);
	/* Odd multipliers spread job and decision over the seed's bits (hb_rng_seed
	 * then mixes it with SplitMix64), so every fit draws its own restarts. */
	opt.seed = sim->opts.seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(job->id + 1)) ^
		   (0xBF58476D1CE4E5B9ULL * (uint64_t)(st->decisions + 1));
	rc = hb_goodput_fit(smp, st->nobs, &opt, res, err);
	free(smp);
	if (rc < 0)
		hb_error_prefix(err, "%s: job %s: theta_sys fit", job->agent->name, job->name);
	return rc;
}

/* ---- the goodput decision -------------------------------------------------- */

/* Best (m, s) of the fitted model on alloc with M >= floor_bs, realised as a
 * DDP layout (see "Realising (m, s)" at the top). */
static int choose(const struct hb_sim *sim, struct hb_sim_job *job, const struct hb_goodput_params *theta,
		  const struct hb_grad_params *grad, const int *alloc, long floor_bs, struct pollux_choice *out,
		  struct hb_error *err)
{
	struct hb_goodput_limits lim;
	int *lbs = NULL, nl = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	if (alloc_shape(job, alloc, &out->num_nodes, &out->num_replicas, err) < 0 ||
	    feasible_lbs(sim, job, alloc, &lbs, &nl, err) < 0)
		return -1;
	if (nl == 0 || (long)lbs[0] * out->num_replicas > job->max_gbs) {
		free(lbs);
		return 0;
	}
	hb_goodput_limits_default(&lim, job->max_gbs, lbs[0], lbs[nl - 1]);
	lim.min_bsz = floor_bs; /* never decrease B_G (jabas.md §5) */
	if (hb_goodput_argmax(theta, grad, &lim, out->num_nodes, out->num_replicas, &out->argmax, err) < 0)
		goto done;
	if (out->argmax.feasible) {
		out->accum_steps = out->argmax.accum_steps;
		out->local_bs = nearest_lbs(lbs, nl, (double)out->argmax.local_bsz, out->num_replicas,
					    out->accum_steps, floor_bs, job->max_gbs);
		if (out->local_bs > 0) {
			out->global_bs = (long)out->local_bs * out->num_replicas * (out->accum_steps + 1);
			out->feasible = 1;
		}
	}
	rc = 0;
done:
	free(lbs);
	return rc;
}

/* G_1: the fitted model's best goodput on one GPU of the slowest type held,
 * without the never-decrease floor (see "Pollux-AS ideal goodput"). */
static int single_gpu_goodput(const struct hb_sim *sim, struct hb_sim_job *job, const struct hb_goodput_params *theta,
			      const struct hb_grad_params *grad, const int *alloc, double *g1, struct hb_error *err)
{
	int slow = -1, *one, *lbs = NULL, nl = 0;
	struct hb_goodput_limits lim;
	struct hb_goodput_config c;

	for (int node = 0; node < sim->cl->nnodes; node++)
		if (alloc[node] > 0 && (slow < 0 || node_gpu(sim, node)->fp32_tflops < node_gpu(sim, slow)->fp32_tflops))
			slow = node;
	*g1 = 0.0;
	if (slow < 0)
		return 0;
	one = calloc((size_t)sim->cl->nnodes, sizeof(*one));
	if (!one)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	one[slow] = 1;
	if (feasible_lbs(sim, job, one, &lbs, &nl, err) < 0) {
		free(one);
		return -1;
	}
	free(one);
	if (nl > 0) {
		hb_goodput_limits_default(&lim, job->max_gbs, lbs[0], lbs[nl - 1]);
		if (hb_goodput_argmax(theta, grad, &lim, 1, 1, &c, err) < 0) {
			free(lbs);
			return -1;
		}
		if (c.feasible)
			*g1 = c.goodput;
	}
	free(lbs);
	return 0;
}

/* The (N, K, m, s) the fit was given, then the fitted theta, the phi used and
 * the argmax, in a form a test can parse back. */
static void note_decision(struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_goodput_fit_result *fr,
			  double phi, const struct pollux_choice *c)
{
	const struct hb_goodput_params *p = &fr->params;

	hb_sim_note(sim, job, "adapt",
		    "theta %.9g %.9g %.9g %.9g %.9g %.9g %.9g phi %.9g floor %ld argmax m %ld s %d M %ld "
		    "good %.6g -> B_L %d s %d B_G %ld",
		    p->alpha_c, p->beta_c, p->alpha_n, p->beta_n, p->alpha_r, p->beta_r, p->gamma, phi,
		    job->cfg.global_bs, c->argmax.local_bsz, c->argmax.accum_steps, c->argmax.total_bsz,
		    c->argmax.goodput, c->local_bs, c->accum_steps, c->global_bs);
}

/* ---- start --------------------------------------------------------------- */

/* minB_G on alloc: the fewest micro-steps, then the feasible B_L nearest to
 * minB_G / (K (s+1)) that keeps B_G in [minB_G, maxB_G]. */
static int start_on(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const int *alloc,
		    struct hb_error *err)
{
	int *lbs = NULL, nl = 0, nodes, gpus, local_bs = 0;
	long s = 0, maxl;

	if (alloc_shape(job, alloc, &nodes, &gpus, err) < 0 || feasible_lbs(sim, job, alloc, &lbs, &nl, err) < 0)
		return -1;
	if (nl == 0) {
		free(lbs);
		return oom_error(sim, job, alloc, err);
	}
	maxl = lbs[nl - 1];
	s = (job->min_gbs + (long)gpus * maxl - 1) / ((long)gpus * maxl) - 1;
	if (s < 0)
		s = 0;
	/* Nearest at or above the target when possible, else any in range. */
	local_bs = nearest_lbs(lbs, nl, (double)job->min_gbs / ((double)gpus * (double)(s + 1)), gpus, (int)s,
			       job->min_gbs, job->max_gbs);
	if (local_bs == 0)
		local_bs = nearest_lbs(lbs, nl, (double)job->min_gbs / ((double)gpus * (double)(s + 1)), gpus, (int)s,
				       1, job->max_gbs);
	free(lbs);
	if (local_bs == 0)
		return hb_input_error(err,
				      "%s: model %s on cluster %s: %d GPUs at the smallest feasible local batch exceed "
				      "maxB_G %ld",
				      job->agent->name, job->model->name, sim->cl->name, gpus, job->max_gbs);
	return apply(sim, job, st, alloc, local_bs, (int)s, HB_APPLY_START, "start at minB_G", err);
}

static int pollux_start(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = NULL;
	int *alloc, rc;

	if (state_new(job, &st, err) < 0)
		return -1;
	alloc = calloc((size_t)sim->cl->nnodes, sizeof(*alloc));
	if (!alloc)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	/* All GPUs of the cluster for the whole run (jabas.md §5). */
	hb_agent_alloc_granted(job, alloc);
	rc = start_on(sim, job, st, alloc, err);
	free(alloc);
	return rc;
}

/* Nodes by ascending FP32 TFLOPS of their GPU type, ties in cluster order
 * (insertion sort: stable, and clusters have a handful of nodes). */
static void slowest_first(const struct hb_sim *sim, int *order)
{
	int n = sim->cl->nnodes;

	for (int i = 0; i < n; i++) {
		int k = i;

		while (k > 0 && node_gpu(sim, order[k - 1])->fp32_tflops > node_gpu(sim, i)->fp32_tflops) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
	}
}

static int pollux_as_start(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = NULL;
	int *alloc, rc;

	/* Pollux-AS orders the cluster's nodes itself: it needs all of them. */
	if (!hb_agent_owns_cluster(sim, job))
		return hb_input_error(err, "pollux-as %s: the agent needs the whole cluster (dedicated arbiter); "
				      "arbiter %s granted %d of %d GPUs", job->name, sim->arbiter->name, job->ngrant,
				      sim->cl->ngpus);

	if (state_new(job, &st, err) < 0)
		return -1;
	st->order = calloc((size_t)sim->cl->nnodes, sizeof(*st->order));
	alloc = calloc((size_t)sim->cl->nnodes, sizeof(*alloc));
	if (!st->order || !alloc) {
		free(alloc);
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	}
	slowest_first(sim, st->order);
	/* One node, the slowest (jabas.md §5: starting on fast GPUs tends never to scale). */
	st->held = 1;
	alloc[st->order[0]] = sim->cl->nodes[st->order[0]].ngpus;
	rc = start_on(sim, job, st, alloc, err);
	free(alloc);
	return rc;
}

/* ---- epoch end ------------------------------------------------------------- */

/* Observe, fit, and read the gradient statistics at the current B_G. */
static int prepare_decision(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st,
			    struct hb_goodput_fit_result *fr, struct hb_grad_params *grad, double *phi,
			    struct hb_error *err)
{
	if (observe(sim, job, st, err) < 0 || fit(sim, job, st, fr, err) < 0)
		return -1;
	st->decisions++;
	*phi = hb_sim_phi(sim, job, (double)job->cfg.global_bs);
	*grad = hb_grad_params_from_phi(*phi, job->stats->m0);
	return 0;
}

/* Apply c in place when it differs from the current layout. */
static int retune(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const struct pollux_choice *c,
		  struct hb_error *err)
{
	char why[128];

	if (!c->feasible || (c->local_bs == st->local_bs && c->accum_steps == st->accum_steps))
		return 0;
	snprintf(why, sizeof(why), "goodput argmax at epoch %ld (M %ld, efficiency %.3f)", job->epoch,
		 c->argmax.total_bsz, c->argmax.efficiency);
	return apply(sim, job, st, job->cfg.alloc, c->local_bs, c->accum_steps, HB_APPLY_INPLACE, why, err);
}

static int pollux_on_epoch_end(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = job->agent_state;
	struct hb_goodput_fit_result fr;
	struct hb_grad_params grad;
	struct pollux_choice c;
	double phi;

	if (prepare_decision(sim, job, st, &fr, &grad, &phi, err) < 0 ||
	    choose(sim, job, &fr.params, &grad, job->cfg.alloc, job->cfg.global_bs, &c, err) < 0)
		return -1;
	note_decision(sim, job, &fr, phi, &c);
	return retune(sim, job, st, &c, err);
}

static int pollux_as_on_epoch_end(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = job->agent_state;
	struct hb_goodput_fit_result fr;
	struct hb_grad_params grad;
	struct pollux_choice cur, best = { 0 };
	double phi, g1;
	int *alloc, added = 0, rc = -1;
	long floor_bs = job->cfg.global_bs;

	if (prepare_decision(sim, job, st, &fr, &grad, &phi, err) < 0 ||
	    choose(sim, job, &fr.params, &grad, job->cfg.alloc, floor_bs, &cur, err) < 0 ||
	    single_gpu_goodput(sim, job, &fr.params, &grad, job->cfg.alloc, &g1, err) < 0)
		return -1;
	note_decision(sim, job, &fr, phi, &cur);
	alloc = malloc(sizeof(*alloc) * (size_t)sim->cl->nnodes);
	if (!alloc)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	memcpy(alloc, job->cfg.alloc, sizeof(*alloc) * (size_t)sim->cl->nnodes);

	/* U rule: goodput per GPU above U x the single-GPU goodput. */
	if (st->held < sim->cl->nnodes && cur.feasible && g1 > 0 &&
	    cur.argmax.goodput > POLLUX_AS_U * cur.num_replicas * g1) {
		/* L rule: keep adding while the enlarged allocation holds L x ideal. */
		while (st->held + added < sim->cl->nnodes) {
			int next = st->order[st->held + added];
			struct pollux_choice e;

			alloc[next] = sim->cl->nodes[next].ngpus;
			if (choose(sim, job, &fr.params, &grad, alloc, floor_bs, &e, err) < 0)
				goto done;
			if (!e.feasible || e.argmax.goodput < POLLUX_AS_L * e.num_replicas * g1) {
				alloc[next] = 0;
				break;
			}
			best = e;
			added++;
		}
		hb_sim_note(sim, job, "adapt",
			    "scale: goodput %.6g on %d GPUs > U x %d x G_1 %.6g: add %d node(s)", cur.argmax.goodput,
			    cur.num_replicas, cur.num_replicas, g1, added);
	}
	if (added > 0) {
		char why[128];

		snprintf(why, sizeof(why), "Pollux-AS: +%d node(s) at epoch %ld (goodput %.4g vs ideal %.4g)", added,
			 job->epoch, best.argmax.goodput, best.num_replicas * g1);
		rc = apply(sim, job, st, alloc, best.local_bs, best.accum_steps, HB_APPLY_RESTART, why, err);
		if (rc == 0)
			st->held += added;
	} else {
		rc = retune(sim, job, st, &cur, err);
	}
done:
	free(alloc);
	return rc;
}

/* ---- tables ---------------------------------------------------------------- */

const struct hb_agent_ops hb_agent_pollux = {
	.name = "pollux",
	.summary = "Pollux (JABAS port): goodput-driven batch per epoch on all GPUs",
	.interval = pollux_interval,
	.round_s = NULL, /* the 30 s re-fit cannot act between epoch ends (see top) */
	.start = pollux_start,
	.on_adapt = NULL,
	.on_epoch_end = pollux_on_epoch_end,
	.on_round = NULL,
	.free_state = pollux_free_state,
};

const struct hb_agent_ops hb_agent_pollux_as = {
	.name = "pollux-as",
	.summary = "Pollux-AS: Pollux from the slowest node, adds nodes by goodput (U 2/3, L 1/2)",
	.interval = pollux_interval,
	.round_s = NULL,
	.start = pollux_as_start,
	.on_adapt = NULL,
	.on_epoch_end = pollux_as_on_epoch_end,
	.on_round = NULL,
	.free_state = pollux_free_state,
};
