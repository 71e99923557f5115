/* Unit tests for forecast/gpr: kernel, log marginal likelihood against a
 * direct LU computation, analytic gradient against central differences,
 * the LML and gradient against the plain computation bit for bit,
 * interpolation of noise-free data, determinism and fit quality. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_linalg.h>

#include "gpr.h"
#include "rng.h"

#define NPTS 20

/* Noise-free, non-periodic data at irregular inputs in [0, 10]. */
static void smooth_data(double *x, double *y, size_t n)
{
	struct hb_rng r;

	hb_rng_seed(&r, 11, HB_STREAM_DEFAULT);
	for (size_t i = 0; i < n; i++) {
		x[i] = 10.0 * ((double)i + 0.8 * hb_rng_uniform(&r)) / (double)n;
		y[i] = 300.0 + 40.0 * sin(x[i]) + 15.0 * cos(2.3 * x[i]);
	}
}

static void assert_rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
		fail_msg("got %.17g, want %.17g (tolerance %g relative)", got, want, tol);
}

static void test_kernel_values(void **state)
{
	struct hb_gpr_hyper h = { .c = 2.0, .length = 0.5, .period = 4.0 };

	(void)state;
	/* d = 1: sin^2(pi/4) = 1/2, so k = 2 exp(-2 * 0.5 / 0.25) = 2 e^-4 */
	assert_rel(hb_gpr_kernel(&h, 3.0, 4.0), 2.0 * exp(-4.0), 1e-14);
	assert_rel(hb_gpr_kernel(&h, 4.0, 3.0), 2.0 * exp(-4.0), 1e-14);
	/* one full period apart: the constant c */
	assert_rel(hb_gpr_kernel(&h, 1.0, 9.0), 2.0, 1e-14);
	/* half a period: sin^2 = 1, k = 2 e^-8 */
	assert_rel(hb_gpr_kernel(&h, 0.0, 2.0), 2.0 * exp(-8.0), 1e-12);
}

/* Direct LML with LU decomposition (no Cholesky, no pivoting choices shared
 * with the library): -1/2 y'K^-1 y - 1/2 ln det K - n/2 ln 2 pi. */
static double lml_direct(const double *x, const double *y, size_t n, const struct hb_gpr_hyper *h,
			 double noise, int normalize)
{
	gsl_matrix *K = gsl_matrix_alloc(n, n);
	gsl_permutation *p = gsl_permutation_alloc(n);
	gsl_vector *yt = gsl_vector_alloc(n), *a = gsl_vector_alloc(n);
	double m = 0.0, s = 0.0, quad = 0.0, lndet;
	int sign;

	for (size_t i = 0; i < n; i++)
		m += y[i] / (double)n;
	for (size_t i = 0; i < n; i++)
		s += (y[i] - m) * (y[i] - m) / (double)n;
	s = sqrt(s);
	if (!normalize) {
		m = 0.0;
		s = 1.0;
	}
	for (size_t i = 0; i < n; i++) {
		gsl_vector_set(yt, i, (y[i] - m) / s);
		for (size_t j = 0; j < n; j++) {
			double d = fabs(x[i] - x[j]), sn = sin(M_PI * d / h->period);

			gsl_matrix_set(K, i, j, h->c * exp(-2.0 * sn * sn / (h->length * h->length)) + (i == j ? noise : 0.0));
		}
	}
	gsl_linalg_LU_decomp(K, p, &sign);
	lndet = gsl_linalg_LU_lndet(K);
	gsl_linalg_LU_solve(K, p, yt, a);
	for (size_t i = 0; i < n; i++)
		quad += gsl_vector_get(yt, i) * gsl_vector_get(a, i);
	gsl_matrix_free(K);
	gsl_permutation_free(p);
	gsl_vector_free(yt);
	gsl_vector_free(a);
	return -0.5 * quad - 0.5 * lndet - 0.5 * (double)n * log(2.0 * M_PI);
}

static void test_lml_matches_direct_computation(void **state)
{
	double x[NPTS], y[NPTS], lml;
	const struct hb_gpr_hyper hs[] = { { 1.0, 0.4, 3.0 }, { 5.0, 0.8, 7.5 }, { 2.5, 0.25, 1.7 } };
	struct hb_error err = { 0 };

	(void)state;
	smooth_data(x, y, NPTS);
	for (size_t k = 0; k < sizeof(hs) / sizeof(hs[0]); k++)
		for (int norm = 0; norm <= 1; norm++) {
			assert_int_equal(hb_gpr_log_marginal_likelihood(x, y, NPTS, &hs[k], 1e-6, norm, &lml, NULL, &err), 0);
			assert_rel(lml, lml_direct(x, y, NPTS, &hs[k], 1e-6, norm), 1e-8);
		}
}

