/* `hetbatch sim --trace --events` and `sim -v` end to end ($HETBATCH) on
 * tests/trace_replay/small.csv: what each level writes, the CSV copies only
 * with --csv, the events view over integer-coded rows, a bad level, the
 * event rate on stderr, and a write that fails in the middle of a replay
 * (the file size limit) leaving neither file nor directory. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../cli_run.h"

static char fixture[1024];

#define TRACE "-q sim --cluster pollux-t4 --trace '%s' --policy fifo,tiresias --no-fairness"

static double q(const char *dir, const char *sql)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s/results.db", tmpdir, dir);
	return cli_query(path, sql);
}

static void test_levels(void **state)
{
	size_t len;
	char *s;

	(void)state;
	assert_int_equal(run(TRACE " --out all", fixture), 0);
	assert_int_equal(run(TRACE " --out sum --events summary --csv", fixture), 0);
	assert_int_equal(run(TRACE " --out none --events none --csv", fixture), 0);
	assert_no_temporaries("sum");
	/* the text copies only with --csv; results.db holds the rows either way */
	assert_false(exists_in("all", "events.csv"));
	assert_false(exists_in("all", "timeseries.csv"));
	assert_true(exists_in("all", "jobs.csv"));
	assert_true(exists_in("sum", "events.csv"));
	/* 20 jobs: the default is every event (hb_events_level_default) */
	assert_int_equal((int)q("all", "SELECT count(*) FROM meta WHERE key = 'events'"), 0);
	/* the view names the integer-coded kinds of `event`, row for row */
	assert_true(q("all", "SELECT count(*) FROM events") == q("all", "SELECT count(*) FROM event"));
	assert_int_equal((int)q("all", "SELECT count(*) FROM events WHERE kind IS NULL"), 0);
	assert_true(q("all", "SELECT sum(nevents) FROM runs") == q("all", "SELECT count(*) FROM events"));

	assert_true(q("all", "SELECT count(*) FROM events WHERE kind = 'epoch'") > 0);
	assert_true(q("all", "SELECT count(*) FROM timeseries") > 0);
	assert_int_equal((int)q("sum", "SELECT count(*) FROM events WHERE kind NOT IN ('arrival', 'admit', 'start', "
				       "'restart', 'resize', 'preempt', 'drop', 'done')"),
			 0);
	assert_int_equal((int)q("sum", "SELECT count(*) FROM events WHERE kind = 'done'"), 20);
	assert_int_equal((int)q("sum", "SELECT count(*) FROM timeseries"), 0);
	assert_int_equal((int)q("sum", "SELECT value = 'summary' FROM meta WHERE key = 'events'"), 1);
	assert_int_equal((int)q("none", "SELECT count(*) FROM events"), 0);
	assert_int_equal((int)q("none", "SELECT sum(nevents) + sum(nsamples) FROM runs"), 0);
	/* every level has the same jobs and summaries */
	assert_int_equal((int)q("none", "SELECT count(*) FROM cluster_jobs"), 20);
	assert_true(q("none", "SELECT util_mean FROM cluster_summary WHERE run_id = 1") ==
		    q("all", "SELECT util_mean FROM cluster_summary WHERE run_id = 1"));
	s = slurp_in("none", "events.csv", &len);
	assert_string_equal(s, "run_id,model,policy,t_s,job,kind,detail\n");
	free(s);
	s = slurp_in("sum", "events.csv", &len);
	assert_null(strstr(s, ",epoch,"));
	assert_non_null(strstr(s, ",done,"));
	{ /* the CSV copy and the view hold the same rows (a detail has no line break) */
		int lines = 0, done = 0;

		for (const char *p = s; (p = strchr(p, '\n')); p++)
			lines++;
		for (const char *p = s; (p = strstr(p, ",done,")); p++)
			done++;
		assert_int_equal(lines - 1, (int)q("sum", "SELECT count(*) FROM events"));
		assert_int_equal(done, (int)q("sum", "SELECT count(*) FROM events WHERE kind = 'done'"));
	}
	free(s);

	assert_int_equal(run(TRACE " --out bad --events some", fixture), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "--events: 'some' is not all, summary or none"));
	free(s);
	assert_false(exists_in("bad", NULL));

	assert_int_equal(run(TRACE " --csv", fixture), 2);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "--csv needs --out DIR"));
	free(s);
}

static void test_event_rate(void **state)
{
	size_t len;
	char *s;

	(void)state;
	assert_int_equal(run("-v sim --cluster pollux-t4 --trace '%s' --policy fifo --no-fairness", fixture), 0);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "fifo: "));
	assert_non_null(strstr(s, " events in "));
	assert_non_null(strstr(s, "events per CPU-second"));
	free(s);
	/* not without -v */
	assert_int_equal(run("sim --cluster pollux-t4 --trace '%s' --policy fifo --no-fairness", fixture), 0);
	s = slurp(errf, &len);
	assert_null(strstr(s, "events per CPU-second"));
	free(s);
}

static void test_write_failure_leaves_nothing(void **state)
{
	size_t len;
	char *s;

	(void)state;
	/* Files may not grow past 16 KiB: the staged files fill up while the
	 * replays run (SIGXFSZ ignored, so the writes fail with EFBIG). */
	assert_int_equal(run_env("trap '' XFSZ; ulimit -f 32;", TRACE " --out deep/o", fixture), 1);
	s = slurp(errf, &len);
	assert_non_null(strstr(s, "error"));
	free(s);
	assert_false(exists_in("deep", NULL));
	/* and an existing directory keeps only what it had */
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --policy fifo --no-fairness --out kept", fixture), 0);
	assert_int_equal(run_env("trap '' XFSZ; ulimit -f 32;", TRACE " --out kept", fixture), 1);
	assert_no_temporaries("kept");
	assert_int_equal((int)q("kept", "SELECT count(*) FROM runs"), 1); /* the earlier results, whole */
}

static int setup(void **state)
{
	const char *root = getenv("HB_SOURCE_ROOT");

	(void)state;
	if (!root || cli_setup("stream") < 0)
		return -1;
	snprintf(fixture, sizeof(fixture), "%s/tests/trace_replay/small.csv", root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return cli_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_event_rate),
		cmocka_unit_test(test_write_failure_leaves_nothing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
