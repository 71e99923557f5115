/*
 * elastic.h: the IBM elastic-scaling policy (Saxena et al., MASCOTS 2020),
 * specified by notes/elastic.md.
 *
 * Three parts, in the order data flows through them:
 *
 *   1. Job Scalability Analyser (JSA, notes §2): from a job's single-GPU
 *      processing profile and the cluster's AllReduce profile, the processing
 *      rate T_j(b, k) of every <total batch b, GPUs k>, the throughput scaling
 *      factor 𝒯_j (Eq. 1), the best batch per GPU count (Eq. 2), and so the
 *      table S_j(k) = 𝒯_j(b_j^opt(k), k) the optimizer consumes.
 *   2. Optimizer (notes §3): the corrected Algorithm 1 dynamic programme
 *      P(j, c) = max_{1<=g<=k_max_j} P(j-1, c-g) + S_j(g)   (Eq. 4, 5)
 *      maximising Σ_j S_j(k_j) subject to k_j >= 1 and Σ_j k_j <= K.
 *   3. Autoscaler admission step (notes §4, corrected Fig. 4): FIFO trial
 *      admission of queued jobs one at a time until the DP says infeasible.
 *
 * The cluster is K interchangeable GPUs (notes §1: no topology in the paper);
 * placement is left to the caller.
 *
 * Semantics fixed here, each from the note:
 *   - Every job in the optimizer's list gets at least 1 GPU; a list whose jobs
 *     cannot all get a feasible k is infeasible (notes §3 "Objective").  There
 *     is no k = 0 inside the DP: a job that does not fit stays queued (queue
 *     mode) or is rejected (drop mode) by the autoscaler, never by the DP.
 *   - Σ k_j <= K, not = K: P(0, ·) = 0 makes P(j, c) "at most c GPUs", so the
 *     DP leaves GPUs idle when more GPUs would lower 𝒯 (notes §3 "Properties").
 *   - Ties: the DP tries g = 1, 2, ... and keeps a candidate only when it is
 *     strictly better, and the backtrack starts at the last job.  The result
 *     is, among all optimal allocations, the one with the lexicographically
 *     smallest (k_J, k_{J-1}, ..., k_1): later jobs in the list get the fewest
 *     GPUs, so the extra GPUs of a tie go to the earliest (longest-running)
 *     jobs.  Exact only when the sums are exact (e.g. integer-valued S); with
 *     general doubles, "tie" means bit-equal sums in the DP's order.
 */
#ifndef HB_ELASTIC_H
#define HB_ELASTIC_H

#include <stddef.h>

#include "error.h"

/* ------------------------------------------------------------------------ */
/* 1. Job Scalability Analyser (notes §2, §3 Eqs. 1-2)                      */
/* ------------------------------------------------------------------------ */

/* Job-specific profile (III-B1): one-GPU iteration time at several per-GPU
 * batch sizes.  Between points it is interpolated linearly (GSL, the note's
 * "natural reading", §2).  Below the first point it is extended along the
 * first segment, but never below the first point's per-sample time times b
 * (so it stays positive even when the segment's intercept is negative).  It is
 * not extended above the last point: the per-GPU limit must be profiled. */
struct hb_elastic_proc {
	const double *bs;      /* per-GPU batch sizes, strictly increasing, >= 1 */
	const double *iter_s;  /* one-GPU iteration time at bs[i], s, > 0 */
	int n;                 /* points, >= 1; one point means time ∝ batch */
};

/* Cluster-generic profile (III-B2): AllReduce time for model sizes params[i]
 * (the paper uses 10M, 20M, ..., 100M weights) on k = 1..kmax GPUs.  Linear
 * in the parameter count between sizes and extended along the end segments
 * outside them (AllReduce time is affine in bytes), clamped at 0. */
struct hb_elastic_comm {
	const double *params;  /* model sizes in weights, strictly increasing, > 0 */
	int nparams;           /* sizes, >= 1; one size means time ∝ params */
	const double *time_s;  /* [(k-1) * nparams + i]: AllReduce of params[i] on k GPUs, s, >= 0 */
	int kmax;              /* GPU counts profiled: k = 1..kmax */
};

