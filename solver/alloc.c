/*
 * alloc.c: JABAS candidate allocations Q (notes/jabas.md §4.3); the order,
 * the unit rule and the merging rule are documented in alloc.h.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* Classes of a cluster for one u, before any candidate exists. */
struct layout {
	int nnodes, nclasses;
	int *node_class;           /* [nnodes] */
	int *prev_in_class;        /* [nnodes]: previous node of the same class, −1 if first */
	int *cap;                  /* [nnodes]: units per node */
	struct hb_alloc_class *classes; /* [nclasses] */
};

static void layout_free(struct layout *L)
{
	free(L->node_class);
	free(L->prev_in_class);
	free(L->cap);
	free(L->classes);
	memset(L, 0, sizeof(*L));
}

static int same_server(const struct hb_node *a, const struct hb_node *b)
{
	return a->gpu == b->gpu && a->ngpus == b->ngpus && a->intra_bw == b->intra_bw &&
	       a->inter_bw == b->inter_bw && strcmp(a->intra_link, b->intra_link) == 0 &&
	       strcmp(a->inter_link, b->inter_link) == 0 && a->rack == b->rack;
}

static int layout_build(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit,
			int merge, struct layout *L, struct hb_error *err)
{
	long units = 0;
	int n;

	memset(L, 0, sizeof(*L));
	if (!cl || cl->nnodes < 1 || !cl->nodes)
		return hb_input_error(err, "alloc: cluster '%s': needs at least one node",
				      cl ? cl->name : "(null)");
	if (unit < 1)
		return hb_input_error(err, "alloc: cluster '%s': allocation unit '%d': must be >= 1 "
				      "GPU", cl->name, unit);
	n = cl->nnodes;
	for (int i = 0; i < n; i++) {
		const struct hb_node *nd = &cl->nodes[i];

		if (nd->ngpus < 0)
			return hb_input_error(err, "alloc: cluster '%s': node %d ('%s'): field "
					      "'ngpus': value '%d': must be >= 0", cl->name, i,
					      nd->name, nd->ngpus);
		if (nd->gpu < 0 || (cat && nd->gpu >= cat->ngpus))
			return hb_input_error(err, "alloc: cluster '%s': node %d ('%s'): field 'gpu': "
					      "value '%d': not a GPU type of the catalog (%d types)",
					      cl->name, i, nd->name, nd->gpu, cat ? cat->ngpus : 0);
		units += nd->ngpus / unit;
	}
	if (units == 0)
		return hb_input_error(err, "alloc: cluster '%s': allocation unit '%d': no node has "
				      "that many GPUs, so there is no candidate", cl->name, unit);

	L->nnodes = n;
	L->node_class = malloc((size_t)n * sizeof(*L->node_class));
	L->prev_in_class = malloc((size_t)n * sizeof(*L->prev_in_class));
	L->cap = malloc((size_t)n * sizeof(*L->cap));
	L->classes = malloc((size_t)n * sizeof(*L->classes));
	if (!L->node_class || !L->prev_in_class || !L->cap || !L->classes) {
		layout_free(L);
		return hb_runtime_error(err, "alloc: out of memory for %d nodes", n);
	}
	for (int i = 0; i < n; i++) {
		const struct hb_node *nd = &cl->nodes[i];
		int c = -1;

		L->cap[i] = nd->ngpus / unit;
		L->prev_in_class[i] = -1;
		if (merge)
			for (int k = 0; k < L->nclasses && c < 0; k++)
				if (same_server(&cl->nodes[L->classes[k].first_node], nd))
					c = k;
		if (c < 0) {
			c = L->nclasses++;
			L->classes[c].first_node = i;
			L->classes[c].nnodes = 0;
			L->classes[c].gpu = nd->gpu;
			L->classes[c].units_per_node = L->cap[i];
			L->classes[c].max_units = 0;
		} else {
			for (int j = i - 1; j >= 0; j--)
				if (L->node_class[j] == c) {
					L->prev_in_class[i] = j;
					break;
				}
		}
		L->node_class[i] = c;
		L->classes[c].nnodes++;
		L->classes[c].max_units += L->cap[i];
	}
	return 0;
}

