/* The forecaster on a thread pool (common/pool.h) gives the very bits of
 * the serial path for 1, 2, 3 and 4 threads: GPR fits (hyper-parameters,
 * likelihoods, start counters, alpha, predictions), SES fits on series long
 * enough to split the weight grid, hb_forecast_run's fits and forecasts
 * with SES beside the GPR, and JABAS trajectories.  Compared with memcmp,
 * not tolerances: the pool must change nothing but the time.  A caller's
 * task beside the trajectory (hb_fc_traj_spec beside) runs exactly once on
 * every path, and changes nothing either. */
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
#include "pool.h"
#include "rng.h"

#define MAXTHREADS 4
#define NSERIES 6
#define NPTS 40
#define NQ 12

static struct hb_pool *pools[MAXTHREADS + 1]; /* [t]: t threads; [1] NULL, the serial path */

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	for (int t = 1; t <= MAXTHREADS; t++)
		if (hb_pool_create(&pools[t], t, &err) < 0)
			return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int t = 1; t <= MAXTHREADS; t++)
		hb_pool_destroy(pools[t]);
	return 0;
}

/* A JABAS-like B_G series: growth, a period-3 wobble, noise; kind varies
 * the shape so that the starts end in different optima. */
static void series(uint64_t seed, int kind, double *x, double *y, size_t n)
{
	struct hb_rng r;

	hb_rng_seed(&r, seed, HB_STREAM_DEFAULT);
	for (size_t i = 0; i < n; i++) {
		x[i] = 100.0 * (double)(i + 1) + (kind == 2 ? 37.0 * hb_rng_uniform(&r) : 0.0);
		y[i] = 256.0 * exp((kind == 1 ? 0.05 : 0.01) * (double)i) *
			       (1.0 + 0.1 * sin(2.0 * M_PI * (double)i / 3.0)) +
		       (kind == 3 ? 40.0 : 6.0) * hb_rng_normal(&r);
	}
}

static void assert_same_bits(const void *a, const void *b, size_t size, const char *what, int t)
{
	if (memcmp(a, b, size) != 0)
		fail_msg("%s differs with %d threads", what, t);
}

static void test_gpr_fit_same_bits(void **state)
{
	double x[NPTS], y[NPTS], xq[NQ];

	(void)state;
	for (int s = 0; s < NSERIES; s++) {
		const size_t n = (size_t)(8 + 6 * s);
		struct hb_gpr ref;
		double pref[NQ];
		struct hb_gpr_config cfg;
		struct hb_error err = { 0 };

		series(100 + (uint64_t)s, s % 4, x, y, n);
		for (int j = 0; j < NQ; j++)
			xq[j] = x[n - 1] + 50.0 * (j + 1);
		hb_gpr_config_default(&cfg, 7 + (uint64_t)s);
		cfg.restarts = 9 + s % 3;  /* fewer and more starts than threads * 3 */
		assert_int_equal(hb_gpr_fit(&ref, x, y, n, &cfg, &err), 0);
		hb_gpr_predict(&ref, xq, NQ, pref);
		assert_int_equal(ref.starts, cfg.restarts + 1);
		for (int t = 1; t <= MAXTHREADS; t++) {
			struct hb_gpr g;
			double p[NQ];

			cfg.pool = pools[t];
			assert_int_equal(hb_gpr_fit(&g, x, y, n, &cfg, &err), 0);
			hb_gpr_predict(&g, xq, NQ, p);
			assert_same_bits(&g.hyper, &ref.hyper, sizeof(g.hyper), "hyper", t);
			assert_same_bits(&g.lml, &ref.lml, sizeof(g.lml), "lml", t);
			assert_same_bits(&g.lml_init, &ref.lml_init, sizeof(g.lml_init), "lml_init", t);
			assert_int_equal(g.starts, ref.starts);
			assert_int_equal(g.starts_finite, ref.starts_finite);
			assert_same_bits(&g.y_mean, &ref.y_mean, sizeof(g.y_mean), "y_mean", t);
			assert_same_bits(&g.y_scale, &ref.y_scale, sizeof(g.y_scale), "y_scale", t);
			assert_int_equal(g.n, ref.n);
			assert_same_bits(g.alpha, ref.alpha, n * sizeof(double), "alpha", t);
			assert_same_bits(p, pref, sizeof(p), "prediction", t);
			hb_gpr_free(&g);
		}
		hb_gpr_free(&ref);
	}
}

