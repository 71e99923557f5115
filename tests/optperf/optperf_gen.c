/* Random OptPerf instances (see optperf_gen.h). */
#include <math.h>

#include "optperf_gen.h"

static double uni(struct hb_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * hb_rng_uniform(r);
}

static double log_uni(struct hb_rng *r, double lo, double hi)
{
	return exp(uni(r, log(lo), log(hi)));
}

static long int_between(struct hb_rng *r, long lo, long hi)
{
	return lo + (long)hb_rng_below(r, (uint64_t)(hi - lo + 1));
}

static void gen_node(struct hb_rng *r, struct hb_optperf_node *nd)
{
	double slow = log_uni(r, 1, 8);

	nd->fwd_per_sample_s = 1e-4 * slow * uni(r, 0.5, 1.5);
	nd->bwd_per_sample_s = 2e-4 * slow * uni(r, 0.5, 1.5);
	nd->fwd_fixed_s = 2e-3 * slow * hb_rng_uniform(r);
	nd->bwd_fixed_s = 3e-3 * hb_rng_uniform(r);
	nd->max_batch = int_between(r, 8, 1024);
	nd->min_batch = hb_rng_uniform(r) < 0.7 ? 0 : int_between(r, 1, 8);
}

static double gen_gamma(struct hb_rng *r, int allow_one)
{
	double u = hb_rng_uniform(r);

	if (u < 0.1)
		return 0;
	if (allow_one && u < 0.15)
		return 1;
	return uni(r, 0, 0.9);
}

void optperf_gen_cluster(struct hb_rng *r, size_t n, enum optperf_gen_kind kind,
			 struct hb_optperf_node *node, struct hb_optperf_cluster *cl)
{
	double lim;

	for (size_t i = 0; i < n; i++)
		gen_node(r, &node[i]);
	cl->n = n;
	cl->node = node;
	cl->last_comm_s = uni(r, 0, 5e-3);
	if (kind == OPTPERF_GEN_MIXED && n < 2)
		kind = OPTPERF_GEN_SWITCH;
	switch (kind) {
	case OPTPERF_GEN_ANY:
	case OPTPERF_GEN_FLOOR:
		cl->gamma = gen_gamma(r, 1);
		cl->overlap_comm_s = log_uni(r, 1e-5, 1);
		if (kind == OPTPERF_GEN_FLOOR)
			node[hb_rng_below(r, n)].fwd_fixed_s = uni(r, 0.05, 0.5);
		break;
	case OPTPERF_GEN_COMPUTE:
		cl->gamma = gen_gamma(r, 1);
		lim = INFINITY;
		for (size_t i = 0; i < n; i++)
			lim = fmin(lim, (1 - cl->gamma) * node[i].bwd_fixed_s);
		cl->overlap_comm_s = hb_rng_uniform(r) < 0.2 ? 0 : lim * hb_rng_uniform(r);
		break;
	case OPTPERF_GEN_COMM:
		cl->gamma = gen_gamma(r, 1);
		lim = 0;
		for (size_t i = 0; i < n; i++)
			lim = fmax(lim, (1 - cl->gamma) * (node[i].bwd_per_sample_s * (double)node[i].max_batch +
							   node[i].bwd_fixed_s));
		cl->overlap_comm_s = lim * uni(r, 1.01, 3) + 1e-6;
		break;
	case OPTPERF_GEN_MIXED: {
		double to, knee;

		cl->gamma = gen_gamma(r, 0);
		to = uni(r, 1e-3, 2e-2);
		knee = to / (1 - cl->gamma); /* P_i at which a node switches */
		cl->overlap_comm_s = to;
		node[0].bwd_fixed_s = knee * uni(r, 1, 2);
		node[1].bwd_fixed_s = knee * uni(r, 0, 0.5);
		node[1].bwd_per_sample_s = uni(r, 0.1, 0.9) * (knee - node[1].bwd_fixed_s) /
					   (double)node[1].max_batch;
		break;
	}
	case OPTPERF_GEN_SWITCH:
	default: {
		const struct hb_optperf_node *nd = &node[hb_rng_below(r, n)];
		double b = uni(r, (double)nd->min_batch, (double)nd->max_batch);

		cl->gamma = gen_gamma(r, 0);
		cl->overlap_comm_s = (1 - cl->gamma) * (nd->bwd_per_sample_s * b + nd->bwd_fixed_s);
		break;
	}
	}
}

long optperf_gen_batch(struct hb_rng *r, const struct hb_optperf_cluster *cl)
{
	long lo = 0, hi = 0;

	for (size_t i = 0; i < cl->n; i++) {
		lo += cl->node[i].min_batch;
		hi += cl->node[i].max_batch;
	}
	if (lo < 1)
		lo = 1;
	if (hb_rng_uniform(r) < 0.2) {
		long top = hi - (hi - lo) / 10;

		lo = top > lo ? top : lo;
	}
	return int_between(r, lo, hi);
}
