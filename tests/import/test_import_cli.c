/* `hetbatch import` as a user runs it ($HETBATCH): exit status 0/2, a
 * report on stdout, and exactly one stderr line for a bad input, with the
 * database left as it was. */
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

#include "profdb.h"

static char tmpdir[256];
static char db[512], out[512], errf[512];
static const char *exe, *fixtures;

/* Run `hetbatch import ARGS --db db`, stdout/stderr to files; exit status. */
static int run(const char *args)
{
	char cmd[4096];
	int st;

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' import %s --db '%s' >'%s' 2>'%s'", fixtures, exe, args, db, out,
		 errf);
	st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Lines in a file, and its text (truncated) in buf. */
static int lines(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;
	int k = 0;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		k += buf[i] == '\n';
	return k;
}

static long rows(const char *table)
{
	struct hb_profdb *p;
	struct hb_error err = { 0 };
	long n = -1;

	assert_int_equal(hb_profdb_open(db, 1, &p, &err), 0);
	assert_int_equal(hb_profdb_count(p, table, &n, &err), 0);
	hb_profdb_close(p);
	return n;
}

static void test_good_imports(void **state)
{
	char buf[8192];

	(void)state;
	unlink(db);
	assert_int_equal(run("pollux pollux/good"), 0);
	lines(out, buf, sizeof(buf));
	assert_non_null(strstr(buf, "placement"));
	assert_non_null(strstr(buf, "6 rows"));
	lines(errf, buf, sizeof(buf));
	assert_non_null(strstr(buf, "warning: "));
	assert_int_equal(run("jabas jabas/good"), 0);
	lines(out, buf, sizeof(buf));
	assert_non_null(strstr(buf, "fit intra pcie3-x16: t_ms = 1.5000 * x_ms + 1.0000"));
	assert_int_equal(run("nccl-tests nccl/allreduce-2node.json --link ib-200g"), 0);
	assert_int_equal(run("-q nccl-tests --gpus 8 --scope intra nccl/allreduce-8gpu.txt --link nvlink4"), 0);
	assert_int_equal(lines(errf, buf, sizeof(buf)), 0);
	assert_int_equal(rows("placement"), 6);
	assert_int_equal(rows("allreduce"), 8 + 3 + 4);
}

static void test_bad_inputs_one_line_exit_2(void **state)
{
	static const char *const bad[] = {
		"pollux pollux/negative-time",
		"pollux pollux/missing-column",
		"jabas jabas/missing-key",
		"jabas jabas/truncated-json",
		"jabas jabas/bad-comm",
		"nccl-tests nccl/broken-wrong.txt --link nvlink4",
		"nccl-tests nccl/broken-short-line.txt --link nvlink4",
		"nccl-tests nccl/broken-nwrong.json --link nvlink4",
		"nccl-tests nccl/broken-empty.txt --link nvlink4",
		"pollux no/such/dir",
	};
	char buf[8192];
	long before;

	(void)state;
	unlink(db);
	assert_int_equal(run("pollux pollux/good"), 0);
	before = rows("placement");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = run(bad[i]), n = lines(errf, buf, sizeof(buf));

		if (rc != 2 || n != 1 || strncmp(buf, "hetbatch: error: ", 17) != 0)
			fail_msg("'%s': exit %d, %d stderr lines: %s", bad[i], rc, n, buf);
		assert_int_equal(rows("placement"), before);
		assert_int_equal(rows("run"), 1);
	}
}

static void test_usage(void **state)
{
	char buf[8192];

	(void)state;
	assert_int_equal(run("--help"), 0);
	lines(out, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Examples:"));
	assert_int_equal(run("mystery dir"), 2);
	assert_int_equal(run("pollux"), 2);
	assert_int_equal(run("nccl-tests nccl/allreduce-8gpu.txt"), 2);  /* no --link */
	assert_int_equal(run("pollux pollux/good --link x"), 2);
	assert_int_equal(run("nccl-tests nccl/allreduce-8gpu.txt --link x --scope both"), 2);
	assert_int_equal(run("nccl-tests nccl/allreduce-8gpu.txt --link x --gpus one"), 2);
	assert_int_equal(run("pollux pollux/good --frobnicate"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_imports),
		cmocka_unit_test(test_bad_inputs_one_line_exit_2),
		cmocka_unit_test(test_usage),
	};
	char cmd[300];
	int rc;

	exe = getenv("HETBATCH");
	fixtures = getenv("HB_FIXTURES");
	if (!exe || !fixtures) {
		fprintf(stderr, "HETBATCH and HB_FIXTURES must be set\n");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-import-cli-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(db, sizeof(db), "%s/profiles.db", tmpdir);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(errf, sizeof(errf), "%s/stderr", tmpdir);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return rc;
}
