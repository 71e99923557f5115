/*
 * results.h: what a set of simulations leaves behind.
 *
 * A result set is the runs of one command (`hetbatch sim`): one finished
 * struct hb_sim per (model, policy), or the reason the policy could not run
 * the model.  From it this module prints the terminal comparison table and
 * writes, into one directory:
 *
 *   results.db        SQLite: meta, runs, jobs, events, timeseries, summary
 *                     (written in batched transactions to a temporary file
 *                     that is renamed into place; events are integer-coded
 *                     rows of `event`, shown by name in the view `events`)
 *   summary.csv       one row per (run, job): the comparison table
 *   timeseries.csv    every recorded sample of every run (only with csv:
 *                     a text copy of the table, issue 43)
 *   events.csv        every recorded event of every run (only with csv)
 *   summary.json      cluster, seed, knobs and the summary rows
 *   <model>-series.dat, <model>-bars.dat
 *                     gnuplot data (only when asked for plots)
 *
 * Every file is staged beside its destination and only renamed into place
 * once all of them were written, so a failed write leaves the previous
 * results (or nothing) behind.
 *
 * Reproducibility: the files hold no timestamps, no wall-clock times and no
 * absolute paths (a replay file is recorded by its base name), and numbers
 * are printed in fixed formats, so identical inputs and seed give
 * byte-identical files.  Wall-clock times appear on the terminal only,
 * unless hb_results.record_wall asks for them in runs.wall_s.
 *
 * Relative columns ("x JABAS") divide by the reference run of the same
 * model: the "jabas" run when it ran, else the first run that did.
 *
 * Streaming.  A trace replay's events and samples number in the millions;
 * they are written while the runs go (struct hb_results_stream below):
 * rows go into the staged database in batched transactions (and, with
 * csv, into the staged events.csv and timeseries.csv), and nothing of them
 * stays in memory.  The rest (runs, jobs, summaries, utilisation, fairness) is
 * written at the end from the finished simulations, whose jobs are kept
 * compact (sim.h, hb_sim_stream).  A run that stops with an error has its
 * rows taken back out; a command that writes nothing (no run ran, a write
 * failed) removes every staged file and the directory when it made it.
 * Writing from records kept in memory (hb_results_write,
 * hb_trace_results_write) goes through the same stream, so both give the
 * same bytes.
 *
 * What is written (--events, enum hb_events_level):
 *   all      every event and every time-series sample (the default of
 *            single-job runs and of replays of at most
 *            HB_EVENTS_ALL_MAX_JOBS jobs: hb_events_level_default)
 *   summary  the job-level events only: arrival, admit, start, restart,
 *            resize, move, preempt, drop and done (a job's life and every change
 *            of the GPUs it holds); not the per-round and per-epoch ones
 *            (reconfig, epoch, adapt, offer, autoscale, sched, scale,
 *            demote); no time-series sample
 *   none     no event and no sample
 * The events and timeseries tables (and with csv the CSV files) are always
 * there (empty, or the header only, under none); runs.nevents and
 * runs.nsamples count the rows written; meta.events names the level when
 * it is not 'all'.  Metrics
 * (utilisation, JCT, rho) are computed from every record either way.
 */
#ifndef HB_RESULTS_H
#define HB_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "metrics.h"
#include "profdb.h" /* struct hb_profile_use */
#include "sim.h"

#define HB_RESULTS_FORMAT "hetbatch-sim-results/1"  /* meta.format and summary.json "format" */
/* What "byte-identical" promises (meta.reproducibility and summary.json
 * "reproducibility"; README "Reproducibility", issue 16 item 9): glibc's
 * libm picks exp/log/pow code by CPU features (FMA, AVX2), whose last bits
 * differ, and decisions compare such numbers. */
#define HB_RESULTS_REPRO                                                                              \
	"byte-identical for the same inputs, --seed and binary on CPUs that select the same libm code " \
	"paths (glibc chooses exp/log/pow by CPU features such as FMA and AVX2); elsewhere the last "   \
	"bits of libm results, and decisions that compare them, may differ"
