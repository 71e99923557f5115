/*
 * import_sia.c: Sia's per-GPU-type profiles (SOSP'23 artifact
 * siasosp23/artifacts, sia-simulator/traces/) -> placement, scalability,
 * gradstats and single-GPU compute rows, one GPU per type (see import.h).
 *
 * The artifact keeps Pollux's file formats, once per GPU type:
 * APP/placements-TYPE.csv, APP/scalability-TYPE.csv, and the GPU-independent
 * APP/validation-B.csv (ART applications.py:Application.__init__ reads them
 * so).  The types and what they become are the table below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "import.h"
#include "import_priv.h"
#include "strutil.h"

#define SOURCE "import:sia"

/* One GPU type of the artifact (its file-name suffix) and what the importer
 * does with it.  Hardware from the paper's 4.2 "Hardware measurements". */
struct sia_type {
	const char *suffix;  /* as in placements-<suffix>.csv */
	const char *gpu;     /* catalog GPU; NULL = skipped */
	int gpus_per_node;   /* ART simulator_config.py:cluster_ngpus_per_node */
	const char *why;     /* skipped: why */
};

static const struct sia_type TYPES[] = {
	/* t4: g4dn.12xlarge, 4 x T4 16 GB (the files equal Pollux's) */
	{ "aws", "t4", 4, NULL },
	/* rtx: 8 x RTX 2080Ti 11 GB, 50 Gb/s Ethernet */
	{ "rtx", "rtx-2080ti", 8, NULL },
	/* a100: DGX-A100, 8 x A100 40 GB; "dgx-ext" is the extended-batch-range
	 * profile the simulator's default cluster uses */
	{ "dgx-ext", "a100-40gb", 8, NULL },
	/* quad: 4 x Quadro RTX 6000 24 GB, 200 Gb/s InfiniBand */
	{ "quad", "quadro-rtx-6000", 4, NULL },
	{ "dgx", NULL, 8, "the same A100 as dgx-ext, profiled over a smaller batch range" },
	{ "azure", NULL, 8, "its GPU is not documented in the paper or the artifact" },
};
#define NTYPES ((int)(sizeof(TYPES) / sizeof(TYPES[0])))

struct sia_skips {
	int type[NTYPES];   /* files skipped per skipped type */
	int plain;          /* placements.csv / scalability.csv without a suffix */
};

/* "placements-dgx-ext.csv" with prefix "placements-" -> the suffix type, or
 * NULL if the name is not prefix + something + ".csv". */
static const char *suffix_of(const char *name, const char *prefix, char *out, size_t size)
{
	size_t np = strlen(prefix), n = strlen(name);

	if (strncmp(name, prefix, np) != 0 || n <= np + 4 || strcmp(name + n - 4, ".csv") != 0 ||
	    n - np - 4 >= size)
		return NULL;
	memcpy(out, name + np, n - np - 4);
	out[n - np - 4] = '\0';
	return out;
}

static const struct sia_type *find_type(const char *suffix)
{
	for (int i = 0; i < NTYPES; i++)
		if (strcmp(TYPES[i].suffix, suffix) == 0)
			return &TYPES[i];
	return NULL;
}

static int unknown_type(const char *path, const char *suffix, struct hb_error *err)
{
	char known[256];
	size_t len = 0;

	known[0] = '\0';
	for (int i = 0; i < NTYPES && len < sizeof(known); i++)
		len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "", TYPES[i].suffix);
	return hb_input_error(err, "%s: file name: GPU type '%s' is not one of Sia's (%s)", path, suffix, known);
}

/* One application directory: every typed table, then the validations. */
static int import_app(struct hb_import_tables *x, const struct hb_catalog *cat, const char *appdir,
		      const char *app, struct sia_skips *skips, struct hb_error *err)
{
	char **files = NULL, path[4096], suffix[64];
	int nfiles = 0, ntyped = 0, nval = 0, rc = -1;

	hb_import_model_name(cat, app, x->model, sizeof(x->model), x->stats);
	if (hb_import_list_dir(appdir, 0, &files, &nfiles, err) < 0)
		return -1;
	for (int i = 0; i < nfiles; i++) {
		const struct sia_type *t;
		char scal[4096], name[96];

		if (strcmp(files[i], "placements.csv") == 0 || strcmp(files[i], "scalability.csv") == 0) {
			skips->plain++;
			continue;
		}
		if (hb_import_join(path, sizeof(path), appdir, files[i], err) < 0)
			goto out;
		if (!suffix_of(files[i], "placements-", suffix, sizeof(suffix))) {
			/* a scalability file needs its placements file */
			if (suffix_of(files[i], "scalability-", suffix, sizeof(suffix))) {
				snprintf(name, sizeof(name), "placements-%s.csv", suffix);
				if (!find_type(suffix)) {
					unknown_type(path, suffix, err);
					goto out;
				}
				if (hb_import_join(scal, sizeof(scal), appdir, name, err) < 0)
					goto out;
				if (!hb_path_exists(scal))
					hb_import_warn(x->stats, "%s: no %s beside it; skipped", path, name);
			}
			continue;
		}
		if (!(t = find_type(suffix))) {
			unknown_type(path, suffix, err);
			goto out;
		}
		if (!t->gpu) {
			skips->type[t - TYPES]++;
			continue;
		}
		hb_import_gpu_name(cat, t->gpu, x->gpu, sizeof(x->gpu), x->stats);
		x->node_gpus = t->gpus_per_node;
		if (hb_import_read_placements(x, path, err) < 0)
			goto out;
		snprintf(name, sizeof(name), "scalability-%s.csv", suffix);
		if (hb_import_join(scal, sizeof(scal), appdir, name, err) < 0)
			goto out;
		if (hb_path_exists(scal)) {
			if (hb_import_read_scalability(x, scal, err) < 0)
				goto out;
		} else {
			hb_import_warn(x->stats, "%s: no %s", appdir, name);
		}
		ntyped++;
	}
	if (ntyped == 0)
		hb_import_warn(x->stats, "%s: no placements-<type>.csv of an imported type", appdir);
	if (hb_import_read_validations(x, appdir, &nval, err) < 0)
		goto out;
	if (nval == 0)
		hb_import_warn(x->stats, "%s: no validation-<batch>.csv files (no gradient statistics)", appdir);
	rc = 0;
out:
	hb_import_free_names(files, nfiles);
	return rc;
}

