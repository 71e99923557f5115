/*
 * live.h: execute a plan on real devices (`mpirun -np N hetbatch live`).
 *
 * A plan (`hetbatch plan --json`, docs/plan-format.md) becomes one slot per
 * GPU; MPI rank r runs slot r, so on one host a plan's nodes are groups of
 * consecutive ranks and a two-node plan runs on this machine.  Each rank
 * runs IIDP's iteration (notes/jabas.md 1):
 *   for each of the n_ga + 1 micro-steps, its n_vsw VSWs (threads with
 *   their own streams) each load a batch of local_bs samples, run forward
 *   and backward, accumulating into their own gradient buffers;
 *   during the last micro-step's backward, as soon as every VSW has
 *   filled a gradient bucket (reduction order), the main thread sums the
 *   VSWs' parts of it into the main VSW's (local aggregation), scales it by
 *   local_bs / global batch, so the sum over ranks is the global mean
 *   gradient (equal local batches: 1 / decoupled workers; OptPerf's
 *   unequal ones: weighted by samples), and starts its sum over the ranks
 *   (MPI on cpu, NCCL on cuda), overlapped with the rest of backward
 *   (live_overlap.h); with overlapping weight sync (OWS) the optimizer
 *   updates that bucket's parameters as soon as its sum ends, with
 *   sequential weight sync (SWS) after the last one;
 *   the main VSW's weights are copied to the other VSWs.
 * DDP and OptPerf rows of a plan run the same way with one VSW per GPU.
 *
 * Every rank times its iterations; rank 0 gathers them and reports, per
 * rank and for the critical path (the slowest rank in each iteration),
 * the median measured time beside the plan's prediction, and writes them
 * into the profile database's `prediction` table and a results directory.
 */
#ifndef HB_LIVE_H
#define HB_LIVE_H

#include <stdint.h>

#include "allreduce.h"
#include "catalog.h"
#include "error.h"
#include "gradstats.h"
#include "profdb.h"

/* One GPU of the plan: what its rank runs and what the plan predicts. */
struct hb_live_slot {
	char node[HB_NAME_MAX];
	char gpu[HB_NAME_MAX];   /* catalog GPU type */
	int n_vsw;               /* VSWs on this GPU */
	int n_ga;                /* extra gradient-accumulation micro-steps */
	int local_bs;            /* samples per VSW micro-batch */
	double pred_iter_s;      /* the plan's predicted iteration time for this GPU */
};

struct hb_live_plan {
	char path[512];          /* the plan file, for messages */
	char method[16];         /* "iidp", "ddp", "optperf" */
	char model[HB_NAME_MAX];
	char cluster[HB_NAME_MAX];
	char profiles[512];      /* the database the plan's prediction used, "" if none: a
				  * relative "profiles" is resolved against the plan file's
				  * directory (hb_live_plan_load) */
	char config[512];        /* the plan's own notation of the configuration */
	long global_batch;       /* samples per iteration over all ranks */
	int ows;                 /* 1: overlapping weight sync */
	double pred_iter_s;      /* predicted iteration time (critical path) */
	struct hb_live_slot *slots; /* owned, one per GPU, rank order */
	int nslots;
};

/* Read `method`'s configuration of a plan file.  Errors name the file and
 * the field. */
int hb_live_plan_load(const char *path, const char *method, struct hb_live_plan *p, struct hb_error *err);
void hb_live_plan_free(struct hb_live_plan *p);
/* Append one GPU (slot) to p. */
int hb_live_plan_add_slot(struct hb_live_plan *p, const char *node, const char *gpu, int n_vsw, int n_ga, int lbs,
			  double pred, struct hb_error *err);

