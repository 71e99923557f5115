/*
 * profdb.c: the SQLite profile database (see profdb.h for the tables).
 *
 * Layout of this file, in the order data flows:
 *   1. schema and forward migrations (PRAGMA user_version),
 *   2. open/close and transactions (and layered sets: ATTACH plus TEMP
 *      views, so readers see every file's rows with a `layer` column),
 *   3. the statement cache,
 *   4. writers (INSERT OR REPLACE on each table's natural key),
 *   5. readers (best-ranked source per key, via the SQL function
 *      hb_source_rank registered on every connection),
 *   6. the JABAS Eq. 3 all-reduce fit (GSL least squares).
 *
 * Adding schema version 3: append { 3, "ALTER TABLE ...;" } to migrations[]
 * and raise HB_PROFDB_SCHEMA_VERSION; open() applies every step above the
 * file's user_version in one BEGIN IMMEDIATE transaction that reads the
 * version again under the write lock, so an old file is upgraded in place,
 * a half-applied migration is impossible, and two processes upgrading (or
 * creating) the same file at once do it once.  Writers name main.<table>;
 * readers name the bare table, which is the TEMP view (section 2).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h> /* flock */
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_fit.h>
#include <sqlite3.h>

#include "catalog.h"
#include "db.h"
#include "default_db.h" /* hb_is_default_profdb */
#include "hb_config.h"   /* HB_VERSION, recorded in run.tool_version */
#include "profdb.h"
#include "strutil.h"

/* "HbPD": marks a file as a hetbatch profile database, so a results
 * database or someone else's SQLite file is refused instead of altered. */
#define HB_PROFDB_APPLICATION_ID 0x48625044

/* ------------------------------------------------------------------------ */
/* 1. Schema                                                                 */

/* Natural keys are the UNIQUE constraints: INSERT OR REPLACE on them gives
 * "a re-import replaces, never duplicates". run_id refers to run(id) and is
 * NULL when a row has no run. */
static const char schema_v1[] =
	"CREATE TABLE run("
	" id INTEGER PRIMARY KEY,"
	" kind TEXT NOT NULL, host TEXT, device TEXT, driver TEXT, cuda TEXT,"
	" backend TEXT, started_at TEXT, tool_version TEXT);"
	"CREATE TABLE compute("
	" gpu TEXT NOT NULL, model TEXT NOT NULL,"
	" local_bs INTEGER NOT NULL CHECK(local_bs > 0), n_vsw INTEGER NOT NULL CHECK(n_vsw > 0),"
	" fwd_s REAL NOT NULL, bwd_s REAL NOT NULL, data_s REAL NOT NULL, update_s REAL NOT NULL,"
	" copy_s REAL NOT NULL, bn_s REAL NOT NULL, total_s REAL NOT NULL, mem_bytes REAL NOT NULL,"
	" source TEXT NOT NULL, run_id INTEGER REFERENCES run(id),"
	" UNIQUE(gpu, model, local_bs, n_vsw, source));"
	"CREATE TABLE memory("
	" gpu TEXT NOT NULL, model TEXT NOT NULL,"
	" local_bs INTEGER NOT NULL CHECK(local_bs > 0), max_vsw INTEGER NOT NULL CHECK(max_vsw >= 0),"
	" source TEXT NOT NULL,"
	" UNIQUE(gpu, model, local_bs, source));"
	"CREATE TABLE bucket("
	" model TEXT NOT NULL, idx INTEGER NOT NULL CHECK(idx >= 0), bytes REAL NOT NULL CHECK(bytes > 0),"
	" source TEXT NOT NULL,"
	" UNIQUE(model, idx, source));"
	"CREATE TABLE allreduce("
	" scope TEXT NOT NULL CHECK(scope IN ('intra', 'inter')), link TEXT NOT NULL,"
	" n_gpus INTEGER NOT NULL CHECK(n_gpus > 0), bytes REAL NOT NULL CHECK(bytes >= 0),"
	" time_s REAL NOT NULL CHECK(time_s > 0), source TEXT NOT NULL, run_id INTEGER REFERENCES run(id),"
	" UNIQUE(scope, link, n_gpus, bytes, source));"
	"CREATE TABLE allreduce_fit("
	" scope TEXT NOT NULL CHECK(scope IN ('intra', 'inter')), link TEXT NOT NULL,"
	" alpha REAL NOT NULL, beta REAL NOT NULL, bandwidth REAL NOT NULL CHECK(bandwidth > 0),"
	" r2 REAL NOT NULL, source TEXT NOT NULL,"
	" UNIQUE(scope, link, source));"
	"CREATE TABLE placement("
	" model TEXT NOT NULL, gpu TEXT NOT NULL, placement TEXT NOT NULL,"
	" local_bs INTEGER NOT NULL CHECK(local_bs > 0), step_s REAL NOT NULL, sync_s REAL NOT NULL,"
	" source TEXT NOT NULL,"
	" UNIQUE(model, gpu, placement, local_bs, source));"
	"CREATE TABLE scalability("
	" model TEXT NOT NULL, gpu TEXT NOT NULL,"
	" num_nodes INTEGER NOT NULL CHECK(num_nodes > 0), num_replicas INTEGER NOT NULL CHECK(num_replicas > 0),"
	" local_bs INTEGER NOT NULL CHECK(local_bs > 0), step_s REAL NOT NULL, sync_s REAL NOT NULL,"
	" source TEXT NOT NULL,"
	" UNIQUE(model, gpu, num_nodes, num_replicas, local_bs, source));"
	"CREATE TABLE gradstats("
	" model TEXT NOT NULL, batch INTEGER NOT NULL CHECK(batch > 0), epoch INTEGER NOT NULL CHECK(epoch >= 0),"
	" iteration INTEGER NOT NULL, progress REAL NOT NULL, metric REAL NOT NULL,"
	" grad_sqr REAL NOT NULL, grad_var REAL NOT NULL, source TEXT NOT NULL,"
	" UNIQUE(model, batch, epoch, source));"
	"CREATE TABLE prediction("
	" id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES run(id), model TEXT NOT NULL,"
	" config_json TEXT NOT NULL, predicted_s REAL NOT NULL, measured_s REAL NOT NULL);";

struct migration {
	int to;           /* user_version after this step */
	const char *sql;  /* statements taking the file from to-1 to to */
};

/* Version 2: what a measuring run must say about itself (the catalog GPU
 * it measured, CUPTI's version, the workload scale, dropped CUPTI records,
 * free-form notes such as the VSW cap). */
static const char schema_v2[] =
	"ALTER TABLE run ADD COLUMN gpu TEXT;"
	"ALTER TABLE run ADD COLUMN cupti TEXT;"
	"ALTER TABLE run ADD COLUMN scale REAL;"
	"ALTER TABLE run ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE run ADD COLUMN notes TEXT;";

static const struct migration migrations[] = {
	{ 1, schema_v1 },
	{ 2, schema_v2 },
};

#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

/* Tables hb_profdb_count accepts (names cannot be bound as parameters). */
static const char *const table_names[] = {
	"run", "compute", "memory", "bucket", "allreduce", "allreduce_fit",
	"placement", "scalability", "gradstats", "prediction", NULL,
};

/* ------------------------------------------------------------------------ */
/* 3. Statement cache (declared before open/close, which finalize it)       */

enum stmt_id {
	ST_ADD_RUN,
	ST_PUT_COMPUTE,
	ST_PUT_MEMORY,
	ST_DEL_BUCKETS,
	ST_PUT_BUCKET,
	ST_PUT_ALLREDUCE,
	ST_DEL_ALLREDUCE,
	ST_DEL_FIT,
	ST_PUT_FIT,
	ST_PUT_PLACEMENT,
	ST_PUT_SCALABILITY,
	ST_PUT_GRADSTATS,
	ST_PUT_PREDICTION,
	ST_GET_COMPUTE,
	ST_GET_MEMORY,
	ST_MAX_LBS,
	ST_GET_BUCKETS,
	ST_GET_ALLREDUCE,
	ST_GET_ALLREDUCE_SRC,
	ST_GET_FIT,
	ST_GET_PLACEMENTS,
	ST_GET_SCALABILITY,
	ST_GET_GRADSTATS,
	ST_COUNT
};

/* The best (source, layer) for a key: lowest source rank, then the
 * preferred database of a layered set (layer 0 first: the user's rows win
 * a tie with the cached analytic ones), then the source name so the choice
 * is deterministic.  Readers keep the rows of exactly that pair. */
#define BEST(table, where) \
	"(SELECT b.source, b.layer FROM " table " b WHERE " where \
	" ORDER BY hb_source_rank(b.source), b.layer, b.source LIMIT 1)"

/* The same for every GPU of model ?1 at once, as a table best(gpu, source,
 * layer) for the reader to join: BEST correlated with each row's GPU ran
 * its subquery once per row (rows x rows for a model's placements, 75 % of
 * a Pollux workload's replay on an imported database).  Here the ranking
 * runs on the distinct (gpu, source, layer) triples only, a handful. */
