#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strutil.h"

static int only_blanks(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* Length of the decimal number at s: [+-] digits [. digits] [e [+-] digits]
 * (at least one digit before the exponent), else 0.  strtod also reads hex
 * ("0x10" is 16), "inf", "nan" and "infinity"; a count or time in a file
 * must not be one of those, so callers check this first. */
static size_t decimal_len(const char *s)
{
	size_t i = 0, digits = 0;

	if (s[i] == '+' || s[i] == '-')
		i++;
	while (isdigit((unsigned char)s[i])) {
		i++;
		digits++;
	}
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i])) {
			i++;
			digits++;
		}
	}
	if (!digits)
		return 0;
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;

		if (s[j] == '+' || s[j] == '-')
			j++;
		if (isdigit((unsigned char)s[j])) {
			while (isdigit((unsigned char)s[j]))
				j++;
			i = j;
		}
	}
	return i;
}

int hb_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || end != s + decimal_len(s) || !only_blanks(end) || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int hb_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || !only_blanks(end) || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

int hb_parse_long_range(const char *s, long lo, long hi, long *out)
{
	long v;

	if (hb_parse_long(s, &v) < 0 || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

size_t hb_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t k = n < size - 1 ? n : size - 1;
		memcpy(dst, src, k);
		dst[k] = '\0';
	}
	return n;
}

char *hb_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int hb_split_list(char *s, char **items, int max)
{
	int n = 0;
	char *p = s;

	for (;;) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (n == max)
			return -1;
		items[n] = hb_trim(p);
		if (!*items[n])
			return -1;
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	return n;
}

const char *hb_plural(long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

int hb_strcaseeq(const char *a, const char *b)
{
	while (*a && *b) {
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
		a++;
		b++;
	}
	return *a == *b;
}

int hb_parse_size(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end), mul = 1;

	if (end == s || end != s + decimal_len(s))
		return -1; /* decimal only: no "0x10", "inf" or "nan" */
	switch (*end) {
	case 'K': case 'k': mul = 1024.0; end++; break;
	case 'M': case 'm': mul = 1048576.0; end++; break;
	case 'G': case 'g': mul = 1073741824.0; end++; break;
	case 'T': case 't': mul = 1099511627776.0; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || !(v > 0) || !isfinite(v * mul))
		return -1;
	*out = v * mul;
	return 0;
}

double hb_no_neg_zero(double v, int decimals)
{
	if (v == 0.0)
		return 0.0; /* -0.0 == 0.0: this returns +0.0 for both */
	if (decimals >= 0 && v < 0.0 && v > -0.5 * pow(10.0, -(double)decimals))
		return 0.0;
	return v;
}

size_t hb_utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		if (s[0] == 0xE0)
			lo = 0xA0; /* no overlong forms */
		else if (s[0] == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		if (s[0] == 0xF0)
			lo = 0x90;
		else if (s[0] == 0xF4)
			hi = 0x8F; /* not above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

void hb_utc_iso_now(char *out, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	if (n == 0)
		return;
	/* strftime leaves the array indeterminate when the text does not fit */
	if (t == (time_t)-1 || !gmtime_r(&t, &tm) || strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		out[0] = '\0';
}
