/* sim/results/results*.c on hand-filled struct hb_sim records: per-job metrics by
 * hand, knobs and their default marks, the reference run, the terminal
 * table, every file's content (CSV read back with the project's reader, the
 * database queried, the JSON parsed), byte-identical rewrites, and no
 * temporary file left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <math.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "csv.h"
#include "fileio.h"
#include "json.h"
#include "policy.h" /* hb_policy_knob_find */
#include "results.h"

#define TOL 1e-9

/* |a - b| <= tol (cmocka 1.1 has no double comparison) */
#define assert_double_equal(a, b, tol)                                                                  \
	do {                                                                                            \
		double a_ = (a), b_ = (b);                                                              \
		if (!(fabs(a_ - b_) <= (tol)))                                                          \
			fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #a, a_, b_, (double)(tol)); \
	} while (0)

static struct hb_model toy = { .name = "toy", .adapt_interval = 100 };
static char tmpdir[256];

/* One finished job: arrival 100 s, finish 100 + hours h, ngpus GPUs all
 * along, B_G gbs while running (the last 10 % of the time restarting),
 * cost $ per GPU-hour x 1. */
static void fake_sim(struct hb_sim *s, const char *policy, double hours, int ngpus, long gbs, int nsamples)
{
	struct hb_sim_job *j;
	double T = hours * 3600.0;

	memset(s, 0, sizeof(*s));
	s->policy = policy;
	s->njobs = 1;
	s->jobs = calloc(1, sizeof(*s->jobs));
	assert_non_null(s->jobs);
	j = &s->jobs[0];
	snprintf(j->name, sizeof(j->name), "toy-0");
	j->model = &toy;
	j->arrival_s = 100.0;
	j->state = HB_JOB_DONE;
	j->finish_s = 100.0 + T;
	j->t_last = j->finish_s;
	j->gpu_s = ngpus * T;
	j->gpus_time_sum = ngpus * T;
	j->cost_usd = ngpus * hours * 1.0;
	j->run_s = 0.9 * T;
	j->gbs_time_sum = (double)gbs * 0.9 * T;
	j->iters = 1000.0 * hours;
	j->cfg.global_bs = gbs;
	j->cfg.ngpus = ngpus;
	snprintf(j->cfg.layout, sizeof(j->cfg.layout), "B_L %ld x %d", gbs / ngpus, ngpus);
	j->restarts = 1;
	j->overhead_s = 0.1 * T;
	j->target = 1000.0;
	j->progress = 1000.0;
	s->eng.now = j->finish_s;
	s->nsamples = (size_t)nsamples;
	s->samples = calloc((size_t)nsamples + 1, sizeof(*s->samples));
	assert_non_null(s->samples);
	for (int k = 0; k < nsamples; k++) {
		struct hb_sim_sample *x = &s->samples[k];

		x->t = 100.0 + T * k / nsamples;
		x->job = 0;
		x->global_bs = gbs / (k + 1);
		x->local_bs = 32;
		x->ngpus = ngpus;
		x->iter_s = 0.25;
		x->progress_frac = (double)k / nsamples;
		x->phi = 500.0 + k;
		x->similarity = 0.125;
		x->cost_usd = j->cost_usd * k / nsamples;
		x->iters = j->iters * k / nsamples; /* timeseries.csv's step, rounded */
		x->epoch = k / 2;
	}
	s->nevents = 2;
	s->events = calloc(2, sizeof(*s->events));
	assert_non_null(s->events);
	s->events[0].t = 100.0;
	snprintf(s->events[0].kind, sizeof(s->events[0].kind), "start");
	{
		char detail0[64], *d;

		snprintf(detail0, sizeof(detail0), "B_G %ld, %d GPUs", gbs, ngpus);
		d = malloc(strlen(detail0) + 1);
		assert_non_null(d);
		memcpy(d, detail0, strlen(detail0) + 1);
		s->events[0].detail = d; /* freed by free_sim */
	}
	s->events[1].t = j->finish_s;
	snprintf(s->events[1].kind, sizeof(s->events[1].kind), "done");
	s->events[1].detail = "said \"done\", at last";
}

static void free_sim(struct hb_sim *s)
{
	free(s->jobs);
	free(s->samples);
	if (s->events)
		free((char *)s->events[0].detail);
	free(s->events);
}

