/*
 * sweep_write.c: what a sweep leaves behind, from its configuration and
 * rows only (never from a simulation), in point order:
 *
 *   results.db     SQLite (sweep_db.c): meta (the configuration as
 *                  understood, without directories), clusters, points (one
 *                  row per point), summary (one row per cluster, load and
 *                  policy: means over the seeds that ran)
 *   sweep.csv      the points table
 *   summary.json   configuration, clusters, summary and points
 *   sweep-load<L>.dat
 *                  gnuplot data per load factor (with plot data): one block
 *                  per policy, clusters by capacity ($/h)
 *
 * Numbers are printed in fixed formats and nothing depends on time, paths
 * or scheduling, so one configuration and seed give byte-identical files.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "fidelity.h"
#include "fileio.h"
#include "json.h"
#include "results.h"
#include "strutil.h"
#include "sweep.h"
#include "sweep_priv.h"

/* ---- aggregates ------------------------------------------------------------------------ */

/* Running mean of the finite values. */
struct mean {
	double sum;
	int n;
};

static void mean_add(struct mean *m, double v)
{
	if (isfinite(v)) {
		m->sum += v;
		m->n++;
	}
}

static double mean_of(const struct mean *m)
{
	return m->n ? m->sum / m->n : NAN;
}

int hb_sweep_aggregate(const struct hb_sweep *sw, struct hb_sweep_agg **agg, int *n, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	int na = cfg->nclusters * cfg->nloads * cfg->npolicies;
	struct hb_sweep_agg *a = calloc((size_t)(na > 0 ? na : 1), sizeof(*a));

	*agg = NULL;
	*n = 0;
	if (!a)
		return hb_runtime_error(err, "sweep: out of memory");
	for (int k = 0; k < na; k++) {
		struct hb_sweep_agg *x = &a[k];
		struct mean m[13];

		memset(m, 0, sizeof(m));
		x->policy = k % cfg->npolicies;
		x->load = (k / cfg->npolicies) % cfg->nloads;
		x->cluster = k / (cfg->npolicies * cfg->nloads);
		x->seeds = cfg->nseeds;
		for (int s = 0; s < cfg->nseeds; s++) {
			const struct hb_sweep_row *r = &sw->rows[k * cfg->nseeds + s];

			if (r->status != HB_SWEEP_OK) {
				if (!x->reason[0])
					hb_strlcpy(x->reason, r->reason[0] ? r->reason : hb_sweep_status_name(r->status),
						   sizeof(x->reason));
				continue;
			}
			x->ok++;
			mean_add(&m[0], r->jobs);
			mean_add(&m[1], r->completed);
			mean_add(&m[2], r->jct_mean_h);
			mean_add(&m[3], r->jct_p99_h);
			mean_add(&m[4], r->makespan_h);
			mean_add(&m[5], r->queue_mean_h);
			mean_add(&m[6], r->gpu_hours);
			mean_add(&m[7], r->cost_usd);
			mean_add(&m[8], r->util_mean);
			mean_add(&m[9], r->rho_median);
			mean_add(&m[10], (double)r->dropped);
			mean_add(&m[11], r->jct_all_mean_h);
			mean_add(&m[12], r->jct_all_p99_h);
		}
		x->jobs = mean_of(&m[0]);
		x->completed = mean_of(&m[1]);
		x->jct_mean_h = mean_of(&m[2]);
		x->jct_p99_h = mean_of(&m[3]);
		x->makespan_h = mean_of(&m[4]);
		x->queue_mean_h = mean_of(&m[5]);
		x->gpu_hours = mean_of(&m[6]);
		x->cost_usd = mean_of(&m[7]);
		x->util_mean = mean_of(&m[8]);
		x->rho_median = mean_of(&m[9]);
		x->dropped = mean_of(&m[10]);
		x->jct_all_mean_h = mean_of(&m[11]);
		x->jct_all_p99_h = mean_of(&m[12]);
		x->jct_delta_pct = NAN;
	}
	/* against the first cluster's aggregate of the same load and policy */
	for (int k = cfg->nloads * cfg->npolicies; k < na; k++) {
		const struct hb_sweep_agg *b = &a[k % (cfg->nloads * cfg->npolicies)];

		if (isfinite(a[k].jct_all_mean_h) && isfinite(b->jct_all_mean_h) && b->jct_all_mean_h > 0)
			a[k].jct_delta_pct = 100.0 * (a[k].jct_all_mean_h - b->jct_all_mean_h) / b->jct_all_mean_h;
	}
	*agg = a;
	*n = na;
	return 0;
}

/* ---- terminal ------------------------------------------------------------------------------ */

