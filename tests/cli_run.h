/* cli_run.h: what the end-to-end tests of `hetbatch` (tests/sim_cli,
 * tests/trace_replay) share: a scratch directory, running $HETBATCH in it
 * with stdout and stderr captured to files, and reading what it wrote.
 * Header-only for one test program each; include after cmocka.h. */
#ifndef HB_TEST_CLI_RUN_H
#define HB_TEST_CLI_RUN_H

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "error.h"
#include "fileio.h"

static char tmpdir[256];            /* the scratch directory (cli_setup) */
static char outf[512], errf[512];   /* stdout and stderr of the last run */
static const char *exe;             /* $HETBATCH */

/* mkdtemp /tmp/hb-TAG-XXXXXX; -1 without $HETBATCH (run through meson). */
static inline int cli_setup(const char *tag)
{
	exe = getenv("HETBATCH");
	if (!exe)
		return -1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-%s-XXXXXX", tag);
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(outf, sizeof(outf), "%s/stdout", tmpdir);
	snprintf(errf, sizeof(errf), "%s/stderr", tmpdir);
	return 0;
}

static inline int cli_teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Run `ENV hetbatch ARGS` (ARGS printf-formatted) in tmpdir; the exit status. */
static inline int run_env(const char *env, const char *fmt, ...) HB_PRINTF(2, 3);
static inline int run_env(const char *env, const char *fmt, ...)
{
	char args[4096], cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s '%s' %s >'%s' 2>'%s'", tmpdir, env ? env : "", exe, args, outf,
		 errf);
	st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	return WEXITSTATUS(st);
}

#define run(...) run_env(NULL, __VA_ARGS__)

/* The whole file, NUL-terminated; fails the test when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	struct hb_error err = { 0 };
	char *data = NULL;

	if (hb_read_file(path, &data, len, &err) < 0) {
		fail_msg("%s", err.msg);
		return NULL;
	}
	return data;
}

static inline char *slurp_in(const char *dir, const char *name, size_t *len)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s/%s", tmpdir, dir, name);
	return slurp(path, len);
}

/* tmpdir/dir/name exists (name NULL: the directory itself). */
static inline int exists_in(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s%s%s", tmpdir, dir, name ? "/" : "", name ? name : "");
	return hb_path_exists(path);
}

static inline int count_char(const char *s, char c)
{
	int n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static inline void write_file(const char *name, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* No temporary file (*.tmp.*) left in tmpdir/dir. */
static inline void assert_no_temporaries(const char *dir)
{
	char path[1024];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, dir);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tmp."))
			fail_msg("temporary file %s left in %s", e->d_name, dir);
	closedir(d);
}

/* The first column of the first row of a query on an SQLite file, NAN when
 * the query returns no row; fails the test when the query cannot run. */
static inline double cli_query(const char *dbfile, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	double v = NAN;

	assert_int_equal(sqlite3_open_v2(dbfile, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s: %s", dbfile, sql, sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

#endif
