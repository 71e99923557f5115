/*
 * iidp.c: the JABAS configuration solver as an exact min-max search.
 *
 * Sections: the min-max core (feasibility by reachability, the parametric
 * search, the reference DP, the shared backtrack); worker-count rules; the
 * solver object with its caches; formatting.  The exactness argument and the
 * tie-breaking rules are in iidp.h.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iidp.h"
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

/* ---- caches ------------------------------------------------------------ */

/* Open-addressing hash map (linear probing) from byte strings to owned
 * values, with per-entry eviction: a hit sets the entry's reference bit and
 * hmap_evict takes the next entry a CLOCK hand finds unreferenced (clearing
 * the bits it passes), so a full cache drops its coldest entries instead of
 * everything (a whole flush made the next requests rebuild what they were
 * about to use).  A key lives either in its own allocation (copied by the
 * put) or inside the value (keys_in_val: the caller passes a pointer into
 * the value, which saves an allocation per entry). */
struct hmap_slot {
	uint64_t h;        /* hash of key, 0 = empty slot */
	void *key;         /* owned copy, or a pointer into val (keys_in_val) */
	uint32_t klen;     /* key bytes */
	uint32_t ref;      /* CLOCK reference bit: set by a hit, cleared by the hand */
	void *val;         /* owned by the map's user, freed through the callbacks */
};

struct hmap {
	struct hmap_slot *s;
	size_t cap;        /* power of two, 0 when empty */
	size_t n;
	size_t hand;       /* CLOCK hand: the next slot hmap_evict examines */
	int keys_in_val;   /* 1: slot keys point into the values, never freed alone */
};

static uint64_t hash_bytes(const void *key, size_t n)
{
	const unsigned char *p = key;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* A hash of n words, a word at a time (hash_bytes costs a multiply per
 * byte, and the shape cache is asked tens of millions of times on a
 * Philly-scale trace).  Never 0, like hash_bytes. */
static uint64_t hash_words(const long *w, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h = (h ^ (uint64_t)w[i]) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* The slot of key (hash h), or SIZE_MAX. */
static size_t hmap_find_slot(const struct hmap *m, uint64_t h, const void *key, size_t klen)
{
	if (m->cap == 0)
		return SIZE_MAX;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct hmap_slot *sl = &m->s[i];

		if (sl->h == 0)
			return SIZE_MAX;
		if (sl->h == h && sl->klen == klen && memcmp(sl->key, key, klen) == 0)
			return i;
	}
}

/* Lookup with the key's hash h given; a hit marks the entry referenced. */
static void *hmap_get_h(struct hmap *m, uint64_t h, const void *key, size_t klen)
{
	const size_t i = hmap_find_slot(m, h, key, klen);

	if (i == SIZE_MAX)
		return NULL;
	m->s[i].ref = 1;
	return m->s[i].val;
}

static void hmap_place(struct hmap_slot *s, size_t cap, struct hmap_slot e)
{
	size_t i = e.h & (cap - 1);

	while (s[i].h != 0)
		i = (i + 1) & (cap - 1);
	s[i] = e;
}

static void *hmap_get(struct hmap *m, const void *key, size_t klen)
{
	return m->cap == 0 ? NULL : hmap_get_h(m, hash_bytes(key, klen), key, klen);
}

/* Insert a key known to be absent, its hash h given; returns the bytes the
 * map itself took (the key copy and any growth of the slot array), or 0 on
 * failure.  A new entry starts unreferenced: only a hit proves it useful. */
static size_t hmap_put_h(struct hmap *m, uint64_t h, const void *key, size_t klen, void *val)
{
	struct hmap_slot e;
	size_t used = m->keys_in_val ? 1 : klen; /* > 0 on success */

	if (klen > UINT32_MAX)
		return 0;
	if (2 * (m->n + 1) > m->cap) {
		size_t nc = m->cap ? 2 * m->cap : 16;
		struct hmap_slot *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return 0;
		for (size_t i = 0; i < m->cap; i++)
			if (m->s[i].h)
				hmap_place(ns, nc, m->s[i]);
		used += (nc - m->cap) * sizeof(*ns);
		free(m->s);
		m->s = ns;
		m->cap = nc;
		m->hand = 0;
	}
	e.h = h;
	if (m->keys_in_val) {
		e.key = (void *)key;
	} else {
		if (!(e.key = malloc(klen ? klen : 1)))
			return 0;
		memcpy(e.key, key, klen);
	}
	e.klen = (uint32_t)klen;
	e.ref = 0;
	e.val = val;
	hmap_place(m->s, m->cap, e);
	m->n++;
	return used;
}

static size_t hmap_put(struct hmap *m, const void *key, size_t klen, void *val)
{
	return hmap_put_h(m, hash_bytes(key, klen), key, klen, val);
}

/* Remove slot i, shifting the later entries of its probe run back so that
 * every entry stays reachable from its home slot (no tombstones). */
static void hmap_remove_at(struct hmap *m, size_t i)
{
	const size_t mask = m->cap - 1;

	for (size_t j = (i + 1) & mask; m->s[j].h != 0; j = (j + 1) & mask) {
		size_t home = m->s[j].h & mask;
		/* j's entry may move to i unless its home lies cyclically in (i, j]. */
		int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);

		if (!stays) {
			m->s[i] = m->s[j];
			i = j;
		}
	}
	memset(&m->s[i], 0, sizeof(m->s[i]));
	m->n--;
}

/* The CLOCK hand's step: odd, so that it visits every slot of the
 * power-of-two array once per turn, and large, so that consecutive
 * evictions are far apart.  A hand stepping slot by slot empties the
 * region it sweeps while inserts land everywhere, so the region it has not
 * reached for a turn fills up: at half load overall, linear probing there
 * met runs of thousands of slots (a Philly replay probed 250 slots per
 * insert into the summary cache on average). */
#define HMAP_HAND_STEP 0x9E3779B1u

/* Evict one entry by CLOCK; returns the value (the caller frees it and
 * counts its bytes) or NULL when the map is empty. */
static void *hmap_evict(struct hmap *m)
{
	if (m->n == 0)
		return NULL;
	/* Two turns at most: the first clears every bit it passes. */
	for (;;) {
		struct hmap_slot *sl = &m->s[m->hand & (m->cap - 1)];
		void *v;

		if (sl->h == 0 || sl->ref) {
			sl->ref = 0;
			m->hand = (m->hand + HMAP_HAND_STEP) & (m->cap - 1);
			continue;
		}
		v = sl->val;
		if (!m->keys_in_val)
			free(sl->key);
		/* The hand stays: an entry shifted back into this slot is next. */
		hmap_remove_at(m, m->hand & (m->cap - 1));
		return v;
	}
}

/* After evictions: a slot array at most 1/8 full is rehashed into one a
 * quarter of its size (the CLOCK hand walks empty slots, and a cache that
 * once held many entries would keep their slots).  Returns the bytes freed. */
static size_t hmap_shrink(struct hmap *m)
{
	size_t nc = m->cap;
	struct hmap_slot *ns;

	if (m->cap <= 64 || 8 * m->n > m->cap)
		return 0;
	while (nc > 64 && 8 * m->n <= nc)
		nc /= 4;
	if (nc < 64)
		nc = 64;
	if (!(ns = calloc(nc, sizeof(*ns))))
		return 0; /* keep the larger array */
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].h)
			hmap_place(ns, nc, m->s[i]);
	free(m->s);
	m->s = ns;
	nc = m->cap - nc;
	m->cap -= nc;
	m->hand = 0;
	return nc * sizeof(*ns);
}

static void hmap_clear(struct hmap *m, void (*free_val)(void *))
{
	const int keys_in_val = m->keys_in_val;

	for (size_t i = 0; i < m->cap; i++) {
		if (m->s[i].h) {
			if (!keys_in_val)
				free(m->s[i].key);
			if (free_val)
				free_val(m->s[i].val);
		}
	}
	free(m->s);
	memset(m, 0, sizeof(*m));
	m->keys_in_val = keys_in_val;
}

