/*
 * sweep.c: a sweep's clusters, replays and runner (sweep.h says what is
 * decided where).
 *
 * Cluster variants.  A variant is its base cluster (built-in or a user's
 * file) plus groups of added nodes.  It is written as a cluster JSON
 * document, the base as hb_cluster_to_json gives it plus the new groups, and
 * loaded with hb_catalog_load_json into a catalog of its own (the built-in
 * one, the base's file, the variant).  One catalog per cluster, because a
 * variant needs a new name ("<base>-v<i>") and the per-cluster model
 * settings (JABAS Table 4's gamma and batch bounds, keyed by cluster name in
 * hb_model_bounds) must follow it: the variant's catalog copies the base's
 * overrides to the variant's name, so "jabas-a plus 0 GPUs" and jabas-a
 * itself run identically.  Added nodes get the links of the first base node
 * with the same GPU type, else those of the base's first node: the same
 * link classes, so the profile database has their all-reduce fits.
 *
 * The default profile database is made current for the catalog of the
 * base clusters before any variant exists, so the sweep reuses the cached
 * file `hetbatch sim` uses instead of rebuilding it for a catalog hash no
 * other command shares; variants add no GPU type, model or link class.
 *
 * Workload and seeds.  A point with seed S runs what `hetbatch --seed S sim
 * --trace` runs: S seeds the simulation's streams, the model draws for a
 * trace without models (Philly) and the synthetic generator.  So replays are
 * built per (cluster, load, seed).  The load factor divides a trace file's
 * arrival times (as --load) and multiplies the generator's arrival rate
 * (synthetic.h), which draws the jobs for that rate.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "default_db.h"
#include "fileio.h"
#include "interrupt.h"
#include "metrics.h"
#include "profdb.h"
#include "progress.h"
#include "results.h"
#include "strutil.h"
#include "sweep.h"

/* ---- clusters ------------------------------------------------------------------------ */

/* Prefix err with the config field that named the failing input. */
static int field_error(struct hb_error *err, const struct hb_sweep_config *cfg, int ci, const char *key,
		       const char *value)
{
	hb_error_prefix(err, "%s: field 'clusters[%d].%s': value \"%s\"", cfg->path, ci, key, value);
	return -1;
}

/* The node of base whose links an added node of GPU type gi copies. */
static const struct hb_node *link_model(const struct hb_cluster *base, int gi)
{
	for (int i = 0; i < base->nnodes; i++)
		if (base->nodes[i].gpu == gi)
			return &base->nodes[i];
	return &base->nodes[0];
}

/* The variant's JSON: the base plus one named group per addition. */
static cJSON *variant_json(const struct hb_catalog *cat, const struct hb_cluster *base,
			   const struct hb_sweep_cluster *sc, const char *name, struct hb_error *err)
{
	cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "clusters");
	cJSON *cj = hb_cluster_to_json(cat, base), *groups;
	char display[HB_TEXT_MAX], source[HB_TEXT_MAX * 2];
	size_t len;

	if (!doc || !arr || !cj) {
		cJSON_Delete(doc);
		cJSON_Delete(cj);
		hb_runtime_error(err, "sweep: out of memory");
		return NULL;
	}
	cJSON_AddItemToArray(arr, cj);
	len = (size_t)snprintf(display, sizeof(display), "%.100s", base->display);
	for (int i = 0; i < sc->nadd; i++)
		len += (size_t)snprintf(display + len, len < sizeof(display) ? sizeof(display) - len : 0,
					" + %d x %d %s", sc->add[i].nodes, sc->add[i].gpus_per_node, sc->add[i].gpu);
	snprintf(source, sizeof(source), "hetbatch sweep: cluster %s plus added nodes (links as the base's); base: %.300s",
		 base->name, base->source);
	cJSON_ReplaceItemInObjectCaseSensitive(cj, "name", cJSON_CreateString(name));
	cJSON_ReplaceItemInObjectCaseSensitive(cj, "display", cJSON_CreateString(display));
	cJSON_ReplaceItemInObjectCaseSensitive(cj, "source", cJSON_CreateString(source));
	groups = cJSON_GetObjectItemCaseSensitive(cj, "groups");
	for (int i = 0; groups && i < sc->nadd; i++) {
		const struct hb_sweep_add *a = &sc->add[i];
		const struct hb_node *lm = link_model(base, hb_catalog_gpu_index(cat, a->gpu));
		cJSON *g = cJSON_CreateObject();
		char gname[32];

		snprintf(gname, sizeof(gname), "sweep-add%d", i);
		if (!g)
			break;
		cJSON_AddStringToObject(g, "name", gname);
		cJSON_AddStringToObject(g, "gpu", a->gpu);
		cJSON_AddNumberToObject(g, "nodes", a->nodes);
		cJSON_AddNumberToObject(g, "gpus_per_node", a->gpus_per_node);
		cJSON_AddStringToObject(g, "intra_link", lm->intra_link);
		cJSON_AddNumberToObject(g, "intra_bw", lm->intra_bw);
		cJSON_AddStringToObject(g, "inter_link", lm->inter_link);
		cJSON_AddNumberToObject(g, "inter_bw", lm->inter_bw);
		cJSON_AddItemToArray(groups, g);
	}
	return doc;
}

/* The variant's per-model settings: a copy of the base's overrides. */
static int inherit_overrides(struct hb_catalog *cat, const char *base, const char *name, struct hb_error *err)
{
	for (int m = 0; m < cat->nmodels; m++) {
		struct hb_model *mo = &cat->models[m];
		int n = mo->noverrides;

		for (int k = 0; k < n; k++) {
			if (strcmp(mo->overrides[k].cluster, base) != 0)
				continue;
			if (mo->noverrides >= HB_MAX_OVERRIDES)
				return hb_input_error(err, "model %s has no room for the settings of cluster %s (at most %d "
							   "per-cluster overrides)",
						      mo->name, name, HB_MAX_OVERRIDES);
			mo->overrides[mo->noverrides] = mo->overrides[k];
			hb_strlcpy(mo->overrides[mo->noverrides].cluster, name, sizeof(mo->overrides[0].cluster));
			mo->noverrides++;
		}
	}
	return 0;
}

