/*
 * agent_util.h: helpers shared by the job agents (sim/policies/agent_*.c), and the
 * decision cores of the static, SimiGrad and OptPerf agents.
 *
 * The helpers are what every baseline that ignores JABAS's IIDP layout
 * needs: "all GPUs of the cluster", "equal-local-batch DDP at a target
 * B_G, as a job configuration", SimiGrad's similarity rule with clipping,
 * and the per-iteration GNS monitoring cost of Pollux-family agents.
 *
 * The decision cores take plain inputs (a perf model, an allocation, an
 * observed similarity or a noise scale) and return the configuration a
 * rule picks without touching a simulation, so tests can hand-build the
 * situation a rule decides in; the agents only add observation, charging
 * and hb_sim_apply around them.
 *
 * Every hb_job_config passed in must have been initialised with
 * hb_job_config_init(cfg, perf->nnodes) (it owns alloc); on success the
 * functions fill every field, on failure they leave alloc allocated so the
 * caller frees it either way.
 */
#ifndef HB_AGENT_UTIL_H
#define HB_AGENT_UTIL_H

#include "ddp.h"       /* hb_ddp_plan, struct hb_ddp_result: equal-local-batch layouts */
#include "optperf.h"   /* struct hb_optperf_choice: Cannikin's batch choice */
#include "sim.h"

/* ---- shared helpers -------------------------------------------------------- */

/* Adaptation interval p of a job: sim->opts.interval when > 0 (the
 * --interval override), else the model's adapt_interval (100 for every
 * JABAS model, notes/jabas.md §4.1 and Table 4).  Shaped as an agent's
 * interval callback (struct hb_agent_ops); it reads no agent state. */
long hb_agent_interval(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job);

/* Every GPU of the cluster: alloc[i] = GPUs of node i (perf->nnodes entries,
 * caller-owned).  Returns the total. */
int hb_agent_alloc_all(const struct hb_perf *perf, int *alloc);

/* The GPUs the cluster arbiter granted the job (the whole cluster under the
 * dedicated arbiter): alloc[i] = job->grant[i].  Returns the total. */
int hb_agent_alloc_granted(const struct hb_sim_job *job, int *alloc);

/* 1 when the job holds every GPU of the cluster.  Pollux-AS, whose node
 * order spans the whole cluster, needs it (it runs single-job studies
 * only); JABAS re-chooses inside its arbiter's offer instead. */
int hb_agent_owns_cluster(const struct hb_sim *sim, const struct hb_sim_job *job);

/* Equal-local-batch data parallelism at a target global batch on alloc
 * (notes/jabas.md §5 "Porting baselines" and §10.17): hb_ddp_plan's layout,
 * i.e. the fewest accumulation steps that let a local batch no larger than
 * the smallest memory allows carry the target, and the multiple of minB_L
 * nearest the target share; the slowest GPU sets the pace.  The realised
 * B_G (cfg->global_bs) may differ from the target by that rounding.  Fills
 * cfg with overhead_per_iter_s = 0 and eff_factor = 1 (the caller adds its
 * monitoring costs); plan (may be NULL) receives the plan.  Fails with
 * HB_EINPUT when no local batch fits every GPU type of alloc. */
int hb_agent_ddp_config(const struct hb_perf *perf, const int *alloc, long target_gbs, struct hb_job_config *cfg,
			struct hb_ddp_result *plan, struct hb_error *err);

/* Sia fidelity's batch for a job at a fixed global batch (job.py
 * Job.update_local_bsz without batch tuning): hb_fid_batch's split with
 * the placement's own largest measured local batch on the allocation's GPU
 * type (Application.get_max_local_bsz), capped by the largest measured at
 * that many replicas and by the largest validated batch, timed by that
 * type's measured steps.  1 and *cfg set; 0 when it does not apply (no
 * validation runs, or an allocation of mixed types or without measured
 * rows: hetbatch's DDP plan then), -1 on error.  predict 1: the split
 * Sia's Gavel predicts throughputs with (gavel.py predict_throughput): an
 * extra micro-step on one GPU whatever the batch, no memory correction. */
int hb_agent_sia_fixed_config(const struct hb_sim_job *job, const int *alloc, long target_gbs, int predict,
			      struct hb_job_config *cfg, struct hb_error *err);
/* hb_agent_sia_fixed_config's split alone: the realised global batch, and
 * *atomic, *accum (extra micro-steps); 0 when it does not apply. */
long hb_agent_sia_split(const struct hb_sim_job *job, const int *alloc, long target_gbs, int predict, int *atomic,
			int *accum);

/* Pollux fidelity (sim --fidelity pollux, fidelity.h): the artifact's batch
 * rule for target_gbs on alloc (hb_fid_batch within job->fid's per-GPU
 * range) and the iteration time of that layout:
 * hb_ddp_iter_time, i.e. the measured placements where they cover it.
 * Fills cfg like hb_agent_ddp_config. */
int hb_agent_fid_config(const struct hb_sim_job *job, const int *alloc, long target_gbs, struct hb_job_config *cfg,
			struct hb_error *err);

/* The artifact's true iteration time of (alloc, atomic, accum): a measured
 * placement or its 3-D interpolation, else the perf model; *accum_s (may be
 * NULL) receives what one extra micro-step costs.  The artifact keys a
 * placement by the order of the job's allocation list (perf_measured.h):
 * node_order 1 for its Pollux (GPUs listed by node), 0 for its Tiresias and
 * Optimus (most free GPUs first, so descending). */
int hb_agent_fid_iter_s(const struct hb_sim_job *job, const int *alloc, int node_order, int atomic, int accum,
			double *iter_s, double *accum_s, struct hb_error *err);

