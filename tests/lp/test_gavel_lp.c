/* Unit tests for solver/gavel_lp.c: the proportional share by hand, the
 * max-min fairness and max-sum-throughput LPs against a grid over every
 * time-fraction matrix of 2 jobs x 2 types (step 1/40) and 3 jobs x 2 types
 * (step 1/10), the answers' feasibility and objective, types a job cannot
 * use, and malformed input refused; finish-time fairness likewise: the
 * isolated share by hand, one and two jobs by hand, the bisection against
 * the same grids (min over the grid of max rho), refused input. */
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
/* The interior-point max-sum solver (gavel_center.c) against GLPK's
 * simplex, its oracle: the same optimum (within the 1e-5 rounding of x)
 * and a feasible x, over random problems of up to 40 jobs and 4 types,
 * ties included (throughputs drawn from a few values). */
static void test_center_matches_simplex(void **state)
{
	struct hb_rng rng;

	(void)state;
	hb_rng_seed(&rng, 42, 0);
	for (int trial = 0; trial < 300; trial++) {
		int M = 1 + (int)hb_rng_below(&rng, 40), T = 1 + (int)hb_rng_below(&rng, 4), sf[40], W[4];
		double tp[160], x[160], xc[160], z, zc, vc = 0, scale = 0;
		struct hb_gavel_problem pb = { M, T, tp, sf, NULL, W };
		struct hb_error err = { 0 };

		for (int j = 0; j < T; j++)
			W[j] = 1 + (int)hb_rng_below(&rng, 24);
		for (int m = 0; m < M; m++) {
			int any = 0;

			sf[m] = 1 + (int)hb_rng_below(&rng, 8);
			for (int j = 0; j < T; j++) {
				/* few distinct values: ties everywhere */
				tp[m * T + j] = hb_rng_below(&rng, 5) == 0 ? 0.0 : 0.5 * (1 + (int)hb_rng_below(&rng, 4));
				any |= tp[m * T + j] > 0 && sf[m] <= W[j];
			}
			if (!any) {
				sf[m] = 1;
				tp[m * T] = 1.0;
			}
		}
		assert_int_equal(hb_gavel_max_sum_throughput(&pb, NULL, x, &z, &err), 0);
		if (hb_gavel_max_sum_throughput_center(&pb, xc, &zc, &err) != 0)
			fail_msg("trial %d (%d jobs, %d types): %s", trial, M, T, err.msg);
		/* rounding x to 1e-5 (the artifact's) can overfill a type by
		 * 5e-6 per job's GPU; beyond that is the solver's */
		{
			double over = 0.0, tol = 1e-9;

			for (int m = 0; m < M; m++)
				tol += 5e-6 * sf[m];
			for (int j = 0; j < T; j++) {
				double used = 0.0;

				for (int m = 0; m < M; m++)
					used += sf[m] * xc[m * T + j];
				over = fmax(over, used - W[j]);
			}
			if (over > tol)
				fail_msg("trial %d: a type overfilled by %g GPUs (rounding allows %g)", trial, over, tol);
			assert_true(hb_gavel_feasible(&pb, xc, 1e-4 + tol));
		}
		for (int k = 0; k < M * T; k++) {
			vc += tp[k] * xc[k];
			scale += tp[k];
		}
		assert_true(fabs(vc - zc) < 1e-9 * (1 + scale));
		if (fabs(zc - z) > 1e-4 * (1 + scale))
			fail_msg("trial %d (%d jobs, %d types): interior point %.9g, simplex %.9g", trial, M, T, zc, z);
	}
}

/* Ties split evenly, where simplex takes a vertex: two identical jobs
 * and room for one (x 0.5 each), one job and two types as fast (0.5 on
 * each), and a job the capacity does not bind (1, all on its faster type). */
