/*
 * pollux_ga.c: PolluxSched's search (Pollux, OSDI '21, §3.2; the
 * artifact's simulator/pollux.py, osdi21-artifact branch): NSGA-II over
 * J x N allocation matrices, population 100 for 100 generations, two
 * objectives (FITNESS, and the cluster utility that only shapes the
 * search), single-point crossover over jobs, the three-step mutation, the
 * four-step repair, and the first-front member of best FITNESS as the
 * answer.  pollux_ga.h is the contract; this file knows nothing of the
 * simulator: sim/policies/pollux/arbiter_pollux.c fills a struct
 * hb_pollux_problem each round.
 *
 * Sections: the search settings; sparse genomes and their operators, which
 * draw exactly the random numbers of the artifact's dense ones; NSGA-II
 * (evaluation on the pool, non-dominated sorting by one sweep, crowding,
 * mating on the pool in a fixed order).  Same rng state, same bits, for
 * any thread count.
 *
 * Where it departs from the artifact's letter (docs/policies/pollux.md
 * has why, and what each measured): the search ends after 5 x (J + 1)
 * generations without a better FITNESS, and a generation's matings after
 * 3 rounds in a row without a new matrix; on clusters of more than 16
 * nodes it ends after the generation whose evaluations reach 2e6 J x N
 * cells (hb_pollux_search_cells); mutation step 3 draws the gaps between
 * raised cells (geometric, the same distribution as a coin per cell); a
 * mating's crossover coin (pymoo's prob 0.9) comes from its own stream;
 * mating m of a round draws from a stream seeded by (one draw of the
 * caller's stream per round, m), so the offspring are the same for any
 * thread count.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "goodput.h"   /* hb_goodput_fitness */
#include "pollux_ga.h"

/* ---- search settings (§3.2, §5.1; [ART] where marked) ------------------- */

#define POLLUX_POP 100             /* [ART] NSGA-II population */
#define POLLUX_GENERATIONS 100     /* [ART] NSGA-II generations */
#define POLLUX_MATING_ROUNDS 100   /* pymoo's n_max_iterations of mating */
#define MUT_RESET_P 0.1            /* [ART] mutation 1: row back to the base */
#define MUT_ZERO_ROW_P 0.1         /* [ART] mutation 2: row chosen for zeroing */
#define MUT_ZERO_ELEM_P 0.1        /* [ART] mutation 2: element zeroed */
#define CROSSOVER_P 0.9            /* pymoo's Crossover prob: a mating's children are crossed, else its parents' copies */
#define POLLUX_STALE_GENERATIONS 5 /* x (jobs + 1): generations without a better FITNESS end the search */
/* Work of one search, in matrix cells evaluated (J x N per evaluation, what
 * the artifact's numpy evaluation reads): above it the search ends after the
 * generation that crosses it, on clusters of more than 16 nodes
 * (hb_pollux_search_cells).  Pollux's own workloads (16 nodes, at most 36
 * jobs: 576 cells x 10,000 evaluations) reach it only with 13 jobs or more
 * in their later generations; a Philly-size round (100+ jobs x 384 columns)
 * gets one generation, continued by the next round's warm start.  What
 * 4e6 -> 2e6 cost and saved: docs/policies/pollux.md, "Search work". */
#define POLLUX_SEARCH_CELLS 2e6
#define POLLUX_STALL_ROUNDS 3      /* matings rounds in a row without a new matrix end a generation */

void hb_pollux_ga_opts_default(struct hb_pollux_ga_opts *o)
{
	o->pop_size = POLLUX_POP;
	o->generations = POLLUX_GENERATIONS;
	o->max_mating_rounds = POLLUX_MATING_ROUNDS;
	o->stale_generations = POLLUX_STALE_GENERATIONS;
	o->max_cell_evals = POLLUX_SEARCH_CELLS;
	o->bounded_raises = 0;
}

int hb_pollux_bounded_raises(int cluster_nodes)
{
	return cluster_nodes > HB_POLLUX_MAX_NODES;
}

double hb_pollux_search_cells(int cluster_nodes, int njobs, int ncols, const struct hb_pollux_ga_opts *o)
{
	/* The artifact's whole search: every generation's population of J x N
	 * matrices (pymoo evaluates pop_size per generation, the first
	 * included). */
	const double full = (double)o->pop_size * o->generations * njobs * ncols;

	if (o->max_cell_evals <= 0)
		return o->max_cell_evals;
	return cluster_nodes <= HB_POLLUX_MAX_NODES && full > o->max_cell_evals ? full : o->max_cell_evals;
}

/* ---- genomes -------------------------------------------------------------- */

/* The search works on sparse genomes: a job spans at most 16 of the
 * hundreds of columns a Philly-size round has, so dense J x N matrices
 * spend the search's time and memory on zeros.  Every operator below draws
 * exactly the random numbers the artifact's dense operators draw, in the
 * same order (cells that are zero still cost their coin), so the search
 * takes the same decisions as on dense matrices.
 *
 * Packed (population slots): rp[0 .. J] row starts, then rp[J] cells as
 * (column, GPUs) pairs, rows in order and columns ascending within a row,
 * never a zero: equal matrices have equal packed ints, so hashing and
 * comparison read them directly.  Work (children, scratch): per row a count
 * and room for every column, so operators insert and remove in place. */
struct work {
	int *cnt;    /* J: cells of each row */
	int *col;    /* J x N: row j's columns at j N, ascending */
	int *val;    /* J x N: their GPUs, > 0 */
};

static void work_free(struct work *w)
{
	free(w->cnt);
	free(w->col);
	free(w->val);
	memset(w, 0, sizeof(*w));
}

static int work_new(struct work *w, int J, int N)
{
	size_t cells = (size_t)J * (size_t)N;

	w->cnt = calloc((size_t)J, sizeof(int));
	w->col = malloc((cells > 0 ? cells : 1) * sizeof(int));
	w->val = malloc((cells > 0 ? cells : 1) * sizeof(int));
	if (!w->cnt || !w->col || !w->val) {
		work_free(w);
		return -1;
	}
	return 0;
}

/* Row j of packed p into row j of w. */
static void row_unpack(const int *p, int J, int j, struct work *w, int N)
{
	const int *c = HB_POLLUX_PK_CELLS(p, J);
	int n = 0;

	for (int i = p[j]; i < p[j + 1]; i++, n++) {
		w->col[(size_t)j * N + n] = c[2 * i];
		w->val[(size_t)j * N + n] = c[2 * i + 1];
	}
	w->cnt[j] = n;
}

static void work_pack(const struct work *w, int J, int N, int *p)
{
	int *c = HB_POLLUX_PK_CELLS(p, J), k = 0;

	for (int j = 0; j < J; j++) {
		p[j] = k;
		for (int i = 0; i < w->cnt[j]; i++, k++) {
			c[2 * k] = w->col[(size_t)j * N + i];
			c[2 * k + 1] = w->val[(size_t)j * N + i];
		}
	}
	p[J] = k;
}

/* A dense J x N matrix (entries > 0 are cells) as work rows. */
static void work_from_dense(struct work *w, const int *a, int J, int N)
{
	for (int j = 0; j < J; j++) {
		int k = 0;

		for (int n = 0; n < N; n++)
			if (a[(size_t)j * N + n] > 0) {
				w->col[(size_t)j * N + k] = n;
				w->val[(size_t)j * N + k++] = a[(size_t)j * N + n];
			}
		w->cnt[j] = k;
	}
}

static void dense_from_packed(const int *p, int J, int N, int *a)
{
	const int *c = HB_POLLUX_PK_CELLS(p, J);

	memset(a, 0, sizeof(int) * (size_t)J * (size_t)N);
	for (int j = 0; j < J; j++)
		for (int i = p[j]; i < p[j + 1]; i++)
			a[(size_t)j * N + c[2 * i]] = c[2 * i + 1];
}

/* Work from a packed genome (rows' cells already ascending, no zero). */
static void work_from_packed(struct work *w, const int *p, int J, int N)
{
	const int *c = HB_POLLUX_PK_CELLS(p, J);

	for (int j = 0; j < J; j++) {
		int k = 0;

		for (int i = p[j]; i < p[j + 1]; i++, k++) {
			w->col[(size_t)j * N + k] = c[2 * i];
			w->val[(size_t)j * N + k] = c[2 * i + 1];
		}
		w->cnt[j] = k;
	}
}

/* Drop the zero cells of row j (order kept). */
static void row_compact(struct work *w, int j, int N)
{
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, k = 0;

	for (int i = 0; i < w->cnt[j]; i++)
		if (val[i] > 0) {
			col[k] = col[i];
			val[k++] = val[i];
		}
	w->cnt[j] = k;
}

