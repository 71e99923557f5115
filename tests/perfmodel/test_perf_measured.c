/* solver/perf_measured.c: Pollux's measured DDP steps as the ground truth
 * of hb_ddp_iter_time, on a temporary database: a placement's rotations are
 * one layout, the local batch is interpolated linearly, accumulation adds
 * (step - sync) per extra micro-step, (nodes, replicas) from scalability
 * rows cover what no placement does, and a layout nothing covers gets the
 * model scaled by measured / model at the nearest measured layout.  In the
 * artifact's mode the placement is keyed as Pollux's simulator keys it:
 * the allocation list's order at its least rotation, so "2244" and "2424"
 * stay apart.  On a cluster of several GPU types each type's rows time the
 * allocations all of that type (Sia's simulator, one Application per type),
 * as they would on a one-type cluster, and under the artifact's lookup an
 * unmeasured layout of the type gets its 3-D interpolation. */
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

#include "analytic_gen.h"
#include "catalog.h"
#include "ddp.h"
#include "perf_measured.h"
#include "perfmodel.h"
#include "profdb.h"
#include "strutil.h"

static char path[64];
static struct hb_catalog cat;
static struct hb_profdb *db;

static void put_place_on(const char *model, const char *gpu, const char *placement, int lbs, double step,
			 double sync)
{
	struct hb_placement_row r;
	struct hb_error err = { 0 };

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.model, model, sizeof(r.model));
	hb_strlcpy(r.gpu, gpu, sizeof(r.gpu));
	hb_strlcpy(r.placement, placement, sizeof(r.placement));
	hb_strlcpy(r.source, "import:pollux", sizeof(r.source));
	r.local_bs = lbs;
	r.step_s = step;
	r.sync_s = sync;
	assert_int_equal(hb_profdb_put_placement(db, &r, &err), 0);
}

static void put_place_of(const char *model, const char *placement, int lbs, double step, double sync)
{
	put_place_on(model, "t4", placement, lbs, step, sync);
}

static void put_place(const char *placement, int lbs, double step, double sync)
{
	put_place_of("cifar10", placement, lbs, step, sync);
}

static void put_scal_on(const char *model, const char *gpu, int nodes, int replicas, int lbs, double step,
			double sync)
{
	struct hb_scalability_row r;
	struct hb_error err = { 0 };

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.model, model, sizeof(r.model));
	hb_strlcpy(r.gpu, gpu, sizeof(r.gpu));
	hb_strlcpy(r.source, "import:pollux", sizeof(r.source));
	r.num_nodes = nodes;
	r.num_replicas = replicas;
	r.local_bs = lbs;
	r.step_s = step;
	r.sync_s = sync;
	assert_int_equal(hb_profdb_put_scalability(db, &r, &err), 0);
}

