/*
 * optperf.h: Cannikin's OptPerf, the fastest iteration of one synchronous
 * data-parallel step on heterogeneous GPUs, and the goodput-optimal total batch.
 *
 * Model (Cannikin §3.2-3.3, Eq. 3-7).  Node i with local batch b runs
 *   a_i(b) = q_i·b + s_i   (data loading + forward + parameter update)
 *   P_i(b) = k_i·b + m_i   (backpropagation)
 * and its first gradient bucket is ready at syncStart_i = a_i + γ·P_i.  With
 * T_o the all-reduce time of all but the last bucket and T_u that of the last
 * bucket, the node finishes the iteration at
 *   T_i(b) = a_i + γ·P_i + max((1-γ)·P_i, T_o) + T_u
 *          = max(α_i·b + β_i, δ_i·b + ε_i + T_o) + T_u,
 *   α_i = q_i + k_i, β_i = s_i + m_i, δ_i = q_i + γ·k_i, ε_i = s_i + γ·m_i,
 * and the iteration takes T = max_i T_i(b_i) (Eq. 7).  In the brief's words the
 * compute model is a_i·b + c_i with a_i = α_i, c_i = β_i.  Node i is
 * compute-bottleneck at b when (1-γ)·P_i(b) >= T_o, communication-bottleneck
 * otherwise (§3.2.3, Eq. 4-6).  The paper's Appendix A takes a_i as a
 * constant; Eq. 3 makes it linear in b, which changes only the slopes.
 *
 * OptPerf(B) = min over splits Σ b_i = B, min_batch_i <= b_i <= max_batch_i of
 * max_i T_i(b_i).  This is a linear programme (§3.3 calls it a mixed
 * integer one, the integer being each node's branch; writing T_i as the max
 * of both branches, as above, removes that choice), solved exactly: each T_i
 * is convex, piecewise linear and increasing, so the optimum is the smallest T
 * with Σ_i b_i(T) >= B where b_i(T) is the largest batch node i finishes by T.
 * That sum is piecewise linear in T with at most 2n breakpoints (each node's
 * switch from communication- to compute-bottleneck, τ_i, and the time its
 * cap binds); the solver sorts them and binary-searches the segment holding
 * B, then solves that segment in closed form (Appendix A.3's equal-time
 * condition, T_comb, over the uncapped nodes).  O(n log n) per solve.  The
 * paper's Algorithm 1 (§4.2) is not used: as printed its loop never narrows
 * its bounds, and pre-classifying a node that is communication-bound in both
 * of its checks as communication-bound is unsound (random instances find
 * such nodes compute-bound at the optimum).
 *
 * Nodes with b_i = 0 still join the all-reduce (the paper does not say what
 * happens to a node too slow to get a sample), so T >= max_i T_i(min_batch_i)
 * always.  When that bound is what sets OptPerf (a node's fixed costs
 * dominate), many splits are optimal; the solver then reports one in which
 * every node has the same fraction of its slack (see floor_bound).
 *
 * Integer batches (the paper's split is real): hb_optperf_round floors the
 * real split and hands out the remaining samples one at a time to the node
 * whose time after taking one more sample is smallest.  Started from the
 * real optimum this greedy is the exact integer min-max optimum, and its
 * iteration time is at most one sample's time (max_i α_i) above OptPerf(B).
 *
 * All functions are re-entrant; they allocate O(n) scratch memory per call.
 */
#ifndef HB_OPTPERF_H
#define HB_OPTPERF_H

#include <stddef.h>

#include "error.h"

/* Limits checked by hb_optperf_validate.  Batches stay exactly representable
 * as doubles even when summed over the largest cluster. */
#define HB_OPTPERF_MAX_NODES ((size_t)1 << 20)
#define HB_OPTPERF_MAX_BATCH 2147483647L /* per node; pass it for "no memory cap" */

/* Default number of total-batch candidates (AdaptDL's np.geomspace in
 * adaptdl/goodput.py GoodputFunction.optimize, which Cannikin §4.1 uses). */
#define HB_OPTPERF_DEFAULT_CANDIDATES 50

/* One GPU (data-parallel worker).  Times in seconds, batches in samples. */
struct hb_optperf_node {
	double fwd_per_sample_s; /* q_i: data loading + forward time per sample, >= 0 */
	double fwd_fixed_s;      /* s_i: batch-independent part of a_i (parameter update, ...), >= 0 */
	double bwd_per_sample_s; /* k_i: backpropagation time per sample, >= 0; q_i + k_i > 0 */
	double bwd_fixed_s;      /* m_i: batch-independent part of backpropagation, >= 0 */
	long min_batch;          /* smallest local batch allowed, >= 0 (0: node may get no samples) */
	long max_batch;          /* memory cap b_i^max, min_batch <= max_batch <= HB_OPTPERF_MAX_BATCH */
};

/* A job on an allocation: its nodes and the cluster-wide communication model
 * (T_comm = T_o + T_u is one learned constant per allocation, Cannikin
 * §3.2.2). */
struct hb_optperf_cluster {
	size_t n;                            /* number of nodes, 1..HB_OPTPERF_MAX_NODES */
	const struct hb_optperf_node *node;  /* n nodes */
	double gamma;                        /* γ in [0, 1]: share of backprop before the first bucket is ready */
	double overlap_comm_s;               /* T_o >= 0: all-reduce time of all buckets but the last */
	double last_comm_s;                  /* T_u >= 0: all-reduce time of the last bucket (never overlapped) */
};

