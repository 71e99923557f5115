/*
 * arbiter_jabas.c: "jabas-share", JABAS's auto-scaling inside a shared
 * cluster (notes/jabas.md §4.3 moved from one dedicated cluster to many jobs).
 *
 * JABAS decides its GPUs itself, once per epoch (§4.3); an arbiter therefore
 * does not hand it GPUs the way PolluxSched does, it bounds the choice.  The
 * rule, and why:
 *
 *  - Admission: first in, first out, head-of-line blocking, each job gang-
 *    placed on its request (hb_arbiter_job_gpus) packed on the fewest nodes,
 *    as sim/policies/fifo/arbiter_fifo.c.  One difference: JABAS runs on GPU pairs (the
 *    two similarity groups mirror each other, §3 and §4.1; the IIDP solver
 *    refuses an odd count on a node), so a request is rounded UP to an even
 *    count (a 1-GPU job gets a pair: it gets at least what it asked for) and
 *    placed pair by pair.  The job's agent then runs its initial phase
 *    (§4.3, B_G^init) over the candidates inside that grant and hands back
 *    the GPUs its argmin does not use, which the queue gets at once.
 *  - Lending: at each of its epoch ends a job re-chooses its allocation among
 *    those inside an OFFER (hb_sim_offer):
 *      nobody queued: its grant plus free GPUs (on its own nodes, then on
 *        the nodes with the most free GPUs, up to OFFER_MAX_NODES), at most
 *        max(held, request, fair share) GPUs, fair share = the cluster's
 *        pairs split over the running jobs, rounded up (in GPUs).  The cap
 *        keeps the first job to reach an epoch end from taking every free
 *        GPU while the others stay at their request; rounded up, the shares
 *        cover the cluster, so GPUs stay free only when no job's argmin
 *        wants them (a floor left the remainder idle while every job sat at
 *        its share).  A job already above the cap keeps what it holds
 *        (taking it away would idle it: nobody waits).
 *      somebody queued: its grant only, at most min(held, request) GPUs: a
 *        job above its request shrinks back to (at most) it, and the GPUs
 *        it hands back start the queue (on_release).  Nothing is lent while
 *        a job waits, so a waiting job is never overtaken by a lender.
 *    A job is never preempted and never takes GPUs another job holds; the
 *    allocation changes only at the job's own epoch ends, and only when its
 *    argmin moves (checkpoint-restart, charged), which is JABAS's rule.  The
 *    price is latency: a queued job waits for the next epoch end of the jobs
 *    lent GPUs, at most one epoch each.  The lending is work-conserving in
 *    the sense that a free GPU is offered to every job that reaches an epoch
 *    end while nobody waits; whether it takes it is JABAS's epoch-time
 *    argmin (it does not take GPUs that would not shorten its epoch).
 *
 * Rejected alternatives: reclaiming lent GPUs at an arrival (a preemption
 * outside the lender's epoch end, against JABAS's rule); lending without a
 * cap (the first job to reach an epoch end takes everything, later jobs
 * start and stay at their request).
 */
#include <stdlib.h>

#include "idqueue.h"
#include "policy.h"
#include "sim.h"

/* Most nodes an offer spans (its own nodes may make it more): candidate
 * allocations are enumerated over the offer. */
#define OFFER_MAX_NODES 8

struct jabas_share {
	struct hb_idq queue; /* job ids in arrival order */
	int running;    /* jobs started and not finished */
	int pairs;      /* GPU pairs of the cluster */
	int *grant;     /* scratch, nnodes */
};

static void share_free(void *state)
{
	struct jabas_share *st = state;

	if (st) {
		hb_idq_free(&st->queue);
		free(st->grant);
		free(st);
	}
}

static int share_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct jabas_share *st = calloc(1, sizeof(*st));

	(void)opts;
	if (st)
		st->grant = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));
	if (!st || !st->grant) {
		free(st);
		return hb_runtime_error(err, "jabas-share: out of memory");
	}
	for (int i = 0; i < sim->cl->nnodes; i++)
		st->pairs += sim->cl->nodes[i].ngpus / 2;
	*state = st;
	return 0;
}

/* The request in GPUs, rounded up to whole pairs. */
static int request_even(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	int r = hb_arbiter_job_gpus(sim, job);

	return r < 2 ? 2 : r + (r & 1);
}

/* Gang placement of n (even) GPUs in pairs on the fewest nodes: repeatedly
 * the node with the most free pairs, ties to the lower index (hb_sim_place
 * in pairs).  1 and grant filled, or 0 when n/2 pairs are not free. */
