/*
 * agent_pollux.h: what a Pollux job agent reports to the cluster scheduler
 * (PolluxAgent -> PolluxSched, notes/pollux.md §3.1 and §3.2).
 *
 * The Pollux agent (sim/policies/pollux/agent_pollux.c) measures its iteration times, fits
 * theta_sys to them and knows its gradient statistics; PolluxSched
 * (sim/policies/pollux/arbiter_pollux.c) turns that into SPEEDUP_j(A_j) for any candidate
 * allocation.  A report is that goodput function: theta_sys, the gradient
 * statistics at the job's current batch, the batch limits, and how far the
 * job has explored (the most GPUs it was observed on).
 *
 * Heterogeneous clusters.  Pollux's throughput model has one GPU type
 * (notes/pollux.md A17, footnote 1).  In a shared cluster the agent keeps
 * theta_sys for one REFERENCE type, the GPU type of the cluster on which this
 * model computes slowest, and converts every observation to it with a
 * per-type compute factor (Gavel-style normalisation, the footnote's
 * suggestion); a candidate allocation is evaluated as if all its GPUs were
 * its SLOWEST type (which paces synchronous data parallelism): the compute
 * terms alpha_c, beta_c are scaled by that type's factor and the per-GPU
 * batch range is that type's.  On a homogeneous cluster every factor is 1
 * and nothing is converted.
 */
#ifndef HB_AGENT_POLLUX_H
#define HB_AGENT_POLLUX_H

#include "goodput.h"
#include "sim.h"

/* One GPU type of the cluster as the job sees it (index = job->perf's GPU
 * type index, perf->nodes[n].gpu). */
struct hb_pollux_type {
	int usable;              /* 1: some local batch fits one GPU of the type with the GNS buffer */
	double compute_scale;    /* T_grad on this type / T_grad on the reference type, in (0, 1];
				    0 when not usable */
	long min_local_bsz;      /* smallest feasible per-GPU batch m (0 when not usable) */
	long max_local_bsz;      /* largest feasible per-GPU batch m (0 when not usable) */
	/* Sia fidelity only (hb_pollux_report.per_type): */
	int fitted;              /* 1: theta is fitted to this type's observations */
	struct hb_goodput_params theta; /* theta_sys on this type (valid when fitted) */
	double rate;             /* one GPU's samples/s as Sia projects by
				    (hb_perf_measured_one_gpu_rate); 0 unknown */
};

/* The goodput function of one job at the current time. */
struct hb_pollux_report {
	int fitted;              /* 0: nothing observed yet (the scheduler's perfect-scaling prior);
				    per_type: some type has a fit */
	int per_type;            /* Sia fidelity: one theta_sys per GPU type, types[t].theta
				    (hb_pollux_report_argmax uses the type's own, unscaled) */
	struct hb_goodput_params theta; /* theta_sys on the reference type (valid when fitted) */
	struct hb_grad_params grad;     /* gradient statistics at the job's current B_G (true phi,
					   noise-free, as the artifact's simulator; pollux.md §8.1.5) */
	struct hb_goodput_limits limits; /* max_bsz = maxB_G, artifact argmax settings; the local
					    batch range is the reference type's */
	int max_replicas_seen;   /* most GPUs of an observed configuration (exploration cap base) */
	int replica_cap;         /* > 0: the job never runs on more GPUs (Pollux fidelity's NCF: 1) */
	size_t nobs;             /* distinct (N, K, m, s) configurations observed so far */
	long fits;               /* theta_sys fits run so far (a skipped refit is not one:
				    theta did not change) */
	long refits_skipped;     /* refits skipped because theta already predicted the new
				    observations within 2 sigma of their noise */
	long fits_ahead;         /* fits of those whose result was made ahead on the run's pool
				    (agent_pollux.c, "Fits made ahead"): 0 on one thread */
	int ref_type;            /* index of the reference GPU type */
	int ntypes;              /* entries of types */
	const struct hb_pollux_type *types; /* per GPU type, owned by the agent (valid until the
					       job's agent state is freed) */
	struct pollux_argmax_memo *memo; /* the agent's cache of hb_pollux_report_argmax results,
					    kept while theta, grad and limits are unchanged */
};

/* Report the job's goodput function, first recording the configuration it
 * runs now if it has run it (a RUNNING job) and that configuration is new,
 * and refitting theta_sys when the history grew (the artifact simulator's
 * update_params: one sample per distinct (N, K, m), pollux.md §4.3).  Meant
 * for cluster arbiters; the job's agent must be hb_agent_pollux (input error
 * otherwise).  A job that has not started yet reports fitted = 0. */
int hb_pollux_agent_report(struct hb_sim *sim, struct hb_sim_job *job, struct hb_pollux_report *out,
			   struct hb_error *err);

/* Sia fidelity (report per_type): re-pick the batch of a RUNNING job for
 * the GPUs it holds, as Sia's executor does after every simulated step
 * (job.py Job.step ends each chunk with update_local_bsz), recording first
 * what it ran; an in-place change, no restart.  0 and nothing done for any
 * other job.  For arbiters, at each round before they read reports. */
int hb_pollux_agent_retune(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err);

/* 1 when theta predicts one observation within tol log units: |log(pred /
 * measured)| <= tol for T_iter and, when compute_s > 0, for T_grad.  The
 * agent skips a refit while this holds for every new observation (agent_pollux.c,
 * "Fit cadence"); exposed for its tests. */
int hb_pollux_obs_predicted(const struct hb_goodput_params *theta, int num_nodes, int num_replicas,
			    int local_bs, int accum_steps, double iter_s, double compute_s, double tol);

/* The slowest usable GPU type of alloc (nnodes entries) for the report's
 * job, or -1 when alloc is empty or holds a type the job cannot use. */
int hb_pollux_slowest_type(const struct hb_pollux_report *r, const struct hb_perf *perf, const int *alloc);

/* Best (m, s) of the report on num_replicas GPUs over num_nodes nodes, all
 * of GPU type `type` (see the top): hb_goodput_argmax with alpha_c, beta_c
 * scaled by the type's compute factor and the type's per-GPU batch range;
 * per_type: with the type's own theta_sys, unscaled.  out->feasible = 0
 * (goodput 0) for an unusable type.  Requires fitted (per_type: the type's
 * fit). */
int hb_pollux_report_argmax(const struct hb_pollux_report *r, int type, int num_nodes, int num_replicas,
			    struct hb_goodput_config *out, struct hb_error *err);

/* Sia fidelity (per_type): the goodput of num_replicas GPUs of `type`
 * projected from type src's fit (sia.py _compute_goodputs_v2 with
 * --project_throughputs): src's argmax on ceil(K / src_per_node) nodes and
 * K GPUs, goodput and throughput times rate(type) / rate(src), the ratio
 * of their one-GPU rates (Cluster.compute_throughput_ratios).  out zeroed
 * (infeasible) when either rate is unknown or type is unusable; an input
 * error outside per_type.  Requires src's fit. */
int hb_pollux_report_projected(const struct hb_pollux_report *r, int type, int src, int src_per_node,
			       int num_replicas, struct hb_goodput_config *out, struct hb_error *err);

#endif
