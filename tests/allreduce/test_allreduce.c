/* The all-reduce sweep's library parts (profiler/allreduce.h): the size list,
 * nccl-tests' bandwidths, a one-process cpu sweep, the database write (rows
 * replaced per source, the Eq. 3 fit only with N >= 2), the catalog's link
 * classes, and the cuda backend's "no CUDA device" on a machine without one. */
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

#include "allreduce.h"
#include "catalog.h"
#include "profdb.h"
#include "strutil.h"

#define MIB HB_AR_MIB

static char tmpdir[256];
static struct hb_catalog cat;

static struct hb_profdb *fresh_db(const char *name)
{
	char path[512];
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0);
	return db;
}

/* ---- sizes ---- */

static void test_jabas_sizes(void **state)
{
	double b[HB_AR_MAX_SIZES];
	static const int mib[] = { 1, 5, 10, 15, 20, 25, 50, 100, 150 };

	(void)state;
	assert_int_equal(hb_allreduce_jabas_sizes(b, HB_AR_MAX_SIZES), 9);
	for (int i = 0; i < 9; i++)
		assert_true(b[i] == mib[i] * 1048576.0);
}

static void test_parse_sizes(void **state)
{
	double b[HB_AR_MAX_SIZES];
	struct hb_error err = { 0 };
	int n;

	(void)state;
	assert_int_equal(hb_allreduce_parse_sizes("10, 1,5", b, HB_AR_MAX_SIZES, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_true(b[0] == MIB && b[1] == 5 * MIB && b[2] == 10 * MIB);
	assert_int_equal(hb_allreduce_parse_sizes("1G,64K,1.5M,4096B,0.25", b, HB_AR_MAX_SIZES, &n, &err), 0);
	assert_int_equal(n, 5);
	assert_true(b[0] == 4096 && b[1] == 65536 && b[2] == MIB / 4 && b[3] == 1.5 * MIB && b[4] == 1024 * MIB);
}

static void test_parse_sizes_errors(void **state)
{
	static const struct {
		const char *list, *says;
	} bad[] = {
		{ "0", "value '0' must be > 0" },
		{ "-1", "value '-1' must be > 0" },
		{ "abc", "value 'abc' is not a size" },
		{ "5X", "value '5X' is not a size" },
		{ "M", "value 'M' is not a size" },
		{ "3B", "not a whole number of float32 elements" },
		{ "1e-7", "not a whole number of float32 elements" },
		{ "1,1", "given twice" },
		{ "1M,1", "given twice" },
		{ "1,,2", "empty item" },
		{ "", "value ''" },
		{ "9G", "above the largest tensor" },
	};
	double b[HB_AR_MAX_SIZES];
	int n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hb_error err = { 0 };

		assert_int_equal(hb_allreduce_parse_sizes(bad[i].list, b, HB_AR_MAX_SIZES, &n, &err), -1);
		assert_int_equal(err.code, HB_EINPUT);
		if (!strstr(err.msg, bad[i].says))
			fail_msg("'%s': expected '%s' in: %s", bad[i].list, bad[i].says, err.msg);
		assert_int_equal(n, 0);
	}
}

/* ---- bandwidths: nccl-tests' definitions ---- */

static void test_point(void **state)
{
	struct hb_ar_point p;

	(void)state;
	hb_allreduce_point(8 * MIB, 2e-3, 4, &p);
	assert_int_equal(p.count, 2 * 1048576);
	assert_true(fabs(p.algbw - 8 * MIB / 2e-3) < 1e-6);
	assert_true(fabs(p.busbw - p.algbw * 1.5) < 1e-6);  /* 2(n-1)/n at n = 4 */
	hb_allreduce_point(MIB, 1e-3, 1, &p);
	assert_true(p.busbw == 0);
}

/* ---- a one-process sweep (no mpirun: a team of one, MPI untouched) ---- */

static void test_cpu_sweep_one_rank(void **state)
{
	const double sizes[] = { MIB, 2 * MIB };
	struct hb_ar_config cfg = { .backend = "cpu", .bytes = sizes, .nsizes = 2, .warmup = 1, .iters = 3 };
	struct hb_ar_team t;
	struct hb_ar_result *r = calloc(1, sizeof(*r));
	struct hb_error err = { 0 };

	(void)state;
	assert_non_null(r);
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("PMI_SIZE");
	unsetenv("PMIX_RANK");
	assert_int_equal(hb_ar_team_start(&t, NULL, NULL, &err), 0);
	assert_int_equal(t.mpi, 0);
	assert_int_equal(t.size, 1);
	assert_string_equal(hb_ar_team_scope(&t), "intra");
	assert_int_equal(hb_allreduce_sweep(&t, &cfg, r, &err), 0);
	assert_string_equal(r->scope, "intra");
	assert_string_equal(r->source, "cpu");
	assert_string_equal(r->run.kind, "profile");
	assert_string_equal(r->run.backend, "cpu");
	assert_true(r->run.host[0] && r->run.device[0] && r->run.started_at[0]);
	assert_int_equal(r->n_gpus, 1);
	assert_int_equal(r->npoints, 2);
	for (int i = 0; i < 2; i++) {
		assert_true(r->points[i].bytes == sizes[i]);
		assert_true(r->points[i].time_s > 0 && r->points[i].time_s < 1);
	}
	/* a bad configuration is an input error before anything runs */
	cfg.iters = 0;
	assert_int_equal(hb_allreduce_sweep(&t, &cfg, r, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	hb_ar_team_end(&t);
	free(r);
}

/* A team of one agrees with itself and keeps its own message. */
static void test_agree_alone(void **state)
{
	struct hb_ar_team t;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_ar_team_start(&t, NULL, NULL, &err), 0);
	assert_int_equal(hb_ar_team_agree(&t, 0, &err), 0);
	hb_runtime_error(&err, "boom");
	assert_int_equal(hb_ar_team_agree(&t, -1, &err), -1);
	assert_string_equal(err.msg, "boom");
	hb_ar_team_end(&t);
}

/* ---- the database ---- */

/* A result as the sweep leaves it: time_ms = alpha x_ms + beta exactly. */
static void fake_result(struct hb_ar_result *r, const char *source, int n, double k, double alpha, double beta,
			int npoints)
{
	memset(r, 0, sizeof(*r));
	hb_strlcpy(r->scope, "intra", sizeof(r->scope));
	hb_strlcpy(r->source, source, sizeof(r->source));
	hb_strlcpy(r->method, "test", sizeof(r->method));
	hb_strlcpy(r->run.kind, "profile", sizeof(r->run.kind));
	hb_strlcpy(r->run.backend, "cpu", sizeof(r->run.backend));
	r->n_gpus = n;
	r->nhosts = 1;
	r->npoints = npoints;
	for (int i = 0; i < npoints; i++) {
		double bytes = (i + 1) * 4 * MIB;
		double x_ms = bytes * 4.0 * (n - 1) / n / k * 1000.0;

		hb_allreduce_point(bytes, (alpha * x_ms + beta) / 1000.0, n, &r->points[i]);
	}
}

static void test_store_fit(void **state)
{
	struct hb_profdb *db = fresh_db("fit.db");
	struct hb_ar_result *r = calloc(1, sizeof(*r));
	struct hb_allreduce_fit fit, got;
	struct hb_allreduce_row *rows;
	struct hb_error err = { 0 };
	int fitted = -1, found, n;
	int64_t run_id = 0;
	long runs;

	(void)state;
	assert_non_null(r);
	fake_result(r, "cpu", 2, 10e9, 1.7, 0.25, 4);
	assert_int_equal(hb_allreduce_store(db, r, "shm-test", 10e9, &fit, &fitted, &run_id, &err), 0);
	assert_int_equal(fitted, 1);
	assert_true(run_id > 0);
	assert_true(fabs(fit.alpha - 1.7) < 1e-9 && fabs(fit.beta - 0.25) < 1e-9 && fabs(fit.r2 - 1) < 1e-9);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "intra", "shm-test", &got, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(got.source, "cpu");
	assert_true(got.bandwidth == 10e9 && fabs(got.alpha - 1.7) < 1e-9);
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "shm-test", &rows, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].n_gpus, 2);
	assert_true(rows[0].run_id == run_id);
	free(rows);

	/* a new sweep of the same source replaces the rows; another source's stay */
	fake_result(r, "events", 2, 10e9, 1.0, 0.1, 3);
	assert_int_equal(hb_allreduce_store(db, r, "shm-test", 10e9, &fit, &fitted, NULL, &err), 0);
	fake_result(r, "cpu", 2, 10e9, 2.0, 0.5, 2);
	assert_int_equal(hb_allreduce_store(db, r, "shm-test", 10e9, &fit, &fitted, NULL, &err), 0);
	assert_true(fabs(fit.alpha - 2.0) < 1e-9 && fabs(fit.beta - 0.5) < 1e-9);
	{
		long total;

		assert_int_equal(hb_profdb_count(db, "allreduce", &total, &err), 0);
		assert_int_equal(total, 2 + 3);
	}
	assert_int_equal(hb_profdb_count(db, "run", &runs, &err), 0);
	assert_int_equal(runs, 3);
	hb_profdb_close(db);
	free(r);
}

