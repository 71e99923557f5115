/*
 * error.h: the one error type of hetbatch.
 *
 * Every function that can fail returns 0 on success and -1 on failure, and
 * fills a caller-owned struct hb_error.  The message names the input the way a
 * user can find it: "FILE:LINE: field 'NAME': value 'VALUE': what is wrong".
 * The code says whether the user's input was at fault (exit 2) or the work
 * itself failed (exit 1); cli/ prints the message once and exits with it.
 */
#ifndef HB_ERROR_H
#define HB_ERROR_H

enum hb_code {
	HB_OK = 0,       /* no error */
	HB_ERUNTIME = 1, /* the work failed: I/O, SQLite, numerics, no solution */
	HB_EINPUT = 2,   /* bad usage or bad input data: fix the input and retry */
	HB_EINTR = 3,    /* stopped by SIGINT, SIGTERM or SIGHUP at a safe point (interrupt.h) */
};

struct hb_error {
	int code;        /* enum hb_code; HB_OK until something fails */
	char msg[1024];  /* one line, no trailing newline */
};

#if defined(__GNUC__)
#define HB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HB_PRINTF(a, b)
#endif

/* Fill err (if not NULL) and return -1, so callers can write
 * `return hb_fail(err, HB_EINPUT, "%s:%ld: ...", path, line);`. */
int hb_fail(struct hb_error *err, int code, const char *fmt, ...) HB_PRINTF(3, 4);

/* Shorthands for the two codes. */
#define hb_input_error(err, ...) hb_fail((err), HB_EINPUT, __VA_ARGS__)
#define hb_runtime_error(err, ...) hb_fail((err), HB_ERUNTIME, __VA_ARGS__)

/* Prefix an existing message with context ("while importing X: ..."). */
void hb_error_prefix(struct hb_error *err, const char *fmt, ...) HB_PRINTF(2, 3);

/* A failure while writing the temporary file tmp that becomes path: the
 * message names path, the file the user asked for, wherever it named tmp
 * (SQLite and stdio report the file they had open), and begins with
 * "path: " when it did not name it at all. */
void hb_error_at_path(struct hb_error *err, const char *tmp, const char *path);

void hb_error_clear(struct hb_error *err);

#endif
