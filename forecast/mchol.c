/*
 * mchol.c: GSL 2.7's modified Cholesky on plain arrays (see mchol.h).
 *
 * Each routine names the GSL/CBLAS step it stands for.  What must match
 * GSL for the bits to match: the order of every sum (CBLAS's ddot, dgemv,
 * dtrmv and dtrsv accumulate left to right from 0.0 or from the target),
 * which products are formed (dsyr's alpha * x_i first, then x_j * that),
 * GSL's quirks (the pivot search starts from the signed first value, not
 * its absolute value; dsyr and dgemv skip a zero scale), and the comparison
 * directions of GSL_MAX.  C11 mode contracts nothing into FMAs, and neither
 * does libgslcblas on x86-64's baseline ISA.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_linalg.h>

#include "mchol.h"

/* GSL_MAX, whose argument order decides which NaN wins */
#define MAX_GSL(a, b) ((a) > (b) ? (a) : (b))

static void swap_d(double *a, double *b)
{
	double t = *b;

	*b = *a;
	*a = t;
}

/* cholesky_swap_rowcol(A, j, q), j < q: swap rows and columns j and q of a
 * symmetric matrix held in its lower triangle. */
static void swap_rowcol(double *A, size_t n, size_t j, size_t q)
{
	for (size_t k = 0; k < j; k++)
		swap_d(&A[j * n + k], &A[q * n + k]);
	for (size_t k = j + 1; k < q; k++)
		swap_d(&A[q * n + k], &A[k * n + j]);
	for (size_t k = q + 1; k < n; k++)
		swap_d(&A[k * n + j], &A[k * n + q]);
	swap_d(&A[j * n + j], &A[q * n + q]);
}

/* Columns below the diagonal that hb_mchol_decomp copies to the stack
 * (the forecaster's whole GPR window); longer ones are read in place. */
#define DECOMP_COPY_MAX 256

/* Column j below the diagonal, v, is copied to a contiguous buffer before
 * GSL's dsyr: each entry of the trailing block gets exactly one update,
 * A_rc += v_c (a v_r), whatever order the entries are visited in, so row
 * r's update is an elementwise multiply and add over contiguous v and
 * A(r, j+1:r), which the compiler vectorises; read in place, v is a column
 * with stride n. */
