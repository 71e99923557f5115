/* Brute-force OptPerf references (see optperf_oracle.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optperf_oracle.h"

double optperf_oracle_node_time(const struct hb_optperf_cluster *cl, size_t i, double b)
{
	const struct hb_optperf_node *nd = &cl->node[i];
	double a = nd->fwd_per_sample_s * b + nd->fwd_fixed_s;
	double p = nd->bwd_per_sample_s * b + nd->bwd_fixed_s;

	return a + cl->gamma * p + fmax((1 - cl->gamma) * p, cl->overlap_comm_s) + cl->last_comm_s;
}

double optperf_oracle_max_batch(const struct hb_optperf_cluster *cl, size_t i, double t)
{
	double lo = (double)cl->node[i].min_batch, hi = (double)cl->node[i].max_batch;

	if (optperf_oracle_node_time(cl, i, lo) > t)
		return -1;
	if (optperf_oracle_node_time(cl, i, hi) <= t)
		return hi;
	/* Invariant: T_i(lo) <= t < T_i(hi). */
	for (int it = 0; it < 200; it++) {
		double mid = lo + 0.5 * (hi - lo);

		if (mid <= lo || mid >= hi)
			break;
		if (optperf_oracle_node_time(cl, i, mid) <= t)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static double covered(const struct hb_optperf_cluster *cl, double t)
{
	double s = 0;

	for (size_t i = 0; i < cl->n; i++) {
		double b = optperf_oracle_max_batch(cl, i, t);

		if (b < 0)
			return -1;
		s += b;
	}
	return s;
}

double optperf_oracle_time(const struct hb_optperf_cluster *cl, double total)
{
	double lo = 0, hi = 0;

	for (size_t i = 0; i < cl->n; i++) {
		lo = fmax(lo, optperf_oracle_node_time(cl, i, (double)cl->node[i].min_batch));
		hi = fmax(hi, optperf_oracle_node_time(cl, i, (double)cl->node[i].max_batch));
	}
	if (covered(cl, lo) >= total)
		return lo;
	/* Invariant: covered(lo) < total <= covered(hi). */
	for (int it = 0; it < 400; it++) {
		double mid = lo + 0.5 * (hi - lo);

		if (mid <= lo || mid >= hi)
			break;
		if (covered(cl, mid) >= total)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

struct search {
	const struct hb_optperf_cluster *cl;
	long *cur, *best;
	double best_t;
};

static void enumerate(struct search *s, size_t i, long left, double t_so_far)
{
	const struct hb_optperf_node *nd;

	if (t_so_far >= s->best_t)
		return;
	if (i == s->cl->n) {
		if (left == 0) {
			s->best_t = t_so_far;
			memcpy(s->best, s->cur, s->cl->n * sizeof(*s->best));
		}
		return;
	}
	nd = &s->cl->node[i];
	for (long b = nd->min_batch; b <= nd->max_batch && b <= left; b++) {
		s->cur[i] = b;
		enumerate(s, i + 1, left - b, fmax(t_so_far, optperf_oracle_node_time(s->cl, i, (double)b)));
	}
}

double optperf_oracle_int_split(const struct hb_optperf_cluster *cl, long total, long *best)
{
	struct search s = { cl, calloc(cl->n, sizeof(long)), best, INFINITY };

	enumerate(&s, 0, total, -INFINITY);
	free(s.cur);
	return s.best_t;
}
