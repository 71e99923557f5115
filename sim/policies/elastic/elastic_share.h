/*
 * elastic_share.h: what the IBM elastic policy's arbiter (arbiter_elastic.c)
 * and agent (agent_elastic.c) share: the Job Scalability Analyser's answer
 * (solver/elastic.h, notes/elastic.md §2-3) for a job, built from the
 * simulator's perf model of the job on the cluster.
 *
 * The arbiter keeps one entry per (model, batch range, fixed GPU count) and
 * hands it to the agent, so both read the same S_j(k) and b_j^opt(k); under
 * any other arbiter (the dedicated single-job study) the agent builds its own
 * entry with the same function.
 *
 * How the JSA input is derived from the perf model (decisions, each with the
 * note's section):
 *   - t_j^proc(b_gpu) (§2 (1)): the one-GPU DDP iteration time of the perf
 *     model (hb_ddp_iter_time on a one-GPU allocation, no accumulation) at
 *     every candidate per-GPU batch, i.e. every multiple of minB_L that every
 *     GPU type of the cluster can hold (hb_perf_alloc_lbs on the whole
 *     cluster).  With mixed GPU types the note has no answer (§1, II-D assumes
 *     homogeneous clusters): the DP treats the K GPUs as interchangeable, so
 *     the profile must hold on any GPU a job may get: the slowest type's time
 *     at each batch (pointwise maximum) and the smallest memory limit.
 *   - c_j, the per-GPU limit (§2 (1), §8.2 item 2): the largest such batch,
 *     capped at the model's max_lbs when the catalog gives one (the paper's
 *     "maximum batch-size-per-GPU feasible for the job" is the job's, not
 *     only memory's: Table II profiles category 1 up to 32 per GPU).
 *   - t^comm(p_j, k) (§2 (2)): the perf model's all-reduce of the model's
 *     gradient buckets on k GPUs, all buckets summed (the paper benchmarks
 *     AllReduce alone and adds it, III-B3, so nothing overlaps the backward
 *     pass here, unlike the simulator's ground truth), on the canonical
 *     placement of k GPUs (fewest nodes of the empty cluster, largest nodes
 *     first, ties to the lower index), the slowest node's time; 0 for k = 1
 *     (no all-reduce runs).  The table is per model (its buckets) with one
 *     size, p_j itself, so no interpolation in the parameter count is needed.
 *   - b_min, b_max: the job's bounds on the cluster (job->min_gbs,
 *     job->max_gbs).  What a trace job requests is ignored: its batch
 *     (req_batch) is the IV-B baseline's fixed ("Random-BS") batch, which the
 *     elastic scaler does not use (§6 "Batch-size settings for baseline
 *     jobs": ES-DP picks the batch inside the user's range), and its GPU
 *     count (req_gpus) is what the scaler decides (III-A).
 *   - k_max: min(K, b_max / minB_L): the simulator's equal-local-batch layout
 *     needs at least minB_L samples per GPU, and the cluster has K GPUs.
 *   - Eq. 2's search set (§8.2 item 12 lists three readings): the totals
 *     the simulator can run, b = k·m with m a profiled per-GPU batch (a
 *     multiple of minB_L up to c_j) and b_min <= b <= b_max; the smallest b
 *     of the best rate.  The simulator's equal-local-batch layout then
 *     realises b_opt(k) exactly, so the DP scores what will run.  Every other
 *     integer b would put ceil(b/k) between profiled points, a batch the
 *     ground truth cannot run; a k with no such b is infeasible (-INFINITY).
 *     S(k) = T_j(b_opt(k), k) / T_j(c_j, 1) with T_j from hb_elastic_rate and
 *     Eq. 1's denominator from hb_elastic_jsa.
 *   - Not elastic (b_min == b_max, Category 4 of Table I, §6, §8.2 item 9):
 *     the job runs on a fixed GPU count the paper does not give; the note's
 *     guess is the fewest GPUs that hold the batch, ceil(b / c_j); here the
 *     fewest k that run b as k x a profiled per-GPU batch (the same count
 *     whenever ceil(b / c_j) divides b into a profiled batch).  With no such
 *     k <= k_max the job has no feasible count.
 *   - The IV-B baseline (elastic-fixed and its variants, agent_elastic_fixed.c):
 *     the job's total batch is fixed at b_fixed (hb_elastic_fixed_batch), so
 *     Eq. 2's search set is {b_fixed} and only the GPU count is elastic.  The
 *     paper's rate takes t_proc(ceil(b/k)) (§2 (3)): the k GPUs split b as
 *     evenly as they can.  Here the split is in units of minB_L (the perf
 *     model's per-GPU batches): u = b_fixed / minB_L units over k GPUs, the
 *     first u mod k GPUs one unit more, so the slowest GPU runs
 *     m = minB_L ceil(u / k), the paper's ceil(b/k) rounded up to a profiled
 *     batch (equal to it whenever minB_L divides ceil(b/k)).  The perf model
 *     knows only its profiled per-GPU batches (its grid thins out at large
 *     batches), so m is timed at the smallest profiled batch m' >= m: time
 *     grows with the batch, so this charges at most one grid step more and
 *     equals t_proc(m) wherever m is profiled (every multiple of minB_L up to
 *     c_j for the IBM models on P100).  A k is feasible when every GPU gets
 *     at least one unit (k <= u) and m' <= c_j exists; b_fixed must be a
 *     multiple of minB_L (else no k is feasible).  S(k) = b_fixed /
 *     (t_proc(m') + t_comm(k)) / T_j(c_j, 1), the same Eq. 1 as the elastic
 *     entries, so both policies' DPs weigh jobs alike.  k_max = min(K, u);
 *     Category 4 keeps its fixed count as above.
 */
