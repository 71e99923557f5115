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
 *   - or the IBM elastic paper's whole workload (HB_SYNTH_IBM, below): its
 *     job categories, batch settings and arrival patterns;
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
	HB_SYNTH_IBM,               /* the IBM elastic paper's workload (below): categories of
	                               Table I, a batch setting, pattern high/low/bursty */
};

/*
 * The IBM elastic paper's workload generator (Saxena et al., MASCOTS 2020,
 * IV-A, IV-G, IV-I):
 *   - categories (Table I): each job's category is a uniform draw from the
 *     chosen ones (IV-G, IV-I: all four; IV-E, IV-F: one);
 *   - batch setting (IV-A): Random-BS, uniform over the category's range (the
 *     multiples of its per-GPU granularity, the catalog model's minB_L, so
 *     that the total splits into batches the perf model profiles), Max-BS or
 *     Min-BS; the job asks for it (jobspec batch), which the IV-B baseline
 *     (policy elastic-fixed) runs and the elastic scaler ignores;
 *   - arrivals: Poisson at the high rate k_max lambda, the low rate
 *     k_max lambda x burst_low_ratio (IV-A: /4), or bursty, alternating them
 *     (burst_high_s, burst_low_s: IV-F 1 h / 1 h; IV-G, IV-I 2 h / 2 h);
 *     lambda = 1 / E[L] over the chosen categories, L the single-GPU lengths
 *     of IV-G/IV-I (16, 21, 41, 27 min), read as 1/E[L] (IV-A: "reciprocal
 *     of expected completion time") so that the high rate offers k_max GPUs
 *     of single-GPU work;
 *   - job lengths: IV-G/IV-I's per-category lengths by default; with
 *     length set (IV-A's micro-benchmarks: "all jobs have the same length
 *     ... about half an hour to execute on a single GPU with the maximum
 *     feasible batch size"), every job trains length / length_min times its
 *     model's epochs (jobspec epochs), so that it runs `length` minutes alone
 *     on one P100 at c_j, and lambda = 1 / length;
 *   - k_max: the paper never gives it for its experiments, and with k_max =
 *     10 (III-C2's complexity example) the offered load is 10 GPUs, which cannot
 *     make the elastic scaler drop anything on 40 GPUs, against Table III's
 *     10-14 %.  So it is calibrated: HB_SYNTH_IBM_KMAX_40 and
 *     HB_SYNTH_IBM_KMAX_400 below are the k_max at which the elastic scaler
 *     drops what Table III and Table IV report (the simulator columns: 10.09 %
 *     on 40 GPUs, 1.23 % on 400), on the workloads of those tables.  Only the
 *     elastic scaler's drop ratio was fitted; the baselines, JCTs and the
 *     relative gains are then predictions (scripts/repro/ibm-elastic).
 * Every job asks for 1 GPU (the scaler decides; other policies run it on
 * one) and carries its nominal single-GPU length as duration_s (a hint: the
 * simulator's run time comes from the catalog model, whose epochs were sized
 * to these lengths on a P100).  Draws per job: the arrival
 * (HB_STREAM_ARRIVALS), then the category (HB_STREAM_JOBMIX, one draw when
 * more than one is chosen), then a Random-BS batch (HB_STREAM_JOBMIX, one
 * draw when the range is not a single value).
 */
enum hb_synth_ibm_pattern {
	HB_SYNTH_IBM_HIGH = 0,      /* Poisson at k_max lambda */
	HB_SYNTH_IBM_LOW,           /* Poisson at k_max lambda x burst_low_ratio */
	HB_SYNTH_IBM_BURSTY,        /* high for burst_high_s, low for burst_low_s, repeating */
};

enum hb_synth_ibm_batch {
	HB_SYNTH_IBM_RANDOM_BS = 0, /* uniform over the category's range (IV-D on: every experiment) */
	HB_SYNTH_IBM_MAX_BS,        /* the category's maximum */
	HB_SYNTH_IBM_MIN_BS,        /* the category's minimum */
};

