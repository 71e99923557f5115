#include <stdio.h>

#include "db.h"

static int db_fail(sqlite3 *db, struct hb_error *err, const char *what)
{
	const char *file = db ? sqlite3_db_filename(db, "main") : NULL;

	return hb_runtime_error(err, "%s: %s: %s", file && *file ? file : "(database)", what,
				db ? sqlite3_errmsg(db) : "out of memory");
}

int hb_db_open(const char *path, int flags, sqlite3 **out, struct hb_error *err)
{
	int oflags = (flags & HB_DB_READONLY) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	sqlite3 *db = NULL;

	if (flags & HB_DB_CREATE)
		oflags |= SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(path, &db, oflags, NULL) != SQLITE_OK) {
		int rc = hb_fail(err, (flags & HB_DB_CREATE) ? HB_ERUNTIME : HB_EINPUT, "%s: cannot open database: %s",
				 path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return rc;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, 10000);
	if (!(flags & HB_DB_READONLY) && hb_db_exec(db, "PRAGMA journal_mode=WAL;", err) < 0) {
		sqlite3_close(db);
		return -1;
	}
	if (hb_db_exec(db, "PRAGMA foreign_keys=ON;", err) < 0) {
		sqlite3_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

void hb_db_close(sqlite3 *db)
{
	sqlite3_close(db);
}

int hb_db_exec(sqlite3 *db, const char *sql, struct hb_error *err)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		const char *file = sqlite3_db_filename(db, "main");
		int rc = hb_runtime_error(err, "%s: %s", file && *file ? file : "(database)", msg ? msg : "error");

		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

int hb_db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, struct hb_error *err)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
		return db_fail(db, err, "prepare");
	return 0;
}

int hb_db_step_done(sqlite3 *db, sqlite3_stmt *st, struct hb_error *err)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_fail(db, err, "write");
	return 0;
}

int hb_db_begin(sqlite3 *db, struct hb_error *err)
{
	return hb_db_exec(db, "BEGIN IMMEDIATE;", err);
}

int hb_db_commit(sqlite3 *db, struct hb_error *err)
{
	if (hb_db_exec(db, "COMMIT;", err) < 0) {
		hb_db_rollback(db);
		return -1;
	}
	return 0;
}

void hb_db_rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK;", NULL, NULL, NULL);
}

int hb_db_user_version(sqlite3 *db, int *version, struct hb_error *err)
{
	sqlite3_stmt *st;

	if (hb_db_prepare(db, "PRAGMA user_version;", &st, err) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, err, "read schema version");
	}
	*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int hb_db_set_user_version(sqlite3 *db, int version, struct hb_error *err)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d;", version);
	return hb_db_exec(db, sql, err);
}
