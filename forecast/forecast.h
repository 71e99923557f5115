/*
 * forecast.h: JABAS's global-batch-size forecaster and its alternatives.
 *
 * At the end of an epoch JABAS predicts B_G at the next epoch's adaptation
 * points x_i = sync_step + p*i, i = 1..floor(epoch_steps / p), where
 * epoch_steps = floor(|D| / B_G_cur), and sizes the allocation for that
 * trajectory (notes/jabas.md §4.2-§4.4).  Methods:
 *
 *   ensemble  0.5 GPR + 0.5 SES (the paper's forecaster, artifact weights)
 *   gpr       periodic-kernel GPR trained on the *current epoch's* points only
 *   ses       simple exponential smoothing on *all* history (flat forecast)
 *   holt      Holt's linear trend on all history (DESIGN.md option)
 *   last      the last observed B_G held flat (the paper's no-prediction ablation)
 *
 * Index of smoothing forecasts (decision, notes §4.2): the artifact maps a
 * query step x to a horizon by floor(x/100) against the number of history
 * points, hard-coding p = 100; that only matters for non-flat methods.  We
 * use h = round((x - last_step) / p), at least 1, which equals the artifact's
 * index when adaptation points start at step 0 and p = 100.
 *
 * GPR window (decision, issue 16 item 6): the GPR trains on the current
 * epoch's points (§4.2), at most the last HB_FC_GPR_WINDOW of them.  Its
 * fit is O(n^3) per likelihood evaluation, hundreds of evaluations per fit
 * (1,000 rows took 97 s, 50,000 rows 11.8 GB), and an epoch's adaptation
 * points at the catalog's starting batches number 3 (cifar10) to 507
 * (bert-large at minB_G 512, 26 M samples, p = 100) and 2,750 for
 * llama2-7b; B_G grows within the epoch, so the simulated epochs hold far
 * fewer.  SES and Holt fit all history up to the last HB_FC_SMOOTH_WINDOW
 * points: their cost is linear (Holt's several hundred passes took 130 s
 * on 666,667 points), and a weight (1 - alpha)^65536 is zero for any alpha
 * a fit finds.  The fits report the points they used.
 *
 * GPR inputs (decision, notes §10 item 10): the artifact feeds raw steps to
 * a kernel whose periodicity is bounded to [0.01, 10] steps while points are
 * p = 100 steps apart, so the period cannot describe the B_G wobble.
 * gpr_x_scale = 1 reproduces the artifact (default); gpr_x_scale = p feeds
 * adaptation-point indices, where the bounds mean 0.01..10 adaptations.
 */
#ifndef HB_FORECAST_H
#define HB_FORECAST_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gpr.h"
#include "smoothing.h"

/* The most current-epoch points the GPR trains on (the last ones): 256
 * points, 25,600 steps at p = 100, fit in seconds (a few hundred BFGS
 * evaluations of a 256 x 256 factorisation). */
#define HB_FC_GPR_WINDOW 256

/* The most history points (the last ones) SES and Holt fit: 655 epochs of
 * 100 adaptation points. */
#define HB_FC_SMOOTH_WINDOW 65536

enum hb_fc_method {
	HB_FC_ENSEMBLE = 0,  /* gpr_weight * GPR + (1 - gpr_weight) * SES */
	HB_FC_GPR = 1,
	HB_FC_SES = 2,
	HB_FC_HOLT = 3,
	HB_FC_LAST = 4,
	HB_FC_NMETHODS = 5,
};

/* Observed trajectory up to the forecast origin (the sync step). */
struct hb_fc_history {
	const double *step;     /* adaptation steps, strictly increasing */
	const double *batch;    /* B_G observed at each step, > 0 */
	size_t n;               /* points, >= 1 */
	size_t epoch_start;     /* first point of the current epoch; GPR trains on [epoch_start, n) */
};

struct hb_fc_options {
	double interval;            /* p, adaptation interval in steps (JABAS default 100) */
	double gpr_x_scale;         /* GPR input = step / gpr_x_scale; 1 = artifact */
	double gpr_weight;          /* GPR's share in the ensemble (artifact 0.5) */
	struct hb_gpr_config gpr;   /* kernel, bounds, restarts, seed, and the pool (gpr.pool, default
				       NULL: serial) that runs the GPR's starts, SES's fit beside them,
				       and SES's grid alone; the forecast is the same bits for any pool */
	/* The caller's own work that does not depend on the forecast (JABAS's
	 * candidate allocations at an epoch end), run exactly once by
	 * hb_forecast_run, also when it fails: beside(beside_ctx, 0, worker) as
	 * the first task of the GPR starts' batch on gpr.pool, so that it shares
	 * the threads with the fits, or serially where there is no batch.  NULL:
	 * none. */
	hb_pool_fn *beside;
	void *beside_ctx;
};