static int place_pairs(const struct hb_sim *sim, int n, int *grant)
{
	int left = n / 2, total = 0, nn = sim->cl->nnodes;

	for (int i = 0; i < nn; i++) {
		grant[i] = 0;
		total += sim->free_gpus[i] / 2;
	}
	if (left < 1 || total < left)
		return 0;
	while (left > 0) {
		int best = -1;

		for (int i = 0; i < nn; i++)
			if (!grant[i] && sim->free_gpus[i] >= 2 &&
			    (best < 0 || sim->free_gpus[i] / 2 > sim->free_gpus[best] / 2))
				best = i;
		grant[best] = 2 * (sim->free_gpus[best] / 2 < left ? sim->free_gpus[best] / 2 : left);
		left -= grant[best] / 2;
	}
	return 1;
}

static int drain(struct hb_sim *sim, struct jabas_share *st, struct hb_error *err)
{
	while (st->queue.n > 0) {
		struct hb_sim_job *job = &sim->jobs[hb_idq_front(&st->queue)];

		if (!place_pairs(sim, request_even(sim, job), st->grant))
			return 0; /* head-of-line blocking */
		hb_idq_pop(&st->queue);
		st->running++;
		if (hb_sim_start_job(sim, job, st->grant, err) < 0)
			return -1;
	}
	return 0;
}

static int share_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct jabas_share *st = state;
	int want;

	want = request_even(sim, job);
	if (want > 2 * st->pairs)
		return hb_input_error(err, "jabas-share: job %s asks for %d GPUs (%d in pairs), cluster %s has %d pairs",
				      job->name, hb_arbiter_job_gpus(sim, job), want, sim->cl->name, st->pairs);
	if (hb_idq_push(&st->queue, job->id) < 0)
		return hb_runtime_error(err, "jabas-share: out of memory");
	return drain(sim, st, err);
}

static int share_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct jabas_share *st = state;

	(void)job;
	st->running--;
	return drain(sim, st, err);
}

static int share_release(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)job;
	return drain(sim, state, err);
}

static void share_offer(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job, int *offer,
			int *max_gpus)
{
	const struct jabas_share *st = state;
	int req = request_even(sim, job), held = job->ngrant, total = 0;

	if (st->queue.n > 0) {
		for (int i = 0; i < sim->cl->nnodes; i++)
			offer[i] = job->grant[i];
		*max_gpus = held < req ? held : req;
		return;
	}
	{
		int running = st->running > 0 ? st->running : 1;
		int fair = 2 * ((st->pairs + running - 1) / running);
		int cap = req > fair ? req : fair, nodes = 0;

		if (held > cap)
			cap = held;
		/* The job's own nodes with their free GPUs, then the nodes with the
		 * most free GPUs (ties to the lower index) until the offer holds
		 * the cap or spans OFFER_MAX_NODES nodes: the agent enumerates its
		 * candidates over the offer, and on a Philly-sized cluster all
		 * free GPUs would make that set astronomically large. */
		for (int i = 0; i < sim->cl->nnodes; i++) {
			offer[i] = job->grant[i] > 0 ? job->grant[i] + sim->free_gpus[i] : 0;
			total += offer[i];
			nodes += offer[i] > 0;
		}
		if (total < cap && nodes < OFFER_MAX_NODES) {
			/* The nodes it may add, in the order they are added (most
			 * free GPUs, ties to the lower index), found in one pass:
			 * the first `room` of that order, kept sorted (a pass per
			 * added node was 4 % of a JABAS replay). */
			int top[OFFER_MAX_NODES], ntop = 0, room = OFFER_MAX_NODES - nodes;

			for (int i = 0; i < sim->cl->nnodes; i++) {
				const int f = sim->free_gpus[i];
				int at;

				if (offer[i] != 0 || f < 2 || (ntop == room && f <= sim->free_gpus[top[ntop - 1]]))
					continue;
				at = ntop < room ? ntop++ : ntop - 1;
				while (at > 0 && sim->free_gpus[top[at - 1]] < f) {
					top[at] = top[at - 1];
					at--;
				}
				top[at] = i;
			}
			for (int k = 0; k < ntop && total < cap; k++) {
				offer[top[k]] = sim->free_gpus[top[k]];
				total += offer[top[k]];
			}
		}
		*max_gpus = cap < total ? cap : total;
	}
}

const struct hb_arbiter_ops hb_arbiter_jabas = {
	.name = "jabas-share",
	.summary = "FIFO admission in GPU pairs; at epoch ends jobs re-choose GPUs: free ones lent up to a fair share "
		   "while nobody waits, back to the request when somebody does",
	.init = share_init,
	.free = share_free,
	.on_arrival = share_arrival,
	.on_finish = share_finish,
	.offer = share_offer,
	.on_release = share_release,
};
