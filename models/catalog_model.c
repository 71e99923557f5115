/*
 * catalog_model.c: DNN model entries.
 *
 * Gradient buckets come from the data ("buckets_mib", in reduction order, as
 * the JABAS bucket profiler writes them) or are derived the way PyTorch DDP
 * fills them: parameters in reverse order into buckets of at most
 * "bucket_cap_mib" (default 25 MiB, DDP's default), the remainder last.  The
 * derived split ignores DDP's small first bucket; only the total and the last
 * (exposed) bucket matter to the iteration-time model (notes/jabas.md 2.2).
 *
 * "arch" (optional) is the architecture template the synthetic workloads
 * follow (catalog.h struct hb_model_arch, profiler/workload_spec.c); a model
 * without one loads and simulates, but has no synthetic workload.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog_priv.h"
#include "json.h"
#include "strutil.h"

#define MIB 1048576.0
#define DDP_BUCKET_CAP_MIB 25.0
/* Given buckets must add up to the gradient bytes within this fraction. */
#define BUCKET_SUM_TOLERANCE 0.10

static const char *const model_keys[] = {
	"name", "display", "task", "dataset", "family", "params", "flops_per_sample", "act_bytes_per_sample",
	"param_bytes", "opt_offload", "buckets_mib", "bucket_cap_mib", "optimizer", "opt_state_bytes_per_param",
	"dataset_size", "m0", "min_gbs", "max_gbs", "min_lbs", "max_lbs", "lr_rule", "gamma", "adapt_rate", "adapt_interval",
	"target_epochs", "gns", "sim_noise_sigma", "fwd_fraction", "data_s_per_sample", "bn_sync_s", "init_s",
	"overrides", "source", "arch", "comment", NULL
};

/* Optimizers, and their state in bytes per parameter when the data gives none:
 * SGD keeps one momentum buffer, Adam-family two moments. */
static const struct {
	const char *name;
	double state_bytes;
} optimizers[] = { { "sgd", 4 }, { "adam", 8 }, { "adamw", 8 }, { "lamb", 8 } };

static const char *const lr_rules[] = { "sqrt", "linear", "adascale", "none" };

static int parse_enum(const cJSON *obj, const char *key, const char *where, const char *const *allowed, int n,
		      char *dst, size_t size, struct hb_error *err)
{
	char list[256] = "";

	if (hb_cat_text(obj, key, where, NULL, dst, size, err))
		return -1;
	for (int i = 0; i < n; i++) {
		if (strcmp(dst, allowed[i]) == 0)
			return i;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
	}
	return hb_input_error(err, "%s: field '%s': unknown value '%s' (expected one of: %s)", where, key, dst, list);
}

static int parse_buckets(const cJSON *obj, const char *where, struct hb_model *m, struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "buckets_mib");
	const cJSON *cap_item = cJSON_GetObjectItemCaseSensitive(obj, "bucket_cap_mib");
	double grad_bytes = m->params * m->param_bytes, sum = 0.0, cap;
	const cJSON *it;

	if (arr && !cJSON_IsNull(arr)) {
		if (cap_item)
			return hb_input_error(err, "%s: field 'bucket_cap_mib': give either 'buckets_mib' or "
					      "'bucket_cap_mib', not both", where);
		if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
			return hb_input_error(err, "%s: field 'buckets_mib': expected a non-empty array of sizes in MiB",
					      where);
		if (cJSON_GetArraySize(arr) > HB_MAX_BUCKETS)
			return hb_input_error(err, "%s: field 'buckets_mib': %d buckets, at most %d", where,
					      cJSON_GetArraySize(arr), HB_MAX_BUCKETS);
		cJSON_ArrayForEach(it, arr) {
			if (!cJSON_IsNumber(it) || !(it->valuedouble > 0) || it->valuedouble > 1e6)
				return hb_input_error(err, "%s: field 'buckets_mib': element %d: expected a size in (0, 1e6] MiB",
						      where, m->nbuckets);
			m->buckets[m->nbuckets++] = it->valuedouble * MIB;
			sum += it->valuedouble * MIB;
		}
		if (fabs(sum - grad_bytes) > BUCKET_SUM_TOLERANCE * grad_bytes)
			return hb_input_error(err,
					      "%s: field 'buckets_mib': buckets add up to %.1f MiB but params x param_bytes "
					      "is %.1f MiB (more than %.0f%% apart)",
					      where, sum / MIB, grad_bytes / MIB, BUCKET_SUM_TOLERANCE * 100);
		return 0;
	}
	if (hb_json_num_opt(obj, "bucket_cap_mib", where, 0.01, 1e6, DDP_BUCKET_CAP_MIB, &cap, err))
		return -1;
	cap *= MIB;
	if (ceil(grad_bytes / cap) > HB_MAX_BUCKETS)
		return hb_input_error(err, "%s: field 'bucket_cap_mib': %.0f MiB of gradients need %.0f buckets of %.2f "
				      "MiB, more than %d; raise the cap", where, grad_bytes / MIB, ceil(grad_bytes / cap),
				      cap / MIB, HB_MAX_BUCKETS);
	m->nbuckets = (int)ceil(grad_bytes / cap);
	for (int i = 0; i < m->nbuckets; i++)
		m->buckets[i] = i < m->nbuckets - 1 ? cap : grad_bytes - cap * (m->nbuckets - 1);
	return 0;
}

