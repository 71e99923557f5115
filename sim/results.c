/*
 * results.c: the comparison table and the result files of a set of runs
 * (results.h says what is written and why it is reproducible).
 *
 * Sections follow the data: per-job metrics, knobs, the summary rows every
 * writer shares, then one writer per output (terminal, JSON, CSV, gnuplot
 * data, SQLite) and the staging that makes the set all or nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "hb_config.h"  /* HB_VERSION, recorded in meta and summary.json */
#include "db.h"
#include "csv.h"
#include "fileio.h"
#include "json.h"
#include "fidelity.h"
#include "results.h"
#include "strutil.h"

/* ---- what is written ------------------------------------------------------- */

static const char *const level_names[] = { "all", "summary", "none" };

int hb_events_level_parse(const char *s, const char *opt, enum hb_events_level *lv, struct hb_error *err)
{
	for (int i = 0; i < 3; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*lv = (enum hb_events_level)i;
			return 0;
		}
	}
	return hb_input_error(err, "%s: '%s' is not all, summary or none", opt, s);
}

const char *hb_events_level_name(enum hb_events_level lv)
{
	return lv >= HB_EVENTS_ALL && lv <= HB_EVENTS_NONE ? level_names[lv] : "?";
}

/* Job-level events (results.h): a job's life and the changes of the GPUs it
 * holds, which is what a reader needs to follow each job; the per-round and
 * per-epoch kinds are the bulk of a long replay. */
int hb_events_level_keeps(enum hb_events_level lv, const char *kind)
{
	static const char *const job_level[] = { "arrival", "admit", "start", "restart", "resize",
						 "preempt", "drop", "done", NULL };

	if (lv == HB_EVENTS_ALL)
		return 1;
	if (lv == HB_EVENTS_NONE)
		return 0;
	for (int i = 0; job_level[i]; i++)
		if (strcmp(kind, job_level[i]) == 0)
			return 1;
	return 0;
}

/* ---- per-job metrics ------------------------------------------------------ */

void hb_job_metrics(const struct hb_sim_job *job, struct hb_job_metrics *m)
{
	double end;

	memset(m, 0, sizeof(*m));
	m->done = job->state == HB_JOB_DONE;
	end = m->done ? job->finish_s : job->t_last;
	m->time_s = end > job->arrival_s ? end - job->arrival_s : 0.0;
	m->cost_usd = job->cost_usd;
	m->gpu_hours = job->gpu_s / 3600.0;
	m->mean_gpus = m->time_s > 0 ? job->gpus_time_sum / m->time_s : 0.0;
	m->iterations = job->iters;
	m->mean_gbs = job->run_s > 0 ? job->gbs_time_sum / job->run_s : (double)job->cfg.global_bs;
	m->final_gbs = job->cfg.global_bs;
	m->restarts = job->restarts;
	m->overhead_s = job->overhead_s;
}

/* ---- knobs ---------------------------------------------------------------- */

/* Sentinels: a negative value means "derived" / "default" (sim.h). */
static int same_sentinel(double a, double b)
{
	return (a < 0 && b < 0) || a == b;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static struct hb_knob *knob(struct hb_knob *k, int *n, const char *key, const char *label, int always)
{
	struct hb_knob *x = &k[(*n)++];

	memset(x, 0, sizeof(*x));
	x->key = key;
	x->label = label;
	x->always = always;
	return x;
}

static void knob_num(struct hb_knob *x, double v, const char *unit)
{
	x->type = HB_KNOB_NUM;
	x->num = v;
	snprintf(x->text, sizeof(x->text), "%g%s", v, unit);
}

static void knob_default(struct hb_knob *x, const char *text)
{
	x->type = HB_KNOB_DEFAULT;
	hb_strlcpy(x->text, text, sizeof(x->text));
}

int hb_results_knobs(const struct hb_results *r, struct hb_knob *k)
{
	const struct hb_sim_opts *o = &r->opts, *d = &r->defaults;
	struct hb_knob *x;
	int n = 0;

	x = knob(k, &n, "interval", "interval", 1);
	if (o->interval > 0)
		knob_num(x, (double)o->interval, "");
	else
		knob_default(x, "model");
	x->non_default = !((o->interval <= 0 && d->interval <= 0) || o->interval == d->interval);

	x = knob(k, &n, "restart_cost_s", "restart-cost", 1);
	if (o->restart_const_s >= 0)
		knob_num(x, o->restart_const_s, " s");
	else
		knob_default(x, "derived");
	x->non_default = !same_sentinel(o->restart_const_s, d->restart_const_s);

	x = knob(k, &n, "reconfig_cost_s", "reconfig-cost", 1);
	knob_num(x, o->reconfig_s, " s");
	x->non_default = o->reconfig_s != d->reconfig_s;

	x = knob(k, &n, "gns_overhead", "gns-overhead", 1);
	if (o->gns_overhead >= 0)
		knob_num(x, o->gns_overhead, "");
	else
		knob_default(x, "default");
	x->non_default = !same_sentinel(o->gns_overhead, d->gns_overhead);

	x = knob(k, &n, "similarity_cost", "similarity-cost", 1);
	x->type = HB_KNOB_BOOL;
	x->num = o->similarity_cost ? 1 : 0;
	hb_strlcpy(x->text, o->similarity_cost ? "on" : "off", sizeof(x->text));
	x->non_default = !o->similarity_cost != !d->similarity_cost;

	x = knob(k, &n, "unequal_penalty", "unequal-penalty", 1);
	knob_num(x, o->unequal_k, "");
	x->non_default = o->unequal_k != d->unequal_k;

	/* A replay file is recorded by its base name: an absolute path would
	 * make the files depend on where the command ran. */
	x = knob(k, &n, "replay", "replay", 1);
	if (o->replay) {
		x->type = HB_KNOB_STR;
		x->str = base_name(o->replay);
		hb_strlcpy(x->text, x->str, sizeof(x->text));
	} else {
		knob_default(x, "none");
	}
	x->non_default = !o->replay != !d->replay;

	/* The progress model decides what every time and cost means (stats.h),
	 * so it is always shown and stored by name. */
	x = knob(k, &n, "progress", "progress", 1);
	x->type = HB_KNOB_STR;
	x->str = hb_progress_name(o->progress);
	hb_strlcpy(x->text, x->str, sizeof(x->text));
	x->non_default = o->progress != d->progress;

	/* Whose mechanics ran (fidelity.h): hetbatch's own, or Pollux's own
	 * simulator's; always stored, shown in the header when not the default. */
	x = knob(k, &n, "fidelity", "fidelity", o->fidelity != d->fidelity);
	x->type = HB_KNOB_STR;
	x->str = hb_fidelity_name(o->fidelity);
	hb_strlcpy(x->text, x->str, sizeof(x->text));
	x->non_default = o->fidelity != d->fidelity;

	x = knob(k, &n, "max_sim_s", "max-sim", 0);
	knob_num(x, o->max_sim_s, " s");
	x->non_default = o->max_sim_s != d->max_sim_s;

	x = knob(k, &n, "sample_every", "sample-every", 0);
	knob_num(x, (double)o->sample_every, "");
	x->non_default = o->sample_every != d->sample_every;

	/* The elastic policy's autoscaler; shown when changed. */
	x = knob(k, &n, "elastic_interval_s", "elastic-interval", 0);
	knob_num(x, o->elastic_interval_s, " s");
	x->non_default = o->elastic_interval_s != d->elastic_interval_s;

	x = knob(k, &n, "elastic_drop", "elastic-drop", 0);
	x->type = HB_KNOB_BOOL;
	x->num = o->elastic_drop ? 1 : 0;
	hb_strlcpy(x->text, o->elastic_drop ? "on" : "off", sizeof(x->text));
	x->non_default = !o->elastic_drop != !d->elastic_drop;
	return n;
}

/* The first job of a run of `model` that ran, to show what a default knob
 * stands for (the model's own interval, the simulator's GNS overhead). */
static const struct hb_run_result *model_run(const struct hb_results *r, const char *model)
{
	for (int i = 0; model && i < r->nruns; i++) {
		const struct hb_run_result *ru = &r->runs[i];

		if (ru->ran && ru->sim && ru->sim->njobs > 0 && strcmp(ru->model, model) == 0)
			return ru;
	}
	return NULL;
}

void hb_results_knob_line(const struct hb_results *r, const char *model, char *buf, size_t size)
{
	struct hb_knob k[HB_RESULTS_MAX_KNOBS];
	int n = hb_results_knobs(r, k);
	const struct hb_run_result *ru = model_run(r, model);
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		char val[160];

		if (!k[i].always && !k[i].non_default)
			continue;
		if (ru && k[i].type == HB_KNOB_DEFAULT && strcmp(k[i].key, "interval") == 0)
			snprintf(val, sizeof(val), "%ld (model)", ru->sim->jobs[0].model->adapt_interval);
		else if (ru && k[i].type == HB_KNOB_DEFAULT && strcmp(k[i].key, "gns_overhead") == 0)
			snprintf(val, sizeof(val), "%g (default)", hb_sim_gns_overhead(ru->sim, &ru->sim->jobs[0]));
		else
			hb_strlcpy(val, k[i].text, sizeof(val));
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s=%s%s", len ? ", " : "",
					k[i].label, val, k[i].non_default ? "*" : "");
		if (len >= size)
			return;
	}
}

static cJSON *knobs_json(const struct hb_results *r)
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

/* ---- reading the set ------------------------------------------------------- */

const struct hb_run_result *hb_results_reference(const struct hb_results *r, const char *model)
{
	const struct hb_run_result *first = NULL;

	for (int i = 0; i < r->nruns; i++) {
		const struct hb_run_result *ru = &r->runs[i];

		if (!ru->ran || !ru->sim || strcmp(ru->model, model) != 0)
			continue;
		if (strcmp(ru->policy, HB_RESULTS_REF_POLICY) == 0)
			return ru;
		if (!first)
			first = ru;
	}
	return first;
}

int hb_results_models(const struct hb_results *r, const char **models, int max)
{
	int n = 0;

	for (int i = 0; i < r->nruns; i++) {
		int seen = 0;

		for (int k = 0; k < n && !seen; k++)
			seen = strcmp(models[k], r->runs[i].model) == 0;
		if (!seen && n < max)
			models[n++] = r->runs[i].model;
	}
	return n;
}

