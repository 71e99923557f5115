/*
 * cli.h: what every `hetbatch` subcommand shares.
 *
 * Adding a subcommand:
 *   1. write cli/NAME.c with `int cmd_NAME(int argc, char **argv, struct hb_cli *cli)`;
 *      it parses its own options (getopt_long, argv[0] is the subcommand name),
 *      prints its --help with examples, calls library code, and returns an exit code;
 *   2. declare it below;
 *   3. add a row to the hb_cli_commands[] table in cli/commands.c (the help text is
 *      generated from that table);
 *   4. add the file to cli/meson.build and a test under tests/.
 *
 * Exit codes: 0 ok, 1 runtime failure, 2 usage or input error.  Only cli/
 * prints errors and exits; library code fills a struct hb_error.
 */
#ifndef HB_CLI_H
#define HB_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "log.h"
#include "progress.h"

struct hb_cli {
	const char *prog;      /* "hetbatch" */
	struct hb_log log;     /* threshold from -v/-q */
	int quiet;             /* -q: no progress bars, warnings only on error */
	uint64_t seed;         /* --seed N (default 1) */
	int seed_set;          /* 1 if --seed was given */
	enum hb_status_mode status; /* --status-line WHEN (progress.h); -q means never */
	double status_period_s;     /* seconds between status lines ($HETBATCH_STATUS_SECONDS) */
	int interrupt_said;    /* 1 once hb_cli_interrupted printed the command's line */
};

typedef int hb_cmd_fn(int argc, char **argv, struct hb_cli *cli);

struct hb_cmd {
	const char *name;      /* subcommand word */
	hb_cmd_fn *fn;
	const char *summary;   /* one line for `hetbatch --help` */
};

/* The subcommands, in help order (commands.c), their count, and the one
 * named name (NULL if none). */
extern const struct hb_cmd hb_cli_commands[];
extern const int hb_cli_ncommands;
const struct hb_cmd *hb_cli_command(const char *name);

/* The status mode a command's progress uses: never under -q. */
enum hb_status_mode hb_cli_status(const struct hb_cli *cli);

/* Print "hetbatch: error: MSG" and return the exit code for err. */
int hb_cli_fail(const struct hb_cli *cli, const struct hb_error *err);
/* Print a usage error with a pointer to `hetbatch CMD --help`; returns 2. */
int hb_cli_usage(const struct hb_cli *cli, const char *cmd, const char *fmt, ...) HB_PRINTF(3, 4);
/* The usage error for the argument getopt_long just refused (call it when
 * it returns '?' or ':'; opts: the subcommand's table): "needs a value", "is
 * ambiguous; it could be --a, --b", or "unknown option" with the closest
 * known names (cli_options.c).  Returns 2. */
struct option;
int hb_cli_bad_option(const struct hb_cli *cli, const char *cmd, int argc, char **argv, const struct option *opts);
/* The same for an argument parsed by hand (arg: what the user typed). */
/* Load every `--policy-plugin FILE` (or `=FILE`) of argv (up to "--")
 * into the policy registry before the command builds its option table
 * (cli_plugins.c); 0, or the exit code after the error is printed. */
int hb_cli_load_plugins(const struct hb_cli *cli, const char *cmd, int argc, char **argv);
int hb_cli_unknown_option(const struct hb_cli *cli, const char *cmd, const char *arg, const struct option *opts);
/* "; did you mean 'models'?" for a word none of names (NULL-terminated)
 * is, or "" (cli_options.c).  Returns buf. */
char *hb_cli_suggest(const char *word, const char *const *names, char *buf, size_t size);

/* Commands that write outputs (cli/cli_outputs.c).  After a caught SIGINT
 * SIGTERM or SIGHUP (interrupt.h): "hetbatch CMD: interrupted by SIGINT; WHAT
 * KEPT" on stderr, also with -q; returns 130 (SIGINT), 143 (SIGTERM) or 129
 * (SIGHUP).  While a
 * signal is pending, hb_cli_fail prints nothing and returns the same code:
 * the error is the interrupt's consequence, and this line says it. */
int hb_cli_interrupted(struct hb_cli *cli, const char *cmd, const char *fmt, ...) HB_PRINTF(3, 4);
/* "hetbatch CMD: results in DIR" on stderr, unless -q (where results went,
 * also without -v: issue 17 item 4). */
void hb_cli_results_in(const struct hb_cli *cli, const char *cmd, const char *dir);

int cmd_catalog(int argc, char **argv, struct hb_cli *cli);
int cmd_profile(int argc, char **argv, struct hb_cli *cli);
int cmd_import(int argc, char **argv, struct hb_cli *cli);
int cmd_plan(int argc, char **argv, struct hb_cli *cli);
int cmd_forecast(int argc, char **argv, struct hb_cli *cli);
int cmd_sim(int argc, char **argv, struct hb_cli *cli);
int cmd_sweep(int argc, char **argv, struct hb_cli *cli);
int cmd_live(int argc, char **argv, struct hb_cli *cli);
int cmd_version(int argc, char **argv, struct hb_cli *cli);

/* The measuring and comparing modes of `profile` (cli/profile_measure.c)
 * and `profile allreduce` (cli/profile_allreduce.c). */
void hb_profile_measure_usage(FILE *out);
int hb_cmd_profile_measure(int argc, char **argv, struct hb_cli *cli);
int hb_cmd_profile_compare(const char *dbpath, struct hb_cli *cli);
/* profile --backend torch (cli/profile_torch.c) and its help section. */
int hb_cmd_profile_torch(int argc, char **argv, struct hb_cli *cli);
void hb_profile_torch_usage(FILE *out);
int cmd_profile_allreduce(int argc, char **argv, struct hb_cli *cli);

#endif
