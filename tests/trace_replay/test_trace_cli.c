/* `hetbatch sim --trace` as a user runs it ($HETBATCH) on the job-spec
 * fixture small.csv (10 short jobs of four of Pollux's models on pollux-t4,
 * with enough contention for FIFO to queue): usage errors, the table, every file and
 * its consistency with the others, byte-identical files for one seed, bad
 * traces that leave nothing behind, policies without a shared arbiter, jobs
 * larger than the cluster, --load, --json and the figures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "../cli_run.h"
#include "policy.h"
#include "sim.h"

static char fixture[1024];

/* events.csv and timeseries.csv only with --csv (issue 43) */
#define TRACE_FILES "results.db", "cluster_summary.csv", "jobs.csv", "by_model.csv", "utilisation.csv", \
		    "summary.json"

static const char *const result_files[] = { TRACE_FILES, NULL };

/* stderr holds one error line containing every needle (plus, for a usage
 * error, the line pointing at --help). */
static void assert_error(int usage, const char *needle1, const char *needle2)
{
	size_t len;
	char *s = slurp(errf, &len), *nl = strchr(s, '\n');

	if (count_char(s, '\n') != 1 + usage || !nl || (usage && !strstr(nl, "--help")))
		fail_msg("expected %d lines on stderr, got: %s", 1 + usage, s);
	*nl = '\0';
	if (!strstr(s, needle1) || (needle2 && !strstr(s, needle2)))
		fail_msg("expected an error line with '%s'%s%s, got: %s", needle1, needle2 ? " and " : "",
			 needle2 ? needle2 : "", s);
	free(s);
}

static void assert_one_line_error(const char *needle1, const char *needle2)
{
	assert_error(0, needle1, needle2);
}

