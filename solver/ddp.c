/*
 * ddp.c: equal-local-batch data parallelism, the baselines' layout (ddp.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"

int hb_ddp_iter_time(const struct hb_perf *p, const int *alloc, int local_bs, int ga_steps, double *iter_s,
		     int *slowest_node, struct hb_error *err)
{
	double worst = -1.0;
	int ng, who = -1;

	if (!p->prepared)
		return hb_input_error(err, "DDP model: perf model %s is not prepared", p->model);
	if (ga_steps < 0)
		return hb_input_error(err, "DDP model: %d GA steps", ga_steps);
	if (hb_perf_alloc_gpus(p, alloc, &ng, NULL, err) != 0)
		return -1;
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
		if (hb_perf_comm_eval(p, alloc, i, &c, err) != 0 || hb_perf_coef_eval(p, l, &c, 1, 1.0, &k, err) != 0)
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
		if (d <= bd) { /* ascending list: <= lets a tie go to the larger B_L */
			bd = d;
			best = lbs[i];
		}
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
