/*
 * sim_args.c: `hetbatch sim`'s command line: its usage text and its option
 * parser, into struct sim_args (sim_cmd.h).  sim.c runs what was parsed.
 *
 * The policies' own options (--elastic-interval, --yarn-head-only, ...)
 * are not listed here: they are every knob of every registry policy
 * (policy.h hb_policy_knob, policy_knob.h), added to getopt's table and to
 * the usage text from the knob tables, and kept as settings by name
 * (sim_args.knobs) that each run applies to its policy's options.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fidelity.h"
#include "fileio.h"   /* hb_path_exists, hb_path_is_dir */
#include "jobspec.h"
#include "plot.h"     /* HB_GNUPLOT_ENV */
#include "policy.h"   /* hb_policy_at, hb_policy_knob */
#include "progress.h"
#include "results.h"  /* hb_events_level_parse */
#include "sim_cmd.h"
#include "strutil.h"
#include "synthetic.h"

/* ---- usage ------------------------------------------------------------------------ */

/* Where an option's text starts in the usage, and how wide a line may be. */
#define HELP_COL 23
#define HELP_WIDTH 78

/* One option of a policy: "  --NAME METAVAR" and its help, wrapped. */
static void knob_line(FILE *out, const struct hb_pknob *k)
{
	char head[128], meta[96], text[1024], *save = NULL;
	int col;

	hb_pknob_metavar(k, meta, sizeof(meta));
	snprintf(head, sizeof(head), "  --%s%s%s", k->name, meta[0] ? " " : "", meta);
	/* a short head pads to the text's column; a long one is followed by two spaces */
	col = fprintf(out, "%-*s", HELP_COL - 1, head);
	col += fprintf(out, col < HELP_COL ? " " : "  ");
	hb_strlcpy(text, k->help, sizeof(text));
	for (char *w = strtok_r(text, " ", &save), *first = w; w; w = strtok_r(NULL, " ", &save)) {
		int len = (int)strlen(w);

		if (w != first && col + 1 + len > HELP_WIDTH) {
			col = fprintf(out, "\n%*s", HELP_COL, "") - 1;
		} else if (w != first) {
			fputc(' ', out);
			col++;
		}
		col += fprintf(out, "%s", w);
	}
	fputc('\n', out);
}

