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
 *    log-normal factor exp(sigma z), sigma = 2 %, z from the job's own
 *    stream (HB_STREAM_POLLUX_OBS, seeded by --seed and the job: a job's
 *    k-th observation draws the same z whatever the other jobs do, which
 *    also lets its next fit start before the observation is taken, see
 *    "Fits made ahead"): per-epoch averages of a real step timer are that
 *    close.  Like AdaptDL's
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
 *    seed derived from --seed, the job and the decision number.  On shared
 *    clusters (below) a refit starts warm: from the previous fit and from
 *    the data's estimate, with no random restarts (POLLUX_REFIT_RESTARTS),
 *    where a job's first fit and every JABAS-port fit run the fit's four
 *    starts (solver/goodput_fit.c, "Warm start").  A departure from the
 *    artifact, whose agent runs one L-BFGS-B start from a fixed point per
 *    fit; it is what makes Philly-scale traces affordable: on Philly's first
 *    2000 jobs the refits need 42 % of the four-start fits' BFGS
 *    iterations, 3 % of them end >1 % above the four-start objective and
 *    45 % at or below it, and `sim --policy pollux` takes 50 CPU-s instead
 *    of 86 (first 5000 jobs: 121 instead of 224) with a mean JCT 1.4 %
 *    higher (5000: the same to 0.01 h); on Pollux's 64-GPU workloads the
 *    mean JCT stays within the seed-to-seed spread (scripts/repro/
 *    pollux-spread, seeds 1-4, fidelity and native: every change of the
 *    mean <= 0.49 of the reference's range of seeds).
 *    A shared-cluster refit is also SKIPPED when the current theta already
 *    predicts every observation added since its fit within 2 sigma of the
 *    measurement noise (POLLUX_REFIT_SKIP_TOL: |log(pred / measured)| <=
 *    0.04 for T_iter and, when measured, T_grad): such a sample is counted
 *    as fitted (fit_nobs moves) and theta, its priors and `fits` stay, so
 *    nothing PolluxSched reads changes; its skipped-round rule, which looks
 *    at the number of fits, rightly sees no new fit and need not search
 *    (arbiter_pollux.c, "Skipped rounds", is unchanged).  The next sample
 *    outside the tolerance refits on the whole history, the skipped samples
 *    included.  Nothing else loosens the cadence: the artifact refits every
 *    30 s, and on Philly's first 2000 jobs a job's history grows about once
 *    per two minutes of its run, so a time-based cadence would not remove
 *    fits.  Measured on those 2000 jobs: 30 % of refits skipped (7,955 of
 *    26,451 history growths; a fit extrapolates to a new (N, K) or m
 *    worse than the noise: the median |log error| of a new sample's
 *    predicted T_iter is 3.5 %, of its T_grad 4.3 %); `sim --policy pollux`
 *    takes 36.5 CPU-s instead of 46.9 (first 5000 jobs: 102 instead of 134
 *    on a loaded machine), mean JCT 0.315 h either way (5000: 0.262 h
 *    instead of 0.259), restarts per job 10.85 instead of 10.90 (5000: 9.20
 *    instead of 9.04); the fit's share of the CPU 38 % instead of 52 %.
 *    Pollux's workloads 1-4 (scripts/repro/pollux-spread, seeds 1-5): every
 *    change of the mean within 0.21 of the reference's range of seeds in
 *    fidelity mode, within 0.20 in native mode.
 *    The fit's minimiser is Levenberg-Marquardt since issue 14 (solver/
 *    goodput_fit.c, "Minimiser"; the measurements above ran BFGS): it
 *    reaches BFGS's objective or lower from the same starts (above it by
 *    >1e-4 in 0.04 % of Philly's fits) for about a sixth of the fit's CPU;
 *    `sim --policy pollux` on Philly's first 2000 jobs takes 20.6-22.5
 *    CPU-s instead of 33.9-35.0, mean JCT 0.327 h either way (workload 1,
 *    native: 3.8-4.2 instead of 4.1-4.3); the fit's share of that CPU is
 *    13 % (perf), PolluxSched's search (hb_pollux_search) 62 %.  Its
 *    theta differs from BFGS's along the objective's flat valleys, which
 *    moves decisions as any change to the fit's last bits does.  How much
 *    that is: theta moved by one ulp after each fit (+1 ulp; -1 ulp) on
 *    main (c44e9c9, BFGS) moves workload 1's fidelity
 *    mean JCT by +3.6 s and -7.8 s (0.32 and -0.70 of the reference's 11.2 s
 *    range of seeds, the two variants 11.4 s = 1.0 range apart) and widens
 *    its range of seeds to 31 s and 17 s: workload 1's 11 s understates the
 *    run-to-run spread, which last bits alone put at ~7 s per run (std).
 *    LM against the reference (scripts/repro/pollux-spread, seeds 1-5):
 *    every change of the mean within 0.10 of the reference's range in
 *    fidelity mode (workload 1: +1.1 s), within 0.11 in native mode.
 *  - Fits made ahead (shared clusters, --threads 2 or more).  Every refit
 *    follows a configuration change: the new configuration is observed at
 *    the first report or epoch end after it has run, and the history grows
 *    by that observation.  Its value is known when the configuration is
 *    applied (the perf model's time and the next draws of the job's
 *    stream), so apply() posts the refit it will cause to the run's pool
 *    (spec_post), and refresh_fit takes its result when the fit it is
 *    about to run has exactly those inputs (samples bit for bit, seed, warm
 *    start, priors), which it has unless the job was re-granted or
 *    preempted first; else it fits as before.  On Philly's first 2,000
 *    jobs every one of the 18,778 refits followed an apply, and the wall
 *    time between the two covered 93 % of the fits' time.
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
 *
 * Shared clusters (PolluxSched, sim/policies/pollux/arbiter_pollux.c).  Under any arbiter
 * but the dedicated one the job holds only its grant and the agent is
 * Pollux's own PolluxAgent (pollux.md §3.1, §4.3) rather than JABAS's port:
 *  - It reports its goodput function to the scheduler
 *    (hb_pollux_agent_report, agent_pollux.h): theta_sys, the gradient
 *    statistics and its batch limits.
 *  - History as in the artifact's simulator (pollux.md §4.3, update_params):
 *    one observation per distinct (N, K, m, s), its first measurement, and a
 *    refit whenever the history grows, warm-started, unless theta already
 *    predicts the new observations ("Fit cadence" above).
 *    Observations are taken when the scheduler asks for a report, at epoch
 *    ends and before a new grant is used, each time only for a configuration
 *    the job has actually run
 *    (not one still in its restart delay, not one interrupted by a
 *    preemption).
 *  - (m, s) = argmax GOODPUT on the current GPUs at epoch ends and on every
 *    new grant (on_grant), WITHOUT the never-decrease floor: Pollux shrinks
 *    the batch under contention (pollux.md §7.2, Fig. 6 "B"); M stays in
 *    [minB_G, maxB_G].  The history and theta_sys survive grant changes.
 *  - Heterogeneous GPUs: theta_sys is kept for a reference type and
 *    observations are converted to it (agent_pollux.h).  An observation on
 *    an allocation paced by type X with compute factor c = u(X)/u(ref) <= 1
 *    becomes T_grad / c and T_iter + (1/c - 1)(s+1) T_grad: exact when
 *    compute and communication do not overlap (gamma = 1), and a conversion
 *    of the compute passes only otherwise.  u(X) is the perf model's time of
 *    one extra micro-step per sample on one GPU of type X at the largest
 *    local batch every usable type can run (what observe() measures as
 *    T_grad), i.e. profiled relative speeds as in Gavel (pollux.md A17).
 *
 * Sia fidelity (`sim --fidelity sia` on a shared cluster, a model with
 * validation runs; Sia's simulator, siasosp23/artifacts sia-simulator/,
 * extends Pollux's with one Application per GPU type):
 *  - one theta_sys per GPU type (types[t].theta), fitted to that type's
 *    observations alone (job.py Job.update_params), refitted whenever they
 *    grow (no skip, no fit made ahead), each fit the artifact's own
 *    L-BFGS-B from its fixed point (goodput.py fit_perf_params; fit_sia);
 *  - an observation is filed once per (type, N, K, m) as one step without
 *    accumulation, its step and sync times the artifact's lookup's,
 *    noise-free and unconverted (obs_accum, measure);
 *  - the batch is Job.update_local_bsz's (choose_sia), re-picked at epoch
 *    ends, on grants and every round (hb_pollux_agent_retune);
 *  - each type's batch range is its placements', and its one-GPU rate
 *    (types[t].rate) is what Sia's arbiter projects unfitted types by
 *    (hb_pollux_report_projected).
 * Under PolluxSched the same mode is Sia's heterogeneity-unaware Pollux
 * (pollux_vnodes.h): the observations above, but of every type in one
 * history and one fit (merged, refresh_merged), which every type's batch
 * choice reads with its own batch range.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_pollux.h" /* hb_pollux_agent_report: the goodput function PolluxSched reads */
#include "agent_util.h" /* hb_agent_alloc_granted, hb_agent_gns_overhead_s */
#include "analytic.h"  /* hb_analytic_mem_bytes: one worker's memory footprint */
#include "ddp.h"       /* hb_ddp_iter_time: the DDP layout's true time */
#include "fidelity.h"  /* Pollux fidelity: the artifact's batch split */
#include "goodput.h"   /* theta_sys fit, efficiency, (m, s) argmax */
#include "perf_measured.h" /* Sia fidelity: each type's one-GPU rate */
#include "policy.h"
#include "sim.h"

/* ---- knobs --------------------------------------------------------------- */

/* Log-normal measurement noise on observed iteration times (see top). */
#define POLLUX_OBS_SIGMA 0.02

/* Pollux's auto-scaling thresholds (jabas.md §5, pollux.md §7.4). */
#define POLLUX_AS_U (2.0 / 3.0)
#define POLLUX_AS_L 0.5

/* Random restarts of a shared-cluster refit, which starts warm (see "Fit
 * cadence" at the top); a job's first fit keeps the fit's default. */
#define POLLUX_REFIT_RESTARTS 0

/* A shared-cluster refit is skipped while theta_sys already predicts every
 * new observation's T_iter and T_grad within this many log units: 2 sigma
 * of the measurement noise (see "Fit cadence" at the top). */
#define POLLUX_REFIT_SKIP_TOL (2.0 * POLLUX_OBS_SIGMA)

/* GNS monitoring buffer: one FP32 gradient-sized tensor per GPU (see top). */
#define GNS_BYTES_PER_PARAM 4.0

/* ---- state --------------------------------------------------------------- */

/* One observed configuration: AdaptDL keys its profile by placement and
 * batch and averages repeated measurements. */
struct pollux_obs {
	int type;            /* GPU type it ran on under Sia fidelity (per-type fits), else -1 */
	int num_nodes;       /* N: nodes holding a worker */
	int num_replicas;    /* K: GPUs */
	int local_bs;        /* m */
	int accum_steps;     /* s: extra micro-steps */
	double iter_sum;     /* sum of observed T_iter, s */
	double compute_sum;  /* sum of observed T_grad (one pass), s */
	long count;          /* observations summed */
};

/* hb_pollux_report_argmax's results for one (theta, grad, limits): the
 * argmax is a pure function of those, the type (fixed per job once
 * types_prepare ran), N and K, so it is reused across rounds while the key
 * holds (a job not running keeps its fit and its phi at minB_G).  Below it,
 * per slot, the argmax's candidate table (hb_goodput_argmax_cached), which
 * outlives a change of grad: a running job's phi, hence grad, moves every
 * round, its theta only after a refit, and the table keeps the grid's and
 * T_iter's pow() calls while theta holds. */
struct pollux_argmax_memo {
	int valid;
	struct hb_goodput_params theta;
	struct hb_grad_params grad;
	struct hb_goodput_limits limits;
	int ntypes;
	int kcap;                        /* K in 0 .. kcap-1 */
	struct hb_goodput_config *c;     /* [K][type][N-1], N in {1, 2} */
	unsigned char *have;
	struct hb_goodput_cands *tables; /* [K][type][N-1], as c; each keeps its own key */
};

static void memo_tables_free(struct pollux_argmax_memo *m)
{
	if (m->tables)
		for (size_t i = 0; i < (size_t)m->kcap * (size_t)m->ntypes * 2; i++)
			hb_goodput_cands_free(&m->tables[i]);
	free(m->tables);
	m->tables = NULL;
}

#define FEASIBLE_MEMO 4 /* GPU-type sets feasible_lbs remembers per job */

struct pollux_state {
	struct pollux_argmax_memo memo;
	/* choose()'s argmax table (hb_goodput_argmax_cached): epoch ends on the
	 * same GPUs ask the same placement with a new phi, mostly under the
	 * same theta. */
	struct hb_goodput_cands choose_table;
	struct pollux_obs *obs;   /* history, one entry per distinct configuration */
	size_t nobs, cap_obs;
	long decisions;           /* epoch-end decisions taken (fit seeds) */
	int local_bs;             /* current B_L */
	int accum_steps;          /* current extra micro-steps */
	int *order;               /* AS: cluster nodes, slowest first */
	int held;                 /* AS: nodes order[0 .. held-1] are held */
	/* Shared clusters (see the top). */
	struct hb_pollux_type *types; /* per GPU type of job->perf, NULL until needed */
	int ref_type;             /* reference type of theta_sys */
	/* Sia fidelity (types_prepare sets it): one theta_sys per GPU type,
	 * types[t].theta, fitted to that type's observations alone, which are
	 * noise-free and unconverted (Sia's simulator, job.py Job.update_params;
	 * "Sia fidelity" at the top).  theta then mirrors the
	 * type the job runs on, for the notes. */
	int per_type;
	/* Sia fidelity under PolluxSched: Sia's heterogeneity-unaware Pollux
	 * (pollux_vnodes.h), whose job keeps ONE theta_sys fitted to the
	 * observations of every type it ran on, one per (N, K, m) whatever
	 * the type, the first kept (job.py Job.update_params with h_unaware:
	 * profiles is one dict); every usable type's theta is that fit, each
	 * type keeps its own batch range.  per_type is set too. */
	int merged;
	struct type_fit {
		size_t fit_nobs;  /* the type's observations when types[t].theta was fitted */
	} *tfit;                  /* [perf->ngpus] when per_type */
	int fitted;               /* 1: theta holds a fit of the history (per_type: some type's) */
	struct hb_goodput_params theta; /* last fit, on the reference type */
	size_t fit_nobs;          /* nobs when theta was fitted */
	unsigned theta_priors;    /* the priors theta's fit pinned (the next refit's warm start) */
	long fits;                /* fits run */
	long refits_skipped;      /* refits skipped: theta predicted the new observations */
	long fits_ahead;          /* fits taken from a refit made ahead (spec_post) */
	double run_from;          /* time the current configuration started running
				     (after its restart delay); INFINITY before the first */
	int preempt_seen;         /* job->preemptions when the configuration was applied */
	struct hb_rng obs_rng;    /* the job's measurement noise (HB_STREAM_POLLUX_OBS) */
	int obs_seeded;
	struct pollux_spec *spec; /* the refit made ahead (spec_post), NULL until the first */
	struct hb_pool *pool;     /* the run's, borrowed: where spec runs */
	/* feasible_lbs's answers by the set of GPU types an allocation uses
	 * (bit t: catalog type t), the last FEASIBLE_MEMO sets asked (an
	 * epoch end asked on every decision, and the answer is a function of
	 * the set: 8 % of the main thread on a Philly replay went to scanning
	 * the cluster's nodes for it). */
	struct feasible_memo {
		uint64_t types;   /* 0: empty */
		int *lbs;         /* n feasible B_L, ascending */
		int n;
	} feasible[FEASIBLE_MEMO];
	int feasible_next;        /* the entry the next new set replaces */
};

/* A refit made ahead on the run's pool ("Fits made ahead" at the top): its
 * inputs as fit() would build them, and its outcome. */
struct pollux_spec {
	struct hb_pool_bg bg;     /* posted: the rest is the worker's until claimed */
	int posted;
	struct hb_goodput_sample *smp; /* [n] of [cap] */
	size_t n, cap;
	struct hb_goodput_fit_options opt;
	struct hb_goodput_params init; /* opt.init points here when it is set */
	int rc;
	struct hb_goodput_fit_result res;
	struct hb_error err;
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

static long pollux_interval(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job)
{
	(void)state;
	(void)sim;
	(void)job;
	return 0; /* no adaptation points: B_G changes at epoch ends only (jabas.md §5) */
}

static void pollux_free_job(void *state, struct hb_sim_job *job)
{
	struct pollux_state *st = job->agent_state;

	(void)state;
	if (!st)
		return;
	if (st->spec) {
		hb_pool_claim(st->pool, &st->spec->bg); /* a worker may still be fitting */
		free(st->spec->smp);
		free(st->spec);
	}
	free(st->obs);
	free(st->order);
	free(st->types);
	free(st->tfit);
	for (int i = 0; i < FEASIBLE_MEMO; i++)
		free(st->feasible[i].lbs);
	memo_tables_free(&st->memo);
	hb_goodput_cands_free(&st->choose_table);
	free(st->memo.c);
	free(st->memo.have);
	free(st);
	job->agent_state = NULL;
}

/* The job's state, created on first use: a scheduler may ask a job that has
 * not started yet for its report, and start then keeps that state. */
static int state_new(struct hb_sim_job *job, struct pollux_state **out, struct hb_error *err)
{
	struct pollux_state *st = job->agent_state;

	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
		st->run_from = INFINITY;
		job->agent_state = st;
	}
	*out = st;
	return 0;
}

/* PolluxSched's setting (the top): the job shares the cluster. */
static int shared_mode(const struct hb_sim *sim)
{
	return sim->arbiter != &hb_arbiter_dedicated;
}

/* ---- memory and layouts ---------------------------------------------------- */

static const struct hb_gpu *node_gpu(const struct hb_sim *sim, int node)
{
	return &sim->cat->gpus[sim->cl->nodes[node].gpu];
}

/* One worker at local_bs plus the GNS buffer fits GPU g, of architecture a
 * (hb_analytic_arch_of(g)). */
static int gns_fits(const struct hb_gpu *g, const struct hb_analytic_arch *a, const struct hb_sim_job *job,
		    int local_bs)
{
	double need = hb_analytic_mem_bytes_on(a, job->model, local_bs, 1) + GNS_BYTES_PER_PARAM * job->model->params;

	return need <= g->mem_bytes;
}

/* A malloc'ed copy of n ints (n may be 0), or NULL without memory. */
static int *ints_dup(const int *v, int n)
{
	int *c = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));

	if (c && n > 0)
		memcpy(c, v, (size_t)n * sizeof(int));
	return c;
}

