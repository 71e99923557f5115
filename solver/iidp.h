/*
 * iidp.h: the JABAS configuration solver (notes/jabas.md §3) as an exact,
 * fast min-max search, plus the run-time worker-count rule of §4.1.
 *
 * Problem, for one allocation and one local batch B_L: the allocation is cut
 * into N_H identical GPU pairs (two GPUs of one node; group H takes one GPU
 * of each pair, the other group mirrors it).  Pair k gets w_k >= 1 decoupled
 * workers as n_vsw (n_GA + 1) with 1 <= n_vsw <= n_max(g_k, B_L); the w_k sum
 * to M per group, and the iteration time is max_k t_k(n_vsw, n_GA).  Minimise
 * it.  Two pairs in one node may get different (n_vsw, n_GA) (the code
 * allows it, notes §3).  Then, over candidate B_L, maximise the throughput
 * F = 2 M B_L / t.
 *
 * Exactness.  With best_t_k(w) = min over n | w, n <= cap of t_k(n, w/n - 1),
 * the optimum is D[N_H][M] of D[k][m] = min_w max(D[k-1][m-w], best_t_k(w))
 * (notes §3 [D]); hb_iidp_minmax_dp() computes exactly that in O(N_H M^2).
 * The fast path (hb_iidp_minmax_fast) is a parametric search on the answer.
 * "Is there an assignment with every t_k <= T?" is monotone in T, and the
 * optimum is one of the finite set of values t_k(n, n_GA), so the least
 * feasible value among them is exactly D[N_H][M].  best_t_k is not monotone
 * in w (a prime w can only be served by one VSW and many GA steps), so the
 * test is not a greedy "each pair takes the most workers it can within T"
 * but an exact reachability: for a fixed n the n_GA with t <= T form a
 * prefix (t is non-decreasing in n_GA), so pair k's admissible worker counts
 * are a union of <= cap arithmetic progressions {n, 2n, ..., g_n(T) n}, and
 * the reachable sums are propagated pair by pair with one sliding-window
 * pass per progression and residue: O(N_H cap M) per test.  The values are
 * searched without sorting (quickselect): first for the least one passing a
 * necessary O(N_H cap) condition (sum of the pairs' smallest admissible
 * counts <= M <= sum of their largest), then galloping upwards from it and
 * halving; in practice 1-3 exact tests, at most O(log(N_H cap M)).
 * Identical pairs (same coefficients) contribute their values once.
 *
 * Tie-breaking (both paths give the same configuration, tests check it):
 *  - within a B_L, among assignments reaching the optimal time T*: pairs are
 *    visited from the last to the first (allocation order: node index, then
 *    pair within the node) and each takes the LARGEST worker count that still
 *    lets the earlier pairs complete M within T*;
 *  - a worker count w is served by the (n_vsw, n_GA) of least predicted time,
 *    ties to the larger n_vsw (fewer GA steps);
 *  - across B_L, the highest throughput wins and an exact tie keeps the
 *    smaller B_L (the artifact's `>` over ascending B_L).
 * Across B_L the fast path first bounds each B_L's throughput from above
 * (2 M B_L over a lower bound on its time, from the same necessary
 * condition) and solves them by decreasing bound, skipping every B_L whose
 * bound cannot beat the best found: exact, and usually one or two exact
 * solves per request.
 * n_GA is bounded only as Algorithm 1 bounds it (n_vsw (n_GA+1) <= M); the
 * code's extra cap of 1000 GA steps per table row (notes §3, "Table
 * construction") is not applied: it only removes options at very large M.
 *
 * Caching: a solver object owns its caches (per (allocation, B_L) tables of
 * per-node coefficients, and per M the solved assignment; per (allocation
 * shape, request) the summary the auto-scaler reads), so the auto-scaler
 * may call it for thousands of candidates x trajectory points.  Keys name
 * the used nodes only, so their cost follows the job, not the cluster.
 * Every cache holds exact answers: a hit, a miss, an eviction and a flush give the same
 * result.  No globals:
 * distinct solver objects may be used from distinct threads; one object is
 * not to be shared between threads without a lock.
 */