/* Π (x_i + 1) − 1 over xs; −1 on 64-bit overflow. */
static int count_product(const struct layout *L, int merged, uint64_t *out)
{
	uint64_t p = 1;
	int m = merged ? L->nclasses : L->nnodes;

	for (int i = 0; i < m; i++) {
		uint64_t f = (uint64_t)(merged ? L->classes[i].max_units : L->cap[i]) + 1;

		if (p > UINT64_MAX / f)
			return -1;
		p *= f;
	}
	*out = p - 1;
	return 0;
}

/* Candidates of at most max_units units: the coefficients up to x^max_units
 * of Π (1 + x + ... + x^{m_i}) over the classes (merged) or nodes, less the
 * empty candidate.  Each partial sum is at most |Q|, which the callers have
 * checked fits. */
static int count_upto(const struct layout *L, int merged, int max_units, uint64_t *out)
{
	int m = merged ? L->nclasses : L->nnodes;
	uint64_t *c, *pre, total = 0;

	*out = 0;
	if (max_units < 1)
		return 0;
	c = calloc((size_t)max_units + 1, sizeof(*c));
	pre = calloc((size_t)max_units + 2, sizeof(*pre));
	if (!c || !pre) {
		free(c);
		free(pre);
		return -1;
	}
	c[0] = 1;
	for (int i = 0; i < m; i++) {
		int x = merged ? L->classes[i].max_units : L->cap[i];

		/* c'[t] = Σ_{v=0..min(x,t)} c[t-v], by prefix sums */
		for (int t = 0; t <= max_units; t++)
			pre[t + 1] = pre[t] + c[t];
		for (int t = 0; t <= max_units; t++)
			c[t] = pre[t + 1] - pre[t - x > 0 ? t - x : 0];
	}
	for (int t = 1; t <= max_units; t++)
		total += c[t];
	free(c);
	free(pre);
	*out = total;
	return 0;
}

int hb_alloc_count_upto(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
			int max_units, uint64_t *count, struct hb_error *err)
{
	struct layout L;
	uint64_t full;
	int rc = 0;

	if (layout_build(cl, cat, unit, merge, &L, err))
		return -1;
	if (count_product(&L, merge != 0, &full))
		rc = hb_runtime_error(err, "alloc: cluster '%s': |Q| with %d-GPU units overflows "
				      "64 bits", cl->name, unit);
	else if (count_upto(&L, merge != 0, max_units, count))
		rc = hb_runtime_error(err, "alloc: out of memory");
	layout_free(&L);
	return rc;
}

int hb_alloc_count(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
		   uint64_t *count, struct hb_error *err)
{
	struct layout L;
	int rc = 0;

	if (layout_build(cl, cat, unit, merge, &L, err))
		return -1;
	if (count_product(&L, merge != 0, count))
		rc = hb_runtime_error(err, "alloc: cluster '%s': |Q| with %d-GPU units overflows "
				      "64 bits", cl->name, unit);
	layout_free(&L);
	return rc;
}

/* Depth-first walk over nodes emitting, for one total, the per-node vectors
 * in descending lexicographic order.  A node may take units only if the
 * previous node of its class is full, which keeps exactly the packed vectors
 * (and is no constraint when every node is its own class).  avail is exactly
 * the most units the remaining nodes can still take under that rule, and any
 * smaller number is reachable too, so no branch is a dead end: the walk costs
 * O(|Q| · nodes). */
struct walk {
	const struct layout *L;
	int *cur;                  /* [nnodes] vector being built */
	long *after;               /* [nnodes]: Σ cap of the later nodes of the same class */
	int total;
	size_t next;               /* candidates emitted */
	size_t want;               /* candidates the count says there are: no visit past them */
	hb_alloc_visit_fn visit;   /* called with each candidate, in Q's order */
	void *ctx;
	int stop;                  /* the visitor's nonzero answer: the walk unwinds */
};

