/*
 * fuzz_common.h: what the libFuzzer targets share (scripts/fuzz builds them;
 * they are not part of the meson build or the test suite).
 *
 * The readers and importers take paths, so each input is written to a file
 * in a per-process scratch directory under $TMPDIR first.  Multi-file
 * importers read a directory: their input is several files joined by the
 * line FUZZ_SEP, split back here (a missing part leaves its file absent).
 * The scratch directory is process state kept between runs, as is usual
 * for a libFuzzer harness.
 */
#ifndef HB_FUZZ_COMMON_H
#define HB_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_SEP "\n--8<--\n"

static char fuzz_dir_buf[1024];

/* The scratch directory, made on first use. */
static inline const char *fuzz_dir(void)
{
	if (!fuzz_dir_buf[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(fuzz_dir_buf, sizeof(fuzz_dir_buf), "%s/hbfuzzXXXXXX", t && t[0] ? t : "/tmp");
		if (!mkdtemp(fuzz_dir_buf))
			abort();
	}
	return fuzz_dir_buf;
}

/* DIR/rel, making the directories on the way. */
static inline const char *fuzz_path(const char *rel)
{
	static char path[2048];
	char *p;

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), rel);
	for (p = path + strlen(fuzz_dir()) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	return path;
}

static inline void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
}

/* Write data to DIR/name and return its path. */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	const char *p = fuzz_path(name);

	fuzz_write(p, data, size);
	return p;
}

/* Write the FUZZ_SEP-separated parts of data to the files names[0..n-1]
 * (relative to the scratch directory); files without a part are removed. */
static inline void fuzz_split_files(const uint8_t *data, size_t size, const char *const *names, int n)
{
	const size_t sl = strlen(FUZZ_SEP);
	size_t pos = 0;

	for (int i = 0; i < n; i++) {
		const char *path = fuzz_path(names[i]);
		size_t end = pos;

		if (pos > size) {
			unlink(path);
			continue;
		}
		while (end < size && !(end + sl <= size && memcmp(data + end, FUZZ_SEP, sl) == 0))
			end++;
		fuzz_write(path, data + pos, end - pos);
		pos = end + sl;
	}
}

#endif
