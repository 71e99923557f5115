/* Unit tests for the profile database: schema versions and migration,
 * insert-or-replace, source ranking, the Eq. 3 fit, transactions. */
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
#include <sqlite3.h>

#include "profdb.h"
#include "strutil.h"

static char tmpdir[256];

/* A fresh path in the test directory (the file does not exist yet). */
static const char *db_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
	return path;
}

static struct hb_profdb *open_new(const char *name)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };

	assert_int_equal(hb_profdb_open(db_path(name), 0, &db, &err), 0);
	assert_non_null(db);
	return db;
}

/* Run SQL directly on a file, bypassing profdb (to fake other versions). */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static int raw_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int v;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static long count(struct hb_profdb *db, const char *table)
{
	struct hb_error err = { 0 };
	long n = -1;

	assert_int_equal(hb_profdb_count(db, table, &n, &err), 0);
	return n;
}

static struct hb_compute_row compute_row(const char *gpu, const char *model, int bs, int n, double fwd,
					 const char *source)
{
	struct hb_compute_row r;

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.gpu, gpu, sizeof(r.gpu));
	hb_strlcpy(r.model, model, sizeof(r.model));
	hb_strlcpy(r.source, source, sizeof(r.source));
	r.local_bs = bs;
	r.n_vsw = n;
	r.fwd_s = fwd;
	r.bwd_s = 2 * fwd;
	r.total_s = 3 * fwd;
	return r;
}

static void put_compute(struct hb_profdb *db, const char *gpu, const char *model, int bs, int n, double fwd,
			const char *source)
{
	struct hb_compute_row r = compute_row(gpu, model, bs, n, fwd, source);
	struct hb_error err = { 0 };

	assert_int_equal(hb_profdb_put_compute(db, &r, &err), 0);
}

static void put_allreduce(struct hb_profdb *db, const char *scope, const char *link, int n, double bytes,
			  double t, const char *source)
{
	struct hb_allreduce_row r;
	struct hb_error err = { 0 };

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.scope, scope, sizeof(r.scope));
	hb_strlcpy(r.link, link, sizeof(r.link));
	hb_strlcpy(r.source, source, sizeof(r.source));
	r.n_gpus = n;
	r.bytes = bytes;
	r.time_s = t;
	assert_int_equal(hb_profdb_put_allreduce(db, &r, &err), 0);
}

static void test_create_reopen_and_version(void **state)
{
	struct hb_profdb *db = open_new("create.db");
	struct hb_error err = { 0 };
	const char *path;
	char saved[512];

	(void)state;
	hb_strlcpy(saved, hb_profdb_path(db), sizeof(saved));
	path = saved;
	put_compute(db, "v100", "resnet50", 32, 1, 0.03, "analytic");
	hb_profdb_close(db);
	assert_int_equal(raw_int(path, "PRAGMA user_version;"), HB_PROFDB_SCHEMA_VERSION);
	/* Reopen read-write and read-only: the row is there. */
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0);
	assert_int_equal(count(db, "compute"), 1);
	hb_profdb_close(db);
	assert_int_equal(hb_profdb_open(path, 1, &db, &err), 0);
	assert_int_equal(count(db, "compute"), 1);
	assert_int_equal(hb_profdb_begin(db, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	hb_profdb_close(db);
	{
		sqlite3 *raw;
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(raw, "PRAGMA journal_mode;", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		/* the rollback journal: a single file between transactions (db.h) */
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "delete");
		sqlite3_finalize(st);
		sqlite3_close(raw);
	}
}

static void test_newer_version_rejected(void **state)
{
	struct hb_profdb *db = open_new("newer.db");
	struct hb_error err = { 0 };
	char path[512], sql[64];

	(void)state;
	hb_strlcpy(path, hb_profdb_path(db), sizeof(path));
	hb_profdb_close(db);
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d;", HB_PROFDB_SCHEMA_VERSION + 1);
	raw_exec(path, sql);
	for (int ro = 0; ro < 2; ro++) {
		db = NULL;
		assert_int_equal(hb_profdb_open(path, ro, &db, &err), -1);
		assert_null(db);
		assert_int_equal(err.code, HB_EINPUT);
		assert_non_null(strstr(err.msg, "newer"));
		assert_non_null(strstr(err.msg, path));
		assert_null(strchr(err.msg, '\n'));
	}
	/* Rejected without being touched. */
	assert_int_equal(raw_int(path, "PRAGMA user_version;"), HB_PROFDB_SCHEMA_VERSION + 1);
}

static void test_older_version_migrated(void **state)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	const char *p = db_path("old.db");
	char path[512];

	(void)state;
	hb_strlcpy(path, p, sizeof(path));
	/* Version 0: an SQLite file with no schema yet. */
	raw_exec(path, "PRAGMA user_version=0;");
	assert_int_equal(hb_profdb_open(path, 1, &db, &err), -1); /* read-only cannot migrate */
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0);
	assert_int_equal(count(db, "compute"), 0);
	assert_int_equal(count(db, "gradstats"), 0);
	hb_profdb_close(db);
	assert_int_equal(raw_int(path, "PRAGMA user_version;"), HB_PROFDB_SCHEMA_VERSION);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE type='table';"), 10);
}

