/*
 * import_pollux.c: Pollux's published T4 profiles -> placement, scalability,
 * gradstats and single-GPU compute rows (see import.h; the table readers are
 * import_tables.c), plus the helpers the importers share (warnings, the
 * import transaction, directory lists, catalog names).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fileio.h"
#include "import.h"
#include "import_priv.h"
#include "interrupt.h"
#include "strutil.h"

#define SOURCE "import:pollux"

/* ------------------------------------------------------------------------ */
/* Helpers shared by the importers                                           */

void hb_import_warn(struct hb_import_stats *stats, const char *fmt, ...)
{
	char buf[sizeof(stats->warn[0])];
	va_list ap;

	if (!stats)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (int i = 0; i < stats->nwarn; i++)
		if (strcmp(stats->warn[i], buf) == 0)
			return;
	if (stats->nwarn == HB_IMPORT_MAX_WARN) {
		stats->nwarn_dropped++;
		return;
	}
	memcpy(stats->warn[stats->nwarn++], buf, sizeof(buf));
}

int hb_import_begin(struct hb_profdb *db, const char *source, const char *path, struct hb_import_stats *stats,
		    struct hb_error *err)
{
	struct hb_run_info run;

	memset(&run, 0, sizeof(run));
	hb_strlcpy(run.kind, "import", sizeof(run.kind));
	hb_strlcpy(run.backend, "none", sizeof(run.backend));
	/* device says what was imported; the run did not measure this host. */
	snprintf(run.device, sizeof(run.device), "%s %.100s", source, path);
	hb_utc_iso_now(run.started_at, sizeof(run.started_at));
	if (hb_profdb_begin(db, err) < 0)
		return -1;
	if (hb_profdb_add_run(db, &run, &stats->run_id, err) < 0) {
		hb_profdb_rollback(db);
		stats->run_id = 0;
		return -1;
	}
	return 0;
}

static void zero_counts(struct hb_import_stats *s)
{
	s->compute = s->memory = s->bucket = s->allreduce = s->allreduce_fit = 0;
	s->placement = s->scalability = s->gradstats = 0;
	s->run_id = 0;
	s->nfits = 0;
}

int hb_import_end(struct hb_profdb *db, int ok, struct hb_import_stats *stats, struct hb_error *err)
{
	/* SIGINT/SIGTERM during the import: nothing of it is kept */
	if (ok && hb_interrupted()) {
		hb_interrupt_error(err, "import");
		ok = 0;
	}
	if (ok && hb_profdb_commit(db, err) == 0)
		return 0;
	hb_profdb_rollback(db);
	zero_counts(stats);
	return -1;
}

int hb_import_join(char *out, size_t size, const char *a, const char *b, struct hb_error *err)
{
	size_t n = strlen(a);
	int slash = n > 0 && a[n - 1] == '/';

	if ((size_t)snprintf(out, size, "%s%s%s", a, slash ? "" : "/", b) >= size)
		return hb_input_error(err, "%s/%s: path too long", a, b);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void hb_import_free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int hb_import_list_dir(const char *dir, int want_dirs, char ***names, int *n, struct hb_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **out = NULL;
	int cap = 0;

	*names = NULL;
	*n = 0;
	if (!d)
		return hb_input_error(err, "%s: cannot open directory: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path) ||
		    stat(path, &sb) != 0)
			continue;
		if (want_dirs ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode))
			continue;
		if (*n == cap) {
			int ncap = cap ? 2 * cap : 16;
			char **nn = realloc(out, (size_t)ncap * sizeof(*nn));

			if (!nn)
				goto oom;
			out = nn;
			cap = ncap;
		}
		if (!(out[*n] = strdup(e->d_name)))
			goto oom;
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(out, (size_t)*n, sizeof(*out), cmp_names);
	*names = out;
	return 0;
oom:
	closedir(d);
	hb_import_free_names(out, *n);
	*n = 0;
	return hb_runtime_error(err, "%s: out of memory listing the directory", dir);
}

void hb_import_gpu_name(const struct hb_catalog *cat, const char *raw, char *out, size_t size,
			struct hb_import_stats *stats)
{
	const struct hb_gpu *g = cat ? hb_catalog_gpu(cat, raw) : NULL;

	hb_strlcpy(out, g ? g->name : raw, size);
	if (cat && !g)
		hb_import_warn(stats, "GPU '%s' is not in the catalog (no name or alias matches); stored as spelled",
			       raw);
}

