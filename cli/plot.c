/*
 * plot.c: gnuplot discovery and one-figure drawing (plot.h).
 */
#define _GNU_SOURCE     /* posix_spawn_file_actions_addfchdir_np */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "plot.h"
#include "strutil.h"

extern char **environ;

/* An executable `name` on PATH, into buf; 0 if found. */
static int find_on_path(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");

	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);

		if (len > 0 && (size_t)snprintf(buf, size, "%.*s/%s", (int)len, path, name) < size &&
		    access(buf, X_OK) == 0 && !hb_path_is_dir(buf))
			return 0;
		path = colon ? colon + 1 : NULL;
	}
	return -1;
}

static int has_script(const char *dir, const char *probe)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, probe);
	return hb_path_exists(p);
}

/* Where the scripts are, first found: $HETBATCH_GNUPLOT_DIR; beside an
 * installed binary (BINDIR/../share/hetbatch/gnuplot, then the configured
 * install directory, for a --datadir that is not ../share); the source tree
 * this binary was built from; and the source layout relative to a build
 * directory.  The installed copy comes before the source tree, so an
 * installed hetbatch uses the scripts installed with it even while the
 * tree it was built from is still there. */
static int script_dir(const char *probe, char *buf, size_t size, struct hb_error *err)
{
	static const char *const installed = "../share/hetbatch/gnuplot";
	static const char *const rel[] = { "../../scripts/gnuplot", "../scripts/gnuplot" };
	const char *env = getenv(HB_GNUPLOT_ENV);
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (!has_script(env, probe))
			return hb_input_error(err, "$%s: '%s' holds no %s", HB_GNUPLOT_ENV, env, probe);
		hb_strlcpy(buf, env, size);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0';
	} else {
		exe[0] = '\0';
	}
	if (exe[0] && (size_t)snprintf(buf, size, "%s/%s", exe, installed) < size && has_script(buf, probe))
		return 0;
#ifdef HB_GNUPLOT_INSTALL_DIR
	if (has_script(HB_GNUPLOT_INSTALL_DIR, probe)) {
		hb_strlcpy(buf, HB_GNUPLOT_INSTALL_DIR, size);
		return 0;
	}
#endif
#ifdef HB_GNUPLOT_DIR
	if (has_script(HB_GNUPLOT_DIR, probe)) {
		hb_strlcpy(buf, HB_GNUPLOT_DIR, size);
		return 0;
	}
#endif
	for (size_t i = 0; exe[0] && i < sizeof(rel) / sizeof(rel[0]); i++)
		if ((size_t)snprintf(buf, size, "%s/%s", exe, rel[i]) < size && has_script(buf, probe))
			return 0;
	return hb_input_error(err, "cannot find the gnuplot scripts (%s); set $%s to scripts/gnuplot", probe,
			      HB_GNUPLOT_ENV);
}

/* Make the script directory absolute (gnuplot runs in the output
 * directory, see hb_plot_figure) and refuse a name gnuplot could misread:
 * it goes into a quoted string, where a control character would end it. */
