/*
 * agent_util.c: helpers shared by the job agents (agent_util.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"
#include "fidelity.h"
#include "perf_measured.h"  /* hb_perf_measured_step */

long hb_agent_interval(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job)
{
	(void)state;
	if (sim->opts.interval > 0)
		return sim->opts.interval;
	return job->model->adapt_interval;
}

int hb_agent_alloc_all(const struct hb_perf *perf, int *alloc)
{
	int n = 0;

	for (int i = 0; i < perf->nnodes; i++) {
		alloc[i] = perf->nodes[i].ngpus;
		n += alloc[i];
	}
	return n;
}

int hb_agent_alloc_granted(const struct hb_sim_job *job, int *alloc)
{
	for (int i = 0; i < job->perf->nnodes; i++)
		alloc[i] = job->grant[i];
	return job->ngrant;
}

int hb_agent_owns_cluster(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	for (int i = 0; i < sim->cl->nnodes; i++)
		if (job->grant[i] != sim->cl->nodes[i].ngpus)
			return 0;
	return 1;
}

int hb_agent_ddp_config(const struct hb_perf *perf, const int *alloc, long target_gbs, struct hb_job_config *cfg,
			struct hb_ddp_result *plan, struct hb_error *err)
{
	struct hb_ddp_result r;

	if (!cfg->alloc)
		return hb_runtime_error(err, "DDP configuration: the configuration has no allocation array");
	if (hb_ddp_plan(perf, alloc, target_gbs, &r, err) < 0) {
		hb_error_prefix(err, "DDP configuration for B_G %ld", target_gbs);
		return -1;
	}
	if (!r.found)
		return hb_input_error(err, "DDP configuration for B_G %ld: %s", target_gbs, r.why);
	if (cfg->alloc != alloc)
		memcpy(cfg->alloc, alloc, sizeof(int) * (size_t)perf->nnodes);
	cfg->ngpus = r.n_gpus;
	cfg->global_bs = r.global_bs;
	cfg->local_bs = r.local_bs;
	cfg->iter_s = r.iter_s;
	cfg->overhead_per_iter_s = 0.0;
	cfg->eff_factor = 1.0;
	snprintf(cfg->layout, sizeof(cfg->layout), "DDP B_L %d x %d GPUs, GA %d, pace %s", r.local_bs, r.n_gpus,
		 r.ga_steps, r.slowest_node >= 0 ? perf->nodes[r.slowest_node].name : "?");
	if (plan)
		*plan = r;
	return 0;
}

int hb_agent_fid_iter_s(const struct hb_sim_job *job, const int *alloc, int node_order, int atomic, int accum,
			double *iter_s, double *accum_s, struct hb_error *err)
{
	const struct hb_perf *perf = job->perf;
	double t0, t1;
	int slowest;

	const enum hb_place_order order = node_order ? HB_PLACE_AS_GIVEN : HB_PLACE_DESCENDING;
	/* the allocation's type's rows, as the artifact's per-type Application */
	const struct hb_perf_measured *m = hb_perf_measured_of(perf, alloc, NULL);

	if (hb_perf_measured_step_ordered(m, alloc, perf->nnodes, order, atomic, accum, iter_s)) {
		/* step - sync: what one extra micro-step costs (Job.step's accum_time). */
		if (accum_s && hb_perf_measured_step_ordered(m, alloc, perf->nnodes, order, atomic, 0, &t0) &&
		    hb_perf_measured_step_ordered(m, alloc, perf->nnodes, order, atomic, 1, &t1))
			*accum_s = t1 - t0;
		return 0;
	}
	if (hb_ddp_iter_time(perf, alloc, atomic, accum, iter_s, &slowest, err) < 0)
		return -1;
	if (accum_s) {
		if (hb_ddp_iter_time(perf, alloc, atomic, 0, &t0, &slowest, err) < 0 ||
		    hb_ddp_iter_time(perf, alloc, atomic, 1, &t1, &slowest, err) < 0)
			return -1;
		*accum_s = t1 - t0;
	}
	return 0;
}

/* cfg for an artifact's split (atomic x n GPUs, accum extra micro-steps,
 * realised batch b) on alloc, timed by the artifact's lookup
 * (perf->measured->artifact: a measured placement, else its 3-D
 * interpolation; the perf model only where neither covers the layout);
 * whose: "Pollux" or "Sia", for the layout's text. */
