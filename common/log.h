/*
 * log.h: leveled logging to a caller-chosen stream.
 *
 * There is no global logger: code that logs takes a `const struct hb_log *`,
 * and NULL means silent.  cli/ builds one from -v/-q and hands it down.
 */
#ifndef HB_LOG_H
#define HB_LOG_H

#include <stdio.h>
#include "error.h"

enum hb_log_level {
	HB_LOG_ERROR = 0, /* printed even with -q */
	HB_LOG_WARN = 1,  /* default threshold prints WARN and above */
	HB_LOG_INFO = 2,  /* -v */
	HB_LOG_DEBUG = 3, /* -vv */
};

struct hb_log {
	int level;  /* highest level printed */
	FILE *out;  /* usually stderr */
};

void hb_log(const struct hb_log *lg, int level, const char *fmt, ...) HB_PRINTF(3, 4);

#define hb_warn(lg, ...) hb_log((lg), HB_LOG_WARN, __VA_ARGS__)
#define hb_info(lg, ...) hb_log((lg), HB_LOG_INFO, __VA_ARGS__)
#define hb_debug(lg, ...) hb_log((lg), HB_LOG_DEBUG, __VA_ARGS__)

#endif
