/*
 * alibaba_nodes.c: openb_node_list_*.csv -> a catalog cluster (alibaba.h).
 *
 * Columns sn,cpu_milli,memory_mib,gpu,model (any order, extra columns
 * ignored).  A row with gpu 0 is a CPU node: left out and counted, its
 * model may be empty.  Every other row needs a known model code.
 *
 * The trace says nothing about interconnects, storage or restarts; the
 * cluster uses the values hetbatch assumes for a cloud cluster of PCIe
 * servers, those of the catalog's "easyscale" preset (another production
 * cluster of V100, P100 and T4 servers): PCIe 3.0 x16 inside a node
 * (15.75 GB/s), 25 Gb/s Ethernet between nodes (3.125 GB/s), 1.25 GB/s
 * checkpoint storage, 20 s restart latency.  Stated in the cluster's source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alibaba.h"
#include "csv.h"
#include "strutil.h"
#include "trace_priv.h"

#define MAX_NODES 100000
/* The catalog's limit per node (models/catalog_cluster.c). */
#define MAX_GPUS_PER_NODE 64

#define INTRA_LINK "pcie3-x16"
#define INTRA_BW 15.75e9
#define INTER_LINK "eth-25g"
#define INTER_BW 3.125e9
#define STORAGE_BW 1.25e9
#define RESTART_S 20.0

enum { C_SN, C_CPU, C_MEM, C_GPU, C_MODEL, C_N };

struct node {
	char name[HB_NAME_MAX];
	long gpus;
	int code;               /* index into the code table */
	long line;
};

static int code_of(const char *model)
{
	for (int i = 0; i < HB_ALIBABA_NGPUS; i++)
		if (hb_strcaseeq(model, hb_alibaba_gpu_code(i)))
			return i;
	return -1;
}

/* One row into *v (a GPU node) or *skipped (a CPU node): 1 kept, 0 skipped, -1 error. */
static int read_row(struct hb_csv *c, const int *idx, struct node *v, struct hb_error *err)
{
	char where[1200], q[HB_QUOTE_MAX];
	long cpu, mem, gpus;
	const char *model;

	snprintf(where, sizeof(where), "%s:%ld", c->path, c->line);
	if (hb_csv_check_width(c, err) < 0 || hb_csv_long_range(c, idx[C_CPU], 0, 100000000, &cpu, err) < 0 ||
	    hb_csv_long_range(c, idx[C_MEM], 0, 1L << 40, &mem, err) < 0 ||
	    hb_csv_long_range(c, idx[C_GPU], 0, MAX_GPUS_PER_NODE, &gpus, err) < 0)
		return -1;
	model = hb_trim(c->field[idx[C_MODEL]]);
	if (gpus == 0)
		return 0;
	v->code = code_of(model);
	if (v->code < 0) {
		if (!model[0])
			return hb_input_error(err, "%s: field 'model': empty for a node with %ld GPUs (known: %s)", where,
					      gpus, hb_alibaba_gpu_codes());
		return hb_input_error(err, "%s: field 'model': value '%s': not a GPU model of the trace (known: %s)",
				      where, hb_trace_quote(q, sizeof(q), model), hb_alibaba_gpu_codes());
	}
	if (hb_trace_node_name(c->field[idx[C_SN]], "sn", v->name, where, err) < 0)
		return -1;
	v->gpus = gpus;
	v->line = c->line;
	return 1;
}

static int read_nodes(const char *path, struct node **out, long *n, long *skipped, struct hb_error *err)
{
	static const char *const cols[] = { "sn", "cpu_milli", "memory_mib", "gpu", "model", NULL };
	struct hb_csv c;
	struct node *v = NULL;
	int idx[C_N];
	long cap = 0;
	int rc;

	*out = NULL;
	*n = *skipped = 0;
	if (hb_csv_open(&c, path, err) < 0)
		return -1;
	if (hb_csv_header(&c, cols, idx, err) < 0) {
		hb_csv_close(&c);
		return -1;
	}
	while ((rc = hb_csv_next(&c, err)) == 1) {
		if (*n == cap) {
			long ncap = cap ? 2 * cap : 256;
			struct node *nv;

			if (ncap > MAX_NODES) {
				rc = hb_input_error(err, "%s:%ld: more than %d nodes", path, c.line, MAX_NODES);
				break;
			}
			nv = realloc(v, (size_t)ncap * sizeof(*nv));
			if (!nv) {
				rc = hb_runtime_error(err, "%s: out of memory", path);
				break;
			}
			v = nv;
			cap = ncap;
		}
		rc = read_row(&c, idx, &v[*n], err);
		if (rc < 0)
			break;
		if (rc == 0)
			(*skipped)++;
		else
			(*n)++;
	}
	hb_csv_close(&c);
	if (rc < 0) {
		free(v);
		*n = 0;
		return -1;
	}
	*out = v;
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct node *)a)->name, ((const struct node *)b)->name);
}

