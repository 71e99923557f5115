/*
 * metrics.h: what a shared-cluster simulation achieved (trace replay).
 *
 * Pure functions over a finished struct hb_sim: they read its jobs and its
 * records (samples and events) and never change it.  The one exception in
 * spirit is finish-time fairness, which needs a second, isolated simulation
 * of every job (pollux.md 7.3, Fig. 7); those run on fresh struct hb_sim of
 * their own, built from the finished one's catalog, cluster, profiles and
 * options.
 *
 * Definitions (every time in seconds of simulated time):
 *   JCT            finish - arrival (submission to completion), completed jobs
 *   queueing delay start_s - arrival (until the first GPU), started jobs
 *   makespan       last finish - first arrival
 *   GPUs held      the GPUs a job is billed for: its configuration's GPUs
 *                  while RUNNING or RESTARTING, none while pending,
 *                  suspended or done (sim.c's advance(); the integral of
 *                  it is the job's gpu_s)
 *   utilisation    sum of GPUs held / cluster GPUs, over the makespan window
 *   rho            JCT on the shared cluster / JCT alone on a 1/J share
 *                  (hb_metrics_rho below says exactly which share)
 *
 * Distributions report mean, median, p99 and max; quantiles are GSL's
 * gsl_stats_quantile_from_sorted_data, i.e. linear interpolation between
 * order statistics (numpy's default), so p99 of 1..100 is 99.01.
 */
#ifndef HB_METRICS_H
#define HB_METRICS_H

#include <stddef.h>

#include "error.h"
#include "sim.h"

/* ---- distributions --------------------------------------------------------- */

struct hb_dist {
	size_t n;            /* values summarised (NaNs are left out) */
	double mean;         /* NAN when n == 0, likewise below */
	double median;
	double p99;          /* 0.99 quantile, linear interpolation */
	double max;
};

/* Summarise x[0..n) (not changed; NaNs skipped). */
int hb_metrics_dist(const double *x, size_t n, struct hb_dist *d, struct hb_error *err);

/* ---- GPUs held over time ------------------------------------------------------ */

/* One stretch during which a job held a constant number of GPUs. */
struct hb_gpu_interval {
	double t0_s, t1_s;   /* [t0, t1), t1 > t0 */
	int job;             /* index in sim->jobs */
	int gpus;            /* > 0 */
	unsigned short type_gpus[HB_SIM_TYPE_SLOTS]; /* of gpus, those of each GPU type slot (sim.h) */
};

/* The stretches of every job, job by job in time order, rebuilt from the
 * records: a sample says how many GPUs the job's configuration uses from
 * its time on; a "preempt" or "done" event ends the holding; at one instant
 * the last of the job's start/restart/reconfig/preempt/done events decides
 * (the events array keeps the order the simulator saw).  *iv is malloc'd
 * (NULL when *n == 0); the caller free()s it. */
int hb_metrics_gpu_intervals(const struct hb_sim *sim, struct hb_gpu_interval **iv, size_t *n,
			     struct hb_error *err);

/* The same stretches built while the run goes, from its records as the
 * simulator makes them (struct hb_sim_sink), so that a streamed run keeps
 * none: per job only the GPUs it holds and the instant being collected
 * (about 40 bytes), plus the stretches themselves.  Fed every record of a
 * run in the order they were made, hb_gpu_acc_finish gives exactly what
 * hb_metrics_gpu_intervals gives for the records kept in memory, in the
 * same order (job by job), so that sums over them round identically. */
struct hb_gpu_acc_job;

struct hb_gpu_acc {
	int njobs;
	struct hb_gpu_acc_job *job;   /* njobs entries, owned */
	struct hb_gpu_interval *iv;   /* closed stretches, in closing order, owned */
	size_t n, cap;
};

int hb_gpu_acc_init(struct hb_gpu_acc *a, int njobs, struct hb_error *err);
/* One record; -1 only when out of memory. */
int hb_gpu_acc_event(struct hb_gpu_acc *a, const struct hb_sim_event_rec *e, struct hb_error *err);
int hb_gpu_acc_sample(struct hb_gpu_acc *a, const struct hb_sim_sample *s, struct hb_error *err);
/* Close every job's last stretch at its end in the finished sim (finish, or
 * last integrated time) and hand the stretches over job by job: *iv is
 * malloc'd (NULL when *n == 0), the accumulator is emptied. */
int hb_gpu_acc_finish(struct hb_gpu_acc *a, const struct hb_sim *sim, struct hb_gpu_interval **iv, size_t *n,
		      struct hb_error *err);
void hb_gpu_acc_free(struct hb_gpu_acc *a);

/* Utilisation at regular intervals. */
struct hb_util_series {
	double t0_s, t1_s;   /* window: first arrival .. last finish */
	int cluster_gpus;    /* denominator */
	int npoints;         /* bins (0 when the window is empty) */
	double *t_s;         /* start of bin k: t0 + k (t1 - t0) / npoints, owned */
	double *util;        /* mean GPUs held / cluster GPUs over bin k (an exact integral), owned */
	double *held;        /* npoints x HB_SIM_TYPE_SLOTS: mean GPUs of type slot s held over bin k
				at held[k * HB_SIM_TYPE_SLOTS + s] (they sum to util[k] x cluster_gpus), owned */
	int ntypes;          /* type slots in use (hb_cluster_type_slots); 0 when not known */
	int type_gpu[HB_SIM_TYPE_SLOTS]; /* catalog GPU of each slot in use */
	double mean;         /* time-average over the whole window (NAN when it is empty) */
	double gpu_s;        /* integral of GPUs held over the window */
};