static void cluster_info(const struct hb_catalog *cat, const struct hb_cluster *cl, const char *base,
			 struct hb_sweep_cluster_info *in)
{
	int seen[256], nseen = 0;
	size_t len = 0;

	hb_strlcpy(in->name, cl->name, sizeof(in->name));
	hb_strlcpy(in->base, base, sizeof(in->base));
	in->gpus = cl->ngpus;
	in->nodes = cl->nnodes;
	in->usd_per_h = hb_cluster_price_per_hour(cat, cl);
	in->gpu_mix[0] = '\0';
	for (int i = 0; i < cl->nnodes; i++) {
		int gi = cl->nodes[i].gpu, n = 0, dup = 0;

		for (int k = 0; k < nseen && !dup; k++)
			dup = seen[k] == gi;
		if (dup || nseen == (int)(sizeof(seen) / sizeof(seen[0])))
			continue;
		seen[nseen++] = gi;
		for (int k = i; k < cl->nnodes; k++)
			if (cl->nodes[k].gpu == gi)
				n += cl->nodes[k].ngpus;
		len += (size_t)snprintf(in->gpu_mix + len, len < sizeof(in->gpu_mix) ? sizeof(in->gpu_mix) - len : 0,
					"%s%d %s", len ? " + " : "", n, cat->gpus[gi].name);
	}
}

static int build_cluster(struct hb_sweep *sw, int ci, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	const struct hb_sweep_cluster *sc = &cfg->clusters[ci];
	struct hb_catalog *cat = &sw->cats[ci];
	const struct hb_cluster *base;
	char base_name[HB_NAME_MAX], name[HB_NAME_MAX + 16];
	cJSON *doc;
	char *text;
	int rc;

	if (hb_catalog_load_builtin(cat, err) < 0)
		return -1;
	if (hb_catalog_resolve_cluster(cat, sc->base, &base, err) < 0)
		return field_error(err, cfg, ci, "base", sc->base_echo);
	hb_strlcpy(base_name, base->name, sizeof(base_name));
	if (sc->nadd == 0) {
		if (hb_cluster_check_size(base, HB_SIM_MAX_GPUS, "sweep", err) < 0)
			return field_error(err, cfg, ci, "base", sc->base_echo);
		sw->cl[ci] = base;
		cluster_info(cat, base, base_name, &sw->info[ci]);
		return 0;
	}
	snprintf(name, sizeof(name), "%s-v%d", base_name, ci);
	if (strlen(name) >= HB_NAME_MAX)
		snprintf(name, sizeof(name), "sweep-v%d", ci);
	{
		/* the catalog keys of the added GPUs: the file may use an alias,
		 * or name a GPU file of the user's (loaded into cat here) */
		struct hb_sweep_cluster canon = *sc;

		for (int k = 0; k < sc->nadd; k++) {
			const struct hb_gpu *g = hb_catalog_gpu(cat, sc->add[k].gpu);
			char key[32];

			snprintf(key, sizeof(key), "add[%d].gpu", k);
			if (!g && hb_path_exists(sc->add[k].gpu) && hb_catalog_resolve_gpu(cat, sc->add[k].gpu, &g, err) < 0)
				return field_error(err, cfg, ci, key, sc->add[k].gpu);
			if (!g) {
				char hint[256];

				hb_input_error(err, "unknown GPU type (see 'hetbatch catalog gpus')%s",
					       hb_catalog_suggest(cat, 'g', sc->add[k].gpu, hint, sizeof(hint)));
				return field_error(err, cfg, ci, key, sc->add[k].gpu);
			}
			hb_strlcpy(canon.add[k].gpu, g->name, sizeof(canon.add[k].gpu));
		}
		doc = variant_json(cat, base, &canon, name, err);
	}
	if (!doc)
		return -1;
	text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!text)
		return hb_runtime_error(err, "sweep: out of memory");
	rc = hb_catalog_load_json(cat, text, strlen(text), "cluster variant", err);
	free(text);
	if (rc < 0 || inherit_overrides(cat, base_name, name, err) < 0) {
		hb_error_prefix(err, "%s: field 'clusters[%d].add' (cluster \"%s\")", cfg->path, ci, sc->label);
		return -1;
	}
	sw->cl[ci] = hb_catalog_cluster(cat, name);
	if (!sw->cl[ci])
		return hb_runtime_error(err, "sweep: cluster variant %s vanished from its catalog", name);
	if (hb_cluster_check_size(sw->cl[ci], HB_SIM_MAX_GPUS, "sweep", err) < 0) {
		hb_error_prefix(err, "%s: field 'clusters[%d].add' (cluster \"%s\")", cfg->path, ci, sc->label);
		return -1;
	}
	cluster_info(cat, sw->cl[ci], base_name, &sw->info[ci]);
	return 0;
}

/* The profile files: --db's, or the user's database over the default made
 * current for the built-in catalog plus the base clusters' files. */
/* 1 when array (of catalog entries) has one named name. */
static int in_array(const cJSON *array, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, array) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "name");

		if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0)
			return 1;
	}
	return 0;
}

/* Into pcat (the profile database's catalog), every GPU and model of the
 * clusters' catalogs that it lacks: the user's files an added node group
 * or the trace named (build_cluster, build_replays), so the database has
 * their analytic rows too. */
