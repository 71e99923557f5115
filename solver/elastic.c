/*
 * elastic.c: IBM elastic scaling (notes/elastic.md): the Job Scalability
 * Analyser, the corrected Algorithm 1 DP, and the autoscaler's admission step.
 * See elastic.h for the semantics (at-most-K, every job >= 1 GPU, ties).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_interp.h>

#include "elastic.h"

/* ------------------------------------------------------------------------ */
/* Input checks                                                              */
/* ------------------------------------------------------------------------ */

static int check_proc(const struct hb_elastic_proc *p, struct hb_error *err)
{
	if (!p->bs || !p->iter_s || p->n < 1)
		return hb_input_error(err, "elastic: processing profile: field 'n': value '%d': "
				      "need at least one (per-GPU batch, time) point", p->n);
	for (int i = 0; i < p->n; i++) {
		if (!isfinite(p->bs[i]) || p->bs[i] < 1)
			return hb_input_error(err, "elastic: processing profile: field 'bs[%d]': "
					      "value '%g': per-GPU batch must be >= 1", i, p->bs[i]);
		if (!isfinite(p->iter_s[i]) || p->iter_s[i] <= 0)
			return hb_input_error(err, "elastic: processing profile: field 'iter_s[%d]': "
					      "value '%g': iteration time must be > 0 s", i, p->iter_s[i]);
		if (i > 0 && !(p->bs[i] > p->bs[i - 1]))
			return hb_input_error(err, "elastic: processing profile: field 'bs[%d]': "
					      "value '%g': batch sizes must increase strictly (previous %g)",
					      i, p->bs[i], p->bs[i - 1]);
	}
	return 0;
}

static int check_comm(const struct hb_elastic_comm *c, struct hb_error *err)
{
	if (!c->params || !c->time_s || c->nparams < 1 || c->kmax < 1)
		return hb_input_error(err, "elastic: AllReduce profile: fields 'nparams', 'kmax': "
				      "values '%d', '%d': need at least one size and one GPU count",
				      c->nparams, c->kmax);
	for (int i = 0; i < c->nparams; i++) {
		if (!isfinite(c->params[i]) || c->params[i] <= 0)
			return hb_input_error(err, "elastic: AllReduce profile: field 'params[%d]': "
					      "value '%g': model size must be > 0", i, c->params[i]);
		if (i > 0 && !(c->params[i] > c->params[i - 1]))
			return hb_input_error(err, "elastic: AllReduce profile: field 'params[%d]': "
					      "value '%g': sizes must increase strictly (previous %g)",
					      i, c->params[i], c->params[i - 1]);
	}
	for (int k = 1; k <= c->kmax; k++)
		for (int i = 0; i < c->nparams; i++) {
			double t = c->time_s[(size_t)(k - 1) * (size_t)c->nparams + (size_t)i];

			if (!isfinite(t) || t < 0)
				return hb_input_error(err, "elastic: AllReduce profile: field "
						      "'time_s[k=%d][%d]': value '%g': must be >= 0 s",
						      k, i, t);
		}
	return 0;
}

/* c_j after applying the "<= 0 means the last profiled point" default. */
static long per_gpu_limit(const struct hb_elastic_job *job)
{
	return job->per_gpu_max > 0 ? job->per_gpu_max
				    : (long)floor(job->proc.bs[job->proc.n - 1]);
}

static int check_job(const struct hb_elastic_job *job, const struct hb_elastic_comm *comm,
		     struct hb_error *err)
{
	long c;

