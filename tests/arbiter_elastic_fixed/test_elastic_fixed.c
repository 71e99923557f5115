/* The IBM paper's fixed-batch baseline (policies elastic-fixed,
 * elastic-fixed-max, elastic-fixed-min, elastic-fixed-random;
 * sim/policies/elastic/agent_elastic_fixed.c) under the elastic arbiter:
 *   - the even split of a fixed batch against brute force over all splits;
 *   - the JSA entry of a fixed batch: feasible counts, and S(k) equal to the
 *     elastic entry's wherever the elastic scaler picks the same batch;
 *   - over IBM workloads (--synthetic ibm), in queue and drop mode, no job of
 *     any variant ever runs another batch than its setting, while GPU counts
 *     do change (and the elastic scaler's batches do, so the check can fail);
 *   - Random-BS per job: in range, on the unit grid, the same in every run.
 * Cluster: ibm-p100 (the paper's 40 P100 testbed, 2 per node). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ddp.h"
#include "default_db.h"
#include "elastic_opts.h"
#include "elastic_share.h"
#include "policy.h"
#include "replay.h"
#include "sim.h"
#include "synthetic.h"

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *cl;   /* ibm-p100 */
static const struct hb_model *m_r;    /* resnet50-cifar100 (category 1) */

static const struct hb_agent_ops *const variants[] = { &hb_agent_elastic_fixed, &hb_agent_elastic_fixed_max,
						       &hb_agent_elastic_fixed_min, &hb_agent_elastic_fixed_random };
#define NVAR (int)(sizeof(variants) / sizeof(variants[0]))

/* The arbiter's options (elastic_opts.h), by drop mode: Δ 600 s (the default). */
static const struct hb_elastic_opts modes[2] = { { 600.0, 0 }, { 600.0, 1 } };

static void init(struct hb_sim *sim, int drop)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.progress = HB_PROGRESS_SAMPLES;
	if (hb_sim_init(sim, &cat, cl, db, "elastic-fixed", &o, &err) < 0)
		fail_msg("%s", err.msg);
	sim->policy_opts = &modes[drop != 0];
	hb_sim_set_arbiter(sim, &hb_arbiter_elastic);
}

/* ---- the split ---------------------------------------------------------------- */

/* Smallest possible largest part of u units in k parts of >= 1 unit, by
 * enumerating the largest part: u fits when k parts of at most g hold it. */
static long brute_min_max(long u, int k)
{
	for (long g = 1; g <= u; g++)
		if (g * k >= u && k <= u)
			return g;
	return 0;
}

static void test_split_is_even(void **state)
{
	int lbs[64];

	(void)state;
	assert_int_equal(hb_elastic_fixed_split(88, 8, 3, lbs), 32); /* 11 units: 4, 4, 3 */
	assert_int_equal(lbs[0], 32);
	assert_int_equal(lbs[1], 32);
	assert_int_equal(lbs[2], 24);
	assert_int_equal(hb_elastic_fixed_split(256, 8, 8, lbs), 32);
	assert_int_equal(hb_elastic_fixed_split(100, 8, 1, NULL), 0);  /* not a multiple of the unit */
	assert_int_equal(hb_elastic_fixed_split(32, 8, 5, NULL), 0);   /* a GPU would get nothing */
	assert_int_equal(hb_elastic_fixed_split(32, 8, 0, NULL), 0);
	for (int unit = 1; unit <= 16; unit *= 2)
		for (long u = 1; u <= 40; u++)
			for (int k = 1; k <= 45; k++) {
				long m = hb_elastic_fixed_split(u * unit, unit, k, lbs), sum = 0;

				assert_int_equal(m, brute_min_max(u, k) * unit);
				if (m == 0)
					continue;
				for (int i = 0; i < k; i++) {
					sum += lbs[i];
					assert_int_equal(lbs[i] % unit, 0);
					assert_true(lbs[i] >= unit && lbs[i] <= m && m - lbs[i] <= unit);
					assert_true(i == 0 || lbs[i] <= lbs[i - 1]);
				}
				assert_int_equal(sum, u * unit);
			}
}

