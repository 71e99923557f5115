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
	 * the kind a small integer coded by `event_kind`.  The rows are
	 * written in (run_id, seq) order, streamed or merged, so a plain rowid
	 * table holds them in that order with no key of their own: appending
	 * to it takes no search, where keyed by (run_id, seq) (WITHOUT ROWID)
	 * every insert searched the tree from its root, a third of what the
	 * inserts cost on a whole-trace replay, and left pages a tenth empty.
	 * The view `events` shows them with the kind by name, in that order:
	 * the rows and columns of the table `events` of earlier sets, so SQL
	 * written for those keeps working. */
	"CREATE TABLE event_kind(kind INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
	/* A detail sentence is mostly the same words around other numbers
	 * (a Pollux restart: 230 bytes, of which 13 numbers and the
	 * allocation): it is stored as a template of event_tpl, its numbers
	 * as they were printed (n1..n10 here, n11.. in event_num) and its
	 * allocation (a configuration event's "alloc ..." words) in detail;
	 * the view puts them back together (results_db.c, split_detail).
	 * A detail that does not fit (tpl NULL) is kept whole in detail. */
	"CREATE TABLE event_tpl(tpl INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);"
	"CREATE TABLE event(run_id INTEGER NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL, t REAL NOT NULL,"
	" job INTEGER NOT NULL, kind INTEGER NOT NULL REFERENCES event_kind(kind), detail TEXT NOT NULL,"
	" tpl INTEGER REFERENCES event_tpl(tpl), n1, n2, n3, n4, n5, n6, n7, n8, n9, n10);"
	"CREATE TABLE event_num(run_id INTEGER NOT NULL, seq INTEGER NOT NULL, n11, n12, n13, n14, n15, n16,"
	" PRIMARY KEY(run_id, seq)) WITHOUT ROWID;"
	"CREATE VIEW events AS SELECT e.run_id AS run_id, e.seq AS seq, e.t AS t, e.job AS job,"
	" (SELECT k.name FROM event_kind AS k WHERE k.kind = e.kind) AS kind,"
	" CASE WHEN e.tpl IS NULL THEN e.detail ELSE"
	" replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace("
	"replace(replace(replace(replace((SELECT p.text FROM event_tpl AS p WHERE p.tpl = e.tpl),"
	" char(1), coalesce(e.n1, '')), char(2), coalesce(e.n2, '')), char(3), coalesce(e.n3, '')),"
	" char(4), coalesce(e.n4, '')), char(5), coalesce(e.n5, '')), char(6), coalesce(e.n6, '')),"
	" char(7), coalesce(e.n7, '')), char(8), coalesce(e.n8, '')), char(9), coalesce(e.n9, '')),"
	" char(10), coalesce(e.n10, '')), char(11), coalesce(x.n11, '')), char(12), coalesce(x.n12, '')),"
	" char(13), coalesce(x.n13, '')), char(14), coalesce(x.n14, '')), char(15), coalesce(x.n15, '')),"
	" char(16), coalesce(x.n16, '')), char(17), e.detail) END AS detail"
	" FROM event AS e LEFT JOIN event_num AS x ON x.run_id = e.run_id AND x.seq = e.seq;"
	/* the samples, likewise in (run_id, seq) order with no key (event) */
	"CREATE TABLE timeseries(run_id INTEGER NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL,"
	" t REAL NOT NULL, job INTEGER NOT NULL, global_bs INTEGER, local_bs INTEGER, ngpus INTEGER, iter_s REAL,"
	" progress_frac REAL, phi REAL, similarity REAL, cost_usd REAL, epoch INTEGER);";

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

/* Bound without a copy: every statement here is stepped, reset and cleared
 * (step) before the text it was given changes or goes. */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
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
	"INSERT INTO event VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
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
	"demote", "grant", "fallback", "shrink", "revoke", "capacity", "move",
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
 * rows are recoded by name.  Templates are recoded by their text, the
 * part's new ones added in the part's order, which is the order in which
 * writing the run into db itself would have added them. */
