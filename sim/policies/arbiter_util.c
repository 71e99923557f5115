/*
 * arbiter_util.c: GPU-type groups and grant hand-out for round-based
 * arbiters (arbiter_util.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arbiter_util.h"
#include "fidelity.h" /* hb_fid_iterations */
#include "stats.h"    /* hb_stats_phi, hb_stats_efficiency */

void hb_type_groups_free(struct hb_type_groups *g)
{
	if (g->types)
		for (int t = 0; t < g->ntypes; t++)
			free(g->types[t].nodes);
	free(g->types);
	free(g->node_type);
	memset(g, 0, sizeof(*g));
}

int hb_type_groups_init(struct hb_type_groups *g, const struct hb_cluster *cl, struct hb_error *err)
{
	int N = cl->nnodes;

	memset(g, 0, sizeof(*g));
	g->types = calloc((size_t)(N > 0 ? N : 1), sizeof(*g->types));
	g->node_type = calloc((size_t)(N > 0 ? N : 1), sizeof(int));
	if (!g->types || !g->node_type)
		goto oom;
	for (int n = 0; n < N; n++) {
		int t = 0;

		while (t < g->ntypes && g->types[t].cat_gpu != cl->nodes[n].gpu)
			t++;
		if (t == g->ntypes) {
			g->types[t].cat_gpu = cl->nodes[n].gpu;
			g->types[t].per_node = cl->nodes[n].ngpus;
			g->types[t].nodes = calloc((size_t)N, sizeof(int));
			g->ntypes++;
			if (!g->types[t].nodes)
				goto oom;
		}
		g->node_type[n] = t;
		g->types[t].nodes[g->types[t].nnodes++] = n;
		if (cl->nodes[n].ngpus < g->types[t].per_node)
			g->types[t].per_node = cl->nodes[n].ngpus;
		g->types[t].gpus += cl->nodes[n].ngpus;
	}
	return 0;
oom:
	hb_type_groups_free(g);
	return hb_runtime_error(err, "out of memory grouping the nodes of cluster %s by GPU type", cl->name);
}

int hb_arbiter_holds_gpus(const struct hb_sim_job *job)
{
	return job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING;
}

/* The jobs not done that hold GPUs, regranted at once (hb_sim_regrant_all):
 * 0 done (each marked), 1 when their grants do not fit together, -1 on an
 * error. */
static int trade(struct hb_sim *sim, struct hb_sim_job **jobs, int J, const int *grant, unsigned char *done,
		 struct hb_error *err)
{
	const int N = sim->cl->nnodes;
	struct hb_sim_job **set = malloc(sizeof(*set) * (size_t)(J > 0 ? J : 1));
	int *g = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1) * (size_t)(N > 0 ? N : 1)), *idx = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1));
	int n = 0, rc;

	if (!set || !g || !idx) {
		free(set);
		free(g);
		free(idx);
		return hb_runtime_error(err, "arbiter: out of memory");
	}
	for (int i = 0; i < J; i++)
		if (!done[i] && hb_arbiter_holds_gpus(jobs[i])) {
			set[n] = jobs[i];
			idx[n] = i;
			memcpy(g + (size_t)n * N, grant + (size_t)i * N, sizeof(int) * (size_t)N);
			n++;
		}
	rc = n > 0 ? hb_sim_regrant_all(sim, set, g, n, err) : 1;
	for (int k = 0; rc == 0 && k < n; k++)
		done[idx[k]] = 1;
	free(set);
	free(g);
	free(idx);
	return rc;
}