/* Local batches Pollux can run on alloc: profiled on every type used
 * (hb_perf_alloc_lbs) and fitting with the GNS buffer.  Ascending.  Whether
 * a batch fits depends on the node's GPU alone, so each GPU type the
 * allocation uses is checked once per batch, not each of its nodes (a
 * Philly-sized cluster has 384 nodes and a few types; the per-node scan was
 * 6 % of a Pollux replay). */
static int feasible_lbs(const struct hb_sim *sim, const struct hb_sim_job *job, const int *alloc, int **out,
			int *n, struct hb_error *err)
{
	struct pollux_state *st = job->agent_state;
	int *lbs = NULL, nl = 0, k = 0, ntypes = 0, *rep;
	const struct hb_analytic_arch **arch; /* per rep: its GPU's architecture */
	const int ngpus = sim->cat->ngpus;
	uint64_t types = 0; /* the memo's key; 0: not memoised */

	if (st && ngpus <= 64) {
		/* The set of types, and the checks hb_perf_alloc_gpus makes: an
		 * allocation it refuses takes the path below, for its error. */
		const struct hb_perf *p = job->perf;

		for (int i = 0; i < p->nnodes; i++) {
			const int a = alloc[i];

			if (a == 0)
				continue;
			if (a < 0 || a > p->nodes[i].ngpus) {
				types = 0;
				break;
			}
			types |= (uint64_t)1 << sim->cl->nodes[i].gpu;
		}
		for (int i = 0; types && i < FEASIBLE_MEMO; i++)
			if (st->feasible[i].types == types) {
				if (!(*out = ints_dup(st->feasible[i].lbs, st->feasible[i].n)))
					return hb_runtime_error(err, "pollux %s: out of memory", job->name);
				*n = st->feasible[i].n;
				return 0;
			}
	}
	if (hb_perf_alloc_lbs(job->perf, alloc, &lbs, &nl, err) < 0)
		return -1;
	/* rep[i]: a node of the i-th distinct GPU type alloc uses */
	rep = malloc((size_t)(ngpus > 0 ? ngpus : 1) * sizeof(*rep));
	arch = malloc((size_t)(ngpus > 0 ? ngpus : 1) * sizeof(*arch));
	if (!rep || !arch) {
		free(rep);
		free(arch);
		free(lbs);
		return hb_runtime_error(err, "pollux %s: out of memory", job->name);
	}
	for (int node = 0; node < sim->cl->nnodes && ntypes < ngpus; node++) {
		int seen = 0;

		if (alloc[node] <= 0)
			continue;
		for (int t = 0; t < ntypes && !seen; t++)
			seen = sim->cl->nodes[rep[t]].gpu == sim->cl->nodes[node].gpu;
		if (!seen)
			rep[ntypes++] = node;
	}
	for (int t = 0; t < ntypes; t++)
		arch[t] = hb_analytic_arch_of(node_gpu(sim, rep[t]));
	for (int i = 0; i < nl; i++) {
		int ok = 1;

		for (int t = 0; t < ntypes && ok; t++)
			ok = gns_fits(node_gpu(sim, rep[t]), arch[t], job, lbs[i]);
		if (ok)
			lbs[k++] = lbs[i];
	}
	free(rep);
	free(arch);
	if (types) {
		struct feasible_memo *e = &st->feasible[st->feasible_next];
		int *c = ints_dup(lbs, k);

		if (c) { /* without memory, only not memoised */
			free(e->lbs);
			e->types = types;
			e->lbs = c;
			e->n = k;
			st->feasible_next = (st->feasible_next + 1) % FEASIBLE_MEMO;
		}
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
	const struct pollux_state *st = job->agent_state;
	/* Sia fidelity: its lookup, which interpolates any local batch
	 * (Application.get_throughput); the order is moot for its
	 * configurations (one node, or whole nodes) */
	const int fid_time = job->fid_agents || (st && st->per_type), order = job->fid_agents;
	int nodes, gpus;

	hb_job_config_init(cfg, sim->cl->nnodes);
	if (!cfg->alloc)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	memcpy(cfg->alloc, alloc, sizeof(int) * (size_t)sim->cl->nnodes);
	if (alloc_shape(job, alloc, &nodes, &gpus, err) < 0 ||
	    (fid_time ? hb_agent_fid_iter_s(job, alloc, order, local_bs, accum_steps, &cfg->iter_s, NULL, err)
		      : hb_ddp_iter_time(job->perf, alloc, local_bs, accum_steps, &cfg->iter_s, NULL, err)) < 0) {
		hb_job_config_free(cfg);
		return -1;
	}
	cfg->ngpus = gpus;
	cfg->local_bs = local_bs;
	cfg->global_bs = (long)local_bs * gpus * (accum_steps + 1);
	/* GNS monitoring every iteration (jabas.md §5, §7.7); Pollux's own
	 * simulator charges none (Job.step), so fidelity leaves it to the
	 * --gns-overhead knob, 0 there. */
	cfg->overhead_per_iter_s = hb_agent_gns_overhead_s(sim, job, cfg->iter_s);
	cfg->eff_factor = 1.0;
	snprintf(cfg->layout, sizeof(cfg->layout), "B_L %d x %d GPUs on %d nodes, GA %d", local_bs, gpus, nodes,
		 accum_steps);
	return 0;
}

static void spec_post(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const int *alloc);

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
		st->run_from = job->state == HB_JOB_RESTARTING ? job->restart_until : hb_sim_now(sim);
		st->preempt_seen = job->preemptions;
		spec_post(sim, job, st, alloc);
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

/* ---- GPU types in a shared cluster ------------------------------------------ */

/* Seconds per sample of one extra micro-step of local_bs on one GPU of node
 * `node`: what observe() reads as T_grad, per sample. */
static int per_sample_compute(const struct hb_sim *sim, const struct hb_sim_job *job, int *one, int node,
			      int local_bs, double *u, struct hb_error *err)
{
	double t0, t1;
	int rc;

	(void)sim;
	one[node] = 1;
	rc = hb_perf_iter_time(job->perf, one, node, local_bs, 1, 0, &t0, err);
	if (rc == 0)
		rc = hb_perf_iter_time(job->perf, one, node, local_bs, 1, 1, &t1, err);
	one[node] = 0;
	if (rc == 0)
		*u = (t1 - t0) / local_bs;
	return rc;
}

/* Usable types, their batch ranges and compute factors, and the reference
 * type (agent_pollux.h). */
static int types_prepare(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	const struct hb_perf *perf = job->perf;
	int nt = perf->ngpus, *first, *one, common = 0, rc = -1;
	double *u, umax = 0.0;

	if (st->types)
		return 0;
	st->types = calloc((size_t)(nt > 0 ? nt : 1), sizeof(*st->types));
	first = malloc(sizeof(int) * (size_t)(nt > 0 ? nt : 1));
	one = calloc((size_t)perf->nnodes, sizeof(int));
	u = calloc((size_t)(nt > 0 ? nt : 1), sizeof(double));
	if (!st->types || !first || !one || !u) {
		hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
		goto done;
	}
	st->ref_type = -1;
	for (int t = 0; t < nt; t++)
		first[t] = -1;
	for (int n = perf->nnodes - 1; n >= 0; n--)
		first[perf->nodes[n].gpu] = n;
	for (int t = 0; t < nt; t++) {
		int *lbs = NULL, nl = 0;

		if (first[t] < 0)
			continue;
		one[first[t]] = 1;
		rc = feasible_lbs(sim, job, one, &lbs, &nl, err);
		one[first[t]] = 0;
		if (rc < 0)
			goto done;
		if (nl > 0) {
			st->types[t].usable = 1;
			st->types[t].min_local_bsz = lbs[0];
			st->types[t].max_local_bsz = lbs[nl - 1];
			if (common == 0 || lbs[nl - 1] < common)
				common = lbs[nl - 1];
		}
		free(lbs);
	}
	rc = -1;
	for (int t = 0; t < nt; t++) {
		int *lbs = NULL, nl = 0, at = 0;

		if (!st->types[t].usable)
			continue;
		/* The largest feasible local batch of t not above `common`. */
		one[first[t]] = 1;
		if (feasible_lbs(sim, job, one, &lbs, &nl, err) < 0)
			goto done;
		one[first[t]] = 0;
		for (int i = 0; i < nl; i++)
			if (lbs[i] <= common)
				at = lbs[i];
		free(lbs);
		if (at == 0)
			at = (int)st->types[t].min_local_bsz;
		if (per_sample_compute(sim, job, one, first[t], at, &u[t], err) < 0)
			goto done;
		if (st->ref_type < 0 || u[t] > umax) {
			umax = u[t];
			st->ref_type = t;
		}
	}
	for (int t = 0; t < nt; t++)
		if (st->types[t].usable)
			st->types[t].compute_scale = t == st->ref_type ? 1.0 : u[t] / umax;
	/* Pollux fidelity: the artifact's per-GPU batch range is its measured
	 * placements' (Application.min_local_bsz, max_local_bsz). */
	for (int t = 0; job->fid_agents && t < nt; t++)
		if (st->types[t].usable) {
			st->types[t].min_local_bsz = job->fid->min_local;
			st->types[t].max_local_bsz = job->fid->max_local;
		}
	/* Sia fidelity: per-type fits ("Sia fidelity" at the top), each
	 * type's batch range and one-GPU rate from its own measured
	 * placements (one Application per type). */
	st->per_type = sim->opts.fidelity == HB_FIDELITY_SIA && job->fid && shared_mode(sim);
	/* PolluxSched by name, so that a wrapped one (its tests) counts too */
	st->merged = st->per_type && sim->arbiter && strcmp(sim->arbiter->name, hb_arbiter_pollux.name) == 0;
	if (st->per_type && !(st->tfit = calloc((size_t)(nt > 0 ? nt : 1), sizeof(*st->tfit)))) {
		hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
		goto done;
	}
	for (int t = 0; st->per_type && t < nt; t++) {
		const struct hb_perf_measured *m = perf->measured_gpu ? perf->measured_gpu[t] : NULL;
		int lo, hi;

		if (!st->types[t].usable)
			continue;
		hb_fid_sia_local_range(m, job->model->name, perf->gpus[t].name, &lo, &hi);
		if (lo > 0) {
			st->types[t].min_local_bsz = lo;
			st->types[t].max_local_bsz = hi;
		}
		st->types[t].rate = hb_perf_measured_one_gpu_rate(m);
	}
	rc = 0;
done:
	if (rc < 0) {
		free(st->types);
		st->types = NULL;
		free(st->tfit);
		st->tfit = NULL;
		st->per_type = 0;
		st->merged = 0;
	}
	free(first);
	free(one);
	free(u);
	return rc;
}

/* Slowest type of alloc by compute factor; -1 if empty or a type is unusable. */
static int slowest_type(const struct hb_pollux_type *types, const struct hb_perf *perf, const int *alloc)
{
	int best = -1;

	for (int n = 0; n < perf->nnodes; n++) {
		int t = perf->nodes[n].gpu;

		if (alloc[n] <= 0)
			continue;
		if (!types[t].usable)
			return -1;
		if (best < 0 || types[t].compute_scale > types[best].compute_scale)
			best = t;
	}
	return best;
}

/* theta_sys of the reference type on alloc's slowest type. */
static struct hb_goodput_params theta_on(const struct pollux_state *st, const struct hb_perf *perf, const int *alloc)
{
	struct hb_goodput_params p = st->theta;
	int t = slowest_type(st->types, perf, alloc);

	if (st->per_type)
		return t >= 0 ? st->types[t].theta : p;
	if (t >= 0 && t != st->ref_type) {
		p.alpha_c *= st->types[t].compute_scale;
		p.beta_c *= st->types[t].compute_scale;
	}
	return p;
}

/* ---- observations and the fit ---------------------------------------------- */

/* The type an observation on alloc is filed under: its GPU type under Sia
 * fidelity's per-type fits, else -1 (one history; also Sia's unaware
 * Pollux's, merged). */
static int obs_type(const struct pollux_state *st, const struct hb_perf *perf, const int *alloc)
{
	return st->per_type && !st->merged && st->types ? slowest_type(st->types, perf, alloc) : -1;
}

/* The extra micro-steps an observation is filed under: Sia fidelity's
 * profile keys (N, K, m) and records one step without accumulation, step
 * and sync time (Job.update_params), so its samples have s = 0. */
static int obs_accum(const struct pollux_state *st)
{
	return st->per_type ? 0 : st->accum_steps;
}

static struct pollux_obs *find_obs(struct pollux_state *st, int type, int nodes, int gpus, int local_bs,
				   int accum_steps)
{
	for (size_t i = 0; i < st->nobs; i++) {
		struct pollux_obs *e = &st->obs[i];

		if (e->type == type && e->num_nodes == nodes && e->num_replicas == gpus && e->local_bs == local_bs &&
		    e->accum_steps == accum_steps)
			return e;
	}
	return NULL;
}

/* The job's stream of measurement noise (the top, "Observations"). */
static struct hb_rng *obs_rng(const struct hb_sim *sim, const struct hb_sim_job *job, struct pollux_state *st)
{
	if (!st->obs_seeded) {
		hb_rng_seed(&st->obs_rng, sim->opts.seed ^ (0xD6E8FEB86659FD93ULL * (uint64_t)(job->id + 1)),
			    HB_STREAM_POLLUX_OBS);
		st->obs_seeded = 1;
	}
	return &st->obs_rng;
}

/* What the job measures running (local_bs, accum_steps) on alloc, its
 * noise drawn from rng: T_iter and T_grad on the reference type. */
static int measure(struct hb_sim *sim, struct hb_sim_job *job, const struct pollux_state *st, const int *alloc,
		   int local_bs, int accum_steps, struct hb_rng *rng, double *iter_out, double *compute_out,
		   struct hb_error *err)
{
	double iter_s, compute_s = 0.0;
	int ng, nn; /* the allocation's GPUs and nodes */

	if (job->fid_agents || st->per_type) {
		/* Pollux and Sia fidelity: the artifact's agent records the true
		 * step and sync times of what it ran, noise-free, Sia's on its
		 * own type, unconverted (Job.update_params). */
		if (hb_agent_fid_iter_s(job, alloc, job->fid_agents, local_bs, accum_steps, &iter_s, &compute_s,
					err) < 0)
			return -1;
		*iter_out = iter_s;
		*compute_out = compute_s;
		return 0;
	}
	if (hb_ddp_iter_time(job->perf, alloc, local_bs, accum_steps, &iter_s, NULL, err) < 0 ||
	    hb_perf_alloc_gpus(job->perf, alloc, &ng, &nn, err) < 0)
		return -1;
	/* T_grad: what one extra micro-step costs the slowest GPU. */
	for (int node = 0; node < sim->cl->nnodes; node++) {
		double t0, t1;

		if (alloc[node] == 0)
			continue;
		if (hb_perf_iter_time_n(job->perf, node, ng, nn, local_bs, 1, 0, &t0, err) < 0 ||
		    hb_perf_iter_time_n(job->perf, node, ng, nn, local_bs, 1, 1, &t1, err) < 0)
			return -1;
		if (t1 - t0 > compute_s)
			compute_s = t1 - t0;
	}
	iter_s *= exp(POLLUX_OBS_SIGMA * hb_rng_normal(rng));
	compute_s *= exp(POLLUX_OBS_SIGMA * hb_rng_normal(rng));
	if (shared_mode(sim) && st->types) {
		/* To the reference type (the top, "Heterogeneous GPUs"). */
		int t = slowest_type(st->types, job->perf, alloc);

		if (t >= 0 && t != st->ref_type) {
			double c = st->types[t].compute_scale;

			iter_s += (1.0 / c - 1.0) * (accum_steps + 1) * compute_s;
			compute_s /= c;
		}
	}
	*iter_out = iter_s;
	*compute_out = compute_s;
	return 0;
}

/* Record what the job measured while running its current configuration. */
static int observe(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	const int *alloc = job->cfg.alloc;
	int nodes, gpus;
	double iter_s, compute_s;
	struct pollux_obs *o = NULL;

	if (alloc_shape(job, alloc, &nodes, &gpus, err) < 0 ||
	    measure(sim, job, st, alloc, st->local_bs, obs_accum(st), obs_rng(sim, job, st), &iter_s, &compute_s,
		    err) < 0)
		return -1;
	o = find_obs(st, obs_type(st, job->perf, alloc), nodes, gpus, st->local_bs, obs_accum(st));
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
		o->type = obs_type(st, job->perf, alloc);
		o->num_nodes = nodes;
		o->num_replicas = gpus;
		o->local_bs = st->local_bs;
		o->accum_steps = obs_accum(st);
	}
	o->iter_sum += iter_s;
	o->compute_sum += compute_s;
	o->count++;
	return 0;
}

