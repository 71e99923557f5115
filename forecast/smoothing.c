/*
 * smoothing.c: SES and Holt's linear trend, fitted by one-step-ahead SSE
 * over the weights and the initial state (see smoothing.h).
 *
 * Initial state (statsmodels' default "estimated" initialisation): for fixed
 * weights the residuals are affine in the initial state, e(s0 + d) =
 * e(s0) - X d, where X is the response of the residuals to a unit change of
 * the state.  The best d is a least-squares solution (closed form for SES's
 * one column, gsl_multifit_linear_tsvd for Holt's two), so the weights
 * minimise a profile SSE.  The reference state s0 is y_1 for SES and the line
 * through y_1, y_2 for Holt, which are exact for constant and linear series:
 * their residuals vanish without cancellation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_min.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multimin.h>

#include "smoothing.h"

/* ------------------------------------------------------------------------ */
/* Bounded 1-D minimisation on [a, b]: grid, then Brent when the grid brackets
 * an interior minimum; a minimum on the grid's edge is refined inside the
 * edge cell, down to a cell of 1e-6. */

typedef double min1d_fn(double x, void *p);
/* The same function at n points at once (fx[i] = f(x[i])), bit for bit;
 * NULL: point by point. */
typedef void min1d_batch_fn(const double *x, int n, void *p, double *fx);

/* Brent on [lo, hi] from mid, given the grid's values there (flo, fmid,
 * fhi: f at those very points, so gsl_min_fminimizer_set would compute the
 * same three values again; its only other effect, refusing a value that is
 * not finite, is kept).  Returns the minimiser and, in *fx, f there: GSL
 * keeps f_minimum = f(x_minimum) from its own call, so the caller's check of
 * the result needs no further evaluation. */
static double brent(min1d_fn *f, void *p, double lo, double flo, double mid, double fmid, double hi,
		    double fhi, double *fx)
{
	gsl_function F = { .function = f, .params = p };
	gsl_min_fminimizer *s;
	double x;

	*fx = fmid;
	if (!isfinite(flo) || !isfinite(fmid) || !isfinite(fhi))
		return mid;
	s = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
	/* callers guarantee f(mid) < f(lo), f(hi): gsl_min_fminimizer_set's
	 * precondition.  Without memory (GSL's handler is off in cli/, so the
	 * allocator returns NULL) or a minimiser, the grid's best point stands. */
	if (!s)
		return mid;
	if (gsl_min_fminimizer_set_with_values(s, &F, mid, fmid, lo, flo, hi, fhi) != GSL_SUCCESS) {
		gsl_min_fminimizer_free(s);
		return mid;
	}
	for (int it = 0; it < 100; it++) {
		if (gsl_min_fminimizer_iterate(s) != GSL_SUCCESS)
			break;
		if (gsl_min_test_interval(gsl_min_fminimizer_x_lower(s), gsl_min_fminimizer_x_upper(s),
					  1e-10, 0.0) == GSL_SUCCESS)
			break;
	}
	x = gsl_min_fminimizer_x_minimum(s);
	*fx = gsl_min_fminimizer_f_minimum(s);
	gsl_min_fminimizer_free(s);
	return x;
}

/* The minimiser on [a, b]; *fbest = f there, bit for bit (the batch
 * function's values are f's). */
static double argmin_1d_b(min1d_fn *f, min1d_batch_fn *fb, void *p, double a, double b, int ngrid, double *fbest)
{
	double fx[128], gx[128], best_x = a, fnew;
	int k = 0;

	for (int i = 0; i < ngrid; i++)
		gx[i] = a + (b - a) * i / (ngrid - 1);
	if (fb)
		fb(gx, ngrid, p, fx);
	for (int i = 0; i < ngrid; i++) {
		if (!fb)
			fx[i] = f(gx[i], p);
		if (fx[i] < fx[k])
			k = i;
	}
	best_x = a + (b - a) * k / (ngrid - 1);
	*fbest = fx[k];
	if (k > 0 && k < ngrid - 1) {
		if (fx[k] < fx[k - 1] && fx[k] < fx[k + 1]) {
			/* the same expressions as gx[k - 1], gx[k + 1] */
			double x = brent(f, p, a + (b - a) * (k - 1) / (ngrid - 1), fx[k - 1], best_x, fx[k],
					 a + (b - a) * (k + 1) / (ngrid - 1), fx[k + 1], &fnew);

			if (fnew <= fx[k]) {
				*fbest = fnew;
				return x;
			}
			return best_x;
		}
		return best_x; /* plateau: every grid neighbour is as good */
	}
	if ((b - a) / (ngrid - 1) > 1e-6) {
		double h = (b - a) / (ngrid - 1);
		double x = k == 0 ? argmin_1d_b(f, fb, p, a, a + h, 11, &fnew) : argmin_1d_b(f, fb, p, b - h, b, 11, &fnew);

		if (fnew < fx[k]) {
			*fbest = fnew;
			return x;
		}
		return best_x;
	}
	return best_x;
}

