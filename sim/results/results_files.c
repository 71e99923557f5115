/*
 * results_files.c: the text files of a result set, staged beside their
 * destinations and renamed into place together with results.db (all files
 * or none): summary.csv, the rows of events.csv and timeseries.csv (which
 * the stream writes as the runs go), summary.json, the gnuplot data, and a
 * trace replay's cluster_summary.csv, jobs.csv, by_model.csv and
 * utilisation.csv; the commit of a whole set.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "fileio.h"
#include "json.h"
#include "results_priv.h"

/* ---- staging: all files or none ---------------------------------------------------------- */

FILE *hb_res_stage_open(struct stage *sg, const char *dir, const char *name, struct hb_error *err)
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

int hb_res_stage_check(struct stage *sg, struct hb_error *err)
{
	for (int i = 0; i < sg->n; i++)
		if (ferror(sg->files[i].f))
			return hb_runtime_error(err, "%s: write failed", sg->files[i].path);
	return 0;
}

void hb_res_stage_abort(struct stage *sg, int from)
{
	for (int i = from; i < sg->n; i++)
		hb_atomic_abort(&sg->files[i]);
	free(sg->files);
	sg->files = NULL;
	sg->n = sg->cap = 0;
}

int hb_res_stage_commit(struct stage *sg, struct hb_error *err)
{
	for (int i = 0; i < sg->n; i++) {
		if (hb_atomic_commit(&sg->files[i], err) < 0) {
			hb_res_stage_abort(sg, i + 1);
			return -1;
		}
	}
	hb_res_stage_abort(sg, sg->n);
	return 0;
}

/* ---- CSV and gnuplot data ------------------------------------------------------------ */

static void put_sep_num(FILE *f, double v)
{
	fputc(',', f);
	hb_csv_put_num(f, v);
}

/* The columns that say which cluster and seed a row is of, last so that
 * the others keep their places (issue 39: a table must identify itself). */
static void put_identity(FILE *f, const char *cluster, uint64_t seed)
{
	fputc(',', f);
	hb_csv_put_str(f, cluster);
	fprintf(f, ",%llu", (unsigned long long)seed);
}

static void write_summary_csv(FILE *f, const struct hb_results *r, const struct srow *rows, size_t nrows)
{
	fputs("run_id,model,policy,job,status,reason,time_h,cost_usd,gpu_hours,mean_gpus,iterations,mean_gbs,"
	      "final_gbs,restarts,overhead_h,time_rel,cost_rel,ref_policy,cluster,seed\n",
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
		put_identity(f, r->cluster, r->seed);
		fputc('\n', f);
	}
}

/* timeseries.csv and events.csv: headers, and one row per record (written
 * by the stream as the runs go). */
const char *const hb_res_timeseries_header =
	"run_id,model,policy,t_s,job,global_bs,local_bs,ngpus,iter_s,progress_frac,phi,similarity,cost_usd,epoch,"
	"step\n";
const char *const hb_res_events_header = "run_id,model,policy,t_s,job,kind,detail\n";

static void run_prefix(FILE *f, int run_id, const char *model, const char *policy)
{
	fprintf(f, "%d,", run_id);
	hb_csv_put_str(f, model);
	fputc(',', f);
	hb_csv_put_str(f, policy);
}

void hb_res_sample_csv_row(FILE *f, int run_id, const char *model, const char *policy, const struct hb_sim_sample *s)
{
	run_prefix(f, run_id, model, policy);
	put_sep_num(f, s->t);
	fprintf(f, ",%d,%ld,%d,%d", s->job, s->global_bs, s->local_bs, s->ngpus);
	put_sep_num(f, s->iter_s);
	put_sep_num(f, s->progress_frac);
	put_sep_num(f, s->phi);
	put_sep_num(f, s->similarity);
	put_sep_num(f, s->cost_usd);
	/* step: the job's iterations done, so that `hetbatch forecast` reads
	 * this file as it is (last, the other columns keep their places) */
	fprintf(f, ",%ld,%.0f\n", s->epoch, floor(s->iters + 0.5));
}

