/* Unit tests for solver/optperf: the exact OptPerf solver against bisection
 * on the iteration time, hand-built clusters with known splits, integer
 * rounding against exhaustive search, and the goodput choice against an
 * exhaustive scan of the candidate grid. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "optperf.h"
#include "optperf_gen.h"
#include "optperf_oracle.h"
#include "rng.h"

#define MAXN 16
#define T_RTOL 1e-9 /* brief: OptPerf within 1e-9 relative of the oracle */

static double rel_diff(double a, double b)
{
	return fabs(a - b) / fmax(fabs(a), fabs(b));
}

/* q, s: forward per sample and fixed; k, m: backward; batch bounds. */
static struct hb_optperf_node mk_node(double q, double s, double k, double m, long lo, long cap)
{
	struct hb_optperf_node nd = { q, s, k, m, lo, cap };

	return nd;
}

static struct hb_optperf_cluster mk_cluster(size_t n, const struct hb_optperf_node *node,
					     double gamma, double t_o, double t_u)
{
	struct hb_optperf_cluster cl = { n, node, gamma, t_o, t_u };

	return cl;
}

/* Checks shared by every solved instance: the split is feasible, sums to B,
 * and its Eq. 7 time (recomputed by the oracle's formula) is OptPerf. */
static void check_split(const struct hb_optperf_cluster *cl, long total, const double *b,
			const struct hb_optperf_solution *sol)
{
	double sum = 0, tmax = -INFINITY;

	for (size_t i = 0; i < cl->n; i++) {
		assert_true(b[i] >= (double)cl->node[i].min_batch);
		assert_true(b[i] <= (double)cl->node[i].max_batch);
		sum += b[i];
		tmax = fmax(tmax, optperf_oracle_node_time(cl, i, b[i]));
	}
	assert_true(rel_diff(sum, (double)total) <= 1e-9);
	assert_true(rel_diff(tmax, sol->iter_s) <= 1e-9);
	assert_true(sol->n_compute + sol->n_comm == cl->n);
}

/* --------------------------------------------------------------------------
 * Random clusters against the bisection oracle
 */

struct tally {
	int regime[3];
	int floor_bound, capped, switch_inside, regime_checked;
	double worst_t, worst_b;
};

/* Solve one instance, compare with the oracle, and count what it covered. */
static void compare_with_oracle(const struct hb_optperf_cluster *cl, long total, struct tally *ty)
{
	struct hb_error err = { 0 };
	struct hb_optperf_solution sol;
	double *b = calloc(cl->n, sizeof(double));
	double t_or, margin_min = INFINITY;
	int n_compute = 0;

	assert_non_null(b);
	assert_int_equal(hb_optperf_solve(cl, total, b, &sol, &err), 0);
	t_or = optperf_oracle_time(cl, (double)total);
	ty->worst_t = fmax(ty->worst_t, rel_diff(sol.iter_s, t_or));
	assert_true(rel_diff(sol.iter_s, t_or) <= T_RTOL);
	check_split(cl, total, b, &sol);
	ty->regime[sol.regime]++;
	ty->floor_bound += sol.floor_bound;
	ty->capped += sol.n_at_cap > 0 && !sol.floor_bound;
	if (!sol.floor_bound) {
		/* Above T_lo the optimal split is unique: b_i = the most node i
		 * can finish by OptPerf. */
		for (size_t i = 0; i < cl->n; i++) {
			const struct hb_optperf_node *nd = &cl->node[i];
			double bo = optperf_oracle_max_batch(cl, i, t_or);
			double margin = (1 - cl->gamma) * (nd->bwd_per_sample_s * bo + nd->bwd_fixed_s) -
					cl->overlap_comm_s;
			double lo_margin = (1 - cl->gamma) * (nd->bwd_per_sample_s * (double)nd->min_batch +
							      nd->bwd_fixed_s) - cl->overlap_comm_s;

			ty->worst_b = fmax(ty->worst_b, fabs(b[i] - bo) / fmax(1, bo));
			assert_true(fabs(b[i] - bo) <= 1e-6 * fmax(1, bo));
			n_compute += margin >= 0;
			margin_min = fmin(margin_min, fabs(margin));
			ty->switch_inside += margin >= 0 && lo_margin < 0 && bo < (double)nd->max_batch;
		}
		/* The regime judged on the oracle's split agrees unless a node
		 * sits on its switch point to rounding. */
		if (margin_min > 1e-9) {
			ty->regime_checked++;
			assert_int_equal((int)sol.n_compute, n_compute);
		}
	}
	free(b);
}