/* Work buffers of one problem, so operators and evaluation do not allocate. */
struct scratch {
	double *spd;    /* J: scaled speedups */
	double *fac;    /* J: factors */
	int *rowsum;    /* J: GPUs of each row */
	int *dlist;     /* J: rows spanning several nodes */
	int *colsum;    /* N: GPUs used per node, valid where cmark is cstamp (0 elsewhere) */
	int *holders;   /* N: rows with a cell on the node, valid where colsum is (col_sums; col_add
			   leaves it, so mutation (3) reads the counts before its raises) */
	int *cmark;     /* N: stamps of colsum */
	int cstamp;
	int *touched;   /* N: the columns colsum is valid on, ntouched */
	int ntouched;
	int *perm;      /* N: cell shuffle (repair), own eligible cells (mutate) */
	uint64_t *ibits; /* nw: nodes without a free GPU (mutate), a bit each; the bits past N are set */
	int *ipre;      /* nw + 1: set bits of ibits in the words before */
	int ninel;      /* nodes without a free GPU */
	int *eidx;      /* N: index of an eligible node in order, -1 for others; set on the touched
			   columns */
	uint64_t *zbits; /* nw: nodes of capacity 0, and the bits past N */
	int nw;         /* words of a node bitset */
	int *mark;      /* N: stamps (node used, node taken, node over capacity) */
	int *room;      /* N: capacity left (repair) */
	int *newc;      /* 2 N: cells raised on nodes where the row had none (mutate) */
	int *dense;     /* N: a row for a dense speedup callback, all zero between uses */
	int stamp;      /* the current stamp of mark */
	int *pbase;     /* packed base */
};

static void scratch_free(struct scratch *s)
{
	free(s->spd);
	free(s->fac);
	free(s->rowsum);
	free(s->dlist);
	free(s->colsum);
	free(s->holders);
	free(s->cmark);
	free(s->touched);
	free(s->perm);
	free(s->ibits);
	free(s->ipre);
	free(s->eidx);
	free(s->zbits);
	free(s->mark);
	free(s->room);
	free(s->newc);
	free(s->dense);
	free(s->pbase);
	memset(s, 0, sizeof(*s));
}

static int scratch_new(const struct hb_pollux_problem *pb, struct scratch *s)
{
	size_t j = (size_t)(pb->njobs > 0 ? pb->njobs : 1), n = (size_t)(pb->nnodes > 0 ? pb->nnodes : 1);
	int nnz = 0;
	struct work w;

	memset(s, 0, sizeof(*s));
	s->spd = malloc(j * sizeof(double));
	s->fac = malloc(j * sizeof(double));
	s->rowsum = malloc(j * sizeof(int));
	s->dlist = malloc(j * sizeof(int));
	s->colsum = malloc(n * sizeof(int));
	s->holders = malloc(n * sizeof(int));
	s->cmark = calloc(n, sizeof(int));
	s->touched = malloc(n * sizeof(int));
	s->perm = malloc(n * sizeof(int));
	s->nw = (int)((n + 63) / 64);
	s->ibits = malloc((size_t)s->nw * sizeof(uint64_t));
	s->ipre = malloc(((size_t)s->nw + 1) * sizeof(int));
	s->eidx = malloc(n * sizeof(int));
	s->zbits = calloc((size_t)s->nw, sizeof(uint64_t));
	s->mark = calloc(n, sizeof(int));
	s->room = malloc(n * sizeof(int));
	s->newc = malloc(2 * n * sizeof(int));
	s->dense = calloc(n, sizeof(int));
	for (size_t k = 0; k < (size_t)pb->njobs * (size_t)pb->nnodes; k++)
		nnz += pb->base[k] > 0;
	s->pbase = malloc(((size_t)pb->njobs + 1 + 2 * (size_t)nnz) * sizeof(int));
	if (!s->spd || !s->fac || !s->rowsum || !s->dlist || !s->colsum || !s->holders || !s->cmark || !s->touched || !s->perm ||
	    !s->ibits || !s->ipre || !s->eidx || !s->zbits || !s->mark || !s->room || !s->newc ||
	    !s->dense || !s->pbase) {
		scratch_free(s);
		return -1;
	}
	if (work_new(&w, pb->njobs, pb->nnodes) < 0) {
		scratch_free(s);
		return -1;
	}
	work_from_dense(&w, pb->base, pb->njobs, pb->nnodes);
	work_pack(&w, pb->njobs, pb->nnodes, s->pbase);
	work_free(&w);
	for (size_t k = 0; k < (size_t)s->nw * 64; k++)
		if (k >= n || k >= (size_t)pb->nnodes || pb->capacity[k] < 1)
			s->zbits[k / 64] |= (uint64_t)1 << (k % 64);
	return 0;
}

/* Column sums of w's cells into s->colsum, valid on the columns of
 * s->touched only: O(cells) rather than O(N), as a row holds a handful of
 * the hundreds of columns of a Philly-size round. */
static void col_sums(struct scratch *s, const struct work *w, int J, int N)
{
	if (s->cstamp == INT_MAX) {
		memset(s->cmark, 0, sizeof(int) * (size_t)N);
		s->cstamp = 0;
	}
	s->cstamp++;
	s->ntouched = 0;
	for (int j = 0; j < J; j++)
		for (int i = 0; i < w->cnt[j]; i++) {
			int n = w->col[(size_t)j * N + i];

			if (s->cmark[n] != s->cstamp) {
				s->cmark[n] = s->cstamp;
				s->colsum[n] = 0;
				s->holders[n] = 0;
				s->touched[s->ntouched++] = n;
			}
			s->colsum[n] += w->val[(size_t)j * N + i];
			s->holders[n]++;
		}
}

/* Add v GPUs to column n's sum, touching it if it was not. */
static void col_add(struct scratch *s, int n, int v)
{
	if (s->cmark[n] != s->cstamp) {
		s->cmark[n] = s->cstamp;
		s->colsum[n] = 0;
		s->holders[n] = 0;
		s->touched[s->ntouched++] = n;
	}
	s->colsum[n] += v;
}

/* A fresh stamp for s->mark (every entry is then unmarked). */
static int next_stamp(struct scratch *s, int N)
{
	if (s->stamp == INT_MAX) {
		memset(s->mark, 0, sizeof(int) * (size_t)N);
		s->stamp = 0;
	}
	return ++s->stamp;
}

/* Bernoulli trials from 32-bit halves of the generator's 64-bit draws (the
 * operators draw one per cell, so this halves their calls into the RNG). */
struct coins {
	struct hb_rng *rng;
	uint64_t bits;       /* unused half of the last draw */
	int left;            /* halves left in bits */
};

/* Threshold of a Bernoulli(p) trial: P(1) = threshold / 2^32. */
static uint64_t coin_threshold(double p)
{
	if (!(p > 0.0))
		return 0;
	if (p >= 1.0)
		return (uint64_t)1 << 32;
	return (uint64_t)(p * 4294967296.0);
}

static int coin(struct coins *c, uint64_t threshold)
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

/* k coins whose outcome nobody reads (cells that are zero already): the
 * same draws as k calls of coin(), without looking at them. */
static void coin_skip(struct coins *c, long k)
{
	for (; k > 0 && c->left > 0; k--) {
		c->bits >>= 32;
		c->left--;
	}
	if (k >= 2) {
		hb_rng_skip(c->rng, k / 2);
		k %= 2;
	}
	if (k == 1) {
		c->bits = hb_rng_u64(c->rng) >> 32;
		c->left = 1;
	}
}

static int row_nodes(const int *row, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += row[i] > 0;
	return k;
}

static int row_sum(const int *row, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += row[i];
	return k;
}

/* SPEEDUP of job j on its cells: the problem's sparse callback, else its
 * dense one on a row spelled out in s->dense. */
static int cells_speedup(const struct hb_pollux_problem *pb, struct scratch *s, int j, const int *cells, int n,
			 double *x, struct hb_error *err)
{
	int rc;

	if (pb->speedup_cells)
		return pb->speedup_cells(pb->ctx, j, cells, n, x, err);
	for (int i = 0; i < n; i++)
		s->dense[cells[2 * i]] = cells[2 * i + 1];
	rc = pb->speedup(pb->ctx, j, s->dense, x, err);
	for (int i = 0; i < n; i++)
		s->dense[cells[2 * i]] = 0;
	return rc;
}

