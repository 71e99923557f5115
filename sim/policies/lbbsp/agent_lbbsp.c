/*
 * agent_lbbsp.c: LB-BSP (Chen et al., SoCC '20), the fixed-batch
 * heterogeneous baseline of Cannikin §5.1.
 *
 * The job keeps one total batch for its whole run and starts from an even
 * split; at every epoch end it makes one LB-BSP round (solver/lbbsp.h): Δ = 5
 * samples move from the GPU with the longest compute time to the one with
 * the shortest, as long as that lowers their maximum.  Compute time is
 * a(b) + P(b) without communication: LB-BSP ignores the overlap of
 * gradient all-reduce with backpropagation (Cannikin §5.2.1).
 *
 * Decisions:
 *  - The total batch is static DDP's (agent_static.c): the realised B_G of
 *    the job's request, or of minB_G, so LB-BSP and DDP run the same B and
 *    differ only in the split.  It is clipped into what the GPUs hold
 *    without accumulation (LB-BSP has none).
 *  - One round per epoch.  LB-BSP's paper adapts "semi-dynamically"; one Δ
 *    move per epoch is what Cannikin Fig. 9 shows (more than ten epochs to
 *    converge from the even split on cluster A at B = 128).
 *  - The iteration time is the same truth the optperf agent runs on: Eq. 7
 *    of OptPerf's cluster fitted to the job's profile
 *    (hb_optperf_from_perf), so overlap does happen, LB-BSP just does not
 *    plan for it.
 *  - No GNS monitoring (fixed batch), so no monitoring overhead; each
 *    re-split is applied in place (HB_APPLY_INPLACE, the reconfiguration
 *    cost).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"       /* hb_agent_alloc_granted, hb_agent_ddp_config */
#include "lbbsp.h"            /* hb_even_split, hb_lbbsp_step, HB_LBBSP_DELTA */
#include "optperf.h"          /* hb_optperf_iter_time */
#include "optperf_profile.h"  /* hb_optperf_from_perf */
#include "policy.h"
#include "sim.h"

struct lbbsp_state {
	struct hb_optperf_input truth; /* the job's GPUs as OptPerf's Eq. 7 model */
	long *local;                   /* split in use, truth.cl.n entries */
	long total;                    /* the fixed total batch */
	long rounds;                   /* rounds that moved samples */
	int *alloc;                    /* GPUs per node */
};

static void lbbsp_free(void *state, struct hb_sim_job *job)
{
	struct lbbsp_state *st = job->agent_state;

	(void)state;
	if (!st)
		return;
	hb_optperf_input_free(&st->truth);
	free(st->local);
	free(st->alloc);
	free(st);
	job->agent_state = NULL;
}

static int apply_split(struct hb_sim *sim, struct hb_sim_job *job, struct lbbsp_state *st, int how,
		       const char *why, struct hb_error *err)
{
	size_t n = st->truth.cl.n;
	struct hb_job_config cfg;
	double *dl = malloc(n * sizeof(double));
	int equal = 1, rc = -1;
	size_t used;

	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!dl || !cfg.alloc || !(cfg.gpu_local_bs = malloc(n * sizeof(int)))) {
		hb_runtime_error(err, "lbbsp %s: out of memory", job->name);
		goto out;
	}
	memcpy(cfg.alloc, st->alloc, sizeof(int) * (size_t)job->perf->nnodes);
	for (size_t i = 0; i < n; i++) {
		dl[i] = (double)st->local[i];
		cfg.gpu_local_bs[i] = (int)st->local[i];
		if (st->local[i] != st->local[0])
			equal = 0;
	}
	if (equal) {
		free(cfg.gpu_local_bs);
		cfg.gpu_local_bs = NULL;
	}
	cfg.ngpus = (int)n;
	cfg.global_bs = st->total;
	cfg.local_bs = equal ? (int)st->local[0] : 0;
	cfg.iter_s = hb_optperf_iter_time(&st->truth.cl, dl);
	cfg.overhead_per_iter_s = 0.0;
	cfg.eff_factor = hb_stats_unequal_factor(job->stats, dl, (int)n);
	used = (size_t)snprintf(cfg.layout, sizeof(cfg.layout), "LB-BSP B %ld:", st->total);
	for (size_t i = 0; i < n && used < sizeof(cfg.layout); i++)
		used += (size_t)snprintf(cfg.layout + used, sizeof(cfg.layout) - used, " %ld", st->local[i]);
	rc = hb_sim_apply(sim, job, &cfg, how, why, err);
