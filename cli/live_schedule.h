/*
 * live_schedule.h: `hetbatch live --schedule RESULTS_DIR --job ID`
 * (cli/live_schedule.c); cli/live.c parses the options and calls it.
 */
#ifndef HB_CLI_LIVE_SCHEDULE_H
#define HB_CLI_LIVE_SCHEDULE_H

#include "cli.h"
#include "live.h"

struct hb_live_sched_args {
	const char *results;     /* simulator results directory or results.db */
	const char *policy;      /* which run of it (NULL: the only one holding the job) */
	int job;
	int max_configs;         /* the first N configurations */
	const char *dbpath;      /* profile database (the IIDP weight sync; prediction rows) */
	const char *out;         /* run directory */
	const char *launcher;
	const char *range;       /* internal: this process is the launch of configurations A:B */
	const char *segment_out;
	char **args;             /* the live command's arguments, passed on to every launch */
	int nargs;
};

int hb_cli_live_schedule(struct hb_cli *cli, struct hb_live_opts *o, const struct hb_live_sched_args *a);

#endif
