/*
 * synthetic.h: a seeded job-trace generator, read through the same reader
 * as the trace files (jobspec.h).
 *
 * A synthetic job has three parts, each from its own source of randomness
 * (rng.h) so that changing one never shifts the others:
 *   - when it arrives (stream HB_STREAM_ARRIVALS): a Poisson process, a bursty
 *     Poisson process alternating high and low rates (the IBM elastic
 *     paper's arrival patterns, elastic.md 6), the arrival times of another
 *     trace, or Pollux's construction from philly.csv (pollux.md 5.2);
 *   - its size, GPUs and run time (stream HB_STREAM_JOBMIX): rows of
 *     philly.csv drawn at random (empirical), or the parametric fit below;
 *   - its model (stream HB_STREAM_JOBMIX, after the size): Pollux's mix by
 *     GPU-time class (hb_trace_assign_model), a fixed weighted list, or none.
 * Same options and seed, same jobs, on every platform.
 *
 * The load factor scales the arrival rate: a Poisson or bursty rate is
 * multiplied by it, trace arrival times are divided by it (the same jobs,
 * compressed in time), and Pollux's window holds round(jobs_per_window x
 * load) jobs (its 0.5x .. 2x workloads hold 80 .. 320 jobs in one 8 h window).
 */
#ifndef HB_SYNTHETIC_H
#define HB_SYNTHETIC_H

#include <stdint.h>

#include "jobspec.h"

enum hb_synth_arrival {
	HB_SYNTH_POISSON = 0,       /* exponential gaps at rate_per_hour x load */
	HB_SYNTH_BURSTY,            /* Poisson, high rate (rate_per_hour x load) for burst_high_s,
	                               then low (x burst_low_ratio) for burst_low_s, repeating */
	HB_SYNTH_TRACE,             /* arrival times of options.arrivals, divided by load */
	HB_SYNTH_PHILLY_WINDOW,     /* Pollux: philly.csv rows drawn without replacement from an
	                               hour-of-day window pooled over all days; arrival = time
	                               into the window, size = the row's */
};

struct hb_synth_options {
	uint64_t seed;              /* the user's --seed */
	int arrival;                /* enum hb_synth_arrival */
	double rate_per_hour;       /* POISSON, BURSTY: (high) rate at load 1, jobs/hour */
	double load;                /* > 0; scales the arrival rate (above) */
	double window_s;            /* POISSON, BURSTY, TRACE: keep arrivals in [0, window_s);
	                               0 = no limit (then njobs must be set for POISSON/BURSTY) */
	long njobs;                 /* stop after this many jobs, 0 = no limit */
	double burst_high_s;        /* BURSTY: length of a high period, s (elastic.md IV-F: 1 h) */
	double burst_low_s;         /* BURSTY: length of a low period, s (1 h) */
	double burst_low_ratio;     /* BURSTY: low rate / high rate in [0, 1] (elastic.md IV-A: 1/4) */
	struct hb_trace_reader *arrivals; /* TRACE: borrowed reader whose arrivals are used */
	const char *philly_csv;     /* sizes sampled from this philly.csv; NULL = the parametric
	                               fit; PHILLY_WINDOW requires it */
	int pollux_filter;          /* 1: only sizes with duration >= 60 s and gpu_time < 1000
	                               GPU-h, as Pollux's workload.py (pollux.md 5.2) */
	double window_start_h;      /* PHILLY_WINDOW: hour of day the window opens (Pollux: 2) */
	double window_hours;        /* PHILLY_WINDOW: its length, hours (Pollux: 8) */
	long jobs_per_window;       /* PHILLY_WINDOW: jobs at load 1 (Pollux: 160) */
	char mix[512];              /* "pollux" (by GPU-time class), "none" (model left empty), or a
	                               weighted list "cifar10:0.36,ncf:0.36,bert:0.1,..." */
};

/* Defaults: Poisson at 20 jobs/h for 8 h (about 160 jobs, the size and span
 * of Pollux's workloads), load 1, no job limit, bursty periods 1 h / 1 h at
 * ratio 1/4, Pollux's window (hour 2, 8 h, 160 jobs), Pollux filter on, mix
 * "pollux", seed 1, parametric sizes. */
void hb_synth_options_init(struct hb_synth_options *o);

/* The generator as a trace reader (format HB_TRACE_SYNTHETIC); topt (may be
 * NULL) filters its jobs like any trace's.  Close with hb_trace_close. */
int hb_synth_open(const struct hb_synth_options *opt, const struct hb_trace_options *topt,
		  struct hb_trace_reader **out, struct hb_error *err);

/* ---- options as words (synth_spec.c) ----------------------------------- */

/* "poisson", "bursty", "philly-window" (TRACE takes a reader, not a word). */
int hb_synth_arrival_parse(const char *name, int *out, struct hb_error *err);
const char *hb_synth_arrival_name(int arrival);

/* Set one option by name, its range checked (an input error names key and
 * value).  Keys: arrival, rate (jobs/h), hours (arrival window; 0 = none),
 * jobs (0 = no limit), burst-high and burst-low (hours), burst-ratio,
 * sizes ("fit" or a philly.csv path, borrowed), pollux-filter (0/1),
 * window-start and window-hours (hours of day), window-jobs, mix; and the
 * field names of a sweep configuration (rate_per_hour, burst_high_s in
 * seconds, philly_csv, ...: docs/sweep.md). */
int hb_synth_option_set(struct hb_synth_options *o, const char *key, const char *value, struct hb_error *err);
/* The same from one "KEY=VALUE" word (the value may hold commas). */
int hb_synth_option_word(struct hb_synth_options *o, const char *word, struct hb_error *err);

/* ---- the parametric fit of Philly job sizes ---------------------------- */

#define HB_SYNTH_MAX_GPU_CHOICES 32
#define HB_SYNTH_DUR_CLASSES 4

/* GPUs: the empirical distribution of GPU counts.  Run time: log-normal,
 * fitted by maximum likelihood (mean and population standard deviation of
 * ln duration) separately for 1 GPU, 2-4, 5-8 and more than 8 GPUs, since
 * larger jobs run longer (pollux.md 5.2 classifies them by GPU-time). */
struct hb_synth_fit {
	int ngpu;                               /* distinct GPU counts */
	int gpus[HB_SYNTH_MAX_GPU_CHOICES];     /* the counts, ascending */
	double prob[HB_SYNTH_MAX_GPU_CHOICES];  /* probability of each */
	double mu[HB_SYNTH_DUR_CLASSES];        /* mean of ln(duration_s) per GPU class */
	double sigma[HB_SYNTH_DUR_CLASSES];     /* std. dev. of ln(duration_s) per GPU class */
	long n;                                 /* rows fitted */
};

/* GPU class of the fit for a GPU count: 0 (1), 1 (2-4), 2 (5-8), 3 (> 8). */
int hb_synth_gpu_class(int gpus);

/* Fit every row of a philly.csv (rows with 0 GPUs or 0 s are left out). */
int hb_synth_fit_file(const char *philly_csv, struct hb_synth_fit *out, struct hb_error *err);

/* The built-in fit: hb_synth_fit_file on Pollux's philly.csv (82,247 rows),
 * so the generator needs no data file. */
const struct hb_synth_fit *hb_synth_builtin_fit(void);

#endif
