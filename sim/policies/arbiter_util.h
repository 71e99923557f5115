/*
 * arbiter_util.h: what round-based arbiters over GPU types share (Sia,
 * Gavel: sim/policies/sia/, sim/policies/gavel/): the cluster's nodes
 * grouped by GPU type, and handing a round's grants out.
 */
#ifndef HB_ARBITER_UTIL_H
#define HB_ARBITER_UTIL_H

#include "sim.h"

/* One GPU type of a cluster: the nodes that carry the same catalog GPU. */
struct hb_type_group {
	int cat_gpu;             /* catalog GPU index (hb_node.gpu) */
	int per_node;            /* GPUs per node (the smallest node of the type) */
	int nnodes;
	int *nodes;              /* its node indices, ascending, owned */
	int gpus;                /* GPUs in all */
};

/* The cluster's GPU types in order of their first node. */
struct hb_type_groups {
	struct hb_type_group *types; /* owned */
	int ntypes;
	int *node_type;          /* per node: its index in types, owned */
};

int hb_type_groups_init(struct hb_type_groups *g, const struct hb_cluster *cl, struct hb_error *err);
void hb_type_groups_free(struct hb_type_groups *g);

/* 1 when a job holds GPUs now (RUNNING or RESTARTING). */
int hb_arbiter_holds_gpus(const struct hb_sim_job *job);

/* Give jobs[i] the grant grant[i * nnodes ..] (all zero: none), for J jobs:
 * unchanged jobs are left alone, jobs that give GPUs up go first, jobs
 * not yet started are started, the rest re-granted or suspended (the
 * simulator charges restarts); if the remaining ones wait on each other
 * in a cycle, the first of them is suspended and resumed once its GPUs are
 * free.  *changed gets how many grants changed; `who` names the arbiter
 * in messages and events.  The grants must fit the cluster together. */
int hb_arbiter_apply_grants(struct hb_sim *sim, struct hb_sim_job **jobs, int J, const int *grant, const char *who,
			    int *changed, struct hb_error *err);

#endif
