/*
 * arbiter_elastic.c: the IBM elastic autoscaler (Saxena et al., MASCOTS
 * 2020; notes/elastic.md §4) as a cluster arbiter, with the JSA input built
 * from the simulator's perf model (elastic_share.h).
 *
 * MAKESCALINGDECISIONS runs every interval_s (Δ, elastic_opts.h) and does
 * work only when a job arrived or finished since the last round (§4 "When it
 * triggers"; Fig. 4 tests "ARRIVED != {} or FINISHED != {}", and with a
 * non-empty queue but no arrival or departure the DP would see the same
 * inputs and return the same allocation, so the two tests decide the same).
 * Arrivals and departures wait for the next tick, so a running job grows
 * after a departure only at the next Δ.  A round is the note's "Corrected
 * version" of Fig. 4:
 *
 *   EXECUTING <- EXECUTING \ FINISHED
 *   admit the head of ARRIVED while the DP over EXECUTING ∪ {head} is
 *   feasible (FIFO, one at a time, head-of-line stop: no backfilling)
 *   alloc <- the DP over EXECUTING (re-spread after departures when nothing
 *   was admitted)
 *   apply alloc; in drop mode reject what is left in ARRIVED
 *
 * which is hb_elastic_admit (solver/elastic.h) on the jobs' S_j tables, in
 * admission order (the DP's tie rule gives the extra GPUs of a tie to the
 * earliest jobs).
 *
 * Drop mode (elastic_opts.h drop): every job still in ARRIVED after the
 * admission loop is rejected at the tick (hb_sim_drop_job), not only the
 * first infeasible one.  The note leaves both open (§4 "Queueing policy",
 * §8.2 item 8); the paper drops "pending jobs (which are not feasible to
 * accommodate) after Step 23", i.e. after the loop, and under head-of-line
 * FIFO every job behind the first infeasible one was not accommodated
 * either; keeping them would be queue mode.  Queue mode keeps them in order
 * for the next tick.  A job that cannot run even alone on the empty cluster
 * (no feasible k) would block the queue forever: queue mode rejects the
 * trace with an input error at its arrival, drop mode drops it at the tick.
 *
 * Applying an allocation (placement is ours, the DP sees K interchangeable
 * GPUs, §1): a running job whose GPU count did not change keeps its GPUs and
 * is not touched (its JSA batch for that count is unchanged too).  Jobs that
 * shrink keep GPUs on the nodes where they hold most (ties to the lower
 * index).  Then jobs that grow and the admitted jobs are placed, largest
 * count first (ties by admission order), by hb_sim_place on the free pool
 * plus their own GPUs: fewest nodes, nodes with most free GPUs first.  A
 * gang may span nodes, so every count vector with Σ k_j <= K is placeable:
 * shrinking first frees at least what every later growth needs (each grower
 * holds less than it gets, so the GPUs not yet placed always cover it).
 * Fragmentation therefore never makes an allocation infeasible; it only
 * spreads a gang over more nodes, which the simulator's ground truth charges
 * as slower inter-node all-reduce while the JSA assumed the packed layout.
 *
 * Δ <= 0 selects the event-driven variant (§8.1 item 4, the simulator of
 * III-E, which has only arrival and completion events): the decision runs at
 * every arrival and every departure instead of at ticks, so in drop mode a
 * job the optimizer cannot admit is rejected on arrival (§8.2 item 8).
 *
 * The same arbiter runs the IV-B fixed-batch baseline (policy elastic-fixed
 * and its variants): "the same DP optimizer, every Δ" with each job's S_j(k)
 * at its fixed batch.  The difference is in the entries (elastic_share.h),
 * which carry the batch the job's agent fixes (hb_elastic_fixed_batch).
 *
 * Capacity that comes and goes (sim --capacity, capacity.h): the DP's K is
 * the GPUs online at the round (hb_sim_online_gpus), not the cluster's, and
 * placement sees only online GPUs (withdrawn ones are out of the free pool).
 * On a withdrawal of busy GPUs (on_revoke) the jobs holding GPUs on the
 * revoked nodes, most recently started first, give up what is needed there
 * and run on at the largest GPU count at most what they keep that their
 * S_j table makes feasible (for a fixed-count job that is its one count or
 * nothing; elastic-fixed jobs keep their fixed batch and shrink their
 * count, which IV-B's DP does every Δ anyway); a job with no such count is
 * left to the engine, which preempts it.  A preempted job (on_requeue)
 * leaves EXECUTING and goes back to the head of ARRIVED in arrival order
 * (it arrived before every job still waiting, FIFO), keeps its progress,
 * and is readmitted by a later round's trial admission; drop mode never
 * drops it (it was admitted once: dropping would discard its work, which
 * the paper's drop rule, about jobs never accommodated, does not cover).
 * Every withdrawal or return marks the round dirty, so the next tick
 * (event-driven: at once) re-spreads over the new K.
 *
 * Rescaling cost: every changed job is regranted (hb_sim_regrant), which
 * the simulator charges as a checkpoint-restart, the halt/resume of §1.
 * IBM's own simulator does not model this cost (§5 "What it does not
 * model", §8.2 item 16); we do, which is the gap its validation reports.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"     /* hb_agent_alloc_all */
