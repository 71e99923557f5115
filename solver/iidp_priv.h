/*
 * iidp_priv.h: what the IIDP solver's files share (not public API).
 *
 * iidp.c holds the min-max core and the solver (hb_iidp_solve), iidp_cache.c
 * the solver object with its caches (hash maps with CLOCK eviction, the
 * (allocation, B_L) tables and their memos), iidp_shape.c the answers by
 * allocation shape.  This header holds their data structures, the hot map
 * lookups (static inline: the shape cache is asked tens of millions of
 * times a trace) and the functions one file calls in another.  Included only
 * from solver/.
 */
#ifndef HB_IIDP_PRIV_H
#define HB_IIDP_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "iidp.h"

struct lcand; /* a (B_L, M) candidate of a request (iidp.c) */

/* Open-addressing hash map (linear probing) from byte strings to owned
 * values, with per-entry eviction: a hit sets the entry's reference bit and
 * iidp_hmap_evict takes the next entry a CLOCK hand finds unreferenced (clearing
 * the bits it passes), so a full cache drops its coldest entries instead of
 * everything (a whole flush made the next requests rebuild what they were
 * about to use).  A key lives either in its own allocation (copied by the
 * put) or inside the value (keys_in_val: the caller passes a pointer into
 * the value, which saves an allocation per entry). */
struct hmap_slot {
	uint64_t h;        /* hash of key, 0 = empty slot */
	void *key;         /* owned copy, or a pointer into val (keys_in_val) */
	uint32_t klen;     /* key bytes */
	uint32_t ref;      /* CLOCK reference bit: set by a hit, cleared by the hand */
	void *val;         /* owned by the map's user, freed through the callbacks */
};

struct hmap {
	struct hmap_slot *s;
	size_t cap;        /* power of two, 0 when empty */
	size_t n;
	size_t hand;       /* CLOCK hand: the next slot iidp_hmap_evict examines */
	int keys_in_val;   /* 1: slot keys point into the values, never freed alone */
};

