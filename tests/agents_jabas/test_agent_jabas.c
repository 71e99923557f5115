/* sim/agent_jabas.c: the JABAS agent's decisions in hand-built situations
 * (notes/jabas.md §4), each checked against an oracle computed here, and
 * end-to-end runs on cluster A with the default analytic profiles.
 *
 * The decision tests drive the agent's callbacks directly on a simulation
 * that is never run (time stays at 0), so every configuration change is
 * visible in the job right after the call.  The similarity observation is
 * made exact by zeroing the model's observation noise: Phi = B/(B + 2 phi). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alloc.h"
#include "autoscale.h"
#include "default_db.h"
#include "iidp.h"
#include "policy.h"
#include "sim.h"

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *cl;

#define UNIT 2 /* the agent's allocation unit (paper's pairs, notes §4.3) */

/* ---- helpers ------------------------------------------------------------ */

static void must(int rc, const struct hb_error *err)
{
	if (rc < 0)
		fail_msg("%s", err->msg);
}

/* A simulation of one job of model `name` on cluster c, not yet started. */
static struct hb_sim_job *make_sim_on(struct hb_sim *sim, const struct hb_catalog *ct, const struct hb_cluster *c,
				      const char *name, uint64_t seed)
{
	struct hb_sim_opts o;
	struct hb_error err;
	const struct hb_model *m = hb_catalog_model(ct, name);
	int id;

	assert_non_null(m);
	hb_sim_opts_default(&o);
	o.seed = seed;
	o.quiet = 1;
	must(hb_sim_init(sim, ct, c, db, "jabas", &o, &err), &err);
	must(hb_sim_add_job(sim, m, &hb_agent_jabas, 0.0, &id, &err), &err);
	return &sim->jobs[id];
}

/* The same on cluster A. */
static struct hb_sim_job *make_sim(struct hb_sim *sim, const char *name, uint64_t seed)
{
	return make_sim_on(sim, &cat, cl, name, seed);
}

/* Start the job as the simulator's arrival does. */
static void start_job(struct hb_sim *sim, struct hb_sim_job *job)
{
	struct hb_error err;

	int all[64];

	for (int i = 0; i < sim->cl->nnodes; i++)
		all[i] = sim->cl->nodes[i].ngpus;
	job->next_adapt_iter = (double)hb_agent_jabas.interval(sim, hb_sim_agent_state(sim, job), job);
	must(hb_sim_start_job(sim, job, all, &err), &err);
}

/* Exact observations from here on. */
static void noiseless(struct hb_sim_job *job)
{
	job->stats->sigma = 0.0;
}

static double exact_similarity(struct hb_sim *sim, struct hb_sim_job *job)
{
	double b = (double)job->cfg.global_bs;

	return hb_stats_similarity(hb_sim_phi(sim, job, b), b);
}

/* One adaptation point at iteration `step`, as the simulator reaches it. */
static void adapt_at(struct hb_sim *sim, struct hb_sim_job *job, long step)
{
	struct hb_error err;

	job->iters = (double)step;
	job->next_adapt_iter = (double)step + (double)hb_agent_jabas.interval(sim, hb_sim_agent_state(sim, job), job);
	must(hb_agent_jabas.on_adapt(sim, hb_sim_agent_state(sim, job), job, &err), &err);
}

/* ---- start (§4.3 initial phase) ---------------------------------------- */

/* The initial phase on cluster A with B_G^init = minB_G = 256 (ResNet-50):
 * the oracle enumerates the allocations itself (all splits of each node in
 * pairs, no merging: the four nodes of A differ) and walks the constant
 * trajectory as notes §4.3 does with one point: steps = floor(|D|/B) + 1,
 * each candidate running B_G^init itself (the artifact's initial
 * configuration solver, iidp.h HB_IIDP_M_EXACT). */