/* fit()'s samples: one per observation (averages). */
static void fit_samples(const struct pollux_obs *obs, size_t nobs, struct hb_goodput_sample *smp)
{
	for (size_t i = 0; i < nobs; i++) {
		const struct pollux_obs *o = &obs[i];

		memset(&smp[i], 0, sizeof(smp[i]));
		smp[i].num_nodes = o->num_nodes;
		smp[i].num_replicas = o->num_replicas;
		smp[i].local_bsz = o->local_bs;
		smp[i].accum_steps = o->accum_steps;
		smp[i].iter_s = o->iter_sum / (double)o->count;
		smp[i].compute_s = o->compute_sum / (double)o->count;
	}
}

/* fit()'s options: init, when not NULL, is copied to *init_copy, which
 * opt->init then points to. */
static void fit_options(const struct hb_sim *sim, const struct hb_sim_job *job, const struct pollux_state *st,
			const struct hb_goodput_params *init, unsigned init_priors,
			struct hb_goodput_params *init_copy, struct hb_goodput_fit_options *opt)
{
	hb_goodput_fit_options_default(opt);
	/* Odd multipliers spread job and decision over the seed's bits (hb_rng_seed
	 * then mixes it with SplitMix64), so every fit draws its own restarts. */
	opt->seed = sim->opts.seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(job->id + 1)) ^
		    (0xBF58476D1CE4E5B9ULL * (uint64_t)(st->decisions + 1));
	if (st->per_type) {
		/* Sia fidelity: the artifact's own fit, one L-BFGS-B from its
		 * fixed point (goodput.py fit_perf_params; goodput_fit.c) */
		opt->method = HB_FIT_LBFGSB;
		return;
	}
	if (init) {
		/* A refit: warm start, no random restarts (see "Fit cadence"). */
		*init_copy = *init;
		opt->init = init_copy;
		opt->init_priors = init_priors;
		opt->restarts = POLLUX_REFIT_RESTARTS;
	}
}

