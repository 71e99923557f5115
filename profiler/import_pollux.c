/*
 * import_pollux.c: Pollux's published T4 profiles -> placement, scalability,
 * gradstats and single-GPU compute rows (see import.h), plus the helpers the
 * three importers share (warnings, the import transaction, directory lists,
 * catalog names).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "csv.h"
#include "fileio.h"
#include "import.h"
#include "interrupt.h"
#include "strutil.h"

#define SOURCE "import:pollux"
#define MAX_LOCAL_BS 10000000L   /* sanity bound on a per-GPU batch */
#define MAX_TIME_S 1e6           /* sanity bound on one step, s */

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

struct pollux_ctx {
	struct hb_profdb *db;
	struct hb_import_stats *stats;
	char gpu[64];                  /* catalog name of the T4 */
	char model[64];                /* catalog (or directory) name of the application */
};

/* Natural keys already seen in one file, to count a repeated row once
 * (linear scan: the published files have at most a few thousand rows). */
struct keyset {
	char (*key)[64];
	int n, cap;
};

/* 1 if key was already in ks, else add it and return 0 (also on OOM:
 * only the duplicate report would be lost). */
static int keyset_seen(struct keyset *ks, const char *key)
{
	for (int i = 0; i < ks->n; i++)
		if (strcmp(ks->key[i], key) == 0)
			return 1;
	if (ks->n == ks->cap) {
		int ncap = ks->cap ? 2 * ks->cap : 256;
		char (*nk)[64] = realloc(ks->key, (size_t)ncap * sizeof(*nk));

		if (!nk)
			return 0;
		ks->key = nk;
		ks->cap = ncap;
	}
	hb_strlcpy(ks->key[ks->n++], key, sizeof(ks->key[0]));
	return 0;
}

/* A time in [0, MAX_TIME_S]; positive additionally requires > 0. */
static int csv_time(struct hb_csv *c, int col, int positive, double *out, struct hb_error *err)
{
	if (hb_csv_double_range(c, col, 0.0, MAX_TIME_S, out, err) < 0)
		return -1;
	if (positive && !(*out > 0))
		return hb_input_error(err, "%s:%ld: field '%s': value '%s' must be > 0", c->path, c->line,
				      c->header[col], c->field[col]);
	return 0;
}

/* Pollux placement: GPUs per node, one digit per node ("13" = 1 + 3 GPUs). */
static int check_placement(struct hb_csv *c, int col, const char *s, struct hb_error *err)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (s[i] < '1' || s[i] > '9')
			n = 0;
	if (n == 0 || n >= sizeof(((struct hb_placement_row *)0)->placement))
		return hb_input_error(err, "%s:%ld: field '%s': value '%.64s' is not a placement (GPUs per node, "
				      "one digit 1-9 per node, e.g. '22')", c->path, c->line, c->header[col], s);
	return 0;
}

/* Open path and find the required columns. */
static int open_table(struct hb_csv *c, const char *path, const char *const *cols, int *idx,
		      struct hb_import_stats *stats, struct hb_error *err)
{
	if (hb_csv_open(c, path, err) < 0)
		return -1;
	stats->files++;
	if (hb_csv_header(c, cols, idx, err) < 0) {
		hb_csv_close(c);
		return -1;
	}
	return 0;
}

