/* Unit tests for forecast/forecast: the method combinations, which history
 * each model sees, query points and MAPE. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "forecast.h"

#define NH 30   /* history points: two epochs, 18 + 12 */
#define EPOCH2 18
#define NQ 10

static double steps[NH], batch[NH], query[NQ];

static void assert_rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
		fail_msg("got %.17g, want %.17g (tolerance %g relative)", got, want, tol);
}

static int setup(void **state)
{
	(void)state;
	for (int i = 0; i < NH; i++) {
		steps[i] = 100.0 * (i + 1);
		/* the first epoch sits far lower, so a GPR that saw it would differ */
		batch[i] = (i < EPOCH2 ? 64.0 : 320.0) * exp(0.03 * i) * (1.0 + 0.1 * sin(2.0 * M_PI * i / 3.0));
	}
	hb_fc_query_steps(steps[NH - 1], 100.0, 100.0 * NQ, query, NQ);
	return 0;
}

static struct hb_fc_history history(void)
{
	return (struct hb_fc_history){ .step = steps, .batch = batch, .n = NH, .epoch_start = EPOCH2 };
}

static void test_ensemble_is_the_average_of_gpr_and_ses(void **state)
{
	const enum hb_fc_method ms[3] = { HB_FC_ENSEMBLE, HB_FC_GPR, HB_FC_SES };
	struct hb_fc_history h = history();
	struct hb_fc_options o;
	struct hb_fc_fit fit;
	double out[3 * NQ];
	struct hb_error err = { 0 };

	(void)state;
	hb_fc_options_default(&o, 1);
	assert_int_equal(hb_forecast_run(&h, &o, ms, 3, query, NQ, out, &fit, &err), 0);
	assert_true(fit.have_gpr && fit.have_ses && !fit.have_holt);
	for (int j = 0; j < NQ; j++) {
		assert_rel(out[j], 0.5 * out[NQ + j] + 0.5 * out[2 * NQ + j], 1e-14);
		assert_true(out[2 * NQ + j] == fit.ses.level); /* SES is flat */
	}
	/* and the single-method call gives the same numbers */
	for (int k = 0; k < 3; k++) {
		double one[NQ];

		assert_int_equal(hb_forecast(ms[k], &h, &o, query, NQ, one, &err), 0);
		assert_memory_equal(one, out + k * NQ, sizeof(one));
	}
}

static void test_gpr_sees_the_current_epoch_and_ses_all_history(void **state)
{
	const enum hb_fc_method ms[2] = { HB_FC_GPR, HB_FC_SES };
	struct hb_fc_history h = history();
	struct hb_fc_options o;
	struct hb_gpr g;
	struct hb_ses s;
	double out[2 * NQ], direct[NQ];
	struct hb_error err = { 0 };

	(void)state;
	hb_fc_options_default(&o, 4);
	assert_int_equal(hb_forecast_run(&h, &o, ms, 2, query, NQ, out, NULL, &err), 0);
	assert_int_equal(hb_gpr_fit(&g, steps + EPOCH2, batch + EPOCH2, NH - EPOCH2, &o.gpr, &err), 0);
	hb_gpr_predict(&g, query, NQ, direct);
	hb_gpr_free(&g);
	assert_memory_equal(out, direct, sizeof(direct));
	assert_int_equal(hb_ses_fit(batch, NH, &s, &err), 0);
	for (int j = 0; j < NQ; j++)
		assert_true(out[NQ + j] == s.level);
}

/* An epoch longer than HB_FC_GPR_WINDOW: the GPR trains on its last
 * HB_FC_GPR_WINDOW points, exactly as a fit on those points alone, and says
 * how many there were (issue 16 item 6: 1,000 rows took 97 s). */
