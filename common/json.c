#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "input.h"
#include "json.h"
#include "strutil.h"

/* Key of an object member for a message: at most 40 bytes, control
 * characters as '?', so the message stays on one line. */
static void quote_key(const char *k, char *buf, size_t size)
{
	size_t n = 0;

	for (const char *c = k ? k : "?"; *c && n + 1 < size && n < 40; c++)
		buf[n++] = (unsigned char)*c < 0x20 ? '?' : *c;
	buf[n] = '\0';
}

/* An object member and its place in the document, for sorting. */
struct member {
	const cJSON *m;
	size_t pos;
};

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->m->string ? x->m->string : "", y->m->string ? y->m->string : "");

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The member of obj that repeats an earlier key, the first such in the
 * document, or NULL.  A few members are compared pairwise; more are sorted
 * (a JABAS cluster_info or a catalog can hold thousands of keys in one
 * object), O(n log n).  *oom is set when the sort has no memory. */
static const cJSON *first_duplicate(const cJSON *obj, int *oom)
{
	const cJSON *it, *dup = NULL;
	struct member *v;
	size_t n = 0, k = 0, best = (size_t)-1;

	cJSON_ArrayForEach(it, obj)
		n++;
	if (n < 2)
		return NULL;
	if (n <= 16) {
		cJSON_ArrayForEach(it, obj)
			for (const cJSON *jt = obj->child; jt != it; jt = jt->next)
				if (it->string && jt->string && strcmp(it->string, jt->string) == 0)
					return it;
		return NULL;
	}
	v = malloc(n * sizeof(*v));
	if (!v) {
		*oom = 1;
		return NULL;
	}
	cJSON_ArrayForEach(it, obj) {
		v[k].m = it;
		v[k].pos = k;
		k++;
	}
	qsort(v, n, sizeof(*v), cmp_member);
	/* in a run of equal keys, each member after the first repeats it */
	for (k = 1; k < n; k++)
		if (cmp_member(&(struct member){ v[k].m, 0 }, &(struct member){ v[k - 1].m, 0 }) == 0 &&
		    v[k].pos < best) {
			best = v[k].pos;
			dup = v[k].m;
		}
	free(v);
	return dup;
}

/* Depth-first walk; path is the JSON path of node ("jobs[3]", "gpus[0].name"). */
static int check_unique(const cJSON *node, char *path, size_t cap, const char *name, int depth,
			struct hb_error *err)
{
	const cJSON *it, *dup;
	size_t len = strlen(path);
	int oom = 0, i = 0;
	char key[48];

	if (depth > 10000)
		return 0; /* cJSON refuses nesting past CJSON_NESTING_LIMIT anyway */
	if (cJSON_IsObject(node)) {
		dup = first_duplicate(node, &oom);
		if (oom)
			return hb_runtime_error(err, "%s: out of memory checking JSON keys", name);
		if (dup) {
			char val[48];
			char *text = cJSON_PrintUnformatted(dup);

			quote_key(dup->string, key, sizeof(key));
			/* the second member's value, cut to one short line */
			quote_key(text ? text : "?", val, sizeof(val));
			if (text && strlen(text) > 40)
				memcpy(val + 37, "...", 4);
			cJSON_free(text);
			return hb_input_error(err,
					      "%s: field '%s%s%s': value %s: duplicate key (a key may appear once in an "
					      "object)",
					      name, path, path[0] ? "." : "", key, val);
		}
	}
	if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
		return 0;
	cJSON_ArrayForEach(it, node) {
		if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
			if (cJSON_IsObject(node)) {
				quote_key(it->string, key, sizeof(key));
				snprintf(path + len, cap - len, "%s%s", len ? "." : "", key);
			} else {
				snprintf(path + len, cap - len, "[%d]", i);
			}
			if (check_unique(it, path, cap, name, depth + 1, err) < 0)
				return -1;
			path[len] = '\0';
		}
		i++;
	}
	return 0;
}

int hb_json_check_unique(const cJSON *root, const char *name, struct hb_error *err)
{
	char path[256] = "";

	return check_unique(root, path, sizeof(path), name, 0, err);
}

