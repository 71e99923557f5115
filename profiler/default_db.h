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
 * The finished file uses the rollback journal and is never changed in
 * place, so readers open it immutable (no locks, nothing created beside it).
 *
 * The user's database.  Measured and imported profiles live in one more
 * file, the user's profile database:
 *
 *   $HETBATCH_DATA/profiles.db, or $XDG_DATA_HOME/hetbatch/profiles.db, or
 *   $HOME/.local/share/hetbatch/profiles.db
 *
 * (a data directory, not the cache: measurements cannot be regenerated, so
 * clearing ~/.cache must not lose them).  `hetbatch import` and `hetbatch
 * profile --backend` / `profile allreduce` write it when given no --db.
 *
 * What a reading command (plan, sim, sweep) reads when given no --db: the
 * user's database, when it exists, layered over the analytic one
 * (hb_profdb_open_layers): for each GPU x model (and each model's buckets,
 * each link's all-reduce fit) the best-ranked source over both files
 * (hb_profdb_source_rank: live, torch, cupti, events, import:jabas, import:pollux,
 * import:sia, import:nccl-tests, cpu, analytic) supplies the whole set of rows, so an
 * imported or measured profile replaces the generated one exactly where it
 * exists.  Given --db FILE, a command reads that file alone.
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
#define HB_USER_DB_ENV "HETBATCH_DATA"      /* directory overriding the user database's location */
#define HB_USER_DB_NAME "profiles.db"       /* the user database's file name in that directory */

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

/* The user database's path from the environment (see above). */
int hb_user_profdb_path(char *buf, size_t size, struct hb_error *err);

/* The file a writing command uses given no --db: the user database, its
 * directory created. */
int hb_user_profdb_for_writing(char *buf, size_t size, struct hb_error *err);

/* 1 if path names the user database (the same file, or where it would be
 * created), 0 if not or when there is no user database location. */
int hb_is_user_profdb(const char *path);
/* 1 if path names the cached analytic database (hb_default_profdb_path):
 * nothing but its builder may write it, since readers open it immutable. */
int hb_is_default_profdb(const char *path);

/* The files a reading command reads. */
struct hb_profile_files {
	char user[4096];   /* the user database, when it exists and no --db was given; else "" */
	char base[4096];   /* --db FILE, else the cached analytic database (built if needed) */
	int base_is_cache; /* base is the analytic cache: opened immutable */
};

/* Decide the files (see above); db_or_NULL is --db. */
int hb_profile_files_resolve(const struct hb_catalog *cat, const char *db_or_NULL, struct hb_profile_files *f,
			     struct hb_error *err);
/* Open them read-only as one database; the caller hb_profdb_close()s *db.
 * Every thread opens its own (an SQLite connection is not shared). */
int hb_profile_files_open(const struct hb_profile_files *f, struct hb_profdb **db, struct hb_error *err);

/* resolve + open: the profiles a command reads.  The caller
 * hb_profdb_close()s *db. */
int hb_default_profdb(const struct hb_catalog *cat, const char *path_or_NULL, struct hb_profdb **db,
		      struct hb_error *err);

#endif