static void test_start_resnet50_cluster_a(void **state)
{
	struct hb_sim sim;
	struct hb_sim_job *job = make_sim(&sim, "resnet50", 1);
	const int nn = cl->nnodes;
	int alloc[16] = { 0 }, best[16] = { 0 }, found = 0;
	double best_t = INFINITY;
	long ncand = 0;
	struct hb_error err;

	(void)state;
	assert_int_equal(job->min_gbs, 256);
	assert_true(nn <= 16);
	start_job(&sim, job);
	/* Odometer over per-node pair counts 0..ngpus/2, skipping all-zero:
	 * ascending total units with ties in descending lexicographic order
	 * would need sorting; a strict "<" then a tie check finds the same
	 * minimum whatever the order, so test ties separately. */
	for (;;) {
		int k = 0, total = 0;

		while (k < nn && alloc[k] == cl->nodes[k].ngpus / UNIT * UNIT) {
			alloc[k] = 0;
			k++;
		}
		if (k == nn)
			break;
		alloc[k] += UNIT;
		for (int i = 0; i < nn; i++)
			total += alloc[i];
		if (total == 0)
			continue;
		ncand++;
		{
			struct hb_iidp_request req = { .alloc = alloc, .global_bs = 256, .m_rule = HB_IIDP_M_EXACT };
			struct hb_iidp_result r;
			double t;

			must(hb_iidp_solve(job->solver, &req, &r, &err), &err);
			if (r.found) {
				double D = job->model->dataset_size, steps = floor(D / 256.0) + 1.0;

				assert_int_equal(r.global_bs, 256);
				t = r.iter_s * steps;
				if (t < best_t) {
					best_t = t;
					memcpy(best, alloc, sizeof(alloc));
					found = 1;
				}
			}
			hb_iidp_result_free(&r);
		}
	}
	assert_int_equal(ncand, 80); /* 3^4 - 1 (notes §4.3) */
	assert_true(found);
	{
		struct hb_epoch_estimate e;
		const struct hb_jabas_first exact = { HB_IIDP_M_EXACT, 0 };
		struct hb_iidp_shape sh = { 0 };

		must(hb_iidp_shape_of(job->solver, job->cfg.alloc, &sh, &err), &err);
		must(hb_jabas_epoch_time_shape(job->solver, &sh, &(long){ 256 }, 1, 100, 0, job->model->dataset_size,
					       &exact, &e, &err), &err);
		hb_iidp_shape_free(&sh);
		/* The agent's pick reaches the oracle's minimum (equal or tied). */
		assert_true(fabs(e.epoch_s - best_t) <= 1e-9 * best_t);
		print_message("start ResNet-50 @256 on A: alloc [%d %d %d %d], predicted epoch %.1f s\n",
			      job->cfg.alloc[0], job->cfg.alloc[1], job->cfg.alloc[2], job->cfg.alloc[3], e.epoch_s);
	}
	if (memcmp(best, job->cfg.alloc, (size_t)nn * sizeof(int)) != 0)
		print_message("note: tie between the oracle's first minimum and the agent's later one\n");
	/* Configuration: the exact rule on that allocation at 256. */
	{
		struct hb_iidp_request req = { .alloc = job->cfg.alloc, .global_bs = 256, .m_rule = HB_IIDP_M_EXACT };
		struct hb_iidp_result r;
		int ng = 0;

		must(hb_iidp_solve(job->solver, &req, &r, &err), &err);
		assert_true(r.found);
		for (int i = 0; i < nn; i++) {
			assert_int_equal(job->cfg.alloc[i] % UNIT, 0);
			ng += job->cfg.alloc[i];
		}
		assert_int_equal(job->cfg.ngpus, ng);
		assert_int_equal(job->cfg.global_bs, r.global_bs);
		assert_int_equal(job->cfg.local_bs, r.local_bs);
		assert_true(job->cfg.iter_s == r.iter_s);
		assert_int_equal(job->cfg.global_bs, 2L * r.m * r.local_bs);
		hb_iidp_result_free(&r);
	}
	/* Similarity every p = 100 iterations, charged per iteration. */
	assert_true(fabs(job->cfg.overhead_per_iter_s -
			 hb_sim_similarity_cost_s(&sim, job, job->cfg.alloc) / 100.0) < 1e-15);
	assert_int_equal(job->state, HB_JOB_RUNNING);
	assert_int_equal(job->restarts, 0);
	hb_sim_free(&sim);
}

/* Ties in the initial phase go to the later candidate of Q (notes §4.3
 * "<=").  Two V100 nodes that differ only in their rack are not merged
 * (alloc.h), yet perform identically, so every allocation and its mirror
 * tie exactly; a 10 Gb/s network between them makes one whole node the
 * best, (2,0) or its mirror (0,2).  The oracle walks Q in its order with
 * "<=" and with "<", and the test needs the two to differ (a real tie at
 * the minimum).  The cluster goes into a catalog of its own: adding it to
 * the shared one would move the clusters the other tests point to. */