#define BEST_PER_GPU(table) \
	"WITH k AS MATERIALIZED (SELECT DISTINCT gpu, source, layer, hb_source_rank(source) AS rank FROM " table \
	" WHERE model = ?1), best AS MATERIALIZED (SELECT gpu, source, layer FROM (SELECT gpu, source, layer," \
	" row_number() OVER (PARTITION BY gpu ORDER BY rank, layer, source) AS n FROM k) WHERE n = 1) "

static const char *const stmt_sql[ST_COUNT] = {
	[ST_ADD_RUN] =
		"INSERT INTO main.run(kind, host, device, driver, cuda, backend, started_at, tool_version,"
		" gpu, cupti, scale, dropped, notes)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[ST_PUT_COMPUTE] =
		"INSERT OR REPLACE INTO main.compute(gpu, model, local_bs, n_vsw, fwd_s, bwd_s, data_s, update_s,"
		" copy_s, bn_s, total_s, mem_bytes, source, run_id)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	[ST_PUT_MEMORY] =
		"INSERT OR REPLACE INTO main.memory(gpu, model, local_bs, max_vsw, source) VALUES(?1, ?2, ?3, ?4, ?5)",
	[ST_DEL_BUCKETS] =
		"DELETE FROM main.bucket WHERE model = ?1 AND source = ?2",
	[ST_PUT_BUCKET] =
		"INSERT OR REPLACE INTO main.bucket(model, idx, bytes, source) VALUES(?1, ?2, ?3, ?4)",
	[ST_PUT_ALLREDUCE] =
		"INSERT OR REPLACE INTO main.allreduce(scope, link, n_gpus, bytes, time_s, source, run_id)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[ST_DEL_ALLREDUCE] =
		"DELETE FROM main.allreduce WHERE scope = ?1 AND link = ?2 AND source = ?3",
	[ST_DEL_FIT] =
		"DELETE FROM main.allreduce_fit WHERE scope = ?1 AND link = ?2 AND source = ?3",
	[ST_PUT_FIT] =
		"INSERT OR REPLACE INTO main.allreduce_fit(scope, link, alpha, beta, bandwidth, r2, source)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[ST_PUT_PLACEMENT] =
		"INSERT OR REPLACE INTO main.placement(model, gpu, placement, local_bs, step_s, sync_s, source)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[ST_PUT_SCALABILITY] =
		"INSERT OR REPLACE INTO main.scalability(model, gpu, num_nodes, num_replicas, local_bs, step_s,"
		" sync_s, source) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_PUT_GRADSTATS] =
		"INSERT OR REPLACE INTO main.gradstats(model, batch, epoch, iteration, progress, metric, grad_sqr,"
		" grad_var, source) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_PUT_PREDICTION] =
		"INSERT INTO main.prediction(run_id, model, config_json, predicted_s, measured_s)"
		" VALUES(?1, ?2, ?3, ?4, ?5)",
	[ST_GET_COMPUTE] =
		"SELECT gpu, model, local_bs, n_vsw, fwd_s, bwd_s, data_s, update_s, copy_s, bn_s, total_s,"
		" mem_bytes, source, run_id FROM compute"
		" WHERE gpu = ?1 AND model = ?2 AND (source, layer) = " BEST("compute", "b.gpu = ?1 AND b.model = ?2")
		" ORDER BY local_bs, n_vsw",
	[ST_GET_MEMORY] =
		"SELECT gpu, model, local_bs, max_vsw, source FROM memory"
		" WHERE gpu = ?1 AND model = ?2 AND (source, layer) = " BEST("memory", "b.gpu = ?1 AND b.model = ?2")
		" ORDER BY local_bs",
	[ST_MAX_LBS] =
		"SELECT MAX(local_bs) FROM memory"
		" WHERE gpu = ?1 AND model = ?2 AND max_vsw >= 1"
		" AND (source, layer) = " BEST("memory", "b.gpu = ?1 AND b.model = ?2"),
	[ST_GET_BUCKETS] =
		"SELECT bytes FROM bucket"
		" WHERE model = ?1 AND (source, layer) = " BEST("bucket", "b.model = ?1")
		" ORDER BY idx",
	[ST_GET_ALLREDUCE] =
		"SELECT scope, link, n_gpus, bytes, time_s, source, run_id FROM allreduce"
		" WHERE scope = ?1 AND link = ?2 AND (source, layer) = " BEST("allreduce", "b.scope = ?1 AND b.link = ?2")
		" ORDER BY n_gpus, bytes",
	[ST_GET_ALLREDUCE_SRC] =
		"SELECT scope, link, n_gpus, bytes, time_s, source, run_id FROM allreduce"
		" WHERE scope = ?1 AND link = ?2 AND source = ?3 AND layer = 0 ORDER BY n_gpus, bytes",
	[ST_GET_FIT] =
		"SELECT scope, link, alpha, beta, bandwidth, r2, source FROM allreduce_fit"
		" WHERE scope = ?1 AND link = ?2 ORDER BY hb_source_rank(source), layer, source LIMIT 1",
	[ST_GET_PLACEMENTS] =
		BEST_PER_GPU("placement")
		"SELECT p.model, p.gpu, p.placement, p.local_bs, p.step_s, p.sync_s, p.source FROM placement p"
		" JOIN best b ON b.gpu = p.gpu AND b.source = p.source AND b.layer = p.layer WHERE p.model = ?1"
		" ORDER BY p.gpu, length(p.placement), p.placement, p.local_bs",
	[ST_GET_SCALABILITY] =
		BEST_PER_GPU("scalability")
		"SELECT p.model, p.gpu, p.num_nodes, p.num_replicas, p.local_bs, p.step_s, p.sync_s, p.source"
		" FROM scalability p"
		" JOIN best b ON b.gpu = p.gpu AND b.source = p.source AND b.layer = p.layer WHERE p.model = ?1"
		" ORDER BY p.gpu, p.layer, p.rowid",
	[ST_GET_GRADSTATS] =
		"SELECT model, batch, epoch, iteration, progress, metric, grad_sqr, grad_var, source FROM gradstats"
		" WHERE model = ?1 AND (source, layer) = " BEST("gradstats", "b.model = ?1")
		" ORDER BY batch, epoch",
};

struct hb_profdb {
	sqlite3 *db;                    /* the connection (rollback journal, foreign keys on) */
	char path[4096];                /* layer 0's file as given to the open call */
	char label[8200];               /* every layer's file, " + " between them, for messages */
	int readonly;                   /* opened read-only (every layered set is) */
	int nlayers;                    /* databases read as one: main, then l1, l2, ... attached */
	char layer_path[HB_PROFDB_MAX_LAYERS][4096]; /* their files, preferred first */
	sqlite3_stmt *st[ST_COUNT];     /* prepared lazily, reset after each use */
	int lock_fd;                    /* hb_profdb_lock_measuring's flock on layer 0's file, -1: none */
};

/* Prepared statement for id, reset and with its bindings cleared. */
static sqlite3_stmt *stmt(struct hb_profdb *p, enum stmt_id id, struct hb_error *err)
{
	if (!p->st[id]) {
		if (hb_db_prepare(p->db, stmt_sql[id], &p->st[id], err) < 0)
			return NULL;
	} else {
		sqlite3_reset(p->st[id]);
		sqlite3_clear_bindings(p->st[id]);
	}
	return p->st[id];
}

static int is_regular_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int db_error(struct hb_profdb *p, struct hb_error *err, const char *what)
{
	return hb_fail(err, hb_db_error_code(p->db), "%s: %s: %s", p->path, what, sqlite3_errmsg(p->db));
}

/* ------------------------------------------------------------------------ */
/* Source ranking                                                            */

/* Lower = preferred: live measurements of the real job first, then kernel
 * traces of the real model (torch), of the synthetic workload (cupti),
 * event timing, published profiles, and generated points last. */
static const char *const source_order[] = {
	"live",          "torch", "cupti",      "events",          "import:jabas", "import:pollux",
	"import:sia",    "import:nccl-tests", "cpu", "analytic", NULL,
};

int hb_profdb_source_rank(const char *source)
{
	int i;

	for (i = 0; source && source_order[i]; i++)
		if (strcmp(source, source_order[i]) == 0)
			return i;
	return (int)(sizeof(source_order) / sizeof(source_order[0])); /* unknown: after every known one */
}

static void sql_source_rank(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	sqlite3_result_int(ctx, hb_profdb_source_rank((const char *)sqlite3_value_text(argv[0])));
}

/* ------------------------------------------------------------------------ */
/* 2. Open, migrate, close, transactions                                     */