static int parse_gns(const cJSON *obj, const char *where, struct hb_model *m, struct hb_error *err)
{
	const cJSON *arr, *it;

	if (hb_json_array(obj, "gns", where, &arr, err))
		return -1;
	if (cJSON_GetArraySize(arr) < 2 || cJSON_GetArraySize(arr) > HB_MAX_GNS_POINTS)
		return hb_input_error(err, "%s: field 'gns': %d points; need 2 to %d [f, phi] pairs from f = 0 to f = 1",
				      where, cJSON_GetArraySize(arr), HB_MAX_GNS_POINTS);
	cJSON_ArrayForEach(it, arr) {
		const cJSON *f = cJSON_GetArrayItem(it, 0), *phi = cJSON_GetArrayItem(it, 1);
		int i = m->ngns;

		if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 || !cJSON_IsNumber(f) || !cJSON_IsNumber(phi))
			return hb_input_error(err, "%s: field 'gns': point %d: expected [f, phi] (two numbers)", where, i);
		if (!(f->valuedouble >= 0 && f->valuedouble <= 1))
			return hb_input_error(err, "%s: field 'gns': point %d: f = %g outside [0, 1]", where, i,
					      f->valuedouble);
		if (!(phi->valuedouble > 0 && phi->valuedouble <= 1e12))
			return hb_input_error(err, "%s: field 'gns': point %d: phi = %g must be in (0, 1e12] samples", where,
					      i, phi->valuedouble);
		if (i > 0 && !(f->valuedouble > m->gns_frac[i - 1]))
			return hb_input_error(err, "%s: field 'gns': point %d: f = %g does not increase (previous %g)", where,
					      i, f->valuedouble, m->gns_frac[i - 1]);
		m->gns_frac[i] = f->valuedouble;
		m->gns_phi[i] = phi->valuedouble;
		m->ngns++;
	}
	if (m->gns_frac[0] != 0.0 || m->gns_frac[m->ngns - 1] != 1.0)
		return hb_input_error(err, "%s: field 'gns': f must start at 0 and end at 1 (got %g .. %g)", where,
				      m->gns_frac[0], m->gns_frac[m->ngns - 1]);
	return 0;
}

static int parse_overrides(const cJSON *obj, const char *where, struct hb_model *m, struct hb_error *err)
{
	static const char *const keys[] = { "cluster", "gamma", "min_gbs", "max_gbs", "comment", NULL };
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "overrides"), *it;
	char w[HB_WHERE_MAX];

	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr))
		return hb_input_error(err, "%s: field 'overrides': expected an array", where);
	if (cJSON_GetArraySize(arr) > HB_MAX_OVERRIDES)
		return hb_input_error(err, "%s: field 'overrides': %d entries, at most %d", where, cJSON_GetArraySize(arr),
				      HB_MAX_OVERRIDES);
	cJSON_ArrayForEach(it, arr) {
		struct hb_model_override *o = &m->overrides[m->noverrides];
		double gamma;
		long lo, hi;

		snprintf(w, sizeof(w), "%.400s: overrides[%d]", where, m->noverrides);
		if (hb_json_check_keys(it, w, keys, err) ||
		    hb_cat_text(it, "cluster", w, NULL, o->cluster, sizeof(o->cluster), err) ||
		    hb_cat_check_name(o->cluster, w, "cluster", err) ||
		    hb_json_num_opt(it, "gamma", w, 0.0, 1.0, -1.0, &o->gamma, err) ||
		    hb_json_int_opt(it, "min_gbs", w, 1, 1000000000L, -1, &o->min_gbs, err) ||
		    hb_json_int_opt(it, "max_gbs", w, 1, 1000000000L, -1, &o->max_gbs, err))
			return -1;
		if (o->gamma < 0 && o->min_gbs < 0 && o->max_gbs < 0)
			return hb_input_error(err, "%s: overrides nothing (give 'gamma', 'min_gbs' or 'max_gbs')", w);
		for (int j = 0; j < m->noverrides; j++)
			if (hb_strcaseeq(m->overrides[j].cluster, o->cluster))
				return hb_input_error(err, "%s: field 'cluster': '%s' already has an override", w, o->cluster);
		m->noverrides++;
		hb_model_bounds(m, o->cluster, &gamma, &lo, &hi);
		if (lo > hi)
			return hb_input_error(err, "%s: min_gbs %ld > max_gbs %ld on cluster '%s'", w, lo, hi, o->cluster);
		if (m->min_lbs > lo)
			return hb_input_error(err, "%s: min_gbs %ld is below the model's min_lbs %ld", w, lo, m->min_lbs);
	}
	return 0;
}