static void test_start_tie_goes_to_later_candidate(void **state)
{
	static const char json[] =
		"{\"name\": \"tie-v100\", \"intra_link\": \"pcie3-x16\", \"intra_bw\": 15750000000.0,"
		" \"inter_link\": \"eth-10g\", \"inter_bw\": 1250000000.0, \"storage_bw\": 1250000000.0,"
		" \"restart_latency_s\": 20, \"source\": \"test: two V100 nodes on 10 Gb/s\", \"groups\": ["
		"{\"gpu\": \"v100\", \"nodes\": 1, \"gpus_per_node\": 4, \"rack\": 0},"
		"{\"gpu\": \"v100\", \"nodes\": 1, \"gpus_per_node\": 4, \"rack\": 1}]}";
	char path[4096];
	const char *dir = getenv("HETBATCH_CACHE");
	const struct hb_cluster *tc;
	struct hb_catalog tcat;
	struct hb_sim sim;
	struct hb_sim_job *job;
	struct hb_alloc_set q;
	struct hb_error err;
	long le = -1, lt = -1;
	double best_le = INFINITY, best_lt = INFINITY;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/test-agents-jabas-tie.json", dir ? dir : "/tmp");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(json, f);
	fclose(f);
	must(hb_catalog_load_builtin(&tcat, &err), &err);
	must(hb_catalog_resolve_cluster(&tcat, path, &tc, &err), &err);
	remove(path);
	job = make_sim_on(&sim, &tcat, tc, "resnet50", 1);
	start_job(&sim, job);
	must(hb_alloc_enumerate(tc, &tcat, UNIT, 1, 0, &q, &err), &err);
	assert_int_equal(q.ncand, 8); /* 3^2 - 1: the racks keep the nodes apart */
	for (size_t i = 0; i < q.ncand; i++) {
		int a[2];
		struct hb_epoch_estimate e;

		const struct hb_jabas_first exact = { HB_IIDP_M_EXACT, 0 };
		struct hb_iidp_shape sh = { 0 };

		for (int n = 0; n < 2; n++)
			a[n] = hb_alloc_node_units(&q, i)[n] * UNIT;
		must(hb_iidp_shape_of(job->solver, a, &sh, &err), &err);
		must(hb_jabas_epoch_time_shape(job->solver, &sh, &(long){ job->min_gbs }, 1, 100, 0,
					       job->model->dataset_size, &exact, &e, &err), &err);
		hb_iidp_shape_free(&sh);
		if (e.feasible && e.epoch_s <= best_le) {
			best_le = e.epoch_s;
			le = (long)i;
		}
		if (e.feasible && e.epoch_s < best_lt) {
			best_lt = e.epoch_s;
			lt = (long)i;
		}
	}
	assert_true(le >= 0 && lt >= 0);
	assert_true(best_le == best_lt);
	assert_true(le > lt); /* a real tie at the minimum */
	for (int n = 0; n < 2; n++)
		assert_int_equal(job->cfg.alloc[n], hb_alloc_node_units(&q, (size_t)le)[n] * UNIT);
	print_message("tie: candidates %ld and %ld at %.1f s/epoch, agent took [%d %d]\n", lt, le, best_le,
		      job->cfg.alloc[0], job->cfg.alloc[1]);
	hb_alloc_free(&q);
	hb_sim_free(&sim);
	hb_catalog_free(&tcat);
}

/* ---- adaptive batching (§4.1) ------------------------------------------- */

/* The configuration the run-time parity rule gives for target `next` from
 * `cur` on alloc (the oracle: notes §3 "M at run time"). */
static void runtime_expect(struct hb_sim_job *job, const int *alloc, long cur, long next, struct hb_iidp_result *r)
{
	struct hb_iidp_request req = {
		.alloc = alloc, .global_bs = next, .m_rule = HB_IIDP_M_RUNTIME, .cur_global_bs = cur,
	};
	struct hb_error err;

	must(hb_iidp_solve(job->solver, &req, r, &err), &err);
}

/* Check the realised batch follows the parity rule, worked by hand (notes
 * §3 "M at run time"): n_w = round(B'/B_L) (ties to even, as Python's
 * round), plus 1 if odd when growing, minus 1 if odd when shrinking; the
 * realised batch B_L n_w strictly beyond the current one; n_w >= N_G. */
static void check_parity(const struct hb_sim_job *job, long cur, long next)
{
	long bl = job->cfg.local_bs, nw = job->cfg.global_bs / bl;
	long n = (long)nearbyint((double)next / (double)bl);

	assert_int_equal(job->cfg.global_bs % bl, 0);
	if (next > cur) {
		n += n % 2;
		assert_true(job->cfg.global_bs > cur);
	} else {
		n -= n % 2;
		assert_true(job->cfg.global_bs < cur);
	}
	assert_int_equal(nw, n);
	assert_true(nw >= job->cfg.ngpus);
	assert_int_equal(nw, hb_iidp_runtime_workers(cur, next, (int)bl, job->cfg.ngpus));
}

