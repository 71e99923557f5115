/*
 * mchol.h: GSL 2.7's pivoted modified Cholesky (gsl_linalg_mcholesky_decomp,
 * _solve, _invert) on plain row-major arrays, bit for bit.
 *
 * The GPR fit (gpr.c) factors a kernel matrix of a few to a few dozen rows
 * at every likelihood evaluation, tens of thousands of times per trace
 * replay.  At that size GSL's cost is its per-element calls (gsl_matrix_get
 * and _set, views, CBLAS calls of length 1 to n, permutations of each row
 * and column of the inverse), not the arithmetic.  These routines perform
 * the very floating-point operations of GSL 2.7.1 with its reference CBLAS
 * (libgslcblas), in the same order, so a fit's every bit is unchanged; only
 * the bookkeeping around them is gone.  tests/forecast/test_mchol.c compares
 * them with GSL byte for byte on random positive definite, near-singular
 * and indefinite matrices.
 *
 * Matrices are n x n, row-major, leading dimension n.  Only the lower
 * triangle (with the diagonal) of the input is read, and only the lower
 * triangle of the factor is written: GSL also keeps a copy of A in the upper
 * triangle, for its condition estimate, which nothing here needs.
 */
#ifndef HB_MCHOL_H
#define HB_MCHOL_H

#include <stddef.h>

/* Largest n whose inverse GSL computes with its level-2 triangular inverse
 * (linalg/recurse.h CROSSOVER_INVTRI); above it GSL recurses through dtrmm
 * and dtrsm, and hb_mchol_invert calls GSL itself. */
#define HB_MCHOL_INVERT_DIRECT_MAX 24

/* P (A + E) P' = L D L' (gsl_linalg_mcholesky_decomp).  A: lower triangle
 * in; L below the diagonal and D on it out.  perm[k] is the row of A that
 * became row k.  E (n, may be NULL): the diagonal perturbation in pivot
 * order, E[k] for the row perm[k] (GSL returns it permuted back). */
void hb_mchol_decomp(double *A, size_t n, size_t *perm, double *E);

/* x = A^-1 b from the factor (gsl_linalg_mcholesky_solve); work: n doubles.
 * b and x may not overlap work; x may be b. */
void hb_mchol_solve(const double *LDLT, size_t n, const size_t *perm, const double *b, double *x,
		    double *work);

/* Ainv = A^-1, full and symmetric, from the factor
 * (gsl_linalg_mcholesky_invert); work: n * n doubles, not overlapping Ainv.
 * It copies all of LDLT (n * n doubles) and uses only the lower triangle.
 * Returns 0, or -1 if GSL's fallback (n > HB_MCHOL_INVERT_DIRECT_MAX) fails. */
int hb_mchol_invert(const double *LDLT, size_t n, const size_t *perm, double *Ainv, double *work);

#endif
