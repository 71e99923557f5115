/*
 * pollux_ga.h: PolluxSched's search for an allocation matrix (Pollux,
 * OSDI '21, §3.2, and the artifact's simulator/pollux.py): NSGA-II over
 * plain arrays, with no simulation behind it.  sim/policies/pollux/
 * arbiter_pollux.c builds one struct hb_pollux_problem per round from the
 * agents' reports; tests compare the search with brute force.
 *
 * An allocation is a J x N matrix of GPUs (row-major, A[j * N + n]: GPUs of
 * job j on node n).  Row order is repair priority: the arbiter lists jobs by
 * attained service, least first (Pollux §3.2 [ART]).
 *
 * FITNESS(A) = ((1/J) sum_j (scale SPEEDUP_j(A_j) f_j(A_j) + eps)^p)^(1/p)
 *   with f_j = REALLOC_FACTOR_j when row j differs from the current
 *   allocation and 1 otherwise (Eq. 14 with the re-allocation penalty and
 *   the artifact's constants: scale = nodes / GPUs, eps = 1e-3, note A5);
 * UTILITY(A) = sum_j SPEEDUP_j(A_j) / GPUs of the nodes A uses
 *   (the artifact's second NSGA-II objective, the share-weighted mean of
 *   speedup per GPU).
 * Feasible: every node within capacity, at most one job spanning several
 * nodes on each node (interference avoidance), each job within its
 * max_replicas and on at most max_nodes_per_job nodes.
 */
#ifndef HB_POLLUX_GA_H
#define HB_POLLUX_GA_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "pool.h"
#include "rng.h"

/* [ART] nodes one job may span, and the artifact's cluster size (below it
 * a search may do the artifact's whole work: hb_pollux_search_cells). */
#define HB_POLLUX_MAX_NODES 16

/* A packed matrix (struct hb_pollux_result's fpacked form): p[0 .. J] row
 * starts, then p[J] (column, GPUs) cells; equal matrices have equal ints. */
#define HB_POLLUX_PK_CELLS(p, J) ((p) + (J) + 1)

/* Ints in packed matrix p of J rows. */
static inline size_t hb_pollux_packed_len(const int *p, int J)
{
	return (size_t)J + 1 + 2 * (size_t)p[J];
}

/* FNV-1a of L ints: the search's duplicate check, and the arbiter's grant
 * signature. */
