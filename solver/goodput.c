/*
 * goodput.c: Pollux's throughput model, statistical efficiency, goodput,
 * (m, s) argmax, speedup and power-mean fitness (notes/pollux.md 1-3).
 * The theta_sys fit is in goodput_fit.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "goodput.h"

/* ------------------------------------------------------------------------ */
/* Parameters                                                                */

static const char *const param_names[HB_GP_NPARAMS] = {
	"alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma",
};

const char *hb_goodput_param_name(int i)
{
	return i >= 0 && i < HB_GP_NPARAMS ? param_names[i] : "?";
}

void hb_goodput_params_to_array(const struct hb_goodput_params *p, double x[HB_GP_NPARAMS])
{
	x[HB_GP_ALPHA_C] = p->alpha_c;
	x[HB_GP_BETA_C] = p->beta_c;
	x[HB_GP_ALPHA_N] = p->alpha_n;
	x[HB_GP_BETA_N] = p->beta_n;
	x[HB_GP_ALPHA_R] = p->alpha_r;
	x[HB_GP_BETA_R] = p->beta_r;
	x[HB_GP_GAMMA] = p->gamma;
}

void hb_goodput_params_from_array(struct hb_goodput_params *p, const double x[HB_GP_NPARAMS])
{
	p->alpha_c = x[HB_GP_ALPHA_C];
	p->beta_c = x[HB_GP_BETA_C];
	p->alpha_n = x[HB_GP_ALPHA_N];
	p->beta_n = x[HB_GP_BETA_N];
	p->alpha_r = x[HB_GP_ALPHA_R];
	p->beta_r = x[HB_GP_BETA_R];
	p->gamma = x[HB_GP_GAMMA];
}

int hb_goodput_params_check(const struct hb_goodput_params *p, struct hb_error *err)
{
	double x[HB_GP_NPARAMS];

	hb_goodput_params_to_array(p, x);
	for (int i = 0; i < HB_GP_GAMMA; i++)
		if (!isfinite(x[i]) || x[i] < 0)
			return hb_input_error(err, "goodput params: field '%s': value '%g': "
					      "must be finite and >= 0", param_names[i], x[i]);
	if (!(p->gamma >= HB_GOODPUT_GAMMA_MIN && p->gamma <= HB_GOODPUT_GAMMA_MAX))
		return hb_input_error(err, "goodput params: field 'gamma': value '%g': "
				      "must be in [%g, %g]", p->gamma, HB_GOODPUT_GAMMA_MIN,
				      HB_GOODPUT_GAMMA_MAX);
	if (p->alpha_c + p->beta_c <= 0)
		return hb_input_error(err, "goodput params: fields 'alpha_c', 'beta_c': "
				      "both 0 would make a pass free");
	return 0;
}

int hb_grad_params_check(const struct hb_grad_params *g, struct hb_error *err)
{
	if (!isfinite(g->grad_sqr) || g->grad_sqr < 0)
		return hb_input_error(err, "grad params: field 'grad_sqr': value '%g': "
				      "must be finite and >= 0", g->grad_sqr);
	if (!isfinite(g->grad_var) || g->grad_var < 0)
		return hb_input_error(err, "grad params: field 'grad_var': value '%g': "
				      "must be finite and >= 0", g->grad_var);
	if (!isfinite(g->init_bsz) || g->init_bsz <= 0)
		return hb_input_error(err, "grad params: field 'init_bsz': value '%g': "
				      "must be finite and > 0", g->init_bsz);
	return 0;
}

struct hb_grad_params hb_grad_params_from_phi(double phi, double init_bsz)
{
	struct hb_grad_params g = { 1.0, phi / init_bsz, init_bsz };

	return g;
}

double hb_goodput_phi(const struct hb_grad_params *g)
{
	if (g->grad_sqr > 0)
		return g->init_bsz * g->grad_var / g->grad_sqr;
	return g->grad_var > 0 ? INFINITY : 0.0;
}

/* ------------------------------------------------------------------------ */
/* Throughput                                                                */

double hb_goodput_compute_time(const struct hb_goodput_params *p, double local_bsz)
{
	return p->alpha_c + p->beta_c * local_bsz;
}

