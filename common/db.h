/*
 * db.h: the SQLite habits hetbatch uses everywhere.
 *
 * hb_db_open turns on WAL, foreign keys and a busy timeout; every logical
 * write happens inside hb_db_begin/hb_db_commit (hb_db_rollback on any
 * error), so a crash or bad row never leaves a half-imported file behind.
 * Messages carry sqlite3_errmsg and the database path.
 */
#ifndef HB_DB_H
#define HB_DB_H

#include <sqlite3.h>

#include "error.h"

enum hb_db_flags {
	HB_DB_READONLY = 1,  /* open an existing file read-only */
	HB_DB_CREATE = 2,    /* create the file if missing */
};

int hb_db_open(const char *path, int flags, sqlite3 **out, struct hb_error *err);
void hb_db_close(sqlite3 *db);

int hb_db_exec(sqlite3 *db, const char *sql, struct hb_error *err);
int hb_db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, struct hb_error *err);
/* Step a statement that returns no rows (INSERT/UPDATE/DELETE). */
int hb_db_step_done(sqlite3 *db, sqlite3_stmt *st, struct hb_error *err);

int hb_db_begin(sqlite3 *db, struct hb_error *err);      /* BEGIN IMMEDIATE */
int hb_db_commit(sqlite3 *db, struct hb_error *err);
void hb_db_rollback(sqlite3 *db);                        /* safe if no transaction */

/* PRAGMA user_version get/set: the schema version used by migrations. */
int hb_db_user_version(sqlite3 *db, int *version, struct hb_error *err);
int hb_db_set_user_version(sqlite3 *db, int version, struct hb_error *err);

#endif
