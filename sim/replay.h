/*
 * replay.h: a shared-cluster simulation built from a job-spec stream
 * (traces/jobspec.h), the input of `hetbatch sim --trace`.
 *
 * Two steps, so that every policy replays exactly the same jobs:
 *
 *   hb_replay_read / hb_replay_from_specs
 *       read the trace (sorted by arrival), resolve every model in the
 *       catalog, draw a model for a job the trace gives none (Philly) with
 *       hb_trace_assign_model on the --seed's HB_STREAM_JOBMIX stream, scale
 *       arrivals by 1/load, and set aside the jobs larger than the cluster;
 *   hb_replay_build
 *       add the jobs to one struct hb_sim per policy, each with the policy's
 *       agent and its request (GPUs, batch).
 *
 * A job asking for more GPUs than the cluster has is skipped and counted
 * (struct hb_replay.oversize), not capped: capping would replay a different
 * job (a rigid 128-GPU job on 64 GPUs), and a skip shows in the summary as a
 * dropped job.  `--gpus MIN:MAX` filters such jobs out before they count.
 */
#ifndef HB_REPLAY_H
#define HB_REPLAY_H

#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "jobspec.h"
#include "sim.h"

/* One job to replay. */
struct hb_replay_job {
	char name[HB_JOB_NAME_MAX];    /* the trace's job name */
	const struct hb_model *model;  /* borrowed from the catalog */
	double arrival_s;              /* trace arrival / load */
	int gpus;                      /* requested GPUs (<= cluster GPUs) */
	long batch;                    /* requested global batch, 0 = the agent's default */
	long record;                   /* trace record: CSV line or JSON element */
	long index;                    /* position among the specs replayed (0..read-1): the same job
					  on every cluster, whichever jobs are set aside (sweep.h) */
	int assigned;                  /* 1: model drawn by hb_trace_assign_model */
	char gpu_type[HB_JOB_MODEL_MAX]; /* preferred GPU type (a catalog GPU), "" = none */
	char app[HB_JOB_MODEL_MAX];    /* the trace's application name (hb_jobspec.app), "" = none */
	int d2;                        /* EasyScale D2: 1 allowed, 0 not, -1 from the model */
	double epochs;                 /* passes over the dataset, 0 = the model's target_epochs */
	double duration_s;             /* the run time the trace recorded (hb_jobspec.duration_s), 0 = none */
};

struct hb_replay_opts {
	double load;                   /* arrivals are divided by this (2 = twice the load); > 0 */
	uint64_t seed;                 /* seeds the model draws */
	int duration_from_trace;       /* 1: every job with a recorded run time stops at it
					  (sim --duration-from-trace; hb_replay_build) */
};

void hb_replay_opts_init(struct hb_replay_opts *o);

struct hb_replay {
	struct hb_replay_job *jobs;    /* by arrival (ties keep trace order), owned; easyscale-workload:
					  in file order, as the artifact's simulator keeps them */
	long njobs;
	long read;                     /* jobs the trace reader returned (after its filters) */
	long oversize;                 /* skipped: more GPUs than the cluster */
	int max_oversize_gpus;         /* largest such request, 0 if none */
	long assigned;                 /* models drawn for jobs the trace gave none */
	long merged;                   /* easyscale-workload rows whose name an earlier row had: folded
					  into it as the artifact's OrderedDict does (its place, their values) */
	struct hb_trace_stats stats;   /* the reader's counters (zero for hb_replay_from_specs) */
	enum hb_trace_format format;   /* the trace's format */
	double load;                   /* the load factor applied */
	long with_duration;            /* jobs kept whose trace records a run time (duration_s > 0) */
	int duration_from_trace;       /* hb_replay_opts.duration_from_trace */
};

/* Read path (fmt may be HB_TRACE_AUTO; topt may be NULL) into rp for
 * cluster cl.  An unknown model is an input error naming the trace record
 * ("FILE:LINE: field 'model': value 'X': ..."); a model field naming a JSON
 * file is loaded into cat first (hb_replay_load_models). */
int hb_replay_read(struct hb_catalog *cat, const struct hb_cluster *cl, const char *path,
		   enum hb_trace_format fmt, const struct hb_trace_options *topt, const struct hb_replay_opts *ro,
		   struct hb_replay *rp, struct hb_error *err);

/* Load into cat every model file the specs name (a model field with a '/'
 * or ending in ".json", as --model FILE): a relative path is looked up
 * beside the trace file `path` first, then from the working directory.
 * With rename, each such field becomes the loaded entry's name (so the
 * specs then only make sense with cat).  Errors name the record. */
int hb_replay_load_models(struct hb_catalog *cat, struct hb_jobspec *specs, long n, enum hb_trace_format fmt,
			  const char *path, int rename, struct hb_error *err);

/* The same from specs already in memory (sorted by arrival or not: the
 * order is kept); `where` names them in messages (a file name). */
int hb_replay_from_specs(const struct hb_catalog *cat, const struct hb_cluster *cl, const struct hb_jobspec *specs,
			 long n, enum hb_trace_format fmt, const char *where, const struct hb_replay_opts *ro,
			 struct hb_replay *rp, struct hb_error *err);

void hb_replay_free(struct hb_replay *rp);
/* Free rp's jobs once every simulation has its own (hb_replay_build
 * copies them), keeping the counts and the reader's statistics: a long
 * trace's records (Philly: 82 k of them, 15 MB) need not stay for its
 * replays. */
void hb_replay_drop_jobs(struct hb_replay *rp);

/* Add every job of rp to sim (fresh, from hb_sim_init with rp's catalog and
 * cluster) with agent: job k of rp becomes sim->jobs[k], named after the
 * trace; with rp->duration_from_trace, a job with a recorded run time gets
 * it as its stop (hb_sim_job.duration_s).  A model the profiles cannot run on the cluster is an input error
 * naming the record (where as above). */
int hb_replay_build(struct hb_sim *sim, const struct hb_replay *rp, const struct hb_agent_ops *agent,
		    const char *where, struct hb_error *err);

/* "FILE:LINE", "FILE: element K" or "FILE: job K" for a record of a trace
 * in format fmt. */
void hb_replay_where(enum hb_trace_format fmt, const char *where, long record, char *buf, size_t size);

#endif
