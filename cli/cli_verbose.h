/*
 * cli_verbose.h: what -v adds for a user debugging a run (issue 17 item 7),
 * beside the profile sources (cli_profiles.h): each run's decisions at a
 * summary level, and the files a command wrote.  Nothing prints below
 * HB_LOG_INFO (-v); per-job lines of a shared-cluster run need -vv.
 */
#ifndef HB_CLI_VERBOSE_H
#define HB_CLI_VERBOSE_H

#include "cli.h"
#include "sim.h"

/* -v: per job of a finished run `what` ("resnet50/jabas", "tiresias"): its
 * first and last global batch and GPUs, the range between, its decisions
 * counted by event kind, iterations, restarts and finish time.  A run of
 * more than one job (trace replay) gets one line for all of them (jobs by
 * outcome, restarts, preemptions, in-place changes, adaptation points),
 * and with -vv a line per job. */
void hb_cli_log_decisions(const struct hb_cli *cli, const char *what, const struct hb_sim *sim);

/* -v: "wrote DIR/NAME (SIZE)" for every regular file in dir, by name. */
void hb_cli_log_files(const struct hb_cli *cli, const char *cmd, const char *dir);

#endif
