/* Unit tests for solver/lbbsp (LB-BSP's Δ-step balancing) against a
 * brute-force equal-time split, and for solver/cannikin_ctl (Cannikin's
 * epoch 1 / 2 / 3+ choices) on small hand-built clusters. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cannikin_ctl.h"
#include "lbbsp.h"
#include "optperf.h"
#include "optperf_gen.h"
#include "rng.h"

#define MAXN 8

static double compute_time(const struct hb_optperf_cluster *cl, size_t i, double b)
{
	const struct hb_optperf_node *nd = &cl->node[i];

	/* Written out again (not hb_lbbsp_compute_time) so the oracle shares no code. */
	return nd->fwd_per_sample_s * b + nd->fwd_fixed_s + nd->bwd_per_sample_s * b + nd->bwd_fixed_s;
}

/* Brute force, real: the smallest T at which every node can finish its
 * share of total by T, by bisection on T over the clamped inverses. */
static double oracle_equal_time(const struct hb_optperf_cluster *cl, long total)
{
	double lo = 0.0, hi = 0.0;

	for (size_t i = 0; i < cl->n; i++) {
		lo = fmax(lo, compute_time(cl, i, (double)cl->node[i].min_batch));
		hi = fmax(hi, compute_time(cl, i, (double)cl->node[i].max_batch));
	}
	for (int it = 0; it < 200; it++) {
		double mid = 0.5 * (lo + hi), sum = 0.0;

		for (size_t i = 0; i < cl->n; i++) {
			const struct hb_optperf_node *nd = &cl->node[i];
			double a = nd->fwd_per_sample_s + nd->bwd_per_sample_s;
			double b = (mid - nd->fwd_fixed_s - nd->bwd_fixed_s) / a;

			sum += fmin(fmax(b, (double)nd->min_batch), (double)nd->max_batch);
		}
		if (sum >= (double)total)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* Brute force, integer: every split of total over n <= 3 nodes. */
static double oracle_int_split(const struct hb_optperf_cluster *cl, long total)
{
	double best = INFINITY;
	long lo0 = cl->node[0].min_batch, hi0 = cl->node[0].max_batch;

	for (long b0 = lo0; b0 <= hi0 && b0 <= total; b0++) {
		double t0 = compute_time(cl, 0, (double)b0);

		if (cl->n == 1) {
			if (b0 == total)
				best = fmin(best, t0);
			continue;
		}
		for (long b1 = cl->node[1].min_batch; b1 <= cl->node[1].max_batch && b0 + b1 <= total; b1++) {
			double t = fmax(t0, compute_time(cl, 1, (double)b1));
			long b2 = total - b0 - b1;

			if (cl->n == 2) {
				if (b2 == 0)
					best = fmin(best, t);
				continue;
			}
			if (b2 < cl->node[2].min_batch || b2 > cl->node[2].max_batch)
				continue;
			best = fmin(best, fmax(t, compute_time(cl, 2, (double)b2)));
		}
	}
	return best;
}

static double max_alpha(const struct hb_optperf_cluster *cl)
{
	double a = 0.0;

	for (size_t i = 0; i < cl->n; i++)
		a = fmax(a, cl->node[i].fwd_per_sample_s + cl->node[i].bwd_per_sample_s);
	return a;
}

static long sum_of(const long *v, size_t n)
{
	long s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* ---- LB-BSP ---------------------------------------------------------------- */

/* Two nodes, node 0 twice as fast, no fixed costs: from (15, 15) one Δ = 5
 * move gives (20, 10), where both take 20 units, and nothing moves after. */
static void test_lbbsp_hand(void **state)
{
	struct hb_optperf_node nd[2] = { { 0.5, 0, 0.5, 0, 1, 100 }, { 1.0, 0, 1.0, 0, 1, 100 } };
	struct hb_optperf_cluster cl = { 2, nd, 0.5, 0.0, 0.0 };
	struct hb_error err = { 0 };
	long local[2], moved, rounds;

	(void)state;
	assert_int_equal(hb_even_split(&cl, 30, local, &err), 0);
	assert_int_equal(local[0], 15);
	assert_int_equal(local[1], 15);
	assert_int_equal(hb_lbbsp_step(&cl, HB_LBBSP_DELTA, local, &moved, &err), 0);
	assert_int_equal(moved, 5);
	assert_int_equal(local[0], 20);
	assert_int_equal(local[1], 10);
	assert_int_equal(hb_lbbsp_step(&cl, HB_LBBSP_DELTA, local, &moved, &err), 0);
	assert_int_equal(moved, 0);
	/* From (15, 15) with Δ = 1: five moves to the same point. */
	local[0] = local[1] = 15;
	assert_int_equal(hb_lbbsp_balance(&cl, 1, 1000, local, &rounds, &err), 0);
	assert_int_equal(rounds, 5);
	assert_int_equal(local[0], 20);
}

/* Random clusters: the balanced split is within Δ·max α of the brute-force
 * equal-time split (lbbsp.h's guarantee), sums to B, respects the bounds,
 * and with Δ = 1 on three nodes is within one sample of the exhaustive
 * integer optimum. */
static void test_lbbsp_vs_bruteforce(void **state)
{
	struct hb_rng r;
	struct hb_optperf_node nd[MAXN];
	struct hb_optperf_cluster cl;
	struct hb_error err = { 0 };
	long local[MAXN], rounds;
	int checked_int = 0;

	(void)state;
	hb_rng_seed(&r, 38, 1);
	for (int trial = 0; trial < 400; trial++) {
		size_t n = 2 + (size_t)(trial % (MAXN - 1));
		enum optperf_gen_kind kind = (enum optperf_gen_kind)(trial % OPTPERF_GEN_KINDS);
		long total;
		double teq, got, bound;

		optperf_gen_cluster(&r, n, kind, nd, &cl);
		total = optperf_gen_batch(&r, &cl);
		assert_int_equal(hb_even_split(&cl, total, local, &err), 0);
		assert_int_equal(sum_of(local, n), total);
		assert_int_equal(hb_lbbsp_balance(&cl, HB_LBBSP_DELTA, 1000000, local, &rounds, &err), 0);
		assert_int_equal(sum_of(local, n), total);
		for (size_t i = 0; i < n; i++)
			assert_true(local[i] >= nd[i].min_batch && local[i] <= nd[i].max_batch);
		teq = oracle_equal_time(&cl, total);
		got = hb_lbbsp_max_compute(&cl, local);
		bound = teq + HB_LBBSP_DELTA * max_alpha(&cl);
		assert_true(got >= teq * (1 - 1e-9));
		assert_true(got <= bound * (1 + 1e-9));

		/* Exhaustive integer check on three nodes with a small total. */
		if (n == 3 && total <= 400) {
			double tint;

			assert_int_equal(hb_even_split(&cl, total, local, &err), 0);
			assert_int_equal(hb_lbbsp_balance(&cl, 1, 1000000, local, &rounds, &err), 0);
			tint = oracle_int_split(&cl, total);
			got = hb_lbbsp_max_compute(&cl, local);
			assert_true(got >= tint * (1 - 1e-12));
			assert_true(got <= (tint + max_alpha(&cl)) * (1 + 1e-12));
			checked_int++;
		}
	}
	assert_true(checked_int > 5);
}

/* LB-BSP ignores overlap: on a communication-bound cluster its balanced
 * split is no faster than OptPerf under Eq. 7, and strictly slower when the
 * nodes' forward shares differ (syncStart, not t_compute, must be equal). */
static void test_lbbsp_ignores_overlap(void **state)
{
	/* Node 0: fast forward, slow backward; node 1 the reverse; same t_compute slope. */
	struct hb_optperf_node nd[2] = { { 0.1e-3, 0, 0.5e-3, 0, 1, 1000 }, { 0.4e-3, 0, 0.2e-3, 0, 1, 1000 } };
	struct hb_optperf_cluster cl = { 2, nd, 0.5, 0.05, 0.01 };
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	long local[2];
	double real[2], dl[2];

	(void)state;
	assert_int_equal(hb_even_split(&cl, 200, local, &err), 0);
	assert_int_equal(hb_lbbsp_balance(&cl, HB_LBBSP_DELTA, 1000, local, NULL, &err), 0);
	/* Equal compute slopes: LB-BSP sees nothing to balance. */
	assert_int_equal(local[0], 100);
	assert_int_equal(hb_optperf_solve(&cl, 200, real, &sol, &err), 0);
	assert_int_equal(sol.regime, HB_OPTPERF_COMM_BOUND);
	dl[0] = (double)local[0];
	dl[1] = (double)local[1];
	assert_true(hb_optperf_iter_time(&cl, dl) > sol.iter_s * 1.05);
}

static void test_lbbsp_bad_input(void **state)
{
	struct hb_optperf_node nd[2] = { { 0.5, 0, 0.5, 0, 1, 10 }, { 1.0, 0, 1.0, 0, 1, 10 } };
	struct hb_optperf_cluster cl = { 2, nd, 0.5, 0.0, 0.0 };
	struct hb_error err = { 0 };
	long local[2] = { 5, 5 };

	(void)state;
	assert_int_equal(hb_lbbsp_step(&cl, 0, local, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "delta 0"));
	local[1] = 11;
	assert_int_equal(hb_lbbsp_step(&cl, 5, local, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "node 1"));
	assert_non_null(strstr(err.msg, "11"));
	assert_int_equal(hb_even_split(&cl, 21, local, &err), -1);
	assert_non_null(strstr(err.msg, "21"));
}

/* ---- Cannikin's controller ----------------------------------------------- */

/* The truth the controller measures: three GPUs, 1x, 2x and 4x the
 * per-sample time, with fixed costs and a communication model. */
static struct hb_optperf_node truth_nodes[3] = {
	{ 0.10e-3, 2.0e-3, 0.20e-3, 1.0e-3, 1, 400 },
	{ 0.20e-3, 2.0e-3, 0.40e-3, 1.0e-3, 1, 400 },
	{ 0.40e-3, 2.0e-3, 0.80e-3, 1.0e-3, 1, 400 },
};
static const struct hb_optperf_cluster truth = { 3, truth_nodes, 0.3, 0.004, 0.002 };

static void measure_truth(struct hb_cannikin_ctl *c, const long *local)
{
	struct hb_cannikin_comm_obs comm = { .gamma = truth.gamma, .overlap_s = truth.overlap_comm_s,
					     .last_s = truth.last_comm_s };
	double a[3], p[3];
	struct hb_error err = { 0 };

	for (int i = 0; i < 3; i++) {
		a[i] = truth_nodes[i].fwd_per_sample_s * (double)local[i] + truth_nodes[i].fwd_fixed_s;
		p[i] = truth_nodes[i].bwd_per_sample_s * (double)local[i] + truth_nodes[i].bwd_fixed_s;
	}
	assert_int_equal(hb_cannikin_ctl_observe(c, local, a, p, &comm, 1, &err), 0);
}

static void test_ctl_epochs(void **state)
{
	struct hb_cannikin_ctl c;
	struct hb_error err = { 0 };
	struct hb_optperf_node fitted[3];
	struct hb_optperf_cluster model;
	struct hb_optperf_solution sol;
	long local[3], want[3];
	double inv[3], sinv = 0.0, real[3];
	const long B = 210;

	(void)state;
	assert_int_equal(hb_cannikin_ctl_init(&c, &truth, &err), 0);

	/* Epoch 1: even split. */
	assert_int_equal(hb_cannikin_ctl_phase(&c), HB_CANNIKIN_EVEN);
	assert_int_equal(hb_cannikin_ctl_split(&c, B, local, &err), 0);
	assert_int_equal(local[0], 70);
	assert_int_equal(local[1], 70);
	assert_int_equal(local[2], 70);
	measure_truth(&c, local);

	/* Epoch 2: Eq. 8 as printed, b_i = [Σ t / t_i] (Σ_k Σ t / t_k)^-1 B,
	 * with t_i the per-sample compute time measured at 70 samples. */
	assert_int_equal(hb_cannikin_ctl_phase(&c), HB_CANNIKIN_EQ8);
	{
		double tsum = 0.0, t[3], norm = 0.0;

		for (int i = 0; i < 3; i++) {
			const struct hb_optperf_node *nd = &truth_nodes[i];

			t[i] = ((nd->fwd_per_sample_s + nd->bwd_per_sample_s) * 70 + nd->fwd_fixed_s + nd->bwd_fixed_s) / 70;
			tsum += t[i];
		}
		for (int i = 0; i < 3; i++)
			norm += tsum / t[i];
		assert_int_equal(hb_cannikin_ctl_split(&c, B, local, &err), 0);
		assert_int_equal(sum_of(local, 3), B);
		for (int i = 0; i < 3; i++) {
			double eq8 = tsum / t[i] / norm * (double)B;

			inv[i] = eq8;
			sinv += eq8;
			assert_true(fabs((double)local[i] - eq8) <= 1.0);
		}
		assert_true(local[0] > local[1] && local[1] > local[2]);
	}
	measure_truth(&c, local);

	/* Epoch 3: two distinct batches per GPU, so the fitted lines are the
	 * truth's, and the split is OptPerf's on the truth. */
	assert_int_equal(hb_cannikin_ctl_phase(&c), HB_CANNIKIN_MODEL);
	assert_int_equal(hb_cannikin_ctl_model(&c, fitted, &model, &err), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(fabs(fitted[i].fwd_per_sample_s - truth_nodes[i].fwd_per_sample_s) < 1e-12);
		assert_true(fabs(fitted[i].fwd_fixed_s - truth_nodes[i].fwd_fixed_s) < 1e-12);
		assert_true(fabs(fitted[i].bwd_per_sample_s - truth_nodes[i].bwd_per_sample_s) < 1e-12);
		assert_true(fabs(fitted[i].bwd_fixed_s - truth_nodes[i].bwd_fixed_s) < 1e-12);
		assert_int_equal(fitted[i].max_batch, 400);
	}
	assert_true(fabs(model.gamma - truth.gamma) < 1e-15);
	assert_true(fabs(model.overlap_comm_s - truth.overlap_comm_s) < 1e-15);
	assert_true(fabs(model.last_comm_s - truth.last_comm_s) < 1e-15);
	assert_int_equal(hb_cannikin_ctl_split(&c, B, local, &err), 0);
	assert_int_equal(hb_optperf_solve(&truth, B, real, &sol, &err), 0);
	assert_int_equal(hb_optperf_round(&truth, B, real, want, NULL, &err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(local[i], want[i]);
	/* ... which differs from Eq. 8's (fixed costs and overlap matter). */
	assert_true(fabs((double)want[2] - inv[2]) >= 1.0 || fabs((double)want[0] - inv[0]) >= 1.0);
	(void)sinv;
	hb_cannikin_ctl_free(&c);
}

/* Identical GPUs: Eq. 8 repeats the even split, the node has one distinct
 * batch, its line goes through the origin, and the split stays even. */
static void test_ctl_one_distinct_batch(void **state)
{
	struct hb_optperf_node same[2] = { truth_nodes[0], truth_nodes[0] };
	struct hb_optperf_cluster cl = { 2, same, 0.3, 0.004, 0.002 };
	struct hb_cannikin_comm_obs comm = { .gamma = 0.3, .overlap_s = 0.004, .last_s = 0.002 };
	struct hb_cannikin_ctl c;
	struct hb_error err = { 0 };
	struct hb_optperf_node fitted[2];
	struct hb_optperf_cluster model;
	long local[2];
	double a[2], p[2];

	(void)state;
	assert_int_equal(hb_cannikin_ctl_init(&c, &cl, &err), 0);
	for (int e = 0; e < 2; e++) {
		assert_int_equal(hb_cannikin_ctl_split(&c, 100, local, &err), 0);
		assert_int_equal(local[0], 50);
		assert_int_equal(local[1], 50);
		for (int i = 0; i < 2; i++) {
			a[i] = same[i].fwd_per_sample_s * 50 + same[i].fwd_fixed_s;
			p[i] = same[i].bwd_per_sample_s * 50 + same[i].bwd_fixed_s;
		}
		assert_int_equal(hb_cannikin_ctl_observe(&c, local, a, p, &comm, 1, &err), 0);
	}
	assert_int_equal(hb_cannikin_ctl_model(&c, fitted, &model, &err), 0);
	assert_true(fitted[0].fwd_fixed_s == 0.0);
	assert_true(fabs(fitted[0].fwd_per_sample_s * 50 - a[0]) < 1e-15);
	assert_int_equal(hb_cannikin_ctl_split(&c, 100, local, &err), 0);
	assert_int_equal(local[0], 50);
	hb_cannikin_ctl_free(&c);
}

/* Epoch 2's model (hb_cannikin_ctl_prop_model): none before an epoch; after
 * epoch 1 each node's lines through the origin at what it measured, the
 * communication as observed, and Eq. 8's split is its min-max split at any
 * total, not only the epoch's own (B changes for epoch 2). */
static void test_ctl_prop_model(void **state)
{
	struct hb_cannikin_ctl c;
	struct hb_error err = { 0 };
	struct hb_optperf_node pn[3];
	struct hb_optperf_cluster prop;
	long local[3], want[3];
	double real[3];
	struct hb_optperf_solution sol;

	(void)state;
	assert_int_equal(hb_cannikin_ctl_init(&c, &truth, &err), 0);
	assert_int_equal(hb_cannikin_ctl_prop_model(&c, pn, &prop, &err), -1);
	assert_non_null(strstr(err.msg, "no epoch measured"));
	assert_int_equal(hb_cannikin_ctl_split(&c, 90, local, &err), 0);
	measure_truth(&c, local);
	assert_int_equal(hb_cannikin_ctl_prop_model(&c, pn, &prop, &err), 0);
	for (int i = 0; i < 3; i++) {
		const struct hb_optperf_node *t = &truth_nodes[i];

		assert_true(fabs(pn[i].fwd_per_sample_s - (t->fwd_per_sample_s + t->fwd_fixed_s / 30)) < 1e-15);
		assert_true(fabs(pn[i].bwd_per_sample_s - (t->bwd_per_sample_s + t->bwd_fixed_s / 30)) < 1e-15);
		assert_true(pn[i].fwd_fixed_s == 0 && pn[i].bwd_fixed_s == 0);
		assert_int_equal(pn[i].max_batch, 400);
	}
	assert_true(prop.gamma == truth.gamma && prop.overlap_comm_s == truth.overlap_comm_s &&
		    prop.last_comm_s == truth.last_comm_s);
	for (long total = 90; total <= 900; total += 270) {
		struct hb_optperf_node only[3];
		struct hb_optperf_cluster compute = { 3, only, 0, 0, 0 };

		/* The min-max split of compute alone (no communication) is Eq. 8's. */
		for (int i = 0; i < 3; i++) {
			only[i] = pn[i];
			only[i].fwd_per_sample_s += only[i].bwd_per_sample_s;
			only[i].bwd_per_sample_s = 0;
		}
		assert_int_equal(hb_cannikin_ctl_split(&c, total, local, &err), 0);
		assert_int_equal(hb_optperf_solve(&compute, total, real, &sol, &err), 0);
		assert_int_equal(hb_optperf_round(&compute, total, real, want, NULL, &err), 0);
		/* (the same real split; its rounding may break a tie otherwise) */
		assert_int_equal(sum_of(local, 3), total);
		for (int i = 0; i < 3; i++)
			assert_true(labs(local[i] - want[i]) <= 1);
	}
	hb_cannikin_ctl_free(&c);
}

static void test_ivw(void **state)
{
	struct hb_ivw w = { 0 };

	(void)state;
	assert_true(hb_ivw_mean(&w) == 0.0);
	hb_ivw_add(&w, 10.0, 1.0);
	hb_ivw_add(&w, 20.0, 4.0);
	/* (10/1 + 20/4) / (1 + 1/4) = 12 */
	assert_true(fabs(hb_ivw_mean(&w) - 12.0) < 1e-12);
	/* An exact observation overrides the noisy ones. */
	hb_ivw_add(&w, 30.0, 0.0);
	assert_true(hb_ivw_mean(&w) == 30.0);
}

static void test_ctl_bad_input(void **state)
{
	struct hb_cannikin_ctl c;
	struct hb_cannikin_comm_obs comm = { .gamma = 1.5 };
	struct hb_error err = { 0 };
	struct hb_optperf_node fitted[3];
	struct hb_optperf_cluster model;
	long local[3] = { 10, 0, 10 };
	double a[3] = { 1e-3, 1e-3, 1e-3 }, p[3] = { 1e-3, 1e-3, 1e-3 };

	(void)state;
	assert_int_equal(hb_cannikin_ctl_init(&c, &truth, &err), 0);
	assert_int_equal(hb_cannikin_ctl_observe(&c, local, a, p, &comm, 1, &err), -1);
	assert_non_null(strstr(err.msg, "node 1"));
	local[1] = 10;
	assert_int_equal(hb_cannikin_ctl_observe(&c, local, a, p, &comm, 1, &err), -1);
	assert_non_null(strstr(err.msg, "gamma 1.5"));
	assert_int_equal(hb_cannikin_ctl_model(&c, fitted, &model, &err), -1);
	assert_non_null(strstr(err.msg, "0 epoch"));
	hb_cannikin_ctl_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lbbsp_hand),
		cmocka_unit_test(test_lbbsp_vs_bruteforce),
		cmocka_unit_test(test_lbbsp_ignores_overlap),
		cmocka_unit_test(test_lbbsp_bad_input),
		cmocka_unit_test(test_ctl_epochs),
		cmocka_unit_test(test_ctl_one_distinct_batch),
		cmocka_unit_test(test_ctl_prop_model),
		cmocka_unit_test(test_ivw),
		cmocka_unit_test(test_ctl_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
