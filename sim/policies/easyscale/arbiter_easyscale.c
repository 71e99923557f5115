/*
 * arbiter_easyscale.c: EasyScale's inter-job scheduler (notes/easyscale.md
 * §2.4, §2.5; the artifact's easy_policy.py and simulator.py, [A]).
 *
 *  - New jobs start at once with their smallest plan: one GPU of their
 *    preferred type, else (a job that may mix types under easyscale) one
 *    of the fastest type with a free GPU; no gang (the paper's "minimal
 *    number of GPUs was set to 0").  Jobs that find no GPU wait in arrival
 *    order and start as GPUs free up.
 *  - Every 60 s each running job proposes, per GPU type it may use, its
 *    best homogeneous increment: plans that add k GPUs of that type and
 *    keep the others, whose estimated throughput is at least the current
 *    one, whose Eq. 1 waste is at most 30 % of their capacity, that at
 *    most double the job's GPUs and stay within maxP and the free pool.
 *    The best is the one with the highest speedup per added GPU,
 *    inc = (thp_new / thp_cur - 1) / k + 1, ties to more GPUs (K = one
 *    proposal per type, as [A]).
 *  - The cluster grants proposals in decreasing inc, ties to more GPUs,
 *    then job id and type (determinism), at most one per job per round,
 *    while the free pool of the type holds them.  A grant is a
 *    checkpoint-restart on the new GPUs (the agent re-plans: Role-3).
 *  - Fallback: a job that grew runs its new plan until the next round; if
 *    its measured (simulated) throughput is below what it had, it returns
 *    to its previous GPUs, and never proposes that many GPUs of that type
 *    again (without this it would propose the same increment every round).
 *    The planner's estimate equals the simulation unless the all-reduce is
 *    left out of it (sim --easyscale-comm off), so fallbacks happen only then.
 *    After a fallback the job scores its plans by the measured (simulated)
 *    step times: the paper's plan database is updated when its estimates
 *    and the reported throughput disagree (§2.1), which [A] leaves a no-op.
 *  - Running jobs are never shrunk or preempted by the scheduler; only a
 *    capacity revocation (capacity.h) scales them in: the jobs on the
 *    revoked nodes, most recently started first, give up GPUs there, and a
 *    job left with none waits again for its smallest plan.
 *
 * easyscale lets a D2-eligible job mix types; easyscale-homo holds every
 * job to its preferred type (EasyScale_homo; [A] filters homogeneous
 * plans to the preferred type, notes §2.5 item 4), as non-D2 jobs are
 * held under both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easyscale.h"
#include "policy.h"
#include "sim.h"

struct es_job_st {
	struct hb_es_job ej;     /* planner view (made at arrival) */
	int have;                /* 1 once ej is made */
	int grew;                /* 1: granted more GPUs at the last round (fallback check due) */
	int grew_type;           /* the type it grew in */
	double prev_thp;         /* simulated mini-batches/s before it grew */
	int ceiling[HB_EST_MAX_TYPES]; /* GPUs of a type measured slower: proposals stay below; 0 = none */
	int measured;            /* 1 after a fallback: its plans are scored by what the simulation measures */
};

struct es_arb {
	int homo;                /* 1: easyscale-homo */
	struct es_job_st *jobs;  /* per job id */
	int *prev;               /* per job id x nnodes: the grant before it grew */
	int njobs, nnodes;
	int *wait;               /* ids waiting for their smallest plan, in arrival order */
	int nwait;
	int *scratch;            /* nnodes */
	int *add;                /* nnodes: GPUs taken from the pool */
	unsigned char *granted;  /* per job id, scratch of a round */
};

struct proposal {
	int job, type, k;        /* add k GPUs of type (perf index) to job */
	double inc;              /* speedup per added GPU */
};

static void es_free(void *state)
{
	struct es_arb *st = state;

	if (st) {
		free(st->jobs);
		free(st->prev);
		free(st->wait);
		free(st->scratch);
		free(st->add);
		free(st->granted);
		free(st);
	}
}

/* The state of easyscale (homo 0) or easyscale-homo (1): each ops table's init below. */
static int es_init_homo(struct hb_sim *sim, int homo, void **state, struct hb_error *err)
{
	struct es_arb *st = calloc(1, sizeof(*st));
	size_t nj = (size_t)(sim->njobs > 0 ? sim->njobs : 1), nn = (size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1);

	if (st) {
		st->homo = homo;
		st->njobs = sim->njobs;
		st->nnodes = sim->cl->nnodes;
		st->jobs = calloc(nj, sizeof(*st->jobs));
		st->prev = calloc(nj * nn, sizeof(int));
		st->wait = calloc(nj, sizeof(int));
		st->scratch = calloc(nn, sizeof(int));
		st->add = calloc(nn, sizeof(int));
		st->granted = calloc(nj, 1);
	}
	if (!st || !st->jobs || !st->prev || !st->wait || !st->scratch || !st->add || !st->granted) {
		es_free(st);
		return hb_runtime_error(err, "easyscale: out of memory");
	}
	*state = st;
	return 0;
}

