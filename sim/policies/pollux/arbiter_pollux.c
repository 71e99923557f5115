/*
 * arbiter_pollux.c: PolluxSched (notes/pollux.md §3.2), the cluster-wide
 * half of Pollux: every 60 s it searches for the allocation matrix that
 * maximises the power mean of the jobs' speedups, and hands the GPUs out;
 * each job's Pollux agent then re-tunes (m, s) inside its grant
 * (sim/policies/pollux/agent_pollux.c, on_grant).
 *
 * The search is the artifact's (pollux.md §3.2 [ART], `simulator/pollux.py`
 * of the osdi21-artifact branch): NSGA-II with a population of 100 for 100
 * generations over J x N integer matrices, two objectives (FITNESS, and the
 * cluster utility that only shapes the search), single-point crossover over
 * jobs, the three-step mutation, the four-step repair, and the first-front
 * member of best FITNESS as the answer.  The GA core (first half of this
 * file) is declared in arbiter_pollux.h; the arbiter (second half) builds
 * each round's problem from the agents' reports (agent_pollux.h).
 *
 * Decisions, with the note's items:
 *  - FITNESS (Eq. 14) with p = -1, every active job counted (running,
 *    restarting, suspended and pending: "J counts running and pending
 *    jobs"), the artifact's eps = 1e-3 added to every term (A5: a pending
 *    job adds 1000 to the p = -1 sum, so the search starts everyone it can)
 *    and its constant scale nodes / GPUs on speedups.
 *  - SPEEDUP (Eq. 15) = max GOODPUT on the row / max GOODPUT on the fair
 *    share, the fair share being ceil(G / J) GPUs on ONE node, as the
 *    artifact evaluates it (A4).  If the job's batch limits make that
 *    baseline infeasible (K min_local > maxB_G), the largest feasible K
 *    below it is the baseline.  A job with nothing observed yet gets the
 *    artifact's perfect-scaling prior K / ceil(G / J).
 *  - Re-allocation factor max(T - 30 R, 0) / (T + 30) on every row that
 *    differs from the current allocation, first starts included (A6):
 *    T = age since submission, R = job->restarts (re-grants and resumes;
 *    the first start is not one, as the artifact's num_restarts), delta =
 *    30 s (§5.1).
 *  - Exploration cap: at most min(max(2 x most GPUs observed, 1), cluster
 *    GPUs, maxB_G / min local batch) GPUs (§3.2 [ART]: the artifact's 64 is
 *    its cluster's size), so a new job starts on 1 GPU.  At most 16 nodes per
 *    job, at most one multi-node job per node (interference avoidance).
 *  - Repair priority (A7): jobs ordered by attained service (GPU-seconds,
 *    restart time included) ascending, then submission time, then id.
 *  - Warm start: the previous round's final first front, rows remapped by
 *    job (new jobs get empty rows); the first round starts from the current
 *    allocation alone.  The note says "the previous round's final
 *    population"; the artifact keeps pymoo's result.X, which is the final
 *    population's non-dominated front, and so do we.
 *  - Generations: pymoo counts the initial population as generation 1, so
 *    100 generations are 99 rounds of mating.  Tournaments compare by
 *    Pareto dominance, then crowding distance, then a coin (pymoo's NSGA-II
 *    binary tournament); duplicates of existing matrices are dropped and
 *    mating is repeated, at most 100 times per generation.
 *  - Heterogeneous clusters: a row is evaluated as if all its GPUs were its
 *    slowest type for the job (agent_pollux.h: compute terms scaled, that
 *    type's batch range); the fair share uses the job's reference type, the
 *    cluster's slowest for its model.  Pollux itself assumes one type (A17).
 *  - Time: rounds every 60 s (§5.1), the first at t = 60 s; arrivals and
 *    freed GPUs wait for the next round (§4.3 [ART], the queueing share of
 *    Fig. 8b).  The restart delay is the simulator's restart cost
 *    (hb_sim_restart_s; --restart-cost 30 gives the artifact's 30 s).
 *  - Applying a matrix: jobs whose row changes are re-granted (or started,
 *    or suspended for an empty row) in job order, each as soon as the GPUs
 *    it needs are free; if the remaining ones wait on each other in a cycle,
 *    the first of them is suspended and resumed later in the same round (one
 *    restart, as any re-allocation, but it also counts as a preemption).
 *  - Randomness: a stream of its own seeded from --seed (the GA never
 *    shifts the agents' draws); each mating draws from a stream of its own,
 *    seeded by one draw of that stream per mating round and the mating's
 *    index (see "Threads" below).
 *
 * Scale (a Philly-size cluster: 384 nodes, 157,000 rounds), where hetbatch
 * departs from the artifact's letter; on Pollux's own 64-GPU workloads the
 * mean JCT stays within the spread of seeds (scripts/repro/pollux-spread):
 *  - Searched nodes: the matrix's columns are the nodes that hold GPUs of
 *    any job plus, of the entirely free nodes of each shape (same GPU type,
 *    GPU count, links), the first ones in node order, as many as the jobs
 *    could spread over (sum of min(max replicas, 16)).  Free nodes of one
 *    shape are interchangeable (neither SPEEDUP nor the performance model
 *    reads anything else), so every allocation of the whole cluster has a
 *    relabelled twin of equal FITNESS and UTILITY on these columns; FITNESS's
 *    scale stays the whole cluster's.  The warm start moves a front member's
 *    GPUs on a free node no longer searched to a searched free node of the
 *    same shape it does not use.  Mutation's "nodes with a free GPU" are the
 *    searched ones.
 *  - Skipped rounds: a round keeps every allocation without searching when
 *    the last search kept every allocation too and since then no job
 *    arrived or finished, and for every job the exploration cap, the number
 *    of theta_sys fits and the grant are unchanged, SPEEDUP of its current
 *    allocation moved by at most 1 % and the re-allocation factor by at most
 *    0.05.  A search that moved jobs is always followed by another.
 *  - The search ends when its best FITNESS has not improved for 5 x (J +
 *    1) generations: 10 for one job, 19 or more jobs run all 100 (pymoo's
 *    own default termination also stops on a stalled front; the artifact
 *    asks for 100 generations; 10 flat generations regardless of size moved
 *    workload-2's mean JCT by +5 %, outside the seed spread; 10 per job,
 *    the rule before, spent most of a small search on its flat tail: on the
 *    first 2,000 Philly jobs searches of 2 to 9 jobs ran 24 to 66
 *    generations and held half the search's row evaluations), and a
 *    generation's matings end after 3 rounds in a row that found no new
 *    matrix (pymoo retries 100 times; on small problems every matrix is
 *    soon a duplicate: 42 % of the children there).
 *  - Mutation step 3 draws the gaps between raised cells on nodes where
 *    the job does not run (geometric, the same distribution as a coin per
 *    cell; tests/arbiter_pollux checks the rates).
 *  - Search work: a search ends after the generation in which its
 *    evaluations x J x N cells reach 2e6 (POLLUX_SEARCH_CELLS), on clusters
 *    of more than 16 nodes (hb_pollux_search_cells).  On at most 16 nodes,
 *    the artifact's own cluster size, a search may do the artifact's whole
 *    work, 100 x 100 evaluations x J x N cells: there the cap bound from 13
 *    jobs on, and at twice the job load (the artifact's workloads-2.0, up
 *    to 65-84 jobs at once) it cut a search of J jobs to 2e6 / (16 J)
 *    evaluations, 15 to 60 generations for 20 to 84 jobs (issue 37).
 *    Pollux's own workloads at load 1 reach it only with 13 jobs or more,
 *    in their later generations (36 jobs x 16 nodes x 10,000 evaluations =
 *    5.8e6); a
 *    Philly-size round (100+ jobs x 384 columns) gets one generation, and
 *    the next round's warm start continues from its front.  4e6 -> 2e6
 *    (issue 14's ten-minute bound on the whole philly.csv): 757 -> 570 s
 *    wall there, mean JCT 0.31 -> 0.32 h, p99 4.21 -> 4.32 h, restarts
 *    8.92 -> 9.00 per job; Pollux's workloads 1-4 (pollux-spread, 5 seeds)
 *    moved by -0.07, -0.17, +0.81, +0.21 of the reference's seed range
 *    with --mode fidelity and -0.02, +0.03, +0.92, +0.27 with --mode
 *    native (workload 3, with the most jobs at once, pays: +0.6 % and
 *    +0.9 % of its mean JCT).  Before that, 8e6 -> 4e6: with 8e6 and
 *    10 stale generations per job, searches of 10 jobs or more held 44 % of
 *    the row evaluations on the first 2,000 Philly jobs.  Both changes
 *    together (--policy pollux on the first 2,000 Philly jobs):
 *    hb_pollux_search 39 % -> 30 % of the CPU (perf), 45.2 -> 42.5 CPU-s
 *    in all, the agents' fits about 10 % more (11.3 restarts per job
 *    instead of 10.9: more configurations to fit); 5,000 jobs: 115.6 ->
 *    107.6 CPU-s.  On Pollux's workloads 1-4 (scripts/repro/pollux-spread,
 *    5 seeds) the mean JCT moved by -0.35, +0.24, +0.14, -0.09 of the
 *    reference's seed range with --mode fidelity and +0.02, -0.07, -0.04,
 *    +0.35 with --mode native.
 *  - Genomes are sparse (cells of (node, GPUs), see "genomes" below); the
 *    operators draw the same random numbers as on dense matrices, so this
 *    changes time and memory only (tests/arbiter_pollux compares them with
 *    the dense operators draw for draw, on up to 240 columns).  Column
 *    sums cover the columns that hold cells only, mutation lists the nodes
 *    without a free GPU when they are few (then a sorted list; a bitset
 *    since, see below), the coins of
 *    zero cells advance the generator in one loop (hb_rng_skip), and the
 *    goodput argmax skips candidates that round to the (m, s) before
 *    them: all bit-identical, about 5 % of the
 *    search's CPU on a Philly slice (1,500 jobs from job 15,000: 18.7 ->
 *    17.9 CPU-s in hb_pollux_search, of 50 in all; most searches there have
 *    under 10 jobs and 65 columns, where the O(N) walks were not the cost).
 *    Since then the sorted list is used whenever sorting it costs less than
 *    the walk, and the fair-share baseline skips the K's above maxB_G /
 *    min_local (bit-identical too, within the noise of a loaded machine on
 *    p2000).  What is left of the search is mostly the goodput argmax of
 *    the (type, nodes, GPUs) placements it visits (about 40 % of its CPU):
 *    the agent's memo (hb_pollux_report_argmax) keeps them across rounds,
 *    but its key changes with every refit of theta_sys (3 of 4 of its
 *    invalidations on p2000, 30,000 in all), so most are computed once per
 *    refit and placement; hb_goodput_argmax therefore skips a candidate
 *    (m, s) whose goodput ceiling (T_iter with max(T_grad, T_sync) for
 *    its gamma-norm, no pow()) cannot beat the best so far, the same
 *    answer bit for bit (tests/goodput): hb_goodput_config_eval 8 % -> 4 %
 *    of p2000's CPU, hb_pollux_search 30 % -> 28 %; all three steps
 *    against 714a0ff, run side by side on a loaded machine: 2,000 jobs
 *    48.1 -> 44.0 CPU-s, 5,000 jobs 121.7 -> 110.0.  Mutation and repair of children
 *    that turn out duplicates cost what they cost.
 *    Since then (issue 14): each slot of the agent's memo keeps the
 *    argmax's candidate table (hb_goodput_argmax_cached), which outlives
 *    the memo's grad key: the grid and its feasibility per limits and M0,
 *    T_iter's pow() calls per theta, computed on first need (a running
 *    job's phi moves every round, its theta only after a refit); mutation
 *    keeps the column sums current through its step (3), so repair does not
 *    recount them, and its dense eligibility walk runs without a branch on
 *    locals (since replaced, below); SPEEDUP reads the columns' GPU types
 *    from a per-round array.
 *    All bit-identical (tests/goodput's table oracle; every output of the
 *    workloads, p2000 and jabas-fig10 the same bytes).  Against 49b2b61,
 *    alternating on a loaded 2-core machine (medians, --threads 1): 2,000
 *    jobs 29.6 -> 26.0 CPU-s (4 runs each), 5,000 jobs 61.1 -> 50.8 (2
 *    each); the table alone: 30.4 -> 25.8 and 66.0 -> 58.2.  What is left
 *    of the search is mutation (15 % of p2000's CPU, half of it the
 *    geometric gaps' log() and the RNG), the table loop's efficiency
 *    divisions and cache misses (6 %) and repair (6 %).
 *    On the whole philly.csv (perf, both threads) mutation was 20 % of the
 *    CPU, and 30 % of that was the eligibility walk over every column
 *    (the busy nodes were too many for the sorted list to pay); the nodes
 *    without a free GPU are now a bitset (find_ineligible): a child costs
 *    O(touched columns + N / 64), and the k-th eligible node is a word's
 *    count and a bit select.  Same draws (same-outputs.sh pollux against
 *    105c338: IDENTICAL).
 *
 * Threads (sim --threads, the simulation's pool): the search evaluates a
 * generation's new matrices, and the initial population's, on the pool,
 * each worker with scratch of its own (eval_slots).  A matrix's objectives
 * depend on it alone, so the result is the same bits for any thread count.
 * SPEEDUP's round memo is then shared by the threads: its entries are
 * atomics that hold a pure function of their key, and the agent's argmax
 * memo behind hb_pollux_report_argmax (which may grow or be cleared) is
 * used under a per-job lock, so two threads computing one entry at once
 * store the same bits and different jobs' goodput argmaxes run in parallel.
 * A mating round's matings (tournaments, crossover, mutation and repair of
 * both children) run on the pool too (mate_task): mating m draws from a
 * stream seeded by (one draw of the GA's stream per round, m), writes its
 * children to a buffer of its own, and once all ran the children are kept
 * in mating order with duplicates dropped, so the offspring are the same
 * for any thread count.  Unlike the evaluation this changed the search's
 * random numbers (the same distributions, other draws) and so its
 * decisions, within the spread of seeds (scripts/repro/pollux-spread, 5
 * seeds, against the reference of the notes above: mean JCT moved by +0.21,
 * +0.19, -0.22, +0.06 of the reference's seed range on workloads 1-4 with
 * --mode fidelity, +0.12, +0.02, -0.09, +0.18 with --mode native).  On the first 2,000 Philly jobs with 2 threads the
 * second thread runs about 13 % of the CPU (perf: a third of mutation's
 * and repair's, of the goodput argmaxes' of the search), which is what
 * the wall time can gain on 2 free cores; the rest is serial, mostly the
 * agents' fits.
 * All of a round's matings run, also those after the generation is full
 * (at most a child or two: a round asks for as many as are missing).
 *
 * Capacity that comes and goes (sim --capacity, capacity.h; Pollux has
 * none of its own): a column's capacity is its node's online GPUs
 * (hb_sim_node_online), and G (fair share, exploration cap) is the online
 * total.  Only nodes with every GPU online can be "entirely free" and so
 * interchangeable with the others of their shape; a node with GPUs
 * withdrawn is always a searched column of its own (its capacity differs
 * from its shape's), and a node with none online is never one.  The
 * warm start only moves GPUs to entirely free nodes, so also fully online
 * ones; a front member that holds more than a node has online now is
 * fixed by repair.  On a withdrawal of busy GPUs (on_revoke) the jobs there,
 * most recently started first, give those GPUs up and run on the rest (a
 * Pollux job runs on any count: its agent re-tunes (m, s) on the new grant);
 * a job left with none is preempted by the engine and stays active, so the
 * next round, which always searches after a capacity change, places it
 * again.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent_pollux.h"   /* hb_pollux_agent_report, hb_pollux_report_argmax */
