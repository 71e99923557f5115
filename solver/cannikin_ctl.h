/*
 * cannikin_ctl.h: Cannikin's online controller, the part of the paper's
 * "OptPerf optimizer" that learns the performance model while training.
 *
 * Cannikin (Nie et al., Middleware '24) has no model before training starts
 * (§4.2 "Approaching OptPerf when no available performance models"):
 *   epoch 1: even local batches (Fig. 9: "initialize training by evenly
 *            assigning local batch size for each node");
 *   epoch 2: Eq. 8, each node's batch in inverse proportion to the per-sample
 *            compute time it measured in epoch 1, t_sample = t_compute / b,
 *            which gives every node a second distinct local batch, of the
 *            total the adaptive-batch engine picks for that epoch on the
 *            proportional model (hb_cannikin_ctl_prop_model);
 *   epoch 3 on: each node's lines a(b) = q·b + s and P(b) = k·b + m (Eq. 3)
 *            fitted to all its (b, a, P) measurements, γ, T_o and T_u
 *            combined over nodes by inverse-variance weighting (§4.5, §5.3),
 *            and OptPerf on that model (Fig. 9: "as early as the third
 *            epoch").
 * This module keeps the measurements and answers "which split for total B
 * next epoch"; choosing B (goodput, 1.05 hysteresis) is the agent's
 * (sim/policies/optperf/agent_optperf.c), on the model this module fits.
 *
 * Choices where the paper is silent (documented in docs and the report):
 *  - Fit: ordinary least squares over all epochs' points of a node
 *    (gsl_fit_linear); the paper only says later epochs "refine" the model.
 *    With one distinct local batch (a node whose Eq. 8 batch equals its even
 *    one) the line goes through the origin; a negative fitted intercept or
 *    slope is clamped as in optperf_profile.c.
 *  - IVW (the defining paragraph is missing from §4.5): every observation
 *    of γ, T_o, T_u carries the variance of its mean; the estimate is
 *    Σ x/σ² / Σ 1/σ² over all observations so far.  Observations with
 *    σ² = 0 are exact: when any exists, their plain mean is the estimate.
 *  - Eq. 8 is applied with the memory caps and integer batches of the
 *    OptPerf solver: it is the min-max split of the proportional model
 *    t_i(b) = t_sample_i·b, whose real optimum is exactly Eq. 8.
 */
#ifndef HB_CANNIKIN_CTL_H
#define HB_CANNIKIN_CTL_H

#include <stddef.h>

#include "error.h"
#include "optperf.h"

enum hb_cannikin_phase {
	HB_CANNIKIN_EVEN = 0,  /* no measurement yet: even split (epoch 1) */
	HB_CANNIKIN_EQ8 = 1,   /* one epoch measured: Eq. 8 (epoch 2) */
	HB_CANNIKIN_MODEL = 2, /* two or more: OptPerf on the fitted model (epoch 3 on) */
};

/* One node's measurements, one point per epoch (that epoch's means). */
struct hb_cannikin_ctl_node {
	long min_batch, max_batch; /* the bounds the splits respect */
	size_t npts, cap;          /* points stored, room */
	double *b;                 /* local batch of each point */
	double *a_s;               /* a(b): data + forward + update, seconds */
	double *p_s;               /* P(b): backpropagation, seconds */
};

/* Running inverse-variance weighted mean (§4.5). */
struct hb_ivw {
	double sw, swx;      /* Σ 1/σ², Σ x/σ² over observations with σ² > 0 */
	double n_exact, sx;  /* count and sum of exact observations (σ² = 0) */
};

struct hb_cannikin_ctl {
	size_t n;                          /* nodes (GPUs) */
	struct hb_cannikin_ctl_node *node; /* n entries, owned */
	long epochs;                       /* epochs observed */
	struct hb_ivw gamma, overlap, last; /* γ, T_o, T_u */
};

/* One node's view of the communication in an epoch: the means it measured
 * and the variances of those means (0: exact). */
struct hb_cannikin_comm_obs {
	double gamma, gamma_var;
	double overlap_s, overlap_var; /* T_o */
	double last_s, last_var;       /* T_u */
};

/* Start with no measurements; bounds (min_batch, max_batch) are copied from
 * cl's nodes (nothing else of cl is read). */
int hb_cannikin_ctl_init(struct hb_cannikin_ctl *c, const struct hb_optperf_cluster *cl, struct hb_error *err);
void hb_cannikin_ctl_free(struct hb_cannikin_ctl *c);

enum hb_cannikin_phase hb_cannikin_ctl_phase(const struct hb_cannikin_ctl *c);

/* Record one epoch: node i ran local[i] samples per iteration with mean
 * a_s[i] and p_s[i]; comm[] (ncomm entries, one per reporting node, >= 1)
 * the communication.  Every local[i] must be >= 1 (a node with no samples
 * measures nothing) and the times finite and non-negative. */
int hb_cannikin_ctl_observe(struct hb_cannikin_ctl *c, const long *local, const double *a_s, const double *p_s,
			    const struct hb_cannikin_comm_obs *comm, size_t ncomm, struct hb_error *err);

/* The fitted OptPerf model (phase MODEL only): nodes[] (n entries, caller's)
 * and *cl pointing at it. */
int hb_cannikin_ctl_model(const struct hb_cannikin_ctl *c, struct hb_optperf_node *nodes,
			  struct hb_optperf_cluster *cl, struct hb_error *err);

/* The model Cannikin can rank total batches by after one epoch (phase EQ8
 * or later): each node's lines through the origin at its last measurement,
 * a(b) = (a_s/b)·b and P(b) = (p_s/b)·b, and the IVW γ, T_o, T_u.  Its
 * min-max split is Eq. 8's (the proportional model), and it is the model
 * AdaptDL, on which Cannikin is built, extrapolates from one local batch
 * (adaptdl/goodput.py fit_perf_params fixes alpha_c at its lower bound when
 * a single batch was observed).  §4.5 computes OptPerf_init "for all batch
 * size candidates after the initial epoch", and Eq. 8 splits "the total
 * batch size for the upcoming epoch": epoch 2's B is chosen on this model.
 * nodes[] (n entries, caller's) and *cl pointing at it. */
int hb_cannikin_ctl_prop_model(const struct hb_cannikin_ctl *c, struct hb_optperf_node *nodes,
			       struct hb_optperf_cluster *cl, struct hb_error *err);

/* 1 when every node has measured at least two distinct local batches, so
 * both its lines are identified; 0 otherwise (identical GPUs: Eq. 8 repeats
 * the even split). */
int hb_cannikin_ctl_identified(const struct hb_cannikin_ctl *c);

/* The split for total next epoch, by phase: even, Eq. 8 from the last
 * epoch's per-sample compute times, or the integer OptPerf split of the
 * fitted model.  local[] gets n entries summing to total. */
int hb_cannikin_ctl_split(const struct hb_cannikin_ctl *c, long total, long *local, struct hb_error *err);

/* The IVW estimate so far (0 when nothing was observed). */
double hb_ivw_mean(const struct hb_ivw *w);
void hb_ivw_add(struct hb_ivw *w, double x, double var);

#endif
