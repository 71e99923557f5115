/*
 * gpr.c: JABAS's periodic-kernel GPR, fitted by maximising the log marginal
 * likelihood (notes/jabas.md §4.2).  See gpr.h for the model and the two
 * numerical decisions (modified Cholesky as the positive-definiteness test,
 * logistic reparametrisation for the bounds).
 *
 * Order: kernel and workspace, LML with analytic gradient, the bounded
 * objective for gsl_multimin, one BFGS start, the fit with restarts,
 * prediction, benchmark.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_multimin.h>

#include "gpr.h"
#include "mchol.h" /* defines: hb_mchol_decomp, hb_mchol_solve, hb_mchol_invert */
#include "rng.h" /* defines: hb_rng_seed, hb_rng_uniform, hb_rng_normal, HB_STREAM_FIT */

/* Objective value for a hyper-parameter vector whose K is not positive
 * definite (scikit-learn: LML = -inf).  Finite so that BFGS2's cubic line
 * search shrinks its step instead of producing inf - inf. */
#define GPR_INFEASIBLE 1e30
/* Stop a BFGS start when the gradient norm in u falls below this
 * (scikit-learn's L-BFGS-B uses pgtol 1e-5). */
#define GPR_GTOL 1e-5
/* ... or when an iteration lowers the objective by less than this relative
 * amount (L-BFGS-B's default factr 1e7 times machine epsilon). */
#define GPR_FTOL 2.220446049250313e-09
/* Cap on LML evaluations per start, per allowed iteration: starts drawn far
 * out (c, l near 1e5) sit on a nearly singular ridge where line searches are
 * long and never reach a competitive optimum. */
#define GPR_EVALS_PER_ITER 5
/* Starting points stay this fraction of the log range inside the bounds,
 * where the logistic map is still invertible with a usable slope. */
#define GPR_START_MARGIN 1e-3

void hb_gpr_config_default(struct hb_gpr_config *cfg, uint64_t seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->init = (struct hb_gpr_hyper){ .c = 1.0, .length = 1.0, .period = 3.0 };
	cfg->bounds = (struct hb_gpr_bounds){
		.c_lo = 1.0, .c_hi = 1e6,
		.length_lo = 1e-5, .length_hi = 1e5,
		.period_lo = 1e-2, .period_hi = 10.0,
	};
	cfg->noise = 1e-10;
	cfg->normalize_y = 1;
	cfg->optimize = 1;
	cfg->restarts = 9;
	cfg->max_iter = 200;
	cfg->seed = seed;
}

double hb_gpr_kernel(const struct hb_gpr_hyper *h, double x1, double x2)
{
	double s = sin(M_PI * fabs(x1 - x2) / h->period);

	return h->c * exp(-2.0 * s * s / (h->length * h->length));
}

/* ------------------------------------------------------------------------ */
/* Workspace shared by every LML evaluation of one data set. */

struct gpr_ws {
	size_t n;
	const double *x;        /* inputs (caller's array) */
	/* n x n row-major arrays and n-vectors for mchol.c, GSL's modified
	 * Cholesky without its per-element calls (the windows are 3 to a few
	 * dozen points, where those calls were most of a fit's time) */
	double *y;              /* standardised targets */
	double *K;              /* kernel matrix (lower triangle), then its LDL' factor */
	double *Kinv;           /* K^-1, for the gradient */
	double *work;           /* n x n scratch of the solve and the inverse */
	size_t *perm;           /* pivoting of the factorisation */
	double *E;              /* perturbation the modified Cholesky needed */
	double *alpha;          /* K^-1 y */
	double noise;           /* diagonal jitter */
	/* The distinct |x_i - x_j| (i > j): JABAS's points are p steps apart, so
	 * n points have about n - 1 gaps, and the kernel's sin and exp depend on
	 * the pair through its gap only; computed once per gap, the same
	 * expression on the same double gives the same entries. */
	double *gap;            /* distinct gaps */
	size_t ngap;
	/* [ngap] index of the gap twice gap k (bitwise), or ngap: then pi 2g
	 * / P is 2 (pi g / P) exactly when no rounding step under- or
	 * overflows, and the gradient's sin(2a) is the value's sin of that
	 * gap, checked bitwise at each evaluation */
	size_t *gap_twice;
	size_t *pair_gap;       /* [n x n] lower triangle: index into gap */
	/* [ngap] per-gap terms of the evaluation in progress: c S, with a =
	 * pi gap / P and sin(a) kept for the gradient, which derives
	 * (dK/dlog l) / (c S) = 4 sin^2(a) / l^2 and (dK/dlog P) / (c S) =
	 * 2 a sin(2a) / l^2 from them, and reads all through pair_gap: a
	 * value-only evaluation (most of a line search) needs neither the
	 * ratios nor the second sine. */
	double *g_cS, *g_a, *g_sn, *g_dl, *g_dp;
	double lo[3], hi[3];    /* log bounds, for the reparametrisation */
	/* cache of the last evaluation (gsl_multimin asks f and df separately) */
	double c_theta[3];
	int c_have;             /* 0 none, 1 value, 2 value and gradient */
	double c_lml;
	double c_grad[3];
	double c_c, c_il2;      /* c and 1 / l^2 at c_theta (exp(theta) once per theta) */
	/* cache of the last u_to_theta: gsl_multimin asks f and then df at
	 * the same u, and the logistic map is three exp calls */
	double u_u[3], u_s[3];
	int u_have;
	long evals;             /* evaluations in the current start */
	int nomem;              /* 1: a start could not allocate GSL's minimiser */
	int borrowed;           /* 1: y, gap and pair_gap are another workspace's (ws_clone) */
};

