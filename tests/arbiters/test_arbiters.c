/* Cluster arbitration in sim/sim.c and sim/policies/fifo/arbiter_fifo.c: FIFO order with
 * gang placement and head-of-line blocking, placement on the fewest nodes,
 * requests larger than the cluster, and suspend/resume through
 * hb_sim_regrant (no cost while suspended, resume charged as a restart). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