/* One job as the JSA sees it (notes §8.1 item 1). */
struct hb_elastic_job {
	struct hb_elastic_proc proc; /* single-GPU profile of this job */
	double params;         /* p_j: model weights, > 0 */
	long per_gpu_max;      /* c_j: largest per-GPU batch that fits in memory (the
	                        * III-B meaning of "b_max"); <= 0 means proc.bs[n-1] */
	long b_min, b_max;     /* user's total batch range (III-A), 1 <= b_min <= b_max */
	long b_fixed;          /* > 0: IV-B baseline, total batch fixed at this value
	                        * (elastic in GPUs only); 0: elastic batch, Eq. 2 */
	int k_max;             /* most GPUs the job may hold, 1 <= k_max <= comm->kmax */
	int k_only;            /* > 0: not elastic (Category 4): only k = k_only is
	                        * feasible; 0: any k in 1..k_max */
};

/* Single-GPU processing time t_j^proc(b_gpu) of the profile (III-B1), s. */
int hb_elastic_proc_time(const struct hb_elastic_proc *proc, double b_gpu, double *iter_s,
			 struct hb_error *err);

/* AllReduce time t^comm(p, k) of the generic profile (III-B2), s. */
int hb_elastic_comm_time(const struct hb_elastic_comm *comm, double params, int k, double *time_s,
			 struct hb_error *err);

/* Processing rate (III-B3), samples/s:
 *   t_j^iter(b, k) = t_j^proc(ceil(b/k)) + t^comm(p_j, k)
 *   T_j(b, k)      = b / t_j^iter(b, k)            (numerator b, not k·ceil(b/k))
 * *rate is -INFINITY when the configuration is infeasible: ceil(b/k) > c_j
 * (does not fit in memory, the paper's "large negative number"), or b < k (a
 * GPU would get no sample; my rule, the paper never considers it).  The batch
 * range and k_max are not checked here; hb_elastic_jsa applies them.
 * iter_s (may be NULL) receives t_j^iter, or INFINITY when infeasible. */
int hb_elastic_rate(const struct hb_elastic_job *job, const struct hb_elastic_comm *comm, long b,
		    int k, double *rate, double *iter_s, struct hb_error *err);

/* The JSA's answer for one job, k = 0..k_max (index 0 is never feasible). */
struct hb_elastic_scaling {
	int k_max;             /* entries 0..k_max below */
	double *speedup;       /* S_j(k) = 𝒯_j(b_j^opt(k), k) (Eq. 1-2), -INFINITY if infeasible */
	long *batch;           /* b_j^opt(k), total batch; 0 if infeasible */
	double *iter_s;        /* t_j^iter(b_j^opt(k), k), s; INFINITY if infeasible */
	double base_rate;      /* T_j(c_j, 1): Eq. 1 denominator, samples/s */
};

/* Run the JSA (notes §3 Eqs. 1-2) for job:
 *   𝒯_j(b, k)    = T_j(b, k) / T_j(c_j, 1)                        (Eq. 1)
 *   b_j^opt(k)   = argmax_{b in [b_min, b_max], ceil(b/k) <= c_j} 𝒯_j(b, k) (Eq. 2)
 * Eq. 2 is read as a search over every integer total batch in the range (the
 * note's recommended reading, §3 and §8.2 item 12); ties go to the smallest b.
 * With b_fixed > 0 the search set is {b_fixed} (IV-B baseline).  With k_only
 * every k but k_only is infeasible (§8.2 item 9).  out is allocated here; free
 * it with hb_elastic_scaling_free. */
int hb_elastic_jsa(const struct hb_elastic_job *job, const struct hb_elastic_comm *comm,
		   struct hb_elastic_scaling *out, struct hb_error *err);
void hb_elastic_scaling_free(struct hb_elastic_scaling *s);

/* ------------------------------------------------------------------------ */
/* 2. Optimizer: corrected Algorithm 1 (notes §3, Eqs. 3-5)                 */
/* ------------------------------------------------------------------------ */

/* A job's speedup table as the DP reads it: S(k) for k = 0..k_max.  S(0) is
 * ignored; an infeasible k is -INFINITY; a feasible one is finite and > 0 (a
 * throughput scaling factor), so "P(J, K) > 0" and "finite" agree (§3). */
