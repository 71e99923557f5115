/* Unit tests for the convergence model (sim/stats.h): a Monte Carlo check
 * of Phi(B) = B / (B + 2 phi) on synthetic Gaussian gradients, E(B), the
 * phi trajectory, gradstats interpolation on a hand-made profile database
 * (and on Pollux's published ImageNet statistics when HB_SHARED is there),
 * observation noise, clamping and the unequal-batch factor. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "catalog.h"
#include "import.h"
#include "profdb.h"
#include "rng.h"
#include "stats.h"
#include "strutil.h"

static char tmpdir[256];

static void load_catalog(struct hb_catalog *cat)
{
	struct hb_error err = { 0 };

	assert_int_equal(hb_catalog_load_builtin(cat, &err), 0);
}

/* ---- Monte Carlo check of Phi(B) ---------------------------------------- */

/*
 * Per-sample gradients g_i = G + xi_i, xi_i ~ N(0, v I) in dimension D_DIM,
 * |G| = 1, so tr(S) = D_DIM v and phi = tr(S) / |G|^2 = D_DIM v.  A
 * half-batch of B/2 samples has mean G + N(0, S / (B/2)); we draw that mean
 * directly (exact for Gaussian samples, and B/2 times cheaper than drawing
 * the samples).  The estimate is the average over MC_REPS repetitions of
 * cos(a, b) for two independent half-batch means a, b.
 *
 * Variance reduction: when phi >> B the cosine of one repetition has a
 * standard deviation of about 2 phi / (B sqrt(D_DIM)) relative to its mean
 * (5.6 for phi = 1000, B = 8), which would need ~10^6 repetitions for a
 * 0.5 % standard error.  We therefore also average cos - c with the control
 * variate c = ((1 - 1/D) G.(n1 + n2) + n1.n2) / D, D = |G|^2 + tr(S)/(B/2),
 * the first-order noise terms of the cosine (the G.n term partly cancels
 * between numerator and norms, hence 1 - 1/D).  Its mean is exactly 0
 * because n1 and n2 are independent and centred, whatever the
 * coefficients, so the estimator stays unbiased for E[cos]; its spread
 * drops ~30x.  The average of c itself (the difference between the plain
 * and the corrected estimates) must be within 4 of its standard errors of 0.
 */
#define D_DIM 2000
#define MC_REPS 2000

struct mc_point {
	double batch, phi;
	double plain, plain_se;  /* average cosine and its standard error */
	double cv, cv_se;        /* control-variate estimate and its standard error */
	double c, c_se;          /* average control variate (mean 0) and its standard error */
};

static void mc_similarity(struct hb_rng *rng, const double *g, struct mc_point *p)
{
	double sigma = sqrt(2.0 * (p->phi / D_DIM) / p->batch); /* per-coordinate std of a half-batch mean */
	double denom = 1.0 + p->phi / (p->batch / 2.0);           /* |G|^2 + tr(S)/(B/2) */
	double sum = 0, sum2 = 0, csum = 0, csum2 = 0, vsum = 0, vsum2 = 0;

	for (int r = 0; r < MC_REPS; r++) {
		double ab = 0, aa = 0, bb = 0, gn = 0, nn = 0;

		for (int k = 0; k < D_DIM; k++) {
			double n1 = sigma * hb_rng_normal(rng), n2 = sigma * hb_rng_normal(rng);
			double a = g[k] + n1, b = g[k] + n2;

			ab += a * b;
			aa += a * a;
			bb += b * b;
			gn += g[k] * (n1 + n2);
			nn += n1 * n2;
		}
		double cosv = ab / sqrt(aa * bb);
		double c = ((1.0 - 1.0 / denom) * gn + nn) / denom;
		double corr = cosv - c;

		vsum += c;
		vsum2 += c * c;
		sum += cosv;
		sum2 += cosv * cosv;
		csum += corr;
		csum2 += corr * corr;
	}
	p->plain = sum / MC_REPS;
	p->plain_se = sqrt(fmax(sum2 / MC_REPS - p->plain * p->plain, 0) / (MC_REPS - 1));
	p->cv = csum / MC_REPS;
	p->cv_se = sqrt(fmax(csum2 / MC_REPS - p->cv * p->cv, 0) / (MC_REPS - 1));
	p->c = vsum / MC_REPS;
	p->c_se = sqrt(fmax(vsum2 / MC_REPS - p->c * p->c, 0) / (MC_REPS - 1));
}

