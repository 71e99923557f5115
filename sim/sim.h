/*
 * sim.h: the simulator core: jobs, their configurations, the event loop,
 * and the services agents use.  One struct hb_sim is one run of one policy
 * on one cluster with one seed; runs share nothing mutable, so a sweep may
 * run them on threads.
 *
 * Time and progress.  A running job has a configuration (GPUs per node,
 * global batch B, the predicted iteration time) that holds until its agent
 * changes it.  Between events the job advances in closed form: it runs
 * 1 / (iter_s + overhead_per_iter_s) iterations per second, each adding B
 * samples and B E(B) M0-equivalent samples of progress, with phi (so E)
 * frozen at the value of the last milestone.  Every job always has exactly
 * one pending MILESTONE event: the next iteration count at which something
 * happens (an adaptation point every `interval` iterations, the end of the
 * epoch, or the completion of training), computed in closed form from the
 * current rates.  Changing a configuration bumps the job's generation, which
 * cancels the pending milestone, and schedules a new one.
 *
 * Agents (one per job, from the policy) are clients behind struct
 * hb_agent_ops; the engine never switches on a policy name.
 */
#ifndef HB_SIM_H
#define HB_SIM_H

#include <stdint.h>

#include "catalog.h"
#include "hetbatch/policy.h" /* struct hb_arbiter_ops, enum hb_job_state */
#include "engine.h"
#include "error.h"
#include "iidp.h"
#include "log.h"
#include "perfmodel.h"
#include "policy_knob.h" /* struct hb_pknob_settings */
#include "pool.h"
#include "rng.h"
#include "stats.h"

struct hb_capacity;
struct hb_sim_drive;
struct hb_fid_model;
struct hb_profdb;
struct hb_sim;
struct hb_sim_job;

/* ---- configurations ---------------------------------------------------- */

/* How a job uses its GPUs between two decisions.  Agents fill it; iter_s is
 * the perf model's prediction for the chosen layout, which is the
 * simulator's ground truth. */
struct hb_job_config {
	int *alloc;              /* GPUs per cluster node (nnodes entries), owned by the config */
	int ngpus;               /* sum of alloc */
	long global_bs;          /* realised B_G */
	int local_bs;            /* B_L when equal on every worker, 0 when unequal (OptPerf) */
	int *gpu_local_bs;       /* local_bs 0: each GPU's local batch, ngpus entries, GPUs in cluster node
				  * order (a node's alloc[i] GPUs together); owned; NULL when local_bs > 0 */
	double iter_s;           /* compute + communication time of one iteration, s */
	double overhead_per_iter_s; /* monitoring and similarity cost per iteration, s */
	double eff_factor;       /* multiplier on E(B) (unequal-batch what-if), 1 = none */
	char layout[256];        /* human description ("node0:4GPU,VSW:1,GA:0", "B_L 64 x 16") */
};

void hb_job_config_init(struct hb_job_config *c, int nnodes);
void hb_job_config_free(struct hb_job_config *c);
int hb_job_config_copy(struct hb_job_config *dst, const struct hb_job_config *src, int nnodes);

/* How a configuration change is applied (and charged). */
enum hb_apply {
	HB_APPLY_START = 0,    /* first configuration: pays the start latency only */
	HB_APPLY_INPLACE = 1,  /* same GPUs, new batch/VSWs: pays reconfig_s */
	HB_APPLY_RESTART = 2,  /* new GPUs: checkpoint + restart (restart_s) */
};

/* ---- agents ------------------------------------------------------------ */

/* A job agent decides how its job uses GPUs.  Every callback may call
 * hb_sim_apply(); returning -1 aborts the run with err filled.  Only start
 * is required; any other callback may be NULL.
 *
 * Lifecycle.  An agent table may keep state for the whole run, shared by
 * every job that runs it (most keep none: init NULL means a NULL state).
 * init runs once per run for each table the jobs use, on the first
 * hb_sim_add_job that names it (after hb_sim_init, hb_sim_drive and
 * setting sim->policy_opts), with opts = sim->policy_opts.  It may read the
 * sim (catalog, cluster, options, jobs added so far) but changes nothing in
 * the run (no hb_sim_apply, grant or note); it fills *state or returns -1
 * with err filled, having released what it made, which fails that
 * hb_sim_add_job.  The engine passes that state to every other
 * callback as its second argument; callers that call an agent's callbacks
 * themselves (live runs, tests) get it from hb_sim_agent_state.
 *
 * A job's own state is the agent's too, in job->agent_state, made by its
 * callbacks and released by free_job(state, job): when a streamed run
 * compacts the finished job, when a new grant restarts an agent without
 * on_grant, and at hb_sim_free.  hb_sim_free releases the arbiter's state
 * first, then every job's (free_job), then each agent table's (free), in
 * the order they were made. */
