/*
 * iidp.c: the JABAS configuration solver as an exact min-max search.
 *
 * Sections: the min-max core (feasibility by reachability, the parametric
 * search, the reference DP, the shared backtrack); worker-count rules; the
 * solver (hb_iidp_solve: candidate (B_L, M) bounded, then solved best
 * first); formatting.  The solver object and its caches are in
 * iidp_cache.c, the answers by allocation shape in iidp_shape.c.  The
 * exactness argument and the tie-breaking rules are in iidp.h.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iidp.h"
#include "iidp_priv.h"
#include "strutil.h"

/* ---- the min-max core -------------------------------------------------- */

void hb_iidp_scratch_free(struct hb_iidp_scratch *s)
{
	if (!s)
		return;
	free(s->reach);
	free(s->cand);
	free(s->dp);
	free(s->best);
	memset(s, 0, sizeof(*s));
}

static int grow(void **buf, size_t *cap, size_t n, size_t elem)
{
	void *p;

	if (n <= *cap)
		return 0;
	p = realloc(*buf, n * elem);
	if (!p)
		return -1;
	*buf = p;
	*cap = n;
	return 0;
}

/* Number of n_GA in [0, gamax] with t(n_GA) <= T: a prefix, as t is
 * non-decreasing in n_GA.  The division is only a first guess; the result is
 * settled on the same expression every other path evaluates. */
static int ga_count(const struct hb_perf_coef *c, int gamax, double T)
{
	long g;
	double q;

	if (gamax < 0 || hb_perf_iter_s(c, 0) > T)
		return 0;
	if (!(c->step_s > 0.0))
		return gamax + 1;
	q = (T - c->base_s) / c->step_s;
	g = q >= (double)gamax ? (long)gamax + 1 : (long)floor(q) + 1;
	if (g < 0)
		g = 0;
	while (g > 0 && hb_perf_iter_s(c, g - 1) > T)
		g--;
	while (g <= gamax && hb_perf_iter_s(c, g) <= T)
		g++;
	return (int)g;
}

struct mm {
	const struct hb_iidp_pair *pairs;
	int N;             /* pairs */
	int M;             /* workers to place */
	int W;             /* most workers one pair can take: M - (N - 1) */
	unsigned char *L;  /* layers L_0..L_{N-1}, each M+1 bytes: L_k = sums reachable by pairs 0..k-1 */
	double *D;         /* reference DP layers D_0..D_{N-1} */
	double *best;      /* reference: best_t of the current pair */
};

static int pair_cap(const struct mm *p, int k)
{
	int c = p->pairs[k].cap;
	return c < p->W ? c : p->W;
}

/* Is every pair able to run within T with the workers summing to M?  Fills
 * the layers L_1..L_{N-1} on the way (L_0 is set by the caller). */
static int feasible(struct mm *p, double T)
{
	size_t stride = (size_t)p->M + 1;

	for (int k = 0; k < p->N; k++) {
		const unsigned char *in = p->L + (size_t)k * stride;
		const struct hb_perf_coef *coef = p->pairs[k].coef;
		int cap = pair_cap(p, k);

		if (k == p->N - 1) {
			/* Last pair: only the sum M matters. */
			for (int n = 1; n <= cap; n++) {
				int g = ga_count(&coef[n - 1], p->W / n - 1, T);
				for (int j = 1; j <= g; j++)
					if (in[p->M - j * n])
						return 1;
			}
			return 0;
		} else {
			unsigned char *out = p->L + (size_t)(k + 1) * stride;
			int hi = p->M - (p->N - (k + 1)); /* later pairs need >= 1 each */
			int any = 0;

			memset(out, 0, stride);
			for (int n = 1; n <= cap; n++) {
				int g = ga_count(&coef[n - 1], p->W / n - 1, T);
				if (g == 0)
					continue;
				/* out[m] |= OR_{j=1..g} in[m - j n]: a window of g
				 * along each residue class mod n. */
				for (int r = 0; r < n && r <= hi; r++) {
					int cnt = 0, i = 1;
					for (int m = r + n; m <= hi; m += n, i++) {
						cnt += in[m - n];
						if (i > g)
							cnt -= in[m - (g + 1) * n];
						out[m] |= (unsigned char)(cnt != 0);
					}
				}
			}
			for (int m = 0; m <= hi && !any; m++)
				any = out[m];
			if (!any)
				return 0;
		}
	}
	return 0;
}

/* Does pair k admit w workers within T? */
static int admits(const struct mm *p, int k, int w, double T)
{
	int cap = pair_cap(p, k);

	for (int n = 1; n <= cap && n <= w; n++)
		if (w % n == 0 && hb_perf_iter_s(&p->pairs[k].coef[n - 1], w / n - 1) <= T)
			return 1;
	return 0;
}

/* Walk back from the last pair: each takes the largest admissible w whose
 * remainder the earlier pairs can complete within T (reach_prev). */
static int backtrack(const struct mm *p, double T, int (*reach_prev)(const struct mm *, int, int, double),
		     int *w_out)
{
	int rem = p->M;

	for (int k = p->N - 1; k >= 0; k--) {
		int w, chosen = 0;
		for (w = rem - k; w >= 1; w--) {
			if (admits(p, k, w, T) && reach_prev(p, k, rem - w, T)) {
				chosen = w;
				break;
			}
		}
		if (!chosen)
			return -1;
		w_out[k] = chosen;
		rem -= chosen;
	}
	return rem == 0 ? 0 : -1;
}

static int reach_layers(const struct mm *p, int k, int x, double T)
{
	(void)T; /* the layers were built for T */
	return p->L[(size_t)k * ((size_t)p->M + 1) + (size_t)x] != 0;
}

static int check_args(const struct hb_iidp_pair *pairs, int npairs, int M, struct hb_error *err)
{
	if (npairs < 1)
		return hb_input_error(err, "min-max: no pair");
	if (M < npairs)
		return hb_input_error(err, "min-max: M = %d workers < N_H = %d pairs (each needs one)", M, npairs);
	for (int k = 0; k < npairs; k++) {
		if (pairs[k].cap < 1 || !pairs[k].coef)
			return hb_input_error(err, "min-max: pair %d has no configuration (cap %d)", k, pairs[k].cap);
		/* t must be finite and non-decreasing in n_GA (step >= 0). */
		for (int n = 1; n <= pairs[k].cap; n++)
			if (!isfinite(pairs[k].coef[n - 1].base_s) || !isfinite(pairs[k].coef[n - 1].step_s) ||
			    pairs[k].coef[n - 1].step_s < 0.0)
				return hb_input_error(err, "min-max: pair %d, n_vsw %d: time %g + n_GA x %g is invalid", k,
						      n, pairs[k].coef[n - 1].base_s, pairs[k].coef[n - 1].step_s);
	}
	return 0;
}

