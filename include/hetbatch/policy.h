/*
 * hetbatch/policy.h: the policy plugin API, version HB_POLICY_API_VERSION.
 *
 * A plugin is a shared object that hetbatch loads with
 * `sim --policy-plugin FILE.so` (or a sweep config's "policy_plugins"),
 * exporting one symbol, `hetbatch_plugin` (struct hb_plugin, below):
 * the API version it was built against, its policies, and the slot where
 * hetbatch stores its function table (struct hb_policy_api) before calling
 * anything in the plugin.  Each policy is a cluster arbiter (struct
 * hb_arbiter_ops: which GPUs each job holds, when) run with one of the
 * built-in job agents (how a job uses its grant), plus the options it owns
 * (struct hb_knob).  The same function table is what the in-tree arbiters
 * fill (sim/policies/NAME/), so a plugin can do whatever a built-in arbiter
 * does, through the calls of struct hb_policy_api instead of the engine's
 * structs, which stay private so that they may change between releases.
 *
 * This mirrors SQLite's loadable extensions (sqlite3ext.h: the host hands
 * the extension a table of its functions, so the extension links against
 * nothing) and Redis modules (RedisModule_Init fills the API pointers and
 * checks the API version).  Build a plugin with only this header:
 *
 *     cc -std=c11 -shared -fPIC -I PREFIX/include -o las.so las.c
 *
 * examples/policy-plugin/ is a complete one.  Versioning: the host refuses
 * a plugin whose api_version differs from its own HB_POLICY_API_VERSION;
 * any change to a struct or call below bumps the version.
 *
 * Threads: a sweep runs independent simulations on threads; callbacks of
 * one simulation are never concurrent, but two simulations may call the
 * same plugin at once, so a plugin keeps what it needs in the state its
 * init returns (one per simulation), not in globals.
 */
#ifndef HETBATCH_POLICY_H
#define HETBATCH_POLICY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HB_POLICY_API_VERSION 1

struct hb_sim;      /* one run of one policy on one cluster (opaque) */
struct hb_sim_job;  /* one job of that run (opaque) */
struct hb_error;    /* where a failing callback says why (hb_policy_api.error) */

/* A job's state (hb_policy_api.job_state). */
enum hb_job_state {
	HB_JOB_PENDING = 0,     /* not yet arrived / not started */
	HB_JOB_RUNNING = 1,
	HB_JOB_RESTARTING = 2,  /* paused for a restart: GPUs held and billed, no progress */
	HB_JOB_DONE = 3,
	HB_JOB_SUSPENDED = 4,   /* preempted by the arbiter: no GPUs, progress kept */
	HB_JOB_DROPPED = 5,     /* rejected by the arbiter before it started (IBM's drop mode) */
};

/* ---- cluster arbiters --------------------------------------------------- */

/* A cluster arbiter decides which GPUs each job holds (its grant); the job's
 * agent then decides how to use them.  It starts a job with start_job
 * (hb_sim_start_job in the tree), which takes the grant out of the free
 * pool and calls the agent's start.  Every callback returns 0, or -1 with
 * err filled, which stops the run with that message.  Only on_arrival is
 * required.
 *
 * Lifecycle.  init makes the arbiter's state for the run, once, when the
 * run starts, before anything is scheduled: every job is added by then,
 * so the state may size per-job arrays by the job count.  opts is the
 * policy's options struct (its knob table's, filled; NULL when it has
 * none).  init may read the sim (cluster, options, jobs) but starts no job
 * and records nothing; it fills *state or returns -1 with err filled
 * (having released what it made), which fails the run with that message.
 * init NULL: state is NULL.  The engine passes the state to every callback
 * as its second argument, and calls free(state) exactly once for an init
 * that succeeded, when the run is freed, whether it succeeded or not.
 *
 * Order.  on_arrival for each job at its arrival time, on_round every
 * round_s seconds of simulated time (the first at round_s), on_finish
 * when a job completes (its GPUs are back in the free pool).  Within one
 * instant the engine runs capacity changes, then restarts that end, then
 * jobs' progress points (completions among them), then the round, then
 * arrivals: a job arriving at a round's time is first seen by the next
 * round (the Pollux, EasyScale and Sia fidelity modes put it in that
 * round, as their artifacts do). */
