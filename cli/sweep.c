/*
 * sweep.c: `hetbatch sweep CONFIG.json [-j N]`: what-if studies over
 * clusters, load factors, policies and seeds (sim/study/sweep.h, docs/sweep.md).
 *
 * Order of work: read and check the configuration, build every cluster
 * variant and replay (a bad config, trace, cluster or GPU is exit 2 before
 * anything runs), run the points on -j threads, then print and write.  A
 * point that cannot run is a row; the sweep fails only when none ran.
 *
 * MPI.  In a build with MPI (HB_HAVE_MPI) started by mpirun (the launcher's
 * environment says so), every rank reads the configuration and sets up the
 * same sweep, runs the points with id % size == rank on its own -j threads
 * and sends its rows to rank 0, which writes exactly the files of a
 * single-process run.  Only rank 0 prints: the other ranks' stdout and
 * stderr go to /dev/null and their errors travel to rank 0 with their rows.
 * Started without mpirun, the command never calls MPI (no singleton start).
 * The launch and the transport live here, in the command layer, so that the
 * library (sim/) stays free of MPI headers (DESIGN.md).
 *
 * Figures: the scripts scripts/gnuplot/sweep-{jct,cost}.gp are found through
 * $HETBATCH_GNUPLOT_DIR, else the compile-time HB_GNUPLOT_DIR, else beside
 * the executable (../share/hetbatch/gnuplot, ../../scripts/gnuplot,
 * ../scripts/gnuplot); without gnuplot on PATH the figures are skipped with a
 * warning and their data files are still written.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hb_config.h"
#if HB_HAVE_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "cli_verbose.h" /* defines: hb_cli_log_files */
#include "cli_profiles.h" /* defines: hb_cli_log_profiles, hb_cli_log_profile_pairs */
#include "fileio.h"
#include "interrupt.h"
#include "json.h"
#include "outset.h"
#include "plot.h"
#include "plugin.h"   /* --policy-plugin */
#include "policy.h"   /* hb_policy_at, hb_policy_find */
#include "progress.h"
#include "strutil.h"
#include "sweep.h"


#define MAX_THREADS 1024

/* The policies' sweep knobs (their knob tables, policy_knob.h), after
 * "max_sim_s," of the knobs line, wrapped as the lines around it. */