/* ------------------------------------------------------------------------ */
/* SES */

double hb_ses_sse(const double *y, size_t n, double alpha, double level0)
{
	double l = level0, sse = 0.0;

	for (size_t t = 0; t < n; t++) {
		double e = y[t] - l;

		sse += e * e;
		l += alpha * e;
	}
	return sse;
}

/* Brent's evaluations kept by alpha (ses_objective): once its bracket is
 * within its step tolerance (GSL_SQRT_DBL_EPSILON |x|, coarser than the
 * 1e-10 interval hb_ses_fit_on asks for) Brent asks again for alphas it
 * has evaluated; on two Philly days under JABAS 1.14 M of 1.27 M of its
 * evaluations repeated an alpha of the same fit, bit for bit.  The SSE is
 * a function of alpha and the series, so a kept value is the value. */
#define SES_MEMO 16

struct ses_ctx {
	const double *y;
	size_t n;
	double *r;      /* n residuals y_t - l_t of the first pass, or NULL */
	struct hb_pool *pool; /* the grid's lane blocks, when worth it (SES_POOL_MIN) */
	double memo_a[SES_MEMO], memo_f[SES_MEMO]; /* the last evaluations (a ring) */
	int nmemo, next_memo;
};

/* SSE-optimal initial level for alpha, and the profile SSE.  The second
 * pass's levels are the first pass's (the same recurrence from y_1), so its
 * residuals y_t - l_t are too: with r (n doubles) they are kept, and the
 * second pass is r_t - w_t d alone, without the level's chain of dependent
 * subtract, multiply and add (the single-alpha evaluations of Brent's
 * search wait on that chain).  The same operations on the same values
 * either way. */
static double ses_profile(const double *y, size_t n, double alpha, double *level0, double *r)
{
	double l = y[0], w = 1.0, ew = 0.0, ww = 0.0, d, sse = 0.0;

	for (size_t t = 0; t < n; t++) {
		double e = y[t] - l;

		if (r)
			r[t] = e;
		ew += e * w;
		ww += w * w;
		l += alpha * e;
		w *= 1.0 - alpha;
	}
	d = ew / ww; /* ww >= 1: the first residual always sees the initial level */
	l = y[0];
	w = 1.0;
	if (r) {
		for (size_t t = 0; t < n; t++) {
			double e = r[t] - w * d;

			sse += e * e;
			w *= 1.0 - alpha;
		}
	} else {
		for (size_t t = 0; t < n; t++) {
			double e = y[t] - l - w * d;

			sse += e * e;
			l += alpha * (y[t] - l);
			w *= 1.0 - alpha;
		}
	}
	*level0 = y[0] + d;
	return sse;
}

static double ses_objective(double alpha, void *p)
{
	struct ses_ctx *c = p;
	double l0, f;

	for (int i = 0; i < c->nmemo; i++)
		if (memcmp(&c->memo_a[i], &alpha, sizeof(alpha)) == 0)
			return c->memo_f[i];
	f = ses_profile(c->y, c->n, alpha, &l0, c->r);
	c->memo_a[c->next_memo] = alpha;
	c->memo_f[c->next_memo] = f;
	c->next_memo = (c->next_memo + 1) % SES_MEMO;
	if (c->nmemo < SES_MEMO)
		c->nmemo++;
	return f;
}

/* ses_profile's SSE at up to SES_LANES alphas at once: each lane runs the
 * very operations of ses_profile in the same order (no reassociation, and
 * C11 mode contracts nothing into FMAs), so each result is bit-identical;
 * the lanes' recurrences are independent, which a single alpha's chain of
 * dependent updates is not.  The grid of hb_ses_fit is most of an SES fit,
 * and JABAS refits SES on the whole history at every epoch end. */
#define SES_LANES 8