#include "arbiter_pollux.h" /* the GA core */
#include "goodput.h"        /* hb_goodput_fitness, hb_goodput_restart_factor, exploration cap */
#include "policy.h"
#include "sim.h"

/* ---- knobs (pollux.md §3.2, §5.1; [ART] where marked) ------------------- */

#define POLLUX_ROUND_S 60.0        /* scheduling interval */
#define POLLUX_DELTA_S 30.0        /* delta of the re-allocation factor */
#define POLLUX_P (-1.0)            /* fairness knob (default harmonic mean) */
#define POLLUX_EPS 1e-3            /* [ART] added to every speedup (A5) */
#define POLLUX_MAX_NODES 16        /* [ART] nodes one job may span */
#define POLLUX_POP 100             /* [ART] NSGA-II population */
#define POLLUX_GENERATIONS 100     /* [ART] NSGA-II generations */
#define POLLUX_MATING_ROUNDS 100   /* pymoo's n_max_iterations of mating */
#define MUT_RESET_P 0.1            /* [ART] mutation 1: row back to the base */
#define MUT_ZERO_ROW_P 0.1         /* [ART] mutation 2: row chosen for zeroing */
#define MUT_ZERO_ELEM_P 0.1        /* [ART] mutation 2: element zeroed */
#define POLLUX_STALE_GENERATIONS 5 /* x (jobs + 1): generations without a better FITNESS end the search */
/* Work of one search, in matrix cells evaluated (J x N per evaluation, what
 * the artifact's numpy evaluation reads): above it the search ends after the
 * generation that crosses it, on clusters of more than 16 nodes
 * (hb_pollux_search_cells).  Pollux's own workloads (16 nodes, at most 36
 * jobs: 576 cells x 10,000 evaluations) reach it only with 13 jobs or more
 * in their later generations; a Philly-size round (100+ jobs x 384 columns)
 * gets one generation, continued by the next round's warm start.  Search
 * depth against replay time: see "Search work" above for what 4e6 -> 2e6
 * cost and saved. */
#define POLLUX_SEARCH_CELLS 2e6
#define POLLUX_STALL_ROUNDS 3      /* matings rounds in a row without a new matrix end a generation */
#define POLLUX_SKIP_SPEEDUP_TOL 0.01 /* skipped rounds: relative SPEEDUP change per job */
#define POLLUX_SKIP_FACTOR_TOL 0.05  /* skipped rounds: re-allocation factor change per job */

/* The GA's random stream: HB_STREAM_SCHED is rng_agent's, so this one sets a
 * high bit to stay apart from it and from every other stream id. */
#define POLLUX_GA_STREAM ((uint64_t)HB_STREAM_POLLUX_SCHED)

/* ======================================================================== */
/* The GA core (arbiter_pollux.h)                                            */

void hb_pollux_ga_opts_default(struct hb_pollux_ga_opts *o)
{
	o->pop_size = POLLUX_POP;
	o->generations = POLLUX_GENERATIONS;
	o->max_mating_rounds = POLLUX_MATING_ROUNDS;
	o->stale_generations = POLLUX_STALE_GENERATIONS;
	o->max_cell_evals = POLLUX_SEARCH_CELLS;
}

double hb_pollux_search_cells(int cluster_nodes, int njobs, int ncols, const struct hb_pollux_ga_opts *o)
{
	/* The artifact's whole search: every generation's population of J x N
	 * matrices (pymoo evaluates pop_size per generation, the first
	 * included). */
	const double full = (double)o->pop_size * o->generations * njobs * ncols;

	if (o->max_cell_evals <= 0)
		return o->max_cell_evals;
	return cluster_nodes <= POLLUX_MAX_NODES && full > o->max_cell_evals ? full : o->max_cell_evals;
}

/* ---- genomes -------------------------------------------------------------- */

/* The search works on sparse genomes: a job spans at most 16 of the
 * hundreds of columns a Philly-size round has, so dense J x N matrices
 * spend the search's time and memory on zeros.  Every operator below draws
 * exactly the random numbers the artifact's dense operators draw, in the
 * same order (cells that are zero still cost their coin), so the search
 * takes the same decisions as on dense matrices.
 *
 * Packed (population slots): rp[0 .. J] row starts, then rp[J] cells as
 * (column, GPUs) pairs, rows in order and columns ascending within a row,
 * never a zero: equal matrices have equal packed ints, so hashing and
 * comparison read them directly.  Work (children, scratch): per row a count
 * and room for every column, so operators insert and remove in place. */
struct work {
	int *cnt;    /* J: cells of each row */
	int *col;    /* J x N: row j's columns at j N, ascending */
	int *val;    /* J x N: their GPUs, > 0 */
};

#define PK_CELLS(p, J) ((p) + (J) + 1)

static size_t packed_len(const int *p, int J)
{
	return (size_t)J + 1 + 2 * (size_t)p[J];
}

static void work_free(struct work *w)
{
	free(w->cnt);
	free(w->col);
	free(w->val);
	memset(w, 0, sizeof(*w));
}

static int work_new(struct work *w, int J, int N)
{
	size_t cells = (size_t)J * (size_t)N;

	w->cnt = calloc((size_t)J, sizeof(int));
	w->col = malloc((cells > 0 ? cells : 1) * sizeof(int));
	w->val = malloc((cells > 0 ? cells : 1) * sizeof(int));
	if (!w->cnt || !w->col || !w->val) {
		work_free(w);
		return -1;
	}
	return 0;
}

/* Row j of packed p into row j of w. */
static void row_unpack(const int *p, int J, int j, struct work *w, int N)
{
	const int *c = PK_CELLS(p, J);
	int n = 0;

	for (int i = p[j]; i < p[j + 1]; i++, n++) {
		w->col[(size_t)j * N + n] = c[2 * i];
		w->val[(size_t)j * N + n] = c[2 * i + 1];
	}
	w->cnt[j] = n;
}

static void work_pack(const struct work *w, int J, int N, int *p)
{
	int *c = PK_CELLS(p, J), k = 0;

	for (int j = 0; j < J; j++) {
		p[j] = k;
		for (int i = 0; i < w->cnt[j]; i++, k++) {
			c[2 * k] = w->col[(size_t)j * N + i];
			c[2 * k + 1] = w->val[(size_t)j * N + i];
		}
	}
	p[J] = k;
}

/* A dense J x N matrix (entries > 0 are cells) as work rows. */
static void work_from_dense(struct work *w, const int *a, int J, int N)
{
	for (int j = 0; j < J; j++) {
		int k = 0;

		for (int n = 0; n < N; n++)
			if (a[(size_t)j * N + n] > 0) {
				w->col[(size_t)j * N + k] = n;
				w->val[(size_t)j * N + k++] = a[(size_t)j * N + n];
			}
		w->cnt[j] = k;
	}
}

static void dense_from_packed(const int *p, int J, int N, int *a)
{
	const int *c = PK_CELLS(p, J);

	memset(a, 0, sizeof(int) * (size_t)J * (size_t)N);
	for (int j = 0; j < J; j++)
		for (int i = p[j]; i < p[j + 1]; i++)
			a[(size_t)j * N + c[2 * i]] = c[2 * i + 1];
}

/* Work from a packed genome (rows' cells already ascending, no zero). */
static void work_from_packed(struct work *w, const int *p, int J, int N)
{
	const int *c = PK_CELLS(p, J);

	for (int j = 0; j < J; j++) {
		int k = 0;

		for (int i = p[j]; i < p[j + 1]; i++, k++) {
			w->col[(size_t)j * N + k] = c[2 * i];
			w->val[(size_t)j * N + k] = c[2 * i + 1];
		}
		w->cnt[j] = k;
	}
}

/* Drop the zero cells of row j (order kept). */
static void row_compact(struct work *w, int j, int N)
{
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, k = 0;

	for (int i = 0; i < w->cnt[j]; i++)
		if (val[i] > 0) {
			col[k] = col[i];
			val[k++] = val[i];
		}
	w->cnt[j] = k;
}

/* Work buffers of one problem, so operators and evaluation do not allocate. */
struct scratch {
	double *spd;    /* J: scaled speedups */
	double *fac;    /* J: factors */
	int *rowsum;    /* J: GPUs of each row */
	int *dlist;     /* J: rows spanning several nodes */
	int *colsum;    /* N: GPUs used per node, valid where cmark is cstamp (0 elsewhere) */
	int *cmark;     /* N: stamps of colsum */
	int cstamp;
	int *touched;   /* N: the columns colsum is valid on, ntouched */
	int ntouched;
	int *perm;      /* N: cell shuffle (repair), own eligible cells (mutate) */
	uint64_t *ibits; /* nw: nodes without a free GPU (mutate), a bit each; the bits past N are set */
	int *ipre;      /* nw + 1: set bits of ibits in the words before */
	int ninel;      /* nodes without a free GPU */
	int *eidx;      /* N: index of an eligible node in order, -1 for others; set on the touched
			   columns */
	uint64_t *zbits; /* nw: nodes of capacity 0, and the bits past N */
	int nw;         /* words of a node bitset */
	int *mark;      /* N: stamps (node used, node taken, node over capacity) */
	int *room;      /* N: capacity left (repair) */
	int *newc;      /* 2 N: cells raised on nodes where the row had none (mutate) */
	int *dense;     /* N: a row for a dense speedup callback, all zero between uses */
	int stamp;      /* the current stamp of mark */
	int *pbase;     /* packed base */
};

static void scratch_free(struct scratch *s)
{
	free(s->spd);
	free(s->fac);
	free(s->rowsum);
	free(s->dlist);
	free(s->colsum);
	free(s->cmark);
	free(s->touched);
	free(s->perm);
	free(s->ibits);
	free(s->ipre);
	free(s->eidx);
	free(s->zbits);
	free(s->mark);
	free(s->room);
	free(s->newc);
	free(s->dense);
	free(s->pbase);
	memset(s, 0, sizeof(*s));
}

static int scratch_new(const struct hb_pollux_problem *pb, struct scratch *s)
{
	size_t j = (size_t)(pb->njobs > 0 ? pb->njobs : 1), n = (size_t)(pb->nnodes > 0 ? pb->nnodes : 1);
	int nnz = 0;
	struct work w;

	memset(s, 0, sizeof(*s));
	s->spd = malloc(j * sizeof(double));
	s->fac = malloc(j * sizeof(double));
	s->rowsum = malloc(j * sizeof(int));
	s->dlist = malloc(j * sizeof(int));
	s->colsum = malloc(n * sizeof(int));
	s->cmark = calloc(n, sizeof(int));
	s->touched = malloc(n * sizeof(int));
	s->perm = malloc(n * sizeof(int));
	s->nw = (int)((n + 63) / 64);
	s->ibits = malloc((size_t)s->nw * sizeof(uint64_t));
	s->ipre = malloc(((size_t)s->nw + 1) * sizeof(int));
	s->eidx = malloc(n * sizeof(int));
	s->zbits = calloc((size_t)s->nw, sizeof(uint64_t));
	s->mark = calloc(n, sizeof(int));
	s->room = malloc(n * sizeof(int));
	s->newc = malloc(2 * n * sizeof(int));
	s->dense = calloc(n, sizeof(int));
	for (size_t k = 0; k < (size_t)pb->njobs * (size_t)pb->nnodes; k++)
		nnz += pb->base[k] > 0;
	s->pbase = malloc(((size_t)pb->njobs + 1 + 2 * (size_t)nnz) * sizeof(int));
	if (!s->spd || !s->fac || !s->rowsum || !s->dlist || !s->colsum || !s->cmark || !s->touched || !s->perm ||
	    !s->ibits || !s->ipre || !s->eidx || !s->zbits || !s->mark || !s->room || !s->newc ||
	    !s->dense || !s->pbase) {
		scratch_free(s);
		return -1;
	}
	if (work_new(&w, pb->njobs, pb->nnodes) < 0) {
		scratch_free(s);
		return -1;
	}
	work_from_dense(&w, pb->base, pb->njobs, pb->nnodes);
	work_pack(&w, pb->njobs, pb->nnodes, s->pbase);
	work_free(&w);
	for (size_t k = 0; k < (size_t)s->nw * 64; k++)
		if (k >= n || k >= (size_t)pb->nnodes || pb->capacity[k] < 1)
			s->zbits[k / 64] |= (uint64_t)1 << (k % 64);
	return 0;
}

/* Column sums of w's cells into s->colsum, valid on the columns of
 * s->touched only: O(cells) rather than O(N), as a row holds a handful of
 * the hundreds of columns of a Philly-size round. */
static void col_sums(struct scratch *s, const struct work *w, int J, int N)
{
	if (s->cstamp == INT_MAX) {
		memset(s->cmark, 0, sizeof(int) * (size_t)N);
		s->cstamp = 0;
	}
	s->cstamp++;
	s->ntouched = 0;
	for (int j = 0; j < J; j++)
		for (int i = 0; i < w->cnt[j]; i++) {
			int n = w->col[(size_t)j * N + i];

			if (s->cmark[n] != s->cstamp) {
				s->cmark[n] = s->cstamp;
				s->colsum[n] = 0;
				s->touched[s->ntouched++] = n;
			}
			s->colsum[n] += w->val[(size_t)j * N + i];
		}
}

