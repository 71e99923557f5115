/*
 * input.c: opening and reading a user's input files (input.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"

FILE *hb_open_input(const char *path, struct hb_error *err)
{
	struct stat st;
	FILE *f;

	/* fopen succeeds on a directory (reads then fail with EISDIR), so
	 * ask first. */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		hb_input_error(err, "%s: is a directory, expected a file", path);
		return NULL;
	}
	f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT)
			hb_input_error(err, "%s: no such file", path);
		else
			hb_input_error(err, "%s: cannot open: %s", path, strerror(errno));
	}
	return f;
}

size_t hb_utf8_bom_len(const char *s, size_t n)
{
	return n >= 3 && memcmp(s, HB_UTF8_BOM, 3) == 0 ? 3 : 0;
}

/* The one whole-file reader: a text file (text: NUL bytes refused, a BOM
 * skipped) or any bytes, at most max_bytes, read no further than that. */
static int read_whole(const char *path, size_t max_bytes, int text, char **data, size_t *len,
		      struct hb_error *err)
{
	FILE *f = hb_open_input(path, err);
	char *buf = NULL;
	size_t n = 0, cap = 0, bom;

	if (!f)
		return -1;
	for (;;) {
		size_t got, want;
		const char *nul;

		if (cap - n < 65536) {
			char *nb;

			cap = cap ? cap * 2 : 131072;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				fclose(f);
				return hb_runtime_error(err, "%s: out of memory", path);
			}
			buf = nb;
		}
		/* Never read more than one byte past the limit. */
		want = cap - n;
		if (want > max_bytes + 1 - n)
			want = max_bytes + 1 - n;
		got = fread(buf + n, 1, want, f);
		if (text && (nul = memchr(buf + n, '\0', got)) != NULL) {
			size_t at = n + (size_t)(nul - (buf + n));

			free(buf);
			fclose(f);
			return hb_input_error(err, "%s: binary data (NUL byte at byte %zu), expected a text file", path,
					      at + 1);
		}
		n += got;
		if (n > max_bytes) {
			free(buf);
			fclose(f);
			return hb_input_error(err, "%s: larger than %zu bytes, more than a%s input of this kind holds",
					      path, max_bytes, text ? " text" : "n");
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(buf);
		fclose(f);
		return hb_runtime_error(err, "%s: read error: %s", path, strerror(e));
	}
	fclose(f);
	bom = text ? hb_utf8_bom_len(buf, n) : 0;
	if (bom)
		memmove(buf, buf + bom, n - bom);
	n -= bom;
	buf[n] = '\0';
	*data = buf;
	if (len)
		*len = n;
	return 0;
}

int hb_read_text_file(const char *path, size_t max_bytes, char **data, size_t *len, struct hb_error *err)
{
	return read_whole(path, max_bytes ? max_bytes : HB_TEXT_FILE_MAX, 1, data, len, err);
}

int hb_read_bytes_file(const char *path, size_t max_bytes, char **data, size_t *len, struct hb_error *err)
{
	return read_whole(path, max_bytes ? max_bytes : SIZE_MAX - 1, 0, data, len, err);
}