static void knob_keys(FILE *out)
{
	const struct hb_pknob *pk;
	int col = 43; /* where "                unequal_penalty, max_sim_s," ends */

	for (int i = 0; (pk = hb_policy_knob(i, NULL)); i++) {
		int w = (int)strlen(pk->sweep ? pk->sweep : "") + 2; /* " key," */

		if (!pk->sweep)
			continue;
		if (col + w > 78) {
			fprintf(out, "\n               ");
			col = 15;
		}
		fprintf(out, " %s,", pk->sweep);
		col += w;
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch sweep CONFIG.json [-j N] [--out DIR [--plot]] [options]\n"
		"       mpirun -np K hetbatch sweep CONFIG.json [-j N] --out DIR\n"
		"\n"
		"What-if studies: replay one workload on several clusters (a preset plus\n"
		"added nodes, e.g. \"+16 A100\"), at several load factors, under several\n"
		"policies and seeds.  Every combination is a point that runs what\n"
		"'hetbatch --seed S sim --cluster C --trace ... --load L --policy P' runs.\n"
		"Points = clusters x loads x policies x seeds, in that nested order; a\n"
		"point's id is its index.  The table gives one row per (cluster, load,\n"
		"policy): means over the seeds that ran of JCT, queueing, makespan,\n"
		"GPU-hours, cost and utilisation.\n"
		"\n"
		"Every point of a load and seed replays the same jobs: those no cluster\n"
		"can run are left out everywhere (said before the points run); one a\n"
		"cluster is too small for, or that does not finish, is censored there:\n"
		"its JCT runs to the end of the sweep's replays, and the mean over every\n"
		"job is then a lower bound ('>').  delta%% compares with the first\n"
		"cluster; results.db's jobs table holds every job of every point\n"
		"(docs/sweep.md).\n"
		"\n"
		"Options:\n"
		"  -j, --jobs N     run N points at a time on threads (default 1); the\n"
		"                   files are byte-identical for every N\n"
		"  --out DIR        write results.db, sweep.csv and summary.json into DIR:\n"
		"                   all files or none, written beside it (DIR.tmp.PID)\n"
		"                   and moved into place whole at the end, replacing the\n"
		"                   set a previous run left (a directory holding other\n"
		"                   files is refused)\n"
		"  --force          replace DIR even if it holds files no hetbatch run wrote\n"
		"  --plot           also draw DIR/sweep-load<L>-jct and -cost (.png, .svg):\n"
		"                   mean JCT and cost against cluster capacity ($/h), one\n"
		"                   line per policy, one figure per load; needs --out.\n"
		"                   Without gnuplot on PATH the figures are skipped with a\n"
		"                   warning.  Scripts: $" HB_GNUPLOT_ENV ", else\n"
		"                   scripts/gnuplot/ found from the executable\n"
		"  --db FILE        profile database (default: the built-in analytic one)\n"
		"  --policy-plugin FILE  load a policy plugin (as sim's; repeatable), so\n"
		"                   \"policies\" may name its policies\n"
		"  --json           print summary.json's document instead of the table\n"
		"                   (with --dry-run: the points as JSON, format\n"
		"                   hetbatch-sweep-plan/1, summary.json's key names)\n"
		"  --dry-run        check the configuration, build the clusters and\n"
		"                   replays, list the points and stop; without --json it\n"
		"                   also runs the point with the fewest jobs of each\n"
		"                   policy and prints a rough time estimate (seconds per\n"
		"                   job of that point for every point of the policy, over\n"
		"                   the points run at once)\n"
		"  -h, --help       this help\n"
		"  Global: -q (no progress lines; otherwise a line per point and a status\n"
		"  line, redrawn on a terminal, else every 10 s or $HETBATCH_STATUS_SECONDS),\n"
		"  -v (also the profile database and,\n"
		"  for every GPU type x model the clusters and replays use, the source\n"
		"  and file of its profile; the files written), --seed N (the seeds\n"
		"  when the file gives no \"seeds\").\n"
		"\n"
		"Configuration (JSON; docs/sweep.md has every field; unknown fields are\n"
		"errors; files are relative to the configuration's directory):\n"
		"  {\n"
		"    \"name\": \"a-plus-3090\",                 optional, default: file name\n"
		"    \"trace\": {\"file\": \"workload.csv\", \"format\": \"auto\", \"max_jobs\": 160}\n"
		"      or     {\"synthetic\": {\"arrival\": \"poisson\", \"rate_per_hour\": 20,\n"
		"                            \"hours\": 8, \"mix\": \"pollux\"}},\n"
		"             filters for both: max_jobs, from_s, to_s, vc, min_gpus, max_gpus\n"
		"    \"clusters\": [ {\"base\": \"jabas-a\", \"label\": \"A\"},\n"
		"                  {\"base\": \"jabas-a\", \"label\": \"A+8 3090\",\n"
		"                   \"add\": [{\"gpu\": \"rtx-3090\", \"nodes\": 2, \"gpus_per_node\": 4}]} ],\n"
		"    \"loads\": [1, 2],                        default [1]\n"
		"    \"policy_plugins\": [\"las.so\"],             optional: plugins to load first\n"
		"    \"policies\": [\"fifo\", \"tiresias\", \"pollux\", \"optimus\"],\n"
		"    \"seeds\": [1, 2],                        default [--seed]\n"
		"    \"fairness\": false,                      finish-time fairness rho (slower)\n"
		"    \"knobs\": {\"restart_cost\": 30}           interval, restart_cost,\n"
		"                reconfig_cost, gns_overhead, similarity_cost,\n"
		"                unequal_penalty, max_sim_s,");
	knob_keys(out);
	fprintf(out,
		"\n"
		"                progress (\"pollux\" or \"similarity\", as sim --progress)\n"
		"  }\n"
		"  A base is a built-in cluster or a cluster JSON file; added nodes get the\n"
		"  links of the base's nodes.  Seed S seeds the simulation, the synthetic\n"
		"  generator and the model draws of traces without models.  The load divides\n"
		"  a trace file's arrival times and multiplies the generator's rate.\n"
		"\n"
		"Policies (* = has a shared-cluster arbiter; the others give rows\n"
		"'cannot run'):\n");
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		fprintf(out, "  %-10s %s %s\n", p->name, p->shared ? "*" : " ", p->summary);
	fprintf(out,
		"\n"
		"MPI (builds with -Dmpi=enabled or auto): under mpirun each rank runs the\n"
		"points with id %% size == rank (on its own -j threads) and rank 0 gathers\n"
		"the rows and writes the same files as one process; only rank 0 prints.\n"
		"\n"
		"Examples:\n"
		"  hetbatch sweep examples/sweep-a-3090.json -j 2 --out runs/a-3090 --plot\n"
		"  hetbatch sweep examples/sweep-demo.json --dry-run\n"
		"  hetbatch -q sweep examples/sweep-demo.json -j 8 --out runs/demo --json\n"
		"  mpirun -np 4 hetbatch sweep examples/sweep-a-3090.json -j 2 --out runs/a-3090\n"
		"\n"
		"Result files hold no timestamps, wall times or absolute paths: the same\n"
		"configuration and seeds give byte-identical files for any -j and any\n"
		"number of MPI ranks.  Progress on stderr: one line per finished point and,\n"
		"while points run, 'sweep: 4 of 24 points done, 1 running, 1 s elapsed,\n"
		"about 5 s left' (redrawn on a terminal, else every 10 s).\n"
		"\n"
		"Exit status: 0 if at least one point ran (the others are rows saying why),\n"
		"1 if none ran or writing failed, 2 for a usage or configuration error\n"
		"(nothing runs and nothing is written).\n");
}

