/*
 * pollux_vnodes.c: the virtual nodes and the allocation repair of Sia's
 * heterogeneity-unaware Pollux (pollux_vnodes.h has what and why).
 */
#include <stdlib.h>
#include <string.h>

#include "pollux_vnodes.h"

int hb_vnodes_init(struct hb_vnodes *v, const struct hb_cluster *cl, struct hb_error *err)
{
	int per = 0, n = 0, k = 0;

	memset(v, 0, sizeof(*v));
	for (int i = 0; i < cl->nnodes; i++)
		if (cl->nodes[i].ngpus > 0 && (per == 0 || cl->nodes[i].ngpus < per))
			per = cl->nodes[i].ngpus;
	if (per == 0)
		return hb_input_error(err, "pollux (Sia's unaware view): cluster %s has no GPUs", cl->name);
	for (int i = 0; i < cl->nnodes; i++) {
		if (cl->nodes[i].ngpus % per != 0)
			return hb_input_error(err,
					      "pollux (Sia's unaware view): cluster %s: node %s has %d GPUs, not a "
					      "multiple of the smallest node's %d (its virtual nodes would drop GPUs)",
					      cl->name, cl->nodes[i].name, cl->nodes[i].ngpus, per);
		n += cl->nodes[i].ngpus / per;
	}
	v->per = per;
	v->n = n;
	v->node = malloc(sizeof(int) * (size_t)n);
	v->type = malloc(sizeof(int) * (size_t)n);
	v->first = malloc(sizeof(int) * (size_t)(cl->nnodes > 0 ? cl->nnodes : 1));
	if (!v->node || !v->type || !v->first) {
		hb_vnodes_free(v);
		return hb_runtime_error(err, "pollux: out of memory");
	}
	for (int i = 0; i < cl->nnodes; i++) {
		v->first[i] = k;
		for (int j = 0; j < cl->nodes[i].ngpus / per; j++, k++) {
			v->node[k] = i;
			v->type[k] = cl->nodes[i].gpu;
		}
	}
	return 0;
}

void hb_vnodes_free(struct hb_vnodes *v)
{
	free(v->node);
	free(v->first);
	free(v->type);
	memset(v, 0, sizeof(*v));
}

int hb_vnodes_drop_minority(const struct hb_vnodes *v, const double *tflops, int *row)
{
	/* Counter(types).most_common(): count descending, ties in the order
	 * the types first appear along the row.  Each type is represented by
	 * its first vnode k in the row; visiting those in order and keeping
	 * the strictly larger count finds the first two of that order (a row
	 * has few nonzero cells: the search caps a job's nodes). */
	int first = -1, second = -1, keep, dropped = 0;
	long cf = 0, cs = 0;

	for (int k = 0; k < v->n; k++) {
		int seen = 0;
		long c = 0;

		if (row[k] <= 0)
			continue;
		for (int e = 0; e < k && !seen; e++)
			seen = row[e] > 0 && v->type[e] == v->type[k];
		if (seen)
			continue;
		for (int e = k; e < v->n; e++)
			if (row[e] > 0 && v->type[e] == v->type[k])
				c += row[e];
		if (first < 0 || c > cf) {
			second = first;
			cs = cf;
			first = k;
			cf = c;
		} else if (second < 0 || c > cs) {
			second = k;
			cs = c;
		}
	}
	if (second < 0)
		return 0; /* no GPUs, or one type */
	keep = v->type[first];
	if (cs == cf && tflops[v->type[second]] > tflops[keep])
		keep = v->type[second];
	for (int k = 0; k < v->n; k++)
		if (row[k] > 0 && v->type[k] != keep) {
			dropped += row[k];
			row[k] = 0;
		}
	return dropped;
}

void hb_vnodes_to_nodes(const struct hb_vnodes *v, const int *row, int nnodes, int *node_row)
{
	memset(node_row, 0, sizeof(int) * (size_t)nnodes);
	for (int k = 0; k < v->n; k++)
		node_row[v->node[k]] += row[k];
}

void hb_vnodes_from_nodes(const struct hb_vnodes *v, const int *node_row, int nnodes, int *row)
{
	memset(row, 0, sizeof(int) * (size_t)v->n);
	for (int i = 0; i < nnodes; i++) {
		int left = node_row[i];

		for (int k = v->first[i]; left > 0 && k < v->n && v->node[k] == i; k++) {
			row[k] = left < v->per ? left : v->per;
			left -= row[k];
		}
	}
}
