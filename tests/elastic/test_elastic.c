/* Unit tests for solver/elastic: the corrected Algorithm 1 DP against
 * exhaustive enumeration, its tie rule, edge cases, the admission step, and
 * the Job Scalability Analyser against a brute-force Eq. 2 and the paper's
 * Table II / Section IV-D example (notes/elastic.md §3, §6). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "elastic.h"
#include "rng.h"

#define NINF (-INFINITY)
#define MAXJ 8

/* |a - b| <= tol, reporting both numbers (cmocka 1.1.5 has no double assert);
 * tol = 0 asks for bit equality, which the integer-valued cases have. */
#define assert_double_equal(a, b, tol) assert_near_impl((a), (b), (tol), #a, __FILE__, __LINE__)

static void assert_near_impl(double a, double b, double tol, const char *what, const char *file,
			     int line)
{
	if (!(fabs(a - b) <= tol) && !(a == b))
		fail_msg("%s:%d: %s = %.17g, want %.17g (tolerance %g)", file, line, what, a, b, tol);
}

/* ------------------------------------------------------------------------ */
/* Exhaustive oracle for the DP                                              */
/* ------------------------------------------------------------------------ */

struct oracle {
	const struct hb_elastic_table *jobs;
	int J, K;
	int exact;             /* 1: values are small integers, ties are exact */
	int cur[MAXJ], best[MAXJ];
	double bestv;
	int found;
};

/* 1 if a is lexicographically smaller than b read from the last job down:
 * the tie rule elastic.h promises. */
static int rev_lex_less(const int *a, const int *b, int J)
{
	for (int j = J - 1; j >= 0; j--)
		if (a[j] != b[j])
			return a[j] < b[j];
	return 0;
}

static void oracle_rec(struct oracle *o, int j, int used, double v)
{
	if (j == o->J) {
		int better = !o->found || v > o->bestv ||
			     (o->exact && v == o->bestv && rev_lex_less(o->cur, o->best, o->J));

		if (better) {
			o->found = 1;
			o->bestv = v;
			memcpy(o->best, o->cur, sizeof(o->cur));
		}
		return;
	}
	for (int k = 1; k <= o->jobs[j].k_max && used + k <= o->K; k++) {
		double s = o->jobs[j].speedup[k];

		if (s == NINF)
			continue;
		o->cur[j] = k;
		oracle_rec(o, j + 1, used + k, v + s);
	}
}

static void oracle_solve(struct oracle *o)
{
	o->found = 0;
	o->bestv = NINF;
	memset(o->cur, 0, sizeof(o->cur));
	memset(o->best, 0, sizeof(o->best));
	oracle_rec(o, 0, 0, 0.0);
}

/* Random instance: J <= 5, K <= 12, per-job k_max up to K + 2, about 20 % of
 * entries infeasible; exact instances draw S from {1, 2, 3, 4} (many ties). */
static void random_instance(struct hb_rng *r, int exact, double S[][16], struct hb_elastic_table *t,
			    int *J, int *K)
{
	*J = (int)hb_rng_below(r, 6);
	*K = (int)hb_rng_below(r, 13);
	for (int j = 0; j < *J; j++) {
		t[j].k_max = (int)hb_rng_below(r, (uint64_t)*K + 3);
		t[j].speedup = S[j];
		S[j][0] = NINF;
		for (int k = 1; k <= t[j].k_max; k++) {
			if (hb_rng_uniform(r) < 0.2)
				S[j][k] = NINF;
			else if (exact)
				S[j][k] = (double)(1 + hb_rng_below(r, 4));
			else
				S[j][k] = 0.1 + 2.9 * hb_rng_uniform(r);
		}
	}
}

