/*
 * jobspec_csv.c: hetbatch's own job-spec CSV (docs/jobspec.md).
 *
 *   name,arrival_s,model,gpus,batch,duration_s
 *   resnet-a,0,resnet50,4,0,3600
 *
 * name, arrival_s, model and gpus are required; batch, duration_s,
 * gpu_time_s, status, user, vc and EasyScale's gpu_type, d2 (0 or 1) and
 * epochs are optional columns, and an empty cell in an optional column
 * takes its default (batch 0 = the model's M0, duration 0 = none, gpu_time
 * = gpus x duration, gpu_type and d2 left to the policy, epochs the
 * model's).  Any other column is an
 * error, so a misspelt "duraton_s" is not silently ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "strutil.h"
#include "trace_priv.h"

enum { C_NAME, C_ARRIVAL, C_MODEL, C_GPUS, C_NREQ };

static const char *const optional_cols[] = { "batch", "duration_s", "gpu_time_s", "status", "user", "vc",
					     "gpu_type", "d2", "epochs", NULL };
enum { O_BATCH, O_DURATION, O_GPU_TIME, O_STATUS, O_USER, O_VC, O_GPU_TYPE, O_D2, O_EPOCHS, O_N };

struct jobspec_csv {
	struct hb_csv csv;
	int idx[C_NREQ];
	int opt[O_N];           /* column of each optional field, -1 if absent */
};

static void close_jcsv(void *state)
{
	struct jobspec_csv *p = state;

	hb_csv_close(&p->csv);
	free(p);
}

static int check_columns(struct jobspec_csv *p, struct hb_error *err)
{
	static const char *const req[] = { "name", "arrival_s", "model", "gpus", NULL };

	for (int i = 0; i < p->csv.nheader; i++) {
		const char *h = p->csv.header[i];
		char q[HB_QUOTE_MAX];
		int known = 0;

		for (int k = 0; req[k]; k++)
			known |= strcmp(h, req[k]) == 0;
		for (int k = 0; optional_cols[k]; k++)
			known |= strcmp(h, optional_cols[k]) == 0;
		if (!known)
			return hb_input_error(err,
					      "%s:%ld: unknown column '%s' (known: name, arrival_s, model, gpus, batch, "
					      "duration_s, gpu_time_s, status, user, vc, gpu_type, d2, epochs)",
					      p->csv.path, p->csv.line, hb_trace_quote(q, sizeof(q), h));
		for (int j = 0; j < i; j++)
			if (strcmp(h, p->csv.header[j]) == 0)
				return hb_input_error(err, "%s:%ld: column '%s' appears twice", p->csv.path,
						      p->csv.line, hb_trace_quote(q, sizeof(q), h));
	}
	return 0;
}

static int open_jcsv(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err)
{
	static const char *const cols[] = { "name", "arrival_s", "model", "gpus", NULL };
	struct jobspec_csv *p = calloc(1, sizeof(*p));

	(void)opt;
	*state = NULL;
	if (!p)
		return hb_runtime_error(err, "%s: out of memory", path);
	if (hb_csv_open(&p->csv, path, err) < 0 || hb_csv_header(&p->csv, cols, p->idx, err) < 0 ||
	    check_columns(p, err) < 0) {
		close_jcsv(p);
		return -1;
	}
	for (int k = 0; k < O_N; k++)
		p->opt[k] = hb_csv_column(&p->csv, optional_cols[k]);
	*state = p;
	return 0;
}

static void where_jcsv(const void *state, char *buf, size_t size)
{
	const struct jobspec_csv *p = state;

	snprintf(buf, size, "%s:%ld", p->csv.path, p->csv.line);
}

static size_t buffer_jcsv(const void *state)
{
	return ((const struct jobspec_csv *)state)->csv.cap;
}

/* An optional cell: 1 if present and not blank. */
static int present(const struct jobspec_csv *p, int k)
{
	return p->opt[k] >= 0 && hb_trim(p->csv.field[p->opt[k]])[0] != '\0';
}

static int next_jcsv(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct jobspec_csv *p = state;
	struct hb_csv *c = &p->csv;
	char where[1200];
	long gpus;
	int rc = hb_csv_next(c, err);

	if (rc <= 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%ld", c->path, c->line);
	if (hb_csv_check_width(c, err) < 0 ||
	    hb_trace_copy(job->name, sizeof(job->name), hb_trim(c->field[p->idx[C_NAME]]), 1, where, "name", err) < 0 ||
	    hb_csv_double_range(c, p->idx[C_ARRIVAL], 0.0, 1e12, &job->arrival_s, err) < 0 ||
	    hb_trace_copy(job->model, sizeof(job->model), hb_trim(c->field[p->idx[C_MODEL]]), 1, where, "model",
			  err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_GPUS], 1, 1000000, &gpus, err) < 0)
		return -1;
	job->gpus = (int)gpus;
	if (present(p, O_BATCH) && hb_csv_long_range(c, p->opt[O_BATCH], 0, 1L << 40, &job->batch, err) < 0)
		return -1;
	if (present(p, O_DURATION) &&
	    hb_csv_double_range(c, p->opt[O_DURATION], 0.0, 1e12, &job->duration_s, err) < 0)
		return -1;
	job->gpu_time_s = job->duration_s * job->gpus;
	if (present(p, O_GPU_TIME) &&
	    hb_csv_double_range(c, p->opt[O_GPU_TIME], 0.0, 1e18, &job->gpu_time_s, err) < 0)
		return -1;
	if ((p->opt[O_STATUS] >= 0 && hb_trace_copy(job->status, sizeof(job->status),
						    hb_trim(c->field[p->opt[O_STATUS]]), 0, where, "status", err) < 0) ||
	    (p->opt[O_USER] >= 0 &&
	     hb_trace_copy(job->user, sizeof(job->user), hb_trim(c->field[p->opt[O_USER]]), 0, where, "user", err) < 0) ||
	    (p->opt[O_VC] >= 0 &&
	     hb_trace_copy(job->vc, sizeof(job->vc), hb_trim(c->field[p->opt[O_VC]]), 0, where, "vc", err) < 0))
		return -1;
	if (p->opt[O_GPU_TYPE] >= 0 && hb_trace_copy(job->gpu_type, sizeof(job->gpu_type),
						      hb_trim(c->field[p->opt[O_GPU_TYPE]]), 0, where, "gpu_type", err) < 0)
		return -1;
	if (present(p, O_D2)) {
		long d2;

		if (hb_csv_long_range(c, p->opt[O_D2], 0, 1, &d2, err) < 0)
			return -1;
		job->d2 = d2 ? HB_D2_YES : HB_D2_NO;
	}
	if (present(p, O_EPOCHS) && hb_csv_double_range(c, p->opt[O_EPOCHS], 1e-9, 1e9, &job->epochs, err) < 0)
		return -1;
	job->record = c->line;
	*skip = HB_SKIP_NONE;
	return 1;
}

const struct hb_trace_ops hb_trace_jobspec_csv_ops = {
	.open = open_jcsv,
	.next = next_jcsv,
	.where = where_jcsv,
	.buffer = buffer_jcsv,
	.close = close_jcsv,
	.wallclock = 0,
};