/* ---------------------------------------------------------------- arch */

/* "arch": the architecture template (catalog.h struct hb_model_arch).  One
 * table row per class: its keys, its reader and its writer; the keys every
 * class has ("class", "source", "comment") are checked here. */

#define ARCH_INT_MAX 1000000000L

static int arch_int(const cJSON *a, const char *key, const char *w, long lo, long hi, long dflt, int required,
		    int *out, struct hb_error *err)
{
	long v;

	if (required ? hb_json_int(a, key, w, lo, hi, &v, err) : hb_json_int_opt(a, key, w, lo, hi, dflt, &v, err))
		return -1;
	*out = (int)v;
	return 0;
}

/* Optional array of integers in [lo, hi], at most max of them. */
static int arch_ints(const cJSON *a, const char *key, const char *w, long lo, long hi, int *out, int max, int *n,
		     struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(a, key), *it;

	*n = 0;
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr))
		return hb_input_error(err, "%s: field '%s': expected an array of integers", w, key);
	if (cJSON_GetArraySize(arr) > max)
		return hb_input_error(err, "%s: field '%s': %d entries, at most %d", w, key, cJSON_GetArraySize(arr), max);
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < (double)lo ||
		    it->valuedouble > (double)hi)
			return hb_input_error(err, "%s: field '%s': element %d: expected an integer in [%ld, %ld]", w, key,
					      *n, lo, hi);
		out[(*n)++] = (int)it->valuedouble;
	}
	return 0;
}

/* Optional array of k-tuples of integers, element j of each in [lo[j], hi[j]]. */
static int arch_tuples(const cJSON *a, const char *key, const char *w, int k, const char *form, const long *lo,
		       const long *hi, int *out, int max, int *n, struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(a, key), *it;

	*n = 0;
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr))
		return hb_input_error(err, "%s: field '%s': expected an array of %s", w, key, form);
	if (cJSON_GetArraySize(arr) > max)
		return hb_input_error(err, "%s: field '%s': %d entries, at most %d", w, key, cJSON_GetArraySize(arr), max);
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != k)
			return hb_input_error(err, "%s: field '%s': element %d: expected %s", w, key, *n, form);
		for (int j = 0; j < k; j++) {
			const cJSON *v = cJSON_GetArrayItem(it, j);

			if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < (double)lo[j] ||
			    v->valuedouble > (double)hi[j])
				return hb_input_error(err, "%s: field '%s': element %d: %s: entry %d must be an integer in "
						      "[%ld, %ld]", w, key, *n, form, j, lo[j], hi[j]);
			out[*n * k + j] = (int)v->valuedouble;
		}
		(*n)++;
	}
	return 0;
}

static const char *const conv_form = "[taps, in, out, level]";

static int arch_convs(const cJSON *a, const char *key, const char *w, long lo_level, long hi_level,
		      struct hb_arch_conv *out, int max, int *n, struct hb_error *err)
{
	const long lo[4] = { 1, 0, 0, lo_level }, hi[4] = { 100000, 100000, 100000, hi_level };
	int buf[HB_ARCH_MAX_CONVS * 4];

	if (arch_tuples(a, key, w, 4, conv_form, lo, hi, buf, max, n, err))
		return -1;
	for (int i = 0; i < *n; i++)
		out[i] = (struct hb_arch_conv){ buf[4 * i], buf[4 * i + 1], buf[4 * i + 2], buf[4 * i + 3] };
	return 0;
}