static void test_similarity_rule_grow_shrink_clip(void **state)
{
	struct hb_sim sim;
	struct hb_sim_job *job = make_sim(&sim, "resnet50", 3);
	struct hb_iidp_result r;
	long cur, next, reconf;
	double phi;

	(void)state;
	start_job(&sim, job);
	noiseless(job);

	/* Grow: Phi < gamma -> B_G (1 + alpha). */
	cur = job->cfg.global_bs;
	phi = exact_similarity(&sim, job);
	job->gamma = phi + 0.05;
	next = lround((double)cur * 1.1);
	runtime_expect(job, job->cfg.alloc, cur, next, &r);
	assert_true(r.found);
	reconf = job->reconfigs;
	adapt_at(&sim, job, 100);
	assert_true(fabs(job->last_similarity - phi) < 1e-12);
	assert_int_equal(job->cfg.global_bs, r.global_bs);
	assert_int_equal(job->cfg.local_bs, r.local_bs);
	assert_true(job->cfg.iter_s == r.iter_s);
	assert_int_equal(job->reconfigs, reconf + 1);
	check_parity(job, cur, next);
	print_message("grow: %ld -> target %ld -> realised %ld (B_L %d)\n", cur, next, job->cfg.global_bs,
		      job->cfg.local_bs);
	hb_iidp_result_free(&r);

	/* Shrink: Phi > gamma -> B_G (1 - alpha). */
	cur = job->cfg.global_bs;
	phi = exact_similarity(&sim, job);
	job->gamma = phi - 0.05;
	next = lround((double)cur * 0.9);
	if (next < job->min_gbs)
		next = job->min_gbs;
	runtime_expect(job, job->cfg.alloc, cur, next, &r);
	reconf = job->reconfigs;
	adapt_at(&sim, job, 200);
	if (r.found) {
		assert_int_equal(job->cfg.global_bs, r.global_bs);
		assert_int_equal(job->cfg.local_bs, r.local_bs);
		assert_int_equal(job->reconfigs, reconf + 1);
		check_parity(job, cur, next);
	} else {
		assert_int_equal(job->cfg.global_bs, cur); /* skipped, kept */
		assert_int_equal(job->reconfigs, reconf);
	}
	print_message("shrink: %ld -> target %ld -> realised %ld (%s)\n", cur, next, job->cfg.global_bs,
		      r.found ? "applied" : "infeasible, kept");
	hb_iidp_result_free(&r);

	/* Clip at the top: the target is maxB_G, not B_G (1 + alpha). */
	cur = job->cfg.global_bs;
	job->max_gbs = cur + 30;
	job->gamma = exact_similarity(&sim, job) + 0.05;
	runtime_expect(job, job->cfg.alloc, cur, cur + 30, &r);
	adapt_at(&sim, job, 300);
	if (r.found) {
		assert_int_equal(job->cfg.global_bs, r.global_bs);
		check_parity(job, cur, cur + 30);
	} else {
		assert_int_equal(job->cfg.global_bs, cur);
	}
	print_message("clip max %ld: %ld -> realised %ld\n", job->max_gbs, cur, job->cfg.global_bs);
	hb_iidp_result_free(&r);

	/* At the bound already: no change, no reconfiguration. */
	cur = job->cfg.global_bs;
	job->max_gbs = cur;
	reconf = job->reconfigs;
	adapt_at(&sim, job, 400);
	assert_int_equal(job->cfg.global_bs, cur);
	assert_int_equal(job->reconfigs, reconf);

	/* Clip at the bottom: at minB_G and Phi > gamma, nothing moves. */
	job->max_gbs = 32768;
	job->min_gbs = cur;
	job->gamma = exact_similarity(&sim, job) - 0.05;
	adapt_at(&sim, job, 500);
	assert_int_equal(job->cfg.global_bs, cur);
	assert_int_equal(job->reconfigs, reconf);
	assert_int_equal(job->restarts, 0); /* adaptation never moves GPUs */
	hb_sim_free(&sim);
}

/* A target no configuration can reach keeps the current one (§4.1). */
static void test_infeasible_target_keeps_configuration(void **state)
{
	struct hb_sim sim;
	struct hb_sim_job *job = make_sim(&sim, "resnet50", 4);
	struct hb_iidp_result r;
	struct hb_job_config before;

	(void)state;
	start_job(&sim, job);
	noiseless(job);
	/* Shrinking below the GPUs' minimum: with minB_G lowered to 1, a target
	 * under N_G x minB_L (or one with n_w < N_G for every B_L) has no
	 * configuration. */
	job->min_gbs = 1;
	job->gamma = -2.0; /* Phi > gamma always: shrink */
	hb_job_config_init(&before, cl->nnodes);
	for (long k = 1; k <= 40; k++) {
		long c = job->cfg.global_bs, next = lround((double)c * 0.9), reconf = job->reconfigs;

		if (next < 1)
			next = 1;
		assert_int_equal(hb_job_config_copy(&before, &job->cfg, cl->nnodes), 0);
		runtime_expect(job, job->cfg.alloc, c, next, &r);
		adapt_at(&sim, job, 100 * k);
		if (!r.found) {
			/* Every field as before, and no reconfiguration charged. */
			assert_memory_equal(job->cfg.alloc, before.alloc, (size_t)cl->nnodes * sizeof(int));
			assert_int_equal(job->cfg.global_bs, before.global_bs);
			assert_int_equal(job->cfg.local_bs, before.local_bs);
			assert_true(job->cfg.iter_s == before.iter_s);
			assert_string_equal(job->cfg.layout, before.layout);
			assert_int_equal(job->reconfigs, reconf);
			hb_iidp_result_free(&r);
			print_message("infeasible shrink from %ld kept (after %ld steps)\n", c, k);
			hb_job_config_free(&before);
			hb_sim_free(&sim);
			return;
		}
		assert_int_equal(job->cfg.global_bs, r.global_bs);
		hb_iidp_result_free(&r);
	}
	hb_job_config_free(&before);
	hb_sim_free(&sim);
	fail_msg("shrinking never became infeasible");
}

