/*
 * lbbsp.h: LB-BSP's batch re-balancing, as Cannikin runs it for its baseline.
 *
 * LB-BSP (Chen et al., "Semi-dynamic load balancing", SoCC '20, reference
 * [8] of the Cannikin paper) keeps the total batch B fixed and re-balances
 * the local batches of a synchronous data-parallel job between rounds:
 * Cannikin §5.1 runs it "with step size Δ = 5, identical to the original
 * paper", and §5.2.1 says it "doesn't consider the communication and
 * computing overlap".  The exact rule is not printed in the Cannikin paper;
 * the one implemented here is the smallest rule those two sentences allow:
 *
 *   each round, measure every node's compute time t_i = a_i(b_i) + P_i(b_i)
 *   (Cannikin Eq. 3: forward, data, update and backward, no all-reduce);
 *   let s be the slowest node and f the fastest; move d = min(Δ, b_s -
 *   min_batch_s, max_batch_f - b_f) samples from s to f if that lowers the
 *   pair's maximum (t_f(b_f + d) < t_s(b_s)); otherwise the split is
 *   balanced and stays.
 *
 * Overlap is ignored because t_i has no communication term: in the
 * compute-bottleneck regime the balanced split is OptPerf's (both equalise
 * t_compute, §5.2.2), in the communication-bottleneck regime it is not.
 *
 * Guarantee (tested against a brute-force equal-time split): at a balanced
 * split without binding caps, max_i t_i <= T_eq + Δ·max_i α_i, where T_eq is
 * the min-max compute time over all real splits of B.  (If the slowest node
 * were above that, every node would be above T_eq, so Σ b_i > B.)
 *
 * A "round" is the caller's: the simulator's lbbsp agent makes one move per
 * epoch (sim/policies/lbbsp/agent_lbbsp.c), which is what Cannikin Fig. 9 shows
 * (LB-BSP needs more than ten epochs on cluster A at B = 128).
 */
#ifndef HB_LBBSP_H
#define HB_LBBSP_H

#include <stddef.h>

#include "error.h"
#include "optperf.h"   /* struct hb_optperf_cluster: the per-node affine model */

/* Cannikin §5.1: "We set step size Δ = 5 ... identical to the original paper". */
#define HB_LBBSP_DELTA 5L

/* Compute time t_i(b) = α_i·b + β_i of node i (Cannikin Eq. 3, no overlap). */
double hb_lbbsp_compute_time(const struct hb_optperf_cluster *cl, size_t i, double b);

/* max_i t_i(local[i]): what LB-BSP balances. */
double hb_lbbsp_max_compute(const struct hb_optperf_cluster *cl, const long *local);

/* An even split of total over the nodes, where DDP stays and LB-BSP and
 * Cannikin start (the first total % n nodes get one more), clamped to
 * [min_batch, max_batch] with the excess handed to nodes with room, in node
 * order.  Fails when total is outside [Σ min_batch, Σ max_batch]. */
int hb_even_split(const struct hb_optperf_cluster *cl, long total, long *local, struct hb_error *err);

/* One round: move up to delta samples from the slowest to the fastest node
 * when that lowers their maximum.  *moved (may be NULL) receives the samples
 * moved, 0 when the split was already balanced.  local[] must sum to the
 * fixed total and respect the bounds; it keeps both. */
int hb_lbbsp_step(const struct hb_optperf_cluster *cl, long delta, long *local, long *moved,
		  struct hb_error *err);

/* Rounds until balanced, at most max_rounds; *rounds (may be NULL) receives
 * how many moved samples.  Returns 0, or -1 on bad input. */
int hb_lbbsp_balance(const struct hb_optperf_cluster *cl, long delta, long max_rounds, long *local,
		     long *rounds, struct hb_error *err);

#endif