static void cell(FILE *out, int width, int prec, double v)
{
	if (isfinite(v))
		fprintf(out, " %*.*f", width, prec, v);
	else
		fprintf(out, " %*s", width, "-");
}

/* A mean count: whole numbers without decimals. */
static void count(FILE *out, double v)
{
	cell(out, 5, v == floor(v) ? 0 : 1, v);
}

static void knob_line(const struct hb_sim_opts *o, char *buf, size_t size)
{
	size_t len = 0;

#define ADD(...) (len += (size_t)snprintf(buf + len, len < size ? size - len : 0, __VA_ARGS__))
	if (o->interval > 0)
		ADD("interval=%ld", o->interval);
	else
		ADD("interval=model");
	if (o->restart_const_s >= 0)
		ADD(", restart-cost=%g s", o->restart_const_s);
	else
		ADD(", restart-cost=derived");
	ADD(", reconfig-cost=%g s", o->reconfig_s);
	if (o->gns_overhead >= 0)
		ADD(", gns-overhead=%g", o->gns_overhead);
	ADD(", similarity-cost=%s, unequal-penalty=%g", o->similarity_cost ? "on" : "off", o->unequal_k);
	if (o->fidelity != HB_FIDELITY_NONE)
		ADD(", fidelity=%s", hb_fidelity_name(o->fidelity));
	ADD(", progress=%s", hb_progress_name(o->progress));
#undef ADD
}

/* A censored mean: ">" when some job of it was censored (a lower bound). */
static void bound_cell(FILE *out, int width, double v, double censored)
{
	char b[32];

	if (!isfinite(v)) {
		fprintf(out, " %*s", width, "-");
		return;
	}
	snprintf(b, sizeof(b), "%s%.2f", censored > 0 ? ">" : "", v);
	fprintf(out, " %*s", width, b);
}

static void delta_cell(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, " %+6.1f", v);
	else
		fprintf(out, " %6s", "-");
}

int hb_sweep_jobset_line(const struct hb_sweep *sw, char *buf, size_t size)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	long jobs = 0, excluded = 0, partial = 0, read = 0;
	int nsets = cfg->nloads * cfg->nseeds, maxg = 0;

	for (int k = 0; k < nsets; k++) {
		const struct hb_sweep_jobset *js = &sw->jobsets[k];

		jobs += js->njobs;
		excluded += js->excluded;
		partial += js->partial;
		read += js->read;
		if (js->max_excluded_gpus > maxg)
			maxg = js->max_excluded_gpus;
	}
	{
		int same = 1;
		size_t len;

		for (int k = 1; k < nsets && same; k++)
			same = sw->jobsets[k].njobs == sw->jobsets[0].njobs;
		if (same)
			len = (size_t)snprintf(buf, size, "%ld %s in every point", nsets ? sw->jobsets[0].njobs : 0,
					       hb_plural(nsets ? sw->jobsets[0].njobs : 0, "job", "jobs"));
		else
			len = (size_t)snprintf(buf, size,
					       "%.1f jobs per point on average over %d job sets (one per load and seed; "
					       "every point of a set replays the same jobs)",
					       (double)jobs / nsets, nsets);
		if (excluded > 0)
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0,
						"; %ld of %ld read left out everywhere: larger than every cluster (up to %d "
						"GPUs asked)",
						excluded, read, maxg);
		if (partial > 0)
			snprintf(buf + len, len < size ? size - len : 0,
				 "; %ld too large for some clusters, censored there", partial);
	}
	return excluded > 0 ? 2 : partial > 0 ? 1 : 0;
}

/* sim's "profiles:" line (issue 39 item 1) over every cluster's profile
 * uses, each GPU type x model once: nothing when all are the built-in
 * analytic rows. */
static void print_profiles(FILE *out, const struct hb_sweep *sw)
{
	int total = 0, n = 0;
	struct hb_profile_use *u;

	for (int ci = 0; ci < sw->cfg->nclusters; ci++)
		total += sw->info[ci].nprofiles;
	if (total == 0 || !(u = malloc((size_t)total * sizeof(*u))))
		return;
	for (int ci = 0; ci < sw->cfg->nclusters; ci++)
		for (int k = 0; k < sw->info[ci].nprofiles; k++) {
			const struct hb_profile_use *x = &sw->info[ci].profiles[k];
			int seen = 0;

			for (int q = 0; q < n && !seen; q++)
				seen = strcmp(u[q].gpu, x->gpu) == 0 && strcmp(u[q].model, x->model) == 0;
			if (!seen)
				u[n++] = *x;
		}
	hb_results_print_profiles(out, u, n);
	free(u);
}