struct hb_arbiter_ops {
	const char *name;        /* "fifo" */
	const char *summary;     /* one line for help */
	/* Make this simulation's state from the policy's options (the struct
	 * its knob table describes, filled; NULL when it has none). */
	int (*init)(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err);
	void (*free)(void *state);
	/* A job was submitted (it is PENDING): grant now, or queue it. */
	int (*on_arrival)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	/* A job finished and its GPUs are back in the pool. */
	int (*on_finish)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	/* Seconds between scheduling rounds (0: none) and the round itself. */
	double (*round_s)(const struct hb_sim *sim, const void *state);
	int (*on_round)(struct hb_sim *sim, void *state, struct hb_error *err);
	/* Optional, for agents that re-choose their own GPUs (JABAS at epoch
	 * ends): the GPUs per node the job may hold after its decision (offer,
	 * nnodes entries, at least its grant where it may keep it, at most its
	 * grant plus the free pool) and the most it may hold in all
	 * (*max_gpus).  NULL: the job's grant. */
	void (*offer)(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job, int *offer,
		      int *max_gpus);
	/* Optional: a job handed GPUs back during one of its own events; called
	 * after that event, so the arbiter may start queued jobs on them. */
	int (*on_release)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	/* Capacity that comes and goes (sim --capacity).  All three optional.
	 * on_revoke: busy GPUs are being withdrawn, need[i] of node i (nnodes
	 * entries) beyond its free ones: an elastic arbiter shrinks jobs there;
	 * the engine then preempts jobs (most recently started first) for
	 * whatever is still short. */
	int (*on_revoke)(struct hb_sim *sim, void *state, const int *need, struct hb_error *err);
	/* The engine preempted job for a withdrawal (SUSPENDED, progress kept):
	 * put it back in the queue.  NULL: the engine resumes it itself
	 * whenever GPUs free up. */
	int (*on_requeue)(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err);
	/* GPUs came back, or a withdrawal left some free: start waiting jobs. */
	int (*on_capacity)(struct hb_sim *sim, void *state, struct hb_error *err);
	/* Non-NULL: why this arbiter cannot run with --capacity (the run is
	 * refused with it rather than failing midway). */
	const char *no_capacity;
};

/* ---- options (knobs) ---------------------------------------------------- */

/* How a knob is written and stored.  Every type but DOUBLE is an int field. */
enum hb_pknob_type {
	HB_PKNOB_FLAG = 0,   /* a command-line flag without a value (given: 1); true/false in a sweep;
				on/off in results */
	HB_PKNOB_SWITCH = 1, /* "on" (1) or "off" (0); true/false in a sweep; on/off in results */
	HB_PKNOB_WORDS = 2,  /* one of words[] (the value is its index); a string in a sweep and results */
	HB_PKNOB_DOUBLE = 3, /* a number in [min, max] (a double field) */
	HB_PKNOB_INT = 4,    /* an integer in [min, max] */
};

/* flags */
#define HB_PKNOB_SHARED_ONLY 1u /* the option means something only when jobs share a cluster: sim refuses it
				   without --trace or --synthetic */

/* One option of a policy.  A table is an array of these ended by a NULL name. */
struct hb_pknob {
	const char *name;          /* the command-line option without its dashes ("elastic-interval"), also the
				      label of the table header; NULL ends a table */
	const char *key;           /* its key in results: knobs_json, summary.json ("elastic_interval_s") */
	const char *sweep;         /* its key in a sweep configuration's "knobs" ("elastic_interval"); NULL: not
				      settable there */
	int type;                  /* enum hb_pknob_type */
	size_t offset;             /* offsetof its field in the policy's options struct: a double for DOUBLE,
				      an int otherwise */
	double min, max;           /* DOUBLE, INT: the accepted range, both ends included */
	const char *unit;          /* DOUBLE, INT: the unit shown after the value in results ("s": "600 s");
				      NULL: none */
	const char *what;          /* DOUBLE, INT: the value as errors name it ("a number of seconds");
				      NULL: "a number" or "an integer" */
	const char *const *words;  /* WORDS: the accepted words, NULL-terminated; the value is the index */
	const char *metavar;       /* DOUBLE, INT: the value's name in --help ("S") */
	const char *help;          /* one paragraph for --help (wrapped there); says the default */
	unsigned flags;            /* HB_PKNOB_* flags */
};

/* A policy's options: its knobs and the struct they describe. */
struct hb_pknob_table {
	const struct hb_pknob *knobs; /* NULL-name terminated */
	size_t size;                  /* sizeof the options struct the offsets point into */
	const void *defaults;         /* a struct of that type holding every default (the single source: the
					 policy reads it when a run has no options) */
};

/* ---- the plugin --------------------------------------------------------- */

