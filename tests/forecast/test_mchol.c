/* Unit tests for forecast/mchol: the factor, permutation, perturbation,
 * solution and inverse must equal GSL's gsl_linalg_mcholesky_* byte for
 * byte (memcmp), on the matrices the GPR fit meets (periodic kernels at
 * evenly spaced points: ties on the diagonal, near-singular) and on random
 * positive definite, indefinite and rank-deficient ones, n = 1 to 40 (both
 * sides of HB_MCHOL_INVERT_DIRECT_MAX) and 255 to 259 (both sides of the
 * decomposition's column buffer).  A single differing bit fails. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "mchol.h"
#include "rng.h" /* defines: hb_rng_seed, hb_rng_uniform, hb_rng_normal, HB_STREAM_DEFAULT */

#define MAXN 40

enum kind { KIND_KERNEL, KIND_SPD, KIND_INDEFINITE, KIND_RANK1, KIND_NKINDS };

/* Fill the lower triangle (and, mirrored, the upper) of an n x n matrix. */
static void make_matrix(enum kind kind, size_t n, struct hb_rng *r, double *A)
{
	double *B = malloc(n * n * sizeof(double));

	assert_non_null(B);
	switch (kind) {
	case KIND_KERNEL: {
		/* gpr.c's K: c exp(-2 sin^2(pi d / P) / l^2) + noise at points p
		 * apart, with hyper-parameters across the fit's bounds */
		const double c = exp(log(1e6) * hb_rng_uniform(r)), l = exp(log(1e-5) + log(1e10) * hb_rng_uniform(r));
		const double P = exp(log(1e-2) + log(1e3) * hb_rng_uniform(r));
		const double step = hb_rng_uniform(r) < 0.5 ? 100.0 : 1.0 + hb_rng_uniform(r);

		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j <= i; j++) {
				double s = sin(M_PI * fabs(step * (double)i - step * (double)j) / P);

				A[i * n + j] = j < i ? c * exp(-2.0 * s * s / (l * l)) : c + 1e-10;
			}
		break;
	}
	case KIND_SPD:
	case KIND_RANK1:
		/* B B' (+ a small ridge for SPD): rank 1 when B has one column */
		for (size_t i = 0; i < n * n; i++)
			B[i] = hb_rng_normal(r);
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j <= i; j++) {
				double s = 0.0;

				for (size_t k = 0; k < (kind == KIND_RANK1 ? 1 : n); k++)
					s += B[i * n + k] * B[j * n + k];
				A[i * n + j] = s + (i == j && kind == KIND_SPD ? 1e-3 : 0.0);
			}
		break;
	case KIND_INDEFINITE:
	case KIND_NKINDS:
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j <= i; j++)
				A[i * n + j] = hb_rng_normal(r);
		break;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			A[j * n + i] = A[i * n + j];
	free(B);
}

