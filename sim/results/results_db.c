/*
 * results_db.c: results.db: its schema (the single-job summary or a trace
 * replay's tables), the streamed event and sample rows, and the rows written
 * at the end (meta, runs, jobs, summaries).  The stream (results_stream.c)
 * owns the staged file and its transactions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hb_config.h"
#include "plugin.h"     /* the policy plugins a set's policies came from */  /* HB_VERSION, recorded in meta */
#include "db.h"
#include "results_priv.h"
#include "strutil.h"

/* ---- SQLite --------------------------------------------------------------------------- */

static const char *const schema =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	/* What profile each GPU type x model read (profdb.h, hb_profile_use). */
	"CREATE TABLE profiles(gpu TEXT NOT NULL, model TEXT NOT NULL, source TEXT NOT NULL, file TEXT NOT NULL,"
	" builtin INTEGER NOT NULL, run_id INTEGER, rows INTEGER NOT NULL, measured_rows INTEGER NOT NULL,"
	" digest TEXT NOT NULL, PRIMARY KEY(gpu, model));"
	"CREATE TABLE runs(run_id INTEGER PRIMARY KEY, cluster TEXT NOT NULL, model TEXT NOT NULL,"
	" policy TEXT NOT NULL, seed INTEGER NOT NULL, knobs_json TEXT NOT NULL,"
	" wall_s REAL,"           /* NULL unless asked for: it would break reproducibility */
	" status TEXT NOT NULL, reason TEXT, njobs INTEGER NOT NULL, end_s REAL,"
	" nsamples INTEGER NOT NULL, nevents INTEGER NOT NULL);"
	"CREATE TABLE jobs(run_id INTEGER NOT NULL REFERENCES runs(run_id), job INTEGER NOT NULL,"
	" name TEXT NOT NULL, model TEXT NOT NULL, arrival_s REAL, finish_s REAL, time_s REAL, cost_usd REAL,"
	" gpu_hours REAL, mean_gpus REAL, iterations REAL, mean_gbs REAL, final_gbs INTEGER, restarts INTEGER,"
	" overhead_s REAL, done INTEGER NOT NULL, reconfigs INTEGER, adaptations INTEGER, epochs INTEGER,"
	" samples REAL, progress REAL, target REAL, run_s REAL, final_layout TEXT, PRIMARY KEY(run_id, job))"
	" WITHOUT ROWID;"
	/* Events are the bulk of a replay (issue 43): one row each in `event`,
	 * the kind a small integer coded by `event_kind`, and no rowid beside
	 * the (run_id, seq) key (a rowid table keeps that key twice, in the
	 * table and in its index).  The view `events` shows them with the kind
	 * by name, in (run_id, seq) order: the rows and columns of the table
	 * `events` of earlier sets, so SQL written for those keeps working. */
	"CREATE TABLE event_kind(kind INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
	"CREATE TABLE event(run_id INTEGER NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL, t REAL NOT NULL,"
	" job INTEGER NOT NULL, kind INTEGER NOT NULL REFERENCES event_kind(kind), detail TEXT NOT NULL,"
	" PRIMARY KEY(run_id, seq)) WITHOUT ROWID;"
	"CREATE VIEW events AS SELECT e.run_id AS run_id, e.seq AS seq, e.t AS t, e.job AS job,"
	" (SELECT k.name FROM event_kind AS k WHERE k.kind = e.kind) AS kind, e.detail AS detail FROM event AS e;"
	"CREATE TABLE timeseries(run_id INTEGER NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL,"
	" t REAL NOT NULL, job INTEGER NOT NULL, global_bs INTEGER, local_bs INTEGER, ngpus INTEGER, iter_s REAL,"
	" progress_frac REAL, phi REAL, similarity REAL, cost_usd REAL, epoch INTEGER, PRIMARY KEY(run_id, seq))"
	" WITHOUT ROWID;";

