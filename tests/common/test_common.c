/* Unit tests for common/: RNG streams, strict parsing, CSV and JSON errors,
 * atomic files. */
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

#include "csv.h"
#include "fileio.h"
#include "json.h"
#include "rng.h"
#include "strutil.h"

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text)
{
	static char path[512];
	struct hb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_int_equal(hb_write_file_atomic(path, text, strlen(text), &err), 0);
	return path;
}

static void test_rng_deterministic_and_streams_differ(void **state)
{
	struct hb_rng a, b, c;
	int same = 0;

	(void)state;
	hb_rng_seed(&a, 42, HB_STREAM_ARRIVALS);
	hb_rng_seed(&b, 42, HB_STREAM_ARRIVALS);
	hb_rng_seed(&c, 42, HB_STREAM_SIMILARITY);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = hb_rng_u64(&a), y = hb_rng_u64(&b), z = hb_rng_u64(&c);

		assert_true(x == y);
		same += x == z;
	}
	assert_int_equal(same, 0);
}

/* hb_rng_skip(n) leaves the generator where n calls of hb_rng_u64 do. */
static void test_rng_skip_matches_draws(void **state)
{
	static const long counts[] = { 0, 1, 2, 3, 17, 1000 };

	(void)state;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		struct hb_rng a, b;

		hb_rng_seed(&a, 42, 3);
		b = a;
		for (long k = 0; k < counts[i]; k++)
			(void)hb_rng_u64(&a);
		hb_rng_skip(&b, counts[i]);
		assert_memory_equal(a.s, b.s, sizeof(a.s));
		assert_int_equal(hb_rng_u64(&a), hb_rng_u64(&b));
	}
	{
		struct hb_rng a, b;

		hb_rng_seed(&a, 42, 3);
		b = a;
		hb_rng_skip(&b, -5); /* nothing */
		assert_memory_equal(a.s, b.s, sizeof(a.s));
	}
}

static void test_rng_moments(void **state)
{
	struct hb_rng r;
	double s = 0, s2 = 0, e = 0, u = 0;
	const int n = 200000;

	(void)state;
	hb_rng_seed(&r, 7, 0);
	for (int i = 0; i < n; i++) {
		double x = hb_rng_normal(&r);

		s += x;
		s2 += x * x;
		e += hb_rng_exponential(&r, 2.0);
		u += hb_rng_uniform(&r);
	}
	/* Standard errors: mean 1/sqrt(n) ~ 0.0022; use 5 sigma. */
	assert_true(fabs(s / n) < 0.012);
	assert_true(fabs(s2 / n - 1.0) < 0.02);
	assert_true(fabs(e / n - 0.5) < 0.006);
	assert_true(fabs(u / n - 0.5) < 0.004);
	for (int i = 0; i < 10000; i++)
		assert_true(hb_rng_below(&r, 7) < 7);
}

static void test_strict_parsing(void **state)
{
	double d;
	long l;

	(void)state;
	assert_int_equal(hb_parse_double(" 1.5e3 ", &d), 0);
	assert_true(d == 1500.0);
	assert_int_equal(hb_parse_double("12abc", &d), -1);
	assert_int_equal(hb_parse_double("", &d), -1);
	assert_int_equal(hb_parse_double("nan", &d), -1);
	assert_int_equal(hb_parse_double("1e999", &d), -1);
	assert_int_equal(hb_parse_long("42", &l), 0);
	assert_int_equal(l, 42);
	assert_int_equal(hb_parse_long("4.2", &l), -1);
	assert_int_equal(hb_parse_long_range("9", 1, 8, &l), -1);
}

static void test_split_list(void **state)
{
	char buf[] = "v100, p100 ,t4";
	char bad[] = "a,,b";
	char *items[4];

	(void)state;
	assert_int_equal(hb_split_list(buf, items, 4), 3);
	assert_string_equal(items[1], "p100");
	assert_int_equal(hb_split_list(bad, items, 4), -1);
}

/* ISO 8601 UTC, 20 characters; a buffer too small gets "", never a cut or
 * indeterminate text. */
static void test_utc_iso_now(void **state)
{
	char t[32], small[20];
	int y, mo, d, h, mi, sec;
	char z = 0;

	(void)state;
	memset(t, 'x', sizeof(t));
	hb_utc_iso_now(t, sizeof(t));
	assert_int_equal(strlen(t), 20);
	assert_int_equal(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z), 7);
	assert_true(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && sec <= 60);
	assert_int_equal(z, 'Z');
	memset(small, 'x', sizeof(small));
	hb_utc_iso_now(small, sizeof(small));
	assert_string_equal(small, "");
}

