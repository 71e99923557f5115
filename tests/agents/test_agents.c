/* Job agents static, simigrad and optperf (sim/policies/agent_*.c): each rule's
 * decision in hand-built situations (the decision cores of agent_util.h on
 * ResNet-50's perf model on cluster A from the default analytic profiles),
 * then whole runs: every agent trains ResNet-50 on jabas-a (and demo) to its
 * target, deterministically, with records that obey its rule.
 *
 * Facts of the situation the hand-computed expectations rest on: cluster A
 * has 16 GPUs (4 nodes x 4), ResNet-50 has minB_L 32, minB_G 256, maxB_G
 * 32768, gamma 0.1, alpha 0.1, p 100, M0 256; every GPU type of A holds a
 * local batch of at least 128 (checked in test_ddp_config). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent_util.h"
#include "cannikin_ctl.h"
#include "catalog.h"
#include "ddp.h"
#include "default_db.h"
#include "optperf.h"
#include "optperf_profile.h"
#include "policy.h"
#include "sim.h"

#define NODES_A 4
#define GPUS_A 16

struct fx {
	struct hb_catalog cat;
	struct hb_profdb *db;
	const struct hb_cluster *cl;
	const struct hb_model *model;
	struct hb_sim sim;       /* one static job: its perf and stats feed the core tests */
	struct hb_sim_job *job;
};

