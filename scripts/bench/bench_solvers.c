/*
 * bench_solvers.c: timing of the JABAS configuration solver (solver/iidp.h),
 * the fast parametric search against the O(N_H M^2) reference DP.
 *
 * Not part of the meson build (benchmarks are not tests).  Build against a
 * configured build directory, e.g.:
 *
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I. -Icommon -Imodels -Iprofiler \
 *      -Isolver -Ibuild scripts/bench/bench_solvers.c build/libhetbatch.a \
 *      -lgsl -lgslcblas -lsqlite3 -lcjson -lm -lpthread -o /tmp/bench_solvers
 *   /tmp/bench_solvers [repeats]
 *
 * The workload is the paper's worst case (notes/jabas.md §7.6: M_max = 2,592,
 * BERT-large on cluster C, 27.58 s per solve in the artifact's Python):
 * 16 GPUs in 4 nodes whose speeds follow the 100/75/50/25 % power caps, so
 * N_H = 8 pairs; minB_L = 4 and candidate local batches 4..32 with n_max
 * falling from 10 to 1.  The profile numbers are synthetic (shaped like the
 * §2.2 model: sub-linear multi-VSW gain, Adam-sized update, 25 MiB buckets of
 * 340 M parameters); only their shape matters for timing.
 *
 * Printed: per M (workers per group at the smallest B_L) the median wall time
 * of (a) one (B_L, M) problem by the fast path and by the DP, (b) a whole
 * solve over every candidate B_L with caching disabled (cold) and (c) the
 * same solve answered from the solver's cache (warm), and the DP/fast ratio.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iidp.h"
#include "perfmodel.h"

#define NTYPES 4
#define MIB 1048576.0

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Cluster C shaped profile: see the header comment. */
static int build(struct hb_perf *p, struct hb_error *err)
{
	static const char *names[NTYPES] = { "a6000", "a6000-pc75", "a6000-pc50", "a6000-pc25" };
	static const double speed[NTYPES] = { 1.0, 0.85, 0.65, 0.35 };
	struct hb_perf_ar intra = { 1, 1.417, 1.209, 15.75e9, "pcie3-x16" };
	struct hb_perf_ar inter = { 1, 0.716, 3.948, 12.5e9, "ib-100g" };
	double buckets[55];
	int nb = 0;
	double left = 340e6 * 4;

	hb_perf_init(p, "bert-large-like", 4);
	while (left > 0 && nb < 55) {
		buckets[nb] = left > 25 * MIB ? 25 * MIB : left;
		left -= buckets[nb++];
	}
	if (hb_perf_set_buckets(p, buckets, nb, err) != 0)
		return -1;
	for (int g = 0; g < NTYPES; g++) {
		int gi;
		char node[16];

		if (hb_perf_add_gpu(p, names[g], &gi, err) != 0)
			return -1;
		for (int lbs = 4; lbs <= 32; lbs += 4) {
			struct hb_perf_point pts[3];
			int n_max = 40 / lbs > 10 ? 10 : (40 / lbs < 1 ? 1 : 40 / lbs), np = 0;
			int ns[3] = { 1, n_max > 3 ? n_max / 2 : 0, n_max };

			for (int i = 0; i < 3; i++) {
				double fb;
				int n = ns[i];
				if (n == 0 || (i == 2 && n == 1))
					continue;
				fb = n * lbs * 0.012 / speed[g] / (1.0 + 0.12 * log((double)n));
				pts[np].n_vsw = n;
				pts[np].fwd_s = fb / 3;
				pts[np].bwd_s = 2 * fb / 3;
				pts[np].data_s = 0.0004 * n;
				pts[np].update_s = 0.040 / speed[g];
				pts[np].copy_s = 0.008 * (n - 1);
				pts[np].bn_s = 0.0;
				np++;
			}
			if (hb_perf_add_lbs(p, gi, lbs, n_max, pts, np, err) != 0)
				return -1;
		}
		snprintf(node, sizeof(node), "node%d", g);
		if (hb_perf_add_node(p, node, gi, 4, &intra, &inter, err) != 0)
			return -1;
	}
	return hb_perf_prepare(p, err);
}