/* ---- epoch-end auto-scaling (§4.2, §4.3) --------------------------------- */

/* Apply B_G = want on the current GPUs (Algorithm 1), as a hand-built
 * starting point; returns the realised B_G. */
static long force_batch(struct hb_sim *sim, struct hb_sim_job *job, long want)
{
	struct hb_iidp_request req = { .alloc = job->cfg.alloc, .global_bs = want, .m_rule = HB_IIDP_M_ROUND };
	struct hb_iidp_result r;
	struct hb_job_config c;
	struct hb_error err;

	must(hb_iidp_solve(job->solver, &req, &r, &err), &err);
	assert_true(r.found);
	hb_job_config_init(&c, cl->nnodes);
	memcpy(c.alloc, job->cfg.alloc, (size_t)cl->nnodes * sizeof(int));
	c.ngpus = r.n_gpus;
	c.global_bs = r.global_bs;
	c.local_bs = r.local_bs;
	c.iter_s = r.iter_s;
	c.eff_factor = 1.0;
	snprintf(c.layout, sizeof(c.layout), "test");
	must(hb_sim_apply(sim, job, &c, HB_APPLY_INPLACE, "test", &err), &err);
	hb_job_config_free(&c);
	hb_iidp_result_free(&r);
	return job->cfg.global_bs;
}

/* Brute force: argmin over every candidate of Q of the epoch estimate of
 * traj with its first point solved by first, "<=" ties; returns the GPUs
 * per node in best. */
static double brute_force(struct hb_sim_job *job, const long *traj, int ntraj, long done,
			  const struct hb_jabas_first *first, int *best)
{
	struct hb_alloc_set q;
	struct hb_error err;
	double bt = INFINITY;

	must(hb_alloc_enumerate(cl, &cat, UNIT, 0, 0, &q, &err), &err);
	for (size_t i = 0; i < q.ncand; i++) {
		int a[16];
		struct hb_epoch_estimate e;

		struct hb_iidp_shape sh = { 0 };

		for (int n = 0; n < cl->nnodes; n++)
			a[n] = hb_alloc_node_units(&q, i)[n] * UNIT;
		must(hb_iidp_shape_of(job->solver, a, &sh, &err), &err);
		must(hb_jabas_epoch_time_shape(job->solver, &sh, traj, ntraj, 100, done, job->model->dataset_size,
					       first, &e, &err), &err);
		hb_iidp_shape_free(&sh);
		if (e.feasible && e.epoch_s <= bt) {
			bt = e.epoch_s;
			memcpy(best, a, (size_t)cl->nnodes * sizeof(int));
		}
	}
	hb_alloc_free(&q);
	return bt;
}

/* With B_G held at one value for the whole epoch (bounds pinned), both
 * forecasters see a constant series, so the trajectory is that value at
 * every adaptation point of the next epoch; the agent must move to the
 * brute-force argmin, its first point run exactly (the artifact's
 * estimate_epoch_time preserves the current B_G), by restart iff it
 * differs from the current allocation, and the restart runs the current
 * B_G. */
