/*
 * philly_machines.c: cluster_machine_list -> a catalog cluster (philly.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "philly.h"
#include "strutil.h"
#include "trace_priv.h"

#define MAX_MACHINES 100000
/* The catalog's limit per node (models/catalog_cluster.c): a larger
 * machine would give a cluster the catalog rejects. */
#define MAX_GPUS_PER_MACHINE 64

/* Philly gives memory, not models (philly.h says why these two). */
static const struct {
	long gb;
	const char *gpu;
} mem_map[] = {
	{ 12, "p100" },
	{ 24, "p40" },
};

/* Cluster-wide settings when the catalog has no "philly" preset: the
 * preset's values (models/data/clusters.json). */
#define DEFAULT_INTRA_LINK "pcie3-x16"
#define DEFAULT_INTRA_BW 15.75e9
#define DEFAULT_INTER_LINK "ib-100g"
#define DEFAULT_INTER_BW 12.5e9
#define DEFAULT_STORAGE_BW 1.25e9
#define DEFAULT_RESTART_S 30.0

struct machine {
	char name[HB_NAME_MAX];
	long gpus;
	const char *gpu;
	long line;
};

/* "24GB", " 24 GB", "12G", "24" -> 24. */
static int parse_mem_gb(const char *s, long *gb)
{
	char buf[64], *p;
	size_t n;
	double v;

	if (hb_strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
		return -1;
	p = hb_trim(buf);
	n = strlen(p);
	if (n >= 3 && hb_strcaseeq(p + n - 3, "gib"))
		p[n - 3] = '\0';
	else if (n >= 2 && hb_strcaseeq(p + n - 2, "gb"))
		p[n - 2] = '\0';
	else if (n >= 1 && (p[n - 1] == 'g' || p[n - 1] == 'G'))
		p[n - 1] = '\0';
	if (hb_parse_double(p, &v) < 0 || v <= 0 || v > 1e6)
		return -1;
	*gb = (long)(v + 0.5);
	return 0;
}

static int cmp_machine(const void *a, const void *b)
{
	return strcmp(((const struct machine *)a)->name, ((const struct machine *)b)->name);
}

/* Read the rows; 1 if the first row is a header (its GPU field is not a number). */
static int read_machines(const char *path, struct machine **out, long *n, long *skipped, struct hb_error *err)
{
	static const char *const header[] = { "machineId", "number of GPUs", "single GPU mem" };
	struct hb_csv c;
	struct machine *v = NULL;
	long cap = 0;
	int rc;

	*out = NULL;
	*n = *skipped = 0;
	if (hb_csv_open(&c, path, err) < 0)
		return -1;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		char where[1200], q[HB_QUOTE_MAX];
		long gpus, gb;
		const char *gpu = NULL;

		snprintf(where, sizeof(where), "%s:%ld", path, c.line);
		if (c.nfield != 3) {
			rc = hb_input_error(err, "%s: expected 3 fields (machineId, number of GPUs, single GPU mem), "
					    "found %d", where, c.nfield);
			break;
		}
		if (c.line == 1 && hb_parse_long(c.field[1], &gpus) < 0) {
			for (int i = 0; i < 3; i++) {
				if (!hb_strcaseeq(hb_trim(c.field[i]), header[i])) {
					rc = hb_input_error(err, "%s: header column %d is '%s', expected '%s'", where,
							    i + 1, hb_trace_quote(q, sizeof(q), c.field[i]), header[i]);
					goto out;
				}
			}
			continue;
		}
		if (hb_parse_long_range(c.field[1], 0, MAX_GPUS_PER_MACHINE, &gpus) < 0) {
			rc = hb_input_error(err, "%s: field 'number of GPUs': value '%s' is not an integer in [0, %d]",
					    where, hb_trace_quote(q, sizeof(q), c.field[1]), MAX_GPUS_PER_MACHINE);
			break;
		}
		if (gpus == 0) {
			(*skipped)++;
			continue;
		}
		if (parse_mem_gb(c.field[2], &gb) < 0) {
			rc = hb_input_error(err, "%s: field 'single GPU mem': value '%s' is not a size in GB", where,
					    hb_trace_quote(q, sizeof(q), c.field[2]));
			break;
		}
		for (size_t k = 0; k < sizeof(mem_map) / sizeof(mem_map[0]); k++)
			if (mem_map[k].gb == gb)
				gpu = mem_map[k].gpu;
		if (!gpu) {
			rc = hb_input_error(err, "%s: field 'single GPU mem': no catalog GPU for %ld GB (known: 12 GB "
					    "-> p100, 24 GB -> p40)", where, gb);
			break;
		}
		if (*n == MAX_MACHINES) {
			rc = hb_input_error(err, "%s: more than %d machines", where, MAX_MACHINES);
			break;
		}
		if (*n == cap) {
			long ncap = cap ? 2 * cap : 64;
			struct machine *nv = realloc(v, (size_t)ncap * sizeof(*nv));

			if (!nv) {
				rc = hb_runtime_error(err, "%s: out of memory", path);
				break;
			}
			v = nv;
			cap = ncap;
		}
		if (hb_trace_node_name(c.field[0], "machineId", v[*n].name, where, err) < 0) {
			rc = -1;
			break;
		}
		v[*n].gpus = gpus;
		v[*n].gpu = gpu;
		v[*n].line = c.line;
		(*n)++;
	}
out:
	hb_csv_close(&c);
	if (rc < 0) {
		free(v);
		*n = 0;
		return -1;
	}
	*out = v;
	return 0;
}

