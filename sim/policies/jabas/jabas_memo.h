/*
 * jabas_memo.h: what the JABAS agent (agent_jabas.c) keeps of its own
 * answers so as not to compute them twice: the ranking's items of Q, the
 * store of every shape a job has met with its bounds, the items by offer
 * layout, the rankings by their inputs and the adaptation steps' answers.
 * Each is a pure function of its key, so a hit gives the bits a miss
 * would compute (tests/arbiter_jabas: the JABAS_QMEMO_VERIFY build checks
 * it).  Private to sim/policies/jabas/.
 */
#ifndef HB_JABAS_MEMO_H
#define HB_JABAS_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "autoscale.h" /* struct hb_jabas_rank_item, struct hb_jabas_first */
#include "iidp.h"      /* struct hb_iidp_shape, struct hb_iidp_shape_bound */
#include "sim.h"       /* struct hb_job_config */

/* The word-at-a-time mix both open-addressed tables below hash with (an
 * offer's histograms, the store's keys); 0 marks an empty slot, so a
 * finished hash is never 0. */
#define JABAS_HASH_SEED 1469598103934665603ULL
static inline uint64_t jabas_hash_mix(uint64_t x, uint64_t w)
{
	x = (x ^ w) * 0x9E3779B97F4A7C15ULL;
	return x ^ (x >> 29);
}

static inline uint64_t jabas_key_hash(const uint64_t *k, size_t n)
{
	uint64_t x = JABAS_HASH_SEED;

	for (size_t i = 0; i < n; i++)
		x = jabas_hash_mix(x, k[i]);
	return x ? x : 1;
}

/* What a ranking of Q needs of it: one item per answer key (iidp.h: per
 * solver node kind the GPUs, and one node or more), the key's last
 * candidate in Q's order.  The solver's answers, and so a candidate's
 * epoch-time estimate, are functions of its answer key, so of the
 * candidates of one key the argmin's tie rule (the later among equal
 * estimates) can pick only the last: ranking the keys' last candidates
 * gives the argmin over Q.  They are built without walking Q
 * (hb_alloc_last_by_key: each key's least packed vector, node by node), an
 * offer of 10^5 candidates holding a few hundred keys; Q itself is never
 * stored.  The items are in Q's order, so an item's index is the tie
 * rule's key (hb_jabas_rank_item's last).  Each keeps its candidate's
 * units per node of q, which is all of Q a decision expands (cand_expand),
 * and the job's shape_store entry of its shape, with the bounds
 * (hb_iidp_shape_bound) the ranking prunes by.  The kinds of q's nodes and a histogram scratch name a
 * shape in the store. */
struct q_shapes {
	size_t *ent;             /* [n] the items' shapes, in Q's order: their entries in the job's shape_store */
	int *units;              /* [n · nq]: that candidate's units per node of q */
	struct hb_jabas_rank_item *order; /* [n]: pick_allocation's ranking (scratch) */
	size_t n, cap;
	int *kind;               /* [nq]: local index of each q node's kind (hb_iidp_node_kind) */
	int *gkind;              /* [nkind]: each local kind's hb_iidp_node_kind */
	int nkind, maxu;         /* kinds among q's nodes; most units a q node offers */
	int hlen;                /* histogram words: nkind · (maxu + 1) */
	uint16_t *hist;          /* [hlen]: an item's histogram (scratch) */
};

/* The shapes a job has met, over all its offers, each with its bounds: an
 * offer's shapes are mostly those of the offers before it, and a shape and
 * its bounds are a function of the shape alone (the solver's kinds and
 * tables do not change), so each shape is built (hb_iidp_shape_of_nodes)
 * once per job, not once per offer.  Its bounds are held
 * (hb_iidp_shape_bound_hold): one copy per model for every job that has
 * the shape in its store, which the solver also reads to visit a
 * summary's B_L best-first (the stores' own copies were the same blobs
 * job after job, 26 MB at the whole philly.csv's peak, and keeping the
 * solver's cached copies fresh cost a lookup per shape per offer).  Keyed by the
 * shape's canonical histogram:
 * (solver node kind, units, used nodes) words in ascending order, which
 * names the multiset the shape's sorted key names.  Emptied when it holds
 * SHAPE_STORE_MAX shapes, before an offer's items are made (no offer's
 * shapes are then in use). */
#define SHAPE_STORE_MAX 8192
struct shape_store {
	struct hb_iidp_shape *sh; /* [cap] (zero-initialised, rebuilt in place) */
	struct hb_iidp_shape_bound *bnd; /* [cap]: bounds on the shape's solver answers, held
					  * (entries from n on hold nothing) */
	size_t *koff;            /* [cap + 1]: entry i's key is key[koff[i] .. koff[i + 1]) */
	uint64_t *key;           /* [kcap] */
	size_t n, cap, kcap;
	uint64_t *tab_hash;      /* [tcap] open addressing on the key: 0 = empty */
	size_t *tab_idx;         /* [tcap]: the entry */
	size_t tcap;
};