static int absolute_dir(char *gpdir, size_t size, struct hb_error *err)
{
	char real[PATH_MAX];

	if (!realpath(gpdir, real))
		return hb_input_error(err, "gnuplot scripts '%s': %s", gpdir, strerror(errno));
	for (const char *p = real; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return hb_input_error(err, "gnuplot scripts '%s': the path holds a control character; move "
						   "them or set $%s to another directory",
					      real, HB_GNUPLOT_ENV);
	if (hb_strlcpy(gpdir, real, size) >= size)
		return hb_input_error(err, "gnuplot scripts '%s': path too long", real);
	return 0;
}

int hb_plot_tools(const struct hb_cli *cli, const char *probe, char *gnuplot, size_t gsize, char *gpdir,
		  size_t dsize, struct hb_error *err)
{
	if (find_on_path("gnuplot", gnuplot, gsize) < 0) {
		fprintf(stderr, "%s: warning: gnuplot is not on PATH; skipping the plots (install gnuplot-nox); "
				"their data files are still written\n",
			cli->prog);
		return 0;
	}
	if (script_dir(probe, gpdir, dsize, err) < 0 || absolute_dir(gpdir, dsize, err) < 0)
		return -1;
	hb_info(&cli->log, "plots: %s with the scripts in %s", gnuplot, gpdir);
	return 1;
}

void hb_gp_assign(char *buf, size_t size, const char *var, const char *value)
{
	size_t len = strlen(buf);

	len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s='", var);
	for (; *value && len + 3 < size; value++) {
		if (*value == '\'')
			buf[len++] = '\'';
		/* a newline would end the -e command: titles get a space */
		buf[len++] = (unsigned char)*value < 0x20 || *value == 0x7f ? ' ' : *value;
	}
	if (len + 3 < size) {
		buf[len++] = '\'';
		buf[len++] = ';';
		buf[len] = '\0';
	}
}

/* Run gnuplot in the directory open as dirfd (a file action, not a shell:
 * the directory's name never reaches gnuplot). */
static int run_gnuplot(const char *gnuplot, int dirfd, const char *script, const char *vars, struct hb_error *err)
{
	char *argv[] = { (char *)gnuplot, (char *)"-e", (char *)vars, (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, rc;

	if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
		return hb_runtime_error(err, "%s: cannot start: %s", gnuplot, strerror(rc));
	rc = posix_spawn_file_actions_addfchdir_np(&fa, dirfd);
	if (rc == 0)
		rc = posix_spawn(&pid, gnuplot, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return hb_runtime_error(err, "%s: cannot start: %s", gnuplot, strerror(rc));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return hb_runtime_error(err, "%s: wait failed: %s", gnuplot, strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return hb_runtime_error(err, "gnuplot failed on %s (status %d)", script,
					WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* 1 if name is one hetbatch chose for a file in the output directory:
 * "./" then letters, digits, '.', '-', '_' (model and policy names are
 * made such stems); nothing gnuplot could take for a pipe or a quote. */
static int safe_name(const char *name)
{
	if (strncmp(name, "./", 2) != 0 || !name[2])
		return 0;
	for (const char *p = name + 2; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '-' || *p == '_' || *p == '+'))
			return 0;
	return 1;
}

int hb_plot_figure(const char *gnuplot, const char *gpdir, const char *script, const char *dir, const char *out,
		   const char *vars_in, struct hb_error *err)
{
	static const char *const ext[] = { "png", "svg" };
	char vars[8192], tmp[PATH_MAX + 64], from[PATH_MAX + 96], to[PATH_MAX + 96], sp[PATH_MAX + 64];
	int rc, dirfd;

	snprintf(tmp, sizeof(tmp), "./%s.tmp.%ld", out, (long)getpid());
	if (!safe_name(tmp))
		return hb_runtime_error(err, "%s: figure name '%s' is not a plain file name", dir, out);
	snprintf(sp, sizeof(sp), "%s/%s", gpdir, script);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return hb_runtime_error(err, "%s: cannot open: %s", dir, strerror(errno));
	hb_strlcpy(vars, vars_in, sizeof(vars));
	hb_gp_assign(vars, sizeof(vars), "gpdir", gpdir);  /* the scripts load gpdir/palette.gp */
	hb_gp_assign(vars, sizeof(vars), "out", tmp);
	rc = run_gnuplot(gnuplot, dirfd, sp, vars, err);
	for (int i = 0; i < 2; i++) {
		snprintf(from, sizeof(from), "%s.%s", tmp + 2, ext[i]);
		snprintf(to, sizeof(to), "%s.%s", out, ext[i]);
		if (rc == 0 && renameat(dirfd, from, dirfd, to) != 0)
			rc = hb_runtime_error(err, "%s/%s: cannot rename into place: %s", dir, to, strerror(errno));
		unlinkat(dirfd, from, 0);
	}
	close(dirfd);
	return rc;
}

int hb_gp_data(char *buf, size_t size, const char *name, struct hb_error *err)
{
	char path[512];

	snprintf(path, sizeof(path), "./%s", name);
	if (!safe_name(path))
		return hb_runtime_error(err, "data file name '%s' is not a plain file name", name);
	hb_gp_assign(buf, size, "dat", path);
	return 0;
}
