/*
 * catalog_cluster.c: cluster presets, described as groups of identical nodes.
 *
 * A group {"gpu", "nodes": k, "gpus_per_node", links, "rack",
 * "nodes_per_rack"} expands into k hb_node entries.  Node names: a named
 * group of one node keeps the group's name; a named group of k > 1 nodes gives
 * "<group>-0" .. "<group>-(k-1)"; an unnamed group's nodes are "node<i>" by
 * position in the cluster (as the JABAS artifact's cluster_info.json names
 * them).  Link names and bandwidths may be given once for the whole cluster
 * and overridden per group.  Odd GPU counts per node are accepted here; the
 * JABAS solver, which pairs GPUs, rejects them itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_priv.h"
#include "json.h"
#include "strutil.h"

#define MAX_NODES 100000
#define MAX_GPUS_PER_NODE 64
#define BW_MIN 1e6
#define BW_MAX 1e13

static const char *const cluster_keys[] = { "name", "display", "intra_link", "intra_bw", "inter_link", "inter_bw",
					    "storage_bw", "restart_latency_s", "groups", "source", "comment", NULL };
static const char *const group_keys[] = { "name", "gpu", "nodes", "gpus_per_node", "intra_link", "intra_bw",
					  "inter_link", "inter_bw", "rack", "nodes_per_rack", "comment", NULL };

/* A link (name + bandwidth) from the group, else the cluster default. */
struct link {
	char name[HB_NAME_MAX];
	double bw;           /* bytes/s, < 0 when not given */
};

static int parse_link(const cJSON *obj, const char *where, const char *name_key, const char *bw_key,
		      const struct link *dflt, struct link *out, struct hb_error *err)
{
	if (hb_cat_text(obj, name_key, where, dflt && dflt->name[0] ? dflt->name : "", out->name, sizeof(out->name),
			err) ||
	    hb_json_num_opt(obj, bw_key, where, BW_MIN, BW_MAX, dflt ? dflt->bw : -1.0, &out->bw, err))
		return -1;
	if (out->name[0] && hb_cat_check_name(out->name, where, name_key, err))
		return -1;
	if (dflt && (!out->name[0] || out->bw < 0))
		return hb_input_error(err, "%s: field '%s': missing (and the cluster gives no default)", where,
				      !out->name[0] ? name_key : bw_key);
	return 0;
}

static int cmp_node_name(const void *a, const void *b)
{
	const struct hb_node *x = *(const struct hb_node *const *)a, *y = *(const struct hb_node *const *)b;

	return strcmp(x->name, y->name);
}

static int check_unique_nodes(const struct hb_cluster *c, const char *where, struct hb_error *err)
{
	const struct hb_node **v = malloc((size_t)c->nnodes * sizeof(*v));
	int rc = 0;

	if (!v)
		return hb_runtime_error(err, "out of memory");
	for (int i = 0; i < c->nnodes; i++)
		v[i] = &c->nodes[i];
	qsort(v, (size_t)c->nnodes, sizeof(*v), cmp_node_name);
	for (int i = 1; i < c->nnodes && rc == 0; i++)
		if (strcmp(v[i - 1]->name, v[i]->name) == 0)
			rc = hb_input_error(err, "%s: node name '%s' is used twice", where, v[i]->name);
	free(v);
	return rc;
}

/* Room c->nodes has for n nodes: 0, else the next power of two from 16.
 * The array grows to it and no further, so a cluster of one group per
 * machine (catalog --from-philly: 100,000 groups) costs O(n) copying, not a
 * realloc per group (quadratic where realloc cannot grow in place, as
 * under AddressSanitizer: 107 s for 20,000 machines). */
static size_t node_room(long n)
{
	size_t room = 16;

	if (n <= 0)
		return 0;
	while (room < (size_t)n)
		room *= 2;
	return room;
}

