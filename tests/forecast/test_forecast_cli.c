/* `hetbatch forecast` on the fixture files in tests/fixtures/forecast: table
 * and JSON output, scoring, determinism under --seed, and one-line errors
 * with exit status 2 for broken files.  Needs $HETBATCH and $HB_FIXTURES. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

static const char *hetbatch, *fixtures;
static char tmpdir[256];
static char out[1 << 16], err[1 << 12];

static void slurp(const char *name, char *buf, size_t size)
{
	char path[512];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/* Run `hetbatch ARGS` inside the fixture directory; returns the exit status. */
static int run(const char *args)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s >'%s/out' 2>'%s/err'", fixtures, hetbatch, args, tmpdir,
		 tmpdir);
	st = system(cmd);
	slurp("out", out, sizeof(out));
	slurp("err", err, sizeof(err));
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static cJSON *run_json(const char *args)
{
	cJSON *root;

	assert_int_equal(run(args), 0);
	root = cJSON_Parse(out);
	if (!root)
		fail_msg("not JSON: %.200s", out);
	return root;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("missing number '%s'", key);
	return v->valuedouble;
}

static const cJSON *method(const cJSON *root, const char *name)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "methods"))
		if (strcmp(cJSON_GetObjectItemCaseSensitive(m, "name")->valuestring, name) == 0)
			return m;
	fail_msg("no method '%s'", name);
	return NULL;
}

static int setup(void **state)
{
	static char fx[512];

	(void)state;
	hetbatch = getenv("HETBATCH");
	fixtures = getenv("HB_FIXTURES");
	if (!hetbatch || !fixtures)
		return -1;
	snprintf(tmpdir, sizeof(tmpdir), "%s/hb-forecast-cli-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(fx, sizeof(fx), "%s/forecast", fixtures);
	fixtures = fx;
	return 0;
}

/* Files the tests write into tmpdir. */
static const char *const scratch[] = { "long_line.csv", "bom.csv", NULL };

/* Write tmpdir/name: head, then fill bytes of c (0: none), then tail. */
static void write_scratch(const char *name, const char *head, size_t fill, char c, const char *tail)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	fputs(head, f);
	for (size_t i = 0; i < fill; i++)
		fputc(c, f);
	fputs(tail, f);
	assert_int_equal(fclose(f), 0);
}

static int teardown(void **state)
{
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/out", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/err", tmpdir);
	unlink(path);
	for (const char *const *f = scratch; *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, *f);
		unlink(path);
	}
	rmdir(tmpdir);
	return 0;
}

static void test_table_prints_every_method_and_its_error(void **state)
{
	const char *names[] = { "actual", "ensemble", "gpr", "ses", "holt", "last" };
	char *header, *mape;
	int rows = 0;

	(void)state;
	assert_int_equal(run("forecast traj_epochs.csv"), 0);
	assert_string_equal(err, "");
	header = strstr(out, "      step");
	assert_non_null(header);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		assert_non_null(strstr(header, names[k]));
	mape = strstr(out, "MAPE %");
	assert_non_null(mape);
	/* seven rows of the last epoch (steps 3300..3900) between header and MAPE */
	for (char *p = strchr(header, '\n') + 1; p < mape; p = strchr(p, '\n') + 1)
		rows++;
	assert_int_equal(rows, 7);
	assert_non_null(strstr(out, "from step 3200"));
}

static void check_scored(const cJSON *root, size_t nexpect)
{
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
	const cJSON *actual = cJSON_GetObjectItemCaseSensitive(root, "actual");
	const cJSON *m;
	const size_t n = (size_t)cJSON_GetArraySize(steps);

	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "scored")));
	assert_int_equal(n, nexpect);
	assert_int_equal(cJSON_GetArraySize(actual), n);
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "methods")) {
		const cJSON *pred = cJSON_GetObjectItemCaseSensitive(m, "predictions");
		double s = 0.0;

		assert_int_equal(cJSON_GetArraySize(pred), n);
		/* MAPE recomputed here from the printed numbers */
		for (size_t j = 0; j < n; j++) {
			double a = cJSON_GetArrayItem(actual, (int)j)->valuedouble;

			s += fabs(cJSON_GetArrayItem(pred, (int)j)->valuedouble - a) / a;
		}
		assert_true(fabs(num(m, "mape_pct") - 100.0 * s / (double)n) <= 1e-9);
	}
	for (size_t j = 0; j < n; j++) {
		double e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(method(root, "ensemble"), "predictions"), (int)j)->valuedouble;
		double g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(method(root, "gpr"), "predictions"), (int)j)->valuedouble;
		double s = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(method(root, "ses"), "predictions"), (int)j)->valuedouble;
		double l = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(method(root, "last"), "predictions"), (int)j)->valuedouble;
		double l0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(method(root, "last"), "predictions"), 0)->valuedouble;

		assert_true(fabs(e - 0.5 * (g + s)) <= 1e-9 * e);
		assert_true(l == l0);
	}
}