static void test_random_vs_oracle(void **state)
{
	struct hb_optperf_node node[MAXN];
	struct hb_optperf_cluster cl;
	struct hb_rng r;
	struct tally ty = { { 0 }, 0, 0, 0, 0, 0, 0 };
	const int instances = 1800;

	(void)state;
	hb_rng_seed(&r, 20240521, 0);
	for (int k = 0; k < instances; k++) {
		size_t n = 1 + (size_t)hb_rng_below(&r, MAXN);

		optperf_gen_cluster(&r, n, (enum optperf_gen_kind)(k % OPTPERF_GEN_KINDS), node, &cl);
		compare_with_oracle(&cl, optperf_gen_batch(&r, &cl), &ty);
	}
	print_message("optperf: %d random clusters (n 1..%d): compute %d, communication %d, mixed %d; "
		      "floor-bound %d, caps binding %d, nodes switching inside their range %d, "
		      "regime cross-checked %d; worst rel. OptPerf diff %.2e, worst split diff %.2e\n",
		      instances, MAXN, ty.regime[0], ty.regime[1], ty.regime[2], ty.floor_bound, ty.capped,
		      ty.switch_inside, ty.regime_checked, ty.worst_t, ty.worst_b);
	assert_true(ty.regime[HB_OPTPERF_COMPUTE_BOUND] >= 50);
	assert_true(ty.regime[HB_OPTPERF_COMM_BOUND] >= 50);
	assert_true(ty.regime[HB_OPTPERF_MIXED] >= 50);
	assert_true(ty.floor_bound >= 50);
	assert_true(ty.capped >= 50);
	assert_true(ty.switch_inside >= 50);
	assert_true(ty.regime_checked >= 1000);
}

/* Each generator kind lands in the regime it was built for. */
static void test_forced_regimes(void **state)
{
	struct hb_optperf_node node[MAXN];
	struct hb_optperf_cluster cl;
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	struct hb_rng r;
	double b[MAXN];
	const enum optperf_gen_kind kinds[3] = { OPTPERF_GEN_COMPUTE, OPTPERF_GEN_COMM, OPTPERF_GEN_MIXED };
	const enum hb_optperf_regime want[3] = { HB_OPTPERF_COMPUTE_BOUND, HB_OPTPERF_COMM_BOUND,
						 HB_OPTPERF_MIXED };

	(void)state;
	hb_rng_seed(&r, 99, 1);
	for (int kind = 0; kind < 3; kind++) {
		for (int k = 0; k < 100; k++) {
			size_t n = 2 + (size_t)hb_rng_below(&r, MAXN - 1);
			long total;

			optperf_gen_cluster(&r, n, kinds[kind], node, &cl);
			total = optperf_gen_batch(&r, &cl);
			assert_int_equal(hb_optperf_solve(&cl, total, b, &sol, &err), 0);
			assert_int_equal(sol.regime, want[kind]);
			assert_true(rel_diff(sol.iter_s, optperf_oracle_time(&cl, (double)total)) <= T_RTOL);
		}
	}
}

/* The lead times n = 16, 256, 4096; the large sizes must agree too. */
static void test_large_clusters(void **state)
{
	const size_t sizes[] = { 256, 4096 };
	struct hb_rng r;
	struct tally ty = { { 0 }, 0, 0, 0, 0, 0, 0 };

	(void)state;
	hb_rng_seed(&r, 4096, 2);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct hb_optperf_node *node = calloc(sizes[s], sizeof(*node));
		struct hb_optperf_cluster cl;

		assert_non_null(node);
		for (int k = 0; k < 3; k++) {
			enum optperf_gen_kind kind = k == 0 ? OPTPERF_GEN_ANY : k == 1 ? OPTPERF_GEN_SWITCH
										: OPTPERF_GEN_MIXED;

			optperf_gen_cluster(&r, sizes[s], kind, node, &cl);
			compare_with_oracle(&cl, optperf_gen_batch(&r, &cl), &ty);
		}
		free(node);
	}
}

/* --------------------------------------------------------------------------
 * Hand-built clusters
 */

static void test_homogeneous_equal_split(void **state)
{
	struct hb_optperf_node node[8];
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	const double t_o[3] = { 0, 0.02, 10 }; /* compute-, mixed-range and communication-bound */
	double b[8];

	(void)state;
	for (int i = 0; i < 8; i++)
		node[i] = mk_node(1e-4, 1e-3, 2e-4, 4e-3, 0, 512);
	for (int c = 0; c < 3; c++) {
		struct hb_optperf_cluster cl = mk_cluster(8, node, 0.3, t_o[c], 2e-3);
		const long totals[] = { 1, 7, 64, 1001, 4096 };

		for (size_t k = 0; k < sizeof(totals) / sizeof(totals[0]); k++) {
			assert_int_equal(hb_optperf_solve(&cl, totals[k], b, &sol, &err), 0);
			for (int i = 0; i < 8; i++)
				assert_true(fabs(b[i] - (double)totals[k] / 8) <= 1e-9 * (double)totals[k]);
			assert_true(rel_diff(sol.iter_s, hb_optperf_node_time(&cl, 0, (double)totals[k] / 8, NULL)) <=
				    1e-12);
		}
	}
}

/* Compute-bound: all t_compute equal (Appendix A.1, in closed form), so a node
 * twice as fast per sample (same fixed costs) takes twice the batch. */
