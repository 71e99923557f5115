/*
 * easyscale_workload.c: EasyScale's trace-experiment workloads, in the
 * format its artifact's simulator reads (sUntvoOk/EasyScale_info_for_SC23,
 * simulator/simulator.py Cluster.__init__, applications.py APPLICATIONS):
 *
 *   name,time,application,max_parallelism,batch_size,epochs,enable_heterogeneous_deterministic,preferred_gpu
 *   bert-3,212,bert,32,8,40,1,v100
 *
 * time is the submission in seconds; application one of the artifact's
 * eight (below); max_parallelism is maxP (the job's ESTs); batch_size the
 * per-EST batch, so the job's global batch is max_parallelism x
 * batch_size; epochs are passes over the artifact's datasets scaled to
 * 1 % (APPLICATIONS: dataset_len = 0.01 x the full set), so the spec's
 * epochs (passes over the catalog's full dataset) are epochs / 100;
 * enable_heterogeneous_deterministic is read as Python's bool() of the
 * integer pandas reads (any nonzero value allows D2: the artifact's one
 * row with "40" counts as 1); preferred_gpu is v100, p100 or t4 (the
 * artifact's V100 is the 32 GB one).  Extra columns are ignored.
 *
 * Applications the catalog lacks run as the catalog model of their kind:
 * vgg19 and shufflenetv2 as resnet50 (ImageNet CNNs), swintransformer as
 * vit (ImageNet transformer), electra as bert (ELECTRA-base is
 * BERT-base's architecture, SQuAD both).  The catalog's dataset sizes are
 * the artifact's within 0.1 % (ImageNet 1,281,167 for 1,280,000; NCF
 * 4,971,008 for 4,970,845; YOLOv3 and SQuAD equal).
 *
 * A name given twice is not an error here: the artifact's OrderedDict
 * keeps the first row's place with the later row's values, and the replay
 * does the same (replay.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "strutil.h"
#include "trace_priv.h"

enum { C_NAME, C_TIME, C_APP, C_MAXP, C_BATCH, C_EPOCHS, C_D2, C_GPU, C_N };

static const struct {
	const char *app, *model;
} apps[] = {
	{ "resnet50", "resnet50" }, { "vgg19", "resnet50" }, { "shufflenetv2", "resnet50" },
	{ "swintransformer", "vit" }, { "yolov3", "yolov3" }, { "bert", "bert" },
	{ "electra", "bert" },        { "ncf", "ncf" },
};

static const struct {
	const char *gpu, *catalog;
} gpus[] = { { "v100", "v100-32gb" }, { "p100", "p100" }, { "t4", "t4" } };

struct es_wl {
	struct hb_csv csv;
	int idx[C_N];
};

static void close_wl(void *state)
{
	struct es_wl *p = state;

	hb_csv_close(&p->csv);
	free(p);
}

static int open_wl(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err)
{
	static const char *const cols[] = { "name",       "time",   "application",
					    "max_parallelism", "batch_size", "epochs",
					    "enable_heterogeneous_deterministic", "preferred_gpu", NULL };
	struct es_wl *p = calloc(1, sizeof(*p));

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
	const struct es_wl *p = state;

	snprintf(buf, size, "%s:%ld", p->csv.path, p->csv.line);
}

static size_t buffer_wl(const void *state)
{
	return ((const struct es_wl *)state)->csv.cap;
}


static int next_wl(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct es_wl *p = state;
	struct hb_csv *c = &p->csv;
	char where[1200];
	const char *app, *gpu, *d2;
	long maxp, b, flag;
	double epochs;
	char *end;
	int k;
	int rc = hb_csv_next(c, err);

	if (rc <= 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%ld", c->path, c->line);
	if (hb_csv_check_width(c, err) < 0 ||
	    hb_trace_copy(job->name, sizeof(job->name), hb_trim(c->field[p->idx[C_NAME]]), 1, where, "name", err) < 0 ||
	    hb_csv_double_range(c, p->idx[C_TIME], 0.0, 1e12, &job->arrival_s, err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_MAXP], 1, 1000000, &maxp, err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_BATCH], 1, 1L << 30, &b, err) < 0 ||
	    hb_csv_double_range(c, p->idx[C_EPOCHS], 0.0, 1e9, &epochs, err) < 0)
		return -1;
	app = hb_trim(c->field[p->idx[C_APP]]);
	for (k = 0; k < (int)(sizeof(apps) / sizeof(apps[0])); k++)
		if (hb_strcaseeq(app, apps[k].app))
			break;
	if (k == (int)(sizeof(apps) / sizeof(apps[0])))
		return hb_trace_bad_field(where, "application", app,
			   "not an application of the artifact (resnet50, vgg19, shufflenetv2, swintransformer, yolov3, "
			   "bert, electra, ncf)", err);
	hb_strlcpy(job->model, apps[k].model, sizeof(job->model));
	hb_strlcpy(job->app, apps[k].app, sizeof(job->app));
	if (!(epochs > 0))
		return hb_trace_bad_field(where, "epochs", c->field[p->idx[C_EPOCHS]], "not a positive number of epochs", err);
	job->epochs = epochs / 100.0; /* the artifact's datasets are 1 % of the catalog's */
	if (maxp * b > (1L << 40))
		return hb_trace_bad_field(where, "batch_size", c->field[p->idx[C_BATCH]], "max_parallelism x batch_size overflows",
			   err);
	job->gpus = (int)maxp;
	job->batch = maxp * b;
	d2 = hb_trim(c->field[p->idx[C_D2]]);
	if (hb_strcaseeq(d2, "true"))
		flag = 1;
	else if (hb_strcaseeq(d2, "false"))
		flag = 0;
	else {
		flag = strtol(d2, &end, 10);
		if (!d2[0] || *end)
			return hb_trace_bad_field(where, "enable_heterogeneous_deterministic", d2,
				   "not an integer (0: one GPU type; nonzero: D2, GPU types may mix) or True/False", err);
	}
	job->d2 = flag ? HB_D2_YES : HB_D2_NO;
	gpu = hb_trim(c->field[p->idx[C_GPU]]);
	for (k = 0; k < (int)(sizeof(gpus) / sizeof(gpus[0])); k++)
		if (hb_strcaseeq(gpu, gpus[k].gpu) || hb_strcaseeq(gpu, gpus[k].catalog))
			break;
	if (k == (int)(sizeof(gpus) / sizeof(gpus[0])))
		return hb_trace_bad_field(where, "preferred_gpu", gpu, "not a GPU type of the artifact (v100, p100, t4)", err);
	hb_strlcpy(job->gpu_type, gpus[k].catalog, sizeof(job->gpu_type));
	job->record = c->line;
	*skip = HB_SKIP_NONE;
	return 1;
}

const struct hb_trace_ops hb_trace_easyscale_workload_ops = {
	.open = open_wl,
	.next = next_wl,
	.where = where_wl,
	.buffer = buffer_wl,
	.close = close_wl,
	.wallclock = 0,
};