struct sweep_args {
	const char *config, *out, *db;
	int jobs, plot, json, dry_run;
	int force;                      /* --force: replace an --out DIR that is not a hetbatch set */
};

enum { OPT_OUT = 256, OPT_PLOT, OPT_DB, OPT_JSON, OPT_DRY, OPT_FORCE, OPT_PLUGIN };

/* 0 to go on, -1 after --help, 2 on a usage error. */
static int parse_args(int argc, char **argv, struct hb_cli *cli, struct sweep_args *a)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "plot", no_argument, NULL, OPT_PLOT },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "db", required_argument, NULL, OPT_DB },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dry-run", no_argument, NULL, OPT_DRY },
		{ "policy-plugin", required_argument, NULL, OPT_PLUGIN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hb_error err = { 0 };
	long n;
	int ch;

	memset(a, 0, sizeof(*a));
	a->jobs = 1;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hj:", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			if (hb_parse_long_range(optarg, 1, MAX_THREADS, &n) < 0)
				return hb_cli_usage(cli, "sweep", "-j: '%s' is not a thread count in [1, %d]", optarg,
						    MAX_THREADS);
			a->jobs = (int)n;
			break;
		case OPT_OUT: a->out = optarg; break;
		case OPT_PLOT: a->plot = 1; break;
		case OPT_FORCE: a->force = 1; break;
		case OPT_DB: a->db = optarg; break;
		case OPT_JSON: a->json = 1; break;
		case OPT_DRY: a->dry_run = 1; break;
		case OPT_PLUGIN:
			if (hb_plugin_load(optarg, &err) < 0)
				return hb_cli_fail(cli, &err);
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return hb_cli_usage(cli, "sweep", "option '%s' needs a value", argv[optind - 1]);
		default:
			return hb_cli_bad_option(cli, "sweep", argc, argv, opts);
		}
	}
	if (optind >= argc)
		return hb_cli_usage(cli, "sweep", "the configuration file is required");
	a->config = argv[optind++];
	if (optind < argc)
		return hb_cli_usage(cli, "sweep", "unexpected argument '%s'", argv[optind]);
	if (hb_path_is_dir(a->config))
		return hb_cli_usage(cli, "sweep", "%s: is a directory, expected a sweep configuration file", a->config);
	if (!hb_path_exists(a->config))
		return hb_cli_usage(cli, "sweep", "%s: no such file", a->config);
	if (a->plot && !a->out)
		return hb_cli_usage(cli, "sweep", "--plot needs --out DIR (the figures and their data go there)");
	if (a->force && !a->out)
		return hb_cli_usage(cli, "sweep", "--force applies to --out DIR (replacing what it holds)");
	if (a->out && hb_path_exists(a->out) && !hb_path_is_dir(a->out))
		return hb_cli_usage(cli, "sweep", "--out: '%s' exists and is not a directory", a->out);
	return 0;
}

/* ---- progress --------------------------------------------------------------------- */

/* What a running sweep's progress lines share (used under the runner's
 * lock): a line per finished point, and between them a status line,
 * refreshed in place every second on a terminal, else printed every
 * period_s (10 s, or $HETBATCH_STATUS_SECONDS when set). */
struct sweep_progress {
	const struct hb_cli *cli;
	int tty;                        /* 1: one status line redrawn in place */
	int drawn;                      /* 1: that line is on the screen now */
	double period_s;                /* no terminal: seconds between status lines */
	double started;                 /* hb_now() when the points started */
};

#define SWEEP_STATUS_PERIOD_S 10.0

static int progress_off(const struct hb_cli *cli)
{
	/* after SIGINT/SIGTERM/SIGHUP the points stop with it: the command's one line says so */
	return cli->quiet || cli->status == HB_STATUS_NEVER || hb_interrupted();
}

static void progress_start(struct sweep_progress *sp, const struct hb_cli *cli)
{
	const char *env = getenv(HB_STATUS_PERIOD_ENV);

	memset(sp, 0, sizeof(*sp));
	sp->cli = cli;
	sp->tty = cli->status == HB_STATUS_AUTO && isatty(STDERR_FILENO);
	sp->period_s = env && *env ? cli->status_period_s : SWEEP_STATUS_PERIOD_S;
	sp->started = hb_now();
}

