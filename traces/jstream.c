/*
 * jstream.c: the element cutter behind the streaming JSON readers.
 *
 * A byte at a time through a 16 KiB buffer: the scanner's only job is to
 * find where one value ends, so it tracks string state, escapes and the
 * depth of {} and [] together; mismatched brackets are left for cJSON to
 * reject when it parses the element.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "json.h"
#include "jobspec.h"
#include "jstream.h"
#include "strutil.h"

#define ELEM_INITIAL 1024

int hb_jstream_open(struct hb_jstream *js, const char *path, int none_as_null, struct hb_error *err)
{
	memset(js, 0, sizeof(*js));
	hb_strlcpy(js->path, path, sizeof(js->path));
	js->line = 1;
	js->none_as_null = none_as_null;
	js->max_elem = (size_t)HB_TRACE_MAX_ELEMENT;
	js->f = hb_open_input(path, err); /* "is a directory", "no such file" */
	if (!js->f)
		return -1;
	return 0;
}

void hb_jstream_close(struct hb_jstream *js)
{
	if (js->f)
		fclose(js->f);
	free(js->elem);
	js->f = NULL;
	js->elem = NULL;
}

/* Make rbuf[rpos] valid: 1 if a byte is there, 0 at end of file, -1 on error. */
static int fill(struct hb_jstream *js)
{
	if (js->rpos < js->rlen)
		return 1;
	js->rpos = 0;
	js->rlen = fread(js->rbuf, 1, sizeof(js->rbuf), js->f);
	if (js->rlen > 0)
		return 1;
	return ferror(js->f) ? -1 : 0;
}

static int read_error(struct hb_jstream *js, struct hb_error *err)
{
	return hb_runtime_error(err, "%s:%ld: byte %lld: read error", js->path, js->line, js->offset);
}

/* Peek without skipping blanks: the byte, -1 at end, -2 on read error. */
static int peek_raw(struct hb_jstream *js)
{
	int rc = fill(js);

	if (rc < 0)
		return -2;
	return rc ? js->rbuf[js->rpos] : -1;
}

static void advance(struct hb_jstream *js)
{
	if (js->rbuf[js->rpos] == '\n')
		js->line++;
	js->rpos++;
	js->offset++;
}

static int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int hb_jstream_peek(struct hb_jstream *js)
{
	for (;;) {
		int c = peek_raw(js);

		if (c < 0)
			return -1;
		/* A UTF-8 byte-order mark at the very start is not content. */
		if (js->offset == 0 && c == 0xEF) {
			if (js->rlen >= 3 && js->rbuf[1] == 0xBB && js->rbuf[2] == 0xBF) {
				js->rpos += 3;
				js->offset += 3;
				continue;
			}
		}
		if (!is_blank(c))
			return c;
		advance(js);
	}
}

static void describe(int c, char *buf, size_t size)
{
	if (c < 0)
		snprintf(buf, size, "end of file");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", (unsigned)c);
}

int hb_jstream_expect(struct hb_jstream *js, char c, const char *context, struct hb_error *err)
{
	int got = hb_jstream_peek(js);
	char what[32];

	if (peek_raw(js) == -2)
		return read_error(js, err);
	if (got == (unsigned char)c) {
		advance(js);
		return 0;
	}
	describe(got, what, sizeof(what));
	return hb_input_error(err, "%s:%ld: byte %lld: expected '%c' %s, found %s%s", js->path, js->line, js->offset,
			      c, context, what, got < 0 ? " (truncated file?)" : "");
}

static int append(struct hb_jstream *js, int c, struct hb_error *err)
{
	if (js->elen + 1 >= js->ecap) {
		size_t ncap = js->ecap ? 2 * js->ecap : ELEM_INITIAL;
		char *n;

		if (js->elen + 1 >= js->max_elem)
			return hb_input_error(err,
					      "%s:%ld: byte %lld: element %ld (from line %ld) is longer than %zu bytes: "
					      "unbalanced brackets?",
					      js->path, js->elem_line, js->elem_offset, js->index, js->elem_line,
					      js->max_elem - 1);
		if (ncap > js->max_elem)
			ncap = js->max_elem;
		n = realloc(js->elem, ncap);
		if (!n)
			return hb_runtime_error(err, "%s: out of memory", js->path);
		js->elem = n;
		js->ecap = ncap;
	}
	if (c == 0)
		return hb_input_error(err, "%s:%ld: byte %lld: NUL byte in JSON text", js->path, js->line, js->offset);
	js->elem[js->elen++] = (char)c;
	return 0;
}

