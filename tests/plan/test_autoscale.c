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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_point_is_whole_epoch),
		cmocka_unit_test(test_multi_point_walk),
		cmocka_unit_test(test_short_epoch_stops_early_and_infeasible),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
