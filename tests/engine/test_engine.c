/* Unit tests for the event queue (sim/engine.h): the pop order against a
 * sort by (t, kind, seq) and against a brute-force queue, tie-breaking,
 * peek, past-time rejection, growth and reuse. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine.h"
#include "rng.h"

static int cmp_event(const void *pa, const void *pb)
{
	const struct hb_event *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

static void assert_same_event(const struct hb_event *a, const struct hb_event *b)
{
	assert_true(a->t == b->t);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->job, b->job);
	assert_int_equal(a->gen, b->gen);
}

/* Random batch with many exact ties: times from a small grid, kinds from
 * all five; every pop must follow a stable sort by (t, kind, seq). */
static void run_random_batch(uint64_t seed, int n, int ntimes, int want_ties)
{
	struct hb_engine e;
	struct hb_error err = { 0 };
	struct hb_event *want = malloc((size_t)n * sizeof(*want)), ev;
	struct hb_rng rng;
	int ties_t = 0, ties_kind = 0;

	assert_non_null(want);
	hb_rng_seed(&rng, seed, HB_STREAM_DEFAULT);
	hb_engine_init(&e);
	for (int i = 0; i < n; i++) {
		double t = 0.5 * (double)hb_rng_below(&rng, (uint64_t)ntimes);
		int kind = (int)hb_rng_below(&rng, HB_EV_NKINDS);

		assert_int_equal(hb_engine_schedule(&e, t, kind, i, (uint64_t)i * 7u, &err), 0);
		want[i] = (struct hb_event){ .t = t, .seq = (uint64_t)i, .kind = kind, .job = i,
					     .gen = (uint64_t)i * 7u };
	}
	assert_int_equal(e.n, (size_t)n);
	qsort(want, (size_t)n, sizeof(*want), cmp_event);
	for (int i = 0; i < n; i++) {
		struct hb_event peeked;

		assert_int_equal(hb_engine_peek(&e, &peeked), 1);
		assert_int_equal(hb_engine_pop(&e, &ev), 1);
		assert_same_event(&peeked, &ev);
		assert_same_event(&ev, &want[i]);
		assert_true(e.now == ev.t);
		assert_int_equal(e.popped, (uint64_t)i + 1);
		if (i > 0 && want[i].t == want[i - 1].t) {
			ties_t++;
			if (want[i].kind == want[i - 1].kind)
				ties_kind++;
		}
	}
	assert_int_equal(hb_engine_pop(&e, &ev), 0);
	assert_int_equal(hb_engine_peek(&e, &ev), 0);
	/* The instance really exercised the tie-breaks. */
	if (want_ties) {
		assert_true(ties_t > n / 2);
		assert_true(ties_kind > n / 4);
	}
	hb_engine_free(&e);
	free(want);
}

static void test_random_order_matches_sort(void **state)
{
	(void)state;
	run_random_batch(1, 12000, 50, 1);    /* ~240 events per time */
	run_random_batch(2, 10000, 3, 1);     /* ~670 events per (t, kind) */
	run_random_batch(3, 10001, 10000, 0); /* mostly distinct times */
	run_random_batch(4, 1, 1, 0);
}

/* Hand-made ties: kind priority first, then FIFO within a kind. */
static void test_ties_kind_then_fifo(void **state)
{
	static const int kinds[] = { HB_EV_ARRIVAL, HB_EV_ROUND, HB_EV_MILESTONE, HB_EV_ROUND,
				     HB_EV_FAILURE, HB_EV_REALLOC_DONE, HB_EV_MILESTONE, HB_EV_FAILURE };
	/* job ids in the order they must pop */
	static const int order[] = { 4, 7, 5, 2, 6, 1, 3, 0 };
	struct hb_engine e;
	struct hb_error err = { 0 };
	struct hb_event ev;

	(void)state;
	hb_engine_init(&e);
	assert_int_equal(hb_engine_schedule(&e, 10.0, HB_EV_FAILURE, 100, 0, &err), 0); /* later time */
	for (int i = 0; i < 8; i++)
		assert_int_equal(hb_engine_schedule(&e, 5.0, kinds[i], i, 0, &err), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(hb_engine_pop(&e, &ev), 1);
		assert_int_equal(ev.job, order[i]);
		assert_true(ev.t == 5.0);
	}
	assert_int_equal(hb_engine_pop(&e, &ev), 1);
	assert_int_equal(ev.job, 100);
	assert_true(e.now == 10.0);
	hb_engine_free(&e);
}

