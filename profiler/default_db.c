/*
 * default_db.c: build or reuse the cached analytic profile database
 * (see default_db.h for the contract).
 *
 * Order of the file: where the file lives, what makes it current (catalog
 * hash and the analytic_meta record), building it beside the target and
 * renaming it, and the entry point commands call.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "analytic_gen.h"
#include "db.h"          /* defines: hb_db_open, hb_db_exec, hb_db_prepare, hb_db_step_done */
#include "default_db.h"
#include "fileio.h"      /* defines: hb_mkdir_p, hb_path_exists */
#include "strutil.h"     /* defines: hb_strlcpy */
#include "tmpfiles.h"    /* defines: hb_tmp_clean_stale */

#define DB_NAME_FMT "profiles-analytic-v%d.db"

/* ------------------------------------------------------------------------ */
/* Location                                                                  */

int hb_default_profdb_path(char *buf, size_t size, struct hb_error *err)
{
	const char *dir = getenv(HB_DEFAULT_DB_ENV);
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (dir && *dir)
		n = snprintf(buf, size, "%s/" DB_NAME_FMT, dir, HB_ANALYTIC_VERSION);
	else if (xdg && *xdg)
		n = snprintf(buf, size, "%s/hetbatch/" DB_NAME_FMT, xdg, HB_ANALYTIC_VERSION);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.cache/hetbatch/" DB_NAME_FMT, home, HB_ANALYTIC_VERSION);
	else
		return hb_input_error(err, "no place for the default profile database: set %s (a directory), "
				      "XDG_CACHE_HOME or HOME, or pass --db FILE", HB_DEFAULT_DB_ENV);
	if (n < 0 || (size_t)n >= size)
		return hb_input_error(err, "default profile database path is too long (set %s to a shorter "
				      "directory)", HB_DEFAULT_DB_ENV);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Currency: catalog hash and the meta record                                */

static uint64_t fnv_bytes(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	h = fnv_bytes(h, s ? s : "");
	return fnv_bytes(h, "\x1f");
}

static uint64_t fnv_num(uint64_t h, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.17g", v);
	return fnv_str(h, buf);
}

uint64_t hb_default_profdb_catalog_hash(const struct hb_catalog *cat)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < cat->ngpus; i++) {
		const struct hb_gpu *g = &cat->gpus[i];

		h = fnv_str(h, "gpu");
		h = fnv_str(h, g->name);
		h = fnv_str(h, g->base);
		h = fnv_str(h, g->display);
		h = fnv_num(h, g->fp32_tflops);
		h = fnv_num(h, g->tensor_tflops);
		h = fnv_num(h, g->tf32_tflops);
		h = fnv_num(h, g->mem_bytes);
		h = fnv_num(h, g->mem_bw);
	}
	for (int i = 0; i < cat->nmodels; i++) {
		const struct hb_model *m = &cat->models[i];

		h = fnv_str(h, "model");
		h = fnv_str(h, m->name);
		h = fnv_str(h, m->arch.cls);
		h = fnv_num(h, m->params);
		h = fnv_num(h, m->flops_per_sample);
		h = fnv_num(h, m->act_bytes_per_sample);
		h = fnv_num(h, m->param_bytes);
		h = fnv_num(h, m->opt_offload);
		h = fnv_num(h, m->opt_state_bytes_per_param);
		h = fnv_num(h, m->fwd_fraction);
		h = fnv_num(h, m->data_s_per_sample);
		h = fnv_num(h, m->bn_sync_s);
		h = fnv_num(h, (double)m->min_lbs);
		h = fnv_num(h, (double)m->max_gbs);
		for (int b = 0; b < m->nbuckets; b++)
			h = fnv_num(h, m->buckets[b]);
	}
	for (int c = 0; c < cat->nclusters; c++) {
		const struct hb_cluster *cl = &cat->clusters[c];

		for (int k = 0; k < cl->nnodes; k++) {
			h = fnv_str(h, "link");
			h = fnv_str(h, cl->nodes[k].intra_link);
			h = fnv_num(h, cl->nodes[k].intra_bw);
			h = fnv_str(h, cl->nodes[k].inter_link);
			h = fnv_num(h, cl->nodes[k].inter_bw);
		}
	}
	return h;
}