void hb_res_event_csv_row(FILE *f, int run_id, const char *model, const char *policy,
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

/* ---- all files ------------------------------------------------------------------------ */

static int write_text_files(struct stage *sg, const struct hb_results *r, const struct srow *rows, size_t nrows,
			    const char *dir, int plot_data, struct hb_error *err)
{
	const char *models[256];
	int nm = hb_results_models(r, models, 256);
	cJSON *json;
	int rc;
	FILE *f;

	if (!(f = hb_res_stage_open(sg, dir, "summary.csv", err)))
		return -1;
	write_summary_csv(f, r, rows, nrows);
	if (!(f = hb_res_stage_open(sg, dir, "summary.json", err)))
		return -1;
	json = hb_res_summary_json_rows(r, rows, nrows);
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
		if (!(f = hb_res_stage_open(sg, dir, name, err)))
			return -1;
		write_series_dat(f, r, models[mi]);
		snprintf(name, sizeof(name), "%s-bars.dat", stem);
		if (!(f = hb_res_stage_open(sg, dir, name, err)))
			return -1;
		write_bars_dat(f, r, rows, nrows, models[mi]);
	}
	return hb_res_stage_check(sg, err);
}

int hb_results_commit(const struct hb_results *r, struct hb_results_stream *st, int plot_data, struct hb_error *err)
{
	struct srow *rows = NULL;
	size_t nrows = 0;
	int rc;

	if (hb_res_summary_rows(r, &rows, &nrows, err) < 0 || write_text_files(&st->sg, r, rows, nrows, st->dir, plot_data, err) < 0) {
		free(rows);
		hb_results_stream_abort(st);
		return -1;
	}
	rc = hb_res_stream_commit(st, r, rows, nrows, NULL, r->events, err);
	free(rows);
	return rc;
}

int hb_results_write(const struct hb_results *r, const char *dir, int plot_data, struct hb_error *err)
{
	struct hb_results_stream *st;

	if (hb_results_stream_open(&st, dir, 0, r->events, r->csv, err) < 0)
		return -1;
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_run_result *ru = &r->runs[i];

		if (ru->ran && ru->sim && hb_res_stream_records(st, i + 1, ru->model, ru->policy, ru->sim, err) < 0) {
			hb_results_stream_abort(st);
			return -1;
		}
	}
	return hb_results_commit(r, st, plot_data, err);
}

/* ==== trace replay ========================================================================== */

/* ---- CSV ------------------------------------------------------------------------------------ */

static void put_trace_identity(FILE *f, const struct hb_trace_results *r)
{
	put_identity(f, r->cluster, r->seed);
	fputc(',', f);
	hb_csv_put_num(f, r->load);
	fputc('\n', f);
}

static void write_cluster_summary_csv(FILE *f, const struct hb_trace_results *r)
{
	fputs("run_id,policy,status,reason,jobs,completed,dropped,jct_mean_h,jct_median_h,jct_p99_h,jct_max_h,"
	      "makespan_h,queue_mean_h,queue_p99_h,gpu_hours,cost_usd,util_mean,restarts_per_job,"
	      "preemptions_per_job,rho_jobs,rho_median,rho_p99,rho_max,sched_rounds,capacity_withdrawn_gpus,"
	      "capacity_preemptions,capacity_shrinks,cluster,seed,load\n",
	      f);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		const struct hb_cluster_summary *s = &ru->sum;

		fprintf(f, "%d,", i + 1);
		hb_csv_put_str(f, ru->policy);
		if (!ran(ru)) {
			fputs(",cannot run,", f);
			hb_csv_put_str(f, ru->why);
			fputs(",,,,,,,,,,,,,,,,,,,,,,", f);
			put_trace_identity(f, r);
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
		fprintf(f, ",%ld", s->sched_rounds);
		/* The --capacity counters (capacity.h); empty without a series. */
		if (s->capacity)
			fprintf(f, ",%ld,%ld,%ld", s->capacity_withdrawn, s->capacity_preemptions, s->capacity_shrinks);
		else
			fputs(",,,", f);
		put_trace_identity(f, r);
	}
}

