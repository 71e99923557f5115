/*
 * hetbatch.h: hetbatch's C API for embedding (the Python package's shared
 * object, python/): the catalog, plans, simulations of one job and of a
 * trace, sweeps and result sets, called from another program instead of
 * the `hetbatch` executable.
 *
 * What it is: each call runs the same subcommand code as the executable
 * (cli/), with the options it is given, inside the calling process; so a
 * call and the command line give the same numbers and the same files.
 * What a call prints (a JSON document, its tables) is kept in the handle
 * (hetbatch_output), its warnings and notes too (hetbatch_log), and an
 * error is its message and code (hetbatch_errmsg, hetbatch_errcode), the
 * line the command would print after "hetbatch: error: ".  Results that
 * are files (sim, sweep) go to an output directory in the layout of
 * docs/outputs.md, which the caller reads (results.db is SQLite).
 *
 * Rules:
 *   - Every call that can fail returns HETBATCH_OK (0) or HETBATCH_ERR (-1)
 *     and then fills the handle's message; nothing is printed on the
 *     process's stdout or stderr while a call runs (they are the handle's).
 *   - Strings are UTF-8, NUL-terminated, owned by the caller on input; those
 *     returned point into the handle and stay valid until its next call.
 *   - opts: further command-line options of the subcommand, a NULL-terminated
 *     array of strings (e.g. {"--load", "2", "--events", "summary", NULL}),
 *     or NULL for none; `hetbatch SUBCOMMAND --help` documents them.
 *   - Calls are serialised process-wide (a mutex): the commands share stdio
 *     and getopt's state, so two threads calling at once take turns.  A
 *     binding may run a call without holding its own interpreter lock.
 *   - SIGINT, SIGTERM and SIGHUP stop a long call at a safe point, as they
 *     stop the command (common/interrupt.h): it returns HETBATCH_ERR with
 *     code HETBATCH_EINTR.  The caller's signal handlers are put back when
 *     every call returns.
 */
#ifndef HETBATCH_H
#define HETBATCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HETBATCH_OK 0   /* a call succeeded */
#define HETBATCH_ERR -1 /* a call failed: hetbatch_errmsg says why */

/* hetbatch_errcode's values (common/error.h's enum hb_code). */
#define HETBATCH_ERUNTIME 1 /* the work failed: I/O, SQLite, numerics, no solution */
#define HETBATCH_EINPUT 2   /* bad options or input data: fix them and retry */
#define HETBATCH_EINTR 3    /* stopped by SIGINT, SIGTERM or SIGHUP */

/* A session: the seed, what the last call printed, its error. */
typedef struct hetbatch hetbatch;

/* A new session (seed 1, the command's default); NULL when out of memory.
 * hetbatch_close frees it (NULL is allowed). */
hetbatch *hetbatch_open(void);
void hetbatch_close(hetbatch *h);

/* "0.1.0": the version of the library (as `hetbatch version`). */
const char *hetbatch_version(void);

/* The seed of every random stream of the calls that follow (the global
 * option --seed N), in [0, 2147483647]; -1 outside it. */
int hetbatch_set_seed(hetbatch *h, long seed);

/* The last call's error: its message ("" after a success) and code
 * (HETBATCH_EINPUT, ...; 0 after a success). */
const char *hetbatch_errmsg(const hetbatch *h);
int hetbatch_errcode(const hetbatch *h);

/* What the last call printed on its standard output (a JSON document for
 * catalog and plan; sim's and sweep's tables) and its length in bytes. */
const char *hetbatch_output(const hetbatch *h);
size_t hetbatch_output_len(const hetbatch *h);
/* What it printed on standard error besides the error: warnings, notes,
 * "results in DIR".  "" when it printed nothing. */
const char *hetbatch_log(const hetbatch *h);

/* The catalog: kind "gpus", "models" or "clusters"; name NULL for all of
 * them ({"gpus": [...]}), else one entry (a name, an alias or a JSON
 * file) as one object.  JSON in hetbatch_output (`catalog KIND --json`). */
int hetbatch_catalog(hetbatch *h, const char *kind, const char *name);

/* A plan for one job: cluster and model (names or JSON files), global
 * batch gbs > 0.  The plan document of docs/plan-format.md in
 * hetbatch_output (`plan --cluster C --model M --gbs N --json`). */
int hetbatch_plan(hetbatch *h, const char *cluster, const char *model, long gbs, const char *const *opts);

/* One job on a dedicated cluster under each policy: models and policies
 * are comma-separated lists (policies NULL: the command's default set);
 * the result set is written to the directory out (`sim --cluster C
 * --model M --policy P --out DIR`). */
int hetbatch_sim_job(hetbatch *h, const char *cluster, const char *models, const char *policies, const char *out,
		     const char *const *opts);

/* A job trace on a shared cluster under each policy: trace is a trace
 * file, or NULL with opts naming --synthetic KIND; seed and load among
 * opts; the result set goes to out (`sim --cluster C --trace F --out DIR`). */
int hetbatch_sim_trace(hetbatch *h, const char *cluster, const char *trace, const char *policies, const char *out,
		       const char *const *opts);

/* A sweep: config is a sweep JSON file (docs/sweep.md); its result set
 * goes to out (`sweep CONFIG --out DIR`). */
int hetbatch_sweep(hetbatch *h, const char *config, const char *out, const char *const *opts);

/* Check that dir is a complete result set of sim or sweep (its results.db
 * opens and names its layout); hetbatch_output is then the layout's
 * name, "hetbatch-sim-results/1" or the sweep's. */
int hetbatch_results(hetbatch *h, const char *dir);

/* Any subcommand: argv[0] its name, then its options, NULL-terminated
 * (e.g. {"forecast", "trace.csv", NULL}).  For what the calls above do not
 * name; its output and errors are kept as theirs. */
int hetbatch_command(hetbatch *h, const char *const *argv);

/* Policies the embedding program defines in memory (the Python package's
 * hetbatch.register_policy): pl is a descriptor of hetbatch/policy.h, as
 * a plugin file exports, whose callbacks are the program's; its policies
 * join the registry, with the checks a --policy-plugin file gets, until
 * hetbatch_unregister_policies(h, pl) or the process's end, so that every
 * later call (sim, sweep, catalog's policy list) runs them beside the
 * built-in ones.  origin names the definition in messages and in results'
 * policy_plugins ("python:las.py:LAS").  pl and everything it points to
 * must stay valid while registered.  Neither may be called from inside a
 * running call (a policy's callback): that fails with HETBATCH_EINPUT, as
 * does any call made from there. */
struct hb_plugin;
int hetbatch_register_policies(hetbatch *h, const struct hb_plugin *pl, const char *origin);
int hetbatch_unregister_policies(hetbatch *h, const struct hb_plugin *pl);

#ifdef __cplusplus
}
#endif

#endif
