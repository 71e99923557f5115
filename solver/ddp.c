/*
 * ddp.c: equal-local-batch data parallelism, the baselines' layout (ddp.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"
#include "perf_measured.h"

static int model_time_n(const struct hb_perf *p, const int *alloc, int ng, int nn, int local_bs, int ga_steps,
			double *iter_s, int *slowest_node, struct hb_error *err);

/* The perf model's time: the slowest GPU of the allocation sets the pace. */
static int model_time(const struct hb_perf *p, const int *alloc, int local_bs, int ga_steps, double *iter_s,
		      int *slowest_node, struct hb_error *err)
{
	int ng, nn;

	/* counted once for every node's communication (hb_perf_comm_eval_n) */
	if (hb_perf_alloc_gpus(p, alloc, &ng, &nn, err) != 0)
		return -1;
	return model_time_n(p, alloc, ng, nn, local_bs, ga_steps, iter_s, slowest_node, err);
}

/* model_time with the allocation's GPUs and nodes counted. */
static int model_time_n(const struct hb_perf *p, const int *alloc, int ng, int nn, int local_bs, int ga_steps,
			double *iter_s, int *slowest_node, struct hb_error *err)
{
	double worst = -1.0;
	int who = -1;

	for (int i = 0; i < p->nnodes; i++) {
		const struct hb_perf_lbs *l;
		struct hb_perf_comm c;
		struct hb_perf_coef k;
		double t;

		if (alloc[i] == 0)
			continue;
		l = hb_perf_find_lbs(p, p->nodes[i].gpu, local_bs);
		if (!l || l->n_cap < 1)
			return hb_input_error(err, "DDP model: GPU %s (node %s) has no feasible profile at local batch %d",
					      p->gpus[p->nodes[i].gpu].name, p->nodes[i].name, local_bs);
		if (hb_perf_comm_eval_n(p, i, ng, nn, &c, err) != 0 || hb_perf_coef_eval(p, l, &c, 1, 1.0, &k, err) != 0)
			return -1;
		t = hb_perf_iter_s(&k, ga_steps);
		if (t > worst) {
			worst = t;
			who = i;
		}
	}
	*iter_s = worst;
	if (slowest_node)
		*slowest_node = who;
	return 0;
}

/*
 * Measured steps (perf_measured.h) are the truth of the layouts they cover
 * (one GPU type, gpu: every node of it is as slow as the others).  A layout
 * they do not cover (Optimus's 17 GPUs on 5 nodes: placements stop at 16
 * GPUs, scalability has 6, 8, 12 and 16 nodes) gets the model's time scaled
 * by measured / model at the nearest measured layout and the same batch,
 * that layout laid on the first nodes of the type, so the model's optimism
 * where measurements exist does not favour layouts where they do not
 * (Pollux's artifact interpolates linearly over (nodes, replicas, m) there
 * instead).
 */
static int measured_time(const struct hb_perf *p, const struct hb_perf_measured *m, int gpu, const int *alloc,
			 int local_bs, int ga_steps, double *iter_s, int *found, struct hb_error *err)
{
	int counts[64], nref = 0;
	double meas, model_ref, model_q;

	*found = 0;
	if (hb_perf_measured_step(m, alloc, p->nnodes, local_bs, ga_steps, iter_s)) {
		*found = 1;
		return 0;
	}
	if (!hb_perf_measured_nearest(m, alloc, p->nnodes, local_bs, ga_steps, counts, 64, &nref, &meas))
		return 0;
	{
		int *r = calloc((size_t)p->nnodes, sizeof(int));
		struct hb_error ref_err = { 0 };
		int bad, k = 0;

		if (!r)
			return hb_runtime_error(err, "DDP model: out of memory");
		/* The reference layout on the type's first nodes (any will do);
		 * a type with fewer nodes than the layout leaves the query to the
		 * model alone. */
		for (int i = 0; i < p->nnodes && k < nref; i++)
			if (p->nodes[i].gpu == gpu) {
				r[i] = counts[k] <= p->nodes[i].ngpus ? counts[k] : p->nodes[i].ngpus;
				k++;
			}
		/* A reference the model cannot time (no fit for its links) leaves
		 * the query to the model alone. */
		bad = k < nref || model_time(p, r, local_bs, ga_steps, &model_ref, NULL, &ref_err) != 0;
		free(r);
		if (bad)
			return 0;
		if (model_time(p, alloc, local_bs, ga_steps, &model_q, NULL, err) != 0)
			return -1;
	}
	if (!(model_ref > 0))
		return 0;
	*iter_s = model_q * meas / model_ref;
	*found = 1;
	return 0;
}

