/* Unit tests for common/pool: every task of a batch runs exactly once, on
 * a worker number below the pool's thread count, whatever the thread and
 * task counts (zero tasks, more threads than tasks, many batches on one
 * pool), and a batch posted from inside a task runs too (serially);
 * background tasks run once or are withdrawn unrun, and a claimer helps
 * with a running one's batch without sharing a worker number. */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
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

/* Pollux's use: tens of thousands of batches of a few tasks that take no
 * time, back to back, each with a context of its own.  A thread still
 * inside a batch when its caller starts the next one must not hand out the
 * new batch's tasks with the old batch's function and context: each
 * context knows its batch, and a task run under any other batch counts as
 * bad (two contexts alternate, both alive, so a stale run lands in live
 * memory and is seen). */
struct tight_ctx {
	int batch;              /* the batch this context belongs to */
	const atomic_int *current; /* the batch in progress */
	atomic_int *bad;        /* tasks run outside their batch */
	int runs[4];
};

static void tight_task(void *ctx, int task, int worker)
{
	struct tight_ctx *c = ctx;

	(void)worker;
	if (atomic_load(c->current) != c->batch)
		atomic_fetch_add(c->bad, 1);
	c->runs[task]++;
}

static void test_tight_batches(void **state)
{
	struct hb_pool *p = NULL;
	struct hb_error err = { 0 };
	atomic_int current = 0, bad = 0;
	struct tight_ctx c[2];

	(void)state;
	assert_int_equal(hb_pool_create(&p, 2, &err), 0);
	for (int b = 1; b <= 40000; b++) {
		struct tight_ctx *x = &c[b % 2];
		const int n = 2 + b % 3;

		memset(x, 0, sizeof(*x));
		x->batch = b;
		x->current = &current;
		x->bad = &bad;
		atomic_store(&current, b);
		hb_pool_run(p, n, tight_task, x);
		atomic_store(&current, 0);
		for (int i = 0; i < 4; i++)
			assert_int_equal(x->runs[i], i < n ? 1 : 0);
	}
	hb_pool_destroy(p);
	/* (whether the worker joined any batch depends on the machine's
	 * load: a busy CI machine may run them all on the caller) */
	assert_int_equal(atomic_load(&bad), 0);
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

/* Background tasks: posted among batches, each either runs exactly once on
 * a worker (not the caller's number 0) and is claimed as run, or is
 * withdrawn before it starts and never runs; a claimed task can be posted
 * again; without workers nothing is posted. */
struct bg_ctx {
	int runs;
	int worker;
	unsigned spin;
};

static void bg_task(void *ctx, int task, int worker)
{
	struct bg_ctx *c = ctx;
	unsigned x = 1;

	assert_int_equal(task, 0);
	for (int k = 0; k < 20000; k++)
		x = x * 1664525u + 1013904223u;
	c->spin = x;
	c->runs++;
	c->worker = worker;
}

struct signal_ctx {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ran;
	int worker;
};

static void signal_task(void *ctx, int task, int worker)
{
	struct signal_ctx *c = ctx;

	(void)task;
	pthread_mutex_lock(&c->mu);
	c->ran = 1;
	c->worker = worker;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void test_background(void **state)
{
	(void)state;
	for (int t = 1; t <= 4; t++) {
		struct hb_pool *p = NULL;
		struct hb_error err = { 0 };
		struct hb_pool_bg bg[8];
		struct bg_ctx c[8];
		int ran = 0, withdrawn = 0;

		assert_int_equal(hb_pool_create(&p, t, &err), 0);
		memset(bg, 0, sizeof(bg));
		assert_int_equal(hb_pool_claim(p, &bg[0]), 0); /* never posted */
		for (int round = 0; round < 200; round++) {
			const int nb = 1 + round % 8;

			memset(c, 0, sizeof(c));
			for (int i = 0; i < nb; i++)
				assert_int_equal(hb_pool_post(p, &bg[i], bg_task, &c[i]), t > 1);
			check_batch(p, round % 13);
			/* claim in posting order, or the reverse (a queued task
			 * withdrawn from the middle or the tail of the queue) */
			for (int k = 0; k < nb; k++) {
				const int i = round % 2 ? nb - 1 - k : k;
				int r = hb_pool_claim(p, &bg[i]);

				assert_int_equal(c[i].runs, r);
				assert_int_equal(bg[i].state, HB_POOL_BG_IDLE);
				if (r) {
					assert_true(c[i].worker >= 1 && c[i].worker < t);
					ran++;
				} else {
					withdrawn++;
				}
			}
			for (int i = 0; i < nb; i++) {
				assert_int_equal(hb_pool_claim(p, &bg[i]), 0); /* claimed already */
				assert_true(c[i].runs <= 1);
			}
		}
		assert_int_equal(ran + withdrawn, 900);
		if (t == 1)
			assert_int_equal(ran, 0);
		if (t > 1) {
			/* an idle worker takes a posted task by itself */
			struct signal_ctx sc = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1 };

			assert_int_equal(hb_pool_post(p, &bg[0], signal_task, &sc), 1);
			pthread_mutex_lock(&sc.mu);
			while (!sc.ran)
				pthread_cond_wait(&sc.cv, &sc.mu);
			pthread_mutex_unlock(&sc.mu);
			assert_int_equal(hb_pool_claim(p, &bg[0]), 1);
			assert_true(sc.worker >= 1 && sc.worker < t);
		}
		hb_pool_destroy(p);
	}
}

/* A background task that runs a batch of its own, claimed while it runs:
 * the claimer helps with that batch, and no two tasks of it ever run at
 * once under one worker number (each holds its number's flag while it
 * runs). */
struct nested_ctx {
	struct hb_pool *pool;
	_Atomic int inuse[MAXT];
	int runs[MAXT];
	unsigned spin[MAXT];
	int bad;
};

static void flag_task(void *ctx, int task, int worker)
{
	struct nested_ctx *c = ctx;
	unsigned x = (unsigned)task;

	if (worker < 0 || worker >= MAXT || atomic_exchange(&c->inuse[worker], 1) != 0) {
		c->bad = 1;
		return;
	}
	for (int k = 0; k < 3000; k++)
		x = x * 1664525u + 1013904223u;
	c->spin[task] = x;  /* the busy work's result, so that it is done */
	c->runs[task]++;    /* each task writes only its own slots */
	atomic_store(&c->inuse[worker], 0);
}

static void nested_bg(void *ctx, int task, int worker)
{
	struct nested_ctx *c = ctx;

	(void)task;
	(void)worker;
	hb_pool_run(c->pool, MAXT, flag_task, c);
}

static void test_background_batch(void **state)
{
	(void)state;
	for (int t = 2; t <= 4; t++) {
		struct hb_pool *p = NULL;
		struct hb_error err = { 0 };

		assert_int_equal(hb_pool_create(&p, t, &err), 0);
		for (int round = 0; round < 300; round++) {
			struct nested_ctx c;
			struct hb_pool_bg bg = { 0 };
			volatile unsigned delay = 1; /* the caller's own work before it claims */
			int r;

			memset(&c, 0, sizeof(c));
			c.pool = p;
			assert_int_equal(hb_pool_post(p, &bg, nested_bg, &c), 1);
			/* claim at varying points of the run */
			for (unsigned k = 0; k < (unsigned)(round % 5) * 2000u; k++)
				delay = delay * 1664525u + 1013904223u;
			r = hb_pool_claim(p, &bg);
			assert_int_equal(c.bad, 0);
			for (int i = 0; i < MAXT; i++)
				assert_int_equal(c.runs[i], r);
		}
		hb_pool_destroy(p);
	}
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
		cmocka_unit_test(test_tight_batches),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_background),
		cmocka_unit_test(test_background_batch),
		cmocka_unit_test(test_online_cpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
