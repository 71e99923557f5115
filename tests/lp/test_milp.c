/* Unit tests for solver/milp.c: LP and MILP answers checked by hand and
 * against enumeration, every status the wrapper maps (optimal, infeasible,
 * unbounded, a time limit with and without an incumbent), malformed
 * programs refused, and a GLPK internal error caught instead of aborting. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "milp.h"
#include "rng.h"

/* max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, x <= 3: optimum (3, 1), 11. */
static void build_lp(struct hb_milp *m)
{
	struct hb_error err = { 0 };
	int idx[2] = { 0, 1 };
	double a[2] = { 1, 1 }, b[2] = { 1, 3 };

	hb_milp_init(m, 1);
	assert_int_equal(hb_milp_add_col(m, 0, 3, 3, 0, NULL, &err), 0);
	assert_int_equal(hb_milp_add_col(m, 0, HUGE_VAL, 2, 0, NULL, &err), 0);
	assert_int_equal(hb_milp_add_row(m, 2, idx, a, -HUGE_VAL, 4, &err), 0);
	assert_int_equal(hb_milp_add_row(m, 2, idx, b, -HUGE_VAL, 6, &err), 0);
}

static void test_lp_by_hand(void **state)
{
	struct hb_milp m;
	struct hb_error err = { 0 };
	int st;

	(void)state;
	build_lp(&m);
	assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), 0);
	assert_int_equal(st, HB_MILP_OPTIMAL);
	assert_true(fabs(m.objective - 11.0) < 1e-9);
	assert_true(fabs(m.x[0] - 3.0) < 1e-9 && fabs(m.x[1] - 1.0) < 1e-9);
	/* The same data solved again give the same answer (nothing of GLPK kept). */
	m.cols[1].obj = 4; /* max 3x + 4y: the vertex (3, 1) = 13 vs (1.5, 1.5) = 10.5 vs (0, 2) = 8 */
	assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), 0);
	assert_true(fabs(m.objective - 13.0) < 1e-9);
	hb_milp_free(&m);
}

/* Integer knapsacks against enumeration of every 0/1 vector. */
static void test_mip_knapsack_brute_force(void **state)
{
	struct hb_rng rng;

	(void)state;
	hb_rng_seed(&rng, 42, 0);
	for (int trial = 0; trial < 40; trial++) {
		int n = 4 + (int)hb_rng_below(&rng, 9), idx[16], st;
		double w[2][16], v[16], cap[2], best = 0;
		struct hb_milp m;
		struct hb_error err = { 0 };

		hb_milp_init(&m, 1);
		for (int k = 0; k < 2; k++)
			cap[k] = 0;
		for (int i = 0; i < n; i++) {
			v[i] = 1 + (double)hb_rng_below(&rng, 20);
			for (int k = 0; k < 2; k++) {
				w[k][i] = 1 + (double)hb_rng_below(&rng, 10);
				cap[k] += w[k][i] / 2.5;
			}
			idx[i] = i;
			assert_int_equal(hb_milp_add_col(&m, 0, 1, v[i], 1, NULL, &err), 0);
		}
		for (int k = 0; k < 2; k++)
			assert_int_equal(hb_milp_add_row(&m, n, idx, w[k], -HUGE_VAL, floor(cap[k]), &err), 0);
		for (unsigned s = 0; s < (1u << n); s++) {
			double val = 0, use[2] = { 0, 0 };

			for (int i = 0; i < n; i++)
				if (s >> i & 1) {
					val += v[i];
					use[0] += w[0][i];
					use[1] += w[1][i];
				}
			if (use[0] <= floor(cap[0]) && use[1] <= floor(cap[1]) && val > best)
				best = val;
		}
		assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), 0);
		assert_int_equal(st, HB_MILP_OPTIMAL);
		assert_true(fabs(m.objective - best) < 1e-9);
		for (int i = 0; i < n; i++)
			assert_true(fabs(m.x[i] - round(m.x[i])) < 1e-9);
		hb_milp_free(&m);
	}
}

static void test_infeasible(void **state)
{
	struct hb_milp m;
	struct hb_error err = { 0 };
	int idx[2] = { 0, 1 }, st;
	double one[2] = { 1, 1 };

	(void)state;
	/* LP: x + y >= 3 with x, y in [0, 1]. */
	hb_milp_init(&m, 0);
	hb_milp_add_col(&m, 0, 1, 1, 0, NULL, &err);
	hb_milp_add_col(&m, 0, 1, 1, 0, NULL, &err);
	hb_milp_add_row(&m, 2, idx, one, 3, HUGE_VAL, &err);
	assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), -1);
	assert_int_equal(st, HB_MILP_INFEASIBLE);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "infeasible"));
	/* MILP whose relaxation is feasible but no integer point is: 2x + 2y = 1. */
	hb_milp_free(&m);
	hb_milp_init(&m, 1);
	hb_milp_add_col(&m, 0, 1, 1, 1, NULL, &err);
	hb_milp_add_col(&m, 0, 1, 1, 1, NULL, &err);
	one[0] = one[1] = 2;
	hb_milp_add_row(&m, 2, idx, one, 1, 1, &err);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), -1);
	assert_int_equal(st, HB_MILP_INFEASIBLE);
	assert_int_equal(err.code, HB_EINPUT);
	hb_milp_free(&m);
}

