/*
 * sweep_config.c: the sweep's JSON configuration (docs/sweep.md), validated
 * as it is read, and the expansion into points.
 *
 * Every message names the file, the field (a path such as
 * 'clusters[1].add[0].nodes') and the value as written, so a user can find
 * it without reading this file.  Unknown and repeated keys are errors: a
 * typo ("polices") would otherwise silently sweep the defaults.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "input.h" /* hb_read_text_file: directory, missing file, binary data, size cap */
#include "json.h"
#include "strutil.h"
#include "plugin.h"   /* hb_plugin_load: "policy_plugins" */
#include "sweep.h"
#include "sweep_priv.h"

/* ---- echo: the configuration as understood ------------------------------------------ */

static void echo_num(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* ---- trace ------------------------------------------------------------------------------- */

static const char *const trace_keys[] = { "file", "synthetic", "format", "max_jobs", "from_s", "to_s", "vc",
					  "status", "attempts", "min_gpus", "max_gpus", "duration_from_trace", "comment",
					  NULL };
static const char *const synth_keys[] = { "arrival", "rate_per_hour", "hours", "jobs", "burst_high_s", "burst_low_s",
					  "burst_low_ratio", "philly_csv", "pollux_filter", "window_start_h",
					  "window_hours", "jobs_per_window", "mix", "comment", NULL };

static const char *const arrival_names[] = { "poisson", "bursty", NULL, "philly-window" };

static int parse_synth(const cJSON *s, const char *file, const char *dir, struct hb_sweep_trace *t, cJSON *echo,
		       struct hb_error *err)
{
	static const char pre[] = "trace.synthetic.";
	struct hb_synth_options *o = &t->synth;
	char arrival[32];
	double hours;
	long jobs, per_window;

	hb_synth_options_init(o);
	if (hb_sw_object_at(s, file, "trace.", "synthetic", err) < 0 || hb_sw_check_keys(s, file, pre, synth_keys, err) < 0 ||
	    hb_sw_get_str(s, "arrival", file, pre, 0, "poisson", arrival, sizeof(arrival), err) < 0)
		return -1;
	o->arrival = -1;
	for (int i = 0; i < (int)(sizeof(arrival_names) / sizeof(arrival_names[0])); i++)
		if (arrival_names[i] && strcmp(arrival, arrival_names[i]) == 0)
			o->arrival = i;
	if (o->arrival < 0)
		return hb_sw_bad(err, file, pre, "arrival", cJSON_GetObjectItemCaseSensitive(s, "arrival"),
			   "not an arrival pattern (poisson, bursty, philly-window)");
	if (hb_sw_get_pos(s, "rate_per_hour", file, pre, 1e6, o->rate_per_hour, &o->rate_per_hour, err) < 0 ||
	    hb_sw_get_num(s, "hours", file, pre, 0, 0, 1e5, o->window_s / 3600.0, &hours, err) < 0 ||
	    hb_sw_get_int(s, "jobs", file, pre, 0, 0, 10000000L, 0, &jobs, err) < 0 ||
	    hb_sw_get_pos(s, "burst_high_s", file, pre, 1e7, o->burst_high_s, &o->burst_high_s, err) < 0 ||
	    hb_sw_get_pos(s, "burst_low_s", file, pre, 1e7, o->burst_low_s, &o->burst_low_s, err) < 0 ||
	    hb_sw_get_num(s, "burst_low_ratio", file, pre, 0, 0, 1, o->burst_low_ratio, &o->burst_low_ratio, err) < 0 ||
	    hb_sw_get_bool(s, "pollux_filter", file, pre, o->pollux_filter, &o->pollux_filter, err) < 0 ||
	    hb_sw_get_num(s, "window_start_h", file, pre, 0, 0, 23.999, o->window_start_h, &o->window_start_h, err) < 0 ||
	    hb_sw_get_pos(s, "window_hours", file, pre, 24, o->window_hours, &o->window_hours, err) < 0 ||
	    hb_sw_get_int(s, "jobs_per_window", file, pre, 0, 0, 10000000L, o->jobs_per_window, &per_window, err) < 0 ||
	    hb_sw_get_str(s, "mix", file, pre, 0, o->mix, o->mix, sizeof(o->mix), err) < 0)
		return -1;
	o->window_s = hours * 3600.0;
	o->njobs = jobs;
	o->jobs_per_window = per_window;
	if (cJSON_GetObjectItemCaseSensitive(s, "philly_csv")) {
		if (hb_sw_get_file(s, "philly_csv", file, pre, dir, t->philly_csv, sizeof(t->philly_csv), t->philly_echo,
			     sizeof(t->philly_echo), err) < 0)
			return -1;
		o->philly_csv = t->philly_csv;
	}
	if (o->arrival == HB_SYNTH_PHILLY_WINDOW && !o->philly_csv)
		return hb_sw_bad(err, file, pre, "arrival", cJSON_GetObjectItemCaseSensitive(s, "arrival"),
			   "philly-window draws rows of a philly.csv: set 'philly_csv'");
	if (o->arrival != HB_SYNTH_PHILLY_WINDOW && o->window_s <= 0 && o->njobs <= 0)
		return hb_sw_bad(err, file, pre, "hours", cJSON_GetObjectItemCaseSensitive(s, "hours"),
			   "a Poisson or bursty stream needs 'hours' > 0 or 'jobs' > 0 to end");
	cJSON_AddStringToObject(echo, "arrival", arrival_names[o->arrival]);
	echo_num(echo, "rate_per_hour", o->rate_per_hour);
	echo_num(echo, "hours", hours);
	echo_num(echo, "jobs", (double)o->njobs);
	if (o->arrival == HB_SYNTH_BURSTY) {
		echo_num(echo, "burst_high_s", o->burst_high_s);
		echo_num(echo, "burst_low_s", o->burst_low_s);
		echo_num(echo, "burst_low_ratio", o->burst_low_ratio);
	}
	if (o->philly_csv)
		cJSON_AddStringToObject(echo, "philly_csv", t->philly_echo);
	cJSON_AddBoolToObject(echo, "pollux_filter", o->pollux_filter);
	if (o->arrival == HB_SYNTH_PHILLY_WINDOW) {
		echo_num(echo, "window_start_h", o->window_start_h);
		echo_num(echo, "window_hours", o->window_hours);
		echo_num(echo, "jobs_per_window", (double)o->jobs_per_window);
	}
	cJSON_AddStringToObject(echo, "mix", o->mix);
	return 0;
}

static int parse_trace(const cJSON *root, const char *file, const char *dir, struct hb_sweep_config *cfg,
		       cJSON *echo, struct hb_error *err)
{
	static const char pre[] = "trace.";
	struct hb_sweep_trace *t = &cfg->trace;
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "trace");
	const cJSON *fv, *sv;
	cJSON *te = cJSON_AddObjectToObject(echo, "trace");
	char fmt[32], attempts[16];
	long max_jobs, lo, hi;

	if (!te)
		return hb_runtime_error(err, "%s: out of memory", file);
	if (!tr)
		return hb_sw_missing(err, file, "", "trace");
	if (hb_sw_object_at(tr, file, "", "trace", err) < 0 || hb_sw_check_keys(tr, file, pre, trace_keys, err) < 0)
		return -1;
	fv = cJSON_GetObjectItemCaseSensitive(tr, "file");
	sv = cJSON_GetObjectItemCaseSensitive(tr, "synthetic");
	if (!fv == !sv)
		return hb_sw_bad(err, file, "", "trace", tr, "give exactly one of 'file' and 'synthetic'");
	hb_trace_options_init(&t->topt);
	t->format = HB_TRACE_AUTO;
	if (fv) {
		cJSON *fmtv;

		if (hb_sw_get_file(tr, "file", file, pre, dir, t->file, sizeof(t->file), t->file_echo, sizeof(t->file_echo),
			     err) < 0 ||
		    hb_sw_get_str(tr, "format", file, pre, 0, "auto", fmt, sizeof(fmt), err) < 0)
			return -1;
		fmtv = cJSON_GetObjectItemCaseSensitive((cJSON *)tr, "format");
		if (hb_trace_format_parse(fmt, &t->format, err) < 0 || t->format == HB_TRACE_SYNTHETIC)
			return hb_sw_bad(err, file, pre, "format", fmtv,
				   "not a trace file format (auto, philly-log, philly-csv, pollux-workload, easyscale-workload, "
				   "jobspec-csv, jobspec-json)");
		cJSON_AddStringToObject(te, "file", t->file_echo);
		cJSON_AddStringToObject(te, "format", fmt);
	} else {
		cJSON *se = cJSON_AddObjectToObject(te, "synthetic");

		if (cJSON_GetObjectItemCaseSensitive(tr, "format"))
			return hb_sw_bad(err, file, pre, "format", cJSON_GetObjectItemCaseSensitive(tr, "format"),
				   "only for a trace file (the generator has no format)");
		t->synthetic = 1;
		if (!se || parse_synth(sv, file, dir, t, se, err) < 0)
			return se ? -1 : hb_runtime_error(err, "%s: out of memory", file);
	}
	if (hb_sw_get_int(tr, "max_jobs", file, pre, 0, 1, 1L << 40, 0, &max_jobs, err) < 0 ||
	    hb_sw_get_num(tr, "from_s", file, pre, 0, -1e12, 1e12, -INFINITY, &t->topt.from_s, err) < 0 ||
	    hb_sw_get_num(tr, "to_s", file, pre, 0, -1e12, 1e12, INFINITY, &t->topt.to_s, err) < 0 ||
	    hb_sw_get_str(tr, "vc", file, pre, 0, "", t->topt.vc, sizeof(t->topt.vc), err) < 0 ||
	    hb_sw_get_str(tr, "status", file, pre, 0, "", t->topt.status, sizeof(t->topt.status), err) < 0 ||
	    hb_sw_get_str(tr, "attempts", file, pre, 0, "first", attempts, sizeof(attempts), err) < 0 ||
	    hb_sw_get_int(tr, "min_gpus", file, pre, 0, 1, 1L << 20, 1, &lo, err) < 0 ||
	    hb_sw_get_int(tr, "max_gpus", file, pre, 0, 1, 1L << 20, 0, &hi, err) < 0 ||
	    hb_sw_get_bool(tr, "duration_from_trace", file, pre, 0, &t->duration_from_trace, err) < 0)
		return -1;
	if (strcmp(attempts, "first") != 0 && strcmp(attempts, "all") != 0)
		return hb_sw_bad(err, file, pre, "attempts", cJSON_GetObjectItemCaseSensitive(tr, "attempts"),
			   "must be \"first\" or \"all\" (Philly log attempts)");
	t->topt.attempts = attempts[0] == 'a' ? HB_ATTEMPTS_ALL : HB_ATTEMPTS_FIRST;
	if (t->topt.from_s >= t->topt.to_s)
		return hb_sw_bad(err, file, pre, "to_s", cJSON_GetObjectItemCaseSensitive(tr, "to_s"),
			   "must be after 'from_s'");
	if (hi > 0 && hi < lo)
		return hb_sw_bad(err, file, pre, "max_gpus", cJSON_GetObjectItemCaseSensitive(tr, "max_gpus"),
			   "must not be below 'min_gpus'");
	t->topt.max_jobs = max_jobs;
	t->topt.min_gpus = (int)lo;
	t->topt.max_gpus = (int)hi;
	if (max_jobs > 0)
		echo_num(te, "max_jobs", (double)max_jobs);
	if (isfinite(t->topt.from_s))
		echo_num(te, "from_s", t->topt.from_s);
	if (isfinite(t->topt.to_s))
		echo_num(te, "to_s", t->topt.to_s);
	if (t->topt.vc[0])
		cJSON_AddStringToObject(te, "vc", t->topt.vc);
	if (t->topt.status[0])
		cJSON_AddStringToObject(te, "status", t->topt.status);
	if (t->topt.attempts == HB_ATTEMPTS_ALL)
		cJSON_AddStringToObject(te, "attempts", "all");
	if (lo > 1)
		echo_num(te, "min_gpus", (double)lo);
	if (hi > 0)
		echo_num(te, "max_gpus", (double)hi);
	if (t->duration_from_trace)
		cJSON_AddBoolToObject(te, "duration_from_trace", 1);
	return 0;
}

