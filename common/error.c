#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int hb_fail(struct hb_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void hb_error_prefix(struct hb_error *err, const char *fmt, ...)
{
	char old[sizeof(err->msg)];
	size_t n;
	va_list ap;

	if (!err)
		return;
	memcpy(old, err->msg, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* Append ": OLD", truncating the old message if the prefix is long. */
	n = strlen(err->msg);
	if (n + 2 < sizeof(err->msg)) {
		err->msg[n++] = ':';
		err->msg[n++] = ' ';
		old[sizeof(old) - 1 - n] = '\0';
		memcpy(err->msg + n, old, strlen(old) + 1);
	}
}

void hb_error_at_path(struct hb_error *err, const char *tmp, const char *path)
{
	char out[sizeof(err->msg)];
	size_t n = 0, lt;
	const char *p;

	if (!err || !tmp || !*tmp)
		return;
	lt = strlen(tmp);
	for (p = err->msg; *p && n + 1 < sizeof(out);) {
		if (strncmp(p, tmp, lt) == 0) {
			for (const char *q = path; *q && n + 1 < sizeof(out); q++)
				out[n++] = *q;
			p += lt;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	memcpy(err->msg, out, n + 1);
	if (!strstr(err->msg, path))
		hb_error_prefix(err, "%s", path);
}

void hb_error_clear(struct hb_error *err)
{
	if (!err)
		return;
	err->code = HB_OK;
	err->msg[0] = '\0';
}
