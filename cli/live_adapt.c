/*
 * live_adapt.c: `hetbatch live --policy NAME` (live_adapt.h): any registry
 * policy whose agent runs live (live/live_policy.h).
 *
 * Without a launcher around it, the process is the driver: it takes the
 * policy's first decision, runs the launches (live/live_driver.c), puts
 * the simulator's prediction for the same job beside the measured
 * trajectory, prints the predicted-against-measured table per
 * configuration and stores it.  Started by the driver under mpirun with
 * --segment, it is one launch: rank 0 decides, every rank trains
 * (live/live_segment.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allreduce.h"
#include "catalog.h"
#include "cli_profiles.h" /* defines: hb_cli_profile_uses_json */
#include "fileio.h"
#include "hb_config.h"    /* defines: HB_VERSION */
#include "json.h"
#include "live_adapt.h"
#include "live_driver.h"
#include "live_signal.h"
#include "live_segment.h"
#include "profdb.h"
#include "strutil.h"

/* One launch, under mpirun. */
static int run_segment(struct hb_cli *cli, struct hb_catalog *cat, const struct hb_cluster *cl,
		       const struct hb_model *m, struct hb_live_opts *o, const struct hb_live_adapt_args *a,
		       struct hb_error *err)
{
	struct hb_ar_team team;
	struct hb_live_policy pol;
	struct hb_live_segment seg = { 0 };
	char ckpt[4096];
	int rc = 0, opened = 0;

	/* the driver says what a signal stopped */
	o->signal_silent = 1;
	/* rank 0's progress lines: at every epoch's end and at most every
	 * $HETBATCH_STATUS_SECONDS (the driver passes -q on) */
	o->progress_s = hb_cli_status(cli) == HB_STATUS_NEVER ? -1 : cli->status_period_s;
	if (hb_ar_team_start(&team, NULL, NULL, err) < 0)
		return -1;
	if (hb_live_team_setup(&team, o, err) < 0) {
		hb_ar_team_end(&team);
		return -1;
	}
	snprintf(ckpt, sizeof(ckpt), "%s/checkpoint", a->out);
	if (team.rank == 0) {
		rc = hb_live_policy_open(&pol, cat, cl, m, a->dbpath, &a->par, err);
		opened = 1; /* closed whether or not it opened */
		if (rc == 0)
			rc = hb_live_segment_read(a->segment_in, &seg, err);
	}
	if (hb_ar_team_agree(&team, rc, err) == 0)
		rc = hb_live_segment_run(&team, cat, team.rank == 0 ? &pol : NULL, o, &seg, ckpt, a->relaunch_always,
					 err);
	else
		rc = -1;
	if (rc == 0 && team.rank == 0)
		rc = hb_live_segment_write(a->segment_out, &seg, err);
	rc = hb_ar_team_agree(&team, rc, err);
	if (rc < 0 && team.rank != 0)
		err->msg[0] = '\0'; /* rank 0 says it */
	hb_ar_team_barrier(&team);
	hb_ar_team_end(&team);
	if (opened)
		hb_live_policy_close(&pol);
	hb_live_segment_free(&seg);
	return rc;
}

/* Consecutive rows of one configuration make one configuration run. */
static int same_config(const struct hb_live_row *a, const struct hb_live_row *b)
{
	return a->segment == b->segment && a->global_bs == b->global_bs && strcmp(a->config, b->config) == 0;
}

/* The per-configuration table (JABAS Table 6's comparison) and, with db,
 * its rows in the prediction table.  Measured: the mean over the
 * configuration's iterations of the slowest rank's time. */
/* What a live --policy run measured, summed up by report(). */
struct adapt_totals {
	int nconf, inplace, relaunch;
	double mean_abs_err_pct, live_s, pauses_s, sim_s;
};

/* DIR/summary.json: the run, its totals and what produced it (issue 39
 * item 1): the policy and its parameters, the seed, the version, the
 * profile database and the rows it holds for every GPU type of the
 * cluster x the model ("profile_sources", as sim's "profiles"). */