static int parse_group(const struct hb_catalog *cat, const cJSON *g, const char *where, const struct link *intra,
		       const struct link *inter, struct hb_cluster *c, struct hb_error *err)
{
	char gname[HB_NAME_MAX], gpu[HB_NAME_MAX];
	struct link li, le;
	long nodes, per_node, rack, per_rack;
	int gi, named;
	struct hb_node *grown;

	if (hb_json_check_keys(g, where, group_keys, err) ||
	    hb_cat_text(g, "name", where, "", gname, sizeof(gname), err) ||
	    hb_cat_text(g, "gpu", where, NULL, gpu, sizeof(gpu), err) ||
	    hb_json_int(g, "nodes", where, 1, MAX_NODES, &nodes, err) ||
	    hb_json_int(g, "gpus_per_node", where, 1, MAX_GPUS_PER_NODE, &per_node, err) ||
	    parse_link(g, where, "intra_link", "intra_bw", intra, &li, err) ||
	    parse_link(g, where, "inter_link", "inter_bw", inter, &le, err) ||
	    hb_json_int_opt(g, "rack", where, 0, 1000000L, 0, &rack, err) ||
	    hb_json_int_opt(g, "nodes_per_rack", where, 1, MAX_NODES, 0, &per_rack, err))
		return -1;
	named = gname[0] != '\0';
	if (named && hb_cat_check_name(gname, where, "name", err))
		return -1;
	if (named && nodes > 1 && strlen(gname) + 8 >= HB_NAME_MAX)
		return hb_input_error(err, "%s: field 'name': '%s' is too long to number %ld nodes", where, gname, nodes);
	gi = hb_catalog_gpu_index(cat, gpu);
	if (gi < 0)
		return hb_input_error(err, "%s: field 'gpu': unknown gpu type '%s' (see 'hetbatch catalog gpus')", where,
				      gpu);
	if (c->nnodes + nodes > MAX_NODES)
		return hb_input_error(err, "%s: field 'nodes': cluster would have more than %d nodes", where, MAX_NODES);
	if ((size_t)(c->nnodes + nodes) > node_room(c->nnodes)) {
		grown = realloc(c->nodes, node_room(c->nnodes + nodes) * sizeof(*grown));
		if (!grown)
			return hb_runtime_error(err, "out of memory expanding %s", where);
		c->nodes = grown;
	}
	memset(c->nodes + c->nnodes, 0, (size_t)nodes * sizeof(*grown));
	for (long k = 0; k < nodes; k++) {
		struct hb_node *n = &c->nodes[c->nnodes];

		if (named && nodes == 1)
			hb_strlcpy(n->name, gname, sizeof(n->name));
		else if (named) {
			char numbered[HB_NAME_MAX + 24]; /* fits: the length was checked above */

			snprintf(numbered, sizeof(numbered), "%s-%ld", gname, k);
			hb_strlcpy(n->name, numbered, sizeof(n->name));
		}
		else
			snprintf(n->name, sizeof(n->name), "node%d", c->nnodes);
		n->gpu = gi;
		n->ngpus = (int)per_node;
		n->intra_bw = li.bw;
		n->inter_bw = le.bw;
		hb_strlcpy(n->intra_link, li.name, sizeof(n->intra_link));
		hb_strlcpy(n->inter_link, le.name, sizeof(n->inter_link));
		n->rack = (int)(rack + (per_rack > 0 ? k / per_rack : 0));
		c->nnodes++;
		c->ngpus += (int)per_node;
	}
	return 0;
}

int hb_cat_parse_cluster(const struct hb_catalog *cat, const cJSON *obj, const char *where, struct hb_cluster *c,
			 struct hb_error *err)
{
	struct link intra, inter;
	const cJSON *groups, *it;
	char w[HB_WHERE_MAX];
	int i = 0;

