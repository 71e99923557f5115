/*
 * iidp_cache.c: the IIDP solver object and its caches.
 *
 * Open-addressing hash maps with per-entry CLOCK eviction; the solver's
 * life (new, free, cache limit, shared budget, stats); the (allocation,
 * B_L) tables of per-node coefficients and pairs, their memos of M, and
 * the memoized solve of one table (iidp_table_solve) that iidp.c and
 * iidp_shape.c build on.  A cache miss only costs a recomputation: no
 * answer depends on what is cached.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iidp_priv.h"
static void hmap_place(struct hmap_slot *s, size_t cap, struct hmap_slot e)
{
	size_t i = e.h & (cap - 1);

	while (s[i].h != 0)
		i = (i + 1) & (cap - 1);
	s[i] = e;
}

/* Insert a key known to be absent, its hash h given; returns the bytes the
 * map itself took (the key copy and any growth of the slot array), or 0 on
 * failure.  A new entry starts unreferenced: only a hit proves it useful. */
size_t iidp_hmap_put_h(struct hmap *m, uint64_t h, const void *key, size_t klen, void *val)
{
	struct hmap_slot e;
	size_t used = m->keys_in_val ? 1 : klen; /* > 0 on success */

	if (klen > UINT32_MAX)
		return 0;
	if (2 * (m->n + 1) > m->cap) {
		size_t nc = m->cap ? 2 * m->cap : 16;
		struct hmap_slot *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return 0;
		for (size_t i = 0; i < m->cap; i++)
			if (m->s[i].h)
				hmap_place(ns, nc, m->s[i]);
		used += (nc - m->cap) * sizeof(*ns);
		free(m->s);
		m->s = ns;
		m->cap = nc;
		m->hand = 0;
	}
	e.h = h;
	if (m->keys_in_val) {
		e.key = (void *)key;
	} else {
		if (!(e.key = malloc(klen ? klen : 1)))
			return 0;
		memcpy(e.key, key, klen);
	}
	e.klen = (uint32_t)klen;
	e.ref = 0;
	e.val = val;
	hmap_place(m->s, m->cap, e);
	m->n++;
	return used;
}

size_t iidp_hmap_put(struct hmap *m, const void *key, size_t klen, void *val)
{
	return iidp_hmap_put_h(m, hash_bytes(key, klen), key, klen, val);
}

/* Remove slot i, shifting the later entries of its probe run back so that
 * every entry stays reachable from its home slot (no tombstones). */
void iidp_hmap_remove_at(struct hmap *m, size_t i)
{
	const size_t mask = m->cap - 1;

	for (size_t j = (i + 1) & mask; m->s[j].h != 0; j = (j + 1) & mask) {
		size_t home = m->s[j].h & mask;
		/* j's entry may move to i unless its home lies cyclically in (i, j]. */
		int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);

		if (!stays) {
			m->s[i] = m->s[j];
			i = j;
		}
	}
	memset(&m->s[i], 0, sizeof(m->s[i]));
	m->n--;
}

/* The CLOCK hand's step: odd, so that it visits every slot of the
 * power-of-two array once per turn, and large, so that consecutive
 * evictions are far apart.  A hand stepping slot by slot empties the
 * region it sweeps while inserts land everywhere, so the region it has not
 * reached for a turn fills up: at half load overall, linear probing there
 * met runs of thousands of slots (a Philly replay probed 250 slots per
 * insert into the summary cache on average). */
#define HMAP_HAND_STEP 0x9E3779B1u

/* Evict one entry by CLOCK; returns the value (the caller frees it and
 * counts its bytes) or NULL when the map is empty. */
void *iidp_hmap_evict(struct hmap *m)
{
	if (m->n == 0)
		return NULL;
	/* Two turns at most: the first clears every bit it passes. */
	for (;;) {
		struct hmap_slot *sl = &m->s[m->hand & (m->cap - 1)];
		void *v;

		if (sl->h == 0 || sl->ref) {
			sl->ref = 0;
			m->hand = (m->hand + HMAP_HAND_STEP) & (m->cap - 1);
			continue;
		}
		v = sl->val;
		if (!m->keys_in_val)
			free(sl->key);
		/* The hand stays: an entry shifted back into this slot is next. */
		iidp_hmap_remove_at(m, m->hand & (m->cap - 1));
		return v;
	}
}

/* After evictions: a slot array at most 1/8 full is rehashed into one a
 * quarter of its size (the CLOCK hand walks empty slots, and a cache that
 * once held many entries would keep their slots).  Returns the bytes freed. */
