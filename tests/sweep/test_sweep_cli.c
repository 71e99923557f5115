/* `hetbatch sweep` as a user runs it ($HETBATCH), on the job-spec fixture
 * jobs.csv: usage and configuration errors (exit 2, nothing written),
 * byte-identical files for -j 1, 2 and 3 with no directory in them, rows
 * for points that cannot run or fail, the same numbers as `hetbatch sim
 * --trace` for an unchanged cluster, --json, --dry-run, a sweep where
 * nothing runs, and the figures with and without gnuplot. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "cli_util.h"
#include "policy.h"
#include "sim.h"

static struct scratch S;

static const char *const result_files[] = { "results.db", "sweep.csv", "summary.json", "sweep-load1.dat",
					    "sweep-load0.001.dat", NULL };

/* A config in the scratch directory: clusters demo (4 GPUs), quickstart +4
 * RTX 3090 (12) and the one-GPU fixture (no job fits); loads 1 and 0.001
 * (arrivals x 1000 run past max_sim_s: failed rows); two seeds. */
static void write_config(const char *name, const char *policies, const char *extra)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{ \"name\": \"cli\",\n"
		 "  \"trace\": { \"file\": \"%s/jobs.csv\", \"min_gpus\": 2 },\n"
		 "  \"clusters\": [ { \"base\": \"demo\" },\n"
		 "    { \"base\": \"jabas-quickstart\", \"label\": \"QS, +4 3090\",\n"
		 "      \"add\": [ { \"gpu\": \"rtx-3090\", \"nodes\": 1, \"gpus_per_node\": 4 } ] },\n"
		 "    { \"base\": \"%s/tiny-cluster.json\", \"label\": \"tiny\" } ],\n"
		 "  \"loads\": [1, 0.001], \"policies\": [%s], \"seeds\": [1, 2],\n"
		 "  \"knobs\": { \"max_sim_s\": 100000 }%s }\n",
		 S.fixtures, S.fixtures, policies, extra ? extra : "");
	assert_int_equal(write_in(&S, name, text), 0);
}

static int contains(const char *file, const char *needle)
{
	char *t = slurp(file, NULL);
	int yes = t && strstr(t, needle);

	free(t);
	return yes;
}

/* ---- usage and configuration errors --------------------------------------------------- */

static void test_usage(void **state)
{
	(void)state;
	assert_int_equal(sh(&S, "'%s' sweep", S.exe), 2);
	assert_true(contains(S.err, "configuration file is required"));
	assert_int_equal(sh(&S, "'%s' sweep --help", S.exe), 0);
	assert_true(contains(S.out, "\"clusters\""));
	assert_true(contains(S.out, "mpirun -np"));
	assert_int_equal(sh(&S, "'%s' sweep nope.json", S.exe), 2);
	write_config("u.json", "\"fifo\"", NULL);
	assert_int_equal(sh(&S, "'%s' sweep u.json -j 0", S.exe), 2);
	assert_int_equal(sh(&S, "'%s' sweep u.json --plot", S.exe), 2);
	assert_int_equal(sh(&S, "'%s' sweep u.json --fast", S.exe), 2);
	assert_int_equal(sh(&S, "'%s' sweep u.json extra.json", S.exe), 2);
	assert_int_equal(sh(&S, "'%s' help sweep", S.exe), 0);
}

static void test_config_errors_write_nothing(void **state)
{
	static const struct {
		const char *text, *needle;
	} cases[] = {
		{ "{\"trace\": {\"file\": \"t.csv\"}, \"clusters\": [{\"base\": \"demo\"}], \"policies\": [\"fifo\"], "
		  "\"loads\": [-1]}",
		  "bad.json: field 'loads[0]': value -1" },
		{ "{\"trace\": {\"file\": \"t.csv\"}, \"clusters\": [{\"base\": \"demo\"}], \"policies\": [\"fifo\"], "
		  "\"seed\": [1]}",
		  "bad.json: field 'seed': value [1]" },
		{ "{\"trace\": {\"file\": \"t.csv\"}, \"clusters\": [{\"base\": \"demo-9\"}], \"policies\": [\"fifo\"]}",
		  "bad.json: field 'clusters[0].base': value \"demo-9\"" },
		{ "{\"trace\": {\"file\": \"t.csv\"}, \"clusters\": [{\"base\": \"demo\", \"add\": [{\"gpu\": \"x\", "
		  "\"nodes\": 1, \"gpus_per_node\": 1}]}], \"policies\": [\"fifo\"]}",
		  "bad.json: field 'clusters[0].add[0].gpu': value \"x\"" },
		{ "{\"trace\": {\"file\": \"m.csv\"}, \"clusters\": [{\"base\": \"demo\"}], \"policies\": [\"fifo\"]}",
		  "m.csv:2: field 'model': value 'resnet9000'" },
	};

	(void)state;
	assert_int_equal(write_in(&S, "t.csv", "name,arrival_s,model,gpus\na,0,cifar10,1\n"), 0);
	assert_int_equal(write_in(&S, "m.csv", "name,arrival_s,model,gpus\na,0,resnet9000,1\n"), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(write_in(&S, "bad.json", cases[i].text), 0);
		assert_int_equal(sh(&S, "'%s' sweep bad.json --out never", S.exe), 2);
		if (!contains(S.err, cases[i].needle))
			fail_msg("case %zu: stderr lacks \"%s\"", i, cases[i].needle);
		assert_false(exists_in(&S, "never"));
	}
}

