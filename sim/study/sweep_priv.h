/*
 * sweep_priv.h: what the sweep's source files share and nothing else uses.
 *
 * Configuration fields (sweep_fields.c).  Every getter reads obj[key] and
 * reports "FILE: field 'PRE KEY': value V: why" (PRE a path such as
 * "clusters[1].add[0]."); absent or null is the default unless required.
 */
#ifndef HB_SWEEP_PRIV_H
#define HB_SWEEP_PRIV_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "sweep.h"

#define FIELD_MAX 160        /* a field path in messages */

/* Input errors: a field's bad value, a missing field (both return -1). */
int hb_sw_bad(struct hb_error *err, const char *file, const char *pre, const char *key, const cJSON *v,
	      const char *why);
int hb_sw_missing(struct hb_error *err, const char *file, const char *pre, const char *key);
/* Unknown keys (the message lists the known ones) and keys given twice. */
int hb_sw_check_keys(const cJSON *obj, const char *file, const char *pre, const char *const *allowed,
		     struct hb_error *err);
int hb_sw_object_at(const cJSON *v, const char *file, const char *pre, const char *key, struct hb_error *err);
/* A finite number in [lo, hi]. */
int hb_sw_get_num(const cJSON *obj, const char *key, const char *file, const char *pre, int required, double lo,
		  double hi, double dflt, double *out, struct hb_error *err);
/* A number in (0, hi]. */
int hb_sw_get_pos(const cJSON *obj, const char *key, const char *file, const char *pre, double hi, double dflt,
		  double *out, struct hb_error *err);
int hb_sw_get_int(const cJSON *obj, const char *key, const char *file, const char *pre, int required, long lo,
		  long hi, long dflt, long *out, struct hb_error *err);
int hb_sw_get_bool(const cJSON *obj, const char *key, const char *file, const char *pre, int dflt, int *out,
		   struct hb_error *err);
/* 1..size-1 characters, no control characters. */
int hb_sw_get_str(const cJSON *obj, const char *key, const char *file, const char *pre, int required,
		  const char *dflt, char *out, size_t size, struct hb_error *err);
/* A file that exists, relative to dir unless absolute, into out; echo
 * gets its base name. */
int hb_sw_get_file(const cJSON *obj, const char *key, const char *file, const char *pre, const char *dir, char *out,
		   size_t size, char *echo, size_t esize, struct hb_error *err);
const char *hb_sw_base_name(const char *path);

/* "ok", "cannot run", "failed", "not run" (enum hb_sweep_status). */
const char *hb_sweep_status_name(int status);

/* results.db at path (a temporary the caller renames). */
int hb_sweep_write_db(const struct hb_sweep *sw, const struct hb_sweep_agg *agg, int na, const char *path,
		      struct hb_error *err);

#endif