static void write_trace_jobs_csv(FILE *f, const struct hb_trace_results *r)
{
	fputs("run_id,policy,job,name,model,req_gpus,req_batch,arrival_s,start_s,finish_s,jct_s,queue_s,gpu_hours,"
	      "cost_usd,restarts,preemptions,mean_gbs,final_gbs,javg,ref_gpus,ref_jct_s,rho,stopped_at_duration\n",
	      f);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];

		for (int j = 0; ran(ru) && j < ru->sim->njobs; j++) {
			const struct hb_sim_job *job = &ru->sim->jobs[j];
			struct hb_job_metrics m;
			struct trace_job t;

			hb_job_metrics(job, &m);
			hb_res_trace_job(ru, j, &t);
			hb_csv_put_int(f, i + 1);
			fputc(',', f);
			hb_csv_put_str(f, ru->policy);
			fputc(',', f);
			hb_csv_put_int(f, j);
			fputc(',', f);
			hb_csv_put_str(f, job->name);
			fputc(',', f);
			hb_csv_put_str(f, job->model->name);
			fputc(',', f);
			hb_csv_put_int(f, job->req_gpus);
			fputc(',', f);
			hb_csv_put_int(f, job->req_batch);
			put_sep_num(f, job->arrival_s);
			put_sep_num(f, job->started ? job->start_s : NAN);
			put_sep_num(f, t.finish_s);
			put_sep_num(f, t.jct_s);
			put_sep_num(f, t.queue_s);
			put_sep_num(f, m.gpu_hours);
			put_sep_num(f, m.cost_usd);
			fputc(',', f);
			hb_csv_put_int(f, job->restarts);
			fputc(',', f);
			hb_csv_put_int(f, job->preemptions);
			put_sep_num(f, m.mean_gbs);
			fputc(',', f);
			hb_csv_put_int(f, m.final_gbs);
			put_sep_num(f, t.javg);
			fputc(',', f);
			if (t.ref_gpus > 0)
				hb_csv_put_int(f, t.ref_gpus);
			put_sep_num(f, t.ref_jct_s);
			put_sep_num(f, t.rho);
			fputc(',', f);
			hb_csv_put_int(f, job->stopped_at_duration);
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

/* The first run with a utilisation series (its GPU types are the
 * cluster's, the same for every run), or NULL. */
static const struct hb_trace_run *util_run(const struct hb_trace_results *r)
{
	for (int i = 0; i < r->nruns; i++)
		if (has_block(&r->runs[i], PLOT_UTIL) && r->runs[i].util.held)
			return &r->runs[i];
	return NULL;
}

int hb_trace_results_util_types(const struct hb_trace_results *r, char *buf, size_t size)
{
	const struct hb_trace_run *ru = util_run(r);
	size_t len = 0;

	if (size > 0)
		buf[0] = '\0';
	if (!ru)
		return 0;
	for (int s = 0; s < ru->util.ntypes; s++)
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s%s", s ? " " : "",
					ru->sim->cat->gpus[ru->util.type_gpu[s]].name,
					s == HB_SIM_TYPE_SLOTS - 1 ? "+" : "");
	return ru->util.ntypes;
}

/* One row of trace-util.dat: hours since the window start, utilisation in
 * percent, GPUs held, and GPUs held of each type (bin k's means). */
static void util_row(FILE *f, const struct hb_trace_results *r, const struct hb_util_series *u, double t, int k)
{
	fprintf(f, "%.9g %.9g %.9g", (t - r->window_s) / 3600.0, 100.0 * u->util[k], u->util[k] * u->cluster_gpus);
	for (int s = 0; u->held && s < u->ntypes; s++)
		fprintf(f, " %.9g", u->held[k * HB_SIM_TYPE_SLOTS + s]);
	fputc('\n', f);
}

/* trace-<what>.dat: one block per policy of hb_trace_results_plot_names. */
static int write_trace_dat(FILE *f, const struct hb_trace_results *r, int kind, struct hb_error *err)
{
	static const char *const cols[] = { "jct_h cdf", "t_h util_pct gpus", "rho cdf" };
	int block = 0;

	fprintf(f, "# hetbatch sim --trace %s on %s, seed %llu, load %g; columns: %s", r->trace, r->cluster,
		(unsigned long long)r->seed, r->load, cols[kind]);
	if (kind == PLOT_UTIL) {
		char types[HB_SIM_TYPE_SLOTS * (HB_NAME_MAX + 2)];

		if (hb_trace_results_util_types(r, types, sizeof(types)) > 0)
			fprintf(f, ", then GPUs held of each type: %s", types);
		fprintf(f, "\n# t_h: hours since the window start, %.9g h of simulated time (the trace's arrival "
			   "times / load)", r->window_s / 3600.0);
	}
	fputc('\n', f);
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		double *v;

		if (!has_block(ru, kind))
			continue;
		fprintf(f, "%s# %s\n", block++ ? "\n\n" : "", ru->policy);
		if (kind == PLOT_UTIL) {
			const struct hb_util_series *u = &ru->util;

			for (int k = 0; k < u->npoints; k++)
				util_row(f, r, u, u->t_s[k], k);
			/* close the last step at the end of the window */
			util_row(f, r, u, u->t1_s, u->npoints - 1);
			continue;
		}
		v = malloc(sizeof(double) * (size_t)(ru->sim->njobs + 1));
		if (!v)
			return hb_runtime_error(err, "results: out of memory");
		for (int j = 0; j < ru->sim->njobs; j++) {
			struct trace_job t;

			hb_res_trace_job(ru, j, &t);
			v[j] = kind == PLOT_JCT ? t.jct_s : t.rho;
		}
		cdf_block(f, v, (size_t)ru->sim->njobs, kind == PLOT_JCT ? 1.0 / 3600.0 : 1.0);
		free(v);
	}
	return 0;
}

