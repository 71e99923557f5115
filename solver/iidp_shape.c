/*
 * iidp_shape.c: the IIDP solver's answers by allocation shape.
 *
 * A shape is an allocation up to which identical node holds what
 * (hb_iidp_shape_of); its summary (hb_iidp_solve_summary) and its bounds
 * on throughput and on the least global batch (hb_iidp_shape_bound, held
 * copies shared by holders) are cached in the solver's shape map.  The
 * contract, and why each bound bounds, are in iidp.h.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iidp_priv.h"

void hb_iidp_shape_free(struct hb_iidp_shape *sh)
{
	if (!sh)
		return;
	free(sh->node);
	free(sh->gpus);
	free(sh->key);
	free(sh->akey);
	memset(sh, 0, sizeof(*sh));
}

int hb_iidp_node_kind(const struct hb_iidp_solver *s, int i)
{
	return s->node_class[i];
}

static int shape_grow(struct hb_iidp_shape *sh, int n, struct hb_error *err)
{
	int *nn, *ng;
	long *nk, *na;

	if (n <= sh->cap)
		return 0;
	n = n < 8 ? 8 : n;
	nn = realloc(sh->node, (size_t)n * sizeof(*nn));
	if (nn)
		sh->node = nn;
	ng = realloc(sh->gpus, (size_t)n * sizeof(*ng));
	if (ng)
		sh->gpus = ng;
	nk = realloc(sh->key, 2 * (size_t)n * sizeof(*nk));
	if (nk)
		sh->key = nk;
	na = realloc(sh->akey, ((size_t)n + 1) * sizeof(*na));
	if (na)
		sh->akey = na;
	if (!nn || !ng || !nk || !na)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	sh->cap = n;
	return 0;
}

/* Append node i with a GPUs (a != 0) to sh, keeping key sorted; anything
 * hb_iidp_solve would refuse returns 1 (the caller reports it). */
static int shape_add(const struct hb_iidp_solver *s, struct hb_iidp_shape *sh, int i, int a)
{
	long c;
	int j = sh->nused;

	if (i < 0 || i >= s->perf->nnodes || a < 0 || a % 2 != 0 || a > s->perf->nodes[i].ngpus)
		return 1;
	c = s->node_class[i];
	sh->node[j] = i;
	sh->gpus[j] = a;
	/* Insertion into the sorted (class, GPUs) list: a few used nodes. */
	while (j > 0 && (sh->key[2 * j - 2] > c || (sh->key[2 * j - 2] == c && sh->key[2 * j - 1] > a))) {
		sh->key[2 * j] = sh->key[2 * j - 2];
		sh->key[2 * j + 1] = sh->key[2 * j - 1];
		j--;
	}
	sh->key[2 * j] = c;
	sh->key[2 * j + 1] = a;
	sh->nused++;
	sh->n_gpus += a;
	return 0;
}

/* sh's answer key (iidp.h, iidp_answer_key) and its hash, from its sorted key. */
static void shape_finish(struct hb_iidp_shape *sh)
{
	sh->nakey = iidp_answer_key(sh->key, sh->nused, sh->akey);
	sh->ahash = hash_words(sh->akey, (size_t)sh->nakey, 1469598103934665603ULL);
}

/* hb_iidp_solve's message for an allocation it refuses. */
static int shape_refused(const struct hb_iidp_solver *s, const int *node, const int *gpus, int n,
			 struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	int *full, ng, rc;

	for (int k = 0; k < n; k++)
		if (gpus[k] != 0 && (node[k] < 0 || node[k] >= pf->nnodes))
			return hb_input_error(err, "IIDP solver: node index %d out of range (%d nodes)", node[k],
					      pf->nnodes);
	full = calloc((size_t)pf->nnodes + 1, sizeof(int));
	if (!full)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	for (int k = 0; k < n; k++)
		if (gpus[k] != 0)
			full[node[k]] = gpus[k];
	rc = iidp_validate_alloc(pf, full, &ng, err);
	free(full);
	return rc != 0 ? -1 : hb_runtime_error(err, "IIDP solver: shape: allocation refused");
}