/* 1 when needle occurs in data[0..len) (binary-safe). */
static int has_bytes(const char *data, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (memcmp(data + i, needle, n) == 0)
			return 1;
	return 0;
}

/* ---- the files ------------------------------------------------------------------------------ */

static void test_identical_for_any_j(void **state)
{
	char *table[3];

	(void)state;
	write_config("c.json", "\"fifo\", \"tiresias\", \"optimus\"", NULL);
	for (int j = 1; j <= 3; j++) {
		char *p;

		if (sh(&S, "'%s' sweep c.json -j %d --out j%d --plot </dev/null", S.exe, j, j) != 0)
			fail_msg("-j %d: %s", j, slurp(S.err, NULL));
		table[j - 1] = slurp(S.out, NULL);
		/* the wall time is the only line allowed to differ */
		assert_non_null(p = strstr(table[j - 1], "; wall time"));
		*p = '\0';
	}
	assert_string_equal(table[0], table[1]);
	assert_string_equal(table[0], table[2]);
	for (int i = 0; i < 3; i++)
		free(table[i]);
	for (int i = 0; result_files[i]; i++) {
		if (!same_file(&S, "j1", "j2", result_files[i]) || !same_file(&S, "j1", "j3", result_files[i]))
			fail_msg("%s differs between -j 1, 2 and 3", result_files[i]);
		/* nor does it name a directory (the fixtures' or the scratch one) */
		{
			char rel[64];
			size_t len;
			char *data;

			snprintf(rel, sizeof(rel), "j1/%s", result_files[i]);
			data = slurp_in(&S, rel, &len);
			assert_non_null(data);
			assert_false(has_bytes(data, len, S.fixtures));
			assert_false(has_bytes(data, len, S.dir));
			free(data);
		}
	}
	/* and a second run of -j 2 gives the same bytes again */
	assert_int_equal(sh(&S, "'%s' -q sweep c.json -j 2 --out j2b --plot", S.exe), 0);
	assert_true(same_file(&S, "j1", "j2b", "results.db"));
	assert_int_equal(sh(&S, "wc -c <'%s/stderr.txt' | grep -qx 0", S.dir), 0); /* -q: no progress */
}