#ifndef HB_ELASTIC_SHARE_H
#define HB_ELASTIC_SHARE_H

#include "elastic.h"
#include "sim.h"

/* One JSA answer: every job of the same model and batch range shares it. */
struct hb_elastic_entry {
	const struct hb_model *model;  /* key: borrowed from the catalog */
	long b_min, b_max;             /* key: total batch range searched by Eq. 2 */
	long b_fixed;                  /* key: > 0 the IV-B baseline's fixed total batch, 0 elastic */
	int k_only;                    /* > 0: fixed GPU count (not elastic; k_max + 1: none), 0: elastic */
	int min_lbs;                   /* minB_L of the perf model: per-GPU batches are its multiples */
	long per_gpu_max;              /* c_j: largest per-GPU batch every GPU type holds */
	int k_max;                     /* min(K, b_max / minB_L); fixed: min(K, b_fixed / minB_L) */
	int feasible;                  /* 1 if some k in 1..k_max has a finite S(k) */
	struct hb_elastic_scaling sc;  /* S(k), b_opt(k) (the batch the job runs on k GPUs), JSA
	                                * iteration time, k = 0..sc.k_max */
};

/* Build the entry of job on sim's cluster (the key from the job, the
 * profile from job->perf).  Fails with HB_EINPUT when the perf model has no
 * per-GPU batch that every GPU type holds, or the model has no parameters. */
int hb_elastic_entry_build(const struct hb_sim *sim, const struct hb_sim_job *job, struct hb_elastic_entry *e,
			   struct hb_error *err);
void hb_elastic_entry_free(struct hb_elastic_entry *e);
/* 1 when job would get entry e (same model, batch range and fixed batch). */
int hb_elastic_entry_matches(const struct hb_elastic_entry *e, const struct hb_sim *sim,
			     const struct hb_sim_job *job);

/* The elastic arbiter's entry for job, NULL when sim's arbiter is not the
 * elastic one or the job has not arrived yet. */
const struct hb_elastic_entry *hb_elastic_arbiter_entry(const struct hb_sim *sim, const struct hb_sim_job *job);

/* ---- the agents (agent_elastic.c, agent_elastic_fixed.c) -------------------- */

/* The IV-B baseline's fixed total batch of a job (agent_elastic_fixed.c): 0
 * under the elastic agent (the batch is the JSA's choice); otherwise the
 * batch its elastic-fixed variant sets, fixed for the job's whole life. */
long hb_elastic_fixed_batch(const struct hb_sim *sim, const struct hb_sim_job *job);

/* The u = b / unit units of total batch b on k GPUs, as evenly as they
 * split: lbs[i] = unit (u / k + (i < u mod k)), i = 0..k-1.  Returns the
 * largest local batch (the slowest GPU's, unit ceil(u / k)), or 0 when b is
 * not a multiple of unit or k > u (a GPU would get nothing). */
long hb_elastic_fixed_split(long b, int unit, int k, int *lbs);

/* The per-GPU batch that times a largest share m: the smallest of the
 * ascending profiled batches profiled[0..n-1] that is >= m; 0 if none. */
long hb_elastic_fixed_timing_batch(const int *profiled, int n, long m);

/* Configuration of a fixed-batch job on alloc (k GPUs): e->b_fixed split by
 * hb_elastic_fixed_split in cluster node order, the iteration time the
 * perf model gives the slowest GPU's share on alloc (hb_ddp_iter_time at
 * hb_elastic_fixed_timing_batch over alloc's profiled batches, no
 * accumulation), eff_factor the unequal-batch what-if factor.  cfg was
 * initialised with hb_job_config_init(cfg, perf->nnodes). */
int hb_elastic_fixed_config(const struct hb_sim_job *job, const struct hb_elastic_entry *e, const int *alloc,
			    struct hb_job_config *cfg, struct hb_error *err);

/* The elastic agent's callbacks, shared by the elastic-fixed variants: they
 * differ only in hb_elastic_fixed_batch, which the entries carry. */
int hb_elastic_agent_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
int hb_elastic_agent_on_grant(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
void hb_elastic_agent_free_job(void *state, struct hb_sim_job *job);

#endif