/* Every policy's options, in registry order. */
static void knob_help(FILE *out)
{
	const struct hb_pknob *k;

	for (int i = 0; (k = hb_policy_knob(i, NULL)); i++)
		knob_line(out, k);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch sim --cluster C --model M[,M2...] [--policy LIST] [options]\n"
		"       hetbatch sim --cluster C --trace FILE [--policy LIST] [trace options] [options]\n"
		"\n"
		"Simulate adaptive-batching and auto-scaling policies on one job on a\n"
		"dedicated heterogeneous cluster and compare time to target, cost in $,\n"
		"GPU-hours, GPUs held, iterations, global batch, restarts and overheads.\n"
		"For each model every policy runs on the same cluster, profiles, knobs and\n"
		"seed (global option --seed N, default 1), one job arriving at t = 0.\n"
		"Times and costs are also given relative to JABAS (x).\n"
		"\n"
		"Options:\n"
		"  --cluster C          built-in cluster name or a cluster JSON file (up to\n"
		"                       8192 GPUs)\n"
		"  --model M[,M2...]    built-in model names or model JSON files\n"
		"  --policy LIST        comma-separated policies, in table order (default\n"
		"                       " DEFAULT_POLICIES ")\n"
		"  --policy-plugin FILE load the policies of a plugin (a shared object built\n"
		"                       against hetbatch/policy.h: examples/policy-plugin/);\n"
		"                       repeatable; its policies and their options then work\n"
		"                       as the built-in ones do\n"
		"  --db FILE            profile database (default: the built-in analytic one)\n"
		"  -j, --jobs N         run N simulations at a time on threads (default 1);\n"
		"                       the results are the same bytes for any N (each run\n"
		"                       is its own seeded simulation, reported in table\n"
		"                       order).  A --trace replay per policy: each streams\n"
		"                       its records into files of its own inside the\n"
		"                       staging directory, merged into --out in table order;\n"
		"                       one progress line for them all\n"
		"  --threads N          threads each simulation may use inside itself (JABAS's\n"
		"                       forecast fits, PolluxSched's search); 1 disables.\n"
		"                       Default: the online CPUs, or 1 with -j above 1,\n"
		"                       since -j N runs N simulations that each use\n"
		"                       --threads (N x --threads threads in all).  The\n"
		"                       results are the same bytes for any count\n"
		"  --out DIR            write results.db, summary.csv and summary.json into\n"
		"                       DIR (and with --csv timeseries.csv, events.csv): written\n"
		"                       beside it (DIR.tmp.PID) and moved into place whole\n"
		"                       at the end, replacing the set a previous run left\n"
		"                       (a directory holding other files is refused)\n"
		"  --force              replace DIR even if it holds files no hetbatch run\n"
		"                       wrote\n"
		"  --plot               also draw DIR/<model>-batch, -gpus and -bars (.png and\n"
		"                       .svg) with gnuplot; needs --out.  Without gnuplot on\n"
		"                       PATH the plots are skipped with a warning.  Scripts:\n"
		"                       $" HB_GNUPLOT_ENV ", else scripts/gnuplot/ found from\n"
		"                       the executable\n"
		"  --json               print summary.json's document instead of the tables\n"
		"  --record-wall-time   store wall-clock times in results.db (runs.wall_s);\n"
		"                       the files then differ from run to run\n"
		"  --csv                also write the event and time-series rows as text,\n"
		"                       DIR/events.csv and DIR/timeseries.csv (the events\n"
		"                       and timeseries tables of results.db hold them\n"
		"                       either way; pandas reads those with read_sql); needs\n"
		"                       --out\n"
		"  --events LEVEL       what of the event records and time series --out\n"
		"                       writes: all (every event and sample; the default\n"
		"                       of single-job runs and of replays of at most\n"
		"                       10000 jobs), summary (the default above 10000 jobs),\n"
		"                       summary (job-level events only: arrival, admit,\n"
		"                       start, restart, resize, move, preempt, drop, done; no\n"
		"                       per-round or per-epoch event such as reconfig,\n"
		"                       epoch, adapt, sched; no time-series sample) or none\n"
		"                       (neither: the events and timeseries tables and files\n"
		"                       hold their header only).  Summaries, jobs and\n"
		"                       utilisation are complete at every level; results.db\n"
		"                       meta.events names a level other than all.  A trace\n"
		"                       replay writes records as it goes and keeps none in\n"
		"                       memory; without --out nothing is written or kept\n"
		"  -v (global)          also report each run's engine event rate: events\n"
		"                       processed, CPU seconds of the run (including the\n"
		"                       records it writes) and events per CPU-second\n"
		"\n"
		"What-if knobs (shown in the table header, '*' when not the default):\n"
		"  --interval P         adaptation interval p in iterations (default: the model's)\n"
		"  --restart-cost S     constant restart cost in s (fidelity mode; default:\n"
		"                       checkpoint bytes / storage bandwidth + start latency;\n"
		"                       30 with --fidelity pollux, the application's with sia)\n"
		"  --fidelity MODE      none (default): hetbatch's own mechanics; pollux: those\n"
		"                       of Pollux's own simulator (osdi21-artifact): progress in\n"
		"                       the artifact's statistical epochs from the imported\n"
		"                       validation runs, its batch split, a 30 s rescale on\n"
		"                       every allocation change including the first, arrivals\n"
		"                       at a round's time taking part in it, no reconfiguration\n"
		"                       or GNS cost (explicit knobs still win); easyscale: those\n"
		"                       of EasyScale's trace simulator (EasyScale_info_for_SC23,\n"
		"                       simulator/) for easyscale, easyscale-homo and yarn-cs:\n"
		"                       its plan database and waste rule, compute-only steps,\n"
		"                       progress in samples, 20 s before a job's first step,\n"
		"                       jobs started and grown only at 60 s rounds, yarn-cs one\n"
		"                       job at a time (docs/easyscale-fidelity.md); sia: those\n"
		"                       of Sia's simulator (siasosp23/artifacts, sia-simulator/):\n"
		"                       progress in its statistical epochs where `import sia`\n"
		"                       stored the model's validation runs, each application's\n"
		"                       rescale on every start and restart, its SLOWDOWNS on\n"
		"                       progress, its split of a fixed batch, arrivals at a\n"
		"                       round's time taking part in it, Gavel's throughput in\n"
		"                       steps/s and its placer, one throughput fit per GPU\n"
		"                       type by its own L-BFGS-B, a round's grants handed out\n"
		"                       at once, pollux on virtual nodes of the smallest node's\n"
		"                       size, unaware of the types, no reconfiguration or GNS\n"
		"                       cost (docs/fidelity.md, \"Sia\")\n"
		"  --reconfig-cost S    in-place reconfiguration cost in s\n"
		"  --gns-overhead F     Pollux GNS monitoring overhead fraction (e.g. 0.143)\n"
		"  --no-similarity-cost do not charge the similarity all-reduce every p\n"
		"  --unequal-penalty K  convergence penalty for unequal local batches (0 = off)\n"
		"  --replay FILE        drive B_G from a trajectory file (step,global_batch)\n"
		"  --progress MODEL     how an iteration at global batch B advances training,\n"
		"                       the same for every policy of the run (default pollux):\n"
		"                       pollux: E(B) = (phi + M0)/(phi + B), Pollux Eq. 6;\n"
		"                       similarity: E(B) = min(1, max(B_gamma, M0)/B) with\n"
		"                       B_gamma = 2 gamma phi/(1 - gamma), the batch at which\n"
		"                       the similarity B/(B + 2 phi) meets the model's threshold\n"
		"                       gamma (JABAS Table 4): SimiGrad and JABAS reached every\n"
		"                       target in the recipe's epochs (JABAS Table 5), so no\n"
		"                       sample is lost up to B_gamma; above it steps stop\n"
		"                       shrinking (McCandlish et al.'s large-batch asymptote).\n"
		"                       samples: E(B) = 1, work fixed in samples whatever the\n"
		"                       batch (the IBM elastic paper's model).\n"
		"                       The papers disagree (Pollux's E charges the similarity\n"
		"                       rule ~(1-gamma)/(1+gamma)); sim/stats.h has the derivation\n"
		"  -h, --help           this help\n"
		"\n"
		"Trace replay (--trace): every job of the trace on ONE shared cluster, per\n"
		"policy: the policy's cluster arbiter decides which GPUs each job holds,\n"
		"its agent how the job uses them.  The table gives jobs done and dropped,\n"
		"mean/median/p99 JCT, makespan, mean queueing, GPU-hours, $, utilisation,\n"
		"restarts per job, finish-time fairness rho (median, p99) and scheduler\n"
		"decision time per round, then mean JCT by model.\n"
		"  --trace FILE         job trace: Philly log or philly.csv, a Pollux\n"
		"                       workload CSV, Alibaba's 2023 GPU pod list, a job-spec\n"
		"                       CSV or JSON (docs/jobspec.md)\n"
		"  --format F           auto (default), philly-log, philly-csv,\n"
		"                       pollux-workload, easyscale-workload, alibaba-openb,\n"
		"                       jobspec-csv, jobspec-json\n"
		"  --load F             divide arrival times by F (2 = twice the load)\n"
		"  --max-jobs N         the first N jobs the filters keep (file order)\n"
		"  --from S, --to S     keep arrivals in [S, T) s after the trace origin\n"
		"  --vc LIST            keep these virtual clusters (Philly)\n"
		"  --status LIST        keep these Philly statuses (e.g. Pass,Killed)\n"
		"  --attempts first|all Philly log: a job is its first scheduling attempt\n"
		"                       (default) or all of them (run time summed)\n"
		"  --gpus MIN:MAX       keep jobs asking for MIN..MAX GPUs (either may be empty)\n"
		"  --synthetic KIND     instead of --trace: the seeded generator, arrivals\n"
		"                       poisson, bursty (elastic.md's high/low periods),\n"
		"                       philly-window (Pollux's construction: philly.csv rows\n"
		"                       from an hour-of-day window; needs sizes=FILE), or ibm\n"
		"                       (the IBM elastic paper's workload: Table I's four\n"
		"                       categories, a batch setting per job, rates k_max/E[L]\n"
		"                       with k_max calibrated, traces/synthetic.h)\n"
		"  --synth KEY=VALUE    a generator option (repeatable): rate (jobs/h, 20),\n"
		"                       hours (arrival window, 8; 0 = none), jobs (stop after\n"
		"                       N; 0 = none), burst-high, burst-low (h, 1), burst-ratio\n"
		"                       (0.25), sizes (fit = the built-in Philly fit, or a\n"
		"                       philly.csv), pollux-filter (1), window-start (2),\n"
		"                       window-hours (8), window-jobs (160), mix (pollux = by\n"
		"                       GPU-time class, none, or \"cifar10:0.5,bert:0.5\");\n"
		"                       ibm: pattern (bursty; high, low), categories (1,2,3,4),\n"
		"                       batch (random = Random-BS; max, min), kmax (the\n"
		"                       40-GPU calibration), length (min; 0 = IV-G's per\n"
		"                       category; IV-A: 30); burst-* and hours as above.\n"
		"                       --load multiplies the arrival rate; rate x load x\n"
		"                       hours (or jobs) may reach 1000000 jobs\n"
		"  --no-fairness        skip rho (it simulates every distinct job once more\n"
		"                       alone on its 1/J share)\n"
		"  --duration-from-trace  stop each job whose trace records a run time\n"
		"                       (duration_s; Philly's duration) once it has run that\n"
		"                       long (at the first whole iteration past it), wherever\n"
		"                       its training is: it counts as completed then, flagged\n"
		"                       (jobs.csv stopped_at_duration 1, a line under the\n"
		"                       table).  Without it such run times are ignored, with a\n"
		"                       notice: jobs train to their model's target\n"
		"  --capacity FILE      GPUs that come and go: CSV time_s,gpu,available (from\n"
		"                       time_s on, that many GPUs of the type are online);\n"
		"                       elastic policies shrink, gang jobs are preempted and\n"
		"                       requeued (sim/capacity.h)\n"
		);
	knob_help(out);
	fprintf(out,
		"  Default policies: every policy with a shared-cluster arbiter (one of\n"
		"  those that pair the same arbiter and agent).  A listed policy without\n"
		"  one gets the row 'cannot run: policy X has no shared-cluster arbiter yet'.\n"
		"  Jobs asking for more GPUs than the cluster are skipped and counted as\n"
		"  dropped (use --gpus to leave them out).  Jobs without a model (Philly)\n"
		"  get one by GPU-time class (Pollux's workload construction) drawn with\n"
		"  --seed.  Files: results.db, cluster_summary.csv, jobs.csv, by_model.csv,\n"
		"  utilisation.csv, summary.json (with --csv timeseries.csv, events.csv);\n"
		"  above 10000 jobs --events defaults to summary (say --events all for\n"
		"  every event: on philly.csv's 82247 jobs 4.5 million rows); --plot draws\n"
		"  trace-jct (JCT CDF), trace-util (utilisation from the window start, stacked\n"
		"  by GPU type on a heterogeneous cluster) and trace-rho (rho CDF).\n"
		"\n"
		"Policies (* = has a shared-cluster arbiter for --trace):\n");
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		fprintf(out, "  %-10s %s %s\n", p->name, p->shared ? "*" : " ", p->summary);
	fprintf(out,
		"\n"
		"Examples:\n"
		"  hetbatch sim --cluster jabas-a --model resnet50\n"
		"  hetbatch sim --cluster jabas-a --model resnet50,gnmt --out runs/a --plot\n"
		"  hetbatch --seed 7 sim --cluster jabas-b --model gnmt --policy jabas,pollux\n"
		"  hetbatch sim --cluster jabas-c --model llama2-7b --restart-cost 60 --json\n"
		"  hetbatch sim --cluster demo --model resnet50 --policy jabas,simigrad --interval 50\n"
		"  hetbatch sim --cluster pollux-t4 --trace ../shared/data/pollux/workloads/workload-1.csv \\\n"
		"      --policy fifo --out runs/w1 --plot\n"
		"  hetbatch sim --cluster pollux-t4 --trace ../shared/data/pollux/philly.csv \\\n"
		"      --from 3024000 --to 3038400 --load 2 --policy fifo,tiresias,jabas\n"
		"  (philly.csv's origin is its earliest row, 2017-09-04 10:30:41; that window\n"
		"  is 4 h of 2017-10-09, 83 jobs: the first 8 h after the origin hold 1)\n"
		"  hetbatch sim --cluster pollux-t4 --synthetic poisson --synth rate=30 --synth hours=4\n"
		"\n"
		"Result files hold no timestamps, wall times or absolute paths: the same\n"
		"inputs and seed give byte-identical files.\n"
		"\n"
		"Exit status: 0 if at least one policy ran (the others show 'cannot run: why'),\n"
		"1 if none ran (2 if the first failure was an input error) or writing failed,\n"
		"2 for a usage or input error (unknown model, policy or cluster, a cluster GPU\n"
		"missing from the profiles, a bad replay file, a bad trace line or a trace\n"
		"model not in the catalog).  Unless a policy ran, no result file is written.\n");
}

