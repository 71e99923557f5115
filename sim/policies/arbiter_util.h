/*
 * arbiter_util.h: what round-based arbiters over GPU types share (Sia,
 * Gavel: sim/policies/sia/, sim/policies/gavel/): the cluster's nodes
 * grouped by GPU type, and handing a round's grants out; and the oracle of
 * a job's remaining work (Optimus, Gavel's finish-time fairness).
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

/* A job's progress (M0-equivalent samples) and samples into its epoch now:
 * the simulator integrates them up to t_last only; a running job has
 * advanced at its frozen rate since. */
void hb_arbiter_progress_now(const struct hb_sim *sim, const struct hb_sim_job *job, double *progress,
			     double *epoch_samples);

/* The oracle (Optimus+Oracle, Gavel's remaining steps): iterations the job
 * still needs at a fixed batch from (progress, epoch_samples), epoch by
 * epoch with phi (so E) frozen at each epoch start, as the simulator
 * advances a job whose agent never changes its configuration; INFINITY
 * when it would never finish. */
double hb_arbiter_oracle_iters(const struct hb_sim_job *job, long batch, double progress, double epoch_samples);

/* Pollux fidelity's oracle (the artifact's optimus.py): the validation
 * runs' iteration count at the batch from the job's current epoch to its
 * completion epoch, 1 once there. */
double hb_arbiter_fid_iters(const struct hb_sim_job *job, long batch);

#endif
