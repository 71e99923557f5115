/* Trace readers on the published data in $HB_SHARED/data/pollux (read in
 * place, never copied): Pollux's philly.csv (82,247 jobs) against sums the
 * test computes itself from the raw text, the four Pollux workloads (160
 * jobs each, catalog model names), the built-in parametric fit against a
 * fresh fit, and Pollux's window construction against an independent count
 * of the window's jobs.  Exits 77 (skipped) when the data is absent. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "catalog.h"
#include "jobspec.h"
#include "synthetic.h"

static char pollux[1024];
static char philly[1100];

/* The raw file, parsed with nothing but fgets and strtod. */
struct raw {
	long rows;
	double gpu_time, duration;
	long gpus;
	long window_rows;          /* Pollux's window: hour 2..10, duration >= 60, gpu_time < 1000 h */
	double window_gpu_time;
	double window_tod;         /* sum of time into the window */
	long window_small;         /* window rows under 1 GPU-hour */
};

static void raw_scan(struct raw *r)
{
	FILE *f = fopen(philly, "r");
	char line[512];

	memset(r, 0, sizeof(*r));
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "timestamp,duration,num_gpus,gpu_time,cluster\n");
	while (fgets(line, sizeof(line), f)) {
		char *c1, *c2, *c3;
		double dur, gt, tod;
		long g;

		if (line[0] == '\n')
			continue;
		c1 = strchr(line, ',');
		c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		c3 = c2 ? strchr(c2 + 1, ',') : NULL;
		assert_non_null(c3);
		dur = strtod(c1 + 1, NULL);
		g = strtol(c2 + 1, NULL, 10);
		gt = strtod(c3 + 1, NULL);
		r->rows++;
		r->duration += dur;
		r->gpus += g;
		r->gpu_time += gt;
		/* "YYYY-MM-DD HH:MM:SS": time of day from the characters. */
		tod = atoi(line + 11) * 3600.0 + atoi(line + 14) * 60.0 + atoi(line + 17);
		tod = fmod(tod - 2 * 3600.0 + 86400.0, 86400.0);
		if (tod < 8 * 3600.0 && dur >= 60 && gt < 1000 * 3600.0 && g > 0) {
			r->window_rows++;
			r->window_gpu_time += gt;
			r->window_tod += tod;
			r->window_small += gt < 3600.0;
		}
	}
	fclose(f);
}

static void test_philly_csv_sums(void **state)
{
	struct raw raw;
	struct hb_trace_reader *r;
	struct hb_jobspec j;
	struct hb_error err = { 0 };
	const struct hb_trace_stats *st;
	double gpu_time = 0, duration = 0, tmin = INFINITY, tmax = -INFINITY, t0, t1;
	long n = 0, gpus = 0;
	int rc;

	(void)state;
	raw_scan(&raw);
	assert_int_equal(raw.rows, 82247);
	assert_int_equal(hb_trace_open(philly, HB_TRACE_AUTO, NULL, &r, &err), 0);
	assert_int_equal(hb_trace_get_format(r), HB_TRACE_PHILLY_CSV);
	while ((rc = hb_trace_next(r, &j, &err)) == 1) {
		n++;
		gpus += j.gpus;
		gpu_time += j.gpu_time_s;
		duration += j.duration_s;
		tmin = fmin(tmin, j.arrival_s);
		tmax = fmax(tmax, j.arrival_s);
		assert_true(j.gpu_time_s == j.gpus * j.duration_s);
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	st = hb_trace_get_stats(r);
	assert_int_equal(n, 82247);
	assert_int_equal(st->records, 82247);
	assert_int_equal(st->skipped_total, 0);
	assert_true(st->max_buffer <= 1024);
	assert_int_equal(gpus, raw.gpus);
	/* Same numbers summed in the same order: equal to rounding. */
	assert_true(fabs(gpu_time - raw.gpu_time) <= 1e-12 * raw.gpu_time);
	assert_true(fabs(duration - raw.duration) <= 1e-12 * raw.duration);
	/* 3,521,082,502 GPU-seconds in the file (978,078 GPU-hours). */
	assert_true(fabs(gpu_time - 3521082502.0) < 1.0);
	assert_int_equal(hb_trace_parse_time("2017-09-04 10:30:41", &t0), 0);
	assert_int_equal(hb_trace_parse_time("2017-12-22 08:02:11", &t1), 0);
	assert_true(hb_trace_get_origin(r) == t0);
	assert_true(tmin == 0.0);
	assert_true(tmax == t1 - t0);
	hb_trace_close(r);
}

static void test_pollux_workloads(void **state)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	for (int w = 1; w <= 4; w++) {
		char path[1200];
		struct hb_jobspec *v;
		struct hb_trace_stats st;
		long n, lines = 0;
		FILE *f;
		char line[256];

		snprintf(path, sizeof(path), "%s/workloads/workload-%d.csv", pollux, w);
		if (hb_trace_read_all(path, HB_TRACE_AUTO, NULL, &v, &n, &st, &err) < 0)
			fail_msg("%s", err.msg);
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			lines += line[0] != '\n';
		fclose(f);
		assert_int_equal(n, 160);
		assert_int_equal(lines - 1, 160);
		assert_int_equal(st.skipped_total, 0);
		for (long i = 0; i < n; i++) {
			if (!hb_catalog_model(&cat, v[i].model))
				fail_msg("%s: job %s: model '%s' not in the catalog", path, v[i].name, v[i].model);
			assert_true(v[i].arrival_s >= 0 && v[i].arrival_s < 8 * 3600.0 + 600);
			assert_true(v[i].gpus >= 1 && v[i].batch > 0);
			if (i)
				assert_true(v[i - 1].arrival_s <= v[i].arrival_s);
		}
		free(v);
	}
	hb_catalog_free(&cat);
}

