/* Unit tests for trace.c: interval unions (hand cases and a brute-force
 * oracle on a grid), attribution of records to external ids with streams
 * that overlap, unattributed records, dropped counts, bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rng.h"
#include "trace.h"

/* CUPTI-like timestamps: ns since the epoch, far beyond 2^53. */
#define BASE 1700000000000000000ull

static double union_of(const struct hb_interval *iv, size_t n)
{
	struct hb_error err = { 0 };
	double len = -1;

	assert_int_equal(hb_interval_union(iv, n, &len, &err), 0);
	return len;
}

static void test_union_hand_cases(void **state)
{
	const struct hb_interval disjoint[] = { { 0, 1 }, { 2, 4 } };
	const struct hb_interval overlap[] = { { 0, 3 }, { 2, 5 } };
	const struct hb_interval nested[] = { { 0, 10 }, { 2, 3 }, { 4, 9 } };
	const struct hb_interval same[] = { { 1, 4 }, { 1, 4 }, { 1, 4 } };
	const struct hb_interval zero[] = { { 5, 5 } };
	const struct hb_interval zero_mixed[] = { { 5, 5 }, { 0, 2 }, { 1, 1 }, { 9, 9 } };
	const struct hb_interval touching[] = { { 0, 1 }, { 1, 2 } };
	const struct hb_interval unsorted[] = { { 7, 8 }, { 0, 2 }, { 3, 6 }, { 1, 4 } };
	const struct hb_interval chain[] = { { 0, 2 }, { 1, 3 }, { 2, 4 }, { 10, 11 } };
	struct hb_interval copy[4];

	(void)state;
	assert_true(union_of(disjoint, 2) == 3);
	assert_true(union_of(overlap, 2) == 5);
	assert_true(union_of(nested, 3) == 10);
	assert_true(union_of(same, 3) == 3);
	assert_true(union_of(zero, 1) == 0);
	assert_true(union_of(zero_mixed, 4) == 2);
	assert_true(union_of(touching, 2) == 2);
	assert_true(union_of(chain, 4) == 5);
	assert_true(union_of(NULL, 0) == 0);
	/* Unsorted input: [0,6) + [7,8); the input is left as it was. */
	memcpy(copy, unsorted, sizeof(copy));
	assert_true(union_of(copy, 4) == 7);
	assert_memory_equal(copy, unsorted, sizeof(copy));
}

/* Random intervals with integer ends on a grid of GRID cells: the union is
 * the number of cells covered. */
#define GRID 2000

static void test_union_against_grid_oracle(void **state)
{
	static unsigned char cell[GRID];
	struct hb_interval iv[64];
	struct hb_rng rng;
	int trial;

	(void)state;
	hb_rng_seed(&rng, 20240611, HB_STREAM_DEFAULT);
	for (trial = 0; trial < 500; trial++) {
		size_t n = 1 + hb_rng_below(&rng, 64), i;
		long covered = 0;
		int c;

		memset(cell, 0, sizeof(cell));
		for (i = 0; i < n; i++) {
			uint64_t a = hb_rng_below(&rng, GRID);
			/* Mostly short, some long, some empty intervals. */
			uint64_t len = hb_rng_below(&rng, 4) == 0 ? 0 : hb_rng_below(&rng, trial % 2 ? 400 : 40);
			uint64_t b = a + len > GRID ? GRID : a + len;

			iv[i].start = (double)a;
			iv[i].end = (double)b;
			for (c = (int)a; c < (int)b; c++)
				cell[c] = 1;
		}
		for (c = 0; c < GRID; c++)
			covered += cell[c];
		assert_true(union_of(iv, n) == (double)covered);
	}
}

static void test_union_rejects_reversed(void **state)
{
	const struct hb_interval bad[] = { { 0, 1 }, { 2, 3 }, { 5, 4 } };
	const struct hb_interval nan_end[] = { { 0, NAN } };
	struct hb_error err = { 0 };
	double len = 0;

	(void)state;
	assert_int_equal(hb_interval_union(bad, 3, &len, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "interval 2"));
	assert_non_null(strstr(err.msg, "end 4 < start 5"));
	hb_error_clear(&err);
	assert_int_equal(hb_interval_union(nan_end, 1, &len, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "interval 0"));
}