static void test_csv_reads_quoted_and_reports_lines(void **state)
{
	struct hb_csv c;
	struct hb_error err = { 0 };
	static const char *const cols[] = { "b", "a", NULL };
	int idx[2];
	const char *s;
	double d;
	long l;

	(void)state;
	assert_int_equal(hb_csv_open(&c, write_tmp("ok.csv", "a,b\r\n1,\"x,\"\"y\"\"\"\n\n2.5,z\n"), &err), 0);
	assert_int_equal(hb_csv_header(&c, cols, idx, &err), 0);
	assert_int_equal(idx[0], 1);
	assert_int_equal(hb_csv_next(&c, &err), 1);
	assert_int_equal(hb_csv_str(&c, idx[0], &s, &err), 0);
	assert_string_equal(s, "x,\"y\"");
	assert_int_equal(hb_csv_long(&c, idx[1], &l, &err), 0);
	assert_int_equal(hb_csv_next(&c, &err), 1);
	assert_int_equal(c.line, 4);
	assert_int_equal(hb_csv_long(&c, idx[1], &l, &err), -1);
	assert_non_null(strstr(err.msg, ":4: field 'a': value '2.5' is not an integer"));
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_csv_double(&c, idx[1], &d, &err), 0);
	assert_int_equal(hb_csv_next(&c, &err), 0);
	hb_csv_close(&c);

	assert_int_equal(hb_csv_open(&c, write_tmp("bad.csv", "a,b\n1,\"open\n"), &err), 0);
	assert_int_equal(hb_csv_header(&c, cols, idx, &err), 0);
	assert_int_equal(hb_csv_next(&c, &err), -1);
	assert_non_null(strstr(err.msg, ":2: unterminated quoted field"));
	hb_csv_close(&c);

	assert_int_equal(hb_csv_open(&c, write_tmp("nohdr.csv", "a,c\n"), &err), 0);
	assert_int_equal(hb_csv_header(&c, cols, idx, &err), -1);
	assert_non_null(strstr(err.msg, "missing column 'b'"));
	hb_csv_close(&c);
}

static void test_json_errors_name_line_and_field(void **state)
{
	struct hb_error err = { 0 };
	const char *text = "{\n  \"a\": 1,\n  \"b\": ,\n}";
	cJSON *root = hb_json_parse(text, strlen(text), "x.json", &err);
	double d;
	long l;
	static const char *const allowed[] = { "a", "s", NULL };

	(void)state;
	assert_null(root);
	assert_non_null(strstr(err.msg, "x.json:3:"));

	root = hb_json_parse("{\"a\": 1.5, \"s\": \"\", \"t\": 1}", 28, "y.json", &err);
	assert_non_null(root);
	assert_int_equal(hb_json_num(root, "a", "y.json: obj", 0, 1, &d, &err), -1);
	assert_non_null(strstr(err.msg, "y.json: obj: field 'a': value 1.5 out of range"));
	assert_int_equal(hb_json_int(root, "a", "y.json: obj", 0, 10, &l, &err), -1);
	assert_int_equal(hb_json_num(root, "missing", "w", 0, 1, &d, &err), -1);
	assert_non_null(strstr(err.msg, "field 'missing': missing"));
	assert_int_equal(hb_json_num_opt(root, "missing", "w", 0, 1, 0.25, &d, &err), 0);
	assert_true(d == 0.25);
	assert_int_equal(hb_json_check_keys(root, "w", allowed, &err), -1);
	assert_non_null(strstr(err.msg, "unknown field 't'"));
	cJSON_Delete(root);
	root = hb_json_parse("{} x", 4, "z.json", &err);
	assert_null(root);
}

static void test_atomic_abort_leaves_nothing(void **state)
{
	struct hb_atomic_file af;
	struct hb_error err = { 0 };
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/atomic.txt", tmpdir);
	assert_int_equal(hb_atomic_open(&af, path, &err), 0);
	fputs("partial", af.f);
	hb_atomic_abort(&af);
	assert_false(hb_path_exists(path));
	assert_false(hb_path_exists(af.tmp));
}

/* A symbolic link at the temporary's name (this process's PID) is refused
 * by name, its target untouched; a plain file there (a dead writer that
 * had our PID) is unlinked, not written into (it may be a hard link). */
static void test_atomic_never_through_a_link(void **state)
{
	struct hb_atomic_file af;
	struct hb_error err = { 0 };
	char path[512], tmp[600], victim[512], *text = NULL;
	size_t len;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/linked.txt", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	snprintf(victim, sizeof(victim), "%s/victim.txt", tmpdir);
	assert_non_null(f = fopen(victim, "w"));
	fputs("victim", f);
	fclose(f);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(hb_atomic_open(&af, path, &err), -1);
	assert_non_null(strstr(err.msg, "is a symbolic link"));
	assert_int_equal(hb_write_file_atomic(path, "x", 1, &err), -1);
	assert_int_equal(unlink(tmp), 0);
	assert_int_equal(link(victim, tmp), 0);
	assert_int_equal(hb_write_file_atomic(path, "result", 6, &err), 0);
	assert_int_equal(hb_read_file(victim, &text, &len, &err), 0);
	assert_string_equal(text, "victim");
	free(text);
	assert_int_equal(hb_read_file(path, &text, &len, &err), 0);
	assert_string_equal(text, "result");
	free(text);
	assert_false(hb_path_exists(tmp));
	unlink(path);
	unlink(victim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng_deterministic_and_streams_differ),
		cmocka_unit_test(test_utc_iso_now),
		cmocka_unit_test(test_rng_skip_matches_draws),
		cmocka_unit_test(test_rng_moments),
		cmocka_unit_test(test_strict_parsing),
		cmocka_unit_test(test_split_list),
		cmocka_unit_test(test_csv_reads_quoted_and_reports_lines),
		cmocka_unit_test(test_json_errors_name_line_and_field),
		cmocka_unit_test(test_atomic_abort_leaves_nothing),
		cmocka_unit_test(test_atomic_never_through_a_link),
	};
	int rc;
	char cmd[300];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-common-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return rc;
}
