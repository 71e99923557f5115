/*
 * catalog.c: loading catalog documents, lookups and the small model helpers.
 *
 * A document is a JSON object with optional arrays "gpus", "models" and
 * "clusters".  GPUs are read first (variants may name a base defined earlier
 * in the same array), then models, then clusters (which name GPU types).
 * Entries are appended as they are read; if any entry fails, everything the
 * document added is removed again, so a failed load leaves cat unchanged.
 *
 * Entry fields (optional ones in brackets; every object may also carry a
 * "comment" string, which is ignored; any other key is an error):
 *   gpu:     name [display] [aliases] fp32_tflops [tensor_tflops] mem_bytes
 *            mem_bw [price_per_hour] source
 *   variant: name [display] [aliases] base power_cap [perf_scale]
 *            [price_per_hour] source                       (catalog_gpu.c)
 *   model:   name [display task dataset family] params flops_per_sample
 *            act_bytes_per_sample [param_bytes opt_offload]
 *            [buckets_mib | bucket_cap_mib] optimizer [opt_state_bytes_per_param]
 *            dataset_size m0 min_gbs max_gbs min_lbs lr_rule gamma
 *            [adapt_rate adapt_interval] target_epochs gns (list of [f, phi])
 *            sim_noise_sigma fwd_fraction data_s_per_sample [bn_sync_s] init_s
 *            [overrides: {cluster [gamma] [min_gbs] [max_gbs]}] source
 *   cluster: name [display] [intra_link intra_bw inter_link inter_bw]
 *            storage_bw restart_latency_s groups source, each group
 *            [name] gpu nodes gpus_per_node [links] [rack nodes_per_rack]
 * Units: bytes, bytes/s, seconds, TFLOPS, $/h; bucket sizes in MiB as the
 * JABAS bucket profiler writes them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_priv.h"
#include "embedded.h"
#include "fileio.h"
#include "json.h"
#include "strutil.h"
#include "suggest.h"

extern const struct hb_embedded hb_catalog_data[];

enum kind { K_GPU, K_MODEL, K_CLUSTER, K_COUNT };

static const char *const kind_array[K_COUNT] = { "gpus", "models", "clusters" };
static const char *const kind_word[K_COUNT] = { "gpu", "model", "cluster" };

/* ---------------------------------------------------------------- helpers */

double hb_price_eq8(double nominal_tflops)
{
	return HB_PRICE_V100_PER_HOUR * nominal_tflops / HB_PRICE_V100_TFLOPS;
}

int hb_cat_text(const cJSON *obj, const char *key, const char *where, const char *dflt, char *dst,
		size_t size, struct hb_error *err)
{
	const char *s;

	if (dflt ? hb_json_str_opt(obj, key, where, dflt, &s, err) : hb_json_str(obj, key, where, &s, err))
		return -1;
	if (strlen(s) >= size)
		return hb_input_error(err, "%s: field '%s': text of %zu characters is too long (at most %zu)", where,
				      key, strlen(s), size - 1);
	hb_strlcpy(dst, s, size);
	return 0;
}

int hb_cat_check_name(const char *value, const char *where, const char *key, struct hb_error *err)
{
	const char *p;

	if (!value[0] || strlen(value) >= HB_NAME_MAX)
		return hb_input_error(err, "%s: field '%s': '%s' must have 1 to %d characters", where, key, value,
				      HB_NAME_MAX - 1);
	for (p = value; *p; p++) {
		int ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
			 (p > value && (*p == '-' || *p == '_' || *p == '.'));

		if (!ok)
			return hb_input_error(err,
					      "%s: field '%s': '%s' is not a valid name (lower-case letters, digits, "
					      "'-', '_', '.'; starting with a letter or digit)",
					      where, key, value);
	}
	return 0;
}

int hb_cat_bool_opt(const cJSON *obj, const char *key, const char *where, int dflt, int *out,
		    struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v)) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsBool(v))
		return hb_input_error(err, "%s: field '%s': expected true or false", where, key);
	*out = cJSON_IsTrue(v) ? 1 : 0;
	return 0;
}

void hb_jw_add(struct hb_jw *w, const char *key, cJSON *item)
{
	if (!item || !cJSON_AddItemToObject(w->obj, key, item)) {
		cJSON_Delete(item);
		w->failed = 1;
	}
}

