/*
 * profile.c: `hetbatch profile`, the front door of three modes and one
 * subcommand:
 *   --analytic [--db FILE | --default-db] [--gpus A,B] [--models X,Y] [--show]
 *       fills a profile database from the analytic model (models/analytic.h):
 *       compute, memory, bucket and all-reduce-fit tables for every selected
 *       catalog GPU x model, in one transaction.  --default-db (re)builds the
 *       cached database commands use when given no --db (default_db.h);
 *   --backend cuda|cpu ...   measures a device (cli/profile_measure.c);
 *   --backend torch ...      real PyTorch models through the CUPTI injection
 *                            library (cli/profile_torch.c);
 *   --compare [--db FILE]    analytic model against measured rows (same file);
 *   allreduce ...            all-reduce sweeps (cli/profile_allreduce.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "analytic_gen.h"
#include "catalog.h"
#include "cli.h"
#include "default_db.h"
#include "fileio.h"     /* hb_path_exists */
#include "interrupt.h"
#include "profdb.h"
#include "progress.h"
#include "strutil.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MAX_NAMES 256

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch profile --analytic [--db FILE | --default-db] [--gpus A,B]\n"
		"                        [--models X,Y] [--show]\n"
		"       hetbatch profile --backend cuda|cpu [options]     (measure a device)\n"
		"       hetbatch profile --compare [--db FILE]\n"
		"       hetbatch profile allreduce --backend cuda|cpu [options]  (see its --help)\n"
		"\n"
		"Fill a profile database.  Analytic mode (--analytic): a roofline-style\n"
		"model calibrated on published measurements (JABAS ResNet-50 on V100 and\n"
		"P100, Pollux T4 profiles) writes, for every catalog GPU x model, the\n"
		"compute times per local batch and number of VSWs, the memory feasibility\n"
		"table, the gradient buckets, and JABAS Eq. 3 all-reduce fits for every\n"
		"link class of the catalog's clusters (source \"analytic\").  Rows already\n"
		"in the file for other sources (imports, measurements) are kept; readers\n"
		"prefer measured rows.\n"
		"\n"
		"Options:\n"
		"  --analytic        generate profiles from the analytic model (required)\n"
		"  --db FILE         database to fill (created if missing); --analytic needs\n"
		"                    --db FILE or --default-db.  --compare reads FILE, default\n"
		"                    your profile database ($%s/%s)\n"
		"  --default-db      rebuild the cached default database that commands use\n"
		"                    when given no --db ($%s, $XDG_CACHE_HOME/hetbatch or\n"
		"                    ~/.cache/hetbatch) and print its path; always the whole\n"
		"                    catalog\n"
		"  --gpus A,B        only these catalog GPU types (default: all)\n"
		"  --models X,Y      only these catalog models (default: all)\n"
		"  --show            print a summary per GPU x model and the all-reduce fits\n"
		"  -h, --help        this help\n"
		"\n"
		"Examples:\n"
		"  hetbatch profile --analytic --db profiles.db\n"
		"  hetbatch profile --analytic --db v100.db --gpus v100,p100 --models resnet50 --show\n"
		"  hetbatch profile --analytic --default-db\n"
		"\n"
		"  hetbatch profile --backend cpu --models resnet50,bert-large --scale 0.02 --db cpu.db\n"
		"  hetbatch profile --backend cuda --models resnet50 --db h100.db\n"
		"  hetbatch profile --compare --db cpu.db\n"
		"  mpirun -np 2 hetbatch profile allreduce --backend cpu --sizes 1,5,10 --db cpu.db\n"
		"\n",
		HB_USER_DB_ENV, HB_USER_DB_NAME, HB_DEFAULT_DB_ENV);
	hb_profile_measure_usage(out);
	fprintf(out, "\n");
	hb_profile_torch_usage(out);
	fprintf(out, "\nExit status: 0 ok, 1 runtime failure (database, device: 'no CUDA device'), 2 usage\n"
		"error or unknown name.\n");
}

/* Which mode argv asks for, before the analytic parser sees it. */
/* 1 when a --gpus/--models item names a file: it exists, or it looks like
 * one (the catalog's resolver then says what is wrong with it). */
static int looks_like_file(const char *s)
{
	return hb_path_exists(s) || hb_catalog_is_file_name(s);
}

static int has_option(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
			return 1;
	return 0;
}

static void on_progress(void *ctx, int done, int total)
{
	(void)total;
	hb_progress_update(ctx, done);
}

