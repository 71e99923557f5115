/* PolluxSched (sim/policies/pollux/arbiter_pollux.c) and the Pollux agent in a shared
 * cluster (sim/policies/pollux/agent_pollux.c: on_grant and the report, agent_pollux.h).
 *
 * The GA core is checked on hand-built problems: FITNESS and UTILITY by
 * hand, repair properties over many random matrices, the search against a
 * brute force over every allocation of a 2-job, 2-node case, and the
 * re-allocation penalty.  The arbiter and agent run in real simulations: a
 * 6-job trace on jabas-quickstart (4 V100 + 4 P100) is deterministic and
 * respects the constraints at every round, and the agent keeps its history
 * and fit across grant changes. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "agent_pollux.h"
#include "capacity.h"
#include "pollux_ga.h"
#include "default_db.h"
#include "goodput.h"
#include "policy.h"
#include "pool.h"
#include "rng.h"
#include "sim.h"

static struct hb_catalog cat;
static struct hb_profdb *db;

/* ---- GA core: toy speedups ---------------------------------------------------- */

/* Speedup of a row: sum over nodes of w[n] x GPUs. */
struct toy {
	double w[8];
};

static int toy_speedup(void *ctx, int job, const int *row, double *out, struct hb_error *err)
{
	const struct toy *t = ctx;

	(void)job;
	(void)err;
	*out = 0.0;
	for (int n = 0; n < 2; n++)
		*out += t->w[n] * row[n];
	return 0;
}

static void test_fitness_by_hand(void **state)
{
	struct toy t = { { 0.5, 0.25 } };
	int cap[2] = { 4, 4 }, base[4] = { 2, 0, 0, 0 }, maxr[2] = { 8, 8 };
	double factor[2] = { 0.5, 0.25 }, fit, util, x0, x1, want;
	struct hb_pollux_problem pb = { 2, 2, cap, base, maxr, factor, -1.0, 1e-3, 0.25, 16, toy_speedup, &t, NULL, NULL };
	int a[4] = { 2, 0, 1, 2 };  /* job 0 unchanged; job 1 started on both nodes */
	int b[4] = { 0, 3, 0, 0 };  /* job 0 moved; job 1 left pending */
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_pollux_evaluate(&pb, a, &fit, &util, &err), 0);
	x0 = 0.25 * (0.5 * 2) * 1.0 + 1e-3;                /* unchanged row: no factor */
	x1 = 0.25 * (0.5 * 1 + 0.25 * 2) * 0.25 + 1e-3;    /* changed row: its factor */
	want = 1.0 / ((1.0 / x0 + 1.0 / x1) / 2.0);         /* p = -1: harmonic mean */
	assert_true(fabs(fit - want) < 1e-12 * want);
	/* Utility: raw speedups 1.0 + 1.0 over the 8 GPUs of the nodes used. */
	assert_true(fabs(util - 2.0 / 8.0) < 1e-12);

	/* A pending job contributes (0 + eps)^-1 = 1000 to the sum (note A5). */
	assert_int_equal(hb_pollux_evaluate(&pb, b, &fit, &util, &err), 0);
	x0 = 0.25 * (0.25 * 3) * 0.5 + 1e-3;
	want = 1.0 / ((1.0 / x0 + 1.0 / 1e-3) / 2.0);
	assert_true(fabs(fit - want) < 1e-12 * want);
	assert_true(fit < 2.1e-3);
	assert_true(fabs(util - 0.75 / 4.0) < 1e-12); /* only node 1 is used */

	/* The artifact's factor: max(T - 30 R, 0) / (T + 30), 0 at T = 0. */
	assert_true(fabs(hb_goodput_restart_factor(600.0, 3, 30.0) - 510.0 / 630.0) < 1e-15);
	assert_true(hb_goodput_restart_factor(0.0, 0, 30.0) == 0.0);
	assert_true(hb_goodput_restart_factor(60.0, 5, 30.0) == 0.0);
}

/* The search's harmonic-mean fast path agrees with hb_goodput_fitness. */
struct fixed {
	double x[8];
};

static int fixed_speedup(void *ctx, int job, const int *row, double *out, struct hb_error *err)
{
	const struct fixed *f = ctx;

	(void)row;
	(void)err;
	*out = f->x[job];
	return 0;
}

static void test_fitness_matches_goodput_h(void **state)
{
	struct hb_rng rng;
	struct hb_error err = { 0 };

	(void)state;
	hb_rng_seed(&rng, 99, 0);
	for (int trial = 0; trial < 2000; trial++) {
		struct fixed f;
		int J = 1 + (int)hb_rng_below(&rng, 8), cap[1] = { 64 }, base[8] = { 0 }, a[8], maxr[8];
		double factor[8], scaled[8], fac[8], fit, util, want;
		struct hb_pollux_problem pb = { J, 1, cap, base, maxr, factor, -1.0, 1e-3, 0.25, 16, fixed_speedup, &f, NULL, NULL };

		for (int j = 0; j < J; j++) {
			f.x[j] = hb_rng_uniform(&rng) < 0.2 ? 0.0 : 10.0 * hb_rng_uniform(&rng);
			factor[j] = hb_rng_uniform(&rng);
			maxr[j] = 64;
			a[j] = (int)hb_rng_below(&rng, 3); /* 0: unchanged, no factor */
			scaled[j] = 0.25 * f.x[j];
			fac[j] = a[j] != 0 ? factor[j] : 1.0;
		}
		assert_int_equal(hb_pollux_evaluate(&pb, a, &fit, &util, &err), 0);
		assert_int_equal(hb_goodput_fitness(scaled, fac, (size_t)J, -1.0, 1e-3, &want, &err), 0);
		assert_true(fabs(fit - want) <= 1e-14 * want);
	}
}

/* ---- GA core: repair ----------------------------------------------------------- */

struct rand_problem {
	struct hb_pollux_problem pb;
	int cap[8], base[8 * 8], maxr[8];
	double factor[8];
	struct toy t;
};

static void random_problem(struct rand_problem *r, struct hb_rng *rng)
{
	int J = 1 + (int)hb_rng_below(rng, 8), N = 1 + (int)hb_rng_below(rng, 8);

	memset(r, 0, sizeof(*r));
	for (int n = 0; n < N; n++)
		r->cap[n] = 1 + (int)hb_rng_below(rng, 8);
	for (int j = 0; j < J; j++) {
		r->maxr[j] = (int)hb_rng_below(rng, 20); /* 0 included */
		r->factor[j] = hb_rng_uniform(rng);
	}
	/* A feasible base: repaired below. */
	for (int k = 0; k < J * N; k++)
		r->base[k] = (int)hb_rng_below(rng, 5);
	r->t.w[0] = 1.0;
	r->t.w[1] = 0.5;
	r->pb = (struct hb_pollux_problem){ J, N, r->cap, r->base, r->maxr, r->factor, -1.0, 1e-3, 0.25,
					    1 + (int)hb_rng_below(rng, 4), toy_speedup, &r->t, NULL, NULL };
	assert_int_equal(hb_pollux_repair(&r->pb, r->base, rng, NULL), 0);
}

static void random_matrix(const struct hb_pollux_problem *pb, int *a, struct hb_rng *rng)
{
	for (int k = 0; k < pb->njobs * pb->nnodes; k++)
		a[k] = hb_rng_uniform(rng) < 0.4 ? 0 : (int)hb_rng_below(rng, 12);
}

static void test_repair_always_feasible(void **state)
{
	struct hb_rng rng;
	int a[64], b[64], c0[64], c1[64], kept[64];

	(void)state;
	hb_rng_seed(&rng, 2024, 0);
	for (int trial = 0; trial < 20000; trial++) {
		struct rand_problem r;
		const struct hb_pollux_problem *pb = &r.pb;
		int L;

		random_problem(&r, &rng);
		L = pb->njobs * pb->nnodes;
		assert_true(hb_pollux_feasible(pb, r.base));
		random_matrix(pb, a, &rng);
		random_matrix(pb, b, &rng);
		memcpy(kept, a, sizeof(int) * (size_t)L);
		assert_int_equal(hb_pollux_repair(pb, a, &rng, NULL), 0);
		assert_true(hb_pollux_feasible(pb, a));
		/* Repair only removes GPUs. */
		for (int k = 0; k < L; k++)
			assert_true(a[k] >= 0 && a[k] <= kept[k]);
		/* A feasible matrix is left alone. */
		memcpy(kept, a, sizeof(int) * (size_t)L);
		assert_int_equal(hb_pollux_repair(pb, a, &rng, NULL), 0);
		assert_memory_equal(a, kept, sizeof(int) * (size_t)L);
		/* The operators' output, repaired, is feasible too. */
		assert_int_equal(hb_pollux_repair(pb, b, &rng, NULL), 0);
		hb_pollux_crossover(pb, a, b, c0, c1, &rng);
		assert_int_equal(hb_pollux_mutate(pb, c0, NULL, &rng, NULL), 0);
		assert_int_equal(hb_pollux_mutate(pb, c1, NULL, &rng, NULL), 0);
		for (int k = 0; k < L; k++)
			assert_true(c0[k] >= 0 && c1[k] >= 0 && c0[k] <= 64 && c1[k] <= 64);
		assert_int_equal(hb_pollux_repair(pb, c0, &rng, NULL), 0);
		assert_int_equal(hb_pollux_repair(pb, c1, &rng, NULL), 0);
		assert_true(hb_pollux_feasible(pb, c0));
		assert_true(hb_pollux_feasible(pb, c1));
	}
}

