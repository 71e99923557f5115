/*
 * import.c: `hetbatch import`: load published or measured profiles into the
 * profile database (profiler/import.h does the work).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "cli_profiles.h" /* hb_cli_note_user_db */
#include "default_db.h" /* defines: hb_user_profdb_for_writing, hb_is_user_profdb */
#include "fileio.h"     /* defines: hb_path_exists */
#include "import.h"
#include "interrupt.h"
#include "profdb.h"
#include "strutil.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch import pollux DIR [--db FILE]\n"
		"       hetbatch import sia DIR [--db FILE]\n"
		"       hetbatch import jabas DIR [--db FILE]\n"
		"       hetbatch import nccl-tests FILE --link NAME [--scope intra|inter] [--gpus N] [--db FILE]\n"
		"\n"
		"Load published or measured profiles into the profile database.  Each import\n"
		"is one transaction: a bad line or field anywhere leaves the database as it was.\n"
		"\n"
		"Kinds:\n"
		"  pollux      Pollux's published T4 profiles: one directory per application with\n"
		"              placements.csv, scalability.csv and validation-<batch>.csv\n"
		"              -> placement, scalability, gradstats, single-GPU compute rows\n"
		"  sia         Sia's per-GPU-type profiles (SOSP'23 artifact, sia-simulator/traces):\n"
		"              one directory per application with placements-<type>.csv,\n"
		"              scalability-<type>.csv, validation-<batch>.csv; types aws -> t4,\n"
		"              rtx -> rtx-2080ti, dgx-ext -> a100-40gb, quad -> quadro-rtx-6000\n"
		"              -> placement, scalability, gradstats, single-GPU compute rows\n"
		"  jabas       a JABAS/IIDP profile set: cluster_info.json, cluster_comp_profile_data/,\n"
		"              cluster_mem_profile_data/, bucket_profile_data/, comm_profile_data/\n"
		"              -> compute, memory, bucket, allreduce rows and the Eq. 3 fits\n"
		"  nccl-tests  all_reduce_perf output (the printed table, or its -J JSON file)\n"
		"              -> one allreduce row per message size (out-of-place time)\n"
		"\n"
		"Options:\n"
		"  --db FILE        profile database (default: your profile database,\n"
		"                   $%s/%s or ~/.local/share/hetbatch/%s,\n"
		"                   which plan, sim and sweep read when given no --db)\n"
		"  --link NAME      nccl-tests: link class the rows are keyed by (e.g. nvlink4, ib-100g)\n"
		"  --scope S        nccl-tests: intra or inter (default: inter if the ranks span hosts)\n"
		"  --gpus N         nccl-tests: GPUs in the run (default: the ranks the file lists)\n"
		"  -h, --help       this help\n"
		"\n"
		"Examples:\n"
		"  hetbatch import pollux ../shared/data/pollux/profiles\n"
		"  hetbatch import jabas ../shared/data/jabas/resnet50-quickstart --db profiles.db\n"
		"  hetbatch import sia tests/fixtures/sia/good --db sia.db\n"
		"  (a fixture in the layout of Sia's sia-simulator/traces, github.com/siasosp23/artifacts,\n"
		"  which is not shipped: it has no license; give your checkout's folder)\n"
		"  hetbatch import nccl-tests tests/fixtures/nccl/allreduce-8gpu.txt \\\n"
		"      --link nvlink4 --scope intra\n"
		"  (that file is what `all_reduce_perf -b 1M -e 8M -f 2 -g 8` prints on 8 GPUs)\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure, 2 usage or input error.\n",
		HB_USER_DB_ENV, HB_USER_DB_NAME, HB_USER_DB_NAME);
}

static void print_stats(const struct hb_cli *cli, const char *kind, const char *path, const char *db,
			const struct hb_import_stats *s)
{
	const struct {
		const char *table;
		long rows;
	} t[] = {
		{ "compute", s->compute },         { "memory", s->memory },
		{ "bucket", s->bucket },           { "allreduce", s->allreduce },
		{ "allreduce_fit", s->allreduce_fit }, { "placement", s->placement },
		{ "scalability", s->scalability }, { "gradstats", s->gradstats },
	};

	for (int i = 0; i < s->nwarn; i++)
		hb_warn(&cli->log, "%s", s->warn[i]);
	if (s->nwarn_dropped)
		hb_warn(&cli->log, "%d more warnings not shown", s->nwarn_dropped);
	printf("imported %s from %s into %s (run %lld, %ld %s):\n", kind, path, db, (long long)s->run_id,
	       s->files, hb_plural(s->files, "file", "files"));
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].rows)
			printf("  %-14s %6ld %s\n", t[i].table, t[i].rows, hb_plural(t[i].rows, "row", "rows"));
	for (int i = 0; i < s->nfits; i++)
		printf("  fit %s %s: t_ms = %.4f * x_ms + %.4f (K = %.4g B/s, r2 = %.4f)\n", s->fits[i].scope,
		       s->fits[i].link, s->fits[i].alpha, s->fits[i].beta, s->fits[i].bandwidth, s->fits[i].r2);
}