/* One line per GPU x model: what the analytic model says at min_lbs and at
 * the largest local batch that fits. */
static int show(const struct hb_cli *cli, const struct hb_catalog *cat, char **gpus, int ng, char **models,
		int nm)
{
	struct hb_error err = { 0 };
	struct hb_allreduce_fit *fits;
	int nfits;

	printf("%-16s %-18s %-8s %7s %6s %10s %10s %12s\n", "GPU", "MODEL", "ARCH", "MIN_LBS", "NMAX", "FB_MS",
	       "MAX_LBS", "THP@MAX/S");
	for (int i = 0; i < (ng ? ng : cat->ngpus); i++) {
		const struct hb_gpu *g = ng ? hb_catalog_gpu(cat, gpus[i]) : &cat->gpus[i];

		for (int j = 0; j < (nm ? nm : cat->nmodels); j++) {
			const struct hb_model *m = nm ? hb_catalog_model(cat, models[j]) : &cat->models[j];
			struct hb_compute_row lo, hi;
			int bmin = m->min_lbs > 0 ? (int)m->min_lbs : 1;
			int bmax = hb_analytic_max_local_bs(g, m);

			if (bmax == 0) {
				printf("%-16s %-18s %-8s %7d %6d %10s %10s %12s\n", g->name, m->name,
				       hb_analytic_arch_of(g)->name, bmin, 0, "-", "-", "does not fit");
				continue;
			}
			if (hb_analytic_compute(g, m, bmin, 1, &lo, NULL, &err) < 0 ||
			    hb_analytic_compute(g, m, bmax, 1, &hi, NULL, &err) < 0)
				return hb_cli_fail(cli, &err);
			printf("%-16s %-18s %-8s %7d %6d %10.2f %10d %12.1f\n", g->name, m->name,
			       hb_analytic_arch_of(g)->name, bmin, hb_analytic_max_vsw(g, m, bmin, 0),
			       1e3 * (lo.fwd_s + lo.bwd_s), bmax, bmax / hi.total_s);
		}
	}
	printf("\nNMAX: VSWs that fit at MIN_LBS; FB_MS: fwd+bwd of one VSW at MIN_LBS; THP@MAX: samples/s of one\n"
	       "VSW at MAX_LBS (data + fwd + bwd + update).\n"
	       "All-reduce fits, JABAS Eq. 3: t_ms = ALPHA x_ms + BETA, x_ms = d 4(N-1)/N / K:\n\n");
	if (hb_analytic_catalog_fits(cat, &fits, &nfits, &err) < 0)
		return hb_cli_fail(cli, &err);
	printf("%-6s %-14s %8s %9s %9s  %s\n", "SCOPE", "LINK", "ALPHA", "BETA_MS", "K_GB/s", "BASIS");
	for (int i = 0; i < nfits; i++) {
		const char *src = hb_analytic_link_of(fits[i].link)->source;
		const char *colon = strchr(src, ':');

		/* "fitted" or "assumed"; the full basis is in models/analytic.c */
		printf("%-6s %-14s %8.3f %9.2f %9.2f  %.*s\n", fits[i].scope, fits[i].link, fits[i].alpha, fits[i].beta,
		       fits[i].bandwidth / 1e9, colon ? (int)(colon - src) : (int)strlen(src), src);
	}
	free(fits);
	return 0;
}