static int setup(void **state)
{
	static struct fx f;
	struct hb_error err = { 0 };
	struct hb_sim_opts o;

	memset(&f, 0, sizeof(f));
	if (hb_catalog_load_builtin(&f.cat, &err) < 0 || hb_default_profdb(&f.cat, NULL, &f.db, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	f.cl = hb_catalog_cluster(&f.cat, "jabas-a");
	f.model = hb_catalog_model(&f.cat, "resnet50");
	if (!f.cl || !f.model)
		return -1;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(&f.sim, &f.cat, f.cl, f.db, "static", &o, &err) < 0 ||
	    hb_sim_add_job(&f.sim, f.model, &hb_agent_static, 0.0, NULL, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	f.job = &f.sim.jobs[0];
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hb_sim_free(&f->sim);
	hb_profdb_close(f->db);
	hb_catalog_free(&f->cat);
	return 0;
}

static double rel_diff(double a, double b)
{
	return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1e-300);
}

/* ---- SimiGrad's rule ------------------------------------------------------- */

static const struct hb_simigrad_params SP_A = { .gamma = 0.1, .alpha = 0.1, .min_gbs = 256, .max_gbs = 32768 };

static void test_simigrad_step(void **state)
{
	int dir = 99;

	(void)state;
	/* Phi below gamma: noisy gradients, grow by alpha. */
	assert_true(fabs(hb_simigrad_step(&SP_A, 1000.0, 0.05, &dir) - 1100.0) < 1e-9);
	assert_int_equal(dir, HB_SIMIGRAD_GROW);
	/* Phi above gamma: shrink by alpha. */
	assert_true(fabs(hb_simigrad_step(&SP_A, 1000.0, 0.2, &dir) - 900.0) < 1e-9);
	assert_int_equal(dir, HB_SIMIGRAD_SHRINK);
	/* Equal: hold. */
	assert_true(hb_simigrad_step(&SP_A, 1000.0, 0.1, &dir) == 1000.0);
	assert_int_equal(dir, HB_SIMIGRAD_HOLD);
	/* Clipped at maxB_G (32000 x 1.1 = 35200) and at minB_G (270 x 0.9 = 243);
	 * the direction asked for is kept. */
	assert_true(hb_simigrad_step(&SP_A, 32000.0, 0.05, &dir) == 32768.0);
	assert_int_equal(dir, HB_SIMIGRAD_GROW);
	assert_true(hb_simigrad_step(&SP_A, 270.0, 0.2, &dir) == 256.0);
	assert_int_equal(dir, HB_SIMIGRAD_SHRINK);
	/* A failed observation (NaN) decides nothing. */
	assert_true(hb_simigrad_step(&SP_A, 1000.0, NAN, &dir) == 1000.0);
	assert_int_equal(dir, HB_SIMIGRAD_HOLD);
}

/* ---- DDP configuration ----------------------------------------------------- */

/* Smallest largest-local-batch over the GPU types of the allocation. */
static int min_max_lbs(const struct hb_perf *p, const int *alloc)
{
	int m = 1 << 30;

	for (int i = 0; i < p->nnodes; i++)
		if (alloc[i] > 0 && hb_perf_max_lbs(p, p->nodes[i].gpu) < m)
			m = hb_perf_max_lbs(p, p->nodes[i].gpu);
	return m;
}

static void test_ddp_config(void **state)
{
	struct fx *f = *state;
	const struct hb_perf *p = f->job->perf;
	int alloc[NODES_A];
	struct hb_job_config cfg;
	struct hb_ddp_result plan;
	struct hb_error err = { 0 };
	double t;
	int maxl;

	assert_int_equal(p->nnodes, NODES_A);
	assert_int_equal(hb_agent_alloc_all(p, alloc), GPUS_A);
	for (int i = 0; i < NODES_A; i++)
		assert_int_equal(alloc[i], 4);
	maxl = min_max_lbs(p, alloc);
	assert_true(maxl >= 128);

	/* minB_G 256 on 16 GPUs: B_L 16 is below minB_L 32, so B_L 32, B_G 512. */
	hb_job_config_init(&cfg, NODES_A);
	assert_int_equal(hb_agent_ddp_config(p, alloc, 256, &cfg, &plan, &err), 0);
	assert_int_equal(cfg.ngpus, GPUS_A);
	assert_int_equal(cfg.local_bs, 32);
	assert_int_equal(cfg.global_bs, 512);
	assert_int_equal(plan.ga_steps, 0);
	assert_memory_equal(cfg.alloc, alloc, sizeof(alloc));
	assert_true(cfg.overhead_per_iter_s == 0.0 && cfg.eff_factor == 1.0);
	/* The iteration time is the perf model's for that layout, exactly. */
	assert_int_equal(hb_ddp_iter_time(p, alloc, 32, 0, &t, NULL, &err), 0);
	assert_true(cfg.iter_s == t);

	/* maxB_G needs accumulation: the fewest steps s with 16 maxB_L s >= B. */
	assert_int_equal(hb_agent_ddp_config(p, alloc, 32768, &cfg, &plan, &err), 0);
	{
		long s = (32768 + 16L * maxl - 1) / (16L * maxl);

		assert_int_equal(plan.ga_steps + 1, s);
		assert_true(cfg.local_bs <= maxl && cfg.local_bs % 32 == 0);
		assert_int_equal(cfg.global_bs, (long)cfg.local_bs * GPUS_A * s);
		assert_int_equal(hb_ddp_iter_time(p, alloc, cfg.local_bs, (int)(s - 1), &t, NULL, &err), 0);
		assert_true(cfg.iter_s == t);
	}
	hb_job_config_free(&cfg);
}

/* ---- SimiGrad decisions ---------------------------------------------------- */

static void decide(struct fx *f, double target, long cur, double phi, struct hb_simigrad_decision *d,
		   struct hb_job_config *cfg)
{
	int alloc[NODES_A];
	struct hb_error err = { 0 };

	hb_agent_alloc_all(f->job->perf, alloc);
	assert_int_equal(hb_simigrad_decide(f->job->perf, alloc, &SP_A, target, cur, phi, cfg, d, &err), 0);
}

static void test_simigrad_rounding_holds_then_grows(void **state)
{
	struct fx *f = *state;
	struct hb_simigrad_decision d;
	struct hb_job_config cfg;
	double target = 256.0, t;
	int k, alloc[NODES_A];
	struct hb_error err = { 0 };

	/* From the start (target minB_G 256, realised 512), repeated Phi < gamma
	 * grows the target by 10 % a step; B_G stays 512 until round(target)/16
	 * rounds to B_L 64, i.e. round(target) >= 768 (tie 48 goes up):
	 * 256 x 1.1^12 = 803.4 is the first, at the 12th step. */
	hb_job_config_init(&cfg, NODES_A);
	for (k = 1; k <= 11; k++) {
		decide(f, target, 512, 0.01, &d, &cfg);
		assert_int_equal(d.dir, HB_SIMIGRAD_GROW);
		assert_true(fabs(d.target - 256.0 * pow(1.1, k)) < 1e-6);
		assert_int_equal(d.planned_gbs, 512);
		assert_int_equal(d.apply, 0);
		target = d.target;
	}
	decide(f, target, 512, 0.01, &d, &cfg);
	assert_true(fabs(d.target - 803.4) < 0.05);
	assert_int_equal(d.apply, 1);
	assert_int_equal(cfg.global_bs, 1024);
	assert_int_equal(cfg.local_bs, 64);
	hb_agent_alloc_all(f->job->perf, alloc);
	assert_int_equal(hb_ddp_iter_time(f->job->perf, alloc, 64, 0, &t, NULL, &err), 0);
	assert_true(cfg.iter_s == t);
	assert_non_null(strstr(d.why, "512 -> 1024"));
	hb_job_config_free(&cfg);
}

static void test_simigrad_shrinks(void **state)
{
	struct fx *f = *state;
	struct hb_simigrad_decision d;
	struct hb_job_config cfg;

	/* Target 1331 runs at B_L 96 (1331/16 = 83.2 rounds to 96), B_G 1536;
	 * Phi > gamma: 1197.9 -> 1198/16 = 74.9 -> B_L 64, B_G 1024. */
	hb_job_config_init(&cfg, NODES_A);
	decide(f, 1331.0, 1536, 0.9, &d, &cfg);
	assert_int_equal(d.dir, HB_SIMIGRAD_SHRINK);
	assert_true(fabs(d.target - 1197.9) < 1e-9);
	assert_int_equal(d.apply, 1);
	assert_int_equal(cfg.global_bs, 1024);
	assert_int_equal(cfg.local_bs, 64);
	hb_job_config_free(&cfg);
}

static void test_simigrad_clips(void **state)
{
	struct fx *f = *state;
	struct hb_simigrad_decision d;
	struct hb_job_config cfg;
	struct hb_ddp_result top;
	int alloc[NODES_A];
	struct hb_error err = { 0 };

	hb_job_config_init(&cfg, NODES_A);
	hb_agent_alloc_all(f->job->perf, alloc);
	assert_int_equal(hb_ddp_plan(f->job->perf, alloc, 32768, &top, &err), 0);
	/* At maxB_G, Phi < gamma cannot grow: the target stays at the bound
	 * and the configuration is kept. */
	decide(f, 32768.0, top.global_bs, 0.01, &d, &cfg);
	assert_int_equal(d.dir, HB_SIMIGRAD_GROW);
	assert_true(d.target == 32768.0);
	assert_int_equal(d.apply, 0);
	assert_non_null(strstr(d.why, "maxB_G"));
	/* At minB_G, Phi > gamma: 256 x 0.9 clips to 256, still B_G 512. */
	decide(f, 256.0, 512, 0.9, &d, &cfg);
	assert_int_equal(d.dir, HB_SIMIGRAD_SHRINK);
	assert_true(d.target == 256.0);
	assert_int_equal(d.planned_gbs, 512);
	assert_int_equal(d.apply, 0);
	assert_non_null(strstr(d.why, "minB_G"));
	/* Phi == gamma: nothing planned. */
	decide(f, 1000.0, 1024, 0.1, &d, &cfg);
	assert_int_equal(d.dir, HB_SIMIGRAD_HOLD);
	assert_int_equal(d.apply, 0);
	assert_true(d.target == 1000.0);
	hb_job_config_free(&cfg);
}

static void test_simigrad_wrong_direction_is_kept(void **state)
{
	struct fx *f = *state;
	struct hb_simigrad_decision d;
	struct hb_job_config cfg;

	/* A plan that would move against Phi's request is not applied: the
	 * job runs B_G 1536 while the target is 1000; Phi < gamma asks to grow,
	 * round(1100) plans B_G 1024. */
	hb_job_config_init(&cfg, NODES_A);
	decide(f, 1000.0, 1536, 0.01, &d, &cfg);
	assert_int_equal(d.dir, HB_SIMIGRAD_GROW);
	assert_int_equal(d.planned_gbs, 1024);
	assert_int_equal(d.apply, 0);
	assert_true(fabs(d.target - 1100.0) < 1e-9);
	hb_job_config_free(&cfg);
}

/* ---- Cannikin / OptPerf ---------------------------------------------------- */

/* The goodput argmax by exhaustive scan of the candidate grid, from
 * independent OptPerf solves; ties go to the smaller batch. */
static long brute_argmax(const struct hb_optperf_cluster *cl, double phi, double m0, long lo, long hi, double *best_g)
{
	long cand[HB_OPTPERF_DEFAULT_CANDIDATES];
	size_t nc;
	long best = -1;
	double cap = 0, floor_b = 0;
	double *b = malloc(cl->n * sizeof(double));
	struct hb_error err = { 0 };

	assert_int_equal(hb_optperf_candidates(lo, hi, HB_OPTPERF_DEFAULT_CANDIDATES, cand, &nc, &err), 0);
	for (size_t i = 0; i < cl->n; i++) {
		cap += (double)cl->node[i].max_batch;
		floor_b += (double)cl->node[i].min_batch;
	}
	*best_g = -1;
	for (size_t c = 0; c < nc; c++) {
		struct hb_optperf_solution sol;
		double g;

		if ((double)cand[c] > cap || (double)cand[c] < floor_b)
			continue;
		assert_int_equal(hb_optperf_solve(cl, cand[c], b, &sol, &err), 0);
		g = (double)cand[c] * (phi + m0) / (phi + (double)cand[c]) / sol.iter_s;
		if (g > *best_g) {
			*best_g = g;
			best = cand[c];
		}
	}
	free(b);
	return best;
}

static void check_cannikin(struct fx *f, double phi, long *bstar)
{
	const struct hb_perf *p = f->job->perf;
	int alloc[NODES_A];
	struct hb_cannikin_input in = {
		.perf = p, .stats = f->job->stats, .alloc = alloc, .phi = phi, .m0 = 256,
		.min_gbs = 256, .max_gbs = 32768, .cur_gbs = 0, .speedup_threshold = 1.05,
	};
	struct hb_cannikin_decision d;
	struct hb_job_config cfg;
	struct hb_optperf_input op;
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	long local[GPUS_A], sum = 0, want;
	double dl[GPUS_A], real[GPUS_A], g, amax = 0;

	hb_agent_alloc_all(p, alloc);
	hb_job_config_init(&cfg, NODES_A);
	assert_int_equal(hb_cannikin_decide(&in, &cfg, local, &d, &err), 0);
	assert_int_equal(d.apply, 1);
	assert_int_equal(hb_optperf_from_perf(p, alloc, &op, &err), 0);
	assert_int_equal(op.cl.n, GPUS_A);

	/* B* is the goodput argmax of the grid. */
	want = brute_argmax(&op.cl, phi, 256, 256, 32768, &g);
	assert_int_equal(d.choice.batch, want);
	assert_true(rel_diff(d.choice.goodput, g) < 1e-12);
	assert_int_equal(cfg.global_bs, want);
	assert_int_equal(cfg.ngpus, GPUS_A);

	/* The integer split sums to B*, respects each GPU's cap, and its
	 * Eq. 7 time is the configuration's iteration time. */
	for (int i = 0; i < GPUS_A; i++) {
		assert_true(local[i] >= op.cl.node[i].min_batch && local[i] <= op.cl.node[i].max_batch);
		sum += local[i];
		dl[i] = (double)local[i];
		amax = fmax(amax, op.cl.node[i].fwd_per_sample_s + op.cl.node[i].bwd_per_sample_s);
	}
	assert_int_equal(sum, want);
	assert_true(cfg.iter_s == hb_optperf_iter_time(&op.cl, dl));
	/* ... within one sample's time above the real optimum (optperf.h). */
	assert_int_equal(hb_optperf_solve(&op.cl, want, real, &sol, &err), 0);
	assert_true(cfg.iter_s >= sol.iter_s * (1 - 1e-12));
	assert_true(cfg.iter_s <= sol.iter_s + amax + 1e-12);
	/* The what-if penalty is off by default. */
	assert_true(cfg.eff_factor == 1.0);
	assert_true(cfg.overhead_per_iter_s == 0.0);
	*bstar = want;
	hb_optperf_input_free(&op);
	hb_job_config_free(&cfg);
}

static void test_cannikin_argmax_and_split(void **state)
{
	struct fx *f = *state;
	long b_early, b_late;

	/* ResNet-50's noise scale at the start (928) and at the end (14400):
	 * a larger noise scale makes large batches efficient, so B* grows. */
	check_cannikin(f, 928.0, &b_early);
	check_cannikin(f, 14400.0, &b_late);
	print_message("cannikin on jabas-a: B* %ld at phi 928, %ld at phi 14400\n", b_early, b_late);
	assert_true(b_late > b_early);
}

static void test_cannikin_hysteresis(void **state)
{
	struct fx *f = *state;
	const struct hb_perf *p = f->job->perf;
	int alloc[NODES_A];
	struct hb_cannikin_input in = {
		.perf = p, .stats = f->job->stats, .alloc = alloc, .phi = 14400.0, .m0 = 256,
		.min_gbs = 256, .max_gbs = 32768, .cur_gbs = 0, .speedup_threshold = 1.05,
	};
	struct hb_cannikin_decision d0, d;
	struct hb_job_config cfg;
	struct hb_error err = { 0 };
	long cand[HB_OPTPERF_DEFAULT_CANDIDATES], near = 0;
	size_t nc;

	hb_agent_alloc_all(p, alloc);
	hb_job_config_init(&cfg, NODES_A);
	assert_int_equal(hb_cannikin_decide(&in, &cfg, NULL, &d0, &err), 0);

	/* Already at B*: keep. */
	in.cur_gbs = d0.choice.batch;
	assert_int_equal(hb_cannikin_decide(&in, &cfg, NULL, &d, &err), 0);
	assert_int_equal(d.apply, 0);
	assert_true(rel_diff(d.cur_goodput, d0.choice.goodput) < 1e-12);

	/* The grid neighbour of B* is within 5 % of its goodput: keep it. */
	assert_int_equal(hb_optperf_candidates(256, 32768, HB_OPTPERF_DEFAULT_CANDIDATES, cand, &nc, &err), 0);
	for (size_t c = 0; c + 1 < nc; c++)
		if (cand[c + 1] == d0.choice.batch)
			near = cand[c];
	assert_true(near > 0);
	in.cur_gbs = near;
	assert_int_equal(hb_cannikin_decide(&in, &cfg, NULL, &d, &err), 0);
	assert_true(d.cur_goodput < d0.choice.goodput);
	assert_true(d0.choice.goodput <= 1.05 * d.cur_goodput);
	assert_int_equal(d.apply, 0);

	/* minB_G at the late noise scale is far from the optimum: switch. */
	in.cur_gbs = 256;
	assert_int_equal(hb_cannikin_decide(&in, &cfg, NULL, &d, &err), 0);
	assert_true(d0.choice.goodput > 1.05 * d.cur_goodput);
	assert_int_equal(d.apply, 1);
	assert_int_equal(cfg.global_bs, d0.choice.batch);
	hb_job_config_free(&cfg);
}

static void test_cannikin_unequal_penalty(void **state)
{
	struct fx *f = *state;
	const struct hb_perf *p = f->job->perf;
	struct hb_stats st = *f->job->stats; /* shallow copy: only unequal_k differs */
	int alloc[NODES_A];
	struct hb_cannikin_input in = {
		.perf = p, .stats = &st, .alloc = alloc, .phi = 928.0, .m0 = 256,
		.min_gbs = 256, .max_gbs = 32768, .cur_gbs = 0, .speedup_threshold = 1.05,
	};
	struct hb_cannikin_decision d;
	struct hb_job_config cfg;
	struct hb_error err = { 0 };
	long local[GPUS_A];
	double dl[GPUS_A];
	int unequal = 0;

	st.unequal_k = 0.5;
	hb_agent_alloc_all(p, alloc);
	hb_job_config_init(&cfg, NODES_A);
	assert_int_equal(hb_cannikin_decide(&in, &cfg, local, &d, &err), 0);
	for (int i = 0; i < GPUS_A; i++) {
		dl[i] = (double)local[i];
		unequal |= local[i] != local[0];
	}
	/* Cluster A's GPUs differ up to 3.7x in FLOPS: the split is unequal
	 * and the penalty bites. */
	assert_true(unequal);
	assert_int_equal(cfg.local_bs, 0);
	assert_true(cfg.eff_factor == hb_stats_unequal_factor(&st, dl, GPUS_A));
	assert_true(cfg.eff_factor < 1.0);
	hb_job_config_free(&cfg);
}

static void test_cannikin_needs_memory(void **state)
{
	struct fx *f = *state;
	const struct hb_perf *p = f->job->perf;
	int alloc[NODES_A];
	struct hb_cannikin_input in = {
		.perf = p, .stats = f->job->stats, .alloc = alloc, .phi = 928.0, .m0 = 256,
		.min_gbs = 256, .max_gbs = 32768, .cur_gbs = 0, .speedup_threshold = 1.05,
	};
	struct hb_cannikin_decision d;
	struct hb_job_config cfg;
	struct hb_error err = { 0 };

	/* Cluster A holds 4 x (128 + 160 + 192 + 192) = 2688 samples without
	 * accumulation: B* never exceeds it, and a minB_G above it cannot run. */
	hb_agent_alloc_all(p, alloc);
	hb_job_config_init(&cfg, NODES_A);
	in.phi = 1e9; /* efficiency ~1 at every batch: the largest feasible candidate wins */
	assert_int_equal(hb_cannikin_decide(&in, &cfg, NULL, &d, &err), 0);
	assert_true(d.choice.batch <= 2688);
	assert_true(d.choice.n_feasible < d.choice.n_candidates);
	in.min_gbs = 2689;
	assert_int_equal(hb_cannikin_decide(&in, &cfg, NULL, &d, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "2688"));
	assert_non_null(strstr(err.msg, "gradient accumulation"));
	hb_job_config_free(&cfg);
}

/* ---- whole runs --------------------------------------------------------------- */

struct run {
	struct hb_sim sim;
	struct hb_sim_job *job;
};

static void run_policy(struct fx *f, const char *cluster, const struct hb_agent_ops *agent, uint64_t seed,
		       struct run *r)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	const struct hb_cluster *cl = hb_catalog_cluster(&f->cat, cluster);

	assert_non_null(cl);
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.seed = seed;
	assert_int_equal(hb_sim_init(&r->sim, &f->cat, cl, f->db, agent->name, &o, &err), 0);
	assert_int_equal(hb_sim_add_job(&r->sim, f->model, agent, 0.0, NULL, &err), 0);
	if (hb_sim_run(&r->sim, &err) < 0)
		fail_msg("%s on %s: %s", agent->name, cluster, err.msg);
	r->job = &r->sim.jobs[0];
	assert_int_equal(r->job->state, HB_JOB_DONE);
	assert_true(r->job->progress >= r->job->target * (1 - 1e-9));
	assert_true(r->job->finish_s > 0);
}

/* Same seed, same records: every sample and event, field by field. */
static void assert_same_records(const struct hb_sim *a, const struct hb_sim *b)
{
	assert_int_equal(a->nsamples, b->nsamples);
	assert_int_equal(a->nevents, b->nevents);
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct hb_sim_sample *x = &a->samples[i], *y = &b->samples[i];

		assert_true(x->t == y->t && x->job == y->job && x->global_bs == y->global_bs &&
			    x->local_bs == y->local_bs && x->ngpus == y->ngpus && x->iter_s == y->iter_s &&
			    x->progress_frac == y->progress_frac && x->phi == y->phi &&
			    x->similarity == y->similarity && x->cost_usd == y->cost_usd && x->epoch == y->epoch);
	}
	for (size_t i = 0; i < a->nevents; i++) {
		assert_true(a->events[i].t == b->events[i].t && a->events[i].job == b->events[i].job);
		assert_string_equal(a->events[i].kind, b->events[i].kind);
		assert_string_equal(a->events[i].detail, b->events[i].detail);
	}
	assert_true(a->jobs[0].finish_s == b->jobs[0].finish_s && a->jobs[0].cost_usd == b->jobs[0].cost_usd);
}