/* 1 when spec was made from these samples and options, bit for bit. */
static int spec_matches(const struct pollux_spec *sp, const struct hb_goodput_sample *smp, size_t n,
			const struct hb_goodput_fit_options *opt)
{
	const struct hb_goodput_fit_options *a = &sp->opt;

	/* samples are memset before they are filled (fit_samples): no padding
	 * differs; the options field by field */
	if (sp->n != n || memcmp(sp->smp, smp, n * sizeof(*smp)) != 0 || (a->init == NULL) != (opt->init == NULL))
		return 0;
	if (a->init && (memcmp(a->init, opt->init, sizeof(*a->init)) != 0 || a->init_priors != opt->init_priors))
		return 0;
	return a->priors == opt->priors && a->regularise == opt->regularise && a->restarts == opt->restarts &&
	       a->max_iter == opt->max_iter && a->method == opt->method && a->seed == opt->seed;
}

#ifdef POLLUX_SPEC_VERIFY
/* Test builds (tests/arbiter_pollux: test_pollux_spec): every refit made
 * ahead that is taken is also fitted here and must be the same bits. */
long hb_pollux_spec_verified;
#endif

/* theta_sys fitted to every observation so far (pollux.md §2.1); a refit
 * made ahead (spec_post) with these very inputs is taken instead. */