/* FITNESS and UTILITY of packed genome p. */
static int evaluate(const struct hb_pollux_problem *pb, struct scratch *s, const int *p, double *fitness,
		    double *utility, struct hb_error *err)
{
	const int J = pb->njobs, *cells = HB_POLLUX_PK_CELLS(p, J), *bcells = HB_POLLUX_PK_CELLS(s->pbase, J);
	const int stamp = next_stamp(s, pb->nnodes);
	double total = 0.0;
	long active = 0;

	for (int j = 0; j < J; j++) {
		int n = p[j + 1] - p[j], bn = s->pbase[j + 1] - s->pbase[j];
		const int *c = cells + 2 * (size_t)p[j];
		double x;

		if (cells_speedup(pb, s, j, c, n, &x, err) < 0)
			return -1;
		if (!(x >= 0) || !isfinite(x))
			return hb_runtime_error(err, "pollux: job %d: speedup %g is not a finite value >= 0", j, x);
		total += x;
		s->spd[j] = x * pb->scale;
		s->fac[j] = (n != bn || memcmp(c, bcells + 2 * (size_t)s->pbase[j], sizeof(int) * 2 * (size_t)n) != 0)
				    ? pb->factor[j]
				    : 1.0;
		if (!(s->fac[j] >= 0) || !isfinite(s->fac[j]))
			return hb_input_error(err, "pollux: job %d: field 'factor': value '%g': must be finite and >= 0",
					      j, s->fac[j]);
		for (int i = 0; i < n; i++) {
			int col = c[2 * i];

			if (s->mark[col] != stamp) {
				s->mark[col] = stamp;
				active += pb->capacity[col];
			}
		}
	}
	*utility = active > 0 ? total / (double)active : 0.0;
	if (pb->p == -1.0 && pb->eps > 0) {
		/* The harmonic mean of hb_goodput_fitness without its pow() calls,
		 * which dominate the search's time: x^-1 = 1 / x (the tests check
		 * that both agree). */
		double sum = 0.0;

		for (int j = 0; j < J; j++)
			sum += 1.0 / (s->spd[j] * s->fac[j] + pb->eps);
		*fitness = (double)J / sum;
		return 0;
	}
	return hb_goodput_fitness(s->spd, s->fac, (size_t)J, pb->p, pb->eps, fitness, err);
}

/* Packed form of a dense matrix (entries > 0), malloc'ed. */
static int *pack_dense(const int *a, int J, int N)
{
	struct work w;
	int *p;
	size_t nnz = 0;

	for (size_t k = 0; k < (size_t)J * (size_t)N; k++)
		nnz += a[k] > 0;
	p = malloc(((size_t)J + 1 + 2 * nnz) * sizeof(int));
	if (!p || work_new(&w, J, N) < 0) {
		free(p);
		return NULL;
	}
	work_from_dense(&w, a, J, N);
	work_pack(&w, J, N, p);
	work_free(&w);
	return p;
}

int hb_pollux_evaluate(const struct hb_pollux_problem *pb, const int *alloc, double *fitness, double *utility,
		       struct hb_error *err)
{
	struct scratch s;
	int rc, *p;

	if (scratch_new(pb, &s) < 0)
		return hb_runtime_error(err, "pollux: out of memory");
	p = pack_dense(alloc, pb->njobs, pb->nnodes);
	if (!p) {
		scratch_free(&s);
		return hb_runtime_error(err, "pollux: out of memory");
	}
	rc = evaluate(pb, &s, p, fitness, utility, err);
	free(p);
	scratch_free(&s);
	return rc;
}

int hb_pollux_feasible(const struct hb_pollux_problem *pb, const int *a)
{
	int J = pb->njobs, N = pb->nnodes;

	for (int j = 0; j < J; j++) {
		const int *row = a + (size_t)j * N;

		for (int n = 0; n < N; n++)
			if (row[n] < 0)
				return 0;
		if (row_sum(row, N) > pb->max_replicas[j] || row_nodes(row, N) > pb->max_nodes_per_job)
			return 0;
	}
	for (int n = 0; n < N; n++) {
		int used = 0, distributed = 0;

		for (int j = 0; j < J; j++) {
			int v = a[(size_t)j * N + n];

			used += v;
			if (v > 0 && row_nodes(a + (size_t)j * N, N) > 1)
				distributed++;
		}
		if (used > pb->capacity[n] || distributed > 1)
			return 0;
	}
	return 1;
}

/* Failures before the next success of Bernoulli(p) trials, log1 = log(1 -
 * p) (0: p = 1, no failures): floor(log U / log(1 - p)), U in (0, 1]. */
static int geometric_gap(struct hb_rng *rng, double log1)
{
	double u = 1.0 - hb_rng_uniform(rng), g;

	if (log1 == 0.0)
		return 0;
	g = floor(log(u) / log1);
	return g < (double)INT_MAX / 2 ? (int)g : INT_MAX / 2;
}

/* Mutation (2) on row j: each of the N cells zeroed with probability
 * zelem, one coin per cell in column order, zero cells included. */
static void zero_cells(struct work *w, int j, int N, struct coins *c, uint64_t zelem)
{
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, at = 0;

	for (int i = 0; i < w->cnt[j]; i++) {
		coin_skip(c, col[i] - at);
		at = col[i] + 1;
		if (coin(c, zelem))
			val[i] = 0;
	}
	coin_skip(c, N - at);
	row_compact(w, j, N);
}

/* The nodes with a free GPU after col_sums ("eligible", mutation (3)), as
 * a bitset of the others: only touched nodes and nodes of capacity 0 can
 * lack a free GPU, so the set is the round's capacity-0 bits (zbits) plus
 * the touched nodes without room, and a count of the set bits per word
 * gives a touched node's index among the eligible ones and finds the k-th
 * eligible node (elig_at).  A child costs O(touched + N / 64), not the
 * O(N) walk over the columns that a list of the eligible nodes costs
 * (about a third of mutation's time on the whole philly.csv, where rounds
 * search hundreds of columns), nor a sort of the nodes without room.
 * Only the order of the eligible nodes is read, so the draws are the
 * same. */
static void find_ineligible(const struct hb_pollux_problem *pb, struct scratch *s)
{
	const int *cap = pb->capacity;
	uint64_t *bits = s->ibits;

	memcpy(bits, s->zbits, sizeof(uint64_t) * (size_t)s->nw);
	for (int t = 0; t < s->ntouched; t++) {
		int n = s->touched[t];

		if (cap[n] - s->colsum[n] < 1)
			bits[n / 64] |= (uint64_t)1 << (n % 64);
	}
	s->ipre[0] = 0;
	for (int w = 0; w < s->nw; w++)
		s->ipre[w + 1] = s->ipre[w] + __builtin_popcountll(bits[w]);
	/* the bits past N are not nodes */
	s->ninel = s->ipre[s->nw] - (s->nw * 64 - pb->nnodes);
	for (int t = 0; t < s->ntouched; t++) {
		int n = s->touched[t];

		if (cap[n] - s->colsum[n] < 1)
			s->eidx[n] = -1;
		else
			s->eidx[n] = n - s->ipre[n / 64] -
				     __builtin_popcountll(bits[n / 64] & (((uint64_t)1 << (n % 64)) - 1));
	}
}

/* The k-th eligible node (k < N - ninel): the last word with at most k
 * eligible nodes before it, then the bit of its (k - those)-th clear bit. */
