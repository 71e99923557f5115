/*
 * results_priv.h: what the writers of sim/results/ share (results.c lists
 * them): the summary rows, a trace replay seen as a result set, the staged
 * files, the stream's state, and each writer's entry points for the others.
 * Not for use outside sim/results/.
 */
#ifndef HB_RESULTS_PRIV_H
#define HB_RESULTS_PRIV_H

#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <sys/types.h>  /* off_t */

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "fileio.h"     /* struct hb_atomic_file */
#include "results.h"

/* ---- summary rows (results.c) --------------------------------------------- */

/* One row per (run, job), or one per run that cannot run: every writer's. */
struct hb_res_writer; /* results_writer.c */

struct srow {
	int run_id;                      /* 1-based position in r->runs */
	const struct hb_run_result *run;
	int job;                         /* job index, -1 for a run that cannot run */
	struct hb_job_metrics m;
	double time_rel, cost_rel;       /* vs the reference's same job; NAN when undefined */
	const char *ref;                 /* reference policy, NULL if none */
};

/* The rows of r, in run order (*out: malloc'd, the caller frees). */
int hb_res_summary_rows(const struct hb_results *r, struct srow **out, size_t *nout, struct hb_error *err);

/* ---- trace replay (results.c) ------------------------------------------------ */

/* A trace replay seen as single-job results (model "trace"), so the runs,
 * jobs, events and time-series writers serve both modes. */
struct trace_view {
	const struct hb_trace_results *tr;
	struct hb_results base;
	struct hb_run_result *bruns;   /* owned */
};

int hb_res_trace_view_init(struct trace_view *tv, const struct hb_trace_results *tr, struct hb_error *err);
void hb_res_trace_view_free(struct trace_view *tv);

static inline int ran(const struct hb_trace_run *ru)
{
	return ru->ran && ru->sim;
}

static inline long dropped(const struct hb_trace_results *r, const struct hb_trace_run *ru)
{
	return r->oversize + ru->sum.unfinished;
}

/* Per-job values shared by jobs.csv, the CDFs and the cluster_jobs table. */
struct trace_job {
	double jct_s, queue_s, finish_s;       /* NAN when not done / not started */
	double javg, ref_jct_s, rho;           /* NAN without fairness */
	int ref_gpus;
};

void hb_res_trace_job(const struct hb_trace_run *ru, int j, struct trace_job *t);

/* ---- JSON (results_json.c) --------------------------------------------------- */

cJSON *hb_res_knobs_json(const struct hb_results *r);
cJSON *hb_res_summary_json_rows(const struct hb_results *r, const struct srow *rows, size_t nrows);

/* ---- staged files and CSV rows (results_files.c) ----------------------------- */

struct stage {
	struct hb_atomic_file *files;  /* open temporaries, committed together */
	int n, cap;
};

/* A temporary for dir/name, committed with the others (NULL: err filled). */
FILE *hb_res_stage_open(struct stage *sg, const char *dir, const char *name, struct hb_error *err);
/* A write error on any of them (a full disk shows here). */
int hb_res_stage_check(struct stage *sg, struct hb_error *err);
/* Remove the temporaries from index `from` on and forget them all. */
void hb_res_stage_abort(struct stage *sg, int from);
/* Rename every temporary into place. */
int hb_res_stage_commit(struct stage *sg, struct hb_error *err);

/* timeseries.csv and events.csv: headers, and one row per record (written
 * by the stream as the runs go). */
extern const char *const hb_res_timeseries_header;
extern const char *const hb_res_events_header;
void hb_res_sample_csv_row(FILE *f, int run_id, const char *model, const char *policy, const struct hb_sim_sample *s);
void hb_res_event_csv_row(FILE *f, int run_id, const char *model, const char *policy,
			  const struct hb_sim_event_rec *e);

/* ---- event kinds (results_db.c) ---------------------------------------------------- */

/* results.db stores an event's kind as a small integer (table event_kind):
 * the kinds docs/outputs.md lists have fixed codes; a kind outside that
 * list (a policy added later) gets the next free code in the database the
 * first time it is written, remembered here. */
#define HB_RES_KIND_CACHE 8

struct hb_res_kinds {
	char name[HB_RES_KIND_CACHE][16]; /* kinds outside the fixed list met so far (most recent last) */
	int code[HB_RES_KIND_CACHE];      /* their event_kind codes */
	int n;                            /* entries in use */
	sqlite3_stmt *find, *add;         /* SELECT / INSERT on event_kind, prepared on first use */
};

/* ---- detail templates (results_db.c) ------------------------------------------ */

/* results.db stores a detail sentence as a template (table event_tpl) and
 * its numbers; the templates met are cached here by a hash of their text,
 * so that most events find theirs without a query. */
#define HB_RES_TPL_CACHE 256   /* slots, a power of two */
#define HB_RES_TPL_MAX 512     /* longest template stored (bytes with the NUL) */
#define HB_RES_TPL_NUMS 16     /* numbers a template holds at most */

struct hb_res_tpls {
	struct {
		unsigned hash;
		int id;              /* event_tpl.tpl; 0: slot unused */
		char *text;
	} slot[HB_RES_TPL_CACHE];
	sqlite3_stmt *find, *add;    /* SELECT / INSERT on event_tpl, prepared on first use */
};

/* ---- the stream (results_stream.c) -------------------------------------------- */

