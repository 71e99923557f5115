/* `hetbatch profile` as a user runs it ($HETBATCH): --analytic is required,
 * names are checked before anything is written, the report is on stdout,
 * --show prints the summary, --default-db builds the cache ($HETBATCH_CACHE). */
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

#include "analytic.h"
#include "fileio.h"
#include "profdb.h"

static char tmpdir[256];
static char db[512], out[512], errf[512];
static const char *exe;

/* Run `hetbatch ARGS` in tmpdir, stdout/stderr to files; exit status. */
static int run(const char *args)
{
	char cmd[4096];
	int st;

	snprintf(cmd, sizeof(cmd), "cd '%s' && HETBATCH_CACHE='%s/cache' '%s' %s >'%s' 2>'%s'", tmpdir, tmpdir, exe,
		 args, out, errf);
	st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
}

static long rows(const char *path, const char *table)
{
	struct hb_profdb *p;
	struct hb_error err = { 0 };
	long n = -1;

	assert_int_equal(hb_profdb_open(path, 1, &p, &err), 0);
	assert_int_equal(hb_profdb_count(p, table, &n, &err), 0);
	hb_profdb_close(p);
	return n;
}

static void test_mode_required(void **state)
{
	static char buf[65536];

	(void)state;
	assert_int_equal(run("profile --db x.db"), 2);
	slurp(errf, buf, sizeof(buf));
	assert_non_null(strstr(buf, "--analytic"));
	assert_null(strstr(buf, "not built"));
	assert_int_equal(run("profile --help"), 0);
	slurp(out, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Examples:"));
	assert_non_null(strstr(buf, "--analytic"));
	assert_int_equal(run("help profile"), 0);
	assert_int_equal(run("profile --analytic --bogus"), 2);
	assert_int_equal(run("profile --analytic extra"), 2);
	assert_int_equal(run("profile --analytic --default-db --db y.db"), 2);
}

static void test_unknown_names_write_nothing(void **state)
{
	static char buf[65536];

	(void)state;
	unlink(db);
	assert_int_equal(run("profile --analytic --db p.db --gpus v100,no-such-gpu"), 2);
	slurp(errf, buf, sizeof(buf));
	assert_non_null(strstr(buf, "no-such-gpu"));
	assert_int_equal(run("profile --analytic --db p.db --models nope"), 2);
	assert_false(hb_path_exists(db));
}

static void test_selection_and_show(void **state)
{
	static char buf[65536];

	(void)state;
	unlink(db);
	assert_int_equal(run("-q profile --analytic --db p.db --gpus v100,p100 --models resnet50 --show"), 0);
	slurp(out, buf, sizeof(buf));
	/* V100 3+2+1+1 and P100 4+2+1+1+1 compute rows (the artifact's n_max tables) */
	assert_non_null(strstr(buf, "p.db: 16 compute, 11 memory, 5 bucket and"));
	assert_non_null(strstr(buf, "for 2 GPUs x 1 model "));
	assert_non_null(strstr(buf, "v100             resnet50"));
	assert_non_null(strstr(buf, "pcie3-x16"));
	assert_int_equal(rows(db, "compute"), 16);
	assert_int_equal(rows(db, "memory"), 11);
	slurp(errf, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

static void test_default_db(void **state)
{
	static char buf[65536];
	char path[600];

	(void)state;
	assert_int_equal(run("profile --analytic --default-db"), 0);
	slurp(out, buf, sizeof(buf));
	snprintf(path, sizeof(path), "%s/cache/profiles-analytic-v%d.db", tmpdir, HB_ANALYTIC_VERSION);
	assert_non_null(strstr(buf, path));
	assert_true(rows(path, "compute") > 10000);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_required),
		cmocka_unit_test(test_unknown_names_write_nothing),
		cmocka_unit_test(test_selection_and_show),
		cmocka_unit_test(test_default_db),
	};
	char cmd[600];
	int rc;

	exe = getenv("HETBATCH");
	if (!exe || !*exe) {
		fprintf(stderr, "HETBATCH is not set: skipped\n");
		return 77;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-profile-cli-%ld", (long)getpid());
	snprintf(db, sizeof(db), "%s/p.db", tmpdir);
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	snprintf(errf, sizeof(errf), "%s/err", tmpdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", tmpdir);
	if (system(cmd) != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
