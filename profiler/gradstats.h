/*
 * gradstats.h: statistics of one data-parallel step's gradients, measured
 * from real gradient vectors (the live run's metrics, live.h).
 *
 *  - Gradient similarity (SimiGrad, used by JABAS, notes/jabas.md 4.1):
 *    the decoupled workers are split into two halves H1 and H2, and
 *    Phi = cos(g_H1, g_H2), the cosine between the two halves' mean
 *    gradients.  Cosine is scale-free, so sums or sample-weighted sums of
 *    the halves' gradients give the same Phi as their means.
 *
 *  - Gradient noise scale (McCandlish et al. 2018, "An Empirical Model of
 *    Large-Batch Training", Appendix A.1, as Pollux estimates it, §3.1;
 *    notes/pollux.md 1.4): with E|g_B|^2 = |G|^2 + tr(Sigma)/B for the
 *    mean gradient g_B of B samples (Sigma: the per-sample gradient
 *    covariance, G: the true gradient), a small-batch and a big-batch norm
 *    give the unbiased estimators
 *      |G|^2_est = (B_big |g_big|^2 - B_small |g_small|^2) / (B_big - B_small)
 *      S_est     = (|g_small|^2 - |g_big|^2) / (1/B_small - 1/B_big)
 *    and B_noise = S_est / |G|^2_est (B_simple in [46]; Pollux's phi with
 *    P = I).  Pollux's names: grad_sqr = |G|^2_est and, for an initial batch
 *    M0, grad_var = S_est / M0, so phi = M0 grad_var / grad_sqr (equal
 *    batches: grad_sqr = (c total_sqr - local_sqr) / (c - 1)).
 *    The small batches are c worker gradients g_k of b_k samples each and
 *    the big batch is their sample-weighted mean (B_big = sum b_k).  With
 *    |g_small|^2 = (1/c) sum |g_k|^2, E|g_small|^2 = |G|^2 + tr(Sigma) mean(1/b_k),
 *    so the estimators stay unbiased with unequal batches when B_small is
 *    the harmonic mean c / sum(1/b_k) (equal batches: B_small = b).
 *    The ratio of two unbiased estimates is not unbiased: [46] averages
 *    S_est and |G|^2_est over steps before dividing (Pollux: exponential
 *    moving averages), so callers keep both, not only their ratio.
 */
#ifndef HB_GRADSTATS_H
#define HB_GRADSTATS_H

/* One noise-scale measurement. */
struct hb_gns {
	int c;                   /* small-batch gradients (workers) */
	double b_small;          /* harmonic mean of their batches */
	double b_big;            /* samples of the big batch (sum of theirs) */
	double small_sqr;        /* mean over the workers of |g_k|^2 */
	double big_sqr;          /* |g_big|^2 */
	double grad_sqr;         /* |G|^2 estimate */
	double trace_sigma;      /* tr(Sigma) estimate (per-sample gradient variance) */
	double noise_scale;      /* B_noise = trace_sigma / grad_sqr */
};

/* cos(a, b) of two n-vectors, accumulated in double; NAN when either is
 * zero or n < 1. */
double hb_gradstats_cosine(const float *a, const float *b, long n);
/* |a|^2 in double. */
double hb_gradstats_sqnorm(const float *a, long n);

/* The estimators above from c worker gradients: sum_sqr = sum |g_k|^2,
 * sum_inv_b = sum 1/b_k, b_big = sum b_k, big_sqr = |g_big|^2 of their
 * sample-weighted mean.  Returns 0, or -1 with every estimate NAN when
 * there are fewer than two workers or the batches are degenerate
 * (B_big <= B_small); inputs are copied into *out either way. */
int hb_gradstats_noise_scale(int c, double sum_sqr, double sum_inv_b, double b_big, double big_sqr,
			     struct hb_gns *out);

#endif
