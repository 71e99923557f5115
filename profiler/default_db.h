/*
 * default_db.h: the profile database a command uses when the user gives none.
 *
 * hetbatch runs with no GPU and no download: when no --db is given, the
 * analytic model (models/analytic.h) fills a database once and keeps it in
 * the user's cache:
 *
 *   $HETBATCH_CACHE/profiles-analytic-v<HB_ANALYTIC_VERSION>.db, or
 *   $XDG_CACHE_HOME/hetbatch/..., or $HOME/.cache/hetbatch/...
 *
 * The file records the generator version, the catalog hash and the profile
 * schema version in a table `analytic_meta(key, value)`; a file whose
 * record differs from this build and catalog (or that is missing, damaged
 * or not a profile database) is rebuilt.  A rebuild writes
 * "<path>.tmp.<pid>" and renames it over the path, so a reader never sees a
 * half-built default and two concurrent builders both leave a valid file.
 * The finished file uses the rollback journal, so it can be opened
 * read-only without creating -wal/-shm files.
 */
#ifndef HB_DEFAULT_DB_H
#define HB_DEFAULT_DB_H

#include <stddef.h>
#include <stdint.h>

#include "analytic_gen.h"
#include "catalog.h"
#include "error.h"
#include "profdb.h"

#define HB_DEFAULT_DB_ENV "HETBATCH_CACHE"  /* directory overriding the cache location */

struct hb_default_db_info {
	char path[4096];                /* the database file used */
	int rebuilt;                    /* 1 if this call (re)generated it, 0 if it was reused */
	char reason[128];               /* why it was rebuilt ("missing", "generator version 0 != 1", ...) */
	struct hb_analytic_stats stats; /* what was generated, when rebuilt */
};

/* The default database path from the environment (see above). */
int hb_default_profdb_path(char *buf, size_t size, struct hb_error *err);

/* Hash of every catalog number the analytic generator reads (GPUs, models,
 * cluster link classes); FNV-1a 64 over a canonical text form. */
uint64_t hb_default_profdb_catalog_hash(const struct hb_catalog *cat);

/* Make sure the default database at `path` (NULL: hb_default_profdb_path)
 * is current for this catalog, rebuilding it when it is not or when force
 * is set.  info may be NULL. */
int hb_default_profdb_ensure(const struct hb_catalog *cat, const char *path, int force,
			     struct hb_default_db_info *info, struct hb_error *err);

/* The profiles a command reads: the user's database when path_or_NULL is
 * given (opened read-only; it must exist), else the default, built or
 * reused as above and opened read-only.  The caller hb_profdb_close()s *db. */
int hb_default_profdb(const struct hb_catalog *cat, const char *path_or_NULL, struct hb_profdb **db,
		      struct hb_error *err);

#endif
