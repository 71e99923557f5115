/*
 * progress.h: a one-line progress bar on stderr for long work.
 *
 * It draws only when stderr is a terminal and the caller has not asked for
 * quiet, and redraws at most ten times a second, so it costs nothing in CI
 * logs or pipelines.
 */
#ifndef HB_PROGRESS_H
#define HB_PROGRESS_H

#include <stdio.h>

struct hb_progress {
	FILE *out;          /* stderr, or NULL when disabled */
	char label[48];     /* shown before the bar */
	double total;       /* units of work; <= 0 shows a counter only */
	double last_draw;   /* monotonic seconds of the last redraw */
	double started;     /* monotonic seconds at start */
	int drawn;          /* 1 once something was printed */
};

/* enabled = 0 forces it off (-q); otherwise it draws iff stderr is a tty. */
void hb_progress_start(struct hb_progress *p, const char *label, double total, int enabled);
void hb_progress_update(struct hb_progress *p, double done);
void hb_progress_finish(struct hb_progress *p);

/* Monotonic clock in seconds. */
double hb_now(void);

#endif
