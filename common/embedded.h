/*
 * embedded.h: data files compiled into the binary (scripts/embed.py).
 * A table ends with an entry whose name is NULL.
 */
#ifndef HB_EMBEDDED_H
#define HB_EMBEDDED_H

#include <stddef.h>

struct hb_embedded {
	const char *name;  /* base name of the source file, e.g. "gpus.json" */
	const char *data;  /* file bytes, NUL-terminated */
	size_t len;        /* bytes, excluding the terminating NUL */
};

#endif