static int check_unique(const char *path, struct machine *v, long n, struct hb_error *err)
{
	struct machine *s;
	int rc = 0;

	if (n < 2)
		return 0;
	s = malloc((size_t)n * sizeof(*s));
	if (!s)
		return hb_runtime_error(err, "%s: out of memory", path);
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_machine);
	for (long i = 1; i < n && rc == 0; i++)
		if (strcmp(s[i - 1].name, s[i].name) == 0)
			rc = hb_input_error(err, "%s:%ld: field 'machineId': '%s' already listed on line %ld", path,
					    s[i].line > s[i - 1].line ? s[i].line : s[i - 1].line, s[i].name,
					    s[i].line > s[i - 1].line ? s[i - 1].line : s[i].line);
	free(s);
	return rc;
}

int hb_philly_machines_to_cluster(const struct hb_catalog *cat, const char *path, const char *name, cJSON **out,
				  struct hb_philly_machines *info, struct hb_error *err)
{
	const struct hb_cluster *preset = cat ? hb_catalog_cluster(cat, "philly") : NULL;
	struct hb_philly_machines st = { 0 };
	struct machine *v;
	long n;
	cJSON *doc = NULL, *arr, *cl, *groups;
	char display[HB_TEXT_MAX];
	const char *base = strrchr(path, '/');

	*out = NULL;
	if (info)
		memset(info, 0, sizeof(*info));
	if (read_machines(path, &v, &n, &st.skipped, err) < 0)
		return -1;
	if (n == 0) {
		free(v);
		return hb_input_error(err, "%s: no machine with GPUs", path);
	}
	if (check_unique(path, v, n, err) < 0) {
		free(v);
		return -1;
	}
	for (long i = 0; i < n; i++) {
		if (cat && !hb_catalog_gpu(cat, v[i].gpu)) {
			free(v);
			return hb_input_error(err, "%s:%ld: GPU type '%s' is not in the catalog", path, v[i].line,
					      v[i].gpu);
		}
		st.gpus += v[i].gpus;
		if (strcmp(v[i].gpu, "p100") == 0)
			st.gpus_12gb += v[i].gpus;
		else
			st.gpus_24gb += v[i].gpus;
	}
	st.machines = n;
	snprintf(display, sizeof(display), "Philly machines from %.120s: %ld servers, %ld GPUs", base ? base + 1 : path,
		 n, st.gpus);

	doc = cJSON_CreateObject();
	arr = doc ? cJSON_AddArrayToObject(doc, "clusters") : NULL;
	cl = cJSON_CreateObject();
	if (!arr || !cl || !cJSON_AddItemToArray(arr, cl)) {
		cJSON_Delete(cl);
		goto oom;
	}
	if (!cJSON_AddStringToObject(cl, "name", name) || !cJSON_AddStringToObject(cl, "display", display) ||
	    !cJSON_AddStringToObject(cl, "intra_link", preset ? preset->nodes[0].intra_link : DEFAULT_INTRA_LINK) ||
	    !cJSON_AddNumberToObject(cl, "intra_bw", preset ? preset->nodes[0].intra_bw : DEFAULT_INTRA_BW) ||
	    !cJSON_AddStringToObject(cl, "inter_link", preset ? preset->nodes[0].inter_link : DEFAULT_INTER_LINK) ||
	    !cJSON_AddNumberToObject(cl, "inter_bw", preset ? preset->nodes[0].inter_bw : DEFAULT_INTER_BW) ||
	    !cJSON_AddNumberToObject(cl, "storage_bw", preset ? preset->storage_bw : DEFAULT_STORAGE_BW) ||
	    !cJSON_AddNumberToObject(cl, "restart_latency_s", preset ? preset->restart_latency_s : DEFAULT_RESTART_S))
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
		if (!cJSON_AddStringToObject(g, "name", v[i].name) || !cJSON_AddStringToObject(g, "gpu", v[i].gpu) ||
		    !cJSON_AddNumberToObject(g, "nodes", 1) || !cJSON_AddNumberToObject(g, "gpus_per_node", (double)v[i].gpus))
			goto oom;
	}
	if (!cJSON_AddStringToObject(cl, "source",
				     "Philly cluster_machine_list; GPU type from single GPU mem (12 GB -> p100, 24 GB "
				     "-> p40: Philly names no model); links, storage and restart as the philly preset"))
		goto oom;
	free(v);
	*out = doc;
	if (info)
		*info = st;
	return 0;
oom:
	free(v);
	cJSON_Delete(doc);
	return hb_runtime_error(err, "%s: out of memory", path);
}
