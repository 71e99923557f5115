/*
 * cli_profiles.c: the -v lines on profile sources (see cli_profiles.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli_profiles.h"
#include "results.h"

/* One line: where gpu x model's compute rows came from. */
static void log_pair(const struct hb_cli *cli, struct hb_profdb *db, const char *gpu, const char *model)
{
	struct hb_profdb_origin o;
	struct hb_error err = { 0 };
	int found = 0;

	if (hb_profdb_compute_origin(db, gpu, model, &o, &found, &err) < 0)
		hb_info(&cli->log, "profile %s x %s: %s", gpu, model, err.msg);
	else if (!found)
		hb_info(&cli->log, "profile %s x %s: no compute rows in any database", gpu, model);
	else if (o.runs > 1)
		hb_info(&cli->log, "profile %s x %s: %s (%ld rows of %ld runs, %lld to %lld) from %s", gpu, model,
			o.source, o.rows, o.runs, (long long)o.run_min, (long long)o.run_max, o.path);
	else if (o.run_id)
		hb_info(&cli->log, "profile %s x %s: %s (run %lld, %ld rows) from %s", gpu, model, o.source,
			(long long)o.run_id, o.rows, o.path);
	else
		hb_info(&cli->log, "profile %s x %s: %s (%ld rows) from %s", gpu, model, o.source, o.rows, o.path);
}

void hb_cli_log_profile_pairs(const struct hb_cli *cli, struct hb_profdb *db, const char *const *gpus, int ngpus,
			      const char *const *models, int nmodels)
{
	if (cli->log.level < HB_LOG_INFO)
		return;
	for (int mi = 0; mi < nmodels; mi++)
		for (int k = 0; k < ngpus; k++)
			log_pair(cli, db, gpus[k], models[mi]);
}

void hb_cli_log_profiles(const struct hb_cli *cli, struct hb_profdb *db, const struct hb_catalog *cat,
			 const struct hb_cluster *cl, const struct hb_model *const *models, int nmodels)
{
	int n = hb_profdb_nlayers(db);

	if (cli->log.level < HB_LOG_INFO)
		return;
	if (n == 1)
		hb_info(&cli->log, "profile database: %s", hb_profdb_layer_path(db, 0));
	else
		for (int l = 0; l < n; l++)
			hb_info(&cli->log, "profile database %d of %d%s: %s", l + 1, n,
				l == 0 ? " (preferred where sources rank equal)" : "", hb_profdb_layer_path(db, l));
	if (!cl)
		return;
	for (int mi = 0; mi < nmodels; mi++)
		for (int k = 0; k < cl->nnodes; k++)
			if (hb_cluster_first_of_type(cat, cl, k))
				log_pair(cli, db, cat->gpus[cl->nodes[k].gpu].name, models[mi]->name);
}

void hb_cli_note_user_db(const struct hb_cli *cli, const char *path)
{
	hb_warn(&cli->log, "plan, sim, sweep and live without --db now read %s: for every GPU x model it holds, its "
		"rows replace the analytic profiles (results name the source under \"profiles\"; --db FILE "
		"chooses another database)", path);
}

cJSON *hb_cli_profile_uses_json(const char *path, const char *const *gpus, int ngpus, const char *model,
				struct hb_error *err)
{
	struct hb_profile_use *u = calloc((size_t)(ngpus > 0 ? ngpus : 1), sizeof(*u));
	struct hb_profdb *db = NULL;
	cJSON *arr = NULL;
	int n = 0, rc = 0;

	if (!u) {
		hb_runtime_error(err, "out of memory");
		return NULL;
	}
	if (hb_profdb_open(path, HB_PROFDB_READONLY, &db, err) < 0) {
		free(u);
		return NULL;
	}
	for (int i = 0; i < ngpus && rc == 0; i++) {
		int dup = 0;

		for (int k = 0; k < i && !dup; k++)
			dup = strcmp(gpus[k], gpus[i]) == 0;
		if (!dup)
			rc = hb_profdb_profile_use(db, gpus[i], model, &u[n++], err);
	}
	hb_profdb_close(db);
	if (rc == 0 && !(arr = hb_results_profiles_json(u, n)))
		hb_runtime_error(err, "out of memory");
	free(u);
	return arr;
}
