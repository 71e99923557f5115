/*
 * cli_options.c: what every subcommand's option parsing shares when
 * getopt_long refuses an argument (cli.h): a missing value, an ambiguous
 * abbreviation, or an unknown option with the closest known names.
 *
 * The subcommands parse with opterr = 0 so that this one message, not
 * getopt's own, reaches the user.  getopt_long accepts any unambiguous
 * prefix of a long option, so a prefix of several is reported as ambiguous
 * with the options it could mean rather than as unknown.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "suggest.h"

/* The options whose names start with name[0..len), into buf; their count. */
static int prefix_matches(const struct option *opts, const char *name, size_t len, char *buf, size_t size)
{
	size_t used = 0;
	int n = 0;

	buf[0] = '\0';
	for (const struct option *o = opts; o && o->name; o++) {
		if (strncmp(o->name, name, len) != 0)
			continue;
		used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s--%s", n ? ", " : "", o->name);
		n++;
	}
	return n;
}

int hb_cli_unknown_option(const struct hb_cli *cli, const char *cmd, const char *arg, const struct option *opts)
{
	struct hb_suggest s;
	char name[128], hint[512], matches[512];
	const char *eq;
	size_t len;

	if (!arg || arg[0] != '-' || !arg[1])
		return hb_cli_usage(cli, cmd, "unknown option '%s'", arg ? arg : "");
	if (arg[1] != '-') {
		/* "-x", or a long option written with one dash ("-policy"): the
		 * option of exactly that name is the one meant, alone */
		for (const struct option *o = opts; arg[2] && o && o->name; o++)
			if (strcmp(o->name, arg + 1) == 0)
				return hb_cli_usage(cli, cmd, "unknown option '%s'; did you mean '--%s'?", arg, o->name);
		hb_suggest_init(&s, arg + 1);
		for (const struct option *o = opts; arg[2] && o && o->name; o++)
			hb_suggest_add(&s, o->name);
		hb_suggest_format(&s, "--", hint, sizeof(hint));
		return hb_cli_usage(cli, cmd, "unknown option '%s'%s", arg, hint);
	}
	eq = strchr(arg + 2, '=');
	len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
	snprintf(name, sizeof(name), "%.*s", (int)len, arg + 2);
	for (const struct option *o = opts; o && o->name; o++) {
		if (strcmp(o->name, name) != 0)
			continue;
		if (eq && o->has_arg == no_argument)
			return hb_cli_usage(cli, cmd, "option '--%s' takes no value", name);
		return hb_cli_usage(cli, cmd, "option '--%s' needs a value", name);
	}
	if (len > 0 && prefix_matches(opts, name, len, matches, sizeof(matches)) > 1)
		return hb_cli_usage(cli, cmd, "option '--%s' is ambiguous; it could be %s", name, matches);
	hb_suggest_init(&s, name);
	for (const struct option *o = opts; o && o->name; o++)
		hb_suggest_add(&s, o->name);
	hb_suggest_format(&s, "--", hint, sizeof(hint));
	return hb_cli_usage(cli, cmd, "unknown option '--%s'%s", name, hint);
}

static int is_short_group(const char *s)
{
	return s && s[0] == '-' && s[1] && s[1] != '-';
}

int hb_cli_bad_option(const struct hb_cli *cli, const char *cmd, int argc, char **argv, const struct option *opts)
{
	const char *prev = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
	const char *cur = optind < argc ? argv[optind] : NULL;
	int c = optopt > 0 && optopt < 128 ? optopt : 0; /* a refused short option's letter; 0 for a long one */

	/* getopt_long steps past a long option before it complains, and past a
	 * group of short ones ("-policy" is -p -o ...) only after its last
	 * letter: before that the refused word is the current one. */
	if (c && is_short_group(prev) && prev[strlen(prev) - 1] == c)
		return hb_cli_unknown_option(cli, cmd, prev, opts);
	if (c && is_short_group(cur) && strchr(cur + 1, c))
		return hb_cli_unknown_option(cli, cmd, cur, opts);
	return hb_cli_unknown_option(cli, cmd, prev, opts);
}

char *hb_cli_suggest(const char *word, const char *const *names, char *buf, size_t size)
{
	struct hb_suggest s;

	hb_suggest_init(&s, word);
	for (; *names; names++)
		hb_suggest_add(&s, *names);
	hb_suggest_format(&s, "", buf, size);
	return buf;
}
