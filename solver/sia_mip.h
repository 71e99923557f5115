/*
 * sia_mip.h: Sia's round program (Sia, SOSP'23, §3.2-§3.3, Eq. 1-2, in the
 * form of its artifact, siasosp23/artifacts sia-simulator/sia.py:
 * SiaPolicy.optimize_mip and __solve_mip_rescaled), solved as an integer
 * program by GLPK (milp.h).
 *
 * Each round every active job gets at most one configuration c = (GPU
 * type, nodes, GPUs).  Per type with N nodes of R GPUs the configurations
 * are 1, 2, 4, ... GPUs inside one node (powers of two up to R) and 2R,
 * 3R, ..., NR GPUs on whole nodes (§3.2), so that every choice has a
 * placement (hb_sia_configs).  The program, with G the jobs' goodputs per
 * configuration, normalised so that each row's smallest valid entry is 1:
 *
 *   G'_ic = r_i G_ic for c != prev(i), G_ic for c = prev(i)    (Eq. 2)
 *   A_ic  = min(round(G'_ic ^ p, 2 decimals), clip)
 *   E     = sum_ic A_ic X_ic + lambda_n (J - sum_ic X_ic)      (Eq. 1)
 *   minimise E for p < 0, maximise for p > 0, over binary X with
 *   sum_c X_ic <= 1 per job, sum_i sum_{c of type t} gpus(c) X_ic <= GPUs of t,
 *   X_ic = 0 for an invalid configuration (artifact: a 1e-4 entry; here
 *   forbidden outright, the note's A11, which is the same for p < 0),
 *   X_i,prev(i) = 1 for a pinned job (still restarting: the artifact's
 *   preserve_ckpt_allocs).
 * Ties (common after the 2-decimal rounding) break deterministically: the
 * objective of column c of job i carries an extra tie * (c + 1) / C
 * favouring the higher configuration index, the direction the artifact's
 * CBC took (note A3), with tie far below the 0.01 quantum.
 */
#ifndef HB_SIA_MIP_H
#define HB_SIA_MIP_H

#include "error.h"
#include "milp.h"

/* One configuration (a column of G). */
struct hb_sia_config {
	int type;                /* GPU type index, 0..ntypes-1 */
	int nodes;               /* nodes it spans */
	int gpus;                /* GPUs in all */
};

/* One round's problem; everything is borrowed. */
struct hb_sia_problem {
	int njobs;               /* J >= 0 */
	int nconfigs;            /* C >= 1 */
	int ntypes;              /* >= 1 */
	const struct hb_sia_config *configs; /* C entries */
	const int *capacity;     /* GPUs per type (ntypes entries, >= 0) */
	const double *goodput;   /* J x C row-major, normalised; <= 0: invalid configuration */
	const int *prev;         /* per job: its configuration now, or -1 (none); NULL: all -1 */
	const double *restart;   /* per job: r_i in [0, 1] (hb_sia_restart_factor); NULL: all 1 */
	const unsigned char *pinned; /* per job: 1 = must keep prev (prev >= 0); NULL: none */
	double p;                /* fairness power, != 0 (artifact -0.5) */
	double lambda_n;         /* penalty of a job left without a configuration (artifact 1.1) */
	double clip;             /* cap of A (artifact 3000) */
	double tie;              /* tie-break weight (1e-6; 0: none) */
};

/* Defaults of the artifact (note 5): p = -0.5, lambda_n = 1.1, clip 3000,
 * tie 1e-6; everything else zero. */
void hb_sia_problem_default(struct hb_sia_problem *pb);

/* The restart factor of Eq. 2 as the artifact computes it:
 * max(age - restarts S, 0) / (age + S), and 1 while age < S. */
double hb_sia_restart_factor(double age_s, int restarts, double penalty_s);

/* The configurations of one GPU type with `nodes` nodes of `per_node`
 * GPUs (§3.2, artifact CONFIGS_4GPU / CONFIGS_8GPU): appended to out from
 * index *n on (out must hold the hb_sia_type_configs(...) more); returns
 * how many were added. */
int hb_sia_type_configs(int type, int nodes, int per_node, struct hb_sia_config *out, int *n);
/* How many configurations hb_sia_type_configs adds for such a type. */
int hb_sia_type_nconfigs(int nodes, int per_node);

/* Normalise one row in place as the artifact does: divide every valid (> 0)
 * entry by the smallest one, so the row's minimum is 1.  A row without a
 * valid entry stays as it is.  Returns the divisor (0 for such a row). */
double hb_sia_normalise_row(double *row, int n);

/* The objective coefficient A_ic of job i on column c (before lambda_n),
 * as the program uses it (restart scaling, power, rounding, clip). */
double hb_sia_coef(const struct hb_sia_problem *pb, int job, int config);

/* E for a choice (per job a configuration or -1), ties excluded; no
 * feasibility check.  For brute force and reports. */
double hb_sia_objective(const struct hb_sia_problem *pb, const int *choice);

/* Solve: choice[i] = the configuration of job i or -1.  *status (may be
 * NULL) as hb_milp_solve's; *objective (may be NULL) is E of the choice.
 * Malformed input (sizes, a prev out of range, a pinned job without prev,
 * a capacity below the pinned jobs' GPUs) is HB_EINPUT naming it; solver
 * outcomes as hb_milp_solve (a time limit with an incumbent returns it). */
int hb_sia_solve(const struct hb_sia_problem *pb, const struct hb_milp_opts *o, int *choice, double *objective,
		 int *status, struct hb_error *err);

#endif
