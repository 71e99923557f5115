/*
 * jstream.h: cut a large JSON document into its elements, one at a time.
 *
 * The Philly job log is one JSON array of 117,325 objects (hundreds of MB).
 * Rather than parse it whole, a small scanner reads the file through a fixed
 * buffer, tracks bracket depth (respecting strings and escapes) and copies
 * exactly one value at a time into a growing element buffer, which cJSON
 * then parses.  Memory is the read buffer plus the largest element.
 *
 * The scanner does not validate JSON: it only finds where a value ends.
 * cJSON validates the element, and its error position is mapped back to the
 * file's line and byte offset.
 *
 * Philly writes Python's `None` for a missing time.  With none_as_null the
 * bare word None (outside strings) becomes null in the element buffer; both
 * are four bytes, so offsets do not move.
 */
#ifndef HB_JSTREAM_H
#define HB_JSTREAM_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "error.h"

#define HB_JSTREAM_READ 16384

struct hb_jstream {
	FILE *f;                    /* the open file */
	char path[1024];            /* for messages */
	unsigned char rbuf[HB_JSTREAM_READ]; /* read buffer */
	size_t rpos, rlen;          /* next unread byte, bytes in rbuf */
	long long offset;           /* file offset of rbuf[rpos] */
	long line;                  /* 1-based line of rbuf[rpos] */
	int none_as_null;           /* rewrite bare None to null in elements */
	char *elem;                 /* the current element, NUL-terminated */
	size_t elen;                /* its length */
	size_t ecap;                /* allocated size of elem: the reader's memory */
	size_t max_elem;            /* longest element allowed, bytes */
	long long elem_offset;      /* file offset of the element's first byte */
	long elem_line;             /* line of the element's first byte */
	long index;                 /* 1-based index of the current element (within its array) */
	int first;                  /* inside an array: 1 until the first element is cut */
};

int hb_jstream_open(struct hb_jstream *js, const char *path, int none_as_null, struct hb_error *err);
void hb_jstream_close(struct hb_jstream *js);

/* Skip blanks and return the next byte without consuming it (-1 at end). */
int hb_jstream_peek(struct hb_jstream *js);

/* Skip blanks, then consume `c` or fail: "FILE:LINE: byte N: expected 'c' CONTEXT, found ...". */
int hb_jstream_expect(struct hb_jstream *js, char c, const char *context, struct hb_error *err);

/* Cut the next value (object, array, string, number, word) into elem. */
int hb_jstream_cut(struct hb_jstream *js, struct hb_error *err);

/* Consume the '[' that opens an array whose elements follow. */
int hb_jstream_array_open(struct hb_jstream *js, const char *context, struct hb_error *err);

/* After hb_jstream_array_open: 1 with the next element in elem, 0
 * once its ']' was consumed, -1 on error (a missing ',', a trailing comma,
 * end of file: "truncated"). */
int hb_jstream_array_next(struct hb_jstream *js, struct hb_error *err);

/* Parse elem; on error the message names the line and byte of the fault. */
cJSON *hb_jstream_parse(struct hb_jstream *js, struct hb_error *err);

/* Require nothing but blanks until the end of the file. */
int hb_jstream_end(struct hb_jstream *js, struct hb_error *err);

/* "FILE:LINE: byte N: element K" for the current element. */
void hb_jstream_where(const struct hb_jstream *js, char *buf, size_t size);

#endif