static int fit(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st,
	       const struct hb_goodput_params *init, unsigned init_priors, struct hb_goodput_fit_result *res,
	       struct hb_error *err)
{
	struct hb_goodput_sample *smp;
	struct hb_goodput_fit_options opt;
	struct hb_goodput_params init_copy;
	int rc;

	if (st->nobs == 0)
		return hb_runtime_error(err, "%s: job %s: no observation to fit", job->agent->name, job->name);
	smp = calloc(st->nobs, sizeof(*smp));
	if (!smp)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	fit_samples(st->obs, st->nobs, smp);
	fit_options(sim, job, st, init, init_priors, &init_copy, &opt);
	if (st->spec && st->spec->posted) {
		struct pollux_spec *sp = st->spec;
		const int ran = hb_pool_claim(st->pool, &sp->bg);

		sp->posted = 0;
		if (ran && spec_matches(sp, smp, st->nobs, &opt)) {
#ifdef POLLUX_SPEC_VERIFY
			struct hb_goodput_fit_result fresh;
			struct hb_error ferr = { 0 };
			const int frc = hb_goodput_fit(smp, st->nobs, &opt, &fresh, &ferr);

			if (frc != sp->rc ||
			    (frc == 0 && (memcmp(&fresh.params, &sp->res.params, sizeof(fresh.params)) != 0 ||
					  memcmp(&fresh.objective, &sp->res.objective, sizeof(double)) != 0 ||
					  fresh.priors != sp->res.priors || fresh.iterations != sp->res.iterations))) {
				free(smp);
				return hb_runtime_error(err, "%s: job %s: the refit made ahead is not the refit",
							job->agent->name, job->name);
			}
			hb_pollux_spec_verified++;
#endif
			free(smp);
			if (sp->rc < 0) {
				*err = sp->err;
				return -1;
			}
			*res = sp->res;
			st->fits_ahead++;
			return 0;
		}
	}
	rc = hb_goodput_fit(smp, st->nobs, &opt, res, err);
	free(smp);
	if (rc < 0)
		hb_error_prefix(err, "%s: job %s: theta_sys fit", job->agent->name, job->name);
	return rc;
}

/* 1 when theta predicts observation o (on the reference type) within tol:
 * |log(pred / measured)| <= tol for T_iter and, when measured, T_grad. */
int hb_pollux_obs_predicted(const struct hb_goodput_params *theta, int num_nodes, int num_replicas,
			    int local_bs, int accum_steps, double iter_s, double compute_s, double tol)
{
	double t = hb_goodput_iter_time(theta, num_nodes, num_replicas, local_bs, accum_steps);

	if (!(fabs(log(t / iter_s)) <= tol))
		return 0;
	if (compute_s > 0 && !(fabs(log(hb_goodput_compute_time(theta, local_bs) / compute_s)) <= tol))
		return 0;
	return 1;
}

/* 1 when theta predicts observations obs[from .. to) (the refit skip, "Fit
 * cadence" at the top). */
static int theta_predicts(const struct hb_goodput_params *theta, const struct pollux_obs *obs, size_t from,
			  size_t to)
{
	for (size_t i = from; i < to; i++) {
		const struct pollux_obs *o = &obs[i];

		if (!hb_pollux_obs_predicted(theta, o->num_nodes, o->num_replicas, o->local_bs, o->accum_steps,
					     o->iter_sum / (double)o->count, o->compute_sum / (double)o->count,
					     POLLUX_REFIT_SKIP_TOL))
			return 0;
	}
	return 1;
}

/* 1 when theta predicts every observation added since it was fitted. */
static int theta_predicts_new(const struct pollux_state *st)
{
	return theta_predicts(&st->theta, st->obs, st->fit_nobs, st->nobs);
}

static void spec_task(void *ctx, int task, int worker)
{
	struct pollux_spec *sp = ctx;

	(void)task;
	(void)worker;
	sp->rc = hb_goodput_fit(sp->smp, sp->n, &sp->opt, &sp->res, &sp->err);
}

/* After a configuration change on a shared cluster: the refit its first
 * observation will cause, posted to the run's pool ("Fits made ahead" at
 * the top).  Only a guess that saves time, so it gives up quietly (no
 * error, no memory, nothing to fit). */
static void spec_post(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const int *alloc)
{
	struct pollux_spec *sp = st->spec;
	struct pollux_obs *h;
	struct hb_error scratch = { 0 };
	struct hb_rng rng;
	int nodes, gpus;
	double iter_s, compute_s;
	const size_t n = st->nobs + 1;

	if (!shared_mode(sim) || st->per_type || hb_pool_threads(sim->pool) < 2 || job->cfg.ngpus < 1)
		return; /* per_type: refresh_types fits what it needs itself */
	if (sp && sp->posted) {
		hb_pool_claim(st->pool, &sp->bg); /* made for a configuration no longer run */
		sp->posted = 0;
	}
	if (alloc_shape(job, alloc, &nodes, &gpus, &scratch) < 0 ||
	    find_obs(st, -1, nodes, gpus, st->local_bs, st->accum_steps))
		return; /* no new observation, so no refit */
	rng = *obs_rng(sim, job, st); /* a copy: the stream moves when observe() draws */
	if (measure(sim, job, st, alloc, st->local_bs, st->accum_steps, &rng, &iter_s, &compute_s, &scratch) < 0)
		return;
	if (!sp) {
		if (!(sp = calloc(1, sizeof(*sp))))
			return;
		st->spec = sp;
		st->pool = sim->pool;
	}
	if (n > sp->cap) {
		size_t cap = sp->cap ? 2 * sp->cap : 16;
		struct hb_goodput_sample *a;

		while (cap < n)
			cap *= 2;
		if (!(a = realloc(sp->smp, cap * sizeof(*a))))
			return;
		sp->smp = a;
		sp->cap = cap;
	}
	/* the history as observe() will leave it, in the samples' array */
	if (!(h = malloc(n * sizeof(*h))))
		return;
	if (st->nobs)
		memcpy(h, st->obs, st->nobs * sizeof(*h)); /* st->obs is NULL before the first */
	h[st->nobs] = (struct pollux_obs){ .type = -1, /* one history: spec_post never runs per_type */
					   .num_nodes = nodes, .num_replicas = gpus, .local_bs = st->local_bs,
					   .accum_steps = st->accum_steps, .iter_sum = iter_s,
					   .compute_sum = compute_s, .count = 1 };
	if (st->fitted && theta_predicts(&st->theta, h, st->fit_nobs, n)) {
		free(h);
		return; /* refresh_fit will skip the refit */
	}
	fit_samples(h, n, sp->smp);
	free(h);
	sp->n = n;
	fit_options(sim, job, st, st->fitted ? &st->theta : NULL, st->theta_priors, &sp->init, &sp->opt);
	sp->posted = hb_pool_post(sim->pool, &sp->bg, spec_task, sp);
}

/* Sia fidelity's fit of n samples (on: the GPU type, for the message, or
 * NULL): the artifact's own, from its fixed point every time (fit_options
 * picks HB_FIT_LBFGSB under per_type; no warm start). */
static int fit_sia(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st,
		   const struct hb_goodput_sample *smp, size_t n, const char *on, struct hb_goodput_fit_result *fr,
		   struct hb_error *err)
{
	struct hb_goodput_fit_options opt;

	fit_options(sim, job, st, NULL, 0, NULL, &opt);
	if (hb_goodput_fit(smp, n, &opt, fr, err) < 0) {
		hb_error_prefix(err, "%s: job %s: theta_sys fit%s%s", job->agent->name, job->name, on ? " on " : "",
				on ? on : "");
		return -1;
	}
	st->decisions++;
	st->fits++;
	return 0;
}

/* Sia fidelity: refit every GPU type whose observations grew since its
 * fit, on its observations alone, never skipped (Job.update_params
 * refits on every new profile key). */
