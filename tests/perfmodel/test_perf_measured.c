/* solver/perf_measured.c: Pollux's measured DDP steps as the ground truth
 * of hb_ddp_iter_time, on a temporary database: a placement's rotations are
 * one layout, the local batch is interpolated linearly, accumulation adds
 * (step - sync) per extra micro-step, (nodes, replicas) from scalability
 * rows cover what no placement does, and a layout nothing covers gets the
 * model scaled by measured / model at the nearest measured layout.  In the
 * artifact's mode the placement is keyed as Pollux's simulator keys it:
 * the allocation list's order at its least rotation, so "2244" and "2424"
 * stay apart. */
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
#include "perf_measured.h"
#include "perfmodel.h"
#include "profdb.h"
#include "strutil.h"

static char path[64];
static struct hb_catalog cat;
static struct hb_profdb *db;

static void put_place_of(const char *model, const char *placement, int lbs, double step, double sync)
{
	struct hb_placement_row r;
	struct hb_error err = { 0 };

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.model, model, sizeof(r.model));
	hb_strlcpy(r.gpu, "t4", sizeof(r.gpu));
	hb_strlcpy(r.placement, placement, sizeof(r.placement));
	hb_strlcpy(r.source, "import:pollux", sizeof(r.source));
	r.local_bs = lbs;
	r.step_s = step;
	r.sync_s = sync;
	assert_int_equal(hb_profdb_put_placement(db, &r, &err), 0);
}

static void put_place(const char *placement, int lbs, double step, double sync)
{
	put_place_of("cifar10", placement, lbs, step, sync);
}

static void put_scal(int nodes, int replicas, int lbs, double step, double sync)
{
	struct hb_scalability_row r;
	struct hb_error err = { 0 };

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.model, "cifar10", sizeof(r.model));
	hb_strlcpy(r.gpu, "t4", sizeof(r.gpu));
	hb_strlcpy(r.source, "import:pollux", sizeof(r.source));
	r.num_nodes = nodes;
	r.num_replicas = replicas;
	r.local_bs = lbs;
	r.step_s = step;
	r.sync_s = sync;
	assert_int_equal(hb_profdb_put_scalability(db, &r, &err), 0);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/hb-meas-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(path);
	if (hb_catalog_load_builtin(&cat, &err) < 0)
		return -1;
	/* The analytic profiles (compute rows) plus measured layouts. */
	if (hb_profdb_open(path, 0, &db, &err) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hb_profdb_close(db);
	unlink(path);
	hb_catalog_free(&cat);
	return 0;
}

static void load(const char *cluster, struct hb_perf *p)
{
	struct hb_error err = { 0 };

	if (hb_perf_load(db, &cat, hb_catalog_cluster(&cat, cluster), hb_catalog_model(&cat, "cifar10"), NULL, p,
			 &err) != 0)
		fail_msg("%s", err.msg);
}