#include "ddp.h"            /* hb_ddp_iter_time: one-GPU processing profile */
#include "elastic_opts.h"   /* hb_elastic_opts: Delta, drop mode */
#include "elastic_share.h"
#include "policy.h"

/* ---- the JSA input from the perf model (elastic_share.h) --------------------- */

void hb_elastic_entry_free(struct hb_elastic_entry *e)
{
	if (e)
		hb_elastic_scaling_free(&e->sc);
}

/* Fixed GPU count of a job that is not elastic in batch (elastic_share.h):
 * the fewest GPUs that run b as k x a profiled per-GPU batch; k_max + 1
 * when none does. */
static int fixed_count(long b_min, long b_max, const double *bs, int n, int kmax)
{
	if (b_min != b_max)
		return 0;
	for (int k = 1; k <= kmax; k++)
		for (int i = 0; i < n; i++)
			if ((long)bs[i] * k == b_max)
				return k;
	return kmax + 1;
}

int hb_elastic_entry_matches(const struct hb_elastic_entry *e, const struct hb_sim *sim,
			     const struct hb_sim_job *job)
{
	return e->model == job->model && e->b_min == job->min_gbs && e->b_max == job->max_gbs &&
	       e->b_fixed == hb_elastic_fixed_batch(sim, job);
}

/* Canonical placement of k GPUs: fewest nodes of the empty cluster, largest
 * nodes first, ties to the lower index (order holds the node order). */
static void canonical(const struct hb_perf *perf, const int *order, int k, int *alloc)
{
	memset(alloc, 0, sizeof(int) * (size_t)perf->nnodes);
	for (int i = 0; i < perf->nnodes && k > 0; i++) {
		int n = order[i], take = perf->nodes[n].ngpus < k ? perf->nodes[n].ngpus : k;

		alloc[n] = take;
		k -= take;
	}
}

/* 1 when nodes a and b have the same all-reduce fits: hb_perf_comm_eval
 * then gives them the same time on any allocation (it reads only the
 * node's fit and the allocation's GPU and node counts). */
static int same_fits(const struct hb_perf_ar *a, const struct hb_perf_ar *b)
{
	return a->have == b->have && a->alpha == b->alpha && a->beta_ms == b->beta_ms && a->k_bw == b->k_bw;
}

/* AllReduce of all the model's buckets on alloc: the slowest node's sum.
 * Nodes whose fits an earlier used node shares are skipped: on a large
 * cluster that is nearly all of them. */
static int allreduce_s(const struct hb_perf *perf, const int *alloc, double *out, struct hb_error *err)
{
	int seen[8], nseen = 0;

	*out = 0.0;
	for (int i = 0; i < perf->nnodes; i++) {
		struct hb_perf_comm c;
		int dup = 0;

		if (alloc[i] == 0)
			continue;
		for (int k = 0; k < nseen && !dup; k++)
			dup = same_fits(&perf->nodes[seen[k]].intra, &perf->nodes[i].intra) &&
			      same_fits(&perf->nodes[seen[k]].inter, &perf->nodes[i].inter);
		if (dup)
			continue;
		if (nseen < 8)
			seen[nseen++] = i;
		if (hb_perf_comm_eval(perf, alloc, i, &c, err) < 0)
			return -1;
		if (c.overlap_s + c.last_s > *out)
			*out = c.overlap_s + c.last_s;
	}
	return 0;
}

/* One-GPU profile on the slowest GPU type: bs[i] the candidate per-GPU
 * batches, t[i] the largest one-GPU DDP time over the types present. */
