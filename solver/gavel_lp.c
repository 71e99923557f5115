/*
 * gavel_lp.c: Gavel's max-min fairness, max-sum-throughput and finish-time
 * fairness programs on GLPK
 * (gavel_lp.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gavel_lp.h"

int hb_gavel_runnable(const struct hb_gavel_problem *pb, int m, int j)
{
	return pb->tput[(size_t)m * pb->ntypes + j] > 0 && pb->scale[m] <= pb->capacity[j];
}

int hb_gavel_check(const struct hb_gavel_problem *pb, struct hb_error *err)
{
	if (pb->njobs < 0 || pb->ntypes < 1 || !pb->capacity || (pb->njobs > 0 && (!pb->tput || !pb->scale)))
		return hb_input_error(err, "gavel: %d jobs, %d GPU types: not a problem", pb->njobs, pb->ntypes);
	for (int j = 0; j < pb->ntypes; j++)
		if (pb->capacity[j] < 0)
			return hb_input_error(err, "gavel: GPU type %d: capacity %d < 0", j, pb->capacity[j]);
	for (int m = 0; m < pb->njobs; m++) {
		int any = 0;

		if (pb->scale[m] < 1)
			return hb_input_error(err, "gavel: job %d: scale factor %d < 1", m, pb->scale[m]);
		if (pb->weight && !(pb->weight[m] > 0 && isfinite(pb->weight[m])))
			return hb_input_error(err, "gavel: job %d: priority weight %g is not > 0", m, pb->weight[m]);
		for (int j = 0; j < pb->ntypes; j++) {
			double t = pb->tput[(size_t)m * pb->ntypes + j];

			if (!(t >= 0 && isfinite(t)))
				return hb_input_error(err, "gavel: job %d, GPU type %d: throughput %g is not >= 0", m, j, t);
			any |= hb_gavel_runnable(pb, m, j);
		}
		if (!any)
			return hb_input_error(err, "gavel: job %d (%d GPUs) can run on no GPU type", m, pb->scale[m]);
	}
	return 0;
}

int hb_gavel_proportional(const struct hb_gavel_problem *pb, double *prop, struct hb_error *err)
{
	double total = 0.0;

	if (hb_gavel_check(pb, err) < 0)
		return -1;
	for (int j = 0; j < pb->ntypes; j++)
		total += pb->capacity[j];
	for (int m = 0; m < pb->njobs; m++) {
		prop[m] = 0.0;
		for (int j = 0; j < pb->ntypes; j++)
			prop[m] += pb->tput[(size_t)m * pb->ntypes + j] * pb->capacity[j] / total;
	}
	return 0;
}

double hb_gavel_norm_tput(const struct hb_gavel_problem *pb, const double *prop, const double *x, int m)
{
	double s = 0.0, w = pb->weight ? pb->weight[m] : 1.0;

	for (int j = 0; j < pb->ntypes; j++)
		s += pb->tput[(size_t)m * pb->ntypes + j] * pb->scale[m] / (w * prop[m]) * x[(size_t)m * pb->ntypes + j];
	return s;
}

int hb_gavel_feasible(const struct hb_gavel_problem *pb, const double *x, double tol)
{
	for (int m = 0; m < pb->njobs; m++) {
		double s = 0.0;

		for (int j = 0; j < pb->ntypes; j++) {
			double v = x[(size_t)m * pb->ntypes + j];

			if (v < -tol || v > 1 + tol || (v > tol && !hb_gavel_runnable(pb, m, j)))
				return 0;
			s += v;
		}
		if (s > 1 + tol)
			return 0;
	}
	for (int j = 0; j < pb->ntypes; j++) {
		double s = 0.0;

		for (int m = 0; m < pb->njobs; m++)
			s += pb->scale[m] * x[(size_t)m * pb->ntypes + j];
		if (s > pb->capacity[j] + tol)
			return 0;
	}
	return 1;
}

/* Columns X[m][j] (0..M*T-1; fixed at 0 where the job cannot run) and the
 * base constraints; obj[m*T+j] their objective coefficients. */
static int base_lp(struct hb_milp *lp, const struct hb_gavel_problem *pb, const double *obj, int *idx, double *val,
		   struct hb_error *err)
{
	int M = pb->njobs, T = pb->ntypes;