static int copy_user_entries(const struct hb_sweep *sw, struct hb_catalog *pcat, struct hb_error *err)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *gpus = doc ? cJSON_AddArrayToObject(doc, "gpus") : NULL;
	cJSON *models = doc ? cJSON_AddArrayToObject(doc, "models") : NULL;
	char *text;
	int n = 0, rc, oom = !gpus || !models;

	for (int ci = 0; ci < sw->cfg->nclusters && !oom; ci++) {
		const struct hb_catalog *cat = &sw->cats[ci];

		for (int i = 0; i < cat->ngpus && !oom; i++)
			if (!hb_catalog_gpu(pcat, cat->gpus[i].name) && !in_array(gpus, cat->gpus[i].name)) {
				cJSON *e = hb_gpu_to_json(&cat->gpus[i]);

				oom = !e || !cJSON_AddItemToArray(gpus, e);
				n++;
			}
		for (int i = 0; i < cat->nmodels && !oom; i++)
			if (!hb_catalog_model(pcat, cat->models[i].name) && !in_array(models, cat->models[i].name)) {
				cJSON *e = hb_model_to_json(&cat->models[i]);

				oom = !e || !cJSON_AddItemToArray(models, e);
				n++;
			}
	}
	text = oom || n == 0 ? NULL : cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (oom || (n > 0 && !text))
		return hb_runtime_error(err, "sweep: out of memory");
	rc = n > 0 ? hb_catalog_load_json(pcat, text, strlen(text), "the sweep's GPU and model files", err) : 0;
	free(text);
	return rc;
}

static int profile_db(struct hb_sweep *sw, const char *db_path, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_catalog pcat;
	int rc = 0;

	if (db_path)
		return hb_profile_files_resolve(NULL, db_path, &sw->profiles, err);
	memset(&pcat, 0, sizeof(pcat));
	if (hb_catalog_load_builtin(&pcat, err) < 0)
		return -1;
	for (int ci = 0; ci < cfg->nclusters && rc == 0; ci++) {
		const struct hb_cluster *cl;
		int dup = 0;

		for (int k = 0; k < ci && !dup; k++)
			dup = strcmp(cfg->clusters[k].base, cfg->clusters[ci].base) == 0;
		if (cfg->clusters[ci].base_is_file && !dup &&
		    hb_catalog_resolve_cluster(&pcat, cfg->clusters[ci].base, &cl, err) < 0)
			rc = field_error(err, cfg, ci, "base", cfg->clusters[ci].base_echo);
	}
	if (rc == 0)
		rc = copy_user_entries(sw, &pcat, err);
	if (rc == 0 && hb_profile_files_resolve(&pcat, NULL, &sw->profiles, err) < 0)
		rc = -1;
	hb_catalog_free(&pcat);
	return rc;
}

/* ---- workload -------------------------------------------------------------------------- */

/* Jobs of the generator for one load and seed. */
static int synth_specs(const struct hb_sweep_config *cfg, int li, int si, struct hb_jobspec **specs, long *n,
		       struct hb_error *err)
{
	struct hb_synth_options o = cfg->trace.synth;
	struct hb_trace_reader *r;
	int rc;

	o.seed = cfg->seeds[si];
	o.load = cfg->loads[li];
	if (hb_synth_open(&o, &cfg->trace.topt, &r, err) < 0) {
		hb_error_prefix(err, "%s: field 'trace.synthetic'", cfg->path);
		return -1;
	}
	rc = hb_trace_drain(r, specs, n, err);
	hb_trace_close(r);
	return rc;
}

/* The job set of (li, si) from the replay of the largest cluster, which
 * holds every job some cluster can run (sweep.h). */
static int build_jobset(struct hb_sweep *sw, int li, int si, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_sweep_jobset *js = &sw->jobsets[li * cfg->nseeds + si];
	const struct hb_replay *big;
	int cbig = 0;

	for (int ci = 1; ci < cfg->nclusters; ci++)
		if (sw->cl[ci]->ngpus > sw->cl[cbig]->ngpus)
			cbig = ci;
	big = &sw->replays[(cbig * cfg->nloads + li) * cfg->nseeds + si];
	js->read = big->read;
	js->njobs = big->njobs;
	js->excluded = big->oversize;
	js->max_excluded_gpus = big->max_oversize_gpus;
	js->horizon_s = NAN;
	js->jobs = calloc((size_t)(big->njobs > 0 ? big->njobs : 1), sizeof(*js->jobs));
	js->of_spec = malloc((size_t)(big->read > 0 ? big->read : 1) * sizeof(*js->of_spec));
	if (!js->jobs || !js->of_spec)
		return hb_runtime_error(err, "sweep: out of memory for the job set of %ld jobs", big->read);
	for (long k = 0; k < big->read; k++)
		js->of_spec[k] = -1;
	for (long k = 0; k < big->njobs; k++) {
		const struct hb_replay_job *j = &big->jobs[k];
		struct hb_sweep_job *o = &js->jobs[k];

		hb_strlcpy(o->name, j->name, sizeof(o->name));
		hb_strlcpy(o->model, j->model->name, sizeof(o->model));
		o->arrival_s = j->arrival_s;
		o->gpus = j->gpus;
		for (int ci = 0; ci < cfg->nclusters; ci++)
			o->clusters += j->gpus <= sw->cl[ci]->ngpus;
		js->partial += o->clusters < cfg->nclusters;
		if (j->index >= 0 && j->index < big->read)
			js->of_spec[j->index] = k;
	}
	return 0;
}

const struct hb_sweep_jobset *hb_sweep_jobset_of(const struct hb_sweep *sw, int li, int si)
{
	return &sw->jobsets[li * sw->cfg->nseeds + si];
}