/* The three cases of Cannikin §3.3 and Appendix A.1-A.3, judged at the
 * optimum split over all nodes. */
enum hb_optperf_regime {
	HB_OPTPERF_COMPUTE_BOUND = 0, /* every node has (1-γ)P_i(b_i) >= T_o: equal t_compute */
	HB_OPTPERF_COMM_BOUND = 1,    /* every node has (1-γ)P_i(b_i) < T_o: equal syncStart */
	HB_OPTPERF_MIXED = 2,         /* some of each: both groups reach the last bucket together */
};

struct hb_optperf_solution {
	double iter_s;                 /* OptPerf(B): predicted iteration time, T_comb + T_u */
	enum hb_optperf_regime regime; /* which Appendix A case the optimum is in */
	size_t n_compute;              /* nodes compute-bottleneck at their b_i */
	size_t n_comm;                 /* nodes communication-bottleneck at their b_i */
	size_t n_at_cap;               /* nodes held at max_batch (they may finish early) */
	int floor_bound;               /* 1 when OptPerf = max_i T_i(min_batch_i): a node's fixed
	                                * costs set the time and the split is not unique */
};

/* Goodput inputs (Cannikin §4.1: AdaptDL's goodput; Pollux Eq. 6). */
struct hb_optperf_goodput {
	double phi;          /* gradient noise scale φ >= 0, in samples */
	double m0;           /* B₀ (Pollux M0) > 0: batch at which efficiency is 1 */
	long b_min, b_max;   /* candidate range of the total batch, 1 <= b_min <= b_max */
	size_t n_candidates; /* geometric grid size; 0 means HB_OPTPERF_DEFAULT_CANDIDATES */
};

struct hb_optperf_choice {
	long batch;                    /* B*: the candidate with the largest goodput */
	double iter_s;                 /* OptPerf(B*) */
	double int_iter_s;             /* iteration time of the integer split returned */
	double efficiency;             /* E(B*) = (φ + B₀)/(φ + B*) */
	double goodput;                /* B*·E(B*)/OptPerf(B*), B₀-equivalent samples per second */
	enum hb_optperf_regime regime; /* regime of the optimum at B* */
	size_t n_candidates;           /* distinct integer grid points */
	size_t n_feasible;             /* of those, within [Σ min_batch, Σ max_batch] */
};

/* Check every parameter; the message names the node and the field. */
int hb_optperf_validate(const struct hb_optperf_cluster *cl, struct hb_error *err);

/* T_i(b) of node i (Eq. 7 for one node); *compute_bound (may be NULL) is set
 * to 1 when the node is compute-bottleneck at b.  No validation. */
double hb_optperf_node_time(const struct hb_optperf_cluster *cl, size_t i, double b,
			    int *compute_bound);

/* Eq. 7: max_i T_i(batch[i]) for any split, e.g. an even DDP split. */
double hb_optperf_iter_time(const struct hb_optperf_cluster *cl, const double *batch);

/* OptPerf(total_batch).  batch (n entries, caller-owned) receives the real
 * optimum split; it sums to total_batch up to rounding.  Fails with HB_EINPUT
 * for bad parameters, total_batch <= 0, total_batch > Σ max_batch or
 * total_batch < Σ min_batch. */
int hb_optperf_solve(const struct hb_optperf_cluster *cl, long total_batch, double *batch,
		     struct hb_optperf_solution *sol, struct hb_error *err);

/* Round a real split (normally hb_optperf_solve's) to integers local[] that sum
 * exactly to total_batch and respect min_batch/max_batch; *iter_s (may be
 * NULL) receives their Eq. 7 time.  batch must lie within the bounds and sum
 * to total_batch to within 1e-6 relative. */
int hb_optperf_round(const struct hb_optperf_cluster *cl, long total_batch, const double *batch,
		     long *local, double *iter_s, struct hb_error *err);

/* E(B) = (φ + B₀)/(φ + B). */
double hb_optperf_efficiency(double phi, double m0, double batch);

/* The geometric grid of total batches: count points from b_min to b_max with
 * constant ratio, each rounded to the nearest integer, duplicates dropped.
 * out holds count entries; *n_out receives how many were written. */
int hb_optperf_candidates(long b_min, long b_max, size_t count, long *out, size_t *n_out,
			  struct hb_error *err);

/* Goodput-optimal total batch over the candidate grid (Cannikin §4.1): maximise
 * B·E(B)/OptPerf(B); ties go to the smaller B.  Candidates the cluster cannot
 * hold (outside [Σ min_batch, Σ max_batch]) are skipped, as AdaptDL gives them
 * goodput 0; it is an error when none is left.  batch (real) and local
 * (integer, hb_optperf_round) receive the split at B*; either may be NULL. */
int hb_optperf_choose_batch(const struct hb_optperf_cluster *cl,
			    const struct hb_optperf_goodput *gp, double *batch, long *local,
			    struct hb_optperf_choice *out, struct hb_error *err);

const char *hb_optperf_regime_name(enum hb_optperf_regime r);

#endif
