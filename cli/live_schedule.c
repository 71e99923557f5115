/*
 * live_schedule.c: `hetbatch live --schedule RESULTS_DIR --job ID`: run, in
 * order, the configurations the simulator gave one job (live/schedule.h),
 * N timed iterations each, and report the simulator's iteration time
 * against the measured one per configuration: a direct check of the
 * simulator's ground truth.
 *
 * Consecutive configurations on the same number of GPUs run in one launch
 * (in-place changes between them); a change of GPU count is a checkpoint
 * and a relaunch, as the simulated job restarted.  The driver launches
 * `mpirun -np G hetbatch live <the same options> --schedule-range A:B
 * --segment-out F` per group; rank 0 of each writes its rows (the state
 * file format of adaptive runs, live_segment.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allreduce.h"
#include "catalog.h"
#include "live_adapt.h"       /* hb_cli_live_interrupted */
#include "live_driver.h"
#include "live_signal.h"
#include "live_schedule.h"
#include "live_segment.h"
#include "profdb.h"
#include "schedule.h"
#include "strutil.h"

/* The weight sync of IIDP configurations: the perf model's for the job. */
static int iidp_ows(const struct hb_catalog *cat, const char *dbpath, const char *results, const char *policy,
		    int job, int *ows, struct hb_error *err)
{
	struct hb_live_sched s;
	struct hb_profdb *db = NULL;
	struct hb_perf perf;
	struct hb_perf_opts po;
	const struct hb_cluster *cl;
	const struct hb_model *m;
	int rc;

	*ows = 0;
	if (hb_live_schedule_load(results, policy, job, cat, 0, &s, err) < 0)
		return -1;
	cl = hb_catalog_cluster(cat, s.cluster);
	m = hb_catalog_model(cat, s.model);
	hb_live_schedule_free(&s);
	if (!cl || !m)
		return hb_input_error(err, "%s: cluster '%s' or model '%s' is not in the catalog", results, s.cluster,
				      s.model);
	hb_perf_opts_default(&po);
	rc = hb_profdb_open(dbpath, 1, &db, err);
	if (rc == 0 && (rc = hb_perf_load(db, cat, cl, m, &po, &perf, err)) == 0) {
		*ows = perf.sync == HB_SYNC_OWS;
		hb_perf_free(&perf);
	}
	hb_profdb_close(db);
	return rc;
}

