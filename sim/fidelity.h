/*
 * fidelity.h: Pollux-fidelity mode (`sim --fidelity pollux`): the mechanics
 * of Pollux's own simulator (the osdi21-artifact branch of petuum/adaptdl,
 * simulator/ folder; notes/pollux.md §4.3 [ART]) where hetbatch's defaults
 * model the same thing differently.  Each item names what the artifact does
 * and where; hetbatch's default reading stays the default.
 *
 * Progress (simulator.py Job.step, applications.py):
 *   - a job advances in statistical epochs: epoch e ends when its progress
 *     (M0-iterations) reaches bound[e + 1] = the smallest cumulative
 *     "progress" after epoch e over the validation runs
 *     (Application.get_progress); it completes after max_epochs epochs
 *     (the catalog's target_epochs: the artifact's max_epochs, with
 *     target_metric None);
 *   - an iteration at global batch M in epoch e adds
 *         gain = (var + sqr) / (var / (M / M0) + sqr)
 *     M0-iterations, sqr and var read at row e of the two validation runs
 *     bracketing M and interpolated linearly in M (get_grad_stats), M0 the
 *     smallest validated batch;
 *   - progress is continuous within an epoch (rate gain / iteration time),
 *     and the time an epoch ends is rounded to whole seconds
 *     (`delta = round(...)`), where progress is set to the bound exactly.
 * In hetbatch units a job's progress is M0 x M0-iterations (M0-equivalent
 * samples), so E = gain M0 / M.
 *
 * Batch (Job.update_local_bsz, TunedJobs and the first Pollux start): for a
 * global batch B on n GPUs, local = ceil(B / n), s = ceil(local / max_local)
 * - 1 extra micro-steps (at least 1 on one GPU when B > M0), atomic =
 * ceil(local / (s + 1)), capped at floor(max_batch / (n (s + 1))); the
 * realised batch is n atomic (s + 1).
 *
 * Restarts: the 30 s rescale is charged on every allocation change,
 * including the first start (Job.reallocate), which is not counted as a
 * restart (num_restarts goes None -> 0).
 */
#ifndef HB_FIDELITY_H
#define HB_FIDELITY_H

#include "catalog.h"
#include "error.h"

struct hb_perf_measured;
struct hb_profdb;

enum hb_fidelity {
	HB_FIDELITY_NONE = 0,    /* hetbatch's own model (default) */
	HB_FIDELITY_POLLUX = 1,  /* Pollux's own simulator's mechanics */
	HB_FIDELITY_EASYSCALE = 2, /* EasyScale's artifact simulator (sim/policies/easyscale/easyscale_artifact.h) */
	HB_FIDELITY_SIA = 3,     /* Sia's own simulator's mechanics (below) */
};

/*
 * Sia fidelity (`sim --fidelity sia`): where Sia's simulator (SOSP'23,
 * github.com/siasosp23/artifacts, sia-simulator/; scripts/repro/sia-artifact
 * describes it) models a thing differently from hetbatch, and only there;
 * hetbatch's agents and performance model stay:
 *   - progress in the statistical epochs above where the profile database
 *     holds the model's validation runs (hb_fid_model_available), without
 *     Pollux's batch rule in the agents (sim.h, job->fid_agents);
 *   - a fixed batch split as Job.update_local_bsz does, with the
 *     placement's own largest measured local batch on its GPU type
 *     (hb_agent_sia_fixed_config), and Gavel's placer (arbiter_gavel.c,
 *     place_artifact);
 *   - a rescale of the application's own length (Application.__init__'s
 *     rescale_time, hb_fid_sia_rescale_s) on the first start and on every
 *     restart (job.py Job.reallocate, Job.migrate);
 *   - progress slowed by the application's calibration factor
 *     (simulator_config.py SLOWDOWNS, Job.calibration_factor: goodput x
 *     1 / SLOWDOWN in Job.step; hb_fid_sia_slowdown);
 *   - an arrival at a round's time takes part in that round (cluster.py
 *     Cluster.step: step, then schedule every job submitted by now);
 *   - no reconfiguration or GNS cost (Job.step charges neither);
 *   - Gavel's throughput is steps per second x 1 / SLOWDOWN, not samples
 *     per second (gavel.py GavelPolicy.predict_throughput), in its LP;
 *   - each GPU type's measured steps are looked up as the artifact does
 *     (applications.py Application.get_throughput, one Application per
 *     type: the placement by its least rotation, else the 3-D
 *     interpolation; hb_perf_measured_use_artifact on every type's set,
 *     sim.c).  Without the mode the same rows time one-type allocations
 *     with hetbatch's own fallback (hb_perf_measured_of, perfmodel.h);
 *   - PolluxSched is the heterogeneity-unaware Pollux Sia compares against
 *     (multi_simulator_unaware.py; sim/policies/pollux/pollux_vnodes.h):
 *     4-GPU virtual nodes, one throughput fit over every type, minority
 *     types dropped from each job's allocation.
 */

