/*
 * fifo_plugin.c: the built-in fifo arbiter (sim/policies/fifo/) written
 * again against the plugin API only, as policy "fifo-plugin".  Its runs
 * must equal fifo's number for number (test_plugin.py): whatever the API
 * table does differently from the engine's own calls shows up there.
 */
#include <stdlib.h>

#include <hetbatch/policy.h>

HB_PLUGIN_API;

struct fifo {
	int *queue;     /* job ids in arrival order, [head, tail) */
	int head, tail;
	int *grant;     /* scratch, nnodes */
};

static void fifo_free(void *state)
{
	struct fifo *st = state;

	if (st) {
		free(st->queue);
		free(st->grant);
		free(st);
	}
}

static int fifo_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct fifo *st = calloc(1, sizeof(*st));
	int nj = hb->njobs(sim), nn = hb->nnodes(sim);

	(void)opts;
	*state = NULL;
	if (!st || !(st->queue = calloc((size_t)(nj > 0 ? nj : 1), sizeof(int))) ||
	    !(st->grant = calloc((size_t)(nn > 0 ? nn : 1), sizeof(int)))) {
		fifo_free(st); /* a failed init releases what it made */
		return hb->error(err, "fifo-plugin: out of memory");
	}
	*state = st;
	return 0;
}

static int drain(struct hb_sim *sim, struct fifo *st, struct hb_error *err)
{
	while (st->head < st->tail) {
		struct hb_sim_job *job = hb->job(sim, st->queue[st->head]);

		if (!hb->place(sim, hb->job_gpus(sim, job), st->grant))
			return 0;
		st->head++;
		if (hb->start_job(sim, job, st->grant, err) < 0)
			return -1;
	}
	return 0;
}

static int fifo_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct fifo *st = state;

	if (hb->job_gpus(sim, job) > hb->cluster_gpus(sim))
		return hb->error(err, "fifo-plugin: a job asks for more GPUs than the cluster has");
	st->queue[st->tail++] = hb->job_id(job);
	return drain(sim, st, err);
}

static int fifo_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)job;
	return drain(sim, state, err);
}

static const struct hb_arbiter_ops fifo_arbiter = {
	.name = "fifo-plugin",
	.summary = "fifo through the plugin API",
	.init = fifo_init,
	.free = fifo_free,
	.on_arrival = fifo_arrival,
	.on_finish = fifo_finish,
	.no_capacity = "fifo-plugin: a test policy, capacity changes not handled",
};

static const struct hb_plugin_policy policies[] = {
	{ .name = "fifo-plugin", .summary = "FIFO through the plugin API (test)", .agent_of = "fifo",
	  .arbiter = &fifo_arbiter },
	{ 0 },
};

HB_PLUGIN_EXPORT("fifo-plugin", policies);
