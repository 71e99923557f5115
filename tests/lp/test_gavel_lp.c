/* Unit tests for solver/gavel_lp.c: the proportional share by hand, the
 * max-min fairness and max-sum-throughput LPs against a grid over every
 * time-fraction matrix of 2 jobs x 2 types (step 1/40) and 3 jobs x 2 types
 * (step 1/10), the answers' feasibility and objective, types a job cannot
 * use, and malformed input refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gavel_lp.h"
#include "rng.h"

static void test_proportional(void **state)
{
	static const double T[4] = { 4, 1, 2, 2 };
	static const int sf[2] = { 1, 2 }, W[2] = { 1, 3 };
	struct hb_gavel_problem pb = { 2, 2, T, sf, NULL, W };
	struct hb_error err = { 0 };
	double prop[2], x[4], z;

	(void)state;
	assert_int_equal(hb_gavel_proportional(&pb, prop, &err), 0);
	assert_true(fabs(prop[0] - (4 * 0.25 + 1 * 0.75)) < 1e-15);
	assert_true(fabs(prop[1] - 2.0) < 1e-15);
	assert_int_equal(hb_gavel_max_min_fairness(&pb, NULL, x, &z, &err), 0);
	assert_true(hb_gavel_feasible(&pb, x, 1e-9));
	/* Job 0 alone on type 0 (its fast type) gives 4 / 1.75 = 2.29; job 1 on
	 * type 1 at most 1 (sf 2 of 3 GPUs): 2 * 2 / 2 = 2; the LP balances
	 * both at the same value or better. */
	assert_true(z >= 2.0 - 1e-9);
}

/* Objective of x: max-min (min of normalised) or max-sum. */
static double value(const struct hb_gavel_problem *pb, const double *prop, const double *x, int maxmin)
{
	double v = maxmin ? HUGE_VAL : 0;

	for (int m = 0; m < pb->njobs; m++) {
		if (maxmin) {
			double t = hb_gavel_norm_tput(pb, prop, x, m);
			v = t < v ? t : v;
		} else {
			for (int j = 0; j < pb->ntypes; j++)
				v += pb->tput[m * pb->ntypes + j] * x[m * pb->ntypes + j];
		}
	}
	return v;
}

/* Best value over the grid of step 1/steps for every cell. */
static double grid_best(const struct hb_gavel_problem *pb, const double *prop, int steps, int maxmin)
{
	int K = pb->njobs * pb->ntypes, digit[8] = { 0 };
	double x[8], best = -1;

	for (;;) {
		for (int k = 0; k < K; k++)
			x[k] = (double)digit[k] / steps;
		if (hb_gavel_feasible(pb, x, 1e-12)) {
			double v = value(pb, prop, x, maxmin);
			best = v > best ? v : best;
		}
		int k = 0;
		while (k < K && ++digit[k] > steps)
			digit[k++] = 0;
		if (k == K)
			break;
	}
	return best;
}

