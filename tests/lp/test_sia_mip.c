/* Unit tests for solver/sia_mip.c: the configuration set (§3.2), the
 * restart factor (Eq. 2, note A8's cases), row normalisation, the paper's
 * Table 1 example, the program against enumeration of every assignment
 * (p < 0 and p > 0, restart factors, invalid columns, pinned jobs), an
 * infeasible pinned instance, and malformed input refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rng.h"
#include "sia_mip.h"

static void test_configs(void **state)
{
	struct hb_sia_config c[32];
	int n = 0;

	(void)state;
	/* 6 nodes of 4 GPUs: (1,1) (1,2) (1,4) (2,8) ... (6,24); 2 nodes of 8: (1,1) .. (1,8) (2,16). */
	assert_int_equal(hb_sia_type_nconfigs(6, 4), 8);
	assert_int_equal(hb_sia_type_configs(0, 6, 4, c, &n), 8);
	assert_int_equal(hb_sia_type_configs(1, 2, 8, c, &n), 5);
	assert_int_equal(n, 13);
	assert_int_equal(c[2].gpus, 4);
	assert_int_equal(c[2].nodes, 1);
	assert_int_equal(c[3].gpus, 8);
	assert_int_equal(c[3].nodes, 2);
	assert_int_equal(c[7].gpus, 24);
	assert_int_equal(c[7].nodes, 6);
	assert_int_equal(c[11].gpus, 8);
	assert_int_equal(c[11].nodes, 1);
	assert_int_equal(c[12].gpus, 16);
	assert_int_equal(c[12].type, 1);
	/* 3 GPUs per node: powers of two up to 2 inside a node, then whole nodes. */
	assert_int_equal(hb_sia_type_nconfigs(2, 3), 3);
}

static void test_restart_factor(void **state)
{
	(void)state;
	assert_true(hb_sia_restart_factor(10, 3, 30) == 1.0);   /* age < S */
	assert_true(hb_sia_restart_factor(0, 0, 30) == 1.0);    /* age 0 */
	assert_true(fabs(hb_sia_restart_factor(270, 1, 30) - 240.0 / 300.0) < 1e-15);
	assert_true(hb_sia_restart_factor(100, 5, 30) == 0.0);  /* N S > age: clipped */
}

static void test_normalise(void **state)
{
	double r[4] = { 0, 2.0, 4.0, 3.0 }, none[2] = { 0, -1 };

	(void)state;
	assert_true(hb_sia_normalise_row(r, 4) == 2.0);
	assert_true(r[0] == 0 && r[1] == 1.0 && r[2] == 2.0 && r[3] == 1.5);
	assert_true(hb_sia_normalise_row(none, 2) == 0.0);
}

/* Sia Table 1: one 2-GPU node of type A, one 4-GPU node of type B; with
 * p = 1 the optimum is J1 -> (1,4,B), J2 -> (1,2,A) (§3.3). */
static void test_table1(void **state)
{
	static const struct hb_sia_config cfg[5] = { { 0, 1, 1 }, { 0, 1, 2 }, { 1, 1, 1 }, { 1, 1, 2 }, { 1, 1, 4 } };
	static const double G[10] = { 1, 1.5, 1.5, 2.5, 3.5, 1.2, 2.1, 1, 1.9, 3.6 };
	static const int cap[2] = { 2, 4 };
	struct hb_sia_problem pb;
	struct hb_error err = { 0 };
	int choice[2], st;
	double e;

	(void)state;
	hb_sia_problem_default(&pb);
	pb.njobs = 2;
	pb.nconfigs = 5;
	pb.ntypes = 2;
	pb.configs = cfg;
	pb.capacity = cap;
	pb.goodput = G;
	pb.p = 1.0;
	pb.lambda_n = 0.0;
	assert_int_equal(hb_sia_solve(&pb, NULL, choice, &e, &st, &err), 0);
	assert_int_equal(st, HB_MILP_OPTIMAL);
	assert_int_equal(choice[0], 4);
	assert_int_equal(choice[1], 1);
	assert_true(fabs(e - 5.6) < 1e-9);
}

