/*
 * live_plan.c: a plan file (docs/plan-format.md) as the slots of a live
 * run (live.h).
 *
 *   iidp     iidp.pairs: pair k of a node is its GPUs 2k and 2k+1, both
 *            with the pair's n_vsw and n_ga, at iidp.local_batch; a pair
 *            with "gpus": 1 is one GPU running both groups, 2 n_vsw VSWs
 *   ddp      baselines_on_requested_gpus.ddp: every GPU of the section's
 *            "gpus", one VSW, ga_steps, local_batch
 *   optperf  ...optperf.local_batches: per node its GPUs' local batch, one
 *            VSW, no accumulation
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "json.h"
#include "input.h" /* hb_read_text_file: directory, missing file, binary data, size cap */
#include "live.h"
#include "strutil.h"

static int field_error(const char *path, const char *field, const char *why, struct hb_error *err)
{
	return hb_input_error(err, "%s: field '%s': %s", path, field, why);
}

static const cJSON *get(const cJSON *o, const char *key)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static int get_num(const char *path, const cJSON *o, const char *field, const char *key, double *out,
		   struct hb_error *err)
{
	const cJSON *v = get(o, key);
	char name[128];

	snprintf(name, sizeof(name), "%s.%s", field, key);
	if (!cJSON_IsNumber(v))
		return field_error(path, name, "missing or not a number", err);
	*out = v->valuedouble;
	return 0;
}

static int get_str(const char *path, const cJSON *o, const char *field, const char *key, char *out, size_t n,
		   struct hb_error *err)
{
	const cJSON *v = get(o, key);
	char name[128];

	snprintf(name, sizeof(name), "%s.%s", field, key);
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return field_error(path, name, "missing or not a string", err);
	hb_strlcpy(out, v->valuestring, n);
	return 0;
}

int hb_live_plan_add_slot(struct hb_live_plan *p, const char *node, const char *gpu, int n_vsw, int n_ga, int lbs,
		    double pred, struct hb_error *err)
{
	struct hb_live_slot *s = realloc(p->slots, (size_t)(p->nslots + 1) * sizeof(*s));

	if (!s)
		return hb_runtime_error(err, "%s: out of memory", p->path);
	p->slots = s;
	s = &p->slots[p->nslots++];
	memset(s, 0, sizeof(*s));
	hb_strlcpy(s->node, node, sizeof(s->node));
	hb_strlcpy(s->gpu, gpu, sizeof(s->gpu));
	s->n_vsw = n_vsw;
	s->n_ga = n_ga;
	s->local_bs = lbs;
	s->pred_iter_s = pred;
	return 0;
}

static int load_iidp(struct hb_live_plan *p, const cJSON *iidp, struct hb_error *err)
{
	const cJSON *pairs = get(iidp, "pairs"), *it;
	double lbs = 0, gbs = 0, pred = 0;
	char ws[32];

	if (!cJSON_IsTrue(get(iidp, "found")))
		return field_error(p->path, "iidp.found", "the plan has no IIDP configuration", err);
	if (get_num(p->path, iidp, "iidp", "local_batch", &lbs, err) < 0 ||
	    get_num(p->path, iidp, "iidp", "global_batch", &gbs, err) < 0 ||
	    get_num(p->path, iidp, "iidp", "iter_s", &pred, err) < 0 ||
	    get_str(p->path, iidp, "iidp", "weight_sync", ws, sizeof(ws), err) < 0)
		return -1;
	if (strcmp(ws, "overlap") != 0 && strcmp(ws, "sequential") != 0)
		return field_error(p->path, "iidp.weight_sync", "must be \"overlap\" or \"sequential\"", err);
	p->ows = strcmp(ws, "overlap") == 0;
	p->global_batch = (long)gbs;
	p->pred_iter_s = pred;
	if (cJSON_IsString(get(iidp, "config")))
		hb_strlcpy(p->config, get(iidp, "config")->valuestring, sizeof(p->config));
	if (!cJSON_IsArray(pairs) || cJSON_GetArraySize(pairs) < 1)
		return field_error(p->path, "iidp.pairs", "missing or empty", err);
	cJSON_ArrayForEach(it, pairs) {
		char node[HB_NAME_MAX], gpu[HB_NAME_MAX];
		double nv = 0, ng = 0, ps = 0, gpus = 2;

		if (get_str(p->path, it, "iidp.pairs[]", "node", node, sizeof(node), err) < 0 ||
		    get_str(p->path, it, "iidp.pairs[]", "gpu", gpu, sizeof(gpu), err) < 0 ||
		    get_num(p->path, it, "iidp.pairs[]", "n_vsw", &nv, err) < 0 ||
		    get_num(p->path, it, "iidp.pairs[]", "n_ga", &ng, err) < 0 ||
		    get_num(p->path, it, "iidp.pairs[]", "iter_s", &ps, err) < 0)
			return -1;
		if (get(it, "gpus") && get_num(p->path, it, "iidp.pairs[]", "gpus", &gpus, err) < 0)
			return -1;
		if (nv < 1 || ng < 0)
			return field_error(p->path, "iidp.pairs[].n_vsw", "n_vsw >= 1 and n_ga >= 0 required", err);
		if (gpus != 1 && gpus != 2)
			return field_error(p->path, "iidp.pairs[].gpus", "1 (one GPU hosts both groups) or 2 required",
					   err);
		/* A one-GPU pair: its GPU runs both groups' VSWs (hb_iidp_solve_one_gpu). */
		for (int k = 0; k < (int)gpus; k++)
			if (hb_live_plan_add_slot(p, node, gpu, gpus == 1 ? 2 * (int)nv : (int)nv, (int)ng, (int)lbs, ps,
						  err) < 0)
				return -1;
	}
	return 0;
}

