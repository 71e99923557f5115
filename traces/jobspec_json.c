/*
 * jobspec_json.c: hetbatch's own job-spec JSON (docs/jobspec.md), streamed.
 *
 *   {"comment": "...", "jobs": [{"name": "a", "arrival_s": 0, "model": "resnet50",
 *                                "gpus": 4, "batch": 0, "duration_s": 3600}, ...]}
 *
 * The top-level object may hold "jobs" (required, once) and the free-text
 * keys "comment", "source" and "version"; anything else is an error.  The
 * jobs array is cut one element at a time (jstream.h) like the Philly log,
 * so a generated file of any length reads in bounded memory.  Job keys as
 * in the CSV form: name, arrival_s, model, gpus required; batch, duration_s,
 * gpu_time_s, status, user, vc optional (null = absent).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jstream.h"
#include "strutil.h"
#include "trace_priv.h"

enum { S_MEMBERS, S_JOBS, S_DONE };

struct jobspec_json {
	struct hb_jstream js;
	int state;              /* S_MEMBERS: reading top-level keys; S_JOBS: inside "jobs" */
	int nmembers;           /* top-level members read so far */
	int seen_jobs;          /* 1 once "jobs" was found */
	unsigned seen_text;     /* bit i: free_text[i] ("comment", ...) was found */
};

static void close_jj(void *state)
{
	struct jobspec_json *p = state;

	hb_jstream_close(&p->js);
	free(p);
}

/* Read top-level members until the jobs array opens (1) or the object
 * closes (0). */
static int scan_members(struct jobspec_json *p, struct hb_error *err)
{
	static const char *const free_text[] = { "comment", "source", "version", NULL };
	struct hb_jstream *js = &p->js;

	for (;;) {
		char key[64], where[1200], q[HB_QUOTE_MAX];
		cJSON *k;
		int c = hb_jstream_peek(js), known = 0;

		if (c == '}') {
			if (hb_jstream_expect(js, '}', "", err) < 0)
				return -1;
			return 0;
		}
		if (p->nmembers > 0 && hb_jstream_expect(js, ',', "between members of the top-level object", err) < 0)
			return -1;
		if (hb_jstream_peek(js) != '"')
			return hb_jstream_expect(js, '"', "to open a member name of the top-level object", err);
		if (hb_jstream_cut(js, err) < 0)
			return -1;
		k = hb_jstream_parse(js, err);
		if (!k)
			return -1;
		hb_strlcpy(key, cJSON_IsString(k) ? k->valuestring : "", sizeof(key));
		cJSON_Delete(k);
		snprintf(where, sizeof(where), "%s:%ld: byte %lld", js->path, js->elem_line, js->elem_offset);
		p->nmembers++;
		if (hb_jstream_expect(js, ':', "after a member name", err) < 0)
			return -1;
		if (strcmp(key, "jobs") == 0) {
			if (p->seen_jobs)
				return hb_input_error(err, "%s: key 'jobs' appears twice", where);
			p->seen_jobs = 1;
			if (hb_jstream_array_open(js, "to open the 'jobs' array", err) < 0)
				return -1;
			return 1;
		}
		for (int i = 0; free_text[i]; i++)
			if (strcmp(key, free_text[i]) == 0) {
				if (p->seen_text & (1u << i))
					return hb_input_error(err, "%s: key '%s' appears twice", where, key);
				p->seen_text |= 1u << i;
				known = 1;
			}
		if (!known)
			return hb_input_error(err, "%s: unknown key '%s' (allowed: jobs, comment, source, version)",
					      where, hb_trace_quote(q, sizeof(q), key));
		if (hb_jstream_cut(js, err) < 0)
			return -1;
		k = hb_jstream_parse(js, err);
		if (!k)
			return -1;
		cJSON_Delete(k);
	}
}

static int open_jj(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err)
{
	struct jobspec_json *p = calloc(1, sizeof(*p));
	int rc;

	(void)opt;
	*state = NULL;
	if (!p)
		return hb_runtime_error(err, "%s: out of memory", path);
	if (hb_jstream_open(&p->js, path, 0, err) < 0 ||
	    hb_jstream_expect(&p->js, '{', "at the start of a job-spec JSON document", err) < 0) {
		close_jj(p);
		return -1;
	}
	rc = scan_members(p, err);
	if (rc < 0) {
		close_jj(p);
		return -1;
	}
	if (rc == 0) {
		close_jj(p);
		return hb_input_error(err, "%s: key 'jobs': missing (a job-spec document is {\"jobs\": [...]})", path);
	}
	p->state = S_JOBS;
	*state = p;
	return 0;
}

static void where_jj(const void *state, char *buf, size_t size)
{
	hb_jstream_where(&((const struct jobspec_json *)state)->js, buf, size);
}