static void report(const char *cluster, const struct run *r)
{
	const struct hb_sim_job *j = r->job;

	print_message("%-8s %-8s: %.2f h to target, $%.2f, %.1f GPU-h, %.0f iterations, %ld epochs, mean B_G %.0f, "
		      "final B_G %ld, %ld reconfigs, %d restarts, overhead %.2f h, %zu events\n",
		      j->agent->name, cluster, j->finish_s / 3600, j->cost_usd, j->gpu_s / 3600, j->iters, j->epoch,
		      j->run_s > 0 ? j->gbs_time_sum / j->run_s : 0, j->cfg.global_bs, j->reconfigs, j->restarts,
		      j->overhead_s / 3600, r->sim.nevents);
}

static int count_kind(const struct hb_sim *s, const char *kind)
{
	int n = 0;

	for (size_t i = 0; i < s->nevents; i++)
		n += strcmp(s->events[i].kind, kind) == 0;
	return n;
}

static void test_static_run(void **state)
{
	struct fx *f = *state;
	struct run a, b;

	run_policy(f, "jabas-a", &hb_agent_static, 7, &a);
	run_policy(f, "jabas-a", &hb_agent_static, 7, &b);
	assert_same_records(&a.sim, &b.sim);
	report("jabas-a", &a);
	/* Never adapts: B_G 512 (B_L 32 on 16 GPUs) from start to finish. */
	for (size_t i = 0; i < a.sim.nsamples; i++) {
		assert_int_equal(a.sim.samples[i].global_bs, 512);
		assert_int_equal(a.sim.samples[i].local_bs, 32);
		assert_int_equal(a.sim.samples[i].ngpus, GPUS_A);
	}
	assert_int_equal(a.job->reconfigs, 0);
	assert_int_equal(a.job->restarts, 0);
	assert_int_equal(a.job->adaptations, 0);
	assert_int_equal(count_kind(&a.sim, "reconfig") + count_kind(&a.sim, "restart"), 0);
	/* The whole cluster is billed for the whole run: $65.44/h (jabas.md §4.5). */
	assert_true(rel_diff(a.job->cost_usd, a.job->finish_s / 3600 * hb_sim_price_per_hour(&a.sim, a.job->cfg.alloc)) <
		    1e-9);
	hb_sim_free(&a.sim);
	hb_sim_free(&b.sim);
}

