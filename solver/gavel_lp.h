/*
 * gavel_lp.h: Gavel's allocation LPs (Narayanan et al., OSDI'20, §3.1 and
 * §4.1-4.2; stanford-futuredata/gavel scheduler/policies/policy.py,
 * max_min_fairness.py:MaxMinFairnessPolicyWithPerf and
 * max_sum_throughput.py), solved by GLPK's simplex (milp.h).
 *
 * X[m][j] is the fraction of time job m should run on GPU type j.  Base
 * constraints (policy.py:get_base_constraints): X >= 0, sum_j X[m][j] <= 1
 * per job, sum_m sf_m X[m][j] <= W_j per type (sf = the job's GPUs, its
 * scale factor; W = GPUs of the type).  A zero throughput means the job
 * cannot run on that type: its X is 0.
 *
 * Max-min fairness, heterogeneity-aware:
 *   maximise min_m sum_j T[m][j] sf_m / (w_m P_m) X[m][j],
 *   P_m = sum_j T[m][j] W_j / sum_k W_k  (the job's throughput on the
 *   proportional share, proportional.py), w_m its priority weight,
 * written as: maximise z with z <= that sum for every job.
 * Max-sum throughput: maximise sum_m sum_j T[m][j] X[m][j] (raw rates, no
 * normalisation: the artifact's form, which Sia compares against).
 *
 * Finish-time fairness, heterogeneity-aware (Themis' rho; the artifact's
 * finish_time_fairness.py:FinishTimeFairnessPolicyWithPerf.get_allocation):
 *   minimise max_m rho_m(X),
 *   rho_m(X) = (e_m + R_m / sum_j T[m][j] X[m][j]) / (c_m + R_m / I_m),
 * e_m the time since the job arrived (times_since_start), R_m its work
 * left (num_steps_remaining, in T's units times seconds), c_m its
 * cumulative isolated time (what the work done so far would have taken on
 * the isolated share: the caller accumulates it between computations, as
 * the artifact does), I_m = sum_j T[m][j] Xiso[m][j] its throughput on the
 * isolated share (isolated.py:IsolatedPolicy._get_allocation:
 * Xiso[m][j] = W_j / (M sf_m), each row divided by its sum where that sum
 * exceeds 1).  Unlike max-min, the effective throughput is not multiplied
 * by sf: T is the gang's rate, as the artifact writes it.  The artifact
 * computes priority weights and leaves them unused ("TODO"); so does this.
 * Each rho_m is convex in X (1/affine) and the artifact hands
 * cp.Minimize(cp.maximum(...)) to ECOS.  GLPK solves LPs only, so the same
 * convex program is solved by bisection on rho: at a level r every job
 * needs sum_j T X >= R_m / (r D_m - e_m) (D_m the denominator), one LP
 * (maximise the least fraction of that need met, z; r is reachable iff
 * z >= 1), and every reachable level's X gives an upper bound, its own max
 * rho.  Stops at a relative gap of 1e-7 (tests: against a grid).
 * The LP optimum is often not unique; GLPK returns a vertex, the artifact's
 * ECOS an interior point (notes: G9), so tests check the objective and
 * the constraints, not X itself.  X is clipped to [0, 1] and rounded to
 * 1e-5 as the Sia artifact's copy does (G10).
 */
#ifndef HB_GAVEL_LP_H
#define HB_GAVEL_LP_H

#include "error.h"
#include "milp.h"

/* One recomputation's problem; everything is borrowed. */
struct hb_gavel_problem {
	int njobs;               /* M >= 0 */
	int ntypes;              /* >= 1 */
	const double *tput;      /* M x ntypes row-major, >= 0 (samples or steps per second); 0: cannot run */
	const int *scale;        /* per job: GPUs it needs at a time (>= 1) */
	const double *weight;    /* per job priority weight (> 0); NULL: all 1 */
	const int *capacity;     /* GPUs per type (>= 0) */
};

/* P_m of every job (njobs entries): its throughput on the proportional share. */
int hb_gavel_proportional(const struct hb_gavel_problem *pb, double *prop, struct hb_error *err);

/* Solve max-min fairness: x (M x ntypes) and *objective (may be NULL) = the
 * minimum normalised effective throughput.  A job that can run nowhere, or
 * whose GPUs exceed every type that can run it, is HB_EINPUT (naming it). */
int hb_gavel_max_min_fairness(const struct hb_gavel_problem *pb, const struct hb_milp_opts *o, double *x,
			      double *objective, struct hb_error *err);

/* Solve max-sum throughput: x and *objective = sum of effective throughputs. */
int hb_gavel_max_sum_throughput(const struct hb_gavel_problem *pb, const struct hb_milp_opts *o, double *x,
				double *objective, struct hb_error *err);

/* The same program solved as the Sia artifact's ECOS solves it, by an
 * interior-point method (gavel_center.c): where the optimum is not unique,
 * x near the analytic centre of the optimal face (ties split evenly)
 * instead of a vertex; rounded to 1e-5 as the artifact does.  Input errors
 * as hb_gavel_max_sum_throughput; HB_ERUNTIME if it does not converge. */
int hb_gavel_max_sum_throughput_center(const struct hb_gavel_problem *pb, double *x, double *objective,
				       struct hb_error *err);

/* 0, or HB_EINPUT naming what makes pb no problem (the solvers' check). */
int hb_gavel_check(const struct hb_gavel_problem *pb, struct hb_error *err);
/* 1 when job m can run on type j (throughput > 0, enough GPUs). */
int hb_gavel_runnable(const struct hb_gavel_problem *pb, int m, int j);

/* Finish-time fairness's per-job inputs (njobs entries each, borrowed). */
struct hb_gavel_ftf {
	const double *elapsed_s;     /* e_m: now - arrival, s (>= 0) */
	const double *iso_elapsed_s; /* c_m: cumulative isolated time, s (>= 0) */
	const double *remaining;     /* R_m: work left in T's units x s (>= 0) */
};

/* The isolated share: xiso (M x ntypes, may be NULL) and I_m (iso, njobs
 * entries, may be NULL), isolated.py's. */
int hb_gavel_isolated(const struct hb_gavel_problem *pb, double *xiso, double *iso, struct hb_error *err);

/* rho_m under x (iso from hb_gavel_isolated); INFINITY when the job gets no
 * throughput and has work left; NAN when R_m = c_m = 0 (no rho: the job
 * has nothing done and nothing left). */
double hb_gavel_ftf_rho(const struct hb_gavel_problem *pb, const struct hb_gavel_ftf *f, const double *iso,
			const double *x, int m);

/* Solve finish-time fairness: x and *objective = max_m rho_m (jobs without
 * a rho left out; 0 when none has one).  Input errors as max-min's, and a
 * negative or non-finite e, c or R is HB_EINPUT naming the job; an LP the
 * solver cannot finish (time limit, numerics) is HB_ERUNTIME. */
int hb_gavel_finish_time_fairness(const struct hb_gavel_problem *pb, const struct hb_gavel_ftf *f,
				  const struct hb_milp_opts *o, double *x, double *objective, struct hb_error *err);

/* The normalised effective throughput of job m under x (max-min's terms). */
double hb_gavel_norm_tput(const struct hb_gavel_problem *pb, const double *prop, const double *x, int m);

/* 1 when x meets the base constraints within tol. */
int hb_gavel_feasible(const struct hb_gavel_problem *pb, const double *x, double tol);

#endif