void hb_results_file_stem(const char *model, char *buf, size_t size)
{
	size_t i = 0;

	if (size == 0)
		return;
	for (; model[i] && i + 1 < size; i++) {
		char c = model[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
			 c == '_' || (c == '.' && i > 0);

		buf[i] = ok ? c : '_';
	}
	buf[i] = '\0';
	if (i == 0)
		hb_strlcpy(buf, "model", size);
}

/* ---- summary rows (shared by every writer) ---------------------------------- */

struct srow {
	int run_id;                      /* 1-based position in r->runs */
	const struct hb_run_result *run;
	int job;                         /* job index, -1 for a run that cannot run */
	struct hb_job_metrics m;
	double time_rel, cost_rel;       /* vs the reference's same job; NAN when undefined */
	const char *ref;                 /* reference policy, NULL if none */
};

static double ratio(double a, double b)
{
	return b > 0 && isfinite(a) ? a / b : NAN;
}

static int summary_rows(const struct hb_results *r, struct srow **out, size_t *nout, struct hb_error *err)
{
	size_t n = 0, cap = 0;
	struct srow *rows = NULL;

	for (int i = 0; i < r->nruns; i++) {
		const struct hb_run_result *ru = &r->runs[i];
		const struct hb_run_result *ref = hb_results_reference(r, ru->model);
		int njobs = ru->ran && ru->sim ? ru->sim->njobs : 0;

		for (int j = 0; j < (njobs > 0 ? njobs : 1); j++) {
			struct srow *s;

			if (n == cap) {
				struct srow *nr;

				cap = cap ? 2 * cap : 16;
				nr = realloc(rows, cap * sizeof(*rows));
				if (!nr) {
					free(rows);
					return hb_runtime_error(err, "results: out of memory");
				}
				rows = nr;
			}
			s = &rows[n++];
			memset(s, 0, sizeof(*s));
			s->run_id = i + 1;
			s->run = ru;
			s->job = njobs > 0 ? j : -1;
			s->time_rel = s->cost_rel = NAN;
			s->ref = ref ? ref->policy : NULL;
			if (njobs == 0)
				continue;
			hb_job_metrics(&ru->sim->jobs[j], &s->m);
			if (ref && j < ref->sim->njobs) {
				struct hb_job_metrics rm;

				hb_job_metrics(&ref->sim->jobs[j], &rm);
				s->time_rel = ratio(s->m.time_s, rm.time_s);
				s->cost_rel = ratio(s->m.cost_usd, rm.cost_usd);
			}
		}
	}
	*out = rows;
	*nout = n;
	return 0;
}

/* ---- terminal table ------------------------------------------------------------ */

static void print_rel(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, " %7.2f", v);
	else
		fprintf(out, " %7s", "-");
}

void hb_results_print(FILE *out, const struct hb_results *r)
{
	const char *models[256];
	int nm = hb_results_models(r, models, 256);
	struct srow *rows = NULL;
	size_t nrows = 0;
	struct hb_error err = { 0 };
	char line[2048];

	if (summary_rows(r, &rows, &nrows, &err) < 0) {
		fprintf(out, "%s\n", err.msg);
		return;
	}
	for (int mi = 0; mi < nm; mi++) {
		const struct hb_run_result *ref = hb_results_reference(r, models[mi]);
		const char *refname = ref ? ref->policy : HB_RESULTS_REF_POLICY;
		char th[32], ch[32];

		hb_results_knob_line(r, models[mi], line, sizeof(line));
		fprintf(out, "%scluster %s, model %s, seed %llu; %s  (* = non-default)\n", mi ? "\n" : "", r->cluster,
			models[mi], (unsigned long long)r->seed, line);
		snprintf(th, sizeof(th), "t/%.5s", refname);
		snprintf(ch, sizeof(ch), "$/%.5s", refname);
		fprintf(out, "%-12s %9s %10s %9s %6s %11s %9s %9s %8s %8s %7s %7s %8s\n", "policy", "time(h)", "cost($)",
			"GPU-h", "GPUs", "iterations", "mean_B_G", "final_B_G", "restarts", "ovhd(h)", th, ch, "wall(s)");
		for (size_t i = 0; i < nrows; i++) {
			const struct srow *s = &rows[i];
			char name[160];

			if (strcmp(s->run->model, models[mi]) != 0)
				continue;
			if (s->job >= 0 && s->run->sim->njobs > 1)
				snprintf(name, sizeof(name), "%s:%s", s->run->policy, s->run->sim->jobs[s->job].name);
			else
				hb_strlcpy(name, s->run->policy, sizeof(name));
			if (s->job < 0) {
				fprintf(out, "%-12s cannot run: %s\n", name, s->run->why);
				continue;
			}
			fprintf(out, "%-12s %9.2f %10.2f %9.2f %6.2f %11.0f %9.1f %9ld %8d %8.3f", name, s->m.time_s / 3600.0,
				s->m.cost_usd, s->m.gpu_hours, s->m.mean_gpus, s->m.iterations, s->m.mean_gbs,
				s->m.final_gbs, s->m.restarts, s->m.overhead_s / 3600.0);
			print_rel(out, s->time_rel);
			print_rel(out, s->cost_rel);
			fprintf(out, " %8.3f%s\n", s->run->wall_s, s->m.done ? "" : "  (did not reach the target)");
		}
	}
	free(rows);
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

static cJSON *summary_json_rows(const struct hb_results *r, const struct srow *rows, size_t nrows)
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
	cJSON_AddStringToObject(root, "cluster", r->cluster);
	cJSON_AddNumberToObject(root, "seed", (double)r->seed);
	knobs = knobs_json(r);
	if (!knobs || !cJSON_AddItemToObject(root, "knobs", knobs)) {
		cJSON_Delete(knobs);
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

	if (summary_rows(r, &rows, &n, &err) < 0)
		return NULL;
	root = summary_json_rows(r, rows, n);
	free(rows);
	return root;
}

/* ---- CSV and gnuplot data ------------------------------------------------------------ */

static void put_sep_num(FILE *f, double v)
{
	fputc(',', f);
	hb_csv_put_num(f, v);
}

static void write_summary_csv(FILE *f, const struct srow *rows, size_t nrows)
{
	fputs("run_id,model,policy,job,status,reason,time_h,cost_usd,gpu_hours,mean_gpus,iterations,mean_gbs,"
	      "final_gbs,restarts,overhead_h,time_rel,cost_rel,ref_policy\n",
	      f);
	for (size_t i = 0; i < nrows; i++) {
		const struct srow *s = &rows[i];

		fprintf(f, "%d,", s->run_id);
		hb_csv_put_str(f, s->run->model);
		fputc(',', f);
		hb_csv_put_str(f, s->run->policy);
		if (s->job < 0) {
			fputs(",,cannot run,", f);
			hb_csv_put_str(f, s->run->why);
			fputs(",,,,,,,,,,,,", f);
		} else {
			fprintf(f, ",%d,%s,", s->job, s->m.done ? "ok" : "unfinished");
			put_sep_num(f, s->m.time_s / 3600.0);
			put_sep_num(f, s->m.cost_usd);
			put_sep_num(f, s->m.gpu_hours);
			put_sep_num(f, s->m.mean_gpus);
			put_sep_num(f, s->m.iterations);
			put_sep_num(f, s->m.mean_gbs);
			fprintf(f, ",%ld,%d", s->m.final_gbs, s->m.restarts);
			put_sep_num(f, s->m.overhead_s / 3600.0);
			put_sep_num(f, s->time_rel);
			put_sep_num(f, s->cost_rel);
			fputc(',', f);
		}
		if (s->ref)
			hb_csv_put_str(f, s->ref);
		fputc('\n', f);
	}
}

/* timeseries.csv and events.csv: headers, and one row per record (written
 * by the stream as the runs go). */
static const char *const timeseries_header =
	"run_id,model,policy,t_s,job,global_bs,local_bs,ngpus,iter_s,progress_frac,phi,similarity,cost_usd,epoch\n";
static const char *const events_header = "run_id,model,policy,t_s,job,kind,detail\n";

static void run_prefix(FILE *f, int run_id, const char *model, const char *policy)
{
	fprintf(f, "%d,", run_id);
	hb_csv_put_str(f, model);
	fputc(',', f);
	hb_csv_put_str(f, policy);
}

static void sample_csv_row(FILE *f, int run_id, const char *model, const char *policy, const struct hb_sim_sample *s)
{
	run_prefix(f, run_id, model, policy);
	put_sep_num(f, s->t);
	fprintf(f, ",%d,%ld,%d,%d", s->job, s->global_bs, s->local_bs, s->ngpus);
	put_sep_num(f, s->iter_s);
	put_sep_num(f, s->progress_frac);
	put_sep_num(f, s->phi);
	put_sep_num(f, s->similarity);
	put_sep_num(f, s->cost_usd);
	fprintf(f, ",%ld\n", s->epoch);
}

static void event_csv_row(FILE *f, int run_id, const char *model, const char *policy,
			  const struct hb_sim_event_rec *e)
{
	run_prefix(f, run_id, model, policy);
	put_sep_num(f, e->t);
	fprintf(f, ",%d,", e->job);
	hb_csv_put_str(f, e->kind);
	fputc(',', f);
	hb_csv_put_str(f, e->detail);
	fputc('\n', f);
}

/*
 * <model>-series.dat: one block per policy that ran (blocks separated by two
 * blank lines, gnuplot's `index`), rows "t_h global_bs ngpus cost_usd
 * progress_frac" for the first job, closed by a row at its finish so step
 * plots reach the end.  The scripts take the block titles from a word list
 * the caller passes, in the same order.
 */
static void write_series_dat(FILE *f, const struct hb_results *r, const char *model)
{
	int block = 0;

	fprintf(f, "# hetbatch sim: %s on %s, seed %llu; columns: t_h global_bs ngpus cost_usd progress_frac\n",
		model, r->cluster, (unsigned long long)r->seed);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_run_result *ru = &r->runs[i];
		const struct hb_sim_job *job;
		double last_t = -1.0;

		if (!ru->ran || !ru->sim || ru->sim->njobs == 0 || strcmp(ru->model, model) != 0)
			continue;
		job = &ru->sim->jobs[0];
		fprintf(f, "%s# %s\n", block++ ? "\n\n" : "", ru->policy);
		for (size_t k = 0; k < ru->sim->nsamples; k++) {
			const struct hb_sim_sample *s = &ru->sim->samples[k];

			if (s->job != 0)
				continue;
			fprintf(f, "%.9g %ld %d %.9g %.9g\n", s->t / 3600.0, s->global_bs, s->ngpus, s->cost_usd,
				s->progress_frac);
			last_t = s->t;
		}
		{
			struct hb_job_metrics m;
			double end;

			hb_job_metrics(job, &m);
			end = job->arrival_s + m.time_s;
			if (end > last_t)
				fprintf(f, "%.9g %ld %d %.9g %.9g\n", end / 3600.0, job->cfg.global_bs, job->cfg.ngpus,
					job->cost_usd, job->target > 0 ? job->progress / job->target : 0.0);
		}
	}
}

