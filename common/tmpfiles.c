/*
 * tmpfiles.c: temporaries named after their writer's PID (tmpfiles.h).
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
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

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	/* keep going on failure: remove as much as can go */
	remove(path);
	return 0;
}

int hb_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return remove(path);
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return lstat(path, &st) == 0 ? -1 : 0;
}

int hb_tmp_clean_stale(const char *dir, const char *stem)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		pid_t pid = hb_tmp_name_pid(e->d_name, stem);
		char path[4096 + 256];

		if (pid <= 0 || pid == getpid() || hb_pid_alive(pid))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (hb_remove_tree(path) == 0)
			n++;
	}
	closedir(d);
	return n;
}