static int es_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	(void)opts;
	return es_init_homo(sim, 0, state, err);
}

static int es_homo_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	(void)opts;
	return es_init_homo(sim, 1, state, err);
}

/* GPU types (bits, perf indices) the job may use under this policy. */
static unsigned allowed(const struct es_arb *st, const struct hb_es_job *ej)
{
	return st->homo || !ej->d2 ? 1u << ej->pref : ej->usable;
}

static int free_of_type(const struct hb_sim *sim, const struct hb_perf *p, int g)
{
	int n = 0;

	for (int i = 0; i < p->nnodes; i++)
		if (p->nodes[i].gpu == g)
			n += sim->free_gpus[i];
	return n;
}

static int holds(const struct hb_sim_job *job)
{
	return job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING;
}

/* Start (or resume) the waiting jobs that find a GPU, in arrival order. */
static int admit(struct hb_sim *sim, struct es_arb *st, struct hb_error *err)
{
	int k = 0;

	for (int w = 0; w < st->nwait; w++) {
		struct hb_sim_job *job = &sim->jobs[st->wait[w]];
		const struct hb_es_job *ej = &st->jobs[job->id].ej;
		unsigned ok = allowed(st, ej);
		int g = -1, rc;

		if (free_of_type(sim, job->perf, ej->pref) > 0)
			g = ej->pref;
		for (int h = 0; h < ej->ntypes && (ok & ~(1u << ej->pref)); h++)
			if (g != ej->pref && ((ok >> h) & 1u) && free_of_type(sim, job->perf, h) > 0 &&
			    (g < 0 || ej->types[h].est_s < ej->types[g].est_s))
				g = h;
		if (g < 0) {
			st->wait[k++] = job->id;
			continue;
		}
		memset(st->scratch, 0, sizeof(int) * (size_t)st->nnodes);
		if (hb_es_place(job->perf, sim->free_gpus, NULL, g, 1, st->scratch) < 0)
			return hb_runtime_error(err, "easyscale: a free GPU of type %s does not place",
						job->perf->gpus[g].name);
		if (job->state == HB_JOB_PENDING)
			rc = hb_sim_start_job(sim, job, st->scratch, err);
		else
			rc = hb_sim_regrant(sim, job, st->scratch, err);
		if (rc < 0)
			return -1;
	}
	st->nwait = k;
	return 0;
}

static int es_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct es_arb *st = state;
	struct es_job_st *js;

	if (job->id < 0 || job->id >= st->njobs)
		return hb_runtime_error(err, "easyscale: job %s (id %d) was added after the run started", job->name,
					job->id);
	if (job->agent != &hb_agent_easyscale)
		return hb_input_error(err, "easyscale: job %s runs agent %s; the EasyScale scheduler needs the easyscale "
					   "agent (it plans on the jobs' EST plans)", job->name, job->agent->name);
	js = &st->jobs[job->id];
	if (!js->have) {
		if (hb_es_job_init(sim, job, &js->ej, err) < 0)
			return -1;
		js->have = 1;
	}
	st->wait[st->nwait++] = job->id;
	return admit(sim, st, err);
}

static int es_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)job;
	return admit(sim, state, err);
}

static double es_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return HB_ES_ROUND_S;
}

/* Fallback (Role-3): a job measured slower on its new GPUs goes back. */
static int fallback(struct hb_sim *sim, struct es_arb *st, struct hb_sim_job *job, struct hb_error *err)
{
	struct es_job_st *js = &st->jobs[job->id];
	const int *prev = &st->prev[(size_t)job->id * (size_t)st->nnodes];
	double now_thp;
	int cnt = 0;

	js->grew = 0;
	if (!holds(job))
		return 0;
	now_thp = js->ej.maxp / job->cfg.iter_s;
	if (!(now_thp < js->prev_thp))
		return 0;
	for (int i = 0; i < st->nnodes; i++)
		if (job->perf->nodes[i].gpu == js->grew_type)
			cnt += job->grant[i];
	js->ceiling[js->grew_type] = cnt;
	js->measured = 1;
	hb_sim_note(sim, job, "fallback", "easyscale: %d GPUs of %s measured %.3f mini-batches/s, below %.3f: back",
		    cnt, job->perf->gpus[js->grew_type].name, now_thp, js->prev_thp);
	return hb_sim_regrant(sim, job, prev, err);
}

/* st->scratch = the job's grant plus k free GPUs of type g (nodes it uses
 * first); -1 when the pool lacks them. */