static int build_replays(struct hb_sweep *sw, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	const struct hb_sweep_trace *t = &cfg->trace;
	struct hb_jobspec *file_specs = NULL;
	long file_n = 0;
	int nrp = cfg->nclusters * cfg->nloads * cfg->nseeds, rc = 0;
	const char *where = t->synthetic ? "synthetic" : t->file_echo;

	sw->replays = calloc((size_t)nrp, sizeof(*sw->replays));
	sw->replay_ok = calloc((size_t)nrp, sizeof(*sw->replay_ok));
	sw->jobsets = calloc((size_t)(cfg->nloads * cfg->nseeds), sizeof(*sw->jobsets));
	if (!sw->replays || !sw->replay_ok || !sw->jobsets)
		return hb_runtime_error(err, "sweep: out of memory");
	if (!t->synthetic) {
		struct hb_trace_reader *r;

		if (hb_trace_open(t->file, t->format, &t->topt, &r, err) < 0)
			return -1;
		sw->format = hb_trace_get_format(r);
		rc = hb_trace_drain(r, &file_specs, &file_n, err);
		hb_trace_close(r);
		if (rc < 0)
			return -1;
		sw->trace_read = file_n;
		/* Model files the trace names go into every cluster's catalog,
		 * then the fields take their entries' names. */
		for (int ci = 0; ci < cfg->nclusters; ci++)
			if (hb_replay_load_models(&sw->cats[ci], file_specs, file_n, sw->format, t->file,
						  ci == cfg->nclusters - 1, err) < 0) {
				free(file_specs);
				return -1;
			}
	} else {
		sw->format = HB_TRACE_SYNTHETIC;
	}
	for (int li = 0; li < cfg->nloads && rc == 0; li++) {
		for (int si = 0; si < cfg->nseeds && rc == 0; si++) {
			struct hb_jobspec *specs = file_specs;
			long n = file_n;
			struct hb_replay_opts ro;

			if (t->synthetic && synth_specs(cfg, li, si, &specs, &n, err) < 0) {
				rc = -1;
				break;
			}
			if (t->synthetic && li == 0 && si == 0)
				sw->trace_read = n;
			hb_replay_opts_init(&ro);
			ro.load = t->synthetic ? 1.0 : cfg->loads[li];
			ro.seed = cfg->seeds[si];
			ro.duration_from_trace = t->duration_from_trace;
			for (int ci = 0; ci < cfg->nclusters && rc == 0; ci++) {
				int k = (ci * cfg->nloads + li) * cfg->nseeds + si;

				rc = hb_replay_from_specs(&sw->cats[ci], sw->cl[ci], specs, n, sw->format, where, &ro,
							  &sw->replays[k], err);
				sw->replay_ok[k] = rc == 0 && sw->replays[k].njobs > 0;
			}
			if (rc == 0)
				rc = build_jobset(sw, li, si, err);
			if (rc == 0 && li == 0 && si == 0)
				for (long k = 0; k < n; k++)
					sw->with_duration += specs[k].duration_s > 0;
			if (t->synthetic)
				free(specs);
		}
	}
	free(file_specs);
	if (rc < 0)
		hb_error_prefix(err, "%s: field 'trace'", cfg->path);
	return rc;
}

/* What profile each cluster's replays read (issue 39): per GPU type x
 * every model any of its replays runs, into sw->info[ci].profiles. */
static int record_profiles(struct hb_sweep *sw, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_profdb *db;
	int rc = 0;

	if (hb_profile_files_open(&sw->profiles, &db, err) < 0)
		return -1;
	for (int ci = 0; ci < cfg->nclusters && rc == 0; ci++) {
		const struct hb_catalog *cat = &sw->cats[ci];
		const struct hb_model **used = calloc((size_t)cat->nmodels + 1, sizeof(*used));
		int nused = 0;

		if (!used) {
			rc = hb_runtime_error(err, "sweep: out of memory");
			break;
		}
		for (int k = ci * cfg->nloads * cfg->nseeds; k < (ci + 1) * cfg->nloads * cfg->nseeds; k++)
			for (long j = 0; j < sw->replays[k].njobs; j++) {
				int seen = 0;

				for (int q = 0; q < nused && !seen; q++)
					seen = used[q] == sw->replays[k].jobs[j].model;
				if (!seen && nused < cat->nmodels)
					used[nused++] = sw->replays[k].jobs[j].model;
			}
		rc = hb_profdb_cluster_uses(db, cat, sw->cl[ci], used, nused, &sw->info[ci].profiles,
					    &sw->info[ci].nprofiles, err);
		free(used);
	}
	hb_profdb_close(db);
	return rc;
}

int hb_sweep_setup(struct hb_sweep *sw, const struct hb_sweep_config *cfg, const char *db_path, struct hb_error *err)
{
	memset(sw, 0, sizeof(*sw));
	sw->cfg = cfg;
	sw->npoints = hb_sweep_npoints(cfg);
	sw->cats = calloc((size_t)cfg->nclusters, sizeof(*sw->cats));
	sw->cl = calloc((size_t)cfg->nclusters, sizeof(*sw->cl));
	sw->info = calloc((size_t)cfg->nclusters, sizeof(*sw->info));
	sw->rows = calloc((size_t)(sw->npoints > 0 ? sw->npoints : 1), sizeof(*sw->rows));
	sw->jobrows = calloc((size_t)(sw->npoints > 0 ? sw->npoints : 1), sizeof(*sw->jobrows));
	if (!sw->cats || !sw->cl || !sw->info || !sw->rows || !sw->jobrows)
		return hb_runtime_error(err, "sweep: out of memory");
	for (int i = 0; i < sw->npoints; i++)
		sw->rows[i].id = i;
	for (int ci = 0; ci < cfg->nclusters; ci++)
		if (build_cluster(sw, ci, err) < 0)
			return -1;
	/* the replays first: they load the model files the trace names */
	if (build_replays(sw, err) < 0 || profile_db(sw, db_path, err) < 0 || record_profiles(sw, err) < 0)
		return -1;
	return 0;
}

