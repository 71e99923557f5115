/*
 * arbiter_optimus.c: Optimus with an oracle, the Optimus+Oracle+TunedJobs
 * baseline of Pollux's study (notes/pollux.md §6).
 *
 * Pollux replaces Optimus's parameter-server model with a throughput model
 * and its convergence-curve fit with an oracle that knows how many
 * iterations each job still needs; the job keeps its batch size and Optimus
 * chooses its GPU count (the GPU count a job requests, hb_sim_job_request,
 * is ignored; its requested batch is kept).  The throughput model here is
 * the simulator's ground truth, as in the artifact, which reads the true
 * profile (§8.2 A8): the iteration time at k GPUs is hb_ddp_plan's on the
 * job's perf model for the job's fixed batch (what the static agent will
 * run), and the oracle's remaining iterations come from the simulator's own
 * convergence model (sim/stats.h) from the job's progress now, epoch by
 * epoch with the noise scale frozen at each epoch start, as the simulator
 * advances a static job.  The remaining time at k GPUs is
 * R(k) = remaining iterations(B_k) x T_iter(k), B_k being the batch the DDP
 * plan realises on k GPUs (it equals the requested batch unless the local
 * batch has to be rounded to a multiple of minB_L).
 *
 * Every 60 s round (pollux.md §4.3): each active job (arrived, not done), in
 * arrival order, first gets one GPU while GPUs remain; the rest go one at a
 * time to the job with the largest marginal gain R(k) - R(k+1), i.e.
 * (T(k) - T(k+1)) x remaining iterations when the batch is the same at k
 * and k+1 (§6 [ART]), ties to the lower job id, until no gain is positive or
 * no GPU is left.  A job may hold at most B / minB_L GPUs (the artifact's
 * M / min_local_bsz) and at most the cluster.  The greedy minimises the sum
 * of remaining times exactly when each R is convex in k; otherwise it stops
 * at the first GPU that does not pay, as the artifact's does.
 *
 * The iteration time is evaluated on a canonical placement: k GPUs packed on
 * the fewest nodes of the empty cluster (largest nodes first, ties to the
 * lower index, as hb_sim_place fills an empty cluster), as the artifact
 * predicts on packed 4-GPU nodes whatever the job's real placement.
 *
 * Applying a round: jobs whose count is unchanged keep their GPUs.  Jobs
 * that drop to zero are preempted (suspended, progress kept), jobs that
 * shrink keep GPUs on the nodes where they hold most, and then jobs that
 * grow, smallest new count first (§6 [ART]; ties by id), are placed on the
 * nodes with the most GPUs free counting their own.  Shrinking first makes
 * every growth fit.  The simulator charges each change as a restart (the
 * first start of a job is free); the artifact instead re-places every
 * changed job from scratch, which gives the same counts.  Arrivals and
 * completions wait for the next round, as in the artifact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"    /* hb_agent_fid_iter_s */
#include "arbiter_util.h"  /* hb_arbiter_oracle_iters, hb_arbiter_progress_now */
#include "ddp.h"           /* hb_ddp_plan: iteration time and realised batch at k GPUs */
#include "fidelity.h"
#include "policy.h"
#include "sim.h"

#define OPTIMUS_ROUND_S 60.0   /* scheduling interval, pollux.md §5.1 */
#define OPTIMUS_MEMO 8         /* oracle iteration counts remembered per job and round */

struct optimus_job {
	int count;             /* GPUs decided this round */
	int max_gpus;          /* B / minB_L, at most the cluster */
	double r_now;          /* R(count), s */
	double r_next;         /* R(count + 1), s; INFINITY when not allowed */
	double progress;       /* progress now (M0-equivalent samples) */
	double epoch_samples;  /* samples into the current epoch now */
	double fid_iters;      /* Pollux fidelity: the artifact's remaining iterations (any k) */
	long memo_b[OPTIMUS_MEMO];      /* realised batches already evaluated this round */
	double memo_iters[OPTIMUS_MEMO];/* their remaining iterations */
	int nmemo;             /* entries of the memo used (round robin when full) */
};

/* The DDP plan of one (perf model, batch) on the canonical k-GPU
 * allocation, for every k evaluated so far: it depends on nothing else, so
 * it is computed once per run rather than in every round (a trace replay
 * on a large cluster spent most of its time re-planning). */