static void test_measured_ground_truth(void **state)
{
	struct hb_error err = { 0 };
	struct hb_perf p;
	int a13[16] = { 1, 3 }, a31[16] = { 3, 1 }, a44[16] = { 4, 4 }, a4444[16] = { 4, 4, 4, 4 };
	int a22[16] = { 2, 2 }, node;
	double t;

	(void)state;
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	/* compute rows at 1 VSW so the perf model can run the layouts too */
	for (int lbs = 32; lbs <= 256; lbs += 32) {
		struct hb_compute_row r;

		memset(&r, 0, sizeof(r));
		hb_strlcpy(r.gpu, "t4", sizeof(r.gpu));
		hb_strlcpy(r.model, "cifar10", sizeof(r.model));
		hb_strlcpy(r.source, "analytic", sizeof(r.source));
		r.local_bs = lbs;
		r.n_vsw = 1;
		r.total_s = 0.0005 * lbs;
		assert_int_equal(hb_profdb_put_compute(db, &r, &err), 0);
	}
	{
		const struct hb_cluster *cl = hb_catalog_cluster(&cat, "pollux-t4");

		for (int k = 0; k < 2; k++) {
			struct hb_allreduce_fit f;

			memset(&f, 0, sizeof(f));
			hb_strlcpy(f.scope, k ? "inter" : "intra", sizeof(f.scope));
			hb_strlcpy(f.link, k ? cl->nodes[0].inter_link : cl->nodes[0].intra_link, sizeof(f.link));
			hb_strlcpy(f.source, "analytic", sizeof(f.source));
			f.alpha = 1.2;
			f.beta = 1.0;
			f.bandwidth = k ? cl->nodes[0].inter_bw : cl->nodes[0].intra_bw;
			f.r2 = 1;
			assert_int_equal(hb_profdb_put_allreduce_fit(db, &f, &err), 0);
		}
	}
	put_place("13", 64, 0.20, 0.05);
	put_place("31", 64, 0.22, 0.07);   /* a rotation of "13": averaged with it */
	put_place("13", 128, 0.30, 0.06);
	put_place("44", 128, 0.40, 0.10);
	put_place("44", 256, 0.60, 0.12);
	put_scal(4, 16, 128, 0.50, 0.20);
	put_scal(4, 16, 256, 0.70, 0.20);
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	load("pollux-t4", &p);
	assert_non_null(p.measured);

	/* rotations are one layout; duplicates averaged: (0.20 + 0.22) / 2 */
	assert_int_equal(hb_ddp_iter_time(&p, a13, 64, 0, &t, &node, &err), 0);
	assert_float_equal(t, 0.21, 1e-12);
	assert_int_equal(node, 0);
	assert_int_equal(hb_ddp_iter_time(&p, a31, 64, 0, &t, NULL, &err), 0);
	assert_float_equal(t, 0.21, 1e-12);
	/* linear in the local batch: "44" at 192 is halfway, 0.50 */
	assert_int_equal(hb_ddp_iter_time(&p, a44, 192, 0, &t, NULL, &err), 0);
	assert_float_equal(t, 0.50, 1e-12);
	/* accumulation: step + s (step - sync), sync halfway 0.11 */
	assert_int_equal(hb_ddp_iter_time(&p, a44, 192, 2, &t, NULL, &err), 0);
	assert_float_equal(t, 0.50 + 2 * (0.50 - 0.11), 1e-12);
	/* no placement "4444": scalability (4 nodes, 16 GPUs) at 160, 0.55 */
	assert_int_equal(hb_ddp_iter_time(&p, a4444, 160, 0, &t, NULL, &err), 0);
	assert_float_equal(t, 0.55, 1e-12);
	/* Not measured: the model scaled by measured / model at the nearest
	 * measured layout at this batch.  "44" at 96 lies below its range
	 * (128..256); the nearest layout measured at 96 is "13" (2 nodes, 4
	 * GPUs: distance ln 2 in GPUs), 0.21 + (0.30 - 0.21) / 2 = 0.255 there. */
	assert_int_equal(hb_ddp_iter_time(&p, a44, 96, 0, &t, NULL, &err), 0);
	{
		struct hb_perf q;
		struct hb_perf_opts o;
		int a2x[16] = { 2, 2 };
		double m44, m13;

		hb_perf_opts_default(&o);
		o.no_measured = 1;
		if (hb_perf_load(db, &cat, hb_catalog_cluster(&cat, "pollux-t4"), hb_catalog_model(&cat, "cifar10"), &o,
				 &q, &err) != 0)
			fail_msg("%s", err.msg);
		assert_null(q.measured);
		assert_int_equal(hb_ddp_iter_time(&q, a44, 96, 0, &m44, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&q, a13, 96, 0, &m13, NULL, &err), 0);
		assert_float_equal(t, m44 * 0.255 / m13, 1e-12);
		/* "22" at 64 (not measured): nearest "13" at distance 0 */
		assert_int_equal(hb_ddp_iter_time(&q, a2x, 64, 0, &m44, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&q, a13, 64, 0, &m13, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&p, a22, 64, 0, &t, NULL, &err), 0);
		assert_float_equal(t, m44 * 0.21 / m13, 1e-12);
		/* "22" at 224: only "44" (distance ln 2) and the scalability set
		 * cover 224; "44" is nearer: 0.40 + 0.75 (0.60 - 0.40) = 0.55 */
		assert_int_equal(hb_ddp_iter_time(&q, a44, 224, 0, &m44, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&q, a22, 224, 0, &m13, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&p, a22, 224, 0, &t, NULL, &err), 0);
		assert_float_equal(t, m13 * 0.55 / m44, 1e-12);
		hb_perf_free(&q);
	}
	hb_perf_free(&p);
}

