/*
 * gavel_center.c: Gavel's max-sum-throughput LP solved as the Sia
 * artifact solves it (gavel_lp.h, hb_gavel_max_sum_throughput_center).
 *
 * Sia's copy of Gavel hands the LP to ECOS (sia-simulator/gavel.py:
 * utils_gavel.get_policy(..., solver='ECOS')), an interior-point method.
 * Where the optimum is not unique, which it is not whenever jobs or types
 * tie (two jobs of one model, two types as fast for a job), an interior
 * point method ends inside the optimal face, near its analytic centre,
 * where simplex ends at a vertex: ECOS splits a tie (x 0.5 and 0.5), GLPK
 * picks one side (1 and 0).  Gavel's priorities (x over the share
 * received) then time-slice the tied jobs where a vertex would run one.
 *
 * The method: Mehrotra's predictor-corrector on the standard form
 *   min c'u  s.t.  A u = b, u >= 0,  u = (x over runnable pairs, slacks),
 * one row per job (sum_j x <= 1) and per type (sum_m sf_m x <= W_j).
 * The normal matrix A D A' has a diagonal job block, so each step solves
 * a system of ntypes unknowns (the Schur complement) in O(pairs) work.
 * It stops at a duality measure of 1e-11 of the objective's scale, where
 * the iterate is within rounding (1e-5, the artifact's) of the central
 * path's end; the analytic centre itself is that end for a strictly
 * complementary problem (Nocedal and Wright, Numerical Optimization, 14.1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gavel_lp.h"

#define IPM_MAX_ITERS 200
#define IPM_TOL 1e-11
#define IPM_STEP 0.995       /* fraction of the step to the boundary */

struct ipm {
	int M, T, K, R;          /* jobs, types, runnable pairs, rows (M + T) */
	int *pm, *pj;            /* pair k: job pm[k], type pj[k] */
	double *c, *b;           /* costs of the K x's (the slacks cost 0), row bounds */
	double *sf;              /* per job: its scale factor */
	/* iterate: u = (x[K], w[R]), dual y[R], reduced costs z over u */
	double *x, *w, *y, *zx, *zw;
	/* directions */
	double *dx, *dw, *dy, *dzx, *dzw;
	/* scratch */
	double *rpx, *rd, *rdw, *rxz, *rwz, *dX, *dW, *a, *S, *v;
};

static void ipm_free(struct ipm *p)
{
	double **d[] = { &p->c,	  &p->b,   &p->sf,  &p->x,   &p->w,  &p->y,   &p->zx, &p->zw, &p->dx,
			 &p->dw,  &p->dy,  &p->dzx, &p->dzw, &p->rpx, &p->rd,  &p->rdw, &p->rxz, &p->rwz,
			 &p->dX,  &p->dW,  &p->a,   &p->S,   &p->v };

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		free(*d[i]);
	free(p->pm);
	free(p->pj);
}

/* Solve (A D A') dy = r for the rows' r (R entries) in place: the job
 * block is diagonal (a), so eliminate it and solve the T x T Schur
 * complement by Gaussian elimination with partial pivoting.  D over the
 * x pairs is dX, over the slacks dW.  0, or -1 when singular. */