static int query_int(sqlite3 *db, const char *sql, int *out, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	if (hb_db_prepare(db, sql, &st, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return hb_fail(err, hb_db_error_code(db), "%s: %s", sql, sqlite3_errmsg(db));
	}
	*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* Check the file attached as `schema` ("main", "l1", ...) is ours and at
 * a version this build can use.  *version receives user_version (0 for a
 * new, empty file). */
static int check_identity(struct hb_profdb *p, const char *schema, const char *path, int *version,
			  struct hb_error *err)
{
	char sql[3][128];
	int appid, ntables;

	int own_txn = sqlite3_get_autocommit(p->db), rc;

	snprintf(sql[0], sizeof(sql[0]), "PRAGMA %s.user_version;", schema);
	snprintf(sql[1], sizeof(sql[1]), "PRAGMA %s.application_id;", schema);
	snprintf(sql[2], sizeof(sql[2]), "SELECT count(*) FROM %s.sqlite_master WHERE type = 'table';", schema);
	/* One read transaction: three statements in autocommit could see a
	 * concurrent schema creation half-way (its tables, but the version
	 * read before its commit). */
	rc = own_txn ? hb_db_exec(p->db, "BEGIN;", err) : 0;
	if (rc == 0 && (query_int(p->db, sql[0], version, err) < 0 || query_int(p->db, sql[1], &appid, err) < 0 ||
			query_int(p->db, sql[2], &ntables, err) < 0))
		rc = -1;
	if (own_txn)
		hb_db_rollback(p->db);
	if (rc < 0) {
		hb_error_prefix(err, "%s", path);
		return -1;
	}
	if (appid != 0 && appid != HB_PROFDB_APPLICATION_ID)
		return hb_input_error(err, "%s: not a hetbatch profile database (SQLite application_id 0x%08x)",
				      path, (unsigned)appid);
	if (*version == 0 && ntables > 0)
		return hb_input_error(err, "%s: not a hetbatch profile database (it has %d tables but no schema "
				      "version); use a new file", path, ntables);
	if (*version > HB_PROFDB_SCHEMA_VERSION)
		return hb_input_error(err, "%s: profile database schema version %d is newer than this hetbatch "
				      "supports (%d); use a newer hetbatch or a new database file",
				      path, *version, HB_PROFDB_SCHEMA_VERSION);
	return 0;
}

/*
 * Bring the file to HB_PROFDB_SCHEMA_VERSION.  Several processes may open a
 * new file at once (four imports into a fresh database): BEGIN IMMEDIATE
 * takes the write lock first (waiting out the others under the busy
 * timeout), and only then is the version read again, so the first process
 * creates the schema and the others find it done instead of failing with
 * "table run already exists".  All steps are one transaction.
 */
static int migrate(struct hb_profdb *p, struct hb_error *err)
{
	char sql[64];
	int from;

	if (hb_db_begin(p->db, err) < 0) {
		hb_error_prefix(err, "%s: creating or migrating the profile database", p->path);
		return -1;
	}
	if (check_identity(p, "main", p->path, &from, err) < 0)
		goto fail;
	for (int i = 0; i < NMIGRATIONS; i++) {
		if (migrations[i].to <= from)
			continue;
		if (hb_db_exec(p->db, migrations[i].sql, err) < 0 ||
		    hb_db_set_user_version(p->db, migrations[i].to, err) < 0) {
			hb_error_prefix(err, "%s: migrating the profile database to schema version %d", p->path,
					migrations[i].to);
			goto fail;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA application_id=%d;", HB_PROFDB_APPLICATION_ID);
	if (hb_db_exec(p->db, sql, err) < 0)
		goto fail;
	return hb_db_commit(p->db, err);
fail:
	hb_db_rollback(p->db);
	return -1;
}

/*
 * Readers see each table through a TEMP view of the same name (a temp
 * object shadows main's for an unqualified name): the rows of every layer,
 * with a column `layer` saying which (0 = main).  With one file the view is
 * that file's table plus layer 0, so every reader has one SQL text; writers
 * name main.<table>.  Temp objects live in the connection, never in a file,
 * so a read-only or immutable database gets them too.
 */
static int create_views(struct hb_profdb *p, struct hb_error *err)
{
	for (int t = 0; table_names[t]; t++) {
		char sql[1024];
		size_t len = (size_t)snprintf(sql, sizeof(sql), "CREATE TEMP VIEW %s AS SELECT *, 0 AS layer FROM main.%s",
					      table_names[t], table_names[t]);

		for (int l = 1; l < p->nlayers; l++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, " UNION ALL SELECT *, %d FROM l%d.%s", l, l,
						table_names[t]);
		if (len >= sizeof(sql))
			return hb_runtime_error(err, "%s: view of table %s too long", p->label, table_names[t]);
		if (hb_db_exec(p->db, sql, err) < 0)
			return -1;
	}
	return 0;
}

/* The connection, its identity check, migration and views for layer 0 at
 * path with hb_db_open flags; the caller attaches any other layer first. */
static int open_main(struct hb_profdb *p, const char *path, int flags, struct hb_error *err)
{
	int version;

	hb_strlcpy(p->path, path, sizeof(p->path));
	hb_strlcpy(p->label, path, sizeof(p->label));
	hb_strlcpy(p->layer_path[0], path, sizeof(p->layer_path[0]));
	p->nlayers = 1;
	p->readonly = (flags & (HB_DB_READONLY | HB_DB_IMMUTABLE)) != 0;
	if (hb_db_open(path, flags, &p->db, err) < 0)
		return -1;
	if (sqlite3_create_function(p->db, "hb_source_rank", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    sql_source_rank, NULL, NULL) != SQLITE_OK)
		return db_error(p, err, "register hb_source_rank");
	/* The temp views are the connection's own: keep them off the disk. */
	if (hb_db_exec(p->db, "PRAGMA temp_store=MEMORY;", err) < 0 ||
	    check_identity(p, "main", path, &version, err) < 0)
		return -1;
	if (version < HB_PROFDB_SCHEMA_VERSION) {
		if (p->readonly) {
			if (version == 0)
				return hb_input_error(err, "%s: not a hetbatch profile database (empty file)", path);
			return hb_input_error(err, "%s: profile database schema version %d is older than %d; open it "
					      "once read-write (for example with 'hetbatch import') to migrate it",
					      path, version, HB_PROFDB_SCHEMA_VERSION);
		}
		if (migrate(p, err) < 0)
			return -1;
	}
	return 0;
}

static int open_flags(int mode)
{
	if (mode & HB_PROFDB_IMMUTABLE)
		return HB_DB_IMMUTABLE;
	if (mode & HB_PROFDB_READONLY)
		return HB_DB_READONLY;
	return mode & HB_PROFDB_EXISTING ? 0 : HB_DB_CREATE;
}

int hb_profdb_open(const char *path, int mode, struct hb_profdb **out, struct hb_error *err)
{
	struct hb_profdb_layer one = { path, mode | HB_PROFDB_READONLY };

	*out = NULL;
	if (!path || !*path)
		return hb_input_error(err, "profile database: empty path");
	if (mode & (HB_PROFDB_READONLY | HB_PROFDB_IMMUTABLE))
		return hb_profdb_open_layers(&one, 1, out, err);
	{
		struct hb_profdb *p = calloc(1, sizeof(*p));

		if (!p)
			return hb_runtime_error(err, "%s: out of memory", path);
		p->lock_fd = -1;
		if (open_main(p, path, open_flags(mode), err) < 0 || create_views(p, err) < 0) {
			hb_profdb_close(p);
			return -1;
		}
		*out = p;
	}
	return 0;
}

int hb_profdb_open_layers(const struct hb_profdb_layer *layers, int n, struct hb_profdb **out, struct hb_error *err)
{
	struct hb_profdb *p;

	*out = NULL;
	if (n < 1 || n > HB_PROFDB_MAX_LAYERS)
		return hb_input_error(err, "profile database: %d layers (1 to %d)", n, HB_PROFDB_MAX_LAYERS);
	for (int l = 0; l < n; l++)
		if (!layers[l].path || !*layers[l].path)
			return hb_input_error(err, "profile database: empty path");
	p = calloc(1, sizeof(*p));
	if (!p)
		return hb_runtime_error(err, "%s: out of memory", layers[0].path);
	p->lock_fd = -1;
	if (open_main(p, layers[0].path, open_flags(layers[0].mode | HB_PROFDB_READONLY), err) < 0)
		goto fail;
	for (int l = 1; l < n; l++) {
		char uri[8192], sql[64], schema[16];
		int version;
		size_t len;

		snprintf(schema, sizeof(schema), "l%d", l);
		if (hb_db_uri(layers[l].path, (layers[l].mode & HB_PROFDB_IMMUTABLE) != 0, uri, sizeof(uri)) < 0) {
			hb_input_error(err, "%s: path too long", layers[l].path);
			goto fail;
		}
		if (!(layers[l].mode & HB_PROFDB_IMMUTABLE))
			hb_db_settle_journal(layers[l].path); /* a killed writer's journal (db.h) */
		/* The URI goes in as a bound parameter: no quoting to get wrong. */
		snprintf(sql, sizeof(sql), "ATTACH DATABASE ?1 AS %s;", schema);
		{
			sqlite3_stmt *st;
			int rc;

			if (hb_db_prepare(p->db, sql, &st, err) < 0)
				goto fail;
			sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT);
			rc = sqlite3_step(st);
			sqlite3_finalize(st);
			if (rc != SQLITE_DONE) {
				hb_input_error(err, "%s: cannot open database: %s", layers[l].path, sqlite3_errmsg(p->db));
				goto fail;
			}
		}
		if (hb_db_check_readable(p->db, schema, layers[l].path, err) < 0)
			goto fail;
		hb_strlcpy(p->layer_path[l], layers[l].path, sizeof(p->layer_path[l]));
		p->nlayers = l + 1;
		len = strlen(p->label);
		snprintf(p->label + len, sizeof(p->label) - len, " + %s", layers[l].path);
		if (check_identity(p, schema, layers[l].path, &version, err) < 0)
			goto fail;
		if (version != HB_PROFDB_SCHEMA_VERSION) {
			hb_input_error(err, "%s: %s", layers[l].path,
				       version == 0 ? "not a hetbatch profile database (empty file)"
						    : "profile database at an older schema version; open it once "
						      "read-write (for example with 'hetbatch import') to migrate it");
			goto fail;
		}
	}
	if (create_views(p, err) < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	hb_profdb_close(p);
	return -1;
}

void hb_profdb_close(struct hb_profdb *db)
{
	if (!db)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(db->st[i]);
	if (db->db) {
		hb_db_rollback(db->db);
		hb_db_close(db->db);
	}
	/* Only now: closing a descriptor of the file drops every POSIX lock
	 * this process holds on it, SQLite's included. */
	if (db->lock_fd >= 0)
		close(db->lock_fd);
	free(db);
}

int hb_profdb_lock_measuring(struct hb_profdb *db, struct hb_error *err)
{
	if (db->readonly)
		return hb_input_error(err, "%s: opened read-only", db->path);
	if (db->lock_fd >= 0)
		return 0;
	db->lock_fd = open(db->path, O_RDONLY | O_CLOEXEC);
	if (db->lock_fd < 0)
		return hb_runtime_error(err, "%s: cannot open for locking: %s", db->path, strerror(errno));
	/* flock, not fcntl: it is separate from SQLite's own byte-range locks
	 * and goes with the descriptor, so a killed run releases it. */
	if (flock(db->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		hb_runtime_error(err, "%s: another measuring run (hetbatch profile --backend) is writing this "
				 "database; wait for it to end or give this run its own --db", db->path);
	else
		hb_runtime_error(err, "%s: cannot lock: %s", db->path, strerror(errno));
	close(db->lock_fd);
	db->lock_fd = -1;
	return -1;
}

const char *hb_profdb_path(const struct hb_profdb *db)
{
	return db->path;
}

const char *hb_profdb_label(const struct hb_profdb *db)
{
	return db->label;
}

int hb_profdb_nlayers(const struct hb_profdb *db)
{
	return db->nlayers;
}

const char *hb_profdb_layer_path(const struct hb_profdb *db, int layer)
{
	return layer >= 0 && layer < db->nlayers ? db->layer_path[layer] : NULL;
}

int hb_profdb_begin(struct hb_profdb *db, struct hb_error *err)
{
	if (db->readonly)
		return hb_input_error(err, "%s: opened read-only", db->path);
	return hb_db_begin(db->db, err);
}

int hb_profdb_commit(struct hb_profdb *db, struct hb_error *err)
{
	return hb_db_commit(db->db, err);
}

void hb_profdb_rollback(struct hb_profdb *db)
{
	/* A statement left mid-step would keep the transaction's read lock. */
	for (int i = 0; i < ST_COUNT; i++)
		if (db->st[i])
			sqlite3_reset(db->st[i]);
	hb_db_rollback(db->db);
}

/* ------------------------------------------------------------------------ */
/* 4. Writers                                                                */

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

static int bind_run(sqlite3_stmt *st, int i, int64_t run_id)
{
	return run_id > 0 ? sqlite3_bind_int64(st, i, run_id) : sqlite3_bind_null(st, i);
}

/* Step a bound write statement; a constraint failure is the caller's input. */
static int finish_write(struct hb_profdb *p, sqlite3_stmt *st, const char *what, struct hb_error *err)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return 0;
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return hb_input_error(err, "%s: %s rejected: %s", p->path, what, sqlite3_errmsg(p->db));
	return db_error(p, err, what);
}

static int check_name(const char *what, const char *field, const char *v, struct hb_error *err)
{
	if (!v || !*v)
		return hb_input_error(err, "%s: field '%s' is empty", what, field);
	return 0;
}

/* Times and sizes must be finite and >= lo. */
static int check_num(const char *what, const char *field, double v, double lo, struct hb_error *err)
{
	if (!isfinite(v) || v < lo)
		return hb_input_error(err, "%s: field '%s': value %g must be a finite number >= %g", what, field,
				      v, lo);
	return 0;
}

int hb_profdb_add_run(struct hb_profdb *db, const struct hb_run_info *run, int64_t *id, struct hb_error *err)
{
	sqlite3_stmt *st;

	if (check_name("run", "kind", run->kind, err) < 0)
		return -1;
	if (!(st = stmt(db, ST_ADD_RUN, err)))
		return -1;
	bind_text(st, 1, run->kind);
	bind_text(st, 2, run->host);
	bind_text(st, 3, run->device);
	bind_text(st, 4, run->driver);
	bind_text(st, 5, run->cuda);
	bind_text(st, 6, run->backend);
	bind_text(st, 7, run->started_at);
	bind_text(st, 8, HB_VERSION);
	bind_text(st, 9, run->gpu);
	bind_text(st, 10, run->cupti);
	if (run->scale > 0)
		sqlite3_bind_double(st, 11, run->scale);
	else
		sqlite3_bind_null(st, 11);
	sqlite3_bind_int64(st, 12, run->dropped);
	bind_text(st, 13, run->notes);
	if (finish_write(db, st, "add run", err) < 0)
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(db->db);
	return 0;
}

int hb_profdb_put_compute(struct hb_profdb *db, const struct hb_compute_row *r, struct hb_error *err)
{
	static const char *const names[] = { "fwd_s", "bwd_s", "data_s", "update_s", "copy_s", "bn_s", "total_s",
					      "mem_bytes" };
	const double v[] = { r->fwd_s, r->bwd_s, r->data_s, r->update_s, r->copy_s, r->bn_s, r->total_s,
			     r->mem_bytes };
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "compute row (%s, %s, local_bs %d, n_vsw %d)", r->gpu, r->model, r->local_bs,
		 r->n_vsw);
	if (check_name(what, "gpu", r->gpu, err) < 0 || check_name(what, "model", r->model, err) < 0 ||
	    check_name(what, "source", r->source, err) < 0)
		return -1;
	if (r->local_bs < 1 || r->n_vsw < 1)
		return hb_input_error(err, "%s: local_bs and n_vsw must be >= 1", what);
	for (int i = 0; i < 8; i++)
		if (check_num(what, names[i], v[i], 0.0, err) < 0)
			return -1;
	if (!(st = stmt(db, ST_PUT_COMPUTE, err)))
		return -1;
	bind_text(st, 1, r->gpu);
	bind_text(st, 2, r->model);
	sqlite3_bind_int(st, 3, r->local_bs);
	sqlite3_bind_int(st, 4, r->n_vsw);
	for (int i = 0; i < 8; i++)
		sqlite3_bind_double(st, 5 + i, v[i]);
	bind_text(st, 13, r->source);
	bind_run(st, 14, r->run_id);
	return finish_write(db, st, what, err);
}

int hb_profdb_put_memory(struct hb_profdb *db, const struct hb_memory_row *r, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "memory row (%s, %s, local_bs %d)", r->gpu, r->model, r->local_bs);
	if (check_name(what, "gpu", r->gpu, err) < 0 || check_name(what, "model", r->model, err) < 0 ||
	    check_name(what, "source", r->source, err) < 0)
		return -1;
	if (r->local_bs < 1 || r->max_vsw < 0)
		return hb_input_error(err, "%s: local_bs must be >= 1 and max_vsw >= 0 (got %d)", what, r->max_vsw);
	if (!(st = stmt(db, ST_PUT_MEMORY, err)))
		return -1;
	bind_text(st, 1, r->gpu);
	bind_text(st, 2, r->model);
	sqlite3_bind_int(st, 3, r->local_bs);
	sqlite3_bind_int(st, 4, r->max_vsw);
	bind_text(st, 5, r->source);
	return finish_write(db, st, what, err);
}

int hb_profdb_put_buckets(struct hb_profdb *db, const char *model, const double *bytes, int n,
			  const char *source, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "buckets of %s", model ? model : "?");
	if (check_name(what, "model", model, err) < 0 || check_name(what, "source", source, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char f[32];

		snprintf(f, sizeof(f), "bytes[%d]", i);
		if (check_num(what, f, bytes[i], 1.0, err) < 0)
			return -1;
	}
	if (!(st = stmt(db, ST_DEL_BUCKETS, err)))
		return -1;
	bind_text(st, 1, model);
	bind_text(st, 2, source);
	if (finish_write(db, st, what, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!(st = stmt(db, ST_PUT_BUCKET, err)))
			return -1;
		bind_text(st, 1, model);
		sqlite3_bind_int(st, 2, i);
		sqlite3_bind_double(st, 3, bytes[i]);
		bind_text(st, 4, source);
		if (finish_write(db, st, what, err) < 0)
			return -1;
	}
	return 0;
}

static int check_scope(const char *what, const char *scope, struct hb_error *err)
{
	if (!scope || (strcmp(scope, "intra") != 0 && strcmp(scope, "inter") != 0))
		return hb_input_error(err, "%s: field 'scope': value '%s' is not 'intra' or 'inter'", what,
				      scope ? scope : "");
	return 0;
}

int hb_profdb_put_allreduce(struct hb_profdb *db, const struct hb_allreduce_row *r, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "allreduce row (%s, %s, %d GPUs, %.0f bytes)", r->scope, r->link, r->n_gpus,
		 r->bytes);
	if (check_scope(what, r->scope, err) < 0 || check_name(what, "link", r->link, err) < 0 ||
	    check_name(what, "source", r->source, err) < 0 || check_num(what, "bytes", r->bytes, 0.0, err) < 0)
		return -1;
	if (r->n_gpus < 1)
		return hb_input_error(err, "%s: n_gpus must be >= 1", what);
	if (!isfinite(r->time_s) || r->time_s <= 0)
		return hb_input_error(err, "%s: field 'time_s': value %g must be > 0", what, r->time_s);
	if (!(st = stmt(db, ST_PUT_ALLREDUCE, err)))
		return -1;
	bind_text(st, 1, r->scope);
	bind_text(st, 2, r->link);
	sqlite3_bind_int(st, 3, r->n_gpus);
	sqlite3_bind_double(st, 4, r->bytes);
	sqlite3_bind_double(st, 5, r->time_s);
	bind_text(st, 6, r->source);
	bind_run(st, 7, r->run_id);
	return finish_write(db, st, what, err);
}

int hb_profdb_clear_allreduce(struct hb_profdb *db, const char *scope, const char *link, const char *source,
			      struct hb_error *err)
{
	char what[160];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "clear allreduce rows (%s, %s, %s)", scope ? scope : "?", link ? link : "?",
		 source ? source : "?");
	if (check_scope(what, scope, err) < 0 || check_name(what, "link", link, err) < 0 ||
	    check_name(what, "source", source, err) < 0)
		return -1;
	if (!(st = stmt(db, ST_DEL_ALLREDUCE, err)))
		return -1;
	bind_text(st, 1, scope);
	bind_text(st, 2, link);
	bind_text(st, 3, source);
	if (finish_write(db, st, what, err) < 0)
		return -1;
	/* The source's fit was of the rows just deleted: a fit that outlived
	 * its rows would disagree with whatever replaces them. */
	if (!(st = stmt(db, ST_DEL_FIT, err)))
		return -1;
	bind_text(st, 1, scope);
	bind_text(st, 2, link);
	bind_text(st, 3, source);
	return finish_write(db, st, what, err);
}

int hb_profdb_put_allreduce_fit(struct hb_profdb *db, const struct hb_allreduce_fit *f, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "allreduce fit (%s, %s)", f->scope, f->link);
	if (check_scope(what, f->scope, err) < 0 || check_name(what, "link", f->link, err) < 0 ||
	    check_name(what, "source", f->source, err) < 0)
		return -1;
	if (!isfinite(f->alpha) || !isfinite(f->beta) || !isfinite(f->r2))
		return hb_input_error(err, "%s: alpha, beta and r2 must be finite", what);
	if (!isfinite(f->bandwidth) || f->bandwidth <= 0)
		return hb_input_error(err, "%s: field 'bandwidth': value %g must be > 0", what, f->bandwidth);
	if (!(st = stmt(db, ST_PUT_FIT, err)))
		return -1;
	bind_text(st, 1, f->scope);
	bind_text(st, 2, f->link);
	sqlite3_bind_double(st, 3, f->alpha);
	sqlite3_bind_double(st, 4, f->beta);
	sqlite3_bind_double(st, 5, f->bandwidth);
	sqlite3_bind_double(st, 6, f->r2);
	bind_text(st, 7, f->source);
	return finish_write(db, st, what, err);
}