void hb_sweep_free(struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;

	if (!cfg)
		return;
	if (sw->replays)
		for (int k = 0; k < cfg->nclusters * cfg->nloads * cfg->nseeds; k++)
			hb_replay_free(&sw->replays[k]);
	for (int ci = 0; sw->cats && ci < cfg->nclusters; ci++)
		hb_catalog_free(&sw->cats[ci]);
	for (int ci = 0; sw->info && ci < cfg->nclusters; ci++)
		free(sw->info[ci].profiles);
	for (int k = 0; sw->jobsets && k < cfg->nloads * cfg->nseeds; k++) {
		free(sw->jobsets[k].jobs);
		free(sw->jobsets[k].of_spec);
	}
	for (int i = 0; sw->jobrows && i < sw->npoints; i++)
		free(sw->jobrows[i]);
	free(sw->jobsets);
	free(sw->jobrows);
	free(sw->replays);
	free(sw->replay_ok);
	free(sw->cats);
	free(sw->cl);
	free(sw->info);
	free(sw->rows);
	memset(sw, 0, sizeof(*sw));
}

/* ---- one point --------------------------------------------------------------------------- */

static void shared_names(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		if (p->shared)
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? ", " : "", p->name);
}

static void row_from_summary(struct hb_sweep_row *row, const struct hb_cluster_summary *s, long set_jobs)
{
	row->jobs = (int32_t)set_jobs;
	row->completed = s->completed;
	row->dropped = set_jobs - s->completed;
	row->jct_mean_h = s->jct_s.mean / 3600.0;
	row->jct_median_h = s->jct_s.median / 3600.0;
	row->jct_p99_h = s->jct_s.p99 / 3600.0;
	row->jct_max_h = s->jct_s.max / 3600.0;
	row->makespan_h = s->makespan_s / 3600.0;
	row->queue_mean_h = s->queue_s.mean / 3600.0;
	row->queue_p99_h = s->queue_s.p99 / 3600.0;
	row->gpu_hours = s->gpu_hours;
	row->cost_usd = s->cost_usd;
	row->util_mean = s->util_mean;
	row->restarts_per_job = s->restarts_per_job;
	row->preemptions_per_job = s->preemptions_per_job;
	row->rho_jobs = (int64_t)s->rho.n;
	row->rho_median = s->rho.n ? s->rho.median : NAN;
	row->rho_p99 = s->rho.n ? s->rho.p99 : NAN;
	row->rho_max = s->rho.n ? s->rho.max : NAN;
	row->sched_rounds = s->sched_rounds;
}

static void blank_numbers(struct hb_sweep_row *row)
{
	double *nums[] = { &row->jct_mean_h, &row->jct_median_h, &row->jct_p99_h, &row->jct_max_h, &row->makespan_h,
			   &row->queue_mean_h, &row->queue_p99_h, &row->gpu_hours, &row->cost_usd, &row->util_mean,
			   &row->restarts_per_job, &row->preemptions_per_job, &row->rho_median, &row->rho_p99,
			   &row->rho_max, &row->end_s, &row->jct_all_mean_h, &row->jct_all_p99_h,
			   &row->jct_delta_pct };

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		*nums[i] = NAN;
}

/* What every job of the set did at a point that ran: the replay's jobs
 * from the finished sim (job k of rp is sim->jobs[k]), the others too large
 * for the cluster; and the point's simulated end.  -1 out of memory. */
static int job_rows(struct hb_sweep *sw, int id, const struct hb_sweep_jobset *js, const struct hb_replay *rp,
		    const struct hb_sim *sim, struct hb_sweep_row *row)
{
	struct hb_sweep_jobrow *jr = calloc((size_t)(js->njobs > 0 ? js->njobs : 1), sizeof(*jr));
	double end = -INFINITY;

	if (!jr)
		return -1;
	for (long s = 0; s < js->njobs; s++) {
		jr[s].job = (int32_t)s;
		jr[s].state = HB_SWJOB_TOO_LARGE;
		jr[s].start_s = jr[s].finish_s = NAN;
		end = fmax(end, js->jobs[s].arrival_s);
	}
	for (long k = 0; k < rp->njobs && k < sim->njobs; k++) {
		const struct hb_sim_job *j = &sim->jobs[k];
		long s = rp->jobs[k].index >= 0 && rp->jobs[k].index < js->read ? js->of_spec[rp->jobs[k].index] : -1;

		if (s < 0)
			continue;
		jr[s].state = j->state == HB_JOB_DONE ? HB_SWJOB_DONE : HB_SWJOB_UNFINISHED;
		jr[s].start_s = j->started ? j->start_s : NAN;
		jr[s].finish_s = j->state == HB_JOB_DONE ? j->finish_s : NAN;
		end = fmax(end, j->state == HB_JOB_DONE ? j->finish_s : j->t_last);
	}
	row->too_large = (int32_t)(js->njobs - rp->njobs);
	row->end_s = isfinite(end) ? end : NAN;
	sw->jobrows[id] = jr;
	return 0;
}