void hb_sweep_print(FILE *out, const struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_sweep_agg *agg;
	struct hb_error err = { 0 };
	char knobs[512], line[512];
	int na, width = 7, nfail = 0;

	if (hb_sweep_aggregate(sw, &agg, &na, &err) < 0) {
		fprintf(out, "%s\n", err.msg);
		return;
	}
	for (int ci = 0; ci < cfg->nclusters; ci++) {
		int l = (int)strlen(cfg->clusters[ci].label);

		if (l > width)
			width = l > 40 ? 40 : l;
	}
	knob_line(&cfg->opts, knobs, sizeof(knobs));
	fprintf(out, "sweep %s: %d %s (%d %s x %d %s x %d %s x %d %s), %s %s (%s), %ld jobs read\n", cfg->name,
		sw->npoints, hb_plural(sw->npoints, "point", "points"), cfg->nclusters,
		hb_plural(cfg->nclusters, "cluster", "clusters"), cfg->nloads, hb_plural(cfg->nloads, "load", "loads"),
		cfg->npolicies, hb_plural(cfg->npolicies, "policy", "policies"), cfg->nseeds,
		hb_plural(cfg->nseeds, "seed", "seeds"),
		cfg->trace.synthetic ? "workload" : "trace", cfg->trace.synthetic ? "synthetic" : cfg->trace.file_echo,
		hb_trace_format_name(sw->format), sw->trace_read);
	fprintf(out, "%s, fairness %s\n", knobs, cfg->fairness ? "on" : "off");
	print_profiles(out, sw);
	hb_sweep_jobset_line(sw, line, sizeof(line));
	fprintf(out, "jobs: %s\n", line);
	fprintf(out, "means over the seeds that ran; JCT over every job, a job not done (cens) counted to the sweep's "
		     "end ('>': a lower bound); delta%% against %s\n",
		cfg->clusters[0].label);
	fprintf(out, "%-*s %5s %7s %6s %-10s %5s %5s %5s %5s %8s %8s %6s %8s %9s %9s %10s %6s", width, "cluster", "GPUs",
		"$/h", "load", "policy", "seeds", "jobs", "done", "cens", "JCT(h)", "p99(h)", "delta%", "queue(h)",
		"makespan", "GPU-h", "cost($)", "util%");
	if (cfg->fairness)
		fprintf(out, " %6s", "rho50");
	fputc('\n', out);
	for (int k = 0; k < na; k++) {
		const struct hb_sweep_agg *a = &agg[k];
		const struct hb_sweep_cluster_info *in = &sw->info[a->cluster];

		fprintf(out, "%-*.*s %5d %7.2f %6g %-10s %2d/%-2d", width, width, cfg->clusters[a->cluster].label,
			in->gpus, in->usd_per_h, cfg->loads[a->load], cfg->policies[a->policy]->name, a->ok, a->seeds);
		if (a->ok == 0) {
			fprintf(out, " %s: %s\n", hb_sweep_status_name(sw->rows[k * cfg->nseeds].status), a->reason);
			continue;
		}
		count(out, a->jobs);
		count(out, a->completed);
		count(out, a->dropped);
		bound_cell(out, 8, a->jct_all_mean_h, a->dropped);
		bound_cell(out, 8, a->jct_all_p99_h, a->dropped);
		delta_cell(out, a->jct_delta_pct);
		cell(out, 8, 2, a->queue_mean_h);
		cell(out, 9, 2, a->makespan_h);
		cell(out, 9, 1, a->gpu_hours);
		cell(out, 10, 2, a->cost_usd);
		cell(out, 6, 1, 100.0 * a->util_mean);
		if (cfg->fairness)
			cell(out, 6, 2, a->rho_median);
		fputc('\n', out);
		nfail += a->seeds - a->ok;
	}
	if (nfail > 0) {
		fprintf(out, "\npoints that did not run (their rows say why):\n");
		for (int k = 0; k < na; k++) {
			if (agg[k].ok == 0 || agg[k].ok == agg[k].seeds)
				continue;
			for (int s = 0; s < cfg->nseeds; s++) {
				const struct hb_sweep_row *r = &sw->rows[k * cfg->nseeds + s];

				if (r->status != HB_SWEEP_OK)
					fprintf(out, "  point %d (%s, load %g, %s, seed %llu): %s: %s\n", r->id,
						cfg->clusters[agg[k].cluster].label, cfg->loads[agg[k].load],
						cfg->policies[agg[k].policy]->name, (unsigned long long)cfg->seeds[s],
						hb_sweep_status_name(r->status), r->reason);
			}
		}
	}
	free(agg);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static cJSON *row_json(const struct hb_sweep *sw, const struct hb_sweep_row *r)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_sweep_point p;
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	hb_sweep_point_of(cfg, r->id, &p);
	cJSON_AddNumberToObject(o, "id", r->id);
	cJSON_AddStringToObject(o, "cluster", cfg->clusters[p.cluster].label);
	cJSON_AddNumberToObject(o, "cluster_gpus", sw->info[p.cluster].gpus);
	hb_json_add_num(o, "cluster_usd_per_h", sw->info[p.cluster].usd_per_h);
	hb_json_add_num(o, "load", cfg->loads[p.load]);
	cJSON_AddStringToObject(o, "policy", cfg->policies[p.policy]->name);
	cJSON_AddNumberToObject(o, "seed", (double)cfg->seeds[p.seed]);
	cJSON_AddStringToObject(o, "status", hb_sweep_status_name(r->status));
	if (r->status != HB_SWEEP_OK) {
		cJSON_AddStringToObject(o, "reason", r->reason);
		return o;
	}
	cJSON_AddNumberToObject(o, "jobs", r->jobs);
	cJSON_AddNumberToObject(o, "completed", r->completed);
	cJSON_AddNumberToObject(o, "dropped", (double)r->dropped);
	hb_json_add_num(o, "jct_mean_h", r->jct_mean_h);
	hb_json_add_num(o, "jct_median_h", r->jct_median_h);
	hb_json_add_num(o, "jct_p99_h", r->jct_p99_h);
	hb_json_add_num(o, "jct_max_h", r->jct_max_h);
	cJSON_AddNumberToObject(o, "too_large", r->too_large);
	hb_json_add_num(o, "jct_all_mean_h", r->jct_all_mean_h);
	hb_json_add_num(o, "jct_all_p99_h", r->jct_all_p99_h);
	hb_json_add_num(o, "jct_delta_pct", r->jct_delta_pct);
	hb_json_add_num(o, "makespan_h", r->makespan_h);
	hb_json_add_num(o, "queue_mean_h", r->queue_mean_h);
	hb_json_add_num(o, "queue_p99_h", r->queue_p99_h);
	hb_json_add_num(o, "gpu_hours", r->gpu_hours);
	hb_json_add_num(o, "cost_usd", r->cost_usd);
	hb_json_add_num(o, "util_mean", r->util_mean);
	hb_json_add_num(o, "restarts_per_job", r->restarts_per_job);
	hb_json_add_num(o, "preemptions_per_job", r->preemptions_per_job);
	if (cfg->fairness) {
		cJSON_AddNumberToObject(o, "rho_jobs", (double)r->rho_jobs);
		hb_json_add_num(o, "rho_median", r->rho_median);
		hb_json_add_num(o, "rho_p99", r->rho_p99);
		hb_json_add_num(o, "rho_max", r->rho_max);
	}
	cJSON_AddNumberToObject(o, "sched_rounds", (double)r->sched_rounds);
	return o;
}