/* One row of Table I with the lengths of IV-G/IV-I. */
struct hb_synth_ibm_category {
	int id;                     /* 1..4 */
	const char *model;          /* catalog model */
	long b_min, b_max;          /* total batch range (Table I) */
	int unit;                   /* Random-BS granularity: the catalog model's minB_L */
	double length_min;          /* single-GPU length, minutes (IV-G, IV-I) */
	double epochs;              /* the catalog model's target_epochs: the epochs that one P100
	                               runs in length_min at the model's per-GPU limit c_j
	                               (tests/traces checks both against the catalog and the
	                               simulator) */
};

#define HB_SYNTH_IBM_NCAT 4
#define HB_SYNTH_IBM_ALL_CATEGORIES 0xfu
/* Calibrated k_max (above): the integer k_max whose elastic drop ratio is
 * nearest the simulator column of Table III (40 GPUs, 720 min bursty 2 h /
 * 2 h: 10.09 %) and Table IV (400 GPUs, 480 min bursty 2 h / 2 h: 1.23 %),
 * all categories, Random-BS, seed 1, on ibm-p100 and ibm-p100-400 under
 * `sim --policy elastic --elastic-drop --progress samples --restart-cost 0`
 * (IBM's simulator charges no restart, IV-H), Δ 600 s.  Measured while
 * fitting (issue 38, second round: the testbed's all-reduce derived from
 * Table II and IV-D, per-GPU limits 32/16/104, single-GPU lengths
 * 16/21/41/27 min): 40 GPUs, k_max 35 / 37 / 38 / 39: 6.86 / 9.16 / 10.06 /
 * 11.19 %; 400 GPUs, k_max 337 / 338 / 339 / 340 / 345: 1.08 / 1.31 / 1.61 /
 * 1.71 / 3.12 %.  The offered load is then 0.95 and 0.85 GPUs of
 * single-GPU work per GPU at the high rate.  IV-G and IV-I call their rates
 * "very high" and "very low" without defining them, so these are not the
 * k_max of IV-A's "high" rate: the micro-benchmarks of Fig. 5, 6 and 8 use
 * HB_SYNTH_IBM_KMAX_MICRO (scripts/repro/ibm-elastic passes it as kmax). */
#define HB_SYNTH_IBM_KMAX_40 38.0
#define HB_SYNTH_IBM_KMAX_400 338.0
/* k_max of IV-A's high rate in the single-category micro-benchmarks (30-min
 * jobs, length = 30).  The paper gives k_max only in III-C2's complexity
 * example (10); with it, category 1 of Fig. 5 gains +4 % (seeds 1-5
 * pooled) against the published +82 %: with the testbed's all-reduce as
 * Table II and IV-D give it, a Random-BS baseline job of category 1 uses
 * about twice the GPU time of a one-GPU job, so 10 GPUs of offered work
 * fit on 40 GPUs and the baseline drops almost nothing.  So k_max is
 * fitted, to ONE number, Fig. 5 category 1 (the category whose per-GPU
 * limit the paper pins: c_1 = 32, Table II, IV-D): k_max 26 / 28 / 29 / 30 /
 * 37 give +69 / +76 / +85 / +89 / +103 % (seeds 1-5 pooled, 40 GPUs,
 * Δ 600 s, drop mode), so 29.  That check is a fit; categories 2-4 of
 * Fig. 5 and Figs. 6 and 8 are predictions.  29 / 30 min is 58 jobs/h,
 * below the "very high" rate of Table III (38 / 26.25 min = 87 jobs/h),
 * as the paper's names order them. */