static int proc_profile(const struct hb_perf *perf, int *all, int *one, double **bs, double **t, int *n,
			struct hb_error *err)
{
	int *lbs = NULL, nl = 0, rc = -1;

	*bs = *t = NULL;
	*n = 0;
	hb_agent_alloc_all(perf, all);
	if (hb_perf_alloc_lbs(perf, all, &lbs, &nl, err) < 0)
		return -1;
	if (nl == 0) {
		free(lbs);
		return hb_input_error(err, "elastic JSA: model %s: no local batch fits every GPU type of the cluster",
				      perf->model);
	}
	*bs = malloc(sizeof(double) * (size_t)nl);
	*t = malloc(sizeof(double) * (size_t)nl);
	if (!*bs || !*t) {
		hb_runtime_error(err, "elastic JSA: out of memory");
		goto done;
	}
	for (int i = 0; i < nl; i++) {
		double worst = 0.0;

		for (int nd = 0; nd < perf->nnodes; nd++) {
			double s;
			int seen = 0;

			/* One representative node per GPU type. */
			for (int p = 0; p < nd && !seen; p++)
				seen = perf->nodes[p].gpu == perf->nodes[nd].gpu;
			if (seen || perf->nodes[nd].ngpus < 1)
				continue;
			memset(one, 0, sizeof(int) * (size_t)perf->nnodes);
			one[nd] = 1;
			if (hb_ddp_iter_time(perf, one, lbs[i], 0, &s, NULL, err) < 0)
				goto done;
			if (s > worst)
				worst = s;
		}
		(*bs)[i] = (double)lbs[i];
		(*t)[i] = worst;
	}
	*n = nl;
	rc = 0;
done:
	free(lbs);
	if (rc < 0) {
		free(*bs);
		free(*t);
		*bs = *t = NULL;
	}
	return rc;
}

int hb_elastic_entry_build(const struct hb_sim *sim, const struct hb_sim_job *job, struct hb_elastic_entry *e,
			   struct hb_error *err)
{
	const struct hb_perf *perf = job->perf;
	size_t nn = (size_t)(perf->nnodes > 0 ? perf->nnodes : 1);
	int *all = calloc(nn, sizeof(int)), *one = calloc(nn, sizeof(int)), *order = calloc(nn, sizeof(int));
	double *bs = NULL, *tp = NULL, *tc = NULL, params = job->model->params;
	struct hb_elastic_comm comm;
	struct hb_elastic_job ej;
	int n = 0, K = sim->cl->ngpus, rc = -1, kmax;
	long cap;

	memset(e, 0, sizeof(*e));
	e->model = job->model;
	e->b_min = job->min_gbs;
	e->b_max = job->max_gbs;
	e->b_fixed = hb_elastic_fixed_batch(sim, job);
	e->min_lbs = perf->min_lbs > 0 ? perf->min_lbs : 1;
	if (!all || !one || !order) {
		hb_runtime_error(err, "elastic JSA: out of memory");
		goto done;
	}
	if (!(params > 0)) {
		hb_input_error(err, "elastic JSA: model %s: parameter count %g, need > 0", job->model->name, params);
		goto done;
	}
	if (e->b_min < 1 || e->b_max < e->b_min) {
		hb_input_error(err, "elastic JSA: job %s: batch range [%ld, %ld] on %s is empty", job->name, e->b_min,
			       e->b_max, sim->cl->name);
		goto done;
	}
	if (K < 1) {
		hb_input_error(err, "elastic JSA: cluster %s has no GPU", sim->cl->name);
		goto done;
	}
	if (proc_profile(perf, all, one, &bs, &tp, &n, err) < 0) {
		hb_error_prefix(err, "job %s on %s", job->name, sim->cl->name);
		goto done;
	}
	/* c_j: the model's own per-GPU limit when its study gives one (the
	 * catalog's max_lbs; IBM category 1: 32, Table II), else memory's. */
	while (job->model->max_lbs > 0 && n > 1 && bs[n - 1] > (double)job->model->max_lbs)
		n--;
	if (job->model->max_lbs > 0 && bs[0] > (double)job->model->max_lbs) {
		hb_input_error(err, "elastic JSA: job %s: model %s's per-GPU limit %ld is below its smallest per-GPU batch "
			       "%.0f", job->name, job->model->name, job->model->max_lbs, bs[0]);
		goto done;
	}
	e->per_gpu_max = (long)bs[n - 1];
	cap = (e->b_fixed > 0 ? e->b_fixed : e->b_max) / e->min_lbs;
	kmax = (int)(cap < 1 ? 1 : cap < K ? cap : K);
	e->k_max = kmax;
	e->k_only = fixed_count(e->b_min, e->b_max, bs, n, kmax);

