/*
 * cli_outputs.c: the lines of the commands that write outputs (cli.h):
 * where the results went, and what an interrupt kept.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"
#include "interrupt.h"

int hb_cli_interrupted(struct hb_cli *cli, const char *cmd, const char *fmt, ...)
{
	int sig = hb_interrupted();
	va_list ap;

	fprintf(stderr, "%s %s: interrupted by %s; ", cli->prog, cmd, hb_signal_name(sig));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli->interrupt_said = 1;
	return 128 + (sig > 0 ? sig : 2);
}

void hb_cli_results_in(const struct hb_cli *cli, const char *cmd, const char *dir)
{
	if (!cli->quiet)
		fprintf(stderr, "%s %s: results in %s\n", cli->prog, cmd, dir);
}