/* <model>-bars.dat: "policy time_rel cost_rel time_h cost_usd", first job. */
static void write_bars_dat(FILE *f, const struct hb_results *r, const struct srow *rows, size_t nrows,
			   const char *model)
{
	const struct hb_run_result *ref = hb_results_reference(r, model);

	fprintf(f, "# hetbatch sim: %s on %s, seed %llu; relative to %s\n# policy time_rel cost_rel time_h cost_usd\n",
		model, r->cluster, (unsigned long long)r->seed, ref ? ref->policy : "-");
	for (size_t i = 0; i < nrows; i++) {
		const struct srow *s = &rows[i];

		if (s->job != 0 || strcmp(s->run->model, model) != 0 || !isfinite(s->time_rel) || !isfinite(s->cost_rel))
			continue;
		fprintf(f, "%s %.9g %.9g %.9g %.9g\n", s->run->policy, s->time_rel, s->cost_rel, s->m.time_s / 3600.0,
			s->m.cost_usd);
	}
}

/* ---- SQLite --------------------------------------------------------------------------- */

static const char *const schema =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE runs(run_id INTEGER PRIMARY KEY, cluster TEXT NOT NULL, model TEXT NOT NULL,"
	" policy TEXT NOT NULL, seed INTEGER NOT NULL, knobs_json TEXT NOT NULL,"
	" wall_s REAL,"           /* NULL unless asked for: it would break reproducibility */
	" status TEXT NOT NULL, reason TEXT, njobs INTEGER NOT NULL, end_s REAL,"
	" nsamples INTEGER NOT NULL, nevents INTEGER NOT NULL);"
	"CREATE TABLE jobs(run_id INTEGER NOT NULL REFERENCES runs(run_id), job INTEGER NOT NULL,"
	" name TEXT NOT NULL, model TEXT NOT NULL, arrival_s REAL, finish_s REAL, time_s REAL, cost_usd REAL,"
	" gpu_hours REAL, mean_gpus REAL, iterations REAL, mean_gbs REAL, final_gbs INTEGER, restarts INTEGER,"
	" overhead_s REAL, done INTEGER NOT NULL, reconfigs INTEGER, adaptations INTEGER, epochs INTEGER,"
	" samples REAL, progress REAL, target REAL, run_s REAL, final_layout TEXT, PRIMARY KEY(run_id, job));"
	"CREATE TABLE events(run_id INTEGER NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL, t REAL NOT NULL,"
	" job INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL, PRIMARY KEY(run_id, seq));"
	"CREATE TABLE timeseries(run_id INTEGER NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL,"
	" t REAL NOT NULL, job INTEGER NOT NULL, global_bs INTEGER, local_bs INTEGER, ngpus INTEGER, iter_s REAL,"
	" progress_frac REAL, phi REAL, similarity REAL, cost_usd REAL, epoch INTEGER, PRIMARY KEY(run_id, seq));";

/* The single-job comparison (one row per run and job, relative columns). */
static const char *const schema_single =
	"CREATE TABLE summary(run_id INTEGER NOT NULL REFERENCES runs(run_id), job INTEGER, model TEXT NOT NULL,"
	" policy TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, time_h REAL, cost_usd REAL, gpu_hours REAL,"
	" mean_gpus REAL, iterations REAL, mean_gbs REAL, final_gbs INTEGER, restarts INTEGER, overhead_h REAL,"
	" time_rel REAL, cost_rel REAL, ref_policy TEXT);";

static int bind_real(sqlite3_stmt *st, int i, double v)
{
	return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int step(sqlite3 *db, sqlite3_stmt *st, struct hb_error *err)
{
	int rc = hb_db_step_done(db, st, err);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

enum { ST_META, ST_RUN, ST_JOB, ST_EVENT, ST_SAMPLE, ST_SUMMARY, ST_N };

static const char *const insert_sql[ST_N] = {
	"INSERT INTO meta VALUES(?1, ?2)",
	"INSERT INTO runs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	"INSERT INTO jobs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
	" ?19, ?20, ?21, ?22, ?23, ?24)",
	"INSERT INTO events VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	"INSERT INTO timeseries VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	"INSERT INTO summary VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
};

static int db_meta(sqlite3 *db, sqlite3_stmt *st, const char *key, const char *value, struct hb_error *err)
{
	bind_text(st, 1, key);
	bind_text(st, 2, value);
	return step(db, st, err);
}

/* The run's row and its jobs' rows; its events and samples were streamed
 * (nevents, nsamples: how many rows). */
static int db_run(sqlite3 *db, sqlite3_stmt **st, const struct hb_results *r, int i, const char *knobs,
		  size_t nevents, size_t nsamples, struct hb_error *err)
{
	const struct hb_run_result *ru = &r->runs[i];
	const struct hb_sim *sim = ru->ran ? ru->sim : NULL;
	sqlite3_stmt *s = st[ST_RUN];

	sqlite3_bind_int(s, 1, i + 1);
	bind_text(s, 2, r->cluster);
	bind_text(s, 3, ru->model);
	bind_text(s, 4, ru->policy);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)r->seed);
	bind_text(s, 6, knobs);
	if (r->record_wall)
		bind_real(s, 7, ru->wall_s);
	else
		sqlite3_bind_null(s, 7);
	bind_text(s, 8, ru->ran ? "ok" : "cannot run");
	bind_text(s, 9, ru->ran ? NULL : ru->why);
	sqlite3_bind_int(s, 10, sim ? sim->njobs : 0);
	if (sim)
		bind_real(s, 11, sim->eng.now);
	sqlite3_bind_int64(s, 12, sim ? (sqlite3_int64)nsamples : 0);
	sqlite3_bind_int64(s, 13, sim ? (sqlite3_int64)nevents : 0);
	if (step(db, s, err) < 0)
		return -1;
	if (!sim)
		return 0;

	s = st[ST_JOB];
	for (int j = 0; j < sim->njobs; j++) {
		const struct hb_sim_job *job = &sim->jobs[j];
		struct hb_job_metrics m;

		hb_job_metrics(job, &m);
		sqlite3_bind_int(s, 1, i + 1);
		sqlite3_bind_int(s, 2, j);
		bind_text(s, 3, job->name);
		bind_text(s, 4, job->model ? job->model->name : ru->model);
		bind_real(s, 5, job->arrival_s);
		if (m.done)
			bind_real(s, 6, job->finish_s);
		bind_real(s, 7, m.time_s);
		bind_real(s, 8, m.cost_usd);
		bind_real(s, 9, m.gpu_hours);
		bind_real(s, 10, m.mean_gpus);
		bind_real(s, 11, m.iterations);
		bind_real(s, 12, m.mean_gbs);
		sqlite3_bind_int64(s, 13, m.final_gbs);
		sqlite3_bind_int(s, 14, m.restarts);
		bind_real(s, 15, m.overhead_s);
		sqlite3_bind_int(s, 16, m.done);
		sqlite3_bind_int64(s, 17, job->reconfigs);
		sqlite3_bind_int64(s, 18, job->adaptations);
		sqlite3_bind_int64(s, 19, job->epoch);
		bind_real(s, 20, job->samples);
		bind_real(s, 21, job->progress);
		bind_real(s, 22, job->target);
		bind_real(s, 23, job->run_s);
		bind_text(s, 24, job->cfg.layout);
		if (step(db, s, err) < 0)
			return -1;
	}

	return 0;
}

static int db_summary(sqlite3 *db, sqlite3_stmt *s, const struct srow *x, struct hb_error *err)
{
	sqlite3_bind_int(s, 1, x->run_id);
	if (x->job >= 0)
		sqlite3_bind_int(s, 2, x->job);
	bind_text(s, 3, x->run->model);
	bind_text(s, 4, x->run->policy);
	bind_text(s, 5, x->job < 0 ? "cannot run" : x->m.done ? "ok" : "unfinished");
	bind_text(s, 6, x->job < 0 ? x->run->why : NULL);
	if (x->job >= 0) {
		bind_real(s, 7, x->m.time_s / 3600.0);
		bind_real(s, 8, x->m.cost_usd);
		bind_real(s, 9, x->m.gpu_hours);
		bind_real(s, 10, x->m.mean_gpus);
		bind_real(s, 11, x->m.iterations);
		bind_real(s, 12, x->m.mean_gbs);
		sqlite3_bind_int64(s, 13, x->m.final_gbs);
		sqlite3_bind_int(s, 14, x->m.restarts);
		bind_real(s, 15, x->m.overhead_s / 3600.0);
		bind_real(s, 16, x->time_rel);
		bind_real(s, 17, x->cost_rel);
	}
	bind_text(s, 18, x->ref);
	return step(db, s, err);
}

/* The database's end: meta, runs, jobs and the summary tables (a trace
 * replay's own, tv non-NULL, replace `summary`) into db, whose events and
 * timeseries tables the stream filled; count[] gives each run's rows of
 * them (2 per run: events, samples). */
struct trace_view;
static int db_trace(sqlite3 *db, const struct trace_view *tv, sqlite3_stmt *meta, struct hb_error *err);
static const char *const schema_trace;

static int db_finish(sqlite3 *db, const struct hb_results *r, const struct srow *rows, size_t nrows,
		     const struct trace_view *tv, const size_t *count, int ncount, enum hb_events_level lv,
		     const char *path, struct hb_error *err)
{
	sqlite3_stmt *st[ST_N] = { 0 };
	char seed[32], *knobs = NULL;
	cJSON *kj = knobs_json(r);
	int rc = -1;

	if (kj)
		knobs = cJSON_PrintUnformatted(kj);
	cJSON_Delete(kj);
	if (!knobs)
		return hb_runtime_error(err, "%s: out of memory", path);
	for (int i = 0; i < ST_N; i++)
		if (i != ST_EVENT && i != ST_SAMPLE && (i != ST_SUMMARY || !tv) &&
		    hb_db_prepare(db, insert_sql[i], &st[i], err) < 0)
			goto out;
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)r->seed);
	if (db_meta(db, st[ST_META], "format", HB_RESULTS_FORMAT, err) < 0 ||
	    db_meta(db, st[ST_META], "version", HB_VERSION, err) < 0 ||
	    db_meta(db, st[ST_META], "cluster", r->cluster, err) < 0 || db_meta(db, st[ST_META], "seed", seed, err) < 0 ||
	    db_meta(db, st[ST_META], "knobs_json", knobs, err) < 0)
		goto out;
	/* Only a reduced file says so: the default's files stay as they were. */
	if (lv != HB_EVENTS_ALL && db_meta(db, st[ST_META], "events", hb_events_level_name(lv), err) < 0)
		goto out;
	for (int i = 0; i < r->nruns; i++) {
		size_t ne = i < ncount ? count[2 * i] : 0, ns = i < ncount ? count[2 * i + 1] : 0;

		if (db_run(db, st, r, i, knobs, ne, ns, err) < 0)
			goto out;
	}
	for (size_t i = 0; !tv && i < nrows; i++)
		if (db_summary(db, st[ST_SUMMARY], &rows[i], err) < 0)
			goto out;
	if (tv && db_trace(db, tv, st[ST_META], err) < 0)
		goto out;
	rc = 0;