#define HB_RESULTS_REF_POLICY "jabas"               /* preferred reference for relative columns */

/* ---- what is written (see "Streaming" above) ------------------------------ */

enum hb_events_level {
	HB_EVENTS_ALL = 0,      /* every event and sample (default) */
	HB_EVENTS_SUMMARY = 1,  /* job-level events, no sample */
	HB_EVENTS_NONE = 2,     /* neither */
};

/* "all", "summary", "none" -> *lv; an input error naming opt otherwise. */
int hb_events_level_parse(const char *s, const char *opt, enum hb_events_level *lv, struct hb_error *err);
const char *hb_events_level_name(enum hb_events_level lv);
/* 1 when an event of this kind is written at level lv. */
int hb_events_level_keeps(enum hb_events_level lv, const char *kind);

/* The level when --events is not given, for a replay of njobs jobs (1 for
 * single-job runs): all up to HB_EVENTS_ALL_MAX_JOBS, summary above.
 * Measured (issue 43) on philly.csv's 82247 jobs under tiresias: every
 * event is 4.5 million rows, 4.3 million of them `epoch`, 10x the replay's
 * time and most of a GB; a study of a whole trace reads jobs, JCTs and
 * utilisation, which every level keeps.  Below the bound a set keeps
 * every row, as sets always did (a 160-job workload: a few MB). */
#define HB_EVENTS_ALL_MAX_JOBS 10000
enum hb_events_level hb_events_level_default(long njobs);

/* What one job achieved, derived from its accounting fields. */
struct hb_job_metrics {
	int done;            /* 1 if the job reached its target */
	double time_s;       /* finish - arrival; when not done, last integrated time - arrival */
	double cost_usd;     /* dollars for the GPUs held */
	double gpu_hours;    /* GPU-seconds held / 3600 */
	double mean_gpus;    /* GPUs held, time-averaged over time_s (restarts included) */
	double iterations;   /* iterations run */
	double mean_gbs;     /* B_G time-averaged over the time spent RUNNING */
	long final_gbs;      /* B_G of the last configuration */
	int restarts;        /* checkpoint-restarts */
	double overhead_s;   /* wall time lost to restarts, reconfiguration, monitoring */
};

void hb_job_metrics(const struct hb_sim_job *job, struct hb_job_metrics *m);

/* One (model, policy) run. */
struct hb_run_result {
	char model[HB_NAME_MAX];     /* model name (catalog key or the user file's "name") */
	char policy[HB_NAME_MAX];    /* policy name */
	int ran;                     /* 1: sim finished; 0: the policy cannot run the model */
	char why[512];               /* when !ran: the error the run stopped with */
	const struct hb_sim *sim;    /* the finished simulation when ran (borrowed), else NULL */
	double wall_s;               /* wall-clock seconds of hb_sim_run (terminal only) */
};

/* The runs of one command, in the order they are reported (model-major). */
struct hb_results {
	char cluster[HB_NAME_MAX];   /* cluster name */
	uint64_t seed;               /* seed shared by every run */
	struct hb_sim_opts opts;     /* what-if knobs every run used (pointers borrowed) */
	struct hb_sim_opts defaults; /* hb_sim_opts_default(), to mark non-default knobs */
	struct hb_run_result *runs;  /* borrowed array */
	int nruns;
	int record_wall;             /* 1: store wall_s in runs.wall_s (files then differ run to run) */
	enum hb_events_level events; /* what of the records is written (default all) */
	int csv;                     /* 1: also events.csv and timeseries.csv (--csv) */
	const struct hb_profile_use *profiles; /* per GPU type x model the runs read (borrowed); NULL: none */
	int nprofiles;
};

/* ---- knobs ------------------------------------------------------------- */

#define HB_RESULTS_MAX_KNOBS (12 + HB_PKNOB_MAX) /* the simulator's own 12 and every policy's (policy_knob.h) */