static void test_json_scores_the_last_epoch(void **state)
{
	cJSON *root;

	(void)state;
	root = run_json("forecast traj_epochs.csv --json");
	/* default origin: the last row of the next-to-last epoch */
	assert_true(num(root, "origin") == 3200.0);
	assert_true(num(root, "history_points") == 32.0);
	assert_true(num(root, "epoch_start_step") == 2500.0);
	assert_true(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "steps"), 0)->valuedouble == 3300.0);
	check_scored(root, 7);
	/* last = B_G at the origin (fixture row "3200,2,608") */
	assert_true(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(method(root, "last"), "predictions"), 0)->valuedouble == 608.0);
	cJSON_Delete(root);
}

static void test_file_without_epochs_splits_at_two_thirds(void **state)
{
	cJSON *root;

	(void)state;
	root = run_json("forecast traj_plain.csv --json");
	assert_true(num(root, "origin") == 2000.0); /* row 20 of 30 */
	check_scored(root, 10);
	cJSON_Delete(root);
	/* --epoch-steps derives epochs: step s is in epoch floor((s-1)/N) */
	root = run_json("forecast traj_plain.csv --epoch-steps 1200 --json");
	assert_true(num(root, "origin") == 2400.0);
	assert_true(num(root, "epoch_start_step") == 1300.0);
	check_scored(root, 6);
	cJSON_Delete(root);
}

static void test_predictions_only_at_the_end_of_the_file(void **state)
{
	cJSON *root;
	const cJSON *steps, *m;

	(void)state;
	root = run_json("forecast traj_epochs.csv --origin 3900 --method ensemble,last --json");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "scored")));
	assert_null(cJSON_GetObjectItemCaseSensitive(root, "actual"));
	steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
	/* horizon = the current epoch's span, 3900 - 3200: points 4000..4600 */
	assert_int_equal(cJSON_GetArraySize(steps), 7);
	for (int j = 0; j < 7; j++)
		assert_true(cJSON_GetArrayItem(steps, j)->valuedouble == 4000.0 + 100.0 * j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "methods")), 2);
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "methods"))
		assert_null(cJSON_GetObjectItemCaseSensitive(m, "mape_pct"));
	cJSON_Delete(root);
	/* --epoch-steps sets the horizon: floor(N / P) points */
	root = run_json("forecast traj_epochs.csv --origin 3900 --epoch-steps 1250 --method last --json");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "steps")), 12);
	cJSON_Delete(root);
	assert_int_equal(run("forecast traj_epochs.csv --origin 3900"), 0);
	assert_non_null(strstr(out, "ends at the origin"));
	assert_null(strstr(out, "MAPE"));
}

static void test_same_seed_same_output(void **state)
{
	static char first[sizeof(out)];
	cJSON *root;

	(void)state;
	assert_int_equal(run("--seed 9 forecast traj_epochs.csv --json"), 0);
	memcpy(first, out, sizeof(out));
	assert_int_equal(run("forecast traj_epochs.csv --json --seed 9"), 0);
	assert_string_equal(first, out);
	root = cJSON_Parse(out);
	assert_non_null(root);
	assert_true(num(root, "seed") == 9.0);
	cJSON_Delete(root);
}