int hb_profdb_put_placement(struct hb_profdb *db, const struct hb_placement_row *r, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "placement row (%s, %s, '%s', local_bs %d)", r->model, r->gpu, r->placement,
		 r->local_bs);
	if (check_name(what, "model", r->model, err) < 0 || check_name(what, "gpu", r->gpu, err) < 0 ||
	    check_name(what, "placement", r->placement, err) < 0 || check_name(what, "source", r->source, err) < 0 ||
	    check_num(what, "step_s", r->step_s, 0.0, err) < 0 || check_num(what, "sync_s", r->sync_s, 0.0, err) < 0)
		return -1;
	if (r->local_bs < 1)
		return hb_input_error(err, "%s: local_bs must be >= 1", what);
	if (!(st = stmt(db, ST_PUT_PLACEMENT, err)))
		return -1;
	bind_text(st, 1, r->model);
	bind_text(st, 2, r->gpu);
	bind_text(st, 3, r->placement);
	sqlite3_bind_int(st, 4, r->local_bs);
	sqlite3_bind_double(st, 5, r->step_s);
	sqlite3_bind_double(st, 6, r->sync_s);
	bind_text(st, 7, r->source);
	return finish_write(db, st, what, err);
}

int hb_profdb_put_scalability(struct hb_profdb *db, const struct hb_scalability_row *r, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "scalability row (%s, %s, %d nodes, %d replicas, local_bs %d)", r->model,
		 r->gpu, r->num_nodes, r->num_replicas, r->local_bs);
	if (check_name(what, "model", r->model, err) < 0 || check_name(what, "gpu", r->gpu, err) < 0 ||
	    check_name(what, "source", r->source, err) < 0 || check_num(what, "step_s", r->step_s, 0.0, err) < 0 ||
	    check_num(what, "sync_s", r->sync_s, 0.0, err) < 0)
		return -1;
	if (r->num_nodes < 1 || r->num_replicas < 1 || r->local_bs < 1)
		return hb_input_error(err, "%s: num_nodes, num_replicas and local_bs must be >= 1", what);
	if (!(st = stmt(db, ST_PUT_SCALABILITY, err)))
		return -1;
	bind_text(st, 1, r->model);
	bind_text(st, 2, r->gpu);
	sqlite3_bind_int(st, 3, r->num_nodes);
	sqlite3_bind_int(st, 4, r->num_replicas);
	sqlite3_bind_int(st, 5, r->local_bs);
	sqlite3_bind_double(st, 6, r->step_s);
	sqlite3_bind_double(st, 7, r->sync_s);
	bind_text(st, 8, r->source);
	return finish_write(db, st, what, err);
}

