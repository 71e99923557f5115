/*
 * results.c: the result set itself (results.h says what is written and why
 * it is reproducible): the --events levels, per-job metrics, the knobs, the
 * summary rows every writer shares, a trace replay seen as a result set,
 * and a replay run's metrics.  The writers are one file per output:
 *
 *   results_table.c   the terminal tables
 *   results_json.c    summary.json's documents
 *   results_files.c   CSV and gnuplot data, staging (all files or none)
 *   results_db.c      results.db: schema and rows
 *   results_stream.c  records written as the runs go, and the end of a set
 *
 * results_priv.h holds what they share.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fidelity.h"       /* hb_fidelity_name: the fidelity knob */
#include "policy.h"         /* hb_policy_knob: the policies' knobs */
#include "results_priv.h"
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
	if (lv == HB_EVENTS_ALL)
		return 1;
	if (lv == HB_EVENTS_NONE)
		return 0;
	/* Asked twice of every record of a replay (millions; it was 5 % of
	 * the instructions of a whole-trace --out): the first letter picks
	 * the one or two names to compare, and settles `epoch`. */
	switch (kind[0]) {
	case 'a':
		return strcmp(kind, "arrival") == 0 || strcmp(kind, "admit") == 0;
	case 's':
		return strcmp(kind, "start") == 0;
	case 'r':
		return strcmp(kind, "restart") == 0 || strcmp(kind, "resize") == 0;
	case 'p':
		return strcmp(kind, "preempt") == 0;
	case 'd':
		return strcmp(kind, "drop") == 0 || strcmp(kind, "done") == 0;
	case 'm':
		return strcmp(kind, "move") == 0;
	default:
		return 0;
	}
}

enum hb_events_level hb_events_level_default(long njobs)
{
	return njobs > HB_EVENTS_ALL_MAX_JOBS ? HB_EVENTS_SUMMARY : HB_EVENTS_ALL;
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

/* A file knob (--replay, --capacity): recorded by its base name, since an
 * absolute path would make the files depend on where the command ran. */
static void knob_file(struct hb_knob *x, const char *path, const char *default_path)
{
	if (path) {
		x->type = HB_KNOB_STR;
		x->str = base_name(path);
		hb_strlcpy(x->text, x->str, sizeof(x->text));
	} else {
		knob_default(x, "none");
	}
	x->non_default = !path != !default_path;
}

/* A policy's knob pk at value v. */
static void policy_knob(struct hb_knob *x, const struct hb_pknob *pk, double v)
{
	hb_pknob_format(pk, v, x->text, sizeof(x->text));
	x->num = v;
	switch (pk->type) {
	case HB_PKNOB_FLAG:
	case HB_PKNOB_SWITCH:
		x->type = HB_KNOB_BOOL;
		x->num = v != 0;
		break;
	case HB_PKNOB_WORDS:
		x->type = HB_KNOB_STR;
		x->str = pk->words[(int)v];
		break;
	default:
		x->type = HB_KNOB_NUM;
	}
}

int hb_results_knobs(const struct hb_results *r, struct hb_knob *k)
{
	const struct hb_sim_opts *o = &r->opts, *d = &r->defaults;
	const struct hb_pknob_table *t;
	const struct hb_pknob *pk;
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

	x = knob(k, &n, "replay", "replay", 1);
	knob_file(x, o->replay, d->replay);

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

	/* The policies' own options, from their knob tables (policy_knob.h), in
	 * registry order; shown when changed. */
	for (int i = 0; (pk = hb_policy_knob(i, &t)); i++) {
		double v = hb_pknob_value(t, pk, &o->knobs);

		x = knob(k, &n, pk->key, pk->name, 0);
		policy_knob(x, pk, v);
		x->non_default = v != hb_pknob_get(pk, t->defaults);
	}

	x = knob(k, &n, "capacity", "capacity", 0);
	knob_file(x, o->capacity, d->capacity);
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

static double ratio(double a, double b)
{
	return b > 0 && isfinite(a) ? a / b : NAN;
}

int hb_res_summary_rows(const struct hb_results *r, struct srow **out, size_t *nout, struct hb_error *err)
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

/* ==== trace replay (results.h: "trace replay") ============================================ */

int hb_res_trace_view_init(struct trace_view *tv, const struct hb_trace_results *tr, struct hb_error *err)
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
	tv->base.profiles = tr->profiles;
	tv->base.nprofiles = tr->nprofiles;
	return 0;
}

void hb_res_trace_view_free(struct trace_view *tv)
{
	free(tv->bruns);
	tv->bruns = NULL;
}

/* ---- metrics of one run ---------------------------------------------------------------- */

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

/* Per-job values shared by jobs.csv, the CDFs and the cluster_jobs table. */
void hb_res_trace_job(const struct hb_trace_run *ru, int j, struct trace_job *t)
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
