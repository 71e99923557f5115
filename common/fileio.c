#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "input.h"
#include "strutil.h"
#include "tmpfiles.h"

int hb_read_file(const char *path, char **data, size_t *len, struct hb_error *err)
{
	return hb_read_bytes_file(path, 0, data, len, err);
}

int hb_dir_open(const char *path, const char **base, struct hb_error *err)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, fd;

	if (!slash) {
		*base = path;
		hb_strlcpy(dir, ".", sizeof(dir));
	} else {
		size_t n = (size_t)(slash - path);

		if (n >= sizeof(dir))
			return hb_input_error(err, "%s: path too long", path);
		memcpy(dir, path, n);
		dir[n] = '\0';
		if (n == 0)
			hb_strlcpy(dir, "/", sizeof(dir));
		*base = slash + 1;
		/* a directory of hetbatch's own ("DIR.tmp.PID") is never reached
		 * through a link someone put in its place */
		if (hb_tmp_name_pid(strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir, NULL) > 0)
			flags |= O_NOFOLLOW;
	}
	if (!**base)
		return hb_input_error(err, "%s: names a directory, not a file", path);
	fd = open(dir, flags);
	if (fd < 0)
		return hb_runtime_error(err, "%s: cannot open its directory %s: %s", path, dir,
					errno == ELOOP ? "a symbolic link where hetbatch's own directory should be" :
							 strerror(errno));
	return fd;
}

int hb_create_at(int dirfd, const char *name, const char *what, const char *shown, int mode, struct hb_error *err)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
		struct stat st;

		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			break;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return hb_runtime_error(err, "%s: cannot create: %s is a symbolic link; hetbatch does not write "
						     "through one (remove it)",
						what, shown);
		/* Our own name, so a dead process's that had our PID (or a link
		 * planted to a file): unlinking the name touches no file's data. */
		if (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT)
			break;
	}
	return hb_runtime_error(err, "%s: cannot create %s: %s", what, shown, strerror(errno));
}

int hb_create_file(const char *path, struct stat *st, struct hb_error *err)
{
	const char *base;
	int dirfd = hb_dir_open(path, &base, err), fd, rc = 0;

	if (dirfd < 0)
		return -1;
	fd = hb_create_at(dirfd, base, path, path, 0666, err);
	if (fd < 0 || fstat(fd, st) != 0)
		rc = fd < 0 ? -1 : hb_runtime_error(err, "%s: cannot stat: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	close(dirfd);
	return rc;
}

int hb_create_missing(const char *path, const char *what, struct hb_error *err)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
			return hb_runtime_error(err, "%s: a symbolic link to nothing; hetbatch does not create a %s "
						     "through one (remove it)",
						path, what);
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd >= 0)
		close(fd);
	else if (errno == ELOOP || (errno == EEXIST && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)))
		return hb_runtime_error(err, "%s: a symbolic link appeared where the %s is created; hetbatch "
					     "does not write through one (remove it)",
					path, what);
	/* any other failure: the caller's own open says why */
	return 0;
}

int hb_same_file(const char *path, const struct stat *st)
{
	struct stat now;

	return lstat(path, &now) == 0 && S_ISREG(now.st_mode) && now.st_dev == st->st_dev && now.st_ino == st->st_ino;
}

#define TMPBASE(af) ((af)->tmp + (af)->tmpbase)

int hb_atomic_open(struct hb_atomic_file *af, const char *path, struct hb_error *err)
{
	const char *base;
	int fd;

	af->f = NULL;
	af->dirfd = -1;
	if (hb_strlcpy(af->path, path, sizeof(af->path)) >= sizeof(af->path))
		return hb_input_error(err, "%s: path too long", path);
	if ((af->dirfd = hb_dir_open(af->path, &base, err)) < 0)
		return -1;
	af->base = (size_t)(base - af->path);
	snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%ld", path, (long)getpid());
	af->tmpbase = af->base; /* tmp is path plus a suffix */
	/* A killed writer's "PATH.tmp.PID" goes before ours is made (tmpfiles.h). */
	hb_tmp_clean_stale_at(af->dirfd, base);
	/* O_EXCL | O_NOFOLLOW: a link or file planted at the temporary's name
	 * is never written through (issue 40) */
	fd = hb_create_at(af->dirfd, TMPBASE(af), path, af->tmp, 0666, err);
	if (fd < 0 || !(af->f = fdopen(fd, "wb"))) {
		if (fd >= 0) {
			hb_runtime_error(err, "%s: cannot create (temporary %s): %s", path, af->tmp, strerror(errno));
			close(fd);
			unlinkat(af->dirfd, TMPBASE(af), 0);
		}
		close(af->dirfd);
		af->dirfd = -1;
		return -1;
	}
	return 0;
}

static void close_dir(struct hb_atomic_file *af)
{
	if (af->dirfd >= 0)
		close(af->dirfd);
	af->dirfd = -1;
}

int hb_atomic_commit(struct hb_atomic_file *af, struct hb_error *err)
{
	int bad = 0, e;

	if (!af->f)
		return hb_runtime_error(err, "%s: not open", af->path);
	if (fflush(af->f) != 0 || ferror(af->f) || fsync(fileno(af->f)) != 0)
		bad = 1;
	if (fclose(af->f) != 0)
		bad = 1;
	e = errno;
	af->f = NULL;
	if (bad) {
		unlinkat(af->dirfd, TMPBASE(af), 0);
		close_dir(af);
		return hb_runtime_error(err, "%s: write failed: %s", af->path, strerror(e));
	}
	/* in the directory opened at the start: a renamed or replaced parent
	 * cannot redirect the result */
	if (renameat(af->dirfd, TMPBASE(af), af->dirfd, af->path + af->base) != 0) {
		e = errno;
		unlinkat(af->dirfd, TMPBASE(af), 0);
		close_dir(af);
		return hb_runtime_error(err, "%s: cannot rename into place: %s", af->path, strerror(e));
	}
	close_dir(af);
	return 0;
}

void hb_atomic_abort(struct hb_atomic_file *af)
{
	if (af->f) {
		fclose(af->f);
		af->f = NULL;
	}
	if (af->dirfd >= 0)
		unlinkat(af->dirfd, TMPBASE(af), 0);
	close_dir(af);
}

int hb_write_file_atomic(const char *path, const char *data, size_t len, struct hb_error *err)
{
	struct hb_atomic_file af;

	if (hb_atomic_open(&af, path, err) < 0)
		return -1;
	if (fwrite(data, 1, len, af.f) != len) {
		hb_atomic_abort(&af);
		return hb_runtime_error(err, "%s: write failed", path);
	}
	return hb_atomic_commit(&af, err);
}

int hb_path_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int hb_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int hb_mkdir_p(const char *path, struct hb_error *err)
{
	char buf[4096];
	size_t n = hb_strlcpy(buf, path, sizeof(buf));

	if (n >= sizeof(buf))
		return hb_input_error(err, "%s: path too long", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return hb_runtime_error(err, "%s: cannot create directory: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return hb_runtime_error(err, "%s: cannot create directory: %s", buf, strerror(errno));
	if (!hb_path_is_dir(buf))
		return hb_runtime_error(err, "%s: exists and is not a directory", buf);
	return 0;
}
