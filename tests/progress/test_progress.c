/* Progress models (sim/stats.h, `hetbatch sim --progress`) and the
 * calibration of JABAS's seven catalog models to the evidence of the JABAS
 * paper (notes/jabas.md §7), one test per published point, each with its
 * tolerance stated beside the assertion.
 *
 * The catalog's gradient-noise trajectories are shared by both progress
 * models (and by Pollux's own decisions), so they are left as they are:
 * changing them would change every `--progress pollux` result.  What these
 * tests pin is that, under the similarity model, the shared profiles meet
 * the published points they can meet, and where a published number rules an
 * outcome out (Fig. 17's 3.7x), the test states the measured value and why.
 *
 * Runs: one job on a dedicated cluster from the default analytic profiles,
 * seed 1, each a fraction of a second. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "catalog.h"
#include "default_db.h"
#include "policy.h"
#include "sim.h"
#include "stats.h"

struct fx {
	struct hb_catalog cat;
	struct hb_profdb *db;
};

static int setup(void **state)
{
	static struct fx f;
	struct hb_error err = { 0 };

	memset(&f, 0, sizeof(f));
	if (hb_catalog_load_builtin(&f.cat, &err) < 0 || hb_default_profdb(&f.cat, NULL, &f.db, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hb_profdb_close(f->db);
	hb_catalog_free(&f->cat);
	return 0;
}

/* What a run shows about its job. */
struct outcome {
	double recipe;      /* samples processed / target: 1 = the recipe's epochs at M0 */
	double iters;       /* iterations to the target */
	double time_s;      /* time to the target */
	long first_bs;      /* B_G of the first record */
	long max_bs, min_bs;
	int dips;           /* records whose B_G is below the previous one's */
	int nsamples;
};

/* Run one job of `model` on `cluster` under `policy` to its target.
 * interval > 0 overrides p; req_batch > 0 fixes the static agent's batch. */
static struct outcome run(struct fx *f, const char *model, const char *cluster, const char *policy,
			  enum hb_progress_model progress, long interval, long req_batch)
{
	const struct hb_policy *pol = hb_policy_find(policy);
	const struct hb_cluster *cl = hb_catalog_cluster(&f->cat, cluster);
	const struct hb_model *m = hb_catalog_model(&f->cat, model);
	struct hb_error err = { 0 };
	struct hb_sim_opts o;
	struct hb_sim sim;
	struct hb_sim_job *job;
	struct outcome r;

	assert_non_null(pol);
	assert_non_null(cl);
	assert_non_null(m);
	memset(&r, 0, sizeof(r));
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.progress = progress;
	if (interval > 0)
		o.interval = interval;
	assert_int_equal(hb_sim_init(&sim, &f->cat, cl, f->db, policy, &o, &err), 0);
	assert_int_equal(hb_sim_add_job(&sim, m, pol->agent, 0.0, NULL, &err), 0);
	sim.jobs[0].req_batch = req_batch;
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s %s on %s: %s", policy, model, cluster, err.msg);
	job = &sim.jobs[0];
	assert_int_equal(job->state, HB_JOB_DONE);
	r.recipe = job->samples / job->target;
	r.iters = job->iters;
	r.time_s = job->finish_s - job->arrival_s;
	r.nsamples = (int)sim.nsamples;
	for (size_t i = 0; i < sim.nsamples; i++) {
		long b = sim.samples[i].global_bs;

		if (i == 0)
			r.first_bs = r.max_bs = r.min_bs = b;
		if (b > r.max_bs)
			r.max_bs = b;
		if (b < r.min_bs)
			r.min_bs = b;
		if (i > 0 && b < sim.samples[i - 1].global_bs)
			r.dips++;
	}
	hb_sim_free(&sim);
	return r;
}

/* ---- the models themselves ------------------------------------------------------- */