static void test_foreign_files_rejected(void **state)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	char path[512];

	(void)state;
	/* Tables but no schema version: someone else's database. */
	hb_strlcpy(path, db_path("foreign.db"), sizeof(path));
	raw_exec(path, "CREATE TABLE compute(x); INSERT INTO compute VALUES(1);");
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "not a hetbatch profile database"));
	assert_int_equal(raw_int(path, "SELECT count(*) FROM compute;"), 1);
	/* Another application's id. */
	hb_strlcpy(path, db_path("appid.db"), sizeof(path));
	raw_exec(path, "PRAGMA application_id=12345;");
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), -1);
	assert_non_null(strstr(err.msg, "application_id"));
	/* A missing file read-only. */
	assert_int_equal(hb_profdb_open(db_path("absent.db"), 1, &db, &err), -1);
}

static void test_insert_or_replace(void **state)
{
	struct hb_profdb *db = open_new("replace.db");
	struct hb_error err = { 0 };
	struct hb_compute_row *rows;
	double *bytes;
	const double b5[] = { 1e6, 2e6, 3e6, 4e6, 5e6 }, b2[] = { 7e6, 8e6 };
	int n;

	(void)state;
	put_compute(db, "v100", "resnet50", 32, 1, 0.030, "events");
	put_compute(db, "v100", "resnet50", 32, 1, 0.040, "events"); /* same key: replaces */
	assert_int_equal(count(db, "compute"), 1);
	put_compute(db, "v100", "resnet50", 32, 2, 0.050, "events"); /* new n_vsw: new row */
	put_compute(db, "v100", "resnet50", 64, 1, 0.060, "events");
	assert_int_equal(count(db, "compute"), 3);
	assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &rows, &n, &err), 0);
	assert_int_equal(n, 3);
	/* Ordered by local_bs, n_vsw; the replaced value is the new one. */
	assert_int_equal(rows[0].local_bs, 32);
	assert_int_equal(rows[0].n_vsw, 1);
	assert_true(fabs(rows[0].fwd_s - 0.040) < 1e-15);
	assert_int_equal(rows[1].n_vsw, 2);
	assert_int_equal(rows[2].local_bs, 64);
	free(rows);
	/* Buckets: a second list replaces the first as a whole. */
	assert_int_equal(hb_profdb_put_buckets(db, "resnet50", b5, 5, "events", &err), 0);
	assert_int_equal(hb_profdb_put_buckets(db, "resnet50", b2, 2, "events", &err), 0);
	assert_int_equal(hb_profdb_get_buckets(db, "resnet50", &bytes, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(bytes[0] == 7e6 && bytes[1] == 8e6);
	free(bytes);
	/* Unknown key: no rows, not an error. */
	assert_int_equal(hb_profdb_get_compute(db, "h100", "resnet50", &rows, &n, &err), 0);
	assert_int_equal(n, 0);
	free(rows);
	hb_profdb_close(db);
}

static void test_writers_validate(void **state)
{
	struct hb_profdb *db = open_new("validate.db");
	struct hb_error err = { 0 };
	struct hb_compute_row r = compute_row("v100", "resnet50", 32, 1, 0.03, "events");
	struct hb_memory_row m;
	long n;

	(void)state;
	r.bwd_s = -1;
	assert_int_equal(hb_profdb_put_compute(db, &r, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "bwd_s"));
	r = compute_row("v100", "resnet50", 0, 1, 0.03, "events");
	assert_int_equal(hb_profdb_put_compute(db, &r, &err), -1);
	r = compute_row("", "resnet50", 32, 1, 0.03, "events");
	assert_int_equal(hb_profdb_put_compute(db, &r, &err), -1);
	memset(&m, 0, sizeof(m));
	hb_strlcpy(m.gpu, "v100", sizeof(m.gpu));
	hb_strlcpy(m.model, "resnet50", sizeof(m.model));
	hb_strlcpy(m.source, "events", sizeof(m.source));
	m.local_bs = 32;
	m.max_vsw = -1;
	assert_int_equal(hb_profdb_put_memory(db, &m, &err), -1);
	assert_int_equal(hb_profdb_count(db, "no_such_table", &n, &err), -1);
	assert_int_equal(hb_profdb_count(db, "compute; DROP TABLE run", &n, &err), -1);
	assert_int_equal(count(db, "compute"), 0);
	hb_profdb_close(db);
}

static void test_source_rank_order(void **state)
{
	static const char *const order[] = { "live", "torch", "cupti", "events", "import:jabas", "import:pollux",
					     "import:sia", "import:nccl-tests", "cpu", "analytic", "something-else" };

	(void)state;
	for (int i = 0; i + 1 < 10; i++)
		assert_true(hb_profdb_source_rank(order[i]) < hb_profdb_source_rank(order[i + 1]));
	assert_int_equal(hb_profdb_source_rank("x"), hb_profdb_source_rank("y"));
	assert_int_equal(hb_profdb_source_rank(NULL), hb_profdb_source_rank("y"));
}

static void test_readers_take_best_source_only(void **state)
{
	struct hb_profdb *db = open_new("rank.db");
	struct hb_error err = { 0 };
	struct hb_compute_row *rows;
	struct hb_allreduce_row *ar;
	struct hb_memory_row mem;
	struct hb_allreduce_fit fit;
	int n, found, maxbs;

	(void)state;
	/* Generated points for three batches, imported points for two. */
	put_compute(db, "v100", "resnet50", 32, 1, 0.01, "analytic");
	put_compute(db, "v100", "resnet50", 64, 1, 0.02, "analytic");
	put_compute(db, "v100", "resnet50", 96, 1, 0.03, "analytic");
	put_compute(db, "v100", "resnet50", 32, 1, 0.0323, "import:jabas");
	put_compute(db, "v100", "resnet50", 32, 3, 0.0870, "import:jabas");
	put_compute(db, "p100", "resnet50", 32, 1, 0.05, "analytic");
	assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &rows, &n, &err), 0);
	assert_int_equal(n, 2); /* never mixed with the analytic 64 and 96 */
	for (int i = 0; i < n; i++)
		assert_string_equal(rows[i].source, "import:jabas");
	assert_int_equal(rows[1].n_vsw, 3);
	free(rows);
	/* Another key keeps its own best source. */
	assert_int_equal(hb_profdb_get_compute(db, "p100", "resnet50", &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].source, "analytic");
	free(rows);
	/* A live measurement outranks everything. */
	put_compute(db, "v100", "resnet50", 128, 1, 0.12, "live");
	assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].local_bs, 128);
	free(rows);

	/* Memory and the max local batch follow the same rule. */
	memset(&mem, 0, sizeof(mem));
	hb_strlcpy(mem.gpu, "v100", sizeof(mem.gpu));
	hb_strlcpy(mem.model, "resnet50", sizeof(mem.model));
	hb_strlcpy(mem.source, "analytic", sizeof(mem.source));
	mem.local_bs = 256;
	mem.max_vsw = 1;
	assert_int_equal(hb_profdb_put_memory(db, &mem, &err), 0);
	assert_int_equal(hb_profdb_max_local_bs(db, "v100", "resnet50", &maxbs, &err), 0);
	assert_int_equal(maxbs, 256);
	hb_strlcpy(mem.source, "import:jabas", sizeof(mem.source));
	mem.local_bs = 128;
	assert_int_equal(hb_profdb_put_memory(db, &mem, &err), 0);
	mem.local_bs = 160;
	mem.max_vsw = 0; /* does not fit */
	assert_int_equal(hb_profdb_put_memory(db, &mem, &err), 0);
	assert_int_equal(hb_profdb_max_local_bs(db, "v100", "resnet50", &maxbs, &err), 0);
	assert_int_equal(maxbs, 128);
	assert_int_equal(hb_profdb_max_local_bs(db, "t4", "resnet50", &maxbs, &err), 0);
	assert_int_equal(maxbs, 0);

	/* All-reduce rows and fits. */
	put_allreduce(db, "intra", "pcie3-x16", 4, 1e6, 1e-3, "analytic");
	put_allreduce(db, "intra", "pcie3-x16", 4, 2e6, 2e-3, "analytic");
	put_allreduce(db, "intra", "pcie3-x16", 4, 4e6, 5e-3, "import:nccl-tests");
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "pcie3-x16", &ar, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ar[0].source, "import:nccl-tests");
	free(ar);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "intra", "pcie3-x16", &fit, &found, &err), 0);
	assert_int_equal(found, 0);
	hb_profdb_close(db);
}

