/*
 * live_segment.h: one launch of an adaptive live run.
 *
 * An adaptive run (`hetbatch live --policy P`) is a driver loop around
 * mpirun (live_driver.c): each launch is a segment that runs on one
 * allocation, one MPI rank per GPU, until the policy moves to another
 * allocation at an epoch end (a checkpoint and a relaunch) or the run
 * ends.  Inside a segment, blocks of iterations end at the adaptation
 * points (every p iterations: the measured similarity goes to the policy,
 * which may change the configuration in place) and at epoch ends.
 *
 * The driver and the segment talk through a state file (JSON, written
 * atomically): the driver writes the policy state and the launch time;
 * rank 0 of the segment writes the state at its end, the trajectory rows
 * of the blocks it ran and why it ended.
 */
#ifndef HB_LIVE_SEGMENT_H
#define HB_LIVE_SEGMENT_H

#include "allreduce.h"
#include "live.h"
#include "live_policy.h"

/* One block of iterations of one configuration: a row of trajectory.csv. */
struct hb_live_row {
	int segment;             /* launch index, 0 first */
	long epoch;              /* epochs done before the block */
	long iteration;          /* first iteration of the block */
	int iters;               /* iterations in it */
	long global_bs;
	int ngpus;
	char alloc[160];         /* "node0=2 node1=2" */
	char method[16];         /* iidp or ddp */
	char config[256];        /* the policy's notation */
	double predicted_s;      /* perf model, critical path */
	double measured_s;       /* median over the block of the slowest rank's time */
	double sum_s;            /* sum over the block of the slowest rank's time */
	char change[16];         /* how the configuration started here: start, relaunch, inplace, or "" */
	double change_s;         /* its measured cost: launch + set-up + checkpoint load (start, relaunch;
				  * with the previous segment's checkpoint save), the rebuild (inplace) */
	double similarity;       /* measured at the block's end (an adaptation point), else NAN */
	double noise_scale;      /* measured with it, else NAN */
	double loss;             /* rank 0 VSW 0's loss at the block's last iteration */
	char decision[256];      /* what the policy decided after the block, "" if nothing */
};

struct hb_live_segment {
	char policy[16];
	int segment;             /* this launch's index */
	struct hb_live_pstate st;
	int done;                /* the run has trained every epoch */
	double spawn_wall;       /* wall clock (s since the epoch) when the driver launched it */
	double save_s;           /* the checkpoint save that ended the previous segment */
	char change[16];         /* "start" or "relaunch" */
	char ended[256];         /* why the segment ended */
	struct hb_live_row *rows;
	int nrows, cap_rows;
};

void hb_live_segment_free(struct hb_live_segment *s);
int hb_live_segment_add_row(struct hb_live_segment *s, const struct hb_live_row *r, struct hb_error *err);
int hb_live_segment_write(const char *path, const struct hb_live_segment *s, struct hb_error *err);
int hb_live_segment_read(const char *path, struct hb_live_segment *s, struct hb_error *err);
/* Wall clock in seconds since the epoch (launch costs span processes). */
double hb_live_wall_now(void);

/*
 * Run one segment on every rank of t.  pol and seg: rank 0's (the others
 * pass NULL); seg holds the state on entry and on return.  The ranks
 * continue from the checkpoint in ckpt_dir when seg->st.iteration > 0
 * (rank 0's file, whatever configuration wrote it) and leave one there
 * when the segment ends.  relaunch_always: relaunch at every epoch end,
 * even when the policy keeps its allocation (to measure the restart).
 */
int hb_live_segment_run(const struct hb_ar_team *t, const struct hb_catalog *cat, struct hb_live_policy *pol,
			const struct hb_live_opts *o, struct hb_live_segment *seg, const char *ckpt_dir,
			int relaunch_always, struct hb_error *err);

#endif