static double query_double(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	double v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The policy of a run (runs.policy), in a static buffer. */
static const char *policy_of(sqlite3 *db, int run_id)
{
	static char name[64];
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(db, "SELECT policy FROM runs WHERE run_id = ?", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int(st, 1, run_id);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(name, sizeof(name), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return name;
}

static sqlite3 *open_db(const char *dir)
{
	char path[1024];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/%s/results.db", tmpdir, dir);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

/* The first built-in policy without a shared-cluster arbiter, or NULL. */
static const char *policy_without_arbiter(void)
{
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		if (!p->shared)
			return p->name;
	return NULL;
}

static int policies_with_arbiter_pairs(void)
{
	int n = 0;

	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p)) {
		int dup = 0;

		if (!p->shared)
			continue;
		for (const struct hb_policy *q = hb_policy_at(0); q != p; q = hb_policy_next(q))
			dup |= q->shared == p->shared && q->agent == p->agent;
		n += !dup;
	}
	return n;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_usage_errors(void **state)
{
	(void)state;
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --model cifar10", fixture), 2);
	assert_int_equal(run("sim --cluster pollux-t4 --model cifar10 --load 2"), 2);
	assert_error(1, "need --trace", NULL);
	assert_int_equal(run("sim --cluster pollux-t4 --trace no-such-trace.csv --out u1"), 2);
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --load 0 --out u1", fixture), 2);
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --gpus 4:2 --out u1", fixture), 2);
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --gpus 4 --out u1", fixture), 2);
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --format bogus --out u1", fixture), 2);
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --from 10 --to 5 --out u1", fixture), 2);
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --policy no-such --out u1", fixture), 2);
	assert_int_equal(run("sim --cluster no-such --trace '%s' --out u1", fixture), 2);
	assert_false(exists_in("u1", NULL));
	assert_int_equal(run("sim --help"), 0);
	{
		size_t len;
		char *s = slurp(outf, &len);

		assert_non_null(strstr(s, "--trace FILE"));
		assert_non_null(strstr(s, "--gpus MIN:MAX"));
		free(s);
	}
}

static void test_table_and_files(void **state)
{
	size_t len;
	char *s, *line, want[128];
	sqlite3 *db;
	int npol = policies_with_arbiter_pairs();

	(void)state;
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --out o1", fixture), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "trace small.csv (jobspec-csv), 10 jobs"));
	assert_non_null(strstr(s, "rho50"));
	assert_non_null(strstr(s, "ms/round"));
	/* fifo stands for its twin static; every job done, none dropped */
	line = strstr(s, "\nfifo ");
	assert_non_null(line);
	{
		/* the policy column is as wide as the longest name (at least 12):
		 * elastic-fixed-random's 20 here */
		const char *h = strstr(s, "\npolicy "), *j = h ? strstr(h, " jobs ") : NULL;
		int nw;

		assert_non_null(j);
		nw = (int)(j - (h + 1)) - 1;
		assert_int_equal(nw, (int)strlen("elastic-fixed-random"));
		snprintf(want, sizeof(want), "\n%-*s %5d %5d %5d ", nw, "fifo", 10, 10, 0); /* jobs, done, dropped */
	}
	assert_int_equal(strncmp(line, want, strlen(want)), 0);
	assert_null(strstr(s, "\nstatic "));
	assert_non_null(strstr(s, "mean JCT by model (h)"));
	assert_non_null(strstr(s, "deepspeech2 (2)"));
	assert_non_null(strstr(s, "ncf (2)"));
	free(s);
	for (int i = 0; result_files[i]; i++)
		if (!exists_in("o1", result_files[i]))
			fail_msg("%s not written", result_files[i]);
	assert_false(exists_in("o1", "trace-jct.dat")); /* only with --plot */

	db = open_db("o1");
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM cluster_summary"), npol);
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM runs WHERE model = 'trace'"), npol);
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM cluster_jobs"), 10 * npol);
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM jobs"), 10 * npol);
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM utilisation"), 100 * npol);
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM meta WHERE key = 'mode' AND value = 'trace'"), 1);
	/* no wall time in the files */
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM cluster_summary WHERE sched_ms_per_round "
					       "IS NOT NULL"),
			 0);
	/* the summary agrees with the per-job rows and the utilisation bins */
	for (int run_id = 1; run_id <= npol; run_id++) {
		char sql[512];
		double mean, jct, gpuh, util, bins, span;

		snprintf(sql, sizeof(sql), "SELECT jct_mean_h FROM cluster_summary WHERE run_id = %d", run_id);
		mean = query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT avg(jct_s) / 3600 FROM cluster_jobs WHERE run_id = %d", run_id);
		jct = query_double(db, sql);
		assert_true(fabs(mean - jct) <= 1e-9 * mean);
		snprintf(sql, sizeof(sql), "SELECT sum(gpu_hours) FROM jobs WHERE run_id = %d", run_id);
		gpuh = query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT util_mean FROM cluster_summary WHERE run_id = %d", run_id);
		util = query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT sum(util * (t_end_s - t_s)), max(t_end_s) - min(t_s) FROM utilisation "
					   "WHERE run_id = %d", run_id);
		bins = query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT makespan_h FROM cluster_summary WHERE run_id = %d", run_id);
		span = query_double(db, sql) * 3600;
		/* utilisation = GPU-hours / (64 GPUs x makespan), and the bins integrate to it */
		assert_true(fabs(util - gpuh * 3600 / (64 * span)) <= 1e-6 * util);
		assert_true(fabs(bins / span - util) <= 1e-6 * util);
		assert_true(util > 0 && util <= 1);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM cluster_jobs WHERE run_id = %d AND rho > 0", run_id);
		/* A batch fixed at BERT's 384 needs 14 GPUs (28 per GPU at most): the
		 * IV-B baselines cannot run bert-a and bert-big alone on their
		 * 11-GPU share, so those two have no rho there. */
		assert_int_equal((int)query_double(db, sql), strcmp(policy_of(db, run_id), "elastic-fixed") == 0 ||
								     strcmp(policy_of(db, run_id), "elastic-fixed-max") == 0
								     ? 8 : 10);
	}
	/* FIFO queues bert-big (32 GPUs) and the jobs behind it (head-of-line) */
	assert_true(query_double(db, "SELECT max(c.queue_s) FROM cluster_jobs c JOIN runs r USING (run_id) "
				     "WHERE r.policy = 'fifo'") > 0);
	sqlite3_close(db);

	s = slurp_in("o1", "cluster_summary.csv", &len);
	assert_int_equal(strncmp(s, "run_id,policy,status,", 21), 0);
	assert_non_null(strstr(s, ",fifo,ok,,10,10,0,"));
	free(s);
	s = slurp_in("o1", "jobs.csv", &len);
	assert_non_null(strstr(s, ",bert-big,bert,32,384,200,"));
	free(s);
}