/* Past SES_POOL_MIN points the weight grid's lane blocks go to the pool. */
static void test_ses_fit_same_bits(void **state)
{
	const size_t sizes[] = { 1, 2, 50, 2047, 2048, 5000 };

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		const size_t n = sizes[k];
		double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
		struct hb_ses ref;
		struct hb_error err = { 0 };

		assert_non_null(x);
		assert_non_null(y);
		series(200 + k, (int)(k % 4), x, y, n);
		assert_int_equal(hb_ses_fit(y, n, &ref, &err), 0);
		for (int t = 1; t <= MAXTHREADS; t++) {
			struct hb_ses m;

			assert_int_equal(hb_ses_fit_on(y, n, pools[t], &m, &err), 0);
			assert_same_bits(&m.alpha, &ref.alpha, sizeof(double), "SES alpha", t);
			assert_same_bits(&m.level0, &ref.level0, sizeof(double), "SES level0", t);
			assert_same_bits(&m.level, &ref.level, sizeof(double), "SES level", t);
			assert_same_bits(&m.sse, &ref.sse, sizeof(double), "SES sse", t);
			assert_int_equal(m.n, ref.n);
		}
		free(x);
		free(y);
	}
}

/* Field by field: a struct copy need not copy padding. */
static void assert_same_fit(const struct hb_fc_fit *a, const struct hb_fc_fit *b, int t)
{
	assert_int_equal(a->have_gpr, b->have_gpr);
	assert_int_equal(a->have_ses, b->have_ses);
	assert_int_equal(a->have_holt, b->have_holt);
	assert_same_bits(&a->gpr_hyper, &b->gpr_hyper, sizeof(a->gpr_hyper), "fit GPR hyper", t);
	assert_same_bits(&a->gpr_lml, &b->gpr_lml, sizeof(double), "fit GPR lml", t);
	assert_int_equal(a->gpr_points, b->gpr_points);
	assert_int_equal(a->gpr_epoch_points, b->gpr_epoch_points);
	assert_int_equal(a->smooth_points, b->smooth_points);
	assert_same_bits(&a->ses.alpha, &b->ses.alpha, sizeof(double), "fit SES alpha", t);
	assert_same_bits(&a->ses.level0, &b->ses.level0, sizeof(double), "fit SES level0", t);
	assert_same_bits(&a->ses.level, &b->ses.level, sizeof(double), "fit SES level", t);
	assert_same_bits(&a->ses.sse, &b->ses.sse, sizeof(double), "fit SES sse", t);
	assert_same_bits(&a->holt.level, &b->holt.level, sizeof(double), "fit Holt level", t);
	assert_same_bits(&a->holt.trend, &b->holt.trend, sizeof(double), "fit Holt trend", t);
}