void hb_jw_str(struct hb_jw *w, const char *key, const char *value)
{
	hb_jw_add(w, key, cJSON_CreateString(value));
}

void hb_jw_num(struct hb_jw *w, const char *key, double value)
{
	hb_jw_add(w, key, cJSON_CreateNumber(value));
}

void hb_jw_bool(struct hb_jw *w, const char *key, int value)
{
	hb_jw_add(w, key, cJSON_CreateBool(value));
}

cJSON *hb_jw_finish(struct hb_jw *w)
{
	if (!w->obj || w->failed) {
		cJSON_Delete(w->obj);
		return NULL;
	}
	return w->obj;
}

/* ---------------------------------------------------------------- lookups */

int hb_catalog_gpu_index(const struct hb_catalog *cat, const char *name)
{
	for (int i = 0; i < cat->ngpus; i++) {
		const struct hb_gpu *g = &cat->gpus[i];

		if (hb_strcaseeq(g->name, name))
			return i;
		for (int a = 0; a < g->naliases; a++)
			if (hb_strcaseeq(g->aliases[a], name))
				return i;
	}
	return -1;
}

const struct hb_gpu *hb_catalog_gpu(const struct hb_catalog *cat, const char *name)
{
	int i = hb_catalog_gpu_index(cat, name);

	return i < 0 ? NULL : &cat->gpus[i];
}

static int model_index(const struct hb_catalog *cat, const char *name)
{
	for (int i = 0; i < cat->nmodels; i++)
		if (hb_strcaseeq(cat->models[i].name, name))
			return i;
	return -1;
}

static int cluster_index(const struct hb_catalog *cat, const char *name)
{
	for (int i = 0; i < cat->nclusters; i++)
		if (hb_strcaseeq(cat->clusters[i].name, name))
			return i;
	return -1;
}

const struct hb_model *hb_catalog_model(const struct hb_catalog *cat, const char *name)
{
	int i = model_index(cat, name);

	return i < 0 ? NULL : &cat->models[i];
}

const struct hb_cluster *hb_catalog_cluster(const struct hb_catalog *cat, const char *name)
{
	int i = cluster_index(cat, name);

	return i < 0 ? NULL : &cat->clusters[i];
}

static const char *entry_name(const struct hb_catalog *cat, enum kind k, int i)
{
	return k == K_GPU ? cat->gpus[i].name : k == K_MODEL ? cat->models[i].name : cat->clusters[i].name;
}

static int entry_count(const struct hb_catalog *cat, enum kind k)
{
	return k == K_GPU ? cat->ngpus : k == K_MODEL ? cat->nmodels : cat->nclusters;
}

/* "a, b, c" (cut short with ", ..." when it does not fit). */
static void known_names(const struct hb_catalog *cat, enum kind k, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < entry_count(cat, k); i++) {
		const char *n = entry_name(cat, k, i);
		size_t need = strlen(n) + (i ? 2 : 0);

		if (used + need + 5 >= size) {
			snprintf(buf + used, size - used, ", ...");
			return;
		}
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", n);
	}
	if (!buf[0])
		snprintf(buf, size, "(none)");
}

/* hb_json_parse quotes the text near a syntax error verbatim, newlines
 * included; messages must stay on one line. */
