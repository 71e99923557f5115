/*
 * las.c: least attained service, a preemptive cluster scheduler as a
 * hetbatch policy plugin (include/hetbatch/policy.h).
 *
 * Every round (`--las-round`, 300 s by default) the jobs that have arrived
 * and not finished are ordered by the GPU-seconds they have held so far
 * (fewest first; ties by arrival, then id) and selected in that order
 * while their requested GPUs fit in what the cluster has online; a job
 * that does not fit is skipped, so smaller ones backfill.  Running jobs
 * not selected are suspended (progress kept), selected jobs that hold
 * nothing start or resume on the nodes with most free GPUs.  Each job
 * keeps its requested GPUs and batch (agent_of "fifo").  Unlike Tiresias
 * (two queues, FIFO inside each), the priority is the attained service
 * itself, so a newcomer always overtakes a job that has run; the round
 * length bounds how often that preempts.
 *
 * Build (10 lines with the test's: see README.md):
 *     cc -std=c11 -O2 -shared -fPIC -I "$(hetbatch --includedir)" -o las.so las.c
 * Run:
 *     hetbatch sim --policy-plugin ./las.so --policy las,tiresias --cluster ... --trace ...
 */
#include <stddef.h>
#include <stdlib.h>

#include <hetbatch/policy.h>

HB_PLUGIN_API; /* the host's functions, set before any callback */

struct las_opts {
	double round_s;          /* seconds between rounds */
};

static const struct las_opts las_defaults = { .round_s = 300.0 };

struct las {
	double round_s;
	int *order;              /* scratch: job ids of a round, by priority */
	double *attained;        /* scratch: per job id, GPU-seconds held at this round */
	double *arrival;         /* scratch: per job id, its arrival time */
	int *live;               /* ids of the jobs on_arrival saw and no round found finished yet (not
				    by time: arrivals at a round's instant come after the round), so a
				    round costs the jobs in the system, not the trace's length */
	int nlive;
	int *grant;              /* scratch: one placement, nnodes entries */
	int *none;               /* all-zero grant: suspends a job */
	int cap;                 /* entries of order and attained */
};

static void las_free(void *state)
{
	struct las *st = state;

	if (!st)
		return;
	free(st->order);
	free(st->attained);
	free(st->arrival);
	free(st->live);
	free(st->grant);
	free(st->none);
	free(st);
}

static int las_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	const struct las_opts *o = opts;
	struct las *st = calloc(1, sizeof(*st));
	int nn = hb->nnodes(sim), nj = hb->njobs(sim);

	*state = st;
	if (!st)
		return hb->error(err, "las: out of memory");
	st->round_s = (o ? o : &las_defaults)->round_s;
	st->cap = nj > 0 ? nj : 1;
	st->order = calloc((size_t)st->cap, sizeof(int));
	st->attained = calloc((size_t)st->cap, sizeof(double));
	st->arrival = calloc((size_t)st->cap, sizeof(double));
	st->live = calloc((size_t)st->cap, sizeof(int));
	st->grant = calloc((size_t)(nn > 0 ? nn : 1), sizeof(int));
	st->none = calloc((size_t)(nn > 0 ? nn : 1), sizeof(int));
	if (!st->order || !st->attained || !st->arrival || !st->live || !st->grant || !st->none) {
		las_free(st); /* a failed init releases what it made: free is not called */
		*state = NULL;
		return hb->error(err, "las: out of memory");
	}
	return 0;
}

static int las_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct las *st = state;
	int id = hb->job_id(job);

	if (hb->job_gpus(sim, job) > hb->cluster_gpus(sim))
		return hb->error(err, "las: a job asks for more GPUs than the cluster has");
	if (id < 0 || id >= st->cap || st->nlive >= st->cap)
		return hb->error(err, "las: a job was added after the run started");
	st->live[st->nlive++] = id;
	return 0; /* it waits for the next round */
}

static double las_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	return ((const struct las *)state)->round_s;
}

static int holds(const struct hb_sim_job *job)
{
	int s = hb->job_state(job);

	return s == HB_JOB_RUNNING || s == HB_JOB_RESTARTING;
}