/* ---- GA core: the sparse operators against the dense ones ------------------------ */

/* The artifact's operators on dense J x N matrices, as the search ran them
 * before it moved to sparse genomes (arbiter_pollux.c): the oracle the
 * sparse ones must match draw for draw, so that the search's decisions do
 * not depend on the representation.  A frozen copy on purpose: the public
 * dense entry points now run the sparse operators, so comparing against
 * them would compare the code with itself; never sync it with the
 * arbiter's code. */
#define REF_MAX 256 /* rows and columns the oracle holds */

struct ref_scratch {
	int rowsum[REF_MAX], rownz[REF_MAX], dlist[REF_MAX], colsum[REF_MAX], perm[REF_MAX], elig[REF_MAX],
	    holders[REF_MAX];
};

struct ref_coins {
	struct hb_rng *rng;
	uint64_t bits;       /* unused half of the last draw */
	int left;            /* halves left in bits */
};

/* Threshold of a Bernoulli(p) trial: P(1) = threshold / 2^32. */
static uint64_t ref_coin_threshold(double p)
{
	if (!(p > 0.0))
		return 0;
	if (p >= 1.0)
		return (uint64_t)1 << 32;
	return (uint64_t)(p * 4294967296.0);
}

static int ref_coin(struct ref_coins *c, uint64_t threshold)
{
	uint32_t u;

	if (c->left == 0) {
		c->bits = hb_rng_u64(c->rng);
		c->left = 2;
	}
	u = (uint32_t)c->bits;
	c->bits >>= 32;
	c->left--;
	return u < threshold;
}


/* Failures before the next success of Bernoulli(p) trials, log1 = log(1 -
 * p) (0: p = 1, no failures): floor(log U / log(1 - p)), U in (0, 1]. */
static int ref_geometric_gap(struct hb_rng *rng, double log1)
{
	double u = 1.0 - hb_rng_uniform(rng), g;

	if (log1 == 0.0)
		return 0;
	g = floor(log(u) / log1);
	return g < (double)INT_MAX / 2 ? (int)g : INT_MAX / 2;
}

/* pollux.md §3.2 [ART] mutation: (1) rows back to the base with probability
 * 0.1, (2) rows chosen with probability 0.1 get each element zeroed with
 * probability 0.1, (3) elements on nodes with a free GPU raised to a uniform
 * value between their own and the node's capacity, with probability p1 + p2 -
 * p1 p2 (Problem._mutation normalises its masks over the jobs: p1 = 1 / J,
 * every job fitting a free GPU; p2 = 1 / the jobs with a cell on the node,
 * 0 for a job without one).  The free GPUs and holders of (3) are counted
 * once, after (2), as the artifact's vectorised code does. */
static void ref_mutate(const struct hb_pollux_problem *pb, struct ref_scratch *s, int *restrict a, struct hb_rng *rng)
{
	const uint64_t reset = ref_coin_threshold(0.1), zrow = ref_coin_threshold(0.1),
		       zelem = ref_coin_threshold(0.1);
	const int J = pb->njobs, N = pb->nnodes, *restrict cap = pb->capacity;
	int *restrict col = s->colsum, *restrict elig = s->elig, c1 = 0;
	struct ref_coins c = { rng, 0, 0 };
	double log1;

	for (int j = 0; j < J; j++)
		if (ref_coin(&c, reset))
			memcpy(a + (size_t)j * N, pb->base + (size_t)j * N, sizeof(int) * (size_t)N);
	for (int j = 0; j < J; j++)
		if (ref_coin(&c, zrow))
			for (int n = 0; n < N; n++)
				if (ref_coin(&c, zelem))
					a[(size_t)j * N + n] = 0;
	for (int n = 0; n < N; n++)
		col[n] = 0;
	for (int j = 0; j < J; j++) {
		const int *restrict row = a + (size_t)j * N;

		for (int n = 0; n < N; n++)
			col[n] += row[n];
	}
	for (int n = 0; n < N; n++)
		if (cap[n] - col[n] >= 1)
			elig[c1++] = n;
	if (c1 == 0)
		return;
	for (int n = 0; n < N; n++) {
		s->holders[n] = 0;
		for (int j = 0; j < J; j++)
			s->holders[n] += a[(size_t)j * N + n] > 0;
	}
	/* The cells where the job does not run succeed with p1 each: the gaps
	 * between successes are geometric, drawn directly instead of one coin
	 * per cell (the same distribution, a draw per success rather than per
	 * node, which matters on large clusters).  Successes land after the
	 * job's own cells are raised, on the values the row had before. */
	log1 = J > 1 ? log1p(-1.0 / J) : 0.0;
	for (int j = 0; j < J; j++) {
		int *restrict row = a + (size_t)j * N, c2 = 0, zeros, next;

		for (int k = 0; k < c1; k++) {
			int n = elig[k];

			s->perm[k] = row[n] > 0;
			c2 += s->perm[k];
		}
		zeros = c1 - c2;
		for (int k = 0; k < c1 && c2 > 0; k++) {
			int n = elig[k];
			double p1 = 1.0 / J, p2 = s->perm[k] ? 1.0 / s->holders[n] : 0.0;

			if (s->perm[k] && ref_coin(&c, ref_coin_threshold(p1 + p2 - p1 * p2)))
				row[n] += (int)hb_rng_below(rng, (uint64_t)(cap[n] - row[n] + 1));
		}
		next = ref_geometric_gap(rng, log1);
		for (int k = 0, z = 0; k < c1 && next < zeros; k++) {
			int n = elig[k];

			if (s->perm[k])
				continue;
			if (z++ == next) {
				row[n] += (int)hb_rng_below(rng, (uint64_t)(cap[n] + 1));
				next = z + ref_geometric_gap(rng, log1);
			}
		}
	}
}


/* pollux.md §3.2 [ART] repair: (a) one multi-node job per node, the first in
 * job order, and from the second one on the node every later job's cell
 * there zeroed too, single-node ones included (Problem._repair's
 * mask.cumsum(axis=1) > 1, written here as it is: a count per node in job
 * order); (b) each job's GPUs capped at max_replicas and its nodes at
 * max_nodes_per_job, walking its nodes in random order; (c) node capacity by
 * cumulative sum in job order; (d) min_replicas is 0: nothing.  Each step
 * only touches what violates its constraint (a step with nothing to fix
 * would leave the matrix as it is). */
static void ref_repair(const struct hb_pollux_problem *pb, struct ref_scratch *s, int *restrict a, struct hb_rng *rng)
{
	const int J = pb->njobs, N = pb->nnodes;
	int *restrict col = s->colsum, ndist = 0;

	for (int n = 0; n < N; n++)
		col[n] = 0;
	for (int j = 0; j < J; j++) {
		int *restrict row = a + (size_t)j * N, sum = 0, nz = 0;

		/* Genomes of the search are never negative; hb_pollux_repair
		 * clamps what callers pass. */
		for (int n = 0; n < N; n++) {
			sum += row[n];
			nz += row[n] > 0;
			col[n] += row[n];
		}
		s->rowsum[j] = sum;
		s->rownz[j] = nz;
		if (nz > 1)
			s->dlist[ndist++] = j;
	}
	/* (a): the multi-node jobs on node n up to row j, counted before any
	 * cell is zeroed; a cell where the count exceeds 1 is zeroed. */
	if (ndist > 1) {
		for (int n = 0; n < N; n++)
			s->elig[n] = 0; /* multi-node jobs on node n so far */
		for (int j = 0; j < J; j++) {
			int *row = a + (size_t)j * N, lost = 0, gone = 0, multi = s->rownz[j] > 1;

			for (int n = 0; n < N; n++) {
				int v = row[n], kill;

				s->elig[n] += multi && v > 0;
				kill = v > 0 && s->elig[n] > 1;
				row[n] = kill ? 0 : v;
				lost += kill ? v : 0;
				gone += kill;
				s->colsum[n] -= kill ? v : 0;
			}
			s->rowsum[j] -= lost;
			s->rownz[j] -= gone;
		}
	}
	/* (b): only the order of the row's non-zero cells matters, and only
	 * when a cap binds, so only then is it drawn: a uniform order of those
	 * cells is what a uniform shuffle of all nodes gives them. */
	for (int j = 0; j < J; j++) {
		int *row = a + (size_t)j * N, left = pb->max_replicas[j] > 0 ? pb->max_replicas[j] : 0, used = 0, nz = 0;

		if (s->rowsum[j] <= left && s->rownz[j] <= pb->max_nodes_per_job)
			continue;
		for (int n = 0; n < N; n++)
			if (row[n] > 0)
				s->perm[nz++] = n;
		for (int i = nz - 1; i > 0; i--) {
			int k = (int)hb_rng_below(rng, (uint64_t)i + 1), t = s->perm[i];

			s->perm[i] = s->perm[k];
			s->perm[k] = t;
		}
		for (int i = 0; i < nz; i++) {
			int n = s->perm[i], take = row[n] < left ? row[n] : left;

			left -= take;
			if (take > 0 && used >= pb->max_nodes_per_job)
				take = 0;
			else if (take > 0)
				used++;
			s->colsum[n] -= row[n] - take;
			row[n] = take;
		}
	}
	/* (c) */
	for (int n = 0; n < N; n++) {
		int room = pb->capacity[n];

		if (s->colsum[n] <= room)
			continue;
		for (int j = 0; j < J; j++) {
			int *v = &a[(size_t)j * N + n];

			if (*v > room)
				*v = room;
			room -= *v;
		}
	}
}


