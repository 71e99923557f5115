/*
 * goodput.h: Pollux's goodput model (Qiao et al., OSDI'21), notes/pollux.md.
 *
 * GOODPUT(a, m, s) = THROUGHPUT(a, m, s) x EFFICIENCY(M)           (Eq. 4)
 *
 * - THROUGHPUT = M / T_iter with the seven-parameter system model theta_sys
 *   (Eqs. 7-11): T_grad linear in the per-GPU batch m, T_sync linear in the
 *   GPU count K with separate intra-node ("r") and inter-node ("n") pairs,
 *   compute/communication overlap by a gamma-norm, and s extra
 *   gradient-accumulation passes without synchronisation.
 * - EFFICIENCY(M) = (phi + M0)/(phi + M) from the pre-conditioned gradient
 *   noise scale phi = M0 * grad_var / grad_sqr (Eq. 6, note section 1.4).
 *
 * On top of the model: the per-placement (m, s) argmax (Eq. 13), SPEEDUP
 * (Eq. 15), the re-allocation factor and the power-mean FITNESS (Eq. 14),
 * and the online fit of theta_sys (goodput_fit.c, note section 2.1).
 *
 * A placement enters only through (num_nodes, num_replicas): N nodes that
 * hold at least one replica and K = SUM(a) GPUs.  All GPUs are alike
 * (note A17: Pollux's model is homogeneous; heterogeneous clusters are the
 * business of the other solvers).
 *
 * Pure evaluation functions take validated parameters (see *_check) and do
 * not fail; everything that takes user input returns 0 / -1 and fills err.
 */
#ifndef HB_GOODPUT_H
#define HB_GOODPUT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* ------------------------------------------------------------------------ */
/* Model parameters                                                          */

/* theta_sys (Eq. 12).  The names are the artifact's; the paper's names are
 * given beside each.  Times in seconds, batch sizes in samples. */
struct hb_goodput_params {
	double alpha_c; /* alpha_grad: constant part of one forward/backward pass */
	double beta_c;  /* beta_grad: seconds per sample of the per-GPU batch m */
	double alpha_n; /* alpha_sync^node: all-reduce constant when N > 1 */
	double beta_n;  /* beta_sync^node: retrogression per GPU beyond 2, N > 1 */
	double alpha_r; /* alpha_sync^local: all-reduce constant when N = 1, K > 1 */
	double beta_r;  /* beta_sync^local: retrogression per GPU beyond 2, N = 1 */
	double gamma;   /* overlap exponent, 1 (none) .. 10 (~ max(T_grad, T_sync)) */
};

/* Positions of the parameters in the array form used by the fit. */
enum hb_goodput_param_index {
	HB_GP_ALPHA_C = 0,
	HB_GP_BETA_C,
	HB_GP_ALPHA_N,
	HB_GP_BETA_N,
	HB_GP_ALPHA_R,
	HB_GP_BETA_R,
	HB_GP_GAMMA,
	HB_GP_NPARAMS
};

#define HB_GOODPUT_GAMMA_MIN 1.0  /* note 2.1: gamma in [1, 10] */
#define HB_GOODPUT_GAMMA_MAX 10.0

void hb_goodput_params_to_array(const struct hb_goodput_params *p, double x[HB_GP_NPARAMS]);
void hb_goodput_params_from_array(struct hb_goodput_params *p, const double x[HB_GP_NPARAMS]);
/* Name of parameter i ("alpha_c", ...), for messages and reports. */
const char *hb_goodput_param_name(int i);
/* alphas, betas finite and >= 0, gamma in [1, 10]. */
int hb_goodput_params_check(const struct hb_goodput_params *p, struct hb_error *err);

/* Gradient statistics of one job at one moment (note 1.4).  grad_var is the
 * variance of an M0-sized batch's gradient, so phi = M0 grad_var / grad_sqr. */
struct hb_grad_params {
	double grad_sqr; /* |g|^2 estimate (pre-conditioned), >= 0 */
	double grad_var; /* tr(Sigma)/M0 estimate, >= 0 */
	double init_bsz; /* M0: the user's initial total batch size, > 0 */
};

/* finite, grad_sqr >= 0, grad_var >= 0, init_bsz > 0. */
int hb_grad_params_check(const struct hb_grad_params *g, struct hb_error *err);
/* grad_params with PGNS phi (samples): grad_sqr = 1, grad_var = phi/M0. */
struct hb_grad_params hb_grad_params_from_phi(double phi, double init_bsz);
/* phi = M0 grad_var / grad_sqr; +inf when grad_sqr = 0 and grad_var > 0. */
double hb_goodput_phi(const struct hb_grad_params *g);

/* ------------------------------------------------------------------------ */
/* Throughput (Eqs. 7-11)                                                    */