static void test_fit_recovers_exact_line(void **state)
{
	struct hb_profdb *db = open_new("fit.db");
	struct hb_error err = { 0 };
	struct hb_allreduce_fit fit, got;
	const double alpha = 1.37, beta = 0.85, bw = 10e9; /* ms per ms, ms, B/s */
	const int ngpus[] = { 2, 4, 8 };
	int found;

	(void)state;
	/* Exact points of t_ms = alpha * x_ms + beta over several N. */
	for (int k = 0; k < 3; k++)
		for (int i = 1; i <= 6; i++) {
			double bytes = i * 5.0 * 1048576, n = ngpus[k];
			double x_ms = bytes * 4 * (n - 1) / n / bw * 1000;

			put_allreduce(db, "inter", "ib-100g", ngpus[k], bytes, (alpha * x_ms + beta) / 1000,
				      "import:nccl-tests");
		}
	/* A better-ranked source with one odd point must not disturb a
	 * fit asked for the nccl-tests rows. */
	put_allreduce(db, "inter", "ib-100g", 8, 1e6, 0.5, "live");
	assert_int_equal(hb_profdb_fit_allreduce(db, "inter", "ib-100g", bw, "import:nccl-tests", &fit, &err), 0);
	assert_true(fabs(fit.alpha - alpha) < 1e-9);
	assert_true(fabs(fit.beta - beta) < 1e-9);
	assert_true(fabs(fit.r2 - 1.0) < 1e-12);
	assert_true(fit.bandwidth == bw);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "inter", "ib-100g", &got, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_true(fabs(got.alpha - alpha) < 1e-9 && fabs(got.beta - beta) < 1e-9);
	assert_string_equal(got.source, "import:nccl-tests");
	/* With no source: the best-ranked rows (one live point) are too few. */
	assert_int_equal(hb_profdb_fit_allreduce(db, "inter", "ib-100g", bw, NULL, &fit, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "at least 2"));
	/* All points at one size cannot determine a line. */
	put_allreduce(db, "intra", "nvlink4", 4, 1e6, 1e-3, "events");
	put_allreduce(db, "intra", "nvlink4", 2, 1.5e6, 1.1e-3, "events"); /* same x as 1e6 on 4 GPUs */
	assert_int_equal(hb_profdb_fit_allreduce(db, "intra", "nvlink4", bw, "events", &fit, &err), -1);
	assert_int_equal(hb_profdb_fit_allreduce(db, "intra", "nvlink4", -1, "events", &fit, &err), -1);
	/* Clearing a source's rows. */
	assert_int_equal(count(db, "allreduce_fit"), 1);
	assert_int_equal(hb_profdb_clear_allreduce(db, "inter", "ib-100g", "import:nccl-tests", &err), 0);
	assert_int_equal(count(db, "allreduce"), 3);
	assert_int_equal(count(db, "allreduce_fit"), 0);  /* the fit went with its rows */
	hb_profdb_close(db);
}