	if (check_proc(&job->proc, err) || check_comm(comm, err))
		return -1;
	if (!isfinite(job->params) || job->params <= 0)
		return hb_input_error(err, "elastic: job: field 'params': value '%g': must be > 0",
				      job->params);
	c = per_gpu_limit(job);
	if (c < 1 || (double)c > job->proc.bs[job->proc.n - 1])
		return hb_input_error(err, "elastic: job: field 'per_gpu_max': value '%ld': must be in "
				      "1..%g, the last profiled per-GPU batch (the JSA does not "
				      "extrapolate past the memory limit it profiled)",
				      c, job->proc.bs[job->proc.n - 1]);
	if (job->b_min < 1 || job->b_max < job->b_min)
		return hb_input_error(err, "elastic: job: fields 'b_min', 'b_max': values '%ld', "
				      "'%ld': need 1 <= b_min <= b_max", job->b_min, job->b_max);
	if (job->b_fixed < 0)
		return hb_input_error(err, "elastic: job: field 'b_fixed': value '%ld': must be >= 0",
				      job->b_fixed);
	if (job->k_max < 1 || job->k_max > comm->kmax)
		return hb_input_error(err, "elastic: job: field 'k_max': value '%d': must be in 1..%d "
				      "(the GPU counts the AllReduce profile covers)",
				      job->k_max, comm->kmax);
	if (job->k_only < 0 || job->k_only > job->k_max)
		return hb_input_error(err, "elastic: job: field 'k_only': value '%d': must be in "
				      "0..k_max=%d", job->k_only, job->k_max);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* 1. Job Scalability Analyser                                               */
/* ------------------------------------------------------------------------ */

/* Linear interpolant over (x, y), n >= 2, built once and evaluated inside
 * [x[0], x[n-1]] only (GSL's default error handler aborts outside). */
struct lin {
	gsl_interp *interp;
	gsl_interp_accel *acc;
	const double *x, *y;
	int n;
};

static int lin_init(struct lin *l, const double *x, const double *y, int n, struct hb_error *err)
{
	l->x = x;
	l->y = y;
	l->n = n;
	l->interp = NULL;
	l->acc = NULL;
	if (n < 2)
		return 0;
	l->interp = gsl_interp_alloc(gsl_interp_linear, (size_t)n);
	l->acc = gsl_interp_accel_alloc();
	if (!l->interp || !l->acc) {
		gsl_interp_free(l->interp);
		gsl_interp_accel_free(l->acc);
		return hb_runtime_error(err, "elastic: out of memory for an interpolant of %d points", n);
	}
	gsl_interp_init(l->interp, x, y, (size_t)n);
	return 0;
}

static void lin_free(struct lin *l)
{
	if (l->interp)
		gsl_interp_free(l->interp);
	if (l->acc)
		gsl_interp_accel_free(l->acc);
	l->interp = NULL;
	l->acc = NULL;
}

/* Value inside the knots; callers handle x outside [x[0], x[n-1]]. */
static double lin_eval(struct lin *l, double x)
{
	if (l->n < 2)
		return l->y[0];
	return gsl_interp_eval(l->interp, l->x, l->y, x, l->acc);
}

/* t_j^proc(b_gpu), III-B1, extended below the first point as elastic.h says. */
static double proc_eval(struct lin *l, double b)
{
	const double *x = l->x, *y = l->y;
	double prop = y[0] * b / x[0];

	if (l->n == 1)
		return prop;
	if (b >= x[0])
		return lin_eval(l, b);
	return fmax(y[0] + (y[1] - y[0]) / (x[1] - x[0]) * (b - x[0]), prop);
}

int hb_elastic_proc_time(const struct hb_elastic_proc *proc, double b_gpu, double *iter_s,
			 struct hb_error *err)
{
	struct lin l;

	if (check_proc(proc, err))
		return -1;
	if (!isfinite(b_gpu) || b_gpu <= 0 || b_gpu > proc->bs[proc->n - 1])
		return hb_input_error(err, "elastic: per-GPU batch '%g': outside (0, %g], the "
				      "profiled range", b_gpu, proc->bs[proc->n - 1]);
	if (lin_init(&l, proc->bs, proc->iter_s, proc->n, err))
		return -1;
	*iter_s = proc_eval(&l, b_gpu);
	lin_free(&l);
	return 0;
}

/* t^comm(p, k) on an already checked profile. */
static int comm_eval(const struct hb_elastic_comm *comm, double p, int k, double *out,
		     struct hb_error *err)
{
	const double *x = comm->params;
	const double *y = comm->time_s + (size_t)(k - 1) * (size_t)comm->nparams;
	int n = comm->nparams;
	struct lin l;
	double t;