struct hb_agent_ops {
	const char *name;        /* "jabas" */
	const char *summary;     /* one line for help */
	/* Make the run-wide state (above); NULL: none, state is NULL. */
	int (*init)(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err);
	/* Release what init made (called once, with its state); NULL: nothing to release. */
	void (*free)(void *state);
	/* Iterations between adaptation points (0: none). */
	long (*interval)(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job);
	/* Seconds between periodic rounds (0: none), e.g. Pollux's 30 s re-tune. */
	double (*round_s)(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job);
	/* Pick the first configuration (must call hb_sim_apply with HB_APPLY_START). */
	int (*start)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	int (*on_adapt)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	int (*on_epoch_end)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	int (*on_round)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	/* Release job->agent_state (the engine sets it NULL after); NULL: the agent keeps none. */
	void (*free_job)(void *state, struct hb_sim_job *job);
	/* The arbiter changed the job's grant (job->grant) while it ran: apply a
	 * configuration inside it (the simulator charges a restart).  NULL: the
	 * simulator frees the job's agent state (free_job) and calls start again. */
	int (*on_grant)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
};

/* The run-wide state of the agent table job runs (its init's, NULL
 * without one), for callers that call an agent's callbacks themselves. */
void *hb_sim_agent_state(const struct hb_sim *sim, const struct hb_sim_job *job);

/* The built-in agents are declared in sim/policies/policy.h. */

/* ---- cluster arbiters ---------------------------------------------------- */

/* A cluster arbiter decides which GPUs each job holds; struct
 * hb_arbiter_ops, its lifecycle and the order its callbacks fire in are in
 * the public policy API (include/hetbatch/policy.h), which policies built
 * outside the tree fill too.  Arbiters in the tree use this header's
 * services directly; plugins reach them through struct hb_policy_api. */

/* on_requeue of arbiters whose every round reconsiders suspended jobs
 * (Tiresias, Optimus): nothing to do now. */