/* Gaps compared with each other before a pair gets its own (see gap). */
#define GAP_SEARCH 64

static void ws_free(struct gpr_ws *w)
{
	if (!w->borrowed) {
		free(w->y);
		free(w->gap);
		free(w->gap_twice);
		free(w->pair_gap);
	}
	free(w->K);
	free(w->Kinv);
	free(w->work);
	free(w->perm);
	free(w->E);
	free(w->alpha);
	free(w->g_cS);
	free(w->g_a);
	free(w->g_sn);
	free(w->g_dl);
	free(w->g_dp);
	memset(w, 0, sizeof(*w));
}

/* Standardise y as scikit-learn's normalize_y does: population std, and a
 * std that is zero up to rounding (relative 1e-12) counts as 1. */
static void standardise(const double *y, size_t n, int normalize, double *mean, double *scale)
{
	double m = 0.0, v = 0.0;

	*mean = 0.0;
	*scale = 1.0;
	if (!normalize)
		return;
	for (size_t i = 0; i < n; i++)
		m += y[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		v += (y[i] - m) * (y[i] - m);
	v = sqrt(v / (double)n);
	*mean = m;
	if (v > 1e-12 * fmax(fabs(m), 1.0))
		*scale = v;
}

/* The arrays every evaluation writes (w->n set): one set per thread
 * (ws_init's workspace, ws_clone's).  -1 without memory; ws_free frees
 * what was made. */
static int ws_scratch_new(struct gpr_ws *w)
{
	const size_t n = w->n, npairs = n * (n - 1) / 2 + 1;

	/* zeroed: the upper triangles are never written, and GSL's inverse
	 * (mchol.c's fallback above 24 points) copies the whole factor */
	w->K = calloc(n * n, sizeof(double));
	w->Kinv = malloc(n * n * sizeof(double));
	w->work = malloc(n * n * sizeof(double));
	w->perm = malloc(n * sizeof(size_t));
	w->E = malloc(n * sizeof(double));
	w->alpha = malloc(n * sizeof(double));
	w->g_cS = malloc(npairs * sizeof(double));
	w->g_a = malloc(npairs * sizeof(double));
	w->g_sn = malloc(npairs * sizeof(double));
	w->g_dl = malloc(npairs * sizeof(double));
	w->g_dp = malloc(npairs * sizeof(double));
	if (!w->K || !w->Kinv || !w->work || !w->perm || !w->E || !w->alpha || !w->g_cS || !w->g_a || !w->g_sn ||
	    !w->g_dl || !w->g_dp)
		return -1;
	return 0;
}

static int ws_init(struct gpr_ws *w, const double *x, const double *y, size_t n,
		   double mean, double scale, double noise, struct hb_error *err)
{
	const size_t npairs = n * (n - 1) / 2 + 1;

	memset(w, 0, sizeof(*w));
	w->n = n;
	w->x = x;
	w->noise = noise;
	w->y = malloc(n * sizeof(double));
	w->gap = malloc(npairs * sizeof(double));
	w->pair_gap = malloc(n * n * sizeof(size_t));
	w->gap_twice = malloc(npairs * sizeof(size_t));
	if (!w->y || !w->gap || !w->pair_gap || !w->gap_twice || ws_scratch_new(w) < 0) {
		ws_free(w);
		return hb_runtime_error(err, "GPR: out of memory for %zu points", n);
	}
	for (size_t i = 0; i < n; i++)
		w->y[i] = (y[i] - mean) / scale;
	/* Distinct gaps, by linear search while they are few (evenly spaced
	 * points); past GAP_SEARCH a pair keeps a gap of its own. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++) {
			double d = fabs(x[i] - x[j]);
			size_t k = 0, lim = w->ngap < GAP_SEARCH ? w->ngap : GAP_SEARCH;

			while (k < lim && memcmp(&w->gap[k], &d, sizeof(d)) != 0)
				k++;
			if (k == lim) {
				k = w->ngap++;
				w->gap[k] = d;
			}
			w->pair_gap[i * n + j] = k;
		}
	/* among the first GAP_SEARCH gaps only: irregular points have up to
	 * n (n - 1) / 2 gaps */
	for (size_t k = 0; k < w->ngap; k++) {
		const double d2 = 2.0 * w->gap[k];
		const size_t lim = w->ngap < GAP_SEARCH ? w->ngap : GAP_SEARCH;
		size_t t = 0;

		while (t < lim && memcmp(&w->gap[t], &d2, sizeof(d2)) != 0)
			t++;
		w->gap_twice[k] = t < lim ? t : w->ngap;
	}
	return 0;
}

/* A workspace for another thread's starts: src's data (inputs, targets,
 * gaps, bounds), which no evaluation writes, shared; the scratch every
 * evaluation writes its own. */
static int ws_clone(struct gpr_ws *w, const struct gpr_ws *src)
{
	const size_t n = src->n;

	memset(w, 0, sizeof(*w));
	w->n = n;
	w->x = src->x;
	w->y = src->y;
	w->gap = src->gap;
	w->gap_twice = src->gap_twice;
	w->ngap = src->ngap;
	w->pair_gap = src->pair_gap;
	w->noise = src->noise;
	memcpy(w->lo, src->lo, sizeof(w->lo));
	memcpy(w->hi, src->hi, sizeof(w->hi));
	w->borrowed = 1;
	if (ws_scratch_new(w) < 0) {
		ws_free(w);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Log marginal likelihood and its gradient in theta = (log c, log l, log P).
 *
 *   dK/dlog c = c S
 *   dK/dlog l = c S * 4 sin^2(a) / l^2            a = pi |x - x'| / P
 *   dK/dlog P = c S * 2 a sin(2a) / l^2
 *   dLML/dtheta = 1/2 tr((alpha alpha' - K^-1) dK/dtheta)
 *
 * Returns 1 if K is positive definite (lml and grad set), 0 if not. */
static int ws_eval(struct gpr_ws *w, const double theta[3], double *lml, double grad[3])
{
	const size_t n = w->n;
	double c, il2, quad, logdet = 0.0;
	int same = w->c_have && memcmp(w->c_theta, theta, sizeof(w->c_theta)) == 0;

	if (same && (!grad || w->c_have == 2 || !isfinite(w->c_lml))) {
		*lml = w->c_lml;
		if (grad)
			memcpy(grad, w->c_grad, sizeof(w->c_grad));
		return isfinite(w->c_lml);
	}
	if (same) {
		/* the gradient at the theta of the last value: its c and 1/l^2 */
		c = w->c_c;
		il2 = w->c_il2;
	} else {
		const double l = exp(theta[1]), P = exp(theta[2]);

		c = exp(theta[0]);
		il2 = 1.0 / (l * l);
		w->c_c = c;
		w->c_il2 = il2;
		w->evals++;
		for (size_t k = 0; k < w->ngap; k++) {
			double a = M_PI * w->gap[k] / P;
			double sn = sin(a);

			w->g_cS[k] = c * exp(-2.0 * sn * sn * il2);
			w->g_a[k] = a;
			w->g_sn[k] = sn;
		}
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j < i; j++)
				w->K[i * n + j] = w->g_cS[w->pair_gap[i * n + j]];
			w->K[i * n + i] = c + w->noise;
		}
		hb_mchol_decomp(w->K, n, w->perm, w->E);
		memcpy(w->c_theta, theta, sizeof(w->c_theta));
		w->c_have = 1;
		w->c_lml = -INFINITY;
		w->c_grad[0] = w->c_grad[1] = w->c_grad[2] = 0.0;
		/* E in pivot order, as the diagonal D: any perturbation means
		 * "not positive definite" */
		for (size_t i = 0; i < n; i++) {
			double d = w->K[i * n + i];

			if (w->E[i] != 0.0 || !(d > 0.0) || !isfinite(d))
				return 0;
			logdet += log(d);
		}
		hb_mchol_solve(w->K, n, w->perm, w->y, w->alpha, w->work);
		/* y' alpha, summed as CBLAS ddot sums */
		quad = 0.0;
		for (size_t i = 0; i < n; i++)
			quad += w->y[i] * w->alpha[i];
		w->c_lml = -0.5 * quad - 0.5 * logdet - 0.5 * (double)n * log(2.0 * M_PI);
		if (!isfinite(w->c_lml)) {
			w->c_lml = -INFINITY;
			return 0;
		}
	}
	*lml = w->c_lml;
	if (!grad)
		return 1;
	/* the factor, alpha and the per-pair terms above still belong to theta */
	if (hb_mchol_invert(w->K, n, w->perm, w->Kinv, w->work) < 0) {
		w->c_lml = -INFINITY;
		return 0;
	}
	for (size_t k = 0; k < w->ngap; k++) {
		const double a = w->g_a[k], sn = w->g_sn[k], a2 = 2.0 * a;
		const size_t t = w->gap_twice[k];
		/* sin of the same double, bit for bit, when gap t's a is 2a */
		const double sn2 = t < w->ngap && memcmp(&w->g_a[t], &a2, sizeof(a2)) == 0 ? w->g_sn[t] : sin(a2);

		w->g_dl[k] = 4.0 * sn * sn * il2;
		w->g_dp[k] = 2.0 * a * sn2 * il2;
	}
	/* The three sums in locals: grad may alias the workspace's arrays as
	 * far as the compiler knows, so summing into it stored and reloaded
	 * every term.  Pairs in the same order, (i, 0) to (i, i) row by row,
	 * the diagonal last in its row. */
	{
		double g0 = 0.0, g1 = 0.0, g2 = 0.0;

		for (size_t i = 0; i < n; i++) {
			const double ai = w->alpha[i];
			const double *kinv = &w->Kinv[i * n];
			const size_t *pg = &w->pair_gap[i * n];
			double W, hWcS;

			for (size_t j = 0; j < i; j++) {
				const size_t k = pg[j];

				/* 1/2 tr(): off-diagonal pairs twice, 1.0 W = W */
				W = ai * w->alpha[j] - kinv[j];
				hWcS = W * w->g_cS[k];
				g0 += hWcS;
				g1 += hWcS * w->g_dl[k];
				g2 += hWcS * w->g_dp[k];
			}
			/* the diagonal: c S = c, both derivative ratios 0 (kept as
			 * products: a NaN or -0 term adds as before) */
			W = ai * w->alpha[i] - kinv[i];
			hWcS = 0.5 * W * c;
			g0 += hWcS;
			g1 += hWcS * 0.0;
			g2 += hWcS * 0.0;
		}
		grad[0] = g0;
		grad[1] = g1;
		grad[2] = g2;
	}
	memcpy(w->c_grad, grad, sizeof(w->c_grad));
	w->c_have = 2;
	return 1;
}

int hb_gpr_log_marginal_likelihood(const double *x, const double *y, size_t n,
				   const struct hb_gpr_hyper *h, double noise, int normalize_y,
				   double *lml, double grad[3], struct hb_error *err)
{
	struct gpr_ws w;
	double mean, scale, theta[3];

	if (n == 0)
		return hb_input_error(err, "GPR: no training points");
	if (n > HB_GPR_MAX_POINTS)
		return hb_input_error(err, "GPR: %zu training points, at most %d", n, HB_GPR_MAX_POINTS);
	if (!(h->c > 0) || !(h->length > 0) || !(h->period > 0) || !(noise >= 0))
		return hb_input_error(err, "GPR: hyper-parameters c=%g length=%g period=%g noise=%g must be positive",
				      h->c, h->length, h->period, noise);
	standardise(y, n, normalize_y, &mean, &scale);
	if (ws_init(&w, x, y, n, mean, scale, noise, err) < 0)
		return -1;
	theta[0] = log(h->c);
	theta[1] = log(h->length);
	theta[2] = log(h->period);
	if (!ws_eval(&w, theta, lml, grad)) {
		*lml = -INFINITY;
		if (grad)
			grad[0] = grad[1] = grad[2] = 0.0;
	}
	ws_free(&w);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Bounded objective: theta_k = lo_k + (hi_k - lo_k) * logistic(u_k). */

static double logistic(double u)
{
	return 1.0 / (1.0 + exp(-u));
}

static void u_to_theta(struct gpr_ws *w, const gsl_vector *u, double theta[3], double dtheta[3])
{
	double uk[3];

	for (int k = 0; k < 3; k++)
		uk[k] = gsl_vector_get(u, k);
	/* the same u gives the same s, bit for bit */
	if (!w->u_have || memcmp(uk, w->u_u, sizeof(uk)) != 0) {
		for (int k = 0; k < 3; k++)
			w->u_s[k] = logistic(uk[k]);
		memcpy(w->u_u, uk, sizeof(uk));
		w->u_have = 1;
	}
	for (int k = 0; k < 3; k++) {
		double s = w->u_s[k];

		theta[k] = w->lo[k] + (w->hi[k] - w->lo[k]) * s;
		if (dtheta)
			dtheta[k] = (w->hi[k] - w->lo[k]) * s * (1.0 - s);
	}
}

static double obj_f(const gsl_vector *u, void *p)
{
	struct gpr_ws *w = p;
	double theta[3], lml;

	u_to_theta(w, u, theta, NULL);
	return ws_eval(w, theta, &lml, NULL) ? -lml : GPR_INFEASIBLE;
}

static void obj_fdf(const gsl_vector *u, void *p, double *f, gsl_vector *g)
{
	struct gpr_ws *w = p;
	double theta[3], dtheta[3], lml, grad[3];

	u_to_theta(w, u, theta, dtheta);
	if (!ws_eval(w, theta, &lml, grad)) {
		*f = GPR_INFEASIBLE;
		gsl_vector_set_zero(g);
		return;
	}
	*f = -lml;
	for (int k = 0; k < 3; k++)
		gsl_vector_set(g, k, -grad[k] * dtheta[k]);
}

static void obj_df(const gsl_vector *u, void *p, gsl_vector *g)
{
	double f;

	obj_fdf(u, p, &f, g);
}

/* One BFGS2 start from theta0 (log units); returns the best objective and
 * leaves its theta in theta_out.  *finite is 0 if the start itself was not
 * positive definite (scikit-learn's -inf start). */
static double bfgs_start(struct gpr_ws *w, const double theta0[3], int max_iter,
			 double theta_out[3], int *finite)
{
	gsl_multimin_function_fdf fdf = { .f = obj_f, .df = obj_df, .fdf = obj_fdf, .n = 3, .params = w };
	gsl_multimin_fdfminimizer *s = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, 3);
	gsl_vector *u0 = gsl_vector_alloc(3);
	double f;

	*finite = 0;
	if (!s || !u0) {
		gsl_multimin_fdfminimizer_free(s);
		gsl_vector_free(u0);
		w->nomem = 1;
		return INFINITY;
	}
	for (int k = 0; k < 3; k++) {
		double frac = (theta0[k] - w->lo[k]) / (w->hi[k] - w->lo[k]);

		frac = fmin(fmax(frac, GPR_START_MARGIN), 1.0 - GPR_START_MARGIN);
		gsl_vector_set(u0, k, log(frac / (1.0 - frac)));
	}
	/* step 0.1 in u and line-search tolerance 0.1, as GSL recommends.  A
	 * start begins with a cold cache: its course is then a function of
	 * theta0 alone, not of which start ran before it on this workspace
	 * (a hit there would only have skipped counting one evaluation). */
	w->evals = 0;
	w->c_have = 0;
	*finite = gsl_multimin_fdfminimizer_set(s, &fdf, u0, 0.1, 0.1) == GSL_SUCCESS && s->f < GPR_INFEASIBLE;
	for (int it = 0; *finite && it < max_iter; it++) {
		double fprev = s->f;

		if (gsl_multimin_fdfminimizer_iterate(s) != GSL_SUCCESS)
			break; /* GSL_ENOPROG: the line search can do no better */
		if (gsl_multimin_test_gradient(s->gradient, GPR_GTOL) == GSL_SUCCESS)
			break;
		if ((fprev - s->f) <= GPR_FTOL * fmax(fmax(fabs(fprev), fabs(s->f)), 1.0))
			break;
		if (w->evals > GPR_EVALS_PER_ITER * max_iter)
			break;
	}
	f = s->f;
	u_to_theta(w, s->x, theta_out, NULL);
	gsl_multimin_fdfminimizer_free(s);
	gsl_vector_free(u0);
	return f;
}

/* ------------------------------------------------------------------------ */

static int check_config(const struct hb_gpr_config *cfg, struct hb_error *err)
{
	const struct hb_gpr_bounds *b = &cfg->bounds;

	if (!(cfg->init.c > 0) || !(cfg->init.length > 0) || !(cfg->init.period > 0))
		return hb_input_error(err, "GPR: initial hyper-parameters c=%g length=%g period=%g must be positive",
				      cfg->init.c, cfg->init.length, cfg->init.period);
	if (!(cfg->noise >= 0))
		return hb_input_error(err, "GPR: noise %g must be >= 0", cfg->noise);
	if (cfg->optimize) {
		if (!(b->c_lo > 0 && b->c_lo < b->c_hi) || !(b->length_lo > 0 && b->length_lo < b->length_hi) ||
		    !(b->period_lo > 0 && b->period_lo < b->period_hi))
			return hb_input_error(err, "GPR: bounds must satisfy 0 < lo < hi (c [%g, %g], length [%g, %g], period [%g, %g])",
					      b->c_lo, b->c_hi, b->length_lo, b->length_hi, b->period_lo, b->period_hi);
		if (cfg->restarts < 0 || cfg->max_iter < 1)
			return hb_input_error(err, "GPR: restarts %d must be >= 0 and max_iter %d >= 1",
					      cfg->restarts, cfg->max_iter);
	}
	return 0;
}

/* The starts of one fit as tasks of a pool batch (see run_starts). */
struct start_result {
	double f;               /* best objective of the start */
	double theta[3];        /* where */
	int finite;             /* the start began at a positive definite K */
	int nomem;              /* its thread had no workspace */
};

struct start_batch {
	struct gpr_ws *ws;      /* [threads]: ws[0] the fit's own, the others cloned by their thread */
	const double *theta0;   /* [nstarts x 3], drawn before the batch */
	struct start_result *res; /* [nstarts] */
	int max_iter;
	hb_pool_fn *side;       /* hb_gpr_fit_beside's tasks, or NULL: tasks 0..nside-1 when set */
	int nside;
	void *side_ctx;
};

static void start_task(void *ctx, int task, int worker)
{
	struct start_batch *b = ctx;
	struct gpr_ws *w = &b->ws[worker];
	struct start_result *r;

	if (b->side) {
		if (task < b->nside) {
			b->side(b->side_ctx, task, worker);
			return;
		}
		task -= b->nside;
	}
	r = &b->res[task];
	/* only this thread touches ws[worker]; ws[0]'s data it copies from is
	 * read-only while the batch runs */
	if (w->n == 0 && ws_clone(w, &b->ws[0]) < 0) {
		r->f = INFINITY;
		r->nomem = 1;
		return;
	}
	r->f = bfgs_start(w, b->theta0 + 3 * task, b->max_iter, r->theta, &r->finite);
}

/* BFGS from theta_init and cfg->restarts random points, on cfg->pool, and
 * the best of them in start order (the first strictly lower objective
 * wins), with side's nside tasks, when side is not NULL, first in the batch.  The
 * random points are drawn in start order before any start runs, the very
 * numbers the one-thread loop drew between its starts. */
static int run_starts(struct gpr_ws *w0, const double theta_init[3], const struct hb_gpr_config *cfg,
		      hb_pool_fn *side, int nside, void *side_ctx, struct hb_gpr *g, double *best_f,
		      double best_theta[3], struct hb_error *err)
{
	const int nstarts = cfg->restarts + 1, nthreads = hb_pool_threads(cfg->pool);
	struct start_batch b = { .max_iter = cfg->max_iter, .side = side, .nside = side ? nside : 0,
				 .side_ctx = side_ctx };
	double *theta0 = malloc((size_t)nstarts * 3 * sizeof(double));
	struct hb_rng rng;
	int nomem = 0;

	b.ws = calloc((size_t)nthreads, sizeof(*b.ws));
	b.res = calloc((size_t)nstarts, sizeof(*b.res));
	if (!theta0 || !b.ws || !b.res) {
		free(theta0);
		free(b.ws);
		free(b.res);
		return hb_runtime_error(err, "GPR: out of memory for %d starts", nstarts);
	}
	hb_rng_seed(&rng, cfg->seed, HB_STREAM_FIT);
	for (int s = 0; s < nstarts; s++)
		for (int k = 0; k < 3; k++)
			theta0[3 * s + k] = s == 0 ? theta_init[k]
						   : w0->lo[k] + (w0->hi[k] - w0->lo[k]) * hb_rng_uniform(&rng);
	b.theta0 = theta0;
	b.ws[0] = *w0;
	hb_pool_run(cfg->pool, nstarts + b.nside, start_task, &b);
	*w0 = b.ws[0];
	for (int s = 0; s < nstarts; s++) {
		const struct start_result *r = &b.res[s];

		nomem |= r->nomem;
		g->starts++;
		g->starts_finite += r->finite;
		if (r->finite && r->f < *best_f) {
			*best_f = r->f;
			memcpy(best_theta, r->theta, 3 * sizeof(double));
		}
	}
	for (int t = 1; t < nthreads; t++) {
		nomem |= b.ws[t].nomem;
		ws_free(&b.ws[t]);
	}
	free(theta0);
	free(b.ws);
	free(b.res);
	if (nomem)
		w0->nomem = 1;
	return 0;
}

int hb_gpr_fit(struct hb_gpr *g, const double *x, const double *y, size_t n,
	       const struct hb_gpr_config *cfg, struct hb_error *err)
{
	return hb_gpr_fit_beside(g, x, y, n, cfg, NULL, 0, NULL, err);
}

int hb_gpr_fit_beside(struct hb_gpr *g, const double *x, const double *y, size_t n,
		      const struct hb_gpr_config *cfg, hb_pool_fn *side, int nside, void *side_ctx,
		      struct hb_error *err)
{
	struct gpr_ws w;
	double mean, scale, theta_init[3], best_theta[3], best_f = INFINITY, lml;
	int use_init = !cfg->optimize;

	memset(g, 0, sizeof(*g));
	if (n == 0)
		return hb_input_error(err, "GPR: no training points");
	if (n > HB_GPR_MAX_POINTS)
		return hb_input_error(err, "GPR: %zu training points, at most %d (the fit costs O(n^3) time and O(n^2) "
				      "memory)", n, HB_GPR_MAX_POINTS);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]) || !isfinite(y[i]))
			return hb_input_error(err, "GPR: training point %zu (x=%g, y=%g) is not finite", i, x[i], y[i]);
	if (check_config(cfg, err) < 0)
		return -1;
	standardise(y, n, cfg->normalize_y, &mean, &scale);
	if (ws_init(&w, x, y, n, mean, scale, cfg->noise, err) < 0)
		return -1;
	w.lo[0] = log(cfg->bounds.c_lo);
	w.hi[0] = log(cfg->bounds.c_hi);
	w.lo[1] = log(cfg->bounds.length_lo);
	w.hi[1] = log(cfg->bounds.length_hi);
	w.lo[2] = log(cfg->bounds.period_lo);
	w.hi[2] = log(cfg->bounds.period_hi);
	theta_init[0] = log(cfg->init.c);
	theta_init[1] = log(cfg->init.length);
	theta_init[2] = log(cfg->init.period);
	if (!ws_eval(&w, theta_init, &lml, NULL))
		lml = -INFINITY;
	g->lml_init = lml;
	memcpy(best_theta, theta_init, sizeof(best_theta));
	if (!cfg->optimize) {
		if (!isfinite(lml)) {
			ws_free(&w);
			return hb_runtime_error(err, "GPR: kernel matrix not positive definite at c=%g length=%g period=%g "
						"(noise %g); raise the noise", cfg->init.c, cfg->init.length,
						cfg->init.period, cfg->noise);
		}
		best_f = -lml;
	} else {
		if (run_starts(&w, theta_init, cfg, side, nside, side_ctx, g, &best_f, best_theta, err) < 0) {
			ws_free(&w);
			return -1;
		}
		side = NULL; /* it ran in the starts' batch */
		/* the first start sits GPR_START_MARGIN inside the bounds (c's
		 * initial 1.0 is its lower bound); keep init itself if better, so
		 * the fit never ends below the kernel's initial values, as with
		 * scikit-learn's bound-aware first start */
		if (isfinite(g->lml_init) && -g->lml_init < best_f) {
			best_f = -g->lml_init;
			memcpy(best_theta, theta_init, sizeof(best_theta));
			use_init = 1;
		}
		if (w.nomem) {
			ws_free(&w);
			return hb_runtime_error(err, "GPR: out of memory for the minimiser (%zu points)", n);
		}
		if (!(best_f < GPR_INFEASIBLE)) {
			ws_free(&w);
			return hb_runtime_error(err, "GPR: kernel matrix not positive definite at any of %d starts "
						"(%zu points, noise %g)", g->starts, n, cfg->noise);
		}
	}
	if (side) /* fixed hyper-parameters: no batch to run them in */
		for (int i = 0; i < nside; i++)
			side(side_ctx, i, 0);
	/* leave alpha for best_theta in the workspace */
	w.c_have = 0;
	ws_eval(&w, best_theta, &lml, NULL);
	g->n = n;
	g->x = malloc(n * sizeof(double));
	g->alpha = malloc(n * sizeof(double));
	if (!g->x || !g->alpha) {
		ws_free(&w);
		hb_gpr_free(g);
		return hb_runtime_error(err, "GPR: out of memory for %zu points", n);
	}
	memcpy(g->x, x, n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		g->alpha[i] = w.alpha[i];
	g->y_mean = mean;
	g->y_scale = scale;
	/* report the given values, not exp(log(value)), when init won */
	g->hyper = use_init ? cfg->init
			    : (struct hb_gpr_hyper){ exp(best_theta[0]), exp(best_theta[1]), exp(best_theta[2]) };
	g->lml = lml;
	ws_free(&w);
	return 0;
}

void hb_gpr_predict(const struct hb_gpr *g, const double *xq, size_t nq, double *mean)
{
	for (size_t q = 0; q < nq; q++) {
		double s = 0.0;

		for (size_t i = 0; i < g->n; i++)
			s += hb_gpr_kernel(&g->hyper, xq[q], g->x[i]) * g->alpha[i];
		mean[q] = g->y_mean + g->y_scale * s;
	}
}

void hb_gpr_free(struct hb_gpr *g)
{
	free(g->x);
	free(g->alpha);
	g->x = NULL;
	g->alpha = NULL;
	g->n = 0;
}

/* ------------------------------------------------------------------------ */

int hb_gpr_bench_fit(size_t n, uint64_t seed, double *seconds, struct hb_error *err)
{
	struct hb_gpr_config cfg;
	struct hb_gpr g;
	struct hb_rng rng;
	struct timespec t0, t1;
	double *x = malloc((n ? n : 1) * sizeof(double));
	double *y = malloc((n ? n : 1) * sizeof(double));
	int rc;

	if (!x || !y) {
		free(x);
		free(y);
		return hb_runtime_error(err, "GPR benchmark: out of memory for %zu points", n);
	}
	/* a JABAS-like trajectory (Fig. 9 shape): exponential growth with a
	 * period-3 wobble and noise, one point per 100-step adaptation */
	hb_rng_seed(&rng, seed, HB_STREAM_DEFAULT);
	for (size_t i = 0; i < n; i++) {
		x[i] = 100.0 * (double)(i + 1);
		y[i] = 256.0 * exp(0.02 * (double)i) * (1.0 + 0.08 * sin(2.0 * M_PI * (double)i / 3.0)) +
		       8.0 * hb_rng_normal(&rng);
	}
	hb_gpr_config_default(&cfg, seed);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = hb_gpr_fit(&g, x, y, n, &cfg, err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	hb_gpr_free(&g);
	free(x);
	free(y);
	return rc;
}