static void test_model_names(void **state)
{
	enum hb_progress_model p = HB_PROGRESS_SIMILARITY;
	struct hb_error err = { 0 };

	(void)state;
	assert_string_equal(hb_progress_name(HB_PROGRESS_POLLUX), "pollux");
	assert_string_equal(hb_progress_name(HB_PROGRESS_SIMILARITY), "similarity");
	assert_string_equal(hb_progress_name(HB_PROGRESS_COUNT), "?");
	assert_int_equal(hb_progress_parse("pollux", "--progress", &p, &err), 0);
	assert_int_equal(p, HB_PROGRESS_POLLUX);
	assert_int_equal(hb_progress_parse("similarity", "--progress", &p, &err), 0);
	assert_int_equal(p, HB_PROGRESS_SIMILARITY);
	/* Names are exact: an error names the option, the value and the valid names. */
	assert_int_equal(hb_progress_parse("Similarity", "--progress", &p, &err), -1);
	assert_int_equal(p, HB_PROGRESS_SIMILARITY);
	assert_non_null(strstr(err.msg, "--progress"));
	assert_non_null(strstr(err.msg, "'Similarity'"));
	assert_non_null(strstr(err.msg, "pollux, similarity, pollux-artifact"));
	assert_int_equal(hb_progress_parse("pollux-artifact", "--progress", &p, &err), 0);
	assert_int_equal(p, HB_PROGRESS_POLLUX_ARTIFACT);
}

static void test_model_efficiency(void **state)
{
	struct fx *f = *state;
	const struct hb_model *m = hb_catalog_model(&f->cat, "gpt3-xl");
	struct hb_error err = { 0 };
	struct hb_stats s;
	double phi = 1000.0, knee;

	assert_int_equal(hb_stats_init(&s, m, &err), 0);
	assert_int_equal(s.progress, HB_PROGRESS_POLLUX); /* the default */
	assert_true(s.gamma == 0.9 && s.m0 == 512);
	/* pollux: Pollux Eq. 6, exactly as before. */
	assert_true(hb_stats_efficiency(&s, phi, 4096) == (phi + 512) / (phi + 4096));
	/* The issue: at the batch the similarity rule settles at (Phi = gamma,
	 * B = 18 phi at gamma 0.9), Pollux's E is (1 + M0/phi)(1 - gamma)/(1 + gamma):
	 * 0.0796 here, about 1/19 for phi >> M0.  Tolerance 1e-12 (closed form). */
	knee = hb_stats_gamma_batch(0.9, phi);
	assert_true(fabs(knee - 18000.0) < 1e-9);
	assert_true(fabs(hb_stats_similarity(phi, knee) - 0.9) < 1e-12);
	assert_true(fabs(hb_stats_efficiency(&s, phi, knee) - 1.512 * 0.1 / 1.9) < 1e-12);
	/* similarity: free up to the knee, knee/B above it, M0 never charged. */
	s.progress = HB_PROGRESS_SIMILARITY;
	assert_true(hb_stats_efficiency(&s, phi, 512) == 1.0);
	assert_true(hb_stats_efficiency(&s, phi, knee) == 1.0);
	assert_true(fabs(hb_stats_efficiency(&s, phi, 2 * knee) - 0.5) < 1e-12);
	assert_true(hb_stats_efficiency(&s, 1.0, 512) == 1.0);  /* knee 18 < M0 512 */
	assert_true(fabs(hb_stats_efficiency(&s, 1.0, 1024) - 0.5) < 1e-12);
	/* Pollux's own formula stays available to policies that believe it. */
	assert_true(hb_stats_pollux_efficiency(&s, phi, 4096) == (phi + 512) / (phi + 4096));
	/* Degenerate thresholds give no free batch beyond M0. */
	assert_true(hb_stats_gamma_batch(0.0, phi) == 0.0 && hb_stats_gamma_batch(1.0, phi) == 0.0);
	hb_stats_free(&s);
}

/* ---- Table 5: JABAS and SimiGrad reach every target in the recipe's epochs -------- */

