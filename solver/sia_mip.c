/*
 * sia_mip.c: Sia's round program on GLPK (sia_mip.h).
 */
#include <math.h>
#include <stdlib.h>

#include "sia_mip.h"

void hb_sia_problem_default(struct hb_sia_problem *pb)
{
	*pb = (struct hb_sia_problem){ 0 };
	pb->p = -0.5;        /* sia_default_p_val, simulator_config.py; §4.3 */
	pb->lambda_n = 1.1;  /* mip_lambda_n, run_experiment.sh; §4.3 */
	pb->clip = 3000.0;   /* sia_goodput_clip_val, simulator_config.py */
	pb->tie = 1e-6;      /* note A10: far below the 0.01 rounding quantum */
}

double hb_sia_restart_factor(double age_s, int restarts, double penalty_s)
{
	double f;

	if (age_s < penalty_s)
		return 1.0;
	f = (age_s - (double)restarts * penalty_s) / (age_s + penalty_s);
	return f > 0 ? f : 0.0;
}

int hb_sia_type_nconfigs(int nodes, int per_node)
{
	int n = 0;

	if (nodes <= 0 || per_node <= 0)
		return 0;
	for (int g = 1; g <= per_node; g *= 2)
		n++;
	return n + (nodes - 1);
}

int hb_sia_type_configs(int type, int nodes, int per_node, struct hb_sia_config *out, int *n)
{
	int k = 0;

	if (nodes <= 0 || per_node <= 0)
		return 0;
	for (int g = 1; g <= per_node; g *= 2)
		out[(*n)++] = (struct hb_sia_config){ type, 1, g }, k++;
	for (int nn = 2; nn <= nodes; nn++)
		out[(*n)++] = (struct hb_sia_config){ type, nn, nn * per_node }, k++;
	return k;
}

double hb_sia_normalise_row(double *row, int n)
{
	double lo = 0.0;

	for (int c = 0; c < n; c++)
		if (row[c] > 0 && (lo == 0.0 || row[c] < lo))
			lo = row[c];
	if (lo > 0)
		for (int c = 0; c < n; c++)
			if (row[c] > 0)
				row[c] /= lo;
	return lo;
}

double hb_sia_coef(const struct hb_sia_problem *pb, int i, int c)
{
	double g = pb->goodput[(size_t)i * (size_t)pb->nconfigs + (size_t)c];
	int prev = pb->prev ? pb->prev[i] : -1;
	double a;

	if (c != prev && pb->restart)
		g *= pb->restart[i];
	if (!(g > 0))
		return pb->clip; /* a restart factor of 0: the worst value, capped */
	a = round(pow(g, pb->p) * 100.0) / 100.0;
	return a < pb->clip ? a : pb->clip;
}

double hb_sia_objective(const struct hb_sia_problem *pb, const int *choice)
{
	double e = 0.0;

	for (int i = 0; i < pb->njobs; i++)
		e += choice[i] >= 0 ? hb_sia_coef(pb, i, choice[i]) : pb->lambda_n;
	return e;
}

static int check(const struct hb_sia_problem *pb, struct hb_error *err)
{
	if (pb->njobs < 0 || pb->nconfigs < 1 || pb->ntypes < 1 || !pb->configs || !pb->capacity ||
	    (pb->njobs > 0 && !pb->goodput))
		return hb_input_error(err, "sia: %d jobs, %d configurations, %d GPU types: not a problem", pb->njobs,
				      pb->nconfigs, pb->ntypes);
	if (!(pb->p != 0 && isfinite(pb->p)) || !isfinite(pb->lambda_n) || !(pb->clip > 0) || !(pb->tie >= 0))
		return hb_input_error(err, "sia: p %g, lambda_n %g, clip %g, tie %g: p must be non-zero, clip > 0",
				      pb->p, pb->lambda_n, pb->clip, pb->tie);
	for (int t = 0; t < pb->ntypes; t++)
		if (pb->capacity[t] < 0)
			return hb_input_error(err, "sia: GPU type %d: capacity %d < 0", t, pb->capacity[t]);
	for (int c = 0; c < pb->nconfigs; c++) {
		const struct hb_sia_config *k = &pb->configs[c];

		if (k->type < 0 || k->type >= pb->ntypes || k->gpus < 1 || k->nodes < 1)
			return hb_input_error(err, "sia: configuration %d: type %d (of %d), %d nodes, %d GPUs", c, k->type,
					      pb->ntypes, k->nodes, k->gpus);
	}
	for (int i = 0; i < pb->njobs; i++) {
		int prev = pb->prev ? pb->prev[i] : -1;

		if (prev < -1 || prev >= pb->nconfigs)
			return hb_input_error(err, "sia: job %d: previous configuration %d (of %d)", i, prev, pb->nconfigs);
		if (pb->restart && !(pb->restart[i] >= 0 && pb->restart[i] <= 1))
			return hb_input_error(err, "sia: job %d: restart factor %g outside [0, 1]", i, pb->restart[i]);
		if (pb->pinned && pb->pinned[i] && prev < 0)
			return hb_input_error(err, "sia: job %d is pinned but has no previous configuration", i);
		for (int c = 0; c < pb->nconfigs; c++)
			if (isnan(pb->goodput[(size_t)i * (size_t)pb->nconfigs + (size_t)c]))
				return hb_input_error(err, "sia: job %d, configuration %d: goodput is NaN", i, c);
	}
	return 0;
}