static void test_sparse_operators_match_dense(void **state)
{
	struct hb_rng rng, r1, r2;
	int a[64], b[64];

	(void)state;
	hb_rng_seed(&rng, 77, 0);
	for (int trial = 0; trial < 20000; trial++) {
		struct rand_problem r;
		const struct hb_pollux_problem *pb = &r.pb;
		struct ref_scratch s;
		size_t L;

		random_problem(&r, &rng);
		L = (size_t)pb->njobs * pb->nnodes;
		random_matrix(pb, a, &rng);
		memcpy(b, a, sizeof(int) * L);
		r1 = rng;
		r2 = rng;
		if (trial % 2) {
			ref_mutate(pb, &s, a, &r1);
			assert_int_equal(hb_pollux_mutate(pb, b, NULL, &r2, NULL), 0);
		} else {
			ref_repair(pb, &s, a, &r1);
			assert_int_equal(hb_pollux_repair(pb, b, &r2, NULL), 0);
		}
		assert_memory_equal(a, b, sizeof(int) * L);
		/* The same draws: both generators end in the same state. */
		assert_int_equal(hb_rng_u64(&r1), hb_rng_u64(&r2));
		rng = r1;
	}
}

/* The same on wide, sparse problems, Philly-like: up to 240 columns, a few
 * cells per row, some columns full and some of capacity 0 (withdrawn GPUs),
 * so that mutation's list of nodes without a free GPU takes both its short
 * (sorted cells) and its long (scan of all columns) form. */
static void test_sparse_operators_match_dense_wide(void **state)
{
	enum { WJ = 12, WN = 240 };
	static int cap[WN], base[WJ * WN], a[WJ * WN], b[WJ * WN], maxr[WJ];
	static double factor[WJ];
	struct hb_rng rng, r1, r2;
	struct toy t = { { 1.0, 0.5 } };

	(void)state;
	hb_rng_seed(&rng, 78, 0);
	for (int trial = 0; trial < 4000; trial++) {
		int J = 1 + (int)hb_rng_below(&rng, WJ), N = 9 + (int)hb_rng_below(&rng, WN - 8);
		/* Cells per row: mostly 1 to 3 (the sorted form), sometimes up
		 * to 40 (the scan). */
		int per = hb_rng_below(&rng, 4) == 0 ? 40 : 3;
		struct hb_pollux_problem pb = { J, N, cap, base, maxr, factor, -1.0, 1e-3, 0.25,
						1 + (int)hb_rng_below(&rng, 16), toy_speedup, &t, NULL, NULL };
		struct ref_scratch s;
		size_t L = (size_t)J * N;

		/* Capacity-0 columns in half the trials: few enough otherwise for
		 * the sorted form. */
		int zero = trial % 4 < 2;

		for (int n = 0; n < N; n++)
			cap[n] = zero && hb_rng_below(&rng, 10) == 0 ? 0 : 1 + (int)hb_rng_below(&rng, 8);
		for (int j = 0; j < J; j++) {
			maxr[j] = (int)hb_rng_below(&rng, 40);
			factor[j] = hb_rng_uniform(&rng);
		}
		for (int pass = 0; pass < 2; pass++) {
			int *m = pass ? a : base;

			memset(m, 0, sizeof(int) * L);
			for (int j = 0; j < J; j++)
				for (int k = (int)hb_rng_below(&rng, (uint64_t)per + 1); k > 0; k--)
					m[(size_t)j * N + hb_rng_below(&rng, (uint64_t)N)] = 1 + (int)hb_rng_below(&rng, 8);
		}
		assert_int_equal(hb_pollux_repair(&pb, base, &rng, NULL), 0);
		memcpy(b, a, sizeof(int) * L);
		r1 = rng;
		r2 = rng;
		if (trial % 2) {
			ref_mutate(&pb, &s, a, &r1);
			assert_int_equal(hb_pollux_mutate(&pb, b, NULL, &r2, NULL), 0);
		} else {
			ref_repair(&pb, &s, a, &r1);
			assert_int_equal(hb_pollux_repair(&pb, b, &r2, NULL), 0);
		}
		assert_memory_equal(a, b, sizeof(int) * L);
		assert_int_equal(hb_rng_u64(&r1), hb_rng_u64(&r2));
		rng = r1;
	}
}

/* The search on a sparse speedup callback decides as on the dense one, and
 * a cell budget ends a big search early. */
static int toy_cells(void *ctx, int j, const int *cells, int n, double *x, struct hb_error *err)
{
	int row[64] = { 0 };

	for (int i = 0; i < n; i++)
		row[cells[2 * i]] = cells[2 * i + 1];
	return toy_speedup(ctx, j, row, x, err);
}

static void test_search_sparse_callback_and_budget(void **state)
{
	enum { J = 6, N = 8 };
	int cap[N], base[J * N] = { 0 }, maxr[J];
	double factor[J];
	struct toy t = { { 1.0, 0.5 } };
	struct hb_pollux_problem pb = { J, N, cap, base, maxr, factor, -1.0, 1e-3, 0.25, 16, toy_speedup, &t, NULL, NULL };
	struct hb_pollux_ga_opts o, tight;
	struct hb_pollux_result rd, rs, rt;
	struct hb_rng r1, r2, r3;
	struct hb_error err;

	(void)state;
	for (int n = 0; n < N; n++)
		cap[n] = 4;
	for (int j = 0; j < J; j++) {
		maxr[j] = 2 + j;
		factor[j] = 0.5;
	}
	hb_pollux_ga_opts_default(&o);
	o.stale_generations = 0;
	o.max_cell_evals = 0;
	hb_rng_seed(&r1, 5, 0);
	r2 = r1;
	r3 = r1;
	assert_int_equal(hb_pollux_search(&pb, NULL, 0, &o, &r1, &rd, &err), 0);
	pb.speedup_cells = toy_cells;
	assert_int_equal(hb_pollux_search(&pb, NULL, 0, &o, &r2, &rs, &err), 0);
	assert_memory_equal(rd.best, rs.best, sizeof(int) * J * N);
	assert_int_equal(rd.evaluations, rs.evaluations);
	assert_true(rd.evaluations > 5000); /* 99 generations of up to 100 */
	/* A budget of 300 evaluations of J x N cells: stops after the
	 * generation that crosses it. */
	tight = o;
	tight.max_cell_evals = 300.0 * J * N;
	assert_int_equal(hb_pollux_search(&pb, NULL, 0, &tight, &r3, &rt, &err), 0);
	assert_true(rt.evaluations >= 300 && rt.evaluations <= 400);
	assert_true(hb_pollux_feasible(&pb, rt.best));
	hb_pollux_result_free(&rd);
	hb_pollux_result_free(&rs);
	hb_pollux_result_free(&rt);
}

/* A sparse speedup that differs by job and saturates, so that searches on
 * random problems have fronts of several members; fails (when fail_k > 0)
 * on a row of exactly fail_k GPUs, naming it, to check which error a
 * parallel batch reports.  Reads only its context: safe on many threads. */
struct wtoy {
	double w[16];     /* per job */
	int fail_k;
};

static int wtoy_cells(void *ctx, int j, const int *cells, int n, double *x, struct hb_error *err)
{
	const struct wtoy *t = ctx;
	int k = 0;

	for (int i = 0; i < n; i++)
		k += cells[2 * i + 1];
	if (t->fail_k > 0 && k == t->fail_k && n > 1)
		return hb_runtime_error(err, "job %d: %d GPUs on %d nodes, first node %d", j, k, n, cells[0]);
	*x = t->w[j] * k / (1.0 + 0.1 * k) / (n > 1 ? 1.25 : 1.0);
	return 0;
}

/* Packed form of ninit dense J x N matrices (hb_pollux_search_packed's
 * input): per matrix J + 1 row starts, then (column, value) of its
 * entries > 0. */
static void pack_matrices(const int *a, int ninit, int J, int N, int *out, size_t *off)
{
	off[0] = 0;
	for (int k = 0; k < ninit; k++) {
		int *p = out + off[k], *c = p + J + 1, n = 0;

		p[0] = 0;
		for (int j = 0; j < J; j++) {
			for (int col = 0; col < N; col++) {
				const int v = a[((size_t)k * J + j) * N + col];

				if (v > 0) {
					c[2 * n] = col;
					c[2 * n + 1] = v;
					n++;
				}
			}
			p[j + 1] = n;
		}
		off[k + 1] = off[k] + (size_t)J + 1 + 2 * (size_t)n;
	}
}

