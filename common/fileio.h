/*
 * fileio.h: whole-file reads and atomic writes.
 *
 * A result file is never left half-written: hb_atomic_open writes to
 * "PATH.tmp.PID" beside the target, hb_atomic_commit flushes, fsyncs and
 * renames it over PATH, and hb_atomic_abort removes it.  hb_atomic_open
 * first removes "PATH.tmp.PID" files of writers that died (tmpfiles.h).
 */
#ifndef HB_FILEIO_H
#define HB_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Read a whole file into a NUL-terminated malloc'd buffer. */
int hb_read_file(const char *path, char **data, size_t *len, struct hb_error *err);

struct hb_atomic_file {
	FILE *f;            /* write here between open and commit */
	char path[4096];    /* final destination */
	char tmp[4200];     /* temporary file beside it */
};

int hb_atomic_open(struct hb_atomic_file *af, const char *path, struct hb_error *err);
int hb_atomic_commit(struct hb_atomic_file *af, struct hb_error *err);
void hb_atomic_abort(struct hb_atomic_file *af);

/* Write a whole buffer atomically. */
int hb_write_file_atomic(const char *path, const char *data, size_t len, struct hb_error *err);

/* mkdir -p; 0 if the directory exists afterwards. */
int hb_mkdir_p(const char *path, struct hb_error *err);

int hb_path_is_dir(const char *path);
int hb_path_exists(const char *path);

#endif