int main(int argc, char **argv)
{
	static const int Ms[] = { 100, 500, 2592 };
	int reps = argc > 1 ? atoi(argv[1]) : 21;
	int alloc[NTYPES] = { 4, 4, 4, 4 };
	struct hb_perf p;
	struct hb_error err = { 0 };
	struct hb_iidp_solver *cold, *warm;
	double *t = NULL;

	if (reps < 1)
		reps = 1;
	if (build(&p, &err) != 0 || hb_iidp_solver_new(&p, &cold, &err) != 0 ||
	    hb_iidp_solver_new(&p, &warm, &err) != 0) {
		fprintf(stderr, "bench_solvers: %s\n", err.msg);
		return 1;
	}
	t = malloc((size_t)reps * sizeof(*t));
	if (!t)
		return 1;
	hb_iidp_solver_set_cache_limit(cold, 0);
	printf("IIDP configuration solver, 16 GPUs (N_H = 8), minB_L 4, B_L 4..32, %d repeats, medians\n", reps);
	printf("%6s %8s | %12s %12s %8s | %14s %14s | %s\n", "M", "B_G", "fast (B_L=4)", "DP (B_L=4)", "DP/fast",
	       "solve cold", "solve warm", "answer");
	for (unsigned i = 0; i < sizeof(Ms) / sizeof(Ms[0]); i++) {
		int M = Ms[i];
		long gbs = 2L * M * 4;
		struct hb_iidp_request req = { alloc, gbs, HB_IIDP_M_ROUND, 0, 0, HB_IIDP_FAST };
		struct hb_iidp_result r, d;
		double fast, dp, solve_cold, solve_warm;
		int dreps = M > 1000 ? 3 : reps;
		char cfg[512];

		for (int k = 0; k < reps; k++) {
			double t0 = now_s();
			if (hb_iidp_solve_m(cold, alloc, 4, M, HB_IIDP_FAST, &r, &err) != 0)
				goto fail;
			t[k] = now_s() - t0;
			if (k + 1 < reps)
				hb_iidp_result_free(&r);
		}
		fast = median(t, reps);
		for (int k = 0; k < dreps; k++) {
			double t0 = now_s();
			if (hb_iidp_solve_m(cold, alloc, 4, M, HB_IIDP_DP, &d, &err) != 0)
				goto fail;
			t[k] = now_s() - t0;
			if (k + 1 < dreps)
				hb_iidp_result_free(&d);
		}
		dp = median(t, dreps);
		if (r.iter_s != d.iter_s) {
			fprintf(stderr, "bench_solvers: fast %.9f != DP %.9f at M %d\n", r.iter_s, d.iter_s, M);
			return 1;
		}
		hb_iidp_result_free(&r);
		hb_iidp_result_free(&d);
		for (int k = 0; k < reps; k++) {
			double t0 = now_s();
			if (hb_iidp_solve(cold, &req, &r, &err) != 0)
				goto fail;
			t[k] = now_s() - t0;
			hb_iidp_result_free(&r);
		}
		solve_cold = median(t, reps);
		if (hb_iidp_solve(warm, &req, &r, &err) != 0)
			goto fail;
		hb_iidp_result_free(&r);
		for (int k = 0; k < reps; k++) {
			double t0 = now_s();
			if (hb_iidp_solve(warm, &req, &r, &err) != 0)
				goto fail;
			t[k] = now_s() - t0;
			if (k + 1 < reps)
				hb_iidp_result_free(&r);
		}
		solve_warm = median(t, reps);
		hb_iidp_format_config(&p, &r, cfg, sizeof(cfg));
		printf("%6d %8ld | %9.3f ms %9.3f ms %7.1fx | %11.3f ms %11.4f ms | B_L %d, t %.4f s, %s\n", M, gbs,
		       fast * 1e3, dp * 1e3, dp / fast, solve_cold * 1e3, solve_warm * 1e3, r.local_bs, r.iter_s,
		       cfg);
		hb_iidp_result_free(&r);
	}
	free(t);
	hb_iidp_solver_free(cold);
	hb_iidp_solver_free(warm);
	hb_perf_free(&p);
	return 0;
fail:
	fprintf(stderr, "bench_solvers: %s\n", err.msg);
	return 1;
}