/* Bin the stretches iv[0..n) into npoints equal bins of [t0, t1] (parts of
 * stretches outside are ignored). */
int hb_metrics_util_from_intervals(const struct hb_gpu_interval *iv, size_t n, int cluster_gpus, double t0,
				   double t1, int npoints, struct hb_util_series *u, struct hb_error *err);

/* The utilisation series of a finished simulation over its makespan window
 * (first arrival to last finish; jobs that did not finish count up to their
 * last integrated time). */
int hb_metrics_utilisation(const struct hb_sim *sim, int npoints, struct hb_util_series *u, struct hb_error *err);
/* The same from stretches already built (hb_gpu_acc_finish) instead of the
 * sim's records. */
int hb_metrics_utilisation_iv(const struct hb_sim *sim, const struct hb_gpu_interval *iv, size_t n, int npoints,
			      struct hb_util_series *u, struct hb_error *err);

void hb_util_series_free(struct hb_util_series *u);

/* ---- finish-time fairness ------------------------------------------------------- */

/*
 * Pollux Fig. 7 (pollux.md 7.3): rho = JCT_shared / JCT_isolated, where the
 * isolated run has "an exclusive 1/J share of the cluster"; pollux.md A13
 * leaves J open.  We take, per job, the time-average of the number of active
 * jobs over the job's own lifetime:
 *
 *   J_avg(i) = (1 / JCT_i) * integral over [arrival_i, finish_i] of
 *              #{ j : arrival_j <= t < finish_j }          (job i included)
 *
 * ("active" = submitted and not finished, running or pending, the J of
 * Pollux's SPEEDUP, pollux.md 3.2), so J_avg >= 1.  The share is
 * n_i = max(1, round(G / J_avg(i))) GPUs of the G in the cluster, and
 * JCT_isolated is the job simulated alone (arrival 0, same model, agent,
 * batch request, options and seed) under the FIFO arbiter with a request of
 * n_i GPUs, i.e. gang-placed on the fewest nodes of the empty cluster (the
 * nodes with the most GPUs first, ties to the lower index).  Jobs that did
 * not finish get no rho.
 */
struct hb_rho_job {
	double javg;         /* J_avg(i); NAN for a job that did not finish */
	int ref_gpus;        /* n_i; 0 when not computed */
	double ref_jct_s;    /* JCT alone on n_i GPUs; NAN when not computed or the run failed */
	double rho;          /* JCT / ref_jct_s; NAN likewise */
};

/* J_avg of n jobs from their arrival and finish times (finish NAN or
 * <= arrival: not finished, javg NAN), in O(n log n). */
int hb_metrics_javg(const double *arrival, const double *finish, size_t n, double *javg, struct hb_error *err);

struct hb_rho_stats {
	int ref_runs;        /* isolated simulations run (identical ones are shared) */
	int failed;          /* jobs whose isolated run failed (rho NAN) */
	char why[512];       /* the first such failure */
};

/* rho of every job of a finished simulation into out[0..sim->njobs).  A
 * failing isolated run leaves that job's rho NAN and is counted in st (may
 * be NULL); only out-of-memory fails the call.  show_progress draws a bar
 * on a terminal. */
int hb_metrics_rho(const struct hb_sim *sim, int show_progress, struct hb_rho_job *out, struct hb_rho_stats *st,
		   struct hb_error *err);

/* ---- the summary of one policy ----------------------------------------------------- */

struct hb_cluster_summary {
	int njobs;                  /* jobs in the simulation */
	int completed;              /* jobs that finished */
	int unfinished;             /* njobs - completed */
	struct hb_dist jct_s;       /* over completed jobs */
	struct hb_dist queue_s;     /* over started jobs */
	double first_arrival_s;     /* NAN without jobs */
	double last_finish_s;       /* NAN when none finished */
	double makespan_s;          /* last finish - first arrival; NAN likewise */
	double gpu_hours;           /* sum of jobs' GPU-seconds / 3600 */
	double cost_usd;            /* sum of jobs' dollars */
	double util_mean;           /* hb_util_series.mean (NAN without a series) */
	double restarts_per_job;    /* checkpoint-restarts, mean over jobs */
	double preemptions_per_job; /* suspensions by the arbiter, mean over jobs */
	struct hb_dist rho;         /* over jobs with a rho (n = 0 when not computed) */
	long sched_rounds;          /* arbiter rounds (sim->sched_rounds) */
	double sched_ms_per_round;  /* wall ms per round (NAN without rounds); terminal only */
	int capacity;               /* 1 when a capacity series (--capacity) ran; the three below count it */
	long capacity_withdrawn;    /* GPUs withdrawn in all */
	long capacity_preemptions;  /* jobs preempted by withdrawals (a gang job's run fails and is requeued) */
	long capacity_shrinks;      /* elastic jobs scaled in by withdrawals that kept running */
};

/* rho and u may be NULL. */
void hb_cluster_summary(const struct hb_sim *sim, const struct hb_rho_job *rho, const struct hb_util_series *u,
			struct hb_cluster_summary *s);

/* Mean JCT by model. */
struct hb_model_jct {
	const char *model;          /* borrowed from the catalog */
	int njobs;                  /* jobs of this model */
	int completed;
	double jct_mean_s;          /* over completed jobs; NAN when none */
	double jct_median_s;
};

/* One row per model present, by model name; *rows malloc'd, caller frees. */
int hb_metrics_by_model(const struct hb_sim *sim, struct hb_model_jct **rows, int *n, struct hb_error *err);

#endif