static void test_similarity_monte_carlo(void **state)
{
	static const double phis[] = { 10, 100, 1000 };
	struct hb_rng rng;
	double g[D_DIM], norm = 0, worst = 0;

	(void)state;
	hb_rng_seed(&rng, 20240611, HB_STREAM_DEFAULT);
	for (int k = 0; k < D_DIM; k++) {
		g[k] = hb_rng_normal(&rng);
		norm += g[k] * g[k];
	}
	for (int k = 0; k < D_DIM; k++)
		g[k] /= sqrt(norm); /* |G| = 1, random direction */

	printf("# Monte Carlo Phi(B): d = %d, %d repetitions per point\n", D_DIM, MC_REPS);
	printf("# %6s %6s %10s %9s %10s %9s %10s %7s\n", "B", "phi", "plain", "se", "measured", "se", "formula",
	       "err%");
	for (size_t i = 0; i < sizeof(phis) / sizeof(phis[0]); i++) {
		for (double b = 8; b <= 4096; b *= 2) {
			struct mc_point p = { .batch = b, .phi = phis[i] };
			double want = hb_stats_similarity(phis[i], b), rel;

			mc_similarity(&rng, g, &p);
			rel = (p.cv - want) / want;
			printf("  %6.0f %6.0f %10.6f %9.2e %10.6f %9.2e %10.6f %+7.3f\n", b, phis[i], p.plain,
			       p.plain_se, p.cv, p.cv_se, want, 100 * rel);
			/* The formula within 2 % relative at every point. */
			assert_true(fabs(rel) <= 0.02);
			/* The control variate averaged to 0 as it must (the
			 * difference between the two estimates). */
			assert_true(fabs(p.c) <= 4 * p.c_se + 1e-12);
			/* The check is sharp: its standard error is well under the tolerance. */
			assert_true(p.cv_se <= 0.005 * want);
			if (fabs(rel) > worst)
				worst = fabs(rel);
		}
	}
	printf("# worst relative error %.3f %%\n", 100 * worst);
}

/* A check that would catch a wrong formula: the measurement is far from
 * B / (B + phi) and from B / (B + 4 phi) at a point where they differ. */
static void test_similarity_monte_carlo_discriminates(void **state)
{
	struct hb_rng rng;
	double g[D_DIM];
	struct mc_point p = { .batch = 256, .phi = 100 };

	(void)state;
	hb_rng_seed(&rng, 7, HB_STREAM_DEFAULT);
	for (int k = 0; k < D_DIM; k++)
		g[k] = k == 0 ? 1.0 : 0.0;
	mc_similarity(&rng, g, &p);
	assert_true(fabs(p.cv - 256.0 / 456.0) < 0.01 * 256.0 / 456.0);
	assert_true(fabs(p.cv - 256.0 / 356.0) > 0.2 * 256.0 / 456.0);
	assert_true(fabs(p.cv - 256.0 / 656.0) > 0.2 * 256.0 / 456.0);
}

/* ---- E(B), Phi(B) and init --------------------------------------------- */

static void test_init_fields(void **state)
{
	struct hb_catalog cat;
	struct hb_stats s;
	struct hb_error err = { 0 };
	const struct hb_model *m;

	(void)state;
	load_catalog(&cat);
	m = hb_catalog_model(&cat, "resnet50");
	assert_non_null(m);
	assert_int_equal(hb_stats_init(&s, m, &err), 0);
	assert_ptr_equal(s.model, m);
	assert_true(s.m0 == (double)m->m0);
	assert_true(s.target == m->target_epochs * m->dataset_size);
	assert_true(s.sigma == m->sim_noise_sigma);
	assert_true(s.unequal_k == 0.0);
	assert_null(s.runs);
	assert_int_equal(s.nruns, 0);
	hb_stats_free(&s);
	hb_catalog_free(&cat);
}

