/* Sia fidelity (`sim --fidelity sia`, sim/fidelity.h) without Sia's data:
 * the artifact's per-application constants, and one CIFAR-10 job under
 * gavel-tput on the jabas-quickstart cluster (built-in analytic profiles)
 * with and without the mode: submitted at a round's time it starts in that
 * round, its first start costs CIFAR-10's 50 s rescale without counting as
 * a restart, and its running time is 1.8x (SLOWDOWNS) hetbatch's own on
 * the same configuration. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <stdlib.h>

#include "arbiter_util.h"
#include "default_db.h"
#include "fidelity.h"
#include "policy.h"
#include "sim.h"

static struct hb_catalog cat;
static struct hb_profdb *db;

static void test_sia_constants(void **state)
{
	int f = -1;

	(void)state;
	assert_int_equal(hb_fidelity_parse("sia", &f), 0);
	assert_int_equal(f, HB_FIDELITY_SIA);
	assert_string_equal(hb_fidelity_name(HB_FIDELITY_SIA), "sia");
	assert_int_equal(hb_fidelity_parse("Sia", &f), -1);
	/* applications.py Application.__init__ */
	assert_true(hb_fid_sia_rescale_s("cifar10") == 50.0);
	assert_true(hb_fid_sia_rescale_s("deepspeech2") == 25.0);
	assert_true(hb_fid_sia_rescale_s("bert") == 120.0);
	assert_true(hb_fid_sia_rescale_s("yolov3") == 80.0);
	assert_true(hb_fid_sia_rescale_s("imagenet") == 250.0);
	assert_true(hb_fid_sia_rescale_s("ncf") == 15.0);
	assert_true(hb_fid_sia_rescale_s("resnet50") == 30.0);
	assert_true(hb_fid_sia_rescale_s(NULL) == 30.0);
	/* simulator_config.py SLOWDOWNS; a model it does not know is not slowed */
	assert_true(hb_fid_sia_slowdown("cifar10") == 1.8);
	assert_true(hb_fid_sia_slowdown("ncf") == 1.5);
	assert_true(hb_fid_sia_slowdown("imagenet") == 1.2);
	assert_true(hb_fid_sia_slowdown("yolov3") == 1.2);
	assert_true(hb_fid_sia_slowdown("bert") == 1.2);
	assert_true(hb_fid_sia_slowdown("deepspeech2") == 1.2);
	assert_true(hb_fid_sia_slowdown("gpt2") == 1.0);
	assert_true(hb_fidelity_round_arrivals(HB_FIDELITY_SIA));
	assert_true(hb_fidelity_round_arrivals(HB_FIDELITY_POLLUX));
	assert_false(hb_fidelity_round_arrivals(HB_FIDELITY_NONE));
}

/* One 4-GPU CIFAR-10 job at batch 512 submitted at t = 360 s (Gavel's
 * first round), run to completion under `fidelity`. */