static void test_twice_as_fast(void **state)
{
	struct hb_optperf_node node[3] = {
		mk_node(2e-4, 1e-3, 4e-4, 2e-3, 0, 4096),
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 0, 4096),
		mk_node(5e-5, 1e-3, 1e-4, 2e-3, 0, 4096),
	};
	struct hb_optperf_cluster cl = mk_cluster(3, node, 0.25, 0, 3e-3);
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b[3], inv = 0, icpt = 0, t_star;

	(void)state;
	assert_int_equal(hb_optperf_solve(&cl, 700, b, &sol, &err), 0);
	assert_int_equal(sol.regime, HB_OPTPERF_COMPUTE_BOUND);
	assert_true(fabs(b[1] - 2 * b[0]) <= 1e-9 * b[1]);
	assert_true(fabs(b[2] - 2 * b[1]) <= 1e-9 * b[2]);
	assert_true(fabs(b[0] - 100) <= 1e-9 * 100);
	for (int i = 0; i < 3; i++) {
		double alpha = node[i].fwd_per_sample_s + node[i].bwd_per_sample_s;

		inv += 1 / alpha;
		icpt += (node[i].fwd_fixed_s + node[i].bwd_fixed_s) / alpha;
	}
	t_star = (700 + icpt) / inv;
	assert_true(rel_diff(sol.iter_s, t_star + 3e-3) <= 1e-12);
}

/* Communication-bound: all syncStart equal (Appendix A.2, in closed form). */
static void test_comm_bound_closed_form(void **state)
{
	struct hb_optperf_node node[3] = {
		mk_node(1e-4, 1e-3, 2e-4, 1e-3, 0, 1000),
		mk_node(3e-4, 2e-3, 5e-4, 1e-3, 0, 1000),
		mk_node(2e-4, 0, 3e-4, 3e-3, 0, 1000),
	};
	const double g = 0.4, t_o = 0.5, t_u = 1e-3;
	struct hb_optperf_cluster cl = mk_cluster(3, node, g, t_o, t_u);
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b[3], inv = 0, icpt = 0, sigma;

	(void)state;
	assert_int_equal(hb_optperf_solve(&cl, 900, b, &sol, &err), 0);
	assert_int_equal(sol.regime, HB_OPTPERF_COMM_BOUND);
	assert_int_equal(sol.n_comm, 3);
	for (int i = 0; i < 3; i++) {
		double delta = node[i].fwd_per_sample_s + g * node[i].bwd_per_sample_s;

		inv += 1 / delta;
		icpt += (node[i].fwd_fixed_s + g * node[i].bwd_fixed_s) / delta;
	}
	sigma = (900 + icpt) / inv;
	assert_true(rel_diff(sol.iter_s, sigma + t_o + t_u) <= 1e-12);
	for (int i = 0; i < 3; i++) {
		double delta = node[i].fwd_per_sample_s + g * node[i].bwd_per_sample_s;

		assert_true(fabs(b[i] - (sigma - node[i].fwd_fixed_s - g * node[i].bwd_fixed_s) / delta) <=
			    1e-9 * b[i]);
	}
}

/* Mixed: node 0 has a long fixed backward pass (always compute-bound), node 1
 * a short one (always communication-bound).  Appendix A.3's T_comb. */
static void test_mixed_closed_form(void **state)
{
	const double g = 0.5, t_o = 0.01, t_u = 2e-3;
	struct hb_optperf_node node[2] = {
		mk_node(1e-4, 1e-3, 2e-4, 0.03, 0, 1000),  /* (1-γ)P >= 0.015 > T_o */
		mk_node(2e-4, 1e-3, 1e-5, 1e-3, 0, 1000),  /* (1-γ)P <= 0.0055 < T_o */
	};
	struct hb_optperf_cluster cl = mk_cluster(2, node, g, t_o, t_u);
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b[2], a0 = 3e-4, b0 = 1e-3 + 0.03, d1 = 2e-4 + g * 1e-5, e1 = 1e-3 + g * 1e-3, t_comb;

	(void)state;
	assert_int_equal(hb_optperf_solve(&cl, 500, b, &sol, &err), 0);
	assert_int_equal(sol.regime, HB_OPTPERF_MIXED);
	t_comb = (500 + b0 / a0 + (e1 + t_o) / d1) / (1 / a0 + 1 / d1);
	assert_true(rel_diff(sol.iter_s, t_comb + t_u) <= 1e-12);
	assert_true(fabs(b[0] - (t_comb - b0) / a0) <= 1e-9 * b[0]);
	assert_true(fabs(b[1] - (t_comb - t_o - e1) / d1) <= 1e-9 * b[1]);
}

/* A fast node whose memory cap is below its share gets exactly the cap; the
 * others split the rest with equal finishing times. */
