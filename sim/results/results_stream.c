/*
 * results_stream.c: records written as the runs go (results.h:
 * "Streaming"): the output directory and the staged results.db with its
 * batched transactions, events.csv and timeseries.csv, a failed run's rows
 * taken back out, a trace replay's composite sink (utilisation and files),
 * and the end of a set: results.db synced and every file renamed into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "db.h"
#include "fileio.h"
#include "results_priv.h"
#include "strutil.h"

/* ---- streaming (results.h: "Streaming") ------------------------------------------------- */

/* Rows per transaction of the staged database: large enough that commits
 * cost nothing next to the inserts, small enough that a transaction's
 * journal and dirty pages stay a few MB. */
#define STREAM_BATCH_ROWS 50000

/* Remember the outermost missing directory of dir before creating it. */
static int stream_mkdir(struct hb_results_stream *st, const char *dir, struct hb_error *err)
{
	char buf[4096];
	size_t len = strlen(dir);

	st->made[0] = '\0';
	if (len >= sizeof(buf))
		return hb_input_error(err, "%s: output path too long", dir);
	memcpy(buf, dir, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (!hb_path_exists(buf)) {
			hb_strlcpy(st->made, buf, sizeof(st->made));
			break;
		}
		buf[i] = dir[i];
	}
	return hb_mkdir_p(dir, err);
}

/* Remove dir and its parents up to the one stream_mkdir found missing
 * (rmdir: only empty ones, so nothing of anybody else goes). */
static void stream_rmdirs(struct hb_results_stream *st)
{
	char buf[4096];
	size_t made = strlen(st->made);

	if (!made)
		return;
	hb_strlcpy(buf, st->dir, sizeof(buf));
	while (strlen(buf) >= made) {
		char *slash;

		if (rmdir(buf) != 0)
			return;
		if (strlen(buf) == made || !(slash = strrchr(buf, '/')))
			return;
		*slash = '\0';
	}
}

static int stream_fail(struct hb_results_stream *st, struct hb_error *err)
{
	if (st->fail.code == HB_OK)
		st->fail = *err;
	return -1;
}

/* Finalize every statement of st's database (sqlite3_close refuses a
 * database with one left). */
static void stream_finalize(struct hb_results_stream *st)
{
	sqlite3_finalize(st->ins_event);
	sqlite3_finalize(st->ins_num);
	sqlite3_finalize(st->ins_sample);
	st->ins_event = st->ins_num = st->ins_sample = NULL;
	hb_res_db_kinds_reset(st);
	hb_res_db_tpls_reset(st);
}

void hb_res_stream_join_file(struct hb_results_stream *st)
{
	if (st->file_on)
		pthread_join(st->file_th, NULL);
	st->file_on = 0;
}

static void stream_free(struct hb_results_stream *st)
{
	hb_res_writer_stop(st);
	hb_res_stream_join_file(st);
	stream_finalize(st);
	if (st->db) {
		hb_db_rollback(st->db);
		sqlite3_close(st->db);
	}
	free(st->count);
	free(st);
}

void hb_results_stream_abort(struct hb_results_stream *st)
{
	if (!st)
		return;
	hb_res_writer_stop(st); /* before the files it writes go */
	hb_res_stream_join_file(st);
	hb_res_stage_abort(&st->sg, 0);
	stream_finalize(st);
	if (st->db) {
		hb_db_rollback(st->db);
		sqlite3_close(st->db);
		st->db = NULL;
	}
	remove(st->db_tmp);
	if (st->vac_tmp[0])
		remove(st->vac_tmp);
	stream_rmdirs(st);
	stream_free(st);
}

