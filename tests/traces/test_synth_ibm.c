/* The IBM elastic paper's workload generator (`--synthetic ibm`,
 * traces/synthetic.h): Table I against the catalog, the rate k_max / E[L],
 * the category mix, the batch settings, the arrival patterns' statistics,
 * determinism, and bad options rejected with messages naming key and value.
 *
 * The generator is seeded, so every statistic below is one fixed number; the
 * tolerances are still stated as what the distribution allows (4 standard
 * deviations of the estimate), so that a change of seed or draw order that
 * keeps the distribution passes, and one that breaks it does not. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "catalog.h"
#include "jobspec.h"
#include "synthetic.h"

/* The options of a run: IBM, all categories, the words given. */
static void opts(struct hb_synth_options *o, const char *const *words)
{
	struct hb_error err = { 0 };

	hb_synth_options_init(o);
	o->arrival = HB_SYNTH_IBM;
	for (int i = 0; words && words[i]; i++)
		if (hb_synth_option_word(o, words[i], &err) < 0)
			fail_msg("%s: %s", words[i], err.msg);
}

static long gen(const struct hb_synth_options *o, struct hb_jobspec **jobs)
{
	struct hb_trace_reader *r = NULL;
	struct hb_error err = { 0 };
	long n = 0;

	if (hb_synth_open(o, NULL, &r, &err) < 0 || hb_trace_drain(r, jobs, &n, &err) < 0)
		fail_msg("%s", err.msg);
	hb_trace_close(r);
	return n;
}

static const struct hb_synth_ibm_category *cat_of(const char *model)
{
	const struct hb_synth_ibm_category *t = hb_synth_ibm_categories();

	for (int i = 0; i < HB_SYNTH_IBM_NCAT; i++)
		if (strcmp(t[i].model, model) == 0)
			return &t[i];
	fail_msg("job model %s is not an IBM category", model);
	return NULL;
}

/* |x - mean| within k standard deviations. */
static void within(double x, double mean, double sd, const char *what)
{
	if (fabs(x - mean) > 4.0 * sd)
		fail_msg("%s: %g, expected %g +- %g (4 sd)", what, x, mean, 4.0 * sd);
}

/* Table I's ranges and the Random-BS unit are the catalog models'. */
static void test_table_matches_catalog(void **state)
{
	const struct hb_synth_ibm_category *t = hb_synth_ibm_categories();
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	static const long paper[HB_SYNTH_IBM_NCAT][2] = { { 32, 256 }, { 16, 256 }, { 16, 1024 }, { 128, 128 } };
	static const double len[HB_SYNTH_IBM_NCAT] = { 16, 21, 41, 27 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0)
		fail_msg("%s", err.msg);
	for (int i = 0; i < HB_SYNTH_IBM_NCAT; i++) {
		const struct hb_model *m = hb_catalog_model(&cat, t[i].model);

		assert_int_equal(t[i].id, i + 1);
		assert_non_null(m);
		assert_int_equal(t[i].b_min, paper[i][0]);
		assert_int_equal(t[i].b_max, paper[i][1]);
		assert_int_equal(m->min_gbs, t[i].b_min);
		assert_int_equal(m->max_gbs, t[i].b_max);
		assert_int_equal(m->min_lbs, t[i].unit);
		assert_true(t[i].length_min == len[i]);
		/* length=MIN scales these epochs: they must be the model's. */
		assert_true(t[i].epochs == m->target_epochs);
	}
	hb_catalog_free(&cat);
}

