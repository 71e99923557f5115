/*
 * test_profdb_files.c: what a profile database leaves on disk and how it
 * is read (issue 16 items 5 and 7, issue 17 items 1 and 13).
 *
 *  - a read-write session leaves no -wal, -shm or -journal beside the file;
 *  - a read-only or immutable open creates nothing beside the file, so a
 *    database in a read-only directory can be read (the directory itself
 *    is made read-only where that binds: not as root);
 *  - a file an older hetbatch left in WAL mode goes back to the rollback
 *    journal on its next read-write open;
 *  - hb_profdb_remove_if_empty removes an empty database, keeps one with rows;
 *  - a layered set (user database over the analytic one) picks per key the
 *    best-ranked source over both files, and the first file on a tie, and
 *    hb_profdb_compute_origin says which file each pair came from.
 */
#include <dirent.h>
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

#include "profdb.h"
#include "strutil.h"

static char tmpdir[256];

/* A fresh directory under tmpdir, and a path in it. */
static void fresh_dir(const char *name, char *dir, size_t size)
{
	snprintf(dir, size, "%s/%s", tmpdir, name);
	assert_int_equal(mkdir(dir, 0755), 0);
}

/* Names in dir, sorted, joined by spaces ("a.db b.db"). */
static void listing(const char *dir, char *out, size_t size)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t len = 0;

	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.')
			len += (size_t)snprintf(out + len, size - len, "%s%s", len ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

static void put_compute(struct hb_profdb *db, const char *gpu, const char *model, int bs, double fwd,
			const char *source)
{
	struct hb_compute_row r;
	struct hb_error err = { 0 };

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.gpu, gpu, sizeof(r.gpu));
	hb_strlcpy(r.model, model, sizeof(r.model));
	hb_strlcpy(r.source, source, sizeof(r.source));
	r.local_bs = bs;
	r.n_vsw = 1;
	r.fwd_s = fwd;
	r.bwd_s = 2 * fwd;
	r.total_s = 3 * fwd;
	assert_int_equal(hb_profdb_put_compute(db, &r, &err), 0);
}

/* A database at path with one compute row per (gpu, source) given. */
static void make_db(const char *path, const char *const *rows, int n, double fwd)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };

	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0);
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	for (int i = 0; i < n; i++)
		put_compute(db, rows[2 * i], "resnet50", 32, fwd, rows[2 * i + 1]);
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	hb_profdb_close(db);
}