/* Append the next n buffered bytes to elem and consume them. */
static int take(struct hb_jstream *js, size_t n, struct hb_error *err)
{
	const unsigned char *src = js->rbuf + js->rpos, *nul = memchr(src, 0, n);

	if (nul) {
		/* Stop on the NUL so that the message points at it. */
		while (js->rbuf + js->rpos < nul)
			advance(js);
		return hb_input_error(err, "%s:%ld: byte %lld: NUL byte in JSON text", js->path, js->line, js->offset);
	}
	if (js->elen + n + 1 > js->ecap) {
		size_t ncap = js->ecap ? js->ecap : ELEM_INITIAL;
		char *e;

		if (js->elen + n + 1 > js->max_elem)
			return hb_input_error(err,
					      "%s:%ld: byte %lld: element %ld (from line %ld) is longer than %zu bytes: "
					      "unbalanced brackets?",
					      js->path, js->elem_line, js->elem_offset, js->index, js->elem_line,
					      js->max_elem - 1);
		while (ncap < js->elen + n + 1)
			ncap *= 2;
		if (ncap > js->max_elem)
			ncap = js->max_elem;
		e = realloc(js->elem, ncap);
		if (!e)
			return hb_runtime_error(err, "%s: out of memory", js->path);
		js->elem = e;
		js->ecap = ncap;
	}
	memcpy(js->elem + js->elen, src, n);
	js->elen += n;
	for (size_t i = 0; i < n; i++)
		js->line += src[i] == '\n';
	js->rpos += n;
	js->offset += (long long)n;
	return 0;
}

static int truncated(struct hb_jstream *js, struct hb_error *err)
{
	return hb_input_error(err,
			      "%s:%ld: byte %lld: truncated: element %ld starting at line %ld (byte %lld) is not "
			      "closed at the end of the file",
			      js->path, js->line, js->offset, js->index, js->elem_line, js->elem_offset);
}

/* Rewrite bare None words to null, outside strings. */
static void none_to_null(char *s, size_t n)
{
	int in_str = 0, esc = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == 'N' && i + 4 <= n && memcmp(s + i, "None", 4) == 0) {
			int before = i == 0 || !((s[i - 1] >= 'a' && s[i - 1] <= 'z') ||
						  (s[i - 1] >= 'A' && s[i - 1] <= 'Z') ||
						  (s[i - 1] >= '0' && s[i - 1] <= '9') || s[i - 1] == '_');
			int after = i + 4 == n || !((s[i + 4] >= 'a' && s[i + 4] <= 'z') ||
						    (s[i + 4] >= 'A' && s[i + 4] <= 'Z') ||
						    (s[i + 4] >= '0' && s[i + 4] <= '9') || s[i + 4] == '_');

			if (before && after)
				memcpy(s + i, "null", 4);
			i += 3;
		}
	}
}

int hb_jstream_cut(struct hb_jstream *js, struct hb_error *err)
{
	int c = hb_jstream_peek(js);
	char what[32];

	if (peek_raw(js) == -2)
		return read_error(js, err);
	js->elen = 0;
	js->elem_offset = js->offset;
	js->elem_line = js->line;
	js->index++;
	if (c == '{' || c == '[') {
		long depth = 0;
		int in_str = 0, esc = 0, done = 0;

		/* Scan what the read buffer holds in one tight loop, then copy
		 * the run: a call per byte would dominate on a large log. */
		while (!done) {
			int rc = fill(js);
			const unsigned char *b;
			size_t avail, i;

			if (rc < 0)
				return read_error(js, err);
			if (rc == 0)
				return truncated(js, err);
			b = js->rbuf + js->rpos;
			avail = js->rlen - js->rpos;
			for (i = 0; i < avail; i++) {
				unsigned char ch = b[i];

				if (in_str) {
					if (esc)
						esc = 0;
					else if (ch == '\\')
						esc = 1;
					else if (ch == '"')
						in_str = 0;
				} else if (ch == '"') {
					in_str = 1;
				} else if (ch == '{' || ch == '[') {
					depth++;
				} else if ((ch == '}' || ch == ']') && --depth == 0) {
					i++;
					done = 1;
					break;
				}
			}
			if (take(js, i, err) < 0)
				return -1;
		}
	} else if (c == '"') {
		int esc = 0;

		if (append(js, c, err) < 0)
			return -1;
		advance(js);
		for (;;) {
			c = peek_raw(js);
			if (c == -2)
				return read_error(js, err);
			if (c < 0)
				return truncated(js, err);
			if (append(js, c, err) < 0)
				return -1;
			advance(js);
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				break;
		}
	} else {
		for (;;) {
			c = peek_raw(js);
			if (c == -2)
				return read_error(js, err);
			if (c < 0 || is_blank(c) || c == ',' || c == ']' || c == '}' || c == ':' || c == '[' ||
			    c == '{' || c == '"')
				break;
			if (append(js, c, err) < 0)
				return -1;
			advance(js);
		}
		if (js->elen == 0) {
			describe(c, what, sizeof(what));
			return hb_input_error(err, "%s:%ld: byte %lld: expected a JSON value, found %s", js->path,
					      js->line, js->offset, what);
		}
	}
	js->elem[js->elen] = '\0';
	if (js->none_as_null)
		none_to_null(js->elem, js->elen);
	return 0;
}