/* The single-job comparison (one row per run and job, relative columns). */
static const char *const schema_single =
	"CREATE TABLE summary(run_id INTEGER NOT NULL REFERENCES runs(run_id), job INTEGER, model TEXT NOT NULL,"
	" policy TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, time_h REAL, cost_usd REAL, gpu_hours REAL,"
	" mean_gpus REAL, iterations REAL, mean_gbs REAL, final_gbs INTEGER, restarts INTEGER, overhead_h REAL,"
	" time_rel REAL, cost_rel REAL, ref_policy TEXT);";

/* A trace replay's tables (in place of `summary`). */
static const char *const schema_trace =
	"CREATE TABLE cluster_summary(run_id INTEGER PRIMARY KEY REFERENCES runs(run_id), policy TEXT NOT NULL,"
	" status TEXT NOT NULL, reason TEXT, jobs INTEGER, completed INTEGER, dropped INTEGER, jct_mean_h REAL,"
	" jct_median_h REAL, jct_p99_h REAL, jct_max_h REAL, makespan_h REAL, queue_mean_h REAL, queue_p99_h REAL,"
	" gpu_hours REAL, cost_usd REAL, util_mean REAL, restarts_per_job REAL, preemptions_per_job REAL,"
	" rho_jobs INTEGER, rho_median REAL, rho_p99 REAL, rho_max REAL, sched_rounds INTEGER,"
	" sched_ms_per_round REAL,"  /* NULL unless asked for: a wall time */
	/* The --capacity counters (capacity.h); NULL without a series. */
	" capacity_withdrawn_gpus INTEGER, capacity_preemptions INTEGER, capacity_shrinks INTEGER);"
	"CREATE TABLE cluster_jobs(run_id INTEGER NOT NULL REFERENCES runs(run_id), job INTEGER NOT NULL,"
	" name TEXT NOT NULL, model TEXT NOT NULL, req_gpus INTEGER, req_batch INTEGER, arrival_s REAL, start_s REAL,"
	" finish_s REAL, jct_s REAL, queue_s REAL, restarts INTEGER, preemptions INTEGER, javg REAL,"
	" ref_gpus INTEGER, ref_jct_s REAL, rho REAL, PRIMARY KEY(run_id, job)) WITHOUT ROWID;"
	"CREATE TABLE model_jct(run_id INTEGER NOT NULL REFERENCES runs(run_id), model TEXT NOT NULL,"
	" jobs INTEGER NOT NULL, completed INTEGER NOT NULL, jct_mean_h REAL, jct_median_h REAL,"
	" PRIMARY KEY(run_id, model));"
	"CREATE TABLE utilisation(run_id INTEGER NOT NULL REFERENCES runs(run_id), bin INTEGER NOT NULL,"
	" t_s REAL NOT NULL, t_end_s REAL NOT NULL, util REAL, PRIMARY KEY(run_id, bin));";