enum hb_knob_type {
	HB_KNOB_NUM = 0,     /* a number (num) */
	HB_KNOB_DEFAULT = 1, /* the default sentinel: derived from the model/cluster (JSON null) */
	HB_KNOB_BOOL = 2,    /* on/off (num 0 or 1) */
	HB_KNOB_STR = 3,     /* a string (str) */
};

/* One what-if knob as the header line and the files show it. */
struct hb_knob {
	const char *key;             /* JSON key: "interval", "restart_cost_s", ... */
	const char *label;           /* terminal name: "interval", "restart-cost", ... */
	int always;                  /* 1: a command-line knob, shown even at its default */
	int type;                    /* enum hb_knob_type */
	double num;                  /* value for NUM and BOOL */
	const char *str;             /* value for STR (a replay file's base name) */
	char text[128];              /* value for people: "100", "derived", "off" */
	int non_default;             /* 1 when it differs from the default */
};

/* The knobs of r, in a fixed order; returns how many (<= HB_RESULTS_MAX_KNOBS). */
int hb_results_knobs(const struct hb_results *r, struct hb_knob *k);
/* "interval=100 (model), restart-cost=derived, reconfig-cost=5 s*, ..." with
 * '*' after each non-default value.  model (may be NULL) names the model
 * whose runs tell what a default stands for (its own adaptation interval,
 * the simulator's GNS overhead). */
void hb_results_knob_line(const struct hb_results *r, const char *model, char *buf, size_t size);

/* ---- reading the set ---------------------------------------------------- */

/* The reference run for the relative columns of `model` (see above), or
 * NULL when no run of that model ran. */
const struct hb_run_result *hb_results_reference(const struct hb_results *r, const char *model);

/* Models in order of first appearance; returns how many (<= max). */
int hb_results_models(const struct hb_results *r, const char **models, int max);

/* A model name made safe for a file name ([A-Za-z0-9._-], others '_'). */
void hb_results_file_stem(const char *model, char *buf, size_t size);

/* ---- writers ------------------------------------------------------------ */

/* The comparison tables, one per model, with wall times. */
void hb_results_print(FILE *out, const struct hb_results *r);

/* summary.json's document; NULL when out of memory.  The caller
 * cJSON_Delete()s it. */
cJSON *hb_results_summary_json(const struct hb_results *r);

/* Write every file listed at the top into dir (created if missing); with
 * plot_data also the gnuplot data files.  All or nothing, as above.  The
 * runs' records are the ones their simulations kept in memory. */
int hb_results_write(const struct hb_results *r, const char *dir, int plot_data, struct hb_error *err);

/* ---- streaming ------------------------------------------------------------ */

/* Staged outputs of one command, open while its runs go. */
struct hb_results_stream;

/* Create dir (and missing parents, remembered so that an abort removes
 * them), the staged results.db with the schema of a trace replay (trace 1)
 * or of single-job runs, and with csv the staged events.csv and
 * timeseries.csv. */
int hb_results_stream_open(struct hb_results_stream **st, const char *dir, int trace, enum hb_events_level lv,
			   int csv, struct hb_error *err);
/* Run run_id (1-based position in the result set) begins; its rows carry
 * model and policy. */
int hb_results_stream_begin(struct hb_results_stream *st, int run_id, const char *model, const char *policy,
			    struct hb_error *err);
/* One record of the current run (dropped when the level leaves it out). */
int hb_results_stream_event(struct hb_results_stream *st, const struct hb_sim_event_rec *e, struct hb_error *err);
int hb_results_stream_sample(struct hb_results_stream *st, const struct hb_sim_sample *s, struct hb_error *err);
/* The current run ended: ok 0 (it stopped with an error) takes its rows
 * back out, as a run that cannot run writes no record. */
int hb_results_stream_end(struct hb_results_stream *st, int ok, struct hb_error *err);
/* The first write failure of the stream, or NULL (a run that stopped
 * because of it failed the command, not the policy). */
