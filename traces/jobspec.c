/*
 * jobspec.c: the reader every trace format feeds: origin of time, filters,
 * skip counters, max_jobs, format detection and the sorted read-all.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"  /* HB_NAME_MAX */
#include "input.h"
#include "rng.h"
#include "strutil.h"
#include "trace_priv.h"

#define MAX_LIST 32

struct hb_trace_reader {
	enum hb_trace_format fmt;
	const struct hb_trace_ops *ops;
	void *state;                    /* the format's open state */
	char path[1024];                /* file, or a name for generated streams */
	struct hb_trace_options opt;
	struct hb_trace_stats stats;
	double origin;                  /* Unix seconds of arrival 0, wall-clock formats */
	int have_origin;                /* 0 until known (HB_ORIGIN_FIRST before the first record) */
	double last_arrival;            /* previous record's arrival, for require_sorted */
	long nread;                     /* raw records read, for require_sorted */
	int done;                       /* 1 once the stream ended: next returns 0 */
	int failed;                     /* 1 once the stream failed: next repeats saved */
	struct hb_error saved;          /* the failure, repeated to later calls */
	char vcbuf[256];                /* options.vc split in place */
	char *vcs[MAX_LIST];
	int nvc;
	char stbuf[64];                 /* options.status split in place */
	char *sts[MAX_LIST];
	int nst;
	size_t origin_buffer;           /* largest buffer of the origin pass */
};

static const char *const format_names[HB_TRACE_NFORMATS] = {
	[HB_TRACE_AUTO] = "auto",
	[HB_TRACE_PHILLY_LOG] = "philly-log",
	[HB_TRACE_PHILLY_CSV] = "philly-csv",
	[HB_TRACE_POLLUX_WORKLOAD] = "pollux-workload",
	[HB_TRACE_JOBSPEC_CSV] = "jobspec-csv",
	[HB_TRACE_JOBSPEC_JSON] = "jobspec-json",
	[HB_TRACE_SYNTHETIC] = "synthetic",
	[HB_TRACE_EASYSCALE_WORKLOAD] = "easyscale-workload",
	[HB_TRACE_ALIBABA_OPENB] = "alibaba-openb",
};

static const char *const skip_names[HB_SKIP_NREASONS] = {
	[HB_SKIP_NONE] = "none",
	[HB_SKIP_NO_ATTEMPTS] = "no attempts",
	[HB_SKIP_MISSING_TIMES] = "missing times",
	[HB_SKIP_RUNNING] = "still running",
	[HB_SKIP_BAD_TIMES] = "ends before it starts",
	[HB_SKIP_NO_GPUS] = "no GPUs",
	[HB_SKIP_STATUS] = "status filter",
	[HB_SKIP_VC] = "virtual-cluster filter",
	[HB_SKIP_WINDOW] = "time window",
	[HB_SKIP_GPUS] = "GPU-count filter",
	[HB_SKIP_GPU_SHARE] = "GPU share (gpu_milli < 1000)",
	[HB_SKIP_NEVER_SCHEDULED] = "never scheduled",
};

const char *hb_trace_format_name(enum hb_trace_format fmt)
{
	return fmt >= 0 && fmt < HB_TRACE_NFORMATS ? format_names[fmt] : "?";
}

int hb_trace_format_parse(const char *name, enum hb_trace_format *out, struct hb_error *err)
{
	for (int i = 0; i < HB_TRACE_NFORMATS; i++) {
		if (i != HB_TRACE_SYNTHETIC && hb_strcaseeq(name, format_names[i])) {
			*out = (enum hb_trace_format)i;
			return 0;
		}
	}
	return hb_input_error(err,
			      "unknown trace format '%s' (known: auto, philly-log, philly-csv, pollux-workload, easyscale-workload, "
			      "alibaba-openb, jobspec-csv, jobspec-json)",
			      name);
}

const char *hb_trace_skip_name(enum hb_trace_skip why)
{
	return why >= 0 && why < HB_SKIP_NREASONS ? skip_names[why] : "?";
}