static void test_reproducible(void **state)
{
	(void)state;
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --out r1 --seed 3", fixture), 0);
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --out r2 --seed 3", fixture), 0);
	for (int i = 0; result_files[i]; i++) {
		size_t la, lb;
		char *a = slurp_in("r1", result_files[i], &la), *b = slurp_in("r2", result_files[i], &lb);

		if (la != lb || memcmp(a, b, la) != 0)
			fail_msg("%s differs between two runs with the same seed", result_files[i]);
		free(a);
		free(b);
	}
}

/* --synthetic: the seeded generator replays like a trace file: same seed,
 * same files; another seed, other jobs; bad options are usage errors. */
static void test_synthetic(void **state)
{
	static const char *const args = "sim --cluster pollux-t4 --synthetic poisson --synth rate=12 --synth hours=1 "
					"--synth mix=cifar10:0.5,ncf:0.5 --policy fifo --no-fairness";
	size_t la, lb;
	char *a, *b;

	(void)state;
	assert_int_equal(run("-q --seed 4 %s --out y1", args), 0);
	a = slurp(outf, &la);
	assert_non_null(strstr(a, "trace synthetic-poisson (synthetic)"));
	assert_non_null(strstr(a, "poisson arrivals at 12/h for 1 h, sizes=fit (pollux filter), mix=cifar10:0.5,ncf:0.5"));
	free(a);
	assert_int_equal(run("-q --seed 4 %s --out y2", args), 0);
	for (int i = 0; result_files[i]; i++) {
		a = slurp_in("y1", result_files[i], &la);
		b = slurp_in("y2", result_files[i], &lb);
		if (la != lb || memcmp(a, b, la) != 0)
			fail_msg("%s differs between two synthetic runs with the same seed", result_files[i]);
		free(a);
		free(b);
	}
	assert_int_equal(run("-q --seed 5 %s --out y3", args), 0);
	a = slurp_in("y1", "jobs.csv", &la);
	b = slurp_in("y3", "jobs.csv", &lb);
	assert_false(la == lb && memcmp(a, b, la) == 0);
	assert_null(strstr(a, ",bert,")); /* only the two models of the mix */
	free(a);
	free(b);
	/* --load doubles the rate: more jobs in the same hour */
	assert_int_equal(run("-q --seed 4 %s --load 3 --out y4", args), 0);
	a = slurp_in("y4", "cluster_summary.csv", &la);
	b = slurp_in("y1", "cluster_summary.csv", &lb);
	assert_true(strcmp(a, b) != 0);
	free(a);
	free(b);

	assert_int_equal(run("sim --cluster pollux-t4 --synthetic poison"), 2);
	assert_error(1, "synthetic arrival 'poison'", NULL);
	assert_int_equal(run("sim --cluster pollux-t4 --synthetic poisson --synth rate=-1"), 2);
	assert_error(1, "synthetic option rate: '-1'", NULL);
	assert_int_equal(run("sim --cluster pollux-t4 --synthetic poisson --synth speed=3"), 2);
	assert_error(1, "unknown synthetic option 'speed'", NULL);
	/* the sweep configuration's names work too, in their units */
	assert_int_equal(run("-q --seed 4 sim --cluster pollux-t4 --synthetic poisson --synth rate_per_hour=12 --synth "
			     "hours=1 --synth mix=cifar10:0.5,ncf:0.5 --policy fifo --no-fairness --out y6"), 0);
	a = slurp_in("y1", "jobs.csv", &la);
	b = slurp_in("y6", "jobs.csv", &lb);
	assert_true(la == lb && memcmp(a, b, la) == 0);
	free(a);
	free(b);
	assert_int_equal(run("sim --cluster pollux-t4 --synth rate=3"), 2);
	assert_error(1, "--synth needs --synthetic", NULL);
	assert_int_equal(run("sim --cluster pollux-t4 --synthetic poisson --trace '%s'", fixture), 2);
	assert_error(1, "exclude each other", NULL);
	assert_int_equal(run("sim --cluster pollux-t4 --synthetic poisson --synth mix=resnet9000:1 --out y5"), 2);
	assert_false(exists_in("y5", NULL));
}