/* The artifact's key (applications.py get_throughput): the placement in the
 * allocation list's order, at its least rotation.  Its Tiresias and Optimus
 * list the most free GPUs first (descending), its Pollux by node. */
static void test_artifact_rotation_key(void **state)
{
	struct hb_error err = { 0 };
	struct hb_perf_measured *m = NULL;
	int by_node[5] = { 4, 0, 2, 4, 2 }, sorted[4] = { 2, 2, 4, 4 }, a31[2] = { 3, 1 }, a22[2] = { 2, 2 };
	double t;

	(void)state;
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	put_place_of("yolov3", "2244", 40, 1.00, 0.30);
	put_place_of("yolov3", "2244", 80, 2.00, 0.50);
	put_place_of("yolov3", "2424", 40, 0.80, 0.20);
	put_place_of("yolov3", "2424", 80, 1.60, 0.40);
	put_place_of("yolov3", "13", 40, 0.50, 0.10);
	put_place_of("yolov3", "31", 40, 0.70, 0.10); /* never the artifact's key */
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	assert_int_equal(hb_perf_measured_load(db, "yolov3", "t4", &m, &err), 0);
	assert_non_null(m);
	/* hetbatch's own lookup: one layout per multiset, rows averaged */
	assert_int_equal(hb_perf_measured_step(m, by_node, 5, 60, 0, &t), 1);
	assert_float_equal(t, (1.5 + 1.2) / 2, 1e-12);
	assert_int_equal(hb_perf_measured_use_artifact(m, &err), 0);
	/* by node 4 2 4 2 -> "2424", halfway between 40 and 80 */
	assert_int_equal(hb_perf_measured_step_ordered(m, by_node, 5, HB_PLACE_AS_GIVEN, 60, 0, &t), 1);
	assert_float_equal(t, 1.2, 1e-12);
	/* descending 4 4 2 2 -> "2244"; one extra micro-step adds step - sync */
	assert_int_equal(hb_perf_measured_step_ordered(m, by_node, 5, HB_PLACE_DESCENDING, 60, 1, &t), 1);
	assert_float_equal(t, 1.5 + (1.5 - 0.4), 1e-12);
	assert_int_equal(hb_perf_measured_step(m, by_node, 5, 60, 0, &t), 1);
	assert_float_equal(t, 1.5, 1e-12);
	assert_int_equal(hb_perf_measured_step_ordered(m, sorted, 4, HB_PLACE_AS_GIVEN, 60, 0, &t), 1);
	assert_float_equal(t, 1.5, 1e-12);
	/* 3 1 -> "13": the "31" row is never read */
	assert_int_equal(hb_perf_measured_step_ordered(m, a31, 2, HB_PLACE_AS_GIVEN, 40, 0, &t), 1);
	assert_float_equal(t, 0.50, 1e-12);
	/* nothing measured and too few points for the 3-D interpolation */
	assert_int_equal(hb_perf_measured_step_ordered(m, a22, 2, HB_PLACE_AS_GIVEN, 40, 0, &t), 0);
	hb_perf_measured_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_measured_ground_truth),
		cmocka_unit_test(test_artifact_rotation_key),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
