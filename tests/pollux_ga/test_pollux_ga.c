/* solver/pollux_ga.c against brute force: on tiny clusters every
 * allocation matrix is enumerated, so the true Pareto front of (FITNESS,
 * UTILITY) over the feasible ones is known, and the search's first front
 * must be mutually non-dominated, feasible, and on that front (a point the
 * search calls non-dominated that some feasible matrix dominates is a
 * sorting bug); its best FITNESS must be the true maximum.  Repair must
 * make any matrix feasible and leave feasible ones alone, crossover's
 * children must take each row from one parent, and mutation must raise
 * cells at the artifact's per-node rates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "pollux_ga.h"
#include "rng.h"

#define MAXJ 3
#define MAXN 3

/* A speedup that is concave in GPUs and prefers one node: per job a gain
 * per GPU, a cost per extra node used. */
struct toy {
	double gain[MAXJ];
	double spread[MAXJ];
	int N;
};

static int toy_speedup(void *ctx, int job, const int *row, double *out, struct hb_error *err)
{
	const struct toy *t = ctx;
	int g = 0, nodes = 0;

	(void)err;
	for (int n = 0; n < t->N; n++) {
		g += row[n];
		nodes += row[n] > 0;
	}
	*out = g == 0 ? 0.0 : t->gain[job] * sqrt((double)g) / (1.0 + t->spread[job] * (nodes - 1));
	return 0;
}

struct tiny {
	int J, N, cap[MAXN], base[MAXJ * MAXN], maxr[MAXJ];
	double factor[MAXJ];
	struct toy toy;
	struct hb_pollux_problem pb;
};

static void tiny_random(struct tiny *t, struct hb_rng *rng)
{
	memset(t, 0, sizeof(*t));
	t->J = 1 + (int)hb_rng_below(rng, MAXJ);
	t->N = 1 + (int)hb_rng_below(rng, MAXN);
	t->toy.N = t->N;
	for (int n = 0; n < t->N; n++)
		t->cap[n] = 1 + (int)hb_rng_below(rng, 2);
	for (int j = 0; j < t->J; j++) {
		t->maxr[j] = 1 + (int)hb_rng_below(rng, 4);
		t->factor[j] = 0.25 * (double)(1 + hb_rng_below(rng, 4));
		t->toy.gain[j] = 0.5 + hb_rng_uniform(rng);
		t->toy.spread[j] = 0.5 * hb_rng_uniform(rng);
	}
	t->pb = (struct hb_pollux_problem){ t->J, t->N, t->cap, t->base, t->maxr, t->factor, -1.0, 1e-3,
					    (double)t->N / 6.0, 2, toy_speedup, &t->toy, NULL, NULL };
}

/* Every matrix with entries 0..cap[n]: call fn on the feasible ones.
 * Returns the number of feasible matrices. */
static long enumerate(const struct tiny *t, void (*fn)(void *, const int *, double, double), void *ctx)
{
	int a[MAXJ * MAXN] = { 0 }, cells = t->J * t->N;
	long feasible = 0;
	struct hb_error err = { 0 };

	for (;;) {
		if (hb_pollux_feasible(&t->pb, a)) {
			double fit, util;

			assert_int_equal(hb_pollux_evaluate(&t->pb, a, &fit, &util, &err), 0);
			fn(ctx, a, fit, util);
			feasible++;
		}
		int k = 0;

		while (k < cells && a[k] == t->cap[k % t->N])
			a[k++] = 0;
		if (k == cells)
			return feasible;
		a[k]++;
	}
}

/* The feasible points, for the dominance checks. */
struct points {
	double f[1 << 15][2];
	long n;
	double best_fit;
};

static void collect(void *ctx, const int *a, double fit, double util)
{
	struct points *p = ctx;

	(void)a;
	assert_true(p->n < (1 << 15));
	p->f[p->n][0] = fit;
	p->f[p->n][1] = util;
	p->n++;
	if (fit > p->best_fit)
		p->best_fit = fit;
}

/* a dominates b, both objectives maximised. */
static int dominates(const double *a, const double *b)
{
	return a[0] >= b[0] && a[1] >= b[1] && (a[0] > b[0] || a[1] > b[1]);
}