/* ---- clusters ------------------------------------------------------------------------------ */

static const char *const cluster_keys[] = { "base", "label", "add", "comment", NULL };
static const char *const add_keys[] = { "gpu", "nodes", "gpus_per_node", "comment", NULL };

static int parse_cluster(const cJSON *c, int ci, const char *file, const char *dir, struct hb_sweep_cluster *sc,
			 cJSON *echo, struct hb_error *err)
{
	char pre[FIELD_MAX], apre[FIELD_MAX + 16], label[HB_SWEEP_LABEL_MAX + 64];
	const cJSON *add, *it;
	cJSON *ae = NULL;
	size_t len;
	int k = 0;

	snprintf(pre, sizeof(pre), "clusters[%d].", ci);
	if (!cJSON_IsObject(c)) {
		snprintf(pre, sizeof(pre), "clusters[%d]", ci);
		return hb_sw_bad(err, file, pre, "", c, "expected an object {\"base\": ..., \"add\": [...], \"label\": ...}");
	}
	if (hb_sw_check_keys(c, file, pre, cluster_keys, err) < 0 ||
	    hb_sw_get_str(c, "base", file, pre, 1, NULL, sc->base, sizeof(sc->base), err) < 0)
		return -1;
	if (hb_catalog_is_file_name(sc->base)) {
		char rel[HB_SWEEP_PATH_MAX];

		if (hb_sw_get_file(c, "base", file, pre, dir, rel, sizeof(rel), sc->base_echo, sizeof(sc->base_echo), err) < 0)
			return -1;
		hb_strlcpy(sc->base, rel, sizeof(sc->base));
		sc->base_is_file = 1;
	} else {
		hb_strlcpy(sc->base_echo, sc->base, sizeof(sc->base_echo));
	}
	add = cJSON_GetObjectItemCaseSensitive(c, "add");
	if (add && !cJSON_IsNull(add)) {
		if (!cJSON_IsArray(add))
			return hb_sw_bad(err, file, pre, "add", add, "expected an array of {\"gpu\", \"nodes\", \"gpus_per_node\"}");
		if (cJSON_GetArraySize(add) > HB_SWEEP_MAX_ADD) {
			char why[64];

			snprintf(why, sizeof(why), "more than %d node groups", HB_SWEEP_MAX_ADD);
			return hb_sw_bad(err, file, pre, "add", add, why);
		}
		if (!(ae = cJSON_CreateArray()))
			return hb_runtime_error(err, "%s: out of memory", file);
		cJSON_ArrayForEach(it, add) {
			struct hb_sweep_add *a = &sc->add[k];
			cJSON *o = cJSON_CreateObject();
			long nodes, per;

			snprintf(apre, sizeof(apre), "%sadd[%d]", pre, k);
			if (!o) {
				cJSON_Delete(ae);
				return hb_runtime_error(err, "%s: out of memory", file);
			}
			cJSON_AddItemToArray(ae, o);
			if (!cJSON_IsObject(it)) {
				cJSON_Delete(ae);
				return hb_sw_bad(err, file, apre, "", it, "expected an object {\"gpu\", \"nodes\", \"gpus_per_node\"}");
			}
			snprintf(apre, sizeof(apre), "%sadd[%d].", pre, k);
			if (hb_sw_check_keys(it, file, apre, add_keys, err) < 0 ||
			    hb_sw_get_str(it, "gpu", file, apre, 1, NULL, a->gpu, sizeof(a->gpu), err) < 0 ||
			    hb_sw_get_int(it, "nodes", file, apre, 1, 1, 10000, 0, &nodes, err) < 0 ||
			    hb_sw_get_int(it, "gpus_per_node", file, apre, 1, 1, 64, 0, &per, err) < 0) {
				cJSON_Delete(ae);
				return -1;
			}
			if (hb_catalog_is_file_name(a->gpu)) {
				char echo[HB_SWEEP_PATH_MAX];

				if (hb_sw_get_file(it, "gpu", file, apre, dir, a->gpu, sizeof(a->gpu), echo, sizeof(echo),
						   err) < 0) {
					cJSON_Delete(ae);
					return -1;
				}
			}
			a->nodes = (int)nodes;
			a->gpus_per_node = (int)per;
			cJSON_AddStringToObject(o, "gpu", a->gpu);
			cJSON_AddNumberToObject(o, "nodes", nodes);
			cJSON_AddNumberToObject(o, "gpus_per_node", per);
			k++;
		}
	}
	sc->nadd = k;
	len = (size_t)snprintf(label, sizeof(label), "%s", sc->base_echo);
	for (int i = 0; i < sc->nadd; i++)
		len += (size_t)snprintf(label + len, len < sizeof(label) ? sizeof(label) - len : 0, "+%d %s",
					sc->add[i].nodes * sc->add[i].gpus_per_node, sc->add[i].gpu);
	if (hb_sw_get_str(c, "label", file, pre, 0, NULL, sc->label, sizeof(sc->label), err) < 0) {
		cJSON_Delete(ae);
		return -1;
	}
	if (!sc->label[0]) {
		if (strlen(label) >= sizeof(sc->label)) {
			cJSON_Delete(ae);
			return hb_sw_bad(err, file, pre, "base", cJSON_GetObjectItemCaseSensitive(c, "base"),
				   "the default label is too long: give a 'label'");
		}
		hb_strlcpy(sc->label, label, sizeof(sc->label));
	}
	if (strchr(sc->label, '"')) {
		cJSON_Delete(ae);
		return hb_sw_bad(err, file, pre, "label", cJSON_GetObjectItemCaseSensitive(c, "label"),
			   "must not hold '\"' (labels go into plot data)");
	}
	cJSON_AddStringToObject(echo, "label", sc->label);
	cJSON_AddStringToObject(echo, "base", sc->base_echo);
	if (ae)
		cJSON_AddItemToObject(echo, "add", ae);
	return 0;
}

