/* Unit tests for forecast/smoothing: SES and Holt fits against hand
 * computations and brute-force grids written here independently. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rng.h"
#include "smoothing.h"

static void assert_rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
		fail_msg("got %.17g, want %.17g (tolerance %g relative)", got, want, tol);
}

/* Oracle: SES one-step-ahead SSE in the textbook form l_t = a y_t + (1-a) l_{t-1}. */
static double oracle_ses_sse(const double *y, size_t n, double a, double l0)
{
	double l = l0, s = 0.0;

	for (size_t t = 0; t < n; t++) {
		s += (y[t] - l) * (y[t] - l);
		l = a * y[t] + (1.0 - a) * l;
	}
	return s;
}

/* Oracle: min over l0 of the SSE, which is a parabola in l0: three
 * evaluations determine it exactly. */
static double oracle_ses_profile(const double *y, size_t n, double a)
{
	double h = 100.0, f0 = oracle_ses_sse(y, n, a, y[0] - h), f1 = oracle_ses_sse(y, n, a, y[0]),
	       f2 = oracle_ses_sse(y, n, a, y[0] + h);
	double curv = (f0 - 2.0 * f1 + f2) / (h * h), slope = (f2 - f0) / (2.0 * h);

	return f1 - 0.5 * slope * slope / curv;
}

/* A random walk with noise: B_G-like, with an interior SES optimum. */
static void walk(double *y, size_t n, uint64_t seed)
{
	struct hb_rng r;
	double level = 400.0;

	hb_rng_seed(&r, seed, HB_STREAM_DEFAULT);
	for (size_t t = 0; t < n; t++) {
		level += 12.0 * hb_rng_normal(&r);
		y[t] = level + 25.0 * hb_rng_normal(&r);
	}
}

static void test_ses_constant_series_forecasts_the_constant(void **state)
{
	double y[25];
	struct hb_ses m;
	struct hb_error err = { 0 };

	(void)state;
	for (int t = 0; t < 25; t++)
		y[t] = 736.0;
	assert_int_equal(hb_ses_fit(y, 25, &m, &err), 0);
	assert_true(hb_ses_forecast(&m) == 736.0);
	assert_true(m.sse == 0.0);
	/* a single observation is its own forecast */
	assert_int_equal(hb_ses_fit(y, 1, &m, &err), 0);
	assert_true(hb_ses_forecast(&m) == 736.0);
}

static void test_ses_hand_computation(void **state)
{
	const double y[2] = { 10.0, 12.0 };
	struct hb_ses m;
	struct hb_error err = { 0 };

	(void)state;
	/* a = 0.5: SSE(l0) = (10 - l0)^2 + (7 - l0/2)^2 is least at l0 = 10.8;
	 * then l1 = 10.4, l2 = 11.2 and SSE = 0.64 + 2.56 = 3.2 */
	assert_int_equal(hb_ses_fit_alpha(y, 2, 0.5, &m, &err), 0);
	assert_rel(m.level0, 10.8, 1e-12);
	assert_rel(m.level, 11.2, 1e-12);
	assert_rel(m.sse, 3.2, 1e-12);
	assert_rel(hb_ses_sse(y, 2, 0.5, 10.8), 3.2, 1e-12);
}

static void test_ses_alpha_matches_brute_force_grid(void **state)
{
	double y[40];
	struct hb_error err = { 0 };

	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct hb_ses m;
		double best = INFINITY, best_a = 0.0;

		walk(y, 40, seed);
		assert_int_equal(hb_ses_fit(y, 40, &m, &err), 0);
		for (int i = 0; i <= 10000; i++) {
			double a = i / 10000.0, f = oracle_ses_profile(y, 40, a);

			if (f < best) {
				best = f;
				best_a = a;
			}
		}
		/* at least as good as the grid's best, and at the same place */
		assert_true(m.sse <= best * (1.0 + 1e-9));
		assert_rel(m.sse, best, 1e-6);
		if (!(fabs(m.alpha - best_a) <= 2e-3))
			fail_msg("seed %d: alpha %.6f, grid minimum at %.4f", (int)seed, m.alpha, best_a);
		/* the reported SSE is the oracle's at the reported state */
		assert_rel(oracle_ses_sse(y, 40, m.alpha, m.level0), m.sse, 1e-10);
	}
}

static void test_ses_initial_level_is_optimal(void **state)
{
	double y[30];
	struct hb_ses m;
	struct hb_error err = { 0 };

	(void)state;
	walk(y, 30, 9);
	for (int i = 0; i <= 10; i++) {
		double a = i / 10.0;

		assert_int_equal(hb_ses_fit_alpha(y, 30, a, &m, &err), 0);
		assert_true(m.sse <= oracle_ses_sse(y, 30, a, m.level0 + 0.01) + 1e-9);
		assert_true(m.sse <= oracle_ses_sse(y, 30, a, m.level0 - 0.01) + 1e-9);
	}
}