static void run_one(struct hb_sim *s, int fidelity)
{
	const struct hb_policy *p = hb_policy_find("gavel-tput");
	const struct hb_cluster *cl = hb_catalog_cluster(&cat, "jabas-quickstart");
	const struct hb_model *m = hb_catalog_model(&cat, "cifar10");
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	int id;

	assert_non_null(p);
	assert_non_null(cl);
	assert_non_null(m);
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.fidelity = fidelity;
	if (fidelity == HB_FIDELITY_SIA)
		o.reconfig_s = o.gns_overhead = 0.0; /* what `sim --fidelity sia` sets */
	if (hb_sim_init(s, &cat, cl, db, "gavel-tput", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(s, p->shared);
	if (hb_sim_add_job(s, m, p->agent, 360.0, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&s->jobs[id], 4, 512);
	if (hb_sim_run(s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s->jobs[id].state, HB_JOB_DONE);
}

static void test_sia_engine(void **state)
{
	struct hb_sim own, sia;

	(void)state;
	run_one(&own, HB_FIDELITY_NONE);
	run_one(&sia, HB_FIDELITY_SIA);
	/* hetbatch: the arrival pops after the 360 s round and waits for the
	 * next; Sia's simulator schedules it in the round of its submission. */
	assert_true(fabs(own.jobs[0].start_s - 720.0) < 1e-6);
	assert_true(fabs(sia.jobs[0].start_s - 360.0) < 1e-6);
	/* The first start's rescale, not a restart (num_restarts None -> 0). */
	assert_int_equal(sia.jobs[0].restarts, 0);
	assert_true(fabs(sia.jobs[0].overhead_s - 50.0) < 1e-6);
	/* Same configuration, progress at 1 / 1.8 of the rate (within 1 %: the
	 * noise scale is frozen between milestones, which fall elsewhere). */
	assert_int_equal(sia.jobs[0].cfg.ngpus, own.jobs[0].cfg.ngpus);
	assert_int_equal(sia.jobs[0].cfg.global_bs, own.jobs[0].cfg.global_bs);
	assert_true(fabs(sia.jobs[0].eff / own.jobs[0].eff * 1.8 - 1.0) < 1e-2);
	assert_true(fabs(sia.jobs[0].run_s / own.jobs[0].run_s - 1.8) < 1.8e-2);
	hb_sim_free(&own);
	hb_sim_free(&sia);
}

/* Run two CIFAR-10 jobs of k0 and k1 GPUs (batch 384) submitted at 0 and
 * 400 s under gavel-tput on pollux-t4 with `fidelity`; ids[] their ids. */
static void two_jobs(struct hb_sim *s, int fidelity, int k0, int k1, int *ids)
{
	const struct hb_policy *p = hb_policy_find("gavel-tput");
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.fidelity = fidelity;
	if (hb_sim_init(s, &cat, hb_catalog_cluster(&cat, "pollux-t4"), db, "gavel-tput", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(s, p->shared);
	for (int k = 0; k < 2; k++) {
		if (hb_sim_add_job(s, hb_catalog_model(&cat, "cifar10"), p->agent, 400.0 * k, &ids[k], &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&s->jobs[ids[k]], k ? k1 : k0, 384);
	}
	if (hb_sim_run(s, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The start's allocation of job id, two 3-GPU jobs (two_jobs). */
static void start_alloc(int fidelity, int id, char *out, size_t n)
{
	struct hb_sim s;
	int ids[2];

	two_jobs(&s, fidelity, 3, 3, ids);
	out[0] = '\0';
	for (size_t e = 0; e < s.nevents; e++)
		if (s.events[e].job == ids[id] && strcmp(s.events[e].kind, "start") == 0) {
			const char *a = strstr(s.events[e].detail, "alloc ");

			assert_non_null(a);
			snprintf(out, n, "%.*s", (int)strcspn(a + 6, ","), a + 6);
			break;
		}
	hb_sim_free(&s);
}

/* Sia's Gavel places a job from a cursor over the type's GPUs that only
 * moves forward (gavel.py assign_workers_to_job): the second 3-GPU job
 * takes the first node's last GPU and two of the next, where hetbatch's
 * placer takes the emptiest node. */
static void test_sia_gavel_placer(void **state)
{
	char a[128], b[128];

	(void)state;
	start_alloc(HB_FIDELITY_SIA, 0, a, sizeof(a));
	start_alloc(HB_FIDELITY_SIA, 1, b, sizeof(b));
	assert_string_equal(a, "g4dn-0=3");
	assert_string_equal(b, "g4dn-0=1 g4dn-1=2");
	start_alloc(HB_FIDELITY_NONE, 1, b, sizeof(b));
	assert_string_equal(b, "g4dn-1=3");
}

/* A job moved to other GPUs of its type in the same shape pays nothing and
 * is not restarted (Job.reallocate rescales only when the placement tuple
 * changes): a 4-GPU job arriving at 400 s takes the first node from Sia's
 * Gavel's cursor before the 3-GPU job there can keep it, which goes to the
 * next node's first three. */
static void test_sia_same_shape_move(void **state)
{
	struct hb_sim s;
	int ids[2], moves = 0;

	(void)state;
	two_jobs(&s, HB_FIDELITY_SIA, 3, 4, ids);
	for (size_t e = 0; e < s.nevents; e++)
		if (s.events[e].job == ids[0] && strcmp(s.events[e].kind, "move") == 0) {
			assert_non_null(strstr(s.events[e].detail, "alloc g4dn-1=3,"));
			assert_true(fabs(s.events[e].t - 720.0) < 1e-9);
			moves++;
		}
	assert_int_equal(moves, 1);
	assert_int_equal(s.jobs[ids[0]].restarts, 0);
	/* the first start's rescale only (50 s for CIFAR-10), none for the move */
	assert_true(fabs(s.jobs[ids[0]].overhead_s - 50.0) < 1e-6);
	hb_sim_free(&s);
}

/* Sia's simulator hands a round's allocations out at once (cluster.py
 * Cluster.optimize_policy), so two jobs may trade GPUs: a scripted
 * arbiter starts a 4-GPU job on each of the first two nodes of pollux-t4,
 * then swaps them (hb_arbiter_apply_grants).  Under the mode both move
 * (same type, same shape: no restart, no suspension); without it one job
 * is suspended to free the other's GPUs and resumed, a restart.  And
 * hb_sim_regrant_all refuses a trade that does not fit, changing nothing. */
static int swap_round_no;

static int swap_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)sim;
	(void)state;
	(void)job;
	(void)err;
	return 0; /* placed by the next round */
}

static double swap_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return 120.0;
}

static int swap_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct hb_sim_job *jobs[2] = { &sim->jobs[0], &sim->jobs[1] };
	int N = sim->cl->nnodes, changed, rc, *g;

	(void)state;
	if (swap_round_no++ > 1 || jobs[0]->state == HB_JOB_DONE || jobs[1]->state == HB_JOB_DONE)
		return 0;
	if (!(g = calloc((size_t)(2 * N), sizeof(int))))
		return hb_runtime_error(err, "out of memory");
	/* round 0: job 0 on node 0, job 1 on node 1; round 1: swapped */
	g[swap_round_no == 1 ? 0 : 1] = 4;
	g[N + (swap_round_no == 1 ? 1 : 0)] = 4;
	if (swap_round_no == 2) {
		/* a trade over capacity: both on node 0 */
		int bad[2 * 64] = { 0 }, keep0 = jobs[0]->grant[1];

		assert_true(N <= 64);
		bad[0] = bad[N] = 4;
		assert_int_equal(hb_sim_regrant_all(sim, jobs, bad, 2, err), 1);
		assert_int_equal(jobs[0]->grant[1], keep0);
	}
	rc = hb_arbiter_apply_grants(sim, jobs, 2, g, "swap", &changed, err);
	free(g);
	return rc;
}

static void swap_run(struct hb_sim *s, int fidelity)
{
	static const struct hb_arbiter_ops swap = {
		.name = "swap", .summary = "test", .on_arrival = swap_arrival, .round_s = swap_round_s,
		.on_round = swap_round,
		.on_requeue = hb_arbiter_requeue_round,
	};
	const struct hb_policy *p = hb_policy_find("gavel-tput");
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	int id;

	swap_round_no = 0;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.fidelity = fidelity;
	if (hb_sim_init(s, &cat, hb_catalog_cluster(&cat, "pollux-t4"), db, "gavel-tput", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(s, &swap);
	for (int k = 0; k < 2; k++) {
		if (hb_sim_add_job(s, hb_catalog_model(&cat, "cifar10"), p->agent, 0.0, &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&s->jobs[id], 4, 512);
	}
	if (hb_sim_run(s, &err) < 0)
		fail_msg("%s", err.msg);
	for (int k = 0; k < 2; k++)
		assert_int_equal(s->jobs[k].state, HB_JOB_DONE);
}

static int count_kind(const struct hb_sim *s, const char *kind)
{
	int n = 0;

	for (size_t e = 0; e < s->nevents; e++)
		n += s->events[e].job >= 0 && strcmp(s->events[e].kind, kind) == 0;
	return n;
}

static void test_sia_trade(void **state)
{
	struct hb_sim s;

	(void)state;
	swap_run(&s, HB_FIDELITY_SIA);
	assert_int_equal(count_kind(&s, "move"), 2);
	assert_int_equal(count_kind(&s, "preempt"), 0);
	assert_int_equal(s.jobs[0].restarts + s.jobs[1].restarts, 0);
	assert_int_equal(s.jobs[0].preemptions + s.jobs[1].preemptions, 0);
	hb_sim_free(&s);
	swap_run(&s, HB_FIDELITY_NONE);
	assert_int_equal(count_kind(&s, "preempt"), 1);
	assert_int_equal(s.jobs[0].preemptions + s.jobs[1].preemptions, 1);
	assert_true(s.jobs[0].restarts + s.jobs[1].restarts >= 2);
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
	return 0;
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
		cmocka_unit_test(test_sia_constants),
		cmocka_unit_test(test_sia_engine),
		cmocka_unit_test(test_sia_gavel_placer),
		cmocka_unit_test(test_sia_same_shape_move),
		cmocka_unit_test(test_sia_trade),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