/* The status line's redrawn copy off the screen, before another line. */
static void progress_clear(struct sweep_progress *sp)
{
	if (sp->drawn)
		fputs("\r\033[K", stderr);
	sp->drawn = 0;
}

/* "sweep: 3 of 8 points done, 2 running, 62 s elapsed, about 103 s left" */
static void progress_tick(void *ctx, int done, int running, int total)
{
	struct sweep_progress *sp = ctx;
	double el = hb_now() - sp->started;

	if (progress_off(sp->cli))
		return;
	fprintf(stderr, "%ssweep: %d of %d %s done, %d running, %.0f s elapsed", sp->tty ? "\r\033[K" : "", done,
		total, hb_plural(total, "point", "points"), running, el);
	/* a rough forecast: the points left at the mean pace so far */
	if (done > 0 && done < total)
		fprintf(stderr, ", about %.0f s left", el / done * (total - done));
	fputs(sp->tty ? "" : "\n", stderr);
	fflush(stderr);
	sp->drawn = sp->tty;
}

static void progress_line(void *ctx, const struct hb_sweep *sw, const struct hb_sweep_row *row, int done, int total)
{
	struct sweep_progress *sp = ctx;
	const struct hb_cli *cli = sp->cli;
	const struct hb_sweep_config *cfg = sw->cfg;
	struct hb_sweep_point p;

	if (progress_off(cli))
		return;
	progress_clear(sp);
	hb_sweep_point_of(cfg, row->id, &p);
	fprintf(stderr, "sweep: [%d/%d] point %d: %s, load %g, %s, seed %llu: ", done, total, row->id,
		cfg->clusters[p.cluster].label, cfg->loads[p.load], cfg->policies[p.policy]->name,
		(unsigned long long)cfg->seeds[p.seed]);
	if (row->status == HB_SWEEP_OK)
		fprintf(stderr, "%d/%d done, mean JCT %.2f h, $%.2f (%.1f s)\n", (int)row->completed, (int)row->jobs,
			row->jct_mean_h, row->cost_usd, row->wall_s);
	else
		fprintf(stderr, "%s: %.200s\n", row->status == HB_SWEEP_CANNOT ? "cannot run" : "failed", row->reason);
}

static void list_points(const struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;

	printf("sweep %s: %d %s (%d %s x %d %s x %d %s x %d %s)\n", cfg->name, sw->npoints,
	       hb_plural(sw->npoints, "point", "points"), cfg->nclusters, hb_plural(cfg->nclusters, "cluster", "clusters"),
	       cfg->nloads, hb_plural(cfg->nloads, "load", "loads"), cfg->npolicies,
	       hb_plural(cfg->npolicies, "policy", "policies"), cfg->nseeds, hb_plural(cfg->nseeds, "seed", "seeds"));
	for (int ci = 0; ci < cfg->nclusters; ci++)
		printf("cluster %d: %s = %s (%d GPUs on %d nodes, $%.2f/h): %s\n", ci, cfg->clusters[ci].label,
		       sw->info[ci].name, sw->info[ci].gpus, sw->info[ci].nodes, sw->info[ci].usd_per_h,
		       sw->info[ci].gpu_mix);
	{
		char line[512];

		hb_sweep_jobset_line(sw, line, sizeof(line));
		printf("jobs: %s\n", line);
	}
	printf("%6s  %-24s %5s %6s %-10s %10s %6s %9s\n", "point", "cluster", "GPUs", "load", "policy", "seed", "jobs",
	       "too large");
	for (int id = 0; id < sw->npoints; id++) {
		struct hb_sweep_point p;
		int k;

		hb_sweep_point_of(cfg, id, &p);
		k = (p.cluster * cfg->nloads + p.load) * cfg->nseeds + p.seed;
		printf("%6d  %-24.24s %5d %6g %-10s %10llu %6ld %9ld\n", id, cfg->clusters[p.cluster].label,
		       sw->info[p.cluster].gpus, cfg->loads[p.load], cfg->policies[p.policy]->name,
		       (unsigned long long)cfg->seeds[p.seed], hb_sweep_jobset_of(sw, p.load, p.seed)->njobs,
		       hb_sweep_jobset_of(sw, p.load, p.seed)->njobs - sw->replays[k].njobs);
	}
}

/* ---- the dry run's time estimate ------------------------------------------------------ */

/* "42 s", "3.5 min", "2.1 h" */
static void duration(double s, char *buf, size_t n)
{
	if (s < 10)
		snprintf(buf, n, "%.1f s", s);
	else if (s < 90)
		snprintf(buf, n, "%.0f s", s);
	else if (s < 5400)
		snprintf(buf, n, "%.1f min", s / 60);
	else
		snprintf(buf, n, "%.1f h", s / 3600);
}

