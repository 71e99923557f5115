/*
 * cli_profiles.c: the -v lines on profile sources (see cli_profiles.h).
 */
#include <string.h>

#include "cli_profiles.h"

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
	for (int mi = 0; mi < nmodels; mi++) {
		for (int k = 0; k < cl->nnodes; k++) {
			const struct hb_gpu *g;
			struct hb_profdb_origin o;
			struct hb_error err = { 0 };
			int seen = 0, found = 0;

			if (cl->nodes[k].gpu < 0 || cl->nodes[k].gpu >= cat->ngpus)
				continue;
			for (int j = 0; j < k && !seen; j++)
				seen = cl->nodes[j].gpu == cl->nodes[k].gpu;
			if (seen)
				continue;
			g = &cat->gpus[cl->nodes[k].gpu];
			if (hb_profdb_compute_origin(db, g->name, models[mi]->name, &o, &found, &err) < 0)
				hb_info(&cli->log, "profile %s x %s: %s", g->name, models[mi]->name, err.msg);
			else if (!found)
				hb_info(&cli->log, "profile %s x %s: no compute rows in any database", g->name,
					models[mi]->name);
			else if (o.run_id)
				hb_info(&cli->log, "profile %s x %s: %s (run %lld, %ld rows) from %s", g->name,
					models[mi]->name, o.source, (long long)o.run_id, o.rows, o.path);
			else
				hb_info(&cli->log, "profile %s x %s: %s (%ld rows) from %s", g->name, models[mi]->name,
					o.source, o.rows, o.path);
		}
	}
}
