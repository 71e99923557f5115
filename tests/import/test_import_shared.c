/* Importers on the published data in $HB_SHARED/data (read in place): every
 * data line arrives, sample values match the files, and the JABAS all-reduce
 * fits reproduce the artifact's (notes/jabas.md 2.3).  Exit 77 (skipped)
 * when the data is absent. */
#include <dirent.h>
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
#include <cjson/cJSON.h>

#include "catalog.h"
#include "import.h"
#include "profdb.h"
#include "strutil.h"

static char tmpdir[256];
static char pollux_dir[1024], jabas_dir[1024];
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

static int is_dir(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Independent counting: non-blank lines after the header; *ones = lines
 * whose `placement` column is "1" (when ones is not NULL). */
static long data_lines(const char *path, long *ones)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	long n = -1;
	int col = -1;

	assert_non_null(f);
	if (ones)
		*ones = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *field;
		int i = 0;

		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		if (n++ < 0) {
			for (field = strtok(p, ","); field; field = strtok(NULL, ","), i++)
				if (strcmp(field, "placement") == 0)
					col = i;
			continue;
		}
		if (ones && col >= 0) {
			for (field = strtok(p, ","); field && i < col; field = strtok(NULL, ","))
				i++;
			*ones += field && strcmp(field, "1") == 0;
		}
	}
	fclose(f);
	return n;
}

/* Files under dir (recursively) whose name ends with suffix. */
static int count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[2048];
		size_t len = strlen(e->d_name), sl = strlen(suffix);

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (is_dir(path))
			n += count_files(path, suffix);
		else if (len >= sl && strcmp(e->d_name + len - sl, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static int has_warning(const struct hb_import_stats *s, const char *needle)
{
	for (int i = 0; i < s->nwarn; i++)
		if (strstr(s->warn[i], needle))
			return 1;
	return 0;
}

static void test_pollux_published(void **state)
{
	static const char *const apps[] = { "bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3" };
	struct hb_profdb *db = fresh_db("pollux.db");
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	long want_pl = 0, want_sc = 0, want_gs = 0, want_cp = 0, got;
	int found = 0;

	(void)state;
	assert_int_equal(hb_import_pollux(db, &cat, pollux_dir, &st, &err), 0);
	for (size_t a = 0; a < sizeof(apps) / sizeof(apps[0]); a++) {
		char dir[2048], path[2304];
		long pl, sc, gs = 0, ones;
		DIR *d;
		struct dirent *e;
		struct hb_placement_row *prow;
		struct hb_scalability_row *srow;
		struct hb_gradstats_row *grow;
		struct hb_compute_row *crow;
		int n;

		snprintf(dir, sizeof(dir), "%s/%s", pollux_dir, apps[a]);
		snprintf(path, sizeof(path), "%s/placements.csv", dir);
		pl = data_lines(path, &ones);
		snprintf(path, sizeof(path), "%s/scalability.csv", dir);
		sc = data_lines(path, NULL);
		assert_non_null(d = opendir(dir));
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, "validation-", 11) == 0) {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				gs += data_lines(path, NULL);
			}
		closedir(d);
		/* Per application, as the readers return it. */
		assert_int_equal(hb_profdb_get_placements(db, apps[a], &prow, &n, &err), 0);
		assert_int_equal(n, pl);
		for (int i = 0; i < n; i++)
			if (strcmp(apps[a], "imagenet") == 0 && strcmp(prow[i].placement, "1") == 0 &&
			    prow[i].local_bs == 20) {
				/* The file's first data row: 1,20,0.14740917682647706,... */
				assert_true(fabs(prow[i].step_s - 0.14740917682647706) < 1e-17);
				assert_true(fabs(prow[i].sync_s - 0.0012090879917144776) < 1e-18);
				assert_string_equal(prow[i].gpu, "t4");
				found = 1;
			}
		free(prow);
		assert_int_equal(hb_profdb_get_scalability(db, apps[a], &srow, &n, &err), 0);
		assert_int_equal(n, sc);
		free(srow);
		assert_int_equal(hb_profdb_get_gradstats(db, apps[a], &grow, &n, &err), 0);
		assert_int_equal(n, gs);
		if (strcmp(apps[a], "imagenet") == 0) {
			/* validation-200.csv, first row (batches sort 200 < 400 < ...). */
			assert_int_equal(grow[0].batch, 200);
			assert_int_equal(grow[0].epoch, 0);
			assert_true(grow[0].iteration == 6405 && grow[0].progress == 6406.0);
			assert_true(fabs(grow[0].grad_sqr - 1.1263841568054573) < 1e-15);
			assert_true(fabs(grow[0].metric - 0.15562) < 1e-15);
		}
		free(grow);
		assert_int_equal(hb_profdb_get_compute(db, "t4", apps[a], &crow, &n, &err), 0);
		assert_int_equal(n, ones);
		free(crow);
		want_pl += pl;
		want_sc += sc;
		want_gs += gs;
		want_cp += ones;
	}
	assert_true(found);
	assert_int_equal(st.placement, want_pl);
	assert_int_equal(st.scalability, want_sc);
	assert_int_equal(st.gradstats, want_gs);
	assert_int_equal(st.compute, want_cp);
	assert_int_equal(hb_profdb_count(db, "placement", &got, &err), 0);
	assert_int_equal(got, want_pl);
	assert_int_equal(hb_profdb_count(db, "scalability", &got, &err), 0);
	assert_int_equal(got, want_sc);
	assert_int_equal(hb_profdb_count(db, "gradstats", &got, &err), 0);
	assert_int_equal(got, want_gs);
	assert_int_equal(hb_profdb_count(db, "compute", &got, &err), 0);
	assert_int_equal(got, want_cp);
	/* The six applications are catalog models and the T4 a catalog GPU. */
	assert_false(has_warning(&st, "not in the catalog"));
	hb_profdb_close(db);
}