#ifndef HB_IIDP_H
#define HB_IIDP_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "perfmodel.h"

/* ---- the min-max core (exposed for tests and scripts/bench) ------------ */

/* One pair's options: n_vsw in 1..cap, t(n, n_GA) = hb_perf_iter_s(&coef[n-1], n_GA). */
struct hb_iidp_pair {
	int cap;                           /* largest n_vsw allowed (>= 1) */
	const struct hb_perf_coef *coef;   /* cap entries, coef[n-1] for n VSWs */
};

/* Scratch memory, grown on demand; zero-initialise, free with hb_iidp_scratch_free. */
struct hb_iidp_scratch {
	unsigned char *reach;  /* (N_H) x (M+1) reachability layers */
	size_t reach_cap;
	double *cand;          /* candidate times */
	size_t cand_cap;
	double *dp;            /* DP layers (reference path) */
	size_t dp_cap;
	double *best;          /* best_t per pair (reference path) */
	size_t best_cap;
};
void hb_iidp_scratch_free(struct hb_iidp_scratch *s);

/* Minimise max_k t_k over assignments of M workers to npairs pairs.  On
 * success *t_out = optimal time and w_out[k] = workers of pair k.  M < npairs
 * is an input error.  scratch may be NULL (allocated and freed per call). */
int hb_iidp_minmax_fast(const struct hb_iidp_pair *pairs, int npairs, int M, struct hb_iidp_scratch *scratch,
			double *t_out, int *w_out, struct hb_error *err);
/* The O(N_H M^2) reference DP of notes §3 (same tie-breaking). */
int hb_iidp_minmax_dp(const struct hb_iidp_pair *pairs, int npairs, int M, struct hb_iidp_scratch *scratch,
		      double *t_out, int *w_out, struct hb_error *err);
/* The (n_vsw, n_GA) serving w workers on a pair with the least time (ties to
 * larger n_vsw); n_vsw <= maxn as well as <= cap.  0 if none. */
int hb_iidp_pair_best(const struct hb_iidp_pair *pair, int w, int maxn, int *n_vsw, int *n_ga, double *t);

/* ---- worker counts ----------------------------------------------------- */

/* Algorithm 1: M = round(B_G / B_L / 2), ties to even as Python's round(). */
long hb_iidp_round_m(long global_bs, int local_bs);
/* §4.1 run-time rule [C solve_placement]: n_w = round(B_G'/B_L); if B_G' >
 * B_G (increase) n_w += n_w mod 2 and B_L n_w must exceed B_G, else n_w -=
 * n_w mod 2 and B_L n_w must be below B_G; n_w >= n_gpus.  Returns n_w (even,
 * M = n_w / 2), or 0 when this B_L is skipped. */
long hb_iidp_runtime_workers(long cur_global_bs, long target_global_bs, int local_bs, int n_gpus);

/* ---- the solver -------------------------------------------------------- */

enum hb_iidp_m_rule {
	HB_IIDP_M_ROUND = 0,    /* Algorithm 1: M = round(B_G/B_L/2); stop at the first B_L with M < N_H */
	HB_IIDP_M_RUNTIME = 1,  /* §4.1: parity rule relative to the current B_G; skip B_L that fail it */
	HB_IIDP_M_EXACT = 2,    /* initial phase: B_G itself, only B_L with B_G = 2 M B_L, M >= N_H (below) */
};
/* HB_IIDP_M_EXACT is how the artifact's configuration solver picks the
 * initial configuration (unist-ssl/JABAS jabas/config/api/
 * configuration_solver.py, main): for each B_L, n_w = int(B_G / B_L)
 * workers, and a B_L with B_L n_w != B_G is skipped ("GBS != LBS * M ==>
 * skip"), as is one whose DP answer has another worker count (an odd n_w:
 * IIDP's DP solves n_w // 2 per group, iidp/config/configurator.py,
 * DynamicProgrammingSolver.solve).  So every configuration it compares
 * runs B_G itself, never a rounded one, and the candidates differ in time
 * only.  M = B_G / (2 B_L) then equals Algorithm 1's round(B_G / B_L / 2):
 * an exact request's candidates are a subset of the Algorithm 1 request's
 * (every bound on those holds for it). */

