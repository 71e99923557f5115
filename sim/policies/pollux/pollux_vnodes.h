/*
 * pollux_vnodes.h: the heterogeneity-unaware Pollux of Sia's simulator
 * (SOSP'23, github.com/siasosp23/artifacts, sia-simulator/:
 * multi_simulator_unaware.py, cluster_unaware.py ClusterUnaware,
 * pollux_unaware.py), which is what `sim --policy pollux --fidelity sia`
 * runs.  Sia compares against Pollux as Pollux was built: one GPU type, so
 * the artifact shows it a cluster of identical virtual nodes and repairs
 * what it decides afterwards.  Two pieces of that are pure functions of
 * the cluster and live here:
 *
 *  - The virtual nodes (ClusterUnaware.__init__, vnode_cluster_node_id_map):
 *    every node is cut into vnodes of g GPUs, g the smallest node's GPU
 *    count, in node order (the artifact's 6 x 4 T4 + 2 x 8 A100 + 3 x 8
 *    RTX become 16 vnodes of 4: T4 0-5, A100 6-9, RTX 10-15).  A node whose
 *    GPU count is not a multiple of g is an input error (the artifact's
 *    int() would drop its remainder silently).
 *  - The repair of a vnode allocation (fix_allocations_by_dropping): a job
 *    given GPUs of several types keeps those of its majority type and the
 *    others stay idle for the round ("Dropping replica"); when the two
 *    largest counts tie, in the order the types first appear in vnode
 *    order (Counter.most_common keeps insertion order), the more powerful
 *    type is kept (its prio_order: dgx-ext before rtx before aws; here by
 *    the catalog's FP32 TFLOPS, the same order on its three types).  Only
 *    the first two counts are compared, as there.
 *
 * The rest of the mechanics (one throughput fit over every type's
 * observations, the first type's batch range in the search, at most
 * max_num_replicas GPUs per job) are in arbiter_pollux.c and
 * agent_pollux.c, "Sia fidelity".
 */
#ifndef HB_POLLUX_VNODES_H
#define HB_POLLUX_VNODES_H

#include "catalog.h"
#include "error.h"

/* A cluster cut into vnodes of `per` GPUs. */
struct hb_vnodes {
	int per;                  /* GPUs per vnode: the smallest node's */
	int n;                    /* vnodes */
	int *node;                /* [n] the cluster node of each vnode, ascending, owned */
	int *first;               /* [cluster nodes] its first vnode, owned */
	int *type;                /* [n] its node's catalog GPU index, owned */
};

/* Cut cl into vnodes; an input error naming the node when its GPU count is
 * not a multiple of the smallest node's. */
int hb_vnodes_init(struct hb_vnodes *v, const struct hb_cluster *cl, struct hb_error *err);
void hb_vnodes_free(struct hb_vnodes *v);

/* Repair one job's row of vnode GPU counts in place (fix_allocations_by_
 * dropping, above): the GPUs on vnodes of any type but the kept one are
 * set to 0.  tflops[t] ranks catalog type t for the tie.  Returns the GPUs
 * dropped. */
int hb_vnodes_drop_minority(const struct hb_vnodes *v, const double *tflops, int *row);

/* Per cluster node, the GPUs of a vnode row (node_row has the cluster's
 * nodes, zeroed first). */
void hb_vnodes_to_nodes(const struct hb_vnodes *v, const int *row, int nnodes, int *node_row);

/* A vnode row for a node row: each node's GPUs filled into its vnodes in
 * order, `per` at a time (what a grant made outside the vnode view, or
 * changed by a capacity withdrawal, looks like to the search). */
void hb_vnodes_from_nodes(const struct hb_vnodes *v, const int *node_row, int nnodes, int *row);

#endif