/* Philly log options: which attempts, which statuses, and a line saying what
 * the reader skipped and why. */
static void test_philly_log_options(void **state)
{
	char log[1100];
	size_t len;
	char *s;

	(void)state;
	snprintf(log, sizeof(log), "%s/traces/philly_log_good.json", getenv("HB_FIXTURES"));
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo --no-fairness", log), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "philly_log_good.json: 11 records read, 3 jobs kept, 8 skipped: 2 no attempts, "
				  "2 missing times, 2 still running, 1 ends before it starts, 1 no GPUs"));
	free(s);
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo --no-fairness --status Killed,Failed "
			     "--attempts all",
			     log),
			 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "status filter"));
	assert_non_null(strstr(s, "filters: status=Killed,Failed, attempts=all"));
	free(s);
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --attempts some", log), 2);
	assert_error(1, "--attempts: 'some' is not first or all", NULL);
	assert_int_equal(run("sim --cluster pollux-t4 --model cifar10 --status Pass"), 2);
	assert_error(1, "need --trace", NULL);
}

static void test_bad_traces_write_nothing(void **state)
{
	(void)state;
	write_file("bad-model.csv", "name,arrival_s,model,gpus\na,0,cifar10,2\nb,10,resnet9000,4\n");
	assert_int_equal(run("sim --cluster pollux-t4 --trace bad-model.csv --out b1"), 2);
	assert_one_line_error("bad-model.csv:3: field 'model': value 'resnet9000'", NULL);
	assert_false(exists_in("b1", NULL));

	write_file("bad-line.csv", "name,arrival_s,model,gpus\na,0,cifar10,2\nb,soon,ncf,1\n");
	assert_int_equal(run("sim --cluster pollux-t4 --trace bad-line.csv --out b2"), 2);
	assert_one_line_error("bad-line.csv:3", "arrival_s");
	assert_false(exists_in("b2", NULL));

	write_file("short.csv", "name,arrival_s,model,gpus\na,0,cifar10\n");
	assert_int_equal(run("sim --cluster pollux-t4 --trace short.csv --out b3"), 2);
	assert_one_line_error("short.csv:2", NULL);
	assert_false(exists_in("b3", NULL));

	/* every job filtered out */
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --gpus 40: --out b4", fixture), 2);
	assert_one_line_error("no job to replay", NULL);
	assert_false(exists_in("b4", NULL));
}

static void test_policy_without_arbiter(void **state)
{
	const char *p = policy_without_arbiter();
	char want[256];
	size_t len;
	char *s;

	(void)state;
	if (!p)
		skip(); /* every policy has one */
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --policy %s --out p1", fixture, p), 2);
	assert_error(1, "no listed policy has a shared-cluster arbiter", NULL);
	assert_false(exists_in("p1", NULL));
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo,%s --out p2", fixture, p), 0);
	s = slurp(outf, &len);
	snprintf(want, sizeof(want), "cannot run: policy %s has no shared-cluster arbiter yet", p);
	assert_non_null(strstr(s, want));
	assert_non_null(strstr(s, "1 of 2 policies ran"));
	free(s);
	s = slurp_in("p2", "cluster_summary.csv", &len);
	assert_non_null(strstr(s, ",cannot run,"));
	free(s);
}