static void walk(struct walk *w, int i, long rem, long avail)
{
	const struct layout *L = w->L;
	int cap, prev, top;

	if (rem > avail || w->stop)
		return;
	if (i == L->nnodes) {
		if (w->next < w->want)
			w->stop = w->visit(w->ctx, w->next, w->cur, w->total);
		w->next++;  /* past want: counted, caught as a mismatch by the caller */
		return;
	}
	cap = L->cap[i];
	prev = L->prev_in_class[i];
	if (prev >= 0 && w->cur[prev] != L->cap[prev]) {
		/* class already closed: its caps left avail when it closed */
		w->cur[i] = 0;
		walk(w, i + 1, rem, avail);
		return;
	}
	top = cap < rem ? cap : (int)rem;
	for (int v = top; v >= 0 && !w->stop; v--) {
		const long r2 = rem - v, a2 = avail - cap - (v == cap ? 0 : w->after[i]);

		/* The callee's own test, before the call: a walk that cannot place
		 * r2 units returns at once.  Below cap, a2 is the same for every v
		 * and r2 grows as v falls, so the first such v ends the loop. */
		if (r2 > a2) {
			if (v < cap)
				break;
			continue;
		}
		w->cur[i] = v;
		walk(w, i + 1, r2, a2);
	}
	w->cur[i] = 0;
}

/* hb_alloc_enumerate_upto's visitor: the candidate into the set's arrays. */
static int emit(void *ctx, size_t i, const int *node_units, int total)
{
	struct hb_alloc_set *s = ctx;
	int *nu = s->node_units + i * (size_t)s->nnodes;
	int *cu = s->class_units + i * (size_t)s->nclasses;

	memcpy(nu, node_units, (size_t)s->nnodes * sizeof(*nu));
	memset(cu, 0, (size_t)s->nclasses * sizeof(*cu));
	for (int k = 0; k < s->nnodes; k++)
		cu[s->node_class[k]] += node_units[k];
	s->total_units[i] = total;
	return 0;
}

void hb_alloc_free(struct hb_alloc_set *s)
{
	if (!s)
		return;
	free(s->classes);
	free(s->node_class);
	free(s->node_ngpus);
	free(s->node_units);
	free(s->class_units);
	free(s->total_units);
	memset(s, 0, sizeof(*s));
}

int hb_alloc_enumerate(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit,
		       int merge, size_t limit, struct hb_alloc_set *out, struct hb_error *err)
{
	return hb_alloc_enumerate_upto(cl, cat, unit, merge, limit, INT32_MAX, out, err);
}

/* The walk behind hb_alloc_enumerate_upto and hb_alloc_visit_upto: out
 * gets the set's description (and, when store, room for its candidates),
 * then each candidate goes to visit(ctx, ...) in Q's order. */
static int enumerate(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge, size_t limit,
		     int max_units, int store, struct hb_alloc_set *out, hb_alloc_visit_fn visit, void *ctx,
		     struct hb_error *err)
{
	struct layout L;
	struct walk w = { 0 };
	uint64_t count, unmerged;
	long room = 0, avail = 0;
	int n, rc = -1;

	memset(out, 0, sizeof(*out));
	if (layout_build(cl, cat, unit, merge, &L, err))
		return -1;
	n = L.nnodes;
	if (limit == 0)
		limit = HB_ALLOC_DEFAULT_LIMIT;
	if (count_product(&L, merge != 0, &count) || count > (uint64_t)limit) {
		hb_runtime_error(err, "alloc: cluster '%s': |Q| with %d-GPU units%s is more than the "
				 "limit of %zu candidates; merge identical servers or use bigger "
				 "units", cl->name, unit, merge ? " (merged)" : "", limit);
		goto done;
	}
	if (count_product(&L, 0, &unmerged))
		unmerged = UINT64_MAX;
	for (int i = 0; i < n; i++)
		room += L.cap[i];
	/* Only the first candidates, those of at most max_units units. */
	if (max_units < room) {
		if (count_upto(&L, merge != 0, max_units, &count)) {
			hb_runtime_error(err, "alloc: out of memory");
			goto done;
		}
		room = max_units < 0 ? 0 : max_units;
	}

