/*
 * gpr.h: Gaussian-process regression with JABAS's periodic kernel.
 *
 * JABAS forecasts the next epoch's global batch sizes with scikit-learn's
 * GaussianProcessRegressor (notes/jabas.md §4.2, artifact
 * jabas/config/model/global_batch_size/gaussian_process.py):
 *
 *   k(x, x') = c * exp(-2 sin^2(pi |x - x'| / P) / l^2)
 *              ConstantKernel(1.0, bounds (1, 1e6)) x
 *              ExpSineSquared(length_scale 1.0, periodicity 3,
 *                             length_scale bounds (1e-5, 1e5), periodicity bounds (1e-2, 10))
 *   normalize_y: y~ = (y - mean) / std (population std; std 0 -> 1)
 *   K = k(X, X) + 1e-10 I,  alpha = K^-1 y~
 *   mean(x*) = mean + std * k(x*, X) alpha                     (posterior mean)
 *   LML = -1/2 y~' alpha - 1/2 log det K - n/2 log(2 pi)       (on y~)
 *
 * Hyper-parameters theta = (log c, log l, log P) maximise the LML; the first
 * start is the kernel's initial values and `restarts` more are drawn
 * uniformly in the log bounds (as scikit-learn does), from the seeded stream
 * HB_STREAM_FIT, so a fit is a pure function of (data, config, seed).
 *
 * Numerics (decisions, see gpr.c):
 *  - K is factored with gsl_linalg_mcholesky_decomp (pivoted LDL', GSL's
 *    Cholesky variant that reports instead of aborting on a matrix that is
 *    not positive definite), as re-implemented bit for bit on plain arrays
 *    by mchol.h.  A non-zero perturbation E means "not positive
 *    definite", which scikit-learn answers with LML = -inf; we do the same.
 *  - Bounds: the optimiser (gsl_multimin BFGS2 with the analytic gradient)
 *    works on u in R^3 with theta = lo + (hi - lo) * logistic(u), a smooth
 *    bounded reparametrisation; starting points are kept 1e-3 of the log
 *    range inside the bounds (c's initial 1.0 sits on its lower bound).
 */
#ifndef HB_GPR_H
#define HB_GPR_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "pool.h"

/* The most training points hb_gpr_fit takes: its workspace is about 8 n^2
 * doubles (1 GiB at 4,096) and every likelihood evaluation factors an n x n
 * matrix.  The forecaster's window (forecast.h HB_FC_GPR_WINDOW) is far
 * below; this only stops a caller from asking for terabytes. */
#define HB_GPR_MAX_POINTS 4096

/* Kernel hyper-parameters in natural units. */
struct hb_gpr_hyper {
	double c;       /* ConstantKernel value (signal variance of y~) */
	double length;  /* ExpSineSquared length_scale l */
	double period;  /* ExpSineSquared periodicity P, in the units of x */
};

/* Box for the fit, natural units, lo < hi, all > 0. */
struct hb_gpr_bounds {
	double c_lo, c_hi;            /* artifact: 1, 1e6 */
	double length_lo, length_hi;  /* scikit-learn default: 1e-5, 1e5 */
	double period_lo, period_hi;  /* artifact: 1e-2, 10 */
};

struct hb_gpr_config {
	struct hb_gpr_hyper init;     /* first start; the fixed values when optimize == 0 */
	struct hb_gpr_bounds bounds;
	double noise;                 /* added to K's diagonal (scikit-learn alpha), 1e-10 */
	int normalize_y;              /* 1: standardise y before fitting (artifact) */
	int optimize;                 /* 0: keep init (fixed-hyper-parameter mode) */
	int restarts;                 /* random starts after the first (artifact 9) */
	int max_iter;                 /* BFGS iterations per start */
	uint64_t seed;                /* seeds HB_STREAM_FIT for the random starts */
	/* Runs the 1 + restarts starts as tasks of one batch (borrowed; the
	 * caller's, e.g. the simulation's).  NULL (the default): one after
	 * another on the calling thread.  The fit is the same bits either way
	 * and for any thread count: every start draws its theta0 from the
	 * seeded stream before any runs, runs on a workspace of its own from
	 * a cold cache, and the best is chosen in start order afterwards. */
	struct hb_pool *pool;
};

/* A fitted model: owns copies of the training inputs and K^-1 y~. */
struct hb_gpr {
	size_t n;                     /* training points */
	double *x;                    /* training inputs, n */
	double *alpha;                /* (K + noise I)^-1 y~, n */
	double y_mean;                /* mean subtracted from y (0 without normalize_y) */
	double y_scale;               /* std dividing y (1 without normalize_y) */
	struct hb_gpr_hyper hyper;    /* hyper-parameters in use */
	double lml;                   /* log marginal likelihood at hyper, on y~ */
	double lml_init;              /* log marginal likelihood at config.init (-inf if not PD) */
	int starts;                   /* starts tried (1 + restarts, or 0 when fixed) */
	int starts_finite;            /* starts that began at a positive definite K */
};

/* The artifact's configuration with the given seed. */
void hb_gpr_config_default(struct hb_gpr_config *cfg, uint64_t seed);

/* k(x1, x2) for the hyper-parameters h. */
double hb_gpr_kernel(const struct hb_gpr_hyper *h, double x1, double x2);

/* Fit on n >= 1 points (x need not be sorted; y finite).  Fails if no start
 * reaches a positive definite kernel matrix (fixed mode: if init does not). */
int hb_gpr_fit(struct hb_gpr *g, const double *x, const double *y, size_t n,
	       const struct hb_gpr_config *cfg, struct hb_error *err);

/* hb_gpr_fit, running side(side_ctx, i, worker) once for each i < nside as
 * tasks of the starts' batch on cfg->pool, handed out before them in order
 * (independent work the caller needs too: forecast.c's SES fit, and the
 * caller's own work beside the forecast, so that all share the threads
 * instead of running one after the other).  With no batch to run in (fixed
 * hyper-parameters) they run here, serially.  When the fit fails, a side
 * task may not have run. */
int hb_gpr_fit_beside(struct hb_gpr *g, const double *x, const double *y, size_t n,
		      const struct hb_gpr_config *cfg, hb_pool_fn *side, int nside, void *side_ctx,
		      struct hb_error *err);

/* Posterior mean at nq query points. */
void hb_gpr_predict(const struct hb_gpr *g, const double *xq, size_t nq, double *mean);

void hb_gpr_free(struct hb_gpr *g);

/* Log marginal likelihood of (x, y) under h, with y standardised when
 * normalize_y, and its gradient with respect to (log c, log l, log P) when
 * grad is not NULL.  Sets *lml = -INFINITY (and returns 0) when K is not
 * positive definite; fails only on bad arguments or memory. */
int hb_gpr_log_marginal_likelihood(const double *x, const double *y, size_t n,
				   const struct hb_gpr_hyper *h, double noise, int normalize_y,
				   double *lml, double grad[3], struct hb_error *err);

/* For the benchmark: fit the artifact's GPR (default config, seed) on a
 * synthetic n-point B_G trajectory sampled every 100 steps, and report the
 * wall-clock seconds of hb_gpr_fit alone. */
int hb_gpr_bench_fit(size_t n, uint64_t seed, double *seconds, struct hb_error *err);

#endif