static void test_rw_session_leaves_one_file(void **state)
{
	static const char *const rows[] = { "v100", "events" };
	char dir[512], path[600], names[1024];

	(void)state;
	fresh_dir("rw", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.db", dir);
	make_db(path, rows, 1, 0.01);
	listing(dir, names, sizeof(names));
	assert_string_equal(names, "p.db");
}

static void test_readonly_open_creates_nothing(void **state)
{
	static const char *const rows[] = { "v100", "events" };
	char dir[512], path[600], names[1024];
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	struct hb_compute_row *got = NULL;
	int n = 0;

	(void)state;
	fresh_dir("ro", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.db", dir);
	make_db(path, rows, 1, 0.01);
	for (int mode = HB_PROFDB_READONLY; mode <= HB_PROFDB_IMMUTABLE; mode++) {
		assert_int_equal(hb_profdb_open(path, mode, &db, &err), 0);
		assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &got, &n, &err), 0);
		assert_int_equal(n, 1);
		free(got);
		listing(dir, names, sizeof(names)); /* while open, too */
		assert_string_equal(names, "p.db");
		assert_int_equal(hb_profdb_begin(db, &err), -1); /* read-only */
		hb_profdb_close(db);
		listing(dir, names, sizeof(names));
		assert_string_equal(names, "p.db");
	}
	/* A path a URI would misread ('?', '#', '%', spaces) still opens. */
	snprintf(path, sizeof(path), "%s/odd ?#%%name.db", dir);
	make_db(path, rows, 1, 0.01);
	assert_int_equal(hb_profdb_open(path, HB_PROFDB_READONLY, &db, &err), 0);
	hb_profdb_close(db);
	/* and a missing file read-only is an input error naming it */
	snprintf(path, sizeof(path), "%s/absent.db", dir);
	assert_int_equal(hb_profdb_open(path, HB_PROFDB_READONLY, &db, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(access(path, F_OK), -1);
}

/* Open path read-only where its directory cannot be written, and read the
 * row: 0 if that worked, 1 if not, 2 if the directory was writable. */
static int read_in_readonly_dir(const char *dir, const char *path)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	long n = 0;

	if (access(dir, W_OK) == 0)
		return 2;
	if (hb_profdb_open(path, HB_PROFDB_READONLY, &db, &err) < 0 || hb_profdb_count(db, "compute", &n, &err) < 0 ||
	    n != 1) {
		fprintf(stderr, "read-only directory: %s (n %ld)\n", err.msg, n);
		hb_profdb_close(db);
		return 1;
	}
	hb_profdb_close(db);
	return 0;
}

static void test_readonly_directory(void **state)
{
	static const char *const rows[] = { "v100", "events" };
	char dir[512], path[600], names[1024];
	int rc;

	(void)state;
	fresh_dir("rodir", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.db", dir);
	make_db(path, rows, 1, 0.01);
	assert_int_equal(chmod(dir, 0555), 0);
	if (geteuid() != 0) {
		rc = read_in_readonly_dir(dir, path);
	} else {
		/* root writes through chmod: read as the unprivileged user
		 * nobody instead, for whom the directory is read-only */
		pid_t pid;
		int status;

		assert_int_equal(chmod(tmpdir, 0755), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(setgid(65534) == 0 && setuid(65534) == 0 ? read_in_readonly_dir(dir, path) : 3);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (rc == 2 || rc == 3)
		print_message("skip read-only directory case: no user for whom %s is read-only\n", dir);
	else
		assert_int_equal(rc, 0);
	listing(dir, names, sizeof(names));
	assert_string_equal(names, "p.db");
	assert_int_equal(chmod(dir, 0755), 0);
}

static void test_wal_file_converted(void **state)
{
	static const char *const rows[] = { "v100", "events" };
	char dir[512], path[600], names[1024];
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	sqlite3 *raw;
	sqlite3_stmt *st;

	(void)state;
	fresh_dir("wal", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.db", dir);
	make_db(path, rows, 1, 0.01);
	/* what an older hetbatch left: journal_mode=WAL in the file header */
	assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, "PRAGMA journal_mode=WAL;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0);
	put_compute(db, "p100", "resnet50", 32, 0.02, "events");
	hb_profdb_close(db);
	listing(dir, names, sizeof(names));
	assert_string_equal(names, "p.db");
	assert_int_equal(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(raw, "PRAGMA journal_mode;", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "delete");
	sqlite3_finalize(st);
	sqlite3_close(raw);
}

static void test_remove_if_empty(void **state)
{
	static const char *const rows[] = { "v100", "events" };
	char dir[512], path[600];
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };

	(void)state;
	fresh_dir("empty", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/new.db", dir);
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0); /* schema only */
	hb_profdb_close(db);
	assert_int_equal(hb_profdb_remove_if_empty(path), 1);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/full.db", dir);
	make_db(path, rows, 1, 0.01);
	assert_int_equal(hb_profdb_remove_if_empty(path), 0);
	assert_int_equal(access(path, F_OK), 0);
	/* not a file: nothing to do */
	assert_int_equal(hb_profdb_remove_if_empty(dir), 0);
}

static void test_layers(void **state)
{
	/* user: v100 measured, p100 analytic at another value (a tie on
	 * source with the analytic file: the user's file wins) */
	static const char *const user_rows[] = { "v100", "import:jabas", "p100", "analytic" };
	static const char *const base_rows[] = { "v100", "analytic", "p100", "analytic", "t4", "analytic",
						  "t4", "events" };
	char dir[512], user[600], base[600], names[1024];
	struct hb_profdb_layer layers[2];
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	struct hb_compute_row *got = NULL;
	struct hb_profdb_origin o;
	int n = 0, found = 0;

	(void)state;
	fresh_dir("layers", dir, sizeof(dir));
	snprintf(user, sizeof(user), "%s/user.db", dir);
	snprintf(base, sizeof(base), "%s/base.db", dir);
	make_db(user, user_rows, 2, 0.5);
	make_db(base, base_rows, 4, 0.1);
	layers[0] = (struct hb_profdb_layer){ user, HB_PROFDB_READONLY };
	layers[1] = (struct hb_profdb_layer){ base, HB_PROFDB_IMMUTABLE };
	assert_int_equal(hb_profdb_open_layers(layers, 2, &db, &err), 0);
	assert_int_equal(hb_profdb_nlayers(db), 2);
	assert_non_null(strstr(hb_profdb_label(db), " + "));
	assert_string_equal(hb_profdb_path(db), user);

	/* v100: the measured rows of the user's file beat analytic */
	assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &got, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(got[0].source, "import:jabas");
	assert_true(got[0].fwd_s == 0.5);
	free(got);
	/* p100: analytic in both: the user's file (layer 0) */
	assert_int_equal(hb_profdb_get_compute(db, "p100", "resnet50", &got, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(got[0].fwd_s == 0.5);
	free(got);
	assert_int_equal(hb_profdb_compute_origin(db, "p100", "resnet50", &o, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(o.layer, 0);
	assert_string_equal(o.path, user);
	/* t4: only in the base file, where events outranks analytic */
	assert_int_equal(hb_profdb_get_compute(db, "t4", "resnet50", &got, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(got[0].source, "events");
	free(got);
	assert_int_equal(hb_profdb_compute_origin(db, "t4", "resnet50", &o, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(o.layer, 1);
	assert_string_equal(o.path, base);
	assert_string_equal(o.source, "events");
	assert_int_equal(o.rows, 1);
	assert_int_equal(hb_profdb_compute_origin(db, "a100", "resnet50", &o, &found, &err), 0);
	assert_int_equal(found, 0);
	/* read-only, and nothing beside either file */
	assert_int_equal(hb_profdb_begin(db, &err), -1);
	hb_profdb_close(db);
	listing(dir, names, sizeof(names));
	assert_string_equal(names, "base.db user.db");

	/* a layer that is not a profile database is refused, naming it */
	{
		char other[600];
		sqlite3 *raw;

		snprintf(other, sizeof(other), "%s/other.db", dir);
		assert_int_equal(sqlite3_open(other, &raw), SQLITE_OK);
		assert_int_equal(sqlite3_exec(raw, "CREATE TABLE x(y);", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(raw);
		layers[1].path = other;
		assert_int_equal(hb_profdb_open_layers(layers, 2, &db, &err), -1);
		assert_null(db);
		assert_non_null(strstr(err.msg, other));
		assert_non_null(strstr(err.msg, "not a hetbatch profile database"));
	}
}

static int rm_tree(void)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s' && rm -rf '%s'", tmpdir, tmpdir);
	return system(cmd) == 0 ? 0 : 1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rw_session_leaves_one_file),
		cmocka_unit_test(test_readonly_open_creates_nothing),
		cmocka_unit_test(test_readonly_directory),
		cmocka_unit_test(test_wal_file_converted),
		cmocka_unit_test(test_remove_if_empty),
		cmocka_unit_test(test_layers),
	};
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-profdb-files-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	return rm_tree() ? 1 : rc;
}