static int read_placements(struct pollux_ctx *x, const char *path, struct hb_error *err)
{
	static const char *const cols[] = { "placement", "local_bsz", "step_time", "sync_time", NULL };
	struct hb_csv c;
	struct keyset seen = { 0 };
	int idx[4], rc;

	if (open_table(&c, path, cols, idx, x->stats, err) < 0)
		return -1;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		struct hb_placement_row r;
		char key[64];
		const char *pl;
		long bs;
		int dup;

		memset(&r, 0, sizeof(r));
		if (hb_csv_check_width(&c, err) < 0 || hb_csv_str(&c, idx[0], &pl, err) < 0 ||
		    check_placement(&c, idx[0], pl, err) < 0 ||
		    hb_csv_long_range(&c, idx[1], 1, MAX_LOCAL_BS, &bs, err) < 0 ||
		    csv_time(&c, idx[2], 1, &r.step_s, err) < 0 || csv_time(&c, idx[3], 0, &r.sync_s, err) < 0)
			goto fail;
		hb_strlcpy(r.model, x->model, sizeof(r.model));
		hb_strlcpy(r.gpu, x->gpu, sizeof(r.gpu));
		hb_strlcpy(r.placement, pl, sizeof(r.placement));
		hb_strlcpy(r.source, SOURCE, sizeof(r.source));
		r.local_bs = (int)bs;
		if (hb_profdb_put_placement(x->db, &r, err) < 0)
			goto fail;
		snprintf(key, sizeof(key), "%s,%ld", pl, bs);
		dup = keyset_seen(&seen, key);
		if (dup)
			hb_import_warn(x->stats, "%s:%ld: placement %s, local_bsz %ld repeats an earlier row; the later "
				       "is kept", c.path, c.line, pl, bs);
		x->stats->placement += !dup;
		if (strcmp(pl, "1") == 0) {
			/* One GPU: the solvers' single-device point.  Pollux's
			 * step_time already includes its (tiny) sync_time. */
			struct hb_compute_row cr;

			memset(&cr, 0, sizeof(cr));
			hb_strlcpy(cr.gpu, x->gpu, sizeof(cr.gpu));
			hb_strlcpy(cr.model, x->model, sizeof(cr.model));
			hb_strlcpy(cr.source, SOURCE, sizeof(cr.source));
			cr.local_bs = (int)bs;
			cr.n_vsw = 1;
			cr.total_s = r.step_s;
			cr.run_id = x->stats->run_id;
			if (hb_profdb_put_compute(x->db, &cr, err) < 0)
				goto fail;
			x->stats->compute += !dup;
		}
	}
	if (rc < 0)
		goto fail;
	free(seen.key);
	hb_csv_close(&c);
	return 0;
fail:
	free(seen.key);
	hb_csv_close(&c);
	return -1;
}

static int read_scalability(struct pollux_ctx *x, const char *path, struct hb_error *err)
{
	static const char *const cols[] = { "num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time",
					    NULL };
	struct hb_csv c;
	struct keyset seen = { 0 };
	int idx[5], rc;

	if (open_table(&c, path, cols, idx, x->stats, err) < 0)
		return -1;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		struct hb_scalability_row r;
		char key[64];
		long nodes, reps, bs;

		memset(&r, 0, sizeof(r));
		if (hb_csv_check_width(&c, err) < 0 || hb_csv_long_range(&c, idx[0], 1, 100000, &nodes, err) < 0 ||
		    hb_csv_long_range(&c, idx[1], 1, 1000000, &reps, err) < 0 ||
		    hb_csv_long_range(&c, idx[2], 1, MAX_LOCAL_BS, &bs, err) < 0 ||
		    csv_time(&c, idx[3], 1, &r.step_s, err) < 0 || csv_time(&c, idx[4], 0, &r.sync_s, err) < 0)
			goto fail;
		if (reps < nodes) {
			hb_input_error(err, "%s:%ld: field 'num_replicas': value '%ld' is fewer than num_nodes %ld",
				       c.path, c.line, reps, nodes);
			goto fail;
		}
		hb_strlcpy(r.model, x->model, sizeof(r.model));
		hb_strlcpy(r.gpu, x->gpu, sizeof(r.gpu));
		hb_strlcpy(r.source, SOURCE, sizeof(r.source));
		r.num_nodes = (int)nodes;
		r.num_replicas = (int)reps;
		r.local_bs = (int)bs;
		if (hb_profdb_put_scalability(x->db, &r, err) < 0)
			goto fail;
		snprintf(key, sizeof(key), "%ld,%ld,%ld", nodes, reps, bs);
		if (keyset_seen(&seen, key))
			hb_import_warn(x->stats, "%s:%ld: num_nodes %ld, num_replicas %ld, local_bsz %ld repeats an "
				       "earlier row; the later is kept", c.path, c.line, nodes, reps, bs);
		else
			x->stats->scalability++;
	}
	if (rc < 0)
		goto fail;
	free(seen.key);
	hb_csv_close(&c);
	return 0;
fail:
	free(seen.key);
	hb_csv_close(&c);
	return -1;
}

