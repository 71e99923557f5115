/*
 * strutil.h: strict string-to-number parsing and small string helpers.
 *
 * The parsers accept the whole string or nothing (leading/trailing blanks are
 * allowed), so "12abc", "", "nan" and out-of-range values are rejected rather
 * than silently read as something else.
 */
#ifndef HB_STRUTIL_H
#define HB_STRUTIL_H

#include <stddef.h>

/* 0 on success; -1 if s is not a finite decimal number ([+-] digits
 * [. digits] [e [+-] digits]): hex ("0x10"), "inf" and "nan", which strtod
 * reads, are refused, in files and options alike. */
int hb_parse_double(const char *s, double *out);
/* A positive size in bytes: a number with an optional binary suffix K, M,
 * G, T (2^10 ...) and an optional B ("512M", "4G", "1e9").  0 or -1. */
int hb_parse_size(const char *s, double *out);
/* 0 on success; -1 if s is not an integer that fits in long. */
int hb_parse_long(const char *s, long *out);
/* Like hb_parse_long, also requiring lo <= value <= hi. */
int hb_parse_long_range(const char *s, long lo, long hi, long *out);

/* Copy at most size-1 bytes and always terminate; returns strlen(src). */
size_t hb_strlcpy(char *dst, const char *src, size_t size);

/* Split a comma-separated list in place.  Fills at most max pointers into s
 * (each trimmed of blanks) and returns the number of items, or -1 if there are
 * more than max or an item is empty. */
int hb_split_list(char *s, char **items, int max);

/* one when n is 1, else many: "%ld %s", n, hb_plural(n, "file", "files"). */
const char *hb_plural(long n, const char *one, const char *many);

/* Case-insensitive ASCII comparison. */
int hb_strcaseeq(const char *a, const char *b);

/* Trim blanks in place, returning the start of the trimmed string. */
char *hb_trim(char *s);

/* v as a table or file should print it with `decimals` digits after the
 * point: +0.0 where it would round to a negative zero ("-0", "-0.00": v is
 * -0.0, or negative and above -0.5e-decimals), v itself otherwise.  Pass
 * -1 for "%g"-style output, where only -0.0 itself prints as "-0". */
double hb_no_neg_zero(double v, int decimals);

/* v as snprintf(out, HB_FMT_G9_MAX, "%.9g", v) writes it, the same bytes,
 * about ten times faster (numfmt.c); returns the length. */
#define HB_FMT_G9_MAX 32
int hb_fmt_g9(char *out, double v);

/* Length of the well-formed UTF-8 sequence at s (n bytes available): 1 to
 * 4, or 0 when the bytes there are not UTF-8 (a stray continuation byte,
 * an overlong form, a surrogate, a code point above U+10FFFF, a cut
 * sequence). */
size_t hb_utf8_seq_len(const unsigned char *s, size_t n);

/* The current time in UTC as ISO 8601 ("2026-11-27T16:30:00Z"), the form
 * the profile database's run rows record; "" when the clock cannot be
 * read.  n >= 21 holds it whole. */
void hb_utc_iso_now(char *out, size_t n);

#endif