/* Add v GPUs to column n's sum, touching it if it was not. */
static void col_add(struct scratch *s, int n, int v)
{
	if (s->cmark[n] != s->cstamp) {
		s->cmark[n] = s->cstamp;
		s->colsum[n] = 0;
		s->touched[s->ntouched++] = n;
	}
	s->colsum[n] += v;
}

/* A fresh stamp for s->mark (every entry is then unmarked). */
static int next_stamp(struct scratch *s, int N)
{
	if (s->stamp == INT_MAX) {
		memset(s->mark, 0, sizeof(int) * (size_t)N);
		s->stamp = 0;
	}
	return ++s->stamp;
}

/* Bernoulli trials from 32-bit halves of the generator's 64-bit draws (the
 * operators draw one per cell, so this halves their calls into the RNG). */
struct coins {
	struct hb_rng *rng;
	uint64_t bits;       /* unused half of the last draw */
	int left;            /* halves left in bits */
};

/* Threshold of a Bernoulli(p) trial: P(1) = threshold / 2^32. */
static uint64_t coin_threshold(double p)
{
	if (!(p > 0.0))
		return 0;
	if (p >= 1.0)
		return (uint64_t)1 << 32;
	return (uint64_t)(p * 4294967296.0);
}

static int coin(struct coins *c, uint64_t threshold)
{
	uint32_t u;

	if (c->left == 0) {
		c->bits = hb_rng_u64(c->rng);
		c->left = 2;
	}
	u = (uint32_t)c->bits;
	c->bits >>= 32;
	c->left--;
	return u < threshold;
}

/* k coins whose outcome nobody reads (cells that are zero already): the
 * same draws as k calls of coin(), without looking at them. */
static void coin_skip(struct coins *c, long k)
{
	for (; k > 0 && c->left > 0; k--) {
		c->bits >>= 32;
		c->left--;
	}
	if (k >= 2) {
		hb_rng_skip(c->rng, k / 2);
		k %= 2;
	}
	if (k == 1) {
		c->bits = hb_rng_u64(c->rng) >> 32;
		c->left = 1;
	}
}

static int row_nodes(const int *row, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += row[i] > 0;
	return k;
}

static int row_sum(const int *row, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += row[i];
	return k;
}

/* SPEEDUP of job j on its cells: the problem's sparse callback, else its
 * dense one on a row spelled out in s->dense. */
static int cells_speedup(const struct hb_pollux_problem *pb, struct scratch *s, int j, const int *cells, int n,
			 double *x, struct hb_error *err)
{
	int rc;

	if (pb->speedup_cells)
		return pb->speedup_cells(pb->ctx, j, cells, n, x, err);
	for (int i = 0; i < n; i++)
		s->dense[cells[2 * i]] = cells[2 * i + 1];
	rc = pb->speedup(pb->ctx, j, s->dense, x, err);
	for (int i = 0; i < n; i++)
		s->dense[cells[2 * i]] = 0;
	return rc;
}

/* FITNESS and UTILITY of packed genome p. */
static int evaluate(const struct hb_pollux_problem *pb, struct scratch *s, const int *p, double *fitness,
		    double *utility, struct hb_error *err)
{
	const int J = pb->njobs, *cells = PK_CELLS(p, J), *bcells = PK_CELLS(s->pbase, J);
	const int stamp = next_stamp(s, pb->nnodes);
	double total = 0.0;
	long active = 0;

	for (int j = 0; j < J; j++) {
		int n = p[j + 1] - p[j], bn = s->pbase[j + 1] - s->pbase[j];
		const int *c = cells + 2 * (size_t)p[j];
		double x;

		if (cells_speedup(pb, s, j, c, n, &x, err) < 0)
			return -1;
		if (!(x >= 0) || !isfinite(x))
			return hb_runtime_error(err, "pollux: job %d: speedup %g is not a finite value >= 0", j, x);
		total += x;
		s->spd[j] = x * pb->scale;
		s->fac[j] = (n != bn || memcmp(c, bcells + 2 * (size_t)s->pbase[j], sizeof(int) * 2 * (size_t)n) != 0)
				    ? pb->factor[j]
				    : 1.0;
		if (!(s->fac[j] >= 0) || !isfinite(s->fac[j]))
			return hb_input_error(err, "pollux: job %d: field 'factor': value '%g': must be finite and >= 0",
					      j, s->fac[j]);
		for (int i = 0; i < n; i++) {
			int col = c[2 * i];

			if (s->mark[col] != stamp) {
				s->mark[col] = stamp;
				active += pb->capacity[col];
			}
		}
	}
	*utility = active > 0 ? total / (double)active : 0.0;
	if (pb->p == -1.0 && pb->eps > 0) {
		/* The harmonic mean of hb_goodput_fitness without its pow() calls,
		 * which dominate the search's time: x^-1 = 1 / x (the tests check
		 * that both agree). */
		double sum = 0.0;

		for (int j = 0; j < J; j++)
			sum += 1.0 / (s->spd[j] * s->fac[j] + pb->eps);
		*fitness = (double)J / sum;
		return 0;
	}
	return hb_goodput_fitness(s->spd, s->fac, (size_t)J, pb->p, pb->eps, fitness, err);
}

/* Packed form of a dense matrix (entries > 0), malloc'ed. */
static int *pack_dense(const int *a, int J, int N)
{
	struct work w;
	int *p;
	size_t nnz = 0;

	for (size_t k = 0; k < (size_t)J * (size_t)N; k++)
		nnz += a[k] > 0;
	p = malloc(((size_t)J + 1 + 2 * nnz) * sizeof(int));
	if (!p || work_new(&w, J, N) < 0) {
		free(p);
		return NULL;
	}
	work_from_dense(&w, a, J, N);
	work_pack(&w, J, N, p);
	work_free(&w);
	return p;
}

int hb_pollux_evaluate(const struct hb_pollux_problem *pb, const int *alloc, double *fitness, double *utility,
		       struct hb_error *err)
{
	struct scratch s;
	int rc, *p;

	if (scratch_new(pb, &s) < 0)
		return hb_runtime_error(err, "pollux: out of memory");
	p = pack_dense(alloc, pb->njobs, pb->nnodes);
	if (!p) {
		scratch_free(&s);
		return hb_runtime_error(err, "pollux: out of memory");
	}
	rc = evaluate(pb, &s, p, fitness, utility, err);
	free(p);
	scratch_free(&s);
	return rc;
}

int hb_pollux_feasible(const struct hb_pollux_problem *pb, const int *a)
{
	int J = pb->njobs, N = pb->nnodes;

	for (int j = 0; j < J; j++) {
		const int *row = a + (size_t)j * N;

		for (int n = 0; n < N; n++)
			if (row[n] < 0)
				return 0;
		if (row_sum(row, N) > pb->max_replicas[j] || row_nodes(row, N) > pb->max_nodes_per_job)
			return 0;
	}
	for (int n = 0; n < N; n++) {
		int used = 0, distributed = 0;

		for (int j = 0; j < J; j++) {
			int v = a[(size_t)j * N + n];

			used += v;
			if (v > 0 && row_nodes(a + (size_t)j * N, N) > 1)
				distributed++;
		}
		if (used > pb->capacity[n] || distributed > 1)
			return 0;
	}
	return 1;
}

/* Failures before the next success of Bernoulli(p) trials, log1 = log(1 -
 * p) (0: p = 1, no failures): floor(log U / log(1 - p)), U in (0, 1]. */
static int geometric_gap(struct hb_rng *rng, double log1)
{
	double u = 1.0 - hb_rng_uniform(rng), g;

	if (log1 == 0.0)
		return 0;
	g = floor(log(u) / log1);
	return g < (double)INT_MAX / 2 ? (int)g : INT_MAX / 2;
}

/* Mutation (2) on row j: each of the N cells zeroed with probability
 * zelem, one coin per cell in column order, zero cells included. */
static void zero_cells(struct work *w, int j, int N, struct coins *c, uint64_t zelem)
{
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, at = 0;

	for (int i = 0; i < w->cnt[j]; i++) {
		coin_skip(c, col[i] - at);
		at = col[i] + 1;
		if (coin(c, zelem))
			val[i] = 0;
	}
	coin_skip(c, N - at);
	row_compact(w, j, N);
}

/* The nodes with a free GPU after col_sums ("eligible", mutation (3)), as
 * a bitset of the others: only touched nodes and nodes of capacity 0 can
 * lack a free GPU, so the set is the round's capacity-0 bits (zbits) plus
 * the touched nodes without room, and a count of the set bits per word
 * gives a touched node's index among the eligible ones and finds the k-th
 * eligible node (elig_at).  A child costs O(touched + N / 64), not the
 * O(N) walk over the columns that a list of the eligible nodes costs
 * (about a third of mutation's time on the whole philly.csv, where rounds
 * search hundreds of columns), nor a sort of the nodes without room.
 * Only the order of the eligible nodes is read, so the draws are the
 * same. */
static void find_ineligible(const struct hb_pollux_problem *pb, struct scratch *s)
{
	const int *cap = pb->capacity;
	uint64_t *bits = s->ibits;

	memcpy(bits, s->zbits, sizeof(uint64_t) * (size_t)s->nw);
	for (int t = 0; t < s->ntouched; t++) {
		int n = s->touched[t];

		if (cap[n] - s->colsum[n] < 1)
			bits[n / 64] |= (uint64_t)1 << (n % 64);
	}
	s->ipre[0] = 0;
	for (int w = 0; w < s->nw; w++)
		s->ipre[w + 1] = s->ipre[w] + __builtin_popcountll(bits[w]);
	/* the bits past N are not nodes */
	s->ninel = s->ipre[s->nw] - (s->nw * 64 - pb->nnodes);
	for (int t = 0; t < s->ntouched; t++) {
		int n = s->touched[t];

		if (cap[n] - s->colsum[n] < 1)
			s->eidx[n] = -1;
		else
			s->eidx[n] = n - s->ipre[n / 64] -
				     __builtin_popcountll(bits[n / 64] & (((uint64_t)1 << (n % 64)) - 1));
	}
}

/* The k-th eligible node (k < N - ninel): the last word with at most k
 * eligible nodes before it, then the bit of its (k - those)-th clear bit. */
