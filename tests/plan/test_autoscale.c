/* solver/autoscale: JABAS's epoch-time estimate (notes/jabas.md §4.3) on the
 * artifact's quick-start profile, against walks computed here step by step
 * from independent solver calls. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "autoscale.h"
#include "quickstart_fixture.h"

struct fx {
	struct hb_perf perf;
	struct hb_iidp_solver *s;
};

static int setup(void **state)
{
	static struct fx f;
	struct hb_error err = { 0 };

	if (qs_build(&f.perf, HB_SYNC_AUTO, &err) || hb_iidp_solver_new(&f.perf, &f.s, &err))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hb_iidp_solver_free(f->s);
	hb_perf_free(&f->perf);
	return 0;
}

static void solve(struct fx *f, const int *alloc, long gbs, long *bg, double *t)
{
	struct hb_iidp_request req = { .alloc = alloc, .global_bs = gbs, .m_rule = HB_IIDP_M_ROUND };
	struct hb_iidp_result r;
	struct hb_error err = { 0 };

	assert_int_equal(hb_iidp_solve(f->s, &req, &r, &err), 0);
	assert_true(r.found);
	*bg = r.global_bs;
	*t = r.iter_s;
	hb_iidp_result_free(&r);
}

/* solve() by another worker-count rule; *found = 0 when it has no answer. */
static void solve_rule(struct fx *f, const int *alloc, long gbs, int rule, int *found, long *bg, double *t)
{
	struct hb_iidp_request req = { .alloc = alloc, .global_bs = gbs, .m_rule = rule };
	struct hb_iidp_result r;
	struct hb_error err = { 0 };

	assert_int_equal(hb_iidp_solve(f->s, &req, &r, &err), 0);
	*found = r.found;
	*bg = r.global_bs;
	*t = r.iter_s;
	hb_iidp_result_free(&r);
}

static void test_single_point_is_whole_epoch(void **state)
{
	struct fx *f = *state;
	int alloc[2] = { 4, 0 };
	long traj[1] = { 128 }, bg;
	double t, D = 10000.0;
	struct hb_epoch_estimate e;
	struct hb_error err = { 0 };

	solve(f, alloc, 128, &bg, &t);
	assert_int_equal(hb_jabas_epoch_time(f->s, alloc, traj, 1, 100, 0, D, &e, &err), 0);
	assert_true(e.feasible);
	/* Last (only) point: floor(rem / b) + 1 steps. */
	assert_int_equal(e.iterations, (long)floor(D / 128.0) + 1);
	assert_true(fabs(e.epoch_s - t * (double)e.iterations) < 1e-9);
	assert_int_equal(e.first_local_bs, 32);
}

static void test_multi_point_walk(void **state)
{
	struct fx *f = *state;
	int alloc[2] = { 4, 4 };
	long traj[3] = { 256, 512, 1024 }, bg[3];
	double t[3], D = 200000.0, rem = D, T = 0;
	long steps_total = 0, p = 100, done = 30;
	struct hb_epoch_estimate e;
	struct hb_error err = { 0 };

	for (int k = 0; k < 3; k++)
		solve(f, alloc, traj[k], &bg[k], &t[k]);
	/* By hand: 70 steps, then 100 steps, then the rest at the last point. */
	T += 70 * t[0];
	rem -= 70.0 * (double)bg[0];
	T += 100 * t[1];
	rem -= 100.0 * (double)bg[1];
	steps_total = 170 + (long)floor(rem / (double)traj[2]) + 1;
	T += t[2] * (double)(floor(rem / (double)traj[2]) + 1);
	assert_int_equal(hb_jabas_epoch_time(f->s, alloc, traj, 3, p, done, D, &e, &err), 0);
	assert_int_equal(e.iterations, steps_total);
	assert_true(fabs(e.epoch_s - T) < 1e-9 * T);
}