static int grown(const struct hb_sim *sim, struct es_arb *st, const struct hb_sim_job *job, int g, int k)
{
	memset(st->add, 0, sizeof(int) * (size_t)st->nnodes);
	if (hb_es_place(job->perf, sim->free_gpus, job->grant, g, k, st->add) < 0)
		return -1;
	for (int i = 0; i < st->nnodes; i++)
		st->scratch[i] = job->grant[i] + st->add[i];
	return 0;
}

/* The job's best increment of type g; 0 when none qualifies. */
static int propose(struct hb_sim *sim, struct es_arb *st, struct hb_sim_job *job, int g, double cur_thp,
		   struct proposal *out, struct hb_error *err)
{
	struct es_job_st *js = &st->jobs[job->id];
	int have = 0, room = free_of_type(sim, job->perf, g), maxk, found = 0;

	for (int i = 0; i < st->nnodes; i++)
		if (job->perf->nodes[i].gpu == g)
			have += job->grant[i];
	maxk = room;
	if (js->ej.maxp - job->ngrant < maxk)
		maxk = js->ej.maxp - job->ngrant;
	if (job->ngrant < maxk) /* at most doubling per round */
		maxk = job->ngrant;
	if (js->ceiling[g] > 0 && js->ceiling[g] - 1 - have < maxk)
		maxk = js->ceiling[g] - 1 - have;
	for (int k = 1; k <= maxk; k++) {
		struct hb_es_eval ev;
		double inc, thp;

		if (grown(sim, st, job, g, k) < 0)
			break;
		if (hb_es_eval(sim, job, &js->ej, st->scratch, &ev, err) < 0)
			return -1;
		thp = js->measured ? ev.true_thp : ev.est_thp;
		if (!(thp >= cur_thp) || ev.plan.waste_frac > HB_ES_MAX_WASTE)
			continue;
		inc = (thp / cur_thp - 1.0) / k + 1.0;
		if (!found || inc >= out->inc) { /* ties to more GPUs: k grows */
			out->job = job->id;
			out->type = g;
			out->k = k;
			out->inc = inc;
			found = 1;
		}
	}
	return found;
}

static int cmp_proposal(const void *a, const void *b)
{
	const struct proposal *x = a, *y = b;

	if (x->inc != y->inc)
		return x->inc > y->inc ? -1 : 1;
	if (x->k != y->k)
		return x->k > y->k ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->type > y->type) - (x->type < y->type);
}