static void test_caps_bind(void **state)
{
	struct hb_optperf_node node[3] = {
		mk_node(2.5e-5, 1e-3, 5e-5, 2e-3, 0, 40),
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 0, 1000),
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 0, 1000),
	};
	struct hb_optperf_cluster cl = mk_cluster(3, node, 0.3, 0, 1e-3);
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b[3];

	(void)state;
	/* Uncapped, node 0 would take 4/6 of 300 = 200 samples. */
	assert_int_equal(hb_optperf_solve(&cl, 300, b, &sol, &err), 0);
	assert_true(b[0] == 40);
	assert_int_equal(sol.n_at_cap, 1);
	assert_true(fabs(b[1] - 130) <= 1e-9 * 130 && fabs(b[2] - 130) <= 1e-9 * 130);
	assert_true(rel_diff(sol.iter_s, hb_optperf_node_time(&cl, 1, 130, NULL)) <= 1e-12);
	assert_true(hb_optperf_node_time(&cl, 0, 40, NULL) < sol.iter_s);
	/* Exactly the sum of the caps: everyone at the cap. */
	assert_int_equal(hb_optperf_solve(&cl, 2040, b, &sol, &err), 0);
	assert_true(b[0] == 40 && b[1] == 1000 && b[2] == 1000);
	assert_int_equal(sol.n_at_cap, 3);
	assert_true(rel_diff(sol.iter_s, hb_optperf_node_time(&cl, 1, 1000, NULL)) <= 1e-12);
}

/* A node whose fixed costs exceed what the others need sets OptPerf; the
 * split then shares the slack and everyone finishes by that time. */
static void test_floor_bound(void **state)
{
	struct hb_optperf_node node[3] = {
		mk_node(1e-4, 0.5, 2e-4, 1e-3, 2, 100),
		mk_node(1e-4, 1e-3, 2e-4, 1e-3, 0, 100),
		mk_node(1e-4, 1e-3, 2e-4, 1e-3, 0, 100),
	};
	struct hb_optperf_cluster cl = mk_cluster(3, node, 0.2, 1e-3, 1e-3);
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b[3];

	(void)state;
	assert_int_equal(hb_optperf_solve(&cl, 60, b, &sol, &err), 0);
	assert_int_equal(sol.floor_bound, 1);
	assert_true(rel_diff(sol.iter_s, hb_optperf_node_time(&cl, 0, 2, NULL)) <= 1e-15);
	assert_true(fabs(b[0] - 2) <= 1e-9);
	check_split(&cl, 60, b, &sol);
	assert_true(fabs(b[1] - 29) <= 1e-9 && fabs(b[2] - 29) <= 1e-9);
}

static void test_single_node(void **state)
{
	struct hb_optperf_node node = mk_node(1e-4, 1e-3, 2e-4, 2e-3, 0, 64);
	struct hb_optperf_cluster cl = mk_cluster(1, &node, 0.5, 0.05, 1e-3);
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b;

	(void)state;
	assert_int_equal(hb_optperf_solve(&cl, 33, &b, &sol, &err), 0);
	assert_true(fabs(b - 33) <= 1e-12 * 33);
	assert_int_equal(sol.regime, HB_OPTPERF_COMM_BOUND);
	assert_true(rel_diff(sol.iter_s, optperf_oracle_node_time(&cl, 0, 33)) <= 1e-15);
}

/* Eq. 7 for an even split is never faster than OptPerf. */
static void test_even_split_not_faster(void **state)
{
	struct hb_optperf_node node[MAXN];
	struct hb_optperf_cluster cl;
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	struct hb_rng r;
	double b[MAXN], even[MAXN];
	int checked = 0;

	(void)state;
	hb_rng_seed(&r, 5, 3);
	for (int k = 0; k < 300; k++) {
		size_t n = 1 + (size_t)hb_rng_below(&r, MAXN);
		long total;
		int ok = 1;

		optperf_gen_cluster(&r, n, OPTPERF_GEN_ANY, node, &cl);
		total = optperf_gen_batch(&r, &cl);
		for (size_t i = 0; i < n; i++) {
			even[i] = (double)total / (double)n;
			ok &= even[i] >= (double)node[i].min_batch && even[i] <= (double)node[i].max_batch;
		}
		if (!ok)
			continue;
		assert_int_equal(hb_optperf_solve(&cl, total, b, &sol, &err), 0);
		assert_true(hb_optperf_iter_time(&cl, even) >= sol.iter_s * (1 - 1e-12));
		checked++;
	}
	assert_true(checked >= 50);
}

static void expect_input_error(int rc, const struct hb_error *err, const char *needle)
{
	assert_int_equal(rc, -1);
	assert_int_equal(err->code, HB_EINPUT);
	if (!strstr(err->msg, needle))
		fail_msg("message '%s' does not name '%s'", err->msg, needle);
}

