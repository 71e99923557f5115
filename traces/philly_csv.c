/*
 * philly_csv.c: Pollux's derived philly.csv (pollux.md 5.2).
 *
 *   timestamp,duration,num_gpus,gpu_time,cluster
 *   2017-10-09 07:01:55,66.0,1,66.0,11cb48
 *
 * One row per job: submission time, run time (s), GPUs, GPU-seconds and the
 * virtual cluster.  The rows are not sorted by time (the first row is
 * 2017-10-09, the earliest 2017-09-04), which is why the default origin is
 * the earliest row rather than the first.  The file names no model: leave
 * it empty, or let hb_trace_assign_model() pick one by GPU-time class.
 * `cluster` is optional (stored as vc); a row with 0 GPUs is skipped.
 */
#include <stdio.h>
#include <stdlib.h>

#include "csv.h"
#include "strutil.h"
#include "trace_priv.h"

enum { C_TIMESTAMP, C_DURATION, C_GPUS, C_GPU_TIME, C_N };

struct philly_csv {
	struct hb_csv csv;
	int idx[C_N];
	int cluster;            /* column of `cluster`, -1 if absent */
};

static void close_pcsv(void *state)
{
	struct philly_csv *p = state;

	hb_csv_close(&p->csv);
	free(p);
}

static int open_pcsv(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err)
{
	static const char *const cols[] = { "timestamp", "duration", "num_gpus", "gpu_time", NULL };
	struct philly_csv *p = calloc(1, sizeof(*p));

	(void)opt;
	*state = NULL;
	if (!p)
		return hb_runtime_error(err, "%s: out of memory", path);
	if (hb_csv_open(&p->csv, path, err) < 0 || hb_csv_header(&p->csv, cols, p->idx, err) < 0) {
		close_pcsv(p);
		return -1;
	}
	p->cluster = hb_csv_column(&p->csv, "cluster");
	*state = p;
	return 0;
}

static void where_pcsv(const void *state, char *buf, size_t size)
{
	const struct philly_csv *p = state;

	snprintf(buf, size, "%s:%ld", p->csv.path, p->csv.line);
}

static size_t buffer_pcsv(const void *state)
{
	return ((const struct philly_csv *)state)->csv.cap;
}

static int next_pcsv(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct philly_csv *p = state;
	struct hb_csv *c = &p->csv;
	const char *ts;
	char where[1200];
	long gpus;
	int rc = hb_csv_next(c, err);

	if (rc <= 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%ld", c->path, c->line);
	if (hb_csv_check_width(c, err) < 0 || hb_csv_str(c, p->idx[C_TIMESTAMP], &ts, err) < 0)
		return -1;
	if (hb_trace_parse_time(ts, &job->arrival_s) < 0) {
		char q[HB_QUOTE_MAX];

		return hb_input_error(err, "%s: field 'timestamp': value '%s': expected \"YYYY-MM-DD HH:MM:SS\"", where,
				      hb_trace_quote(q, sizeof(q), ts));
	}
	if (!hb_trace_time_plausible(job->arrival_s)) {
		char q[HB_QUOTE_MAX];

		return hb_input_error(err, "%s: field 'timestamp': value '%s': not a date between %d and %d", where,
				      hb_trace_quote(q, sizeof(q), ts), HB_TRACE_YEAR_MIN, HB_TRACE_YEAR_MAX);
	}
	if (hb_csv_double_range(c, p->idx[C_DURATION], 0.0, 1e12, &job->duration_s, err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_GPUS], 0, 1000000, &gpus, err) < 0 ||
	    hb_csv_double_range(c, p->idx[C_GPU_TIME], 0.0, 1e18, &job->gpu_time_s, err) < 0)
		return -1;
	if (p->cluster >= 0) {
		const char *vc;

		if (hb_csv_str(c, p->cluster, &vc, err) < 0 ||
		    hb_trace_copy(job->vc, sizeof(job->vc), hb_trim((char *)vc), 0, where, "cluster", err) < 0)
			return -1;
	}
	snprintf(job->name, sizeof(job->name), "philly-%ld", c->line);
	job->gpus = (int)gpus;
	job->record = c->line;
	*skip = gpus == 0 ? HB_SKIP_NO_GPUS : HB_SKIP_NONE;
	return 1;
}

const struct hb_trace_ops hb_trace_philly_csv_ops = {
	.open = open_pcsv,
	.next = next_pcsv,
	.where = where_pcsv,
	.buffer = buffer_pcsv,
	.close = close_pcsv,
	.wallclock = 1,
};