	out->unit = unit;
	out->merged = merge != 0;
	out->nnodes = n;
	out->nclasses = L.nclasses;
	out->ncand = (size_t)count;
	out->ncand_unmerged = unmerged;
	out->classes = malloc((size_t)L.nclasses * sizeof(*out->classes));
	out->node_class = malloc((size_t)n * sizeof(*out->node_class));
	out->node_ngpus = malloc((size_t)n * sizeof(*out->node_ngpus));
	w.cur = calloc((size_t)n, sizeof(*w.cur));
	w.after = calloc((size_t)n, sizeof(*w.after));
	if (store) {
		/* ncand may be 0 (max_units < 1): one entry each keeps malloc's answer meaningful. */
		out->node_units = malloc((out->ncand ? out->ncand : 1) * (size_t)n * sizeof(*out->node_units));
		out->class_units =
			malloc((out->ncand ? out->ncand : 1) * (size_t)L.nclasses * sizeof(*out->class_units));
		out->total_units = malloc((out->ncand ? out->ncand : 1) * sizeof(*out->total_units));
	}
	if (!out->classes || !out->node_class || !out->node_ngpus || !w.cur || !w.after ||
	    (store && (!out->node_units || !out->class_units || !out->total_units))) {
		hb_runtime_error(err, "alloc: cluster '%s': out of memory for %zu candidates",
				 cl->name, out->ncand);
		goto done;
	}
	memcpy(out->classes, L.classes, (size_t)L.nclasses * sizeof(*out->classes));
	memcpy(out->node_class, L.node_class, (size_t)n * sizeof(*out->node_class));
	for (int i = 0; i < n; i++)
		out->node_ngpus[i] = cl->nodes[i].ngpus;

	w.L = &L;
	w.want = out->ncand;
	w.visit = visit;
	w.ctx = store ? (void *)out : ctx;
	for (int i = n - 1; i >= 0; i--)
		if (L.prev_in_class[i] >= 0)
			w.after[L.prev_in_class[i]] = w.after[i] + L.cap[i];
	for (int i = 0; i < n; i++)
		avail += L.cap[i];
	for (long t = 1; t <= room && !w.stop; t++) {
		w.total = (int)t;
		walk(&w, 0, t, avail);
	}
	if (w.stop) {
		rc = w.stop;
		goto done;
	}
	if (w.next != out->ncand) {
		hb_runtime_error(err, "alloc: cluster '%s': internal error: enumerated %zu candidates, "
				 "the product formula says %zu", cl->name, w.next, out->ncand);
		goto done;
	}
	rc = 0;
done:
	free(w.cur);
	free(w.after);
	layout_free(&L);
	if (rc)
		hb_alloc_free(out);
	return rc;
}

int hb_alloc_enumerate_upto(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
			    size_t limit, int max_units, struct hb_alloc_set *out, struct hb_error *err)
{
	return enumerate(cl, cat, unit, merge, limit, max_units, 1, out, emit, NULL, err);
}

int hb_alloc_visit_upto(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
			size_t limit, int max_units, struct hb_alloc_set *out, hb_alloc_visit_fn visit, void *ctx,
			struct hb_error *err)
{
	return enumerate(cl, cat, unit, merge, limit, max_units, 0, out, visit, ctx, err);
}

const int *hb_alloc_node_units(const struct hb_alloc_set *s, size_t i)
{
	return s->node_units + i * (size_t)s->nnodes;
}

const int *hb_alloc_class_units(const struct hb_alloc_set *s, size_t i)
{
	return s->class_units + i * (size_t)s->nclasses;
}

int hb_alloc_ngpus(const struct hb_alloc_set *s, size_t i)
{
	return s->total_units[i] * s->unit;
}

int hb_alloc_gpus(const struct hb_alloc_set *s, size_t i, struct hb_alloc_gpu *gpus)
{
	const int *nu = hb_alloc_node_units(s, i);
	int k = 0;

	for (int node = 0; node < s->nnodes; node++)
		for (int g = 0; g < nu[node] * s->unit; g++) {
			gpus[k].node = node;
			gpus[k].local = g;
			k++;
		}
	return k;
}
