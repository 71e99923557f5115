/*
 * live_driver.h: the driver of adaptive live runs: a loop around mpirun.
 *
 * The driver (the `hetbatch live --policy P` process that no launcher
 * started; `live --schedule` has one too, cli/live_schedule.c) takes the
 * policy's first decision, then launches segments (live_segment.h), each
 * `LAUNCHER -np <GPUs> hetbatch --seed S live <the same options> --segment
 * IN --segment-out OUT`, until one says the run is done.  After each it rewrites DIR/trajectory.csv with every row so
 * far, so a failed launch keeps what was measured.  At the end it runs the
 * simulator on the same job (same policy, cluster, profiles, knobs, with
 * the measured batch trajectory replayed: `sim --replay`) and writes
 * DIR/schedule.csv (the replay file) and DIR/compare.csv (per block: the
 * live batch, GPUs, measured and predicted time beside the simulator's
 * batch, GPUs and iteration time at the same iteration, and both elapsed
 * times).
 */
#ifndef HB_LIVE_DRIVER_H
#define HB_LIVE_DRIVER_H

#include <stdint.h>

#include "live_segment.h"

struct hb_live_drive_opts {
	char self[4096];         /* this hetbatch executable (hb_live_drive_setup) */
	const char *launcher;    /* launcher command, split at spaces ("mpirun --oversubscribe") */
	char *const *args;       /* the live command's own arguments (after "live"), passed on */
	int nargs;
	uint64_t seed;
	int quiet;
	const char *dir;         /* run directory: state files, checkpoints, results */
	const char *dbpath;      /* the profile database the policy and the simulator read */
	int relaunch_always;
	int max_segments;        /* a policy that relaunches more often than this is stopped */
};

/* What a driver does before its first launch, for adaptive runs and
 * schedule replay alike: refuses to run under mpirun (the driver starts the
 * launcher itself, once per unit: the message names cmd and unit), finds
 * this executable (d->self) and makes d->dir/state, where the launches'
 * state files go. */
int hb_live_drive_setup(struct hb_live_drive_opts *d, const char *cmd, const char *unit, struct hb_error *err);

/* `LAUNCHER -np nranks SELF [-q] --seed S live ARGS EXTRA`, waited for;
 * a non-zero exit is a runtime error. */
int hb_live_launch(const struct hb_live_drive_opts *d, int nranks, char *const *extra, int nextra,
		   struct hb_error *err);

/* Run every segment; all receives every row and the final state. */
int hb_live_drive(const struct hb_live_drive_opts *d, struct hb_live_policy *pol, struct hb_live_segment *all,
		  struct hb_error *err);

/* DIR/trajectory.csv from the rows (atomic). */
int hb_live_write_trajectory(const char *dir, const struct hb_live_segment *all, struct hb_error *err);

/* The simulator on the same job with the rows' batch trajectory replayed:
 * DIR/schedule.csv and DIR/compare.csv.  *sim_s: the simulator's time to
 * the live run's last iteration. */
int hb_live_compare_sim(const char *dir, struct hb_live_policy *pol, const char *dbpath, uint64_t seed,
			const struct hb_live_segment *all, double *sim_s, struct hb_error *err);

#endif