/* ---- options ---------------------------------------------------------------------- */

enum {
	OPT_CLUSTER = 256, OPT_MODEL, OPT_POLICY, OPT_DB, OPT_OUT, OPT_PLOT, OPT_JSON, OPT_WALL, OPT_INTERVAL,
	OPT_RESTART, OPT_RECONFIG, OPT_GNS, OPT_NOSIM, OPT_UNEQUAL, OPT_REPLAY, OPT_TRACE, OPT_FORMAT, OPT_LOAD,
	OPT_MAXJOBS, OPT_FROM, OPT_TO, OPT_VC, OPT_GPUS, OPT_NOFAIR, OPT_SYNTHETIC, OPT_SYNTH,
	OPT_ATTEMPTS, OPT_STATUS, OPT_PROGRESS, OPT_FIDELITY, OPT_EVENTS, OPT_FORCE,
	OPT_CAPACITY, OPT_THREADS, OPT_DURATION, OPT_PLUGIN,
	OPT_CSV,
	OPT_KNOB, /* OPT_KNOB + i: the registry's i-th policy knob (hb_policy_knob) */
};

/* The command's own options; the policies' knobs are added after them. */
static const struct option base_opts[] = {
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "policy-plugin", required_argument, NULL, OPT_PLUGIN },
	{ "db", required_argument, NULL, OPT_DB },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "plot", no_argument, NULL, OPT_PLOT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "record-wall-time", no_argument, NULL, OPT_WALL },
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "restart-cost", required_argument, NULL, OPT_RESTART },
	{ "reconfig-cost", required_argument, NULL, OPT_RECONFIG },
	{ "gns-overhead", required_argument, NULL, OPT_GNS },
	{ "no-similarity-cost", no_argument, NULL, OPT_NOSIM },
	{ "unequal-penalty", required_argument, NULL, OPT_UNEQUAL },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "progress", required_argument, NULL, OPT_PROGRESS },
	{ "jobs", required_argument, NULL, 'j' },
	{ "fidelity", required_argument, NULL, OPT_FIDELITY },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "load", required_argument, NULL, OPT_LOAD },
	{ "max-jobs", required_argument, NULL, OPT_MAXJOBS },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "vc", required_argument, NULL, OPT_VC },
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "no-fairness", no_argument, NULL, OPT_NOFAIR },
	{ "duration-from-trace", no_argument, NULL, OPT_DURATION },
	{ "synthetic", required_argument, NULL, OPT_SYNTHETIC },
	{ "synth", required_argument, NULL, OPT_SYNTH },
	{ "attempts", required_argument, NULL, OPT_ATTEMPTS },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "help", no_argument, NULL, 'h' },
};