/* ---- all files ----------------------------------------------------------------------------------- */

/* jobs.csv on a thread of its own: at trace scale (82247 jobs, 13 MB) its
 * numbers cost as much as the database's last tables, which are written
 * meanwhile; both only read r. */
struct jobs_csv {
	FILE *f;
	const struct hb_trace_results *r;
};

static void *jobs_csv_main(void *arg)
{
	struct jobs_csv *a = arg;

	write_trace_jobs_csv(a->f, a->r);
	return NULL;
}

int hb_trace_results_commit(const struct hb_trace_results *r, struct hb_results_stream *st, int plot_data,
			    struct hb_error *err)
{
	static const char *const dat[] = { "trace-jct.dat", "trace-util.dat", "trace-rho.dat" };
	const char *dir = st->dir;
	struct trace_view tv;
	struct jobs_csv jc;
	int bad;
	cJSON *json;
	FILE *f;
	int rc;

	if (hb_res_trace_view_init(&tv, r, err) < 0) {
		hb_results_stream_abort(st);
		return -1;
	}
	if (!(f = hb_res_stage_open(&st->sg, dir, "cluster_summary.csv", err)))
		goto fail;
	write_cluster_summary_csv(f, r);
	if (!(f = hb_res_stage_open(&st->sg, dir, "jobs.csv", err)))
		goto fail;
	jc.f = f;
	jc.r = r;
	if (pthread_create(&st->file_th, NULL, jobs_csv_main, &jc) == 0)
		st->file_on = 1; /* commit joins it: jc lives until then */
	else
		write_trace_jobs_csv(f, r);
	if (!(f = hb_res_stage_open(&st->sg, dir, "by_model.csv", err)))
		goto fail;
	write_by_model_csv(f, r);
	if (!(f = hb_res_stage_open(&st->sg, dir, "utilisation.csv", err)))
		goto fail;
	write_utilisation_csv(f, r);
	if (!(f = hb_res_stage_open(&st->sg, dir, "summary.json", err)))
		goto fail;
	json = hb_trace_results_json(r);
	bad = hb_json_print(f, json, err) < 0;
	cJSON_Delete(json);
	if (bad) {
		hb_error_prefix(err, "%s/summary.json: ", dir);
		goto fail;
	}
	for (int k = 0; plot_data && k < 3; k++) {
		if (!(f = hb_res_stage_open(&st->sg, dir, dat[k], err)) || write_trace_dat(f, r, k, err) < 0)
			goto fail;
	}
	rc = hb_res_stream_commit(st, &tv.base, NULL, 0, &tv, r->events, err);
	hb_res_trace_view_free(&tv);
	return rc;
fail:
	hb_results_stream_abort(st);
	hb_res_trace_view_free(&tv);
	return -1;
}

int hb_trace_results_write(const struct hb_trace_results *r, const char *dir, int plot_data, struct hb_error *err)
{
	struct hb_results_stream *st;

	for (int i = 0; i < r->nruns; i++)
		if (ran(&r->runs[i]) && r->runs[i].streamed)
			return hb_runtime_error(err, "results: %s's records were streamed (hb_trace_results_commit)",
						r->runs[i].policy);
	if (hb_results_stream_open(&st, dir, 1, r->events, r->csv, err) < 0)
		return -1;
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];

		if (ran(ru) && hb_res_stream_records(st, i + 1, HB_TRACE_RUN_MODEL, ru->policy, ru->sim, err) < 0) {
			hb_results_stream_abort(st);
			return -1;
		}
	}
	return hb_trace_results_commit(r, st, plot_data, err);
}
