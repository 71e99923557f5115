/* Unit tests for solver/perfmodel and solver/ddp: the JABAS §2.4 worked
 * example, the OWS/SWS rule, table mode, data-time fallback, all-reduce
 * scope selection, the equal-batch DDP baseline and input errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ddp.h"
#include "perfmodel.h"
#include "quickstart_fixture.h"
#include "strutil.h"

#define MIB 1048576.0

static void assert_rel(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want)) {
		print_error("got %.6f, want %.6f (rel. tolerance %.3f)\n", got, want, rel);
		fail();
	}
}

static void assert_abs(double got, double want, double tol)
{
	if (fabs(got - want) > tol) {
		print_error("got %.6f, want %.6f (abs. tolerance %g)\n", got, want, tol);
		fail();
	}
}

static int setup(void **state)
{
	static struct hb_perf p;
	struct hb_error err = { 0 };

	if (qs_build(&p, HB_SYNC_AUTO, &err) != 0) {
		print_error("fixture: %s\n", err.msg);
		return -1;
	}
	*state = &p;
	return 0;
}

static int teardown(void **state)
{
	hb_perf_free(*state);
	return 0;
}

/* notes §2.4: fitted normalised throughput V100 0.124 ln n + 1.0,
 * P100 0.078 ln n + 1.01 (tolerance 0.002). */
static void test_fit_coefficients(void **state)
{
	const struct hb_perf *p = *state;
	const struct hb_perf_lbs *v = hb_perf_find_lbs(p, QS_V100, 32), *q = hb_perf_find_lbs(p, QS_P100, 32);

	assert_non_null(v);
	assert_non_null(q);
	assert_false(v->table);
	assert_false(q->table);
	assert_abs(v->a, 0.124, 0.002);
	assert_abs(v->b, 1.0, 0.002);
	assert_abs(q->a, 0.078, 0.002);
	assert_abs(q->b, 1.01, 0.002);
	/* thp_1 rounded to 0.01 samples/s: 32 / 98.70 ms. */
	assert_abs(v->thp1, 324.21, 1e-9);
	/* zeta, update and copy come from the n_max profile (n = 3). */
	assert_abs(v->zeta, 87.01 / (87.01 + 173.58), 1e-12);
	assert_abs(v->update_s, 4.55e-3, 1e-12);
	assert_abs(v->copy1_s, 4.45e-3 / 2, 1e-12);
	assert_int_equal(v->n_cap, 3);
	assert_int_equal(q->n_cap, 4);
}

