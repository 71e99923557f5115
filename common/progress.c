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

void hb_progress_start(struct hb_progress *p, const char *label, double total, int enabled)
{
	memset(p, 0, sizeof(*p));
	p->out = enabled && isatty(STDERR_FILENO) ? stderr : NULL;
	hb_strlcpy(p->label, label, sizeof(p->label));
	p->total = total;
	p->started = hb_now();
	p->last_draw = -1.0;
}

void hb_progress_update(struct hb_progress *p, double done)
{
	double now;
	char bar[31];
	int fill;

	if (!p->out)
		return;
	now = hb_now();
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
	if (p->out && p->drawn) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	}
	p->drawn = 0;
}
