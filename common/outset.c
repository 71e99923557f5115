/*
 * outset.c: an output directory written as a whole (outset.h).
 */
#define _GNU_SOURCE     /* renameat2, RENAME_EXCHANGE */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "input.h"
#include "outset.h"
#include "strutil.h"
#include "tmpfiles.h"

/* ---- paths ------------------------------------------------------------------------------- */

/* The parent of path ("." for a bare name) and its last component. */
static void split_path(const char *path, char *parent, size_t psize, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		hb_strlcpy(parent, ".", psize);
		*base = path;
	} else if (slash == path) {
		hb_strlcpy(parent, "/", psize);
		*base = slash + 1;
	} else {
		size_t n = (size_t)(slash - path);

		if (n >= psize)
			n = psize - 1;
		memcpy(parent, path, n);
		parent[n] = '\0';
		*base = slash + 1;
	}
}

/* mkdir -p parent, remembering the outermost directory it made. */
static int make_parents(struct hb_outset *os, const char *parent, struct hb_error *err)
{
	char buf[4096];
	size_t len = hb_strlcpy(buf, parent, sizeof(buf));

	os->made[0] = '\0';
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (!hb_path_exists(buf)) {
			hb_strlcpy(os->made, buf, sizeof(os->made));
			break;
		}
		buf[i] = parent[i];
	}
	return hb_mkdir_p(parent, err);
}

/* rmdir parent and its parents up to os->made (empty ones only). */
static void remove_parents(struct hb_outset *os)
{
	char buf[4096];
	size_t made = strlen(os->made);
	const char *base;

	if (!made)
		return;
	split_path(os->dir, buf, sizeof(buf), &base);
	while (strlen(buf) >= made) {
		char *slash;

		if (rmdir(buf) != 0 || strlen(buf) == made || !(slash = strrchr(buf, '/')))
			break;
		*slash = '\0';
	}
	os->made[0] = '\0';
}

/* 1 if dir (which exists) is "/", the current directory or one above it. */
static int holds_cwd(const char *dir)
{
	char rd[PATH_MAX], cwd[PATH_MAX];
	size_t n;

	if (!realpath(dir, rd) || !getcwd(cwd, sizeof(cwd)))
		return 0;
	n = strlen(rd);
	if (strcmp(rd, "/") == 0)
		return 1;
	return strncmp(cwd, rd, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

/* The last components of DIR, DIR.tmp.PID and DIR.lock: the names the set
 * is handled by, relative to os->pfd. */
#define NAME(os) ((os)->dir + (os)->base)
#define STAGE_NAME(os) ((os)->stage + (os)->base)
#define LOCK_NAME(os) ((os)->lock + (os)->base)

/* ---- the lock ----------------------------------------------------------------------------- */

/* Open DIR.lock, never through a symbolic link (O_NOFOLLOW) and never a
 * file that has another name too (a hard link planted to a victim) or is
 * not a plain file: the PID is written into it (issue 40).  The file may
 * exist: a killed holder leaves it, and flock, not existence, is the lock. */
static int lock_open(struct hb_outset *os, struct hb_error *err)
{
	int fd = openat(os->pfd, LOCK_NAME(os), O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
	struct stat st;

	if (fd < 0 && errno == ELOOP)
		return hb_runtime_error(err, "--out %s: the lock %s is a symbolic link; hetbatch does not write "
					     "through one (remove it)",
					os->dir, os->lock);
	if (fd < 0)
		return hb_runtime_error(err, "--out %s: cannot create the lock %s: %s", os->dir, os->lock,
					strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return hb_runtime_error(err, "--out %s: the lock %s is not a plain file of its own (a hard link or a "
					     "special file); hetbatch does not write into it (remove it)",
					os->dir, os->lock);
	}
	return fd;
}

static int lock_take(struct hb_outset *os, struct hb_error *err)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat a, b;
		int fd = lock_open(os, err);
		char pid[32];

		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			ssize_t n = read(fd, pid, sizeof(pid) - 1);

			pid[n > 0 ? n : 0] = '\0';
			pid[strcspn(pid, "\n")] = '\0';
			close(fd);
			return hb_runtime_error(err, "--out %s: another hetbatch (PID %s) is writing this directory; wait "
						"for it to finish or choose another --out",
						os->dir, pid[0] ? pid : "unknown");
		}
		/* The holder before us may have unlinked the file we locked. */
		if (fstat(fd, &a) == 0 && fstatat(os->pfd, LOCK_NAME(os), &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());

			if (ftruncate(fd, 0) != 0 || write(fd, pid, (size_t)len) != len) {
				/* the PID is only for the message of a second writer */
			}
			os->lock_fd = fd;
			return 0;
		}
		close(fd);
	}
	return hb_runtime_error(err, "--out %s: cannot take the lock %s", os->dir, os->lock);
}

