/* Importers on the project's own fixtures: good files load to the right
 * rows; each broken file fails with one HB_EINPUT line naming the file and
 * line (or field) and leaves the database exactly as it was. */
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
#include "import.h"
#include "profdb.h"
#include "strutil.h"

#define MIB 1048576.0

static char tmpdir[256];
static char fixtures[1024];
static struct hb_catalog cat;

static const char *const tables[] = {
	"run", "compute", "memory", "bucket", "allreduce", "allreduce_fit", "placement", "scalability", "gradstats",
};
#define NTABLES ((int)(sizeof(tables) / sizeof(tables[0])))

static const char *fixture(const char *rel)
{
	static char path[4][2048];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", fixtures, rel);
	return path[k];
}

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

static void counts(struct hb_profdb *db, long *out)
{
	struct hb_error err = { 0 };

	for (int i = 0; i < NTABLES; i++)
		assert_int_equal(hb_profdb_count(db, tables[i], &out[i], &err), 0);
}

static int has_warning(const struct hb_import_stats *s, const char *needle)
{
	for (int i = 0; i < s->nwarn; i++)
		if (strstr(s->warn[i], needle))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------ */

static void test_pollux_fixture(void **state)
{
	struct hb_profdb *db = fresh_db("pollux.db");
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	struct hb_placement_row *pl;
	struct hb_compute_row *cr;
	struct hb_gradstats_row *gs;
	long before[NTABLES], after[NTABLES];
	int n;

	(void)state;
	assert_int_equal(hb_import_pollux(db, &cat, fixture("pollux/good"), &st, &err), 0);
	assert_int_equal(st.placement, 6);
	assert_int_equal(st.compute, 3);
	assert_int_equal(st.scalability, 2);
	assert_int_equal(st.gradstats, 5);
	assert_int_equal(st.files, 5);
	assert_true(st.run_id > 0);
	assert_true(has_warning(&st, "notes: no placements.csv"));
	assert_true(has_warning(&st, "imagenet: no scalability.csv"));
	assert_true(has_warning(&st, "imagenet: no validation"));
	assert_false(has_warning(&st, "not in the catalog"));
	/* Columns found by name: imagenet's file has them in another order. */
	assert_int_equal(hb_profdb_get_placements(db, "imagenet", &pl, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(pl[0].placement, "1");
	assert_string_equal(pl[0].gpu, "t4");
	assert_int_equal(pl[0].local_bs, 20);
	assert_true(fabs(pl[0].step_s - 0.1474) < 1e-15 && fabs(pl[0].sync_s - 0.0012) < 1e-15);
	free(pl);
	/* Single-GPU placements became compute rows. */
	assert_int_equal(hb_profdb_get_compute(db, "t4", "cifar10", &cr, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(cr[1].local_bs, 64);
	assert_int_equal(cr[1].n_vsw, 1);
	assert_true(fabs(cr[1].total_s - 0.0700) < 1e-15);
	assert_string_equal(cr[1].source, "import:pollux");
	assert_true(cr[1].run_id == st.run_id);
	free(cr);
	/* CRLF file and a blank line: epochs are data-row indexes. */
	assert_int_equal(hb_profdb_get_gradstats(db, "cifar10", &gs, &n, &err), 0);
	assert_int_equal(n, 5);
	assert_int_equal(gs[2].batch, 128);
	assert_int_equal(gs[2].epoch, 2);
	assert_true(gs[2].iteration == 1172);
	assert_int_equal(gs[4].batch, 256);
	assert_int_equal(gs[4].epoch, 1);
	assert_true(fabs(gs[4].grad_var - 2.837) < 1e-15);
	free(gs);
	/* Importing again replaces rows (only a new run row is added). */
	counts(db, before);
	assert_int_equal(hb_import_pollux(db, &cat, fixture("pollux/good"), &st, &err), 0);
	counts(db, after);
	assert_int_equal(after[0], before[0] + 1);
	for (int i = 1; i < NTABLES; i++)
		assert_int_equal(after[i], before[i]);
	/* A repeated key counts once, the later row wins, and it is reported. */
	hb_profdb_close(db);
	db = fresh_db("pollux-dup.db");
	assert_int_equal(hb_import_pollux(db, &cat, fixture("pollux/duplicate"), &st, &err), 0);
	assert_int_equal(st.placement, 2);
	assert_int_equal(st.compute, 1);
	assert_true(has_warning(&st, "placements.csv:4: placement 1, local_bsz 32 repeats an earlier row"));
	assert_int_equal(hb_profdb_get_compute(db, "t4", "cifar10", &cr, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(fabs(cr[0].total_s - 0.0431) < 1e-15);
	free(cr);
	/* A single application directory works as well. */
	hb_profdb_close(db);
	db = fresh_db("pollux-one.db");
	assert_int_equal(hb_import_pollux(db, &cat, fixture("pollux/good/cifar10/"), &st, &err), 0);
	assert_int_equal(st.placement, 4);
	assert_int_equal(hb_profdb_get_placements(db, "cifar10", &pl, &n, &err), 0);
	assert_int_equal(n, 4);
	free(pl);
	hb_profdb_close(db);
}

/* Sia's layout: one table set per GPU type, mapped to catalog GPUs; the
 * values below are the fixture's, checked by hand. */
static void test_sia_fixture(void **state)
{
	struct hb_profdb *db = fresh_db("sia.db");
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	struct hb_placement_row *pl;
	struct hb_scalability_row *sc;
	struct hb_compute_row *cr;
	struct hb_gradstats_row *gs;
	long before[NTABLES], after[NTABLES];
	int n, found = 0;

	(void)state;
	assert_int_equal(hb_import_sia(db, &cat, fixture("sia/good"), &st, &err), 0);
	assert_int_equal(st.placement, 8);
	assert_int_equal(st.compute, 5);
	assert_int_equal(st.scalability, 3);
	assert_int_equal(st.gradstats, 2);
	assert_int_equal(st.files, 7);
	assert_true(st.run_id > 0);
	assert_true(has_warning(&st, "gpt_pmp: pipeline-parallel profiles"));
	assert_true(has_warning(&st, "notes: no placements-<type>.csv; not a Sia application"));
	assert_true(has_warning(&st, "skipped 1 placements-dgx.csv file: the same A100 as dgx-ext"));
	assert_true(has_warning(&st, "skipped 1 placements.csv/scalability.csv file without a type suffix"));
	assert_true(has_warning(&st, "scalability-dgx-ext.csv:3: 1 rows (the first at this line) repeat"));
	assert_true(has_warning(&st, "yolov3: no scalability-rtx.csv"));
	assert_false(has_warning(&st, "not in the catalog"));
	/* Placements of every type, columns found by name; the dgx row (0.0351)
	 * and the unsuffixed copy are not imported. */
	assert_int_equal(hb_profdb_get_placements(db, "cifar10", &pl, &n, &err), 0);
	assert_int_equal(n, 5);
	for (int i = 0; i < n; i++) {
		assert_string_equal(pl[i].source, "import:sia");
		assert_true(strcmp(pl[i].gpu, "t4") == 0 || strcmp(pl[i].gpu, "a100-40gb") == 0);
		if (strcmp(pl[i].gpu, "a100-40gb") == 0 && strcmp(pl[i].placement, "8") == 0) {
			assert_int_equal(pl[i].local_bs, 32);
			assert_true(fabs(pl[i].step_s - 0.0420) < 1e-15 && fabs(pl[i].sync_s - 0.0060) < 1e-15);
			found++;
		}
		if (strcmp(pl[i].gpu, "a100-40gb") == 0 && strcmp(pl[i].placement, "1") == 0)
			assert_true(fabs(pl[i].step_s - 0.0350) < 1e-15);
	}
	assert_int_equal(found, 1);
	free(pl);
	assert_int_equal(hb_profdb_get_placements(db, "yolov3", &pl, &n, &err), 0);
	assert_int_equal(n, 3);
	found = 0;
	for (int i = 0; i < n; i++)
		if (strcmp(pl[i].gpu, "rtx-2080ti") == 0 && strcmp(pl[i].placement, "2") == 0) {
			assert_true(fabs(pl[i].step_s - 0.2300) < 1e-15 && fabs(pl[i].sync_s - 0.0200) < 1e-15);
			found++;
		} else if (strcmp(pl[i].gpu, "quadro-rtx-6000") == 0) {
			assert_true(fabs(pl[i].step_s - 0.1500) < 1e-15);
			found++;
		}
	assert_int_equal(found, 2);
	free(pl);
	/* A repeated scalability key keeps the mean: (0.05 + 0.07) / 2 and
	 * (0.01 + 0.03) / 2. */
	assert_int_equal(hb_profdb_get_scalability(db, "cifar10", &sc, &n, &err), 0);
	assert_int_equal(n, 3);
	found = 0;
	for (int i = 0; i < n; i++)
		if (strcmp(sc[i].gpu, "a100-40gb") == 0 && sc[i].num_nodes == 2 && sc[i].num_replicas == 10) {
			assert_int_equal(sc[i].local_bs, 32);
			assert_true(fabs(sc[i].step_s - 0.06) < 1e-15 && fabs(sc[i].sync_s - 0.02) < 1e-15);
			found++;
		}
	assert_int_equal(found, 1);
	free(sc);
	/* Single-GPU placements became compute rows on their own GPU. */
	assert_int_equal(hb_profdb_get_compute(db, "rtx-2080ti", "yolov3", &cr, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cr[0].local_bs, 4);
	assert_true(fabs(cr[0].total_s - 0.2000) < 1e-15);
	assert_string_equal(cr[0].source, "import:sia");
	assert_true(cr[0].run_id == st.run_id);
	free(cr);
	assert_int_equal(hb_profdb_get_compute(db, "a100-40gb", "cifar10", &cr, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(fabs(cr[0].total_s - 0.0350) < 1e-15);
	free(cr);
	assert_int_equal(hb_profdb_get_gradstats(db, "cifar10", &gs, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(gs[1].batch, 128);
	assert_int_equal(gs[1].epoch, 1);
	assert_true(gs[1].iteration == 781 && fabs(gs[1].grad_var - 1.592) < 1e-15);
	free(gs);
	/* Importing again replaces rows (only a new run row is added). */
	counts(db, before);
	assert_int_equal(hb_import_sia(db, &cat, fixture("sia/good"), &st, &err), 0);
	counts(db, after);
	assert_int_equal(after[0], before[0] + 1);
	for (int i = 1; i < NTABLES; i++)
		assert_int_equal(after[i], before[i]);
	/* One application directory alone; a pipeline-parallel one is refused. */
	hb_profdb_close(db);
	db = fresh_db("sia-one.db");
	assert_int_equal(hb_import_sia(db, &cat, fixture("sia/good/yolov3/"), &st, &err), 0);
	assert_int_equal(st.placement, 3);
	assert_int_equal(hb_import_sia(db, &cat, fixture("sia/good/gpt_pmp"), &st, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "gpt_pmp: pipeline-parallel profiles"));
	hb_profdb_close(db);
}

static void test_jabas_fixture(void **state)
{
	struct hb_profdb *db = fresh_db("jabas.db");
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	struct hb_compute_row *cr;
	struct hb_allreduce_row *ar;
	struct hb_allreduce_fit fit;
	double *b;
	int n, found, maxbs;

	(void)state;
	assert_int_equal(hb_import_jabas(db, &cat, fixture("jabas/good"), &st, &err), 0);
	assert_int_equal(st.compute, 4);
	assert_int_equal(st.memory, 3);
	assert_int_equal(st.bucket, 3);
	assert_int_equal(st.allreduce, 8);
	assert_int_equal(st.allreduce_fit, 2);
	assert_int_equal(st.nwarn, 0);
	/* ms -> s, catalog GPU names, bn_sync kept. */
	assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &cr, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(cr[1].local_bs, 16);
	assert_int_equal(cr[1].n_vsw, 2);
	assert_true(fabs(cr[1].fwd_s - 0.033) < 1e-12 && fabs(cr[1].bwd_s - 0.066) < 1e-12);
	assert_true(fabs(cr[1].copy_s - 0.002) < 1e-12 && fabs(cr[1].total_s - 0.1105) < 1e-12);
	assert_true(fabs(cr[1].bn_s - 0.00629) < 1e-12);
	assert_true(fabs(cr[2].fwd_s - 0.03235) < 1e-12);
	free(cr);
	assert_int_equal(hb_profdb_max_local_bs(db, "v100", "resnet50", &maxbs, &err), 0);
	assert_int_equal(maxbs, 32);
	assert_int_equal(hb_profdb_max_local_bs(db, "p100", "resnet50", &maxbs, &err), 0);
	assert_int_equal(maxbs, 16);
	assert_int_equal(hb_profdb_get_buckets(db, "resnet50", &b, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_true(b[0] == 2.5 * MIB && b[1] == 4.0 * MIB && b[2] == 1.5 * MIB);
	free(b);
	/* The fixture's sizes are whole MiB at cluster_info's bandwidths: the
	 * conversion recovers them, and the fits recover the exact lines. */
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "pcie3-x16", &ar, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(ar[0].n_gpus, 4);
	assert_true(fabs(ar[0].bytes - MIB) < 1e-3 && fabs(ar[3].bytes - 20 * MIB) < 1e-3);
	free(ar);
	assert_int_equal(hb_profdb_get_allreduce(db, "inter", "ib-100g", &ar, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(ar[0].n_gpus, 8);
	assert_true(fabs(ar[1].bytes - 5 * MIB) < 1e-3);
	free(ar);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "intra", "pcie3-x16", &fit, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_true(fabs(fit.alpha - 1.5) < 1e-9 && fabs(fit.beta - 1.0) < 1e-9 && fit.bandwidth == 15.75e9);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "inter", "ib-100g", &fit, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_true(fabs(fit.alpha - 0.8) < 1e-9 && fabs(fit.beta - 4.0) < 1e-9 && fit.bandwidth == 12.5e9);
	assert_int_equal(st.nfits, 2);
	hb_profdb_close(db);
}

static void test_nccl_fixtures(void **state)
{
	struct hb_profdb *db = fresh_db("nccl.db");
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	struct hb_allreduce_row *ar;
	int n;

	(void)state;
	/* Text, current format, one host, 8 ranks, an NCCL INFO line inside. */
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-8gpu.txt"), NULL, "nvlink4", 0, &st, &err), 0);
	assert_int_equal(st.allreduce, 4);
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "nvlink4", &ar, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(ar[0].n_gpus, 8);
	assert_true(ar[0].bytes == 1048576 && fabs(ar[0].time_s - 31.52e-6) < 1e-15);
	assert_true(ar[3].bytes == 8388608 && fabs(ar[3].time_s - 94.07e-6) < 1e-15);
	assert_string_equal(ar[0].source, "import:nccl-tests");
	free(ar);
	/* Old format (no root column, max-error columns), two hosts. */
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-old-2node.txt"), NULL, "ib-100g", 0, &st, &err),
			 0);
	assert_int_equal(st.allreduce, 3);
	assert_int_equal(hb_profdb_get_allreduce(db, "inter", "ib-100g", &ar, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ar[0].n_gpus, 2);
	assert_true(ar[2].bytes == 1048576 && fabs(ar[2].time_s - 251.7e-6) < 1e-15);
	free(ar);
	/* JSON: two processes of 4 GPUs on two hosts. */
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-2node.json"), NULL, "ib-200g", 0, &st, &err), 0);
	assert_int_equal(st.allreduce, 3);
	assert_int_equal(hb_profdb_get_allreduce(db, "inter", "ib-200g", &ar, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ar[0].n_gpus, 8);
	assert_true(ar[1].bytes == 2097152 && fabs(ar[1].time_s - 180.25e-6) < 1e-15);
	free(ar);
	/* Explicit scope and GPU count win (with a warning on the mismatch). */
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-8gpu.txt"), "inter", "roce-100g", 16, &st, &err),
			 0);
	assert_true(has_warning(&st, "lists 8 ranks"));
	assert_int_equal(hb_profdb_get_allreduce(db, "inter", "roce-100g", &ar, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(ar[0].n_gpus, 16);
	free(ar);
	/* The same log appended twice: each size counted once, later kept. */
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-8gpu-twice.txt"), NULL, "nvlink5", 0, &st, &err),
			 0);
	assert_int_equal(st.allreduce, 4);
	assert_true(has_warning(&st, "size 1048576 bytes appears at lines 18 and 45"));
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "nvlink5", &ar, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(ar[0].n_gpus, 8); /* rank lines listed twice: still 8 ranks */
	free(ar);
	/* A link class is required; scope must be intra or inter. */
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-8gpu.txt"), NULL, NULL, 0, &st, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-8gpu.txt"), "both", "x", 0, &st, &err), -1);
	/* One GPU moves no data. */
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-8gpu.txt"), NULL, "x", 1, &st, &err), -1);
	hb_profdb_close(db);
}

static void test_names_and_links(void **state)
{
	struct hb_import_stats st;
	char out[64];

	(void)state;
	memset(&st, 0, sizeof(st));
	hb_import_gpu_name(&cat, "Tesla V100-PCIE-16GB", out, sizeof(out), &st);
	assert_string_equal(out, "v100");
	hb_import_gpu_name(&cat, "Tesla P100-PCIE-16GB", out, sizeof(out), &st);
	assert_string_equal(out, "p100");
	assert_int_equal(st.nwarn, 0);
	hb_import_gpu_name(&cat, "Imaginary GPU 9000", out, sizeof(out), &st);
	assert_string_equal(out, "Imaginary GPU 9000");
	assert_int_equal(st.nwarn, 1);
	hb_import_gpu_name(&cat, "Imaginary GPU 9000", out, sizeof(out), &st); /* same warning once */
	assert_int_equal(st.nwarn, 1);
	hb_import_gpu_name(NULL, "Imaginary GPU 9000", out, sizeof(out), &st);
	assert_int_equal(st.nwarn, 1);
	hb_import_link_class(15.75e9, out, sizeof(out));
	assert_string_equal(out, "pcie3-x16");
	hb_import_link_class(12.5e9, out, sizeof(out));
	assert_string_equal(out, "ib-100g");
	hb_import_link_class(7e9, out, sizeof(out));
	assert_string_equal(out, "ib-56g");
	hb_import_link_class(25e9, out, sizeof(out));
	assert_string_equal(out, "bw-25000000000");
}

/* ------------------------------------------------------------------------ */
/* Broken inputs                                                             */

enum kind { POLLUX, SIA, JABAS, NCCL };

struct broken {
	enum kind kind;
	const char *path;      /* under the fixtures directory */
	const char *expect;    /* must appear in the message (file:line or file + field) */
};

static const struct broken broken[] = {
	{ POLLUX, "pollux/missing-column", "missing-column/cifar10/placements.csv:1: missing column 'sync_time'" },
	{ POLLUX, "pollux/non-numeric", "non-numeric/cifar10/placements.csv:3: field 'step_time': value 'fast'" },
	{ POLLUX, "pollux/negative-time", "negative-time/cifar10/scalability.csv:3: field 'step_time': value '-0.5'" },
	{ POLLUX, "pollux/empty-file", "empty-file/cifar10/placements.csv: empty file" },
	{ POLLUX, "pollux/short-row", "short-row/cifar10/validation-64.csv:3: expected 5 fields, found 4" },
	{ POLLUX, "pollux/bad-placement", "bad-placement/cifar10/placements.csv:3: field 'placement': value '2x'" },
	{ SIA, "sia/unknown-type",
	  "unknown-type/cifar10/placements-h100.csv: file name: GPU type 'h100' is not one of Sia's (aws, rtx, "
	  "dgx-ext, quad, dgx, azure)" },
	{ SIA, "sia/node-size", "node-size/cifar10/placements-aws.csv:3: field 'placement': value '8' puts 8 GPUs" },
	{ SIA, "sia/non-numeric", "non-numeric/yolov3/placements-rtx.csv:3: field 'step_time': value 'fast'" },
	{ SIA, "sia/too-many-replicas",
	  "too-many-replicas/cifar10/scalability-dgx-ext.csv:3: field 'num_replicas': value '16' is more than 1" },
	{ SIA, "sia/short-row", "short-row/cifar10/validation-128.csv:3: expected 5 fields, found 4" },
	{ SIA, "sia/no-apps", "no-apps: no Sia application directories" },
	{ SIA, "sia/no-such-dir", "no-such-dir: not a directory" },
	{ JABAS, "jabas/missing-key", "resnet50_32_1_comp_profile.json: field 'fwd_time': missing" },
	{ JABAS, "jabas/truncated-json", "resnet50_32_1_comp_profile.json:2:" },
	{ JABAS, "jabas/wrong-type", "resnet50_32_1_comp_profile.json: field 'lbs': expected an integer" },
	{ JABAS, "jabas/bad-comm", "intra_comm_profile_data.txt:3: field 'measured_ms': value 'abc'" },
	{ JABAS, "jabas/no-such-dir", "no-such-dir: not a directory" },
	{ NCCL, "nccl/broken-wrong.txt", "broken-wrong.txt:21: field '#wrong': value '12'" },
	{ NCCL, "nccl/broken-short-line.txt", "broken-short-line.txt:19: expected 13 columns" },
	{ NCCL, "nccl/broken-negative-time.txt", "broken-negative-time.txt:22: field 'time': value '-94.07'" },
	{ NCCL, "nccl/broken-non-numeric.txt", "broken-non-numeric.txt:18: field 'time': value '31.5x'" },
	{ NCCL, "nccl/broken-empty.txt", "broken-empty.txt: empty file" },
	{ NCCL, "nccl/broken-no-header.txt", "broken-no-header.txt:1: result line before the column header" },
	{ NCCL, "nccl/broken-truncated.json", "broken-truncated.json:" },
	{ NCCL, "nccl/broken-nwrong.json", "broken-nwrong.json: results[1].in_place: field 'nwrong': value 4" },
	{ NCCL, "nccl/broken-wrong-type.json", "broken-wrong-type.json: results[2]: field 'size': expected a number" },
};

static void test_broken_inputs_leave_db_unchanged(void **state)
{
	struct hb_profdb *db = fresh_db("broken.db");
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	long before[NTABLES], after[NTABLES];

	(void)state;
	/* Something to protect: one good import of each kind. */
	assert_int_equal(hb_import_pollux(db, &cat, fixture("pollux/good"), &st, &err), 0);
	assert_int_equal(hb_import_sia(db, &cat, fixture("sia/good"), &st, &err), 0);
	assert_int_equal(hb_import_jabas(db, &cat, fixture("jabas/good"), &st, &err), 0);
	assert_int_equal(hb_import_nccl(db, fixture("nccl/allreduce-8gpu.txt"), NULL, "nvlink4", 0, &st, &err), 0);
	counts(db, before);
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		const struct broken *b = &broken[i];
		int rc;

		hb_error_clear(&err);
		if (b->kind == POLLUX)
			rc = hb_import_pollux(db, &cat, fixture(b->path), &st, &err);
		else if (b->kind == SIA)
			rc = hb_import_sia(db, &cat, fixture(b->path), &st, &err);
		else if (b->kind == JABAS)
			rc = hb_import_jabas(db, &cat, fixture(b->path), &st, &err);
		else
			rc = hb_import_nccl(db, fixture(b->path), NULL, "nvlink4", 0, &st, &err);
		if (rc != -1 || err.code != HB_EINPUT || !strstr(err.msg, b->expect) || strchr(err.msg, '\n'))
			fail_msg("%s: rc %d code %d message '%s', expected '%s'", b->path, rc, err.code, err.msg,
				 b->expect);
		assert_true(st.run_id == 0 && st.compute == 0 && st.placement == 0 && st.allreduce == 0);
		counts(db, after);
		for (int t = 0; t < NTABLES; t++)
			if (after[t] != before[t])
				fail_msg("%s changed table %s: %ld -> %ld rows", b->path, tables[t], before[t], after[t]);
	}
	hb_profdb_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pollux_fixture),
		cmocka_unit_test(test_sia_fixture),
		cmocka_unit_test(test_jabas_fixture),
		cmocka_unit_test(test_nccl_fixtures),
		cmocka_unit_test(test_names_and_links),
		cmocka_unit_test(test_broken_inputs_leave_db_unchanged),
	};
	struct hb_error err = { 0 };
	const char *fx = getenv("HB_FIXTURES");
	char cmd[300];
	int rc;

	if (!fx) {
		fprintf(stderr, "HB_FIXTURES is not set\n");
		return 1;
	}
	hb_strlcpy(fixtures, fx, sizeof(fixtures));
	if (hb_catalog_load_builtin(&cat, &err) < 0) {
		fprintf(stderr, "built-in catalog: %s\n", err.msg);
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-import-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	hb_catalog_free(&cat);
	return rc;
}
