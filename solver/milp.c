/*
 * milp.c: struct hb_milp and its solution by GLPK (milp.h).
 *
 * One solve is one guarded region: the GLPK problem is built from the plain
 * data, solved and deleted inside it.  GLPK reports an internal error by
 * printing it and calling abort() after its error hook returns, so the hook
 * longjmps back here; GLPK's environment is then undefined and is freed
 * with glp_free_env() (which also frees the problem and resets the hooks:
 * this is why no GLPK object outlives a call).  Its terminal output goes to
 * a hook that keeps the text of the call, so the message of a failure can
 * quote GLPK's own words.
 *
 * An integer program is solved as GLPK's documentation advises without
 * presolve: the LP relaxation by the simplex method first (its status tells
 * infeasible and unbounded apart), then branch and cut from its optimal
 * basis (glp_intopt), under one time limit for both.
 */
#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "milp.h"

/* Everything the GLPK hooks of one solve need: no state outside it. */
struct glpk_guard {
	jmp_buf jb;
	char text[512];          /* GLPK's output during the call, newlines as "; " */
	size_t len;
};

static int term_hook(void *info, const char *s)
{
	struct glpk_guard *g = info;

	for (; *s && g->len + 3 < sizeof(g->text); s++) {
		if (*s == '\n') {
			if (s[1]) {
				g->text[g->len++] = ';';
				g->text[g->len++] = ' ';
			}
		} else {
			g->text[g->len++] = *s;
		}
	}
	g->text[g->len] = '\0';
	return 1; /* never print */
}

