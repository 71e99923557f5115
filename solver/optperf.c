/*
 * optperf.c: exact OptPerf solver (Cannikin §3.3 and Appendix A, with
 * memory caps), integer rounding, and the goodput-optimal total batch
 * (Cannikin §4.1).
 *
 * The solver works on each node's two affine branches (compute and
 * communication, optperf.h).  For a candidate iteration time T, node i can
 * take b_i(T) = clamp(inverse of T_i at T, min_batch, max_batch) samples;
 * F(T) = Σ b_i(T) is continuous, non-decreasing and piecewise linear above
 * T_lo = max_i T_i(min_batch_i), with breakpoints at each node's switch time
 * τ_i and saturation time T_i(max_batch).  OptPerf(B) is the smallest T with
 * F(T) >= B.  Sorting the breakpoints and binary-searching them with direct
 * O(n) evaluations of F costs O(n log n); on the final segment every node's
 * branch is fixed, and T follows in closed form (§4.2's T_comb, the equal
 * time of Appendix A.3, with capped nodes contributing their cap).
 * Evaluating F directly at each probe, rather than updating prefix sums,
 * keeps the result exact to rounding even when nodes' 1/slope differ by
 * orders of magnitude.
 */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_sort.h>

#include "optperf.h"

/* ---------------------------------------------------------------------------
 * Per-node model in solver form
 */

/* Node i as two affine branches in T (T_u and T_o folded into intercepts). */
struct lin_node {
	double alpha, icpt_c; /* compute branch: T = alpha·b + icpt_c, icpt_c = β_i + T_u */
	double delta, icpt_m; /* communication branch: T = delta·b + icpt_m, icpt_m = ε_i + T_o + T_u */
	double lo, cap;       /* min_batch, max_batch */
	double tau;           /* T from which the node is compute-bottleneck; -inf: from lo on, +inf: not before cap */
	double sat;           /* T_i(cap): from here on the node is held at its cap */
};

/* Everything of a solve that does not depend on B, so the goodput search
 * sorts once for all candidates. */
struct plan {
	size_t n;
	struct lin_node *node; /* n entries */
	double *knot;          /* T_lo, then the breakpoints above it, ascending */
	size_t n_knot;
	double t_lo;           /* max_i T_i(min_batch_i): no split finishes sooner */
	double sum_lo;         /* Σ min_batch (exact: integers below 2^53) */
	double sum_cap;        /* Σ max_batch */
};

static double lin_time(const struct lin_node *ln, double b)
{
	double c = ln->alpha * b + ln->icpt_c, m = ln->delta * b + ln->icpt_m;

	return c >= m ? c : m;
}

/* (1-γ)·P_i(b) - T_o: >= 0 exactly when the node is compute-bottleneck
 * (Cannikin §3.2.3). */
static double bottleneck_margin(const struct hb_optperf_cluster *cl, size_t i, double b)
{
	const struct hb_optperf_node *nd = &cl->node[i];

	return (1.0 - cl->gamma) * (nd->bwd_per_sample_s * b + nd->bwd_fixed_s) - cl->overlap_comm_s;
}

static void lin_from_node(const struct hb_optperf_cluster *cl, size_t i, struct lin_node *ln)
{
	const struct hb_optperf_node *nd = &cl->node[i];
	double g = cl->gamma, to = cl->overlap_comm_s, tu = cl->last_comm_s;

	ln->alpha = nd->fwd_per_sample_s + nd->bwd_per_sample_s;
	ln->icpt_c = nd->fwd_fixed_s + nd->bwd_fixed_s + tu;
	ln->delta = nd->fwd_per_sample_s + g * nd->bwd_per_sample_s;
	ln->icpt_m = nd->fwd_fixed_s + g * nd->bwd_fixed_s + to + tu;
	ln->lo = (double)nd->min_batch;
	ln->cap = (double)nd->max_batch;
	/* The margin grows with b, so the node is communication-bottleneck below
	 * the switch batch b_bp and compute-bottleneck above it.  A flat
	 * communication branch (delta = 0: q_i = 0 and γ = 0) lies entirely
	 * below T_lo, so only the compute branch matters there. */
	if (bottleneck_margin(cl, i, ln->lo) >= 0 || ln->delta == 0) {
		ln->tau = -INFINITY;
	} else if (bottleneck_margin(cl, i, ln->cap) < 0) {
		ln->tau = INFINITY;
	} else {
		double bbp = (to / (1.0 - g) - nd->bwd_fixed_s) / nd->bwd_per_sample_s;

		bbp = bbp < ln->lo ? ln->lo : bbp > ln->cap ? ln->cap : bbp;
		ln->tau = ln->alpha * bbp + ln->icpt_c;
	}
	ln->sat = lin_time(ln, ln->cap);
}

