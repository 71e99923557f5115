/* Trace readers on the project's own fixtures (tests/fixtures/traces): each
 * format's good file gives the expected jobs, each malformed file one
 * HB_EINPUT line naming the file, line (or byte and element) and field, and
 * records a simulator cannot replay are counted by reason.  Also: format
 * detection, time parsing, the machine list, bounded memory on a 50,000-job
 * Philly log, and the synthetic generator (determinism, load factor). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "catalog.h"
#include "jobspec.h"
#include "philly.h"
#include "rng.h"
#include "strutil.h"
#include "synthetic.h"

static char tmpdir[256];
static char fixtures[1024];

static const char *fx(const char *name)
{
	static char path[4][2048];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/traces/%s", fixtures, name);
	return path[k];
}

static double utc(const char *s)
{
	double t = 0;

	assert_int_equal(hb_trace_parse_time(s, &t), 0);
	return t;
}

/* Read a whole file in file order (not sorted). */
static long read_stream(const char *path, enum hb_trace_format fmt, const struct hb_trace_options *opt,
			struct hb_jobspec *jobs, long max, struct hb_trace_stats *stats)
{
	struct hb_trace_reader *r = NULL;
	struct hb_error err = { 0 };
	long n = 0;
	int rc;

	if (hb_trace_open(path, fmt, opt, &r, &err) < 0)
		fail_msg("open %s: %s", path, err.msg);
	while ((rc = hb_trace_next(r, &jobs[n < max ? n : max - 1], &err)) == 1)
		n++;
	if (rc < 0)
		fail_msg("read %s: %s", path, err.msg);
	if (stats)
		*stats = *hb_trace_get_stats(r);
	hb_trace_close(r);
	assert_true(n <= max);
	return n;
}

/* The file must fail, with one line naming it and containing each of the
 * given fragments. */
static void expect_error(const char *name, enum hb_trace_format fmt, const struct hb_trace_options *opt,
			 const char *a, const char *b, const char *c)
{
	struct hb_jobspec *jobs = NULL;
	long n = -1;
	struct hb_error err = { 0 };
	const char *frag[] = { a, b, c };

	assert_int_equal(hb_trace_read_all(fx(name), fmt, opt, &jobs, &n, NULL, &err), -1);
	assert_null(jobs);
	assert_int_equal(err.code, HB_EINPUT);
	assert_null(strchr(err.msg, '\n'));
	if (!strstr(err.msg, name))
		fail_msg("%s: message does not name the file: %s", name, err.msg);
	for (int i = 0; i < 3; i++)
		if (frag[i] && !strstr(err.msg, frag[i]))
			fail_msg("%s: message lacks '%s': %s", name, frag[i], err.msg);
}

static const struct hb_jobspec *by_name(const struct hb_jobspec *v, long n, const char *name)
{
	for (long i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	fail_msg("no job named %s", name);
	return NULL;
}

/* ---- time, names, classes ---------------------------------------------- */

static void test_parse_time(void **state)
{
	double t;

	(void)state;
	assert_int_equal(hb_trace_parse_time("2017-10-07 01:11:39", &t), 0);
	assert_true(t == 1507338699.0);
	assert_int_equal(hb_trace_parse_time("2016-02-29 23:59:59", &t), 0);
	assert_true(t == 1456790399.0);
	assert_int_equal(hb_trace_parse_time("1969-12-31 00:00:00", &t), 0);
	assert_true(t == -86400.0);
	assert_int_equal(hb_trace_parse_time("2017-02-29 00:00:00", &t), -1);
	assert_int_equal(hb_trace_parse_time("2017-13-01 00:00:00", &t), -1);
	assert_int_equal(hb_trace_parse_time("2017-10-07 24:00:00", &t), -1);
	assert_int_equal(hb_trace_parse_time("2017-10-07T01:11:39", &t), -1);
	assert_int_equal(hb_trace_parse_time("2017-10-07 01:11:3", &t), -1);
	assert_int_equal(hb_trace_parse_time("2017-10-07 01:11:39 ", &t), -1);
	assert_int_equal(hb_trace_parse_time("", &t), -1);
}

static void test_format_names(void **state)
{
	enum hb_trace_format f;
	struct hb_error err = { 0 };

	(void)state;
	for (int i = HB_TRACE_AUTO; i < HB_TRACE_SYNTHETIC; i++) {
		assert_int_equal(hb_trace_format_parse(hb_trace_format_name((enum hb_trace_format)i), &f, &err), 0);
		assert_int_equal(f, i);
	}
	assert_int_equal(hb_trace_format_parse("philly", &f, &err), -1);
	assert_non_null(strstr(err.msg, "philly-log"));
	assert_string_equal(hb_trace_skip_name(HB_SKIP_RUNNING), "still running");
}

static void test_size_class_and_model(void **state)
{
	struct hb_rng rng;
	struct hb_jobspec j;
	long cifar = 0, ds2 = 0;
	const int n = 20000;

	(void)state;
	assert_int_equal(hb_trace_size_class(0), 0);
	assert_int_equal(hb_trace_size_class(3599.9), 0);
	assert_int_equal(hb_trace_size_class(3600), 1);
	assert_int_equal(hb_trace_size_class(36000), 2);
	assert_int_equal(hb_trace_size_class(360000), 3);
	hb_rng_seed(&rng, 7, HB_STREAM_JOBMIX);
	for (int i = 0; i < n; i++) {
		memset(&j, 0, sizeof(j));
		j.gpu_time_s = 100;
		hb_trace_assign_model(&j, &rng);
		assert_true(strcmp(j.model, "cifar10") == 0 || strcmp(j.model, "ncf") == 0);
		cifar += strcmp(j.model, "cifar10") == 0;
		j.gpu_time_s = 5 * 3600;
		hb_trace_assign_model(&j, &rng);
		assert_true(strcmp(j.model, "deepspeech2") == 0 || strcmp(j.model, "bert") == 0);
		ds2 += strcmp(j.model, "deepspeech2") == 0;
		j.gpu_time_s = 50 * 3600;
		hb_trace_assign_model(&j, &rng);
		assert_string_equal(j.model, "yolov3");
		j.gpu_time_s = 500 * 3600;
		hb_trace_assign_model(&j, &rng);
		assert_string_equal(j.model, "imagenet");
	}
	/* Binomial(20000, 1/2): sd 70.7; 5 sd. */
	assert_true(labs(cifar - n / 2) < 354);
	assert_true(labs(ds2 - n / 2) < 354);
}

/* ---- Philly job log ----------------------------------------------------- */

static void test_philly_log_first_attempt(void **state)
{
	struct hb_jobspec v[16];
	struct hb_trace_stats st;
	const struct hb_jobspec *j;
	long n;

	(void)state;
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_AUTO, NULL, v, 16, &st);
	assert_int_equal(n, 3);
	assert_int_equal(st.records, 11);
	assert_int_equal(st.jobs, 3);
	assert_int_equal(st.skipped[HB_SKIP_NO_ATTEMPTS], 2);
	assert_int_equal(st.skipped[HB_SKIP_RUNNING], 2);
	assert_int_equal(st.skipped[HB_SKIP_MISSING_TIMES], 2);
	assert_int_equal(st.skipped[HB_SKIP_BAD_TIMES], 1);
	assert_int_equal(st.skipped[HB_SKIP_NO_GPUS], 1);
	assert_int_equal(st.skipped_total, 8);
	assert_int_equal(st.stopped, 0);

	/* Origin: the earliest submission, job-no-attempts at 2017-10-07 00:00:00. */
	j = by_name(v, n, "application_1506638472019_14199");
	assert_true(j->arrival_s == 4299.0);
	assert_int_equal(j->gpus, 8);
	assert_true(j->duration_s == 74.0);
	assert_true(j->gpu_time_s == 592.0);
	assert_true(j->wait_s == 30.0);
	assert_int_equal(j->attempts, 2);
	assert_string_equal(j->status, "Pass");
	assert_string_equal(j->vc, "ee9e8c");
	assert_string_equal(j->user, "ce2f4c");
	assert_string_equal(j->model, "");
	assert_int_equal(j->record, 1);

	j = by_name(v, n, "job-two-servers");
	assert_int_equal(j->gpus, 4);
	assert_true(j->duration_s == 5400.0);
	assert_true(j->arrival_s == 140300.0);
	assert_true(j->wait_s == 100.0);
	assert_int_equal(j->record, 10);

	/* The first attempt finished; the retry still runs. */
	j = by_name(v, n, "job-retried-running");
	assert_int_equal(j->gpus, 1);
	assert_true(j->duration_s == 600.0);
	assert_true(j->arrival_s == 172740.0);
}