double hb_goodput_sync_time(const struct hb_goodput_params *p, int num_nodes, int num_replicas)
{
	double retro = num_replicas > 2 ? num_replicas - 2 : 0;

	if (num_replicas <= 1)
		return 0.0;
	if (num_nodes <= 1)
		return p->alpha_r + p->beta_r * retro;
	return p->alpha_n + p->beta_n * retro;
}

/* (a^g + b^g)^(1/g) for a, b >= 0, scaled by the larger term so that
 * g = 10 with millisecond times stays far from underflow. */
static double gamma_norm(double a, double b, double g)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;

	double ratio;

	if (hi <= 0)
		return 0.0;
	ratio = lo / hi;
	/* One GPU (T_sync 0): pow(+-0, g > 0) is +-0 and pow(1, y) is 1
	 * exactly, so hi is the general form's value bit for bit. */
	if (ratio == 0.0 && g > 0)
		return hi;
	return hi * pow(1.0 + pow(ratio, g), 1.0 / g);
}

double hb_goodput_iter_time(const struct hb_goodput_params *p, int num_nodes, int num_replicas,
			    double local_bsz, int accum_steps)
{
	double tg = hb_goodput_compute_time(p, local_bsz);
	double ts = hb_goodput_sync_time(p, num_nodes, num_replicas);

	return accum_steps * tg + gamma_norm(tg, ts, p->gamma);
}

double hb_goodput_throughput(const struct hb_goodput_params *p, int num_nodes, int num_replicas,
			     double local_bsz, int accum_steps)
{
	double total = (double)num_replicas * local_bsz * (accum_steps + 1);

	return total / hb_goodput_iter_time(p, num_nodes, num_replicas, local_bsz, accum_steps);
}

/* ------------------------------------------------------------------------ */
/* Efficiency and goodput                                                    */

double hb_goodput_gain(const struct hb_grad_params *g, double total_bsz)
{
	double scale = total_bsz / g->init_bsz;
	double denom = g->grad_var / scale + g->grad_sqr;

	return denom > 0 ? (g->grad_var + g->grad_sqr) / denom : 1.0;
}

double hb_goodput_efficiency(const struct hb_grad_params *g, double total_bsz)
{
	return hb_goodput_gain(g, total_bsz) * g->init_bsz / total_bsz;
}

double hb_goodput_eval(const struct hb_goodput_params *p, const struct hb_grad_params *g,
		       int num_nodes, int num_replicas, double local_bsz, int accum_steps)
{
	double total = (double)num_replicas * local_bsz * (accum_steps + 1);

	return hb_goodput_throughput(p, num_nodes, num_replicas, local_bsz, accum_steps) *
	       hb_goodput_efficiency(g, total);
}

/* ------------------------------------------------------------------------ */
/* Limits and single configurations                                          */

void hb_goodput_limits_default(struct hb_goodput_limits *l, long max_bsz, long min_local_bsz,
			       long max_local_bsz)
{
	l->max_bsz = max_bsz;
	l->min_local_bsz = min_local_bsz;
	l->max_local_bsz = max_local_bsz;
	l->min_bsz = 0;
	l->accumulation = 1;
	l->single_gpu_accum = 1;
	l->candidates = 50; /* numpy.geomspace's default count in the artifact */
	l->mode = HB_ARGMAX_GEOMETRIC;
}

int hb_goodput_limits_check(const struct hb_goodput_limits *l, const struct hb_grad_params *g,
			    struct hb_error *err)
{
	if (l->min_local_bsz < 1)
		return hb_input_error(err, "goodput limits: field 'min_local_bsz': value '%ld': "
				      "must be >= 1", l->min_local_bsz);
	if (l->max_local_bsz < l->min_local_bsz)
		return hb_input_error(err, "goodput limits: field 'max_local_bsz': value '%ld': "
				      "below min_local_bsz %ld", l->max_local_bsz, l->min_local_bsz);
	if ((double)l->max_bsz < g->init_bsz)
		return hb_input_error(err, "goodput limits: field 'max_bsz': value '%ld': "
				      "below the initial batch size %g", l->max_bsz, g->init_bsz);
	if (l->min_bsz < 0)
		return hb_input_error(err, "goodput limits: field 'min_bsz': value '%ld': "
				      "must be >= 0", l->min_bsz);
	if (l->candidates < 1)
		return hb_input_error(err, "goodput limits: field 'candidates': value '%d': "
				      "must be >= 1", l->candidates);
	if (l->mode != HB_ARGMAX_GEOMETRIC && l->mode != HB_ARGMAX_EXACT)
		return hb_input_error(err, "goodput limits: field 'mode': value '%d': unknown",
				      (int)l->mode);
	return 0;
}