int hb_results_stream_open(struct hb_results_stream **out, const char *dir, int trace, enum hb_events_level lv,
			   int csv, struct hb_error *err)
{
	struct hb_results_stream *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (!st)
		return hb_runtime_error(err, "results: out of memory");
	st->trace = trace;
	st->level = lv;
	st->csv = csv;
	if ((size_t)snprintf(st->dir, sizeof(st->dir), "%s", dir) >= sizeof(st->dir) ||
	    (size_t)snprintf(st->db_path, sizeof(st->db_path), "%s/results.db", dir) >= sizeof(st->db_path)) {
		free(st);
		return hb_input_error(err, "%s: output path too long", dir);
	}
	snprintf(st->db_tmp, sizeof(st->db_tmp), "%s.tmp.%ld", st->db_path, (long)getpid());
	if (stream_mkdir(st, dir, err) < 0) {
		free(st);
		return -1;
	}
	if (hb_res_db_open(st, err) < 0 ||
	    (csv && (!(st->fts = hb_res_stage_open(&st->sg, dir, "timeseries.csv", err)) ||
		     !(st->fev = hb_res_stage_open(&st->sg, dir, "events.csv", err))))) {
		hb_results_stream_abort(st);
		return -1;
	}
	if (csv) {
		fputs(hb_res_timeseries_header, st->fts);
		fputs(hb_res_events_header, st->fev);
	}
	*out = st;
	return 0;
}

const struct hb_error *hb_results_stream_failure(const struct hb_results_stream *st)
{
	return st && st->fail.code != HB_OK ? &st->fail : NULL;
}

/* Room in st->count for run run_id (1-based). */
static int count_room(struct hb_results_stream *st, int run_id, struct hb_error *err)
{
	int n = run_id + 8;
	size_t *nc;

	if (run_id <= st->ncount)
		return 0;
	if (!(nc = realloc(st->count, sizeof(*nc) * 2 * (size_t)n)))
		return hb_runtime_error(err, "results: out of memory");
	memset(nc + 2 * st->ncount, 0, sizeof(*nc) * 2 * (size_t)(n - st->ncount));
	st->count = nc;
	st->ncount = n;
	return 0;
}

int hb_results_stream_begin(struct hb_results_stream *st, int run_id, const char *model, const char *policy,
			    struct hb_error *err)
{
	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	if (run_id < 1 || st->run_id != 0)
		return hb_runtime_error(err, "results: run %d begins while run %d is open", run_id, st->run_id);
	if (hb_res_writer_drain(st, err) < 0)
		return stream_fail(st, err);
	if (count_room(st, run_id, err) < 0)
		return -1;
	st->run_id = run_id;
	hb_strlcpy(st->model, model, sizeof(st->model));
	hb_strlcpy(st->policy, policy, sizeof(st->policy));
	st->count[2 * (run_id - 1)] = st->count[2 * (run_id - 1) + 1] = 0;
	/* the templates before the run, to keep if it fails */
	if (hb_res_db_tpl_mark(st, &st->tpl_mark, err) < 0) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		return stream_fail(st, err);
	}
	if (!st->csv)
		return 0;
	st->ev_off = ftello(st->fev);
	st->ts_off = ftello(st->fts);
	if (st->ev_off < 0 || st->ts_off < 0) {
		hb_runtime_error(err, "%s: cannot tell the CSV positions: %s", st->dir, strerror(errno));
		return stream_fail(st, err);
	}
	return 0;
}

/* On the writer: a row went into the database; commit every
 * STREAM_BATCH_ROWS.  (The writer reports a failure through its own
 * state, never st->fail, which is the stream's thread's.) */
static int stream_row(struct hb_results_stream *st, struct hb_error *err)
{
	if (++st->pending < STREAM_BATCH_ROWS)
		return 0;
	st->pending = 0;
	if (hb_db_commit(st->db, err) < 0 || hb_db_begin(st->db, err) < 0) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		return -1;
	}
	return 0;
}

int hb_res_stream_put_event(struct hb_results_stream *st, size_t seq, const struct hb_sim_event_rec *e,
			    struct hb_error *err)
{
	if (st->fev)
		hb_res_event_csv_row(st->fev, st->run_id, st->model, st->policy, e);
	if (hb_res_db_event(st, seq, e, err) < 0) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		return -1;
	}
	return stream_row(st, err);
}

