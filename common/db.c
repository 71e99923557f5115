#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "db.h"
#include "fileio.h" /* hb_path_is_dir */

int hb_db_error_code(sqlite3 *db)
{
	int rc = db ? sqlite3_errcode(db) & 0xff : SQLITE_NOMEM;

	return rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT ? HB_EINPUT : HB_ERUNTIME;
}

static int db_fail(sqlite3 *db, struct hb_error *err, const char *what)
{
	const char *file = db ? sqlite3_db_filename(db, "main") : NULL;

	return hb_fail(err, hb_db_error_code(db), "%s: %s: %s", file && *file ? file : "(database)", what,
		       db ? sqlite3_errmsg(db) : "out of memory");
}

int hb_db_uri(const char *path, int immutable, char *buf, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *query = immutable ? "?immutable=1" : "?mode=ro";
	/* "file:/abs" would do, but "file:///abs" keeps a path that starts
	 * with "//" from reading as an authority. */
	int n = snprintf(buf, size, "%s", path[0] == '/' ? "file://" : "file:");
	size_t len = n > 0 ? (size_t)n : 0;

	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (isalnum(*c) || strchr("/-._~", *c)) {
			if (len + 1 >= size)
				return -1;
			buf[len++] = (char)*c;
		} else {
			if (len + 3 >= size)
				return -1;
			buf[len++] = '%';
			buf[len++] = hex[*c >> 4];
			buf[len++] = hex[*c & 15];
		}
	}
	if (len + strlen(query) >= size)
		return -1;
	strcpy(buf + len, query);
	return 0;
}

/* A file left in WAL mode (older hetbatch) goes back to the rollback
 * journal.  That needs the only connection; when another process has the
 * file open, it stays in WAL this time, which is still correct. */
static void leave_wal(sqlite3 *db)
{
	sqlite3_stmt *st;
	int wal = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode;", -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW)
		wal = sqlite3_column_text(st, 0) && strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
	sqlite3_finalize(st);
	if (wal)
		sqlite3_exec(db, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL);
}

void hb_db_settle_journal(const char *path)
{
	char journal[4200];
	struct stat sb;
	sqlite3 *db = NULL;
	sqlite3_stmt *st;

	if ((size_t)snprintf(journal, sizeof(journal), "%s-journal", path) >= sizeof(journal) ||
	    lstat(journal, &sb) != 0)
		return;
	/* Without SQLITE_OPEN_CREATE: a file that is not there stays so. */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
		sqlite3_busy_timeout(db, 10000);
		/* The first read of page 1 plays a hot journal back (when this
		 * process may write the file and its directory).  SQLite leaves
		 * alone a journal that is not hot: a running writer's (it checks
		 * the writer's lock) and one whose header was never completed
		 * (a writer killed before it synced it, the file unchanged),
		 * which readers ignore and the next writer removes. */
		if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master;", -1, &st, NULL) == SQLITE_OK) {
			sqlite3_step(st);
			sqlite3_finalize(st);
		}
	}
	sqlite3_close(db);
}

int hb_db_check_readable(sqlite3 *db, const char *schema, const char *path, struct hb_error *err)
{
	char sql[96];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\".sqlite_master;", schema);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		rc = sqlite3_extended_errcode(db);
	else {
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			rc = sqlite3_extended_errcode(db);
	}
	if (rc == SQLITE_READONLY_ROLLBACK)
		return hb_input_error(err, "%s: a writer was stopped mid-transaction and left %s-journal (a hot "
				      "journal), which this process may not roll back (it cannot write the file or its "
				      "directory); repair it as a user who can: sqlite3 '%s' 'PRAGMA quick_check;'",
				      path, path, path);
	/* Any other failure (not a database, corrupt) is for the caller's
	 * own checks to name. */
	return 0;
}

int hb_db_open(const char *path, int flags, sqlite3 **out, struct hb_error *err)
{
	int ro = (flags & (HB_DB_READONLY | HB_DB_IMMUTABLE)) != 0;
	int oflags = ro ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI : SQLITE_OPEN_READWRITE;
	char uri[8192];
	sqlite3 *db = NULL;

	if (ro && hb_db_uri(path, (flags & HB_DB_IMMUTABLE) != 0, uri, sizeof(uri)) < 0)
		return hb_input_error(err, "%s: path too long", path);
	/* SQLite reports a directory as "disk I/O error" (or "unable to open"). */
	if (hb_path_is_dir(path))
		return hb_input_error(err, "%s: is a directory, expected a database file", path);
	if ((flags & HB_DB_CREATE) && hb_create_missing(path, "database", err) < 0)
		return -1;
	if (flags & HB_DB_CREATE)
		oflags |= SQLITE_OPEN_CREATE;
	/* A read-only connection cannot play back a journal a killed writer
	 * left: every read would fail "attempt to write a readonly database".
	 * Roll it back first where this process may (db.h).  An immutable
	 * file is never written in place, so it has no journal of its own. */
	if (ro && !(flags & HB_DB_IMMUTABLE))
		hb_db_settle_journal(path);
	if (sqlite3_open_v2(ro ? uri : path, &db, oflags, NULL) != SQLITE_OK) {
		int rc = hb_fail(err, (flags & HB_DB_CREATE) ? HB_ERUNTIME : HB_EINPUT, "%s: cannot open database: %s",
				 path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return rc;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, 10000);
	if (ro && !(flags & HB_DB_IMMUTABLE) && hb_db_check_readable(db, "main", path, err) < 0) {
		sqlite3_close(db);
		return -1;
	}
	if (!ro)
		leave_wal(db);
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
		int rc = hb_fail(err, hb_db_error_code(db), "%s: %s", file && *file ? file : "(database)",
				 msg ? msg : "error");

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