static void check_against_oracle(int exact, int ninst, uint64_t seed)
{
	struct hb_rng r;
	int feasible_seen = 0, infeasible_seen = 0, idle_seen = 0;

	hb_rng_seed(&r, seed, HB_STREAM_DEFAULT);
	for (int inst = 0; inst < ninst; inst++) {
		double S[MAXJ][16];
		struct hb_elastic_table t[MAXJ];
		struct oracle o;
		struct hb_error err = { 0 };
		int J, K, alloc[MAXJ], idle = -1, rc, sum = 0;
		double value = NAN, check = 0;

		random_instance(&r, exact, S, t, &J, &K);
		o.jobs = t;
		o.J = J;
		o.K = K;
		o.exact = exact;
		oracle_solve(&o);
		rc = hb_elastic_optimize(t, J, K, alloc, &value, &idle, &err);
		if (!o.found) {
			if (rc != -1)
				fail_msg("instance %d: oracle infeasible, DP feasible (J=%d K=%d)",
					 inst, J, K);
			assert_int_equal(err.code, HB_ERUNTIME);
			infeasible_seen++;
			continue;
		}
		if (rc != 0)
			fail_msg("instance %d: oracle feasible (%g), DP says: %s", inst, o.bestv,
				 err.msg);
		feasible_seen++;
		assert_double_equal(value, o.bestv, 1e-9);
		for (int j = 0; j < J; j++) {
			assert_true(alloc[j] >= 1 && alloc[j] <= t[j].k_max);
			assert_true(S[j][alloc[j]] != NINF);
			sum += alloc[j];
			check += S[j][alloc[j]];
		}
		assert_true(sum <= K);
		assert_int_equal(idle, K - sum);
		idle_seen += idle > 0;
		assert_double_equal(check, value, 1e-9);
		if (exact)
			for (int j = 0; j < J; j++)
				if (alloc[j] != o.best[j])
					fail_msg("instance %d job %d: DP gives %d GPUs, the tie rule "
						 "wants %d", inst, j, alloc[j], o.best[j]);
	}
	/* the generator must exercise both outcomes and idle GPUs */
	assert_true(feasible_seen > ninst / 4);
	assert_true(infeasible_seen > ninst / 20);
	assert_true(idle_seen > 0);
}

static void test_dp_equals_enumeration_real(void **state)
{
	(void)state;
	check_against_oracle(0, 600, 11);
}

static void test_dp_equals_enumeration_ties(void **state)
{
	(void)state;
	check_against_oracle(1, 600, 12);
}

/* ------------------------------------------------------------------------ */
/* Hand-built DP cases                                                       */
/* ------------------------------------------------------------------------ */

/* Three identical concave jobs (marginals 3, 2, 1) on 7 GPUs: the optimum is
 * one 3 and two 2s (23); the tie rule gives the extra GPU to the first job. */
static void test_identical_jobs_tie_goes_to_first(void **state)
{
	const double S[] = { NINF, 4, 7, 9, 10 };
	struct hb_elastic_table t[3] = { { S, 4 }, { S, 4 }, { S, 4 } };
	struct hb_error err = { 0 };
	int alloc[3], idle;
	double v;

	(void)state;
	assert_int_equal(hb_elastic_optimize(t, 3, 7, alloc, &v, &idle, &err), 0);
	assert_double_equal(v, 23, 0);
	assert_int_equal(alloc[0], 3);
	assert_int_equal(alloc[1], 2);
	assert_int_equal(alloc[2], 2);
	assert_int_equal(idle, 0);
	/* 12 GPUs: all four each is 30, the cap k_max = 4 leaves none idle */
	assert_int_equal(hb_elastic_optimize(t, 3, 12, alloc, &v, &idle, &err), 0);
	assert_double_equal(v, 30, 0);
	assert_int_equal(alloc[0] + alloc[1] + alloc[2], 12);
	/* 20 GPUs: k_max caps each job, 8 stay idle */
	assert_int_equal(hb_elastic_optimize(t, 3, 20, alloc, &v, &idle, &err), 0);
	assert_int_equal(idle, 8);
}

/* At-most-K: with factors falling past 2 GPUs (Table II has 0.86 < 1) the DP
 * leaves GPUs idle instead of using all K. */
static void test_dp_leaves_gpus_idle(void **state)
{
	const double S[] = { NINF, 1.0, 1.3, 0.9, 0.8, 0.7 };
	struct hb_elastic_table t[2] = { { S, 5 }, { S, 5 } };
	struct hb_error err = { 0 };
	int alloc[2], idle;
	double v;

	(void)state;
	assert_int_equal(hb_elastic_optimize(t, 2, 10, alloc, &v, &idle, &err), 0);
	assert_int_equal(alloc[0], 2);
	assert_int_equal(alloc[1], 2);
	assert_int_equal(idle, 6);
	assert_double_equal(v, 2.6, 1e-12);
}

