/*
 * sweep.h: what-if studies, `hetbatch sweep CONFIG.json`.
 *
 * A sweep replays one workload (a trace file or the seeded generator of
 * traces/synthetic.h) on several clusters, at several load factors, under
 * several policies and seeds, each combination a `point` that runs exactly
 * what `hetbatch --seed S sim --cluster C --trace ... --load L --policy P`
 * runs (a shared-cluster simulation, sim/replay.h, and its cluster metrics,
 * sim/results/metrics.h).  docs/sweep.md documents the configuration file.
 *
 * Three steps, so that bad input never costs a run and the files never
 * depend on how the points were scheduled:
 *
 *   hb_sweep_config_load
 *       read and validate the JSON configuration; every error names the
 *       file, the field and the value (exit 2 before anything runs);
 *   hb_sweep_setup
 *       build every cluster variant (the base cluster plus added nodes,
 *       loaded into its own catalog with hb_catalog_load_json), read the
 *       trace or generate the synthetic jobs, and build one replay per
 *       (cluster, load, seed); all of it is read-only afterwards;
 *   hb_sweep_run
 *       run the points owned by this process (rank r of size runs the ids
 *       with id % size == r) on nthreads threads: a worker takes the next
 *       point from a mutex-protected counter, runs it on its own struct
 *       hb_sim with its own profile-database connection, and fills only that
 *       point's row.
 *
 * Rows are flat (numbers and text, no pointers), so a distributed run can
 * ship them as bytes (hb_sweep_pack / hb_sweep_unpack) to the process that
 * writes.  The writers (sweep_write.c) read the configuration and the rows
 * only and go in point order, so one configuration and seed give
 * byte-identical files for any thread count and any number of processes.
 *
 * Points are clusters x loads x policies x seeds, nested in that order:
 * point id = ((cluster * nloads + load) * npolicies + policy) * nseeds + seed.
 */
#ifndef HB_SWEEP_H
#define HB_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "catalog.h"
#include "default_db.h" /* struct hb_profile_files */
#include "error.h"
#include "jobspec.h"
#include "log.h"
#include "policy.h"    /* struct hb_policy */
#include "replay.h"
#include "sim.h"
#include "synthetic.h"

#define HB_SWEEP_FORMAT "hetbatch-sweep-results/1"  /* meta.format and summary.json "format" */

#define HB_SWEEP_MAX_CLUSTERS 64
#define HB_SWEEP_MAX_ADD 8          /* added node groups per cluster variant */
#define HB_SWEEP_MAX_LOADS 64
#define HB_SWEEP_MAX_POLICIES 32
#define HB_SWEEP_MAX_SEEDS 1000
#define HB_SWEEP_MAX_POINTS 100000
#define HB_SWEEP_LABEL_MAX 64
#define HB_SWEEP_PATH_MAX 4096

/* ---- the configuration ---------------------------------------------------- */

/* Nodes added to a base cluster. */
struct hb_sweep_add {
	char gpu[HB_SWEEP_PATH_MAX];    /* catalog GPU name (an alias in the file becomes the catalog key),
					   or a GPU JSON file resolved against the config's directory */
	int nodes;                      /* nodes of this kind, >= 1 */
	int gpus_per_node;              /* >= 1 */
};

/* One cluster of the sweep: a base cluster, maybe with added nodes. */
struct hb_sweep_cluster {
	char label[HB_SWEEP_LABEL_MAX]; /* unique; names the cluster in every row and plot */
	char base[HB_SWEEP_PATH_MAX];   /* built-in name, or a cluster JSON file resolved against the config's directory */
	char base_echo[HB_SWEEP_PATH_MAX]; /* what the results record: the name, or the file's base name */
	int base_is_file;               /* 1: base names a file */
	struct hb_sweep_add add[HB_SWEEP_MAX_ADD];
	int nadd;
};