static int bind_real(sqlite3_stmt *st, int i, double v)
{
	return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int step(sqlite3 *db, sqlite3_stmt *st, struct hb_error *err)
{
	int rc = hb_db_step_done(db, st, err);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

enum { ST_META, ST_RUN, ST_JOB, ST_EVENT, ST_SAMPLE, ST_SUMMARY, ST_N };

static const char *const insert_sql[ST_N] = {
	"INSERT INTO meta VALUES(?1, ?2)",
	"INSERT INTO runs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	"INSERT INTO jobs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
	" ?19, ?20, ?21, ?22, ?23, ?24)",
	"INSERT INTO event VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	"INSERT INTO timeseries VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	"INSERT INTO summary VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
};

static int db_meta(sqlite3 *db, sqlite3_stmt *st, const char *key, const char *value, struct hb_error *err)
{
	bind_text(st, 1, key);
	bind_text(st, 2, value);
	return step(db, st, err);
}

/* The run's row and its jobs' rows; its events and samples were streamed
 * (nevents, nsamples: how many rows). */
static int db_run(sqlite3 *db, sqlite3_stmt **st, const struct hb_results *r, int i, const char *knobs,
		  size_t nevents, size_t nsamples, struct hb_error *err)
{
	const struct hb_run_result *ru = &r->runs[i];
	const struct hb_sim *sim = ru->ran ? ru->sim : NULL;
	sqlite3_stmt *s = st[ST_RUN];

	sqlite3_bind_int(s, 1, i + 1);
	bind_text(s, 2, r->cluster);
	bind_text(s, 3, ru->model);
	bind_text(s, 4, ru->policy);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)r->seed);
	bind_text(s, 6, knobs);
	if (r->record_wall)
		bind_real(s, 7, ru->wall_s);
	else
		sqlite3_bind_null(s, 7);
	bind_text(s, 8, ru->ran ? "ok" : "cannot run");
	bind_text(s, 9, ru->ran ? NULL : ru->why);
	sqlite3_bind_int(s, 10, sim ? sim->njobs : 0);
	if (sim)
		bind_real(s, 11, sim->eng.now);
	sqlite3_bind_int64(s, 12, sim ? (sqlite3_int64)nsamples : 0);
	sqlite3_bind_int64(s, 13, sim ? (sqlite3_int64)nevents : 0);
	if (step(db, s, err) < 0)
		return -1;
	if (!sim)
		return 0;

	s = st[ST_JOB];
	for (int j = 0; j < sim->njobs; j++) {
		const struct hb_sim_job *job = &sim->jobs[j];
		struct hb_job_metrics m;

		hb_job_metrics(job, &m);
		sqlite3_bind_int(s, 1, i + 1);
		sqlite3_bind_int(s, 2, j);
		bind_text(s, 3, job->name);
		bind_text(s, 4, job->model ? job->model->name : ru->model);
		bind_real(s, 5, job->arrival_s);
		if (m.done)
			bind_real(s, 6, job->finish_s);
		bind_real(s, 7, m.time_s);
		bind_real(s, 8, m.cost_usd);
		bind_real(s, 9, m.gpu_hours);
		bind_real(s, 10, m.mean_gpus);
		bind_real(s, 11, m.iterations);
		bind_real(s, 12, m.mean_gbs);
		sqlite3_bind_int64(s, 13, m.final_gbs);
		sqlite3_bind_int(s, 14, m.restarts);
		bind_real(s, 15, m.overhead_s);
		sqlite3_bind_int(s, 16, m.done);
		sqlite3_bind_int64(s, 17, job->reconfigs);
		sqlite3_bind_int64(s, 18, job->adaptations);
		sqlite3_bind_int64(s, 19, job->epoch);
		bind_real(s, 20, job->samples);
		bind_real(s, 21, job->progress);
		bind_real(s, 22, job->target);
		bind_real(s, 23, job->run_s);
		bind_text(s, 24, job->cfg.layout);
		if (step(db, s, err) < 0)
			return -1;
	}

	return 0;
}

static int db_summary(sqlite3 *db, sqlite3_stmt *s, const struct srow *x, struct hb_error *err)
{
	sqlite3_bind_int(s, 1, x->run_id);
	if (x->job >= 0)
		sqlite3_bind_int(s, 2, x->job);
	bind_text(s, 3, x->run->model);
	bind_text(s, 4, x->run->policy);
	bind_text(s, 5, x->job < 0 ? "cannot run" : x->m.done ? "ok" : "unfinished");
	bind_text(s, 6, x->job < 0 ? x->run->why : NULL);
	if (x->job >= 0) {
		bind_real(s, 7, x->m.time_s / 3600.0);
		bind_real(s, 8, x->m.cost_usd);
		bind_real(s, 9, x->m.gpu_hours);
		bind_real(s, 10, x->m.mean_gpus);
		bind_real(s, 11, x->m.iterations);
		bind_real(s, 12, x->m.mean_gbs);
		sqlite3_bind_int64(s, 13, x->m.final_gbs);
		sqlite3_bind_int(s, 14, x->m.restarts);
		bind_real(s, 15, x->m.overhead_s / 3600.0);
		bind_real(s, 16, x->time_rel);
		bind_real(s, 17, x->cost_rel);
	}
	bind_text(s, 18, x->ref);
	return step(db, s, err);
}