static void epoch_case(struct hb_sim *sim, struct hb_sim_job *job, long want, long first_step, long *step_out,
		       int expect_restart)
{
	struct hb_error err;
	long b, step = first_step, nq, done;
	long traj[4096];
	int best[16], before[16], restarts = job->restarts;
	double bt;
	const struct hb_jabas_first keep = { HB_IIDP_M_EXACT, 0 };

	b = force_batch(sim, job, want);
	job->min_gbs = job->max_gbs = b;
	for (int k = 0; k < 5; k++) {
		step += 100;
		adapt_at(sim, job, step);
		assert_int_equal(job->cfg.global_bs, b);
	}
	/* The epoch ends 40 iterations into the next block. */
	job->iters = (double)(step + 40);
	job->next_adapt_iter = (double)(step + 100);
	done = 40;
	nq = (long)floor(floor(job->model->dataset_size / (double)b) / 100.0);
	assert_true(nq + 1 <= 4096);
	for (long i = 0; i <= nq; i++)
		traj[i] = b;
	bt = brute_force(job, traj, (int)(nq + 1), done, &keep, best);
	assert_true(isfinite(bt));
	memcpy(before, job->cfg.alloc, (size_t)cl->nnodes * sizeof(int));
	must(hb_agent_jabas.on_epoch_end(sim, hb_sim_agent_state(sim, job), job, &err), &err);
	assert_memory_equal(job->cfg.alloc, best, (size_t)cl->nnodes * sizeof(int));
	if (memcmp(before, best, (size_t)cl->nnodes * sizeof(int)) != 0) {
		struct hb_iidp_request req = { .alloc = best, .global_bs = b, .m_rule = HB_IIDP_M_EXACT };
		struct hb_iidp_result r;

		assert_int_equal(job->restarts, restarts + 1);
		assert_int_equal(job->state, HB_JOB_RESTARTING);
		/* Configuration for traj[0] on the new GPUs, run exactly: B_G as
		 * before the restart. */
		must(hb_iidp_solve(job->solver, &req, &r, &err), &err);
		assert_true(r.found);
		assert_int_equal(job->cfg.global_bs, r.global_bs);
		assert_int_equal(job->cfg.local_bs, r.local_bs);
		assert_int_equal(job->cfg.global_bs, b);
		assert_true(job->cfg.iter_s == r.iter_s);
		hb_iidp_result_free(&r);
	} else {
		assert_int_equal(job->restarts, restarts);
	}
	if (expect_restart >= 0)
		assert_int_equal(job->restarts - restarts, expect_restart);
	print_message("epoch end at B_G %ld (%ld-point trajectory): [%d %d %d %d] -> [%d %d %d %d], %.1f s/epoch, "
		      "restarts %d\n", b, nq + 1, before[0], before[1], before[2], before[3], best[0], best[1],
		      best[2], best[3], bt, job->restarts);
	job->epoch++;
	*step_out = step + 40;
}

static void test_epoch_autoscale_argmin_and_restart(void **state)
{
	struct hb_sim sim;
	struct hb_sim_job *job = make_sim(&sim, "resnet50", 5);
	long step = 0;
	int ng0;

	(void)state;
	start_job(&sim, job);
	noiseless(job);
	ng0 = job->cfg.ngpus;
	/* A large batch: the argmin is another allocation than the small
	 * batch's start (checked: must restart once). */
	epoch_case(&sim, job, 8192, step, &step, 1);
	assert_true(job->cfg.ngpus != ng0);
	/* Same batch again: the allocation is already the argmin, no restart. */
	epoch_case(&sim, job, job->cfg.global_bs, step, &step, 0);
	hb_sim_free(&sim);

	/* A fresh job kept at B_G^init: its start allocation was chosen for
	 * the same batch, and the epoch end follows the brute force (restart
	 * or not, whichever the estimate with a block in progress says). */
	job = make_sim(&sim, "resnet50", 6);
	start_job(&sim, job);
	noiseless(job);
	step = 0;
	epoch_case(&sim, job, job->min_gbs, step, &step, -1);
	hb_sim_free(&sim);
}

/* An epoch end runs the job's B_G itself on every candidate and in the
 * restart (unist-ssl/JABAS jabas/config/configurator.py,
 * AutoScalingConfigurator.estimate_epoch_time: "current LBS and GBS must be
 * preserved for next epoch"; autoscale.h struct hb_jabas_first says why
 * B_L is left free).  epoch_case checks the argmin against the brute force
 * under that rule and the restart's B_G; here, batches where Algorithm 1
 * would have restarted at another B_G (on cluster B, ResNet-50's 1088 at
 * B_L 32 became 1024 at B_L 64), so the test fails under the rounding
 * rule. */
static void test_epoch_end_keeps_global_batch(void **state)
{
	int distinct = 0, restarted = 0;

	(void)state;
	for (long want = 608; want <= 8192 && distinct < 1; want += 40) {
		struct hb_sim sim;
		struct hb_sim_job *job = make_sim(&sim, "resnet50", 7);
		struct hb_error err;
		long step = 0, b;
		int lbs, r0;

		start_job(&sim, job);
		noiseless(job);
		r0 = job->restarts;
		epoch_case(&sim, job, want, step, &step, -1);
		b = job->cfg.global_bs;
		lbs = job->cfg.local_bs;
		if (job->restarts > r0) {
			struct hb_iidp_request req = { .alloc = job->cfg.alloc, .global_bs = b,
						       .m_rule = HB_IIDP_M_ROUND };
			struct hb_iidp_result r;

			restarted++;
			must(hb_iidp_solve(job->solver, &req, &r, &err), &err);
			assert_true(r.found);
			if (r.global_bs != b) {
				print_message("epoch end at B_G %ld (B_L %d): the restart keeps it; Algorithm 1 would "
					      "run B_G %ld at B_L %d\n", b, lbs, r.global_bs, r.local_bs);
				distinct++;
			}
			hb_iidp_result_free(&r);
		}
		hb_sim_free(&sim);
	}
	assert_true(restarted >= 1);
	assert_true(distinct >= 1);
}