/* The (allocation, B_L) table: per used node the coefficients for n_vsw =
 * 1..n_cap with that allocation's communication, and the pairs.  One
 * allocation holds the table, its arrays and its key (table_build); its
 * memos live in a second one (struct memo_set), so that building, finding
 * and evicting a table costs a malloc or two, not one per array and one per
 * memo. */
struct table {
	int local_bs;
	int n_gpus;
	int npairs;
	int klen;                     /* bytes of key */
	int *pair_node;               /* perf node of each pair */
	struct hb_iidp_pair *pairs;   /* point into coef */
	struct hb_perf_coef *coef;    /* per used node, n_cap entries each */
	int *key;                     /* the table's key in the cache (B_L, used (node, GPUs)) */
	struct memo_set *memo;        /* M -> struct memo; NULL until the first */
	size_t bytes;                 /* held by the table with its memos: what evicting it frees */
};

struct memo {
	double t;                     /* optimal time, or a lower bound on it when !exact */
	int exact;                    /* 1: t and w are the answer; 0: only the bound is known */
	int M;                        /* the memo's key (>= 1: M >= N_H >= 1 pairs) */
};

/* A table's memos, in one block: n records in the order they came (memos
 * are never removed alone: they go with their table), the workers of
 * record i at w + i npairs, and an open-addressed index on M (idx[j] = 1 +
 * the record, 0 = empty) of 2 cap slots, so at most half full.  Records are
 * named by their position, which a growth keeps. */
struct memo_set {
	uint32_t n, cap;              /* records held, room for */
	struct memo *rec;             /* [cap] */
	int *w;                       /* [cap npairs] */
	uint32_t *idx;                /* [2 cap], cap a power of two */
};

/* A summary in the shape cache, its key after it (one allocation). */
struct shape_entry {
	struct hb_iidp_summary sum;
	int nkey;                     /* words of key */
	int extra;                    /* bytes after the key (a bound's blob, hb_iidp_shape_bound), else 0 */
	long key[];
};

/* A held shape's bounds: one copy for all its holders (refs), its blob
 * after the key (the shape cache's bound key, nkey words). */
struct held_bound {
	uint64_t h;                   /* hash of key */
	uint32_t refs;                /* holders */
	uint32_t nkey;                /* words of key */
	size_t bytes;                 /* of the blob */
	long key[];
};

static void table_free(void *v)
{
	struct table *t = v;

	if (!t)
		return;
	free(t->memo);
	free(t);
}

static size_t memo_set_bytes(uint32_t cap, int npairs)
{
	return sizeof(struct memo_set) + (size_t)cap * (sizeof(struct memo) + (size_t)npairs * sizeof(int) +
							2 * sizeof(uint32_t));
}