void hb_mchol_decomp(double *A, size_t n, size_t *perm, double *E)
{
	double gamma = 0.0, xi = 0.0, beta, vbuf[DECOMP_COPY_MAX];

	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	/* gamma = max |A_ii|, xi = max_{i != j} |A_ij| */
	for (size_t i = 0; i < n; i++) {
		gamma = MAX_GSL(gamma, fabs(A[i * n + i]));
		for (size_t j = 0; j < i; j++)
			xi = MAX_GSL(xi, fabs(A[i * n + j]));
	}
	/* beta = sqrt(max(gamma, xi / nu, eps)), nu = sqrt(n^2 - 1) (n > 1) */
	if (n == 1)
		beta = MAX_GSL(MAX_GSL(gamma, xi), DBL_EPSILON);
	else
		beta = MAX_GSL(MAX_GSL(gamma, xi / sqrt((double)(n * n) - 1.0)), DBL_EPSILON);
	beta = sqrt(beta);
	for (size_t j = 0; j < n; j++) {
		double maxv = A[j * n + j], thetaj = 0.0, u, ajj, alpha, alphainv;
		const size_t m = n - j - 1; /* rows below the diagonal */
		const int copy = m <= DECOMP_COPY_MAX;
		size_t q = j;

		/* mcholesky_maxabs over the remaining diagonal: the running
		 * maximum starts at the first value itself, signed */
		for (size_t i = j + 1; i < n; i++)
			if (fabs(A[i * n + i]) > maxv) {
				maxv = fabs(A[i * n + i]);
				q = i;
			}
		if (q != j) {
			size_t t = perm[q];

			perm[q] = perm[j];
			perm[j] = t;
			swap_rowcol(A, n, j, q);
		}
		/* theta_j = max |A_ij|, i > j (the same maxabs) */
		if (m > 0) {
			if (copy) {
				for (size_t i = 0; i < m; i++)
					vbuf[i] = A[(j + 1 + i) * n + j];
				thetaj = vbuf[0];
				for (size_t i = 1; i < m; i++)
					if (fabs(vbuf[i]) > thetaj)
						thetaj = fabs(vbuf[i]);
			} else {
				thetaj = A[(j + 1) * n + j];
				for (size_t i = j + 2; i < n; i++)
					if (fabs(A[i * n + j]) > thetaj)
						thetaj = fabs(A[i * n + j]);
			}
		}
		u = thetaj / beta;
		ajj = A[j * n + j];
		alpha = MAX_GSL(MAX_GSL(DBL_EPSILON, fabs(ajj)), u * u);
		alphainv = 1.0 / alpha;
		if (m > 0) {
			const double a = -alphainv;

			/* dsyr(Lower, -1/alpha, v, A(j+1:, j+1:)), v = A(j+1:, j):
			 * row by row, tmp = a v_r, then A_rc += v_c tmp */
			if (a != 0.0 && copy) {
				const double *v = vbuf;

				for (size_t r = j + 1; r < n; r++) {
					const double tmp = a * v[r - j - 1];
					double *row = &A[r * n + j + 1];

					for (size_t c = 0; c < r - j; c++)
						row[c] += v[c] * tmp;
				}
			} else if (a != 0.0) {
				for (size_t r = j + 1; r < n; r++) {
					const double tmp = a * A[r * n + j];

					for (size_t c = j + 1; c <= r; c++)
						A[r * n + c] += A[c * n + j] * tmp;
				}
			}
			/* v = v / alpha, as gsl_vector_scale: v * (1 / alpha) */
			for (size_t r = j + 1; r < n; r++)
				A[r * n + j] *= alphainv;
		}
		if (E)
			E[j] = alpha - ajj;
		A[j * n + j] = alpha;
	}
}

void hb_mchol_solve(const double *LDLT, size_t n, const size_t *perm, const double *b, double *x,
		    double *work)
{
	double *w = work;

	if (n == 0)
		return;
	/* w = P b (gsl_permute_vector) */
	for (size_t i = 0; i < n; i++)
		w[i] = b[perm[i]];
	/* L w' = w (dtrsv Lower, NoTrans, Unit): forward substitution */
	for (size_t i = 1; i < n; i++) {
		double t = w[i];

		for (size_t j = 0; j < i; j++)
			t -= LDLT[i * n + j] * w[j];
		w[i] = t;
	}
	/* D (gsl_vector_div) */
	for (size_t i = 0; i < n; i++)
		w[i] /= LDLT[i * n + i];
	/* L' z = w (dtrsv Lower, Trans, Unit): back substitution down the columns */
	for (size_t i = n - 1; i-- > 0;) {
		double t = w[i];

		for (size_t j = i + 1; j < n; j++)
			t -= LDLT[j * n + i] * w[j];
		w[i] = t;
	}
	/* x = P' z (gsl_permute_vector_inverse) */
	for (size_t i = 0; i < n; i++)
		x[perm[i]] = w[i];
}

/* gsl_linalg_mcholesky_invert for n > HB_MCHOL_INVERT_DIRECT_MAX: GSL on
 * views of the caller's arrays (its recursive triangular inverse's order of
 * operations is not worth copying for the rare large windows). */
static int invert_gsl(const double *LDLT, size_t n, const size_t *perm, double *Ainv)
{
	gsl_matrix_const_view L = gsl_matrix_const_view_array(LDLT, n, n);
	gsl_matrix_view I = gsl_matrix_view_array(Ainv, n, n);
	gsl_permutation p = { .size = n, .data = (size_t *)perm };

	return gsl_linalg_mcholesky_invert(&L.matrix, &p, &I.matrix) == GSL_SUCCESS ? 0 : -1;
}