static void test_philly_log_all_attempts(void **state)
{
	struct hb_jobspec v[16];
	struct hb_trace_stats st;
	struct hb_trace_options o;
	const struct hb_jobspec *j;
	long n;

	(void)state;
	hb_trace_options_init(&o);
	o.attempts = HB_ATTEMPTS_ALL;
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, &st);
	assert_int_equal(n, 2);
	assert_int_equal(st.skipped[HB_SKIP_RUNNING], 3);
	j = by_name(v, n, "application_1506638472019_14199");
	/* 74 s on 8 GPUs, then 2 d 5 h 39 min 42 s on 4 + 8 GPUs. */
	assert_int_equal(j->gpus, 12);
	assert_true(j->duration_s == 74.0 + 193182.0);
	assert_true(j->gpu_time_s == 8 * 74.0 + 12 * 193182.0);
}

static void test_philly_log_origin(void **state)
{
	struct hb_jobspec v[16];
	struct hb_trace_options o;
	struct hb_trace_reader *r;
	struct hb_error err = { 0 };
	long n;

	(void)state;
	hb_trace_options_init(&o);
	o.origin = HB_ORIGIN_FIRST;
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, NULL);
	assert_int_equal(n, 3);
	assert_true(by_name(v, n, "application_1506638472019_14199")->arrival_s == 0.0);
	assert_true(by_name(v, n, "job-two-servers")->arrival_s == 140300.0 - 4299.0);

	o.origin = HB_ORIGIN_FIXED;
	o.origin_s = 0;
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, NULL);
	assert_true(by_name(v, n, "application_1506638472019_14199")->arrival_s == 1507338699.0);

	assert_int_equal(hb_trace_open(fx("philly_log_good.json"), HB_TRACE_AUTO, NULL, &r, &err), 0);
	assert_int_equal(hb_trace_get_format(r), HB_TRACE_PHILLY_LOG);
	assert_true(hb_trace_get_origin(r) == utc("2017-10-07 00:00:00"));
	hb_trace_close(r);
}

static void test_philly_log_filters(void **state)
{
	struct hb_jobspec v[16];
	struct hb_trace_stats st;
	struct hb_trace_options o;
	long n;

	(void)state;
	hb_trace_options_init(&o);
	hb_trace_options_init(&o);
	snprintf(o.vc, sizeof(o.vc), "11cb48, ee9e8c");
	snprintf(o.status, sizeof(o.status), "killed");
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, &st);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "job-two-servers");
	assert_int_equal(st.skipped[HB_SKIP_STATUS], 2);

	hb_trace_options_init(&o);
	snprintf(o.vc, sizeof(o.vc), "11cb48");
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, &st);
	assert_int_equal(n, 2);
	assert_int_equal(st.skipped[HB_SKIP_VC], 1);

	hb_trace_options_init(&o);
	o.from_s = 100000;
	o.to_s = 172740;   /* half-open: the job at 172740 is out */
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, &st);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "job-two-servers");
	assert_int_equal(st.skipped[HB_SKIP_WINDOW], 2);

	hb_trace_options_init(&o);
	o.min_gpus = 2;
	o.max_gpus = 4;
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, &st);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].gpus, 4);
	assert_int_equal(st.skipped[HB_SKIP_GPUS], 2);

	hb_trace_options_init(&o);
	o.max_jobs = 2;
	n = read_stream(fx("philly_log_good.json"), HB_TRACE_PHILLY_LOG, &o, v, 16, &st);
	assert_int_equal(n, 2);
	assert_int_equal(st.stopped, 1);
}

