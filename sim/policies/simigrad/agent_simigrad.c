/*
 * agent_simigrad.c: SimiGrad ported to a heterogeneous cluster, the
 * baseline of notes/jabas.md §5.
 *
 * What the JABAS authors ran (§5 "Baselines evaluated"): SimiGrad's
 * similarity-driven batch with the same γ, p, α, minB_G and maxB_G as JABAS
 * (Table 4), on all GPUs of the cluster for the whole run (no auto-scaling),
 * with the same B_L on every GPU (plain DP: B_L limited by the smallest
 * memory, the slowest GPU a straggler) and gradient accumulation when the
 * target does not fit (§2.1, §10.17).  The layout is hb_ddp_plan's
 * (agent_util.h).
 *
 * Every p iterations (model->adapt_interval, or --interval) the agent
 * observes Φ, the cosine similarity of the two half-batch gradients
 * (hb_sim_observe_similarity), and applies Algorithm 1 (§4.1):
 * Φ < γ → B_G(1+α), Φ > γ → B_G(1−α), clipped to [minB_G, maxB_G].  The run
 * starts at minB_G (§6 Table 4 note, §10.13).
 *
 * Decision: the rule acts on an unrounded target, not on the realised B_G.
 * The artifact multiplies the realised batch (its IIDP layout moves in steps
 * of 2 B_L, finer than α once B_G is a few hundred), but an equal-B_L layout
 * moves in steps of minB_L·N_G·(n_GA+1): 512 samples for ResNet-50 on
 * cluster A, so B_G(1±α) of the realised batch would round back to the same
 * B_G forever and SimiGrad could never adapt.  SimiGrad's Algorithm 1 keeps
 * B as a real number; the target carries the composed (1±α) steps and the
 * realised B_G is hb_ddp_plan's rounding of round(target) (§10.7: the
 * realised change may be larger than α, or a step may be skipped).  A plan
 * whose realised B_G does not move in the direction Φ asked for (rounding
 * keeps it, the bounds clip it, or a change of accumulation steps rounds it
 * the other way) is not applied: the configuration stays and an "adapt"
 * event records why.  A plan that moves is applied in place
 * (HB_APPLY_INPLACE: same GPUs, new B_L or GA).
 *
 * Learning rate: the artifact rescales it by sqrt(B_G/minB_G) (§4.1 [C],
 * §10.8).  The simulated convergence (sim/stats.h) counts progress as
 * B·E(B) per iteration whatever the learning rate, so the rule has no
 * effect here and is not modelled.
 *
 * Overhead: the similarity measurement (a half-group all-reduce of every
 * bucket plus an all-gather of the model between two ranks, §4.1 [D]) runs
 * once every p iterations; when sim->opts.similarity_cost is set its cost
 * (hb_sim_similarity_cost_s) is spread as cost/p over each iteration.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent_util.h"   /* hb_simigrad_step, hb_agent_ddp_config, hb_agent_interval */
#include "policy.h"
#include "sim.h"

struct simigrad_state {
	long p;                  /* adaptation interval, iterations */
	double target;           /* unrounded SimiGrad target B_G */
};

int hb_simigrad_decide(const struct hb_perf *perf, const int *alloc, const struct hb_simigrad_params *sp,
		       double target, long cur_gbs, double phi, struct hb_job_config *cfg,
		       struct hb_simigrad_decision *d, struct hb_error *err)
{
	const char *rel = phi < sp->gamma ? "<" : phi > sp->gamma ? ">" : "=";
	double want;
	int moved;

	d->apply = 0;
	d->target = hb_simigrad_step(sp, target, phi, &d->dir);
	d->planned_gbs = cur_gbs;
	if (d->dir == HB_SIMIGRAD_HOLD) {
		snprintf(d->why, sizeof(d->why), "similarity %.4f %s gamma %.4g: hold B_G %ld", phi, rel, sp->gamma,
			 cur_gbs);
		return 0;
	}
	want = floor(d->target + 0.5);
	if (hb_agent_ddp_config(perf, alloc, want < 1.0 ? 1L : (long)want, cfg, NULL, err) < 0)
		return -1;
	d->planned_gbs = cfg->global_bs;
	moved = d->dir == HB_SIMIGRAD_GROW ? d->planned_gbs > cur_gbs : d->planned_gbs < cur_gbs;
	if (moved) {
		d->apply = 1;
		snprintf(d->why, sizeof(d->why), "similarity %.4f %s gamma %.4g: B_G %ld -> %ld (target %.0f)", phi,
			 rel, sp->gamma, cur_gbs, d->planned_gbs, d->target);
	} else {
		snprintf(d->why, sizeof(d->why), "similarity %.4f %s gamma %.4g: target %.0f%s, DDP plan B_G %ld: keep %ld",
			 phi, rel, sp->gamma, d->target,
			 d->target >= (double)sp->max_gbs   ? " (maxB_G)"
			 : d->target <= (double)sp->min_gbs ? " (minB_G)"
							    : "",
			 d->planned_gbs, cur_gbs);
	}
	return 0;
}