#define NBASE (sizeof(base_opts) / sizeof(base_opts[0]))

/* getopt's table: base_opts, then every policy knob (a FLAG takes no
 * value), then the end.  A plugin's knob may not take a name of sim's
 * own, nor make the knobs more than the table holds: 2 after the usage
 * error. */
static int option_table(struct hb_cli *cli, struct option *opts)
{
	const struct hb_pknob *k;
	size_t n = NBASE;

	memcpy(opts, base_opts, sizeof(base_opts));
	if (hb_policy_knob(HB_PKNOB_MAX, NULL))
		return hb_cli_usage(cli, "sim", "the policies' options are more than %d: load fewer plugins",
				    HB_PKNOB_MAX);
	for (int i = 0; (k = hb_policy_knob(i, NULL)) && i < HB_PKNOB_MAX; i++) {
		for (size_t b = 0; b < NBASE; b++)
			if (strcmp(base_opts[b].name, k->name) == 0)
				return hb_cli_usage(cli, "sim", "a plugin policy's option --%s is one of sim's own",
						    k->name);
		opts[n].name = k->name;
		opts[n].has_arg = k->type == HB_PKNOB_FLAG ? no_argument : required_argument;
		opts[n].flag = NULL;
		opts[n].val = OPT_KNOB + i;
		n++;
	}
	memset(&opts[n], 0, sizeof(opts[n]));
	return 0;
}