static int parse_clusters(const cJSON *root, const char *file, const char *dir, struct hb_sweep_config *cfg,
			  cJSON *echo, struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "clusters"), *it;
	cJSON *ce = cJSON_AddArrayToObject(echo, "clusters");
	int n, ci = 0;

	if (!ce)
		return hb_runtime_error(err, "%s: out of memory", file);
	if (!arr)
		return hb_sw_missing(err, file, "", "clusters");
	if (!cJSON_IsArray(arr) || (n = cJSON_GetArraySize(arr)) < 1 || n > HB_SWEEP_MAX_CLUSTERS) {
		char why[96];

		snprintf(why, sizeof(why), "expected an array of 1 to %d clusters", HB_SWEEP_MAX_CLUSTERS);
		return hb_sw_bad(err, file, "", "clusters", arr, why);
	}
	cfg->clusters = calloc((size_t)n, sizeof(*cfg->clusters));
	if (!cfg->clusters)
		return hb_runtime_error(err, "%s: out of memory", file);
	cJSON_ArrayForEach(it, arr) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return hb_runtime_error(err, "%s: out of memory", file);
		cJSON_AddItemToArray(ce, o);
		if (parse_cluster(it, ci, file, dir, &cfg->clusters[ci], o, err) < 0)
			return -1;
		for (int k = 0; k < ci; k++)
			if (strcmp(cfg->clusters[k].label, cfg->clusters[ci].label) == 0) {
				char pre[FIELD_MAX], why[256];

				snprintf(pre, sizeof(pre), "clusters[%d].", ci);
				snprintf(why, sizeof(why), "the label '%s' is also clusters[%d]'s (labels name the rows: "
							   "give each cluster its own 'label')",
					 cfg->clusters[ci].label, k);
				return hb_sw_bad(err, file, pre, "label", cJSON_GetObjectItemCaseSensitive(it, "label"), why);
			}
		cfg->nclusters = ++ci;
	}
	return 0;
}

