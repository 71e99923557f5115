/*
 * arbiter_fifo.c: first-in first-out with gang placement.
 *
 * Jobs start in submission order, each with the GPUs it asks for (a job
 * that asks for none gets one node's worth: the largest node), all at once
 * (gang) and packed on the fewest nodes (hb_sim_place).  The head of the
 * queue blocks everything behind it until enough GPUs are free: no
 * backfilling, which is the baseline Tiresias and Pollux improve on.  A job
 * asking for more GPUs than the cluster has can never run: an input error.
 */
#include <stdlib.h>

#include "idqueue.h"
#include "policy.h"
#include "sim.h"

struct fifo_state {
	struct hb_idq queue; /* job ids in arrival order */
	int *grant;     /* scratch, nnodes */
};

static void fifo_free(void *state)
{
	struct fifo_state *st = state;

	if (st) {
		hb_idq_free(&st->queue);
		free(st->grant);
		free(st);
	}
}

static int fifo_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct fifo_state *st = calloc(1, sizeof(*st));

	(void)opts;
	if (st)
		st->grant = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));
	if (!st || !st->grant) {
		free(st);
		return hb_runtime_error(err, "fifo: out of memory");
	}
	*state = st;
	return 0;
}

static int drain(struct hb_sim *sim, struct fifo_state *st, struct hb_error *err)
{
	while (st->queue.n > 0) {
		struct hb_sim_job *job = &sim->jobs[hb_idq_front(&st->queue)];

		if (!hb_sim_place(sim, hb_arbiter_job_gpus(sim, job), st->grant))
			return 0; /* head-of-line blocking */
		hb_idq_pop(&st->queue);
		if (hb_sim_start_job(sim, job, st->grant, err) < 0)
			return -1;
	}
	return 0;
}

static int fifo_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct fifo_state *st = state;
	int want = hb_arbiter_job_gpus(sim, job);

	if (want > sim->cl->ngpus)
		return hb_input_error(err, "fifo: job %s asks for %d GPUs, cluster %s has %d", job->name, want,
				      sim->cl->name, sim->cl->ngpus);
	if (hb_idq_push(&st->queue, job->id) < 0)
		return hb_runtime_error(err, "fifo: out of memory");
	return drain(sim, st, err);
}

static int fifo_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)job;
	return drain(sim, state, err);
}

const struct hb_arbiter_ops hb_arbiter_fifo = {
	.name = "fifo",
	.summary = "first-in first-out, gang placement on the fewest nodes, no backfilling",
	.init = fifo_init,
	.free = fifo_free,
	.on_arrival = fifo_arrival,
	.on_finish = fifo_finish,
};
