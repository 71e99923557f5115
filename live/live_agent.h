/*
 * live_agent.h: the live backend of the engine's job agents: one job of a
 * live run hosted in a driven simulation (sim.h hb_sim_drive) on the
 * dedicated cluster, whose agent (the registry's, sim/policies/policy.h)
 * decides from the measured similarity and the live run's iterations and
 * epochs; what it applies is read back as a live plan.
 *
 * Contract.  Open with the run's model (the catalog entry of its name
 * becomes it, without per-cluster overrides, so the agent reads exactly the
 * run's interval, gamma, alpha, bounds and dataset), start, then report
 * every block of iterations (hb_live_agent_block): the engine counts the
 * epoch ends and adaptation points, and the agent's callbacks run for them
 * in the event loop's order.  The agent's own state lives only here; a
 * relaunch rebuilds it by replaying the blocks measured so far into a fresh
 * agent (live_policy.h), which, being deterministic for one seed, makes the
 * same decisions again.
 *
 * Which agents run live (hb_live_agent_refusal): those whose decisions need
 * nothing but a start, adaptation points with the measured similarity and
 * epoch ends on a dedicated cluster.  Refused before the run: an agent with
 * periodic rounds (the live driver fires none), and a policy whose agent is
 * another policy's (on a dedicated cluster the arbiter that makes it
 * different never decides).  Refused when its first decision shows it: an
 * agent that reads the simulated noise scale (hb_sim_drive_missing), or
 * whose configuration is not one a live rank executes (schedule.h reads
 * IIDP, DDP and OptPerf layouts).
 */
#ifndef HB_LIVE_AGENT_H
#define HB_LIVE_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "live.h"
#include "policy.h"   /* struct hb_policy */
#include "sim.h"

struct hb_live_agent {
	const struct hb_policy *policy; /* the registry's */
	const struct hb_catalog *cat;   /* borrowed */
	const struct hb_cluster *cl;    /* borrowed */
	struct hb_profdb *db;           /* the profiles, owned */
	struct hb_sim sim;              /* driven (hb_sim_drive), one job */
	int inited;                     /* sim is initialised */
	struct hb_sim_job *job;         /* sim's only job (NULL before open ends) */
	size_t seen;                    /* events of sim read into a decision's words */
};

/* NULL when policy p's agent can run live; else why not (in buf). */
const char *hb_live_agent_refusal(const struct hb_policy *p, char *buf, size_t size);

/* Open the backend of policy p for the run's model m (copied into the
 * catalog entry of its name) on cluster cl with the profiles in dbpath:
 * seed seeds the agent's streams, p_iters is the adaptation interval and
 * req_gbs (0: none) the job's requested global batch, as a trace's. */
int hb_live_agent_open(struct hb_live_agent *la, struct hb_catalog *cat, const struct hb_cluster *cl,
		       const struct hb_model *m, const char *dbpath, const struct hb_policy *p, uint64_t seed,
		       long p_iters, long req_gbs, struct hb_error *err);
void hb_live_agent_close(struct hb_live_agent *la);

/* The agent's first decision; why (may be NULL) gets its words. */
int hb_live_agent_start(struct hb_live_agent *la, char *why, size_t whylen, struct hb_error *err);

/* Iterations of the next block (to the next epoch end or adaptation point)
 * and whether it ends at an adaptation point (*adapt). */
long hb_live_agent_next(const struct hb_live_agent *la, int *adapt);

/* What a block led to. */
struct hb_live_step {
	int epoch_end;           /* the block ended an epoch */
	int adapt;               /* it reached an adaptation point */
	int changed;             /* the agent applied a configuration (read it with hb_live_agent_plan) */
	char why[256];           /* the agent's words on it, "" if none */
};

/* The job ran n iterations (<= hb_live_agent_next) in elapsed_s, measuring
 * similarity at its end (NAN: none).  The callbacks run unless stop_epochs
 * > 0 and the block ends epoch stop_epochs (the run is over then). */
int hb_live_agent_block(struct hb_live_agent *la, long n, double elapsed_s, double similarity, long stop_epochs,
			struct hb_live_step *step, struct hb_error *err);

/* The configuration in use as a live plan (the caller frees it). */
int hb_live_agent_plan(struct hb_live_agent *la, struct hb_live_plan *out, struct hb_error *err);

/* The job (read-only: iterations, epochs, configuration). */
const struct hb_sim_job *hb_live_agent_job(const struct hb_live_agent *la);

#endif