/* Brute-force oracle: an unsorted array searched for the minimum. */
struct oracle {
	struct hb_event *ev;
	size_t n;
};

static int oracle_pop(struct oracle *o, struct hb_event *out)
{
	size_t best = 0;

	if (o->n == 0)
		return 0;
	for (size_t i = 1; i < o->n; i++)
		if (cmp_event(&o->ev[i], &o->ev[best]) < 0)
			best = i;
	*out = o->ev[best];
	o->ev[best] = o->ev[--o->n];
	return 1;
}

/* A simulator's pattern: pop one, schedule a few at or after now
 * (including exactly now, which must come after everything already queued
 * at now of the same kind). */
static void test_interleaved_against_oracle(void **state)
{
	enum { STEPS = 8000 };
	struct hb_engine e;
	struct hb_error err = { 0 };
	struct oracle o = { malloc(STEPS * 4 * sizeof(struct hb_event)), 0 };
	struct hb_rng rng;
	uint64_t seq = 0;
	size_t maxn = 0;
	int at_now = 0;

	(void)state;
	assert_non_null(o.ev);
	hb_rng_seed(&rng, 42, HB_STREAM_DEFAULT);
	hb_engine_init(&e);
	for (int step = 0; step < STEPS; step++) {
		/* More schedules than pops early on, fewer later, so the heap
		 * grows, shrinks and regrows. */
		int nsched = step < STEPS / 2 ? (int)hb_rng_below(&rng, 4) : (int)hb_rng_below(&rng, 2);
		struct hb_event got, want;

		for (int k = 0; k < nsched; k++) {
			double dt = hb_rng_below(&rng, 3) == 0 ? 0.0 : 0.25 * (double)hb_rng_below(&rng, 8);
			int kind = (int)hb_rng_below(&rng, HB_EV_NKINDS);
			int job = (int)hb_rng_below(&rng, 16);

			at_now += dt == 0.0;
			assert_int_equal(hb_engine_schedule(&e, e.now + dt, kind, job, seq + 1000, &err), 0);
			o.ev[o.n++] = (struct hb_event){ .t = e.now + dt, .seq = seq, .kind = kind, .job = job,
							 .gen = seq + 1000 };
			seq++;
		}
		if (e.n > maxn)
			maxn = e.n;
		assert_int_equal(e.n, o.n);
		if (hb_rng_below(&rng, 2) == 0) {
			int got_one = hb_engine_pop(&e, &got);

			assert_int_equal(got_one, oracle_pop(&o, &want));
			if (got_one)
				assert_same_event(&got, &want);
		}
	}
	while (o.n > 0) {
		struct hb_event got, want;

		assert_int_equal(hb_engine_pop(&e, &got), 1);
		assert_int_equal(oracle_pop(&o, &want), 1);
		assert_same_event(&got, &want);
	}
	assert_int_equal(e.n, 0);
	assert_int_equal(e.next_seq, seq);
	assert_true(maxn > 1000); /* several doublings */
	assert_true(at_now > 1000);
	hb_engine_free(&e);
	free(o.ev);
}

static void test_peek_does_not_remove(void **state)
{
	struct hb_engine e;
	struct hb_error err = { 0 };
	struct hb_event a, b;

	(void)state;
	hb_engine_init(&e);
	assert_int_equal(hb_engine_peek(&e, &a), 0);
	assert_int_equal(hb_engine_schedule(&e, 3.0, HB_EV_ROUND, 1, 9, &err), 0);
	assert_int_equal(hb_engine_schedule(&e, 2.0, HB_EV_ARRIVAL, 2, 8, &err), 0);
	assert_int_equal(hb_engine_peek(&e, &a), 1);
	assert_int_equal(hb_engine_peek(&e, &b), 1);
	assert_same_event(&a, &b);
	assert_int_equal(a.job, 2);
	assert_true(a.t == 2.0);
	assert_int_equal(a.gen, 8);
	assert_int_equal(e.n, 2);
	assert_true(e.now == 0.0);      /* peek does not advance time */
	assert_int_equal(e.popped, 0);
	assert_int_equal(hb_engine_pop(&e, &b), 1);
	assert_same_event(&a, &b);
	assert_true(e.now == 2.0);
	hb_engine_free(&e);
}