cJSON *hb_json_parse(const char *text, size_t len, const char *name, struct hb_error *err)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);

	if (!root) {
		long line = 1, col = 1;
		const char *p;

		if (!end || end < text || end > text + len)
			end = text + len;
		for (p = text; p < end; p++) {
			if (*p == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		/* Quote at most 20 bytes of context, on one line. */
		char near[21];
		size_t k = 0;

		for (p = end; p < text + len && *p && k < sizeof(near) - 1; p++)
			near[k++] = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
		near[k] = '\0';
		hb_input_error(err, "%s:%ld:%ld: invalid JSON near '%s'", name, line, col,
			       k ? near : "<end of file>");
		return NULL;
	}
	/* Trailing garbage after the value is an error too. */
	if (end) {
		while (end < text + len && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
			end++;
		if (end < text + len && *end) {
			long line = 1;
			char near[21];
			size_t k = 0;

			for (const char *p = text; p < end; p++)
				line += *p == '\n';
			for (const char *p = end; p < text + len && *p && k < sizeof(near) - 1; p++)
				near[k++] = ((unsigned char)*p < 0x20) ? ' ' : *p;
			near[k] = '\0';
			cJSON_Delete(root);
			hb_input_error(err, "%s:%ld: trailing text after the JSON value: '%s' (one value per file)", name,
				       line, near);
			return NULL;
		}
	}
	if (hb_json_check_unique(root, name, err) < 0) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

cJSON *hb_json_load_file(const char *path, struct hb_error *err)
{
	char *text;
	size_t len;
	cJSON *root;

	/* A directory, missing file, binary data or a file of hundreds of MiB
	 * fails here, naming path; a UTF-8 byte-order mark is skipped. */
	if (hb_read_text_file(path, 0, &text, &len, err) < 0)
		return NULL;
	root = hb_json_parse(text, len, path, err);
	free(text);
	return root;
}

static const cJSON *field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return v && !cJSON_IsNull(v) ? v : NULL;
}

int hb_json_num_opt(const cJSON *obj, const char *key, const char *where, double lo, double hi,
		    double dflt, double *out, struct hb_error *err)
{
	const cJSON *v = field(obj, key);

	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return hb_input_error(err, "%s: field '%s': expected a number", where, key);
	if (v->valuedouble < lo || v->valuedouble > hi)
		return hb_input_error(err, "%s: field '%s': value %g out of range [%g, %g]", where, key,
				      v->valuedouble, lo, hi);
	*out = v->valuedouble;
	return 0;
}

int hb_json_num(const cJSON *obj, const char *key, const char *where, double lo, double hi,
		double *out, struct hb_error *err)
{
	if (!field(obj, key))
		return hb_input_error(err, "%s: field '%s': missing", where, key);
	return hb_json_num_opt(obj, key, where, lo, hi, 0.0, out, err);
}

int hb_json_int_opt(const cJSON *obj, const char *key, const char *where, long lo, long hi,
		    long dflt, long *out, struct hb_error *err)
{
	const cJSON *v = field(obj, key);
	double d;

	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsNumber(v))
		return hb_input_error(err, "%s: field '%s': expected an integer", where, key);
	d = v->valuedouble;
	if (d != floor(d) || !isfinite(d))
		return hb_input_error(err, "%s: field '%s': value %g is not an integer", where, key, d);
	if (d < (double)lo || d > (double)hi)
		return hb_input_error(err, "%s: field '%s': value %g out of range [%ld, %ld]", where, key, d, lo, hi);
	*out = (long)d;
	return 0;
}

int hb_json_int(const cJSON *obj, const char *key, const char *where, long lo, long hi,
		long *out, struct hb_error *err)
{
	if (!field(obj, key))
		return hb_input_error(err, "%s: field '%s': missing", where, key);
	return hb_json_int_opt(obj, key, where, lo, hi, 0, out, err);
}

int hb_json_str_opt(const cJSON *obj, const char *key, const char *where, const char *dflt,
		    const char **out, struct hb_error *err)
{
	const cJSON *v = field(obj, key);

	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return hb_input_error(err, "%s: field '%s': expected a non-empty string", where, key);
	*out = v->valuestring;
	return 0;
}

int hb_json_str(const cJSON *obj, const char *key, const char *where, const char **out,
		struct hb_error *err)
{
	if (!field(obj, key))
		return hb_input_error(err, "%s: field '%s': missing", where, key);
	return hb_json_str_opt(obj, key, where, NULL, out, err);
}

int hb_json_array(const cJSON *obj, const char *key, const char *where, const cJSON **out,
		  struct hb_error *err)
{
	const cJSON *v = field(obj, key);

	if (!v)
		return hb_input_error(err, "%s: field '%s': missing", where, key);
	if (!cJSON_IsArray(v))
		return hb_input_error(err, "%s: field '%s': expected an array", where, key);
	*out = v;
	return 0;
}

int hb_json_object(const cJSON *obj, const char *key, const char *where, const cJSON **out,
		   struct hb_error *err)
{
	const cJSON *v = field(obj, key);

	if (!v)
		return hb_input_error(err, "%s: field '%s': missing", where, key);
	if (!cJSON_IsObject(v))
		return hb_input_error(err, "%s: field '%s': expected an object", where, key);
	*out = v;
	return 0;
}

int hb_json_check_keys(const cJSON *obj, const char *where, const char *const *allowed,
		       struct hb_error *err)
{
	const cJSON *it;

	if (!cJSON_IsObject(obj))
		return hb_input_error(err, "%s: expected an object", where);
	cJSON_ArrayForEach(it, obj) {
		int ok = 0;

		for (int i = 0; allowed[i]; i++)
			if (it->string && strcmp(it->string, allowed[i]) == 0)
				ok = 1;
		if (!ok) {
			/* Quote at most 40 bytes of the key, control characters as '?',
			 * so the message stays on one line. */
			char key[41];
			size_t k = 0;

			for (const char *c = it->string ? it->string : "?"; *c && k < sizeof(key) - 1; c++)
				key[k++] = (unsigned char)*c < 0x20 ? '?' : *c;
			key[k] = '\0';
			return hb_input_error(err, "%s: unknown field '%s'", where, key);
		}
	}
	return 0;
}

/* cJSON_Print's text made valid JSON whatever the document holds: a byte of
 * a string value or key that is not part of well-formed UTF-8 (a file name
 * or trace field in Latin-1, a cut sequence) becomes the escape \ufffd
 * (U+FFFD, the replacement character), where cJSON copies it as is and a
 * strict reader rejects the whole document; and a number printed "-0" (cJSON
 * writes -0.0 so) becomes "0".  Everything else is copied: outside strings
 * cJSON writes only ASCII.  A malloc'd string, or NULL without memory. */
static char *print_clean(const cJSON *doc)
{
	char *text = doc ? cJSON_Print(doc) : NULL, *clean, *w;
	const unsigned char *p, *end;
	size_t n;
	int in_str = 0;

	if (!text)
		return NULL;
	n = strlen(text);
	/* at most 6 bytes out per byte in */
	clean = malloc(6 * n + 1);
	if (!clean) {
		free(text);
		return NULL;
	}
	w = clean;
	p = (const unsigned char *)text;
	end = p + n;
	while (p < end) {
		if (in_str) {
			size_t k = hb_utf8_seq_len(p, (size_t)(end - p));

			if (k == 0) {
				memcpy(w, "\\ufffd", 6);
				w += 6;
				p++;
				continue;
			}
			if (*p == '\\' && p + 1 < end) { /* an escape: copy both, so \" stays inside */
				*w++ = (char)*p++;
				*w++ = (char)*p++;
				continue;
			}
			if (*p == '"')
				in_str = 0;
			memcpy(w, p, k);
			w += k;
			p += k;
			continue;
		}
		if (*p == '"')
			in_str = 1;
		else if (*p == '-' && p + 1 < end && p[1] == '0' &&
			 (p + 2 >= end || !strchr("0123456789.eE", p[2]))) {
			p++; /* "-0" -> "0" */
			continue;
		}
		*w++ = (char)*p++;
	}
	*w = '\0';
	free(text);
	return clean;
}

int hb_json_print(FILE *out, const cJSON *doc, struct hb_error *err)
{
	char *text = print_clean(doc);

	if (!text)
		return hb_runtime_error(err, "out of memory printing JSON");
	fprintf(out, "%s\n", text);
	free(text);
	return 0;
}

int hb_json_write_file(const char *path, const cJSON *root, struct hb_error *err)
{
	char *text = print_clean(root);
	size_t n;
	int rc;

	if (!text)
		return hb_runtime_error(err, "%s: out of memory serialising JSON", path);
	n = strlen(text);
	text = realloc(text, n + 2);
	if (!text)
		return hb_runtime_error(err, "%s: out of memory", path);
	text[n] = '\n';
	text[n + 1] = '\0';
	rc = hb_write_file_atomic(path, text, n + 1, err);
	free(text);
	return rc;
}

void hb_json_add_num(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, hb_no_neg_zero(v, -1));
	else
		cJSON_AddNullToObject(o, key);
}
