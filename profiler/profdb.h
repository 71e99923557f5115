/*
 * profdb.h: the profile database, the contract between the profiler, the
 * importers, the analytic generator and the solvers.
 *
 * One SQLite file (which files commands use: default_db.h).  Tables
 * (schema version in PRAGMA user_version, forward migrations in profdb.c):
 *
 *   run(id, kind, host, device, driver, cuda, backend, started_at, tool_version,
 *       gpu, cupti, scale, dropped, notes)              (v2 added the last five)
 *   compute(gpu, model, local_bs, n_vsw, fwd_s, bwd_s, data_s, update_s, copy_s,
 *           bn_s, total_s, mem_bytes, source, run_id)   one measured/generated point
 *   memory(gpu, model, local_bs, max_vsw, source)        feasibility; max local batch follows
 *   bucket(model, idx, bytes, source)                    gradient buckets, reduction order
 *   allreduce(scope, link, n_gpus, bytes, time_s, source, run_id)
 *   allreduce_fit(scope, link, alpha, beta, bandwidth, r2, source)
 *   placement(model, gpu, placement, local_bs, step_s, sync_s, source)   Pollux placements.csv
 *   scalability(model, gpu, num_nodes, num_replicas, local_bs, step_s, sync_s, source)
 *   gradstats(model, batch, epoch, iteration, progress, metric, grad_sqr, grad_var, source)
 *   prediction(run_id, model, config_json, predicted_s, measured_s)
 *
 * GPU and model names are catalog names where the importer could map them
 * (via the catalog's aliases), else the name as the source file spelled it.
 * `source` is one of "torch", "cupti", "events", "cpu", "analytic", "import:pollux", "import:sia",
 * "import:jabas", "import:nccl-tests", "live".  When several sources cover one
 * (gpu, model) pair, readers take the whole set from the best one, in the
 * order of hb_profdb_source_rank(), so a measured profile is never mixed
 * with generated points.
 *
 * allreduce_fit follows JABAS Eq. 3 in the artifact's units: for a tensor of
 * d bytes on N GPUs over a link of bandwidth K (bytes/s),
 *   x_ms = d * 4(N-1)/N / K * 1000,   t_ms = alpha * x_ms + beta.
 * `scope` is "intra" or "inter"; `link` is the link class name used by the
 * cluster files ("pcie3-x16", "ib-100g", ...).
 *
 * Every write function is meant to be called inside hb_profdb_begin /
 * hb_profdb_commit; importers wrap a whole file set in one transaction.
 *
 * Files: one SQLite file in rollback-journal mode (db.h): nothing beside it
 * between transactions, readable from a read-only directory.  Opening a
 * new file creates the schema in one BEGIN IMMEDIATE transaction that
 * re-reads the version under the write lock, so several processes may
 * create or migrate the same new file at once.
 *
 * Layered sets: hb_profdb_open_layers reads several files as one database
 * (read-only), e.g. the user's database over the cached analytic one
 * (default_db.h).  Every reader then chooses per key, as above, the best
 * source over all layers; between equal sources the earlier layer wins.
 * So a (gpu, model) profiled or imported into the user's database
 * replaces the analytic points for exactly that pair, and pairs it does
 * not cover keep the analytic ones.
 */
#ifndef HB_PROFDB_H
#define HB_PROFDB_H

#include <stdint.h>

#include "error.h"
#include "profile_rows.h" /* the row types every table stores */

#define HB_PROFDB_SCHEMA_VERSION 2

#define HB_PROFDB_MAX_LAYERS 4

struct hb_profdb;  /* opaque: owns the sqlite3 handle and prepared statements */

/* Open modes (0: read-write, creating and migrating as needed). */
enum hb_profdb_mode {
	HB_PROFDB_READONLY = 1,  /* an existing file, SQLITE_OPEN_READONLY: no lock file, no journal */
	HB_PROFDB_IMMUTABLE = 2, /* read-only, and nobody changes the file in place while it is open
				  * (the cached analytic database, replaced only by rename): no locks */
	HB_PROFDB_EXISTING = 4,  /* read-write, but never create the file (one the caller read) */
};

/* Open one file.  mode is 0 (read-write), HB_PROFDB_EXISTING or HB_PROFDB_READONLY /
 * HB_PROFDB_IMMUTABLE (an existing file at the current schema version). */
int hb_profdb_open(const char *path, int mode, struct hb_profdb **out, struct hb_error *err);

/* One file of a layered set. */
struct hb_profdb_layer {
	const char *path; /* the file (must exist) */
	int mode;         /* HB_PROFDB_READONLY or HB_PROFDB_IMMUTABLE */
};

/* Open n (1 to HB_PROFDB_MAX_LAYERS) files read-only as one database,
 * layers[0] preferred (see "Layered sets" above). */
int hb_profdb_open_layers(const struct hb_profdb_layer *layers, int n, struct hb_profdb **out,
			  struct hb_error *err);