void hb_trace_options_init(struct hb_trace_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->attempts = HB_ATTEMPTS_FIRST;
	opt->origin = HB_ORIGIN_EARLIEST;
	opt->from_s = -INFINITY;
	opt->to_s = INFINITY;
}

const char *hb_trace_quote(char *buf, size_t size, const char *s)
{
	size_t k = 0, i;

	for (i = 0; s[i] && i < 40 && k + 8 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			k += (size_t)snprintf(buf + k, size - k, "\\n");
		else if (c == '\r')
			k += (size_t)snprintf(buf + k, size - k, "\\r");
		else if (c == '\t')
			k += (size_t)snprintf(buf + k, size - k, "\\t");
		else if (c < 0x20 || c == 0x7f)
			k += (size_t)snprintf(buf + k, size - k, "\\x%02x", c);
		else
			buf[k++] = (char)c;
	}
	if (s[i] && k + 4 < size) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

int hb_trace_bad_field(const char *where, const char *field, const char *value, const char *why,
		       struct hb_error *err)
{
	char q[HB_QUOTE_MAX];

	return hb_input_error(err, "%s: field '%s': value '%s': %s", where, field, hb_trace_quote(q, sizeof(q), value),
			      why);
}

int hb_trace_node_name(const char *raw, const char *field, char *out, const char *where, struct hb_error *err)
{
	char buf[HB_NAME_MAX], q[HB_QUOTE_MAX];
	const char *t;
	size_t n;

	if (hb_strlcpy(buf, raw, sizeof(buf)) >= sizeof(buf))
		return hb_input_error(err, "%s: field '%s': value '%s' is longer than %d characters", where, field,
				      hb_trace_quote(q, sizeof(q), raw), HB_NAME_MAX - 1);
	t = hb_trim(buf);
	n = strlen(t);
	if (n == 0)
		return hb_input_error(err, "%s: field '%s': empty", where, field);
	for (size_t i = 0; i < n; i++) {
		char c = (char)tolower((unsigned char)t[i]);

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && (c == '-' || c == '_' || c == '.'))))
			return hb_input_error(err,
					      "%s: field '%s': value '%s' is not a valid node name (letters, digits, "
					      "'-', '_', '.')",
					      where, field, hb_trace_quote(q, sizeof(q), t));
		out[i] = c;
	}
	out[n] = '\0';
	return 0;
}

int hb_trace_copy(char *dst, size_t size, const char *src, int required, const char *where, const char *field,
		  struct hb_error *err)
{
	size_t n = strlen(src);
	char q[HB_QUOTE_MAX];

	if (required && n == 0)
		return hb_input_error(err, "%s: field '%s': empty", where, field);
	if (n >= size)
		return hb_input_error(err, "%s: field '%s': value '%s' longer than %zu characters", where, field,
				      hb_trace_quote(q, sizeof(q), src), size - 1);
	memcpy(dst, src, n + 1);
	return 0;
}

/* ---- time -------------------------------------------------------------- */