/* What the fits found, for reports; a member is valid when its have_ flag is set. */
struct hb_fc_fit {
	int have_gpr, have_ses, have_holt;
	struct hb_gpr_hyper gpr_hyper;  /* fitted kernel, in the GPR's x units */
	double gpr_lml;                 /* its log marginal likelihood */
	size_t gpr_points;              /* current-epoch points the GPR saw (the last ones) */
	size_t gpr_epoch_points;        /* current-epoch points there were (> gpr_points: window applied) */
	size_t smooth_points;           /* history points SES and Holt saw (the last ones) */
	struct hb_ses ses;
	struct hb_holt holt;
};

/* Artifact defaults: p = 100, raw steps into the GPR, 0.5/0.5, GPR seeded. */
void hb_fc_options_default(struct hb_fc_options *o, uint64_t seed);

const char *hb_fc_method_name(enum hb_fc_method m);
/* Parse a method name ("ensemble", "gpr", "ses", "holt", "last"). */
int hb_fc_method_parse(const char *s, enum hb_fc_method *out, struct hb_error *err);

/* Predict each of nm methods at nq query steps: out[k * nq + j] is methods[k]
 * at query[j].  Models shared by several methods are fitted once.  fit may be
 * NULL. */
int hb_forecast_run(const struct hb_fc_history *h, const struct hb_fc_options *o,
		    const enum hb_fc_method *methods, size_t nm, const double *query, size_t nq,
		    double *out, struct hb_fc_fit *fit, struct hb_error *err);

/* One method; out has nq entries. */
int hb_forecast(enum hb_fc_method m, const struct hb_fc_history *h, const struct hb_fc_options *o,
		const double *query, size_t nq, double *out, struct hb_error *err);

/* The most query points one forecast may ask for (the CLI's horizon /
 * interval): each costs a prediction per method, and JABAS asks for an
 * epoch's adaptation points, tens to thousands.  A larger count is an
 * input error, refused before anything is allocated. */
#define HB_FC_MAX_QUERY 100000

/* JABAS's query points: out[i-1] = sync_step + interval * i for
 * i = 1..floor(epoch_steps / interval), at most cap of them; returns the count
 * floor(epoch_steps / interval) (which may exceed cap). */
size_t hb_fc_query_steps(double sync_step, double interval, double epoch_steps, double *out, size_t cap);

/* JABAS's (step, B_G) series of adaptation points (the JABAS agent,
 * sim/policies/jabas/agent_jabas.c, keeps one; live runs drive the same
 * agent): append a point.  Two points at one
 * step would make the GPR's kernel matrix singular, so within the current
 * epoch (points from epoch_start on) a point at or before the last step
 * replaces the last batch, and a first point of a new epoch at or before
 * the last step moves one step on.  Arrays grow by doubling (*cap). */
int hb_fc_series_add(double **step, double **batch, size_t *n, size_t *cap, size_t epoch_start, double at,
		     double bs, struct hb_error *err);

/* A seed for the GPR restarts of one job's forecast after one epoch: a pure
 * function of (seed, job, epoch), SplitMix64's finaliser over their
 * combination. */
uint64_t hb_fc_epoch_seed(uint64_t seed, int job, long epoch);

/* JABAS's trajectory of the next epoch: the batches its auto-scaler sizes
 * the allocation for (notes/jabas.md §4.2 "Query points", §4.3), made by
 * the simulator's JABAS agent (sim/policies/jabas/agent_jabas.c), which
 * live runs drive too (live/live_agent.h). */
