/*
 * results_table.c: the terminal tables: the single-job comparison
 * (hb_results_print) and a trace replay's cluster table and JCT by model
 * (hb_trace_results_print).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results_priv.h"
#include "strutil.h"

/* ---- terminal table ------------------------------------------------------------ */

static void print_rel(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, " %7.2f", hb_no_neg_zero(v, 2));
	else
		fprintf(out, " %7s", "-");
}

void hb_results_print_profiles(FILE *out, const struct hb_profile_use *u, int n)
{
	int any = 0, col = 0;

	for (int i = 0; i < n && !any; i++)
		any = !u[i].builtin || strcmp(u[i].source, "analytic") != 0;
	if (!any)
		return;
	fputs("profiles:", out);
	col = 9;
	for (int i = 0; i < n; i++) {
		char item[512];
		int len;

		if (!u[i].source[0])
			len = snprintf(item, sizeof(item), " %s x %s none", u[i].gpu, u[i].model);
		else if (u[i].run_id)
			len = snprintf(item, sizeof(item), " %s x %s %s (%s, run %lld)", u[i].gpu, u[i].model, u[i].source,
				       u[i].file, (long long)u[i].run_id);
		else
			len = snprintf(item, sizeof(item), " %s x %s %s (%s)", u[i].gpu, u[i].model, u[i].source, u[i].file);
		if (col > 9 && col + len + 1 > 118) {
			fputs(",\n         ", out);
			col = 9;
		} else if (i) {
			fputc(',', out);
			col++;
		}
		fputs(item, out);
		col += len;
	}
	fputc('\n', out);
}

/* The profiles line of one model's table (the pairs of that model). */
static void print_model_profiles(FILE *out, const struct hb_results *r, const char *model)
{
	int first = -1, n = 0;

	for (int i = 0; i < r->nprofiles; i++)
		if (strcmp(r->profiles[i].model, model) == 0) {
			if (first < 0)
				first = i;
			n++;
		}
	/* hb_profdb_cluster_uses writes a model's pairs together */
	if (first >= 0)
		hb_results_print_profiles(out, r->profiles + first, n);
}

/* The policy column's width: 12, or the longest row name's (a policy, or
 * policy:job when a run has several jobs), so that long names such as
 * elastic-random or easyscale-homo do not push the other columns right. */
static int name_width(const struct srow *rows, size_t nrows)
{
	int w = 12;

	for (size_t i = 0; i < nrows; i++) {
		const struct srow *s = &rows[i];
		int len = (int)strlen(s->run->policy);

		if (s->job >= 0 && s->run->sim->njobs > 1)
			len += 1 + (int)strlen(s->run->sim->jobs[s->job].name);
		if (len > w)
			w = len;
	}
	return w;
}

void hb_results_print(FILE *out, const struct hb_results *r)
{
	const char *models[256];
	int nm = hb_results_models(r, models, 256);
	struct srow *rows = NULL;
	size_t nrows = 0;
	struct hb_error err = { 0 };
	char line[2048];

	if (hb_res_summary_rows(r, &rows, &nrows, &err) < 0) {
		fprintf(out, "%s\n", err.msg);
		return;
	}
	for (int mi = 0; mi < nm; mi++) {
		const int nw = name_width(rows, nrows);
		const struct hb_run_result *ref = hb_results_reference(r, models[mi]);
		const char *refname = ref ? ref->policy : HB_RESULTS_REF_POLICY;
		char th[32], ch[32];

		hb_results_knob_line(r, models[mi], line, sizeof(line));
		fprintf(out, "%scluster %s, model %s, seed %llu; %s  (* = non-default)\n", mi ? "\n" : "", r->cluster,
			models[mi], (unsigned long long)r->seed, line);
		print_model_profiles(out, r, models[mi]);
		snprintf(th, sizeof(th), "t/%.5s", refname);
		snprintf(ch, sizeof(ch), "$/%.5s", refname);
		fprintf(out, "%-*s %9s %10s %9s %6s %11s %9s %9s %8s %8s %7s %7s %8s\n", nw, "policy", "time(h)", "cost($)",
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
				fprintf(out, "%-*s cannot run: %s\n", nw, name, s->run->why);
				continue;
			}
			fprintf(out, "%-*s %9.2f %10.2f %9.2f %6.2f %11.0f %9.1f %9ld %8d %8.3f", nw, name, s->m.time_s / 3600.0,
				s->m.cost_usd, s->m.gpu_hours, s->m.mean_gpus, s->m.iterations, s->m.mean_gbs,
				s->m.final_gbs, s->m.restarts, s->m.overhead_s / 3600.0);
			print_rel(out, s->time_rel);
			print_rel(out, s->cost_rel);
			fprintf(out, " %8.3f%s\n", s->run->wall_s, s->m.done ? "" : "  (did not reach the target)");
		}
	}
	free(rows);
}