/* N = 1: rows, no fit (the theoretical time is 0 for every size). */
static void test_store_one_gpu(void **state)
{
	struct hb_profdb *db = fresh_db("one.db");
	struct hb_ar_result *r = calloc(1, sizeof(*r));
	struct hb_allreduce_fit fit;
	struct hb_error err = { 0 };
	int fitted = -1, found = -1;
	long count;

	(void)state;
	assert_non_null(r);
	fake_result(r, "cpu", 1, 10e9, 1.0, 0.01, 3);
	assert_int_equal(hb_allreduce_store(db, r, "none", 0, &fit, &fitted, NULL, &err), 0);
	assert_int_equal(fitted, 0);
	assert_int_equal(hb_profdb_count(db, "allreduce", &count, &err), 0);
	assert_int_equal(count, 3);
	assert_int_equal(hb_profdb_count(db, "allreduce_fit", &count, &err), 0);
	assert_int_equal(count, 0);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "intra", "none", &fit, &found, &err), 0);
	assert_int_equal(found, 0);
	/* a failed write leaves nothing behind: no link name */
	assert_int_equal(hb_allreduce_store(db, r, "", 0, &fit, &fitted, NULL, &err), -1);
	assert_int_equal(hb_profdb_count(db, "run", &count, &err), 0);
	assert_int_equal(count, 1);
	hb_profdb_close(db);
	free(r);
}