static int count_rows(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int n = -1;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* 3 clusters x 2 loads x 3 policies x 2 seeds = 36 points: tiny cannot run
 * (12), load 0.001 fails on the others (12), 12 ran. */
static void test_rows(void **state)
{
	char path[1024], *csv, *json, *line;
	sqlite3 *db;
	cJSON *doc, *rows, *it;
	int n = 0, nok = 0, ncannot = 0, nfailed = 0;

	(void)state;
	if (!exists_in(&S, "j1/results.db"))
		test_identical_for_any_j(state);
	snprintf(path, sizeof(path), "%s/j1/results.db", S.dir);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM points"), 36);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM points WHERE status = 'ok'"), 12);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM points WHERE status = 'cannot run' AND cluster = 'tiny' "
					"AND reason LIKE 'no job to replay%'"),
			 12);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM points WHERE status = 'failed' AND load = 0.001 AND "
					"reason LIKE '%did not finish within 100000 simulated seconds%' AND "
					"jct_mean_h IS NULL"),
			 12);
	/* ids in point order: cluster, load, policy, seed */
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM points WHERE id = 9 AND cluster = 'demo' AND "
					"load = 0.001 AND policy = 'tiresias' AND seed = 2"),
			 1);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM clusters WHERE label = 'QS, +4 3090' AND gpus = 12 AND "
					"name = 'jabas-quickstart-v1'"),
			 1);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM summary"), 18);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM summary WHERE seeds_ok = 2"), 6);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM meta WHERE key = 'config_json' AND value LIKE "
					"'%\"file\":\"jobs.csv\"%'"),
			 1);
	/* the same jobs in every point (issue 39): cifar-big (24 GPUs) fits no
	 * cluster and is left out; bert-a (8) is too large for demo (4), so
	 * censored there, to the end of the sweep's replays */
	assert_int_equal(count_rows(db, "SELECT COUNT(DISTINCT jobs) FROM points WHERE jobs IS NOT NULL"), 1);
	assert_int_equal(count_rows(db, "SELECT MIN(jobs) FROM points"), 6);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM jobs"), 12 * 6);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM jobs WHERE name = 'cifar-big'"), 0);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM jobs j JOIN points p ON p.id = j.point_id WHERE "
					"j.name = 'bert-a' AND p.cluster = 'demo' AND j.state = 'too large' AND "
					"j.censored = 1 AND j.start_h IS NULL AND j.jct_h > 0"),
			 6);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM jobs WHERE censored = 0 AND state = 'done' AND "
					"abs(jct_h - (finish_h - arrival_h)) < 1e-9"),
			 12 * 6 - 6);
	/* the delta against the first cluster, and a mean over every job */
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM points WHERE status = 'ok' AND cluster = 'demo' AND "
					"jct_delta_pct IS NULL AND too_large = 1 AND jct_all_mean_h > jct_mean_h"),
			 6);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM points p JOIN points b ON b.cluster = 'demo' AND "
					"b.load = p.load AND b.policy = p.policy AND b.seed = p.seed WHERE "
					"p.status = 'ok' AND p.cluster <> 'demo' AND abs(p.jct_delta_pct - 100.0 * "
					"(p.jct_all_mean_h - b.jct_all_mean_h) / b.jct_all_mean_h) < 1e-6"),
			 6);
	assert_int_equal(count_rows(db, "SELECT COUNT(*) FROM summary WHERE jct_all_mean_h IS NOT NULL AND "
					"(cluster = 'demo') = (jct_delta_pct IS NULL)"),
			 6);
	sqlite3_close(db);

	/* sweep.csv: header + 36 rows, the label with a comma quoted */
	csv = slurp_in(&S, "j1/sweep.csv", NULL);
	assert_non_null(csv);
	for (line = csv; (line = strchr(line, '\n')); line++)
		n++;
	assert_int_equal(n, 37);
	assert_non_null(strstr(csv, "\n12,\"QS, +4 3090\",12,"));
	free(csv);

	json = slurp_in(&S, "j1/summary.json", NULL);
	doc = cJSON_Parse(json);
	assert_non_null(doc);
	assert_int_equal(cJSON_GetObjectItem(doc, "points")->valueint, 36);
	assert_int_equal(cJSON_GetObjectItem(doc, "points_ok")->valueint, 12);
	rows = cJSON_GetObjectItem(doc, "point_rows");
	assert_int_equal(cJSON_GetArraySize(rows), 36);
	cJSON_ArrayForEach(it, rows) {
		const char *st = cJSON_GetObjectItem(it, "status")->valuestring;

		nok += strcmp(st, "ok") == 0;
		ncannot += strcmp(st, "cannot run") == 0;
		nfailed += strcmp(st, "failed") == 0;
		assert_true(strcmp(st, "ok") == 0 || cJSON_GetObjectItem(it, "reason") != NULL);
	}
	assert_int_equal(nok, 12);
	assert_int_equal(ncannot, 12);
	assert_int_equal(nfailed, 12);
	cJSON_Delete(doc);
	free(json);

	/* the table lists the failed points once each */
	assert_int_equal(sh(&S, "'%s' -q sweep c.json", S.exe), 0);
	assert_true(contains(S.out, "12 of 36 points ran"));
	assert_true(contains(S.out, "failed: simulator:"));
	assert_true(contains(S.out, "cannot run: no job to replay"));
}

/* Split a CSV line without quotes into fields (in place). */
static int fields(char *line, char **f, int max)
{
	int n = 0;

	for (char *p = line; n < max;) {
		f[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
	}
	return n;
}

/* The line of a CSV file that starts with prefix, copied into buf. */
static int find_line(const char *path, const char *prefix, char *buf, size_t size)
{
	char *text = slurp(path, NULL), *p;
	int found = 0;

	assert_non_null(text);
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			size_t len = strcspn(p, "\n");

			snprintf(buf, size, "%.*s", (int)len, p);
			found = 1;
			break;
		}
	}
	free(text);
	return found;
}