static int digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = 10 * v + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (era arithmetic, so no
 * table and no dependence on the C library's time zone). */
static long days_from_civil(int y, int m, int d)
{
	long yy = y - (m <= 2);
	long era = (yy >= 0 ? yy : yy - 399) / 400;
	long yoe = yy - era * 400;
	long doy = (153L * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

int hb_trace_parse_time(const char *s, double *unix_s)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, se, leap, dim;

	if (!s || strlen(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':')
		return -1;
	if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) || digits(s + 11, 2, &h) ||
	    digits(s + 14, 2, &mi) || digits(s + 17, 2, &se))
		return -1;
	if (mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 59 || d < 1)
		return -1;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	dim = mdays[mo - 1] + (mo == 2 && leap);
	if (d > dim)
		return -1;
	*unix_s = (double)days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + se;
	return 0;
}

int hb_trace_time_plausible(double unix_s)
{
	return unix_s >= (double)days_from_civil(HB_TRACE_YEAR_MIN, 1, 1) * 86400.0 &&
	       unix_s < (double)days_from_civil(HB_TRACE_YEAR_MAX + 1, 1, 1) * 86400.0;
}

/* ---- Pollux size classes and model mix --------------------------------- */

int hb_trace_size_class(double gpu_time_s)
{
	double h = gpu_time_s / 3600.0;

	return h < 1.0 ? 0 : h < 10.0 ? 1 : h < 100.0 ? 2 : 3;
}

void hb_trace_assign_model(struct hb_jobspec *job, struct hb_rng *rng)
{
	const char *m;

	switch (hb_trace_size_class(job->gpu_time_s)) {
	case 0:
		m = hb_rng_uniform(rng) < 0.5 ? "cifar10" : "ncf";
		break;
	case 1:
		m = hb_rng_uniform(rng) < 0.5 ? "deepspeech2" : "bert";
		break;
	case 2:
		m = "yolov3";
		break;
	default:
		m = "imagenet";
		break;
	}
	hb_strlcpy(job->model, m, sizeof(job->model));
}

/* ---- detection ----------------------------------------------------------- */

static int header_has(char **cols, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (hb_strcaseeq(cols[i], name))
			return 1;
	return 0;
}

static const char *extension(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');

	return dot && (!slash || dot > slash) ? dot : "";
}

int hb_trace_detect(const char *path, enum hb_trace_format *out, struct hb_error *err)
{
	char buf[4096], *p, *nl, *cols[64];
	size_t n;
	int ncol;
	FILE *f = hb_open_input(path, err); /* "is a directory", "no such file" */

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (memchr(buf, '\0', n))
		return hb_input_error(err, "%s: NUL byte in the first %zu bytes: not a text trace", path, n);
	p = buf;
	if (n >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
		p += 3;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (*p == '[') {
		*out = HB_TRACE_PHILLY_LOG;
		return 0;
	}
	if (*p == '{') {
		*out = HB_TRACE_JOBSPEC_JSON;
		return 0;
	}
	if (*p == '\0')
		return hb_input_error(err, "%s: empty file: cannot tell its trace format", path);
	nl = strpbrk(p, "\r\n");
	if (nl)
		*nl = '\0';
	ncol = hb_split_list(p, cols, 64);
	if (ncol > 0) {
		if (header_has(cols, ncol, "timestamp") && header_has(cols, ncol, "num_gpus") &&
		    header_has(cols, ncol, "gpu_time")) {
			*out = HB_TRACE_PHILLY_CSV;
			return 0;
		}
		if (header_has(cols, ncol, "application") && header_has(cols, ncol, "max_parallelism")) {
			*out = HB_TRACE_EASYSCALE_WORKLOAD;
			return 0;
		}
		if (header_has(cols, ncol, "application") && header_has(cols, ncol, "num_replicas")) {
			*out = HB_TRACE_POLLUX_WORKLOAD;
			return 0;
		}
		if (header_has(cols, ncol, "num_gpu") && header_has(cols, ncol, "gpu_milli")) {
			*out = HB_TRACE_ALIBABA_OPENB;
			return 0;
		}
		if (header_has(cols, ncol, "arrival_s")) {
			*out = HB_TRACE_JOBSPEC_CSV;
			return 0;
		}
		if (header_has(cols, ncol, "machineId"))
			return hb_input_error(err, "%s:1: a Philly cluster_machine_list, not a job trace "
					      "(see hb_philly_machines_to_cluster)", path);
		if (header_has(cols, ncol, "sn") && header_has(cols, ncol, "model") && header_has(cols, ncol, "gpu"))
			return hb_input_error(err, "%s:1: an Alibaba node list, not a job trace (hetbatch catalog "
					      "clusters --from-alibaba turns it into a cluster)", path);
	}
	if (hb_strcaseeq(extension(path), ".json")) {
		*out = HB_TRACE_JOBSPEC_JSON;
		return 0;
	}
	return hb_input_error(err,
			      "%s:1: cannot tell the trace format from the header: expected the columns of "
			      "philly-csv (timestamp,duration,num_gpus,gpu_time,cluster), pollux-workload "
			      "(name,time,application,num_replicas,batch_size), easyscale-workload "
			      "(name,time,application,max_parallelism,batch_size,epochs,...), alibaba-openb "
			      "(name,...,num_gpu,gpu_milli,...) or jobspec-csv "
			      "(name,arrival_s,model,gpus,...), or a JSON document",
			      path);
}

/* ---- the reader ---------------------------------------------------------- */

static const struct hb_trace_ops *ops_for(enum hb_trace_format fmt)
{
	switch (fmt) {
	case HB_TRACE_PHILLY_LOG:
		return &hb_trace_philly_log_ops;
	case HB_TRACE_PHILLY_CSV:
		return &hb_trace_philly_csv_ops;
	case HB_TRACE_POLLUX_WORKLOAD:
		return &hb_trace_pollux_workload_ops;
	case HB_TRACE_EASYSCALE_WORKLOAD:
		return &hb_trace_easyscale_workload_ops;
	case HB_TRACE_ALIBABA_OPENB:
		return &hb_trace_alibaba_openb_ops;
	case HB_TRACE_JOBSPEC_CSV:
		return &hb_trace_jobspec_csv_ops;
	case HB_TRACE_JOBSPEC_JSON:
		return &hb_trace_jobspec_json_ops;
	default:
		return NULL;
	}
}

static int split_option(char *buf, size_t size, const char *src, char **items, int *n, const char *name,
			struct hb_error *err)
{
	*n = 0;
	if (!src[0])
		return 0;
	if (hb_strlcpy(buf, src, size) >= size)
		return hb_input_error(err, "trace option '%s': list too long", name);
	*n = hb_split_list(buf, items, MAX_LIST);
	if (*n < 0)
		return hb_input_error(err, "trace option '%s': '%s' has an empty item or more than %d items", name,
				      src, MAX_LIST);
	return 0;
}

static int check_options(struct hb_trace_reader *r, struct hb_error *err)
{
	const struct hb_trace_options *o = &r->opt;

	if (o->attempts != HB_ATTEMPTS_FIRST && o->attempts != HB_ATTEMPTS_ALL)
		return hb_input_error(err, "trace option 'attempts': %d is not first (0) or all (1)", o->attempts);
	if (o->origin < HB_ORIGIN_EARLIEST || o->origin > HB_ORIGIN_FIXED)
		return hb_input_error(err, "trace option 'origin': %d is not earliest, first or fixed", o->origin);
	if (!isfinite(o->origin_s))
		return hb_input_error(err, "trace option 'origin_s': not a finite number");
	if (isnan(o->from_s) || isnan(o->to_s) || !(o->from_s < o->to_s))
		return hb_input_error(err, "trace options 'from_s', 'to_s': window [%g, %g) is empty", o->from_s,
				      o->to_s);
	if (o->min_gpus < 0 || o->max_gpus < 0 || (o->max_gpus > 0 && o->max_gpus < o->min_gpus))
		return hb_input_error(err, "trace options 'min_gpus', 'max_gpus': [%d, %d] is not a range",
				      o->min_gpus, o->max_gpus);
	if (o->max_jobs < 0)
		return hb_input_error(err, "trace option 'max_jobs': %ld is negative", o->max_jobs);
	if (split_option(r->vcbuf, sizeof(r->vcbuf), o->vc, r->vcs, &r->nvc, "vc", err) < 0 ||
	    split_option(r->stbuf, sizeof(r->stbuf), o->status, r->sts, &r->nst, "status", err) < 0)
		return -1;
	return 0;
}

static struct hb_trace_reader *reader_new(const char *path, enum hb_trace_format fmt,
					  const struct hb_trace_options *opt, struct hb_error *err)
{
	struct hb_trace_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		hb_runtime_error(err, "out of memory");
		return NULL;
	}
	hb_strlcpy(r->path, path, sizeof(r->path));
	r->fmt = fmt;
	if (opt)
		r->opt = *opt;
	else
		hb_trace_options_init(&r->opt);
	if (check_options(r, err) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* HB_ORIGIN_EARLIEST: one pass over every record for the earliest arrival. */
static int find_earliest(struct hb_trace_reader *r, struct hb_error *err)
{
	void *st = NULL;
	struct hb_jobspec job;
	int skip, rc;
	double best = INFINITY;

	if (r->ops->open(r->path, &r->opt, &st, err) < 0)
		return -1;
	while ((rc = r->ops->next(st, &job, &skip, err)) == 1)
		if (job.arrival_s < best)
			best = job.arrival_s;
	r->origin_buffer = r->ops->buffer(st);
	r->ops->close(st);
	if (rc < 0)
		return -1;
	r->origin = isfinite(best) ? best : 0.0;
	r->have_origin = 1;
	return 0;
}

int hb_trace_open(const char *path, enum hb_trace_format fmt, const struct hb_trace_options *opt,
		  struct hb_trace_reader **out, struct hb_error *err)
{
	struct hb_trace_reader *r;

	*out = NULL;
	if (fmt == HB_TRACE_AUTO && hb_trace_detect(path, &fmt, err) < 0)
		return -1;
	if (!ops_for(fmt))
		return hb_input_error(err, "%s: format '%s' cannot be opened from a file", path,
				      hb_trace_format_name(fmt));
	r = reader_new(path, fmt, opt, err);
	if (!r)
		return -1;
	r->ops = ops_for(fmt);
	if (r->ops->wallclock) {
		if (r->opt.origin == HB_ORIGIN_FIXED) {
			r->origin = r->opt.origin_s;
			r->have_origin = 1;
		} else if (r->opt.origin == HB_ORIGIN_EARLIEST && find_earliest(r, err) < 0) {
			free(r);
			return -1;
		}
	}
	if (r->ops->open(path, &r->opt, &r->state, err) < 0) {
		free(r);
		return -1;
	}
	*out = r;
	return 0;
}

int hb_trace_reader_wrap(enum hb_trace_format fmt, const struct hb_trace_ops *ops, void *state,
			 const char *name, const struct hb_trace_options *opt, struct hb_trace_reader **out,
			 struct hb_error *err)
{
	struct hb_trace_reader *r = reader_new(name, fmt, opt, err);

	*out = NULL;
	if (!r) {
		ops->close(state);
		return -1;
	}
	r->ops = ops;
	r->state = state;
	*out = r;
	return 0;
}

void hb_trace_close(struct hb_trace_reader *r)
{
	if (!r)
		return;
	if (r->state)
		r->ops->close(r->state);
	free(r);
}

static int in_list(char *const *items, int n, const char *s, int nocase)
{
	for (int i = 0; i < n; i++)
		if (nocase ? hb_strcaseeq(items[i], s) : strcmp(items[i], s) == 0)
			return 1;
	return 0;
}

static int filter(const struct hb_trace_reader *r, const struct hb_jobspec *job)
{
	const struct hb_trace_options *o = &r->opt;

	if (r->nst && !in_list(r->sts, r->nst, job->status, 1))
		return HB_SKIP_STATUS;
	if (r->nvc && !in_list(r->vcs, r->nvc, job->vc, 0))
		return HB_SKIP_VC;
	if (!(job->arrival_s >= o->from_s && job->arrival_s < o->to_s))
		return HB_SKIP_WINDOW;
	if (job->gpus < o->min_gpus || (o->max_gpus > 0 && job->gpus > o->max_gpus))
		return HB_SKIP_GPUS;
	return HB_SKIP_NONE;
}

static void update_buffer(struct hb_trace_reader *r)
{
	size_t b = r->ops->buffer(r->state);

	if (b < r->origin_buffer)
		b = r->origin_buffer;
	if (b > r->stats.max_buffer)
		r->stats.max_buffer = b;
}

static int fail(struct hb_trace_reader *r, struct hb_error *err)
{
	r->failed = 1;
	if (err)
		r->saved = *err;
	else
		hb_input_error(&r->saved, "%s: trace reader failed", r->path);
	update_buffer(r);
	return -1;
}

int hb_trace_next(struct hb_trace_reader *r, struct hb_jobspec *out, struct hb_error *err)
{
	if (r->failed) {
		if (err)
			*err = r->saved;
		return -1;
	}
	if (r->done)
		return 0;
	for (;;) {
		int skip = HB_SKIP_NONE, rc;

		if (r->opt.max_jobs > 0 && r->stats.jobs >= r->opt.max_jobs) {
			r->stats.stopped = 1;
			r->done = 1;
			update_buffer(r);
			return 0;
		}
		memset(out, 0, sizeof(*out));
		out->wait_s = -1.0;
		rc = r->ops->next(r->state, out, &skip, err);
		if (rc < 0)
			return fail(r, err);
		if (rc == 0) {
			r->done = 1;
			update_buffer(r);
			return 0;
		}
		r->stats.records++;
		if (r->ops->wallclock) {
			if (!r->have_origin) {
				r->origin = out->arrival_s;
				r->have_origin = 1;
			}
			out->arrival_s -= r->origin;
		}
		if (r->opt.require_sorted) {
			if (r->nread > 0 && out->arrival_s < r->last_arrival) {
				char where[1200];

				r->ops->where(r->state, where, sizeof(where));
				hb_input_error(err, "%s: field 'arrival': %.3f s is earlier than the previous record's %.3f s "
					       "(the trace must be sorted by arrival)",
					       where, out->arrival_s, r->last_arrival);
				return fail(r, err);
			}
			r->last_arrival = out->arrival_s;
		}
		r->nread++;
		if (skip == HB_SKIP_NONE)
			skip = filter(r, out);
		if (skip != HB_SKIP_NONE) {
			r->stats.skipped[skip]++;
			r->stats.skipped_total++;
			continue;
		}
		r->stats.jobs++;
		update_buffer(r);
		return 1;
	}
}

const struct hb_trace_stats *hb_trace_get_stats(const struct hb_trace_reader *r)
{
	return &r->stats;
}

enum hb_trace_format hb_trace_get_format(const struct hb_trace_reader *r)
{
	return r->fmt;
}

double hb_trace_get_origin(const struct hb_trace_reader *r)
{
	return r->ops->wallclock ? r->origin : 0.0;
}

/* ---- read all -------------------------------------------------------------- */

static int cmp_arrival(const void *a, const void *b)
{
	const struct hb_jobspec *x = a, *y = b;

	if (x->arrival_s != y->arrival_s)
		return x->arrival_s < y->arrival_s ? -1 : 1;
	return (x->record > y->record) - (x->record < y->record);
}

int hb_trace_drain(struct hb_trace_reader *r, struct hb_jobspec **jobs, long *njobs, struct hb_error *err)
{
	struct hb_jobspec *v = NULL, job;
	long n = 0, cap = 0;
	int rc;

	*jobs = NULL;
	*njobs = 0;
	while ((rc = hb_trace_next(r, &job, err)) == 1) {
		if (n == cap) {
			long ncap = cap ? 2 * cap : 256;
			struct hb_jobspec *nv = realloc(v, (size_t)ncap * sizeof(*nv));

			if (!nv) {
				free(v);
				return hb_runtime_error(err, "%s: out of memory after %ld jobs", r->path, n);
			}
			v = nv;
			cap = ncap;
		}
		v[n++] = job;
	}
	if (rc < 0) {
		free(v);
		return -1;
	}
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), cmp_arrival);
	*jobs = v;
	*njobs = n;
	return 0;
}

int hb_trace_read_all(const char *path, enum hb_trace_format fmt, const struct hb_trace_options *opt,
		      struct hb_jobspec **jobs, long *njobs, struct hb_trace_stats *stats, struct hb_error *err)
{
	struct hb_trace_reader *r;
	int rc;

	*jobs = NULL;
	*njobs = 0;
	if (hb_trace_open(path, fmt, opt, &r, err) < 0)
		return -1;
	rc = hb_trace_drain(r, jobs, njobs, err);
	if (stats)
		*stats = r->stats;
	hb_trace_close(r);
	return rc;
}