/* Largest batch node i finishes by t (t >= T_lo). */
static double lin_batch_at(const struct lin_node *ln, double t)
{
	double b;

	if (t >= ln->sat)
		return ln->cap;
	if (t >= ln->tau)
		b = (t - ln->icpt_c) / ln->alpha;
	else
		b = (t - ln->icpt_m) / ln->delta;
	return b < ln->lo ? ln->lo : b > ln->cap ? ln->cap : b;
}

static double plan_capacity(const struct plan *p, double t)
{
	double f = 0;

	for (size_t i = 0; i < p->n; i++)
		f += lin_batch_at(&p->node[i], t);
	return f;
}

/* ---------------------------------------------------------------------------
 * Validation
 */

static int check_time(double v, int positive, const char *where, size_t i, const char *field,
		      struct hb_error *err)
{
	if (isfinite(v) && (positive ? v > 0 : v >= 0))
		return 0;
	if (where)
		return hb_input_error(err, "optperf: %s %zu: field '%s': value '%g': must be finite and %s",
				      where, i, field, v, positive ? "> 0" : ">= 0");
	return hb_input_error(err, "optperf: field '%s': value '%g': must be finite and %s", field, v,
			      positive ? "> 0" : ">= 0");
}

int hb_optperf_validate(const struct hb_optperf_cluster *cl, struct hb_error *err)
{
	if (!cl)
		return hb_input_error(err, "optperf: cluster is NULL");
	if (cl->n < 1 || cl->n > HB_OPTPERF_MAX_NODES)
		return hb_input_error(err, "optperf: field 'n': value '%zu': must be in [1, %zu]", cl->n,
				      HB_OPTPERF_MAX_NODES);
	if (!cl->node)
		return hb_input_error(err, "optperf: field 'node': is NULL with n = %zu", cl->n);
	if (!(cl->gamma >= 0 && cl->gamma <= 1))
		return hb_input_error(err, "optperf: field 'gamma': value '%g': must be in [0, 1]", cl->gamma);
	if (check_time(cl->overlap_comm_s, 0, NULL, 0, "overlap_comm_s", err) ||
	    check_time(cl->last_comm_s, 0, NULL, 0, "last_comm_s", err))
		return -1;
	for (size_t i = 0; i < cl->n; i++) {
		const struct hb_optperf_node *nd = &cl->node[i];

		if (check_time(nd->fwd_per_sample_s, 0, "node", i, "fwd_per_sample_s", err) ||
		    check_time(nd->fwd_fixed_s, 0, "node", i, "fwd_fixed_s", err) ||
		    check_time(nd->bwd_per_sample_s, 0, "node", i, "bwd_per_sample_s", err) ||
		    check_time(nd->bwd_fixed_s, 0, "node", i, "bwd_fixed_s", err))
			return -1;
		if (!(nd->fwd_per_sample_s + nd->bwd_per_sample_s > 0))
			return hb_input_error(err,
					      "optperf: node %zu: fields 'fwd_per_sample_s' + 'bwd_per_sample_s': "
					      "value '0': a sample must take time", i);
		if (nd->min_batch < 0)
			return hb_input_error(err, "optperf: node %zu: field 'min_batch': value '%ld': must be >= 0",
					      i, nd->min_batch);
		if (nd->max_batch < nd->min_batch || nd->max_batch > HB_OPTPERF_MAX_BATCH)
			return hb_input_error(err,
					      "optperf: node %zu: field 'max_batch': value '%ld': must be in "
					      "[min_batch = %ld, %ld]", i, nd->max_batch, nd->min_batch,
					      HB_OPTPERF_MAX_BATCH);
	}
	return 0;
}