/* Lower bound on M shared by both modes: Eq. 6 holds for M >= M0 only. */
static double total_floor(const struct hb_goodput_limits *l, const struct hb_grad_params *g)
{
	return (double)l->min_bsz > g->init_bsz ? (double)l->min_bsz : g->init_bsz;
}

static int config_feasible(const struct hb_grad_params *g, const struct hb_goodput_limits *l,
			   int num_replicas, long m, int s)
{
	double total = (double)num_replicas * m * (s + 1);

	if (m < l->min_local_bsz || m > l->max_local_bsz || s < 0 || (s > 0 && !l->accumulation))
		return 0;
	if (total < total_floor(l, g) || total > (double)l->max_bsz)
		return 0;
	if (l->single_gpu_accum && l->accumulation && num_replicas == 1 &&
	    total > g->init_bsz && s < 1)
		return 0;
	return 1;
}

void hb_goodput_config_eval(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			    const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
			    long local_bsz, int accum_steps, struct hb_goodput_config *out)
{
	double total = (double)num_replicas * local_bsz * (accum_steps + 1);

	out->feasible = config_feasible(g, l, num_replicas, local_bsz, accum_steps);
	out->local_bsz = local_bsz;
	out->accum_steps = accum_steps;
	out->total_bsz = (long)num_replicas * local_bsz * (accum_steps + 1);
	out->iter_s = hb_goodput_iter_time(p, num_nodes, num_replicas, (double)local_bsz, accum_steps);
	out->throughput = total / out->iter_s;
	out->efficiency = hb_goodput_efficiency(g, total);
	out->goodput = out->throughput * out->efficiency;
}

/* ------------------------------------------------------------------------ */
/* Argmax: the artifact's geometric candidates                               */

/* An upper bound of the goodput hb_goodput_config_eval computes for (m, s),
 * bit for bit, without its two pow() calls: T_iter = s T_grad + norm with
 * norm = hi (1 + (lo / hi)^gamma)^(1 / gamma) >= hi = max(T_grad, T_sync)
 * for gamma >= 1, and every step after it (+, /, x by efficiency >= 0) is
 * monotone in floating point too, so the value computed on hi is >= the one
 * computed on norm.  -1 (no bound) where the argument does not hold. */
/* The ceiling's denominator s T_grad + max(T_grad, T_sync) into *den; 0
 * where the bound does not hold.  It depends on theta only, so the kept
 * candidate tables (hb_goodput_argmax_cached) store it. */
static int ceiling_den(const struct hb_goodput_params *p, int num_nodes, int num_replicas, long local_bsz,
		       int accum_steps, double *den)
{
	double tg = hb_goodput_compute_time(p, (double)local_bsz);
	double ts = hb_goodput_sync_time(p, num_nodes, num_replicas);
	double hi = tg > ts ? tg : ts;

	*den = accum_steps * tg + hi;
	return p->gamma >= 1.0 && tg > 0 && ts >= 0 && accum_steps >= 0;
}

static double goodput_ceiling(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			      int num_nodes, int num_replicas, long local_bsz, int accum_steps)
{
	double total = (double)num_replicas * local_bsz * (accum_steps + 1), den;

	if (!ceiling_den(p, num_nodes, num_replicas, local_bsz, accum_steps, &den))
		return -1.0;
	return total / den * hb_goodput_efficiency(g, total);
}

/* The geometric grid's range of M for K GPUs: [lo, hi], 0 when empty. */
static int geo_range(const struct hb_goodput_limits *l, const struct hb_grad_params *g, int num_replicas,
		     double *lo, double *hi)
{
	double kmin = (double)l->min_local_bsz * num_replicas;

	*lo = total_floor(l, g);
	*hi = (double)l->max_bsz;
	if (kmin > *lo)
		*lo = kmin;
	return *lo <= *hi;
}

