/*
 * tmpfiles.c: temporaries named after their writer's PID (tmpfiles.h).
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpfiles.h"

pid_t hb_tmp_name_pid(const char *name, const char *stem)
{
	const char *p;
	long pid = 0;

	if (stem) {
		size_t n = strlen(stem);

		if (strncmp(name, stem, n) != 0 || strncmp(name + n, ".tmp.", 5) != 0)
			return 0;
		p = name + n + 5;
	} else {
		/* the last ".tmp." followed by a digit */
		const char *q = name;

		p = NULL;
		while ((q = strstr(q, ".tmp.")) != NULL) {
			if (q > name && q[5] >= '0' && q[5] <= '9')
				p = q + 5;
			q++;
		}
		if (!p)
			return 0;
	}
	if (*p < '1' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		pid = pid * 10 + (*p - '0');
		if (pid > 0x7fffffffL)
			return 0;
	}
	if (*p != '\0' && *p != '-' && *p != '.')
		return 0;
	return (pid_t)pid;
}

int hb_pid_alive(pid_t pid)
{
	if (pid <= 0)
		return 1;
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* rm -rf name in dirfd, depth levels deep at most; no symbolic link is
 * followed: a link is unlinked itself, its target stays (issue 40). */
static int remove_at(int dirfd, const char *name, int depth)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0);
	if (depth <= 0)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* keep going on failure: remove as much as can go */
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			remove_at(fd, e->d_name, depth - 1);
	closedir(d);
	return unlinkat(dirfd, name, AT_REMOVEDIR);
}

int hb_remove_tree_at(int dirfd, const char *name)
{
	return remove_at(dirfd, name, 64);
}

int hb_remove_tree(const char *path)
{
	return hb_remove_tree_at(AT_FDCWD, path);
}

int hb_tmp_clean_stale_at(int dirfd, const char *stem)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	DIR *d;
	int n = 0;

	/* a copy of the descriptor: closedir closes the one it reads */
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		pid_t pid = hb_tmp_name_pid(e->d_name, stem);

		if (pid <= 0 || pid == getpid() || hb_pid_alive(pid))
			continue;
		if (hb_remove_tree_at(dirfd, e->d_name) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int hb_tmp_clean_stale(const char *dir, const char *stem)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n;

	if (fd < 0)
		return 0;
	n = hb_tmp_clean_stale_at(fd, stem);
	close(fd);
	return n;
}