static void test_oversize_and_load(void **state)
{
	size_t len;
	char *s, want[128];

	(void)state;
	write_file("big.csv", "name,arrival_s,model,gpus,batch\n"
			      "a,100,cifar10,4,1024\n"
			      "huge,200,imagenet,128,6400\n"
			      "b,300,ncf,1,32768\n");
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace big.csv --policy fifo --load 2 --out l1"), 0);
	s = slurp(outf, &len);
	assert_non_null(strstr(s, "2 jobs (1 larger than the cluster skipped)"));
	assert_non_null(strstr(s, "load 2"));
	snprintf(want, sizeof(want), "\n%-12s %5d %5d %5d ", "fifo", 2, 2, 1);
	assert_non_null(strstr(s, want));
	free(s);
	s = slurp_in("l1", "jobs.csv", &len);
	/* arrivals halved; job names from the trace */
	assert_non_null(strstr(s, ",0,a,cifar10,4,1024,50,"));
	assert_non_null(strstr(s, ",1,b,ncf,1,32768,150,"));
	assert_null(strstr(s, "huge"));
	free(s);
	s = slurp_in("l1", "cluster_summary.csv", &len);
	assert_non_null(strstr(s, ",fifo,ok,,2,2,1,"));
	free(s);
}

static void test_json(void **state)
{
	size_t len;
	char *s;
	cJSON *doc, *pol;

	(void)state;
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo --json --no-fairness", fixture), 0);
	s = slurp(outf, &len);
	doc = cJSON_Parse(s);
	free(s);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(doc, "mode")->valuestring, "trace");
	assert_string_equal(cJSON_GetObjectItem(doc, "trace")->valuestring, "small.csv");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(doc, "fairness")));
	pol = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "policies"), 0);
	assert_non_null(pol);
	assert_string_equal(cJSON_GetObjectItem(pol, "policy")->valuestring, "fifo");
	assert_int_equal(cJSON_GetObjectItem(pol, "completed")->valueint, 10);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(pol, "rho_median")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(pol, "utilisation"), "bins")), 100);
	cJSON_Delete(doc);
}

static void test_plots(void **state)
{
	static const char *const figs[] = { "trace-jct.png", "trace-jct.svg", "trace-util.png", "trace-util.svg",
					     "trace-rho.png", "trace-rho.svg", NULL };
	char gp[300];

	(void)state;
	if (system("command -v gnuplot >/dev/null 2>&1") != 0)
		skip();
	snprintf(gp, sizeof(gp), "%s/scripts/gnuplot", getenv("HB_SOURCE_ROOT"));
	setenv("HETBATCH_GNUPLOT_DIR", gp, 1);
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo --out f1 --plot", fixture), 0);
	for (int i = 0; figs[i]; i++)
		if (!exists_in("f1", figs[i]))
			fail_msg("%s not drawn", figs[i]);
	assert_true(exists_in("f1", "trace-rho.dat"));
	assert_no_temporaries("f1");
}

/* --capacity's counters reach every output: cluster_summary (results.db and
 * CSV) and summary.json agree with each other and with the run's own events
 * (one `revoke` per preemption, one `shrink` per scale-in for these two
 * policies), and a run without --capacity leaves them NULL / empty. */
