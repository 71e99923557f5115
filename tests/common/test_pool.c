/* Unit tests for common/pool: every task of a batch runs exactly once, on
 * a worker number below the pool's thread count, whatever the thread and
 * task counts (zero tasks, more threads than tasks, many batches on one
 * pool), and a batch posted from inside a task runs too (serially). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pool.h"

#define MAXT 64

struct count_ctx {
	int *runs;          /* [n]: times each task ran (each task writes only its own) */
	int *worker;        /* [n]: the worker that ran it */
	unsigned *spin;     /* [n]: the busy work's result, so that it is done */
};

static void count_task(void *ctx, int task, int worker)
{
	struct count_ctx *c = ctx;
	unsigned x = (unsigned)task;

	/* a little work of uneven length, so that threads interleave */
	for (int k = 0; k < (task % 7) * 200; k++)
		x = x * 1664525u + 1013904223u;
	c->runs[task]++;
	c->spin[task] = x;
	c->worker[task] = worker;
}

static void check_batch(struct hb_pool *p, int n)
{
	int runs[MAXT] = { 0 }, worker[MAXT];
	unsigned spin[MAXT];
	struct count_ctx c = { runs, worker, spin };

	assert_true(n <= MAXT);
	for (int i = 0; i < MAXT; i++)
		worker[i] = -1;
	hb_pool_run(p, n, count_task, &c);
	for (int i = 0; i < n; i++) {
		assert_int_equal(runs[i], 1);
		assert_true(worker[i] >= 0 && worker[i] < hb_pool_threads(p));
	}
	for (int i = n > 0 ? n : 0; i < MAXT; i++)
		assert_int_equal(runs[i], 0);
}

static void test_every_task_once(void **state)
{
	(void)state;
	for (int t = 1; t <= 5; t++) {
		struct hb_pool *p = NULL;
		struct hb_error err = { 0 };

		assert_int_equal(hb_pool_create(&p, t, &err), 0);
		assert_int_equal(hb_pool_threads(p), t);
		assert_true((p == NULL) == (t == 1));
		check_batch(p, 0);   /* zero tasks: returns at once */
		check_batch(p, -3);
		check_batch(p, 1);
		check_batch(p, 2);   /* more threads than tasks for t > 2 */
		for (int n = 0; n <= MAXT; n += 7)
			check_batch(p, n);
		hb_pool_destroy(p);
	}
	hb_pool_destroy(NULL);
}

/* The forecaster's use: thousands of small batches on one pool. */
static void test_many_batches(void **state)
{
	struct hb_pool *p = NULL;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_pool_create(&p, 3, &err), 0);
	for (int b = 0; b < 2000; b++)
		check_batch(p, 1 + b % 12);
	hb_pool_destroy(p);
}

struct nest_ctx {
	struct hb_pool *pool;
	int inner_runs[8][8];  /* [outer task][inner task] */
};

struct inner_ctx {
	int *runs;
};

static void inner_task(void *ctx, int task, int worker)
{
	struct inner_ctx *c = ctx;

	(void)worker;
	c->runs[task]++;
}

static void outer_task(void *ctx, int task, int worker)
{
	struct nest_ctx *c = ctx;
	struct inner_ctx ic = { c->inner_runs[task] };

	(void)worker;
	/* the pool is busy with the outer batch: this one runs here, serially */
	hb_pool_run(c->pool, 8, inner_task, &ic);
}

static void test_nested(void **state)
{
	struct nest_ctx c;
	struct hb_error err = { 0 };

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(hb_pool_create(&c.pool, 4, &err), 0);
	hb_pool_run(c.pool, 8, outer_task, &c);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			assert_int_equal(c.inner_runs[i][j], 1);
	hb_pool_destroy(c.pool);
}

static void test_online_cpus(void **state)
{
	(void)state;
	assert_true(hb_pool_online_cpus() >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_task_once),
		cmocka_unit_test(test_many_batches),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_online_cpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