	/* t^comm(p_j, k), k = 1..k_max, on the canonical placement. */
	for (int i = 0; i < perf->nnodes; i++) {
		int k = i;

		while (k > 0 && perf->nodes[order[k - 1]].ngpus < perf->nodes[i].ngpus) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
	}
	tc = malloc(sizeof(double) * (size_t)kmax);
	if (!tc) {
		hb_runtime_error(err, "elastic JSA: out of memory");
		goto done;
	}
	tc[0] = 0.0;
	for (int k = 2; k <= kmax; k++) {
		canonical(perf, order, k, all);
		if (allreduce_s(perf, all, &tc[k - 1], err) < 0) {
			hb_error_prefix(err, "elastic JSA: job %s, all-reduce on %d GPUs", job->name, k);
			goto done;
		}
	}
	comm.params = &params;
	comm.nparams = 1;
	comm.time_s = tc;
	comm.kmax = kmax;

	ej.proc.bs = bs;
	ej.proc.iter_s = tp;
	ej.proc.n = n;
	ej.params = params;
	ej.per_gpu_max = e->per_gpu_max;
	ej.b_min = e->b_min;
	ej.b_max = e->b_max;
	ej.b_fixed = 0;
	ej.k_max = kmax;
	ej.k_only = 0;  /* the fixed count is applied in the Eq. 2 loop below */
	/* The JSA gives T_j(c_j, 1), Eq. 1's denominator, and the tables. */
	if (hb_elastic_jsa(&ej, &comm, &e->sc, err) < 0) {
		hb_error_prefix(err, "elastic JSA: job %s on %s", job->name, sim->cl->name);
		goto done;
	}
	/* Eq. 2 over the totals the simulator can run (elastic_share.h). */
	for (int k = 1; k <= kmax && e->b_fixed > 0; k++) {
		/* IV-B: the fixed batch on k GPUs, split as evenly as it goes. */
		long m = e->k_only == 0 || e->k_only == k ? hb_elastic_fixed_split(e->b_fixed, e->min_lbs, k, NULL) : 0;
		double tp1 = 0.0, tc1 = 0.0;

		/* Timed at the profiled batch that holds the largest share. */
		for (int i = 0; m > 0 && i <= n; i++)
			if (i == n || bs[i] >= (double)m) {
				m = i < n ? (long)bs[i] : 0;
				break;
			}
		if (m > 0 && m <= e->per_gpu_max &&
		    (hb_elastic_proc_time(&ej.proc, (double)m, &tp1, err) < 0 ||
		     hb_elastic_comm_time(&comm, params, k, &tc1, err) < 0))
			goto done;
		e->sc.speedup[k] = m > 0 && m <= e->per_gpu_max ? e->b_fixed / (tp1 + tc1) / e->sc.base_rate : -INFINITY;
		e->sc.batch[k] = m > 0 && m <= e->per_gpu_max ? e->b_fixed : 0;
		e->sc.iter_s[k] = m > 0 && m <= e->per_gpu_max ? tp1 + tc1 : INFINITY;
	}
	for (int k = 1; k <= kmax && e->b_fixed == 0; k++) {
		long bbest = 0;
		double rbest = -INFINITY, ibest = INFINITY;

		for (int i = 0; i < n && (e->k_only == 0 || e->k_only == k); i++) {
			long b = (long)bs[i] * k;
			double r, it;

			if (b < e->b_min || b > e->b_max)
				continue;
			if (hb_elastic_rate(&ej, &comm, b, k, &r, &it, err) < 0)
				goto done;
			if (r > rbest) {
				rbest = r;
				bbest = b;
				ibest = it;
			}
		}
		e->sc.speedup[k] = bbest > 0 ? rbest / e->sc.base_rate : -INFINITY;
		e->sc.batch[k] = bbest;
		e->sc.iter_s[k] = bbest > 0 ? ibest : INFINITY;
	}
	for (int k = 1; k <= kmax; k++)
		if (isfinite(e->sc.speedup[k]))
			e->feasible = 1;
	rc = 0;
done:
	free(all);
	free(one);
	free(order);
	free(bs);
	free(tp);
	free(tc);
	if (rc < 0)
		hb_elastic_entry_free(e);
	return rc;
}

