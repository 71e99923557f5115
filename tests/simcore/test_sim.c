/* sim/sim.c: closed-form progress against an iteration-by-iteration
 * reference, epoch and adaptation milestones, restart and reconfiguration
 * accounting, determinism, an agent table's lifecycle (its run-wide state
 * made once on its first job, passed to every callback, freed once after
 * the jobs' own).  A test agent with a fixed configuration isolates the
 * event loop from every policy. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "default_db.h"
#include "sim.h"

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *cl;
static int model_idx;

/* ---- a test agent ------------------------------------------------------- */

struct fixed_state {
	long interval;      /* adaptation interval, 0 none */
	int restart_epoch;  /* epoch at whose end to restart on half the GPUs, 0 never */
	int inplace_adapt;  /* adaptation point at which to change B_G in place, 0 never */
	long adapts_seen;
};

static struct fixed_state fixed;

static long fx_interval(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job)
{
	(void)sim;
	(void)state;
	(void)job;
	return fixed.interval;
}

static void fx_config(const struct hb_sim *sim, struct hb_job_config *c, int half, long gbs)
{
	c->ngpus = 0;
	for (int i = 0; i < sim->cl->nnodes; i++) {
		c->alloc[i] = half && i > 0 ? 0 : sim->cl->nodes[i].ngpus;
		c->ngpus += c->alloc[i];
	}
	c->global_bs = gbs;
	c->local_bs = 32;
	c->iter_s = 0.25;
	c->overhead_per_iter_s = 0.01;
	c->eff_factor = 1.0;
	strcpy(c->layout, "fixed");
}

static int fx_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct hb_job_config c;
	int rc;

	(void)state;
	hb_job_config_init(&c, sim->cl->nnodes);
	fx_config(sim, &c, 0, 512);
	rc = hb_sim_apply(sim, job, &c, HB_APPLY_START, "start", err);
	hb_job_config_free(&c);
	return rc;
}

static int fx_epoch(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct hb_job_config c;
	int rc;

	(void)state;
	if (job->epoch != fixed.restart_epoch)
		return 0;
	hb_job_config_init(&c, sim->cl->nnodes);
	fx_config(sim, &c, 1, job->cfg.global_bs);
	rc = hb_sim_apply(sim, job, &c, HB_APPLY_RESTART, "shrink", err);
	hb_job_config_free(&c);
	return rc;
}

static int fx_adapt(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct hb_job_config c;
	int rc;

	(void)state;
	fixed.adapts_seen++;
	if (fixed.adapts_seen != fixed.inplace_adapt)
		return 0;
	hb_job_config_init(&c, sim->cl->nnodes);
	fx_config(sim, &c, 0, 1024);
	rc = hb_sim_apply(sim, job, &c, HB_APPLY_INPLACE, "grow", err);
	hb_job_config_free(&c);
	return rc;
}

static const struct hb_agent_ops fixed_agent = {
	.name = "fixed", .summary = "test", .interval = fx_interval, .start = fx_start,
	.on_adapt = fx_adapt, .on_epoch_end = fx_epoch,
};

/* ---- reference ---------------------------------------------------------- */

struct ref {
	double t, iters, progress;
	long epochs;
};

/* Iteration by iteration, freezing phi and E at the same points as the
 * simulator (every epoch end and adaptation point). */
static struct ref reference(const struct hb_sim_job *job, long gbs, double per_iter, long p)
{
	const struct hb_stats *s = job->stats;
	double D = job->model->dataset_size, es = 0, phi, eff;
	struct ref r = { 0 };