static void test_lml_gradient_matches_central_differences(void **state)
{
	double x[NPTS], y[NPTS];
	/* (log c, log l, log P, noise): with the artifact's 1e-10 jitter where
	 * K is well conditioned (period longer than the data), with more noise
	 * where the data span several periods */
	const double thetas[][4] = {
		{ 0.0, log(0.15), log(12.0), 1e-10 }, { 1.2, log(0.3), log(12.0), 1e-10 },
		{ 0.5, log(0.2), log(25.0), 1e-10 },  { 0.0, log(0.2), log(3.0), 1e-2 },
		{ 1.2, log(0.3), log(7.0), 1e-3 },    { 2.0, log(0.5), log(9.0), 1e-2 },
	};
	struct hb_error err = { 0 };

	(void)state;
	smooth_data(x, y, NPTS);
	for (size_t t = 0; t < sizeof(thetas) / sizeof(thetas[0]); t++) {
		const double noise = thetas[t][3];
		struct hb_gpr_hyper h = { exp(thetas[t][0]), exp(thetas[t][1]), exp(thetas[t][2]) };
		double lml, g[3];

		assert_int_equal(hb_gpr_log_marginal_likelihood(x, y, NPTS, &h, noise, 1, &lml, g, &err), 0);
		assert_true(isfinite(lml));
		for (int k = 0; k < 3; k++) {
			const double eps = 1e-5, step[4] = { 2.0, 1.0, -1.0, -2.0 }, wt[4] = { -1.0, 8.0, -8.0, 1.0 };
			double fd = 0.0;

			/* five-point central difference, truncation O(eps^4): the
			 * periodicity derivative is steep when the data span many periods */
			for (int q = 0; q < 4; q++) {
				double th[3], f;

				memcpy(th, thetas[t], sizeof(th));
				th[k] += step[q] * eps;
				h = (struct hb_gpr_hyper){ exp(th[0]), exp(th[1]), exp(th[2]) };
				hb_gpr_log_marginal_likelihood(x, y, NPTS, &h, noise, 1, &f, NULL, &err);
				fd += wt[q] * f / (12.0 * eps);
			}
			if (!(fabs(g[k] - fd) <= 1e-6 * fmax(1.0, fabs(fd))))
				fail_msg("theta %zu noise %g: dLML/dtheta[%d] analytic %.10g, finite difference %.10g",
					 t, noise, k, g[k], fd);
		}
	}
}

/* The LML and gradient as gpr.c's ws_eval computed them before its
 * shortcuts (the gradient summed through an array, every pair's terms
 * behind conditionals, sin(2a) from 2a, exp(theta) each time), on GSL's own
 * modified Cholesky (test_mchol: mchol.c matches it bit for bit), without
 * normalisation.  Returns 0 where K is not positive definite. */