enum hb_iidp_method {
	HB_IIDP_FAST = 0,       /* parametric search (default) */
	HB_IIDP_DP = 1,         /* O(N_H M^2) reference DP, never memoised */
};

struct hb_iidp_request {
	const int *alloc;       /* GPUs per perf node (perf->nnodes entries; even; 0 = unused) */
	long global_bs;         /* target B_G (B_G' under the run-time rule) */
	int m_rule;             /* enum hb_iidp_m_rule */
	long cur_global_bs;     /* current B_G, HB_IIDP_M_RUNTIME only */
	int local_bs;           /* 0: search every candidate B_L; > 0: only this one */
	int method;             /* enum hb_iidp_method */
};

struct hb_iidp_pair_cfg {
	int node;               /* perf node index */
	int n_vsw;              /* VSWs on each GPU of the pair */
	int n_ga;               /* extra GA steps of each VSW */
	int workers;            /* n_vsw (n_ga + 1), per GPU (per group on a one-GPU pair) */
	int gpus;               /* 2; 1: one GPU hosts both groups, 2 n_vsw VSWs (hb_iidp_solve_one_gpu) */
	double iter_s;          /* predicted iteration time of the pair's GPUs */
};

struct hb_iidp_result {
	int found;              /* 0: no feasible configuration; why says which constraint */
	char why[256];          /* reason when !found */
	long global_bs;         /* B_G* = 2 M B_L (rounded from the request) */
	int local_bs;           /* B_L* */
	int m;                  /* decoupled workers per group */
	int n_gpus;             /* GPUs of the allocation (= 2 npairs) */
	double iter_s;          /* C.t: the slowest pair's time */
	double throughput;      /* F = B_G* / C.t, samples/s */
	int sync;               /* HB_SYNC_OWS or HB_SYNC_SWS */
	struct hb_iidp_pair_cfg *pairs; /* npairs entries, owned: hb_iidp_result_free */
	int npairs;
};
void hb_iidp_result_free(struct hb_iidp_result *r);

struct hb_iidp_stats {
	long solves;            /* (allocation, B_L, M) problems solved or looked up */
	long table_hits;        /* (allocation, B_L) coefficient tables found in the cache */
	long table_misses;
	long memo_hits;         /* (allocation, B_L, M) answers found in the cache */
	long memo_misses;
	long pruned;            /* (B_L, M) problems skipped: their throughput bound could not win */
	long flushes;           /* times the cache was emptied whole (entries evicted and still over the limit) */
	long evictions;         /* entries (summaries, or tables with their memos) evicted one by one */
	long shape_hits;        /* summaries found in the (shape, request) cache */
	long shape_misses;
	size_t cache_bytes;     /* memory held by the caches now */
};

struct hb_iidp_solver; /* opaque: the perf model (borrowed), caches, scratch */

/* perf must be prepared and outlive the solver. */
int hb_iidp_solver_new(const struct hb_perf *perf, struct hb_iidp_solver **out, struct hb_error *err);
void hb_iidp_solver_free(struct hb_iidp_solver *s);
void hb_iidp_solver_clear_cache(struct hb_iidp_solver *s);
/* Cache limit in bytes (default 64 MiB; 0 disables caching entirely).  Over
 * it, entries are evicted one at a time, least recently hit first (CLOCK),
 * before each request; lowering the limit below what is held empties the
 * cache at once. */
void hb_iidp_solver_set_cache_limit(struct hb_iidp_solver *s, size_t bytes);
/* A cache budget several solvers share (a run's models, one solver each):
 * the models a trace uses do not use their caches alike (on the whole
 * philly.csv under JABAS two of six did most of the evicting), so a limit
 * per solver leaves some short while others hold room they never fill.
 * A solver under a budget takes, before each request, what the others do
 * not hold (as they last reported it, which they do before each of their
 * requests), and never less than floor; over that it evicts its own
 * entries as under a limit of its own.  Its holdings are thus bounded by
 * max(floor, limit - what the others hold), and all of them together by
 * about limit as long as floor times the solvers is at most limit.
 * Solvers sharing a budget must not run requests at the same time (one
 * run's are called from one thread at a time), and the budget must
 * outlive them.  Answers are exact whatever each one holds. */