static void swapd(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* k-th smallest of a[0..n) (0-based), reordering a. */
static double select_kth(double *a, long n, long k)
{
	long lo = 0, hi = n - 1;

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2, lt = lo, i = lo, gt = hi;
		double x = a[lo], y = a[mid], z = a[hi], pv;

		pv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		while (i <= gt) {
			if (a[i] < pv)
				swapd(&a[lt++], &a[i++]);
			else if (a[i] > pv)
				swapd(&a[i], &a[gt--]);
			else
				i++;
		}
		if (k < lt)
			hi = lt - 1;
		else if (k > gt)
			lo = gt + 1;
		else
			return pv;
	}
	return a[k];
}

/* Pair k's table equals an earlier pair's (same node, or another node of
 * the same GPU type and links): its candidate times are already listed. */
static int same_as_earlier(const struct hb_iidp_pair *pairs, int k)
{
	for (int j = 0; j < k; j++)
		if (pairs[j].cap == pairs[k].cap &&
		    (pairs[j].coef == pairs[k].coef ||
		     memcmp(pairs[j].coef, pairs[k].coef, (size_t)pairs[k].cap * sizeof(*pairs[k].coef)) == 0))
			return 1;
	return 0;
}

/* Move the a[i] < v (dir -1), > v (dir 1) or >= v (dir 0) to the front by
 * swaps, so a[0..n) keeps its values (phase 1 narrows a prefix and then
 * returns to the whole list); returns how many were moved. */
static long filter(double *a, long n, double v, int dir)
{
	long j = 0;

	for (long i = 0; i < n; i++)
		if (dir < 0 ? a[i] < v : dir > 0 ? a[i] > v : a[i] >= v)
			swapd(&a[j++], &a[i]);
	return j;
}

/* Necessary for feasibility at T: the pairs' smallest admissible worker
 * counts fit in M and their largest reach M. */
static int capacity_ok(const struct mm *p, double T)
{
	long lo = 0, hi = 0;
	int wmin = 0, wmax = 0;

	for (int k = 0; k < p->N; k++) {
		int cap = pair_cap(p, k);

		/* The pairs of one node share one coefficient array and sit side
		 * by side (table_build): same counts, computed once.  The integer
		 * sums are those of the pair-by-pair loop. */
		if (k > 0 && p->pairs[k].coef == p->pairs[k - 1].coef && p->pairs[k].cap == p->pairs[k - 1].cap) {
			lo += wmin;
			hi += wmax;
			continue;
		}
		wmin = wmax = 0;
		for (int n = 1; n <= cap; n++) {
			int g = ga_count(&p->pairs[k].coef[n - 1], p->W / n - 1, T);
			if (g > 0 && wmin == 0)
				wmin = n;
			if (n * g > wmax)
				wmax = n * g;
		}
		if (wmin == 0)
			return 0;
		lo += wmin;
		hi += wmax;
	}
	return lo <= p->M && hi >= p->M;
}

/* A lower bound on the optimum in O(N_H cap) per probe: every pair runs at
 * least its cheapest configuration, and below the least T meeting
 * capacity_ok nothing is feasible (the bisection keeps capacity_ok false at
 * the value returned). */