	for (int m = 0; m < M; m++)
		for (int j = 0; j < T; j++)
			if (hb_milp_add_col(lp, 0.0, hb_gavel_runnable(pb, m, j) ? 1.0 : 0.0,
					    obj ? obj[(size_t)m * T + j] : 0.0, 0, NULL, err) < 0)
				return -1;
	for (int m = 0; m < M; m++) {
		for (int j = 0; j < T; j++) {
			idx[j] = m * T + j;
			val[j] = 1.0;
		}
		if (hb_milp_add_row(lp, T, idx, val, -HUGE_VAL, 1.0, err) < 0)
			return -1;
	}
	for (int j = 0; j < T; j++) {
		for (int m = 0; m < M; m++) {
			idx[m] = m * T + j;
			val[m] = pb->scale[m];
		}
		if (hb_milp_add_row(lp, M, idx, val, -HUGE_VAL, pb->capacity[j], err) < 0)
			return -1;
	}
	return 0;
}

static void take_x(const struct hb_milp *lp, const struct hb_gavel_problem *pb, double *x)
{
	for (int k = 0; k < pb->njobs * pb->ntypes; k++) {
		double v = lp->x[k];

		v = v < 0 ? 0 : v > 1 ? 1 : v;
		x[k] = round(v * 1e5) / 1e5;
	}
}

static int solve(struct hb_milp *lp, const struct hb_milp_opts *o, const char *what, struct hb_error *err)
{
	int st;

	if (hb_milp_solve(lp, o, &st, err) < 0) {
		hb_error_prefix(err, "gavel %s", what);
		return -1;
	}
	return 0;
}

int hb_gavel_max_min_fairness(const struct hb_gavel_problem *pb, const struct hb_milp_opts *o, double *x,
			      double *objective, struct hb_error *err)
{
	int M = pb->njobs, T = pb->ntypes, n = (M > T ? M : T) + 1, rc = -1, z;
	struct hb_milp lp;
	double *prop = NULL, *val = NULL;
	int *idx = NULL;

	if (hb_gavel_check(pb, err) < 0)
		return -1;
	if (M == 0) {
		if (objective)
			*objective = 0.0;
		return 0;
	}
	hb_milp_init(&lp, 1);
	prop = malloc(sizeof(double) * (size_t)M);
	idx = malloc(sizeof(int) * (size_t)n);
	val = malloc(sizeof(double) * (size_t)n);
	if (!prop || !idx || !val) {
		hb_runtime_error(err, "gavel: out of memory");
		goto out;
	}
	if (hb_gavel_proportional(pb, prop, err) < 0 || base_lp(&lp, pb, NULL, idx, val, err) < 0)
		goto out;
	/* z <= every job's normalised throughput; maximise z.  z >= 0 holds at
	 * X = 0, so bounding it below changes nothing. */
	if (hb_milp_add_col(&lp, 0.0, HUGE_VAL, 1.0, 0, &z, err) < 0)
		goto out;
	for (int m = 0; m < M; m++) {
		double w = pb->weight ? pb->weight[m] : 1.0;

		for (int j = 0; j < T; j++) {
			idx[j] = m * T + j;
			val[j] = pb->tput[(size_t)m * T + j] * pb->scale[m] / (w * prop[m]);
		}
		idx[T] = z;
		val[T] = -1.0;
		if (hb_milp_add_row(&lp, T + 1, idx, val, 0.0, HUGE_VAL, err) < 0)
			goto out;
	}
	if (solve(&lp, o, "max-min fairness", err) < 0)
		goto out;
	take_x(&lp, pb, x);
	if (objective)
		*objective = lp.objective;
	rc = 0;
out:
	hb_milp_free(&lp);
	free(prop);
	free(idx);
	free(val);
	return rc;
}

int hb_gavel_max_sum_throughput(const struct hb_gavel_problem *pb, const struct hb_milp_opts *o, double *x,
				double *objective, struct hb_error *err)
{
	int M = pb->njobs, T = pb->ntypes, n = (M > T ? M : T) + 1, rc = -1;
	struct hb_milp lp;
	int *idx = NULL;
	double *val = NULL;

	if (hb_gavel_check(pb, err) < 0)
		return -1;
	if (M == 0) {
		if (objective)
			*objective = 0.0;
		return 0;
	}
	hb_milp_init(&lp, 1);
	idx = malloc(sizeof(int) * (size_t)n);
	val = malloc(sizeof(double) * (size_t)n);
	if (!idx || !val) {
		hb_runtime_error(err, "gavel: out of memory");
		goto out;
	}
	if (base_lp(&lp, pb, pb->tput, idx, val, err) < 0 || solve(&lp, o, "max-sum throughput", err) < 0)
		goto out;
	take_x(&lp, pb, x);
	if (objective)
		*objective = lp.objective;
	rc = 0;
out:
	hb_milp_free(&lp);
	free(idx);
	free(val);
	return rc;
}

