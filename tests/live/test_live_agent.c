/*
 * test_live_agent.c: the live backend of the engine's agents (live/live_agent.h,
 * live/live_policy.h) without MPI: measured blocks are made up here (times,
 * similarities from a seeded stream) and fed to the registry's agents on
 * cpu-2x2 with analytic profiles.
 *
 *  - the engine's driven counting (sim.h hb_sim_drive): blocks end at the
 *    adaptation points and epoch ends the event loop would stop at;
 *  - a relaunch rebuilds the agent by replay: a run that rebuilds its
 *    agent from the state after every block (and after every epoch end)
 *    makes the same decisions, block for block, as one that never does,
 *    for jabas (in-place changes and a move to another allocation) and
 *    simigrad; a state that does not match the replay is refused, saying
 *    both;
 *  - jabas's decisions are the simulator's agent's: the first allocation
 *    is one node at B_G 64 and an epoch end moves to both (the live test's
 *    expectations, tests/live/test_live_adapt.c);
 *  - which policies run live: the registry's names in any case, aliases
 *    and agents that read the simulated noise scale or apply
 *    configurations no rank executes refused with the reason.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_run.h"
#include "live_policy.h"
#include "live_segment.h"
#include "policy.h"
#include "rng.h"

static char dbpath[600];

/* One block's outcome, to compare two runs. */
struct decision {
	long iteration, global_bs;
	int action, gpus;
	char why[256];
};

static void open_policy(struct hb_live_policy *pol, struct hb_catalog *cat, const char *name, long min_gbs)
{
	struct hb_live_policy_params par = { 0 };
	struct hb_error err = { 0 };
	const struct hb_cluster *cl = hb_catalog_cluster(cat, "cpu-2x2");
	const struct hb_model *m = hb_catalog_model(cat, "cifar10");

	assert_non_null(cl);
	assert_non_null(m);
	if (hb_live_policy_parse(name, &par.policy, &err) < 0)
		fail_msg("%s", err.msg);
	par.p = 4;
	par.gamma = 0.9;
	par.alpha = 0.5;
	par.min_gbs = min_gbs;
	par.dataset = 2048;
	par.epochs = 3;
	par.seed = 7;
	if (hb_live_policy_open(pol, cat, cl, m, dbpath, &par, &err) < 0)
		fail_msg("%s", err.msg);
}

static int gpus_of(const struct hb_live_pstate *st)
{
	int g = 0;

	for (int i = 0; i < st->nnodes; i++)
		g += st->alloc[i];
	return g;
}

/* The whole run of policy name on made-up measurements; rebuild: 1 to
 * rebuild the agent from the state after every block, 2 after every epoch
 * end (a relaunch), 0 never.  Returns the decisions made (at most max). */