/* Every method at once: SES runs beside the GPR's starts. */
static void test_forecast_run_same_bits(void **state)
{
	static const enum hb_fc_method ms[] = { HB_FC_ENSEMBLE, HB_FC_GPR, HB_FC_SES, HB_FC_HOLT, HB_FC_LAST };
	enum { NM = sizeof(ms) / sizeof(ms[0]), NH = 3000 };
	double *st = malloc(NH * sizeof(double)), *bs = malloc(NH * sizeof(double)), q[NQ];

	(void)state;
	assert_non_null(st);
	assert_non_null(bs);
	for (int s = 0; s < 4; s++) {
		/* a long history (SES's grid on the pool when alone, n >= 2048) and a short one */
		const size_t n = s % 2 ? NH : 60, epoch_start = n - (size_t)(10 + 5 * s);
		const struct hb_fc_history h = { .step = st, .batch = bs, .n = n, .epoch_start = epoch_start };
		struct hb_fc_options o;
		struct hb_fc_fit fref;
		double ref[NM * NQ];
		struct hb_error err = { 0 };

		series(300 + (uint64_t)s, s, st, bs, n);
		for (int j = 0; j < NQ; j++)
			q[j] = st[n - 1] + 100.0 * (j + 1);
		hb_fc_options_default(&o, 11 + (uint64_t)s);
		memset(&fref, 0, sizeof(fref));
		assert_int_equal(hb_forecast_run(&h, &o, ms, NM, q, NQ, ref, &fref, &err), 0);
		for (int t = 1; t <= MAXTHREADS; t++) {
			struct hb_fc_fit f;
			double out[NM * NQ], one[NQ];

			o.gpr.pool = pools[t];
			memset(&f, 0, sizeof(f));
			assert_int_equal(hb_forecast_run(&h, &o, ms, NM, q, NQ, out, &f, &err), 0);
			assert_same_bits(out, ref, sizeof(out), "forecasts", t);
			assert_same_fit(&f, &fref, t);
			/* SES alone: its grid on the pool */
			assert_int_equal(hb_forecast(HB_FC_SES, &h, &o, q, NQ, one, &err), 0);
			assert_same_bits(one, ref + 2 * NQ, sizeof(one), "SES forecast", t);
		}
	}
	free(st);
	free(bs);
}

static void test_trajectory_same_bits(void **state)
{
	double st[NPTS], bs[NPTS];

	(void)state;
	for (int s = 0; s < NSERIES; s++) {
		const size_t n = (size_t)(10 + 5 * s);
		const struct hb_fc_history h = { .step = st, .batch = bs, .n = n, .epoch_start = (size_t)s };
		struct hb_fc_traj_spec sp = { .method = HB_FC_ENSEMBLE, .seed = hb_fc_epoch_seed(1, s, 2),
					      .interval = 100, .dataset = 2e6, .min_bs = 64, .max_bs = 8192 };
		long *ref = NULL;
		size_t nref = 0;
		struct hb_error err = { 0 };

		series(400 + (uint64_t)s, s % 4, st, bs, n);
		for (size_t i = 0; i < n; i++)
			bs[i] = floor(bs[i]);
		sp.sync_step = st[n - 1];
		sp.cur_bs = (long)bs[n - 1];
		assert_int_equal(hb_fc_trajectory(&h, &sp, &ref, &nref, &err), 0);
		assert_true(nref > 1);
		for (int t = 1; t <= MAXTHREADS; t++) {
			long *tr = NULL;
			size_t nt = 0;

			sp.pool = pools[t];
			assert_int_equal(hb_fc_trajectory(&h, &sp, &tr, &nt, &err), 0);
			assert_int_equal(nt, nref);
			assert_same_bits(tr, ref, nt * sizeof(long), "trajectory", t);
			free(tr);
		}
		free(ref);
	}
}

/* The caller's task beside the fits: counts its runs and does real work
 * (a sum over a few thousand numbers), so that it overlaps the starts. */
struct beside_probe {
	int runs;
	int task, worker; /* as handed to it; checked on the test's thread */
	double sum;
};

static void beside_probe_run(void *ctx, int task, int worker)
{
	struct beside_probe *b = ctx;

	b->task = task;
	b->worker = worker;
	b->runs++;
	b->sum = 0.0;
	for (int i = 1; i <= 4096; i++)
		b->sum += 1.0 / i;
}

/* Every path of hb_fc_trajectory: fits with the GPR's batch (history with a
 * current epoch of 3+ points), SES alone (fewer), a flat history (no fit),
 * a flat GPR window (SES only), no history, an epoch shorter than p, and a
 * refused spec: the task runs exactly once and the trajectory is the one
 * without it, for 1..MAXTHREADS threads. */