int hb_iidp_shape_of(const struct hb_iidp_solver *s, const int *alloc, struct hb_iidp_shape *sh,
		     struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	int ng;

	if (!alloc)
		return hb_input_error(err, "IIDP solver: no allocation");
	sh->nused = sh->n_gpus = 0;
	for (int i = 0; i < pf->nnodes; i++) {
		if (alloc[i] == 0)
			continue;
		if (sh->nused == sh->cap && shape_grow(sh, sh->cap ? 2 * sh->cap : 8, err) < 0)
			return -1;
		if (shape_add(s, sh, i, alloc[i]))
			return iidp_validate_alloc(pf, alloc, &ng, err) != 0 ? -1 : hb_runtime_error(err, "IIDP solver: shape");
	}
	if (sh->n_gpus == 0)
		return iidp_validate_alloc(pf, alloc, &ng, err) != 0 ? -1 : hb_runtime_error(err, "IIDP solver: shape");
	shape_finish(sh);
	return 0;
}

int hb_iidp_shape_of_nodes(const struct hb_iidp_solver *s, const int *node, const int *gpus, int n,
			   struct hb_iidp_shape *sh, struct hb_error *err)
{
	sh->nused = sh->n_gpus = 0;
	if (shape_grow(sh, n, err) < 0)
		return -1;
	for (int k = 0; k < n; k++) {
		if (k > 0 && node[k] <= node[k - 1])
			return hb_input_error(err, "IIDP solver: shape: node %d after node %d (ascending nodes expected)",
					      node[k], node[k - 1]);
		if (gpus[k] != 0 && shape_add(s, sh, node[k], gpus[k]))
			return shape_refused(s, node, gpus, n, err);
	}
	if (sh->n_gpus == 0)
		return shape_refused(s, node, gpus, n, err);
	shape_finish(sh);
	return 0;
}

/* The shape cache's key of (req, sh) in 3 + nakey words: every request
 * field a solve reads (B_G, current B_G, then B_L and the M rule in one
 * word), then sh's answer key (iidp.h), whose length the key's gives:
 * shapes that answer alike share their entries. */
static void shape_key(const struct hb_iidp_request *req, const struct hb_iidp_shape *sh, long *key)
{
	key[0] = req->global_bs;
	key[1] = req->cur_global_bs;
	/* A solve reads the rule as run-time, exact or Algorithm 1, and only
	 * the fast method is cached (bit 34 is SHAPE_KEY_BOUND's). */
	key[2] = (long)((uint64_t)(uint32_t)req->local_bs | (uint64_t)(req->m_rule == HB_IIDP_M_RUNTIME) << 32 |
			(uint64_t)(req->method == HB_IIDP_FAST) << 33 |
			(uint64_t)(req->m_rule == HB_IIDP_M_EXACT) << 35);
	memcpy(key + 3, sh->akey, (size_t)sh->nakey * sizeof(long));
}

static void summary_from(const struct hb_iidp_result *r, struct hb_iidp_summary *out)
{
	out->found = r->found;
	out->global_bs = r->found ? r->global_bs : 0;
	out->local_bs = r->found ? r->local_bs : 0;
	out->m = r->found ? r->m : 0;
	out->n_gpus = r->found ? r->n_gpus : 0;
	out->iter_s = r->found ? r->iter_s : 0.0;
	out->throughput = r->found ? r->throughput : 0.0;
}

/* The least B_G with round(B_G / B_L / 2) = M (hb_iidp_round_m, halves to
 * even): B_G / (2 B_L) = M - 1/2 at (2 M - 1) B_L, which rounds to M when
 * M is even. */
static long round_m_least(long M, int local_bs)
{
	if (M <= 0)
		return 0;
	return (2 * M - 1) * (long)local_bs + (M & 1);
}