/* One launch: configurations [a, b) of the schedule, under mpirun. */
static int run_range(const struct hb_catalog *cat, struct hb_live_opts *o, const struct hb_live_sched_args *a,
		     int ows, struct hb_error *err)
{
	struct hb_ar_team team;
	struct hb_live_sched s = { 0 };
	struct hb_live_segment seg = { 0 };
	struct hb_live_rank *c = NULL;
	struct hb_live_result *r = calloc(1, sizeof(*r));
	char ckpt[4096];
	int first, end, rc, loaded = 0;
	double t_start = hb_live_wall_now();

	if (sscanf(a->range, "%d:%d", &first, &end) != 2 || first < 0 || end <= first) {
		free(r);
		return hb_input_error(err, "--schedule-range '%s': A:B with 0 <= A < B", a->range);
	}
	o->signal_silent = 1; /* the driver says what a signal stopped */
	if (hb_ar_team_start(&team, NULL, NULL, err) < 0) {
		free(r);
		return -1;
	}
	if (hb_live_team_setup(&team, o, err) < 0) {
		hb_ar_team_end(&team);
		free(r);
		return -1;
	}
	snprintf(ckpt, sizeof(ckpt), "%s/checkpoint", a->out);
	rc = r ? hb_live_schedule_load(a->results, a->policy, a->job, cat, ows, &s, err)
	       : hb_runtime_error(err, "live: out of memory");
	loaded = rc == 0;
	if (rc == 0 && end > s.ncfgs)
		rc = hb_input_error(err, "--schedule-range %s: the job has %d configurations", a->range, s.ncfgs);
	if (hb_ar_team_agree(&team, rc, err) < 0)
		goto out;
	o->metrics_every = 0;
	if ((rc = hb_live_rank_open(&team, cat, &s.cfgs[first].plan, o, &c, err)) < 0)
		goto out;
	if (first > 0 && (rc = hb_live_rank_load(c, ckpt, 1, err)) < 0)
		goto out;
	for (int k = first; k < end; k++) {
		const struct hb_live_sched_cfg *x = &s.cfgs[k];
		double cost = hb_live_wall_now() - t_start;

		if (k > first && (rc = hb_live_rank_reconfigure(c, &x->plan, &cost, err)) < 0)
			goto out;
		if ((rc = hb_live_rank_block(c, o->warmup, o->iters, 0, 0, r, err)) < 0)
			goto out;
		if (team.rank == 0) {
			struct hb_live_row row = { 0 };

			row.segment = k;
			row.iteration = r->first_iter;
			row.iters = r->iters;
			row.global_bs = x->plan.global_batch;
			row.ngpus = x->plan.nslots;
			hb_strlcpy(row.method, x->plan.method, sizeof(row.method));
			hb_strlcpy(row.config, x->plan.config, sizeof(row.config));
			row.predicted_s = x->sim_iter_s;
			row.measured_s = r->critical_s;
			row.sum_s = r->sum_critical_s;
			hb_strlcpy(row.change, k > first ? "inplace" : first > 0 ? "relaunch" : "start", sizeof(row.change));
			row.change_s = cost;
			row.similarity = row.noise_scale = NAN;
			row.loss = r->loss_last;
			snprintf(row.decision, sizeof(row.decision), "simulated: event %ld, %s at iteration %.0f, t %.1f s",
				 x->seq, x->kind, x->iteration, x->t);
			snprintf(row.alloc, sizeof(row.alloc), "%d GPUs", x->plan.nslots);
			rc = hb_live_segment_add_row(&seg, &row, err);
		}
		if (hb_ar_team_agree(&team, rc, err) < 0) {
			rc = -1;
			goto out;
		}
	}
	rc = hb_live_rank_save(c, ckpt, 1, err);
	if (rc == 0 && team.rank == 0) {
		hb_strlcpy(seg.policy, "schedule", sizeof(seg.policy));
		seg.st.nnodes = 1;
		rc = hb_live_segment_write(a->segment_out, &seg, err);
	}
	rc = hb_ar_team_agree(&team, rc, err);
out:
	if (rc < 0 && team.rank != 0)
		err->msg[0] = '\0';
	hb_live_rank_close(c);
	hb_ar_team_barrier(&team);
	hb_ar_team_end(&team);
	if (loaded)
		hb_live_schedule_free(&s);
	hb_live_segment_free(&seg);
	free(r);
	return rc < 0 ? -1 : 0;
}

static int report(const struct hb_live_sched_args *a, const struct hb_live_opts *o, const struct hb_live_sched *s,
		  const struct hb_live_segment *all, struct hb_error *err)
{
	struct hb_profdb *db = NULL;
	struct hb_run_info run = { 0 };
	int64_t run_id = 0;
	double sum = 0;
	int rc;

	gethostname(run.host, sizeof(run.host) - 1);
	hb_strlcpy(run.kind, "live", sizeof(run.kind));
	hb_strlcpy(run.backend, o->backend, sizeof(run.backend));
	hb_strlcpy(run.device, o->backend, sizeof(run.device));
	run.scale = o->scale;
	snprintf(run.notes, sizeof(run.notes), "schedule of job %d from %.120s (policy %.40s), %d configurations", a->job,
		 s->db, s->policy, all->nrows);
	rc = hb_profdb_open(a->dbpath, 0, &db, err);
	if (rc == 0)
		rc = hb_profdb_begin(db, err);
	if (rc == 0)
		rc = hb_profdb_add_run(db, &run, &run_id, err);
	printf("\n%-5s %-8s %8s %7s %5s %-40s %10s %10s %8s\n", "cfg", "kind", "sim_iter", "B_G", "GPUs", "configuration",
	       "sim_ms", "meas_ms", "error");
	for (int i = 0; i < all->nrows && rc == 0; i++) {
		const struct hb_live_row *r = &all->rows[i];
		const struct hb_live_sched_cfg *x = &s->cfgs[r->segment];
		double e = r->measured_s / r->predicted_s - 1;
		char cfg[512];

		sum += fabs(e);
		printf("%-5d %-8s %8.0f %7ld %5d %-40.40s %10.3f %10.3f %+7.1f%%\n", r->segment, x->kind, x->iteration,
		       r->global_bs, r->ngpus, r->config, 1e3 * r->predicted_s, 1e3 * r->measured_s, 100 * e);
		snprintf(cfg, sizeof(cfg), "{\"schedule\":\"%.200s\",\"job\":%d,\"event\":%ld,\"global_batch\":%ld,"
			 "\"gpus\":%d,\"method\":\"%s\",\"critical_path\":true}", s->db, a->job, x->seq, r->global_bs,
			 r->ngpus, r->method);
		rc = hb_profdb_put_prediction(db, run_id, s->model, cfg, r->predicted_s, r->measured_s, err);
	}
	if (rc == 0)
		rc = hb_profdb_commit(db, err);
	else if (db)
		hb_profdb_rollback(db);
	hb_profdb_close(db);
	if (rc == 0)
		printf("mean absolute error of the simulator's iteration time over %d configurations: %.1f %%\n"
		       "results: %s/trajectory.csv; prediction rows: %s\n", all->nrows,
		       all->nrows ? 100 * sum / all->nrows : 0.0, a->out, a->dbpath);
	return rc;
}