	if (n == 1) {
		*out = y[0] * p / x[0];
		return 0;
	}
	if (p < x[0])
		t = y[0] + (y[1] - y[0]) / (x[1] - x[0]) * (p - x[0]);
	else if (p > x[n - 1])
		t = y[n - 1] + (y[n - 1] - y[n - 2]) / (x[n - 1] - x[n - 2]) * (p - x[n - 1]);
	else {
		if (lin_init(&l, x, y, n, err))
			return -1;
		t = lin_eval(&l, p);
		lin_free(&l);
	}
	*out = fmax(t, 0.0);
	return 0;
}

int hb_elastic_comm_time(const struct hb_elastic_comm *comm, double params, int k, double *time_s,
			 struct hb_error *err)
{
	if (check_comm(comm, err))
		return -1;
	if (!isfinite(params) || params <= 0)
		return hb_input_error(err, "elastic: model size '%g': must be > 0", params);
	if (k < 1 || k > comm->kmax)
		return hb_input_error(err, "elastic: GPU count '%d': the AllReduce profile covers "
				      "1..%d", k, comm->kmax);
	return comm_eval(comm, params, k, time_s, err);
}

int hb_elastic_rate(const struct hb_elastic_job *job, const struct hb_elastic_comm *comm, long b,
		    int k, double *rate, double *iter_s, struct hb_error *err)
{
	double tp, tc;
	long g;

	if (check_job(job, comm, err))
		return -1;
	if (k < 1 || k > comm->kmax)
		return hb_input_error(err, "elastic: GPU count '%d': the AllReduce profile covers "
				      "1..%d", k, comm->kmax);
	if (b < 1)
		return hb_input_error(err, "elastic: total batch '%ld': must be >= 1", b);
	g = (b + k - 1) / k;
	if (b < k || g > per_gpu_limit(job)) {
		*rate = -INFINITY;
		if (iter_s)
			*iter_s = INFINITY;
		return 0;
	}
	if (hb_elastic_proc_time(&job->proc, (double)g, &tp, err) ||
	    comm_eval(comm, job->params, k, &tc, err))
		return -1;
	*rate = (double)b / (tp + tc);
	if (iter_s)
		*iter_s = tp + tc;
	return 0;
}

void hb_elastic_scaling_free(struct hb_elastic_scaling *s)
{
	if (!s)
		return;
	free(s->speedup);
	free(s->batch);
	free(s->iter_s);
	s->speedup = NULL;
	s->batch = NULL;
	s->iter_s = NULL;
	s->k_max = 0;
}

/* Eq. 2 for one k.  For a fixed per-GPU batch g = ceil(b/k) the denominator
 * of T_j is fixed, so T_j grows with b and the best b with that g is the
 * largest, min(g·k, b_hi).  Scanning g upwards with a strict ">" therefore
 * returns the same b as scanning every integer b upwards (smallest b among
 * equal rates), in O(c_j) instead of O(b_max). */
static void best_batch(long b_lo, long b_hi, int k, long c, const double *tproc, double tcomm,
		       long *b_best, double *rate_best)
{
	long g_lo, g_hi;

	*b_best = 0;
	*rate_best = -INFINITY;
	if (b_lo < k)
		b_lo = k;       /* every GPU gets at least one sample (elastic.h) */
	if (b_lo > b_hi)
		return;
	g_lo = (b_lo + k - 1) / k;
	g_hi = (b_hi + k - 1) / k;
	if (g_hi > c)
		g_hi = c;
	for (long g = g_lo; g <= g_hi; g++) {
		long b = g * k < b_hi ? g * k : b_hi;
		double r = (double)b / (tproc[g] + tcomm);

		if (r > *rate_best) {
			*rate_best = r;
			*b_best = b;
		}
	}
}

int hb_elastic_jsa(const struct hb_elastic_job *job, const struct hb_elastic_comm *comm,
		   struct hb_elastic_scaling *out, struct hb_error *err)
{
	struct lin l;
	double *tproc = NULL, *tcomm = NULL, t1;
	long c;
	int kmax, rc = -1;

	out->speedup = NULL;
	out->batch = NULL;
	out->iter_s = NULL;
	out->k_max = 0;
	out->base_rate = 0;
	if (check_job(job, comm, err))
		return -1;
	c = per_gpu_limit(job);
	kmax = job->k_max;
	if (lin_init(&l, job->proc.bs, job->proc.iter_s, job->proc.n, err))
		return -1;
	tproc = malloc(((size_t)c + 1) * sizeof(*tproc));
	tcomm = malloc(((size_t)kmax + 1) * sizeof(*tcomm));
	out->speedup = malloc(((size_t)kmax + 1) * sizeof(*out->speedup));
	out->batch = malloc(((size_t)kmax + 1) * sizeof(*out->batch));
	out->iter_s = malloc(((size_t)kmax + 1) * sizeof(*out->iter_s));
	if (!tproc || !tcomm || !out->speedup || !out->batch || !out->iter_s) {
		hb_runtime_error(err, "elastic: out of memory for the JSA tables (k_max %d, c_j %ld)",
				 kmax, c);
		goto done;
	}
	out->k_max = kmax;
	tproc[0] = 0;
	for (long g = 1; g <= c; g++)
		tproc[g] = proc_eval(&l, (double)g);
	tcomm[0] = 0;
	for (int k = 1; k <= kmax; k++)
		if (comm_eval(comm, job->params, k, &tcomm[k], err))
			goto done;