/* The search evaluates on a pool as serially, bit for bit: the same best
 * matrix, front, objectives, evaluations and generator state after, for 2
 * to 4 threads, on random problems large and small (below and above the
 * batch size that goes parallel), and the same error when a speedup fails.
 * The packed search (hb_pollux_search_packed, the arbiter's) from the same
 * matrices packed gives the same, its front packed. */
static void test_search_pool_identity(void **state)
{
	enum { MJ = 16, MN = 40 };
	static int cap[MN], base[MJ * MN], maxr[MJ], init[3 * MJ * MN], pinit[3 * (MJ + 1 + 2 * MJ * MN)], dense[MJ * MN];
	static double factor[MJ];
	size_t poff[4];
	struct hb_pool *pools[4] = { NULL };
	struct hb_rng rng;
	struct hb_error err = { 0 };

	(void)state;
	for (int t = 2; t <= 4; t++)
		assert_int_equal(hb_pool_create(&pools[t - 1], t, &err), 0);
	hb_rng_seed(&rng, 91, 0);
	for (int trial = 0; trial < 24; trial++) {
		int J = 1 + (int)hb_rng_below(&rng, MJ), N = 2 + (int)hb_rng_below(&rng, MN - 1);
		int ninit = (int)hb_rng_below(&rng, 4);
		struct wtoy w = { { 0 }, 0 };
		struct hb_pollux_problem pb = { J, N, cap, base, maxr, factor, -1.0, 1e-3, 0.25,
						1 + (int)hb_rng_below(&rng, 16), NULL, &w, wtoy_cells, NULL };
		struct hb_pollux_ga_opts o;
		struct hb_pollux_result ref;
		struct hb_rng r0;
		size_t D = (size_t)J * N;

		for (int n = 0; n < N; n++)
			cap[n] = 1 + (int)hb_rng_below(&rng, 8);
		for (int j = 0; j < J; j++) {
			maxr[j] = 1 + (int)hb_rng_below(&rng, 24);
			factor[j] = hb_rng_uniform(&rng);
			w.w[j] = 0.1 + hb_rng_uniform(&rng);
		}
		memset(base, 0, sizeof(int) * D);
		for (size_t k = 0; k < (size_t)ninit * D; k++)
			init[k] = hb_rng_below(&rng, 6) == 0 ? (int)hb_rng_below(&rng, 4) : 0;
		hb_pollux_ga_opts_default(&o);
		o.generations = 30;
		/* one trial in four fails on rows of 3 GPUs over several nodes */
		w.fail_k = trial % 4 == 3 ? 3 : 0;
		hb_rng_seed(&r0, 200 + (uint64_t)trial, 0);
		{
			struct hb_rng r = r0;
			struct hb_error e0 = { 0 };
			int rc0 = hb_pollux_search(&pb, init, ninit, &o, &r, &ref, &e0);
			uint64_t next = hb_rng_u64(&r);

			pack_matrices(init, ninit, J, N, pinit, poff);
			for (int t = 1; t <= 2; t++) {
				struct hb_rng rt = r0;
				struct hb_pollux_result res;
				struct hb_error et = { 0 };

				pb.pool = pools[t - 1];
				assert_int_equal(hb_pollux_search_packed(&pb, pinit, poff, ninit, &o, &rt, &res, &et), rc0);
				pb.pool = NULL;
				if (rc0 < 0) {
					assert_string_equal(e0.msg, et.msg);
					continue;
				}
				assert_null(res.front);
				assert_memory_equal(ref.best, res.best, sizeof(int) * D);
				assert_true(memcmp(&ref.fitness, &res.fitness, sizeof(double)) == 0);
				assert_true(memcmp(&ref.utility, &res.utility, sizeof(double)) == 0);
				assert_int_equal(ref.nfront, res.nfront);
				for (int i = 0; i < res.nfront; i++) {
					const int *p = res.fpacked + res.foff[i], *c = p + J + 1;

					memset(dense, 0, sizeof(int) * D);
					for (int j = 0; j < J; j++)
						for (int e = p[j]; e < p[j + 1]; e++) {
							assert_true(e == p[j] || c[2 * e] > c[2 * (e - 1)]);
							assert_true(c[2 * e + 1] > 0);
							dense[(size_t)j * N + c[2 * e]] = c[2 * e + 1];
						}
					assert_int_equal(res.foff[i + 1] - res.foff[i], (size_t)J + 1 + 2 * (size_t)p[J]);
					assert_memory_equal(ref.front + (size_t)i * D, dense, sizeof(int) * D);
				}
				assert_int_equal(ref.evaluations, res.evaluations);
				assert_int_equal(next, hb_rng_u64(&rt));
				hb_pollux_result_free(&res);
			}

			for (int t = 2; t <= 4; t++) {
				struct hb_rng rt = r0;
				struct hb_pollux_result res;
				struct hb_error et = { 0 };

				pb.pool = pools[t - 1];
				assert_int_equal(hb_pollux_search(&pb, init, ninit, &o, &rt, &res, &et), rc0);
				pb.pool = NULL;
				if (rc0 < 0) {
					assert_string_equal(e0.msg, et.msg);
					continue;
				}
				assert_memory_equal(ref.best, res.best, sizeof(int) * D);
				assert_true(memcmp(&ref.fitness, &res.fitness, sizeof(double)) == 0);
				assert_true(memcmp(&ref.utility, &res.utility, sizeof(double)) == 0);
				assert_int_equal(ref.nfront, res.nfront);
				assert_memory_equal(ref.front, res.front, sizeof(int) * D * (size_t)ref.nfront);
				assert_int_equal(ref.evaluations, res.evaluations);
				assert_int_equal(next, hb_rng_u64(&rt));
				hb_pollux_result_free(&res);
			}
			if (rc0 == 0)
				hb_pollux_result_free(&ref);
		}
	}
	for (int t = 2; t <= 4; t++)
		hb_pool_destroy(pools[t - 1]);
}

/* Interference avoidance keeps the first distributed job in job order, and
 * on a node with a second one zeroes every later job's cell, as the
 * artifact's Problem._repair does (numpy on these rows: [[1 1] [0 0] [0 0]]). */
static void test_repair_interference_order(void **state)
{
	struct toy t = { { 1, 1 } };
	int cap[2] = { 4, 4 }, base[6] = { 0 }, maxr[3] = { 8, 8, 8 };
	double factor[3] = { 1, 1, 1 };
	struct hb_pollux_problem pb = { 3, 2, cap, base, maxr, factor, -1.0, 1e-3, 0.25, 16, toy_speedup, &t, NULL, NULL };
	int a[6] = { 1, 1,   /* job 0: distributed, first in order: keeps both nodes */
		     2, 2,   /* job 1: distributed: loses both nodes to job 0 */
		     0, 3 }; /* job 2: single-node, after job 1 on node 1: zeroed too */
	int want[6] = { 1, 1, 0, 0, 0, 0 };
	struct hb_rng rng;

	(void)state;
	hb_rng_seed(&rng, 1, 0);
	assert_int_equal(hb_pollux_repair(&pb, a, &rng, NULL), 0);
	assert_memory_equal(a, want, sizeof(a));
}

/* ---- GA core: brute force ------------------------------------------------------ */

/* Speedups from Pollux's goodput model: two jobs with different scaling. */
struct gp_ctx {
	struct hb_goodput_params p[2];
	struct hb_grad_params g[2];
	struct hb_goodput_limits l[2];
	double base[2];
};

static int gp_speedup(void *ctx, int j, const int *row, double *out, struct hb_error *err)
{
	struct gp_ctx *c = ctx;
	struct hb_goodput_config cfg;
	int N = (row[0] > 0) + (row[1] > 0), K = row[0] + row[1];

	*out = 0.0;
	if (K == 0)
		return 0;
	if (hb_goodput_argmax(&c->p[j], &c->g[j], &c->l[j], N, K, &cfg, err) < 0)
		return -1;
	*out = cfg.goodput / c->base[j];
	return 0;
}

static void gp_ctx_init(struct gp_ctx *c, struct hb_error *err)
{
	/* Job 0 scales well (cheap sync), job 1 poorly across nodes. */
	const struct hb_goodput_params p0 = { 0.05, 0.002, 0.02, 0.002, 0.005, 0.0005, 1.5 };
	const struct hb_goodput_params p1 = { 0.02, 0.0005, 0.4, 0.05, 0.01, 0.002, 1.2 };
	struct hb_goodput_config cfg;

	c->p[0] = p0;
	c->p[1] = p1;
	c->g[0] = hb_grad_params_from_phi(2000.0, 128);
	c->g[1] = hb_grad_params_from_phi(300.0, 64);
	hb_goodput_limits_default(&c->l[0], 4096, 32, 512);
	hb_goodput_limits_default(&c->l[1], 2048, 16, 256);
	for (int j = 0; j < 2; j++) {
		if (hb_goodput_argmax(&c->p[j], &c->g[j], &c->l[j], 1, 4, &cfg, err) < 0)
			fail_msg("%s", err->msg);
		c->base[j] = cfg.goodput; /* fair share: 8 GPUs / 2 jobs on one node */
	}
}