/* Series shorter than this fit their grid on one thread: a lane block
 * then costs about as much as waking a worker (a few microseconds), and
 * most of JABAS's histories are that short; the long ones (up to
 * HB_FC_SMOOTH_WINDOW points) are where SES's time goes. */
#define SES_POOL_MIN 2048

/* One block of up to SES_LANES alphas starting at j0. */
static void ses_lanes(const struct ses_ctx *c, const double *alpha, int n_alpha, int j0, double *sse_out)
{
	const double *y = c->y;
	const int m = n_alpha - j0 < SES_LANES ? n_alpha - j0 : SES_LANES;
	double a[SES_LANES], l[SES_LANES], w[SES_LANES], ew[SES_LANES], ww[SES_LANES], d[SES_LANES],
		sse[SES_LANES];

	for (int j = 0; j < SES_LANES; j++) {
		a[j] = j < m ? alpha[j0 + j] : 0.0;
		l[j] = y[0];
		w[j] = 1.0;
		ew[j] = ww[j] = sse[j] = 0.0;
	}
	for (size_t t = 0; t < c->n; t++)
		for (int j = 0; j < SES_LANES; j++) {
			double e = y[t] - l[j];

			ew[j] += e * w[j];
			ww[j] += w[j] * w[j];
			l[j] += a[j] * e;
			w[j] *= 1.0 - a[j];
		}
	for (int j = 0; j < SES_LANES; j++) {
		d[j] = ew[j] / ww[j];
		l[j] = y[0];
		w[j] = 1.0;
	}
	for (size_t t = 0; t < c->n; t++)
		for (int j = 0; j < SES_LANES; j++) {
			double e = y[t] - l[j] - w[j] * d[j];

			sse[j] += e * e;
			l[j] += a[j] * (y[t] - l[j]);
			w[j] *= 1.0 - a[j];
		}
	for (int j = 0; j < m; j++)
		sse_out[j0 + j] = sse[j];
}

struct ses_blocks {
	const struct ses_ctx *c;
	const double *alpha;
	int n_alpha;
	double *sse_out;        /* each block writes its own entries */
};

static void ses_block_task(void *ctx, int task, int worker)
{
	const struct ses_blocks *b = ctx;

	(void)worker;
	ses_lanes(b->c, b->alpha, b->n_alpha, task * SES_LANES, b->sse_out);
}

static void ses_objective_batch(const double *alpha, int n_alpha, void *p, double *sse_out)
{
	const struct ses_ctx *c = p;
	struct ses_blocks b = { c, alpha, n_alpha, sse_out };
	const int nblocks = (n_alpha + SES_LANES - 1) / SES_LANES;

	/* the blocks are independent and each value is its lane's alone, so
	 * any thread may run any block */
	if (c->n >= SES_POOL_MIN)
		hb_pool_run(c->pool, nblocks, ses_block_task, &b);
	else
		for (int k = 0; k < nblocks; k++)
			ses_block_task(&b, k, 0);
}

static int check_series(const double *y, size_t n, size_t min_n, const char *what, struct hb_error *err)
{
	if (n < min_n)
		return hb_input_error(err, "%s: needs at least %zu observations, got %zu", what, min_n, n);
	for (size_t t = 0; t < n; t++)
		if (!isfinite(y[t]))
			return hb_input_error(err, "%s: observation %zu (%g) is not finite", what, t + 1, y[t]);
	return 0;
}

int hb_ses_fit_alpha(const double *y, size_t n, double alpha, struct hb_ses *m, struct hb_error *err)
{
	double l, sse = 0.0;

	if (check_series(y, n, 1, "SES", err) < 0)
		return -1;
	if (!(alpha >= 0.0 && alpha <= 1.0))
		return hb_input_error(err, "SES: alpha %g outside [0, 1]", alpha);
	m->alpha = alpha;
	ses_profile(y, n, alpha, &m->level0, NULL);
	/* hb_ses_sse, whose level recurrence also gives the final level */
	l = m->level0;
	for (size_t t = 0; t < n; t++) {
		double e = y[t] - l;

		sse += e * e;
		l += alpha * e;
	}
	m->level = l;
	m->sse = sse;
	m->n = n;
	return 0;
}

int hb_ses_fit(const double *y, size_t n, struct hb_ses *m, struct hb_error *err)
{
	return hb_ses_fit_on(y, n, NULL, m, err);
}

