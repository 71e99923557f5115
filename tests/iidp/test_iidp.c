/* Unit tests for solver/iidp: the fast parametric search and the reference
 * DP against exhaustive enumeration, fast = DP on large M, the notes §2.4
 * answer at B_G = 128, M rounding and the run-time parity rule, infeasible
 * cases, formatting and the caches. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale.h" /* the epoch bound and the ranking built on the shape bounds */
#include "iidp.h"
#include "perfmodel.h"
#include "quickstart_fixture.h"
#include "rng.h"

#define MAXP 8
#define MAXCAP 10

/* ---- random pair tables ------------------------------------------------ */

struct inst {
	int N, M;
	struct hb_perf_coef coef[MAXP][MAXCAP];
	struct hb_iidp_pair pairs[MAXP];
};

static double unif(struct hb_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * hb_rng_uniform(r);
}

/* Profiles shaped like the model: a step that grows sub-linearly in n
 * (multi-stream gain), overheads growing with n.  ties = 1 quantises times
 * to 10 ms so that many assignments tie; wild = 1 draws base and step per n
 * freely (still t non-decreasing in n_GA, the one property the solver uses). */
static void gen(struct hb_rng *r, struct inst *in, int N, int M, int maxcap, int ties, int wild)
{
	in->N = N;
	in->M = M;
	for (int k = 0; k < N; k++) {
		int cap = 1 + (int)hb_rng_below(r, (uint64_t)maxcap);
		double s1 = unif(r, 0.05, 0.3), gain = unif(r, 0.0, 0.4), over = unif(r, 0.0, 0.05);
		double per = unif(r, 0.0, 0.01);

		if (k > 0 && hb_rng_below(r, 3) == 0) { /* an identical pair (same node) */
			in->pairs[k] = in->pairs[k - 1];
			continue;
		}
		for (int n = 1; n <= cap; n++) {
			struct hb_perf_coef *c = &in->coef[k][n - 1];
			if (wild) {
				c->step_s = unif(r, 0.01, 0.5);
				c->base_s = unif(r, 0.01, 0.8);
			} else {
				c->step_s = n * s1 / (1.0 + gain * log((double)n));
				c->base_s = c->step_s + over + per * n;
			}
			if (ties) {
				c->step_s = round(c->step_s * 100) / 100 + 0.01;
				c->base_s = round(c->base_s * 100) / 100;
			}
		}
		in->pairs[k].cap = cap;
		in->pairs[k].coef = in->coef[k];
	}
}

static void enum_rec(const struct inst *in, int k, int rem, double cur, double *best)
{
	if (cur >= *best)
		return;
	if (k == in->N) {
		if (rem == 0)
			*best = cur;
		return;
	}
	for (int n = 1; n <= in->pairs[k].cap; n++) {
		for (int ga = 0;; ga++) {
			int w = n * (ga + 1);
			double t;
			if (w > rem - (in->N - k - 1))
				break;
			t = hb_perf_iter_s(&in->pairs[k].coef[n - 1], ga);
			enum_rec(in, k + 1, rem - w, t > cur ? t : cur, best);
		}
	}
}

/* Exhaustive enumeration of every per-pair (n_vsw, n_GA) with sum M. */
static double enumerate(const struct inst *in)
{
	double best = INFINITY;

	enum_rec(in, 0, in->M, -INFINITY, &best);
	return best;
}

/* The assignment is valid and its slowest pair takes exactly T. */
static void check_assignment(const struct inst *in, const int *w, double T)
{
	int sum = 0;
	double worst = -INFINITY;

	for (int k = 0; k < in->N; k++) {
		int n, ga;
		double t;
		assert_true(w[k] >= 1);
		assert_true(hb_iidp_pair_best(&in->pairs[k], w[k], in->pairs[k].cap, &n, &ga, &t));
		assert_true(n >= 1 && n <= in->pairs[k].cap);
		assert_int_equal(n * (ga + 1), w[k]);
		assert_true(t <= T);
		if (t > worst)
			worst = t;
		sum += w[k];
	}
	assert_int_equal(sum, in->M);
	assert_true(worst == T);
}

/* >= 200 random small instances: enumeration = DP = fast, and the DP and
 * the fast path pick the same assignment (same tie-breaking). */
static void test_exact_vs_enumeration(void **state)
{
	struct hb_rng r;
	struct hb_iidp_scratch sc = { 0 };
	struct hb_error err = { 0 };
	int count = 0;

	(void)state;
	hb_rng_seed(&r, 7, HB_STREAM_DEFAULT);
	for (int it = 0; it < 400; it++) {
		struct inst in;
		int N = 1 + (int)hb_rng_below(&r, 4), M = N + (int)hb_rng_below(&r, (uint64_t)(13 - N));
		int wf[MAXP], wd[MAXP];
		double tf, td, te;

		gen(&r, &in, N, M, it % 3 == 0 ? 10 : 5, it % 4 == 1, it % 5 == 2);
		te = enumerate(&in);
		assert_int_equal(hb_iidp_minmax_fast(in.pairs, N, M, &sc, &tf, wf, &err), 0);
		assert_int_equal(hb_iidp_minmax_dp(in.pairs, N, M, it % 2 ? &sc : NULL, &td, wd, &err), 0);
		if (!(tf == te && td == te)) {
			print_error("instance %d (N %d, M %d): enumeration %.9f, DP %.9f, fast %.9f\n", it, N, M, te, td,
				    tf);
			fail();
		}
		assert_memory_equal(wf, wd, (size_t)N * sizeof(int));
		check_assignment(&in, wf, tf);
		count++;
	}
	assert_true(count >= 200);
	hb_iidp_scratch_free(&sc);
}

/* >= 200 instances up to N_H = 8 and M = 400, plus a few at M ~ 2,600:
 * fast = the O(N_H M^2) DP exactly, assignments included. */
static void test_fast_vs_dp_large(void **state)
{
	struct hb_rng r;
	struct hb_iidp_scratch sc = { 0 };
	struct hb_error err = { 0 };

	(void)state;
	hb_rng_seed(&r, 11, HB_STREAM_DEFAULT);
	for (int it = 0; it < 210; it++) {
		struct inst in;
		int big = it >= 204;
		int N = 1 + (int)hb_rng_below(&r, big ? 4 : 8);
		int M = big ? 1500 + (int)hb_rng_below(&r, 1100) : N + (int)hb_rng_below(&r, 400);
		int wf[MAXP], wd[MAXP];
		double tf, td;

		gen(&r, &in, N, M, 10, it % 4 == 1, it % 5 == 2);
		assert_int_equal(hb_iidp_minmax_fast(in.pairs, N, M, &sc, &tf, wf, &err), 0);
		assert_int_equal(hb_iidp_minmax_dp(in.pairs, N, M, &sc, &td, wd, &err), 0);
		if (tf != td) {
			print_error("instance %d (N %d, M %d): DP %.9f, fast %.9f\n", it, N, M, td, tf);
			fail();
		}
		assert_memory_equal(wf, wd, (size_t)N * sizeof(int));
		check_assignment(&in, wf, tf);
	}
	hb_iidp_scratch_free(&sc);
}

/* A prime worker count can only use one VSW: best_t is not monotone in w,
 * so "most workers within T" greedy would fail; the exact search must not. */
static void test_non_monotone_best_t(void **state)
{
	/* One pair type: n = 1 is slow per worker, n = 4 is very efficient. */
	struct hb_perf_coef c[4] = { { 1.0, 1.0 }, { 1.2, 1.1 }, { 1.3, 1.2 }, { 1.4, 1.3 } };
	struct hb_iidp_pair pr[2] = { { 4, c }, { 4, c } };
	struct hb_error err = { 0 };
	int w[2];
	double t, td;

	(void)state;
	/* M = 8: (4, 4) with n = 4 each gives 1.4; any split using 3, 5 or 7
	 * workers needs n = 1 or 3 GA-heavy configurations. */
	assert_int_equal(hb_iidp_minmax_fast(pr, 2, 8, NULL, &t, w, &err), 0);
	assert_int_equal(hb_iidp_minmax_dp(pr, 2, 8, NULL, &td, w, &err), 0);
	assert_true(t == td);
	assert_true(t == 1.4);
	assert_int_equal(w[0], 4);
	assert_int_equal(w[1], 4);
	/* M = 9: one pair must take an odd count: (4, 5)? 5 = n 1 x 5 -> 5.0;
	 * (6, 3): 6 = n 3 x 2 -> 2.5, 3 = n 3 -> 1.3; so 2.5, or (8, 1): 8 = n 4 x 2
	 * -> 2.7, 1 -> 1.0; best (6, 3) or (3, 6) at 2.5. */
	assert_int_equal(hb_iidp_minmax_fast(pr, 2, 9, NULL, &t, w, &err), 0);
	assert_true(fabs(t - 2.5) < 1e-12);
	assert_int_equal(w[0] + w[1], 9);
	assert_int_equal(w[1], 6); /* the last pair takes the largest count */
}

/* A worker count served equally fast by several (n_vsw, n_GA): the one with
 * more VSWs (fewer GA steps) is chosen; beyond cap it is not offered. */
static void test_pair_best_ties(void **state)
{
	/* t(1, 3) = 0.5 + 3 x 0.5 = 2.0 = t(2, 1) = 1.0 + 1.0 = t(4, 0) = 2.0. */
	struct hb_perf_coef c[4] = { { 0.5, 0.5 }, { 1.0, 1.0 }, { 3.0, 1.0 }, { 2.0, 2.0 } };
	struct hb_iidp_pair pr = { 4, c };
	int n, ga;
	double t;

	(void)state;
	assert_true(hb_iidp_pair_best(&pr, 4, 4, &n, &ga, &t));
	assert_int_equal(n, 4);
	assert_int_equal(ga, 0);
	assert_true(t == 2.0);
	assert_true(hb_iidp_pair_best(&pr, 4, 2, &n, &ga, &t));
	assert_int_equal(n, 2);
	assert_int_equal(ga, 1);
	/* 3 workers: n = 1 (x3) at 1.5 beats n = 3 at 3.0. */
	assert_true(hb_iidp_pair_best(&pr, 3, 4, &n, &ga, &t));
	assert_int_equal(n, 1);
	assert_int_equal(ga, 2);
	assert_false(hb_iidp_pair_best(&pr, 0, 4, &n, &ga, &t));
}

static void test_core_errors(void **state)
{
	struct hb_perf_coef c[1] = { { 1.0, 1.0 } };
	struct hb_iidp_pair pr[3] = { { 1, c }, { 1, c }, { 1, c } };
	struct hb_error err = { 0 };
	int w[3];
	double t;

	(void)state;
	assert_int_equal(hb_iidp_minmax_fast(pr, 3, 2, NULL, &t, w, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "N_H = 3"));
	assert_int_equal(hb_iidp_minmax_dp(pr, 3, 2, NULL, &t, w, &err), -1);
	/* t must be non-decreasing in n_GA. */
	{
		struct hb_perf_coef bad[1] = { { 1.0, -0.5 } };
		struct hb_iidp_pair pb[1] = { { 1, bad } };
		assert_int_equal(hb_iidp_minmax_fast(pb, 1, 2, NULL, &t, w, &err), -1);
		assert_non_null(strstr(err.msg, "invalid"));
	}
	/* M = N_H: one worker each. */
	assert_int_equal(hb_iidp_minmax_fast(pr, 3, 3, NULL, &t, w, &err), 0);
	assert_true(t == 1.0);
}

/* ---- the quick-start profile ------------------------------------------- */