/* A shared policy whose agent draws on the simulation's random streams
 * (the similarity noise), so that a wrong seed changes its numbers. */
static const char *noisy_policy(void)
{
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		if (p->shared && (p->agent == &hb_agent_simigrad || p->agent == &hb_agent_jabas))
			return p->name;
	return NULL;
}

/* A point on an unchanged cluster is `hetbatch --seed S sim --trace --load
 * L`: on a Philly trace, where the seed also draws the models. */
static void test_matches_sim_trace(void **state)
{
	const char *noisy = noisy_policy();
	const char *pols[2] = { "fifo", noisy };
	char text[2048], path[1024];

	(void)state;
	snprintf(text, sizeof(text),
		 "{ \"trace\": { \"file\": \"%s/philly.csv\" }, \"clusters\": [ { \"base\": \"demo\" } ],\n"
		 "  \"loads\": [1, 2], \"policies\": [\"fifo\"%s%s%s], \"seeds\": [1, 2] }\n",
		 S.fixtures, noisy ? ", \"" : "", noisy ? noisy : "", noisy ? "\"" : "");
	assert_int_equal(write_in(&S, "p.json", text), 0);
	if (sh(&S, "'%s' -q sweep p.json -j 2 --out pm", S.exe) != 0)
		fail_msg("sweep: %s", slurp(S.err, NULL));
	if (sh(&S, "'%s' --seed 2 sim --cluster demo --trace '%s/philly.csv' --load 2 --policy fifo%s%s "
		   "--no-fairness --out simref",
		   S.exe, S.fixtures, noisy ? "," : "", noisy ? noisy : "") != 0)
		fail_msg("sim --trace: %s", slurp(S.err, NULL));
	for (int pi = 0; pi < (noisy ? 2 : 1); pi++) {
		char sweep_line[2048], sim_line[2048], prefix[64], *sf[40], *tf[40];

		/* point ((load 1) x 2 + policy) x 2 + (seed 1): load 2, seed 2 */
		snprintf(prefix, sizeof(prefix), "%d,demo,", (1 * 2 + pi) * 2 + 1);
		snprintf(path, sizeof(path), "%s/pm/sweep.csv", S.dir);
		assert_true(find_line(path, prefix, sweep_line, sizeof(sweep_line)));
		snprintf(prefix, sizeof(prefix), "%d,%s,", pi + 1, pols[pi]);
		snprintf(path, sizeof(path), "%s/simref/cluster_summary.csv", S.dir);
		assert_true(find_line(path, prefix, sim_line, sizeof(sim_line)));
		assert_true(fields(sweep_line, sf, 40) >= 28);
		assert_true(fields(sim_line, tf, 40) >= 19);
		assert_string_equal(sf[5], pols[pi]);
		assert_string_equal(sf[6], "2");
		assert_string_equal(sf[7], "ok");
		/* jobs .. jct_max_h: sweep.csv fields 10-16, cluster_summary.csv
		 * 5-11; makespan_h .. preemptions_per_job: sweep.csv 21-28 (after
		 * too_large and the all-jobs JCTs), cluster_summary.csv 12-19 */
		for (int k = 0; k < 15; k++) {
			int sk = 9 + k + (k >= 7 ? 4 : 0);

			if (strcmp(sf[sk], tf[4 + k]) != 0)
				fail_msg("%s column %d: sweep %s, sim %s", pols[pi], k, sf[sk], tf[4 + k]);
		}
		/* one cluster, every job fits: nothing censored, the all-jobs mean is the mean */
		assert_string_equal(sf[16], "0");
		assert_string_equal(sf[17], sf[12]);
	}
}

