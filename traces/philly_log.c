/*
 * philly_log.c: Microsoft's Philly cluster_job_log, streamed.
 *
 * The file is one JSON array of jobs:
 *   {"status": "Pass"|"Killed"|"Failed", "vc": HASH, "jobid": ID, "user": HASH,
 *    "submitted_time": "YYYY-MM-DD HH:MM:SS",
 *    "attempts": [{"start_time": T, "end_time": T,
 *                  "detail": [{"ip": SERVER, "gpus": ["gpu0", ...]}, ...]}, ...]}
 * A time may be missing, JSON null, or Python's bare None (jstream.h turns
 * None into null); the trace's README says a job whose last attempt ends in
 * None was still running when the log was taken, and that a job may have
 * no attempts.
 *
 * One job spec per job (jobspec.h, enum hb_trace_attempts): GPUs are the
 * total over the attempt's `detail` entries, duration = end - start, arrival
 * = submitted_time.  Checks run in this order and the first that applies
 * names the skip: no attempts, still running, missing times, ends before it
 * starts, no GPUs.  Anything of the wrong JSON type is an error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jstream.h"
#include "strutil.h"
#include "trace_priv.h"

struct philly_log {
	struct hb_jstream js;
	int attempts_mode;      /* enum hb_trace_attempts */
	int ended;              /* the closing ']' was read */
};

static int open_log(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err)
{
	struct philly_log *p = calloc(1, sizeof(*p));

	*state = NULL;
	if (!p)
		return hb_runtime_error(err, "%s: out of memory", path);
	p->attempts_mode = opt->attempts;
	if (hb_jstream_open(&p->js, path, 1, err) < 0 ||
	    hb_jstream_array_open(&p->js, "at the start of a Philly job log (a JSON array of jobs)", err) < 0) {
		hb_jstream_close(&p->js);
		free(p);
		return -1;
	}
	*state = p;
	return 0;
}

static void close_log(void *state)
{
	struct philly_log *p = state;

	hb_jstream_close(&p->js);
	free(p);
}

static void where_log(const void *state, char *buf, size_t size)
{
	hb_jstream_where(&((const struct philly_log *)state)->js, buf, size);
}

static size_t buffer_log(const void *state)
{
	return ((const struct philly_log *)state)->js.ecap;
}

/* Optional string: absent or null gives "". */
static int opt_string(const cJSON *obj, const char *key, const char *where, const char *field, char *dst,
		      size_t size, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	dst[0] = '\0';
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return hb_input_error(err, "%s: field '%s': expected a string", where, field);
	return hb_trace_copy(dst, size, v->valuestring, 0, where, field, err);
}

/* A time field: *have = 0 when absent or null. */
static int opt_time(const cJSON *obj, const char *key, const char *where, const char *field, double *t, int *have,
		    struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*have = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return hb_input_error(err, "%s: field '%s': expected a time string \"YYYY-MM-DD HH:MM:SS\" or None",
				      where, field);
	if (hb_trace_parse_time(v->valuestring, t) < 0) {
		char q[HB_QUOTE_MAX];

		return hb_input_error(err, "%s: field '%s': value '%s': expected \"YYYY-MM-DD HH:MM:SS\"", where, field,
				      hb_trace_quote(q, sizeof(q), v->valuestring));
	}
	if (!hb_trace_time_plausible(*t)) {
		char q[HB_QUOTE_MAX];

		return hb_input_error(err, "%s: field '%s': value '%s': not a date between %d and %d", where, field,
				      hb_trace_quote(q, sizeof(q), v->valuestring), HB_TRACE_YEAR_MIN,
				      HB_TRACE_YEAR_MAX);
	}
	*have = 1;
	return 0;
}

struct attempt {
	double start, end;
	int have_start, have_end;
	long gpus;
};

static int parse_attempt(const cJSON *a, int k, const char *where, struct attempt *at, struct hb_error *err)
{
	char field[96];
	const cJSON *detail, *d;
	int j = 0;

	memset(at, 0, sizeof(*at));
	if (!cJSON_IsObject(a)) {
		snprintf(field, sizeof(field), "attempts[%d]", k);
		return hb_input_error(err, "%s: field '%s': expected an object", where, field);
	}
	snprintf(field, sizeof(field), "attempts[%d].start_time", k);
	if (opt_time(a, "start_time", where, field, &at->start, &at->have_start, err) < 0)
		return -1;
	snprintf(field, sizeof(field), "attempts[%d].end_time", k);
	if (opt_time(a, "end_time", where, field, &at->end, &at->have_end, err) < 0)
		return -1;
	detail = cJSON_GetObjectItemCaseSensitive(a, "detail");
	if (!detail || cJSON_IsNull(detail))
		return 0;
	if (!cJSON_IsArray(detail)) {
		snprintf(field, sizeof(field), "attempts[%d].detail", k);
		return hb_input_error(err, "%s: field '%s': expected an array", where, field);
	}
	cJSON_ArrayForEach(d, detail) {
		const cJSON *gpus, *ip;

		if (!cJSON_IsObject(d)) {
			snprintf(field, sizeof(field), "attempts[%d].detail[%d]", k, j);
			return hb_input_error(err, "%s: field '%s': expected an object", where, field);
		}
		ip = cJSON_GetObjectItemCaseSensitive(d, "ip");
		if (ip && !cJSON_IsNull(ip) && !cJSON_IsString(ip)) {
			snprintf(field, sizeof(field), "attempts[%d].detail[%d].ip", k, j);
			return hb_input_error(err, "%s: field '%s': expected a string", where, field);
		}
		gpus = cJSON_GetObjectItemCaseSensitive(d, "gpus");
		if (gpus && !cJSON_IsNull(gpus)) {
			if (!cJSON_IsArray(gpus)) {
				snprintf(field, sizeof(field), "attempts[%d].detail[%d].gpus", k, j);
				return hb_input_error(err, "%s: field '%s': expected an array of GPU ids", where,
						      field);
			}
			at->gpus += cJSON_GetArraySize(gpus);
		}
		j++;
	}
	return 0;
}