/* ---- the arbiter ------------------------------------------------------------ */

struct elastic_state {
	int njobs;             /* size of the per-job arrays (sim->njobs at creation) */
	int K;                 /* GPUs of the cluster (the DP's K, §1, less those withdrawn: hb_sim_online_gpus) */
	int *exec;             /* EXECUTING: job ids in admission order */
	int nexec;
	int *queue;            /* ARRIVED: job ids not yet admitted, in arrival order */
	int nqueue;
	int *entry;            /* per job id: index into cache, -1 before arrival */
	int *want;             /* per job id, scratch of a round: GPUs decided */
	int *rank;             /* per job id, scratch of a round: position in EXECUTING */
	struct hb_elastic_entry **cache; /* JSA answers, one per key, owned */
	int ncache, capcache;
	struct hb_elastic_table *tabs;   /* scratch: DP tables, EXECUTING then ARRIVED */
	int *alloc;            /* scratch: DP allocation, same order as tabs */
	int *grow;             /* scratch: job ids to place this round */
	int *grant;            /* scratch, nnodes */
	int dirty;             /* a job arrived or finished since the last round */
};

static void elastic_free(void *state)
{
	struct elastic_state *st = state;

	if (st) {
		for (int i = 0; i < st->ncache; i++) {
			hb_elastic_entry_free(st->cache[i]);
			free(st->cache[i]);
		}
		free(st->cache);
		free(st->exec);
		free(st->queue);
		free(st->entry);
		free(st->want);
		free(st->rank);
		free(st->tabs);
		free(st->alloc);
		free(st->grow);
		free(st->grant);
		free(st);
	}
}

static int elastic_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct elastic_state *st = calloc(1, sizeof(*st));
	size_t nj = (size_t)(sim->njobs > 0 ? sim->njobs : 1), nn = (size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1);

	(void)opts;
	if (st) {
		st->njobs = sim->njobs;
		st->K = sim->cl->ngpus;
		st->exec = calloc(nj, sizeof(int));
		st->queue = calloc(nj, sizeof(int));
		st->entry = malloc(nj * sizeof(int));
		st->want = calloc(nj, sizeof(int));
		st->rank = calloc(nj, sizeof(int));
		st->tabs = calloc(nj, sizeof(*st->tabs));
		st->alloc = calloc(nj, sizeof(int));
		st->grow = calloc(nj, sizeof(int));
		st->grant = calloc(nn, sizeof(int));
	}
	if (!st || !st->exec || !st->queue || !st->entry || !st->want || !st->rank || !st->tabs || !st->alloc ||
	    !st->grow || !st->grant) {
		elastic_free(st);
		return hb_runtime_error(err, "elastic: out of memory");
	}
	for (size_t i = 0; i < nj; i++)
		st->entry[i] = -1;
	*state = st;
	return 0;
}

const struct hb_elastic_entry *hb_elastic_arbiter_entry(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	const struct elastic_state *st = sim->arbiter_state;

	if (sim->arbiter != &hb_arbiter_elastic || !st || job->id < 0 || job->id >= st->njobs ||
	    st->entry[job->id] < 0)
		return NULL;
	return st->cache[st->entry[job->id]];
}

/* The cache entry of a job (JSA.PROCESS at arrival, Fig. 4): shared by every
 * job with the same key, built on the first. */
