/*
 * cannikin_ctl.c: Cannikin's learn-as-you-train controller (cannikin_ctl.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>

#include "cannikin_ctl.h"
#include "lbbsp.h"   /* hb_even_split: epoch 1 */

void hb_ivw_add(struct hb_ivw *w, double x, double var)
{
	if (var > 0) {
		w->sw += 1.0 / var;
		w->swx += x / var;
	} else {
		w->n_exact += 1.0;
		w->sx += x;
	}
}

double hb_ivw_mean(const struct hb_ivw *w)
{
	if (w->n_exact > 0)
		return w->sx / w->n_exact;
	return w->sw > 0 ? w->swx / w->sw : 0.0;
}

int hb_cannikin_ctl_init(struct hb_cannikin_ctl *c, const struct hb_optperf_cluster *cl, struct hb_error *err)
{
	memset(c, 0, sizeof(*c));
	if (!cl || cl->n < 1 || !cl->node)
		return hb_input_error(err, "cannikin controller: a cluster of at least one node is required");
	if (!(c->node = calloc(cl->n, sizeof(*c->node))))
		return hb_runtime_error(err, "cannikin controller: out of memory for %zu nodes", cl->n);
	c->n = cl->n;
	for (size_t i = 0; i < cl->n; i++) {
		c->node[i].min_batch = cl->node[i].min_batch;
		c->node[i].max_batch = cl->node[i].max_batch;
	}
	return 0;
}

void hb_cannikin_ctl_free(struct hb_cannikin_ctl *c)
{
	if (c->node)
		for (size_t i = 0; i < c->n; i++) {
			free(c->node[i].b);
			free(c->node[i].a_s);
			free(c->node[i].p_s);
		}
	free(c->node);
	memset(c, 0, sizeof(*c));
}

enum hb_cannikin_phase hb_cannikin_ctl_phase(const struct hb_cannikin_ctl *c)
{
	return c->epochs <= 0 ? HB_CANNIKIN_EVEN : c->epochs == 1 ? HB_CANNIKIN_EQ8 : HB_CANNIKIN_MODEL;
}

static int push_point(struct hb_cannikin_ctl_node *nd, double b, double a, double p)
{
	if (nd->npts == nd->cap) {
		size_t cap = nd->cap ? 2 * nd->cap : 8;
		double *nb = realloc(nd->b, cap * sizeof(double));

		if (!nb)
			return -1;
		nd->b = nb;
		if (!(nb = realloc(nd->a_s, cap * sizeof(double))))
			return -1;
		nd->a_s = nb;
		if (!(nb = realloc(nd->p_s, cap * sizeof(double))))
			return -1;
		nd->p_s = nb;
		nd->cap = cap;
	}
	nd->b[nd->npts] = b;
	nd->a_s[nd->npts] = a;
	nd->p_s[nd->npts] = p;
	nd->npts++;
	return 0;
}

static int bad_time(double t)
{
	return !isfinite(t) || t < 0;
}

int hb_cannikin_ctl_observe(struct hb_cannikin_ctl *c, const long *local, const double *a_s, const double *p_s,
			    const struct hb_cannikin_comm_obs *comm, size_t ncomm, struct hb_error *err)
{
	if (ncomm < 1)
		return hb_input_error(err, "cannikin controller: an epoch needs at least one communication observation");
	for (size_t i = 0; i < c->n; i++) {
		if (local[i] < 1)
			return hb_input_error(err, "cannikin controller: node %zu: local batch %ld; a node needs >= 1 "
					      "sample to measure its compute time", i, local[i]);
		if (bad_time(a_s[i]) || bad_time(p_s[i]) || !(a_s[i] + p_s[i] > 0))
			return hb_input_error(err, "cannikin controller: node %zu: a %g s, P %g s must be finite, "
					      ">= 0 and not both 0", i, a_s[i], p_s[i]);
	}
	for (size_t j = 0; j < ncomm; j++) {
		const struct hb_cannikin_comm_obs *o = &comm[j];

		if (!(o->gamma >= 0 && o->gamma <= 1) || bad_time(o->overlap_s) || bad_time(o->last_s) ||
		    bad_time(o->gamma_var) || bad_time(o->overlap_var) || bad_time(o->last_var))
			return hb_input_error(err, "cannikin controller: communication observation %zu: gamma %g must be "
					      "in [0, 1], T_o %g s, T_u %g s and the variances finite and >= 0", j,
					      o->gamma, o->overlap_s, o->last_s);
	}
	for (size_t i = 0; i < c->n; i++)
		if (push_point(&c->node[i], (double)local[i], a_s[i], p_s[i]) < 0)
			return hb_runtime_error(err, "cannikin controller: out of memory for node %zu's measurements", i);
	for (size_t j = 0; j < ncomm; j++) {
		hb_ivw_add(&c->gamma, comm[j].gamma, comm[j].gamma_var);
		hb_ivw_add(&c->overlap, comm[j].overlap_s, comm[j].overlap_var);
		hb_ivw_add(&c->last, comm[j].last_s, comm[j].last_var);
	}
	c->epochs++;
	return 0;
}

int hb_cannikin_ctl_identified(const struct hb_cannikin_ctl *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct hb_cannikin_ctl_node *nd = &c->node[i];
		int distinct = 0;

		for (size_t k = 1; k < nd->npts; k++)
			if (nd->b[k] != nd->b[0])
				distinct = 1;
		if (!distinct)
			return 0;
	}
	return 1;
}

/* y = c0 + c1·x by least squares over the node's points; through the origin
 * when every point has the same x. */
