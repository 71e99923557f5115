/*
 * Calibration of the analytic model against the public measurements, read in
 * place from $HB_SHARED/data (exit 77, skipped, when absent):
 *
 *  - JABAS artifact, ResNet-50 on V100 and P100 (resnet50-quickstart): every
 *    comp profile (local batch 32..160, n_vsw 1..4: fwd, bwd, data, update,
 *    copy, total), the memory profile n_max per local batch, and the intra-
 *    and inter-node all-reduce profiles;
 *  - Pollux, T4, placement "1" of every application: step_time - sync_time
 *    (the compute part of a single-GPU step) per local batch.
 *
 * It prints one line per point (group, point, measured, analytic, error %)
 * and a summary per group, then asserts each group's stated tolerance:
 *
 *   group              per-point |error|    mean |error|   note
 *   jabas-fb-1vsw      <= 5 %               <= 2 %        fwd+bwd, 1 VSW (V100/32 must be <= 15 %)
 *   jabas-fb-nvsw      <= 5 %               <= 3 %        fwd+bwd, 2..4 VSWs
 *   jabas-fwd, -bwd    <= 6 %               <= 3 %
 *   jabas-data         <= 10 %              <= 5 %
 *   jabas-update       <= 30 %              <= 6 %        V100 32x1 (5.97 ms) is an outlier of the file
 *   jabas-copy         <= 15 %              <= 8 %        n_vsw >= 2 (n = 1 copies nothing)
 *   jabas-total        <= 5 %               <= 3 %
 *   jabas-nmax         exact                              all 9 (GPU, local batch) entries
 *   jabas-allreduce    <= 30 %              <= 10 %       intra and inter, 9 sizes each
 *   pollux-cifar10     <= 15 %              <= 10 %       FP32 CNN (Turing eff is fitted here)
 *   pollux-imagenet    <= 25 %              <= 15 %       run with apex AMP; modelled as FP32
 *   pollux-bert        <= 30 %              <= 28 %       FP32 BERT-base: transformer on CNN-calibrated eff
 *   pollux-yolov3      <= 40 %              <= 25 %       AMP; the measured times are not monotone in batch
 *   pollux-deepspeech2 <= 70 %              <= 65 %       RNN: catalog FLOPs give a far too fast estimate
 *   pollux-ncf         <= 80 %              <= 50 %       tiny model: fixed per-step costs dominate
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analytic.h"
#include "catalog.h"
#include "csv.h"
#include "fileio.h"
#include "json.h"
#include "strutil.h"

#define MAX_POINTS 512

struct point {
	char group[32];
	char key[16];         /* sort keys: GPU or scope, batch (or MiB), VSWs (or GPUs) */
	double bs;
	int n;
	char label[64];
	double measured;
	double analytic;
};

struct tolerance {
	const char *group;
	double max_abs_pct;   /* every point of the group */
	double mean_abs_pct;  /* mean absolute error of the group */
	int min_points;       /* the data must provide at least this many */
};

static const struct tolerance tolerances[] = {
	{ "jabas-fb-1vsw", 5, 2, 9 },
	{ "jabas-fb-nvsw", 5, 3, 5 },
	{ "jabas-fwd", 6, 3, 14 },
	{ "jabas-bwd", 6, 3, 14 },
	{ "jabas-data", 10, 5, 14 },
	{ "jabas-update", 30, 6, 14 },
	{ "jabas-copy", 15, 8, 5 },
	{ "jabas-total", 5, 3, 14 },
	{ "jabas-nmax", 0, 0, 9 },
	{ "jabas-allreduce", 30, 10, 18 },
	{ "pollux-cifar10", 15, 10, 11 },
	{ "pollux-imagenet", 25, 15, 8 },
	{ "pollux-bert", 30, 28, 5 },
	{ "pollux-yolov3", 40, 25, 5 },
	{ "pollux-deepspeech2", 70, 65, 7 },
	{ "pollux-ncf", 80, 50, 21 },
};

#define NTOL ((int)(sizeof(tolerances) / sizeof(tolerances[0])))

struct calib {
	struct hb_catalog cat;
	struct point pts[MAX_POINTS];
	int n;
	double v100_fb32;     /* analytic fwd+bwd, V100, local batch 32, 1 VSW, ms */
	double v100_fb32_meas;
};

static char jabas_dir[1024];
static char pollux_dir[1024];

