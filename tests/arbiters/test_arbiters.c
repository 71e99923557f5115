/* Cluster arbitration in sim/sim.c and sim/policies/fifo/arbiter_fifo.c: FIFO order with
 * gang placement and head-of-line blocking, placement on the fewest nodes,
 * requests larger than the cluster, suspend/resume through hb_sim_regrant
 * (no cost while suspended, resume charged as a restart), and an arbiter's
 * lifecycle (init once with the policy's options, its state in every
 * callback, free once; a failing init fails the run). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "default_db.h"
#include "policy.h"
#include "sim.h"

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *cl;   /* jabas-quickstart: 4 V100 + 4 P100 */
static const struct hb_model *model;

static void init(struct hb_sim *sim, const struct hb_arbiter_ops *arb)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.restart_const_s = 60.0;
	if (hb_sim_init(sim, &cat, cl, db, "test", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(sim, arb);
}

static void add(struct hb_sim *sim, double t, int gpus)
{
	struct hb_error err = { 0 };
	int id;

	if (hb_sim_add_job(sim, model, &hb_agent_static, t, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim->jobs[id], gpus, 256);
}

static void test_fifo_order_and_head_of_line_blocking(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	const struct hb_sim_job *a, *b, *c;

	(void)state;
	init(&sim, &hb_arbiter_fifo);
	add(&sim, 0.0, 4); /* A: one node */
	add(&sim, 1.0, 8); /* B: the whole cluster, must wait for A */
	add(&sim, 2.0, 4); /* C: would fit beside A, but FIFO does not backfill */
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	a = &sim.jobs[0];
	b = &sim.jobs[1];
	c = &sim.jobs[2];
	assert_true(a->start_s == 0.0);
	assert_int_equal(a->ngrant, 4);
	/* A is packed on one node. */
	assert_true(a->grant[0] == 4 || a->grant[1] == 4);
	assert_true(fabs(b->start_s - a->finish_s) < 1e-9);
	assert_int_equal(b->ngrant, 8);
	assert_true(fabs(c->start_s - b->finish_s) < 1e-9);
	assert_true(c->start_s > a->finish_s);
	for (int i = 0; i < cl->nnodes; i++)
		assert_int_equal(sim.free_gpus[i], cl->nodes[i].ngpus);
	hb_sim_free(&sim);
}

static void test_request_larger_than_cluster_is_an_input_error(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	init(&sim, &hb_arbiter_fifo);
	add(&sim, 0.0, 16);
	assert_int_equal(hb_sim_run(&sim, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "asks for 16 GPUs"));
	hb_sim_free(&sim);
}

static void test_place_fewest_nodes(void **state)
{
	struct hb_sim sim;
	int g[2];

	(void)state;
	init(&sim, &hb_arbiter_fifo);
	sim.free_gpus[0] = 1;
	sim.free_gpus[1] = 3;
	assert_int_equal(hb_sim_place(&sim, 3, g), 1);
	assert_int_equal(g[0], 0);
	assert_int_equal(g[1], 3);
	assert_int_equal(hb_sim_place(&sim, 4, g), 1);
	assert_int_equal(g[0] + g[1], 4);
	assert_int_equal(hb_sim_place(&sim, 5, g), 0);
	hb_sim_free(&sim);
}

/* ---- suspend and resume through a scripted arbiter ---------------------- */

static int round_no;

static int script_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int all[2] = { 4, 4 };

	(void)sim;
	(void)state;
	return hb_sim_start_job(sim, job, all, err);
}

static double script_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return 600.0;
}

static int script_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	int none[2] = { 0, 0 }, half[2] = { 4, 0 };

	(void)state;
	round_no++;
	if (sim->jobs[0].state == HB_JOB_DONE)
		return 0;
	if (round_no == 1)
		return hb_sim_regrant(sim, &sim->jobs[0], none, err);
	if (round_no == 2)
		return hb_sim_regrant(sim, &sim->jobs[0], half, err);
	return 0;
}