static void fit_line(const double *x, const double *y, size_t n, double *slope, double *icpt)
{
	double c0, c1, cov00, cov01, cov11, sumsq;
	int distinct = 0;

	for (size_t k = 1; k < n; k++)
		if (x[k] != x[0])
			distinct = 1;
	if (!distinct) {
		double sy = 0.0;

		for (size_t k = 0; k < n; k++)
			sy += y[k];
		*slope = sy / (double)n / x[0];
		*icpt = 0.0;
		return;
	}
	gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
	/* A physical line has slope > 0 and intercept >= 0 (Eq. 3); noise can
	 * break either.  Keep the slope through the mean point then. */
	if (!(c1 > 0)) {
		double sx = 0.0, sy = 0.0;

		for (size_t k = 0; k < n; k++)
			sx += x[k], sy += y[k];
		*slope = sy / sx;
		*icpt = 0.0;
		return;
	}
	*slope = c1;
	*icpt = c0 > 0 ? c0 : 0.0;
}

/* Both models share the communication terms: the inverse-variance-weighted
 * means of what every epoch measured. */
static int finish_model(const struct hb_cannikin_ctl *c, struct hb_optperf_node *nodes,
			struct hb_optperf_cluster *cl, struct hb_error *err)
{
	memset(cl, 0, sizeof(*cl));
	cl->n = c->n;
	cl->node = nodes;
	cl->gamma = hb_ivw_mean(&c->gamma);
	cl->overlap_comm_s = hb_ivw_mean(&c->overlap);
	cl->last_comm_s = hb_ivw_mean(&c->last);
	return hb_optperf_validate(cl, err);
}

int hb_cannikin_ctl_model(const struct hb_cannikin_ctl *c, struct hb_optperf_node *nodes,
			  struct hb_optperf_cluster *cl, struct hb_error *err)
{
	if (hb_cannikin_ctl_phase(c) != HB_CANNIKIN_MODEL)
		return hb_input_error(err, "cannikin controller: %ld epoch(s) measured; the model needs two (Cannikin §4.2)",
				      c->epochs);
	for (size_t i = 0; i < c->n; i++) {
		const struct hb_cannikin_ctl_node *nd = &c->node[i];

		memset(&nodes[i], 0, sizeof(nodes[i]));
		fit_line(nd->b, nd->a_s, nd->npts, &nodes[i].fwd_per_sample_s, &nodes[i].fwd_fixed_s);
		fit_line(nd->b, nd->p_s, nd->npts, &nodes[i].bwd_per_sample_s, &nodes[i].bwd_fixed_s);
		nodes[i].min_batch = nd->min_batch;
		nodes[i].max_batch = nd->max_batch;
	}
	return finish_model(c, nodes, cl, err);
}

int hb_cannikin_ctl_prop_model(const struct hb_cannikin_ctl *c, struct hb_optperf_node *nodes,
			       struct hb_optperf_cluster *cl, struct hb_error *err)
{
	if (c->epochs < 1)
		return hb_input_error(err, "cannikin controller: no epoch measured; the proportional model needs one "
				      "(Cannikin §4.2, Eq. 8)");
	for (size_t i = 0; i < c->n; i++) {
		const struct hb_cannikin_ctl_node *nd = &c->node[i];
		const size_t k = nd->npts - 1;

		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].fwd_per_sample_s = nd->a_s[k] / nd->b[k];
		nodes[i].bwd_per_sample_s = nd->p_s[k] / nd->b[k];
		nodes[i].min_batch = nd->min_batch;
		nodes[i].max_batch = nd->max_batch;
	}
	return finish_model(c, nodes, cl, err);
}

/* Solve and round on cl: the integer min-max split of total. */
static int solve_split(const struct hb_optperf_cluster *cl, long total, long *local, struct hb_error *err)
{
	struct hb_optperf_solution sol;
	double *real = malloc(cl->n * sizeof(double));
	int rc = -1;

	if (!real)
		return hb_runtime_error(err, "cannikin controller: out of memory for %zu nodes", cl->n);
	if (hb_optperf_solve(cl, total, real, &sol, err) == 0 && hb_optperf_round(cl, total, real, local, NULL, err) == 0)
		rc = 0;
	free(real);
	return rc;
}

int hb_cannikin_ctl_split(const struct hb_cannikin_ctl *c, long total, long *local, struct hb_error *err)
{
	struct hb_optperf_node *nodes = calloc(c->n, sizeof(*nodes));
	struct hb_optperf_cluster cl = { .n = c->n, .node = nodes };
	int rc = -1;

	if (!nodes)
		return hb_runtime_error(err, "cannikin controller: out of memory for %zu nodes", c->n);
	for (size_t i = 0; i < c->n; i++) {
		nodes[i].min_batch = c->node[i].min_batch;
		nodes[i].max_batch = c->node[i].max_batch;
	}
	switch (hb_cannikin_ctl_phase(c)) {
	case HB_CANNIKIN_EVEN:
		/* The model's coefficients are unused by the even split, but the
		 * shared validation wants a node that takes time. */
		for (size_t i = 0; i < c->n; i++)
			nodes[i].fwd_per_sample_s = 1.0;
		rc = hb_even_split(&cl, total, local, err);
		break;
	case HB_CANNIKIN_EQ8:
		/* Eq. 8: b_i ∝ 1/t_sample_i, the min-max split of t_i = t_sample_i·b. */
		for (size_t i = 0; i < c->n; i++) {
			const struct hb_cannikin_ctl_node *nd = &c->node[i];
			size_t k = nd->npts - 1;

			nodes[i].fwd_per_sample_s = (nd->a_s[k] + nd->p_s[k]) / nd->b[k];
		}
		rc = solve_split(&cl, total, local, err);
		break;
	case HB_CANNIKIN_MODEL:
		if (hb_cannikin_ctl_model(c, nodes, &cl, err) == 0)
			rc = solve_split(&cl, total, local, err);
		break;
	}
	free(nodes);
	return rc;
}