struct hb_live_opts {
	const char *backend;     /* "cpu" or "cuda" */
	double scale;            /* workload width scale (as the profiles were measured) */
	int warmup, iters;       /* iterations not timed, timed */
	uint64_t seed;
	double mem_limit;        /* cpu: budget per rank (0: the slot GPU's catalog memory) */
	double timeout_s;        /* a rank without progress for this long ends the run (0: never) */
	const char *ckpt_dir;    /* checkpoint every rank into DIR/rank-R.ckpt at the end (NULL: no) */
	int resume;              /* continue from the checkpoints in ckpt_dir */
	int metrics_every;       /* gradient similarity and noise scale at timed iterations 0, p, 2p, ...
				  * of this run (p = metrics_every; 0: off): see hb_live_metric */
	int teacher;             /* 1: learn a teacher network (workload.h HB_WL_TASK_TEACHER) on fresh
				  * batches, made before each iteration's clock starts; 0: the
				  * profiler's two fixed random batches per VSW */
	double label_noise;      /* teacher: sigma of the Gaussian label noise (loss floor sigma^2 / 2) */
	uint64_t teacher_seed;   /* teacher: the seed of its weights (0: seed + 1) */
	int metrics_always;      /* 1: keep the gradient-metric buffers with metrics_every 0 (adaptive
				  * runs measure at the end of every block, hb_live_rank_block) */
	int signal_silent;       /* 1: on SIGINT/SIGTERM/SIGHUP rank 0 exits without its line: a driver
				  * around mpirun says it (live_signal.h) */
	double progress_s;       /* adaptive runs: rank 0's progress line on stderr at most every this many
				  * seconds, and at every epoch's end (< 0: none, -q) */
};

#define HB_LIVE_MAX_RANKS 256
#define HB_LIVE_MAX_METRICS 512  /* gradient measurements kept per run */
#define HB_LIVE_MAX_VSW 64       /* VSWs per rank */
/* Micro-step g of iteration i reads data batch i * STRIDE + g: batches are
 * a function of the iteration, whatever the configuration (GA < STRIDE). */
#define HB_LIVE_DATA_STRIDE 4097

/* The gradients of one measured iteration (rank 0's record).
 *
 * Similarity (SimiGrad's Phi, JABAS's metric, notes/jabas.md 4.1): the
 * decoupled workers are split in two halves, by rank parity on 2 or more
 * ranks (as JABAS groups GPUs), by VSW parity on one rank; Phi is the
 * cosine between the halves' gradient sums (of their workers' per-sample
 * gradients, so it equals the cosine of their mean gradients).  Over
 * ranks the halves need their sums before the global all-reduce: an extra
 * all-reduce in which only the even ranks contribute their share-scaled
 * local gradient gives H1, and H2 = G - H1 with G the global gradient
 * after the bucket all-reduce; on one rank the VSWs' own gradient buffers
 * are summed by parity on the host.  NAN with one rank of one VSW.
 *
 * Noise scale (McCandlish et al. 2018 App. A.1, Pollux §3.1; gradstats.h):
 * the small batches are the VSWs' gradients, each the mean over its
 * local_bs x (n_ga + 1) samples of an iteration, on every rank; the big
 * batch is the global mean gradient.  With one worker in all (one rank of
 * one VSW), Pollux's differenced form: the previous iteration's gradient
 * and this one's are the two small batches (kept only when the previous
 * iteration ran in the same block; NAN otherwise).
 *
 * The work runs after the iteration's clock stops (a copy of the main
 * VSW's gradients before local aggregation is taken inside and its time
 * subtracted), so the iteration times stay comparable with predictions. */
struct hb_live_metric {
	long iter;               /* iteration index (counts on across --resume) */
	double loss;             /* rank 0 VSW 0's loss on its last micro-batch, before the update */
	double similarity;       /* Phi = cos(g_H1, g_H2) */
	struct hb_gns gns;       /* the noise-scale estimate and its inputs */
	int differenced;         /* 1: one worker in all, so the small batches were the previous and this
				  * iteration's gradients (Pollux's single-replica path; biased, as the
				  * weights moved between them) */
};