static uint32_t memo_slot(int M, uint32_t mask)
{
	return (uint32_t)(((uint64_t)(uint32_t)M * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

/* The record of M in t's memos, or -1. */
static long memo_find(const struct table *t, int M)
{
	const struct memo_set *ms = t->memo;

	if (!ms)
		return -1;
	for (uint32_t mask = 2 * ms->cap - 1, j = memo_slot(M, mask);; j = (j + 1) & mask) {
		uint32_t i = ms->idx[j];

		if (i == 0)
			return -1;
		if (ms->rec[i - 1].M == M)
			return (long)i - 1;
	}
}

/* Bit 34 of a shape cache key's third word: the entry holds the shape's
 * bounds (hb_iidp_shape_bound), not a summary.  shape_key never sets it. */
#define SHAPE_KEY_BOUND ((long)1 << 34)

/* The blob of a struct hb_iidp_shape_bound: nl entries, one per candidate
 * B_L (ascending), of what hb_iidp_shape_max_throughput needs (iidp.h says
 * why each bounds F).  Plain values: the solver's cache keeps a copy. */
struct sb_lbs {
	double f_inf;      /* sum over pairs of 2 B_L max_n n / step_n */
	double a;          /* min over nodes, n of base_n - step_n (>= 0) */
	double b;          /* min over nodes, n of step_n / n (> 0) */
	double c;          /* min over nodes, n of base_n: no pair runs faster */
	int lbs;           /* B_L */
	int ok;            /* 0: some used node has no table at B_L (no answer); -1: no bound (INFINITY) */
};

struct hb_iidp_solver {
	const struct hb_perf *perf;   /* borrowed, prepared */
	struct hmap tables;           /* (B_L, used (node, GPUs)) -> struct table */
	struct hmap shapes;           /* (request, shape) -> struct shape_entry */
	size_t shape_bytes;           /* the part of st.cache_bytes that shapes holds (the rest: tables) */
	size_t limit;                 /* cache limit, bytes; 0 = no caching (under a budget: its limit) */
	struct hmap held;             /* bound key -> struct held_bound: the shared copies of held bounds */
	struct hb_iidp_budget *budget; /* shared with other solvers (borrowed), or NULL */
	size_t reported;              /* st.cache_bytes as last counted in budget->used */
	struct hb_iidp_stats st;
	struct hb_iidp_scratch sc;
	int *key;                     /* 2 nnodes + 1 ints: B_L, then (node, GPUs) of the used nodes */
	int *node_class;              /* [nnodes]: least node index of the same kind (classify_nodes) */
	int *next_in_class;           /* [nnodes]: next node of the same kind, -1 after the last */
	long *skey;                   /* shape key scratch: 4 + nnodes words (shape_key), 2 nnodes (hint_bound_key) */
	int *full;                    /* [nnodes] zeros between calls: a shape spread out for a miss */
	/* During one hb_iidp_solve (or the shape miss that calls it): the used
	 * nodes of the allocation being solved, ascending, so that its table
	 * keys, B_L list and GPU count need no further scan of the cluster's
	 * nodes; hint_n = 0 between calls. */
	int *hint_node, *hint_gpus;
	int hint_n;
	/* The communication of each hinted node (hb_perf_comm_eval), computed
	 * by the request's first table build and reused by its others: it is
	 * a function of the allocation, not of B_L.  hcomm_ok = 0 between
	 * requests. */
	struct hb_perf_comm *hcomm;
	int hcomm_ok;
	struct hmap lbs_by_types;     /* GPU types used (bit mask) -> candidate B_L (struct lbs_list) */
	/* 1 during the solve of a summary (hb_iidp_solve_summary), which reads
	 * none of the answer's pairs: result_fill leaves them out. */
	int summary_only;
	/* A summary's solve: the key (bkey, bkey_len bytes, hash bkey_h) of
	 * its shape's bounds in the shape cache (hb_iidp_shape_bound), for
	 * solve_hinted to look up once it has evicted what it evicts; bkey_len
	 * = 0 otherwise. */
	long *bkey;
	size_t bkey_len;
	uint64_t bkey_h;
	int *w;                       /* workers per pair of the current problem */
	int w_cap;
	/* solve_hinted's scratch, grown as needed (it ran a million times on
	 * two days of Philly under JABAS, and allocating both per solve was
	 * a tenth of the main thread in malloc): the request's B_L list and
	 * its (B_L, M) candidates. */
	int *h_lbs;
	int h_lbs_cap;
	struct lcand *h_cand;
	int h_cand_cap;
};

/* Nodes whose tables are interchangeable: table_build reads of a node only
 * its GPU type (the profile) and its two all-reduce fits (comm_eval; the
 * link name only names a missing fit in an error).  The GPU count only
 * bounds the allocation; it is part of the kind so that any node of a kind
 * can hold what another one holds (the canonical allocation of a shape). */
static int same_ar(const struct hb_perf_ar *a, const struct hb_perf_ar *b)
{
	return a->have == b->have && a->alpha == b->alpha && a->beta_ms == b->beta_ms && a->k_bw == b->k_bw;
}

static void classify_nodes(const struct hb_perf *pf, int *node_class, int *next_in_class)
{
	for (int i = 0; i < pf->nnodes; i++) {
		const struct hb_perf_node *a = &pf->nodes[i];

		node_class[i] = i;
		next_in_class[i] = -1;
		/* Class representatives only: a handful on any real cluster. */
		for (int j = 0; j < i; j++) {
			const struct hb_perf_node *b = &pf->nodes[j];

			if (node_class[j] == j && a->gpu == b->gpu && a->ngpus == b->ngpus &&
			    same_ar(&a->intra, &b->intra) && same_ar(&a->inter, &b->inter)) {
				node_class[i] = j;
				break;
			}
		}
	}
	/* Link each kind in node order, from the back. */
	for (int i = pf->nnodes - 1; i >= 0; i--) {
		int last = -1;

		for (int j = i + 1; j < pf->nnodes && last < 0; j++)
			if (node_class[j] == node_class[i])
				last = j;
		next_in_class[i] = last;
	}
}

int hb_iidp_solver_new(const struct hb_perf *perf, struct hb_iidp_solver **out, struct hb_error *err)
{
	struct hb_iidp_solver *s;

	*out = NULL;
	if (!perf || !perf->prepared)
		return hb_input_error(err, "IIDP solver: the performance model is not prepared");
	s = calloc(1, sizeof(*s));
	if (!s || !(s->key = calloc(2 * (size_t)perf->nnodes + 1, sizeof(int))) ||
	    !(s->node_class = calloc((size_t)perf->nnodes + 1, sizeof(int))) ||
	    !(s->next_in_class = calloc((size_t)perf->nnodes + 1, sizeof(int))) ||
	    !(s->skey = calloc(3 + 2 * (size_t)perf->nnodes, sizeof(long))) ||
	    !(s->bkey = calloc(4 + (size_t)perf->nnodes, sizeof(long))) ||
	    !(s->full = calloc((size_t)perf->nnodes + 1, sizeof(int)))) {
		if (s) {
			free(s->key);
			free(s->node_class);
			free(s->next_in_class);
			free(s->skey);
			free(s->bkey);
		}
		free(s);
		return hb_runtime_error(err, "IIDP solver: out of memory");
	}
	classify_nodes(perf, s->node_class, s->next_in_class);
	s->hint_node = malloc(((size_t)perf->nnodes + 1) * sizeof(int));
	s->hint_gpus = malloc(((size_t)perf->nnodes + 1) * sizeof(int));
	s->hcomm = malloc(((size_t)perf->nnodes + 1) * sizeof(*s->hcomm));
	if (!s->hint_node || !s->hint_gpus || !s->hcomm) {
		s->perf = perf;
		hb_iidp_solver_free(s);
		return hb_runtime_error(err, "IIDP solver: out of memory");
	}
	s->perf = perf;
	s->tables.keys_in_val = s->shapes.keys_in_val = s->held.keys_in_val = 1;
	s->limit = (size_t)64 << 20;
	*out = s;
	return 0;
}

/* Tell the budget what s holds now. */
static void budget_report(struct hb_iidp_solver *s)
{
	if (s->budget) {
		s->budget->used = s->budget->used - s->reported + s->st.cache_bytes;
		s->reported = s->st.cache_bytes;
	}
}

void hb_iidp_solver_clear_cache(struct hb_iidp_solver *s)
{
	hmap_clear(&s->tables, table_free);
	hmap_clear(&s->shapes, free);
	s->st.cache_bytes = 0;
	s->shape_bytes = 0;
	budget_report(s);
}

void hb_iidp_solver_free(struct hb_iidp_solver *s)
{
	if (!s)
		return;
	hb_iidp_solver_clear_cache(s); /* and tells its budget */
	hmap_clear(&s->held, free); /* unreleased holds: their holders outlived the solver */
	hb_iidp_scratch_free(&s->sc);
	free(s->key);
	free(s->node_class);
	free(s->next_in_class);
	free(s->skey);
	free(s->bkey);
	free(s->full);
	free(s->hint_node);
	free(s->hint_gpus);
	free(s->hcomm);
	hmap_clear(&s->lbs_by_types, free);
	free(s->w);
	free(s->h_lbs);
	free(s->h_cand);
	free(s);
}

void hb_iidp_solver_set_cache_limit(struct hb_iidp_solver *s, size_t bytes)
{
	if (s->budget)
		hb_iidp_solver_set_budget(s, NULL);
	s->limit = bytes;
	if (s->st.cache_bytes > bytes)
		hb_iidp_solver_clear_cache(s);
}

void hb_iidp_solver_set_budget(struct hb_iidp_solver *s, struct hb_iidp_budget *b)
{
	hb_iidp_solver_clear_cache(s); /* reports 0 to the old budget */
	s->budget = b;
	s->reported = 0;
	if (b)
		s->limit = b->limit;
}

void hb_iidp_solver_stats(const struct hb_iidp_solver *s, struct hb_iidp_stats *out)
{
	*out = s->st;
}

/* Round n up to a multiple of the alignment of a (the table's arrays share
 * one block). */
#define TABLE_ALIGN(n, a) (((n) + _Alignof(a) - 1) / _Alignof(a) * _Alignof(a))

/* Build the table of the key in s->key (k words: B_L, then the used nodes'
 * (node, GPUs) ascending) on alloc; every used node must have a feasible
 * profile at B_L (the caller checked with hb_perf_alloc_lbs).  The table,
 * its arrays and a copy of the key are one allocation of *bytes.  With
 * hinted = 1 the used nodes are s->hint_node in order and their
 * communication is taken from (or left in) s->hcomm. */
static int table_build(struct hb_iidp_solver *s, const int *alloc, int k, int hinted, struct table **out,
		       size_t *bytes, struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	const int local_bs = s->key[0], nused = (k - 1) / 2;
	size_t ncoef = 0, npairs = 0, off_coef, off_pairs, off_node, off_key, size;
	int ng = 0;
	struct table *t;
	char *blk;

	*out = NULL;
	for (int j = 0; j < nused; j++) {
		const int i = s->key[1 + 2 * j], a = s->key[2 + 2 * j];
		const struct hb_perf_lbs *l = hb_perf_find_lbs(pf, pf->nodes[i].gpu, local_bs);

		if (!l || l->n_cap < 1)
			return hb_input_error(err, "IIDP solver: GPU %s of node %s has no feasible profile at B_L %d",
					      pf->gpus[pf->nodes[i].gpu].name, pf->nodes[i].name, local_bs);
		ncoef += (size_t)l->n_cap;
		npairs += (size_t)(a / 2);
		ng += a;
	}
	off_coef = TABLE_ALIGN(sizeof(*t), struct hb_perf_coef);
	off_pairs = TABLE_ALIGN(off_coef + ncoef * sizeof(struct hb_perf_coef), struct hb_iidp_pair);
	off_node = TABLE_ALIGN(off_pairs + npairs * sizeof(struct hb_iidp_pair), int);
	off_key = off_node + npairs * sizeof(int);
	size = off_key + (size_t)k * sizeof(int);
	if (!(blk = malloc(size)))
		return hb_runtime_error(err, "IIDP solver: out of memory");
	t = (struct table *)blk;
	memset(t, 0, sizeof(*t));
	t->local_bs = local_bs;
	t->n_gpus = ng;
	t->npairs = (int)npairs;
	t->klen = k * (int)sizeof(int);
	t->coef = (struct hb_perf_coef *)(blk + off_coef);
	t->pairs = (struct hb_iidp_pair *)(blk + off_pairs);
	t->pair_node = (int *)(blk + off_node);
	t->key = (int *)(blk + off_key);
	memcpy(t->key, s->key, (size_t)k * sizeof(int));
	if (hinted && !s->hcomm_ok) {
		/* The hint counts the allocation (validated): no scan of alloc. */
		for (int j = 0; j < nused; j++)
			if (hb_perf_comm_eval_n(pf, s->key[1 + 2 * j], ng, nused, &s->hcomm[j], err) != 0) {
				free(blk);
				return -1;
			}
		s->hcomm_ok = 1;
	}
	ncoef = npairs = 0;
	for (int j = 0; j < nused; j++) {
		const int i = s->key[1 + 2 * j], a = s->key[2 + 2 * j];
		const struct hb_perf_lbs *l = hb_perf_find_lbs(pf, pf->nodes[i].gpu, local_bs);
		struct hb_perf_comm c;
		struct hb_perf_coef *co = t->coef + ncoef;

		if (hinted)
			c = s->hcomm[j];
		else if (hb_perf_comm_eval(pf, alloc, i, &c, err) != 0) {
			free(blk);
			return -1;
		}
		for (int n = 1; n <= l->n_cap; n++) {
			if (hb_perf_coef_eval(pf, l, &c, n, pf->tau, &co[n - 1], err) != 0) {
				free(blk);
				return -1;
			}
		}
		for (int q = 0; q < a / 2; q++) {
			t->pairs[npairs].cap = l->n_cap;
			t->pairs[npairs].coef = co;
			t->pair_node[npairs++] = i;
		}
		ncoef += (size_t)l->n_cap;
	}
	*bytes = size;
	*out = t;
	return 0;
}

/* The cached table, or a fresh one the caller must free (*owned = 1). */
static int table_get(struct hb_iidp_solver *s, const int *alloc, int local_bs, struct table **out, int *owned,
		     struct hb_error *err)
{
	size_t klen, bytes = 0, used;
	struct table *t;
	uint64_t h = 1469598103934665603ULL;
	int k = 1;

	*owned = 0;
	/* The used nodes only: an allocation spans a few nodes of a cluster of
	 * hundreds, and the (node, GPUs) list names it as well as the vector. */
	s->key[0] = local_bs;
	if (s->hint_n > 0) {
		for (int j = 0; j < s->hint_n; j++) {
			s->key[k++] = s->hint_node[j];
			s->key[k++] = s->hint_gpus[j];
		}
	} else {
		for (int i = 0; i < s->perf->nnodes; i++)
			if (alloc[i] != 0) {
				s->key[k++] = i;
				s->key[k++] = alloc[i];
			}
	}
	klen = (size_t)k * sizeof(int);
	/* A word at a time, as the shape cache (hash_bytes costs a multiply per byte). */
	for (int i = 0; i < k; i++)
		h = (h ^ (uint32_t)s->key[i]) * 0x9E3779B97F4A7C15ULL, h ^= h >> 29;
	h = h ? h : 1;
	if (s->limit > 0 && (t = hmap_get_h(&s->tables, h, s->key, klen)) != NULL) {
		s->st.table_hits++;
		*out = t;
		return 0;
	}
	s->st.table_misses++;
	if (table_build(s, alloc, k, s->hint_n > 0, &t, &bytes, err) != 0)
		return -1;
	if (s->limit == 0 || (used = hmap_put_h(&s->tables, h, t->key, klen, t)) == 0) {
		*owned = 1;
	} else {
		/* The table (its key inside) goes with it; the slot array stays. */
		t->bytes = bytes;
		s->st.cache_bytes += t->bytes + (used - 1);
	}
	*out = t;
	return 0;
}

/* The record of (t, M), created (as a bound-only entry) if absent; -1 when
 * memory runs out, which only costs a recomputation.  A growth moves the
 * records: a record is named by its position, never by a pointer kept
 * across this call. */
static long memo_entry(struct hb_iidp_solver *s, struct table *t, int M)
{
	struct memo_set *ms = t->memo;
	long i = memo_find(t, M);
	uint32_t mask, j;

	if (i >= 0)
		return i;
	if (!ms || ms->n == ms->cap) {
		const uint32_t nc = ms ? 2 * ms->cap : 4;
		const size_t nb = memo_set_bytes(nc, t->npairs), ob = ms ? memo_set_bytes(ms->cap, t->npairs) : 0;
		struct memo_set *nm;

		if (nc > UINT32_MAX / 4 || !(nm = malloc(nb)))
			return -1;
		/* Records, then workers, then the index: doubles first, then ints. */
		nm->n = ms ? ms->n : 0;
		nm->cap = nc;
		nm->rec = (struct memo *)(nm + 1);
		nm->w = (int *)(nm->rec + nc);
		nm->idx = (uint32_t *)(nm->w + (size_t)nc * (size_t)t->npairs);
		memset(nm->idx, 0, 2 * (size_t)nc * sizeof(uint32_t));
		mask = 2 * nc - 1;
		for (uint32_t r = 0; r < nm->n; r++) {
			nm->rec[r] = ms->rec[r];
			for (j = memo_slot(nm->rec[r].M, mask); nm->idx[j] != 0; j = (j + 1) & mask)
				;
			nm->idx[j] = r + 1;
		}
		if (ms)
			memcpy(nm->w, ms->w, (size_t)ms->n * (size_t)t->npairs * sizeof(int));
		free(ms);
		t->memo = ms = nm;
		/* Counted with the table: evicting it frees its memos. */
		t->bytes += nb - ob;
		s->st.cache_bytes += nb - ob;
	}
	mask = 2 * ms->cap - 1;
	for (j = memo_slot(M, mask); ms->idx[j] != 0; j = (j + 1) & mask)
		;
	i = ms->n++;
	ms->idx[j] = (uint32_t)i + 1;
	ms->rec[i].t = -INFINITY;
	ms->rec[i].exact = 0;
	ms->rec[i].M = M;
	return i;
}

/* Solve (table, M) into s->w and *T, through the memo for the fast path. */
static int table_solve(struct hb_iidp_solver *s, struct table *t, int M, int method, double *T, int cache,
		       struct hb_error *err)
{
	long i;
	int rc;

	s->st.solves++;
	if (t->npairs > s->w_cap) {
		int *nw = realloc(s->w, (size_t)t->npairs * sizeof(int));
		if (!nw)
			return hb_runtime_error(err, "IIDP solver: out of memory");
		s->w = nw;
		s->w_cap = t->npairs;
	}
	if (method == HB_IIDP_FAST && cache) {
		i = memo_find(t, M);
		if (i >= 0 && t->memo->rec[i].exact) {
			s->st.memo_hits++;
			*T = t->memo->rec[i].t;
			if (!s->summary_only) /* the workers are read by result_fill's pairs only */
				memcpy(s->w, t->memo->w + (size_t)i * (size_t)t->npairs,
				       (size_t)t->npairs * sizeof(int));
			return 0;
		}
		s->st.memo_misses++;
	}
	rc = method == HB_IIDP_DP ? hb_iidp_minmax_dp(t->pairs, t->npairs, M, &s->sc, T, s->w, err)
				  : hb_iidp_minmax_fast(t->pairs, t->npairs, M, &s->sc, T, s->w, err);
	if (rc != 0)
		return -1;
	if (method == HB_IIDP_FAST && cache && (i = memo_entry(s, t, M)) >= 0) {
		t->memo->rec[i].t = *T;
		t->memo->rec[i].exact = 1;
		memcpy(t->memo->w + (size_t)i * (size_t)t->npairs, s->w, (size_t)t->npairs * sizeof(int));
	}
	return 0;
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

static int validate_alloc(const struct hb_perf *pf, const int *alloc, int *n_gpus, struct hb_error *err)
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

	if (!t && table_get(s, alloc, local_bs, &t, &owned, err) != 0)
		return -1;
	if (table_solve(s, t, M, method, &T, !owned, err) != 0) {
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
		table_free(t);
	return rc;
}

/* Over the limit: evict entries one at a time (CLOCK, hmap_evict) until
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

		budget_report(s);
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
			struct shape_entry *e = hmap_evict(&s->shapes);
			size_t b = sizeof(*e) + (size_t)e->nkey * sizeof(long) + (size_t)e->extra;

			s->shape_bytes -= b;
			s->st.cache_bytes -= b;
			free(e);
		} else if (s->tables.n > 0) {
			struct table *t = hmap_evict(&s->tables);

			s->st.cache_bytes -= t->bytes;
			table_free(t);
		} else {
			hb_iidp_solver_clear_cache(s);
			s->st.flushes++;
			return;
		}
		s->st.evictions++;
	}
	freed = hmap_shrink(&s->shapes);
	s->shape_bytes -= freed;
	s->st.cache_bytes -= freed;
	s->st.cache_bytes -= hmap_shrink(&s->tables);
	budget_report(s);
}

int hb_iidp_solve_m(struct hb_iidp_solver *s, const int *alloc, int local_bs, int M, int method,
		    struct hb_iidp_result *out, struct hb_error *err)
{
	int ng, *lbs = NULL, nl = 0, rc;
	double bf = -1.0;

	result_reset(out, s->perf->sync);
	if (validate_alloc(s->perf, alloc, &ng, err) != 0)
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

	if (table_get(s, alloc, c->lbs, &t, &owned, err) != 0)
		return -1;
	/* The bound is memoised with the answers; an answer is its own bound. */
	if (!owned && (i = memo_entry(s, t, c->M)) >= 0)
		mo = &t->memo->rec[i];
	if (mo && !mo->exact && mo->t == -INFINITY)
		mo->t = minmax_lower_bound(t->pairs, t->npairs, c->M);
	c->f_ub = 2.0 * c->M * c->lbs / (mo ? mo->t : minmax_lower_bound(t->pairs, t->npairs, c->M));
	/* Valid until the next maybe_flush: the request's solves use it. */
	c->t = owned ? NULL : t;
	if (owned)
		table_free(t);
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

/* The candidate B_L of the hinted allocation, as hb_perf_alloc_lbs gives
 * them (a copy the caller frees): they depend on the set of GPU types used
 * only, so they are kept per set. */
struct lbs_list {
	int nl;
	int lbs[];
};

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
		if (hmap_put(&s->lbs_by_types, &mask, sizeof(mask), l) == 0) {
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
static int answer_key(const long *key, int n, long *akey)
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
	n = answer_key(k, n, s->bkey + 3);
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
		return validate_alloc(s->perf, req->alloc, &ng, err);
	/* One scan of the cluster's nodes for the whole request, instead of
	 * one per candidate B_L (table keys) and one for the B_L list; it
	 * checks what validate_alloc checks, which words the error of an
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
			return validate_alloc(s->perf, req->alloc, &ng, err) != 0 ? -1
				: hb_runtime_error(err, "IIDP solver: allocation refused");
		}
	}
	if (s->hint_n == 0)
		return validate_alloc(s->perf, req->alloc, &ng, err) != 0 ? -1
			: hb_runtime_error(err, "IIDP solver: allocation refused");
	if (s->limit > 0 && req->method == HB_IIDP_FAST)
		hint_bound_key(s);
	rc = solve_hinted(s, req, out, err);
	s->hint_n = 0;
	s->bkey_len = 0;
	return rc;
}

/* ---- answers by allocation shape ---------------------------------------- */

void hb_iidp_shape_free(struct hb_iidp_shape *sh)
{
	if (!sh)
		return;
	free(sh->node);
	free(sh->gpus);
	free(sh->key);
	free(sh->akey);
	memset(sh, 0, sizeof(*sh));
}

int hb_iidp_node_kind(const struct hb_iidp_solver *s, int i)
{
	return s->node_class[i];
}

static int shape_grow(struct hb_iidp_shape *sh, int n, struct hb_error *err)
{
	int *nn, *ng;
	long *nk, *na;

	if (n <= sh->cap)
		return 0;
	n = n < 8 ? 8 : n;
	nn = realloc(sh->node, (size_t)n * sizeof(*nn));
	if (nn)
		sh->node = nn;
	ng = realloc(sh->gpus, (size_t)n * sizeof(*ng));
	if (ng)
		sh->gpus = ng;
	nk = realloc(sh->key, 2 * (size_t)n * sizeof(*nk));
	if (nk)
		sh->key = nk;
	na = realloc(sh->akey, ((size_t)n + 1) * sizeof(*na));
	if (na)
		sh->akey = na;
	if (!nn || !ng || !nk || !na)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	sh->cap = n;
	return 0;
}

/* Append node i with a GPUs (a != 0) to sh, keeping key sorted; anything
 * hb_iidp_solve would refuse returns 1 (the caller reports it). */
static int shape_add(const struct hb_iidp_solver *s, struct hb_iidp_shape *sh, int i, int a)
{
	long c;
	int j = sh->nused;

	if (i < 0 || i >= s->perf->nnodes || a < 0 || a % 2 != 0 || a > s->perf->nodes[i].ngpus)
		return 1;
	c = s->node_class[i];
	sh->node[j] = i;
	sh->gpus[j] = a;
	/* Insertion into the sorted (class, GPUs) list: a few used nodes. */
	while (j > 0 && (sh->key[2 * j - 2] > c || (sh->key[2 * j - 2] == c && sh->key[2 * j - 1] > a))) {
		sh->key[2 * j] = sh->key[2 * j - 2];
		sh->key[2 * j + 1] = sh->key[2 * j - 1];
		j--;
	}
	sh->key[2 * j] = c;
	sh->key[2 * j + 1] = a;
	sh->nused++;
	sh->n_gpus += a;
	return 0;
}

/* sh's answer key (iidp.h, answer_key) and its hash, from its sorted key. */
static void shape_finish(struct hb_iidp_shape *sh)
{
	sh->nakey = answer_key(sh->key, sh->nused, sh->akey);
	sh->ahash = hash_words(sh->akey, (size_t)sh->nakey, 1469598103934665603ULL);
}

/* hb_iidp_solve's message for an allocation it refuses. */
static int shape_refused(const struct hb_iidp_solver *s, const int *node, const int *gpus, int n,
			 struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	int *full, ng, rc;

	for (int k = 0; k < n; k++)
		if (gpus[k] != 0 && (node[k] < 0 || node[k] >= pf->nnodes))
			return hb_input_error(err, "IIDP solver: node index %d out of range (%d nodes)", node[k],
					      pf->nnodes);
	full = calloc((size_t)pf->nnodes + 1, sizeof(int));
	if (!full)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	for (int k = 0; k < n; k++)
		if (gpus[k] != 0)
			full[node[k]] = gpus[k];
	rc = validate_alloc(pf, full, &ng, err);
	free(full);
	return rc != 0 ? -1 : hb_runtime_error(err, "IIDP solver: shape: allocation refused");
}

int hb_iidp_shape_of(const struct hb_iidp_solver *s, const int *alloc, struct hb_iidp_shape *sh,
		     struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	int ng;

	if (!alloc)
		return hb_input_error(err, "IIDP solver: no allocation");
	sh->nused = sh->n_gpus = 0;
	for (int i = 0; i < pf->nnodes; i++) {
		if (alloc[i] == 0)
			continue;
		if (sh->nused == sh->cap && shape_grow(sh, sh->cap ? 2 * sh->cap : 8, err) < 0)
			return -1;
		if (shape_add(s, sh, i, alloc[i]))
			return validate_alloc(pf, alloc, &ng, err) != 0 ? -1 : hb_runtime_error(err, "IIDP solver: shape");
	}
	if (sh->n_gpus == 0)
		return validate_alloc(pf, alloc, &ng, err) != 0 ? -1 : hb_runtime_error(err, "IIDP solver: shape");
	shape_finish(sh);
	return 0;
}

int hb_iidp_shape_of_nodes(const struct hb_iidp_solver *s, const int *node, const int *gpus, int n,
			   struct hb_iidp_shape *sh, struct hb_error *err)
{
	sh->nused = sh->n_gpus = 0;
	if (shape_grow(sh, n, err) < 0)
		return -1;
	for (int k = 0; k < n; k++) {
		if (k > 0 && node[k] <= node[k - 1])
			return hb_input_error(err, "IIDP solver: shape: node %d after node %d (ascending nodes expected)",
					      node[k], node[k - 1]);
		if (gpus[k] != 0 && shape_add(s, sh, node[k], gpus[k]))
			return shape_refused(s, node, gpus, n, err);
	}
	if (sh->n_gpus == 0)
		return shape_refused(s, node, gpus, n, err);
	shape_finish(sh);
	return 0;
}

/* The shape cache's key of (req, sh) in 3 + nakey words: every request
 * field a solve reads (B_G, current B_G, then B_L and the M rule in one
 * word), then sh's answer key (iidp.h), whose length the key's gives:
 * shapes that answer alike share their entries. */
static void shape_key(const struct hb_iidp_request *req, const struct hb_iidp_shape *sh, long *key)
{
	key[0] = req->global_bs;
	key[1] = req->cur_global_bs;
	/* A solve reads the rule as run-time, exact or Algorithm 1, and only
	 * the fast method is cached (bit 34 is SHAPE_KEY_BOUND's). */
	key[2] = (long)((uint64_t)(uint32_t)req->local_bs | (uint64_t)(req->m_rule == HB_IIDP_M_RUNTIME) << 32 |
			(uint64_t)(req->method == HB_IIDP_FAST) << 33 |
			(uint64_t)(req->m_rule == HB_IIDP_M_EXACT) << 35);
	memcpy(key + 3, sh->akey, (size_t)sh->nakey * sizeof(long));
}

static void summary_from(const struct hb_iidp_result *r, struct hb_iidp_summary *out)
{
	out->found = r->found;
	out->global_bs = r->found ? r->global_bs : 0;
	out->local_bs = r->found ? r->local_bs : 0;
	out->m = r->found ? r->m : 0;
	out->n_gpus = r->found ? r->n_gpus : 0;
	out->iter_s = r->found ? r->iter_s : 0.0;
	out->throughput = r->found ? r->throughput : 0.0;
}

/* The least B_G with round(B_G / B_L / 2) = M (hb_iidp_round_m, halves to
 * even): B_G / (2 B_L) = M - 1/2 at (2 M - 1) B_L, which rounds to M when
 * M is even. */
static long round_m_least(long M, int local_bs)
{
	if (M <= 0)
		return 0;
	return (2 * M - 1) * (long)local_bs + (M & 1);
}

/* An Algorithm 1 request (rule round, no fixed B_L) reads its B_G only
 * through M = round(B_G / B_L / 2) at each candidate B_L of the shape,
 * ascending, up to the first with M < N_H, where it stops.  Two B_G with
 * the same M's have the same candidates (B_L, M), the same checks on 2 M
 * B_L (bounds, size) and so the same answer, realised B_G (2 M B_L)
 * included.  Each M is non-decreasing in B_G, so the B_G with given M's
 * form an interval, and its least point, the largest of each M's least
 * B_G, has them too (its M's are at most and at least B_G's): that point
 * names the interval, and a summary is keyed by it instead of by B_G.
 * JABAS ranks shapes on forecast batches that move by less than a B_L
 * step from epoch to epoch: on two days of Philly, keyed by B_G, one
 * model's summaries missed 1.0 million times on 0.34 million distinct
 * keys.  Returns the least point, or B_G itself when the request has no
 * candidate B_L; *listed = 0 (and B_G) when the shape's candidate B_L
 * are not known yet (the first solve of its GPU types lists them) or are
 * not listed by type set, which is the request's other key. */
static long summary_canonical_bs(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh,
				 const struct hb_iidp_request *req, int *listed)
{
	const struct hb_perf *pf = s->perf;
	const long nh = sh->n_gpus / 2;
	const struct lbs_list *l;
	uint64_t mask = 0;
	long lo = 0;

	*listed = 0;
	if (pf->ngpus > 64 || req->m_rule != HB_IIDP_M_ROUND || req->local_bs != 0 || req->global_bs <= 0)
		return req->global_bs;
	/* a class is named by its least node, whose GPU type it shares */
	for (int j = 0; j < sh->nused; j++)
		mask |= (uint64_t)1 << pf->nodes[sh->key[2 * j]].gpu;
	if (!(l = hmap_get(&s->lbs_by_types, &mask, sizeof(mask))))
		return req->global_bs;
	*listed = 1;
	for (int k = 0; k < l->nl; k++) {
		const long M = hb_iidp_round_m(req->global_bs, l->lbs[k]), m_lo = round_m_least(M, l->lbs[k]);

		if (M < nh)
			break;
		lo = m_lo > lo ? m_lo : lo;
	}
	/* no candidate (not found): its own B_G keys it */
	return lo > 0 ? lo : req->global_bs;
}

int hb_iidp_solve_summary(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh,
			  const struct hb_iidp_request *req, struct hb_iidp_summary *out, struct hb_error *err)
{
	struct hb_iidp_request r2 = *req;
	struct hb_iidp_result r;
	struct shape_entry *v;
	const size_t nkey = 3 + (size_t)sh->nakey, klen = nkey * sizeof(long);
	/* The DP is the reference path: never memoised (as table_solve). */
	const int cache = s->limit > 0 && req->method == HB_IIDP_FAST;
	uint64_t h = 0;
	size_t used;
	int rc, listed = 0;

	memset(out, 0, sizeof(*out));
	if (cache) {
		shape_key(req, sh, s->skey);
		s->skey[0] = summary_canonical_bs(s, sh, req, &listed);
		/* The shape's words were hashed when it was built. */
		h = hash_words(s->skey, 3, sh->ahash);
		if ((v = hmap_get_h(&s->shapes, h, s->skey, klen)) != NULL) {
			s->st.shape_hits++;
			*out = v->sum;
			return 0;
		}
		s->st.shape_misses++;
	}
	/* A miss solves the shape's canonical allocation: its (kind, GPUs) in
	 * key order on the first nodes of each kind, so every allocation of
	 * the shape meets the same (allocation, B_L) tables and M memos.  Its
	 * summary is the shape's (see iidp.h).  The vector is zeroed again
	 * after. */
	s->hint_n = 0;
	for (int k = 0, node = -1; k < sh->nused; k++) {
		long c = sh->key[2 * k];
		int j = s->hint_n++;

		node = k > 0 && sh->key[2 * k - 2] == c ? s->next_in_class[node] : (int)c;
		s->full[node] = (int)sh->key[2 * k + 1];
		/* the hint lists the used nodes ascending, as a scan would */
		for (; j > 0 && s->hint_node[j - 1] > node; j--) {
			s->hint_node[j] = s->hint_node[j - 1];
			s->hint_gpus[j] = s->hint_gpus[j - 1];
		}
		s->hint_node[j] = node;
		s->hint_gpus[j] = s->full[node];
	}
	r2.alloc = s->full;
	if (cache) {
		/* The key hb_iidp_shape_bound files the shape's bounds under. */
		memcpy(s->bkey + 3, s->skey + 3, (size_t)sh->nakey * sizeof(long));
		s->bkey[0] = s->bkey[1] = 0;
		s->bkey[2] = SHAPE_KEY_BOUND;
		s->bkey_h = hash_words(s->bkey, 3, sh->ahash);
		s->bkey_len = klen;
	}
	s->summary_only = 1;
	rc = hb_iidp_solve(s, &r2, &r, err);
	s->summary_only = 0;
	s->bkey_len = 0;
	s->hint_n = 0;
	for (int k = 0, node = -1; k < sh->nused; k++) {
		long c = sh->key[2 * k];

		node = k > 0 && sh->key[2 * k - 2] == c ? s->next_in_class[node] : (int)c;
		s->full[node] = 0;
	}
	if (rc < 0)
		return -1;
	summary_from(&r, out);
	hb_iidp_result_free(&r);
	/* hb_iidp_solve may have evicted entries: the key is still in skey.
	 * The first solve of the shape's GPU types lists their B_L: the
	 * answer is filed under the least B_G then, where the next request of
	 * the interval looks. */
	if (cache && !listed) {
		const long lo = summary_canonical_bs(s, sh, req, &listed);

		if (lo != s->skey[0]) {
			s->skey[0] = lo;
			h = hash_words(s->skey, 3, sh->ahash);
			if (hmap_get_h(&s->shapes, h, s->skey, klen) != NULL)
				return 0; /* filed already (the map keeps no duplicates) */
		}
	}
	if (cache && (v = malloc(sizeof(*v) + klen)) != NULL) {
		v->sum = *out;
		v->nkey = (int)nkey;
		v->extra = 0;
		memcpy(v->key, s->skey, klen);
		if ((used = hmap_put_h(&s->shapes, h, v->key, klen, v)) == 0) {
			free(v);
		} else {
			used += sizeof(*v) + klen - 1; /* the entry, and any growth of the slots */
			s->st.cache_bytes += used;
			s->shape_bytes += used;
		}
	}
	return 0;
}

static int sb_reserve(struct hb_iidp_shape_bound *b, size_t bytes)
{
	if (bytes > b->cap) {
		void *nb = realloc(b->blob, bytes);

		if (!nb)
			return -1;
		b->blob = nb;
		b->cap = bytes;
	}
	b->bytes = bytes;
	return 0;
}

void hb_iidp_shape_bound_free(struct hb_iidp_shape_bound *b)
{
	if (!b)
		return;
	if (!b->held) /* a held copy is the solver's: hb_iidp_shape_bound_release */
		free(b->blob);
	memset(b, 0, sizeof(*b));
}

/* Build b for sh on the canonical allocation s->full (spread by the
 * caller): the same comm_eval per used node and coef_eval per (B_L, n_vsw)
 * as table_build, over the B_L that hb_perf_alloc_lbs lists (hint_lbs's
 * list).  A node's communication depends on the allocation, not on B_L. */
static int shape_bound_build(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, const int *node,
			     struct hb_iidp_shape_bound *b, struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	struct hb_perf_comm *comm = malloc((size_t)sh->nused * sizeof(*comm));
	int *lbs = NULL, nl = 0, rc = -1;
	struct sb_lbs *v;

	if (!comm)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	for (int k = 0; k < sh->nused; k++)
		if (hb_perf_comm_eval(pf, s->full, node[k], &comm[k], err) != 0)
			goto out;
	if (hb_perf_alloc_lbs(pf, s->full, &lbs, &nl, err) != 0)
		goto out;
	if (sb_reserve(b, (size_t)nl * sizeof(*v)) < 0) {
		hb_runtime_error(err, "IIDP solver: out of memory");
		goto out;
	}
	b->nl = nl;
	b->nh = sh->n_gpus / 2;
	v = b->blob;
	for (int i = 0; i < nl; i++) {
		v[i] = (struct sb_lbs){ .f_inf = 0.0, .a = INFINITY, .b = INFINITY, .c = INFINITY, .lbs = lbs[i], .ok = 1 };
		/* By class (a run of sh's sorted key): its nodes' coefficients
		 * are the same, so the blob is a function of the answer key
		 * (iidp.h), as the cache that files it under that key needs. */
		for (int k = 0, k1; k < sh->nused && v[i].ok > 0; k = k1) {
			const struct hb_perf_lbs *l = hb_perf_find_lbs(pf, pf->nodes[node[k]].gpu, lbs[i]);
			double r = 0.0;
			long pairs = 0;

			for (k1 = k; k1 < sh->nused && sh->key[2 * k1] == sh->key[2 * k]; k1++)
				pairs += sh->key[2 * k1 + 1] / 2;

			/* No profile: no table, the solve fails, no answer at B_L. */
			if (!l || l->n_cap < 1) {
				v[i].ok = 0;
				break;
			}
			for (int n = 1; n <= l->n_cap; n++) {
				struct hb_perf_coef co;

				if (hb_perf_coef_eval(pf, l, &comm[k], n, pf->tau, &co, err) != 0)
					goto out;
				if (!(co.step_s > 0.0) || !(co.base_s >= co.step_s) || !isfinite(co.base_s)) {
					v[i].ok = -1;
					break;
				}
				r = (double)n / co.step_s > r ? (double)n / co.step_s : r;
				v[i].a = co.base_s - co.step_s < v[i].a ? co.base_s - co.step_s : v[i].a;
				v[i].b = co.step_s / n < v[i].b ? co.step_s / n : v[i].b;
				v[i].c = co.base_s < v[i].c ? co.base_s : v[i].c;
			}
			v[i].f_inf += (double)pairs * 2.0 * lbs[i] * r;
		}
	}
	rc = 0;
out:
	free(lbs);
	free(comm);
	return rc;
}

/* File b under the bound key in s->skey (klen bytes, hash h) in the shape
 * cache, its blob after the key (the entry's summary is unused: the
 * bound's counts follow from the shape and the blob's size).  Out of
 * memory, nothing is filed (a cache may forget). */
static void shape_bound_file(struct hb_iidp_solver *s, uint64_t h, size_t klen, const struct hb_iidp_shape_bound *b)
{
	struct shape_entry *v;
	size_t used;

	if (b->bytes <= INT32_MAX && (v = malloc(sizeof(*v) + klen + b->bytes)) != NULL) {
		memset(&v->sum, 0, sizeof(v->sum));
		v->nkey = (int)(klen / sizeof(long));
		v->extra = (int)b->bytes;
		memcpy(v->key, s->skey, klen);
		memcpy((char *)v->key + klen, b->blob, b->bytes);
		if ((used = hmap_put_h(&s->shapes, h, v->key, klen, v)) == 0) {
			free(v);
		} else {
			used += sizeof(*v) + klen + b->bytes - 1;
			s->st.cache_bytes += used;
			s->shape_bytes += used;
		}
	}
}

/* The bounds of a shape are a function of it and they are asked for at
 * every offer's every shape, which recur across offers and across the jobs
 * of one model: they are kept in the shape cache, their blob after the key
 * of an entry under a key no request forms (the entry's extra counts it),
 * so they share its limit and eviction. */
static int bound_fill(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
		      struct hb_error *err)
{
	const size_t nkey = 3 + (size_t)sh->nakey, klen = nkey * sizeof(long);
	struct shape_entry *v;
	uint64_t h = 0;
	int *node, rc;

	/* b is refilled: its memo answered the old blob. */
	b->memo_fx = b->memo_gx = 0;
	if (s->limit > 0) {
		const struct hb_iidp_request none = { 0 };

		shape_key(&none, sh, s->skey);
		s->skey[2] = SHAPE_KEY_BOUND;
		h = hash_words(s->skey, 3, sh->ahash);
		if ((v = hmap_get_h(&s->shapes, h, s->skey, klen)) != NULL) {
			const size_t bytes = (size_t)v->extra;

			if (sb_reserve(b, bytes) < 0)
				return hb_runtime_error(err, "IIDP solver: out of memory");
			memcpy(b->blob, (const char *)v->key + klen, bytes);
			b->nh = sh->n_gpus / 2;
			b->nl = (int)(bytes / sizeof(struct sb_lbs));
			return 0;
		}
	}
	if (!(node = malloc((size_t)sh->nused * sizeof(*node))))
		return hb_runtime_error(err, "IIDP solver: out of memory");
	/* The canonical allocation, as hb_iidp_solve_summary spreads it. */
	for (int k = 0, i = -1; k < sh->nused; k++) {
		long c = sh->key[2 * k];

		i = k > 0 && sh->key[2 * k - 2] == c ? s->next_in_class[i] : (int)c;
		node[k] = i;
		s->full[i] = (int)sh->key[2 * k + 1];
	}
	rc = shape_bound_build(s, sh, node, b, err);
	for (int k = 0; k < sh->nused; k++)
		s->full[node[k]] = 0;
	free(node);
	if (rc < 0)
		return -1;
	/* Nothing above evicts: the key is still in skey. */
	if (s->limit > 0)
		shape_bound_file(s, h, klen, b);
	return 0;
}

int hb_iidp_shape_bound(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
			struct hb_error *err)
{
	if (sh->nused < 1)
		return hb_input_error(err, "IIDP solver: shape bound: empty shape");
	if (b->held)
		return hb_runtime_error(err, "IIDP solver: shape bound: b holds a shared copy (release it first)");
	return bound_fill(s, sh, b, err);
}

int hb_iidp_shape_bound_hold(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
			     struct hb_error *err)
{
	const size_t nkey = 3 + (size_t)sh->nakey, klen = nkey * sizeof(long);
	const struct hb_iidp_request none = { 0 };
	struct held_bound *e;
	uint64_t h;

	if (sh->nused < 1)
		return hb_input_error(err, "IIDP solver: shape bound: empty shape");
	if (b->held || b->blob)
		return hb_runtime_error(err, "IIDP solver: shape bound: b is not empty (release it first)");
	shape_key(&none, sh, s->skey);
	s->skey[2] = SHAPE_KEY_BOUND;
	h = hash_words(s->skey, 3, sh->ahash);
	if (!(e = hmap_get_h(&s->held, h, s->skey, klen))) {
		/* The first holder: the bounds as hb_iidp_shape_bound gives
		 * them (a cached copy, or built and filed), copied once. */
		struct hb_iidp_shape_bound tmp = { 0 };

		if (bound_fill(s, sh, &tmp, err) < 0) {
			hb_iidp_shape_bound_free(&tmp);
			return -1;
		}
		/* skey again: bound_fill may use it as scratch */
		shape_key(&none, sh, s->skey);
		s->skey[2] = SHAPE_KEY_BOUND;
		if (!(e = malloc(sizeof(*e) + klen + tmp.bytes))) {
			hb_iidp_shape_bound_free(&tmp);
			return hb_runtime_error(err, "IIDP solver: out of memory");
		}
		e->h = h;
		e->refs = 0;
		e->nkey = (uint32_t)nkey;
		e->bytes = tmp.bytes;
		memcpy(e->key, s->skey, klen);
		memcpy((char *)e->key + klen, tmp.blob, tmp.bytes);
		hb_iidp_shape_bound_free(&tmp);
		if (hmap_put_h(&s->held, h, e->key, klen, e) == 0) {
			free(e);
			return hb_runtime_error(err, "IIDP solver: out of memory");
		}
	}
	e->refs++;
	memset(b, 0, sizeof(*b));
	b->blob = (char *)e->key + klen;
	b->bytes = e->bytes;
	b->nh = sh->n_gpus / 2;
	b->nl = (int)(e->bytes / sizeof(struct sb_lbs));
	b->held = e;
	return 0;
}

void hb_iidp_shape_bound_release(struct hb_iidp_solver *s, struct hb_iidp_shape_bound *b)
{
	struct held_bound *e = b->held;

	if (!e) {
		hb_iidp_shape_bound_free(b); /* an own copy, or nothing */
		return;
	}
	if (--e->refs == 0) {
		const size_t klen = (size_t)e->nkey * sizeof(long);
		const size_t i = hmap_find_slot(&s->held, e->h, e->key, klen);

		if (i != SIZE_MAX)
			hmap_remove_at(&s->held, i);
		free(e);
		hmap_shrink(&s->held);
	}
	memset(b, 0, sizeof(*b));
}

size_t hb_iidp_held_shapes(const struct hb_iidp_solver *s)
{
	return s->held.n;
}

/* The throughput bound of B_L entry e over every request whose M is at
 * most M (>= nh; iidp.h says why it holds): with u = ceil(M / nh) the
 * busiest pair's time is at least max(c, a + u b), so an answer of M
 * workers runs at most 2 B_L M / max(c, a + u b).  That is not monotone in
 * M (it falls where u steps up), so a request of fewer workers is bounded
 * by the top of the level below, M' = (u - 1) nh, when that level has one.
 * Counting the workers (M) instead of every pair's share (nh u) matters
 * where M is a little above a multiple of nh: ncf on 4 pairs at B_G
 * 30,528 had its bound at 2.43e6 samples/s from a B_L of M = 5 (as if 8
 * workers), against a best answer of 1.77e6. */
static double sb_f_ub(const struct sb_lbs *e, long M, int nh)
{
	const long u = (M + nh - 1) / nh;
	double t = e->a + (double)u * e->b, f;

	t = t > e->c ? t : e->c;
	f = 2.0 * e->lbs * (double)M / t;
	if (u > 1) {
		double t2 = e->a + (double)(u - 1) * e->b, f2;

		t2 = t2 > e->c ? t2 : e->c;
		f2 = 2.0 * e->lbs * (double)nh * (double)(u - 1) / t2;
		f = f2 > f ? f2 : f;
	}
	return f < e->f_inf ? f : e->f_inf;
}

double hb_iidp_shape_max_throughput(const struct hb_iidp_shape_bound *b, long max_global_bs)
{
	const struct sb_lbs *v = b->blob;
	double best = 0.0;

	for (int i = 0; v && i < b->nl; i++) {
		const long M = hb_iidp_round_m(max_global_bs, v[i].lbs);
		double f;

		/* The entries ascend in B_L and M = round(B_G / B_L / 2) only
		 * falls as B_L grows (rounding is monotone): from the first B_L
		 * with M < N_H on, none counts. */
		if (M < b->nh)
			break;
		if (v[i].ok == 0)
			continue;
		if (v[i].ok < 0)
			return INFINITY;
		f = sb_f_ub(&v[i], M, b->nh);
		best = f > best ? f : best;
	}
	return best * (1.0 + 1e-9);
}

long hb_iidp_shape_min_global_bs(const struct hb_iidp_shape_bound *b, long global_bs)
{
	const struct sb_lbs *v = b->blob;
	long best = LONG_MAX;

	for (int i = 0; v && i < b->nl; i++) {
		const long M = hb_iidp_round_m(global_bs, v[i].lbs);

		if (M < b->nh)
			break; /* and every later B_L (hb_iidp_shape_max_throughput) */
		if (2 * M * v[i].lbs < best)
			best = 2 * M * v[i].lbs;
	}
	return best;
}

double hb_iidp_shape_max_throughput_memo(struct hb_iidp_shape_bound *b, long max_global_bs)
{
	if (max_global_bs <= 0 || b->memo_fx != max_global_bs) {
		b->memo_f = hb_iidp_shape_max_throughput(b, max_global_bs);
		b->memo_fx = max_global_bs > 0 ? max_global_bs : 0;
	}
	return b->memo_f;
}

long hb_iidp_shape_min_global_bs_memo(struct hb_iidp_shape_bound *b, long global_bs)
{
	if (global_bs <= 0 || b->memo_gx != global_bs) {
		b->memo_g = hb_iidp_shape_min_global_bs(b, global_bs);
		b->memo_gx = global_bs > 0 ? global_bs : 0;
	}
	return b->memo_g;
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
