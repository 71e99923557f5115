#include <errno.h>
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

int hb_atomic_open(struct hb_atomic_file *af, const char *path, struct hb_error *err)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');

	if (hb_strlcpy(af->path, path, sizeof(af->path)) >= sizeof(af->path))
		return hb_input_error(err, "%s: path too long", path);
	/* A killed writer's "PATH.tmp.PID" goes before ours is made (tmpfiles.h). */
	if (!slash)
		hb_tmp_clean_stale(".", path);
	else if ((size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		hb_tmp_clean_stale(slash == path ? "/" : dir, slash + 1);
	}
	snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%ld", path, (long)getpid());
	af->f = fopen(af->tmp, "wb");
	if (!af->f)
		/* the user's path first; the temporary too, since the reason
		 * ("Is a directory") may be about it */
		return hb_runtime_error(err, "%s: cannot create (temporary %s): %s", path, af->tmp, strerror(errno));
	return 0;
}

int hb_atomic_commit(struct hb_atomic_file *af, struct hb_error *err)
{
	int bad = 0;

	if (!af->f)
		return hb_runtime_error(err, "%s: not open", af->path);
	if (fflush(af->f) != 0 || ferror(af->f) || fsync(fileno(af->f)) != 0)
		bad = 1;
	if (fclose(af->f) != 0)
		bad = 1;
	af->f = NULL;
	if (bad) {
		remove(af->tmp);
		return hb_runtime_error(err, "%s: write failed: %s", af->path, strerror(errno));
	}
	if (rename(af->tmp, af->path) != 0) {
		int e = errno;

		remove(af->tmp);
		return hb_runtime_error(err, "%s: cannot rename into place: %s", af->path, strerror(e));
	}
	return 0;
}

void hb_atomic_abort(struct hb_atomic_file *af)
{
	if (af->f) {
		fclose(af->f);
		af->f = NULL;
	}
	remove(af->tmp);
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