static double minmax_lower_bound(const struct hb_iidp_pair *pairs, int npairs, int M)
{
	struct mm p = { pairs, npairs, M, M - (npairs - 1), NULL, NULL, NULL };
	double lo = -INFINITY, hi = -INFINITY;

	for (int k = 0; k < npairs; k++) {
		double mn = INFINITY, mx = -INFINITY;

		if (k > 0 && pairs[k].coef == pairs[k - 1].coef && pairs[k].cap == pairs[k - 1].cap)
			continue; /* same node: same extremes (a max is order-free) */
		for (int n = 1; n <= pair_cap(&p, k); n++) {
			double a = hb_perf_iter_s(&pairs[k].coef[n - 1], 0);
			double b = hb_perf_iter_s(&pairs[k].coef[n - 1], p.W / n - 1);
			mn = a < mn ? a : mn;
			mx = b > mx ? b : mx;
		}
		lo = mn > lo ? mn : lo;
		hi = mx > hi ? mx : hi;
	}
	/* At hi every configuration runs: capacity_ok holds there. */
	if (capacity_ok(&p, lo))
		return lo;
	/* lo is a lower bound at every step (capacity_ok fails there), and a
	 * bound only orders and prunes the B_L, never changes the answer
	 * (hb_iidp_solve): 1e-4 of the time is as good for pruning as 1e-12
	 * and costs a third of the probes. */
	for (int it = 0; it < 60 && hi - lo > 1e-4 * hi; it++) {
		double mid = 0.5 * (lo + hi);
		if (capacity_ok(&p, mid))
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

int hb_iidp_minmax_fast(const struct hb_iidp_pair *pairs, int npairs, int M, struct hb_iidp_scratch *scratch,
			double *t_out, int *w_out, struct hb_error *err)
{
	struct hb_iidp_scratch local = { 0 };
	struct hb_iidp_scratch *sc = scratch ? scratch : &local;
	struct mm p = { pairs, npairs, M, M - (npairs - 1), NULL, NULL, NULL };
	double lo = -INFINITY, best = INFINITY, last = NAN; /* last: T the layers were built for */
	size_t ncand = 0, need = 0;
	long n;
	int rc = -1;

	if (check_args(pairs, npairs, M, err) != 0)
		return -1;
	/* No pair runs faster than its cheapest configuration. */
	for (int k = 0; k < npairs; k++) {
		double m = INFINITY;
		for (int c = 1; c <= pair_cap(&p, k); c++) {
			double t = hb_perf_iter_s(&pairs[k].coef[c - 1], 0);
			if (t < m)
				m = t;
		}
		if (m > lo)
			lo = m;
	}
	for (int k = 0; k < npairs; k++) {
		if (same_as_earlier(pairs, k))
			continue; /* identical pair: same candidate times */
		for (int c = 1; c <= pair_cap(&p, k); c++)
			need += (size_t)(p.W / c);
	}
	if (grow((void **)&sc->cand, &sc->cand_cap, need ? need : 1, sizeof(double)) != 0 ||
	    grow((void **)&sc->reach, &sc->reach_cap, (size_t)npairs * ((size_t)M + 1), 1) != 0) {
		hb_runtime_error(err, "min-max: out of memory (M = %d, N_H = %d)", M, npairs);
		goto out;
	}
	for (int k = 0; k < npairs; k++) {
		if (same_as_earlier(pairs, k))
			continue;
		for (int c = 1; c <= pair_cap(&p, k); c++) {
			for (int ga = 0; ga < p.W / c; ga++) {
				double t = hb_perf_iter_s(&pairs[k].coef[c - 1], ga);
				if (t >= lo)
					sc->cand[ncand++] = t;
			}
		}
	}
	p.L = sc->reach;
	memset(p.L, 0, (size_t)M + 1);
	p.L[0] = 1;
	/* Phase 1: the least candidate meeting a necessary condition that
	 * costs O(N_H cap) to test.  Every smaller value is infeasible. */
	n = (long)ncand;
	{
		double lb = INFINITY;
		long m = n;
		while (m > 0) {
			double v = select_kth(sc->cand, m, m / 2);
			int ok = capacity_ok(&p, v);
			if (ok)
				lb = v;
			m = filter(sc->cand, m, v, ok ? -1 : 1);
		}
		n = filter(sc->cand, n, lb, 0);
	}
	/* Phase 2: gallop upwards from that bound (the optimum is usually one of
	 * the first few values above it), then halve between the last infeasible
	 * and the first feasible value.  Feasibility is monotone in T, so the
	 * least feasible candidate is the optimum D[N_H][M]. */
	for (long step = 1; n > 0; step *= 2) {
		double v = select_kth(sc->cand, n, (step < n ? step : n) - 1);
		int ok = feasible(&p, v);
		last = v;
		n = filter(sc->cand, n, v, ok ? -1 : 1);
		if (ok) {
			best = v;
			break;
		}
	}
	while (n > 0) {
		double v = select_kth(sc->cand, n, n / 2);
		int ok = feasible(&p, v);
		last = v;
		if (ok)
			best = v;
		n = filter(sc->cand, n, v, ok ? -1 : 1);
	}
	/* The layers must be those of T = best for the walk back. */
	if (!isfinite(best) || (last != best && !feasible(&p, best)) ||
	    backtrack(&p, best, reach_layers, w_out) != 0) {
		hb_runtime_error(err, "min-max: no assignment found (M = %d, N_H = %d)", M, npairs);
		goto out;
	}
	*t_out = best;
	rc = 0;
out:
	if (!scratch)
		hb_iidp_scratch_free(&local);
	return rc;
}

static int reach_dp(const struct mm *p, int k, int x, double T)
{
	return p->D[(size_t)k * ((size_t)p->M + 1) + (size_t)x] <= T;
}

int hb_iidp_minmax_dp(const struct hb_iidp_pair *pairs, int npairs, int M, struct hb_iidp_scratch *scratch,
		      double *t_out, int *w_out, struct hb_error *err)
{
	struct hb_iidp_scratch local = { 0 };
	struct hb_iidp_scratch *sc = scratch ? scratch : &local;
	struct mm p = { pairs, npairs, M, M - (npairs - 1), NULL, NULL, NULL };
	size_t stride = (size_t)M + 1;
	double T = INFINITY;
	int rc = -1;

	if (check_args(pairs, npairs, M, err) != 0)
		return -1;
	if (grow((void **)&sc->dp, &sc->dp_cap, (size_t)npairs * stride, sizeof(double)) != 0 ||
	    grow((void **)&sc->best, &sc->best_cap, (size_t)p.W + 1, sizeof(double)) != 0) {
		hb_runtime_error(err, "min-max DP: out of memory (M = %d, N_H = %d)", M, npairs);
		goto out;
	}
	p.D = sc->dp;
	p.best = sc->best;
	for (size_t m = 0; m < stride; m++)
		p.D[m] = INFINITY;
	p.D[0] = -INFINITY; /* no pair, no worker: feasible at any time */
	for (int k = 0; k < npairs; k++) {
		const double *prev = p.D + (size_t)k * stride;
		int cap = pair_cap(&p, k);

		/* best_t_k(w): the fastest (n_vsw, n_GA) with n_vsw (n_GA+1) = w. */
		for (int w = 0; w <= p.W; w++)
			p.best[w] = INFINITY;
		for (int n = 1; n <= cap; n++) {
			for (int ga = 0; n * (ga + 1) <= p.W; ga++) {
				double t = hb_perf_iter_s(&pairs[k].coef[n - 1], ga);
				if (t < p.best[n * (ga + 1)])
					p.best[n * (ga + 1)] = t;
			}
		}
		if (k == npairs - 1) {
			for (int w = 1; w <= p.W; w++) {
				double x = prev[M - w] > p.best[w] ? prev[M - w] : p.best[w];
				if (x < T)
					T = x;
			}
		} else {
			double *cur = p.D + (size_t)(k + 1) * stride;
			int hi = M - (npairs - (k + 1));

			for (size_t m = 0; m < stride; m++)
				cur[m] = INFINITY;
			for (int m = k + 1; m <= hi; m++) {
				double v = INFINITY;
				for (int w = 1; w <= m - k; w++) {
					double x = prev[m - w] > p.best[w] ? prev[m - w] : p.best[w];
					if (x < v)
						v = x;
				}
				cur[m] = v;
			}
		}
	}
	if (!isfinite(T) || backtrack(&p, T, reach_dp, w_out) != 0) {
		hb_runtime_error(err, "min-max DP: no assignment found (M = %d, N_H = %d)", M, npairs);
		goto out;
	}
	*t_out = T;
	rc = 0;
out:
	if (!scratch)
		hb_iidp_scratch_free(&local);
	return rc;
}

int hb_iidp_pair_best(const struct hb_iidp_pair *pair, int w, int maxn, int *n_vsw, int *n_ga, double *t)
{
	int cap = pair->cap < maxn ? pair->cap : maxn, found = 0;
	double bt = INFINITY;

	for (int n = 1; n <= cap && n <= w; n++) {
		double v;
		if (w % n != 0)
			continue;
		v = hb_perf_iter_s(&pair->coef[n - 1], w / n - 1);
		if (!found || v <= bt) { /* <=: ties go to more VSWs, fewer GA steps */
			found = 1;
			bt = v;
			*n_vsw = n;
			*n_ga = w / n - 1;
		}
	}
	if (found)
		*t = bt;
	return found;
}

/* ---- worker counts ----------------------------------------------------- */

/* round(a / b) with ties to even, as Python 3's round(); a >= 0, b > 0. */
static long round_half_even(long a, long b)
{
	long q = a / b, r = a % b;

	if (2 * r > b || (2 * r == b && (q & 1)))
		q++;
	return q;
}

long hb_iidp_round_m(long global_bs, int local_bs)
{
	if (global_bs <= 0 || local_bs <= 0)
		return 0;
	return round_half_even(global_bs, 2L * local_bs);
}

long hb_iidp_runtime_workers(long cur_global_bs, long target_global_bs, int local_bs, int n_gpus)
{
	long nw;

	if (target_global_bs <= 0 || local_bs <= 0)
		return 0;
	nw = round_half_even(target_global_bs, local_bs);
	if (target_global_bs > cur_global_bs) {
		nw += nw % 2;
		if ((long)local_bs * nw <= cur_global_bs)
			return 0;
	} else {
		nw -= nw % 2;
		if ((long)local_bs * nw >= cur_global_bs)
			return 0;
	}
	return nw >= n_gpus && nw > 0 ? nw : 0;
}

/* ---- the solver -------------------------------------------------------- */

void hb_iidp_result_free(struct hb_iidp_result *r)
{
	if (!r)
		return;
	free(r->pairs);
	r->pairs = NULL;
	r->npairs = 0;
}

static void result_reset(struct hb_iidp_result *r, int sync)
{
	memset(r, 0, sizeof(*r));
	r->sync = sync;
}

int iidp_validate_alloc(const struct hb_perf *pf, const int *alloc, int *n_gpus, struct hb_error *err)
{
	if (!alloc)
		return hb_input_error(err, "IIDP solver: no allocation");
	for (int i = 0; i < pf->nnodes; i++)
		if (alloc[i] % 2 != 0)
			return hb_input_error(err,
					      "IIDP solver: node %s gets %d GPUs; JABAS allocates identical pairs, so "
					      "the count must be even",
					      pf->nodes[i].name, alloc[i]);
	return hb_perf_alloc_gpus(pf, alloc, n_gpus, NULL, err);
}

/* Fill r (pairs allocated) from a solved table; without the pairs for a
 * summary (s->summary_only). */
static int result_fill(const struct hb_iidp_solver *s, const struct table *t, int M, double T,
		       struct hb_iidp_result *r, struct hb_error *err)
{
	struct hb_iidp_pair_cfg *pc = NULL;

	if (!s->summary_only && !(pc = malloc((size_t)t->npairs * sizeof(*pc))))
		return hb_runtime_error(err, "IIDP solver: out of memory");
	for (int k = 0; pc && k < t->npairs; k++) {
		pc[k].node = t->pair_node[k];
		pc[k].workers = s->w[k];
		pc[k].gpus = 2;
		if (!hb_iidp_pair_best(&t->pairs[k], s->w[k], t->pairs[k].cap, &pc[k].n_vsw, &pc[k].n_ga,
				       &pc[k].iter_s)) {
			free(pc);
			return hb_runtime_error(err, "IIDP solver: pair %d cannot serve %d workers", k, s->w[k]);
		}
	}
	free(r->pairs);
	r->pairs = pc;
	r->npairs = pc ? t->npairs : 0;
	r->found = 1;
	r->why[0] = '\0';
	r->local_bs = t->local_bs;
	r->m = M;
	r->global_bs = 2L * M * t->local_bs;
	r->n_gpus = t->n_gpus;
	r->iter_s = T;
	r->throughput = (double)r->global_bs / T;
	r->sync = s->perf->sync;
	return 0;
}

static int lbs_in(const int *v, int n, int b)
{
	for (int i = 0; i < n; i++)
		if (v[i] == b)
			return 1;
	return 0;
}

/* Explain an empty candidate list or a local batch outside it. */
static void why_lbs(const struct hb_perf *pf, const int *alloc, int want, struct hb_iidp_result *r)
{
	int maxl = 0;

	for (int i = 0; i < pf->nnodes; i++) {
		int m;
		if (alloc[i] == 0)
			continue;
		m = hb_perf_max_lbs(pf, pf->nodes[i].gpu);
		if (maxl == 0 || m < maxl)
			maxl = m;
	}
	if (want > 0 && want > maxl)
		snprintf(r->why, sizeof(r->why), "local batch %d exceeds maxB_L %d of the allocation", want, maxl);
	else if (want > 0)
		snprintf(r->why, sizeof(r->why),
			 "local batch %d is not profiled (with n_max >= 1) on every GPU type of the allocation", want);
	else
		snprintf(r->why, sizeof(r->why), "no multiple of minB_L %d up to maxB_L %d is profiled on every GPU type",
			 pf->min_lbs, maxl);
}

/* Solve (alloc, local_bs, M) into best when it beats *best_f; t is the
 * cached table of (alloc, local_bs) when the caller has it, else NULL. */
static int solve_one(struct hb_iidp_solver *s, const int *alloc, int local_bs, int M, int method, struct table *t,
		     struct hb_iidp_result *best, double *best_f, struct hb_error *err)
{
	int owned = 0, rc = 0;
	double T;

	if (!t && iidp_table_get(s, alloc, local_bs, &t, &owned, err) != 0)
		return -1;
	if (iidp_table_solve(s, t, M, method, &T, !owned, err) != 0) {
		rc = -1;
	} else {
		double f = 2.0 * M * local_bs / T;
		/* An exact tie keeps the smaller B_L (the artifact's strict > over
		 * ascending B_L), whatever order the B_L are visited in. */
		if (f > *best_f || (f == *best_f && best->found && local_bs < best->local_bs)) {
			*best_f = f;
			rc = result_fill(s, t, M, T, best, err);
		}
	}
	if (owned)
		iidp_table_free(t);
	return rc;
}

/* Over the limit: evict entries one at a time (CLOCK, iidp_hmap_evict) until
 * under it; summaries while they hold half of the limit (a summary is a few
 * lookups of the memos, which cost bounds and solves to rebuild), tables
 * (with their memos) otherwise.  Only when no entry is left and the slot
 * arrays alone exceed the limit is everything released (a flush).  Called
 * between requests only: no table is in use. */
static void maybe_flush(struct hb_iidp_solver *s)
{
	size_t limit = s->limit, target, freed;

	if (s->budget) {
		/* What the other solvers of the budget do not hold, at least
		 * its floor (struct hb_iidp_budget). */
		const struct hb_iidp_budget *b = s->budget;
		size_t others;

		iidp_budget_report(s);
		others = b->used - s->st.cache_bytes;
		limit = b->limit > others && b->limit - others > b->floor ? b->limit - others : b->floor;
	}
	/* Down to 7/8 of the limit: room for the next requests' entries, so
	 * that eviction runs in batches rather than before every request. */
	target = limit - limit / 8;
	if (s->st.cache_bytes <= limit)
		return;
	while (s->st.cache_bytes > target) {
		if (s->shapes.n > 0 && (s->shape_bytes > limit / 2 || s->tables.n == 0)) {
			struct shape_entry *e = iidp_hmap_evict(&s->shapes);
			size_t b = sizeof(*e) + (size_t)e->nkey * sizeof(long) + (size_t)e->extra;

			s->shape_bytes -= b;
			s->st.cache_bytes -= b;
			free(e);
		} else if (s->tables.n > 0) {
			struct table *t = iidp_hmap_evict(&s->tables);

			s->st.cache_bytes -= t->bytes;
			iidp_table_free(t);
		} else {
			hb_iidp_solver_clear_cache(s);
			s->st.flushes++;
			return;
		}
		s->st.evictions++;
	}
	freed = iidp_hmap_shrink(&s->shapes);
	s->shape_bytes -= freed;
	s->st.cache_bytes -= freed;
	s->st.cache_bytes -= iidp_hmap_shrink(&s->tables);
	iidp_budget_report(s);
}

int hb_iidp_solve_m(struct hb_iidp_solver *s, const int *alloc, int local_bs, int M, int method,
		    struct hb_iidp_result *out, struct hb_error *err)
{
	int ng, *lbs = NULL, nl = 0, rc;
	double bf = -1.0;

	result_reset(out, s->perf->sync);
	if (iidp_validate_alloc(s->perf, alloc, &ng, err) != 0)
		return -1;
	if (local_bs <= 0 || local_bs % s->perf->min_lbs != 0)
		return hb_input_error(err, "IIDP solver: local batch %d is not a positive multiple of minB_L %d",
				      local_bs, s->perf->min_lbs);
	if (hb_perf_alloc_lbs(s->perf, alloc, &lbs, &nl, err) != 0)
		return -1;
	if (!lbs_in(lbs, nl, local_bs)) {
		why_lbs(s->perf, alloc, local_bs, out);
		free(lbs);
		return 0;
	}
	free(lbs);
	if (M < ng / 2) {
		snprintf(out->why, sizeof(out->why), "M = %d workers per group < N_H = %d pairs", M, ng / 2);
		return 0;
	}
	maybe_flush(s);
	rc = solve_one(s, alloc, local_bs, M, method, NULL, out, &bf, err);
	if (rc != 0)
		hb_iidp_result_free(out);
	return rc;
}

/* A candidate (B_L, M) of a request and its throughput bound. */
struct lcand {
	int lbs;
	int M;
	double f_ub;       /* 2 M B_L / (a lower bound on the time) >= the achievable F */
	struct table *t;   /* the cached table bound_one met, for solve_one; NULL: none */
};

static int cmp_lcand(const void *a, const void *b)
{
	const struct lcand *x = a, *y = b;

	if (x->f_ub != y->f_ub)
		return x->f_ub > y->f_ub ? -1 : 1;
	return x->lbs - y->lbs;
}

static int bound_one(struct hb_iidp_solver *s, const int *alloc, struct lcand *c, struct hb_error *err)
{
	struct memo *mo = NULL;
	struct table *t;
	long i;
	int owned;

	if (iidp_table_get(s, alloc, c->lbs, &t, &owned, err) != 0)
		return -1;
	/* The bound is memoised with the answers; an answer is its own bound. */
	if (!owned && (i = iidp_memo_entry(s, t, c->M)) >= 0)
		mo = &t->memo->rec[i];
	if (mo && !mo->exact && mo->t == -INFINITY)
		mo->t = minmax_lower_bound(t->pairs, t->npairs, c->M);
	c->f_ub = 2.0 * c->M * c->lbs / (mo ? mo->t : minmax_lower_bound(t->pairs, t->npairs, c->M));
	/* Valid until the next maybe_flush: the request's solves use it. */
	c->t = owned ? NULL : t;
	if (owned)
		iidp_table_free(t);
	return 0;
}

/* A throughput bound on candidate c from its B_L's entry of the shape's
 * bounds (struct sb_lbs; iidp.h says why each part holds): the busiest of
 * the N_H pairs serves u >= ceil(M / N_H) workers, so T >= max(c, a + u b)
 * and F = 2 M B_L / T <= 2 M B_L / max(c, a + u b); and F <= f_inf.
 * Widened by a relative 1e-9 for rounding, as hb_iidp_shape_max_throughput.
 * INFINITY where the entry gives none (ok != 1: no bound, or a node without
 * a table, which the table build then reports). */
static double cheap_f_ub(const struct sb_lbs *e, const struct lcand *c, int nh)
{
	const long u = (c->M + (long)nh - 1) / nh;
	double t, f;

	if (e->ok != 1)
		return INFINITY;
	t = e->a + (double)u * e->b;
	t = t > e->c ? t : e->c;
	f = 2.0 * c->M * c->lbs / t;
	f = f < e->f_inf ? f : e->f_inf;
	return f * (1.0 + 1e-9);
}

/* solve_hinted's fast path with the shape's bounds sb (nsb entries, by
 * ascending B_L, the list the candidates c come from): every candidate
 * starts with its cheap bound (cheap_f_ub); the one with the largest bound
 * is taken next: with a cheap bound it gets its tight one (bound_one: the
 * table, the memo), kept as the lesser of the two (both hold); with a tight
 * one it is solved.  A candidate whose bound cannot beat the best found
 * (or tie with it at a smaller B_L) is skipped, as in the loop over all
 * tight bounds, and the answer is the same (any valid bounds, any order:
 * the best is the largest F, ties to the smaller B_L); only the B_L whose
 * cheap bound reaches the answer need a table. */
static int solve_best_first(struct hb_iidp_solver *s, const struct hb_iidp_request *req, struct lcand *c, int nc,
			    const struct sb_lbs *sb, int nsb, int nh, struct hb_iidp_result *out, double *bf,
			    struct hb_error *err)
{
	/* f_ub holds the bound; state: 0 cheap, 1 tight, 2 done (solved or skipped) */
	unsigned char state[64], *st = nc <= 64 ? state : malloc((size_t)nc);
	int rc = -1;

	if (!st)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	for (int i = 0, j = 0; i < nc; i++) {
		while (j < nsb && sb[j].lbs < c[i].lbs)
			j++;
		c[i].f_ub = j < nsb && sb[j].lbs == c[i].lbs ? cheap_f_ub(&sb[j], &c[i], nh) : INFINITY;
		st[i] = 0;
	}
	for (;;) {
		int k = -1;

		/* The largest bound; ties to the smaller B_L (c is by ascending B_L). */
		for (int i = 0; i < nc; i++)
			if (st[i] != 2 && (k < 0 || c[i].f_ub > c[k].f_ub))
				k = i;
		if (k < 0)
			break;
		if (out->found && (c[k].f_ub < *bf || (c[k].f_ub == *bf && c[k].lbs > out->local_bs))) {
			s->st.pruned++;
			st[k] = 2;
		} else if (st[k] == 0) {
			const double cheap = c[k].f_ub;

			if (bound_one(s, req->alloc, &c[k], err) != 0)
				goto out;
			c[k].f_ub = c[k].f_ub < cheap ? c[k].f_ub : cheap;
			st[k] = 1;
		} else {
			if (solve_one(s, req->alloc, c[k].lbs, c[k].M, req->method, c[k].t, out, bf, err) != 0)
				goto out;
			st[k] = 2;
		}
	}
	rc = 0;
out:
	if (st != state)
		free(st);
	return rc;
}

/* A scratch array of the solver (buf, *cap entries of size bytes) with
 * room for n entries: buf, or it grown (*cap updated), or NULL without
 * memory (buf is then untouched). */
static void *scratch_room(void *buf, int *cap, int n, size_t size)
{
	void *v;

	if (n <= *cap && buf)
		return buf;
	v = realloc(buf, (size_t)(n > 0 ? n : 1) * size);
	if (v)
		*cap = n > 0 ? n : 1;
	return v;
}

/* s->h_lbs with room for n entries; 0, or -1 without memory. */
static int h_lbs_room(struct hb_iidp_solver *s, int n)
{
	int *v = scratch_room(s->h_lbs, &s->h_lbs_cap, n, sizeof(int));

	if (!v)
		return -1;
	s->h_lbs = v;
	return 0;
}

/* hint_lbs without the per-type cache. */
static int lbs_direct(struct hb_iidp_solver *s, const int *alloc, int **out, int *nl, struct hb_error *err)
{
	int *v, n;

	if (hb_perf_alloc_lbs(s->perf, alloc, &v, &n, err) != 0)
		return -1;
	if (h_lbs_room(s, n) < 0) {
		free(v);
		return hb_runtime_error(err, "IIDP solver: out of memory");
	}
	if (n)
		memcpy(s->h_lbs, v, (size_t)n * sizeof(int));
	free(v);
	*out = s->h_lbs;
	*nl = n;
	return 0;
}

/* The hinted allocation's candidate local batches into s->h_lbs (*out),
 * valid until the next call: a copy, as the cache may drop the set's list
 * during the solve (maybe_flush). */
static int hint_lbs(struct hb_iidp_solver *s, const int *alloc, int **out, int *nl, struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	uint64_t mask = 0;
	struct lbs_list *l;

	if (pf->ngpus > 64)
		return lbs_direct(s, alloc, out, nl, err);
	for (int j = 0; j < s->hint_n; j++)
		mask |= (uint64_t)1 << pf->nodes[s->hint_node[j]].gpu;
	if (!(l = hmap_get(&s->lbs_by_types, &mask, sizeof(mask)))) {
		int *v, n;

		if (hb_perf_alloc_lbs(pf, alloc, &v, &n, err) != 0)
			return -1;
		l = malloc(sizeof(*l) + (size_t)(n ? n : 1) * sizeof(int));
		if (!l) {
			free(v);
			return hb_runtime_error(err, "IIDP solver: out of memory");
		}
		l->nl = n;
		if (n)
			memcpy(l->lbs, v, (size_t)n * sizeof(int));
		free(v);
		if (iidp_hmap_put(&s->lbs_by_types, &mask, sizeof(mask), l) == 0) {
			free(l);
			return lbs_direct(s, alloc, out, nl, err);
		}
	}
	if (h_lbs_room(s, l->nl) < 0)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	*nl = l->nl;
	if (l->nl)
		memcpy(s->h_lbs, l->lbs, (size_t)l->nl * sizeof(int));
	*out = s->h_lbs;
	return 0;
}

/* hb_iidp_solve on an allocation whose used nodes are in the hint (and
 * validated). */
static int solve_hinted(struct hb_iidp_solver *s, const struct hb_iidp_request *req, struct hb_iidp_result *out,
			struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	int ng = 0, nh, *lbs = NULL, nl = 0, nc = 0, rc = -1;
	struct lcand *c = NULL;
	double bf = -1.0;
	/* why no B_L became a candidate, formatted after the scan */
	enum { WHY_NONE, WHY_RUNTIME, WHY_FEW_WORKERS, WHY_BOUNDS, WHY_EXACT } why = WHY_NONE;
	int why_b = 0;
	long why_m = 0;

	for (int j = 0; j < s->hint_n; j++)
		ng += s->hint_gpus[j];
	nh = ng / 2;
	s->hcomm_ok = 0; /* a new allocation: its communication is not known yet */
	if (req->global_bs <= 0)
		return hb_input_error(err, "IIDP solver: global batch %ld must be > 0", req->global_bs);
	if (req->m_rule != HB_IIDP_M_ROUND && req->m_rule != HB_IIDP_M_RUNTIME && req->m_rule != HB_IIDP_M_EXACT)
		return hb_input_error(err, "IIDP solver: unknown worker-count rule %d", req->m_rule);
	if (req->m_rule == HB_IIDP_M_RUNTIME && req->cur_global_bs <= 0)
		return hb_input_error(err, "IIDP solver: the run-time rule needs the current global batch (got %ld)",
				      req->cur_global_bs);
	if (req->local_bs < 0 || (req->local_bs > 0 && req->local_bs % pf->min_lbs != 0))
		return hb_input_error(err, "IIDP solver: local batch %d is not a positive multiple of minB_L %d",
				      req->local_bs, pf->min_lbs);
	if (hint_lbs(s, req->alloc, &lbs, &nl, err) != 0)
		return -1;
	if (nl == 0 || (req->local_bs > 0 && !lbs_in(lbs, nl, req->local_bs))) {
		why_lbs(pf, req->alloc, req->local_bs, out);
		return 0;
	}
	if (!(c = scratch_room(s->h_cand, &s->h_cand_cap, nl, sizeof(*c)))) {
		hb_runtime_error(err, "IIDP solver: out of memory");
		goto out;
	}
	s->h_cand = c;
	/* The (B_L, M) problems of the request, ascending in B_L. */
	for (int i = 0; i < nl; i++) {
		int b = lbs[i];
		long M;

		if (req->local_bs > 0 && b != req->local_bs)
			continue;
		if (req->m_rule == HB_IIDP_M_RUNTIME) {
			long nw = hb_iidp_runtime_workers(req->cur_global_bs, req->global_bs, b, ng);
			if (nw == 0) {
				if (nc == 0)
					why = WHY_RUNTIME;
				continue;
			}
			M = nw / 2;
		} else if (req->m_rule == HB_IIDP_M_EXACT && req->global_bs % (2L * b) != 0) {
			/* B_G is not 2 M B_L at this B_L: skipped, a larger one may divide it */
			if (nc == 0) {
				why = WHY_EXACT;
				why_b = b;
			}
			continue;
		} else {
			/* exact: M = B_G / (2 B_L), which is also round(B_G / B_L / 2) */
			M = hb_iidp_round_m(req->global_bs, b);
			if (M < nh) {
				if (nc == 0) {
					why = WHY_FEW_WORKERS;
					why_b = b;
					why_m = M;
				}
				break; /* Algorithm 1: larger B_L only lowers M */
			}
		}
		if (M > (long)(INT32_MAX / 4)) {
			hb_input_error(err, "IIDP solver: M = %ld workers is too large", M);
			goto out;
		}
		/* Outside the model's bounds (perfmodel.h): not a candidate (a
		 * larger B_L may still round inside, so the scan goes on). */
		if (!hb_perf_gbs_in_bounds(pf, 2 * M * b)) {
			if (nc == 0) {
				why = WHY_BOUNDS;
				why_b = b;
				why_m = M;
			}
			continue;
		}
		c[nc].lbs = b;
		c[nc].M = (int)M;
		c[nc].t = NULL;
		c[nc++].f_ub = INFINITY;
	}
	/* Only the last reason recorded before the first candidate can be the
	 * answer's why; formatted once here, not once per B_L (the run-time rule
	 * rejects every B_L of most adaptation requests, and formatting was a
	 * visible share of a trace replay). */
	switch (why) {
	case WHY_NONE:
		break;
	case WHY_RUNTIME:
		snprintf(out->why, sizeof(out->why),
			 "run-time rule: no even worker count moves B_G %ld towards %ld with >= %d workers at any B_L",
			 req->cur_global_bs, req->global_bs, ng);
		break;
	case WHY_FEW_WORKERS:
		snprintf(out->why, sizeof(out->why), "B_G %ld at B_L %d gives M = %ld < N_H = %d pairs (needs B_G >= %ld)",
			 req->global_bs, why_b, why_m, nh, 2L * nh * why_b);
		break;
	case WHY_BOUNDS:
		snprintf(out->why, sizeof(out->why), "B_G %ld at B_L %d is outside the model's bounds [%ld, %ld]",
			 2 * why_m * why_b, why_b, pf->min_gbs, pf->max_gbs);
		break;
	case WHY_EXACT:
		snprintf(out->why, sizeof(out->why),
			 "exact rule: B_G %ld is not 2 M B_L with M >= N_H = %d at any B_L (last tried %d)",
			 req->global_bs, nh, why_b);
		break;
	}
	maybe_flush(s);
	/* A summary whose shape's bounds are cached: visit best-first on them
	 * (solve_best_first), most B_L never need their table. */
	if (req->method == HB_IIDP_FAST && nc > 1 && s->bkey_len > 0) {
		/* A held copy first: its shape is being ranked, and looking it up
		 * leaves a cached copy cold, to be evicted for something else. */
		const struct held_bound *e = hmap_get_h(&s->held, s->bkey_h, s->bkey, s->bkey_len);
		const struct sb_lbs *sb = NULL;
		int nsb = 0;

		if (e && e->bytes > 0) {
			sb = (const struct sb_lbs *)((const char *)e->key + s->bkey_len);
			nsb = (int)(e->bytes / sizeof(*sb));
		} else {
			const struct shape_entry *v = hmap_get_h(&s->shapes, s->bkey_h, s->bkey, s->bkey_len);

			if (v && v->extra > 0) {
				sb = (const struct sb_lbs *)((const char *)v->key + s->bkey_len);
				nsb = v->extra / (int)sizeof(*sb);
			}
		}
		if (sb) {
			if (solve_best_first(s, req, c, nc, sb, nsb, nh, out, &bf, err) != 0)
				goto out;
			rc = 0;
			goto out;
		}
	}
	/* Fast path: visit the B_L by decreasing throughput bound and skip those
	 * whose bound cannot beat (or tie with a smaller B_L) the best so far.
	 * Exact: the bound is >= the throughput the B_L can reach.  The DP
	 * reference solves every B_L in ascending order. */
	if (req->method == HB_IIDP_FAST && nc > 1) {
		for (int i = 0; i < nc; i++)
			if (bound_one(s, req->alloc, &c[i], err) != 0)
				goto out;
		qsort(c, (size_t)nc, sizeof(*c), cmp_lcand);
	}
	for (int i = 0; i < nc; i++) {
		if (out->found && (c[i].f_ub < bf || (c[i].f_ub == bf && c[i].lbs > out->local_bs))) {
			s->st.pruned++;
			continue;
		}
		if (solve_one(s, req->alloc, c[i].lbs, c[i].M, req->method, c[i].t, out, &bf, err) != 0)
			goto out;
	}
	rc = 0;
out:
	s->hcomm_ok = 0;
	if (rc != 0)
		hb_iidp_result_free(out);
	/* c and lbs are the solver's scratch */
	return rc;
}

/* The answer key (iidp.h) of the n used nodes' (class, GPUs) in key,
 * sorted as shape_add sorts them (a class's entries are adjacent), into
 * akey (n + 1 words); returns its length. */
int iidp_answer_key(const long *key, int n, long *akey)
{
	int na = 0;

	for (int k = 0; k < n; k++) {
		const long c = key[2 * k], a = key[2 * k + 1];

		/* class < nnodes and GPUs <= a cluster's count: both fit 32 bits */
		if (na > 0 && (long)((uint64_t)akey[na - 1] >> 32) == c)
			akey[na - 1] += a;
		else
			akey[na++] = (long)((uint64_t)(uint32_t)c << 32 | (uint32_t)a);
	}
	akey[na++] = n > 1;
	return na;
}

/* The key of the hinted allocation's shape bounds (as hb_iidp_shape_bound
 * files them) into bkey: the bounds are a function of the shape, and an
 * allocation's tables are those of its shape's canonical allocation up to
 * which identical node holds what (hb_iidp_solve_summary), so the bounds of
 * its shape bound its answers too.  The adaptation steps of a job run on
 * the allocation the auto-scaler chose among shapes whose bounds it had
 * filed.  skey (3 + 2 nnodes words) is scratch here: only a summary uses
 * it otherwise, and a summary's solve does not come here. */
static void hint_bound_key(struct hb_iidp_solver *s)
{
	long *k = s->skey;
	int n = 0;

	/* (kind, GPUs) of the used nodes, sorted as shape_add sorts them. */
	for (int j = 0; j < s->hint_n; j++, n++) {
		const long c = s->node_class[s->hint_node[j]], a = s->hint_gpus[j];
		int i = n;

		while (i > 0 && (k[2 * i - 2] > c || (k[2 * i - 2] == c && k[2 * i - 1] > a))) {
			k[2 * i] = k[2 * i - 2];
			k[2 * i + 1] = k[2 * i - 1];
			i--;
		}
		k[2 * i] = c;
		k[2 * i + 1] = a;
	}
	n = iidp_answer_key(k, n, s->bkey + 3);
	s->bkey[0] = s->bkey[1] = 0;
	s->bkey[2] = SHAPE_KEY_BOUND;
	s->bkey_h = hash_words(s->bkey, 3, hash_words(s->bkey + 3, (size_t)n, 1469598103934665603ULL));
	s->bkey_len = (3 + (size_t)n) * sizeof(long);
}

int hb_iidp_solve(struct hb_iidp_solver *s, const struct hb_iidp_request *req, struct hb_iidp_result *out,
		  struct hb_error *err)
{
	int ng, rc;

	result_reset(out, s->perf->sync);
	if (s->hint_n > 0) /* a shape miss: validated when the shape was built */
		return solve_hinted(s, req, out, err);
	if (!req->alloc)
		return iidp_validate_alloc(s->perf, req->alloc, &ng, err);
	/* One scan of the cluster's nodes for the whole request, instead of
	 * one per candidate B_L (table keys) and one for the B_L list; it
	 * checks what iidp_validate_alloc checks, which words the error of an
	 * allocation it refuses. */
	for (int i = 0, bad = 0; i < s->perf->nnodes && !bad; i++) {
		const int a = req->alloc[i];

		if (a == 0)
			continue;
		bad = a < 0 || a % 2 != 0 || a > s->perf->nodes[i].ngpus;
		s->hint_node[s->hint_n] = i;
		s->hint_gpus[s->hint_n++] = a;
		if (bad) {
			s->hint_n = 0;
			return iidp_validate_alloc(s->perf, req->alloc, &ng, err) != 0 ? -1
				: hb_runtime_error(err, "IIDP solver: allocation refused");
		}
	}
	if (s->hint_n == 0)
		return iidp_validate_alloc(s->perf, req->alloc, &ng, err) != 0 ? -1
			: hb_runtime_error(err, "IIDP solver: allocation refused");
	if (s->limit > 0 && req->method == HB_IIDP_FAST)
		hint_bound_key(s);
	rc = solve_hinted(s, req, out, err);
	s->hint_n = 0;
	s->bkey_len = 0;
	return rc;
}

/* ---- formatting -------------------------------------------------------- */

int hb_iidp_solve_one_gpu(const struct hb_perf *pf, int node, long global_bs, int local_bs,
			  struct hb_iidp_result *out, struct hb_error *err)
{
	struct hb_perf_coef *co = NULL;
	struct hb_perf_comm c;
	int *alloc, *lbs = NULL, nl = 0, rc = -1;

	result_reset(out, pf->sync);
	if (node < 0 || node >= pf->nnodes || pf->nodes[node].ngpus < 1)
		return hb_input_error(err, "IIDP solver: node %d has no GPU to run one-GPU IIDP on", node);
	if (global_bs <= 0)
		return hb_input_error(err, "IIDP solver: global batch %ld <= 0", global_bs);
	if (local_bs < 0 || (local_bs > 0 && local_bs % pf->min_lbs != 0))
		return hb_input_error(err, "IIDP solver: local batch %d is not a positive multiple of minB_L %d",
				      local_bs, pf->min_lbs);
	alloc = calloc((size_t)pf->nnodes, sizeof(*alloc));
	if (!alloc)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	alloc[node] = 1;
	if (hb_perf_alloc_lbs(pf, alloc, &lbs, &nl, err) != 0 || hb_perf_comm_eval(pf, alloc, node, &c, err) != 0)
		goto out;
	snprintf(out->why, sizeof(out->why), "GPU %s of node %s: no local batch%s runs two VSWs (one per group)",
		 pf->gpus[pf->nodes[node].gpu].name, pf->nodes[node].name, local_bs > 0 ? " of the one asked" : "");
	for (int i = 0; i < nl; i++) {
		const struct hb_perf_lbs *l = hb_perf_find_lbs(pf, pf->nodes[node].gpu, lbs[i]);
		long M = hb_iidp_round_m(global_bs, lbs[i]);
		struct hb_iidp_pair pair;
		int nv, ga;
		double t, f;

		if (M < 1) {
			if (!out->found)
				snprintf(out->why, sizeof(out->why), "M = round(B_G / B_L / 2) = 0 from B_L %d on: "
					 "B_G %ld is below two local batches", lbs[i], global_bs);
			break;
		}
		if ((local_bs > 0 && lbs[i] != local_bs) || !l || l->n_cap < 2 || M > INT_MAX)
			continue;
		free(co);
		co = malloc((size_t)(l->n_cap / 2) * sizeof(*co));
		if (!co) {
			hb_runtime_error(err, "IIDP solver: out of memory");
			goto out;
		}
		/* Option n of the one pair: the GPU with both groups' 2n VSWs. */
		for (int n = 1; n <= l->n_cap / 2; n++)
			if (hb_perf_coef_eval(pf, l, &c, 2 * n, pf->tau, &co[n - 1], err) != 0)
				goto out;
		pair.cap = l->n_cap / 2;
		pair.coef = co;
		if (!hb_iidp_pair_best(&pair, (int)M, pair.cap, &nv, &ga, &t))
			continue;
		f = 2.0 * (double)M * lbs[i] / t;
		if (out->found && !(f > out->throughput))
			continue;
		if (!out->pairs && !(out->pairs = malloc(sizeof(*out->pairs)))) {
			hb_runtime_error(err, "IIDP solver: out of memory");
			goto out;
		}
		out->pairs[0] = (struct hb_iidp_pair_cfg){ .node = node, .n_vsw = nv, .n_ga = ga, .workers = (int)M,
							    .gpus = 1, .iter_s = t };
		out->npairs = 1;
		out->found = 1;
		out->why[0] = '\0';
		out->local_bs = lbs[i];
		out->m = (int)M;
		out->global_bs = 2L * M * lbs[i];
		out->n_gpus = 1;
		out->iter_s = t;
		out->throughput = f;
	}
	rc = 0;
out:
	if (rc != 0)
		hb_iidp_result_free(out);
	free(co);
	free(lbs);
	free(alloc);
	return rc;
}

int hb_iidp_format_config(const struct hb_perf *perf, const struct hb_iidp_result *r, char *buf, size_t size)
{
	size_t off = 0;
	int first = 1;
	char *used;

	if (size == 0)
		return -1;
	buf[0] = '\0';
	if (!r->found)
		return snprintf(buf, size, "[]") < (int)size ? 0 : -1;
	used = calloc((size_t)r->npairs, 1);
	if (!used)
		return -1;
	off += (size_t)snprintf(buf + off, size - off, "[");
	for (int k = 0; k < r->npairs && off < size; k++) {
		const struct hb_iidp_pair_cfg *a = &r->pairs[k];
		int gpus = 0;

		if (used[k])
			continue;
		for (int j = k; j < r->npairs; j++) {
			const struct hb_iidp_pair_cfg *b = &r->pairs[j];
			if (!used[j] && b->node == a->node && b->n_vsw == a->n_vsw && b->n_ga == a->n_ga) {
				used[j] = 1;
				gpus += b->gpus == 1 ? 1 : 2;
			}
		}
		off += (size_t)snprintf(buf + off, size - off, "%s'%s:%dGPU,VSW:%d,GA:%d'", first ? "" : ", ",
					perf->nodes[a->node].name, gpus, a->gpus == 1 ? 2 * a->n_vsw : a->n_vsw, a->n_ga);
		first = 0;
	}
	if (off < size)
		off += (size_t)snprintf(buf + off, size - off, "]");
	free(used);
	return off < size ? 0 : -1;
}

int hb_iidp_format_line(const struct hb_perf *perf, const struct hb_iidp_result *r, char *buf, size_t size)
{
	char *cfg = malloc(size ? size : 1);
	int n = -1;

	if (cfg && hb_iidp_format_config(perf, r, cfg, size ? size : 1) == 0)
		n = snprintf(buf, size, "GBS: %ld | LBS: %d | weight sync method: %s | config: %s", r->global_bs,
			     r->local_bs, r->sync == HB_SYNC_SWS ? "sequential" : "overlap", cfg);
	free(cfg);
	return n >= 0 && (size_t)n < size ? 0 : -1;
}