static int elig_at(const struct scratch *s, int k)
{
	int lo = 0, hi = s->nw, r;
	uint64_t x;

	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;

		if (64 * mid - s->ipre[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	x = ~s->ibits[lo];
	for (r = k - (64 * lo - s->ipre[lo]); r > 0; r--)
		x &= x - 1;
	return 64 * lo + __builtin_ctzll(x);
}

/* Mutation (3) on row j (see mutate): the row's own cells on the c1
 * eligible nodes first, each with p1 + p2 - p1 p2, then its empty eligible
 * cells at geometric gaps of Bernoulli(p1) (log1 = log(1 - p1)). */
static void raise_row(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, int j,
		      struct coins *c, int c1, double p1, double log1)
{
	const int N = pb->nnodes, *cap = pb->capacity;
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, *own = s->perm, c2 = 0, zeros, next, m = 0;

	for (int i = 0; i < w->cnt[j]; i++)
		if (s->eidx[col[i]] >= 0)
			own[c2++] = i; /* cells in column order, so in eligible order too */
	zeros = c1 - c2;
	for (int a = 0; a < c2; a++) {
		int i = own[a];
		double p2 = 1.0 / s->holders[col[i]];

		if (coin(c, coin_threshold(p1 + p2 - p1 * p2))) {
			int add = (int)hb_rng_below(c->rng, (uint64_t)(cap[col[i]] - val[i] + 1));

			val[i] += add;
			s->colsum[col[i]] += add; /* touched: the row has a cell there */
		}
	}
	/* own[] now as elig indices, to find the z-th empty eligible cell. */
	for (int a = 0; a < c2; a++)
		own[a] = s->eidx[col[own[a]]];
	next = geometric_gap(c->rng, log1);
	for (int p = 0; next < zeros;) {
		int k = next + p, n, v;

		while (p < c2 && own[p] <= k)
			k = next + ++p;
		n = elig_at(s, k);
		v = (int)hb_rng_below(c->rng, (uint64_t)(cap[n] + 1));
		if (v > 0) {
			s->newc[2 * m] = n;
			s->newc[2 * m + 1] = v;
			m++;
			col_add(s, n, v);
		}
		next = next + 1 + geometric_gap(c->rng, log1);
	}
	/* Merge the new cells (ascending, on columns the row lacks) from the back. */
	for (int a = w->cnt[j] - 1, b = m - 1, o = w->cnt[j] + m - 1; b >= 0; o--) {
		if (a >= 0 && col[a] > s->newc[2 * b]) {
			col[o] = col[a];
			val[o] = val[a--];
		} else {
			col[o] = s->newc[2 * b];
			val[o] = s->newc[2 * b-- + 1];
		}
	}
	w->cnt[j] += m;
}

/* Pollux §3.2 [ART] mutation: (1) rows back to the base with probability
 * 0.1, (2) rows chosen with probability 0.1 get each element zeroed with
 * probability 0.1, (3) elements on nodes with a free GPU raised to a uniform
 * value between their own and the node's capacity, with probability p1 + p2 -
 * p1 p2.  Both are per node, normalised over the jobs (Problem._mutation
 * sums its masks over axis 1 of pop x jobs x nodes): p1 = 1 / the jobs a
 * replica of which fits the node's free GPUs, which is every job (a
 * replica is one GPU), so 1 / J; p2 = 1 / the jobs with a cell on the
 * node, 0 for a job without one.  So a round of many jobs raises few cells
 * of each row (about eligible nodes / J), and one of few jobs several.
 * bounded (clusters beyond the artifact's 16 nodes): p1 = 1 / max(J,
 * eligible nodes), at most one raised cell a row on average, as repair
 * cuts a row to its cap anyway.
 * The free GPUs and the holders of (3) are counted once, after (2), as the
 * artifact's vectorised code does.  The cells where the
 * job does not run succeed with p1 each: the gaps between successes are
 * geometric, drawn directly instead of one coin per cell (the same
 * distribution, a draw per success rather than per node, which matters on
 * large clusters).  Successes land after the job's own cells are raised, on
 * the values the row had before.  The column sums (s->colsum on s->touched)
 * are kept current through (3), so that repair need not recount them. */
static void mutate(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, struct hb_rng *rng,
		   int bounded)
{
	const uint64_t reset = coin_threshold(MUT_RESET_P), zrow = coin_threshold(MUT_ZERO_ROW_P),
		       zelem = coin_threshold(MUT_ZERO_ELEM_P);
	const int J = pb->njobs, N = pb->nnodes;
	int c1, over;
	struct coins c = { rng, 0, 0 };
	double log1;

	for (int j = 0; j < J; j++)
		if (coin(&c, reset))
			row_unpack(s->pbase, J, j, w, N);
	for (int j = 0; j < J; j++)
		if (coin(&c, zrow))
			zero_cells(w, j, N, &c, zelem);
	col_sums(s, w, J, N);
	find_ineligible(pb, s);
	c1 = N - s->ninel;
	if (c1 == 0)
		return;
	over = bounded && c1 > J ? c1 : J;
	log1 = over > 1 ? log1p(-1.0 / over) : 0.0;
	for (int j = 0; j < J; j++)
		raise_row(pb, s, w, j, &c, c1, 1.0 / over, log1);
}

/* Single-point crossover over jobs: rows before the point are swapped. */
static void crossover(const struct hb_pollux_problem *pb, const int *a, const int *b, struct work *c0,
		      struct work *c1, struct hb_rng *rng)
{
	const int J = pb->njobs, N = pb->nnodes, cut = (int)hb_rng_below(rng, (uint64_t)J);

	for (int j = 0; j < J; j++) {
		row_unpack(j < cut ? b : a, J, j, c0, N);
		row_unpack(j < cut ? a : b, J, j, c1, N);
	}
}

/* Repair (b) on row j: only the order of the row's cells matters, and only
 * when a cap binds, so only then is it drawn: a uniform order of those
 * cells is what a uniform shuffle of all nodes gives them. */
static void cap_row(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, int j, struct hb_rng *rng)
{
	const int N = pb->nnodes, nz = w->cnt[j];
	int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, *perm = s->perm;
	int left = pb->max_replicas[j] > 0 ? pb->max_replicas[j] : 0, used = 0;

	if (s->rowsum[j] <= left && nz <= pb->max_nodes_per_job)
		return;
	for (int i = 0; i < nz; i++)
		perm[i] = i;
	for (int i = nz - 1; i > 0; i--) {
		int k = (int)hb_rng_below(rng, (uint64_t)i + 1), t = perm[i];

		perm[i] = perm[k];
		perm[k] = t;
	}
	for (int a = 0; a < nz; a++) {
		int i = perm[a], take = val[i] < left ? val[i] : left;

		left -= take;
		if (take > 0 && used >= pb->max_nodes_per_job)
			take = 0;
		else if (take > 0)
			used++;
		s->colsum[col[i]] -= val[i] - take;
		val[i] = take;
	}
	row_compact(w, j, N);
}

/* Pollux §3.2 [ART] repair: (a) one multi-node job per node, the first in
 * job order, later jobs' cells on a node with a second one zeroed too;
 * (b) each job's GPUs capped at max_replicas and its nodes at
 * max_nodes_per_job, walking its nodes in random order; (c) node capacity by
 * cumulative sum in job order; (d) min_replicas is 0: nothing.  Each step
 * only touches what violates its constraint (a step with nothing to fix
 * would leave the matrix as it is). */
static void repair(const struct hb_pollux_problem *pb, struct scratch *s, struct work *w, struct hb_rng *rng,
		   int sums_valid)
{
	const int J = pb->njobs, N = pb->nnodes;
	int ndist = 0, over = 0, stamp;

	/* Every column below holds a cell, so is touched.  Right after mutate
	 * (sums_valid) the sums and touched columns are current (mutate counts
	 * them after its steps (1) and (2) and keeps them through (3)); touched
	 * may list them in another order, which no step below reads. */
	if (!sums_valid)
		col_sums(s, w, J, N);
	for (int j = 0; j < J; j++) {
		int sum = 0;

		for (int i = 0; i < w->cnt[j]; i++)
			sum += w->val[(size_t)j * N + i];
		s->rowsum[j] = sum;
		if (w->cnt[j] > 1)
			s->dlist[ndist++] = j;
	}
	/* (a): on a node where a second multi-node job has a cell, that job's
	 * cell and the cell of every job after it in job order are zeroed,
	 * single-node ones included: the artifact's mask.cumsum(axis=1) > 1
	 * counts, at each row, the multi-node jobs on the node up to it.
	 * room[n] is the row of node n's second multi-node job (J: none). */
	if (ndist > 1) {
		int second = 0;

		stamp = next_stamp(s, N);
		for (int k = 0; k < ndist; k++) {
			int j = s->dlist[k], *col = w->col + (size_t)j * N;

			for (int i = 0; i < w->cnt[j]; i++) {
				int n = col[i];

				if (s->mark[n] != stamp) {
					s->mark[n] = stamp;
					s->room[n] = J;
				} else if (s->room[n] == J) {
					s->room[n] = j;
					second = 1;
				}
			}
		}
		for (int j = second ? s->dlist[0] : J; j < J; j++) {
			int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, cut = 0;

			for (int i = 0; i < w->cnt[j]; i++) {
				int n = col[i];

				if (s->mark[n] == stamp && s->room[n] <= j) {
					s->colsum[n] -= val[i];
					s->rowsum[j] -= val[i];
					val[i] = 0;
					cut = 1;
				}
			}
			if (cut)
				row_compact(w, j, N);
		}
	}
	for (int j = 0; j < J; j++)
		cap_row(pb, s, w, j, rng);
	/* (c): nodes over capacity, filled in job order. */
	stamp = next_stamp(s, N);
	for (int t = 0; t < s->ntouched; t++) {
		int n = s->touched[t];

		if (s->colsum[n] > pb->capacity[n]) {
			s->mark[n] = stamp;
			s->room[n] = pb->capacity[n];
			over = 1;
		}
	}
	if (!over)
		return;
	for (int j = 0; j < J; j++) {
		int *col = w->col + (size_t)j * N, *val = w->val + (size_t)j * N, cut = 0;

		for (int i = 0; i < w->cnt[j]; i++) {
			int n = col[i];

			if (s->mark[n] != stamp)
				continue;
			if (val[i] > s->room[n])
				val[i] = s->room[n];
			s->room[n] -= val[i];
			cut |= val[i] == 0;
		}
		if (cut)
			row_compact(w, j, N);
	}
}

/* The dense operators of arbiter_pollux.h: each round-trips through the
 * sparse ones the search uses. */
static int dense_op(const struct hb_pollux_problem *pb, int *alloc, struct hb_rng *rng, int which, int bounded,
		    struct hb_error *err)
{
	struct scratch s;
	struct work w;
	int *p;

	if (scratch_new(pb, &s) < 0)
		return hb_runtime_error(err, "pollux %s: out of memory", which ? "repair" : "mutation");
	p = malloc(((size_t)pb->njobs + 1 + 2 * (size_t)pb->njobs * pb->nnodes) * sizeof(int));
	if (!p || work_new(&w, pb->njobs, pb->nnodes) < 0) {
		free(p);
		scratch_free(&s);
		return hb_runtime_error(err, "pollux %s: out of memory", which ? "repair" : "mutation");
	}
	work_from_dense(&w, alloc, pb->njobs, pb->nnodes);
	if (which)
		repair(pb, &s, &w, rng, 0);
	else
		mutate(pb, &s, &w, rng, bounded);
	work_pack(&w, pb->njobs, pb->nnodes, p);
	dense_from_packed(p, pb->njobs, pb->nnodes, alloc);
	work_free(&w);
	free(p);
	scratch_free(&s);
	return 0;
}

int hb_pollux_mutate(const struct hb_pollux_problem *pb, int *alloc, const struct hb_pollux_ga_opts *o,
		     struct hb_rng *rng, struct hb_error *err)
{
	return dense_op(pb, alloc, rng, 0, o && o->bounded_raises, err);
}

int hb_pollux_repair(const struct hb_pollux_problem *pb, int *alloc, struct hb_rng *rng, struct hb_error *err)
{
	return dense_op(pb, alloc, rng, 1, 0, err);
}

void hb_pollux_crossover(const struct hb_pollux_problem *pb, const int *a, const int *b, int *c0, int *c1,
			 struct hb_rng *rng)
{
	size_t L = (size_t)pb->njobs * pb->nnodes, cut = (size_t)hb_rng_below(rng, (uint64_t)pb->njobs) * pb->nnodes;

	memcpy(c0, b, sizeof(int) * cut);
	memcpy(c0 + cut, a + cut, sizeof(int) * (L - cut));
	memcpy(c1, a, sizeof(int) * cut);
	memcpy(c1 + cut, b + cut, sizeof(int) * (L - cut));
}

/* ---- NSGA-II ---------------------------------------------------------------- */

/* Population slots: genomes, objectives (both minimised: -FITNESS,
 * -UTILITY), hashes, rank and crowding. */
struct ga {
	const struct hb_pollux_problem *pb;
	const struct hb_pollux_ga_opts *o;
	struct hb_rng *rng;
	struct scratch s;
	size_t L;            /* ints of a slot: J + 1 row starts and 2 ints per cell, up to lcap cells */
	size_t lcap;         /* cells a repaired genome can have */
	int cap;             /* slots */
	int *x, *x2;         /* cap x L packed genomes; x2 receives survivors */
	double *f, *f2;      /* cap x 2 objectives */
	uint64_t *h, *h2;    /* cap hashes */
	int *rank, *rank2;
	double *crowd, *crowd2;
	int *order;          /* cap: sweep order (survive) */
	int *last;           /* cap: latest member of each front (survive) */
	int *front, *next;   /* cap: one front; merge-sort and crowding scratch */
	int *sel;            /* tournament candidates; front starts (survive) */
	uint64_t *key;       /* cap: random tie-break keys */
	struct work child[2]; /* offspring of one mating (worker 0) */
	int *kids;           /* (pop_size + 1) x L: a mating round's children, packed, in mating order */
	uint64_t *kh;        /* their hashes */
	uint64_t mbase;      /* the mating round's stream base (mate_task) */
	int *set;            /* set_size: genome set for duplicate elimination */
	size_t set_size;     /* a power of two >= 4 cap */
	long evals;
	/* Parallel evaluation (eval_slots): worker 0 (the calling thread) uses
	 * s, worker w > 0 ws[w - 1], made at the first batch that runs on the
	 * pool; each worker keeps the first slot it failed on and its error. */
	int nw;              /* hb_pool_threads(pb->pool) */
	struct scratch *ws;  /* nw - 1, NULL until needed */
	struct work *wchild; /* 2 (nw - 1): the children of workers > 0, with ws */
	int *wfail;          /* nw: first failed slot, -1 none */
	struct hb_error *werr; /* nw */
	int ebeg, eend;      /* the batch: slots [ebeg, eend) */
	int echunk;          /* slots per task */
};

static void ga_free(struct ga *g)
{
	scratch_free(&g->s);
	free(g->x);
	free(g->x2);
	free(g->f);
	free(g->f2);
	free(g->h);
	free(g->h2);
	free(g->rank);
	free(g->rank2);
	free(g->crowd);
	free(g->crowd2);
	free(g->order);
	free(g->last);
	free(g->front);
	free(g->next);
	free(g->sel);
	free(g->key);
	work_free(&g->child[0]);
	work_free(&g->child[1]);
	free(g->kids);
	free(g->kh);
	free(g->set);
	for (int w = 0; g->ws && w < g->nw - 1; w++) {
		scratch_free(&g->ws[w]);
		work_free(&g->wchild[2 * w]);
		work_free(&g->wchild[2 * w + 1]);
	}
	free(g->ws);
	free(g->wchild);
	free(g->wfail);
	free(g->werr);
}

static int ga_new(struct ga *g, const struct hb_pollux_problem *pb, const struct hb_pollux_ga_opts *o, int ninit,
		  struct hb_rng *rng)
{
	size_t c;

	memset(g, 0, sizeof(*g));
	g->pb = pb;
	g->o = o;
	g->rng = rng;
	/* A repaired row has at most min(max_replicas, max_nodes_per_job,
	 * nodes) cells (repair (b)); every slot holds a repaired genome. */
	g->lcap = 0;
	for (int j = 0; j < pb->njobs; j++) {
		int m = pb->max_replicas[j] > 0 ? pb->max_replicas[j] : 0;

		m = m < pb->max_nodes_per_job ? m : pb->max_nodes_per_job;
		g->lcap += (size_t)(m < pb->nnodes ? m : pb->nnodes);
	}
	g->L = (size_t)pb->njobs + 1 + 2 * g->lcap;
	g->cap = (ninit > o->pop_size ? ninit : o->pop_size) + o->pop_size;
	c = (size_t)g->cap;
	if (scratch_new(pb, &g->s) < 0)
		return -1;
	g->x = malloc(c * g->L * sizeof(int));
	g->x2 = malloc(c * g->L * sizeof(int));
	g->f = malloc(2 * c * sizeof(double));
	g->f2 = malloc(2 * c * sizeof(double));
	g->h = malloc(c * sizeof(uint64_t));
	g->h2 = malloc(c * sizeof(uint64_t));
	g->rank = malloc(c * sizeof(int));
	g->rank2 = malloc(c * sizeof(int));
	g->crowd = malloc(c * sizeof(double));
	g->crowd2 = malloc(c * sizeof(double));
	g->order = malloc(c * sizeof(int));
	g->last = malloc(c * sizeof(int));
	g->front = malloc(c * sizeof(int));
	g->next = malloc(c * sizeof(int));
	g->sel = malloc((4 * c + c) * sizeof(int));
	g->key = malloc(c * sizeof(uint64_t));
	g->kids = malloc(((size_t)o->pop_size + 1) * g->L * sizeof(int));
	g->kh = malloc(((size_t)o->pop_size + 1) * sizeof(uint64_t));
	if (work_new(&g->child[0], pb->njobs, pb->nnodes) < 0 || work_new(&g->child[1], pb->njobs, pb->nnodes) < 0)
		return -1;
	for (g->set_size = 16; g->set_size < 4 * c; g->set_size *= 2)
		;
	g->set = calloc(g->set_size, sizeof(int));
	g->nw = hb_pool_threads(pb->pool);
	g->wfail = malloc((size_t)g->nw * sizeof(int));
	g->werr = malloc((size_t)g->nw * sizeof(*g->werr));
	if (!g->wfail || !g->werr)
		return -1;
	if (!g->x || !g->x2 || !g->f || !g->f2 || !g->h || !g->h2 || !g->rank || !g->rank2 || !g->crowd ||
	    !g->crowd2 || !g->order || !g->last || !g->front || !g->next || !g->sel || !g->key ||
	    !g->kids || !g->kh || !g->set)
		return -1;
	return 0;
}

static int dominates(const double *a, const double *b)
{
	return a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1]);
}

