/* PolluxSched's non-dominated sorting (sim/policies/pollux/arbiter_pollux.c,
 * survive and join_front): this executable compiles the arbiter with
 * POLLUX_FRONT_VERIFY, under which every front the binary search assigns
 * is also found by the linear scan it replaced, and counted as a mismatch
 * unless the two agree.  Searches on random problems whose speedups take
 * few values (whole GPUs, a coarse grid), so that objective vectors tie,
 * repeat and share one coordinate: the cases where a binary search over
 * the fronts could part from the scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "pollux_ga.h"
#include "rng.h"

extern long hb_pollux_front_verified, hb_pollux_front_mismatch;

/* Speedup of a dense row: its GPUs, weighted by node, rounded to a grid
 * of step 1 / q (q = 1: whole GPUs, so many rows tie). */
struct grid {
	double w[8];
	double q;
};

static int grid_speedup(void *ctx, int job, const int *row, double *out, struct hb_error *err)
{
	const struct grid *g = ctx;
	double s = 0.0;

	(void)err;
	for (int n = 0; n < 8; n++)
		s += g->w[n] * row[n];
	*out = floor(s * g->q / (1.0 + 0.25 * job)) / g->q;
	return 0;
}

static void test_fronts_match_scan(void **state)
{
	struct hb_rng rng;
	struct hb_error err = { 0 };
	long searches = 0;

	(void)state;
	hb_rng_seed(&rng, 77, 0);
	for (int trial = 0; trial < 300; trial++) {
		int J = 1 + (int)hb_rng_below(&rng, 8), N = 8, cap[8], base[64] = { 0 }, maxr[8];
		double factor[8];
		struct grid g = { { 0 }, trial % 3 == 0 ? 1.0 : 4.0 };
		struct hb_pollux_problem pb = { J, N, cap, base, maxr, factor, -1.0, 1e-3, 0.25, 4, grid_speedup, &g,
						NULL, NULL };
		struct hb_pollux_ga_opts o;
		struct hb_pollux_result res;

		for (int n = 0; n < N; n++) {
			cap[n] = 1 + (int)hb_rng_below(&rng, 8);
			g.w[n] = 0.5 + 0.5 * (double)hb_rng_below(&rng, 3);
		}
		for (int j = 0; j < J; j++) {
			maxr[j] = 1 + (int)hb_rng_below(&rng, 16);
			/* a few factor values: rows of equal speedup tie on FITNESS too */
			factor[j] = 0.25 * (double)hb_rng_below(&rng, 5);
		}
		hb_pollux_ga_opts_default(&o);
		o.generations = 20;
		o.stale_generations = 0;
		assert_int_equal(hb_pollux_search(&pb, NULL, 0, &o, &rng, &res, &err), 0);
		hb_pollux_result_free(&res);
		searches++;
	}
	print_message("searches %ld, fronts verified %ld, mismatches %ld\n", searches, hb_pollux_front_verified,
		      hb_pollux_front_mismatch);
	assert_true(hb_pollux_front_verified > 100000);
	assert_int_equal(hb_pollux_front_mismatch, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fronts_match_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