static void one_line(struct hb_error *err)
{
	for (char *p = err ? err->msg : NULL; p && *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

static cJSON *parse_text(const char *text, size_t len, const char *name, struct hb_error *err)
{
	cJSON *root = hb_json_parse(text, len, name, err);

	if (!root)
		one_line(err);
	return root;
}

static cJSON *parse_file(const char *path, struct hb_error *err)
{
	cJSON *root = hb_json_load_file(path, err);

	if (!root)
		one_line(err);
	return root;
}

/* ------------------------------------------------------- arrays, rollback */

static void free_cluster(struct hb_cluster *c)
{
	free(c->nodes);
	c->nodes = NULL;
}

void hb_catalog_free(struct hb_catalog *cat)
{
	if (!cat)
		return;
	for (int i = 0; i < cat->nclusters; i++)
		free_cluster(&cat->clusters[i]);
	free(cat->gpus);
	free(cat->models);
	free(cat->clusters);
	memset(cat, 0, sizeof(*cat));
}

static int grow(void **arr, int n, size_t elem, struct hb_error *err)
{
	void *p = realloc(*arr, (size_t)(n + 1) * elem);

	if (!p)
		return hb_runtime_error(err, "out of memory growing the catalog");
	*arr = p;
	return 0;
}

struct counts {
	int ngpus, nmodels, nclusters;
};

static void rollback(struct hb_catalog *cat, const struct counts *c)
{
	for (int i = c->nclusters; i < cat->nclusters; i++)
		free_cluster(&cat->clusters[i]);
	cat->ngpus = c->ngpus;
	cat->nmodels = c->nmodels;
	cat->nclusters = c->nclusters;
}

/* ---------------------------------------------------------------- documents */

#define LOAD_REUSE_IDENTICAL 1 /* an entry equal to one already loaded is skipped, not a duplicate */

/* Where an entry is, for messages: "FILE: gpus[3] 'v100'" or "FILE: gpu 'v100'". */
static void entry_where(char *buf, size_t size, const char *file, enum kind k, int idx, const cJSON *obj)
{
	const cJSON *n = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, "name") : NULL;
	const char *name = cJSON_IsString(n) && n->valuestring[0] ? n->valuestring : NULL;

	if (idx >= 0)
		snprintf(buf, size, "%s: %s[%d]%s%.*s%s", file, kind_array[k], idx, name ? " '" : "", HB_NAME_MAX,
			 name ? name : "", name ? "'" : "");
	else
		snprintf(buf, size, "%s: %s%s%.*s%s", file, kind_word[k], name ? " '" : "", HB_NAME_MAX,
			 name ? name : "", name ? "'" : "");
}

/* Names of GPUs must differ from every other GPU's name and aliases. */
static int gpu_names_free(const struct hb_catalog *cat, const struct hb_gpu *g, const char *where,
			  struct hb_error *err)
{
	int j;

	for (int a = -1; a < g->naliases; a++) {
		const char *n = a < 0 ? g->name : g->aliases[a];

		j = hb_catalog_gpu_index(cat, n);
		if (j >= 0) {
			if (a < 0)
				return hb_input_error(err, "%s: duplicate gpu name '%s' (already defined%s%s)", where, n,
						      hb_strcaseeq(cat->gpus[j].name, n) ? "" : " as an alias of ",
						      hb_strcaseeq(cat->gpus[j].name, n) ? "" : cat->gpus[j].name);
			return hb_input_error(err, "%s: field 'aliases': '%s' already names gpu '%s'", where, n,
					      cat->gpus[j].name);
		}
		for (int b = -1; b < a; b++)
			if (hb_strcaseeq(n, b < 0 ? g->name : g->aliases[b]))
				return hb_input_error(err, "%s: field 'aliases': '%s' is given twice", where, n);
	}
	return 0;
}

/* Same content: compared through the JSON form, which holds every field
 * the data can set (struct padding makes memcmp unreliable). */
static int same_entry(cJSON *a, cJSON *b)
{
	int same = a && b && cJSON_Compare(a, b, 1);

	cJSON_Delete(a);
	cJSON_Delete(b);
	return same;
}

/* Read one entry of kind k from obj and append it (or find its identical
 * twin when flags allow).  *index receives its position in cat. */
static int load_entry(struct hb_catalog *cat, enum kind k, const cJSON *obj, const char *where, int flags,
		      int *index, struct hb_error *err)
{
	int existing;

	if (!cJSON_IsObject(obj))
		return hb_input_error(err, "%s: expected an object", where);
	if (k == K_GPU) {
		struct hb_gpu g;

		memset(&g, 0, sizeof(g));
		if (hb_cat_parse_gpu(cat, obj, where, &g, err))
			return -1;
		existing = hb_catalog_gpu_index(cat, g.name);
		if (existing >= 0 && (flags & LOAD_REUSE_IDENTICAL) &&
		    same_entry(hb_gpu_to_json(&g), hb_gpu_to_json(&cat->gpus[existing]))) {
			*index = existing;
			return 0;
		}
		if (gpu_names_free(cat, &g, where, err) || grow((void **)&cat->gpus, cat->ngpus, sizeof(g), err))
			return -1;
		cat->gpus[cat->ngpus] = g;
		*index = cat->ngpus++;
	} else if (k == K_MODEL) {
		struct hb_model *m = calloc(1, sizeof(*m));

		if (!m)
			return hb_runtime_error(err, "out of memory");
		if (hb_cat_parse_model(obj, where, m, err)) {
			free(m);
			return -1;
		}
		existing = model_index(cat, m->name);
		if (existing >= 0) {
			int same = (flags & LOAD_REUSE_IDENTICAL) &&
				   same_entry(hb_model_to_json(m), hb_model_to_json(&cat->models[existing]));

			free(m);
			if (!same)
				return hb_input_error(err, "%s: duplicate model name '%s'", where,
						      cat->models[existing].name);
			*index = existing;
			return 0;
		}
		if (grow((void **)&cat->models, cat->nmodels, sizeof(*m), err)) {
			free(m);
			return -1;
		}
		cat->models[cat->nmodels] = *m;
		free(m);
		*index = cat->nmodels++;
	} else {
		struct hb_cluster c;

		memset(&c, 0, sizeof(c));
		if (hb_cat_parse_cluster(cat, obj, where, &c, err))
			return -1;
		existing = cluster_index(cat, c.name);
		if (existing >= 0) {
			int same = (flags & LOAD_REUSE_IDENTICAL) &&
				   same_entry(hb_cluster_to_json(cat, &c), hb_cluster_to_json(cat, &cat->clusters[existing]));

			free_cluster(&c);
			if (!same)
				return hb_input_error(err, "%s: duplicate cluster name '%s'", where,
						      cat->clusters[existing].name);
			*index = existing;
			return 0;
		}
		if (grow((void **)&cat->clusters, cat->nclusters, sizeof(c), err)) {
			free_cluster(&c);
			return -1;
		}
		cat->clusters[cat->nclusters] = c;
		*index = cat->nclusters++;
	}
	return 0;
}

static int is_document(const cJSON *root)
{
	for (int k = 0; k < K_COUNT; k++)
		if (cJSON_GetObjectItemCaseSensitive(root, kind_array[k]))
			return 1;
	return 0;
}

/* Load a document.  With want >= 0 the document must hold exactly one entry
 * of that kind, whose index goes to *picked. */
static int load_document(struct hb_catalog *cat, const cJSON *root, const char *file, int flags, int want,
			 int *picked, struct hb_error *err)
{
	static const char *const keys[] = { "gpus", "models", "clusters", "comment", NULL };
	const cJSON *arr[K_COUNT] = { NULL, NULL, NULL };
	struct counts before = { cat->ngpus, cat->nmodels, cat->nclusters };
	char where[HB_WHERE_MAX];
	int total = 0;

	if (!cJSON_IsObject(root))
		return hb_input_error(err, "%s: expected a JSON object with \"gpus\", \"models\" or \"clusters\" arrays",
				      file);
	if (hb_json_check_keys(root, file, keys, err))
		return -1;
	for (int k = 0; k < K_COUNT; k++) {
		if (!cJSON_GetObjectItemCaseSensitive(root, kind_array[k]))
			continue;
		if (hb_json_array(root, kind_array[k], file, &arr[k], err))
			return -1;
		total += cJSON_GetArraySize(arr[k]);
	}
	if (total == 0)
		return hb_input_error(err, "%s: no entries: \"gpus\", \"models\" and \"clusters\" are all empty or absent",
				      file);
	if (want >= 0) {
		int n = arr[want] ? cJSON_GetArraySize(arr[want]) : 0;

		if (n != 1)
			return hb_input_error(err, "%s: field '%s': expected exactly one %s, found %d", file,
					      kind_array[want], kind_word[want], n);
	}
	for (int k = 0; k < K_COUNT; k++) {
		const cJSON *it;
		int i = 0;

		if (!arr[k])
			continue;
		cJSON_ArrayForEach(it, arr[k]) {
			int index;

			entry_where(where, sizeof(where), file, (enum kind)k, i, it);
			if (load_entry(cat, (enum kind)k, it, where, flags, &index, err)) {
				rollback(cat, &before);
				return -1;
			}
			if (k == want)
				*picked = index;
			i++;
		}
	}
	return 0;
}

int hb_catalog_load_json(struct hb_catalog *cat, const char *text, size_t len, const char *name,
			 struct hb_error *err)
{
	cJSON *root = parse_text(text, len, name, err);
	int rc;

	if (!root)
		return -1;
	rc = load_document(cat, root, name, 0, -1, NULL, err);
	cJSON_Delete(root);
	return rc;
}

int hb_catalog_load_file(struct hb_catalog *cat, const char *path, struct hb_error *err)
{
	cJSON *root = parse_file(path, err);
	int rc;

	if (!root)
		return -1;
	rc = load_document(cat, root, path, 0, -1, NULL, err);
	cJSON_Delete(root);
	return rc;
}

/* Every override must name a cluster of the built-in catalog: a misspelt
 * cluster name would silently drop the paper's settings. */
static int check_override_clusters(const struct hb_catalog *cat, struct hb_error *err)
{
	for (int i = 0; i < cat->nmodels; i++)
		for (int o = 0; o < cat->models[i].noverrides; o++)
			if (cluster_index(cat, cat->models[i].overrides[o].cluster) < 0)
				return hb_input_error(err, "models.json: model '%s': field 'overrides': unknown cluster '%s'",
						      cat->models[i].name, cat->models[i].overrides[o].cluster);
	return 0;
}

int hb_catalog_load_builtin(struct hb_catalog *cat, struct hb_error *err)
{
	memset(cat, 0, sizeof(*cat));
	/* gpus.json first: models and clusters refer to GPU types. */
	for (int pass = 0; pass < 3; pass++) {
		static const char *const order[] = { "gpus.json", "models.json", "clusters.json" };

		for (const struct hb_embedded *e = hb_catalog_data; e->name; e++) {
			if (strcmp(e->name, order[pass]) != 0)
				continue;
			if (hb_catalog_load_json(cat, e->data, e->len, e->name, err)) {
				hb_catalog_free(cat);
				hb_error_prefix(err, "built-in catalog");
				return -1;
			}
		}
	}
	if (check_override_clusters(cat, err)) {
		hb_catalog_free(cat);
		return -1;
	}
	return 0;
}

char *hb_catalog_suggest(const struct hb_catalog *cat, char kind, const char *name, char *buf, size_t size)
{
	enum kind k = kind == 'g' ? K_GPU : kind == 'm' ? K_MODEL : K_CLUSTER;
	struct hb_suggest s;

	hb_suggest_init(&s, name);
	for (int i = 0; i < entry_count(cat, k); i++)
		hb_suggest_add(&s, entry_name(cat, k, i));
	hb_suggest_format(&s, "", buf, size);
	return buf;
}

/* ---------------------------------------------------------------- resolve */

int hb_catalog_is_file_name(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 5 && hb_strcaseeq(s + n - 5, ".json"));
}