int hb_mchol_invert(const double *LDLT, size_t n, const size_t *perm, double *Ainv, double *work)
{
	double *T = work;
	int singular = 0;

	if (n > HB_MCHOL_INVERT_DIRECT_MAX)
		return invert_gsl(LDLT, n, perm, Ainv);
	if (n == 0)
		return 0;
	/* the factor whole, in one call (a call per row of the lower
	 * triangle cost more than the copy): nothing below reads T's upper
	 * triangle */
	memcpy(T, LDLT, n * n * sizeof(double));
	/* gsl_linalg_tri_invert checks the diagonal (here D) for zeros, and
	 * pcholesky_invert ignores its refusal */
	for (size_t i = 0; i < n; i++)
		singular |= LDLT[i * n + i] == 0.0;
	/* L^-1 in place (gsl_linalg_tri_invert: triangular_inverse_L2, lower,
	 * unit): column j from the right, v = A(j+1:, j) := -(L22^-1 v), L22^-1
	 * already inverted; the product is dtrmv (Lower, NoTrans, Unit), rows
	 * from the bottom up */
	if (!singular)
		for (size_t j = n - 1; j-- > 0;) {
			for (size_t r = n - 1; r > j; r--) {
				double t = 0.0;

				for (size_t c = j + 1; c < r; c++)
					t += T[c * n + j] * T[r * n + c];
				T[r * n + j] += t;
			}
			for (size_t r = j + 1; r < n; r++)
				T[r * n + j] *= -1.0;
		}
	/* M = D^-1/2 L^-1: each row times 1 / sqrt(D_i) (dscal) */
	for (size_t i = 0; i < n; i++) {
		const double s = 1.0 / sqrt(LDLT[i * n + i]);

		for (size_t j = 0; j < i; j++)
			T[i * n + j] *= s;
		T[i * n + i] = s;
	}
	/* gsl_linalg_tri_LTL (triangular_multsymm_L2): the lower triangle of
	 * M' M, row by row: (i, i) = ddot of column i from row i; (i, 0:i-1) =
	 * dgemv(Trans, 1, M(i+1:, 0:i-1), M(i+1:, i), M_ii, row i), which
	 * scales row i by M_ii first; the last row is scaled by M_ii alone
	 * (dscal).  Rows below i still hold M.  (n <= 24: GSL's crossover
	 * from the recursive form is the same as the inverse's.) */
	for (size_t i = 0; i + 1 < n; i++) {
		const double aii = T[i * n + i];
		double d = 0.0;

		for (size_t k = i; k < n; k++)
			d += T[k * n + i] * T[k * n + i];
		T[i * n + i] = d;
		if (i == 0)
			continue;
		if (aii == 0.0)
			for (size_t c = 0; c < i; c++)
				T[i * n + c] = 0.0;
		else if (aii != 1.0)
			for (size_t c = 0; c < i; c++)
				T[i * n + c] *= aii;
		for (size_t k = i + 1; k < n; k++) {
			const double t = 1.0 * T[k * n + i];

			if (t != 0.0)
				for (size_t c = 0; c < i; c++)
					T[i * n + c] += t * T[k * n + c];
		}
	}
	{
		const double aii = T[(n - 1) * n + n - 1];

		for (size_t c = 0; c < n; c++)
			T[(n - 1) * n + c] *= aii;
	}
	/* P' (M' M) P, symmetric: entry (a, b) of the pivoted inverse belongs
	 * to the original rows perm[a], perm[b] */
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b <= a; b++) {
			Ainv[perm[a] * n + perm[b]] = T[a * n + b];
			Ainv[perm[b] * n + perm[a]] = T[a * n + b];
		}
	return 0;
}