	/* Eq. 1 denominator: T_j(b_j^max, 1) with b_j^max the per-GPU limit c_j
	 * (notes §3 "Objective"), even when c_j exceeds the job's b_max. */
	if (comm_eval(comm, job->params, 1, &t1, err))
		goto done;
	out->base_rate = (double)c / (tproc[c] + t1);

	out->speedup[0] = -INFINITY;
	out->batch[0] = 0;
	out->iter_s[0] = INFINITY;
	for (int k = 1; k <= kmax; k++) {
		long lo = job->b_fixed > 0 ? job->b_fixed : job->b_min;
		long hi = job->b_fixed > 0 ? job->b_fixed : job->b_max;
		long b = 0;
		double r = -INFINITY;

		if (job->k_only == 0 || job->k_only == k)
			best_batch(lo, hi, k, c, tproc, tcomm[k], &b, &r);
		if (b > 0) {
			out->speedup[k] = r / out->base_rate;
			out->batch[k] = b;
			out->iter_s[k] = tproc[(b + k - 1) / k] + tcomm[k];
		} else {
			out->speedup[k] = -INFINITY;
			out->batch[k] = 0;
			out->iter_s[k] = INFINITY;
		}
	}
	rc = 0;
done:
	lin_free(&l);
	free(tproc);
	free(tcomm);
	if (rc)
		hb_elastic_scaling_free(out);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* 2. Optimizer: corrected Algorithm 1                                       */
/* ------------------------------------------------------------------------ */

#define ROW(dp, j) ((size_t)(j) * (size_t)((dp)->K + 1))

static int dp_reserve(struct hb_elastic_dp *dp, int rows, struct hb_error *err)
{
	size_t n;
	double *P;
	size_t *soff;
	int *kmax;

	if (rows <= dp->cap)
		return 0;
	if (rows < 2 * dp->cap)
		rows = 2 * dp->cap;
	if ((size_t)rows + 1 > SIZE_MAX / sizeof(double) / ((size_t)dp->K + 1))
		return hb_runtime_error(err, "elastic DP: %d jobs x %d GPUs is too large a table",
					rows, dp->K);
	n = ((size_t)rows + 1) * ((size_t)dp->K + 1);
	P = realloc(dp->P, n * sizeof(*P));
	if (!P)
		return hb_runtime_error(err, "elastic DP: out of memory for %d jobs x %d GPUs",
					rows, dp->K);
	dp->P = P;
	soff = realloc(dp->soff, ((size_t)rows + 2) * sizeof(*soff));
	if (!soff)
		return hb_runtime_error(err, "elastic DP: out of memory for %d jobs", rows);
	dp->soff = soff;
	kmax = realloc(dp->kmax, ((size_t)rows + 1) * sizeof(*kmax));
	if (!kmax)
		return hb_runtime_error(err, "elastic DP: out of memory for %d jobs", rows);
	dp->kmax = kmax;
	dp->cap = rows;
	return 0;
}

int hb_elastic_dp_init(struct hb_elastic_dp *dp, int K, struct hb_error *err)
{
	dp->K = 0;
	dp->njobs = 0;
	dp->cap = 0;
	dp->P = NULL;
	dp->S = NULL;
	dp->soff = NULL;
	dp->kmax = NULL;
	dp->scap = 0;
	if (K < 0)
		return hb_input_error(err, "elastic DP: GPUs K '%d': must be >= 0", K);
	dp->K = K;
	dp->cap = -1;   /* forces the first reserve to allocate row 0 as well */
	if (dp_reserve(dp, 8, err)) {
		hb_elastic_dp_free(dp);
		return -1;
	}
	/* P(0, ·) = 0: no jobs mean zero utilisation, with any number of GPUs. */
	for (int c = 0; c <= K; c++)
		dp->P[c] = 0;
	dp->soff[1] = 0; /* row 1's table starts S */
	return 0;
}

void hb_elastic_dp_free(struct hb_elastic_dp *dp)
{
	if (!dp)
		return;
	free(dp->P);
	free(dp->S);
	free(dp->soff);
	free(dp->kmax);
	dp->P = NULL;
	dp->S = NULL;
	dp->soff = NULL;
	dp->kmax = NULL;
	dp->scap = 0;
	dp->cap = 0;
	dp->njobs = 0;
}

static int check_table(const struct hb_elastic_table *t, int j, struct hb_error *err)
{
	if (t->k_max < 0 || (t->k_max > 0 && !t->speedup))
		return hb_input_error(err, "elastic DP: job %d: field 'k_max': value '%d': need "
				      "k_max >= 0 and a speedup table of k_max + 1 entries", j, t->k_max);
	for (int k = 1; k <= t->k_max; k++) {
		double s = t->speedup[k];

		if (s == -INFINITY)
			continue;
		if (!isfinite(s) || s <= 0)
			return hb_input_error(err, "elastic DP: job %d: field 'speedup[%d]': value "
					      "'%g': must be > 0, or -INFINITY when infeasible",
					      j, k, s);
	}
	return 0;
}

int hb_elastic_dp_push(struct hb_elastic_dp *dp, const struct hb_elastic_table *job,
		       struct hb_error *err)
{
	int j = dp->njobs + 1, K = dp->K;
	const double *prev;
	double *row;
	size_t off;