/* Time the point with the fewest jobs of each policy, then give every
 * point of that policy the same seconds per job, and divide by the points
 * that run at once.  Rough: a policy's time per job also grows with the
 * cluster and with contention, which the smallest point has least of, so
 * a sweep whose big points dominate takes longer than this says. */
static int estimate(const struct hb_cli *cli, struct hb_sweep *sw, int threads, int ranks, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	double per_job[HB_SWEEP_MAX_POLICIES], total = 0, cal = 0;
	int points = 0, calibrated = 0, lanes;
	char what[64], took[64];

	if (!cli->quiet)
		fprintf(stderr, "sweep: timing the smallest point of each policy for an estimate...\n");
	for (int pi = 0; pi < cfg->npolicies; pi++) {
		int best = -1;
		long best_jobs = 0;

		per_job[pi] = 0;
		for (int id = 0; id < sw->npoints; id++) {
			struct hb_sweep_point p;
			int k;

			hb_sweep_point_of(cfg, id, &p);
			k = (p.cluster * cfg->nloads + p.load) * cfg->nseeds + p.seed;
			if (p.policy == pi && sw->replay_ok[k] && (best < 0 || sw->replays[k].njobs < best_jobs)) {
				best = id;
				best_jobs = sw->replays[k].njobs;
			}
		}
		if (best >= 0 && best_jobs > 0) {
			double wall;
			int ran;

			if (hb_sweep_time_point(sw, best, &wall, &ran, err) < 0)
				return -1;
			if (hb_interrupted())
				return hb_interrupt_error(err, "sweep --dry-run");
			per_job[pi] = ran ? wall / (double)best_jobs : 0;
			cal += wall;
			calibrated += ran;
		}
	}
	for (int id = 0; id < sw->npoints; id++) {
		struct hb_sweep_point p;
		int k;

		hb_sweep_point_of(cfg, id, &p);
		k = (p.cluster * cfg->nloads + p.load) * cfg->nseeds + p.seed;
		if (sw->replay_ok[k] && per_job[p.policy] > 0) {
			total += per_job[p.policy] * (double)sw->replays[k].njobs;
			points++;
		}
	}
	lanes = threads * ranks;
	if (lanes > points)
		lanes = points > 0 ? points : 1;
	duration(total / lanes, what, sizeof(what));
	duration(cal, took, sizeof(took));
	printf("estimate: about %s for %d %s on %d %s (from %d timed %s, %s: seconds per job of each policy's "
	       "smallest point; rough)\n", what, points, hb_plural(points, "point", "points"),
	       lanes, hb_plural(lanes, "thread", "threads"), calibrated, hb_plural(calibrated, "point", "points"), took);
	return 0;
}

/* ---- figures ----------------------------------------------------------------------- */

static int plot(struct hb_cli *cli, const struct hb_sweep *sw, const char *dir, struct hb_error *err)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	static const char *const what[] = { "jct", "cost" };
	char gnuplot[PATH_MAX], gpdir[PATH_MAX];

	int ok = hb_plot_tools(cli, "sweep-jct.gp", gnuplot, sizeof(gnuplot), gpdir, sizeof(gpdir), err);

	if (ok <= 0)
		return ok;
	for (int li = 0; li < cfg->nloads; li++) {
		char stem[64], names[1024], dat[HB_SWEEP_PATH_MAX + 80], ttl[256];

		if (hb_sweep_plot_names(sw, li, names, sizeof(names)) == 0)
			continue;
		hb_sweep_plot_stem(sw, li, stem, sizeof(stem));
		snprintf(dat, sizeof(dat), "%s.dat", stem);
		snprintf(ttl, sizeof(ttl), "%s, load %g, %d seed%s", cfg->name, cfg->loads[li], cfg->nseeds,
			 cfg->nseeds > 1 ? "s" : "");
		for (int k = 0; k < 2; k++) {
			char vars[8192] = "", script[32], fig[96];

			if (hb_gp_data(vars, sizeof(vars), dat, err) < 0)
				return -1;
			hb_gp_assign(vars, sizeof(vars), "names", names);
			hb_gp_assign(vars, sizeof(vars), "ttl", ttl);
			snprintf(script, sizeof(script), "sweep-%s.gp", what[k]);
			snprintf(fig, sizeof(fig), "%s-%s", stem, what[k]);
			if (hb_plot_figure(gnuplot, gpdir, script, dir, fig, vars, err) < 0)
				return -1;
		}
		hb_info(&cli->log, "plots: %s-{jct,cost}.{png,svg}", stem);
	}
	return 0;
}

/* ---- MPI ----------------------------------------------------------------------------- */

struct team {
	int rank, size;                 /* 0 and 1 without MPI */
	int mpi;                        /* 1: MPI_Init was called */
};