static void test_unbounded(void **state)
{
	struct hb_milp m;
	struct hb_error err = { 0 };
	int idx[2] = { 0, 1 }, st;
	double a[2] = { 1, -1 };

	(void)state;
	for (int is_int = 0; is_int < 2; is_int++) {
		hb_milp_init(&m, 1);
		hb_milp_add_col(&m, 0, HUGE_VAL, 1, is_int, NULL, &err);
		hb_milp_add_col(&m, 0, HUGE_VAL, 0, is_int, NULL, &err);
		hb_milp_add_row(&m, 2, idx, a, -HUGE_VAL, 1, &err); /* x - y <= 1: x grows with y */
		memset(&err, 0, sizeof(err));
		assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), -1);
		assert_int_equal(st, HB_MILP_UNBOUNDED);
		assert_int_equal(err.code, HB_EINPUT);
		hb_milp_free(&m);
	}
}

/* Jeroslow's problem: 2 sum x_i = n with n odd has no integer point, its LP
 * relaxation does, and branch and bound needs about 2^(n/2) nodes to prove
 * it; plus a slack binary s (2 sum x + s = n) it has integer points, but
 * proving s = 0 impossible takes as long.  Either stops at the time limit. */
static void jeroslow(struct hb_milp *m, int n, int with_slack)
{
	struct hb_error err = { 0 };
	int idx[64];
	double val[64];

	hb_milp_init(m, 1);
	for (int i = 0; i < n; i++) {
		hb_milp_add_col(m, 0, 1, 0, 1, NULL, &err);
		idx[i] = i;
		val[i] = 2;
	}
	if (with_slack) {
		hb_milp_add_col(m, 0, 1, -1, 1, NULL, &err); /* maximise -s: s = 0 wanted, never possible */
		idx[n] = n;
		val[n] = 1;
	}
	hb_milp_add_row(m, n + with_slack, idx, val, n, n, &err);
}

static void test_time_limit(void **state)
{
	struct hb_milp m;
	struct hb_milp_opts o;
	struct hb_error err = { 0 };
	int st;

	(void)state;
	hb_milp_opts_default(&o);
	o.time_limit_s = 0.3;
	jeroslow(&m, 61, 0);
	assert_int_equal(hb_milp_solve(&m, &o, &st, &err), -1);
	assert_int_equal(st, HB_MILP_NO_SOLUTION);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_true(m.solve_s < 5.0); /* it stopped, near the limit */
	hb_milp_free(&m);

	jeroslow(&m, 61, 1);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hb_milp_solve(&m, &o, &st, &err), 0);
	assert_int_equal(st, HB_MILP_FEASIBLE);
	assert_true(fabs(m.x[61] - 1.0) < 1e-9); /* the incumbent needs the slack */
	assert_true(fabs(m.objective + 1.0) < 1e-9);
	assert_true(m.solve_s < 5.0);
	hb_milp_free(&m);
}

static void test_malformed(void **state)
{
	struct hb_milp m;
	struct hb_error err = { 0 };
	int idx[2] = { 0, 5 }, st;
	double val[2] = { 1, 1 };

	(void)state;
	hb_milp_init(&m, 1);
	assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), -1); /* no column */
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_milp_add_col(&m, 2, 1, 0, 0, NULL, &err), -1); /* lb > ub */
	assert_int_equal(hb_milp_add_col(&m, 0, 1, NAN, 0, NULL, &err), -1);
	assert_int_equal(hb_milp_add_col(&m, 0, 1, 1, 0, NULL, &err), 0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hb_milp_add_row(&m, 2, idx, val, 0, 1, &err), -1); /* column 5 does not exist */
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "column 5"));
	assert_int_equal(hb_milp_add_row(&m, 1, idx, val, 2, 1, &err), -1); /* lo > hi */
	assert_int_equal(m.nrows, 0);
	hb_milp_free(&m);
}

/* A duplicate index in one row is refused by GLPK itself, through
 * glp_error: the wrapper must catch it, report GLPK's words, and GLPK must
 * work again afterwards. */
static void test_glpk_error_caught(void **state)
{
	struct hb_milp m;
	struct hb_error err = { 0 };
	int idx[2] = { 0, 0 }, st;
	double val[2] = { 1, 1 };

	(void)state;
	hb_milp_init(&m, 1);
	hb_milp_add_col(&m, 0, 1, 1, 0, NULL, &err);
	assert_int_equal(hb_milp_add_row(&m, 2, idx, val, -HUGE_VAL, 1, &err), 0);
	assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), -1);
	assert_int_equal(st, HB_MILP_ERROR);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "GLPK failed"));
	assert_non_null(strstr(err.msg, "duplicate"));
	hb_milp_free(&m);
	build_lp(&m);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hb_milp_solve(&m, NULL, &st, &err), 0);
	assert_true(fabs(m.objective - 11.0) < 1e-9);
	hb_milp_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lp_by_hand),
		cmocka_unit_test(test_mip_knapsack_brute_force),
		cmocka_unit_test(test_infeasible),
		cmocka_unit_test(test_unbounded),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_glpk_error_caught),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