static void test_trajectory_beside_once(void **state)
{
	double st[NPTS], bs[NPTS];

	(void)state;
	for (int path = 0; path < 7; path++) {
		size_t n = 20, epoch_start = 4;
		struct hb_fc_traj_spec sp = { .method = HB_FC_ENSEMBLE, .seed = hb_fc_epoch_seed(3, path, 1),
					      .interval = 100, .dataset = 2e6, .min_bs = 64, .max_bs = 8192 };
		long *ref = NULL;
		size_t nref = 0;
		int ref_rc;
		struct hb_error err = { 0 };

		series(900 + (uint64_t)path, path % 4, st, bs, NPTS);
		for (size_t i = 0; i < NPTS; i++)
			bs[i] = floor(bs[i]);
		if (path == 1)
			epoch_start = n - 2; /* SES alone */
		if (path == 2)
			for (size_t i = 0; i < n; i++)
				bs[i] = 512; /* flat history */
		if (path == 3)
			for (size_t i = epoch_start; i < n; i++)
				bs[i] = 1024; /* flat GPR window */
		if (path == 4)
			n = 0; /* no history */
		sp.sync_step = n ? st[n - 1] : 0;
		sp.cur_bs = n ? (long)bs[n - 1] : 256;
		if (path == 5)
			sp.dataset = 50.0 * (double)sp.cur_bs; /* 50 steps < p */
		if (path == 6)
			sp.interval = 0; /* refused */
		{
			const struct hb_fc_history h = { .step = st, .batch = bs, .n = n, .epoch_start = epoch_start };

			ref_rc = hb_fc_trajectory(&h, &sp, &ref, &nref, &err);
			assert_int_equal(ref_rc, path == 6 ? -1 : 0);
			for (int t = 1; t <= MAXTHREADS; t++) {
				struct beside_probe probe = { 0 };
				long *tr = NULL;
				size_t nt = 0;

				sp.pool = pools[t];
				sp.beside = beside_probe_run;
				sp.beside_ctx = &probe;
				assert_int_equal(hb_fc_trajectory(&h, &sp, &tr, &nt, &err), ref_rc);
				assert_int_equal(probe.runs, 1);
				assert_int_equal(probe.task, 0);
				assert_true(probe.worker >= 0 && probe.worker < t);
				assert_true(probe.sum > 8.0);
				assert_int_equal(nt, nref);
				if (ref_rc == 0)
					assert_same_bits(tr, ref, nt * sizeof(long), "trajectory beside a task", t);
				free(tr);
				sp.beside = NULL;
			}
		}
		free(ref);
	}
}

/* Fits made ahead (hb_fc_prefit), on every path of hb_fc_trajectory and on
 * 1..MAXTHREADS threads (a fit made on a pool, and a worker's claim): the
 * trajectory from them is the one without them, bit for bit; they are used
 * (a tampered SES level moves the trajectory) exactly when their history,
 * seed and method are the trajectory's (a changed batch, seed, epoch start
 * or method leaves it as without them); and posted as a background task
 * and claimed, they are the same. */
static void prefit_bg(void *ctx, int task, int worker)
{
	(void)task;
	(void)worker;
	hb_fc_prefit_run(ctx);
}