/* high = k_max lambda, lambda = 1 / E[L] over the chosen categories. */
static void test_rate(void **state)
{
	struct hb_synth_options o;

	(void)state;
	opts(&o, (const char *const[]){ "kmax=10", NULL });
	assert_true(fabs(hb_synth_ibm_high_rate(&o) - 10 * 60.0 / 26.25) < 1e-12);
	opts(&o, (const char *const[]){ "kmax=10", "categories=1", NULL });
	assert_true(fabs(hb_synth_ibm_high_rate(&o) - 10 * 60.0 / 16) < 1e-12);
	opts(&o, (const char *const[]){ "kmax=4", "categories=3,2", NULL });
	assert_true(fabs(hb_synth_ibm_high_rate(&o) - 4 * 60.0 / 31) < 1e-12);
	/* The default is the 40-GPU calibration. */
	opts(&o, NULL);
	assert_true(o.ibm_kmax == HB_SYNTH_IBM_KMAX_40 && HB_SYNTH_IBM_KMAX_40 > 0);
	assert_int_equal(o.ibm_pattern, HB_SYNTH_IBM_BURSTY);
	assert_int_equal(o.ibm_batch, HB_SYNTH_IBM_RANDOM_BS);
}

/* IV-A's micro-benchmarks (length=30): every job trains length / L_c of
 * its model's epochs, so all categories run 30 min alone on one GPU, and
 * lambda = 1 / 30 min whatever the categories; without length the epochs
 * are the model's own (jobspec epochs 0). */
static void test_length(void **state)
{
	struct hb_synth_options o;
	struct hb_jobspec *j = NULL;
	long n;
	int seen[HB_SYNTH_IBM_NCAT] = { 0 };

	(void)state;
	opts(&o, (const char *const[]){ "kmax=10", "length=30", NULL });
	assert_true(fabs(hb_synth_ibm_high_rate(&o) - 10 * 60.0 / 30) < 1e-12);
	opts(&o, (const char *const[]){ "kmax=10", "length=30", "categories=3", NULL });
	assert_true(fabs(hb_synth_ibm_high_rate(&o) - 10 * 60.0 / 30) < 1e-12);
	opts(&o, (const char *const[]){ "pattern=high", "hours=0", "jobs=200", "length=30", NULL });
	n = gen(&o, &j);
	for (long i = 0; i < n; i++) {
		const struct hb_synth_ibm_category *c = cat_of(j[i].model);

		assert_true(fabs(j[i].epochs - c->epochs * 30.0 / c->length_min) <= 1e-12 * j[i].epochs);
		assert_true(j[i].duration_s == 1800.0);
		seen[c->id - 1] = 1;
	}
	for (int c = 0; c < HB_SYNTH_IBM_NCAT; c++)
		assert_true(seen[c]);
	free(j);
	opts(&o, (const char *const[]){ "pattern=high", "hours=0", "jobs=50", NULL });
	n = gen(&o, &j);
	for (long i = 0; i < n; i++) {
		assert_true(j[i].epochs == 0.0);
		assert_true(j[i].duration_s == cat_of(j[i].model)->length_min * 60.0);
	}
	free(j);
}

/* Each job's category is uniform over the chosen ones. */
static void test_category_mix(void **state)
{
	struct hb_synth_options o;
	struct hb_jobspec *j = NULL;
	long n, count[HB_SYNTH_IBM_NCAT] = { 0 };

	(void)state;
	opts(&o, (const char *const[]){ "pattern=high", "hours=0", "jobs=8000", NULL });
	n = gen(&o, &j);
	assert_int_equal(n, 8000);
	for (long i = 0; i < n; i++)
		count[cat_of(j[i].model)->id - 1]++;
	for (int c = 0; c < HB_SYNTH_IBM_NCAT; c++)
		within((double)count[c], n / 4.0, sqrt(n * 0.25 * 0.75), "category count");
	free(j);

	opts(&o, (const char *const[]){ "pattern=high", "hours=0", "jobs=4000", "categories=3,1", NULL });
	n = gen(&o, &j);
	memset(count, 0, sizeof(count));
	for (long i = 0; i < n; i++)
		count[cat_of(j[i].model)->id - 1]++;
	assert_int_equal(count[1] + count[3], 0);
	within((double)count[0], n / 2.0, sqrt(n * 0.25), "category 1 of {1, 3}");
	free(j);
}

