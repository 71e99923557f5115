/*
 * hetbatch.c: the `hetbatch` command: global options, then the subcommand
 * of the table (commands.c).
 *
 * Global options (-v, -q, --seed N) may appear before or after the
 * subcommand; they are taken out of argv before the subcommand sees it, so no
 * subcommand may define them itself.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "hb_config.h"
#include "cli.h"
#include "plugin.h"  /* hb_plugin_unload_all */
#include "interrupt.h"
#include "strutil.h"
#include "suggest.h"


/* A word that names no subcommand: the closest ones and the full list. */
static int unknown_subcommand(const struct hb_cli *cli, const char *word)
{
	struct hb_suggest s;
	char hint[256], list[256];
	size_t len = 0;

	hb_suggest_init(&s, word);
	hb_suggest_add(&s, "help"); /* a word the dispatcher takes too */
	for (int i = 0; i < hb_cli_ncommands; i++) {
		hb_suggest_add(&s, hb_cli_commands[i].name);
		len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0, "%s%s", i ? ", " : "",
					hb_cli_commands[i].name);
	}
	hb_suggest_format(&s, "", hint, sizeof(hint));
	return hb_cli_usage(cli, NULL, "unknown subcommand '%s'%s\nSubcommands: %s", word, hint, list);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch [-v | -q] [--seed N] SUBCOMMAND [options]\n"
		"\n"
		"Plan, simulate and cost DNN training on heterogeneous GPU clusters.\n"
		"\n"
		"Subcommands:\n");
	for (int i = 0; i < hb_cli_ncommands; i++)
		fprintf(out, "  %-10s %s\n", hb_cli_commands[i].name, hb_cli_commands[i].summary);
	fprintf(out,
		"\n"
		"Global options:\n"
		"  -v, --verbose    more messages on stderr (repeat for debug)\n"
		"  -q, --quiet      only errors; no progress bars\n"
		"  --seed N         seed for every random stream (default 1)\n"
		"  --status-line WHEN  progress on stderr: auto (default: a bar on a\n"
		"                   terminal; elsewhere a status line every 30 s once a\n"
		"                   run lasts that long, $HETBATCH_STATUS_SECONDS to\n"
		"                   change), always (status lines from the start and at\n"
		"                   the end, terminal or not) or never.  Not --progress:\n"
		"                   that is sim's convergence model; not --status: sim's\n"
		"                   Philly job-status filter\n"
		"  --version        print the version and build features\n"
		"  -h, --help       this help; 'hetbatch SUBCOMMAND --help' for each subcommand\n"
		"\n"
		"Examples:\n"
		"  hetbatch catalog gpus\n"
		"  hetbatch profile --analytic --db profiles.db\n"
		"  hetbatch import jabas ../shared/data/jabas/resnet50-quickstart --db profiles.db\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure, 2 usage or input error.\n");
}

/* The global options by name, for the message about a misspelled one (they
 * are parsed by hand in take_global_options). */
static const struct option global_options[] = {
	{ "verbose", no_argument, NULL, 'v' }, { "quiet", no_argument, NULL, 'q' },
	{ "seed", required_argument, NULL, 0 }, { "version", no_argument, NULL, 0 },
	{ "status-line", required_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },    { NULL, 0, NULL, 0 },
};

/* Remove global options from argv in place; returns the new argc or -1. */
static int take_global_options(int argc, char **argv, struct hb_cli *cli)
{
	int out = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;

		if (strcmp(a, "--") == 0) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			cli->log.level++;
		} else if (strcmp(a, "-vv") == 0) {
			cli->log.level += 2;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			cli->quiet = 1;
			cli->log.level = HB_LOG_ERROR;
		} else if (strcmp(a, "--seed") == 0 || strncmp(a, "--seed=", 7) == 0) {
			long v;

			if (a[6] == '=')
				val = a + 7;
			else if (i + 1 < argc)
				val = argv[++i];
			if (!val || hb_parse_long_range(val, 0, 0x7fffffffL, &v) < 0) {
				hb_cli_usage(cli, NULL, "--seed needs an integer in [0, 2147483647], got '%s'",
					     val ? val : "");
				return -1;
			}
			cli->seed = (uint64_t)v;
			cli->seed_set = 1;
		} else if (strcmp(a, "--status-line") == 0 || strncmp(a, "--status-line=", 14) == 0) {
			val = a[13] == '=' ? a + 14 : i + 1 < argc ? argv[++i] : NULL;
			if (!val || hb_status_parse(val, &cli->status) < 0) {
				hb_cli_usage(cli, NULL, "--status-line needs auto, always or never, got '%s'", val ? val : "");
				return -1;
			}
		} else {
			argv[out++] = argv[i];
		}
	}
	argv[out] = NULL;
	return out;
}

int main(int argc, char **argv)
{
	struct hb_cli cli = {
		.prog = "hetbatch",
		.log = { .level = HB_LOG_WARN, .out = stderr },
		.seed = 1,
	};

	/* GSL's default error handler aborts the process (a GPR fit asked for
	 * more memory than there is ended in SIGABRT); off, every GSL call
	 * returns its status and the library turns it into an hb_error. */
	gsl_set_error_handler_off();
	argc = take_global_options(argc, argv, &cli);
	if (argc < 0)
		return 2;
	if (hb_status_period_env(&cli.status_period_s) < 0)
		return hb_cli_usage(&cli, NULL, "$%s: '%s' is not a number of seconds >= 0", HB_STATUS_PERIOD_ENV,
				    getenv(HB_STATUS_PERIOD_ENV));
	if (cli.log.level > HB_LOG_DEBUG)
		cli.log.level = HB_LOG_DEBUG;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char help[] = "--help";
			char *sub[3] = { argv[2], help, NULL };

			for (int i = 0; i < hb_cli_ncommands; i++)
				if (strcmp(argv[2], hb_cli_commands[i].name) == 0)
					return hb_cli_commands[i].fn(2, sub, &cli);
			return unknown_subcommand(&cli, argv[2]);
		}
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		return hb_cli_command("version")->fn(1, argv + 1, &cli);
	for (int i = 0; i < hb_cli_ncommands; i++)
		if (strcmp(argv[1], hb_cli_commands[i].name) == 0) {
			int rc = hb_cli_commands[i].fn(argc - 1, argv + 1, &cli);

			hb_plugin_unload_all(); /* --policy-plugin's files, if the command loaded any */

			/* a command that caught a signal and did not say what it kept */
			if (hb_interrupted() && !cli.interrupt_said)
				rc = hb_cli_interrupted(&cli, argv[1], "stopped; its temporaries were removed");
			/* a table or --json document that did not reach its reader (a
			 * full disk, a closed pipe) is not a success */
			if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
				fprintf(stderr, "hetbatch: error: %s: writing standard output failed\n", argv[1]);
				rc = 1;
			}
			return rc;
		}
	if (argv[1][0] == '-')
		return hb_cli_unknown_option(&cli, NULL, argv[1], global_options);
	return unknown_subcommand(&cli, argv[1]);
}