int hb_res_db_copy_part(struct hb_results_stream *st, struct hb_error *err)
{
	static const char *const head =
		"INSERT OR IGNORE INTO main.event_kind(name) SELECT name FROM part.event_kind ORDER BY kind;"
		"INSERT OR IGNORE INTO main.event_tpl(text) SELECT text FROM part.event_tpl ORDER BY tpl;"
		"INSERT INTO main.event SELECT e.run_id, e.seq, e.t, e.job, ";
	static const char *const plain_kind = "e.kind";
	static const char *const recoded_kind =
		"(SELECT m.kind FROM main.event_kind AS m, part.event_kind AS p WHERE p.kind = e.kind AND m.name = p.name)";
	static const char *const tail =
		", e.detail, (SELECT m.tpl FROM main.event_tpl AS m, part.event_tpl AS p"
		" WHERE p.tpl = e.tpl AND m.text = p.text), e.n1, e.n2, e.n3, e.n4, e.n5, e.n6, e.n7, e.n8, e.n9, e.n10"
		" FROM part.event AS e ORDER BY e.run_id, e.seq;"
		"INSERT INTO main.event_num SELECT * FROM part.event_num ORDER BY run_id, seq;"
		"INSERT INTO main.timeseries SELECT * FROM part.timeseries ORDER BY run_id, seq;";
	sqlite3_stmt *q;
	char sql[2048];
	int others = 0;

	if (hb_db_prepare(st->db, "SELECT count(*) FROM part.event_kind WHERE kind > ?1", &q, err) < 0)
		return -1;
	sqlite3_bind_int(q, 1, NFIXED_KINDS);
	if (sqlite3_step(q) == SQLITE_ROW)
		others = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	hb_res_db_kinds_reset(st);
	hb_res_db_tpls_reset(st);
	snprintf(sql, sizeof(sql), "%s%s%s", head, others ? recoded_kind : plain_kind, tail);
	return hb_db_exec(st->db, sql, err);
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
	/* NOMUTEX: one thread at a time uses the connection (the writer
	 * between hand-offs, the stream's thread after a drain), so SQLite's
	 * own lock around every bind and step is pure cost */
	if (sqlite3_open_v2(st->db_tmp, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
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
	    hb_db_prepare(st->db, "INSERT INTO event_num VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &st->ins_num,
			  err) < 0 ||
	    hb_db_prepare(st->db, insert_sql[ST_SAMPLE], &st->ins_sample, err) < 0) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		return -1;
	}
	return 0;
}

/* ---- detail templates ------------------------------------------------------------------- */

/* A detail split for results.db: the template (its numbers replaced by the
 * bytes 1, 2, ... in order, its free text by TPL_FREE), the numbers' spans
 * and the free text's.  The view `events` undoes it with replace(). */
#define TPL_FREE 17
/* Numbers kept in the row of `event` (n1..n10), the rest in event_num: a
 * Pollux restart says 10 different ones, an epoch 3; each column costs a
 * row that does not use it one byte. */
#define TPL_IN_EVENT 10

struct span {
	const char *p;
	size_t n;
};

struct split {
	char tpl[HB_RES_TPL_MAX];
	struct span num[HB_RES_TPL_NUMS];
	int nnum;
	struct span free;        /* n 0 and p NULL: none */
};

static int word_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The length of the number printf wrote at s (-?D+(.D+)?(e[+-]?D+)?), 0
 * when there is none; a number is one only standing alone (not inside a
 * word such as p40x8 or 4GPU). */
static size_t number_at(const char *d, const char *s)
{
	const char *q = s;

	if (s > d && word_char(s[-1]))
		return 0;
	if (*q == '-')
		q++;
	if (!digit(*q))
		return 0;
	while (digit(*q))
		q++;
	if (q[0] == '.' && digit(q[1]))
		for (q++; digit(*q); q++)
			;
	if ((q[0] == 'e' || q[0] == 'E') && (digit(q[1]) || ((q[1] == '+' || q[1] == '-') && digit(q[2])))) {
		q += q[1] == '+' || q[1] == '-' ? 2 : 1;
		while (digit(*q))
			q++;
	}
	return word_char(*q) ? 0 : (size_t)(q - s);
}