/* An Algorithm 1 request (rule round, no fixed B_L) reads its B_G only
 * through M = round(B_G / B_L / 2) at each candidate B_L of the shape,
 * ascending, up to the first with M < N_H, where it stops.  Two B_G with
 * the same M's have the same candidates (B_L, M), the same checks on 2 M
 * B_L (bounds, size) and so the same answer, realised B_G (2 M B_L)
 * included.  Each M is non-decreasing in B_G, so the B_G with given M's
 * form an interval, and its least point, the largest of each M's least
 * B_G, has them too (its M's are at most and at least B_G's): that point
 * names the interval, and a summary is keyed by it instead of by B_G.
 * JABAS ranks shapes on forecast batches that move by less than a B_L
 * step from epoch to epoch: on two days of Philly, keyed by B_G, one
 * model's summaries missed 1.0 million times on 0.34 million distinct
 * keys.  Returns the least point, or B_G itself when the request has no
 * candidate B_L; *listed = 0 (and B_G) when the shape's candidate B_L
 * are not known yet (the first solve of its GPU types lists them) or are
 * not listed by type set, which is the request's other key. */
static long summary_canonical_bs(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh,
				 const struct hb_iidp_request *req, int *listed)
{
	const struct hb_perf *pf = s->perf;
	const long nh = sh->n_gpus / 2;
	const struct lbs_list *l;
	uint64_t mask = 0;
	long lo = 0;

	*listed = 0;
	if (pf->ngpus > 64 || req->m_rule != HB_IIDP_M_ROUND || req->local_bs != 0 || req->global_bs <= 0)
		return req->global_bs;
	/* a class is named by its least node, whose GPU type it shares */
	for (int j = 0; j < sh->nused; j++)
		mask |= (uint64_t)1 << pf->nodes[sh->key[2 * j]].gpu;
	if (!(l = hmap_get(&s->lbs_by_types, &mask, sizeof(mask))))
		return req->global_bs;
	*listed = 1;
	for (int k = 0; k < l->nl; k++) {
		const long M = hb_iidp_round_m(req->global_bs, l->lbs[k]), m_lo = round_m_least(M, l->lbs[k]);

		if (M < nh)
			break;
		lo = m_lo > lo ? m_lo : lo;
	}
	/* no candidate (not found): its own B_G keys it */
	return lo > 0 ? lo : req->global_bs;
}

int hb_iidp_solve_summary(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh,
			  const struct hb_iidp_request *req, struct hb_iidp_summary *out, struct hb_error *err)
{
	struct hb_iidp_request r2 = *req;
	struct hb_iidp_result r;
	struct shape_entry *v;
	const size_t nkey = 3 + (size_t)sh->nakey, klen = nkey * sizeof(long);
	/* The DP is the reference path: never memoised (as iidp_table_solve). */
	const int cache = s->limit > 0 && req->method == HB_IIDP_FAST;
	uint64_t h = 0;
	size_t used;
	int rc, listed = 0;

	memset(out, 0, sizeof(*out));
	if (cache) {
		shape_key(req, sh, s->skey);
		s->skey[0] = summary_canonical_bs(s, sh, req, &listed);
		/* The shape's words were hashed when it was built. */
		h = hash_words(s->skey, 3, sh->ahash);
		if ((v = hmap_get_h(&s->shapes, h, s->skey, klen)) != NULL) {
			s->st.shape_hits++;
			*out = v->sum;
			return 0;
		}
		s->st.shape_misses++;
	}
	/* A miss solves the shape's canonical allocation: its (kind, GPUs) in
	 * key order on the first nodes of each kind, so every allocation of
	 * the shape meets the same (allocation, B_L) tables and M memos.  Its
	 * summary is the shape's (see iidp.h).  The vector is zeroed again
	 * after. */
	s->hint_n = 0;
	for (int k = 0, node = -1; k < sh->nused; k++) {
		long c = sh->key[2 * k];
		int j = s->hint_n++;

		node = k > 0 && sh->key[2 * k - 2] == c ? s->next_in_class[node] : (int)c;
		s->full[node] = (int)sh->key[2 * k + 1];
		/* the hint lists the used nodes ascending, as a scan would */
		for (; j > 0 && s->hint_node[j - 1] > node; j--) {
			s->hint_node[j] = s->hint_node[j - 1];
			s->hint_gpus[j] = s->hint_gpus[j - 1];
		}
		s->hint_node[j] = node;
		s->hint_gpus[j] = s->full[node];
	}
	r2.alloc = s->full;
	if (cache) {
		/* The key hb_iidp_shape_bound files the shape's bounds under. */
		memcpy(s->bkey + 3, s->skey + 3, (size_t)sh->nakey * sizeof(long));
		s->bkey[0] = s->bkey[1] = 0;
		s->bkey[2] = SHAPE_KEY_BOUND;
		s->bkey_h = hash_words(s->bkey, 3, sh->ahash);
		s->bkey_len = klen;
	}
	s->summary_only = 1;
	rc = hb_iidp_solve(s, &r2, &r, err);
	s->summary_only = 0;
	s->bkey_len = 0;
	s->hint_n = 0;
	for (int k = 0, node = -1; k < sh->nused; k++) {
		long c = sh->key[2 * k];

		node = k > 0 && sh->key[2 * k - 2] == c ? s->next_in_class[node] : (int)c;
		s->full[node] = 0;
	}
	if (rc < 0)
		return -1;
	summary_from(&r, out);
	hb_iidp_result_free(&r);
	/* hb_iidp_solve may have evicted entries: the key is still in skey.
	 * The first solve of the shape's GPU types lists their B_L: the
	 * answer is filed under the least B_G then, where the next request of
	 * the interval looks. */
	if (cache && !listed) {
		const long lo = summary_canonical_bs(s, sh, req, &listed);

		if (lo != s->skey[0]) {
			s->skey[0] = lo;
			h = hash_words(s->skey, 3, sh->ahash);
			if (hmap_get_h(&s->shapes, h, s->skey, klen) != NULL)
				return 0; /* filed already (the map keeps no duplicates) */
		}
	}
	if (cache && (v = malloc(sizeof(*v) + klen)) != NULL) {
		v->sum = *out;
		v->nkey = (int)nkey;
		v->extra = 0;
		memcpy(v->key, s->skey, klen);
		if ((used = iidp_hmap_put_h(&s->shapes, h, v->key, klen, v)) == 0) {
			free(v);
		} else {
			used += sizeof(*v) + klen - 1; /* the entry, and any growth of the slots */
			s->st.cache_bytes += used;
			s->shape_bytes += used;
		}
	}
	return 0;
}