static cJSON *agg_json(const struct hb_sweep *sw, const struct hb_sweep_agg *a)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "cluster", cfg->clusters[a->cluster].label);
	cJSON_AddNumberToObject(o, "cluster_gpus", sw->info[a->cluster].gpus);
	hb_json_add_num(o, "cluster_usd_per_h", sw->info[a->cluster].usd_per_h);
	hb_json_add_num(o, "load", cfg->loads[a->load]);
	cJSON_AddStringToObject(o, "policy", cfg->policies[a->policy]->name);
	cJSON_AddNumberToObject(o, "seeds", a->seeds);
	cJSON_AddNumberToObject(o, "seeds_ok", a->ok);
	if (a->ok == 0) {
		cJSON_AddStringToObject(o, "reason", a->reason);
		return o;
	}
	hb_json_add_num(o, "jobs", a->jobs);
	hb_json_add_num(o, "completed", a->completed);
	hb_json_add_num(o, "dropped", a->dropped);
	hb_json_add_num(o, "jct_mean_h", a->jct_mean_h);
	hb_json_add_num(o, "jct_p99_h", a->jct_p99_h);
	hb_json_add_num(o, "jct_all_mean_h", a->jct_all_mean_h);
	hb_json_add_num(o, "jct_all_p99_h", a->jct_all_p99_h);
	hb_json_add_num(o, "jct_delta_pct", a->jct_delta_pct);
	hb_json_add_num(o, "makespan_h", a->makespan_h);
	hb_json_add_num(o, "queue_mean_h", a->queue_mean_h);
	hb_json_add_num(o, "gpu_hours", a->gpu_hours);
	hb_json_add_num(o, "cost_usd", a->cost_usd);
	hb_json_add_num(o, "util_mean", a->util_mean);
	if (cfg->fairness)
		hb_json_add_num(o, "rho_median", a->rho_median);
	return o;
}

