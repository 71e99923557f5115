/*
 * milp.h: a small linear / mixed-integer program and its solution by GLPK
 * (Debian libglpk-dev), for Sia's integer program (sia_mip.h) and Gavel's
 * LPs (gavel_lp.h).
 *
 * Contract.  A struct hb_milp is plain data: columns with bounds, an
 * objective coefficient and an integer flag, and rows as sparse linear
 * combinations with a lower and an upper bound (-HUGE_VAL / HUGE_VAL for
 * none).  Nothing of GLPK lives in it: hb_milp_solve builds a GLPK problem,
 * solves it and throws it away, so a problem may be solved again after a
 * change, and GLPK's objects never outlive one call.  GLPK prints nothing:
 * its terminal output goes to a hook that keeps the last line for error
 * messages, and a GLPK internal error (which would abort the process) is
 * caught with its error hook and longjmp and reported as HB_ERUNTIME.
 *
 * Thread safety: GLPK keeps one environment per thread (thread-local), so
 * different threads may solve at once; one struct hb_milp is not shared.
 */
#ifndef HB_MILP_H
#define HB_MILP_H

#include <stddef.h>

#include "error.h"

/* How a solve ended (hb_milp_solve's *status). */
enum hb_milp_status {
	HB_MILP_OPTIMAL = 0,    /* optimal (an integer program: within the relative gap asked for) */
	HB_MILP_FEASIBLE = 1,   /* the time limit stopped the search with a feasible incumbent */
	HB_MILP_INFEASIBLE = 2, /* no feasible point (proved) */
	HB_MILP_UNBOUNDED = 3,  /* the objective is unbounded (an integer program: its LP relaxation) */
	HB_MILP_NO_SOLUTION = 4, /* the time limit stopped the search before any feasible point */
	HB_MILP_ERROR = 5,      /* the solver failed (numerics, GLPK internal error) */
};

/* One column (variable). */
struct hb_milp_col {
	double lb, ub;           /* bounds; -HUGE_VAL / HUGE_VAL for none */
	double obj;              /* objective coefficient */
	int is_int;              /* 1: integer (binary with bounds [0, 1]) */
};

/* One row: lo <= sum_k val[k] x[idx[k]] <= hi (entries in the problem's pool). */
struct hb_milp_row {
	double lo, hi;           /* -HUGE_VAL / HUGE_VAL for none; lo == hi: equality */
	size_t first;            /* index of the row's first entry in idx / val */
	int n;                   /* entries */
};

/* The program.  Zero-initialise, or use hb_milp_init. */
struct hb_milp {
	int maximize;            /* 1: maximise, 0: minimise */
	double obj_const;        /* constant added to the objective */
	struct hb_milp_col *cols;
	int ncols, cap_cols;
	struct hb_milp_row *rows;
	int nrows, cap_rows;
	int *idx;                /* entries of every row, row after row */
	double *val;
	size_t nent, cap_ent;
	/* Solution of the last hb_milp_solve (0 or an incumbent's). */
	double *x;               /* ncols values (owned; valid for HB_MILP_OPTIMAL and _FEASIBLE) */
	double objective;        /* objective value, obj_const included */
	double solve_s;          /* wall time of the last solve, s */
};

/* Solve settings. */
struct hb_milp_opts {
	double time_limit_s;     /* > 0: stop after this (LP and branch and bound together); 0: none */
	double mip_gap;          /* relative gap at which an integer search stops (>= 0) */
};

void hb_milp_init(struct hb_milp *m, int maximize);
void hb_milp_free(struct hb_milp *m);
void hb_milp_opts_default(struct hb_milp_opts *o); /* no time limit, gap 0 */

/* Add a column; its index in *col (may be NULL).  lb <= ub, no NaN. */
int hb_milp_add_col(struct hb_milp *m, double lb, double ub, double obj, int is_int, int *col,
		    struct hb_error *err);
/* Add a row lo <= sum val[k] x[idx[k]] <= hi over n >= 0 existing columns
 * (each at most once). */
int hb_milp_add_row(struct hb_milp *m, int n, const int *idx, const double *val, double lo, double hi,
		    struct hb_error *err);

/* Solve: an integer program when any column is integer, else an LP
 * (simplex).  *status always says how it ended.  Returns 0 for
 * HB_MILP_OPTIMAL and HB_MILP_FEASIBLE (m->x, m->objective filled);
 * -1 otherwise, with err filled: HB_EINPUT for an infeasible or unbounded
 * program (its data admit no answer), HB_ERUNTIME for a time limit without
 * a feasible point and for a solver failure. */
int hb_milp_solve(struct hb_milp *m, const struct hb_milp_opts *o, int *status, struct hb_error *err);

/* "optimal", "feasible (time limit)", ... */
const char *hb_milp_status_name(int status);

#endif