static void test_errors(void **state)
{
	struct hb_optperf_node node[2] = {
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 1, 64),
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 2, 32),
	};
	struct hb_optperf_cluster cl = mk_cluster(2, node, 0.5, 0.01, 1e-3);
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b[2];

	(void)state;
	expect_input_error(hb_optperf_solve(&cl, 0, b, &sol, &err), &err, "total_batch");
	expect_input_error(hb_optperf_solve(&cl, -5, b, &sol, &err), &err, "total_batch");
	expect_input_error(hb_optperf_solve(&cl, 97, b, &sol, &err), &err, "max_batch");
	expect_input_error(hb_optperf_solve(&cl, 2, b, &sol, &err), &err, "min_batch");
	assert_int_equal(hb_optperf_solve(&cl, 96, b, &sol, &err), 0);
	assert_int_equal(hb_optperf_solve(&cl, 3, b, &sol, &err), 0);
	expect_input_error(hb_optperf_solve(&cl, 10, NULL, &sol, &err), &err, "batch");

	node[1].fwd_per_sample_s = -1;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "node 1: field 'fwd_per_sample_s'");
	node[1].fwd_per_sample_s = NAN;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "fwd_per_sample_s");
	node[1].fwd_per_sample_s = 0;
	node[1].bwd_per_sample_s = 0;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "bwd_per_sample_s");
	node[1].fwd_per_sample_s = 1e-4;
	node[1].bwd_per_sample_s = 2e-4;
	node[0].bwd_fixed_s = INFINITY;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "node 0: field 'bwd_fixed_s'");
	node[0].bwd_fixed_s = 2e-3;
	node[0].fwd_fixed_s = -1e-3;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "fwd_fixed_s");
	node[0].fwd_fixed_s = 1e-3;
	node[0].min_batch = -1;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "min_batch");
	node[0].min_batch = 70;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "node 0: field 'max_batch'");
	node[0].min_batch = 1;
	node[0].max_batch = HB_OPTPERF_MAX_BATCH;
	assert_int_equal(hb_optperf_solve(&cl, 100000, b, &sol, &err), 0);
	node[0].max_batch = 64;

	cl.gamma = 1.5;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "gamma");
	cl.gamma = NAN;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "gamma");
	cl.gamma = 0.5;
	cl.overlap_comm_s = -1;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "overlap_comm_s");
	cl.overlap_comm_s = 0.01;
	cl.last_comm_s = NAN;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "last_comm_s");
	cl.last_comm_s = 1e-3;
	cl.n = 0;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "'n'");
	cl.n = 2;
	cl.node = NULL;
	expect_input_error(hb_optperf_solve(&cl, 10, b, &sol, &err), &err, "node");
	expect_input_error(hb_optperf_validate(NULL, &err), &err, "NULL");
}

/* Degenerate but valid parameters: no forward per-sample time with γ = 0
 * (flat communication branch), γ = 1, no backward per-sample time. */
static void test_degenerate_parameters(void **state)
{
	struct hb_optperf_node node[3] = {
		mk_node(0, 1e-3, 3e-4, 1e-3, 0, 500),
		mk_node(1e-4, 1e-3, 0, 4e-3, 0, 500),
		mk_node(3e-4, 0, 0, 0, 0, 500),
	};
	const double gammas[3] = { 0, 1, 0.5 };
	const double t_os[4] = { 0, 2e-3, 0.02, 1 };
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double b[3];

	(void)state;
	for (int g = 0; g < 3; g++)
		for (int o = 0; o < 4; o++) {
			struct hb_optperf_cluster cl = mk_cluster(3, node, gammas[g], t_os[o], 1e-3);
			const long totals[] = { 1, 10, 100, 777, 1500 };

			for (size_t k = 0; k < sizeof(totals) / sizeof(totals[0]); k++) {
				assert_int_equal(hb_optperf_solve(&cl, totals[k], b, &sol, &err), 0);
				check_split(&cl, totals[k], b, &sol);
				assert_true(rel_diff(sol.iter_s, optperf_oracle_time(&cl, (double)totals[k])) <=
					    T_RTOL);
			}
		}
}

/* q_i = 0 and γ = 0 make node i's communication branch flat: it finishes at
 * s_i + T_o + T_u for any batch up to its switch point.  When that node also
 * sets T_lo the solver must take its batch from the compute branch, whatever
 * the last bit of the switch time τ_i. */
static void test_flat_comm_branch(void **state)
{
	struct hb_optperf_node node[4];
	struct hb_optperf_cluster cl;
	struct hb_rng r;
	struct tally ty = { { 0 }, 0, 0, 0, 0, 0, 0 };

	(void)state;
	hb_rng_seed(&r, 2718, 7);
	for (int k = 0; k < 2000; k++) {
		size_t n = 2 + (size_t)hb_rng_below(&r, 3);

		optperf_gen_cluster(&r, n, OPTPERF_GEN_ANY, node, &cl);
		cl.gamma = 0;
		cl.overlap_comm_s = 0.01 + 0.1 * hb_rng_uniform(&r);
		node[0].fwd_per_sample_s = 0;
		node[0].fwd_fixed_s = 0.05 + 0.1 * hb_rng_uniform(&r);
		node[0].bwd_fixed_s = 0.005 * hb_rng_uniform(&r);
		node[0].min_batch = 0;
		compare_with_oracle(&cl, optperf_gen_batch(&r, &cl), &ty);
	}
	assert_true(ty.floor_bound >= 100);
}