static void test_past_time_rejected(void **state)
{
	struct hb_engine e;
	struct hb_error err = { 0 };
	struct hb_event ev;

	(void)state;
	hb_engine_init(&e);
	assert_int_equal(hb_engine_schedule(&e, 100.0, HB_EV_MILESTONE, 0, 0, &err), 0);
	assert_int_equal(hb_engine_schedule(&e, 200.0, HB_EV_MILESTONE, 0, 0, &err), 0);
	assert_int_equal(hb_engine_pop(&e, &ev), 1);
	assert_true(e.now == 100.0);

	/* Before now: rejected, queue and sequence untouched. */
	assert_int_equal(hb_engine_schedule(&e, 99.5, HB_EV_ROUND, 3, 0, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "99.5"));
	assert_non_null(strstr(err.msg, "100"));
	assert_non_null(strstr(err.msg, "earlier"));
	assert_non_null(strstr(err.msg, "job 3"));
	assert_int_equal(e.n, 1);
	assert_int_equal(e.next_seq, 2);

	/* The smallest step back is still an error. */
	hb_error_clear(&err);
	assert_int_equal(hb_engine_schedule(&e, nextafter(100.0, 0.0), HB_EV_ROUND, 3, 0, &err), -1);

	/* Exactly now is allowed and pops first. */
	assert_int_equal(hb_engine_schedule(&e, 100.0, HB_EV_ROUND, 4, 0, &err), 0);
	assert_int_equal(hb_engine_pop(&e, &ev), 1);
	assert_int_equal(ev.job, 4);

	/* Non-finite times and unknown kinds are errors too. */
	hb_error_clear(&err);
	assert_int_equal(hb_engine_schedule(&e, NAN, HB_EV_ROUND, 5, 0, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_int_equal(hb_engine_schedule(&e, INFINITY, HB_EV_ROUND, 5, 0, &err), -1);
	hb_error_clear(&err);
	assert_int_equal(hb_engine_schedule(&e, 300.0, HB_EV_NKINDS, 5, 0, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "kind"));
	assert_int_equal(hb_engine_schedule(&e, 300.0, -1, 5, 0, &err), -1);
	assert_int_equal(e.n, 1);
	hb_engine_free(&e);
}

/* Growth by doubling from empty, free, and reuse after free. */
static void test_growth_and_reuse(void **state)
{
	struct hb_engine e;
	struct hb_error err = { 0 };
	struct hb_event ev;

	(void)state;
	hb_engine_init(&e);
	hb_engine_free(&e); /* freeing an empty queue is fine */
	hb_engine_init(&e);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(hb_engine_schedule(&e, (double)(5000 - i), HB_EV_ROUND, i, 0, &err), 0);
	assert_true(e.cap >= e.n + 1);
	assert_true((e.cap & (e.cap - 1)) == 0); /* a power of two: doubled */
	for (int i = 0; i < 5000; i++) {
		assert_int_equal(hb_engine_pop(&e, &ev), 1);
		assert_int_equal(ev.job, 4999 - i);
	}
	/* Left with events queued: free must release them (ASan checks). */
	for (int i = 0; i < 100; i++)
		assert_int_equal(hb_engine_schedule(&e, 6000.0 + i, HB_EV_ROUND, i, 0, &err), 0);
	hb_engine_free(&e);
	assert_int_equal(e.n, 0);
	assert_null(e.heap);
	assert_true(e.now == 0.0);
	assert_int_equal(hb_engine_schedule(&e, 1.0, HB_EV_ARRIVAL, 0, 0, &err), 0);
	assert_int_equal(hb_engine_pop(&e, &ev), 1);
	hb_engine_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_order_matches_sort),
		cmocka_unit_test(test_ties_kind_then_fifo),
		cmocka_unit_test(test_interleaved_against_oracle),
		cmocka_unit_test(test_peek_does_not_remove),
		cmocka_unit_test(test_past_time_rejected),
		cmocka_unit_test(test_growth_and_reuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