/* The section's GPUs, expanded: node, gpu type, count. */
static int for_gpus(struct hb_live_plan *p, const cJSON *sec, const char *field, int n_ga, int lbs_default,
		    const cJSON *local_batches, double pred, struct hb_error *err)
{
	const cJSON *gpus = get(sec, "gpus"), *it;

	if (!cJSON_IsArray(gpus) || cJSON_GetArraySize(gpus) < 1)
		return field_error(p->path, field, "has no \"gpus\"", err);
	cJSON_ArrayForEach(it, gpus) {
		char node[HB_NAME_MAX], gpu[HB_NAME_MAX];
		double n = 0;
		int lbs = lbs_default;

		if (get_str(p->path, it, field, "node", node, sizeof(node), err) < 0 ||
		    get_str(p->path, it, field, "gpu", gpu, sizeof(gpu), err) < 0 ||
		    get_num(p->path, it, field, "gpus", &n, err) < 0)
			return -1;
		if (local_batches) {
			const cJSON *lb;

			lbs = 0;
			cJSON_ArrayForEach(lb, local_batches) {
				const cJSON *nn = get(lb, "node"), *v = get(lb, "local_batch");

				if (cJSON_IsString(nn) && strcmp(nn->valuestring, node) == 0 && cJSON_IsNumber(v))
					lbs = (int)v->valuedouble;
			}
			if (lbs < 1)
				return field_error(p->path, "optperf.local_batches", "a node has no local batch", err);
		}
		for (int k = 0; k < (int)n; k++)
			if (hb_live_plan_add_slot(p, node, gpu, 1, n_ga, lbs, pred, err) < 0)
				return -1;
	}
	return 0;
}

static int load_baseline(struct hb_live_plan *p, const cJSON *root, const char *method, struct hb_error *err)
{
	const cJSON *sec = get(root, "baselines_on_requested_gpus"), *b = get(sec, method);
	double gbs = 0, pred = 0, lbs = 0, ga = 0;
	char field[64];

	snprintf(field, sizeof(field), "baselines_on_requested_gpus.%s", method);
	if (!cJSON_IsObject(b) || !cJSON_IsTrue(get(b, "found")))
		return field_error(p->path, field, "the plan has no such configuration", err);
	if (get_num(p->path, b, field, "global_batch", &gbs, err) < 0 ||
	    get_num(p->path, b, field, strcmp(method, "optperf") == 0 ? "real_iter_s" : "iter_s", &pred, err) < 0)
		return -1;
	p->global_batch = (long)gbs;
	p->pred_iter_s = pred;
	p->ows = 0;
	if (strcmp(method, "ddp") == 0) {
		if (get_num(p->path, b, field, "local_batch", &lbs, err) < 0 ||
		    get_num(p->path, b, field, "ga_steps", &ga, err) < 0)
			return -1;
		snprintf(p->config, sizeof(p->config), "DDP B_L %d, GA %d", (int)lbs, (int)ga);
		return for_gpus(p, sec, "baselines_on_requested_gpus.gpus[]", (int)ga, (int)lbs, NULL, pred, err);
	}
	snprintf(p->config, sizeof(p->config), "OptPerf unequal local batches");
	return for_gpus(p, sec, "baselines_on_requested_gpus.gpus[]", 0, 0, get(b, "local_batches"), pred, err);
}