void hb_profdb_close(struct hb_profdb *db);
/* Layer 0's file (the one writes go to, in a read-write open). */
const char *hb_profdb_path(const struct hb_profdb *db);
/* Every layer's file joined by " + ", for messages and `profiles:` lines. */
const char *hb_profdb_label(const struct hb_profdb *db);
int hb_profdb_nlayers(const struct hb_profdb *db);
const char *hb_profdb_layer_path(const struct hb_profdb *db, int layer); /* NULL out of range */

/* Where the compute rows a reader gets for (gpu, model) come from. */
struct hb_profdb_origin {
	char source[32];  /* their source (the best-ranked one present) */
	int layer;        /* the layer holding them (0 = the first file) */
	const char *path; /* that layer's file (owned by the handle) */
	int64_t run_id;   /* run of the first row (smallest local batch), 0 if none */
	long rows;        /* how many compute rows */
	long runs;        /* how many distinct runs (no run counts as one) they come from */
	int64_t run_min, run_max; /* the smallest and largest of those run ids (0: no run) */
};

/* found = 0 when no layer has a compute row for (gpu, model). */
int hb_profdb_compute_origin(struct hb_profdb *db, const char *gpu, const char *model,
			     struct hb_profdb_origin *out, int *found, struct hb_error *err);

/* What a result records of the profile it was made from, per GPU type x
 * model (issue 39): where the compute rows came from, and a digest of every
 * row a reader takes for the pair, so two results made from different
 * profiles never look alike even when the files have the same names. */
struct hb_profile_use {
	char gpu[64];
	char model[64];
	char source[32];    /* the compute rows' source; "" when there are none */
	char file[256];     /* base name of the layer's file holding them ("" when none) */
	int layer;          /* that layer (0 = the first file) */
	int builtin;        /* 1: that file is the cached analytic database (default_db.h) */
	int64_t run_id;     /* run of the first compute row, 0 if none */
	long rows;          /* compute rows */
	long measured;      /* Pollux-style measured rows of the GPU: placement + scalability */
	uint64_t digest;    /* FNV-1a 64 over the compute, memory, placement and scalability rows
			       readers take for the pair, values printed with %.17g */
};

/* Fill *out for (gpu, model). */
int hb_profdb_profile_use(struct hb_profdb *db, const char *gpu, const char *model, struct hb_profile_use *out,
			  struct hb_error *err);

/* Its digest as 16 hex digits (how results print it) into out. */
void hb_profile_use_hex(const struct hb_profile_use *u, char out[17]);

struct sqlite3_stmt;
/* Bind u to st's parameters first .. first + 8 in the results' column order:
 * gpu, model, source, file, builtin, run_id (NULL when 0), rows,
 * measured_rows, digest (hex).  Shared by sim's and sweep's results.db. */
void hb_profile_use_bind(struct sqlite3_stmt *st, int first, const struct hb_profile_use *u);

struct hb_catalog;
struct hb_cluster;
struct hb_model;
/* The same per GPU type of cl (each once, in node order) x models[0..n),
 * model-major, into a new array *out (free() it) of *nout entries. */
int hb_profdb_cluster_uses(struct hb_profdb *db, const struct hb_catalog *cat, const struct hb_cluster *cl,
			   const struct hb_model *const *models, int n, struct hb_profile_use **out, int *nout,
			   struct hb_error *err);

/* Measuring runs (profile --backend) commit point by point, so SQLite's
 * locks never keep two of them apart, and two into one file replaced each
 * other's rows on the natural key, leaving a mix that readers credited to
 * one run.  A measuring run takes this lock first: an exclusive flock on
 * layer 0's file for as long as the handle is open (released by
 * hb_profdb_close or the process's death).  -1 with a message naming the
 * file when another run holds it; readers and other writers ignore it. */
int hb_profdb_lock_measuring(struct hb_profdb *db, struct hb_error *err);

int hb_profdb_begin(struct hb_profdb *db, struct hb_error *err);
int hb_profdb_commit(struct hb_profdb *db, struct hb_error *err);
void hb_profdb_rollback(struct hb_profdb *db);

/* Lower rank = preferred.  Unknown sources rank last. */
int hb_profdb_source_rank(const char *source);

int hb_profdb_add_run(struct hb_profdb *db, const struct hb_run_info *run, int64_t *id, struct hb_error *err);

/* A run's dropped CUPTI record count, set when the run ends. */
int hb_profdb_set_run_dropped(struct hb_profdb *db, int64_t id, long dropped, struct hb_error *err);
/* Read run `id` (found = 0 when there is none). */
int hb_profdb_get_run(struct hb_profdb *db, int64_t id, struct hb_run_info *out, int *found, struct hb_error *err);
/* The newest run of kind "profile" with this backend, device name, catalog
 * GPU and scale (--resume continues it); *id = 0 when there is none. */
int hb_profdb_find_profile_run(struct hb_profdb *db, const char *backend, const char *device, const char *gpu,
			       double scale, int64_t *id, struct hb_error *err);
/* 1 in *found when run `run_id` already measured (gpu, model, local_bs,
 * n_vsw) into compute. */
