/*
 * trace_priv.h: what the trace readers share (not public API).
 *
 * jobspec.c owns struct hb_trace_reader and everything common to all
 * formats: the origin of time, the filters, the skip counters, max_jobs.  A
 * format supplies a table of operations that yields raw records; it never
 * filters, so the origin pass sees every record.
 */
#ifndef HB_TRACE_PRIV_H
#define HB_TRACE_PRIV_H

#include <stddef.h>

#include "jobspec.h"

/* One format's reader.  `state` is whatever the format's open made. */
struct hb_trace_ops {
	/* Open a fresh state on path (called once for the stream, and once
	 * more for the origin pass); NULL for sources that are not files. */
	int (*open)(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err);
	/* Next raw record: 1 with *job filled and *skip set (HB_SKIP_NONE or a
	 * format-level reason; the arrival is filled even for skipped records),
	 * 0 at the end, -1 on error. */
	int (*next)(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err);
	/* Where the current record is, for messages: "FILE:LINE" or
	 * "FILE:LINE: byte N: element K". */
	void (*where)(const void *state, char *buf, size_t size);
	/* Largest record buffer held so far, bytes. */
	size_t (*buffer)(const void *state);
	void (*close)(void *state);
	int wallclock;  /* 1: arrival_s from next is Unix seconds and the origin applies */
};

/* The format tables (one per source file). */
extern const struct hb_trace_ops hb_trace_philly_log_ops;
extern const struct hb_trace_ops hb_trace_philly_csv_ops;
extern const struct hb_trace_ops hb_trace_pollux_workload_ops;
extern const struct hb_trace_ops hb_trace_easyscale_workload_ops;
extern const struct hb_trace_ops hb_trace_alibaba_openb_ops;
extern const struct hb_trace_ops hb_trace_jobspec_csv_ops;
extern const struct hb_trace_ops hb_trace_jobspec_json_ops;

/* Wrap an already-open state (the synthetic generator) in a reader; on
 * failure the state is closed with ops->close. */
int hb_trace_reader_wrap(enum hb_trace_format fmt, const struct hb_trace_ops *ops, void *state,
			 const char *name, const struct hb_trace_options *opt, struct hb_trace_reader **out,
			 struct hb_error *err);

/* A value as messages quote it: at most 40 bytes of s, control characters
 * escaped (\n, \xNN) so the message stays one line, "..." when cut. */
const char *hb_trace_quote(char *buf, size_t size, const char *s);
#define HB_QUOTE_MAX 200

/* The error of a bad field: "WHERE: field 'F': value 'V': WHY" (V quoted
 * as hb_trace_quote does); returns -1. */
int hb_trace_bad_field(const char *where, const char *field, const char *value, const char *why,
		       struct hb_error *err);

/* A node name from a cluster file (Philly's machine list, Alibaba's node
 * list): raw trimmed, lower-cased into out (HB_NAME_MAX bytes), letters and
 * digits first, then also '-', '_', '.'.  Fails naming where, field and the
 * value when it is empty, too long or has another character. */
int hb_trace_node_name(const char *raw, const char *field, char *out, const char *where, struct hb_error *err);

/* Copy a string field, failing (naming where and field) when it does not
 * fit, or when it is empty and `required`. */
int hb_trace_copy(char *dst, size_t size, const char *src, int required, const char *where, const char *field,
		  struct hb_error *err);

#endif