int hb_profdb_put_gradstats(struct hb_profdb *db, const struct hb_gradstats_row *r, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "gradstats row (%s, batch %d, epoch %d)", r->model, r->batch, r->epoch);
	if (check_name(what, "model", r->model, err) < 0 || check_name(what, "source", r->source, err) < 0 ||
	    check_num(what, "progress", r->progress, 0.0, err) < 0)
		return -1;
	if (r->batch < 1 || r->epoch < 0 || r->iteration < 0)
		return hb_input_error(err, "%s: batch must be >= 1, epoch and iteration >= 0", what);
	if (!isfinite(r->metric) || !isfinite(r->grad_sqr) || !isfinite(r->grad_var))
		return hb_input_error(err, "%s: metric, grad_sqr and grad_var must be finite", what);
	if (!(st = stmt(db, ST_PUT_GRADSTATS, err)))
		return -1;
	bind_text(st, 1, r->model);
	sqlite3_bind_int(st, 2, r->batch);
	sqlite3_bind_int(st, 3, r->epoch);
	sqlite3_bind_int64(st, 4, r->iteration);
	sqlite3_bind_double(st, 5, r->progress);
	sqlite3_bind_double(st, 6, r->metric);
	sqlite3_bind_double(st, 7, r->grad_sqr);
	sqlite3_bind_double(st, 8, r->grad_var);
	bind_text(st, 9, r->source);
	return finish_write(db, st, what, err);
}

