/*
 * catalog_priv.h: what the catalog's source files share (not public API).
 *
 * catalog.c reads documents and owns the arrays; catalog_gpu.c,
 * catalog_model.c and catalog_cluster.c each parse, compare and write one
 * kind of entry.  A parser fills a zeroed struct and never touches the
 * catalog, so a failed entry leaves nothing behind.
 */
#ifndef HB_CATALOG_PRIV_H
#define HB_CATALOG_PRIV_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "catalog.h"

/* Room for "FILE: clusters[12] 'name'" and a little more. */
#define HB_WHERE_MAX 512

/* Read string field `key` into dst[size].  Absent: dflt (NULL = required).
 * Fails when the value is not a non-empty string or does not fit. */
int hb_cat_text(const cJSON *obj, const char *key, const char *where, const char *dflt, char *dst,
		size_t size, struct hb_error *err);

/* Catalog keys and link names: lower-case letters, digits, '.', '_', '-',
 * starting with a letter or digit, shorter than HB_NAME_MAX. */
int hb_cat_check_name(const char *value, const char *where, const char *key, struct hb_error *err);

/* Optional JSON boolean; *out = dflt when absent. */
int hb_cat_bool_opt(const cJSON *obj, const char *key, const char *where, int dflt, int *out,
		    struct hb_error *err);

/* Parsers.  `cat` is only read: a power-capped variant looks up its base, a
 * cluster its GPU types. */
int hb_cat_parse_gpu(const struct hb_catalog *cat, const cJSON *obj, const char *where, struct hb_gpu *g,
		     struct hb_error *err);
int hb_cat_parse_model(const cJSON *obj, const char *where, struct hb_model *m, struct hb_error *err);
int hb_cat_parse_cluster(const struct hb_catalog *cat, const cJSON *obj, const char *where,
			 struct hb_cluster *c, struct hb_error *err);

/* cJSON_Add*ToObject that remembers the first failure (out of memory). */
struct hb_jw {
	cJSON *obj;   /* object being filled */
	int failed;   /* 1 once an allocation failed */
};
void hb_jw_str(struct hb_jw *w, const char *key, const char *value);
void hb_jw_num(struct hb_jw *w, const char *key, double value);
void hb_jw_bool(struct hb_jw *w, const char *key, int value);
void hb_jw_add(struct hb_jw *w, const char *key, cJSON *item);
/* Returns w->obj, or NULL (after freeing it) if anything failed. */
cJSON *hb_jw_finish(struct hb_jw *w);

#endif
