/*
 * jobspec.h: one job-spec stream from every trace format.
 *
 * The cluster simulator replays jobs; where they come from (Microsoft's
 * Philly log, Pollux's derived philly.csv or its workload CSVs, hetbatch's
 * own job-spec files, the synthetic generator in synthetic.h) is hidden
 * behind one reader:
 *
 *   struct hb_trace_options opt;
 *   struct hb_trace_reader *r;
 *   struct hb_jobspec job;
 *   hb_trace_options_init(&opt);  opt.min_gpus = 2;
 *   hb_trace_open(path, HB_TRACE_AUTO, &opt, &r, err);
 *   while ((rc = hb_trace_next(r, &job, err)) == 1) { ... }
 *   hb_trace_close(r);
 *
 * Readers stream: memory is bounded by the largest single record (one CSV
 * line, one JSON array element), never by the file, so the 117,325-job
 * Philly log reads in a few kilobytes.  Jobs come in file order; use
 * hb_trace_read_all() for an array sorted by arrival.
 *
 * Records a simulator cannot replay (no attempts, still running, ...) and
 * records the options filter out are skipped and counted by reason in
 * struct hb_trace_stats; a malformed record is an error (HB_EINPUT) naming
 * "FILE:LINE: field 'F': value 'V': reason" (CSV), or "FILE:LINE: byte N:
 * element K: field 'F': ..." (JSON), and ends the stream.
 *
 * Formats (docs/jobspec.md describes hetbatch's own two):
 *   philly-log       Microsoft's cluster_job_log (philly_log.c)
 *   philly-csv       Pollux's derived philly.csv (philly_csv.c)
 *   pollux-workload  Pollux's workload-N.csv (pollux_workload.c)
 *   easyscale-workload  EasyScale's artifact workloads (easyscale_workload.c)
 *   alibaba-openb    Alibaba's 2023 GPU trace pod list (alibaba_openb.c)
 *   jobspec-csv      name,arrival_s,model,gpus[,batch,duration_s,...] (jobspec_csv.c)
 *   jobspec-json     {"jobs": [{"name": ..., ...}]} (jobspec_json.c)
 *   synthetic        the seeded generator (synthetic.h), never a file
 */
#ifndef HB_JOBSPEC_H
#define HB_JOBSPEC_H

#include <stddef.h>

#include "error.h"

#define HB_JOB_NAME_MAX 64
#define HB_JOB_MODEL_MAX 64
#define HB_JOB_STATUS_MAX 16
#define HB_JOB_USER_MAX 32
#define HB_JOB_VC_MAX 32

/* One JSON element (a Philly job, a job-spec object) may not exceed this:
 * it bounds the reader's memory on a corrupt file with an unclosed brace. */
#define HB_TRACE_MAX_ELEMENT (16L << 20)

struct hb_jobspec {
	char name[HB_JOB_NAME_MAX];     /* job id: Philly "jobid", workload "name", or made up
	                                   ("philly-<line>", "synth-<k>") where the format has none */
	double arrival_s;               /* submission time, seconds after the trace origin
	                                   (hb_trace_options.origin); >= 0 except with HB_ORIGIN_FIRST/FIXED */
	char model[HB_JOB_MODEL_MAX];   /* catalog model name; "" when the trace does not say
	                                   (Philly): see hb_trace_assign_model() */
	int gpus;                       /* requested GPUs (>= 1) */
	long batch;                     /* requested global batch, 0 = the model's default (M0) */
	double duration_s;              /* run time the trace recorded, 0 if none: a hint (the
	                                   simulator derives run time from the model and its progress) */
	double gpu_time_s;              /* GPU-seconds the trace recorded (gpus x duration unless the
	                                   trace says otherwise), 0 if none; picks Pollux's size class */
	char status[HB_JOB_STATUS_MAX]; /* Philly final status: "Pass", "Killed", "Failed"; else "" */
	char user[HB_JOB_USER_MAX];     /* user hash (Philly), else "" */
	char vc[HB_JOB_VC_MAX];         /* virtual cluster hash (Philly "vc", philly.csv "cluster"), else "" */
	int attempts;                   /* scheduling attempts in the Philly log, else 0 */
	double wait_s;                  /* Philly: first attempt's start - submission (queueing the
	                                   trace saw), -1 when unknown or not a Philly log */
	long record;                    /* where it came from: 1-based CSV line, or 1-based JSON
	                                   element index; job counter for synthetic jobs */
	/* EasyScale's job attributes (notes/easyscale.md §3; docs/jobspec.md). */
	char gpu_type[HB_JOB_MODEL_MAX]; /* preferred catalog GPU type, "" = none (the policy picks) */
	char app[HB_JOB_MODEL_MAX];     /* the trace's own application name, which `model` runs
	                                   (easyscale-workload: "vgg19" as resnet50, "bert" as
	                                   bert); "" for formats without one */
	int d2;                         /* enum hb_jobspec_d2: may the job mix GPU types */
	double epochs;                  /* passes over the model's dataset to train, 0 = the model's
	                                   target_epochs (fractions scale the dataset: 1 % of it
	                                   for 100 epochs is 1) */
};