out:
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(st[i]);
	if (rc < 0)
		hb_error_prefix(err, "%s", path);
	free(knobs);
	return rc;
}

/* ---- staging: all files or none ---------------------------------------------------------- */

struct stage {
	struct hb_atomic_file *files;  /* open temporaries, committed together */
	int n, cap;
};

static FILE *stage_open(struct stage *sg, const char *dir, const char *name, struct hb_error *err)
{
	char path[4096];

	if (sg->n == sg->cap) {
		int ncap = sg->cap ? 2 * sg->cap : 8;
		struct hb_atomic_file *nf = realloc(sg->files, (size_t)ncap * sizeof(*nf));

		if (!nf) {
			hb_runtime_error(err, "results: out of memory");
			return NULL;
		}
		sg->files = nf;
		sg->cap = ncap;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		hb_input_error(err, "%s: output path too long", dir);
		return NULL;
	}
	if (hb_atomic_open(&sg->files[sg->n], path, err) < 0)
		return NULL;
	return sg->files[sg->n++].f;
}

static int stage_check(struct stage *sg, struct hb_error *err)
{
	for (int i = 0; i < sg->n; i++)
		if (ferror(sg->files[i].f))
			return hb_runtime_error(err, "%s: write failed", sg->files[i].tmp);
	return 0;
}

static void stage_abort(struct stage *sg, int from)
{
	for (int i = from; i < sg->n; i++)
		hb_atomic_abort(&sg->files[i]);
	free(sg->files);
	sg->files = NULL;
	sg->n = sg->cap = 0;
}

static int stage_commit(struct stage *sg, struct hb_error *err)
{
	for (int i = 0; i < sg->n; i++) {
		if (hb_atomic_commit(&sg->files[i], err) < 0) {
			stage_abort(sg, i + 1);
			return -1;
		}
	}
	stage_abort(sg, sg->n);
	return 0;
}

/* ---- streaming (results.h: "Streaming") ------------------------------------------------- */

/* Rows per transaction of the staged database: large enough that commits
 * cost nothing next to the inserts, small enough that a transaction's
 * journal and dirty pages stay a few MB. */
#define STREAM_BATCH_ROWS 50000

struct hb_results_stream {
	char dir[4096];
	char made[4096];              /* the outermost directory open created ("": none), removed on abort */
	int trace;                    /* 1: a trace replay's schema */
	enum hb_events_level level;
	sqlite3 *db;                  /* the staged database, inside a transaction */
	char db_path[4096], db_tmp[4200];
	sqlite3_stmt *ins_event, *ins_sample;
	long pending;                 /* rows since the last commit */
	struct stage sg;              /* events.csv and timeseries.csv, then the end's files */
	FILE *fev, *fts;
	/* The run being written. */
	int run_id;                   /* 0 between runs */
	char model[HB_NAME_MAX], policy[HB_NAME_MAX];
	off_t ev_off, ts_off;         /* where its CSV rows begin */
	size_t *count;                /* per run: events, samples written (2 per run) */
	int ncount;                   /* runs with room in count */
	struct hb_error fail;         /* the first write failure (code HB_OK: none) */
};

/* Remember the outermost missing directory of dir before creating it. */
static int stream_mkdir(struct hb_results_stream *st, const char *dir, struct hb_error *err)
{
	char buf[4096];
	size_t len = strlen(dir);

	st->made[0] = '\0';
	if (len >= sizeof(buf))
		return hb_input_error(err, "%s: output path too long", dir);
	memcpy(buf, dir, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (!hb_path_exists(buf)) {
			hb_strlcpy(st->made, buf, sizeof(st->made));
			break;
		}
		buf[i] = dir[i];
	}
	return hb_mkdir_p(dir, err);
}

/* Remove dir and its parents up to the one stream_mkdir found missing
 * (rmdir: only empty ones, so nothing of anybody else goes). */
static void stream_rmdirs(struct hb_results_stream *st)
{
	char buf[4096];
	size_t made = strlen(st->made);

	if (!made)
		return;
	hb_strlcpy(buf, st->dir, sizeof(buf));
	while (strlen(buf) >= made) {
		char *slash;

		if (rmdir(buf) != 0)
			return;
		if (strlen(buf) == made || !(slash = strrchr(buf, '/')))
			return;
		*slash = '\0';
	}
}

static int stream_fail(struct hb_results_stream *st, struct hb_error *err)
{
	if (st->fail.code == HB_OK)
		st->fail = *err;
	return -1;
}

