/*
 * easyscale.h: what EasyScale's job agent (agent_easyscale.c) and its
 * inter-job scheduler (arbiter_easyscale.c) share: a job's planner view
 * and the evaluation of an EST plan on an allocation (notes/easyscale.md
 * §2; the plan mathematics is solver/est_plan.h).
 *
 * A job has maxP logical workers (ESTs): its requested GPU count (the GPUs
 * YARN-CS would gang-schedule for it), else the largest node.  Its global
 * batch never changes: the requested batch (else minB_G), split into maxP
 * equal per-EST batches; the per-EST batch is the profiled local batch
 * nearest B / maxP (ties to the larger) that one GPU of the type runs and
 * whose maxP multiple stays inside the model's [minB_G, maxB_G], so the
 * realised global batch is maxP x that, as the static DDP baseline rounds
 * its B_L (a request whose B / maxP fits no GPU runs at the largest
 * per-EST batch that does: EasyScale has no gradient accumulation).  Its statistical
 * efficiency is therefore fixed-batch DDP's, by construction (§1.6).
 *
 * Per GPU type the planner uses the perf model (solver/perfmodel.h) of one
 * worker at the per-EST batch, one VSW, no accumulation:
 *   est_s    = data + forward + backward (one EST's local step);
 *   fixed_s  = what the step adds once per GPU: optimizer update and BN
 *              sync, plus the exposed all-reduce of the GPU's node in the
 *              allocation (the perf model's overlap with the last backward);
 *   switch_s = per EST beyond the first: the context-switch ratio of [A]'s
 *              Fig. 11 data minus 1, times est_s, plus the part of the
 *              gradient's D2H copy that the next EST's forward and
 *              backward do not hide (gradient bytes / HB_ES_PCIE_BW);
 *   d2       = (D1+D2) / D1 of [A]'s overhead.csv for the (model, GPU type)
 *              when a plan mixes types; 1 otherwise.
 * The simulated step time of a plan is always the full expression (with
 * the all-reduce: every policy pays it); the planner's estimate leaves the
 * all-reduce out when the option comm is 0 (easyscale_opts.h; the paper's Eq. 1).
 */
#ifndef HB_EASYSCALE_H
#define HB_EASYSCALE_H

#include "est_plan.h"
#include "sim.h"

/* Effective device-to-host bandwidth of a gradient copy: assumed, PCIe 3.0
 * x16 (15.75 GB/s theoretical) at about 75 % efficiency. */
#define HB_ES_PCIE_BW 12e9
/* The artifact's rescale_time: charged at a job's first start only ([A]
 * simulator.py, notes §3 "Only the first start pays a 20 s rescale_time"). */
#define HB_ES_ARTIFACT_START_S 20.0
/* Proposal rules of the inter-job scheduler ([A] easy_policy.py, notes §2.5). */
#define HB_ES_MAX_WASTE 0.30     /* a proposed plan wastes at most this share of its capacity */
#define HB_ES_ROUND_S 60.0       /* scheduling interval */

/* One job as EasyScale's planner sees it on the simulation's cluster. */
struct hb_es_job {
	int maxp;                /* logical workers (ESTs) */
	int est_bs;              /* per-EST batch (a profiled local batch) */
	long global_bs;          /* maxp x est_bs, fixed for the job's life */
	int pref;                /* preferred GPU type (index into the perf model's GPU types) */
	int d2;                  /* 1: the job may mix GPU types (D2 determinism) */
	unsigned usable;         /* bit per GPU type on which one EST of est_bs fits */
	int ntypes;              /* the perf model's GPU types */
	struct hb_est_type types[HB_EST_MAX_TYPES]; /* per type, fixed_s without the all-reduce; avail 0 */
};

/* A plan on one allocation. */
struct hb_es_eval {
	struct hb_est_plan plan; /* the split the planner picked (by its estimate) */
	double est_step_s;       /* the planner's step time (all-reduce left out when comm is 0) */
	double true_step_s;      /* the simulated step time of that split, all-reduce included */
	double est_thp;          /* maxP / est_step_s, mini-batches per second */
	double true_thp;         /* maxP / true_step_s */
};

/* The planner view of job on sim's cluster; an input error when its per-EST
 * batch fits no GPU type, or its preferred type (job->pref_gpu) is not in
 * the cluster. */
int hb_es_job_init(const struct hb_sim *sim, const struct hb_sim_job *job, struct hb_es_job *ej, struct hb_error *err);

/* Plan on every GPU of alloc (GPUs per node): the split by the planner's
 * estimate, and its true step time.  An input error when alloc holds a GPU
 * type the job cannot use, none at all, or more GPUs than maxP. */
int hb_es_eval(const struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_es_job *ej, const int *alloc,
	       struct hb_es_eval *out, struct hb_error *err);

/* Add k GPUs of GPU type g (perf index) from pool (GPUs per node) to alloc,
 * so that alloc[i] never exceeds pool[i] (alloc counts what was taken from
 * the pool): first on nodes where prefer[i] > 0 (prefer may be NULL), then
 * on the nodes with the most room, ties to the lower index.  0, or -1 when
 * the pool lacks them (alloc then holds what could be placed). */
int hb_es_place(const struct hb_perf *p, const int *pool, const int *prefer, int g, int k, int *alloc);

/* Role-1 over a set of GPUs: the best plan using some of `within` (GPUs per
 * node) of the types in `allowed` (bit per perf GPU type, 0 = all the job
 * can use; a caller holds a job without D2 to one type), by the planner's
 * estimate, ties to fewer GPUs; alloc (nnodes entries) receives its GPUs. */
int hb_es_best_alloc(const struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_es_job *ej,
		     const int *within, unsigned allowed, int *alloc, struct hb_error *err);

/* The D2 slowdown (D1+D2 over D1, at least 1) and the context-switch ratio
 * of [A]'s data for a catalog model and GPU type, with the documented
 * stand-ins for models and GPUs the paper did not measure. */
double hb_es_d2_factor(const struct hb_model *m, const char *gpu);
double hb_es_switch_ratio(const struct hb_model *m);

#endif