/* EasyScale D2 eligibility of a job spec (zero, the default, leaves it to
 * the model: hetbatch's EasyScale agent lets every non-CNN model mix). */
enum hb_jobspec_d2 {
	HB_D2_MODEL = 0,            /* not given */
	HB_D2_YES = 1,              /* D2-eligible: its EST plans may mix GPU types */
	HB_D2_NO = 2,               /* not eligible: one GPU type */
};

enum hb_trace_format {
	HB_TRACE_AUTO = 0,          /* detect from content, then extension (hb_trace_detect) */
	HB_TRACE_PHILLY_LOG,        /* cluster_job_log JSON array */
	HB_TRACE_PHILLY_CSV,        /* timestamp,duration,num_gpus,gpu_time,cluster */
	HB_TRACE_POLLUX_WORKLOAD,   /* name,time,application,num_replicas,batch_size */
	HB_TRACE_JOBSPEC_CSV,       /* docs/jobspec.md */
	HB_TRACE_JOBSPEC_JSON,      /* docs/jobspec.md */
	HB_TRACE_SYNTHETIC,         /* synthetic.h; not a file format */
	HB_TRACE_EASYSCALE_WORKLOAD, /* name,time,application,max_parallelism,batch_size,epochs,... */
	HB_TRACE_ALIBABA_OPENB,     /* Alibaba 2023 pod list: name,...,num_gpu,gpu_milli,...,scheduled_time */
	HB_TRACE_NFORMATS
};

/* Where arrival_s = 0 lies, for formats with wall-clock times (philly-log,
 * philly-csv).  Other formats carry relative seconds and ignore this. */
enum hb_trace_origin {
	HB_ORIGIN_EARLIEST = 0,     /* earliest submission in the file (all records, before any
	                               filter): a first pass over the file finds it, so every
	                               arrival is >= 0 even though philly.csv is not sorted */
	HB_ORIGIN_FIRST,            /* the first record in file order (may make arrivals negative) */
	HB_ORIGIN_FIXED,            /* origin_s below; 0 gives absolute Unix seconds */
};

/* How a Philly log job with several scheduling attempts becomes one spec. */
enum hb_trace_attempts {
	HB_ATTEMPTS_FIRST = 0,      /* the first attempt: gpus and duration = its own; it needs
	                               start and end times */
	HB_ATTEMPTS_ALL,            /* every attempt: duration = sum of attempt run times,
	                               gpu_time = sum of gpus x run time, gpus = the largest;
	                               every attempt needs both times */
};

struct hb_trace_options {
	int attempts;               /* enum hb_trace_attempts (Philly log only) */
	int origin;                 /* enum hb_trace_origin */
	double origin_s;            /* Unix seconds of arrival 0 with HB_ORIGIN_FIXED */
	char vc[256];               /* keep only these virtual clusters: comma-separated list, "" = all */
	char status[64];            /* keep only these Philly statuses ("Pass,Killed"), "" = all */
	double from_s, to_s;        /* keep arrivals in [from_s, to_s) (after the origin);
	                               defaults -inf, +inf */
	int min_gpus, max_gpus;     /* keep gpus in [min_gpus, max_gpus]; max 0 = no bound */
	long max_jobs;              /* stop after this many jobs, 0 = all */
	int require_sorted;         /* 1: an arrival earlier than the previous record's is an error */
};

/* Why a record was not returned.  Counted per reader in hb_trace_stats. */
enum hb_trace_skip {
	HB_SKIP_NONE = 0,
	HB_SKIP_NO_ATTEMPTS,        /* Philly: no scheduling attempt recorded */
	HB_SKIP_MISSING_TIMES,      /* Philly: the attempt used lacks start_time or end_time */
	HB_SKIP_RUNNING,            /* Philly: last attempt's end_time is None: still running */
	HB_SKIP_BAD_TIMES,          /* Philly: an attempt ends before it starts */
	HB_SKIP_NO_GPUS,            /* the record uses 0 GPUs (Philly attempt with empty detail) */
	HB_SKIP_STATUS,             /* filtered by options.status */
	HB_SKIP_VC,                 /* filtered by options.vc */
	HB_SKIP_WINDOW,             /* filtered by options.from_s / to_s */
	HB_SKIP_GPUS,               /* filtered by options.min_gpus / max_gpus */
	HB_SKIP_GPU_SHARE,          /* Alibaba: a share of one GPU (gpu_milli < 1000); jobs hold whole GPUs */
	HB_SKIP_NEVER_SCHEDULED,    /* Alibaba: no scheduled_time (Pending at the snapshot) */
	HB_SKIP_NREASONS
};

