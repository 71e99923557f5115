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
 *    index (solver/pollux_ga.c).
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
 *    searched ones, each raised with the artifact's 1 / J per row, so a row
 *    gets fewer raised free nodes than on the whole cluster; searching every
 *    node instead moved Pollux's mean JCT by at most 1.3 % (workloads 1-4,
 *    seeds 1-2, load 1) and 1.4 % (workloads-2.0 workload 1), within the
 *    spread of seeds.  On clusters of more than 16 nodes the rate is
 *    1 / max(J, nodes with a free GPU) (hb_pollux_bounded_raises): a round
 *    of few jobs on hundreds of free columns would raise dozens of cells a
 *    row that repair then cuts to the job's cap.
 *  - Skipped rounds: a round keeps every allocation without searching when
 *    the last search kept every allocation too and since then no job
 *    arrived or finished, and for every job the exploration cap, the number
 *    of theta_sys fits and the grant are unchanged, SPEEDUP of its current
 *    allocation moved by at most 1 % and the re-allocation factor by at most
 *    0.05.  A search that moved jobs is always followed by another.
 *  - The search itself (solver/pollux_ga.c) ends early on a stalled
 *    FITNESS, caps its work on clusters of more than 16 nodes, works on
 *    sparse genomes with the dense operators' draws, and runs its
 *    evaluations and matings on the pool; its header has the rules,
 *    docs/policies/pollux.md what each cost and saved.
 *
 * Sia's unaware view (`--fidelity sia`): the Pollux that Sia's simulator
 * compares against (pollux_vnodes.h; cluster_unaware.py ClusterUnaware):
 *  - the search's columns are the cluster cut into vnodes of the smallest
 *    node's GPU count, all of them every round (no searched-node choice,
 *    no skipped rounds), FITNESS's scale vnodes / GPUs;
 *  - every vnode is the first node's GPU type for SPEEDUP and the fair
 *    share (get_unaware_job_info reads applications["aws"]), the jobs'
 *    one throughput fit over all types (agent_pollux.c, merged), and the
 *    exploration cap is also at most the GPUs of the smallest type
 *    (max_num_replicas: 16 on Sia's cluster);
 *  - the answer is repaired, each job keeping its majority type's GPUs
 *    (hb_vnodes_drop_minority), and the repaired rows are the next round's
 *    current allocation; a job restarts when its GPUs per real node
 *    change (Job.reallocate, Job.migrate), and before each round every
 *    running job re-picks its batch (hb_pollux_agent_retune).
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
#include "fidelity.h"       /* HB_FIDELITY_SIA: Sia's unaware view */
#include "pollux_vnodes.h"  /* its virtual nodes and repair */
#include "pollux_ga.h"      /* the search: hb_pollux_search_packed */
#include "goodput.h"        /* hb_goodput_fitness, hb_goodput_restart_factor, exploration cap */
#include "policy.h"
#include "sim.h"

/* ---- knobs (pollux.md §3.2, §5.1; [ART] where marked) ------------------- */

#define POLLUX_ROUND_S 60.0        /* scheduling interval */
#define POLLUX_DELTA_S 30.0        /* delta of the re-allocation factor */
#define POLLUX_P (-1.0)            /* fairness knob (default harmonic mean) */
#define POLLUX_EPS 1e-3            /* [ART] added to every speedup (A5) */
#define POLLUX_MAX_NODES HB_POLLUX_MAX_NODES /* [ART] nodes one job may span */
#define POLLUX_SKIP_SPEEDUP_TOL 0.01 /* skipped rounds: relative SPEEDUP change per job */
#define POLLUX_SKIP_FACTOR_TOL 0.05  /* skipped rounds: re-allocation factor change per job */

/* The GA's random stream: HB_STREAM_SCHED is rng_agent's, so this one sets a
 * high bit to stay apart from it and from every other stream id. */
#define POLLUX_GA_STREAM ((uint64_t)HB_STREAM_POLLUX_SCHED)

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
	/* Sia fidelity: Sia's heterogeneity-unaware Pollux ("Sia's unaware
	 * view" at the top).  The search's columns are vn's vnodes. */
	int unaware;
	struct hb_vnodes vn;
	double *tflops;           /* per catalog GPU type: FP32 TFLOPS (the repair's tie) */
	int type_cap;             /* GPUs of the type with the fewest (max_num_replicas) */
	int **vrow;               /* per job id: its repaired vnode row (vn.n), NULL before its first */
	int nvrow;                /* entries of vrow */
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
	int type;                 /* GPU type of the fair share: the report's reference type, in
				     Sia's unaware view the first node's */
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

static void pollux_free(void *state);

/* Sia's unaware view: the vnodes, the types' ranks and GPU counts. */
static int unaware_init(struct hb_sim *sim, struct pollux_arb *st, struct hb_error *err)
{
	const struct hb_cluster *cl = sim->cl;
	int *per_type;

	st->unaware = 1;
	if (hb_vnodes_init(&st->vn, cl, err) < 0)
		return -1;
	st->tflops = calloc((size_t)(sim->cat->ngpus > 0 ? sim->cat->ngpus : 1), sizeof(double));
	st->vrow = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(*st->vrow));
	st->nvrow = sim->njobs;
	per_type = calloc((size_t)(sim->cat->ngpus > 0 ? sim->cat->ngpus : 1), sizeof(int));
	if (!st->tflops || !st->vrow || !per_type) {
		free(per_type);
		return hb_runtime_error(err, "pollux: out of memory");
	}
	for (int t = 0; t < sim->cat->ngpus; t++)
		st->tflops[t] = sim->cat->gpus[t].fp32_tflops;
	for (int n = 0; n < cl->nnodes; n++)
		per_type[cl->nodes[n].gpu] += cl->nodes[n].ngpus;
	st->type_cap = 0;
	for (int t = 0; t < sim->cat->ngpus; t++)
		if (per_type[t] > 0 && (st->type_cap == 0 || per_type[t] < st->type_cap))
			st->type_cap = per_type[t];
	free(per_type);
	return 0;
}