#define HB_SYNTH_IBM_KMAX_MICRO 29.0

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
	int rate_given, mix_given;  /* 1 once set by name (hb_synth_option_set): IBM derives both */
	/* HB_SYNTH_IBM (above). */
	int ibm_pattern;            /* enum hb_synth_ibm_pattern (default bursty) */
	unsigned ibm_categories;    /* bit i: category i + 1 is drawn (default all four) */
	int ibm_batch;              /* enum hb_synth_ibm_batch (default Random-BS) */
	double ibm_kmax;            /* k_max of the rates (default HB_SYNTH_IBM_KMAX_40) */
	double ibm_length_min;      /* > 0: every job's single-GPU length, minutes (IV-A: 30);
	                               0 (default): each category's own (IV-G, IV-I) */
};

/* Defaults: Poisson at 20 jobs/h for 8 h (about 160 jobs, the size and span
 * of Pollux's workloads), load 1, no job limit, bursty periods 1 h / 1 h at
 * ratio 1/4, Pollux's window (hour 2, 8 h, 160 jobs), Pollux filter on, mix
 * "pollux", seed 1, parametric sizes; IBM: bursty, all categories,
 * Random-BS, k_max HB_SYNTH_IBM_KMAX_40. */
void hb_synth_options_init(struct hb_synth_options *o);

/* Table I: HB_SYNTH_IBM_NCAT rows, category i + 1 at index i. */
const struct hb_synth_ibm_category *hb_synth_ibm_categories(void);
/* The high arrival rate k_max lambda of o's categories, jobs/hour at load 1
 * (lambda = 1 / o->ibm_length_min when that is set). */
double hb_synth_ibm_high_rate(const struct hb_synth_options *o);

/* The most jobs one generated trace may hold: ten times Philly's full
 * trace.  The simulator keeps every job it has read (about 2.7 KiB each
 * with its state, measured: 1.65 GB RSS at 619k jobs), so the limit is
 * about 2.7 GB; more is refused before a job is drawn, not after the
 * machine runs out of memory (rate 1e6 x 1e5 hours grew to 5.8 GB).  A
 * sweep runs several points at once: this bounds each. */
#define HB_SYNTH_MAX_JOBS 1000000L

/* The most jobs o can produce: rate x load x hours for a Poisson, bursty or
 * IBM stream (the high rate, an upper bound on the mean), capped by njobs;
 * jobs_per_window x load for Pollux's window; njobs alone when there is no
 * window; 0 for trace-driven arrivals (the trace sets the count).  A
 * double, so 1e6 jobs/h for 1e5 h does not overflow. */
double hb_synth_expected_jobs(const struct hb_synth_options *o);

/* An input error naming the options when hb_synth_expected_jobs(o) exceeds
 * HB_SYNTH_MAX_JOBS; hb_synth_open checks it, and a sweep configuration
 * checks it once per load while it is read. */
int hb_synth_check_size(const struct hb_synth_options *o, struct hb_error *err);

/* The generator as a trace reader (format HB_TRACE_SYNTHETIC); topt (may be
 * NULL) filters its jobs like any trace's.  Close with hb_trace_close. */
int hb_synth_open(const struct hb_synth_options *opt, const struct hb_trace_options *topt,
		  struct hb_trace_reader **out, struct hb_error *err);

/* ---- options as words (synth_spec.c) ----------------------------------- */

/* "poisson", "bursty", "philly-window", "ibm" (TRACE takes a reader, not a word). */
int hb_synth_arrival_parse(const char *name, int *out, struct hb_error *err);
const char *hb_synth_arrival_name(int arrival);

/* Set one option by name, its range checked (an input error names key and
 * value).  Keys: arrival, rate (jobs/h), hours (arrival window; 0 = none),
 * jobs (0 = no limit), burst-high and burst-low (hours), burst-ratio,
 * sizes ("fit" or a philly.csv path, borrowed), pollux-filter (0/1),
 * window-start and window-hours (hours of day), window-jobs, mix; for ibm:
 * pattern (high, low, bursty), categories ("1,3": a list of 1..4), batch
 * (random, max, min), kmax (> 0), length (minutes, >= 0); and the
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