int hb_profdb_has_compute(struct hb_profdb *db, int64_t run_id, const char *gpu, const char *model, int local_bs,
			  int n_vsw, int *found, struct hb_error *err);
/* Every compute row of the measuring sources ("torch", "cupti", "events", "cpu"),
 * ordered by gpu, model, local_bs, n_vsw, source: for --compare. */
int hb_profdb_list_measured(struct hb_profdb *db, struct hb_compute_row **rows, int *n, struct hb_error *err);

/* Writers: insert or replace on the natural key (everything but the values). */
int hb_profdb_put_compute(struct hb_profdb *db, const struct hb_compute_row *r, struct hb_error *err);
int hb_profdb_put_memory(struct hb_profdb *db, const struct hb_memory_row *r, struct hb_error *err);
/* Replace the model's bucket list for that source. */
int hb_profdb_put_buckets(struct hb_profdb *db, const char *model, const double *bytes, int n,
			  const char *source, struct hb_error *err);
int hb_profdb_put_allreduce(struct hb_profdb *db, const struct hb_allreduce_row *r, struct hb_error *err);
int hb_profdb_put_allreduce_fit(struct hb_profdb *db, const struct hb_allreduce_fit *f, struct hb_error *err);
/* Delete one source's allreduce rows of (scope, link), and that source's
 * fit of them, so a new complete sweep replaces the old one instead of
 * mixing with it before a fit (and no fit outlives its rows). */
int hb_profdb_clear_allreduce(struct hb_profdb *db, const char *scope, const char *link, const char *source,
			      struct hb_error *err);
int hb_profdb_put_placement(struct hb_profdb *db, const struct hb_placement_row *r, struct hb_error *err);
int hb_profdb_put_scalability(struct hb_profdb *db, const struct hb_scalability_row *r, struct hb_error *err);
int hb_profdb_put_gradstats(struct hb_profdb *db, const struct hb_gradstats_row *r, struct hb_error *err);
/* One live-run check of the performance model (run_id 0 = no run). */
int hb_profdb_put_prediction(struct hb_profdb *db, int64_t run_id, const char *model, const char *config_json,
			     double predicted_s, double measured_s, struct hb_error *err);

/* Readers.  Arrays are malloc'd (free() them); *n may be 0.  Rows come from
 * the best-ranked source present for the key, ordered by local_bs, n_vsw. */
int hb_profdb_get_compute(struct hb_profdb *db, const char *gpu, const char *model,
			  struct hb_compute_row **rows, int *n, struct hb_error *err);
int hb_profdb_get_memory(struct hb_profdb *db, const char *gpu, const char *model,
			 struct hb_memory_row **rows, int *n, struct hb_error *err);
/* Largest local batch with max_vsw >= 1, 0 if none recorded. */
int hb_profdb_max_local_bs(struct hb_profdb *db, const char *gpu, const char *model, int *out,
			   struct hb_error *err);
int hb_profdb_get_buckets(struct hb_profdb *db, const char *model, double **bytes, int *n,
			  struct hb_error *err);
int hb_profdb_get_allreduce(struct hb_profdb *db, const char *scope, const char *link,
			    struct hb_allreduce_row **rows, int *n, struct hb_error *err);
/* found = 0 when no fit exists for (scope, link). */
int hb_profdb_get_allreduce_fit(struct hb_profdb *db, const char *scope, const char *link,
				struct hb_allreduce_fit *out, int *found, struct hb_error *err);
int hb_profdb_get_placements(struct hb_profdb *db, const char *model,
			     struct hb_placement_row **rows, int *n, struct hb_error *err);
/* Scalability rows come per GPU in the order they were stored (an import
 * keeps its file's order, on which Pollux fidelity's interpolation
 * depends: interp3.h). */
int hb_profdb_get_scalability(struct hb_profdb *db, const char *model,
			      struct hb_scalability_row **rows, int *n, struct hb_error *err);
int hb_profdb_get_gradstats(struct hb_profdb *db, const char *model,
			    struct hb_gradstats_row **rows, int *n, struct hb_error *err);

/* Remove the file at path (and its -journal) when no table of it holds a
 * row: a database a command created for a write that then failed.  The
 * check and the unlink happen under the write lock.  1 if removed.  The
 * caller decides that it created the file (it did not exist before). */
int hb_profdb_remove_if_empty(const char *path);

/* Row count of a table by name (for tests and `hetbatch profile --show`). */
int hb_profdb_count(struct hb_profdb *db, const char *table, long *count, struct hb_error *err);

/* Fit JABAS Eq. 3 (ordinary least squares on the stored allreduce rows of
 * (scope, link) at bandwidth K) and store it; fails with fewer than 2 rows.
 * With source given, that source's rows are fitted and the fit is stored
 * under it (an importer fits what it wrote even if a better-ranked source
 * has rows for the link); with source NULL, the best-ranked source's rows,
 * as a reader gets them, and the fit is stored under that source. */
int hb_profdb_fit_allreduce(struct hb_profdb *db, const char *scope, const char *link, double bandwidth,
			    const char *source, struct hb_allreduce_fit *out, struct hb_error *err);

#endif