void hb_import_model_name(const struct hb_catalog *cat, const char *raw, char *out, size_t size,
			  struct hb_import_stats *stats)
{
	const struct hb_model *m = cat ? hb_catalog_model(cat, raw) : NULL;

	hb_strlcpy(out, m ? m->name : raw, size);
	if (cat && !m)
		hb_import_warn(stats, "model '%s' is not in the catalog; stored as spelled", raw);
}

/* ------------------------------------------------------------------------ */
/* Pollux                                                                     */

static int import_app(struct hb_import_tables *x, const char *appdir, struct hb_error *err)
{
	char path[4096];
	int nval = 0;

	if (hb_import_join(path, sizeof(path), appdir, "placements.csv", err) < 0 ||
	    hb_import_read_placements(x, path, err) < 0)
		return -1;
	if (hb_import_join(path, sizeof(path), appdir, "scalability.csv", err) < 0)
		return -1;
	if (hb_path_exists(path)) {
		if (hb_import_read_scalability(x, path, err) < 0)
			return -1;
	} else {
		hb_import_warn(x->stats, "%s: no scalability.csv", appdir);
	}
	if (hb_import_read_validations(x, appdir, &nval, err) < 0)
		return -1;
	if (nval == 0)
		hb_import_warn(x->stats, "%s: no validation-<batch>.csv files (no gradient statistics)", appdir);
	return 0;
}

static void pollux_model_name(const struct hb_catalog *cat, const char *app, char *out, size_t size,
			      struct hb_import_stats *stats)
{
	char prefixed[96];

	snprintf(prefixed, sizeof(prefixed), "pollux-%s", app);
	if (cat && !hb_catalog_model(cat, app) && hb_catalog_model(cat, prefixed))
		hb_import_model_name(cat, prefixed, out, size, stats);
	else
		hb_import_model_name(cat, app, out, size, stats);
}

int hb_import_pollux(struct hb_profdb *db, const struct hb_catalog *cat, const char *dir,
		     struct hb_import_stats *stats, struct hb_error *err)
{
	struct hb_import_tables x;
	char path[4096], **apps = NULL;
	int napps = 0, single, ok = 1;

	memset(stats, 0, sizeof(*stats));
	if (!hb_path_is_dir(dir))
		return hb_input_error(err, "%s: not a directory (expected Pollux profiles: one directory per "
				      "application with placements.csv, scalability.csv, validation-*.csv)", dir);
	if (hb_import_join(path, sizeof(path), dir, "placements.csv", err) < 0)
		return -1;
	single = hb_path_exists(path);
	if (!single && hb_import_list_dir(dir, 1, &apps, &napps, err) < 0)
		return -1;
	if (!single) {
		int keep = 0;

		for (int i = 0; i < napps; i++) {
			char sub[4096];

			if (hb_import_join(sub, sizeof(sub), dir, apps[i], err) < 0 ||
			    hb_import_join(path, sizeof(path), sub, "placements.csv", err) < 0) {
				hb_import_free_names(apps, napps);
				return -1;
			}
			if (hb_path_exists(path)) {
				char *t = apps[keep];

				apps[keep++] = apps[i];
				apps[i] = t;
			} else {
				hb_import_warn(stats, "%s: no placements.csv; not a Pollux application, skipped", sub);
			}
		}
		for (int i = keep; i < napps; i++)
			free(apps[i]);
		napps = keep;
		if (napps == 0) {
			free(apps);
			return hb_input_error(err, "%s: no Pollux application directories (with placements.csv)", dir);
		}
	}
	if (hb_import_begin(db, SOURCE, dir, stats, err) < 0) {
		hb_import_free_names(apps, napps);
		return -1;
	}
	memset(&x, 0, sizeof(x));
	x.db = db;
	x.source = SOURCE;
	x.stats = stats;
	hb_import_gpu_name(cat, "t4", x.gpu, sizeof(x.gpu), stats);
	for (int i = 0; ok && i < (single ? 1 : napps); i++) {
		char name[64];

		if (single) {
			hb_import_base_name(dir, name, sizeof(name));
			hb_strlcpy(path, dir, sizeof(path));
		} else {
			hb_strlcpy(name, apps[i], sizeof(name));
			ok = hb_import_join(path, sizeof(path), dir, apps[i], err) == 0;
		}
		pollux_model_name(cat, name, x.model, sizeof(x.model), stats);
		ok = ok && import_app(&x, path, err) == 0;
	}
	hb_import_free_names(apps, napps);
	return hb_import_end(db, ok, stats, err);
}