/* qsort has no context argument: the round's keys are reached through
 * this pointer, set just before the sort.  It is per thread, as two
 * simulations on threads sort at once, each with its own state. */
static _Thread_local const struct las *sorting;

static int by_service(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	const struct las *st = sorting;

	if (st->attained[i] != st->attained[j])
		return st->attained[i] < st->attained[j] ? -1 : 1;
	if (st->arrival[i] != st->arrival[j])
		return st->arrival[i] < st->arrival[j] ? -1 : 1;
	return i - j;
}

static int las_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct las *st = state;
	int n = 0, left = hb->online_gpus(sim);

	for (int i = 0; i < st->nlive; i++) {
		int id = st->live[i];
		struct hb_sim_job *job = hb->job(sim, id);
		int s = hb->job_state(job);

		if (s == HB_JOB_DONE || s == HB_JOB_DROPPED)
			continue;
		st->attained[id] = hb->job_attained_gpu_s(sim, job);
		st->arrival[id] = hb->job_arrival_s(job);
		st->live[n] = id; /* keep it for the next round */
		st->order[n++] = id;
	}
	st->nlive = n;
	sorting = st;
	qsort(st->order, (size_t)n, sizeof(int), by_service);
	/* Selected jobs keep a positive sign; the others are negated (-1 - id). */
	for (int i = 0; i < n; i++) {
		int want = hb->job_gpus(sim, hb->job(sim, st->order[i]));

		if (want <= left)
			left -= want;
		else
			st->order[i] = -1 - st->order[i];
	}
	/* Suspend first, so the GPUs they free can be placed below. */
	for (int i = 0; i < n; i++)
		if (st->order[i] < 0) {
			struct hb_sim_job *job = hb->job(sim, -1 - st->order[i]);

			if (holds(job) && hb->regrant(sim, job, st->none, err) < 0)
				return -1;
		}
	for (int i = 0; i < n; i++) {
		struct hb_sim_job *job;
		int rc;

		if (st->order[i] < 0 || holds(job = hb->job(sim, st->order[i])))
			continue;
		if (!hb->place(sim, hb->job_gpus(sim, job), st->grant))
			return hb->error(err, "las: the GPUs selected for a job are not free");
		rc = hb->job_state(job) == HB_JOB_PENDING ? hb->start_job(sim, job, st->grant, err)
							    : hb->regrant(sim, job, st->grant, err);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* A job suspended for a capacity withdrawal: the next round reconsiders it. */
static int las_requeue(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)sim, (void)state, (void)job, (void)err;
	return 0;
}

static const struct hb_arbiter_ops las_arbiter = {
	.name = "las",
	.summary = "least attained service: GPU-seconds held, fewest first, preemptive rounds",
	.init = las_init,
	.free = las_free,
	.on_arrival = las_arrival,
	.round_s = las_round_s,
	.on_round = las_round,
	.on_requeue = las_requeue,
};

/* Its one option: `sim --las-round S`, `las_round_s` in results, `las_round`
 * in a sweep configuration's knobs. */
static const struct hb_pknob las_knobs[] = {
	{ .name = "las-round", .key = "las_round_s", .sweep = "las_round", .type = HB_PKNOB_DOUBLE,
	  .offset = offsetof(struct las_opts, round_s), .min = 1, .max = 86400, .unit = "s",
	  .what = "a number of seconds", .metavar = "S",
	  .help = "the LAS plugin's seconds between rounds (default 300)", .flags = HB_PKNOB_SHARED_ONLY },
	{ 0 },
};
static const struct hb_pknob_table las_options = { las_knobs, sizeof(struct las_opts), &las_defaults };

static const struct hb_plugin_policy las_policies[] = {
	{ .name = "las", .summary = "LAS (plugin): least attained GPU-seconds first, preemptive rounds; "
				    "fixed GPUs and batch",
	  .agent_of = "fifo", .arbiter = &las_arbiter, .options = &las_options },
	{ 0 },
};

HB_PLUGIN_EXPORT("las", las_policies);
