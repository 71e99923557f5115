/*
 * cli_plugins.c: `--policy-plugin FILE`, read before a command parses the
 * rest of its options (cli.h), because a plugin's policies bring options
 * of their own that getopt's table must hold: git reads `-c` before the
 * command's options for the same reason.  The plugins stay loaded until
 * the command returns (hetbatch.c unloads them).
 */
#include <string.h>

#include "cli.h"
#include "plugin.h"

int hb_cli_load_plugins(const struct hb_cli *cli, const char *cmd, int argc, char **argv)
{
	struct hb_error err = { 0 };
	static const char opt[] = "--policy-plugin";
	const size_t len = sizeof(opt) - 1;

	for (int i = 1; i < argc; i++) {
		const char *path = NULL;

		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], opt, len) != 0)
			continue;
		if (argv[i][len] == '=')
			path = argv[i] + len + 1;
		else if (argv[i][len] == '\0') {
			if (i + 1 >= argc)
				return hb_cli_usage(cli, cmd, "--policy-plugin needs a FILE");
			path = argv[++i];
		} else
			continue; /* another option with this prefix: getopt's to judge */
		if (hb_plugin_load(path, &err) < 0)
			return hb_cli_fail(cli, &err);
	}
	return 0;
}