struct hb_iidp_budget {
	size_t limit;           /* bytes the solvers' caches may hold together */
	size_t floor;           /* bytes each one may hold whatever the others do */
	size_t used;            /* what they hold, as each last reported it */
};
/* Put s under b (NULL: back to its own limit, hb_iidp_solver_set_cache_limit);
 * s's cache is emptied first, so that b's count starts from what s holds. */
void hb_iidp_solver_set_budget(struct hb_iidp_solver *s, struct hb_iidp_budget *b);
void hb_iidp_solver_stats(const struct hb_iidp_solver *s, struct hb_iidp_stats *out);

/* IIDP on a single GPU (a machine or request with one GPU, where JABAS's
 * pairs do not exist): the GPU hosts both groups, n_vsw VSWs each, so it
 * runs 2 n_vsw VSWs of n_ga + 1 micro-steps; M = n_vsw (n_ga + 1) workers
 * per group and B_G = 2 M B_L as in a pair, the all-reduce over one GPU.
 * The search is the pair problem with one pair whose n-th option is the
 * GPU's time with 2n VSWs: for each candidate B_L (ascending; local_bs > 0
 * takes that one only) M = hb_iidp_round_m(global_bs, B_L), stopping at
 * the first M < 1, and the (n_vsw, n_ga) of least time serving M
 * (hb_iidp_pair_best); the highest throughput wins, ties keep the smaller
 * B_L (hb_iidp_solve's rules).  The result has one pair with gpus = 1 and
 * n_gpus = 1.  Not cached: a plan asks once. */
int hb_iidp_solve_one_gpu(const struct hb_perf *perf, int node, long global_bs, int local_bs,
			  struct hb_iidp_result *out, struct hb_error *err);

/* Solve a request.  Returns -1 only for invalid input (odd GPU counts, bad
 * indices, B_G <= 0, B_L not a multiple of minB_L) or internal failure; no
 * feasible configuration is a success with out->found = 0. */
int hb_iidp_solve(struct hb_iidp_solver *s, const struct hb_iidp_request *req, struct hb_iidp_result *out,
		  struct hb_error *err);
/* One (allocation, B_L, M) problem (what the auto-scaler needs when it has
 * already fixed M).  found = 0 with why when M < N_H or B_L is infeasible. */
int hb_iidp_solve_m(struct hb_iidp_solver *s, const int *alloc, int local_bs, int M, int method,
		    struct hb_iidp_result *out, struct hb_error *err);

/* ---- answers by allocation shape ---------------------------------------- */

/* What a solve decides apart from which pair runs what: the part of an
 * hb_iidp_result the auto-scaler's estimate reads (autoscale.h). */
struct hb_iidp_summary {
	int found;              /* 0: no feasible configuration */
	long global_bs;         /* B_G* = 2 M B_L */
	int local_bs;           /* B_L* */
	int m;                  /* decoupled workers per group */
	int n_gpus;             /* GPUs of the allocation */
	double iter_s;          /* C.t */
	double throughput;      /* F = B_G* / C.t */
};

/* An allocation up to identical nodes: the sorted (node class, GPUs) of its
 * used nodes, where a node class is every perf node with the same GPU type
 * and all-reduce fits (the only per-node inputs of a table).  Two
 * allocations of one shape give the same summary to every request: their
 * tables hold the same pairs in another order, and the optimum time, the
 * throughput bounds, hence B_L* and M, do not depend on the order (the
 * min-max value is the least feasible candidate time, a property of the
 * multiset of pairs); only the per-pair assignment (ties broken by pair
 * order) and the node names differ, and a summary holds neither.  Build with
 * hb_iidp_shape_of (a GPUs-per-node vector) or hb_iidp_shape_of_nodes (a
 * list of nodes), free with hb_iidp_shape_free; a shape may be rebuilt in
 * place (zero-initialise it once). */
