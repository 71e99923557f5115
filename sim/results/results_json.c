/*
 * results_json.c: summary.json's documents: the knobs as an object (also
 * stored in runs.knobs_json), the single-job summary and a trace replay's.
 */
#include <stdlib.h>
#include <string.h>

#include "hb_config.h"
#include "plugin.h"     /* policy_plugins: where plugin policies came from */  /* HB_VERSION, recorded in summary.json */
#include "json.h"
#include "results_priv.h"

/* ---- knobs ---------------------------------------------------------------- */

cJSON *hb_res_knobs_json(const struct hb_results *r)
{
	struct hb_knob k[HB_RESULTS_MAX_KNOBS];
	int n = hb_results_knobs(r, k);
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	for (int i = 0; i < n; i++) {
		cJSON *v;

		switch (k[i].type) {
		case HB_KNOB_NUM: v = cJSON_CreateNumber(k[i].num); break;
		case HB_KNOB_BOOL: v = cJSON_CreateBool(k[i].num != 0); break;
		case HB_KNOB_STR: v = cJSON_CreateString(k[i].str); break;
		default: v = cJSON_CreateNull(); break;
		}
		if (!v || !cJSON_AddItemToObject(o, k[i].key, v)) {
			cJSON_Delete(v);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

/* ---- JSON ------------------------------------------------------------------------ */

static cJSON *row_json(const struct srow *s)
{
	const struct hb_sim_job *job = &s->run->sim->jobs[s->job];
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "job", s->job);
	cJSON_AddStringToObject(o, "name", job->name);
	cJSON_AddBoolToObject(o, "done", s->m.done);
	hb_json_add_num(o, "time_h", s->m.time_s / 3600.0);
	hb_json_add_num(o, "cost_usd", s->m.cost_usd);
	hb_json_add_num(o, "gpu_hours", s->m.gpu_hours);
	hb_json_add_num(o, "mean_gpus", s->m.mean_gpus);
	hb_json_add_num(o, "iterations", s->m.iterations);
	hb_json_add_num(o, "mean_gbs", s->m.mean_gbs);
	hb_json_add_num(o, "final_gbs", (double)s->m.final_gbs);
	hb_json_add_num(o, "restarts", s->m.restarts);
	hb_json_add_num(o, "overhead_h", s->m.overhead_s / 3600.0);
	hb_json_add_num(o, "time_rel", s->time_rel);
	hb_json_add_num(o, "cost_rel", s->cost_rel);
	return o;
}

cJSON *hb_results_profiles_json(const struct hb_profile_use *u, int n)
{
	cJSON *arr = cJSON_CreateArray();

	for (int i = 0; arr && i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		char hex[17];

		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			cJSON_Delete(arr);
			return NULL;
		}
		hb_profile_use_hex(&u[i], hex);
		cJSON_AddStringToObject(o, "gpu", u[i].gpu);
		cJSON_AddStringToObject(o, "model", u[i].model);
		cJSON_AddStringToObject(o, "source", u[i].source);
		cJSON_AddStringToObject(o, "file", u[i].file);
		cJSON_AddBoolToObject(o, "builtin", u[i].builtin);
		cJSON_AddNumberToObject(o, "run_id", (double)u[i].run_id);
		cJSON_AddNumberToObject(o, "rows", (double)u[i].rows);
		cJSON_AddNumberToObject(o, "measured_rows", (double)u[i].measured);
		if (!cJSON_AddStringToObject(o, "digest", hex)) {
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/* root's "profiles" (only when the command recorded them); 0 when out of memory. */
/* "policy_plugins": the files of the plugins whose policies may be in the
 * document (plugin.h); absent when none was loaded, so a set made without
 * one reads as it always has. */
static void add_plugins(cJSON *root)
{
	cJSON *arr;

	if (hb_plugin_count() == 0 || !(arr = cJSON_AddArrayToObject(root, "policy_plugins")))
		return;
	for (int i = 0; i < hb_plugin_count(); i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(hb_plugin_path(i)));
}

static int add_profiles(cJSON *root, const struct hb_profile_use *u, int n)
{
	cJSON *arr;

	if (!u)
		return 1;
	arr = hb_results_profiles_json(u, n);
	if (!arr || !cJSON_AddItemToObject(root, "profiles", arr)) {
		cJSON_Delete(arr);
		return 0;
	}
	return 1;
}

cJSON *hb_res_summary_json_rows(const struct hb_results *r, const struct srow *rows, size_t nrows)
{
	const char *models[256];
	int nm = hb_results_models(r, models, 256);
	cJSON *root = cJSON_CreateObject(), *arr, *knobs, *nd;
	struct hb_knob k[HB_RESULTS_MAX_KNOBS];
	int nk = hb_results_knobs(r, k);

	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "format", HB_RESULTS_FORMAT);
	cJSON_AddStringToObject(root, "version", HB_VERSION);
	cJSON_AddStringToObject(root, "reproducibility", HB_RESULTS_REPRO);
	add_plugins(root);
	cJSON_AddStringToObject(root, "cluster", r->cluster);
	cJSON_AddNumberToObject(root, "seed", (double)r->seed);
	knobs = hb_res_knobs_json(r);
	if (!knobs || !cJSON_AddItemToObject(root, "knobs", knobs)) {
		cJSON_Delete(knobs);
		cJSON_Delete(root);
		return NULL;
	}
	if (!add_profiles(root, r->profiles, r->nprofiles)) {
		cJSON_Delete(root);
		return NULL;
	}
	nd = cJSON_AddArrayToObject(root, "non_default");
	for (int i = 0; nd && i < nk; i++)
		if (k[i].non_default)
			cJSON_AddItemToArray(nd, cJSON_CreateString(k[i].key));
	arr = cJSON_AddArrayToObject(root, "models");
	if (!nd || !arr) {
		cJSON_Delete(root);
		return NULL;
	}
	for (int mi = 0; mi < nm; mi++) {
		const struct hb_run_result *ref = hb_results_reference(r, models[mi]);
		cJSON *mo = cJSON_CreateObject(), *runs;

		if (!mo || !cJSON_AddItemToArray(arr, mo)) {
			cJSON_Delete(mo);
			cJSON_Delete(root);
			return NULL;
		}
		cJSON_AddStringToObject(mo, "model", models[mi]);
		if (ref)
			cJSON_AddStringToObject(mo, "reference", ref->policy);
		else
			cJSON_AddNullToObject(mo, "reference");
		runs = cJSON_AddArrayToObject(mo, "runs");
		for (int i = 0; runs && i < r->nruns; i++) {
			const struct hb_run_result *ru = &r->runs[i];
			cJSON *ro, *jobs;

			if (strcmp(ru->model, models[mi]) != 0)
				continue;
			ro = cJSON_CreateObject();
			if (!ro || !cJSON_AddItemToArray(runs, ro)) {
				cJSON_Delete(ro);
				break;
			}
			cJSON_AddNumberToObject(ro, "run_id", i + 1);
			cJSON_AddStringToObject(ro, "policy", ru->policy);
			cJSON_AddStringToObject(ro, "status", ru->ran ? "ok" : "cannot run");
			if (!ru->ran) {
				cJSON_AddStringToObject(ro, "reason", ru->why);
				continue;
			}
			jobs = cJSON_AddArrayToObject(ro, "jobs");
			for (size_t s = 0; jobs && s < nrows; s++)
				if (rows[s].run == ru && rows[s].job >= 0)
					cJSON_AddItemToArray(jobs, row_json(&rows[s]));
		}
	}
	return root;
}

cJSON *hb_results_summary_json(const struct hb_results *r)
{
	struct srow *rows;
	size_t n;
	struct hb_error err = { 0 };
	cJSON *root;

	if (hb_res_summary_rows(r, &rows, &n, &err) < 0)
		return NULL;
	root = hb_res_summary_json_rows(r, rows, n);
	free(rows);
	return root;
}

/* ==== trace replay ========================================================================== */

/* "jct_mean_h", "jct_median_h", ... as in cluster_summary.csv. */
static void add_dist(cJSON *o, const char *name, const char *unit, const struct hb_dist *d, double scale)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_mean%s", name, unit);
	hb_json_add_num(o, key, d->mean * scale);
	snprintf(key, sizeof(key), "%s_median%s", name, unit);
	hb_json_add_num(o, key, d->median * scale);
	snprintf(key, sizeof(key), "%s_p99%s", name, unit);
	hb_json_add_num(o, key, d->p99 * scale);
	snprintf(key, sizeof(key), "%s_max%s", name, unit);
	hb_json_add_num(o, key, d->max * scale);
}

static cJSON *trace_run_json(const struct hb_trace_results *r, int i)
{
	const struct hb_trace_run *ru = &r->runs[i];
	const struct hb_cluster_summary *s = &ru->sum;
	cJSON *o = cJSON_CreateObject(), *arr, *u;

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "run_id", i + 1);
	cJSON_AddStringToObject(o, "policy", ru->policy);
	cJSON_AddStringToObject(o, "status", ran(ru) ? "ok" : "cannot run");
	if (!ran(ru)) {
		cJSON_AddStringToObject(o, "reason", ru->why);
		return o;
	}
	cJSON_AddNumberToObject(o, "jobs", s->njobs);
	cJSON_AddNumberToObject(o, "completed", s->completed);
	cJSON_AddNumberToObject(o, "dropped", (double)dropped(r, ru));
	add_dist(o, "jct", "_h", &s->jct_s, 1.0 / 3600.0);
	hb_json_add_num(o, "makespan_h", s->makespan_s / 3600.0);
	hb_json_add_num(o, "queue_mean_h", s->queue_s.mean / 3600.0);
	hb_json_add_num(o, "queue_p99_h", s->queue_s.p99 / 3600.0);
	hb_json_add_num(o, "gpu_hours", s->gpu_hours);
	hb_json_add_num(o, "cost_usd", s->cost_usd);
	hb_json_add_num(o, "util_mean", s->util_mean);
	hb_json_add_num(o, "restarts_per_job", s->restarts_per_job);
	hb_json_add_num(o, "preemptions_per_job", s->preemptions_per_job);
	cJSON_AddNumberToObject(o, "rho_jobs", (double)s->rho.n);
	hb_json_add_num(o, "rho_median", s->rho.median);
	hb_json_add_num(o, "rho_p99", s->rho.p99);
	hb_json_add_num(o, "rho_max", s->rho.max);
	cJSON_AddNumberToObject(o, "sched_rounds", (double)s->sched_rounds);
	if (s->capacity) { /* --capacity runs only: other documents stay as they were */
		cJSON_AddNumberToObject(o, "capacity_withdrawn_gpus", (double)s->capacity_withdrawn);
		cJSON_AddNumberToObject(o, "capacity_preemptions", (double)s->capacity_preemptions);
		cJSON_AddNumberToObject(o, "capacity_shrinks", (double)s->capacity_shrinks);
	}
	arr = cJSON_AddArrayToObject(o, "by_model");
	for (int m = 0; arr && m < ru->nby_model; m++) {
		cJSON *mo = cJSON_CreateObject();

		if (!mo || !cJSON_AddItemToArray(arr, mo)) {
			cJSON_Delete(mo);
			break;
		}
		cJSON_AddStringToObject(mo, "model", ru->by_model[m].model);
		cJSON_AddNumberToObject(mo, "jobs", ru->by_model[m].njobs);
		cJSON_AddNumberToObject(mo, "completed", ru->by_model[m].completed);
		hb_json_add_num(mo, "jct_mean_h", ru->by_model[m].jct_mean_s / 3600.0);
		hb_json_add_num(mo, "jct_median_h", ru->by_model[m].jct_median_s / 3600.0);
	}
	u = cJSON_AddObjectToObject(o, "utilisation");
	if (u) {
		cJSON *pts;

		hb_json_add_num(u, "t0_h", ru->util.t0_s / 3600.0);
		hb_json_add_num(u, "t1_h", ru->util.t1_s / 3600.0);
		hb_json_add_num(u, "mean", ru->util.mean);
		pts = cJSON_AddArrayToObject(u, "bins");
		for (int k = 0; pts && k < ru->util.npoints; k++)
			cJSON_AddItemToArray(pts, cJSON_CreateNumber(ru->util.util[k]));
	}
	return o;
}

cJSON *hb_trace_results_json(const struct hb_trace_results *r)
{
	struct trace_view tv;
	struct hb_error err = { 0 };
	struct hb_knob k[HB_RESULTS_MAX_KNOBS];
	cJSON *root, *knobs, *nd, *arr;
	int nk;

	if (hb_res_trace_view_init(&tv, r, &err) < 0)
		return NULL;
	nk = hb_results_knobs(&tv.base, k);
	root = cJSON_CreateObject();
	knobs = hb_res_knobs_json(&tv.base);
	hb_res_trace_view_free(&tv);
	if (!root || !knobs) {
		cJSON_Delete(knobs);
		cJSON_Delete(root);
		return NULL;
	}
	cJSON_AddStringToObject(root, "format", HB_RESULTS_FORMAT);
	cJSON_AddStringToObject(root, "version", HB_VERSION);
	cJSON_AddStringToObject(root, "reproducibility", HB_RESULTS_REPRO);
	add_plugins(root);
	cJSON_AddStringToObject(root, "mode", "trace");
	cJSON_AddStringToObject(root, "cluster", r->cluster);
	cJSON_AddNumberToObject(root, "cluster_gpus", r->cluster_gpus);
	cJSON_AddNumberToObject(root, "seed", (double)r->seed);
	cJSON_AddStringToObject(root, "trace", r->trace);
	cJSON_AddStringToObject(root, "trace_format", r->format);
	cJSON_AddStringToObject(root, "filters", r->filters);
	hb_json_add_num(root, "load", r->load);
	cJSON_AddNumberToObject(root, "jobs_read", (double)r->read);
	cJSON_AddNumberToObject(root, "jobs_oversize", (double)r->oversize);
	cJSON_AddNumberToObject(root, "models_assigned", (double)r->assigned);
	cJSON_AddBoolToObject(root, "fairness", r->fairness);
	if (!cJSON_AddItemToObject(root, "knobs", knobs)) {
		cJSON_Delete(knobs);
		cJSON_Delete(root);
		return NULL;
	}
	if (!add_profiles(root, r->profiles, r->nprofiles)) {
		cJSON_Delete(root);
		return NULL;
	}
	nd = cJSON_AddArrayToObject(root, "non_default");
	for (int i = 0; nd && i < nk; i++)
		if (k[i].non_default)
			cJSON_AddItemToArray(nd, cJSON_CreateString(k[i].key));
	arr = cJSON_AddArrayToObject(root, "policies");
	if (!nd || !arr) {
		cJSON_Delete(root);
		return NULL;
	}
	for (int i = 0; i < r->nruns; i++) {
		cJSON *ro = trace_run_json(r, i);

		if (!ro || !cJSON_AddItemToArray(arr, ro)) {
			cJSON_Delete(ro);
			cJSON_Delete(root);
			return NULL;
		}
	}
	return root;
}