static void test_init_rejects_bad_models(void **state)
{
	struct hb_catalog cat;
	struct hb_stats s;
	struct hb_error err = { 0 };
	struct hb_model m;

	(void)state;
	load_catalog(&cat);
	memcpy(&m, hb_catalog_model(&cat, "cifar10"), sizeof(m));
	m.m0 = 0;
	assert_int_equal(hb_stats_init(&s, &m, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "cifar10"));
	assert_non_null(strstr(err.msg, "m0"));

	memcpy(&m, hb_catalog_model(&cat, "cifar10"), sizeof(m));
	m.target_epochs = 0;
	assert_int_equal(hb_stats_init(&s, &m, &err), -1);
	assert_non_null(strstr(err.msg, "target_epochs"));

	memcpy(&m, hb_catalog_model(&cat, "cifar10"), sizeof(m));
	m.sim_noise_sigma = -0.1;
	assert_int_equal(hb_stats_init(&s, &m, &err), -1);
	assert_non_null(strstr(err.msg, "sim_noise_sigma"));

	memcpy(&m, hb_catalog_model(&cat, "cifar10"), sizeof(m));
	m.gns_phi[1] = 0;
	assert_int_equal(hb_stats_init(&s, &m, &err), -1);
	assert_non_null(strstr(err.msg, "gns[1]"));
	hb_catalog_free(&cat);
}

static void test_efficiency(void **state)
{
	static const double phis[] = { 0, 1, 50, 928, 14400, 1e6 };
	struct hb_catalog cat;
	struct hb_stats s;
	struct hb_error err = { 0 };

	(void)state;
	load_catalog(&cat);
	assert_int_equal(hb_stats_init(&s, hb_catalog_model(&cat, "resnet50"), &err), 0); /* M0 = 256 */
	for (size_t i = 0; i < sizeof(phis) / sizeof(phis[0]); i++) {
		double prev = INFINITY;

		assert_true(fabs(hb_stats_efficiency(&s, phis[i], s.m0) - 1.0) < 1e-15);
		for (double b = 16; b <= 65536; b *= 1.5) {
			double e = hb_stats_efficiency(&s, phis[i], b);

			assert_true(e < prev); /* strictly decreasing in B */
			assert_true(e > 0);
			/* B E(B) (samples' worth) never falls with B. */
			assert_true(b * e >= (b / 1.5) * hb_stats_efficiency(&s, phis[i], b / 1.5) - 1e-9);
			prev = e;
		}
	}
	/* Pollux Eq. 6 values. */
	assert_true(fabs(hb_stats_efficiency(&s, 1000, 2048) - 1256.0 / 3048.0) < 1e-15);
	assert_true(fabs(hb_stats_efficiency(&s, 0, 1024) - 0.25) < 1e-15);         /* -> M0 / B */
	assert_true(fabs(hb_stats_efficiency(&s, 1e12, 4096) - 1.0) < 1e-8);        /* -> 1 */
	assert_true(hb_stats_efficiency(&s, 100, 128) > 1.0);                       /* below M0 */

	assert_true(fabs(hb_stats_similarity(100, 200) - 0.5) < 1e-15);
	assert_true(fabs(hb_stats_similarity(928, 256) - 256.0 / 2112.0) < 1e-15);
	assert_true(hb_stats_similarity(0, 64) == 1.0);
	assert_true(hb_stats_similarity(10, 0) == 0.0);
	hb_stats_free(&s);
	hb_catalog_free(&cat);
}

/* ---- phi: catalog trajectory ------------------------------------------- */