int hb_sia_solve(const struct hb_sia_problem *pb, const struct hb_milp_opts *o, int *choice, double *objective,
		 int *status, struct hb_error *err)
{
	struct hb_milp m;
	int J = pb->njobs, C = pb->nconfigs, st = HB_MILP_ERROR, rc = -1, *col = NULL, *idx = NULL;
	double *val = NULL, sign;

	if (status)
		*status = HB_MILP_ERROR;
	if (check(pb, err) < 0)
		return -1;
	for (int i = 0; i < J; i++)
		choice[i] = -1;
	if (J == 0) {
		if (objective)
			*objective = 0.0;
		if (status)
			*status = HB_MILP_OPTIMAL;
		return 0;
	}
	/* The tie-break favours the higher column: a smaller E when minimising. */
	sign = pb->p < 0 ? -1.0 : 1.0;
	hb_milp_init(&m, pb->p > 0);
	m.obj_const = pb->lambda_n * J;
	col = malloc(sizeof(int) * (size_t)J * (size_t)C);
	idx = malloc(sizeof(int) * (size_t)J * (size_t)C);
	val = malloc(sizeof(double) * (size_t)J * (size_t)C);
	if (!col || !idx || !val) {
		hb_runtime_error(err, "sia: out of memory");
		goto out;
	}
	/* Only valid configurations are columns (the rest are X = 0). */
	for (int i = 0; i < J; i++)
		for (int c = 0; c < C; c++) {
			double g = pb->goodput[(size_t)i * C + c], a;
			int pin = pb->pinned && pb->pinned[i], prev = pb->prev ? pb->prev[i] : -1;

			col[(size_t)i * C + c] = -1;
			if (pin ? c != prev : !(g > 0))
				continue;
			a = hb_sia_coef(pb, i, c) - pb->lambda_n + sign * pb->tie * (double)(c + 1) / (double)C;
			if (hb_milp_add_col(&m, pin ? 1.0 : 0.0, 1.0, a, 1, &col[(size_t)i * C + c], err) < 0)
				goto out;
		}
	/* At most one configuration per job. */
	for (int i = 0; i < J; i++) {
		int n = 0;

		for (int c = 0; c < C; c++)
			if (col[(size_t)i * C + c] >= 0) {
				idx[n] = col[(size_t)i * C + c];
				val[n++] = 1.0;
			}
		if (n > 1 && hb_milp_add_row(&m, n, idx, val, -HUGE_VAL, 1.0, err) < 0)
			goto out;
	}
	/* GPUs per type. */
	for (int t = 0; t < pb->ntypes; t++) {
		int n = 0;

		for (int i = 0; i < J; i++)
			for (int c = 0; c < C; c++)
				if (pb->configs[c].type == t && col[(size_t)i * C + c] >= 0) {
					idx[n] = col[(size_t)i * C + c];
					val[n++] = pb->configs[c].gpus;
				}
		if (n > 0 && hb_milp_add_row(&m, n, idx, val, -HUGE_VAL, pb->capacity[t], err) < 0)
			goto out;
	}
	if (m.ncols == 0) {
		/* No job has a valid configuration: everyone waits. */
		if (objective)
			*objective = hb_sia_objective(pb, choice);
		st = HB_MILP_OPTIMAL;
		rc = 0;
		goto out;
	}
	if (hb_milp_solve(&m, o, &st, err) < 0) {
		if (st == HB_MILP_INFEASIBLE)
			hb_error_prefix(err, "sia: the pinned jobs need more GPUs than a type has");
		goto out;
	}
	for (int i = 0; i < J; i++)
		for (int c = 0; c < C; c++) {
			int k = col[(size_t)i * C + c];

			if (k >= 0 && m.x[k] > 0.5)
				choice[i] = c;
		}
	if (objective)
		*objective = hb_sia_objective(pb, choice);
	rc = 0;
out:
	if (status)
		*status = st;
	hb_milp_free(&m);
	free(col);
	free(idx);
	free(val);
	return rc;
}
