/*
 * json.h: cJSON helpers that validate as they read.
 *
 * Every getter takes `where`, a human path to the object being read
 * ("gpus.json: gpus[3] 'v100'"), so a bad value is reported as
 * "gpus.json: gpus[3] 'v100': field 'fp32_tflops': value -1 out of range [0.01, 10000]".
 * Parse errors give the file, line and column.
 */
#ifndef HB_JSON_H
#define HB_JSON_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "error.h"

/* Parse text (name is used in messages); the caller cJSON_Delete()s the
 * result.  Text after the value and a key that appears twice in one object
 * (anywhere in the document) are input errors: cJSON keeps both members
 * and its getters return the first, so {"arrival_s": 0, "arrival_s": 50}
 * would silently mean 0. */
cJSON *hb_json_parse(const char *text, size_t len, const char *name, struct hb_error *err);
cJSON *hb_json_load_file(const char *path, struct hb_error *err);

/* The duplicate-key check of hb_json_parse, for readers that parse with
 * cJSON themselves (a streamed element): an input error "NAME: PATH:
 * duplicate key 'K'" for the first key that repeats in an object of root,
 * PATH being where that object is ("jobs[3]", "nodes.node0"). */
int hb_json_check_unique(const cJSON *root, const char *name, struct hb_error *err);

/* Required number in [lo, hi]. */
int hb_json_num(const cJSON *obj, const char *key, const char *where, double lo, double hi,
		double *out, struct hb_error *err);
/* Optional number: *out = dflt when the key is absent (null counts as absent). */
int hb_json_num_opt(const cJSON *obj, const char *key, const char *where, double lo, double hi,
		    double dflt, double *out, struct hb_error *err);
/* Required integer in [lo, hi] (a number with no fractional part). */
int hb_json_int(const cJSON *obj, const char *key, const char *where, long lo, long hi,
		long *out, struct hb_error *err);
int hb_json_int_opt(const cJSON *obj, const char *key, const char *where, long lo, long hi,
		    long dflt, long *out, struct hb_error *err);
/* Required non-empty string; *out points into obj. */
int hb_json_str(const cJSON *obj, const char *key, const char *where, const char **out,
		struct hb_error *err);
int hb_json_str_opt(const cJSON *obj, const char *key, const char *where, const char *dflt,
		    const char **out, struct hb_error *err);
/* Required array (possibly empty) or object. */
int hb_json_array(const cJSON *obj, const char *key, const char *where, const cJSON **out,
		  struct hb_error *err);
int hb_json_object(const cJSON *obj, const char *key, const char *where, const cJSON **out,
		   struct hb_error *err);

/* Reject keys not in the NULL-terminated allowed list (catches typos such as
 * "fp32_tflop"). */
int hb_json_check_keys(const cJSON *obj, const char *where, const char *const *allowed,
		       struct hb_error *err);

/* Print a document (formatted) and a newline to out; a NULL doc (a failed
 * build) or a failed print is an out-of-memory error.  Does not take doc.
 * This and hb_json_write_file always write valid JSON: bytes of strings
 * that are not well-formed UTF-8 are written as \ufffd (U+FFFD), and a
 * negative zero as 0. */
int hb_json_print(FILE *out, const cJSON *doc, struct hb_error *err);

/* Add key: v, or key: null when v is not finite (JSON has no NaN). */
void hb_json_add_num(cJSON *o, const char *key, double v);

/* Serialise (formatted) and write atomically with a trailing newline. */
int hb_json_write_file(const char *path, const cJSON *root, struct hb_error *err);

#endif