static void brute_force(const struct hb_pollux_problem *pb, int *best, double *best_fit)
{
	int a[4];
	struct hb_error err = { 0 };

	*best_fit = -1.0;
	for (int code = 0; code < 625; code++) {
		double fit, util;

		for (int k = 0, c = code; k < 4; k++, c /= 5)
			a[k] = c % 5;
		if (!hb_pollux_feasible(pb, a))
			continue;
		if (hb_pollux_evaluate(pb, a, &fit, &util, &err) < 0)
			fail_msg("%s", err.msg);
		if (fit > *best_fit) {
			*best_fit = fit;
			memcpy(best, a, sizeof(a));
		}
	}
}

static void test_ga_matches_brute_force(void **state)
{
	struct gp_ctx c;
	struct hb_error err = { 0 };
	int cap[2] = { 4, 4 };
	/* Cases: current allocation, exploration caps and factors. */
	const struct {
		int base[4], maxr[2];
		double factor[2];
	} cases[] = {
		{ { 0, 0, 0, 0 }, { 8, 8 }, { 0.7, 0.7 } },   /* both pending */
		{ { 4, 0, 0, 0 }, { 8, 8 }, { 0.9, 0.5 } },   /* job 0 on node 0 */
		{ { 2, 2, 0, 0 }, { 8, 4 }, { 0.3, 0.9 } },   /* job 0 distributed, job 1 capped at 4 */
		{ { 1, 0, 0, 1 }, { 2, 8 }, { 1.0, 1.0 } },   /* no penalty, job 0 capped at 2 */
		{ { 0, 4, 4, 0 }, { 8, 8 }, { 0.05, 0.05 } }, /* heavy penalty: stay */
	};

	(void)state;
	gp_ctx_init(&c, &err);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct hb_pollux_problem pb = { 2, 2, cap, cases[k].base, cases[k].maxr, cases[k].factor,
							-1.0, 1e-3, 2.0 / 8.0, 16, gp_speedup, &c, NULL, NULL };
			struct hb_pollux_result res;
			struct hb_rng rng;
			int want[4], ties = 0;
			double want_fit;

			brute_force(&pb, want, &want_fit);
			hb_rng_seed(&rng, seed, 6);
			if (hb_pollux_search(&pb, NULL, 0, NULL, &rng, &res, &err) < 0)
				fail_msg("%s", err.msg);
			assert_true(hb_pollux_feasible(&pb, res.best));
			assert_true(res.nfront >= 1);
			if (fabs(res.fitness - want_fit) > 1e-12 * want_fit)
				fail_msg("case %zu seed %llu: GA fitness %.15g, brute force %.15g", k,
					 (unsigned long long)seed, res.fitness, want_fit);
			/* The same matrix unless another one ties. */
			for (int code = 0; code < 625; code++) {
				int a[4];
				double fit, util;

				for (int i = 0, cc = code; i < 4; i++, cc /= 5)
					a[i] = cc % 5;
				if (hb_pollux_feasible(&pb, a) && hb_pollux_evaluate(&pb, a, &fit, &util, &err) == 0 &&
				    fit == want_fit)
					ties++;
			}
			if (ties == 1)
				assert_memory_equal(res.best, want, sizeof(want));
			hb_pollux_result_free(&res);
		}
}

/* The search stops once its best FITNESS has not improved for
 * stale_generations generations: fewer evaluations than the artifact's 100
 * generations on a problem it solves early, the same answer (brute force). */
static void test_ga_stops_when_stale(void **state)
{
	struct gp_ctx c;
	struct hb_error err = { 0 };
	int cap[2] = { 4, 4 }, base[4] = { 0, 0, 0, 0 }, maxr[2] = { 8, 8 }, want[4];
	double factor[2] = { 0.7, 0.7 }, want_fit;
	struct hb_pollux_problem pb = { 2, 2, cap, base, maxr, factor, -1.0, 1e-3, 2.0 / 8.0, 16, gp_speedup, &c, NULL, NULL };
	struct hb_pollux_ga_opts all, stale;
	struct hb_pollux_result ra, rs;
	struct hb_rng rng;

	(void)state;
	gp_ctx_init(&c, &err);
	brute_force(&pb, want, &want_fit);
	hb_pollux_ga_opts_default(&all);
	all.stale_generations = 0;
	hb_pollux_ga_opts_default(&stale);
	assert_true(stale.stale_generations > 0);
	hb_rng_seed(&rng, 3, 6);
	if (hb_pollux_search(&pb, NULL, 0, &all, &rng, &ra, &err) < 0)
		fail_msg("%s", err.msg);
	hb_rng_seed(&rng, 3, 6);
	if (hb_pollux_search(&pb, NULL, 0, &stale, &rng, &rs, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(fabs(ra.fitness - want_fit) <= 1e-12 * want_fit);
	assert_true(fabs(rs.fitness - want_fit) <= 1e-12 * want_fit);
	assert_true(rs.evaluations < ra.evaluations);
	print_message("      2 jobs x 2 nodes: %ld evaluations for all generations, %ld stopping when stale\n",
		      ra.evaluations, rs.evaluations);
	hb_pollux_result_free(&ra);
	hb_pollux_result_free(&rs);
}

/* Mutation step 3 draws the gaps between raised cells where the job does
 * not run (geometric) instead of a coin per cell: each such cell is still
 * raised with p1 = 1 / J (the artifact normalises over the jobs) by a
 * uniform 0..capacity, so its mean increment is p1 capacity / 2, the same
 * for every cell and every job. */
static void test_mutation_raise_rates(void **state)
{
	enum { J = 4, N = 40, TRIALS = 20000, CAP = 4 };
	int cap[N], base[J * N] = { 0 }, maxr[J] = { 1000, 1000, 1000, 1000 }, a[J * N], cells = 0;
	double factor[J] = { 1.0, 1.0, 1.0, 1.0 }, sum[J * N] = { 0 }, total = 0.0, want = (1.0 / J) * CAP / 2.0;
	struct toy t = { { 0 } };
	struct hb_pollux_problem pb = { J, N, cap, base, maxr, factor, -1.0, 1e-3, 0.25, 16, toy_speedup, &t, NULL, NULL };
	struct hb_rng rng;

	(void)state;
	for (int n = 0; n < N; n++)
		cap[n] = CAP;
	base[0] = base[1] = 2; /* job 0 runs on nodes 0 and 1: every node has a free GPU */
	hb_rng_seed(&rng, 11, 6);
	for (int k = 0; k < TRIALS; k++) {
		memcpy(a, base, sizeof(a));
		assert_int_equal(hb_pollux_mutate(&pb, a, NULL, &rng, NULL), 0);
		for (int c = 0; c < J * N; c++)
			sum[c] += a[c];
	}
	for (int c = 0; c < J * N; c++) {
		double m = sum[c] / TRIALS;

		if (base[c] > 0)
			continue;
		/* One cell: sd of the mean sqrt((p1 6 - want^2) / TRIALS) = 0.0079; 5.7 sd. */
		if (fabs(m - want) > 0.045)
			fail_msg("job %d node %d: mean increment %.4f, want %.4f", c / N, c % N, m, want);
		total += m;
		cells++;
	}
	total /= cells;
	/* All 158 cells: sd 0.00063; 8 sd. */
	if (fabs(total - want) > 0.005)
		fail_msg("mean increment over the free cells %.5f, want %.5f", total, want);
}

/* Beyond 16 nodes (bounded_raises) a free cell is raised with 1 / max(J,
 * nodes with a free GPU): here 1 / 40, a mean increment of 0.05. */
static void test_mutation_bounded_raises(void **state)
{
	enum { J = 4, N = 40, TRIALS = 20000, CAP = 4 };
	int cap[N], base[J * N] = { 0 }, maxr[J] = { 1000, 1000, 1000, 1000 }, a[J * N], cells = 0;
	double factor[J] = { 1.0, 1.0, 1.0, 1.0 }, total = 0.0, want = (1.0 / N) * CAP / 2.0;
	struct toy t = { { 0 } };
	struct hb_pollux_problem pb = { J, N, cap, base, maxr, factor, -1.0, 1e-3, 0.25, 16, toy_speedup, &t, NULL, NULL };
	struct hb_pollux_ga_opts o;
	struct hb_rng rng;

	(void)state;
	hb_pollux_ga_opts_default(&o);
	assert_int_equal(o.bounded_raises, 0);
	assert_int_equal(hb_pollux_bounded_raises(16), 0);
	assert_int_equal(hb_pollux_bounded_raises(17), 1);
	o.bounded_raises = 1;
	for (int n = 0; n < N; n++)
		cap[n] = CAP;
	base[0] = base[1] = 2;
	hb_rng_seed(&rng, 12, 6);
	for (int k = 0; k < TRIALS; k++) {
		memcpy(a, base, sizeof(a));
		assert_int_equal(hb_pollux_mutate(&pb, a, &o, &rng, NULL), 0);
		for (int c = 0; c < J * N; c++)
			if (base[c] == 0) {
				total += a[c];
				cells++;
			}
	}
	total /= cells;
	/* 158 cells: sd of the mean sqrt((6 / 40 - want^2) / (158 x 20000)) = 0.00022; 9 sd. */
	if (fabs(total - want) > 0.002)
		fail_msg("bounded: mean increment over the free cells %.5f, want %.5f", total, want);
}

/* ---- GA core: the re-allocation penalty ---------------------------------------- */

/* One job on one 8-GPU node: speedup 1 + gain (K - 4) / 4 from 4 GPUs on. */
struct lin {
	double gain;
};

static int lin_speedup(void *ctx, int j, const int *row, double *out, struct hb_error *err)
{
	const struct lin *l = ctx;

	(void)j;
	(void)err;
	*out = row[0] == 0 ? 0.0 : 1.0 + l->gain * (row[0] - 4) / 4.0;
	return 0;
}

static int best_gpus(double gain, double factor, uint64_t seed)
{
	struct lin l = { gain };
	int cap[1] = { 8 }, base[1] = { 4 }, maxr[1] = { 8 }, k;
	struct hb_pollux_problem pb = { 1, 1, cap, base, maxr, &factor, -1.0, 1e-3, 1.0 / 8.0, 16, lin_speedup, &l, NULL, NULL };
	struct hb_pollux_result res;
	struct hb_rng rng;
	struct hb_error err = { 0 };

	hb_rng_seed(&rng, seed, 6);
	if (hb_pollux_search(&pb, NULL, 0, NULL, &rng, &res, &err) < 0)
		fail_msg("%s", err.msg);
	k = res.best[0];
	hb_pollux_result_free(&res);
	return k;
}

static void test_restart_penalty(void **state)
{
	/* A 10-minute-old job restarted 3 times: factor 510/630 = 0.81. */
	double f = hb_goodput_restart_factor(600.0, 3, 30.0);

	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		/* +4 % from doubling the GPUs: not worth a restart... */
		assert_int_equal(best_gpus(0.04, f, seed), 4);
		/* ...unless restarts were free, */
		assert_int_equal(best_gpus(0.04, 1.0, seed), 8);
		/* and a large gain is worth it despite the penalty. */
		assert_int_equal(best_gpus(1.0, f, seed), 8);
	}
}

/* ---- simulations ----------------------------------------------------------------- */

/* Threads of the simulations sim_open makes (the pool the search runs on). */
static int open_threads = 1;

static void sim_open(struct hb_sim *sim, const char *cluster, const char *policy, uint64_t seed)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	const struct hb_cluster *cl = hb_catalog_cluster(&cat, cluster);

	assert_non_null(cl);
	hb_sim_opts_default(&o);
	o.seed = seed;
	o.quiet = 1;
	o.threads = open_threads;
	o.restart_const_s = 30.0; /* the artifact's re-allocation delay (pollux.md §4.3) */
	if (hb_sim_init(sim, &cat, cl, db, policy, &o, &err) < 0)
		fail_msg("%s", err.msg);
}