/* ---- loads, policies, seeds ----------------------------------------------------------------- */

/* An optional array of 1..max items; *out NULL when absent. */
static int list_at(const cJSON *root, const char *key, const char *file, int max, const char *what,
		   const cJSON **out, struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
	int n;

	*out = NULL;
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr) || (n = cJSON_GetArraySize(arr)) < 1 || n > max) {
		char why[128];

		snprintf(why, sizeof(why), "expected an array of 1 to %d %s", max, what);
		return hb_sw_bad(err, file, "", key, arr, why);
	}
	*out = arr;
	return 0;
}

static int parse_loads(const cJSON *root, const char *file, struct hb_sweep_config *cfg, cJSON *echo,
		       struct hb_error *err)
{
	const cJSON *arr, *it;
	cJSON *le = cJSON_AddArrayToObject(echo, "loads");
	char field[32];
	int i = 0;

	if (!le || list_at(root, "loads", file, HB_SWEEP_MAX_LOADS, "load factors", &arr, err) < 0)
		return le ? -1 : hb_runtime_error(err, "%s: out of memory", file);
	if (!arr) {
		cfg->loads[0] = 1.0;
		cfg->nloads = 1;
	}
	cJSON_ArrayForEach(it, arr) {
		snprintf(field, sizeof(field), "loads[%d]", i);
		if (!cJSON_IsNumber(it) || !(it->valuedouble > 0 && it->valuedouble <= 1e6))
			return hb_sw_bad(err, file, "", field, it, "must be a load factor in (0, 1e6] (2 = twice the arrivals)");
		for (int k = 0; k < i; k++)
			if (cfg->loads[k] == it->valuedouble)
				return hb_sw_bad(err, file, "", field, it, "listed twice");
		cfg->loads[i++] = it->valuedouble;
		cfg->nloads = i;
	}
	for (int k = 0; k < cfg->nloads; k++)
		cJSON_AddItemToArray(le, cJSON_CreateNumber(cfg->loads[k]));
	return 0;
}

