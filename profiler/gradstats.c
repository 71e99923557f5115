/*
 * gradstats.c: gradient similarity and noise scale (gradstats.h).  Pure
 * functions of given vectors and norms, so tests check them exactly.
 */
#include <math.h>

#include "gradstats.h"

double hb_gradstats_sqnorm(const float *a, long n)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s += (double)a[i] * (double)a[i];
	return s;
}

double hb_gradstats_cosine(const float *a, const float *b, long n)
{
	double ab = 0, aa = 0, bb = 0;

	for (long i = 0; i < n; i++) {
		ab += (double)a[i] * (double)b[i];
		aa += (double)a[i] * (double)a[i];
		bb += (double)b[i] * (double)b[i];
	}
	if (!(aa > 0) || !(bb > 0))
		return NAN;
	return ab / sqrt(aa * bb);
}

int hb_gradstats_noise_scale(int c, double sum_sqr, double sum_inv_b, double b_big, double big_sqr,
			     struct hb_gns *out)
{
	double bs;

	*out = (struct hb_gns){ .c = c, .b_small = NAN, .b_big = b_big, .small_sqr = NAN, .big_sqr = big_sqr,
				.grad_sqr = NAN, .trace_sigma = NAN, .noise_scale = NAN };
	if (c < 2 || !(sum_inv_b > 0))
		return -1;
	bs = (double)c / sum_inv_b;
	out->b_small = bs;
	out->small_sqr = sum_sqr / c;
	if (!(b_big > bs))
		return -1;
	/* McCandlish et al. 2018, Appendix A.1 (gradstats.h) */
	out->grad_sqr = (b_big * big_sqr - bs * out->small_sqr) / (b_big - bs);
	out->trace_sigma = (out->small_sqr - big_sqr) / (1.0 / bs - 1.0 / b_big);
	out->noise_scale = out->trace_sigma / out->grad_sqr;
	return 0;
}
