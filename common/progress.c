#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "strutil.h"

double hb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void hb_progress_start_mode(struct hb_progress *p, const char *label, double total, enum hb_status_mode mode,
			    double period_s)
{
	int tty = isatty(STDERR_FILENO);

	memset(p, 0, sizeof(*p));
	p->out = mode == HB_STATUS_NEVER ? NULL : stderr;
	p->lines = mode == HB_STATUS_ALWAYS || !tty;
	p->always = mode == HB_STATUS_ALWAYS;
	p->period = period_s > 0 ? period_s : 0.0;
	hb_strlcpy(p->label, label, sizeof(p->label));
	p->total = total;
	p->started = hb_now();
	/* auto without a terminal: the first line after a whole period */
	p->last_draw = p->always ? -1.0 : p->started;
}

void hb_progress_start(struct hb_progress *p, const char *label, double total, int enabled)
{
	hb_progress_start_mode(p, label, total, enabled ? HB_STATUS_AUTO : HB_STATUS_NEVER, HB_STATUS_PERIOD_S);
}

int hb_status_parse(const char *s, enum hb_status_mode *out)
{
	if (hb_strcaseeq(s, "auto"))
		*out = HB_STATUS_AUTO;
	else if (hb_strcaseeq(s, "always"))
		*out = HB_STATUS_ALWAYS;
	else if (hb_strcaseeq(s, "never"))
		*out = HB_STATUS_NEVER;
	else
		return -1;
	return 0;
}

int hb_status_period_env(double *period_s)
{
	const char *v = getenv(HB_STATUS_PERIOD_ENV);

	*period_s = HB_STATUS_PERIOD_S;
	if (!v || !*v)
		return 0;
	if (hb_parse_double(v, period_s) < 0 || *period_s < 0) {
		*period_s = HB_STATUS_PERIOD_S;
		return -1;
	}
	return 0;
}

/* One whole status line: "LABEL: 3 of 8, 37.5 %, 62 s elapsed, about 103 s left". */
static void status_line(struct hb_progress *p, double done, double now)
{
	double el = now - p->started;

	if (p->total <= 0) {
		fprintf(p->out, "%s: %.0f done, %.0f s elapsed\n", p->label, done, el);
	} else {
		double frac = done / p->total;

		fprintf(p->out, "%s: ", p->label);
		if (p->total > 1)
			fprintf(p->out, "%.0f of %.0f, ", done, p->total);
		fprintf(p->out, "%.1f %%, %.0f s elapsed", 100.0 * frac, el);
		/* a forecast only once it means something */
		if (frac > 0.01 && frac < 1)
			fprintf(p->out, ", about %.0f s left", el * (1 - frac) / frac);
		fputc('\n', p->out);
	}
	fflush(p->out);
}

void hb_progress_update(struct hb_progress *p, double done)
{
	double now;
	char bar[31];
	int fill;

	if (!p->out)
		return;
	now = hb_now();
	if (p->lines) {
		if (p->last_draw >= 0 && now - p->last_draw < p->period)
			return;
		p->last_draw = now;
		p->drawn = 1;
		status_line(p, done, now);
		return;
	}
	if (p->last_draw >= 0 && now - p->last_draw < 0.1)
		return;
	p->last_draw = now;
	p->drawn = 1;
	if (p->total <= 0) {
		fprintf(p->out, "\r%s: %.0f (%.1f s)", p->label, done, now - p->started);
		fflush(p->out);
		return;
	}
	fill = (int)(30.0 * done / p->total);
	if (fill < 0)
		fill = 0;
	if (fill > 30)
		fill = 30;
	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '.', (size_t)(30 - fill));
	bar[30] = '\0';
	fprintf(p->out, "\r%s [%s] %5.1f%% (%.1f s)", p->label, bar, 100.0 * done / p->total, now - p->started);
	fflush(p->out);
}

void hb_progress_finish(struct hb_progress *p)
{
	if (p->out && p->lines) {
		/* the end, where a line said the work was going on (or always) */
		if (p->drawn || p->always)
			fprintf(p->out, "%s: ended after %.1f s\n", p->label, hb_now() - p->started);
		fflush(p->out);
		p->drawn = 0;
		return;
	}
	if (p->out && p->drawn) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	}
	p->drawn = 0;
}
