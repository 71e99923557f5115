/*
 * plugin.h: policies built outside the tree (include/hetbatch/policy.h),
 * loaded from shared objects into the registry (policy.h).
 *
 * hb_plugin_load dlopens FILE, checks its `hetbatch_plugin` descriptor
 * (API version, names, required callbacks), hands it the host's function
 * table (plugin_api.c) and appends its policies to the registry after the
 * built-in ones, so `--policy NAME`, help, sweeps and results see them as
 * they see a built-in.  Loading is for the start of a command, before any
 * run: the registry is the process's, and a run on another thread must not
 * see it change.  hb_plugin_unload_all, at exit, closes them all.
 */
#ifndef HB_PLUGIN_H
#define HB_PLUGIN_H

#include "error.h"

struct hb_plugin;
struct hb_policy_api;

/* Load the plugin at path (a name without '/' is taken in the current
 * directory, as a user typing `--policy-plugin las.so` means).  Loading the
 * same file twice is a no-op.  Errors name the file: not loadable (not a
 * shared object, missing, a library it needs missing), no hetbatch_plugin
 * symbol, another API version, an invalid or duplicate policy. */
int hb_plugin_load(const char *path, struct hb_error *err);
/* Register the policies of a descriptor made in memory by the embedding
 * program (the Python package's policies: api/hetbatch.h), with the checks
 * of hb_plugin_load; origin names it in messages and results (its
 * "file").  The same descriptor twice is a no-op.  hb_plugin_remove drops
 * such a descriptor's policies again (0), or -1 when pl is not one. */
int hb_plugin_add(const struct hb_plugin *pl, const char *origin, struct hb_error *err);
int hb_plugin_remove(const struct hb_plugin *pl);
/* Plugins loaded so far, and the file of the i-th (load order). */
int hb_plugin_count(void);
const char *hb_plugin_path(int i);
/* Drop every plugin's policies from the registry and close the files. */
void hb_plugin_unload_all(void);

/* The host's function table (plugin_api.c). */
extern const struct hb_policy_api hb_plugin_host_api;

#endif