static int resolve(struct hb_catalog *cat, enum kind k, const char *name_or_path, int *index,
		   struct hb_error *err)
{
	char names[600];
	cJSON *root;
	int rc;

	if (!name_or_path || !name_or_path[0])
		return hb_input_error(err, "empty %s name", kind_word[k]);
	*index = k == K_GPU ? hb_catalog_gpu_index(cat, name_or_path)
		 : k == K_MODEL ? model_index(cat, name_or_path) : cluster_index(cat, name_or_path);
	if (*index >= 0)
		return 0;
	/* A path the user clearly meant as a file: say what is wrong with it. */
	if (hb_path_is_dir(name_or_path))
		return hb_input_error(err, "%s: is a directory, expected a %s JSON file or a catalog %s name", name_or_path,
				      kind_word[k], kind_word[k]);
	if (!hb_path_exists(name_or_path) && hb_catalog_is_file_name(name_or_path))
		return hb_input_error(err, "%s: no such file (and no catalog %s of that name)", name_or_path,
				      kind_word[k]);
	if (!hb_path_exists(name_or_path)) {
		char hint[256];

		hb_catalog_suggest(cat, "gmc"[k], name_or_path, hint, sizeof(hint));
		known_names(cat, k, names, sizeof(names));
		return hb_input_error(err, "unknown %s '%s' (neither a catalog name nor a JSON file); known %s: %s%s",
				      kind_word[k], name_or_path, kind_array[k], names, hint);
	}
	root = parse_file(name_or_path, err);
	if (!root)
		return -1;
	if (is_document(root)) {
		rc = load_document(cat, root, name_or_path, LOAD_REUSE_IDENTICAL, k, index, err);
	} else {
		char where[HB_WHERE_MAX];
		struct counts before = { cat->ngpus, cat->nmodels, cat->nclusters };

		entry_where(where, sizeof(where), name_or_path, k, -1, root);
		rc = load_entry(cat, k, root, where, LOAD_REUSE_IDENTICAL, index, err);
		if (rc)
			rollback(cat, &before);
	}
	cJSON_Delete(root);
	return rc;
}