/* Run point id into its row; never fails (a failure is the row's status). */
static void run_point(struct hb_sweep *sw, struct hb_profdb *db, int id, const struct hb_log *log)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_sweep_row *row = &sw->rows[id];
	struct hb_sweep_point p;
	const struct hb_policy *pol;
	const struct hb_replay *rp;
	const struct hb_sweep_jobset *js;
	struct hb_sim_opts so;
	struct hb_sim sim;
	struct hb_error err = { 0 };
	void *popts = NULL; /* the policy's options (policy.h), lent to the run */
	double t0 = hb_now();
	int k;

	hb_sweep_point_of(cfg, id, &p);
	pol = cfg->policies[p.policy];
	k = (p.cluster * cfg->nloads + p.load) * cfg->nseeds + p.seed;
	rp = &sw->replays[k];
	js = hb_sweep_jobset_of(sw, p.load, p.seed);
	free(sw->jobrows[id]);
	sw->jobrows[id] = NULL;
	memset(row, 0, sizeof(*row));
	row->id = id;
	blank_numbers(row);
	if (!pol->shared) {
		char shared[400];

		shared_names(shared, sizeof(shared));
		row->status = HB_SWEEP_CANNOT;
		snprintf(row->reason, sizeof(row->reason),
			 "policy %s has no shared-cluster arbiter yet (policies with one: %s)", pol->name, shared);
		return;
	}
	if (!sw->replay_ok[k]) {
		row->status = HB_SWEEP_CANNOT;
		row->jobs = (int32_t)js->njobs;
		row->dropped = js->njobs;
		row->too_large = (int32_t)js->njobs;
		snprintf(row->reason, sizeof(row->reason), "no job to replay (%ld read, %ld larger than the %d GPUs)",
			 rp->read, rp->oversize, sw->info[p.cluster].gpus);
		return;
	}
	so = cfg->opts;
	so.seed = cfg->seeds[p.seed];
	so.quiet = 1;
	so.log = log;
	if (hb_policy_opts_new(pol, &so.knobs, &popts, &err) == 0 &&
	    hb_sim_init(&sim, &sw->cats[p.cluster], sw->cl[p.cluster], db, pol->name, &so, &err) == 0) {
		struct hb_trace_run ru;

		memset(&ru, 0, sizeof(ru));
		sim.policy_opts = popts;
		hb_sim_set_arbiter(&sim, pol->shared);
		if (hb_replay_build(&sim, rp, pol->agent, cfg->trace.synthetic ? "synthetic" : cfg->trace.file_echo,
				    &err) == 0 &&
		    hb_sim_run(&sim, &err) == 0) {
			ru.ran = 1;
			ru.sim = &sim;
			if (hb_trace_run_metrics(&ru, cfg->fairness, 0, &err) == 0) {
				row_from_summary(row, &ru.sum, js->njobs);
				if (job_rows(sw, id, js, rp, &sim, row) == 0)
					row->status = HB_SWEEP_OK;
				else
					hb_runtime_error(&err, "sweep: out of memory for %ld job rows", js->njobs);
			}
			hb_trace_run_free(&ru);
		}
		hb_sim_free(&sim);
	}
	free(popts);
	if (row->status != HB_SWEEP_OK) {
		row->status = HB_SWEEP_FAILED;
		hb_strlcpy(row->reason, err.msg[0] ? err.msg : "unknown error", sizeof(row->reason));
	}
	row->wall_s = hb_now() - t0;
}

/* ---- the runner ------------------------------------------------------------------------------ */

struct runner {
	struct hb_sweep *sw;
	const int *ids;                 /* this process's point ids, ascending */
	int nids;
	int next;                       /* next index into ids to hand out (under mu) */
	int done;                       /* finished points (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t ended;           /* signalled when a worker leaves (with mu) */
	int workers;                    /* workers still running (under mu) */
	const struct hb_log *log;
	hb_sweep_progress_fn *progress;
	hb_sweep_tick_fn *tick;
	double period_s;
	void *ctx;
	int failed;                     /* a worker could not start (under mu) */
	struct hb_error fatal;          /* its error */
};

static void *worker(void *arg)
{
	struct runner *r = arg;
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };

	/* SQLite connections are not shared across threads: one per worker */
	if (hb_profile_files_open(&r->sw->profiles, &db, &err) < 0) {
		pthread_mutex_lock(&r->mu);
		if (!r->failed)
			r->fatal = err;
		r->failed = 1;
		pthread_mutex_unlock(&r->mu);
		return NULL;
	}
	for (;;) {
		int id;

		pthread_mutex_lock(&r->mu);
		/* SIGINT/SIGTERM: no new point; the one running stops too (hb_sim_run) */
		if (!r->failed && hb_interrupted()) {
			hb_interrupt_error(&r->fatal, "sweep");
			r->failed = 1;
		}
		if (r->failed || r->next >= r->nids) {
			pthread_mutex_unlock(&r->mu);
			break;
		}
		id = r->ids[r->next++];
		pthread_mutex_unlock(&r->mu);
		run_point(r->sw, db, id, r->log);
		pthread_mutex_lock(&r->mu);
		r->done++;
		if (r->progress)
			r->progress(r->ctx, r->sw, &r->sw->rows[id], r->done, r->nids);
		pthread_mutex_unlock(&r->mu);
	}
	hb_profdb_close(db);
	return NULL;
}