/* One matrix through GSL and through mchol; every output compared bytewise. */
static void compare_one(enum kind kind, size_t n, struct hb_rng *r)
{
	/* on the heap: the windows past mchol.c's column buffer are large */
	double *A = malloc(n * n * sizeof(double)), *L = malloc(n * n * sizeof(double));
	double *Ainv = malloc(n * n * sizeof(double)), *work = malloc(n * n * sizeof(double));
	double *E = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *x = malloc(n * sizeof(double));
	size_t *perm = malloc(n * sizeof(size_t));
	gsl_matrix *gA = gsl_matrix_alloc(n, n), *gI = gsl_matrix_alloc(n, n);
	gsl_permutation *gp = gsl_permutation_alloc(n);
	gsl_vector *gE = gsl_vector_alloc(n), *gb = gsl_vector_alloc(n), *gx = gsl_vector_alloc(n);

	assert_true(A && L && Ainv && work && E && b && x && perm);
	assert_non_null(gA);
	assert_non_null(gI);
	assert_non_null(gp);
	assert_non_null(gE);
	assert_non_null(gb);
	assert_non_null(gx);
	make_matrix(kind, n, r, A);
	for (size_t i = 0; i < n; i++)
		b[i] = hb_rng_normal(r);
	memcpy(gA->data, A, n * n * sizeof(double));
	memcpy(gb->data, b, n * sizeof(double));
	memcpy(L, A, n * n * sizeof(double));

	assert_int_equal(gsl_linalg_mcholesky_decomp(gA, gp, gE), GSL_SUCCESS);
	hb_mchol_decomp(L, n, perm, E);
	assert_memory_equal(perm, gp->data, n * sizeof(size_t));
	for (size_t i = 0; i < n; i++) {
		/* the lower triangle with the diagonal; GSL's upper holds A */
		if (memcmp(&L[i * n], &gA->data[i * n], (i + 1) * sizeof(double)) != 0)
			fail_msg("kind %d n %zu: factor row %zu differs", (int)kind, n, i);
		/* GSL returns E permuted back to the rows of A */
		if (memcmp(&E[i], &gE->data[perm[i]], sizeof(double)) != 0)
			fail_msg("kind %d n %zu: E[%zu] %.17g, GSL %.17g", (int)kind, n, i, E[i], gE->data[perm[i]]);
	}

	/* solve and invert on GSL's own factor, as ws_eval uses them */
	assert_int_equal(gsl_linalg_mcholesky_solve(gA, gp, gb, gx), GSL_SUCCESS);
	hb_mchol_solve(L, n, perm, b, x, work);
	for (size_t i = 0; i < n; i++)
		if (memcmp(&x[i], &gx->data[i], sizeof(double)) != 0)
			fail_msg("kind %d n %zu: solution %zu is %.17g, GSL %.17g", (int)kind, n, i, x[i], gx->data[i]);
	assert_int_equal(gsl_linalg_mcholesky_invert(gA, gp, gI), GSL_SUCCESS);
	assert_int_equal(hb_mchol_invert(L, n, perm, Ainv, work), 0);
	for (size_t i = 0; i < n * n; i++)
		if (memcmp(&Ainv[i], &gI->data[i], sizeof(double)) != 0)
			fail_msg("kind %d n %zu: inverse (%zu, %zu) is %.17g, GSL %.17g", (int)kind, n, i / n, i % n,
				 Ainv[i], gI->data[i]);
	gsl_matrix_free(gA);
	gsl_matrix_free(gI);
	gsl_permutation_free(gp);
	gsl_vector_free(gE);
	gsl_vector_free(gb);
	gsl_vector_free(gx);
	free(A);
	free(L);
	free(Ainv);
	free(work);
	free(E);
	free(b);
	free(x);
	free(perm);
}

static void test_matches_gsl_bit_for_bit(void **state)
{
	struct hb_rng r;

	(void)state;
	hb_rng_seed(&r, 2027, HB_STREAM_DEFAULT);
	for (int rep = 0; rep < 25; rep++)
		for (size_t n = 1; n <= MAXN; n++)
			for (int k = 0; k < KIND_NKINDS; k++)
				compare_one((enum kind)k, n, &r);
}

/* The kernel matrices dominate a fit: many more of them, at the window
 * sizes the forecaster sees most (3 to 16 points). */
static void test_kernel_matrices_match_gsl(void **state)
{
	struct hb_rng r;

	(void)state;
	hb_rng_seed(&r, 7, HB_STREAM_DEFAULT);
	for (int rep = 0; rep < 400; rep++)
		for (size_t n = 3; n <= 16; n++)
			compare_one(KIND_KERNEL, n, &r);
}

/* hb_mchol_decomp copies a column of up to 256 rows below the diagonal
 * to the stack and reads longer ones in place: windows of 255 to 259
 * points take both paths (the largest both within one factorisation). */
static void test_column_buffer_boundary_matches_gsl(void **state)
{
	struct hb_rng r;

	(void)state;
	hb_rng_seed(&r, 11, HB_STREAM_DEFAULT);
	for (size_t n = 255; n <= 259; n++)
		for (int k = 0; k < KIND_NKINDS; k++)
			compare_one((enum kind)k, n, &r);
}

/* A test that could not fail would prove nothing: a one-ulp change of one
 * entry of the factor must show in the comparison of the inverse. */
static void test_comparison_sees_one_ulp(void **state)
{
	struct hb_rng r;
	double A[9 * 9], Ainv[9 * 9], Ainv2[9 * 9], work[9 * 9];
	size_t perm[9];
	const size_t n = 9;

	(void)state;
	hb_rng_seed(&r, 3, HB_STREAM_DEFAULT);
	make_matrix(KIND_SPD, n, &r, A);
	hb_mchol_decomp(A, n, perm, NULL);
	assert_int_equal(hb_mchol_invert(A, n, perm, Ainv, work), 0);
	A[5 * n + 2] = nextafter(A[5 * n + 2], INFINITY);
	assert_int_equal(hb_mchol_invert(A, n, perm, Ainv2, work), 0);
	assert_true(memcmp(Ainv, Ainv2, sizeof(Ainv)) != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_gsl_bit_for_bit),
		cmocka_unit_test(test_kernel_matrices_match_gsl),
		cmocka_unit_test(test_column_buffer_boundary_matches_gsl),
		cmocka_unit_test(test_comparison_sees_one_ulp),
	};

	gsl_set_error_handler_off();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