static int sb_reserve(struct hb_iidp_shape_bound *b, size_t bytes)
{
	if (bytes > b->cap) {
		void *nb = realloc(b->blob, bytes);

		if (!nb)
			return -1;
		b->blob = nb;
		b->cap = bytes;
	}
	b->bytes = bytes;
	return 0;
}

void hb_iidp_shape_bound_free(struct hb_iidp_shape_bound *b)
{
	if (!b)
		return;
	if (!b->held) /* a held copy is the solver's: hb_iidp_shape_bound_release */
		free(b->blob);
	memset(b, 0, sizeof(*b));
}

/* Build b for sh on the canonical allocation s->full (spread by the
 * caller): the same comm_eval per used node and coef_eval per (B_L, n_vsw)
 * as table_build, over the B_L that hb_perf_alloc_lbs lists (hint_lbs's
 * list).  A node's communication depends on the allocation, not on B_L. */
static int shape_bound_build(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, const int *node,
			     struct hb_iidp_shape_bound *b, struct hb_error *err)
{
	const struct hb_perf *pf = s->perf;
	struct hb_perf_comm *comm = malloc((size_t)sh->nused * sizeof(*comm));
	int *lbs = NULL, nl = 0, rc = -1;
	struct sb_lbs *v;

	if (!comm)
		return hb_runtime_error(err, "IIDP solver: out of memory");
	for (int k = 0; k < sh->nused; k++)
		if (hb_perf_comm_eval(pf, s->full, node[k], &comm[k], err) != 0)
			goto out;
	if (hb_perf_alloc_lbs(pf, s->full, &lbs, &nl, err) != 0)
		goto out;
	if (sb_reserve(b, (size_t)nl * sizeof(*v)) < 0) {
		hb_runtime_error(err, "IIDP solver: out of memory");
		goto out;
	}
	b->nl = nl;
	b->nh = sh->n_gpus / 2;
	v = b->blob;
	for (int i = 0; i < nl; i++) {
		v[i] = (struct sb_lbs){ .f_inf = 0.0, .a = INFINITY, .b = INFINITY, .c = INFINITY, .lbs = lbs[i], .ok = 1 };
		/* By class (a run of sh's sorted key): its nodes' coefficients
		 * are the same, so the blob is a function of the answer key
		 * (iidp.h), as the cache that files it under that key needs. */
		for (int k = 0, k1; k < sh->nused && v[i].ok > 0; k = k1) {
			const struct hb_perf_lbs *l = hb_perf_find_lbs(pf, pf->nodes[node[k]].gpu, lbs[i]);
			double r = 0.0;
			long pairs = 0;

			for (k1 = k; k1 < sh->nused && sh->key[2 * k1] == sh->key[2 * k]; k1++)
				pairs += sh->key[2 * k1 + 1] / 2;

			/* No profile: no table, the solve fails, no answer at B_L. */
			if (!l || l->n_cap < 1) {
				v[i].ok = 0;
				break;
			}
			for (int n = 1; n <= l->n_cap; n++) {
				struct hb_perf_coef co;

				if (hb_perf_coef_eval(pf, l, &comm[k], n, pf->tau, &co, err) != 0)
					goto out;
				if (!(co.step_s > 0.0) || !(co.base_s >= co.step_s) || !isfinite(co.base_s)) {
					v[i].ok = -1;
					break;
				}
				r = (double)n / co.step_s > r ? (double)n / co.step_s : r;
				v[i].a = co.base_s - co.step_s < v[i].a ? co.base_s - co.step_s : v[i].a;
				v[i].b = co.step_s / n < v[i].b ? co.step_s / n : v[i].b;
				v[i].c = co.base_s < v[i].c ? co.base_s : v[i].c;
			}
			v[i].f_inf += (double)pairs * 2.0 * lbs[i] * r;
		}
	}
	rc = 0;
out:
	free(lbs);
	free(comm);
	return rc;
}

