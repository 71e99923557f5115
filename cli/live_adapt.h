/*
 * live_adapt.h: `hetbatch live --policy P` (cli/live_adapt.c): the driver
 * of an adaptive live run and, under mpirun, one of its launches.  cli/live.c
 * parses the options and calls it.
 */
#ifndef HB_CLI_LIVE_ADAPT_H
#define HB_CLI_LIVE_ADAPT_H

#include "cli.h"
#include "live.h"
#include "live_policy.h"

struct hb_live_adapt_args {
	const char *model, *cluster;  /* catalog names */
	const char *dbpath;           /* profile database (required) */
	const char *out;              /* run directory (required) */
	const char *launcher;         /* "mpirun" unless --launcher or $HB_MPIRUN */
	const char *segment_in;       /* internal: this process is a launch (--segment) */
	const char *segment_out;
	struct hb_live_policy_params par;
	int relaunch_always;
	int max_launches;
	char **args;                  /* the live command's arguments, passed on to every launch */
	int nargs;
};

int hb_cli_live_adapt(struct hb_cli *cli, struct hb_live_opts *o, const struct hb_live_adapt_args *a);
/* A driver stopped by SIGINT, SIGTERM or SIGHUP (err: HB_EINTR, saying
 * where): its one line, "hetbatch live: MESSAGE"; returns 128 + the signal. */
int hb_cli_live_interrupted(const struct hb_error *err);

#endif