static int lml_reference(const double *x, const double *y, size_t n, const struct hb_gpr_hyper *h, double noise,
			 double *lml, double grad[3])
{
	const double th[3] = { log(h->c), log(h->length), log(h->period) };
	const double c = exp(th[0]), l = exp(th[1]), P = exp(th[2]), il2 = 1.0 / (l * l);
	gsl_matrix *K = gsl_matrix_alloc(n, n), *Ki = gsl_matrix_alloc(n, n);
	gsl_permutation *p = gsl_permutation_alloc(n);
	gsl_vector *E = gsl_vector_alloc(n), *yv = gsl_vector_alloc(n), *al = gsl_vector_alloc(n);
	double quad = 0.0, logdet = 0.0;
	int ok = 1;

	assert_true(K && Ki && p && E && yv && al);
	for (size_t i = 0; i < n; i++) {
		gsl_vector_set(yv, i, y[i]);
		for (size_t j = 0; j <= i; j++) {
			double sn = sin(M_PI * fabs(x[i] - x[j]) / P);
			double v = j < i ? c * exp(-2.0 * sn * sn * il2) : c + noise;

			gsl_matrix_set(K, i, j, v);
			gsl_matrix_set(K, j, i, v);
		}
	}
	gsl_linalg_mcholesky_decomp(K, p, E);
	for (size_t i = 0; i < n; i++) {
		double d = gsl_matrix_get(K, i, i);

		if (gsl_vector_get(E, i) != 0.0 || !(d > 0.0) || !isfinite(d))
			ok = 0;
		logdet += log(d);
	}
	if (ok) {
		gsl_linalg_mcholesky_solve(K, p, yv, al);
		for (size_t i = 0; i < n; i++)
			quad += y[i] * gsl_vector_get(al, i);
		*lml = -0.5 * quad - 0.5 * logdet - 0.5 * (double)n * log(2.0 * M_PI);
		gsl_linalg_mcholesky_invert(K, p, Ki);
		grad[0] = grad[1] = grad[2] = 0.0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j <= i; j++) {
				const double a = M_PI * fabs(x[i] - x[j]) / P, sn = sin(a);
				const double cS = j < i ? c * exp(-2.0 * sn * sn * il2) : c;
				double W = gsl_vector_get(al, i) * gsl_vector_get(al, j) - gsl_matrix_get(Ki, i, j);
				double hWcS = (i == j ? 0.5 : 1.0) * W * cS;

				grad[0] += hWcS;
				grad[1] += hWcS * (j < i ? 4.0 * sn * sn * il2 : 0.0);
				grad[2] += hWcS * (j < i ? 2.0 * a * sin(2.0 * a) * il2 : 0.0);
			}
		ok = isfinite(*lml);
	}
	gsl_matrix_free(K);
	gsl_matrix_free(Ki);
	gsl_permutation_free(p);
	gsl_vector_free(E);
	gsl_vector_free(yv);
	gsl_vector_free(al);
	return ok;
}

/* ws_eval's LML and gradient equal lml_reference's bit for bit, on evenly
 * spaced steps (JABAS's windows: gaps that double one another, whose
 * sin(2a) the gradient takes from the value's sines) and irregular ones,
 * 1 to 30 points, hyper-parameters across the fit's bounds. */
static void test_lml_and_gradient_match_reference_bit_for_bit(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	double x[30], y[30];
	int finite = 0;

	(void)state;
	hb_rng_seed(&r, 5, HB_STREAM_DEFAULT);
	for (int rep = 0; rep < 40; rep++)
		for (size_t n = 1; n <= 30; n++) {
			const int even = rep % 2 == 0;
			struct hb_gpr_hyper h = { exp(log(1e6) * hb_rng_uniform(&r)),
						  exp(log(1e-5) + log(1e10) * hb_rng_uniform(&r)),
						  exp(log(1e-2) + log(1e3) * hb_rng_uniform(&r)) };
			double lml, g[3], rl = 0.0, rg[3] = { 0.0, 0.0, 0.0 };
			int ok;

			for (size_t i = 0; i < n; i++) {
				x[i] = even ? 1200.0 + 100.0 * (double)i : 10.0 * ((double)i + hb_rng_uniform(&r));
				y[i] = hb_rng_normal(&r);
			}
			ok = lml_reference(x, y, n, &h, 1e-10, &rl, rg);
			assert_int_equal(hb_gpr_log_marginal_likelihood(x, y, n, &h, 1e-10, 0, &lml, g, &err), 0);
			if (!ok) {
				assert_true(lml == -INFINITY);
				continue;
			}
			finite++;
			if (memcmp(&lml, &rl, sizeof(lml)) != 0 || memcmp(g, rg, sizeof(g)) != 0)
				fail_msg("n %zu (%s): lml %.17g grad %.17g %.17g %.17g, reference %.17g grad %.17g %.17g %.17g",
					 n, even ? "even" : "irregular", lml, g[0], g[1], g[2], rl, rg[0], rg[1], rg[2]);
		}
	/* most draws are positive definite: the comparison is not vacuous */
	assert_true(finite > 600);
}

static void check_interpolates(const struct hb_gpr *g, const double *x, const double *y, size_t n)
{
	double mean[NPTS];

	hb_gpr_predict(g, x, n, mean);
	for (size_t i = 0; i < n; i++)
		if (!(fabs(mean[i] - y[i]) <= 1e-6 * fabs(y[i])))
			fail_msg("posterior mean %.12g at training x=%g, y=%.12g", mean[i], x[i], y[i]);
}

