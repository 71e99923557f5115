/*
 * analytic_gen.c: the analytic model (models/analytic.h) written into a
 * profile database: the profiler drives the generator, so the models layer
 * never touches the database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytic_gen.h"
#include "interrupt.h"
#include "strutil.h"    /* hb_strlcpy, hb_strcaseeq */

/* Resolve the requested names (or all) to catalog indices. */
static int select_items(const struct hb_catalog *cat, const char *const *names, int n, int is_gpu, int *idx,
			int *count, struct hb_error *err)
{
	int total = is_gpu ? cat->ngpus : cat->nmodels;

	if (!names || n <= 0) {
		for (int i = 0; i < total; i++)
			idx[i] = i;
		*count = total;
		return 0;
	}
	*count = 0;
	for (int i = 0; i < n; i++) {
		int found = -1;

		for (int j = 0; j < total && found < 0; j++) {
			const char *name = is_gpu ? cat->gpus[j].name : cat->models[j].name;

			if (hb_strcaseeq(name, names[i]))
				found = j;
		}
		if (found < 0 && is_gpu) {
			const struct hb_gpu *g = hb_catalog_gpu(cat, names[i]);

			if (g)
				found = (int)(g - cat->gpus);
		}
		if (found < 0)
			return hb_input_error(err, "analytic profiles: unknown %s '%s' (see 'hetbatch catalog %s')",
					      is_gpu ? "gpu" : "model", names[i], is_gpu ? "gpus" : "models");
		for (int k = 0; k < *count; k++)
			if (idx[k] == found)
				found = -1;
		if (found >= 0)
			idx[(*count)++] = found;
	}
	return 0;
}

static int gen_pair(struct hb_profdb *db, const struct hb_gpu *g, const struct hb_model *m, int64_t run_id,
		    struct hb_analytic_stats *st, struct hb_error *err)
{
	int grid[HB_ANALYTIC_MAX_LBS_STEPS];
	int ngrid = hb_analytic_lbs_grid(m, grid, HB_ANALYTIC_MAX_LBS_STEPS);
	int cap = HB_ANALYTIC_MAX_VSW;

	for (int i = 0; i < ngrid; i++) {
		struct hb_memory_row mr;
		int b = grid[i];
		int nmax = hb_analytic_max_vsw(g, m, b, cap);

		memset(&mr, 0, sizeof(mr));
		hb_strlcpy(mr.gpu, g->name, sizeof(mr.gpu));
		hb_strlcpy(mr.model, m->name, sizeof(mr.model));
		mr.local_bs = b;
		mr.max_vsw = nmax;
		hb_strlcpy(mr.source, "analytic", sizeof(mr.source));
		if (hb_profdb_put_memory(db, &mr, err) < 0)
			return -1;
		st->memory_rows++;
		if (nmax == 0) {
			if (i == 0)
				st->infeasible++;
			break;
		}
		cap = nmax;
		for (int n = 1; n <= nmax; n++) {
			struct hb_compute_row row;

			if (hb_analytic_compute(g, m, b, n, &row, NULL, err) < 0)
				return -1;
			row.run_id = run_id;
			if (hb_profdb_put_compute(db, &row, err) < 0)
				return -1;
			st->compute_rows++;
		}
	}
	return 0;
}

static int gen_fits(const struct hb_catalog *cat, struct hb_profdb *db, struct hb_analytic_stats *st,
		    struct hb_error *err)
{
	struct hb_allreduce_fit *fits;
	int n, rc = 0;

	if (hb_analytic_catalog_fits(cat, &fits, &n, err) < 0)
		return -1;
	for (int i = 0; i < n && rc == 0; i++) {
		rc = hb_profdb_put_allreduce_fit(db, &fits[i], err);
		if (rc == 0)
			st->fit_rows++;
	}
	free(fits);
	return rc;
}

int hb_analytic_generate(const struct hb_catalog *cat, const struct hb_analytic_request *req,
			 struct hb_profdb *db, struct hb_analytic_stats *stats, struct hb_error *err)
{
	struct hb_analytic_request none = { 0 };
	struct hb_analytic_stats st = { 0 };
	struct hb_run_info run;
	int *gi = NULL, *mi = NULL, ng = 0, nm = 0, rc = -1, done = 0;

	if (!req)
		req = &none;
	gi = malloc(sizeof(int) * (size_t)(cat->ngpus > 0 ? cat->ngpus : 1));
	mi = malloc(sizeof(int) * (size_t)(cat->nmodels > 0 ? cat->nmodels : 1));
	if (!gi || !mi) {
		hb_runtime_error(err, "analytic profiles: out of memory");
		goto out;
	}
	if (select_items(cat, req->gpus, req->ngpus, 1, gi, &ng, err) < 0 ||
	    select_items(cat, req->models, req->nmodels, 0, mi, &nm, err) < 0)
		goto out;
	for (int i = 0; i < ng; i++)
		if (hb_analytic_check_gpu(&cat->gpus[gi[i]], err) < 0)
			goto out;
	for (int j = 0; j < nm; j++)
		if (hb_analytic_check_model(&cat->models[mi[j]], err) < 0)
			goto out;

	memset(&run, 0, sizeof(run));
	hb_strlcpy(run.kind, "analytic", sizeof(run.kind));
	snprintf(run.device, sizeof(run.device), "analytic model v%d", HB_ANALYTIC_VERSION);
	hb_strlcpy(run.backend, "none", sizeof(run.backend));
	if (hb_profdb_begin(db, err) < 0)
		goto out;
	if (hb_profdb_add_run(db, &run, &st.run_id, err) < 0)
		goto fail;
	for (int j = 0; j < nm; j++) {
		const struct hb_model *m = &cat->models[mi[j]];

		if (m->nbuckets > 0) {
			if (hb_profdb_put_buckets(db, m->name, m->buckets, m->nbuckets, "analytic", err) < 0)
				goto fail;
			st.bucket_rows += m->nbuckets;
		}
	}
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < nm; j++) {
			/* SIGINT/SIGTERM: roll back, the database stays as it was */
			if (hb_interrupted()) {
				hb_interrupt_error(err, "analytic profiles");
				goto fail;
			}
			if (gen_pair(db, &cat->gpus[gi[i]], &cat->models[mi[j]], st.run_id, &st, err) < 0)
				goto fail;
			if (req->progress)
				req->progress(req->progress_ctx, ++done, ng * nm);
		}
	if (gen_fits(cat, db, &st, err) < 0)
		goto fail;
	if (hb_profdb_commit(db, err) < 0)
		goto fail;
	st.gpus = ng;
	st.models = nm;
	if (stats)
		*stats = st;
	rc = 0;
	goto out;
fail:
	hb_profdb_rollback(db);
out:
	free(gi);
	free(mi);
	return rc;
}
