/*
 * pollux_workload.c: Pollux's workload CSVs (artifact workloads/workload-N.csv,
 * pollux.md 5.2 and 5.4).
 *
 *   name,time,application,num_replicas,batch_size
 *   cifar10-0,107,cifar10,6,2048
 *
 * time is seconds from the start of the 8-hour window; application is one
 * of the six Table 1 workloads, named as the catalog names its Pollux
 * models (imagenet, yolov3, deepspeech2, bert, cifar10, ncf); num_replicas
 * and batch_size are the TunedJobs configuration given to the baselines.
 * The file has no duration: the simulator runs each job to its progress
 * target.
 */
#include <stdio.h>
#include <stdlib.h>

#include "csv.h"
#include "strutil.h"
#include "trace_priv.h"

enum { C_NAME, C_TIME, C_APP, C_REPLICAS, C_BATCH, C_N };

struct pollux_wl {
	struct hb_csv csv;
	int idx[C_N];
};

static void close_wl(void *state)
{
	struct pollux_wl *p = state;

	hb_csv_close(&p->csv);
	free(p);
}

static int open_wl(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err)
{
	static const char *const cols[] = { "name", "time", "application", "num_replicas", "batch_size", NULL };
	struct pollux_wl *p = calloc(1, sizeof(*p));

	(void)opt;
	*state = NULL;
	if (!p)
		return hb_runtime_error(err, "%s: out of memory", path);
	if (hb_csv_open(&p->csv, path, err) < 0 || hb_csv_header(&p->csv, cols, p->idx, err) < 0) {
		close_wl(p);
		return -1;
	}
	*state = p;
	return 0;
}

static void where_wl(const void *state, char *buf, size_t size)
{
	const struct pollux_wl *p = state;

	snprintf(buf, size, "%s:%ld", p->csv.path, p->csv.line);
}

static size_t buffer_wl(const void *state)
{
	return ((const struct pollux_wl *)state)->csv.cap;
}

static int next_wl(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct pollux_wl *p = state;
	struct hb_csv *c = &p->csv;
	char where[1200];
	long gpus;
	int rc = hb_csv_next(c, err);

	if (rc <= 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%ld", c->path, c->line);
	if (hb_csv_check_width(c, err) < 0 ||
	    hb_trace_copy(job->name, sizeof(job->name), hb_trim(c->field[p->idx[C_NAME]]), 1, where, "name", err) < 0 ||
	    hb_csv_double_range(c, p->idx[C_TIME], 0.0, 1e12, &job->arrival_s, err) < 0 ||
	    hb_trace_copy(job->model, sizeof(job->model), hb_trim(c->field[p->idx[C_APP]]), 1, where, "application",
			  err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_REPLICAS], 1, 1000000, &gpus, err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_BATCH], 0, 1L << 40, &job->batch, err) < 0)
		return -1;
	job->gpus = (int)gpus;
	job->record = c->line;
	*skip = HB_SKIP_NONE;
	return 1;
}

const struct hb_trace_ops hb_trace_pollux_workload_ops = {
	.open = open_wl,
	.next = next_wl,
	.where = where_wl,
	.buffer = buffer_wl,
	.close = close_wl,
	.wallclock = 0,
};