static int write_summary(const struct hb_live_adapt_args *a, const struct hb_live_opts *o,
			 const struct hb_live_policy *pol, const struct hb_live_segment *all, const struct adapt_totals *t,
			 struct hb_error *err)
{
	const struct hb_cluster *cl = pol->cl;
	const char **gpus = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1), sizeof(*gpus));
	cJSON *doc = cJSON_CreateObject(), *par, *res, *uses = NULL;
	char path[4096];
	int rc = -1;

	if (!doc || !gpus) {
		hb_runtime_error(err, "live: out of memory");
		goto out;
	}
	for (int k = 0; k < cl->nnodes; k++)
		gpus[k] = pol->cat->gpus[cl->nodes[k].gpu].name;
	cJSON_AddStringToObject(doc, "format", "hetbatch-live-policy/1");
	cJSON_AddStringToObject(doc, "version", HB_VERSION);
	cJSON_AddStringToObject(doc, "policy", all->policy);
	cJSON_AddStringToObject(doc, "model", pol->model.name);
	cJSON_AddStringToObject(doc, "cluster", cl->name);
	cJSON_AddStringToObject(doc, "backend", o->backend);
	hb_json_add_num(doc, "scale", o->scale);
	cJSON_AddNumberToObject(doc, "seed", (double)o->seed);
	cJSON_AddStringToObject(doc, "profiles", a->dbpath);
	if (!(uses = hb_cli_profile_uses_json(a->dbpath, gpus, cl->nnodes, pol->model.name, err)))
		goto out;
	cJSON_AddItemToObject(doc, "profile_sources", uses);
	if ((par = cJSON_AddObjectToObject(doc, "parameters"))) {
		cJSON_AddNumberToObject(par, "interval", (double)pol->par.p);
		hb_json_add_num(par, "gamma", pol->par.gamma);
		hb_json_add_num(par, "alpha", pol->par.alpha);
		cJSON_AddNumberToObject(par, "min_gbs", (double)pol->par.min_gbs);
		cJSON_AddNumberToObject(par, "max_gbs", (double)pol->par.max_gbs);
		hb_json_add_num(par, "dataset_size", pol->par.dataset);
		cJSON_AddNumberToObject(par, "epochs", (double)pol->par.epochs);
	}
	if ((res = cJSON_AddObjectToObject(doc, "result"))) {
		cJSON_AddNumberToObject(res, "iterations", (double)all->st.iteration);
		cJSON_AddNumberToObject(res, "epochs", (double)all->st.epoch);
		cJSON_AddNumberToObject(res, "blocks", all->nrows);
		cJSON_AddNumberToObject(res, "configurations", t->nconf);
		cJSON_AddNumberToObject(res, "inplace_changes", t->inplace);
		cJSON_AddNumberToObject(res, "relaunches", t->relaunch);
		hb_json_add_num(res, "mean_abs_error_pct", t->mean_abs_err_pct);
		hb_json_add_num(res, "measured_s", t->live_s);
		hb_json_add_num(res, "changes_s", t->pauses_s);
		hb_json_add_num(res, "simulated_s", t->sim_s);
		cJSON_AddNumberToObject(res, "global_batch_first", (double)all->rows[0].global_bs);
		cJSON_AddNumberToObject(res, "global_batch_last", (double)all->rows[all->nrows - 1].global_bs);
		hb_json_add_num(res, "loss_first", all->rows[0].loss);
		hb_json_add_num(res, "loss_last", all->rows[all->nrows - 1].loss);
	}
	snprintf(path, sizeof(path), "%s/summary.json", a->out);
	rc = hb_json_write_file(path, doc, err);
out:
	cJSON_Delete(doc);
	free(gpus);
	return rc;
}

