/* sim/policies/jabas/agent_jabas.c's ranking items (each answer key's last
 * candidate of Q, hb_alloc_last_by_key) and its memo of them by offer
 * layout (struct q_memo): this executable compiles the agent with
 * JABAS_QMEMO_VERIFY, under which every offer's items are also found by
 * searching every candidate of Q (hb_alloc_last_by_key_search) and must be
 * the same, and every memo hit also builds the offer's items and fails the
 * run unless the memo's store entries, places and units are that build's; its
 * memo of rankings (struct pick_memo), every hit of which is ranked too
 * and must give the memo's answer, bit for bit; and its memo of
 * adaptation steps (struct adapt_memo), every hit of which is solved too
 * and must give the memo's configuration.
 *
 * Scenarios under jabas-share on a cluster of identical 4-GPU nodes over
 * several racks (so offers over different nodes share layouts), with
 * ResNet-50 and BERT jobs of random sizes arriving at random times: the runs must
 * finish, with hits verified; CIFAR-10 jobs, whose epochs are shorter than
 * p, must hit the ranking memo at nonzero block offsets (verified too); and a
 * second run of the same trace gives
 * the same records (the memo is per job and deterministic). */
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

extern long hb_jabas_qmemo_verified;
extern long hb_jabas_pickmemo_verified;
extern long hb_jabas_adaptmemo_verified;
extern long hb_jabas_pickmemo_onepoint_verified;
extern long hb_jabas_lastkey_verified;
extern long hb_jabas_lastkey_keys;

static struct hb_catalog cat;
static struct hb_profdb *db;
static struct hb_model *resnet, *bert, *cifar;

/* 16 V100 and 8 P100 nodes of 4 GPUs, 4 nodes a rack. */
static const char racks_json[] =
	"{\"clusters\": [{\"name\": \"test-racks\", \"display\": \"racks\", "
	"\"intra_link\": \"pcie3-x16\", \"intra_bw\": 15.75e9, \"inter_link\": \"ib-100g\", \"inter_bw\": 12.5e9, "
	"\"storage_bw\": 1.25e9, \"restart_latency_s\": 20, "
	"\"groups\": [{\"gpu\": \"v100\", \"nodes\": 16, \"gpus_per_node\": 4, \"nodes_per_rack\": 4}, "
	"{\"gpu\": \"p100\", \"nodes\": 8, \"gpus_per_node\": 4, \"rack\": 4, \"nodes_per_rack\": 4}], "
	"\"source\": \"test\"}]}";

/* njobs jobs of the given models in turn (models[k % nmodels]). */
static void run_models(struct hb_sim *sim, uint64_t seed, int njobs, struct hb_model *const *models, int nmodels)
{
	const struct hb_cluster *cl = hb_catalog_cluster(&cat, "test-racks");
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	struct hb_rng rng;

	assert_non_null(cl);
	hb_rng_seed(&rng, seed, 0);
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.seed = seed;
	if (hb_sim_init(sim, &cat, cl, db, "test", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(sim, &hb_arbiter_jabas);
	for (int k = 0; k < njobs; k++) {
		const double arrival = 600.0 * (double)k * hb_rng_uniform(&rng);
		const int gpus = 2 << (int)(hb_rng_uniform(&rng) * 4.0); /* 2, 4, 8 or 16 */
		int id;

		if (hb_sim_add_job(sim, models[k % nmodels], &hb_agent_jabas, arrival, &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&sim->jobs[id], gpus, 0);
	}
	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s", err.msg);
	for (int k = 0; k < njobs; k++)
		assert_int_equal(sim->jobs[k].state, HB_JOB_DONE);
}

static void run_trace(struct hb_sim *sim, uint64_t seed, int njobs)
{
	/* BERT's epoch ends repeat their rankings (flat forecasts) */
	struct hb_model *const models[] = { resnet, bert };

	run_models(sim, seed, njobs, models, 2);
}

static void test_memo_hits_are_walks(void **state)
{
	long before = hb_jabas_qmemo_verified, picks_before = hb_jabas_pickmemo_verified,
	     adapt_before = hb_jabas_adaptmemo_verified, last_before = hb_jabas_lastkey_verified,
	     keys_before = hb_jabas_lastkey_keys;

	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct hb_sim sim;

		run_trace(&sim, seed, 12);
		hb_sim_free(&sim);
	}
	print_message("memo hits verified: %ld walks, %ld rankings, %ld adaptation steps\n",
		      hb_jabas_qmemo_verified - before, hb_jabas_pickmemo_verified - picks_before,
		      hb_jabas_adaptmemo_verified - adapt_before);
	assert_true(hb_jabas_qmemo_verified - before > 0);
	assert_true(hb_jabas_pickmemo_verified - picks_before > 0);
	assert_true(hb_jabas_adaptmemo_verified - adapt_before > 0);
	/* offers whose items were checked against the search of every
	 * candidate, and their keys */
	print_message("offers' last candidates by key verified: %ld (%ld keys)\n",
		      hb_jabas_lastkey_verified - last_before, hb_jabas_lastkey_keys - keys_before);
	assert_true(hb_jabas_lastkey_verified - last_before > 0);
	assert_true(hb_jabas_lastkey_keys - keys_before > hb_jabas_lastkey_verified - last_before);
}

/* CIFAR-10 from minB_G 1024 (setup) runs epochs of at most 49
 * iterations, shorter than p = 100: their epoch ends rank one-point trajectories at whatever iteration
 * of the block the epoch ended, and the ranking memo keys those without
 * the offset (pick_allocation); every such hit is ranked again at its real
 * offset and must be the memo's answer. */
static void test_one_point_rankings(void **state)
{
	struct hb_model *const models[] = { cifar };
	long before = hb_jabas_pickmemo_onepoint_verified;
	struct hb_sim sim;

	(void)state;
	run_models(&sim, 5, 6, models, 1);
	hb_sim_free(&sim);
	print_message("one-point ranking hits at a nonzero block offset, verified: %ld\n",
		      hb_jabas_pickmemo_onepoint_verified - before);
	assert_true(hb_jabas_pickmemo_onepoint_verified - before > 0);
}

static void test_deterministic(void **state)
{
	struct hb_sim a, b;

	(void)state;
	run_trace(&a, 7, 10);
	run_trace(&b, 7, 10);
	assert_int_equal(a.nevents, b.nevents);
	for (size_t e = 0; e < a.nevents; e++) {
		assert_int_equal(a.events[e].job, b.events[e].job);
		assert_true(a.events[e].t == b.events[e].t);
		assert_string_equal(a.events[e].kind, b.events[e].kind);
	}
	for (int j = 0; j < a.njobs; j++)
		assert_true(a.jobs[j].finish_s == b.jobs[j].finish_s);
	hb_sim_free(&a);
	hb_sim_free(&b);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 ||
	    hb_catalog_load_json(&cat, racks_json, strlen(racks_json), "test-racks", &err) < 0 ||
	    hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	resnet = &cat.models[hb_catalog_model(&cat, "resnet50") - cat.models];
	resnet->target_epochs = 6;
	bert = &cat.models[hb_catalog_model(&cat, "bert") - cat.models];
	bert->target_epochs = 10;
	cifar = &cat.models[hb_catalog_model(&cat, "cifar10") - cat.models];
	cifar->target_epochs = 40;
	cifar->min_gbs = 1024;
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
		cmocka_unit_test(test_memo_hits_are_walks),
		cmocka_unit_test(test_one_point_rankings),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
