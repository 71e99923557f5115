/*
 * es_artifact.c: the EasyScale artifact's plan database (es_artifact.h
 * says what it reproduces and where it reads otherwise).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "es_artifact.h"

/* A perf candidate: ESTs per GPU per type at scale m. */
struct cand {
	int v[HB_ESA_MAX_TYPES];
	int m;
};

struct cands {
	struct cand *v;
	int n, cap;
};

/* A plan found by the search and its construction rank (for the ties of
 * the artifact's stable sorts). */
struct rec {
	struct hb_esa_plan p;
	int64_t ord;
};

static int cand_push(struct cands *c, const int *v, int m, int ntypes)
{
	/* set(): a candidate already listed is not listed again (first kept) */
	for (int i = 0; i < c->n; i++)
		if (c->v[i].m == m && memcmp(c->v[i].v, v, sizeof(int) * (size_t)ntypes) == 0)
			return 0;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 256;
		struct cand *n = realloc(c->v, sizeof(*n) * (size_t)cap);

		if (!n)
			return -1;
		c->v = n;
		c->cap = cap;
	}
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	memcpy(c->v[c->n].v, v, sizeof(int) * (size_t)ntypes);
	c->v[c->n].m = m;
	c->n++;
	return 0;
}

/* Intrajob.get_perf_candidates, in construction order, then the stable
 * sort by the first type's ESTs. */
static int perf_candidates(const double *perf, int ntypes, int mp, struct cands *out)
{
	for (int m = 1; m <= mp; m++) {
		int var[HB_ESA_MAX_TYPES][2], nvar[HB_ESA_MAX_TYPES], idx[HB_ESA_MAX_TYPES] = { 0 };

		for (int t = 0; t < ntypes; t++) {
			double ps = perf[t] * m;

			var[t][0] = (int)floor(ps);
			nvar[t] = 1;
			if ((int)ceil(ps) != var[t][0])
				var[t][nvar[t]++] = (int)ceil(ps);
		}
		/* itertools.product: the last type varies fastest */
		for (;;) {
			int p[HB_ESA_MAX_TYPES];

			for (int t = 0; t < ntypes; t++)
				p[t] = var[t][idx[t]];
			/* itertools.combinations of 2..ntypes types, lexicographic */
			for (int size = 2; size <= ntypes; size++) {
				int comb[HB_ESA_MAX_TYPES];

				for (int k = 0; k < size; k++)
					comb[k] = k;
				for (;;) {
					int tmp[HB_ESA_MAX_TYPES] = { 0 }, all_over = 1, k;

					for (k = 0; k < size; k++) {
						tmp[comb[k]] = p[comb[k]];
						if (p[comb[k]] <= mp)
							all_over = 0;
					}
					if (!all_over && cand_push(out, tmp, m, ntypes) < 0)
						return -1;
					for (k = size - 1; k >= 0 && comb[k] == ntypes - size + k; k--)
						;
					if (k < 0)
						break;
					comb[k]++;
					for (int q = k + 1; q < size; q++)
						comb[q] = comb[q - 1] + 1;
				}
			}
			{
				int t = ntypes - 1;

				while (t >= 0 && idx[t] == nvar[t] - 1)
					idx[t--] = 0;
				if (t < 0)
					break;
				idx[t]++;
			}
		}
	}
	/* one type alone */
	for (int t = 0; t < ntypes; t++)
		for (int m = 1; m <= mp; m++) {
			int tmp[HB_ESA_MAX_TYPES] = { 0 };

			tmp[t] = m;
			if (cand_push(out, tmp, m, ntypes) < 0)
				return -1;
		}
	/* sorted(key = ESTs of the first type): stable insertion by key */
	for (int i = 1; i < out->n; i++) {
		struct cand c = out->v[i];
		int j = i;

		while (j > 0 && out->v[j - 1].v[0] > c.v[0]) {
			out->v[j] = out->v[j - 1];
			j--;
		}
		out->v[j] = c;
	}
	return 0;
}

/* The candidates' GPUs (expand + the sort by ESTs descending) as groups of
 * identical entries: type and ESTs, and how many. */
struct group {
	int type, a, count;
};

static int groups_of(const int *v, const int *nums, int ntypes, struct group *g)
{
	int ng = 0;

	for (int t = 0; t < ntypes; t++)
		if (v[t] > 0 && nums[t] > 0)
			g[ng++] = (struct group){ t, v[t], nums[t] };
	/* stable by ESTs descending */
	for (int i = 1; i < ng; i++) {
		struct group x = g[i];
		int j = i;

		while (j > 0 && g[j - 1].a < x.a) {
			g[j] = g[j - 1];
			j--;
		}
		g[j] = x;
	}
	return ng;
}