static long simigrad_interval(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job)
{
	(void)state;
	return hb_agent_interval(sim, NULL, job);
}

static double similarity_overhead_s(const struct hb_sim *sim, const struct hb_sim_job *job, const int *alloc,
				    long p)
{
	return sim->opts.similarity_cost ? hb_sim_similarity_cost_s(sim, job, alloc) / (double)p : 0.0;
}

static void simigrad_free_job(void *state, struct hb_sim_job *job)
{
	(void)state;
	free(job->agent_state);
	job->agent_state = NULL;
}

static int simigrad_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct simigrad_state *st = calloc(1, sizeof(*st));
	struct hb_job_config cfg;
	char why[96];
	int rc;

	(void)state;
	if (!st)
		return hb_runtime_error(err, "simigrad %s: out of memory", job->name);
	job->agent_state = st;
	st->p = hb_agent_interval(sim, NULL, job);
	if (st->p < 1)
		return hb_input_error(err, "simigrad %s: adaptation interval %ld must be >= 1", job->name, st->p);
	if (job->min_gbs < 1 || job->max_gbs < job->min_gbs)
		return hb_input_error(err, "simigrad %s: global batch bounds [%ld, %ld] are not a range", job->name,
				      job->min_gbs, job->max_gbs);
	st->target = (double)job->min_gbs;
	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "simigrad %s: out of memory", job->name);
	hb_agent_alloc_granted(job, cfg.alloc);
	rc = hb_agent_ddp_config(job->perf, cfg.alloc, job->min_gbs, &cfg, NULL, err);
	if (rc < 0) {
		hb_error_prefix(err, "simigrad %s on %s", job->name, sim->cl->name);
	} else {
		cfg.overhead_per_iter_s = similarity_overhead_s(sim, job, cfg.alloc, st->p);
		snprintf(why, sizeof(why), "simigrad: target B_G^init = minB_G %ld, equal B_L on all GPUs, p %ld", job->min_gbs, st->p);
		rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_START, why, err);
	}
	hb_job_config_free(&cfg);
	return rc;
}

static int simigrad_on_adapt(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct simigrad_state *st = job->agent_state;
	const struct hb_simigrad_params sp = {
		.gamma = job->gamma,
		.alpha = job->model->adapt_rate,
		.min_gbs = job->min_gbs,
		.max_gbs = job->max_gbs,
	};
	struct hb_simigrad_decision d;
	struct hb_job_config cfg;
	double phi;
	long replay;
	int rc = 0;

	(void)state;
	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "simigrad %s: out of memory", job->name);
	if (hb_sim_replay_gbs(sim, job, &replay)) {
		/* Replay mode: the recorded schedule replaces the similarity rule. */
		rc = hb_agent_ddp_config(job->perf, job->cfg.alloc, replay, &cfg, NULL, err);
		if (rc == 0 && cfg.global_bs != job->cfg.global_bs) {
			char why[96];

			cfg.overhead_per_iter_s = similarity_overhead_s(sim, job, cfg.alloc, st->p);
			snprintf(why, sizeof(why), "replay: B_G %ld -> %ld", job->cfg.global_bs, cfg.global_bs);
			rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_INPLACE, why, err);
		}
		st->target = (double)replay;
		hb_job_config_free(&cfg);
		return rc;
	}
	phi = hb_sim_observe_similarity(sim, job);
	if (hb_simigrad_decide(job->perf, job->cfg.alloc, &sp, st->target, job->cfg.global_bs, phi, &cfg, &d,
			       err) < 0) {
		hb_error_prefix(err, "simigrad %s at iteration %.0f", job->name, job->iters);
		rc = -1;
	} else {
		st->target = d.target;
		if (d.apply) {
			cfg.overhead_per_iter_s = similarity_overhead_s(sim, job, cfg.alloc, st->p);
			rc = hb_sim_apply(sim, job, &cfg, HB_APPLY_INPLACE, d.why, err);
		} else if (d.dir != HB_SIMIGRAD_HOLD) {
			hb_sim_note(sim, job, "adapt", "%s", d.why);
		}
	}
	hb_job_config_free(&cfg);
	return rc;
}

const struct hb_agent_ops hb_agent_simigrad = {
	.name = "simigrad",
	.summary = "similarity-driven B_G every p iterations (Phi vs gamma, x(1 +- alpha)), equal B_L on all GPUs",
	.interval = simigrad_interval,
	.round_s = NULL,      /* sim.c treats a missing callback as "none" */
	.start = simigrad_start,
	.on_adapt = simigrad_on_adapt,
	.on_epoch_end = NULL,
	.on_round = NULL,
	.free_job = simigrad_free_job,
};