static void default_opts(struct hb_sim_opts *o)
{
	/* sim.h's documented defaults (sim.c's hb_sim_opts_default) */
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->restart_const_s = -1.0;
	o->reconfig_s = 1.0;
	o->gns_overhead = -1.0;
	o->similarity_cost = 1;
	o->max_sim_s = 1e9;
	o->sample_every = 1;
}

/* Three runs of "toy": jabas (2 h, 4 GPUs), simigrad (4 h, 4 GPUs),
 * pollux (cannot run). */
struct fixture {
	struct hb_sim sims[2];
	struct hb_run_result runs[3];
	struct hb_results r;
};

static void fixture(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	fake_sim(&f->sims[0], "jabas", 2.0, 4, 1024, 5);
	fake_sim(&f->sims[1], "simigrad", 4.0, 4, 512, 3);
	default_opts(&f->sims[0].opts);
	default_opts(&f->sims[1].opts);
	snprintf(f->runs[0].model, sizeof(f->runs[0].model), "toy");
	snprintf(f->runs[0].policy, sizeof(f->runs[0].policy), "jabas");
	f->runs[0].ran = 1;
	f->runs[0].sim = &f->sims[0];
	f->runs[0].wall_s = 1.5;
	snprintf(f->runs[1].model, sizeof(f->runs[1].model), "toy");
	snprintf(f->runs[1].policy, sizeof(f->runs[1].policy), "simigrad");
	f->runs[1].ran = 1;
	f->runs[1].sim = &f->sims[1];
	f->runs[1].wall_s = 0.5;
	snprintf(f->runs[2].model, sizeof(f->runs[2].model), "toy");
	snprintf(f->runs[2].policy, sizeof(f->runs[2].policy), "pollux");
	snprintf(f->runs[2].why, sizeof(f->runs[2].why), "OOM: no local batch fits p100, really");
	snprintf(f->r.cluster, sizeof(f->r.cluster), "toy-cluster");
	f->r.seed = 7;
	default_opts(&f->r.opts);
	default_opts(&f->r.defaults);
	f->r.opts.seed = 7;
	f->r.runs = f->runs;
	f->r.nruns = 3;
	f->r.csv = 1; /* --csv: the tests below read events.csv and timeseries.csv */
}

static void fixture_free(struct fixture *f)
{
	free_sim(&f->sims[0]);
	free_sim(&f->sims[1]);
}

/* ---- metrics, knobs, reference ----------------------------------------------- */

static void test_metrics(void **state)
{
	struct hb_sim s;
	struct hb_job_metrics m;

	(void)state;
	fake_sim(&s, "jabas", 2.0, 4, 1024, 5);
	hb_job_metrics(&s.jobs[0], &m);
	assert_int_equal(m.done, 1);
	assert_double_equal(m.time_s, 7200.0, TOL);
	assert_double_equal(m.gpu_hours, 8.0, TOL);
	assert_double_equal(m.mean_gpus, 4.0, TOL);
	assert_double_equal(m.mean_gbs, 1024.0, TOL);
	assert_double_equal(m.cost_usd, 8.0, TOL);
	assert_double_equal(m.iterations, 2000.0, TOL);
	assert_double_equal(m.overhead_s, 720.0, TOL);
	assert_int_equal(m.final_gbs, 1024);
	assert_int_equal(m.restarts, 1);
	/* half the GPUs for half the time: mean 3 */
	s.jobs[0].gpus_time_sum = 4 * 3600.0 + 2 * 3600.0;
	hb_job_metrics(&s.jobs[0], &m);
	assert_double_equal(m.mean_gpus, 3.0, TOL);
	/* unfinished: measured up to the last integrated time */
	s.jobs[0].state = HB_JOB_RUNNING;
	s.jobs[0].finish_s = 0;
	s.jobs[0].t_last = 100.0 + 1800.0;
	hb_job_metrics(&s.jobs[0], &m);
	assert_int_equal(m.done, 0);
	assert_double_equal(m.time_s, 1800.0, TOL);
	free_sim(&s);
}