struct hb_fc_traj_spec {
	enum hb_fc_method method;  /* the forecaster (the paper's: HB_FC_ENSEMBLE) */
	uint64_t seed;             /* GPR restarts' seed (hb_fc_epoch_seed) */
	double interval;           /* p, steps between adaptation points */
	double sync_step;          /* the forecast origin: the step the epoch ended at */
	double dataset;            /* |D|, samples per epoch */
	long cur_bs;               /* B_G now: the first point, and a non-finite forecast's value */
	long min_bs, max_bs;       /* the bounds every forecast point is clipped to */
	struct hb_pool *pool;      /* the fits' threads (hb_fc_options gpr.pool), borrowed; NULL: serial */
	hb_pool_fn *beside;        /* run exactly once, beside the fits (hb_fc_options beside); NULL: none */
	void *beside_ctx;
	const struct hb_fc_prefit *prefit; /* fits made ahead (below), used when made from this
					      history, method and seed; NULL: none */
};

/* (*traj)[0] = cur_bs, then s->method's forecast of h at the next epoch's
 * adaptation points (hb_fc_query_steps from sync_step over
 * floor(dataset / cur_bs) steps), each rounded to a whole batch and clipped
 * to [min_bs, max_bs]; *ntraj points.  The forecaster runs with the
 * artifact's options (hb_fc_options_default(seed), interval, 9 GPR
 * restarts, s->pool), and an ensemble whose current epoch has fewer than 3 points is
 * SES alone (forecast.c says why).  Unlike the forecasters, h may be empty
 * or have no point in the current epoch (epoch_start == n: the GPR trains on
 * the last point); with no history, or an epoch shorter than p, the
 * trajectory is cur_bs alone.  The caller frees *traj; on error it is NULL. */
int hb_fc_trajectory(const struct hb_fc_history *h, const struct hb_fc_traj_spec *s, long **traj, size_t *ntraj,
		     struct hb_error *err);

/* A trajectory's fits made ahead of it.  The GPR and SES fits read only the
 * history (the GPR its current epoch, SES its last points), the method and
 * the seed, never the forecast origin or the query points; so JABAS, once an
 * epoch's last adaptation point is recorded, can fit on another thread
 * while the simulation runs on to the epoch's end (sim/policies/
 * agent_jabas.c), and hb_fc_trajectory predicts from the fits instead of
 * making them.  The fits are made serially, which gives the same bits as
 * on any pool (hb_gpr_config pool), on a copy of the history; the
 * trajectory uses them only when its history (every step and batch, bit
 * for bit), epoch start, method and seed equal the copy's, so a trajectory
 * is the same with or without them.  Flat histories need no fit; Holt and
 * "last" are not made ahead. */
struct hb_fc_prefit {
	/* what the fits are made from: hb_fc_prefit_set's copy */
	enum hb_fc_method method;
	uint64_t seed;
	double *step, *batch;      /* [n] of [cap] */
	size_t n, cap, epoch_start;
	struct hb_pool *pool;      /* borrowed: the fits' threads */
	/* hb_fc_prefit_run's fits: a member is valid when its _fitted flag is set */
	int gpr_fitted, gpr_rc;    /* gpr_rc < 0: the fit failed with gpr_err */
	struct hb_gpr gpr;         /* owned when gpr_fitted and gpr_rc == 0 */
	size_t gpr_points, gpr_epoch_points;
	struct hb_error gpr_err;
	int ses_fitted, ses_rc;
	struct hb_ses ses;
	struct hb_error ses_err;
};

void hb_fc_prefit_init(struct hb_fc_prefit *p);
/* Copy h, method and seed as the inputs of the next hb_fc_prefit_run (the
 * fits of before are dropped), whose fits run their starts on pool (NULL:
 * serially; the same bits); fails only without memory. */
int hb_fc_prefit_set(struct hb_fc_prefit *p, const struct hb_fc_history *h, enum hb_fc_method method,
		     uint64_t seed, struct hb_pool *pool, struct hb_error *err);
/* Make the fits hb_fc_trajectory would make on p's inputs (none when the
 * history is flat or one it would refuse).  Reads and writes p only, so it
 * may run on any thread while the caller leaves p alone. */
void hb_fc_prefit_run(struct hb_fc_prefit *p);
/* 1 when hb_fc_trajectory would fit anything on h with method (0: a flat
 * history, or one it refuses: nothing to make ahead). */
int hb_fc_prefit_wanted(const struct hb_fc_history *h, enum hb_fc_method method);
void hb_fc_prefit_free(struct hb_fc_prefit *p);

/* Mean absolute percentage error 100/n * sum |pred - actual| / |actual|;
 * fails if n == 0 or an actual value is 0 or not finite. */
int hb_mape(const double *actual, const double *pred, size_t n, double *pct, struct hb_error *err);

#endif