int hb_arbiter_apply_grants(struct hb_sim *sim, struct hb_sim_job **jobs, int J, const int *grant, const char *who,
			    int *changed, struct hb_error *err)
{
	int N = sim->cl->nnodes, left, *zero = calloc((size_t)(N > 0 ? N : 1), sizeof(int));
	unsigned char *done = calloc((size_t)(J > 0 ? J : 1), 1);

	*changed = 0;
	if (!zero || !done) {
		free(zero);
		free(done);
		return hb_runtime_error(err, "%s: out of memory", who);
	}
	for (int i = 0; i < J; i++) {
		const int *g = grant + (size_t)i * N;
		int any = 0;

		for (int n = 0; n < N; n++)
			any |= g[n] > 0;
		done[i] = hb_arbiter_holds_gpus(jobs[i]) ? memcmp(g, jobs[i]->grant, sizeof(int) * (size_t)N) == 0 : !any;
		*changed += !done[i];
	}
	/* Suspensions first: they only free GPUs. */
	for (int i = 0; i < J; i++) {
		const int *g = grant + (size_t)i * N;
		int any = 0;

		for (int n = 0; n < N; n++)
			any |= g[n] > 0;
		if (!done[i] && !any) {
			if (hb_sim_regrant(sim, jobs[i], zero, err) < 0)
				goto fail;
			done[i] = 1;
		}
	}
	do {
		int moved = 0;

		left = 0;
		for (int i = 0; i < J; i++) {
			const int *g = grant + (size_t)i * N;
			int fits = 1, rc;

			if (done[i])
				continue;
			for (int n = 0; n < N && fits; n++)
				fits = g[n] <= sim->free_gpus[n] + (hb_arbiter_holds_gpus(jobs[i]) ? jobs[i]->grant[n] : 0);
			if (!fits) {
				left++;
				continue;
			}
			if (jobs[i]->state == HB_JOB_PENDING && !jobs[i]->started)
				rc = hb_sim_start_job(sim, jobs[i], g, err);
			else
				rc = hb_sim_regrant(sim, jobs[i], g, err);
			if (rc < 0)
				goto fail;
			done[i] = 1;
			moved++;
		}
		if (left > 0 && moved == 0 && sim->opts.fidelity == HB_FIDELITY_SIA) {
			/* Sia's simulator hands out a round's allocations at once
			 * (cluster.py Cluster.optimize_policy): the jobs that wait on
			 * each other's GPUs trade them, each a move or a restart by
			 * its own change, none suspended. */
			int rc = trade(sim, jobs, J, grant, done, err);

			if (rc < 0)
				goto fail;
			if (rc == 0)
				continue;
		}
		if (left > 0 && moved == 0) {
			int i = 0;

			while (i < J && (done[i] || !hb_arbiter_holds_gpus(jobs[i])))
				i++;
			if (i == J) {
				hb_runtime_error(err, "%s: grants over node capacity at t = %.0f s", who, hb_sim_now(sim));
				goto fail;
			}
			hb_sim_note(sim, jobs[i], "sched", "%s: suspended to release GPUs another job needs", who);
			if (hb_sim_regrant(sim, jobs[i], zero, err) < 0)
				goto fail;
		}
	} while (left > 0);
	free(zero);
	free(done);
	return 0;
fail:
	free(zero);
	free(done);
	return -1;
}

void hb_arbiter_progress_now(const struct hb_sim *sim, const struct hb_sim_job *job, double *progress,
			     double *epoch_samples)
{
	double now = hb_sim_now(sim), per = job->cfg.iter_s + job->cfg.overhead_per_iter_s, di, b;

	*progress = job->progress;
	*epoch_samples = job->epoch_samples;
	if (job->state != HB_JOB_RUNNING || now <= job->t_last || !(per > 0))
		return;
	di = (now - job->t_last) / per;
	b = (double)job->cfg.global_bs;
	*progress += di * b * job->eff;
	*epoch_samples += di * b;
	if (*epoch_samples > job->model->dataset_size)
		*epoch_samples = job->model->dataset_size;
}

double hb_arbiter_oracle_iters(const struct hb_sim_job *job, long batch, double progress, double epoch_samples)
{
	double b = (double)batch, D = job->model->dataset_size, n = 0.0, p = progress, s = epoch_samples;

	while (p < job->target) {
		double phi = hb_stats_phi(job->stats, p / job->target, b);
		double e = hb_stats_efficiency(job->stats, phi, b), left, to_end;

		if (!(e > 0) || !(b > 0))
			return INFINITY;
		left = (job->target - p) / (b * e);
		to_end = s < D ? (D - s) / b : 0.0;
		if (left <= to_end)
			return n + left;
		n += to_end;
		p += to_end * b * e;
		s = 0.0;
	}
	return n;
}

double hb_arbiter_fid_iters(const struct hb_sim_job *job, long batch)
{
	long last = job->fid->max_epochs - 1;

	if (last <= job->epoch)
		return 1.0;
	return hb_fid_iterations(job->fid, (double)batch, last) - hb_fid_iterations(job->fid, (double)batch, job->epoch);
}
