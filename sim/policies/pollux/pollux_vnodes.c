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
	/* Types in order of first appearance with their GPU counts; a row
	 * holds few types, so a short list does (the GPUs of a ninth type,
	 * never the majority's, are dropped). */
	int types[8], counts[8], nt = 0, overflow = 0, keep, dropped = 0;

	for (int k = 0; k < v->n; k++) {
		int t = 0;

		if (row[k] <= 0)
			continue;
		while (t < nt && types[t] != v->type[k])
			t++;
		if (t == nt) {
			if (nt == (int)(sizeof(types) / sizeof(types[0]))) {
				overflow = 1;
				continue;
			}
			types[nt] = v->type[k];
			counts[nt++] = 0;
		}
		counts[t] += row[k];
	}
	if (nt == 0 || (nt == 1 && !overflow))
		return 0;
	/* most_common(): descending count, ties in first-appearance order
	 * (a stable sort); then only the first two are compared. */
	{
		int first = 0, second = -1;

		for (int t = 1; t < nt; t++)
			if (counts[t] > counts[first])
				first = t;
		for (int t = 0; t < nt; t++)
			if (t != first && (second < 0 || counts[t] > counts[second]))
				second = t;
		keep = types[first];
		if (second >= 0 && counts[second] == counts[first] && tflops[types[second]] > tflops[types[first]])
			keep = types[second];
	}
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
