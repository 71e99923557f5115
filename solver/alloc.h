/*
 * alloc.h: JABAS candidate allocations Q (notes/jabas.md §4.3).
 *
 * The coarse-grained auto-scaler picks, once per epoch, one allocation from a
 * fixed candidate set Q.  GPUs are taken in units of u GPUs (2 = the paper's
 * pairs, 4 = the artifact's default whole 4-GPU node); a candidate says how
 * many units it takes from each node, not all zero:
 *
 *     |Q| = Π_i (floor(m_i / u) + 1) − 1          (m_i GPUs in node i)
 *
 * Units of a node are its consecutive GPUs: unit k of a node holds local GPUs
 * k·u .. k·u+u−1, and a candidate taking n units from a node takes units
 * 0..n−1.  When u does not divide m_i the last m_i mod u GPUs of the node are
 * never used (an odd GPU with pair units; a 6-GPU node with 4-GPU units uses
 * 4).  The artifact instead refuses a unit that does not divide the current
 * server and would build a short last unit elsewhere; a short unit would break
 * the solver's pairing, so it is dropped here.
 *
 * Order (the artifact's, [C cluster_manager.py]): by total units ascending;
 * among equal totals, in the order itertools.combinations first reaches each
 * per-node count over the unit list (nodes in cluster order, units in node
 * order), which is descending lexicographic order of the per-node count
 * vector: (2,0) before (1,1) before (0,2).  The auto-scaler's argmin over Q
 * uses "<=", so a tie goes to the later candidate, i.e. to more units
 * (notes §4.3); that rule belongs to the caller.
 *
 * Merging identical servers (the artifact's homo_servers): nodes with the same
 * GPU type, GPU count, intra/inter link names and bandwidths, and rack form a
 * class; candidates that differ only in which nodes of a class carry the
 * class's units collapse to one, described by units per class.  Its per-node
 * form is the packed one (fill the class's nodes in cluster order, each to
 * its capacity, before the next), which is the candidate the artifact keeps:
 * the first one itertools reaches.  Merged Q is therefore the subsequence of
 * unmerged Q made of the packed candidates, in the same order, and
 *
 *     |Q_merged| = Π_classes (nodes_c · floor(m_c / u) + 1) − 1.
 *
 * Differences from the artifact, on purpose: the artifact merges by GPU type
 * name only and only among the servers the user lists, and it compares the
 * per-unit type lists in order, so two same-type servers that are not
 * adjacent in the cluster file are not merged; here every identical node is
 * merged wherever it sits, and links and rack must match too (two nodes that
 * communicate differently are not interchangeable).  On the JABAS clusters
 * (same-type nodes adjacent, same links) both give the same Q.
 */
#ifndef HB_ALLOC_H
#define HB_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "error.h"

/* Refuse to materialise more candidates than this unless told otherwise:
 * 3^16 − 1 = 43M candidates of 16 ints is already 2.8 GB. */
#define HB_ALLOC_DEFAULT_LIMIT ((size_t)1 << 22)

/* A set of identical nodes (or a single node when not merging). */
struct hb_alloc_class {
	int first_node;        /* lowest node index of the class */
	int nnodes;            /* nodes in the class */
	int gpu;               /* GPU type, index into hb_catalog.gpus */
	int units_per_node;    /* floor(ngpus / u): units one node of the class offers */
	int max_units;         /* nnodes · units_per_node */
};

struct hb_alloc_set {
	int unit;              /* u, GPUs per unit */
	int merged;            /* 1: one candidate per units-per-class vector */
	int nnodes;            /* nodes of the cluster */
	int nclasses;          /* classes; = nnodes when not merged */
	struct hb_alloc_class *classes; /* [nclasses], ordered by first_node */
	int *node_class;       /* [nnodes]: class of each node */
	int *node_ngpus;       /* [nnodes]: the node's GPUs (for the GPU list) */
	size_t ncand;          /* |Q| of this set */
	uint64_t ncand_unmerged; /* |Q| the same cluster and u give without merging;
	                        * UINT64_MAX if that overflows 64 bits */
	int *node_units;       /* [ncand · nnodes]: units per node, packed form when merged */
	int *class_units;      /* [ncand · nclasses]: units per class */
	int *total_units;      /* [ncand]: units in the candidate */
};

/* One GPU of a candidate. */
struct hb_alloc_gpu {
	int node;              /* index into hb_cluster.nodes */
	int local;             /* GPU index inside the node, 0..ngpus−1 */
};

/* |Q| without materialising it, for unit u and merge 0/1.  Fails with
 * HB_EINPUT on a bad cluster or u (no node holds a whole unit, u < 1, a GPU
 * index outside the catalog), and with HB_ERUNTIME if the count overflows
 * 64 bits.  cat may be NULL: GPU types are then compared by index unchecked. */
int hb_alloc_count(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
		   uint64_t *count, struct hb_error *err);

