/*
 * db.h: the SQLite habits hetbatch uses everywhere.
 *
 * hb_db_open turns on foreign keys and a busy timeout (10 s, so concurrent
 * writers wait for each other instead of failing); every logical write
 * happens inside hb_db_begin/hb_db_commit (BEGIN IMMEDIATE: the write lock
 * is taken at the start, where the busy timeout applies, never upgraded
 * half-way), hb_db_rollback on any error, so a crash or bad row never
 * leaves a half-imported file behind.  Messages carry sqlite3_errmsg and
 * the database path.
 *
 * Journal: the rollback journal (journal_mode=DELETE), not WAL.  A file in
 * that mode is a single file between transactions: a read-only open
 * creates nothing beside it (so a database in a read-only directory or on
 * a read-only medium can be read), and a clean exit leaves no -wal or -shm
 * files.  A file left in WAL mode by an older hetbatch is switched back on
 * its next read-write open (when no other process has it open).
 *
 * A writer killed inside a transaction (SIGKILL, power loss) leaves
 * PATH-journal behind, a "hot" journal: the file's old pages, which the
 * next connection that may write must copy back before anything reads the
 * file.  A read-only connection cannot, and every read would fail with
 * "attempt to write a readonly database".  So a read-only open (mode=ro)
 * that finds a journal first opens the file read-write (never creating
 * it) just long enough for SQLite to roll the journal back, then opens it
 * read-only; where this process may not write the file or its directory,
 * the open fails with one line (exit 2) that says so and names the
 * command that repairs it.
 *
 * Read-only opens go through a "file:" URI with mode=ro, or immutable=1
 * for a file nobody changes in place (the cached analytic database, which
 * is only ever replaced by a rename): SQLite then takes no locks at all.
 */
#ifndef HB_DB_H
#define HB_DB_H

#include <stddef.h>

#include <sqlite3.h>

#include "error.h"

enum hb_db_flags {
	HB_DB_READONLY = 1,  /* open an existing file read-only (mode=ro) */
	HB_DB_CREATE = 2,    /* create the file if missing (O_EXCL | O_NOFOLLOW: never through a link) */
	HB_DB_IMMUTABLE = 4, /* read-only, and nobody writes the file while it is open (immutable=1) */
};

int hb_db_open(const char *path, int flags, sqlite3 **out, struct hb_error *err);
void hb_db_close(sqlite3 *db);

/* The "file:" URI that opens path read-only (immutable: with immutable=1),
 * percent-encoding what a URI cannot hold; ATTACH takes it as well.
 * -1 when it does not fit in size. */
int hb_db_uri(const char *path, int immutable, char *buf, size_t size);

/* Roll back a hot journal beside path where this process may write
 * (see "A writer killed" above); nothing when there is no journal.  Errors
 * are left for the read-only open after it to report. */
void hb_db_settle_journal(const char *path);
/* After a read-only open or ATTACH of path as schema: -1 (HB_EINPUT) with
 * the one-line explanation when a hot journal is still there, else 0. */
int hb_db_check_readable(sqlite3 *db, const char *schema, const char *path, struct hb_error *err);

/* The error code for db's last failure: HB_EINPUT when SQLite found the
 * file is not a database or is damaged (SQLITE_NOTADB, SQLITE_CORRUPT: the
 * user gave a bad file, exit 2 as README promises), else HB_ERUNTIME. */
int hb_db_error_code(sqlite3 *db);
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