static void test_simigrad_run(void **state)
{
	struct fx *f = *state;
	struct run a, b, c;
	int ups = 0, downs = 0;
	long maxb = 0;

	run_policy(f, "jabas-a", &hb_agent_simigrad, 7, &a);
	run_policy(f, "jabas-a", &hb_agent_simigrad, 7, &b);
	assert_same_records(&a.sim, &b.sim);
	report("jabas-a", &a);
	assert_int_equal(a.job->restarts, 0);
	assert_true(a.job->adaptations > 100);
	/* Every B_G is an equal-B_L layout on all 16 GPUs (B_L a multiple of 32),
	 * within the bounds; every change follows the similarity that caused it
	 * (the sample recorded by the change carries that observation). */
	for (size_t i = 0; i < a.sim.nsamples; i++) {
		const struct hb_sim_sample *s = &a.sim.samples[i];

		assert_int_equal(s->ngpus, GPUS_A);
		assert_int_equal(s->global_bs % 512, 0);
		assert_true(s->global_bs >= 256 && s->global_bs <= 32768 + 512);
		if (s->global_bs > maxb)
			maxb = s->global_bs;
		if (i > 0 && s->global_bs != a.sim.samples[i - 1].global_bs) {
			if (s->global_bs > a.sim.samples[i - 1].global_bs) {
				assert_true(s->similarity < 0.1);
				ups++;
			} else {
				assert_true(s->similarity > 0.1);
				downs++;
			}
		}
	}
	assert_int_equal(ups + downs, a.job->reconfigs);
	assert_true(ups > 0);
	print_message("simigrad jabas-a: %d increases, %d decreases, max B_G %ld, %d kept by rounding\n", ups,
		      downs, maxb, count_kind(&a.sim, "adapt"));
	/* The similarity cost is charged every iteration. */
	assert_true(a.job->cfg.overhead_per_iter_s > 0);
	/* Another seed gives another noise trajectory. */
	run_policy(f, "jabas-a", &hb_agent_simigrad, 8, &c);
	assert_true(c.job->finish_s != a.job->finish_s || c.sim.nevents != a.sim.nevents);
	hb_sim_free(&a.sim);
	hb_sim_free(&b.sim);
	hb_sim_free(&c.sim);
}