int hb_jstream_array_open(struct hb_jstream *js, const char *context, struct hb_error *err)
{
	if (hb_jstream_expect(js, '[', context, err) < 0)
		return -1;
	js->first = 1;
	js->index = 0;
	return 0;
}

int hb_jstream_array_next(struct hb_jstream *js, struct hb_error *err)
{
	int c = hb_jstream_peek(js);

	if (peek_raw(js) == -2)
		return read_error(js, err);
	if (c < 0)
		return hb_input_error(err,
				      "%s:%ld: byte %lld: truncated: the array is not closed with ']' (after element %ld)",
				      js->path, js->line, js->offset, js->index);
	if (c == ']') {
		advance(js);
		return 0;
	}
	if (!js->first) {
		if (hb_jstream_expect(js, ',', "between array elements", err) < 0)
			return -1;
		c = hb_jstream_peek(js);
		if (c == ']')
			return hb_input_error(err, "%s:%ld: byte %lld: trailing ',' before ']' after element %ld",
					      js->path, js->line, js->offset, js->index);
		if (c < 0)
			return hb_input_error(err,
					      "%s:%ld: byte %lld: truncated: the array is not closed with ']' (after "
					      "element %ld)",
					      js->path, js->line, js->offset, js->index);
	}
	js->first = 0;
	if (hb_jstream_cut(js, err) < 0)
		return -1;
	return 1;
}

cJSON *hb_jstream_parse(struct hb_jstream *js, struct hb_error *err)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(js->elem, js->elen, &end, 0);
	long line = js->elem_line;
	char near[24];
	size_t k = 0;

	if (root) {
		char where[1200];

		/* a key twice in one object: cJSON keeps both, its getters the first */
		hb_jstream_where(js, where, sizeof(where));
		if (hb_json_check_unique(root, where, err) < 0) {
			cJSON_Delete(root);
			return NULL;
		}
		return root;
	}
	if (!end || end < js->elem || end > js->elem + js->elen)
		end = js->elem + js->elen;
	for (const char *p = js->elem; p < end; p++)
		if (*p == '\n')
			line++;
	/* Quote the bytes where parsing stopped, on one line. */
	for (const char *p = end; p < js->elem + js->elen && k < sizeof(near) - 1; p++)
		near[k++] = ((unsigned char)*p < 0x20 || *p == 0x7f) ? ' ' : *p;
	near[k] = '\0';
	hb_input_error(err, "%s:%ld: byte %lld: element %ld: invalid JSON near '%s'", js->path, line,
		       js->elem_offset + (long long)(end - js->elem), js->index, k ? near : "<end of element>");
	return NULL;
}

int hb_jstream_end(struct hb_jstream *js, struct hb_error *err)
{
	int c = hb_jstream_peek(js);
	char what[32];

	if (peek_raw(js) == -2)
		return read_error(js, err);
	if (c < 0)
		return 0;
	describe(c, what, sizeof(what));
	return hb_input_error(err, "%s:%ld: byte %lld: text after the end of the JSON document: %s", js->path,
			      js->line, js->offset, what);
}

void hb_jstream_where(const struct hb_jstream *js, char *buf, size_t size)
{
	snprintf(buf, size, "%s:%ld: byte %lld: element %ld", js->path, js->elem_line, js->elem_offset, js->index);
}