static int lookup(struct hb_sim *sim, struct elastic_state *st, struct hb_sim_job *job, struct hb_error *err)
{
	struct hb_elastic_entry *e;

	for (int i = 0; i < st->ncache; i++)
		if (hb_elastic_entry_matches(st->cache[i], sim, job)) {
			st->entry[job->id] = i;
			return 0;
		}
	if (st->ncache == st->capcache) {
		int cap = st->capcache ? 2 * st->capcache : 8;
		struct hb_elastic_entry **nc = realloc(st->cache, sizeof(*nc) * (size_t)cap);

		if (!nc)
			return hb_runtime_error(err, "elastic: out of memory");
		st->cache = nc;
		st->capcache = cap;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return hb_runtime_error(err, "elastic: out of memory");
	if (hb_elastic_entry_build(sim, job, e, err) < 0) {
		free(e);
		return -1;
	}
	st->cache[st->ncache] = e;
	st->entry[job->id] = st->ncache++;
	return 0;
}

static int elastic_round(struct hb_sim *sim, void *state, struct hb_error *err);

/* Δ <= 0: decide at every arrival and departure (header comment). */
static int event_driven(const struct hb_sim *sim)
{
	return !(hb_elastic_opts(sim)->interval_s > 0);
}

static int elastic_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct elastic_state *st = state;
	const struct hb_elastic_entry *e;

	if (job->id < 0 || job->id >= st->njobs || st->nqueue >= st->njobs)
		return hb_runtime_error(err, "elastic: job %s (id %d) was added after the run started", job->name,
					job->id);
	if (lookup(sim, st, job, err) < 0)
		return -1;
	e = st->cache[st->entry[job->id]];
	if (!e->feasible && !hb_elastic_opts(sim)->drop)
		return hb_input_error(err, "%s: job %s (model %s, batch %ld..%ld, %s%s%.0ld) has no feasible GPU count "
				      "on %s (%d GPUs, per-GPU batch <= %ld in multiples of %d): in queue mode it would "
				      "block the queue forever", job->agent->name, job->name, job->model->name, e->b_min,
				      e->b_max, e->k_only > 0 ? "fixed GPU count" : "elastic",
				      e->b_fixed > 0 ? ", fixed total batch " : "", e->b_fixed, sim->cl->name, st->K,
				      e->per_gpu_max, e->min_lbs);
	st->queue[st->nqueue++] = job->id;
	st->dirty = 1;
	return event_driven(sim) ? elastic_round(sim, st, err) : 0; /* else it waits for the next tick */
}

static int elastic_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct elastic_state *st = state;

	(void)job;
	st->dirty = 1; /* FINISHED != {}: re-spread at the next tick */
	return event_driven(sim) ? elastic_round(sim, st, err) : 0;
}

static double elastic_round_s(const struct hb_sim *sim, const void *state)
{
	(void)state;
	return hb_elastic_opts(sim)->interval_s;
}

static struct hb_elastic_table table_of(const struct elastic_state *st, int id)
{
	const struct hb_elastic_entry *e = st->cache[st->entry[id]];
	struct hb_elastic_table t = { e->sc.speedup, e->sc.k_max };

	return t;
}

/* A shrinking job keeps GPUs on the nodes where it holds most. */
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
			return; /* unreachable: a shrink needs fewer GPUs than the job holds */
		grant[best] = job->grant[best] < n ? job->grant[best] : n;
		n -= grant[best];
	}
}

/* Growers and admitted jobs: largest count first, ties by admission order. */
static void sort_grow(const struct elastic_state *st, int *ids, int n)
{
	for (int i = 1; i < n; i++) {
		int x = ids[i], k = i;

		while (k > 0 && (st->want[ids[k - 1]] < st->want[x] ||
				 (st->want[ids[k - 1]] == st->want[x] && st->rank[ids[k - 1]] > st->rank[x]))) {
			ids[k] = ids[k - 1];
			k--;
		}
		ids[k] = x;
	}
}