int hb_catalog_resolve_model(struct hb_catalog *cat, const char *name_or_path, const struct hb_model **out,
			     struct hb_error *err)
{
	int i;

	if (resolve(cat, K_MODEL, name_or_path, &i, err))
		return -1;
	*out = &cat->models[i];
	return 0;
}

int hb_catalog_resolve_cluster(struct hb_catalog *cat, const char *name_or_path, const struct hb_cluster **out,
			       struct hb_error *err)
{
	int i;

	if (resolve(cat, K_CLUSTER, name_or_path, &i, err))
		return -1;
	*out = &cat->clusters[i];
	return 0;
}

int hb_cluster_check_size(const struct hb_cluster *cl, int max_gpus, const char *command, struct hb_error *err)
{
	if (cl->ngpus <= max_gpus)
		return 0;
	return hb_input_error(err,
			      "cluster '%s' has %d GPUs on %d nodes, more than the limit of %d GPUs for %s (its "
			      "allocation search grows with the square of the nodes)",
			      cl->name, cl->ngpus, cl->nnodes, max_gpus, command);
}

int hb_catalog_resolve_gpu(struct hb_catalog *cat, const char *name_or_path, const struct hb_gpu **out,
			   struct hb_error *err)
{
	int i;

	if (resolve(cat, K_GPU, name_or_path, &i, err))
		return -1;
	*out = &cat->gpus[i];
	return 0;
}

