/*
 * sweep_db.c: a sweep's results.db (sweep_write.c lists the files): the
 * configuration and rows in one transaction, in point order, with an
 * in-memory journal, so the bytes depend on the rows only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "db.h"
#include "fileio.h"
#include "hb_config.h"
#include "sweep.h"
#include "sweep_priv.h"

const char *hb_sweep_status_name(int status)
{
	switch (status) {
	case HB_SWEEP_OK:
		return "ok";
	case HB_SWEEP_CANNOT:
		return "cannot run";
	case HB_SWEEP_FAILED:
		return "failed";
	default:
		return "not run";
	}
}

static const char *const schema =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE clusters(cluster_id INTEGER PRIMARY KEY, label TEXT NOT NULL, base TEXT NOT NULL,"
	" name TEXT NOT NULL, gpus INTEGER NOT NULL, nodes INTEGER NOT NULL, usd_per_h REAL, gpu_mix TEXT);"
	"CREATE TABLE profiles(cluster_id INTEGER NOT NULL REFERENCES clusters(cluster_id), gpu TEXT NOT NULL,"
	" model TEXT NOT NULL, source TEXT NOT NULL, file TEXT NOT NULL, builtin INTEGER NOT NULL, run_id INTEGER,"
	" rows INTEGER NOT NULL, measured_rows INTEGER NOT NULL, digest TEXT NOT NULL,"
	" PRIMARY KEY(cluster_id, gpu, model));"
	"CREATE TABLE points(id INTEGER PRIMARY KEY, cluster TEXT NOT NULL, cluster_gpus INTEGER NOT NULL,"
	" cluster_usd_per_h REAL, load REAL NOT NULL, policy TEXT NOT NULL, seed INTEGER NOT NULL,"
	" status TEXT NOT NULL, reason TEXT, jobs INTEGER, completed INTEGER, dropped INTEGER, jct_mean_h REAL,"
	" jct_median_h REAL, jct_p99_h REAL, jct_max_h REAL, makespan_h REAL, queue_mean_h REAL, queue_p99_h REAL,"
	" gpu_hours REAL, cost_usd REAL, util_mean REAL, restarts_per_job REAL, preemptions_per_job REAL,"
	" rho_jobs INTEGER, rho_median REAL, rho_p99 REAL, rho_max REAL, sched_rounds INTEGER,"
	" cluster_id INTEGER NOT NULL REFERENCES clusters(cluster_id), too_large INTEGER, jct_all_mean_h REAL,"
	" jct_all_p99_h REAL, jct_delta_pct REAL);"
	"CREATE TABLE summary(cluster TEXT NOT NULL, load REAL NOT NULL, policy TEXT NOT NULL, seeds INTEGER NOT NULL,"
	" seeds_ok INTEGER NOT NULL, reason TEXT, jobs REAL, completed REAL, dropped REAL, jct_mean_h REAL, jct_p99_h REAL,"
	" makespan_h REAL, queue_mean_h REAL, gpu_hours REAL, cost_usd REAL, util_mean REAL, rho_median REAL,"
	" jct_all_mean_h REAL, jct_all_p99_h REAL, jct_delta_pct REAL, PRIMARY KEY(cluster, load, policy));"
	"CREATE TABLE jobs(point_id INTEGER NOT NULL REFERENCES points(id), job INTEGER NOT NULL, name TEXT NOT NULL,"
	" model TEXT NOT NULL, gpus INTEGER NOT NULL, arrival_h REAL NOT NULL, state TEXT NOT NULL, start_h REAL,"
	" finish_h REAL, jct_h REAL NOT NULL, censored INTEGER NOT NULL, PRIMARY KEY(point_id, job));";

/* "done", "unfinished", "too large" (enum hb_sweep_job_state). */
static const char *job_state_name(int state)
{
	return state == HB_SWJOB_DONE ? "done" : state == HB_SWJOB_UNFINISHED ? "unfinished" : "too large";
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static int step(sqlite3 *db, sqlite3_stmt *st, struct hb_error *err)
{
	int rc = hb_db_step_done(db, st, err);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

static int db_meta(sqlite3 *db, sqlite3_stmt *st, const char *key, const char *value, struct hb_error *err)
{
	bind_text(st, 1, key);
	bind_text(st, 2, value);
	return step(db, st, err);
}

static int db_point(sqlite3 *db, sqlite3_stmt *st, const struct hb_sweep *sw, int i, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	const struct hb_sweep_row *r = &sw->rows[i];
	struct hb_sweep_point p;

	hb_sweep_point_of(cfg, i, &p);
	sqlite3_bind_int(st, 1, i);
	bind_text(st, 2, cfg->clusters[p.cluster].label);
	sqlite3_bind_int(st, 3, sw->info[p.cluster].gpus);
	bind_real(st, 4, sw->info[p.cluster].usd_per_h);
	bind_real(st, 5, cfg->loads[p.load]);
	bind_text(st, 6, cfg->policies[p.policy]->name);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)cfg->seeds[p.seed]);
	bind_text(st, 8, hb_sweep_status_name(r->status));
	bind_text(st, 9, r->status == HB_SWEEP_OK ? NULL : r->reason);
	if (r->status == HB_SWEEP_OK) {
		const double v[] = { r->jct_mean_h, r->jct_median_h, r->jct_p99_h, r->jct_max_h, r->makespan_h,
				     r->queue_mean_h, r->queue_p99_h, r->gpu_hours, r->cost_usd, r->util_mean,
				     r->restarts_per_job, r->preemptions_per_job };

		sqlite3_bind_int(st, 10, r->jobs);
		sqlite3_bind_int(st, 11, r->completed);
		sqlite3_bind_int64(st, 12, r->dropped);
		for (int k = 0; k < (int)(sizeof(v) / sizeof(v[0])); k++)
			bind_real(st, 13 + k, v[k]);
		sqlite3_bind_int64(st, 25, r->rho_jobs);
		bind_real(st, 26, r->rho_median);
		bind_real(st, 27, r->rho_p99);
		bind_real(st, 28, r->rho_max);
		sqlite3_bind_int64(st, 29, r->sched_rounds);
		sqlite3_bind_int(st, 31, r->too_large);
		bind_real(st, 32, r->jct_all_mean_h);
		bind_real(st, 33, r->jct_all_p99_h);
		bind_real(st, 34, r->jct_delta_pct);
	}
	sqlite3_bind_int(st, 30, p.cluster);
	return step(db, st, err);
}