/* ---- event kinds ---------------------------------------------------------------------- */

/* The kinds docs/outputs.md lists ("Event kinds"), coded 1, 2, ... in this
 * order; never reorder (a set's codes are its own, but readers may keep
 * them).  Kinds are written by code (sim.c, the policies), so the list
 * is short and closed; a new one still works, coded past it. */
static const char *const fixed_kinds[] = {
	"arrival", "admit", "start", "restart", "reconfig", "resize", "preempt", "resume",
	"drop", "done", "epoch", "adapt", "offer", "autoscale", "sched", "scale",
	"demote", "grant", "fallback", "shrink", "revoke", "capacity",
};
#define NFIXED_KINDS ((int)(sizeof(fixed_kinds) / sizeof(fixed_kinds[0])))

static int fill_kinds(sqlite3 *db, struct hb_error *err)
{
	sqlite3_stmt *s;
	int rc = 0;

	if (hb_db_prepare(db, "INSERT INTO event_kind VALUES(?1, ?2)", &s, err) < 0)
		return -1;
	for (int i = 0; i < NFIXED_KINDS && rc == 0; i++) {
		sqlite3_bind_int(s, 1, i + 1);
		bind_text(s, 2, fixed_kinds[i]);
		rc = step(db, s, err);
	}
	sqlite3_finalize(s);
	return rc;
}

void hb_res_db_kinds_reset(struct hb_results_stream *st)
{
	sqlite3_finalize(st->kinds.find);
	sqlite3_finalize(st->kinds.add);
	memset(&st->kinds, 0, sizeof(st->kinds));
}

/* A kind outside the fixed list: its code in st's database, added when new. */
static int other_kind(struct hb_results_stream *st, const char *kind, struct hb_error *err)
{
	struct hb_res_kinds *k = &st->kinds;
	int code = -1;

	for (int i = 0; i < k->n; i++)
		if (strcmp(k->name[i], kind) == 0)
			return k->code[i];
	if ((!k->find && hb_db_prepare(st->db, "SELECT kind FROM event_kind WHERE name = ?1", &k->find, err) < 0) ||
	    (!k->add && hb_db_prepare(st->db, "INSERT INTO event_kind(name) VALUES(?1)", &k->add, err) < 0))
		return -1;
	bind_text(k->find, 1, kind);
	if (sqlite3_step(k->find) == SQLITE_ROW)
		code = sqlite3_column_int(k->find, 0);
	sqlite3_reset(k->find);
	sqlite3_clear_bindings(k->find);
	if (code < 0) {
		bind_text(k->add, 1, kind);
		if (step(st->db, k->add, err) < 0)
			return -1;
		code = (int)sqlite3_last_insert_rowid(st->db);
	}
	if (k->n == HB_RES_KIND_CACHE) { /* forget the oldest */
		memmove(k->name, k->name + 1, sizeof(k->name[0]) * (HB_RES_KIND_CACHE - 1));
		memmove(k->code, k->code + 1, sizeof(k->code[0]) * (HB_RES_KIND_CACHE - 1));
		k->n--;
	}
	hb_strlcpy(k->name[k->n], kind, sizeof(k->name[0]));
	k->code[k->n++] = code;
	return code;
}

static int kind_code(struct hb_results_stream *st, const char *kind, struct hb_error *err)
{
	for (int i = 0; i < NFIXED_KINDS; i++)
		if (kind[0] == fixed_kinds[i][0] && strcmp(kind, fixed_kinds[i]) == 0)
			return i + 1;
	return other_kind(st, kind, err);
}