static int check_total(const struct plan *p, long total, struct hb_error *err)
{
	if (total <= 0)
		return hb_input_error(err, "optperf: field 'total_batch': value '%ld': must be > 0", total);
	if ((double)total > p->sum_cap)
		return hb_input_error(err,
				      "optperf: field 'total_batch': value '%ld': exceeds the sum of max_batch "
				      "over the %zu nodes (%.0f)", total, p->n, p->sum_cap);
	if ((double)total < p->sum_lo)
		return hb_input_error(err,
				      "optperf: field 'total_batch': value '%ld': is below the sum of min_batch "
				      "over the %zu nodes (%.0f)", total, p->n, p->sum_lo);
	return 0;
}

/* ---------------------------------------------------------------------------
 * The solver
 */

static void plan_free(struct plan *p)
{
	free(p->node);
	free(p->knot);
	p->node = NULL;
	p->knot = NULL;
}

/* cl must be valid.  Rounding needs no breakpoints, so with_knots = 0 skips
 * the sort. */
static int plan_build(const struct hb_optperf_cluster *cl, int with_knots, struct plan *p,
		      struct hb_error *err)
{
	size_t m = 1;

	p->n = cl->n;
	p->node = malloc(cl->n * sizeof(*p->node));
	p->knot = malloc((with_knots ? 2 * cl->n + 1 : 1) * sizeof(*p->knot));
	if (!p->node || !p->knot) {
		plan_free(p);
		return hb_runtime_error(err, "optperf: out of memory for %zu nodes", cl->n);
	}
	p->t_lo = -INFINITY;
	p->sum_lo = p->sum_cap = 0;
	for (size_t i = 0; i < cl->n; i++) {
		struct lin_node *ln = &p->node[i];
		double t;

		lin_from_node(cl, i, ln);
		t = lin_time(ln, ln->lo);
		if (t > p->t_lo)
			p->t_lo = t;
		p->sum_lo += ln->lo;
		p->sum_cap += ln->cap;
	}
	p->knot[0] = p->t_lo;
	for (size_t i = 0; with_knots && i < cl->n; i++) {
		const struct lin_node *ln = &p->node[i];

		if (isfinite(ln->tau) && ln->tau > p->t_lo)
			p->knot[m++] = ln->tau;
		if (ln->sat > p->t_lo)
			p->knot[m++] = ln->sat;
	}
	gsl_sort(p->knot + 1, 1, m - 1);
	p->n_knot = m;
	return 0;
}

/* OptPerf(total) on a built plan; total is within [sum_lo, sum_cap].  batch
 * (may be NULL) receives the split, *floor_bound whether T = T_lo. */
static double plan_solve(const struct plan *p, double total, double *batch, int *floor_bound)
{
	double f_lo = plan_capacity(p, p->t_lo), t;
	size_t lo, hi;

	*floor_bound = f_lo >= total;
	if (*floor_bound) {
		/* Every split with b_i <= b_i(T_lo) finishes at T_lo; give each node
		 * the same fraction of its room above min_batch. */
		double room = f_lo - p->sum_lo, frac = room > 0 ? (total - p->sum_lo) / room : 0;

		if (batch)
			for (size_t i = 0; i < p->n; i++) {
				const struct lin_node *ln = &p->node[i];

				batch[i] = ln->lo + frac * (lin_batch_at(ln, p->t_lo) - ln->lo);
			}
		return p->t_lo;
	}
	if (total >= p->sum_cap) {
		t = p->knot[p->n_knot - 1];
	} else {
		double fixed = 0, inv = 0, icpt = 0, tm;

		/* Invariant: F(knot[lo]) < total <= F(knot[hi]); the last knot is
		 * the latest saturation time, where F = Σ cap > total. */
		lo = 0;
		hi = p->n_knot - 1;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (plan_capacity(p, p->knot[mid]) < total)
				lo = mid;
			else
				hi = mid;
		}
		/* Inside the segment each node is capped or on one fixed branch:
		 * Σ_capped cap + Σ_free (T - icpt_i)/slope_i = total. */
		tm = 0.5 * (p->knot[lo] + p->knot[hi]);
		for (size_t i = 0; i < p->n; i++) {
			const struct lin_node *ln = &p->node[i];

			if (tm >= ln->sat) {
				fixed += ln->cap;
			} else if (tm >= ln->tau) {
				inv += 1.0 / ln->alpha;
				icpt += ln->icpt_c / ln->alpha;
			} else {
				inv += 1.0 / ln->delta;
				icpt += ln->icpt_m / ln->delta;
			}
		}
		t = (total - fixed + icpt) / inv;
		t = t < p->knot[lo] ? p->knot[lo] : t > p->knot[hi] ? p->knot[hi] : t;
	}
	if (batch)
		for (size_t i = 0; i < p->n; i++)
			batch[i] = lin_batch_at(&p->node[i], t);
	return t;
}

