/*
 * import_tables.c: the Pollux-format table readers shared by the Pollux and
 * Sia importers (see import_priv.h): placements, scalability and
 * validation-<batch>.csv files, validated field by field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "import_priv.h"
#include "strutil.h"

#define MAX_LOCAL_BS 10000000L   /* sanity bound on a per-GPU batch */
#define MAX_TIME_S 1e6           /* sanity bound on one step, s */

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
static int check_placement(struct hb_csv *c, int col, const char *s, int node_gpus, struct hb_error *err)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (s[i] < '1' || s[i] > '9')
			n = 0;
	if (n == 0 || n >= sizeof(((struct hb_placement_row *)0)->placement))
		return hb_input_error(err, "%s:%ld: field '%s': value '%.64s' is not a placement (GPUs per node, "
				      "one digit 1-9 per node, e.g. '22')", c->path, c->line, c->header[col], s);
	for (size_t i = 0; node_gpus > 0 && i < n; i++)
		if (s[i] - '0' > node_gpus)
			return hb_input_error(err, "%s:%ld: field '%s': value '%s' puts %d GPUs on one node; this "
					      "GPU's nodes hold %d", c->path, c->line, c->header[col], s, s[i] - '0',
					      node_gpus);
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

int hb_import_read_placements(struct hb_import_tables *x, const char *path, struct hb_error *err)
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
		    check_placement(&c, idx[0], pl, x->node_gpus, err) < 0 ||
		    hb_csv_long_range(&c, idx[1], 1, MAX_LOCAL_BS, &bs, err) < 0 ||
		    csv_time(&c, idx[2], 1, &r.step_s, err) < 0 || csv_time(&c, idx[3], 0, &r.sync_s, err) < 0)
			goto fail;
		hb_strlcpy(r.model, x->model, sizeof(r.model));
		hb_strlcpy(r.gpu, x->gpu, sizeof(r.gpu));
		hb_strlcpy(r.placement, pl, sizeof(r.placement));
		hb_strlcpy(r.source, x->source, sizeof(r.source));
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
			hb_strlcpy(cr.source, x->source, sizeof(cr.source));
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

/* Rows of one scalability file kept for averaging (mean mode): sums of
 * step and sync time per key, in order of first appearance. */
struct scal_acc {
	struct hb_scalability_row *row; /* step_s, sync_s hold sums until the end */
	int *count;
	int n, cap;
};

/* Add r to the accumulator; *dup = 1 if its key was there already. */
static int scal_add(struct scal_acc *a, const struct hb_scalability_row *r, int *dup, struct hb_error *err)
{
	for (int i = 0; i < a->n; i++) {
		struct hb_scalability_row *q = &a->row[i];

		if (q->num_nodes == r->num_nodes && q->num_replicas == r->num_replicas && q->local_bs == r->local_bs) {
			q->step_s += r->step_s;
			q->sync_s += r->sync_s;
			a->count[i]++;
			*dup = 1;
			return 0;
		}
	}
	if (a->n == a->cap) {
		int ncap = a->cap ? 2 * a->cap : 256;
		struct hb_scalability_row *nr = realloc(a->row, (size_t)ncap * sizeof(*nr));
		int *nc;

		if (!nr)
			return hb_runtime_error(err, "out of memory reading scalability rows");
		a->row = nr;
		if (!(nc = realloc(a->count, (size_t)ncap * sizeof(*nc))))
			return hb_runtime_error(err, "out of memory reading scalability rows");
		a->count = nc;
		a->cap = ncap;
	}
	a->row[a->n] = *r;
	a->count[a->n++] = 1;
	*dup = 0;
	return 0;
}

int hb_import_read_scalability(struct hb_import_tables *x, const char *path, struct hb_error *err)
{
	static const char *const cols[] = { "num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time",
					    NULL };
	struct hb_csv c;
	struct keyset seen = { 0 };
	struct scal_acc acc = { 0 };
	long first_dup = 0, ndup = 0;
	int idx[5], rc;

	if (open_table(&c, path, cols, idx, x->stats, err) < 0)
		return -1;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		struct hb_scalability_row r;
		char key[64];
		long nodes, reps, bs;
		int dup = 0;

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
		if (x->node_gpus > 0 && reps > nodes * x->node_gpus) {
			hb_input_error(err, "%s:%ld: field 'num_replicas': value '%ld' is more than %ld node(s) x %d "
				       "GPUs hold", c.path, c.line, reps, nodes, x->node_gpus);
			goto fail;
		}
		hb_strlcpy(r.model, x->model, sizeof(r.model));
		hb_strlcpy(r.gpu, x->gpu, sizeof(r.gpu));
		hb_strlcpy(r.source, x->source, sizeof(r.source));
		r.num_nodes = (int)nodes;
		r.num_replicas = (int)reps;
		r.local_bs = (int)bs;
		if (x->scalability_mean) {
			if (scal_add(&acc, &r, &dup, err) < 0)
				goto fail;
			if (dup && !ndup++)
				first_dup = c.line;
			continue;
		}
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
	for (int i = 0; i < acc.n; i++) {
		acc.row[i].step_s /= acc.count[i];
		acc.row[i].sync_s /= acc.count[i];
		if (hb_profdb_put_scalability(x->db, &acc.row[i], err) < 0)
			goto fail;
		x->stats->scalability++;
	}
	if (ndup)
		hb_import_warn(x->stats, "%s:%ld: %ld rows (the first at this line) repeat an earlier (num_nodes, "
			       "num_replicas, local_bsz); each key keeps the mean of its rows", c.path, first_dup, ndup);
	free(acc.row);
	free(acc.count);
	free(seen.key);
	hb_csv_close(&c);
	return 0;
fail:
	free(acc.row);
	free(acc.count);
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

static int read_validation(struct hb_import_tables *x, const char *path, long batch, struct hb_error *err)
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
		hb_strlcpy(r.source, x->source, sizeof(r.source));
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


int hb_import_read_validations(struct hb_import_tables *x, const char *dir, int *nfiles, struct hb_error *err)
{
	char path[4096];
	char **files = NULL;
	int n = 0, rc = -1;

	*nfiles = 0;
	if (hb_import_list_dir(dir, 0, &files, &n, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		long batch = validation_batch(files[i]);

		if (batch == 0)
			continue;
		if (hb_import_join(path, sizeof(path), dir, files[i], err) < 0)
			goto out;
		if (batch < 0) {
			hb_input_error(err, "%s: file name: expected validation-<global batch>.csv", path);
			goto out;
		}
		if (read_validation(x, path, batch, err) < 0)
			goto out;
		(*nfiles)++;
	}
	rc = 0;
out:
	hb_import_free_names(files, n);
	return rc;
}

void hb_import_base_name(const char *dir, char *out, size_t size)
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