static void test_knobs(void **state)
{
	struct fixture f;
	struct hb_knob k[HB_RESULTS_MAX_KNOBS];
	struct hb_error err = { 0 };
	char line[1024];
	int n;

	(void)state;
	fixture(&f);
	n = hb_results_knobs(&f.r, k);
	assert_int_equal(n, 17);
	assert_true(n <= HB_RESULTS_MAX_KNOBS);
	for (int i = 0; i < n; i++)
		assert_int_equal(k[i].non_default, 0);
	hb_results_knob_line(&f.r, "toy", line, sizeof(line));
	assert_string_equal(line, "interval=100 (model), restart-cost=derived, reconfig-cost=1 s, gns-overhead=0.143 (default), "
				  "similarity-cost=on, unequal-penalty=0, replay=none, progress=pollux");

	f.r.opts.interval = 50;
	f.r.opts.restart_const_s = 30;
	f.r.opts.similarity_cost = 0;
	f.r.opts.replay = "/some/absolute/dir/traj.csv";
	f.r.opts.max_sim_s = 1e6;
	if (hb_pknob_set(&f.r.opts.knobs, hb_policy_knob_find("elastic-drop", NULL), 1, &err) < 0)
		fail_msg("%s", err.msg);
	f.r.opts.progress = HB_PROGRESS_SIMILARITY;
	n = hb_results_knobs(&f.r, k);
	assert_string_equal(k[0].key, "interval");
	assert_int_equal(k[0].type, HB_KNOB_NUM);
	assert_double_equal(k[0].num, 50, 0);
	assert_int_equal(k[0].non_default, 1);
	assert_int_equal(k[1].non_default, 1);
	assert_int_equal(k[2].non_default, 0);
	assert_int_equal(k[3].non_default, 0);
	assert_int_equal(k[4].type, HB_KNOB_BOOL);
	assert_int_equal(k[4].non_default, 1);
	assert_string_equal(k[6].str, "traj.csv");
	assert_string_equal(k[7].key, "progress");
	assert_int_equal(k[7].type, HB_KNOB_STR);
	assert_string_equal(k[7].str, "similarity");
	assert_int_equal(k[7].non_default, 1);
	hb_results_knob_line(&f.r, "toy", line, sizeof(line));
	assert_string_equal(line, "interval=50*, restart-cost=30 s*, reconfig-cost=1 s, gns-overhead=0.143 (default), "
				  "similarity-cost=off*, unequal-penalty=0, replay=traj.csv*, progress=similarity*, "
				  "max-sim=1e+06 s*, elastic-drop=on*");
	assert_null(strstr(line, "/some"));
	/* a truncated line stays terminated */
	hb_results_knob_line(&f.r, "toy", line, 20);
	assert_true(strlen(line) < 20);
	fixture_free(&f);
}

/* summary.json's (and runs.knobs_json's) knobs object of f.r, unformatted. */
static char *knobs_text(const struct fixture *f)
{
	cJSON *root = hb_results_summary_json(&f->r);
	char *s;

	assert_non_null(root);
	s = cJSON_PrintUnformatted(cJSON_GetObjectItem(root, "knobs"));
	cJSON_Delete(root);
	return s;
}

/* The policies' knob rows come from their tables (policy_knob.h) with the
 * keys, order, values and texts the hand-written rows had: the objects
 * below are what the build before the tables wrote (sim --json of a
 * single-job run, and of a trace replay with every policy knob set). */
static void test_policy_knob_rows(void **state)
{
	static const char *const set[][2] = { { "elastic-interval", "300" }, { "elastic-drop", NULL },
					      { "easyscale-comm", "off" }, { "easyscale-restart", "artifact" },
					      { "yarn-head-only", NULL } };
	struct fixture f;
	struct hb_error err = { 0 };
	char line[1024], *s;

	(void)state;
	fixture(&f);
	s = knobs_text(&f);
	assert_string_equal(s, "{\"interval\":null,\"restart_cost_s\":null,\"reconfig_cost_s\":1,\"gns_overhead\":null,"
			       "\"similarity_cost\":true,\"unequal_penalty\":0,\"replay\":null,\"progress\":\"pollux\","
			       "\"fidelity\":\"none\",\"max_sim_s\":1000000000,\"sample_every\":1,"
			       "\"elastic_interval_s\":600,\"elastic_drop\":false,\"easyscale_comm\":true,"
			       "\"easyscale_restart\":\"model\",\"yarn_head_only\":false,\"capacity\":null}");
	free(s);
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		const struct hb_pknob *k = hb_policy_knob_find(set[i][0], NULL);
		double v;

		assert_non_null(k);
		if (hb_pknob_parse(k, set[i][1], &v, &err) < 0 || hb_pknob_set(&f.r.opts.knobs, k, v, &err) < 0)
			fail_msg("%s", err.msg);
	}
	s = knobs_text(&f);
	assert_string_equal(s, "{\"interval\":null,\"restart_cost_s\":null,\"reconfig_cost_s\":1,\"gns_overhead\":null,"
			       "\"similarity_cost\":true,\"unequal_penalty\":0,\"replay\":null,\"progress\":\"pollux\","
			       "\"fidelity\":\"none\",\"max_sim_s\":1000000000,\"sample_every\":1,"
			       "\"elastic_interval_s\":300,\"elastic_drop\":true,\"easyscale_comm\":false,"
			       "\"easyscale_restart\":\"artifact\",\"yarn_head_only\":true,\"capacity\":null}");
	free(s);
	hb_results_knob_line(&f.r, "toy", line, sizeof(line));
	assert_non_null(strstr(line, ", progress=pollux, elastic-interval=300 s*, elastic-drop=on*, easyscale-comm=off*, "
				     "easyscale-restart=artifact*, yarn-head-only=on*"));
	fixture_free(&f);
}