static void add(struct calib *c, const char *group, const char *key, double bs, int n, double measured,
		double analytic, const char *fmt, ...) HB_PRINTF(8, 9);

static void add(struct calib *c, const char *group, const char *key, double bs, int n, double measured,
		double analytic, const char *fmt, ...)
{
	va_list ap;
	struct point *p;

	assert_true(c->n < MAX_POINTS);
	p = &c->pts[c->n++];
	hb_strlcpy(p->group, group, sizeof(p->group));
	hb_strlcpy(p->key, key, sizeof(p->key));
	p->bs = bs;
	p->n = n;
	va_start(ap, fmt);
	vsnprintf(p->label, sizeof(p->label), fmt, ap);
	va_end(ap);
	p->measured = measured;
	p->analytic = analytic;
}

static double err_pct(const struct point *p)
{
	return 100.0 * (p->analytic - p->measured) / p->measured;
}

/* ------------------------------------------------------------------ JABAS */

static void jabas_comp_file(struct calib *c, const char *path)
{
	struct hb_error err = { 0 };
	cJSON *j = hb_json_load_file(path, &err);
	const struct hb_model *m = hb_catalog_model(&c->cat, "resnet50");
	const struct hb_gpu *g;
	const char *gtype;
	double lbs, n, fwd, bwd, data, upd, copy, total;
	struct hb_compute_row r;

	assert_non_null(j);
	assert_non_null(m);
	assert_int_equal(hb_json_str(j, "gpu_type", path, &gtype, &err), 0);
	assert_int_equal(hb_json_num(j, "lbs", path, 1, 1e6, &lbs, &err), 0);
	assert_int_equal(hb_json_num(j, "num_models", path, 1, 100, &n, &err), 0);
	assert_int_equal(hb_json_num(j, "fwd_time", path, 0, 1e9, &fwd, &err), 0);
	assert_int_equal(hb_json_num(j, "bwd_time", path, 0, 1e9, &bwd, &err), 0);
	assert_int_equal(hb_json_num(j, "data_time", path, 0, 1e9, &data, &err), 0);
	assert_int_equal(hb_json_num(j, "update_time", path, 0, 1e9, &upd, &err), 0);
	assert_int_equal(hb_json_num(j, "copy_time", path, 0, 1e9, &copy, &err), 0);
	assert_int_equal(hb_json_num(j, "total_time", path, 0, 1e9, &total, &err), 0);
	g = hb_catalog_gpu(&c->cat, gtype);
	assert_non_null(g);
	assert_int_equal(hb_analytic_compute(g, m, (int)lbs, (int)n, &r, NULL, &err), 0);

	add(c, n == 1 ? "jabas-fb-1vsw" : "jabas-fb-nvsw", g->name, lbs, (int)n, fwd + bwd, 1e3 * (r.fwd_s + r.bwd_s),
	    "%s B=%g n=%g fwd+bwd ms", g->name, lbs, n);
	add(c, "jabas-fwd", g->name, lbs, (int)n, fwd, 1e3 * r.fwd_s, "%s B=%g n=%g fwd ms", g->name, lbs, n);
	add(c, "jabas-bwd", g->name, lbs, (int)n, bwd, 1e3 * r.bwd_s, "%s B=%g n=%g bwd ms", g->name, lbs, n);
	add(c, "jabas-data", g->name, lbs, (int)n, data, 1e3 * r.data_s, "%s B=%g n=%g data ms", g->name, lbs, n);
	add(c, "jabas-update", g->name, lbs, (int)n, upd, 1e3 * r.update_s, "%s B=%g n=%g update ms", g->name, lbs,
	    n);
	if (n > 1)
		add(c, "jabas-copy", g->name, lbs, (int)n, copy, 1e3 * r.copy_s, "%s B=%g n=%g copy ms", g->name, lbs,
		    n);
	add(c, "jabas-total", g->name, lbs, (int)n, total, 1e3 * r.total_s, "%s B=%g n=%g total ms", g->name, lbs,
	    n);
	if (strcmp(g->name, "v100") == 0 && lbs == 32 && n == 1) {
		c->v100_fb32 = 1e3 * (r.fwd_s + r.bwd_s);
		c->v100_fb32_meas = fwd + bwd;
	}
	cJSON_Delete(j);
}