static cJSON *cluster_json(const struct hb_sweep *sw, int ci)
{
	const struct hb_sweep_cluster_info *in = &sw->info[ci];
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "label", sw->cfg->clusters[ci].label);
	cJSON_AddStringToObject(o, "base", in->base);
	cJSON_AddStringToObject(o, "name", in->name);
	cJSON_AddNumberToObject(o, "gpus", in->gpus);
	cJSON_AddNumberToObject(o, "nodes", in->nodes);
	hb_json_add_num(o, "usd_per_h", in->usd_per_h);
	cJSON_AddStringToObject(o, "gpu_mix", in->gpu_mix);
	return o;
}

/* Adds item to arr; 0 when item is NULL (out of memory). */
static int push(cJSON *arr, cJSON *item)
{
	if (!item)
		return 0;
	cJSON_AddItemToArray(arr, item);
	return 1;
}


/* "job_sets": per load and seed, the jobs every point replays and those
 * left out (larger than every cluster). */
static int json_jobsets(cJSON *root, const struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	cJSON *arr = cJSON_AddArrayToObject(root, "job_sets");

	if (!arr)
		return 0;
	for (int li = 0; li < cfg->nloads; li++)
		for (int si = 0; si < cfg->nseeds; si++) {
			const struct hb_sweep_jobset *js = hb_sweep_jobset_of(sw, li, si);
			cJSON *o = cJSON_CreateObject();

			if (!push(arr, o))
				return 0;
			hb_json_add_num(o, "load", cfg->loads[li]);
			cJSON_AddNumberToObject(o, "seed", (double)cfg->seeds[si]);
			cJSON_AddNumberToObject(o, "jobs_read", (double)js->read);
			cJSON_AddNumberToObject(o, "jobs", (double)js->njobs);
			cJSON_AddNumberToObject(o, "excluded", (double)js->excluded);
			cJSON_AddNumberToObject(o, "excluded_max_gpus", js->max_excluded_gpus);
			cJSON_AddNumberToObject(o, "too_large_somewhere", (double)js->partial);
			hb_json_add_num(o, "horizon_h", js->horizon_s / 3600.0);
		}
	return 1;
}

/* What summary.json and the dry-run plan open with: format, name, the
 * configuration as given, and the trace the points replay. */
static int json_head(cJSON *root, const struct hb_sweep *sw, const char *format)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	cJSON *tr;

	cJSON_AddStringToObject(root, "format", format);
	cJSON_AddStringToObject(root, "name", cfg->name);
	if (!cJSON_AddItemToObject(root, "config", cJSON_Duplicate(cfg->echo, 1)))
		return 0;
	if ((tr = cJSON_AddObjectToObject(root, "trace"))) {
		cJSON_AddStringToObject(tr, "source", cfg->trace.synthetic ? "synthetic" : cfg->trace.file_echo);
		cJSON_AddStringToObject(tr, "format", hb_trace_format_name(sw->format));
		cJSON_AddNumberToObject(tr, "jobs_read", (double)sw->trace_read);
	}
	if (!json_jobsets(root, sw))
		return 0;
	return 1;
}

cJSON *hb_sweep_json(const struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	cJSON *root = cJSON_CreateObject(), *arr;
	struct hb_sweep_agg *agg = NULL;
	struct hb_error err = { 0 };
	int na = 0, ok = root != NULL;

	if (ok && hb_sweep_aggregate(sw, &agg, &na, &err) < 0)
		ok = 0;
	ok = ok && json_head(root, sw, HB_SWEEP_FORMAT);
	cJSON_AddNumberToObject(root, "points", sw->npoints);
	cJSON_AddNumberToObject(root, "points_ok", hb_sweep_nok(sw));
	if (ok && (arr = cJSON_AddArrayToObject(root, "clusters")))
		for (int ci = 0; ok && ci < cfg->nclusters; ci++)
			ok = push(arr, cluster_json(sw, ci));
	if (ok && (arr = cJSON_AddArrayToObject(root, "summary")))
		for (int k = 0; ok && k < na; k++)
			ok = push(arr, agg_json(sw, &agg[k]));
	if (ok && (arr = cJSON_AddArrayToObject(root, "point_rows")))
		for (int i = 0; ok && i < sw->npoints; i++)
			ok = push(arr, row_json(sw, &sw->rows[i]));
	free(agg);
	if (!ok) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

static cJSON *plan_row_json(const struct hb_sweep *sw, int id)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_sweep_point p;
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	hb_sweep_point_of(cfg, id, &p);
	cJSON_AddNumberToObject(o, "id", id);
	cJSON_AddStringToObject(o, "cluster", cfg->clusters[p.cluster].label);
	cJSON_AddNumberToObject(o, "cluster_gpus", sw->info[p.cluster].gpus);
	hb_json_add_num(o, "cluster_usd_per_h", sw->info[p.cluster].usd_per_h);
	hb_json_add_num(o, "load", cfg->loads[p.load]);
	cJSON_AddStringToObject(o, "policy", cfg->policies[p.policy]->name);
	cJSON_AddNumberToObject(o, "seed", (double)cfg->seeds[p.seed]);
	/* the point's job set (the table's "jobs" column) and of them those
	 * too large for this cluster */
	cJSON_AddNumberToObject(o, "jobs", (double)hb_sweep_jobset_of(sw, p.load, p.seed)->njobs);
	cJSON_AddNumberToObject(o, "too_large",
				(double)(hb_sweep_jobset_of(sw, p.load, p.seed)->njobs -
					 sw->replays[(p.cluster * cfg->nloads + p.load) * cfg->nseeds + p.seed].njobs));
	return o;
}