/* The job rows of point i (those that ran OK), censored JCTs to the
 * sweep's end (hb_sweep_job_jct). */
static int db_jobs(sqlite3 *db, sqlite3_stmt *st, const struct hb_sweep *sw, int i, struct hb_error *err)
{
	const struct hb_sweep_row *r = &sw->rows[i];
	const struct hb_sweep_jobrow *jr = sw->jobrows[i];
	const struct hb_sweep_jobset *js;
	struct hb_sweep_point p;

	if (r->status != HB_SWEEP_OK || !jr)
		return 0;
	hb_sweep_point_of(sw->cfg, i, &p);
	js = hb_sweep_jobset_of(sw, p.load, p.seed);
	for (long k = 0; k < js->njobs; k++) {
		const struct hb_sweep_job *j = &js->jobs[jr[k].job];

		sqlite3_bind_int(st, 1, i);
		sqlite3_bind_int64(st, 2, jr[k].job);
		bind_text(st, 3, j->name);
		bind_text(st, 4, j->model);
		sqlite3_bind_int(st, 5, j->gpus);
		bind_real(st, 6, j->arrival_s / 3600.0);
		bind_text(st, 7, job_state_name(jr[k].state));
		bind_real(st, 8, jr[k].start_s / 3600.0);
		bind_real(st, 9, jr[k].finish_s / 3600.0);
		bind_real(st, 10, hb_sweep_job_jct(sw, i, &jr[k]) / 3600.0);
		sqlite3_bind_int(st, 11, jr[k].state != HB_SWJOB_DONE);
		if (step(db, st, err) < 0)
			return -1;
	}
	return 0;
}

static int db_agg(sqlite3 *db, sqlite3_stmt *st, const struct hb_sweep *sw, const struct hb_sweep_agg *a,
		  struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;

	bind_text(st, 1, cfg->clusters[a->cluster].label);
	bind_real(st, 2, cfg->loads[a->load]);
	bind_text(st, 3, cfg->policies[a->policy]->name);
	sqlite3_bind_int(st, 4, a->seeds);
	sqlite3_bind_int(st, 5, a->ok);
	bind_text(st, 6, a->ok ? NULL : a->reason);
	if (a->ok) {
		const double v[] = { a->jobs, a->completed, a->dropped, a->jct_mean_h, a->jct_p99_h, a->makespan_h, a->queue_mean_h,
				     a->gpu_hours, a->cost_usd, a->util_mean, a->rho_median, a->jct_all_mean_h,
				     a->jct_all_p99_h, a->jct_delta_pct };

		for (int k = 0; k < (int)(sizeof(v) / sizeof(v[0])); k++)
			bind_real(st, 7 + k, v[k]);
	}
	return step(db, st, err);
}

enum { ST_META, ST_CLUSTER, ST_PROFILE, ST_POINT, ST_AGG, ST_JOB, ST_N };

