#include <stdarg.h>

#include "log.h"

static const char *level_name[] = { "error", "warning", "info", "debug" };

void hb_log(const struct hb_log *lg, int level, const char *fmt, ...)
{
	va_list ap;

	if (!lg || !lg->out || level > lg->level)
		return;
	if (level < HB_LOG_ERROR)
		level = HB_LOG_ERROR;
	if (level > HB_LOG_DEBUG)
		level = HB_LOG_DEBUG;
	fprintf(lg->out, "hetbatch: %s: ", level_name[level]);
	va_start(ap, fmt);
	vfprintf(lg->out, fmt, ap);
	va_end(ap);
	fputc('\n', lg->out);
}