static int elig_at(const struct scratch *s, int k)
{
	int lo = 0, hi = s->nw, r;
	uint64_t x;

	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;

		if (64 * mid - s->ipre[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	x = ~s->ibits[lo];
	for (r = k - (64 * lo - s->ipre[lo]); r > 0; r--)
		x &= x - 1;
	return 64 * lo + __builtin_ctzll(x);
}

/* Mutation (3) on row j (see mutate): the row's own cells on the c1
 * eligible nodes first, then its empty eligible cells at geometric gaps. */
static void raise_row(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, int j,
		      struct coins *c, int c1, double log1)
{
	const int N = pb->nnodes, *cap = pb->capacity;
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, *own = s->perm, c2 = 0, zeros, next, m = 0;
	uint64_t t12;

	for (int i = 0; i < w->cnt[j]; i++)
		if (s->eidx[col[i]] >= 0)
			own[c2++] = i; /* cells in column order, so in eligible order too */
	zeros = c1 - c2;
	t12 = c2 > 0 ? coin_threshold(1.0 / c1 + 1.0 / c2 - 1.0 / c1 / c2) : 0;
	for (int a = 0; a < c2; a++) {
		int i = own[a];

		if (coin(c, t12)) {
			int add = (int)hb_rng_below(c->rng, (uint64_t)(cap[col[i]] - val[i] + 1));

			val[i] += add;
			s->colsum[col[i]] += add; /* touched: the row has a cell there */
		}
	}
	/* own[] now as elig indices, to find the z-th empty eligible cell. */
	for (int a = 0; a < c2; a++)
		own[a] = s->eidx[col[own[a]]];
	next = geometric_gap(c->rng, log1);
	for (int p = 0; next < zeros;) {
		int k = next + p, n, v;

		while (p < c2 && own[p] <= k)
			k = next + ++p;
		n = elig_at(s, k);
		v = (int)hb_rng_below(c->rng, (uint64_t)(cap[n] + 1));
		if (v > 0) {
			s->newc[2 * m] = n;
			s->newc[2 * m + 1] = v;
			m++;
			col_add(s, n, v);
		}
		next = next + 1 + geometric_gap(c->rng, log1);
	}
	/* Merge the new cells (ascending, on columns the row lacks) from the back. */
	for (int a = w->cnt[j] - 1, b = m - 1, o = w->cnt[j] + m - 1; b >= 0; o--) {
		if (a >= 0 && col[a] > s->newc[2 * b]) {
			col[o] = col[a];
			val[o] = val[a--];
		} else {
			col[o] = s->newc[2 * b];
			val[o] = s->newc[2 * b-- + 1];
		}
	}
	w->cnt[j] += m;
}

/* pollux.md §3.2 [ART] mutation: (1) rows back to the base with probability
 * 0.1, (2) rows chosen with probability 0.1 get each element zeroed with
 * probability 0.1, (3) elements on nodes with a free GPU raised to a uniform
 * value between their own and the node's capacity, with probability p1 + p2 -
 * p1 p2 (p1 = 1 / nodes with a free GPU, p2 = 1 / such nodes where the job
 * already runs, 0 where it does not).  The free GPUs of (3) are counted once,
 * after (2), as the artifact's vectorised code does.  The cells where the
 * job does not run succeed with p1 each: the gaps between successes are
 * geometric, drawn directly instead of one coin per cell (the same
 * distribution, a draw per success rather than per node, which matters on
 * large clusters).  Successes land after the job's own cells are raised, on
 * the values the row had before.  The column sums (s->colsum on s->touched)
 * are kept current through (3), so that repair need not recount them. */
static void mutate(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, struct hb_rng *rng)
{
	const uint64_t reset = coin_threshold(MUT_RESET_P), zrow = coin_threshold(MUT_ZERO_ROW_P),
		       zelem = coin_threshold(MUT_ZERO_ELEM_P);
	const int J = pb->njobs, N = pb->nnodes;
	int c1;
	struct coins c = { rng, 0, 0 };
	double log1;

	for (int j = 0; j < J; j++)
		if (coin(&c, reset))
			row_unpack(s->pbase, J, j, w, N);
	for (int j = 0; j < J; j++)
		if (coin(&c, zrow))
			zero_cells(w, j, N, &c, zelem);
	col_sums(s, w, J, N);
	find_ineligible(pb, s);
	c1 = N - s->ninel;
	if (c1 == 0)
		return;
	log1 = c1 > 1 ? log1p(-1.0 / c1) : 0.0;
	for (int j = 0; j < J; j++)
		raise_row(pb, s, w, j, &c, c1, log1);
}

/* Single-point crossover over jobs: rows before the point are swapped. */
static void crossover(const struct hb_pollux_problem *pb, const int *a, const int *b, struct work *c0,
		      struct work *c1, struct hb_rng *rng)
{
	const int J = pb->njobs, N = pb->nnodes, cut = (int)hb_rng_below(rng, (uint64_t)J);

	for (int j = 0; j < J; j++) {
		row_unpack(j < cut ? b : a, J, j, c0, N);
		row_unpack(j < cut ? a : b, J, j, c1, N);
	}
}

/* Repair (b) on row j: only the order of the row's cells matters, and only
 * when a cap binds, so only then is it drawn: a uniform order of those
 * cells is what a uniform shuffle of all nodes gives them. */
static void cap_row(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, int j, struct hb_rng *rng)
{
	const int N = pb->nnodes, nz = w->cnt[j];
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, *perm = s->perm;
	int left = pb->max_replicas[j] > 0 ? pb->max_replicas[j] : 0, used = 0;

	if (s->rowsum[j] <= left && nz <= pb->max_nodes_per_job)
		return;
	for (int i = 0; i < nz; i++)
		perm[i] = i;
	for (int i = nz - 1; i > 0; i--) {
		int k = (int)hb_rng_below(rng, (uint64_t)i + 1), t = perm[i];

		perm[i] = perm[k];
		perm[k] = t;
	}
	for (int a = 0; a < nz; a++) {
		int i = perm[a], take = val[i] < left ? val[i] : left;

		left -= take;
		if (take > 0 && used >= pb->max_nodes_per_job)
			take = 0;
		else if (take > 0)
			used++;
		s->colsum[col[i]] -= val[i] - take;
		val[i] = take;
	}
	row_compact(w, j, N);
}

/* pollux.md §3.2 [ART] repair: (a) one multi-node job per node, the first in
 * job order; (b) each job's GPUs capped at max_replicas and its nodes at
 * max_nodes_per_job, walking its nodes in random order; (c) node capacity by
 * cumulative sum in job order; (d) min_replicas is 0: nothing.  Each step
 * only touches what violates its constraint (a step with nothing to fix
 * would leave the matrix as it is). */
static void repair(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, struct hb_rng *rng,
		   int sums_valid)
{
	const int J = pb->njobs, N = pb->nnodes;
	int ndist = 0, over = 0, stamp;

	/* Every column below holds a cell, so is touched.  Right after mutate
	 * (sums_valid) the sums and touched columns are current (mutate counts
	 * them after its steps (1) and (2) and keeps them through (3)); touched
	 * may list them in another order, which no step below reads. */
	if (!sums_valid)
		col_sums(s, w, J, N);
	for (int j = 0; j < J; j++) {
		int sum = 0;

		for (int i = 0; i < w->cnt[j]; i++)
			sum += w->val[(size_t)j * N + i];
		s->rowsum[j] = sum;
		if (w->cnt[j] > 1)
			s->dlist[ndist++] = j;
	}
	/* (a), row by row: a node is taken by the first multi-node job on it. */
	if (ndist > 1) {
		stamp = next_stamp(s, N);
		for (int k = 0; k < ndist; k++) {
			int j = s->dlist[k], *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N;

			for (int i = 0; i < w->cnt[j]; i++) {
				if (s->mark[col[i]] == stamp) {
					s->colsum[col[i]] -= val[i];
					s->rowsum[j] -= val[i];
					val[i] = 0;
				}
				s->mark[col[i]] = stamp;
			}
			row_compact(w, j, N);
		}
	}
	for (int j = 0; j < J; j++)
		cap_row(pb, s, w, j, rng);
	/* (c): nodes over capacity, filled in job order. */
	stamp = next_stamp(s, N);
	for (int t = 0; t < s->ntouched; t++) {
		int n = s->touched[t];

		if (s->colsum[n] > pb->capacity[n]) {
			s->mark[n] = stamp;
			s->room[n] = pb->capacity[n];
			over = 1;
		}
	}
	if (!over)
		return;
	for (int j = 0; j < J; j++) {
		int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, cut = 0;

		for (int i = 0; i < w->cnt[j]; i++) {
			int n = col[i];

			if (s->mark[n] != stamp)
				continue;
			if (val[i] > s->room[n])
				val[i] = s->room[n];
			s->room[n] -= val[i];
			cut |= val[i] == 0;
		}
		if (cut)
			row_compact(w, j, N);
	}
}

/* The dense operators of arbiter_pollux.h: each round-trips through the
 * sparse ones the search uses. */
static int dense_op(const struct hb_pollux_problem *pb, int *alloc, struct hb_rng *rng, int which,
		    struct hb_error *err)
{
	struct scratch s;
	struct work w;
	int *p;

	if (scratch_new(pb, &s) < 0)
		return hb_runtime_error(err, "pollux %s: out of memory", which ? "repair" : "mutation");
	p = malloc(((size_t)pb->njobs + 1 + 2 * (size_t)pb->njobs * pb->nnodes) * sizeof(int));
	if (!p || work_new(&w, pb->njobs, pb->nnodes) < 0) {
		free(p);
		scratch_free(&s);
		return hb_runtime_error(err, "pollux %s: out of memory", which ? "repair" : "mutation");
	}
	work_from_dense(&w, alloc, pb->njobs, pb->nnodes);
	if (which)
		repair(pb, &s, &w, rng, 0);
	else
		mutate(pb, &s, &w, rng);
	work_pack(&w, pb->njobs, pb->nnodes, p);
	dense_from_packed(p, pb->njobs, pb->nnodes, alloc);
	work_free(&w);
	free(p);
	scratch_free(&s);
	return 0;
}

int hb_pollux_mutate(const struct hb_pollux_problem *pb, int *alloc, struct hb_rng *rng, struct hb_error *err)
{
	return dense_op(pb, alloc, rng, 0, err);
}

int hb_pollux_repair(const struct hb_pollux_problem *pb, int *alloc, struct hb_rng *rng, struct hb_error *err)
{
	return dense_op(pb, alloc, rng, 1, err);
}

void hb_pollux_crossover(const struct hb_pollux_problem *pb, const int *a, const int *b, int *c0, int *c1,
			 struct hb_rng *rng)
{
	size_t L = (size_t)pb->njobs * pb->nnodes, cut = (size_t)hb_rng_below(rng, (uint64_t)pb->njobs) * pb->nnodes;

	memcpy(c0, b, sizeof(int) * cut);
	memcpy(c0 + cut, a + cut, sizeof(int) * (L - cut));
	memcpy(c1, a, sizeof(int) * cut);
	memcpy(c1 + cut, b + cut, sizeof(int) * (L - cut));
}

/* ---- NSGA-II ---------------------------------------------------------------- */

/* Population slots: genomes, objectives (both minimised: -FITNESS,
 * -UTILITY), hashes, rank and crowding. */
struct ga {
	const struct hb_pollux_problem *pb;
	const struct hb_pollux_ga_opts *o;
	struct hb_rng *rng;
	struct scratch s;
	size_t L;            /* ints of a slot: J + 1 row starts and 2 ints per cell, up to lcap cells */
	size_t lcap;         /* cells a repaired genome can have */
	int cap;             /* slots */
	int *x, *x2;         /* cap x L packed genomes; x2 receives survivors */
	double *f, *f2;      /* cap x 2 objectives */
	uint64_t *h, *h2;    /* cap hashes */
	int *rank, *rank2;
	double *crowd, *crowd2;
	int *order;          /* cap: sweep order (survive) */
	int *last;           /* cap: latest member of each front (survive) */
	int *front, *next;   /* cap: one front; merge-sort and crowding scratch */
	int *sel;            /* tournament candidates; front starts (survive) */
	uint64_t *key;       /* cap: random tie-break keys */
	struct work child[2]; /* offspring of one mating (worker 0) */
	int *kids;           /* (pop_size + 1) x L: a mating round's children, packed, in mating order */
	uint64_t *kh;        /* their hashes */
	uint64_t mbase;      /* the mating round's stream base (mate_task) */
	int *set;            /* set_size: genome set for duplicate elimination */
	size_t set_size;     /* a power of two >= 4 cap */
	long evals;
	/* Parallel evaluation (eval_slots): worker 0 (the calling thread) uses
	 * s, worker w > 0 ws[w - 1], made at the first batch that runs on the
	 * pool; each worker keeps the first slot it failed on and its error. */
	int nw;              /* hb_pool_threads(pb->pool) */
	struct scratch *ws;  /* nw - 1, NULL until needed */
	struct work *wchild; /* 2 (nw - 1): the children of workers > 0, with ws */
	int *wfail;          /* nw: first failed slot, -1 none */
	struct hb_error *werr; /* nw */
	int ebeg, eend;      /* the batch: slots [ebeg, eend) */
	int echunk;          /* slots per task */
};

static uint64_t hash_genome(const int *x, size_t L)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < L; i++) {
		h ^= (uint64_t)(uint32_t)x[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static void ga_free(struct ga *g)
{
	scratch_free(&g->s);
	free(g->x);
	free(g->x2);
	free(g->f);
	free(g->f2);
	free(g->h);
	free(g->h2);
	free(g->rank);
	free(g->rank2);
	free(g->crowd);
	free(g->crowd2);
	free(g->order);
	free(g->last);
	free(g->front);
	free(g->next);
	free(g->sel);
	free(g->key);
	work_free(&g->child[0]);
	work_free(&g->child[1]);
	free(g->kids);
	free(g->kh);
	free(g->set);
	for (int w = 0; g->ws && w < g->nw - 1; w++) {
		scratch_free(&g->ws[w]);
		work_free(&g->wchild[2 * w]);
		work_free(&g->wchild[2 * w + 1]);
	}
	free(g->ws);
	free(g->wchild);
	free(g->wfail);
	free(g->werr);
}

static int ga_new(struct ga *g, const struct hb_pollux_problem *pb, const struct hb_pollux_ga_opts *o, int ninit,
		  struct hb_rng *rng)
{
	size_t c;

	memset(g, 0, sizeof(*g));
	g->pb = pb;
	g->o = o;
	g->rng = rng;
	/* A repaired row has at most min(max_replicas, max_nodes_per_job,
	 * nodes) cells (repair (b)); every slot holds a repaired genome. */
	g->lcap = 0;
	for (int j = 0; j < pb->njobs; j++) {
		int m = pb->max_replicas[j] > 0 ? pb->max_replicas[j] : 0;

		m = m < pb->max_nodes_per_job ? m : pb->max_nodes_per_job;
		g->lcap += (size_t)(m < pb->nnodes ? m : pb->nnodes);
	}
	g->L = (size_t)pb->njobs + 1 + 2 * g->lcap;
	g->cap = (ninit > o->pop_size ? ninit : o->pop_size) + o->pop_size;
	c = (size_t)g->cap;
	if (scratch_new(pb, &g->s) < 0)
		return -1;
	g->x = malloc(c * g->L * sizeof(int));
	g->x2 = malloc(c * g->L * sizeof(int));
	g->f = malloc(2 * c * sizeof(double));
	g->f2 = malloc(2 * c * sizeof(double));
	g->h = malloc(c * sizeof(uint64_t));
	g->h2 = malloc(c * sizeof(uint64_t));
	g->rank = malloc(c * sizeof(int));
	g->rank2 = malloc(c * sizeof(int));
	g->crowd = malloc(c * sizeof(double));
	g->crowd2 = malloc(c * sizeof(double));
	g->order = malloc(c * sizeof(int));
	g->last = malloc(c * sizeof(int));
	g->front = malloc(c * sizeof(int));
	g->next = malloc(c * sizeof(int));
	g->sel = malloc((4 * c + c) * sizeof(int));
	g->key = malloc(c * sizeof(uint64_t));
	g->kids = malloc(((size_t)o->pop_size + 1) * g->L * sizeof(int));
	g->kh = malloc(((size_t)o->pop_size + 1) * sizeof(uint64_t));
	if (work_new(&g->child[0], pb->njobs, pb->nnodes) < 0 || work_new(&g->child[1], pb->njobs, pb->nnodes) < 0)
		return -1;
	for (g->set_size = 16; g->set_size < 4 * c; g->set_size *= 2)
		;
	g->set = calloc(g->set_size, sizeof(int));
	g->nw = hb_pool_threads(pb->pool);
	g->wfail = malloc((size_t)g->nw * sizeof(int));
	g->werr = malloc((size_t)g->nw * sizeof(*g->werr));
	if (!g->wfail || !g->werr)
		return -1;
	if (!g->x || !g->x2 || !g->f || !g->f2 || !g->h || !g->h2 || !g->rank || !g->rank2 || !g->crowd ||
	    !g->crowd2 || !g->order || !g->last || !g->front || !g->next || !g->sel || !g->key ||
	    !g->kids || !g->kh || !g->set)
		return -1;
	return 0;
}

static int dominates(const double *a, const double *b)
{
	return a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1]);
}

/* The set of genomes in the slots: open addressing on the hashes, slot + 1
 * per entry (0 = empty), rebuilt whenever the slots are compacted. */
static void set_clear(struct ga *g)
{
	memset(g->set, 0, sizeof(int) * g->set_size);
}

static void set_add(struct ga *g, int slot)
{
	size_t k = (size_t)g->h[slot] & (g->set_size - 1);

	while (g->set[k] != 0)
		k = (k + 1) & (g->set_size - 1);
	g->set[k] = slot + 1;
}

/* 1 when genome x (hash h) is already in the set. */
static int duplicate(const struct ga *g, const int *x, uint64_t h)
{
	for (size_t k = (size_t)h & (g->set_size - 1); g->set[k] != 0; k = (k + 1) & (g->set_size - 1)) {
		int i = g->set[k] - 1;

		const int *y = g->x + (size_t)i * g->L;

		if (g->h[i] == h && y[g->pb->njobs] == x[g->pb->njobs] &&
		    memcmp(y, x, packed_len(x, g->pb->njobs) * sizeof(int)) == 0)
			return 1;
	}
	return 0;
}

/* Rows (evaluations x jobs) of a batch below which eval_slots stays on the
 * calling thread: a memoised row costs tens of nanoseconds, waking the
 * pool's workers microseconds. */
#define POLLUX_PAR_MIN_ROWS 256

/* The scratch and children of workers 1 .. nw - 1, made when a batch first
 * runs on the pool (a search that never does, most small ones, never pays
 * for them).  0, or -1 without memory. */
static int workers_new(struct ga *g)
{
	const int J = g->pb->njobs, N = g->pb->nnodes;

	if (g->ws)
		return 0;
	g->ws = calloc((size_t)(g->nw - 1), sizeof(*g->ws));
	g->wchild = calloc(2 * (size_t)(g->nw - 1), sizeof(*g->wchild));
	if (!g->ws || !g->wchild)
		goto oom;
	for (int w = 0; w < g->nw - 1; w++)
		if (scratch_new(g->pb, &g->ws[w]) < 0 || work_new(&g->wchild[2 * w], J, N) < 0 ||
		    work_new(&g->wchild[2 * w + 1], J, N) < 0)
			goto oom;
	return 0;
oom:
	for (int w = 0; g->ws && g->wchild && w < g->nw - 1; w++) {
		scratch_free(&g->ws[w]); /* zeroed (calloc) when never made */
		work_free(&g->wchild[2 * w]);
		work_free(&g->wchild[2 * w + 1]);
	}
	free(g->ws);
	free(g->wchild);
	g->ws = NULL;
	g->wchild = NULL;
	return -1;
}

/* One task of eval_slots: slots [ebeg + task echunk, ...) with the
 * worker's scratch.  Each slot's objectives depend on its genome alone, so
 * which thread evaluates it changes nothing; a worker gets its tasks in
 * ascending order, so after its first failure the rest of its tasks are
 * skipped. */
static void eval_task(void *ctx, int task, int worker)
{
	struct ga *g = ctx;
	struct scratch *s = worker == 0 ? &g->s : &g->ws[worker - 1];
	int i0 = g->ebeg + task * g->echunk, i1 = i0 + g->echunk < g->eend ? i0 + g->echunk : g->eend;

	if (g->wfail[worker] >= 0)
		return;
	for (int i = i0; i < i1; i++) {
		double fit, util;

		if (evaluate(g->pb, s, g->x + (size_t)i * g->L, &fit, &util, &g->werr[worker]) < 0) {
			g->wfail[worker] = i;
			return;
		}
		g->f[2 * i] = -fit;
		g->f[2 * i + 1] = -util;
	}
}

/* Evaluate slots [beg, end): on the pool when the batch is worth it, with
 * the same objectives in the same slots as serially.  On failure the error
 * is the one of the lowest failed slot, as serially. */
static int eval_slots(struct ga *g, int beg, int end, struct hb_error *err)
{
	struct hb_pool *pool = NULL;
	int count = end - beg, ntask, fail = -1, fw = 0;

	if (count <= 0)
		return 0;
	g->ebeg = beg;
	g->eend = end;
	g->echunk = count;
	if (g->nw > 1 && count > 1 && (double)count * g->pb->njobs >= POLLUX_PAR_MIN_ROWS) {
		if (workers_new(g) < 0)
			return hb_runtime_error(err, "pollux search: out of memory");
		/* About four tasks per worker: a slot that meets new
		 * placements costs goodput argmaxes, the others almost nothing */
		pool = g->pb->pool;
		g->echunk = (count + 4 * g->nw - 1) / (4 * g->nw);
	}
	ntask = (count + g->echunk - 1) / g->echunk;
	for (int w = 0; w < g->nw; w++) {
		g->wfail[w] = -1;
		hb_error_clear(&g->werr[w]);
	}
	hb_pool_run(pool, ntask, eval_task, g);
	for (int w = 0; w < g->nw; w++)
		if (g->wfail[w] >= 0 && (fail < 0 || g->wfail[w] < fail)) {
			fail = g->wfail[w];
			fw = w;
		}
	if (fail >= 0) {
		if (err)
			*err = g->werr[fw];
		return -1;
	}
	g->evals += count;
	return 0;
}

/* Objective order (f0, then f1), then slot: the sweep order of the sort. */
static int lex_before(const double *f, int i, int k)
{
	if (f[2 * i] != f[2 * k])
		return f[2 * i] < f[2 * k];
	if (f[2 * i + 1] != f[2 * k + 1])
		return f[2 * i + 1] < f[2 * k + 1];
	return i < k;
}

/* Bottom-up merge sort of idx[0, n) by lex_before (tmp: n entries). */
static void lex_sort(const double *f, int *idx, int *tmp, int n)
{
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int i = lo, k = mid, o = lo;

			while (i < mid && k < hi)
				tmp[o++] = lex_before(f, idx[k], idx[i]) ? idx[k++] : idx[i++];
			while (i < mid)
				tmp[o++] = idx[i++];
			while (k < hi)
				tmp[o++] = idx[k++];
		}
		memcpy(idx, tmp, sizeof(int) * (size_t)n);
	}
}

