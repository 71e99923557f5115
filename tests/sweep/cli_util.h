/* cli_util.h: what the end-to-end sweep tests share: a scratch directory,
 * running a shell command in it with stdout and stderr captured, reading
 * and writing files there, comparing result directories byte by byte.
 * Header-only (static functions) for the two test programs of tests/sweep. */
#ifndef HB_TEST_SWEEP_CLI_UTIL_H
#define HB_TEST_SWEEP_CLI_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "fileio.h"

struct scratch {
	char dir[256];       /* mkdtemp'd */
	char out[512];       /* captured stdout of the last command */
	char err[512];       /* captured stderr */
	char fixtures[1024]; /* tests/sweep in the source tree */
	const char *exe;     /* $HETBATCH */
};

/* 0, or 77 (skip) when the environment lacks what the tests need. */
static inline int scratch_init(struct scratch *s)
{
	const char *root = getenv("HB_SOURCE_ROOT");

	s->exe = getenv("HETBATCH");
	if (!s->exe || !root) {
		fprintf(stderr, "HETBATCH and HB_SOURCE_ROOT must be set (run through meson test)\n");
		return 77;
	}
	snprintf(s->fixtures, sizeof(s->fixtures), "%s/tests/sweep", root);
	snprintf(s->dir, sizeof(s->dir), "/tmp/hb-sweep-test-XXXXXX");
	if (!mkdtemp(s->dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(s->out, sizeof(s->out), "%s/stdout.txt", s->dir);
	snprintf(s->err, sizeof(s->err), "%s/stderr.txt", s->dir);
	/* a profile cache of its own: base-cluster files change the catalog hash */
	return 0;
}

static inline void scratch_remove(const struct scratch *s)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", s->dir);
}

/* Run `sh -c CMD` in the scratch directory (stdout, stderr captured);
 * returns the exit status, -1 if it did not exit. */
static inline int sh(const struct scratch *s, const char *fmt, ...) HB_PRINTF(2, 3);
static inline int sh(const struct scratch *s, const char *fmt, ...)
{
	char line[8192], cmd[16384];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd '%s' && HETBATCH_CACHE='%s/cache' %s >'%s' 2>'%s'", s->dir, s->dir, line, s->out,
		 s->err);
	st = system(cmd);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whole file (NUL-terminated), or NULL; *len may be NULL. */
static inline char *slurp(const char *path, size_t *len)
{
	struct hb_error err = { 0 };
	size_t n;
	char *data;

	if (hb_read_file(path, &data, &n, &err) < 0)
		return NULL;
	if (len)
		*len = n;
	return data;
}

static inline char *slurp_in(const struct scratch *s, const char *rel, size_t *len)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", s->dir, rel);
	return slurp(path, len);
}

static inline int exists_in(const struct scratch *s, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", s->dir, rel);
	return hb_path_exists(path);
}

static inline int write_in(const struct scratch *s, const char *rel, const char *text)
{
	char path[1024];
	struct hb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/%s", s->dir, rel);
	return hb_write_file_atomic(path, text, strlen(text), &err);
}

/* 1 when DIR_A/NAME and DIR_B/NAME exist and hold the same bytes. */
static inline int same_file(const struct scratch *s, const char *a, const char *b, const char *name)
{
	char pa[1024], pb[1024];
	size_t la, lb;
	char *da, *db;
	int same;

	snprintf(pa, sizeof(pa), "%s/%s/%s", s->dir, a, name);
	snprintf(pb, sizeof(pb), "%s/%s/%s", s->dir, b, name);
	da = slurp(pa, &la);
	db = slurp(pb, &lb);
	same = da && db && la == lb && memcmp(da, db, la) == 0;
	free(da);
	free(db);
	return same;
}

#endif