/* The initial phase runs B_G^init itself on every candidate (the
 * artifact's configuration_solver.py; iidp.h HB_IIDP_M_EXACT).  LLaMA2-7B
 * on cluster C at B_G^init = minB_G = 32: an iteration costs 7-8 s on
 * most allocations (the all-reduce of 13.5 GB of gradients does not shrink
 * with the batch; the ZeRO-Offload update did not either while it was
 * charged whole, 12.3 s then), so under Algorithm 1 the 6-GPU candidate
 * that rounds 32 up to 36 (B_L 6, M 3) runs 12.5 % more samples per
 * iteration and wins on that alone (JABAS held 6 GPUs, issue 38).  Exact,
 * every candidate runs 32 and the argmin is the fastest iteration at 32,
 * the brute force over Q here (8 GPUs, the 100 % and 75 % nodes: at 2
 * samples a GPU the 25 % node, at its measured speed 0.25 (catalog_gpu.c),
 * is a straggler IIDP cannot unload below one B_L; with cap^(1/3) speeds
 * and the partitioned ZeRO-Offload update it was all 16). */
static void test_start_runs_init_batch_exactly(void **state)
{
	const struct hb_cluster *c = hb_catalog_cluster(&cat, "jabas-c");
	const struct hb_jabas_first exact = { HB_IIDP_M_EXACT, 0 };
	struct hb_sim sim;
	struct hb_sim_job *job;
	struct hb_alloc_set q;
	struct hb_error err;
	double best_ex = INFINITY, best_al = INFINITY;
	int arg_ex[8] = { 0 }, al_bs = 0, ex_gpus = 0, al_gpus = 0;

	(void)state;
	assert_non_null(c);
	assert_true(c->nnodes <= 8);
	job = make_sim_on(&sim, &cat, c, "llama2-7b", 1);
	assert_int_equal(job->min_gbs, 32);
	start_job(&sim, job);
	must(hb_alloc_enumerate(c, &cat, UNIT, 0, 0, &q, &err), &err);
	assert_int_equal(q.ncand, 80);
	for (size_t i = 0; i < q.ncand; i++) {
		int a[8];
		struct hb_iidp_shape sh = { 0 };
		struct hb_epoch_estimate ex, al;

		for (int n = 0; n < c->nnodes; n++)
			a[n] = hb_alloc_node_units(&q, i)[n] * UNIT;
		must(hb_iidp_shape_of(job->solver, a, &sh, &err), &err);
		must(hb_jabas_epoch_time_shape(job->solver, &sh, &(long){ 32 }, 1, 100, 0, job->model->dataset_size,
					       &exact, &ex, &err), &err);
		must(hb_jabas_epoch_time_shape(job->solver, &sh, &(long){ 32 }, 1, 100, 0, job->model->dataset_size,
					       NULL, &al, &err), &err);
		hb_iidp_shape_free(&sh);
		if (ex.feasible) {
			assert_int_equal(ex.first_global_bs, 32);
			if (ex.epoch_s <= best_ex) {
				best_ex = ex.epoch_s;
				memcpy(arg_ex, a, sizeof(a));
				ex_gpus = 0;
				for (int n = 0; n < c->nnodes; n++)
					ex_gpus += a[n];
			}
		}
		if (al.feasible && al.epoch_s <= best_al) {
			best_al = al.epoch_s;
			al_bs = (int)al.first_global_bs;
			al_gpus = 0;
			for (int n = 0; n < c->nnodes; n++)
				al_gpus += a[n];
		}
	}
	hb_alloc_free(&q);
	/* the agent: the exact argmin, at 32 */
	assert_int_equal(job->cfg.global_bs, 32);
	assert_memory_equal(job->cfg.alloc, arg_ex, (size_t)c->nnodes * sizeof(int));
	/* the rounding rule's argmin is another allocation at a rounded batch */
	assert_true(al_bs != 32);
	assert_true(al_gpus != ex_gpus);
	print_message("LLaMA2-7B on C at B_G^init 32: exact argmin %d GPUs (%.0f s/epoch); Algorithm 1 %d GPUs at "
		      "B_G %d (%.0f s/epoch)\n", ex_gpus, best_ex, al_gpus, al_bs, best_al);
	hb_sim_free(&sim);
}

/* ---- end to end ------------------------------------------------------------ */

struct run_summary {
	double finish_s, cost_usd, mean_gpus, mean_bs, wall_s, overhead_s;
	int restarts;
	long reconfigs, final_bs, epochs;
	double iters;
};

static void run_once(const char *model, uint64_t seed, struct hb_sim *sim, struct run_summary *s)
{
	struct hb_error err;
	struct hb_sim_job *job = make_sim(sim, model, seed);

	must(hb_sim_run(sim, &err), &err);
	job = &sim->jobs[0];
	assert_int_equal(job->state, HB_JOB_DONE);
	s->finish_s = job->finish_s;
	s->cost_usd = job->cost_usd;
	s->mean_gpus = job->gpus_time_sum / job->finish_s;
	s->mean_bs = job->run_s > 0 ? job->gbs_time_sum / job->run_s : 0;
	s->wall_s = sim->wall_s;
	s->overhead_s = job->overhead_s;
	s->restarts = job->restarts;
	s->reconfigs = job->reconfigs;
	s->final_bs = job->cfg.global_bs;
	s->epochs = job->epoch;
	s->iters = job->iters;
}