/* Crowding distance of the m slots of one front, given in objective order
 * (pymoo: boundaries infinite, duplicates of an objective vector 0, each
 * objective's gaps normalised by its range, summed and halved).  In a front
 * distinct points have distinct f0 and f1 falls as f0 rises, so that one
 * order serves both objectives. */
static void crowding(struct ga *g, int *idx, int m)
{
	int *u = g->last, nu = 0;
	double r0, r1;

	for (int a = 0; a < m; a++) {
		int i = idx[a];

		g->crowd[i] = 0.0;
		if (nu == 0 || g->f[2 * u[nu - 1]] != g->f[2 * i] || g->f[2 * u[nu - 1] + 1] != g->f[2 * i + 1])
			u[nu++] = i;
	}
	for (int b = 0; b < nu; b++)
		g->crowd[u[b]] = INFINITY;
	if (nu <= 2)
		return;
	r0 = g->f[2 * u[nu - 1]] - g->f[2 * u[0]];
	r1 = g->f[2 * u[0] + 1] - g->f[2 * u[nu - 1] + 1];
	for (int b = 1; b < nu - 1; b++) {
		double d = 0.0;

		if (r0 > 0)
			d += (g->f[2 * u[b + 1]] - g->f[2 * u[b - 1]]) / r0 / 2.0;
		if (r1 > 0)
			d += (g->f[2 * u[b - 1] + 1] - g->f[2 * u[b + 1] + 1]) / r1 / 2.0;
		g->crowd[u[b]] = d;
	}
}

/* Crowding descending, then the random key (survive's cut). */
static int crowd_before(const struct ga *g, int i, int k)
{
	if (g->crowd[i] != g->crowd[k])
		return g->crowd[i] > g->crowd[k];
	return g->key[i] < g->key[k];
}

static void crowd_sort(const struct ga *g, int *idx, int *tmp, int n)
{
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int i = lo, k = mid, o = lo;

			while (i < mid && k < hi)
				tmp[o++] = crowd_before(g, idx[k], idx[i]) ? idx[k++] : idx[i++];
			while (i < mid)
				tmp[o++] = idx[i++];
			while (k < hi)
				tmp[o++] = idx[k++];
		}
		memcpy(idx, tmp, sizeof(int) * (size_t)n);
	}
}

#ifdef POLLUX_FRONT_VERIFY
/* Test builds (tests/arbiter_pollux: test_pollux_front): every front found
 * by the binary search below is checked against the linear scan. */
long hb_pollux_front_verified, hb_pollux_front_mismatch;
#endif

/* The front a point joins in survive's sweep: the first k whose latest
 * member last[k] does not dominate it.  The sweep visits points by (f0,
 * f1) ascending, so every latest member has f0 <= the point's; and the
 * latest members' f1 never fall from one front to the next (a point joins
 * front k > 0 only if last[k - 1] dominates it, so has f1 >= last[k -
 * 1]'s; and it is not dominated by the last[k] it replaces, which had f0
 * <= its own, so its f1 is at most that one's, itself <= last[k + 1]'s).
 * So last[k] dominates the point exactly when its f1 is below the point's,
 * or equal with a lower f0: the fronts of f1 below come first (a binary
 * search), then a run of equal f1, in which those of lower f0 dominate
 * and the first of equal f0 (the same point) does not.  The same front as
 * the linear scan, in O(log fronts). */
static int join_front(const double *f, const int *last, int nfronts, int i)
{
	const double f0 = f[2 * i], f1 = f[2 * i + 1];
	int lo = 0, hi = nfronts;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (f[2 * last[mid] + 1] < f1)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < nfronts && f[2 * last[lo] + 1] == f1 && f[2 * last[lo]] < f0)
		lo++;
	return lo;
}

/* Survivors of slots [0, total): whole fronts in rank order, the last one
 * cut by crowding distance (descending, random ties), compacted into
 * [0, keep) with rank and crowding set.  Non-dominated sorting of two
 * objectives by one sweep in objective order: a point joins the first front
 * whose latest member does not dominate it (that member has the front's
 * lowest f1 so far, so it dominates the point if any member does), found
 * by join_front. */
static void survive(struct ga *g, int total, int keep)
{
	int kept = 0, nfronts = 0, *order = g->order, *last = g->last, *start = g->sel;

	for (int i = 0; i < total; i++)
		order[i] = i;
	lex_sort(g->f, order, g->next, total);
	for (int a = 0; a < total; a++) {
		int i = order[a], k = join_front(g->f, last, nfronts, i);

#ifdef POLLUX_FRONT_VERIFY
		{
			int lin = 0;

			while (lin < nfronts && dominates(g->f + 2 * last[lin], g->f + 2 * i))
				lin++;
			hb_pollux_front_verified++;
			hb_pollux_front_mismatch += lin != k;
		}
#endif
		g->rank[i] = k;
		last[k] = i;
		if (k == nfronts)
			nfronts++;
	}
	/* Members of each front, in objective order: a stable counting sort by
	 * rank of the sweep order. */
	for (int k = 0; k <= nfronts; k++)
		start[k] = 0;
	for (int i = 0; i < total; i++)
		start[g->rank[i] + 1]++;
	for (int k = 0; k < nfronts; k++)
		start[k + 1] += start[k];
	for (int a = 0; a < total; a++)
		g->next[start[g->rank[order[a]]]++] = order[a];
	memcpy(order, g->next, sizeof(int) * (size_t)total);
	for (int k = nfronts; k > 0; k--)
		start[k] = start[k - 1];
	start[0] = 0;
	for (int r = 0; r < nfronts && kept < keep; r++) {
		int *front = g->front, nf = start[r + 1] - start[r], take = nf;

		memcpy(front, order + start[r], sizeof(int) * (size_t)nf);
		crowding(g, front, nf);
		if (kept + nf > keep) {
			/* Crowding descending, random keys on ties. */
			for (int a = 0; a < nf; a++)
				g->key[front[a]] = hb_rng_u64(g->rng);
			crowd_sort(g, front, g->next, nf);
			take = keep - kept;
		}
		for (int a = 0; a < take; a++) {
			int i = front[a];

			memcpy(g->x2 + (size_t)kept * g->L, g->x + (size_t)i * g->L,
			       packed_len(g->x + (size_t)i * g->L, g->pb->njobs) * sizeof(int));
			g->f2[2 * kept] = g->f[2 * i];
			g->f2[2 * kept + 1] = g->f[2 * i + 1];
			g->h2[kept] = g->h[i];
			g->rank2[kept] = r;
			g->crowd2[kept] = g->crowd[i];
			kept++;
		}
	}
#define SWAP(a, b)                                \
	do {                                      \
		void *t_ = (void *)(a);           \
		(a) = (b);                        \
		(b) = t_;                         \
	} while (0)
	SWAP(g->x, g->x2);
	SWAP(g->f, g->f2);
	SWAP(g->h, g->h2);
	SWAP(g->rank, g->rank2);
	SWAP(g->crowd, g->crowd2);
#undef SWAP
}

/* Binary tournament: dominance, then crowding distance, then a coin from
 * the mating's stream. */
static int tournament(const struct ga *g, int a, int b, struct hb_rng *rng)
{
	if (dominates(g->f + 2 * a, g->f + 2 * b))
		return a;
	if (dominates(g->f + 2 * b, g->f + 2 * a))
		return b;
	if (g->crowd[a] > g->crowd[b])
		return a;
	if (g->crowd[b] > g->crowd[a])
		return b;
	return hb_rng_uniform(rng) < 0.5 ? a : b;
}

/* Candidates for 4 m tournaments' entries: concatenated random permutations
 * of the population (pymoo's TournamentSelection, pressure 2). */
static void draw_candidates(struct ga *g, int n, int count)
{
	for (int k = 0; k < count; k += n) {
		int m = count - k < n ? count - k : n;
		int *p = g->sel + k;
		int *perm = g->sel + count; /* spare room after the candidates */

		for (int i = 0; i < n; i++)
			perm[i] = i;
		for (int i = n - 1; i > 0; i--) {
			int r = (int)hb_rng_below(g->rng, (uint64_t)i + 1), t = perm[i];

			perm[i] = perm[r];
			perm[r] = t;
		}
		memcpy(p, perm, sizeof(int) * (size_t)m);
	}
}

/* Mating m of a round (a pool task): tournaments on candidates sel[4 m ..
 * 4 m + 3], crossover, mutation and repair of both children, packed with
 * their hashes into kids[2 m], kids[2 m + 1].  Its random numbers come from
 * a stream of its own, seeded by the round's base and m, so a mating draws
 * the same numbers whichever thread runs it and whichever matings ran
 * before; it reads the population and writes only its own kids. */
static void mate_task(void *ctx, int m, int worker)
{
	struct ga *g = ctx;
	const struct hb_pollux_problem *pb = g->pb;
	struct scratch *s = worker == 0 ? &g->s : &g->ws[worker - 1];
	struct work *child = worker == 0 ? g->child : &g->wchild[2 * (worker - 1)];
	struct hb_rng rng;
	int pa, pbi;

	hb_rng_seed(&rng, g->mbase, (uint64_t)m);
	pa = tournament(g, g->sel[4 * m], g->sel[4 * m + 1], &rng);
	pbi = tournament(g, g->sel[4 * m + 2], g->sel[4 * m + 3], &rng);
	crossover(pb, g->x + (size_t)pa * g->L, g->x + (size_t)pbi * g->L, &child[0], &child[1], &rng);
	for (int k = 0; k < 2; k++) {
		int *c = g->kids + (size_t)(2 * m + k) * g->L;

		mutate(pb, s, &child[k], &rng);
		repair(pb, s, &child[k], &rng, 1);
		work_pack(&child[k], pb->njobs, pb->nnodes, c);
		g->kh[2 * m + k] = hash_genome(c, packed_len(c, pb->njobs));
	}
}

