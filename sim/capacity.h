/*
 * capacity.h: GPUs that come and go (sim --capacity FILE; EasyScale §5.3,
 * notes/easyscale.md §5.2 "Capacity fluctuation").
 *
 * The file is a CSV with a header and one row per change:
 *
 *   time_s,gpu,available
 *   600,v100-32gb,16
 *   1800,v100-32gb,32
 *
 * From time_s on, `available` GPUs of that catalog GPU type are online
 * (0 to the cluster's count of the type); the others are withdrawn, for
 * instance to online serving.  Rows are in non-decreasing time; types not
 * named keep all their GPUs.  Any error names the file, line, field and
 * value.
 *
 * Applied by the engine (sim.c calls hb_capacity_apply at each row's time,
 * before arrivals and rounds at the same instant), to every policy alike:
 *  - a withdrawal takes free GPUs of the type first (nodes with the most
 *    free GPUs first, ties to the higher index); for the rest it takes busy
 *    GPUs from the type's nodes, highest index first (whole servers going
 *    back to serving), and asks the arbiter to shrink jobs there
 *    (on_revoke: the elastic policies); then it preempts, most recently
 *    started first, every job still holding a GPU it needs (gang and
 *    fixed-size jobs cannot run on fewer), and no other: that job's other
 *    GPUs return to the pool.  A preempted job keeps its progress (it is
 *    checkpointed, then restarts with the simulator's restart cost) and
 *    goes back to its arbiter's queue (on_requeue), or, for an arbiter
 *    without one, waits in the engine's own queue until its GPU count is
 *    free;
 *  - a return brings the type's withdrawn GPUs back, lowest node index
 *    first, and tells the arbiter (on_capacity).
 * The run counts preemptions (jobs killed and requeued: a gang job's
 * "failure on revocation", §2.1's 61.7 % statistic) and shrinks (elastic
 * jobs scaled in and running on).
 */
#ifndef HB_CAPACITY_H
#define HB_CAPACITY_H

#include "catalog.h"
#include "error.h"

struct hb_sim;

/* One change of the series. */
struct hb_capacity_row {
	double t;                /* s */
	int gpu;                 /* catalog GPU index */
	int available;           /* GPUs of the type online from t on */
	long line;               /* line in the file, for messages */
};

/* The series and what the run did with it (owned by struct hb_sim). */
struct hb_capacity {
	struct hb_capacity_row *rows; /* in time order */
	int nrows;
	int *offline;            /* per node: GPUs withdrawn now */
	int *parked;             /* ids of preempted jobs the engine itself resumes, in preemption order */
	int nparked;
	long preemptions;        /* jobs preempted by withdrawals */
	long shrinks;            /* jobs a withdrawal scaled in that kept running */
	long withdrawn_gpus;     /* GPUs withdrawn in all (sum over rows of the decreases) */
};

/* Read path for cluster cl (every named GPU type must be one of its types). */
int hb_capacity_load(const char *path, const struct hb_catalog *cat, const struct hb_cluster *cl,
		     struct hb_capacity *cap, struct hb_error *err);
void hb_capacity_free(struct hb_capacity *cap);

/* Queue the rows' events (at the start of hb_sim_run). */
int hb_capacity_schedule(struct hb_sim *sim, struct hb_error *err);
/* Apply row k now. */
int hb_capacity_apply(struct hb_sim *sim, int k, struct hb_error *err);
/* Resume the engine-queued preempted jobs whose GPU count is free now (after
 * every event that may free GPUs); a no-op without a capacity series. */
int hb_capacity_resume(struct hb_sim *sim, struct hb_error *err);

#endif