static void jabas_mem_file(struct calib *c, const char *path)
{
	struct hb_error err = { 0 };
	cJSON *j = hb_json_load_file(path, &err);
	const struct hb_model *m = hb_catalog_model(&c->cat, "resnet50");
	const struct hb_gpu *g;
	const char *gtype;
	double lbs, nmax;
	int prev = 0;

	assert_non_null(j);
	assert_int_equal(hb_json_str(j, "gpu_type", path, &gtype, &err), 0);
	assert_int_equal(hb_json_num(j, "lbs", path, 1, 1e6, &lbs, &err), 0);
	assert_int_equal(hb_json_num(j, "max_num_models", path, 0, 100, &nmax, &err), 0);
	g = hb_catalog_gpu(&c->cat, gtype);
	assert_non_null(g);
	/* The profiler walks the batches upward with a non-increasing cap. */
	for (long b = m->min_lbs; b <= (long)lbs; b += m->min_lbs)
		prev = hb_analytic_max_vsw(g, m, (int)b, prev);
	add(c, "jabas-nmax", g->name, lbs, 1, nmax, prev, "%s B=%g n_max", g->name, lbs);
	cJSON_Delete(j);
}

/* Walk <dir>/<lbs>/<node>/<file>.json and hand every file to fn. */
static void walk(struct calib *c, const char *dir, void (*fn)(struct calib *, const char *))
{
	DIR *d1 = opendir(dir);
	struct dirent *e1;

	assert_non_null(d1);
	while ((e1 = readdir(d1))) {
		char p1[2048];
		DIR *d2;
		struct dirent *e2;

		if (e1->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(p1, sizeof(p1), "%s/%s", dir, e1->d_name) >= sizeof(p1))
			continue;
		if (!(d2 = opendir(p1)))
			continue;
		while ((e2 = readdir(d2))) {
			char p2[3072];
			DIR *d3;
			struct dirent *e3;

			if (e2->d_name[0] == '.')
				continue;
			snprintf(p2, sizeof(p2), "%s/%s", p1, e2->d_name);
			if (!(d3 = opendir(p2)))
				continue;
			while ((e3 = readdir(d3))) {
				char p3[4096];
				size_t len = strlen(e3->d_name);

				if (len < 6 || strcmp(e3->d_name + len - 5, ".json") != 0)
					continue;
				snprintf(p3, sizeof(p3), "%s/%s", p2, e3->d_name);
				fn(c, p3);
			}
			closedir(d3);
		}
		closedir(d2);
	}
	closedir(d1);
}

/* x_ms,t_ms lines; x was computed with the data's own K, from which the
 * tensor size d follows; the analytic fit predicts t at the catalog's link. */
static void jabas_comm(struct calib *c, const char *scope, double k_data, int n_gpus, const char *link,
		       double k_link)
{
	char path[2048], line[256];
	struct hb_error err = { 0 };
	struct hb_allreduce_fit fit;
	FILE *f;

	snprintf(path, sizeof(path), "%s/comm_profile_data/%s_comm_profile_data.txt", jabas_dir, scope);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(hb_analytic_allreduce_fit(scope, link, k_link, &fit, &err), 0);
	while (fgets(line, sizeof(line), f)) {
		char *comma = strchr(line, ',');
		double x, t, d, xl;

		if (!comma)
			continue;
		*comma = '\0';
		assert_int_equal(hb_parse_double(line, &x), 0);
		assert_int_equal(hb_parse_double(comma + 1, &t), 0);
		d = x / 1000.0 * k_data / (4.0 * (n_gpus - 1) / n_gpus);
		xl = d * 4.0 * (n_gpus - 1) / n_gpus / k_link * 1000.0;
		add(c, "jabas-allreduce", scope, d / 1048576.0, n_gpus, t, fit.alpha * xl + fit.beta,
		    "%s %s N=%d %.1f MiB ms", scope, link, n_gpus, d / 1048576.0);
	}
	fclose(f);
}

/* ----------------------------------------------------------------- Pollux */