/* Best E over every assignment (each job: none or a valid column), -1 when
 * none is feasible (pinned jobs over capacity); best[] gets one argmin. */
static int brute(const struct hb_sia_problem *pb, double *best_e)
{
	int J = pb->njobs, C = pb->nconfigs, ch[8], found = 0;
	long total = 1;

	for (int i = 0; i < J; i++)
		total *= C + 1;
	for (long s = 0; s < total; s++) {
		long r = s;
		int use[4] = { 0, 0, 0, 0 }, ok = 1;
		double e;

		for (int i = 0; i < J; i++) {
			ch[i] = (int)(r % (C + 1)) - 1;
			r /= C + 1;
			if (ch[i] >= 0 && !(pb->goodput[i * C + ch[i]] > 0))
				ok = 0;
			if (pb->pinned && pb->pinned[i] && ch[i] != pb->prev[i])
				ok = 0;
			if (ch[i] >= 0)
				use[pb->configs[ch[i]].type] += pb->configs[ch[i]].gpus;
		}
		for (int t = 0; t < pb->ntypes; t++)
			ok &= use[t] <= pb->capacity[t];
		if (!ok)
			continue;
		e = hb_sia_objective(pb, ch);
		if (!found || (pb->p < 0 ? e < *best_e : e > *best_e))
			*best_e = e;
		found = 1;
	}
	return found ? 0 : -1;
}

static void test_brute_force(void **state)
{
	struct hb_rng rng;
	struct hb_sia_config cfg[16];
	int C = 0, cap[2] = { 8, 8 }, infeasible = 0, pinned_seen = 0;

	(void)state;
	hb_sia_type_configs(0, 2, 4, cfg, &C); /* 1 2 4 8 */
	hb_sia_type_configs(1, 1, 8, cfg, &C); /* 1 2 4 8 */
	hb_rng_seed(&rng, 7, 0);
	for (int trial = 0; trial < 300; trial++) {
		struct hb_sia_problem pb;
		struct hb_error err = { 0 };
		double G[4 * 16], restart[4], e_brute = 0, e;
		int prev[4], choice[4], st, rb, rs;
		unsigned char pinned[4];
		int J = 1 + (int)hb_rng_below(&rng, 4);

		hb_sia_problem_default(&pb);
		pb.njobs = J;
		pb.nconfigs = C;
		pb.ntypes = 2;
		pb.configs = cfg;
		pb.capacity = cap;
		pb.goodput = G;
		pb.prev = prev;
		pb.restart = restart;
		pb.pinned = pinned;
		pb.tie = 0;
		if (trial % 3 == 2) { /* the p > 0 side: maximise, lambda_n < 0 */
			pb.p = 0.5;
			pb.lambda_n = -1.1;
		}
		for (int i = 0; i < J; i++) {
			for (int c = 0; c < C; c++) {
				/* goodput grows with GPUs, with diminishing returns; a fifth invalid */
				double g = pow((double)cfg[c].gpus, 0.3 + 0.6 * hb_rng_uniform(&rng)) *
					   (cfg[c].type ? 0.5 + 2 * hb_rng_uniform(&rng) : 1.0);
				G[i * C + c] = hb_rng_below(&rng, 5) == 0 ? 0.0 : g;
			}
			hb_sia_normalise_row(G + i * C, C);
			prev[i] = (int)hb_rng_below(&rng, (uint64_t)C + 1) - 1;
			if (prev[i] >= 0 && !(G[i * C + prev[i]] > 0))
				prev[i] = -1;
			restart[i] = hb_rng_uniform(&rng);
			pinned[i] = prev[i] >= 0 && hb_rng_below(&rng, 6) == 0;
			pinned_seen += pinned[i];
		}
		rb = brute(&pb, &e_brute);
		rs = hb_sia_solve(&pb, NULL, choice, &e, &st, &err);
		if (rb < 0) {
			assert_int_equal(rs, -1);
			assert_int_equal(st, HB_MILP_INFEASIBLE);
			assert_int_equal(err.code, HB_EINPUT);
			infeasible++;
			continue;
		}
		assert_int_equal(rs, 0);
		assert_int_equal(st, HB_MILP_OPTIMAL);
		assert_true(fabs(e - e_brute) < 1e-9);
		/* The choice is feasible and has the E reported. */
		{
			int use[2] = { 0, 0 };

			for (int i = 0; i < J; i++) {
				if (choice[i] < 0)
					continue;
				assert_true(G[i * C + choice[i]] > 0);
				use[cfg[choice[i]].type] += cfg[choice[i]].gpus;
				if (pinned[i])
					assert_int_equal(choice[i], prev[i]);
			}
			assert_true(use[0] <= cap[0] && use[1] <= cap[1]);
			assert_true(fabs(hb_sia_objective(&pb, choice) - e) < 1e-12);
		}
	}
	assert_true(pinned_seen > 0);
	assert_true(infeasible < 300);
}