static int stream_open_db(struct hb_results_stream *st, struct hb_error *err)
{
	remove(st->db_tmp);
	if (sqlite3_open_v2(st->db_tmp, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
		return hb_runtime_error(err, "%s: cannot create database: %s", st->db_tmp,
					st->db ? sqlite3_errmsg(st->db) : "out of memory");
	sqlite3_extended_result_codes(st->db, 1);
	/* The file is private until renamed and removed on failure: the
	 * journal stays in memory (no -journal file is ever left beside it)
	 * and batches are not synced one by one; commit syncs the whole file
	 * once before the rename. */
	if (hb_db_exec(st->db, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;", err) < 0 ||
	    hb_db_begin(st->db, err) < 0 || hb_db_exec(st->db, schema, err) < 0 ||
	    hb_db_exec(st->db, st->trace ? schema_trace : schema_single, err) < 0 ||
	    hb_db_prepare(st->db, insert_sql[ST_EVENT], &st->ins_event, err) < 0 ||
	    hb_db_prepare(st->db, insert_sql[ST_SAMPLE], &st->ins_sample, err) < 0) {
		hb_error_prefix(err, "%s", st->db_tmp);
		return -1;
	}
	return 0;
}

static void stream_free(struct hb_results_stream *st)
{
	sqlite3_finalize(st->ins_event);
	sqlite3_finalize(st->ins_sample);
	if (st->db) {
		hb_db_rollback(st->db);
		sqlite3_close(st->db);
	}
	free(st->count);
	free(st);
}

void hb_results_stream_abort(struct hb_results_stream *st)
{
	if (!st)
		return;
	stage_abort(&st->sg, 0);
	sqlite3_finalize(st->ins_event);
	sqlite3_finalize(st->ins_sample);
	st->ins_event = st->ins_sample = NULL;
	if (st->db) {
		hb_db_rollback(st->db);
		sqlite3_close(st->db);
		st->db = NULL;
	}
	remove(st->db_tmp);
	stream_rmdirs(st);
	stream_free(st);
}

int hb_results_stream_open(struct hb_results_stream **out, const char *dir, int trace, enum hb_events_level lv,
			   struct hb_error *err)
{
	struct hb_results_stream *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (!st)
		return hb_runtime_error(err, "results: out of memory");
	st->trace = trace;
	st->level = lv;
	if ((size_t)snprintf(st->dir, sizeof(st->dir), "%s", dir) >= sizeof(st->dir) ||
	    (size_t)snprintf(st->db_path, sizeof(st->db_path), "%s/results.db", dir) >= sizeof(st->db_path)) {
		free(st);
		return hb_input_error(err, "%s: output path too long", dir);
	}
	snprintf(st->db_tmp, sizeof(st->db_tmp), "%s.tmp.%ld", st->db_path, (long)getpid());
	if (stream_mkdir(st, dir, err) < 0) {
		free(st);
		return -1;
	}
	if (stream_open_db(st, err) < 0 || !(st->fts = stage_open(&st->sg, dir, "timeseries.csv", err)) ||
	    !(st->fev = stage_open(&st->sg, dir, "events.csv", err))) {
		hb_results_stream_abort(st);
		return -1;
	}
	fputs(timeseries_header, st->fts);
	fputs(events_header, st->fev);
	*out = st;
	return 0;
}

const struct hb_error *hb_results_stream_failure(const struct hb_results_stream *st)
{
	return st && st->fail.code != HB_OK ? &st->fail : NULL;
}

int hb_results_stream_begin(struct hb_results_stream *st, int run_id, const char *model, const char *policy,
			    struct hb_error *err)
{
	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	if (run_id < 1 || st->run_id != 0)
		return hb_runtime_error(err, "results: run %d begins while run %d is open", run_id, st->run_id);
	if (run_id > st->ncount) {
		int n = run_id + 8;
		size_t *nc = realloc(st->count, sizeof(*nc) * 2 * (size_t)n);

		if (!nc)
			return hb_runtime_error(err, "results: out of memory");
		memset(nc + 2 * st->ncount, 0, sizeof(*nc) * 2 * (size_t)(n - st->ncount));
		st->count = nc;
		st->ncount = n;
	}
	st->run_id = run_id;
	hb_strlcpy(st->model, model, sizeof(st->model));
	hb_strlcpy(st->policy, policy, sizeof(st->policy));
	st->count[2 * (run_id - 1)] = st->count[2 * (run_id - 1) + 1] = 0;
	st->ev_off = ftello(st->fev);
	st->ts_off = ftello(st->fts);
	if (st->ev_off < 0 || st->ts_off < 0) {
		hb_runtime_error(err, "%s: cannot tell the CSV positions: %s", st->dir, strerror(errno));
		return stream_fail(st, err);
	}
	return 0;
}

/* A row went into the database: commit every STREAM_BATCH_ROWS. */
static int stream_row(struct hb_results_stream *st, struct hb_error *err)
{
	if (++st->pending < STREAM_BATCH_ROWS)
		return 0;
	st->pending = 0;
	if (hb_db_commit(st->db, err) < 0 || hb_db_begin(st->db, err) < 0) {
		hb_error_prefix(err, "%s", st->db_tmp);
		return stream_fail(st, err);
	}
	return 0;
}

int hb_results_stream_event(struct hb_results_stream *st, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	sqlite3_stmt *s = st->ins_event;
	size_t *n;

	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	if (st->run_id == 0 || !hb_events_level_keeps(st->level, e->kind))
		return 0;
	n = &st->count[2 * (st->run_id - 1)];
	event_csv_row(st->fev, st->run_id, st->model, st->policy, e);
	sqlite3_bind_int(s, 1, st->run_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)*n);
	bind_real(s, 3, e->t);
	sqlite3_bind_int(s, 4, e->job);
	bind_text(s, 5, e->kind);
	bind_text(s, 6, e->detail);
	if (step(st->db, s, err) < 0) {
		hb_error_prefix(err, "%s", st->db_tmp);
		return stream_fail(st, err);
	}
	(*n)++;
	return stream_row(st, err);
}

int hb_results_stream_sample(struct hb_results_stream *st, const struct hb_sim_sample *x, struct hb_error *err)
{
	sqlite3_stmt *s = st->ins_sample;
	size_t *n;

	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	/* Samples are the finest record: only `all` writes them. */
	if (st->run_id == 0 || st->level != HB_EVENTS_ALL)
		return 0;
	n = &st->count[2 * (st->run_id - 1) + 1];
	sample_csv_row(st->fts, st->run_id, st->model, st->policy, x);
	sqlite3_bind_int(s, 1, st->run_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)*n);
	bind_real(s, 3, x->t);
	sqlite3_bind_int(s, 4, x->job);
	sqlite3_bind_int64(s, 5, x->global_bs);
	sqlite3_bind_int(s, 6, x->local_bs);
	sqlite3_bind_int(s, 7, x->ngpus);
	bind_real(s, 8, x->iter_s);
	bind_real(s, 9, x->progress_frac);
	bind_real(s, 10, x->phi);
	bind_real(s, 11, x->similarity);
	bind_real(s, 12, x->cost_usd);
	sqlite3_bind_int64(s, 13, x->epoch);
	if (step(st->db, s, err) < 0) {
		hb_error_prefix(err, "%s", st->db_tmp);
		return stream_fail(st, err);
	}
	(*n)++;
	return stream_row(st, err);
}

/* Cut f back to off (the rows of a run that stopped with an error). */
static int csv_truncate(FILE *f, off_t off)
{
	return fflush(f) == 0 && ftruncate(fileno(f), off) == 0 && fseeko(f, off, SEEK_SET) == 0 ? 0 : -1;
}

int hb_results_stream_end(struct hb_results_stream *st, int ok, struct hb_error *err)
{
	int id = st->run_id;

	st->run_id = 0;
	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	if (id == 0)
		return 0;
	if (!ok) {
		char sql[128];

		snprintf(sql, sizeof(sql), "DELETE FROM events WHERE run_id = %d; DELETE FROM timeseries WHERE run_id = %d;",
			 id, id);
		st->count[2 * (id - 1)] = st->count[2 * (id - 1) + 1] = 0;
		if (hb_db_exec(st->db, sql, err) < 0) {
			hb_error_prefix(err, "%s", st->db_tmp);
			return stream_fail(st, err);
		}
		if (csv_truncate(st->fev, st->ev_off) < 0 || csv_truncate(st->fts, st->ts_off) < 0) {
			hb_runtime_error(err, "%s: cannot take a failed run's rows out of the CSV files: %s", st->dir,
					 strerror(errno));
			return stream_fail(st, err);
		}
	}
	/* A full disk shows in the CSV files' error flags: stop at the run. */
	if (stage_check(&st->sg, err) < 0)
		return stream_fail(st, err);
	return 0;
}

/* The end for both modes: the database's last rows, the staged files,
 * every file in place.  Frees st. */
static int stream_commit(struct hb_results_stream *st, const struct hb_results *r, const struct srow *rows,
			 size_t nrows, const struct trace_view *tv, enum hb_events_level lv, struct hb_error *err)
{
	int fd;

	if (st->fail.code != HB_OK) {
		*err = st->fail;
		goto fail;
	}
	if (db_finish(st->db, r, rows, nrows, tv, st->count, st->ncount, lv, st->db_tmp, err) < 0)
		goto fail;
	sqlite3_finalize(st->ins_event);
	sqlite3_finalize(st->ins_sample);
	st->ins_event = st->ins_sample = NULL;
	if (hb_db_commit(st->db, err) < 0) {
		hb_error_prefix(err, "%s", st->db_tmp);
		goto fail;
	}
	if (sqlite3_close(st->db) != SQLITE_OK) {
		st->db = NULL;
		hb_runtime_error(err, "%s: cannot close the database", st->db_tmp);
		goto fail;
	}
	st->db = NULL;
	/* synchronous=OFF above: the whole file reaches the disk here, once. */
	fd = open(st->db_tmp, O_RDONLY);
	if (fd < 0 || fsync(fd) != 0) {
		hb_runtime_error(err, "%s: cannot sync: %s", st->db_tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	close(fd);
	if (stage_check(&st->sg, err) < 0)
		goto fail;
	if (rename(st->db_tmp, st->db_path) != 0) {
		hb_runtime_error(err, "%s: cannot rename into place: %s", st->db_path, strerror(errno));
		goto fail;
	}
	if (stage_commit(&st->sg, err) < 0) {
		stream_free(st);
		return -1;
	}
	stream_free(st);
	return 0;
fail:
	hb_results_stream_abort(st);
	return -1;
}

/* Feed the records a simulation kept in memory, as if streamed. */
static int stream_records(struct hb_results_stream *st, int run_id, const char *model, const char *policy,
			  const struct hb_sim *sim, struct hb_error *err)
{
	size_t a = 0, b = 0;

	if (hb_results_stream_begin(st, run_id, model, policy, err) < 0)
		return -1;
	for (; a < sim->nevents; a++)
		if (hb_results_stream_event(st, &sim->events[a], err) < 0)
			return -1;
	for (; b < sim->nsamples; b++)
		if (hb_results_stream_sample(st, &sim->samples[b], err) < 0)
			return -1;
	return hb_results_stream_end(st, 1, err);
}

static int write_text_files(struct stage *sg, const struct hb_results *r, const struct srow *rows, size_t nrows,
			    const char *dir, int plot_data, struct hb_error *err)
{
	const char *models[256];
	int nm = hb_results_models(r, models, 256);
	cJSON *json;
	int rc;
	FILE *f;

	if (!(f = stage_open(sg, dir, "summary.csv", err)))
		return -1;
	write_summary_csv(f, rows, nrows);
	if (!(f = stage_open(sg, dir, "summary.json", err)))
		return -1;
	json = summary_json_rows(r, rows, nrows);
	rc = hb_json_print(f, json, err);
	cJSON_Delete(json);
	if (rc < 0) {
		hb_error_prefix(err, "%s/summary.json: ", dir);
		return -1;
	}
	for (int mi = 0; plot_data && mi < nm; mi++) {
		char stem[HB_NAME_MAX], name[HB_NAME_MAX + 16];

		if (!hb_results_reference(r, models[mi]))
			continue; /* nothing ran: nothing to plot */
		hb_results_file_stem(models[mi], stem, sizeof(stem));
		snprintf(name, sizeof(name), "%s-series.dat", stem);
		if (!(f = stage_open(sg, dir, name, err)))
			return -1;
		write_series_dat(f, r, models[mi]);
		snprintf(name, sizeof(name), "%s-bars.dat", stem);
		if (!(f = stage_open(sg, dir, name, err)))
			return -1;
		write_bars_dat(f, r, rows, nrows, models[mi]);
	}
	return stage_check(sg, err);
}

int hb_results_commit(const struct hb_results *r, struct hb_results_stream *st, int plot_data, struct hb_error *err)
{
	struct srow *rows = NULL;
	size_t nrows = 0;
	int rc;

	if (summary_rows(r, &rows, &nrows, err) < 0 || write_text_files(&st->sg, r, rows, nrows, st->dir, plot_data, err) < 0) {
		free(rows);
		hb_results_stream_abort(st);
		return -1;
	}
	rc = stream_commit(st, r, rows, nrows, NULL, r->events, err);
	free(rows);
	return rc;
}

int hb_results_write(const struct hb_results *r, const char *dir, int plot_data, struct hb_error *err)
{
	struct hb_results_stream *st;

	if (hb_results_stream_open(&st, dir, 0, r->events, err) < 0)
		return -1;
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_run_result *ru = &r->runs[i];

		if (ru->ran && ru->sim && stream_records(st, i + 1, ru->model, ru->policy, ru->sim, err) < 0) {
			hb_results_stream_abort(st);
			return -1;
		}
	}
	return hb_results_commit(r, st, plot_data, err);
}

/* ==== trace replay (results.h: "trace replay") ============================================ */

/* A trace replay seen as single-job results (model "trace"), so the runs,
 * jobs, events and time-series writers above serve both modes. */
struct trace_view {
	const struct hb_trace_results *tr;
	struct hb_results base;
	struct hb_run_result *bruns;   /* owned */
};

static int trace_view_init(struct trace_view *tv, const struct hb_trace_results *tr, struct hb_error *err)
{
	memset(tv, 0, sizeof(*tv));
	tv->tr = tr;
	tv->bruns = calloc((size_t)(tr->nruns > 0 ? tr->nruns : 1), sizeof(*tv->bruns));
	if (!tv->bruns)
		return hb_runtime_error(err, "results: out of memory");
	for (int i = 0; i < tr->nruns; i++) {
		struct hb_run_result *b = &tv->bruns[i];
		const struct hb_trace_run *ru = &tr->runs[i];

		hb_strlcpy(b->model, HB_TRACE_RUN_MODEL, sizeof(b->model));
		hb_strlcpy(b->policy, ru->policy, sizeof(b->policy));
		b->ran = ru->ran && ru->sim;
		hb_strlcpy(b->why, ru->why, sizeof(b->why));
		b->sim = b->ran ? ru->sim : NULL;
		b->wall_s = ru->wall_s;
	}
	hb_strlcpy(tv->base.cluster, tr->cluster, sizeof(tv->base.cluster));
	tv->base.seed = tr->seed;
	tv->base.opts = tr->opts;
	tv->base.defaults = tr->defaults;
	tv->base.runs = tv->bruns;
	tv->base.nruns = tr->nruns;
	tv->base.record_wall = tr->record_wall;
	return 0;
}

static void trace_view_free(struct trace_view *tv)
{
	free(tv->bruns);
	tv->bruns = NULL;
}

static int ran(const struct hb_trace_run *ru)
{
	return ru->ran && ru->sim;
}

/* ---- metrics of one run ---------------------------------------------------------------- */

/* The composite sink of a streamed replay: every record feeds the
 * utilisation accumulator; those the level keeps also go to the files. */
static int run_wants_detail(void *ctx, const char *kind)
{
	const struct hb_trace_run *ru = ctx;

	return ru->out && hb_events_level_keeps(ru->out->level, kind);
}

static int run_event(void *ctx, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	struct hb_trace_run *ru = ctx;

	if (hb_gpu_acc_event(&ru->acc, e, err) < 0)
		return -1;
	return ru->out ? hb_results_stream_event(ru->out, e, err) : 0;
}

static int run_sample(void *ctx, const struct hb_sim_sample *x, struct hb_error *err)
{
	struct hb_trace_run *ru = ctx;

	if (hb_gpu_acc_sample(&ru->acc, x, err) < 0)
		return -1;
	return ru->out ? hb_results_stream_sample(ru->out, x, err) : 0;
}

int hb_trace_run_stream(struct hb_trace_run *ru, struct hb_sim *sim, struct hb_results_stream *out, int run_id,
			struct hb_error *err)
{
	if (hb_gpu_acc_init(&ru->acc, sim->njobs, err) < 0)
		return -1;
	if (out && hb_results_stream_begin(out, run_id, HB_TRACE_RUN_MODEL, ru->policy, err) < 0)
		return -1;
	ru->out = out;
	ru->streamed = 1;
	ru->sink.ctx = ru;
	ru->sink.wants_detail = run_wants_detail;
	ru->sink.event = run_event;
	ru->sink.sample = run_sample;
	hb_sim_stream(sim, &ru->sink);
	return 0;
}

int hb_trace_run_metrics(struct hb_trace_run *ru, int fairness, int show_progress, struct hb_error *err)
{
	if (!ran(ru))
		return 0;
	if (ru->streamed) {
		struct hb_gpu_interval *iv;
		size_t n;
		int rc;

		if (hb_gpu_acc_finish(&ru->acc, ru->sim, &iv, &n, err) < 0)
			return -1;
		hb_gpu_acc_free(&ru->acc);
		rc = hb_metrics_utilisation_iv(ru->sim, iv, n, HB_TRACE_UTIL_POINTS, &ru->util, err);
		free(iv);
		if (rc < 0)
			return -1;
	} else if (hb_metrics_utilisation(ru->sim, HB_TRACE_UTIL_POINTS, &ru->util, err) < 0) {
		return -1;
	}
	if (fairness) {
		ru->rho = calloc((size_t)(ru->sim->njobs > 0 ? ru->sim->njobs : 1), sizeof(*ru->rho));
		if (!ru->rho)
			return hb_runtime_error(err, "results: out of memory");
		if (hb_metrics_rho(ru->sim, show_progress, ru->rho, &ru->rho_stats, err) < 0)
			return -1;
	}
	if (hb_metrics_by_model(ru->sim, &ru->by_model, &ru->nby_model, err) < 0)
		return -1;
	hb_cluster_summary(ru->sim, ru->rho, &ru->util, &ru->sum);
	return 0;
}

void hb_trace_run_free(struct hb_trace_run *ru)
{
	hb_gpu_acc_free(&ru->acc);
	hb_util_series_free(&ru->util);
	free(ru->rho);
	free(ru->by_model);
	ru->rho = NULL;
	ru->by_model = NULL;
	ru->nby_model = 0;
}

static long dropped(const struct hb_trace_results *r, const struct hb_trace_run *ru)
{
	return r->oversize + ru->sum.unfinished;
}

/* ---- terminal ------------------------------------------------------------------------------ */

/* A number in a column, or "-" when undefined. */
static void cell(FILE *out, int width, int prec, double v)
{
	if (isfinite(v))
		fprintf(out, " %*.*f", width, prec, v);
	else
		fprintf(out, " %*s", width, "-");
}

static const struct hb_model_jct *model_row(const struct hb_trace_run *ru, const char *model)
{
	for (int i = 0; i < ru->nby_model; i++)
		if (strcmp(ru->by_model[i].model, model) == 0)
			return &ru->by_model[i];
	return NULL;
}

void hb_trace_results_print(FILE *out, const struct hb_trace_results *r)
{
	struct trace_view tv;
	struct hb_error err = { 0 };
	const struct hb_trace_run *first = NULL;
	char line[2048];

	if (trace_view_init(&tv, r, &err) < 0) {
		fprintf(out, "%s\n", err.msg);
		return;
	}
	hb_results_knob_line(&tv.base, NULL, line, sizeof(line));
	fprintf(out, "cluster %s (%d GPUs), trace %s (%s), %ld jobs", r->cluster, r->cluster_gpus, r->trace, r->format,
		r->read - r->oversize);
	if (r->oversize > 0)
		fprintf(out, " (%ld larger than the cluster skipped)", r->oversize);
	if (r->assigned > 0)
		fprintf(out, " (%ld models drawn by GPU-time class)", r->assigned);
	fprintf(out, ", seed %llu, load %g, filters: %s\n%s  (* = non-default)\n", (unsigned long long)r->seed, r->load,
		r->filters, line);
	fprintf(out, "%-12s %5s %5s %5s %8s %8s %8s %9s %8s %9s %9s %6s %8s %7s %7s %9s %8s\n", "policy", "jobs", "done",
		"drop", "JCT(h)", "med(h)", "p99(h)", "makespan", "queue(h)", "GPU-h", "cost($)", "util%", "rst/job",
		"rho50", "rho99", "ms/round", "wall(s)");
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		const struct hb_cluster_summary *s = &ru->sum;

		if (!ran(ru)) {
			fprintf(out, "%-12s cannot run: %s\n", ru->policy, ru->why);
			continue;
		}
		if (!first)
			first = ru;
		fprintf(out, "%-12s %5d %5d %5ld", ru->policy, s->njobs, s->completed, dropped(r, ru));
		cell(out, 8, 2, s->jct_s.mean / 3600.0);
		cell(out, 8, 2, s->jct_s.median / 3600.0);
		cell(out, 8, 2, s->jct_s.p99 / 3600.0);
		cell(out, 9, 2, s->makespan_s / 3600.0);
		cell(out, 8, 2, s->queue_s.mean / 3600.0);
		cell(out, 9, 1, s->gpu_hours);
		cell(out, 9, 2, s->cost_usd);
		cell(out, 6, 1, 100.0 * s->util_mean);
		cell(out, 8, 2, s->restarts_per_job);
		cell(out, 7, 2, s->rho.median);
		cell(out, 7, 2, s->rho.p99);
		cell(out, 9, 3, s->sched_ms_per_round);
		cell(out, 8, 2, ru->wall_s);
		fputc('\n', out);
	}
	if (first) {
		fprintf(out, "\nmean JCT by model (h)\n%-22s", "model (jobs)");
		for (int i = 0; i < r->nruns; i++)
			if (ran(&r->runs[i]))
				fprintf(out, " %10.10s", r->runs[i].policy);
		fputc('\n', out);
		for (int m = 0; m < first->nby_model; m++) {
			char name[64];

			snprintf(name, sizeof(name), "%.14s (%d)", first->by_model[m].model, first->by_model[m].njobs);
			fprintf(out, "%-22s", name);
			for (int i = 0; i < r->nruns; i++) {
				const struct hb_model_jct *mj;

				if (!ran(&r->runs[i]))
					continue;
				mj = model_row(&r->runs[i], first->by_model[m].model);
				cell(out, 10, 2, mj ? mj->jct_mean_s / 3600.0 : NAN);
			}
			fputc('\n', out);
		}
	}
	if (r->fairness)
		fprintf(out, "\nrho: JCT here / JCT alone on max(1, round(%d / J)) GPUs, J = mean active jobs over the "
			     "job's life (metrics.h)\n",
			r->cluster_gpus);
	for (int i = 0; i < r->nruns; i++)
		if (ran(&r->runs[i]) && r->runs[i].rho_stats.failed > 0)
			fprintf(out, "rho %s: %d jobs without a reference run (first: %s)\n", r->runs[i].policy,
				r->runs[i].rho_stats.failed, r->runs[i].rho_stats.why);
	trace_view_free(&tv);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

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

	if (trace_view_init(&tv, r, &err) < 0)
		return NULL;
	nk = hb_results_knobs(&tv.base, k);
	root = cJSON_CreateObject();
	knobs = knobs_json(&tv.base);
	trace_view_free(&tv);
	if (!root || !knobs) {
		cJSON_Delete(knobs);
		cJSON_Delete(root);
		return NULL;
	}
	cJSON_AddStringToObject(root, "format", HB_RESULTS_FORMAT);
	cJSON_AddStringToObject(root, "version", HB_VERSION);
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

/* ---- CSV ------------------------------------------------------------------------------------ */

static void write_cluster_summary_csv(FILE *f, const struct hb_trace_results *r)
{
	fputs("run_id,policy,status,reason,jobs,completed,dropped,jct_mean_h,jct_median_h,jct_p99_h,jct_max_h,"
	      "makespan_h,queue_mean_h,queue_p99_h,gpu_hours,cost_usd,util_mean,restarts_per_job,"
	      "preemptions_per_job,rho_jobs,rho_median,rho_p99,rho_max,sched_rounds\n",
	      f);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		const struct hb_cluster_summary *s = &ru->sum;

		fprintf(f, "%d,", i + 1);
		hb_csv_put_str(f, ru->policy);
		if (!ran(ru)) {
			fputs(",cannot run,", f);
			hb_csv_put_str(f, ru->why);
			fputs(",,,,,,,,,,,,,,,,,,,,\n", f);
			continue;
		}
		fprintf(f, ",ok,,%d,%d,%ld", s->njobs, s->completed, dropped(r, ru));
		put_sep_num(f, s->jct_s.mean / 3600.0);
		put_sep_num(f, s->jct_s.median / 3600.0);
		put_sep_num(f, s->jct_s.p99 / 3600.0);
		put_sep_num(f, s->jct_s.max / 3600.0);
		put_sep_num(f, s->makespan_s / 3600.0);
		put_sep_num(f, s->queue_s.mean / 3600.0);
		put_sep_num(f, s->queue_s.p99 / 3600.0);
		put_sep_num(f, s->gpu_hours);
		put_sep_num(f, s->cost_usd);
		put_sep_num(f, s->util_mean);
		put_sep_num(f, s->restarts_per_job);
		put_sep_num(f, s->preemptions_per_job);
		fprintf(f, ",%zu", s->rho.n);
		put_sep_num(f, s->rho.median);
		put_sep_num(f, s->rho.p99);
		put_sep_num(f, s->rho.max);
		fprintf(f, ",%ld\n", s->sched_rounds);
	}
}

/* Per-job values shared by jobs.csv and the cluster_jobs table. */
struct trace_job {
	double jct_s, queue_s, finish_s;       /* NAN when not done / not started */
	double javg, ref_jct_s, rho;           /* NAN without fairness */
	int ref_gpus;
};

static void trace_job(const struct hb_trace_run *ru, int j, struct trace_job *t)
{
	const struct hb_sim_job *job = &ru->sim->jobs[j];
	int done = job->state == HB_JOB_DONE;

	t->finish_s = done ? job->finish_s : NAN;
	t->jct_s = done ? job->finish_s - job->arrival_s : NAN;
	t->queue_s = job->started ? job->start_s - job->arrival_s : NAN;
	t->javg = ru->rho ? ru->rho[j].javg : NAN;
	t->ref_jct_s = ru->rho ? ru->rho[j].ref_jct_s : NAN;
	t->rho = ru->rho ? ru->rho[j].rho : NAN;
	t->ref_gpus = ru->rho ? ru->rho[j].ref_gpus : 0;
}

static void write_trace_jobs_csv(FILE *f, const struct hb_trace_results *r)
{
	fputs("run_id,policy,job,name,model,req_gpus,req_batch,arrival_s,start_s,finish_s,jct_s,queue_s,gpu_hours,"
	      "cost_usd,restarts,preemptions,mean_gbs,final_gbs,javg,ref_gpus,ref_jct_s,rho\n",
	      f);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];

		for (int j = 0; ran(ru) && j < ru->sim->njobs; j++) {
			const struct hb_sim_job *job = &ru->sim->jobs[j];
			struct hb_job_metrics m;
			struct trace_job t;

			hb_job_metrics(job, &m);
			trace_job(ru, j, &t);
			fprintf(f, "%d,", i + 1);
			hb_csv_put_str(f, ru->policy);
			fprintf(f, ",%d,", j);
			hb_csv_put_str(f, job->name);
			fputc(',', f);
			hb_csv_put_str(f, job->model->name);
			fprintf(f, ",%d,%ld", job->req_gpus, job->req_batch);
			put_sep_num(f, job->arrival_s);
			put_sep_num(f, job->started ? job->start_s : NAN);
			put_sep_num(f, t.finish_s);
			put_sep_num(f, t.jct_s);
			put_sep_num(f, t.queue_s);
			put_sep_num(f, m.gpu_hours);
			put_sep_num(f, m.cost_usd);
			fprintf(f, ",%d,%d", job->restarts, job->preemptions);
			put_sep_num(f, m.mean_gbs);
			fprintf(f, ",%ld", m.final_gbs);
			put_sep_num(f, t.javg);
			fputc(',', f);
			if (t.ref_gpus > 0)
				fprintf(f, "%d", t.ref_gpus);
			put_sep_num(f, t.ref_jct_s);
			put_sep_num(f, t.rho);
			fputc('\n', f);
		}
	}
}

