/*
 * live_policy.h: the plumbing of an adaptive live run (`hetbatch live
 * --policy NAME`): the run's knobs, the state a relaunch carries, the
 * measured inputs, and the live plans its decisions become.
 *
 * The decisions are the registry's agents' (sim/policies/policy.h), made
 * through the live backend (live_agent.h) from what the ranks measure:
 * every block of iterations, its time and the similarity of the two
 * halves of the workers at its end (live.h hb_live_metric).  Any registry
 * policy whose agent can run live is accepted (hb_live_policy_parse).
 *
 * State across relaunches.  A relaunch is a new process, so the agent is
 * rebuilt there: a fresh agent of the same seed is started and every block
 * measured so far (struct hb_live_block: iterations, seconds, similarity,
 * in the state file) is replayed into it; the agents are deterministic, so
 * it makes the decisions it made before and continues live from there.
 * The allocation and batch it arrives at are checked against the state's
 * (a mismatch is an error naming both).  Nothing of an agent's own state is
 * serialised, so every agent relaunches the same way; the price is that a
 * relaunch makes every decision of the run again (milliseconds each,
 * JABAS's forecasts included).
 */
#ifndef HB_LIVE_POLICY_H
#define HB_LIVE_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "catalog.h"
#include "error.h"
#include "live.h"
#include "live_agent.h"

#define HB_LIVE_MAX_NODES 64

/* The run's knobs; the model's values (on this cluster) unless the command
 * line says. */
struct hb_live_policy_params {
	const struct hb_policy *policy; /* the registry's, one that runs live */
	long p;                  /* adaptation interval, iterations */
	double gamma, alpha;     /* similarity threshold, adaptive rate */
	long min_gbs, max_gbs;   /* global batch bounds */
	long init_gbs;           /* the job's requested B_G (--gbs; 0: none): what an agent that takes a
				    request runs (static); the adaptive agents start at min_gbs */
	double dataset;          /* samples per epoch */
	long epochs;             /* epochs to train */
	uint64_t seed;           /* the agent's streams (its forecaster's restarts) derive from it */
};

/* One measured block of iterations: what the agent is told (and told again
 * on a relaunch). */
struct hb_live_block {
	long iters;              /* iterations in it */
	double elapsed_s;        /* measured: sum over its iterations of the slowest rank's time */
	double similarity;       /* measured at its end (an adaptation point), else NAN */
};

/* What a relaunch carries (the state file, live_segment.h). */
struct hb_live_pstate {
	int nnodes;
	int alloc[HB_LIVE_MAX_NODES]; /* GPUs per cluster node */
	long global_bs;          /* realised B_G now */
	long iteration;          /* iterations done */
	long epoch;              /* epochs done */
	double epoch_samples;    /* samples into the current epoch */
	struct hb_live_block *blocks; /* every block so far, all launches */
	size_t nblocks, cap_blocks;
};

void hb_live_pstate_free(struct hb_live_pstate *s);
int hb_live_pstate_add_block(struct hb_live_pstate *s, const struct hb_live_block *b, struct hb_error *err);

struct hb_live_policy {
	struct hb_live_policy_params par;
	struct hb_catalog *cat;  /* the run's copy: its model's entry is the run's model (live_agent.h) */
	const struct hb_cluster *cl;
	struct hb_model model;   /* the catalog model with the run's knobs, dataset and batch bounds */
	char profiles[512];
	struct hb_live_agent agent; /* the policy's agent, driven */
	int started;             /* the agent has made its first decision (and replayed the state's blocks) */
};

const char *hb_live_policy_name(const struct hb_live_policy *pol);
/* The registry policy named name (any case) when its agent can run live;
 * else an input error saying why (unknown: the names that run live). */
int hb_live_policy_parse(const char *name, const struct hb_policy **p, struct hb_error *err);
/* The policies that run live, one per line ("  NAME  summary"), then those
 * refused with the reason: generated from the registry for --help. */
void hb_live_policy_list(FILE *out);

/* Open the policy's agent for model m (the catalog entry of its name
 * becomes the run's) on cluster cl with the profiles in dbpath.  par's
 * zero fields take the model's values on cl (p, gamma, alpha, bounds,
 * dataset). */
int hb_live_policy_open(struct hb_live_policy *pol, struct hb_catalog *cat, const struct hb_cluster *cl,
			const struct hb_model *m, const char *dbpath, const struct hb_live_policy_params *par,
			struct hb_error *err);
void hb_live_policy_close(struct hb_live_policy *pol);

/* The driver's start: the agent's first decision into st (zeroed by the
 * caller): allocation and B_G; why says how they were chosen.  Before it,
 * a dry run of a second agent through the whole run (the predicted
 * iteration times, no similarity measured): an
 * agent that needs what a live run does not measure, or applies a
 * configuration no rank executes, is refused then (HB_EINPUT), before any
 * launch, rather than at that point of the run. */
int hb_live_policy_start(struct hb_live_policy *pol, struct hb_live_pstate *st, char *why, size_t whylen,
			 struct hb_error *err);
/* A launch's start: the agent rebuilt from st's blocks (started, then every
 * block replayed), checked against st, and its configuration as a plan. */
int hb_live_policy_config(struct hb_live_policy *pol, struct hb_live_pstate *st, struct hb_live_plan *out,
			  struct hb_error *err);
/* The next block: its iterations, and *adapt = 1 when it ends at an
 * adaptation point (the ranks then measure the similarity). */
long hb_live_policy_next(const struct hb_live_policy *pol, int *adapt);

/* What a block led to (hb_live_policy_block). */
enum hb_live_action {
	HB_LIVE_CONTINUE = 0,    /* the same configuration goes on */
	HB_LIVE_INPLACE = 1,     /* a new configuration on the same GPUs: *next holds it */
	HB_LIVE_MOVE = 2,        /* another allocation (st->alloc): checkpoint and relaunch */
	HB_LIVE_DONE = 3,        /* every epoch trained */
};

/* Block b ran: the agent hears it (st and its blocks follow); *action
 * says what comes next, *next (caller frees) for HB_LIVE_INPLACE; why gets
 * the agent's words on it. */
int hb_live_policy_block(struct hb_live_policy *pol, struct hb_live_pstate *st, const struct hb_live_block *b,
			 int *action, struct hb_live_plan *next, char *why, size_t whylen, struct hb_error *err);

#endif