static void fill_solution(const struct hb_optperf_cluster *cl, const double *batch, double t,
			  int floor_bound, struct hb_optperf_solution *sol)
{
	sol->iter_s = t;
	sol->floor_bound = floor_bound;
	sol->n_compute = sol->n_comm = sol->n_at_cap = 0;
	for (size_t i = 0; i < cl->n; i++) {
		if (bottleneck_margin(cl, i, batch[i]) >= 0)
			sol->n_compute++;
		else
			sol->n_comm++;
		sol->n_at_cap += batch[i] >= (double)cl->node[i].max_batch;
	}
	sol->regime = sol->n_comm == 0 ? HB_OPTPERF_COMPUTE_BOUND
		      : sol->n_compute == 0 ? HB_OPTPERF_COMM_BOUND : HB_OPTPERF_MIXED;
}

int hb_optperf_solve(const struct hb_optperf_cluster *cl, long total_batch, double *batch,
		     struct hb_optperf_solution *sol, struct hb_error *err)
{
	struct plan p;
	struct hb_optperf_solution tmp;
	int floor_bound;
	double t;

	if (hb_optperf_validate(cl, err))
		return -1;
	if (!batch)
		return hb_input_error(err, "optperf: output 'batch' is NULL");
	if (plan_build(cl, 1, &p, err))
		return -1;
	if (check_total(&p, total_batch, err)) {
		plan_free(&p);
		return -1;
	}
	t = plan_solve(&p, (double)total_batch, batch, &floor_bound);
	fill_solution(cl, batch, t, floor_bound, sol ? sol : &tmp);
	plan_free(&p);
	return 0;
}

/* ---------------------------------------------------------------------------
 * Evaluation
 */

double hb_optperf_node_time(const struct hb_optperf_cluster *cl, size_t i, double b,
			    int *compute_bound)
{
	struct lin_node ln;

	lin_from_node(cl, i, &ln);
	if (compute_bound)
		*compute_bound = bottleneck_margin(cl, i, b) >= 0;
	return lin_time(&ln, b);
}

double hb_optperf_iter_time(const struct hb_optperf_cluster *cl, const double *batch)
{
	double t = -INFINITY;

	for (size_t i = 0; i < cl->n; i++) {
		double ti = hb_optperf_node_time(cl, i, batch[i], NULL);

		if (ti > t)
			t = ti;
	}
	return t;
}

/* ---------------------------------------------------------------------------
 * Integer rounding (the paper's split is real; optperf.h)
 */

/* Binary heap of node indices ordered by key, ties to the lower index, so
 * the rounding is deterministic. */
struct heap {
	size_t *idx;
	double *key; /* per node */
	size_t size;
};

static int heap_less(const struct heap *h, size_t a, size_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static void heap_sift_down(struct heap *h, size_t pos)
{
	for (;;) {
		size_t l = 2 * pos + 1, r = l + 1, best = pos, tmp;

		if (l < h->size && heap_less(h, h->idx[l], h->idx[best]))
			best = l;
		if (r < h->size && heap_less(h, h->idx[r], h->idx[best]))
			best = r;
		if (best == pos)
			return;
		tmp = h->idx[pos];
		h->idx[pos] = h->idx[best];
		h->idx[best] = tmp;
		pos = best;
	}
}

static void heap_build(struct heap *h)
{
	for (size_t k = h->size / 2; k-- > 0;)
		heap_sift_down(h, k);
}

/* Move samples one at a time until Σ local = total.  Adding: to the node whose
 * time after one more sample is smallest.  Removing (only when the input
 * overshoots by rounding): from the node whose current time is largest. */
static void rebalance(const struct plan *p, long *local, long long sum, long total, struct heap *h)
{
	int add = sum < total;

	h->size = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct lin_node *ln = &p->node[i];

		if (add ? (double)local[i] < ln->cap : (double)local[i] > ln->lo) {
			h->key[i] = add ? lin_time(ln, (double)local[i] + 1) : -lin_time(ln, (double)local[i]);
			h->idx[h->size++] = i;
		}
	}
	heap_build(h);
	while (sum != total && h->size > 0) {
		size_t i = h->idx[0];
		const struct lin_node *ln = &p->node[i];

		local[i] += add ? 1 : -1;
		sum += add ? 1 : -1;
		if (add ? (double)local[i] < ln->cap : (double)local[i] > ln->lo) {
			h->key[i] = add ? lin_time(ln, (double)local[i] + 1) : -lin_time(ln, (double)local[i]);
		} else {
			h->idx[0] = h->idx[--h->size];
		}
		heap_sift_down(h, 0);
	}
}