struct hb_live_result {
	long first_iter;                          /* iteration index of the block's first iteration */
	int iters;                                /* timed iterations */
	double sum_critical_s;                    /* sum over timed iterations of the slowest rank's time */
	int nranks;
	double rank_iter_s[HB_LIVE_MAX_RANKS];    /* median measured iteration per rank (rank 0 only) */
	double rank_compute_s[HB_LIVE_MAX_RANKS]; /* median time until backward ended on every VSW (its own
						   * work; the rest: exposed all-reduce, optimizer, copies) */
	double critical_s;                        /* median over iterations of the slowest rank's time */
	double loss_first, loss_last;             /* rank 0, VSW 0: after the first and last iteration */
	double params;                            /* workload parameters */
	double flops_per_sample;
	int nmetrics;                             /* gradient measurements (rank 0), timed order */
	int metrics_dropped;                      /* measurements past HB_LIVE_MAX_METRICS, not kept */
	struct hb_live_metric metrics[HB_LIVE_MAX_METRICS];
};

/* ---- one rank ---------------------------------------------------------------
 * The pieces hb_live_run is made of, for runs that change configuration
 * (adaptive policies, schedule replays: live_segment.c).  Every function
 * is collective (every rank calls it, and every rank returns the same
 * status: a failure on one rank is agreed on all). */
struct hb_live_rank;

/* Device, workload state at this rank's slot of p, watchdog.  o is copied. */
int hb_live_rank_open(const struct hb_ar_team *t, const struct hb_catalog *cat, const struct hb_live_plan *p,
		      const struct hb_live_opts *o, struct hb_live_rank **out, struct hb_error *err);
void hb_live_rank_close(struct hb_live_rank *c);
/* Run warmup + iters iterations of the current configuration; the timed
 * ones give r (rank 0: per-rank medians, critical path).  Gradient metrics
 * at timed iterations 0, m, 2m, ... (m = metrics_every > 0) and, with
 * metrics_last, at the block's last iteration. */
int hb_live_rank_block(struct hb_live_rank *c, int warmup, int iters, int metrics_every, int metrics_last,
		       struct hb_live_result *r, struct hb_error *err);
/* Change to configuration p in place (same ranks; new local batch, VSWs,
 * GA): weights, optimizer state and step carry over, the VSWs' state is
 * rebuilt.  *cost_s: the slowest rank's wall time for it. */
int hb_live_rank_reconfigure(struct hb_live_rank *c, const struct hb_live_plan *p, double *cost_s,
			     struct hb_error *err);
/* Checkpoint into DIR (every rank its file, or rank 0's only: a relaunch
 * on another configuration reads that one); load: this rank's file of the
 * same configuration, or with any_layout rank 0's of any configuration. */
int hb_live_rank_save(struct hb_live_rank *c, const char *dir, int rank0_only, struct hb_error *err);
int hb_live_rank_load(struct hb_live_rank *c, const char *dir, int any_layout, struct hb_error *err);
/* Iterations done (counting on across checkpoints). */
long hb_live_rank_iteration(const struct hb_live_rank *c);
/* Tell the watchdog what the rank does between blocks (waits: a collective). */
void hb_live_rank_beat(struct hb_live_rank *c, const char *phase, int waits);

/* Collective, right after hb_ar_team_start on every rank of a live run:
 * catch SIGINT, SIGTERM and SIGHUP (live_signal.h) and, with
 * o->timeout_s > 0, watch the team's waits (allreduce.h hb_ar_team_watch:
 * the ranks that arrived name the one that did not). */
int hb_live_team_setup(struct hb_ar_team *t, const struct hb_live_opts *o, struct hb_error *err);

/* Run the plan on every rank of t (world size must equal p->nslots).
 * Every rank returns the same status. */
int hb_live_run(const struct hb_ar_team *t, const struct hb_catalog *cat, const struct hb_live_plan *p,
		const struct hb_live_opts *o, struct hb_live_result *r, struct hb_error *err);

/* Rank 0: the prediction rows (one per rank and one for the critical path,
 * under a run row of kind "live") in one transaction. */
int hb_live_store(struct hb_profdb *db, const struct hb_live_plan *p, const struct hb_live_opts *o,
		  const struct hb_live_result *r, const char *host, struct hb_error *err);

#endif