static void test_interpolates_with_fixed_hyper_parameters(void **state)
{
	double x[NPTS], y[NPTS];
	struct hb_gpr_config cfg;
	struct hb_gpr g;
	struct hb_error err = { 0 };

	(void)state;
	smooth_data(x, y, NPTS);
	hb_gpr_config_default(&cfg, 1);
	cfg.optimize = 0;
	cfg.init = (struct hb_gpr_hyper){ .c = 1.0, .length = 0.3, .period = 12.0 };
	assert_int_equal(hb_gpr_fit(&g, x, y, NPTS, &cfg, &err), 0);
	/* fixed mode keeps the given values exactly */
	assert_true(g.hyper.c == 1.0 && g.hyper.length == 0.3 && g.hyper.period == 12.0);
	assert_true(g.lml == g.lml_init);
	assert_int_equal(g.starts, 0);
	check_interpolates(&g, x, y, NPTS);
	hb_gpr_free(&g);
}

static void test_interpolates_with_fitted_hyper_parameters(void **state)
{
	double x[NPTS], y[NPTS];
	struct hb_gpr_config cfg;
	struct hb_gpr g;
	struct hb_error err = { 0 };

	(void)state;
	smooth_data(x, y, NPTS);
	hb_gpr_config_default(&cfg, 3);
	assert_int_equal(hb_gpr_fit(&g, x, y, NPTS, &cfg, &err), 0);
	assert_int_equal(g.starts, 10);
	check_interpolates(&g, x, y, NPTS);
	assert_true(g.hyper.c >= 1.0 && g.hyper.c <= 1e6);
	assert_true(g.hyper.length >= 1e-5 && g.hyper.length <= 1e5);
	assert_true(g.hyper.period >= 1e-2 && g.hyper.period <= 10.0);
	hb_gpr_free(&g);
}

static void test_fit_is_deterministic_and_improves_on_the_start(void **state)
{
	double x[NPTS], y[NPTS];
	struct hb_gpr_config cfg;
	struct hb_gpr a, b;
	struct hb_error err = { 0 };

	(void)state;
	/* a JABAS-like trajectory on raw steps, as the artifact fits it */
	for (size_t i = 0; i < NPTS; i++) {
		x[i] = 4000.0 + 100.0 * (double)(i + 1);
		y[i] = 32.0 * round(8.0 * exp(0.025 * (double)i) * (1.0 + 0.08 * sin(2.0 * M_PI * (double)i / 3.0)));
	}
	for (uint64_t seed = 1; seed <= 3; seed++) {
		double lml_check;

		hb_gpr_config_default(&cfg, seed);
		assert_int_equal(hb_gpr_fit(&a, x, y, NPTS, &cfg, &err), 0);
		assert_int_equal(hb_gpr_fit(&b, x, y, NPTS, &cfg, &err), 0);
		assert_memory_equal(&a.hyper, &b.hyper, sizeof(a.hyper));
		assert_memory_equal(&a.lml, &b.lml, sizeof(a.lml));
		assert_memory_equal(a.alpha, b.alpha, NPTS * sizeof(double));
		/* the fitted LML is at least the LML at the kernel's initial values */
		assert_true(a.lml >= a.lml_init);
		/* and it is the LML of the reported hyper-parameters */
		hb_gpr_log_marginal_likelihood(x, y, NPTS, &a.hyper, cfg.noise, 1, &lml_check, NULL, &err);
		assert_rel(lml_check, a.lml, 1e-9);
		hb_gpr_free(&a);
		hb_gpr_free(&b);
	}
}

static void test_fit_beats_each_start_point(void **state)
{
	double x[NPTS], y[NPTS];
	struct hb_gpr_config cfg;
	struct hb_gpr g;
	struct hb_error err = { 0 };
	const struct hb_gpr_hyper starts[] = { { 1.0, 1.0, 3.0 }, { 2.0, 0.6, 6.0 }, { 1.5, 0.3, 2.0 } };

	(void)state;
	smooth_data(x, y, NPTS);
	for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
		double lml0;

		hb_gpr_config_default(&cfg, 1);
		cfg.init = starts[k];
		cfg.restarts = 0;
		assert_int_equal(hb_gpr_fit(&g, x, y, NPTS, &cfg, &err), 0);
		hb_gpr_log_marginal_likelihood(x, y, NPTS, &starts[k], cfg.noise, 1, &lml0, NULL, &err);
		assert_true(g.lml >= lml0);
		assert_true(g.lml_init == lml0 || (isinf(lml0) && isinf(g.lml_init)));
		hb_gpr_free(&g);
	}
}