static int setup(void **state)
{
	static struct hb_perf p;
	struct hb_error err = { 0 };

	if (qs_build(&p, HB_SYNC_AUTO, &err) != 0) {
		print_error("fixture: %s\n", err.msg);
		return -1;
	}
	*state = &p;
	return 0;
}

static int teardown(void **state)
{
	hb_perf_free(*state);
	return 0;
}

static void solve_best(struct hb_iidp_solver *s, int unit, long gbs, struct hb_iidp_result *best, int *best_alloc)
{
	struct hb_error err = { 0 };

	memset(best, 0, sizeof(*best));
	for (int a = 0; a <= 4; a += unit) {
		for (int b = 0; b <= 4; b += unit) {
			int alloc[2] = { a, b };
			struct hb_iidp_request req = { alloc, gbs, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
			struct hb_iidp_result r;
			if (a + b == 0)
				continue;
			assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
			if (r.found && r.throughput > best->throughput) {
				hb_iidp_result_free(best);
				*best = r;
				best_alloc[0] = a;
				best_alloc[1] = b;
			} else {
				hb_iidp_result_free(&r);
			}
		}
	}
}

/* notes §2.4 / artifact E1: at B_G = 128 the V100 node alone, B_L 32,
 * VSW 1, GA 0, OWS, about 1130 samples/s; with 2- or 4-GPU units. */
static void test_worked_example(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s;
	struct hb_iidp_result best;
	struct hb_error err = { 0 };
	int alloc[2];
	char line[512];

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	for (int unit = 2; unit <= 4; unit += 2) {
		solve_best(s, unit, 128, &best, alloc);
		assert_true(best.found);
		assert_int_equal(alloc[0], 4);
		assert_int_equal(alloc[1], 0);
		assert_int_equal(best.local_bs, 32);
		assert_int_equal(best.global_bs, 128);
		assert_int_equal(best.m, 2);
		assert_int_equal(best.npairs, 2);
		for (int k = 0; k < 2; k++) {
			assert_int_equal(best.pairs[k].node, QS_V100);
			assert_int_equal(best.pairs[k].n_vsw, 1);
			assert_int_equal(best.pairs[k].n_ga, 0);
		}
		assert_int_equal(best.sync, HB_SYNC_OWS);
		assert_true(fabs(best.throughput - 1130) < 1130 * 0.01);
		assert_int_equal(hb_iidp_format_line(p, &best, line, sizeof(line)), 0);
		assert_string_equal(line,
				    "GBS: 128 | LBS: 32 | weight sync method: overlap | config: ['node0:4GPU,VSW:1,GA:0']");
		hb_iidp_result_free(&best);
	}
	hb_iidp_solver_free(s);
}

/* Two pairs of one node may differ; the per-node summary lists both. */
static void test_pairs_differ_and_format(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s;
	struct hb_iidp_result r;
	struct hb_error err = { 0 };
	int alloc[2] = { 4, 0 };
	char buf[256];

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	assert_int_equal(hb_iidp_solve_m(s, alloc, 32, 3, HB_IIDP_FAST, &r, &err), 0);
	assert_true(r.found);
	assert_int_equal(r.global_bs, 192);
	/* w = (1, 2): the last pair takes the larger share; 2 workers are
	 * faster as 2 VSWs (0.207 s) than as 1 VSW + 1 GA step (0.216 s). */
	assert_int_equal(r.pairs[0].workers, 1);
	assert_int_equal(r.pairs[1].workers, 2);
	assert_int_equal(r.pairs[1].n_vsw, 2);
	assert_int_equal(r.pairs[1].n_ga, 0);
	assert_true(r.iter_s == r.pairs[1].iter_s);
	assert_int_equal(hb_iidp_format_config(p, &r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "['node0:2GPU,VSW:1,GA:0', 'node0:2GPU,VSW:2,GA:0']");
	/* A too small buffer is refused, not overrun. */
	assert_int_equal(hb_iidp_format_config(p, &r, buf, 10), -1);
	hb_iidp_result_free(&r);

	/* Both nodes, B_L 32, M = 9: 4 pairs; check against the DP path. */
	{
		int both[2] = { 4, 4 };
		struct hb_iidp_result d;
		assert_int_equal(hb_iidp_solve_m(s, both, 32, 9, HB_IIDP_FAST, &r, &err), 0);
		assert_int_equal(hb_iidp_solve_m(s, both, 32, 9, HB_IIDP_DP, &d, &err), 0);
		assert_true(r.iter_s == d.iter_s);
		for (int k = 0; k < 4; k++) {
			assert_int_equal(r.pairs[k].n_vsw, d.pairs[k].n_vsw);
			assert_int_equal(r.pairs[k].n_ga, d.pairs[k].n_ga);
		}
		hb_iidp_result_free(&r);
		hb_iidp_result_free(&d);
	}
	hb_iidp_solver_free(s);
}

/* Algorithm 1's M = round(B_G / B_L / 2), ties to even. */
static void test_round_m(void **state)
{
	(void)state;
	assert_int_equal(hb_iidp_round_m(128, 32), 2);
	assert_int_equal(hb_iidp_round_m(96, 64), 1);   /* 0.75 */
	assert_int_equal(hb_iidp_round_m(160, 64), 1);  /* 1.25 */
	assert_int_equal(hb_iidp_round_m(192, 64), 2);  /* 1.5 -> 2 */
	assert_int_equal(hb_iidp_round_m(320, 64), 2);  /* 2.5 -> 2 */
	assert_int_equal(hb_iidp_round_m(448, 64), 4);  /* 3.5 -> 4 */
	assert_int_equal(hb_iidp_round_m(0, 64), 0);
}

/* §4.1 run-time rule [C solve_placement]. */
static void test_runtime_rule(void **state)
{
	(void)state;
	/* Increase 256 -> 282 at B_L 32: round(8.81) = 9 -> 10 (even), 320 > 256. */
	assert_int_equal(hb_iidp_runtime_workers(256, 282, 32, 4), 10);
	/* 256 -> 270: round(8.44) = 8, 256 is not above 256: skipped. */
	assert_int_equal(hb_iidp_runtime_workers(256, 270, 32, 4), 0);
	/* Decrease 256 -> 230: round(7.19) = 7 -> 6, 192 < 256. */
	assert_int_equal(hb_iidp_runtime_workers(256, 230, 32, 4), 6);
	/* 256 -> 250: round(7.81) = 8, 256 is not below 256: skipped. */
	assert_int_equal(hb_iidp_runtime_workers(256, 250, 32, 4), 0);
	/* Equal target takes the decrease branch and is skipped at B_L 32. */
	assert_int_equal(hb_iidp_runtime_workers(256, 256, 32, 4), 0);
	/* Too few workers for the GPUs. */
	assert_int_equal(hb_iidp_runtime_workers(128, 154, 96, 4), 0);
	/* Ties to even: 80 / 32 = 2.5 -> 2, then 64 < 100. */
	assert_int_equal(hb_iidp_runtime_workers(100, 80, 32, 2), 2);
	/* 112 / 32 = 3.5 -> 4 (even), increase from 100: 128 > 100. */
	assert_int_equal(hb_iidp_runtime_workers(100, 112, 32, 2), 4);
}

static void test_runtime_solve(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s;
	struct hb_iidp_result r;
	struct hb_error err = { 0 };
	int alloc[2] = { 4, 0 };
	struct hb_iidp_request req = { alloc, 154, HB_IIDP_M_RUNTIME, 128, 0, HB_IIDP_FAST };

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	/* 128 -> 154 on the V100 node: only B_L 32 passes (n_w 6 -> M 3). */
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
	assert_true(r.found);
	assert_int_equal(r.local_bs, 32);
	assert_int_equal(r.m, 3);
	assert_int_equal(r.global_bs, 192);
	hb_iidp_result_free(&r);
	/* 128 -> 141: every B_L is skipped (no even count moves B_G up with 4 GPUs). */
	req.global_bs = 141;
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
	assert_false(r.found);
	assert_non_null(strstr(r.why, "run-time rule"));
	/* 256 -> 230: B_L 32, n_w 6. */
	req.cur_global_bs = 256;
	req.global_bs = 230;
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
	assert_true(r.found);
	assert_int_equal(r.global_bs, 192);
	hb_iidp_result_free(&r);
	/* The run-time rule needs the current B_G. */
	req.cur_global_bs = 0;
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), -1);
	hb_iidp_solver_free(s);
}

static void test_infeasible(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s;
	struct hb_iidp_result r;
	struct hb_error err = { 0 };
	int both[2] = { 4, 4 }, odd[2] = { 3, 0 };
	struct hb_iidp_request req = { both, 128, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	/* 8 GPUs at B_G 128: M = 2 < N_H = 4 already at the smallest B_L. */
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
	assert_false(r.found);
	assert_non_null(strstr(r.why, "N_H = 4"));
	assert_non_null(strstr(r.why, "256"));
	/* B_L above the V100's maxB_L. */
	req.global_bs = 4096;
	req.local_bs = 160;
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
	assert_false(r.found);
	assert_non_null(strstr(r.why, "exceeds maxB_L 128"));
	assert_int_equal(hb_iidp_solve_m(s, both, 160, 8, HB_IIDP_FAST, &r, &err), 0);
	assert_false(r.found);
	/* M < N_H at a fixed B_L. */
	assert_int_equal(hb_iidp_solve_m(s, both, 32, 3, HB_IIDP_FAST, &r, &err), 0);
	assert_false(r.found);
	assert_non_null(strstr(r.why, "N_H = 4"));
	/* Invalid input is an error, not "none". */
	req.local_bs = 48;
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	req.local_bs = 0;
	req.alloc = odd;
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), -1);
	assert_non_null(strstr(err.msg, "even"));
	req.alloc = both;
	req.global_bs = 0;
	assert_int_equal(hb_iidp_solve(s, &req, &r, &err), -1);
	hb_iidp_solver_free(s);
}

/* The fixed-B_L and searched paths agree; larger B_G uses larger B_L when
 * it pays, and the solver answer matches an independent enumeration over
 * (B_L, assignment) using hb_perf_iter_time. */
static void enum_alloc_rec(const struct hb_perf *p, const int *alloc, const int *pn, int np, int k, int rem, int lbs,
			   double cur, double *best)
{
	struct hb_error err = { 0 };

	if (cur >= *best)
		return;
	if (k == np) {
		if (rem == 0)
			*best = cur;
		return;
	}
	for (int n = 1; n <= hb_perf_find_lbs(p, p->nodes[pn[k]].gpu, lbs)->n_cap; n++) {
		for (int ga = 0; n * (ga + 1) <= rem - (np - k - 1); ga++) {
			double t;
			assert_int_equal(hb_perf_iter_time(p, alloc, pn[k], lbs, n, ga, &t, &err), 0);
			enum_alloc_rec(p, alloc, pn, np, k + 1, rem - n * (ga + 1), lbs, t > cur ? t : cur, best);
		}
	}
}

/* The brute force both solver tests hold the solver to: over every B_L of
 * the allocation, M from the rule (HB_IIDP_M_ROUND: Algorithm 1's rounding;
 * HB_IIDP_M_EXACT: only B_L with 2 M B_L = B_G), every assignment of the M
 * VSWs; the best throughput (-1: none) and its B_L. */