static void test_gpr_window_is_the_epochs_last_points(void **state)
{
	enum { N = HB_FC_GPR_WINDOW + 44 };
	const enum hb_fc_method m = HB_FC_GPR;
	double *st = malloc(N * sizeof(double)), *bs = malloc(N * sizeof(double)), out[NQ], direct[NQ], q[NQ];
	struct hb_fc_history h;
	struct hb_fc_options o;
	struct hb_fc_fit fit;
	struct hb_gpr g;
	struct hb_error err = { 0 };

	(void)state;
	assert_non_null(st);
	assert_non_null(bs);
	for (int i = 0; i < N; i++) {
		st[i] = 100.0 * (i + 1);
		/* the skipped head differs, so a fit that saw it would differ */
		bs[i] = (i < N - HB_FC_GPR_WINDOW ? 50.0 : 400.0) * (1.0 + 0.1 * sin(2.0 * M_PI * i / 3.0));
	}
	h = (struct hb_fc_history){ .step = st, .batch = bs, .n = N, .epoch_start = 0 };
	hb_fc_query_steps(st[N - 1], 100.0, 100.0 * NQ, q, NQ);
	hb_fc_options_default(&o, 3);
	o.gpr.restarts = 0; /* one start: the window, not the optimiser, is under test */
	assert_int_equal(hb_forecast_run(&h, &o, &m, 1, q, NQ, out, &fit, &err), 0);
	assert_int_equal(fit.gpr_points, HB_FC_GPR_WINDOW);
	assert_int_equal(fit.gpr_epoch_points, N);
	assert_int_equal(hb_gpr_fit(&g, st + (N - HB_FC_GPR_WINDOW), bs + (N - HB_FC_GPR_WINDOW), HB_FC_GPR_WINDOW,
				    &o.gpr, &err),
			 0);
	hb_gpr_predict(&g, q, NQ, direct);
	hb_gpr_free(&g);
	assert_memory_equal(out, direct, sizeof(direct));
	free(st);
	free(bs);
}

static void test_gpr_x_scale_feeds_adaptation_indices(void **state)
{
	struct hb_fc_history h = history();
	struct hb_fc_options o;
	struct hb_gpr g;
	double out[NQ], direct[NQ], x[NH - EPOCH2], xq[NQ];
	struct hb_error err = { 0 };

	(void)state;
	hb_fc_options_default(&o, 2);
	o.gpr_x_scale = o.interval;
	assert_int_equal(hb_forecast(HB_FC_GPR, &h, &o, query, NQ, out, &err), 0);
	for (int i = 0; i < NH - EPOCH2; i++)
		x[i] = steps[EPOCH2 + i] / 100.0;
	for (int j = 0; j < NQ; j++)
		xq[j] = query[j] / 100.0;
	assert_int_equal(hb_gpr_fit(&g, x, batch + EPOCH2, NH - EPOCH2, &o.gpr, &err), 0);
	hb_gpr_predict(&g, xq, NQ, direct);
	hb_gpr_free(&g);
	assert_memory_equal(out, direct, sizeof(direct));
}

static void test_last_value_and_holt_horizon(void **state)
{
	const enum hb_fc_method ms[2] = { HB_FC_LAST, HB_FC_HOLT };
	double line[12], st[12], q[3] = { 1300.0, 1500.0, 1249.0 }, out[6];
	struct hb_fc_history h = { .step = st, .batch = line, .n = 12, .epoch_start = 0 };
	struct hb_fc_options o;
	struct hb_error err = { 0 };

	(void)state;
	for (int i = 0; i < 12; i++) {
		st[i] = 100.0 * (i + 1);
		line[i] = 256.0 + 16.0 * i;
	}
	hb_fc_options_default(&o, 1);
	assert_int_equal(hb_forecast_run(&h, &o, ms, 2, q, 3, out, NULL, &err), 0);
	for (int j = 0; j < 3; j++)
		assert_true(out[j] == line[11]);
	/* Holt's horizon is (step - last step) / p adaptations, rounded */
	assert_rel(out[3], line[11] + 16.0 * 1, 1e-9);
	assert_rel(out[4], line[11] + 16.0 * 3, 1e-9);
	assert_rel(out[5], line[11] + 16.0, 1e-9); /* 0.49 rounds to 0, clamped to 1 */
	/* a one-point history: Holt falls back to the last value */
	h.n = 1;
	assert_int_equal(hb_forecast(HB_FC_HOLT, &h, &o, q, 3, out, &err), 0);
	assert_true(out[0] == line[0] && out[2] == line[0]);
}