static int round_split(const struct plan *p, long total, const double *batch, long *local,
		       struct hb_error *err)
{
	struct heap h;
	long long sum = 0;
	double real_sum = 0;

	for (size_t i = 0; i < p->n; i++) {
		const struct lin_node *ln = &p->node[i];
		double tol = 1e-6 * (ln->cap > 1 ? ln->cap : 1), f;

		if (!isfinite(batch[i]) || batch[i] < ln->lo - tol || batch[i] > ln->cap + tol)
			return hb_input_error(err, "optperf: field 'batch[%zu]': value '%g': must be in "
					      "[min_batch = %.0f, max_batch = %.0f]", i, batch[i], ln->lo,
					      ln->cap);
		real_sum += batch[i];
		f = floor(batch[i]);
		f = f < ln->lo ? ln->lo : f > ln->cap ? ln->cap : f;
		local[i] = (long)f;
		sum += local[i];
	}
	if (fabs(real_sum - (double)total) > 1e-6 * (double)total)
		return hb_input_error(err, "optperf: field 'batch': sums to %.9g, not total_batch = %ld",
				      real_sum, total);
	if (sum == total)
		return 0;
	h.idx = malloc(p->n * sizeof(*h.idx));
	h.key = malloc(p->n * sizeof(*h.key));
	if (!h.idx || !h.key) {
		free(h.idx);
		free(h.key);
		return hb_runtime_error(err, "optperf: out of memory for %zu nodes", p->n);
	}
	rebalance(p, local, sum, total, &h);
	free(h.idx);
	free(h.key);
	return 0;
}

static double local_iter_time(const struct plan *p, const long *local)
{
	double t = -INFINITY;

	for (size_t i = 0; i < p->n; i++) {
		double ti = lin_time(&p->node[i], (double)local[i]);

		if (ti > t)
			t = ti;
	}
	return t;
}

int hb_optperf_round(const struct hb_optperf_cluster *cl, long total_batch, const double *batch,
		     long *local, double *iter_s, struct hb_error *err)
{
	struct plan p;

	if (hb_optperf_validate(cl, err))
		return -1;
	if (!batch || !local)
		return hb_input_error(err, "optperf: '%s' is NULL", batch ? "local" : "batch");
	if (plan_build(cl, 0, &p, err))
		return -1;
	if (check_total(&p, total_batch, err) || round_split(&p, total_batch, batch, local, err)) {
		plan_free(&p);
		return -1;
	}
	if (iter_s)
		*iter_s = local_iter_time(&p, local);
	plan_free(&p);
	return 0;
}

/* ---------------------------------------------------------------------------
 * Goodput-optimal total batch (Cannikin §4.1)
 */

double hb_optperf_efficiency(double phi, double m0, double batch)
{
	return (phi + m0) / (phi + batch);
}

int hb_optperf_candidates(long b_min, long b_max, size_t count, long *out, size_t *n_out,
			  struct hb_error *err)
{
	size_t n = 0;

	if (b_min < 1)
		return hb_input_error(err, "optperf: field 'b_min': value '%ld': must be >= 1", b_min);
	if (b_max < b_min)
		return hb_input_error(err, "optperf: field 'b_max': value '%ld': must be >= b_min = %ld",
				      b_max, b_min);
	if (count < 1)
		return hb_input_error(err, "optperf: field 'n_candidates': value '0': must be >= 1");
	if (!out || !n_out)
		return hb_input_error(err, "optperf: candidate output is NULL");
	for (size_t k = 0; k < count; k++) {
		long v;

		if (k == 0) {
			v = b_min;
		} else if (k == count - 1) {
			v = b_max;
		} else {
			double x = (double)b_min * pow((double)b_max / (double)b_min,
						       (double)k / (double)(count - 1));

			v = lround(x);
			v = v < b_min ? b_min : v > b_max ? b_max : v;
		}
		if (n == 0 || v > out[n - 1])
			out[n++] = v;
	}
	*n_out = n;
	return 0;
}