static void test_json_and_dry_run(void **state)
{
	cJSON *a, *b;
	char *file;

	(void)state;
	write_config("c.json", "\"fifo\", \"tiresias\", \"optimus\"", NULL);
	assert_int_equal(sh(&S, "'%s' -q sweep c.json --json --out js", S.exe), 0);
	a = cJSON_Parse(file = slurp(S.out, NULL));
	free(file);
	b = cJSON_Parse(file = slurp_in(&S, "js/summary.json", NULL));
	free(file);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(cJSON_Compare(a, b, 1));
	cJSON_Delete(a);
	cJSON_Delete(b);

	assert_int_equal(sh(&S, "'%s' sweep c.json --dry-run --out dry", S.exe), 0);
	assert_true(contains(S.out, "36 points (3 clusters x 2 loads x 3 policies x 2 seeds)"));
	assert_true(contains(S.out, "QS, +4 3090 = jabas-quickstart-v1 (12 GPUs on 3 nodes"));
	assert_false(exists_in(&S, "dry"));
	assert_true(contains(S.out, "    35  tiny"));
	/* the jobs no cluster can run, said before anything runs */
	assert_true(contains(S.out, "jobs: 6 jobs in every point; 4 of 28 "
				    "read left out everywhere: larger than every cluster (up to 24 GPUs asked)"));
	assert_true(contains(S.err, "warning: sweep: jobs: 6 jobs in every point"));
	/* the time estimate, from one timed point per policy; said before it times them */
	assert_true(contains(S.out, "\nestimate: about "));
	assert_true(contains(S.out, "(from 3 timed points, "));
	assert_true(contains(S.err, "timing the smallest point of each policy"));
	/* --json stays one document; -q says nothing on stderr */
	assert_int_equal(sh(&S, "'%s' -q sweep c.json --dry-run --json", S.exe), 0);
	a = cJSON_Parse(file = slurp(S.out, NULL));
	free(file);
	assert_non_null(a);
	cJSON_Delete(a);
	assert_false(contains(S.out, "estimate"));
	assert_int_equal(sh(&S, "'%s' -q sweep c.json --dry-run", S.exe), 0);
	assert_true(contains(S.out, "estimate: about "));
	assert_false(contains(S.err, "timing"));
}

/* A point that runs for a second: status lines while it runs (forced every
 * 0.2 s off a terminal by $HETBATCH_STATUS_SECONDS), none under -q. */
static void test_status_lines(void **state)
{
	(void)state;
	assert_int_equal(write_in(&S, "slow.json",
				  "{\"trace\": {\"synthetic\": {\"arrival\": \"poisson\", \"rate_per_hour\": 40, "
				  "\"hours\": 0.5, \"mix\": \"pollux\"}}, \"clusters\": [{\"base\": \"jabas-a\"}], "
				  "\"policies\": [\"pollux\"], \"seeds\": [1, 2]}"),
			 0);
	assert_int_equal(sh(&S, "HETBATCH_STATUS_SECONDS=0.2 '%s' sweep slow.json", S.exe), 0);
	assert_true(contains(S.err, "sweep: 0 of 2 points done, 1 running, "));
	assert_true(contains(S.err, "sweep: 1 of 2 points done, 1 running, "));
	assert_true(contains(S.err, " s elapsed, about "));
	assert_true(contains(S.err, "sweep: [2/2] point 1"));
	assert_int_equal(sh(&S, "HETBATCH_STATUS_SECONDS=0.2 '%s' -q sweep slow.json", S.exe), 0);
	assert_false(contains(S.err, "running"));
}

/* duration_s in the trace: said to be ignored, or used with
 * "duration_from_trace" (as sim --duration-from-trace). */
static void test_duration_from_trace(void **state)
{
	char *a, *b;

	(void)state;
	assert_int_equal(write_in(&S, "dur.csv",
				  "name,arrival_s,model,gpus,batch,duration_s\n"
				  "c1,0,cifar10,2,512,60\nc2,30,cifar10,2,512,60\n"),
			 0);
	assert_int_equal(write_in(&S, "dur0.json",
				  "{\"trace\": {\"file\": \"dur.csv\"}, \"clusters\": [{\"base\": \"demo\"}], "
				  "\"policies\": [\"fifo\"]}"),
			 0);
	assert_int_equal(write_in(&S, "dur1.json",
				  "{\"trace\": {\"file\": \"dur.csv\", \"duration_from_trace\": true}, "
				  "\"clusters\": [{\"base\": \"demo\"}], \"policies\": [\"fifo\"]}"),
			 0);
	assert_int_equal(sh(&S, "'%s' sweep dur0.json --out dur0", S.exe), 0);
	assert_true(contains(S.err, "records a run time (duration_s) for 2 of its 2 jobs; it is ignored"));
	assert_int_equal(sh(&S, "'%s' sweep dur1.json --out dur1", S.exe), 0);
	assert_false(contains(S.err, "duration_s"));
	a = slurp_in(&S, "dur0/sweep.csv", NULL);
	b = slurp_in(&S, "dur1/sweep.csv", NULL);
	{
		/* jct_mean_h (field 13): stopped after 60 s of running, far
		 * sooner than training CIFAR-10 to its target */
		char *fa[40], *fb[40], *la = strchr(a, '\n') + 1, *lb = strchr(b, '\n') + 1;
		double ja, jb;

		assert_true(fields(la, fa, 40) >= 13 && fields(lb, fb, 40) >= 13);
		ja = atof(fa[12]);
		jb = atof(fb[12]);
		if (!(jb > 0 && jb < 0.1 && ja > 5 * jb))
			fail_msg("mean JCT without %g h, with duration_from_trace %g h", ja, jb);
	}
	free(a);
	free(b);
	b = slurp_in(&S, "dur1/summary.json", NULL);
	assert_non_null(strstr(b, "\"duration_from_trace\":\ttrue"));
	free(b);
}

