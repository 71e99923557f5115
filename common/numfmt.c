/*
 * numfmt.c: numbers as result files print them, without printf's
 * floating-point path.
 *
 * glibc formats a double exactly, with multi-precision arithmetic, which
 * makes "%.9g" about a microsecond; a trace's jobs.csv and event details
 * print a few million of them.  hb_fmt_g9 scales by an exact power of ten
 * (one rounding, an error under 1.2e-7 of the ninth digit) and rounds to
 * nine digits itself, leaving to printf only the values whose ninth digit
 * that error could change (within 1e-6 of a tie) and those outside the
 * range it handles.  tests/common/test_inputs.c checks it against printf.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strutil.h"

/* 10^0 .. 10^22, each exact as a double */
static const double pow10_exact[] = { 1e0,  1e1,  1e2,	1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
				      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/* a (1e-4 <= a < 1e15) times 10^(8 - e): one rounding */
static double scaled(double a, int e)
{
	return 8 - e >= 0 ? a * pow10_exact[8 - e] : a / pow10_exact[e - 8];
}

static int fallback(char *out, double v)
{
	return snprintf(out, HB_FMT_G9_MAX, "%.9g", v);
}

int hb_fmt_g9(char *out, double v)
{
	char dig[10], *p = out;
	double a = fabs(v), x, r, frac;
	long m;
	int e, nd;

	if (!(a >= 1e-4 && a < 1e15))
		return fallback(out, v); /* zero, tiny, huge, not finite */
	e = (int)floor(log10(a));
	if (e < -4)
		e = -4;
	if (e > 14)
		e = 14;
	x = scaled(a, e);
	if (x < 1e8 && e > -4)
		x = scaled(a, --e);
	else if (x >= 1e9 && e < 14)
		x = scaled(a, ++e);
	if (!(x >= 1e8 - 1 && x < 1e9))
		return fallback(out, v);
	r = floor(x);
	frac = x - r; /* exact: x and r are within 1 of each other, below 2^30 */
	if (fabs(frac - 0.5) < 1e-6)
		return fallback(out, v); /* the exact value decides: printf's */
	m = (long)r + (frac > 0.5);
	if (m >= 1000000000L) { /* rounded up to 10^9 */
		m /= 10;
		e++;
	} else if (m < 100000000L) { /* x just under 10^8 rounded down */
		return fallback(out, v);
	}
	for (int i = 8; i >= 0; i--, m /= 10)
		dig[i] = (char)('0' + m % 10);
	for (nd = 9; nd > 1 && dig[nd - 1] == '0'; nd--)
		; /* %g drops trailing zeros */
	if (v < 0)
		*p++ = '-';
	if (e >= 9) { /* %g's exponent form: the exponent reaches the precision */
		*p++ = dig[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, dig + 1, (size_t)nd - 1);
			p += nd - 1;
		}
		p += sprintf(p, "e+%02d", e);
	} else if (e >= 0) {
		memcpy(p, dig, (size_t)e + 1);
		p += e + 1;
		if (nd > e + 1) {
			*p++ = '.';
			memcpy(p, dig + e + 1, (size_t)(nd - e - 1));
			p += nd - e - 1;
		}
	} else {
		*p++ = '0';
		*p++ = '.';
		for (int i = -1; i > e; i--)
			*p++ = '0';
		memcpy(p, dig, (size_t)nd);
		p += nd;
	}
	*p = '\0';
	return (int)(p - out);
}