int hb_profdb_put_prediction(struct hb_profdb *db, int64_t run_id, const char *model, const char *config_json,
			     double predicted_s, double measured_s, struct hb_error *err)
{
	char what[256];
	sqlite3_stmt *st;

	snprintf(what, sizeof(what), "prediction row (%s)", model ? model : "?");
	if (check_name(what, "model", model, err) < 0 || check_name(what, "config_json", config_json, err) < 0 ||
	    check_num(what, "predicted_s", predicted_s, 0.0, err) < 0 ||
	    check_num(what, "measured_s", measured_s, 0.0, err) < 0)
		return -1;
	if (!(st = stmt(db, ST_PUT_PREDICTION, err)))
		return -1;
	bind_run(st, 1, run_id);
	bind_text(st, 2, model);
	bind_text(st, 3, config_json);
	sqlite3_bind_double(st, 4, predicted_s);
	sqlite3_bind_double(st, 5, measured_s);
	return finish_write(db, st, what, err);
}

/* ------------------------------------------------------------------------ */
/* 5. Readers                                                                */

static void col_text(sqlite3_stmt *st, int col, char *dst, size_t size)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	hb_strlcpy(dst, s ? (const char *)s : "", size);
}

/* Append one zeroed element to a growing array; NULL when out of memory. */
static void *grow(void **arr, int *n, int *cap, size_t size)
{
	if (*n == *cap) {
		int ncap = *cap ? 2 * *cap : 16;
		void *na = realloc(*arr, (size_t)ncap * size);

		if (!na)
			return NULL;
		*arr = na;
		*cap = ncap;
	}
	memset((char *)*arr + (size_t)*n * size, 0, size);
	return (char *)*arr + (size_t)(*n)++ * size;
}

/* Fills one element from the current row. */
typedef void row_reader(sqlite3_stmt *st, void *dst);

/* Run a bound SELECT and collect its rows with fill(). */
static int collect(struct hb_profdb *p, sqlite3_stmt *st, size_t size, row_reader *fill, void **rows, int *n,
		   const char *what, struct hb_error *err)
{
	void *arr = NULL;
	int cap = 0, rc;

	*rows = NULL;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		void *dst = grow(&arr, n, &cap, size);

		if (!dst) {
			sqlite3_reset(st);
			free(arr);
			*n = 0;
			return hb_runtime_error(err, "%s: %s: out of memory", p->path, what);
		}
		fill(st, dst);
	}
	if (rc != SQLITE_DONE) {
		db_error(p, err, what);
		sqlite3_reset(st);
		free(arr);
		*n = 0;
		return -1;
	}
	sqlite3_reset(st);
	*rows = arr;
	return 0;
}

static void read_compute(sqlite3_stmt *st, void *dst)
{
	struct hb_compute_row *r = dst;

	col_text(st, 0, r->gpu, sizeof(r->gpu));
	col_text(st, 1, r->model, sizeof(r->model));
	r->local_bs = sqlite3_column_int(st, 2);
	r->n_vsw = sqlite3_column_int(st, 3);
	r->fwd_s = sqlite3_column_double(st, 4);
	r->bwd_s = sqlite3_column_double(st, 5);
	r->data_s = sqlite3_column_double(st, 6);
	r->update_s = sqlite3_column_double(st, 7);
	r->copy_s = sqlite3_column_double(st, 8);
	r->bn_s = sqlite3_column_double(st, 9);
	r->total_s = sqlite3_column_double(st, 10);
	r->mem_bytes = sqlite3_column_double(st, 11);
	col_text(st, 12, r->source, sizeof(r->source));
	r->run_id = sqlite3_column_int64(st, 13);
}

static void read_memory(sqlite3_stmt *st, void *dst)
{
	struct hb_memory_row *r = dst;

	col_text(st, 0, r->gpu, sizeof(r->gpu));
	col_text(st, 1, r->model, sizeof(r->model));
	r->local_bs = sqlite3_column_int(st, 2);
	r->max_vsw = sqlite3_column_int(st, 3);
	col_text(st, 4, r->source, sizeof(r->source));
}

static void read_bytes(sqlite3_stmt *st, void *dst)
{
	*(double *)dst = sqlite3_column_double(st, 0);
}

static void read_allreduce(sqlite3_stmt *st, void *dst)
{
	struct hb_allreduce_row *r = dst;

	col_text(st, 0, r->scope, sizeof(r->scope));
	col_text(st, 1, r->link, sizeof(r->link));
	r->n_gpus = sqlite3_column_int(st, 2);
	r->bytes = sqlite3_column_double(st, 3);
	r->time_s = sqlite3_column_double(st, 4);
	col_text(st, 5, r->source, sizeof(r->source));
	r->run_id = sqlite3_column_int64(st, 6);
}

static void read_placement(sqlite3_stmt *st, void *dst)
{
	struct hb_placement_row *r = dst;

	col_text(st, 0, r->model, sizeof(r->model));
	col_text(st, 1, r->gpu, sizeof(r->gpu));
	col_text(st, 2, r->placement, sizeof(r->placement));
	r->local_bs = sqlite3_column_int(st, 3);
	r->step_s = sqlite3_column_double(st, 4);
	r->sync_s = sqlite3_column_double(st, 5);
	col_text(st, 6, r->source, sizeof(r->source));
}

static void read_scalability(sqlite3_stmt *st, void *dst)
{
	struct hb_scalability_row *r = dst;

	col_text(st, 0, r->model, sizeof(r->model));
	col_text(st, 1, r->gpu, sizeof(r->gpu));
	r->num_nodes = sqlite3_column_int(st, 2);
	r->num_replicas = sqlite3_column_int(st, 3);
	r->local_bs = sqlite3_column_int(st, 4);
	r->step_s = sqlite3_column_double(st, 5);
	r->sync_s = sqlite3_column_double(st, 6);
	col_text(st, 7, r->source, sizeof(r->source));
}

static void read_gradstats(sqlite3_stmt *st, void *dst)
{
	struct hb_gradstats_row *r = dst;

	col_text(st, 0, r->model, sizeof(r->model));
	r->batch = sqlite3_column_int(st, 1);
	r->epoch = sqlite3_column_int(st, 2);
	r->iteration = (long)sqlite3_column_int64(st, 3);
	r->progress = sqlite3_column_double(st, 4);
	r->metric = sqlite3_column_double(st, 5);
	r->grad_sqr = sqlite3_column_double(st, 6);
	r->grad_var = sqlite3_column_double(st, 7);
	col_text(st, 8, r->source, sizeof(r->source));
}

/* Prepare id and bind up to three text keys (NULL = not bound). */
static sqlite3_stmt *keyed(struct hb_profdb *p, enum stmt_id id, const char *k1, const char *k2, const char *k3,
			   struct hb_error *err)
{
	sqlite3_stmt *st = stmt(p, id, err);

	if (!st)
		return NULL;
	if (k1)
		bind_text(st, 1, k1);
	if (k2)
		bind_text(st, 2, k2);
	if (k3)
		bind_text(st, 3, k3);
	return st;
}

int hb_profdb_get_compute(struct hb_profdb *db, const char *gpu, const char *model,
			  struct hb_compute_row **rows, int *n, struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_COMPUTE, gpu, model, NULL, err);

	*rows = NULL;
	*n = 0;
	return st ? collect(db, st, sizeof(**rows), read_compute, (void **)rows, n, "read compute", err) : -1;
}

/* The run-table helpers below are used once per run or per measured point,
 * so they prepare their statements on the spot instead of caching them. */
static int one_shot(struct hb_profdb *db, const char *sql, sqlite3_stmt **st, struct hb_error *err)
{
	if (hb_db_prepare(db->db, sql, st, err) < 0) {
		hb_error_prefix(err, "%s", db->path);
		return -1;
	}
	return 0;
}

