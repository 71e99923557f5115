/*
 * agent_elastic.c: a job under the IBM elastic scaler (notes/elastic.md):
 * it runs on the GPUs the scaler granted with the total batch the Job
 * Scalability Analyser chose for that GPU count, b_j^opt(k) (Eq. 2), and an
 * equal local batch on every GPU (synchronous data parallelism, II-D).
 *
 * The JSA answer is the arbiter's (hb_elastic_arbiter_entry) under the
 * elastic arbiter, so the agent runs exactly the batch the DP assumed; under
 * any other arbiter (the dedicated single-job study) the agent builds the
 * same entry itself and keeps it in its state.
 *
 * GPU count: the smallest k <= the grant with the largest S_j(k), which is
 * what the DP gives a job alone on its grant.  Under the elastic arbiter this
 * is the grant itself: the DP never gives a job k GPUs when a smaller count
 * has an equal or larger S_j (fewer GPUs leave the others at least as much,
 * and its ascending ">" keeps the smallest), so the job uses every GPU it was
 * granted.  On the whole cluster (dedicated) it uses k GPUs of it, on the
 * fewest nodes (largest holdings first, ties to the lower index): the scaler
 * leaves GPUs idle when more would lower the scaling factor (§3).
 *
 * Batch: b_opt(k) of the entry, k times a profiled per-GPU batch, which the
 * equal-local-batch layout (hb_agent_ddp_config) realises exactly.  The
 * iteration time is the perf model's for that layout (the simulator's
 * ground truth: overlapped all-reduce, the grant's real placement), not the
 * JSA's estimate.
 *
 * The elastic-fixed variants (IV-B baseline, agent_elastic_fixed.c) share
 * these callbacks: their entries carry a fixed batch (e->b_fixed), which
 * hb_elastic_fixed_config splits over the chosen GPUs instead.
 *
 * A new grant (hb_sim_regrant, the halt/resume of §1) re-plans inside it and
 * is charged as a restart.  The batch never changes between grants: the
 * paper's policy changes the batch only when it rescales (III-C), so there
 * is no adaptation interval, round or epoch hook.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"     /* hb_agent_ddp_config */
#include "elastic_share.h"
#include "policy.h"

struct elastic_agent {
	struct hb_elastic_entry own; /* the JSA answer when the arbiter is not elastic */
	int have_own;
};

void hb_elastic_agent_free_job(void *state, struct hb_sim_job *job)
{
	struct elastic_agent *a = job->agent_state;

	(void)state;
	if (a) {
		if (a->have_own)
			hb_elastic_entry_free(&a->own);
		free(a);
	}
	job->agent_state = NULL;
}

static const struct hb_elastic_entry *entry_of(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	const struct hb_elastic_entry *e = hb_elastic_arbiter_entry(sim, job);
	struct elastic_agent *a = job->agent_state;

	if (e)
		return e;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a) {
			hb_runtime_error(err, "elastic %s: out of memory", job->name);
			return NULL;
		}
		job->agent_state = a;
	}
	if (!a->have_own) {
		if (hb_elastic_entry_build(sim, job, &a->own, err) < 0)
			return NULL;
		a->have_own = 1;
	}
	return &a->own;
}

/* k GPUs of the grant on the fewest nodes. */
static void take_from_grant(const struct hb_sim_job *job, int nnodes, int k, int *alloc)
{
	memset(alloc, 0, sizeof(int) * (size_t)nnodes);
	while (k > 0) {
		int best = -1;

		for (int i = 0; i < nnodes; i++)
			if (alloc[i] == 0 && job->grant[i] > 0 && (best < 0 || job->grant[i] > job->grant[best]))
				best = i;
		if (best < 0)
			return;
		alloc[best] = job->grant[best] < k ? job->grant[best] : k;
		k -= alloc[best];
	}
}

static int plan(struct hb_sim *sim, struct hb_sim_job *job, int how, struct hb_error *err)
{
	const struct hb_elastic_entry *e = entry_of(sim, job, err);
	struct hb_job_config cfg;
	int k = 0, lim, rc;
	long target;
	char why[160];

	if (!e)
		return -1;
	lim = job->ngrant < e->sc.k_max ? job->ngrant : e->sc.k_max;
	for (int g = 1; g <= lim; g++)
		if (isfinite(e->sc.speedup[g]) && (k == 0 || e->sc.speedup[g] > e->sc.speedup[k]))
			k = g;
	if (k == 0)
		return hb_input_error(err, "%s %s: no feasible GPU count in 1..%d of its grant (batch %ld..%ld%s%.0ld, "
				      "per-GPU batch <= %ld%s)", job->agent->name, job->name, job->ngrant, e->b_min,
				      e->b_max, e->b_fixed > 0 ? ", fixed at " : "", e->b_fixed, e->per_gpu_max,
				      e->k_only > 0 ? ", fixed GPU count" : "");
	target = e->sc.batch[k];
	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "elastic %s: out of memory", job->name);
	take_from_grant(job, job->perf->nnodes, k, cfg.alloc);
	/* The IV-B baseline runs its fixed batch, split as evenly as it goes. */
	rc = e->b_fixed > 0 ? hb_elastic_fixed_config(job, e, cfg.alloc, &cfg, err)
			    : hb_agent_ddp_config(job->perf, cfg.alloc, target, &cfg, NULL, err);
	if (rc < 0) {
		hb_error_prefix(err, "%s %s on %d GPUs of %s", job->agent->name, job->name, k, sim->cl->name);
	} else {
		snprintf(why, sizeof(why), "%s: %d of %d granted GPUs, %s %ld, speedup %.3f", job->agent->name, k,
			 job->ngrant, e->b_fixed > 0 ? "fixed batch" : "JSA b_opt", target, e->sc.speedup[k]);
		rc = hb_sim_apply(sim, job, &cfg, how, why, err);
	}
	hb_job_config_free(&cfg);
	return rc;
}

int hb_elastic_agent_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)state;
	return plan(sim, job, HB_APPLY_START, err);
}

int hb_elastic_agent_on_grant(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)state;
	return plan(sim, job, HB_APPLY_RESTART, err);
}

const struct hb_agent_ops hb_agent_elastic = {
	.name = "elastic",
	.summary = "IBM elastic: on its granted GPUs, the JSA's best total batch for that count, equal local batch",
	.interval = NULL,
	.round_s = NULL,
	.start = hb_elastic_agent_start,
	.on_adapt = NULL,
	.on_epoch_end = NULL,
	.on_round = NULL,
	.free_job = hb_elastic_agent_free_job,
	.on_grant = hb_elastic_agent_on_grant,
};