const struct hb_error *hb_results_stream_failure(const struct hb_results_stream *st);
/* Remove everything staged (and the directories open made); frees st. */
void hb_results_stream_abort(struct hb_results_stream *st);
/* Runs on threads (sim --trace -j N).  Runs going at once cannot share
 * one stream, and rows written as they come would land in the order the
 * runs happen to go.  So each run writes into a part of its own: a staged
 * database and CSV files of its own, temporaries inside st's directory,
 * written as its run goes (memory stays bounded as above).  Parts are
 * merged into st in run order, whatever order their runs end in, so the
 * files are the same bytes for any number of threads.
 *
 * hb_results_stream_part opens run run_id's part, to be begun for that run
 * (hb_results_stream_begin, or hb_trace_run_stream) and written from any
 * one thread; it only reads st, so parts may be opened while another part
 * is merged.
 * hb_results_stream_merge appends a part's rows to st (ok 0: a run that
 * stopped with an error, whose rows are dropped) and frees the part,
 * merged or not; the caller merges parts one at a time, in run order.  A
 * part's write failure fails st. */
int hb_results_stream_part(struct hb_results_stream *st, int run_id, struct hb_results_stream **part,
			   struct hb_error *err);
int hb_results_stream_merge(struct hb_results_stream *st, struct hb_results_stream *part, int ok,
			    struct hb_error *err);
/* Write the rest of the single-job files from r and put every file in
 * place; frees st, success or not (on failure nothing is left). */
int hb_results_commit(const struct hb_results *r, struct hb_results_stream *st, int plot_data, struct hb_error *err);

/* ---- trace replay: one simulation per policy on a shared cluster ---------
 *
 * `hetbatch sim --trace` runs every policy on the same jobs (replay.h) and
 * compares them with the cluster metrics of metrics.h.  Its files, in one
 * directory, all or nothing and byte-identical for one input and seed as
 * above (scheduler wall times stay on the terminal unless record_wall):
 *
 *   results.db          meta (mode 'trace', the trace, load, filters),
 *                       runs (model 'trace'), jobs, events, timeseries as in
 *                       the single-job mode, plus cluster_summary (a row per
 *                       policy), cluster_jobs (queueing, preemptions and
 *                       fairness per job), model_jct (mean JCT by model) and
 *                       utilisation (the binned series)
 *   cluster_summary.csv, jobs.csv, by_model.csv, utilisation.csv,
 *   summary.json; with csv also events.csv, timeseries.csv
 *   trace-jct.dat, trace-util.dat, trace-rho.dat
 *                       gnuplot data (only when asked for plots): one block
 *                       per policy, see hb_trace_results_plot_names; the
 *                       utilisation's time is in hours since window_s and
 *                       its GPUs held are also split by GPU type
 */

#define HB_TRACE_UTIL_POINTS 100   /* bins of the utilisation series */
#define HB_TRACE_RUN_MODEL "trace" /* runs.model of a trace replay's runs */

/* One policy's replay. */
struct hb_trace_run {
	char policy[HB_NAME_MAX];       /* policy name */
	int ran;                        /* 1: the replay finished */
	char why[512];                  /* when !ran: why not (no shared arbiter, the error it stopped with) */
	const struct hb_sim *sim;       /* the finished simulation when ran (borrowed), else NULL */
	struct hb_cluster_summary sum;  /* hb_trace_run_metrics fills the rest */
	struct hb_util_series util;     /* owned */
	struct hb_rho_job *rho;         /* sim->njobs entries, owned; NULL without fairness */
	struct hb_rho_stats rho_stats;
	struct hb_model_jct *by_model;  /* owned */
	int nby_model;
	double wall_s;                  /* wall-clock s of the replay (terminal only) */
	double cpu_s;                   /* CPU s of the replay (terminal only) */
	/* Streaming (hb_trace_run_stream): records go to these, not to memory. */
	int streamed;                   /* 1: the replay's records were streamed */
	struct hb_gpu_acc acc;          /* GPUs held, for the utilisation series */
	struct hb_results_stream *out;  /* borrowed; NULL without files */
	struct hb_sim_sink sink;        /* handed to hb_sim_stream; ctx is this run */
};