/* Where the jobs come from. */
struct hb_sweep_trace {
	int synthetic;                  /* 1: the generator (synth), 0: a trace file */
	char file[HB_SWEEP_PATH_MAX];   /* trace file, resolved against the config's directory */
	char file_echo[256];            /* its base name (the results hold no directories) */
	enum hb_trace_format format;    /* HB_TRACE_AUTO or a file format */
	struct hb_trace_options topt;   /* filters (max_jobs, window, vc, GPUs), both sources */
	struct hb_synth_options synth;  /* generator options; seed and load are set per point */
	char philly_csv[HB_SWEEP_PATH_MAX]; /* synth.philly_csv points here when set */
	char philly_echo[256];          /* its base name */
	int duration_from_trace;        /* 1: a job stops at the run time its trace records
					   (duration_s), as sim --duration-from-trace */
};

struct hb_sweep_config {
	char path[HB_SWEEP_PATH_MAX];   /* the configuration file, for messages */
	char name[HB_SWEEP_LABEL_MAX];  /* "name", else the file's base name without .json */
	struct hb_sweep_trace trace;
	struct hb_sweep_cluster *clusters; /* owned */
	int nclusters;
	double loads[HB_SWEEP_MAX_LOADS]; /* > 0 */
	int nloads;
	const struct hb_policy *policies[HB_SWEEP_MAX_POLICIES]; /* from hb_policies */
	int npolicies;
	uint64_t *seeds;                /* owned */
	int nseeds;
	int fairness;                   /* 1: compute finish-time fairness rho (a second run per job) */
	struct hb_sim_opts opts;        /* knobs (seed set per point; pointers NULL) */
	cJSON *echo;                    /* the configuration as understood: every default filled in,
	                                   files by base name; owned */
};

/* Read and validate path; default_seed is used when the file gives no
 * "seeds".  Every error is an input error naming the file, the field and
 * the value; cfg is left empty (hb_sweep_config_free is still safe). */
int hb_sweep_config_load(const char *path, uint64_t default_seed, struct hb_sweep_config *cfg, struct hb_error *err);
/* The same from text; dir resolves relative file names ("" or NULL: the
 * current directory), name is the file name for messages. */
int hb_sweep_config_parse(const char *text, size_t len, const char *name, const char *dir, uint64_t default_seed,
			  struct hb_sweep_config *cfg, struct hb_error *err);
void hb_sweep_config_free(struct hb_sweep_config *cfg);

/* ---- points ---------------------------------------------------------------- */

int hb_sweep_npoints(const struct hb_sweep_config *cfg);

/* Indices of point id. */
struct hb_sweep_point {
	int id;
	int cluster, load, policy, seed; /* indices into the config's arrays */
};

void hb_sweep_point_of(const struct hb_sweep_config *cfg, int id, struct hb_sweep_point *p);

/* ---- the jobs every point replays ---------------------------------------------- */

/*
 * Every point of one (load, seed) replays the same jobs: the trace's (or the
 * generator's) jobs less those no cluster of the sweep can run (more GPUs
 * than the largest cluster has), which are reported before the sweep starts
 * and left out everywhere.  A job only some clusters can run stays in the
 * set: on a cluster too small for it, and wherever it does not finish, it
 * counts as not completed, with a censored JCT, the time from its arrival
 * to the end of the sweep's replays of that (load, seed) (the latest
 * simulated end of their points).  So a cluster's mean JCT over the set is
 * over the same jobs as every other cluster's, and a lower bound where
 * jobs are censored (docs/sweep.md, "The same jobs in every point").
 */
struct hb_sweep_job {
	char name[HB_JOB_NAME_MAX];     /* the trace's job name */
	char model[HB_NAME_MAX];        /* catalog model (drawn for a trace without models) */
	double arrival_s;               /* arrival at this load (s) */
	int gpus;                       /* GPUs it asks for */
	int clusters;                   /* clusters of the sweep large enough for it (>= 1) */
};