/* Fill job from one element; *skip says why it cannot be replayed. */
static int job_from_element(struct philly_log *p, const cJSON *root, struct hb_jobspec *job, int *skip,
			    struct hb_error *err)
{
	char where[1200];
	const cJSON *v, *attempts, *a;
	double submitted;
	int have, n, k = 0, last;
	struct attempt at, first = { 0 };
	double dur_sum = 0.0, gpu_time = 0.0;
	long max_gpus = 0;

	hb_jstream_where(&p->js, where, sizeof(where));
	if (!cJSON_IsObject(root))
		return hb_input_error(err, "%s: expected a job object", where);
	v = cJSON_GetObjectItemCaseSensitive(root, "jobid");
	if (!v || cJSON_IsNull(v))
		return hb_input_error(err, "%s: field 'jobid': missing", where);
	if (!cJSON_IsString(v))
		return hb_input_error(err, "%s: field 'jobid': expected a string", where);
	if (hb_trace_copy(job->name, sizeof(job->name), v->valuestring, 1, where, "jobid", err) < 0)
		return -1;
	if (opt_time(root, "submitted_time", where, "submitted_time", &submitted, &have, err) < 0)
		return -1;
	if (!have)
		return hb_input_error(err, "%s: field 'submitted_time': missing", where);
	job->arrival_s = submitted;
	if (opt_string(root, "status", where, "status", job->status, sizeof(job->status), err) < 0 ||
	    opt_string(root, "vc", where, "vc", job->vc, sizeof(job->vc), err) < 0 ||
	    opt_string(root, "user", where, "user", job->user, sizeof(job->user), err) < 0)
		return -1;
	job->record = p->js.index;

	attempts = cJSON_GetObjectItemCaseSensitive(root, "attempts");
	if (attempts && !cJSON_IsNull(attempts) && !cJSON_IsArray(attempts))
		return hb_input_error(err, "%s: field 'attempts': expected an array", where);
	n = attempts && cJSON_IsArray(attempts) ? cJSON_GetArraySize(attempts) : 0;
	job->attempts = n;
	/* Parse every attempt, so that a wrong type anywhere is reported
	 * whichever attempt mode is in use. */
	*skip = HB_SKIP_NONE;
	last = n - 1;
	if (n == 0) {
		*skip = HB_SKIP_NO_ATTEMPTS;
		return 0;
	}
	cJSON_ArrayForEach(a, attempts) {
		if (parse_attempt(a, k, where, &at, err) < 0)
			return -1;
		if (k == 0)
			first = at;
		if (*skip == HB_SKIP_NONE && p->attempts_mode == HB_ATTEMPTS_ALL) {
			if (k == last && at.have_start && !at.have_end)
				*skip = HB_SKIP_RUNNING;
			else if (!at.have_start || !at.have_end)
				*skip = HB_SKIP_MISSING_TIMES;
			else if (at.end < at.start)
				*skip = HB_SKIP_BAD_TIMES;
			else {
				dur_sum += at.end - at.start;
				gpu_time += (double)at.gpus * (at.end - at.start);
				if (at.gpus > max_gpus)
					max_gpus = at.gpus;
			}
		}
		k++;
	}
	if (first.have_start)
		job->wait_s = first.start - submitted;
	if (p->attempts_mode == HB_ATTEMPTS_FIRST) {
		if (last == 0 && first.have_start && !first.have_end)
			*skip = HB_SKIP_RUNNING;
		else if (!first.have_start || !first.have_end)
			*skip = HB_SKIP_MISSING_TIMES;
		else if (first.end < first.start)
			*skip = HB_SKIP_BAD_TIMES;
		max_gpus = first.gpus;
		dur_sum = first.have_end && first.have_start ? first.end - first.start : 0.0;
		gpu_time = (double)first.gpus * dur_sum;
	}
	if (*skip != HB_SKIP_NONE)
		return 0;
	if (max_gpus <= 0) {
		*skip = HB_SKIP_NO_GPUS;
		return 0;
	}
	if (max_gpus > 1000000)
		return hb_input_error(err, "%s: field 'attempts': %ld GPUs in one attempt is not plausible", where,
				      max_gpus);
	job->gpus = (int)max_gpus;
	job->duration_s = dur_sum;
	job->gpu_time_s = gpu_time;
	return 0;
}

static int next_log(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct philly_log *p = state;
	cJSON *root;
	int rc;

	if (p->ended)
		return 0;
	rc = hb_jstream_array_next(&p->js, err);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		p->ended = 1;
		return hb_jstream_end(&p->js, err) < 0 ? -1 : 0;
	}
	root = hb_jstream_parse(&p->js, err);
	if (!root)
		return -1;
	rc = job_from_element(p, root, job, skip, err);
	cJSON_Delete(root);
	return rc < 0 ? -1 : 1;
}

const struct hb_trace_ops hb_trace_philly_log_ops = {
	.open = open_log,
	.next = next_log,
	.where = where_log,
	.buffer = buffer_log,
	.close = close_log,
	.wallclock = 1,
};
