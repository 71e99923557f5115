/* `hetbatch profile allreduce` in one process ($HETBATCH): the cpu backend
 * fills allreduce rows with N = 1 and no fit and says where multi-GPU curves
 * come from; bad values are usage errors (exit 2) naming the value and
 * write nothing; --backend cuda without a GPU is exit 1 "no CUDA device". */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "allreduce.h"
#include "../cli_run.h"
#include "profdb.h"

static struct hb_profdb *open_db(const char *name)
{
	char path[600];
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (hb_profdb_open(path, 1, &db, &err) < 0)
		fail_msg("%s", err.msg);
	return db;
}

static void assert_contains(const char *file, const char *what)
{
	char *text = slurp(file, NULL);

	if (!strstr(text, what))
		fail_msg("expected '%s' in:\n%s", what, text);
	free(text);
}

static void test_one_process(void **state)
{
	struct hb_profdb *db;
	struct hb_allreduce_row *rows;
	struct hb_allreduce_fit fit;
	struct hb_error err = { 0 };
	int n, found = -1, rc;
	long count;

	(void)state;
	rc = run("profile allreduce --backend cpu --sizes 1,2 --iters 3 --db tmp.db");
	if (rc != 0)
		fail_msg("exit %d: %s", rc, slurp(errf, NULL));
	assert_contains(outf, "no Eq. 3 fit");
	assert_contains(outf, "Multi-GPU curves come from a multi-GPU host (mpirun -np N");
	assert_contains(outf, "hetbatch import nccl-tests");
	assert_contains(outf, "1048576");
	db = open_db("tmp.db");
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "none", &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++) {
		assert_int_equal(rows[i].n_gpus, 1);
		assert_string_equal(rows[i].source, "cpu");
		assert_true(rows[i].bytes == (i + 1) * 1048576.0);
		assert_true(rows[i].time_s > 0);
		assert_true(rows[i].run_id > 0);
	}
	free(rows);
	assert_int_equal(hb_profdb_count(db, "allreduce_fit", &count, &err), 0);
	assert_int_equal(count, 0);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "intra", "none", &fit, &found, &err), 0);
	assert_int_equal(found, 0);
	assert_int_equal(hb_profdb_count(db, "run", &count, &err), 0);
	assert_int_equal(count, 1);
	hb_profdb_close(db);

	/* again, under a named link, as JSON: the same table, one more run */
	rc = run("profile allreduce --backend cpu --sizes 64K,1 --iters 2 --warmup 0 --link pcie3-x16 --db tmp.db "
		 "--json");
	if (rc != 0)
		fail_msg("exit %d: %s", rc, slurp(errf, NULL));
	assert_contains(outf, "\"link\":\t\"pcie3-x16\"");
	assert_contains(outf, "\"fit\":\tnull");
	db = open_db("tmp.db");
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "pcie3-x16", &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(rows[0].bytes == 65536);
	free(rows);
	assert_int_equal(hb_profdb_count(db, "allreduce", &count, &err), 0);
	assert_int_equal(count, 4);
	hb_profdb_close(db);
}

static void test_usage_errors(void **state)
{
	static const struct {
		const char *args, *says;
	} bad[] = {
		{ "--backend cpu --sizes 0", "--sizes: value '0'" },
		{ "--backend cpu --sizes abc", "--sizes: value 'abc'" },
		{ "--backend cpu --sizes 1,1", "given twice" },
		{ "--backend nope", "--backend: value 'nope'" },
		{ "--sizes 1", "--backend cpu|cuda is required" },
		{ "--backend cpu --link nvlink", "--link: value 'nvlink'" },
		{ "--backend cpu --link nvlink", "--bandwidth" },
		{ "--backend cpu --bandwidth fast", "--bandwidth: value 'fast'" },
		{ "--backend cpu --bandwidth 10", "--bandwidth: value '10'" },
		{ "--backend cpu --iters 0", "--iters: value '0'" },
		{ "--backend cpu --warmup -1", "--warmup: value '-1'" },
		{ "--backend cpu --cluster nowhere", "'nowhere'" },
		{ "--backend cpu --cluster easyscale", "nvlink2" },
		{ "--backend cpu --link shm-test --cluster jabas-a", "give one" },
		{ "--backend cpu stray", "unexpected argument 'stray'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = run("profile allreduce %s --db bad.db", bad[i].args);

		if (rc != 2)
			fail_msg("'%s': exit %d, expected 2; stderr: %s", bad[i].args, rc, slurp(errf, NULL));
		assert_contains(errf, bad[i].says);
		assert_false(exists_in(".", "bad.db"));
	}
}

static void test_cuda_without_gpu(void **state)
{
	char why[256];
	int rc;

	(void)state;
	if (hb_allreduce_cuda_devices(why, sizeof(why)) > 0)
		skip();  /* this machine has a GPU */
	rc = run("profile allreduce --backend cuda --sizes 1 --db cuda.db");
	if (rc != 1)
		fail_msg("exit %d, expected 1; stderr: %s", rc, slurp(errf, NULL));
	assert_contains(errf, "no CUDA device");
	assert_false(exists_in(".", "cuda.db"));
}

static void test_help(void **state)
{
	(void)state;
	assert_int_equal(run("profile allreduce --help"), 0);
	assert_contains(outf, "mpirun --oversubscribe -np 2 hetbatch profile allreduce --backend cpu --sizes 1,5,10");
	assert_contains(outf, "busbw");
}

static int setup(void **state)
{
	(void)state;
	if (cli_setup("allreduce") < 0)
		return -1;
	/* no launcher variables: this is the one-process path */
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("PMI_SIZE");
	unsetenv("PMIX_RANK");
	/* Not wired yet into `hetbatch profile`?  Say what is missing. */
	if (run("profile allreduce --help") != 0) {
		fprintf(stderr, "'hetbatch profile allreduce' is not reachable: cli/profile.c must hand argv to "
			"cmd_profile_allreduce (declared in cli/cli.h) when argv[1] is \"allreduce\"\n");
		return -1;
	}
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
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_one_process),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_cuda_without_gpu),
	};

	if (!getenv("HETBATCH")) {
		fprintf(stderr, "HETBATCH is not set (run through meson test): skipped\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