#if HB_HAVE_MPI
/* Started by a launcher (Open MPI, MPICH/PMI, PMIx)? */
static int launched_by_mpirun(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}
#endif

static int team_start(struct team *t, int *argc, char ***argv, struct hb_error *err)
{
	t->rank = 0;
	t->size = 1;
	t->mpi = 0;
#if HB_HAVE_MPI
	if (launched_by_mpirun()) {
		int provided;

		/* threads run points; only the main thread calls MPI */
		if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
			return hb_runtime_error(err, "MPI_Init_thread failed");
		t->mpi = 1;
		MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
		MPI_Comm_size(MPI_COMM_WORLD, &t->size);
		if (t->rank > 0) {
			/* only rank 0 prints: the others' errors reach it with their rows */
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				fflush(stdout);
				fflush(stderr);
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
				close(fd);
			}
		}
	}
#else
	(void)argc;
	(void)argv;
	(void)err;
#endif
	return 0;
}

static void team_end(struct team *t)
{
#if HB_HAVE_MPI
	if (t->mpi)
		MPI_Finalize();
#endif
	t->mpi = 0;
}

/* Every rank's status (0 ok, else an exit code): the worst, on every rank.
 * Keeps a rank from waiting for rows a failed rank will never send. */
static int team_agree(const struct team *t, int rc)
{
#if HB_HAVE_MPI
	if (t->mpi) {
		int worst = rc;

		MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		return worst;
	}
#else
	(void)t;
#endif
	return rc;
}

#if HB_HAVE_MPI
enum { TAG_HEAD = 1, TAG_BODY = 2 };

/* Rank r > 0: {status, error code, body bytes}, then the body: the packed
 * rows, or the error message. */
static int send_rows(const struct team *t, const struct hb_sweep *sw, int failed, const struct hb_error *ferr)
{
	struct hb_error err = { 0 };
	void *buf = NULL;
	size_t len = 0;
	long long head[3];

	if (!failed && hb_sweep_pack(sw, t->rank, t->size, &buf, &len, &err) < 0) {
		failed = 1;
		ferr = &err;
	}
	if (failed) {
		len = strlen(ferr->msg) + 1;
		head[0] = -1;
		head[1] = ferr->code;
	} else {
		head[0] = 0;
		head[1] = 0;
	}
	head[2] = (long long)len;
	MPI_Send(head, 3, MPI_LONG_LONG, 0, TAG_HEAD, MPI_COMM_WORLD);
	if (len > 0)
		MPI_Send(failed ? (void *)ferr->msg : buf, (int)len, MPI_BYTE, 0, TAG_BODY, MPI_COMM_WORLD);
	free(buf);
	return failed ? -1 : 0;
}