static const struct hb_arbiter_ops script_arbiter = {
	.name = "script", .summary = "test", .on_arrival = script_arrival,
	.round_s = script_round_s, .on_round = script_round,
};

static void test_suspend_and_resume(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	const struct hb_sim_job *j;
	double p8, p4, t_susp = 600.0, t_res = 1200.0;
	int all[2] = { 4, 4 }, half[2] = { 4, 0 };

	(void)state;
	round_no = 0;
	init(&sim, &script_arbiter);
	add(&sim, 0.0, 8);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	j = &sim.jobs[0];
	assert_int_equal(j->state, HB_JOB_DONE);
	assert_int_equal(j->preemptions, 1);
	assert_int_equal(j->restarts, 1);         /* the resume */
	assert_int_equal(j->ngrant, 4);
	assert_true(j->finish_s > t_res + 60.0);
	/* Billing: 8 GPUs for the first hour, nothing while suspended, then 4. */
	p8 = hb_sim_price_per_hour(&sim, all);
	p4 = hb_sim_price_per_hour(&sim, half);
	assert_true(fabs(j->cost_usd - (p8 * t_susp + p4 * (j->finish_s - t_res)) / 3600.0) < 1e-6 * j->cost_usd);
	assert_true(fabs(j->gpu_s - (8 * t_susp + 4 * (j->finish_s - t_res))) < 1e-6 * j->gpu_s);
	hb_sim_free(&sim);
}

/* ---- the lifecycle (sim.h, struct hb_arbiter_ops) ----------------------- */

/* What the counting arbiter saw. */
static struct {
	int inits, frees;         /* calls of init and free */
	int callbacks;            /* callbacks that got the state init made */
	int foreign;              /* callbacks that got any other state */
	const void *opts;         /* the opts init was given */
	int fail;                 /* 1: init fails */
	void *made;               /* the state init made */
} life;

struct life_state {
	int grant[2];             /* scratch: the whole quickstart cluster */
};

static int life_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct life_state *st;

	life.inits++;
	life.opts = opts;
	if (life.fail)
		return hb_input_error(err, "life: refused on cluster %s", sim->cl->name);
	if (!(st = calloc(1, sizeof(*st))))
		return hb_runtime_error(err, "life: out of memory");
	st->grant[0] = 4;
	st->grant[1] = 4;
	life.made = st;
	*state = st;
	return 0;
}

static void life_free(void *state)
{
	life.frees++;
	if (state != life.made)
		life.foreign++;
	free(state);
}

static void life_saw(const void *state)
{
	if (state == life.made && state)
		life.callbacks++;
	else
		life.foreign++;
}

static int life_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct life_state *st = state;

	life_saw(state);
	if (!hb_sim_place(sim, hb_arbiter_job_gpus(sim, job), st->grant))
		return 0; /* the tests' jobs all fit at once */
	return hb_sim_start_job(sim, job, st->grant, err);
}

static int life_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)sim;
	(void)job;
	(void)err;
	life_saw(state);
	return 0;
}

static double life_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	life_saw(state);
	return 600.0;
}

static int life_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	(void)sim;
	(void)err;
	life_saw(state);
	return 0;
}

static const struct hb_arbiter_ops life_arbiter = {
	.name = "life", .summary = "test", .init = life_init, .free = life_free, .on_arrival = life_arrival,
	.on_finish = life_finish, .round_s = life_round_s, .on_round = life_round,
};

/* init runs once, at hb_sim_run, with the policy's options; every callback
 * gets its state; free runs once, at hb_sim_free. */