cJSON *hb_sweep_plan_json(const struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	cJSON *root = cJSON_CreateObject(), *arr;
	int ok = root != NULL;

	ok = ok && json_head(root, sw, HB_SWEEP_PLAN_FORMAT);
	if (ok)
		cJSON_AddNumberToObject(root, "points", sw->npoints);
	if (ok && (arr = cJSON_AddArrayToObject(root, "clusters")))
		for (int ci = 0; ok && ci < cfg->nclusters; ci++)
			ok = push(arr, cluster_json(sw, ci));
	if (ok && (arr = cJSON_AddArrayToObject(root, "point_rows")))
		for (int i = 0; ok && i < sw->npoints; i++)
			ok = push(arr, plan_row_json(sw, i));
	if (!ok) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* ---- CSV ----------------------------------------------------------------------------------- */

/* ",number" and ",text" fields (common/csv.h). */
static void put_num(FILE *f, double v)
{
	fputc(',', f);
	hb_csv_put_num(f, v);
}

static void put_str(FILE *f, const char *s)
{
	fputc(',', f);
	hb_csv_put_str(f, s);
}

static void write_csv(FILE *f, const struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;

	fputs("id,cluster,cluster_gpus,cluster_usd_per_h,load,policy,seed,status,reason,jobs,completed,dropped,"
	      "jct_mean_h,jct_median_h,jct_p99_h,jct_max_h,too_large,jct_all_mean_h,jct_all_p99_h,jct_delta_pct,"
	      "makespan_h,queue_mean_h,queue_p99_h,gpu_hours,cost_usd,"
	      "util_mean,restarts_per_job,preemptions_per_job,rho_jobs,rho_median,rho_p99,rho_max,sched_rounds\n",
	      f);
	for (int i = 0; i < sw->npoints; i++) {
		const struct hb_sweep_row *r = &sw->rows[i];
		struct hb_sweep_point p;

		hb_sweep_point_of(cfg, i, &p);
		fprintf(f, "%d", i);
		put_str(f, cfg->clusters[p.cluster].label);
		fprintf(f, ",%d", sw->info[p.cluster].gpus);
		put_num(f, sw->info[p.cluster].usd_per_h);
		put_num(f, cfg->loads[p.load]);
		put_str(f, cfg->policies[p.policy]->name);
		fprintf(f, ",%llu", (unsigned long long)cfg->seeds[p.seed]);
		put_str(f, hb_sweep_status_name(r->status));
		put_str(f, r->status == HB_SWEEP_OK ? "" : r->reason);
		if (r->status != HB_SWEEP_OK) {
			fputs(",,,,,,,,,,,,,,,,,,,,,,,,\n", f);
			continue;
		}
		fprintf(f, ",%d,%d,%lld", (int)r->jobs, (int)r->completed, (long long)r->dropped);
		put_num(f, r->jct_mean_h);
		put_num(f, r->jct_median_h);
		put_num(f, r->jct_p99_h);
		put_num(f, r->jct_max_h);
		fprintf(f, ",%d", (int)r->too_large);
		put_num(f, r->jct_all_mean_h);
		put_num(f, r->jct_all_p99_h);
		put_num(f, r->jct_delta_pct);
		put_num(f, r->makespan_h);
		put_num(f, r->queue_mean_h);
		put_num(f, r->queue_p99_h);
		put_num(f, r->gpu_hours);
		put_num(f, r->cost_usd);
		put_num(f, r->util_mean);
		put_num(f, r->restarts_per_job);
		put_num(f, r->preemptions_per_job);
		fprintf(f, ",%lld", (long long)r->rho_jobs);
		put_num(f, r->rho_median);
		put_num(f, r->rho_p99);
		put_num(f, r->rho_max);
		fprintf(f, ",%lld\n", (long long)r->sched_rounds);
	}
}

/* ---- gnuplot data ----------------------------------------------------------------------------- */

void hb_sweep_plot_stem(const struct hb_sweep *sw, int li, char *buf, size_t size)
{
	char mine[64], other[64];

	snprintf(mine, sizeof(mine), "%g", sw->cfg->loads[li]);
	/* loads equal to 6 digits would share a file: all 17 for the later one */
	for (int k = 0; k < li; k++) {
		snprintf(other, sizeof(other), "%g", sw->cfg->loads[k]);
		if (strcmp(mine, other) == 0) {
			snprintf(mine, sizeof(mine), "%.17g", sw->cfg->loads[li]);
			break;
		}
	}
	snprintf(buf, size, "sweep-load%s", mine);
}

/* Clusters by capacity ($/h), ties in config order. */
static void clusters_by_price(const struct hb_sweep *sw, int *order)
{
	int n = sw->cfg->nclusters;

	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && sw->info[order[k]].usd_per_h < sw->info[order[k - 1]].usd_per_h; k--) {
			int t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
}

static int has_block(const struct hb_sweep_agg *agg, const struct hb_sweep_config *cfg, int li, int pi)
{
	for (int ci = 0; ci < cfg->nclusters; ci++)
		if (agg[(ci * cfg->nloads + li) * cfg->npolicies + pi].ok > 0)
			return 1;
	return 0;
}

int hb_sweep_plot_names(const struct hb_sweep *sw, int li, char *buf, size_t size)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_sweep_agg *agg;
	struct hb_error err = { 0 };
	size_t len = 0;
	int na, n = 0;

	buf[0] = '\0';
	if (hb_sweep_aggregate(sw, &agg, &na, &err) < 0)
		return 0;
	for (int pi = 0; pi < cfg->npolicies; pi++)
		if (has_block(agg, cfg, li, pi)) {
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", n ? " " : "",
						cfg->policies[pi]->name);
			n++;
		}
	free(agg);
	return n;
}