struct hb_iidp_shape {
	int *node;              /* [nused] perf node of each used node, in the order given */
	int *gpus;              /* [nused] its GPUs (even, > 0) */
	long *key;              /* [2 nused] (class, GPUs) of the used nodes, sorted */
	int nused;              /* used nodes */
	int cap;                /* entries allocated in node, gpus (and key / 2; akey: cap + 1) */
	int n_gpus;             /* GPUs of the allocation */
	/* What the answers depend on (the answer key, the solver's cache key):
	 * per class used, (class, its GPUs summed over the used nodes) in one
	 * word, ascending, then 1 if more than one node is used, else 0.  A
	 * pair's coefficients are a function of its node's class and of the
	 * all-reduce the allocation runs (its GPU count, and intra- or
	 * inter-node: hb_perf_comm_eval_n), and a solve reads the pairs as a
	 * multiset, so shapes with one answer key have one answer: three P40
	 * nodes with 4, 8 and 8 GPUs answer as 6, 6 and 8 do. */
	long *akey;             /* [nakey] */
	int nakey;
	uint64_t ahash;         /* of akey */
};
/* The shape of alloc (perf->nnodes entries), validated as hb_iidp_solve
 * validates: even counts within each node, at least one GPU. */
int hb_iidp_shape_of(const struct hb_iidp_solver *s, const int *alloc, struct hb_iidp_shape *sh,
		     struct hb_error *err);
/* The shape of the allocation giving gpus[k] GPUs to perf node node[k]
 * (k < n, nodes strictly ascending; zeros are skipped), validated the same
 * way. */
int hb_iidp_shape_of_nodes(const struct hb_iidp_solver *s, const int *node, const int *gpus, int n,
			   struct hb_iidp_shape *sh, struct hb_error *err);
void hb_iidp_shape_free(struct hb_iidp_shape *sh);
/* The kind of perf node i in shapes: two allocations have one shape when
 * they give the same GPU counts to nodes of the same kinds (0 <= i < nnodes). */
int hb_iidp_node_kind(const struct hb_iidp_solver *s, int i);
/* hb_iidp_solve's summary of req on the allocation sh describes
 * (req->alloc is ignored), through a cache keyed by (shape, request) that
 * the solver owns beside its tables (same limit, same eviction); an
 * Algorithm 1 request is keyed by the least B_G with the same M at every
 * candidate B_L, which has the same answer (iidp.c).  Exactly
 * hb_iidp_solve's answer, hit or miss. */
int hb_iidp_solve_summary(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh,
			  const struct hb_iidp_request *req, struct hb_iidp_summary *out, struct hb_error *err);

/* Bounds on every answer hb_iidp_solve_summary can give on a shape: what a
 * caller ranking shapes needs to skip the ones that cannot win without
 * solving them (autoscale.h).  hb_iidp_shape_bound gathers, once per shape,
 * per candidate B_L a few numbers from the coefficients the solver itself
 * builds for the shape's canonical allocation (every used node, n_vsw =
 * 1..cap, t(n, g) = base_n + (g - 1) step_n with g = n_GA + 1 >= 1);
 * hb_iidp_shape_max_throughput then bounds the throughput of any answer to
 * an Algorithm 1 request of B_G <= max_global_bs in O(candidate B_L).
 *
 * Why it holds.  A found answer (B_L, M, pairs k with w_k = n_k g_k workers)
 * runs at F = 2 M B_L / T, T = max_k t_k(n_k, g_k), M >= N_H, and M =
 * round(B_G / B_L / 2) <= round(max_global_bs / B_L / 2) = M' (round is
 * monotone), so only B_L with M' >= N_H can answer.  Where base_n >= step_n
 * > 0 for every node and n (else there is no bound: INFINITY):
 *  - F = sum_k 2 B_L w_k / T <= sum_k 2 B_L w_k / t_k(n_k, g_k), and
 *    n g / (base_n + (g - 1) step_n) <= n / step_n: F <= f_inf = sum over
 *    pairs of 2 B_L max_n n / step_n;
 *  - the busiest pair serves w >= u = ceil(M / N_H) workers, and
 *    t = (base_n - step_n) + (w / n) step_n >= a + u b with a = min
 *    (base_n - step_n) >= 0 and b = min step_n / n over nodes and n, and
 *    t >= base_n >= c = min base_n: T >= max(c, a + u b), so
 *    F <= g(M) = 2 B_L M / max(c, a + u b).  g rises with M while u
 *    stays, and falls where u steps up; its tops g(N_H u) rise with u
 *    (a >= 0).  So every request (M <= M') is bounded by the larger of
 *    g(M') and, when u' = ceil(M' / N_H) > 1, the top of the level below,
 *    g(N_H (u' - 1)).
 * The bound is the largest over B_L of the lesser of the two, widened by a
 * relative 1e-9 for rounding; 0 when no B_L can answer. */