/* Candidate i of the grid on [lo, hi]: the artifact's (m, s) rounding of
 * its M, then the simulator's clamp m <= max_bsz / (K (s+1)).  0 when its m
 * falls outside the per-GPU range (the artifact drops it). */
static int geo_candidate(const struct hb_goodput_limits *l, const struct hb_grad_params *g, int num_replicas,
			 double lo, double hi, int i, long *mp, long *sp)
{
	const double eps = 1e-8; /* the artifact's floor/ceil tolerance */
	double frac = l->candidates > 1 ? (double)i / (l->candidates - 1) : 0.0;
	double total = i == l->candidates - 1 && i > 0 ? hi : lo * pow(hi / lo, frac);
	double local = total / num_replicas;
	long s = 0, m, mcap;

	if (l->accumulation) {
		s = (long)ceil(local / (double)l->max_local_bsz - eps) - 1;
		if (s < 0)
			s = 0;
		if (l->single_gpu_accum && num_replicas == 1 && local > g->init_bsz + eps && s < 1)
			s = 1;
	}
	m = (long)ceil(local / (double)(s + 1) - eps);
	if (m < l->min_local_bsz || m > l->max_local_bsz)
		return 0;
	mcap = l->max_bsz / ((long)num_replicas * (s + 1));
	if (m > mcap)
		m = mcap;
	*mp = m;
	*sp = s;
	return 1;
}

/* Note 3.1 [ART] GoodputFunction.optimize, plus the simulator's clamp
 * m <= max_bsz / (K (s+1)), applied before evaluation here so that the
 * value returned is the value of the configuration returned. */
static void argmax_geometric(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			     const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
			     struct hb_goodput_config *best)
{
	double lo, hi;
	long last_m = -1, last_s = -1;

	if (!geo_range(l, g, num_replicas, &lo, &hi))
		return;
	for (int i = 0; i < l->candidates; i++) {
		long s, m;
		struct hb_goodput_config c;

		if (!geo_candidate(l, g, num_replicas, lo, hi, i, &m, &s))
			continue;
		/* Neighbouring candidates often round to the same (m, s): the
		 * same value again, which cannot beat itself, so not evaluated
		 * (most of the candidates when K is large and m's range small). */
		if (m == last_m && s == last_s)
			continue;
		last_m = m;
		last_s = s;
		/* Taken only if its goodput beats the best so far: not
		 * evaluated when its ceiling cannot (past the peak, most
		 * candidates; the pow() calls of T_iter were the argmax's
		 * cost in PolluxSched's search). */
		if (best->feasible) {
			double ceil_g = goodput_ceiling(p, g, num_nodes, num_replicas, m, (int)s);

			if (ceil_g >= 0 && ceil_g <= best->goodput)
				continue;
		}
		hb_goodput_config_eval(p, g, l, num_nodes, num_replicas, m, (int)s, &c);
		if (c.feasible && (!best->feasible || c.goodput > best->goodput))
			*best = c;
	}
}

/* ------------------------------------------------------------------------ */
/* Argmax: exact branch and bound                                            */

/* For fixed s and m in [a, b]: throughput is non-decreasing in m, because
 * with T = s T_grad + norm(T_grad, T_sync),
 *   T - m dT/dm = s alpha_c + alpha_c dnorm/dT_grad + (norm - T_grad dnorm/dT_grad)
 * and every term is >= 0 (the last is T_sync^gamma / norm^(gamma-1)), so
 * T/m is non-increasing; efficiency is non-increasing in M.  Hence
 * GOODPUT <= THROUGHPUT(b) x EFFICIENCY(K (s+1) a) on the interval. */
static double interval_bound(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			     int num_nodes, int num_replicas, int s, long a, long b)
{
	double c = (double)num_replicas * (s + 1);

	return hb_goodput_throughput(p, num_nodes, num_replicas, (double)b, s) *
	       hb_goodput_efficiency(g, c * (double)a);
}

struct interval {
	long a, b;
};

static void consider(const struct hb_goodput_params *p, const struct hb_grad_params *g,
		     const struct hb_goodput_limits *l, int num_nodes, int num_replicas, long m,
		     int s, struct hb_goodput_config *best)
{
	struct hb_goodput_config c;

	hb_goodput_config_eval(p, g, l, num_nodes, num_replicas, m, s, &c);
	if (!c.feasible)
		return;
	if (!best->feasible || c.goodput > best->goodput ||
	    (c.goodput == best->goodput && c.total_bsz < best->total_bsz))
		*best = c;
}