size_t iidp_hmap_shrink(struct hmap *m)
{
	size_t nc = m->cap;
	struct hmap_slot *ns;

	if (m->cap <= 64 || 8 * m->n > m->cap)
		return 0;
	while (nc > 64 && 8 * m->n <= nc)
		nc /= 4;
	if (nc < 64)
		nc = 64;
	if (!(ns = calloc(nc, sizeof(*ns))))
		return 0; /* keep the larger array */
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].h)
			hmap_place(ns, nc, m->s[i]);
	free(m->s);
	m->s = ns;
	nc = m->cap - nc;
	m->cap -= nc;
	m->hand = 0;
	return nc * sizeof(*ns);
}

static void hmap_clear(struct hmap *m, void (*free_val)(void *))
{
	const int keys_in_val = m->keys_in_val;

	for (size_t i = 0; i < m->cap; i++) {
		if (m->s[i].h) {
			if (!keys_in_val)
				free(m->s[i].key);
			if (free_val)
				free_val(m->s[i].val);
		}
	}
	free(m->s);
	memset(m, 0, sizeof(*m));
	m->keys_in_val = keys_in_val;
}

void iidp_table_free(void *v)
{
	struct table *t = v;

	if (!t)
		return;
	free(t->memo);
	free(t);
}

static size_t memo_set_bytes(uint32_t cap, int npairs)
{
	return sizeof(struct memo_set) + (size_t)cap * (sizeof(struct memo) + (size_t)npairs * sizeof(int) +
							2 * sizeof(uint32_t));
}