/* ------------------------------------------------------------------------ */

static void add(struct hb_trace *t, uint64_t start, uint64_t end, uint32_t stream, uint32_t corr, uint8_t kind)
{
	struct hb_trace_rec r = { .start_ns = BASE + start, .end_ns = BASE + end, .stream = stream,
				  .corr = corr, .kind = kind };
	struct hb_error err = { 0 };

	assert_int_equal(hb_trace_add_rec(t, &r, &err), 0);
}

static void pair(struct hb_trace *t, uint32_t corr, uint64_t ext)
{
	struct hb_error err = { 0 };

	assert_int_equal(hb_trace_add_corr(t, corr, ext, &err), 0);
}

#define NS 1e-9

/* Two VSW streams in one phase whose kernels overlap: the phase time is the
 * union (300 ns), less than the sum of the streams' busy times (250 + 150),
 * and each stream's busy time is its own union. */
static void test_group_overlapping_streams(void **state)
{
	const uint64_t fwd = hb_trace_ext_id(1, 1), bwd = hb_trace_ext_id(1, 2);
	struct hb_trace t;
	struct hb_trace_group *g = NULL;
	const struct hb_trace_group *f, *b;
	const struct hb_trace_busy *s7, *s8;
	struct hb_error err = { 0 };
	int n = -1;

	(void)state;
	hb_trace_init(&t);
	/* Arrival order is not time order; the pairs come first or later. */
	add(&t, 150, 300, 7, 3, HB_TRACE_KERNEL);
	pair(&t, 1, fwd);
	add(&t, 0, 100, 7, 1, HB_TRACE_KERNEL);
	add(&t, 50, 200, 8, 2, HB_TRACE_KERNEL);
	add(&t, 400, 450, 7, 4, HB_TRACE_MEMCPY);
	add(&t, 420, 500, 8, 5, HB_TRACE_MEMSET);
	pair(&t, 2, fwd);
	pair(&t, 3, fwd);
	pair(&t, 4, bwd);
	pair(&t, 5, bwd);
	pair(&t, 99, bwd); /* a pair whose work never showed up */
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(g[0].ext_id < g[1].ext_id);

	f = hb_trace_group_find(g, n, fwd);
	assert_non_null(f);
	assert_int_equal(f->nrecs, 3);
	assert_true(fabs(f->union_s - 300 * NS) < 1e-18);
	assert_true(fabs(f->sum_s - 400 * NS) < 1e-18);
	assert_true(f->first_start_ns == BASE + 0);
	assert_true(f->last_end_ns == BASE + 300);
	assert_int_equal(f->nstreams, 2);
	assert_int_equal(f->streams[0].stream, 7); /* ascending stream ids */
	s7 = hb_trace_group_stream(f, 7);
	s8 = hb_trace_group_stream(f, 8);
	assert_true(fabs(s7->busy_s - 250 * NS) < 1e-18);
	assert_int_equal(s7->nrecs, 2);
	assert_true(fabs(s8->busy_s - 150 * NS) < 1e-18);
	assert_int_equal(s8->nrecs, 1);
	assert_true(f->union_s < s7->busy_s + s8->busy_s);

	b = hb_trace_group_find(g, n, bwd);
	assert_non_null(b);
	assert_int_equal(b->nrecs, 2);
	assert_true(fabs(b->union_s - 100 * NS) < 1e-18); /* [400, 500) */
	assert_true(fabs(hb_trace_group_stream(b, 7)->busy_s - 50 * NS) < 1e-18);
	assert_true(fabs(hb_trace_group_stream(b, 8)->busy_s - 80 * NS) < 1e-18);
	assert_null(hb_trace_group_find(g, n, hb_trace_ext_id(1, 3)));
	assert_null(hb_trace_group_stream(b, 9));
	hb_trace_group_free(g);
	hb_trace_free(&t);
}