static void test_lifecycle_init_once_free_once(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	static const int knobs = 7; /* stands for a policy's option struct */

	(void)state;
	memset(&life, 0, sizeof(life));
	init(&sim, &life_arbiter);
	sim.policy_opts = &knobs;
	add(&sim, 0.0, 4);
	add(&sim, 0.0, 4);
	assert_int_equal(life.inits, 0); /* not before the run: the jobs may not all be added */
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(life.inits, 1);
	assert_ptr_equal(life.opts, &knobs);
	assert_ptr_equal(sim.arbiter_state, life.made);
	assert_true(life.callbacks >= 4); /* two arrivals, two finishes, the first round_s */
	assert_int_equal(life.foreign, 0);
	assert_int_equal(life.frees, 0);
	hb_sim_free(&sim);
	assert_int_equal(life.inits, 1);
	assert_int_equal(life.frees, 1);
	assert_int_equal(life.foreign, 0);
}

/* hb_sim_arbiter_init makes the state once, before the run; a run that never
 * happens still frees it once; replacing the arbiter frees it at once. */
static void test_lifecycle_explicit_init_and_replace(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	memset(&life, 0, sizeof(life));
	init(&sim, &life_arbiter);
	add(&sim, 0.0, 4);
	if (hb_sim_arbiter_init(&sim, &err) < 0 || hb_sim_arbiter_init(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(life.inits, 1);
	assert_null(life.opts); /* no policy options set: NULL, the defaults */
	hb_sim_free(&sim);
	assert_int_equal(life.frees, 1);

	memset(&life, 0, sizeof(life));
	init(&sim, &life_arbiter);
	add(&sim, 0.0, 4);
	if (hb_sim_arbiter_init(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(&sim, &hb_arbiter_fifo);
	assert_int_equal(life.frees, 1);
	assert_null(sim.arbiter_state);
	if (hb_sim_run(&sim, &err) < 0) /* fifo makes its own */
		fail_msg("%s", err.msg);
	assert_int_equal(sim.jobs[0].state, HB_JOB_DONE);
	hb_sim_free(&sim);
	assert_int_equal(life.inits, 1);
	assert_int_equal(life.frees, 1);
	assert_int_equal(life.foreign, 0);
}

/* A failing init fails the run with its own message, before any callback;
 * its (never made) state is not freed. */
static void test_lifecycle_init_failure_fails_run(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	memset(&life, 0, sizeof(life));
	life.fail = 1;
	init(&sim, &life_arbiter);
	add(&sim, 0.0, 4);
	assert_int_equal(hb_sim_run(&sim, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_string_equal(err.msg, "life: refused on cluster jabas-quickstart");
	assert_int_equal(life.inits, 1);
	assert_int_equal(life.callbacks + life.foreign, 0);
	assert_int_equal(sim.jobs[0].state, HB_JOB_PENDING);
	hb_sim_free(&sim);
	assert_int_equal(life.frees, 0);
}

/* An arbiter without the one required callback (on_arrival) is an input
 * error naming it, before any job arrives, not a crash at the first one. */
static void test_arbiter_without_on_arrival(void **state)
{
	static const struct hb_arbiter_ops bare = { .name = "bare", .summary = "test" };
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	init(&sim, &bare);
	add(&sim, 0.0, 4);
	assert_int_equal(hb_sim_run(&sim, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "arbiter bare has no on_arrival"));
	assert_int_equal(sim.jobs[0].state, HB_JOB_PENDING);
	hb_sim_free(&sim);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };
	int k;

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	cl = hb_catalog_cluster(&cat, "jabas-quickstart");
	k = (int)(hb_catalog_model(&cat, "resnet50") - cat.models);
	cat.models[k].target_epochs = 2; /* short jobs */
	model = &cat.models[k];
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
		cmocka_unit_test(test_fifo_order_and_head_of_line_blocking),
		cmocka_unit_test(test_request_larger_than_cluster_is_an_input_error),
		cmocka_unit_test(test_place_fewest_nodes),
		cmocka_unit_test(test_suspend_and_resume),
		cmocka_unit_test(test_lifecycle_init_once_free_once),
		cmocka_unit_test(test_lifecycle_explicit_init_and_replace),
		cmocka_unit_test(test_lifecycle_init_failure_fails_run),
		cmocka_unit_test(test_arbiter_without_on_arrival),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