/* The set of genomes in the slots: open addressing on the hashes, slot + 1
 * per entry (0 = empty), rebuilt whenever the slots are compacted. */
static void set_clear(struct ga *g)
{
	memset(g->set, 0, sizeof(int) * g->set_size);
}

static void set_add(struct ga *g, int slot)
{
	size_t k = (size_t)g->h[slot] & (g->set_size - 1);

	while (g->set[k] != 0)
		k = (k + 1) & (g->set_size - 1);
	g->set[k] = slot + 1;
}

/* 1 when genome x (hash h) is already in the set. */
static int duplicate(const struct ga *g, const int *x, uint64_t h)
{
	for (size_t k = (size_t)h & (g->set_size - 1); g->set[k] != 0; k = (k + 1) & (g->set_size - 1)) {
		int i = g->set[k] - 1;

		const int *y = g->x + (size_t)i * g->L;

		if (g->h[i] == h && y[g->pb->njobs] == x[g->pb->njobs] &&
		    memcmp(y, x, hb_pollux_packed_len(x, g->pb->njobs) * sizeof(int)) == 0)
			return 1;
	}
	return 0;
}

/* Rows (evaluations x jobs) of a batch below which eval_slots stays on the
 * calling thread: a memoised row costs tens of nanoseconds, waking the
 * pool's workers microseconds. */