static void test_center_splits_ties(void **state)
{
	double tp2[2] = { 3.0, 3.0 }, x2[2], tp3[2] = { 2.0, 2.0 }, x3[2], tp4[4] = { 1.0, 4.0, 4.0, 1.0 }, x4[4];
	int sf2[2] = { 4, 4 }, w2[1] = { 4 }, sf3[1] = { 2 }, w3[2] = { 8, 8 }, sf4[2] = { 1, 1 }, w4[2] = { 1, 1 };
	struct hb_gavel_problem two = { 2, 1, tp2, sf2, NULL, w2 }, one = { 1, 2, tp3, sf3, NULL, w3 };
	struct hb_gavel_problem cross = { 2, 2, tp4, sf4, NULL, w4 };
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_gavel_max_sum_throughput_center(&two, x2, NULL, &err), 0);
	assert_float_equal(x2[0], 0.5, 1e-5);
	assert_float_equal(x2[1], 0.5, 1e-5);
	assert_int_equal(hb_gavel_max_sum_throughput_center(&one, x3, NULL, &err), 0);
	assert_float_equal(x3[0], 0.5, 1e-5);
	assert_float_equal(x3[1], 0.5, 1e-5);
	/* a unique optimum: each job all on the type where it is fast */
	assert_int_equal(hb_gavel_max_sum_throughput_center(&cross, x4, NULL, &err), 0);
	assert_float_equal(x4[0], 0.0, 1e-5);
	assert_float_equal(x4[1], 1.0, 1e-5);
	assert_float_equal(x4[2], 1.0, 1e-5);
	assert_float_equal(x4[3], 0.0, 1e-5);
	/* refused as the simplex path refuses */
	sf3[0] = 0;
	assert_int_equal(hb_gavel_max_sum_throughput_center(&one, x3, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

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

/* ---- finish-time fairness ---- */

static void test_isolated(void **state)
{
	/* isolated.py: Xiso = W_j / (M sf_m), rows over 1 scaled down. */
	static const double T[4] = { 4, 1, 0, 2 };
	static const int sf[2] = { 1, 2 }, W[2] = { 1, 3 };
	struct hb_gavel_problem pb = { 2, 2, T, sf, NULL, W };
	struct hb_error err = { 0 };
	double xiso[4], iso[2];

	(void)state;
	assert_int_equal(hb_gavel_isolated(&pb, xiso, iso, &err), 0);
	/* Job 0: (0.5, 1.5) sums to 2 -> (0.25, 0.75); job 1: (0.25, 0.75) as is. */
	assert_true(fabs(xiso[0] - 0.25) < 1e-15 && fabs(xiso[1] - 0.75) < 1e-15);
	assert_true(fabs(xiso[2] - 0.25) < 1e-15 && fabs(xiso[3] - 0.75) < 1e-15);
	assert_true(fabs(iso[0] - 1.75) < 1e-15);
	assert_true(fabs(iso[1] - 1.5) < 1e-15); /* type 0 counts in the share though job 1 cannot use it */
}

static void test_ftf_by_hand(void **state)
{
	static const double T1[2] = { 4, 1 }, T2[2] = { 1, 1 };
	static const int sf1[1] = { 1 }, W1[2] = { 1, 3 }, sf2[2] = { 1, 1 }, W2[1] = { 1 };
	double e[2] = { 0, 0 }, c[2] = { 0, 0 }, R[2] = { 7, 1 }, x[4], rho;
	struct hb_gavel_problem pb1 = { 1, 2, T1, sf1, NULL, W1 }, pb2 = { 2, 1, T2, sf2, NULL, W2 };
	struct hb_gavel_ftf f = { e, c, R };
	struct hb_error err = { 0 };

	(void)state;
	/* One job: I = 1.75, D = 7 / 1.75 = 4; all of type 0 gives 7 / 4 s:
	 * rho = 1.75 / 4. */
	assert_int_equal(hb_gavel_finish_time_fairness(&pb1, &f, NULL, x, &rho, &err), 0);
	assert_true(fabs(rho - 0.4375) < 1e-6);
	assert_true(x[0] > 1 - 1e-5 && x[1] < 1e-5);
	/* Two equal jobs on one GPU, R = 1 each at rate 1: I = 1/2, D = 2;
	 * halves give rho = (1 / 0.5) / 2 = 1. */
	R[0] = 1;
	assert_int_equal(hb_gavel_finish_time_fairness(&pb2, &f, NULL, x, &rho, &err), 0);
	assert_true(fabs(rho - 1.0) < 1e-6);
	assert_true(fabs(x[0] - 0.5) < 1e-4 && fabs(x[1] - 0.5) < 1e-4);
	/* Job 0 waited 2 s already with nothing done (c = 0): its rho is
	 * (2 + 1 / x0) / 2 and job 1's (1 / x1) / 2, equal at x0 = 1 / 2 +
	 * (sqrt(5) - 1) / 2 - 1 / 2... solve 2 + 1/x0 = 1/(1 - x0):
	 * 2 x0^2 = 1 -> x0 = 1/sqrt(2), rho = (2 + sqrt 2) / 2. */
	e[0] = 2;
	assert_int_equal(hb_gavel_finish_time_fairness(&pb2, &f, NULL, x, &rho, &err), 0);
	assert_true(fabs(rho - (2 + sqrt(2)) / 2) < 1e-5);
	assert_true(fabs(x[0] - 1 / sqrt(2)) < 1e-4);
	/* A job with no work left has a constant rho e / c and takes nothing. */
	R[1] = 0;
	c[1] = 4;
	e[1] = 8;
	assert_int_equal(hb_gavel_finish_time_fairness(&pb2, &f, NULL, x, &rho, &err), 0);
	assert_true(fabs(rho - 2.0) < 1e-6); /* 8 / 4 beats job 0's best, (2 + 1) / 2 */
	assert_true(hb_gavel_feasible(&pb2, x, 1e-9));
}

/* max rho of x over the jobs with one. */
static double ftf_value(const struct hb_gavel_problem *pb, const struct hb_gavel_ftf *f, const double *iso,
			const double *x)
{
	double v = 0;

	for (int m = 0; m < pb->njobs; m++) {
		double r = hb_gavel_ftf_rho(pb, f, iso, x, m);
		if (!isnan(r) && r > v)
			v = r;
	}
	return v;
}

/* Least max rho over the grid of step 1/steps. */
static double ftf_grid_best(const struct hb_gavel_problem *pb, const struct hb_gavel_ftf *f, const double *iso,
			    int steps)
{
	int K = pb->njobs * pb->ntypes, digit[8] = { 0 };
	double x[8], best = HUGE_VAL;

	for (;;) {
		for (int k = 0; k < K; k++)
			x[k] = (double)digit[k] / steps;
		if (hb_gavel_feasible(pb, x, 1e-12)) {
			double v = ftf_value(pb, f, iso, x);
			best = v < best ? v : best;
		}
		int k = 0;
		while (k < K && ++digit[k] > steps)
			digit[k++] = 0;
		if (k == K)
			break;
	}
	return best;
}

static void ftf_grid_case(int njobs, int steps, int trials, uint64_t seed)
{
	struct hb_rng rng;

	hb_rng_seed(&rng, seed, 0);
	for (int trial = 0; trial < trials; trial++) {
		double T[8], x[8], xg[8], iso[4], e[4], c[4], R[4], z, best, floor_v;
		int sf[4], W[2], rc;
		struct hb_gavel_problem pb = { njobs, 2, T, sf, NULL, W };
		struct hb_gavel_ftf f = { e, c, R };
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
			e[m] = hb_rng_below(&rng, 3) == 0 ? 0.0 : 2000 * hb_rng_uniform(&rng);
			c[m] = e[m] * hb_rng_uniform(&rng);
			R[m] = hb_rng_below(&rng, 8) == 0 ? 0.0 : 100 + 5000 * hb_rng_uniform(&rng);
		}
		rc = hb_gavel_finish_time_fairness(&pb, &f, NULL, x, &z, &err);
		if (hb_gavel_isolated(&pb, NULL, iso, &err) < 0) {
			assert_int_equal(rc, -1); /* a job that fits no type it can run on */
			assert_int_equal(err.code, HB_EINPUT);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_true(hb_gavel_feasible(&pb, x, 1e-4));
		/* The objective is x's own max rho: no better than the optimum. */
		assert_true(fabs(ftf_value(&pb, &f, iso, x) - z) <= 1e-9 * z);
		best = ftf_grid_best(&pb, &f, iso, steps);
		/* No grid point beats it (up to the bisection's 1e-7 and x's
		 * 1e-5 rounding) ... */
		assert_true(z <= best * (1 + 1e-4));
		/* ... and x floored to the grid is a grid point (feasible: the
		 * constraints only bound sums from above), so the grid's best
		 * is at most its value. */
		for (int k = 0; k < njobs * 2; k++)
			xg[k] = floor(x[k] * steps + 1e-9) / steps;
		assert_true(hb_gavel_feasible(&pb, xg, 1e-12));
		floor_v = ftf_value(&pb, &f, iso, xg);
		assert_true(best <= floor_v * (1 + 1e-12));
	}
}

static void test_ftf_grid_2x2(void **state)
{
	(void)state;
	ftf_grid_case(2, 40, 16, 11);
}

static void test_ftf_grid_3x2(void **state)
{
	(void)state;
	ftf_grid_case(3, 10, 8, 13);
}

static void test_ftf_malformed(void **state)
{
	double T[2] = { 1, 0 }, e[1] = { 0 }, c[1] = { 0 }, R[1] = { 5 }, x[2];
	int sf[1] = { 3 }, W[2] = { 2, 8 };
	struct hb_gavel_problem pb = { 1, 2, T, sf, NULL, W };
	struct hb_gavel_ftf f = { e, c, R };
	struct hb_error err = { 0 };

	(void)state;
	/* Infeasible: 3 GPUs, more than type 0 has, and type 1 cannot run it. */
	assert_int_equal(hb_gavel_finish_time_fairness(&pb, &f, NULL, x, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "job 0 (3 GPUs) can run on no GPU type"));
	sf[0] = 1;
	R[0] = -1;
	assert_int_equal(hb_gavel_finish_time_fairness(&pb, &f, NULL, x, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "job 0: work left -1"));
	R[0] = 5;
	e[0] = NAN;
	assert_int_equal(hb_gavel_finish_time_fairness(&pb, &f, NULL, x, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "time since arrival"));
	e[0] = 0;
	c[0] = -3;
	assert_int_equal(hb_gavel_finish_time_fairness(&pb, &f, NULL, x, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "isolated time -3"));
	c[0] = 0;
	assert_int_equal(hb_gavel_finish_time_fairness(&pb, NULL, NULL, x, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proportional),
		cmocka_unit_test(test_grid_2x2),
		cmocka_unit_test(test_grid_3x2),
		cmocka_unit_test(test_unusable_type),
		cmocka_unit_test(test_center_matches_simplex),
		cmocka_unit_test(test_center_splits_ties),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_isolated),
		cmocka_unit_test(test_ftf_by_hand),
		cmocka_unit_test(test_ftf_grid_2x2),
		cmocka_unit_test(test_ftf_grid_3x2),
		cmocka_unit_test(test_ftf_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