static void test_trajectory_matches_catalog(void **state)
{
	struct hb_catalog cat;
	struct hb_error err = { 0 };

	(void)state;
	load_catalog(&cat);
	for (int i = 0; i < cat.nmodels; i++) {
		const struct hb_model *m = &cat.models[i];
		struct hb_stats s;

		assert_int_equal(hb_stats_init(&s, m, &err), 0);
		for (int k = 0; k <= 1000; k++) {
			double f = k / 1000.0;

			/* Log-linear catalog value; the batch plays no part. */
			assert_true(hb_stats_phi(&s, f, 32) == hb_model_gns(m, f));
			assert_true(hb_stats_phi(&s, f, 65536) == hb_model_gns(m, f));
		}
		for (int k = 0; k < m->ngns; k++)
			assert_true(fabs(hb_stats_phi(&s, m->gns_frac[k], 1) / m->gns_phi[k] - 1) < 1e-12);
		/* f is clamped to [0, 1]. */
		assert_true(hb_stats_phi(&s, -0.5, 256) == m->gns_phi[0]);
		assert_true(hb_stats_phi(&s, NAN, 256) == m->gns_phi[0]);
		assert_true(hb_stats_phi(&s, 7.0, 256) == m->gns_phi[m->ngns - 1]);
		hb_stats_free(&s);
	}
	/* Log-linear, not linear, between two points: the geometric mean at
	 * the middle (vit: 2000 at f = 0.05, 6000 at f = 0.2). */
	{
		struct hb_stats s;

		assert_int_equal(hb_stats_init(&s, hb_catalog_model(&cat, "vit"), &err), 0);
		assert_true(fabs(hb_stats_phi(&s, 0.125, 1) - sqrt(2000.0 * 6000.0)) < 1e-6);
		hb_stats_free(&s);
	}
	hb_catalog_free(&cat);
}

/* ---- phi: gradstats from a profile database ----------------------------- */

static const char *db_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
	return path;
}

static void put_row(struct hb_profdb *db, const char *model, int batch, int epoch, double sqr, double var)
{
	struct hb_gradstats_row r;
	struct hb_error err = { 0 };

	memset(&r, 0, sizeof(r));
	hb_strlcpy(r.model, model, sizeof(r.model));
	hb_strlcpy(r.source, "import:pollux", sizeof(r.source));
	r.batch = batch;
	r.epoch = epoch;
	r.iteration = 100L * (epoch + 1);
	r.progress = 100.0 * (epoch + 1);
	r.grad_sqr = sqr;
	r.grad_var = var;
	if (hb_profdb_put_gradstats(db, &r, &err) < 0)
		fail_msg("%s", err.msg);
}

/* M0 = 100 for the toy models, so phi = 100 var / sqr. */
static const double toy_phi100[] = { 100, 200, 300, 400, 500 };     /* batch 100, 5 epochs */
static const double toy_phi400[] = { 1000, 2000, 3000, 4000, 5000 }; /* batch 400, 5 epochs */
static const double toy_phi1600[] = { 50, 60, 70 };                  /* batch 1600, 3 epochs */

static struct hb_profdb *make_toy_db(void)
{
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };

	assert_int_equal(hb_profdb_open(db_path("toy.db"), 0, &db, &err), 0);
	assert_int_equal(hb_profdb_begin(db, &err), 0);
	/* Inserted out of order: the reader sorts by (batch, epoch). */
	for (int e = 2; e >= 0; e--)
		put_row(db, "toy", 1600, e, 4.0, 4.0 * toy_phi1600[e] / 100);
	for (int e = 0; e < 5; e++) {
		put_row(db, "toy", 400, e, 0.5, 0.5 * toy_phi400[e] / 100);
		put_row(db, "toy", 100, e, 2.0, 2.0 * toy_phi100[e] / 100);
	}
	/* toy-skip: batch 100 with a zero grad_sqr at epoch 2 and a negative
	 * grad_var at epoch 4; batch 200 with no usable row at all. */
	put_row(db, "toy-skip", 100, 0, 1.0, 1.0);  /* phi 100 */
	put_row(db, "toy-skip", 100, 1, 1.0, 3.0);  /* phi 300 */
	put_row(db, "toy-skip", 100, 2, 0.0, 5.0);  /* skipped */
	put_row(db, "toy-skip", 100, 3, 1.0, 7.0);  /* phi 700 */
	put_row(db, "toy-skip", 100, 4, 1.0, -1.0); /* skipped */
	put_row(db, "toy-skip", 200, 0, 0.0, 1.0);
	put_row(db, "toy-skip", 200, 1, -1.0, 1.0);
	/* toy-bad: nothing usable. */
	put_row(db, "toy-bad", 100, 0, 0.0, 1.0);
	put_row(db, "toy-bad", 100, 1, 1.0, 0.0);
	assert_int_equal(hb_profdb_commit(db, &err), 0);
	return db;
}