static void test_front_matches_enumeration(void **state)
{
	struct hb_rng rng;
	static struct points pts;
	long members = 0;

	(void)state;
	hb_rng_seed(&rng, 4141, 0);
	for (int trial = 0; trial < 200; trial++) {
		struct tiny t;
		struct hb_pollux_ga_opts o;
		struct hb_pollux_result res;
		struct hb_error err = { 0 };
		tiny_random(&t, &rng);
		pts.n = 0;
		pts.best_fit = -INFINITY;
		assert_true(enumerate(&t, collect, &pts) >= 1); /* the empty matrix is feasible */
		hb_pollux_ga_opts_default(&o);
		o.stale_generations = 0;
		o.max_cell_evals = 0;
		assert_int_equal(hb_pollux_search(&t.pb, NULL, 0, &o, &rng, &res, &err), 0);
		assert_true(res.nfront >= 1);
		/* The search's answer is the true best FITNESS (a tiny space: the
		 * whole population covers it). */
		assert_true(fabs(res.fitness - pts.best_fit) <= 1e-12 * fabs(pts.best_fit));
		for (int i = 0; i < res.nfront; i++) {
			const int *m = res.front + (size_t)i * (size_t)(t.J * t.N);
			double fi[2], fk[2];

			assert_true(hb_pollux_feasible(&t.pb, m));
			assert_int_equal(hb_pollux_evaluate(&t.pb, m, &fi[0], &fi[1], &err), 0);
			/* on the true Pareto front */
			for (long q = 0; q < pts.n; q++)
				assert_false(dominates(pts.f[q], fi));
			/* and no member dominates another */
			for (int k = 0; k < res.nfront; k++) {
				assert_int_equal(hb_pollux_evaluate(&t.pb, res.front + (size_t)k * (size_t)(t.J * t.N),
								    &fk[0], &fk[1], &err),
						 0);
				assert_false(dominates(fk, fi));
			}
			members++;
		}
		hb_pollux_result_free(&res);
	}
	print_message("front members checked: %ld\n", members);
	assert_true(members >= 200);
}

static void test_repair_feasible_and_idempotent(void **state)
{
	struct hb_rng rng;
	long fixed = 0, kept = 0;

	(void)state;
	hb_rng_seed(&rng, 4142, 0);
	for (int trial = 0; trial < 5000; trial++) {
		struct tiny t;
		int a[MAXJ * MAXN], b[MAXJ * MAXN];
		struct hb_error err = { 0 };
		tiny_random(&t, &rng);
		for (int k = 0; k < t.J * t.N; k++)
			a[k] = (int)hb_rng_below(&rng, 6) - 1; /* negatives count as 0 */
		int was = hb_pollux_feasible(&t.pb, a);

		memcpy(b, a, sizeof(a));
		assert_int_equal(hb_pollux_repair(&t.pb, a, &rng, &err), 0);
		assert_true(hb_pollux_feasible(&t.pb, a));
		if (was) {
			assert_memory_equal(a, b, sizeof(int) * (size_t)(t.J * t.N));
			kept++;
		} else {
			fixed++;
		}
		/* repairing a repaired matrix changes nothing */
		memcpy(b, a, sizeof(a));
		assert_int_equal(hb_pollux_repair(&t.pb, a, &rng, &err), 0);
		assert_memory_equal(a, b, sizeof(int) * (size_t)(t.J * t.N));
	}
	print_message("repaired %ld, kept %ld\n", fixed, kept);
	assert_true(fixed > 100 && kept > 100);
}

static void test_crossover_rows_from_parents(void **state)
{
	struct hb_rng rng;

	(void)state;
	hb_rng_seed(&rng, 4143, 0);
	for (int trial = 0; trial < 2000; trial++) {
		struct tiny t;
		int a[MAXJ * MAXN], b[MAXJ * MAXN], c0[MAXJ * MAXN], c1[MAXJ * MAXN];

		tiny_random(&t, &rng);
		for (int k = 0; k < t.J * t.N; k++) {
			a[k] = (int)hb_rng_below(&rng, 4);
			b[k] = (int)hb_rng_below(&rng, 4);
		}
		hb_pollux_crossover(&t.pb, a, b, c0, c1, &rng);
		for (int j = 0; j < t.J; j++) {
			const size_t r = (size_t)j * (size_t)t.N, sz = sizeof(int) * (size_t)t.N;
			int from_a = memcmp(c0 + r, a + r, sz) == 0, from_b = memcmp(c0 + r, b + r, sz) == 0;

			assert_true(from_a || from_b);
			/* the two children split each row between the parents */
			if (from_a && !from_b)
				assert_memory_equal(c1 + r, b + r, sz);
			if (from_b && !from_a)
				assert_memory_equal(c1 + r, a + r, sz);
		}
	}
}

