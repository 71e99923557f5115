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

static struct fifo_state *state(struct hb_sim *sim, struct hb_error *err)
{
	struct fifo_state *st = sim->arbiter_state;

	if (st)
		return st;
	st = calloc(1, sizeof(*st));
	if (st)
		st->grant = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));
	if (!st || !st->grant) {
		free(st);
		hb_runtime_error(err, "fifo: out of memory");
		return NULL;
	}
	sim->arbiter_state = st;
	return st;
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

static int fifo_arrival(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct fifo_state *st = state(sim, err);
	int want = hb_arbiter_job_gpus(sim, job);

	if (!st)
		return -1;
	if (want > sim->cl->ngpus)
		return hb_input_error(err, "fifo: job %s asks for %d GPUs, cluster %s has %d", job->name, want,
				      sim->cl->name, sim->cl->ngpus);
	if (hb_idq_push(&st->queue, job->id) < 0)
		return hb_runtime_error(err, "fifo: out of memory");
	return drain(sim, st, err);
}

static int fifo_finish(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	struct fifo_state *st = state(sim, err);

	(void)job;
	return st ? drain(sim, st, err) : -1;
}

static void fifo_free(struct hb_sim *sim)
{
	struct fifo_state *st = sim->arbiter_state;

	if (st) {
		hb_idq_free(&st->queue);
		free(st->grant);
		free(st);
	}
	sim->arbiter_state = NULL;
}

const struct hb_arbiter_ops hb_arbiter_fifo = {
	.name = "fifo",
	.summary = "first-in first-out, gang placement on the fewest nodes, no backfilling",
	.on_arrival = fifo_arrival,
	.on_finish = fifo_finish,
	.free_state = fifo_free,
};