/* The record this build would write. */
struct meta {
	char generator[32];
	char catalog[32];
	char schema[32];
};

static void expected_meta(const struct hb_catalog *cat, struct meta *m)
{
	snprintf(m->generator, sizeof(m->generator), "%d", HB_ANALYTIC_VERSION);
	snprintf(m->catalog, sizeof(m->catalog), "%016" PRIx64, hb_default_profdb_catalog_hash(cat));
	snprintf(m->schema, sizeof(m->schema), "%d", HB_PROFDB_SCHEMA_VERSION);
}

/* Read the record of an existing file; 0 and a reason when it is absent or
 * unreadable (the caller rebuilds), never an error. */
static int read_meta(const char *path, struct meta *m, char *reason, size_t rsize)
{
	struct hb_error err = { 0 };
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int found = 0, rc;

	memset(m, 0, sizeof(*m));
	if (hb_db_open(path, HB_DB_READONLY, &db, &err) < 0) {
		snprintf(reason, rsize, "unreadable (%.100s)", err.msg);
		return 0;
	}
	if (hb_db_prepare(db, "SELECT key, value FROM analytic_meta", &st, &err) < 0) {
		snprintf(reason, rsize, "no analytic_meta record");
		hb_db_close(db);
		return 0;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		if (!k || !v)
			continue;
		if (strcmp(k, "generator_version") == 0)
			found |= 1, hb_strlcpy(m->generator, v, sizeof(m->generator));
		else if (strcmp(k, "catalog_hash") == 0)
			found |= 2, hb_strlcpy(m->catalog, v, sizeof(m->catalog));
		else if (strcmp(k, "schema_version") == 0)
			found |= 4, hb_strlcpy(m->schema, v, sizeof(m->schema));
	}
	if (rc != SQLITE_DONE)
		snprintf(reason, rsize, "unreadable analytic_meta (%.80s)", sqlite3_errmsg(db));
	else if (found != 7)
		snprintf(reason, rsize, "incomplete analytic_meta record");
	sqlite3_finalize(st);
	hb_db_close(db);
	return rc == SQLITE_DONE && found == 7;
}