static void write_by_model_csv(FILE *f, const struct hb_trace_results *r)
{
	fputs("run_id,policy,model,jobs,completed,jct_mean_h,jct_median_h\n", f);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];

		for (int m = 0; ran(ru) && m < ru->nby_model; m++) {
			fprintf(f, "%d,", i + 1);
			hb_csv_put_str(f, ru->policy);
			fputc(',', f);
			hb_csv_put_str(f, ru->by_model[m].model);
			fprintf(f, ",%d,%d", ru->by_model[m].njobs, ru->by_model[m].completed);
			put_sep_num(f, ru->by_model[m].jct_mean_s / 3600.0);
			put_sep_num(f, ru->by_model[m].jct_median_s / 3600.0);
			fputc('\n', f);
		}
	}
}

static void write_utilisation_csv(FILE *f, const struct hb_trace_results *r)
{
	fputs("run_id,policy,bin,t_s,t_end_s,util\n", f);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		const struct hb_util_series *u = &ru->util;

		for (int k = 0; ran(ru) && k < u->npoints; k++) {
			fprintf(f, "%d,", i + 1);
			hb_csv_put_str(f, ru->policy);
			fprintf(f, ",%d", k);
			put_sep_num(f, u->t_s[k]);
			put_sep_num(f, k + 1 < u->npoints ? u->t_s[k + 1] : u->t1_s);
			put_sep_num(f, u->util[k]);
			fputc('\n', f);
		}
	}
}