int hb_ses_fit_on(const double *y, size_t n, struct hb_pool *pool, struct hb_ses *m, struct hb_error *err)
{
	/* without memory for the residuals the objective recomputes them */
	struct ses_ctx c = { .y = y, .n = n, .r = n > 1 ? malloc(n * sizeof(double)) : NULL, .pool = pool };
	double alpha = 1.0, f;
	int rc;

	if (check_series(y, n, 1, "SES", err) < 0) {
		free(c.r);
		return -1;
	}
	/* 101 grid points: statsmodels' brute start uses a similar 0.01 step */
	if (n > 1)
		alpha = argmin_1d_b(ses_objective, ses_objective_batch, &c, 0.0, 1.0, 101, &f);
	rc = hb_ses_fit_alpha(y, n, alpha, m, err);
	free(c.r);
	return rc;
}

double hb_ses_forecast(const struct hb_ses *m)
{
	return m->level;
}

/* ------------------------------------------------------------------------ */
/* Holt */

double hb_holt_sse(const double *y, size_t n, double alpha, double beta, double level0, double trend0)
{
	double l = level0, b = trend0, sse = 0.0;

	for (size_t t = 0; t < n; t++) {
		double e = y[t] - (l + b), lp = l;

		sse += e * e;
		l = alpha * y[t] + (1.0 - alpha) * (l + b);
		b = beta * (l - lp) + (1.0 - beta) * b;
	}
	return sse;
}

struct holt_ctx {
	const double *y;
	size_t n;
	gsl_matrix *X;                       /* residual response to the initial state, n x 2 */
	gsl_vector *e;                       /* residuals from the reference state */
	gsl_vector *d;                       /* state correction */
	gsl_matrix *cov;
	gsl_multifit_linear_workspace *work;
	double penalty;                      /* weight of the distance outside [0, 1]^2 */
};

static void holt_ctx_free(struct holt_ctx *c)
{
	gsl_matrix_free(c->X);
	gsl_vector_free(c->e);
	gsl_vector_free(c->d);
	gsl_matrix_free(c->cov);
	if (c->work)
		gsl_multifit_linear_free(c->work);
}

static int holt_ctx_init(struct holt_ctx *c, const double *y, size_t n, struct hb_error *err)
{
	c->y = y;
	c->n = n;
	c->X = gsl_matrix_alloc(n, 2);
	c->e = gsl_vector_alloc(n);
	c->d = gsl_vector_alloc(2);
	c->cov = gsl_matrix_alloc(2, 2);
	c->work = gsl_multifit_linear_alloc(n, 2);
	c->penalty = 1.0;
	if (!c->X || !c->e || !c->d || !c->cov || !c->work) {
		holt_ctx_free(c);
		return hb_runtime_error(err, "Holt: out of memory for %zu points", n);
	}
	return 0;
}

/* Profile SSE at (alpha, beta); the best initial state goes to l0, b0. */
static double holt_profile(struct holt_ctx *c, double alpha, double beta, double *l0, double *b0)
{
	const double *y = c->y;
	double rl = 2.0 * y[0] - y[1], rb = y[1] - y[0]; /* the line through y_1, y_2 at t = 0 */
	double l = rl, b = rb, dl[2] = { 1.0, 0.0 }, db[2] = { 0.0, 1.0 }, chisq;
	size_t rank;

	for (size_t t = 0; t < c->n; t++) {
		double lp = l;

		gsl_vector_set(c->e, t, y[t] - (l + b));
		l = alpha * y[t] + (1.0 - alpha) * (l + b);
		b = beta * (l - lp) + (1.0 - beta) * b;
		for (int k = 0; k < 2; k++) {
			double dlp = dl[k];

			gsl_matrix_set(c->X, t, k, dl[k] + db[k]);
			dl[k] = (1.0 - alpha) * (dl[k] + db[k]);
			db[k] = beta * (dl[k] - dlp) + (1.0 - beta) * db[k];
		}
	}
	/* truncated SVD: weights such as (1, 1) make the two columns nearly
	 * collinear; the minimum-norm correction is then the one to take */
	gsl_multifit_linear_tsvd(c->X, c->e, 1e-12, c->d, c->cov, &chisq, &rank, c->work);
	*l0 = rl + gsl_vector_get(c->d, 0);
	*b0 = rb + gsl_vector_get(c->d, 1);
	return hb_holt_sse(y, c->n, alpha, beta, *l0, *b0);
}