struct plan_memo {
	const struct hb_perf *perf;
	long batch;
	int cap;               /* entries of the arrays (k = 0..cap-1) */
	signed char *state;    /* per k: 0 not planned, 1 found, -1 no plan */
	long *global_bs;       /* per k: realised batch */
	double *iter_s;        /* per k: iteration time, s */
};

struct optimus_state {
	int *order;            /* arrived job ids in arrival order; done jobs dropped each round */
	int n;                 /* entries of order */
	int njobs;             /* size of jobs[] (sim->njobs at creation) */
	struct optimus_job *jobs; /* per job id */
	int *canon;            /* node indices in canonical fill order */
	int *alloc;            /* scratch, nnodes */
	int *grant;            /* scratch, nnodes */
	long *keys;            /* scratch, njobs: growing jobs sorted by (count, id) */
	struct plan_memo *memo; /* DDP plans per (perf, batch), owned */
	int nmemo, cap_memo;
};

static void optimus_free(void *state)
{
	struct optimus_state *st = state;

	if (st) {
		free(st->order);
		free(st->jobs);
		free(st->canon);
		free(st->alloc);
		free(st->grant);
		free(st->keys);
		for (int i = 0; i < st->nmemo; i++) {
			free(st->memo[i].state);
			free(st->memo[i].global_bs);
			free(st->memo[i].iter_s);
		}
		free(st->memo);
		free(st);
	}
}

static int optimus_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct optimus_state *st = calloc(1, sizeof(*st));
	size_t nj = (size_t)(sim->njobs > 0 ? sim->njobs : 1), nn = (size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1);
	int nnodes = sim->cl->nnodes;

	(void)opts;
	if (st) {
		st->order = calloc(nj, sizeof(int));
		st->jobs = calloc(nj, sizeof(*st->jobs));
		st->canon = calloc(nn, sizeof(int));
		st->alloc = calloc(nn, sizeof(int));
		st->grant = calloc(nn, sizeof(int));
		st->keys = calloc(nj, sizeof(long));
		st->njobs = sim->njobs;
	}
	if (!st || !st->order || !st->jobs || !st->canon || !st->alloc || !st->grant || !st->keys) {
		optimus_free(st);
		return hb_runtime_error(err, "optimus: out of memory");
	}
	/* Canonical order: by GPU count, descending, ties to the lower index. */
	for (int i = 0; i < nnodes; i++) {
		int k = i;

		while (k > 0 && sim->cl->nodes[st->canon[k - 1]].ngpus < sim->cl->nodes[i].ngpus) {
			st->canon[k] = st->canon[k - 1];
			k--;
		}
		st->canon[k] = i;
	}
	*state = st;
	return 0;
}

static long job_batch(const struct hb_sim_job *job)
{
	return job->req_batch > 0 ? job->req_batch : job->min_gbs;
}

/* k GPUs packed on the fewest nodes of the empty cluster. */
static void canonical_alloc(const struct hb_sim *sim, const struct optimus_state *st, int k, int *alloc)
{
	memset(alloc, 0, sizeof(int) * (size_t)sim->cl->nnodes);
	for (int i = 0; i < sim->cl->nnodes && k > 0; i++) {
		int node = st->canon[i], take = sim->cl->nodes[node].ngpus < k ? sim->cl->nodes[node].ngpus : k;

		alloc[node] = take;
		k -= take;
	}
}

/* Pollux fidelity (optimus.py): the step time at k is the artifact's true
 * one on k GPUs packed 4 to a node, with its batch rule (at least one extra
 * micro-step on one GPU: predict_step_time); the oracle's iterations are
 * hb_arbiter_fid_iters'. */
static double fid_step_s(const struct hb_sim *sim, struct optimus_state *st, const struct hb_sim_job *job, int k)
{
	int atomic, accum;
	double t;
	struct hb_error ignored;

	canonical_alloc(sim, st, k, st->alloc);
	hb_fid_batch(job_batch(job), k, job->fid->max_local, job->max_gbs, 0, &atomic, &accum);
	return hb_agent_fid_iter_s(job, st->alloc, 0, atomic, accum, &t, NULL, &ignored) == 0 ? t : INFINITY;
}

/* The DDP plan of job's batch on the canonical k-GPU allocation, memoised
 * (struct plan_memo): *found, and *global_bs, *iter_s when found. */