/* Random-BS: uniform over the multiples of the unit in the range; Max-BS,
 * Min-BS: the ends.  Every job asks for one GPU and carries its length. */
static void test_batch_settings(void **state)
{
	struct hb_synth_options o;
	struct hb_jobspec *j = NULL;
	long n, cnt[HB_SYNTH_IBM_NCAT] = { 0 };
	double sum[HB_SYNTH_IBM_NCAT] = { 0 };
	unsigned char seen[HB_SYNTH_IBM_NCAT][129] = { { 0 } };

	(void)state;
	opts(&o, (const char *const[]){ "pattern=high", "hours=0", "jobs=8000", NULL });
	n = gen(&o, &j);
	for (long i = 0; i < n; i++) {
		const struct hb_synth_ibm_category *c = cat_of(j[i].model);

		assert_int_equal(j[i].gpus, 1);
		assert_true(j[i].duration_s == c->length_min * 60.0);
		assert_true(j[i].batch >= c->b_min && j[i].batch <= c->b_max);
		assert_int_equal(j[i].batch % c->unit, 0);
		cnt[c->id - 1]++;
		sum[c->id - 1] += (double)j[i].batch;
		seen[c->id - 1][j[i].batch / c->unit] = 1;
	}
	for (int k = 0; k < HB_SYNTH_IBM_NCAT; k++) {
		const struct hb_synth_ibm_category *c = &hb_synth_ibm_categories()[k];
		long lo = c->b_min / c->unit, hi = c->b_max / c->unit, vals = hi - lo + 1;
		/* Discrete uniform over vals values, unit apart. */
		double sd = c->unit * sqrt((vals * vals - 1) / 12.0);

		within(sum[k] / cnt[k], (c->b_min + c->b_max) / 2.0, sd / sqrt((double)cnt[k]), "Random-BS mean");
		for (long v = lo; v <= hi; v++)
			if (!seen[k][v])
				fail_msg("category %d: batch %ld never drawn in %ld jobs", c->id, v * c->unit, cnt[k]);
	}
	free(j);

	for (int setting = 0; setting < 2; setting++) {
		opts(&o, (const char *const[]){ "pattern=high", "hours=0", "jobs=400", setting ? "batch=min" : "batch=max",
						NULL });
		n = gen(&o, &j);
		for (long i = 0; i < n; i++) {
			const struct hb_synth_ibm_category *c = cat_of(j[i].model);

			assert_int_equal(j[i].batch, setting ? c->b_min : c->b_max);
		}
		free(j);
	}
}

/* Gaps of a Poisson process: count, mean and coefficient of variation. */
static void check_poisson(const struct hb_jobspec *j, long n, double rate_per_s, double window_s, const char *what)
{
	double mean = 0.0, var = 0.0;
	char buf[128];

	snprintf(buf, sizeof(buf), "%s: jobs in %.0f s", what, window_s);
	within((double)n, rate_per_s * window_s, sqrt(rate_per_s * window_s), buf);
	for (long i = 1; i < n; i++)
		mean += j[i].arrival_s - j[i - 1].arrival_s;
	mean /= (double)(n - 1);
	for (long i = 1; i < n; i++) {
		double d = j[i].arrival_s - j[i - 1].arrival_s - mean;

		var += d * d;
	}
	var /= (double)(n - 2);
	snprintf(buf, sizeof(buf), "%s: mean gap", what);
	within(mean, 1.0 / rate_per_s, 1.0 / rate_per_s / sqrt((double)n), buf);
	/* The exponential's CV is 1; its estimate's sd is about 1/sqrt(n). */
	snprintf(buf, sizeof(buf), "%s: gap CV", what);
	within(sqrt(var) / mean, 1.0, 1.0 / sqrt((double)n), buf);
}