int hb_profdb_set_run_dropped(struct hb_profdb *db, int64_t id, long dropped, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	if (one_shot(db, "UPDATE main.run SET dropped = ?1 WHERE id = ?2", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, dropped);
	sqlite3_bind_int64(st, 2, id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, err, "update run");
}

int hb_profdb_get_run(struct hb_profdb *db, int64_t id, struct hb_run_info *out, int *found, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	*found = 0;
	if (one_shot(db, "SELECT kind, host, device, driver, cuda, backend, started_at, gpu, cupti,"
			 " coalesce(scale, 0), dropped, notes FROM run WHERE id = ?1 ORDER BY layer LIMIT 1", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = 1;
		col_text(st, 0, out->kind, sizeof(out->kind));
		col_text(st, 1, out->host, sizeof(out->host));
		col_text(st, 2, out->device, sizeof(out->device));
		col_text(st, 3, out->driver, sizeof(out->driver));
		col_text(st, 4, out->cuda, sizeof(out->cuda));
		col_text(st, 5, out->backend, sizeof(out->backend));
		col_text(st, 6, out->started_at, sizeof(out->started_at));
		col_text(st, 7, out->gpu, sizeof(out->gpu));
		col_text(st, 8, out->cupti, sizeof(out->cupti));
		out->scale = sqlite3_column_double(st, 9);
		out->dropped = (long)sqlite3_column_int64(st, 10);
		col_text(st, 11, out->notes, sizeof(out->notes));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_error(db, err, "read run");
}

int hb_profdb_find_profile_run(struct hb_profdb *db, const char *backend, const char *device, const char *gpu,
			       double scale, int64_t *id, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	*id = 0;
	if (one_shot(db, "SELECT id FROM run WHERE kind = 'profile' AND backend = ?1 AND device = ?2 AND gpu = ?3"
			 " AND abs(coalesce(scale, 0) - ?4) <= 1e-12 * ?4 ORDER BY id DESC LIMIT 1", &st, err) < 0)
		return -1;
	bind_text(st, 1, backend);
	bind_text(st, 2, device);
	bind_text(st, 3, gpu);
	sqlite3_bind_double(st, 4, scale);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_error(db, err, "find run");
}

int hb_profdb_has_compute(struct hb_profdb *db, int64_t run_id, const char *gpu, const char *model, int local_bs,
			  int n_vsw, int *found, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	*found = 0;
	if (one_shot(db, "SELECT 1 FROM compute WHERE run_id = ?1 AND gpu = ?2 AND model = ?3 AND local_bs = ?4"
			 " AND n_vsw = ?5", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, gpu);
	bind_text(st, 3, model);
	sqlite3_bind_int(st, 4, local_bs);
	sqlite3_bind_int(st, 5, n_vsw);
	rc = sqlite3_step(st);
	*found = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_error(db, err, "read compute");
}

int hb_profdb_list_measured(struct hb_profdb *db, struct hb_compute_row **rows, int *n, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	*rows = NULL;
	*n = 0;
	if (one_shot(db, "SELECT gpu, model, local_bs, n_vsw, fwd_s, bwd_s, data_s, update_s, copy_s, bn_s, total_s,"
			 " mem_bytes, source, run_id FROM compute WHERE source IN ('torch', 'cupti', 'events', 'cpu')"
			 " ORDER BY gpu, model, local_bs, n_vsw, source", &st, err) < 0)
		return -1;
	rc = collect(db, st, sizeof(**rows), read_compute, (void **)rows, n, "read compute", err);
	sqlite3_finalize(st);
	return rc;
}

int hb_profdb_compute_origin(struct hb_profdb *db, const char *gpu, const char *model,
			     struct hb_profdb_origin *out, int *found, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	*found = 0;
	/* The first row hb_profdb_get_compute would return, and how many. */
	if (one_shot(db, "SELECT source, layer, coalesce(run_id, 0), count(*) OVER () FROM compute"
			 " WHERE gpu = ?1 AND model = ?2 AND (source, layer) = " BEST("compute", "b.gpu = ?1 AND b.model = ?2")
			 " ORDER BY local_bs, n_vsw LIMIT 1", &st, err) < 0)
		return -1;
	bind_text(st, 1, gpu);
	bind_text(st, 2, model);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = 1;
		col_text(st, 0, out->source, sizeof(out->source));
		out->layer = sqlite3_column_int(st, 1);
		out->run_id = sqlite3_column_int64(st, 2);
		out->rows = (long)sqlite3_column_int64(st, 3);
		out->path = hb_profdb_layer_path(db, out->layer);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(db, err, "read compute");
	if (!*found)
		return 0;
	/* Which runs those rows come from: a run that replaced only some of
	 * an older run's points leaves a mix, and the reader says so. */
	if (one_shot(db, "SELECT count(DISTINCT coalesce(run_id, 0)), min(coalesce(run_id, 0)),"
			 " max(coalesce(run_id, 0)) FROM compute WHERE gpu = ?1 AND model = ?2 AND source = ?3"
			 " AND layer = ?4", &st, err) < 0)
		return -1;
	bind_text(st, 1, gpu);
	bind_text(st, 2, model);
	bind_text(st, 3, out->source);
	sqlite3_bind_int(st, 4, out->layer);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->runs = (long)sqlite3_column_int64(st, 0);
		out->run_min = sqlite3_column_int64(st, 1);
		out->run_max = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_error(db, err, "read compute runs");
}

/* FNV-1a 64 over a printed value and a separator. */
static uint64_t fnv_add(uint64_t h, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (const char *c = buf; *c; c++) {
		h ^= (unsigned char)*c;
		h *= 0x100000001b3ULL;
	}
	h ^= (unsigned char)'|';
	return h * 0x100000001b3ULL;
}

int hb_profdb_profile_use(struct hb_profdb *db, const char *gpu, const char *model, struct hb_profile_use *out,
			  struct hb_error *err)
{
	struct hb_profdb_origin o;
	struct hb_compute_row *cr = NULL;
	struct hb_memory_row *mr = NULL;
	struct hb_placement_row *pr = NULL;
	struct hb_scalability_row *sr = NULL;
	int found, nc = 0, nm = 0, np = 0, ns = 0, rc = -1;
	uint64_t h = 0xcbf29ce484222325ULL;

	memset(out, 0, sizeof(*out));
	hb_strlcpy(out->gpu, gpu, sizeof(out->gpu));
	hb_strlcpy(out->model, model, sizeof(out->model));
	if (hb_profdb_compute_origin(db, gpu, model, &o, &found, err) < 0 ||
	    hb_profdb_get_compute(db, gpu, model, &cr, &nc, err) < 0 ||
	    hb_profdb_get_memory(db, gpu, model, &mr, &nm, err) < 0 ||
	    hb_profdb_get_placements(db, model, &pr, &np, err) < 0 ||
	    hb_profdb_get_scalability(db, model, &sr, &ns, err) < 0)
		goto out;
	if (found) {
		const char *slash = o.path ? strrchr(o.path, '/') : NULL;

		hb_strlcpy(out->source, o.source, sizeof(out->source));
		hb_strlcpy(out->file, slash ? slash + 1 : o.path ? o.path : "", sizeof(out->file));
		out->layer = o.layer;
		out->builtin = o.path && hb_is_default_profdb(o.path);
		out->run_id = o.run_id;
		out->rows = o.rows;
	}
	for (int i = 0; i < nc; i++) {
		const struct hb_compute_row *r = &cr[i];

		h = fnv_add(h, "c %d %d %s", r->local_bs, r->n_vsw, r->source);
		h = fnv_add(h, "%.17g %.17g %.17g %.17g", r->fwd_s, r->bwd_s, r->data_s, r->update_s);
		h = fnv_add(h, "%.17g %.17g %.17g %.17g", r->copy_s, r->bn_s, r->total_s, r->mem_bytes);
	}
	for (int i = 0; i < nm; i++)
		h = fnv_add(h, "m %d %d %s", mr[i].local_bs, mr[i].max_vsw, mr[i].source);
	for (int i = 0; i < np; i++) {
		if (strcmp(pr[i].gpu, gpu) != 0)
			continue;
		out->measured++;
		h = fnv_add(h, "p %s %d %.17g %.17g %s", pr[i].placement, pr[i].local_bs, pr[i].step_s, pr[i].sync_s,
			    pr[i].source);
	}
	for (int i = 0; i < ns; i++) {
		if (strcmp(sr[i].gpu, gpu) != 0)
			continue;
		out->measured++;
		h = fnv_add(h, "s %d %d %d %.17g %.17g %s", sr[i].num_nodes, sr[i].num_replicas, sr[i].local_bs,
			    sr[i].step_s, sr[i].sync_s, sr[i].source);
	}
	out->digest = h;
	rc = 0;
out:
	free(cr);
	free(mr);
	free(pr);
	free(sr);
	return rc;
}

void hb_profile_use_hex(const struct hb_profile_use *u, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)u->digest);
}

void hb_profile_use_bind(sqlite3_stmt *st, int first, const struct hb_profile_use *u)
{
	char hex[17];

	hb_profile_use_hex(u, hex);
	sqlite3_bind_text(st, first, u->gpu, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, first + 1, u->model, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, first + 2, u->source, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, first + 3, u->file, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, first + 4, u->builtin);
	if (u->run_id)
		sqlite3_bind_int64(st, first + 5, u->run_id);
	else
		sqlite3_bind_null(st, first + 5);
	sqlite3_bind_int64(st, first + 6, u->rows);
	sqlite3_bind_int64(st, first + 7, u->measured);
	sqlite3_bind_text(st, first + 8, hex, -1, SQLITE_TRANSIENT);
}

int hb_profdb_cluster_uses(struct hb_profdb *db, const struct hb_catalog *cat, const struct hb_cluster *cl,
			   const struct hb_model *const *models, int nmodels, struct hb_profile_use **out, int *n,
			   struct hb_error *err)
{
	struct hb_profile_use *u = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1) * (size_t)(nmodels > 0 ? nmodels : 1),
					  sizeof(*u));
	int k = 0;

	*out = NULL;
	*n = 0;
	if (!u)
		return hb_runtime_error(err, "out of memory");
	for (int mi = 0; mi < nmodels; mi++)
		for (int i = 0; i < cl->nnodes; i++) {
			if (!hb_cluster_first_of_type(cat, cl, i))
				continue;
			if (hb_profdb_profile_use(db, cat->gpus[cl->nodes[i].gpu].name, models[mi]->name, &u[k], err) < 0) {
				free(u);
				return -1;
			}
			k++;
		}
	*out = u;
	*n = k;
	return 0;
}