static void test_reference_and_stem(void **state)
{
	struct fixture f;
	const char *models[4];
	char stem[64];

	(void)state;
	fixture(&f);
	assert_string_equal(hb_results_reference(&f.r, "toy")->policy, "jabas");
	assert_null(hb_results_reference(&f.r, "other"));
	f.runs[0].ran = 0; /* JABAS could not run: the first that did */
	f.runs[0].sim = NULL;
	assert_string_equal(hb_results_reference(&f.r, "toy")->policy, "simigrad");
	f.runs[1].ran = 0;
	f.runs[1].sim = NULL;
	assert_null(hb_results_reference(&f.r, "toy"));
	assert_int_equal(hb_results_models(&f.r, models, 4), 1);
	assert_string_equal(models[0], "toy");
	hb_results_file_stem("my model/x", stem, sizeof(stem));
	assert_string_equal(stem, "my_model_x");
	hb_results_file_stem(".hidden", stem, sizeof(stem));
	assert_string_equal(stem, "_hidden");
	hb_results_file_stem("resnet50", stem, 4);
	assert_string_equal(stem, "res");
	fixture_free(&f);
}

static void test_print(void **state)
{
	struct fixture f;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	fixture(&f);
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	hb_results_print(out, &f.r);
	fclose(out);
	assert_non_null(strstr(buf, "cluster toy-cluster, model toy, seed 7; interval=100 (model)"));
	assert_non_null(strstr(buf, "t/jabas $/jabas  wall(s)"));
	/* jabas: 2 h, $8, 8 GPU-h, 4 GPUs, 2000 iterations, B_G 1024; x1 */
	assert_non_null(strstr(buf, "jabas             2.00       8.00      8.00   4.00        2000    1024.0      1024"
				    "        1    0.200    1.00    1.00    1.500\n"));
	/* simigrad: twice the time and cost */
	assert_non_null(strstr(buf, "simigrad          4.00      16.00     16.00   4.00        4000     512.0       512"
				    "        1    0.400    2.00    2.00    0.500\n"));
	assert_non_null(strstr(buf, "pollux       cannot run: OOM: no local batch fits p100, really\n"));
	free(buf);
	fixture_free(&f);
}

/* ---- files ----------------------------------------------------------------------- */

static void slurp(const char *path, char **data, size_t *len)
{
	struct hb_error err = { 0 };

	assert_int_equal(hb_read_file(path, data, len, &err), 0);
}

static void out_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* The directory holds exactly these names (no temporaries). */
static void assert_dir_is(const char *dir, const char *const *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int count = 0, want = 0;

	assert_non_null(d);
	while (names[want])
		want++;
	while ((e = readdir(d))) {
		int known = 0;

		if (e->d_name[0] == '.')
			continue;
		for (int i = 0; names[i]; i++)
			known |= strcmp(names[i], e->d_name) == 0;
		if (!known)
			fail_msg("unexpected file %s in %s", e->d_name, dir);
		count++;
	}
	closedir(d);
	assert_int_equal(count, want);
}

static const char *const base_files[] = { "results.db", "summary.csv", "timeseries.csv", "events.csv",
					  "summary.json", NULL };
static const char *const plot_files[] = { "results.db", "summary.csv", "timeseries.csv", "events.csv",
					  "summary.json", "toy-series.dat", "toy-bars.dat", NULL };