/* notes §2.4: per-GPU iteration times on one 4-GPU node with OWS, within 2 %. */
static void test_worked_example_times(void **state)
{
	const struct hb_perf *p = *state;
	static const double v_want[] = { 0.113, 0.207, 0.296 };
	static const double p_want[] = { 0.169, 0.319, 0.464, 0.605 };
	int v_only[2] = { 4, 0 }, p_only[2] = { 0, 4 };
	struct hb_error err = { 0 };
	double t;

	assert_int_equal(p->sync, HB_SYNC_OWS);
	assert_abs(p->tau, 9.2 / (7.81 + 30.04 + 25.04 + 25.25 + 9.2), 1e-12);
	for (int n = 1; n <= 3; n++) {
		assert_int_equal(hb_perf_iter_time(p, v_only, QS_V100, 32, n, 0, &t, &err), 0);
		assert_rel(t, v_want[n - 1], 0.02);
	}
	for (int n = 1; n <= 4; n++) {
		assert_int_equal(hb_perf_iter_time(p, p_only, QS_P100, 32, n, 0, &t, &err), 0);
		assert_rel(t, p_want[n - 1], 0.02);
	}
	/* Beyond n_max the model refuses. */
	assert_int_equal(hb_perf_iter_time(p, v_only, QS_V100, 32, 4, 0, &t, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

/* The formula term by term for V100, n = 2, n_GA = 3 on one node. */
static void test_formula_terms(void **state)
{
	const struct hb_perf *p = *state;
	const struct hb_perf_lbs *l = hb_perf_find_lbs(p, QS_V100, 32);
	int alloc[2] = { 4, 0 };
	struct hb_error err = { 0 };
	double sum_mb = 7.81 + 30.04 + 25.04 + 25.25, ov = 0.0, last, fb, want, t;
	static const double mb[] = { 7.81, 30.04, 25.04, 25.25 };

	for (int i = 0; i < 4; i++)
		ov += (1.417 * (mb[i] * MIB * 3.0 / 15.75e9 * 1000.0) + 1.209) / 1000.0;
	last = (1.417 * (9.2 * MIB * 3.0 / 15.75e9 * 1000.0) + 1.209) / 1000.0;
	(void)sum_mb;
	/* T_fb rounded to 0.1 ms as the artifact. */
	fb = round(32.0 * 2 / ((l->a * log(2.0) + l->b) * l->thp1) * 1e4) / 1e4;
	assert_abs(hb_perf_fb_s(p, l, 2), fb, 1e-12);
	/* data(2) is not measured: data(1) x 2. */
	assert_abs(hb_perf_data_s(l, 2), 2 * 4.06e-3, 1e-12);
	want = 2 * 4.06e-3 + 2 * 6.29e-3 + (2 * 4.06e-3 + fb) * 3 + fb * l->zeta +
	       fmax(fb * (1 - l->zeta), ov) + last + p->tau * (4.55e-3 + 4.45e-3 / 2 * 1);
	assert_int_equal(hb_perf_iter_time(p, alloc, QS_V100, 32, 2, 3, &t, &err), 0);
	assert_abs(t, want, 1e-12);
}

/* Largest measured n < 3: the measured normalised throughput is used. */
static void test_table_mode(void **state)
{
	const struct hb_perf *p = *state;
	const struct hb_perf_lbs *l = hb_perf_find_lbs(p, QS_V100, 64);
	double thp1 = round(64 / (62.66e-3 + 124.26e-3) * 100) / 100;
	double n2 = round(128 / (117.12e-3 + 231.63e-3) / thp1 * 1000) / 1000;

	assert_non_null(l);
	assert_true(l->table);
	assert_int_equal(l->n_cap, 2);
	assert_abs(hb_perf_norm_thp(l, 1), 1.0, 1e-12);
	assert_abs(hb_perf_norm_thp(l, 2), n2, 1e-12);
	assert_abs(hb_perf_fb_s(p, l, 2), round(128 / (n2 * thp1) * 1e4) / 1e4, 1e-12);
	/* Measured data time at n = 2 is used as is. */
	assert_abs(hb_perf_data_s(l, 2), 16.69e-3, 1e-12);
}

/* Intra model inside one node, inter model (each node's own fit) with N_G
 * = all GPUs as soon as the allocation spans two nodes. */
static void test_comm_scope(void **state)
{
	const struct hb_perf *p = *state;
	int one[2] = { 4, 0 }, two[2] = { 4, 2 }, single[2] = { 1, 0 };
	struct hb_perf_comm c;
	struct hb_error err = { 0 };
	double x;

	assert_int_equal(hb_perf_comm_eval(p, one, QS_V100, &c, &err), 0);
	x = 9.2 * MIB * 4.0 * 3 / 4 / 15.75e9 * 1000.0;
	assert_abs(c.last_s, (1.417 * x + 1.209) / 1000.0, 1e-12);
	assert_int_equal(hb_perf_comm_eval(p, two, QS_V100, &c, &err), 0);
	x = 9.2 * MIB * 4.0 * 5 / 6 / 7e9 * 1000.0;
	assert_abs(c.last_s, (0.716 * x + 3.948) / 1000.0, 1e-12);
	/* One GPU: nothing to all-reduce. */
	assert_int_equal(hb_perf_comm_eval(p, single, QS_V100, &c, &err), 0);
	assert_abs(c.overlap_s + c.last_s, 0.0, 0.0);
}

/* ZeRO-Offload (Ren et al., USENIX ATC '21, §4, the multi-GPU schedule)
 * partitions gradients and optimizer states over the data-parallel ranks:
 * each rank's CPU Adam updates 1/N_G of the parameters, so each GPU's
 * optimizer step is the one-GPU profile's update / N_G, and everything else
 * of the iteration stays (perfmodel.h).  On 1, 4 and 8 GPUs, SWS (tau = 1,
 * the step fully exposed), with and without VSW copies: the offloaded
 * iteration is the plain one less update (1 - 1/N_G); one GPU pays it
 * whole, and a caller's { 0, 0, 0 } communication means the whole step. */
static void test_zero_offload_partitioned_update(void **state)
{
	struct hb_perf p;
	struct hb_error err = { 0 };
	static const int allocs[3][2] = { { 1, 0 }, { 4, 0 }, { 4, 4 } };
	static const int ng[3] = { 1, 4, 8 };

	(void)state;
	assert_int_equal(qs_build(&p, HB_SYNC_SWS, &err), 0);
	for (int a = 0; a < 3; a++) {
		for (int n = 1; n <= 3; n += 2) {
			const struct hb_perf_lbs *l = hb_perf_find_lbs(&p, QS_V100, 32);
			struct hb_perf_comm c;
			struct hb_perf_coef k;
			double plain, off;

			assert_non_null(l);
			p.zero_offload = 0;
			assert_int_equal(hb_perf_iter_time(&p, allocs[a], QS_V100, 32, n, 1, &plain, &err), 0);
			assert_int_equal(hb_perf_comm_eval(&p, allocs[a], QS_V100, &c, &err), 0);
			assert_int_equal(c.zero_ranks, 0);
			p.zero_offload = 1;
			assert_int_equal(hb_perf_iter_time(&p, allocs[a], QS_V100, 32, n, 1, &off, &err), 0);
			assert_int_equal(hb_perf_comm_eval(&p, allocs[a], QS_V100, &c, &err), 0);
			assert_int_equal(c.zero_ranks, ng[a]);
			assert_abs(off, plain - l->update_s * (1.0 - 1.0 / ng[a]), 1e-12);
			/* no communication given: the whole step */
			c = (struct hb_perf_comm){ 0.0, 0.0, 0 };
			assert_int_equal(hb_perf_coef_eval(&p, l, &c, n, p.tau, &k, &err), 0);
			assert_true(k.base_s >= l->update_s);
		}
	}
	hb_perf_free(&p);
}

/* The artifact's OWS/SWS rule: int(mean of non-last buckets, MiB) / 25 > 1.5. */
static void test_sync_rule(void **state)
{
	double a[] = { 38.9 * MIB, 38.9 * MIB, 1 * MIB };  /* int 38 -> 1.52: SWS */
	double b[] = { 37.9 * MIB, 37.9 * MIB, 1 * MIB };  /* int 37 -> 1.48: OWS */
	double c[] = { 7.81 * MIB, 30.04 * MIB, 25.04 * MIB, 25.25 * MIB, 9.2 * MIB }; /* 22 -> 0.88: OWS */
	double d[] = { 400 * MIB };                         /* one bucket: nothing overlaps */

	(void)state;
	assert_int_equal(hb_perf_select_sync(a, 3), HB_SYNC_SWS);
	assert_int_equal(hb_perf_select_sync(b, 3), HB_SYNC_OWS);
	assert_int_equal(hb_perf_select_sync(c, 5), HB_SYNC_OWS);
	assert_int_equal(hb_perf_select_sync(d, 1), HB_SYNC_OWS);
}

/* SWS forced: tau = 1, so the optimizer and copies are fully exposed. */
static void test_sws_tau(void **state)
{
	struct hb_perf p;
	struct hb_error err = { 0 };
	int alloc[2] = { 4, 0 };
	double ows, sws;

	(void)state;
	assert_int_equal(qs_build(&p, HB_SYNC_SWS, &err), 0);
	assert_int_equal(p.sync, HB_SYNC_SWS);
	assert_abs(p.tau, 1.0, 0.0);
	assert_int_equal(hb_perf_iter_time(&p, alloc, QS_V100, 32, 3, 0, &sws, &err), 0);
	hb_perf_free(&p);
	assert_int_equal(qs_build(&p, HB_SYNC_OWS, &err), 0);
	assert_int_equal(hb_perf_iter_time(&p, alloc, QS_V100, 32, 3, 0, &ows, &err), 0);
	hb_perf_free(&p);
	assert_abs(sws - ows, (1.0 - 9.2 / 97.34) * (4.55e-3 + 4.45e-3), 1e-9);
}

static void test_candidate_lbs(void **state)
{
	const struct hb_perf *p = *state;
	int both[2] = { 4, 4 }, p_only[2] = { 0, 2 }, *v, n;
	struct hb_error err = { 0 };

	assert_int_equal(hb_perf_alloc_lbs(p, both, &v, &n, &err), 0);
	assert_int_equal(n, 4); /* 32..128: V100 cannot run 160 */
	assert_int_equal(v[3], 128);
	free(v);
	assert_int_equal(hb_perf_alloc_lbs(p, p_only, &v, &n, &err), 0);
	assert_int_equal(n, 5);
	assert_int_equal(v[4], 160);
	free(v);
}

static void test_input_errors(void **state)
{
	struct hb_perf p;
	struct hb_error err = { 0 };
	struct hb_perf_point no_one = { 2, 0.1, 0.2, 0.01, 0.005, 0.001, 0.0 };
	struct hb_perf_point bad = { 1, -0.1, 0.2, 0.01, 0.005, 0.001, 0.0 };
	struct hb_perf_ar intra = { 1, 1.4, 1.2, 15.75e9, "pcie3-x16" };
	double bytes = 10 * MIB, t;
	int g, alloc[2] = { 2, 2 };

	(void)state;
	hb_perf_init(&p, "toy", 8);
	assert_int_equal(hb_perf_add_gpu(&p, "t4", &g, &err), 0);
	assert_int_equal(hb_perf_add_lbs(&p, g, 8, 2, &bad, 1, &err), -1);
	assert_non_null(strstr(err.msg, "n_vsw 1"));
	assert_int_equal(hb_perf_add_lbs(&p, g, 8, 2, &no_one, 1, &err), 0);
	assert_int_equal(hb_perf_set_buckets(&p, &bytes, 1, &err), 0);
	assert_int_equal(hb_perf_prepare(&p, &err), -1);
	assert_non_null(strstr(err.msg, "n_vsw = 1"));
	hb_perf_free(&p);

	/* A missing inter-node fit is an error only when an allocation needs it,
	 * and the message names the node and the link. */
	assert_int_equal(qs_build(&p, HB_SYNC_AUTO, &err), 0);
	p.nodes[1].inter.have = 0;
	hb_strlcpy(p.nodes[1].inter.link, "ib-100g", sizeof(p.nodes[1].inter.link));
	p.nodes[1].intra = intra;
	assert_int_equal(hb_perf_iter_time(&p, alloc, QS_P100, 32, 1, 0, &t, &err), -1);
	assert_non_null(strstr(err.msg, "node1"));
	assert_non_null(strstr(err.msg, "ib-100g"));
	alloc[0] = 0;
	assert_int_equal(hb_perf_iter_time(&p, alloc, QS_P100, 32, 1, 0, &t, &err), 0);
	hb_perf_free(&p);
}

/* DDP baseline: equal B_L, fewest GA steps, slowest GPU sets the pace. */
static void test_ddp(void **state)
{
	const struct hb_perf *p = *state;
	int both[2] = { 4, 4 };
	struct hb_ddp_result r;
	struct hb_perf_comm c;
	struct hb_perf_coef k;
	struct hb_error err = { 0 };
	double tv, tp;

	assert_int_equal(hb_ddp_plan(p, both, 256, &r, &err), 0);
	assert_true(r.found);
	assert_int_equal(r.local_bs, 32);
	assert_int_equal(r.ga_steps, 0);
	assert_int_equal(r.global_bs, 256);
	assert_int_equal(r.slowest_node, QS_P100);
	/* The P100's line with one VSW and tau = 1, inter-node comm at N_G = 8. */
	assert_int_equal(hb_perf_comm_eval(p, both, QS_P100, &c, &err), 0);
	assert_int_equal(hb_perf_coef_eval(p, hb_perf_find_lbs(p, QS_P100, 32), &c, 1, 1.0, &k, &err), 0);
	assert_abs(r.iter_s, hb_perf_iter_s(&k, 0), 1e-15);
	assert_abs(r.throughput, 256 / r.iter_s, 1e-9);

	/* 4096 on 8 GPUs: B_L <= 128 (the V100's limit), so 4 micro-steps. */
	assert_int_equal(hb_ddp_plan(p, both, 4096, &r, &err), 0);
	assert_int_equal(r.local_bs, 128);
	assert_int_equal(r.ga_steps, 3);
	assert_int_equal(r.global_bs, 4096);
	assert_int_equal(hb_ddp_iter_time(p, both, 128, 3, &tv, NULL, &err), 0);
	assert_abs(r.iter_s, tv, 0.0);

	/* 300: 37.5 per GPU rounds to the nearer candidate, 32. */
	assert_int_equal(hb_ddp_plan(p, both, 300, &r, &err), 0);
	assert_int_equal(r.local_bs, 32);
	assert_int_equal(r.global_bs, 256);

	/* 1100 on 8 GPUs: s = 2, 68.75 -> 64 with one extra GA step. */
	assert_int_equal(hb_ddp_plan(p, both, 1100, &r, &err), 0);
	assert_int_equal(r.local_bs, 64);
	assert_int_equal(r.ga_steps, 1);

	/* P100 alone may use 160. */
	{
		int p_only[2] = { 0, 4 };
		assert_int_equal(hb_ddp_plan(p, p_only, 640, &r, &err), 0);
		assert_int_equal(r.local_bs, 160);
		assert_int_equal(r.ga_steps, 0);
		assert_int_equal(hb_ddp_iter_time(p, p_only, 160, 0, &tp, NULL, &err), 0);
		assert_abs(r.iter_s, tp, 0.0);
	}
	/* Bad input. */
	assert_int_equal(hb_ddp_plan(p, both, 0, &r, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

/* DDP with no local batch fitting every GPU type: found = 0, not an error. */
static void test_ddp_infeasible(void **state)
{
	struct hb_perf p;
	struct hb_error err = { 0 };
	struct hb_ddp_result r;
	int both[2] = { 4, 4 };

	(void)state;
	assert_int_equal(qs_build(&p, HB_SYNC_AUTO, &err), 0);
	p.min_lbs = 160; /* only 160 is a candidate, and the V100 cannot run it */
	assert_int_equal(hb_ddp_plan(&p, both, 2048, &r, &err), 0);
	assert_false(r.found);
	assert_non_null(strstr(r.why, "minB_L 160"));
	hb_perf_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_coefficients),
		cmocka_unit_test(test_worked_example_times),
		cmocka_unit_test(test_formula_terms),
		cmocka_unit_test(test_table_mode),
		cmocka_unit_test(test_comm_scope),
		cmocka_unit_test(test_sync_rule),
		cmocka_unit_test(test_zero_offload_partitioned_update),
		cmocka_unit_test(test_sws_tau),
		cmocka_unit_test(test_candidate_lbs),
		cmocka_unit_test(test_input_errors),
		cmocka_unit_test(test_ddp),
		cmocka_unit_test(test_ddp_infeasible),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