/* Copy the event and sample rows of the database attached as `part` (a
 * run's own, results.h "Runs on threads") into db's, in key order.  Codes
 * of the fixed kinds are the same in both; when the part has others, its
 * rows are recoded by name. */
int hb_res_db_copy_part(struct hb_results_stream *st, struct hb_error *err)
{
	static const char *const plain =
		"INSERT INTO main.event SELECT * FROM part.event ORDER BY run_id, seq;"
		"INSERT INTO main.timeseries SELECT * FROM part.timeseries ORDER BY run_id, seq;";
	static const char *const recoded =
		"INSERT OR IGNORE INTO main.event_kind(name) SELECT name FROM part.event_kind ORDER BY kind;"
		"INSERT INTO main.event SELECT e.run_id, e.seq, e.t, e.job,"
		" (SELECT m.kind FROM main.event_kind AS m WHERE m.name = p.name), e.detail"
		" FROM part.event AS e JOIN part.event_kind AS p ON p.kind = e.kind ORDER BY e.run_id, e.seq;"
		"INSERT INTO main.timeseries SELECT * FROM part.timeseries ORDER BY run_id, seq;";
	sqlite3_stmt *q;
	int others = 0;

	if (hb_db_prepare(st->db, "SELECT count(*) FROM part.event_kind WHERE kind > ?1", &q, err) < 0)
		return -1;
	sqlite3_bind_int(q, 1, NFIXED_KINDS);
	if (sqlite3_step(q) == SQLITE_ROW)
		others = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	hb_res_db_kinds_reset(st);
	return hb_db_exec(st->db, others ? recoded : plain, err);
}

/* ---- the streamed rows ------------------------------------------------------------------ */

/* Create the staged database st->db_tmp (replacing a stale one), open its
 * first transaction and prepare the event and sample inserts. */