static int check_goodput(const struct hb_optperf_goodput *gp, struct hb_error *err)
{
	if (!gp)
		return hb_input_error(err, "optperf: goodput parameters are NULL");
	if (check_time(gp->phi, 0, NULL, 0, "phi", err) || check_time(gp->m0, 1, NULL, 0, "m0", err))
		return -1;
	return 0;
}

/* Cannikin ranks only the adaptive batch engine's candidates (§4.1, §4.5
 * "Total batch size selection"), so B* is the best grid point; no refinement
 * between grid points. */
int hb_optperf_choose_batch(const struct hb_optperf_cluster *cl,
			    const struct hb_optperf_goodput *gp, double *batch, long *local,
			    struct hb_optperf_choice *out, struct hb_error *err)
{
	size_t count, n_cand = 0, best = (size_t)-1;
	double best_goodput = -INFINITY;
	long *cand = NULL, *lbuf = local;
	double *bbuf = batch;
	struct hb_optperf_solution sol;
	struct plan p;
	int floor_bound, rc = -1;

	if (hb_optperf_validate(cl, err) || check_goodput(gp, err))
		return -1;
	if (!out)
		return hb_input_error(err, "optperf: output 'choice' is NULL");
	count = gp->n_candidates ? gp->n_candidates : HB_OPTPERF_DEFAULT_CANDIDATES;
	if (plan_build(cl, 1, &p, err))
		return -1;
	cand = malloc(count * sizeof(*cand));
	if (!bbuf)
		bbuf = malloc(cl->n * sizeof(*bbuf));
	if (!lbuf)
		lbuf = malloc(cl->n * sizeof(*lbuf));
	if (!cand || !bbuf || !lbuf) {
		hb_runtime_error(err, "optperf: out of memory for %zu candidates, %zu nodes", count, cl->n);
		goto done;
	}
	if (hb_optperf_candidates(gp->b_min, gp->b_max, count, cand, &n_cand, err))
		goto done;
	out->n_candidates = n_cand;
	out->n_feasible = 0;
	for (size_t c = 0; c < n_cand; c++) {
		double b = (double)cand[c], t, g;

		if (b < p.sum_lo || b > p.sum_cap)
			continue;
		out->n_feasible++;
		t = plan_solve(&p, b, NULL, &floor_bound);
		g = b * hb_optperf_efficiency(gp->phi, gp->m0, b) / t;
		if (g > best_goodput) {
			best_goodput = g;
			best = c;
		}
	}
	if (best == (size_t)-1) {
		hb_input_error(err, "optperf: no candidate total batch in [b_min = %ld, b_max = %ld] fits the "
			       "cluster's range [%.0f, %.0f]", gp->b_min, gp->b_max, p.sum_lo, p.sum_cap);
		goto done;
	}
	out->batch = cand[best];
	out->iter_s = plan_solve(&p, (double)cand[best], bbuf, &floor_bound);
	out->efficiency = hb_optperf_efficiency(gp->phi, gp->m0, (double)cand[best]);
	out->goodput = best_goodput;
	fill_solution(cl, bbuf, out->iter_s, floor_bound, &sol);
	out->regime = sol.regime;
	if (round_split(&p, cand[best], bbuf, lbuf, err))
		goto done;
	out->int_iter_s = local_iter_time(&p, lbuf);
	rc = 0;
done:
	if (bbuf != batch)
		free(bbuf);
	if (lbuf != local)
		free(lbuf);
	free(cand);
	plan_free(&p);
	return rc;
}

const char *hb_optperf_regime_name(enum hb_optperf_regime r)
{
	switch (r) {
	case HB_OPTPERF_COMPUTE_BOUND:
		return "compute";
	case HB_OPTPERF_COMM_BOUND:
		return "communication";
	case HB_OPTPERF_MIXED:
		return "mixed";
	}
	return "unknown";
}