/* File b under the bound key in s->skey (klen bytes, hash h) in the shape
 * cache, its blob after the key (the entry's summary is unused: the
 * bound's counts follow from the shape and the blob's size).  Out of
 * memory, nothing is filed (a cache may forget). */
static void shape_bound_file(struct hb_iidp_solver *s, uint64_t h, size_t klen, const struct hb_iidp_shape_bound *b)
{
	struct shape_entry *v;
	size_t used;

	if (b->bytes <= INT32_MAX && (v = malloc(sizeof(*v) + klen + b->bytes)) != NULL) {
		memset(&v->sum, 0, sizeof(v->sum));
		v->nkey = (int)(klen / sizeof(long));
		v->extra = (int)b->bytes;
		memcpy(v->key, s->skey, klen);
		memcpy((char *)v->key + klen, b->blob, b->bytes);
		if ((used = iidp_hmap_put_h(&s->shapes, h, v->key, klen, v)) == 0) {
			free(v);
		} else {
			used += sizeof(*v) + klen + b->bytes - 1;
			s->st.cache_bytes += used;
			s->shape_bytes += used;
		}
	}
}

/* The bounds of a shape are a function of it and they are asked for at
 * every offer's every shape, which recur across offers and across the jobs
 * of one model: they are kept in the shape cache, their blob after the key
 * of an entry under a key no request forms (the entry's extra counts it),
 * so they share its limit and eviction. */
static int bound_fill(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
		      struct hb_error *err)
{
	const size_t nkey = 3 + (size_t)sh->nakey, klen = nkey * sizeof(long);
	struct shape_entry *v;
	uint64_t h = 0;
	int *node, rc;