/* --------------------------------------------------------------------------
 * Integer rounding
 */

static void check_rounding(const struct hb_optperf_cluster *cl, long total, const double *b,
			   const struct hb_optperf_solution *sol, const long *loc, double t_int,
			   double *worst_excess)
{
	long sum = 0;
	double tmax = -INFINITY, one_sample = 0;

	for (size_t i = 0; i < cl->n; i++) {
		const struct hb_optperf_node *nd = &cl->node[i];

		assert_true(loc[i] >= nd->min_batch && loc[i] <= nd->max_batch);
		sum += loc[i];
		tmax = fmax(tmax, optperf_oracle_node_time(cl, i, (double)loc[i]));
		one_sample = fmax(one_sample, nd->fwd_per_sample_s + nd->bwd_per_sample_s);
	}
	(void)b;
	assert_int_equal(sum, total);
	assert_true(rel_diff(tmax, t_int) <= 1e-15);
	/* The real optimum is a lower bound; one sample's time an upper one. */
	assert_true(t_int >= sol->iter_s * (1 - 1e-12));
	assert_true(t_int <= sol->iter_s + one_sample * (1 + 1e-9));
	*worst_excess = fmax(*worst_excess, (t_int - sol->iter_s) / one_sample);
}

static void test_rounding_random(void **state)
{
	struct hb_optperf_node node[MAXN];
	struct hb_optperf_cluster cl;
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	struct hb_rng r;
	double b[MAXN], t_int, worst = 0;
	long loc[MAXN];

	(void)state;
	hb_rng_seed(&r, 31337, 4);
	for (int k = 0; k < 1200; k++) {
		size_t n = 1 + (size_t)hb_rng_below(&r, MAXN);
		long total;

		optperf_gen_cluster(&r, n, (enum optperf_gen_kind)(k % OPTPERF_GEN_KINDS), node, &cl);
		total = optperf_gen_batch(&r, &cl);
		assert_int_equal(hb_optperf_solve(&cl, total, b, &sol, &err), 0);
		assert_int_equal(hb_optperf_round(&cl, total, b, loc, &t_int, &err), 0);
		check_rounding(&cl, total, b, &sol, loc, t_int, &worst);
	}
	print_message("optperf: 1200 roundings: worst (T_int - OptPerf) / max_i per-sample time = %.3f\n",
		      worst);
}

/* Small clusters: the rounding is the exact integer min-max optimum. */
static void test_rounding_exhaustive(void **state)
{
	struct hb_optperf_node node[4];
	struct hb_optperf_cluster cl;
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	struct hb_rng r;
	double b[4], t_int, worst = 0;
	long loc[4], best[4];

	(void)state;
	hb_rng_seed(&r, 777, 5);
	for (int k = 0; k < 600; k++) {
		size_t n = 1 + (size_t)hb_rng_below(&r, 4);
		long total;

		optperf_gen_cluster(&r, n, (enum optperf_gen_kind)(k % OPTPERF_GEN_KINDS), node, &cl);
		for (size_t i = 0; i < n; i++) {
			node[i].max_batch = 1 + (long)hb_rng_below(&r, 14);
			node[i].min_batch = hb_rng_uniform(&r) < 0.7 ? 0 : (long)hb_rng_below(&r, 3);
			if (node[i].min_batch > node[i].max_batch)
				node[i].min_batch = node[i].max_batch;
		}
		total = optperf_gen_batch(&r, &cl);
		assert_int_equal(hb_optperf_solve(&cl, total, b, &sol, &err), 0);
		assert_int_equal(hb_optperf_round(&cl, total, b, loc, &t_int, &err), 0);
		check_rounding(&cl, total, b, &sol, loc, t_int, &worst);
		assert_true(rel_diff(t_int, optperf_oracle_int_split(&cl, total, best)) <= 1e-12);
	}
}

static void test_rounding_bad_input(void **state)
{
	struct hb_optperf_node node[2] = {
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 0, 64),
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 0, 64),
	};
	struct hb_optperf_cluster cl = mk_cluster(2, node, 0.5, 0.01, 1e-3);
	struct hb_error err = { 0 };
	double b[2] = { 10, 10 };
	long loc[2];
	double t;

	(void)state;
	expect_input_error(hb_optperf_round(&cl, 21, b, loc, &t, &err), &err, "batch");
	b[0] = 70;
	b[1] = -50;
	expect_input_error(hb_optperf_round(&cl, 20, b, loc, &t, &err), &err, "batch[0]");
	b[0] = 10.5;
	b[1] = 9.5;
	assert_int_equal(hb_optperf_round(&cl, 20, b, loc, &t, &err), 0);
	assert_true(loc[0] + loc[1] == 20 && loc[0] == 10 && loc[1] == 10);
	/* Overshoot by rounding noise: still sums exactly. */
	b[0] = 10.0000000001;
	b[1] = 10.0000000001;
	assert_int_equal(hb_optperf_round(&cl, 20, b, loc, &t, &err), 0);
	assert_true(loc[0] == 10 && loc[1] == 10);
	expect_input_error(hb_optperf_round(&cl, 20, NULL, loc, &t, &err), &err, "batch");
	/* A split that overshoots within tolerance: one sample comes back off
	 * the node that finishes last. */
	node[0].max_batch = node[1].max_batch = 2000000;
	b[0] = 1000001.0;
	b[1] = 1000000.5;
	assert_int_equal(hb_optperf_round(&cl, 2000000, b, loc, &t, &err), 0);
	assert_true(loc[0] == 1000000 && loc[1] == 1000000);
}