out:
	free(dl);
	hb_job_config_free(&cfg);
	return rc;
}

static int lbbsp_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct lbbsp_state *st;
	struct hb_job_config ddp;
	long target = job->req_batch > 0 ? job->req_batch : job->min_gbs, hi = 0, lo = 0;
	char why[160];
	int rc;

	lbbsp_free(state, job);
	if (!(st = calloc(1, sizeof(*st))) || !(st->alloc = malloc(sizeof(int) * (size_t)job->perf->nnodes))) {
		free(st);
		return hb_runtime_error(err, "lbbsp %s: out of memory", job->name);
	}
	job->agent_state = st;
	hb_agent_alloc_granted(job, st->alloc);
	hb_job_config_init(&ddp, job->perf->nnodes);
	rc = ddp.alloc ? hb_agent_ddp_config(job->perf, st->alloc, target, &ddp, NULL, err)
		       : hb_runtime_error(err, "lbbsp %s: out of memory", job->name);
	st->total = ddp.global_bs;
	hb_job_config_free(&ddp);
	if (rc < 0 || hb_optperf_from_perf(job->perf, st->alloc, &st->truth, err) < 0)
		goto fail;
	for (size_t i = 0; i < st->truth.cl.n; i++) {
		lo += st->truth.cl.node[i].min_batch;
		hi += st->truth.cl.node[i].max_batch;
	}
	if (st->total > hi)
		st->total = hi;
	if (st->total < lo)
		st->total = lo;
	if (!(st->local = malloc(st->truth.cl.n * sizeof(long)))) {
		hb_runtime_error(err, "lbbsp %s: out of memory", job->name);
		goto fail;
	}
	if (hb_even_split(&st->truth.cl, st->total, st->local, err) < 0)
		goto fail;
	snprintf(why, sizeof(why), "lbbsp: fixed B %ld (static DDP's for target %ld), even split on %zu GPUs",
		 st->total, target, st->truth.cl.n);
	if (apply_split(sim, job, st, HB_APPLY_START, why, err) < 0)
		goto fail;
	return 0;
fail:
	hb_error_prefix(err, "lbbsp %s on %s", job->name, sim->cl->name);
	lbbsp_free(state, job);
	return -1;
}

static int lbbsp_on_epoch_end(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct lbbsp_state *st = job->agent_state;
	double before;
	long moved;
	char why[160];

	(void)state;
	if (!st)
		return hb_runtime_error(err, "lbbsp %s: epoch end before start", job->name);
	before = hb_lbbsp_max_compute(&st->truth.cl, st->local);
	if (hb_lbbsp_step(&st->truth.cl, HB_LBBSP_DELTA, st->local, &moved, err) < 0)
		return -1;
	if (!moved) {
		hb_sim_note(sim, job, "adapt", "epoch %ld: lbbsp balanced after %ld rounds", job->epoch, st->rounds);
		return 0;
	}
	st->rounds++;
	snprintf(why, sizeof(why), "lbbsp round %ld: %ld samples slowest -> fastest, max compute %.4f -> %.4f s",
		 st->rounds, moved, before, hb_lbbsp_max_compute(&st->truth.cl, st->local));
	return apply_split(sim, job, st, HB_APPLY_INPLACE, why, err);
}

const struct hb_agent_ops hb_agent_lbbsp = {
	.name = "lbbsp",
	.summary = "LB-BSP: fixed global batch, one delta = 5 re-balancing round per epoch, overlap ignored",
	.interval = NULL,
	.round_s = NULL,
	.start = lbbsp_start,
	.on_adapt = NULL,
	.on_epoch_end = lbbsp_on_epoch_end,
	.on_round = NULL,
	.free_job = lbbsp_free,
};
