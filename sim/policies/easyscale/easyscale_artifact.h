/*
 * easyscale_artifact.h: EasyScale's trace experiment as its artifact's
 * simulator runs it (sUntvoOk/EasyScale_info_for_SC23, simulator/;
 * `sim --fidelity easyscale`).  hetbatch's own EasyScale (agent_easyscale.c,
 * arbiter_easyscale.c, arbiter_yarn_cs.c) stays the native mode; under the
 * fidelity mode the policies easyscale, easyscale-homo and yarn-cs run
 * these instead (hb_policy_fidelity).  What each piece follows:
 *
 * Jobs (simulator.py class Job, Cluster.__init__):
 *  - a job trains epochs x dataset_len samples (the trace's epochs on the
 *    artifact's 1 % datasets; progress model `samples`, no statistical
 *    efficiency), on maxP ESTs of its per-EST batch b, global batch maxP b;
 *  - its step time is Application.get_comp_time: max over GPU types of
 *    t_type(b) x the plan's ESTs per GPU of that type (threads), no
 *    all-reduce, no D2 or context-switch cost; t_type(b) is one GPU's
 *    iteration time at batch b: the artifact's own measurement for its
 *    application on V100, P100 and T4 (overall-overhead/overhead.csv, at
 *    its batch; at another batch scaled by the profile's ratio), else the
 *    profile, linear in b between the profiled batches and extrapolated
 *    beyond them (Application.get_gpu_time: interp1d, "extrapolate");
 *  - the plans are the artifact's database (solver/es_artifact.h) for maxP
 *    on the whole cluster, with perf = t_slowest / t_type, the slowest type
 *    the cluster's last (V100, P100, T4 on `easyscale`, as [A]);
 *    Job.get_placement_proposals keeps only plans on the preferred type
 *    for a job without D2, for every job under easyscale-homo, and only
 *    maxP GPUs of it under yarn-cs;
 *  - 20 s pass before a job's first step (Job.rescale_time, first start
 *    only); later grants cost nothing (Job.reallocate).
 *
 * Rounds (Cluster.step, every 60 s from t = 60): every job submitted by
 * the round's time and not done is active; a job done between rounds
 * frees its GPUs for the next round only.
 *
 * easyscale, easyscale-homo (easy_policy.py EasyPolicy.optimize_v3,
 * Job.submit_proposals): running jobs keep their plan; each proposes, per
 * GPU type, its plan (among those of at least its current speedup, waste
 * at most 30 %, at most twice its GPUs) that adds GPUs of that type and
 * no other, as the current GPUs with that type's count raised (its
 * threads and speedup the plan's), best by inc = (speedup / current - 1)
 * / added + 1, first in plan order on ties; jobs without a plan get their
 * last plan (the lowest speedup: one T4 for a D2 job on `easyscale`) in
 * job order where it fits the cluster less the running plans; then
 * proposals in decreasing inc (stable), one per job, where the added GPUs
 * fit.  Nothing is ever taken back.
 *
 * yarn-cs (other_policy.py FifoPolicy.optimize): the first active job in
 * job order gets maxP GPUs of its preferred type, and nothing else runs.
 *
 * Job order is the trace's order (the artifact's OrderedDict of jobs; a
 * name given twice keeps its first place with the later row's values,
 * replay.h).
 */
#ifndef HB_EASYSCALE_ARTIFACT_H
#define HB_EASYSCALE_ARTIFACT_H

#include "sim.h"

#define HB_ESA_ROUND_S 60.0       /* simulator.py --interval 60 (run.sh) */
#define HB_ESA_START_S 20.0       /* Job.rescale_time */
#define HB_ESA_MAX_WASTE 0.30     /* Job._max_waste */

extern const struct hb_agent_ops hb_agent_esa;
extern const struct hb_arbiter_ops hb_arbiter_esa;       /* easyscale */
extern const struct hb_arbiter_ops hb_arbiter_esa_homo;  /* easyscale-homo */
extern const struct hb_arbiter_ops hb_arbiter_esa_fifo;  /* yarn-cs */

#endif