/*
 * The plan's "profiles" path as a path from here: a relative one is
 * relative to the plan file's directory (where `plan --out` put both), not
 * to wherever live runs.  A plan in the working directory keeps the path
 * as written, so it compares equal to the same --db.
 */
static int resolve_profiles(struct hb_live_plan *p, const char *value, struct hb_error *err)
{
	const char *slash = strrchr(p->path, '/');
	int n;

	if (!*value)
		return field_error(p->path, "profiles", "an empty path", err);
	if (value[0] == '/' || !slash)
		n = snprintf(p->profiles, sizeof(p->profiles), "%s", value);
	else
		n = snprintf(p->profiles, sizeof(p->profiles), "%.*s/%s", (int)(slash - p->path), p->path, value);
	if (n < 0 || (size_t)n >= sizeof(p->profiles))
		return hb_input_error(err, "%s: field 'profiles': '%s': path too long (%zu bytes at most, resolved "
				      "against the plan's directory)", p->path, value, sizeof(p->profiles) - 1);
	return 0;
}

int hb_live_plan_load(const char *path, const char *method, struct hb_live_plan *p, struct hb_error *err)
{
	char *text = NULL;
	size_t len;
	cJSON *root;
	const cJSON *fmt;
	int rc;
	long sum = 0;

	memset(p, 0, sizeof(*p));
	hb_strlcpy(p->path, path, sizeof(p->path));
	hb_strlcpy(p->method, method, sizeof(p->method));
	if (strcmp(method, "iidp") != 0 && strcmp(method, "ddp") != 0 && strcmp(method, "optperf") != 0)
		return hb_input_error(err, "--method '%s': iidp, ddp or optperf", method);
	if (hb_read_text_file(path, 0, &text, &len, err) < 0)
		return -1;
	/* hb_json_parse: syntax errors with line and column, text after the
	 * plan's object (a second object) and duplicate keys refused. */
	root = hb_json_parse(text, len, path, err);
	free(text);
	if (!root)
		return -1;
	fmt = get(root, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "hetbatch-plan/1") != 0) {
		cJSON_Delete(root);
		return field_error(path, "format", "not \"hetbatch-plan/1\" (write plans with 'hetbatch plan --json')",
				   err);
	}
	rc = get_str(path, root, "plan", "model", p->model, sizeof(p->model), err);
	if (rc == 0)
		rc = get_str(path, root, "plan", "cluster", p->cluster, sizeof(p->cluster), err);
	if (rc == 0 && cJSON_IsString(get(root, "profiles")))
		rc = resolve_profiles(p, get(root, "profiles")->valuestring, err);
	else if (rc == 0 && get(root, "profiles"))
		rc = field_error(path, "profiles", "not a string (a profile database path)", err);
	if (rc == 0)
		rc = strcmp(method, "iidp") == 0 ? load_iidp(p, get(root, "iidp"), err)
						  : load_baseline(p, root, method, err);
	cJSON_Delete(root);
	if (rc < 0) {
		hb_live_plan_free(p);
		return -1;
	}
	for (int i = 0; i < p->nslots; i++)
		sum += (long)p->slots[i].local_bs * p->slots[i].n_vsw * (p->slots[i].n_ga + 1);
	if (sum != p->global_batch) {
		long gbs = p->global_batch;

		hb_live_plan_free(p);
		return hb_input_error(err, "%s: %s: the GPUs' local batches add up to %ld samples, the plan says "
				      "global_batch %ld", path, method, sum, gbs);
	}
	return 0;
}

void hb_live_plan_free(struct hb_live_plan *p)
{
	free(p->slots);
	p->slots = NULL;
	p->nslots = 0;
}