/* fwd_time (ms) of one comp profile, read independently with cJSON. */
static double file_fwd_ms(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n;
	cJSON *root, *v;
	double ms;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_non_null(root = cJSON_Parse(buf));
	assert_non_null(v = cJSON_GetObjectItem(root, "fwd_time"));
	ms = v->valuedouble;
	cJSON_Delete(root);
	return ms;
}

static void test_jabas_published(void **state)
{
	struct hb_profdb *db = fresh_db("jabas.db");
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	struct hb_compute_row *cr;
	struct hb_allreduce_fit fit;
	struct hb_allreduce_row *ar;
	char path[2048];
	double *b, fwd_ms;
	int n, found, ncomp, nmem, maxbs;

	(void)state;
	snprintf(path, sizeof(path), "%s/cluster_comp_profile_data", jabas_dir);
	ncomp = count_files(path, "_comp_profile.json");
	snprintf(path, sizeof(path), "%s/cluster_mem_profile_data", jabas_dir);
	nmem = count_files(path, "max_memory_profile_info.json");
	assert_int_equal(ncomp, 14);
	assert_int_equal(hb_import_jabas(db, &cat, jabas_dir, &st, &err), 0);
	assert_int_equal(st.compute, ncomp);
	assert_int_equal(st.memory, nmem);
	assert_int_equal(st.bucket, 5);
	assert_int_equal(st.allreduce, 18);
	assert_int_equal(st.allreduce_fit, 2);

	/* V100, B_L 32, 1 VSW: fwd 32.35 ms (notes/jabas.md 2.4) as in the file. */
	snprintf(path, sizeof(path), "%s/cluster_comp_profile_data/32/node0/resnet50_32_1_comp_profile.json",
		 jabas_dir);
	fwd_ms = file_fwd_ms(path);
	assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &cr, &n, &err), 0);
	assert_int_equal(n, 6); /* node0's files */
	assert_int_equal(cr[0].local_bs, 32);
	assert_int_equal(cr[0].n_vsw, 1);
	assert_true(fabs(cr[0].fwd_s * 1000 - fwd_ms) < 1e-9);
	assert_true(fabs(cr[0].fwd_s * 1000 - 32.35) < 0.01);
	assert_true(fabs(cr[0].bwd_s * 1000 - 66.35) < 0.01);
	assert_true(fabs(cr[0].bn_s - 0.00629) < 1e-12);
	assert_int_equal(cr[1].n_vsw, 3);
	assert_true(fabs(cr[1].fwd_s * 1000 - 87.01) < 0.01);
	free(cr);
	assert_int_equal(hb_profdb_get_compute(db, "p100", "resnet50", &cr, &n, &err), 0);
	assert_int_equal(n, 8); /* node1's files */
	free(cr);
	/* Profiled limits (notes 2.4): max B_L 128 on V100, 160 on P100. */
	assert_int_equal(hb_profdb_max_local_bs(db, "v100", "resnet50", &maxbs, &err), 0);
	assert_int_equal(maxbs, 128);
	assert_int_equal(hb_profdb_max_local_bs(db, "p100", "resnet50", &maxbs, &err), 0);
	assert_int_equal(maxbs, 160);
	/* Buckets: MiB -> bytes, reduction order. */
	assert_int_equal(hb_profdb_get_buckets(db, "resnet50", &b, &n, &err), 0);
	assert_int_equal(n, 5);
	assert_true(fabs(b[0] - 7.81 * 1048576.0) < 1e-6);
	assert_true(fabs(b[4] - 9.2 * 1048576.0) < 1e-6);
	free(b);

	/* The artifact's fits within 0.5 %. */
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "intra", "pcie3-x16", &fit, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_true(fabs(fit.alpha / 1.417 - 1) < 0.005 && fabs(fit.beta / 1.209 - 1) < 0.005);
	assert_true(fit.bandwidth == 15.75e9);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "inter", "ib-100g", &fit, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_true(fabs(fit.alpha / 0.716 - 1) < 0.005 && fabs(fit.beta / 3.948 - 1) < 0.005);
	assert_true(fit.bandwidth == 12.5e9);
	/* Intra sizes come back as the profiler's bucket caps (1 MiB first);
	 * the inter ones only would at 7 GB/s, which the import reports. */
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "pcie3-x16", &ar, &n, &err), 0);
	assert_int_equal(n, 9);
	assert_int_equal(ar[0].n_gpus, 4);
	assert_true(fabs(ar[0].bytes - 1048576.0) < 1e-3 && fabs(ar[8].bytes - 150 * 1048576.0) < 1e-2);
	free(ar);
	assert_int_equal(hb_profdb_get_allreduce(db, "inter", "ib-100g", &ar, &n, &err), 0);
	assert_int_equal(n, 9);
	assert_int_equal(ar[0].n_gpus, 8);
	assert_true(fabs(ar[0].bytes - 1048576.0 * 12.5 / 7) < 1e-2);
	free(ar);
	assert_true(has_warning(&st, "K = 7e+09"));
	assert_false(has_warning(&st, "not in the catalog"));
	hb_profdb_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pollux_published),
		cmocka_unit_test(test_jabas_published),
	};
	struct hb_error err = { 0 };
	const char *shared = getenv("HB_SHARED");
	char cmd[300];
	int rc;

	if (!shared) {
		fprintf(stderr, "HB_SHARED is not set: skipped\n");
		return 77;
	}
	snprintf(pollux_dir, sizeof(pollux_dir), "%s/data/pollux/profiles", shared);
	snprintf(jabas_dir, sizeof(jabas_dir), "%s/data/jabas/resnet50-quickstart", shared);
	if (!is_dir(pollux_dir) || !is_dir(jabas_dir)) {
		fprintf(stderr, "%s or %s is absent: skipped\n", pollux_dir, jabas_dir);
		return 77;
	}
	if (hb_catalog_load_builtin(&cat, &err) < 0) {
		fprintf(stderr, "built-in catalog: %s\n", err.msg);
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-import-shared-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	hb_catalog_free(&cat);
	return rc;
}