static int refresh_types(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	const int nt = job->perf->ngpus;
	const int cur = job->cfg.ngpus > 0 ? slowest_type(st->types, job->perf, job->cfg.alloc) : -1;
	struct hb_goodput_sample *smp = calloc(st->nobs, sizeof(*smp));

	if (!smp)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	for (int t = 0; t < nt; t++) {
		struct hb_pollux_type *ty = &st->types[t];
		struct hb_goodput_fit_result fr;
		size_t n = 0;

		for (size_t i = 0; i < st->nobs; i++)
			if (st->obs[i].type == t)
				fit_samples(&st->obs[i], 1, &smp[n++]);
		if (n == 0 || n == st->tfit[t].fit_nobs)
			continue;
		if (fit_sia(sim, job, st, smp, n, job->perf->gpus[t].name, &fr, err) < 0) {
			free(smp);
			return -1;
		}
		ty->theta = fr.params;
		ty->fitted = 1;
		st->tfit[t].fit_nobs = n;
	}
	free(smp);
	st->fit_nobs = st->nobs;
	for (int t = nt - 1; t >= 0; t--)
		if (st->types[t].fitted && (!st->fitted || t == cur)) {
			st->theta = st->types[t].theta; /* the current type's, else the last fitted */
			st->fitted = 1;
		}
	return 0;
}

/* Sia's unaware Pollux (merged): one fit of every observation, never
 * skipped, copied to every usable type (state's merged). */
static int refresh_merged(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	struct hb_goodput_fit_result fr;
	struct hb_goodput_sample *smp = calloc(st->nobs, sizeof(*smp));
	int rc;

	if (!smp)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	fit_samples(st->obs, st->nobs, smp);
	rc = fit_sia(sim, job, st, smp, st->nobs, NULL, &fr, err);
	free(smp);
	if (rc < 0)
		return -1;
	st->theta = fr.params;
	st->fitted = 1;
	st->fit_nobs = st->nobs;
	for (int t = 0; t < job->perf->ngpus; t++)
		if (st->types[t].usable) {
			st->types[t].theta = fr.params;
			st->types[t].fitted = 1;
		}
	return 0;
}

/* Shared clusters: refit when the history grew since the last fit, unless
 * theta already predicts what was added (then it counts as fitted and
 * nothing the scheduler reads changes: theta, priors and fits stay). */
static int refresh_fit(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	struct hb_goodput_fit_result fr;

	if (st->nobs == 0 || st->nobs == st->fit_nobs)
		return 0;
	if (st->merged)
		return refresh_merged(sim, job, st, err);
	if (st->per_type)
		return refresh_types(sim, job, st, err);
	if (st->fitted && theta_predicts_new(st)) {
		st->fit_nobs = st->nobs;
		st->refits_skipped++;
		return 0;
	}
	if (fit(sim, job, st, st->fitted ? &st->theta : NULL, st->theta_priors, &fr, err) < 0)
		return -1;
	st->theta_priors = fr.priors;
	st->theta = fr.params;
	st->fitted = 1;
	st->fit_nobs = st->nobs;
	st->decisions++;
	st->fits++;
	return 0;
}

/* Shared clusters: record the configuration the job runs now, once per
 * distinct (N, K, m, s), if it has run it since it was applied and was not
 * preempted meanwhile (the top). */
static int shared_observe(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	int nodes, gpus;

	if (!(st->run_from < hb_sim_now(sim)) || job->preemptions != st->preempt_seen || job->cfg.ngpus < 1)
		return 0;
	if (alloc_shape(job, job->cfg.alloc, &nodes, &gpus, err) < 0)
		return -1;
	if (find_obs(st, obs_type(st, job->perf, job->cfg.alloc), nodes, gpus, st->local_bs, obs_accum(st)))
		return 0;
	return observe(sim, job, st, err);
}

/* Shared clusters: everything the agent knows, brought up to date. */
static int shared_update(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, struct hb_error *err)
{
	if (types_prepare(sim, job, st, err) < 0 || shared_observe(sim, job, st, err) < 0 ||
	    refresh_fit(sim, job, st, err) < 0)
		return -1;
	return 0;
}

/* ---- the goodput decision -------------------------------------------------- */

/* Best (m, s) of the fitted model on alloc with M >= floor_bs, realised as a
 * DDP layout (see "Realising (m, s)" at the top) with B_G in [lo_bs,
 * maxB_G]. */
/* Pollux fidelity (simulator.py Job.update_local_bsz): the goodput argmax
 * over the measured per-GPU batch range as is, its atomic batch capped at
 * maxB_G / (K (s + 1)); NCF keeps the batch 32768 the artifact pins it to
 * (Cluster.__init__), split by the artifact's rule. */
static int choose_fid(struct hb_sim_job *job, const struct hb_goodput_params *theta,
		      const struct hb_grad_params *grad, const int *alloc, struct pollux_choice *out,
		      struct hb_error *err)
{
	struct hb_goodput_limits lim;
	long count;

	if (alloc_shape(job, alloc, &out->num_nodes, &out->num_replicas, err) < 0)
		return -1;
	if (job->fid->pinned_batch > 0) {
		out->global_bs = hb_fid_batch(job->fid->pinned_batch, out->num_replicas, job->fid->max_local,
					      job->max_gbs, (long)job->fid->m0, &out->local_bs, &out->accum_steps);
		out->feasible = out->global_bs > 0;
		return 0;
	}
	hb_goodput_limits_default(&lim, job->max_gbs, job->fid->min_local, job->fid->max_local);
	if (hb_goodput_argmax(theta, grad, &lim, out->num_nodes, out->num_replicas, &out->argmax, err) < 0)
		return -1;
	if (!out->argmax.feasible)
		return 0;
	out->accum_steps = out->argmax.accum_steps;
	out->local_bs = (int)out->argmax.local_bsz;
	count = (long)out->num_replicas * (out->accum_steps + 1);
	if (job->max_gbs / count < out->local_bs)
		out->local_bs = (int)(job->max_gbs / count);
	if (out->local_bs < 1)
		return 0;
	out->global_bs = (long)out->local_bs * count;
	out->feasible = 1;
	return 0;
}

/* The job's choose() table; NULL (no table: plain argmax) before its state exists. */
static struct hb_goodput_cands *choose_table(struct hb_sim_job *job)
{
	struct pollux_state *st = job->agent_state;

	return st ? &st->choose_table : NULL;
}

/* Sia fidelity (job.py Job.update_local_bsz, batch tuning on): on a GPU
 * type with a fit, the goodput argmax of that type's theta_sys over its
 * per-GPU range up to the placement's largest measured local batch
 * (Application.get_max_local_bsz) and the largest validated batch, the
 * atomic batch then corrected to the largest measured at that many
 * replicas and capped at max_batch / (K (s + 1)); on a type without one
 * yet, max(M0, min_local K) by the artifact's split (hb_agent_sia_split;
 * on a type without measured placements, the profiled local batch nearest
 * it).
 * Where the type's measurements do not cover the layout (outside the
 * convex hull the artifact interpolates in, where its lookup has no
 * value), the nearest profiled local batch below, which hetbatch's model
 * times. */
static int choose_sia(const struct hb_sim *sim, struct hb_sim_job *job, const struct pollux_state *st,
		      const struct hb_grad_params *grad, const int *alloc, struct pollux_choice *out,
		      struct hb_error *err)
{
	const struct hb_perf_measured *m = hb_perf_measured_of(job->perf, alloc, NULL);
	const long app_max = job->fid->runs[job->fid->nruns - 1].batch;
	const int t = slowest_type(st->types, job->perf, alloc);
	struct hb_goodput_limits lim;
	int max_local, cap, want, *lbs = NULL, nl = 0;
	long count;
	double step;

	if (alloc_shape(job, alloc, &out->num_nodes, &out->num_replicas, err) < 0)
		return -1;
	if (t < 0)
		return 0;
	if (!st->types[t].fitted) {
		long target = st->types[t].min_local_bsz * out->num_replicas;

		if (target < (long)job->fid->m0)
			target = (long)job->fid->m0;
		if (hb_agent_sia_split(job, alloc, target, 0, &out->local_bs, &out->accum_steps) < 1) {
			/* no measured placements of the type: the profiled local
			 * batch nearest target / K, no accumulation */
			if (feasible_lbs(sim, job, alloc, &lbs, &nl, err) < 0)
				return -1;
			out->accum_steps = 0;
			out->local_bs = nearest_lbs(lbs, nl, (double)target / out->num_replicas, out->num_replicas, 0, 1,
						    app_max);
			free(lbs);
			lbs = NULL;
		}
	} else {
		max_local = m ? hb_perf_measured_max_local(m, alloc, job->perf->nnodes, HB_PLACE_DESCENDING) : 0;
		if (max_local < 1)
			max_local = (int)st->types[t].max_local_bsz;
		hb_goodput_limits_default(&lim, app_max, st->types[t].min_local_bsz, max_local);
		if (hb_goodput_argmax_cached(&st->types[t].theta, grad, &lim, out->num_nodes, out->num_replicas,
					     choose_table(job), &out->argmax, err) < 0)
			return -1;
		if (!out->argmax.feasible)
			return 0;
		out->accum_steps = out->argmax.accum_steps;
		out->local_bs = (int)out->argmax.local_bsz;
		if ((cap = hb_perf_measured_max_local_replicas(m, out->num_replicas)) > 0 && out->local_bs > cap)
			out->local_bs = cap;
	}
	count = (long)out->num_replicas * (out->accum_steps + 1);
	if (app_max / count < out->local_bs)
		out->local_bs = (int)(app_max / count); /* a no-op for the split, which caps the same */
	if (out->local_bs >= 1 &&
	    !hb_perf_measured_step_ordered(m, alloc, job->perf->nnodes, HB_PLACE_DESCENDING, out->local_bs,
					   out->accum_steps, &step)) {
		if (feasible_lbs(sim, job, alloc, &lbs, &nl, err) < 0)
			return -1;
		want = out->local_bs;
		out->local_bs = 0;
		for (int i = 0; i < nl; i++) /* ascending */
			if (lbs[i] <= want)
				out->local_bs = lbs[i];
		free(lbs);
	}
	if (out->local_bs < 1)
		return 0;
	out->global_bs = (long)out->local_bs * count;
	out->feasible = 1;
	return 0;
}