/* Mutation (3)'s rates against the artifact's Problem._mutation
 * (simulator/pollux.py, osdi21-artifact), whose masks are normalised over
 * the jobs axis: p1 = 1 / J on every node with a free GPU, p2 = 1 / the
 * jobs holding the node.  Four jobs, three 4-GPU nodes, job 0 holding 2
 * GPUs and job 1 one on node 0, the matrix equal to the base.  Rates of
 * 200,000 runs of the artifact's code (numpy, seed 1) and their exact
 * values:
 *  - job 2 on node 1 (empty) > 0: 0.2012; p1 x 4/5 = 0.2
 *  - job 3 on node 2 (empty) > 0: 0.2001; 0.2
 *  - job 0 on node 0 (2) > 2: 0.4155; p = 1/4 + 1/2 - 1/8, raised to
 *    U{2..4}: 0.99 (0.99 x 0.625 + 0.01) 2/3 + 0.01 x 0.25 x 2/5 = 0.416
 *    (step (2) zeroes a cell with 0.01)
 *  - job 1 on node 0 (1) > 1: 0.4686; about 0.625 x 3/4 = 0.469
 * Normalising over nodes instead (1 / 3 eligible nodes) gives 0.267 and
 * 0.66 for the first and third. */
static int flat_speedup(void *ctx, int job, const int *row, double *out, struct hb_error *err)
{
	(void)ctx;
	(void)job;
	(void)err;
	*out = row[0] + row[1] + row[2];
	return 0;
}

static void test_mutation_rates_match_artifact(void **state)
{
	const int J = 4, N = 3, T = 40000;
	int cap[3] = { 4, 4, 4 }, base[12] = { 0 }, maxr[4] = { 12, 12, 12, 12 }, a[12];
	double factor[4] = { 1, 1, 1, 1 };
	long c21 = 0, c32 = 0, c00 = 0, c10 = 0;
	struct hb_pollux_problem pb = { J, N, cap, base, maxr, factor, -1.0, 1e-3, 0.5, 2, flat_speedup, NULL,
					NULL, NULL };
	struct hb_error err = { 0 };
	struct hb_rng rng;

	(void)state;
	base[0 * 3 + 0] = 2;
	base[1 * 3 + 0] = 1;
	hb_rng_seed(&rng, 6113, 0);
	for (int t = 0; t < T; t++) {
		memcpy(a, base, sizeof(a));
		assert_int_equal(hb_pollux_mutate(&pb, a, NULL, &rng, &err), 0);
		c21 += a[2 * 3 + 1] > 0;
		c32 += a[3 * 3 + 2] > 0;
		c00 += a[0 * 3 + 0] > 2;
		c10 += a[1 * 3 + 0] > 1;
	}
	print_message("mutation rates %.4f %.4f %.4f %.4f (artifact 0.2012 0.2001 0.4155 0.4686)\n",
		      (double)c21 / T, (double)c32 / T, (double)c00 / T, (double)c10 / T);
	/* 4 standard deviations of a 40,000-run rate near 0.2-0.5 */
	assert_true(fabs((double)c21 / T - 0.200) < 0.01);
	assert_true(fabs((double)c32 / T - 0.200) < 0.01);
	assert_true(fabs((double)c00 / T - 0.416) < 0.01);
	assert_true(fabs((double)c10 / T - 0.469) < 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_front_matches_enumeration),
		cmocka_unit_test(test_repair_feasible_and_idempotent),
		cmocka_unit_test(test_crossover_rows_from_parents),
		cmocka_unit_test(test_mutation_rates_match_artifact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