	/* b is refilled: its memo answered the old blob. */
	b->memo_fx = b->memo_gx = 0;
	if (s->limit > 0) {
		const struct hb_iidp_request none = { 0 };

		shape_key(&none, sh, s->skey);
		s->skey[2] = SHAPE_KEY_BOUND;
		h = hash_words(s->skey, 3, sh->ahash);
		if ((v = hmap_get_h(&s->shapes, h, s->skey, klen)) != NULL) {
			const size_t bytes = (size_t)v->extra;

			if (sb_reserve(b, bytes) < 0)
				return hb_runtime_error(err, "IIDP solver: out of memory");
			memcpy(b->blob, (const char *)v->key + klen, bytes);
			b->nh = sh->n_gpus / 2;
			b->nl = (int)(bytes / sizeof(struct sb_lbs));
			return 0;
		}
	}
	if (!(node = malloc((size_t)sh->nused * sizeof(*node))))
		return hb_runtime_error(err, "IIDP solver: out of memory");
	/* The canonical allocation, as hb_iidp_solve_summary spreads it. */
	for (int k = 0, i = -1; k < sh->nused; k++) {
		long c = sh->key[2 * k];

		i = k > 0 && sh->key[2 * k - 2] == c ? s->next_in_class[i] : (int)c;
		node[k] = i;
		s->full[i] = (int)sh->key[2 * k + 1];
	}
	rc = shape_bound_build(s, sh, node, b, err);
	for (int k = 0; k < sh->nused; k++)
		s->full[node[k]] = 0;
	free(node);
	if (rc < 0)
		return -1;
	/* Nothing above evicts: the key is still in skey. */
	if (s->limit > 0)
		shape_bound_file(s, h, klen, b);
	return 0;
}

int hb_iidp_shape_bound(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
			struct hb_error *err)
{
	if (sh->nused < 1)
		return hb_input_error(err, "IIDP solver: shape bound: empty shape");
	if (b->held)
		return hb_runtime_error(err, "IIDP solver: shape bound: b holds a shared copy (release it first)");
	return bound_fill(s, sh, b, err);
}

int hb_iidp_shape_bound_hold(struct hb_iidp_solver *s, const struct hb_iidp_shape *sh, struct hb_iidp_shape_bound *b,
			     struct hb_error *err)
{
	const size_t nkey = 3 + (size_t)sh->nakey, klen = nkey * sizeof(long);
	const struct hb_iidp_request none = { 0 };
	struct held_bound *e;
	uint64_t h;

	if (sh->nused < 1)
		return hb_input_error(err, "IIDP solver: shape bound: empty shape");
	if (b->held || b->blob)
		return hb_runtime_error(err, "IIDP solver: shape bound: b is not empty (release it first)");
	shape_key(&none, sh, s->skey);
	s->skey[2] = SHAPE_KEY_BOUND;
	h = hash_words(s->skey, 3, sh->ahash);
	if (!(e = hmap_get_h(&s->held, h, s->skey, klen))) {
		/* The first holder: the bounds as hb_iidp_shape_bound gives
		 * them (a cached copy, or built and filed), copied once. */
		struct hb_iidp_shape_bound tmp = { 0 };

		if (bound_fill(s, sh, &tmp, err) < 0) {
			hb_iidp_shape_bound_free(&tmp);
			return -1;
		}
		/* skey again: bound_fill may use it as scratch */
		shape_key(&none, sh, s->skey);
		s->skey[2] = SHAPE_KEY_BOUND;
		if (!(e = malloc(sizeof(*e) + klen + tmp.bytes))) {
			hb_iidp_shape_bound_free(&tmp);
			return hb_runtime_error(err, "IIDP solver: out of memory");
		}
		e->h = h;
		e->refs = 0;
		e->nkey = (uint32_t)nkey;
		e->bytes = tmp.bytes;
		memcpy(e->key, s->skey, klen);
		memcpy((char *)e->key + klen, tmp.blob, tmp.bytes);
		hb_iidp_shape_bound_free(&tmp);
		if (iidp_hmap_put_h(&s->held, h, e->key, klen, e) == 0) {
			free(e);
			return hb_runtime_error(err, "IIDP solver: out of memory");
		}
	}
	e->refs++;
	memset(b, 0, sizeof(*b));
	b->blob = (char *)e->key + klen;
	b->bytes = e->bytes;
	b->nh = sh->n_gpus / 2;
	b->nl = (int)(e->bytes / sizeof(struct sb_lbs));
	b->held = e;
	return 0;
}