/* ==== trace replay ========================================================================== */

/* A number in a column, or "-" when undefined. */
static void cell(FILE *out, int width, int prec, double v)
{
	if (isfinite(v))
		fprintf(out, " %*.*f", width, prec, hb_no_neg_zero(v, prec));
	else
		fprintf(out, " %*s", width, "-");
}

/* Width of a policy's column in the JCT-by-model table: 10, or its name's. */
static int col_width(const char *policy)
{
	size_t n = strlen(policy);

	return n > 10 ? (int)(n < 64 ? n : 64) : 10;
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
	int nw = 12;

	if (hb_res_trace_view_init(&tv, r, &err) < 0) {
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
	hb_results_print_profiles(out, r->profiles, r->nprofiles);
	for (int i = 0; i < r->nruns; i++) /* the policy column fits the longest name */
		if ((int)strlen(r->runs[i].policy) > nw)
			nw = (int)strlen(r->runs[i].policy);
	fprintf(out, "%-*s %5s %5s %5s %8s %8s %8s %9s %8s %9s %9s %6s %8s %7s %7s %9s %8s\n", nw, "policy", "jobs", "done",
		"drop", "JCT(h)", "med(h)", "p99(h)", "makespan", "queue(h)", "GPU-h", "cost($)", "util%", "rst/job",
		"rho50", "rho99", "ms/round", "wall(s)");
	for (int i = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		const struct hb_cluster_summary *s = &ru->sum;

		if (!ran(ru)) {
			fprintf(out, "%-*s cannot run: %s\n", nw, ru->policy, ru->why);
			continue;
		}
		if (!first)
			first = ru;
		fprintf(out, "%-*s %5d %5d %5ld", nw, ru->policy, s->njobs, s->completed, dropped(r, ru));
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
		/* A column is 10 wide, or as wide as its policy's name: cut to 10,
		 * elastic-fixed, -max, -min and -random all read "elastic-fi". */
		fprintf(out, "\nmean JCT by model (h)\n%-22s", "model (jobs)");
		for (int i = 0; i < r->nruns; i++)
			if (ran(&r->runs[i]))
				fprintf(out, " %*s", col_width(r->runs[i].policy), r->runs[i].policy);
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
				cell(out, col_width(r->runs[i].policy), 2, mj ? mj->jct_mean_s / 3600.0 : NAN);
			}
			fputc('\n', out);
		}
	}
	for (int i = 0, shown = 0; i < r->nruns; i++)
		if (ran(&r->runs[i]) && r->runs[i].sum.capacity) /* one block, whichever runs failed between */
			fprintf(out, "%scapacity %s: %ld GPUs withdrawn, %ld jobs preempted and requeued, %ld jobs shrunk\n",
				shown++ ? "" : "\n", r->runs[i].policy, r->runs[i].sum.capacity_withdrawn,
				r->runs[i].sum.capacity_preemptions, r->runs[i].sum.capacity_shrinks);
	for (int i = 0, shown = 0; i < r->nruns; i++) {
		const struct hb_trace_run *ru = &r->runs[i];
		int n = 0;

		for (int j = 0; ran(ru) && j < ru->sim->njobs; j++)
			n += ru->sim->jobs[j].stopped_at_duration;
		if (n > 0)
			fprintf(out, "%s%s: %d of the %d completed %s stopped at the trace's run time before the target "
				     "(--duration-from-trace; jobs.csv stopped_at_duration)\n",
				shown++ ? "" : "\n", ru->policy, n, ru->sum.completed,
				ru->sum.completed == 1 ? "job" : "jobs");
	}
	if (r->fairness)
		fprintf(out, "\nrho: JCT here / JCT alone on max(1, round(%d / J)) GPUs, J = mean active jobs over the "
			     "job's life (metrics.h)\n",
			r->cluster_gpus);
	for (int i = 0; i < r->nruns; i++)
		if (ran(&r->runs[i]) && r->runs[i].rho_stats.failed > 0)
			fprintf(out, "rho %s: %d jobs without a reference run (first: %s)\n", r->runs[i].policy,
				r->runs[i].rho_stats.failed, r->runs[i].rho_stats.why);
	hb_res_trace_view_free(&tv);
}
