/* The Sia and Gavel cluster arbiters (sim/policies/sia/arbiter_sia.c,
 * sim/policies/gavel/arbiter_gavel.c) on the jabas-quickstart cluster
 * (node0: 4 V100, node1: 4 P100): after every round the pool adds up and a
 * running job uses exactly its grant; Sia grants only configurations of its
 * set (one type; 1, 2 or 4 GPUs on one node here), starts a new job on one
 * GPU and grows it at most 2x per round; Gavel time-shares three 4-GPU
 * jobs on two 4-GPU types so that all three run before any finishes
 * (max-min and finish-time fairness);
 * gavel-fifo starts jobs in arrival order; a job larger than every type
 * runs on the largest; the same seed gives the same finish times. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "default_db.h"
#include "policy.h"
#include "sim.h"

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *quick;
static const struct hb_model *m_cifar, *m_ds2, *m_ncf, *m_yolo;

/* Per-round invariants, checked by a wrapper around the arbiter's round. */
static const struct hb_arbiter_ops *inner;
static int rounds_checked, sia_check, max_growth_bad;
static int last_gpus[64];

static int checked_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	if (inner->on_round(sim, state, err) < 0)
		return -1;
	for (int i = 0; i < sim->cl->nnodes; i++) {
		int held = 0;

		for (int j = 0; j < sim->njobs; j++) {
			const struct hb_sim_job *job = &sim->jobs[j];

			if (job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING) {
				held += job->grant[i];
				assert_int_equal(job->cfg.alloc[i], job->grant[i]);
			}
		}
		assert_int_equal(held + sim->free_gpus[i], sim->cl->nodes[i].ngpus);
	}
	for (int j = 0; j < sim->njobs && j < 64; j++) {
		const struct hb_sim_job *job = &sim->jobs[j];
		int g = (job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING) ? job->ngrant : 0;

		if (sia_check && g > 0) {
			int nodes = 0;

			for (int i = 0; i < sim->cl->nnodes; i++)
				nodes += job->grant[i] > 0;
			assert_int_equal(nodes, 1);          /* one type: one node each here */
			assert_true(g == 1 || g == 2 || g == 4); /* Sia's in-node configurations */
			if (last_gpus[j] == 0 && !job->restarts && job->started)
				max_growth_bad += g > 1 && job->start_s == hb_sim_now(sim); /* first start: 1 GPU */
			if (last_gpus[j] > 0 && g > 2 * last_gpus[j])
				max_growth_bad++;
		}
		if (g > 0)
			last_gpus[j] = g;
	}
	rounds_checked++;
	return 0;
}

static void run_policy(struct hb_sim *sim, const char *policy, const double *arrival, const struct hb_model **m,
		       const int *gpus, const long *batch, int n)
{
	const struct hb_policy *p = hb_policy_find(policy);
	static struct hb_arbiter_ops ops;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	assert_non_null(p);
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(sim, &cat, quick, db, policy, &o, &err) < 0)
		fail_msg("%s", err.msg);
	inner = p->shared;
	ops = *p->shared;
	ops.on_round = checked_round;
	rounds_checked = 0;
	max_growth_bad = 0;
	memset(last_gpus, 0, sizeof(last_gpus));
	hb_sim_set_arbiter(sim, &ops);
	for (int k = 0; k < n; k++) {
		int id;

		if (hb_sim_add_job(sim, m[k], p->agent, arrival[k], &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&sim->jobs[id], gpus ? gpus[k] : 0, batch ? batch[k] : 0);
	}
	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s: %s", policy, err.msg);
	for (int j = 0; j < sim->njobs; j++) {
		assert_int_equal(sim->jobs[j].state, HB_JOB_DONE);
		assert_true(sim->jobs[j].start_s >= sim->jobs[j].arrival_s);
	}
	assert_true(rounds_checked > 0);
}

static void test_sia_configurations_and_scale_up(void **state)
{
	static const double t[6] = { 0, 30, 100, 400, 900, 1500 };
	const struct hb_model *m[6] = { m_cifar, m_ds2, m_ncf, m_cifar, m_yolo, m_ncf };
	struct hb_sim a, b;

	(void)state;
	sia_check = 1;
	run_policy(&a, "sia", t, m, NULL, NULL, 6);
	assert_int_equal(max_growth_bad, 0);
	/* Rounds every 60 s: a job starts on a round boundary. */
	for (int j = 0; j < a.njobs; j++)
		assert_true(fabs(a.jobs[j].start_s / 60.0 - floor(a.jobs[j].start_s / 60.0 + 0.5)) < 1e-9);
	run_policy(&b, "sia", t, m, NULL, NULL, 6);
	for (int j = 0; j < a.njobs; j++)
		assert_true(a.jobs[j].finish_s == b.jobs[j].finish_s);
	sia_check = 0;
	hb_sim_free(&a);
	hb_sim_free(&b);
}