static void test_trajectory_prefit(void **state)
{
	double st[NPTS], bs[NPTS];

	(void)state;
	for (int path = 0; path < 4; path++) {
		size_t n = 24, epoch_start = 6;
		struct hb_fc_traj_spec sp = { .method = HB_FC_ENSEMBLE, .seed = hb_fc_epoch_seed(5, path, 2),
					      .interval = 100, .dataset = 2e6, .min_bs = 64, .max_bs = 1e9 };
		long *ref = NULL;
		size_t nref = 0;
		struct hb_error err = { 0 };

		series(1700 + (uint64_t)path, path % 4, st, bs, NPTS);
		for (size_t i = 0; i < NPTS; i++)
			bs[i] = floor(bs[i]);
		if (path == 1)
			epoch_start = n - 2; /* SES alone */
		if (path == 2)
			for (size_t i = 0; i < n; i++)
				bs[i] = 512; /* flat history: nothing to fit */
		if (path == 3)
			for (size_t i = epoch_start; i < n; i++)
				bs[i] = 1024; /* flat GPR window: SES only */
		sp.sync_step = st[n - 1];
		sp.cur_bs = (long)bs[n - 1];
		for (int t = 1; t <= MAXTHREADS; t++) {
			struct hb_fc_history h = { .step = st, .batch = bs, .n = n, .epoch_start = epoch_start };
			struct hb_fc_prefit pre;
			struct hb_pool_bg bg = { 0 };
			long *tr = NULL;
			size_t nt = 0;
			int ran;

			sp.pool = pools[t];
			sp.prefit = NULL;
			assert_int_equal(hb_fc_trajectory(&h, &sp, &ref, &nref, &err), 0);
			assert_int_equal(hb_fc_prefit_wanted(&h, sp.method), path != 2);
			hb_fc_prefit_init(&pre);
			assert_int_equal(hb_fc_prefit_set(&pre, &h, sp.method, sp.seed, pools[t], &err), 0);
			ran = hb_pool_post(pools[t], &bg, prefit_bg, &pre);
			assert_int_equal(ran, t > 1);
			if (!hb_pool_claim(pools[t], &bg))
				hb_fc_prefit_run(&pre); /* not started (or no worker): here */
			assert_int_equal(pre.gpr_fitted, path == 0);
			assert_int_equal(pre.ses_fitted, path != 2);
			sp.prefit = &pre;
			assert_int_equal(hb_fc_trajectory(&h, &sp, &tr, &nt, &err), 0);
			assert_int_equal(nt, nref);
			assert_same_bits(tr, ref, nt * sizeof(long), "trajectory from fits made ahead", t);
			free(tr);
			if (path != 2) {
				/* used when it matches */
				pre.ses.level += 5000.0;
				assert_int_equal(hb_fc_trajectory(&h, &sp, &tr, &nt, &err), 0);
				assert_true(nt == nref && memcmp(tr, ref, nt * sizeof(long)) != 0);
				free(tr);
				/* ignored when anything it was made from differs */
				for (int change = 0; change < 4; change++) {
					struct hb_fc_traj_spec sp2 = sp;
					struct hb_fc_history h2 = h;
					double keep = bs[n / 2];
					long *ref2 = NULL;
					size_t nref2 = 0;

					if (change == 0)
						bs[n / 2] += 1.0;
					if (change == 1)
						sp2.seed ^= 1;
					if (change == 2)
						h2.epoch_start--;
					if (change == 3)
						sp2.method = HB_FC_SES;
					sp2.prefit = NULL;
					assert_int_equal(hb_fc_trajectory(&h2, &sp2, &ref2, &nref2, &err), 0);
					sp2.prefit = &pre;
					assert_int_equal(hb_fc_trajectory(&h2, &sp2, &tr, &nt, &err), 0);
					assert_int_equal(nt, nref2);
					assert_same_bits(tr, ref2, nt * sizeof(long), "trajectory beside unmatched fits", t);
					free(tr);
					free(ref2);
					bs[n / 2] = keep;
				}
			}
			hb_fc_prefit_free(&pre);
			free(ref);
			ref = NULL;
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpr_fit_same_bits),
		cmocka_unit_test(test_ses_fit_same_bits),
		cmocka_unit_test(test_forecast_run_same_bits),
		cmocka_unit_test(test_trajectory_same_bits),
		cmocka_unit_test(test_trajectory_beside_once),
		cmocka_unit_test(test_trajectory_prefit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
