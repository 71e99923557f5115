/*
 * stats.h: the convergence model every policy shares (DESIGN.md,
 * "Statistical model"), so that comparisons are fair.
 *
 * - Gradient noise scale phi (samples) as a function of training fraction f
 *   in [0, 1]: the catalog model's trajectory (piecewise log-linear,
 *   hb_model_gns), or, when a profile database has Pollux gradstats for the
 *   model, phi = M0 grad_var / grad_sqr of the run at the batch nearest
 *   (in log) to the current one, interpolated in epoch (and in log batch
 *   between the two nearest runs).
 * - Statistical efficiency E(B) = (phi + M0) / (phi + B) (Pollux Eq. 6); an
 *   iteration at global batch B adds B E(B) M0-equivalent samples; a job is
 *   done when its progress reaches target_epochs x dataset_size.
 * - Similarity of the mean gradients of two independent half-batches:
 *   Phi(B) = B / (B + 2 phi).  Derivation: each half-batch mean is
 *   G + noise with covariance S/(B/2); for high dimension the cosine
 *   concentrates at |G|^2 / (|G|^2 + tr(S)/(B/2)) = B / (B + 2 phi) with
 *   phi = tr(S)/|G|^2.  An observation adds N(0, sigma^2) noise (sigma from
 *   the model), clamped to [-1, 1].
 * - What-if knobs (0 = off): a convergence penalty for unequal local batches
 *   (weighted data parallelism): E is multiplied by 1/(1 + k cv^2), cv the
 *   coefficient of variation of the local batches.
 */
#ifndef HB_STATS_H
#define HB_STATS_H

#include "catalog.h"
#include "error.h"
#include "rng.h"

struct hb_profdb;

/* One Pollux validation run: per-epoch phi at one batch size. */
struct hb_stats_run {
	int batch;             /* global batch of the run */
	double *phi;           /* phi per epoch (M0 grad_var / grad_sqr), owned */
	int nepochs;
};

struct hb_stats {
	const struct hb_model *model; /* borrowed */
	double m0;             /* M0 of the efficiency (the model's m0) */
	double target;         /* M0-equivalent samples to finish */
	double sigma;          /* similarity observation noise */
	double unequal_k;      /* what-if: penalty k for unequal local batches, 0 = off */
	struct hb_stats_run *runs; /* Pollux gradstats, sorted by batch; NULL = use the trajectory */
	int nruns;
	int nskipped;          /* gradstats rows skipped: non-positive or non-finite */
};

/* From the catalog model only. */
int hb_stats_init(struct hb_stats *s, const struct hb_model *m, struct hb_error *err);
/* Use the model's gradstats from the profile database when it has them
 * (*used = 1), else leave the trajectory in place (*used = 0). */
int hb_stats_load_gradstats(struct hb_stats *s, struct hb_profdb *db, int *used, struct hb_error *err);
void hb_stats_free(struct hb_stats *s);

/* phi at training fraction f (clamped to [0, 1]) for a job running at global batch B. */
double hb_stats_phi(const struct hb_stats *s, double f, double batch);
/* E(B) at noise scale phi. */
double hb_stats_efficiency(const struct hb_stats *s, double phi, double batch);
/* Phi(B) = B / (B + 2 phi). */
double hb_stats_similarity(double phi, double batch);
/* One noisy observation of Phi(B). */
double hb_stats_observe_similarity(const struct hb_stats *s, double phi, double batch, struct hb_rng *rng);
/* Efficiency multiplier for a set of unequal local batches (1 when off or equal). */
double hb_stats_unequal_factor(const struct hb_stats *s, const double *local_bs, int n);

#endif
