/*
 * autoscale.c: JABAS's epoch-time estimate (autoscale.h), walking the
 * trajectory through the IIDP solver's answers by allocation shape.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale.h"

int hb_jabas_epoch_time(struct hb_iidp_solver *s, const int *alloc, const long *traj, int ntraj, long p,
			long done_in_block, double dataset, struct hb_epoch_estimate *out, struct hb_error *err)
{
	struct hb_iidp_shape sh = { 0 };
	int rc = hb_iidp_shape_of(s, alloc, &sh, err);

	if (rc == 0)
		rc = hb_jabas_epoch_time_shape(s, &sh, traj, ntraj, p, done_in_block, dataset, NULL, out, err);
	hb_iidp_shape_free(&sh);
	return rc;
}

int hb_jabas_epoch_time_shape(struct hb_iidp_solver *s, const struct hb_iidp_shape *shape, const long *traj,
			      int ntraj, long p, long done_in_block, double dataset, const struct hb_jabas_first *first,
			      struct hb_epoch_estimate *out, struct hb_error *err)
{
	double rem = dataset;
	struct hb_iidp_summary r = { 0 };
	long last_bs = 0; /* the point r answers: trajectories repeat values */

	memset(out, 0, sizeof(*out));
	out->feasible = 1;
	if (ntraj < 1 || p < 1 || dataset <= 0 || done_in_block < 0 || done_in_block >= p)
		return hb_input_error(err, "auto-scaler: bad trajectory (points %d, p %ld, done %ld, dataset %g)",
				      ntraj, p, done_in_block, dataset);
	if (first && ((first->m_rule != HB_IIDP_M_ROUND && first->m_rule != HB_IIDP_M_EXACT) || first->local_bs < 0))
		return hb_input_error(err, "auto-scaler: first point: rule %d, local batch %d (want Algorithm 1 or "
				      "exact, local batch >= 0)", first->m_rule, first->local_bs);
	for (int k = 0; k < ntraj && rem > 0; k++) {
		struct hb_iidp_request req = { .global_bs = traj[k], .m_rule = HB_IIDP_M_ROUND };

		/* the first point, and any point of its value, by the first
		 * point's rule (struct hb_jabas_first) */
		if (first && traj[k] == traj[0]) {
			req.m_rule = first->m_rule;
			req.local_bs = first->local_bs;
		}
		long steps = k == 0 ? p - done_in_block : p;
		double bg;

		if (traj[k] <= 0)
			return hb_input_error(err, "auto-scaler: trajectory point %d: global batch %ld <= 0", k,
					      traj[k]);
		if (k == ntraj - 1)
			steps = (long)floor(rem / (double)traj[k]) + 1;
		/* The answer is a function of the point (its rule follows from
		 * its value): a repeated point (a flat forecast) reuses it. */
		if (k == 0 || traj[k] != last_bs) {
			if (hb_iidp_solve_summary(s, shape, &req, &r, err) < 0)
				return -1;
			last_bs = traj[k];
		}
		if (!r.found) {
			out->feasible = 0;
			out->epoch_s = INFINITY;
			return 0;
		}
		bg = (double)r.global_bs;
		if (rem - bg * (double)steps < 0)
			steps = (long)floor(rem / bg) + 1;
		if (k == 0) {
			out->first_local_bs = r.local_bs;
			out->first_global_bs = r.global_bs;
			out->first_iter_s = r.iter_s;
		}
		out->epoch_s += r.iter_s * (double)steps;
		out->iterations += steps;
		rem -= bg * (double)steps;
	}
	return 0;
}

/* The trajectory's largest point, or 0 when the bound is 0 (no point, a
 * point <= 0 the estimate reports, no dataset). */
static long traj_max(const long *traj, int ntraj, double dataset)
{
	long xmax = 0;

	if (ntraj < 1 || !(dataset > 0))
		return 0;
	for (int k = 0; k < ntraj; k++) {
		if (traj[k] <= 0)
			return 0; /* the estimate reports it */
		xmax = traj[k] > xmax ? traj[k] : xmax;
	}
	return xmax;
}