int hb_profdb_get_memory(struct hb_profdb *db, const char *gpu, const char *model,
			 struct hb_memory_row **rows, int *n, struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_MEMORY, gpu, model, NULL, err);

	*rows = NULL;
	*n = 0;
	return st ? collect(db, st, sizeof(**rows), read_memory, (void **)rows, n, "read memory", err) : -1;
}

int hb_profdb_max_local_bs(struct hb_profdb *db, const char *gpu, const char *model, int *out,
			   struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_MAX_LBS, gpu, model, NULL, err);
	int rc;

	*out = 0;
	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_type(st, 0) == SQLITE_NULL ? 0 : sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(db, err, "read max local batch");
	return 0;
}

int hb_profdb_get_buckets(struct hb_profdb *db, const char *model, double **bytes, int *n,
			  struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_BUCKETS, model, NULL, NULL, err);

	*bytes = NULL;
	*n = 0;
	return st ? collect(db, st, sizeof(**bytes), read_bytes, (void **)bytes, n, "read buckets", err) : -1;
}

int hb_profdb_get_allreduce(struct hb_profdb *db, const char *scope, const char *link,
			    struct hb_allreduce_row **rows, int *n, struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_ALLREDUCE, scope, link, NULL, err);

	*rows = NULL;
	*n = 0;
	return st ? collect(db, st, sizeof(**rows), read_allreduce, (void **)rows, n, "read allreduce", err) : -1;
}

int hb_profdb_get_allreduce_fit(struct hb_profdb *db, const char *scope, const char *link,
				struct hb_allreduce_fit *out, int *found, struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_FIT, scope, link, NULL, err);
	int rc;

	*found = 0;
	memset(out, 0, sizeof(*out));
	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		col_text(st, 0, out->scope, sizeof(out->scope));
		col_text(st, 1, out->link, sizeof(out->link));
		out->alpha = sqlite3_column_double(st, 2);
		out->beta = sqlite3_column_double(st, 3);
		out->bandwidth = sqlite3_column_double(st, 4);
		out->r2 = sqlite3_column_double(st, 5);
		col_text(st, 6, out->source, sizeof(out->source));
		*found = 1;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(db, err, "read allreduce fit");
	return 0;
}

int hb_profdb_get_placements(struct hb_profdb *db, const char *model,
			     struct hb_placement_row **rows, int *n, struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_PLACEMENTS, model, NULL, NULL, err);

	*rows = NULL;
	*n = 0;
	return st ? collect(db, st, sizeof(**rows), read_placement, (void **)rows, n, "read placements", err) : -1;
}

int hb_profdb_get_scalability(struct hb_profdb *db, const char *model,
			      struct hb_scalability_row **rows, int *n, struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_SCALABILITY, model, NULL, NULL, err);

	*rows = NULL;
	*n = 0;
	return st ? collect(db, st, sizeof(**rows), read_scalability, (void **)rows, n, "read scalability", err)
		  : -1;
}

int hb_profdb_get_gradstats(struct hb_profdb *db, const char *model,
			    struct hb_gradstats_row **rows, int *n, struct hb_error *err)
{
	sqlite3_stmt *st = keyed(db, ST_GET_GRADSTATS, model, NULL, NULL, err);

	*rows = NULL;
	*n = 0;
	return st ? collect(db, st, sizeof(**rows), read_gradstats, (void **)rows, n, "read gradstats", err) : -1;
}

int hb_profdb_count(struct hb_profdb *db, const char *table, long *count, struct hb_error *err)
{
	char sql[96];
	sqlite3_stmt *st;
	int rc, i;

	*count = 0;
	for (i = 0; table_names[i]; i++)
		if (table && strcmp(table, table_names[i]) == 0)
			break;
	if (!table_names[i])
		return hb_input_error(err, "%s: no table named '%s'", db->path, table ? table : "");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s;", table_names[i]);
	if (hb_db_prepare(db->db, sql, &st, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*count = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db_error(db, err, "count rows");
	return 0;
}

int hb_profdb_remove_if_empty(const char *path)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	long total = 0, n;
	int removed = 0;

	if (!is_regular_file(path) || hb_profdb_open(path, 0, &db, &err) < 0)
		return 0;
	/* Under the write lock, so no other writer is mid-transaction in it. */
	if (hb_profdb_begin(db, &err) == 0) {
		for (int i = 0; table_names[i] && total == 0; i++)
			total += hb_profdb_count(db, table_names[i], &n, &err) == 0 ? n : 1;
		if (total == 0 && unlink(path) == 0) {
			char side[4200];

			removed = 1;
			if ((size_t)snprintf(side, sizeof(side), "%s-journal", path) < sizeof(side))
				unlink(side);
		}
	}
	hb_profdb_close(db); /* rolls back: nothing was written */
	return removed;
}

/* ------------------------------------------------------------------------ */
/* 6. JABAS Eq. 3 fit                                                        */

/* Theoretical all-reduce time in ms (profdb.h; notes/jabas.md 2.3 item 4). */
static double theoretical_ms(double bytes, int n_gpus, double bandwidth)
{
	return bytes * 4.0 * (n_gpus - 1) / n_gpus / bandwidth * 1000.0;
}

/*
 * Which rows are fitted: with `source` given, that source's rows of (scope,
 * link), so an importer fits exactly what it just wrote even when a better-
 * ranked source (e.g. live) also has rows for the link; with source NULL,
 * the rows a reader would get (best-ranked source), and the fit is stored
 * under that source's name.
 */
int hb_profdb_fit_allreduce(struct hb_profdb *db, const char *scope, const char *link, double bandwidth,
			    const char *source, struct hb_allreduce_fit *out, struct hb_error *err)
{
	struct hb_allreduce_row *rows = NULL;
	struct hb_allreduce_fit fit;
	double *x = NULL, *y = NULL, c0, c1, cov00, cov01, cov11, sumsq, mean = 0, sstot = 0;
	double spread = 0;
	int n = 0, rc = -1;
	char what[160];

	snprintf(what, sizeof(what), "allreduce fit (%s, %s)", scope ? scope : "?", link ? link : "?");
	if (check_scope(what, scope, err) < 0 || check_name(what, "link", link, err) < 0)
		return -1;
	if (!isfinite(bandwidth) || bandwidth <= 0)
		return hb_input_error(err, "%s: bandwidth %g must be > 0", what, bandwidth);
	if (source) {
		sqlite3_stmt *st = keyed(db, ST_GET_ALLREDUCE_SRC, scope, link, source, err);

		if (!st || collect(db, st, sizeof(*rows), read_allreduce, (void **)&rows, &n, "read allreduce", err) < 0)
			return -1;
	} else if (hb_profdb_get_allreduce(db, scope, link, &rows, &n, err) < 0) {
		return -1;
	}
	if (n < 2) {
		hb_input_error(err, "%s: needs at least 2 all-reduce measurements%s%s, found %d", what,
			       source ? " from " : "", source ? source : "", n);
		goto out;
	}
	x = malloc((size_t)n * sizeof(*x));
	y = malloc((size_t)n * sizeof(*y));
	if (!x || !y) {
		hb_runtime_error(err, "%s: out of memory", what);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		x[i] = theoretical_ms(rows[i].bytes, rows[i].n_gpus, bandwidth);
		y[i] = rows[i].time_s * 1000.0;
		mean += y[i] / n;
	}
	for (int i = 1; i < n; i++)
		spread = fmax(spread, fabs(x[i] - x[0]));
	if (!(spread > 0) || gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq) != 0 ||
	    !isfinite(c0) || !isfinite(c1)) {
		hb_input_error(err, "%s: the %d measurements do not determine a line (all of one size, or on "
			       "one GPU?)", what, n);
		goto out;
	}
	for (int i = 0; i < n; i++)
		sstot += (y[i] - mean) * (y[i] - mean);
	memset(&fit, 0, sizeof(fit));
	hb_strlcpy(fit.scope, scope, sizeof(fit.scope));
	hb_strlcpy(fit.link, link, sizeof(fit.link));
	fit.alpha = c1;
	fit.beta = c0;
	fit.bandwidth = bandwidth;
	fit.r2 = sstot > 0 ? 1.0 - sumsq / sstot : 1.0;
	hb_strlcpy(fit.source, source ? source : rows[0].source, sizeof(fit.source));
	if (hb_profdb_put_allreduce_fit(db, &fit, err) < 0)
		goto out;
	if (out)
		*out = fit;
	rc = 0;
out:
	free(rows);
	free(x);
	free(y);
	return rc;
}