/* Nothing ran: exit 1, the reasons, no file. */
static void test_none_ran(void **state)
{
	(void)state;
	assert_int_equal(write_in(&S, "none.json",
				  "{\"trace\": {\"file\": \"t.csv\"}, \"clusters\": [{\"base\": \"demo\"}], "
				  "\"policies\": [\"fifo\"], \"loads\": [0.0001], \"knobs\": {\"max_sim_s\": 10}}"),
			 0);
	assert_int_equal(write_in(&S, "t.csv", "name,arrival_s,model,gpus\na,100,cifar10,1\n"), 0);
	assert_int_equal(sh(&S, "'%s' sweep none.json --out none", S.exe), 1);
	assert_true(contains(S.err, "did not finish within 10 simulated seconds"));
	assert_true(contains(S.err, "the one point did not run"));
	assert_false(exists_in(&S, "none"));
}

static int contains_in(const char *rel, const char *needle)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", S.dir, rel);
	return contains(path, needle);
}

static void test_plots(void **state)
{
	(void)state;
	write_config("c.json", "\"fifo\", \"optimus\"", NULL);
	/* without gnuplot: a warning, the data files, no figure */
	assert_int_equal(sh(&S, "PATH=/nonexistent '%s' sweep c.json --out nogp --plot", S.exe), 0);
	assert_true(contains(S.err, "gnuplot is not on PATH"));
	assert_true(exists_in(&S, "nogp/sweep-load1.dat"));
	assert_false(exists_in(&S, "nogp/sweep-load1-jct.png"));
	if (sh(&S, "command -v gnuplot") != 0) {
		skip();
		return;
	}
	assert_int_equal(sh(&S, "'%s' sweep c.json --out gp --plot", S.exe), 0);
	assert_true(exists_in(&S, "gp/sweep-load1-jct.png"));
	assert_true(exists_in(&S, "gp/sweep-load1-jct.svg"));
	assert_true(exists_in(&S, "gp/sweep-load1-cost.png"));
	assert_true(exists_in(&S, "gp/sweep-load1-cost.svg"));
	/* load 0.001 ran nowhere: no figure for it */
	assert_false(exists_in(&S, "gp/sweep-load0.001-jct.png"));
	{
		char *dat = slurp_in(&S, "gp/sweep-load1.dat", NULL);

		/* clusters by capacity, one block per policy that ran */
		assert_non_null(strstr(dat, "# fifo\n"));
		assert_non_null(strstr(dat, "# optimus\n"));
		assert_true(strstr(dat, "\"demo\"") < strstr(dat, "\"QS, +4 3090\""));
		assert_null(strstr(dat, "\"tiny\""));
		/* the censored column: one job censored on demo, none on QS+4 */
		assert_non_null(strstr(dat, " censored\n"));
		{
			char *d = strstr(dat, "\"demo\""), *q = strstr(dat, "\"QS, +4 3090\"");
			char *de = strchr(d, '\n'), *qe = strchr(q, '\n');

			assert_true(de && qe && de[-1] == '1' && de[-2] == ' ' && qe[-1] == '0' && qe[-2] == ' ');
		}
		free(dat);
		/* the figure marks them */
		assert_true(contains_in("gp/sweep-load1-jct.svg", "jobs censored"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_config_errors_write_nothing),
		cmocka_unit_test(test_identical_for_any_j),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_matches_sim_trace),
		cmocka_unit_test(test_json_and_dry_run),
		cmocka_unit_test(test_status_lines),
		cmocka_unit_test(test_duration_from_trace),
		cmocka_unit_test(test_none_ran),
		cmocka_unit_test(test_plots),
	};
	int rc = scratch_init(&S);

	if (rc)
		return rc;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rc == 0)
		scratch_remove(&S);
	return rc;
}