	phi = hb_stats_phi(s, 0.0, (double)gbs);
	eff = hb_stats_efficiency(s, phi, (double)gbs);
	while (r.progress < s->target * (1 - 1e-12)) {
		int refresh = 0;

		r.iters += 1;
		r.t += per_iter;
		r.progress += (double)gbs * eff;
		es += (double)gbs;
		if (es >= D) {
			es -= D;
			r.epochs++;
			refresh = 1;
		}
		if (p > 0 && fmod(r.iters, (double)p) == 0)
			refresh = 1;
		if (refresh) {
			phi = hb_stats_phi(s, r.progress / s->target, (double)gbs);
			eff = hb_stats_efficiency(s, phi, (double)gbs);
		}
	}
	return r;
}

static int run_sim(struct hb_sim *sim, uint64_t seed, struct hb_error *err)
{
	struct hb_sim_opts o;

	hb_sim_opts_default(&o);
	o.seed = seed;
	o.quiet = 1;
	o.restart_const_s = 120.0;
	o.reconfig_s = 2.0;
	if (hb_sim_init(sim, &cat, cl, db, "fixed", &o, err) < 0)
		return -1;
	if (hb_sim_add_job(sim, &cat.models[model_idx], &fixed_agent, 0.0, NULL, err) < 0)
		return -1;
	return hb_sim_run(sim, err);
}

static void test_closed_form_matches_reference(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	struct ref r;

	(void)state;
	for (int k = 0; k < 2; k++) {
		memset(&fixed, 0, sizeof(fixed));
		fixed.interval = k ? 100 : 0;
		if (run_sim(&sim, 1, &err) < 0)
			fail_msg("%s", err.msg);
		r = reference(&sim.jobs[0], 512, 0.26, fixed.interval);
		assert_true(sim.jobs[0].state == HB_JOB_DONE);
		assert_true(fabs(sim.jobs[0].iters - r.iters) < 1e-6);
		assert_int_equal(sim.jobs[0].epoch, r.epochs);
		assert_true(fabs(sim.jobs[0].finish_s - r.t) < 1e-6 * r.t);
		/* Overhead per iteration is accounted as lost time. */
		assert_true(fabs(sim.jobs[0].overhead_s - 0.01 * r.iters) < 1e-6 * r.t);
		/* GPU-hours and cost: every GPU of the cluster for the whole run. */
		assert_true(fabs(sim.jobs[0].gpu_s - r.t * cl->ngpus) < 1e-6 * r.t * cl->ngpus);
		if (k)
			assert_int_equal(sim.jobs[0].adaptations, (long)floor(r.iters / 100.0));
		hb_sim_free(&sim);
	}
}