static int es_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct es_arb *st = state;
	struct proposal *props = NULL;
	int np = 0, cap = 0, rc = -1;

	for (int j = 0; j < sim->njobs; j++)
		if (st->jobs[j].grew && fallback(sim, st, &sim->jobs[j], err) < 0)
			return -1;
	if (admit(sim, st, err) < 0)
		return -1;
	/* Role-2: every running job's best increment per type. */
	for (int j = 0; j < sim->njobs; j++) {
		struct hb_sim_job *job = &sim->jobs[j];
		struct es_job_st *js = &st->jobs[j];
		struct hb_es_eval cur;
		unsigned ok;

		if (!js->have || !holds(job) || job->ngrant >= js->ej.maxp)
			continue;
		if (hb_es_eval(sim, job, &js->ej, job->grant, &cur, err) < 0)
			goto out;
		ok = allowed(st, &js->ej);
		for (int g = 0; g < js->ej.ntypes; g++) {
			struct proposal p;
			int got;

			if (!((ok >> g) & 1u))
				continue;
			if ((got = propose(sim, st, job, g, js->measured ? cur.true_thp : cur.est_thp, &p, err)) < 0)
				goto out;
			if (!got)
				continue;
			if (np == cap) {
				struct proposal *n = realloc(props, sizeof(*n) * (size_t)(cap ? 2 * cap : 64));

				if (!n) {
					hb_runtime_error(err, "easyscale: out of memory");
					goto out;
				}
				props = n;
				cap = cap ? 2 * cap : 64;
			}
			props[np++] = p;
		}
	}
	if (np > 1)
		qsort(props, (size_t)np, sizeof(*props), cmp_proposal);
	memset(st->granted, 0, (size_t)st->njobs);
	for (int i = 0; i < np; i++) {
		struct hb_sim_job *job = &sim->jobs[props[i].job];
		struct es_job_st *js = &st->jobs[job->id];

		if (st->granted[job->id] || free_of_type(sim, job->perf, props[i].type) < props[i].k)
			continue;
		if (grown(sim, st, job, props[i].type, props[i].k) < 0)
			continue;
		st->granted[job->id] = 1;
		memcpy(&st->prev[(size_t)job->id * (size_t)st->nnodes], job->grant, sizeof(int) * (size_t)st->nnodes);
		js->prev_thp = js->ej.maxp / job->cfg.iter_s;
		js->grew = 1;
		js->grew_type = props[i].type;
		hb_sim_note(sim, job, "grant", "easyscale: +%d %s (speedup per added GPU %.4f)", props[i].k,
			    job->perf->gpus[props[i].type].name, props[i].inc);
		{
			int *grant = malloc(sizeof(int) * (size_t)st->nnodes);

			if (!grant) {
				hb_runtime_error(err, "easyscale: out of memory");
				goto out;
			}
			memcpy(grant, st->scratch, sizeof(int) * (size_t)st->nnodes);
			rc = hb_sim_regrant(sim, job, grant, err);
			free(grant);
			if (rc < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(props);
	return rc;
}

/* ---- capacity (sim/capacity.h) ---------------------------------------------- */

/* Scale in the jobs on the revoked nodes, most recently started first: a
 * job gives up its GPUs there (need[i] in all per node) and re-plans on
 * the rest; one left with none waits again for its smallest plan. */
static int es_revoke(struct hb_sim *sim, void *state, const int *need, struct hb_error *err)
{
	struct es_arb *st = state;
	int *left, *order, n = 0, rc = 0;

	left = malloc(sizeof(int) * (size_t)st->nnodes);
	order = malloc(sizeof(int) * (size_t)(sim->njobs > 0 ? sim->njobs : 1));
	if (!left || !order) {
		free(left);
		free(order);
		return hb_runtime_error(err, "easyscale: out of memory");
	}
	for (int i = 0; i < st->nnodes; i++)
		left[i] = need[i];
	for (int j = 0; j < sim->njobs; j++)
		if (holds(&sim->jobs[j]))
			order[n++] = j;
	/* Latest start first, ties to the higher id (insertion sort: few jobs). */
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0; b--) {
			const struct hb_sim_job *x = &sim->jobs[order[b - 1]], *y = &sim->jobs[order[b]];

			if (x->start_s > y->start_s || (x->start_s == y->start_s && x->id > y->id))
				break;
			{
				int t = order[b - 1];

				order[b - 1] = order[b];
				order[b] = t;
			}
		}
	for (int o = 0; o < n && rc == 0; o++) {
		struct hb_sim_job *job = &sim->jobs[order[o]];
		int changed = 0;

		memcpy(st->scratch, job->grant, sizeof(int) * (size_t)st->nnodes);
		for (int i = 0; i < st->nnodes; i++) {
			int take = st->scratch[i] < left[i] ? st->scratch[i] : left[i];

			st->scratch[i] -= take;
			left[i] -= take;
			changed += take;
		}
		if (!changed)
			continue;
		st->jobs[job->id].grew = 0; /* a shrink is no growth to check */
		{
			int *grant = malloc(sizeof(int) * (size_t)st->nnodes), total = 0;

			if (!grant) {
				rc = hb_runtime_error(err, "easyscale: out of memory");
				break;
			}
			memcpy(grant, st->scratch, sizeof(int) * (size_t)st->nnodes);
			for (int i = 0; i < st->nnodes; i++)
				total += grant[i];
			hb_sim_note(sim, job, "shrink", "easyscale: capacity revoked, %d of its %d GPUs taken back",
				    changed, job->ngrant);
			rc = hb_sim_regrant(sim, job, grant, err);
			free(grant);
			if (rc == 0 && total == 0)
				st->wait[st->nwait++] = job->id; /* its smallest plan again, once a GPU is free */
		}
	}
	free(left);
	free(order);
	return rc;
}

static int es_requeue(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct es_arb *st = state;

	(void)sim;
	(void)err;
	st->jobs[job->id].grew = 0;
	st->wait[st->nwait++] = job->id;
	return 0;
}

static int es_capacity(struct hb_sim *sim, void *state, struct hb_error *err)
{
	return admit(sim, state, err);
}

const struct hb_arbiter_ops hb_arbiter_easyscale = {
	.name = "easyscale",
	.summary = "EasyScale: jobs start on one GPU, grow by homogeneous increments (speedup per GPU), "
		   "D2 jobs mix types; 60 s rounds",
	.init = es_init,
	.free = es_free,
	.on_arrival = es_arrival,
	.on_finish = es_finish,
	.round_s = es_round_s,
	.on_round = es_round,
	.on_revoke = es_revoke,
	.on_requeue = es_requeue,
	.on_capacity = es_capacity,
};

const struct hb_arbiter_ops hb_arbiter_easyscale_homo = {
	.name = "easyscale-homo",
	.summary = "EasyScale_homo: as easyscale, every job on its preferred GPU type only",
	.init = es_homo_init,
	.free = es_free,
	.on_arrival = es_arrival,
	.on_finish = es_finish,
	.round_s = es_round_s,
	.on_round = es_round,
	.on_revoke = es_revoke,
	.on_requeue = es_requeue,
	.on_capacity = es_capacity,
};