static void brute_best(const struct hb_perf *p, const int *alloc, const int *pn, int np, long gbs, int rule,
		       double *bestf, int *bestl)
{
	struct hb_error err = { 0 };
	int *lbs, nl;

	*bestf = -1;
	*bestl = 0;
	assert_int_equal(hb_perf_alloc_lbs(p, alloc, &lbs, &nl, &err), 0);
	for (int i = 0; i < nl; i++) {
		long M = rule == HB_IIDP_M_EXACT ? gbs / (2L * lbs[i]) : hb_iidp_round_m(gbs, lbs[i]);
		double t = INFINITY, f;

		if ((rule == HB_IIDP_M_EXACT && gbs % (2L * lbs[i]) != 0) || M < np)
			continue;
		enum_alloc_rec(p, alloc, pn, np, 0, (int)M, lbs[i], -INFINITY, &t);
		f = 2.0 * (double)M * lbs[i] / t;
		if (f > *bestf) {
			*bestf = f;
			*bestl = lbs[i];
		}
	}
	free(lbs);
}

static void test_solver_vs_enumeration(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s;
	struct hb_error err = { 0 };
	static const long gbs[] = { 128, 192, 256, 320, 384, 512, 640, 768 };

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	for (int a = 0; a <= 4; a += 2) {
		for (int b = 0; b <= 4; b += 2) {
			int alloc[2] = { a, b }, pn[4], np = 0;
			if (a + b == 0)
				continue;
			for (int i = 0; i < a / 2; i++)
				pn[np++] = 0;
			for (int i = 0; i < b / 2; i++)
				pn[np++] = 1;
			for (unsigned g = 0; g < sizeof(gbs) / sizeof(gbs[0]); g++) {
				struct hb_iidp_request req = { alloc, gbs[g], HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
				struct hb_iidp_result r;
				double bestf;
				int bestl;

				assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
				brute_best(p, alloc, pn, np, gbs[g], HB_IIDP_M_ROUND, &bestf, &bestl);
				assert_int_equal(r.found, bestf > 0);
				if (r.found) {
					assert_int_equal(r.local_bs, bestl);
					assert_true(fabs(r.throughput - bestf) <= 1e-9 * bestf);
				}
				hb_iidp_result_free(&r);
			}
		}
	}
	hb_iidp_solver_free(s);
}

/* The initial phase's exact rule (iidp.h HB_IIDP_M_EXACT, the artifact's
 * configuration_solver.py main: B_L n_w must equal B_G, n_w even, else the
 * B_L is skipped) against an enumeration of the B_L that divide B_G and
 * their assignments: the same best throughput and B_L, and the answer runs
 * B_G itself.  Where no B_L divides, none, with the rule named; Algorithm 1
 * rounds the same B_G and finds one, so the shape cache keeps the two
 * rules apart. */
static void test_exact_rule_vs_enumeration(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s;
	struct hb_error err = { 0 };
	static const long gbs[] = { 128, 160, 192, 256, 288, 320, 384, 448, 512, 640, 768, 1000 };
	int found = 0, none = 0;

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	for (int a = 0; a <= 4; a += 2) {
		for (int b = 0; b <= 4; b += 2) {
			int alloc[2] = { a, b }, pn[4], np = 0;
			if (a + b == 0)
				continue;
			for (int i = 0; i < a / 2; i++)
				pn[np++] = 0;
			for (int i = 0; i < b / 2; i++)
				pn[np++] = 1;
			for (unsigned g = 0; g < sizeof(gbs) / sizeof(gbs[0]); g++) {
				struct hb_iidp_request req = { alloc, gbs[g], HB_IIDP_M_EXACT, 0, 0, HB_IIDP_FAST };
				struct hb_iidp_result r;
				double bestf;
				int bestl;

				assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
				brute_best(p, alloc, pn, np, gbs[g], HB_IIDP_M_EXACT, &bestf, &bestl);
				assert_int_equal(r.found, bestf > 0);
				if (r.found) {
					assert_int_equal(r.global_bs, gbs[g]);
					assert_int_equal(r.local_bs, bestl);
					assert_true(fabs(r.throughput - bestf) <= 1e-9 * bestf);
					found++;
				} else {
					/* not 2 M B_L at any B_L, or M < N_H where it is */
					assert_true(strstr(r.why, "exact rule") || strstr(r.why, "N_H"));
					none += strstr(r.why, "exact rule") != NULL;
				}
				hb_iidp_result_free(&r);
			}
		}
	}
	assert_true(found >= 20 && none >= 5);
	{
		/* B_G 160 on the V100 node: no B_L of 32..128 gives 160 = 2 M B_L;
		 * Algorithm 1 rounds it (B_L 32, M = round(2.5) = 2: 128), and a
		 * summary of each rule on one shape answers as its solve. */
		int v100[2] = { 4, 0 };
		struct hb_iidp_request ex = { v100, 160, HB_IIDP_M_EXACT, 0, 0, HB_IIDP_FAST };
		struct hb_iidp_request al = { v100, 160, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
		struct hb_iidp_shape sh = { 0 };
		struct hb_iidp_summary sa, se;

		assert_int_equal(hb_iidp_shape_of(s, v100, &sh, &err), 0);
		for (int rep = 0; rep < 2; rep++) { /* a miss, then a hit */
			assert_int_equal(hb_iidp_solve_summary(s, &sh, &al, &sa, &err), 0);
			assert_int_equal(hb_iidp_solve_summary(s, &sh, &ex, &se, &err), 0);
			assert_true(sa.found);
			assert_int_equal(sa.global_bs, 128);
			assert_false(se.found);
		}
		/* an unknown rule is an input error */
		ex.m_rule = 7;
		{
			struct hb_iidp_result r;

			assert_int_equal(hb_iidp_solve(s, &ex, &r, &err), -1);
			assert_non_null(strstr(err.msg, "rule 7"));
		}
		hb_iidp_shape_free(&sh);
	}
	hb_iidp_solver_free(s);
}

/* A random heterogeneous profile: 2-3 GPU types of different speed and
 * memory (so maxB_L differs), 2-3 nodes of 2 or 4 GPUs. */
/* want_nodes > 0: that many nodes instead of the drawn 2-3 (the draws stay
 * the same up to the nodes). */
static void random_perf_n(struct hb_rng *r, struct hb_perf *p, int want_nodes)
{
	struct hb_perf_ar intra = { 1, 1.4, 1.2, 15.75e9, "pcie3-x16" };
	struct hb_perf_ar inter = { 1, 0.7, 3.9, 12.5e9, "ib-100g" };
	struct hb_error err = { 0 };
	int ntypes = 2 + (int)hb_rng_below(r, 2), nnodes = 2 + (int)hb_rng_below(r, 2), nb = 3 + (int)hb_rng_below(r, 4);
	double bytes[6];

	if (want_nodes > 0)
		nnodes = want_nodes;
	hb_perf_init(p, "random", 8);
	for (int b = 0; b < nb; b++)
		bytes[b] = unif(r, 5, 30) * 1048576.0;
	assert_int_equal(hb_perf_set_buckets(p, bytes, nb, &err), 0);
	for (int g = 0; g < ntypes; g++) {
		char name[16];
		double speed = unif(r, 0.3, 1.0), gain = unif(r, 0.02, 0.3), memf = unif(r, 0.4, 2.0);
		int gi;

		snprintf(name, sizeof(name), "gpu%d", g);
		assert_int_equal(hb_perf_add_gpu(p, name, &gi, &err), 0);
		for (int lbs = 8; lbs <= 64; lbs += 8) {
			struct hb_perf_point pts[3];
			int n_max = (int)(48 * memf / lbs), np = 0;
			int ns[3];

			n_max = n_max > 6 ? 6 : n_max;
			ns[0] = 1;
			ns[1] = n_max > 3 ? n_max / 2 : 0;
			ns[2] = n_max;
			for (int i = 0; i < 3 && n_max > 0; i++) {
				int n = ns[i];
				double fb;
				if (n == 0 || (i == 2 && n == 1))
					continue;
				fb = n * lbs * 0.002 / speed / (1.0 + gain * log((double)n));
				pts[np].n_vsw = n;
				pts[np].fwd_s = fb / 3;
				pts[np].bwd_s = 2 * fb / 3;
				pts[np].data_s = 0.0005 * n;
				pts[np].update_s = 0.01;
				pts[np].copy_s = 0.002 * (n - 1);
				pts[np].bn_s = 0.001;
				np++;
			}
			assert_int_equal(hb_perf_add_lbs(p, gi, lbs, n_max, pts, np, &err), 0);
		}
	}
	for (int i = 0; i < nnodes; i++) {
		char name[16];
		snprintf(name, sizeof(name), "node%d", i);
		assert_int_equal(hb_perf_add_node(p, name, (int)hb_rng_below(r, (uint64_t)ntypes),
						  hb_rng_below(r, 2) ? 4 : 2, &intra, &inter, &err), 0);
	}
	assert_int_equal(hb_perf_prepare(p, &err), 0);
}

/* A random allocation of p's nodes (even counts, at least one pair). */
static void random_alloc(struct hb_rng *r, const struct hb_perf *p, int *alloc)
{
	int any = 0;

	for (int i = 0; i < p->nnodes; i++) {
		alloc[i] = hb_rng_below(r, 2) ? 2 * (int)hb_rng_below(r, (uint64_t)(p->nodes[i].ngpus / 2 + 1)) : 0;
		any += alloc[i];
	}
	if (!any)
		alloc[hb_rng_below(r, (uint64_t)p->nnodes)] = 2;
}

static void random_perf(struct hb_rng *r, struct hb_perf *p)
{
	random_perf_n(r, p, 0);
}

/* Whole requests on random profiles: the fast path (bounded, B_L visited
 * by decreasing throughput bound, memoised) = the DP path (every B_L in
 * ascending order), configuration included; both rules. */
static void test_solve_fast_vs_dp_random(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	struct hb_iidp_stats st;
	int compared = 0;
	long pruned = 0;

	(void)state;
	hb_rng_seed(&r, 23, HB_STREAM_DEFAULT);
	for (int it = 0; it < 100; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s;

		random_perf(&r, &p);
		assert_int_equal(hb_iidp_solver_new(&p, &s, &err), 0);
		for (int q = 0; q < 12; q++) {
			int alloc[3] = { 0, 0, 0 }, any = 0;
			struct hb_iidp_request req;
			struct hb_iidp_result a, b;

			for (int i = 0; i < p.nnodes; i++) {
				alloc[i] = 2 * (int)hb_rng_below(&r, (uint64_t)(p.nodes[i].ngpus / 2 + 1));
				any += alloc[i];
			}
			if (!any)
				alloc[0] = 2;
			req.alloc = alloc;
			req.global_bs = 16 + (long)hb_rng_below(&r, 3000);
			req.m_rule = q % 2 ? HB_IIDP_M_RUNTIME : HB_IIDP_M_ROUND;
			req.cur_global_bs = 16 + (long)hb_rng_below(&r, 3000);
			req.local_bs = 0;
			req.method = HB_IIDP_FAST;
			/* every fourth Algorithm 1 request exact, on a multiple of
			 * 16 so that some B_L divide it */
			if (q % 4 == 2) {
				req.m_rule = HB_IIDP_M_EXACT;
				req.global_bs = 16 * (1 + req.global_bs / 16);
			}
			assert_int_equal(hb_iidp_solve(s, &req, &a, &err), 0);
			req.method = HB_IIDP_DP;
			assert_int_equal(hb_iidp_solve(s, &req, &b, &err), 0);
			assert_int_equal(a.found, b.found);
			if (a.found) {
				assert_int_equal(a.local_bs, b.local_bs);
				assert_int_equal(a.global_bs, b.global_bs);
				assert_true(a.iter_s == b.iter_s);
				assert_true(a.throughput == b.throughput);
				assert_int_equal(a.npairs, b.npairs);
				for (int k = 0; k < a.npairs; k++) {
					assert_int_equal(a.pairs[k].n_vsw, b.pairs[k].n_vsw);
					assert_int_equal(a.pairs[k].n_ga, b.pairs[k].n_ga);
				}
				compared++;
			}
			hb_iidp_result_free(&a);
			hb_iidp_result_free(&b);
		}
		hb_iidp_solver_stats(s, &st);
		pruned += st.pruned;
		hb_iidp_solver_free(s);
		hb_perf_free(&p);
	}
	assert_true(compared >= 100);
	assert_true(pruned > 0); /* the bound did skip B_L */
}

/* The caches: the second pass is all memo hits with identical answers; a
 * zero limit disables caching; the DP path is never memoised. */
static void test_cache(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s, *nc;
	struct hb_iidp_stats st, st0;
	struct hb_error err = { 0 };
	int both[2] = { 4, 4 };
	double first[40];

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	assert_int_equal(hb_iidp_solver_new(p, &nc, &err), 0);
	hb_iidp_solver_set_cache_limit(nc, 0);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 40; i++) {
			struct hb_iidp_request req = { both, 256 + 64L * i, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
			struct hb_iidp_result r, q;
			assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
			assert_int_equal(hb_iidp_solve(nc, &req, &q, &err), 0);
			assert_true(r.found && q.found);
			assert_true(r.iter_s == q.iter_s);
			assert_int_equal(r.local_bs, q.local_bs);
			for (int k = 0; k < r.npairs; k++)
				assert_int_equal(r.pairs[k].workers, q.pairs[k].workers);
			if (pass == 0)
				first[i] = r.throughput;
			else
				assert_true(first[i] == r.throughput);
			hb_iidp_result_free(&r);
			hb_iidp_result_free(&q);
		}
		if (pass == 0) {
			hb_iidp_solver_stats(s, &st0);
			assert_true(st0.cache_bytes > 0);
			assert_true(st0.memo_misses > 0);
		}
	}
	/* Pass 1 solved nothing anew. */
	hb_iidp_solver_stats(s, &st);
	assert_int_equal(st.memo_misses, st0.memo_misses);
	assert_int_equal(st.memo_hits - st0.memo_hits, st.solves - st0.solves);
	assert_int_equal(st.table_misses, 4); /* one per B_L of this allocation */
	hb_iidp_solver_stats(nc, &st);
	assert_int_equal(st.memo_hits + st.table_hits, 0);
	assert_int_equal(st.cache_bytes, 0);
	/* Lowering the limit below the held bytes empties the cache; a tiny
	 * limit then flushes before each solve instead of growing. */
	hb_iidp_solver_set_cache_limit(s, 1);
	hb_iidp_solver_stats(s, &st);
	assert_int_equal(st.cache_bytes, 0);
	for (int i = 0; i < 3; i++) {
		struct hb_iidp_request req = { both, 512, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
		struct hb_iidp_result r;
		assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
		hb_iidp_result_free(&r);
	}
	hb_iidp_solver_stats(s, &st);
	assert_int_equal(st.flushes, 2);
	/* A limit of a few entries evicts them one at a time (no flush) and
	 * answers as the uncached solver does. */
	hb_iidp_solver_clear_cache(s);
	hb_iidp_solver_set_cache_limit(s, 6000);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 40; i++) {
			struct hb_iidp_request req = { both, 256 + 64L * i, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
			struct hb_iidp_result r, q;
			assert_int_equal(hb_iidp_solve(s, &req, &r, &err), 0);
			assert_int_equal(hb_iidp_solve(nc, &req, &q, &err), 0);
			assert_true(r.found == q.found && r.iter_s == q.iter_s && r.local_bs == q.local_bs);
			hb_iidp_result_free(&r);
			hb_iidp_result_free(&q);
		}
	}
	hb_iidp_solver_stats(s, &st);
	assert_true(st.evictions > 0);
	assert_int_equal(st.flushes, 2);
	assert_true(st.cache_bytes <= 6000 + 4096); /* the last request's entries at most above it */
	hb_iidp_solver_clear_cache(s);
	hb_iidp_solver_stats(s, &st);
	assert_int_equal(st.cache_bytes, 0);
	hb_iidp_solver_free(s);
	hb_iidp_solver_free(nc);
}

/* The memos of a table (one block per table, grown by doubling, records
 * moved by position): a few hundred M on the same allocation, three passes,
 * so that the records grow through several doublings between the bound
 * that creates a record and the answer that completes it, and are read back
 * after; the default cache, a small one (tables and their memos evicted
 * and rebuilt) and none give the same answers, pair by pair; clearing
 * returns every byte counted. */
static void test_memo_growth(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long compared = 0;

	(void)state;
	hb_rng_seed(&r, 59, HB_STREAM_DEFAULT);
	for (int it = 0; it < 6; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s, *small, *nc;
		struct hb_iidp_stats st;
		int alloc[8] = { 0 };

		random_perf_n(&r, &p, 8);
		for (int i = 0; i < p.nnodes; i++)
			alloc[i] = i % 3 == 0 ? 0 : 2 * (int)(1 + hb_rng_below(&r, (uint64_t)(p.nodes[i].ngpus / 2)));
		assert_int_equal(hb_iidp_solver_new(&p, &s, &err), 0);
		assert_int_equal(hb_iidp_solver_new(&p, &small, &err), 0);
		assert_int_equal(hb_iidp_solver_new(&p, &nc, &err), 0);
		hb_iidp_solver_set_cache_limit(small, 4000);
		hb_iidp_solver_set_cache_limit(nc, 0);
		for (int pass = 0; pass < 3; pass++) {
			for (int q = 0; q < 300; q++) {
				struct hb_iidp_request req = { 0 };
				struct hb_iidp_result a, b, c;

				req.alloc = alloc;
				/* pass 1 goes down: records are found in another order */
				req.global_bs = 32 + 16L * (pass == 1 ? 299 - q : q);
				req.m_rule = q % 3 == 2 ? HB_IIDP_M_RUNTIME : HB_IIDP_M_ROUND;
				req.cur_global_bs = req.global_bs / 2 + 8;
				req.method = HB_IIDP_FAST;
				assert_int_equal(hb_iidp_solve(s, &req, &a, &err), 0);
				assert_int_equal(hb_iidp_solve(small, &req, &b, &err), 0);
				assert_int_equal(hb_iidp_solve(nc, &req, &c, &err), 0);
				assert_int_equal(a.found, c.found);
				assert_int_equal(b.found, c.found);
				if (c.found) {
					assert_true(a.iter_s == c.iter_s && b.iter_s == c.iter_s);
					assert_int_equal(a.local_bs, c.local_bs);
					assert_int_equal(b.local_bs, c.local_bs);
					assert_int_equal(a.npairs, c.npairs);
					assert_int_equal(b.npairs, c.npairs);
					for (int k = 0; k < c.npairs; k++) {
						assert_int_equal(a.pairs[k].workers, c.pairs[k].workers);
						assert_int_equal(b.pairs[k].workers, c.pairs[k].workers);
						assert_int_equal(a.pairs[k].n_vsw, c.pairs[k].n_vsw);
						assert_int_equal(b.pairs[k].n_ga, c.pairs[k].n_ga);
					}
					compared++;
				}
				hb_iidp_result_free(&a);
				hb_iidp_result_free(&b);
				hb_iidp_result_free(&c);
			}
		}
		hb_iidp_solver_stats(s, &st);
		assert_true(st.memo_hits > 0);
		assert_int_equal(st.evictions + st.flushes, 0);
		hb_iidp_solver_stats(small, &st);
		assert_true(st.evictions + st.flushes > 0);
		for (int k = 0; k < 2; k++) {
			hb_iidp_solver_clear_cache(k ? small : s);
			hb_iidp_solver_stats(k ? small : s, &st);
			assert_int_equal(st.cache_bytes, 0);
		}
		hb_iidp_solver_free(s);
		hb_iidp_solver_free(small);
		hb_iidp_solver_free(nc);
		hb_perf_free(&p);
	}
	assert_true(compared >= 500);
}

/* 60 requests of s on alloc (budget test), batches up (even passes) or
 * down (odd), both M rules; each answer is checked against the uncached
 * solver nc. */
static void budget_pass(struct hb_iidp_solver *s, struct hb_iidp_solver *nc, const int *alloc, int pass,
			long *compared)
{
	struct hb_error err = { 0 };

	for (int q = 0; q < 60; q++) {
		struct hb_iidp_request req = { 0 };
		struct hb_iidp_result a, c;

		req.alloc = alloc;
		req.global_bs = 32 + 16L * (pass % 2 ? 59 - q : q);
		req.m_rule = q % 3 == 2 ? HB_IIDP_M_RUNTIME : HB_IIDP_M_ROUND;
		req.cur_global_bs = req.global_bs / 2 + 8;
		req.method = HB_IIDP_FAST;
		assert_int_equal(hb_iidp_solve(s, &req, &a, &err), 0);
		assert_int_equal(hb_iidp_solve(nc, &req, &c, &err), 0);
		assert_int_equal(a.found, c.found);
		if (c.found) {
			assert_true(a.iter_s == c.iter_s);
			assert_int_equal(a.local_bs, c.local_bs);
			assert_int_equal(a.npairs, c.npairs);
			for (int k = 0; k < c.npairs; k++)
				assert_int_equal(a.pairs[k].workers, c.pairs[k].workers);
			(*compared)++;
		}
		hb_iidp_result_free(&a);
		hb_iidp_result_free(&c);
	}
}

static size_t cache_bytes(const struct hb_iidp_solver *s)
{
	struct hb_iidp_stats st;

	hb_iidp_solver_stats(s, &st);
	return st.cache_bytes;
}

/* Three solvers (two models, two allocations of one) under one budget
 * (struct hb_iidp_budget): answers as uncached solvers give them; a solver
 * working alone grows past its floor towards the whole budget; one that
 * works next takes what the first does not hold, at least its floor, and
 * the first, asked again, shrinks to what the second leaves it; the
 * budget's count is every solver's holdings (0 once they are emptied), and
 * a solver taken off the budget takes its holdings out of the count. */
static void test_cache_budget(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long compared = 0;
	const size_t slack = 8192; /* one request's entries above a limit, and a report's lag */

	(void)state;
	hb_rng_seed(&r, 83, HB_STREAM_DEFAULT);
	for (int it = 0; it < 4; it++) {
		struct hb_perf p[2];
		struct hb_iidp_solver *s[3], *nc[2];
		struct hb_iidp_budget b = { .limit = 10000, .floor = 2500 };
		int alloc[3][64];
		size_t a_alone, a_after, sum;

		for (int m = 0; m < 2; m++) {
			random_perf_n(&r, &p[m], 8);
			assert_int_equal(hb_iidp_solver_new(&p[m], &nc[m], &err), 0);
			hb_iidp_solver_set_cache_limit(nc[m], 0);
		}
		for (int k = 0; k < 3; k++) {
			const struct hb_perf *pk = &p[k < 2 ? 0 : 1];

			assert_true(pk->nnodes <= 64);
			for (int i = 0; i < pk->nnodes; i++)
				alloc[k][i] = 2 * (int)(1 + hb_rng_below(&r, (uint64_t)(pk->nodes[i].ngpus / 2)));
			assert_int_equal(hb_iidp_solver_new(pk, &s[k], &err), 0);
			hb_iidp_solver_set_budget(s[k], &b);
		}
		/* s[0] alone: past its floor, within the budget. */
		for (int pass = 0; pass < 3; pass++)
			budget_pass(s[0], nc[0], alloc[0], pass, &compared);
		a_alone = cache_bytes(s[0]);
		assert_true(a_alone > 3 * b.floor); /* it wants more than the budget: it fills most of it */
		assert_true(a_alone <= b.limit + slack);
		/* s[2] (the other model) next: what s[0] leaves, at least the floor. */
		for (int pass = 0; pass < 3; pass++) {
			budget_pass(s[2], nc[1], alloc[2], pass, &compared);
			assert_true(cache_bytes(s[2]) <= (b.limit > cache_bytes(s[0]) + b.floor ? b.limit - cache_bytes(s[0]) : b.floor) + slack);
		}
		/* s[0] again: it shrinks to what s[2] leaves it. */
		budget_pass(s[0], nc[0], alloc[0], 0, &compared);
		a_after = cache_bytes(s[0]);
		assert_true(a_after <= (b.limit > cache_bytes(s[2]) + b.floor ? b.limit - cache_bytes(s[2]) : b.floor) + slack);
		assert_true(a_after < a_alone);
		/* s[1] (the first model, another allocation) among them. */
		for (int pass = 0; pass < 2; pass++) {
			budget_pass(s[1], nc[0], alloc[1], pass, &compared);
			budget_pass(s[2], nc[1], alloc[2], pass, &compared);
		}
		sum = cache_bytes(s[0]) + cache_bytes(s[1]) + cache_bytes(s[2]);
		assert_true(sum <= b.limit + 3 * slack);
		/* The count: exact once each solver has reported (emptying one
		 * reports it), and 0 when all are empty. */
		hb_iidp_solver_clear_cache(s[2]);
		hb_iidp_solver_set_budget(s[1], NULL); /* out of the budget, emptied */
		assert_int_equal(cache_bytes(s[1]), 0);
		hb_iidp_solver_clear_cache(s[0]);
		assert_int_equal(b.used, 0);
		for (int k = 0; k < 3; k++)
			hb_iidp_solver_free(s[k]);
		for (int m = 0; m < 2; m++) {
			hb_iidp_solver_free(nc[m]);
			hb_perf_free(&p[m]);
		}
	}
	assert_true(compared >= 1000);
}

/* A random request on alloc (the k-th of a series: every third one under
 * the run-time M rule). */
static struct hb_iidp_request random_request(struct hb_rng *r, const int *alloc, int k)
{
	struct hb_iidp_request req = { 0 };

	req.alloc = alloc;
	req.global_bs = 16 + (long)hb_rng_below(r, 4000);
	req.m_rule = k % 3 == 2 ? HB_IIDP_M_RUNTIME : HB_IIDP_M_ROUND;
	req.cur_global_bs = 16 + (long)hb_rng_below(r, 4000);
	req.method = HB_IIDP_FAST;
	return req;
}

/* req on its allocation, whose shape is sh: s's summary is plain's bit for
 * bit and the uncached nc's whole solve's, and s's whole solve is nc's pair
 * by pair.  Counts the found answers in *compared. */
static void check_shape_request(struct hb_iidp_solver *s, struct hb_iidp_solver *plain, struct hb_iidp_solver *nc,
				const struct hb_iidp_shape *sh, const struct hb_iidp_request *req, long *compared)
{
	struct hb_error err = { 0 };
	struct hb_iidp_result o, f;
	struct hb_iidp_summary a, c;

	assert_int_equal(hb_iidp_solve(nc, req, &o, &err), 0);
	assert_int_equal(hb_iidp_solve_summary(s, sh, req, &a, &err), 0);
	assert_int_equal(hb_iidp_solve_summary(plain, sh, req, &c, &err), 0);
	/* a whole solve of the allocation meets its shape's bounds too */
	assert_int_equal(hb_iidp_solve(s, req, &f, &err), 0);
	assert_memory_equal(&a, &c, sizeof(a));
	assert_int_equal(a.found, o.found);
	assert_int_equal(f.found, o.found);
	if (o.found) {
		assert_int_equal(a.global_bs, o.global_bs);
		assert_int_equal(a.local_bs, o.local_bs);
		assert_int_equal(a.m, o.m);
		assert_true(a.iter_s == o.iter_s);
		assert_true(a.throughput == o.throughput);
		assert_int_equal(f.local_bs, o.local_bs);
		assert_true(f.iter_s == o.iter_s);
		assert_int_equal(f.npairs, o.npairs);
		for (int j = 0; j < o.npairs; j++) {
			assert_int_equal(f.pairs[j].node, o.pairs[j].node);
			assert_int_equal(f.pairs[j].workers, o.pairs[j].workers);
			assert_int_equal(f.pairs[j].n_vsw, o.pairs[j].n_vsw);
			assert_int_equal(f.pairs[j].n_ga, o.pairs[j].n_ga);
		}
		(*compared)++;
	}
	hb_iidp_result_free(&o);
	hb_iidp_result_free(&f);
}

/* A cached solver, another that never saw the bounds (plain) and an
 * uncached one (nc), on one profile: the three ways a summary is made. */
static void solver_trio(const struct hb_perf *p, struct hb_iidp_solver **s, struct hb_iidp_solver **plain,
			struct hb_iidp_solver **nc)
{
	struct hb_error err = { 0 };

	assert_int_equal(hb_iidp_solver_new(p, s, &err), 0);
	assert_int_equal(hb_iidp_solver_new(p, plain, &err), 0);
	assert_int_equal(hb_iidp_solver_new(p, nc, &err), 0);
	hb_iidp_solver_set_cache_limit(*nc, 0);
}

static void solver_trio_free(struct hb_iidp_solver *s, struct hb_iidp_solver *plain, struct hb_iidp_solver *nc)
{
	hb_iidp_solver_free(s);
	hb_iidp_solver_free(plain);
	hb_iidp_solver_free(nc);
}

/* Held bounds (hb_iidp_shape_bound_hold): the holders of one shape share
 * one copy, equal to hb_iidp_shape_bound's own; with the cache emptied,
 * the held copy alone drives the best-first visit: the same summaries and
 * whole solves as a solver that never saw the bounds and as an uncached
 * one, with fewer table lookups; the copy goes with its last holder; a
 * held b is refused by hb_iidp_shape_bound and by a second hold. */
static void test_bound_hold(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long compared = 0, looked_h = 0, looked_p = 0;

	(void)state;
	hb_rng_seed(&r, 71, HB_STREAM_DEFAULT);
	for (int it = 0; it < 20; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s, *plain, *nc;
		struct hb_iidp_stats st;
		struct hb_iidp_shape sh[6] = { 0 };
		struct hb_iidp_shape_bound h1[6] = { 0 }, h2[6] = { 0 };
		int alloc[6][8] = { { 0 } };
		size_t distinct = 0;

		random_perf_n(&r, &p, 8);
		solver_trio(&p, &s, &plain, &nc);
		for (int q = 0; q < 6; q++) {
			struct hb_iidp_shape_bound own = { 0 };
			int fresh = 1;

			random_alloc(&r, &p, alloc[q]);
			if (q == 5) /* the shape of an earlier one */
				memcpy(alloc[q], alloc[0], sizeof(alloc[q]));
			assert_int_equal(hb_iidp_shape_of(s, alloc[q], &sh[q], &err), 0);
			assert_int_equal(hb_iidp_shape_bound(plain, &sh[q], &own, &err), 0);
			assert_int_equal(hb_iidp_shape_bound_hold(s, &sh[q], &h1[q], &err), 0);
			assert_int_equal(hb_iidp_shape_bound_hold(s, &sh[q], &h2[q], &err), 0);
			assert_ptr_equal(h1[q].blob, h2[q].blob);
			assert_int_equal(h1[q].bytes, own.bytes);
			assert_int_equal(h1[q].nl, own.nl);
			assert_int_equal(h1[q].nh, own.nh);
			assert_memory_equal(h1[q].blob, own.blob, own.bytes);
			for (int k = 0; k < q; k++)
				if (h1[k].blob == h1[q].blob)
					fresh = 0;
			distinct += fresh;
			assert_int_equal(hb_iidp_held_shapes(s), distinct);
			/* a held b is not refilled, nor held twice */
			assert_int_equal(hb_iidp_shape_bound(s, &sh[q], &h1[q], &err), -1);
			assert_int_equal(hb_iidp_shape_bound_hold(s, &sh[q], &h1[q], &err), -1);
			hb_iidp_shape_bound_free(&own);
		}
		assert_ptr_equal(h1[5].blob, h1[0].blob);
		hb_iidp_solver_clear_cache(s);
		hb_iidp_solver_clear_cache(plain);
		for (int q = 0; q < 6; q++)
			for (int k = 0; k < 15; k++) {
				const struct hb_iidp_request req = random_request(&r, alloc[q], k);

				check_shape_request(s, plain, nc, &sh[q], &req, &compared);
			}
		hb_iidp_solver_stats(s, &st);
		looked_h += st.table_hits + st.table_misses;
		hb_iidp_solver_stats(plain, &st);
		looked_p += st.table_hits + st.table_misses;
		/* The copies go with their last holders. */
		for (int q = 0; q < 6; q++) {
			hb_iidp_shape_bound_release(s, &h1[q]);
			assert_null(h1[q].blob);
		}
		assert_int_equal(hb_iidp_held_shapes(s), distinct);
		for (int q = 0; q < 6; q++) {
			hb_iidp_shape_bound_release(s, &h2[q]);
			hb_iidp_shape_free(&sh[q]);
		}
		assert_int_equal(hb_iidp_held_shapes(s), 0);
		solver_trio_free(s, plain, nc);
		hb_perf_free(&p);
	}
	assert_true(compared >= 500);
	assert_true(looked_h < looked_p);
}

/* A summary whose shape's bounds are in the cache (hb_iidp_shape_bound
 * first, as the auto-scaler does) visits its B_L best-first on them and
 * fetches the tables of only those that can reach the answer: the same
 * summaries as a solver that never saw the bounds and as an uncached solve
 * of the allocation, both M rules, with fewer table lookups in all; so
 * does a whole solve of the allocation (the adaptation steps' request),
 * pair by pair. */
static void test_summary_best_first(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long compared = 0, looked_b = 0, looked_p = 0;

	(void)state;
	hb_rng_seed(&r, 67, HB_STREAM_DEFAULT);
	for (int it = 0; it < 30; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s, *plain, *nc;
		struct hb_iidp_stats st;

		random_perf_n(&r, &p, 8);
		solver_trio(&p, &s, &plain, &nc);
		for (int q = 0; q < 8; q++) {
			int alloc[8] = { 0 };
			struct hb_iidp_shape sh = { 0 };
			struct hb_iidp_shape_bound b = { 0 };

			random_alloc(&r, &p, alloc);
			assert_int_equal(hb_iidp_shape_of(s, alloc, &sh, &err), 0);
			assert_int_equal(hb_iidp_shape_bound(s, &sh, &b, &err), 0);
			for (int k = 0; k < 25; k++) {
				const struct hb_iidp_request req = random_request(&r, alloc, k);

				check_shape_request(s, plain, nc, &sh, &req, &compared);
			}
			hb_iidp_shape_free(&sh);
			hb_iidp_shape_bound_free(&b);
		}
		hb_iidp_solver_stats(s, &st);
		looked_b += st.table_hits + st.table_misses;
		hb_iidp_solver_stats(plain, &st);
		looked_p += st.table_hits + st.table_misses;
		solver_trio_free(s, plain, nc);
		hb_perf_free(&p);
	}
	assert_true(compared >= 1000);
	assert_true(looked_b < looked_p);
}

/* Answers by allocation shape (the auto-scaler's cache), against the
 * oracle of an uncached solve of the very allocation: random profiles on
 * 8 nodes of 2-3 GPU types and 2 or 4 GPUs (so kinds repeat), random
 * allocations, both M rules; the same shape on other nodes of the same
 * kinds (the counts moved among identical nodes) gives the same summary,
 * and so does the shape built from a node list; a tiny cache limit (a
 * flush before every solve) changes nothing. */
static void test_shape_summary_oracle(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long compared = 0, hits = 0, permuted = 0;

	(void)state;
	hb_rng_seed(&r, 41, HB_STREAM_DEFAULT);
	for (int it = 0; it < 40; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s, *nc, *tiny;
		struct hb_iidp_stats st;

		random_perf_n(&r, &p, 8);
		assert_int_equal(hb_iidp_solver_new(&p, &s, &err), 0);
		assert_int_equal(hb_iidp_solver_new(&p, &nc, &err), 0);
		assert_int_equal(hb_iidp_solver_new(&p, &tiny, &err), 0);
		hb_iidp_solver_set_cache_limit(nc, 0);
		hb_iidp_solver_set_cache_limit(tiny, 1);
		for (int q = 0; q < 60; q++) {
			int alloc[8] = { 0 }, perm[8], moved[8] = { 0 }, nodes[8];
			struct hb_iidp_request req = { 0 };
			struct hb_iidp_result o;
			struct hb_iidp_summary a, b, c;
			struct hb_iidp_shape sh = { 0 }, sh2 = { 0 }, sh3 = { 0 };

			random_alloc(&r, &p, alloc);
			for (int i = 0; i < p.nnodes; i++)
				nodes[i] = i;
			/* A random permutation within each kind (same GPU type and
			 * count: random_perf_n gives every node the same links). */
			for (int i = 0; i < p.nnodes; i++)
				perm[i] = i;
			for (int i = p.nnodes - 1; i > 0; i--) {
				int j = (int)hb_rng_below(&r, (uint64_t)i + 1), t;

				if (p.nodes[i].gpu != p.nodes[j].gpu || p.nodes[i].ngpus != p.nodes[j].ngpus)
					continue;
				t = perm[i];
				perm[i] = perm[j];
				perm[j] = t;
			}
			for (int i = 0; i < p.nnodes; i++)
				moved[perm[i]] = alloc[i];
			permuted += memcmp(moved, alloc, sizeof(alloc)) != 0;
			req.global_bs = 16 + (long)hb_rng_below(&r, 3000);
			req.m_rule = q % 2 ? HB_IIDP_M_RUNTIME : HB_IIDP_M_ROUND;
			req.cur_global_bs = 16 + (long)hb_rng_below(&r, 3000);
			req.method = HB_IIDP_FAST;
			req.alloc = alloc;
			if (q % 4 == 2) { /* exact, where some B_L may divide B_G */
				req.m_rule = HB_IIDP_M_EXACT;
				req.global_bs = 16 * (1 + req.global_bs / 16);
			}
			assert_int_equal(hb_iidp_solve(nc, &req, &o, &err), 0);
			assert_int_equal(hb_iidp_shape_of(s, alloc, &sh, &err), 0);
			assert_int_equal(hb_iidp_shape_of(s, moved, &sh2, &err), 0);
			assert_int_equal(hb_iidp_shape_of_nodes(s, nodes, moved, p.nnodes, &sh3, &err), 0);
			assert_int_equal(sh.nused, sh2.nused);
			assert_memory_equal(sh.key, sh2.key, 2 * (size_t)sh.nused * sizeof(long));
			assert_true(sh.ahash == sh2.ahash && sh2.ahash == sh3.ahash);
			assert_true(sh.nakey == sh2.nakey && sh2.nakey == sh3.nakey);
			assert_memory_equal(sh.akey, sh2.akey, (size_t)sh.nakey * sizeof(*sh.akey));
			assert_memory_equal(sh2.akey, sh3.akey, (size_t)sh.nakey * sizeof(*sh.akey));
			/* twice: a miss, then a hit */
			for (int rep = 0; rep < 2; rep++) {
				assert_int_equal(hb_iidp_solve_summary(s, rep ? &sh2 : &sh, &req, &a, &err), 0);
				assert_int_equal(hb_iidp_solve_summary(tiny, &sh3, &req, &b, &err), 0);
				assert_int_equal(a.found, o.found);
				assert_int_equal(b.found, o.found);
				if (o.found) {
					assert_int_equal(a.global_bs, o.global_bs);
					assert_int_equal(a.local_bs, o.local_bs);
					assert_int_equal(a.m, o.m);
					assert_int_equal(a.n_gpus, o.n_gpus);
					assert_true(a.iter_s == o.iter_s);
					assert_true(a.throughput == o.throughput);
					assert_memory_equal(&a, &b, sizeof(a));
					compared++;
				}
			}
			/* The uncached solve of the moved allocation agrees too. */
			req.alloc = moved;
			hb_iidp_result_free(&o);
			assert_int_equal(hb_iidp_solve(nc, &req, &o, &err), 0);
			assert_int_equal(hb_iidp_solve_summary(nc, &sh2, &req, &c, &err), 0);
			assert_int_equal(c.found, a.found);
			if (o.found)
				assert_true(o.iter_s == a.iter_s && o.local_bs == a.local_bs && c.iter_s == a.iter_s);
			hb_iidp_result_free(&o);
			hb_iidp_shape_free(&sh);
			hb_iidp_shape_free(&sh2);
			hb_iidp_shape_free(&sh3);
		}
		hb_iidp_solver_stats(s, &st);
		hits += st.shape_hits;
		hb_iidp_solver_stats(nc, &st);
		assert_int_equal(st.shape_hits + st.cache_bytes, 0);
		hb_iidp_solver_free(s);
		hb_iidp_solver_free(nc);
		hb_iidp_solver_free(tiny);
		hb_perf_free(&p);
	}
	assert_true(compared >= 500);
	assert_true(permuted >= 100);
	assert_true(hits >= compared / 2);
}

/* The answer key (iidp.h): an allocation whose GPUs are spread
 * differently over the nodes of each kind, keeping one node or more than
 * one, has the same answer, pair configurations aside.  Random profiles
 * on 8 nodes of 2-3 GPU types, random allocations and a random re-spread
 * of each kind's GPUs: the uncached whole solves of both agree (B_G, B_L,
 * M, time, throughput, bit for bit), their shapes have one answer key, and
 * their uncached bounds are the same bytes.  Spreading a one-node
 * allocation over two nodes changes the key (the all-reduce leaves the
 * node). */
static void relayout(struct hb_rng *r, const struct hb_perf *p, const struct hb_iidp_solver *s, const int *alloc,
		     int *out)
{
	for (;;) {
		int used = 0, nused = 0;

		memset(out, 0, (size_t)p->nnodes * sizeof(int));
		for (int i = 0; i < p->nnodes; i++) {
			int left;

			if (hb_iidp_node_kind(s, i) != i)
				continue; /* each kind once, from its first node */
			left = 0;
			for (int j = 0; j < p->nnodes; j++)
				if (hb_iidp_node_kind(s, j) == i)
					left += alloc[j];
			/* pairs one at a time onto random nodes of the kind with room */
			while (left > 0) {
				int j = (int)hb_rng_below(r, (uint64_t)p->nnodes);

				if (hb_iidp_node_kind(s, j) != i || out[j] + 2 > p->nodes[j].ngpus)
					continue;
				out[j] += 2;
				left -= 2;
			}
		}
		for (int i = 0; i < p->nnodes; i++) {
			used += alloc[i] != 0;
			nused += out[i] != 0;
		}
		if ((used > 1) == (nused > 1))
			return;
	}
}

static void test_answer_key_relayout(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long compared = 0, moved_pairs = 0, split = 0;

	(void)state;
	hb_rng_seed(&r, 67, HB_STREAM_DEFAULT);
	for (int it = 0; it < 40; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *nc;

		random_perf_n(&r, &p, 8);
		assert_int_equal(hb_iidp_solver_new(&p, &nc, &err), 0);
		hb_iidp_solver_set_cache_limit(nc, 0);
		for (int q = 0; q < 40; q++) {
			int alloc[8], other[8];
			struct hb_iidp_request req = { 0 };
			struct hb_iidp_result o1, o2;
			struct hb_iidp_shape sh1 = { 0 }, sh2 = { 0 };
			struct hb_iidp_shape_bound b1 = { 0 }, b2 = { 0 };

			random_alloc(&r, &p, alloc);
			relayout(&r, &p, nc, alloc, other);
			moved_pairs += memcmp(alloc, other, sizeof(alloc)) != 0;
			assert_int_equal(hb_iidp_shape_of(nc, alloc, &sh1, &err), 0);
			assert_int_equal(hb_iidp_shape_of(nc, other, &sh2, &err), 0);
			assert_int_equal(sh1.nakey, sh2.nakey);
			assert_memory_equal(sh1.akey, sh2.akey, (size_t)sh1.nakey * sizeof(long));
			assert_true(sh1.ahash == sh2.ahash);
			assert_int_equal(hb_iidp_shape_bound(nc, &sh1, &b1, &err), 0);
			assert_int_equal(hb_iidp_shape_bound(nc, &sh2, &b2, &err), 0);
			assert_true(b1.nl == b2.nl && b1.nh == b2.nh && b1.bytes == b2.bytes);
			if (b1.bytes)
				assert_memory_equal(b1.blob, b2.blob, b1.bytes);
			req.global_bs = 16 + (long)hb_rng_below(&r, 3000);
			req.m_rule = q % 2 ? HB_IIDP_M_RUNTIME : HB_IIDP_M_ROUND;
			req.cur_global_bs = 16 + (long)hb_rng_below(&r, 3000);
			req.method = HB_IIDP_FAST;
			req.alloc = alloc;
			if (q % 4 == 2) { /* exact, where some B_L may divide B_G */
				req.m_rule = HB_IIDP_M_EXACT;
				req.global_bs = 16 * (1 + req.global_bs / 16);
			}
			assert_int_equal(hb_iidp_solve(nc, &req, &o1, &err), 0);
			req.alloc = other;
			assert_int_equal(hb_iidp_solve(nc, &req, &o2, &err), 0);
			assert_int_equal(o1.found, o2.found);
			if (o1.found) {
				assert_int_equal(o1.global_bs, o2.global_bs);
				assert_int_equal(o1.local_bs, o2.local_bs);
				assert_int_equal(o1.m, o2.m);
				assert_true(memcmp(&o1.iter_s, &o2.iter_s, sizeof(double)) == 0);
				assert_true(memcmp(&o1.throughput, &o2.throughput, sizeof(double)) == 0);
				compared++;
			}
			hb_iidp_result_free(&o1);
			hb_iidp_result_free(&o2);
			/* one node's pairs over two nodes of its kind: another key */
			if (sh1.nused == 1 && sh1.n_gpus >= 4) {
				const int i = sh1.node[0];

				for (int j = 0; j < p.nnodes; j++) {
					if (j == i || hb_iidp_node_kind(nc, j) != hb_iidp_node_kind(nc, i))
						continue;
					memcpy(other, alloc, sizeof(other));
					other[i] -= 2;
					other[j] = 2;
					hb_iidp_shape_free(&sh2);
					assert_int_equal(hb_iidp_shape_of(nc, other, &sh2, &err), 0);
					assert_true(sh1.nakey == sh2.nakey && sh1.akey[0] == sh2.akey[0]);
					assert_true(sh1.akey[1] == 0 && sh2.akey[1] == 1 && sh1.ahash != sh2.ahash);
					split++;
					break;
				}
			}
			hb_iidp_shape_bound_free(&b1);
			hb_iidp_shape_bound_free(&b2);
			hb_iidp_shape_free(&sh1);
			hb_iidp_shape_free(&sh2);
		}
		hb_iidp_solver_free(nc);
		hb_perf_free(&p);
	}
	assert_true(compared >= 500);
	assert_true(moved_pairs >= 300);
	assert_true(split >= 20);
}

/* Algorithm 1 summaries are filed under the least B_G of the interval
 * with the same M per candidate B_L (iidp.c summary_canonical_bs): every
 * B_G of a sweep, cached, must be the uncached solve's answer, and most of
 * the sweep must be answered from another B_G's entry. */
static void test_summary_shared_by_interval(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long compared = 0, hits = 0, asked = 0;

	(void)state;
	hb_rng_seed(&r, 43, HB_STREAM_DEFAULT);
	for (int it = 0; it < 12; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s, *nc;
		struct hb_iidp_stats st;
		int alloc[8] = { 0 };
		struct hb_iidp_shape sh = { 0 };

		random_perf_n(&r, &p, 8);
		assert_int_equal(hb_iidp_solver_new(&p, &s, &err), 0);
		assert_int_equal(hb_iidp_solver_new(&p, &nc, &err), 0);
		hb_iidp_solver_set_cache_limit(nc, 0);
		random_alloc(&r, &p, alloc);
		assert_int_equal(hb_iidp_shape_of(s, alloc, &sh, &err), 0);
		/* ascending and then descending: an interval's entry is filed by
		 * whichever of its B_G comes first */
		for (int pass = 0; pass < 2; pass++)
			for (long k = 0; k < 400; k++) {
				struct hb_iidp_request req = { .global_bs = pass ? 815 - 2 * k : 16 + 2 * k,
							       .m_rule = HB_IIDP_M_ROUND, .method = HB_IIDP_FAST,
							       .alloc = alloc };
				struct hb_iidp_result o;
				struct hb_iidp_summary a;

				assert_int_equal(hb_iidp_solve(nc, &req, &o, &err), 0);
				assert_int_equal(hb_iidp_solve_summary(s, &sh, &req, &a, &err), 0);
				assert_int_equal(a.found, o.found);
				if (o.found) {
					assert_int_equal(a.global_bs, o.global_bs);
					assert_int_equal(a.local_bs, o.local_bs);
					assert_int_equal(a.m, o.m);
					assert_true(a.iter_s == o.iter_s);
					assert_true(a.throughput == o.throughput);
					compared++;
				}
				asked++;
				hb_iidp_result_free(&o);
			}
		hb_iidp_solver_stats(s, &st);
		/* the second pass repeats every B_G: those are hits anyway */
		hits += st.shape_hits - 400;
		hb_iidp_shape_free(&sh);
		hb_iidp_solver_free(s);
		hb_iidp_solver_free(nc);
		hb_perf_free(&p);
	}
	assert_true(compared >= asked / 4);
	/* first pass: the B_G of an interval after its first hit its entry */
	assert_true(hits >= 12 * 400 / 4);
}

/* A random trajectory: 1-6 points, flat, rising or noisy. */
static int random_traj(struct hb_rng *r, long *traj)
{
	int n = 1 + (int)hb_rng_below(r, 6);
	long x = 16 + (long)hb_rng_below(r, 2000);

	for (int k = 0; k < n; k++) {
		traj[k] = x;
		x += (long)hb_rng_below(r, 400) - (hb_rng_below(r, 3) == 0 ? 150 : 0);
		x = x < 16 ? 16 : x;
	}
	return n;
}

/* The shape bounds (iidp.h) hold against the solver's answers on random
 * profiles, allocations and Algorithm 1 requests: no found summary runs
 * faster than the throughput bound at any B_G up to the request's, nor
 * realises a B_G below the least one; no summary is found where the bound
 * is 0; and the epoch lower bound (autoscale.h) never exceeds the estimate
 * of a random trajectory (INFINITY only where the estimate is infeasible).
 * Bounds from the cache equal fresh ones.  The bounds must also be useful:
 * some are within a factor 2 of the exact values. */
static void test_shape_bound_random(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	long checked = 0, tight = 0, epochs = 0, epochs_tight = 0;

	(void)state;
	hb_rng_seed(&r, 59, HB_STREAM_DEFAULT);
	for (int it = 0; it < 30; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s, *nc;

		random_perf_n(&r, &p, 8);
		assert_int_equal(hb_iidp_solver_new(&p, &s, &err), 0);
		assert_int_equal(hb_iidp_solver_new(&p, &nc, &err), 0);
		hb_iidp_solver_set_cache_limit(nc, 0);
		for (int q = 0; q < 30; q++) {
			int alloc[8];
			struct hb_iidp_shape sh = { 0 };
			struct hb_iidp_shape_bound b = { 0 }, b2 = { 0 }, b3 = { 0 };
			long traj[6];
			int ntraj;

			random_alloc(&r, &p, alloc);
			assert_int_equal(hb_iidp_shape_of(s, alloc, &sh, &err), 0);
			assert_int_equal(hb_iidp_shape_bound(s, &sh, &b, &err), 0);
			assert_int_equal(hb_iidp_shape_bound(s, &sh, &b2, &err), 0); /* a hit */
			assert_int_equal(hb_iidp_shape_bound(nc, &sh, &b3, &err), 0); /* never cached */
			assert_true(b.nl == b2.nl && b.nl == b3.nl && b.nh == b2.nh && b.nh == b3.nh);
			assert_true(b.bytes == b2.bytes && b.bytes == b3.bytes);
			if (b.bytes) {
				assert_memory_equal(b.blob, b2.blob, b.bytes);
				assert_memory_equal(b.blob, b3.blob, b.bytes);
			}
			{
				/* a bound refilled for another shape forgets its memo */
				int other[8];
				struct hb_iidp_shape sh2 = { 0 };

				for (long x = 100; x <= 3100; x += 1000) {
					(void)hb_iidp_shape_max_throughput_memo(&b2, x);
					(void)hb_iidp_shape_min_global_bs_memo(&b2, x);
				}
				random_alloc(&r, &p, other);
				assert_int_equal(hb_iidp_shape_of(s, other, &sh2, &err), 0);
				assert_int_equal(hb_iidp_shape_bound(s, &sh2, &b2, &err), 0);
				assert_true(hb_iidp_shape_max_throughput_memo(&b2, 3100) ==
					    hb_iidp_shape_max_throughput(&b2, 3100));
				assert_int_equal(hb_iidp_shape_min_global_bs_memo(&b2, 3100),
						 hb_iidp_shape_min_global_bs(&b2, 3100));
				hb_iidp_shape_free(&sh2);
			}
			for (int k = 0; k < 8; k++) {
				struct hb_iidp_request req = { .global_bs = 16 + (long)hb_rng_below(&r, 3000),
							       .m_rule = HB_IIDP_M_ROUND };
				struct hb_iidp_summary a;
				const long up = req.global_bs + (long)hb_rng_below(&r, 2) * (long)hb_rng_below(&r, 500);
				double f;

				assert_int_equal(hb_iidp_solve_summary(s, &sh, &req, &a, &err), 0);
				f = hb_iidp_shape_max_throughput(&b, up);
				/* the memo answers as the plain bounds, asked or kept */
				for (int again = 0; again < 2; again++) {
					assert_true(hb_iidp_shape_max_throughput_memo(&b, up) == f);
					assert_int_equal(hb_iidp_shape_min_global_bs_memo(&b, req.global_bs),
							 hb_iidp_shape_min_global_bs(&b, req.global_bs));
				}
				if (f == 0.0)
					assert_false(a.found);
				if (!a.found)
					continue;
				assert_true(a.throughput <= f);
				assert_true(a.global_bs >= hb_iidp_shape_min_global_bs(&b, req.global_bs));
				checked++;
				tight += up == req.global_bs && 2.0 * a.throughput >= f;
			}
			ntraj = random_traj(&r, traj);
			for (int k = 0; k < 2; k++) {
				long pb = 1 + (long)hb_rng_below(&r, 60), done = (long)hb_rng_below(&r, (uint64_t)pb);
				double D = 500.0 + (double)hb_rng_below(&r, 300000), lb;
				struct hb_epoch_estimate e;
				/* the first point by each rule (autoscale.h): the
				 * bound holds for all of them */
				const struct hb_jabas_first firsts[3] = {
					{ HB_IIDP_M_ROUND, 0 }, { HB_IIDP_M_EXACT, 0 },
					{ HB_IIDP_M_ROUND, 8 * (1 + (int)hb_rng_below(&r, 8)) } };
				const int fi = (int)hb_rng_below(&r, 4);

				assert_int_equal(hb_jabas_epoch_time_shape(s, &sh, traj, ntraj, pb, done, D,
									   fi < 3 ? &firsts[fi] : NULL, &e, &err), 0);
				lb = hb_jabas_epoch_lower_bound(&b, traj, ntraj, D);
				assert_true(lb >= 0.0);
				if (isinf(lb))
					assert_false(e.feasible);
				if (!e.feasible)
					continue;
				assert_true(lb <= e.epoch_s);
				epochs++;
				epochs_tight += 2.0 * lb >= e.epoch_s;
			}
			hb_iidp_shape_bound_free(&b);
			hb_iidp_shape_bound_free(&b2);
			hb_iidp_shape_bound_free(&b3);
			hb_iidp_shape_free(&sh);
		}
		hb_iidp_solver_free(s);
		hb_iidp_solver_free(nc);
		hb_perf_free(&p);
	}
	assert_true(checked >= 1000);
	assert_true(epochs >= 300);
	assert_true(tight >= checked / 10);
	assert_true(epochs_tight >= epochs / 10);
}

/* The throughput bound counts a B_L's M workers, not N_H ceil(M / N_H):
 * on a profile whose step time is mostly a fixed update (throughput nearly
 * proportional to B_L, as ncf's) and whose accumulation steps are cheap,
 * 4 pairs at B_G 512 answer with B_L 56 and M = 5 workers (one pair runs
 * two).  Read as 8 workers, B_L 56 promised 1.6x the answer (51,862
 * against 32,414 samples/s); with its 5 it promises the answer itself, as
 * the B_L of M = 4 do.  Ranking ncf's shapes on Philly hinged on this. */
static void test_shape_bound_counts_workers(void **state)
{
	struct hb_perf_ar intra = { 1, 1.4, 1.2, 15.75e9, "pcie3-x16" };
	struct hb_perf_ar inter = { 1, 0.7, 3.9, 12.5e9, "ib-100g" };
	struct hb_error err = { 0 };
	struct hb_perf p;
	struct hb_iidp_solver *s;
	struct hb_iidp_shape sh = { 0 };
	struct hb_iidp_shape_bound b = { 0 };
	struct hb_iidp_summary a;
	const double bytes[2] = { 4.0 * 1048576.0, 4.0 * 1048576.0 };
	int gi, alloc[1] = { 8 };
	double f;

	(void)state;
	hb_perf_init(&p, "overhead", 8);
	assert_int_equal(hb_perf_set_buckets(&p, bytes, 2, &err), 0);
	assert_int_equal(hb_perf_add_gpu(&p, "gpu0", &gi, &err), 0);
	for (int lbs = 8; lbs <= 64; lbs += 8) {
		struct hb_perf_point pt = { .n_vsw = 1, .fwd_s = lbs * 1e-6, .bwd_s = lbs * 2e-6, .data_s = 0.0005,
					    .update_s = 0.02, .copy_s = 0.0, .bn_s = 0.001 };

		assert_int_equal(hb_perf_add_lbs(&p, gi, lbs, 1, &pt, 1, &err), 0);
	}
	assert_int_equal(hb_perf_add_node(&p, "node0", gi, 8, &intra, &inter, &err), 0);
	assert_int_equal(hb_perf_prepare(&p, &err), 0);
	assert_int_equal(hb_iidp_solver_new(&p, &s, &err), 0);
	assert_int_equal(hb_iidp_shape_of(s, alloc, &sh, &err), 0);
	assert_int_equal(hb_iidp_shape_bound(s, &sh, &b, &err), 0);
	{
		const struct hb_iidp_request req = { .global_bs = 512, .m_rule = HB_IIDP_M_ROUND };

		assert_int_equal(hb_iidp_solve_summary(s, &sh, &req, &a, &err), 0);
	}
	assert_true(a.found);
	assert_int_equal(a.local_bs, 56);
	assert_int_equal(a.m, 5);
	f = hb_iidp_shape_max_throughput(&b, 512);
	assert_true(a.throughput <= f);
	assert_true(f <= 1.1 * a.throughput);
	hb_iidp_shape_bound_free(&b);
	hb_iidp_shape_free(&sh);
	hb_iidp_solver_free(s);
	hb_perf_free(&p);
}

/* The pruned ranking (hb_jabas_rank_shapes) against the plain one: every
 * shape estimated, visited by ascending last with "<=" (the agent's former
 * loop), on random offers of random profiles.  The same winner and the
 * very same time, and some shapes are not solved. */
static void test_rank_shapes_oracle(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	size_t total = 0, solved_all = 0;
	long winners = 0;

	(void)state;
	hb_rng_seed(&r, 61, HB_STREAM_DEFAULT);
	for (int it = 0; it < 25; it++) {
		struct hb_perf p;
		struct hb_iidp_solver *s, *o;

		random_perf_n(&r, &p, 8);
		assert_int_equal(hb_iidp_solver_new(&p, &s, &err), 0);
		assert_int_equal(hb_iidp_solver_new(&p, &o, &err), 0);
		for (int q = 0; q < 12; q++) {
			enum { NC = 24 };
			struct hb_iidp_shape sh[NC];
			struct hb_iidp_shape_bound b[NC];
			struct hb_jabas_rank_item items[NC];
			int n = 1 + (int)hb_rng_below(&r, NC), ntraj, alloc[8];
			long traj[6], best = -1, got, pb = 1 + (long)hb_rng_below(&r, 60);
			long done = (long)hb_rng_below(&r, (uint64_t)pb);
			double best_s = INFINITY, got_s, D = 500.0 + (double)hb_rng_below(&r, 300000);
			size_t solved;

			/* the first point by each rule (autoscale.h), or none */
			const struct hb_jabas_first firsts[3] = {
				{ HB_IIDP_M_ROUND, 0 }, { HB_IIDP_M_EXACT, 0 },
				{ HB_IIDP_M_ROUND, 8 * (1 + (int)hb_rng_below(&r, 8)) } };
			const int fi = (int)hb_rng_below(&r, 4);
			const struct hb_jabas_first *first = fi < 3 ? &firsts[fi] : NULL;

			memset(sh, 0, sizeof(sh));
			memset(b, 0, sizeof(b));
			ntraj = random_traj(&r, traj);
			for (int j = 0; j < n; j++) {
				struct hb_epoch_estimate e;

				random_alloc(&r, &p, alloc);
				assert_int_equal(hb_iidp_shape_of(s, alloc, &sh[j], &err), 0);
				assert_int_equal(hb_iidp_shape_bound(s, &sh[j], &b[j], &err), 0);
				items[j] = (struct hb_jabas_rank_item){ .shape = &sh[j], .bound = &b[j], .last = (size_t)j };
				assert_int_equal(hb_jabas_epoch_time_shape(o, &sh[j], traj, ntraj, pb, done, D, first, &e,
									   &err), 0);
				if (e.feasible && e.epoch_s <= best_s) {
					best = j;
					best_s = e.epoch_s;
				}
			}
			assert_int_equal(hb_jabas_rank_shapes(s, items, (size_t)n, traj, ntraj, pb, done, D, first, &got,
							      &got_s, &solved, &err), 0);
			assert_int_equal(got, best);
			assert_true(got_s == best_s || (isinf(got_s) && isinf(best_s)));
			total += (size_t)n;
			solved_all += solved;
			winners += best >= 0;
			for (int j = 0; j < n; j++) {
				hb_iidp_shape_free(&sh[j]);
				hb_iidp_shape_bound_free(&b[j]);
			}
		}
		hb_iidp_solver_free(s);
		hb_iidp_solver_free(o);
		hb_perf_free(&p);
	}
	assert_true(winners >= 100);
	assert_true(solved_all < total);
}

/* Shapes refuse what a solve refuses, with its message. */
static void test_shape_errors(void **state)
{
	const struct hb_perf *p = *state;
	struct hb_iidp_solver *s;
	struct hb_iidp_shape sh = { 0 };
	struct hb_error err = { 0 };
	int odd[2] = { 3, 0 }, none[2] = { 0, 0 }, big[2] = { 6, 0 }, nodes[2] = { 1, 0 }, g[2] = { 2, 2 };

	assert_int_equal(hb_iidp_solver_new(p, &s, &err), 0);
	assert_int_equal(hb_iidp_shape_of(s, odd, &sh, &err), -1);
	assert_non_null(strstr(err.msg, "even"));
	assert_int_equal(hb_iidp_shape_of(s, none, &sh, &err), -1);
	assert_int_equal(hb_iidp_shape_of(s, big, &sh, &err), -1);
	assert_int_equal(hb_iidp_shape_of_nodes(s, nodes, g, 2, &sh, &err), -1); /* not ascending */
	nodes[0] = 0;
	nodes[1] = 1;
	assert_int_equal(hb_iidp_shape_of_nodes(s, nodes, g, 2, &sh, &err), 0);
	assert_int_equal(sh.n_gpus, 4);
	assert_int_equal(sh.nused, 2);
	hb_iidp_shape_free(&sh);
	hb_iidp_solver_free(s);
}

/* One GPU hosting both groups (hb_iidp_solve_one_gpu) against a brute force
 * written from the definition: every candidate B_L (Algorithm 1's M, stop
 * at M < 1), every n_vsw per group dividing M with 2 n_vsw VSWs within the
 * GPU's cap, the time of the GPU with 2 n_vsw VSWs from the perf model's
 * coefficients; least time, ties to more VSWs; highest throughput, ties to
 * the smaller B_L. */
static void test_one_gpu_vs_enumeration(void **state)
{
	struct hb_rng r;
	struct hb_error err = { 0 };
	int found = 0, notfound = 0;

	(void)state;
	hb_rng_seed(&r, 77, HB_STREAM_DEFAULT);
	for (int it = 0; it < 200; it++) {
		struct hb_perf p;
		struct hb_iidp_result res;
		int node, *alloc, *lbs = NULL, nl = 0, want_lbs = 0, bn = 0, bga = 0;
		long gbs = 8 + (long)hb_rng_below(&r, 600), bm = 0;
		double bt = 0, bf = -1;
		struct hb_perf_comm c;

		random_perf(&r, &p);
		node = (int)hb_rng_below(&r, (uint64_t)p.nnodes);
		if (it % 4 == 3)
			want_lbs = 8 * (1 + (int)hb_rng_below(&r, 8));
		alloc = calloc((size_t)p.nnodes, sizeof(*alloc));
		assert_non_null(alloc);
		alloc[node] = 1;
		assert_int_equal(hb_perf_alloc_lbs(&p, alloc, &lbs, &nl, &err), 0);
		assert_int_equal(hb_perf_comm_eval(&p, alloc, node, &c, &err), 0);
		for (int i = 0; i < nl; i++) {
			const struct hb_perf_lbs *l = hb_perf_find_lbs(&p, p.nodes[node].gpu, lbs[i]);
			long M = hb_iidp_round_m(gbs, lbs[i]);
			double lt = INFINITY;
			int ln = 0, lga = 0;

			if (M < 1)
				break;
			if (want_lbs && lbs[i] != want_lbs)
				continue;
			for (int n = 1; 2 * n <= l->n_cap; n++) {
				struct hb_perf_coef co;
				double t;

				if (M % n != 0)
					continue;
				assert_int_equal(hb_perf_coef_eval(&p, l, &c, 2 * n, p.tau, &co, &err), 0);
				t = hb_perf_iter_s(&co, M / n - 1);
				if (t <= lt) {
					lt = t;
					ln = n;
					lga = (int)(M / n - 1);
				}
			}
			if (ln > 0 && 2.0 * (double)M * lbs[i] / lt > bf) {
				bf = 2.0 * (double)M * lbs[i] / lt;
				bt = lt;
				bn = ln;
				bga = lga;
				bm = M;
			}
		}
		assert_int_equal(hb_iidp_solve_one_gpu(&p, node, gbs, it % 4 == 3 ? want_lbs : 0, &res, &err), 0);
		if (bf < 0) {
			assert_int_equal(res.found, 0);
			assert_true(res.why[0] != '\0');
			notfound++;
		} else {
			assert_int_equal(res.found, 1);
			assert_int_equal(res.npairs, 1);
			assert_int_equal(res.n_gpus, 1);
			assert_int_equal(res.pairs[0].gpus, 1);
			assert_int_equal(res.pairs[0].node, node);
			assert_int_equal(res.pairs[0].n_vsw, bn);
			assert_int_equal(res.pairs[0].n_ga, bga);
			assert_int_equal(res.m, (int)bm);
			assert_int_equal(res.global_bs, 2 * bm * res.local_bs);
			assert_true(res.iter_s == bt);
			assert_true(res.throughput == bf);
			found++;
		}
		hb_iidp_result_free(&res);
		free(lbs);
		free(alloc);
		hb_perf_free(&p);
	}
	/* Both outcomes were exercised. */
	assert_true(found > 50);
	assert_true(notfound > 0);
	/* Bad input is an error, not a plan. */
	{
		struct hb_perf p;
		struct hb_iidp_result res;

		random_perf(&r, &p);
		assert_int_equal(hb_iidp_solve_one_gpu(&p, p.nnodes, 64, 0, &res, &err), -1);
		assert_int_equal(hb_iidp_solve_one_gpu(&p, 0, 0, 0, &res, &err), -1);
		assert_int_equal(hb_iidp_solve_one_gpu(&p, 0, 64, 7, &res, &err), -1);
		hb_perf_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_vs_enumeration),
		cmocka_unit_test(test_fast_vs_dp_large),
		cmocka_unit_test(test_non_monotone_best_t),
		cmocka_unit_test(test_pair_best_ties),
		cmocka_unit_test(test_core_errors),
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_pairs_differ_and_format),
		cmocka_unit_test(test_round_m),
		cmocka_unit_test(test_runtime_rule),
		cmocka_unit_test(test_runtime_solve),
		cmocka_unit_test(test_infeasible),
		cmocka_unit_test(test_solver_vs_enumeration),
		cmocka_unit_test(test_exact_rule_vs_enumeration),
		cmocka_unit_test(test_solve_fast_vs_dp_random),
		cmocka_unit_test(test_shape_summary_oracle),
		cmocka_unit_test(test_summary_shared_by_interval),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_memo_growth),
		cmocka_unit_test(test_cache_budget),
		cmocka_unit_test(test_summary_best_first),
		cmocka_unit_test(test_bound_hold),
		cmocka_unit_test(test_shape_errors),
		cmocka_unit_test(test_shape_bound_random),
		cmocka_unit_test(test_shape_bound_counts_workers),
		cmocka_unit_test(test_answer_key_relayout),
		cmocka_unit_test(test_rank_shapes_oracle),
		cmocka_unit_test(test_one_gpu_vs_enumeration),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