/* Three 4-GPU jobs, two 4-GPU types: max-min fairness gives each 2/3 of a
 * type's time, which the mechanism realises by rotating, so every job has
 * started before the first one finishes; so does finish-time fairness
 * (equal jobs arriving together: equal rho at equal shares). */
static void test_gavel_time_sharing(void **state)
{
	static const double t[3] = { 0, 0, 0 };
	static const int g[3] = { 4, 4, 4 };
	static const long bs[3] = { 0, 0, 0 };
	const struct hb_model *m[3] = { m_cifar, m_cifar, m_cifar };
	const char *pol[3] = { "gavel", "gavel-tput", "gavel-ftf" };

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct hb_sim s;
		double first_finish = HUGE_VAL, last_start = 0;

		run_policy(&s, pol[k], t, m, g, bs, 3);
		for (int j = 0; j < 3; j++) {
			first_finish = fmin(first_finish, s.jobs[j].finish_s);
			last_start = fmax(last_start, s.jobs[j].start_s);
			assert_int_equal(s.jobs[j].cfg.ngpus, 4);
		}
		if (k != 1)
			assert_true(last_start < first_finish);
		assert_true(fabs(fmod(last_start, 360.0)) < 1e-9); /* rounds of 360 s */
		hb_sim_free(&s);
	}
}

static void test_gavel_fifo_order(void **state)
{
	static const double t[4] = { 0, 10, 20, 30 };
	static const int g[4] = { 4, 4, 4, 1 };
	const struct hb_model *m[4] = { m_cifar, m_cifar, m_cifar, m_ncf };
	struct hb_sim s;

	(void)state;
	run_policy(&s, "gavel-fifo", t, m, g, NULL, 4);
	/* Two 4-GPU jobs fill the cluster; the third waits and blocks the 1-GPU
	 * job behind it (fifo_perf stops at the first job that fits nowhere). */
	assert_true(s.jobs[0].start_s == 360.0 && s.jobs[1].start_s == 360.0);
	assert_true(s.jobs[2].start_s > 360.0);
	assert_true(s.jobs[3].start_s >= s.jobs[2].start_s);
	hb_sim_free(&s);
}

/* 8 GPUs asked on a cluster whose types have 4 each: the job runs on all
 * 4 of one type, and an event says so. */
static void test_gavel_oversized(void **state)
{
	const struct hb_policy *p = hb_policy_find("gavel");
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	struct hb_sim s;
	int id, noted = 0;

	(void)state;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	assert_int_equal(hb_sim_init(&s, &cat, quick, db, "gavel", &o, &err), 0);
	hb_sim_set_arbiter(&s, p->shared);
	assert_int_equal(hb_sim_add_job(&s, m_cifar, p->agent, 0, &id, &err), 0);
	hb_sim_job_request(&s.jobs[id], 8, 0);
	assert_int_equal(hb_sim_run(&s, &err), 0);
	assert_int_equal(s.jobs[id].state, HB_JOB_DONE);
	assert_int_equal(s.jobs[id].cfg.ngpus, 4);
	for (size_t i = 0; i < s.nevents; i++)
		noted += strstr(s.events[i].detail, "no GPU type has more than 4: runs on 4") != NULL;
	assert_int_equal(noted, 1);
	hb_sim_free(&s);

}

static void test_sia_refuses_other_agents(void **state)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	struct hb_sim s;
	int id;

	(void)state;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	assert_int_equal(hb_sim_init(&s, &cat, quick, db, "sia", &o, &err), 0);
	hb_sim_set_arbiter(&s, &hb_arbiter_sia);
	assert_int_equal(hb_sim_add_job(&s, m_cifar, &hb_agent_static, 0, &id, &err), 0);
	assert_int_equal(hb_sim_run(&s, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "pollux agent"));
	hb_sim_free(&s);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	quick = hb_catalog_cluster(&cat, "jabas-quickstart");
	m_cifar = hb_catalog_model(&cat, "cifar10");
	m_ds2 = hb_catalog_model(&cat, "deepspeech2");
	m_ncf = hb_catalog_model(&cat, "ncf");
	m_yolo = hb_catalog_model(&cat, "yolov3");
	return quick && m_cifar && m_ds2 && m_ncf && m_yolo ? 0 : -1;
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
		cmocka_unit_test(test_sia_configurations_and_scale_up),
		cmocka_unit_test(test_gavel_time_sharing),
		cmocka_unit_test(test_gavel_fifo_order),
		cmocka_unit_test(test_gavel_oversized),
		cmocka_unit_test(test_sia_refuses_other_agents),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