int hb_res_stream_put_sample(struct hb_results_stream *st, size_t seq, const struct hb_sim_sample *x,
			     struct hb_error *err)
{
	if (st->fts)
		hb_res_sample_csv_row(st->fts, st->run_id, st->model, st->policy, x);
	if (hb_res_db_sample(st, seq, x, err) < 0) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		return -1;
	}
	return stream_row(st, err);
}

int hb_results_stream_event(struct hb_results_stream *st, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	size_t *n;

	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	if (st->run_id == 0 || !hb_events_level_keeps(st->level, e->kind))
		return 0;
	n = &st->count[2 * (st->run_id - 1)];
	if (hb_res_writer_event(st, *n, e, err) < 0)
		return stream_fail(st, err);
	(*n)++;
	return 0;
}

int hb_results_stream_sample(struct hb_results_stream *st, const struct hb_sim_sample *x, struct hb_error *err)
{
	size_t *n;

	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	/* Samples are the finest record: only `all` writes them. */
	if (st->run_id == 0 || st->level != HB_EVENTS_ALL)
		return 0;
	n = &st->count[2 * (st->run_id - 1) + 1];
	if (hb_res_writer_sample(st, *n, x, err) < 0)
		return stream_fail(st, err);
	(*n)++;
	return 0;
}

/* Cut f back to off (the rows of a run that stopped with an error). */
static int csv_truncate(FILE *f, off_t off)
{
	return fflush(f) == 0 && ftruncate(fileno(f), off) == 0 && fseeko(f, off, SEEK_SET) == 0 ? 0 : -1;
}

int hb_results_stream_end(struct hb_results_stream *st, int ok, struct hb_error *err)
{
	int id = st->run_id;

	if (st->fail.code == HB_OK && hb_res_writer_drain(st, err) < 0)
		stream_fail(st, err);
	st->run_id = 0;
	if (st->fail.code != HB_OK) {
		*err = st->fail;
		return -1;
	}
	if (id == 0)
		return 0;
	if (!ok) {
		char sql[256];

		/* and the templates only its rows used, as if it had not run
		 * (a run on a thread that fails is not merged at all) */
		snprintf(sql, sizeof(sql), "DELETE FROM event WHERE run_id = %d; DELETE FROM event_num WHERE run_id = %d;"
			 " DELETE FROM event_tpl WHERE tpl > %d; DELETE FROM timeseries WHERE run_id = %d;",
			 id, id, st->tpl_mark, id);
		hb_res_db_tpls_reset(st);
		st->count[2 * (id - 1)] = st->count[2 * (id - 1) + 1] = 0;
		if (hb_db_exec(st->db, sql, err) < 0) {
			hb_error_at_path(err, st->db_tmp, st->db_path);
			return stream_fail(st, err);
		}
		if (st->csv && (csv_truncate(st->fev, st->ev_off) < 0 || csv_truncate(st->fts, st->ts_off) < 0)) {
			hb_runtime_error(err, "%s: cannot take a failed run's rows out of the CSV files: %s", st->dir,
					 strerror(errno));
			return stream_fail(st, err);
		}
	}
	/* A full disk shows in the CSV files' error flags: stop at the run. */
	if (hb_res_stage_check(&st->sg, err) < 0)
		return stream_fail(st, err);
	return 0;
}

/* The staged database copied by VACUUM INTO st->vac_tmp: its pages
 * packed (rows inserted one by one into WITHOUT ROWID tables leave a
 * tenth of each page empty: Pollux's whole philly.csv, 140 -> 126 MB)
 * and laid out by content alone, so a set's results.db is the same bytes
 * however its rows came (streamed, or merged from runs on threads).  The
 * copy is made new, never through a link, as the staged file is.
 * A set of one run is not copied (stream_needs_compact). */