static int canonical_plan(const struct hb_sim *sim, struct optimus_state *st, const struct hb_sim_job *job, int k,
			  int *found, long *global_bs, double *iter_s, struct hb_error *err)
{
	struct plan_memo *m = NULL;
	struct hb_ddp_result r;
	long b = job_batch(job);

	for (int i = 0; i < st->nmemo && !m; i++)
		if (st->memo[i].perf == job->perf && st->memo[i].batch == b)
			m = &st->memo[i];
	if (!m) {
		if (st->nmemo == st->cap_memo) {
			int cap = st->cap_memo ? 2 * st->cap_memo : 16;
			struct plan_memo *nm = realloc(st->memo, sizeof(*nm) * (size_t)cap);

			if (!nm)
				return hb_runtime_error(err, "optimus: out of memory");
			st->memo = nm;
			st->cap_memo = cap;
		}
		m = &st->memo[st->nmemo++];
		memset(m, 0, sizeof(*m));
		m->perf = job->perf;
		m->batch = b;
	}
	if (k >= m->cap) {
		int cap = sim->cl->ngpus + 2;
		signed char *ns = realloc(m->state, (size_t)cap);
		long *ng;
		double *ni;

		if (ns)
			m->state = ns;
		ng = realloc(m->global_bs, sizeof(long) * (size_t)cap);
		if (ng)
			m->global_bs = ng;
		ni = realloc(m->iter_s, sizeof(double) * (size_t)cap);
		if (ni)
			m->iter_s = ni;
		if (!ns || !ng || !ni || k >= cap)
			return hb_runtime_error(err, "optimus: out of memory (or %d GPUs on a %d-GPU cluster)", k,
						sim->cl->ngpus);
		memset(m->state + m->cap, 0, (size_t)(cap - m->cap));
		m->cap = cap;
	}
	if (m->state[k] == 0) {
		canonical_alloc(sim, st, k, st->alloc);
		if (hb_ddp_plan(job->perf, st->alloc, b, &r, err) < 0) {
			hb_error_prefix(err, "optimus: job %s on %d GPUs", job->name, k);
			return -1;
		}
		m->state[k] = r.found ? 1 : -1;
		m->global_bs[k] = r.global_bs;
		m->iter_s[k] = r.iter_s;
	}
	*found = m->state[k] == 1;
	*global_bs = m->global_bs[k];
	*iter_s = m->iter_s[k];
	return 0;
}

/* R(k): the oracle's remaining time of the job on k GPUs, s (INFINITY when
 * no DDP plan fits the GPUs). */
static int remaining_s(const struct hb_sim *sim, struct optimus_state *st, const struct hb_sim_job *job, int k,
		       double *out, struct hb_error *err)
{
	struct optimus_job *oj = &st->jobs[job->id];
	double iters = -1.0, iter_s;
	long gbs;
	int found;

	if (job->fid_agents) {
		*out = fid_step_s(sim, st, job, k) * oj->fid_iters;
		return 0;
	}
	if (canonical_plan(sim, st, job, k, &found, &gbs, &iter_s, err) < 0)
		return -1;
	if (!found) {
		*out = INFINITY;
		return 0;
	}
	for (int m = 0; m < oj->nmemo && m < OPTIMUS_MEMO; m++)
		if (oj->memo_b[m] == gbs)
			iters = oj->memo_iters[m];
	if (iters < 0) {
		int slot = oj->nmemo % OPTIMUS_MEMO;

		iters = hb_arbiter_oracle_iters(job, gbs, oj->progress, oj->epoch_samples);
		oj->memo_b[slot] = gbs;
		oj->memo_iters[slot] = iters;
		oj->nmemo++;
	}
	*out = iters * iter_s;
	return 0;
}

/* Evaluate R(count + 1) for the next greedy step. */
static int refresh_next(const struct hb_sim *sim, struct optimus_state *st, const struct hb_sim_job *job,
			struct hb_error *err)
{
	struct optimus_job *oj = &st->jobs[job->id];

	if (oj->count + 1 > oj->max_gpus) {
		oj->r_next = INFINITY;
		return 0;
	}
	return remaining_s(sim, st, job, oj->count + 1, &oj->r_next, err);
}

static double gain(const struct optimus_job *oj)
{
	return oj->count > 0 && isfinite(oj->r_now) && oj->r_next < oj->r_now ? oj->r_now - oj->r_next : 0.0;
}

