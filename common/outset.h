/*
 * outset.h: an output directory written as a whole ("output set").
 *
 * `sim --out DIR` and `sweep --out DIR` leave in DIR either the set a
 * previous run left there or the complete new set, never a mix and never a
 * part (issue 16 item 1):
 *
 *   - hb_outset_begin, before any work: creates DIR's missing parents,
 *     takes the lock, removes a killed writer's leftovers, checks that DIR
 *     is the command's to replace and makes the staging directory
 *     "DIR.tmp.PID" beside it.  Every writer writes there (results stream
 *     into it as the runs go; figures are drawn there).
 *   - hb_outset_publish, at the end: writes the manifest, then moves the
 *     staging directory into place in one step: rename(2) where DIR does
 *     not exist, renameat2(RENAME_EXCHANGE) where it does (the old set then
 *     sits at the staging name and is removed).  On a file system without
 *     RENAME_EXCHANGE the old set is first renamed to "DIR.tmp.PID.old": a
 *     reader may then find no DIR for an instant, never a mixed one.
 *   - hb_outset_abort, on any failure or interrupt: removes the staging
 *     directory and the parents begin created; DIR is untouched.
 *
 * Ownership (issue 17 item 4): DIR is the command's to replace when it is
 * missing, empty, or holds a manifest ".hetbatch-set" (written by publish:
 * the command and every file of the set, one per line) and nothing the
 * manifest does not list.  A directory holding anything else is refused
 * with one line naming a file, unless force is set; even with force,
 * neither "/" nor the current directory or one above it is replaced.
 *
 * Two writers (issue 16 item 4): begin takes an exclusive flock(2) on
 * "DIR.lock" beside DIR and holds it until publish or abort; a second
 * writer fails at once with one line naming the first one's PID (it would
 * otherwise replace the first's set right after, having waited for
 * nothing).  The lock file is removed by its holder; an acquirer that finds
 * the file it locked already unlinked retries on the new one.
 *
 * No side file is reached through a symbolic link (issue 40): begin opens
 * DIR's parent once and makes the lock (O_NOFOLLOW, and refused unless a
 * plain file with one link, since the PID is written into it), the staging
 * directory (mkdirat) and the renames relative to that descriptor.  A
 * symbolic link at "DIR.lock" or "DIR.tmp.PID" is refused with one line
 * naming it (exit 1); files inside the staging directory are made with
 * O_EXCL | O_NOFOLLOW (fileio.h).  A link at DIR itself still means "the
 * directory it points to" (resolved once, at begin).
 *
 * Leftovers of a writer that was killed outright ("DIR.tmp.PID" and
 * "DIR.tmp.PID.old" whose PID is dead; "*.tmp.PID" inside an owned DIR) are
 * removed by the next begin on the same DIR, under the lock.
 */
#ifndef HB_OUTSET_H
#define HB_OUTSET_H

#include "error.h"

#define HB_OUTSET_MANIFEST ".hetbatch-set"   /* the manifest's name inside a set */

struct hb_outset {
	char dir[4096];       /* DIR: the destination, trailing slashes removed, symbolic links resolved */
	char stage[4096];     /* DIR.tmp.PID: where the set is written */
	char lock[4096];      /* DIR.lock */
	char made[4096];      /* the outermost parent begin created ("": none), removed on abort if empty */
	char cmd[32];         /* the command writing the set ("sim", "sweep"), recorded in the manifest */
	int lock_fd;          /* the held lock, -1 when none */
	int pfd;              /* DIR's parent, opened once by begin: the lock, the staging directory and the
				 renames are made relative to it; -1 when closed */
	size_t base;          /* offset of DIR's last component in dir (and of the same in stage, lock) */
	int active;           /* 1 between begin and publish/abort */
};

/* Before any work: see above.  cmd names the writer in the manifest; force
 * replaces a directory that is not a hetbatch set.  Errors name DIR and say
 * what to do (exit 2 for a refused directory, 1 for a busy or unwritable
 * one). */
int hb_outset_begin(struct hb_outset *os, const char *dir, const char *cmd, int force, struct hb_error *err);

/* Write the manifest and move the staging directory into place; on failure
 * the staging directory is removed and DIR keeps its old set. */
int hb_outset_publish(struct hb_outset *os, struct hb_error *err);

/* Remove the staging directory and release the lock (a no-op when not
 * active, so error paths may call it unconditionally). */
void hb_outset_abort(struct hb_outset *os);

#endif
