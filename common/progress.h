/*
 * progress.h: a one-line progress bar on stderr for long work, or, where
 * stderr is not a terminal, a status line now and then.
 *
 * On a terminal it redraws one line at most ten times a second.  Elsewhere
 * (a CI log, a pipe, a batch job's file) a redrawn bar would be noise, and
 * nothing at all leaves a long run looking hung: there it prints a whole
 * status line once per period (HB_STATUS_PERIOD_S), the first only after a
 * period has passed, so short runs print nothing.  The mode (`--status-line`
 * in the CLI) chooses: auto as just said, always (status lines from the
 * start, on a terminal too, and a last line when the work ends), never.
 */
#ifndef HB_PROGRESS_H
#define HB_PROGRESS_H

#include <stdio.h>

/* When to show progress (hetbatch --status-line WHEN). */
enum hb_status_mode {
	HB_STATUS_AUTO = 0, /* a bar on a terminal; elsewhere a line per period after the first */
	HB_STATUS_NEVER,    /* nothing (also what -q asks for) */
	HB_STATUS_ALWAYS,   /* status lines from the start, terminal or not, and a last one at the end */
};

#define HB_STATUS_PERIOD_S 30.0 /* seconds between status lines, unless the caller says */

struct hb_progress {
	FILE *out;          /* stderr, or NULL when disabled */
	int lines;          /* 1: whole status lines (no terminal, or always), 0: the redrawn bar */
	int always;         /* HB_STATUS_ALWAYS: a line at once and a last one at the end */
	double period;      /* seconds between status lines */
	char label[48];     /* shown before the bar */
	double total;       /* units of work; <= 0 shows a counter only */
	double last_draw;   /* monotonic seconds of the last redraw */
	double started;     /* monotonic seconds at start */
	int drawn;          /* 1 once something was printed */
};

/* enabled = 0 forces it off (-q); otherwise HB_STATUS_AUTO with the default
 * period. */
void hb_progress_start(struct hb_progress *p, const char *label, double total, int enabled);
/* The same with a mode and a period in seconds (<= 0: every update). */
void hb_progress_start_mode(struct hb_progress *p, const char *label, double total, enum hb_status_mode mode,
			    double period_s);
/* "auto", "always" or "never" (any case); -1 for anything else. */
int hb_status_parse(const char *s, enum hb_status_mode *out);
/* The period of $HETBATCH_STATUS_SECONDS when set to a number >= 0, else
 * HB_STATUS_PERIOD_S; -1 if it is set to something else. */
#define HB_STATUS_PERIOD_ENV "HETBATCH_STATUS_SECONDS"
int hb_status_period_env(double *period_s);
void hb_progress_update(struct hb_progress *p, double done);
void hb_progress_finish(struct hb_progress *p);

/* Monotonic clock in seconds. */
double hb_now(void);

#endif