static int stream_compact(struct hb_results_stream *st, struct hb_error *err)
{
	struct stat made;
	sqlite3_stmt *q = NULL;
	int rc;

	if ((size_t)snprintf(st->vac_tmp, sizeof(st->vac_tmp), "%s.vacuum.tmp.%ld", st->db_path, (long)getpid()) >=
	    sizeof(st->vac_tmp))
		return hb_input_error(err, "%s: output path too long", st->dir);
	if (hb_create_file(st->vac_tmp, &made, err) < 0)
		return -1;
	if (hb_db_prepare(st->db, "VACUUM INTO ?1", &q, err) < 0) {
		remove(st->vac_tmp);
		return -1;
	}
	sqlite3_bind_text(q, 1, st->vac_tmp, -1, SQLITE_STATIC);
	rc = hb_db_step_done(st->db, q, err);
	sqlite3_finalize(q);
	if (rc < 0 || !hb_same_file(st->vac_tmp, &made)) {
		if (rc == 0)
			hb_runtime_error(err, "%s: %s was replaced while being written", st->db_path, st->vac_tmp);
		remove(st->vac_tmp);
		return -1;
	}
	return 0;
}

/* Whether commit compacts: only a set of several runs can come in more
 * than one way (-j N merges their parts), and VACUUM re-inserts every row,
 * which on one whole-trace replay (Pollux's philly.csv under tiresias,
 * 82,247 jobs) costs about 0.3 CPU-s for 10 % of the file (38 -> 35 MB).
 * One run is always streamed straight into the set (the trace command
 * gives it one thread), in one order, so its bytes are already a function
 * of its rows. */
static int stream_needs_compact(const struct hb_results *r)
{
	return r->nruns > 1;
}

/* The end for both modes: the database's last rows, the staged files,
 * every file in place.  Frees st. */