/* Split detail d; 0 when it has no template (kept whole): a byte the
 * template uses as a mark, more numbers than a template holds, a template
 * too long, or digits left in the template.  That last rule keeps the
 * templates few whatever the detail says (names with digits, such as the
 * cluster's nodes, stay in detail) and makes the split a function of the
 * text alone, so a set's templates are the same for any -j.
 * A configuration event (sim.c apply_note: "..., pace P; B_L %d, alloc A,
 * iteration %.0f, iter_s %.9g") keeps its pacing node P and allocation A,
 * node names and counts (from P, or from A when it names no pacing node, up
 * to ", iteration"), as the free text. */
static int split_detail(const char *d, struct split *x)
{
	const char *bl = strstr(d, "; B_L "), *a = bl ? strstr(bl, ", alloc ") : NULL, *it = NULL;
	size_t used = 0;

	x->nnum = 0;
	x->free.p = NULL;
	x->free.n = 0;
	for (const char *c = d; *c; c++)
		if ((unsigned char)*c <= TPL_FREE)
			return 0;
	if (a) {
		/* the node the step time is paced by ("pace p40x8-0; B_L 40,
		 * alloc ..."), when the configuration names one, starts it */
		const char *pace = strstr(d, ", pace ");

		a += strlen(", alloc ");
		for (const char *q = strstr(a, ", iteration "); q; q = strstr(q + 1, ", iteration "))
			it = q;
		if (it) {
			x->free.p = pace && pace < bl ? pace + strlen(", pace ") : a;
			x->free.n = (size_t)(it - x->free.p);
		}
	}
	for (const char *c = d; *c;) {
		size_t n;

		if (used + 2 > sizeof(x->tpl))
			return 0;
		if (c == x->free.p) {
			x->tpl[used++] = TPL_FREE;
			c += x->free.n;
		} else if ((n = number_at(d, c)) > 0) {
			int k = 0;

			/* a number said again (a Pollux restart's GPUs, thrice)
			 * is its first mark again: replace() fills every one */
			while (k < x->nnum && (x->num[k].n != n || memcmp(x->num[k].p, c, n) != 0))
				k++;
			if (k == HB_RES_TPL_NUMS)
				return 0;
			if (k == x->nnum) {
				x->num[k].p = c;
				x->num[k].n = n;
				x->nnum++;
			}
			x->tpl[used++] = (char)(k + 1);
			c += n;
		} else if (digit(*c)) {
			return 0;
		} else {
			x->tpl[used++] = *c++;
		}
	}
	x->tpl[used] = '\0';
	return 1;
}

/* Bind number sp at i: an integer when printf's text is the integer's own
 * (SQLite gives the same text back), else the text as printed. */
static void bind_number(sqlite3_stmt *st, int i, const struct span *sp)
{
	const char *p = sp->p, *q = p + (*p == '-');
	size_t nd = sp->n - (size_t)(q - p);
	sqlite3_int64 v = 0;
	int canon = nd <= 18 && (nd == 1 || q[0] != '0') && !(*p == '-' && nd == 1 && q[0] == '0');

	for (size_t k = 0; canon && k < nd; k++) {
		if (!digit(q[k]))
			canon = 0;
		else
			v = v * 10 + (q[k] - '0');
	}
	if (canon)
		sqlite3_bind_int64(st, i, *p == '-' ? -v : v);
	else
		sqlite3_bind_text(st, i, p, (int)sp->n, SQLITE_STATIC);
}