struct hb_iidp_shape_bound {
	int nh;                 /* pairs of the shape (N_H) */
	int nl;                 /* candidate B_L */
	void *blob;             /* owned: per candidate B_L, what the throughput bound reads */
	size_t bytes, cap;      /* of blob: used, allocated */
	/* The last answers of the two memoised bounds below (0: none), a
	 * function of the blob and the point asked: a job ranks its shapes
	 * epoch after epoch on the same largest and last points (a B_G held
	 * at its bound), and a ranking bounds every shape of an offer. */
	long memo_fx, memo_gx, memo_g;
	double memo_f;
	void *held;             /* hb_iidp_shape_bound_hold's: the shared copy blob points into, else NULL */
};
/* Fill b (zero-initialise it once; rebuilt in place) for sh.  The solver
 * keeps a copy in its cache and reads it too: while it is there, a
 * summary of the shape or a whole solve of an allocation of it visits its
 * candidate B_L best-first on these bounds and builds the tables of only
 * those that can reach the answer (the same answer: iidp.c). */
int hb_iidp_shape_bound(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
			struct hb_error *err);
void hb_iidp_shape_bound_free(struct hb_iidp_shape_bound *b);
/* The same bounds for a caller that keeps them while it ranks the shape
 * again and again (the auto-scaler's shape store, one per job): b's blob
 * is one copy the solver keeps for every holder of the shape, not a copy
 * of b's own, until the last of them releases it.  A held copy is outside
 * the cache (never evicted, not counted in its limit: the holders own it),
 * and summaries and solves of the shape visit their B_L best-first on it
 * as on a cached one, so a holder need not keep a cached copy fresh.
 * b must hold nothing (zero-initialised or
 * released); it is released with the solver that filled it, before the
 * solver is freed. */
int hb_iidp_shape_bound_hold(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
			     struct hb_error *err);
void hb_iidp_shape_bound_release(struct hb_iidp_solver *s, struct hb_iidp_shape_bound *b);
/* Distinct shapes whose bounds are held now (one shared copy each). */
size_t hb_iidp_held_shapes(const struct hb_iidp_solver *s);
/* >= the throughput (samples/s) of every found answer to an Algorithm 1
 * request of B_G <= max_global_bs on the shape. */
double hb_iidp_shape_max_throughput(const struct hb_iidp_shape_bound *b, long max_global_bs);
/* <= the realised B_G (2 M B_L) of every found answer to an Algorithm 1
 * request of B_G global_bs on the shape: the least 2 M B_L over the
 * candidate B_L with M = round(global_bs / B_L / 2) >= N_H; LONG_MAX when
 * there is none (no answer is found). */
long hb_iidp_shape_min_global_bs(const struct hb_iidp_shape_bound *b, long global_bs);
/* The same two answers, kept in b's memo for the next call at the same
 * point (max_global_bs, global_bs > 0). */
double hb_iidp_shape_max_throughput_memo(struct hb_iidp_shape_bound *b, long max_global_bs);
long hb_iidp_shape_min_global_bs_memo(struct hb_iidp_shape_bound *b, long global_bs);

/* "['node0:4GPU,VSW:1,GA:0']": the artifact's config list, one entry per
 * node and distinct (n_vsw, n_GA) (pairs merged, GPUs counted). */
int hb_iidp_format_config(const struct hb_perf *perf, const struct hb_iidp_result *r, char *buf, size_t size);
/* "GBS: 128 | LBS: 32 | weight sync method: overlap | config: [...]" */
int hb_iidp_format_line(const struct hb_perf *perf, const struct hb_iidp_result *r, char *buf, size_t size);

#endif
