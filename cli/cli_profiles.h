/*
 * cli_profiles.h: what `-v` says about the profiles a command reads
 * (issue 17 item 1): which database file(s), and for every GPU type x
 * model which source and which file its compute rows came from.
 */
#ifndef HB_CLI_PROFILES_H
#define HB_CLI_PROFILES_H

#include <cjson/cJSON.h>

#include "catalog.h"
#include "cli.h"
#include "profdb.h"

/* At -v (info level): one line naming the database file(s) db reads,
 * preferred first, then one line per GPU type of cl (each type once) x
 * models[0..nmodels): "profile v100 x resnet50: import:jabas (run 2, 14
 * rows) from FILE", or that no file has rows for it.  cl NULL or nmodels 0:
 * the files only.  Silent below -v; never fails (a read error is logged). */
void hb_cli_log_profiles(const struct hb_cli *cli, struct hb_profdb *db, const struct hb_catalog *cat,
			 const struct hb_cluster *cl, const struct hb_model *const *models, int nmodels);

/* The per-pair lines alone, for GPU types and models given by name (a
 * sweep's clusters and replays, each from a catalog of its own): model by
 * model, each GPU type in turn.  Silent below -v. */
void hb_cli_log_profile_pairs(const struct hb_cli *cli, struct hb_profdb *db, const char *const *gpus, int ngpus,
			      const char *const *models, int nmodels);

/* After a command wrote the user's profile database (default_db.h): say
 * once, on stderr, that later commands without --db read it, and what it
 * replaces (issue 39: results moved after an import without a word). */
void hb_cli_note_user_db(const struct hb_cli *cli, const char *path);

/* What a result was made from (issue 39 item 1): for every GPU type of
 * gpus[0..ngpus) (duplicates skipped) x model, the rows the database at
 * path holds (source, file, run, rows, digest) as the results' "profiles"
 * JSON array (hb_results_profiles_json); NULL with err set. */
cJSON *hb_cli_profile_uses_json(const char *path, const char *const *gpus, int ngpus, const char *model,
				struct hb_error *err);

#endif