static void test_philly_log_bad_options(void **state)
{
	struct hb_trace_options o;
	struct hb_trace_reader *r = NULL;
	struct hb_error err = { 0 };

	(void)state;
	hb_trace_options_init(&o);
	o.min_gpus = 4;
	o.max_gpus = 2;
	assert_int_equal(hb_trace_open(fx("philly_log_good.json"), HB_TRACE_AUTO, &o, &r, &err), -1);
	assert_null(r);
	assert_non_null(strstr(err.msg, "max_gpus"));
	hb_trace_options_init(&o);
	o.from_s = 10;
	o.to_s = 10;
	assert_int_equal(hb_trace_open(fx("philly_log_good.json"), HB_TRACE_AUTO, &o, &r, &err), -1);
	hb_trace_options_init(&o);
	snprintf(o.vc, sizeof(o.vc), "a,,b");
	assert_int_equal(hb_trace_open(fx("philly_log_good.json"), HB_TRACE_AUTO, &o, &r, &err), -1);
	assert_non_null(strstr(err.msg, "'vc'"));
}

static void test_philly_log_malformed(void **state)
{
	struct hb_trace_options first;
	struct hb_jobspec *jobs = NULL;
	long n = -1;
	struct hb_error err = { 0 };

	(void)state;
	hb_trace_options_init(&first);
	first.origin = HB_ORIGIN_FIRST;   /* fail in the stream, not the origin pass */
	expect_error("philly_log_truncated.json", HB_TRACE_PHILLY_LOG, NULL, "truncated", "element 2",
		     "starting at line 5");
	expect_error("philly_log_unclosed_array.json", HB_TRACE_PHILLY_LOG, NULL, "truncated", "not closed with ']'",
		     NULL);
	expect_error("philly_log_bad_time.json", HB_TRACE_PHILLY_LOG, NULL, ":4: byte ", "field 'submitted_time'",
		     "'2017-13-07 00:00:00'");
	expect_error("philly_log_bad_time.json", HB_TRACE_PHILLY_LOG, &first, "element 2", "submitted_time", NULL);
	expect_error("philly_log_bad_attempt_time.json", HB_TRACE_PHILLY_LOG, NULL, "element 1",
		     "field 'attempts[0].start_time'", "'yesterday'");
	expect_error("philly_log_wrong_type.json", HB_TRACE_PHILLY_LOG, NULL, ":2: byte 4: element 1",
		     "field 'attempts[0].detail[0].gpus'", "expected an array");
	expect_error("philly_log_attempts_not_array.json", HB_TRACE_PHILLY_LOG, NULL, "field 'attempts'",
		     "expected an array", NULL);
	expect_error("philly_log_missing_submitted.json", HB_TRACE_PHILLY_LOG, NULL, "field 'submitted_time'",
		     "missing", NULL);
	expect_error("philly_log_bad_json.json", HB_TRACE_PHILLY_LOG, NULL, ":5: byte", "element 2",
		     "invalid JSON near 'Nonesuch");
	expect_error("philly_log_missing_comma.json", HB_TRACE_PHILLY_LOG, NULL, ":3: byte", "expected ','",
		     "found '{'");
	expect_error("philly_log_trailing_comma.json", HB_TRACE_PHILLY_LOG, NULL, ":3: byte", "trailing ','",
		     NULL);
	expect_error("philly_log_trailing_text.json", HB_TRACE_PHILLY_LOG, NULL, ":4: byte", "text after the end",
		     "'g'");
	expect_error("philly_log_not_object.json", HB_TRACE_PHILLY_LOG, NULL, ":3: byte", "element 2",
		     "expected a job object");
	expect_error("empty.json", HB_TRACE_PHILLY_LOG, NULL, "expected '['", "end of file", NULL);
	expect_error("jobspec_good.json", HB_TRACE_PHILLY_LOG, NULL, "expected '['", "found '{'", NULL);

	assert_int_equal(hb_trace_read_all(fx("philly_log_empty_array.json"), HB_TRACE_AUTO, NULL, &jobs, &n, NULL,
					   &err), 0);
	assert_int_equal(n, 0);
	free(jobs);
}