static int add_job(struct hb_sim *sim, const char *model, const struct hb_agent_ops *agent, double t, int gpus,
		   long batch)
{
	struct hb_error err = { 0 };
	int id;

	if (hb_sim_add_job(sim, hb_catalog_model(&cat, model), agent, t, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim->jobs[id], gpus, batch);
	return id;
}

/* The 6-job trace: (model, arrival s, GPUs and batch a user would ask for). */
static const struct {
	const char *model;
	double t;
	int gpus;
	long batch;
} trace6[] = {
	{ "cifar10", 0.0, 1, 128 },     { "bert", 30.0, 2, 24 },      { "deepspeech2", 200.0, 4, 80 },
	{ "cifar10", 500.0, 2, 256 },   { "yolov3", 700.0, 4, 32 },   { "ncf", 900.0, 1, 256 },
};

static void check_grants(const struct hb_sim *sim)
{
	int N = sim->cl->nnodes;

	for (int n = 0; n < N; n++) {
		int used = 0, distributed = 0;

		for (int j = 0; j < sim->njobs; j++) {
			const struct hb_sim_job *job = &sim->jobs[j];
			int nodes = 0;

			if (job->state == HB_JOB_DONE)
				continue;
			for (int k = 0; k < N; k++)
				nodes += job->grant[k] > 0;
			used += job->grant[n];
			if (job->grant[n] > 0 && nodes > 1)
				distributed++;
		}
		assert_true(used <= sim->cl->nodes[n].ngpus);
		assert_int_equal(used + sim->free_gpus[n], sim->cl->nodes[n].ngpus);
		assert_true(distributed <= 1);
	}
}

/* Pollux with the invariants checked after each of its rounds. */
static int rounds_checked;
static struct hb_arbiter_ops checked_ops;
static int node_used[64]; /* per node: granted GPUs at the end of some round */

static int checked_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	if (hb_arbiter_pollux.on_round(sim, state, err) < 0)
		return -1;
	check_grants(sim);
	for (int j = 0; j < sim->njobs; j++)
		for (int n = 0; n < sim->cl->nnodes && n < 64; n++)
			node_used[n] |= sim->jobs[j].grant && sim->jobs[j].grant[n] > 0;
	rounds_checked++;
	return 0;
}

static double run_trace_on(const char *cluster, const char *policy, uint64_t seed, struct hb_sim *sim)
{
	const struct hb_policy *pol = hb_policy_find(policy);
	struct hb_error err = { 0 };
	double jct = 0.0;
	size_t n = sizeof(trace6) / sizeof(trace6[0]);

	assert_non_null(pol);
	assert_non_null(pol->shared);
	sim_open(sim, cluster, policy, seed);
	if (pol->shared == &hb_arbiter_pollux) {
		checked_ops = hb_arbiter_pollux;
		checked_ops.on_round = checked_round;
		hb_sim_set_arbiter(sim, &checked_ops);
	} else {
		hb_sim_set_arbiter(sim, pol->shared);
	}
	for (size_t k = 0; k < n; k++)
		add_job(sim, trace6[k].model, pol->agent, trace6[k].t, trace6[k].gpus, trace6[k].batch);
	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s: %s", policy, err.msg);
	for (size_t k = 0; k < n; k++) {
		assert_int_equal(sim->jobs[k].state, HB_JOB_DONE);
		jct += sim->jobs[k].finish_s - sim->jobs[k].arrival_s;
	}
	return jct / (double)n;
}

static double run_trace(const char *policy, uint64_t seed, struct hb_sim *sim)
{
	return run_trace_on("jabas-quickstart", policy, seed, sim);
}

/* On a cluster of 16 identical nodes the search covers the nodes in use and
 * as many free ones as the jobs could spread over (arbiter_pollux.c,
 * "Searched nodes"): every round still meets every constraint of the whole
 * cluster, runs are deterministic, and jobs spread beyond the first nodes
 * (the warm start moves front members onto the searched free nodes). */
static void test_trace_few_searched_nodes(void **state)
{
	struct hb_sim a, b;
	int nused = 0;

	(void)state;
	rounds_checked = 0;
	memset(node_used, 0, sizeof(node_used));
	double jct_a = run_trace_on("pollux-t4", "pollux", 5, &a);
	/* the second on 3 threads: the search's pool changes nothing */
	open_threads = 3;
	double jct_b = run_trace_on("pollux-t4", "pollux", 5, &b);
	open_threads = 1;

	assert_true(rounds_checked > 10);
	assert_true(jct_a == jct_b);
	assert_int_equal(a.nevents, b.nevents);
	for (size_t k = 0; k < a.nevents; k++) {
		assert_true(a.events[k].t == b.events[k].t);
		assert_string_equal(a.events[k].detail, b.events[k].detail);
	}
	for (int n = 0; n < 16; n++)
		nused += node_used[n];
	assert_true(nused > 2);
	print_message("      6-job trace on pollux-t4, seed 5: mean JCT %.0f s, %d of 16 nodes used\n", jct_a, nused);
	hb_sim_free(&a);
	hb_sim_free(&b);
}

static void test_trace_deterministic(void **state)
{
	struct hb_sim a, b, f;
	double jct_a, jct_b, jct_f;
	int restarts = 0, multi = 0;

	(void)state;
	rounds_checked = 0;
	jct_a = run_trace("pollux", 7, &a);
	assert_true(rounds_checked > 10);
	open_threads = 2; /* the search and the refits made ahead on a pool: the same run */
	jct_b = run_trace("pollux", 7, &b);
	open_threads = 1;
	{
		long ahead = 0;

		for (int j = 0; j < b.njobs; j++) {
			struct hb_pollux_report r;
			struct hb_error err = { 0 };

			assert_int_equal(hb_pollux_agent_report(&b, &b.jobs[j], &r, &err), 0);
			ahead += r.fits_ahead;
		}
		print_message("      refits made ahead on 2 threads: %ld\n", ahead);
		assert_true(ahead > 0);
	}
	assert_true(jct_a == jct_b);
	assert_int_equal(a.nevents, b.nevents);
	assert_int_equal(a.nsamples, b.nsamples);
	for (size_t k = 0; k < a.nevents; k++) {
		assert_true(a.events[k].t == b.events[k].t);
		assert_int_equal(a.events[k].job, b.events[k].job);
		assert_string_equal(a.events[k].kind, b.events[k].kind);
		assert_string_equal(a.events[k].detail, b.events[k].detail);
	}
	assert_memory_equal(a.samples, b.samples, a.nsamples * sizeof(*a.samples));
	for (int j = 0; j < a.njobs; j++) {
		assert_true(a.jobs[j].finish_s == b.jobs[j].finish_s);
		assert_true(a.jobs[j].cost_usd == b.jobs[j].cost_usd);
		restarts += a.jobs[j].restarts;
		/* Every job started within two rounds of its arrival (A5's bias). */
		assert_true(a.jobs[j].start_s - a.jobs[j].arrival_s <= 120.0 + 1e-9);
	}
	for (size_t k = 0; k < a.nsamples; k++)
		multi += a.samples[k].ngpus > 1;
	/* Pollux re-allocates (exploration grows jobs beyond 1 GPU). */
	assert_true(restarts > 0);
	assert_true(multi > 0);
	jct_f = run_trace("fifo", 7, &f);
	print_message("      6-job trace on jabas-quickstart, seed 7: mean JCT pollux %.0f s, fifo %.0f s "
		      "(%d pollux rounds checked, %d restarts)\n",
		      jct_a, jct_f, rounds_checked / 2, restarts);
	hb_sim_free(&a);
	hb_sim_free(&b);
	hb_sim_free(&f);
}