/* ---- the JSA entry of a fixed batch -------------------------------------------- */

static void test_fixed_entry(void **state)
{
	static const long batches[] = { 32, 88, 136, 160, 256 };
	struct hb_sim sim;
	struct hb_error err = { 0 };
	struct hb_elastic_entry el, fx;
	int id_el, id_fx;

	(void)state;
	init(&sim, 0);
	if (hb_sim_add_job(&sim, m_r, &hb_agent_elastic, 0.0, &id_el, &err) < 0 ||
	    hb_sim_add_job(&sim, m_r, &hb_agent_elastic_fixed, 0.0, &id_fx, &err) < 0)
		fail_msg("%s", err.msg);
	if (hb_elastic_entry_build(&sim, &sim.jobs[id_el], &el, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(el.b_fixed, 0);
	for (size_t bi = 0; bi < sizeof(batches) / sizeof(batches[0]); bi++) {
		long b = batches[bi], u = b / el.min_lbs;
		int nsame = 0;

		hb_sim_job_request(&sim.jobs[id_fx], 1, b);
		assert_int_equal(hb_elastic_fixed_batch(&sim, &sim.jobs[id_fx]), b);
		assert_false(hb_elastic_entry_matches(&el, &sim, &sim.jobs[id_fx]));
		/* A request outside [minB_G, maxB_G] is clipped to them. */
		hb_sim_job_request(&sim.jobs[id_fx], 1, 8);
		assert_int_equal(hb_elastic_fixed_batch(&sim, &sim.jobs[id_fx]), 32);
		hb_sim_job_request(&sim.jobs[id_fx], 1, 4096);
		assert_int_equal(hb_elastic_fixed_batch(&sim, &sim.jobs[id_fx]), 256);
		hb_sim_job_request(&sim.jobs[id_fx], 1, 0);
		assert_int_equal(hb_elastic_fixed_batch(&sim, &sim.jobs[id_fx]), 32);
		hb_sim_job_request(&sim.jobs[id_fx], 1, b);
		if (hb_elastic_entry_build(&sim, &sim.jobs[id_fx], &fx, &err) < 0)
			fail_msg("%s", err.msg);
		assert_true(hb_elastic_entry_matches(&fx, &sim, &sim.jobs[id_fx]));
		assert_int_equal(fx.b_fixed, b);
		assert_int_equal(fx.k_max, u < cl->ngpus ? u : cl->ngpus);
		assert_true(fx.sc.base_rate == el.sc.base_rate); /* Eq. 1's denominator: T(c_j, 1) */
		for (int k = 1; k <= fx.k_max; k++) {
			long m = el.min_lbs * ((u + k - 1) / k);
			int feasible = m <= fx.per_gpu_max;

			assert_int_equal(isfinite(fx.sc.speedup[k]), feasible);
			assert_int_equal(fx.sc.batch[k], feasible ? b : 0);
			/* Where the elastic scaler runs the same batch on k GPUs, it
			 * splits it evenly too, so the two rates are one number. */
			if (feasible && k <= el.k_max && el.sc.batch[k] == b) {
				assert_true(fabs(fx.sc.speedup[k] - el.sc.speedup[k]) <= 1e-12 * el.sc.speedup[k]);
				nsame++;
			}
			if (feasible) {
				double t1 = 0.0;
				int *one = calloc((size_t)sim.jobs[id_fx].perf->nnodes, sizeof(int));

				one[0] = 1;
				if (hb_ddp_iter_time(sim.jobs[id_fx].perf, one, (int)m, 0, &t1, NULL, &err) < 0)
					fail_msg("%s", err.msg);
				free(one);
				/* t_iter = t_proc(largest share) + t_comm(k) >= t_proc */
				assert_true(fx.sc.iter_s[k] >= t1 * (1 - 1e-12));
				assert_true(fabs(fx.sc.speedup[k] * fx.sc.base_rate - b / fx.sc.iter_s[k]) <=
					    1e-12 * b / fx.sc.iter_s[k]);
			}
		}
		/* Every batch here is the elastic scaler's choice on some count. */
		if (b == 32 || b == 256 || b == 160)
			assert_true(nsame > 0);
		hb_elastic_entry_free(&fx);
	}
	hb_elastic_entry_free(&el);
	hb_sim_free(&sim);
}

/* ---- over traces: the batch never changes -------------------------------------- */

/* An IBM workload replayed in memory under one agent. */
static void replay(struct hb_sim *sim, const struct hb_agent_ops *agent, int drop, const char *const *words,
		   struct hb_replay *rp)
{
	struct hb_synth_options o;
	struct hb_trace_reader *r = NULL;
	struct hb_jobspec *specs = NULL;
	struct hb_replay_opts ro;
	struct hb_error err = { 0 };
	long n = 0;

	hb_synth_options_init(&o);
	o.arrival = HB_SYNTH_IBM;
	for (int i = 0; words[i]; i++)
		if (hb_synth_option_word(&o, words[i], &err) < 0)
			fail_msg("%s", err.msg);
	hb_replay_opts_init(&ro);
	if (hb_synth_open(&o, NULL, &r, &err) < 0 || hb_trace_drain(r, &specs, &n, &err) < 0 ||
	    hb_replay_from_specs(&cat, cl, specs, n, HB_TRACE_SYNTHETIC, "ibm", &ro, rp, &err) < 0)
		fail_msg("%s", err.msg);
	free(specs);
	hb_trace_close(r);
	init(sim, drop);
	if (hb_replay_build(sim, rp, agent, "ibm", &err) < 0 || hb_sim_run(sim, &err) < 0)
		fail_msg("%s under %s: %s", words[0], agent->name, err.msg);
}

/* B_G of a configuration event's text ("...; B_G 88, 3 GPUs, ..."), -1 if none. */
static long event_batch(const struct hb_sim_event_rec *e)
{
	const char *p = strstr(e->detail, "; B_G ");

	return p ? strtol(p + 6, NULL, 10) : -1;
}

static void test_batch_never_changes(void **state)
{
	static const char *const workloads[][6] = {
		{ "hours=3", "burst-high=1", "burst-low=1", NULL },                 /* all categories, Random-BS */
		{ "hours=2", "categories=1", "pattern=high", "kmax=60", NULL },      /* Fig. 5/6's category 1 */
	};
	long resized = 0, jobs_seen = 0, configs = 0;

	(void)state;
	for (size_t w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++)
		for (int drop = 0; drop <= 1; drop++)
			for (int v = 0; v < NVAR; v++) {
				struct hb_sim sim;
				struct hb_replay rp;

				memset(&rp, 0, sizeof(rp));
				replay(&sim, variants[v], drop, workloads[w], &rp);
				for (int j = 0; j < sim.njobs; j++) {
					const struct hb_sim_job *job = &sim.jobs[j];
					long want = hb_elastic_fixed_batch(&sim, job);
					int first_gpus = -1, moved = 0;

					assert_true(want > 0);
					if (variants[v] == &hb_agent_elastic_fixed)
						assert_int_equal(want, rp.jobs[j].batch);
					else if (variants[v] == &hb_agent_elastic_fixed_max)
						assert_int_equal(want, job->max_gbs);
					else if (variants[v] == &hb_agent_elastic_fixed_min)
						assert_int_equal(want, job->min_gbs);
					else
						assert_true(want >= job->min_gbs && want <= job->max_gbs &&
							    want % job->perf->min_lbs == 0);
					for (size_t s = 0; s < sim.nsamples; s++) {
						if (sim.samples[s].job != j || sim.samples[s].ngpus == 0)
							continue;
						if (sim.samples[s].global_bs != want)
							fail_msg("%s, %s mode: job %s ran B_G %ld, its batch is %ld",
								 variants[v]->name, drop ? "drop" : "queue", job->name,
								 sim.samples[s].global_bs, want);
						if (first_gpus < 0)
							first_gpus = sim.samples[s].ngpus;
						moved |= sim.samples[s].ngpus != first_gpus;
					}
					for (size_t e = 0; e < sim.nevents; e++) {
						const struct hb_sim_event_rec *ev = &sim.events[e];

						if (ev->job != j || (strcmp(ev->kind, "start") != 0 && strcmp(ev->kind, "restart") != 0))
							continue;
						configs++;
						if (event_batch(ev) != want)
							fail_msg("%s: job %s %s with '%s', batch %ld", variants[v]->name, job->name,
								 ev->kind, ev->detail, want);
					}
					resized += moved;
					jobs_seen += job->state == HB_JOB_DONE;
				}
				hb_sim_free(&sim);
				hb_replay_free(&rp);
			}
	/* Not vacuous: jobs ran, and the baseline is elastic in GPUs. */
	assert_true(jobs_seen > 100);
	assert_true(configs > jobs_seen);
	assert_true(resized > 10);
}

/* The elastic scaler on the same workload does change batches: the check
 * above would see it. */
static void test_elastic_changes_batches(void **state)
{
	static const char *const words[] = { "hours=3", "burst-high=1", "burst-low=1", NULL };
	struct hb_sim sim;
	struct hb_replay rp;
	long changed = 0;

	(void)state;
	memset(&rp, 0, sizeof(rp));
	replay(&sim, &hb_agent_elastic, 0, words, &rp);
	for (int j = 0; j < sim.njobs; j++) {
		long first = -1;
		int moved = 0;

		for (size_t s = 0; s < sim.nsamples; s++)
			if (sim.samples[s].job == j && sim.samples[s].ngpus > 0) {
				if (first < 0)
					first = sim.samples[s].global_bs;
				moved |= sim.samples[s].global_bs != first;
			}
		changed += moved;
	}
	assert_true(changed > 0);
	hb_sim_free(&sim);
	hb_replay_free(&rp);
}

/* Random-BS: a draw per job from the run's seed, not from event order; other
 * seeds draw other batches. */
static void test_random_bs_seeded(void **state)
{
	struct hb_sim a, b;
	struct hb_error err = { 0 };
	long distinct = 0, differ = 0, prev = -1;

	(void)state;
	init(&a, 0);
	init(&b, 0);
	b.opts.seed = a.opts.seed + 1;
	for (int i = 0; i < 200; i++) {
		int ia, ib;

		if (hb_sim_add_job(&a, m_r, &hb_agent_elastic_fixed_random, i * 10.0, &ia, &err) < 0 ||
		    hb_sim_add_job(&b, m_r, &hb_agent_elastic_fixed_random, i * 10.0, &ib, &err) < 0)
			fail_msg("%s", err.msg);
		long x = hb_elastic_fixed_batch(&a, &a.jobs[ia]);

		assert_int_equal(x, hb_elastic_fixed_batch(&a, &a.jobs[ia])); /* stable */
		assert_true(x >= 32 && x <= 256 && x % 8 == 0);
		distinct += x != prev;
		differ += x != hb_elastic_fixed_batch(&b, &b.jobs[ib]);
		prev = x;
	}
	assert_true(distinct > 100);
	assert_true(differ > 100);
	hb_sim_free(&a);
	hb_sim_free(&b);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	cl = hb_catalog_cluster(&cat, "ibm-p100");
	m_r = hb_catalog_model(&cat, "resnet50-cifar100");
	return cl && m_r ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_is_even),
		cmocka_unit_test(test_fixed_entry),
		cmocka_unit_test(test_batch_never_changes),
		cmocka_unit_test(test_elastic_changes_batches),
		cmocka_unit_test(test_random_bs_seeded),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