static void pollux_app(struct calib *c, const char *app)
{
	static const char *const cols[] = { "placement", "local_bsz", "step_time", "sync_time", NULL };
	char path[2048], group[32];
	struct hb_error err = { 0 };
	struct hb_csv csv;
	int idx[4], rc;
	const struct hb_gpu *g = hb_catalog_gpu(&c->cat, "t4");
	const struct hb_model *m = hb_catalog_model(&c->cat, app);

	assert_non_null(g);
	assert_non_null(m);
	snprintf(path, sizeof(path), "%s/profiles/%s/placements.csv", pollux_dir, app);
	snprintf(group, sizeof(group), "pollux-%s", app);
	assert_int_equal(hb_csv_open(&csv, path, &err), 0);
	assert_int_equal(hb_csv_header(&csv, cols, idx, &err), 0);
	while ((rc = hb_csv_next(&csv, &err)) == 1) {
		const char *pl;
		long bs;
		double step, sync;
		struct hb_compute_row r;

		assert_int_equal(hb_csv_str(&csv, idx[0], &pl, &err), 0);
		if (strcmp(pl, "1") != 0)
			continue;
		assert_int_equal(hb_csv_long(&csv, idx[1], &bs, &err), 0);
		assert_int_equal(hb_csv_double(&csv, idx[2], &step, &err), 0);
		assert_int_equal(hb_csv_double(&csv, idx[3], &sync, &err), 0);
		assert_int_equal(hb_analytic_compute(g, m, (int)bs, 1, &r, NULL, &err), 0);
		add(c, group, "t4", (double)bs, 1, 1e3 * (step - sync), 1e3 * r.total_s, "t4 %s B=%ld step-sync ms",
		    app, bs);
	}
	assert_int_equal(rc, 0);
	hb_csv_close(&csv);
}

/* ------------------------------------------------------------------ tests */

static int setup(void **state)
{
	struct calib *c = calloc(1, sizeof(*c));
	struct hb_error err = { 0 };
	char dir[2048];
	static const char *const apps[] = { "imagenet", "cifar10", "bert", "deepspeech2", "yolov3", "ncf" };

	if (!c || hb_catalog_load_builtin(&c->cat, &err) != 0) {
		fprintf(stderr, "catalog: %s\n", err.msg);
		free(c);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s/cluster_comp_profile_data", jabas_dir);
	walk(c, dir, jabas_comp_file);
	snprintf(dir, sizeof(dir), "%s/cluster_mem_profile_data", jabas_dir);
	walk(c, dir, jabas_mem_file);
	/* The artifact's data: intra 4 GPUs at 15.75 GB/s; inter 2 nodes x 4 with
	 * x computed at 7 GB/s while the cluster (jabas-quickstart) says ib-100g
	 * at 12.5 GB/s (notes/jabas.md 10.2). */
	jabas_comm(c, "intra", 15.75e9, 4, "pcie3-x16", 15.75e9);
	jabas_comm(c, "inter", 7e9, 8, "ib-100g", 12.5e9);
	for (size_t i = 0; i < sizeof(apps) / sizeof(apps[0]); i++)
		pollux_app(c, apps[i]);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct calib *c = *state;

	hb_catalog_free(&c->cat);
	free(c);
	return 0;
}

static int group_rank(const char *group)
{
	for (int t = 0; t < NTOL; t++)
		if (strcmp(tolerances[t].group, group) == 0)
			return t;
	return NTOL;
}

/* Table order: group as listed in tolerances[], then GPU (or scope), batch
 * and VSWs; the directory order of the data files is arbitrary. */
static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	int gx = group_rank(x->group), gy = group_rank(y->group), k;

	if (gx != gy)
		return gx < gy ? -1 : 1;
	if ((k = strcmp(x->key, y->key)) != 0)
		return k;
	if (x->bs != y->bs)
		return x->bs < y->bs ? -1 : 1;
	return (x->n > y->n) - (x->n < y->n);
}