/* "policy_plugins": shared objects whose policies "policies" may then
 * name (plugin.h), each relative to the configuration's folder unless
 * absolute; loaded here, before the policies are looked up. */
static int parse_plugins(const cJSON *root, const char *file, const char *dir, cJSON *echo, struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "policy_plugins"), *it;
	cJSON *pe;
	char field[40], path[4096];
	int i = 0;

	if (!arr)
		return 0;
	if (list_at(root, "policy_plugins", file, 16, "shared object files", &arr, err) < 0)
		return -1;
	if (!(pe = cJSON_AddArrayToObject(echo, "policy_plugins")))
		return hb_runtime_error(err, "%s: out of memory", file);
	cJSON_ArrayForEach(it, arr) {
		snprintf(field, sizeof(field), "policy_plugins[%d]", i++);
		if (!cJSON_IsString(it) || !it->valuestring[0])
			return hb_sw_bad(err, file, "", field, it, "expected the path of a plugin (.so)");
		if (it->valuestring[0] == '/' || !dir || !dir[0])
			snprintf(path, sizeof(path), "%s", it->valuestring);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, it->valuestring);
		if (hb_plugin_load(path, err) < 0) {
			hb_error_prefix(err, "%s: field '%s'", file, field);
			return -1;
		}
		cJSON_AddItemToArray(pe, cJSON_CreateString(it->valuestring));
	}
	return 0;
}

static int parse_policies(const cJSON *root, const char *file, struct hb_sweep_config *cfg, cJSON *echo,
			  struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "policies"), *it;
	cJSON *pe = cJSON_AddArrayToObject(echo, "policies");
	char field[32], known[512] = "", shared[512] = "";
	size_t kl = 0, sl = 0;
	int i = 0, nshared = 0;

	if (!pe)
		return hb_runtime_error(err, "%s: out of memory", file);
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p)) {
		kl += (size_t)snprintf(known + kl, kl < sizeof(known) ? sizeof(known) - kl : 0, "%s%s", kl ? ", " : "",
				       p->name);
		if (p->shared)
			sl += (size_t)snprintf(shared + sl, sl < sizeof(shared) ? sizeof(shared) - sl : 0, "%s%s",
					       sl ? ", " : "", p->name);
	}
	if (!arr)
		return hb_sw_missing(err, file, "", "policies");
	if (list_at(root, "policies", file, HB_SWEEP_MAX_POLICIES, "policy names", &arr, err) < 0)
		return -1;
	cJSON_ArrayForEach(it, arr) {
		const struct hb_policy *p;
		char why[700];

		snprintf(field, sizeof(field), "policies[%d]", i);
		if (!cJSON_IsString(it))
			return hb_sw_bad(err, file, "", field, it, "expected a policy name");
		if (!(p = hb_policy_find(it->valuestring))) {
			char hint[128];

			snprintf(why, sizeof(why), "unknown policy (known: %.500s)%s", known,
				 hb_policy_suggest(it->valuestring, hint, sizeof(hint)));
			return hb_sw_bad(err, file, "", field, it, why);
		}
		for (int k = 0; k < i; k++)
			if (cfg->policies[k] == p)
				return hb_sw_bad(err, file, "", field, it, "listed twice");
		nshared += p->shared != NULL;
		cfg->policies[i++] = p;
		cfg->npolicies = i;
		cJSON_AddItemToArray(pe, cJSON_CreateString(p->name));
	}
	if (nshared == 0) {
		char why[700];

		snprintf(why, sizeof(why), "no listed policy has a shared-cluster arbiter yet (policies with one: %.600s)",
			 shared);
		return hb_sw_bad(err, file, "", "policies", arr, why);
	}
	return 0;
}

