/* The policy test template (tests/sim_harness.h, docs/policies.md): fifo
 * on jabas-quickstart (4 V100 + 4 P100 GPUs, two nodes) starts jobs in
 * arrival order, all GPUs at once, and the head of the queue blocks a job
 * that would fit beside the running one.  A new policy's test copies this
 * file, names its policy and states what its rule implies. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_harness.h"

static void test_fifo_blocks_behind_its_head(void **state)
{
	struct hb_harness h;
	const struct hb_sim_job *a, *b, *c;

	(void)state;
	hb_harness_open(&h, "jabas-quickstart", "fifo");
	hb_harness_job(&h, "resnet50", 0.0, 4, 256);  /* a: one node */
	hb_harness_job(&h, "resnet50", 1.0, 8, 256);  /* b: the whole cluster, waits for a */
	hb_harness_job(&h, "resnet50", 2.0, 4, 256);  /* c: would fit beside a, waits for b */
	hb_harness_run(&h);
	a = hb_harness_at(&h, 0);
	b = hb_harness_at(&h, 1);
	c = hb_harness_at(&h, 2);
	assert_true(a->start_s == 0.0);
	assert_true(fabs(b->start_s - a->finish_s) < 1e-9);
	assert_true(fabs(c->start_s - b->finish_s) < 1e-9);
	assert_int_equal(hb_harness_count(&h, -1, "done"), 3);
	assert_int_equal(hb_harness_count(&h, -1, "restart"), 0);
	/* b's start is recorded when a's GPUs came back */
	assert_non_null(hb_harness_event(&h, b->id, "start", 0));
	assert_true(fabs(hb_harness_event(&h, b->id, "start", 0)->t - a->finish_s) < 1e-9);
	assert_null(hb_harness_event(&h, b->id, "start", 1));
	hb_harness_close(&h);
}

static void test_a_policy_with_a_knob(void **state)
{
	struct hb_harness h;

	(void)state;
	hb_harness_open(&h, "jabas-quickstart", "yarn-cs");
	hb_harness_knob(&h, "yarn-head-only", NULL);
	hb_harness_job(&h, "resnet50", 0.0, 4, 256);
	hb_harness_job(&h, "resnet50", 1.0, 4, 256);
	hb_harness_run(&h);
	/* head only: one job at a time, so the second starts when the first ends */
	assert_true(fabs(h.sim.jobs[1].start_s - h.sim.jobs[0].finish_s) < 1e-9);
	hb_harness_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_blocks_behind_its_head),
		cmocka_unit_test(test_a_policy_with_a_knob),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
