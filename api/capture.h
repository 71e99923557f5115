/*
 * capture.h: what a subcommand prints, caught while it runs inside a
 * program that embeds hetbatch (api/hetbatch.c).
 *
 * The commands print with stdio on stdout and stderr.  glibc's stdout and
 * stderr are variables a program may assign (the GNU C Library manual,
 * "Standard Streams"), so for the length of one call they point at memory
 * streams (open_memstream) and are put back afterwards: the process's file
 * descriptors 1 and 2 are never touched, so what the embedding program
 * itself writes meanwhile (Python's sys.stdout) is not caught.  The
 * signal handlers of SIGINT, SIGTERM and SIGHUP, which a command may
 * install (interrupt.h), are saved and put back the same way.  The caller
 * holds a lock across begin..end: the streams are process-wide.
 */
#ifndef HB_CAPTURE_H
#define HB_CAPTURE_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

struct hb_capture {
	char *out;        /* what was printed on stdout, NUL-terminated (malloc'd), or NULL */
	size_t out_len;   /* its length in bytes */
	char *err;        /* what was printed on stderr, NUL-terminated (malloc'd), or NULL */
	size_t err_len;   /* its length in bytes */
	FILE *fout, *ferr;           /* the memory streams while a call runs */
	FILE *saved_out, *saved_err; /* the process's stdout and stderr meanwhile */
};

/* The three signals' handlers before the call. */
struct hb_signals {
	struct sigaction old[3]; /* SIGINT, SIGTERM, SIGHUP */
};

/* Free the last call's text (cap may be reused or dropped afterwards). */
void hb_capture_free(struct hb_capture *cap);

/* Start catching: frees the last text, saves the handlers in sig, points
 * stdout and stderr at memory.  -1 (HB_ERUNTIME) when a stream cannot be
 * made; nothing is changed then. */
int hb_capture_begin(struct hb_capture *cap, struct hb_signals *sig, struct hb_error *err);

/* Stop: the streams and handlers are put back, cap->out and cap->err hold
 * what was printed. */
void hb_capture_end(struct hb_capture *cap, const struct hb_signals *sig);

/* Replace cap's output text by a copy of text (for a call that prints
 * nothing but returns a string); -1 when out of memory. */
int hb_capture_set_output(struct hb_capture *cap, const char *text, struct hb_error *err);

#endif