int cmd_import(int argc, char **argv, struct hb_cli *cli)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "link", required_argument, NULL, 'l' },
		{ "scope", required_argument, NULL, 's' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db_path = NULL, *link = NULL, *scope = NULL, *kind, *path;
	char user_db[4096];
	struct hb_catalog cat;
	struct hb_import_stats stats;
	struct hb_error err = { 0 };
	struct hb_profdb *db = NULL;
	long gpus = 0;
	int c, rc, nccl, existed;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db_path = optarg;
			break;
		case 'l':
			link = optarg;
			break;
		case 's':
			if (strcmp(optarg, "intra") != 0 && strcmp(optarg, "inter") != 0)
				return hb_cli_usage(cli, "import", "--scope must be 'intra' or 'inter', got '%s'", optarg);
			scope = optarg;
			break;
		case 'g':
			if (hb_parse_long_range(optarg, 2, 1L << 20, &gpus) < 0)
				return hb_cli_usage(cli, "import", "--gpus needs an integer >= 2, got '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return hb_cli_usage(cli, "import", "option '%s' needs a value", argv[optind - 1]);
		default:
			return hb_cli_bad_option(cli, "import", argc, argv, opts);
		}
	}
	if (argc - optind != 2)
		return hb_cli_usage(cli, "import", "expected KIND and PATH (pollux DIR, sia DIR, jabas DIR or nccl-tests FILE)");
	kind = argv[optind];
	path = argv[optind + 1];
	nccl = strcmp(kind, "nccl-tests") == 0;
	if (!nccl && strcmp(kind, "pollux") != 0 && strcmp(kind, "sia") != 0 && strcmp(kind, "jabas") != 0) {
		static const char *const kinds[] = { "pollux", "sia", "jabas", "nccl-tests", NULL };
		char hint[128];

		return hb_cli_usage(cli, "import", "unknown kind '%s' (pollux, sia, jabas or nccl-tests)%s", kind,
				    hb_cli_suggest(kind, kinds, hint, sizeof(hint)));
	}
	if (!nccl && (link || scope || gpus))
		return hb_cli_usage(cli, "import", "--link, --scope and --gpus apply to nccl-tests only");
	if (nccl && !link)
		return hb_cli_usage(cli, "import", "nccl-tests needs --link NAME (the link class the rows are keyed by)");

	memset(&cat, 0, sizeof(cat));
	if (!nccl && hb_catalog_load_builtin(&cat, &err) < 0)
		return hb_cli_fail(cli, &err);
	if (!db_path) {
		if (hb_user_profdb_for_writing(user_db, sizeof(user_db), &err) < 0) {
			hb_catalog_free(&cat);
			return hb_cli_fail(cli, &err);
		}
		db_path = user_db;
	}
	hb_info(&cli->log, "profile database: %s", db_path);
	/* A failed import removes the file only if this command created it. */
	existed = hb_path_exists(db_path);
	/* SIGINT/SIGTERM/SIGHUP: the import's one transaction is rolled back */
	hb_interrupt_catch();
	if (hb_profdb_open(db_path, 0, &db, &err) < 0) {
		hb_catalog_free(&cat);
		if (!existed)
			hb_profdb_remove_if_empty(db_path);
		return hb_cli_fail(cli, &err);
	}
	if (nccl)
		rc = hb_import_nccl(db, path, scope, link, (int)gpus, &stats, &err);
	else if (strcmp(kind, "pollux") == 0)
		rc = hb_import_pollux(db, &cat, path, &stats, &err);
	else if (strcmp(kind, "sia") == 0)
		rc = hb_import_sia(db, &cat, path, &stats, &err);
	else
		rc = hb_import_jabas(db, &cat, path, &stats, &err);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	if (rc < 0) {
		if (!existed && hb_profdb_remove_if_empty(db_path))
			hb_info(&cli->log, "%s: removed the empty database this import created", db_path);
		if (hb_interrupted())
			return hb_cli_interrupted(cli, "import", "nothing imported; %s is as it was", db_path);
		return hb_cli_fail(cli, &err);
	}
	print_stats(cli, kind, path, db_path, &stats);
	if (db_path == user_db || hb_is_user_profdb(db_path)) {
		hb_cli_note_user_db(cli, db_path);
	} else {
		/* issue 17 item 1: say where later commands will not look */
		char where[4096];
		struct hb_error e2 = { 0 };

		if (hb_user_profdb_path(where, sizeof(where), &e2) < 0)
			hb_strlcpy(where, "your profile database", sizeof(where));
		hb_warn(&cli->log, "plan, sim and sweep read %s only when given --db %s; without --db they read %s "
			"(and the analytic profiles)", db_path, db_path, where);
	}
	return 0;
}