/* A worker, counted: the ticker stops when the last one has left. */
static void *counted_worker(void *arg)
{
	struct runner *r = arg;

	worker(r);
	pthread_mutex_lock(&r->mu);
	r->workers--;
	pthread_cond_broadcast(&r->ended);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* The ticker: r->tick every r->period_s while workers run. */
static void *ticker(void *arg)
{
	struct runner *r = arg;

	pthread_mutex_lock(&r->mu);
	while (r->workers > 0) {
		struct timespec ts;
		double whole;
		double frac = modf(r->period_s, &whole);

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)whole;
		ts.tv_nsec += (long)(frac * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&r->ended, &r->mu, &ts) != 0 && r->workers > 0)
			r->tick(r->ctx, r->done, r->next - r->done, r->nids);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int hb_sweep_time_point(struct hb_sweep *sw, int id, double *wall_s, int *ran, struct hb_error *err)
{
	struct hb_profdb *db = NULL;
	double t0;

	*wall_s = 0;
	*ran = 0;
	if (id < 0 || id >= sw->npoints)
		return hb_input_error(err, "sweep: no point %d (0 to %d)", id, sw->npoints - 1);
	if (hb_profile_files_open(&sw->profiles, &db, err) < 0)
		return -1;
	t0 = hb_now();
	run_point(sw, db, id, NULL);
	*wall_s = hb_now() - t0;
	*ran = sw->rows[id].status != HB_SWEEP_CANNOT;
	memset(&sw->rows[id], 0, sizeof(sw->rows[id]));
	sw->rows[id].id = id;
	hb_profdb_close(db);
	return 0;
}

int hb_sweep_rank_points(const struct hb_sweep *sw, int rank, int size)
{
	int n = 0;

	for (int id = 0; id < sw->npoints; id++)
		n += id % size == rank;
	return n;
}

int hb_sweep_run(struct hb_sweep *sw, int rank, int size, int nthreads, const struct hb_log *log,
		 hb_sweep_progress_fn *progress, void *ctx, struct hb_error *err)
{
	return hb_sweep_run_ticked(sw, rank, size, nthreads, log, progress, NULL, 0, ctx, err);
}

int hb_sweep_run_ticked(struct hb_sweep *sw, int rank, int size, int nthreads, const struct hb_log *log,
			hb_sweep_progress_fn *progress, hb_sweep_tick_fn *tick, double period_s, void *ctx,
			struct hb_error *err)
{
	struct runner r;
	pthread_t *th = NULL, tick_th;
	int *ids, nstarted = 0, rc, ticking = 0;

	if (size < 1 || rank < 0 || rank >= size || nthreads < 1)
		return hb_input_error(err, "sweep: rank %d of %d on %d threads", rank, size, nthreads);
	memset(&r, 0, sizeof(r));
	ids = malloc((size_t)(sw->npoints > 0 ? sw->npoints : 1) * sizeof(*ids));
	if (!ids)
		return hb_runtime_error(err, "sweep: out of memory");
	for (int id = 0; id < sw->npoints; id++)
		if (id % size == rank)
			ids[r.nids++] = id;
	r.sw = sw;
	r.ids = ids;
	r.log = log;
	r.progress = progress;
	r.tick = tick;
	r.period_s = period_s;
	r.ctx = ctx;
	if ((rc = pthread_mutex_init(&r.mu, NULL)) != 0) {
		free(ids);
		return hb_runtime_error(err, "sweep: cannot create a mutex: %s", strerror(rc));
	}
	pthread_cond_init(&r.ended, NULL);
	if (nthreads > r.nids)
		nthreads = r.nids > 0 ? r.nids : 1;
	/* the ticker counts the workers: all of them, before any starts */
	r.workers = nthreads;
	if (tick && period_s > 0 && r.nids > 0)
		ticking = pthread_create(&tick_th, NULL, ticker, &r) == 0;
	if (nthreads == 1) {
		counted_worker(&r);
	} else {
		th = calloc((size_t)nthreads, sizeof(*th));
		for (int i = 0; th && i < nthreads; i++) {
			if ((rc = pthread_create(&th[i], NULL, counted_worker, &r)) != 0) {
				pthread_mutex_lock(&r.mu);
				r.workers -= nthreads - i; /* these never start */
				pthread_cond_broadcast(&r.ended);
				if (!r.failed)
					hb_runtime_error(&r.fatal, "sweep: cannot start thread %d: %s", i + 1, strerror(rc));
				r.failed = 1;
				pthread_mutex_unlock(&r.mu);
				break;
			}
			nstarted++;
		}
		if (!th) {
			pthread_mutex_lock(&r.mu);
			r.failed = 1;
			r.workers = 0;
			pthread_cond_broadcast(&r.ended);
			pthread_mutex_unlock(&r.mu);
			hb_runtime_error(&r.fatal, "sweep: out of memory");
		}
		for (int i = 0; i < nstarted; i++)
			pthread_join(th[i], NULL);
		free(th);
	}
	if (ticking)
		pthread_join(tick_th, NULL);
	pthread_cond_destroy(&r.ended);
	pthread_mutex_destroy(&r.mu);
	free(ids);
	if (r.failed) {
		*err = r.fatal;
		return -1;
	}
	/* complete for one process; a distributed run censors again once the
	 * other ranks' rows are in */
	hb_sweep_censor(sw);
	return 0;
}

int hb_sweep_nok(const struct hb_sweep *sw)
{
	int n = 0;

	for (int i = 0; i < sw->npoints; i++)
		n += sw->rows[i].status == HB_SWEEP_OK;
	return n;
}

/* ---- rows between processes ------------------------------------------------------------------ */

/* Job rows travel only with a row that ran OK: row.jobs of them. */
static size_t point_bytes(const struct hb_sweep *sw, int id)
{
	const struct hb_sweep_row *r = &sw->rows[id];

	return sizeof(*r) + (r->status == HB_SWEEP_OK && sw->jobrows[id] ? (size_t)r->jobs * sizeof(struct hb_sweep_jobrow) : 0);
}

int hb_sweep_pack(const struct hb_sweep *sw, int rank, int size, void **buf, size_t *len, struct hb_error *err)
{
	size_t total = 0, off = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	for (int id = 0; id < sw->npoints; id++)
		if (id % size == rank)
			total += point_bytes(sw, id);
	if (!(b = malloc(total > 0 ? total : 1)))
		return hb_runtime_error(err, "sweep: out of memory for %zu bytes of rows", total);
	for (int id = 0; id < sw->npoints; id++) {
		const struct hb_sweep_row *r = &sw->rows[id];
		size_t n = point_bytes(sw, id) - sizeof(*r);

		if (id % size != rank)
			continue;
		memcpy(b + off, r, sizeof(*r));
		off += sizeof(*r);
		if (n > 0)
			memcpy(b + off, sw->jobrows[id], n);
		off += n;
	}
	*buf = b;
	*len = total;
	return 0;
}

int hb_sweep_unpack(struct hb_sweep *sw, const void *buf, size_t len, struct hb_error *err)
{
	const char *b = buf;
	size_t off = 0;

	while (off < len) {
		struct hb_sweep_row row;
		struct hb_sweep_jobrow *jr = NULL;
		const struct hb_sweep_jobset *js;
		struct hb_sweep_point p;
		size_t n;

		if (len - off < sizeof(row))
			return hb_runtime_error(err, "sweep: %zu bytes of rows end inside a row of %zu bytes", len,
						sizeof(row));
		memcpy(&row, b + off, sizeof(row));
		off += sizeof(row);
		if (row.id < 0 || row.id >= sw->npoints || row.status < HB_SWEEP_OK || row.status > HB_SWEEP_FAILED)
			return hb_runtime_error(err, "sweep: received a row with point id %d and status %d (of %d points)",
						(int)row.id, (int)row.status, sw->npoints);
		hb_sweep_point_of(sw->cfg, row.id, &p);
		js = hb_sweep_jobset_of(sw, p.load, p.seed);
		if (row.status == HB_SWEEP_OK) {
			if (row.jobs != js->njobs)
				return hb_runtime_error(err, "sweep: point %d: received %d job rows, its job set has %ld",
							(int)row.id, (int)row.jobs, js->njobs);
			n = (size_t)row.jobs * sizeof(*jr);
			if (len - off < n)
				return hb_runtime_error(err, "sweep: point %d: its job rows end after %zu bytes", (int)row.id,
							len - off);
			if (!(jr = malloc(n > 0 ? n : 1)))
				return hb_runtime_error(err, "sweep: out of memory for job rows");
			memcpy(jr, b + off, n);
			off += n;
			for (long k = 0; k < js->njobs; k++)
				if (jr[k].job != k || jr[k].state < HB_SWJOB_DONE || jr[k].state > HB_SWJOB_TOO_LARGE) {
					free(jr);
					return hb_runtime_error(err, "sweep: point %d: job row %ld is malformed", (int)row.id, k);
				}
		}
		row.reason[sizeof(row.reason) - 1] = '\0';
		sw->rows[row.id] = row;
		free(sw->jobrows[row.id]);
		sw->jobrows[row.id] = jr;
	}
	return 0;
}

/* ---- censored JCTs ---------------------------------------------------------------------------- */

double hb_sweep_horizon(const struct hb_sweep *sw, int li, int si)
{
	double h = -INFINITY;

	for (int id = 0; id < sw->npoints; id++) {
		struct hb_sweep_point p;

		hb_sweep_point_of(sw->cfg, id, &p);
		if (p.load == li && p.seed == si && sw->rows[id].status == HB_SWEEP_OK && isfinite(sw->rows[id].end_s))
			h = fmax(h, sw->rows[id].end_s);
	}
	return isfinite(h) ? h : NAN;
}

double hb_sweep_job_jct(const struct hb_sweep *sw, int id, const struct hb_sweep_jobrow *jr)
{
	struct hb_sweep_point p;
	const struct hb_sweep_jobset *js;
	double arrival;

	hb_sweep_point_of(sw->cfg, id, &p);
	js = hb_sweep_jobset_of(sw, p.load, p.seed);
	arrival = js->jobs[jr->job].arrival_s;
	if (jr->state == HB_SWJOB_DONE)
		return jr->finish_s - arrival;
	return fmax(0.0, js->horizon_s - arrival);
}

void hb_sweep_censor(struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	int per_cluster = cfg->nloads * cfg->npolicies * cfg->nseeds;
	double *x = NULL;
	long xmax = 1;

	for (int k = 0; k < cfg->nloads * cfg->nseeds; k++)
		if (sw->jobsets[k].njobs > xmax)
			xmax = sw->jobsets[k].njobs;
	x = malloc((size_t)xmax * sizeof(*x));
	for (int id = 0; id < sw->npoints; id++) {
		struct hb_sweep_row *r = &sw->rows[id];

		r->jct_all_mean_h = r->jct_all_p99_h = r->jct_delta_pct = NAN;
	}
	for (int li = 0; li < cfg->nloads; li++)
		for (int si = 0; si < cfg->nseeds; si++)
			sw->jobsets[li * cfg->nseeds + si].horizon_s = hb_sweep_horizon(sw, li, si);
	if (!x)
		return; /* out of memory: the all-jobs columns stay empty */
	for (int id = 0; id < sw->npoints; id++) {
		struct hb_sweep_row *r = &sw->rows[id];
		const struct hb_sweep_jobrow *jr = sw->jobrows[id];
		struct hb_sweep_point p;
		struct hb_dist d;
		struct hb_error err;
		long n;

		if (r->status != HB_SWEEP_OK || !jr)
			continue;
		hb_sweep_point_of(cfg, id, &p);
		n = hb_sweep_jobset_of(sw, p.load, p.seed)->njobs;
		for (long k = 0; k < n; k++)
			x[k] = hb_sweep_job_jct(sw, id, &jr[k]);
		/* metrics.h's summary, as sim's JCT columns (GSL's quantiles) */
		if (n > 0 && hb_metrics_dist(x, (size_t)n, &d, &err) == 0) {
			r->jct_all_mean_h = d.mean / 3600.0;
			r->jct_all_p99_h = d.p99 / 3600.0;
		}
	}
	for (int id = per_cluster; id < sw->npoints; id++) {
		struct hb_sweep_row *r = &sw->rows[id];
		const struct hb_sweep_row *b = &sw->rows[id % per_cluster];

		if (isfinite(r->jct_all_mean_h) && isfinite(b->jct_all_mean_h) && b->jct_all_mean_h > 0)
			r->jct_delta_pct = 100.0 * (r->jct_all_mean_h - b->jct_all_mean_h) / b->jct_all_mean_h;
	}
	free(x);
}
