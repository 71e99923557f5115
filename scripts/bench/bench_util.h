/*
 * bench_util.h: medians and a printed table for the benchmarks.
 * Header-only so each benchmark is one translation unit plus this.
 */
#ifndef HB_BENCH_UTIL_H
#define HB_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct bench_table {
	int reps;  /* repeats per row */
};

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n values (sorts them). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline void bench_table_start(struct bench_table *t, const char *title, int reps)
{
	t->reps = reps;
	printf("%s: median of %d repeats\n", title, reps);
	printf("%-28s %12s %12s %12s  %s\n", "benchmark", "median", "min", "max", "note");
}

static inline void bench_fmt(double s, char *buf, size_t n)
{
	if (s < 1e-3)
		snprintf(buf, n, "%.1f us", s * 1e6);
	else if (s < 1.0)
		snprintf(buf, n, "%.2f ms", s * 1e3);
	else
		snprintf(buf, n, "%.3f s", s);
}

static inline void bench_row(struct bench_table *t, const char *label, double *sec, int n, const char *note)
{
	char med[32], lo[32], hi[32];

	(void)t;
	bench_fmt(bench_median(sec, n), med, sizeof(med));
	bench_fmt(sec[0], lo, sizeof(lo));
	bench_fmt(sec[n - 1], hi, sizeof(hi));
	printf("%-28s %12s %12s %12s  %s\n", label, med, lo, hi, note);
	fflush(stdout);
}

#endif