static void error_hook(void *info)
{
	struct glpk_guard *g = info;

	longjmp(g->jb, 1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void hb_milp_init(struct hb_milp *m, int maximize)
{
	memset(m, 0, sizeof(*m));
	m->maximize = maximize != 0;
}

void hb_milp_free(struct hb_milp *m)
{
	free(m->cols);
	free(m->rows);
	free(m->idx);
	free(m->val);
	free(m->x);
	memset(m, 0, sizeof(*m));
}

void hb_milp_opts_default(struct hb_milp_opts *o)
{
	o->time_limit_s = 0.0;
	o->mip_gap = 0.0;
}

const char *hb_milp_status_name(int status)
{
	switch (status) {
	case HB_MILP_OPTIMAL: return "optimal";
	case HB_MILP_FEASIBLE: return "feasible (time limit)";
	case HB_MILP_INFEASIBLE: return "infeasible";
	case HB_MILP_UNBOUNDED: return "unbounded";
	case HB_MILP_NO_SOLUTION: return "no solution (time limit)";
	default: return "solver error";
	}
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

int hb_milp_add_col(struct hb_milp *m, double lb, double ub, double obj, int is_int, int *col,
		    struct hb_error *err)
{
	size_t cap = (size_t)m->cap_cols;

	if (isnan(lb) || isnan(ub) || !isfinite(obj) || lb > ub || lb == HUGE_VAL || ub == -HUGE_VAL)
		return hb_input_error(err, "milp: column %d: bounds [%g, %g], objective %g are not a valid column",
				      m->ncols, lb, ub, obj);
	if (grow((void **)&m->cols, &cap, (size_t)m->ncols + 1, sizeof(*m->cols)) < 0)
		return hb_runtime_error(err, "milp: out of memory");
	m->cap_cols = (int)cap;
	m->cols[m->ncols] = (struct hb_milp_col){ lb, ub, obj, is_int != 0 };
	if (col)
		*col = m->ncols;
	m->ncols++;
	return 0;
}

int hb_milp_add_row(struct hb_milp *m, int n, const int *idx, const double *val, double lo, double hi,
		    struct hb_error *err)
{
	size_t cap = (size_t)m->cap_rows, cape = m->cap_ent;

	if (n < 0 || isnan(lo) || isnan(hi) || lo > hi || lo == HUGE_VAL || hi == -HUGE_VAL)
		return hb_input_error(err, "milp: row %d: %d entries, bounds [%g, %g] are not a valid row", m->nrows,
				      n, lo, hi);
	for (int k = 0; k < n; k++)
		if (idx[k] < 0 || idx[k] >= m->ncols || !isfinite(val[k]))
			return hb_input_error(err, "milp: row %d, entry %d: column %d (of %d), coefficient %g", m->nrows,
					      k, idx[k], m->ncols, val[k]);
	if (grow((void **)&m->rows, &cap, (size_t)m->nrows + 1, sizeof(*m->rows)) < 0)
		return hb_runtime_error(err, "milp: out of memory");
	m->cap_rows = (int)cap;
	if (grow((void **)&m->idx, &cape, m->nent + (size_t)n, sizeof(*m->idx)) < 0)
		return hb_runtime_error(err, "milp: out of memory");
	cape = m->cap_ent;
	if (grow((void **)&m->val, &cape, m->nent + (size_t)n, sizeof(*m->val)) < 0)
		return hb_runtime_error(err, "milp: out of memory");
	m->cap_ent = cape;
	memcpy(m->idx + m->nent, idx, sizeof(int) * (size_t)n);
	memcpy(m->val + m->nent, val, sizeof(double) * (size_t)n);
	m->rows[m->nrows] = (struct hb_milp_row){ lo, hi, m->nent, n };
	m->nent += (size_t)n;
	m->nrows++;
	return 0;
}

static int bound_type(double lo, double hi)
{
	if (lo == -HUGE_VAL && hi == HUGE_VAL)
		return GLP_FR;
	if (hi == HUGE_VAL)
		return GLP_LO;
	if (lo == -HUGE_VAL)
		return GLP_UP;
	return lo == hi ? GLP_FX : GLP_DB;
}

static double finite_or_0(double v)
{
	return isfinite(v) ? v : 0.0;
}

/* The GLPK problem of m (1-based arrays ia, ja, ar of m->nent + 1 entries). */
static void load(glp_prob *P, const struct hb_milp *m, int *ia, int *ja, double *ar)
{
	size_t e = 0;

	glp_set_obj_dir(P, m->maximize ? GLP_MAX : GLP_MIN);
	glp_set_obj_coef(P, 0, m->obj_const);
	glp_add_cols(P, m->ncols);
	for (int j = 0; j < m->ncols; j++) {
		const struct hb_milp_col *c = &m->cols[j];

		glp_set_col_bnds(P, j + 1, bound_type(c->lb, c->ub), finite_or_0(c->lb), finite_or_0(c->ub));
		glp_set_obj_coef(P, j + 1, c->obj);
		if (c->is_int)
			glp_set_col_kind(P, j + 1, c->lb == 0.0 && c->ub == 1.0 ? GLP_BV : GLP_IV);
	}
	/* A program without constraints still gets one free row: GLPK's
	 * simplex wants a non-empty matrix. */
	glp_add_rows(P, m->nrows > 0 ? m->nrows : 1);
	if (m->nrows == 0)
		glp_set_row_bnds(P, 1, GLP_FR, 0.0, 0.0);
	for (int i = 0; i < m->nrows; i++) {
		const struct hb_milp_row *r = &m->rows[i];

		glp_set_row_bnds(P, i + 1, bound_type(r->lo, r->hi), finite_or_0(r->lo), finite_or_0(r->hi));
		for (int k = 0; k < r->n; k++) {
			e++;
			ia[e] = i + 1;
			ja[e] = m->idx[r->first + (size_t)k] + 1;
			ar[e] = m->val[r->first + (size_t)k];
		}
	}
	glp_load_matrix(P, (int)e, ia, ja, ar);
}

static int ms_left(double t0, double limit_s)
{
	double left;

	if (limit_s <= 0)
		return INT_MAX; /* GLPK's own default: none */
	left = (limit_s - (now_s() - t0)) * 1e3;
	return left < 1.0 ? 1 : left > 1e9 ? 1000000000 : (int)left;
}

/* The status of GLPK's answer (inside the guard). */
static int lp_status(glp_prob *P, int ret)
{
	int st = glp_get_status(P);

	if (ret == GLP_ETMLIM || ret == GLP_EITLIM)
		return st == GLP_FEAS || st == GLP_OPT ? HB_MILP_FEASIBLE : HB_MILP_NO_SOLUTION;
	if (ret != 0)
		return HB_MILP_ERROR;
	switch (st) {
	case GLP_OPT: return HB_MILP_OPTIMAL;
	case GLP_NOFEAS: return HB_MILP_INFEASIBLE;
	case GLP_UNBND: return HB_MILP_UNBOUNDED;
	default: return HB_MILP_ERROR;
	}
}

static int mip_status(glp_prob *P, int ret)
{
	int st = glp_mip_status(P);

	switch (ret) {
	case 0:
		return st == GLP_OPT ? HB_MILP_OPTIMAL : st == GLP_NOFEAS ? HB_MILP_INFEASIBLE : HB_MILP_ERROR;
	case GLP_EMIPGAP: /* stopped at the gap asked for: optimal within it */
		return st == GLP_FEAS || st == GLP_OPT ? HB_MILP_OPTIMAL : HB_MILP_ERROR;
	case GLP_ETMLIM:
		return st == GLP_FEAS || st == GLP_OPT ? HB_MILP_FEASIBLE : HB_MILP_NO_SOLUTION;
	default:
		return HB_MILP_ERROR;
	}
}

/* The GLPK part of a solve: build, solve, read back, delete, all under the
 * guard.  Returns the status; *ret gets GLPK's last return code. */
static int run_glpk(struct hb_milp *m, const struct hb_milp_opts *o, int has_int, double t0, int *ia, int *ja,
		    double *ar, struct glpk_guard *g, int *ret)
{
	glp_prob *volatile P = NULL;
	int st;

	if (setjmp(g->jb)) {
		/* A GLPK internal error: its environment is unusable, free it whole. */
		glp_free_env();
		return -1;
	}
	glp_term_out(GLP_ON);
	glp_term_hook(term_hook, g);
	glp_error_hook(error_hook, g);
	P = glp_create_prob();
	load(P, m, ia, ja, ar);
	{
		glp_smcp sp;

		glp_init_smcp(&sp);
		sp.msg_lev = GLP_MSG_OFF;
		sp.presolve = GLP_OFF;
		sp.tm_lim = ms_left(t0, o->time_limit_s);
		*ret = glp_simplex(P, &sp);
		st = lp_status(P, *ret);
	}
	if (has_int) {
		if (st == HB_MILP_OPTIMAL) {
			glp_iocp ip;

			glp_init_iocp(&ip);
			ip.msg_lev = GLP_MSG_OFF;
			ip.presolve = GLP_OFF;
			ip.mip_gap = o->mip_gap;
			ip.tm_lim = ms_left(t0, o->time_limit_s);
			*ret = glp_intopt(P, &ip);
			st = mip_status(P, *ret);
		} else if (st == HB_MILP_FEASIBLE) {
			st = HB_MILP_NO_SOLUTION; /* an LP point is no integer point */
		}
	}
	if (st == HB_MILP_OPTIMAL || st == HB_MILP_FEASIBLE) {
		for (int j = 0; j < m->ncols; j++)
			m->x[j] = has_int ? glp_mip_col_val(P, j + 1) : glp_get_col_prim(P, j + 1);
		m->objective = has_int ? glp_mip_obj_val(P) : glp_get_obj_val(P);
	}
	glp_delete_prob(P);
	glp_term_hook(NULL, NULL);
	glp_error_hook(NULL, NULL);
	return st;
}

int hb_milp_solve(struct hb_milp *m, const struct hb_milp_opts *o, int *status, struct hb_error *err)
{
	struct hb_milp_opts def;
	struct glpk_guard g;
	int *ia = NULL, *ja = NULL, has_int = 0, st, ret = 0;
	double *ar = NULL, *x, t0 = now_s();

	*status = HB_MILP_ERROR;
	if (!o) {
		hb_milp_opts_default(&def);
		o = &def;
	}
	if (m->ncols <= 0)
		return hb_input_error(err, "milp: a program needs at least one column");
	if (!(o->mip_gap >= 0) || !(o->time_limit_s >= 0))
		return hb_input_error(err, "milp: gap %g and time limit %g s must be >= 0", o->mip_gap, o->time_limit_s);
	for (int j = 0; j < m->ncols; j++)
		has_int |= m->cols[j].is_int;
	x = realloc(m->x, sizeof(double) * (size_t)m->ncols);
	ia = malloc(sizeof(int) * (m->nent + 1));
	ja = malloc(sizeof(int) * (m->nent + 1));
	ar = malloc(sizeof(double) * (m->nent + 1));
	if (x)
		m->x = x;
	if (!x || !ia || !ja || !ar) {
		free(ia);
		free(ja);
		free(ar);
		return hb_runtime_error(err, "milp: out of memory");
	}
	memset(&g, 0, sizeof(g));
	st = run_glpk(m, o, has_int, t0, ia, ja, ar, &g, &ret);
	free(ia);
	free(ja);
	free(ar);
	m->solve_s = now_s() - t0;
	if (st < 0) {
		*status = HB_MILP_ERROR;
		return hb_runtime_error(err, "milp: GLPK failed: %s", g.len ? g.text : "(no message)");
	}
	*status = st;
	switch (st) {
	case HB_MILP_OPTIMAL:
	case HB_MILP_FEASIBLE:
		return 0;
	case HB_MILP_INFEASIBLE:
		return hb_input_error(err, "milp: the program (%d columns, %d rows) is infeasible", m->ncols, m->nrows);
	case HB_MILP_UNBOUNDED:
		return hb_input_error(err, "milp: the program (%d columns, %d rows) is unbounded", m->ncols, m->nrows);
	case HB_MILP_NO_SOLUTION:
		return hb_runtime_error(err, "milp: no feasible point found within the time limit of %g s",
					o->time_limit_s);
	default:
		return hb_runtime_error(err, "milp: GLPK returned %d (%s)%s%s", ret, has_int ? "glp_intopt" : "glp_simplex",
					g.len ? ": " : "", g.text);
	}
}
