/*
 * sweep_fields.c: reading a sweep configuration's JSON, every message
 * "FILE: field 'PATH': value V: why" (sweep_priv.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "strutil.h"
#include "sweep.h"
#include "sweep_priv.h"

#define VALUE_MAX 80

/* The value as JSON text, on one line, cut to VALUE_MAX. */
static void value_text(const cJSON *v, char *buf, size_t size)
{
	char *s = v ? cJSON_PrintUnformatted(v) : NULL;
	size_t k = 0;

	if (!s) {
		hb_strlcpy(buf, v ? "?" : "none", size);
		return;
	}
	for (const char *p = s; *p && k + 4 < size && k < VALUE_MAX; p++)
		buf[k++] = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
	if (strlen(s) > k)
		buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
	buf[k] = '\0';
	free(s);
}

/* "FILE: field 'PRE KEY': value V: WHY" */
int hb_sw_bad(struct hb_error *err, const char *file, const char *pre, const char *key, const cJSON *v,
	       const char *why)
{
	char val[VALUE_MAX + 8];

	value_text(v, val, sizeof(val));
	return hb_input_error(err, "%s: field '%s%s': value %s: %s", file, pre, key, val, why);
}

int hb_sw_missing(struct hb_error *err, const char *file, const char *pre, const char *key)
{
	return hb_input_error(err, "%s: field '%s%s': missing (required)", file, pre, key);
}

/* Unknown or repeated keys. */
int hb_sw_check_keys(const cJSON *obj, const char *file, const char *pre, const char *const *allowed,
		      struct hb_error *err)
{
	const cJSON *it, *jt;

	cJSON_ArrayForEach(it, obj) {
		int ok = 0;
		char known[512];
		size_t len = 0;

		for (const char *const *a = allowed; *a && !ok; a++)
			ok = it->string && strcmp(it->string, *a) == 0;
		if (!ok) {
			char why[600];

			for (const char *const *a = allowed; *a; a++)
				len += (size_t)snprintf(known + len, len < sizeof(known) ? sizeof(known) - len : 0,
							"%s%s", len ? ", " : "", *a);
			snprintf(why, sizeof(why), "unknown field (known: %.500s)", known);
			return hb_sw_bad(err, file, pre, it->string ? it->string : "?", it, why);
		}
		for (jt = obj->child; jt != it; jt = jt->next)
			if (strcmp(jt->string, it->string) == 0)
				return hb_sw_bad(err, file, pre, it->string, it, "the field is given twice");
	}
	return 0;
}

int hb_sw_object_at(const cJSON *v, const char *file, const char *pre, const char *key, struct hb_error *err)
{
	if (!cJSON_IsObject(v))
		return hb_sw_bad(err, file, pre, key, v, "expected an object");
	return 0;
}

/* Number in [lo, hi]; absent or null: *out = dflt unless required. */
int hb_sw_get_num(const cJSON *obj, const char *key, const char *file, const char *pre, int required, double lo,
		   double hi, double dflt, double *out, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char why[128];

	if (!v || cJSON_IsNull(v)) {
		if (required)
			return hb_sw_missing(err, file, pre, key);
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return hb_sw_bad(err, file, pre, key, v, "expected a number");
	if (v->valuedouble < lo || v->valuedouble > hi) {
		snprintf(why, sizeof(why), "must be a number in [%g, %g]", lo, hi);
		return hb_sw_bad(err, file, pre, key, v, why);
	}
	*out = v->valuedouble;
	return 0;
}

/* Positive number (> 0) up to hi. */
int hb_sw_get_pos(const cJSON *obj, const char *key, const char *file, const char *pre, double hi, double dflt,
		   double *out, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char why[128];

	if (hb_sw_get_num(obj, key, file, pre, 0, -INFINITY, INFINITY, dflt, out, err) < 0)
		return -1;
	if (v && !cJSON_IsNull(v) && !(*out > 0 && *out <= hi)) {
		snprintf(why, sizeof(why), "must be a number in (0, %g]", hi);
		return hb_sw_bad(err, file, pre, key, v, why);
	}
	return 0;
}

int hb_sw_get_int(const cJSON *obj, const char *key, const char *file, const char *pre, int required, long lo,
		   long hi, long dflt, long *out, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char why[128];

	if (!v || cJSON_IsNull(v)) {
		if (required)
			return hb_sw_missing(err, file, pre, key);
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < (double)lo ||
	    v->valuedouble > (double)hi) {
		snprintf(why, sizeof(why), "must be an integer in [%ld, %ld]", lo, hi);
		return hb_sw_bad(err, file, pre, key, v, why);
	}
	*out = (long)v->valuedouble;
	return 0;
}

int hb_sw_get_bool(const cJSON *obj, const char *key, const char *file, const char *pre, int dflt, int *out,
		    struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v)) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsBool(v))
		return hb_sw_bad(err, file, pre, key, v, "expected true or false");
	*out = cJSON_IsTrue(v);
	return 0;
}

/* String of 1..size-1 characters without control characters. */
int hb_sw_get_str(const cJSON *obj, const char *key, const char *file, const char *pre, int required,
		   const char *dflt, char *out, size_t size, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char why[96];

	if (!v || cJSON_IsNull(v)) {
		if (required)
			return hb_sw_missing(err, file, pre, key);
		hb_strlcpy(out, dflt ? dflt : "", size);
		return 0;
	}
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return hb_sw_bad(err, file, pre, key, v, "expected a non-empty string");
	if (strlen(v->valuestring) >= size) {
		snprintf(why, sizeof(why), "longer than %zu characters", size - 1);
		return hb_sw_bad(err, file, pre, key, v, why);
	}
	for (const char *p = v->valuestring; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return hb_sw_bad(err, file, pre, key, v, "holds a control character");
	hb_strlcpy(out, v->valuestring, size);
	return 0;
}

const char *hb_sw_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A file named in the config: relative to the config's directory; it must exist. */
int hb_sw_get_file(const cJSON *obj, const char *key, const char *file, const char *pre, const char *dir, char *out,
		    size_t size, char *echo, size_t esize, struct hb_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char rel[HB_SWEEP_PATH_MAX];

	if (hb_sw_get_str(obj, key, file, pre, 1, NULL, rel, sizeof(rel), err) < 0)
		return -1;
	if (rel[0] == '/' || !dir || !dir[0]) {
		hb_strlcpy(out, rel, size);
	} else if ((size_t)snprintf(out, size, "%s/%s", dir, rel) >= size) {
		return hb_sw_bad(err, file, pre, key, v, "path too long");
	}
	if (!hb_path_exists(out) || hb_path_is_dir(out)) {
		char why[HB_SWEEP_PATH_MAX + 64];

		snprintf(why, sizeof(why), "no such file (looked for %s)", out);
		return hb_sw_bad(err, file, pre, key, v, why);
	}
	hb_strlcpy(echo, hb_sw_base_name(rel), esize);
	return 0;
}