	if (check_table(job, j, err) || dp_reserve(dp, j, err))
		return -1;
	/* Row j's copy of the table: hb_elastic_dp_solution finds the row's
	 * argmax again from it and P. */
	off = dp->soff[j];
	if (off + (size_t)job->k_max + 1 > dp->scap) {
		size_t nc = dp->scap ? 2 * dp->scap : 256;
		double *S;

		while (nc < off + (size_t)job->k_max + 1)
			nc *= 2;
		if (!(S = realloc(dp->S, nc * sizeof(*S))))
			return hb_runtime_error(err, "elastic DP: out of memory for job %d's table", j);
		dp->S = S;
		dp->scap = nc;
	}
	if (job->k_max > 0)
		memcpy(dp->S + off, job->speedup, ((size_t)job->k_max + 1) * sizeof(*dp->S));
	dp->kmax[j] = job->k_max;
	dp->soff[j + 1] = off + (size_t)job->k_max + 1;
	prev = dp->P + ROW(dp, j - 1);
	row = dp->P + ROW(dp, j);
	/* Eq. 4-5 with the errata fixed: RECALL(j, g), predecessor P(j-1, c-g).
	 * The loops run g outside and c inside: each P(j, c) meets its
	 * candidates in ascending g with the same sums and the same ">", so
	 * the row is the same bits as the textbook order's, and the inner
	 * loop, one maximum per c, vectorises (a Philly replay pushes every
	 * running job over 2,048 GPUs every round).  An infeasible g
	 * (-INFINITY) never wins and is skipped.  SOL, the argmax, is not
	 * kept: the backtrack needs it at one c per row and finds it again. */
	for (int c = 0; c <= K; c++)
		row[c] = -INFINITY;
	for (int g = 1; g <= job->k_max && g <= K; g++) {
		const double sg = job->speedup[g];

		if (sg == -INFINITY)
			continue;
		for (int c = g; c <= K; c++) {
			const double v = sg + prev[c - g], r = row[c];

			row[c] = v > r ? v : r;
		}
	}
	dp->njobs = j;
	return 0;
}

void hb_elastic_dp_pop(struct hb_elastic_dp *dp)
{
	if (dp->njobs > 0)
		dp->njobs--;
}

double hb_elastic_dp_value(const struct hb_elastic_dp *dp)
{
	return dp->P[ROW(dp, dp->njobs) + (size_t)dp->K];
}

int hb_elastic_dp_feasible(const struct hb_elastic_dp *dp)
{
	return dp->njobs == 0 || hb_elastic_dp_value(dp) > 0;
}

int hb_elastic_dp_solution(const struct hb_elastic_dp *dp, int *alloc, struct hb_error *err)
{
	int c = dp->K;

	if (!hb_elastic_dp_feasible(dp))
		return hb_runtime_error(err, "elastic DP: %d jobs do not all fit on %d GPUs",
					dp->njobs, dp->K);
	for (int j = dp->njobs; j >= 1; j--) {
		const double *sp = dp->S + dp->soff[j], *prev = dp->P + ROW(dp, j - 1);
		const double best = dp->P[ROW(dp, j) + (size_t)c];
		int g = 0;

		/* SOL(j, c) of Eq. 5: the smallest g whose sum is the row's
		 * maximum (push kept the first of equal sums); the same sum of
		 * the same doubles, so equality is exact.  None when P(j, c) is
		 * -INFINITY, which feasibility rules out here. */
		if (best != -INFINITY)
			for (int k = 1; k <= dp->kmax[j] && k <= c && !g; k++)
				if (sp[k] != -INFINITY && sp[k] + prev[c - k] == best)
					g = k;
		alloc[j - 1] = g;
		c -= g;
	}
	return c;
}

/* The smallest feasible k of a table, 0 if none. */
static int min_feasible(const struct hb_elastic_table *t)
{
	for (int k = 1; k <= t->k_max; k++)
		if (t->speedup[k] != -INFINITY)
			return k;
	return 0;
}

/* Say why a list is infeasible, in the user's terms. */
static int infeasible(const struct hb_elastic_table *jobs, int njobs, int K, struct hb_error *err)
{
	long need = 0;

	if (njobs > K)
		return hb_runtime_error(err, "elastic: infeasible: %d jobs need at least one GPU "
					"each but K = %d", njobs, K);
	for (int j = 0; j < njobs; j++) {
		int m = min_feasible(&jobs[j]);

		if (m == 0 || m > K)
			return hb_runtime_error(err, "elastic: infeasible: job %d has no feasible GPU "
						"count in 1..%d", j + 1, K);
		need += m;
	}
	return hb_runtime_error(err, "elastic: infeasible: the %d jobs need at least %ld GPUs "
				"together (smallest feasible count each), K = %d", njobs, need, K);
}

int hb_elastic_optimize(const struct hb_elastic_table *jobs, int njobs, int K, int *alloc,
			double *value, int *idle, struct hb_error *err)
{
	struct hb_elastic_dp dp;
	int left;

	if (njobs < 0)
		return hb_input_error(err, "elastic: job count '%d': must be >= 0", njobs);
	if (hb_elastic_dp_init(&dp, K, err))
		return -1;
	for (int j = 0; j < njobs; j++)
		if (hb_elastic_dp_push(&dp, &jobs[j], err)) {
			hb_elastic_dp_free(&dp);
			return -1;
		}
	if (!hb_elastic_dp_feasible(&dp)) {
		hb_elastic_dp_free(&dp);
		return infeasible(jobs, njobs, K, err);
	}
	left = hb_elastic_dp_solution(&dp, alloc, err);
	if (value)
		*value = hb_elastic_dp_value(&dp);
	if (idle)
		*idle = left;
	hb_elastic_dp_free(&dp);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* 3. Autoscaler admission                                                   */
/* ------------------------------------------------------------------------ */

int hb_elastic_admit(const struct hb_elastic_table *running, int nrunning,
		     const struct hb_elastic_table *arrived, int narrived, int K, int *alloc,
		     int *admitted, int *idle, struct hb_error *err)
{
	struct hb_elastic_dp dp;
	int n = 0, left;

	if (nrunning < 0 || narrived < 0)
		return hb_input_error(err, "elastic: job counts '%d' running, '%d' arrived: must be "
				      ">= 0", nrunning, narrived);
	if (hb_elastic_dp_init(&dp, K, err))
		return -1;
	for (int j = 0; j < nrunning; j++)
		if (hb_elastic_dp_push(&dp, &running[j], err))
			goto fail;
	if (!hb_elastic_dp_feasible(&dp)) {
		infeasible(running, nrunning, K, err);
		hb_error_prefix(err, "elastic: the %d running jobs no longer fit", nrunning);
		goto fail;
	}
	/* Trial admission reuses rows 1..J: each trial costs one row. */
	while (n < narrived) {
		if (hb_elastic_dp_push(&dp, &arrived[n], err))
			goto fail;
		if (!hb_elastic_dp_feasible(&dp)) {
			hb_elastic_dp_pop(&dp);
			break;
		}
		n++;
	}
	left = hb_elastic_dp_solution(&dp, alloc, err);
	hb_elastic_dp_free(&dp);
	*admitted = n;
	if (idle)
		*idle = left;
	return 0;
fail:
	hb_elastic_dp_free(&dp);
	return -1;
}