int cmd_profile(int argc, char **argv, struct hb_cli *cli)
{
	enum { OPT_ANALYTIC = 256, OPT_DB, OPT_DEFAULT, OPT_GPUS, OPT_MODELS, OPT_SHOW };
	static const struct option opts[] = {
		{ "analytic", no_argument, NULL, OPT_ANALYTIC },
		{ "db", required_argument, NULL, OPT_DB },
		{ "default-db", no_argument, NULL, OPT_DEFAULT },
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ "models", required_argument, NULL, OPT_MODELS },
		{ "show", no_argument, NULL, OPT_SHOW },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dbpath = NULL;
	char *gpu_arg = NULL, *model_arg = NULL;
	char *gpus[MAX_NAMES], *models[MAX_NAMES];
	int gpu_idx[MAX_NAMES], model_idx[MAX_NAMES]; /* a file's entry in cat, -1: a catalog name */
	int analytic = 0, use_default = 0, do_show = 0, ng = 0, nm = 0, c, rc;
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	struct hb_analytic_stats st = { 0 };
	struct hb_progress prog;
	struct hb_profdb *db = NULL;
	double t0;

	if (argc > 1 && strcmp(argv[1], "allreduce") == 0)
		return cmd_profile_allreduce(argc - 1, argv + 1, cli);
	if (has_option(argc, argv, "--help") || has_option(argc, argv, "-h")) {
		usage(stdout);
		return 0;
	}
	if (has_option(argc, argv, "--backend")) {
		if (has_option(argc, argv, "--analytic") || has_option(argc, argv, "--compare"))
			return hb_cli_usage(cli, "profile", "--backend measures; it does not combine with --analytic "
					    "or --compare");
		for (int i = 1; i < argc; i++)
			if ((strcmp(argv[i], "--backend") == 0 && i + 1 < argc && strcmp(argv[i + 1], "torch") == 0) ||
			    strcmp(argv[i], "--backend=torch") == 0)
				return hb_cmd_profile_torch(argc, argv, cli);
		return hb_cmd_profile_measure(argc, argv, cli);
	}
	if (has_option(argc, argv, "--compare")) {
		const char *db_arg = NULL;
		char user_db[4096];

		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "--compare") == 0)
				continue;
			if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
				db_arg = argv[++i];
			else if (strncmp(argv[i], "--db=", 5) == 0)
				db_arg = argv[i] + 5;
			else
				return hb_cli_usage(cli, "profile", "--compare takes only --db FILE, not '%s'", argv[i]);
		}
		if (!db_arg) {
			if (hb_user_profdb_path(user_db, sizeof(user_db), &err) < 0)
				return hb_cli_fail(cli, &err);
			db_arg = user_db;
		}
		return hb_cmd_profile_compare(db_arg, cli);
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_ANALYTIC: analytic = 1; break;
		case OPT_DB: dbpath = optarg; break;
		case OPT_DEFAULT: use_default = 1; break;
		case OPT_GPUS: gpu_arg = optarg; break;
		case OPT_MODELS: model_arg = optarg; break;
		case OPT_SHOW: do_show = 1; break;
		case 'h': usage(stdout); return 0;
		default:
			return hb_cli_bad_option(cli, "profile", argc, argv, opts);
		}
	}
	if (optind < argc)
		return hb_cli_usage(cli, "profile", "unexpected argument '%s'", argv[optind]);
	if (!analytic)
		return hb_cli_usage(cli, "profile",
				    "choose a mode: --analytic (the analytic model), --backend cuda|cpu (measure a "
				    "device), --compare, or the subcommand 'allreduce'");
	/* The cached analytic database is what commands read already (under
	 * your profile database): analytic rows go to a file of your own only
	 * when you name one, never silently into your profile database, where
	 * a stale copy would shadow the current analytic model. */
	if (!use_default && !dbpath)
		return hb_cli_usage(cli, "profile", "--analytic needs --db FILE (a database of your own) or "
				    "--default-db (rebuild the cached analytic database every command reads when "
				    "given no --db)");
	if (use_default && (dbpath || gpu_arg || model_arg))
		return hb_cli_usage(cli, "profile", "--default-db always covers the whole catalog and its own file; "
				    "it takes no --db, --gpus or --models");
	if (gpu_arg && (ng = hb_split_list(gpu_arg, gpus, MAX_NAMES)) < 0)
		return hb_cli_usage(cli, "profile",
				    "--gpus: a comma-separated list of at most %d names, no empty items", MAX_NAMES);
	if (model_arg && (nm = hb_split_list(model_arg, models, MAX_NAMES)) < 0)
		return hb_cli_usage(cli, "profile",
				    "--models: a comma-separated list of at most %d names, no empty items", MAX_NAMES);

	if (hb_catalog_load_builtin(&cat, &err) < 0)
		return hb_cli_fail(cli, &err);
	for (int i = 0; i < MAX_NAMES; i++)
		gpu_idx[i] = model_idx[i] = -1;
	/* A name or the user's JSON file, as everywhere else a GPU or model
	 * is named: a file is loaded into cat, and the generator then works
	 * on its entry by name. */
	for (int i = 0; i < ng; i++) {
		const struct hb_gpu *g;

		if (hb_catalog_gpu(&cat, gpus[i]))
			continue;
		if (looks_like_file(gpus[i])) {
			if (hb_catalog_resolve_gpu(&cat, gpus[i], &g, &err) < 0) {
				hb_error_prefix(&err, "--gpus");
				hb_catalog_free(&cat);
				return hb_cli_fail(cli, &err);
			}
			gpu_idx[i] = (int)(g - cat.gpus);
			continue;
		}
		char hint[256];

		hb_catalog_suggest(&cat, 'g', gpus[i], hint, sizeof(hint));
		hb_catalog_free(&cat);
		return hb_cli_usage(cli, "profile", "--gpus: unknown GPU '%s' (see 'hetbatch catalog gpus')%s",
				    gpus[i], hint);
	}
	for (int j = 0; j < nm; j++) {
		const struct hb_model *m;

		if (hb_catalog_model(&cat, models[j]))
			continue;
		if (looks_like_file(models[j])) {
			if (hb_catalog_resolve_model(&cat, models[j], &m, &err) < 0) {
				hb_error_prefix(&err, "--models");
				hb_catalog_free(&cat);
				return hb_cli_fail(cli, &err);
			}
			model_idx[j] = (int)(m - cat.models);
			continue;
		}
		char hint[256];

		hb_catalog_suggest(&cat, 'm', models[j], hint, sizeof(hint));
		hb_catalog_free(&cat);
		return hb_cli_usage(cli, "profile", "--models: unknown model '%s' (see 'hetbatch catalog models')%s",
				    models[j], hint);
	}
	/* The files' entries by name, once every file is in (loading one may
	 * move the catalog's arrays, never reorder them). */
	for (int i = 0; i < ng; i++)
		if (gpu_idx[i] >= 0)
			gpus[i] = cat.gpus[gpu_idx[i]].name;
	for (int j = 0; j < nm; j++)
		if (model_idx[j] >= 0)
			models[j] = cat.models[model_idx[j]].name;

	t0 = hb_now();
	/* SIGINT/SIGTERM/SIGHUP: the generator rolls back (interrupt.h) */
	hb_interrupt_catch();
	if (use_default) {
		struct hb_default_db_info info;

		hb_info(&cli->log, "building the default profile database");
		rc = hb_default_profdb_ensure(&cat, NULL, 1, &info, &err);
		if (rc == 0) {
			st = info.stats;
			dbpath = NULL;
			printf("%s: ", info.path);
		}
	} else {
		struct hb_analytic_request req = {
			.gpus = (const char *const *)gpus, .ngpus = ng,
			.models = (const char *const *)models, .nmodels = nm,
			.progress = on_progress, .progress_ctx = &prog,
		};

		rc = hb_profdb_open(dbpath, 0, &db, &err);
		if (rc == 0) {
			double pairs = (double)(ng ? ng : cat.ngpus) * (nm ? nm : cat.nmodels);

			hb_progress_start_mode(&prog, "analytic profiles", pairs, hb_cli_status(cli), cli->status_period_s);
			rc = hb_analytic_generate(&cat, &req, db, &st, &err);
			hb_progress_finish(&prog);
			hb_profdb_close(db);
		}
		if (rc == 0)
			printf("%s: ", dbpath);
	}
	if (rc < 0) {
		hb_catalog_free(&cat);
		if (hb_interrupted())
			return hb_cli_interrupted(cli, "profile", "nothing written; %s is as it was",
						  dbpath ? dbpath : "the default database");
		return hb_cli_fail(cli, &err);
	}
	printf("%ld compute, %ld memory, %ld bucket and %ld all-reduce-fit rows for %d %s x %d %s "
	       "(analytic model v%d) in %.2f s\n",
	       st.compute_rows, st.memory_rows, st.bucket_rows, st.fit_rows, st.gpus, hb_plural(st.gpus, "GPU", "GPUs"),
	       st.models, hb_plural(st.models, "model", "models"), HB_ANALYTIC_VERSION, hb_now() - t0);
	if (st.infeasible > 0)
		/* A property of the pairs, not a failure: said as a note. */
		printf("note: by the analytic model, %d of the %d GPU x model %s too big for the GPU's memory even at "
		       "min_lbs with one VSW; %s recorded as such (a memory row with max_vsw 0, no compute rows), "
		       "and plans skip %s\n",
		       st.infeasible, st.gpus * st.models, st.gpus * st.models == 1 ? "pair is" : "pairs are",
		       st.infeasible == 1 ? "it is" : "each is", st.infeasible == 1 ? "it" : "them");
	rc = 0;
	if (do_show) {
		printf("\n");
		rc = show(cli, &cat, gpus, ng, models, nm);
	}
	hb_catalog_free(&cat);
	return rc;
}