struct hb_elastic_table {
	const double *speedup; /* [k_max + 1] */
	int k_max;             /* >= 0; GPUs beyond k_max are never given */
};

/* The DP table, kept between calls so the autoscaler's trial admission can
 * append one job and drop it again in O(K · k_max) (notes §3 implementation
 * note).  Rows j = 0..njobs of P, each K + 1 wide.  Eq. 5's SOL(j, c) is
 * not stored: the backtrack needs it at one c per row, and finds it again
 * from P and the row's copy of its job's table (elastic.c). */
struct hb_elastic_dp {
	int K;                 /* GPUs in the cluster, >= 0 */
	int njobs;             /* rows filled after row 0 */
	int cap;               /* rows allocated after row 0 */
	double *P;             /* [(cap + 1) * (K + 1)]: P(j, c), -INFINITY = infeasible */
	double *S;             /* [scap]: row j's speedup table is S[soff[j] .. soff[j] + kmax[j]] */
	size_t *soff;          /* [cap + 2]: soff[j + 1] = soff[j] + kmax[j] + 1 */
	int *kmax;             /* [cap + 1] */
	size_t scap;
};

int hb_elastic_dp_init(struct hb_elastic_dp *dp, int K, struct hb_error *err);
void hb_elastic_dp_free(struct hb_elastic_dp *dp);
/* Append job j = njobs + 1 and fill its row (Eq. 4-5). */
int hb_elastic_dp_push(struct hb_elastic_dp *dp, const struct hb_elastic_table *job,
		       struct hb_error *err);
/* Remove the last job (its row is simply forgotten). */
void hb_elastic_dp_pop(struct hb_elastic_dp *dp);
/* 1 if every job so far can get a feasible k within K GPUs: P(njobs, K) > 0
 * for njobs >= 1; an empty list is feasible (value 0, all GPUs idle). */
int hb_elastic_dp_feasible(const struct hb_elastic_dp *dp);
/* P(njobs, K): the optimal Σ S_j(k_j), -INFINITY if infeasible. */
double hb_elastic_dp_value(const struct hb_elastic_dp *dp);
/* Backtrack (corrected: c -= SOL(j, c) before j -= 1) into alloc[0..njobs-1];
 * returns the number of idle GPUs, or -1 (err filled) if infeasible. */
int hb_elastic_dp_solution(const struct hb_elastic_dp *dp, int *alloc, struct hb_error *err);

/* One-shot optimizer: allocation for all jobs on K GPUs.  Returns 0 and fills
 * alloc[0..njobs-1], *value (optional) and *idle (optional) when feasible;
 * returns -1 with err->code HB_ERUNTIME and a message naming why when the
 * list is infeasible (more jobs than GPUs, or a job with no feasible k within
 * K), and HB_EINPUT for a malformed table. */
int hb_elastic_optimize(const struct hb_elastic_table *jobs, int njobs, int K, int *alloc,
			double *value, int *idle, struct hb_error *err);

/* ------------------------------------------------------------------------ */
/* 3. Autoscaler admission (notes §4, corrected Fig. 4)                      */
/* ------------------------------------------------------------------------ */

/* One MAKESCALINGDECISIONS step after finished jobs were removed:
 *   admitted = 0
 *   while admitted < narrived:
 *       if OPTIMIZE(running ∪ arrived[0..admitted]) infeasible: break
 *       admitted += 1
 *   alloc = OPTIMIZE(running ∪ arrived[0..admitted-1])
 * FIFO with head-of-line stop (no backfilling past the first job that does
 * not fit, §4 "Queueing policy").  On return *admitted is the number of
 * arrived jobs taken (a prefix of arrived), alloc[0..nrunning-1] the running
 * jobs' GPUs and alloc[nrunning..nrunning+*admitted-1] the admitted ones'
 * (alloc must hold nrunning + narrived ints); *idle the GPUs left free.  What
 * happens to arrived[*admitted..] (wait: queue mode; reject: drop mode) is the
 * caller's policy.  Fails (HB_ERUNTIME) if the running jobs alone no longer
 * fit, e.g. after K shrank. */
int hb_elastic_admit(const struct hb_elastic_table *running, int nrunning,
		     const struct hb_elastic_table *arrived, int narrived, int K, int *alloc,
		     int *admitted, int *idle, struct hb_error *err);

#endif
