/* sim/policies/pollux/agent_pollux.c's refits made ahead on the run's pool ("Fits
 * made ahead"): this executable compiles the agent with POLLUX_SPEC_VERIFY,
 * under which every refit taken from one made ahead is also fitted on the
 * spot and fails the run unless the two are the same bits.  Traces of
 * random Pollux jobs under PolluxSched on pollux-t4, at 2 and 3 threads:
 * the runs must finish with refits verified, and give the same events and
 * mean JCT as on one thread (where nothing is made ahead). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "default_db.h"
#include "policy.h"
#include "rng.h"
#include "sim.h"

extern long hb_pollux_spec_verified;

static struct hb_catalog cat;
static struct hb_profdb *db;

static double run_trace(struct hb_sim *sim, uint64_t seed, int threads, int njobs)
{
	static const char *const models[] = { "cifar10", "bert", "deepspeech2", "yolov3", "ncf", "imagenet" };
	const struct hb_policy *pol = hb_policy_find("pollux");
	const struct hb_cluster *cl = hb_catalog_cluster(&cat, "pollux-t4");
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	struct hb_rng rng;
	double jct = 0.0;

	assert_non_null(pol);
	assert_non_null(cl);
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.seed = seed;
	o.threads = threads;
	o.restart_const_s = 30.0;
	if (hb_sim_init(sim, &cat, cl, db, "pollux", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(sim, pol->shared);
	hb_rng_seed(&rng, seed, 0);
	for (int k = 0; k < njobs; k++) {
		const int m = (int)(hb_rng_uniform(&rng) * 6.0);
		const double arrival = 900.0 * (double)k * hb_rng_uniform(&rng);
		int id;

		if (hb_sim_add_job(sim, hb_catalog_model(&cat, models[m]), pol->agent, arrival, &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&sim->jobs[id], 1 << (int)(hb_rng_uniform(&rng) * 3.0), 0);
	}
	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s", err.msg);
	for (int k = 0; k < njobs; k++) {
		assert_int_equal(sim->jobs[k].state, HB_JOB_DONE);
		jct += sim->jobs[k].finish_s - sim->jobs[k].arrival_s;
	}
	return jct / (double)njobs;
}

static void test_refits_made_ahead_are_refits(void **state)
{
	long before = hb_pollux_spec_verified;

	(void)state;
	/* before: verified so far; a one-thread run adds none */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct hb_sim one;
		const double jct1 = run_trace(&one, seed, 1, 10);

		assert_int_equal(hb_pollux_spec_verified, before); /* one thread: none made ahead */
		for (int t = 2; t <= 3; t++) {
			struct hb_sim many;
			const double jct = run_trace(&many, seed, t, 10);

			assert_true(jct == jct1);
			assert_int_equal(many.nevents, one.nevents);
			for (size_t e = 0; e < one.nevents; e++) {
				assert_true(many.events[e].t == one.events[e].t);
				assert_int_equal(many.events[e].job, one.events[e].job);
				assert_string_equal(many.events[e].detail, one.events[e].detail);
			}
			hb_sim_free(&many);
		}
		hb_sim_free(&one);
		before = hb_pollux_spec_verified;
	}
	print_message("refits made ahead, verified: %ld\n", hb_pollux_spec_verified);
	assert_true(hb_pollux_spec_verified > 0);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	/* Short jobs: the trace is about refits, not long training. */
	for (int k = 0; k < cat.nmodels; k++)
		if (strcmp(cat.models[k].family, "pollux") == 0 && cat.models[k].target_epochs > 5)
			cat.models[k].target_epochs = 5;
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
		cmocka_unit_test(test_refits_made_ahead_are_refits),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