static void test_query_steps(void **state)
{
	double out[32];

	(void)state;
	/* x_i = sync + p i, i = 1..floor(epoch_steps / p) */
	assert_int_equal(hb_fc_query_steps(6000.0, 100.0, 2050.0, out, 32), 20);
	assert_true(out[0] == 6100.0 && out[19] == 8000.0);
	assert_int_equal(hb_fc_query_steps(6000.0, 100.0, 5000.0, out, 32), 50); /* count beyond cap */
	assert_true(out[31] == 9200.0);
	assert_int_equal(hb_fc_query_steps(6000.0, 100.0, 99.0, out, 32), 0);
}

static void test_mape_hand_computation(void **state)
{
	const double actual[3] = { 100.0, 200.0, 400.0 }, pred[3] = { 110.0, 180.0, 400.0 };
	const double zero[1] = { 0.0 };
	double pct;
	struct hb_error err = { 0 };

	(void)state;
	/* (10 % + 10 % + 0 %) / 3 */
	assert_int_equal(hb_mape(actual, pred, 3, &pct, &err), 0);
	assert_rel(pct, 20.0 / 3.0, 1e-14);
	assert_int_equal(hb_mape(actual, pred, 0, &pct, &err), -1);
	assert_int_equal(hb_mape(zero, pred, 1, &pct, &err), -1);
	assert_non_null(strstr(err.msg, "actual 0"));
}

static void test_method_names(void **state)
{
	enum hb_fc_method m;
	struct hb_error err = { 0 };

	(void)state;
	for (int k = 0; k < HB_FC_NMETHODS; k++) {
		assert_int_equal(hb_fc_method_parse(hb_fc_method_name((enum hb_fc_method)k), &m, &err), 0);
		assert_int_equal(m, k);
	}
	assert_int_equal(hb_fc_method_parse("arima", &m, &err), -1);
	assert_non_null(strstr(err.msg, "'arima'"));
}