/* Without --csv: no events.csv or timeseries.csv, the same rows in results.db. */
static double query_num(sqlite3 *db, const char *sql);

static void test_no_csv(void **state)
{
	static const char *const files[] = { "results.db", "summary.csv", "summary.json", NULL };
	struct fixture f;
	struct hb_error err = { 0 };
	char dir[512], path[600];
	sqlite3 *db;

	(void)state;
	fixture(&f);
	f.r.csv = 0;
	out_dir(dir, sizeof(dir), "no-csv");
	assert_int_equal(hb_results_write(&f.r, dir, 0, &err), 0);
	assert_dir_is(dir, files);
	snprintf(path, sizeof(path), "%s/results.db", dir);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_double_equal(query_num(db, "SELECT count(*) FROM events"), 4, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM events WHERE kind = 'start'"), 2, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM timeseries"), 8, 0);
	sqlite3_close(db);
	fixture_free(&f);
}

static void test_csv_files(void **state)
{
	struct fixture f;
	struct hb_error err = { 0 };
	char dir[512], path[600], *data;
	size_t len;
	struct hb_csv c;
	static const char *const ev_cols[] = { "run_id", "policy", "kind", "detail", NULL };
	int idx[4], rows = 0;
	const char *s;

	(void)state;
	fixture(&f);
	out_dir(dir, sizeof(dir), "csv");
	assert_int_equal(hb_results_write(&f.r, dir, 0, &err), 0);
	assert_dir_is(dir, base_files);

	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	slurp(path, &data, &len);
	assert_string_equal(data,
			    "run_id,model,policy,job,status,reason,time_h,cost_usd,gpu_hours,mean_gpus,iterations,"
			    "mean_gbs,final_gbs,restarts,overhead_h,time_rel,cost_rel,ref_policy,cluster,seed\n"
			    "1,toy,jabas,0,ok,,2,8,8,4,2000,1024,1024,1,0.2,1,1,jabas,toy-cluster,7\n"
			    "2,toy,simigrad,0,ok,,4,16,16,4,4000,512,512,1,0.4,2,2,jabas,toy-cluster,7\n"
			    "3,toy,pollux,,cannot run,\"OOM: no local batch fits p100, really\",,,,,,,,,,,,jabas,"
			    "toy-cluster,7\n");
	free(data);

	/* 5 + 3 samples; the row of simigrad's second sample */
	snprintf(path, sizeof(path), "%s/timeseries.csv", dir);
	slurp(path, &data, &len);
	for (s = data; (s = strchr(s, '\n')); s++)
		rows++;
	assert_int_equal(rows, 1 + 5 + 3);
	assert_non_null(strstr(data, "\n2,toy,simigrad,4900,0,256,32,4,0.25,0.333333333,501,0.125,5.33333333,0,1333\n"));
	free(data);

	/* events: a detail with a comma and quotes reads back intact */
	snprintf(path, sizeof(path), "%s/events.csv", dir);
	assert_int_equal(hb_csv_open(&c, path, &err), 0);
	assert_int_equal(hb_csv_header(&c, ev_cols, idx, &err), 0);
	rows = 0;
	while (hb_csv_next(&c, &err) == 1) {
		const char *kind, *detail;

		assert_int_equal(hb_csv_check_width(&c, &err), 0);
		assert_int_equal(hb_csv_str(&c, idx[2], &kind, &err), 0);
		assert_int_equal(hb_csv_str(&c, idx[3], &detail, &err), 0);
		if (strcmp(kind, "done") == 0)
			assert_string_equal(detail, "said \"done\", at last");
		else
			assert_string_equal(detail, rows < 2 ? "B_G 1024, 4 GPUs" : "B_G 512, 4 GPUs");
		rows++;
	}
	hb_csv_close(&c);
	assert_int_equal(rows, 4);
	fixture_free(&f);
}