static void test_dp_edge_cases(void **state)
{
	const double S[] = { NINF, 1.0, 1.5, 1.8 };
	const double late[] = { NINF, NINF, NINF, NINF, NINF, 4.0, 4.6 };
	struct hb_elastic_table one = { S, 3 }, big = { late, 6 };
	struct hb_elastic_table three[3] = { { S, 3 }, { S, 3 }, { S, 3 } };
	struct hb_elastic_table pair[2] = { { S, 3 }, { late, 6 } };
	struct hb_error err = { 0 };
	int alloc[3] = { -1, -1, -1 }, idle = -1;
	double v = NAN;

	(void)state;
	/* K = 0: no jobs is feasible with value 0; any job is infeasible */
	assert_int_equal(hb_elastic_optimize(NULL, 0, 0, alloc, &v, &idle, &err), 0);
	assert_double_equal(v, 0, 0);
	assert_int_equal(idle, 0);
	assert_int_equal(hb_elastic_optimize(&one, 1, 0, alloc, &v, &idle, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	/* no jobs on 5 GPUs: all idle */
	assert_int_equal(hb_elastic_optimize(NULL, 0, 5, alloc, &v, &idle, &err), 0);
	assert_int_equal(idle, 5);
	/* J > K */
	hb_error_clear(&err);
	assert_int_equal(hb_elastic_optimize(three, 3, 2, alloc, &v, &idle, &err), -1);
	assert_non_null(strstr(err.msg, "3 jobs need at least one GPU each but K = 2"));
	/* a job whose smallest feasible k (5) exceeds K = 4 */
	hb_error_clear(&err);
	assert_int_equal(hb_elastic_optimize(&big, 1, 4, alloc, &v, &idle, &err), -1);
	assert_non_null(strstr(err.msg, "job 1 has no feasible GPU count"));
	assert_int_equal(hb_elastic_optimize(&big, 1, 5, alloc, &v, &idle, &err), 0);
	assert_int_equal(alloc[0], 5);
	/* each fits alone, not together: 1 + 5 > 5 */
	hb_error_clear(&err);
	assert_int_equal(hb_elastic_optimize(pair, 2, 5, alloc, &v, &idle, &err), -1);
	assert_non_null(strstr(err.msg, "at least 6 GPUs"));
	assert_int_equal(hb_elastic_optimize(pair, 2, 7, alloc, &v, &idle, &err), 0);
	assert_int_equal(alloc[0], 1);                 /* 1.0 + 4.6 beats 1.5 + 4.0 */
	assert_int_equal(alloc[1], 6);
	assert_double_equal(v, 5.6, 1e-12);
	/* a job with k_max = 0 never fits */
	one.k_max = 0;
	assert_int_equal(hb_elastic_optimize(&one, 1, 4, alloc, &v, &idle, &err), -1);
}

static void test_dp_rejects_bad_tables(void **state)
{
	double S[] = { NINF, 1.0, NAN };
	struct hb_elastic_table t = { S, 2 };
	struct hb_error err = { 0 };
	int alloc[1];

	(void)state;
	assert_int_equal(hb_elastic_optimize(&t, 1, 4, alloc, NULL, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "speedup[2]"));
	S[2] = 0;
	assert_int_equal(hb_elastic_optimize(&t, 1, 4, alloc, NULL, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	S[2] = INFINITY;
	assert_int_equal(hb_elastic_optimize(&t, 1, 4, alloc, NULL, NULL, &err), -1);
	S[2] = 1.5;
	hb_error_clear(&err);
	assert_int_equal(hb_elastic_optimize(&t, 1, -1, alloc, NULL, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "'-1'"));
}

/* The incremental table: push/pop leaves the same answer as a fresh solve. */
static void test_dp_push_pop(void **state)
{
	const double a[] = { NINF, 1.0, 1.9, 2.7 }, b[] = { NINF, 1.0, 1.2 };
	const double c[] = { NINF, NINF, NINF, 3.0 };
	struct hb_elastic_table ta = { a, 3 }, tb = { b, 2 }, tc = { c, 3 };
	struct hb_elastic_dp dp;
	struct hb_error err = { 0 };
	int alloc[3];

	(void)state;
	assert_int_equal(hb_elastic_dp_init(&dp, 4, &err), 0);
	assert_true(hb_elastic_dp_feasible(&dp));
	assert_double_equal(hb_elastic_dp_value(&dp), 0, 0);
	assert_int_equal(hb_elastic_dp_push(&dp, &ta, &err), 0);
	assert_int_equal(hb_elastic_dp_push(&dp, &tb, &err), 0);
	assert_double_equal(hb_elastic_dp_value(&dp), 3.7, 1e-12);   /* a = 3, b = 1 */
	assert_int_equal(hb_elastic_dp_push(&dp, &tc, &err), 0);
	assert_false(hb_elastic_dp_feasible(&dp));                   /* 1 + 1 + 3 > 4 */
	assert_int_equal(hb_elastic_dp_solution(&dp, alloc, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	hb_elastic_dp_pop(&dp);
	assert_int_equal(hb_elastic_dp_solution(&dp, alloc, &err), 0);
	assert_int_equal(alloc[0], 3);
	assert_int_equal(alloc[1], 1);
	/* more rows than the initial capacity */
	for (int i = 0; i < 20; i++)
		assert_int_equal(hb_elastic_dp_push(&dp, &tb, &err), 0);
	assert_false(hb_elastic_dp_feasible(&dp));
	for (int i = 0; i < 20; i++)
		hb_elastic_dp_pop(&dp);
	assert_double_equal(hb_elastic_dp_value(&dp), 3.7, 1e-12);
	hb_elastic_dp_free(&dp);
}

/* ------------------------------------------------------------------------ */
/* Admission (corrected Fig. 4)                                              */
/* ------------------------------------------------------------------------ */

static void test_admission_head_of_line(void **state)
{
	const double s1[] = { NINF, 1, 1.8, 2.4 };
	const double needs4[] = { NINF, NINF, NINF, NINF, 3.5 };
	struct hb_elastic_table running[2] = { { s1, 3 }, { s1, 3 } };
	struct hb_elastic_table arrived[3] = { { s1, 3 }, { needs4, 4 }, { s1, 3 } };
	struct hb_elastic_table all[3] = { { s1, 3 }, { s1, 3 }, { s1, 3 } };
	struct hb_error err = { 0 };
	int alloc[5], want[3], admitted = -1, idle = -1, widle;
	double v;

	(void)state;
	/* K = 6: arrived[0] fits, arrived[1] needs 4 more, arrived[2] would fit
	 * but FIFO stops at the first job that does not */
	assert_int_equal(hb_elastic_admit(running, 2, arrived, 3, 6, alloc, &admitted, &idle, &err), 0);
	assert_int_equal(admitted, 1);
	assert_int_equal(hb_elastic_optimize(all, 3, 6, want, &v, &widle, &err), 0);
	for (int j = 0; j < 3; j++)
		assert_int_equal(alloc[j], want[j]);
	assert_int_equal(idle, widle);
	/* K = 8: 2 + 1 running + needs4 = 1+1+1+4 = 7, then arrived[2] still fits */
	assert_int_equal(hb_elastic_admit(running, 2, arrived, 3, 8, alloc, &admitted, &idle, &err), 0);
	assert_int_equal(admitted, 3);
	assert_int_equal(alloc[3], 4);
	/* the running jobs alone no longer fit */
	hb_error_clear(&err);
	assert_int_equal(hb_elastic_admit(running, 2, arrived, 3, 1, alloc, &admitted, &idle, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "running jobs no longer fit"));
}

/* Admission equals re-solving every prefix from scratch (the printed Fig. 4
 * with its errata fixed) on random instances. */
static void test_admission_matches_prefix_solves(void **state)
{
	struct hb_rng r;

	(void)state;
	hb_rng_seed(&r, 77, HB_STREAM_DEFAULT);
	for (int inst = 0; inst < 300; inst++) {
		double S[MAXJ][16];
		struct hb_elastic_table t[MAXJ];
		struct hb_error err = { 0 };
		int J, K, nrun, alloc[MAXJ], want[MAXJ], admitted, idle, widle, n;
		double v;

		random_instance(&r, 0, S, t, &J, &K);
		nrun = J > 0 ? (int)hb_rng_below(&r, (uint64_t)J) : 0;
		/* keep the running set feasible, as it is in the autoscaler */
		while (nrun > 0 && hb_elastic_optimize(t, nrun, K, want, &v, &widle, &err) != 0)
			nrun--;
		assert_int_equal(hb_elastic_admit(t, nrun, t + nrun, J - nrun, K, alloc, &admitted,
						  &idle, &err), 0);
		n = 0;
		while (n < J - nrun && hb_elastic_optimize(t, nrun + n + 1, K, want, &v, &widle, &err) == 0)
			n++;
		assert_int_equal(admitted, n);
		assert_int_equal(hb_elastic_optimize(t, nrun + n, K, want, &v, &widle, &err), 0);
		for (int j = 0; j < nrun + n; j++)
			assert_int_equal(alloc[j], want[j]);
		assert_int_equal(idle, widle);
	}
}

/* ------------------------------------------------------------------------ */
/* Job Scalability Analyser                                                  */
/* ------------------------------------------------------------------------ */

static void test_proc_and_comm_interpolation(void **state)
{
	const double bs[] = { 8, 16, 32 }, t[] = { 0.10, 0.14, 0.30 };
	const double bs2[] = { 8, 16 }, t2[] = { 0.10, 0.30 };  /* negative intercept */
	const double one_b[] = { 10 }, one_t[] = { 0.5 };
	struct hb_elastic_proc p = { bs, t, 3 }, p2 = { bs2, t2, 2 }, p1 = { one_b, one_t, 1 };
	const double params[] = { 10e6, 50e6, 100e6 };
	double ct[3 * 3];
	struct hb_elastic_comm comm = { params, 3, ct, 3 };
	struct hb_error err = { 0 };
	double x;

	(void)state;
	assert_int_equal(hb_elastic_proc_time(&p, 12, &x, &err), 0);
	assert_double_equal(x, 0.12, 1e-12);                    /* linear between knots */
	assert_int_equal(hb_elastic_proc_time(&p, 24, &x, &err), 0);
	assert_double_equal(x, 0.22, 1e-12);
	assert_int_equal(hb_elastic_proc_time(&p, 4, &x, &err), 0);
	assert_double_equal(x, 0.08, 1e-12);                    /* first segment: 0.1 - 4 * 0.005 */
	assert_int_equal(hb_elastic_proc_time(&p2, 4, &x, &err), 0);
	assert_double_equal(x, 0.05, 1e-12);                    /* affine 0.0 < per-sample 0.05 */
	assert_int_equal(hb_elastic_proc_time(&p1, 4, &x, &err), 0);
	assert_double_equal(x, 0.2, 1e-12);                     /* one point: ∝ batch */
	assert_int_equal(hb_elastic_proc_time(&p, 33, &x, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);

	/* affine AllReduce data t = 1e-3 (k-1) + 2e-9 (k-1) p: interpolation and
	 * extrapolation both reproduce it */
	for (int k = 1; k <= 3; k++)
		for (int i = 0; i < 3; i++)
			ct[(k - 1) * 3 + i] = (k - 1) * (1e-3 + 2e-9 * params[i]);
	assert_int_equal(hb_elastic_comm_time(&comm, 24e6, 2, &x, &err), 0);
	assert_double_equal(x, 1e-3 + 2e-9 * 24e6, 1e-12);
	assert_int_equal(hb_elastic_comm_time(&comm, 5e6, 3, &x, &err), 0);
	assert_double_equal(x, 2 * (1e-3 + 2e-9 * 5e6), 1e-12);
	assert_int_equal(hb_elastic_comm_time(&comm, 150e6, 3, &x, &err), 0);
	assert_double_equal(x, 2 * (1e-3 + 2e-9 * 150e6), 1e-12);
	assert_int_equal(hb_elastic_comm_time(&comm, 150e6, 1, &x, &err), 0);
	assert_double_equal(x, 0, 0);
	/* data falling past the last size would extrapolate below zero: clamped */
	ct[4] = 0.5;
	ct[5] = 0.1;
	assert_int_equal(hb_elastic_comm_time(&comm, 105e6, 2, &x, &err), 0);
	assert_double_equal(x, 0.1 - 0.4 / 50e6 * 5e6, 1e-12);
	assert_int_equal(hb_elastic_comm_time(&comm, 300e6, 2, &x, &err), 0);
	assert_double_equal(x, 0.0, 0);
	assert_int_equal(hb_elastic_comm_time(&comm, 24e6, 4, &x, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

/* Table II (Category 1 on 2 GPUs) and the IV-D example, with a profile built
 * to reproduce them.  Assumptions (the paper publishes no times): per-GPU
 * limit c = 32 (notes §6 inference), t_proc(32) = 1 s, AllReduce on 1 GPU
 * free, so T(c, 1) = 32; then Table II fixes t_comm(2) = 2/1.66 - 1 and
 * t_proc(g) = g / (16 · 𝒯(2g, 2)) - t_comm(2).  t_comm(3), t_comm(4) are free
 * choices; t_comm(5) = 5/2.08 - 1 makes ES-DP's 5-GPU speedup 1.6 x the
 * Min-BS baseline's 1.3 (IV-D: "1.6x faster"). */
static const double t2_bs[] = { 8, 11, 16, 22, 32 };
static const double t2_factor[] = { 0.86, 1.06, 1.3, 1.45, 1.66 };

struct cat1 {
	double proc_t[5];
	double params[2];
	double comm_t[5 * 2];
	struct hb_elastic_comm comm;
	struct hb_elastic_job job;
};

static void cat1_build(struct cat1 *c)
{
	const double tc[5] = { 0, 2 / 1.66 - 1, 0.6, 1.0, 5 / 2.08 - 1 };

	for (int i = 0; i < 5; i++)
		c->proc_t[i] = t2_bs[i] / (16 * t2_factor[i]) - tc[1];
	c->params[0] = 10e6;
	c->params[1] = 100e6;
	for (int k = 0; k < 5; k++)
		c->comm_t[2 * k] = c->comm_t[2 * k + 1] = tc[k];
	c->comm = (struct hb_elastic_comm){ c->params, 2, c->comm_t, 5 };
	c->job = (struct hb_elastic_job){
		.proc = { t2_bs, c->proc_t, 5 },
		.params = 24e6,          /* Table I: resnet50, 24M weights */
		.per_gpu_max = 32,
		.b_min = 32, .b_max = 256, /* Table I Category 1 */
		.k_max = 5,
	};
}

static void test_jsa_table2_and_iv_d(void **state)
{
	struct cat1 c;
	struct hb_elastic_scaling es, base;
	struct hb_elastic_table tes, tbase;
	struct hb_error err = { 0 };
	const double want_es[] = { 0, 1.0, 1.66, 1.875, 2.0, 2.08 };
	int alloc, idle;
	double v, rate, rate1;

	(void)state;
	cat1_build(&c);
	assert_int_equal(hb_elastic_rate(&c.job, &c.comm, 32, 1, &rate1, NULL, &err), 0);
	assert_double_equal(rate1, 32, 1e-12);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(hb_elastic_rate(&c.job, &c.comm, 2 * (long)t2_bs[i], 2, &rate, NULL,
						 &err), 0);
		assert_double_equal(rate / rate1, t2_factor[i], 1e-12);   /* Table II */
	}

	/* ES-DP: elastic batch; one job, 5 P100s */
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &es, &err), 0);
	assert_double_equal(es.base_rate, 32, 1e-12);
	for (int k = 1; k <= 5; k++) {
		assert_int_equal(es.batch[k], 32 * k);             /* 32 per GPU, capped by b_max */
		assert_double_equal(es.speedup[k], want_es[k], 1e-12);
	}
	tes = (struct hb_elastic_table){ es.speedup, es.k_max };
	assert_int_equal(hb_elastic_optimize(&tes, 1, 5, &alloc, &v, &idle, &err), 0);
	assert_int_equal(alloc, 5);
	assert_int_equal(es.batch[alloc], 160);                /* IV-D: batch 160 on 5 GPUs */

	/* Min-BS baseline: total batch fixed at 32 */
	c.job.b_fixed = 32;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &base, &err), 0);
	assert_double_equal(base.speedup[1], 1.0, 1e-12);
	assert_double_equal(base.speedup[2], 1.3, 1e-12);      /* Table II at 16 per GPU */
	for (int k = 1; k <= 5; k++)
		assert_int_equal(base.batch[k], 32);
	tbase = (struct hb_elastic_table){ base.speedup, base.k_max };
	assert_int_equal(hb_elastic_optimize(&tbase, 1, 5, &alloc, &v, &idle, &err), 0);
	assert_int_equal(alloc, 2);                            /* IV-D: batch 32 on 2 GPUs */
	assert_int_equal(idle, 3);                             /* extra GPUs would slow it */
	assert_double_equal(es.speedup[5] / base.speedup[2], 1.6, 1e-9);  /* "1.6x faster" */

	hb_elastic_scaling_free(&es);
	hb_elastic_scaling_free(&base);
}

static void test_jsa_memory_and_fixed_k(void **state)
{
	struct cat1 c;
	struct hb_elastic_scaling s;
	struct hb_error err = { 0 };

	(void)state;
	cat1_build(&c);
	/* b_min = 100 with 32 per GPU: 1..3 GPUs cannot hold it */
	c.job.b_min = 100;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), 0);
	for (int k = 1; k <= 3; k++) {
		assert_true(s.speedup[k] == NINF);
		assert_int_equal(s.batch[k], 0);
		assert_true(isinf(s.iter_s[k]));
	}
	assert_int_equal(s.batch[4], 128);
	assert_true(s.speedup[4] > 0);
	hb_elastic_scaling_free(&s);
	/* Category 4 style: only k = 4 */
	c.job.b_min = 128;
	c.job.b_max = 128;
	c.job.k_only = 4;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), 0);
	for (int k = 1; k <= 5; k++)
		assert_true((s.speedup[k] != NINF) == (k == 4));
	hb_elastic_scaling_free(&s);
	/* a total batch smaller than the GPU count cannot use every GPU */
	c.job.k_only = 0;
	c.job.b_min = 1;
	c.job.b_max = 3;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), 0);
	assert_int_equal(s.batch[3], 3);
	assert_true(s.speedup[4] == NINF && s.speedup[5] == NINF);
	hb_elastic_scaling_free(&s);
}

