/*
 * fuzz_trace.h: drive one trace reader over a fuzz input, with the options
 * that reach different code (attempt modes, origins, filters).
 */
#ifndef HB_FUZZ_TRACE_H
#define HB_FUZZ_TRACE_H

#include "fuzz_common.h"
#include "jobspec.h"

static inline void fuzz_read(const char *path, enum hb_trace_format fmt, const struct hb_trace_options *opt)
{
	struct hb_trace_reader *r = NULL;
	struct hb_jobspec j;
	struct hb_error err = { 0 };
	int rc;

	if (hb_trace_open(path, fmt, opt, &r, &err) < 0) {
		if (r || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		return;
	}
	while ((rc = hb_trace_next(r, &j, &err)) == 1) {
		/* What a reader returns must be usable as is. */
		if (j.gpus < 1 || !(j.arrival_s == j.arrival_s) || memchr(j.name, '\0', sizeof(j.name)) == NULL ||
		    memchr(j.model, '\0', sizeof(j.model)) == NULL)
			abort();
	}
	if (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n')))
		abort();
	if (hb_trace_get_stats(r)->max_buffer > (size_t)HB_TRACE_MAX_ELEMENT)
		abort();
	hb_trace_close(r);
}

/* Read path twice: defaults, then all attempts from the first record with
 * a window, a GPU range, a VC list and a job limit. */
static inline void fuzz_read_both(const char *path, enum hb_trace_format fmt)
{
	struct hb_trace_options o;

	fuzz_read(path, fmt, NULL);
	hb_trace_options_init(&o);
	o.attempts = HB_ATTEMPTS_ALL;
	o.origin = HB_ORIGIN_FIRST;
	o.from_s = -1e6;
	o.to_s = 1e9;
	o.min_gpus = 2;
	o.max_gpus = 64;
	o.max_jobs = 50;
	o.require_sorted = 1;
	snprintf(o.vc, sizeof(o.vc), "a,6214e9,11cb48");
	fuzz_read(path, fmt, &o);
}

#endif