/* Samples to the target over the recipe's (target_epochs at M0), for JABAS
 * and SimiGrad on the clusters of Fig. 10.  Table 5: both reach every target
 * (76 % top-1, 77 %, 36.6 mAP, 24.61 BLEU; the LLMs' losses), within the
 * artifact's epoch budgets (90 for ResNet-50 and ViT, 13 for F-R-CNN, at most
 * 20 for GNMT, 8 in the catalog).  Tolerance: at most 1.30 x the recipe,
 * the spread the similarity rule's noisy walk around its knee gives (B_G
 * steps of alpha = 10 % or more after IIDP's rounding).  One exception,
 * stated: JABAS on GNMT overshoots the knee (sigma 0.1 at gamma 0.1 makes
 * single observations meaningless, and the solver's rounding adds steps
 * above alpha) and needs 1.52x (A) and 1.74x (B); bound 1.80 there.
 * Measured (similarity, seed 1), JABAS / SimiGrad:
 *   A: resnet50 1.086 / 1.113, vit 1.031 / 1.030, faster-rcnn 1.071 / 1.072,
 *      gnmt 1.524 / 1.194
 *   B: resnet50 1.075 / 1.133, vit 1.019 / 1.030, faster-rcnn 1.083 / 1.274,
 *      gnmt 1.743 / 1.055
 *   C: bert-large 1.020 / 1.018, gpt3-xl 1.001 / 1.000, llama2-7b 1.030 / 1.028 */
static void check_recipe(struct fx *f, const char *cluster, const char *const *models, int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			const char *pol = k ? "simigrad" : "jabas";
			struct outcome r = run(f, models[i], cluster, pol, HB_PROGRESS_SIMILARITY, 0, 0);
			double bound = (!k && strcmp(models[i], "gnmt") == 0) ? 1.80 : 1.30;

			if (!(r.recipe >= 1.0 - 1e-9 && r.recipe <= bound))
				fail_msg("%s %s on %s: %.3f x the recipe's samples, expected [1, %.2f]", pol, models[i],
					 cluster, r.recipe, bound);
		}
}

static const char *const fig10_ab[] = { "resnet50", "vit", "faster-rcnn", "gnmt" };
static const char *const fig10_c[] = { "bert-large", "gpt3-xl", "llama2-7b" };

static void test_table5_a(void **state)
{
	check_recipe(*state, "jabas-a", fig10_ab, 4);
}

static void test_table5_b(void **state)
{
	check_recipe(*state, "jabas-b", fig10_ab, 4);
}

static void test_table5_c(void **state)
{
	struct fx *f = *state;
	struct outcome r;

	check_recipe(f, "jabas-c", fig10_c, 3);
	/* The contrast that motivates the model: under Pollux's E the same
	 * similarity rule on GPT3-XL (gamma 0.9) needs 7.5x the recipe's
	 * samples, which Table 5 (every method reached the target; JABAS
	 * fastest) rules out.  Bound: more than 3x. */
	r = run(f, "gpt3-xl", "jabas-c", "jabas", HB_PROGRESS_POLLUX, 0, 0);
	if (!(r.recipe > 3.0))
		fail_msg("jabas gpt3-xl under pollux: %.3f x the recipe, expected > 3", r.recipe);
}

/* ---- Fig. 13a: F-R-CNN's batch with p = 100 vs p = epoch ---------------------------- */

/* JABAS on cluster A: with p = 100 F-R-CNN reaches maxB_G 192; with p = one
 * epoch (117266 / 16 = 7329 iterations at minB_G, so at most one adaptation
 * per epoch) it never exceeds 48.  Tolerance: p = 100 must reach 192 (the
 * bound itself); p = epoch at most 48 x 1.25 = 60, one alpha step of slack
 * for the solver's rounding.  Measured: 192 and 48 (p = 7329 also takes 4.43 h
 * against 3.72 h: p = 100 is faster, as Fig. 13a). */
static void test_fig13a_frcnn(void **state)
{
	struct fx *f = *state;
	struct outcome fine = run(f, "faster-rcnn", "jabas-a", "jabas", HB_PROGRESS_SIMILARITY, 100, 0);
	struct outcome coarse = run(f, "faster-rcnn", "jabas-a", "jabas", HB_PROGRESS_SIMILARITY, 7329, 0);

	if (fine.max_bs != 192)
		fail_msg("p = 100: max B_G %ld, expected 192", fine.max_bs);
	if (!(coarse.max_bs <= 60 && coarse.max_bs > fine.first_bs))
		fail_msg("p = epoch: max B_G %ld, expected in (%ld, 60]", coarse.max_bs, fine.first_bs);
}