static void test_optperf_run(void **state)
{
	struct fx *f = *state;
	struct run a, b;

	run_policy(f, "jabas-a", &hb_agent_optperf, 7, &a);
	run_policy(f, "jabas-a", &hb_agent_optperf, 7, &b);
	assert_same_records(&a.sim, &b.sim);
	report("jabas-a", &a);
	assert_int_equal(a.job->restarts, 0);
	assert_int_equal(a.job->adaptations, 0);
	for (size_t i = 0; i < a.sim.nsamples; i++) {
		assert_int_equal(a.sim.samples[i].ngpus, GPUS_A);
		assert_true(a.sim.samples[i].global_bs >= 256 && a.sim.samples[i].global_bs <= 32768);
	}
	/* GNS monitoring is charged as a fraction of the iteration (sim.c: 14.3 %). */
	assert_true(rel_diff(a.job->cfg.overhead_per_iter_s, 0.143 * a.job->cfg.iter_s) < 1e-12);
	/* B changes only at epoch ends, in place. */
	assert_int_equal(count_kind(&a.sim, "reconfig"), a.job->reconfigs);
	assert_true(a.job->reconfigs >= 1);
	hb_sim_free(&a.sim);
	hb_sim_free(&b.sim);
}

/* Goodput of total b on cl at noise scale phi (0 when cl cannot hold b). */
static double goodput_on(const struct hb_optperf_cluster *cl, double phi, double m0, long b)
{
	struct hb_optperf_solution sol;
	struct hb_error err = { 0 };
	double *real = malloc(cl->n * sizeof(double)), g;

	assert_non_null(real);
	assert_int_equal(hb_optperf_solve(cl, b, real, &sol, &err), 0);
	g = (double)b * (phi + m0) / (phi + (double)b) / sol.iter_s;
	free(real);
	return g;
}