static size_t buffer_jj(const void *state)
{
	return ((const struct jobspec_json *)state)->js.ecap;
}

static int opt_text(const cJSON *o, const char *key, const char *where, char *dst, size_t size,
		    struct hb_error *err)
{
	const char *s;

	if (hb_json_str_opt(o, key, where, "", &s, err) < 0)
		return -1;
	return hb_trace_copy(dst, size, s, 0, where, key, err);
}

/* Like hb_json_check_keys, but the key is quoted so that a control
 * character in it cannot break the one-line message. */
static int check_keys(const cJSON *o, const char *where, struct hb_error *err)
{
	static const char *const keys[] = { "name", "arrival_s", "model", "gpus", "batch", "duration_s",
					    "gpu_time_s", "status", "user", "vc", "gpu_type", "d2", "epochs", "comment",
					    NULL };
	const cJSON *it;

	cJSON_ArrayForEach(it, o) {
		int known = 0;
		char q[HB_QUOTE_MAX];

		for (int k = 0; keys[k] && it->string; k++)
			known |= strcmp(it->string, keys[k]) == 0;
		if (!known)
			return hb_input_error(err, "%s: unknown field '%s'", where,
					      hb_trace_quote(q, sizeof(q), it->string ? it->string : "?"));
	}
	return 0;
}

static int job_from_object(const cJSON *o, const char *where, struct hb_jobspec *job, struct hb_error *err)
{
	const char *s;
	long gpus;

	if (!cJSON_IsObject(o))
		return hb_input_error(err, "%s: expected a job object", where);
	if (check_keys(o, where, err) < 0 || hb_json_str(o, "name", where, &s, err) < 0 ||
	    hb_trace_copy(job->name, sizeof(job->name), s, 1, where, "name", err) < 0 ||
	    hb_json_num(o, "arrival_s", where, 0.0, 1e12, &job->arrival_s, err) < 0 ||
	    hb_json_str(o, "model", where, &s, err) < 0 ||
	    hb_trace_copy(job->model, sizeof(job->model), s, 1, where, "model", err) < 0 ||
	    hb_json_int(o, "gpus", where, 1, 1000000, &gpus, err) < 0 ||
	    hb_json_int_opt(o, "batch", where, 0, 1L << 40, 0, &job->batch, err) < 0 ||
	    hb_json_num_opt(o, "duration_s", where, 0.0, 1e12, 0.0, &job->duration_s, err) < 0 ||
	    hb_json_num_opt(o, "gpu_time_s", where, 0.0, 1e18, job->duration_s * (double)gpus, &job->gpu_time_s,
			    err) < 0 ||
	    opt_text(o, "status", where, job->status, sizeof(job->status), err) < 0 ||
	    opt_text(o, "user", where, job->user, sizeof(job->user), err) < 0 ||
	    opt_text(o, "vc", where, job->vc, sizeof(job->vc), err) < 0 ||
	    opt_text(o, "gpu_type", where, job->gpu_type, sizeof(job->gpu_type), err) < 0 ||
	    hb_json_num_opt(o, "epochs", where, 1e-9, 1e9, 0.0, &job->epochs, err) < 0)
		return -1;
	{
		long d2;

		if (hb_json_int_opt(o, "d2", where, 0, 1, -1, &d2, err) < 0)
			return -1;
		job->d2 = d2 < 0 ? HB_D2_MODEL : d2 ? HB_D2_YES : HB_D2_NO;
	}
	job->gpus = (int)gpus;
	return 0;
}

static int next_jj(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct jobspec_json *p = state;
	char where[1200];
	cJSON *o;
	int rc;

	if (p->state == S_DONE)
		return 0;
	rc = hb_jstream_array_next(&p->js, err);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		rc = scan_members(p, err);
		if (rc < 0)
			return -1;
		if (rc > 0)
			return hb_input_error(err, "%s: key 'jobs' appears twice", p->js.path);
		p->state = S_DONE;
		return hb_jstream_end(&p->js, err) < 0 ? -1 : 0;
	}
	o = hb_jstream_parse(&p->js, err);
	if (!o)
		return -1;
	hb_jstream_where(&p->js, where, sizeof(where));
	rc = job_from_object(o, where, job, err);
	cJSON_Delete(o);
	if (rc < 0)
		return -1;
	job->record = p->js.index;
	*skip = HB_SKIP_NONE;
	return 1;
}

const struct hb_trace_ops hb_trace_jobspec_json_ops = {
	.open = open_jj,
	.next = next_jj,
	.where = where_jj,
	.buffer = buffer_jj,
	.close = close_jj,
	.wallclock = 0,
};