static void test_constant_series_and_single_point(void **state)
{
	double x[8], y[8], q[3] = { 0.5, 3.3, 100.0 }, m[3];
	struct hb_gpr_config cfg;
	struct hb_gpr g;
	struct hb_error err = { 0 };

	(void)state;
	for (int i = 0; i < 8; i++) {
		x[i] = 100.0 * (i + 1);
		y[i] = 512.0;
	}
	hb_gpr_config_default(&cfg, 1);
	assert_int_equal(hb_gpr_fit(&g, x, y, 8, &cfg, &err), 0);
	hb_gpr_predict(&g, q, 3, m);
	for (int j = 0; j < 3; j++)
		assert_rel(m[j], 512.0, 1e-9);
	hb_gpr_free(&g);
	assert_int_equal(hb_gpr_fit(&g, x, y, 1, &cfg, &err), 0);
	hb_gpr_predict(&g, q, 3, m);
	assert_rel(m[1], 512.0, 1e-12);
	hb_gpr_free(&g);
}

static void test_errors(void **state)
{
	double x[4] = { 0, 1, 2, 3 }, y[4] = { 1, 2, NAN, 4 };
	struct hb_gpr_config cfg;
	struct hb_gpr g;
	struct hb_error err = { 0 };

	(void)state;
	hb_gpr_config_default(&cfg, 1);
	assert_int_equal(hb_gpr_fit(&g, x, y, 0, &cfg, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_gpr_fit(&g, x, y, 4, &cfg, &err), -1);
	assert_non_null(strstr(err.msg, "not finite"));
	y[2] = 3;
	cfg.bounds.period_lo = 20.0; /* lo > hi */
	assert_int_equal(hb_gpr_fit(&g, x, y, 4, &cfg, &err), -1);
	assert_non_null(strstr(err.msg, "bounds"));
	/* fixed mode with a kernel that is exactly rank one and no jitter */
	hb_gpr_config_default(&cfg, 1);
	cfg.optimize = 0;
	cfg.noise = 0.0;
	cfg.init = (struct hb_gpr_hyper){ .c = 1.0, .length = 1.0, .period = 1.0 };
	assert_int_equal(hb_gpr_fit(&g, x, y, 4, &cfg, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "not positive definite"));
}

/* More points than the fit takes is an input error before any allocation
 * (10^6 points asked GSL for terabytes and its default handler aborted the
 * process: issue 16 item 6).  The arrays are never read past the check. */
static void test_too_many_points_is_an_input_error(void **state)
{
	const size_t n = (size_t)HB_GPR_MAX_POINTS + 1;
	double *x = calloc(n, sizeof(double)), *y = calloc(n, sizeof(double)), lml;
	struct hb_gpr_config cfg;
	struct hb_gpr g;
	struct hb_gpr_hyper h = { 1.0, 1.0, 3.0 };
	struct hb_error err = { 0 };

	(void)state;
	assert_non_null(x);
	assert_non_null(y);
	hb_gpr_config_default(&cfg, 1);
	assert_int_equal(hb_gpr_fit(&g, x, y, n, &cfg, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "at most 4096"));
	assert_int_equal(hb_gpr_log_marginal_likelihood(x, y, n, &h, 1e-10, 1, &lml, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	free(x);
	free(y);
}

static void test_benchmark_entry_point(void **state)
{
	double sec = -1.0;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_gpr_bench_fit(50, 1, &sec, &err), 0);
	assert_true(sec > 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_values),
		cmocka_unit_test(test_lml_matches_direct_computation),
		cmocka_unit_test(test_lml_gradient_matches_central_differences),
		cmocka_unit_test(test_lml_and_gradient_match_reference_bit_for_bit),
		cmocka_unit_test(test_interpolates_with_fixed_hyper_parameters),
		cmocka_unit_test(test_interpolates_with_fitted_hyper_parameters),
		cmocka_unit_test(test_fit_is_deterministic_and_improves_on_the_start),
		cmocka_unit_test(test_fit_beats_each_start_point),
		cmocka_unit_test(test_constant_series_and_single_point),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_too_many_points_is_an_input_error),
		cmocka_unit_test(test_benchmark_entry_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