/* One generation's offspring into slots [n, n + *noff).  A mating round's
 * matings run on the pool (each from its own stream, see mate_task); their
 * children are then kept in mating order, duplicates dropped, so the
 * offspring are the same for any number of threads.  All of a round's
 * matings run even when the first ones fill the generation (only its last
 * child or so, as a round asks for as many as are missing).  0, or -1
 * without memory. */
static int offspring(struct ga *g, int n, int *noff)
{
	const struct hb_pollux_problem *pb = g->pb;
	int want = g->o->pop_size;

	*noff = 0;
	set_clear(g);
	for (int i = 0; i < n; i++)
		set_add(g, i);
	for (int round = 0, stall = 0; round < g->o->max_mating_rounds && *noff < want && stall < POLLUX_STALL_ROUNDS;
	     round++) {
		int matings = (want - *noff + 1) / 2, before = *noff;
		struct hb_pool *pool = NULL;

		draw_candidates(g, n, 4 * matings);
		g->mbase = hb_rng_u64(g->rng);
		if (g->nw > 1 && matings > 1 && 2.0 * matings * pb->njobs >= POLLUX_PAR_MIN_ROWS) {
			if (workers_new(g) < 0)
				return -1;
			pool = pb->pool;
		}
		hb_pool_run(pool, matings, mate_task, g);
		for (int k = 0; k < 2 * matings && *noff < want; k++) {
			const int *c = g->kids + (size_t)k * g->L;
			int slot = n + *noff;

			if (duplicate(g, c, g->kh[k]))
				continue;
			memcpy(g->x + (size_t)slot * g->L, c, packed_len(c, pb->njobs) * sizeof(int));
			g->h[slot] = g->kh[k];
			set_add(g, slot);
			(*noff)++;
		}
		stall = *noff > before ? 0 : stall + 1;
	}
	return 0;
}

/* The best FITNESS of the population (its objective's bits). */
static uint64_t front_signature(const struct ga *g, int n)
{
	double best = 0.0;
	uint64_t sig;

	for (int i = 0; i < n; i++)
		if (g->f[2 * i] < best)
			best = g->f[2 * i];
	memcpy(&sig, &best, sizeof(sig));
	return sig;
}

void hb_pollux_result_free(struct hb_pollux_result *r)
{
	free(r->best);
	free(r->front);
	free(r->fpacked);
	free(r->foff);
	memset(r, 0, sizeof(*r));
}

/* The search from dense (init) or packed (pinit, poff) initial matrices,
 * its front dense or packed (packed). */
static int search_run(const struct hb_pollux_problem *pb, const int *init, const int *pinit, const size_t *poff,
		      int ninit, const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, int packed,
		      struct hb_pollux_result *out, struct hb_error *err);

int hb_pollux_search(const struct hb_pollux_problem *pb, const int *init, int ninit,
		     const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, struct hb_pollux_result *out,
		     struct hb_error *err)
{
	return search_run(pb, init, NULL, NULL, ninit, opts, rng, 0, out, err);
}

int hb_pollux_search_packed(const struct hb_pollux_problem *pb, const int *init, const size_t *off, int ninit,
			    const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, struct hb_pollux_result *out,
			    struct hb_error *err)
{
	return search_run(pb, NULL, init, off, ninit, opts, rng, 1, out, err);
}

static int search_run(const struct hb_pollux_problem *pb, const int *init, const int *pinit, const size_t *poff,
		      int ninit, const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, int packed,
		      struct hb_pollux_result *out, struct hb_error *err)
{
	struct hb_pollux_ga_opts def;
	struct ga g;
	int n = 0, best = -1, rc = -1;
	uint64_t front_sig;
	size_t D = (size_t)pb->njobs * (size_t)pb->nnodes; /* a dense matrix */

	memset(out, 0, sizeof(*out));
	if (!opts) {
		hb_pollux_ga_opts_default(&def);
		opts = &def;
	}
	if (pb->njobs < 1 || pb->nnodes < 1 || opts->pop_size < 1 || opts->generations < 1 || ninit < 0)
		return hb_input_error(err, "pollux search: %d jobs, %d nodes, population %d, %d generations: "
				      "need at least 1 of each", pb->njobs, pb->nnodes, opts->pop_size,
				      opts->generations);
	if (ga_new(&g, pb, opts, ninit, rng) < 0) {
		ga_free(&g);
		return hb_runtime_error(err, "pollux search: out of memory");
	}
	/* Initial population: repaired, without duplicates. */
	for (int k = 0; k < (ninit > 0 ? ninit : 1); k++) {
		int *x = g.x + (size_t)n * g.L;

		if (ninit > 0 && pinit)
			work_from_packed(&g.child[0], pinit + poff[k], pb->njobs, pb->nnodes);
		else
			work_from_dense(&g.child[0], ninit > 0 ? init + k * D : pb->base, pb->njobs, pb->nnodes);
		repair(pb, &g.s, &g.child[0], rng, 0);
		work_pack(&g.child[0], pb->njobs, pb->nnodes, x);
		g.h[n] = hash_genome(x, packed_len(x, pb->njobs));
		if (duplicate(&g, x, g.h[n]))
			continue;
		set_add(&g, n);
		n++;
	}
	/* Evaluation draws nothing, so all of them at once, after repair. */
	if (eval_slots(&g, 0, n, err) < 0)
		goto done;
	survive(&g, n, n);
	front_sig = front_signature(&g, n);
	for (int gen = 1, same = 0; gen < opts->generations; gen++) {
		int noff;
		uint64_t sig;

		if (offspring(&g, n, &noff) < 0) {
			hb_runtime_error(err, "pollux search: out of memory");
			goto done;
		}
		if (eval_slots(&g, n, n + noff, err) < 0)
			goto done;
		survive(&g, n + noff, n + noff < opts->pop_size ? n + noff : opts->pop_size);
		n = n + noff < opts->pop_size ? n + noff : opts->pop_size;
		/* Converged: the best FITNESS has not changed for
		 * stale_generations x (J + 1) generations (the artifact runs
		 * all 100; crossover recombines rows, so a problem of more jobs
		 * keeps improving longer: with 5, one job stops after 10 flat
		 * generations and 19 or more jobs always run every
		 * generation). */
		sig = front_signature(&g, n);
		same = sig == front_sig ? same + 1 : 0;
		front_sig = sig;
		if (opts->stale_generations > 0 && same >= opts->stale_generations * (pb->njobs + 1))
			break;
		if (opts->max_cell_evals > 0 && (double)g.evals * pb->njobs * pb->nnodes >= opts->max_cell_evals)
			break;
	}
	for (int i = 0; i < n; i++) {
		if (g.rank[i] != 0)
			continue;
		if (best < 0 || g.f[2 * i] < g.f[2 * best])
			best = i;
		out->nfront++;
	}
	out->best = malloc(D * sizeof(int));
	if (packed) {
		size_t cells = 0;

		out->foff = malloc(((size_t)out->nfront + 1) * sizeof(size_t));
		for (int i = 0; i < n; i++)
			if (g.rank[i] == 0)
				cells += packed_len(g.x + (size_t)i * g.L, pb->njobs);
		out->fpacked = malloc((cells > 0 ? cells : 1) * sizeof(int));
	} else {
		out->front = malloc((size_t)out->nfront * D * sizeof(int));
	}
	if (!out->best || (packed ? !out->foff || !out->fpacked : !out->front)) {
		hb_runtime_error(err, "pollux search: out of memory");
		goto done;
	}
	dense_from_packed(g.x + (size_t)best * g.L, pb->njobs, pb->nnodes, out->best);
	out->fitness = -g.f[2 * best];
	out->utility = -g.f[2 * best + 1];
	if (packed)
		out->foff[0] = 0;
	for (int i = 0, k = 0; i < n; i++) {
		const int *x = g.x + (size_t)i * g.L;

		if (g.rank[i] != 0)
			continue;
		if (packed) {
			const size_t len = packed_len(x, pb->njobs);

			memcpy(out->fpacked + out->foff[k], x, len * sizeof(int));
			out->foff[k + 1] = out->foff[k] + len;
			k++;
		} else {
			dense_from_packed(x, pb->njobs, pb->nnodes, out->front + (size_t)k++ * D);
		}
	}
	out->evaluations = g.evals;
	rc = 0;
done:
	ga_free(&g);
	if (rc < 0)
		hb_pollux_result_free(out);
	return rc;
}

/* ======================================================================== */
/* The arbiter                                                               */

struct pollux_arb {
	struct hb_rng rng;        /* POLLUX_GA_STREAM */
	unsigned char *arrived;   /* per job: its arrival was seen */
	int *fpacked;             /* last round's first front, packed (hb_pollux_result's fpacked) over
				     front_njobs rows and front_ncols columns */
	size_t *foff;             /* nfront + 1 offsets into fpacked */
	int nfront;
	int *front_ids;           /* job id of each row of the front */
	int front_njobs;
	int *front_cols;          /* node of each column of the front */
	int front_ncols;
	/* The last searched round's inputs, to skip rounds where nothing
	 * changed (see "Skipped rounds" at the top); entries by job id order. */
	int last_settled;         /* 1: its search kept every job's allocation */
	int last_njobs;
	struct last_job *last;    /* last_njobs entries, ascending job id */
	int *active;              /* ids of arrived jobs not known to be done, nactive */
	int nactive;
	int *row_of;              /* per job id: scratch of warm_start, -1 outside it */
	int *shape;               /* per node: the first node of its shape (same_shape) */
	long rounds;              /* rounds with active jobs */
	long searched;            /* of them, searched */
};

/* One job's inputs to a searched round (skip detection). */
struct last_job {
	int id;
	int max_replicas;
	long fits;                /* theta_sys fits of its report */
	double speedup;           /* SPEEDUP of its allocation */
	double factor;            /* re-allocation factor */
	uint64_t grant_hash;      /* its grant */
};

/* One job in one round. */
struct round_job {
	struct hb_sim_job *job;
	struct hb_pollux_report rep;
	double attained;          /* GPU-seconds held so far */
	int fair_k;               /* GPUs of the fair share */
	double base_goodput;      /* goodput on the fair share; 0: perfect-scaling prior */
	int memo_k;               /* memo covers K in [0, memo_k] */
	/* Goodput by (type, one node or several, K); < 0 unknown.  The search
	 * evaluates on the simulation's pool, so entries are atomics (an
	 * entry is a pure function of its key: whichever thread stores it
	 * stores the same bits) and the agent's own argmax memo behind
	 * hb_pollux_report_argmax, which it may reallocate, is used under
	 * lock only. */
	_Atomic double *memo;
	int *col_type;            /* per column: its node's GPU type in the job's perf (the
				     perf nodes' records are large and cold; SPEEDUP reads one
				     per cell) */
	pthread_mutex_t lock;     /* around hb_pollux_report_argmax (the agent's memo) */
	int has_lock;             /* lock was initialised */
};

/* One round's problem: the jobs (rows) and the nodes searched (columns). */
struct round {
	struct hb_sim *sim;
	struct round_job *jobs;
	int njobs;
	int *cols;                /* node of each column, ascending */
	int ncols;
	int *node_col;            /* per cluster node: its column, -1 when not searched */
};

/* Free nodes of one shape are interchangeable: neither SPEEDUP nor the
 * simulator's performance model tells them apart (racks are not read). */
static int same_shape(const struct hb_node *a, const struct hb_node *b)
{
	return a->gpu == b->gpu && a->ngpus == b->ngpus && a->intra_bw == b->intra_bw &&
	       a->inter_bw == b->inter_bw && strcmp(a->intra_link, b->intra_link) == 0 &&
	       strcmp(a->inter_link, b->inter_link) == 0;
}

static struct pollux_arb *arb_state(struct hb_sim *sim, struct hb_error *err)
{
	struct pollux_arb *st = sim->arbiter_state;
	int N = sim->cl->nnodes;
	size_t nj = (size_t)(sim->njobs > 0 ? sim->njobs : 1);

	if (st)
		return st;
	st = calloc(1, sizeof(*st));
	if (st) {
		st->arrived = calloc(nj, 1);
		st->active = malloc(nj * sizeof(int));
		st->row_of = malloc(nj * sizeof(int));
		st->shape = malloc((size_t)N * sizeof(int));
	}
	if (!st || !st->arrived || !st->active || !st->row_of || !st->shape) {
		if (st) {
			free(st->arrived);
			free(st->active);
			free(st->row_of);
			free(st->shape);
		}
		free(st);
		hb_runtime_error(err, "pollux: out of memory");
		return NULL;
	}
	for (size_t i = 0; i < nj; i++)
		st->row_of[i] = -1;
	/* Shape of each node: the first node of its shape. */
	for (int n = 0; n < N; n++) {
		int k = 0;

		while (k < n && !(st->shape[k] == k && same_shape(&sim->cl->nodes[k], &sim->cl->nodes[n])))
			k++;
		st->shape[n] = k;
	}
	hb_rng_seed(&st->rng, sim->opts.seed, POLLUX_GA_STREAM);
	sim->arbiter_state = st;
	return st;
}

static int pollux_arrival(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_arb *st = arb_state(sim, err);

	if (!st)
		return -1;
	if (job->agent != &hb_agent_pollux)
		return hb_input_error(err, "pollux: job %s runs agent %s; the Pollux scheduler needs the pollux agent "
				      "(it schedules on the goodput functions the agents report)",
				      job->name, job->agent->name);
	/* It waits for the next round (§4.3 [ART]). */
	if (!st->arrived[job->id])
		st->active[st->nactive++] = job->id;
	st->arrived[job->id] = 1;
	return 0;
}

static double attained_service(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	double s = job->gpu_s;

	/* gpu_s is integrated up to t_last; a job holding GPUs has more since. */
	if ((job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING) && sim->eng.now > job->t_last)
		s += (sim->eng.now - job->t_last) * job->cfg.ngpus;
	return s;
}