static void toy_model(struct hb_catalog *cat, struct hb_model *m, const char *name)
{
	memcpy(m, hb_catalog_model(cat, "cifar10"), sizeof(*m));
	hb_strlcpy(m->name, name, sizeof(m->name));
	m->m0 = 100;
}

static void test_gradstats_interpolation(void **state)
{
	struct hb_catalog cat;
	struct hb_model m;
	struct hb_stats s;
	struct hb_profdb *db = make_toy_db();
	struct hb_error err = { 0 };
	int used = -1;
	const double tol = 1e-9;

	(void)state;
	load_catalog(&cat);
	toy_model(&cat, &m, "toy");
	assert_int_equal(hb_stats_init(&s, &m, &err), 0);
	assert_int_equal(hb_stats_load_gradstats(&s, db, &used, &err), 0);
	assert_int_equal(used, 1);
	assert_int_equal(s.nruns, 3);
	assert_int_equal(s.runs[0].batch, 100);
	assert_int_equal(s.runs[1].batch, 400);
	assert_int_equal(s.runs[2].batch, 1600);
	assert_int_equal(s.runs[0].nepochs, 5);
	assert_int_equal(s.runs[2].nepochs, 3);
	for (int e = 0; e < 5; e++) {
		assert_true(fabs(s.runs[0].phi[e] - toy_phi100[e]) < tol); /* M0 grad_var / grad_sqr */
		assert_true(fabs(s.runs[1].phi[e] - toy_phi400[e]) < tol);
	}

	/* Exact points: run at its own batch, f = e / (n - 1). */
	for (int e = 0; e < 5; e++) {
		assert_true(fabs(hb_stats_phi(&s, e / 4.0, 100) - toy_phi100[e]) < tol);
		assert_true(fabs(hb_stats_phi(&s, e / 4.0, 400) - toy_phi400[e]) < tol);
	}
	for (int e = 0; e < 3; e++)
		assert_true(fabs(hb_stats_phi(&s, e / 2.0, 1600) - toy_phi1600[e]) < tol);

	/* Epoch midpoints: linear between two epochs. */
	for (int e = 0; e < 4; e++) {
		double f = (e + 0.5) / 4.0;

		assert_true(fabs(hb_stats_phi(&s, f, 100) - 0.5 * (toy_phi100[e] + toy_phi100[e + 1])) < tol);
		assert_true(fabs(hb_stats_phi(&s, f, 400) - 0.5 * (toy_phi400[e] + toy_phi400[e + 1])) < tol);
	}
	/* A quarter of the way between epochs 1 and 2. */
	assert_true(fabs(hb_stats_phi(&s, 1.25 / 4.0, 400) - 2250.0) < tol);
	/* The 3-epoch run maps f to its own length: f = 0.25 is half-way
	 * between its epochs 0 and 1. */
	assert_true(fabs(hb_stats_phi(&s, 0.25, 1600) - 55.0) < tol);

	/* Log-batch midpoints: 200 = sqrt(100 x 400), 800 = sqrt(400 x 1600). */
	for (int e = 0; e < 5; e++)
		assert_true(fabs(hb_stats_phi(&s, e / 4.0, 200) - 0.5 * (toy_phi100[e] + toy_phi400[e])) < 1e-6);
	assert_true(fabs(hb_stats_phi(&s, 0.5, 800) - 0.5 * (3000 + 60)) < 1e-6);
	/* Both at once: epoch midpoint 1.5 at batch 200. */
	assert_true(fabs(hb_stats_phi(&s, 1.5 / 4.0, 200) - 0.5 * (250 + 2500)) < 1e-6);
	/* A quarter of the way in log batch: 100 x 4^0.25 = 141.42. */
	assert_true(fabs(hb_stats_phi(&s, 0, 100 * sqrt(2.0)) - (100 + 0.25 * 900)) < 1e-6);

	/* Outside the measured batches: the nearest run, no extrapolation. */
	assert_true(fabs(hb_stats_phi(&s, 0.5, 10) - 300) < tol);
	assert_true(fabs(hb_stats_phi(&s, 0.5, 1e6) - 60) < tol);
	/* f clamped to [0, 1]. */
	assert_true(fabs(hb_stats_phi(&s, -3, 400) - 1000) < tol);
	assert_true(fabs(hb_stats_phi(&s, 3, 400) - 5000) < tol);

	/* A second load replaces the runs (ASan checks the first are freed). */
	assert_int_equal(hb_stats_load_gradstats(&s, db, &used, &err), 0);
	assert_int_equal(s.nruns, 3);
	hb_stats_free(&s);
	assert_null(s.runs);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
}