static inline uint64_t hb_pollux_hash(const int *x, size_t L)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < L; i++) {
		h ^= (uint64_t)(uint32_t)x[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* SPEEDUP of job j on its row (nnodes entries): >= 0, 0 for an empty row.
 * Returns 0, or -1 with err filled. */
typedef int hb_pollux_speedup_fn(void *ctx, int job, const int *row, double *speedup, struct hb_error *err);
/* The same on the row's non-zero cells only: n (node, GPUs) pairs, cells[2 i]
 * the node and cells[2 i + 1] > 0 its GPUs, nodes ascending.  Optional; the
 * search uses it when given (it never spells rows out then). */
typedef int hb_pollux_speedup_cells_fn(void *ctx, int job, const int *cells, int n, double *speedup,
				       struct hb_error *err);

/* One round's problem.  Everything is borrowed. */
struct hb_pollux_problem {
	int njobs;               /* J >= 1 rows, in repair priority order */
	int nnodes;              /* N >= 1 columns */
	const int *capacity;     /* GPUs per node, N entries */
	const int *base;         /* current allocation, J x N */
	const int *max_replicas; /* per job: most GPUs it may get (exploration cap) */
	const double *factor;    /* per job: REALLOC_FACTOR for a changed row, in [0, 1] */
	double p;                /* power-mean exponent (default -1) */
	double eps;              /* added to every term (artifact 1e-3) */
	double scale;            /* speedup multiplier in FITNESS (artifact: N / total GPUs) */
	int max_nodes_per_job;   /* nodes one job may span (artifact 16) */
	hb_pollux_speedup_fn *speedup;
	void *ctx;               /* passed to speedup */
	hb_pollux_speedup_cells_fn *speedup_cells; /* NULL: speedup on dense rows */
	struct hb_pool *pool;    /* NULL: serial.  Else the search evaluates a generation's
				    matrices on its threads, so speedup / speedup_cells are called
				    from several threads at once and must allow it; the result is
				    the same bits as without */
};

/* Search settings: the artifact's NSGA-II (Pollux §3.2 [ART]). */
struct hb_pollux_ga_opts {
	int pop_size;            /* population (100) */
	int generations;         /* generations, the initial population counting as the first (100) */
	int max_mating_rounds;   /* matings retried per generation while duplicates are dropped (100) */
	int stale_generations;   /* > 0: stop after this many x (J + 1) generations without a better
				    FITNESS (5; 0 runs every generation, as the artifact) */
	double max_cell_evals;   /* > 0: stop after the generation where evaluations x J x N reach this
				    (2e6, at scale mostly; 0: no limit, as the artifact) */
	int bounded_raises;      /* 1: mutation (3) raises a free node's cell with 1 / max(J, nodes
				    with a free GPU), at most one raised cell a row on average;
				    0: with 1 / J, as the artifact (the default; the arbiter sets 1
				    on clusters of more than 16 nodes, hb_pollux_bounded_raises) */
};

void hb_pollux_ga_opts_default(struct hb_pollux_ga_opts *o);

/* The search-work cap (max_cell_evals) for one round of njobs rows over
 * ncols columns on a cluster of cluster_nodes nodes: o's cap, raised to the
 * artifact's whole search (pop_size x generations x njobs x ncols cells)
 * when the cluster has at most 16 nodes, the artifact's own size; <= 0
 * stays "no limit". */
double hb_pollux_search_cells(int cluster_nodes, int njobs, int ncols, const struct hb_pollux_ga_opts *o);

/* bounded_raises for a cluster of cluster_nodes nodes: 0 up to the
 * artifact's 16, 1 beyond. */
int hb_pollux_bounded_raises(int cluster_nodes);

/* FITNESS and UTILITY of one allocation (which need not be feasible). */
int hb_pollux_evaluate(const struct hb_pollux_problem *pb, const int *alloc, double *fitness, double *utility,
		       struct hb_error *err);
/* 1 when alloc meets every constraint of the top. */
int hb_pollux_feasible(const struct hb_pollux_problem *pb, const int *alloc);
/* The artifact's operators, in place (the search's own, exposed for tests).
 * Mutation may leave a matrix infeasible; repair makes any matrix feasible
 * (negative entries count as 0) and leaves a feasible one as it is.
 * Crossover writes two children of a and b.  Mutation reads o's
 * bounded_raises (NULL: the defaults).  0, or -1 without memory. */
int hb_pollux_mutate(const struct hb_pollux_problem *pb, int *alloc, const struct hb_pollux_ga_opts *o,
		     struct hb_rng *rng, struct hb_error *err);
void hb_pollux_crossover(const struct hb_pollux_problem *pb, const int *a, const int *b, int *c0, int *c1,
			 struct hb_rng *rng);
int hb_pollux_repair(const struct hb_pollux_problem *pb, int *alloc, struct hb_rng *rng, struct hb_error *err);

/* The outcome of one search. */
struct hb_pollux_result {
	int *best;               /* J x N, the first-front member of highest FITNESS, owned */
	double fitness;          /* its FITNESS */
	double utility;          /* its UTILITY */
	int *front;              /* nfront x J x N: the final first front (the next warm start), owned;
				    NULL from hb_pollux_search_packed */
	int nfront;
	/* The first front packed (hb_pollux_search_packed only, else NULL):
	 * member i at fpacked + foff[i], J + 1 row starts then (column, GPUs)
	 * cells, rows in order, columns ascending within a row, no zero;
	 * owned. */
	int *fpacked;
	size_t *foff;            /* nfront + 1 */
	long evaluations;        /* objective evaluations */
};

void hb_pollux_result_free(struct hb_pollux_result *r);

/* Run the search from ninit >= 0 initial matrices (J x N each; none: the
 * current allocation alone), repaired first.  Deterministic for a given
 * rng state, the same with or without pb->pool. */
int hb_pollux_search(const struct hb_pollux_problem *pb, const int *init, int ninit,
		     const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, struct hb_pollux_result *out,
		     struct hb_error *err);
/* The same search from ninit packed matrices (init + off[k], in the form
 * of fpacked above), its front returned packed (fpacked, foff; front
 * NULL): for the arbiter, which starts each search from the last one's
 * front, without three J x N dense copies of every member per round.  The
 * same decisions as hb_pollux_search on the dense forms. */
int hb_pollux_search_packed(const struct hb_pollux_problem *pb, const int *init, const size_t *off, int ninit,
			    const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, struct hb_pollux_result *out,
			    struct hb_error *err);

#endif