static void test_json_file(void **state)
{
	struct fixture f;
	struct hb_error err = { 0 };
	char dir[512], path[600];
	cJSON *root, *models, *runs, *r0, *j0, *r2;

	(void)state;
	fixture(&f);
	f.r.opts.interval = 50;
	f.r.opts.replay = "/abs/path/traj.csv";
	out_dir(dir, sizeof(dir), "json");
	assert_int_equal(hb_results_write(&f.r, dir, 0, &err), 0);
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	root = hb_json_load_file(path, &err);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItem(root, "format")->valuestring, HB_RESULTS_FORMAT);
	assert_string_equal(cJSON_GetObjectItem(root, "cluster")->valuestring, "toy-cluster");
	assert_double_equal(cJSON_GetObjectItem(root, "seed")->valuedouble, 7, 0);
	assert_double_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "knobs"), "interval")->valuedouble, 50, 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "knobs"), "restart_cost_s")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "knobs"), "replay")->valuestring, "traj.csv");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "non_default")), 2);
	models = cJSON_GetObjectItem(root, "models");
	assert_int_equal(cJSON_GetArraySize(models), 1);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(models, 0), "reference")->valuestring, "jabas");
	runs = cJSON_GetObjectItem(cJSON_GetArrayItem(models, 0), "runs");
	assert_int_equal(cJSON_GetArraySize(runs), 3);
	r0 = cJSON_GetArrayItem(runs, 1);
	assert_string_equal(cJSON_GetObjectItem(r0, "policy")->valuestring, "simigrad");
	j0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r0, "jobs"), 0);
	assert_double_equal(cJSON_GetObjectItem(j0, "time_h")->valuedouble, 4.0, TOL);
	assert_double_equal(cJSON_GetObjectItem(j0, "time_rel")->valuedouble, 2.0, TOL);
	assert_double_equal(cJSON_GetObjectItem(j0, "mean_gbs")->valuedouble, 512.0, TOL);
	r2 = cJSON_GetArrayItem(runs, 2);
	assert_string_equal(cJSON_GetObjectItem(r2, "status")->valuestring, "cannot run");
	assert_non_null(strstr(cJSON_GetObjectItem(r2, "reason")->valuestring, "OOM"));
	assert_null(cJSON_GetObjectItem(r2, "jobs"));
	cJSON_Delete(root);
	/* the same document the caller can print */
	root = hb_results_summary_json(&f.r);
	assert_non_null(root);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "models")), 1);
	cJSON_Delete(root);
	fixture_free(&f);
}

static double query_num(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	double v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -12345.0 : sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void test_database(void **state)
{
	struct fixture f;
	struct hb_error err = { 0 };
	char dir[512], path[600];
	sqlite3 *db;

	(void)state;
	fixture(&f);
	out_dir(dir, sizeof(dir), "db");
	assert_int_equal(hb_results_write(&f.r, dir, 0, &err), 0);
	snprintf(path, sizeof(path), "%s/results.db", dir);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_double_equal(query_num(db, "SELECT count(*) FROM runs"), 3, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM jobs"), 2, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM events"), 4, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM timeseries"), 8, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM summary"), 3, 0);
	/* no wall time unless asked for */
	assert_double_equal(query_num(db, "SELECT count(*) FROM runs WHERE wall_s IS NOT NULL"), 0, 0);
	assert_double_equal(query_num(db, "SELECT seed FROM runs WHERE run_id = 2"), 7, 0);
	assert_double_equal(query_num(db, "SELECT time_s FROM jobs WHERE run_id = 2"), 4 * 3600.0, TOL);
	assert_double_equal(query_num(db, "SELECT mean_gbs FROM jobs WHERE run_id = 1"), 1024.0, TOL);
	assert_double_equal(query_num(db, "SELECT cost_rel FROM summary WHERE policy = 'simigrad'"), 2.0, TOL);
	assert_double_equal(query_num(db, "SELECT count(*) FROM summary WHERE status = 'cannot run' AND "
					  "reason LIKE 'OOM%' AND time_h IS NULL"),
			    1, 0);
	assert_double_equal(query_num(db, "SELECT global_bs FROM timeseries WHERE run_id = 1 AND seq = 3"), 256, 0);
	/* events: integer-coded rows of `event`, by name through the view (issue 43) */
	assert_double_equal(query_num(db, "SELECT count(*) FROM event WHERE typeof(kind) = 'integer'"), 4, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM events WHERE kind = 'done' AND detail = "
					  "'said \"done\", at last'"),
			    2, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM events AS v JOIN event AS e USING (run_id, seq) "
					  "JOIN event_kind AS k ON k.kind = e.kind WHERE k.name = v.kind"),
			    4, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM meta WHERE key = 'format' AND value = '"
					  HB_RESULTS_FORMAT "'"),
			    1, 0);
	assert_double_equal(query_num(db, "SELECT count(*) FROM runs WHERE json_extract(knobs_json, '$.reconfig_cost_s')"
					  " = 1"),
			    3, 0);
	sqlite3_close(db);
	fixture_free(&f);

	/* record_wall fills runs.wall_s */
	fixture(&f);
	f.r.record_wall = 1;
	out_dir(dir, sizeof(dir), "dbwall");
	assert_int_equal(hb_results_write(&f.r, dir, 0, &err), 0);
	snprintf(path, sizeof(path), "%s/results.db", dir);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_double_equal(query_num(db, "SELECT wall_s FROM runs WHERE run_id = 1"), 1.5, TOL);
	sqlite3_close(db);
	fixture_free(&f);
}

