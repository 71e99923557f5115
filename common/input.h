/*
 * input.h: opening and reading the files a user names on the command line.
 *
 * Every file argument (--trace, --cluster FILE, --replay, sweep specs,
 * forecast and import files, plans) goes through hb_open_input or
 * hb_read_text_file, so a wrong path gets the same message everywhere:
 *
 *   "runs/: is a directory, expected a file"
 *   "trace.csv: no such file"
 *   "secret.csv: cannot open: Permission denied"
 *
 * all input errors (exit 2).  Text readers also refuse what is not text
 * (a NUL byte: /dev/zero, a binary file) and what is larger than they can
 * use, instead of reading until memory runs out, and skip a UTF-8
 * byte-order mark at the start (editors on Windows write one).
 */
#ifndef HB_INPUT_H
#define HB_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* The largest whole text file hb_read_text_file accepts by default: JSON
 * catalogs, plans and sweep specs are kilobytes, imported artifact files a
 * few MiB. */
#define HB_TEXT_FILE_MAX ((size_t)256 << 20)

/* The three bytes of a UTF-8 byte-order mark. */
#define HB_UTF8_BOM "\xEF\xBB\xBF"

/* fopen(path, "rb") for reading a user's file; NULL with an input error
 * naming path ("is a directory", "no such file", or the system's reason). */
FILE *hb_open_input(const char *path, struct hb_error *err);

/* Read a whole text file into a NUL-terminated malloc'd buffer, without a
 * leading UTF-8 byte-order mark.  Fails (input error naming path) on a
 * directory or missing file, a NUL byte ("binary data at byte N"), or more
 * than max_bytes (0: HB_TEXT_FILE_MAX), read no further than that. */
int hb_read_text_file(const char *path, size_t max_bytes, char **data, size_t *len, struct hb_error *err);

/* hb_read_text_file for any bytes: no NUL or byte-order-mark handling, at
 * most max_bytes (0: no limit); the buffer is NUL-terminated all the same.
 * hb_read_file (fileio.h) is this without a limit. */
int hb_read_bytes_file(const char *path, size_t max_bytes, char **data, size_t *len, struct hb_error *err);

/* Length of a UTF-8 byte-order mark at the start of s (3 or 0). */
size_t hb_utf8_bom_len(const char *s, size_t n);

#endif
