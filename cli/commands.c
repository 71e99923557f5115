/*
 * commands.c: the subcommand table (cli.h), which `hetbatch`'s main
 * (hetbatch.c) dispatches on and prints as its help, and which the C API
 * (api/hetbatch.c) runs commands from, so that both know the same ones.
 */
#include <stdio.h>
#include <string.h>

#include "hb_config.h"
#include "cli.h"

int cmd_version(int argc, char **argv, struct hb_cli *cli)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: hetbatch version\n"
		       "\n"
		       "Print hetbatch's version and the features this build has: the CUDA\n"
		       "toolkit (GPU profiling and live runs on GPUs) and MPI (live runs, sweeps on\n"
		       "MPI ranks).  'hetbatch --version' does the same.\n"
		       "\n"
		       "Example:\n"
		       "  hetbatch version\n"
		       "\n"
		       "Exit status: 0 ok, 2 usage error.\n");
		return 0;
	}
	if (argc > 1)
		return hb_cli_usage(cli, "version", "takes no arguments, got '%s'", argv[1]);
	printf("hetbatch %s (CUDA toolkit at build: %s, MPI: %s)\n", HB_VERSION, HB_HAVE_GPU ? "yes" : "no",
	       HB_HAVE_MPI ? "yes" : "no");
	return 0;
}

const struct hb_cmd hb_cli_commands[] = {
	{ "catalog", cmd_catalog, "list GPU types, DNN models and cluster presets" },
	{ "profile", cmd_profile, "fill a profile database: the analytic model, or measured (--backend)" },
	{ "import", cmd_import, "load published or measured profiles into the profile database" },
	{ "plan", cmd_plan, "plan one job: IIDP configuration, DDP and OptPerf baselines, auto-scaling" },
	{ "forecast", cmd_forecast, "forecast the next epoch's global batch trajectory" },
	{ "version", cmd_version, "print the version and build features" },
	{ "sim", cmd_sim, "simulate policies on one job (dedicated cluster) or a job trace (shared cluster)" },
	{ "sweep", cmd_sweep, "what-if studies over clusters, loads, policies and seeds" },
	{ "live", cmd_live, "run a plan on real devices under mpirun; predicted against measured" },
	/* new subcommands go above this line */
};

const int hb_cli_ncommands = (int)(sizeof(hb_cli_commands) / sizeof(hb_cli_commands[0]));

const struct hb_cmd *hb_cli_command(const char *name)
{
	for (int i = 0; i < hb_cli_ncommands; i++)
		if (strcmp(hb_cli_commands[i].name, name) == 0)
			return &hb_cli_commands[i];
	return NULL;
}
