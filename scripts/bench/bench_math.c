/*
 * bench_math.c: the math-core timing table (issue "Math core", item 9).
 *
 * Rows, each the median of R repeats (default 21) of one solve or fit:
 *   - JABAS configuration solver at M = 100, 500, 2,592 on the paper's worst
 *     case shape (16 GPUs in four power-capped A6000 nodes, N_H = 8), whole
 *     request over every candidate B_L, cache off (cold) -- the paper's Python
 *     takes 27.58 s at M = 2,592 (notes/jabas.md §3);
 *   - Cannikin OptPerf exact solve at 16, 256 and 4,096 GPUs (mixed regimes);
 *   - a Pollux theta_sys fit on 60 noisy samples (default options: priors,
 *     regularisers, 2 fixed + 4 random starts);
 *   - a GPR fit on 50 points (the artifact's kernel and 10 starts).
 * Benchmarks are not tests: nothing here asserts a time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "goodput.h"
#include "gpr.h"
#include "iidp.h"
#include "optperf.h"
#include "optperf_gen.h"
#include "rng.h"

/* ---- IIDP ---------------------------------------------------------------- */

/* 4 nodes x 4 GPUs of one card at 100/75/50/25 % speed; B_L = 4..32 in steps
 * of 4 with n_max falling from 10 to 1; a BERT-large-sized model (340 M
 * parameters, Adam) in 25 MiB buckets.  Only the shape matters for timing. */
static int build_perf(struct hb_perf *p, struct hb_error *err)
{
	static const double speed[4] = { 1.0, 0.909, 0.794, 0.630 };
	double buckets[52];

	hb_perf_init(p, "bench-bert-large", 4);
	for (int g = 0; g < 4; g++) {
		char name[32];
		struct hb_perf_ar intra = { 1, 1.417, 1.209, 15.75e9, "pcie3-x16" };
		struct hb_perf_ar inter = { 1, 0.716, 3.948, 12.5e9, "ib-100g" };
		int idx;

		snprintf(name, sizeof(name), "gpu%d", g);
		if (hb_perf_add_gpu(p, name, &idx, err) < 0)
			return -1;
		for (int lbs = 4; lbs <= 32; lbs += 4) {
			int nmax = 10 - (lbs - 4) * 9 / 28;
			struct hb_perf_point pts[3];
			int np = 0, ns[3] = { 1, nmax / 2, nmax };

			for (int k = 0; k < 3; k++) {
				double n = ns[k], fb;

				if (n < 1 || (k > 0 && ns[k] == ns[k - 1]))
					continue;
				/* fwd+bwd: 9 ms per sample at full speed, sub-linear gain with VSWs. */
				fb = 0.009 * lbs * n / speed[g] / (1.0 + 0.12 * log(n));
				pts[np++] = (struct hb_perf_point){ .n_vsw = (int)n, .fwd_s = fb / 3, .bwd_s = 2 * fb / 3,
								    .data_s = 0.0005 * n, .update_s = 0.045 / speed[g],
								    .copy_s = 0.004 * (n - 1) };
			}
			if (hb_perf_add_lbs(p, idx, lbs, nmax, pts, np, err) < 0)
				return -1;
		}
		snprintf(name, sizeof(name), "node%d", g);
		if (hb_perf_add_node(p, name, idx, 4, &intra, &inter, err) < 0)
			return -1;
	}
	for (int b = 0; b < 52; b++)
		buckets[b] = 25.0 * 1048576.0;
	if (hb_perf_set_buckets(p, buckets, 52, err) < 0)
		return -1;
	return hb_perf_prepare(p, err);
}

static int bench_iidp(int reps, struct bench_table *t, struct hb_error *err)
{
	static const int ms[3] = { 100, 500, 2592 };
	struct hb_perf perf;
	struct hb_iidp_solver *s;
	int alloc[4] = { 4, 4, 4, 4 };

	if (build_perf(&perf, err) < 0 || hb_iidp_solver_new(&perf, &s, err) < 0)
		return -1;
	hb_iidp_solver_set_cache_limit(s, 0);
	for (int k = 0; k < 3; k++) {
		/* M workers per group at the smallest B_L (4): B_G = 2 M 4. */
		struct hb_iidp_request req = { .alloc = alloc, .global_bs = 8L * ms[k], .m_rule = HB_IIDP_M_ROUND };
		double *sec = calloc((size_t)reps, sizeof(double));
		char label[64], note[128];
		struct hb_iidp_result r;

		for (int i = 0; i < reps; i++) {
			double t0 = bench_now();

			if (hb_iidp_solve(s, &req, &r, err) < 0)
				return -1;
			sec[i] = bench_now() - t0;
			if (i + 1 < reps)
				hb_iidp_result_free(&r);
		}
		snprintf(label, sizeof(label), "IIDP solve, M = %d @ B_L 4", ms[k]);
		snprintf(note, sizeof(note), "16 GPUs, N_H 8, %s; B_L %d, t %.3f s", k == 2 ? "paper: 27.58 s" : "cold",
			 r.local_bs, r.iter_s);
		bench_row(t, label, sec, reps, note);
		hb_iidp_result_free(&r);
		free(sec);
	}
	hb_iidp_solver_free(s);
	hb_perf_free(&perf);
	return 0;
}