/* Records with no pair land in the last group, HB_TRACE_NO_EXT. */
static void test_group_unattributed(void **state)
{
	struct hb_trace t;
	struct hb_trace_group *g = NULL;
	struct hb_error err = { 0 };
	int n = -1;

	(void)state;
	hb_trace_init(&t);
	add(&t, 0, 10, 1, 1, HB_TRACE_KERNEL);
	add(&t, 5, 20, 2, 2, HB_TRACE_KERNEL);   /* no pair */
	add(&t, 30, 40, 2, 0, HB_TRACE_MEMSET);  /* correlation id 0, no pair */
	pair(&t, 1, 0);                          /* external id 0 is a real id */
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(g[0].ext_id == 0);
	assert_int_equal(g[0].nrecs, 1);
	assert_true(g[1].ext_id == HB_TRACE_NO_EXT);
	assert_int_equal(g[1].nrecs, 2);
	assert_int_equal(g[1].nstreams, 1);
	assert_true(fabs(g[1].union_s - 25 * NS) < 1e-18);
	hb_trace_group_free(g);

	/* No pairs at all: one group, everything unattributed. */
	t.ncorrs = 0;
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(g[0].ext_id == HB_TRACE_NO_EXT);
	assert_int_equal(g[0].nrecs, 3);
	assert_true(fabs(g[0].union_s - 30 * NS) < 1e-18);
	hb_trace_group_free(g);
	hb_trace_free(&t);
}

static void test_group_empty_and_exact(void **state)
{
	struct hb_trace t;
	struct hb_trace_group *g = (struct hb_trace_group *)&t;
	struct hb_error err = { 0 };
	int n = -1;

	(void)state;
	hb_trace_init(&t);
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_null(g);
	/* One ns at 1.7e18 ns: exact, although BASE + 1 is not a double. */
	add(&t, 1, 2, 0, 0, HB_TRACE_KERNEL);
	add(&t, 2, 2, 0, 0, HB_TRACE_KERNEL);    /* zero length */
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(g[0].union_s == 1e-9);
	assert_true(g[0].sum_s == 1e-9);
	assert_int_equal(g[0].nrecs, 2);
	hb_trace_group_free(g);
	hb_trace_free(&t);
}

/* dropped and untimed travel with the records through hb_trace_move. */
static void test_move_carries_counts(void **state)
{
	struct hb_trace a, b;
	struct hb_error err = { 0 };

	(void)state;
	hb_trace_init(&a);
	hb_trace_init(&b);
	add(&b, 0, 1, 1, 1, HB_TRACE_KERNEL);
	pair(&b, 1, 42);
	b.dropped = 3;
	b.untimed = 1;
	a.dropped = 2;
	assert_int_equal(hb_trace_move(&a, &b, &err), 0); /* into an empty trace */
	assert_int_equal(a.nrecs, 1);
	assert_int_equal(a.ncorrs, 1);
	assert_int_equal(a.dropped, 5);
	assert_int_equal(a.untimed, 1);
	assert_int_equal(b.nrecs, 0);
	assert_int_equal(b.ncorrs, 0);
	assert_int_equal(b.dropped, 0);
	assert_int_equal(b.untimed, 0);

	add(&b, 5, 6, 2, 2, HB_TRACE_MEMCPY);
	b.dropped = 4;
	assert_int_equal(hb_trace_move(&a, &b, &err), 0); /* appended */
	assert_int_equal(a.nrecs, 2);
	assert_true(a.recs[0].corr == 1 && a.recs[1].corr == 2);
	assert_int_equal(a.dropped, 9);
	assert_int_equal(b.nrecs, 0);
	assert_int_equal(b.dropped, 0);

	hb_trace_clear(&a);
	assert_int_equal(a.nrecs, 0);
	assert_int_equal(a.dropped, 0);
	hb_trace_free(&a);
	hb_trace_free(&b);
}