struct hb_sweep_jobset {
	struct hb_sweep_job *jobs;      /* in replay order, owned */
	long njobs;
	long *of_spec;                  /* job set index of spec k of the replays (hb_replay_job.index),
					   -1: left out; read entries, owned */
	long read;                      /* specs the replays were built from */
	long excluded;                  /* left out: larger than every cluster */
	int max_excluded_gpus;          /* largest such request, 0 if none */
	long partial;                   /* in the set but too large for some cluster */
	double horizon_s;               /* the end of its points' replays (hb_sweep_horizon), set by
					   hb_sweep_censor; NAN before, or when none ran */
};

/* What one job did at one point (flat, shipped between processes). */
enum hb_sweep_job_state {
	HB_SWJOB_DONE = 0,              /* finished */
	HB_SWJOB_UNFINISHED = 1,        /* ran or waited but did not finish (censored) */
	HB_SWJOB_TOO_LARGE = 2,         /* more GPUs than this cluster has: never submitted (censored) */
};

struct hb_sweep_jobrow {
	int32_t job;                    /* index in the point's job set */
	int32_t state;                  /* enum hb_sweep_job_state */
	double start_s;                 /* first start; NAN when it never started */
	double finish_s;                /* NAN unless DONE */
};

struct hb_sweep;

/* The job set of (load li, seed si). */
const struct hb_sweep_jobset *hb_sweep_jobset_of(const struct hb_sweep *sw, int li, int si);

/* ---- results ------------------------------------------------------------------ */

enum hb_sweep_status {
	HB_SWEEP_PENDING = 0,           /* not run (yet) */
	HB_SWEEP_OK = 1,                /* ran to the end */
	HB_SWEEP_CANNOT = 2,            /* cannot run: the policy has no shared-cluster arbiter, no job fits */
	HB_SWEEP_FAILED = 3,            /* the run stopped with an error (reason) */
};

/* What one point achieved: hb_cluster_summary in result units (hours,
 * dollars), flat so that it can be copied as bytes between processes. */
struct hb_sweep_row {
	int32_t id;                     /* point id */
	int32_t status;                 /* enum hb_sweep_status */
	int32_t jobs;                   /* jobs of the point's job set (the same for every cluster) */
	int32_t completed;              /* of them, finished */
	int64_t dropped;                /* jobs - completed: larger than the cluster + not finished
					   (their JCTs censored) */
	double jct_mean_h, jct_median_h, jct_p99_h, jct_max_h; /* over completed jobs (as `sim --trace`);
					   NAN when none */
	double makespan_h;              /* last finish - first arrival */
	double queue_mean_h, queue_p99_h; /* first start - arrival, started jobs */
	double gpu_hours;               /* GPU-hours held */
	double cost_usd;                /* dollars for them */
	double util_mean;               /* GPUs held / cluster GPUs over the makespan, 0..1 */
	double restarts_per_job;        /* checkpoint-restarts per job */
	double preemptions_per_job;     /* suspensions by the arbiter per job */
	int64_t rho_jobs;               /* jobs with a fairness rho (0 without fairness) */
	double rho_median, rho_p99, rho_max; /* NAN without */
	int64_t sched_rounds;           /* arbiter rounds */
	int32_t too_large;              /* jobs of the set larger than this cluster (in dropped) */
	int32_t pad;
	double end_s;                   /* simulated end: the last finish or integrated time (s) */
	/* Over every job of the set, a censored one counted to the end of the
	 * sweep (above); filled by hb_sweep_censor once every row is in. */
	double jct_all_mean_h, jct_all_p99_h; /* NAN until then */
	double jct_delta_pct;           /* jct_all_mean_h against the first cluster's point of the same
					   load, policy and seed, in %; NAN for the first cluster or
					   when that point did not run */
	double wall_s;                  /* wall-clock s of the point: progress lines only, never in files */
	char reason[512];               /* why not OK */
};