/* GNS monitoring cost of one iteration for Pollux-family agents:
 * hb_sim_gns_overhead(sim, job) (a fraction of the iteration time, sim.c)
 * times iter_s. */
double hb_agent_gns_overhead_s(const struct hb_sim *sim, const struct hb_sim_job *job, double iter_s);

/* ---- SimiGrad's rule (notes/jabas.md §4.1, SimiGrad Algorithm 1) ----------- */

struct hb_simigrad_params {
	double gamma;            /* similarity threshold γ */
	double alpha;            /* adaptive rate α (0.1) */
	long min_gbs, max_gbs;   /* bounds minB_G, maxB_G */
};

/* Direction the rule asks for. */
enum hb_simigrad_dir {
	HB_SIMIGRAD_SHRINK = -1, /* Φ > γ: gradients agree, the batch can shrink */
	HB_SIMIGRAD_HOLD = 0,    /* Φ == γ (or Φ not a number) */
	HB_SIMIGRAD_GROW = 1,    /* Φ < γ: gradients are noisy, grow the batch */
};

/* One step of the rule on a (real-valued) batch b: b(1+α) when Φ < γ,
 * b(1−α) when Φ > γ, then clipped to [min_gbs, max_gbs].  *dir (may be
 * NULL) receives the direction asked for, before clipping. */
double hb_simigrad_step(const struct hb_simigrad_params *sp, double b, double phi, int *dir);

/* What the SimiGrad agent does with one observation (agent_simigrad.c). */
struct hb_simigrad_decision {
	int dir;                 /* enum hb_simigrad_dir asked for by Φ */
	double target;           /* the new unrounded target B_G after the step and clipping */
	long planned_gbs;        /* realised B_G of the DDP plan for round(target) */
	int apply;               /* 1: cfg holds a new configuration to apply in place */
	char why[160];           /* the decision in words, for the event record */
};

/* Apply the rule to the unrounded target (not to the realised B_G: see
 * agent_simigrad.c), plan DDP for round(target) on alloc, and keep the plan
 * only when its realised B_G moves from cur_gbs in the direction Φ asked
 * for; otherwise d->apply = 0 and cfg, when filled, holds the rejected plan.
 * cfg's overhead_per_iter_s is 0; the agent adds the similarity cost. */
int hb_simigrad_decide(const struct hb_perf *perf, const int *alloc, const struct hb_simigrad_params *sp,
		       double target, long cur_gbs, double phi, struct hb_job_config *cfg,
		       struct hb_simigrad_decision *d, struct hb_error *err);

/* ---- Cannikin's choice (Cannikin §4.1, §4.5) ----------------------------- */

/* Switch B only when the predicted goodput beats the current one by this
 * factor: AdaptDL's (adaptdl/torch/data.py,
 * AdaptiveDataLoaderHelper._speedup_threshold), kept by Cannikin's loader. */
#define HB_CANNIKIN_SPEEDUP_THRESHOLD 1.05

struct hb_cannikin_input {
	const struct hb_perf *perf;      /* the job's perf model */
	const struct hb_stats *stats;    /* for the unequal-batch what-if penalty */
	const int *alloc;                /* GPUs per node */
	double phi;                      /* gradient noise scale, samples */
	double m0;                       /* B₀ of the efficiency (Pollux M0) */
	long min_gbs, max_gbs;           /* candidate range of the total batch */
	long cur_gbs;                    /* current total batch; 0 = first choice (no hysteresis) */
	double speedup_threshold;        /* switch when goodput(B*) > this × goodput(cur_gbs) */
	/* Optional, Cannikin's learned model (solver/cannikin_ctl.h): when
	 * set, B* and the split are chosen on it instead of the profile's
	 * OptPerf cluster, which stays the truth cfg->iter_s is measured on;
	 * its nodes are alloc's GPUs in the same order. */
	const struct hb_optperf_cluster *model;
	/* Optional with model: the split now in use (one entry per GPU).  When
	 * B stays, the model's split of the current B replaces it if it
	 * differs (Cannikin recomputes r_opt every epoch, §4.5). */
	const long *cur_local;
};

struct hb_cannikin_decision {
	struct hb_optperf_choice choice; /* B*, OptPerf(B*), E(B*), goodput of the grid argmax */
	double cur_goodput;              /* goodput of cur_gbs on the same model; 0 at the first choice */
	int apply;                       /* 1: cfg holds the configuration for B* */
	char why[160];                   /* the decision in words */
};

/* Pick B* = argmax goodput over the geometric grid of [min_gbs, max_gbs]
 * with OptPerf(B) as the iteration time (hb_optperf_choose_batch on
 * hb_optperf_from_perf's cluster for alloc), and the integer split of B*
 * (hb_optperf_round).  When applied, cfg holds: local_bs = 0 and the split
 * in gpu_local_bs (or the common value in local_bs and no gpu_local_bs when
 * the split is equal), iter_s = Eq. 7 time of the integer split
 * on the same OptPerf cluster, eff_factor = hb_stats_unequal_factor of the
 * split, overhead 0.  local (may be NULL; one entry per GPU of alloc, in
 * node order) receives the split whether or not it is applied.  Fails with
 * HB_EINPUT when the GPUs' memory caps sum below min_gbs: Cannikin has no
 * gradient accumulation (the paper never uses it). */
int hb_cannikin_decide(const struct hb_cannikin_input *in, struct hb_job_config *cfg, long *local,
		       struct hb_cannikin_decision *d, struct hb_error *err);

#endif