static int normal_solve(struct ipm *p, double *r)
{
	int M = p->M, T = p->T;
	double *S = p->S, *v = p->v;

	for (int i = 0; i < M; i++)
		p->a[i] = p->dW[i];
	memset(S, 0, sizeof(double) * (size_t)T * (size_t)T);
	for (int j = 0; j < T; j++)
		S[(size_t)j * T + j] = p->dW[M + j];
	for (int k = 0; k < p->K; k++) {
		double s = p->sf[p->pm[k]];

		p->a[p->pm[k]] += p->dX[k];
		S[(size_t)p->pj[k] * T + p->pj[k]] += s * s * p->dX[k];
	}
	/* S -= B' diag(1/a) B, B[i][j] = sf_i dX_ij (one pair per (i, j)),
	 * and the right side likewise: v = r_T - B' (r_M / a) */
	for (int j = 0; j < T; j++)
		v[j] = r[M + j];
	for (int k = 0; k < p->K; k++) {
		int i = p->pm[k], j = p->pj[k];
		double bij = p->sf[i] * p->dX[k];

		v[j] -= bij * r[i] / p->a[i];
		for (int l = k; l < p->K && p->pm[l] == i; l++) /* pairs of job i: consecutive */
			S[(size_t)j * T + p->pj[l]] -= bij * p->sf[i] * p->dX[l] / p->a[i];
		for (int l = k - 1; l >= 0 && p->pm[l] == i; l--)
			S[(size_t)j * T + p->pj[l]] -= bij * p->sf[i] * p->dX[l] / p->a[i];
	}
	/* Gaussian elimination on S v */
	for (int c = 0; c < T; c++) {
		int piv = c;

		for (int q = c + 1; q < T; q++)
			if (fabs(S[(size_t)q * T + c]) > fabs(S[(size_t)piv * T + c]))
				piv = q;
		if (!(fabs(S[(size_t)piv * T + c]) > 0))
			return -1;
		if (piv != c) {
			for (int q = 0; q < T; q++) {
				double t = S[(size_t)c * T + q];

				S[(size_t)c * T + q] = S[(size_t)piv * T + q];
				S[(size_t)piv * T + q] = t;
			}
			double t = v[c];

			v[c] = v[piv];
			v[piv] = t;
		}
		for (int q = c + 1; q < T; q++) {
			double f = S[(size_t)q * T + c] / S[(size_t)c * T + c];

			for (int l = c; l < T; l++)
				S[(size_t)q * T + l] -= f * S[(size_t)c * T + l];
			v[q] -= f * v[c];
		}
	}
	for (int c = T - 1; c >= 0; c--) {
		for (int l = c + 1; l < T; l++)
			v[c] -= S[(size_t)c * T + l] * v[l];
		v[c] /= S[(size_t)c * T + c];
	}
	/* back to the job rows: dy_i = (r_i - sum_j B_ij dy_j) / a_i */
	for (int j = 0; j < T; j++)
		r[M + j] = v[j];
	for (int k = 0; k < p->K; k++)
		r[p->pm[k]] -= p->sf[p->pm[k]] * p->dX[k] * v[p->pj[k]];
	for (int i = 0; i < M; i++)
		r[i] /= p->a[i];
	return 0;
}

/* A' y over the pairs (q[K]) and the slacks (y itself). */
static void at_y(const struct ipm *p, const double *y, double *q)
{
	for (int k = 0; k < p->K; k++)
		q[k] = y[p->pm[k]] + p->sf[p->pm[k]] * y[p->M + p->pj[k]];
}

/* One Newton direction for the complementarity targets rxz, rwz (the
 * primal residual rpx and dual residuals rd, rdw are the iterate's). */
static int direction(struct ipm *p)
{
	int K = p->K, R = p->R;

	/* (A D A') dy = rp - A Z^-1 (rxz - U rd); then dz = rd - A' dy and
	 * du = Z^-1 (rxz - U dz) */
	for (int r = 0; r < R; r++)
		p->dy[r] = p->rpx[r];
	for (int k = 0; k < K; k++) {
		double t = (p->rxz[k] - p->x[k] * p->rd[k]) / p->zx[k];

		p->dy[p->pm[k]] -= t;
		p->dy[p->M + p->pj[k]] -= p->sf[p->pm[k]] * t;
	}
	for (int r = 0; r < R; r++)
		p->dy[r] -= (p->rwz[r] - p->w[r] * p->rdw[r]) / p->zw[r];
	if (normal_solve(p, p->dy) < 0)
		return -1;
	at_y(p, p->dy, p->dx); /* A' dy, then du and dz from it */
	for (int k = 0; k < K; k++) {
		double aty = p->dx[k];

		p->dzx[k] = p->rd[k] - aty;
		p->dx[k] = (p->rxz[k] - p->x[k] * p->dzx[k]) / p->zx[k];
	}
	for (int r = 0; r < R; r++) {
		p->dzw[r] = p->rdw[r] - p->dy[r];
		p->dw[r] = (p->rwz[r] - p->w[r] * p->dzw[r]) / p->zw[r];
	}
	return 0;
}