/* Decide every active job's GPU count for this round (st->jobs[].count). */
static int allocate(struct hb_sim *sim, struct optimus_state *st, struct hb_error *err)
{
	int left = hb_sim_online_gpus(sim); /* less what a capacity series withdrew */

	for (int i = 0; i < st->n; i++) {
		struct hb_sim_job *job = &sim->jobs[st->order[i]];
		struct optimus_job *oj = &st->jobs[job->id];
		long cap = job_batch(job) / (job->perf->min_lbs > 0 ? job->perf->min_lbs : 1);

		oj->nmemo = 0;
		oj->max_gpus = (int)(cap < 1 ? 1 : cap > sim->cl->ngpus ? sim->cl->ngpus : cap);
		if (job->fid_agents) {
			oj->fid_iters = hb_arbiter_fid_iters(job, job_batch(job));
			/* simulator.py get_optimus_job_info pins NCF to one replica. */
			if (job->fid->pinned_batch > 0)
				oj->max_gpus = 1;
		}
		oj->count = left > 0 ? 1 : 0;
		oj->r_now = oj->r_next = INFINITY;
		left -= oj->count;
		if (oj->count == 0)
			continue;
		hb_arbiter_progress_now(sim, job, &oj->progress, &oj->epoch_samples);
		if (remaining_s(sim, st, job, 1, &oj->r_now, err) < 0 || refresh_next(sim, st, job, err) < 0)
			return -1;
		if (!isfinite(oj->r_now))
			return hb_input_error(err, "optimus: job %s (model %s, B_G %ld) has no DDP plan on one GPU "
					      "of %s", job->name, job->model->name, job_batch(job), sim->cl->name);
	}
	while (left > 0) {
		int best = -1;
		double gbest = 0.0;

		for (int i = 0; i < st->n; i++) {
			int id = st->order[i];
			double g = gain(&st->jobs[id]);

			if (g > 0 && (best < 0 || g > gbest || (g == gbest && id < best))) {
				best = id;
				gbest = g;
			}
		}
		if (best < 0)
			break;
		st->jobs[best].count++;
		st->jobs[best].r_now = st->jobs[best].r_next;
		left--;
		if (refresh_next(sim, st, &sim->jobs[best], err) < 0)
			return -1;
	}
	return 0;
}