static void test_arrivals_high_low(void **state)
{
	struct hb_synth_options o;
	struct hb_jobspec *j = NULL;
	long n;
	double high;

	(void)state;
	opts(&o, (const char *const[]){ "pattern=high", "kmax=10", "hours=100", NULL });
	high = hb_synth_ibm_high_rate(&o) / 3600.0;
	n = gen(&o, &j);
	check_poisson(j, n, high, 100 * 3600.0, "high");
	assert_true(j[n - 1].arrival_s < 100 * 3600.0);
	free(j);
	opts(&o, (const char *const[]){ "pattern=low", "kmax=10", "hours=200", NULL });
	n = gen(&o, &j);
	check_poisson(j, n, high / 4.0, 200 * 3600.0, "low (k_max lambda / 4)");
	free(j);
	/* --load scales the rate. */
	opts(&o, (const char *const[]){ "pattern=high", "kmax=10", "hours=50", NULL });
	o.load = 2.0;
	n = gen(&o, &j);
	check_poisson(j, n, 2.0 * high, 50 * 3600.0, "high at load 2");
	free(j);
}

/* Bursty: high in [0, H), low in [H, H + L), repeating; jobs per phase. */
static void check_bursty(const char *hi_w, const char *lo_w, double hi_s, double lo_s)
{
	struct hb_synth_options o;
	struct hb_jobspec *j = NULL;
	long n, in_hi = 0, in_lo = 0;
	double high, hours = 96, cycles;

	opts(&o, (const char *const[]){ "pattern=bursty", "kmax=20", "hours=96", hi_w, lo_w, NULL });
	high = hb_synth_ibm_high_rate(&o) / 3600.0;
	n = gen(&o, &j);
	for (long i = 0; i < n; i++)
		*(fmod(j[i].arrival_s, hi_s + lo_s) < hi_s ? &in_hi : &in_lo) += 1;
	cycles = hours * 3600.0 / (hi_s + lo_s);
	within((double)in_hi, high * hi_s * cycles, sqrt(high * hi_s * cycles), "jobs in high periods");
	within((double)in_lo, high / 4 * lo_s * cycles, sqrt(high / 4 * lo_s * cycles), "jobs in low periods");
	/* The paper's pattern starts high. */
	assert_true(j[0].arrival_s < hi_s);
	free(j);
}

static void test_arrivals_bursty(void **state)
{
	(void)state;
	check_bursty("burst-high=1", "burst-low=1", 3600.0, 3600.0);  /* IV-F */
	check_bursty("burst-high=2", "burst-low=2", 7200.0, 7200.0);  /* IV-G, IV-I */
	check_bursty("burst-high=1", "burst-low=3", 3600.0, 10800.0);
}

static void test_determinism(void **state)
{
	struct hb_synth_options o;
	struct hb_jobspec *a = NULL, *b = NULL;
	long na, nb;

	(void)state;
	opts(&o, (const char *const[]){ "hours=12", NULL });
	o.seed = 7;
	na = gen(&o, &a);
	nb = gen(&o, &b);
	assert_true(na > 100);
	assert_int_equal(na, nb);
	for (long i = 0; i < na; i++) {
		assert_true(a[i].arrival_s == b[i].arrival_s);
		assert_string_equal(a[i].model, b[i].model);
		assert_string_equal(a[i].name, b[i].name);
		assert_int_equal(a[i].batch, b[i].batch);
	}
	free(b);
	o.seed = 8;
	nb = gen(&o, &b);
	assert_true(nb != na || a[0].arrival_s != b[0].arrival_s || a[1].batch != b[1].batch);
	free(a);
	free(b);
}