static void test_capacity_columns(void **state)
{
	static const char *const pols[] = { "fifo", "elastic" };
	char sql[512], *s, *line;
	size_t len;
	sqlite3 *db;
	cJSON *doc;

	(void)state;
	write_file("cap.csv", "time_s,gpu,available\n700,t4,16\n2400,t4,64\n");
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo,elastic --capacity cap.csv "
			     "--no-fairness --out cap1",
			     fixture),
			 0);
	db = open_db("cap1");
	s = slurp_in("cap1", "summary.json", &len);
	doc = cJSON_Parse(s);
	free(s);
	assert_non_null(doc);
	s = slurp_in("cap1", "cluster_summary.csv", &len);
	assert_non_null(strstr(s, ",sched_rounds,capacity_withdrawn_gpus,capacity_preemptions,capacity_shrinks,cluster,"
				  "seed,load\n"));
	for (int i = 0; i < 2; i++) {
		cJSON *pol = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "policies"), i);
		long w, p, k, ev_p, ev_k;
		char want[128];

		snprintf(sql, sizeof(sql), "SELECT capacity_withdrawn_gpus FROM cluster_summary WHERE policy = '%s'", pols[i]);
		w = (long)query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT capacity_preemptions FROM cluster_summary WHERE policy = '%s'", pols[i]);
		p = (long)query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT capacity_shrinks FROM cluster_summary WHERE policy = '%s'", pols[i]);
		k = (long)query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM events e JOIN runs r USING (run_id) WHERE r.policy = '%s' "
			 "AND e.kind = 'revoke'", pols[i]);
		ev_p = (long)query_double(db, sql);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM events e JOIN runs r USING (run_id) WHERE r.policy = '%s' "
			 "AND e.kind = 'shrink'", pols[i]);
		ev_k = (long)query_double(db, sql);
		print_message("      %s: %ld GPUs withdrawn, %ld preempted, %ld shrunk\n", pols[i], w, p, k);
		assert_int_equal(w, 48);
		assert_int_equal(p, ev_p);
		assert_int_equal(k, ev_k);
		assert_non_null(pol);
		assert_string_equal(cJSON_GetObjectItem(pol, "policy")->valuestring, pols[i]);
		assert_int_equal(cJSON_GetObjectItem(pol, "capacity_withdrawn_gpus")->valueint, w);
		assert_int_equal(cJSON_GetObjectItem(pol, "capacity_preemptions")->valueint, p);
		assert_int_equal(cJSON_GetObjectItem(pol, "capacity_shrinks")->valueint, k);
		/* The CSV row ends with the same three, then cluster, seed, load. */
		snprintf(want, sizeof(want), "\n%d,%s,ok,", i + 1, pols[i]);
		line = strstr(s, want);
		assert_non_null(line);
		line = strchr(line + 1, '\n');
		assert_non_null(line);
		snprintf(want, sizeof(want), ",%ld,%ld,%ld,pollux-t4,1,1\n", w, p, k);
		assert_int_equal(strncmp(line - strlen(want) + 1, want, strlen(want)), 0);
	}
	/* The withdrawal (64 -> 16 under a trace that fills the cluster) reaches
	 * busy GPUs under both. */
	assert_true(query_double(db, "SELECT min(capacity_preemptions + capacity_shrinks) FROM cluster_summary") >= 1);
	free(s);
	cJSON_Delete(doc);
	sqlite3_close(db);

	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo --no-fairness --out cap2", fixture),
			 0);
	db = open_db("cap2");
	assert_int_equal((int)query_double(db, "SELECT count(*) FROM cluster_summary WHERE capacity_withdrawn_gpus IS NULL "
					       "AND capacity_preemptions IS NULL AND capacity_shrinks IS NULL"),
			 1);
	sqlite3_close(db);
	s = slurp_in("cap2", "cluster_summary.csv", &len);
	assert_non_null(strstr(s, ",,,pollux-t4,1,1\n"));
	free(s);
}

/* The JCT-by-model table names every policy in full: a column is as wide as
 * its name when that is longer than 10 (elastic-fixed and its variants all
 * read "elastic-fi" when cut), 10 otherwise as before, and every row lines
 * up with the header. */
static void test_by_model_long_names(void **state)
{
	size_t len, hlen;
	char *s, *h, *row, *end;

	(void)state;
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo,elastic-fixed,elastic-fixed-min "
			     "--no-fairness",
			     fixture),
			 0);
	s = slurp(outf, &len);
	h = strstr(s, "\nmodel (jobs)          ");
	assert_non_null(h);
	h++;
	end = strchr(h, '\n');
	assert_non_null(end);
	hlen = (size_t)(end - h);
	assert_int_equal(strncmp(h, "model (jobs)                 fifo elastic-fixed elastic-fixed-min\n", hlen + 1), 0);
	row = strstr(s, "\nncf (2)");
	assert_non_null(row);
	row++;
	end = strchr(row, '\n');
	assert_non_null(end);
	assert_int_equal((size_t)(end - row), hlen);
	free(s);
}

static int setup(void **state)
{
	const char *root = getenv("HB_SOURCE_ROOT");

	(void)state;
	if (!root)
		return -1;
	snprintf(fixture, sizeof(fixture), "%s/tests/trace_replay/small.csv", root);
	return cli_setup("tracecli");
}

static int teardown(void **state)
{
	(void)state;
	return cli_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_table_and_files),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_philly_log_options),
		cmocka_unit_test(test_bad_traces_write_nothing),
		cmocka_unit_test(test_policy_without_arbiter),
		cmocka_unit_test(test_oversize_and_load),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_plots),
		cmocka_unit_test(test_capacity_columns),
		cmocka_unit_test(test_by_model_long_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