static int parse_seeds(const cJSON *root, const char *file, uint64_t default_seed, struct hb_sweep_config *cfg,
		       cJSON *echo, struct hb_error *err)
{
	const cJSON *arr, *it;
	cJSON *se = cJSON_AddArrayToObject(echo, "seeds");
	char field[32];
	int i = 0;

	if (!se || list_at(root, "seeds", file, HB_SWEEP_MAX_SEEDS, "seeds", &arr, err) < 0)
		return se ? -1 : hb_runtime_error(err, "%s: out of memory", file);
	cfg->seeds = calloc(arr ? (size_t)cJSON_GetArraySize(arr) : 1, sizeof(*cfg->seeds));
	if (!cfg->seeds)
		return hb_runtime_error(err, "%s: out of memory", file);
	if (!arr) {
		cfg->seeds[0] = default_seed;
		cfg->nseeds = 1;
	}
	cJSON_ArrayForEach(it, arr) {
		snprintf(field, sizeof(field), "seeds[%d]", i);
		if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 0 ||
		    it->valuedouble > 2147483647.0)
			return hb_sw_bad(err, file, "", field, it, "must be an integer in [0, 2147483647]");
		for (int k = 0; k < i; k++)
			if (cfg->seeds[k] == (uint64_t)it->valuedouble)
				return hb_sw_bad(err, file, "", field, it, "listed twice");
		cfg->seeds[i++] = (uint64_t)it->valuedouble;
		cfg->nseeds = i;
	}
	for (int k = 0; k < cfg->nseeds; k++)
		cJSON_AddItemToArray(se, cJSON_CreateNumber((double)cfg->seeds[k]));
	return 0;
}

/* ---- knobs: the what-if options of `hetbatch sim` ------------------------------------------ */

/* The simulator's own knob keys; the policies' (their knob tables'
 * sweep keys, policy_knob.h) go after max_sim_s, before progress. */
static const char *const core_keys[] = { "interval", "restart_cost", "reconfig_cost", "gns_overhead",
					 "similarity_cost", "unequal_penalty", "max_sim_s", NULL };
static const char *const tail_keys[] = { "progress", "comment", NULL };

/* Every key of "knobs", in the order the error for an unknown one lists them. */
static void knob_keys(const char **keys, size_t max)
{
	const struct hb_pknob *pk;
	size_t n = 0;

	for (int i = 0; core_keys[i] && n + 1 < max; i++)
		keys[n++] = core_keys[i];
	for (int i = 0; (pk = hb_policy_knob(i, NULL)) && n + 1 < max; i++)
		if (pk->sweep)
			keys[n++] = pk->sweep;
	for (int i = 0; tail_keys[i] && n + 1 < max; i++)
		keys[n++] = tail_keys[i];
	keys[n] = NULL;
}

/* knobs.KEY of a policy's knob pk (its sweep key), into the settings s
 * when given. */
static int get_policy_knob(const cJSON *k, const char *file, const char *pre, const struct hb_pknob_table *t,
			   const struct hb_pknob *pk, struct hb_pknob_settings *s, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, pk->sweep);
	double dflt = hb_pknob_get(pk, t->defaults), x = dflt;
	struct hb_error why = { 0 };
	char word[64];
	long n;
	int b;

	if (!v || cJSON_IsNull(v))
		return 0; /* the default */
	switch (pk->type) {
	case HB_PKNOB_FLAG:
	case HB_PKNOB_SWITCH:
		if (hb_sw_get_bool(k, pk->sweep, file, pre, dflt != 0, &b, err) < 0)
			return -1;
		x = b;
		break;
	case HB_PKNOB_WORDS:
		if (hb_sw_get_str(k, pk->sweep, file, pre, 0, NULL, word, sizeof(word), err) < 0)
			return -1;
		if (hb_pknob_parse(pk, word, &x, &why) < 0) {
			/* "--easyscale-restart: 'x' is not model or artifact": the part after the option */
			const char *colon = strstr(why.msg, ": ");

			return hb_sw_bad(err, file, pre, pk->sweep, v, colon ? colon + 2 : why.msg);
		}
		break;
	case HB_PKNOB_INT:
		if (hb_sw_get_int(k, pk->sweep, file, pre, 0, (long)pk->min, (long)pk->max, (long)dflt, &n, err) < 0)
			return -1;
		x = (double)n;
		break;
	default:
		if (hb_sw_get_num(k, pk->sweep, file, pre, 0, pk->min, pk->max, dflt, &x, err) < 0)
			return -1;
	}
	return hb_pknob_set(s, pk, x, err);
}

