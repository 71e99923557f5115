/*
 * es_artifact.h: EasyScale's plan database as its artifact's simulator
 * builds it (sUntvoOk/EasyScale_info_for_SC23, simulator/easy_policy.py,
 * class Intrajob), for `sim --fidelity easyscale`.  hetbatch's own EST
 * planner is est_plan.h; this one reproduces the artifact's enumeration,
 * its waste rule and its order, quirks included:
 *
 *  - Intrajob.get_perf_candidates: for every scale m = 1..maxP and GPU
 *    type t, ESTs per GPU floor(m perf_t) or ceil(m perf_t) (perf_t = the
 *    slowest type's step time over t's, so the slowest is 1); every
 *    product of those over the types, restricted to every subset of 2 or
 *    more types (a subset whose every count exceeds maxP is dropped), plus
 *    m ESTs on one type alone;
 *  - Intrajob.combinationSum: per candidate, every multiset of physical
 *    GPUs (at most the cluster's count per type) whose ESTs reach maxP,
 *    found by a depth-first search over the GPUs sorted by ESTs
 *    descending that records a multiset when the GPU just added reaches
 *    maxP; the multisets then sorted by size (stable);
 *  - Intrajob.waste: one type alone wastes 0, its ESTs per GPU
 *    ceil(maxP / n) (the artifact's "hack", even when n does not divide
 *    maxP); several types waste
 *        (sum over GPUs of (m perf_t - a_t / s) + (sum a - maxP) / s) / sum m perf_t,
 *    s = max over used types of a_t / (m perf_t), and keep the
 *    candidate's ESTs per GPU for every type, used or not;
 *  - Intrajob._convert_to_final_proposals: speedup = sum perf_t n_t (1 -
 *    waste); sorted by speedup descending, ties by the fastest type's GPU
 *    count descending, then waste ascending, then candidate order; one
 *    plan per GPU count vector, the first.
 *
 * One reading where the artifact's order is not defined: it passes the
 * candidates through a Python set, whose iteration order is CPython's hash
 * order, before a stable sort by the fastest type's ESTs.  hetbatch keeps
 * the construction order there.  It decides between plans of exactly
 * equal speedup and GPU counts only, which differ in the ESTs they give a
 * type with no GPU (a quirk that lengthens the simulated step, see
 * hb_esa_comp_s).
 *
 * Types are in the order the caller gives, fastest first as the
 * artifact's (V100, P100, T4); perf[ntypes - 1] is the normaliser.
 */
#ifndef HB_ES_ARTIFACT_H
#define HB_ES_ARTIFACT_H

#define HB_ESA_MAX_TYPES 4

/* One plan of the database (the artifact's proposal dict). */
struct hb_esa_plan {
	int n[HB_ESA_MAX_TYPES];       /* GPUs per type ('placement') */
	int threads[HB_ESA_MAX_TYPES]; /* ESTs per GPU of each type ('threads'), also for types with no GPU */
	double waste;                  /* fraction of the plan's capacity ('waste') */
	double speedup;                /* sum perf_t n_t (1 - waste) ('speedup') */
};

struct hb_esa_plans {
	struct hb_esa_plan *v;         /* in the artifact's order, owned */
	int n;
	int ntypes;
};

/* The database for maxP mp on a cluster of nums[t] GPUs of type t with
 * relative speeds perf[t] (> 0, the last 1): 0, or -1 on bad arguments or
 * out of memory (out is then empty). */
int hb_esa_plans_build(const double *perf, const int *nums, int ntypes, int mp, struct hb_esa_plans *out);
void hb_esa_plans_free(struct hb_esa_plans *p);

/* Job.get_placement_proposals' filters, in place, order kept: keep the
 * plans with GPUs of type `pref` only (a job without D2, or any job under
 * EasyScale_homo), or with exactly total GPUs of it (FifoPolicy's
 * force_non_elastic: total = maxP). total 0: any count. */
void hb_esa_plans_keep_type(struct hb_esa_plans *p, int pref, int total);

/* The artifact's step time of a plan (Application.get_comp_time):
 * max over types of gpu_s[t] x threads[t], over every type, so a type with
 * no GPU but ESTs in threads counts. */
double hb_esa_comp_s(const struct hb_esa_plan *p, const double *gpu_s, int ntypes);

/* The artifact's waste (Intrajob.waste) of one multiset: n[t] GPUs of
 * type t, a[t] ESTs each, theory[t] = m perf_t; *threads gets the ESTs per
 * GPU it reports.  Exposed for tests. */
double hb_esa_waste(const double *theory, const int *a, const int *n, int ntypes, int mp, int *threads);

#endif