static void test_group_rejects_bad_input(void **state)
{
	struct hb_trace t;
	struct hb_trace_group *g = NULL;
	struct hb_error err = { 0 };
	int n = -1;

	(void)state;
	hb_trace_init(&t);
	add(&t, 0, 10, 1, 1, HB_TRACE_KERNEL);
	add(&t, 20, 30, 1, 2, HB_TRACE_KERNEL);
	add(&t, 50, 40, 3, 7, HB_TRACE_MEMCPY); /* end before start */
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "record 2"));
	assert_non_null(strstr(err.msg, "end_ns 1700000000000000040 < start_ns 1700000000000000050"));
	assert_non_null(strstr(err.msg, "stream 3"));
	assert_null(g);
	assert_int_equal(n, 0);

	/* One correlation id with two external ids. */
	t.nrecs = 2;
	pair(&t, 2, 16);
	pair(&t, 2, 17);
	hb_error_clear(&err);
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "correlation id 2"));
	/* Repeating the same pair is fine. */
	t.ncorrs = 1;
	pair(&t, 2, 16);
	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 2);
	hb_trace_group_free(g);
	hb_trace_free(&t);
}

/* Random records on 3 streams and 5 external ids (one of them "none"):
 * every group's union and every stream's busy time against the grid. */
static void test_group_against_grid_oracle(void **state)
{
	enum { NEXT = 5, NSTREAM = 3 };
	static unsigned char cell[NEXT][NSTREAM + 1][GRID]; /* [ext][stream or all][ns] */
	struct hb_rng rng;
	int trial;

	(void)state;
	hb_rng_seed(&rng, 77, HB_STREAM_DEFAULT);
	for (trial = 0; trial < 100; trial++) {
		struct hb_trace t;
		struct hb_trace_group *g = NULL;
		struct hb_error err = { 0 };
		int n, i, e, s, c, seen = 0;
		size_t nrec = 1 + hb_rng_below(&rng, 200);
		size_t k;

		hb_trace_init(&t);
		memset(cell, 0, sizeof(cell));
		for (e = 0; e < NEXT - 1; e++) /* correlation id e + 1 -> ext 100 + e; id 0: none */
			pair(&t, (uint32_t)e + 1, 100 + (uint64_t)e);
		for (k = 0; k < nrec; k++) {
			uint32_t corr = (uint32_t)hb_rng_below(&rng, NEXT);
			uint32_t stream = (uint32_t)hb_rng_below(&rng, NSTREAM);
			uint64_t a = hb_rng_below(&rng, GRID);
			uint64_t len = hb_rng_below(&rng, 120);
			uint64_t b = a + len > GRID ? GRID : a + len;

			e = corr == 0 ? NEXT - 1 : (int)corr - 1;
			add(&t, a, b, 10 + stream, corr, HB_TRACE_KERNEL);
			for (c = (int)a; c < (int)b; c++) {
				cell[e][stream][c] = 1;
				cell[e][NSTREAM][c] = 1;
			}
		}
		assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
		for (i = 0; i < n; i++) {
			long cov = 0;

			e = g[i].ext_id == HB_TRACE_NO_EXT ? NEXT - 1 : (int)(g[i].ext_id - 100);
			assert_true(e >= 0 && e < NEXT);
			for (c = 0; c < GRID; c++)
				cov += cell[e][NSTREAM][c];
			assert_true(fabs(g[i].union_s - cov * NS) < 1e-15);
			for (s = 0; s < g[i].nstreams; s++) {
				int st = (int)g[i].streams[s].stream - 10;

				cov = 0;
				for (c = 0; c < GRID; c++)
					cov += cell[e][st][c];
				assert_true(fabs(g[i].streams[s].busy_s - cov * NS) < 1e-15);
			}
			seen += (int)g[i].nrecs;
		}
		assert_int_equal(seen, (int)nrec);
		assert_true(g[n - 1].ext_id == HB_TRACE_NO_EXT || n <= NEXT - 1);
		hb_trace_group_free(g);
		hb_trace_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_union_hand_cases),
		cmocka_unit_test(test_union_against_grid_oracle),
		cmocka_unit_test(test_union_rejects_reversed),
		cmocka_unit_test(test_group_overlapping_streams),
		cmocka_unit_test(test_group_unattributed),
		cmocka_unit_test(test_group_empty_and_exact),
		cmocka_unit_test(test_move_carries_counts),
		cmocka_unit_test(test_group_rejects_bad_input),
		cmocka_unit_test(test_group_against_grid_oracle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