static double max_step(const double *u, const double *du, int n)
{
	double a = 1.0;

	for (int i = 0; i < n; i++)
		if (du[i] < 0 && -u[i] / du[i] < a)
			a = -u[i] / du[i];
	return a;
}

int hb_gavel_max_sum_throughput_center(const struct hb_gavel_problem *pb, double *x, double *objective,
				       struct hb_error *err)
{
	struct ipm p;
	int M = pb->njobs, T = pb->ntypes, rc = -1, it;
	double scale = 0.0;

	memset(&p, 0, sizeof(p));
	if (hb_gavel_check(pb, err) < 0)
		return -1;
	memset(x, 0, sizeof(double) * (size_t)M * (size_t)T);
	if (objective)
		*objective = 0.0;
	if (M == 0)
		return 0;
	p.M = M;
	p.T = T;
	p.R = M + T;
	for (int m = 0; m < M; m++)
		for (int j = 0; j < T; j++)
			p.K += hb_gavel_runnable(pb, m, j);
	{
		size_t K = (size_t)(p.K > 0 ? p.K : 1), R = (size_t)p.R;
		double **d[] = { &p.c, &p.x, &p.zx, &p.dx, &p.dzx, &p.rd, &p.rxz, &p.dX };
		double **e[] = { &p.b, &p.w, &p.y, &p.zw, &p.dw, &p.dy, &p.dzw, &p.rpx, &p.rdw, &p.rwz, &p.dW };

		p.pm = malloc(sizeof(int) * K);
		p.pj = malloc(sizeof(int) * K);
		for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
			*d[i] = calloc(K, sizeof(double));
		for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
			*e[i] = calloc(R, sizeof(double));
		p.sf = calloc((size_t)M, sizeof(double));
		p.a = calloc((size_t)M, sizeof(double));
		p.S = calloc((size_t)T * (size_t)T, sizeof(double));
		p.v = calloc((size_t)T, sizeof(double));
		if (!p.pm || !p.pj || !p.c || !p.x || !p.zx || !p.dx || !p.dzx || !p.rd || !p.rxz || !p.dX || !p.b ||
		    !p.w || !p.y || !p.zw || !p.dw || !p.dy || !p.dzw || !p.rpx || !p.rdw || !p.rwz || !p.dW ||
		    !p.sf || !p.a || !p.S || !p.v) {
			hb_runtime_error(err, "gavel: out of memory");
			goto out;
		}
	}
	p.K = 0;
	for (int m = 0; m < M; m++) {
		p.sf[m] = pb->scale[m];
		p.b[m] = 1.0;
		for (int j = 0; j < T; j++)
			if (hb_gavel_runnable(pb, m, j)) {
				p.pm[p.K] = m;
				p.pj[p.K] = j;
				p.c[p.K] = -pb->tput[(size_t)m * T + j];
				scale = fmax(scale, pb->tput[(size_t)m * T + j]);
				p.K++;
			}
	}
	for (int j = 0; j < T; j++)
		p.b[M + j] = pb->capacity[j];
	/* a problem in units of its largest throughput; a start inside */
	for (int k = 0; k < p.K; k++) {
		p.c[k] /= scale;
		p.x[k] = 0.5 / T;
		p.zx[k] = 1.0;
	}
	for (int r = 0; r < p.R; r++) {
		p.w[r] = 1.0;
		p.zw[r] = 1.0;
	}
	for (it = 0; it < IPM_MAX_ITERS; it++) {
		double mu = 0.0, mu_aff = 0.0, ap, ad, sigma, rp = 0.0, rdn = 0.0;
		int N = p.K + p.R;

		/* residuals: rp = b - A u, rd = c - A' y - z */
		for (int r = 0; r < p.R; r++)
			p.rpx[r] = p.b[r] - p.w[r];
		for (int k = 0; k < p.K; k++) {
			p.rpx[p.pm[k]] -= p.x[k];
			p.rpx[M + p.pj[k]] -= p.sf[p.pm[k]] * p.x[k];
		}
		at_y(&p, p.y, p.rd);
		for (int k = 0; k < p.K; k++) {
			p.rd[k] = p.c[k] - p.rd[k] - p.zx[k];
			rdn = fmax(rdn, fabs(p.rd[k]));
		}
		for (int r = 0; r < p.R; r++) {
			p.rdw[r] = -p.y[r] - p.zw[r];
			rdn = fmax(rdn, fabs(p.rdw[r]));
			rp = fmax(rp, fabs(p.rpx[r]) / (1.0 + p.b[r]));
		}
		for (int k = 0; k < p.K; k++)
			mu += p.x[k] * p.zx[k];
		for (int r = 0; r < p.R; r++)
			mu += p.w[r] * p.zw[r];
		mu /= N;
		if (mu < IPM_TOL && rp < 1e-9 && rdn < 1e-9)
			break;
		/* predictor: the affine direction */
		for (int k = 0; k < p.K; k++) {
			p.dX[k] = p.x[k] / p.zx[k];
			p.rxz[k] = -p.x[k] * p.zx[k];
		}
		for (int r = 0; r < p.R; r++) {
			p.dW[r] = p.w[r] / p.zw[r];
			p.rwz[r] = -p.w[r] * p.zw[r];
		}
		if (direction(&p) < 0)
			break;
		ap = fmin(max_step(p.x, p.dx, p.K), max_step(p.w, p.dw, p.R));
		ad = fmin(max_step(p.zx, p.dzx, p.K), max_step(p.zw, p.dzw, p.R));
		for (int k = 0; k < p.K; k++)
			mu_aff += (p.x[k] + ap * p.dx[k]) * (p.zx[k] + ad * p.dzx[k]);
		for (int r = 0; r < p.R; r++)
			mu_aff += (p.w[r] + ap * p.dw[r]) * (p.zw[r] + ad * p.dzw[r]);
		mu_aff /= N;
		sigma = pow(mu_aff / mu, 3.0);
		/* corrector: centring plus the second-order term */
		for (int k = 0; k < p.K; k++)
			p.rxz[k] = -p.x[k] * p.zx[k] + sigma * mu - p.dx[k] * p.dzx[k];
		for (int r = 0; r < p.R; r++)
			p.rwz[r] = -p.w[r] * p.zw[r] + sigma * mu - p.dw[r] * p.dzw[r];
		if (direction(&p) < 0)
			break;
		ap = fmin(1.0, IPM_STEP * fmin(max_step(p.x, p.dx, p.K), max_step(p.w, p.dw, p.R)));
		ad = fmin(1.0, IPM_STEP * fmin(max_step(p.zx, p.dzx, p.K), max_step(p.zw, p.dzw, p.R)));
		for (int k = 0; k < p.K; k++) {
			p.x[k] += ap * p.dx[k];
			p.zx[k] += ad * p.dzx[k];
		}
		for (int r = 0; r < p.R; r++) {
			p.w[r] += ap * p.dw[r];
			p.y[r] += ad * p.dy[r];
			p.zw[r] += ad * p.dzw[r];
		}
	}
	if (it == IPM_MAX_ITERS) {
		hb_runtime_error(err, "gavel max-sum throughput (interior point): no convergence in %d iterations",
				 IPM_MAX_ITERS);
		goto out;
	}
	for (int k = 0; k < p.K; k++) {
		double v = p.x[k];

		v = v < 0 ? 0 : v > 1 ? 1 : v;
		v = round(v * 1e5) / 1e5; /* the artifact's x.value.round(decimals=5) */
		x[(size_t)p.pm[k] * T + p.pj[k]] = v;
		if (objective)
			*objective += -p.c[k] * scale * v;
	}
	rc = 0;
out:
	ipm_free(&p);
	return rc;
}