/* The first policy option given that needs jobs sharing the cluster, or NULL. */
static const struct hb_pknob *shared_only_knob(const struct hb_pknob_settings *s)
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i].knob->flags & HB_PKNOB_SHARED_ONLY)
			return s->v[i].knob;
	return NULL;
}

/* --gpus MIN:MAX, either side may be empty; 2 on a usage error. */
static int parse_gpus(struct hb_cli *cli, const char *val, struct hb_trace_options *o)
{
	char buf[64], *colon;
	long lo = 1, hi = 0;

	if (hb_strlcpy(buf, val, sizeof(buf)) >= sizeof(buf) || !(colon = strchr(buf, ':')))
		return hb_cli_usage(cli, "sim", "--gpus: '%s' is not MIN:MAX", val);
	*colon = '\0';
	if ((buf[0] && hb_parse_long_range(buf, 1, 1L << 20, &lo) < 0) ||
	    (colon[1] && hb_parse_long_range(colon + 1, 1, 1L << 20, &hi) < 0) || (hi > 0 && hi < lo))
		return hb_cli_usage(cli, "sim", "--gpus: '%s' is not MIN:MAX with 1 <= MIN <= MAX", val);
	o->min_gpus = (int)lo;
	o->max_gpus = (int)hi;
	return 0;
}