struct hb_trace_stats {
	long records;               /* records read (CSV rows, JSON elements), skipped ones included */
	long jobs;                  /* records returned by hb_trace_next */
	long skipped[HB_SKIP_NREASONS]; /* by enum hb_trace_skip; [HB_SKIP_NONE] stays 0 */
	long skipped_total;         /* sum of skipped[] */
	int stopped;                /* 1 if max_jobs ended the stream before the end of the file */
	size_t max_buffer;          /* largest record buffer the reader held, bytes (a JSON element
	                               or a CSV line): the reader's memory beyond a fixed size */
};

struct hb_trace_reader;  /* opaque: the open file, the format's state, options, stats */

/* Defaults: first attempt, earliest origin, no filter, all jobs. */
void hb_trace_options_init(struct hb_trace_options *opt);

/* Open path in the given format (HB_TRACE_AUTO detects it); opt may be NULL
 * for the defaults.  With HB_ORIGIN_EARLIEST the open reads the file once to
 * find the origin, so a malformed record fails here already. */
int hb_trace_open(const char *path, enum hb_trace_format fmt, const struct hb_trace_options *opt,
		  struct hb_trace_reader **out, struct hb_error *err);

/* Next job: 1 and *out filled, 0 at the end (or max_jobs reached), -1 on a
 * malformed record or I/O error.  After 0 or -1 further calls return the same. */
int hb_trace_next(struct hb_trace_reader *r, struct hb_jobspec *out, struct hb_error *err);

void hb_trace_close(struct hb_trace_reader *r);

const struct hb_trace_stats *hb_trace_get_stats(const struct hb_trace_reader *r);
enum hb_trace_format hb_trace_get_format(const struct hb_trace_reader *r);
/* Origin in Unix seconds (read as UTC) for wall-clock formats, else 0. */
double hb_trace_get_origin(const struct hb_trace_reader *r);

/* The whole stream as an array sorted by arrival (ties keep file order); the
 * caller free()s *jobs.  stats may be NULL. */
int hb_trace_read_all(const char *path, enum hb_trace_format fmt, const struct hb_trace_options *opt,
		      struct hb_jobspec **jobs, long *njobs, struct hb_trace_stats *stats, struct hb_error *err);
/* Drain an open reader into a sorted array (e.g. the synthetic generator). */
int hb_trace_drain(struct hb_trace_reader *r, struct hb_jobspec **jobs, long *njobs, struct hb_error *err);

/* Format by content: first non-blank byte '[' is a Philly log, '{' a
 * job-spec JSON; otherwise the CSV header's columns decide.  The extension
 * (.json/.csv) breaks ties only for an empty or unreadable header. */
int hb_trace_detect(const char *path, enum hb_trace_format *out, struct hb_error *err);

/* "philly-log", ... and back (hb_trace_format_parse also takes "auto"). */
const char *hb_trace_format_name(enum hb_trace_format fmt);
int hb_trace_format_parse(const char *name, enum hb_trace_format *out, struct hb_error *err);
const char *hb_trace_skip_name(enum hb_trace_skip why);

/* Parse "YYYY-MM-DD HH:MM:SS" exactly, as UTC (the traces give no zone;
 * reading them as UTC keeps differences free of daylight-saving jumps),
 * into Unix seconds.  -1 if malformed or not a calendar date. */
int hb_trace_parse_time(const char *s, double *unix_s);
/* 1 when unix_s lies in the years a trace can hold, 1970 to 2099 (Philly's
 * is 2017); readers refuse other dates as input, naming file, line, field
 * and value: a row of 0001-01-01 in a 2017 trace put arrivals 63e9 s apart,
 * and the simulation then failed with "did not finish within 1e+09
 * simulated seconds" instead of the input being refused. */
#define HB_TRACE_YEAR_MIN 1970
#define HB_TRACE_YEAR_MAX 2099
int hb_trace_time_plausible(double unix_s);

/* Pollux's size classes (pollux.md 5.2) by GPU-hours: 0 small [0, 1),
 * 1 medium [1, 10), 2 large [10, 100), 3 xlarge [100, inf). */
int hb_trace_size_class(double gpu_time_s);

/* Set job->model from its GPU-time class as Pollux's workload construction
 * does (pollux.md 5.2, [ART] workload.py): small -> cifar10 or ncf (1/2
 * each), medium -> deepspeech2 or bert (1/2 each: Pollux switches half of
 * its DeepSpeech2 jobs to BERT; a per-job coin keeps this streaming),
 * large -> yolov3, xlarge -> imagenet.  One draw from rng per small or
 * medium job, none otherwise.  Names are the catalog's Pollux models. */
struct hb_rng;
void hb_trace_assign_model(struct hb_jobspec *job, struct hb_rng *rng);

#endif