#define POLLUX_PAR_MIN_ROWS 256

/* The scratch and children of workers 1 .. nw - 1, made when a batch first
 * runs on the pool (a search that never does, most small ones, never pays
 * for them).  0, or -1 without memory. */
static int workers_new(struct ga *g)
{
	const int J = g->pb->njobs, N = g->pb->nnodes;

	if (g->ws)
		return 0;
	g->ws = calloc((size_t)(g->nw - 1), sizeof(*g->ws));
	g->wchild = calloc(2 * (size_t)(g->nw - 1), sizeof(*g->wchild));
	if (!g->ws || !g->wchild)
		goto oom;
	for (int w = 0; w < g->nw - 1; w++)
		if (scratch_new(g->pb, &g->ws[w]) < 0 || work_new(&g->wchild[2 * w], J, N) < 0 ||
		    work_new(&g->wchild[2 * w + 1], J, N) < 0)
			goto oom;
	return 0;
oom:
	for (int w = 0; g->ws && g->wchild && w < g->nw - 1; w++) {
		scratch_free(&g->ws[w]); /* zeroed (calloc) when never made */
		work_free(&g->wchild[2 * w]);
		work_free(&g->wchild[2 * w + 1]);
	}
	free(g->ws);
	free(g->wchild);
	g->ws = NULL;
	g->wchild = NULL;
	return -1;
}

/* One task of eval_slots: slots [ebeg + task echunk, ...) with the
 * worker's scratch.  Each slot's objectives depend on its genome alone, so
 * which thread evaluates it changes nothing; a worker gets its tasks in
 * ascending order, so after its first failure the rest of its tasks are
 * skipped. */
static void eval_task(void *ctx, int task, int worker)
{
	struct ga *g = ctx;
	struct scratch *s = worker == 0 ? &g->s : &g->ws[worker - 1];
	int i0 = g->ebeg + task * g->echunk, i1 = i0 + g->echunk < g->eend ? i0 + g->echunk : g->eend;

	if (g->wfail[worker] >= 0)
		return;
	for (int i = i0; i < i1; i++) {
		double fit, util;

		if (evaluate(g->pb, s, g->x + (size_t)i * g->L, &fit, &util, &g->werr[worker]) < 0) {
			g->wfail[worker] = i;
			return;
		}
		g->f[2 * i] = -fit;
		g->f[2 * i + 1] = -util;
	}
}

/* Evaluate slots [beg, end): on the pool when the batch is worth it, with
 * the same objectives in the same slots as serially.  On failure the error
 * is the one of the lowest failed slot, as serially. */
static int eval_slots(struct ga *g, int beg, int end, struct hb_error *err)
{
	struct hb_pool *pool = NULL;
	int count = end - beg, ntask, fail = -1, fw = 0;

	if (count <= 0)
		return 0;
	g->ebeg = beg;
	g->eend = end;
	g->echunk = count;
	if (g->nw > 1 && count > 1 && (double)count * g->pb->njobs >= POLLUX_PAR_MIN_ROWS) {
		if (workers_new(g) < 0)
			return hb_runtime_error(err, "pollux search: out of memory");
		/* About four tasks per worker: a slot that meets new
		 * placements costs goodput argmaxes, the others almost nothing */
		pool = g->pb->pool;
		g->echunk = (count + 4 * g->nw - 1) / (4 * g->nw);
	}
	ntask = (count + g->echunk - 1) / g->echunk;
	for (int w = 0; w < g->nw; w++) {
		g->wfail[w] = -1;
		hb_error_clear(&g->werr[w]);
	}
	hb_pool_run(pool, ntask, eval_task, g);
	for (int w = 0; w < g->nw; w++)
		if (g->wfail[w] >= 0 && (fail < 0 || g->wfail[w] < fail)) {
			fail = g->wfail[w];
			fw = w;
		}
	if (fail >= 0) {
		if (err)
			*err = g->werr[fw];
		return -1;
	}
	g->evals += count;
	return 0;
}

/* Objective order (f0, then f1), then slot: the sweep order of the sort. */
static int lex_before(const double *f, int i, int k)
{
	if (f[2 * i] != f[2 * k])
		return f[2 * i] < f[2 * k];
	if (f[2 * i + 1] != f[2 * k + 1])
		return f[2 * i + 1] < f[2 * k + 1];
	return i < k;
}

/* Bottom-up merge sort of idx[0, n) by lex_before (tmp: n entries). */
static void lex_sort(const double *f, int *idx, int *tmp, int n)
{
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int i = lo, k = mid, o = lo;

			while (i < mid && k < hi)
				tmp[o++] = lex_before(f, idx[k], idx[i]) ? idx[k++] : idx[i++];
			while (i < mid)
				tmp[o++] = idx[i++];
			while (k < hi)
				tmp[o++] = idx[k++];
		}
		memcpy(idx, tmp, sizeof(int) * (size_t)n);
	}
}

/* Crowding distance of the m slots of one front, given in objective order
 * (pymoo: boundaries infinite, duplicates of an objective vector 0, each
 * objective's gaps normalised by its range, summed and halved).  In a front
 * distinct points have distinct f0 and f1 falls as f0 rises, so that one
 * order serves both objectives. */
static void crowding(struct ga *g, int *idx, int m)
{
	int *u = g->last, nu = 0;
	double r0, r1;

	for (int a = 0; a < m; a++) {
		int i = idx[a];

		g->crowd[i] = 0.0;
		if (nu == 0 || g->f[2 * u[nu - 1]] != g->f[2 * i] || g->f[2 * u[nu - 1] + 1] != g->f[2 * i + 1])
			u[nu++] = i;
	}
	for (int b = 0; b < nu; b++)
		g->crowd[u[b]] = INFINITY;
	if (nu <= 2)
		return;
	r0 = g->f[2 * u[nu - 1]] - g->f[2 * u[0]];
	r1 = g->f[2 * u[0] + 1] - g->f[2 * u[nu - 1] + 1];
	for (int b = 1; b < nu - 1; b++) {
		double d = 0.0;

		if (r0 > 0)
			d += (g->f[2 * u[b + 1]] - g->f[2 * u[b - 1]]) / r0 / 2.0;
		if (r1 > 0)
			d += (g->f[2 * u[b - 1] + 1] - g->f[2 * u[b + 1] + 1]) / r1 / 2.0;
		g->crowd[u[b]] = d;
	}
}

/* Crowding descending, then the random key (survive's cut). */
static int crowd_before(const struct ga *g, int i, int k)
{
	if (g->crowd[i] != g->crowd[k])
		return g->crowd[i] > g->crowd[k];
	return g->key[i] < g->key[k];
}