/* T_grad(m) = alpha_c + beta_c m (Eq. 8). */
double hb_goodput_compute_time(const struct hb_goodput_params *p, double local_bsz);
/* T_sync(N, K) (Eq. 9): 0 if K = 1; alpha_r + beta_r (K-2) if N = 1;
 * alpha_n + beta_n (K-2) otherwise.  (K-2) is taken as 0 for K = 2. */
double hb_goodput_sync_time(const struct hb_goodput_params *p, int num_nodes, int num_replicas);
/* T_iter = s T_grad + (T_grad^gamma + T_sync^gamma)^(1/gamma) (Eqs. 10-11):
 * seconds for one optimiser step of s accumulation passes plus the
 * synchronising pass. */
double hb_goodput_iter_time(const struct hb_goodput_params *p, int num_nodes, int num_replicas,
			    double local_bsz, int accum_steps);
/* M / T_iter in samples per second, M = K m (s + 1) (Eq. 7). */
double hb_goodput_throughput(const struct hb_goodput_params *p, int num_nodes, int num_replicas,
			     double local_bsz, int accum_steps);

/* ------------------------------------------------------------------------ */
/* Statistical efficiency and goodput (Eqs. 4, 6)                            */

/* EFFICIENCY(M) = (phi + M0)/(phi + M), computed as the artifact does from
 * (grad_sqr, grad_var) so that phi = inf (efficiency 1) and grad_sqr =
 * grad_var = 0 (efficiency M0/M) need no special cases.  Meant for M >= M0. */
double hb_goodput_efficiency(const struct hb_grad_params *g, double total_bsz);
/* AdaScale gain r = EFFICIENCY(M) M / M0: M0-equivalent iterations per step. */
double hb_goodput_gain(const struct hb_grad_params *g, double total_bsz);
/* THROUGHPUT x EFFICIENCY in M0-normalised samples per second. */
double hb_goodput_eval(const struct hb_goodput_params *p, const struct hb_grad_params *g,
		       int num_nodes, int num_replicas, double local_bsz, int accum_steps);

/* ------------------------------------------------------------------------ */
/* Batch-size argmax (Eq. 13)                                                */

enum hb_argmax_mode {
	/* The artifact's rule (note 3.1): geometric grid of total batch sizes,
	 * s = ceil(local / max_local) - 1, m = ceil(local / (s + 1)). */
	HB_ARGMAX_GEOMETRIC = 0,
	/* The exact maximum over every feasible integer (m, s), found by
	 * branch and bound (throughput is non-decreasing and efficiency
	 * non-increasing in m, which bounds an interval of m). */
	HB_ARGMAX_EXACT = 1,
};

/* Batch-size limits of one job.  Feasible (m, s), both modes:
 *   min_local_bsz <= m <= max_local_bsz, s >= 0 (s = 0 without accumulation),
 *   max(init_bsz, min_bsz) <= M = K m (s+1) <= max_bsz,
 *   and s >= 1 when K = 1 and M > M0 if single_gpu_accum is set. */
struct hb_goodput_limits {
	long max_bsz;          /* largest total batch M the job accepts (note 1.3) */
	long min_local_bsz;    /* smallest per-GPU batch m (>= 1) */
	long max_local_bsz;    /* largest per-GPU batch that fits in GPU memory */
	long min_bsz;          /* floor on M; the current M for JABAS's port of
				  Pollux, which never decreases B_G (jabas.md 5);
				  0 for none */
	int accumulation;      /* 1: gradient accumulation (s > 0) allowed */
	int single_gpu_accum;  /* 1: artifact rule s >= 1 when K = 1 and M > M0
				  (gradient statistics need two micro-batches) */
	int candidates;        /* geometric grid size (artifact: 50) */
	enum hb_argmax_mode mode;
};

/* Artifact defaults: accumulation on, single_gpu_accum on, 50 candidates,
 * geometric mode, no floor. */
void hb_goodput_limits_default(struct hb_goodput_limits *l, long max_bsz, long min_local_bsz,
			       long max_local_bsz);
int hb_goodput_limits_check(const struct hb_goodput_limits *l, const struct hb_grad_params *g,
			    struct hb_error *err);

/* One batch configuration and its predicted value. */
struct hb_goodput_config {
	int feasible;       /* 0: no (m, s) satisfies the limits; the rest is 0 */
	long local_bsz;     /* m */
	int accum_steps;    /* s */
	long total_bsz;     /* M = K m (s + 1) */
	double iter_s;      /* T_iter */
	double throughput;  /* samples per second */
	double efficiency;  /* EFFICIENCY(M) */
	double goodput;     /* throughput x efficiency */
};