static int report(const struct hb_live_adapt_args *a, const struct hb_live_opts *o, const struct hb_live_policy *pol,
		  const struct hb_live_segment *all, double sim_s, struct hb_error *err)
{
	struct hb_profdb *db = NULL;
	struct hb_run_info run = { 0 };
	int64_t run_id = 0;
	double sum_err = 0, live_s = 0, pauses = 0;
	int nconf = 0, inplace = 0, relaunch = 0, rc;
	char host[64] = "unknown";

	gethostname(host, sizeof(host) - 1);
	hb_strlcpy(run.kind, "live", sizeof(run.kind));
	hb_strlcpy(run.host, host, sizeof(run.host));
	hb_strlcpy(run.backend, o->backend, sizeof(run.backend));
	hb_strlcpy(run.device, o->backend, sizeof(run.device));
	hb_strlcpy(run.gpu, pol->cat->gpus[pol->cl->nodes[0].gpu].name, sizeof(run.gpu));
	run.scale = o->scale;
	snprintf(run.notes, sizeof(run.notes), "policy %s, model %s, cluster %s, %d blocks", all->policy, pol->model.name,
		 pol->cl->name, all->nrows);
	rc = hb_profdb_open(a->dbpath, 0, &db, err);
	if (rc == 0)
		rc = hb_profdb_begin(db, err);
	if (rc == 0)
		rc = hb_profdb_add_run(db, &run, &run_id, err);
	printf("\n%-6s %-6s %7s %5s %-44s %10s %10s %8s\n", "launch", "iter", "B_G", "GPUs", "configuration", "pred_ms",
	       "meas_ms", "error");
	for (int i = 0; i < all->nrows && rc == 0; i++) {
		const struct hb_live_row *r = &all->rows[i];
		double sum = 0, e;
		long iters = 0;
		int j = i;
		char cfg[1024];

		if (r->change[0] && strcmp(r->change, "inplace") == 0)
			inplace++;
		if (r->change[0] && strcmp(r->change, "relaunch") == 0)
			relaunch++;
		if (isfinite(r->change_s))
			pauses += r->change_s;
		if (i > 0 && same_config(r, &all->rows[i - 1]))
			continue;
		for (; j < all->nrows && same_config(&all->rows[j], r); j++) {
			sum += all->rows[j].sum_s;
			iters += all->rows[j].iters;
		}
		e = sum / (double)iters / r->predicted_s - 1;
		sum_err += fabs(e);
		nconf++;
		printf("%-6d %-6ld %7ld %5d %-44.44s %10.3f %10.3f %+7.1f%%\n", r->segment, r->iteration, r->global_bs,
		       r->ngpus, r->config, 1e3 * r->predicted_s, 1e3 * sum / (double)iters, 100 * e);
		snprintf(cfg, sizeof(cfg), "{\"policy\":\"%s\",\"launch\":%d,\"iteration\":%ld,\"iterations\":%ld,"
			 "\"global_batch\":%ld,\"gpus\":%d,\"alloc\":\"%s\",\"method\":\"%s\",\"critical_path\":true}",
			 all->policy, r->segment, r->iteration, iters, r->global_bs, r->ngpus, r->alloc, r->method);
		rc = hb_profdb_put_prediction(db, run_id, pol->model.name, cfg, r->predicted_s, sum / (double)iters, err);
	}
	if (rc == 0)
		rc = hb_profdb_commit(db, err);
	else if (db)
		hb_profdb_rollback(db);
	hb_profdb_close(db);
	if (rc < 0)
		return -1;
	for (int i = 0; i < all->nrows; i++)
		live_s += all->rows[i].sum_s;
	{
		struct adapt_totals t = { nconf, inplace, relaunch, nconf ? 100 * sum_err / nconf : NAN, live_s, pauses,
					  sim_s };

		if (write_summary(a, o, pol, all, &t, err) < 0)
			return -1;
	}
	printf("mean absolute error over %d configurations %.1f %%\n", nconf, nconf ? 100 * sum_err / nconf : 0.0);
	printf("%ld iterations, %ld epochs, %d in-place changes, %d relaunches; B_G %ld -> %ld; loss %.6g -> %.6g\n",
	       all->st.iteration, all->st.epoch, inplace, relaunch, all->rows[0].global_bs,
	       all->rows[all->nrows - 1].global_bs, all->rows[0].loss, all->rows[all->nrows - 1].loss);
	printf("time: measured %.3f s training + %.3f s starts and changes; the simulator, same job and batch "
	       "trajectory: %.3f s\n", live_s, pauses, sim_s);
	printf("results: %s/trajectory.csv, compare.csv, schedule.csv, summary.json; prediction rows: %s\n", a->out,
	       a->dbpath);
	return 0;
}