static int parse_nonneg(struct hb_cli *cli, const char *opt, const char *val, double max, double *out)
{
	if (hb_parse_double(val, out) < 0 || *out < 0 || *out > max)
		return hb_cli_usage(cli, "sim", "%s: '%s' is not a number in [0, %g]", opt, val, max);
	return 0;
}

int hb_sim_cmd_parse(int argc, char **argv, struct hb_cli *cli, struct sim_args *a)
{
	struct option opts[NBASE + HB_PKNOB_MAX + 1];
	struct hb_error err = { 0 };
	const struct hb_pknob *k;
	double v;
	long n;
	int ch;

	memset(a, 0, sizeof(*a));
	a->progress = HB_PROGRESS_POLLUX;
	a->jobs = 1;
	a->policies = NULL;
	a->format = HB_TRACE_AUTO;
	a->load = 1.0;
	/* Plugins first: their policies' options are getopt's too. */
	if ((ch = hb_cli_load_plugins(cli, "sim", argc, argv)) != 0 || (ch = option_table(cli, opts)) != 0)
		return ch;
	hb_trace_options_init(&a->topt);
	hb_synth_options_init(&a->synth);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hj:", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			if (hb_parse_long_range(optarg, 1, MAX_THREADS, &n) < 0)
				return hb_cli_usage(cli, "sim", "-j: '%s' is not a thread count in [1, %d]", optarg,
						    MAX_THREADS);
			a->jobs = (int)n;
			break;
		case OPT_THREADS:
			if (hb_parse_long_range(optarg, 1, MAX_THREADS, &n) < 0)
				return hb_cli_usage(cli, "sim", "--threads: '%s' is not a thread count in [1, %d]", optarg,
						    MAX_THREADS);
			a->threads = (int)n;
			break;
		case OPT_CLUSTER: a->cluster = optarg; break;
		case OPT_MODEL: a->models = optarg; break;
		case OPT_POLICY: a->policies = optarg; break;
		case OPT_PLUGIN: break; /* loaded above */
		case OPT_DB: a->db = optarg; break;
		case OPT_OUT: a->out = optarg; break;
		case OPT_PLOT: a->plot = 1; break;
		case OPT_FORCE: a->force = 1; break;
		case OPT_JSON: a->json = 1; break;
		case OPT_WALL: a->record_wall = 1; break;
		case OPT_EVENTS:
			if (hb_events_level_parse(optarg, "--events", &a->events, &err) < 0)
				return hb_cli_usage(cli, "sim", "%s", err.msg);
			a->have_events = 1;
			break;
		case OPT_CSV: a->csv = 1; break;
		case OPT_NOSIM: a->no_similarity = 1; break;
		case OPT_REPLAY: a->replay = optarg; break;
		case OPT_PROGRESS:
			if (hb_progress_parse(optarg, "--progress", &a->progress, &err) < 0)
				return hb_cli_usage(cli, "sim", "%s", err.msg);
			a->have_progress = 1;
			break;
		case OPT_TRACE: a->trace = optarg; break;
		case OPT_NOFAIR: a->no_fairness = a->trace_opts = 1; break;
		case OPT_DURATION: a->duration_from_trace = a->trace_opts = 1; break;
		case OPT_CAPACITY: a->capacity = optarg; a->trace_opts = 1; break;
		case OPT_SYNTHETIC:
			if (hb_synth_arrival_parse(optarg, &a->synth.arrival, &err) < 0)
				return hb_cli_usage(cli, "sim", "--synthetic: %s", err.msg);
			a->synthetic = optarg;
			break;
		case OPT_SYNTH:
			if (hb_synth_option_word(&a->synth, optarg, &err) < 0)
				return hb_cli_usage(cli, "sim", "--synth: %s", err.msg);
			a->synth_opts = 1;
			break;
		case OPT_FORMAT:
			if (hb_trace_format_parse(optarg, &a->format, &err) < 0 || a->format == HB_TRACE_SYNTHETIC)
				return hb_cli_usage(cli, "sim", "--format: '%s' is not a trace file format (auto, philly-log, "
							 "philly-csv, pollux-workload, easyscale-workload, alibaba-openb, jobspec-csv, "
							 "jobspec-json)",
						    optarg);
			a->trace_opts = 1;
			break;
		case OPT_LOAD:
			if (hb_parse_double(optarg, &v) < 0 || !(v > 0) || v > 1e6)
				return hb_cli_usage(cli, "sim", "--load: '%s' is not a number in (0, 1e6]", optarg);
			a->load = v;
			a->trace_opts = 1;
			break;
		case OPT_MAXJOBS:
			if (hb_parse_long_range(optarg, 1, 1L << 40, &n) < 0)
				return hb_cli_usage(cli, "sim", "--max-jobs: '%s' is not an integer in [1, %ld]", optarg, 1L << 40);
			a->topt.max_jobs = n;
			a->trace_opts = 1;
			break;
		case OPT_FROM:
		case OPT_TO:
			if (hb_parse_double(optarg, &v) < 0 || !isfinite(v))
				return hb_cli_usage(cli, "sim", "%s: '%s' is not a time in seconds",
						    ch == OPT_FROM ? "--from" : "--to", optarg);
			*(ch == OPT_FROM ? &a->topt.from_s : &a->topt.to_s) = v;
			a->trace_opts = 1;
			break;
		case OPT_ATTEMPTS:
			if (strcmp(optarg, "first") != 0 && strcmp(optarg, "all") != 0)
				return hb_cli_usage(cli, "sim", "--attempts: '%s' is not first or all", optarg);
			a->topt.attempts = optarg[0] == 'a' ? HB_ATTEMPTS_ALL : HB_ATTEMPTS_FIRST;
			a->trace_opts = 1;
			break;
		case OPT_STATUS:
			if (hb_strlcpy(a->topt.status, optarg, sizeof(a->topt.status)) >= sizeof(a->topt.status))
				return hb_cli_usage(cli, "sim", "--status: list too long");
			a->trace_opts = 1;
			break;
		case OPT_VC:
			if (hb_strlcpy(a->topt.vc, optarg, sizeof(a->topt.vc)) >= sizeof(a->topt.vc))
				return hb_cli_usage(cli, "sim", "--vc: list too long");
			a->trace_opts = 1;
			break;
		case OPT_GPUS:
			if (parse_gpus(cli, optarg, &a->topt))
				return 2;
			a->trace_opts = 1;
			break;
		case OPT_INTERVAL:
			if (hb_parse_long_range(optarg, 1, 1L << 30, &a->interval) < 0)
				return hb_cli_usage(cli, "sim", "--interval: '%s' is not an integer in [1, %ld]", optarg, 1L << 30);
			break;
		case OPT_FIDELITY:
			if (hb_fidelity_parse(optarg, &a->fidelity) < 0)
				return hb_cli_usage(cli, "sim", "--fidelity: unknown mode '%s' (none, pollux, easyscale or sia)",
						    optarg);
			break;
		case OPT_RESTART:
			if (parse_nonneg(cli, "--restart-cost", optarg, 1e7, &a->restart_s))
				return 2;
			a->have_restart = 1;
			break;
		case OPT_RECONFIG:
			if (parse_nonneg(cli, "--reconfig-cost", optarg, 1e7, &a->reconfig_s))
				return 2;
			a->have_reconfig = 1;
			break;
		case OPT_GNS:
			if (parse_nonneg(cli, "--gns-overhead", optarg, 10.0, &a->gns_overhead))
				return 2;
			a->have_gns = 1;
			break;
		case OPT_UNEQUAL:
			if (parse_nonneg(cli, "--unequal-penalty", optarg, 1e6, &a->unequal_k))
				return 2;
			a->have_unequal = 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return hb_cli_usage(cli, "sim", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (ch >= OPT_KNOB && ch < OPT_KNOB + HB_PKNOB_MAX) {
				k = hb_policy_knob(ch - OPT_KNOB, NULL);
				if (hb_pknob_parse(k, optarg, &v, &err) < 0 || hb_pknob_set(&a->knobs, k, v, &err) < 0)
					return hb_cli_usage(cli, "sim", "%s", err.msg);
				break;
			}
			return hb_cli_bad_option(cli, "sim", argc, argv, opts);
		}
	}
	if (optind < argc)
		return hb_cli_usage(cli, "sim", "unexpected argument '%s'", argv[optind]);
	if (a->synth_opts && !a->synthetic)
		return hb_cli_usage(cli, "sim", "--synth needs --synthetic KIND");
	if (a->synthetic && a->trace)
		return hb_cli_usage(cli, "sim", "--synthetic and --trace exclude each other");
	if (a->synthetic && a->format != HB_TRACE_AUTO)
		return hb_cli_usage(cli, "sim", "--format goes with --trace FILE, not --synthetic");
	if (a->synthetic && a->synth.philly_csv && !hb_path_exists(a->synth.philly_csv))
		return hb_cli_usage(cli, "sim", "--synth sizes=%s: no such file", a->synth.philly_csv);
	if ((a->trace || a->synthetic) && a->models)
		return hb_cli_usage(cli, "sim", "--trace (or --synthetic) and --model exclude each other (the trace "
						"names the models)");
	if (!a->trace && !a->synthetic && a->capacity)
		return hb_cli_usage(cli, "sim", "--capacity needs --trace or --synthetic (jobs sharing the cluster)");
	if (!a->trace && !a->synthetic && (k = shared_only_knob(&a->knobs)))
		return hb_cli_usage(cli, "sim", "--%s needs --trace or --synthetic (jobs sharing the cluster)", k->name);
	if (a->capacity && !hb_path_exists(a->capacity))
		return hb_cli_usage(cli, "sim", "--capacity: no file '%s'", a->capacity);
	if (!a->trace && !a->synthetic && a->trace_opts)
		return hb_cli_usage(cli, "sim", "--format, --load, --max-jobs, --from, --to, --vc, --status, "
						"--attempts, --gpus, --no-fairness and --duration-from-trace need --trace "
						"or --synthetic");
	if (!a->cluster || (!a->models && !a->trace && !a->synthetic))
		return hb_cli_usage(cli, "sim", "--cluster and --model (or --trace, or --synthetic) are required");
	if (a->synthetic) {
		snprintf(a->synth_name, sizeof(a->synth_name), "synthetic-%s", hb_synth_arrival_name(a->synth.arrival));
		a->trace = a->synth_name;
	} else if (a->trace && !hb_path_exists(a->trace))
		return hb_cli_usage(cli, "sim", "--trace: %s: no such file", a->trace);
	if (a->topt.from_s >= a->topt.to_s)
		return hb_cli_usage(cli, "sim", "--from %g is not before --to %g", a->topt.from_s, a->topt.to_s);
	if (!a->trace && !a->policies)
		a->policies = DEFAULT_POLICIES;
	if (a->plot && !a->out)
		return hb_cli_usage(cli, "sim", "--plot needs --out DIR (the figures and their data go there)");
	if (a->force && !a->out)
		return hb_cli_usage(cli, "sim", "--force applies to --out DIR (replacing what it holds)");
	if (a->csv && !a->out)
		return hb_cli_usage(cli, "sim", "--csv needs --out DIR (the CSV files go there)");
	if (a->out && hb_path_exists(a->out) && !hb_path_is_dir(a->out))
		return hb_cli_usage(cli, "sim", "--out: '%s' exists and is not a directory", a->out);
	if (a->replay && !hb_path_exists(a->replay))
		return hb_cli_usage(cli, "sim", "--replay: %s: no such file", a->replay);
	return 0;
}