/* Oracle: Holt SSE in the textbook recursion. */
static double oracle_holt_sse(const double *y, size_t n, double a, double b, double l0, double b0)
{
	double l = l0, tr = b0, s = 0.0;

	for (size_t t = 0; t < n; t++) {
		double lp = l;

		s += (y[t] - l - tr) * (y[t] - l - tr);
		l = a * y[t] + (1.0 - a) * (l + tr);
		tr = b * (l - lp) + (1.0 - b) * tr;
	}
	return s;
}

static void test_holt_recovers_a_line(void **state)
{
	double y[20];
	struct hb_holt m;
	struct hb_error err = { 0 };

	(void)state;
	for (int t = 1; t <= 20; t++)
		y[t - 1] = 40.0 + 3.5 * t;
	assert_int_equal(hb_holt_fit(y, 20, &m, &err), 0);
	assert_rel(m.trend, 3.5, 1e-9);                 /* slope */
	assert_rel(m.level, 40.0 + 3.5 * 20, 1e-9);     /* line at t = n */
	assert_rel(m.level - 20 * m.trend, 40.0, 1e-9); /* intercept */
	assert_true(m.sse <= 1e-12);
	for (int h = 1; h <= 5; h++)
		assert_rel(hb_holt_forecast(&m, h), 40.0 + 3.5 * (20 + h), 1e-9);
	/* for any weights the fitted initial state is the line at t = 0 */
	assert_int_equal(hb_holt_fit_weights(y, 20, 0.3, 0.7, &m, &err), 0);
	assert_rel(m.level0, 40.0, 1e-9);
	assert_rel(m.trend0, 3.5, 1e-9);
}

static void test_holt_fit_beats_weight_grid(void **state)
{
	double y[36];
	struct hb_error err = { 0 };

	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct hb_holt m, g;
		double best = INFINITY;

		walk(y, 36, seed + 20);
		for (int t = 0; t < 36; t++)
			y[t] += 6.0 * t; /* add a trend */
		assert_int_equal(hb_holt_fit(y, 36, &m, &err), 0);
		assert_true(m.alpha >= 0 && m.alpha <= 1 && m.beta >= 0 && m.beta <= 1);
		assert_rel(oracle_holt_sse(y, 36, m.alpha, m.beta, m.level0, m.trend0), m.sse, 1e-10);
		for (int i = 0; i <= 50; i++)
			for (int j = 0; j <= 50; j++) {
				assert_int_equal(hb_holt_fit_weights(y, 36, i / 50.0, j / 50.0, &g, &err), 0);
				best = fmin(best, g.sse);
			}
		assert_true(m.sse <= best * (1.0 + 1e-9));
	}
}

static void test_holt_initial_state_is_optimal(void **state)
{
	double y[30];
	struct hb_holt m;
	struct hb_error err = { 0 };
	const double d[4][2] = { { 0.05, 0 }, { -0.05, 0 }, { 0, 0.05 }, { 0, -0.05 } };

	(void)state;
	walk(y, 30, 5);
	assert_int_equal(hb_holt_fit_weights(y, 30, 0.4, 0.2, &m, &err), 0);
	for (int k = 0; k < 4; k++)
		assert_true(m.sse <= oracle_holt_sse(y, 30, 0.4, 0.2, m.level0 + d[k][0], m.trend0 + d[k][1]) + 1e-9);
}

static void test_errors(void **state)
{
	double y[3] = { 1, 2, 3 };
	struct hb_ses s;
	struct hb_holt h;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_ses_fit(y, 0, &s, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_holt_fit(y, 1, &h, &err), -1);
	assert_non_null(strstr(err.msg, "at least 2"));
	assert_int_equal(hb_ses_fit_alpha(y, 3, 1.5, &s, &err), -1);
	y[1] = INFINITY;
	assert_int_equal(hb_ses_fit(y, 3, &s, &err), -1);
	assert_non_null(strstr(err.msg, "not finite"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ses_constant_series_forecasts_the_constant),
		cmocka_unit_test(test_ses_hand_computation),
		cmocka_unit_test(test_ses_alpha_matches_brute_force_grid),
		cmocka_unit_test(test_ses_initial_level_is_optimal),
		cmocka_unit_test(test_holt_recovers_a_line),
		cmocka_unit_test(test_holt_fit_beats_weight_grid),
		cmocka_unit_test(test_holt_initial_state_is_optimal),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