/* Stream the records of sim, the replay of run run_id (1-based), into the
 * run's utilisation accumulator and out (may be NULL: no files), before
 * hb_sim_run.  ru must not move until the run is over. */
int hb_trace_run_stream(struct hb_trace_run *ru, struct hb_sim *sim, struct hb_results_stream *out, int run_id,
			struct hb_error *err);

/* Metrics of a run that ran: utilisation, fairness (when asked; a bar on a
 * terminal when show_progress), per-model JCT and the summary. */
int hb_trace_run_metrics(struct hb_trace_run *ru, int fairness, int show_progress, struct hb_error *err);
void hb_trace_run_free(struct hb_trace_run *ru);

/* The replays of one command, in table order. */
struct hb_trace_results {
	char cluster[HB_NAME_MAX];      /* cluster name */
	int cluster_gpus;               /* its GPUs */
	uint64_t seed;                  /* seed of every run and of the model draws */
	char trace[256];                /* base name of the trace file (no directory: reproducible) */
	char format[32];                /* trace format name */
	char filters[512];              /* reader filters in words, "none" */
	double load;                    /* arrival scaling: arrivals / load */
	double window_s;                /* simulated time of the arrival window's start (--from / load;
					   0 without --from): the time axis of trace-util.dat starts there */
	long read;                      /* jobs the reader returned */
	long oversize;                  /* of them, skipped as larger than the cluster */
	long assigned;                  /* of them, models drawn (traces without a model) */
	struct hb_sim_opts opts;        /* knobs every run used (pointers borrowed) */
	struct hb_sim_opts defaults;    /* hb_sim_opts_default(), to mark non-default knobs */
	struct hb_trace_run *runs;      /* borrowed array */
	int nruns;
	int fairness;                   /* 1: rho was computed */
	int record_wall;                /* 1: store decision times in cluster_summary.sched_ms_per_round */
	enum hb_events_level events;    /* what of the records is written (hb_events_level_default) */
	int csv;                        /* 1: also events.csv and timeseries.csv (--csv) */
	const struct hb_profile_use *profiles; /* per GPU type x model the runs read (borrowed); NULL: none */
	int nprofiles;
};

/* The comparison table (one row per policy), the per-model JCT table,
 * with decision and wall times. */
void hb_trace_results_print(FILE *out, const struct hb_trace_results *r);

/* summary.json's document; NULL when out of memory. */
cJSON *hb_trace_results_json(const struct hb_trace_results *r);

/* The "profiles" array of summary.json (one object per hb_profile_use: gpu,
 * model, source, file, run_id, rows, measured_rows, digest as 16 hex
 * digits); NULL when out of memory. */
cJSON *hb_results_profiles_json(const struct hb_profile_use *u, int n);
/* The line above a table naming the profiles when any is not the built-in
 * analytic one ("profiles: t4 x cifar10 import:pollux (profiles.db, run 3),
 * ..."), or nothing; wrapped at the pairs. */
void hb_results_print_profiles(FILE *out, const struct hb_profile_use *u, int n);

/* Policies with a block in trace-<what>.dat ("jct", "util" or "rho"), space
 * separated into buf, in block order; returns how many. */
int hb_trace_results_plot_names(const struct hb_trace_results *r, const char *what, char *buf, size_t size);

/* The cluster's GPU types in trace-util.dat's per-type columns (catalog
 * names, a '+' after a last slot that also holds the types past it), space
 * separated into buf; returns how many (0 without a utilisation series). */
int hb_trace_results_util_types(const struct hb_trace_results *r, char *buf, size_t size);

/* Write the files listed above into dir (created); all or nothing.  For
 * runs whose records were kept in memory (not streamed). */
int hb_trace_results_write(const struct hb_trace_results *r, const char *dir, int plot_data, struct hb_error *err);
/* The streamed counterpart: write the rest of the files from r into the
 * stream its runs were streamed to, and put every file in place; frees st,
 * success or not (on failure nothing is left). */
int hb_trace_results_commit(const struct hb_trace_results *r, struct hb_results_stream *st, int plot_data,
			    struct hb_error *err);

#endif