static void test_plot_data(void **state)
{
	struct fixture f;
	struct hb_error err = { 0 };
	char dir[512], path[600], *data;
	size_t len;
	const char *p;
	int blocks = 0;

	(void)state;
	fixture(&f);
	out_dir(dir, sizeof(dir), "plot");
	assert_int_equal(hb_results_write(&f.r, dir, 1, &err), 0);
	assert_dir_is(dir, plot_files);
	snprintf(path, sizeof(path), "%s/toy-series.dat", dir);
	slurp(path, &data, &len);
	/* one block per policy that ran, separated by two blank lines */
	for (p = data; (p = strstr(p, "\n\n\n")); p++)
		blocks++;
	assert_int_equal(blocks, 1);
	assert_non_null(strstr(data, "# jabas\n0.0277777778 1024 4 0 0\n"));
	/* closed by a row at the finish: 100 s + 2 h */
	assert_non_null(strstr(data, "2.02777778 1024 4 8 1\n\n\n# simigrad\n"));
	free(data);
	snprintf(path, sizeof(path), "%s/toy-bars.dat", dir);
	slurp(path, &data, &len);
	assert_non_null(strstr(data, "relative to jabas\n"));
	assert_non_null(strstr(data, "\njabas 1 1 2 8\nsimigrad 2 2 4 16\n"));
	assert_null(strstr(data, "pollux"));
	free(data);
	fixture_free(&f);
}

static void test_byte_identical(void **state)
{
	struct fixture f;
	struct hb_error err = { 0 };
	char a[512], b[512], pa[600], pb[600];

	(void)state;
	fixture(&f);
	out_dir(a, sizeof(a), "same-a");
	out_dir(b, sizeof(b), "same-b");
	assert_int_equal(hb_results_write(&f.r, a, 1, &err), 0);
	f.runs[0].wall_s = 99.0; /* wall times must not reach the files */
	assert_int_equal(hb_results_write(&f.r, b, 1, &err), 0);
	for (int i = 0; plot_files[i]; i++) {
		char *da, *db;
		size_t la, lb;

		snprintf(pa, sizeof(pa), "%s/%s", a, plot_files[i]);
		snprintf(pb, sizeof(pb), "%s/%s", b, plot_files[i]);
		slurp(pa, &da, &la);
		slurp(pb, &db, &lb);
		assert_int_equal(la, lb);
		assert_memory_equal(da, db, la);
		free(da);
		free(db);
	}
	/* rewriting over existing results replaces them */
	assert_int_equal(hb_results_write(&f.r, a, 1, &err), 0);
	assert_dir_is(a, plot_files);
	fixture_free(&f);
}

static void test_write_failure(void **state)
{
	struct fixture f;
	struct hb_error err = { 0 };
	char file[512], dir[600];
	FILE *fp;

	(void)state;
	fixture(&f);
	out_dir(file, sizeof(file), "a-file");
	fp = fopen(file, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(dir, sizeof(dir), "%s/sub", file);
	assert_int_equal(hb_results_write(&f.r, dir, 0, &err), -1);
	assert_true(err.msg[0] != '\0');
	assert_false(hb_path_exists(dir));
	fixture_free(&f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-results-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics),       cmocka_unit_test(test_knobs),
		cmocka_unit_test(test_policy_knob_rows),
		cmocka_unit_test(test_reference_and_stem), cmocka_unit_test(test_print),
		cmocka_unit_test(test_csv_files),     cmocka_unit_test(test_no_csv),     cmocka_unit_test(test_json_file),
		cmocka_unit_test(test_database),      cmocka_unit_test(test_plot_data),
		cmocka_unit_test(test_byte_identical), cmocka_unit_test(test_write_failure),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
