/*
 * arbiter_yarn_cs.c: YARN-CS, the baseline of EasyScale's trace experiment
 * (notes/easyscale.md §3 "§5.2 trace experiment": "FIFO with gang
 * scheduling, the Philly production scheduler. It gives each job GPUs of a
 * single type").
 *
 * A job asks for its requested GPU count (EasyScale's maxP), all at once,
 * all of one GPU type: its preferred type (job->pref_gpu) when the cluster
 * has that many of it, else the first type in cluster order whose pool is
 * large enough (a job that fits no type is an input error).  Jobs wait in
 * arrival order; whenever GPUs free up the queue is walked in order and
 * every job whose type has enough free GPUs starts, packed on the fewest
 * nodes of that type (a capacity scheduler runs the jobs that fit; the
 * head does not block the others).
 *
 * head_only (yarn_cs_opts.h; sim --yarn-head-only) is the artifact's
 * FifoPolicy instead ([A] other_policy.py, notes §4.5 caveat): it looks at
 * the head of the queue only and stops, and its queue keeps running jobs,
 * so one job runs at a time.
 *
 * Capacity (capacity.h): a withdrawal preempts gang jobs (the engine does);
 * on_requeue puts a preempted job back in the queue at its arrival rank.
 */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim.h"
#include "yarn_cs_opts.h" /* hb_yarn_cs_opts: head_only */

struct yarn_state {
	int *queue;              /* waiting job ids, by arrival (ties: id) */
	int n;
	int njobs;
	int *type;               /* per job id: its GPU type (job_type), fixed at arrival */
	int *grant;              /* scratch, nnodes */
};

static void yarn_free(void *state)
{
	struct yarn_state *st = state;

	if (st) {
		free(st->queue);
		free(st->type);
		free(st->grant);
		free(st);
	}
}

static int yarn_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct yarn_state *st = calloc(1, sizeof(*st));

	(void)opts;
	if (st) {
		st->njobs = sim->njobs;
		st->queue = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(int));
		st->type = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(int));
		st->grant = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));
	}
	if (!st || !st->queue || !st->type || !st->grant) {
		yarn_free(st);
		return hb_runtime_error(err, "yarn-cs: out of memory");
	}
	*state = st;
	return 0;
}

static int type_gpus(const struct hb_sim *sim, int gpu, int free_only)
{
	int n = 0;

	for (int i = 0; i < sim->cl->nnodes; i++)
		if (sim->cl->nodes[i].gpu == gpu)
			n += free_only ? sim->free_gpus[i] : sim->cl->nodes[i].ngpus;
	return n;
}

/* The job's GPU type (catalog index), -1 when no type holds it. */
static int job_type(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	int want = hb_arbiter_job_gpus(sim, job);
	int pref = job->pref_gpu[0] ? hb_catalog_gpu_index(sim->cat, job->pref_gpu) : -1;

	if (pref >= 0 && type_gpus(sim, pref, 0) >= want)
		return pref;
	for (int i = 0; i < sim->cl->nnodes; i++)
		if (type_gpus(sim, sim->cl->nodes[i].gpu, 0) >= want)
			return sim->cl->nodes[i].gpu;
	return -1;
}

/* Pack want GPUs of type gpu on the fewest nodes: 1 and grant, or 0. */
static int place_type(const struct hb_sim *sim, int gpu, int want, int *grant)
{
	int left = want;

	if (type_gpus(sim, gpu, 1) < want)
		return 0;
	memset(grant, 0, sizeof(int) * (size_t)sim->cl->nnodes);
	while (left > 0) {
		int best = -1;

		for (int i = 0; i < sim->cl->nnodes; i++)
			if (sim->cl->nodes[i].gpu == gpu && !grant[i] && sim->free_gpus[i] > 0 &&
			    (best < 0 || sim->free_gpus[i] > sim->free_gpus[best]))
				best = i;
		grant[best] = sim->free_gpus[best] < left ? sim->free_gpus[best] : left;
		left -= grant[best];
	}
	return 1;
}

static int running(const struct hb_sim *sim)
{
	for (int j = 0; j < sim->njobs; j++)
		if (sim->jobs[j].state == HB_JOB_RUNNING || sim->jobs[j].state == HB_JOB_RESTARTING)
			return 1;
	return 0;
}

static int drain(struct hb_sim *sim, struct yarn_state *st, struct hb_error *err)
{
	int k = 0;

	for (int q = 0; q < st->n; q++) {
		struct hb_sim_job *job = &sim->jobs[st->queue[q]];
		int gpu = st->type[job->id], rc;
		int blocked = hb_yarn_cs_opts(sim)->head_only && (q > 0 || running(sim));

		if (blocked || !place_type(sim, gpu, hb_arbiter_job_gpus(sim, job), st->grant)) {
			st->queue[k++] = job->id;
			continue;
		}
		rc = job->state == HB_JOB_PENDING ? hb_sim_start_job(sim, job, st->grant, err)
						  : hb_sim_regrant(sim, job, st->grant, err);
		if (rc < 0)
			return -1;
	}
	st->n = k;
	return 0;
}

/* Insert at the job's arrival rank (a requeued job goes back to its place). */
static void enqueue(struct hb_sim *sim, struct yarn_state *st, int id)
{
	int at = st->n;

	while (at > 0 && (sim->jobs[st->queue[at - 1]].arrival_s > sim->jobs[id].arrival_s ||
			  (sim->jobs[st->queue[at - 1]].arrival_s == sim->jobs[id].arrival_s && st->queue[at - 1] > id))) {
		st->queue[at] = st->queue[at - 1];
		at--;
	}
	st->queue[at] = id;
	st->n++;
}

static int yarn_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct yarn_state *st = state;

	if (job->id < 0 || job->id >= st->njobs || st->n >= st->njobs)
		return hb_runtime_error(err, "yarn-cs: job %s (id %d) was added after the run started", job->name, job->id);
	/* The type depends on the job and the whole cluster only: decided
	 * once here, not on every drain. */
	if ((st->type[job->id] = job_type(sim, job)) < 0)
		return hb_input_error(err, "yarn-cs: job %s asks for %d GPUs of one type; no GPU type of cluster %s has "
					   "that many", job->name, hb_arbiter_job_gpus(sim, job), sim->cl->name);
	enqueue(sim, st, job->id);
	return drain(sim, st, err);
}

static int yarn_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)job;
	return drain(sim, state, err);
}

static int yarn_requeue(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)err;
	enqueue(sim, state, job->id);
	return 0; /* the engine calls on_capacity next: the queue drains then */
}

static int yarn_capacity(struct hb_sim *sim, void *state, struct hb_error *err)
{
	return drain(sim, state, err);
}

const struct hb_arbiter_ops hb_arbiter_yarn_cs = {
	.name = "yarn-cs",
	.summary = "YARN-CS: FIFO, gang, every job on GPUs of one type (its preferred type when it fits)",
	.init = yarn_init,
	.free = yarn_free,
	.on_arrival = yarn_arrival,
	.on_finish = yarn_finish,
	.on_requeue = yarn_requeue,
	.on_capacity = yarn_capacity,
};