static void test_rollback_leaves_nothing(void **state)
{
	struct hb_profdb *db = open_new("rollback.db");
	struct hb_error err = { 0 };
	struct hb_run_info run;
	const double b[] = { 1e6, 2e6 };
	int64_t id = 0;
	char path[512];

	(void)state;
	hb_strlcpy(path, hb_profdb_path(db), sizeof(path));
	memset(&run, 0, sizeof(run));
	hb_strlcpy(run.kind, "profile", sizeof(run.kind));
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	assert_int_equal(hb_profdb_add_run(db, &run, &id, &err), 0);
	assert_true(id > 0);
	put_compute(db, "v100", "resnet50", 32, 1, 0.03, "events");
	put_allreduce(db, "intra", "pcie3-x16", 4, 1e6, 1e-3, "events");
	assert_int_equal(hb_profdb_put_buckets(db, "resnet50", b, 2, "events", &err), 0);
	assert_int_equal(count(db, "compute"), 1); /* visible inside the transaction */
	hb_profdb_rollback(db);
	assert_int_equal(count(db, "run"), 0);
	assert_int_equal(count(db, "compute"), 0);
	assert_int_equal(count(db, "allreduce"), 0);
	assert_int_equal(count(db, "bucket"), 0);
	/* Closing with a transaction open rolls it back too. */
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	put_compute(db, "v100", "resnet50", 32, 1, 0.03, "events");
	hb_profdb_close(db);
	assert_int_equal(hb_profdb_open(path, 1, &db, &err), 0);
	assert_int_equal(count(db, "compute"), 0);
	hb_profdb_close(db);
	/* A committed transaction stays, with its run id on the rows. */
	assert_int_equal(hb_profdb_open(path, 0, &db, &err), 0);
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	assert_int_equal(hb_profdb_add_run(db, &run, &id, &err), 0);
	{
		struct hb_compute_row r = compute_row("v100", "resnet50", 32, 1, 0.03, "events"), *rows;
		int n;

		r.run_id = id;
		assert_int_equal(hb_profdb_put_compute(db, &r, &err), 0);
		/* A run id that does not exist violates the foreign key. */
		r.local_bs = 64;
		r.run_id = id + 100;
		assert_int_equal(hb_profdb_put_compute(db, &r, &err), -1);
		assert_int_equal(hb_profdb_commit(db, &err), 0);
		assert_int_equal(hb_profdb_get_compute(db, "v100", "resnet50", &rows, &n, &err), 0);
		assert_int_equal(n, 1);
		assert_true(rows[0].run_id == id);
		free(rows);
	}
	assert_int_equal(hb_profdb_put_prediction(db, id, "resnet50", "{\"n_vsw\": 1}", 0.11, 0.12, &err), 0);
	assert_int_equal(count(db, "prediction"), 1);
	hb_profdb_close(db);
}