/* ---- Fig. 9: trajectories grow and fluctuate ---------------------------------------- */

/* JABAS's B_G "tends to increase exponentially while also experiencing
 * periodic fluctuations" for every model.  Tolerance: the largest B_G at
 * least 4x the first (Fig. 9's curves span one to two orders of magnitude),
 * and at least one decrease, except GPT3-XL: its 0.5 epoch holds about 23
 * adaptation points at gamma 0.9 and its similarity stays below gamma, so
 * its trajectory only grows (JABAS §7.5 notes the LLMs' trajectories have
 * few samples).  Measured max/first (cluster A or C): resnet50 19, vit 38,
 * faster-rcnn 12, gnmt 8.3, bert-large 51, gpt3-xl 9.2, llama2-7b 40. */
static void test_fig9_growth(void **state)
{
	static const struct {
		const char *model, *cluster;
		int dips;
	} cases[] = {
		{ "resnet50", "jabas-a", 1 }, { "vit", "jabas-a", 1 },        { "faster-rcnn", "jabas-a", 1 },
		{ "gnmt", "jabas-a", 1 },     { "bert-large", "jabas-c", 1 }, { "gpt3-xl", "jabas-c", 0 },
		{ "llama2-7b", "jabas-c", 1 },
	};
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct outcome r = run(f, cases[i].model, cases[i].cluster, "jabas", HB_PROGRESS_SIMILARITY, 0, 0);

		if (!(r.max_bs >= 4 * r.first_bs))
			fail_msg("%s: max B_G %ld < 4 x first %ld", cases[i].model, r.max_bs, r.first_bs);
		if (r.dips < cases[i].dips)
			fail_msg("%s: %d decreases of B_G, expected >= %d", cases[i].model, r.dips, cases[i].dips);
	}
}

/* ---- Fig. 17: Pollux vs SimiGrad iterations on ResNet-50, cluster D ----------------- */

/* Published: Pollux needed 3.7x SimiGrad's iterations; after epoch 1 it
 * predicted a 75 % efficiency loss at B = 1024 from M0 = 256 (E = 0.25).
 * What one shared noise scale can give, and what it cannot:
 *   - E(1024) = (phi + 256) / (phi + 1024) = 0.25 needs phi = 0, while
 *     SimiGrad growing from 256 at gamma 0.1 needs Phi(256) < 0.1, i.e.
 *     phi > 2 x 256 x 0.9 / 0.1 / 2 = 1152, where E(1024) >= 0.79.  So the
 *     published prediction and SimiGrad's growth rule each other out under
 *     any one phi: Pollux's estimator saw a different quantity.  Asserted
 *     below on the catalog's phi at epoch 1.
 *   - The iteration ratio: measured 1.29 (similarity) and 1.30 (pollux).
 *     3.7 would need SimiGrad's mean batch about 3.7x Pollux's over the same
 *     epochs, i.e. a noise scale about 2.8x the catalog's (Pollux's measured
 *     ImageNet trajectory), which every --progress pollux result shares; not
 *     tuned.  Tolerance: the direction (Pollux needs more iterations, ratio
 *     in [1.15, 3.7]). */
static void test_fig17_resnet50(void **state)
{
	struct fx *f = *state;
	const struct hb_model *m = hb_catalog_model(&f->cat, "resnet50");
	struct outcome sg = run(f, "resnet50", "jabas-d", "simigrad", HB_PROGRESS_SIMILARITY, 0, 0);
	struct outcome px = run(f, "resnet50", "jabas-d", "pollux", HB_PROGRESS_SIMILARITY, 0, 0);
	double ratio = px.iters / sg.iters, phi1 = hb_model_gns(m, 1.0 / 89.0);

	if (!(ratio >= 1.15 && ratio <= 3.7))
		fail_msg("Pollux / SimiGrad iterations %.3f, expected in [1.15, 3.7]", ratio);
	/* phi after epoch 1 lets SimiGrad grow from 256 ... */
	assert_true(hb_stats_similarity(phi1, 256) < 0.1);
	/* ... so Pollux's E(1024) there cannot be the published 0.25 (bound 0.5). */
	assert_true((phi1 + 256) / (phi1 + 1024) > 0.5);
}