/* The default tie-break picks the higher column among equal values (note A3). */
static void test_tie_break(void **state)
{
	static const struct hb_sia_config cfg[3] = { { 0, 1, 1 }, { 1, 1, 1 }, { 2, 1, 1 } };
	static const double G[3] = { 1, 1, 1 };
	static const int cap[3] = { 1, 1, 1 };
	struct hb_sia_problem pb;
	struct hb_error err = { 0 };
	int choice[1];

	(void)state;
	hb_sia_problem_default(&pb);
	pb.njobs = 1;
	pb.nconfigs = 3;
	pb.ntypes = 3;
	pb.configs = cfg;
	pb.capacity = cap;
	pb.goodput = G;
	assert_int_equal(hb_sia_solve(&pb, NULL, choice, NULL, NULL, &err), 0);
	assert_int_equal(choice[0], 2);
}

static void test_malformed(void **state)
{
	static const struct hb_sia_config cfg[2] = { { 0, 1, 1 }, { 0, 1, 2 } };
	static const int cap[1] = { 2 };
	double G[2] = { 1, 2 };
	int prev[1] = { 5 }, choice[1];
	unsigned char pin[1] = { 1 };
	struct hb_sia_problem pb;
	struct hb_error err = { 0 };

	(void)state;
	hb_sia_problem_default(&pb);
	pb.njobs = 1;
	pb.nconfigs = 2;
	pb.ntypes = 1;
	pb.configs = cfg;
	pb.capacity = cap;
	pb.goodput = G;
	pb.prev = prev;
	assert_int_equal(hb_sia_solve(&pb, NULL, choice, NULL, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "previous configuration 5"));
	prev[0] = -1;
	pb.pinned = pin;
	assert_int_equal(hb_sia_solve(&pb, NULL, choice, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "pinned"));
	pb.pinned = NULL;
	G[1] = NAN;
	assert_int_equal(hb_sia_solve(&pb, NULL, choice, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "NaN"));
	G[1] = 2;
	pb.p = 0;
	assert_int_equal(hb_sia_solve(&pb, NULL, choice, NULL, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	pb.p = -0.5;
	assert_int_equal(hb_sia_solve(&pb, NULL, choice, NULL, NULL, &err), 0);
	assert_int_equal(choice[0], 1); /* 2^-0.5 = 0.71 beats 1 and the 1.1 of waiting */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_configs),
		cmocka_unit_test(test_restart_factor),
		cmocka_unit_test(test_normalise),
		cmocka_unit_test(test_table1),
		cmocka_unit_test(test_brute_force),
		cmocka_unit_test(test_tie_break),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