static int check_unique(const char *path, const struct node *v, long n, struct hb_error *err)
{
	struct node *s;
	int rc = 0;

	if (n < 2)
		return 0;
	s = malloc((size_t)n * sizeof(*s));
	if (!s)
		return hb_runtime_error(err, "%s: out of memory", path);
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_node);
	for (long i = 1; i < n && rc == 0; i++) {
		const struct node *a = &s[i - 1], *b = &s[i];

		if (strcmp(a->name, b->name) == 0)
			rc = hb_input_error(err, "%s:%ld: field 'sn': '%s' already listed on line %ld", path,
					    a->line > b->line ? a->line : b->line, a->name,
					    a->line > b->line ? b->line : a->line);
	}
	free(s);
	return rc;
}

static cJSON *make_doc(const char *name, const char *display, const char *source, const struct node *v, long n,
		       const struct hb_alibaba_gpus *map)
{
	cJSON *doc = cJSON_CreateObject(), *arr, *cl, *groups;

	arr = doc ? cJSON_AddArrayToObject(doc, "clusters") : NULL;
	cl = arr ? cJSON_CreateObject() : NULL;
	if (!cl || !cJSON_AddItemToArray(arr, cl)) {
		cJSON_Delete(cl);
		goto oom;
	}
	if (!cJSON_AddStringToObject(cl, "name", name) || !cJSON_AddStringToObject(cl, "display", display) ||
	    !cJSON_AddStringToObject(cl, "intra_link", INTRA_LINK) || !cJSON_AddNumberToObject(cl, "intra_bw", INTRA_BW) ||
	    !cJSON_AddStringToObject(cl, "inter_link", INTER_LINK) || !cJSON_AddNumberToObject(cl, "inter_bw", INTER_BW) ||
	    !cJSON_AddNumberToObject(cl, "storage_bw", STORAGE_BW) ||
	    !cJSON_AddNumberToObject(cl, "restart_latency_s", RESTART_S))
		goto oom;
	groups = cJSON_AddArrayToObject(cl, "groups");
	if (!groups)
		goto oom;
	for (long i = 0; i < n; i++) {
		cJSON *g = cJSON_CreateObject();

		if (!g || !cJSON_AddItemToArray(groups, g)) {
			cJSON_Delete(g);
			goto oom;
		}
		if (!cJSON_AddStringToObject(g, "name", v[i].name) ||
		    !cJSON_AddStringToObject(g, "gpu", hb_alibaba_gpu(map, hb_alibaba_gpu_code(v[i].code))) ||
		    !cJSON_AddNumberToObject(g, "nodes", 1) || !cJSON_AddNumberToObject(g, "gpus_per_node", (double)v[i].gpus))
			goto oom;
	}
	if (!cJSON_AddStringToObject(cl, "source", source))
		goto oom;
	return doc;
oom:
	cJSON_Delete(doc);
	return NULL;
}

int hb_alibaba_nodes_to_cluster(const struct hb_catalog *cat, const char *path, const char *name,
				const struct hb_alibaba_gpus *map, cJSON **out, struct hb_alibaba_nodes *info,
				struct hb_error *err)
{
	struct hb_alibaba_gpus def;
	struct hb_alibaba_nodes st = { 0 };
	struct node *v;
	long n;
	char display[HB_TEXT_MAX], source[HB_TEXT_MAX * 2], mapping[512];
	const char *base = strrchr(path, '/');
	size_t used = 0;

	*out = NULL;
	if (info)
		memset(info, 0, sizeof(*info));
	if (!map) {
		hb_alibaba_gpus_default(&def);
		map = &def;
	}
	if (read_nodes(path, &v, &n, &st.skipped, err) < 0)
		return -1;
	if (n == 0) {
		free(v);
		return hb_input_error(err, "%s: no node with GPUs", path);
	}
	if (check_unique(path, v, n, err) < 0) {
		free(v);
		return -1;
	}
	for (long i = 0; i < n; i++) {
		const char *gpu = hb_alibaba_gpu(map, hb_alibaba_gpu_code(v[i].code));

		if (cat && !hb_catalog_gpu(cat, gpu)) {
			free(v);
			return hb_input_error(err, "%s:%ld: model %s: GPU type '%s' is not in the catalog", path, v[i].line,
					      hb_alibaba_gpu_code(v[i].code), gpu);
		}
		st.gpus += v[i].gpus;
		st.gpus_by_code[v[i].code] += v[i].gpus;
	}
	st.nodes = n;
	mapping[0] = '\0';
	for (int k = 0; k < HB_ALIBABA_NGPUS && used < sizeof(mapping); k++)
		used += (size_t)snprintf(mapping + used, sizeof(mapping) - used, "%s%s -> %s", k ? ", " : "",
					 hb_alibaba_gpu_code(k), hb_alibaba_gpu(map, hb_alibaba_gpu_code(k)));
	snprintf(display, sizeof(display), "Alibaba GPU trace 2023 nodes from %.120s: %ld servers, %ld GPUs",
		 base ? base + 1 : path, n, st.gpus);
	snprintf(source, sizeof(source),
		 "alibaba/clusterdata cluster-trace-gpu-v2023 node list (Weng et al. ATC'23); GPU models %s (G2, G3 "
		 "undisclosed: assumed); links, storage and restart assumed as the easyscale preset's (PCIe 3.0 x16, "
		 "25 GbE, 1.25 GB/s, 20 s): the trace gives none",
		 mapping);
	*out = make_doc(name, display, source, v, n, map);
	free(v);
	if (!*out)
		return hb_runtime_error(err, "%s: out of memory", path);
	if (info)
		*info = st;
	return 0;
}