struct hb_results_stream {
	char dir[4096];
	char made[4096];              /* the outermost directory open created ("": none), removed on abort */
	int trace;                    /* 1: a trace replay's schema */
	enum hb_events_level level;
	int csv;                      /* 1: also events.csv and timeseries.csv (--csv) */
	sqlite3 *db;                  /* the staged database, inside a transaction */
	char db_path[4096], db_tmp[4200];
	char vac_tmp[4200];           /* the compacted copy commit makes ("": none yet) */
	sqlite3_stmt *ins_event, *ins_num, *ins_sample;
	struct hb_res_kinds kinds;    /* event kind codes beyond the fixed list */
	struct hb_res_tpls tpls;      /* detail templates met */
	int tpl_mark;                 /* the highest template code when the current run began */
	long pending;                 /* rows since the last commit */
	struct stage sg;              /* events.csv and timeseries.csv (with csv), then the end's files */
	FILE *fev, *fts;              /* those two; NULL without csv */
	/* The run being written. */
	int run_id;                   /* 0 between runs */
	char model[HB_NAME_MAX], policy[HB_NAME_MAX];
	off_t ev_off, ts_off;         /* where its CSV rows begin */
	size_t *count;                /* per run: events, samples written (2 per run) */
	int ncount;                   /* runs with room in count */
	struct hb_error fail;         /* the first write failure (code HB_OK: none) */
	struct hb_res_writer *w;      /* the writer thread of its rows, NULL until the first */
	/* A file of the end written on a thread while the database's last
	 * tables are (hb_trace_results_commit: jobs.csv); joined by commit
	 * before the files are checked, and by abort. */
	pthread_t file_th;
	int file_on;
};

/* ---- the writer thread (results_writer.c) ------------------------------------------ */

/* A stream's events and samples are queued for a thread of their own,
 * which writes them in order with hb_res_stream_put_*; the stream's own
 * thread touches the database and CSV files only after a drain.  Queue
 * errors and a write that failed on the writer come back from the next
 * queue or drain call. */
int hb_res_writer_event(struct hb_results_stream *st, size_t seq, const struct hb_sim_event_rec *e,
			struct hb_error *err);
int hb_res_writer_sample(struct hb_results_stream *st, size_t seq, const struct hb_sim_sample *x,
			 struct hb_error *err);
/* Wait until every queued row is written: 0, or the writer's failure. */
int hb_res_writer_drain(struct hb_results_stream *st, struct hb_error *err);
/* Wait for the file the end writes on a thread (st->file_on), if any. */
void hb_res_stream_join_file(struct hb_results_stream *st);
/* Stop and free the writer (rows not yet handed to it are dropped). */
void hb_res_writer_stop(struct hb_results_stream *st);
/* On the writer: the run's seq-th event / sample into the CSV file and
 * the database, committing every few thousand rows. */
int hb_res_stream_put_event(struct hb_results_stream *st, size_t seq, const struct hb_sim_event_rec *e,
			    struct hb_error *err);
int hb_res_stream_put_sample(struct hb_results_stream *st, size_t seq, const struct hb_sim_sample *x,
			     struct hb_error *err);

/* The end for both modes: the database's last rows (tv: a trace replay's
 * tables instead of `summary`), the staged files, every file in place.
 * Frees st. */
int hb_res_stream_commit(struct hb_results_stream *st, const struct hb_results *r, const struct srow *rows,
			 size_t nrows, const struct trace_view *tv, enum hb_events_level lv, struct hb_error *err);
/* Feed the records a simulation kept in memory, as if streamed. */
int hb_res_stream_records(struct hb_results_stream *st, int run_id, const char *model, const char *policy,
			  const struct hb_sim *sim, struct hb_error *err);

/* ---- results.db (results_db.c) --------------------------------------------------- */

/* Create st->db_tmp with the schema (st->trace picks the summary tables),
 * inside a transaction, with the event and sample inserts prepared. */
int hb_res_db_open(struct hb_results_stream *st, struct hb_error *err);
/* Forget the kind codes cached beyond the fixed list (after a merge gave
 * the database new ones) and the statements that found them. */
void hb_res_db_kinds_reset(struct hb_results_stream *st);
/* The same for the detail templates (a merge may give them new codes). */
void hb_res_db_tpls_reset(struct hb_results_stream *st);
/* The highest template code in st's database (0: none yet). */
int hb_res_db_tpl_mark(struct hb_results_stream *st, int *mark, struct hb_error *err);
/* Copy the event and sample rows of the database attached as `part` into
 * st's (inside a transaction the caller opened). */
int hb_res_db_copy_part(struct hb_results_stream *st, struct hb_error *err);
/* The run's seq-th event / sample row. */
int hb_res_db_event(struct hb_results_stream *st, size_t seq, const struct hb_sim_event_rec *e, struct hb_error *err);
int hb_res_db_sample(struct hb_results_stream *st, size_t seq, const struct hb_sim_sample *x, struct hb_error *err);
/* meta, runs, jobs and the summary tables (count[]: each run's events and
 * samples, 2 per run); path names the file in errors. */
int hb_res_db_finish(sqlite3 *db, const struct hb_results *r, const struct srow *rows, size_t nrows,
		     const struct trace_view *tv, const size_t *count, int ncount, enum hb_events_level lv,
		     const char *path, struct hb_error *err);

#endif