static int argmax_exact(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
			struct hb_goodput_config *best, struct hb_error *err)
{
	/* Prune only on a clear margin: the monotonicity behind the bound holds
	 * exactly in real arithmetic but only to a few ulps in floating point. */
	const double slack = 1e-12;
	double lo = total_floor(l, g), hi = (double)l->max_bsz;
	long smax = 0;
	double thr_max;
	struct interval *stack;
	size_t cap = 128;

	if (l->accumulation)
		smax = l->max_bsz / ((long)num_replicas * l->min_local_bsz) - 1;
	/* Throughput never exceeds K m / T_grad(m) at m = max_local (one pass
	 * per m samples, no sync), which bounds every s at once. */
	thr_max = (double)num_replicas * (double)l->max_local_bsz /
		  hb_goodput_compute_time(p, (double)l->max_local_bsz);
	stack = malloc(cap * sizeof(*stack));
	if (!stack)
		return hb_runtime_error(err, "goodput argmax: out of memory");
	for (long s = 0; s <= smax; s++) {
		double c = (double)num_replicas * (double)(s + 1);
		long a = (long)ceil(lo / c), b = (long)floor(hi / c);
		double mfloor = c * (double)l->min_local_bsz;
		size_t top = 0;

		/* Every s' >= s has M >= max(lo, K (s'+1) min_local), so this
		 * bound covers the rest of the loop. */
		if (best->feasible &&
		    thr_max * hb_goodput_efficiency(g, mfloor > lo ? mfloor : lo) <
			    best->goodput * (1.0 - slack))
			break;

		if (a < l->min_local_bsz)
			a = l->min_local_bsz;
		if (b > l->max_local_bsz)
			b = l->max_local_bsz;
		if (l->single_gpu_accum && l->accumulation && num_replicas == 1 && s == 0 &&
		    (double)b > g->init_bsz)
			b = (long)floor(g->init_bsz);
		if (a > b)
			continue;
		stack[top++] = (struct interval){ a, b };
		while (top > 0) {
			struct interval iv = stack[--top];
			long mid;

			if (best->feasible &&
			    interval_bound(p, g, num_nodes, num_replicas, (int)s, iv.a, iv.b) <
				    best->goodput * (1.0 - slack))
				continue;
			consider(p, g, l, num_nodes, num_replicas, iv.a, (int)s, best);
			if (iv.b == iv.a)
				continue;
			consider(p, g, l, num_nodes, num_replicas, iv.b, (int)s, best);
			if (iv.b - iv.a <= 1)
				continue;
			if (top + 2 > cap) {
				struct interval *grown = realloc(stack, 2 * cap * sizeof(*stack));

				if (!grown) {
					free(stack);
					return hb_runtime_error(err, "goodput argmax: out of memory");
				}
				stack = grown;
				cap *= 2;
			}
			/* Endpoints are already evaluated; halves exclude them. */
			mid = iv.a + (iv.b - iv.a) / 2;
			if (mid + 1 <= iv.b - 1)
				stack[top++] = (struct interval){ mid + 1, iv.b - 1 };
			stack[top++] = (struct interval){ iv.a + 1, mid };
		}
	}
	free(stack);
	return 0;
}

int hb_goodput_argmax(const struct hb_goodput_params *p, const struct hb_grad_params *g,
		      const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
		      struct hb_goodput_config *out, struct hb_error *err)
{
	static const struct hb_goodput_config none = { 0 };