/* One validation run of the artifact: per-epoch statistics at one batch. */
struct hb_fid_run {
	int batch;
	int nepochs;
	double *progress;        /* cumulative M0-iterations after each epoch, owned */
	double *sqr, *var;       /* grad_sqr, grad_var per epoch, owned */
	double *iteration;       /* iterations after each epoch, owned */
};

/* One model's epoch schedule and gradient statistics. */
struct hb_fid_model {
	double m0;               /* smallest validated batch (the artifact's init_batch_size) */
	int max_epochs;          /* epochs of progress to completion */
	double *bound;           /* bound[e], e = 0..max_epochs: progress at which epoch e starts, owned */
	struct hb_fid_run *runs; /* ascending in batch, owned */
	int nruns;
	int min_local, max_local; /* the artifact's per-GPU batch range (hb_fid_set_local_range) */
	long pinned_batch;       /* > 0: the artifact runs the model at this batch on one GPU (NCF: 32768) */
};

/* Load model's gradstats from db (rows of `hetbatch import pollux`); an
 * input error naming the model when it has none or a run has fewer than
 * max_epochs epochs. */
int hb_fid_model_load(struct hb_fid_model *f, struct hb_profdb *db, const struct hb_model *m, struct hb_error *err);
void hb_fid_model_free(struct hb_fid_model *f);
/* 1 when db holds validation runs (gradstats) of model m, else 0 (also
 * when it cannot be read: hb_fid_model_load then says why). */
int hb_fid_model_available(struct hb_profdb *db, const struct hb_model *m);

/* The artifact's per-GPU batch range (Application.min_local_bsz and
 * max_local_bsz): the measured placements' smallest and largest local
 * batch, the largest capped by the model's max_lbs (YOLOv3: 8, set
 * explicitly in applications.py below its measured 16); without
 * measurements, min_lbs and max_gbs. */
void hb_fid_set_local_range(struct hb_fid_model *f, const struct hb_perf_measured *m, const struct hb_model *model,
			    long min_lbs, long max_gbs);

/* Sia's per-GPU-type batch range (applications.py Application.__init__,
 * one Application per type): the type's measured placements' smallest and
 * largest local batch, DeepSpeech2 on the RTX 2080Ti capped at 57 as
 * there; both 0 without measurements. */
void hb_fid_sia_local_range(const struct hb_perf_measured *m, const char *model, const char *gpu, int *lo, int *hi);

/* M0-iterations one iteration at global batch `batch` adds in epoch
 * `epoch` (batch clamped to the validated range, epoch to the runs). */
double hb_fid_gain(const struct hb_fid_model *f, double batch, long epoch);

/* The noise scale M0 var / sqr behind that gain (Pollux's phi, for the
 * agent's goodput): the same interpolated statistics; a large finite value
 * when sqr is 0. */
double hb_fid_phi(const struct hb_fid_model *f, double batch, long epoch);

/* Iterations a run at global batch `batch` had done after epoch `epoch`
 * (Application.get_iteration: linear in batch between the bracketing runs;
 * batch clamped to the validated range, epoch to the runs). */
double hb_fid_iterations(const struct hb_fid_model *f, double batch, long epoch);

/* The artifact's batch rule: *atomic and *accum (extra micro-steps) for a
 * global batch on n GPUs; returns the realised global batch.  m0 0 forces
 * at least one extra micro-step on one GPU whatever the batch, as the
 * artifact's Optimus predicts (optimus.py predict_step_time). */
long hb_fid_batch(long batch, int n, int max_local, long max_batch, long m0, int *atomic, int *accum);

/* Sia's simulator's rescale (checkpoint-restore) seconds of a model
 * (applications.py Application.__init__): cifar10 50, deepspeech2 25,
 * bert 120, yolov3 80, imagenet 250, ncf 15, any other 30. */
double hb_fid_sia_rescale_s(const char *model);

/* The restart cost S of Sia's policy's restart factor (sia.py
 * get_restart_penalty), not the simulated rescale above: cifar10 30,
 * deepspeech2 25, bert 120, yolov3 45, imagenet 250, any other 30. */
double hb_fid_sia_restart_penalty_s(const char *model);

/* Sia's simulator's slowdown of a model (simulator_config.py SLOWDOWNS):
 * cifar10 1.8, ncf 1.5, imagenet, yolov3, bert, deepspeech2 1.2; 1 for a
 * model it does not know (no calibration). */
double hb_fid_sia_slowdown(const char *model);

/* 1 when mode f steps in rounds as its artifact does, so that an arrival
 * at a round's time takes part in that round (Pollux, EasyScale, Sia). */
int hb_fidelity_round_arrivals(int f);

/* Parse a --fidelity value: 0 and *out set, or -1 (unknown name). */
int hb_fidelity_parse(const char *s, int *out);
const char *hb_fidelity_name(int f);

#endif