/* A cluster as built: what the rows and plots say about it. */
struct hb_sweep_cluster_info {
	char name[HB_NAME_MAX];         /* cluster name in its catalog (a variant gets "<base>-v<i>") */
	char base[HB_NAME_MAX];         /* the base cluster's name */
	int gpus;                       /* GPUs in all */
	int nodes;
	double usd_per_h;               /* price of all its GPUs, $/h */
	char gpu_mix[512];              /* "4 v100 + 4 p100 + ... + 8 rtx-3090" */
	struct hb_profile_use *profiles; /* per GPU type x model its replays run (profdb.h), owned */
	int nprofiles;
};

struct hb_sweep {
	const struct hb_sweep_config *cfg; /* borrowed */
	struct hb_catalog *cats;        /* one per cluster: builtin + base file + variant, owned */
	const struct hb_cluster **cl;   /* the cluster in cats[i] */
	struct hb_sweep_cluster_info *info; /* per cluster */
	struct hb_replay *replays;      /* [(cluster * nloads + load) * nseeds + seed], owned */
	int *replay_ok;                 /* 1 where replays[k] holds jobs */
	long trace_read;                /* jobs the trace gave (file: after the filters; synthetic: first load and seed) */
	long with_duration;             /* of the first load and seed's, jobs whose trace records a run time */
	enum hb_trace_format format;    /* the trace's format (HB_TRACE_SYNTHETIC for the generator) */
	struct hb_profile_files profiles; /* profile files every worker opens read-only (default_db.h) */
	struct hb_sweep_jobset *jobsets; /* [load * nseeds + seed], owned */
	struct hb_sweep_row *rows;      /* npoints, in point order, owned */
	struct hb_sweep_jobrow **jobrows; /* per point: rows[id].jobs entries once it ran OK, else NULL; owned */
	int npoints;
};

/* Build clusters, trace and replays (above).  db_path NULL: the user's
 * profile database (when it exists) over the default analytic database,
 * made current for the catalog of the base clusters before any variant is
 * added (so it is what `hetbatch sim` reads; default_db.h).  An
 * error is the sweep's: a bad trace, an unknown model or GPU, a base that is
 * not a cluster. */
int hb_sweep_setup(struct hb_sweep *sw, const struct hb_sweep_config *cfg, const char *db_path, struct hb_error *err);
void hb_sweep_free(struct hb_sweep *sw);

/* Called once per finished point (under the runner's lock: keep it short);
 * done counts this process's finished points, of total. */
typedef void hb_sweep_progress_fn(void *ctx, const struct hb_sweep *sw, const struct hb_sweep_row *row, int done,
				  int total);

/* Run this process's points (rank of size) on nthreads >= 1 threads.  A
 * point that cannot run is a row, never an error; -1 only when a worker
 * cannot start (thread, memory, profile database). */
int hb_sweep_run(struct hb_sweep *sw, int rank, int size, int nthreads, const struct hb_log *log,
		 hb_sweep_progress_fn *progress, void *ctx, struct hb_error *err);

/* Called about every period_s while points run (under the runner's lock,
 * from a thread of its own): this process's points done, running (handed
 * to a worker, not finished) and total. */
typedef void hb_sweep_tick_fn(void *ctx, int done, int running, int total);

/* hb_sweep_run with tick (may be NULL) called every period_s > 0 until the
 * last point ends. */
int hb_sweep_run_ticked(struct hb_sweep *sw, int rank, int size, int nthreads, const struct hb_log *log,
			hb_sweep_progress_fn *progress, hb_sweep_tick_fn *tick, double period_s, void *ctx,
			struct hb_error *err);

/* Run point id alone (its row is reset afterwards, as before any run):
 * *wall_s its wall-clock seconds, *ran 1 when it ran (0: it cannot run,
 * so it costs nothing).  For `sweep --dry-run`'s time estimate. */
int hb_sweep_time_point(struct hb_sweep *sw, int id, double *wall_s, int *ran, struct hb_error *err);

/* Points of rank among size processes. */
int hb_sweep_rank_points(const struct hb_sweep *sw, int rank, int size);

/* This rank's rows and their job rows as bytes (malloc'd, *len bytes), for
 * another process's hb_sweep_unpack; the same build on every process (rows
 * are raw structs): per point, its row, then row.jobs job rows when it ran. */