/* A shrinking job keeps its GPUs on the nodes where it holds most. */
static void shrink_grant(const struct hb_sim *sim, const struct hb_sim_job *job, int n, int *grant)
{
	int nn = sim->cl->nnodes;

	memset(grant, 0, sizeof(int) * (size_t)nn);
	while (n > 0) {
		int best = -1;

		for (int i = 0; i < nn; i++)
			if (grant[i] == 0 && job->grant[i] > 0 && (best < 0 || job->grant[i] > job->grant[best]))
				best = i;
		if (best < 0)
			return; /* n exceeds what the job holds: not a shrink */
		grant[best] = job->grant[best] < n ? job->grant[best] : n;
		n -= grant[best];
	}
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Pollux fidelity (optimus.py): every job whose count changed is placed
 * anew, smallest count first (ties in job order), on the nodes with the
 * most GPUs free, after all of them have let their GPUs go; jobs whose
 * count did not change keep theirs.  The release is a momentary suspension
 * here (counted as a preemption), the new grant a restart, as the
 * artifact's reallocate counts it. */
static int apply_fid(struct hb_sim *sim, struct optimus_state *st, struct hb_error *err)
{
	int nchg = 0;

	for (int i = 0; i < st->n; i++) {
		struct hb_sim_job *job = &sim->jobs[st->order[i]];
		int want = st->jobs[job->id].count;

		if (want == job->ngrant)
			continue;
		if (job->ngrant > 0) {
			memset(st->grant, 0, sizeof(int) * (size_t)sim->cl->nnodes);
			if (hb_sim_regrant(sim, job, st->grant, err) < 0)
				return -1;
		}
		if (want > 0)
			st->keys[nchg++] = (long)want * st->njobs + job->id;
	}
	qsort(st->keys, (size_t)nchg, sizeof(long), cmp_long);
	for (int g = 0; g < nchg; g++) {
		struct hb_sim_job *job = &sim->jobs[st->keys[g] % st->njobs];
		int want = st->jobs[job->id].count, rc;

		if (!hb_sim_place(sim, want, st->grant))
			return hb_runtime_error(err, "optimus: %d GPUs decided for job %s are not free", want,
						job->name);
		hb_sim_note(sim, job, "resize", "optimus: %d GPUs, oracle remaining %.0f s", want,
			    st->jobs[job->id].r_now);
		rc = job->state == HB_JOB_PENDING ? hb_sim_start_job(sim, job, st->grant, err)
						  : hb_sim_regrant(sim, job, st->grant, err);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int apply(struct hb_sim *sim, struct optimus_state *st, struct hb_error *err)
{
	int ngrow = 0;

	if (sim->opts.fidelity == HB_FIDELITY_POLLUX)
		return apply_fid(sim, st, err);

	/* Preempt and shrink first: what they free is what the growing jobs take. */
	for (int i = 0; i < st->n; i++) {
		struct hb_sim_job *job = &sim->jobs[st->order[i]];
		int want = st->jobs[job->id].count;

		if (want == job->ngrant)
			continue;
		if (want > job->ngrant) {
			st->keys[ngrow++] = (long)want * st->njobs + job->id;
			continue;
		}
		hb_sim_note(sim, job, "resize", "optimus: %d -> %d GPUs, oracle remaining %.0f s", job->ngrant, want,
			    st->jobs[job->id].r_now);
		shrink_grant(sim, job, want, st->grant);
		if (hb_sim_regrant(sim, job, st->grant, err) < 0)
			return -1;
	}
	qsort(st->keys, (size_t)ngrow, sizeof(long), cmp_long);
	for (int g = 0; g < ngrow; g++) {
		struct hb_sim_job *job = &sim->jobs[st->keys[g] % st->njobs];
		int want = st->jobs[job->id].count, placed, rc;

		/* Place on the free pool plus the job's own GPUs: lend them to the
		 * pool for hb_sim_place, the simulator's fewest-nodes rule. */
		for (int i = 0; i < sim->cl->nnodes; i++)
			sim->free_gpus[i] += job->grant[i];
		placed = hb_sim_place(sim, want, st->grant);
		for (int i = 0; i < sim->cl->nnodes; i++)
			sim->free_gpus[i] -= job->grant[i];
		if (!placed)
			return hb_runtime_error(err, "optimus: %d GPUs decided for job %s are not free", want,
						job->name);
		hb_sim_note(sim, job, "resize", "optimus: %d -> %d GPUs, oracle remaining %.0f s", job->ngrant, want,
			    st->jobs[job->id].r_now);
		if (job->state == HB_JOB_PENDING)
			rc = hb_sim_start_job(sim, job, st->grant, err);
		else
			rc = hb_sim_regrant(sim, job, st->grant, err);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int optimus_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct optimus_state *st = state;

	(void)sim;
	if (job->id < 0 || job->id >= st->njobs || st->n >= st->njobs)
		return hb_runtime_error(err, "optimus: job %s (id %d) was added after the run started", job->name,
					job->id);
	if (job_batch(job) <= 0)
		return hb_input_error(err, "optimus: job %s has no batch size (B_G %ld)", job->name, job_batch(job));
	st->order[st->n++] = job->id;
	return 0; /* it waits for the next round */
}

static double optimus_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return OPTIMUS_ROUND_S;
}

static int optimus_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct optimus_state *st = state;
	int k = 0;

	for (int i = 0; i < st->n; i++)
		if (sim->jobs[st->order[i]].state != HB_JOB_DONE)
			st->order[k++] = st->order[i];
	st->n = k;
	if (allocate(sim, st, err) < 0)
		return -1;
	return apply(sim, st, err);
}

const struct hb_arbiter_ops hb_arbiter_optimus = {
	.name = "optimus",
	.summary = "Optimus+Oracle: GPUs one at a time by marginal gain in oracle remaining time, fixed batch, "
		   "60 s rounds",
	.init = optimus_init,
	.free = optimus_free,
	.on_arrival = optimus_arrival,
	.on_finish = NULL,   /* freed GPUs are reassigned at the next round */
	.round_s = optimus_round_s,
	.on_round = optimus_round,
	.on_requeue = hb_arbiter_requeue_round, /* a preempted job stays in its order: the next round decides */
};