static void test_gradstats_skips_bad_rows(void **state)
{
	struct hb_catalog cat;
	struct hb_model m;
	struct hb_stats s;
	struct hb_profdb *db = make_toy_db();
	struct hb_error err = { 0 };
	int used = -1;

	(void)state;
	load_catalog(&cat);
	toy_model(&cat, &m, "toy-skip");
	assert_int_equal(hb_stats_init(&s, &m, &err), 0);
	assert_int_equal(hb_stats_load_gradstats(&s, db, &used, &err), 0);
	assert_int_equal(used, 1);
	/* The batch-200 run had no usable row and is dropped. */
	assert_int_equal(s.nruns, 1);
	assert_int_equal(s.runs[0].batch, 100);
	assert_int_equal(s.runs[0].nepochs, 5);
	/* Epoch 2 filled between its neighbours, epoch 4 held at epoch 3. */
	assert_true(fabs(s.runs[0].phi[0] - 100) < 1e-9);
	assert_true(fabs(s.runs[0].phi[1] - 300) < 1e-9);
	assert_true(fabs(s.runs[0].phi[2] - 500) < 1e-9);
	assert_true(fabs(s.runs[0].phi[3] - 700) < 1e-9);
	assert_true(fabs(s.runs[0].phi[4] - 700) < 1e-9);
	for (int k = 0; k <= 100; k++)
		assert_true(isfinite(hb_stats_phi(&s, k / 100.0, 150)) && hb_stats_phi(&s, k / 100.0, 150) > 0);
	hb_stats_free(&s);

	/* All rows unusable: an input error naming the database and model. */
	toy_model(&cat, &m, "toy-bad");
	assert_int_equal(hb_stats_init(&s, &m, &err), 0);
	assert_int_equal(hb_stats_load_gradstats(&s, db, &used, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(used, 0);
	assert_non_null(strstr(err.msg, "toy-bad"));
	assert_non_null(strstr(err.msg, "toy.db"));
	assert_non_null(strstr(err.msg, "all 2 rows"));
	assert_null(s.runs); /* the trajectory stays in place */
	assert_true(hb_stats_phi(&s, 0.3, 100) == hb_model_gns(&m, 0.3));
	hb_stats_free(&s);

	/* No gradstats for the model, or no database: the trajectory. */
	toy_model(&cat, &m, "toy-absent");
	assert_int_equal(hb_stats_init(&s, &m, &err), 0);
	assert_int_equal(hb_stats_load_gradstats(&s, db, &used, &err), 0);
	assert_int_equal(used, 0);
	assert_null(s.runs);
	used = -1;
	assert_int_equal(hb_stats_load_gradstats(&s, NULL, &used, &err), 0);
	assert_int_equal(used, 0);
	assert_true(hb_stats_phi(&s, 0.3, 100) == hb_model_gns(&m, 0.3));
	hb_stats_free(&s);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
}

/* Pollux's published ImageNet statistics against the catalog trajectory,
 * which was read off the same validation-200.csv (M0 = 200) at f = epoch/89:
 * both sources must agree at the run of batch M0.  Skips without
 * HB_SHARED. */
static void test_gradstats_pollux_imagenet(void **state)
{
	const char *shared = getenv("HB_SHARED");
	char dir[1024];
	struct hb_catalog cat;
	struct hb_profdb *db = NULL;
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	struct hb_stats s;
	const struct hb_model *m;
	int used = 0;

	(void)state;
	if (!shared)
		skip();
	snprintf(dir, sizeof(dir), "%s/data/pollux/profiles/imagenet", shared);
	if (access(dir, R_OK) != 0)
		skip();
	load_catalog(&cat);
	assert_int_equal(hb_profdb_open(db_path("pollux.db"), 0, &db, &err), 0);
	memset(&st, 0, sizeof(st));
	if (hb_import_pollux(db, &cat, dir, &st, &err) < 0)
		fail_msg("%s", err.msg);
	m = hb_catalog_model(&cat, "imagenet");
	assert_non_null(m);
	assert_int_equal(m->m0, 200);
	assert_int_equal(hb_stats_init(&s, m, &err), 0);
	assert_int_equal(hb_stats_load_gradstats(&s, db, &used, &err), 0);
	assert_int_equal(used, 1);
	assert_int_equal(s.nruns, 7);
	assert_int_equal(s.runs[0].batch, 200);
	assert_int_equal(s.runs[6].batch, 12800);
	for (int i = 0; i < s.nruns; i++)
		assert_int_equal(s.runs[i].nepochs, 90);
	/* The note's table (pollux.md 4.3): phi at M0, epoch 0: 928;
	 * epoch 45: 11.4k; epoch 89: 14.4k. */
	assert_true(fabs(hb_stats_phi(&s, 0, 200) / 928 - 1) < 0.005);
	assert_true(fabs(hb_stats_phi(&s, 45.0 / 89, 200) / 11400 - 1) < 0.01);
	assert_true(fabs(hb_stats_phi(&s, 1, 200) / 14400 - 1) < 0.01);
	printf("# ImageNet gradstats at M0 = 200 vs the catalog trajectory\n");
	for (int k = 0; k < m->ngns; k++) {
		double f = m->gns_frac[k], got = hb_stats_phi(&s, f, 200);

		printf("  f %.4f  gradstats %8.1f  catalog %8.1f  (%+.2f %%)\n", f, got, m->gns_phi[k],
		       100 * (got / m->gns_phi[k] - 1));
	}
	/* At epochs away from a jump the two agree to the catalog's rounding. */
	for (int k = 0; k < m->ngns; k++) {
		double e = m->gns_frac[k] * 89, f = round(e) / 89;

		assert_true(fabs(hb_stats_phi(&s, f, 200) / m->gns_phi[k] - 1) < 0.02);
	}
	hb_stats_free(&s);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
}

/* ---- observations ------------------------------------------------------ */

static void test_observation_noise(void **state)
{
	enum { N = 200000 };
	struct hb_stats s;
	struct hb_rng rng, ref;
	double sum = 0, sum2 = 0, mean, sd;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.m0 = 100;
	s.sigma = 0.05;
	hb_rng_seed(&rng, 99, HB_STREAM_SIMILARITY);
	for (int i = 0; i < N; i++) {
		double v = hb_stats_observe_similarity(&s, 100, 200, &rng); /* Phi = 0.5 */

		sum += v;
		sum2 += v * v;
	}
	mean = sum / N;
	sd = sqrt(sum2 / N - mean * mean);
	printf("# observation: mean %.6f (want 0.5, se %.1e), std %.6f (want 0.05)\n", mean, 0.05 / sqrt(N), sd);
	assert_true(fabs(mean - 0.5) < 4 * 0.05 / sqrt(N));
	assert_true(fabs(sd / 0.05 - 1) < 0.02);

	/* sigma = 0: the exact value, but one draw still consumed. */
	s.sigma = 0;
	hb_rng_seed(&rng, 5, HB_STREAM_SIMILARITY);
	hb_rng_seed(&ref, 5, HB_STREAM_SIMILARITY);
	assert_true(hb_stats_observe_similarity(&s, 100, 200, &rng) == 0.5);
	(void)hb_rng_normal(&ref);
	assert_true(hb_rng_normal(&rng) == hb_rng_normal(&ref));

	/* Same seed, same observations. */
	s.sigma = 0.05;
	hb_rng_seed(&rng, 5, HB_STREAM_SIMILARITY);
	hb_rng_seed(&ref, 5, HB_STREAM_SIMILARITY);
	for (int i = 0; i < 100; i++)
		assert_true(hb_stats_observe_similarity(&s, 30, 64, &rng) ==
			    hb_stats_observe_similarity(&s, 30, 64, &ref));
}

static void test_observation_clamped(void **state)
{
	enum { N = 100000 };
	struct hb_stats s;
	struct hb_rng rng;
	int at_top = 0, at_bottom = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.m0 = 32;
	s.sigma = 0.5;
	hb_rng_seed(&rng, 11, HB_STREAM_SIMILARITY);
	/* Phi = 0.99: about half the draws land above 1. */
	for (int i = 0; i < N; i++) {
		double v = hb_stats_observe_similarity(&s, 1, 198, &rng);

		assert_true(v >= -1.0 && v <= 1.0);
		at_top += v == 1.0;
	}
	/* P(N(0,1) > 0.02) = 0.492. */
	assert_true(fabs((double)at_top / N - 0.492) < 0.01);
	/* Phi = 1/101: P(v < -1) = P(N(0,1) < -2.0198) = 0.0217. */
	for (int i = 0; i < N; i++) {
		double v = hb_stats_observe_similarity(&s, 50, 1, &rng);

		assert_true(v >= -1.0 && v <= 1.0);
		at_bottom += v == -1.0;
	}
	assert_true(fabs((double)at_bottom / N - 0.0217) < 0.003);
}

/* ---- unequal local batches ---------------------------------------------- */

static void test_unequal_factor(void **state)
{
	static const double two[] = { 1, 3 };
	static const double four[] = { 64, 64, 128, 256 };
	static const double equal[] = { 96, 96, 96 };
	struct hb_stats s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.m0 = 256;
	/* Off by default. */
	assert_true(hb_stats_unequal_factor(&s, four, 4) == 1.0);
	s.unequal_k = 2;
	assert_true(hb_stats_unequal_factor(&s, four, 1) == 1.0); /* n < 2 */
	assert_true(hb_stats_unequal_factor(&s, equal, 3) == 1.0);
	/* mean 2, population std 1: cv^2 = 0.25; 1 / (1 + 2 x 0.25). */
	assert_true(fabs(hb_stats_unequal_factor(&s, two, 2) - 2.0 / 3.0) < 1e-15);
	/* mean 128, variance 6144: cv^2 = 0.375. */
	s.unequal_k = 1;
	assert_true(fabs(hb_stats_unequal_factor(&s, four, 4) - 1.0 / 1.375) < 1e-15);
	/* Larger k, larger penalty; scale-free in the batches. */
	s.unequal_k = 4;
	assert_true(hb_stats_unequal_factor(&s, four, 4) < 1.0 / 1.375);
	{
		const double scaled[] = { 640, 640, 1280, 2560 };

		assert_true(fabs(hb_stats_unequal_factor(&s, scaled, 4) - hb_stats_unequal_factor(&s, four, 4)) <
			    1e-15);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_similarity_monte_carlo),
		cmocka_unit_test(test_similarity_monte_carlo_discriminates),
		cmocka_unit_test(test_init_fields),
		cmocka_unit_test(test_init_rejects_bad_models),
		cmocka_unit_test(test_efficiency),
		cmocka_unit_test(test_trajectory_matches_catalog),
		cmocka_unit_test(test_gradstats_interpolation),
		cmocka_unit_test(test_gradstats_skips_bad_rows),
		cmocka_unit_test(test_gradstats_pollux_imagenet),
		cmocka_unit_test(test_observation_noise),
		cmocka_unit_test(test_observation_clamped),
		cmocka_unit_test(test_unequal_factor),
	};
	char cmd[300];
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-stats-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return rc;
}