static int cmp_service(const void *pa, const void *pb)
{
	const struct round_job *a = pa, *b = pb;

	if (a->attained != b->attained)
		return a->attained < b->attained ? -1 : 1;
	if (a->job->arrival_s != b->job->arrival_s)
		return a->job->arrival_s < b->job->arrival_s ? -1 : 1;
	return a->job->id - b->job->id;
}

/* SPEEDUP of job j on its cells (hb_pollux_speedup_cells_fn). */
static int round_speedup_cells(void *ctx, int j, const int *cells, int ncells, double *out, struct hb_error *err)
{
	const struct round *r = ctx;
	struct round_job *rj = &r->jobs[j];
	const int *col_type = rj->col_type;
	const struct hb_pollux_type *types = rj->rep.types;
	int N = 0, K = 0, type = -1, rc;
	_Atomic double *m = NULL;
	struct hb_goodput_config c;

	/* One pass: nodes, GPUs and the slowest type (hb_pollux_slowest_type). */
	*out = 0.0;
	for (int i = 0; i < ncells; i++) {
		int t;

		if (cells[2 * i + 1] <= 0)
			continue;
		N++;
		K += cells[2 * i + 1];
		t = col_type[cells[2 * i]];
		if (!types[t].usable)
			return 0; /* a GPU type the job cannot run on */
		if (type < 0 || types[t].compute_scale > types[type].compute_scale)
			type = t;
	}
	if (K == 0)
		return 0;
	if (rj->base_goodput <= 0) {
		*out = (double)K / rj->fair_k; /* perfect-scaling prior (§3.2 [ART]) */
		return 0;
	}
	/* T_sync (Eq. 9) only tells one node from several: N > 2 is N = 2. */
	if (N > 2)
		N = 2;
	if (K <= rj->memo_k) {
		double v;

		m = &rj->memo[((size_t)type * 2 + (size_t)(N - 1)) * (size_t)(rj->memo_k + 1) + (size_t)K];
		v = atomic_load_explicit(m, memory_order_relaxed);
		if (v >= 0) {
			*out = v / rj->base_goodput;
			return 0;
		}
	}
	/* Two threads missing the same entry both get it, the second from the
	 * agent's memo: the same value, a little work twice at most. */
	pthread_mutex_lock(&rj->lock);
	rc = hb_pollux_report_argmax(&rj->rep, type, N, K, &c, err);
	pthread_mutex_unlock(&rj->lock);
	if (rc < 0)
		return -1;
	if (m)
		atomic_store_explicit(m, c.goodput, memory_order_relaxed);
	*out = c.goodput / rj->base_goodput;
	return 0;
}

/* The same on a dense row of the round's columns (skip detection). */
static int round_speedup(const struct round *r, int j, const int *row, int *cells, double *out, struct hb_error *err)
{
	int n = 0;

	for (int k = 0; k < r->ncols; k++)
		if (row[k] > 0) {
			cells[2 * n] = k;
			cells[2 * n++ + 1] = row[k];
		}
	return round_speedup_cells((void *)r, j, cells, n, out, err);
}

/* The job's share of the round: report, fair-share baseline, memo. */
static int round_job_init(struct hb_sim *sim, struct round_job *rj, int njobs, int *max_replicas,
			  double *factor, struct hb_error *err)
{
	struct hb_sim_job *job = rj->job;
	struct hb_goodput_limits lim;
	long min_local = 0;
	int G = hb_sim_online_gpus(sim) > 0 ? hb_sim_online_gpus(sim) : 1, cap;
	size_t memo_n;

	if (hb_pollux_agent_report(sim, job, &rj->rep, err) < 0)
		return -1;
	if (rj->rep.ref_type < 0)
		return hb_input_error(err, "pollux: job %s: model %s fits no GPU type of cluster %s (with GNS monitoring)",
				      job->name, job->model->name, sim->cl->name);
	rj->fair_k = (G + njobs - 1) / njobs;
	rj->base_goodput = 0.0;
	if (rj->rep.fitted) {
		/* Fair share on one node of the reference type (A4); the largest
		 * feasible K below it if the batch limits rule it out.  A K with
		 * K min_local > maxB_G has M > maxB_G whatever (m, s), so it is
		 * not asked about: on a Philly-size cluster ceil(G / J) is
		 * hundreds of GPUs above the limit, and walking them down was 3 of
		 * every 4 calls of hb_pollux_report_argmax (k stays >= 1 so that
		 * the same call still reports invalid limits). */
		long ml = rj->rep.types[rj->rep.ref_type].min_local_bsz;
		int k0 = rj->fair_k;

		if (ml > 0 && rj->rep.limits.max_bsz / ml < k0)
			k0 = rj->rep.limits.max_bsz / ml > 1 ? (int)(rj->rep.limits.max_bsz / ml) : 1;
		for (int k = k0; k >= 1; k--) {
			struct hb_goodput_config c;

			if (hb_pollux_report_argmax(&rj->rep, rj->rep.ref_type, 1, k, &c, err) < 0)
				return -1;
			if (c.feasible && c.goodput > 0) {
				rj->base_goodput = c.goodput;
				rj->fair_k = k;
				break;
			}
		}
	}
	/* Exploration cap (§2.1, §3.2 [ART]) with the smallest per-GPU batch of
	 * any usable type, and the cluster. */
	for (int t = 0; t < rj->rep.ntypes; t++)
		if (rj->rep.types[t].usable && (min_local == 0 || rj->rep.types[t].min_local_bsz < min_local))
			min_local = rj->rep.types[t].min_local_bsz;
	lim = rj->rep.limits;
	lim.min_local_bsz = min_local;
	cap = hb_goodput_exploration_cap(rj->rep.max_replicas_seen, &lim);
	if (rj->rep.replica_cap > 0 && cap > rj->rep.replica_cap)
		cap = rj->rep.replica_cap;
	*max_replicas = cap < G ? cap : G;
	*factor = hb_goodput_restart_factor(hb_sim_now(sim) - job->arrival_s, job->restarts, POLLUX_DELTA_S);
	rj->memo_k = *max_replicas;
	memo_n = (size_t)(rj->rep.ntypes > 0 ? rj->rep.ntypes : 1) * 2 * (size_t)(rj->memo_k + 1);
	rj->memo = malloc(memo_n * sizeof(*rj->memo));
	if (!rj->memo)
		return hb_runtime_error(err, "pollux: out of memory");
	for (size_t i = 0; i < memo_n; i++)
		atomic_init(&rj->memo[i], -1.0);
	if (pthread_mutex_init(&rj->lock, NULL) != 0)
		return hb_runtime_error(err, "pollux: cannot create a mutex");
	rj->has_lock = 1;
	return 0;
}

/* The columns of the round (see "Searched nodes" at the top): every node
 * not entirely free, and of the free nodes of each shape the first ones in
 * node order, as many as the jobs could spread over (sum of min(max
 * replicas, nodes per job)): any allocation of the whole cluster has one of
 * the same FITNESS and UTILITY on these, relabelling free nodes. */
static int choose_columns(const struct pollux_arb *st, struct round *r, const int *maxr)
{
	const struct hb_sim *sim = r->sim;
	int N = sim->cl->nnodes, *taken;
	long bound = 0;

	r->cols = malloc(sizeof(int) * (size_t)N);
	r->node_col = malloc(sizeof(int) * (size_t)N);
	taken = calloc((size_t)N, sizeof(int)); /* per shape: free nodes taken */
	if (!r->cols || !r->node_col || !taken) {
		free(taken);
		return -1;
	}
	for (int j = 0; j < r->njobs && bound < N; j++)
		bound += maxr[j] < POLLUX_MAX_NODES ? maxr[j] : POLLUX_MAX_NODES;
	r->ncols = 0;
	for (int n = 0; n < N; n++) {
		int on = hb_sim_node_online(sim, n);
		/* Withdrawn GPUs: a column of its own unless nothing is online
		 * (header, "Capacity that comes and goes"). */
		int in = on > 0 && (on < sim->cl->nodes[n].ngpus || sim->free_gpus[n] < on || taken[st->shape[n]]++ < bound);

		r->node_col[n] = in ? r->ncols : -1;
		if (in)
			r->cols[r->ncols++] = n;
	}
	free(taken);
	return 0;
}

/* Ascending int order (qsort). */
static int cmp_int(const void *pa, const void *pb)
{
	const int a = *(const int *)pa, b = *(const int *)pb;

	return (a > b) - (a < b);
}

/* The previous front with rows moved to this round's job order and columns
 * to this round's nodes, packed (hb_pollux_search_packed): member k at
 * *out + (*out_off)[k].  A member's GPUs on a free node that is no longer
 * searched move to a searched free node of the same shape the member does
 * not use (the same FITNESS); with none left they are dropped and repair
 * takes over.
 *
 * Only the cells of the rows that move are read: the front was dense
 * (members x J x N) and its copies were a tenth of a Philly round.  It
 * takes what the dense copy took, including one quirk of it: the dense
 * copy wrote every old column that maps to a new one, zeros too, in column
 * order, so a GPU moved to free node k was overwritten by 0 when a later
 * old column, unused by the member, was node k itself; such a cell is
 * dropped here too (inv below). */
static int warm_start(struct pollux_arb *st, const struct round *r, int **out, size_t **out_off)
{
	const struct hb_sim *sim = r->sim;
	const int J = r->njobs, nc = r->ncols, pc = st->front_ncols, PJ = st->front_njobs;
	int *x = NULL, *src, *map, *used, *cmark, *cl, *inv, rc = 0, stamp = 0;
	size_t *off = NULL, total = 0;

	*out = NULL;
	*out_off = NULL;
	if (st->nfront == 0)
		return 0;
	for (int i = 0; i < st->nfront; i++)
		total += (size_t)J + 1 + (st->foff[i + 1] - st->foff[i]) - (size_t)PJ - 1;
	x = malloc((total > 0 ? total : 1) * sizeof(int));
	off = malloc(((size_t)st->nfront + 1) * sizeof(size_t));
	src = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1));
	map = malloc(sizeof(int) * (size_t)(pc > 0 ? pc : 1));
	cmark = calloc((size_t)(pc > 0 ? pc : 1), sizeof(int));
	cl = malloc(sizeof(int) * (size_t)(pc > 0 ? pc : 1));
	used = calloc((size_t)(nc > 0 ? nc : 1), sizeof(int));
	inv = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
	if (!x || !off || !src || !map || !cmark || !cl || !used || !inv) {
		rc = -1;
		goto done;
	}
	for (int k = 0; k < PJ; k++)
		st->row_of[st->front_ids[k]] = k;
	for (int j = 0; j < J; j++)
		src[j] = st->row_of[r->jobs[j].job->id]; /* -1: a new job, empty rows */
	for (int k = 0; k < PJ; k++)
		st->row_of[st->front_ids[k]] = -1;
	/* inv[k]: the old column on new column k's node, -1 when none */
	for (int k = 0; k < nc; k++)
		inv[k] = -1;
	for (int c = 0; c < pc; c++)
		if (r->node_col[st->front_cols[c]] >= 0)
			inv[r->node_col[st->front_cols[c]]] = c;
	off[0] = 0;
	for (int i = 0; i < st->nfront; i++) {
		const int *m = st->fpacked + st->foff[i], *mc = PK_CELLS(m, PJ);
		int *p = x + off[i], *pcells = PK_CELLS(p, J), ncl = 0;

		/* the old columns the moving rows use, ascending (the dense
		 * copy's order), with a stamp per member */
		stamp++;
		for (int j = 0; j < J; j++) {
			if (src[j] < 0)
				continue;
			for (int e = m[src[j]]; e < m[src[j] + 1]; e++) {
				const int c = mc[2 * e];

				if (cmark[c] != stamp) {
					cmark[c] = stamp;
					cl[ncl++] = c;
				}
			}
		}
		qsort(cl, (size_t)ncl, sizeof(int), cmp_int);
		for (int a = 0; a < ncl; a++) {
			map[cl[a]] = r->node_col[st->front_cols[cl[a]]];
			if (map[cl[a]] >= 0)
				used[map[cl[a]]] = stamp;
		}
		for (int a = 0; a < ncl; a++) {
			const int c = cl[a], node = st->front_cols[c];
			int k = 0;

			if (map[c] >= 0)
				continue;
			while (k < nc && (used[k] == stamp || st->shape[r->cols[k]] != st->shape[node] ||
					  sim->free_gpus[r->cols[k]] < sim->cl->nodes[r->cols[k]].ngpus))
				k++;
			if (k < nc)
				used[k] = stamp;
			map[c] = k < nc && inv[k] <= c ? k : -1; /* inv[k] > c: overwritten (above) */
		}
		p[0] = 0;
		for (int j = 0; j < J; j++) {
			int n = p[j];

			if (src[j] >= 0)
				for (int e = m[src[j]]; e < m[src[j] + 1]; e++) {
					const int k = map[mc[2 * e]];
					int at = n++;

					if (k < 0) {
						n--;
						continue;
					}
					/* insertion by new column: a row has a handful */
					while (at > p[j] && pcells[2 * (at - 1)] > k) {
						pcells[2 * at] = pcells[2 * (at - 1)];
						pcells[2 * at + 1] = pcells[2 * (at - 1) + 1];
						at--;
					}
					pcells[2 * at] = k;
					pcells[2 * at + 1] = mc[2 * e + 1];
				}
			p[j + 1] = n;
		}
		off[i + 1] = off[i] + packed_len(p, J);
	}
	*out = x;
	*out_off = off;
	x = NULL;
	off = NULL;
done:
	free(x);
	free(off);
	free(src);
	free(map);
	free(cmark);
	free(cl);
	free(used);
	free(inv);
	return rc;
}

static int keep_front(struct pollux_arb *st, const struct round *r, const struct hb_pollux_result *res)
{
	int *ids = malloc(sizeof(int) * (size_t)r->njobs), *cols = malloc(sizeof(int) * (size_t)r->ncols);

	if (!ids || !cols) {
		free(ids);
		free(cols);
		return -1;
	}
	for (int j = 0; j < r->njobs; j++)
		ids[j] = r->jobs[j].job->id;
	memcpy(cols, r->cols, sizeof(int) * (size_t)r->ncols);
	free(st->fpacked);
	free(st->foff);
	free(st->front_ids);
	free(st->front_cols);
	st->fpacked = res->fpacked;
	st->foff = res->foff;
	st->nfront = res->nfront;
	st->front_ids = ids;
	st->front_njobs = r->njobs;
	st->front_cols = cols;
	st->front_ncols = r->ncols;
	return 0;
}