static int choose(const struct hb_sim *sim, struct hb_sim_job *job, const struct hb_goodput_params *theta,
		  const struct hb_grad_params *grad, const int *alloc, long floor_bs, long lo_bs,
		  struct pollux_choice *out, struct hb_error *err)
{
	struct hb_goodput_limits lim;
	int *lbs = NULL, nl = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	if (job->fid_agents)
		return choose_fid(job, theta, grad, alloc, out, err);
	if (alloc_shape(job, alloc, &out->num_nodes, &out->num_replicas, err) < 0 ||
	    feasible_lbs(sim, job, alloc, &lbs, &nl, err) < 0)
		return -1;
	if (nl == 0 || (long)lbs[0] * out->num_replicas > job->max_gbs) {
		free(lbs);
		return 0;
	}
	hb_goodput_limits_default(&lim, job->max_gbs, lbs[0], lbs[nl - 1]);
	lim.min_bsz = floor_bs; /* never decrease B_G (jabas.md §5) */
	if (hb_goodput_argmax_cached(theta, grad, &lim, out->num_nodes, out->num_replicas,
				     choose_table(job),
				     &out->argmax, err) < 0)
		goto done;
	if (out->argmax.feasible) {
		out->accum_steps = out->argmax.accum_steps;
		out->local_bs = nearest_lbs(lbs, nl, (double)out->argmax.local_bsz, out->num_replicas,
					    out->accum_steps, lo_bs, job->max_gbs);
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
static void note_decision(struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_goodput_params *p,
			  double phi, const struct pollux_choice *c)
{
	hb_sim_note(sim, job, "adapt",
		    "theta %.9g %.9g %.9g %.9g %.9g %.9g %.9g phi %.9g floor %ld argmax m %ld s %d M %ld "
		    "good %.6g -> B_L %d s %d B_G %ld",
		    p->alpha_c, p->beta_c, p->alpha_n, p->beta_n, p->alpha_r, p->beta_r, p->gamma, phi,
		    job->cfg.global_bs, c->argmax.local_bsz, c->argmax.accum_steps, c->argmax.total_bsz,
		    c->argmax.goodput, c->local_bs, c->accum_steps, c->global_bs);
}

/* ---- start --------------------------------------------------------------- */

static int shared_choose(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const int *alloc,
			 int epoch_end, struct pollux_choice *c, struct hb_error *err);

/* The first node alloc uses (0 when empty). */
static int first_node(const int *alloc, int n)
{
	for (int i = 0; i < n; i++)
		if (alloc[i] > 0)
			return i;
	return 0;
}

/* minB_G on alloc: the fewest micro-steps, then the feasible B_L nearest to
 * minB_G / (K (s+1)) that keeps B_G in [minB_G, maxB_G]. */
static int start_on(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const int *alloc,
		    struct hb_error *err)
{
	int *lbs = NULL, nl = 0, nodes, gpus, local_bs = 0;
	long s = 0, maxl;

	if (st->per_type) {
		/* Sia fidelity: the executor's batch on this type (choose_sia) */
		struct pollux_choice c;

		if (shared_choose(sim, job, st, alloc, 0, &c, err) < 0)
			return -1;
		if (!c.feasible)
			return hb_input_error(err, "%s: job %s: no batch on %d GPUs of %s", job->agent->name,
					      job->name, c.num_replicas,
					      sim->cat->gpus[sim->cl->nodes[first_node(alloc, sim->cl->nnodes)].gpu].name);
		return apply(sim, job, st, alloc, c.local_bs, c.accum_steps, HB_APPLY_START, "start at Sia's batch",
			     err);
	}
	if (job->fid_agents) {
		/* Job.update_local_bsz before any profile: max(M0, min_local K),
		 * or NCF's pinned batch, by the artifact's split. */
		long target;
		int atomic, accum;

		if (alloc_shape(job, alloc, &nodes, &gpus, err) < 0)
			return -1;
		target = job->fid->pinned_batch;
		if (target == 0) {
			target = (long)job->fid->min_local * gpus;
			if (target < (long)job->fid->m0)
				target = (long)job->fid->m0;
		}
		if (hb_fid_batch(target, gpus, job->fid->max_local, job->max_gbs, (long)job->fid->m0, &atomic,
				 &accum) < 1)
			return hb_input_error(err, "%s: job %s: no batch for B_G %ld on %d GPUs", job->agent->name,
					      job->name, target, gpus);
		return apply(sim, job, st, alloc, atomic, accum, HB_APPLY_START, "start at the artifact's first batch",
			     err);
	}
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

static int pollux_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = NULL;
	int *alloc, rc;

	(void)state;
	if (state_new(job, &st, err) < 0 ||
	    (sim->opts.fidelity == HB_FIDELITY_SIA && shared_mode(sim) && types_prepare(sim, job, st, err) < 0))
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

static int pollux_as_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = NULL;
	int *alloc, rc;

	(void)state;
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
	if (observe(sim, job, st, err) < 0 || fit(sim, job, st, NULL, 0, fr, err) < 0)
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

/* Shared clusters: the fitted argmax on alloc (its slowest type) without the
 * never-decrease floor, B_G in [minB_G, maxB_G] (the top).  Requires a fit.
 * epoch_end: the choice at the end of an epoch; under Sia fidelity it reads
 * the gradient statistics of the epoch that ended, as the artifact's does
 * (job.py Job.step records get_grad_stats(batch, epoch) at the start of
 * each chunk, and update_local_bsz at its end, after the epoch count has
 * moved, reads them). */
static int shared_choose(struct hb_sim *sim, struct hb_sim_job *job, struct pollux_state *st, const int *alloc,
			 int epoch_end, struct pollux_choice *c, struct hb_error *err)
{
	double phi = st->per_type && epoch_end && job->fid && job->epoch > 0
			     ? hb_fid_phi(job->fid, (double)job->cfg.global_bs, job->epoch - 1)
			     : hb_sim_phi(sim, job, (double)job->cfg.global_bs);
	struct hb_grad_params grad = hb_grad_params_from_phi(phi, job->stats->m0);
	struct hb_goodput_params theta = theta_on(st, job->perf, alloc);

	if (st->per_type) {
		memset(c, 0, sizeof(*c));
		if (choose_sia(sim, job, st, &grad, alloc, c, err) < 0)
			return -1;
	} else if (choose(sim, job, &theta, &grad, alloc, 0, job->min_gbs, c, err) < 0) {
		return -1;
	}
	note_decision(sim, job, &theta, phi, c);
	return 0;
}

static int pollux_on_epoch_end(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = job->agent_state;
	struct hb_goodput_fit_result fr;
	struct hb_grad_params grad;
	struct pollux_choice c;
	double phi;

	(void)state;
	if (shared_mode(sim)) {
		if (shared_update(sim, job, st, err) < 0)
			return -1;
		if (!st->fitted)
			return 0;
		if (shared_choose(sim, job, st, job->cfg.alloc, 1, &c, err) < 0)
			return -1;
		return retune(sim, job, st, &c, err);
	}
	if (prepare_decision(sim, job, st, &fr, &grad, &phi, err) < 0 ||
	    choose(sim, job, &fr.params, &grad, job->cfg.alloc, job->cfg.global_bs, job->cfg.global_bs, &c, err) < 0)
		return -1;
	note_decision(sim, job, &fr.params, phi, &c);
	return retune(sim, job, st, &c, err);
}

static int pollux_as_on_epoch_end(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = job->agent_state;
	struct hb_goodput_fit_result fr;
	struct hb_grad_params grad;
	struct pollux_choice cur, best = { 0 };
	double phi, g1;
	int *alloc, added = 0, rc = -1;
	long floor_bs = job->cfg.global_bs;

	(void)state;
	if (prepare_decision(sim, job, st, &fr, &grad, &phi, err) < 0 ||
	    choose(sim, job, &fr.params, &grad, job->cfg.alloc, floor_bs, floor_bs, &cur, err) < 0 ||
	    single_gpu_goodput(sim, job, &fr.params, &grad, job->cfg.alloc, &g1, err) < 0)
		return -1;
	note_decision(sim, job, &fr.params, phi, &cur);
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
			if (choose(sim, job, &fr.params, &grad, alloc, floor_bs, floor_bs, &e, err) < 0)
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

/* ---- a new grant (shared clusters) --------------------------------------------- */

/* Re-plan (m, s) inside the new grant with the history and theta_sys kept:
 * record what ran before, refit if that was new, take the fitted argmax on
 * the grant, and restart on it.  Without a fit yet (the grant changed before
 * anything was measured) the job restarts at minB_G as at its start. */
static int pollux_on_grant(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = NULL;
	struct pollux_choice c = { 0 };
	int *alloc, rc;

	(void)state;
	if (state_new(job, &st, err) < 0 || shared_update(sim, job, st, err) < 0)
		return -1;
	alloc = calloc((size_t)sim->cl->nnodes, sizeof(*alloc));
	if (!alloc)
		return hb_runtime_error(err, "%s: job %s: out of memory", job->agent->name, job->name);
	hb_agent_alloc_granted(job, alloc);
	rc = st->fitted || st->per_type ? shared_choose(sim, job, st, alloc, 0, &c, err) : 0;
	if (rc == 0 && c.feasible) {
		char why[128];

		snprintf(why, sizeof(why), "new grant of %d GPUs: goodput argmax (M %ld, efficiency %.3f)", job->ngrant,
			 c.argmax.total_bsz, c.argmax.efficiency);
		rc = apply(sim, job, st, alloc, c.local_bs, c.accum_steps, HB_APPLY_RESTART, why, err);
	} else if (rc == 0) {
		rc = start_on(sim, job, st, alloc, err); /* the simulator charges it as a restart */
	}
	free(alloc);
	return rc;
}

/* ---- the round (Sia fidelity) ------------------------------------------------- */

int hb_pollux_agent_retune(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_state *st = job->agent_state;
	struct pollux_choice c;

	if (job->agent != &hb_agent_pollux || !st || !st->per_type || job->state != HB_JOB_RUNNING)
		return 0;
	if (shared_update(sim, job, st, err) < 0 || shared_choose(sim, job, st, job->cfg.alloc, 0, &c, err) < 0)
		return -1;
	return retune(sim, job, st, &c, err);
}

/* ---- the report to PolluxSched (agent_pollux.h) --------------------------------- */

int hb_pollux_agent_report(struct hb_sim *sim, struct hb_sim_job *job, struct hb_pollux_report *out,
			   struct hb_error *err)
{
	struct pollux_state *st = NULL;
	const struct hb_pollux_type *ref;
	long b;

	memset(out, 0, sizeof(*out));
	if (job->agent != &hb_agent_pollux)
		return hb_input_error(err, "pollux report: job %s runs agent %s; PolluxSched needs agent pollux",
				      job->name, job->agent ? job->agent->name : "(none)");
	if (state_new(job, &st, err) < 0 || types_prepare(sim, job, st, err) < 0)
		return -1;
	if (job->state == HB_JOB_RUNNING && shared_observe(sim, job, st, err) < 0)
		return -1;
	if (refresh_fit(sim, job, st, err) < 0)
		return -1;
	out->fitted = st->fitted;
	out->per_type = st->per_type;
	out->theta = st->theta;
	b = job->started && job->cfg.global_bs > 0 ? job->cfg.global_bs : job->min_gbs;
	out->grad = hb_grad_params_from_phi(hb_sim_phi(sim, job, (double)b), job->stats->m0);
	ref = st->ref_type >= 0 ? &st->types[st->ref_type] : NULL;
	hb_goodput_limits_default(&out->limits, job->max_gbs, ref ? ref->min_local_bsz : job->perf->min_lbs,
				  ref ? ref->max_local_bsz : job->perf->min_lbs);
	if (job->fid && job->fid->pinned_batch > 0)
		out->replica_cap = 1;
	for (size_t i = 0; i < st->nobs; i++)
		if (st->obs[i].num_replicas > out->max_replicas_seen)
			out->max_replicas_seen = st->obs[i].num_replicas;
	out->nobs = st->nobs;
	out->fits = st->fits;
	out->refits_skipped = st->refits_skipped;
	out->fits_ahead = st->fits_ahead;
	out->ref_type = st->ref_type;
	out->ntypes = job->perf->ngpus;
	out->types = st->types;
	out->memo = &st->memo;
	return 0;
}

/* The memo's entry for (type, N, K) under r's key and its candidate
 * table (*table), NULL when not kept (N beyond 2, or out of memory: then
 * the caller just computes). */
static struct hb_goodput_config *memo_slot(const struct hb_pollux_report *r, int type, int num_nodes,
					   int num_replicas, unsigned char **have, struct hb_goodput_cands **table)
{
	struct pollux_argmax_memo *m = r->memo;
	size_t i;

	if (!m || num_nodes < 1 || num_nodes > 2 || num_replicas < 1 || r->ntypes < 1)
		return NULL;
	if (!m->valid || m->ntypes != r->ntypes || memcmp(&m->theta, &r->theta, sizeof(m->theta)) != 0 ||
	    memcmp(&m->grad, &r->grad, sizeof(m->grad)) != 0 ||
	    memcmp(&m->limits, &r->limits, sizeof(m->limits)) != 0) {
		if (m->have)
			memset(m->have, 0, (size_t)m->kcap * (size_t)m->ntypes * 2); /* as sized */
		if (m->ntypes != r->ntypes) {
			memo_tables_free(m);
			free(m->c);
			free(m->have);
			m->c = NULL;
			m->have = NULL;
			m->kcap = 0;
		}
		m->theta = r->theta;
		m->grad = r->grad;
		m->limits = r->limits;
		m->ntypes = r->ntypes;
		m->valid = 1;
	}
	if (num_replicas >= m->kcap) {
		int cap = m->kcap ? 2 * m->kcap : 16;
		size_t row = (size_t)r->ntypes * 2, old = (size_t)m->kcap * row;
		struct hb_goodput_config *nc;
		struct hb_goodput_cands *nt;
		unsigned char *nh;

		while (cap <= num_replicas)
			cap *= 2;
		nc = realloc(m->c, (size_t)cap * row * sizeof(*nc));
		if (!nc)
			return NULL;
		m->c = nc;
		nh = realloc(m->have, (size_t)cap * row);
		if (!nh)
			return NULL;
		m->have = nh;
		nt = realloc(m->tables, (size_t)cap * row * sizeof(*nt));
		if (!nt)
			return NULL; /* kcap unchanged: the grown parts are not read */
		m->tables = nt;
		memset(nh + old, 0, (size_t)cap * row - old);
		memset(nt + old, 0, ((size_t)cap * row - old) * sizeof(*nt));
		m->kcap = cap;
	}
	i = ((size_t)num_replicas * (size_t)r->ntypes + (size_t)type) * 2 + (size_t)(num_nodes - 1);
	*have = &m->have[i];
	*table = &m->tables[i];
	return &m->c[i];
}

int hb_pollux_slowest_type(const struct hb_pollux_report *r, const struct hb_perf *perf, const int *alloc)
{
	return r->types ? slowest_type(r->types, perf, alloc) : -1;
}

int hb_pollux_report_argmax(const struct hb_pollux_report *r, int type, int num_nodes, int num_replicas,
			    struct hb_goodput_config *out, struct hb_error *err)
{
	struct hb_goodput_params p = r->theta;
	struct hb_goodput_limits l = r->limits;
	struct hb_goodput_config *slot;
	struct hb_goodput_cands *table = NULL;
	unsigned char *have = NULL;

	if (!r->fitted)
		return hb_input_error(err, "pollux report: no fitted theta_sys to evaluate %d GPUs on %d nodes",
				      num_replicas, num_nodes);
	if (type < 0 || type >= r->ntypes || !r->types[type].usable) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (r->per_type) {
		/* Sia fidelity: the type's own fit, its own batch range */
		if (!r->types[type].fitted)
			return hb_input_error(err, "pollux report: no theta_sys fitted on GPU type %d to evaluate %d "
					      "GPUs on %d nodes", type, num_replicas, num_nodes);
		l.min_local_bsz = r->types[type].min_local_bsz;
		l.max_local_bsz = r->types[type].max_local_bsz;
		/* the memo's results are keyed by one theta: only its candidate
		 * tables, which keep their own keys, are used */
		(void)memo_slot(r, type, num_nodes, num_replicas, &have, &table);
		return hb_goodput_argmax_cached(&r->types[type].theta, &r->grad, &l, num_nodes, num_replicas, table,
						out, err);
	}
	slot = memo_slot(r, type, num_nodes, num_replicas, &have, &table);
	if (slot && *have) {
		*out = *slot;
		return 0;
	}
	p.alpha_c *= r->types[type].compute_scale;
	p.beta_c *= r->types[type].compute_scale;
	l.min_local_bsz = r->types[type].min_local_bsz;
	l.max_local_bsz = r->types[type].max_local_bsz;
	if (hb_goodput_argmax_cached(&p, &r->grad, &l, num_nodes, num_replicas, table, out, err) < 0)
		return -1;
	if (slot) {
		*slot = *out;
		*have = 1;
	}
	return 0;
}

int hb_pollux_report_projected(const struct hb_pollux_report *r, int type, int src, int src_per_node,
			       int num_replicas, struct hb_goodput_config *out, struct hb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!r->per_type || type < 0 || type >= r->ntypes || src < 0 || src >= r->ntypes || src_per_node < 1)
		return hb_input_error(err, "pollux report: no projection from GPU type %d to %d (%d per node)", src,
				      type, src_per_node);
	if (!r->types[type].usable || !(r->types[type].rate > 0 && r->types[src].rate > 0))
		return 0;
	if (hb_pollux_report_argmax(r, src, (num_replicas + src_per_node - 1) / src_per_node, num_replicas, out,
				    err) < 0)
		return -1;
	out->goodput *= r->types[type].rate / r->types[src].rate;
	out->throughput *= r->types[type].rate / r->types[src].rate;
	return 0;
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
	.free_job = pollux_free_job,
	.on_grant = pollux_on_grant,
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
	.free_job = pollux_free_job,
};