/* 1 if the file at path is current; otherwise 0 with the reason. */
static int is_current(const struct hb_catalog *cat, const char *path, char *reason, size_t rsize)
{
	struct meta want, have;

	if (!hb_path_exists(path)) {
		snprintf(reason, rsize, "missing");
		return 0;
	}
	if (!read_meta(path, &have, reason, rsize))
		return 0;
	expected_meta(cat, &want);
	if (strcmp(want.generator, have.generator) != 0) {
		snprintf(reason, rsize, "generator version %s != %s", have.generator, want.generator);
		return 0;
	}
	if (strcmp(want.schema, have.schema) != 0) {
		snprintf(reason, rsize, "profile schema version %s != %s", have.schema, want.schema);
		return 0;
	}
	if (strcmp(want.catalog, have.catalog) != 0) {
		snprintf(reason, rsize, "catalog changed (hash %s != %s)", have.catalog, want.catalog);
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Building                                                                  */

static int write_meta(const struct hb_catalog *cat, const char *path, struct hb_error *err)
{
	struct meta m;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	const char *keys[3] = { "generator_version", "catalog_hash", "schema_version" };
	const char *vals[3];
	int rc = -1;

	expected_meta(cat, &m);
	vals[0] = m.generator;
	vals[1] = m.catalog;
	vals[2] = m.schema;
	if (hb_db_open(path, 0, &db, err) < 0)
		return -1;
	if (hb_db_exec(db, "CREATE TABLE IF NOT EXISTS analytic_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);",
		       err) < 0 ||
	    hb_db_begin(db, err) < 0 ||
	    hb_db_prepare(db, "INSERT OR REPLACE INTO analytic_meta(key, value) VALUES(?1, ?2)", &st, err) < 0)
		goto out;
	for (int i = 0; i < 3; i++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, keys[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, vals[i], -1, SQLITE_STATIC);
		if (hb_db_step_done(db, st, err) < 0)
			goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (hb_db_commit(db, err) < 0)
		goto out;
	/* hb_db_open keeps the rollback journal; say so in the file anyway,
	 * since readers open it immutable and no -wal may ever be beside it. */
	rc = hb_db_exec(db, "PRAGMA journal_mode=DELETE;", err);
out:
	sqlite3_finalize(st);
	if (rc < 0)
		hb_db_rollback(db);
	hb_db_close(db);
	return rc;
}

static void remove_tmp(const char *tmp)
{
	char side[4200];

	static const char *const suffix[] = { "-wal", "-shm", "-journal" };

	unlink(tmp);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++)
		if ((size_t)snprintf(side, sizeof(side), "%s%s", tmp, suffix[i]) < sizeof(side))
			unlink(side);
}

static int build(const struct hb_catalog *cat, const char *path, struct hb_analytic_stats *stats,
		 struct hb_error *err)
{
	char tmp[4200];
	struct hb_profdb *db = NULL;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	remove_tmp(tmp);
	if (hb_profdb_open(tmp, 0, &db, err) < 0) {
		remove_tmp(tmp);
		return -1;
	}
	rc = hb_analytic_generate(cat, NULL, db, stats, err);
	hb_profdb_close(db);
	if (rc == 0)
		rc = write_meta(cat, tmp, err);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = hb_runtime_error(err, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
	if (rc < 0) {
		hb_error_prefix(err, "building the default profile database %s", path);
		remove_tmp(tmp);
	}
	return rc;
}

/* The temporaries killed builders left beside path: "PATH.tmp.PID" and its
 * journals, whose PID is dead (tmpfiles.h).  Every command that uses the
 * cache comes here, so none stays past the next run. */
static void clean_stale(const char *path)
{
	char dir[4096];
	char *slash;

	hb_strlcpy(dir, path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash)
		hb_tmp_clean_stale(".", path);
	else if (slash != dir) {
		*slash = '\0';
		hb_tmp_clean_stale(dir, slash + 1);
	}
}

/* The cache directory also holds the files of older generator versions
 * (DB_NAME_FMT carries the version, so an upgraded hetbatch builds its own
 * file beside them and never reads theirs).  Those files stay: an older
 * hetbatch sharing the cache still uses its own, and deleting it would only
 * make that one rebuild.  Their dead builders' temporaries are garbage to
 * every version, so they go like this version's. */
static void clean_stale_older(const char *path)
{
	char dir[4096], stem[64];
	char *slash;

	hb_strlcpy(dir, path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	for (int v = 1; v < HB_ANALYTIC_VERSION; v++) {
		snprintf(stem, sizeof(stem), DB_NAME_FMT, v);
		hb_tmp_clean_stale(dir, stem);
	}
}

/* mkdir -p of the directory part of path. */
static int make_parent(const char *path, struct hb_error *err)
{
	char dir[4096];
	char *slash;

	hb_strlcpy(dir, path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	return hb_mkdir_p(dir, err);
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */

int hb_default_profdb_ensure(const struct hb_catalog *cat, const char *path, int force,
			     struct hb_default_db_info *info, struct hb_error *err)
{
	struct hb_default_db_info tmp;

	if (!info)
		info = &tmp;
	memset(info, 0, sizeof(*info));
	if (path) {
		if (hb_strlcpy(info->path, path, sizeof(info->path)) >= sizeof(info->path))
			return hb_input_error(err, "%s: path too long", path);
	} else if (hb_default_profdb_path(info->path, sizeof(info->path), err) < 0) {
		return -1;
	} else {
		clean_stale_older(info->path);
	}
	clean_stale(info->path);
	if (!force && is_current(cat, info->path, info->reason, sizeof(info->reason)))
		return 0;
	if (force)
		hb_strlcpy(info->reason, "forced", sizeof(info->reason));
	if (make_parent(info->path, err) < 0)
		return -1;
	if (build(cat, info->path, &info->stats, err) < 0)
		return -1;
	info->rebuilt = 1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The user database and what readers read                                   */

int hb_user_profdb_path(char *buf, size_t size, struct hb_error *err)
{
	const char *dir = getenv(HB_USER_DB_ENV);
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	int n;

	if (dir && *dir)
		n = snprintf(buf, size, "%s/" HB_USER_DB_NAME, dir);
	else if (xdg && *xdg)
		n = snprintf(buf, size, "%s/hetbatch/" HB_USER_DB_NAME, xdg);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.local/share/hetbatch/" HB_USER_DB_NAME, home);
	else
		return hb_input_error(err, "no place for your profile database: set %s (a directory), "
				      "XDG_DATA_HOME or HOME, or pass --db FILE", HB_USER_DB_ENV);
	if (n < 0 || (size_t)n >= size)
		return hb_input_error(err, "your profile database's path is too long (set %s to a shorter "
				      "directory, or pass --db FILE)", HB_USER_DB_ENV);
	return 0;
}

int hb_user_profdb_for_writing(char *buf, size_t size, struct hb_error *err)
{
	if (hb_user_profdb_path(buf, size, err) < 0 || make_parent(buf, err) < 0)
		return -1;
	return 0;
}

/* The canonical name of path, whether or not the file exists yet: the
 * real path of its directory and its last component. */
static int canonical(const char *path, char *out, size_t size)
{
	char dir[4096], real[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;

	if (slash) {
		size_t n = (size_t)(slash - path);

		if (n >= sizeof(dir))
			return -1;
		memcpy(dir, path, n);
		dir[n] = '\0';
		if (n == 0)
			hb_strlcpy(dir, "/", sizeof(dir));
	} else {
		hb_strlcpy(dir, ".", sizeof(dir));
	}
	if (!realpath(dir, real))
		return -1;
	return (size_t)snprintf(out, size, "%s/%s", real, base) < size ? 0 : -1;
}

static int same_place(const char *x, const char *y)
{
	char a[PATH_MAX + 256], b[PATH_MAX + 256];

	if (canonical(x, a, sizeof(a)) < 0 || canonical(y, b, sizeof(b)) < 0)
		return strcmp(x, y) == 0;
	return strcmp(a, b) == 0;
}

int hb_is_user_profdb(const char *path)
{
	char user[4096];
	struct hb_error err = { 0 };

	return hb_user_profdb_path(user, sizeof(user), &err) == 0 && same_place(path, user);
}

int hb_is_default_profdb(const char *path)
{
	char cache[4096];
	struct hb_error err = { 0 };

	return hb_default_profdb_path(cache, sizeof(cache), &err) == 0 && same_place(path, cache);
}

int hb_profile_files_resolve(const struct hb_catalog *cat, const char *db_or_NULL, struct hb_profile_files *f,
			     struct hb_error *err)
{
	struct hb_default_db_info info;

	memset(f, 0, sizeof(*f));
	if (db_or_NULL) {
		if (!hb_path_exists(db_or_NULL))
			return hb_input_error(err, "%s: no such profile database (create one with 'hetbatch profile "
					      "--analytic --db %s' or 'hetbatch import ... --db %s')",
					      db_or_NULL, db_or_NULL, db_or_NULL);
		if (hb_strlcpy(f->base, db_or_NULL, sizeof(f->base)) >= sizeof(f->base))
			return hb_input_error(err, "%s: path too long", db_or_NULL);
		return 0;
	}
	if (hb_default_profdb_ensure(cat, NULL, 0, &info, err) < 0)
		return -1;
	hb_strlcpy(f->base, info.path, sizeof(f->base));
	f->base_is_cache = 1;
	/* No user database is no error: the analytic one covers every pair. */
	if (hb_user_profdb_path(f->user, sizeof(f->user), err) < 0 || !hb_path_exists(f->user))
		f->user[0] = '\0';
	return 0;
}

int hb_profile_files_open(const struct hb_profile_files *f, struct hb_profdb **db, struct hb_error *err)
{
	struct hb_profdb_layer layers[2];
	int n = 0;

	*db = NULL;
	if (f->user[0]) {
		layers[n].path = f->user;
		layers[n++].mode = HB_PROFDB_READONLY;
	}
	layers[n].path = f->base;
	layers[n++].mode = f->base_is_cache ? HB_PROFDB_IMMUTABLE : HB_PROFDB_READONLY;
	return hb_profdb_open_layers(layers, n, db, err);
}

int hb_default_profdb(const struct hb_catalog *cat, const char *path_or_NULL, struct hb_profdb **db,
		      struct hb_error *err)
{
	struct hb_profile_files f;

	*db = NULL;
	if (hb_profile_files_resolve(cat, path_or_NULL, &f, err) < 0)
		return -1;
	return hb_profile_files_open(&f, db, err);
}