double hb_esa_waste(const double *theory, const int *a, const int *n, int ntypes, int mp, int *threads)
{
	struct group g[HB_ESA_MAX_TYPES];
	int used = 0, only = -1, ng;
	double scale = -INFINITY, w = 0.0, th = 0.0, act = 0.0;

	for (int t = 0; t < ntypes; t++) {
		threads[t] = a[t];
		if (n[t] > 0) {
			used++;
			only = t;
			if (a[t] / theory[t] > scale)
				scale = a[t] / theory[t];
		}
	}
	if (used == 1) {
		/* one type: waste 0 whatever the split, ceil(maxP / n) each */
		for (int t = 0; t < ntypes; t++)
			threads[t] = t == only ? (mp + n[only] - 1) / n[only] : 0;
		return 0.0;
	}
	/* per GPU, in the search's order (ESTs descending) */
	ng = groups_of(a, n, ntypes, g);
	for (int k = 0; k < ng; k++)
		for (int q = 0; q < g[k].count; q++) {
			int t = g[k].type;

			th += theory[t];
			act += a[t];
			w += theory[t] - a[t] / scale;
		}
	w += act >= mp ? (act - mp) / scale : 10000.0;
	return w / th;
}

/* The best record of each GPU count vector so far (open addressing on
 * the vector): the merge keeps, per vector, the record that comes first in
 * the artifact's final order, and for one vector that is the least waste
 * (its speedup is the vector's capacity times 1 - waste), then the
 * earliest in construction order. */
struct table {
	struct rec *slot;             /* cap entries; ord < 0 = empty */
	long cap, n;
	int ntypes;
};

static unsigned long vec_hash(const int *n, int ntypes)
{
	unsigned long h = 1469598103934665603UL;

	for (int t = 0; t < ntypes; t++)
		h = (h ^ (unsigned long)(unsigned)n[t]) * 1099511628211UL;
	return h;
}

static int table_grow(struct table *tb)
{
	long cap = tb->cap ? 2 * tb->cap : 1024;
	struct rec *s = malloc(sizeof(*s) * (size_t)cap);

	if (!s)
		return -1;
	for (long i = 0; i < cap; i++)
		s[i].ord = -1;
	for (long i = 0; i < tb->cap; i++) {
		unsigned long h;

		if (tb->slot[i].ord < 0)
			continue;
		h = vec_hash(tb->slot[i].p.n, tb->ntypes) & (unsigned long)(cap - 1);
		while (s[h].ord >= 0)
			h = (h + 1) & (unsigned long)(cap - 1);
		s[h] = tb->slot[i];
	}
	free(tb->slot);
	tb->slot = s;
	tb->cap = cap;
	return 0;
}

static int table_offer(struct table *tb, const struct hb_esa_plan *p, int64_t ord)
{
	unsigned long h;

	if (2 * (tb->n + 1) > tb->cap && table_grow(tb) < 0)
		return -1;
	h = vec_hash(p->n, tb->ntypes) & (unsigned long)(tb->cap - 1);
	while (tb->slot[h].ord >= 0) {
		struct rec *r = &tb->slot[h];

		if (memcmp(r->p.n, p->n, sizeof(int) * (size_t)tb->ntypes) == 0) {
			if (p->waste < r->p.waste || (p->waste == r->p.waste && ord < r->ord)) {
				r->p = *p;
				r->ord = ord;
			}
			return 0;
		}
		h = (h + 1) & (unsigned long)(tb->cap - 1);
	}
	tb->slot[h].p = *p;
	tb->slot[h].ord = ord;
	tb->n++;
	return 0;
}

/* The search of combinationSum over groups: at (group gi, taken from it
 * so far), the children are one more of gi, then the first of each later
 * group: exactly the DFS's order once its equal-neighbour skip is applied.
 * Each multiset found goes to the table with its construction rank:
 * (candidate, size, search order), the stable sort by size within a
 * candidate. */
struct dfs {
	const double *perf;
	int ntypes, mp;
	const struct cand *c;
	long ci;                      /* the candidate's rank */
	const struct group *g;
	int ng;
	int take[HB_ESA_MAX_TYPES];   /* per group */
	long found;                   /* multisets found for this candidate */
	struct table *tb;
};

#define ORD_SIZE_BITS 20          /* multisets per candidate and GPUs per plan below 2^20 */