static void crowd_sort(const struct ga *g, int *idx, int *tmp, int n)
{
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int i = lo, k = mid, o = lo;

			while (i < mid && k < hi)
				tmp[o++] = crowd_before(g, idx[k], idx[i]) ? idx[k++] : idx[i++];
			while (i < mid)
				tmp[o++] = idx[i++];
			while (k < hi)
				tmp[o++] = idx[k++];
		}
		memcpy(idx, tmp, sizeof(int) * (size_t)n);
	}
}

#ifdef POLLUX_FRONT_VERIFY
/* Test builds (tests/arbiter_pollux: test_pollux_front): every front found
 * by the binary search below is checked against the linear scan. */
long hb_pollux_front_verified, hb_pollux_front_mismatch;
#endif

/* The front a point joins in survive's sweep: the first k whose latest
 * member last[k] does not dominate it.  The sweep visits points by (f0,
 * f1) ascending, so every latest member has f0 <= the point's; and the
 * latest members' f1 never fall from one front to the next (a point joins
 * front k > 0 only if last[k - 1] dominates it, so has f1 >= last[k -
 * 1]'s; and it is not dominated by the last[k] it replaces, which had f0
 * <= its own, so its f1 is at most that one's, itself <= last[k + 1]'s).
 * So last[k] dominates the point exactly when its f1 is below the point's,
 * or equal with a lower f0: the fronts of f1 below come first (a binary
 * search), then a run of equal f1, in which those of lower f0 dominate
 * and the first of equal f0 (the same point) does not.  The same front as
 * the linear scan, in O(log fronts). */
static int join_front(const double *f, const int *last, int nfronts, int i)
{
	const double f0 = f[2 * i], f1 = f[2 * i + 1];
	int lo = 0, hi = nfronts;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (f[2 * last[mid] + 1] < f1)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < nfronts && f[2 * last[lo] + 1] == f1 && f[2 * last[lo]] < f0)
		lo++;
	return lo;
}

/* Survivors of slots [0, total): whole fronts in rank order, the last one
 * cut by crowding distance (descending, random ties), compacted into
 * [0, keep) with rank and crowding set.  Non-dominated sorting of two
 * objectives by one sweep in objective order: a point joins the first front
 * whose latest member does not dominate it (that member has the front's
 * lowest f1 so far, so it dominates the point if any member does), found
 * by join_front. */
static void survive(struct ga *g, int total, int keep)
{
	int kept = 0, nfronts = 0, *order = g->order, *last = g->last, *start = g->sel;

	for (int i = 0; i < total; i++)
		order[i] = i;
	lex_sort(g->f, order, g->next, total);
	for (int a = 0; a < total; a++) {
		int i = order[a], k = join_front(g->f, last, nfronts, i);

#ifdef POLLUX_FRONT_VERIFY
		{
			int lin = 0;

			while (lin < nfronts && dominates(g->f + 2 * last[lin], g->f + 2 * i))
				lin++;
			hb_pollux_front_verified++;
			hb_pollux_front_mismatch += lin != k;
		}
#endif
		g->rank[i] = k;
		last[k] = i;
		if (k == nfronts)
			nfronts++;
	}
	/* Members of each front, in objective order: a stable counting sort by
	 * rank of the sweep order. */
	for (int k = 0; k <= nfronts; k++)
		start[k] = 0;
	for (int i = 0; i < total; i++)
		start[g->rank[i] + 1]++;
	for (int k = 0; k < nfronts; k++)
		start[k + 1] += start[k];
	for (int a = 0; a < total; a++)
		g->next[start[g->rank[order[a]]]++] = order[a];
	memcpy(order, g->next, sizeof(int) * (size_t)total);
	for (int k = nfronts; k > 0; k--)
		start[k] = start[k - 1];
	start[0] = 0;
	for (int r = 0; r < nfronts && kept < keep; r++) {
		int *front = g->front, nf = start[r + 1] - start[r], take = nf;

		memcpy(front, order + start[r], sizeof(int) * (size_t)nf);
		crowding(g, front, nf);
		if (kept + nf > keep) {
			/* Crowding descending, random keys on ties. */
			for (int a = 0; a < nf; a++)
				g->key[front[a]] = hb_rng_u64(g->rng);
			crowd_sort(g, front, g->next, nf);
			take = keep - kept;
		}
		for (int a = 0; a < take; a++) {
			int i = front[a];

			memcpy(g->x2 + (size_t)kept * g->L, g->x + (size_t)i * g->L,
			       hb_pollux_packed_len(g->x + (size_t)i * g->L, g->pb->njobs) * sizeof(int));
			g->f2[2 * kept] = g->f[2 * i];
			g->f2[2 * kept + 1] = g->f[2 * i + 1];
			g->h2[kept] = g->h[i];
			g->rank2[kept] = r;
			g->crowd2[kept] = g->crowd[i];
			kept++;
		}
	}
#define SWAP(a, b)                                \
	do {                                      \
		void *t_ = (void *)(a);           \
		(a) = (b);                        \
		(b) = t_;                         \
	} while (0)
	SWAP(g->x, g->x2);
	SWAP(g->f, g->f2);
	SWAP(g->h, g->h2);
	SWAP(g->rank, g->rank2);
	SWAP(g->crowd, g->crowd2);
#undef SWAP
}

/* Binary tournament: dominance, then crowding distance, then a coin from
 * the mating's stream. */
static int tournament(const struct ga *g, int a, int b, struct hb_rng *rng)
{
	if (dominates(g->f + 2 * a, g->f + 2 * b))
		return a;
	if (dominates(g->f + 2 * b, g->f + 2 * a))
		return b;
	if (g->crowd[a] > g->crowd[b])
		return a;
	if (g->crowd[b] > g->crowd[a])
		return b;
	return hb_rng_uniform(rng) < 0.5 ? a : b;
}

/* Candidates for 4 m tournaments' entries: concatenated random permutations
 * of the population (pymoo's TournamentSelection, pressure 2). */
static void draw_candidates(struct ga *g, int n, int count)
{
	for (int k = 0; k < count; k += n) {
		int m = count - k < n ? count - k : n;
		int *p = g->sel + k;
		int *perm = g->sel + count; /* spare room after the candidates */

		for (int i = 0; i < n; i++)
			perm[i] = i;
		for (int i = n - 1; i > 0; i--) {
			int r = (int)hb_rng_below(g->rng, (uint64_t)i + 1), t = perm[i];

			perm[i] = perm[r];
			perm[r] = t;
		}
		memcpy(p, perm, sizeof(int) * (size_t)m);
	}
}

/* Mating m of a round (a pool task): tournaments on candidates sel[4 m ..
 * 4 m + 3], crossover, mutation and repair of both children, packed with
 * their hashes into kids[2 m], kids[2 m + 1].  Its random numbers come from
 * a stream of its own, seeded by the round's base and m, so a mating draws
 * the same numbers whichever thread runs it and whichever matings ran
 * before; it reads the population and writes only its own kids. */
static void mate_task(void *ctx, int m, int worker)
{
	struct ga *g = ctx;
	const struct hb_pollux_problem *pb = g->pb;
	struct scratch *s = worker == 0 ? &g->s : &g->ws[worker - 1];
	struct work *child = worker == 0 ? g->child : &g->wchild[2 * (worker - 1)];
	struct hb_rng rng;
	int pa, pbi;

	hb_rng_seed(&rng, g->mbase, (uint64_t)m);
	pa = tournament(g, g->sel[4 * m], g->sel[4 * m + 1], &rng);
	pbi = tournament(g, g->sel[4 * m + 2], g->sel[4 * m + 3], &rng);
	/* pymoo crosses a mating's parents with probability CROSSOVER_P and
	 * otherwise passes them on as they are (mutation follows either way). */
	if (hb_rng_uniform(&rng) < CROSSOVER_P) {
		crossover(pb, g->x + (size_t)pa * g->L, g->x + (size_t)pbi * g->L, &child[0], &child[1], &rng);
	} else {
		for (int j = 0; j < pb->njobs; j++) {
			row_unpack(g->x + (size_t)pa * g->L, pb->njobs, j, &child[0], pb->nnodes);
			row_unpack(g->x + (size_t)pbi * g->L, pb->njobs, j, &child[1], pb->nnodes);
		}
	}
	for (int k = 0; k < 2; k++) {
		int *c = g->kids + (size_t)(2 * m + k) * g->L;

		mutate(pb, s, &child[k], &rng, g->o->bounded_raises);
		repair(pb, s, &child[k], &rng, 1);
		work_pack(&child[k], pb->njobs, pb->nnodes, c);
		g->kh[2 * m + k] = hb_pollux_hash(c, hb_pollux_packed_len(c, pb->njobs));
	}
}

