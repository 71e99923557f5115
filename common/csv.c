#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "input.h"
#include "strutil.h"

int hb_csv_open(struct hb_csv *c, const char *path, struct hb_error *err)
{
	memset(c, 0, sizeof(*c));
	hb_strlcpy(c->path, path, sizeof(c->path));
	c->f = hb_open_input(path, err);
	return c->f ? 0 : -1;
}

void hb_csv_close(struct hb_csv *c)
{
	if (c->f)
		fclose(c->f);
	free(c->buf);
	free(c->field);
	for (int i = 0; i < c->nheader; i++)
		free(c->header[i]);
	free(c->header);
	memset(c, 0, sizeof(*c));
}

static int push_field(struct hb_csv *c, char *p, struct hb_error *err)
{
	if (c->nfield == c->cap_field) {
		int ncap = c->cap_field ? 2 * c->cap_field : 16;
		char **nf = realloc(c->field, (size_t)ncap * sizeof(*nf));

		if (!nf)
			return hb_runtime_error(err, "%s:%ld: out of memory", c->path, c->line);
		c->field = nf;
		c->cap_field = ncap;
	}
	c->field[c->nfield++] = p;
	return 0;
}

/* Split c->buf (length n) into fields in place. */
static int split_line(struct hb_csv *c, size_t n, struct hb_error *err)
{
	char *p = c->buf, *end = c->buf + n;

	c->nfield = 0;
	for (;;) {
		char *start = p, *w;

		if (p < end && *p == '"') {
			w = start;
			p++;
			for (;;) {
				if (p >= end)
					return hb_input_error(err, "%s:%ld: unterminated quoted field", c->path, c->line);
				if (*p == '"') {
					if (p + 1 < end && p[1] == '"') {
						*w++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*w++ = *p++;
			}
			if (p < end && *p != ',')
				return hb_input_error(err, "%s:%ld: text after closing quote", c->path, c->line);
			*w = '\0';
		} else {
			while (p < end && *p != ',') {
				if (*p == '"')
					return hb_input_error(err, "%s:%ld: stray quote in unquoted field", c->path, c->line);
				p++;
			}
		}
		if (push_field(c, start, err) < 0)
			return -1;
		if (p >= end) {
			*p = '\0';
			return 0;
		}
		*p++ = '\0';
	}
}

/* One line into c->buf, its end of line kept; the length, 0 at end of file,
 * -1 on a NUL byte, a line longer than HB_CSV_MAX_LINE or a read error.
 * Reading stops at the first such byte, so /dev/zero or a binary file fail
 * at once instead of filling memory. */
static ssize_t read_line(struct hb_csv *c, struct hb_error *err)
{
	size_t n = 0;
	int ch;

	while ((ch = getc_unlocked(c->f)) != EOF) {
		if (n + 2 > c->cap) {
			size_t ncap = c->cap ? 2 * c->cap : 256;
			char *nb = realloc(c->buf, ncap);

			if (!nb)
				return hb_runtime_error(err, "%s:%ld: out of memory", c->path, c->line + 1);
			c->buf = nb;
			c->cap = ncap;
		}
		if (ch == '\0')
			return hb_input_error(err, "%s:%ld: binary data (NUL byte), expected a CSV text file", c->path,
					      c->line + 1);
		c->buf[n++] = (char)ch;
		if (ch == '\n')
			break;
		if (n > HB_CSV_MAX_LINE)
			return hb_input_error(err, "%s:%ld: line longer than %d bytes, expected a CSV text file",
					      c->path, c->line + 1, HB_CSV_MAX_LINE);
	}
	if (ferror(c->f))
		return hb_runtime_error(err, "%s:%ld: read error: %s", c->path, c->line + 1, strerror(errno));
	if (n > 0)
		c->buf[n] = '\0';
	return (ssize_t)n;
}

int hb_csv_next(struct hb_csv *c, struct hb_error *err)
{
	for (;;) {
		ssize_t n = read_line(c, err);

		if (n <= 0)
			return n < 0 ? -1 : 0;
		c->line++;
		/* A UTF-8 byte-order mark before the header is not part of its
		 * first name. */
		if (c->line == 1 && hb_utf8_bom_len(c->buf, (size_t)n)) {
			memmove(c->buf, c->buf + 3, (size_t)n - 2);
			n -= 3;
		}
		while (n > 0 && (c->buf[n - 1] == '\n' || c->buf[n - 1] == '\r'))
			c->buf[--n] = '\0';
		if (n == 0)
			continue;
		if (split_line(c, (size_t)n, err) < 0)
			return -1;
		return 1;
	}
}

int hb_csv_header(struct hb_csv *c, const char *const *required, int *idx, struct hb_error *err)
{
	int rc = hb_csv_next(c, err);

	if (rc < 0)
		return -1;
	if (rc == 0)
		return hb_input_error(err, "%s: empty file, expected a header line", c->path);
	c->header = calloc((size_t)c->nfield, sizeof(*c->header));
	if (!c->header)
		return hb_runtime_error(err, "%s: out of memory", c->path);
	for (int i = 0; i < c->nfield; i++) {
		c->header[i] = strdup(hb_trim(c->field[i]));
		if (!c->header[i])
			return hb_runtime_error(err, "%s: out of memory", c->path);
		c->nheader = i + 1;
	}
	for (int k = 0; required && required[k]; k++) {
		idx[k] = hb_csv_column(c, required[k]);
		if (idx[k] < 0)
			return hb_input_error(err, "%s:%ld: missing column '%s' in header", c->path, c->line, required[k]);
	}
	return 0;
}

int hb_csv_column(const struct hb_csv *c, const char *name)
{
	for (int i = 0; i < c->nheader; i++)
		if (strcmp(c->header[i], name) == 0)
			return i;
	return -1;
}

static const char *colname(const struct hb_csv *c, int col)
{
	return col >= 0 && col < c->nheader ? c->header[col] : "?";
}

int hb_csv_check_width(struct hb_csv *c, struct hb_error *err)
{
	if (c->nfield != c->nheader)
		return hb_input_error(err, "%s:%ld: expected %d fields, found %d", c->path, c->line,
				      c->nheader, c->nfield);
	return 0;
}

int hb_csv_str(struct hb_csv *c, int col, const char **out, struct hb_error *err)
{
	if (col < 0 || col >= c->nfield)
		return hb_input_error(err, "%s:%ld: field '%s': missing (row has %d fields)", c->path, c->line,
				      colname(c, col), c->nfield);
	*out = c->field[col];
	return 0;
}

int hb_csv_double(struct hb_csv *c, int col, double *out, struct hb_error *err)
{
	const char *s;

	if (hb_csv_str(c, col, &s, err) < 0)
		return -1;
	if (hb_parse_double(s, out) < 0)
		return hb_input_error(err, "%s:%ld: field '%s': value '%.64s' is not a number", c->path, c->line,
				      colname(c, col), s);
	return 0;
}

int hb_csv_long(struct hb_csv *c, int col, long *out, struct hb_error *err)
{
	const char *s;

	if (hb_csv_str(c, col, &s, err) < 0)
		return -1;
	if (hb_parse_long(s, out) < 0)
		return hb_input_error(err, "%s:%ld: field '%s': value '%.64s' is not an integer", c->path, c->line,
				      colname(c, col), s);
	return 0;
}

int hb_csv_double_range(struct hb_csv *c, int col, double lo, double hi, double *out, struct hb_error *err)
{
	if (hb_csv_double(c, col, out, err) < 0)
		return -1;
	if (*out < lo || *out > hi)
		return hb_input_error(err, "%s:%ld: field '%s': value '%s' out of range [%g, %g]", c->path, c->line,
				      colname(c, col), c->field[col], lo, hi);
	return 0;
}

int hb_csv_long_range(struct hb_csv *c, int col, long lo, long hi, long *out, struct hb_error *err)
{
	if (hb_csv_long(c, col, out, err) < 0)
		return -1;
	if (*out < lo || *out > hi)
		return hb_input_error(err, "%s:%ld: field '%s': value '%s' out of range [%ld, %ld]", c->path, c->line,
				      colname(c, col), c->field[col], lo, hi);
	return 0;
}

void hb_csv_put_int(FILE *f, long v)
{
	char d[24], *p = d + sizeof(d);
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (v < 0)
		*--p = '-';
	fwrite(p, 1, (size_t)(d + sizeof(d) - p), f);
}

void hb_csv_put_num(FILE *f, double v)
{
	char d[HB_FMT_G9_MAX];
	long long k;
	int n;

	if (!isfinite(v))
		return;
	v = hb_no_neg_zero(v, -1);
	/* a whole number under 1e9 is its digits under %.9g: a trace's
	 * jobs.csv holds a million (seconds, counts) */
	if (v > -1e9 && v < 1e9 && (double)(k = (long long)v) == v) {
		hb_csv_put_int(f, (long)k);
		return;
	}
	n = hb_fmt_g9(d, v);
	fwrite(d, 1, (size_t)n, f);
}

void hb_csv_put_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
	fputc('"', f);
}
