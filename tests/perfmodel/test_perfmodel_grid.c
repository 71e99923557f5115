/* solver/perfmodel.c: a profile measured off the minB_L grid (Pollux's
 * sqrt(2) steps) is interpolated linearly onto multiples of minB_L between
 * its points, so DDP can realise a requested batch; an on-grid profile is
 * left exactly as measured.  Built on a temporary database with cifar10
 * (minB_L 32) on the T4 nodes of pollux-t4. */
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
#include "ddp.h"
#include "perfmodel.h"
#include "profdb.h"
#include "strutil.h"

struct pt {
	int lbs;
	double total_s;
};

/* One row per B_L at 1 VSW, times as Pollux records them (total only). */
static void load(const struct pt *pts, int n, struct hb_catalog *cat, struct hb_perf *p)
{
	char path[] = "/tmp/hb-grid-XXXXXX";
	struct hb_error err = { 0 };
	struct hb_profdb *db = NULL;
	const struct hb_cluster *cl = hb_catalog_cluster(cat, "pollux-t4");
	const struct hb_model *m = hb_catalog_model(cat, "cifar10");
	int fd = mkstemp(path);

	assert_true(fd >= 0 && cl && m);
	close(fd);
	unlink(path);
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0);
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	for (int i = 0; i < n; i++) {
		struct hb_compute_row r;

		memset(&r, 0, sizeof(r));
		hb_strlcpy(r.gpu, "t4", sizeof(r.gpu));
		hb_strlcpy(r.model, "cifar10", sizeof(r.model));
		hb_strlcpy(r.source, "import:pollux", sizeof(r.source));
		r.local_bs = pts[i].lbs;
		r.n_vsw = 1;
		r.total_s = pts[i].total_s;
		assert_int_equal(hb_profdb_put_compute(db, &r, &err), 0);
	}
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	if (hb_perf_load(db, cat, cl, m, NULL, p, &err) != 0)
		fail_msg("%s", err.msg);
	hb_profdb_close(db);
	unlink(path);
}

static double fb1(const struct hb_perf *p, int lbs)
{
	const struct hb_perf_lbs *l = hb_perf_find_lbs(p, 0, lbs);

	assert_non_null(l);
	return l->pts[0].fwd_s + l->pts[0].bwd_s;
}

static void test_off_grid_is_interpolated(void **state)
{
	static const struct pt pts[] = { { 32, 0.020 }, { 45, 0.026 }, { 64, 0.035 }, { 91, 0.047 },
					 { 129, 0.066 }, { 182, 0.090 }, { 257, 0.127 } };
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	struct hb_perf p;
	struct hb_ddp_result r;
	int alloc[16] = { 0 }, *lbs = NULL, nl = 0;

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	load(pts, 7, &cat, &p);
	/* Measured points stay; 96 lies between 91 and 129, 256 between 182 and 257. */
	assert_float_equal(fb1(&p, 64), 0.035, 1e-12);
	assert_float_equal(fb1(&p, 96), 0.047 + (96.0 - 91) / (129 - 91) * (0.066 - 0.047), 1e-12);
	assert_float_equal(fb1(&p, 256), 0.090 + (256.0 - 182) / (257 - 182) * (0.127 - 0.090), 1e-12);
	assert_null(hb_perf_find_lbs(&p, 0, 288)); /* nothing beyond the last point */
	/* Every multiple of 32 in [32, 256] is a candidate now. */
	alloc[0] = 1;
	assert_int_equal(hb_perf_alloc_lbs(&p, alloc, &lbs, &nl, &err), 0);
	assert_int_equal(nl, 8);
	assert_int_equal(lbs[nl - 1], 256);
	free(lbs);
	/* A requested B_G 256 on one GPU is realised (without the grid: 64, the
	 * nearest multiple of 32 that was measured). */
	if (hb_ddp_plan(&p, alloc, 256, &r, &err) != 0)
		fail_msg("%s", err.msg);
	assert_true(r.found);
	assert_int_equal(r.global_bs, 256);
	assert_int_equal(r.local_bs, 256);
	hb_perf_free(&p);
	hb_catalog_free(&cat);
}

static void test_on_grid_is_kept(void **state)
{
	static const struct pt pts[] = { { 32, 0.020 }, { 64, 0.035 }, { 128, 0.066 } };
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	struct hb_perf p;

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	load(pts, 3, &cat, &p);
	assert_int_equal(p.gpus[0].nlbs, 3);
	assert_null(hb_perf_find_lbs(&p, 0, 96));
	hb_perf_free(&p);
	hb_catalog_free(&cat);
}

/* Above 16 minB_L the step grows with B_L: a wide gap stays a few entries. */
static void test_coarse_steps(void **state)
{
	static const struct pt pts[] = { { 2051, 0.5 }, { 2901, 0.7 } };
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	struct hb_perf p;

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	load(pts, 2, &cat, &p);
	/* step = floor(2051 / 16 / 32) x 32 = 128: 2176, 2304, ..., 2816 */
	assert_int_equal(p.gpus[0].nlbs, 2 + 6);
	assert_non_null(hb_perf_find_lbs(&p, 0, 2176));
	assert_non_null(hb_perf_find_lbs(&p, 0, 2816));
	assert_null(hb_perf_find_lbs(&p, 0, 2080));
	hb_perf_free(&p);
	hb_catalog_free(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_grid_is_interpolated),
		cmocka_unit_test(test_on_grid_is_kept),
		cmocka_unit_test(test_coarse_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
