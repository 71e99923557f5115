/*
 * cli_errors.c: the error lines every subcommand prints ("hetbatch: error:
 * ...") and the status mode its progress uses.  Apart from the dispatcher
 * (hetbatch.c) so that the subcommands can also run inside another program:
 * api/ links them without main().
 */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"
#include "interrupt.h"

enum hb_status_mode hb_cli_status(const struct hb_cli *cli)
{
	return cli->quiet ? HB_STATUS_NEVER : cli->status;
}

int hb_cli_fail(const struct hb_cli *cli, const struct hb_error *err)
{
	if (hb_interrupted())
		return 128 + hb_interrupted(); /* hb_cli_interrupted's line says it (cli.h) */
	fprintf(stderr, "%s: error: %s\n", cli->prog, err->msg[0] ? err->msg : "unknown error");
	return err->code == HB_EINPUT ? 2 : 1;
}

int hb_cli_usage(const struct hb_cli *cli, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	/* one form for every error line: "hetbatch: error: [CMD: ]what" */
	fprintf(stderr, "%s: error: %s%s", cli->prog, cmd ? cmd : "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s%s%s --help'.\n", cli->prog, cmd ? " " : "", cmd ? cmd : "");
	return 2;
}