/* One policy of a plugin: an arbiter, the built-in agent its jobs run, and
 * the options it owns. */
struct hb_plugin_policy {
	const char *name;        /* as --policy names it: [a-z0-9-], unique among all policies */
	const char *summary;     /* one line for `sim --help` */
	/* The built-in policy whose job agent this policy's jobs run: "fifo"
	 * (each job keeps its requested GPUs and batch: the TunedJobs setting
	 * of Pollux's study), "pollux" (goodput-driven batch inside the grant),
	 * or any other built-in policy name. */
	const char *agent_of;
	const struct hb_arbiter_ops *arbiter;
	/* Its options: the struct the knobs describe, their defaults; NULL:
	 * none.  Each knob is a `sim` option (--NAME) and a results key, as a
	 * built-in policy's are; names must not clash with any other option. */
	const struct hb_pknob_table *options;
};

struct hb_plugin {
	int api_version;         /* HB_POLICY_API_VERSION the plugin was built against */
	const char *name;        /* the plugin's own name, for messages */
	const struct hb_plugin_policy *policies; /* NULL-name terminated, at least one */
	/* Where hetbatch stores its function table before calling into the
	 * plugin (HB_PLUGIN_API below declares it). */
	const struct hb_policy_api **api;
};

/* ---- what a plugin may call ----------------------------------------------- */

struct hb_policy_api {
	int version;             /* HB_POLICY_API_VERSION of the host */
	/* Simulated time now, s. */
	double (*now)(const struct hb_sim *sim);
	/* The cluster: nodes, GPUs per node, GPUs not granted to any job, and
	 * GPUs online now (the cluster's, less what a --capacity series has
	 * withdrawn). */
	int (*nnodes)(const struct hb_sim *sim);
	int (*node_gpus)(const struct hb_sim *sim, int node);
	int (*node_free)(const struct hb_sim *sim, int node);
	int (*cluster_gpus)(const struct hb_sim *sim);
	int (*online_gpus)(const struct hb_sim *sim);
	/* Jobs, by id 0..njobs-1. */
	int (*njobs)(const struct hb_sim *sim);
	struct hb_sim_job *(*job)(struct hb_sim *sim, int id);
	int (*job_id)(const struct hb_sim_job *job);
	const char *(*job_name)(const struct hb_sim_job *job);
	int (*job_state)(const struct hb_sim_job *job);      /* enum hb_job_state */
	double (*job_arrival_s)(const struct hb_sim_job *job);
	/* GPUs the job asks for: its request, or the largest node's count. */
	int (*job_gpus)(const struct hb_sim *sim, const struct hb_sim_job *job);
	/* GPUs it holds now (its grant). */
	int (*job_held)(const struct hb_sim_job *job);
	/* GPU-seconds it has held up to now, restarts included (Tiresias's
	 * attained service). */
	double (*job_attained_gpu_s)(const struct hb_sim *sim, const struct hb_sim_job *job);
	/* Fraction of its training done, in [0, 1]. */
	double (*job_progress)(const struct hb_sim_job *job);
	/* Gang placement of n GPUs on the free pool, fewest nodes first: 1
	 * with grant (nnodes entries) filled, or 0 when n GPUs are not free. */
	int (*place)(const struct hb_sim *sim, int n, int *grant);
	/* Start a PENDING job on grant (GPUs per node, all free). */
	int (*start_job)(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err);
	/* Change a started job's grant (charged as a restart); an all-zero
	 * grant suspends it, a grant on a suspended job resumes it. */
	int (*regrant)(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err);
	/* Reject a PENDING job that has arrived: it never runs. */
	int (*drop_job)(struct hb_sim *sim, struct hb_sim_job *job, const char *why, struct hb_error *err);
	/* Record an event of the job in the run's results (kind: up to 15
	 * characters; text: one line). */
	void (*note)(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *text);
	/* Fill err with a message (the run stops with it); returns -1. */
	int (*error)(struct hb_error *err, const char *msg);
};

/* In the plugin's one source file (or one of them, with the others
 * declaring `extern const struct hb_policy_api *hb;`): the API pointer the
 * host fills, and the exported descriptor naming the policy table. */
#define HB_PLUGIN_API const struct hb_policy_api *hb
#define HB_PLUGIN_EXPORT(plugin_name, policy_table)                                                          \
	__attribute__((visibility("default"))) const struct hb_plugin hetbatch_plugin = {                    \
		HB_POLICY_API_VERSION, (plugin_name), (policy_table), &hb                                    \
	}

#ifdef __cplusplus
}
#endif

#endif
