/*
 * csv.h: a line-numbered CSV reader for importers and trace readers.
 *
 * Comma-separated, optional double quotes around a field ("" is a quote),
 * CRLF or LF line ends, blank lines skipped, a UTF-8 byte-order mark at the
 * start ignored.  A quoted field may not span lines.  A line longer than
 * HB_CSV_MAX_LINE or a NUL byte (a binary file, /dev/zero) is an error
 * naming the file and line, found without reading further.  Typed getters report "FILE:LINE: field 'NAME': value 'V': reason",
 * which is the error format the whole tool uses for tabular input.
 *
 * Usage:
 *   struct hb_csv c;
 *   static const char *const cols[] = { "placement", "local_bsz", NULL };
 *   int idx[2];
 *   hb_csv_open(&c, path, err);  hb_csv_header(&c, cols, idx, err);
 *   while ((rc = hb_csv_next(&c, err)) == 1) { hb_csv_long(&c, idx[1], &bs, err); ... }
 *   hb_csv_close(&c);
 */
#ifndef HB_CSV_H
#define HB_CSV_H

#include <stdio.h>

#include "error.h"

/* The longest line accepted, in bytes: a Philly or Pollux row is under
 * 1 KiB; anything near this is not a CSV file this tool reads. */
#define HB_CSV_MAX_LINE (1 << 20)

struct hb_csv {
	FILE *f;           /* the open file, or NULL */
	char path[1024];   /* for messages */
	long line;         /* 1-based number of the current row's line */
	char *buf;         /* current line, split in place into fields */
	size_t cap;        /* buf size */
	char **field;      /* the current row's fields */
	int nfield;        /* number of fields in the current row */
	int cap_field;     /* capacity of field[] */
	char **header;     /* header names (owned copies) after hb_csv_header */
	int nheader;
};

int hb_csv_open(struct hb_csv *c, const char *path, struct hb_error *err);
void hb_csv_close(struct hb_csv *c);

/* Read the next non-blank row: 1 if a row was read, 0 at end of file, -1 on
 * a malformed line (unterminated quote, NUL byte). */
int hb_csv_next(struct hb_csv *c, struct hb_error *err);

/* Read the header row and find each required column (NULL-terminated list);
 * idx[i] receives the position of required[i].  Columns may come in any
 * order and extra columns are allowed.  Fails naming the missing column. */
int hb_csv_header(struct hb_csv *c, const char *const *required, int *idx, struct hb_error *err);

/* Column position by name after hb_csv_header, or -1. */
int hb_csv_column(const struct hb_csv *c, const char *name);

/* Typed access to the current row; fail if the row is short or the value
 * does not parse.  The column's header name is used in messages. */
int hb_csv_str(struct hb_csv *c, int col, const char **out, struct hb_error *err);
int hb_csv_double(struct hb_csv *c, int col, double *out, struct hb_error *err);
int hb_csv_long(struct hb_csv *c, int col, long *out, struct hb_error *err);
/* Also require lo <= value <= hi. */
int hb_csv_double_range(struct hb_csv *c, int col, double lo, double hi, double *out, struct hb_error *err);
int hb_csv_long_range(struct hb_csv *c, int col, long lo, long hi, long *out, struct hb_error *err);

/* Require exactly as many fields as the header has. */
int hb_csv_check_width(struct hb_csv *c, struct hb_error *err);

/* ---- writing ------------------------------------------------------------ */

/* A number in a result file: 9 significant digits (ms on a 10-day run, 1e-9
 * of a dollar amount), a negative zero as 0; nothing (an empty field) when
 * not finite. */
void hb_csv_put_num(FILE *f, double v);
/* An integer, as "%ld" prints it (without printf: a trace's jobs.csv has
 * a million). */
void hb_csv_put_int(FILE *f, long v);
/* A text field, quoted when it holds a comma, quote or line break (quotes
 * doubled); line breaks become spaces since hetbatch's reader takes no field
 * across lines. */
void hb_csv_put_str(FILE *f, const char *s);

#endif