/* "validation-<B>.csv" -> B; 0 if the name is not of that form. */
static long validation_batch(const char *name)
{
	const char *p = name + strlen("validation-");
	char digits[32];
	size_t n;
	long b;

	if (strncmp(name, "validation-", strlen("validation-")) != 0)
		return 0;
	n = strlen(p);
	if (n <= 4 || strcmp(p + n - 4, ".csv") != 0 || n - 4 >= sizeof(digits))
		return -1;
	memcpy(digits, p, n - 4);
	digits[n - 4] = '\0';
	if (hb_parse_long_range(digits, 1, 0x7fffffffL, &b) < 0 || digits[0] < '0' || digits[0] > '9')
		return -1;
	return b;
}

static int read_validation(struct pollux_ctx *x, const char *path, long batch, struct hb_error *err)
{
	static const char *const cols[] = { "progress", "iteration", "metric", "grad_sqr", "grad_var", NULL };
	struct hb_csv c;
	int idx[5], rc, epoch = 0;

	if (open_table(&c, path, cols, idx, x->stats, err) < 0)
		return -1;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		struct hb_gradstats_row r;

		memset(&r, 0, sizeof(r));
		if (hb_csv_check_width(&c, err) < 0 || hb_csv_double_range(&c, idx[0], 0, 1e18, &r.progress, err) < 0 ||
		    hb_csv_long_range(&c, idx[1], 0, 0x7fffffffL, &r.iteration, err) < 0 ||
		    hb_csv_double(&c, idx[2], &r.metric, err) < 0 || hb_csv_double(&c, idx[3], &r.grad_sqr, err) < 0 ||
		    hb_csv_double(&c, idx[4], &r.grad_var, err) < 0)
			goto fail;
		hb_strlcpy(r.model, x->model, sizeof(r.model));
		hb_strlcpy(r.source, SOURCE, sizeof(r.source));
		r.batch = (int)batch;
		r.epoch = epoch++;
		if (hb_profdb_put_gradstats(x->db, &r, err) < 0)
			goto fail;
		x->stats->gradstats++;
	}
	if (rc < 0)
		goto fail;
	hb_csv_close(&c);
	return 0;
fail:
	hb_csv_close(&c);
	return -1;
}

static int import_app(struct pollux_ctx *x, const char *appdir, struct hb_error *err)
{
	char path[4096];
	char **files = NULL;
	int nfiles = 0, rc = -1, nval = 0;

	if (hb_import_join(path, sizeof(path), appdir, "placements.csv", err) < 0 || read_placements(x, path, err) < 0)
		return -1;
	if (hb_import_join(path, sizeof(path), appdir, "scalability.csv", err) < 0)
		return -1;
	if (hb_path_exists(path)) {
		if (read_scalability(x, path, err) < 0)
			return -1;
	} else {
		hb_import_warn(x->stats, "%s: no scalability.csv", appdir);
	}
	if (hb_import_list_dir(appdir, 0, &files, &nfiles, err) < 0)
		return -1;
	for (int i = 0; i < nfiles; i++) {
		long batch = validation_batch(files[i]);

		if (batch == 0)
			continue;
		if (hb_import_join(path, sizeof(path), appdir, files[i], err) < 0)
			goto out;
		if (batch < 0) {
			hb_input_error(err, "%s: file name: expected validation-<global batch>.csv", path);
			goto out;
		}
		if (read_validation(x, path, batch, err) < 0)
			goto out;
		nval++;
	}
	if (nval == 0)
		hb_import_warn(x->stats, "%s: no validation-<batch>.csv files (no gradient statistics)", appdir);
	rc = 0;
out:
	hb_import_free_names(files, nfiles);
	return rc;
}

/* Last path component of dir, ignoring trailing slashes. */
static void base_name(const char *dir, char *out, size_t size)
{
	size_t n = strlen(dir);
	const char *start;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	start = dir + n;
	while (start > dir && start[-1] != '/')
		start--;
	n -= (size_t)(start - dir);
	if (n >= size)
		n = size - 1;
	memcpy(out, start, n);
	out[n] = '\0';
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
	struct pollux_ctx x;
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
	x.stats = stats;
	hb_import_gpu_name(cat, "t4", x.gpu, sizeof(x.gpu), stats);
	for (int i = 0; ok && i < (single ? 1 : napps); i++) {
		char name[64];

		if (single) {
			base_name(dir, name, sizeof(name));
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