int hb_ddp_iter_time(const struct hb_perf *p, const int *alloc, int local_bs, int ga_steps, double *iter_s,
		     int *slowest_node, struct hb_error *err)
{
	const struct hb_perf_measured *m;
	int ng, nn, found = 0, gpu;

	if (!p->prepared)
		return hb_input_error(err, "DDP model: perf model %s is not prepared", p->model);
	if (ga_steps < 0)
		return hb_input_error(err, "DDP model: %d GA steps", ga_steps);
	if (hb_perf_alloc_gpus(p, alloc, &ng, &nn, err) != 0)
		return -1;
	if ((m = hb_perf_measured_of(p, alloc, &gpu))) {
		if (measured_time(p, m, gpu, alloc, local_bs, ga_steps, iter_s, &found, err) != 0)
			return -1;
		if (found) {
			if (slowest_node)
				for (int i = 0, done = 0; i < p->nnodes && !done; i++)
					if (alloc[i] > 0) {
						*slowest_node = i;
						done = 1;
					}
			return 0;
		}
	}
	return model_time_n(p, alloc, ng, nn, local_bs, ga_steps, iter_s, slowest_node, err);
}

int hb_ddp_plan(const struct hb_perf *p, const int *alloc, long target_global_bs, struct hb_ddp_result *out,
		struct hb_error *err)
{
	int *lbs = NULL, nl = 0, ng, best = -1;
	long s, maxl;
	double want, bd = INFINITY;

	memset(out, 0, sizeof(*out));
	if (!p->prepared)
		return hb_input_error(err, "DDP model: perf model %s is not prepared", p->model);
	if (target_global_bs <= 0)
		return hb_input_error(err, "DDP model: global batch %ld must be > 0", target_global_bs);
	if (hb_perf_alloc_gpus(p, alloc, &ng, NULL, err) != 0 || hb_perf_alloc_lbs(p, alloc, &lbs, &nl, err) != 0)
		return -1;
	out->n_gpus = ng;
	if (nl == 0) {
		snprintf(out->why, sizeof(out->why),
			 "no multiple of minB_L %d fits every GPU type of the allocation (model %s)", p->min_lbs,
			 p->model);
		return 0;
	}
	/* A target outside the model's bounds plans the bound (perfmodel.h). */
	if (p->max_gbs > 0 && target_global_bs > p->max_gbs)
		target_global_bs = p->max_gbs;
	if (p->min_gbs > 0 && target_global_bs < p->min_gbs)
		target_global_bs = p->min_gbs;
	maxl = lbs[nl - 1];
	s = (target_global_bs + (long)ng * maxl - 1) / ((long)ng * maxl);
	if (s < 1)
		s = 1;
	if (s - 1 > 1000000000L) {
		free(lbs);
		return hb_input_error(err, "DDP model: global batch %ld needs %ld accumulation steps", target_global_bs,
				      s - 1);
	}
	want = (double)target_global_bs / ((double)ng * (double)s);
	for (int i = 0; i < nl; i++) {
		double d = fabs(lbs[i] - want);

		/* the nearest B_L whose realised B_G stays inside the bounds */
		if (!hb_perf_gbs_in_bounds(p, (long)lbs[i] * ng * s))
			continue;
		if (d <= bd) { /* ascending list: <= lets a tie go to the larger B_L */
			bd = d;
			best = lbs[i];
		}
	}
	if (best < 0) {
		snprintf(out->why, sizeof(out->why),
			 "no B_L (multiples of %d up to %ld) x %d GPUs x %ld steps is inside the model's global batch "
			 "bounds [%ld, %ld]", p->min_lbs, maxl, ng, s, p->min_gbs, p->max_gbs);
		free(lbs);
		return 0;
	}
	free(lbs);
	out->local_bs = best;
	out->ga_steps = (int)(s - 1);
	out->global_bs = (long)best * ng * s;
	if (hb_ddp_iter_time(p, alloc, best, out->ga_steps, &out->iter_s, &out->slowest_node, err) != 0)
		return -1;
	out->throughput = (double)out->global_bs / out->iter_s;
	out->found = 1;
	return 0;
}