/* Best (m, s) for a placement of K = num_replicas GPUs on num_nodes nodes.
 * An infeasible placement is not an error: out->feasible = 0, goodput 0
 * (a scheduler scores it as no speedup).  Ties keep the smaller M. */
int hb_goodput_argmax(const struct hb_goodput_params *p, const struct hb_grad_params *g,
		      const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
		      struct hb_goodput_config *out, struct hb_error *err);

/* hb_goodput_argmax's geometric candidates for one placement (N, K), kept
 * by the caller across calls: the grid and its feasibility depend only on
 * the limits and M0 (init_bsz), the goodput ceiling's denominator and
 * T_iter (its two pow() calls, computed on first need) also on theta, and
 * nothing on the gradient noise.  PolluxSched asks the same placements of
 * a job every round while its phi moves with its progress and theta_sys
 * only after a refit.  The table keeps its own key and rebuilds what a
 * changed key invalidates. */
struct hb_goodput_cand {
	long m;           /* local batch */
	int s;            /* accumulation steps */
	int feasible;     /* within the limits */
	int ceil_ok;      /* the goodput ceiling applies (theta) */
	double total;     /* K m (s + 1) */
	double ceil_den;  /* s T_grad + max(T_grad, T_sync) (theta) */
	double iter_s;    /* T_iter (theta); < 0 until first needed */
};

struct hb_goodput_cands {
	int built;        /* the grid below is for limits, init_bsz, num_nodes, num_replicas */
	int theta_set;    /* the theta terms are for theta */
	int n, cap;       /* candidates kept, entries allocated */
	int num_nodes, num_replicas;
	struct hb_goodput_limits limits;
	double init_bsz;
	struct hb_goodput_params theta;
	struct hb_goodput_cand *c;
};

/* hb_goodput_argmax, bit for bit, through the table t (zero-initialised
 * before its first use; any arguments after that).  Argmax modes other
 * than geometric (or t NULL) go to hb_goodput_argmax and leave t alone. */
int hb_goodput_argmax_cached(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			     const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
			     struct hb_goodput_cands *t, struct hb_goodput_config *out, struct hb_error *err);
/* Release t's entries (t itself is the caller's). */
void hb_goodput_cands_free(struct hb_goodput_cands *t);

/* Evaluate one given (m, s) as a config (feasible = 1 iff within limits). */
void hb_goodput_config_eval(const struct hb_goodput_params *p, const struct hb_grad_params *g,
			    const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
			    long local_bsz, int accum_steps, struct hb_goodput_config *out);

/* ------------------------------------------------------------------------ */
/* Speedup, re-allocation factor, fitness (Eqs. 14-15)                       */

/* SPEEDUP = max_{m,s} GOODPUT(placement) / max_{m,s} GOODPUT(baseline).
 * The artifact's SpeedupFunction uses the baseline (1 node, 1 GPU); Eq. 15
 * uses the fair share a_f, which the artifact evaluates as (1 node,
 * ceil(total GPUs / J)) (note A4): pass whichever the caller wants.
 * Fails if the baseline has no feasible configuration. */
int hb_goodput_speedup(const struct hb_goodput_params *p, const struct hb_grad_params *g,
		       const struct hb_goodput_limits *l, int num_nodes, int num_replicas,
		       int base_nodes, int base_replicas, double *speedup, struct hb_error *err);

/* REALLOC_FACTOR = (T - R delta) / (T + delta), clipped at 0 as the artifact
 * does (note A6): age_s = T (job age), restarts = R, delta_s = 30 s. */
double hb_goodput_restart_factor(double age_s, int restarts, double delta_s);

/* FITNESS_p = ((1/J) sum_j (x_j + eps)^p)^(1/p) with x_j = speedup_j
 * factor_j (Eq. 14 with the re-allocation penalty).  factor may be NULL (all
 * 1).  p = 0 is the geometric mean of max(x_j, eps) (the artifact's limit
 * case).  eps = 0 is the paper; the artifact uses 1e-3 (note A5).  For p < 0 a
 * zero term makes the fitness 0.  Requires n >= 1, speedups and factors
 * finite and >= 0. */
int hb_goodput_fitness(const double *speedup, const double *factor, size_t n, double p,
		       double eps, double *fitness, struct hb_error *err);

/* The 2x exploration cap (note 2.1 / 3.2): a job may hold at most twice the
 * most GPUs it has ever held (at least 1), and no more than max_bsz /
 * min_local_bsz GPUs. */
int hb_goodput_exploration_cap(int max_replicas_held, const struct hb_goodput_limits *l);

/* ------------------------------------------------------------------------ */
/* Online fit of theta_sys (goodput_fit.c)                                   */

/* One observed configuration, as PolluxAgent records it.  Pollux's profile
 * tables give (step_time, sync_time) per (placement, m) with s = 0: then
 * iter_s = step_time and compute_s = step_time - sync_time. */