/* One generation's offspring into slots [n, n + *noff).  A mating round's
 * matings run on the pool (each from its own stream, see mate_task); their
 * children are then kept in mating order, duplicates dropped, so the
 * offspring are the same for any number of threads.  All of a round's
 * matings run even when the first ones fill the generation (only its last
 * child or so, as a round asks for as many as are missing).  0, or -1
 * without memory. */
static int offspring(struct ga *g, int n, int *noff)
{
	const struct hb_pollux_problem *pb = g->pb;
	int want = g->o->pop_size;

	*noff = 0;
	set_clear(g);
	for (int i = 0; i < n; i++)
		set_add(g, i);
	for (int round = 0, stall = 0; round < g->o->max_mating_rounds && *noff < want && stall < POLLUX_STALL_ROUNDS;
	     round++) {
		int matings = (want - *noff + 1) / 2, before = *noff;
		struct hb_pool *pool = NULL;

		draw_candidates(g, n, 4 * matings);
		g->mbase = hb_rng_u64(g->rng);
		if (g->nw > 1 && matings > 1 && 2.0 * matings * pb->njobs >= POLLUX_PAR_MIN_ROWS) {
			if (workers_new(g) < 0)
				return -1;
			pool = pb->pool;
		}
		hb_pool_run(pool, matings, mate_task, g);
		for (int k = 0; k < 2 * matings && *noff < want; k++) {
			const int *c = g->kids + (size_t)k * g->L;
			int slot = n + *noff;

			if (duplicate(g, c, g->kh[k]))
				continue;
			memcpy(g->x + (size_t)slot * g->L, c, hb_pollux_packed_len(c, pb->njobs) * sizeof(int));
			g->h[slot] = g->kh[k];
			set_add(g, slot);
			(*noff)++;
		}
		stall = *noff > before ? 0 : stall + 1;
	}
	return 0;
}

/* The best FITNESS of the population (its objective's bits). */
static uint64_t front_signature(const struct ga *g, int n)
{
	double best = 0.0;
	uint64_t sig;

	for (int i = 0; i < n; i++)
		if (g->f[2 * i] < best)
			best = g->f[2 * i];
	memcpy(&sig, &best, sizeof(sig));
	return sig;
}

void hb_pollux_result_free(struct hb_pollux_result *r)
{
	free(r->best);
	free(r->front);
	free(r->fpacked);
	free(r->foff);
	memset(r, 0, sizeof(*r));
}

/* The search from dense (init) or packed (pinit, poff) initial matrices,
 * its front dense or packed (packed). */
static int search_run(const struct hb_pollux_problem *pb, const int *init, const int *pinit, const size_t *poff,
		      int ninit, const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, int packed,
		      struct hb_pollux_result *out, struct hb_error *err);

int hb_pollux_search(const struct hb_pollux_problem *pb, const int *init, int ninit,
		     const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, struct hb_pollux_result *out,
		     struct hb_error *err)
{
	return search_run(pb, init, NULL, NULL, ninit, opts, rng, 0, out, err);
}

int hb_pollux_search_packed(const struct hb_pollux_problem *pb, const int *init, const size_t *off, int ninit,
			    const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, struct hb_pollux_result *out,
			    struct hb_error *err)
{
	return search_run(pb, NULL, init, off, ninit, opts, rng, 1, out, err);
}

static int search_run(const struct hb_pollux_problem *pb, const int *init, const int *pinit, const size_t *poff,
		      int ninit, const struct hb_pollux_ga_opts *opts, struct hb_rng *rng, int packed,
		      struct hb_pollux_result *out, struct hb_error *err)
{
	struct hb_pollux_ga_opts def;
	struct ga g;
	int n = 0, best = -1, rc = -1;
	uint64_t front_sig;
	size_t D = (size_t)pb->njobs * (size_t)pb->nnodes; /* a dense matrix */

	memset(out, 0, sizeof(*out));
	if (!opts) {
		hb_pollux_ga_opts_default(&def);
		opts = &def;
	}
	if (pb->njobs < 1 || pb->nnodes < 1 || opts->pop_size < 1 || opts->generations < 1 || ninit < 0)
		return hb_input_error(err, "pollux search: %d jobs, %d nodes, population %d, %d generations: "
				      "need at least 1 of each", pb->njobs, pb->nnodes, opts->pop_size,
				      opts->generations);
	if (ga_new(&g, pb, opts, ninit, rng) < 0) {
		ga_free(&g);
		return hb_runtime_error(err, "pollux search: out of memory");
	}
	/* Initial population: repaired, without duplicates. */
	for (int k = 0; k < (ninit > 0 ? ninit : 1); k++) {
		int *x = g.x + (size_t)n * g.L;

		if (ninit > 0 && pinit)
			work_from_packed(&g.child[0], pinit + poff[k], pb->njobs, pb->nnodes);
		else
			work_from_dense(&g.child[0], ninit > 0 ? init + k * D : pb->base, pb->njobs, pb->nnodes);
		repair(pb, &g.s, &g.child[0], rng, 0);
		work_pack(&g.child[0], pb->njobs, pb->nnodes, x);
		g.h[n] = hb_pollux_hash(x, hb_pollux_packed_len(x, pb->njobs));
		if (duplicate(&g, x, g.h[n]))
			continue;
		set_add(&g, n);
		n++;
	}
	/* Evaluation draws nothing, so all of them at once, after repair. */
	if (eval_slots(&g, 0, n, err) < 0)
		goto done;
	survive(&g, n, n);
	front_sig = front_signature(&g, n);
	for (int gen = 1, same = 0; gen < opts->generations; gen++) {
		int noff;
		uint64_t sig;

		if (offspring(&g, n, &noff) < 0) {
			hb_runtime_error(err, "pollux search: out of memory");
			goto done;
		}
		if (eval_slots(&g, n, n + noff, err) < 0)
			goto done;
		survive(&g, n + noff, n + noff < opts->pop_size ? n + noff : opts->pop_size);
		n = n + noff < opts->pop_size ? n + noff : opts->pop_size;
		/* Converged: the best FITNESS has not changed for
		 * stale_generations x (J + 1) generations (the artifact runs
		 * all 100; crossover recombines rows, so a problem of more jobs
		 * keeps improving longer: with 5, one job stops after 10 flat
		 * generations and 19 or more jobs always run every
		 * generation). */
		sig = front_signature(&g, n);
		same = sig == front_sig ? same + 1 : 0;
		front_sig = sig;
		if (opts->stale_generations > 0 && same >= opts->stale_generations * (pb->njobs + 1))
			break;
		if (opts->max_cell_evals > 0 && (double)g.evals * pb->njobs * pb->nnodes >= opts->max_cell_evals)
			break;
	}
	for (int i = 0; i < n; i++) {
		if (g.rank[i] != 0)
			continue;
		if (best < 0 || g.f[2 * i] < g.f[2 * best])
			best = i;
		out->nfront++;
	}
	out->best = malloc(D * sizeof(int));
	if (packed) {
		size_t cells = 0;

		out->foff = malloc(((size_t)out->nfront + 1) * sizeof(size_t));
		for (int i = 0; i < n; i++)
			if (g.rank[i] == 0)
				cells += hb_pollux_packed_len(g.x + (size_t)i * g.L, pb->njobs);
		out->fpacked = malloc((cells > 0 ? cells : 1) * sizeof(int));
	} else {
		out->front = malloc((size_t)out->nfront * D * sizeof(int));
	}
	if (!out->best || (packed ? !out->foff || !out->fpacked : !out->front)) {
		hb_runtime_error(err, "pollux search: out of memory");
		goto done;
	}
	dense_from_packed(g.x + (size_t)best * g.L, pb->njobs, pb->nnodes, out->best);
	out->fitness = -g.f[2 * best];
	out->utility = -g.f[2 * best + 1];
	if (packed)
		out->foff[0] = 0;
	for (int i = 0, k = 0; i < n; i++) {
		const int *x = g.x + (size_t)i * g.L;

		if (g.rank[i] != 0)
			continue;
		if (packed) {
			const size_t len = hb_pollux_packed_len(x, pb->njobs);

			memcpy(out->fpacked + out->foff[k], x, len * sizeof(int));
			out->foff[k + 1] = out->foff[k] + len;
			k++;
		} else {
			dense_from_packed(x, pb->njobs, pb->nnodes, out->front + (size_t)k++ * D);
		}
	}
	out->evaluations = g.evals;
	rc = 0;
done:
	ga_free(&g);
	if (rc < 0)
		hb_pollux_result_free(out);
	return rc;
}
