/*
 * policy_knob.c: reading, storing and showing a policy's options from its
 * knob table (policy_knob.h).  Nothing here knows a policy.
 */
#include <stdio.h>
#include <string.h>

#include "policy_knob.h"
#include "strutil.h"

/* "a, b or c" of a NULL-terminated word list, into buf. */
static void word_list(const char *const *words, char *buf, size_t size)
{
	size_t len = 0;
	int n = 0;

	while (words[n])
		n++;
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
					i == 0 ? "" : i == n - 1 ? " or " : ", ", words[i]);
}

/* v as a range end in messages: %g without the exponent's '+' and leading
 * zeros ("1e7", not "1e+07"), as people write it. */
static const char *num_text(double v, char *buf, size_t size)
{
	char raw[40];
	const char *e, *d;

	snprintf(raw, sizeof(raw), "%g", v);
	if (!(e = strchr(raw, 'e'))) {
		hb_strlcpy(buf, raw, size);
		return buf;
	}
	d = e + 1 + (e[1] == '+' || e[1] == '-');
	while (*d == '0' && d[1])
		d++;
	snprintf(buf, size, "%.*se%s%s", (int)(e - raw), raw, e[1] == '-' ? "-" : "", d);
	return buf;
}

/* "--NAME: 'TEXT' is not WHAT in [MIN, MAX]" */
static int range_error(const struct hb_pknob *k, const char *text, const char *what, struct hb_error *err)
{
	char lo[96], hi[96];

	return hb_input_error(err, "--%s: '%s' is not %s in [%s, %s]", k->name, text ? text : "", k->what ? k->what : what,
			      num_text(k->min, lo, sizeof(lo)), num_text(k->max, hi, sizeof(hi)));
}

int hb_pknob_parse(const struct hb_pknob *k, const char *text, double *value, struct hb_error *err)
{
	char list[256];
	long n;

	switch (k->type) {
	case HB_PKNOB_FLAG:
		if (text && text[0])
			return hb_input_error(err, "--%s: takes no value ('%s')", k->name, text);
		*value = 1;
		return 0;
	case HB_PKNOB_SWITCH:
		if (text && strcmp(text, "on") == 0)
			*value = 1;
		else if (text && strcmp(text, "off") == 0)
			*value = 0;
		else
			return hb_input_error(err, "--%s: '%s' is not on or off", k->name, text ? text : "");
		return 0;
	case HB_PKNOB_WORDS:
		for (int i = 0; text && k->words[i]; i++) {
			if (strcmp(text, k->words[i]) == 0) {
				*value = i;
				return 0;
			}
		}
		word_list(k->words, list, sizeof(list));
		return hb_input_error(err, "--%s: '%s' is not %s", k->name, text ? text : "", list);
	case HB_PKNOB_INT:
		if (!text || hb_parse_long_range(text, (long)k->min, (long)k->max, &n) < 0)
			return range_error(k, text, "an integer", err);
		*value = (double)n;
		return 0;
	case HB_PKNOB_DOUBLE:
		/* !(v >= min): NaN is refused too */
		if (!text || hb_parse_double(text, value) < 0 || !(*value >= k->min) || *value > k->max)
			return range_error(k, text, "a number", err);
		return 0;
	}
	return hb_runtime_error(err, "--%s: unknown knob type %d", k->name, k->type);
}

int hb_pknob_set(struct hb_pknob_settings *s, const struct hb_pknob *k, double value, struct hb_error *err)
{
	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].knob->name, k->name) == 0) {
			s->v[i].value = value; /* the last one given wins, as for every other option */
			return 0;
		}
	}
	if (s->n >= HB_PKNOB_MAX)
		return hb_runtime_error(err, "--%s: more than %d policy options set", k->name, HB_PKNOB_MAX);
	s->v[s->n].knob = k;
	s->v[s->n].value = value;
	s->n++;
	return 0;
}

const struct hb_pknob_setting *hb_pknob_setting(const struct hb_pknob_settings *s, const char *name)
{
	for (int i = 0; s && i < s->n; i++)
		if (strcmp(s->v[i].knob->name, name) == 0)
			return &s->v[i];
	return NULL;
}

double hb_pknob_get(const struct hb_pknob *k, const void *opts)
{
	const char *p = (const char *)opts + k->offset;
	double d;
	int i;

	if (k->type == HB_PKNOB_DOUBLE) {
		memcpy(&d, p, sizeof(d));
		return d;
	}
	memcpy(&i, p, sizeof(i));
	return (double)i;
}

void hb_pknob_put(const struct hb_pknob *k, void *opts, double value)
{
	char *p = (char *)opts + k->offset;
	int i = (int)value;

	if (k->type == HB_PKNOB_DOUBLE)
		memcpy(p, &value, sizeof(value));
	else
		memcpy(p, &i, sizeof(i));
}

double hb_pknob_value(const struct hb_pknob_table *t, const struct hb_pknob *k, const struct hb_pknob_settings *s)
{
	const struct hb_pknob_setting *v = hb_pknob_setting(s, k->name);

	return v ? v->value : hb_pknob_get(k, t->defaults);
}

void hb_pknob_fill(const struct hb_pknob_table *t, const struct hb_pknob_settings *s, void *opts)
{
	memcpy(opts, t->defaults, t->size);
	for (const struct hb_pknob *k = t->knobs; k->name; k++) {
		const struct hb_pknob_setting *v = hb_pknob_setting(s, k->name);

		if (v)
			hb_pknob_put(k, opts, v->value);
	}
}

void hb_pknob_format(const struct hb_pknob *k, double value, char *buf, size_t size)
{
	switch (k->type) {
	case HB_PKNOB_FLAG:
	case HB_PKNOB_SWITCH:
		hb_strlcpy(buf, value != 0 ? "on" : "off", size);
		return;
	case HB_PKNOB_WORDS:
		hb_strlcpy(buf, k->words[(int)value], size);
		return;
	default:
		if (k->unit)
			snprintf(buf, size, "%g %s", value, k->unit);
		else
			snprintf(buf, size, "%g", value);
	}
}

void hb_pknob_metavar(const struct hb_pknob *k, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	switch (k->type) {
	case HB_PKNOB_FLAG:
		return;
	case HB_PKNOB_SWITCH:
		hb_strlcpy(buf, "on|off", size);
		return;
	case HB_PKNOB_WORDS:
		for (int i = 0; k->words[i]; i++)
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", i ? "|" : "", k->words[i]);
		return;
	default:
		hb_strlcpy(buf, k->metavar ? k->metavar : "V", size);
	}
}