int hb_arbiter_requeue_round(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
/* GPUs online now (capacity.h: the cluster's less those withdrawn), in all
 * and on node i: what a round-based arbiter may hand out. */
int hb_sim_online_gpus(const struct hb_sim *sim);
int hb_sim_node_online(const struct hb_sim *sim, int node);

/* dedicated: every job is granted the whole cluster at arrival (single-job
 * studies, the JABAS setting); the engine's default, defined in sim.c.  The
 * other arbiters are policies: sim/policies/policy.h. */
extern const struct hb_arbiter_ops hb_arbiter_dedicated;

/* GPUs a job asks an arbiter for: its request, or else the largest node. */
int hb_arbiter_job_gpus(const struct hb_sim *sim, const struct hb_sim_job *job);

/* ---- jobs -------------------------------------------------------------- */

/* enum hb_job_state (PENDING, RUNNING, ...) is the public API's: hetbatch/policy.h. */

struct hb_sim_job {
	int id;                  /* index in sim->jobs */
	char name[64];
	const struct hb_model *model;   /* borrowed from the catalog */
	const struct hb_agent_ops *agent;
	int agent_slot;          /* agent's entry in sim->agents: its run-wide state */
	void *agent_state;       /* the job's own, owned by the agent (free_job) */
	double arrival_s;
	int req_gpus;            /* GPUs the job asks for (0: the arbiter decides) */
	long req_batch;          /* global batch the job asks for (0: the model's minB_G) */
	char pref_gpu[HB_NAME_MAX]; /* catalog GPU type the job prefers (EasyScale, YARN-CS), "" = none */
	char app[HB_NAME_MAX];   /* the trace's own application name (hb_jobspec.app: EasyScale's
				    "vgg19", run as resnet50), "" = none */
	int d2;                  /* EasyScale D2 (cross-type determinism): 1 allowed, 0 not, -1 from the model */
	int *grant;              /* GPUs per node the arbiter gives the job, owned */
	int ngrant;              /* sum of grant */
	double start_s;          /* first start (queueing delay = start_s - arrival_s) */
	int resumed;             /* 1 when the grant hb_sim_regrant last made ended a suspension */
	int started;             /* 1 once the first configuration was applied: a later
				    start (after preemption or a new grant) is a restart */
	int preemptions;         /* times the arbiter suspended the job */

	/* Models of this job (owned by the sim, shared by jobs of one model). */
	struct hb_perf *perf;    /* prepared perf model on the cluster */
	struct hb_iidp_solver *solver;  /* IIDP solver over perf */
	struct hb_stats *stats;  /* convergence model */
	/* The artifact's statistical epochs and gradient statistics (Pollux and
	 * Sia fidelity: the engine's progress, phi and epochs), NULL when off;
	 * fid_agents 1 when the agents and arbiters also follow Pollux's
	 * simulator with it (its batch rule and per-GPU range, one per model,
	 * its step lookup), which Sia fidelity does not: Sia's simulator keeps
	 * one Application, and so one batch range, per GPU type. */
	const struct hb_fid_model *fid;
	int fid_agents;
	double fid_rate;         /* progress-rate factor of the fidelity mode (Sia: 1 / SLOWDOWN), else 1 */
	long min_gbs, max_gbs;   /* batch bounds on this cluster (overrides applied) */
	double gamma;            /* similarity threshold on this cluster */

	/* Current configuration and state. */
	int state;               /* enum hb_job_state */
	struct hb_job_config cfg;
	double t_last;           /* time up to which progress is integrated */
	double restart_until;    /* end of the current restart (RESTARTING) */
	uint64_t gen;            /* bumped on every change; stale events are dropped */

	/* Progress. */
	double iters;            /* iterations run (fractional between events) */
	double samples;          /* samples processed */
	double progress;         /* M0-equivalent samples */
	double target;           /* progress needed to finish */
	long epoch;              /* epochs completed */
	double epoch_samples;    /* samples into the current epoch */
	double phi;              /* noise scale frozen since the last milestone */
	double eff;              /* E(B) x cfg.eff_factor, frozen likewise */
	double next_adapt_iter;  /* iteration count of the next adaptation point */

	/* Accounting. */
	double gpu_s;            /* GPU-seconds held */
	double cost_usd;         /* dollars for the GPUs held */
	double price_per_h;      /* $/h of cfg.alloc, set when a configuration is applied (pricing
				    is per allocation change, not per event) */
	double overhead_s;       /* wall time lost to restarts, reconfiguration, monitoring */
	double gbs_time_sum;     /* integral of B_G dt while running (mean B_G) */
	double gpus_time_sum;    /* integral of GPUs held dt (mean GPUs) */
	double run_s;            /* time spent RUNNING (excludes restarts) */
	int restarts;
	long reconfigs;          /* in-place changes */
	long adaptations;        /* adaptation points reached */
	double finish_s;         /* completion time, 0 until done */
	double duration_s;       /* > 0: the job stops once it has run this long (run_s, at the first
				    whole iteration past it), counted as completed then (sim
				    --duration-from-trace: the trace's recorded run time); 0: it
				    trains to its target */
	int stopped_at_duration; /* 1: done because run_s reached duration_s, not the target */
	double last_similarity;  /* last observed Phi, for records */
	double drive_similarity; /* driven runs (hb_sim_drive): the similarity measured at this
				    adaptation point, what hb_sim_observe_similarity returns */
};

/* ---- records (time series and events, kept in memory, written by results.c) */

/* GPU types a sample tells apart (type_gpus below): the cluster's distinct
 * GPU types in node order, the last slot also taking every type past it
 * (hb_cluster_type_slots).  Eight covers every built-in cluster. */
#define HB_SIM_TYPE_SLOTS 8

/* The type slot of every node of cl into node_slot[0..nnodes) and the
 * catalog GPU of each slot into slot_gpu[0..HB_SIM_TYPE_SLOTS) (either may
 * be NULL); returns how many slots are used (1..HB_SIM_TYPE_SLOTS, 0 for
 * a cluster without nodes). */
int hb_cluster_type_slots(const struct hb_cluster *cl, int *node_slot, int *slot_gpu);

struct hb_sim_sample {
	double t;                /* s */
	int job;
	long global_bs;
	int local_bs;
	int ngpus;
	double iter_s;           /* including overhead per iteration */
	double progress_frac;    /* progress / target */
	double phi;
	double similarity;       /* last observed Phi (0 if none) */
	double cost_usd;         /* cumulative */
	long epoch;
	double iters;            /* the job's iterations done (timeseries.csv's step, rounded) */
	unsigned short type_gpus[HB_SIM_TYPE_SLOTS]; /* of ngpus, those of each GPU type slot
						       (hb_cluster_type_slots); not in results files */
};

struct hb_sim_event_rec {
	double t;
	int job;
	char kind[16];           /* "start", "reconfig", "restart", "epoch", "done", "adapt" */
	const char *detail;      /* NUL-terminated text in the sim's note arena (at most
				    HB_SIM_NOTE_MAX - 1 bytes, except configuration events, whose
				    read-back suffix is kept whole); a trace replay records millions
				    of these, so the text is stored at its own length */
};

#define HB_SIM_NOTE_MAX 256

/* Where a run's records go instead of memory (hb_sim_stream): the results
 * writers and the streamed metrics, so that a trace replay's memory follows
 * the jobs alive at once rather than the trace's length.  Each callback
 * gets the record while it is being made (its detail text is only valid
 * during the call) and returns -1 with err filled to stop the run. */
struct hb_sim_sink {
	void *ctx;                /* passed back to every callback */
	/* 1 when the sink wants the text of events of this kind; 0 lets the
	 * simulator skip formatting it (the record then comes with detail "").
	 * NULL: every text is wanted. */
	int (*wants_detail)(void *ctx, const char *kind);
	int (*event)(void *ctx, const struct hb_sim_event_rec *e, struct hb_error *err);
	int (*sample)(void *ctx, const struct hb_sim_sample *s, struct hb_error *err);
};

/* 1 when two records say the same (time bit for bit, job, kind, text). */
int hb_sim_event_equal(const struct hb_sim_event_rec *a, const struct hb_sim_event_rec *b);

/* Blocks of event texts, never moved once written (records point into them). */
struct hb_note_block {
	struct hb_note_block *next;
	size_t used, size;
	char text[];
};

/* ---- the simulation ---------------------------------------------------- */

/* A run's progress, a fraction in [0, 1] of its jobs' targets, reported
 * now and then from the thread that runs it (hb_sim_watch). */
typedef void hb_sim_progress_fn(void *ctx, double frac);

struct hb_sim_opts {
	uint64_t seed;           /* every RNG stream is seeded from this */
	long interval;           /* > 0: override every model's adaptation interval p */
	double restart_const_s;  /* >= 0: constant restart cost (fidelity mode); < 0 derive from model */
	int fidelity;            /* enum hb_fidelity (fidelity.h): HB_FIDELITY_POLLUX replays the mechanics
				  * of Pollux's own simulator */
	double reconfig_s;       /* in-place VSW reconfiguration cost, s (default 1.0, see sim.c) */
	double gns_overhead;     /* Pollux GNS monitoring overhead fraction; < 0 = default (sim.c) */
	int similarity_cost;     /* 1: charge the similarity all-reduce every p (default 1) */
	double unequal_k;        /* what-if: convergence penalty for unequal local batches (0 off) */
	enum hb_progress_model progress; /* how progress is charged (stats.h; default pollux) */
	const char *replay;      /* trajectory file (step,global_batch) driving B_G, or NULL */
	double max_sim_s;        /* stop a run that exceeds this simulated time (default 1e9) */
	long sample_every;       /* record a time-series sample every N adaptation points (default 1) */
	int quiet;               /* no progress bar */
	int status;              /* when not quiet: enum hb_status_mode (progress.h), 0 = auto */
	double status_period_s;  /* seconds between status lines off a terminal; 0 = HB_STATUS_PERIOD_S */
	const struct hb_log *log;/* may be NULL */
	struct hb_pknob_settings knobs; /* options of the policies, by name (--elastic-interval, ...;
				  policy_knob.h): whoever runs a policy applies them to its options
				  struct (policy.h hb_policy_opts_new); none: every default */
	const char *capacity;    /* --capacity: CSV of GPUs available per type over time, or NULL (capacity.h) */
	int threads;             /* threads the run may use inside itself (sim --threads): the pool that
				    hb_sim_init makes for its agents' fits (JABAS's forecasts); <= 1
				    (default): none, all on the calling thread.  Outputs are the same
				    bits for any count */
};

void hb_sim_opts_default(struct hb_sim_opts *o);

/* An agent table the run's jobs use, with its run-wide state. */
struct hb_sim_agent {
	const struct hb_agent_ops *ops; /* borrowed */
	void *state;                    /* ops->init's (NULL without one), released by ops->free */
};

struct hb_sim {
	const struct hb_catalog *cat;   /* borrowed */
	const struct hb_cluster *cl;    /* borrowed */
	struct hb_profdb *db;           /* borrowed, profiles */
	struct hb_sim_opts opts;
	const char *policy;             /* policy name, for records */
	const struct hb_arbiter_ops *arbiter; /* dedicated unless set by hb_sim_set_arbiter */
	void *arbiter_state;            /* the arbiter's init made it, owned by the arbiter (free); NULL
					   before then or without an init */
	int arbiter_ready;              /* 1 once the arbiter's init ran (hb_sim_arbiter_init) */
	struct hb_sim_agent *agents;    /* each agent table the jobs run, once, in first-use order, owned */
	int nagents;
	const void *policy_opts;        /* the policy's options: the struct its knob table describes
					   (struct hb_policy, policy.h), borrowed; NULL: its defaults */
	int *free_gpus;                 /* GPUs per node not granted to any job */
	int *node_slot;                 /* per node: its GPU type slot (hb_cluster_type_slots), owned */
	struct hb_engine eng;

	struct hb_rng rng_similarity;   /* HB_STREAM_SIMILARITY */
	struct hb_rng rng_gns;          /* HB_STREAM_GNS */
	struct hb_rng rng_agent;        /* HB_STREAM_SCHED: agents' own randomness */

	struct hb_sim_job *jobs;
	int njobs;
	int cap_jobs;                   /* entries allocated in jobs (>= njobs) */

	/* Per-model shared models (index parallel to cat->models). */
	struct hb_perf **perf;
	struct hb_iidp_solver **solver;
	struct hb_iidp_budget iidp_budget; /* the cache budget the solvers above share (sim.c) */
	struct hb_stats **stats;
	struct hb_fid_model **fid;      /* Pollux fidelity (opts.fidelity), NULL entries when off */
	unsigned char *borrowed;        /* per model: 1 when the four entries above belong to models_from */
	const struct hb_sim *models_from; /* hb_sim_borrow_models: take loaded models from there */

	/* Records: kept in these arrays, unless hb_sim_stream sent them to a sink. */
	struct hb_sim_sample *samples;
	size_t nsamples, cap_samples;
	struct hb_sim_event_rec *events;
	size_t nevents, cap_events;
	struct hb_note_block *notes;    /* event texts, newest block first, owned */
	int streaming;                  /* 1 after hb_sim_stream: records go to sink, none is kept, and a
					   job's per-node arrays live from its arrival to its finish */
	const struct hb_sim_sink *sink; /* borrowed; NULL: records are dropped (streaming only) */
	struct hb_error sink_err;       /* the sink's first failure; hb_sim_run stops with it */
	double wall_s;                  /* wall-clock time of hb_sim_run */
	double sched_wall_s;            /* wall-clock time inside arbiter on_round (never in result files) */
	long sched_rounds;              /* arbiter rounds run */
	int nended;                     /* jobs done or dropped; the run ends at njobs */
	double progress_done;           /* sum over jobs of min(progress, target), kept as progress
					   moves, so the progress bar costs O(1) per redraw */
	hb_sim_progress_fn *on_progress; /* hb_sim_watch: NULL: none */
	void *progress_ctx;             /* its context */
	int released;                   /* GPUs handed back by hb_sim_resize_grant during the current event */
	struct hb_pool *pool;           /* opts.threads' workers, owned; NULL: serial.  Agents pass it to
					   the fits they run (agent_jabas.c's forecast) */
	struct hb_capacity *capacity;   /* opts.capacity's series and what the run did with it (capacity.h);
					   NULL without one; owned */

	struct hb_sim_drive *drive;     /* driven runs (hb_sim_drive), owned; NULL in a simulated one */

	/* Replay (opts.replay): B_G from a recorded trajectory, by iteration. */
	double *replay_step;            /* strictly increasing iteration counts, owned */
	long *replay_gbs;               /* global batch from that step on, owned */
	int nreplay;
};

/* Create a simulation of one policy's agent on a dedicated cluster. */
int hb_sim_init(struct hb_sim *sim, const struct hb_catalog *cat, const struct hb_cluster *cl,
		struct hb_profdb *db, const char *policy, const struct hb_sim_opts *opts, struct hb_error *err);
void hb_sim_free(struct hb_sim *sim);

/* Use src's loaded per-model state (perf model, IIDP solver, convergence
 * and fidelity models) instead of loading it again, for models src has
 * loaded.  src must outlive sim, share its catalog, cluster, database and
 * options that shape those models (fidelity, progress, unequal_k), and not
 * run at the same time: metrics' isolated reference runs use it. */
void hb_sim_borrow_models(struct hb_sim *sim, const struct hb_sim *src);
/* Add a job (model, agent, arrival); returns its index in *id.  The first
 * job that runs an agent table makes that table's run-wide state (its
 * init), whose failure fails the call. */
int hb_sim_add_job(struct hb_sim *sim, const struct hb_model *m, const struct hb_agent_ops *agent,
		   double arrival_s, int *id, struct hb_error *err);
/* Stream the run's records to sink (NULL: drop them) instead of keeping
 * them in samples/events, and keep jobs compact: a job's grant and
 * configuration arrays (nnodes entries each) are allocated at its arrival
 * and freed, with its agent state, once it is done (its accounting, final
 * batch, GPU count and layout text stay).  Call before hb_sim_run; the
 * sink must outlive the run. */
void hb_sim_stream(struct hb_sim *sim, const struct hb_sim_sink *sink);
/* Also report the run's progress to fn (before hb_sim_run): runs going on
 * threads share one bar, which their own (opts.quiet) would garble.  Called
 * as often as the run's own bar would be redrawn, whether it is or not. */
void hb_sim_watch(struct hb_sim *sim, hb_sim_progress_fn *fn, void *ctx);
/* Use a cluster arbiter (before hb_sim_run; default dedicated).  Its init
 * runs later (hb_sim_arbiter_init); a state the arbiter it replaces made
 * is released. */
void hb_sim_set_arbiter(struct hb_sim *sim, const struct hb_arbiter_ops *arb);
/* Make the arbiter's state (its init with sim->policy_opts) if not made
 * yet: hb_sim_run does it before it schedules anything; callers that call
 * an arbiter's callbacks themselves call it once their jobs are added.  -1
 * with init's error. */
int hb_sim_arbiter_init(struct hb_sim *sim, struct hb_error *err);
/* Set what a job asks for (trace replay): GPUs and global batch, 0 = none. */
void hb_sim_job_request(struct hb_sim_job *job, int gpus, long batch);
/* Set a job's preferred GPU type (NULL or "" = none) and D2 flag (-1 = from
 * the model), read by the EasyScale and YARN-CS policies. */
void hb_sim_job_prefs(struct hb_sim_job *job, const char *gpu, int d2);
/* Train the job for `epochs` passes over its model's dataset instead of the
 * model's target_epochs (the EasyScale trace's per-job epochs on 1 %
 * datasets): its progress target becomes epochs x dataset_size M0-equivalent
 * samples.  Before the run; not in Pollux fidelity mode (its epochs are the
 * artifact's). */
int hb_sim_job_epochs(struct hb_sim_job *job, double epochs, struct hb_error *err);
/* Start a PENDING job on grant (GPUs per node, all free): takes them from
 * the pool and calls the agent's start.  An agent that cannot run the job
 * fails the run. */
int hb_sim_start_job(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err);
/* Change the grant of a started job: release the old GPUs, take the new
 * ones (all free), and let the agent re-plan inside them, charged as a
 * restart.  An all-zero grant suspends the job (HB_JOB_SUSPENDED: no GPUs,
 * no cost, progress kept); a grant on a suspended job resumes it. */
int hb_sim_regrant(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err);
/* Regrant n started jobs at once (grants: n rows of the cluster's nodes,
 * none all-zero): every old grant is released before any new one is
 * taken, so jobs may trade GPUs, which one at a time they cannot; then
 * each job goes on as hb_sim_regrant's does, in order.  Returns 1 and
 * does nothing when the new grants do not fit the free GPUs plus the
 * old ones; an input error for a job that holds no GPUs. */
int hb_sim_regrant_all(struct hb_sim *sim, struct hb_sim_job **jobs, const int *grants, int n, struct hb_error *err);
/* What the arbiter lets a running job re-choose among (struct
 * hb_arbiter_ops.offer): offer[nnodes] and *max_gpus. */
void hb_sim_offer(const struct hb_sim *sim, const struct hb_sim_job *job, int *offer, int *max_gpus);
/* An agent takes a new grant inside its offer (start or its own decision
 * points), without the simulator calling back into it: GPUs move between
 * the job and the free pool, and the agent then applies a configuration on
 * them (HB_APPLY_RESTART, or START in its start).  GPUs handed back are
 * reported to the arbiter's on_release after the event.  No-op under the
 * dedicated arbiter (every job holds the whole cluster outside the pool). */
int hb_sim_resize_grant(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err);
/* Reject a PENDING job that has arrived (an admission-control arbiter's
 * drop mode): it never runs, holds nothing and counts as dropped. */
int hb_sim_drop_job(struct hb_sim *sim, struct hb_sim_job *job, const char *why, struct hb_error *err);
/* Gang placement of n GPUs on the free pool, fewest nodes first (largest
 * free counts first, ties to the lower node index): 1 and grant filled, or 0
 * when n GPUs are not free. */
int hb_sim_place(const struct hb_sim *sim, int n, int *grant);
/* Run until every job is done (or max_sim_s). */
int hb_sim_run(struct hb_sim *sim, struct hb_error *err);

/* ---- services for agents ----------------------------------------------- */

/* Apply a new configuration at the current time: integrates progress so
 * far, charges the change (enum hb_apply), records it, and reschedules. */
int hb_sim_apply(struct hb_sim *sim, struct hb_sim_job *job, const struct hb_job_config *cfg, int how,
		 const char *why, struct hb_error *err);
/* hb_sim_apply with the pause (s, >= 0) charged instead of the one `how`
 * implies; a negative pause_s charges as hb_sim_apply does.  The event kind
 * and the restart count still follow `how`. */
int hb_sim_apply_cost(struct hb_sim *sim, struct hb_sim_job *job, const struct hb_job_config *cfg, int how,
		      double pause_s, const char *why, struct hb_error *err);
/* Current simulated time. */
double hb_sim_now(const struct hb_sim *sim);
/* GPU-seconds the job has held up to now, restarts included (gpu_s is
 * integrated only to t_last: the stretch since is added while it holds
 * GPUs): Tiresias's attained service. */
double hb_sim_attained_gpu_s(const struct hb_sim *sim, const struct hb_sim_job *job);
/* True noise scale now (training fraction of the job, at batch B). */
double hb_sim_phi(const struct hb_sim *sim, const struct hb_sim_job *job, double batch);
/* A noisy observation of the half-batch gradient similarity at the job's
 * current global batch (stream HB_STREAM_SIMILARITY). */
double hb_sim_observe_similarity(struct hb_sim *sim, struct hb_sim_job *job);
/* Restart cost of the job: checkpoint bytes / storage bandwidth + latencies,
 * or the constant of fidelity mode. */
double hb_sim_restart_s(const struct hb_sim *sim, const struct hb_sim_job *job);
/* Cost of one similarity measurement (a half-group all-reduce of every
 * bucket plus an all-gather of the model between two ranks), s, for alloc. */
double hb_sim_similarity_cost_s(const struct hb_sim *sim, const struct hb_sim_job *job, const int *alloc);
/* GNS monitoring overhead fraction for Pollux-family agents. */
double hb_sim_gns_overhead(const struct hb_sim *sim, const struct hb_sim_job *job);
/* Price of an allocation, $/h. */
double hb_sim_price_per_hour(const struct hb_sim *sim, const int *alloc);
/* Replay mode: 1 and *gbs = the recorded global batch at the job's current
 * iteration (the last point whose step is <= it; the first point before
 * that), 0 when no replay file is set.  SimiGrad and JABAS take it instead
 * of the similarity rule, so two policies can be compared on one schedule. */
int hb_sim_replay_gbs(const struct hb_sim *sim, const struct hb_sim_job *job, long *gbs);
/* Read a replay file (CSV with columns step, global_batch; steps strictly
 * increasing, batches positive); exposed for tests and the CLI. */
int hb_sim_load_replay(const char *path, double **steps, long **gbs, int *n, struct hb_error *err);
/* Record an event (kind, printf detail). */
void hb_sim_note(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *fmt, ...)
	HB_PRINTF(4, 5);

/* ---- driven runs (live) ------------------------------------------------- */

/* A driven simulation hosts one job whose iterations run outside it (a
 * live run, live/live_agent.h) on the dedicated cluster, so that the
 * job's agent decides from what was measured instead of what the
 * statistical model would draw.  Nothing is scheduled and no pause is
 * charged (the caller measures its own); the caller
 *  - starts the job with hb_sim_drive_start and then calls its agent's
 *    start itself,
 *  - reports every stretch of iterations it ran with hb_sim_drive_iters,
 *    at most hb_sim_drive_next of them, which says whether the stretch
 *    ended an epoch and reached an adaptation point, counted as the event
 *    loop counts them (on_milestone: the epoch's end crossed, the
 *    adaptation point every interval iterations),
 *  - sets the similarity it measured there (hb_sim_drive_similarity), which
 *    the agent's hb_sim_observe_similarity returns,
 *  - calls the agent's callbacks for the points reached, in the loop's
 *    order (the epoch end first, then the adaptation point unless the
 *    epoch end applied a configuration, whose pause would skip it), and
 *    reads what the agent applied: job->gen moves and the job's last
 *    start/reconfig/restart event holds the configuration's text
 *    (apply_note's read-back suffix).
 * An agent that reads a quantity only a simulated job has (hb_sim_phi: the
 * statistical model's noise scale) gets it, and hb_sim_drive_missing then
 * names it, so that the caller can refuse the agent. */
struct hb_sim_drive {
	const char *missing;     /* the first simulated-only quantity an agent read, or NULL */
};

/* Make sim driven (after hb_sim_init, before adding the job). */
int hb_sim_drive(struct hb_sim *sim, struct hb_error *err);
/* Arrive job on the whole cluster at the current time (grant, adaptation
 * counter), as the dedicated arbiter starts one, short of the agent's start. */
int hb_sim_drive_start(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err);
/* Iterations from now to the job's next epoch end or adaptation point,
 * whichever comes first (>= 1), at its current global batch. */
long hb_sim_drive_next(const struct hb_sim *sim, const struct hb_sim_job *job);
/* What a stretch reached (hb_sim_drive_iters' *reached, a bit set). */
#define HB_DRIVE_EPOCH 1         /* an epoch ended: job->epoch counts it */
#define HB_DRIVE_ADAPT 2         /* an adaptation point */
/* The job ran n iterations (1..hb_sim_drive_next) at its configuration in
 * elapsed_s seconds (>= 0, the simulated clock moves by it). */
int hb_sim_drive_iters(struct hb_sim *sim, struct hb_sim_job *job, long n, double elapsed_s, int *reached,
		       struct hb_error *err);
/* The similarity measured at this adaptation point (NAN: none). */
void hb_sim_drive_similarity(struct hb_sim_job *job, double similarity);
/* The simulated-only quantity an agent of a driven sim read, or NULL. */
const char *hb_sim_drive_missing(const struct hb_sim *sim);

/* The named policies (struct hb_policy, hb_policies, hb_policy_find) are
 * sim/policies/policy.h. */

#endif