static int on_found(struct dfs *d)
{
	struct hb_esa_plan p;
	double theory[HB_ESA_MAX_TYPES];
	long size = 0;

	memset(&p, 0, sizeof(p));
	for (int k = 0; k < d->ng; k++) {
		p.n[d->g[k].type] = d->take[k];
		size += d->take[k];
	}
	for (int t = 0; t < d->ntypes; t++)
		theory[t] = d->perf[t] * d->c->m;
	p.waste = hb_esa_waste(theory, d->c->v, p.n, d->ntypes, d->mp, p.threads);
	if (d->found >= (1L << ORD_SIZE_BITS) || size >= (1L << ORD_SIZE_BITS))
		return -1;
	return table_offer(d->tb, &p, (d->ci << (2 * ORD_SIZE_BITS)) | (size << ORD_SIZE_BITS) | d->found++);
}

static int dfs(struct dfs *d, int gi, int target)
{
	if (target <= 0)
		return on_found(d);
	for (int k = gi; k < d->ng; k++) {
		int rc;

		if (d->take[k] >= d->g[k].count)
			continue; /* the group is used up (k = gi only: later groups are untouched) */
		d->take[k]++;
		rc = dfs(d, k, target - d->g[k].a);
		d->take[k]--;
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The final order: speedup descending, the first type's GPUs descending,
 * then the order of the sort by waste (waste ascending, construction). */
static int by_final(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->p.speedup != y->p.speedup)
		return x->p.speedup > y->p.speedup ? -1 : 1;
	if (x->p.n[0] != y->p.n[0])
		return x->p.n[0] > y->p.n[0] ? -1 : 1;
	if (x->p.waste != y->p.waste)
		return x->p.waste < y->p.waste ? -1 : 1;
	return (x->ord > y->ord) - (x->ord < y->ord);
}

void hb_esa_plans_free(struct hb_esa_plans *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

int hb_esa_plans_build(const double *perf, const int *nums, int ntypes, int mp, struct hb_esa_plans *out)
{
	struct cands cs = { NULL, 0, 0 };
	struct table tb = { NULL, 0, 0, ntypes };
	struct rec *v = NULL;
	long nv = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (ntypes < 1 || ntypes > HB_ESA_MAX_TYPES || mp < 1)
		return -1;
	for (int t = 0; t < ntypes; t++)
		if (!(perf[t] > 0) || !isfinite(perf[t]) || nums[t] < 0)
			return -1;
	if (perf_candidates(perf, ntypes, mp, &cs) < 0 || table_grow(&tb) < 0)
		goto out;
	for (int i = 0; i < cs.n; i++) {
		struct group g[HB_ESA_MAX_TYPES];
		struct dfs d;

		memset(&d, 0, sizeof(d));
		d.perf = perf;
		d.ntypes = ntypes;
		d.mp = mp;
		d.c = &cs.v[i];
		d.ci = i;
		d.g = g;
		d.ng = groups_of(cs.v[i].v, nums, ntypes, g);
		d.tb = &tb;
		if (dfs(&d, 0, mp) < 0)
			goto out;
	}
	v = malloc(sizeof(*v) * (size_t)(tb.n > 0 ? tb.n : 1));
	out->v = malloc(sizeof(*out->v) * (size_t)(tb.n > 0 ? tb.n : 1));
	if (!v || !out->v)
		goto out;
	for (long i = 0; i < tb.cap; i++) {
		double s = 0.0;

		if (tb.slot[i].ord < 0)
			continue;
		v[nv] = tb.slot[i];
		for (int t = 0; t < ntypes; t++) /* sum(perf * cnt) in type order, then (1 - waste) */
			s += perf[t] * v[nv].p.n[t];
		v[nv].p.speedup = s * (1.0 - v[nv].p.waste);
		nv++;
	}
	if (nv > 1)
		qsort(v, (size_t)nv, sizeof(*v), by_final);
	for (long i = 0; i < nv; i++)
		out->v[i] = v[i].p;
	out->n = (int)nv;
	out->ntypes = ntypes;
	rc = 0;
out:
	free(cs.v);
	free(tb.slot);
	free(v);
	if (rc < 0)
		hb_esa_plans_free(out);
	return rc;
}

void hb_esa_plans_keep_type(struct hb_esa_plans *p, int pref, int total)
{
	int k = 0;

	for (int i = 0; i < p->n; i++) {
		int ok = p->v[i].n[pref] > 0 && (total <= 0 || p->v[i].n[pref] == total);

		for (int t = 0; t < p->ntypes && ok; t++)
			if (t != pref && p->v[i].n[t] != 0)
				ok = 0;
		if (ok)
			p->v[k++] = p->v[i];
	}
	p->n = k;
}

double hb_esa_comp_s(const struct hb_esa_plan *p, const double *gpu_s, int ntypes)
{
	double worst = 0.0;

	for (int t = 0; t < ntypes; t++)
		if (gpu_s[t] * p->threads[t] > worst)
			worst = gpu_s[t] * p->threads[t];
	return worst;
}