/* ---- finish-time fairness ---------------------------------------------------------- */

int hb_gavel_isolated(const struct hb_gavel_problem *pb, double *xiso, double *iso, struct hb_error *err)
{
	int M = pb->njobs, T = pb->ntypes;

	if (hb_gavel_check(pb, err) < 0)
		return -1;
	for (int m = 0; m < M; m++) {
		double row = 0.0, t = 0.0;

		/* isolated.py: every type, runnable or not, counts in the row sum. */
		for (int j = 0; j < T; j++)
			row += (double)pb->capacity[j] / ((double)M * pb->scale[m]);
		row = row > 1.0 ? row : 1.0;
		for (int j = 0; j < T; j++) {
			double v = (double)pb->capacity[j] / ((double)M * pb->scale[m]) / row;

			if (xiso)
				xiso[(size_t)m * T + j] = v;
			t += pb->tput[(size_t)m * T + j] * v;
		}
		if (iso)
			iso[m] = t;
	}
	return 0;
}

/* D_m, rho's denominator: the finish time on the isolated share. */
static double ftf_denominator(const struct hb_gavel_ftf *f, const double *iso, int m)
{
	return f->iso_elapsed_s[m] + (f->remaining[m] > 0 ? f->remaining[m] / iso[m] : 0.0);
}

double hb_gavel_ftf_rho(const struct hb_gavel_problem *pb, const struct hb_gavel_ftf *f, const double *iso,
			const double *x, int m)
{
	double d = ftf_denominator(f, iso, m), t = 0.0;

	if (!(d > 0))
		return NAN;
	if (!(f->remaining[m] > 0))
		return f->elapsed_s[m] / d;
	for (int j = 0; j < pb->ntypes; j++)
		t += pb->tput[(size_t)m * pb->ntypes + j] * x[(size_t)m * pb->ntypes + j];
	return t > 0 ? (f->elapsed_s[m] + f->remaining[m] / t) / d : INFINITY;
}

/* max_m rho_m(x) over the jobs that have one (0 when none has). */
static double ftf_max_rho(const struct hb_gavel_problem *pb, const struct hb_gavel_ftf *f, const double *iso,
			  const double *x)
{
	double worst = 0.0;

	for (int m = 0; m < pb->njobs; m++) {
		double r = hb_gavel_ftf_rho(pb, f, iso, x, m);

		if (!isnan(r) && r > worst)
			worst = r;
	}
	return worst;
}