/* The driver. */
static int drive(struct hb_cli *cli, struct hb_catalog *cat, const struct hb_cluster *cl, const struct hb_model *m,
		 struct hb_live_opts *o, const struct hb_live_adapt_args *a, struct hb_error *err)
{
	struct hb_live_policy pol;
	struct hb_live_segment all = { 0 };
	struct hb_live_drive_opts d = {
		.launcher = a->launcher, .args = a->args, .nargs = a->nargs, .seed = cli->seed, .quiet = cli->quiet,
		.dir = a->out, .dbpath = a->dbpath, .relaunch_always = a->relaunch_always,
		.max_segments = a->max_launches,
	};
	double sim_s = NAN;
	int rc;

	if (hb_live_drive_setup(&d, "live --policy", "allocation", err) < 0)
		return -1;
	if (hb_live_policy_open(&pol, cat, cl, m, a->dbpath, &a->par, err) < 0) {
		hb_live_policy_close(&pol);
		return -1;
	}
	/* The catalog's entry is now the run's model (dataset, bounds,
	 * knobs: live_agent.h), which the simulator beside the run reads too;
	 * the catalog is this command's own copy. */
	if (!cli->quiet)
		printf("live: %s on %s, %s, profiles %s; p %ld, gamma %g, alpha %g, B_G %ld..%ld, %g samples/epoch, %ld "
		       "epochs, scale %g\n", hb_live_policy_name(&pol), cl->name, m->name, a->dbpath, pol.par.p,
		       pol.par.gamma, pol.par.alpha, pol.par.min_gbs, pol.par.max_gbs, pol.par.dataset, pol.par.epochs,
		       o->scale);
	rc = hb_live_drive(&d, &pol, &all, err);
	if (rc == 0)
		rc = hb_live_compare_sim(a->out, &pol, a->dbpath, cli->seed, &all, &sim_s, err);
	if (rc == 0 && all.nrows > 0)
		rc = report(a, o, &pol, &all, sim_s, err);
	hb_live_policy_close(&pol);
	hb_live_segment_free(&all);
	return rc;
}

int hb_cli_live_interrupted(const struct hb_error *err)
{
	fprintf(stderr, "hetbatch live: %s\n", err->msg);
	return 128 + hb_live_signal();
}

int hb_cli_live_adapt(struct hb_cli *cli, struct hb_live_opts *o, const struct hb_live_adapt_args *a)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	const struct hb_cluster *cl;
	const struct hb_model *m;
	int rc;

	if (hb_catalog_load_builtin(&cat, &err) < 0)
		return hb_cli_fail(cli, &err);
	/* A catalog name or the user's JSON file, as sim and plan take them
	 * (a segment worker resolves the same paths the driver was given). */
	if (hb_catalog_resolve_cluster(&cat, a->cluster, &cl, &err) < 0) {
		hb_error_prefix(&err, "--cluster");
		rc = -1;
	} else if (hb_catalog_resolve_model(&cat, a->model, &m, &err) < 0) {
		hb_error_prefix(&err, "--model");
		rc = -1;
	} else if (a->segment_in)
		rc = run_segment(cli, &cat, cl, m, o, a, &err);
	else
		rc = drive(cli, &cat, cl, m, o, a, &err);
	hb_catalog_free(&cat);
	if (rc < 0 && err.code == HB_EINTR && hb_live_signal())
		return hb_cli_live_interrupted(&err);
	if (rc < 0 && !err.msg[0])
		return err.code == HB_EINPUT ? 2 : 1;
	return rc < 0 ? hb_cli_fail(cli, &err) : 0;
}
