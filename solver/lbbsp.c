/*
 * lbbsp.c: LB-BSP's Δ-step re-balancing (lbbsp.h).
 */
#include "lbbsp.h"

double hb_lbbsp_compute_time(const struct hb_optperf_cluster *cl, size_t i, double b)
{
	const struct hb_optperf_node *nd = &cl->node[i];

	return (nd->fwd_per_sample_s + nd->bwd_per_sample_s) * b + nd->fwd_fixed_s + nd->bwd_fixed_s;
}

double hb_lbbsp_max_compute(const struct hb_optperf_cluster *cl, const long *local)
{
	double worst = 0.0;

	for (size_t i = 0; i < cl->n; i++) {
		double t = hb_lbbsp_compute_time(cl, i, (double)local[i]);

		if (t > worst)
			worst = t;
	}
	return worst;
}

/* Σ bounds and the split's own sum, for the checks every entry point makes. */
static int check_split(const struct hb_optperf_cluster *cl, const long *local, struct hb_error *err)
{
	if (hb_optperf_validate(cl, err) < 0)
		return -1;
	for (size_t i = 0; i < cl->n; i++)
		if (local[i] < cl->node[i].min_batch || local[i] > cl->node[i].max_batch)
			return hb_input_error(err, "lbbsp: node %zu: local batch %ld outside [min_batch %ld, max_batch %ld]",
					      i, local[i], cl->node[i].min_batch, cl->node[i].max_batch);
	return 0;
}

int hb_even_split(const struct hb_optperf_cluster *cl, long total, long *local, struct hb_error *err)
{
	long lo = 0, hi = 0, left;

	if (hb_optperf_validate(cl, err) < 0)
		return -1;
	for (size_t i = 0; i < cl->n; i++) {
		lo += cl->node[i].min_batch;
		hi += cl->node[i].max_batch;
	}
	if (total < lo || total > hi)
		return hb_input_error(err, "lbbsp: total batch %ld outside [%ld, %ld], the sum of the %zu nodes' "
				      "min_batch and max_batch", total, lo, hi, cl->n);
	left = total;
	for (size_t i = 0; i < cl->n; i++) {
		long share = total / (long)cl->n + ((long)i < total % (long)cl->n ? 1 : 0);

		if (share > cl->node[i].max_batch)
			share = cl->node[i].max_batch;
		if (share < cl->node[i].min_batch)
			share = cl->node[i].min_batch;
		local[i] = share;
		left -= share;
	}
	/* Clamping moved samples; hand them back (or take them) in node order.
	 * The bounds checked above guarantee this terminates. */
	for (size_t i = 0; left != 0 && i < cl->n; i++) {
		long room = left > 0 ? cl->node[i].max_batch - local[i] : cl->node[i].min_batch - local[i];
		long d = left > 0 ? (room < left ? room : left) : (room > left ? room : left);

		local[i] += d;
		left -= d;
	}
	return 0;
}

int hb_lbbsp_step(const struct hb_optperf_cluster *cl, long delta, long *local, long *moved,
		  struct hb_error *err)
{
	size_t s = cl->n, f = cl->n;
	double ts = 0.0, tf = 0.0;
	long d;

	if (moved)
		*moved = 0;
	if (delta < 1)
		return hb_input_error(err, "lbbsp: step size delta %ld must be >= 1", delta);
	if (check_split(cl, local, err) < 0)
		return -1;
	/* The slowest node that can give samples, the fastest that can take
	 * them (a node at its memory cap cannot, LB-BSP's own constraint). */
	for (size_t i = 0; i < cl->n; i++) {
		double t = hb_lbbsp_compute_time(cl, i, (double)local[i]);

		if (local[i] > cl->node[i].min_batch && (s == cl->n || t > ts))
			s = i, ts = t;
		if (local[i] < cl->node[i].max_batch && (f == cl->n || t < tf))
			f = i, tf = t;
	}
	if (s == cl->n || f == cl->n || s == f)
		return 0;
	d = delta;
	if (local[s] - cl->node[s].min_batch < d)
		d = local[s] - cl->node[s].min_batch;
	if (cl->node[f].max_batch - local[f] < d)
		d = cl->node[f].max_batch - local[f];
	/* Balanced: giving f the samples would make it the new straggler. */
	if (!(hb_lbbsp_compute_time(cl, f, (double)(local[f] + d)) < ts))
		return 0;
	local[s] -= d;
	local[f] += d;
	if (moved)
		*moved = d;
	return 0;
}

int hb_lbbsp_balance(const struct hb_optperf_cluster *cl, long delta, long max_rounds, long *local,
		     long *rounds, struct hb_error *err)
{
	long r = 0, moved = 1;

	if (rounds)
		*rounds = 0;
	if (max_rounds < 0)
		return hb_input_error(err, "lbbsp: max_rounds %ld must be >= 0", max_rounds);
	while (r < max_rounds) {
		if (hb_lbbsp_step(cl, delta, local, &moved, err) < 0)
			return -1;
		if (!moved)
			break;
		r++;
	}
	if (rounds)
		*rounds = r;
	return 0;
}