static void test_bad_history(void **state)
{
	double st[3] = { 100, 200, 200 }, b[3] = { 1, 2, 3 }, out[NQ];
	struct hb_fc_history h = { .step = st, .batch = b, .n = 3, .epoch_start = 0 };
	struct hb_fc_options o;
	struct hb_error err = { 0 };

	(void)state;
	hb_fc_options_default(&o, 1);
	assert_int_equal(hb_forecast(HB_FC_LAST, &h, &o, query, NQ, out, &err), -1);
	assert_non_null(strstr(err.msg, "not after"));
	st[2] = 300;
	b[1] = -4;
	assert_int_equal(hb_forecast(HB_FC_LAST, &h, &o, query, NQ, out, &err), -1);
	assert_non_null(strstr(err.msg, "must be > 0"));
	b[1] = 2;
	h.epoch_start = 3;
	assert_int_equal(hb_forecast(HB_FC_GPR, &h, &o, query, NQ, out, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

/* A flat history (every B_G one value, as when B_G sits at a bound): the
 * trajectory skips the fits (forecast.c, flat_history), and what the fits
 * would have said is that value exactly, for the ensemble (with and
 * without its GPR half), GPR, SES and "last"; the trajectory then holds it
 * clipped to the bounds. */
static void test_flat_history_trajectory(void **state)
{
	static const enum hb_fc_method methods[] = { HB_FC_ENSEMBLE, HB_FC_GPR, HB_FC_SES, HB_FC_LAST };
	double st[40], bs[40];

	(void)state;
	for (int n = 1; n <= 40; n += 3) {
		for (size_t mi = 0; mi < sizeof(methods) / sizeof(methods[0]); mi++) {
			for (int ep = 0; ep < 2; ep++) {
				const double b = 96.0 + 32.0 * n;
				struct hb_fc_history h = { .step = st, .batch = bs, .n = (size_t)n,
							   .epoch_start = ep ? (size_t)(n / 2) : 0 };
				struct hb_fc_options o;
				struct hb_fc_traj_spec sp = { .method = methods[mi], .seed = 7 + (uint64_t)n, .interval = 100,
							      .sync_step = 0, .dataset = 450 * b, .cur_bs = (long)b,
							      .min_bs = 64, .max_bs = (long)b - (ep ? 32 : 0) };
				enum hb_fc_method m = methods[mi];
				double q[40], pred[40];
				long *traj = NULL;
				size_t nt = 0, nq;
				struct hb_error err = { 0 };

				for (int i = 0; i < n; i++) {
					st[i] = 100.0 * (i + 1) + 13.0;
					bs[i] = b;
				}
				sp.sync_step = st[n - 1];
				assert_int_equal(hb_fc_trajectory(&h, &sp, &traj, &nt, &err), 0);
				nq = hb_fc_query_steps(sp.sync_step, 100.0, floor(sp.dataset / b), q, 40);
				assert_int_equal(nq, 4);
				assert_int_equal(nt, nq + 1);
				/* The fit the trajectory skipped, run as it would have run. */
				hb_fc_options_default(&o, sp.seed);
				o.interval = 100;
				o.gpr.restarts = 9;
				if (m == HB_FC_ENSEMBLE && h.n - h.epoch_start < 3)
					m = HB_FC_SES;
				assert_int_equal(hb_forecast(m, &h, &o, q, nq, pred, &err), 0);
				for (size_t j = 0; j < nq; j++) {
					assert_true(pred[j] == b);
					assert_int_equal(traj[1 + j], (long)fmin(b, (double)sp.max_bs));
				}
				free(traj);
			}
		}
	}
}

/* A current epoch flat at B after a history that is not (B_G grew, then
 * sits at a bound): the trajectory skips the GPR half only (forecast.c,
 * flat_gpr_window), and each point is the one the full ensemble fit gives,
 * rounded and clipped the same way.  A GPR window reaching back into the
 * growth (epoch_start 0) still runs the fit, as the reference does. */
static void test_flat_gpr_window_trajectory(void **state)
{
	double st[60], bs[60];

	(void)state;
	for (int n = 6; n <= 60; n += 9) {
		for (int ep = 0; ep < 3; ep++) {
			const double b = 1024.0;
			const size_t epoch_start = ep == 0 ? 0 : ep == 1 ? (size_t)(n / 2) : (size_t)n - 3;
			struct hb_fc_history h = { .step = st, .batch = bs, .n = (size_t)n, .epoch_start = epoch_start };
			struct hb_fc_options o;
			struct hb_fc_traj_spec sp = { .method = HB_FC_ENSEMBLE, .seed = 11 + (uint64_t)n, .interval = 100,
						      .dataset = 900 * b, .cur_bs = (long)b, .min_bs = 64, .max_bs = 4096 };
			double q[40], pred[40];
			long *traj = NULL;
			size_t nt = 0, nq;
			struct hb_error err = { 0 };

			/* growth up to b before the current epoch, b from it on */
			for (int i = 0; i < n; i++) {
				st[i] = 100.0 * (i + 1) + 7.0;
				bs[i] = (size_t)i < (epoch_start ? epoch_start : (size_t)n / 2) ? 256.0 + 24.0 * i : b;
			}
			sp.sync_step = st[n - 1];
			assert_int_equal(hb_fc_trajectory(&h, &sp, &traj, &nt, &err), 0);
			nq = hb_fc_query_steps(sp.sync_step, 100.0, floor(sp.dataset / b), q, 40);
			assert_int_equal(nt, nq + 1);
			hb_fc_options_default(&o, sp.seed);
			o.interval = 100;
			o.gpr.restarts = 9;
			assert_int_equal(hb_forecast(HB_FC_ENSEMBLE, &h, &o, q, nq, pred, &err), 0);
			for (size_t j = 0; j < nq; j++) {
				double r = fmin(fmax(floor(pred[j] + 0.5), 64.0), 4096.0);

				assert_int_equal(traj[1 + j], (long)r);
				/* the GPR half of a flat window is b: the point lies
				 * strictly between the SES level and b, or is b */
				if (ep > 0)
					assert_true(pred[j] <= b);
			}
			free(traj);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ensemble_is_the_average_of_gpr_and_ses),
		cmocka_unit_test(test_gpr_sees_the_current_epoch_and_ses_all_history),
		cmocka_unit_test(test_gpr_x_scale_feeds_adaptation_indices),
		cmocka_unit_test(test_gpr_window_is_the_epochs_last_points),
		cmocka_unit_test(test_last_value_and_holt_horizon),
		cmocka_unit_test(test_query_steps),
		cmocka_unit_test(test_mape_hand_computation),
		cmocka_unit_test(test_method_names),
		cmocka_unit_test(test_bad_history),
		cmocka_unit_test(test_flat_history_trajectory),
		cmocka_unit_test(test_flat_gpr_window_trajectory),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
