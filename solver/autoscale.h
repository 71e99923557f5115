/*
 * autoscale.h: JABAS's coarse-grained auto-scaler estimate (notes/jabas.md
 * §4.3 [C _estimate_efficient_resource, estimate_epoch_time]).
 *
 * For one candidate allocation G and a global-batch trajectory for the next
 * epoch (the current B_G followed by the forecast, one value per block of p
 * iterations), the predicted epoch time walks the trajectory:
 *
 *   rem = |D|; T = 0
 *   for k, b in traj:
 *       steps = p            (k = 0: p - steps already done in that block)
 *       if k is last: steps = floor(rem / b) + 1
 *       (B_L, C) = ConfigurationSolver(b, G)       infeasible -> T = inf
 *       b' = realised B_G of C
 *       if rem - b' steps < 0: steps = floor(rem / b') + 1
 *       T += C.t steps;  rem -= b' steps;  stop when rem <= 0
 *
 * The auto-scaler takes argmin_G T(G), ties to the later candidate ("<=";
 * candidates are enumerated from fewer units up, so ties go to more GPUs).
 * The objective is epoch time, not cost; callers may rank by cost too.
 *
 * The first point may be solved by a rule of its own (struct
 * hb_jabas_first), as the artifact solves it; the others are Algorithm 1
 * requests (notes §4.3 "rounded as in §3").
 */
#ifndef HB_AUTOSCALE_H
#define HB_AUTOSCALE_H

#include "error.h"
#include "iidp.h"

struct hb_epoch_estimate {
	int feasible;        /* 0: some trajectory point has no configuration on G */
	double epoch_s;      /* predicted epoch time, s (INFINITY when infeasible) */
	long iterations;     /* iterations the walk counted */
	int first_local_bs;  /* B_L chosen for the first trajectory point */
	long first_global_bs;/* realised B_G of the first point */
	double first_iter_s; /* iteration time of the first point */
};

/* How the walk solves its first trajectory point and every later point of
 * the same value; NULL: as the others (Algorithm 1, every B_L, rounded).
 * A later point equal to the first is the current B_G held on: the job
 * keeps the configuration it restarted with until the similarity rule
 * moves B_G (agent_jabas.c applies a new one only when B_G changes), and
 * the artifact's estimate pins every point equal to the current B_G, not
 * just the first (AutoScalingConfigurator.estimate_epoch_time: "if
 * global_batch_size == self.current_global_batch_size").  Pinning the
 * first point alone charged a candidate the exact configuration for the
 * first block's p - done iterations and Algorithm 1's rounded one after,
 * so which candidate won depended on where in its block the epoch ended:
 * NCF at maxB_G 32,768 on the pollux-t4 trace (tests/trace_replay/
 * small.csv) went 4 -> 16 -> 4 -> 16 -> 4 GPUs over five epochs (the
 * 4-GPU candidate at 0.0399 s/iteration exact, 0.0276 rounded to 32,448,
 * which the job never runs: at maxB_G its B_G does not move).
 * The two decisions of JABAS read the artifact this way:
 *  - initial phase (no B_L yet): m_rule HB_IIDP_M_EXACT, local_bs 0: every
 *    candidate runs B_G^init itself at some B_L, the artifact's initial
 *    configuration solver (unist-ssl/JABAS jabas/config/api/
 *    configuration_solver.py; iidp.h HB_IIDP_M_EXACT).  Rounded, a
 *    candidate that rounds B_G^init up runs more samples per iteration
 *    and wins on that alone.
 *  - epoch end: m_rule HB_IIDP_M_EXACT, local_bs 0: every candidate runs
 *    the job's current B_G itself, and the restart runs it ("current LBS
 *    and GBS must be preserved for next epoch", jabas/config/
 *    configurator.py, AutoScalingConfigurator.estimate_epoch_time).
 *    Rounded, the restart could move B_G (ResNet-50 on cluster B: 1088 at
 *    B_L 32 became 1024 at B_L 64) and a candidate rounding it up won on
 *    more samples per iteration, as at the start.  The artifact also pins
 *    the current B_L (local_bs = the job's, n_w = B_G // B_L, a candidate
 *    of more than n_w GPUs out); that part is not taken: the adaptation
 *    steps favour one VSW at a large B_L, so n_w stays at the GPUs held
 *    and the job can hardly ever grow.  Measured on jabas-fig10 (seed 1),
 *    GNMT's mean GPUs fell to 6.3 (A) and 4.6 (B) with it (3.4 on B under
 *    --progress similarity), where the paper reports 9.1 and 7 (sec. 7.2);
 *    with B_G alone kept they are 10.7 and 8.8 (9.4 and 8.5).  A fixed B_L
 *    (local_bs > 0) remains available to callers.
 * Either way the points' candidates are a subset of Algorithm 1's, so the
 * lower bound below holds (autoscale.c). */