/* ---- Fig. 1a: ResNet-18 / CIFAR-10 ------------------------------------------------------- */

/* 16 TITAN Xp (cluster D), initial B_G 128, Max 4096 (the catalog's bound,
 * one of Fig. 1a's configurations).  Published: Static(Max) fastest but
 * misses the accuracy; Static(128) slowest and converges; SimiGrad second
 * fastest and hits the target; Pollux slower than SimiGrad.  In the
 * simulator a job runs to its target, so "misses the accuracy" reads: in the
 * recipe's samples it does not reach the target (needs more than 1.3x), and
 * "fastest" compares the time Static(Max) takes for the recipe's samples.
 * CIFAR-10 is Pollux's model: its profile is Pollux's, unchanged.
 * What the catalog rules out: Fig. 1a starts at 128 on 16 GPUs (B_L 8), but
 * the catalog's minB_L 32 makes 512 the smallest B_G on 16 GPUs, so the
 * simulator's "Static(128)" runs at 512 and SimiGrad starts at 512, four
 * times M0 while the knee is still at M0 (phi 72.5 at gamma 0.1 gives 16):
 * measured 1.348x the recipe for SimiGrad, 1.350x for Static(512), 2.57x for
 * Pollux, 1.58x for Static(4096) (progress model similarity, seed 1).
 * Tolerances: SimiGrad within 1.4x the recipe (the forced 512 start), Pollux
 * needs more samples than SimiGrad (it "faces accuracy loss"); orderings
 * strict. */
static void test_fig1a_cifar10(void **state)
{
	struct fx *f = *state;
	struct outcome smax = run(f, "cifar10", "jabas-d", "static", HB_PROGRESS_SIMILARITY, 0, 4096);
	struct outcome s128 = run(f, "cifar10", "jabas-d", "static", HB_PROGRESS_SIMILARITY, 0, 128);
	struct outcome sg = run(f, "cifar10", "jabas-d", "simigrad", HB_PROGRESS_SIMILARITY, 0, 0);
	struct outcome px = run(f, "cifar10", "jabas-d", "pollux", HB_PROGRESS_SIMILARITY, 0, 0);
	double smax_budget_s = smax.time_s / smax.recipe; /* Static(Max) over the recipe's samples */

	if (!(smax.recipe > 1.3))
		fail_msg("Static(4096) needs %.3f x the recipe: it would reach the target", smax.recipe);
	if (!(sg.recipe <= 1.4))
		fail_msg("SimiGrad needs %.3f x the recipe, expected <= 1.4", sg.recipe);
	if (!(px.recipe > sg.recipe))
		fail_msg("Pollux needs %.3f x the recipe, SimiGrad %.3f: expected more", px.recipe, sg.recipe);
	if (!(smax_budget_s < sg.time_s && sg.time_s < s128.time_s))
		fail_msg("times: Static(Max) budget %.0f s, SimiGrad %.0f s, Static(128) %.0f s: expected increasing",
			 smax_budget_s, sg.time_s, s128.time_s);
	if (!(px.time_s > sg.time_s))
		fail_msg("Pollux %.0f s is not slower than SimiGrad %.0f s", px.time_s, sg.time_s);
}

/* argv[1], when given, selects tests by cmocka's wildcard filter, so meson
 * runs the groups as separate, short tests. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_names),
		cmocka_unit_test(test_model_efficiency),
		cmocka_unit_test(test_table5_a),
		cmocka_unit_test(test_table5_b),
		cmocka_unit_test(test_table5_c),
		cmocka_unit_test(test_fig13a_frcnn),
		cmocka_unit_test(test_fig9_growth),
		cmocka_unit_test(test_fig17_resnet50),
		cmocka_unit_test(test_fig1a_cifar10),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