int hb_sweep_pack(const struct hb_sweep *sw, int rank, int size, void **buf, size_t *len, struct hb_error *err);
/* Copy the rows of a pack into their slots; checks the sizes and every id. */
int hb_sweep_unpack(struct hb_sweep *sw, const void *buf, size_t len, struct hb_error *err);

/* Once every row is in (after hb_sweep_run, and hb_sweep_unpack of every
 * other process): the censored JCTs, the all-jobs means and the deltas
 * against the first cluster (the row fields above). */
void hb_sweep_censor(struct hb_sweep *sw);
/* The end of the sweep's replays of (load li, seed si): the latest end_s
 * of their points that ran; NAN when none did. */
double hb_sweep_horizon(const struct hb_sweep *sw, int li, int si);
/* JCT of job row jr at point id, censored ones to its job set's horizon_s
 * (s; after hb_sweep_censor). */
double hb_sweep_job_jct(const struct hb_sweep *sw, int id, const struct hb_sweep_jobrow *jr);

/* Points that ran to the end. */
int hb_sweep_nok(const struct hb_sweep *sw);

/* ---- writers (sweep_write.c) -------------------------------------------------- */

/* One (cluster, load, policy): means over the seeds that ran. */
struct hb_sweep_agg {
	int cluster, load, policy;      /* indices */
	int seeds;                      /* seeds in the sweep */
	int ok;                         /* of them, ran */
	double jobs, completed, dropped;/* means over the seeds that ran */
	double jct_mean_h, jct_p99_h, makespan_h, queue_mean_h, gpu_hours, cost_usd, util_mean;
	double jct_all_mean_h, jct_all_p99_h; /* over every job of the set, censored ones included */
	double jct_delta_pct;           /* jct_all_mean_h against the first cluster's of the same load and
					   policy, in %; NAN for it */
	double rho_median;              /* NAN without fairness */
	char reason[512];               /* when ok == 0: the first seed's reason */
};

/* The aggregates in (cluster, load, policy) order; *agg malloc'd. */
int hb_sweep_aggregate(const struct hb_sweep *sw, struct hb_sweep_agg **agg, int *n, struct hb_error *err);

/* One line on the job sets: jobs in every point, those left out and those
 * censored somewhere ("7 jobs in every point; ...").  Returns 2 when some
 * job is left out, else 1 when some is too large for a cluster, else 0. */
int hb_sweep_jobset_line(const struct hb_sweep *sw, char *buf, size_t size);

/* The terminal table: one row per (cluster, load, policy). */
void hb_sweep_print(FILE *out, const struct hb_sweep *sw);

/* summary.json's document; NULL when out of memory. */
cJSON *hb_sweep_json(const struct hb_sweep *sw);
/* `sweep --dry-run --json`: the points that would run, before any does:
 * {"format": "hetbatch-sweep-plan/1", "name", "config", "trace", "points",
 * "clusters" (as summary.json's), "point_rows": [{"id", "cluster",
 * "cluster_gpus", "cluster_usd_per_h", "load", "policy", "seed", "jobs"}]}
 * with summary.json's key names; NULL when out of memory. */
#define HB_SWEEP_PLAN_FORMAT "hetbatch-sweep-plan/1"
cJSON *hb_sweep_plan_json(const struct hb_sweep *sw);

/* Write results.db, sweep.csv and summary.json into dir (created), and
 * with plot_data the gnuplot data sweep-load<L>.dat: all files staged and
 * renamed into place only when every one was written. */
int hb_sweep_write(const struct hb_sweep *sw, const char *dir, int plot_data, struct hb_error *err);

/* Plot data file stem of load index li ("sweep-load2", "sweep-load0.5"). */
void hb_sweep_plot_stem(const struct hb_sweep *sw, int li, char *buf, size_t size);
/* Policies with a block in that load's data file (those with a point that
 * ran), space separated, in block order; returns how many. */
int hb_sweep_plot_names(const struct hb_sweep *sw, int li, char *buf, size_t size);

#endif