int hb_res_db_open(struct hb_results_stream *st, struct hb_error *err)
{
	struct stat made;

	/* new, never through a link (issue 40); SQLite fills the empty file */
	if (hb_create_file(st->db_tmp, &made, err) < 0)
		return -1;
	if (sqlite3_open_v2(st->db_tmp, &st->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return hb_runtime_error(err, "%s: cannot create database: %s", st->db_path,
					st->db ? sqlite3_errmsg(st->db) : "out of memory");
	if (!hb_same_file(st->db_tmp, &made))
		return hb_runtime_error(err, "%s: %s was replaced while being opened", st->db_path, st->db_tmp);
	sqlite3_extended_result_codes(st->db, 1);
	/* The file is private until renamed and removed on failure: the
	 * journal stays in memory (no -journal file is ever left beside it)
	 * and batches are not synced one by one; commit syncs the whole file
	 * once before the rename. */
	if (hb_db_exec(st->db, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;", err) < 0 ||
	    hb_db_begin(st->db, err) < 0 || hb_db_exec(st->db, schema, err) < 0 ||
	    hb_db_exec(st->db, st->trace ? schema_trace : schema_single, err) < 0 ||
	    fill_kinds(st->db, err) < 0 ||
	    hb_db_prepare(st->db, insert_sql[ST_EVENT], &st->ins_event, err) < 0 ||
	    hb_db_prepare(st->db, insert_sql[ST_SAMPLE], &st->ins_sample, err) < 0) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		return -1;
	}
	return 0;
}

/* One event of the current run, its seq-th. */
int hb_res_db_event(struct hb_results_stream *st, size_t seq, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	sqlite3_stmt *s = st->ins_event;
	int code = kind_code(st, e->kind, err);

	if (code < 0)
		return -1;
	sqlite3_bind_int(s, 1, st->run_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	bind_real(s, 3, e->t);
	sqlite3_bind_int(s, 4, e->job);
	sqlite3_bind_int(s, 5, code);
	/* bound static: the text lives until the row is stepped */
	sqlite3_bind_text(s, 6, e->detail ? e->detail : "", -1, SQLITE_STATIC);
	return step(st->db, s, err);
}

/* One sample of the current run, its seq-th. */
int hb_res_db_sample(struct hb_results_stream *st, size_t seq, const struct hb_sim_sample *x, struct hb_error *err)
{
	sqlite3_stmt *s = st->ins_sample;

	sqlite3_bind_int(s, 1, st->run_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	bind_real(s, 3, x->t);
	sqlite3_bind_int(s, 4, x->job);
	sqlite3_bind_int64(s, 5, x->global_bs);
	sqlite3_bind_int(s, 6, x->local_bs);
	sqlite3_bind_int(s, 7, x->ngpus);
	bind_real(s, 8, x->iter_s);
	bind_real(s, 9, x->progress_frac);
	bind_real(s, 10, x->phi);
	bind_real(s, 11, x->similarity);
	bind_real(s, 12, x->cost_usd);
	sqlite3_bind_int64(s, 13, x->epoch);
	return step(st->db, s, err);
}

/* ==== trace replay ========================================================================== */

enum { TS_SUMMARY, TS_JOB, TS_MODEL, TS_UTIL, TS_N };

static const char *const trace_sql[TS_N] = {
	"INSERT INTO cluster_summary VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
	" ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
	"INSERT INTO cluster_jobs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
	"INSERT INTO model_jct VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	"INSERT INTO utilisation VALUES(?1, ?2, ?3, ?4, ?5)",
};

static int db_trace_summary(sqlite3 *db, sqlite3_stmt *s, const struct hb_trace_results *r, int i,
			    struct hb_error *err)
{
	const struct hb_trace_run *ru = &r->runs[i];
	const struct hb_cluster_summary *x = &ru->sum;

	sqlite3_bind_int(s, 1, i + 1);
	bind_text(s, 2, ru->policy);
	bind_text(s, 3, ran(ru) ? "ok" : "cannot run");
	bind_text(s, 4, ran(ru) ? NULL : ru->why);
	if (ran(ru)) {
		sqlite3_bind_int(s, 5, x->njobs);
		sqlite3_bind_int(s, 6, x->completed);
		sqlite3_bind_int64(s, 7, dropped(r, ru));
		bind_real(s, 8, x->jct_s.mean / 3600.0);
		bind_real(s, 9, x->jct_s.median / 3600.0);
		bind_real(s, 10, x->jct_s.p99 / 3600.0);
		bind_real(s, 11, x->jct_s.max / 3600.0);
		bind_real(s, 12, x->makespan_s / 3600.0);
		bind_real(s, 13, x->queue_s.mean / 3600.0);
		bind_real(s, 14, x->queue_s.p99 / 3600.0);
		bind_real(s, 15, x->gpu_hours);
		bind_real(s, 16, x->cost_usd);
		bind_real(s, 17, x->util_mean);
		bind_real(s, 18, x->restarts_per_job);
		bind_real(s, 19, x->preemptions_per_job);
		sqlite3_bind_int64(s, 20, (sqlite3_int64)x->rho.n);
		bind_real(s, 21, x->rho.median);
		bind_real(s, 22, x->rho.p99);
		bind_real(s, 23, x->rho.max);
		sqlite3_bind_int64(s, 24, x->sched_rounds);
		if (r->record_wall)
			bind_real(s, 25, x->sched_ms_per_round);
		if (x->capacity) {
			sqlite3_bind_int64(s, 26, x->capacity_withdrawn);
			sqlite3_bind_int64(s, 27, x->capacity_preemptions);
			sqlite3_bind_int64(s, 28, x->capacity_shrinks);
		}
	}
	return step(db, s, err);
}

static int db_trace_run(sqlite3 *db, sqlite3_stmt **st, const struct hb_trace_results *r, int i,
			struct hb_error *err)
{
	const struct hb_trace_run *ru = &r->runs[i];
	sqlite3_stmt *s = st[TS_JOB];

	if (db_trace_summary(db, st[TS_SUMMARY], r, i, err) < 0)
		return -1;
	if (!ran(ru))
		return 0;
	for (int j = 0; j < ru->sim->njobs; j++) {
		const struct hb_sim_job *job = &ru->sim->jobs[j];
		struct trace_job t;

		hb_res_trace_job(ru, j, &t);
		sqlite3_bind_int(s, 1, i + 1);
		sqlite3_bind_int(s, 2, j);
		bind_text(s, 3, job->name);
		bind_text(s, 4, job->model->name);
		sqlite3_bind_int(s, 5, job->req_gpus);
		sqlite3_bind_int64(s, 6, job->req_batch);
		bind_real(s, 7, job->arrival_s);
		bind_real(s, 8, job->started ? job->start_s : NAN);
		bind_real(s, 9, t.finish_s);
		bind_real(s, 10, t.jct_s);
		bind_real(s, 11, t.queue_s);
		sqlite3_bind_int(s, 12, job->restarts);
		sqlite3_bind_int(s, 13, job->preemptions);
		bind_real(s, 14, t.javg);
		if (t.ref_gpus > 0)
			sqlite3_bind_int(s, 15, t.ref_gpus);
		bind_real(s, 16, t.ref_jct_s);
		bind_real(s, 17, t.rho);
		if (step(db, s, err) < 0)
			return -1;
	}
	s = st[TS_MODEL];
	for (int m = 0; m < ru->nby_model; m++) {
		sqlite3_bind_int(s, 1, i + 1);
		bind_text(s, 2, ru->by_model[m].model);
		sqlite3_bind_int(s, 3, ru->by_model[m].njobs);
		sqlite3_bind_int(s, 4, ru->by_model[m].completed);
		bind_real(s, 5, ru->by_model[m].jct_mean_s / 3600.0);
		bind_real(s, 6, ru->by_model[m].jct_median_s / 3600.0);
		if (step(db, s, err) < 0)
			return -1;
	}
	s = st[TS_UTIL];
	for (int k = 0; k < ru->util.npoints; k++) {
		sqlite3_bind_int(s, 1, i + 1);
		sqlite3_bind_int(s, 2, k);
		bind_real(s, 3, ru->util.t_s[k]);
		bind_real(s, 4, k + 1 < ru->util.npoints ? ru->util.t_s[k + 1] : ru->util.t1_s);
		bind_real(s, 5, ru->util.util[k]);
		if (step(db, s, err) < 0)
			return -1;
	}
	return 0;
}

static int db_trace(sqlite3 *db, const struct trace_view *tv, sqlite3_stmt *meta, struct hb_error *err)
{
	const struct hb_trace_results *r = tv->tr;
	sqlite3_stmt *st[TS_N] = { 0 };
	char num[64];
	int rc = -1;

	if (db_meta(db, meta, "mode", "trace", err) < 0 || db_meta(db, meta, "trace", r->trace, err) < 0 ||
	    db_meta(db, meta, "trace_format", r->format, err) < 0 || db_meta(db, meta, "filters", r->filters, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%.9g", r->load);
	if (db_meta(db, meta, "load", num, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%ld", r->read);
	if (db_meta(db, meta, "jobs_read", num, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%ld", r->oversize);
	if (db_meta(db, meta, "jobs_oversize", num, err) < 0)
		return -1;
	snprintf(num, sizeof(num), "%ld", r->assigned);
	if (db_meta(db, meta, "models_assigned", num, err) < 0 ||
	    db_meta(db, meta, "fairness", r->fairness ? "on" : "off", err) < 0)
		return -1;
	for (int i = 0; i < TS_N; i++)
		if (hb_db_prepare(db, trace_sql[i], &st[i], err) < 0)
			goto out;
	for (int i = 0; i < r->nruns; i++)
		if (db_trace_run(db, st, r, i, err) < 0)
			goto out;
	rc = 0;
out:
	for (int i = 0; i < TS_N; i++)
		sqlite3_finalize(st[i]);
	return rc;
}

/* ---- profiles ---------------------------------------------------------------------------- */

static int db_profiles(sqlite3 *db, const struct hb_results *r, struct hb_error *err)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (r->nprofiles == 0)
		return 0;
	if (hb_db_prepare(db, "INSERT INTO profiles VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", &st, err) < 0)
		return -1;
	for (int i = 0; i < r->nprofiles && rc == 0; i++) {
		hb_profile_use_bind(st, 1, &r->profiles[i]);
		rc = step(db, st, err);
	}
	sqlite3_finalize(st);
	return rc;
}

/* ---- the end ---------------------------------------------------------------------------- */

/* The database's end: meta, runs, jobs and the summary tables (a trace
 * replay's own, tv non-NULL, replace `summary`) into db, whose events and
 * timeseries tables the stream filled; count[] gives each run's rows of
 * them (2 per run: events, samples). */
int hb_res_db_finish(sqlite3 *db, const struct hb_results *r, const struct srow *rows, size_t nrows,
		     const struct trace_view *tv, const size_t *count, int ncount, enum hb_events_level lv,
		     const char *path, struct hb_error *err)
{
	sqlite3_stmt *st[ST_N] = { 0 };
	char seed[32], *knobs = NULL;
	cJSON *kj = hb_res_knobs_json(r);
	int rc = -1;

	if (kj)
		knobs = cJSON_PrintUnformatted(kj);
	cJSON_Delete(kj);
	if (!knobs)
		return hb_runtime_error(err, "%s: out of memory", path);
	for (int i = 0; i < ST_N; i++)
		if (i != ST_EVENT && i != ST_SAMPLE && (i != ST_SUMMARY || !tv) &&
		    hb_db_prepare(db, insert_sql[i], &st[i], err) < 0)
			goto out;
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)r->seed);
	if (db_meta(db, st[ST_META], "format", HB_RESULTS_FORMAT, err) < 0 ||
	    db_meta(db, st[ST_META], "version", HB_VERSION, err) < 0 ||
	    db_meta(db, st[ST_META], "reproducibility", HB_RESULTS_REPRO, err) < 0 ||
	    db_meta(db, st[ST_META], "cluster", r->cluster, err) < 0 || db_meta(db, st[ST_META], "seed", seed, err) < 0 ||
	    db_meta(db, st[ST_META], "knobs_json", knobs, err) < 0)
		goto out;
	/* Provenance of policies built outside the tree: the files they came
	 * from, one per line (a set made without plugins has no such row). */
	if (hb_plugin_count() > 0) {
		char plugins[4096] = "";
		size_t used = 0;

		for (int i = 0; i < hb_plugin_count(); i++)
			used += (size_t)snprintf(plugins + used, used < sizeof(plugins) ? sizeof(plugins) - used : 0,
						 "%s%s", i ? "\n" : "", hb_plugin_path(i));
		if (db_meta(db, st[ST_META], "policy_plugins", plugins, err) < 0)
			goto out;
	}
	/* Only a reduced file says so: the default's files stay as they were. */
	if (lv != HB_EVENTS_ALL && db_meta(db, st[ST_META], "events", hb_events_level_name(lv), err) < 0)
		goto out;
	if (db_profiles(db, r, err) < 0)
		goto out;
	for (int i = 0; i < r->nruns; i++) {
		size_t ne = i < ncount ? count[2 * i] : 0, ns = i < ncount ? count[2 * i + 1] : 0;

		if (db_run(db, st, r, i, knobs, ne, ns, err) < 0)
			goto out;
	}
	for (size_t i = 0; !tv && i < nrows; i++)
		if (db_summary(db, st[ST_SUMMARY], &rows[i], err) < 0)
			goto out;
	if (tv && db_trace(db, tv, st[ST_META], err) < 0)
		goto out;
	rc = 0;
out:
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(st[i]);
	if (rc < 0)
		hb_error_prefix(err, "%s", path);
	free(knobs);
	return rc;
}