static void lock_release(struct hb_outset *os)
{
	if (os->lock_fd < 0)
		return;
	unlinkat(os->pfd, LOCK_NAME(os), 0); /* while held: see lock_take */
	close(os->lock_fd);
	os->lock_fd = -1;
}

/* ---- ownership ------------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir but "." and "..", sorted (*out malloc'd, each too). */
static int list_dir(const char *dir, char ***out, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int cap = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			char **nv = realloc(v, sizeof(*v) * (size_t)(cap = cap ? 2 * cap : 16));

			if (!nv)
				break;
			v = nv;
		}
		if (!(v[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (*n > 0)
		qsort(v, (size_t)*n, sizeof(*v), cmp_str);
	*out = v;
	return 0;
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* 1 if the manifest text lists name ("file NAME" on a line of its own). */
static int manifest_lists(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while (*p) {
		const char *eol = strchr(p, '\n');

		if (strncmp(p, "file ", 5) == 0 && strncmp(p + 5, name, n) == 0 && (p[5 + n] == '\n' || p[5 + n] == '\0'))
			return 1;
		if (!eol)
			break;
		p = eol + 1;
	}
	return 0;
}

/* The first entry of DIR that is not part of a hetbatch set (NULL: none),
 * into `foreign` (size bytes). */
static int find_foreign(struct hb_outset *os, char *foreign, size_t size, int *nforeign, struct hb_error *err)
{
	const char *dir = os->dir;
	char mpath[4200], *text = NULL, **v;
	int n;

	foreign[0] = '\0';
	*nforeign = 0;
	snprintf(mpath, sizeof(mpath), "%s/%s", dir, HB_OUTSET_MANIFEST);
	if (hb_path_exists(mpath)) {
		struct hb_error rerr = { 0 };

		if (hb_read_text_file(mpath, 0, &text, NULL, &rerr) < 0)
			return hb_runtime_error(err, "--out %s: cannot read its manifest: %s", dir, rerr.msg);
		/* a killed writer's "*.tmp.PID" left inside (older versions wrote in place) */
		int dfd = openat(os->pfd, NAME(os), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (dfd >= 0) {
			hb_tmp_clean_stale_at(dfd, NULL);
			close(dfd);
		}
	}
	if (list_dir(dir, &v, &n) < 0) {
		free(text);
		return hb_runtime_error(err, "--out %s: cannot read the directory: %s", dir, strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i], HB_OUTSET_MANIFEST) == 0 || (text && manifest_lists(text, v[i])))
			continue;
		if (!foreign[0])
			hb_strlcpy(foreign, v[i], size);
		(*nforeign)++;
	}
	free_list(v, n);
	free(text);
	return 0;
}

/* ---- begin, publish, abort ----------------------------------------------------------------------- */

static void close_parent(struct hb_outset *os)
{
	if (os->pfd >= 0)
		close(os->pfd);
	os->pfd = -1;
}

/* mkdir DIR.tmp.PID.  mkdir never follows a link; one at that name is
 * refused by name, a directory there is a dead writer's that had our PID
 * (ours is made only here) and goes first. */
static int make_stage(struct hb_outset *os, struct hb_error *err)
{
	struct stat st;

	if (mkdirat(os->pfd, STAGE_NAME(os), 0777) == 0)
		return 0;
	if (errno == EEXIST && fstatat(os->pfd, STAGE_NAME(os), &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return hb_runtime_error(err, "--out %s: %s is a symbolic link; hetbatch does not write through "
						     "one (remove it)",
						os->dir, os->stage);
		if (hb_remove_tree_at(os->pfd, STAGE_NAME(os)) == 0 && mkdirat(os->pfd, STAGE_NAME(os), 0777) == 0)
			return 0;
	}
	return hb_runtime_error(err, "--out %s: cannot create %s: %s", os->dir, os->stage, strerror(errno));
}

int hb_outset_begin(struct hb_outset *os, const char *dir, const char *cmd, int force, struct hb_error *err)
{
	char parent[4096], foreign[256];
	const char *base;
	struct stat st;
	size_t len;
	int nforeign;

	memset(os, 0, sizeof(*os));
	os->lock_fd = -1;
	os->pfd = -1;
	hb_strlcpy(os->cmd, cmd, sizeof(os->cmd));
	len = hb_strlcpy(os->dir, dir, sizeof(os->dir));
	if (len >= sizeof(os->dir) - 64)
		return hb_input_error(err, "--out %s: path too long", dir);
	while (len > 1 && os->dir[len - 1] == '/')
		os->dir[--len] = '\0';
	if (len == 0)
		return hb_input_error(err, "--out: empty directory name");
	if (lstat(os->dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		char real[PATH_MAX];

		/* replace the directory the link points to, keep the link */
		if (!realpath(os->dir, real))
			return hb_input_error(err, "--out %s: a symbolic link to nothing: %s", dir, strerror(errno));
		if (hb_strlcpy(os->dir, real, sizeof(os->dir)) >= sizeof(os->dir) - 64)
			return hb_input_error(err, "--out %s: path too long", dir);
	}
	if (hb_path_exists(os->dir)) {
		if (!hb_path_is_dir(os->dir))
			return hb_input_error(err, "--out %s: exists and is not a directory", dir);
		if (holds_cwd(os->dir))
			return hb_input_error(err, "--out %s: is the current directory or one above it; the results go "
					      "into a directory of their own, replaced as a whole",
					      dir);
	}
	split_path(os->dir, parent, sizeof(parent), &base);
	os->base = (size_t)(base - os->dir);
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return hb_input_error(err, "--out %s: name the results directory itself, not '%s'", dir, base);
	if ((size_t)snprintf(os->stage, sizeof(os->stage), "%s.tmp.%ld", os->dir, (long)getpid()) >= sizeof(os->stage) ||
	    (size_t)snprintf(os->lock, sizeof(os->lock), "%s.lock", os->dir) >= sizeof(os->lock))
		return hb_input_error(err, "--out %s: path too long", dir);
	if (make_parents(os, parent, err) < 0) {
		hb_error_prefix(err, "--out %s", dir);
		return -1;
	}
	/* Writability before the work, not after it. */
	if (access(parent, W_OK | X_OK) != 0) {
		hb_runtime_error(err, "--out %s: cannot write in %s: %s", dir, parent, strerror(errno));
		remove_parents(os);
		return -1;
	}
	/* every side file is made relative to the parent opened once here */
	if ((os->pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		hb_runtime_error(err, "--out %s: cannot open %s: %s", dir, parent, strerror(errno));
		remove_parents(os);
		return -1;
	}
	if (lock_take(os, err) < 0)
		goto fail;
	hb_tmp_clean_stale_at(os->pfd, base);
	if (hb_path_is_dir(os->dir)) {
		if (find_foreign(os, foreign, sizeof(foreign), &nforeign, err) < 0)
			goto fail;
		if (nforeign > 0 && !force) {
			char more[64] = "";

			if (nforeign > 1)
				snprintf(more, sizeof(more), " and %d more", nforeign - 1);
			hb_input_error(err, "--out %s: holds '%s'%s that no hetbatch run wrote there; the results "
					    "replace the directory as a whole: choose a new or empty directory, or add "
					    "--force to replace it",
				       dir, foreign, more);
			goto fail;
		}
	}
	if (make_stage(os, err) < 0)
		goto fail;
	os->active = 1;
	return 0;
fail:
	lock_release(os);
	close_parent(os);
	remove_parents(os);
	return -1;
}

static int write_manifest(struct hb_outset *os, struct hb_error *err)
{
	char path[4300], **v;
	struct hb_atomic_file af;
	int n, rc;

	if (list_dir(os->stage, &v, &n) < 0)
		return hb_runtime_error(err, "%s: cannot read: %s", os->stage, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", os->stage, HB_OUTSET_MANIFEST);
	if (hb_atomic_open(&af, path, err) < 0) {
		free_list(v, n);
		return -1;
	}
	fprintf(af.f, "# hetbatch output set, written by 'hetbatch %s'; the next run with --out here\n"
		      "# replaces the whole directory.  Files of the set:\n",
		os->cmd);
	for (int i = 0; i < n; i++)
		if (strcmp(v[i], HB_OUTSET_MANIFEST) != 0)
			fprintf(af.f, "file %s\n", v[i]);
	free_list(v, n);
	rc = hb_atomic_commit(&af, err);
	if (rc == 0) {
		int fd = openat(os->pfd, STAGE_NAME(os), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0 || fsync(fd) != 0)
			rc = hb_runtime_error(err, "%s: cannot sync: %s", os->stage, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

int hb_outset_publish(struct hb_outset *os, struct hb_error *err)
{
	int e;

	if (!os->active)
		return hb_runtime_error(err, "--out %s: no output set is open", os->dir);
	if (write_manifest(os, err) < 0)
		goto fail;
	if (renameat(os->pfd, STAGE_NAME(os), os->pfd, NAME(os)) == 0)
		goto done; /* DIR did not exist, or was empty */
	e = errno;
	if (e != EEXIST && e != ENOTEMPTY) {
		hb_runtime_error(err, "--out %s: cannot move %s into place: %s", os->dir, os->stage, strerror(e));
		goto fail;
	}
	if (renameat2(os->pfd, STAGE_NAME(os), os->pfd, NAME(os), RENAME_EXCHANGE) != 0) {
		char old[4300];
		const char *oldname;

		e = errno;
		if (e != EINVAL && e != ENOSYS && e != ENOTSUP) {
			hb_runtime_error(err, "--out %s: cannot exchange it with %s: %s", os->dir, os->stage, strerror(e));
			goto fail;
		}
		/* no atomic exchange here: DIR is missing for an instant */
		snprintf(old, sizeof(old), "%s.old", STAGE_NAME(os));
		oldname = old;
		if (renameat(os->pfd, NAME(os), os->pfd, oldname) != 0) {
			hb_runtime_error(err, "--out %s: cannot move the old set aside: %s", os->dir, strerror(errno));
			goto fail;
		}
		if (renameat(os->pfd, STAGE_NAME(os), os->pfd, NAME(os)) != 0) {
			hb_runtime_error(err, "--out %s: cannot move %s into place: %s", os->dir, os->stage,
					 strerror(errno));
			if (renameat(os->pfd, oldname, os->pfd, NAME(os)) != 0) {
				/* the next begin removes it (its name carries our PID) */
			}
			goto fail;
		}
		hb_remove_tree_at(os->pfd, oldname);
	}
	/* the old set now sits at the staging name */
	hb_remove_tree_at(os->pfd, STAGE_NAME(os));
done:
	fsync(os->pfd);
	os->active = 0;
	lock_release(os);
	close_parent(os);
	return 0;
fail:
	hb_outset_abort(os);
	return -1;
}

void hb_outset_abort(struct hb_outset *os)
{
	if (!os->active)
		return;
	hb_remove_tree_at(os->pfd, STAGE_NAME(os));
	os->active = 0;
	lock_release(os);
	close_parent(os);
	remove_parents(os);
}