/* 1 if dir holds a placements-<type>.csv (any type). */
static int is_app_dir(const char *dir, struct hb_error *err)
{
	char **files = NULL, suffix[64];
	int n = 0, found = 0;

	if (hb_import_list_dir(dir, 0, &files, &n, err) < 0)
		return -1;
	for (int i = 0; i < n && !found; i++)
		found = suffix_of(files[i], "placements-", suffix, sizeof(suffix)) != NULL;
	hb_import_free_names(files, n);
	return found;
}

/* Pipeline-parallel applications (ART applications.py:PMPApplication):
 * their step_time is one micro-batch's forward pass per stage, not a
 * data-parallel step, so the placement table would misread them. */
static int is_pmp(const char *app)
{
	size_t n = strlen(app);

	return n > 4 && strcmp(app + n - 4, "_pmp") == 0;
}

static void warn_skips(const struct sia_skips *s, struct hb_import_stats *stats)
{
	for (int i = 0; i < NTYPES; i++)
		if (s->type[i])
			hb_import_warn(stats, "skipped %d placements-%s.csv %s: %s", s->type[i], TYPES[i].suffix,
				       s->type[i] == 1 ? "file" : "files", TYPES[i].why);
	if (s->plain)
		hb_import_warn(stats, "skipped %d placements.csv/scalability.csv %s without a type suffix: the "
			       "artifact's copy of aws (Pollux's T4 profiles; import pollux reads them)", s->plain,
			       s->plain == 1 ? "file" : "files");
}

int hb_import_sia(struct hb_profdb *db, const struct hb_catalog *cat, const char *dir,
		  struct hb_import_stats *stats, struct hb_error *err)
{
	struct hb_import_tables x;
	struct sia_skips skips;
	char **apps = NULL;
	int napps = 0, single, ok = 1, keep = 0;

	memset(stats, 0, sizeof(*stats));
	memset(&skips, 0, sizeof(skips));
	if (!hb_path_is_dir(dir))
		return hb_input_error(err, "%s: not a directory (expected Sia's sia-simulator/traces: one directory "
				      "per application with placements-<type>.csv, scalability-<type>.csv, "
				      "validation-*.csv)", dir);
	if ((single = is_app_dir(dir, err)) < 0)
		return -1;
	if (single) {
		char name[64];

		hb_import_base_name(dir, name, sizeof(name));
		if (is_pmp(name))
			return hb_input_error(err, "%s: pipeline-parallel profiles (step_time is one micro-batch per "
					      "stage), which hetbatch does not model", dir);
	}
	if (!single) {
		if (hb_import_list_dir(dir, 1, &apps, &napps, err) < 0)
			return -1;
		for (int i = 0; i < napps; i++) {
			char sub[4096];
			int is_app;

			if (hb_import_join(sub, sizeof(sub), dir, apps[i], err) < 0 ||
			    (is_app = is_app_dir(sub, err)) < 0) {
				hb_import_free_names(apps, napps);
				return -1;
			}
			if (is_app && is_pmp(apps[i])) {
				hb_import_warn(stats, "%s: pipeline-parallel profiles (step_time is one micro-batch "
					       "per stage), which hetbatch does not model; skipped", sub);
				is_app = 0;
			} else if (!is_app) {
				hb_import_warn(stats, "%s: no placements-<type>.csv; not a Sia application, skipped", sub);
			}
			if (is_app) {
				char *t = apps[keep];

				apps[keep++] = apps[i];
				apps[i] = t;
			}
		}
		for (int i = keep; i < napps; i++)
			free(apps[i]);
		napps = keep;
		if (napps == 0) {
			free(apps);
			return hb_input_error(err, "%s: no Sia application directories (with placements-<type>.csv)",
					      dir);
		}
	}
	if (hb_import_begin(db, SOURCE, dir, stats, err) < 0) {
		hb_import_free_names(apps, napps);
		return -1;
	}
	memset(&x, 0, sizeof(x));
	x.db = db;
	x.stats = stats;
	x.source = SOURCE;
	x.scalability_mean = 1;
	for (int i = 0; ok && i < (single ? 1 : napps); i++) {
		char name[64], path[4096];

		if (single) {
			hb_import_base_name(dir, name, sizeof(name));
			hb_strlcpy(path, dir, sizeof(path));
		} else {
			hb_strlcpy(name, apps[i], sizeof(name));
			ok = hb_import_join(path, sizeof(path), dir, apps[i], err) == 0;
		}
		ok = ok && import_app(&x, cat, path, name, &skips, err) == 0;
	}
	hb_import_free_names(apps, napps);
	if (ok)
		warn_skips(&skips, stats);
	return hb_import_end(db, ok, stats, err);
}