struct hb_jabas_first {
	int m_rule;          /* enum hb_iidp_m_rule: HB_IIDP_M_ROUND or HB_IIDP_M_EXACT */
	int local_bs;        /* > 0: only this B_L; 0: every candidate B_L */
};

/* traj: ntraj >= 1 target global batches; p: iterations per adaptation
 * block; done_in_block: iterations of the first block already run (0 at an
 * epoch start); dataset: samples per epoch. */
int hb_jabas_epoch_time(struct hb_iidp_solver *s, const int *alloc, const long *traj, int ntraj, long p,
			long done_in_block, double dataset, struct hb_epoch_estimate *out, struct hb_error *err);
/* The same estimate on an allocation given by its shape (iidp.h): the
 * solver's answers are cached per (shape, B_G), so candidates that differ
 * only in which identical nodes they use, and jobs of one model, share them
 * (hb_jabas_epoch_time builds the shape of alloc and calls this). */
int hb_jabas_epoch_time_shape(struct hb_iidp_solver *s, const struct hb_iidp_shape *shape, const long *traj,
			      int ntraj, long p, long done_in_block, double dataset, const struct hb_jabas_first *first,
			      struct hb_epoch_estimate *out, struct hb_error *err);

/* A lower bound on hb_jabas_epoch_time_shape's epoch_s for a shape whose
 * answers b bounds (hb_iidp_shape_bound), from the trajectory alone: any
 * feasible estimate has epoch_s >= the value returned, an infeasible one
 * is INFINITY.  0 when nothing useful is known.  Costs O(1): a ranking
 * can skip every shape whose bound exceeds the best time found so far
 * without solving it (autoscale.c proves the bound). */
double hb_jabas_epoch_lower_bound(const struct hb_iidp_shape_bound *b, const long *traj, int ntraj, double dataset);

/* A shape of a ranking (the caller fills shape, bound and last; lb is
 * scratch).  The ranking keeps its bounds' answers in bound's memo
 * (iidp.h). */
struct hb_jabas_rank_item {
	const struct hb_iidp_shape *shape;
	struct hb_iidp_shape_bound *bound;
	size_t last;         /* the key of the tie rule: the later wins a tie */
	double lb;           /* scratch: the shape's epoch lower bound */
};
/* The auto-scaler's argmin over n shapes: the least (epoch_s, -last) over
 * the feasible estimates of traj (the arguments of hb_jabas_epoch_time_shape,
 * first included):
 * *best = the winner's last (-1 when none is feasible) and *best_s its
 * epoch time (INFINITY then), solving only the shapes whose lower bound does not
 * exceed the best time found (exact: the same answer as estimating every
 * shape).  items is reordered.  *solved (may be NULL) counts the estimates
 * made.  An estimate's error is prefixed with the shape's last. */
int hb_jabas_rank_shapes(struct hb_iidp_solver *s, struct hb_jabas_rank_item *items, size_t n, const long *traj,
			 int ntraj, long p, long done_in_block, double dataset, const struct hb_jabas_first *first,
			 long *best, double *best_s, size_t *solved, struct hb_error *err);

#endif
