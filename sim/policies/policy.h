/*
 * policy.h: the built-in policies: the job agents and cluster arbiters of
 * sim/policies/NAME/ (one folder per policy), and the registry that names
 * each policy an (agent, shared arbiter) pair.  The engine (sim.h) defines
 * the function tables they fill and the dedicated arbiter; it never names a
 * policy.  `--policy` parsing and the help text are generated from
 * hb_policies (policy.c), for sim and for live runs, which drive the same
 * agents (live/live_agent.h).
 *
 * Adding a policy: its folder sim/policies/NAME/ with its agent or arbiter
 * filling struct hb_agent_ops / struct hb_arbiter_ops and a meson.build
 * adding its files to hb_src, its name in sim/policies/meson.build, its
 * extern below and its row in policy.c.  Its options, if any: a struct of
 * its own, its defaults and knob table (policy_knob.h) in its folder
 * (elastic/elastic_opts.c is one), the table's extern below and in its
 * row; `sim`'s options and --help, sweep configurations and the knob rows
 * of results then take them from the table.
 *
 * State follows the tables' lifecycle (sim.h): what a policy keeps for the
 * run is made by its init (from sim->policy_opts, its options) and released
 * by its free, and every callback gets it as its second argument; an
 * arbiter's per-job arrays may be sized by sim->njobs in init, which runs
 * once every job is added.  A job's own agent state lives in
 * job->agent_state, released by free_job.  Variants of one policy (a flag
 * apart) each have their own init; no callback makes state on first use.
 */
#ifndef HB_POLICY_H
#define HB_POLICY_H

#include "policy_knob.h" /* struct hb_pknob_table, struct hb_pknob_settings */
#include "sim.h"         /* struct hb_agent_ops, struct hb_arbiter_ops */

/* ---- agents (sim/policies/NAME/agent_*.c) ------------------------------------- */

extern const struct hb_agent_ops hb_agent_static;
extern const struct hb_agent_ops hb_agent_simigrad;
extern const struct hb_agent_ops hb_agent_jabas;
extern const struct hb_agent_ops hb_agent_pollux;
extern const struct hb_agent_ops hb_agent_pollux_as;
extern const struct hb_agent_ops hb_agent_optperf;
/* LB-BSP: fixed batch, Δ-step re-balancing per epoch (agent_lbbsp.c). */
extern const struct hb_agent_ops hb_agent_lbbsp;
extern const struct hb_agent_ops hb_agent_elastic;
/* IBM IV-B fixed-batch baseline under the elastic arbiter, one agent per batch
 * setting (agent_elastic_fixed.c): the job's own, Max-BS, Min-BS, Random-BS. */
extern const struct hb_agent_ops hb_agent_elastic_fixed;
extern const struct hb_agent_ops hb_agent_elastic_fixed_max;
extern const struct hb_agent_ops hb_agent_elastic_fixed_min;
extern const struct hb_agent_ops hb_agent_elastic_fixed_random;
/* EasyScale: maxP ESTs at a fixed global batch on its arbiter's grant
 * (agent_easyscale.c, easyscale.h). */
extern const struct hb_agent_ops hb_agent_easyscale;

/* ---- cluster arbiters (sim/policies/NAME/arbiter_*.c) ----------------------- */

/* fifo: jobs start in submission order with their requested GPU count, all
 * or nothing (gang), packed on the fewest nodes; the queue head blocks the
 * jobs behind it.  (dedicated, every job on the whole cluster, is the
 * engine's own: sim.h.) */
extern const struct hb_arbiter_ops hb_arbiter_fifo;
extern const struct hb_arbiter_ops hb_arbiter_pollux;
extern const struct hb_arbiter_ops hb_arbiter_tiresias;
extern const struct hb_arbiter_ops hb_arbiter_optimus;
/* jabas-share: FIFO admission of GPU pairs; at its epoch ends a JABAS job
 * re-chooses its GPUs inside an offer (free GPUs lent while nobody waits,
 * back to its request when somebody does); sim/policies/jabas/arbiter_jabas.c. */
extern const struct hb_arbiter_ops hb_arbiter_jabas;
extern const struct hb_arbiter_ops hb_arbiter_elastic;
/* EasyScale's inter-job scheduler: 60 s rounds, no gang, homogeneous
 * increments granted by speedup per GPU; _homo holds every job to one GPU
 * type (arbiter_easyscale.c). */
extern const struct hb_arbiter_ops hb_arbiter_easyscale;
extern const struct hb_arbiter_ops hb_arbiter_easyscale_homo;
/* yarn-cs: FIFO with gang scheduling, each job on GPUs of one type
 * (arbiter_yarn_cs.c). */
extern const struct hb_arbiter_ops hb_arbiter_yarn_cs;
/* Sia: 60 s rounds, one configuration (GPU type, nodes, GPUs) per job by
 * the integer program of solver/sia_mip.h over the Pollux agents' goodputs
 * (sim/policies/sia/arbiter_sia.c). */