static int parse_transformer(const cJSON *a, const char *w, struct hb_model_arch *x, struct hb_error *err)
{
	if (arch_int(a, "layers", w, 1, 10000, 0, 1, &x->layers, err) ||
	    arch_int(a, "heads", w, 1, 4096, 0, 1, &x->heads, err) ||
	    hb_json_int_opt(a, "vocab", w, 0, ARCH_INT_MAX, 0, &x->vocab, err) ||
	    hb_json_num(a, "ffn_ratio", w, 0.01, 64.0, &x->ffn_ratio, err) ||
	    arch_int(a, "ffn_matrices", w, 2, 3, 2, 0, &x->ffn_matrices, err) ||
	    arch_int(a, "ffn_multiple", w, 1, 65536, 1, 0, &x->ffn_multiple, err) ||
	    hb_json_int_opt(a, "patch_dim", w, 0, ARCH_INT_MAX, 0, &x->patch_dim, err) ||
	    hb_json_int_opt(a, "classes", w, 0, ARCH_INT_MAX, 0, &x->classes, err) ||
	    hb_cat_bool_opt(a, "pooled", w, 0, &x->pooled, err))
		return -1;
	if (x->vocab > 0 && x->patch_dim > 0)
		return hb_input_error(err, "%s: field 'patch_dim': give either 'vocab' (token embedding) or 'patch_dim' "
				      "(patch embedding), not both", w);
	if (x->pooled && x->classes == 0)
		return hb_input_error(err, "%s: field 'pooled': a pooled head needs 'classes'", w);
	return 0;
}

static void write_transformer(struct hb_jw *jw, const struct hb_model_arch *x)
{
	hb_jw_num(jw, "layers", x->layers);
	hb_jw_num(jw, "heads", x->heads);
	hb_jw_num(jw, "vocab", (double)x->vocab);
	hb_jw_num(jw, "ffn_ratio", x->ffn_ratio);
	hb_jw_num(jw, "ffn_matrices", x->ffn_matrices);
	hb_jw_num(jw, "ffn_multiple", x->ffn_multiple);
	hb_jw_num(jw, "patch_dim", (double)x->patch_dim);
	hb_jw_num(jw, "classes", (double)x->classes);
	hb_jw_bool(jw, "pooled", x->pooled);
}

static const char *const blocks[] = { "bottleneck", "basic", "darknet" };

static int parse_cnn(const cJSON *a, const char *w, struct hb_model_arch *x, struct hb_error *err)
{
	const struct hb_arch_conv *last;

	if (arch_int(a, "in_channels", w, 1, 100000, 0, 1, &x->in_channels, err) ||
	    hb_json_int_opt(a, "classes", w, 0, ARCH_INT_MAX, 0, &x->classes, err) ||
	    arch_convs(a, "convs", w, -4, 12, x->convs, HB_ARCH_MAX_CONVS, &x->nconvs, err) ||
	    arch_int(a, "width0", w, 1, 4096, 1, 0, &x->width0, err) ||
	    arch_ints(a, "stages", w, 1, 1000, x->stages, HB_ARCH_MAX_LIST, &x->nstages, err) ||
	    arch_convs(a, "head_convs", w, -4, 12, x->head_convs, HB_ARCH_MAX_CONVS, &x->nhead_convs, err) ||
	    arch_int(a, "flatten", w, 0, 1000000, 0, 0, &x->flatten, err) ||
	    arch_ints(a, "dense", w, 1, 65536, x->dense, HB_ARCH_MAX_LIST, &x->ndense, err) ||
	    hb_json_int_opt(a, "dense_tokens", w, 1, 10000000, 1, &x->dense_tokens, err))
		return -1;
	if (x->nconvs == 0 || x->convs[0].in != 0)
		return hb_input_error(err, "%s: field 'convs': the first convolution must read the input (in 0)", w);
	if (x->nstages > 0) {
		if (hb_cat_text(a, "block", w, NULL, x->block, sizeof(x->block), err))
			return -1;
		if (strcmp(x->block, blocks[0]) && strcmp(x->block, blocks[1]) && strcmp(x->block, blocks[2]))
			return hb_input_error(err, "%s: field 'block': unknown value '%s' (expected one of: bottleneck, "
					      "basic, darknet)", w, x->block);
	} else if (cJSON_GetObjectItemCaseSensitive(a, "block")) {
		return hb_input_error(err, "%s: field 'block': given without 'stages'", w);
	}
	for (int i = 0; i < x->nhead_convs; i++)
		if (x->head_convs[i].out == 0 && x->classes == 0)
			return hb_input_error(err, "%s: field 'head_convs': element %d writes the classes (out 0) but "
					      "'classes' is not given", w, i);
	if (x->flatten > 0 && x->classes == 0)
		return hb_input_error(err, "%s: field 'flatten': a dense head needs 'classes'", w);
	if (x->flatten == 0 && (x->ndense > 0 || cJSON_GetObjectItemCaseSensitive(a, "dense_tokens")))
		return hb_input_error(err, "%s: field 'dense': a dense head needs 'flatten' (positions it reads)", w);
	last = x->nhead_convs ? &x->head_convs[x->nhead_convs - 1] : &x->convs[x->nconvs - 1];
	if (x->flatten == 0 && !(x->nhead_convs > 0 && last->out == 0))
		return hb_input_error(err, "%s: the network has no output: give 'flatten' and 'classes' (dense head) or "
				      "end 'head_convs' with a convolution writing the classes (out 0)", w);
	return 0;
}

