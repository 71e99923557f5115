/*
 * schedule.h: the configurations a simulator run gave one job, as live
 * plans (`hetbatch live --schedule RESULTS_DIR --job ID`).
 *
 * Every configuration a job is given is one "start", "reconfig" or
 * "restart" event in the run's results.db (sim/sim.c apply_note), whose
 * text ends in a suffix made to be read back:
 *   "...: LAYOUT; B_L 32, alloc node0=2 node1=2, iteration 3600, iter_s 14.33"
 * An IIDP layout (JABAS) gives each GPU's VSWs and GA steps:
 *   ['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VSW:2,GA:1']
 * (K GPUs of NODE, each with v VSWs and g extra GA steps at B_L).  An
 * OptPerf layout ("OptPerf B 226: fast:2x82-83 slow:2x30", Cannikin) is
 * one VSW per GPU without GA; with unequal local batches its B_L is 0 and
 * the suffix gives each GPU's batch after the alloc, per alloc node, a
 * node's GPUs comma-separated:
 *   "; B_L 0, alloc fast=2 slow=2, lbs fast=83,83 slow=30,30, iteration 0, iter_s 0.08"
 * Any other layout with B_L > 0 is data parallel ("DDP B_L 32 x 4 GPUs,
 * GA 0, ..."): every GPU of the alloc one VSW with the layout's GA steps.
 * B_L 0 without lbs (results of a hetbatch that did not record them) and
 * cut IIDP or DDP layouts ("...") are refused.
 */
#ifndef HB_LIVE_SCHEDULE_H
#define HB_LIVE_SCHEDULE_H

#include "catalog.h"
#include "error.h"
#include "live.h"

/* One configuration the simulator applied. */
struct hb_live_sched_cfg {
	long seq;                /* the event's seq in results.db */
	double t;                /* simulated time it was applied, s */
	double iteration;        /* the job's iterations done then */
	char kind[16];           /* "start", "reconfig" or "restart" */
	double sim_iter_s;       /* the simulator's iteration time, without per-iteration overheads, s */
	struct hb_live_plan plan; /* method "iidp", "ddp" or "optperf"; slots in cluster node order;
				   * pred_iter_s of the plan and of every slot = sim_iter_s; config = the
				   * layout text */
};

/* One job's configurations, in the order they were applied. */
struct hb_live_sched {
	char db[512];            /* the results.db read */
	int run_id;              /* the run in it */
	char policy[HB_NAME_MAX];
	char model[HB_NAME_MAX]; /* the job's model */
	char cluster[HB_NAME_MAX]; /* a catalog cluster */
	int job;
	struct hb_live_sched_cfg *cfgs; /* owned */
	int ncfgs;
};

/* Read job `job`'s configurations from `results`, a results directory
 * (DIR/results.db) or a results.db file, opened read-only.  policy NULL:
 * exactly one run may hold the job, else an input error listing the runs;
 * policy given: the one run of that policy holding it.  iidp_ows: the
 * weight-sync mode of IIDP configurations (1: overlapping), which the
 * caller takes from the perf model; DDP and OptPerf ones get 0.  Errors on
 * an event name the file, the event's seq, the field and what is wrong. */
int hb_live_schedule_load(const char *results, const char *policy, int job, const struct hb_catalog *cat,
			  int iidp_ows, struct hb_live_sched *out, struct hb_error *err);
void hb_live_schedule_free(struct hb_live_sched *s);

/* One configuration's text as apply_note writes it (the reason, then
 * "; B_G N, K GPUs, T s/iter: LAYOUT; B_L ..." with the suffix above) into
 * c->plan (slots, method, config, B_G, predictions; the caller names the
 * plan's model, cluster and profiles), c->iteration and c->sim_iter_s:
 * what a live run on the engine's agents executes (live_agent.c).  src
 * and seq name the configuration in messages ("SRC: event seq SEQ: ...");
 * the caller frees c->plan either way. */
int hb_live_schedule_config(const char *src, long seq, const struct hb_catalog *cat, const struct hb_cluster *cl,
			    const char *text, int iidp_ows, struct hb_live_sched_cfg *c, struct hb_error *err);

#endif