/* ---- OptPerf --------------------------------------------------------------- */

static int bench_optperf(int reps, struct bench_table *t, struct hb_error *err)
{
	static const size_t ns[3] = { 16, 256, 4096 };

	for (int k = 0; k < 3; k++) {
		struct hb_rng rng;
		struct hb_optperf_node *nodes = calloc(ns[k], sizeof(*nodes));
		double *batch = calloc(ns[k], sizeof(double)), *sec = calloc((size_t)reps, sizeof(double));
		struct hb_optperf_cluster cl;
		struct hb_optperf_solution sol;
		char label[64], note[128];
		long B;

		hb_rng_seed(&rng, 42, HB_STREAM_DEFAULT);
		optperf_gen_cluster(&rng, ns[k], OPTPERF_GEN_SWITCH, nodes, &cl);
		B = optperf_gen_batch(&rng, &cl);
		for (int i = 0; i < reps; i++) {
			double t0 = bench_now();

			if (hb_optperf_solve(&cl, B, batch, &sol, err) < 0)
				return -1;
			sec[i] = bench_now() - t0;
		}
		snprintf(label, sizeof(label), "OptPerf, %zu GPUs", ns[k]);
		snprintf(note, sizeof(note), "exact O(n log n); regime %s", hb_optperf_regime_name(sol.regime));
		bench_row(t, label, sec, reps, note);
		free(nodes);
		free(batch);
		free(sec);
	}
	return 0;
}

/* ---- Pollux goodput fit ---------------------------------------------------- */

static int bench_goodput(int reps, struct bench_table *t, struct hb_error *err)
{
	const struct hb_goodput_params truth = { 0.05, 0.004, 0.2, 0.01, 0.05, 0.005, 2.0 };
	struct hb_goodput_sample smp[60];
	struct hb_goodput_fit_options opt;
	struct hb_goodput_fit_result res;
	struct hb_rng rng;
	double *sec = calloc((size_t)reps, sizeof(double));
	char note[128];
	int n = 0;

	hb_rng_seed(&rng, 7, HB_STREAM_FIT);
	for (int nodes = 1; nodes <= 4; nodes *= 2)
		for (int gpn = 1; gpn <= 4; gpn++)
			for (int m = 16; m <= 128 && n < 60; m *= 2) {
				int K = nodes * gpn;
				double it = hb_goodput_iter_time(&truth, nodes, K, m, 0);

				smp[n++] = (struct hb_goodput_sample){ nodes, K, m, 0,
								       it * exp(0.02 * hb_rng_normal(&rng)),
								       hb_goodput_compute_time(&truth, m) };
			}
	hb_goodput_fit_options_default(&opt);
	for (int i = 0; i < reps; i++) {
		double t0 = bench_now();

		if (hb_goodput_fit(smp, (size_t)n, &opt, &res, err) < 0)
			return -1;
		sec[i] = bench_now() - t0;
	}
	snprintf(note, sizeof(note), "%d samples, %d starts, RMSLE %.3f", n, res.starts, res.rmsle_iter);
	bench_row(t, "Pollux theta_sys fit", sec, reps, note);
	free(sec);
	return 0;
}

/* ---- GPR --------------------------------------------------------------------- */

static int bench_gpr(int reps, struct bench_table *t, struct hb_error *err)
{
	double *sec = calloc((size_t)reps, sizeof(double));

	for (int i = 0; i < reps; i++)
		if (hb_gpr_bench_fit(50, (uint64_t)i + 1, &sec[i], err) < 0)
			return -1;
	bench_row(t, "GPR fit, 50 points", sec, reps, "periodic kernel, 10 starts (seeds 1..R)");
	free(sec);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 21;
	struct hb_error err = { 0 };
	struct bench_table t;

	if (reps < 1)
		reps = 1;
	bench_table_start(&t, "math core", reps);
	if (bench_iidp(reps, &t, &err) < 0 || bench_optperf(reps, &t, &err) < 0 || bench_goodput(reps, &t, &err) < 0 ||
	    bench_gpr(reps, &t, &err) < 0) {
		fprintf(stderr, "bench_math: %s\n", err.msg);
		return 1;
	}
	return 0;
}