/* ---- links ---- */

static void test_catalog_links(void **state)
{
	struct hb_error err = { 0 };
	double bw = 0;
	int intra = -1, inter = -1;
	char names[1024];
	const struct hb_cluster *cl;
	char link[64];

	(void)state;
	assert_int_equal(hb_allreduce_catalog_link(&cat, "pcie3-x16", &bw, &intra, &inter, &err), 1);
	assert_true(bw == 15.75e9);
	assert_true(intra == 1 && inter == 0);
	assert_int_equal(hb_allreduce_catalog_link(&cat, "ib-100g", &bw, &intra, &inter, &err), 1);
	assert_true(bw == 12.5e9);
	assert_true(intra == 0 && inter == 1);
	assert_int_equal(hb_allreduce_catalog_link(&cat, "nvlink", &bw, NULL, NULL, &err), 0);
	hb_allreduce_catalog_links(&cat, names, sizeof(names));
	assert_non_null(strstr(names, "pcie3-x16, "));
	assert_non_null(strstr(names, "ib-56g"));
	{
		/* each once, as a whole item ("ffdl-pcie3-x16" is another link) */
		int count = 0;

		for (char *tok = strtok(names, ","); tok; tok = strtok(NULL, ","))
			count += strcmp(tok + (*tok == ' '), "pcie3-x16") == 0;
		assert_int_equal(count, 1);
	}

	assert_non_null(cl = hb_catalog_cluster(&cat, "jabas-a"));
	assert_int_equal(hb_allreduce_cluster_link(cl, "intra", link, sizeof(link), &bw, &err), 0);
	assert_string_equal(link, "pcie3-x16");
	assert_true(bw == 15.75e9);
	assert_non_null(cl = hb_catalog_cluster(&cat, "easyscale"));
	assert_int_equal(hb_allreduce_cluster_link(cl, "inter", link, sizeof(link), &bw, &err), 0);
	assert_string_equal(link, "eth-25g");
	/* its nodes have NVLink and PCIe inside: the command must be told which */
	assert_int_equal(hb_allreduce_cluster_link(cl, "intra", link, sizeof(link), &bw, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "nvlink2"));
}

/* ---- cuda ---- */

static void test_cuda_devices(void **state)
{
	char why[256] = "";
	int n = hb_allreduce_cuda_devices(why, sizeof(why));

	(void)state;
	if (n > 0)
		skip();  /* a GPU machine: tests/allreduce_cli runs the real thing */
	assert_int_equal(n, 0);
	assert_true(strncmp(why, "no CUDA device", 14) == 0);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-allreduce-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return hb_catalog_load_builtin(&cat, &err);
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	hb_catalog_free(&cat);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jabas_sizes),
		cmocka_unit_test(test_parse_sizes),
		cmocka_unit_test(test_parse_sizes_errors),
		cmocka_unit_test(test_point),
		cmocka_unit_test(test_cpu_sweep_one_rank),
		cmocka_unit_test(test_agree_alone),
		cmocka_unit_test(test_store_fit),
		cmocka_unit_test(test_store_one_gpu),
		cmocka_unit_test(test_catalog_links),
		cmocka_unit_test(test_cuda_devices),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