static void test_short_epoch_stops_early_and_infeasible(void **state)
{
	struct fx *f = *state;
	int all[2] = { 4, 4 };
	long traj[2] = { 128, 256 };
	struct hb_epoch_estimate e;
	struct hb_error err = { 0 };

	/* 8 GPUs cannot run B_G 128 at B_L >= 32 (M = 2 < N_H = 4). */
	assert_int_equal(hb_jabas_epoch_time(f->s, all, traj, 2, 100, 0, 1e6, &e, &err), 0);
	assert_false(e.feasible);
	assert_true(isinf(e.epoch_s));
	/* An epoch shorter than one block ends inside the first point. */
	{
		int v100[2] = { 4, 0 };

		assert_int_equal(hb_jabas_epoch_time(f->s, v100, traj, 2, 100, 0, 1000.0, &e, &err), 0);
		assert_int_equal(e.iterations, (long)floor(1000.0 / 128.0) + 1);
	}
	assert_int_equal(hb_jabas_epoch_time(f->s, all, traj, 0, 100, 0, 1e6, &e, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

/* The first point's rule (autoscale.h struct hb_jabas_first) solves every
 * point of the first point's value, not the first alone: the job holds the
 * current B_G's configuration until B_G moves, and the artifact pins every
 * point equal to the current B_G (AutoScalingConfigurator.estimate_epoch_
 * time).  On batches where Algorithm 1 rounds to another B_G or time than
 * the exact rule, the walk of [b, b, c] must be 70 + 100 steps of b's exact
 * answer, then c by Algorithm 1; solving the repeated b by Algorithm 1
 * fails it. */
static void test_first_rule_holds_for_repeated_point(void **state)
{
	struct fx *f = *state;
	static const int allocs[3][2] = { { 4, 0 }, { 4, 4 }, { 0, 4 } };
	const struct hb_jabas_first exact = { HB_IIDP_M_EXACT, 0 };
	int checked = 0;

	for (int a = 0; a < 3; a++) {
		for (long b = 64; b <= 2048; b += 32) {
			long be, br, bc, last, c = b + 96, traj[3] = { b, b, c };
			double te, tr, tc, D = 1e6, rem = D, T = 0;
			int fe, fr, fc;
			struct hb_iidp_shape sh = { 0 };
			struct hb_epoch_estimate e;
			struct hb_error err = { 0 };

			solve_rule(f, allocs[a], b, HB_IIDP_M_EXACT, &fe, &be, &te);
			solve_rule(f, allocs[a], b, HB_IIDP_M_ROUND, &fr, &br, &tr);
			solve_rule(f, allocs[a], c, HB_IIDP_M_ROUND, &fc, &bc, &tc);
			if (!fe || !fr || !fc || (br == be && tr == te))
				continue;
			assert_int_equal(be, b);
			T = 70 * te + 100 * te;
			rem -= 170.0 * (double)b;
			/* the last point: floor(rem / c) + 1 steps, fewer if its
			 * realised bc would overshoot the epoch */
			last = (long)floor(rem / (double)c) + 1;
			if (rem - (double)bc * (double)last < 0)
				last = (long)floor(rem / (double)bc) + 1;
			T += tc * (double)last;
			assert_int_equal(hb_iidp_shape_of(f->s, allocs[a], &sh, &err), 0);
			assert_int_equal(hb_jabas_epoch_time_shape(f->s, &sh, traj, 3, 100, 30, D, &exact, &e, &err), 0);
			hb_iidp_shape_free(&sh);
			assert_true(e.feasible);
			assert_int_equal(e.iterations, 170 + last);
			assert_true(fabs(e.epoch_s - T) <= 1e-9 * T);
			checked++;
		}
	}
	/* batches where the rules differ exist on this profile */
	assert_true(checked >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_point_is_whole_epoch),
		cmocka_unit_test(test_multi_point_walk),
		cmocka_unit_test(test_short_epoch_stops_early_and_infeasible),
		cmocka_unit_test(test_first_rule_holds_for_repeated_point),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