/* build_q's answers by the layout of their offer: Q, its order and its
 * items depend on an offer only through q's nodes in order, each one's
 * solver kind, class of identical servers (alloc.h's merging) and units,
 * and the most units ranked; which cluster nodes they are does not enter
 * (units are kept per node of q).  So an offer of a layout met before
 * takes that offer's items as they were: on a Philly replay (first 2,000
 * jobs) 64 % of a job's offers repeated a layout of one of its earlier
 * offers, while the same offer (the last one's memo in build_q aside)
 * repeated in 7 %.  The items' shapes are entries of the job's store, so
 * emptying the store empties the memo; when it holds
 * Q_MEMO_MAX layouts or Q_MEMO_WORDS words it is emptied too (a
 * replacement rule would only change the speed). */
#define Q_MEMO_MAX 64
#define Q_MEMO_WORDS ((size_t)1 << 18)
struct q_memo_entry {
	uint64_t hash;           /* jabas_key_hash of sig */
	uint64_t *sig;           /* [nsig]: q_layout_sig */
	size_t nsig;
	size_t n;                /* items */
	size_t *ent;             /* [n]: q_shapes' ent and units, as items_build left them */
	int *units;              /* [n · nq] */
};
struct q_memo {
	struct q_memo_entry *e;  /* [Q_MEMO_MAX] */
	size_t n;
	size_t words;            /* sig, ent and units words held */
};

/* pick_allocation's answers by their inputs: the argmin is a function of
 * Q's items (their shapes' store entries, in Q's order), the
 * trajectory and the iterations done in the block (p and the dataset are
 * the job's), since the shapes' bounds and the solver's answers are
 * functions of the shape alone.  A job whose epoch ends repeat those (a
 * flat forecast over an offer of a layout met before) takes the answer
 * without ranking: on Philly's first 2,000 jobs 26 % of the rankings
 * repeated one of the job's last 64.  Store entries are reused once the
 * store is emptied, so the memo is emptied with it.  Replacement is round
 * robin over PICK_MEMO_MAX entries. */
#define PICK_MEMO_MAX 16
struct pick_memo_entry {
	uint64_t hash;           /* 0: empty */
	size_t n, ntraj;         /* items, trajectory points */
	long done;               /* done_in_block */
	struct hb_jabas_first first; /* the first point's rule (zero: none, Algorithm 1) */
	size_t *key;             /* [n]: the items' store entries */
	long *traj;              /* [ntraj] */
	long best;               /* the answer */
	double best_s;
};
struct pick_memo {
	struct pick_memo_entry e[PICK_MEMO_MAX];
	int next;                /* the entry to replace next */
};

/* The adaptation steps' answers on the job's current GPUs by (B_G now,
 * B_G asked): the configuration (alloc aside) or none found.  A step's
 * answer is a function of the allocation and the two batches (the IIDP
 * solve with the run-time M rule, the similarity cost of the allocation,
 * p), and SimiGrad's rule moves B_G up and down between a few values: on
 * two days of Philly, 90 % of 0.78 million solves repeated one of the
 * job's last 8 on the same GPUs.  Emptied when the allocation changes;
 * replacement is round robin. */
#define ADAPT_MEMO_MAX 8
struct adapt_memo_entry {
	long cur, next;          /* the step: B_G now, B_G asked */
	int found;               /* 0: no configuration (the step is skipped) */
	struct hb_job_config cfg; /* found: the configuration, alloc NULL (the memo's) */
};
struct adapt_memo {
	int *alloc;              /* [nnodes]: the allocation the answers are for (NULL: none yet) */
	int n, next;             /* entries held, the one to replace next */
	struct adapt_memo_entry e[ADAPT_MEMO_MAX];
};

/* Empty a layout memo (its entries' arrays freed). */
void jabas_memo_clear(struct q_memo *m);
/* Empty a ranking memo. */
void jabas_picks_clear(struct pick_memo *m);
/* Room for n items' arrays (their units on nq nodes); 0, or -1 without
 * memory (what was there is kept). */
int jabas_shapes_reserve(struct q_shapes *qs, size_t n, size_t nq);
/* Empty the store (its shapes' blocks are kept, their bounds released to
 * solver). */
void jabas_store_clear(struct shape_store *ss, struct hb_iidp_solver *solver);
/* Room for one more entry with a key of klen words; 0 or -1. */
int jabas_store_reserve(struct shape_store *ss, size_t klen);
/* The layout memo's items of sig (nsig words, hash h), or NULL. */
const struct q_memo_entry *jabas_memo_find(const struct q_memo *m, const uint64_t *sig, size_t nsig, uint64_t h);
/* The ranking memo: the hash of a ranking's inputs, the entry of those
 * inputs (or NULL), and keeping an answer (round robin; without memory it
 * is just not kept). */
uint64_t jabas_pick_hash(const struct q_shapes *qs, const long *traj, size_t ntraj, long done,
			 const struct hb_jabas_first *first);
const struct pick_memo_entry *jabas_pick_find(const struct pick_memo *m, const struct q_shapes *qs, uint64_t h,
					      const long *traj, size_t ntraj, long done,
					      const struct hb_jabas_first *first);
void jabas_pick_save(struct pick_memo *m, const struct q_shapes *qs, uint64_t h, const long *traj, size_t ntraj,
		     long done, const struct hb_jabas_first *first, long best, double best_s);

#endif