/* After an error every later call repeats it; after the end, 0. */
static void test_reader_sticky_end_and_error(void **state)
{
	struct hb_trace_options o;
	struct hb_trace_reader *r;
	struct hb_jobspec j;
	struct hb_error err = { 0 }, err2 = { 0 };

	(void)state;
	hb_trace_options_init(&o);
	o.origin = HB_ORIGIN_FIRST;
	assert_int_equal(hb_trace_open(fx("philly_log_bad_json.json"), HB_TRACE_PHILLY_LOG, &o, &r, &err), 0);
	assert_int_equal(hb_trace_next(r, &j, &err), -1);
	assert_int_equal(hb_trace_next(r, &j, &err2), -1);
	assert_string_equal(err.msg, err2.msg);
	hb_trace_close(r);

	assert_int_equal(hb_trace_open(fx("workload_good.csv"), HB_TRACE_AUTO, NULL, &r, &err), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(hb_trace_next(r, &j, &err), 1);
	assert_int_equal(hb_trace_next(r, &j, &err), 0);
	assert_int_equal(hb_trace_next(r, &j, &err), 0);
	hb_trace_close(r);
}

/* Inputs the fuzzers found (tests/fixtures/traces/fuzz): control characters
 * inside JSON strings and keys (cJSON accepts a raw newline in a string)
 * were quoted raw, breaking the one-line error message.  They are escaped. */
static void test_fuzz_regressions(void **state)
{
	(void)state;
	expect_error("fuzz/philly_log_newline_in_time.json", HB_TRACE_PHILLY_LOG, NULL,
		     "field 'attempts[0].end_time'", "value '2017-10\\n:7 00:10:00'", NULL);
	expect_error("fuzz/jobspec_json_control_in_key.json", HB_TRACE_JOBSPEC_JSON, NULL, ":1: byte 1",
		     "unknown key 'jobs", "[\\n");
	expect_error("fuzz/trace_auto_newline_in_key.json", HB_TRACE_AUTO, NULL, "unknown key 'jo[\\n[bs'", NULL,
		     NULL);
}

/* ---- philly.csv --------------------------------------------------------- */

static void test_philly_csv(void **state)
{
	struct hb_jobspec v[16], *all = NULL;
	struct hb_trace_stats st;
	struct hb_error err = { 0 };
	long n;

	(void)state;
	n = read_stream(fx("philly_good.csv"), HB_TRACE_AUTO, NULL, v, 16, &st);
	assert_int_equal(n, 5);
	assert_int_equal(st.records, 6);
	assert_int_equal(st.skipped[HB_SKIP_NO_GPUS], 1);
	/* First row, relative to the earliest (row 4, 2017-09-29 07:58:32). */
	assert_string_equal(v[0].name, "philly-2");
	assert_int_equal(v[0].record, 2);
	assert_true(v[0].arrival_s == utc("2017-10-09 07:01:55") - utc("2017-09-29 07:58:32"));
	assert_true(v[0].arrival_s == 860603.0);
	assert_true(v[0].duration_s == 66.0);
	assert_int_equal(v[0].gpus, 1);
	assert_string_equal(v[0].vc, "11cb48");
	assert_string_equal(v[0].model, "");
	assert_true(v[3].gpu_time_s == 22072.0);
	assert_int_equal(v[3].gpus, 8);

	assert_int_equal(hb_trace_read_all(fx("philly_good.csv"), HB_TRACE_PHILLY_CSV, NULL, &all, &n, &st, &err), 0);
	assert_int_equal(n, 5);
	assert_true(all[0].arrival_s == 0.0);
	assert_string_equal(all[0].name, "philly-4");
	assert_true(all[1].arrival_s == 88.0);
	for (long i = 1; i < n; i++)
		assert_true(all[i - 1].arrival_s <= all[i].arrival_s);
	free(all);
}

static void test_philly_csv_malformed(void **state)
{
	(void)state;
	expect_error("philly_missing_column.csv", HB_TRACE_PHILLY_CSV, NULL, ":1:", "missing column 'gpu_time'", NULL);
	expect_error("philly_non_numeric.csv", HB_TRACE_PHILLY_CSV, NULL, ":3:", "field 'duration'", "'abc'");
	expect_error("philly_bad_timestamp.csv", HB_TRACE_PHILLY_CSV, NULL, ":3:", "field 'timestamp'",
		     "'2017-02-30 06:13:03'");
	expect_error("philly_short_row.csv", HB_TRACE_PHILLY_CSV, NULL, ":3:", "expected 5 fields", NULL);
	expect_error("philly_negative.csv", HB_TRACE_PHILLY_CSV, NULL, ":2:", "field 'duration'", "out of range");
	expect_error("empty.csv", HB_TRACE_PHILLY_CSV, NULL, "empty file", NULL, NULL);
}

/* ---- Pollux workloads --------------------------------------------------- */

static void test_pollux_workload(void **state)
{
	struct hb_jobspec v[16], *all = NULL;
	struct hb_trace_options o;
	struct hb_error err = { 0 };
	long n;

	(void)state;
	n = read_stream(fx("workload_good.csv"), HB_TRACE_AUTO, NULL, v, 16, NULL);
	assert_int_equal(n, 5);
	assert_string_equal(v[0].name, "cifar10-0");
	assert_string_equal(v[0].model, "cifar10");
	assert_true(v[0].arrival_s == 107.0);
	assert_int_equal(v[0].gpus, 6);
	assert_int_equal(v[0].batch, 2048);
	assert_true(v[0].duration_s == 0.0);
	assert_true(v[0].wait_s == -1.0);
	assert_string_equal(v[4].model, "imagenet");
	assert_int_equal(v[4].gpus, 24);
	assert_int_equal(v[4].batch, 3200);
	assert_int_equal(v[4].record, 6);

	/* Unsorted times are read; the sorted read puts them in order. */
	assert_int_equal(hb_trace_read_all(fx("workload_nonmonotone.csv"), HB_TRACE_AUTO, NULL, &all, &n, NULL, &err),
			 0);
	assert_int_equal(n, 3);
	assert_string_equal(all[0].name, "ncf-1");
	assert_string_equal(all[1].name, "cifar10-0");
	free(all);
	hb_trace_options_init(&o);
	o.require_sorted = 1;
	expect_error("workload_nonmonotone.csv", HB_TRACE_AUTO, &o, ":3:", "field 'arrival'", "earlier");
	assert_int_equal(read_stream(fx("workload_good.csv"), HB_TRACE_AUTO, &o, v, 16, NULL), 5);
}

static void test_pollux_workload_malformed(void **state)
{
	(void)state;
	expect_error("workload_missing_column.csv", HB_TRACE_POLLUX_WORKLOAD, NULL, ":1:",
		     "missing column 'num_replicas'", NULL);
	expect_error("workload_non_numeric.csv", HB_TRACE_POLLUX_WORKLOAD, NULL, ":3:", "field 'num_replicas'",
		     "'six'");
	expect_error("workload_negative_time.csv", HB_TRACE_POLLUX_WORKLOAD, NULL, ":2:", "field 'time'",
		     "out of range");
	expect_error("workload_empty_name.csv", HB_TRACE_POLLUX_WORKLOAD, NULL, ":2:", "field 'name'", "empty");
	expect_error("empty.csv", HB_TRACE_POLLUX_WORKLOAD, NULL, "empty file", NULL, NULL);
}

/* ---- job-spec CSV and JSON --------------------------------------------- */

static void check_jobspec_good(const struct hb_jobspec *v, long n, int json)
{
	assert_int_equal(n, 3);
	assert_string_equal(v[0].name, "resnet-a");
	assert_string_equal(v[0].model, "resnet50");
	assert_true(v[0].arrival_s == 0.0);
	assert_int_equal(v[0].gpus, 4);
	assert_int_equal(v[0].batch, 0);
	assert_true(v[0].duration_s == 3600.0);
	assert_true(v[0].gpu_time_s == 14400.0);
	assert_string_equal(v[1].name, "bert-b");
	assert_true(v[1].arrival_s == 120.5);
	assert_int_equal(v[1].gpus, 8);
	assert_int_equal(v[1].batch, 1024);
	assert_string_equal(v[1].vc, "research");
	assert_string_equal(v[2].model, "vit");
	assert_int_equal(v[2].batch, 0);
	if (json) {
		assert_true(v[1].duration_s == 600.0);
		assert_true(v[1].gpu_time_s == 4000.0);
		assert_string_equal(v[1].status, "Pass");
		assert_string_equal(v[1].user, "alice");
		assert_true(v[2].duration_s == 0.0);
	} else {
		assert_true(v[1].duration_s == 0.0);
		assert_true(v[2].duration_s == 7200.0);
		assert_true(v[2].gpu_time_s == 14400.0);
		assert_string_equal(v[2].vc, "");
	}
}

static void test_jobspec_csv(void **state)
{
	struct hb_jobspec v[16];
	long n;

	(void)state;
	n = read_stream(fx("jobspec_good.csv"), HB_TRACE_AUTO, NULL, v, 16, NULL);
	check_jobspec_good(v, n, 0);
	n = read_stream(fx("jobspec_minimal.csv"), HB_TRACE_AUTO, NULL, v, 16, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(v[1].gpus, 1);
	assert_true(v[1].arrival_s == 5.0);
}

static void test_jobspec_csv_malformed(void **state)
{
	(void)state;
	expect_error("jobspec_missing_column.csv", HB_TRACE_JOBSPEC_CSV, NULL, ":1:", "missing column 'model'", NULL);
	expect_error("jobspec_unknown_column.csv", HB_TRACE_JOBSPEC_CSV, NULL, ":1:", "unknown column 'duraton_s'",
		     NULL);
	expect_error("jobspec_non_numeric.csv", HB_TRACE_JOBSPEC_CSV, NULL, ":3:", "field 'gpus'", "'four'");
	expect_error("jobspec_zero_gpus.csv", HB_TRACE_JOBSPEC_CSV, NULL, ":2:", "field 'gpus'", "out of range");
	expect_error("jobspec_long_name.csv", HB_TRACE_JOBSPEC_CSV, NULL, ":2:", "field 'name'", "longer than 63");
	expect_error("jobspec_unterminated_quote.csv", HB_TRACE_JOBSPEC_CSV, NULL, ":2:", "unterminated", NULL);
	expect_error("empty.csv", HB_TRACE_JOBSPEC_CSV, NULL, "empty file", NULL, NULL);
}

static void test_jobspec_json(void **state)
{
	struct hb_jobspec v[16];
	long n;

	(void)state;
	n = read_stream(fx("jobspec_good.json"), HB_TRACE_AUTO, NULL, v, 16, NULL);
	check_jobspec_good(v, n, 1);
	assert_int_equal(v[2].record, 3);
}

static void test_jobspec_json_malformed(void **state)
{
	(void)state;
	expect_error("jobspec_truncated.json", HB_TRACE_JOBSPEC_JSON, NULL, "truncated", "element 2", NULL);
	expect_error("jobspec_unclosed.json", HB_TRACE_JOBSPEC_JSON, NULL, "expected ','", "end of file", NULL);
	expect_error("jobspec_missing_jobs.json", HB_TRACE_JOBSPEC_JSON, NULL, "key 'jobs': missing", NULL, NULL);
	expect_error("jobspec_unknown_key.json", HB_TRACE_JOBSPEC_JSON, NULL, ":1: byte 1", "unknown key 'job'", NULL);
	expect_error("jobspec_wrong_type.json", HB_TRACE_JOBSPEC_JSON, NULL, ":3: byte", "element 2", "field 'gpus'");
	expect_error("jobspec_missing_field.json", HB_TRACE_JOBSPEC_JSON, NULL, "element 1", "field 'model'", NULL);
	expect_error("jobspec_unknown_job_key.json", HB_TRACE_JOBSPEC_JSON, NULL, "element 1", "duraton_s", NULL);
	expect_error("jobspec_twice.json", HB_TRACE_JOBSPEC_JSON, NULL, "'jobs' appears twice", NULL, NULL);
	expect_error("jobspec_fraction_gpus.json", HB_TRACE_JOBSPEC_JSON, NULL, "field 'gpus'", NULL, NULL);
	expect_error("empty.json", HB_TRACE_JOBSPEC_JSON, NULL, "expected '{'", "end of file", NULL);
}

/* ---- detection ---------------------------------------------------------- */

static void test_detect(void **state)
{
	static const struct {
		const char *file;
		enum hb_trace_format fmt;
	} cases[] = {
		{ "philly_log_good.json", HB_TRACE_PHILLY_LOG },
		{ "philly_log_empty_array.json", HB_TRACE_PHILLY_LOG },
		{ "philly_good.csv", HB_TRACE_PHILLY_CSV },
		{ "workload_good.csv", HB_TRACE_POLLUX_WORKLOAD },
		{ "jobspec_good.csv", HB_TRACE_JOBSPEC_CSV },
		{ "jobspec_good.json", HB_TRACE_JOBSPEC_JSON },
		{ "jobspec_missing_column.csv", HB_TRACE_JOBSPEC_CSV },
	};
	enum hb_trace_format f;
	struct hb_error err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (hb_trace_detect(fx(cases[i].file), &f, &err) < 0)
			fail_msg("%s: %s", cases[i].file, err.msg);
		assert_int_equal(f, cases[i].fmt);
	}
	assert_int_equal(hb_trace_detect(fx("empty.csv"), &f, &err), -1);
	assert_non_null(strstr(err.msg, "empty file"));
	assert_int_equal(hb_trace_detect(fx("machines_good.csv"), &f, &err), -1);
	assert_non_null(strstr(err.msg, "cluster_machine_list"));
	assert_int_equal(hb_trace_detect(fx("workload_missing_column.csv"), &f, &err), -1);
	assert_non_null(strstr(err.msg, ":1: cannot tell"));
	assert_int_equal(hb_trace_detect(fx("no-such-file.csv"), &f, &err), -1);
}

/* ---- machine list --------------------------------------------------------- */

static void test_machines(void **state)
{
	struct hb_catalog cat = { 0 };
	struct hb_philly_machines info;
	struct hb_error err = { 0 };
	const struct hb_cluster *c;
	cJSON *doc = NULL;
	char *text;

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	if (hb_philly_machines_to_cluster(&cat, fx("machines_good.csv"), "philly-machines", &doc, &info, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(info.machines, 4);
	assert_int_equal(info.gpus, 22);
	assert_int_equal(info.skipped, 1);
	assert_int_equal(info.gpus_12gb, 6);
	assert_int_equal(info.gpus_24gb, 16);
	text = cJSON_Print(doc);
	assert_non_null(text);
	if (hb_catalog_load_json(&cat, text, strlen(text), "machines", &err) < 0)
		fail_msg("round trip: %s", err.msg);
	free(text);
	cJSON_Delete(doc);
	c = hb_catalog_cluster(&cat, "philly-machines");
	assert_non_null(c);
	assert_int_equal(c->nnodes, 4);
	assert_int_equal(c->ngpus, 22);
	assert_string_equal(c->nodes[0].name, "m31");
	assert_string_equal(cat.gpus[c->nodes[0].gpu].name, "p40");
	assert_string_equal(c->nodes[2].name, "m100");
	assert_int_equal(c->nodes[2].ngpus, 2);
	assert_string_equal(cat.gpus[c->nodes[2].gpu].name, "p100");
	assert_string_equal(c->nodes[0].inter_link, hb_catalog_cluster(&cat, "philly")->nodes[0].inter_link);
	hb_catalog_free(&cat);
}

static void expect_machines_error(const char *file, const char *a, const char *b)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	cJSON *doc = NULL;

	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	assert_int_equal(hb_philly_machines_to_cluster(&cat, fx(file), "x", &doc, NULL, &err), -1);
	assert_null(doc);
	assert_int_equal(err.code, HB_EINPUT);
	if (!strstr(err.msg, file) || !strstr(err.msg, a) || (b && !strstr(err.msg, b)))
		fail_msg("%s: unexpected message: %s", file, err.msg);
	hb_catalog_free(&cat);
}

static void test_machines_malformed(void **state)
{
	(void)state;
	expect_machines_error("machines_bad_mem.csv", ":3:", "no catalog GPU for 16 GB");
	expect_machines_error("machines_duplicate.csv", ":4:", "'m31' already listed on line 2");
	expect_machines_error("machines_non_numeric.csv", ":2:", "'eight'");
	expect_machines_error("machines_bad_header.csv", ":1:", "expected 'machineId'");
	expect_machines_error("empty.csv", "no machine", NULL);
}

/* ---- bounded memory ------------------------------------------------------- */

/* A Philly-shaped log of n jobs, pretty-printed like the released file. */
static const char *write_big_log(const char *name, long n)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[\n", f);
	for (long i = 0; i < n; i++) {
		long s = 1506800000 + 60 * i;
		int gpus = 1 << (i % 4);

		fprintf(f,
			"    {\n        \"status\": \"%s\",\n        \"vc\": \"%06lx\",\n"
			"        \"jobid\": \"application_1506638472019_%ld\",\n        \"attempts\": [\n"
			"            {\n                \"start_time\": \"2017-10-%02ld %02ld:%02ld:00\",\n"
			"                \"end_time\": %s,\n                \"detail\": [\n"
			"                    {\"ip\": \"m%ld\", \"gpus\": [",
			i % 3 ? "Pass" : "Killed", (unsigned long)(i % 7), i, 1 + (s / 86400) % 28, (s / 3600) % 24,
			(s / 60) % 60, i % 1000 == 999 ? "None" : "\"2017-10-29 00:00:00\"", i % 500);
		for (int g = 0; g < gpus; g++)
			fprintf(f, "%s\"gpu%d\"", g ? ", " : "", g);
		fprintf(f, "]}\n                ]\n            }\n        ],\n"
			   "        \"submitted_time\": \"2017-10-%02ld %02ld:%02ld:00\",\n        \"user\": \"u%ld\"\n    }%s\n",
			1 + (s / 86400) % 28, (s / 3600) % 24, (s / 60) % 60, i % 100, i + 1 < n ? "," : "");
	}
	fputs("]\n", f);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void test_streaming_memory_bounded(void **state)
{
	struct hb_trace_options o;
	struct hb_trace_reader *r;
	struct hb_jobspec j;
	struct hb_error err = { 0 };
	struct hb_trace_stats small, big;
	long n = 0, gpus = 0;
	int rc;

	(void)state;
	hb_trace_options_init(&o);
	o.origin = HB_ORIGIN_FIRST;
	assert_int_equal(hb_trace_open(write_big_log("small.json", 1000), HB_TRACE_AUTO, &o, &r, &err), 0);
	while ((rc = hb_trace_next(r, &j, &err)) == 1)
		n++;
	assert_int_equal(rc, 0);
	small = *hb_trace_get_stats(r);
	hb_trace_close(r);
	assert_int_equal(n, 999);

	n = 0;
	assert_int_equal(hb_trace_open(write_big_log("big.json", 50000), HB_TRACE_AUTO, NULL, &r, &err), 0);
	while ((rc = hb_trace_next(r, &j, &err)) == 1) {
		n++;
		gpus += j.gpus;
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	big = *hb_trace_get_stats(r);
	hb_trace_close(r);
	assert_int_equal(n, 50000 - 50);
	assert_int_equal(big.records, 50000);
	assert_int_equal(big.skipped[HB_SKIP_RUNNING], 50);
	/* 1, 2, 4, 8 GPUs in turn; the 50 running jobs are the i % 1000 == 999
	 * ones, all with 8 GPUs. */
	assert_int_equal(gpus, 12500L * 15 - 50 * 8);
	/* One element (~600 bytes) at a time: the buffer holds one job, never
	 * the file (~33 MB), and does not grow with the number of jobs. */
	assert_true(big.max_buffer > 0);
	assert_true(big.max_buffer <= 4096);
	assert_int_equal(big.max_buffer, small.max_buffer);
}

/* ---- synthetic generator --------------------------------------------------- */

static long synth_all(const struct hb_synth_options *so, struct hb_jobspec **v)
{
	struct hb_trace_reader *r;
	struct hb_error err = { 0 };
	long n;

	if (hb_synth_open(so, NULL, &r, &err) < 0)
		fail_msg("%s", err.msg);
	if (hb_trace_drain(r, v, &n, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_trace_get_format(r), HB_TRACE_SYNTHETIC);
	hb_trace_close(r);
	return n;
}

static int same_jobs(const struct hb_jobspec *a, const struct hb_jobspec *b, long n)
{
	for (long i = 0; i < n; i++)
		if (a[i].arrival_s != b[i].arrival_s || a[i].gpus != b[i].gpus || a[i].duration_s != b[i].duration_s ||
		    strcmp(a[i].model, b[i].model) != 0 || strcmp(a[i].name, b[i].name) != 0)
			return 0;
	return 1;
}

static void test_synth_deterministic(void **state)
{
	struct hb_synth_options so;
	struct hb_jobspec *a, *b, *c;
	long na, nb, nc;

	(void)state;
	hb_synth_options_init(&so);
	so.seed = 42;
	so.window_s = 0;
	so.njobs = 500;
	na = synth_all(&so, &a);
	nb = synth_all(&so, &b);
	so.seed = 43;
	nc = synth_all(&so, &c);
	assert_int_equal(na, 500);
	assert_int_equal(nb, 500);
	assert_int_equal(nc, 500);
	assert_true(same_jobs(a, b, na));
	assert_false(same_jobs(a, c, na));
	for (long i = 0; i < na; i++) {
		assert_true(a[i].gpus >= 1 && a[i].gpus <= 128);
		/* Pollux's filter and its class -> model mix. */
		assert_true(a[i].duration_s >= 60.0);
		assert_true(a[i].gpu_time_s < 1000 * 3600.0);
		assert_true(a[i].gpu_time_s == a[i].gpus * a[i].duration_s);
		switch (hb_trace_size_class(a[i].gpu_time_s)) {
		case 0:
			assert_true(!strcmp(a[i].model, "cifar10") || !strcmp(a[i].model, "ncf"));
			break;
		case 1:
			assert_true(!strcmp(a[i].model, "deepspeech2") || !strcmp(a[i].model, "bert"));
			break;
		case 2:
			assert_string_equal(a[i].model, "yolov3");
			break;
		default:
			assert_string_equal(a[i].model, "imagenet");
		}
		if (i)
			assert_true(a[i].arrival_s > a[i - 1].arrival_s);
	}
	free(a);
	free(b);
	free(c);
}

/* Arrivals and sizes come from separate streams: a different load moves the
 * arrivals but the k-th job keeps its size and model. */
static void test_synth_streams_independent(void **state)
{
	struct hb_synth_options so;
	struct hb_jobspec *a, *b;
	long n;

	(void)state;
	hb_synth_options_init(&so);
	so.window_s = 0;
	so.njobs = 200;
	n = synth_all(&so, &a);
	so.load = 3.0;
	assert_int_equal(synth_all(&so, &b), n);
	for (long i = 0; i < n; i++) {
		assert_int_equal(a[i].gpus, b[i].gpus);
		assert_true(a[i].duration_s == b[i].duration_s);
		assert_string_equal(a[i].model, b[i].model);
		/* Same unit exponentials, rate x 3. */
		assert_true(fabs(b[i].arrival_s * 3.0 - a[i].arrival_s) < 1e-6 * (1 + a[i].arrival_s));
	}
	free(a);
	free(b);
}

static void test_synth_load_scales_count(void **state)
{
	struct hb_synth_options so;
	struct hb_jobspec *v;
	const double loads[] = { 0.5, 1.0, 2.0 };

	(void)state;
	/* Defaults: 20 jobs/h over Pollux's 8 h, about 160 jobs. */
	hb_synth_options_init(&so);
	{
		long n = synth_all(&so, &v);

		assert_true(labs(n - 160) < 64);
		free(v);
	}
	so.window_s = 100 * 3600.0;
	so.rate_per_hour = 60.0;
	so.mix[0] = '\0';
	for (int k = 0; k < 3; k++) {
		double expect = 60.0 * 100 * loads[k];
		long n;

		so.load = loads[k];
		n = synth_all(&so, &v);
		/* Poisson count: within 5 standard deviations. */
		if (fabs(n - expect) > 5 * sqrt(expect))
			fail_msg("load %g: %ld jobs, expected %g", loads[k], n, expect);
		assert_true(v[n - 1].arrival_s < so.window_s);
		assert_string_equal(v[0].model, "");
		free(v);
	}
}

static void test_synth_bursty(void **state)
{
	struct hb_synth_options so;
	struct hb_jobspec *v;
	long n, high = 0, low = 0;
	double expect;

	(void)state;
	hb_synth_options_init(&so);
	so.arrival = HB_SYNTH_BURSTY;
	so.njobs = 0;
	so.window_s = 40 * 3600.0;
	so.rate_per_hour = 400.0;
	so.load = 1.5;
	n = synth_all(&so, &v);
	/* 20 high hours at 600/h and 20 low ones at 150/h. */
	expect = 20 * 600.0 + 20 * 150.0;
	if (fabs(n - expect) > 5 * sqrt(expect))
		fail_msg("bursty: %ld jobs, expected %g", n, expect);
	for (long i = 0; i < n; i++) {
		if (fmod(v[i].arrival_s, 7200.0) < 3600.0)
			high++;
		else
			low++;
	}
	assert_true(fabs(high - 12000.0) < 5 * sqrt(12000.0));
	assert_true(fabs(low - 3000.0) < 5 * sqrt(3000.0));
	free(v);
}

static void test_synth_trace_arrivals(void **state)
{
	struct hb_synth_options so;
	struct hb_trace_reader *src;
	struct hb_jobspec *v;
	struct hb_error err = { 0 };
	long n;

	(void)state;
	hb_synth_options_init(&so);
	so.arrival = HB_SYNTH_TRACE;
	so.load = 2.0;
	hb_strlcpy(so.mix, "resnet50:3,vit:1", sizeof(so.mix));
	assert_int_equal(hb_trace_open(fx("workload_good.csv"), HB_TRACE_AUTO, NULL, &src, &err), 0);
	so.arrivals = src;
	n = synth_all(&so, &v);
	hb_trace_close(src);
	assert_int_equal(n, 5);
	assert_true(v[0].arrival_s == 107.0 / 2);
	assert_true(v[4].arrival_s == 300.0 / 2);
	for (long i = 0; i < n; i++)
		assert_true(!strcmp(v[i].model, "resnet50") || !strcmp(v[i].model, "vit"));
	free(v);

	/* The weighted list: 3:1 over many draws. */
	hb_synth_options_init(&so);
	so.window_s = 0;
	so.njobs = 8000;
	hb_strlcpy(so.mix, "resnet50:3,vit:1", sizeof(so.mix));
	n = synth_all(&so, &v);
	{
		long r50 = 0;

		for (long i = 0; i < n; i++)
			r50 += !strcmp(v[i].model, "resnet50");
		/* Binomial(8000, 3/4): sd 38.7. */
		assert_true(labs(r50 - 6000) < 194);
	}
	free(v);
}

static void test_synth_bad_options(void **state)
{
	struct hb_synth_options so;
	struct hb_trace_reader *r = NULL;
	struct hb_error err = { 0 };

	(void)state;
	hb_synth_options_init(&so);
	so.load = 0;
	assert_int_equal(hb_synth_open(&so, NULL, &r, &err), -1);
	assert_non_null(strstr(err.msg, "'load'"));
	hb_synth_options_init(&so);
	so.window_s = 0;
	assert_int_equal(hb_synth_open(&so, NULL, &r, &err), -1);
	hb_synth_options_init(&so);
	so.arrival = HB_SYNTH_TRACE;
	assert_int_equal(hb_synth_open(&so, NULL, &r, &err), -1);
	hb_synth_options_init(&so);
	so.arrival = HB_SYNTH_PHILLY_WINDOW;
	assert_int_equal(hb_synth_open(&so, NULL, &r, &err), -1);
	assert_non_null(strstr(err.msg, "philly_csv"));
	hb_synth_options_init(&so);
	hb_strlcpy(so.mix, "resnet50:-1", sizeof(so.mix));
	assert_int_equal(hb_synth_open(&so, NULL, &r, &err), -1);
	assert_non_null(strstr(err.msg, "'mix'"));
	assert_null(r);
}

/* Empirical sizes from a file; Pollux's window construction on a tiny file. */
static void test_synth_empirical(void **state)
{
	struct hb_synth_options so;
	struct hb_trace_reader *r = NULL;
	struct hb_jobspec *v;
	struct hb_error err = { 0 };
	long n;

	(void)state;
	hb_synth_options_init(&so);
	so.philly_csv = fx("philly_good.csv");
	so.window_s = 0;
	so.njobs = 300;
	n = synth_all(&so, &v);
	assert_int_equal(n, 300);
	for (long i = 0; i < n; i++) {
		/* The rows with GPUs all pass Pollux's filter (>= 60 s; the
		 * longest, 860662 s on 1 GPU, is 239 GPU-h < 1000). */
		assert_true(v[i].duration_s == 66.0 || v[i].duration_s == 2951.0 || v[i].duration_s == 2759.0 ||
			    v[i].duration_s == 7200.0 || v[i].duration_s == 860662.0);
	}
	free(v);

	/* Window: 06:00 to 07:30 of each day keeps the rows at 06:13:03,
	 * 06:13:36 and 07:01:55 (not 07:58:32, 08:00:00 or 00:00:00). */
	hb_synth_options_init(&so);
	so.arrival = HB_SYNTH_PHILLY_WINDOW;
	so.philly_csv = fx("philly_good.csv");
	so.window_start_h = 6;
	so.window_hours = 1.5;
	so.jobs_per_window = 1;
	so.load = 2;
	so.pollux_filter = 0;
	n = synth_all(&so, &v);
	assert_int_equal(n, 2);
	for (long i = 0; i < n; i++)
		assert_true(v[i].arrival_s == 783.0 || v[i].arrival_s == 816.0 || v[i].arrival_s == 3715.0);
	assert_true(v[0].arrival_s < v[1].arrival_s);
	free(v);
	so.load = 4;
	assert_int_equal(hb_synth_open(&so, NULL, &r, &err), -1);
	assert_non_null(strstr(err.msg, "holds 3 jobs"));
}

static int setup(void **state)
{
	const char *f = getenv("HB_FIXTURES");

	(void)state;
	snprintf(fixtures, sizeof(fixtures), "%s", f ? f : "tests/fixtures");
	snprintf(tmpdir, sizeof(tmpdir), "%s/hbtraceXXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/small.json", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/big.json", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_format_names),
		cmocka_unit_test(test_size_class_and_model),
		cmocka_unit_test(test_philly_log_first_attempt),
		cmocka_unit_test(test_philly_log_all_attempts),
		cmocka_unit_test(test_philly_log_origin),
		cmocka_unit_test(test_philly_log_filters),
		cmocka_unit_test(test_philly_log_bad_options),
		cmocka_unit_test(test_philly_log_malformed),
		cmocka_unit_test(test_reader_sticky_end_and_error),
		cmocka_unit_test(test_fuzz_regressions),
		cmocka_unit_test(test_philly_csv),
		cmocka_unit_test(test_philly_csv_malformed),
		cmocka_unit_test(test_pollux_workload),
		cmocka_unit_test(test_pollux_workload_malformed),
		cmocka_unit_test(test_jobspec_csv),
		cmocka_unit_test(test_jobspec_csv_malformed),
		cmocka_unit_test(test_jobspec_json),
		cmocka_unit_test(test_jobspec_json_malformed),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_machines),
		cmocka_unit_test(test_machines_malformed),
		cmocka_unit_test(test_streaming_memory_bounded),
		cmocka_unit_test(test_synth_deterministic),
		cmocka_unit_test(test_synth_streams_independent),
		cmocka_unit_test(test_synth_load_scales_count),
		cmocka_unit_test(test_synth_bursty),
		cmocka_unit_test(test_synth_trace_arrivals),
		cmocka_unit_test(test_synth_bad_options),
		cmocka_unit_test(test_synth_empirical),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
