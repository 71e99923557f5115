/* The Eq. 3 fit `hetbatch profile allreduce` stores reproduces JABAS's fit of
 * its shipped communication profile (notes/jabas.md 2.3 item 4: intra
 * alpha 1.417, beta 1.209 ms; inter alpha 0.716, beta 3.948 ms).
 *
 * The artifact's measurements ($HB_SHARED/data/jabas/resnet50-quickstart/
 * comm_profile_data/{intra,inter}_comm_profile_data.txt, lines
 * "theoretical_ms,measured_ms") go in as the sweep's result would hold them
 * (bytes, per-launch time, N) and are written by hb_allreduce_store, the
 * profiler's own path: run row, rows, fit.  The sizes recovered are JABAS's
 * bucket caps, the profiler's default sizes (intra: N = 4, K = 15.75e9;
 * inter: N = 8, K = 7e9, the bandwidth under which the shipped x-values are
 * whole MiB, notes' caveat).  The importer's fit of the same files (tests/
 * import covers it on its own) must agree to rounding.  Exit 77 (skipped)
 * when the data is absent. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "allreduce.h"
#include "import.h"
#include "profdb.h"
#include "strutil.h"

#define TOL 0.005  /* ms, on alpha and beta as the artifact prints them (3 decimals) */

static char tmpdir[256];
static char comm_dir[1100], jabas_dir[1024];

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

/* The artifact's file as a sweep result on n GPUs at bandwidth k. */
static void read_comm(const char *scope, int n, double k, struct hb_ar_result *r)
{
	char path[1200], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s_comm_profile_data.txt", comm_dir, scope);
	assert_non_null(f = fopen(path, "r"));
	memset(r, 0, sizeof(*r));
	hb_strlcpy(r->scope, scope, sizeof(r->scope));
	hb_strlcpy(r->source, "events", sizeof(r->source));
	hb_strlcpy(r->method, "JABAS artifact data", sizeof(r->method));
	hb_strlcpy(r->run.kind, "profile", sizeof(r->run.kind));
	hb_strlcpy(r->run.backend, "cuda", sizeof(r->run.backend));
	r->n_gpus = n;
	r->nhosts = strcmp(scope, "intra") == 0 ? 1 : 2;
	while (fgets(line, sizeof(line), f)) {
		double x_ms, t_ms;

		if (sscanf(line, "%lf,%lf", &x_ms, &t_ms) != 2)
			continue;
		assert_true(r->npoints < HB_AR_MAX_SIZES);
		/* invert x_ms = d 4(N-1)/N / K * 1000 */
		hb_allreduce_point(x_ms / 1000.0 * k * n / (4.0 * (n - 1)), t_ms / 1000.0, n, &r->points[r->npoints++]);
	}
	fclose(f);
}

static void check(const char *scope, int n, double k, const char *link, double alpha, double beta)
{
	struct hb_profdb *db = fresh_db("profile.db");
	struct hb_ar_result *r = calloc(1, sizeof(*r));
	struct hb_allreduce_fit fit, stored;
	struct hb_error err = { 0 };
	double sizes[HB_AR_MAX_SIZES];
	int fitted = 0, found = 0, nsizes = hb_allreduce_jabas_sizes(sizes, HB_AR_MAX_SIZES);

	assert_non_null(r);
	read_comm(scope, n, k, r);
	/* the shipped sizes are the profiler's default sizes */
	assert_int_equal(r->npoints, nsizes);
	for (int i = 0; i < nsizes; i++)
		if (fabs(r->points[i].bytes / sizes[i] - 1) > 1e-9)
			fail_msg("%s line %d: %.1f bytes, expected %.0f", scope, i + 1, r->points[i].bytes, sizes[i]);
	/* the store rounds nothing: give it the exact sizes as the sweep would */
	for (int i = 0; i < nsizes; i++)
		r->points[i].bytes = sizes[i];

	assert_int_equal(hb_allreduce_store(db, r, link, k, &fit, &fitted, NULL, &err), 0);
	assert_int_equal(fitted, 1);
	printf("%s %s: alpha %.4f beta %.4f ms r2 %.4f (JABAS: %.3f, %.3f)\n", scope, link, fit.alpha, fit.beta,
	       fit.r2, alpha, beta);
	assert_true(fabs(fit.alpha - alpha) < TOL);
	assert_true(fabs(fit.beta - beta) < TOL);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, scope, link, &stored, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(stored.source, "events");
	assert_true(stored.alpha == fit.alpha && stored.beta == fit.beta && stored.bandwidth == k);
	hb_profdb_close(db);
	free(r);
}

static void test_intra(void **state)
{
	(void)state;
	check("intra", 4, 15.75e9, "pcie3-x16", 1.417, 1.209);
}

static void test_inter(void **state)
{
	(void)state;
	check("inter", 8, 7e9, "ib-56g", 0.716, 3.948);
}

/* The importer (cluster_info's K, 12.5e9 for inter) and the profiler's path
 * fit the same x-values: the same alpha and beta. */
static void test_same_as_importer(void **state)
{
	struct hb_profdb *db = fresh_db("import.db");
	struct hb_import_stats *st = calloc(1, sizeof(*st));
	struct hb_error err = { 0 };
	static const struct {
		const char *scope, *import_link, *link;
		int n;
		double k;
	} cases[] = { { "intra", "pcie3-x16", "pcie3-x16", 4, 15.75e9 }, { "inter", "ib-100g", "ib-56g", 8, 7e9 } };

	(void)state;
	assert_non_null(st);
	assert_int_equal(hb_import_jabas(db, NULL, jabas_dir, st, &err), 0);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct hb_profdb *mine = fresh_db("mine.db");
		struct hb_ar_result *r = calloc(1, sizeof(*r));
		struct hb_allreduce_fit imp, fit;
		int found = 0, fitted = 0;

		assert_non_null(r);
		assert_int_equal(hb_profdb_get_allreduce_fit(db, cases[c].scope, cases[c].import_link, &imp, &found,
							     &err), 0);
		assert_int_equal(found, 1);
		read_comm(cases[c].scope, cases[c].n, cases[c].k, r);
		assert_int_equal(hb_allreduce_store(mine, r, cases[c].link, cases[c].k, &fit, &fitted, NULL, &err), 0);
		assert_true(fabs(fit.alpha - imp.alpha) < 1e-9);
		assert_true(fabs(fit.beta - imp.beta) < 1e-9);
		assert_true(fabs(fit.r2 - imp.r2) < 1e-9);
		hb_profdb_close(mine);
		free(r);
	}
	hb_profdb_close(db);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intra),
		cmocka_unit_test(test_inter),
		cmocka_unit_test(test_same_as_importer),
	};
	const char *shared = getenv("HB_SHARED");
	struct stat sb;
	char cmd[300];
	int rc;

	if (!shared) {
		fprintf(stderr, "HB_SHARED is not set (run through meson test): skipped\n");
		return 77;
	}
	snprintf(jabas_dir, sizeof(jabas_dir), "%s/data/jabas/resnet50-quickstart", shared);
	snprintf(comm_dir, sizeof(comm_dir), "%s/comm_profile_data", jabas_dir);
	if (stat(comm_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "%s is absent: skipped\n", comm_dir);
		return 77;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-allreduce-jabas-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return rc;
}