static void same_records(const struct hb_sim *a, const struct hb_sim *b)
{
	assert_int_equal(a->nsamples, b->nsamples);
	assert_int_equal(a->nevents, b->nevents);
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct hb_sim_sample *x = &a->samples[i], *y = &b->samples[i];

		assert_true(x->t == y->t && x->global_bs == y->global_bs && x->local_bs == y->local_bs &&
			    x->ngpus == y->ngpus && x->iter_s == y->iter_s && x->progress_frac == y->progress_frac &&
			    x->similarity == y->similarity && x->cost_usd == y->cost_usd && x->epoch == y->epoch);
	}
	for (size_t i = 0; i < a->nevents; i++) {
		assert_true(a->events[i].t == b->events[i].t);
		assert_string_equal(a->events[i].kind, b->events[i].kind);
		assert_string_equal(a->events[i].detail, b->events[i].detail);
	}
}

static void report(const char *model, const struct run_summary *s)
{
	print_message("%s on jabas-a: time to target %.0f s (%.2f h), cost $%.2f, mean GPUs %.2f, restarts %d, "
		      "reconfigs %ld, epochs %ld, iterations %.0f, mean B_G %.0f, final B_G %ld, overhead %.0f s, "
		      "wall %.3f s\n", model, s->finish_s, s->finish_s / 3600, s->cost_usd, s->mean_gpus, s->restarts,
		      s->reconfigs, s->epochs, s->iters, s->mean_bs, s->final_bs, s->overhead_s, s->wall_s);
}

static void end_to_end(const char *model, long min_epochs)
{
	struct hb_sim a, b;
	struct run_summary sa, sb;
	const struct hb_model *m = hb_catalog_model(&cat, model);

	run_once(model, 42, &a, &sa);
	run_once(model, 42, &b, &sb);
	report(model, &sa);
	same_records(&a, &b);
	assert_true(sa.finish_s == sb.finish_s && sa.cost_usd == sb.cost_usd && sa.restarts == sb.restarts);
	/* Sanity of the run: it finished, trained at least as many epochs as the
	 * target asks at the reference batch (E(B) <= 1), stayed in bounds, and
	 * held at most the whole cluster. */
	assert_true(sa.epochs >= min_epochs);
	assert_true(sa.mean_gpus > 0 && sa.mean_gpus <= cl->ngpus + 1e-9);
	assert_true(sa.final_bs >= 1 && sa.final_bs <= 2 * m->max_gbs);
	assert_true(sa.cost_usd > 0);
	/* The restart count matches the restart events, and every restart
	 * happens at an epoch end (auto-scaling is per epoch, notes §4.3). */
	{
		int nr = 0;
		double t_epoch = -1.0;

		for (size_t i = 0; i < a.nevents; i++) {
			if (strcmp(a.events[i].kind, "epoch") == 0)
				t_epoch = a.events[i].t;
			if (strcmp(a.events[i].kind, "restart") == 0) {
				nr++;
				assert_true(a.events[i].t == t_epoch);
			}
		}
		assert_int_equal(nr, sa.restarts);
	}
	hb_sim_free(&a);
	hb_sim_free(&b);
	/* Another seed gives another similarity sequence. */
	run_once(model, 43, &a, &sb);
	assert_true(sb.finish_s != sa.finish_s || sb.final_bs != sa.final_bs);
	report(model, &sb);
	hb_sim_free(&a);
}

static void test_end_to_end_resnet50(void **state)
{
	(void)state;
	end_to_end("resnet50", 90);
}

static void test_end_to_end_gnmt(void **state)
{
	(void)state;
	end_to_end("gnmt", 8);
}

/* ---- fixture ---------------------------------------------------------------- */

static int setup(void **state)
{
	struct hb_error err;

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	cl = hb_catalog_cluster(&cat, "jabas-a");
	return cl ? 0 : -1;
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
		cmocka_unit_test(test_start_resnet50_cluster_a),
		cmocka_unit_test(test_start_tie_goes_to_later_candidate),
		cmocka_unit_test(test_similarity_rule_grow_shrink_clip),
		cmocka_unit_test(test_infeasible_target_keeps_configuration),
		cmocka_unit_test(test_epoch_autoscale_argmin_and_restart),
		cmocka_unit_test(test_epoch_end_keeps_global_batch),
		cmocka_unit_test(test_start_runs_init_batch_exactly),
		cmocka_unit_test(test_end_to_end_resnet50),
		cmocka_unit_test(test_end_to_end_gnmt),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