/* Why the bound holds.  Point k of the walk runs s_k iterations of the
 * solver's answer (B_G b_k, time T_k), so epoch_s = sum_k T_k s_k, and
 * T_k = b_k / F_k with F_k <= F, the shape's throughput bound for requests
 * up to the trajectory's largest point (hb_iidp_shape_max_throughput; the
 * walk asks Algorithm 1 for trajectory points only): epoch_s >= S / F with
 * S = sum_k b_k s_k the samples the walk counts.  S is at least:
 *  - the dataset D when the walk ends with rem <= 0 (S = D - rem);
 *  - otherwise the walk reached the last point x = traj[n-1] with
 *    0 < rem_0 <= D left and ran s = floor(rem_0 / x) + 1 > rem_0 / x steps
 *    of b (not cut: rem_0 - b s >= 0), which needs b < x; so
 *    S = (D - rem_0) + b s > D - rem_0 (1 - b / x) >= D b / x, and b is at
 *    least the least realised B_G any candidate B_L gives x
 *    (hb_iidp_shape_min_global_bs).
 * Hence S >= D min(1, b_min / x) (D when x has no answer: then the walk
 * cannot end at x with rem > 0).  F = 0 means no B_L has M >= N_H
 * at any point: the first point has no answer and the estimate is
 * infeasible (INFINITY).  The solver's times and the walk are computed in
 * doubles, the bound too: it is lowered by a relative 1e-9, far above the
 * rounding of a few dozen sums and products.
 *
 * A point solved by the first point's rule (struct hb_jabas_first: exact,
 * or one fixed B_L; the first and any point of its value) has a subset of
 * Algorithm 1's candidates (B_L, M) for that point, with the same M, so its
 * answer's throughput is at most F too, and its realised B_G, one of those
 * candidates' 2 M B_L, is at least b_min when it is the last point: the
 * bound holds for it unchanged.
 *
 * This is hb_jabas_epoch_lower_bound with the trajectory's traj_max given:
 * a ranking bounds every shape on one trajectory.  mb, when not NULL, is b
 * with its memo, whose answers are the same (iidp.h). */
static double lower_bound_at(const struct hb_iidp_shape_bound *b, struct hb_iidp_shape_bound *mb, const long *traj,
			     int ntraj, long xmax, double dataset)
{
	double x, frac, f;
	long bmin;

	if (xmax <= 0)
		return 0.0;
	f = mb ? hb_iidp_shape_max_throughput_memo(mb, xmax) : hb_iidp_shape_max_throughput(b, xmax);
	if (f == 0.0)
		return INFINITY;
	if (!(f > 0.0) || isinf(f))
		return 0.0;
	x = (double)traj[ntraj - 1];
	bmin = mb ? hb_iidp_shape_min_global_bs_memo(mb, traj[ntraj - 1])
		  : hb_iidp_shape_min_global_bs(b, traj[ntraj - 1]);
	frac = bmin == LONG_MAX || (double)bmin >= x ? 1.0 : (double)bmin / x;
	return dataset * frac / f * (1.0 - 1e-9);
}

double hb_jabas_epoch_lower_bound(const struct hb_iidp_shape_bound *b, const long *traj, int ntraj, double dataset)
{
	return lower_bound_at(b, NULL, traj, ntraj, traj_max(traj, ntraj, dataset), dataset);
}

/* Ascending bound, then descending last: the likely winners first (any
 * order gives the same argmin, see below). */
static int cmp_rank(const void *a, const void *b)
{
	const struct hb_jabas_rank_item *x = a, *y = b;

	if (x->lb != y->lb)
		return x->lb < y->lb ? -1 : 1;
	return x->last > y->last ? -1 : x->last < y->last;
}

/* The winner is the least (epoch_s, -last) over the feasible estimates, so
 * comparing that pair makes the visiting order irrelevant (a caller
 * visiting by ascending last with "<=" picks the same one).  A shape's
 * estimate is at least its bound, so once the best time found is below a
 * shape's bound that shape can neither win nor tie, and it is not solved;
 * visiting by ascending bound, the first such shape ends the scan (the
 * rest are above it too) and a good shape is usually found early. */
int hb_jabas_rank_shapes(struct hb_iidp_solver *s, struct hb_jabas_rank_item *items, size_t n, const long *traj,
			 int ntraj, long p, long done_in_block, double dataset, const struct hb_jabas_first *first,
			 long *best, double *best_s, size_t *solved, struct hb_error *err)
{
	size_t nsolved = 0;
	const long xmax = traj_max(traj, ntraj, dataset);

	*best = -1;
	*best_s = INFINITY;
	for (size_t j = 0; j < n; j++)
		items[j].lb = lower_bound_at(items[j].bound, items[j].bound, traj, ntraj, xmax, dataset);
	qsort(items, n, sizeof(*items), cmp_rank);
	for (size_t k = 0; k < n; k++) {
		const struct hb_jabas_rank_item *r = &items[k];
		struct hb_epoch_estimate est;

		if (r->lb > *best_s)
			break;
		nsolved++;
		if (hb_jabas_epoch_time_shape(s, r->shape, traj, ntraj, p, done_in_block, dataset, first, &est,
					      err) < 0) {
			hb_error_prefix(err, "candidate %zu", r->last);
			return -1;
		}
		if (est.feasible && (est.epoch_s < *best_s ||
				     (est.epoch_s == *best_s && (*best < 0 || r->last > (size_t)*best)))) {
			*best = (long)r->last;
			*best_s = est.epoch_s;
		}
	}
	if (solved)
		*solved = nsolved;
	return 0;
}
