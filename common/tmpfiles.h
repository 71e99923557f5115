/*
 * tmpfiles.h: temporaries that name their writer, and removing those whose
 * writer is dead.
 *
 * Every temporary hetbatch writes carries its PID: "NAME.tmp.PID" for a
 * file (fileio.h), a database ("NAME.tmp.PID" with SQLite's "-journal",
 * "-wal" and "-shm" beside it) or a staging directory (outset.h), and
 * "NAME.tmp.PID.EXT" for a figure gnuplot writes.  A process stopped by a
 * signal it caught removes its own (interrupt.h); one killed outright
 * (SIGKILL, a crash, a second Ctrl-C) cannot, so the next run that writes
 * to the same place calls hb_tmp_clean_stale there: an entry whose PID is
 * not a live process (kill(PID, 0) fails with ESRCH) is removed, files and
 * directories alike.  A live PID, even another program's after PID reuse,
 * keeps its entry: removing a live writer's file is worse than keeping a
 * stale one a little longer.  Removal never follows a symbolic link: a
 * link named like a stale temporary is unlinked itself, its target stays
 * (issue 40).
 */
#ifndef HB_TMPFILES_H
#define HB_TMPFILES_H

#include <stddef.h>
#include <sys/types.h>

/* The PID a temporary's name carries after `stem` (NULL: any stem):
 * "STEM.tmp.PID" optionally followed by '-' or '.' and more; 0 if name is
 * not such a temporary. */
pid_t hb_tmp_name_pid(const char *name, const char *stem);

/* 1 if pid is a live process (or one we may not signal), 0 if not. */
int hb_pid_alive(pid_t pid);

/* Remove, in directory dir, the temporaries of dead processes whose name
 * starts with stem (NULL: every temporary).  Returns how many entries went;
 * a directory that cannot be read removes nothing. */
int hb_tmp_clean_stale(const char *dir, const char *stem);

/* The same in the directory open as dirfd (AT_FDCWD: the current one), so
 * that the directory cleaned is the one the caller is about to write in. */
int hb_tmp_clean_stale_at(int dirfd, const char *stem);

/* rm -rf path (no symbolic link is followed, at any depth); 0, or -1 with
 * errno. */
int hb_remove_tree(const char *path);

/* rm -rf name relative to dirfd, the same way. */
int hb_remove_tree_at(int dirfd, const char *name);

#endif