/* Rank 0: every other rank's rows into sw; the first failure into err. */
static int gather_rows(struct hb_cli *cli, const struct team *t, struct hb_sweep *sw, struct hb_error *err)
{
	int rc = 0;

	for (int r = 1; r < t->size; r++) {
		long long head[3];
		char *body;

		MPI_Recv(head, 3, MPI_LONG_LONG, r, TAG_HEAD, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (head[2] < 0 || head[2] > (1LL << 31) - 1) {
			if (rc == 0)
				rc = hb_runtime_error(err, "sweep: rank %d announced %lld bytes of rows", r, head[2]);
			continue;
		}
		body = malloc(head[2] > 0 ? (size_t)head[2] : 1);
		if (!body) {
			MPI_Abort(MPI_COMM_WORLD, 1);
			return hb_runtime_error(err, "sweep: out of memory");
		}
		if (head[2] > 0)
			MPI_Recv(body, (int)head[2], MPI_BYTE, r, TAG_BODY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (head[0] != 0) {
			if (rc == 0) {
				body[head[2] > 0 ? head[2] - 1 : 0] = '\0';
				rc = hb_fail(err, head[1] == HB_EINPUT ? HB_EINPUT : HB_ERUNTIME, "rank %d: %s", r, body);
			}
		} else if (rc == 0 && hb_sweep_unpack(sw, body, (size_t)head[2], err) < 0) {
			rc = -1;
		} else {
			hb_info(&cli->log, "sweep: %lld points from rank %d", head[2] / (long long)sizeof(struct hb_sweep_row),
				r);
		}
		free(body);
	}
	return rc;
}
#endif

/* Rows of the other ranks to rank 0 (a no-op on one process). */
static int team_gather(struct hb_cli *cli, const struct team *t, struct hb_sweep *sw, int failed,
		       struct hb_error *err)
{
#if HB_HAVE_MPI
	if (t->mpi && t->size > 1) {
		struct hb_error gerr = { 0 };

		if (t->rank > 0)
			return send_rows(t, sw, failed, err);
		/* receive from every rank even after a failure here, so none is
		 * left blocked in a send */
		if (gather_rows(cli, t, sw, &gerr) < 0 && !failed) {
			*err = gerr;
			return -1;
		}
		return failed ? -1 : 0;
	}
#else
	(void)cli;
	(void)t;
	(void)sw;
	(void)err;
#endif
	return failed ? -1 : 0;
}

/* ---- the command ------------------------------------------------------------------ */

/* Nothing ran: the reasons, one line each (distinct ones only). */
static int none_ran(struct hb_cli *cli, const struct hb_sweep *sw)
{
	for (int i = 0; i < sw->npoints; i++) {
		int seen = 0;

		for (int k = 0; k < i && !seen; k++)
			seen = strcmp(sw->rows[k].reason, sw->rows[i].reason) == 0;
		if (!seen)
			fprintf(stderr, "%s: error: point %d cannot run: %s\n", cli->prog, i, sw->rows[i].reason);
	}
	if (sw->npoints == 1)
		fprintf(stderr, "%s: error: the one point did not run; nothing written\n", cli->prog);
	else
		fprintf(stderr, "%s: error: none of the %d points ran; nothing written\n", cli->prog, sw->npoints);
	return 1;
}

/* The table, and with --out the set: written into os's staging directory
 * and moved into place (*published = 1 once it is). */
static int report(struct hb_cli *cli, const struct sweep_args *a, const struct hb_sweep *sw, double t0,
		  struct hb_outset *os, int *published)
{
	struct hb_error err = { 0 };
	int nok = hb_sweep_nok(sw);

	if (nok == 0)
		return none_ran(cli, sw);
	if (a->json) {
		cJSON *doc = hb_sweep_json(sw);
		int bad = hb_json_print(stdout, doc, &err);

		cJSON_Delete(doc);
		if (bad)
			return hb_cli_fail(cli, &err);
	} else {
		hb_sweep_print(stdout, sw);
		printf("\n%d of %d %s ran; wall time %.2f s\n", nok, sw->npoints, hb_plural(sw->npoints, "point", "points"),
		       hb_now() - t0);
	}
	fflush(stdout);
	if (a->out) {
		if (hb_sweep_write(sw, os->stage, a->plot, &err) < 0 || (a->plot && plot(cli, sw, os->stage, &err) < 0) ||
		    hb_outset_publish(os, &err) < 0)
			return hb_cli_fail(cli, &err);
		*published = 1;
		hb_cli_results_in(cli, "sweep", a->out);
		hb_cli_log_files(cli, "sweep", a->out);
	}
	return 0;
}

/* Add name to names[*n] unless it is there. */
static void add_name(const char **names, int *n, const char *name)
{
	for (int k = 0; k < *n; k++)
		if (strcmp(names[k], name) == 0)
			return;
	names[(*n)++] = name;
}

/* -v: the profile files, then where the rows of every GPU type x model the
 * sweep uses came from (hb_cli_log_profiles' lines, as sim -v and plan -v
 * print them): the GPU types of all its clusters and the models of all its
 * replays, each pair once.  Its own read-only handle, closed before the
 * workers open theirs. */
static void log_profiles(const struct hb_cli *cli, const struct hb_sweep *sw)
{
	const struct hb_sweep_config *cfg = sw->cfg;
	int nreplays = cfg->nclusters * cfg->nloads * cfg->nseeds, maxg = 0, maxm = 0, ng = 0, nm = 0;
	struct hb_profdb *db = NULL;
	struct hb_error err = { 0 };
	const char **gpus, **models;

	if (cli->log.level < HB_LOG_INFO)
		return;
	if (hb_profile_files_open(&sw->profiles, &db, &err) < 0) {
		hb_info(&cli->log, "profile database: %s", err.msg);
		return;
	}
	hb_cli_log_profiles(cli, db, NULL, NULL, NULL, 0);
	for (int ci = 0; ci < cfg->nclusters; ci++) {
		maxg += sw->cl[ci]->nnodes;
		maxm += sw->cats[ci].nmodels;
	}
	gpus = calloc((size_t)maxg + 1, sizeof(*gpus));
	models = calloc((size_t)maxm + 1, sizeof(*models));
	for (int ci = 0; gpus && ci < cfg->nclusters; ci++)
		for (int k = 0; k < sw->cl[ci]->nnodes; k++) {
			int g = sw->cl[ci]->nodes[k].gpu;

			if (g >= 0 && g < sw->cats[ci].ngpus)
				add_name(gpus, &ng, sw->cats[ci].gpus[g].name);
		}
	for (int r = 0; models && r < nreplays; r++)
		for (long j = 0; sw->replay_ok[r] && j < sw->replays[r].njobs && nm < maxm; j++)
			add_name(models, &nm, sw->replays[r].jobs[j].model->name);
	if (gpus && models)
		hb_cli_log_profile_pairs(cli, db, gpus, ng, models, nm);
	free(gpus);
	free(models);
	hb_profdb_close(db);
}

/* Before any point runs: jobs no cluster can run (left out of every point)
 * and jobs only some can (censored there), when there are any. */
static void report_jobsets(const struct hb_cli *cli, const struct hb_sweep *sw)
{
	char line[512];
	int note;

	/* a trace file's recorded run times (the generator's jobs have none of
	 * their own to honour) */
	if (sw->with_duration > 0 && !sw->cfg->trace.duration_from_trace && !sw->cfg->trace.synthetic && !cli->quiet)
		hb_warn(&cli->log, "sweep: the trace records a run time (duration_s) for %ld of its %ld jobs; it is "
				   "ignored and jobs train to their model's target (\"duration_from_trace\": true in "
				   "\"trace\" stops them at it)",
			sw->with_duration, sw->trace_read);

	if (cli->quiet || (note = hb_sweep_jobset_line(sw, line, sizeof(line))) == 0)
		return;
	if (note == 2)
		hb_warn(&cli->log, "sweep: jobs: %s", line);
	else
		hb_info(&cli->log, "sweep: jobs: %s", line);
}

int cmd_sweep(int argc, char **argv, struct hb_cli *cli)
{
	struct sweep_args a;
	struct hb_sweep_config cfg;
	struct hb_sweep sw;
	struct team team;
	struct hb_outset os = { 0 };
	struct hb_error err = { 0 };
	struct sweep_progress sp;
	double t0 = hb_now();
	int rc, published = 0;

	if (team_start(&team, &argc, &argv, &err) < 0)
		return hb_cli_fail(cli, &err);
	memset(&cfg, 0, sizeof(cfg));
	memset(&sw, 0, sizeof(sw));
	rc = parse_args(argc, argv, cli, &a);
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	/* Stop at a safe point on SIGINT/SIGTERM/SIGHUP, keeping nothing half-written. */
	hb_interrupt_catch();
	if (hb_sweep_config_load(a.config, cli->seed, &cfg, &err) < 0 || hb_sweep_setup(&sw, &cfg, a.db, &err) < 0)
		rc = hb_cli_fail(cli, &err);
	else if (team.rank == 0) {
		log_profiles(cli, &sw);
		report_jobsets(cli, &sw);
	}
	/* The output directory is checked (and locked) before the work. */
	if (rc == 0 && team.rank == 0 && a.out && !a.dry_run && hb_outset_begin(&os, a.out, "sweep", a.force, &err) < 0)
		rc = hb_cli_fail(cli, &err);
	if ((rc = team_agree(&team, rc)) != 0)
		goto out;
	if (a.dry_run) {
		if (team.rank == 0 && a.json) {
			cJSON *doc = hb_sweep_plan_json(&sw);

			if (hb_json_print(stdout, doc, &err) < 0)
				rc = hb_cli_fail(cli, &err);
			cJSON_Delete(doc);
		} else if (team.rank == 0) {
			list_points(&sw);
			if (estimate(cli, &sw, a.jobs, team.size, &err) < 0)
				rc = hb_cli_fail(cli, &err);
		}
		goto out;
	}
	if (team.size > 1)
		hb_info(&cli->log, "sweep: rank %d of %d runs %d of %d points on %d threads", team.rank, team.size,
			hb_sweep_rank_points(&sw, team.rank, team.size), sw.npoints, a.jobs);
	progress_start(&sp, cli);
	rc = hb_sweep_run_ticked(&sw, team.rank, team.size, a.jobs, NULL, progress_line, progress_tick,
				 sp.tty ? 1.0 : sp.period_s > 0 ? sp.period_s : 0.05, &sp, &err);
	progress_clear(&sp);
	if (team_gather(cli, &team, &sw, rc < 0, &err) < 0) {
		rc = team.rank == 0 ? hb_cli_fail(cli, &err) : 1;
		goto out;
	}
	if (team.rank == 0 && team.size > 1)
		hb_sweep_censor(&sw); /* the other ranks' rows are in */
	rc = team.rank == 0 ? report(cli, &a, &sw, t0, &os, &published) : 0;
out:
	hb_outset_abort(&os); /* on failure: DIR keeps its old set */
	hb_sweep_free(&sw);
	hb_sweep_config_free(&cfg);
	team_end(&team);
	if (hb_interrupted())
		rc = published ? hb_cli_interrupted(cli, "sweep", "the results were complete: %s holds the new set", a.out)
		     : a.out ? hb_cli_interrupted(cli, "sweep", "no point kept; %s left as it was", a.out)
			     : hb_cli_interrupted(cli, "sweep", "no point kept");
	return rc;
}