/* Enumerate Q in the order above.  limit caps ncand (0 means
 * HB_ALLOC_DEFAULT_LIMIT); a larger Q fails with HB_ERUNTIME naming |Q|, so a
 * Philly-scale cluster asks for merging or bigger units instead of running out
 * of memory.  Free with hb_alloc_free. */
int hb_alloc_enumerate(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit,
		       int merge, size_t limit, struct hb_alloc_set *out, struct hb_error *err);
/* The prefix of that Q made of the candidates of at most max_units units
 * (Q is ordered by total units first, so they are its first ones, in the
 * same order); the limit and its error still apply to the whole Q.
 * max_units < 1 gives an empty set (ncand 0). */
int hb_alloc_enumerate_upto(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
			    size_t limit, int max_units, struct hb_alloc_set *out, struct hb_error *err);
/* A visitor of candidates: i is the candidate's index in Q, node_units its
 * units per node (nnodes entries, the packed form when merged; read it
 * during the call only), total its units.  A nonzero answer stops the walk. */
typedef int (*hb_alloc_visit_fn)(void *ctx, size_t i, const int *node_units, int total);
/* hb_alloc_enumerate_upto's candidates, in the same order, handed one by one
 * to visit instead of stored: for a caller that wants a summary of Q (its
 * distinct shapes, say) and not Q, at the cost of the walk alone.  out gets
 * the set's description (unit, classes, node_class, node_ngpus, ncand, ...)
 * and no candidates: node_units, class_units and total_units stay NULL, so
 * hb_alloc_node_units and the like must not be called on it.  The limit
 * and its error are hb_alloc_enumerate_upto's, so both accept the same
 * clusters.  Returns 0, -1 on an error (out freed), or the visitor's
 * nonzero answer (out freed; err is the visitor's to fill). */
int hb_alloc_visit_upto(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
			size_t limit, int max_units, struct hb_alloc_set *out, hb_alloc_visit_fn visit, void *ctx,
			struct hb_error *err);
/* How many candidates of Q hold at most max_units units, without
 * enumerating them (a product of polynomials over the classes). */
int hb_alloc_count_upto(const struct hb_cluster *cl, const struct hb_catalog *cat, int unit, int merge,
			int max_units, uint64_t *count, struct hb_error *err);
void hb_alloc_free(struct hb_alloc_set *s);

/* ---- the last candidate of each answer key (alloc_last.c) ----------------
 * A candidate's answer key, for a caller whose estimate of a candidate
 * depends on the candidate only through it (the IIDP solver's, iidp.h):
 * per node kind (kind[n] in 0..nkind-1 for node n, the caller's) the units
 * the candidate takes from nodes of that kind, and whether it takes them
 * from one node or from more.  A ranking over Q whose ties go to the later
 * candidate needs, of each key, only the last candidate in Q's order. */
struct hb_alloc_last {
	int nnodes;
	size_t n;              /* keys met among the candidates */
	int *node_units;       /* [n · nnodes]: each key's last candidate, units per node
	                        * (packed form when merged); entries in Q's order */
	int *total;            /* [n]: its units */
};
/* Of Q's candidates of at most max_units units, over the set q describes
 * (hb_alloc_visit_upto or hb_alloc_enumerate_upto, any max_units: only its
 * unit, classes, node_class and node_ngpus are read), each key's last
 * candidate, without walking Q: the lexicographically least packed vector
 * of the key, built node by node (alloc_last.c), at a cost of the keys
 * times the nodes instead of Q's size times the nodes.  A class of q over
 * nodes of two kinds is searched as hb_alloc_last_by_key_search does.
 * Input errors: no description, nkind < 1, a kind outside 0..nkind-1.
 * Free with hb_alloc_last_free (also after an error). */
int hb_alloc_last_by_key(const struct hb_alloc_set *q, int max_units, const int *kind, int nkind,
			 struct hb_alloc_last *out, struct hb_error *err);
/* The same answer from every candidate (units per class, each packed, its
 * key computed, the later kept by Q's order): the oracle of the tests, and
 * hb_alloc_last_by_key's way when a class spans kinds. */
int hb_alloc_last_by_key_search(const struct hb_alloc_set *q, int max_units, const int *kind, int nkind,
				struct hb_alloc_last *out, struct hb_error *err);
void hb_alloc_last_free(struct hb_alloc_last *out);

/* Units per node of candidate i (nnodes entries). */
const int *hb_alloc_node_units(const struct hb_alloc_set *s, size_t i);
/* Units per class of candidate i (nclasses entries). */
const int *hb_alloc_class_units(const struct hb_alloc_set *s, size_t i);
/* GPUs of candidate i: total units · u. */
int hb_alloc_ngpus(const struct hb_alloc_set *s, size_t i);
/* Expand candidate i into its GPUs, nodes in cluster order, local GPUs
 * ascending; gpus must hold hb_alloc_ngpus(s, i) entries.  Returns the count. */
int hb_alloc_gpus(const struct hb_alloc_set *s, size_t i, struct hb_alloc_gpu *gpus);

#endif