static double clamp01(double v)
{
	return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

static double holt_objective(const gsl_vector *v, void *p)
{
	struct holt_ctx *c = p;
	double a = gsl_vector_get(v, 0), b = gsl_vector_get(v, 1);
	double ca = clamp01(a), cb = clamp01(b), l0, b0;

	/* clamping with a quadratic pull back into the box */
	return holt_profile(c, ca, cb, &l0, &b0) + c->penalty * ((a - ca) * (a - ca) + (b - cb) * (b - cb));
}

static void holt_finish(const double *y, size_t n, double alpha, double beta, double l0, double b0,
			struct hb_holt *m)
{
	double l = l0, b = b0;

	for (size_t t = 0; t < n; t++) {
		double lp = l;

		l = alpha * y[t] + (1.0 - alpha) * (l + b);
		b = beta * (l - lp) + (1.0 - beta) * b;
	}
	m->alpha = alpha;
	m->beta = beta;
	m->level0 = l0;
	m->trend0 = b0;
	m->level = l;
	m->trend = b;
	m->sse = hb_holt_sse(y, n, alpha, beta, l0, b0);
	m->n = n;
}

int hb_holt_fit_weights(const double *y, size_t n, double alpha, double beta, struct hb_holt *m,
			struct hb_error *err)
{
	struct holt_ctx c;
	double l0, b0;

	if (check_series(y, n, 2, "Holt", err) < 0)
		return -1;
	if (!(alpha >= 0.0 && alpha <= 1.0) || !(beta >= 0.0 && beta <= 1.0))
		return hb_input_error(err, "Holt: alpha %g and beta %g must lie in [0, 1]", alpha, beta);
	if (holt_ctx_init(&c, y, n, err) < 0)
		return -1;
	holt_profile(&c, alpha, beta, &l0, &b0);
	holt_ctx_free(&c);
	holt_finish(y, n, alpha, beta, l0, b0, m);
	return 0;
}

int hb_holt_fit(const double *y, size_t n, struct hb_holt *m, struct hb_error *err)
{
	enum { G = 21 };
	struct holt_ctx c;
	gsl_multimin_function F;
	gsl_multimin_fminimizer *s;
	gsl_vector *v0, *step;
	double best = INFINITY, ba = 0.0, bb = 0.0, l0, b0, na, nb;
	int started;

	if (check_series(y, n, 2, "Holt", err) < 0)
		return -1;
	if (holt_ctx_init(&c, y, n, err) < 0)
		return -1;
	for (int i = 0; i < G; i++)
		for (int j = 0; j < G; j++) {
			double a = (double)i / (G - 1), b = (double)j / (G - 1);
			double f = holt_profile(&c, a, b, &l0, &b0);

			if (f < best) {
				best = f;
				ba = a;
				bb = b;
			}
		}
	c.penalty = 1.0 + best;
	F = (gsl_multimin_function){ .f = holt_objective, .n = 2, .params = &c };
	s = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
	v0 = gsl_vector_alloc(2);
	step = gsl_vector_alloc(2);
	if (!s || !v0 || !step) {
		if (s)
			gsl_multimin_fminimizer_free(s);
		gsl_vector_free(v0);
		gsl_vector_free(step);
		holt_ctx_free(&c);
		return hb_runtime_error(err, "Holt: out of memory for the minimiser");
	}
	gsl_vector_set(v0, 0, ba);
	gsl_vector_set(v0, 1, bb);
	gsl_vector_set_all(step, 0.5 / (G - 1));
	/* a failed start keeps the grid's best (ba, bb) */
	started = gsl_multimin_fminimizer_set(s, &F, v0, step) == GSL_SUCCESS;
	for (int it = 0; started && it < 500; it++) {
		if (gsl_multimin_fminimizer_iterate(s) != GSL_SUCCESS)
			break;
		if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), 1e-8) == GSL_SUCCESS)
			break;
	}
	if (started) {
		na = clamp01(gsl_vector_get(s->x, 0));
		nb = clamp01(gsl_vector_get(s->x, 1));
		if (holt_profile(&c, na, nb, &l0, &b0) < best) {
			ba = na;
			bb = nb;
		}
	}
	gsl_multimin_fminimizer_free(s);
	gsl_vector_free(v0);
	gsl_vector_free(step);
	holt_profile(&c, ba, bb, &l0, &b0);
	holt_ctx_free(&c);
	holt_finish(y, n, ba, bb, l0, b0, m);
	return 0;
}

double hb_holt_forecast(const struct hb_holt *m, double h)
{
	return m->level + h * m->trend;
}