/* The smallest and largest mean JCT and cost over the seeds of (cluster ci,
 * load li, policy pi) that ran: the error bars of the sweep figures.  NaN
 * when no seed gave a finite value. */
static void seed_range(const struct hb_sweep *sw, int ci, int li, int pi, double jct[2], double cost[2])
{
	jct[0] = cost[0] = INFINITY;
	jct[1] = cost[1] = -INFINITY;
	for (int i = 0; i < sw->npoints; i++) {
		const struct hb_sweep_row *r = &sw->rows[i];
		struct hb_sweep_point p;

		hb_sweep_point_of(sw->cfg, i, &p);
		if (p.cluster != ci || p.load != li || p.policy != pi || r->status != HB_SWEEP_OK)
			continue;
		if (isfinite(r->jct_all_mean_h)) {
			jct[0] = fmin(jct[0], r->jct_all_mean_h);
			jct[1] = fmax(jct[1], r->jct_all_mean_h);
		}
		if (isfinite(r->cost_usd)) {
			cost[0] = fmin(cost[0], r->cost_usd);
			cost[1] = fmax(cost[1], r->cost_usd);
		}
	}
	for (int k = 0; k < 2; k++) {
		if (!isfinite(jct[k]))
			jct[k] = NAN;
		if (!isfinite(cost[k]))
			cost[k] = NAN;
	}
}

/* One block per policy with a point that ran: "usd_per_h gpus jct_mean_h
 * cost_usd label jct_min_h jct_max_h cost_min_usd cost_max_usd censored"
 * (means and the range over the seeds that ran; the range after the label
 * so the first five columns keep their places).  The JCT is over every job
 * of the set (hb_sweep_censor), a lower bound where censored > 0. */
static void write_dat(FILE *f, const struct hb_sweep *sw, const struct hb_sweep_agg *agg, int li, const int *order)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	int blocks = 0;

	fprintf(f,
		"# %s, load %g: per policy, clusters by capacity; means, minima and maxima over the seeds that ran\n"
		"# jct over every job of the set, a job not done counted to the sweep's end (censored jobs: a lower bound)\n"
		"# usd_per_h gpus jct_mean_h cost_usd label jct_min_h jct_max_h cost_min_usd cost_max_usd censored\n",
		cfg->name, cfg->loads[li]);
	for (int pi = 0; pi < cfg->npolicies; pi++) {
		if (!has_block(agg, cfg, li, pi))
			continue;
		if (blocks++)
			fputs("\n\n", f);
		fprintf(f, "# %s\n", cfg->policies[pi]->name);
		for (int i = 0; i < cfg->nclusters; i++) {
			int ci = order[i];
			const struct hb_sweep_agg *a = &agg[(ci * cfg->nloads + li) * cfg->npolicies + pi];
			double jct[2], cost[2];

			if (a->ok == 0)
				continue;
			seed_range(sw, ci, li, pi, jct, cost);
			fprintf(f, "%.9g %d", sw->info[ci].usd_per_h, sw->info[ci].gpus);
			fprintf(f, isfinite(a->jct_all_mean_h) ? " %.9g" : " NaN", a->jct_all_mean_h);
			fprintf(f, isfinite(a->cost_usd) ? " %.9g" : " NaN", a->cost_usd);
			fprintf(f, " \"%s\"", cfg->clusters[ci].label);
			for (int k = 0; k < 2; k++)
				fprintf(f, isfinite(jct[k]) ? " %.9g" : " NaN", jct[k]);
			for (int k = 0; k < 2; k++)
				fprintf(f, isfinite(cost[k]) ? " %.9g" : " NaN", cost[k]);
			fprintf(f, " %.9g\n", a->dropped);
		}
	}
}