static const char *const insert_sql[ST_N] = {
	"INSERT INTO meta VALUES(?1, ?2)",
	"INSERT INTO clusters VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT INTO profiles VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	"INSERT INTO points VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
	" ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34)",
	"INSERT INTO summary VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
	" ?20)",
	"INSERT INTO jobs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
};

static int db_fill(sqlite3 *db, sqlite3_stmt **st, const struct hb_sweep *sw, const struct hb_sweep_agg *agg, int na,
		   struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	char *echo = cJSON_PrintUnformatted(cfg->echo), num[32], nok[32];
	int rc;

	if (!echo)
		return hb_runtime_error(err, "sweep: out of memory");
	snprintf(num, sizeof(num), "%d", sw->npoints);
	snprintf(nok, sizeof(nok), "%d", hb_sweep_nok(sw));
	rc = db_meta(db, st[ST_META], "format", HB_SWEEP_FORMAT, err) < 0 ||
	     db_meta(db, st[ST_META], "version", HB_VERSION, err) < 0 ||
	     db_meta(db, st[ST_META], "name", cfg->name, err) < 0 ||
	     db_meta(db, st[ST_META], "config_json", echo, err) < 0 ||
	     db_meta(db, st[ST_META], "trace", cfg->trace.synthetic ? "synthetic" : cfg->trace.file_echo, err) < 0 ||
	     db_meta(db, st[ST_META], "trace_format", hb_trace_format_name(sw->format), err) < 0 ||
	     db_meta(db, st[ST_META], "points", num, err) < 0 || db_meta(db, st[ST_META], "points_ok", nok, err) < 0;
	free(echo);
	if (rc)
		return -1;
	for (int ci = 0; ci < cfg->nclusters; ci++) {
		const struct hb_sweep_cluster_info *in = &sw->info[ci];
		sqlite3_stmt *s = st[ST_CLUSTER];

		sqlite3_bind_int(s, 1, ci);
		bind_text(s, 2, cfg->clusters[ci].label);
		bind_text(s, 3, in->base);
		bind_text(s, 4, in->name);
		sqlite3_bind_int(s, 5, in->gpus);
		sqlite3_bind_int(s, 6, in->nodes);
		bind_real(s, 7, in->usd_per_h);
		bind_text(s, 8, in->gpu_mix);
		if (step(db, s, err) < 0)
			return -1;
		for (int k = 0; k < in->nprofiles; k++) {
			s = st[ST_PROFILE];
			sqlite3_bind_int(s, 1, ci);
			hb_profile_use_bind(s, 2, &in->profiles[k]);
			if (step(db, s, err) < 0)
				return -1;
		}
	}
	for (int i = 0; i < sw->npoints; i++)
		if (db_point(db, st[ST_POINT], sw, i, err) < 0)
			return -1;
	for (int k = 0; k < na; k++)
		if (db_agg(db, st[ST_AGG], sw, &agg[k], err) < 0)
			return -1;
	for (int i = 0; i < sw->npoints; i++)
		if (db_jobs(db, st[ST_JOB], sw, i, err) < 0)
			return -1;
	return 0;
}

int hb_sweep_write_db(const struct hb_sweep *sw, const struct hb_sweep_agg *agg, int na, const char *path,
		      struct hb_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st[ST_N] = { 0 };
	int rc = -1;

	struct stat made;

	/* new, never through a link (issue 40); SQLite fills the empty file */
	if (hb_create_file(path, &made, err) < 0)
		return -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		hb_runtime_error(err, "%s: cannot create database: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	if (!hb_same_file(path, &made)) {
		hb_runtime_error(err, "%s: replaced while being opened", path);
		goto out;
	}
	sqlite3_extended_result_codes(db, 1);
	/* no -wal/-shm beside the file, and the bytes depend on the rows only */
	if (hb_db_exec(db, "PRAGMA journal_mode=MEMORY;", err) < 0 || hb_db_begin(db, err) < 0 ||
	    hb_db_exec(db, schema, err) < 0)
		goto out;
	for (int i = 0; i < ST_N; i++)
		if (hb_db_prepare(db, insert_sql[i], &st[i], err) < 0)
			goto out;
	if (db_fill(db, st, sw, agg, na, err) < 0)
		goto out;
	for (int i = 0; i < ST_N; i++) {
		sqlite3_finalize(st[i]);
		st[i] = NULL;
	}
	if (hb_db_commit(db, err) < 0)
		goto out;
	rc = 0;
out:
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(st[i]);
	if (rc < 0 && db)
		hb_db_rollback(db);
	if (db && sqlite3_close(db) != SQLITE_OK && rc == 0)
		rc = hb_runtime_error(err, "%s: cannot close the database", path);
	if (rc < 0)
		remove(path);
	return rc;
}