/* --------------------------------------------------------------------------
 * Goodput choice of the total batch
 */

static void test_candidates(void **state)
{
	long out[60];
	size_t n;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_optperf_candidates(32, 32768, 50, out, &n, &err), 0);
	assert_int_equal(n, 50);
	assert_true(out[0] == 32 && out[49] == 32768);
	for (size_t k = 1; k < n; k++) {
		double ratio = (double)out[k] / (double)out[k - 1];

		assert_true(out[k] > out[k - 1]);
		assert_true(fabs(ratio - pow(1024, 1.0 / 49)) <= 0.02);
	}
	/* Narrow range: rounding collapses points, duplicates dropped. */
	assert_int_equal(hb_optperf_candidates(10, 20, 50, out, &n, &err), 0);
	assert_int_equal(n, 11);
	for (size_t k = 0; k < n; k++)
		assert_true(out[k] == 10 + (long)k);
	assert_int_equal(hb_optperf_candidates(7, 7, 50, out, &n, &err), 0);
	assert_true(n == 1 && out[0] == 7);
	assert_int_equal(hb_optperf_candidates(7, 900, 1, out, &n, &err), 0);
	assert_true(n == 1 && out[0] == 7);
	expect_input_error(hb_optperf_candidates(0, 10, 5, out, &n, &err), &err, "b_min");
	expect_input_error(hb_optperf_candidates(10, 9, 5, out, &n, &err), &err, "b_max");
	expect_input_error(hb_optperf_candidates(1, 9, 0, out, &n, &err), &err, "n_candidates");
}

/* Exhaustive reference: the same grid, written out here, each point timed
 * by the oracle. */
static void test_goodput_vs_exhaustive(void **state)
{
	struct hb_optperf_node node[MAXN];
	struct hb_optperf_cluster cl;
	struct hb_optperf_choice ch;
	struct hb_error err = { 0 };
	struct hb_rng r;
	double b[MAXN];
	long loc[MAXN];
	int interior = 0;

	(void)state;
	hb_rng_seed(&r, 424242, 6);
	for (int k = 0; k < 300; k++) {
		size_t n = 1 + (size_t)hb_rng_below(&r, MAXN), count, m = 0, best = 0, n_lib;
		struct hb_optperf_goodput gp;
		long grid[80], lib[80], sum_lo = 0, sum_cap = 0;
		double best_g = -INFINITY, g_at[80];

		optperf_gen_cluster(&r, n, (enum optperf_gen_kind)(k % OPTPERF_GEN_KINDS), node, &cl);
		for (size_t i = 0; i < n; i++) {
			sum_lo += node[i].min_batch;
			sum_cap += node[i].max_batch;
		}
		gp.phi = exp(log(1) + (log(1e5) - log(1)) * hb_rng_uniform(&r));
		gp.m0 = 8 + (double)hb_rng_below(&r, 120);
		/* b_min feasible, b_max up to 20 % beyond the cluster's capacity. */
		gp.b_min = (long)fmax(gp.m0, (double)sum_lo);
		if (gp.b_min > sum_cap)
			gp.b_min = sum_lo > 1 ? sum_lo : 1;
		gp.b_max = gp.b_min + (long)hb_rng_below(&r, (uint64_t)(1.2 * (double)sum_cap));
		gp.n_candidates = k % 5 == 0 ? 0 : 2 + hb_rng_below(&r, 70);
		count = gp.n_candidates ? gp.n_candidates : 50;
		for (size_t c = 0; c < count; c++) {
			long v = c == 0 ? gp.b_min : c == count - 1 ? gp.b_max
				 : lround((double)gp.b_min * pow((double)gp.b_max / (double)gp.b_min,
								 (double)c / (double)(count - 1)));

			v = v < gp.b_min ? gp.b_min : v > gp.b_max ? gp.b_max : v;
			if (m == 0 || v > grid[m - 1])
				grid[m++] = v;
		}
		assert_int_equal(hb_optperf_candidates(gp.b_min, gp.b_max, count, lib, &n_lib, &err), 0);
		assert_int_equal(n_lib, m);
		assert_memory_equal(lib, grid, m * sizeof(long));
		for (size_t c = 0; c < m; c++) {
			g_at[c] = -INFINITY;
			if (grid[c] < sum_lo || grid[c] > sum_cap)
				continue;
			g_at[c] = (double)grid[c] * (gp.phi + gp.m0) / (gp.phi + (double)grid[c]) /
				  optperf_oracle_time(&cl, (double)grid[c]);
			if (g_at[c] > best_g) {
				best_g = g_at[c];
				best = c;
			}
		}
		assert_int_equal(hb_optperf_choose_batch(&cl, &gp, b, loc, &ch, &err), 0);
		assert_true(rel_diff(ch.goodput, best_g) <= T_RTOL);
		if (ch.batch != grid[best]) {
			/* Only a tie to rounding may pick another point. */
			size_t c = 0;

			while (grid[c] != ch.batch)
				c++;
			assert_true(rel_diff(g_at[c], best_g) <= T_RTOL);
		}
		interior += best > 0 && best + 1 < m && g_at[best - 1] > -INFINITY && g_at[best + 1] > -INFINITY;
		assert_true(rel_diff(ch.iter_s, optperf_oracle_time(&cl, (double)ch.batch)) <= T_RTOL);
		assert_true(rel_diff(ch.efficiency, (gp.phi + gp.m0) / (gp.phi + (double)ch.batch)) <= 1e-15);
		long sum = 0;

		for (size_t i = 0; i < n; i++)
			sum += loc[i];
		assert_int_equal(sum, ch.batch);
		assert_true(ch.int_iter_s >= ch.iter_s * (1 - 1e-12));
	}
	print_message("optperf: 300 goodput choices, %d with B* strictly inside the feasible grid\n", interior);
	assert_true(interior >= 30);
}