int hb_res_stream_commit(struct hb_results_stream *st, const struct hb_results *r, const struct srow *rows,
			 size_t nrows, const struct trace_view *tv, enum hb_events_level lv, struct hb_error *err)
{
	int fd;

	if (st->fail.code == HB_OK && hb_res_writer_drain(st, err) < 0)
		stream_fail(st, err);
	hb_res_writer_stop(st);
	if (st->fail.code != HB_OK) {
		*err = st->fail;
		goto fail;
	}
	if (hb_res_db_finish(st->db, r, rows, nrows, tv, st->count, st->ncount, lv, st->db_tmp, err) < 0)
		goto fail;
	stream_finalize(st);
	if (hb_db_commit(st->db, err) < 0 || (stream_needs_compact(r) && stream_compact(st, err) < 0)) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		goto fail;
	}
	if (sqlite3_close(st->db) != SQLITE_OK) {
		st->db = NULL;
		hb_runtime_error(err, "%s: cannot close the database", st->db_path);
		goto fail;
	}
	st->db = NULL;
	if (st->vac_tmp[0] && rename(st->vac_tmp, st->db_tmp) != 0) {
		hb_runtime_error(err, "%s: cannot move the compacted copy into place: %s", st->db_path,
				 strerror(errno));
		goto fail;
	}
	/* synchronous=OFF above: the whole file reaches the disk here, once. */
	fd = open(st->db_tmp, O_RDONLY);
	if (fd < 0 || fsync(fd) != 0) {
		hb_runtime_error(err, "%s: cannot sync: %s", st->db_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	close(fd);
	hb_res_stream_join_file(st);
	if (hb_res_stage_check(&st->sg, err) < 0)
		goto fail;
	if (rename(st->db_tmp, st->db_path) != 0) {
		hb_runtime_error(err, "%s: cannot rename into place: %s", st->db_path, strerror(errno));
		goto fail;
	}
	if (hb_res_stage_commit(&st->sg, err) < 0) {
		stream_free(st);
		return -1;
	}
	stream_free(st);
	return 0;
fail:
	hb_results_stream_abort(st);
	return -1;
}

/* Feed the records a simulation kept in memory, as if streamed. */
int hb_res_stream_records(struct hb_results_stream *st, int run_id, const char *model, const char *policy,
			  const struct hb_sim *sim, struct hb_error *err)
{
	size_t a = 0, b = 0;

	if (hb_results_stream_begin(st, run_id, model, policy, err) < 0)
		return -1;
	for (; a < sim->nevents; a++)
		if (hb_results_stream_event(st, &sim->events[a], err) < 0)
			return -1;
	for (; b < sim->nsamples; b++)
		if (hb_results_stream_sample(st, &sim->samples[b], err) < 0)
			return -1;
	return hb_results_stream_end(st, 1, err);
}

/* ==== a run's own stream (results.h: "Runs on threads") ====================================== */

int hb_results_stream_part(struct hb_results_stream *st, int run_id, struct hb_results_stream **out,
			   struct hb_error *err)
{
	struct hb_results_stream *p = calloc(1, sizeof(*p));
	char ev[64], ts[64];

	*out = NULL;
	if (!p)
		return hb_runtime_error(err, "results: out of memory");
	p->trace = st->trace;
	p->level = st->level;
	p->csv = st->csv;
	/* Errors name the set's results.db: the part is an internal file. */
	hb_strlcpy(p->dir, st->dir, sizeof(p->dir));
	hb_strlcpy(p->db_path, st->db_path, sizeof(p->db_path));
	/* "*.tmp.PID" inside the staging directory: an abort removes the
	 * directory, and a killed writer's are swept like any temporary
	 * (tmpfiles.h). */
	if ((size_t)snprintf(p->db_tmp, sizeof(p->db_tmp), "%s/.run-%d.db.tmp.%ld", st->dir, run_id, (long)getpid()) >=
	    sizeof(p->db_tmp)) {
		free(p);
		return hb_input_error(err, "%s: output path too long", st->dir);
	}
	snprintf(ev, sizeof(ev), ".run-%d-events.csv", run_id);
	snprintf(ts, sizeof(ts), ".run-%d-timeseries.csv", run_id);
	if (hb_res_db_open(p, err) < 0 ||
	    (p->csv && (!(p->fts = hb_res_stage_open(&p->sg, st->dir, ts, err)) ||
			!(p->fev = hb_res_stage_open(&p->sg, st->dir, ev, err))))) {
		hb_results_stream_abort(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* Append the bytes of the file at path to f. */
static int append_file(FILE *f, const char *path, struct hb_error *err)
{
	char buf[1 << 16];
	FILE *in = fopen(path, "rb");
	size_t n;
	int bad;

	if (!in)
		return hb_runtime_error(err, "%s: cannot reopen: %s", path, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, f) != n)
			break;
	bad = ferror(in) || ferror(f);
	fclose(in);
	return bad ? hb_runtime_error(err, "%s: copy failed: %s", path, strerror(errno)) : 0;
}

/* Copy the part's event and sample rows into st's database: attached
 * between st's transactions (SQLite attaches and detaches outside one),
 * in one INSERT ... SELECT per table, in seq order. */
static int merge_db(struct hb_results_stream *st, const struct hb_results_stream *p, struct hb_error *err)
{
	sqlite3_stmt *att = NULL;
	int rc;

	if (hb_db_commit(st->db, err) < 0 || hb_db_prepare(st->db, "ATTACH DATABASE ?1 AS part", &att, err) < 0)
		return -1;
	sqlite3_bind_text(att, 1, p->db_tmp, -1, SQLITE_TRANSIENT);
	rc = hb_db_step_done(st->db, att, err);
	sqlite3_finalize(att);
	if (rc < 0)
		return -1;
	rc = hb_db_begin(st->db, err) < 0 || hb_res_db_copy_part(st, err) < 0 || hb_db_commit(st->db, err) < 0 ? -1 : 0;
	if (rc < 0)
		hb_db_rollback(st->db);
	/* Detach even after a failure, so that the part's file can go. */
	if (hb_db_exec(st->db, "DETACH DATABASE part", rc < 0 ? &(struct hb_error){ 0 } : err) < 0)
		rc = -1;
	st->pending = 0;
	return rc < 0 ? -1 : hb_db_begin(st->db, err);
}

int hb_results_stream_merge(struct hb_results_stream *st, struct hb_results_stream *p, int ok, struct hb_error *err)
{
	int id = p->run_id, rc = -1;

	if (st->fail.code == HB_OK && hb_res_writer_drain(st, err) < 0)
		stream_fail(st, err);
	if (p->fail.code == HB_OK && hb_res_writer_drain(p, err) < 0)
		stream_fail(p, err);
	hb_res_writer_stop(p);
	if (st->fail.code != HB_OK) {
		*err = st->fail;
		goto out;
	}
	/* A part's write failure is the set's: the command fails. */
	if (p->fail.code != HB_OK) {
		*err = p->fail;
		stream_fail(st, err);
		goto out;
	}
	if (id < 1) {
		hb_runtime_error(err, "results: merging a part no run began");
		goto out;
	}
	if (!ok) { /* a run that stopped with an error writes no row */
		rc = 0;
		goto out;
	}
	if (count_room(st, id, err) < 0)
		goto out;
	stream_finalize(p);
	if (hb_db_commit(p->db, err) < 0 || hb_res_stage_check(&p->sg, err) < 0 ||
	    (p->csv && (fflush(p->fev) != 0 || fflush(p->fts) != 0))) {
		if (err->code == HB_OK)
			hb_runtime_error(err, "%s: write failed: %s", st->dir, strerror(errno));
		hb_error_at_path(err, p->db_tmp, p->db_path);
		stream_fail(st, err);
		goto out;
	}
	sqlite3_close(p->db);
	p->db = NULL;
	if (merge_db(st, p, err) < 0) {
		hb_error_at_path(err, st->db_tmp, st->db_path);
		stream_fail(st, err);
		goto out;
	}
	/* The part's CSV temporaries: [0] timeseries, [1] events (part's order). */
	if (p->csv &&
	    (append_file(st->fts, p->sg.files[0].tmp, err) < 0 || append_file(st->fev, p->sg.files[1].tmp, err) < 0)) {
		stream_fail(st, err);
		goto out;
	}
	st->count[2 * (id - 1)] = p->count[2 * (id - 1)];
	st->count[2 * (id - 1) + 1] = p->count[2 * (id - 1) + 1];
	rc = 0;
out:
	hb_results_stream_abort(p); /* its temporaries go, merged or not */
	return rc;
}

/* ==== trace replay: a run's records ========================================================= */

/* The composite sink of a streamed replay: every record feeds the
 * utilisation accumulator; those the level keeps also go to the files. */
static int run_wants_detail(void *ctx, const char *kind)
{
	const struct hb_trace_run *ru = ctx;

	return ru->out && hb_events_level_keeps(ru->out->level, kind);
}

static int run_event(void *ctx, const struct hb_sim_event_rec *e, struct hb_error *err)
{
	struct hb_trace_run *ru = ctx;

	if (hb_gpu_acc_event(&ru->acc, e, err) < 0)
		return -1;
	return ru->out ? hb_results_stream_event(ru->out, e, err) : 0;
}

static int run_sample(void *ctx, const struct hb_sim_sample *x, struct hb_error *err)
{
	struct hb_trace_run *ru = ctx;

	if (hb_gpu_acc_sample(&ru->acc, x, err) < 0)
		return -1;
	return ru->out ? hb_results_stream_sample(ru->out, x, err) : 0;
}

int hb_trace_run_stream(struct hb_trace_run *ru, struct hb_sim *sim, struct hb_results_stream *out, int run_id,
			struct hb_error *err)
{
	if (hb_gpu_acc_init(&ru->acc, sim->njobs, err) < 0)
		return -1;
	if (out && hb_results_stream_begin(out, run_id, HB_TRACE_RUN_MODEL, ru->policy, err) < 0)
		return -1;
	ru->out = out;
	ru->streamed = 1;
	ru->sink.ctx = ru;
	ru->sink.wants_detail = run_wants_detail;
	ru->sink.event = run_event;
	ru->sink.sample = run_sample;
	hb_sim_stream(sim, &ru->sink);
	return 0;
}