static unsigned tpl_hash(const char *s)
{
	unsigned h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

void hb_res_db_tpls_reset(struct hb_results_stream *st)
{
	struct hb_res_tpls *t = &st->tpls;

	for (int i = 0; i < HB_RES_TPL_CACHE; i++)
		free(t->slot[i].text);
	sqlite3_finalize(t->find);
	sqlite3_finalize(t->add);
	memset(t, 0, sizeof(*t));
}

int hb_res_db_tpl_mark(struct hb_results_stream *st, int *mark, struct hb_error *err)
{
	sqlite3_stmt *q;
	int rc;

	if (hb_db_prepare(st->db, "SELECT coalesce(max(tpl), 0) FROM event_tpl", &q, err) < 0)
		return -1;
	rc = sqlite3_step(q);
	*mark = rc == SQLITE_ROW ? sqlite3_column_int(q, 0) : 0;
	sqlite3_finalize(q);
	return rc == SQLITE_ROW ? 0 : hb_runtime_error(err, "cannot read event_tpl: %s", sqlite3_errmsg(st->db));
}

/* The code of template text in st's database, added when new. */
static int tpl_code(struct hb_results_stream *st, const char *text, struct hb_error *err)
{
	struct hb_res_tpls *t = &st->tpls;
	unsigned h = tpl_hash(text);
	int i = (int)(h & (HB_RES_TPL_CACHE - 1)), code = -1;
	char *copy;

	if (t->slot[i].id && t->slot[i].hash == h && strcmp(t->slot[i].text, text) == 0)
		return t->slot[i].id;
	if ((!t->find && hb_db_prepare(st->db, "SELECT tpl FROM event_tpl WHERE text = ?1", &t->find, err) < 0) ||
	    (!t->add && hb_db_prepare(st->db, "INSERT INTO event_tpl(text) VALUES(?1)", &t->add, err) < 0))
		return -1;
	sqlite3_bind_text(t->find, 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(t->find) == SQLITE_ROW)
		code = sqlite3_column_int(t->find, 0);
	sqlite3_reset(t->find);
	sqlite3_clear_bindings(t->find);
	if (code < 0) {
		sqlite3_bind_text(t->add, 1, text, -1, SQLITE_STATIC);
		if (step(st->db, t->add, err) < 0)
			return -1;
		code = (int)sqlite3_last_insert_rowid(st->db);
	}
	if ((copy = strdup(text))) { /* the cache is only a shortcut */
		free(t->slot[i].text);
		t->slot[i].text = copy;
		t->slot[i].hash = h;
		t->slot[i].id = code;
	}
	return code;
}

/* One event of the current run, its seq-th. */
int hb_res_db_event(struct hb_results_stream *st, size_t seq, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	sqlite3_stmt *s = st->ins_event;
	const char *detail = e->detail ? e->detail : "";
	int code = kind_code(st, e->kind, err), tpl = 0;
	struct split x;

	if (code < 0)
		return -1;
	if (detail[0] && split_detail(detail, &x) && (tpl = tpl_code(st, x.tpl, err)) < 0)
		return -1;
	sqlite3_bind_int(s, 1, st->run_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	bind_real(s, 3, e->t);
	sqlite3_bind_int(s, 4, e->job);
	sqlite3_bind_int(s, 5, code);
	/* bound static: the text lives until the row is stepped */
	if (tpl == 0) {
		sqlite3_bind_text(s, 6, detail, -1, SQLITE_STATIC);
		return step(st->db, s, err);
	}
	sqlite3_bind_text(s, 6, x.free.p ? x.free.p : "", (int)x.free.n, SQLITE_STATIC);
	sqlite3_bind_int(s, 7, tpl);
	for (int i = 0; i < x.nnum && i < TPL_IN_EVENT; i++)
		bind_number(s, 8 + i, &x.num[i]);
	if (step(st->db, s, err) < 0)
		return -1;
	if (x.nnum <= TPL_IN_EVENT)
		return 0;
	s = st->ins_num;
	sqlite3_bind_int(s, 1, st->run_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	for (int i = TPL_IN_EVENT; i < x.nnum; i++)
		bind_number(s, 3 + i - TPL_IN_EVENT, &x.num[i]);
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