static inline uint64_t hash_bytes(const void *key, size_t n)
{
	const unsigned char *p = key;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* A hash of n words, a word at a time (hash_bytes costs a multiply per
 * byte, and the shape cache is asked tens of millions of times on a
 * Philly-scale trace).  Never 0, like hash_bytes. */
static inline uint64_t hash_words(const long *w, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h = (h ^ (uint64_t)w[i]) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* The slot of key (hash h), or SIZE_MAX. */
static inline size_t hmap_find_slot(const struct hmap *m, uint64_t h, const void *key, size_t klen)
{
	if (m->cap == 0)
		return SIZE_MAX;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct hmap_slot *sl = &m->s[i];

		if (sl->h == 0)
			return SIZE_MAX;
		if (sl->h == h && sl->klen == klen && memcmp(sl->key, key, klen) == 0)
			return i;
	}
}

/* Lookup with the key's hash h given; a hit marks the entry referenced. */
static inline void *hmap_get_h(struct hmap *m, uint64_t h, const void *key, size_t klen)
{
	const size_t i = hmap_find_slot(m, h, key, klen);

	if (i == SIZE_MAX)
		return NULL;
	m->s[i].ref = 1;
	return m->s[i].val;
}

static inline void *hmap_get(struct hmap *m, const void *key, size_t klen)
{
	return m->cap == 0 ? NULL : hmap_get_h(m, hash_bytes(key, klen), key, klen);
}

/* The (allocation, B_L) table: per used node the coefficients for n_vsw =
 * 1..n_cap with that allocation's communication, and the pairs.  One
 * allocation holds the table, its arrays and its key (table_build); its
 * memos live in a second one (struct memo_set), so that building, finding
 * and evicting a table costs a malloc or two, not one per array and one per
 * memo. */
struct table {
	int local_bs;
	int n_gpus;
	int npairs;
	int klen;                     /* bytes of key */
	int *pair_node;               /* perf node of each pair */
	struct hb_iidp_pair *pairs;   /* point into coef */
	struct hb_perf_coef *coef;    /* per used node, n_cap entries each */
	int *key;                     /* the table's key in the cache (B_L, used (node, GPUs)) */
	struct memo_set *memo;        /* M -> struct memo; NULL until the first */
	size_t bytes;                 /* held by the table with its memos: what evicting it frees */
};

struct memo {
	double t;                     /* optimal time, or a lower bound on it when !exact */
	int exact;                    /* 1: t and w are the answer; 0: only the bound is known */
	int M;                        /* the memo's key (>= 1: M >= N_H >= 1 pairs) */
};

/* A table's memos, in one block: n records in the order they came (memos
 * are never removed alone: they go with their table), the workers of
 * record i at w + i npairs, and an open-addressed index on M (idx[j] = 1 +
 * the record, 0 = empty) of 2 cap slots, so at most half full.  Records are
 * named by their position, which a growth keeps. */
struct memo_set {
	uint32_t n, cap;              /* records held, room for */
	struct memo *rec;             /* [cap] */
	int *w;                       /* [cap npairs] */
	uint32_t *idx;                /* [2 cap], cap a power of two */
};

/* A summary in the shape cache, its key after it (one allocation). */
struct shape_entry {
	struct hb_iidp_summary sum;
	int nkey;                     /* words of key */
	int extra;                    /* bytes after the key (a bound's blob, hb_iidp_shape_bound), else 0 */
	long key[];
};

/* A held shape's bounds: one copy for all its holders (refs), its blob
 * after the key (the shape cache's bound key, nkey words). */
struct held_bound {
	uint64_t h;                   /* hash of key */
	uint32_t refs;                /* holders */
	uint32_t nkey;                /* words of key */
	size_t bytes;                 /* of the blob */
	long key[];
};

/* Bit 34 of a shape cache key's third word: the entry holds the shape's
 * bounds (hb_iidp_shape_bound), not a summary.  shape_key never sets it. */
#define SHAPE_KEY_BOUND ((long)1 << 34)

/* The blob of a struct hb_iidp_shape_bound: nl entries, one per candidate
 * B_L (ascending), of what hb_iidp_shape_max_throughput needs (iidp.h says
 * why each bounds F).  Plain values: the solver's cache keeps a copy. */
struct sb_lbs {
	double f_inf;      /* sum over pairs of 2 B_L max_n n / step_n */
	double a;          /* min over nodes, n of base_n - step_n (>= 0) */
	double b;          /* min over nodes, n of step_n / n (> 0) */
	double c;          /* min over nodes, n of base_n: no pair runs faster */
	int lbs;           /* B_L */
	int ok;            /* 0: some used node has no table at B_L (no answer); -1: no bound (INFINITY) */
};

struct hb_iidp_solver {
	const struct hb_perf *perf;   /* borrowed, prepared */
	struct hmap tables;           /* (B_L, used (node, GPUs)) -> struct table */
	struct hmap shapes;           /* (request, shape) -> struct shape_entry */
	size_t shape_bytes;           /* the part of st.cache_bytes that shapes holds (the rest: tables) */
	size_t limit;                 /* cache limit, bytes; 0 = no caching (under a budget: its limit) */
	struct hmap held;             /* bound key -> struct held_bound: the shared copies of held bounds */
	struct hb_iidp_budget *budget; /* shared with other solvers (borrowed), or NULL */
	size_t reported;              /* st.cache_bytes as last counted in budget->used */
	struct hb_iidp_stats st;
	struct hb_iidp_scratch sc;
	int *key;                     /* 2 nnodes + 1 ints: B_L, then (node, GPUs) of the used nodes */
	int *node_class;              /* [nnodes]: least node index of the same kind (classify_nodes) */
	int *next_in_class;           /* [nnodes]: next node of the same kind, -1 after the last */
	long *skey;                   /* shape key scratch: 4 + nnodes words (shape_key), 2 nnodes (hint_bound_key) */
	int *full;                    /* [nnodes] zeros between calls: a shape spread out for a miss */
	/* During one hb_iidp_solve (or the shape miss that calls it): the used
	 * nodes of the allocation being solved, ascending, so that its table
	 * keys, B_L list and GPU count need no further scan of the cluster's
	 * nodes; hint_n = 0 between calls. */
	int *hint_node, *hint_gpus;
	int hint_n;
	/* The communication of each hinted node (hb_perf_comm_eval), computed
	 * by the request's first table build and reused by its others: it is
	 * a function of the allocation, not of B_L.  hcomm_ok = 0 between
	 * requests. */
	struct hb_perf_comm *hcomm;
	int hcomm_ok;
	struct hmap lbs_by_types;     /* GPU types used (bit mask) -> candidate B_L (struct lbs_list) */
	/* 1 during the solve of a summary (hb_iidp_solve_summary), which reads
	 * none of the answer's pairs: result_fill leaves them out. */
	int summary_only;
	/* A summary's solve: the key (bkey, bkey_len bytes, hash bkey_h) of
	 * its shape's bounds in the shape cache (hb_iidp_shape_bound), for
	 * solve_hinted to look up once it has evicted what it evicts; bkey_len
	 * = 0 otherwise. */
	long *bkey;
	size_t bkey_len;
	uint64_t bkey_h;
	int *w;                       /* workers per pair of the current problem */
	int w_cap;
	/* solve_hinted's scratch, grown as needed (it ran a million times on
	 * two days of Philly under JABAS, and allocating both per solve was
	 * a tenth of the main thread in malloc): the request's B_L list and
	 * its (B_L, M) candidates. */
	int *h_lbs;
	int h_lbs_cap;
	struct lcand *h_cand;
	int h_cand_cap;
};

/* The candidate B_L of the hinted allocation, as hb_perf_alloc_lbs gives
 * them (a copy the caller frees): they depend on the set of GPU types used
 * only, so they are kept per set. */
struct lbs_list {
	int nl;
	int lbs[];
};

/* ---- iidp_cache.c: the maps, the tables and their memos --------------- */

/* Insert a key known to be absent (hash h given, or computed); the bytes
 * the map took, 0 on failure. */
size_t iidp_hmap_put_h(struct hmap *m, uint64_t h, const void *key, size_t klen, void *val);
size_t iidp_hmap_put(struct hmap *m, const void *key, size_t klen, void *val);
/* Remove slot i without tombstones. */
void iidp_hmap_remove_at(struct hmap *m, size_t i);
/* Evict one entry by CLOCK: its value (the caller frees it), or NULL. */
void *iidp_hmap_evict(struct hmap *m);
/* Rehash a mostly empty slot array into a smaller one; the bytes freed. */
size_t iidp_hmap_shrink(struct hmap *m);
/* A struct table with its memos (a free_val callback of the tables map). */
void iidp_table_free(void *v);
/* Tell s's budget what s holds now. */
void iidp_budget_report(struct hb_iidp_solver *s);
/* The cached table of (alloc, local_bs), or a fresh one the caller frees
 * (*owned = 1). */
int iidp_table_get(struct hb_iidp_solver *s, const int *alloc, int local_bs, struct table **out, int *owned,
		   struct hb_error *err);
/* The memo record of (t, M), created bound-only if absent; -1 without
 * memory.  Records are named by position: a growth moves them. */
long iidp_memo_entry(struct hb_iidp_solver *s, struct table *t, int M);
/* Solve (t, M) into s->w and *T, through the memo (cache = 1). */
int iidp_table_solve(struct hb_iidp_solver *s, struct table *t, int M, int method, double *T, int cache,
		     struct hb_error *err);

/* ---- iidp.c: the solver's helpers the shape answers share ------------- */

/* 0 when every node of alloc gets an even GPU count the cluster has
 * (*n_gpus their sum), else an input error naming the node. */
int iidp_validate_alloc(const struct hb_perf *pf, const int *alloc, int *n_gpus, struct hb_error *err);
/* The answer key (iidp.h) of n used nodes' (class, GPUs) in key into akey
 * (n + 1 words); its length. */
int iidp_answer_key(const long *key, int n, long *akey);

#endif
