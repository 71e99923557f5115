/*
 * The cached default profile database (profiler/default_db.h): where it
 * lives, built once and then reused, rebuilt when the catalog, the
 * generator version record or the file itself is wrong, never left
 * half-built, and opened read-only for commands; an older version's file in
 * the cache (an upgrade) is neither read nor in the way.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "analytic.h"
#include "catalog.h"
#include "default_db.h"
#include "fileio.h"
#include "profdb.h"

static struct hb_catalog cat;    /* the built-in catalog */
static struct hb_catalog small;  /* its first 2 GPUs and first model: quick rebuilds */
static int small_ngpus, small_nmodels;
static char dir[256];

/* Load the built-in catalog and keep only its first GPUs and models (their
 * structs own nothing, so the counts can shrink and be restored for free). */
static int load_small(struct hb_catalog *c, int *ngpus, int *nmodels, struct hb_error *err)
{
	if (hb_catalog_load_builtin(c, err) != 0)
		return -1;
	*ngpus = c->ngpus;
	*nmodels = c->nmodels;
	c->ngpus = 2;
	c->nmodels = 1;
	return 0;
}

static void free_small(struct hb_catalog *c, int ngpus, int nmodels)
{
	c->ngpus = ngpus;
	c->nmodels = nmodels;
	hb_catalog_free(c);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/hb-test-default-db-%ld", (long)getpid());
	if (hb_mkdir_p(dir, &err) != 0 || hb_catalog_load_builtin(&cat, &err) != 0 ||
	    load_small(&small, &small_ngpus, &small_nmodels, &err) != 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	setenv(HB_DEFAULT_DB_ENV, dir, 1);
	return 0;
}

static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[512];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(path);
}

static int teardown(void **state)
{
	(void)state;
	hb_catalog_free(&cat);
	free_small(&small, small_ngpus, small_nmodels);
	remove_dir(dir);
	return 0;
}