/* φ = 0: E(B) = B₀/B, goodput B₀/OptPerf(B) falls with B, so B* = b_min.
 * A job whose time is all fixed cost with φ large: B* = the largest feasible. */
static void test_goodput_extremes(void **state)
{
	struct hb_optperf_node node[2] = {
		mk_node(1e-4, 1e-3, 2e-4, 2e-3, 0, 256),
		mk_node(2e-4, 1e-3, 4e-4, 2e-3, 0, 256),
	};
	struct hb_optperf_cluster cl = mk_cluster(2, node, 0.5, 0.01, 1e-3);
	struct hb_optperf_goodput gp = { 0, 32, 32, 2000, 0 };
	struct hb_optperf_choice ch;
	struct hb_error err = { 0 };
	long grid[50];
	size_t m, c = 0;

	(void)state;
	assert_int_equal(hb_optperf_choose_batch(&cl, &gp, NULL, NULL, &ch, &err), 0);
	assert_int_equal(ch.batch, 32);
	assert_int_equal(ch.n_candidates, 50);
	assert_true(ch.n_feasible < 50);
	gp.phi = 1e12;
	node[0].fwd_fixed_s = node[1].fwd_fixed_s = 10;
	assert_int_equal(hb_optperf_choose_batch(&cl, &gp, NULL, NULL, &ch, &err), 0);
	/* The largest grid point the cluster holds (Σ max_batch = 512). */
	assert_int_equal(hb_optperf_candidates(32, 2000, 50, grid, &m, &err), 0);
	while (c + 1 < m && grid[c + 1] <= 512)
		c++;
	assert_int_equal(ch.batch, grid[c]);
	gp.b_min = 600;
	expect_input_error(hb_optperf_choose_batch(&cl, &gp, NULL, NULL, &ch, &err), &err, "no candidate");
	gp.b_min = 32;
	gp.m0 = 0;
	expect_input_error(hb_optperf_choose_batch(&cl, &gp, NULL, NULL, &ch, &err), &err, "m0");
	gp.m0 = 32;
	gp.phi = -1;
	expect_input_error(hb_optperf_choose_batch(&cl, &gp, NULL, NULL, &ch, &err), &err, "phi");
}

static void test_regime_names(void **state)
{
	(void)state;
	assert_string_equal(hb_optperf_regime_name(HB_OPTPERF_COMPUTE_BOUND), "compute");
	assert_string_equal(hb_optperf_regime_name(HB_OPTPERF_COMM_BOUND), "communication");
	assert_string_equal(hb_optperf_regime_name(HB_OPTPERF_MIXED), "mixed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_vs_oracle),
		cmocka_unit_test(test_forced_regimes),
		cmocka_unit_test(test_large_clusters),
		cmocka_unit_test(test_homogeneous_equal_split),
		cmocka_unit_test(test_twice_as_fast),
		cmocka_unit_test(test_comm_bound_closed_form),
		cmocka_unit_test(test_mixed_closed_form),
		cmocka_unit_test(test_caps_bind),
		cmocka_unit_test(test_floor_bound),
		cmocka_unit_test(test_single_node),
		cmocka_unit_test(test_even_split_not_faster),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_degenerate_parameters),
		cmocka_unit_test(test_flat_comm_branch),
		cmocka_unit_test(test_rounding_random),
		cmocka_unit_test(test_rounding_exhaustive),
		cmocka_unit_test(test_rounding_bad_input),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_goodput_vs_exhaustive),
		cmocka_unit_test(test_goodput_extremes),
		cmocka_unit_test(test_regime_names),
	};

	return cmocka_run_group_tests_name("optperf", tests, NULL, NULL);
}
