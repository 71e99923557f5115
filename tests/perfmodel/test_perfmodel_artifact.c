/* The JABAS artifact's ResNet-50 quick-start files, loaded through the
 * importer and the profile database (hb_perf_load): the model reproduces
 * the artifact's predictions and the solver its experiment E1 output.
 * Skipped (exit 77) when ../shared is absent. */
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
#include "fileio.h"
#include "iidp.h"
#include "import.h"
#include "perfmodel.h"
#include "profdb.h"

static char dir[1024];
static char tmpdir[256];

struct fx {
	struct hb_catalog cat;
	struct hb_profdb *db;
	struct hb_perf p;
};

static int setup(void **state)
{
	static struct fx f;
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	const struct hb_cluster *cl;
	const struct hb_model *m;
	char path[512];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-perfmodel-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/profiles.db", tmpdir);
	if (hb_catalog_load_builtin(&f.cat, &err) != 0 || hb_profdb_open(path, 0, &f.db, &err) != 0 ||
	    hb_import_jabas(f.db, &f.cat, dir, &st, &err) != 0 ||
	    !(cl = hb_catalog_cluster(&f.cat, "jabas-quickstart")) || !(m = hb_catalog_model(&f.cat, "resnet50")) ||
	    hb_perf_load(f.db, &f.cat, cl, m, NULL, &f.p, &err) != 0) {
		print_error("setup: %s\n", err.msg);
		return -1;
	}
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char path[512];

	hb_perf_free(&f->p);
	hb_profdb_close(f->db);
	hb_catalog_free(&f->cat);
	snprintf(path, sizeof(path), "%s/profiles.db", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/profiles.db-wal", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/profiles.db-shm", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return 0;
}

static void assert_abs(double got, double want, double tol)
{
	if (fabs(got - want) > tol) {
		print_error("got %.6f, want %.6f (abs. tolerance %g)\n", got, want, tol);
		fail();
	}
}

static int node_of(const struct hb_perf *p, const char *name)
{
	for (int i = 0; i < p->nnodes; i++)
		if (strcmp(p->nodes[i].name, name) == 0)
			return i;
	return -1;
}

/* Numbers from the artifact's own formula on the full-precision files
 * (notes §2.2, evaluated independently): V100 0.1133/0.2070/0.2957 s,
 * P100 0.1694/0.3189/0.4636/0.6053 s; fits 0.1238 ln n + 1.0 and
 * 0.0779 ln n + 1.0097; all-reduce fits as in notes §2.3. */
static void test_loaded_model(void **state)
{
	struct fx *f = *state;
	const struct hb_perf *p = &f->p;
	static const double v_want[] = { 0.1133, 0.2070, 0.2957 };
	static const double p_want[] = { 0.1694, 0.3189, 0.4636, 0.6053 };
	int n0 = node_of(p, "node0"), n1 = node_of(p, "node1"), alloc[2] = { 0, 0 };
	const struct hb_perf_lbs *l;
	struct hb_error err = { 0 };
	double t;

	assert_int_equal(p->nnodes, 2);
	assert_true(n0 >= 0 && n1 >= 0);
	assert_string_equal(p->gpus[p->nodes[n0].gpu].name, "v100");
	assert_string_equal(p->gpus[p->nodes[n1].gpu].name, "p100");
	assert_int_equal(p->sync, HB_SYNC_OWS);
	assert_int_equal(p->artifact_rounding, 1); /* every row is import:jabas */
	assert_int_equal(p->nbuckets, 5);
	assert_true(p->nodes[n0].intra.have);
	assert_abs(p->nodes[n0].intra.alpha, 1.417, 0.001);
	assert_abs(p->nodes[n0].intra.beta_ms, 1.209, 0.001);
	assert_true(p->nodes[n0].inter.have);
	assert_abs(p->nodes[n0].inter.alpha, 0.716, 0.001);
	assert_abs(p->nodes[n0].inter.beta_ms, 3.948, 0.001);

	l = hb_perf_find_lbs(p, p->nodes[n0].gpu, 32);
	assert_non_null(l);
	assert_int_equal(l->n_max, 3);
	assert_abs(l->a, 0.1238, 0.0005);
	assert_abs(l->b, 1.0, 0.0005);
	l = hb_perf_find_lbs(p, p->nodes[n1].gpu, 32);
	assert_non_null(l);
	assert_int_equal(l->n_max, 4);
	assert_abs(l->a, 0.0779, 0.0005);
	assert_abs(l->b, 1.0097, 0.0005);
	assert_int_equal(hb_perf_max_lbs(p, p->nodes[n0].gpu), 128);
	assert_int_equal(hb_perf_max_lbs(p, p->nodes[n1].gpu), 160);

	alloc[n0] = 4;
	for (int n = 1; n <= 3; n++) {
		assert_int_equal(hb_perf_iter_time(p, alloc, n0, 32, n, 0, &t, &err), 0);
		assert_abs(t, v_want[n - 1], 0.0001);
	}
	alloc[n0] = 0;
	alloc[n1] = 4;
	for (int n = 1; n <= 4; n++) {
		assert_int_equal(hb_perf_iter_time(p, alloc, n1, 32, n, 0, &t, &err), 0);
		assert_abs(t, p_want[n - 1], 0.0001);
	}
}

/* Experiment E1: `configuration_solver -gbs 128` prints
 * "GBS: 128 | LBS: 32 | weight sync method: overlap | config:
 * ['node0:4GPU,VSW:1,GA:0']": the best allocation (pairs of GPUs, every
 * subset) is the V100 node alone. */
static void test_e1(void **state)
{
	struct fx *f = *state;
	struct hb_iidp_solver *s;
	struct hb_iidp_result r, best = { 0 };
	struct hb_error err = { 0 };
	char line[512];

	assert_int_equal(hb_iidp_solver_new(&f->p, &s, &err), 0);
	for (int a = 0; a <= 4; a += 2) {
		for (int b = 0; b <= 4; b += 2) {
			int alloc[2] = { a, b };
			struct hb_iidp_request req = { alloc, 128, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
			if (a + b == 0)
				continue;
			assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
			if (r.found && r.throughput > best.throughput) {
				hb_iidp_result_free(&best);
				best = r;
			} else {
				hb_iidp_result_free(&r);
			}
		}
	}
	assert_true(best.found);
	assert_int_equal(hb_iidp_format_line(&f->p, &best, line, sizeof(line)), 0);
	assert_string_equal(line, "GBS: 128 | LBS: 32 | weight sync method: overlap | config: ['node0:4GPU,VSW:1,GA:0']");
	assert_abs(best.throughput, 128 / 0.1133, 2.0);
	hb_iidp_result_free(&best);
	hb_iidp_solver_free(s);
}

/* A cluster with a GPU type the database has no profile for: the loader
 * names the GPU, the model and the database. */
static void test_missing_profile(void **state)
{
	struct fx *f = *state;
	const struct hb_cluster *cl = hb_catalog_cluster(&f->cat, "demo");
	const struct hb_model *m = hb_catalog_model(&f->cat, "resnet50");
	struct hb_perf p;
	struct hb_error err = { 0 };

	assert_non_null(cl);
	assert_int_equal(hb_perf_load(f->db, &f->cat, cl, m, NULL, &p, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "'t4'"));
	assert_non_null(strstr(err.msg, "resnet50"));
	assert_non_null(strstr(err.msg, "profiles.db"));
}

int main(void)
{
	const char *shared = getenv("HB_SHARED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loaded_model),
		cmocka_unit_test(test_e1),
		cmocka_unit_test(test_missing_profile),
	};

	if (!shared)
		return 77;
	snprintf(dir, sizeof(dir), "%s/data/jabas/resnet50-quickstart", shared);
	if (!hb_path_exists(dir))
		return 77;
	return cmocka_run_group_tests(tests, setup, teardown);
}