static int drive(struct hb_cli *cli, const struct hb_catalog *cat, struct hb_live_opts *o,
		 const struct hb_live_sched_args *a, int ows, struct hb_error *err)
{
	struct hb_live_sched s;
	struct hb_live_segment all = { 0 };
	struct hb_live_drive_opts d = { .launcher = a->launcher, .args = a->args, .nargs = a->nargs,
					.seed = cli->seed, .quiet = cli->quiet, .dir = a->out };
	int rc = 0, ncfgs;

	if (hb_live_drive_setup(&d, "live --schedule", "GPU count", err) < 0 ||
	    hb_live_schedule_load(a->results, a->policy, a->job, cat, ows, &s, err) < 0)
		return -1;
	ncfgs = s.ncfgs < a->max_configs ? s.ncfgs : a->max_configs;
	if (!cli->quiet)
		printf("live: job %d of %s (policy %s, %s on %s): %d configurations%s, %d timed iterations each\n",
		       a->job, s.db, s.policy, s.model, s.cluster, ncfgs, ncfgs < s.ncfgs ? " (--max-configs)" : "",
		       o->iters);
	for (int k = 0; k < ncfgs && rc == 0;) {
		int e = k + 1;
		char range[32], out[4096];
		char *extra[4] = { "--schedule-range", range, "--segment-out", out };
		struct hb_live_segment res;

		while (e < ncfgs && s.cfgs[e].plan.nslots == s.cfgs[k].plan.nslots)
			e++;
		snprintf(range, sizeof(range), "%d:%d", k, e);
		snprintf(out, sizeof(out), "%s/state/configs-%d-%d.json", a->out, k, e);
		if (!cli->quiet)
			printf("live: configurations %d..%d on %d ranks\n", k, e - 1, s.cfgs[k].plan.nslots);
		rc = hb_live_launch(&d, s.cfgs[k].plan.nslots, extra, 4, err);
		if (rc == 0)
			rc = hb_live_segment_read(out, &res, err);
		for (int i = 0; rc == 0 && i < res.nrows; i++)
			rc = hb_live_segment_add_row(&all, &res.rows[i], err);
		if (rc == 0) {
			hb_live_segment_free(&res);
			rc = hb_live_write_trajectory(a->out, &all, err);
		}
		k = e;
	}
	if (rc == 0)
		rc = report(a, o, &s, &all, err);
	hb_live_schedule_free(&s);
	hb_live_segment_free(&all);
	return rc;
}

int hb_cli_live_schedule(struct hb_cli *cli, struct hb_live_opts *o, const struct hb_live_sched_args *a)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	int rc, ows = 0;

	rc = hb_catalog_load_builtin(&cat, &err);
	if (rc == 0)
		rc = iidp_ows(&cat, a->dbpath, a->results, a->policy, a->job, &ows, &err);
	if (rc == 0)
		rc = a->range ? run_range(&cat, o, a, ows, &err) : drive(cli, &cat, o, a, ows, &err);
	hb_catalog_free(&cat);
	if (rc < 0 && !err.msg[0])
		return err.code == HB_EINPUT ? 2 : 1;
	if (rc < 0 && err.code == HB_EINTR && hb_live_signal())
		return hb_cli_live_interrupted(&err);
	return rc < 0 ? hb_cli_fail(cli, &err) : 0;
}