static int pollux_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct pollux_arb *st = calloc(1, sizeof(*st));
	int N = sim->cl->nnodes;
	size_t nj = (size_t)(sim->njobs > 0 ? sim->njobs : 1);

	(void)opts;
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
		return hb_runtime_error(err, "pollux: out of memory");
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
	*state = st;
	if (sim->opts.fidelity == HB_FIDELITY_SIA && unaware_init(sim, st, err) < 0) {
		pollux_free(st);
		*state = NULL;
		return -1;
	}
	return 0;
}

static int pollux_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct pollux_arb *st = state;

	(void)sim;
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
static int round_job_init(struct hb_sim *sim, const struct pollux_arb *st, struct round_job *rj, int njobs,
			  int *max_replicas, double *factor, struct hb_error *err)
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
	rj->type = rj->rep.ref_type;
	if (st->unaware) {
		/* Sia's unaware view: every vnode is the first node's type
		 * (ClusterUnaware.get_unaware_job_info reads applications["aws"],
		 * its first cluster), when the job can run there */
		int t = job->perf->nodes[0].gpu;

		if (rj->rep.types[t].usable)
			rj->type = t;
	}
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
		long ml = rj->rep.types[rj->type].min_local_bsz;
		int k0 = rj->fair_k;

		if (ml > 0 && rj->rep.limits.max_bsz / ml < k0)
			k0 = rj->rep.limits.max_bsz / ml > 1 ? (int)(rj->rep.limits.max_bsz / ml) : 1;
		for (int k = k0; k >= 1; k--) {
			struct hb_goodput_config c;

			if (hb_pollux_report_argmax(&rj->rep, rj->type, 1, k, &c, err) < 0)
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
	if (st->unaware)
		min_local = rj->rep.types[rj->type].min_local_bsz;
	lim = rj->rep.limits;
	lim.min_local_bsz = min_local;
	cap = hb_goodput_exploration_cap(rj->rep.max_replicas_seen, &lim);
	if (rj->rep.replica_cap > 0 && cap > rj->rep.replica_cap)
		cap = rj->rep.replica_cap;
	/* Sia's unaware view: at most the GPUs of the smallest type
	 * (multi_simulator_unaware.py max_num_replicas) */
	if (st->unaware && cap > st->type_cap)
		cap = st->type_cap;
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
		const int *m = st->fpacked + st->foff[i], *mc = HB_POLLUX_PK_CELLS(m, PJ);
		int *p = x + off[i], *pcells = HB_POLLUX_PK_CELLS(p, J), ncl = 0;

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
		off[i + 1] = off[i] + hb_pollux_packed_len(p, J);
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
		cur[j].grant_hash = hb_pollux_hash(rj->job->grant, (size_t)N);
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

/* Sia's unaware view: every vnode is a column, every round. */
static int unaware_columns(const struct pollux_arb *st, struct round *r)
{
	r->cols = malloc(sizeof(int) * (size_t)st->vn.n);
	r->node_col = malloc(sizeof(int) * (size_t)st->vn.n);
	if (!r->cols || !r->node_col)
		return -1;
	for (int k = 0; k < st->vn.n; k++)
		r->cols[k] = r->node_col[k] = k;
	r->ncols = st->vn.n;
	return 0;
}

/* A vnode's online GPUs: its node's, filled into the node's vnodes in
 * order (hb_vnodes_from_nodes's order). */
static int unaware_capacity(const struct hb_sim *sim, const struct pollux_arb *st, int k)
{
	int n = st->vn.node[k], left = hb_sim_node_online(sim, n) - (k - st->vn.first[n]) * st->vn.per;

	return left <= 0 ? 0 : left < st->vn.per ? left : st->vn.per;
}

/* The job's current vnode row: the repaired row it was given, while its
 * grant is still what that row says (a revocation changes it), else its
 * grant filled into vnodes.  tmp has the cluster's nodes. */
static void unaware_base(const struct hb_sim *sim, const struct pollux_arb *st, const struct hb_sim_job *job,
			 int *tmp, int *row)
{
	const int N = sim->cl->nnodes;
	const int *v = st->vrow[job->id];

	if (v) {
		hb_vnodes_to_nodes(&st->vn, v, N, tmp);
		if (memcmp(tmp, job->grant, sizeof(int) * (size_t)N) == 0) {
			memcpy(row, v, sizeof(int) * (size_t)st->vn.n);
			return;
		}
	}
	hb_vnodes_from_nodes(&st->vn, job->grant, N, row);
}

/* The search's answer repaired (pollux_vnodes.h) and kept per job, and
 * its node rows into full (J x nodes); returns the GPUs dropped. */
static long unaware_repair(const struct hb_sim *sim, struct pollux_arb *st, const struct round *r,
			   const int *best, int *full)
{
	const int N = sim->cl->nnodes, V = st->vn.n;
	long dropped = 0;

	for (int j = 0; j < r->njobs; j++) {
		const int id = r->jobs[j].job->id;

		if (!st->vrow[id] && !(st->vrow[id] = malloc(sizeof(int) * (size_t)V)))
			return -1;
		memcpy(st->vrow[id], best + (size_t)j * V, sizeof(int) * (size_t)V);
		dropped += hb_vnodes_drop_minority(&st->vn, st->tflops, st->vrow[id]);
		hb_vnodes_to_nodes(&st->vn, st->vrow[id], N, full + (size_t)j * N);
	}
	return dropped;
}

static int pollux_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct pollux_arb *st = state;
	struct round r = { sim, NULL, 0, NULL, 0, NULL };
	struct hb_pollux_problem pb;
	struct hb_pollux_result res = { 0 };
	struct hb_pollux_ga_opts ga;
	struct last_job *cur = NULL;
	int N = sim->cl->nnodes, *base = NULL, *maxr = NULL, *init = NULL, *capacity = NULL, *full = NULL;
	size_t *init_off = NULL; /* warm_start's offsets into init */
	int changed = 0, rc = -1, nc;
	double *factor = NULL;

	if (round_jobs(st, &r) < 0)
		return hb_runtime_error(err, "pollux: out of memory");
	if (r.njobs == 0) {
		round_free(&r);
		return 0;
	}
	st->rounds++;
	/* Sia's unaware view: each job first re-picks its batch, as the
	 * executor does after every step (Job.step, update_local_bsz) */
	for (int j = 0; st->unaware && j < r.njobs; j++)
		if (hb_pollux_agent_retune(sim, r.jobs[j].job, err) < 0)
			goto done;
	for (int j = 0; j < r.njobs; j++)
		r.jobs[j].attained = attained_service(sim, r.jobs[j].job);
	qsort(r.jobs, (size_t)r.njobs, sizeof(*r.jobs), cmp_service);

	maxr = malloc(sizeof(int) * (size_t)r.njobs);
	factor = malloc(sizeof(double) * (size_t)r.njobs);
	cur = malloc(sizeof(*cur) * (size_t)r.njobs);
	if (!maxr || !factor || !cur)
		goto oom;
	for (int j = 0; j < r.njobs; j++)
		if (round_job_init(sim, st, &r.jobs[j], r.njobs, &maxr[j], &factor[j], err) < 0)
			goto done;
	if ((st->unaware ? unaware_columns(st, &r) : choose_columns(st, &r, maxr)) < 0)
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
		capacity[k] = st->unaware ? unaware_capacity(sim, st, k) : hb_sim_node_online(sim, r.cols[k]);
	if (st->unaware) {
		if (!(full = malloc(sizeof(int) * (size_t)N)))
			goto oom;
		for (int j = 0; j < r.njobs; j++)
			unaware_base(sim, st, r.jobs[j].job, full, base + (size_t)j * nc);
		free(full);
		full = NULL;
	} else {
		for (int j = 0; j < r.njobs; j++)
			for (int k = 0; k < nc; k++)
				base[(size_t)j * nc + k] = r.jobs[j].job->grant[r.cols[k]];
	}
	for (int j = 0; j < r.njobs; j++) {
		const struct hb_perf_node *node = r.jobs[j].job->perf->nodes;

		r.jobs[j].col_type = malloc(sizeof(int) * (size_t)nc);
		if (!r.jobs[j].col_type)
			goto oom;
		for (int k = 0; k < nc; k++)
			r.jobs[j].col_type[k] = st->unaware ? r.jobs[j].type : node[r.cols[k]].gpu;
	}
	/* Sia's unaware view searches every round (the artifact does; its
	 * repair makes "kept every allocation" a vnode question) */
	if (!st->unaware && round_inputs(&r, maxr, factor, base, cur, err) < 0)
		goto done;
	if (!st->unaware && round_unchanged(st, cur, r.njobs)) {
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
	/* the whole cluster's, searched nodes or not; vnodes in the unaware view */
	pb.scale = (double)(st->unaware ? st->vn.n : N) / (double)sim->cl->ngpus;
	pb.max_nodes_per_job = POLLUX_MAX_NODES;
	pb.speedup = NULL; /* the search only needs cells */
	pb.speedup_cells = round_speedup_cells;
	pb.ctx = &r;
	pb.pool = sim->pool; /* round_speedup_cells allows it (round_job) */
	if (warm_start(st, &r, &init, &init_off) < 0)
		goto oom;
	hb_pollux_ga_opts_default(&ga);
	ga.max_cell_evals = hb_pollux_search_cells(N, pb.njobs, pb.nnodes, &ga);
	ga.bounded_raises = hb_pollux_bounded_raises(N);
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
	if (st->unaware) {
		long dropped = unaware_repair(sim, st, &r, res.best, full);

		if (dropped < 0)
			goto oom;
		if (dropped > 0)
			hb_sim_note(sim, NULL, "sched", "pollux: %ld GPUs of minority types dropped (Sia's unaware view)",
				    dropped);
	} else {
		for (int j = 0; j < r.njobs; j++)
			for (int k = 0; k < nc; k++)
				full[(size_t)j * N + r.cols[k]] = res.best[(size_t)j * nc + k];
	}
	if (apply_matrix(sim, &r, full, &changed, err) < 0)
		goto done;
	if (changed > 0)
		hb_sim_note(sim, NULL, "sched", "pollux: %d of %d jobs re-allocated, fitness %.6g, utility %.4g",
			    changed, r.njobs, res.fitness, res.utility);
	/* Remember what this search saw; a round that changed allocations is
	 * never the base of a skip (the next search may refine it).  Sia's
	 * unaware view never skips, and cur was not filled. */
	if (!st->unaware) {
		free(st->last);
		st->last = cur;
		cur = NULL;
		st->last_njobs = r.njobs;
		st->last_settled = changed == 0;
	}
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

static double pollux_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return POLLUX_ROUND_S;
}

static void pollux_free(void *state)
{
	struct pollux_arb *st = state;

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
		if (st->vrow)
			for (int j = 0; j < st->nvrow; j++)
				free(st->vrow[j]);
		free(st->vrow);
		free(st->tflops);
		hb_vnodes_free(&st->vn);
		free(st);
	}
}

/* Busy GPUs are withdrawn (need[i] beyond node i's free ones): the jobs
 * there, most recently started first, give them up and run on the rest
 * (header); the engine preempts whoever is left with none. */
static int pollux_revoke(struct hb_sim *sim, void *state, const int *need, struct hb_error *err)
{
	struct pollux_arb *st = state;
	int N = sim->cl->nnodes, *left, *grant, *done, rc = 0;

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
static int pollux_capacity(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct pollux_arb *st = state;

	(void)sim;
	(void)err;
	st->last_settled = 0;
	return 0;
}

const struct hb_arbiter_ops hb_arbiter_pollux = {
	.name = "pollux",
	.summary = "PolluxSched: 60 s rounds, NSGA-II over allocation matrices maximising the p = -1 power mean "
		   "of goodput speedups",
	.init = pollux_init,
	.free = pollux_free,
	.on_arrival = pollux_arrival,
	.on_finish = NULL,
	.round_s = pollux_round_s,
	.on_round = pollux_round,
	.on_revoke = pollux_revoke,
	.on_requeue = hb_arbiter_requeue_round, /* a preempted job stays active: the next round places it */
	.on_capacity = pollux_capacity,
};