	if (hb_json_check_keys(obj, where, cluster_keys, err) ||
	    hb_cat_text(obj, "name", where, NULL, c->name, sizeof(c->name), err) ||
	    hb_cat_check_name(c->name, where, "name", err) ||
	    hb_cat_text(obj, "display", where, c->name, c->display, sizeof(c->display), err) ||
	    parse_link(obj, where, "intra_link", "intra_bw", NULL, &intra, err) ||
	    parse_link(obj, where, "inter_link", "inter_bw", NULL, &inter, err) ||
	    hb_json_num(obj, "storage_bw", where, BW_MIN, BW_MAX, &c->storage_bw, err) ||
	    hb_json_num(obj, "restart_latency_s", where, 0.0, 86400.0, &c->restart_latency_s, err) ||
	    hb_json_array(obj, "groups", where, &groups, err) ||
	    hb_cat_text(obj, "source", where, NULL, c->source, sizeof(c->source), err))
		return -1;
	if (cJSON_GetArraySize(groups) == 0)
		return hb_input_error(err, "%s: field 'groups': empty; a cluster needs at least one node group", where);
	cJSON_ArrayForEach(it, groups) {
		snprintf(w, sizeof(w), "%.400s: groups[%d]", where, i++);
		if (!cJSON_IsObject(it)) {
			free(c->nodes);
			c->nodes = NULL;
			return hb_input_error(err, "%s: expected an object", w);
		}
		if (parse_group(cat, it, w, &intra, &inter, c, err)) {
			free(c->nodes);
			c->nodes = NULL;
			return -1;
		}
	}
	if (check_unique_nodes(c, where, err)) {
		free(c->nodes);
		c->nodes = NULL;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- writing */

static int same_shape(const struct hb_node *a, const struct hb_node *b)
{
	return a->gpu == b->gpu && a->ngpus == b->ngpus && a->intra_bw == b->intra_bw && a->inter_bw == b->inter_bw &&
	       strcmp(a->intra_link, b->intra_link) == 0 && strcmp(a->inter_link, b->inter_link) == 0;
}

/* Length of the run of nodes from i that a named group of k nodes would
 * produce ("<p>-0", "<p>-1", ...), with racks constant or rising every
 * *per_rack nodes; 1 if none. */
static int group_run(const struct hb_node *nodes, int n, int i, char *prefix, int *per_rack)
{
	size_t len = strlen(nodes[i].name);
	int run = 1, step = 0;
	char want[HB_NAME_MAX + 16];

	*per_rack = 0;
	if (len < 3 || strcmp(nodes[i].name + len - 2, "-0") != 0)
		return 1;
	memcpy(prefix, nodes[i].name, len - 2);
	prefix[len - 2] = '\0';
	while (i + run < n && same_shape(&nodes[i], &nodes[i + run])) {
		snprintf(want, sizeof(want), "%s-%d", prefix, run);
		if (strcmp(want, nodes[i + run].name) != 0)
			break;
		run++;
	}
	for (int t = 1; t < run && !step; t++)
		if (nodes[i + t].rack != nodes[i].rack)
			step = t;
	if (!step)
		return run;
	for (int t = 0; t < run; t++)
		if (nodes[i + t].rack != nodes[i].rack + t / step)
			return step; /* keep the leading constant-rack part only */
	*per_rack = step;
	return run;
}

cJSON *hb_cluster_to_json(const struct hb_catalog *cat, const struct hb_cluster *c)
{
	struct hb_jw w = { cJSON_CreateObject(), 0 };
	cJSON *groups;
	char prefix[HB_NAME_MAX];

	if (!w.obj)
		return NULL;
	hb_jw_str(&w, "name", c->name);
	hb_jw_str(&w, "display", c->display);
	hb_jw_num(&w, "storage_bw", c->storage_bw);
	hb_jw_num(&w, "restart_latency_s", c->restart_latency_s);
	groups = cJSON_CreateArray();
	for (int i = 0; groups && i < c->nnodes;) {
		const struct hb_node *n = &c->nodes[i];
		int per_rack, run = group_run(c->nodes, c->nnodes, i, prefix, &per_rack);
		struct hb_jw g = { cJSON_CreateObject(), 0 };
		cJSON *gj;

		if (!g.obj) {
			w.failed = 1;
			break;
		}
		hb_jw_str(&g, "name", run > 1 ? prefix : n->name);
		hb_jw_str(&g, "gpu", n->gpu >= 0 && n->gpu < cat->ngpus ? cat->gpus[n->gpu].name : "?");
		hb_jw_num(&g, "nodes", run);
		hb_jw_num(&g, "gpus_per_node", n->ngpus);
		hb_jw_str(&g, "intra_link", n->intra_link);
		hb_jw_num(&g, "intra_bw", n->intra_bw);
		hb_jw_str(&g, "inter_link", n->inter_link);
		hb_jw_num(&g, "inter_bw", n->inter_bw);
		if (n->rack != 0 || per_rack > 0)
			hb_jw_num(&g, "rack", n->rack);
		if (per_rack > 0)
			hb_jw_num(&g, "nodes_per_rack", per_rack);
		gj = hb_jw_finish(&g);
		if (!gj || !cJSON_AddItemToArray(groups, gj)) {
			cJSON_Delete(gj);
			w.failed = 1;
		}
		i += run;
	}
	hb_jw_add(&w, "groups", groups);
	hb_jw_str(&w, "source", c->source);
	return hb_jw_finish(&w);
}