	if (hb_goodput_params_check(p, err) || hb_grad_params_check(g, err) ||
	    hb_goodput_limits_check(l, g, err))
		return -1;
	if (num_nodes < 1 || num_replicas < num_nodes)
		return hb_input_error(err, "goodput argmax: placement: value '%d nodes, %d GPUs': "
				      "need 1 <= nodes <= GPUs", num_nodes, num_replicas);
	*out = none;
	if (l->mode == HB_ARGMAX_EXACT)
		return argmax_exact(p, g, l, num_nodes, num_replicas, out, err);
	argmax_geometric(p, g, l, num_nodes, num_replicas, out);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Argmax with a kept candidate table                                        */

void hb_goodput_cands_free(struct hb_goodput_cands *t)
{
	free(t->c);
	t->c = NULL;
	t->n = 0;
	t->cap = 0;
	t->built = 0;
}

static int limits_equal(const struct hb_goodput_limits *a, const struct hb_goodput_limits *b)
{
	return a->max_bsz == b->max_bsz && a->min_local_bsz == b->min_local_bsz &&
	       a->max_local_bsz == b->max_local_bsz && a->min_bsz == b->min_bsz &&
	       a->accumulation == b->accumulation && a->single_gpu_accum == b->single_gpu_accum &&
	       a->candidates == b->candidates && a->mode == b->mode;
}

/* The grid's distinct candidates with what argmax_geometric computes for
 * them from the limits and M0 alone: the same expressions on the same
 * operands as geo_candidate and config_feasible. */
static int cands_build(const struct hb_grad_params *g, const struct hb_goodput_limits *l, int num_nodes,
		       int num_replicas, struct hb_goodput_cands *t, struct hb_error *err)
{
	double lo, hi;
	long last_m = -1, last_s = -1;

	t->built = 0;
	t->theta_set = 0;
	t->n = 0;
	if (geo_range(l, g, num_replicas, &lo, &hi) && t->cap < l->candidates) {
		struct hb_goodput_cand *c = realloc(t->c, (size_t)l->candidates * sizeof(*c));

		if (!c)
			return hb_runtime_error(err, "goodput argmax: out of memory");
		t->c = c;
		t->cap = l->candidates;
	}
	for (int i = 0; lo <= hi && i < l->candidates; i++) {
		struct hb_goodput_cand *c = &t->c[t->n];
		long s, m;

		if (!geo_candidate(l, g, num_replicas, lo, hi, i, &m, &s))
			continue;
		if (m == last_m && s == last_s)
			continue;
		last_m = m;
		last_s = s;
		c->m = m;
		c->s = (int)s;
		c->feasible = config_feasible(g, l, num_replicas, m, (int)s);
		c->total = (double)num_replicas * m * ((int)s + 1);
		t->n++;
	}
	t->limits = *l;
	t->init_bsz = g->init_bsz;
	t->num_nodes = num_nodes;
	t->num_replicas = num_replicas;
	t->built = 1;
	return 0;
}

/* The candidates' theta terms: goodput_ceiling's test and denominator
 * (ceiling_den, the same function); T_iter is left for the first call
 * that needs it. */
static void cands_set_theta(const struct hb_goodput_params *p, struct hb_goodput_cands *t)
{
	for (int i = 0; i < t->n; i++) {
		struct hb_goodput_cand *c = &t->c[i];

		c->ceil_ok = ceiling_den(p, t->num_nodes, t->num_replicas, c->m, c->s, &c->ceil_den);
		c->iter_s = -1.0;
	}
	t->theta = *p;
	t->theta_set = 1;
}

int hb_goodput_argmax_cached(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			     const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
			     struct hb_goodput_cands *t, struct hb_goodput_config *out, struct hb_error *err)
{
	static const struct hb_goodput_config none = { 0 };
	int new_grid, new_theta;