static void grid_case(int njobs, int steps, int trials, uint64_t seed)
{
	struct hb_rng rng;

	hb_rng_seed(&rng, seed, 0);
	for (int trial = 0; trial < trials; trial++) {
		double T[8], prop[4], x[8], z, lip = 0;
		int sf[4], W[2];
		struct hb_gavel_problem pb = { njobs, 2, T, sf, NULL, W };
		struct hb_error err = { 0 };

		W[0] = 1 + (int)hb_rng_below(&rng, 4);
		W[1] = 1 + (int)hb_rng_below(&rng, 4);
		for (int m = 0; m < njobs; m++) {
			sf[m] = 1 + (int)hb_rng_below(&rng, 2);
			for (int j = 0; j < 2; j++)
				T[m * 2 + j] = hb_rng_below(&rng, 6) == 0 ? 0.0 : 0.2 + 5 * hb_rng_uniform(&rng);
			if (T[m * 2] == 0 && T[m * 2 + 1] == 0)
				T[m * 2] = 1.0;
			if (sf[m] > W[0] && sf[m] > W[1])
				sf[m] = 1;
		}
		for (int mm = 0; mm < 2; mm++) {
			double best;
			int rc;

			if (mm) {
				rc = hb_gavel_max_min_fairness(&pb, NULL, x, &z, &err);
			} else {
				rc = hb_gavel_max_sum_throughput(&pb, NULL, x, &z, &err);
			}
			if (hb_gavel_proportional(&pb, prop, &err) < 0) {
				/* a job that cannot run on the only type that fits it */
				assert_int_equal(rc, -1);
				assert_int_equal(err.code, HB_EINPUT);
				break;
			}
			assert_int_equal(rc, 0);
			/* x is rounded to 1e-5 (gavel_lp.h): a few 1e-5 over at most. */
			assert_true(hb_gavel_feasible(&pb, x, 1e-4));
			/* The objective reported is the value of x (up to the 1e-5 rounding of x). */
			assert_true(fabs(value(&pb, prop, x, mm) - z) < 1e-3 * (1 + fabs(z)));
			best = grid_best(&pb, prop, steps, mm);
			/* The LP is no worse than any grid point, and the grid point
			 * below the optimum loses at most one step on every cell. */
			lip = 0;
			for (int m = 0; m < njobs; m++) {
				double s = 0;
				for (int j = 0; j < 2; j++)
					s += mm ? T[m * 2 + j] * sf[m] / prop[m] : T[m * 2 + j];
				lip = mm ? (s > lip ? s : lip) : lip + s;
			}
			assert_true(best <= z + 1e-6);
			assert_true(z - best <= lip / steps + 1e-6);
		}
	}
}

static void test_grid_2x2(void **state)
{
	(void)state;
	grid_case(2, 40, 12, 3);
}

static void test_grid_3x2(void **state)
{
	(void)state;
	grid_case(3, 10, 6, 5);
}

/* A job that cannot use a type gets no time there, even when it would help
 * the others (the LP fixes those cells at 0). */
static void test_unusable_type(void **state)
{
	static const double T[4] = { 0, 3, 1, 1 };
	static const int sf[2] = { 1, 1 }, W[2] = { 4, 1 };
	struct hb_gavel_problem pb = { 2, 2, T, sf, NULL, W };
	struct hb_error err = { 0 };
	double x[4], z;

	(void)state;
	assert_int_equal(hb_gavel_max_min_fairness(&pb, NULL, x, &z, &err), 0);
	/* Job 1 reaches at most 1 (type 0 wholly; type 1 is as good per GPU);
	 * job 0 needs 0.2 of its one type for 5 x 0.2 = 1.  Any x01 in [0.2, 1]
	 * is optimal (a vertex may pick either end). */
	assert_true(fabs(z - 1.0) < 1e-9);
	assert_true(x[0] == 0.0);
	assert_true(5 * x[1] >= 1.0 - 1e-9);
}

static void test_malformed(void **state)
{
	double T[2] = { 1, 0 };
	int sf[1] = { 3 }, W[2] = { 2, 8 };
	struct hb_gavel_problem pb = { 1, 2, T, sf, NULL, W };
	struct hb_error err = { 0 };
	double x[2];

	(void)state;
	/* 3 GPUs: more than type 0 has, and type 1 cannot run it. */
	assert_int_equal(hb_gavel_max_min_fairness(&pb, NULL, x, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "job 0 (3 GPUs) can run on no GPU type"));
	sf[0] = 0;
	assert_int_equal(hb_gavel_max_sum_throughput(&pb, NULL, x, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "scale factor 0"));
	sf[0] = 1;
	T[1] = -2;
	assert_int_equal(hb_gavel_max_min_fairness(&pb, NULL, x, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "throughput -2"));
	T[1] = NAN;
	assert_int_equal(hb_gavel_max_min_fairness(&pb, NULL, x, NULL, &err), -1);
	T[1] = 0;
	W[0] = -1;
	assert_int_equal(hb_gavel_max_min_fairness(&pb, NULL, x, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "capacity -1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proportional),
		cmocka_unit_test(test_grid_2x2),
		cmocka_unit_test(test_grid_3x2),
		cmocka_unit_test(test_unusable_type),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
