/*
 * smoothing.h: exponential smoothing for the B_G forecaster.
 *
 * Simple exponential smoothing (SES) is JABAS's "ESM": statsmodels'
 * ExponentialSmoothing(y, trend=None, seasonal=None).fit() (notes/jabas.md
 * §4.2).  Holt's linear trend is the DESIGN.md option.  Observations are
 * y_1..y_N, one per adaptation point.
 *
 *   SES:   yhat_t = l_{t-1},  l_t = l_{t-1} + a (y_t - l_{t-1}),  forecast l_N (flat)
 *   Holt:  yhat_t = l_{t-1} + b_{t-1}
 *          l_t = a y_t + (1 - a)(l_{t-1} + b_{t-1})
 *          b_t = b (l_t - l_{t-1}) + (1 - b) b_{t-1},  forecast l_N + h b_N
 *
 * Fit: minimise the one-step-ahead SSE = sum_t (y_t - yhat_t)^2 over the
 * smoothing weights in [0, 1] *and* the initial state, as statsmodels does
 * with its default initialization_method="estimated".  Residuals are affine
 * in the initial state for fixed weights, so the best initial state is a
 * linear least-squares solution and the weights minimise a profile SSE:
 * SES over a in [0, 1] by a 101-point grid then Brent (gsl_min); Holt over
 * (a, b) in [0, 1]^2 by a 21 x 21 grid then Nelder-Mead (gsl_multimin,
 * nmsimplex2) on the clamped weights.
 */
#ifndef HB_SMOOTHING_H
#define HB_SMOOTHING_H

#include <stddef.h>

#include "error.h"
#include "pool.h"

struct hb_ses {
	double alpha;   /* smoothing weight a in [0, 1] */
	double level0;  /* initial level l_0 (fitted) */
	double level;   /* final level l_N: the flat forecast */
	double sse;     /* one-step-ahead SSE at (alpha, level0) */
	size_t n;       /* observations fitted */
};

struct hb_holt {
	double alpha;   /* level weight a in [0, 1] */
	double beta;    /* trend weight b in [0, 1] */
	double level0;  /* initial level l_0 (fitted) */
	double trend0;  /* initial trend b_0 (fitted) */
	double level;   /* final level l_N */
	double trend;   /* final trend b_N (per adaptation point) */
	double sse;     /* one-step-ahead SSE at the fit */
	size_t n;       /* observations fitted */
};

/* One-step-ahead SSE of SES for given weight and initial level. */
double hb_ses_sse(const double *y, size_t n, double alpha, double level0);
/* SES with alpha fixed and the SSE-optimal initial level (n >= 1). */
int hb_ses_fit_alpha(const double *y, size_t n, double alpha, struct hb_ses *m, struct hb_error *err);
/* SES with alpha and initial level fitted (n >= 1; n == 1 gives level y_1). */
int hb_ses_fit(const double *y, size_t n, struct hb_ses *m, struct hb_error *err);
/* hb_ses_fit with the weight grid's evaluations spread over pool's
 * threads (NULL: serial); the same bits for any pool. */
int hb_ses_fit_on(const double *y, size_t n, struct hb_pool *pool, struct hb_ses *m, struct hb_error *err);
/* Flat forecast at any horizon: l_N. */
double hb_ses_forecast(const struct hb_ses *m);

double hb_holt_sse(const double *y, size_t n, double alpha, double beta, double level0, double trend0);
/* Holt with (alpha, beta) fixed and the SSE-optimal initial state (n >= 2). */
int hb_holt_fit_weights(const double *y, size_t n, double alpha, double beta, struct hb_holt *m,
			struct hb_error *err);
/* Holt with weights and initial state fitted (n >= 2). */
int hb_holt_fit(const double *y, size_t n, struct hb_holt *m, struct hb_error *err);
/* l_N + h b_N, h in adaptation points after the last observation. */
double hb_holt_forecast(const struct hb_holt *m, double h);

#endif