/* ---- gnuplot data ------------------------------------------------------------------------------ */

enum { PLOT_JCT, PLOT_UTIL, PLOT_RHO };

static int plot_kind(const char *what)
{
	if (strcmp(what, "jct") == 0)
		return PLOT_JCT;
	if (strcmp(what, "util") == 0)
		return PLOT_UTIL;
	if (strcmp(what, "rho") == 0)
		return PLOT_RHO;
	return -1;
}

static int has_block(const struct hb_trace_run *ru, int kind)
{
	if (!ran(ru))
		return 0;
	switch (kind) {
	case PLOT_JCT: return ru->sum.jct_s.n > 0;
	case PLOT_UTIL: return ru->util.npoints > 0;
	case PLOT_RHO: return ru->rho && ru->sum.rho.n > 0;
	default: return 0;
	}
}

int hb_trace_results_plot_names(const struct hb_trace_results *r, const char *what, char *buf, size_t size)
{
	int kind = plot_kind(what), n = 0;
	size_t len = 0;

	if (size > 0)
		buf[0] = '\0';
	for (int i = 0; i < r->nruns; i++) {
		if (!has_block(&r->runs[i], kind))
			continue;
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", n ? " " : "",
					r->runs[i].policy);
		n++;
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One CDF block: sorted values, fraction k/n. */
static int cdf_block(FILE *f, double *v, size_t n, double scale)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[k++] = v[i];
	qsort(v, k, sizeof(double), cmp_double);
	for (size_t i = 0; i < k; i++)
		fprintf(f, "%.9g %.9g\n", v[i] * scale, (double)(i + 1) / (double)k);
	return 0;
}

/* trace-<what>.dat: one block per policy of hb_trace_results_plot_names. */
static int write_trace_dat(FILE *f, const struct hb_trace_results *r, int kind, struct hb_error *err)
{
	static const char *const cols[] = { "jct_h cdf", "t_h util_pct", "rho cdf" };
	int block = 0;

	fprintf(f, "# hetbatch sim --trace %s on %s, seed %llu, load %g; columns: %s\n", r->trace, r->cluster,
		(unsigned long long)r->seed, r->load, cols[kind]);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		double *v;

		if (!has_block(ru, kind))
			continue;
		fprintf(f, "%s# %s\n", block++ ? "\n\n" : "", ru->policy);
		if (kind == PLOT_UTIL) {
			const struct hb_util_series *u = &ru->util;

			for (int k = 0; k < u->npoints; k++)
				fprintf(f, "%.9g %.9g\n", u->t_s[k] / 3600.0, 100.0 * u->util[k]);
			/* close the last step at the end of the window */
			fprintf(f, "%.9g %.9g\n", u->t1_s / 3600.0, 100.0 * u->util[u->npoints - 1]);
			continue;
		}
		v = malloc(sizeof(double) * (size_t)(ru->sim->njobs + 1));
		if (!v)
			return hb_runtime_error(err, "results: out of memory");
		for (int j = 0; j < ru->sim->njobs; j++) {
			struct trace_job t;

			trace_job(ru, j, &t);
			v[j] = kind == PLOT_JCT ? t.jct_s : t.rho;
		}
		cdf_block(f, v, (size_t)ru->sim->njobs, kind == PLOT_JCT ? 1.0 / 3600.0 : 1.0);
		free(v);
	}
	return 0;
}

/* ---- SQLite --------------------------------------------------------------------------------------- */