struct hb_goodput_sample {
	int num_nodes;     /* N >= 1 */
	int num_replicas;  /* K >= N */
	int local_bsz;     /* m >= 1 */
	int accum_steps;   /* s >= 0 */
	double iter_s;     /* measured T_iter: s accumulation passes + sync pass */
	double compute_s;  /* measured T_grad of one pass (step minus its sync
			      time); <= 0 when not measured */
};

/* Exploration priors (note 2.1, artifact fit_perf_params), one bit each in
 * hb_goodput_fit_result.priors. */
enum hb_goodput_prior {
	HB_PRIOR_ALPHA_C = 1 << 0,  /* one m seen: alpha_c pinned to mean(T_grad)/2 */
	HB_PRIOR_NODE = 1 << 1,     /* no N > 1 sample: alpha_n, beta_n pinned ~0 in
				       the fit, then raised to >= 1.1x (alpha_r, beta_r) */
	HB_PRIOR_LOCAL = 1 << 2,    /* no N = 1, K > 1 sample: alpha_r, beta_r ~0 */
	HB_PRIOR_RETRO = 1 << 3,    /* no K > 2 sample: beta_n, beta_r ~0 */
};

/* Lower bound of every alpha and beta in the fit ("pinned near 0"). */
#define HB_GOODPUT_FIT_LB 1e-8

/* The minimiser run from each start (goodput_fit.c, "Minimiser"). */
enum hb_goodput_fit_method {
	HB_FIT_LM = 0,   /* Levenberg-Marquardt: a damped Newton model, damped Gauss-Newton as fallback */
	HB_FIT_BFGS = 1, /* GSL's BFGS (the former minimiser; the tests' oracle) */
	HB_FIT_LBFGSB = 2, /* the artifacts' own: L-BFGS-B 3.0 (liblbfgsb) on the natural
			      parameters, bounded, with scipy.optimize.minimize's settings
			      for tol = 1e-5 (Sia's fit_perf_params); ONE start, the
			      artifact's point: restarts and init are not read */
};

struct hb_goodput_fit_options {
	int priors;        /* 1: apply the exploration priors (default 1) */
	int regularise;    /* 1: the artifact's regularisers 1e-3 (gamma-1)^2 +
			      1e-2 ((beta_n/alpha_n)^2 + (beta_r/alpha_r)^2)
			      (default 1); 0: plain RMSLE as in the paper */
	int restarts;      /* extra random starts besides the two fixed ones
			      (default 2) */
	int max_iter;      /* minimiser iterations per start (default 400) */
	int method;        /* enum hb_goodput_fit_method (default HB_FIT_LM) */
	uint64_t seed;     /* seed of the HB_STREAM_FIT restarts (default 1) */
	/* Warm start (default NULL: none): a previous fit of the same job, its
	 * result's params and priors.  The first start is then this point
	 * instead of the artifact's initial one; the data's start and the
	 * restarts follow as without it.  A parameter init_priors pinned that
	 * is free now starts from the data's estimate instead. */
	const struct hb_goodput_params *init;
	unsigned init_priors;
};

void hb_goodput_fit_options_default(struct hb_goodput_fit_options *o);

struct hb_goodput_fit_result {
	struct hb_goodput_params params; /* fitted theta_sys (after the priors) */
	double objective;     /* final objective value (fit's own terms) */
	double rmsle_iter;    /* RMS of log(pred T_iter / measured) */
	double rmsle_compute; /* same for T_grad over samples with compute_s > 0;
				 0 if none */
	unsigned priors;      /* enum hb_goodput_prior bits that were applied */
	int free_params;      /* parameters left free in the fit */
	int starts;           /* optimiser starts run */
	int iterations;       /* minimiser iterations summed over starts */
};

/* Fit theta_sys to n >= 1 samples by minimising
 *   RMSLE(T_iter) + RMSLE(T_grad) [+ regularisers]
 * (note 2.1 [ART]) over alphas, betas >= 1e-8 and gamma in [1, 10], with
 * options.method on a bounded reparametrisation.  Deterministic for a given
 * seed.  This is "a goodput fit" for timing. */
int hb_goodput_fit(const struct hb_goodput_sample *samples, size_t n,
		   const struct hb_goodput_fit_options *opt, struct hb_goodput_fit_result *out,
		   struct hb_error *err);

/* RMS of log(predicted / measured) over the samples: T_iter, and T_grad over
 * the samples that measured it (*compute_rmsle may be NULL; 0 if none). */
double hb_goodput_rmsle(const struct hb_goodput_params *p, const struct hb_goodput_sample *samples,
			size_t n, double *compute_rmsle);

#endif
