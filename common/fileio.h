/*
 * fileio.h: whole-file reads and atomic writes.
 *
 * A result file is never left half-written: hb_atomic_open writes to
 * "PATH.tmp.PID" beside the target, hb_atomic_commit flushes, fsyncs and
 * renames it over PATH, and hb_atomic_abort removes it.  hb_atomic_open
 * first removes "PATH.tmp.PID" files of writers that died (tmpfiles.h).
 *
 * No file is written through a symbolic link (issue 40): PATH's directory
 * is opened once and the temporary is created in it with O_EXCL and
 * O_NOFOLLOW, renamed and removed relative to that descriptor, so a link
 * or file someone put at "PATH.tmp.PID" is never written through and a
 * directory swapped in between cannot redirect the result.  A symbolic
 * link at the temporary's name is a runtime error (exit 1) naming it; a
 * plain file there (a dead writer that had our PID) is unlinked first.
 * A link at PATH itself is replaced by the result, as rename(2) does.
 */
#ifndef HB_FILEIO_H
#define HB_FILEIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "error.h"

/* Read a whole file into a NUL-terminated malloc'd buffer. */
int hb_read_file(const char *path, char **data, size_t *len, struct hb_error *err);

struct hb_atomic_file {
	FILE *f;            /* write here between open and commit */
	char path[4096];    /* final destination */
	char tmp[4200];     /* temporary file beside it (for messages and readers) */
	size_t base;        /* offset of path's last component in path (an offset: */
	size_t tmpbase;     /* arrays of these are realloc'd), and of tmp's in tmp */
	int dirfd;          /* path's directory, opened once; -1 when closed */
};

int hb_atomic_open(struct hb_atomic_file *af, const char *path, struct hb_error *err);
int hb_atomic_commit(struct hb_atomic_file *af, struct hb_error *err);
void hb_atomic_abort(struct hb_atomic_file *af);

/* Open path's directory (O_DIRECTORY; O_NOFOLLOW too when that directory
 * is one of hetbatch's temporaries) and point *base at path's last
 * component: the descriptor, or -1 with err set. */
int hb_dir_open(const char *path, const char **base, struct hb_error *err);

/* Create name in dirfd, new (O_CREAT | O_EXCL | O_NOFOLLOW, read-write):
 * a symbolic link there is an error naming it, any other entry there is
 * unlinked once (it carries a name only this process makes).  Errors
 * begin with what (the file the user asked for) and name the entry as
 * shown (its path).  The descriptor, or -1 with err set. */
int hb_create_at(int dirfd, const char *name, const char *what, const char *shown, int mode,
		 struct hb_error *err);

/* Create path as a new empty file the same way (its directory opened once,
 * O_EXCL | O_NOFOLLOW): for a database SQLite is to fill, whose name the
 * caller owns ("PATH.tmp.PID").  *st receives the file's identity. */
int hb_create_file(const char *path, struct stat *st, struct hb_error *err);

/* Before a file that may exist is opened read-write with creation (a
 * database SQLite creates if missing): a missing path is made here, empty,
 * with O_EXCL | O_NOFOLLOW, so a symbolic link planted at the name is never
 * written through (issue 40); a link to nothing is refused (exit 1, what
 * names the kind of file).  An existing file, or a link to one, is the
 * user's and left to be opened as named.  (SQLITE_OPEN_NOFOLLOW is not
 * the answer: it refuses a link anywhere in the path, a linked parent
 * directory too.)  0, or -1 with err set. */
int hb_create_missing(const char *path, const char *what, struct hb_error *err);

/* 1 if path (not followed) is still the regular file *st describes: after
 * SQLite opened a file hb_create_file made, that it opened that file. */
int hb_same_file(const char *path, const struct stat *st);

/* Write a whole buffer atomically. */
int hb_write_file_atomic(const char *path, const char *data, size_t len, struct hb_error *err);

/* mkdir -p; 0 if the directory exists afterwards. */
int hb_mkdir_p(const char *path, struct hb_error *err);

int hb_path_is_dir(const char *path);
int hb_path_exists(const char *path);

#endif