/* Cannikin's learning epochs on a cluster of mixed GPU types (§4.2): epoch 1
 * runs static DDP's realisation of minB_G evenly; epoch 2 the goodput
 * argmax of the proportional model of epoch 1's measurements (the brute
 * scan above, 1.05 hysteresis) split by Eq. 8, as a controller fed the same
 * measurements splits it.  Returns epoch 2's B; *b1_out gets epoch 1's. */
static long check_learning_epochs(struct fx *f, const char *cluster, const char *model, long *b1_out)
{
	const struct hb_model *saved = f->model;
	struct run a;
	struct hb_error err = { 0 };
	struct hb_job_config ddp;
	struct hb_optperf_input op;
	struct hb_cannikin_ctl ctl;
	struct hb_cannikin_comm_obs comm;
	struct hb_optperf_node *pn;
	struct hb_optperf_cluster prop;
	const struct hb_sim_event_rec *e2 = NULL;
	long b1, b2, *local;
	double phi = -1, *a_s, *p_s, *dl, m0, g1, g2, gbest, want_iter;
	int alloc[NODES_A], found = 0;
	const char *q;

	assert_non_null(f->model = hb_catalog_model(&f->cat, model));
	run_policy(f, cluster, &hb_agent_optperf, 7, &a);
	f->model = saved;
	m0 = a.job->stats->m0;
	hb_agent_alloc_granted(a.job, alloc);
	hb_job_config_init(&ddp, a.job->perf->nnodes);
	assert_int_equal(hb_agent_ddp_config(a.job->perf, alloc, a.job->min_gbs, &ddp, NULL, &err), 0);
	b1 = ddp.global_bs;
	hb_job_config_free(&ddp);
	assert_int_equal(a.sim.samples[0].global_bs, b1);

	for (size_t i = 0; i < a.sim.nevents && !e2; i++)
		if (!strcmp(a.sim.events[i].kind, "reconfig") && !strncmp(a.sim.events[i].detail, "epoch 2: B ", 11))
			e2 = &a.sim.events[i];
	assert_non_null(e2);
	assert_int_equal(sscanf(e2->detail, "epoch 2: B %ld", &b2), 1);
	assert_non_null(q = strstr(e2->detail, "proportional model: phi "));
	assert_int_equal(sscanf(q, "proportional model: phi %lf", &phi), 1);

	/* The same measurements, fed to a controller of our own. */
	assert_int_equal(hb_optperf_from_perf(a.job->perf, alloc, &op, &err), 0);
	assert_int_equal(hb_cannikin_ctl_init(&ctl, &op.cl, &err), 0);
	local = malloc(op.cl.n * sizeof(*local));
	a_s = malloc(op.cl.n * sizeof(double));
	p_s = malloc(op.cl.n * sizeof(double));
	dl = malloc(op.cl.n * sizeof(double));
	pn = calloc(op.cl.n, sizeof(*pn));
	assert_true(local && a_s && p_s && dl && pn);
	assert_int_equal(hb_cannikin_ctl_split(&ctl, b1, local, &err), 0);
	for (size_t i = 0; i < op.cl.n; i++) {
		const struct hb_optperf_node *nd = &op.cl.node[i];

		assert_int_equal(local[i], b1 / (long)op.cl.n); /* even */
		a_s[i] = nd->fwd_per_sample_s * (double)local[i] + nd->fwd_fixed_s;
		p_s[i] = nd->bwd_per_sample_s * (double)local[i] + nd->bwd_fixed_s;
	}
	comm = (struct hb_cannikin_comm_obs){ .gamma = op.cl.gamma, .overlap_s = op.cl.overlap_comm_s,
					      .last_s = op.cl.last_comm_s };
	assert_int_equal(hb_cannikin_ctl_observe(&ctl, local, a_s, p_s, &comm, 1, &err), 0);
	assert_int_equal(hb_cannikin_ctl_prop_model(&ctl, pn, &prop, &err), 0);

	/* B: the argmax when it beats B1 by 1.05, else B1 (phi is read back
	 * rounded to an integer, hence the 1e-3 slack on goodputs). */
	(void)brute_argmax(&prop, phi, m0, a.job->min_gbs, a.job->max_gbs, &gbest);
	g1 = goodput_on(&prop, phi, m0, b1);
	g2 = goodput_on(&prop, phi, m0, b2);
	if (b2 != b1) {
		assert_true(g2 >= gbest * (1 - 1e-3));
		assert_true(g2 > 1.05 * g1 * (1 - 1e-3));
	} else {
		assert_true(gbest <= 1.05 * g1 * (1 + 1e-3));
	}

	/* The split: Eq. 8's, seen in the iteration time the sample records. */
	assert_int_equal(hb_cannikin_ctl_split(&ctl, b2, local, &err), 0);
	for (size_t i = 0; i < op.cl.n; i++)
		dl[i] = (double)local[i];
	want_iter = hb_optperf_iter_time(&op.cl, dl);
	want_iter += hb_agent_gns_overhead_s(&a.sim, a.job, want_iter); /* the sample's time includes it */
	for (size_t i = 0; i < a.sim.nsamples; i++)
		if (a.sim.samples[i].t == e2->t && a.sim.samples[i].global_bs == b2) {
			assert_true(rel_diff(a.sim.samples[i].iter_s, want_iter) < 1e-9);
			found = 1;
		}
	assert_true(found);
	assert_true(local[0] != local[op.cl.n - 1]); /* unequal: the GPU types differ */
	print_message("optperf %s %s: epoch 1 B %ld even, epoch 2 B %ld (phi %.0f) by Eq. 8\n", cluster, model, b1,
		      b2, phi);

	free(local);
	free(a_s);
	free(p_s);
	free(dl);
	free(pn);
	hb_cannikin_ctl_free(&ctl);
	hb_optperf_input_free(&op);
	hb_sim_free(&a.sim);
	*b1_out = b1;
	return b2;
}

