/* Every file argument of `hetbatch` (issue 17 item 6): a directory or a
 * missing path where a file is expected exits 2 with one error line that
 * names the path and says "is a directory" or "no such file"; a write
 * error names the user's file, never the temporary beside it; standard
 * output that cannot be written is a failure, not exit 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "../cli_run.h"
#include "error.h"

static int setup(void **state)
{
	(void)state;
	if (cli_setup("fileargs") < 0)
		return -1;
	/* a directory and a file for the commands to be pointed at */
	char path[512];

	snprintf(path, sizeof(path), "%s/adir", tmpdir);
	return mkdir(path, 0777);
}

static int teardown(void **state)
{
	(void)state;
	return cli_teardown();
}

/* ARGS (with %s for the path) on PATH: exit 2, one line naming PATH and WANT. */
static void expect(const char *args_fmt, const char *path, const char *want)
{
	char args[1024], needle[512];
	size_t len;
	char *e;

	snprintf(args, sizeof(args), args_fmt, path);
	if (run("%s", args) != 2)
		fail_msg("'%s' should exit 2; stderr: %s", args, slurp(errf, &len));
	e = slurp(errf, &len);
	snprintf(needle, sizeof(needle), "%s: %s", path, want);
	if (!strstr(e, needle))
		fail_msg("'%s': stderr lacks '%s': %s", args, needle, e);
	free(e);
}

static const char *const file_args[] = {
	"sim --cluster pollux-t4 --trace %s",
	"sim --cluster pollux-t4 --trace %s --format philly-log",
	"sim --cluster pollux-t4 --trace %s --format jobspec-json",
	"sim --cluster pollux-t4 --trace %s --format pollux-workload",
	"sim --cluster %s --model resnet50",
	"sim --cluster jabas-a --model %s",
	"sim --cluster jabas-a --model resnet50 --replay %s",
	"sim --cluster jabas-a --model resnet50 --db %s",
	"plan --cluster jabas-a --model resnet50 --gbs 512 --db %s",
	"sweep %s",
	"forecast %s",
	"live --plan %s",
	NULL,
};

static void test_directory_is_a_directory(void **state)
{
	(void)state;
	for (int i = 0; file_args[i]; i++)
		expect(file_args[i], "adir", "is a directory");
}

static void test_missing_path_is_no_such_file(void **state)
{
	(void)state;
	for (int i = 0; file_args[i]; i++) {
		/* --db of a reader: its own message says which database is missing */
		if (strstr(file_args[i], "--db"))
			continue;
		/* a bare word is looked up as a catalog name first */
		expect(file_args[i], strstr(file_args[i], "--cluster %s") || strstr(file_args[i], "--model %s")
					     ? "nodir/missing.json"
					     : "missing.csv",
		       "no such file");
	}
}

/* Binary data where text is expected (/dev/zero, issue 16 item 6) is an
 * input error found at its first byte, not "empty file", not a read that
 * fills memory (sweep, import nccl-tests and live --plan read until killed). */
static void test_binary_data_is_an_error(void **state)
{
	static const char *const text_args[] = {
		"sim --cluster %s --model resnet50",
		"sim --cluster jabas-a --model %s",
		"sim --cluster pollux-t4 --trace %s",
		"sim --cluster jabas-a --model resnet50 --replay %s",
		"plan --cluster jabas-a --model resnet50 --autoscale %s",
		"sweep %s",
		"forecast %s",
		"import nccl-tests %s --link nvlink2 --db z.db",
		"live --plan %s",
		NULL,
	};

	(void)state;
	for (int i = 0; text_args[i]; i++) {
		char args[512];
		size_t len;
		char *e;

		snprintf(args, sizeof(args), text_args[i], "/dev/zero");
		assert_int_equal(run("%s", args), 2);
		e = slurp(errf, &len);
		if (!strstr(e, "/dev/zero") || !strstr(e, "NUL byte"))
			fail_msg("'%s': stderr does not name the file and the NUL byte: %s", args, e);
		free(e);
	}
}

/* The message of a failure on a temporary names the user's path. */
static void test_errors_name_the_users_path(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	hb_runtime_error(&err, "runs/a/results.db.tmp.77: database or disk is full");
	hb_error_at_path(&err, "runs/a/results.db.tmp.77", "runs/a/results.db");
	assert_string_equal(err.msg, "runs/a/results.db: database or disk is full");
	hb_runtime_error(&err, "disk I/O error");
	hb_error_at_path(&err, "x.tmp.1", "x");
	assert_string_equal(err.msg, "x: disk I/O error");
}

static void test_stdout_write_failure_is_an_error(void **state)
{
	char cmd[1024];
	int st;
	size_t len;
	char *e;

	(void)state;
	snprintf(cmd, sizeof(cmd), "'%s' catalog models >/dev/full 2>'%s'", exe, errf);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	e = slurp(errf, &len);
	assert_non_null(strstr(e, "writing standard output failed"));
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directory_is_a_directory),
		cmocka_unit_test(test_missing_path_is_no_such_file),
		cmocka_unit_test(test_binary_data_is_an_error),
		cmocka_unit_test(test_errors_name_the_users_path),
		cmocka_unit_test(test_stdout_write_failure_is_an_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