void hb_iidp_shape_bound_release(struct hb_iidp_solver *s, struct hb_iidp_shape_bound *b)
{
	struct held_bound *e = b->held;

	if (!e) {
		hb_iidp_shape_bound_free(b); /* an own copy, or nothing */
		return;
	}
	if (--e->refs == 0) {
		const size_t klen = (size_t)e->nkey * sizeof(long);
		const size_t i = hmap_find_slot(&s->held, e->h, e->key, klen);

		if (i != SIZE_MAX)
			iidp_hmap_remove_at(&s->held, i);
		free(e);
		iidp_hmap_shrink(&s->held);
	}
	memset(b, 0, sizeof(*b));
}

size_t hb_iidp_held_shapes(const struct hb_iidp_solver *s)
{
	return s->held.n;
}

/* The throughput bound of B_L entry e over every request whose M is at
 * most M (>= nh; iidp.h says why it holds): with u = ceil(M / nh) the
 * busiest pair's time is at least max(c, a + u b), so an answer of M
 * workers runs at most 2 B_L M / max(c, a + u b).  That is not monotone in
 * M (it falls where u steps up), so a request of fewer workers is bounded
 * by the top of the level below, M' = (u - 1) nh, when that level has one.
 * Counting the workers (M) instead of every pair's share (nh u) matters
 * where M is a little above a multiple of nh: ncf on 4 pairs at B_G
 * 30,528 had its bound at 2.43e6 samples/s from a B_L of M = 5 (as if 8
 * workers), against a best answer of 1.77e6. */
static double sb_f_ub(const struct sb_lbs *e, long M, int nh)
{
	const long u = (M + nh - 1) / nh;
	double t = e->a + (double)u * e->b, f;

	t = t > e->c ? t : e->c;
	f = 2.0 * e->lbs * (double)M / t;
	if (u > 1) {
		double t2 = e->a + (double)(u - 1) * e->b, f2;

		t2 = t2 > e->c ? t2 : e->c;
		f2 = 2.0 * e->lbs * (double)nh * (double)(u - 1) / t2;
		f = f2 > f ? f2 : f;
	}
	return f < e->f_inf ? f : e->f_inf;
}

double hb_iidp_shape_max_throughput(const struct hb_iidp_shape_bound *b, long max_global_bs)
{
	const struct sb_lbs *v = b->blob;
	double best = 0.0;

	for (int i = 0; v && i < b->nl; i++) {
		const long M = hb_iidp_round_m(max_global_bs, v[i].lbs);
		double f;

		/* The entries ascend in B_L and M = round(B_G / B_L / 2) only
		 * falls as B_L grows (rounding is monotone): from the first B_L
		 * with M < N_H on, none counts. */
		if (M < b->nh)
			break;
		if (v[i].ok == 0)
			continue;
		if (v[i].ok < 0)
			return INFINITY;
		f = sb_f_ub(&v[i], M, b->nh);
		best = f > best ? f : best;
	}
	return best * (1.0 + 1e-9);
}

long hb_iidp_shape_min_global_bs(const struct hb_iidp_shape_bound *b, long global_bs)
{
	const struct sb_lbs *v = b->blob;
	long best = LONG_MAX;

	for (int i = 0; v && i < b->nl; i++) {
		const long M = hb_iidp_round_m(global_bs, v[i].lbs);

		if (M < b->nh)
			break; /* and every later B_L (hb_iidp_shape_max_throughput) */
		if (2 * M * v[i].lbs < best)
			best = 2 * M * v[i].lbs;
	}
	return best;
}

double hb_iidp_shape_max_throughput_memo(struct hb_iidp_shape_bound *b, long max_global_bs)
{
	if (max_global_bs <= 0 || b->memo_fx != max_global_bs) {
		b->memo_f = hb_iidp_shape_max_throughput(b, max_global_bs);
		b->memo_fx = max_global_bs > 0 ? max_global_bs : 0;
	}
	return b->memo_f;
}

long hb_iidp_shape_min_global_bs_memo(struct hb_iidp_shape_bound *b, long global_bs)
{
	if (global_bs <= 0 || b->memo_gx != global_bs) {
		b->memo_g = hb_iidp_shape_min_global_bs(b, global_bs);
		b->memo_gx = global_bs > 0 ? global_bs : 0;
	}
	return b->memo_g;
}