static void test_optperf_learning_epochs(void **state)
{
	struct fx *f = *state;
	long b1 = 0, b2;

	/* ResNet-50 on jabas-a: the argmax does not beat B1 by 1.05, B stays. */
	b2 = check_learning_epochs(f, "jabas-a", "resnet50", &b1);
	assert_int_equal(b2, b1);
	/* CIFAR-10 on demo (2 V100 + 2 T4): it does, B grows in epoch 2. */
	b2 = check_learning_epochs(f, "demo", "cifar10", &b1);
	assert_true(b2 > b1);
}

static void test_demo_runs(void **state)
{
	struct fx *f = *state;
	const struct hb_agent_ops *agents[] = { &hb_agent_static, &hb_agent_simigrad, &hb_agent_optperf };

	for (size_t k = 0; k < sizeof(agents) / sizeof(agents[0]); k++) {
		struct run a, b;

		run_policy(f, "demo", agents[k], 3, &a);
		run_policy(f, "demo", agents[k], 3, &b);
		assert_same_records(&a.sim, &b.sim);
		report("demo", &a);
		assert_int_equal(a.job->cfg.ngpus, 4);
		hb_sim_free(&a.sim);
		hb_sim_free(&b.sim);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simigrad_step),
		cmocka_unit_test(test_ddp_config),
		cmocka_unit_test(test_simigrad_rounding_holds_then_grows),
		cmocka_unit_test(test_simigrad_shrinks),
		cmocka_unit_test(test_simigrad_clips),
		cmocka_unit_test(test_simigrad_wrong_direction_is_kept),
		cmocka_unit_test(test_cannikin_argmax_and_split),
		cmocka_unit_test(test_cannikin_hysteresis),
		cmocka_unit_test(test_cannikin_unequal_penalty),
		cmocka_unit_test(test_cannikin_needs_memory),
		cmocka_unit_test(test_static_run),
		cmocka_unit_test(test_simigrad_run),
		cmocka_unit_test(test_optperf_run),
		cmocka_unit_test(test_optperf_learning_epochs),
		cmocka_unit_test(test_demo_runs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