static void test_restart_and_reconfig_accounting(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	double base_t, base_cost, price_all, price_half;
	int half[64] = { 0 };

	(void)state;
	memset(&fixed, 0, sizeof(fixed));
	if (run_sim(&sim, 1, &err) < 0)
		fail_msg("%s", err.msg);
	base_t = sim.jobs[0].finish_s;
	base_cost = sim.jobs[0].cost_usd;
	price_all = hb_sim_price_per_hour(&sim, sim.jobs[0].cfg.alloc);
	half[0] = cl->nodes[0].ngpus;
	price_half = hb_sim_price_per_hour(&sim, half);
	hb_sim_free(&sim);

	memset(&fixed, 0, sizeof(fixed));
	fixed.restart_epoch = 1;
	if (run_sim(&sim, 1, &err) < 0)
		fail_msg("%s", err.msg);
	/* Same iteration time on fewer GPUs: the run is exactly 120 s longer. */
	assert_int_equal(sim.jobs[0].restarts, 1);
	assert_true(fabs(sim.jobs[0].finish_s - (base_t + 120.0)) < 1e-6 * base_t);
	assert_true(fabs(sim.jobs[0].overhead_s - (120.0 + 0.01 * sim.jobs[0].iters)) < 1e-6 * base_t);
	/* Cost: all GPUs until the end of epoch 1, then half, restart billed. */
	{
		double t1 = -1;

		for (size_t i = 0; i < sim.nevents; i++)
			if (strcmp(sim.events[i].kind, "restart") == 0)
				t1 = sim.events[i].t;
		assert_true(t1 > 0);
		assert_true(fabs(sim.jobs[0].cost_usd - (price_all * t1 + price_half * (base_t + 120.0 - t1)) / 3600.0) <
			    1e-6 * base_cost);
	}
	hb_sim_free(&sim);

	/* An in-place change at the 3rd adaptation point costs reconfig_s. */
	memset(&fixed, 0, sizeof(fixed));
	fixed.interval = 100;
	fixed.inplace_adapt = 3;
	if (run_sim(&sim, 1, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(sim.jobs[0].reconfigs, 1);
	assert_int_equal(sim.jobs[0].cfg.global_bs, 1024);
	assert_true(sim.jobs[0].overhead_s >= 2.0);
	hb_sim_free(&sim);
}

static void test_deterministic_records(void **state)
{
	struct hb_sim a, b;
	struct hb_error err = { 0 };

	(void)state;
	memset(&fixed, 0, sizeof(fixed));
	fixed.interval = 100;
	fixed.restart_epoch = 2;
	if (run_sim(&a, 7, &err) < 0)
		fail_msg("%s", err.msg);
	memset(&fixed, 0, sizeof(fixed));
	fixed.interval = 100;
	fixed.restart_epoch = 2;
	if (run_sim(&b, 7, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(a.nsamples, b.nsamples);
	assert_int_equal(a.nevents, b.nevents);
	assert_memory_equal(a.samples, b.samples, a.nsamples * sizeof(*a.samples));
	for (size_t i = 0; i < a.nevents; i++) {
		assert_true(a.events[i].t == b.events[i].t);
		assert_string_equal(a.events[i].detail, b.events[i].detail);
	}
	hb_sim_free(&a);
	hb_sim_free(&b);
}

static void test_bad_configuration_is_an_error(void **state)
{
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	struct hb_job_config c;

	(void)state;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	assert_int_equal(hb_sim_init(&sim, &cat, cl, db, "fixed", &o, &err), 0);
	assert_int_equal(hb_sim_add_job(&sim, &cat.models[model_idx], &fixed_agent, -1.0, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_sim_add_job(&sim, &cat.models[model_idx], &fixed_agent, 0.0, NULL, &err), 0);
	hb_job_config_init(&c, cl->nnodes);
	c.ngpus = 0;
	c.global_bs = 0;
	assert_int_equal(hb_sim_apply(&sim, &sim.jobs[0], &c, HB_APPLY_START, "bad", &err), -1);
	hb_job_config_free(&c);
	hb_sim_free(&sim);
}

/* ---- the agent lifecycle (sim.h, struct hb_agent_ops) ------------------- */

/* What the counting agent saw. */
static struct {
	int inits, frees, free_jobs; /* calls */
	int jobs_freed_first;        /* free_job calls done when free ran */
	int callbacks, foreign;      /* callbacks that got init's state, or another */
	const void *opts;            /* what init was given */
	int fail;                    /* 1: init fails */
	void *made;                  /* init's state */
} alife;

static int al_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	(void)sim;
	alife.inits++;
	alife.opts = opts;
	if (alife.fail)
		return hb_input_error(err, "counted: refused");
	if (!(alife.made = malloc(1)))
		return hb_runtime_error(err, "counted: out of memory");
	*state = alife.made;
	return 0;
}

static void al_free(void *state)
{
	alife.frees++;
	alife.jobs_freed_first = alife.free_jobs;
	alife.foreign += state != alife.made;
	free(state);
}

static void al_saw(const void *state)
{
	if (state && state == alife.made)
		alife.callbacks++;
	else
		alife.foreign++;
}

static long al_interval(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job)
{
	al_saw(state);
	return fx_interval(sim, NULL, job);
}

static int al_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	al_saw(state);
	if (!job->agent_state && !(job->agent_state = malloc(1))) /* a job's own state */
		return hb_runtime_error(err, "counted: out of memory");
	return fx_start(sim, NULL, job, err);
}

static int al_epoch(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	al_saw(state);
	return fx_epoch(sim, NULL, job, err);
}

static void al_free_job(void *state, struct hb_sim_job *job)
{
	al_saw(state);
	alife.free_jobs++;
	free(job->agent_state);
	job->agent_state = NULL;
}

static const struct hb_agent_ops counted_agent = {
	.name = "counted", .summary = "test", .init = al_init, .free = al_free, .interval = al_interval,
	.start = al_start, .on_epoch_end = al_epoch, .free_job = al_free_job,
};

/* Two jobs of the counted agent and one of the fixed agent (no init): the
 * counted table's init runs once, on its first job, with the policy's
 * options; its callbacks get its state, the fixed agent's jobs NULL; free
 * runs once, after both of its jobs' own states were released. */
static void test_agent_state_once_per_table(void **state)
{
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	static const int knobs = 3; /* stands for a policy's option struct */
	int a, b, c;

	(void)state;
	memset(&alife, 0, sizeof(alife));
	memset(&fixed, 0, sizeof(fixed));
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(&sim, &cat, cl, db, "counted", &o, &err) < 0)
		fail_msg("%s", err.msg);
	sim.policy_opts = &knobs;
	if (hb_sim_add_job(&sim, &cat.models[model_idx], &counted_agent, 0.0, &a, &err) < 0 ||
	    hb_sim_add_job(&sim, &cat.models[model_idx], &fixed_agent, 0.0, &b, &err) < 0 ||
	    hb_sim_add_job(&sim, &cat.models[model_idx], &counted_agent, 10.0, &c, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(alife.inits, 1);
	assert_ptr_equal(alife.opts, &knobs);
	assert_int_equal(sim.nagents, 2);
	assert_ptr_equal(hb_sim_agent_state(&sim, &sim.jobs[a]), alife.made);
	assert_ptr_equal(hb_sim_agent_state(&sim, &sim.jobs[c]), alife.made);
	assert_null(hb_sim_agent_state(&sim, &sim.jobs[b]));
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(alife.callbacks >= 4); /* each counted job's interval and start at least */
	assert_int_equal(alife.foreign, 0);
	assert_int_equal(alife.frees, 0);
	hb_sim_free(&sim);
	assert_int_equal(alife.inits, 1);
	assert_int_equal(alife.frees, 1);
	assert_int_equal(alife.free_jobs, 2);
	assert_int_equal(alife.jobs_freed_first, 2);
	assert_int_equal(alife.foreign, 0);
}

/* A failing init fails the hb_sim_add_job that made it with its message
 * and adds no job; nothing is freed. */
static void test_agent_init_failure_fails_add_job(void **state)
{
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	(void)state;
	memset(&alife, 0, sizeof(alife));
	alife.fail = 1;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(&sim, &cat, cl, db, "counted", &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_sim_add_job(&sim, &cat.models[model_idx], &counted_agent, 0.0, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_string_equal(err.msg, "counted: refused");
	assert_int_equal(sim.njobs, 0);
	assert_int_equal(sim.nagents, 0);
	hb_sim_free(&sim);
	assert_int_equal(alife.frees, 0);
	assert_int_equal(alife.callbacks + alife.foreign, 0);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	cl = hb_catalog_cluster(&cat, "jabas-quickstart");
	model_idx = (int)(hb_catalog_model(&cat, "resnet50") - cat.models);
	/* A short job keeps the reference loop quick: 3 M0-equivalent epochs. */
	cat.models[model_idx].target_epochs = 3;
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
		cmocka_unit_test(test_closed_form_matches_reference),
		cmocka_unit_test(test_restart_and_reconfig_accounting),
		cmocka_unit_test(test_deterministic_records),
		cmocka_unit_test(test_bad_configuration_is_an_error),
		cmocka_unit_test(test_agent_state_once_per_table),
		cmocka_unit_test(test_agent_init_failure_fails_add_job),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