int hb_gavel_finish_time_fairness(const struct hb_gavel_problem *pb, const struct hb_gavel_ftf *f,
				  const struct hb_milp_opts *o, double *x, double *objective, struct hb_error *err)
{
	int M = pb->njobs, T = pb->ntypes, n = (M > T ? M : T) + 1, rc = -1, z, nlevel = 0;
	struct hb_milp lp;
	double *iso = NULL, *val = NULL, *trial = NULL, lo = 0.0, up, best;
	int *idx = NULL, *row = NULL;

	if (hb_gavel_check(pb, err) < 0)
		return -1;
	if (M > 0 && (!f || !f->elapsed_s || !f->iso_elapsed_s || !f->remaining))
		return hb_input_error(err, "gavel finish-time fairness: no per-job times");
	for (int m = 0; m < M; m++) {
		if (!(f->elapsed_s[m] >= 0 && isfinite(f->elapsed_s[m])))
			return hb_input_error(err, "gavel: job %d: time since arrival %g s is not >= 0", m, f->elapsed_s[m]);
		if (!(f->iso_elapsed_s[m] >= 0 && isfinite(f->iso_elapsed_s[m])))
			return hb_input_error(err, "gavel: job %d: isolated time %g s is not >= 0", m, f->iso_elapsed_s[m]);
		if (!(f->remaining[m] >= 0 && isfinite(f->remaining[m])))
			return hb_input_error(err, "gavel: job %d: work left %g is not >= 0", m, f->remaining[m]);
	}
	if (M == 0) {
		if (objective)
			*objective = 0.0;
		return 0;
	}
	hb_milp_init(&lp, 1);
	iso = malloc(sizeof(double) * (size_t)M);
	trial = malloc(sizeof(double) * (size_t)M * (size_t)T);
	row = malloc(sizeof(int) * (size_t)M);
	idx = malloc(sizeof(int) * (size_t)n);
	val = malloc(sizeof(double) * (size_t)n);
	if (!iso || !trial || !row || !idx || !val) {
		hb_runtime_error(err, "gavel: out of memory");
		goto out;
	}
	/* The isolated share is feasible (each type's sum is W_j / row sum):
	 * the first answer and the first upper bound. */
	if (hb_gavel_isolated(pb, x, iso, err) < 0)
		goto out;
	for (int m = 0; m < M; m++) /* time on a type the job cannot use is no time */
		for (int j = 0; j < T; j++)
			if (!hb_gavel_runnable(pb, m, j))
				x[(size_t)m * T + j] = 0.0;
	best = up = ftf_max_rho(pb, f, iso, x);
	/* Lower bound: every job alone, at its best rate on one type
	 * (T[m][j] min(1, W_j / sf_m)), the others kept out. */
	for (int m = 0; m < M; m++) {
		double d = ftf_denominator(f, iso, m), most = 0.0, r;

		if (!(d > 0))
			continue;
		for (int j = 0; j < T; j++) {
			double share = (double)pb->capacity[j] / pb->scale[m], t = pb->tput[(size_t)m * T + j];

			if (hb_gavel_runnable(pb, m, j) && t * (share < 1 ? share : 1) > most)
				most = t * (share < 1 ? share : 1);
		}
		r = f->remaining[m] > 0 ? (f->elapsed_s[m] + f->remaining[m] / most) / d : f->elapsed_s[m] / d;
		lo = r > lo ? r : lo;
	}
	/* LP at a level r: rows sum_j T[m][j] / need_m X[m][j] - z >= 0 for the
	 * jobs with work left (their coefficients rewritten per level). */
	if (base_lp(&lp, pb, NULL, idx, val, err) < 0 || hb_milp_add_col(&lp, 0.0, HUGE_VAL, 1.0, 0, &z, err) < 0)
		goto out;
	for (int m = 0; m < M; m++) {
		row[m] = -1;
		if (!(f->remaining[m] > 0))
			continue;
		for (int j = 0; j < T; j++) {
			idx[j] = m * T + j;
			val[j] = pb->tput[(size_t)m * T + j];
		}
		idx[T] = z;
		val[T] = -1.0;
		row[m] = lp.nrows;
		if (hb_milp_add_row(&lp, T + 1, idx, val, 0.0, HUGE_VAL, err) < 0)
			goto out;
	}
	/* Bisection on the level; up: a level proved reachable (or the
	 * isolated share's), lo: one proved out of reach (or the bound). */
	for (int m = 0; m < M; m++)
		if (row[m] >= 0)
			nlevel = -1;
	if (nlevel == 0) /* no job has work left: nothing to share, z would be unbounded */
		up = lo;
	nlevel = 0;
	while (up - lo > 1e-7 * up && nlevel < 200) {
		double r = 0.5 * (lo + up);

		nlevel++;
		for (int m = 0; m < M; m++) {
			double need;

			if (row[m] < 0)
				continue;
			/* r > lo >= (e + R / most) / D, so r D - e > 0. */
			need = f->remaining[m] / (r * ftf_denominator(f, iso, m) - f->elapsed_s[m]);
			for (int j = 0; j < T; j++)
				lp.val[lp.rows[row[m]].first + (size_t)j] = pb->tput[(size_t)m * T + j] / need;
		}
		if (solve(&lp, o, "finish-time fairness", err) < 0)
			goto out;
		if (lp.objective >= 1.0 - 1e-9) {
			double got;

			take_x(&lp, pb, trial);
			got = ftf_max_rho(pb, f, iso, trial);
			if (got < best) {
				best = got;
				memcpy(x, trial, sizeof(double) * (size_t)M * (size_t)T);
			}
			up = got < r ? got : r; /* both are reachable */
		} else {
			lo = r;
		}
	}
	if (objective)
		*objective = best;
	rc = 0;
out:
	hb_milp_free(&lp);
	free(iso);
	free(trial);
	free(row);
	free(idx);
	free(val);
	return rc;
}