/* Every bad option is refused with the key and the value in the message. */
static void test_bad_options(void **state)
{
	static const char *const bad[][2] = {
		{ "pattern=medium", "medium" }, { "batch=huge", "huge" },      { "kmax=0", "kmax" },
		{ "kmax=-3", "-3" },            { "kmax=abc", "abc" },         { "categories=5", "categories" },
		{ "categories=1,1", "1,1" },    { "categories=", "categories" }, { "categories=1,", "1," },
		{ "categories=12", "12" },      { "categories=0", "0" },       { "pattern=", "pattern" },
		{ "length=-1", "length" },      { "length=x", "x" },
	};
	static const char *const at_open[][2] = {
		{ "rate=30", "rate" }, { "mix=cifar10", "mix" }, { "sizes=/nonexistent.csv", "sizes" },
	};
	struct hb_synth_options o;
	struct hb_trace_reader *r = NULL;
	struct hb_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		hb_synth_options_init(&o);
		memset(&err, 0, sizeof(err));
		assert_int_equal(hb_synth_option_word(&o, bad[i][0], &err), -1);
		assert_int_equal(err.code, HB_EINPUT);
		if (!strstr(err.msg, bad[i][1]))
			fail_msg("%s: message '%s' does not name '%s'", bad[i][0], err.msg, bad[i][1]);
	}
	/* Options that are fine alone but not with the IBM workload. */
	for (size_t i = 0; i < sizeof(at_open) / sizeof(at_open[0]); i++) {
		opts(&o, (const char *const[]){ at_open[i][0], NULL });
		memset(&err, 0, sizeof(err));
		assert_int_equal(hb_synth_open(&o, NULL, &r, &err), -1);
		assert_null(r);
		assert_int_equal(err.code, HB_EINPUT);
		if (!strstr(err.msg, at_open[i][1]) || !strstr(err.msg, "ibm"))
			fail_msg("%s: message '%s'", at_open[i][0], err.msg);
	}
	/* Fields set directly (a library caller): checked at open. */
	opts(&o, NULL);
	o.ibm_categories = 0;
	assert_int_equal(hb_synth_open(&o, NULL, &r, &err), -1);
	assert_non_null(strstr(err.msg, "categories"));
	opts(&o, NULL);
	o.ibm_kmax = NAN;
	assert_int_equal(hb_synth_open(&o, NULL, &r, &err), -1);
	assert_non_null(strstr(err.msg, "kmax"));
	opts(&o, (const char *const[]){ "hours=0", NULL });
	assert_int_equal(hb_synth_open(&o, NULL, &r, &err), -1);
	opts(&o, (const char *const[]){ "pattern=low", "burst-ratio=0", NULL });
	assert_int_equal(hb_synth_open(&o, NULL, &r, &err), -1);
	assert_non_null(strstr(err.msg, "burst-ratio"));
}

/* The command line refuses them too: exit 2, the message on stderr. */
static void test_cli_rejects(void **state)
{
	static const char *const cases[][2] = {
		{ "--synthetic ibm --synth pattern=medium", "medium" },
		{ "--synthetic ibm --synth categories=7", "categories" },
		{ "--synthetic ibm --synth rate=20", "rate" },
		{ "--synthetic ibm --synth kmax=0", "kmax" },
	};
	const char *exe = getenv("HETBATCH");

	(void)state;
	if (!exe)
		skip();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cmd[1024], out[4096] = "";
		FILE *p;
		size_t len;
		int st;

		snprintf(cmd, sizeof(cmd), "'%s' -q sim --cluster ibm-p100 --policy elastic %s --no-fairness 2>&1", exe,
			 cases[i][0]);
		p = popen(cmd, "r");
		assert_non_null(p);
		len = fread(out, 1, sizeof(out) - 1, p);
		out[len] = '\0';
		st = pclose(p);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) != 2 || !strstr(out, cases[i][1]))
			fail_msg("%s: exit %d, output '%s'", cases[i][0], WEXITSTATUS(st), out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_catalog),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_category_mix),
		cmocka_unit_test(test_batch_settings),
		cmocka_unit_test(test_arrivals_high_low),
		cmocka_unit_test(test_arrivals_bursty),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_cli_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