static void test_pollux_tables_roundtrip(void **state)
{
	struct hb_profdb *db = open_new("pollux.db");
	struct hb_error err = { 0 };
	struct hb_placement_row p, *ps;
	struct hb_scalability_row s, *ss;
	struct hb_gradstats_row g, *gs;
	const char *pls[] = { "22", "1", "13" };
	int n;

	(void)state;
	memset(&p, 0, sizeof(p));
	hb_strlcpy(p.model, "imagenet", sizeof(p.model));
	hb_strlcpy(p.gpu, "t4", sizeof(p.gpu));
	hb_strlcpy(p.source, "import:pollux", sizeof(p.source));
	p.local_bs = 20;
	p.step_s = 0.147;
	p.sync_s = 0.0012;
	for (int i = 0; i < 3; i++) {
		hb_strlcpy(p.placement, pls[i], sizeof(p.placement));
		assert_int_equal(hb_profdb_put_placement(db, &p, &err), 0);
	}
	assert_int_equal(hb_profdb_get_placements(db, "imagenet", &ps, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ps[0].placement, "1"); /* by length, then text */
	assert_string_equal(ps[1].placement, "13");
	free(ps);
	memset(&s, 0, sizeof(s));
	hb_strlcpy(s.model, "imagenet", sizeof(s.model));
	hb_strlcpy(s.gpu, "t4", sizeof(s.gpu));
	hb_strlcpy(s.source, "import:pollux", sizeof(s.source));
	s.num_nodes = 6;
	s.num_replicas = 6;
	s.local_bs = 20;
	s.step_s = 0.387;
	s.sync_s = 0.231;
	assert_int_equal(hb_profdb_put_scalability(db, &s, &err), 0);
	assert_int_equal(hb_profdb_get_scalability(db, "imagenet", &ss, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(ss[0].num_replicas == 6 && fabs(ss[0].step_s - 0.387) < 1e-15);
	free(ss);
	memset(&g, 0, sizeof(g));
	hb_strlcpy(g.model, "imagenet", sizeof(g.model));
	hb_strlcpy(g.source, "import:pollux", sizeof(g.source));
	g.batch = 200;
	g.iteration = 6405;
	g.progress = 6406;
	g.grad_sqr = 1.126;
	g.grad_var = 5.228;
	for (int e = 1; e >= 0; e--) {
		g.epoch = e;
		assert_int_equal(hb_profdb_put_gradstats(db, &g, &err), 0);
	}
	assert_int_equal(hb_profdb_get_gradstats(db, "imagenet", &gs, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(gs[0].epoch, 0);
	assert_true(gs[1].iteration == 6405);
	free(gs);
	hb_profdb_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_reopen_and_version),
		cmocka_unit_test(test_newer_version_rejected),
		cmocka_unit_test(test_older_version_migrated),
		cmocka_unit_test(test_foreign_files_rejected),
		cmocka_unit_test(test_insert_or_replace),
		cmocka_unit_test(test_writers_validate),
		cmocka_unit_test(test_source_rank_order),
		cmocka_unit_test(test_readers_take_best_source_only),
		cmocka_unit_test(test_fit_recovers_exact_line),
		cmocka_unit_test(test_rollback_leaves_nothing),
		cmocka_unit_test(test_pollux_tables_roundtrip),
	};
	char cmd[300];
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-profdb-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return rc;
}