static void put_scal(int nodes, int replicas, int lbs, double step, double sync)
{
	put_scal_on("cifar10", "t4", nodes, replicas, lbs, step, sync);
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
	/* one type: the per-type array's only entry, nothing else changes */
	assert_int_equal(p.ngpus, 1);
	assert_ptr_equal(p.measured, p.measured_gpu[0]);
	assert_ptr_equal(hb_perf_measured_of(&p, a44, NULL), p.measured);

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

/* Application.get_max_local_bsz: the placement's own largest local batch
 * (least rotation of the order given), else the largest scalability row
 * of at least as many nodes and replicas; and the memory correction's
 * largest local batch at a replica count. */
static void test_artifact_max_local(void **state)
{
	struct hb_error err = { 0 };
	struct hb_perf_measured *m = NULL;
	int c4[1] = { 4 }, c22[2] = { 2, 2 }, c121[3] = { 1, 2, 1 }, c8[2] = { 4, 4 }, c44[3] = { 4, 4, 4 };

	(void)state;
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	put_place_on("bert", "t4", "4", 8, 0.5, 0.1);
	put_place_on("bert", "t4", "4", 24, 1.0, 0.1);
	put_place_on("bert", "t4", "22", 12, 1.2, 0.3);
	put_place_on("bert", "t4", "112", 6, 1.4, 0.3); /* 1 1 2's least rotation */
	put_scal_on("bert", "t4", 2, 8, 16, 2.0, 0.5);
	put_scal_on("bert", "t4", 4, 16, 10, 2.5, 0.6);
	put_scal_on("bert", "t4", 1, 2, 99, 0.3, 0.0); /* too few nodes and replicas for 4 4 */
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	assert_int_equal(hb_perf_measured_load(db, "bert", "t4", &m, &err), 0);
	assert_non_null(m);
	assert_int_equal(hb_perf_measured_max_local(m, c4, 1, HB_PLACE_DESCENDING), 24);
	assert_int_equal(hb_perf_measured_max_local(m, c22, 2, HB_PLACE_DESCENDING), 12);
	/* 1 2 1 -> least rotation "112", measured */
	assert_int_equal(hb_perf_measured_max_local(m, c121, 3, HB_PLACE_AS_GIVEN), 6);
	/* 4 4 unmeasured: the rows of >= 2 nodes and >= 8 replicas, 16 and 10 */
	assert_int_equal(hb_perf_measured_max_local(m, c8, 2, HB_PLACE_DESCENDING), 16);
	/* 4 4 4 (3 nodes, 12): only the 4-node, 16-replica row */
	assert_int_equal(hb_perf_measured_max_local(m, c44, 3, HB_PLACE_DESCENDING), 10);
	assert_int_equal(hb_perf_measured_max_local(m, c4, 0, HB_PLACE_DESCENDING), 0);
	/* replicas 4: "4" (24), "22" (12), "112" (6) */
	assert_int_equal(hb_perf_measured_max_local_replicas(m, 4), 24);
	assert_int_equal(hb_perf_measured_max_local_replicas(m, 8), 0); /* no placement of 8 */
	hb_perf_measured_free(m);
}

/* Analytic compute rows and all-reduce fits of deepspeech2 for the GPUs of
 * jabas-quickstart and sia-hetero, so the perf model can time every layout
 * and the measured rows below are the only other input. */
static void analytic_deepspeech2(void)
{
	static const char *const gpus[] = { "v100", "p100", "t4", "a100-40gb", "rtx-2080ti" };
	static const char *const models[] = { "deepspeech2" };
	struct hb_analytic_request req = { gpus, 5, models, 1, NULL, NULL };
	struct hb_analytic_stats st;
	struct hb_error err = { 0 };
	static int done;

	if (done++)
		return;
	if (hb_analytic_generate(&cat, &req, db, &st, &err) != 0)
		fail_msg("%s", err.msg);
}

static void load_model(const char *cluster, const char *model, int no_measured, struct hb_perf *p)
{
	struct hb_error err = { 0 };
	struct hb_perf_opts o;

	hb_perf_opts_default(&o);
	o.no_measured = no_measured;
	if (hb_perf_load(db, &cat, hb_catalog_cluster(&cat, cluster), hb_catalog_model(&cat, model), &o, p, &err) !=
	    0)
		fail_msg("%s", err.msg);
}

/* Two GPU types (jabas-quickstart: node 0 four V100, node 1 four P100),
 * measured rows for P100 only: an all-P100 allocation is timed by them as
 * on a P100 cluster (Sia's simulator: one Application per type,
 * applications.py get_throughput); V100 and mixed allocations keep the
 * model; an unmeasured P100 layout scales the model by measured / model at
 * the nearest measured layout, that layout laid on the P100 node. */
static void test_per_type_on_two_types(void **state)
{
	struct hb_error err = { 0 };
	struct hb_perf p, q;
	int p4[2] = { 0, 4 }, p2[2] = { 0, 2 }, p3[2] = { 0, 3 }, v4[2] = { 4, 0 }, mix[2] = { 2, 2 };
	int g = -2, node = -1;
	double t, m;

	(void)state;
	analytic_deepspeech2();
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	put_place_on("deepspeech2", "p100", "4", 20, 0.30, 0.05);
	put_place_on("deepspeech2", "p100", "4", 40, 0.50, 0.09);
	put_place_on("deepspeech2", "p100", "2", 20, 0.20, 0.03);
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	load_model("jabas-quickstart", "deepspeech2", 0, &p);
	load_model("jabas-quickstart", "deepspeech2", 1, &q);
	assert_int_equal(p.ngpus, 2);
	assert_null(p.measured); /* the one-type pointer stays NULL */
	assert_non_null(p.measured_gpu);
	assert_null(q.measured_gpu);
	assert_string_equal(p.gpus[p.nodes[1].gpu].name, "p100");
	assert_null(p.measured_gpu[p.nodes[0].gpu]);
	assert_non_null(hb_perf_measured_of(&p, p4, &g));
	assert_int_equal(g, p.nodes[1].gpu);
	assert_null(hb_perf_measured_of(&p, mix, &g));
	assert_int_equal(g, -1);
	assert_null(hb_perf_measured_of(&p, v4, NULL));

	/* the measured row itself, the slowest (only) node the P100 one */
	assert_int_equal(hb_ddp_iter_time(&p, p4, 20, 0, &t, &node, &err), 0);
	assert_float_equal(t, 0.30, 1e-12);
	assert_int_equal(node, 1);
	assert_int_equal(hb_ddp_iter_time(&p, p2, 20, 0, &t, NULL, &err), 0);
	assert_float_equal(t, 0.20, 1e-12);
	/* linear in the local batch: 30 is halfway, step 0.40, sync 0.07;
	 * one extra micro-step adds step - sync */
	assert_int_equal(hb_ddp_iter_time(&p, p4, 30, 0, &t, NULL, &err), 0);
	assert_float_equal(t, 0.40, 1e-12);
	assert_int_equal(hb_ddp_iter_time(&p, p4, 30, 1, &t, NULL, &err), 0);
	assert_float_equal(t, 0.40 + (0.40 - 0.07), 1e-12);
	/* and it differs from the model, or the checks above prove nothing */
	assert_int_equal(hb_ddp_iter_time(&q, p4, 20, 0, &m, NULL, &err), 0);
	assert_true(fabs(m - 0.30) > 1e-3);

	/* V100 (nothing measured) and the mixed allocation: the model's time */
	assert_int_equal(hb_ddp_iter_time(&q, v4, 20, 0, &m, NULL, &err), 0);
	assert_int_equal(hb_ddp_iter_time(&p, v4, 20, 0, &t, NULL, &err), 0);
	assert_float_equal(t, m, 1e-15);
	assert_int_equal(hb_ddp_iter_time(&q, mix, 20, 0, &m, NULL, &err), 0);
	assert_int_equal(hb_ddp_iter_time(&p, mix, 20, 0, &t, NULL, &err), 0);
	assert_float_equal(t, m, 1e-15);

	/* "3" on P100 is not measured: nearest "4" (|ln 3/4| < |ln 3/2|),
	 * its reference on node 1, the P100 node, not node 0 */
	{
		double m3, m4;

		assert_int_equal(hb_ddp_iter_time(&q, p3, 20, 0, &m3, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&q, p4, 20, 0, &m4, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&p, p3, 20, 0, &t, NULL, &err), 0);
		assert_float_equal(t, m3 * 0.30 / m4, 1e-12);
	}
	hb_perf_free(&q);
	hb_perf_free(&p);
}

/* The same rows timed on a cluster of that one type and on a cluster of
 * several: one truth (sia-hetero's T4 nodes against pollux-t4's). */
static void test_per_type_same_as_one_type(void **state)
{
	struct hb_error err = { 0 };
	struct hb_perf one, het;
	int a4[16] = { 4 }, a44[16] = { 4, 4 }, h4[11] = { 4 }, h44[11] = { 4, 4 };
	double t1, th;

	(void)state;
	analytic_deepspeech2();
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	put_place_on("deepspeech2", "t4", "4", 20, 0.61, 0.11);
	put_place_on("deepspeech2", "t4", "4", 40, 0.93, 0.13);
	put_place_on("deepspeech2", "t4", "44", 20, 0.95, 0.42);
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	load_model("pollux-t4", "deepspeech2", 0, &one);
	load_model("sia-hetero", "deepspeech2", 0, &het);
	assert_int_equal(het.ngpus, 3);
	assert_string_equal(het.gpus[het.nodes[0].gpu].name, "t4");
	for (int lbs = 20; lbs <= 40; lbs += 10) {
		assert_int_equal(hb_ddp_iter_time(&one, a4, lbs, 2, &t1, NULL, &err), 0);
		assert_int_equal(hb_ddp_iter_time(&het, h4, lbs, 2, &th, NULL, &err), 0);
		assert_float_equal(th, t1, 1e-15);
	}
	assert_int_equal(hb_ddp_iter_time(&one, a44, 20, 0, &t1, NULL, &err), 0);
	assert_int_equal(hb_ddp_iter_time(&het, h44, 20, 0, &th, NULL, &err), 0);
	assert_float_equal(t1, 0.95, 1e-12);
	assert_float_equal(th, 0.95, 1e-12);
	hb_perf_free(&het);
	hb_perf_free(&one);
}

/* The artifact's lookup per type (sim --fidelity sia): on sia-hetero, A100
 * rows laid out so that the step is affine in (nodes, replicas, local
 * batch), step = 0.1 + 0.02 N + 0.01 K + 0.005 m: a measured placement
 * reads its row, an unmeasured one inside the points' hull gets the 3-D
 * linear interpolation (applications.py get_throughput,
 * LinearNDInterpolator), which reproduces an affine function exactly
 * whatever the triangulation. */
static double affine_step(int nodes, int replicas, int lbs)
{
	return 0.1 + 0.02 * nodes + 0.01 * replicas + 0.005 * lbs;
}

static void test_per_type_artifact_interp(void **state)
{
	static const char *const keys[] = { "1", "2", "4", "8", "22", "44", "88", "111", "888" };
	struct hb_error err = { 0 };
	struct hb_perf p;
	struct hb_perf_measured *m;
	/* sia-hetero: nodes 0-5 T4, 6-7 A100 (8 each), 8-10 RTX */
	int a8[11] = { 0, 0, 0, 0, 0, 0, 8 }, a51[11] = { 0, 0, 0, 0, 0, 0, 5, 1 };
	int rtx2[11] = { [8] = 2 };
	double t, sync;

	(void)state;
	analytic_deepspeech2();
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int nodes = (int)strlen(keys[i]), replicas = 0;

		for (int k = 0; k < nodes; k++)
			replicas += keys[i][k] - '0';
		for (int lbs = 20; lbs <= 40; lbs += 20) {
			sync = 0.01 * replicas;
			put_place_on("deepspeech2", "a100-40gb", keys[i], lbs, affine_step(nodes, replicas, lbs), sync);
		}
	}
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	load_model("sia-hetero", "deepspeech2", 0, &p);
	assert_non_null(m = hb_perf_measured_of(&p, a8, NULL));
	assert_null(hb_perf_measured_of(&p, rtx2, NULL)); /* nothing measured on RTX */
	assert_int_equal(hb_perf_measured_use_artifact(m, &err), 0);
	/* a measured placement: its row, linear in the local batch */
	assert_int_equal(hb_ddp_iter_time(&p, a8, 30, 0, &t, NULL, &err), 0);
	assert_float_equal(t, affine_step(1, 8, 30), 1e-12);
	/* "51" (2 nodes, 6 GPUs, inside the hull: "111" and "888" bound it) is
	 * not measured: the interpolation at (2, 6, 30), where hetbatch's own
	 * lookup scales the model at the nearest layout "44" instead */
	assert_int_equal(hb_ddp_iter_time(&p, a51, 30, 0, &t, NULL, &err), 0);
	assert_float_equal(t, affine_step(2, 6, 30), 1e-9);
	/* and with one micro-step more: step + (step - sync), sync = 0.06 there */
	assert_int_equal(hb_ddp_iter_time(&p, a51, 30, 1, &t, NULL, &err), 0);
	assert_float_equal(t, 2 * affine_step(2, 6, 30) - 0.06, 1e-9);
	hb_perf_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_measured_ground_truth),
		cmocka_unit_test(test_artifact_rotation_key),
		cmocka_unit_test(test_artifact_max_local),
		cmocka_unit_test(test_per_type_on_two_types),
		cmocka_unit_test(test_per_type_same_as_one_type),
		cmocka_unit_test(test_per_type_artifact_interp),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