static void test_broken_files_fail_with_one_line(void **state)
{
	static const struct {
		const char *file;
		const char *want;
	} cases[] = {
		{ "bad_nonmonotone.csv", "bad_nonmonotone.csv:5: field 'step': value '300'" },
		{ "bad_nonpositive.csv", "bad_nonpositive.csv:4: field 'global_batch': value '0' must be > 0" },
		{ "bad_missing_column.csv", "bad_missing_column.csv:1: missing column 'global_batch'" },
		{ "bad_not_number.csv", "bad_not_number.csv:3: field 'global_batch': value 'lots'" },
		{ "bad_epoch_decreasing.csv", "bad_epoch_decreasing.csv:4: field 'epoch'" },
		{ "bad_empty.csv", "bad_empty.csv: no data rows" },
		{ "no_such_file.csv", "no_such_file.csv: no such file" },
		/* a directory exits 2 like every other input error (issue 17 item 6) */
		{ ".", ".: is a directory" },
		/* binary data is not "empty" and is not read to the end */
		{ "/dev/zero", "/dev/zero:1: binary data (NUL byte)" },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char args[256];
		const char *nl;

		snprintf(args, sizeof(args), "forecast %s", cases[k].file);
		assert_int_equal(run(args), 2);
		assert_string_equal(out, "");
		if (!strstr(err, cases[k].want))
			fail_msg("%s: stderr '%s' lacks '%s'", cases[k].file, err, cases[k].want);
		nl = strchr(err, '\n');
		assert_non_null(nl);
		assert_int_equal(nl[1], '\0'); /* exactly one line */
	}
}

/* A line over the CSV reader's 1 MiB limit fails at once, naming the file
 * and the line (a 1 GB line used to take 2 GB of memory). */
static void test_long_line_is_an_error_naming_the_line(void **state)
{
	char args[512], want[512];

	(void)state;
	write_scratch("long_line.csv", "step,global_batch\n100,256\n200,", (size_t)2 << 20, '7', "\n300,256\n");
	snprintf(args, sizeof(args), "forecast '%s/long_line.csv'", tmpdir);
	assert_int_equal(run(args), 2);
	snprintf(want, sizeof(want), "%s/long_line.csv:3: line longer than 1048576 bytes", tmpdir);
	if (!strstr(err, want))
		fail_msg("stderr '%s' lacks '%s'", err, want);
}

/* A UTF-8 byte-order mark before the header is accepted: the same
 * forecast as without it. */
static void test_byte_order_mark_is_accepted(void **state)
{
	char args[512], *plain, path[512];
	FILE *f;
	char body[1 << 14];
	size_t n;
	cJSON *a, *b;

	(void)state;
	snprintf(path, sizeof(path), "%s/traj_plain.csv", fixtures);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(body, 1, sizeof(body) - 1, f);
	fclose(f);
	body[n] = '\0';
	write_scratch("bom.csv", "\xEF\xBB\xBF", 0, 0, body);
	a = run_json("forecast traj_plain.csv --json");
	snprintf(args, sizeof(args), "forecast '%s/bom.csv' --json", tmpdir);
	b = run_json(args);
	plain = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(a, "methods"));
	{
		char *bom = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(b, "methods"));

		assert_string_equal(bom, plain);
		free(bom);
	}
	free(plain);
	cJSON_Delete(a);
	cJSON_Delete(b);
}

static void test_usage_errors(void **state)
{
	const char *bad[] = {
		"forecast traj_epochs.csv --method ensemble,arima",
		"forecast traj_epochs.csv --interval 0",
		"forecast traj_epochs.csv --origin 50",
		"forecast traj_epochs.csv --gpr-x minutes",
		"forecast",
		"forecast a.csv b.csv",
	};

	(void)state;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		if (run(bad[k]) != 2)
			fail_msg("'%s' should exit 2 (stderr: %s)", bad[k], err);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(run("forecast --help"), 0);
	assert_non_null(strstr(out, "usage: hetbatch forecast"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_prints_every_method_and_its_error),
		cmocka_unit_test(test_json_scores_the_last_epoch),
		cmocka_unit_test(test_file_without_epochs_splits_at_two_thirds),
		cmocka_unit_test(test_predictions_only_at_the_end_of_the_file),
		cmocka_unit_test(test_same_seed_same_output),
		cmocka_unit_test(test_broken_files_fail_with_one_line),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_long_line_is_an_error_naming_the_line),
		cmocka_unit_test(test_byte_order_mark_is_accepted),
	};

	if (!getenv("HETBATCH") || !getenv("HB_FIXTURES")) {
		fprintf(stderr, "HETBATCH or HB_FIXTURES not set; skipping\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