static void test_jsa_rejects_bad_input(void **state)
{
	struct cat1 c;
	struct hb_elastic_scaling s;
	struct hb_error err = { 0 };

	(void)state;
	cat1_build(&c);
	c.job.per_gpu_max = 40;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "per_gpu_max"));
	assert_null(s.speedup);
	c.job.per_gpu_max = 0;                 /* default: last profiled point, 32 */
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), 0);
	assert_int_equal(s.batch[5], 160);
	hb_elastic_scaling_free(&s);
	c.job.k_max = 6;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), -1);
	assert_non_null(strstr(err.msg, "k_max"));
	c.job.k_max = 5;
	c.job.b_max = 16;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), -1);
	assert_non_null(strstr(err.msg, "b_min"));
	c.job.b_max = 256;
	c.proc_t[2] = -1;
	assert_int_equal(hb_elastic_jsa(&c.job, &c.comm, &s, &err), -1);
	assert_non_null(strstr(err.msg, "iter_s[2]"));
}

/* hb_elastic_jsa's O(c) scan equals Eq. 2 searched over every integer total
 * batch through hb_elastic_rate, with ties to the smallest b. */
static void test_jsa_equals_bruteforce_eq2(void **state)
{
	struct hb_rng r;
	int feasible = 0, infeasible = 0;

	(void)state;
	hb_rng_seed(&r, 5, HB_STREAM_DEFAULT);
	for (int inst = 0; inst < 300; inst++) {
		double bs[5], pt[5], params[3], ct[8 * 3];
		struct hb_elastic_comm comm;
		struct hb_elastic_job job = { 0 };
		struct hb_elastic_scaling s;
		struct hb_error err = { 0 };
		int n = 1 + (int)hb_rng_below(&r, 5), np = 1 + (int)hb_rng_below(&r, 3);
		int kmax = 1 + (int)hb_rng_below(&r, 8);
		double base;

		bs[0] = 1 + (double)hb_rng_below(&r, 8);
		for (int i = 0; i < n; i++) {
			if (i > 0)
				bs[i] = bs[i - 1] + 1 + (double)hb_rng_below(&r, 10);
			pt[i] = 0.01 + hb_rng_uniform(&r);
		}
		params[0] = 1e6 + 1e7 * hb_rng_uniform(&r);
		for (int i = 1; i < np; i++)
			params[i] = params[i - 1] + 1e6 + 5e7 * hb_rng_uniform(&r);
		for (int i = 0; i < kmax * np; i++)
			ct[i] = 0.5 * hb_rng_uniform(&r);
		comm = (struct hb_elastic_comm){ params, np, ct, kmax };
		job.proc = (struct hb_elastic_proc){ bs, pt, n };
		job.params = 1e5 + 2e8 * hb_rng_uniform(&r);
		job.per_gpu_max = 1 + (long)hb_rng_below(&r, (uint64_t)bs[n - 1]);
		job.b_min = 1 + (long)hb_rng_below(&r, 60);
		job.b_max = job.b_min + (long)hb_rng_below(&r, 80);
		job.k_max = 1 + (int)hb_rng_below(&r, (uint64_t)kmax);
		if (hb_rng_uniform(&r) < 0.2)
			job.k_only = 1 + (int)hb_rng_below(&r, (uint64_t)job.k_max);
		if (hb_rng_uniform(&r) < 0.25)
			job.b_fixed = 1 + (long)hb_rng_below(&r, 100);

		assert_int_equal(hb_elastic_jsa(&job, &comm, &s, &err), 0);
		assert_int_equal(hb_elastic_rate(&job, &comm, job.per_gpu_max, 1, &base, NULL, &err), 0);
		assert_double_equal(s.base_rate, base, 1e-12 * base);
		for (int k = 1; k <= job.k_max; k++) {
			long lo = job.b_fixed ? job.b_fixed : job.b_min;
			long hi = job.b_fixed ? job.b_fixed : job.b_max, bb = 0;
			double best = NINF, it = INFINITY;

			if (!job.k_only || job.k_only == k)
				for (long b = lo; b <= hi; b++) {
					double rate, iter;

					assert_int_equal(hb_elastic_rate(&job, &comm, b, k, &rate, &iter,
									 &err), 0);
					if (rate > best) {
						best = rate;
						bb = b;
						it = iter;
					}
				}
			assert_int_equal(s.batch[k], bb);
			if (bb == 0) {
				assert_true(s.speedup[k] == NINF);
				infeasible++;
			} else {
				assert_double_equal(s.speedup[k], best / base, 1e-12 * best / base);
				assert_double_equal(s.iter_s[k], it, 1e-12 * it);
				feasible++;
			}
		}
		hb_elastic_scaling_free(&s);
	}
	assert_true(feasible > 100);
	assert_true(infeasible > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dp_equals_enumeration_real),
		cmocka_unit_test(test_dp_equals_enumeration_ties),
		cmocka_unit_test(test_identical_jobs_tie_goes_to_first),
		cmocka_unit_test(test_dp_leaves_gpus_idle),
		cmocka_unit_test(test_dp_edge_cases),
		cmocka_unit_test(test_dp_rejects_bad_tables),
		cmocka_unit_test(test_dp_push_pop),
		cmocka_unit_test(test_admission_head_of_line),
		cmocka_unit_test(test_admission_matches_prefix_solves),
		cmocka_unit_test(test_proc_and_comm_interpolation),
		cmocka_unit_test(test_jsa_table2_and_iv_d),
		cmocka_unit_test(test_jsa_memory_and_fixed_k),
		cmocka_unit_test(test_jsa_rejects_bad_input),
		cmocka_unit_test(test_jsa_equals_bruteforce_eq2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