/* Names in dir other than the database itself (temporaries, -wal, -shm). */
static int stray_files(const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, keep) != 0) {
			fprintf(stderr, "stray file: %s\n", e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static void test_path_from_environment(void **state)
{
	struct hb_error err = { 0 };
	char buf[512], want[512];
	char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	(void)state;
	assert_int_equal(hb_default_profdb_path(buf, sizeof(buf), &err), 0);
	snprintf(want, sizeof(want), "%s/profiles-analytic-v%d.db", dir, HB_ANALYTIC_VERSION);
	assert_string_equal(buf, want);

	unsetenv(HB_DEFAULT_DB_ENV);
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	assert_int_equal(hb_default_profdb_path(buf, sizeof(buf), &err), 0);
	snprintf(want, sizeof(want), "/xdg/hetbatch/profiles-analytic-v%d.db", HB_ANALYTIC_VERSION);
	assert_string_equal(buf, want);

	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/someone", 1);
	assert_int_equal(hb_default_profdb_path(buf, sizeof(buf), &err), 0);
	snprintf(want, sizeof(want), "/home/someone/.cache/hetbatch/profiles-analytic-v%d.db", HB_ANALYTIC_VERSION);
	assert_string_equal(buf, want);

	unsetenv("HOME");
	assert_int_equal(hb_default_profdb_path(buf, sizeof(buf), &err), -1);
	assert_non_null(strstr(err.msg, HB_DEFAULT_DB_ENV));

	if (saved_home)
		setenv("HOME", saved_home, 1);
	free(saved_home);
	setenv(HB_DEFAULT_DB_ENV, dir, 1);
}

static void test_build_then_reuse(void **state)
{
	struct hb_error err = { 0 };
	struct hb_default_db_info info;
	struct hb_profdb *db;
	struct stat st1, st2;
	char name[64];
	long count;

	(void)state;
	assert_int_equal(hb_default_profdb_ensure(&cat, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_string_equal(info.reason, "missing");
	assert_true(info.stats.compute_rows > 10000);
	assert_int_equal(stat(info.path, &st1), 0);
	snprintf(name, sizeof(name), "profiles-analytic-v%d.db", HB_ANALYTIC_VERSION);
	assert_int_equal(stray_files(name), 0);

	/* the second call finds it current and leaves the file alone */
	assert_int_equal(hb_default_profdb_ensure(&cat, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 0);
	assert_int_equal(stat(info.path, &st2), 0);
	assert_true(st1.st_ino == st2.st_ino && st1.st_mtime == st2.st_mtime && st1.st_size == st2.st_size);

	/* commands get it read-only, with the analytic rows in it */
	assert_int_equal(hb_default_profdb(&cat, NULL, &db, &err), 0);
	assert_int_equal(hb_profdb_count(db, "compute", &count, &err), 0);
	assert_true(count > 10000);
	assert_int_equal(hb_profdb_begin(db, &err), -1);
	hb_profdb_close(db);
	assert_int_equal(stray_files(name), 0);
}

static void test_rebuild_when_catalog_changes(void **state)
{
	struct hb_error err = { 0 };
	struct hb_default_db_info info;
	struct hb_catalog other = { 0 };
	struct hb_profdb *db;
	struct hb_compute_row *rows;
	int n, ng = 0, nm = 0;
	uint64_t h1, h2;

	(void)state;
	assert_int_equal(load_small(&other, &ng, &nm, &err), 0);
	h1 = hb_default_profdb_catalog_hash(&other);
	assert_true(h1 == hb_default_profdb_catalog_hash(&small));
	assert_true(h1 != hb_default_profdb_catalog_hash(&cat));
	other.gpus[0].fp32_tflops *= 2;  /* a faster "v100" */
	h2 = hb_default_profdb_catalog_hash(&other);
	assert_true(h1 != h2);

	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_non_null(strstr(info.reason, "catalog changed"));
	assert_int_equal(hb_default_profdb_ensure(&other, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_non_null(strstr(info.reason, "catalog changed"));
	assert_int_equal(hb_default_profdb(&other, NULL, &db, &err), 0);
	assert_int_equal(hb_profdb_get_compute(db, other.gpus[0].name, "resnet50", &rows, &n, &err), 0);
	assert_true(n > 0);
	{
		struct hb_compute_row r;

		assert_int_equal(hb_analytic_compute(&other.gpus[0], hb_catalog_model(&other, "resnet50"),
						     rows[0].local_bs, rows[0].n_vsw, &r, NULL, &err), 0);
		assert_true(fabs(rows[0].total_s - r.total_s) < 1e-12);
	}
	free(rows);
	hb_profdb_close(db);
	/* back to the first catalog: rebuilt again, then current */
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 0);
	free_small(&other, ng, nm);
}

static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void test_rebuild_on_stale_version_or_damage(void **state)
{
	struct hb_error err = { 0 };
	struct hb_default_db_info info;
	const char junk[] = "this is not a database";
	FILE *f;

	(void)state;
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	exec_sql(info.path, "UPDATE analytic_meta SET value = '0' WHERE key = 'generator_version';");
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_non_null(strstr(info.reason, "generator version 0"));

	exec_sql(info.path, "DROP TABLE analytic_meta;");
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);

	f = fopen(info.path, "w");
	assert_non_null(f);
	fwrite(junk, 1, sizeof(junk), f);
	fclose(f);
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 0);

	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 1, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_string_equal(info.reason, "forced");
}

static void test_explicit_paths(void **state)
{
	struct hb_error err = { 0 };
	struct hb_default_db_info info;
	struct hb_profdb *db = NULL;
	char path[512];

	(void)state;
	/* a user's database must exist; nothing is generated into it */
	snprintf(path, sizeof(path), "%s/missing.db", dir);
	assert_int_equal(hb_default_profdb(&small, path, &db, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "missing.db"));
	assert_false(hb_path_exists(path));

	/* an explicit default location, in a directory made on the way */
	snprintf(path, sizeof(path), "%s/sub/d.db", dir);
	assert_int_equal(hb_default_profdb_ensure(&small, path, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_string_equal(info.path, path);
	assert_int_equal(hb_default_profdb(&small, path, &db, &err), 0);
	hb_profdb_close(db);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sub", dir);
	rmdir(path);
}

static void copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	size_t n;
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A pid that is not running: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* Upgrading: the cache holds the previous version's database (its own name
 * and generator record) and the temporaries of a killed builder of it.  The
 * command builds and uses this version's file, removes the dead builder's
 * temporaries, and leaves the old file (an older hetbatch may share the
 * cache) and a live builder's temporary alone. */
static void test_older_version_in_cache(void **state)
{
	struct hb_error err = { 0 };
	struct hb_default_db_info info;
	struct hb_profdb *db;
	char old[512], dead[600], dead_j[600], live[600], sql[128], name[64];
	long count;
	pid_t pid;

	(void)state;
	if (HB_ANALYTIC_VERSION < 2)
		skip();
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	snprintf(old, sizeof(old), "%s/profiles-analytic-v%d.db", dir, HB_ANALYTIC_VERSION - 1);
	copy_file(info.path, old);
	snprintf(sql, sizeof(sql), "UPDATE analytic_meta SET value = '%d' WHERE key = 'generator_version';",
		 HB_ANALYTIC_VERSION - 1);
	exec_sql(old, sql);
	assert_int_equal(unlink(info.path), 0);
	pid = dead_pid();
	snprintf(dead, sizeof(dead), "%s.tmp.%ld", old, (long)pid);
	snprintf(dead_j, sizeof(dead_j), "%s.tmp.%ld-journal", old, (long)pid);
	snprintf(live, sizeof(live), "%s.tmp.%ld", old, (long)getppid());
	write_text(dead, "half a database");
	write_text(dead_j, "its journal");
	write_text(live, "a builder still at work");

	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 1);
	assert_string_equal(info.reason, "missing");
	snprintf(name, sizeof(name), "/profiles-analytic-v%d.db", HB_ANALYTIC_VERSION);
	assert_non_null(strstr(info.path, name));
	assert_false(hb_path_exists(dead));
	assert_false(hb_path_exists(dead_j));
	assert_true(hb_path_exists(live));
	assert_true(hb_path_exists(old));

	/* a reading command gets this version's rows, and the next call
	 * reuses the file */
	assert_int_equal(hb_default_profdb(&small, NULL, &db, &err), 0);
	assert_int_equal(hb_profdb_count(db, "compute", &count, &err), 0);
	assert_true(count > 0);
	hb_profdb_close(db);
	assert_int_equal(hb_default_profdb_ensure(&small, NULL, 0, &info, &err), 0);
	assert_int_equal(info.rebuilt, 0);
	unlink(live);
	unlink(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_from_environment),
		cmocka_unit_test(test_build_then_reuse),
		cmocka_unit_test(test_rebuild_when_catalog_changes),
		cmocka_unit_test(test_rebuild_on_stale_version_or_damage),
		cmocka_unit_test(test_explicit_paths),
		cmocka_unit_test(test_older_version_in_cache),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