/* The echo of a policy's knob: its value in the settings s. */
static void echo_policy_knob(cJSON *ke, const struct hb_pknob_table *t, const struct hb_pknob *pk,
			     const struct hb_pknob_settings *s)
{
	double v = hb_pknob_value(t, pk, s);

	switch (pk->type) {
	case HB_PKNOB_FLAG:
	case HB_PKNOB_SWITCH: cJSON_AddBoolToObject(ke, pk->sweep, v != 0); break;
	case HB_PKNOB_WORDS: cJSON_AddStringToObject(ke, pk->sweep, pk->words[(int)v]); break;
	default: echo_num(ke, pk->sweep, v);
	}
}

/* knobs.progress: a progress model's name (stats.h), as `sim --progress`. */
static int get_progress(const cJSON *k, const char *file, const char *pre, enum hb_progress_model *out,
			struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, "progress");
	char name[32], why[128];

	if (hb_sw_get_str(k, "progress", file, pre, 0, hb_progress_name(*out), name, sizeof(name), err) < 0)
		return -1;
	if (hb_progress_parse(name, "progress", out, err) == 0)
		return 0;
	snprintf(why, sizeof(why), "not a progress model (valid: %s)", hb_progress_names());
	return hb_sw_bad(err, file, pre, "progress", v, why);
}

static int parse_knobs(const cJSON *root, const char *file, struct hb_sweep_config *cfg, cJSON *echo,
		       struct hb_error *err)
{
	static const char pre[] = "knobs.";
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "knobs");
	struct hb_sim_opts *o = &cfg->opts;
	cJSON *ke = cJSON_AddObjectToObject(echo, "knobs");
	const char *keys[sizeof(core_keys) / sizeof(*core_keys) + HB_PKNOB_MAX + sizeof(tail_keys) / sizeof(*tail_keys)];
	const struct hb_pknob_table *t;
	const struct hb_pknob *pk;
	long interval;

	if (!ke)
		return hb_runtime_error(err, "%s: out of memory", file);
	hb_sim_opts_default(o);
	knob_keys(keys, sizeof(keys) / sizeof(keys[0]));
	if (k && !cJSON_IsNull(k)) {
		if (hb_sw_object_at(k, file, "", "knobs", err) < 0 || hb_sw_check_keys(k, file, pre, keys, err) < 0 ||
		    hb_sw_get_int(k, "interval", file, pre, 0, 1, 1L << 30, 0, &interval, err) < 0 ||
		    hb_sw_get_num(k, "restart_cost", file, pre, 0, 0, 1e7, o->restart_const_s, &o->restart_const_s, err) < 0 ||
		    hb_sw_get_num(k, "reconfig_cost", file, pre, 0, 0, 1e7, o->reconfig_s, &o->reconfig_s, err) < 0 ||
		    hb_sw_get_num(k, "gns_overhead", file, pre, 0, 0, 10, o->gns_overhead, &o->gns_overhead, err) < 0 ||
		    hb_sw_get_bool(k, "similarity_cost", file, pre, o->similarity_cost, &o->similarity_cost, err) < 0 ||
		    hb_sw_get_num(k, "unequal_penalty", file, pre, 0, 0, 1e6, o->unequal_k, &o->unequal_k, err) < 0 ||
		    hb_sw_get_pos(k, "max_sim_s", file, pre, 1e12, o->max_sim_s, &o->max_sim_s, err) < 0)
			return -1;
		for (int i = 0; (pk = hb_policy_knob(i, &t)); i++)
			if (pk->sweep && get_policy_knob(k, file, pre, t, pk, &o->knobs, err) < 0)
				return -1;
		if (get_progress(k, file, pre, &o->progress, err) < 0)
			return -1;
		o->interval = interval;
	}
	/* null = derived from the model or cluster, as `sim` shows "derived" */
	echo_num(ke, "interval", o->interval > 0 ? (double)o->interval : NAN);
	echo_num(ke, "restart_cost", o->restart_const_s >= 0 ? o->restart_const_s : NAN);
	echo_num(ke, "reconfig_cost", o->reconfig_s);
	echo_num(ke, "gns_overhead", o->gns_overhead >= 0 ? o->gns_overhead : NAN);
	cJSON_AddBoolToObject(ke, "similarity_cost", o->similarity_cost);
	echo_num(ke, "unequal_penalty", o->unequal_k);
	echo_num(ke, "max_sim_s", o->max_sim_s);
	for (int i = 0; (pk = hb_policy_knob(i, &t)); i++)
		if (pk->sweep)
			echo_policy_knob(ke, t, pk, &o->knobs);
	cJSON_AddStringToObject(ke, "progress", hb_progress_name(o->progress));
	o->quiet = 1;
	return 0;
}

/* ---- the document ----------------------------------------------------------------------------- */

static const char *const top_keys[] = { "name", "trace", "clusters", "loads", "policy_plugins", "policies", "seeds",
					"fairness", "knobs", "comment", NULL };