static int apply(struct hb_sim *sim, struct elastic_state *st, struct hb_error *err)
{
	int ngrow = 0;

	for (int i = 0; i < st->nexec; i++) {
		struct hb_sim_job *job = &sim->jobs[st->exec[i]];
		int want = st->want[job->id];

		st->rank[job->id] = i;
		if (job->state != HB_JOB_PENDING && want == job->ngrant)
			continue; /* same count: keeps its GPUs, no restart */
		if (job->state == HB_JOB_PENDING || want > job->ngrant) {
			st->grow[ngrow++] = job->id;
			continue;
		}
		hb_sim_note(sim, job, "resize", "elastic: %d -> %d GPUs, JSA batch %ld, speedup %.3f", job->ngrant,
			    want, st->cache[st->entry[job->id]]->sc.batch[want],
			    st->cache[st->entry[job->id]]->sc.speedup[want]);
		shrink_grant(sim, job, want, st->grant);
		if (hb_sim_regrant(sim, job, st->grant, err) < 0)
			return -1;
	}
	sort_grow(st, st->grow, ngrow);
	for (int g = 0; g < ngrow; g++) {
		struct hb_sim_job *job = &sim->jobs[st->grow[g]];
		const struct hb_elastic_entry *e = st->cache[st->entry[job->id]];
		int want = st->want[job->id], placed, rc, pending = job->state == HB_JOB_PENDING;

		/* Lend the job's own GPUs to the pool for hb_sim_place. */
		for (int i = 0; i < sim->cl->nnodes; i++)
			sim->free_gpus[i] += job->grant[i];
		placed = hb_sim_place(sim, want, st->grant);
		for (int i = 0; i < sim->cl->nnodes; i++)
			sim->free_gpus[i] -= job->grant[i];
		if (!placed) /* unreachable (see the header comment): an invariant of the arbiter broke */
			return hb_runtime_error(err, "elastic: %d GPUs decided for job %s are not free", want, job->name);
		hb_sim_note(sim, job, pending ? "admit" : job->state == HB_JOB_SUSPENDED ? "resume" : "resize",
			    "elastic: %d -> %d GPUs, JSA batch %ld, speedup %.3f", pending ? 0 : job->ngrant, want,
			    e->sc.batch[want], e->sc.speedup[want]);
		rc = pending ? hb_sim_start_job(sim, job, st->grant, err) : hb_sim_regrant(sim, job, st->grant, err);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int elastic_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct elastic_state *st = state;
	int n = 0, admitted = 0, idle = 0;

	if (!st->dirty)
		return 0; /* nothing arrived or finished: the same inputs, the same allocation */
	st->dirty = 0;
	/* EXECUTING <- EXECUTING \ FINISHED */
	for (int i = 0; i < st->nexec; i++)
		if (sim->jobs[st->exec[i]].state != HB_JOB_DONE)
			st->exec[n++] = st->exec[i];
	st->nexec = n;
	for (int i = 0; i < st->nexec; i++)
		st->tabs[i] = table_of(st, st->exec[i]);
	for (int i = 0; i < st->nqueue; i++)
		st->tabs[st->nexec + i] = table_of(st, st->queue[i]);
	if (hb_elastic_admit(st->tabs, st->nexec, st->tabs + st->nexec, st->nqueue, hb_sim_online_gpus(sim), st->alloc,
			     &admitted,
			     &idle, err) < 0) {
		hb_error_prefix(err, "elastic: scaling decision at %.0f s", hb_sim_now(sim));
		return -1;
	}
	for (int i = 0; i < admitted; i++)
		st->exec[st->nexec + i] = st->queue[i];
	st->nexec += admitted;
	memmove(st->queue, st->queue + admitted, sizeof(int) * (size_t)(st->nqueue - admitted));
	st->nqueue -= admitted;
	for (int i = 0; i < st->nexec; i++)
		st->want[st->exec[i]] = st->alloc[i];
	hb_sim_note(sim, NULL, "scale", "elastic: %d running (%d admitted), %d waiting, %d GPUs idle", st->nexec,
		    admitted, st->nqueue, idle);
	if (apply(sim, st, err) < 0)
		return -1;
	if (hb_elastic_opts(sim)->drop) {
		n = 0;
		for (int i = 0; i < st->nqueue; i++)
			if (sim->jobs[st->queue[i]].state == HB_JOB_SUSPENDED)
				st->queue[n++] = st->queue[i]; /* preempted by a withdrawal: never dropped (header) */
			else if (hb_sim_drop_job(sim, &sim->jobs[st->queue[i]],
						 "elastic: not admitted at the tick (drop mode)", err) < 0)
				return -1;
		st->nqueue = n;
	}
	return 0;
}

/* ---- capacity that comes and goes (capacity.h) ------------------------------ */

/* The largest count <= n at which job's S_j table is feasible, 0 if none. */
static int feasible_at_most(const struct elastic_state *st, int id, int n)
{
	const struct hb_elastic_entry *e = st->cache[st->entry[id]];

	for (int k = n < e->sc.k_max ? n : e->sc.k_max; k >= 1; k--)
		if (isfinite(e->sc.speedup[k]))
			return k;
	return 0;
}

/* Busy GPUs are withdrawn (need[i] beyond node i's free ones): the jobs
 * there, most recently started first, give them up and run on at a
 * feasible count (header comment); the engine preempts the rest. */
static int elastic_revoke(struct hb_sim *sim, void *state, const int *need, struct hb_error *err)
{
	struct elastic_state *st = state;
	int nn = sim->cl->nnodes, *left, *done, rc = 0;

	left = calloc((size_t)(nn > 0 ? nn : 1), sizeof(int));
	done = calloc((size_t)(st->njobs > 0 ? st->njobs : 1), sizeof(int));
	if (!left || !done) {
		free(left);
		free(done);
		return hb_runtime_error(err, "elastic: out of memory");
	}
	memcpy(left, need, sizeof(int) * (size_t)nn);
	st->dirty = 1;
	for (;;) {
		struct hb_sim_job *job = NULL;
		int keep, k;

		for (int i = 0; i < st->nexec; i++) {
			struct hb_sim_job *x = &sim->jobs[st->exec[i]];
			int on = 0;

			if (done[x->id] || !(x->state == HB_JOB_RUNNING || x->state == HB_JOB_RESTARTING))
				continue;
			for (int nd = 0; nd < nn && !on; nd++)
				on = left[nd] > 0 && x->grant[nd] > 0;
			if (on && (!job || x->start_s > job->start_s || (x->start_s == job->start_s && x->id > job->id)))
				job = x;
		}
		if (!job)
			break;
		done[job->id] = 1;
		memcpy(st->grant, job->grant, sizeof(int) * (size_t)nn);
		keep = job->ngrant;
		for (int nd = 0; nd < nn; nd++) {
			int t = left[nd] < st->grant[nd] ? left[nd] : st->grant[nd];

			st->grant[nd] -= t;
			keep -= t;
		}
		k = feasible_at_most(st, job->id, keep);
		if (k == 0)
			continue; /* nothing feasible on what is left: the engine preempts it */
		/* Down to k: drop GPUs where it keeps fewest (ties: higher index),
		 * so the gang stays on as few nodes as it can. */
		while (keep > k) {
			int w = -1;

			for (int nd = 0; nd < nn; nd++)
				if (st->grant[nd] > 0 && (w < 0 || st->grant[nd] <= st->grant[w]))
					w = nd;
			{
				int t = st->grant[w] < keep - k ? st->grant[w] : keep - k;

				st->grant[w] -= t;
				keep -= t;
			}
		}
		for (int nd = 0; nd < nn; nd++) {
			int t = job->grant[nd] - st->grant[nd];

			left[nd] -= t < left[nd] ? t : left[nd];
		}
		hb_sim_note(sim, job, "shrink", "elastic: capacity revoked, %d -> %d GPUs, JSA batch %ld", job->ngrant, k,
			    st->cache[st->entry[job->id]]->sc.batch[k]);
		if ((rc = hb_sim_regrant(sim, job, st->grant, err)) < 0)
			break;
	}
	free(left);
	free(done);
	return rc;
}

/* The engine preempted job for a withdrawal: back to the head of ARRIVED,
 * in arrival order among the preempted (header comment). */
static int elastic_requeue(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct elastic_state *st = state;
	int n = 0, pos = 0, found = 0;

	for (int i = 0; i < st->nexec; i++)
		if (st->exec[i] == job->id)
			found = 1;
		else
			st->exec[n++] = st->exec[i];
	if (!found || st->nqueue >= st->njobs)
		return hb_runtime_error(err, "elastic: requeue of job %s, which is not executing", job->name);
	st->nexec = n;
	/* After the preempted jobs already at the head that arrived before it:
	 * FIFO admission makes arrival order the admission order. */
	while (pos < st->nqueue && sim->jobs[st->queue[pos]].state == HB_JOB_SUSPENDED &&
	       (sim->jobs[st->queue[pos]].arrival_s < job->arrival_s ||
		(sim->jobs[st->queue[pos]].arrival_s == job->arrival_s && st->queue[pos] < job->id)))
		pos++;
	memmove(st->queue + pos + 1, st->queue + pos, sizeof(int) * (size_t)(st->nqueue - pos));
	st->queue[pos] = job->id;
	st->nqueue++;
	st->dirty = 1;
	return 0;
}

/* GPUs came back or went: re-spread over the new K at the next tick. */
static int elastic_capacity(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct elastic_state *st = state;

	st->dirty = 1;
	return event_driven(sim) ? elastic_round(sim, st, err) : 0;
}

const struct hb_arbiter_ops hb_arbiter_elastic = {
	.name = "elastic",
	.summary = "IBM elastic scaling: DP over throughput scaling factors, FIFO trial admission every Δ, "
		   "queue or drop mode",
	.init = elastic_init,
	.free = elastic_free,
	.on_arrival = elastic_arrival,
	.on_finish = elastic_finish,
	.round_s = elastic_round_s,
	.on_round = elastic_round,
	.on_revoke = elastic_revoke,
	.on_requeue = elastic_requeue,
	.on_capacity = elastic_capacity,
};