extern const struct hb_arbiter_ops hb_arbiter_sia;
/* Gavel: 360 s rounds realising the time fractions of its heterogeneity-
 * aware max-min fairness LP (solver/gavel_lp.h), of its max-sum-throughput
 * LP (_tput), or of its FIFO heuristic (_fifo), by priority = fraction
 * wanted / fraction received; jobs keep their GPU count and batch
 * (sim/policies/gavel/arbiter_gavel.c). */
extern const struct hb_arbiter_ops hb_arbiter_gavel;
extern const struct hb_arbiter_ops hb_arbiter_gavel_tput;
extern const struct hb_arbiter_ops hb_arbiter_gavel_fifo;
extern const struct hb_arbiter_ops hb_arbiter_gavel_ftf;

/* ---- the policies' options (NAME/NAME_opts.c, policy_knob.h) ------------------ */

/* IBM elastic autoscaler: --elastic-interval, --elastic-drop (elastic_opts.h). */
extern const struct hb_pknob_table hb_elastic_knobs;
/* EasyScale's agent: --easyscale-comm, --easyscale-restart (easyscale_opts.h). */
extern const struct hb_pknob_table hb_easyscale_knobs;
/* YARN-CS: --yarn-head-only (yarn_cs_opts.h). */
extern const struct hb_pknob_table hb_yarn_cs_knobs;

/* ---- the registry (policy.c) ------------------------------------------------ */

/* The (agent, shared arbiter) a policy runs under a fidelity mode (enum
 * hb_fidelity): its own, or the artifact's mechanics where the mode has
 * them (--fidelity easyscale: easyscale, easyscale-homo, yarn-cs run
 * easyscale_artifact.h).  0, or -1 when the mode has none for the policy
 * (*why then names the policies it has). */
struct hb_policy;
int hb_policy_fidelity(const struct hb_policy *p, int fidelity, const struct hb_agent_ops **agent,
		       const struct hb_arbiter_ops **shared, const char **why);

struct hb_policy {
	const char *name;             /* "jabas" */
	const struct hb_agent_ops *agent;
	/* Arbiter when jobs share a cluster (trace replay); NULL: the policy
	 * only runs single jobs on a dedicated cluster so far. */
	const struct hb_arbiter_ops *shared;
	const char *summary;
	/* Its options (policy_knob.h): the struct its agent and arbiter read
	 * from hb_sim.policy_opts; NULL: none.  Rows that run the same agent
	 * or arbiter share one table. */
	const struct hb_pknob_table *options;
	const char *origin;           /* NULL: built in; else the plugin file that defined it (plugin.h) */
};

/* Table of built-in policies; NULL-name terminated.  In single-job studies
 * every policy runs under the dedicated arbiter; in trace replay under its
 * `shared` arbiter. */
extern const struct hb_policy hb_policies[];
/* The registry: the built-in policies, then those of the plugins this
 * process loaded (plugin.h), in load order.  hb_policy_at(i) for i from 0
 * is each in turn, NULL past the last, so a loop over every policy is
 * `for (int i = 0; (p = hb_policy_at(i)); i++)`. */
const struct hb_policy *hb_policy_at(int i);
/* The policy after p in that order, NULL after the last:
 * `for (p = hb_policy_at(0); p; p = hb_policy_next(p))`. */
const struct hb_policy *hb_policy_next(const struct hb_policy *p);
/* The policy named name, in any case ("JABAS" is jabas); NULL if none. */
const struct hb_policy *hb_policy_find(const char *name);
/* Append n policies (checked by the caller, plugin.c) to the registry; p
 * must outlive them.  Drop them all again: hb_policy_unregister_plugins. */
int hb_policy_register(const struct hb_policy *p, int n, struct hb_error *err);
void hb_policy_unregister_plugins(void);
/* Drop the one block that hb_policy_register was given as p (and free it). */
void hb_policy_unregister(const struct hb_policy *p);
/* For an unknown name: "; did you mean 'jabas'?" (the closest policy names
 * by edit distance), or "" when none is close.  Returns buf. */
char *hb_policy_suggest(const char *name, char *buf, size_t size);

/* ---- the knobs of every policy (policy_knob.c over the registry) ------------ */

/* The i-th distinct knob of the registry (0, 1, ...): the knobs of each
 * row's table in row order, a name met before skipped; NULL past the last.
 * *table (may be NULL) gets the table it was found in. */
const struct hb_pknob *hb_policy_knob(int i, const struct hb_pknob_table **table);
/* The knob whose option name is name ("elastic-interval"), as above; NULL if none. */
const struct hb_pknob *hb_policy_knob_find(const char *name, const struct hb_pknob_table **table);
/* The options p runs with: its defaults with the settings s of its knobs
 * applied, in *opts, malloc'd (the caller frees it after the run, and
 * lends it to the run as hb_sim.policy_opts); *opts NULL when p has no
 * options.  -1 (runtime error) when out of memory. */
int hb_policy_opts_new(const struct hb_policy *p, const struct hb_pknob_settings *s, void **opts,
		       struct hb_error *err);

#endif