static int run_policy(const char *name, long min_gbs, int rebuild, struct decision *d, int max)
{
	struct hb_catalog cat = { 0 };
	struct hb_live_policy pol;
	struct hb_live_pstate st = { 0 };
	struct hb_live_plan plan;
	struct hb_error err = { 0 };
	struct hb_rng rng;
	char why[256];
	int n = 0, action = HB_LIVE_CONTINUE;

	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	hb_rng_seed(&rng, 42, 1);
	open_policy(&pol, &cat, name, min_gbs);
	if (hb_live_policy_start(&pol, &st, why, sizeof(why), &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_live_policy_config(&pol, &st, &plan, &err), 0);
	while (action != HB_LIVE_DONE && n < max) {
		int adapt;
		long it = hb_live_policy_next(&pol, &adapt);
		const struct hb_live_block b = { it, 0.01 * (double)it, adapt ? 0.7 + 0.3 * hb_rng_uniform(&rng) : NAN };
		struct hb_live_plan next;
		long epoch = st.epoch;

		if (hb_live_policy_block(&pol, &st, &b, &action, &next, why, sizeof(why), &err) < 0)
			fail_msg("block %d: %s", n, err.msg);
		if (action == HB_LIVE_INPLACE) {
			assert_int_equal(next.global_batch, st.global_bs);
			assert_int_equal(next.nslots, gpus_of(&st));
			hb_live_plan_free(&next);
		}
		d[n].iteration = st.iteration;
		d[n].global_bs = st.global_bs;
		d[n].action = action;
		d[n].gpus = gpus_of(&st);
		snprintf(d[n].why, sizeof(d[n].why), "%s", why);
		n++;
		if (action != HB_LIVE_DONE && (rebuild == 1 || (rebuild == 2 && st.epoch != epoch))) {
			/* a new process: a fresh agent replays the state's blocks */
			hb_live_policy_close(&pol);
			hb_live_plan_free(&plan);
			open_policy(&pol, &cat, name, min_gbs);
			if (hb_live_policy_config(&pol, &st, &plan, &err) < 0)
				fail_msg("rebuild after block %d: %s", n, err.msg);
			assert_int_equal(plan.global_batch, st.global_bs);
			assert_int_equal(plan.nslots, gpus_of(&st));
		}
	}
	assert_int_equal(action, HB_LIVE_DONE);
	hb_live_plan_free(&plan);
	hb_live_policy_close(&pol);
	hb_live_pstate_free(&st);
	hb_catalog_free(&cat);
	return n;
}

static void same_decisions(const char *name, long min_gbs, int *inplace, int *moves)
{
	static struct decision a[4096], b[4096], c[4096];
	int na = run_policy(name, min_gbs, 0, a, 4096);
	int nb = run_policy(name, min_gbs, 1, b, 4096);
	int nc = run_policy(name, min_gbs, 2, c, 4096);

	assert_int_equal(na, nb);
	assert_int_equal(na, nc);
	*inplace = *moves = 0;
	for (int i = 0; i < na; i++) {
		assert_int_equal(a[i].iteration, b[i].iteration);
		assert_int_equal(a[i].global_bs, b[i].global_bs);
		assert_int_equal(a[i].action, b[i].action);
		assert_int_equal(a[i].gpus, b[i].gpus);
		assert_string_equal(a[i].why, b[i].why);
		assert_int_equal(a[i].global_bs, c[i].global_bs);
		assert_int_equal(a[i].action, c[i].action);
		assert_string_equal(a[i].why, c[i].why);
		*inplace += a[i].action == HB_LIVE_INPLACE;
		*moves += a[i].action == HB_LIVE_MOVE;
	}
}

static void test_replay_jabas(void **state)
{
	int inplace, moves;

	(void)state;
	same_decisions("jabas", 64, &inplace, &moves);
	/* the made-up similarities move the batch both ways, and an epoch
	 * end moves the run to another allocation */
	if (inplace < 2 || moves < 1)
		fail_msg("%d in-place changes, %d moves", inplace, moves);
}

static void test_replay_simigrad(void **state)
{
	int inplace, moves;

	(void)state;
	same_decisions("SimiGrad", 0, &inplace, &moves);
	assert_true(inplace >= 1);
	assert_int_equal(moves, 0); /* every GPU, all the time */
}

/* jabas on cpu-2x2 at B_G^init 64: one node first (JABAS §4.3 initial
 * phase: the least predicted epoch time), then at an epoch end both. */
static void test_jabas_decisions(void **state)
{
	static struct decision d[4096];
	int n = run_policy("jabas", 64, 0, d, 4096), grew = 0;

	(void)state;
	for (int i = 0; i < n; i++)
		if (d[i].action == HB_LIVE_MOVE) {
			assert_int_equal(d[i].gpus, 4);
			assert_non_null(strstr(d[i].why, "best 4 GPUs"));
			grew = 1;
			break;
		} else {
			assert_int_equal(d[i].gpus, 2);
		}
	assert_true(grew);
}

/* The engine counts blocks as its event loop: static (no interval), a
 * 2048-sample epoch at B_G 128 is 16 iterations; jabas with p 4 stops
 * every 4. */
static void test_driven_counting(void **state)
{
	struct hb_catalog cat = { 0 };
	struct hb_live_policy pol;
	struct hb_live_pstate st = { 0 };
	struct hb_live_plan plan, next;
	struct hb_error err = { 0 };
	char why[256];
	int adapt, action;
	long n;

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	open_policy(&pol, &cat, "static", 128);
	assert_int_equal(hb_live_policy_start(&pol, &st, why, sizeof(why), &err), 0);
	assert_int_equal(hb_live_policy_config(&pol, &st, &plan, &err), 0);
	assert_string_equal(plan.method, "ddp");
	assert_int_equal(plan.nslots, 4);
	assert_int_equal(st.global_bs, 128);
	n = hb_live_policy_next(&pol, &adapt);
	assert_int_equal(n, 16);
	assert_int_equal(adapt, 0);
	{
		const struct hb_live_block b = { 10, 1.0, NAN };

		assert_int_equal(hb_live_policy_block(&pol, &st, &b, &action, &next, why, sizeof(why), &err), 0);
	}
	assert_int_equal(action, HB_LIVE_CONTINUE);
	assert_int_equal(hb_live_policy_next(&pol, &adapt), 6);
	{
		/* more than the next point is refused */
		const struct hb_live_block b = { 7, 1.0, NAN };

		assert_int_equal(hb_live_policy_block(&pol, &st, &b, &action, &next, why, sizeof(why), &err), -1);
	}
	hb_live_plan_free(&plan);
	hb_live_policy_close(&pol);
	hb_live_pstate_free(&st);

	open_policy(&pol, &cat, "jabas", 64);
	memset(&st, 0, sizeof(st));
	assert_int_equal(hb_live_policy_start(&pol, &st, why, sizeof(why), &err), 0);
	assert_int_equal(hb_live_policy_config(&pol, &st, &plan, &err), 0);
	assert_string_equal(plan.method, "iidp");
	assert_int_equal(hb_live_policy_next(&pol, &adapt), 4);
	assert_int_equal(adapt, 1);
	hb_live_plan_free(&plan);
	hb_live_policy_close(&pol);
	hb_live_pstate_free(&st);
	hb_catalog_free(&cat);
}

/* A state the replay does not arrive at is refused, naming both. */
static void test_replay_mismatch(void **state)
{
	struct hb_catalog cat = { 0 };
	struct hb_live_policy pol;
	struct hb_live_pstate st = { 0 };
	struct hb_live_plan plan;
	struct hb_error err = { 0 };
	char why[256];

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	open_policy(&pol, &cat, "jabas", 64);
	assert_int_equal(hb_live_policy_start(&pol, &st, why, sizeof(why), &err), 0);
	hb_live_policy_close(&pol);
	st.global_bs += 2;
	open_policy(&pol, &cat, "jabas", 64);
	assert_int_equal(hb_live_policy_config(&pol, &st, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "replayed from 0 measured blocks"));
	assert_non_null(strstr(err.msg, "the state file says"));
	hb_live_plan_free(&plan);
	hb_live_policy_close(&pol);
	hb_live_pstate_free(&st);
	hb_catalog_free(&cat);
}

/* The state file carries the blocks bit for bit (a relaunch replays them):
 * awkward doubles, a similarity not measured (null). */
static void test_state_blocks(void **state)
{
	struct hb_live_segment a = { 0 }, b;
	struct hb_error err = { 0 };
	char path[700];
	const struct hb_live_block bl[3] = { { 4, 0.1 + 0.2, 0.1234567890123456789 },
					     { 3, 1e-300, NAN },
					     { 1, 12345.678901234567, 1.0 / 3.0 } };

	(void)state;
	snprintf(a.policy, sizeof(a.policy), "jabas");
	snprintf(a.change, sizeof(a.change), "relaunch");
	a.st.nnodes = 2;
	a.st.alloc[0] = a.st.alloc[1] = 2;
	a.st.global_bs = 320;
	a.st.iteration = 8;
	for (int i = 0; i < 3; i++)
		assert_int_equal(hb_live_pstate_add_block(&a.st, &bl[i], &err), 0);
	snprintf(path, sizeof(path), "%s/state.json", tmpdir);
	assert_int_equal(hb_live_segment_write(path, &a, &err), 0);
	if (hb_live_segment_read(path, &b, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(b.st.nblocks, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(b.st.blocks[i].iters, bl[i].iters);
		assert_memory_equal(&b.st.blocks[i].elapsed_s, &bl[i].elapsed_s, sizeof(double));
		if (isnan(bl[i].similarity))
			assert_true(isnan(b.st.blocks[i].similarity));
		else
			assert_memory_equal(&b.st.blocks[i].similarity, &bl[i].similarity, sizeof(double));
	}
	hb_live_segment_free(&b);
	/* a block of no iterations: the file and the field named */
	{
		size_t len;
		char *text = slurp(path, &len), *at = strstr(text, "\"iters\":\t4");

		assert_non_null(at);
		at[strlen("\"iters\":\t")] = '0';
		write_file("zero.json", text);
		free(text);
		snprintf(path, sizeof(path), "%s/zero.json", tmpdir);
		assert_int_equal(hb_live_segment_read(path, &b, &err), -1);
		assert_non_null(strstr(err.msg, "zero.json: field 'blocks'"));
	}
	/* a malformed file names itself */
	write_file("bad.json", "{\"format\": \"hetbatch-live-state/2\"}");
	snprintf(path, sizeof(path), "%s/bad.json", tmpdir);
	assert_int_equal(hb_live_segment_read(path, &b, &err), -1);
	assert_non_null(strstr(err.msg, "bad.json"));
	hb_live_segment_free(&a);
}

/* What runs live: the registry's names; the rest with the reason. */
static void test_refusals(void **state)
{
	struct hb_catalog cat = { 0 };
	struct hb_live_policy pol;
	struct hb_live_pstate st = { 0 };
	struct hb_error err = { 0 };
	const struct hb_policy *p;
	char why[256];

	(void)state;
	assert_int_equal(hb_live_policy_parse("JABAS", &p, &err), 0);
	assert_ptr_equal(p, hb_policy_find("jabas"));
	assert_int_equal(hb_live_policy_parse("tiresias", &p, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "use --policy static"));
	assert_int_equal(hb_live_policy_parse("jabbas", &p, &err), -1);
	assert_non_null(strstr(err.msg, "did you mean 'jabas'"));
	assert_non_null(strstr(err.msg, "simigrad"));
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	/* Pollux's agent reads the statistical model's noise scale at its
	 * first epoch end: refused before any launch */
	open_policy(&pol, &cat, "pollux", 0);
	assert_int_equal(hb_live_policy_start(&pol, &st, why, sizeof(why), &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "noise scale"));
	hb_live_policy_close(&pol);
	/* LB-BSP's split is a layout the ranks do not run (yet) */
	open_policy(&pol, &cat, "lbbsp", 0);
	assert_int_equal(hb_live_policy_start(&pol, &st, why, sizeof(why), &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "not one a live rank executes"));
	hb_live_policy_close(&pol);
	hb_live_pstate_free(&st);
	hb_catalog_free(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_driven_counting),
		cmocka_unit_test(test_replay_jabas),
		cmocka_unit_test(test_replay_simigrad),
		cmocka_unit_test(test_jabas_decisions),
		cmocka_unit_test(test_replay_mismatch),
		cmocka_unit_test(test_state_blocks),
		cmocka_unit_test(test_refusals),
	};
	int rc;

	if (cli_setup("live_agent") < 0)
		return 77;
	if (run("profile --analytic --gpus cpu --models cifar10 --db cpu.db") != 0) {
		cli_teardown();
		return 1;
	}
	snprintf(dbpath, sizeof(dbpath), "%s/cpu.db", tmpdir);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	cli_teardown();
	return rc;
}