static int cmp_last_id(const void *pa, const void *pb)
{
	const struct last_job *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

/* This round's inputs per job, ascending job id, into cur (r->njobs). */
static int round_inputs(const struct round *r, const int *maxr, const double *factor, const int *base,
			struct last_job *cur, struct hb_error *err)
{
	int N = r->sim->cl->nnodes, *cells = malloc(sizeof(int) * 2 * (size_t)(r->ncols > 0 ? r->ncols : 1));

	if (!cells)
		return hb_runtime_error(err, "pollux: out of memory");
	for (int j = 0; j < r->njobs; j++) {
		const struct round_job *rj = &r->jobs[j];

		cur[j].id = rj->job->id;
		cur[j].max_replicas = maxr[j];
		cur[j].fits = rj->rep.fits;
		cur[j].factor = factor[j];
		cur[j].grant_hash = hash_genome(rj->job->grant, (size_t)N);
		if (round_speedup(r, j, base + (size_t)j * r->ncols, cells, &cur[j].speedup, err) < 0) {
			free(cells);
			return -1;
		}
	}
	free(cells);
	qsort(cur, (size_t)r->njobs, sizeof(*cur), cmp_last_id);
	return 0;
}

/* 1 when the last search kept every allocation and nothing it saw has
 * changed beyond the tolerances since (see "Skipped rounds" at the top). */
static int round_unchanged(const struct pollux_arb *st, const struct last_job *cur, int njobs)
{
	if (!st->last_settled || st->last_njobs != njobs)
		return 0;
	for (int j = 0; j < njobs; j++) {
		const struct last_job *a = &cur[j], *b = &st->last[j];

		if (a->id != b->id || a->max_replicas != b->max_replicas || a->fits != b->fits ||
		    a->grant_hash != b->grant_hash || fabs(a->factor - b->factor) > POLLUX_SKIP_FACTOR_TOL ||
		    fabs(a->speedup - b->speedup) > POLLUX_SKIP_SPEEDUP_TOL * b->speedup)
			return 0;
	}
	return 1;
}

/* Give every job its row of a (see "Applying a matrix" at the top). */
static int apply_matrix(struct hb_sim *sim, const struct round *r, const int *a, int *changed, struct hb_error *err)
{
	int N = sim->cl->nnodes, left;
	unsigned char *done = calloc((size_t)r->njobs, 1);
	int *zero = calloc((size_t)N, sizeof(int));

	*changed = 0;
	if (!done || !zero) {
		free(done);
		free(zero);
		return hb_runtime_error(err, "pollux: out of memory");
	}
	for (int j = 0; j < r->njobs; j++) {
		done[j] = memcmp(a + (size_t)j * N, r->jobs[j].job->grant, sizeof(int) * (size_t)N) == 0;
		*changed += !done[j];
	}
	do {
		int moved = 0;

		left = 0;
		for (int j = 0; j < r->njobs; j++) {
			struct hb_sim_job *job = r->jobs[j].job;
			const int *row = a + (size_t)j * N;
			int fits = 1, rc;

			if (done[j])
				continue;
			for (int n = 0; n < N && fits; n++)
				fits = row[n] <= sim->free_gpus[n] + job->grant[n];
			if (!fits) {
				left++;
				continue;
			}
			if (job->state == HB_JOB_PENDING && !job->started)
				rc = hb_sim_start_job(sim, job, row, err);
			else
				rc = hb_sim_regrant(sim, job, row, err);
			if (rc < 0)
				goto fail;
			done[j] = 1;
			moved++;
		}
		if (left > 0 && moved == 0) {
			int j = 0;

			while (j < r->njobs && (done[j] || r->jobs[j].job->ngrant == 0))
				j++;
			if (j == r->njobs) {
				hb_runtime_error(err, "pollux: allocation over node capacity at t = %.0f s",
						 hb_sim_now(sim));
				goto fail;
			}
			hb_sim_note(sim, r->jobs[j].job, "sched", "pollux: suspended to release GPUs another job needs");
			if (hb_sim_regrant(sim, r->jobs[j].job, zero, err) < 0)
				goto fail;
		}
	} while (left > 0);
	free(done);
	free(zero);
	return 0;
fail:
	free(done);
	free(zero);
	return -1;
}

static void round_free(struct round *r)
{
	for (int j = 0; j < r->njobs; j++) {
		free(r->jobs[j].memo);
		free(r->jobs[j].col_type);
		if (r->jobs[j].has_lock)
			pthread_mutex_destroy(&r->jobs[j].lock);
	}
	free(r->jobs);
	free(r->cols);
	free(r->node_col);
}

/* The active jobs, done ones dropped from the list. */
static int round_jobs(struct pollux_arb *st, struct round *r)
{
	struct hb_sim *sim = r->sim;
	int k = 0;

	for (int i = 0; i < st->nactive; i++)
		if (sim->jobs[st->active[i]].state != HB_JOB_DONE)
			st->active[k++] = st->active[i];
	st->nactive = k;
	r->jobs = calloc((size_t)(k > 0 ? k : 1), sizeof(*r->jobs));
	if (!r->jobs)
		return -1;
	for (int i = 0; i < k; i++)
		r->jobs[r->njobs++].job = &sim->jobs[st->active[i]];
	return 0;
}

static int pollux_round(struct hb_sim *sim, struct hb_error *err)
{
	struct pollux_arb *st = arb_state(sim, err);
	struct round r = { sim, NULL, 0, NULL, 0, NULL };
	struct hb_pollux_problem pb;
	struct hb_pollux_result res = { 0 };
	struct hb_pollux_ga_opts ga;
	struct last_job *cur = NULL;
	int N = sim->cl->nnodes, *base = NULL, *maxr = NULL, *init = NULL, *capacity = NULL, *full = NULL;
	size_t *init_off = NULL; /* warm_start's offsets into init */
	int changed = 0, rc = -1, nc;
	double *factor = NULL;

	if (!st)
		return -1;
	if (round_jobs(st, &r) < 0)
		return hb_runtime_error(err, "pollux: out of memory");
	if (r.njobs == 0) {
		round_free(&r);
		return 0;
	}
	st->rounds++;
	for (int j = 0; j < r.njobs; j++)
		r.jobs[j].attained = attained_service(sim, r.jobs[j].job);
	qsort(r.jobs, (size_t)r.njobs, sizeof(*r.jobs), cmp_service);

	maxr = malloc(sizeof(int) * (size_t)r.njobs);
	factor = malloc(sizeof(double) * (size_t)r.njobs);
	cur = malloc(sizeof(*cur) * (size_t)r.njobs);
	if (!maxr || !factor || !cur)
		goto oom;
	for (int j = 0; j < r.njobs; j++)
		if (round_job_init(sim, &r.jobs[j], r.njobs, &maxr[j], &factor[j], err) < 0)
			goto done;
	if (choose_columns(st, &r, maxr) < 0)
		goto oom;
	nc = r.ncols;
	if (nc == 0) { /* every GPU withdrawn (--capacity): nothing to search, every job waits */
		rc = 0;
		goto done;
	}
	base = malloc(sizeof(int) * (size_t)r.njobs * (size_t)nc);
	capacity = malloc(sizeof(int) * (size_t)nc);
	if (!base || !capacity)
		goto oom;
	for (int k = 0; k < nc; k++)
		capacity[k] = hb_sim_node_online(sim, r.cols[k]);
	for (int j = 0; j < r.njobs; j++)
		for (int k = 0; k < nc; k++)
			base[(size_t)j * nc + k] = r.jobs[j].job->grant[r.cols[k]];
	for (int j = 0; j < r.njobs; j++) {
		const struct hb_perf_node *node = r.jobs[j].job->perf->nodes;

		r.jobs[j].col_type = malloc(sizeof(int) * (size_t)nc);
		if (!r.jobs[j].col_type)
			goto oom;
		for (int k = 0; k < nc; k++)
			r.jobs[j].col_type[k] = node[r.cols[k]].gpu;
	}
	if (round_inputs(&r, maxr, factor, base, cur, err) < 0)
		goto done;
	if (round_unchanged(st, cur, r.njobs)) {
		rc = 0;
		goto done;
	}
	memset(&pb, 0, sizeof(pb));
	pb.njobs = r.njobs;
	pb.nnodes = nc;
	pb.capacity = capacity;
	pb.base = base;
	pb.max_replicas = maxr;
	pb.factor = factor;
	pb.p = POLLUX_P;
	pb.eps = POLLUX_EPS;
	pb.scale = (double)N / (double)sim->cl->ngpus; /* the whole cluster's, searched nodes or not */
	pb.max_nodes_per_job = POLLUX_MAX_NODES;
	pb.speedup = NULL; /* the search only needs cells */
	pb.speedup_cells = round_speedup_cells;
	pb.ctx = &r;
	pb.pool = sim->pool; /* round_speedup_cells allows it (round_job) */
	if (warm_start(st, &r, &init, &init_off) < 0)
		goto oom;
	hb_pollux_ga_opts_default(&ga);
	ga.max_cell_evals = hb_pollux_search_cells(N, pb.njobs, pb.nnodes, &ga);
	if (hb_pollux_search_packed(&pb, init, init_off, init ? st->nfront : 0, &ga, &st->rng, &res, err) < 0)
		goto done;
	st->searched++;
	if (keep_front(st, &r, &res) < 0)
		goto oom;
	res.fpacked = NULL; /* now the state's */
	res.foff = NULL;
	full = calloc((size_t)r.njobs * (size_t)N, sizeof(int));
	if (!full)
		goto oom;
	for (int j = 0; j < r.njobs; j++)
		for (int k = 0; k < nc; k++)
			full[(size_t)j * N + r.cols[k]] = res.best[(size_t)j * nc + k];
	if (apply_matrix(sim, &r, full, &changed, err) < 0)
		goto done;
	if (changed > 0)
		hb_sim_note(sim, NULL, "sched", "pollux: %d of %d jobs re-allocated, fitness %.6g, utility %.4g",
			    changed, r.njobs, res.fitness, res.utility);
	/* Remember what this search saw; a round that changed allocations is
	 * never the base of a skip (the next search may refine it). */
	free(st->last);
	st->last = cur;
	cur = NULL;
	st->last_njobs = r.njobs;
	st->last_settled = changed == 0;
	rc = 0;
	goto done;
oom:
	rc = hb_runtime_error(err, "pollux: out of memory");
done:
	hb_pollux_result_free(&res);
	free(init);
	free(init_off);
	free(base);
	free(full);
	free(maxr);
	free(factor);
	free(capacity);
	free(cur);
	round_free(&r);
	return rc;
}

static double pollux_round_s(const struct hb_sim *sim)
{
	(void)sim;
	return POLLUX_ROUND_S;
}

static void pollux_free(struct hb_sim *sim)
{
	struct pollux_arb *st = sim->arbiter_state;

	if (st) {
		free(st->arrived);
		free(st->active);
		free(st->row_of);
		free(st->shape);
		free(st->fpacked);
		free(st->foff);
		free(st->front_ids);
		free(st->front_cols);
		free(st->last);
		free(st);
	}
	sim->arbiter_state = NULL;
}

/* Busy GPUs are withdrawn (need[i] beyond node i's free ones): the jobs
 * there, most recently started first, give them up and run on the rest
 * (header); the engine preempts whoever is left with none. */
static int pollux_revoke(struct hb_sim *sim, const int *need, struct hb_error *err)
{
	struct pollux_arb *st = arb_state(sim, err);
	int N = sim->cl->nnodes, *left, *grant, *done, rc = 0;

	if (!st)
		return -1;
	st->last_settled = 0;
	left = malloc(sizeof(int) * (size_t)(N > 0 ? N : 1));
	grant = malloc(sizeof(int) * (size_t)(N > 0 ? N : 1));
	done = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(int));
	if (!left || !grant || !done) {
		rc = hb_runtime_error(err, "pollux: out of memory");
		goto out;
	}
	memcpy(left, need, sizeof(int) * (size_t)N);
	for (;;) {
		struct hb_sim_job *job = NULL;
		int keep = 0;

		for (int a = 0; a < st->nactive; a++) {
			struct hb_sim_job *x = &sim->jobs[st->active[a]];
			int on = 0;

			if (done[x->id] || !(x->state == HB_JOB_RUNNING || x->state == HB_JOB_RESTARTING))
				continue;
			for (int n = 0; n < N && !on; n++)
				on = left[n] > 0 && x->grant[n] > 0;
			if (on && (!job || x->start_s > job->start_s || (x->start_s == job->start_s && x->id > job->id)))
				job = x;
		}
		if (!job)
			break;
		done[job->id] = 1;
		for (int n = 0; n < N; n++) {
			int t = left[n] < job->grant[n] ? left[n] : job->grant[n];

			grant[n] = job->grant[n] - t;
			keep += grant[n];
		}
		if (keep == 0)
			continue; /* nothing left: the engine preempts it */
		for (int n = 0; n < N; n++)
			left[n] -= job->grant[n] - grant[n];
		hb_sim_note(sim, job, "shrink", "pollux: capacity revoked, %d -> %d GPUs", job->ngrant, keep);
		if ((rc = hb_sim_regrant(sim, job, grant, err)) < 0)
			break;
	}
out:
	free(left);
	free(grant);
	free(done);
	return rc;
}

/* GPUs came back or went: the next round searches whatever its inputs. */
static int pollux_capacity(struct hb_sim *sim, struct hb_error *err)
{
	struct pollux_arb *st = arb_state(sim, err);

	if (!st)
		return -1;
	st->last_settled = 0;
	return 0;
}

const struct hb_arbiter_ops hb_arbiter_pollux = {
	.name = "pollux",
	.summary = "PolluxSched: 60 s rounds, NSGA-II over allocation matrices maximising the p = -1 power mean "
		   "of goodput speedups",
	.on_arrival = pollux_arrival,
	.on_finish = NULL,
	.round_s = pollux_round_s,
	.on_round = pollux_round,
	.free_state = pollux_free,
	.on_revoke = pollux_revoke,
	.on_requeue = hb_arbiter_requeue_round, /* a preempted job stays active: the next round places it */
	.on_capacity = pollux_capacity,
};