static uint32_t memo_slot(int M, uint32_t mask)
{
	return (uint32_t)(((uint64_t)(uint32_t)M * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

/* The record of M in t's memos, or -1. */
static long memo_find(const struct table *t, int M)
{
	const struct memo_set *ms = t->memo;

	if (!ms)
		return -1;
	for (uint32_t mask = 2 * ms->cap - 1, j = memo_slot(M, mask);; j = (j + 1) & mask) {
		uint32_t i = ms->idx[j];

		if (i == 0)
			return -1;
		if (ms->rec[i - 1].M == M)
			return (long)i - 1;
	}
}

/* Nodes whose tables are interchangeable: table_build reads of a node only
 * its GPU type (the profile) and its two all-reduce fits (comm_eval; the
 * link name only names a missing fit in an error).  The GPU count only
 * bounds the allocation; it is part of the kind so that any node of a kind
 * can hold what another one holds (the canonical allocation of a shape). */
static int same_ar(const struct hb_perf_ar *a, const struct hb_perf_ar *b)
{
	return a->have == b->have && a->alpha == b->alpha && a->beta_ms == b->beta_ms && a->k_bw == b->k_bw;
}

static void classify_nodes(const struct hb_perf *pf, int *node_class, int *next_in_class)
{
	for (int i = 0; i < pf->nnodes; i++) {
		const struct hb_perf_node *a = &pf->nodes[i];

		node_class[i] = i;
		next_in_class[i] = -1;
		/* Class representatives only: a handful on any real cluster. */
		for (int j = 0; j < i; j++) {
			const struct hb_perf_node *b = &pf->nodes[j];

			if (node_class[j] == j && a->gpu == b->gpu && a->ngpus == b->ngpus &&
			    same_ar(&a->intra, &b->intra) && same_ar(&a->inter, &b->inter)) {
				node_class[i] = j;
				break;
			}
		}
	}
	/* Link each kind in node order, from the back. */
	for (int i = pf->nnodes - 1; i >= 0; i--) {
		int last = -1;

		for (int j = i + 1; j < pf->nnodes && last < 0; j++)
			if (node_class[j] == node_class[i])
				last = j;
		next_in_class[i] = last;
	}
}

int hb_iidp_solver_new(const struct hb_perf *perf, struct hb_iidp_solver **out, struct hb_error *err)
{
	struct hb_iidp_solver *s;

	*out = NULL;
	if (!perf || !perf->prepared)
		return hb_input_error(err, "IIDP solver: the performance model is not prepared");
	s = calloc(1, sizeof(*s));
	if (!s || !(s->key = calloc(2 * (size_t)perf->nnodes + 1, sizeof(int))) ||
	    !(s->node_class = calloc((size_t)perf->nnodes + 1, sizeof(int))) ||
	    !(s->next_in_class = calloc((size_t)perf->nnodes + 1, sizeof(int))) ||
	    !(s->skey = calloc(3 + 2 * (size_t)perf->nnodes, sizeof(long))) ||
	    !(s->bkey = calloc(4 + (size_t)perf->nnodes, sizeof(long))) ||
	    !(s->full = calloc((size_t)perf->nnodes + 1, sizeof(int)))) {
		if (s) {
			free(s->key);
			free(s->node_class);
			free(s->next_in_class);
			free(s->skey);
			free(s->bkey);
		}
		free(s);
		return hb_runtime_error(err, "IIDP solver: out of memory");
	}
	classify_nodes(perf, s->node_class, s->next_in_class);
	s->hint_node = malloc(((size_t)perf->nnodes + 1) * sizeof(int));
	s->hint_gpus = malloc(((size_t)perf->nnodes + 1) * sizeof(int));
	s->hcomm = malloc(((size_t)perf->nnodes + 1) * sizeof(*s->hcomm));
	if (!s->hint_node || !s->hint_gpus || !s->hcomm) {
		s->perf = perf;
		hb_iidp_solver_free(s);
		return hb_runtime_error(err, "IIDP solver: out of memory");
	}
	s->perf = perf;
	s->tables.keys_in_val = s->shapes.keys_in_val = s->held.keys_in_val = 1;
	s->limit = (size_t)64 << 20;
	*out = s;
	return 0;
}

/* Tell the budget what s holds now. */
void iidp_budget_report(struct hb_iidp_solver *s)
{
	if (s->budget) {
		s->budget->used = s->budget->used - s->reported + s->st.cache_bytes;
		s->reported = s->st.cache_bytes;
	}
}

void hb_iidp_solver_clear_cache(struct hb_iidp_solver *s)
{
	hmap_clear(&s->tables, iidp_table_free);
	hmap_clear(&s->shapes, free);
	s->st.cache_bytes = 0;
	s->shape_bytes = 0;
	iidp_budget_report(s);
}

void hb_iidp_solver_free(struct hb_iidp_solver *s)
{
	if (!s)
		return;
	hb_iidp_solver_clear_cache(s); /* and tells its budget */
	hmap_clear(&s->held, free); /* unreleased holds: their holders outlived the solver */
	hb_iidp_scratch_free(&s->sc);
	free(s->key);
	free(s->node_class);
	free(s->next_in_class);
	free(s->skey);
	free(s->bkey);
	free(s->full);
	free(s->hint_node);
	free(s->hint_gpus);
	free(s->hcomm);
	hmap_clear(&s->lbs_by_types, free);
	free(s->w);
	free(s->h_lbs);
	free(s->h_cand);
	free(s);
}

void hb_iidp_solver_set_cache_limit(struct hb_iidp_solver *s, size_t bytes)
{
	if (s->budget)
		hb_iidp_solver_set_budget(s, NULL);
	s->limit = bytes;
	if (s->st.cache_bytes > bytes)
		hb_iidp_solver_clear_cache(s);
}

void hb_iidp_solver_set_budget(struct hb_iidp_solver *s, struct hb_iidp_budget *b)
{
	hb_iidp_solver_clear_cache(s); /* reports 0 to the old budget */
	s->budget = b;
	s->reported = 0;
	if (b)
		s->limit = b->limit;
}

void hb_iidp_solver_stats(const struct hb_iidp_solver *s, struct hb_iidp_stats *out)
{
	*out = s->st;
}

/* Round n up to a multiple of the alignment of a (the table's arrays share
 * one block). */
#define TABLE_ALIGN(n, a) (((n) + _Alignof(a) - 1) / _Alignof(a) * _Alignof(a))

/* Build the table of the key in s->key (k words: B_L, then the used nodes'
 * (node, GPUs) ascending) on alloc; every used node must have a feasible
 * profile at B_L (the caller checked with hb_perf_alloc_lbs).  The table,
 * its arrays and a copy of the key are one allocation of *bytes.  With
 * hinted = 1 the used nodes are s->hint_node in order and their
 * communication is taken from (or left in) s->hcomm. */
static int table_build(struct hb_iidp_solver *s, const int *alloc, int k, int hinted, struct table **out,
		       size_t *bytes, struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	const int local_bs = s->key[0], nused = (k - 1) / 2;
	size_t ncoef = 0, npairs = 0, off_coef, off_pairs, off_node, off_key, size;
	int ng = 0;
	struct table *t;
	char *blk;

	*out = NULL;
	for (int j = 0; j < nused; j++) {
		const int i = s->key[1 + 2 * j], a = s->key[2 + 2 * j];
		const struct hb_perf_lbs *l = hb_perf_find_lbs(pf, pf->nodes[i].gpu, local_bs);

		if (!l || l->n_cap < 1)
			return hb_input_error(err, "IIDP solver: GPU %s of node %s has no feasible profile at B_L %d",
					      pf->gpus[pf->nodes[i].gpu].name, pf->nodes[i].name, local_bs);
		ncoef += (size_t)l->n_cap;
		npairs += (size_t)(a / 2);
		ng += a;
	}
	off_coef = TABLE_ALIGN(sizeof(*t), struct hb_perf_coef);
	off_pairs = TABLE_ALIGN(off_coef + ncoef * sizeof(struct hb_perf_coef), struct hb_iidp_pair);
	off_node = TABLE_ALIGN(off_pairs + npairs * sizeof(struct hb_iidp_pair), int);
	off_key = off_node + npairs * sizeof(int);
	size = off_key + (size_t)k * sizeof(int);
	if (!(blk = malloc(size)))
		return hb_runtime_error(err, "IIDP solver: out of memory");
	t = (struct table *)blk;
	memset(t, 0, sizeof(*t));
	t->local_bs = local_bs;
	t->n_gpus = ng;
	t->npairs = (int)npairs;
	t->klen = k * (int)sizeof(int);
	t->coef = (struct hb_perf_coef *)(blk + off_coef);
	t->pairs = (struct hb_iidp_pair *)(blk + off_pairs);
	t->pair_node = (int *)(blk + off_node);
	t->key = (int *)(blk + off_key);
	memcpy(t->key, s->key, (size_t)k * sizeof(int));
	if (hinted && !s->hcomm_ok) {
		/* The hint counts the allocation (validated): no scan of alloc. */
		for (int j = 0; j < nused; j++)
			if (hb_perf_comm_eval_n(pf, s->key[1 + 2 * j], ng, nused, &s->hcomm[j], err) != 0) {
				free(blk);
				return -1;
			}
		s->hcomm_ok = 1;
	}
	ncoef = npairs = 0;
	for (int j = 0; j < nused; j++) {
		const int i = s->key[1 + 2 * j], a = s->key[2 + 2 * j];
		const struct hb_perf_lbs *l = hb_perf_find_lbs(pf, pf->nodes[i].gpu, local_bs);
		struct hb_perf_comm c;
		struct hb_perf_coef *co = t->coef + ncoef;

		if (hinted)
			c = s->hcomm[j];
		else if (hb_perf_comm_eval(pf, alloc, i, &c, err) != 0) {
			free(blk);
			return -1;
		}
		for (int n = 1; n <= l->n_cap; n++) {
			if (hb_perf_coef_eval(pf, l, &c, n, pf->tau, &co[n - 1], err) != 0) {
				free(blk);
				return -1;
			}
		}
		for (int q = 0; q < a / 2; q++) {
			t->pairs[npairs].cap = l->n_cap;
			t->pairs[npairs].coef = co;
			t->pair_node[npairs++] = i;
		}
		ncoef += (size_t)l->n_cap;
	}
	*bytes = size;
	*out = t;
	return 0;
}

/* The cached table, or a fresh one the caller must free (*owned = 1). */
int iidp_table_get(struct hb_iidp_solver *s, const int *alloc, int local_bs, struct table **out, int *owned,
		   struct hb_error *err)
{
	size_t klen, bytes = 0, used;
	struct table *t;
	uint64_t h = 1469598103934665603ULL;
	int k = 1;

	*owned = 0;
	/* The used nodes only: an allocation spans a few nodes of a cluster of
	 * hundreds, and the (node, GPUs) list names it as well as the vector. */
	s->key[0] = local_bs;
	if (s->hint_n > 0) {
		for (int j = 0; j < s->hint_n; j++) {
			s->key[k++] = s->hint_node[j];
			s->key[k++] = s->hint_gpus[j];
		}
	} else {
		for (int i = 0; i < s->perf->nnodes; i++)
			if (alloc[i] != 0) {
				s->key[k++] = i;
				s->key[k++] = alloc[i];
			}
	}
	klen = (size_t)k * sizeof(int);
	/* A word at a time, as the shape cache (hash_bytes costs a multiply per byte). */
	for (int i = 0; i < k; i++)
		h = (h ^ (uint32_t)s->key[i]) * 0x9E3779B97F4A7C15ULL, h ^= h >> 29;
	h = h ? h : 1;
	if (s->limit > 0 && (t = hmap_get_h(&s->tables, h, s->key, klen)) != NULL) {
		s->st.table_hits++;
		*out = t;
		return 0;
	}
	s->st.table_misses++;
	if (table_build(s, alloc, k, s->hint_n > 0, &t, &bytes, err) != 0)
		return -1;
	if (s->limit == 0 || (used = iidp_hmap_put_h(&s->tables, h, t->key, klen, t)) == 0) {
		*owned = 1;
	} else {
		/* The table (its key inside) goes with it; the slot array stays. */
		t->bytes = bytes;
		s->st.cache_bytes += t->bytes + (used - 1);
	}
	*out = t;
	return 0;
}

/* The record of (t, M), created (as a bound-only entry) if absent; -1 when
 * memory runs out, which only costs a recomputation.  A growth moves the
 * records: a record is named by its position, never by a pointer kept
 * across this call. */
long iidp_memo_entry(struct hb_iidp_solver *s, struct table *t, int M)
{
	struct memo_set *ms = t->memo;
	long i = memo_find(t, M);
	uint32_t mask, j;

	if (i >= 0)
		return i;
	if (!ms || ms->n == ms->cap) {
		const uint32_t nc = ms ? 2 * ms->cap : 4;
		const size_t nb = memo_set_bytes(nc, t->npairs), ob = ms ? memo_set_bytes(ms->cap, t->npairs) : 0;
		struct memo_set *nm;

		if (nc > UINT32_MAX / 4 || !(nm = malloc(nb)))
			return -1;
		/* Records, then workers, then the index: doubles first, then ints. */
		nm->n = ms ? ms->n : 0;
		nm->cap = nc;
		nm->rec = (struct memo *)(nm + 1);
		nm->w = (int *)(nm->rec + nc);
		nm->idx = (uint32_t *)(nm->w + (size_t)nc * (size_t)t->npairs);
		memset(nm->idx, 0, 2 * (size_t)nc * sizeof(uint32_t));
		mask = 2 * nc - 1;
		for (uint32_t r = 0; r < nm->n; r++) {
			nm->rec[r] = ms->rec[r];
			for (j = memo_slot(nm->rec[r].M, mask); nm->idx[j] != 0; j = (j + 1) & mask)
				;
			nm->idx[j] = r + 1;
		}
		if (ms)
			memcpy(nm->w, ms->w, (size_t)ms->n * (size_t)t->npairs * sizeof(int));
		free(ms);
		t->memo = ms = nm;
		/* Counted with the table: evicting it frees its memos. */
		t->bytes += nb - ob;
		s->st.cache_bytes += nb - ob;
	}
	mask = 2 * ms->cap - 1;
	for (j = memo_slot(M, mask); ms->idx[j] != 0; j = (j + 1) & mask)
		;
	i = ms->n++;
	ms->idx[j] = (uint32_t)i + 1;
	ms->rec[i].t = -INFINITY;
	ms->rec[i].exact = 0;
	ms->rec[i].M = M;
	return i;
}

/* Solve (table, M) into s->w and *T, through the memo for the fast path. */
int iidp_table_solve(struct hb_iidp_solver *s, struct table *t, int M, int method, double *T, int cache,
		     struct hb_error *err)
{
	long i;
	int rc;

	s->st.solves++;
	if (t->npairs > s->w_cap) {
		int *nw = realloc(s->w, (size_t)t->npairs * sizeof(int));
		if (!nw)
			return hb_runtime_error(err, "IIDP solver: out of memory");
		s->w = nw;
		s->w_cap = t->npairs;
	}
	if (method == HB_IIDP_FAST && cache) {
		i = memo_find(t, M);
		if (i >= 0 && t->memo->rec[i].exact) {
			s->st.memo_hits++;
			*T = t->memo->rec[i].t;
			if (!s->summary_only) /* the workers are read by result_fill's pairs only */
				memcpy(s->w, t->memo->w + (size_t)i * (size_t)t->npairs,
				       (size_t)t->npairs * sizeof(int));
			return 0;
		}
		s->st.memo_misses++;
	}
	rc = method == HB_IIDP_DP ? hb_iidp_minmax_dp(t->pairs, t->npairs, M, &s->sc, T, s->w, err)
				  : hb_iidp_minmax_fast(t->pairs, t->npairs, M, &s->sc, T, s->w, err);
	if (rc != 0)
		return -1;
	if (method == HB_IIDP_FAST && cache && (i = iidp_memo_entry(s, t, M)) >= 0) {
		t->memo->rec[i].t = *T;
		t->memo->rec[i].exact = 1;
		memcpy(t->memo->w + (size_t)i * (size_t)t->npairs, s->w, (size_t)t->npairs * sizeof(int));
	}
	return 0;
}