/* ---- the agent across grants ---------------------------------------------------- */

struct script {
	int step;
	struct hb_pollux_report rep[4];
	const void *state_ptr[4];
	long restarts[4];
};

static struct script script;

static int script_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int one[2] = { 1, 0 }; /* 1 V100 */

	(void)state;
	return hb_sim_start_job(sim, job, one, err);
}

static double script_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return 600.0;
}

static int script_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	static const int grants[3][2] = { { 4, 0 }, { 0, 2 }, { 4, 4 } };
	struct hb_sim_job *job = &sim->jobs[0];
	int k = script.step;

	(void)state;
	if (job->state == HB_JOB_DONE || k >= 4)
		return 0;
	if (hb_pollux_agent_report(sim, job, &script.rep[k], err) < 0)
		return -1;
	script.state_ptr[k] = job->agent_state;
	script.restarts[k] = job->restarts;
	script.step++;
	return k < 3 ? hb_sim_regrant(sim, job, grants[k], err) : 0;
}

static const struct hb_arbiter_ops script_arbiter = {
	.name = "script", .summary = "test", .on_arrival = script_arrival,
	.round_s = script_round_s, .on_round = script_round,
};

/* One ImageNet job under the Pollux agent on jabas-quickstart (seed 3),
 * scheduled by the scripted arbiter (script reset): the setup of the tests
 * that read the agent's reports. */
static void scripted_imagenet(struct hb_sim *sim)
{
	memset(&script, 0, sizeof(script));
	sim_open(sim, "jabas-quickstart", "pollux", 3);
	hb_sim_set_arbiter(sim, &script_arbiter);
	add_job(sim, "imagenet", &hb_agent_pollux, 0.0, 0, 0);
}

static void test_agent_keeps_history_across_grants(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	const struct hb_sim_job *job;
	int regrant_restarts = 0;

	(void)state;
	scripted_imagenet(&sim);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	job = &sim.jobs[0];
	assert_int_equal(job->state, HB_JOB_DONE);
	assert_int_equal(script.step, 4);
	/* Round 1, on 1 V100: one configuration seen and fitted. */
	assert_true(script.rep[0].fitted);
	assert_int_equal(script.rep[0].max_replicas_seen, 1);
	/* The state (history, fit) is the same object after every grant change,
	 * and it only grows: 4 V100, then 2 P100 were added to it. */
	for (int k = 1; k < 4; k++) {
		const struct hb_pollux_report *a = &script.rep[k - 1], *b = &script.rep[k];

		assert_ptr_equal(script.state_ptr[k], script.state_ptr[0]);
		assert_true(b->fitted);
		assert_true(b->nobs > a->nobs);
		/* Every growth of the history was either fitted or skipped
		 * because theta predicted it; a skipped refit keeps theta bit
		 * for bit (what PolluxSched's skipped rounds rely on). */
		assert_true(b->fits + b->refits_skipped > a->fits + a->refits_skipped);
		assert_true(b->fits + b->refits_skipped <= (long)b->nobs);
		if (b->fits == a->fits)
			assert_memory_equal(&b->theta, &a->theta, sizeof(b->theta));
	}
	/* 1 -> 4 GPUs: the fit of one GPU has no sync time (the local pair is
	 * pinned at ~0 by the prior), so the first multi-GPU observation lies
	 * outside the skip tolerance and is refitted. */
	assert_true(script.rep[1].fits > script.rep[0].fits);
	print_message("      fits %ld, refits skipped %ld over %zu observations\n", script.rep[3].fits,
		      script.rep[3].refits_skipped, script.rep[3].nobs);
	assert_int_equal(script.rep[1].max_replicas_seen, 4);
	assert_int_equal(script.rep[2].max_replicas_seen, 4); /* 2 P100 added */
	assert_int_equal(script.rep[3].max_replicas_seen, 8); /* 4 + 4 added */
	/* Each grant change is one restart, re-planned by on_grant with the fit. */
	for (size_t k = 0; k < sim.nevents; k++)
		if (strcmp(sim.events[k].kind, "restart") == 0) {
			assert_non_null(strstr(sim.events[k].detail, "new grant of"));
			regrant_restarts++;
		}
	assert_int_equal(regrant_restarts, 3);
	assert_int_equal(job->restarts, 3);
	assert_int_equal(job->ngrant, 8);
	assert_int_equal(job->cfg.ngpus, 8);
	assert_true(job->cfg.global_bs >= job->min_gbs && job->cfg.global_bs <= job->max_gbs);
	hb_sim_free(&sim);
}

/* The refit skip's test (agent_pollux.c, "Fit cadence"): an observation
 * predicted within the tolerance in T_iter and, when measured, T_grad keeps
 * theta; one outside it in either refits.  The tolerance is the agent's,
 * 2 sigma = 0.04 of the 2 % log-normal noise. */
static void test_refit_skip_rule(void **state)
{
	const struct hb_goodput_params th = {
		.alpha_c = 0.03, .beta_c = 0.004, .alpha_n = 0.2, .beta_n = 0.015,
		.alpha_r = 0.05, .beta_r = 0.01, .gamma = 2.0,
	};
	static const int cfg[][4] = { { 1, 1, 32, 0 }, { 1, 4, 64, 0 }, { 2, 8, 16, 2 }, { 4, 16, 128, 1 } };
	const double tol = 0.04;

	(void)state;
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		int N = cfg[i][0], K = cfg[i][1], m = cfg[i][2], s = cfg[i][3];
		double t = hb_goodput_iter_time(&th, N, K, m, s), c = hb_goodput_compute_time(&th, m);

		/* Within: exact, and just inside on either side. */
		assert_true(hb_pollux_obs_predicted(&th, N, K, m, s, t, c, tol));
		assert_true(hb_pollux_obs_predicted(&th, N, K, m, s, t * exp(0.039), c * exp(-0.039), tol));
		assert_true(hb_pollux_obs_predicted(&th, N, K, m, s, t * exp(-0.039), c * exp(0.039), tol));
		/* Outside in T_iter, or in T_grad alone. */
		assert_false(hb_pollux_obs_predicted(&th, N, K, m, s, t * exp(0.041), c, tol));
		assert_false(hb_pollux_obs_predicted(&th, N, K, m, s, t * exp(-0.041), c, tol));
		assert_false(hb_pollux_obs_predicted(&th, N, K, m, s, t, c * exp(0.041), tol));
		assert_false(hb_pollux_obs_predicted(&th, N, K, m, s, t, c * exp(-0.041), tol));
		/* An unmeasured T_grad (0) is not judged. */
		assert_true(hb_pollux_obs_predicted(&th, N, K, m, s, t, 0.0, tol));
		assert_false(hb_pollux_obs_predicted(&th, N, K, m, s, t * 1.05, 0.0, tol));
	}
}

/* The report on a heterogeneous cluster: P100 is the reference (slower) type,
 * V100 computes faster, an allocation with both is paced by the P100. */