	if (l->mode != HB_ARGMAX_GEOMETRIC || !t)
		return hb_goodput_argmax(p, g, l, num_nodes, num_replicas, out, err);
	new_grid = !t->built || !limits_equal(&t->limits, l) ||
		   memcmp(&t->init_bsz, &g->init_bsz, sizeof(double)) != 0 || t->num_nodes != num_nodes ||
		   t->num_replicas != num_replicas;
	new_theta = new_grid || !t->theta_set || memcmp(&t->theta, p, sizeof(*p)) != 0;
	/* hb_goodput_argmax's checks in its order, less those that read only
	 * a key already checked when the table took it. */
	if (new_theta && hb_goodput_params_check(p, err))
		return -1;
	if (hb_grad_params_check(g, err))
		return -1;
	if (new_grid) {
		if (hb_goodput_limits_check(l, g, err))
			return -1;
		if (num_nodes < 1 || num_replicas < num_nodes)
			return hb_input_error(err, "goodput argmax: placement: value '%d nodes, %d GPUs': "
					      "need 1 <= nodes <= GPUs", num_nodes, num_replicas);
		if (cands_build(g, l, num_nodes, num_replicas, t, err) < 0)
			return -1;
	}
	if (new_theta)
		cands_set_theta(p, t);
	*out = none;
	/* argmax_geometric's loop over the kept candidates. */
	for (int i = 0; i < t->n; i++) {
		struct hb_goodput_cand *c = &t->c[i];
		double eff = hb_goodput_efficiency(g, c->total), thr, gp;

		if (out->feasible && c->ceil_ok) {
			double ceil_g = c->total / c->ceil_den * eff;

			if (ceil_g >= 0 && ceil_g <= out->goodput)
				continue;
		}
		if (!c->feasible)
			continue;
		if (c->iter_s < 0)
			c->iter_s = hb_goodput_iter_time(p, num_nodes, num_replicas, (double)c->m, c->s);
		thr = c->total / c->iter_s;
		gp = thr * eff;
		if (!out->feasible || gp > out->goodput) {
			out->feasible = 1;
			out->local_bsz = c->m;
			out->accum_steps = c->s;
			out->total_bsz = (long)num_replicas * c->m * (c->s + 1);
			out->iter_s = c->iter_s;
			out->throughput = thr;
			out->efficiency = eff;
			out->goodput = gp;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Speedup, re-allocation factor, fitness                                    */

int hb_goodput_speedup(const struct hb_goodput_params *p, const struct hb_grad_params *g,
		       const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
		       int base_nodes, int base_replicas, double *speedup, struct hb_error *err)
{
	struct hb_goodput_config c, base;

	if (hb_goodput_argmax(p, g, l, base_nodes, base_replicas, &base, err))
		return -1;
	if (!base.feasible)
		return hb_input_error(err, "goodput speedup: baseline '%d nodes, %d GPUs': "
				      "no feasible batch configuration", base_nodes, base_replicas);
	if (hb_goodput_argmax(p, g, l, num_nodes, num_replicas, &c, err))
		return -1;
	*speedup = c.goodput / base.goodput;
	return 0;
}

double hb_goodput_restart_factor(double age_s, int restarts, double delta_s)
{
	double num = age_s - restarts * delta_s;

	return num > 0 ? num / (age_s + delta_s) : 0.0;
}

int hb_goodput_fitness(const double *speedup, const double *factor, size_t n, double p,
		       double eps, double *fitness, struct hb_error *err)
{
	double sum = 0.0;

	if (n == 0)
		return hb_input_error(err, "goodput fitness: no jobs");
	if (!isfinite(p) || !isfinite(eps) || eps < 0)
		return hb_input_error(err, "goodput fitness: p '%g', eps '%g': need finite p "
				      "and eps >= 0", p, eps);
	for (size_t j = 0; j < n; j++) {
		double f = factor ? factor[j] : 1.0;
		double x;

		if (!isfinite(speedup[j]) || speedup[j] < 0)
			return hb_input_error(err, "goodput fitness: job %zu: field 'speedup': "
					      "value '%g': must be finite and >= 0", j, speedup[j]);
		if (!isfinite(f) || f < 0)
			return hb_input_error(err, "goodput fitness: job %zu: field 'factor': "
					      "value '%g': must be finite and >= 0", j, f);
		x = speedup[j] * f;
		if (p == 0) {
			x = x > eps ? x : eps;
			if (x <= 0) {
				*fitness = 0.0;
				return 0;
			}
			sum += log(x);
		} else {
			x += eps;
			if (x <= 0 && p < 0) {
				*fitness = 0.0;
				return 0;
			}
			sum += pow(x, p);
		}
	}
	*fitness = p == 0 ? exp(sum / (double)n) : pow(sum / (double)n, 1.0 / p);
	return 0;
}

int hb_goodput_exploration_cap(int max_replicas_held, const struct hb_goodput_limits *l)
{
	long cap = 2L * max_replicas_held;
	long bsz_cap = l->min_local_bsz > 0 ? l->max_bsz / l->min_local_bsz : l->max_bsz;

	if (cap < 1)
		cap = 1;
	if (cap > bsz_cap)
		cap = bsz_cap;
	return (int)cap;
}