static int artifact_config(const struct hb_sim_job *job, const int *alloc, int n, int atomic, int accum, long b,
			   const char *whose, struct hb_job_config *cfg, struct hb_error *err)
{
	if (cfg->alloc != alloc)
		memcpy(cfg->alloc, alloc, sizeof(int) * (size_t)job->perf->nnodes);
	if (hb_agent_fid_iter_s(job, alloc, 0, atomic, accum, &cfg->iter_s, NULL, err) < 0) {
		hb_error_prefix(err, "%s: B_L %d x %d GPUs, GA %d", job->name, atomic, n, accum);
		return -1;
	}
	cfg->ngpus = n;
	cfg->global_bs = b;
	cfg->local_bs = atomic;
	cfg->overhead_per_iter_s = 0.0;
	cfg->eff_factor = 1.0;
	snprintf(cfg->layout, sizeof(cfg->layout), "DDP B_L %d x %d GPUs, GA %d (%s artifact's batch rule)", atomic, n,
		 accum, whose);
	return 0;
}

int hb_agent_fid_config(const struct hb_sim_job *job, const int *alloc, long target_gbs, struct hb_job_config *cfg,
			struct hb_error *err)
{
	const struct hb_perf *perf = job->perf;
	int n = 0, atomic, accum;
	long b;

	for (int i = 0; i < perf->nnodes; i++)
		n += alloc[i];
	if (!job->fid_agents)
		return hb_runtime_error(err, "fidelity configuration of %s outside Pollux fidelity", job->name);
	b = hb_fid_batch(target_gbs, n, job->fid->max_local, job->max_gbs, (long)job->fid->m0, &atomic, &accum);
	if (b < 1)
		return hb_input_error(err, "%s: no batch for B_G %ld on %d GPUs", job->name, target_gbs, n);
	return artifact_config(job, alloc, n, atomic, accum, b, "Pollux", cfg, err);
}

long hb_agent_sia_split(const struct hb_sim_job *job, const int *alloc, long target_gbs, int predict, int *atomic,
			int *accum)
{
	const struct hb_perf *perf = job->perf;
	const struct hb_perf_measured *m = hb_perf_measured_of(perf, alloc, NULL);
	int n = 0, max_local, cap;
	long b;

	if (!job->fid || !m)
		return 0;
	for (int i = 0; i < perf->nnodes; i++)
		n += alloc[i];
	if ((max_local = hb_perf_measured_max_local(m, alloc, perf->nnodes, HB_PLACE_DESCENDING)) < 1)
		return 0;
	/* Application.max_batch_size: the largest validated batch */
	b = hb_fid_batch(target_gbs, n, max_local, job->fid->runs[job->fid->nruns - 1].batch,
			 predict ? 0 : (long)job->fid->m0, atomic, accum);
	if (b < 1)
		return 0;
	/* "correct self.atomic_bsz to take into account memory constraints" */
	if (!predict && (cap = hb_perf_measured_max_local_replicas(m, n)) > 0 && *atomic > cap) {
		*atomic = cap;
		b = (long)n * *atomic * (*accum + 1);
	}
	return b;
}

int hb_agent_sia_fixed_config(const struct hb_sim_job *job, const int *alloc, long target_gbs, int predict,
			      struct hb_job_config *cfg, struct hb_error *err)
{
	int n = 0, atomic, accum;
	long b = hb_agent_sia_split(job, alloc, target_gbs, predict, &atomic, &accum);

	if (b < 1)
		return 0;
	for (int i = 0; i < job->perf->nnodes; i++)
		n += alloc[i];
	return artifact_config(job, alloc, n, atomic, accum, b, "Sia", cfg, err) < 0 ? -1 : 1;
}

double hb_agent_gns_overhead_s(const struct hb_sim *sim, const struct hb_sim_job *job, double iter_s)
{
	return hb_sim_gns_overhead(sim, job) * iter_s;
}

double hb_simigrad_step(const struct hb_simigrad_params *sp, double b, double phi, int *dir)
{
	int d = HB_SIMIGRAD_HOLD;

	if (phi < sp->gamma) {
		b *= 1.0 + sp->alpha;
		d = HB_SIMIGRAD_GROW;
	} else if (phi > sp->gamma) {
		b *= 1.0 - sp->alpha;
		d = HB_SIMIGRAD_SHRINK;
	}
	if (b < (double)sp->min_gbs)
		b = (double)sp->min_gbs;
	if (b > (double)sp->max_gbs)
		b = (double)sp->max_gbs;
	if (dir)
		*dir = d;
	return b;
}