static void test_builtin_fit_matches_file(void **state)
{
	struct hb_synth_fit f;
	const struct hb_synth_fit *b = hb_synth_builtin_fit();
	struct hb_error err = { 0 };

	(void)state;
	if (hb_synth_fit_file(philly, &f, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(f.n, 82247);
	assert_int_equal(f.ngpu, b->ngpu);
	for (int i = 0; i < f.ngpu; i++) {
		assert_int_equal(f.gpus[i], b->gpus[i]);
		assert_true(fabs(f.prob[i] - b->prob[i]) < 1e-15);
	}
	for (int c = 0; c < HB_SYNTH_DUR_CLASSES; c++) {
		assert_true(fabs(f.mu[c] - b->mu[c]) < 1e-9 * fabs(b->mu[c]));
		assert_true(fabs(f.sigma[c] - b->sigma[c]) < 1e-9 * b->sigma[c]);
	}
}

static long window_jobs(double load, long per_window, uint64_t seed, struct hb_jobspec **v)
{
	struct hb_synth_options so;
	struct hb_trace_reader *r;
	struct hb_error err = { 0 };
	long n;

	hb_synth_options_init(&so);
	so.arrival = HB_SYNTH_PHILLY_WINDOW;
	so.philly_csv = philly;
	so.load = load;
	so.jobs_per_window = per_window;
	so.seed = seed;
	if (hb_synth_open(&so, NULL, &r, &err) < 0 || hb_trace_drain(r, v, &n, &err) < 0)
		fail_msg("%s", err.msg);
	hb_trace_close(r);
	return n;
}

static void test_pollux_window(void **state)
{
	struct raw raw;
	struct hb_jobspec *v, *w;
	double gt = 0, tod = 0;
	long n, small = 0, total = 0;
	const double loads[] = { 0.5, 1.0, 1.5, 2.0 };

	(void)state;
	raw_scan(&raw);
	/* Every window job, drawn without replacement: the window itself. */
	n = window_jobs(1.0, raw.window_rows, 1, &v);
	assert_int_equal(n, raw.window_rows);
	for (long i = 0; i < n; i++) {
		gt += v[i].gpu_time_s;
		tod += v[i].arrival_s;
		assert_true(v[i].arrival_s >= 0 && v[i].arrival_s < 8 * 3600.0);
	}
	assert_true(fabs(gt - raw.window_gpu_time) <= 1e-9 * raw.window_gpu_time);
	assert_true(fabs(tod - raw.window_tod) <= 1e-9 * raw.window_tod);
	free(v);

	/* Pollux's 0.5x .. 2x loads: 80 .. 320 jobs; same seed, same jobs. */
	for (int k = 0; k < 4; k++) {
		n = window_jobs(loads[k], 160, 5, &v);
		assert_int_equal(n, lround(160 * loads[k]));
		assert_int_equal(window_jobs(loads[k], 160, 5, &w), n);
		for (long i = 0; i < n; i++) {
			assert_true(v[i].arrival_s == w[i].arrival_s && v[i].gpus == w[i].gpus);
			assert_string_equal(v[i].model, w[i].model);
		}
		free(v);
		free(w);
	}

	/* The small (< 1 GPU-h: cifar10 + ncf) share over 8 seeds is the
	 * window's own share, within 5 standard errors. */
	for (uint64_t seed = 1; seed <= 8; seed++) {
		n = window_jobs(1.0, 160, seed, &v);
		for (long i = 0; i < n; i++)
			small += !strcmp(v[i].model, "cifar10") || !strcmp(v[i].model, "ncf");
		total += n;
		free(v);
	}
	{
		double p = (double)raw.window_small / raw.window_rows, got = (double)small / total;

		if (fabs(got - p) > 5 * sqrt(p * (1 - p) / total))
			fail_msg("small share %.3f, window %.3f", got, p);
	}
}

int main(void)
{
	const char *shared = getenv("HB_SHARED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_philly_csv_sums),
		cmocka_unit_test(test_pollux_workloads),
		cmocka_unit_test(test_builtin_fit_matches_file),
		cmocka_unit_test(test_pollux_window),
	};

	snprintf(pollux, sizeof(pollux), "%s/data/pollux", shared ? shared : "../shared");
	snprintf(philly, sizeof(philly), "%s/philly.csv", pollux);
	if (access(philly, R_OK) != 0) {
		fprintf(stderr, "skipped: %s is absent\n", philly);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