static const char *const schema_trace =
	"CREATE TABLE cluster_summary(run_id INTEGER PRIMARY KEY REFERENCES runs(run_id), policy TEXT NOT NULL,"
	" status TEXT NOT NULL, reason TEXT, jobs INTEGER, completed INTEGER, dropped INTEGER, jct_mean_h REAL,"
	" jct_median_h REAL, jct_p99_h REAL, jct_max_h REAL, makespan_h REAL, queue_mean_h REAL, queue_p99_h REAL,"
	" gpu_hours REAL, cost_usd REAL, util_mean REAL, restarts_per_job REAL, preemptions_per_job REAL,"
	" rho_jobs INTEGER, rho_median REAL, rho_p99 REAL, rho_max REAL, sched_rounds INTEGER,"
	" sched_ms_per_round REAL);"  /* NULL unless asked for: a wall time */
	"CREATE TABLE cluster_jobs(run_id INTEGER NOT NULL REFERENCES runs(run_id), job INTEGER NOT NULL,"
	" name TEXT NOT NULL, model TEXT NOT NULL, req_gpus INTEGER, req_batch INTEGER, arrival_s REAL, start_s REAL,"
	" finish_s REAL, jct_s REAL, queue_s REAL, restarts INTEGER, preemptions INTEGER, javg REAL,"
	" ref_gpus INTEGER, ref_jct_s REAL, rho REAL, PRIMARY KEY(run_id, job));"
	"CREATE TABLE model_jct(run_id INTEGER NOT NULL REFERENCES runs(run_id), model TEXT NOT NULL,"
	" jobs INTEGER NOT NULL, completed INTEGER NOT NULL, jct_mean_h REAL, jct_median_h REAL,"
	" PRIMARY KEY(run_id, model));"
	"CREATE TABLE utilisation(run_id INTEGER NOT NULL REFERENCES runs(run_id), bin INTEGER NOT NULL,"
	" t_s REAL NOT NULL, t_end_s REAL NOT NULL, util REAL, PRIMARY KEY(run_id, bin));";

enum { TS_SUMMARY, TS_JOB, TS_MODEL, TS_UTIL, TS_N };

static const char *const trace_sql[TS_N] = {
	"INSERT INTO cluster_summary VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
	" ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
	"INSERT INTO cluster_jobs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
	"INSERT INTO model_jct VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	"INSERT INTO utilisation VALUES(?1, ?2, ?3, ?4, ?5)",
};

static int db_trace_summary(sqlite3 *db, sqlite3_stmt *s, const struct hb_trace_results *r, int i,
			    struct hb_error *err)
{
	const struct hb_trace_run *ru = &r->runs[i];
	const struct hb_cluster_summary *x = &ru->sum;

	sqlite3_bind_int(s, 1, i + 1);
	bind_text(s, 2, ru->policy);
	bind_text(s, 3, ran(ru) ? "ok" : "cannot run");
	bind_text(s, 4, ran(ru) ? NULL : ru->why);
	if (ran(ru)) {
		sqlite3_bind_int(s, 5, x->njobs);
		sqlite3_bind_int(s, 6, x->completed);
		sqlite3_bind_int64(s, 7, dropped(r, ru));
		bind_real(s, 8, x->jct_s.mean / 3600.0);
		bind_real(s, 9, x->jct_s.median / 3600.0);
		bind_real(s, 10, x->jct_s.p99 / 3600.0);
		bind_real(s, 11, x->jct_s.max / 3600.0);
		bind_real(s, 12, x->makespan_s / 3600.0);
		bind_real(s, 13, x->queue_s.mean / 3600.0);
		bind_real(s, 14, x->queue_s.p99 / 3600.0);
		bind_real(s, 15, x->gpu_hours);
		bind_real(s, 16, x->cost_usd);
		bind_real(s, 17, x->util_mean);
		bind_real(s, 18, x->restarts_per_job);
		bind_real(s, 19, x->preemptions_per_job);
		sqlite3_bind_int64(s, 20, (sqlite3_int64)x->rho.n);
		bind_real(s, 21, x->rho.median);
		bind_real(s, 22, x->rho.p99);
		bind_real(s, 23, x->rho.max);
		sqlite3_bind_int64(s, 24, x->sched_rounds);
		if (r->record_wall)
			bind_real(s, 25, x->sched_ms_per_round);
	}
	return step(db, s, err);
}

static int db_trace_run(sqlite3 *db, sqlite3_stmt **st, const struct hb_trace_results *r, int i,
			struct hb_error *err)
{
	const struct hb_trace_run *ru = &r->runs[i];
	sqlite3_stmt *s = st[TS_JOB];

	if (db_trace_summary(db, st[TS_SUMMARY], r, i, err) < 0)
		return -1;
	if (!ran(ru))
		return 0;
	for (int j = 0; j < ru->sim->njobs; j++) {
		const struct hb_sim_job *job = &ru->sim->jobs[j];
		struct trace_job t;

		trace_job(ru, j, &t);
		sqlite3_bind_int(s, 1, i + 1);
		sqlite3_bind_int(s, 2, j);
		bind_text(s, 3, job->name);
		bind_text(s, 4, job->model->name);
		sqlite3_bind_int(s, 5, job->req_gpus);
		sqlite3_bind_int64(s, 6, job->req_batch);
		bind_real(s, 7, job->arrival_s);
		bind_real(s, 8, job->started ? job->start_s : NAN);
		bind_real(s, 9, t.finish_s);
		bind_real(s, 10, t.jct_s);
		bind_real(s, 11, t.queue_s);
		sqlite3_bind_int(s, 12, job->restarts);
		sqlite3_bind_int(s, 13, job->preemptions);
		bind_real(s, 14, t.javg);
		if (t.ref_gpus > 0)
			sqlite3_bind_int(s, 15, t.ref_gpus);
		bind_real(s, 16, t.ref_jct_s);
		bind_real(s, 17, t.rho);
		if (step(db, s, err) < 0)
			return -1;
	}
	s = st[TS_MODEL];
	for (int m = 0; m < ru->nby_model; m++) {
		sqlite3_bind_int(s, 1, i + 1);
		bind_text(s, 2, ru->by_model[m].model);
		sqlite3_bind_int(s, 3, ru->by_model[m].njobs);
		sqlite3_bind_int(s, 4, ru->by_model[m].completed);
		bind_real(s, 5, ru->by_model[m].jct_mean_s / 3600.0);
		bind_real(s, 6, ru->by_model[m].jct_median_s / 3600.0);
		if (step(db, s, err) < 0)
			return -1;
	}
	s = st[TS_UTIL];
	for (int k = 0; k < ru->util.npoints; k++) {
		sqlite3_bind_int(s, 1, i + 1);
		sqlite3_bind_int(s, 2, k);
		bind_real(s, 3, ru->util.t_s[k]);
		bind_real(s, 4, k + 1 < ru->util.npoints ? ru->util.t_s[k + 1] : ru->util.t1_s);
		bind_real(s, 5, ru->util.util[k]);
		if (step(db, s, err) < 0)
			return -1;
	}
	return 0;
}

static int db_trace(sqlite3 *db, const struct trace_view *tv, sqlite3_stmt *meta, struct hb_error *err)
{
	const struct hb_trace_results *r = tv->tr;
	sqlite3_stmt *st[TS_N] = { 0 };
	char num[64];
	int rc = -1;

	if (db_meta(db, meta, "mode", "trace", err) < 0 || db_meta(db, meta, "trace", r->trace, err) < 0 ||
	    db_meta(db, meta, "trace_format", r->format, err) < 0 || db_meta(db, meta, "filters", r->filters, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%.9g", r->load);
	if (db_meta(db, meta, "load", num, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%ld", r->read);
	if (db_meta(db, meta, "jobs_read", num, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%ld", r->oversize);
	if (db_meta(db, meta, "jobs_oversize", num, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%ld", r->assigned);
	if (db_meta(db, meta, "models_assigned", num, err) < 0 ||
	    db_meta(db, meta, "fairness", r->fairness ? "on" : "off", err) < 0)
		return -1;
	for (int i = 0; i < TS_N; i++)
		if (hb_db_prepare(db, trace_sql[i], &st[i], err) < 0)
			goto out;
	for (int i = 0; i < r->nruns; i++)
		if (db_trace_run(db, st, r, i, err) < 0)
			goto out;
	rc = 0;
out:
	for (int i = 0; i < TS_N; i++)
		sqlite3_finalize(st[i]);
	return rc;
}

/* ---- all files ----------------------------------------------------------------------------------- */

int hb_trace_results_commit(const struct hb_trace_results *r, struct hb_results_stream *st, int plot_data,
			    struct hb_error *err)
{
	static const char *const dat[] = { "trace-jct.dat", "trace-util.dat", "trace-rho.dat" };
	const char *dir = st->dir;
	struct trace_view tv;
	int bad;
	cJSON *json;
	FILE *f;
	int rc;

	if (trace_view_init(&tv, r, err) < 0) {
		hb_results_stream_abort(st);
		return -1;
	}
	if (!(f = stage_open(&st->sg, dir, "cluster_summary.csv", err)))
		goto fail;
	write_cluster_summary_csv(f, r);
	if (!(f = stage_open(&st->sg, dir, "jobs.csv", err)))
		goto fail;
	write_trace_jobs_csv(f, r);
	if (!(f = stage_open(&st->sg, dir, "by_model.csv", err)))
		goto fail;
	write_by_model_csv(f, r);
	if (!(f = stage_open(&st->sg, dir, "utilisation.csv", err)))
		goto fail;
	write_utilisation_csv(f, r);
	if (!(f = stage_open(&st->sg, dir, "summary.json", err)))
		goto fail;
	json = hb_trace_results_json(r);
	bad = hb_json_print(f, json, err) < 0;
	cJSON_Delete(json);
	if (bad) {
		hb_error_prefix(err, "%s/summary.json: ", dir);
		goto fail;
	}
	for (int k = 0; plot_data && k < 3; k++) {
		if (!(f = stage_open(&st->sg, dir, dat[k], err)) || write_trace_dat(f, r, k, err) < 0)
			goto fail;
	}
	rc = stream_commit(st, &tv.base, NULL, 0, &tv, r->events, err);
	trace_view_free(&tv);
	return rc;
fail:
	hb_results_stream_abort(st);
	trace_view_free(&tv);
	return -1;
}

int hb_trace_results_write(const struct hb_trace_results *r, const char *dir, int plot_data, struct hb_error *err)
{
	struct hb_results_stream *st;

	for (int i = 0; i < r->nruns; i++)
		if (ran(&r->runs[i]) && r->runs[i].streamed)
			return hb_runtime_error(err, "results: %s's records were streamed (hb_trace_results_commit)",
						r->runs[i].policy);
	if (hb_results_stream_open(&st, dir, 1, r->events, err) < 0)
		return -1;
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];

		if (ran(ru) && stream_records(st, i + 1, HB_TRACE_RUN_MODEL, ru->policy, ru->sim, err) < 0) {
			hb_results_stream_abort(st);
			return -1;
		}
	}
	return hb_trace_results_commit(r, st, plot_data, err);
}