/* ---- all files or none ------------------------------------------------------------------------ */

#define MAX_STAGED (4 + HB_SWEEP_MAX_LOADS)

struct stage {
	struct hb_atomic_file *f;  /* MAX_STAGED, heap: each holds two paths */
	int n;
};

static FILE *stage_open(struct stage *sg, const char *dir, const char *name, struct hb_error *err)
{
	char path[HB_SWEEP_PATH_MAX + 64];

	if (sg->n == MAX_STAGED) {
		hb_runtime_error(err, "sweep: too many result files");
		return NULL;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		hb_input_error(err, "%s: output path too long", dir);
		return NULL;
	}
	if (hb_atomic_open(&sg->f[sg->n], path, err) < 0)
		return NULL;
	return sg->f[sg->n++].f;
}

static void stage_abort(struct stage *sg, int from)
{
	for (int i = from; i < sg->n; i++)
		hb_atomic_abort(&sg->f[i]);
	sg->n = 0;
}

int hb_sweep_write(const struct hb_sweep *sw, const char *dir, int plot_data, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct stage sg;
	struct hb_sweep_agg *agg = NULL;
	char db_path[HB_SWEEP_PATH_MAX + 64], db_tmp[HB_SWEEP_PATH_MAX + 128];
	int bad;
	int na = 0, order[HB_SWEEP_MAX_CLUSTERS];
	cJSON *json;
	FILE *f;

	memset(&sg, 0, sizeof(sg));
	if (hb_mkdir_p(dir, err) < 0)
		return -1;
	if ((size_t)snprintf(db_path, sizeof(db_path), "%s/results.db", dir) >= sizeof(db_path))
		return hb_input_error(err, "%s: output path too long", dir);
	snprintf(db_tmp, sizeof(db_tmp), "%s.tmp.%ld", db_path, (long)getpid());
	if (hb_sweep_aggregate(sw, &agg, &na, err) < 0)
		return -1;
	if (!(sg.f = calloc(MAX_STAGED, sizeof(*sg.f)))) {
		free(agg);
		return hb_runtime_error(err, "sweep: out of memory");
	}
	if (hb_sweep_write_db(sw, agg, na, db_tmp, err) < 0) {
		hb_error_at_path(err, db_tmp, db_path); /* name the user's file, not the temporary */
		goto fail;
	}
	if (!(f = stage_open(&sg, dir, "sweep.csv", err)))
		goto fail;
	write_csv(f, sw);
	if (!(f = stage_open(&sg, dir, "summary.json", err)))
		goto fail;
	json = hb_sweep_json(sw);
	bad = hb_json_print(f, json, err) < 0;
	cJSON_Delete(json);
	if (bad) {
		hb_error_prefix(err, "%s/summary.json: ", dir);
		goto fail;
	}
	clusters_by_price(sw, order);
	for (int li = 0; plot_data && li < cfg->nloads; li++) {
		char stem[64], name[80];

		hb_sweep_plot_stem(sw, li, stem, sizeof(stem));
		snprintf(name, sizeof(name), "%s.dat", stem);
		if (!(f = stage_open(&sg, dir, name, err)))
			goto fail;
		write_dat(f, sw, agg, li, order);
	}
	for (int i = 0; i < sg.n; i++)
		if (ferror(sg.f[i].f)) {
			hb_runtime_error(err, "%s: write failed", sg.f[i].path);
			goto fail;
		}
	if (rename(db_tmp, db_path) != 0) {
		hb_runtime_error(err, "%s: cannot rename into place: %s", db_path, strerror(errno));
		goto fail;
	}
	for (int i = 0; i < sg.n; i++)
		if (hb_atomic_commit(&sg.f[i], err) < 0) {
			stage_abort(&sg, i + 1);
			free(sg.f);
			free(agg);
			return -1;
		}
	free(sg.f);
	free(agg);
	return 0;
fail:
	stage_abort(&sg, 0);
	free(sg.f);
	remove(db_tmp);
	free(agg);
	return -1;
}