int hb_cluster_first_of_type(const struct hb_catalog *cat, const struct hb_cluster *cl, int k)
{
	const int g = cl->nodes[k].gpu;

	if (g < 0 || g >= cat->ngpus)
		return 0;
	for (int j = 0; j < k; j++)
		if (cl->nodes[j].gpu == g)
			return 0;
	return 1;
}

/* ---------------------------------------------------------- model helpers */

void hb_model_bounds(const struct hb_model *m, const char *cluster, double *gamma, long *min_gbs, long *max_gbs)
{
	double g = m->gamma;
	long lo = m->min_gbs, hi = m->max_gbs;

	for (int i = 0; cluster && i < m->noverrides; i++) {
		const struct hb_model_override *o = &m->overrides[i];

		if (!hb_strcaseeq(o->cluster, cluster))
			continue;
		if (o->gamma >= 0)
			g = o->gamma;
		if (o->min_gbs >= 0)
			lo = o->min_gbs;
		if (o->max_gbs >= 0)
			hi = o->max_gbs;
		break;
	}
	if (gamma)
		*gamma = g;
	if (min_gbs)
		*min_gbs = lo;
	if (max_gbs)
		*max_gbs = hi;
}

/* Piecewise linear in log(phi): the noise scale grows roughly geometrically
 * over training (Pollux's measured trajectories span 1-3 decades). */
double hb_model_gns(const struct hb_model *m, double f)
{
	int i;
	double t;

	if (m->ngns <= 0)
		return 0.0;
	if (m->ngns == 1 || !(f > m->gns_frac[0]))
		return m->gns_phi[0];
	if (f >= m->gns_frac[m->ngns - 1])
		return m->gns_phi[m->ngns - 1];
	for (i = 1; i < m->ngns - 1 && f > m->gns_frac[i]; i++)
		;
	t = (f - m->gns_frac[i - 1]) / (m->gns_frac[i] - m->gns_frac[i - 1]);
	return exp(log(m->gns_phi[i - 1]) + t * (log(m->gns_phi[i]) - log(m->gns_phi[i - 1])));
}

double hb_model_checkpoint_bytes(const struct hb_model *m)
{
	return m->params * (m->param_bytes + m->opt_state_bytes_per_param);
}

double hb_cluster_price_per_hour(const struct hb_catalog *cat, const struct hb_cluster *c)
{
	double sum = 0.0;

	for (int i = 0; i < c->nnodes; i++)
		if (c->nodes[i].gpu >= 0 && c->nodes[i].gpu < cat->ngpus)
			sum += c->nodes[i].ngpus * cat->gpus[c->nodes[i].gpu].price_per_hour;
	return sum;
}