static void test_report_types(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	struct hb_pollux_report rep;
	int both[2] = { 4, 4 }, v100[2] = { 4, 0 }, p100[2] = { 0, 4 }, tv, tp;
	struct hb_goodput_config cv, cp;

	(void)state;
	scripted_imagenet(&sim);
	if (hb_pollux_agent_report(&sim, &sim.jobs[0], &rep, &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(rep.fitted); /* not started */
	assert_int_equal(rep.ntypes, 2);
	tv = hb_pollux_slowest_type(&rep, sim.jobs[0].perf, v100);
	tp = hb_pollux_slowest_type(&rep, sim.jobs[0].perf, p100);
	assert_true(tv >= 0 && tp >= 0 && tv != tp);
	assert_int_equal(rep.ref_type, tp);
	assert_true(rep.types[tp].compute_scale == 1.0);
	assert_true(rep.types[tv].compute_scale > 0.0 && rep.types[tv].compute_scale < 1.0);
	assert_int_equal(hb_pollux_slowest_type(&rep, sim.jobs[0].perf, both), tp);
	/* Run it to the first round to have a fit, then compare the two types. */
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	rep = script.rep[0];
	assert_true(rep.fitted);
	if (hb_pollux_report_argmax(&rep, tv, 1, 4, &cv, &err) < 0 ||
	    hb_pollux_report_argmax(&rep, tp, 1, 4, &cp, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(cv.feasible && cp.feasible);
	assert_true(cv.goodput > cp.goodput);
	hb_sim_free(&sim);
}

/* The fair-share baseline skips every K with K min_local > maxB_G without
 * asking (round_job_init): each such K must be infeasible on the reference
 * type, on one node or two, and the K just below the bound must not be
 * skipped for a wrong reason (some K <= the bound is feasible). */
static void test_fair_share_skip_is_infeasible(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	struct hb_pollux_report rep;
	long ml, bound;
	int any = 0;

	(void)state;
	scripted_imagenet(&sim);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	rep = script.rep[0];
	assert_true(rep.fitted);
	ml = rep.types[rep.ref_type].min_local_bsz;
	assert_true(ml > 0);
	bound = rep.limits.max_bsz / ml;
	assert_true(bound >= 1);
	for (int k = 1; k <= bound + 64; k++)
		for (int n = 1; n <= 2 && n <= k; n++) {
			struct hb_goodput_config c;

			if (hb_pollux_report_argmax(&rep, rep.ref_type, n, k, &c, &err) < 0)
				fail_msg("%s", err.msg);
			if (k > bound)
				assert_false(c.feasible);
			else
				any |= c.feasible;
		}
	assert_true(any);
	hb_sim_free(&sim);
}

/* The arbiter refuses jobs whose agent reports no goodput function. */
static void test_needs_pollux_agent(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	sim_open(&sim, "jabas-quickstart", "pollux", 1);
	hb_sim_set_arbiter(&sim, &hb_arbiter_pollux);
	add_job(&sim, "cifar10", &hb_agent_static, 0.0, 1, 128);
	assert_int_equal(hb_sim_run(&sim, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "needs the pollux agent"));
	hb_sim_free(&sim);
}

/* ---- capacity that comes and goes (sim --capacity) ----------------------------- */

/* Every GPU held by one job, free or withdrawn; nothing held beyond what is
 * online; at most one multi-node job per node. */
static int cap_checks;

static void check_online_grants(const struct hb_sim *sim)
{
	for (int n = 0; n < sim->cl->nnodes; n++) {
		int used = 0;

		for (int j = 0; j < sim->njobs; j++)
			if (sim->jobs[j].state == HB_JOB_RUNNING || sim->jobs[j].state == HB_JOB_RESTARTING)
				used += sim->jobs[j].grant[n];
		assert_true(used <= hb_sim_node_online(sim, n));
		assert_int_equal(used + sim->free_gpus[n] + sim->capacity->offline[n], sim->cl->nodes[n].ngpus);
	}
	cap_checks++;
}

static int cap_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	if (hb_arbiter_pollux.on_round(sim, state, err) < 0)
		return -1;
	check_online_grants(sim);
	return 0;
}

static int cap_capacity(struct hb_sim *sim, void *state, struct hb_error *err)
{
	if (hb_arbiter_pollux.on_capacity(sim, state, err) < 0)
		return -1;
	check_online_grants(sim);
	return 0;
}

static void run_capacity(const char *path, struct hb_sim *sim)
{
	static struct hb_arbiter_ops ops;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	size_t n = sizeof(trace6) / sizeof(trace6[0]);

	hb_sim_opts_default(&o);
	o.seed = 3;
	o.quiet = 1;
	o.restart_const_s = 30.0;
	o.capacity = path;
	if (hb_sim_init(sim, &cat, hb_catalog_cluster(&cat, "pollux-t4"), db, "pollux", &o, &err) < 0)
		fail_msg("%s", err.msg);
	ops = hb_arbiter_pollux;
	ops.on_round = cap_round;
	ops.on_capacity = cap_capacity;
	hb_sim_set_arbiter(sim, &ops);
	for (size_t k = 0; k < n; k++)
		add_job(sim, trace6[k].model, &hb_agent_pollux, trace6[k].t, trace6[k].gpus, trace6[k].batch);
	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The 6-job trace on pollux-t4 (16 x 4 T4) with all but 3 GPUs withdrawn
 * at 900 s and all back at 4000 s: PolluxSched (which used to refuse
 * --capacity) never holds a withdrawn GPU, jobs on the revoked nodes shrink
 * or are preempted, every job finishes, and the run is deterministic. */
static void test_capacity_withdrawal(void **state)
{
	struct hb_sim a, b;
	char path[256];
	FILE *f;
	int held_at_revoke = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/hb-pollux-cap-%d.csv", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("time_s,gpu,available\n900,t4,3\n4000,t4,64\n", f);
	fclose(f);
	cap_checks = 0;
	run_capacity(path, &a);
	run_capacity(path, &b);
	remove(path);
	assert_true(cap_checks > 10);
	assert_int_equal(a.capacity->withdrawn_gpus, 61);
	for (size_t k = 0; k < a.nevents; k++)
		held_at_revoke += a.events[k].t == 900.0 && (strcmp(a.events[k].kind, "shrink") == 0 ||
							     strcmp(a.events[k].kind, "revoke") == 0);
	/* The withdrawal reached busy GPUs: each job it touched shrank or was
	 * preempted, and the counters say so. */
	assert_true(held_at_revoke >= 1);
	assert_int_equal(held_at_revoke, a.capacity->shrinks + a.capacity->preemptions);
	for (int j = 0; j < a.njobs; j++)
		assert_int_equal(a.jobs[j].state, HB_JOB_DONE);
	assert_int_equal(a.nevents, b.nevents);
	for (size_t k = 0; k < a.nevents; k++) {
		assert_true(a.events[k].t == b.events[k].t);
		assert_string_equal(a.events[k].detail, b.events[k].detail);
	}
	print_message("      6-job trace on pollux-t4 with 3 GPUs left at 900 s: %ld shrunk, %ld preempted\n",
		      a.capacity->shrinks, a.capacity->preemptions);
	hb_sim_free(&a);
	hb_sim_free(&b);

	/* None left: no column to search (the rounds wait, they used to fail
	 * with "0 nodes"); every running job is preempted, none shrinks. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("time_s,gpu,available\n900,t4,0\n4000,t4,64\n", f);
	fclose(f);
	run_capacity(path, &a);
	remove(path);
	assert_int_equal(a.capacity->withdrawn_gpus, 64);
	assert_int_equal(a.capacity->shrinks, 0);
	assert_true(a.capacity->preemptions >= 1);
	for (int j = 0; j < a.njobs; j++) {
		assert_int_equal(a.jobs[j].state, HB_JOB_DONE);
		assert_true(a.jobs[j].finish_s > 4000.0 || a.jobs[j].finish_s < 900.0);
	}
	hb_sim_free(&a);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	/* Short jobs: the trace is about scheduling, not long training. */
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

/* The search-work cap (issue 37): on a cluster of at most 16 nodes, the
 * artifact's, a search may do the artifact's whole 100 x 100 evaluations of
 * J x N cells; larger clusters keep the 2e6-cell cap; "no limit" stays. */
static void test_search_cells_scale(void **state)
{
	struct hb_pollux_ga_opts o;

	(void)state;
	hb_pollux_ga_opts_default(&o);
	/* Pollux's cluster: 12 jobs fit under the cap, 60 get the whole search */
	assert_true(hb_pollux_search_cells(16, 12, 16, &o) == o.max_cell_evals);
	assert_true(hb_pollux_search_cells(16, 60, 16, &o) == 100.0 * 100 * 60 * 16);
	/* a Philly-size cluster keeps the cap whatever the round's columns */
	assert_true(hb_pollux_search_cells(552, 60, 16, &o) == o.max_cell_evals);
	assert_true(hb_pollux_search_cells(552, 100, 384, &o) == o.max_cell_evals);
	/* the whole search scales with the settings */
	o.generations = 10;
	assert_true(hb_pollux_search_cells(8, 60, 8, &o) == o.max_cell_evals);
	assert_true(hb_pollux_search_cells(8, 600, 8, &o) == 100.0 * 10 * 600 * 8);
	o.max_cell_evals = 0;
	assert_true(hb_pollux_search_cells(16, 60, 16, &o) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search_cells_scale),
		cmocka_unit_test(test_fitness_by_hand),
		cmocka_unit_test(test_fitness_matches_goodput_h),
		cmocka_unit_test(test_repair_always_feasible),
		cmocka_unit_test(test_sparse_operators_match_dense),
		cmocka_unit_test(test_sparse_operators_match_dense_wide),
		cmocka_unit_test(test_search_sparse_callback_and_budget),
		cmocka_unit_test(test_search_pool_identity),
		cmocka_unit_test(test_repair_interference_order),
		cmocka_unit_test(test_ga_matches_brute_force),
		cmocka_unit_test(test_ga_stops_when_stale),
		cmocka_unit_test(test_mutation_raise_rates),
		cmocka_unit_test(test_mutation_bounded_raises),
		cmocka_unit_test(test_restart_penalty),
		cmocka_unit_test(test_report_types),
		cmocka_unit_test(test_agent_keeps_history_across_grants),
		cmocka_unit_test(test_refit_skip_rule),
		cmocka_unit_test(test_fair_share_skip_is_infeasible),
		cmocka_unit_test(test_needs_pollux_agent),
		cmocka_unit_test(test_trace_deterministic),
		cmocka_unit_test(test_capacity_withdrawal),
		cmocka_unit_test(test_trace_few_searched_nodes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