static void test_print_and_check_groups(void **state)
{
	struct calib *c = *state;
	int failed = 0;

	qsort(c->pts, (size_t)c->n, sizeof(c->pts[0]), cmp_point);

	printf("%-20s %-40s %12s %12s %8s\n", "GROUP", "POINT", "MEASURED", "ANALYTIC", "ERR_%");
	for (int i = 0; i < c->n; i++)
		printf("%-20s %-40s %12.3f %12.3f %+8.1f\n", c->pts[i].group, c->pts[i].label, c->pts[i].measured,
		       c->pts[i].analytic, err_pct(&c->pts[i]));
	printf("\n%-20s %6s %10s %10s %10s %10s\n", "GROUP", "POINTS", "MAX_ERR_%", "TOL", "MEAN_ERR_%", "TOL");
	for (int t = 0; t < NTOL; t++) {
		const struct tolerance *tol = &tolerances[t];
		double maxe = 0, sum = 0;
		int n = 0;

		for (int i = 0; i < c->n; i++) {
			double e = fabs(err_pct(&c->pts[i]));

			if (strcmp(c->pts[i].group, tol->group) != 0)
				continue;
			n++;
			sum += e;
			if (e > maxe)
				maxe = e;
		}
		printf("%-20s %6d %10.1f %10.1f %10.1f %10.1f%s\n", tol->group, n, maxe, tol->max_abs_pct,
		       n ? sum / n : 0.0, tol->mean_abs_pct,
		       (n < tol->min_points || maxe > tol->max_abs_pct + 1e-9 ||
			(n && sum / n > tol->mean_abs_pct + 1e-9)) ? "  FAIL" : "");
		if (n < tol->min_points || maxe > tol->max_abs_pct + 1e-9 || (n && sum / n > tol->mean_abs_pct + 1e-9))
			failed++;
	}
	assert_int_equal(failed, 0);
}

/* The acceptance criterion: ResNet-50 / V100 / 32 / 1 VSW fwd+bwd = 98.7 ms. */
static void test_v100_resnet50_b32_within_15pct(void **state)
{
	struct calib *c = *state;

	printf("V100 ResNet-50 B=32 n=1 fwd+bwd: measured %.2f ms, analytic %.2f ms (%+.2f %%)\n", c->v100_fb32_meas,
	       c->v100_fb32, 100.0 * (c->v100_fb32 - c->v100_fb32_meas) / c->v100_fb32_meas);
	assert_true(fabs(c->v100_fb32_meas - 98.706) < 0.01);
	assert_true(fabs(c->v100_fb32 - 98.706) <= 0.15 * 98.706);
}

/* Max local batch follows the n_max table: V100 128, P100 160. */
static void test_max_local_batch(void **state)
{
	struct calib *c = *state;
	const struct hb_model *m = hb_catalog_model(&c->cat, "resnet50");

	assert_int_equal(hb_analytic_max_local_bs(hb_catalog_gpu(&c->cat, "v100"), m), 128);
	assert_int_equal(hb_analytic_max_local_bs(hb_catalog_gpu(&c->cat, "p100"), m), 160);
}

/* The multi-VSW gain at local batch 32 against the artifact's fitted
 * normalised throughput (notes/jabas.md 2.4: V100 0.124 ln n + 1.0, P100
 * 0.078 ln n + 1.01): the coefficients within 0.03. */
static void test_vsw_gain_coefficients(void **state)
{
	struct calib *c = *state;
	const struct hb_model *m = hb_catalog_model(&c->cat, "resnet50");
	struct hb_error err = { 0 };
	struct hb_compute_row r;
	struct hb_analytic_breakdown bv, bp;

	assert_int_equal(hb_analytic_compute(hb_catalog_gpu(&c->cat, "v100"), m, 32, 3, &r, &bv, &err), 0);
	assert_int_equal(hb_analytic_compute(hb_catalog_gpu(&c->cat, "p100"), m, 32, 4, &r, &bp, &err), 0);
	printf("vsw a at B=32: V100 %.3f (artifact fit 0.124), P100 %.3f (0.078)\n", bv.vsw_a, bp.vsw_a);
	assert_true(fabs(bv.vsw_a - 0.124) < 0.03);
	assert_true(fabs(bp.vsw_a - 0.078) < 0.03);
}

int main(void)
{
	const char *shared = getenv("HB_SHARED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_print_and_check_groups),
		cmocka_unit_test(test_v100_resnet50_b32_within_15pct),
		cmocka_unit_test(test_max_local_batch),
		cmocka_unit_test(test_vsw_gain_coefficients),
	};

	if (!shared || !*shared) {
		fprintf(stderr, "HB_SHARED is not set: skipped\n");
		return 77;
	}
	snprintf(jabas_dir, sizeof(jabas_dir), "%s/data/jabas/resnet50-quickstart", shared);
	snprintf(pollux_dir, sizeof(pollux_dir), "%s/data/pollux", shared);
	if (!hb_path_is_dir(jabas_dir) || !hb_path_is_dir(pollux_dir)) {
		fprintf(stderr, "%s or %s is absent: skipped\n", jabas_dir, pollux_dir);
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
