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
 *
 * Progress models (enum hb_progress_model, `hetbatch sim --progress`): how
 * much an iteration at global batch B advances training.  The papers
 * disagree, so the choice is explicit per run, printed and stored with every
 * result; every policy of a run is charged by the same one.
 *
 * pollux (default): E(B) = (phi + M0) / (phi + B), Pollux Eq. 6.  This is
 *   McCandlish et al. (2018)'s empirical law with the critical batch equal to
 *   the noise scale: samples to target grow as (1 + B/B_crit).  It charges
 *   the similarity rule heavily: SimiGrad/JABAS hold Phi(B) near their
 *   threshold gamma, i.e. B near B_gamma = 2 gamma phi / (1 - gamma), where
 *   phi + B = phi (1 + gamma) / (1 - gamma), so E = (1 + M0/phi) (1 - gamma) /
 *   (1 + gamma): about 1/19 at GPT3-XL's gamma 0.9, 1/3 at 0.5.
 *
 * similarity: E(B) = min(1, max(B_gamma, M0) / B), B_gamma = 2 gamma phi /
 *   (1 - gamma) with gamma the model's threshold on the run's cluster (JABAS
 *   Table 4).  Derivation from what JABAS and SimiGrad measured:
 *   - the similarity rule (grow B while Phi < gamma) settles where the
 *     expected similarity equals gamma: Phi(B) = B / (B + 2 phi) = gamma
 *     gives B = B_gamma;
 *   - JABAS Table 5: SimiGrad and JABAS reach every target (76 % top-1,
 *     77 %, 36.6 mAP, 24.61 BLEU, the LLMs' losses) within the recipe's
 *     epochs (the artifact's 90 for ResNet-50, 13 for F-R-CNN, <= 20 for
 *     GNMT), and IIDP preserves DP's convergence (JABAS 4, notes/jabas.md
 *     10.19): no sample is lost at B <= B_gamma.  gamma is the threshold the
 *     authors set per model to keep accuracy, so B_gamma is the largest batch
 *     the evidence shows to be free;
 *   - above it the evidence is Pollux's large early batches costing
 *     iterations (Fig. 17: 3.7x SimiGrad's on ResNet-50) and Static(Max)
 *     missing the target (Fig. 1a).  The model takes McCandlish's two
 *     asymptotes with the knee at B_gamma: perfect scaling below (steps
 *     S = S_min B_gamma / B, samples constant), no scaling above (steps
 *     S = S_min, samples grow as B / B_gamma).  No free parameter: phi is
 *     the model's noise scale, gamma the paper's threshold;
 *   - M0 is the recipe's batch, the reference of target_epochs: it is never
 *     charged, hence max(B_gamma, M0) (early in training B_gamma may be
 *     below M0, e.g. F-R-CNN's phi 60 at gamma 0.1 gives 13 < 16).
 *   Policies still decide with their own beliefs (Pollux's agent maximises
 *   goodput with Pollux's E); only the charged progress changes.
 *
 * pollux-artifact: Pollux's own simulator's progress, statistical epochs
 *   bounded by its validation runs' cumulative progress with the gain at the
 *   current epoch's interpolated gradient statistics (sim/fidelity.h).  It
 *   comes with the rest of the artifact's mechanics (`sim --fidelity
 *   pollux`), which the simulator applies in place of hb_stats_efficiency.
 *
 * samples: E(B) = 1, the work is a number of samples whatever the batch
 *   (target_epochs passes over the dataset).  The IBM elastic paper's model
 *   (notes/elastic.md §1 "Implicit assumptions": no statistical-efficiency
 *   term, a larger batch only changes speed; its Fig. 2 shows accuracy
 *   within ±0.5 % across batches); scripts/repro/ibm-elastic uses it.
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

/* How progress is charged (see the top of this file).  Values are stored in
 * result files by name (hb_progress_name), never by number. */
enum hb_progress_model {
	HB_PROGRESS_POLLUX = 0,     /* E(B) = (phi + M0) / (phi + B), Pollux Eq. 6 (default) */
	HB_PROGRESS_SIMILARITY = 1, /* E(B) = min(1, max(B_gamma, M0) / B), JABAS/SimiGrad evidence */
	HB_PROGRESS_POLLUX_ARTIFACT = 2, /* Pollux's own simulator: statistical epochs from its validation
					  * runs (sim/fidelity.h); only with the Pollux fidelity mode */
	HB_PROGRESS_SAMPLES = 3,    /* E(B) = 1: work fixed in samples (IBM elastic paper) */
	HB_PROGRESS_COUNT
};

/* "pollux", "similarity", "pollux-artifact"; "?" for a value out of range. */
const char *hb_progress_name(enum hb_progress_model p);
/* Parse a name; on an unknown one fills err naming `what` (e.g. "--progress"),
 * the value and the valid names, and returns -1. */
int hb_progress_parse(const char *name, const char *what, enum hb_progress_model *out, struct hb_error *err);
/* "pollux, similarity, ...": the valid names, for help and errors. */
const char *hb_progress_names(void);

struct hb_stats {
	const struct hb_model *model; /* borrowed */
	enum hb_progress_model progress; /* how progress is charged (default pollux) */
	double gamma;          /* similarity threshold on the run's cluster (similarity model) */
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
/* The efficiency charged at noise scale phi under s->progress: Pollux's
 * E(B), or the similarity model's min(1, max(B_gamma, M0) / B). */
double hb_stats_efficiency(const struct hb_stats *s, double phi, double batch);
/* Pollux's E(B) = (phi + M0) / (phi + B), whatever s->progress says. */
double hb_stats_pollux_efficiency(const struct hb_stats *s, double phi, double batch);
/* B_gamma = 2 gamma phi / (1 - gamma): the batch at which the expected
 * similarity equals gamma (gamma in (0, 1); 0 otherwise). */
double hb_stats_gamma_batch(double gamma, double phi);
/* Phi(B) = B / (B + 2 phi). */
double hb_stats_similarity(double phi, double batch);
/* One noisy observation of Phi(B). */
double hb_stats_observe_similarity(const struct hb_stats *s, double phi, double batch, struct hb_rng *rng);
/* Efficiency multiplier for a set of unequal local batches (1 when off or equal). */
double hb_stats_unequal_factor(const struct hb_stats *s, const double *local_bs, int n);

#endif
