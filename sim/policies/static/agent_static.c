/*
 * agent_static.c: static data parallelism, the "Static / DP" baseline of
 * notes/jabas.md §5.
 *
 * A fixed global batch on every GPU of the cluster with an equal local
 * batch (plain DP, no WDP): B_L is limited by the GPU with the least memory,
 * gradient accumulation carries what B_L cannot, and the slowest GPU sets
 * the pace (§5 "Porting baselines": "Static DDP: B_G fixed, all GPUs").
 *
 * In trace replay the job's requested batch (hb_sim_job_request) and the
 * arbiter's grant replace these: the TunedJobs baselines of Pollux's study.
 * The batch is the job's min_gbs, i.e. minB_G on this cluster after the
 * model's overrides: the artifact starts at minB_G (§6 Table 4 note,
 * §10.13: B_G^init = minB_G), so Static is what the adaptive policies would
 * do if they never adapted.  The realised B_G is hb_ddp_plan's rounding of
 * that target to B_L·N_G·(n_GA+1) with B_L a multiple of minB_L, and may
 * therefore be larger (ResNet-50 on cluster A: 16 GPUs x minB_L 32 = 512 for
 * a minB_G of 256).  The agent never adapts: no interval, no round, nothing
 * at epoch ends.
 */
#include <stdio.h>

#include "agent_util.h"   /* hb_agent_alloc_granted, hb_agent_ddp_config */
#include "fidelity.h"     /* HB_FIDELITY_SIA */
#include "policy.h"
#include "sim.h"

static int static_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct hb_job_config cfg;
	long target = job->req_batch > 0 ? job->req_batch : job->min_gbs;
	char why[128];
	int rc;

	(void)state;
	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "static %s: out of memory", job->name);
	hb_agent_alloc_granted(job, cfg.alloc);
	/* Pollux fidelity: TunedJobs' batch as the artifact splits it. */
	if (job->fid_agents)
		rc = hb_agent_fid_config(job, cfg.alloc, target, &cfg, err);
	else if (sim->opts.fidelity == HB_FIDELITY_SIA &&
		 (rc = hb_agent_sia_fixed_config(job, cfg.alloc, target, 0, &cfg, err)) != 0)
		rc = rc < 0 ? -1 : 0; /* Sia fidelity: its simulator's split, where it applies */
	else
		rc = hb_agent_ddp_config(job->perf, cfg.alloc, target, &cfg, NULL, err);
	if (rc < 0) {
		hb_error_prefix(err, "static %s on %s", job->name, sim->cl->name);
	} else {
		snprintf(why, sizeof(why), "static: target B_G %ld (%s), equal B_L on the %d granted GPUs", target,
			 job->req_batch > 0 ? "requested" : "minB_G", job->ngrant);
		rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_START, why, err);
	}
	hb_job_config_free(&cfg);
	return rc;
}

const struct hb_agent_ops hb_agent_static = {
	.name = "static",
	.summary = "fixed global batch (minB_G), equal local batch on all GPUs, never adapts",
	.interval = NULL,     /* sim.c treats a missing callback as "none" */
	.round_s = NULL,
	.start = static_start,
	.on_adapt = NULL,
	.on_epoch_end = NULL,
	.on_round = NULL,
	.free_job = NULL,
};