/* Append [v0, ..., v(k-1)] to arr; on failure arr is deleted and NULL returned. */
static cJSON *add_tuple(cJSON *arr, const int *v, int k)
{
	cJSON *e = arr ? cJSON_CreateIntArray(v, k) : NULL;

	if (!e || !cJSON_AddItemToArray(arr, e)) {
		cJSON_Delete(e);
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

static cJSON *convs_json(const struct hb_arch_conv *c, int n)
{
	cJSON *arr = cJSON_CreateArray();

	for (int i = 0; arr && i < n; i++) {
		const int v[4] = { c[i].taps, c[i].in, c[i].out, c[i].level };

		arr = add_tuple(arr, v, 4);
	}
	return arr;
}

static void write_cnn(struct hb_jw *jw, const struct hb_model_arch *x)
{
	hb_jw_num(jw, "in_channels", x->in_channels);
	hb_jw_num(jw, "classes", (double)x->classes);
	hb_jw_add(jw, "convs", convs_json(x->convs, x->nconvs));
	if (x->nstages > 0) {
		hb_jw_str(jw, "block", x->block);
		hb_jw_num(jw, "width0", x->width0);
		hb_jw_add(jw, "stages", cJSON_CreateIntArray(x->stages, x->nstages));
	}
	if (x->nhead_convs > 0)
		hb_jw_add(jw, "head_convs", convs_json(x->head_convs, x->nhead_convs));
	if (x->flatten > 0) {
		hb_jw_num(jw, "flatten", x->flatten);
		hb_jw_add(jw, "dense", cJSON_CreateIntArray(x->dense, x->ndense));
		hb_jw_num(jw, "dense_tokens", (double)x->dense_tokens);
	}
}

static const char *const rnn_form = "[in, directions]";

static int parse_lstm(const cJSON *a, const char *w, struct hb_model_arch *x, struct hb_error *err)
{
	static const long rnn_lo[2] = { 0, 1 }, rnn_hi[2] = { 64, 2 };
	int buf[HB_ARCH_MAX_LIST * 2];

	if (hb_json_int_opt(a, "vocab", w, 0, ARCH_INT_MAX, 0, &x->vocab, err) ||
	    arch_int(a, "in_channels", w, 1, 100000, 1, 0, &x->in_channels, err) ||
	    arch_convs(a, "frontend", w, 1, 100000, x->frontend, HB_ARCH_MAX_LIST, &x->nfrontend, err) ||
	    arch_tuples(a, "rnn", w, 2, rnn_form, rnn_lo, rnn_hi, buf, HB_ARCH_MAX_LIST, &x->nrnn, err) ||
	    hb_json_int_opt(a, "classes", w, 0, ARCH_INT_MAX, 0, &x->classes, err))
		return -1;
	for (int i = 0; i < x->nrnn; i++) {
		x->rnn_in[i] = buf[2 * i];
		x->rnn_dirs[i] = buf[2 * i + 1];
	}
	if (x->nrnn == 0)
		return hb_input_error(err, "%s: field 'rnn': missing or empty (give [in, directions] per LSTM layer)", w);
	if (arch_int(a, "attention_after", w, 0, x->nrnn, 0, 0, &x->attention_after, err))
		return -1;
	if (x->nfrontend > 0 && x->frontend[0].in != 0)
		return hb_input_error(err, "%s: field 'frontend': the first convolution must read the input (in 0)", w);
	if (x->vocab > 0 && x->nfrontend > 0)
		return hb_input_error(err, "%s: field 'frontend': give either 'vocab' (embedding) or 'frontend', not both",
				      w);
	for (int i = 0; i < x->nfrontend; i++)
		if (x->frontend[i].out == 0)
			return hb_input_error(err, "%s: field 'frontend': element %d: out must be at least 1 channel", w, i);
	return 0;
}

static void write_lstm(struct hb_jw *jw, const struct hb_model_arch *x)
{
	cJSON *arr = cJSON_CreateArray();

	hb_jw_num(jw, "vocab", (double)x->vocab);
	hb_jw_num(jw, "in_channels", x->in_channels);
	if (x->nfrontend > 0)
		hb_jw_add(jw, "frontend", convs_json(x->frontend, x->nfrontend));
	for (int i = 0; arr && i < x->nrnn; i++) {
		const int v[2] = { x->rnn_in[i], x->rnn_dirs[i] };

		arr = add_tuple(arr, v, 2);
	}
	hb_jw_add(jw, "rnn", arr);
	hb_jw_num(jw, "attention_after", x->attention_after);
	hb_jw_num(jw, "classes", (double)x->classes);
}

static int parse_mlp(const cJSON *a, const char *w, struct hb_model_arch *x, struct hb_error *err)
{
	if (hb_json_int(a, "vocab", w, 1, ARCH_INT_MAX, &x->vocab, err) ||
	    arch_int(a, "lookups", w, 1, 100000, 0, 1, &x->lookups, err) ||
	    arch_int(a, "mlp_layers", w, 1, 64, 0, 1, &x->mlp_layers, err) ||
	    hb_json_int(a, "classes", w, 1, ARCH_INT_MAX, &x->classes, err))
		return -1;
	return 0;
}

static void write_mlp(struct hb_jw *jw, const struct hb_model_arch *x)
{
	hb_jw_num(jw, "vocab", (double)x->vocab);
	hb_jw_num(jw, "lookups", x->lookups);
	hb_jw_num(jw, "mlp_layers", x->mlp_layers);
	hb_jw_num(jw, "classes", (double)x->classes);
}

static const struct {
	const char *name;
	const char *const keys[16];  /* besides class, source, comment */
	int (*parse)(const cJSON *a, const char *where, struct hb_model_arch *x, struct hb_error *err);
	void (*write)(struct hb_jw *jw, const struct hb_model_arch *x);
} arch_classes[] = {
	{ "transformer",
	  { "layers", "heads", "vocab", "ffn_ratio", "ffn_matrices", "ffn_multiple", "patch_dim", "classes", "pooled",
	    NULL },
	  parse_transformer, write_transformer },
	{ "cnn",
	  { "in_channels", "classes", "convs", "block", "width0", "stages", "head_convs", "flatten", "dense",
	    "dense_tokens", NULL },
	  parse_cnn, write_cnn },
	{ "lstm", { "vocab", "in_channels", "frontend", "rnn", "attention_after", "classes", NULL }, parse_lstm,
	  write_lstm },
	{ "mlp", { "vocab", "lookups", "mlp_layers", "classes", NULL }, parse_mlp, write_mlp },
};

#define NARCH_CLASSES ((int)(sizeof(arch_classes) / sizeof(arch_classes[0])))

static int parse_arch(const cJSON *obj, const char *where, struct hb_model_arch *x, struct hb_error *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "arch");
	const char *keys[24];
	const char *names[NARCH_CLASSES];
	char w[HB_WHERE_MAX];
	int k = 0, c;

	if (!a || cJSON_IsNull(a))
		return 0;
	if (!cJSON_IsObject(a))
		return hb_input_error(err, "%s: field 'arch': expected an object", where);
	snprintf(w, sizeof(w), "%.400s: arch", where);
	for (int i = 0; i < NARCH_CLASSES; i++)
		names[i] = arch_classes[i].name;
	c = parse_enum(a, "class", w, names, NARCH_CLASSES, x->cls, sizeof(x->cls), err);
	if (c < 0)
		return -1;
	keys[k++] = "class";
	keys[k++] = "source";
	keys[k++] = "comment";
	for (int i = 0; arch_classes[c].keys[i]; i++)
		keys[k++] = arch_classes[c].keys[i];
	keys[k] = NULL;
	if (hb_json_check_keys(a, w, keys, err) || hb_cat_text(a, "source", w, NULL, x->source, sizeof(x->source), err))
		return -1;
	return arch_classes[c].parse(a, w, x, err);
}

static cJSON *arch_json(const struct hb_model_arch *x)
{
	struct hb_jw jw = { cJSON_CreateObject(), 0 };

	if (!jw.obj)
		return NULL;
	hb_jw_str(&jw, "class", x->cls);
	for (int i = 0; i < NARCH_CLASSES; i++)
		if (strcmp(x->cls, arch_classes[i].name) == 0)
			arch_classes[i].write(&jw, x);
	hb_jw_str(&jw, "source", x->source);
	return hb_jw_finish(&jw);
}

/* ---------------------------------------------------------------- model */

int hb_cat_parse_model(const cJSON *obj, const char *where, struct hb_model *m, struct hb_error *err)
{
	const char *opt_names[sizeof(optimizers) / sizeof(optimizers[0])];
	int nopt = (int)(sizeof(optimizers) / sizeof(optimizers[0])), opt;
	double dataset;

	for (int i = 0; i < nopt; i++)
		opt_names[i] = optimizers[i].name;
	if (hb_json_check_keys(obj, where, model_keys, err) ||
	    hb_cat_text(obj, "name", where, NULL, m->name, sizeof(m->name), err) ||
	    hb_cat_check_name(m->name, where, "name", err) ||
	    hb_cat_text(obj, "display", where, m->name, m->display, sizeof(m->display), err) ||
	    hb_cat_text(obj, "task", where, "unspecified", m->task, sizeof(m->task), err) ||
	    hb_cat_text(obj, "dataset", where, "unspecified", m->dataset, sizeof(m->dataset), err) ||
	    hb_cat_text(obj, "family", where, "user", m->family, sizeof(m->family), err) ||
	    hb_json_num(obj, "params", where, 1.0, 1e13, &m->params, err) ||
	    hb_json_num(obj, "flops_per_sample", where, 1.0, 1e17, &m->flops_per_sample, err) ||
	    hb_json_num(obj, "act_bytes_per_sample", where, 0.0, 1e13, &m->act_bytes_per_sample, err) ||
	    hb_json_num_opt(obj, "param_bytes", where, 1.0, 8.0, 4.0, &m->param_bytes, err) ||
	    hb_cat_bool_opt(obj, "opt_offload", where, 0, &m->opt_offload, err) ||
	    parse_buckets(obj, where, m, err))
		return -1;
	opt = parse_enum(obj, "optimizer", where, opt_names, nopt, m->optimizer, sizeof(m->optimizer), err);
	if (opt < 0 ||
	    hb_json_num_opt(obj, "opt_state_bytes_per_param", where, 0.0, 64.0, optimizers[opt].state_bytes,
			    &m->opt_state_bytes_per_param, err) ||
	    hb_json_num(obj, "dataset_size", where, 1.0, 1e13, &dataset, err) ||
	    hb_json_int(obj, "m0", where, 1, 1000000000L, &m->m0, err) ||
	    hb_json_int(obj, "min_gbs", where, 1, 1000000000L, &m->min_gbs, err) ||
	    hb_json_int(obj, "max_gbs", where, 1, 1000000000L, &m->max_gbs, err) ||
	    hb_json_int(obj, "min_lbs", where, 1, 1000000000L, &m->min_lbs, err) ||
	    hb_json_int_opt(obj, "max_lbs", where, 0, 1000000000L, 0, &m->max_lbs, err))
		return -1;
	m->dataset_size = dataset;
	if (m->min_gbs > m->max_gbs)
		return hb_input_error(err, "%s: field 'min_gbs': %ld is larger than max_gbs %ld", where, m->min_gbs,
				      m->max_gbs);
	if (m->m0 < m->min_gbs || m->m0 > m->max_gbs)
		return hb_input_error(err, "%s: field 'm0': %ld outside [min_gbs, max_gbs] = [%ld, %ld]", where, m->m0,
				      m->min_gbs, m->max_gbs);
	if (m->min_lbs > m->min_gbs)
		return hb_input_error(err, "%s: field 'min_lbs': %ld is larger than min_gbs %ld", where, m->min_lbs,
				      m->min_gbs);
	if (parse_enum(obj, "lr_rule", where, lr_rules, (int)(sizeof(lr_rules) / sizeof(lr_rules[0])), m->lr_rule,
		       sizeof(m->lr_rule), err) < 0 ||
	    hb_json_num(obj, "gamma", where, 0.0, 1.0, &m->gamma, err) ||
	    hb_json_num_opt(obj, "adapt_rate", where, 0.001, 0.999, 0.1, &m->adapt_rate, err) ||
	    hb_json_int_opt(obj, "adapt_interval", where, 1, 1000000000L, 100, &m->adapt_interval, err) ||
	    hb_json_num(obj, "target_epochs", where, 1e-3, 1e6, &m->target_epochs, err) ||
	    parse_gns(obj, where, m, err) ||
	    hb_json_num(obj, "sim_noise_sigma", where, 0.0, 1.0, &m->sim_noise_sigma, err) ||
	    hb_json_num(obj, "fwd_fraction", where, 0.01, 0.99, &m->fwd_fraction, err) ||
	    hb_json_num(obj, "data_s_per_sample", where, 0.0, 10.0, &m->data_s_per_sample, err) ||
	    hb_json_num_opt(obj, "bn_sync_s", where, 0.0, 10.0, 0.0, &m->bn_sync_s, err) ||
	    hb_json_num(obj, "init_s", where, 0.0, 86400.0, &m->init_s, err) ||
	    parse_overrides(obj, where, m, err) ||
	    hb_cat_text(obj, "source", where, NULL, m->source, sizeof(m->source), err) ||
	    parse_arch(obj, where, &m->arch, err))
		return -1;
	return 0;
}

cJSON *hb_model_to_json(const struct hb_model *m)
{
	struct hb_jw w = { cJSON_CreateObject(), 0 };
	cJSON *arr;

	if (!w.obj)
		return NULL;
	hb_jw_str(&w, "name", m->name);
	hb_jw_str(&w, "display", m->display);
	hb_jw_str(&w, "task", m->task);
	hb_jw_str(&w, "dataset", m->dataset);
	hb_jw_str(&w, "family", m->family);
	hb_jw_num(&w, "params", m->params);
	hb_jw_num(&w, "flops_per_sample", m->flops_per_sample);
	hb_jw_num(&w, "act_bytes_per_sample", m->act_bytes_per_sample);
	hb_jw_num(&w, "param_bytes", m->param_bytes);
	hb_jw_bool(&w, "opt_offload", m->opt_offload);
	arr = cJSON_CreateArray();
	for (int i = 0; arr && i < m->nbuckets; i++) {
		cJSON *n = cJSON_CreateNumber(m->buckets[i] / MIB);

		if (!n || !cJSON_AddItemToArray(arr, n)) {
			cJSON_Delete(n);
			w.failed = 1;
		}
	}
	hb_jw_add(&w, "buckets_mib", arr);
	hb_jw_str(&w, "optimizer", m->optimizer);
	hb_jw_num(&w, "opt_state_bytes_per_param", m->opt_state_bytes_per_param);
	hb_jw_num(&w, "dataset_size", m->dataset_size);
	hb_jw_num(&w, "m0", (double)m->m0);
	hb_jw_num(&w, "min_gbs", (double)m->min_gbs);
	hb_jw_num(&w, "max_gbs", (double)m->max_gbs);
	hb_jw_num(&w, "min_lbs", (double)m->min_lbs);
	if (m->max_lbs > 0)
		hb_jw_num(&w, "max_lbs", (double)m->max_lbs);
	hb_jw_str(&w, "lr_rule", m->lr_rule);
	hb_jw_num(&w, "gamma", m->gamma);
	hb_jw_num(&w, "adapt_rate", m->adapt_rate);
	hb_jw_num(&w, "adapt_interval", (double)m->adapt_interval);
	hb_jw_num(&w, "target_epochs", m->target_epochs);
	arr = cJSON_CreateArray();
	for (int i = 0; arr && i < m->ngns; i++) {
		double pt[2] = { m->gns_frac[i], m->gns_phi[i] };
		cJSON *p = cJSON_CreateDoubleArray(pt, 2);

		if (!p || !cJSON_AddItemToArray(arr, p)) {
			cJSON_Delete(p);
			w.failed = 1;
		}
	}
	hb_jw_add(&w, "gns", arr);
	hb_jw_num(&w, "sim_noise_sigma", m->sim_noise_sigma);
	hb_jw_num(&w, "fwd_fraction", m->fwd_fraction);
	hb_jw_num(&w, "data_s_per_sample", m->data_s_per_sample);
	hb_jw_num(&w, "bn_sync_s", m->bn_sync_s);
	hb_jw_num(&w, "init_s", m->init_s);
	if (m->noverrides > 0) {
		arr = cJSON_CreateArray();
		for (int i = 0; arr && i < m->noverrides; i++) {
			const struct hb_model_override *o = &m->overrides[i];
			struct hb_jw ow = { cJSON_CreateObject(), 0 };
			cJSON *oj;

			if (!ow.obj) {
				w.failed = 1;
				continue;
			}
			hb_jw_str(&ow, "cluster", o->cluster);
			if (o->gamma >= 0)
				hb_jw_num(&ow, "gamma", o->gamma);
			if (o->min_gbs >= 0)
				hb_jw_num(&ow, "min_gbs", (double)o->min_gbs);
			if (o->max_gbs >= 0)
				hb_jw_num(&ow, "max_gbs", (double)o->max_gbs);
			oj = hb_jw_finish(&ow);
			if (!oj || !cJSON_AddItemToArray(arr, oj)) {
				cJSON_Delete(oj);
				w.failed = 1;
			}
		}
		hb_jw_add(&w, "overrides", arr);
	}
	hb_jw_str(&w, "source", m->source);
	if (m->arch.cls[0])
		hb_jw_add(&w, "arch", arch_json(&m->arch));
	return hb_jw_finish(&w);
}
