/*
 * synth_spec.c: the synthetic generator's options as KEY=VALUE words, the
 * form `hetbatch sim --synth` and sweep configurations use, so that both
 * accept the same names and ranges.  Ranges are checked here, per key, so an
 * error names the key and the value; hb_synth_open checks the combination.
 */
#include <math.h>
#include <string.h>

#include "strutil.h"
#include "synthetic.h"

static const char *const arrival_names[] = { "poisson", "bursty", "trace", "philly-window", "ibm" };
static const char *const ibm_patterns[] = { "high", "low", "bursty" };
static const char *const ibm_batches[] = { "random", "max", "min" };

int hb_synth_arrival_parse(const char *name, int *out, struct hb_error *err)
{
	for (int i = 0; i < (int)(sizeof(arrival_names) / sizeof(arrival_names[0])); i++)
		if (i != HB_SYNTH_TRACE && strcmp(name, arrival_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return hb_input_error(err, "synthetic arrival '%s': expected poisson, bursty, philly-window or ibm", name);
}

const char *hb_synth_arrival_name(int arrival)
{
	if (arrival < 0 || arrival >= (int)(sizeof(arrival_names) / sizeof(arrival_names[0])))
		return "?";
	return arrival_names[arrival];
}

/* A number in [lo, hi] (hi may be INFINITY) into *out. */
static int number(const char *key, const char *value, double lo, double hi, int open_lo, double *out,
		  struct hb_error *err)
{
	double v = 0.0;

	if (hb_parse_double(value, &v) < 0 || !isfinite(v) || v < lo || (open_lo && v == lo) || v > hi)
		return hb_input_error(err, "synthetic option %s: '%s' is not a number in %c%g, %g]", key, value,
				      open_lo ? '(' : '[', lo, hi);
	*out = v;
	return 0;
}

/* One of n names into *out (its index). */
static int word(const char *key, const char *value, const char *const *names, int n, int *out, struct hb_error *err)
{
	for (int i = 0; i < n; i++)
		if (strcmp(value, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return hb_input_error(err, "synthetic option %s: '%s' is not one of %s, %s, %s", key, value, names[0], names[1],
			      names[2]);
}

/* IBM categories: a comma list of 1..4, each at most once, into a bit set. */
static int categories(const char *value, unsigned *out, struct hb_error *err)
{
	unsigned set = 0;
	const char *p = value;

	for (;;) {
		if (p[0] < '1' || p[0] > '0' + HB_SYNTH_IBM_NCAT || (p[1] != ',' && p[1] != '\0') ||
		    (set & (1u << (p[0] - '1'))))
			return hb_input_error(err, "synthetic option categories: '%s' is not a list of distinct categories "
						   "1..%d (e.g. 1,3)", value, HB_SYNTH_IBM_NCAT);
		set |= 1u << (p[0] - '1');
		if (p[1] == '\0')
			break;
		p += 2;
	}
	*out = set;
	return 0;
}

/* The names sweep configurations use (struct hb_synth_options' fields,
 * docs/sweep.md) are accepted too, in their units (seconds for *_s). */
static const char *const aliases[][2] = {
	{ "rate_per_hour", "rate" },         { "burst_low_ratio", "burst-ratio" },
	{ "philly_csv", "sizes" },           { "pollux_filter", "pollux-filter" },
	{ "window_start_h", "window-start" }, { "window_hours", "window-hours" },
	{ "jobs_per_window", "window-jobs" },
};

int hb_synth_option_set(struct hb_synth_options *o, const char *key, const char *value, struct hb_error *err)
{
	double v = 0.0;
	long n;

	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(key, aliases[i][0]) == 0)
			key = aliases[i][1];
	if (strcmp(key, "burst_high_s") == 0 || strcmp(key, "burst_low_s") == 0) {
		if (number(key, value, 0, 1e7, 1, &v, err) < 0)
			return -1;
		*(key[6] == 'h' ? &o->burst_high_s : &o->burst_low_s) = v;
		return 0;
	}

	if (strcmp(key, "arrival") == 0)
		return hb_synth_arrival_parse(value, &o->arrival, err);
	if (strcmp(key, "rate") == 0) {
		o->rate_given = 1;
		return number(key, value, 0, 1e9, 1, &o->rate_per_hour, err);
	}
	if (strcmp(key, "hours") == 0) {
		if (number(key, value, 0, 1e6, 0, &v, err) < 0)
			return -1;
		o->window_s = v * 3600.0;
		return 0;
	}
	if (strcmp(key, "jobs") == 0) {
		if (hb_parse_long_range(value, 0, 100000000L, &n) < 0)
			return hb_input_error(err, "synthetic option jobs: '%s' is not an integer in [0, 1e8]", value);
		o->njobs = n;
		return 0;
	}
	if (strcmp(key, "burst-high") == 0 || strcmp(key, "burst-low") == 0) {
		if (number(key, value, 0, 1e6, 1, &v, err) < 0)
			return -1;
		*(key[6] == 'h' ? &o->burst_high_s : &o->burst_low_s) = v * 3600.0;
		return 0;
	}
	if (strcmp(key, "burst-ratio") == 0)
		return number(key, value, 0, 1, 0, &o->burst_low_ratio, err);
	if (strcmp(key, "sizes") == 0) {
		/* The value is borrowed: callers keep it alive (argv, a config). */
		o->philly_csv = strcmp(value, "fit") == 0 ? NULL : value;
		if (!value[0])
			return hb_input_error(err, "synthetic option sizes: empty (give 'fit' or a philly.csv path)");
		return 0;
	}
	if (strcmp(key, "pollux-filter") == 0) {
		if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
			return hb_input_error(err, "synthetic option pollux-filter: '%s' is not 0 or 1", value);
		o->pollux_filter = value[0] == '1';
		return 0;
	}
	if (strcmp(key, "window-start") == 0)
		return number(key, value, 0, 24, 0, &o->window_start_h, err) < 0 ? -1
		       : o->window_start_h < 24 ? 0
		       : hb_input_error(err, "synthetic option window-start: '%s' is not an hour in [0, 24)", value);
	if (strcmp(key, "window-hours") == 0)
		return number(key, value, 0, 24, 1, &o->window_hours, err);
	if (strcmp(key, "window-jobs") == 0) {
		if (hb_parse_long_range(value, 1, 100000000L, &n) < 0)
			return hb_input_error(err, "synthetic option window-jobs: '%s' is not an integer in [1, 1e8]",
					      value);
		o->jobs_per_window = n;
		return 0;
	}
	if (strcmp(key, "mix") == 0) {
		if (!value[0] || hb_strlcpy(o->mix, value, sizeof(o->mix)) >= sizeof(o->mix))
			return hb_input_error(err, "synthetic option mix: '%.40s' is empty or longer than %zu bytes", value,
					      sizeof(o->mix) - 1);
		o->mix_given = 1;
		return 0;
	}
	if (strcmp(key, "pattern") == 0)
		return word(key, value, ibm_patterns, 3, &o->ibm_pattern, err);
	if (strcmp(key, "batch") == 0)
		return word(key, value, ibm_batches, 3, &o->ibm_batch, err);
	if (strcmp(key, "kmax") == 0)
		return number(key, value, 0, 1e6, 1, &o->ibm_kmax, err);
	if (strcmp(key, "length") == 0)
		return number(key, value, 0, 1e6, 0, &o->ibm_length_min, err);
	if (strcmp(key, "categories") == 0)
		return categories(value, &o->ibm_categories, err);
	return hb_input_error(err, "unknown synthetic option '%s' (arrival, rate, hours, jobs, burst-high, burst-low, "
				   "burst-ratio, sizes, pollux-filter, window-start, window-hours, window-jobs, mix; "
				   "ibm: pattern, categories, batch, kmax, length; or the sweep configuration's names, "
				   "docs/sweep.md)",
			      key);
}

int hb_synth_option_word(struct hb_synth_options *o, const char *word, struct hb_error *err)
{
	char key[32];
	const char *eq = strchr(word, '=');

	if (!eq || eq == word || (size_t)(eq - word) >= sizeof(key))
		return hb_input_error(err, "synthetic option '%s': expected KEY=VALUE", word);
	memcpy(key, word, (size_t)(eq - word));
	key[eq - word] = '\0';
	return hb_synth_option_set(o, key, eq + 1, err);
}