/* Default name: the file's base name without .json. */
static void default_name(const char *file, char *buf, size_t size)
{
	size_t n;

	hb_strlcpy(buf, hb_sw_base_name(file), size);
	n = strlen(buf);
	if (n > 5 && strcmp(buf + n - 5, ".json") == 0)
		buf[n - 5] = '\0';
}

/* The generator's job count at every load, bounded before any point runs
 * (synth_specs in sweep.c would otherwise draw them one point at a time). */
static int check_synth_size(const struct hb_sweep_config *cfg, const char *name, struct hb_error *err)
{
	struct hb_synth_options o;

	if (!cfg->trace.synthetic)
		return 0;
	for (int k = 0; k < cfg->nloads; k++) {
		o = cfg->trace.synth;
		o.load = cfg->loads[k];
		if (hb_synth_check_size(&o, err) < 0) {
			hb_error_prefix(err, "%s: field 'trace.synthetic' at loads[%d] = %g", name, k, cfg->loads[k]);
			return -1;
		}
	}
	return 0;
}

int hb_sweep_config_parse(const char *text, size_t len, const char *name, const char *dir, uint64_t default_seed,
			  struct hb_sweep_config *cfg, struct hb_error *err)
{
	cJSON *root, *echo;
	char dflt[HB_SWEEP_LABEL_MAX];
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	hb_strlcpy(cfg->path, name, sizeof(cfg->path));
	if (!(root = hb_json_parse(text, len, name, err)))
		return -1;
	if (!(echo = cJSON_CreateObject())) {
		cJSON_Delete(root);
		return hb_runtime_error(err, "%s: out of memory", name);
	}
	default_name(name, dflt, sizeof(dflt));
	if (!cJSON_IsObject(root)) {
		hb_sw_bad(err, name, "", "(top level)", root, "expected an object {\"trace\", \"clusters\", \"policies\", ...}");
		goto out;
	}
	if (hb_sw_check_keys(root, name, "", top_keys, err) < 0 ||
	    hb_sw_get_str(root, "name", name, "", 0, dflt, cfg->name, sizeof(cfg->name), err) < 0)
		goto out;
	cJSON_AddStringToObject(echo, "name", cfg->name);
	if (parse_trace(root, name, dir, cfg, echo, err) < 0 || parse_clusters(root, name, dir, cfg, echo, err) < 0 ||
	    parse_loads(root, name, cfg, echo, err) < 0 || parse_plugins(root, name, dir, echo, err) < 0 ||
	    parse_policies(root, name, cfg, echo, err) < 0 ||
	    parse_seeds(root, name, default_seed, cfg, echo, err) < 0 ||
	    hb_sw_get_bool(root, "fairness", name, "", 0, &cfg->fairness, err) < 0)
		goto out;
	cJSON_AddBoolToObject(echo, "fairness", cfg->fairness);
	if (parse_knobs(root, name, cfg, echo, err) < 0 || check_synth_size(cfg, name, err) < 0)
		goto out;
	if ((long)cfg->nclusters * cfg->nloads * cfg->npolicies * cfg->nseeds > HB_SWEEP_MAX_POINTS) {
		hb_input_error(err, "%s: %d clusters x %d loads x %d policies x %d seeds is more than %d points", name,
			       cfg->nclusters, cfg->nloads, cfg->npolicies, cfg->nseeds, HB_SWEEP_MAX_POINTS);
		goto out;
	}
	cfg->echo = echo;
	echo = NULL;
	rc = 0;
out:
	cJSON_Delete(echo);
	cJSON_Delete(root);
	if (rc < 0) {
		struct hb_error keep = *err;

		hb_sweep_config_free(cfg);
		*err = keep;
	}
	return rc;
}

int hb_sweep_config_load(const char *path, uint64_t default_seed, struct hb_sweep_config *cfg, struct hb_error *err)
{
	char dir[HB_SWEEP_PATH_MAX], *text, *slash;
	size_t len;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (hb_strlcpy(dir, path, sizeof(dir)) >= sizeof(dir))
		return hb_input_error(err, "%s: path too long", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		dir[0] = '\0';
	if (hb_read_text_file(path, 0, &text, &len, err) < 0)
		return -1;
	if (memchr(text, '\0', len)) {
		free(text);
		return hb_input_error(err, "%s: NUL byte in JSON file", path);
	}
	rc = hb_sweep_config_parse(text, len, path, dir, default_seed, cfg, err);
	free(text);
	return rc;
}

void hb_sweep_config_free(struct hb_sweep_config *cfg)
{
	free(cfg->clusters);
	free(cfg->seeds);
	cJSON_Delete(cfg->echo);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- points ------------------------------------------------------------------------------------- */

int hb_sweep_npoints(const struct hb_sweep_config *cfg)
{
	return cfg->nclusters * cfg->nloads * cfg->npolicies * cfg->nseeds;
}

void hb_sweep_point_of(const struct hb_sweep_config *cfg, int id, struct hb_sweep_point *p)
{
	p->id = id;
	p->seed = id % cfg->nseeds;
	id /= cfg->nseeds;
	p->policy = id % cfg->npolicies;
	id /= cfg->npolicies;
	p->load = id % cfg->nloads;
	p->cluster = id / cfg->nloads;
}
