/*
 * sim.c: `hetbatch sim`: compare policies on one job on a dedicated
 * heterogeneous cluster (JABAS's experimental setting), or, with --trace,
 * replay a job trace on a shared cluster under each policy's cluster
 * arbiter and compare the cluster metrics (sim/results/metrics.h).  This
 * file is the command (usage, options, the single-job comparison); the
 * trace replay is sim_trace.c, and sim_cmd.h what the two share.
 *
 * For each model, every policy runs on identical inputs: the same cluster,
 * profiles, what-if knobs and seed, one job arriving at t = 0.  The command
 * prints one comparison table per model; with --out it writes the result
 * files (sim/results/results.h), with --plot the gnuplot figures.
 *
 * Order of work, so that bad input never leaves partial results: parse and
 * resolve every name, open the profiles, set up every simulation (this is
 * where a cluster GPU missing from the profiles is found), run them all,
 * and only then write.  An error while setting up is the command's: exit 2
 * for bad input (1 otherwise) and no file.  An error inside one run (its
 * agent finds no configuration, Pollux runs out of memory on LLaMA2-7B, ...)
 * concerns that policy only, even when the agent flags it as an input error:
 * the table shows "cannot run: <reason>" and the others go on.  When no run
 * ran at all, the first error decides the exit status and nothing is
 * written.
 *
 * Figures: the scripts in scripts/gnuplot/ are found through
 * $HETBATCH_GNUPLOT_DIR, else the compile-time HB_GNUPLOT_DIR when the build
 * defines it, else beside the executable (../share/hetbatch/gnuplot for an
 * installed binary, ../../scripts/gnuplot and ../scripts/gnuplot for one in a
 * build directory of the source tree).
 */
#include <getopt.h>
#include <pthread.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "catalog.h"
#include "cli.h"
#include "cli_verbose.h"  /* defines: hb_cli_log_decisions, hb_cli_log_files */
#include "cli_profiles.h" /* defines: hb_cli_log_profiles */
#include "default_db.h"
#include "fidelity.h"
#include "fileio.h"
#include "interrupt.h"
#include "json.h"
#include "plot.h"
#include "jobspec.h"
#include "outset.h"
#include "policy.h"   /* hb_policies, hb_policy_find */
#include "pool.h"     /* defines: hb_pool_online_cpus */
#include "profdb.h"
#include "parallel.h"
#include "progress.h"
#include "replay.h"
#include "results.h"
#include "sim.h"
#include "sim_cmd.h"
#include "strutil.h"
#include "synthetic.h"



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
		"  --out DIR            write results.db, summary.csv, timeseries.csv,\n"
		"                       events.csv and summary.json into DIR: written\n"
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
		"  --events LEVEL       what of the event records and time series --out\n"
		"                       writes: all (default: every event and sample),\n"
		"                       summary (job-level events only: arrival, admit,\n"
		"                       start, restart, resize, preempt, drop, done; no\n"
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
		"                       of Sia's simulator (siasosp23/artifacts, sia-simulator/)\n"
		"                       over hetbatch's progress: each application's rescale on\n"
		"                       every start and restart, its SLOWDOWNS on progress,\n"
		"                       arrivals at a round's time taking part in it, Gavel's\n"
		"                       throughput in steps/s, no reconfiguration or GNS cost\n"
		"                       (docs/fidelity.md, \"Sia\")\n"
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
		"  --elastic-interval S seconds between the elastic policy's scaling decisions\n"
		"                       (IBM's Delta; default 600; 0 = at every arrival and\n"
		"                       departure)\n"
		"  --elastic-drop       elastic: reject jobs it cannot admit (drop mode)\n"
		"                       instead of queueing them\n"
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
		"  --easyscale-comm on|off  EasyScale plans estimate the all-reduce (on, the\n"
		"                       default) or only Eq. 1's compute (off, the paper's)\n"
		"  --easyscale-restart model|artifact  EasyScale's reconfiguration cost: the\n"
		"                       simulator's restart model (default) or the artifact's\n"
		"                       20 s on the first start only\n"
		"  --yarn-head-only     yarn-cs as the EasyScale artifact simulates it: only\n"
		"                       the queue head may start, one job at a time\n"
		"  Default policies: every policy with a shared-cluster arbiter (one of\n"
		"  those that pair the same arbiter and agent).  A listed policy without\n"
		"  one gets the row 'cannot run: policy X has no shared-cluster arbiter yet'.\n"
		"  Jobs asking for more GPUs than the cluster are skipped and counted as\n"
		"  dropped (use --gpus to leave them out).  Jobs without a model (Philly)\n"
		"  get one by GPU-time class (Pollux's workload construction) drawn with\n"
		"  --seed.  Files: results.db, cluster_summary.csv, jobs.csv, by_model.csv,\n"
		"  utilisation.csv, timeseries.csv, events.csv, summary.json; --plot draws\n"
		"  trace-jct (JCT CDF), trace-util (utilisation from the window start, stacked\n"
		"  by GPU type on a heterogeneous cluster) and trace-rho (rho CDF).\n"
		"\n"
		"Policies (* = has a shared-cluster arbiter for --trace):\n");
	for (const struct hb_policy *p = hb_policies; p->name; p++)
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


enum {
	OPT_CLUSTER = 256, OPT_MODEL, OPT_POLICY, OPT_DB, OPT_OUT, OPT_PLOT, OPT_JSON, OPT_WALL, OPT_INTERVAL,
	OPT_RESTART, OPT_RECONFIG, OPT_GNS, OPT_NOSIM, OPT_UNEQUAL, OPT_REPLAY, OPT_TRACE, OPT_FORMAT, OPT_LOAD,
	OPT_MAXJOBS, OPT_FROM, OPT_TO, OPT_VC, OPT_GPUS, OPT_NOFAIR, OPT_SYNTHETIC, OPT_SYNTH, OPT_EDROP,
	OPT_EINTERVAL, OPT_ATTEMPTS, OPT_STATUS, OPT_PROGRESS, OPT_FIDELITY, OPT_EVENTS, OPT_FORCE,
	OPT_CAPACITY, OPT_ESCOMM, OPT_ESRESTART, OPT_YARNHEAD, OPT_THREADS, OPT_DURATION,
};

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

/* 0 to go on, -1 after --help, 2 on a usage error. */
static int parse_args(int argc, char **argv, struct hb_cli *cli, struct sim_args *a)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, OPT_CLUSTER },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "db", required_argument, NULL, OPT_DB },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "plot", no_argument, NULL, OPT_PLOT },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "record-wall-time", no_argument, NULL, OPT_WALL },
		{ "events", required_argument, NULL, OPT_EVENTS },
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
		{ "elastic-drop", no_argument, NULL, OPT_EDROP },
		{ "attempts", required_argument, NULL, OPT_ATTEMPTS },
		{ "status", required_argument, NULL, OPT_STATUS },
		{ "elastic-interval", required_argument, NULL, OPT_EINTERVAL },
		{ "capacity", required_argument, NULL, OPT_CAPACITY },
		{ "easyscale-comm", required_argument, NULL, OPT_ESCOMM },
		{ "easyscale-restart", required_argument, NULL, OPT_ESRESTART },
		{ "yarn-head-only", no_argument, NULL, OPT_YARNHEAD },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hb_error err = { 0 };
	double v;
	long n;
	int ch;

	memset(a, 0, sizeof(*a));
	a->progress = HB_PROGRESS_POLLUX;
	a->jobs = 1;
	a->policies = NULL;
	a->format = HB_TRACE_AUTO;
	a->load = 1.0;
	a->elastic_interval_s = -1.0;
	a->easyscale_comm = -1;
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
		case OPT_DB: a->db = optarg; break;
		case OPT_OUT: a->out = optarg; break;
		case OPT_PLOT: a->plot = 1; break;
		case OPT_FORCE: a->force = 1; break;
		case OPT_JSON: a->json = 1; break;
		case OPT_WALL: a->record_wall = 1; break;
		case OPT_EVENTS:
			if (hb_events_level_parse(optarg, "--events", &a->events, &err) < 0)
				return hb_cli_usage(cli, "sim", "%s", err.msg);
			break;
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
		case OPT_EDROP: a->elastic_drop = a->trace_opts = 1; break;
		case OPT_CAPACITY: a->capacity = optarg; a->trace_opts = 1; break;
		case OPT_YARNHEAD: a->yarn_head_only = a->trace_opts = 1; break;
		case OPT_ESCOMM:
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
				return hb_cli_usage(cli, "sim", "--easyscale-comm: '%s' is not on or off", optarg);
			a->easyscale_comm = optarg[1] == 'n';
			a->trace_opts = 1;
			break;
		case OPT_ESRESTART:
			if (strcmp(optarg, "model") != 0 && strcmp(optarg, "artifact") != 0)
				return hb_cli_usage(cli, "sim", "--easyscale-restart: '%s' is not model or artifact", optarg);
			a->easyscale_artifact = optarg[0] == 'a';
			a->trace_opts = 1;
			break;
		case OPT_EINTERVAL:
			if (hb_parse_double(optarg, &v) < 0 || !(v >= 0) || v > 1e7)
				return hb_cli_usage(cli, "sim", "--elastic-interval: '%s' is not a number of seconds in "
							 "[0, 1e7]",
						    optarg);
			a->elastic_interval_s = v;
			a->trace_opts = 1;
			break;
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
	if (!a->trace && !a->synthetic && (a->capacity || a->easyscale_comm >= 0 || a->easyscale_artifact ||
					   a->yarn_head_only))
		return hb_cli_usage(cli, "sim", "--capacity, --easyscale-* and --yarn-head-only need --trace or --synthetic "
						"(jobs sharing the cluster)");
	if (a->capacity && !hb_path_exists(a->capacity))
		return hb_cli_usage(cli, "sim", "--capacity: no file '%s'", a->capacity);
	if (!a->trace && !a->synthetic && a->trace_opts)
		return hb_cli_usage(cli, "sim", "--format, --load, --max-jobs, --from, --to, --vc, --status, "
						"--attempts, --gpus, --no-fairness, --duration-from-trace and "
						"--elastic-* need --trace or --synthetic");
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
	if (a->out && hb_path_exists(a->out) && !hb_path_is_dir(a->out))
		return hb_cli_usage(cli, "sim", "--out: '%s' exists and is not a directory", a->out);
	if (a->replay && !hb_path_exists(a->replay))
		return hb_cli_usage(cli, "sim", "--replay: %s: no such file", a->replay);
	return 0;
}

/* Split a comma list into a caller buffer; 2 on a usage error. */
static int split(struct hb_cli *cli, const char *opt, const char *list, char *buf, size_t size, char **items, int max,
		 int *n)
{
	if (hb_strlcpy(buf, list, size) >= size)
		return hb_cli_usage(cli, "sim", "%s: list too long", opt);
	*n = hb_split_list(buf, items, max);
	if (*n <= 0)
		return hb_cli_usage(cli, "sim", "%s: '%s' is not a comma-separated list of at most %d names", opt, list,
				    max);
	for (int i = 0; i < *n; i++)
		for (int k = 0; k < i; k++)
			if (hb_strcaseeq(items[i], items[k])) /* names match in any case */
				return hb_cli_usage(cli, "sim", "%s: '%s' is listed twice", opt, items[i]);
	return 0;
}

static int unknown_policy(struct hb_cli *cli, const char *name)
{
	char known[512] = "", hint[128];
	size_t len = 0;

	for (const struct hb_policy *p = hb_policies; p->name; p++)
		len += (size_t)snprintf(known + len, len < sizeof(known) ? sizeof(known) - len : 0, "%s%s",
					len ? ", " : "", p->name);
	fprintf(stderr, "%s: error: unknown policy '%s'; known policies: %s%s\n", cli->prog, name, known,
		hb_policy_suggest(name, hint, sizeof(hint)));
	return 2;
}

/* ---- figures --------------------------------------------------------------------- */

/* One figure DIR/STEM-KIND.{png,svg}. */
int hb_sim_cmd_figure(const char *gnuplot, const char *gpdir, const char *script, const char *dir, const char *stem,
		      const char *kind, const char *vars, struct hb_error *err)
{
	char out[512];

	snprintf(out, sizeof(out), "%s-%s", stem, kind);
	return hb_plot_figure(gnuplot, gpdir, script, dir, out, vars, err);
}

/* Draw the three figures of every model that has a run. */
static int plot(struct hb_cli *cli, const struct hb_results *res, const char *dir, const char *gnuplot,
		const char *gpdir, struct hb_error *err)
{
	const char *models[MAX_MODELS];
	int nm = hb_results_models(res, models, MAX_MODELS);

	for (int mi = 0; mi < nm; mi++) {
		const struct hb_run_result *ref = hb_results_reference(res, models[mi]);
		char stem[HB_NAME_MAX], path[4096 + 128], names[1024] = "", title[512], base[8192] = "";
		size_t len = 0;

		if (!ref)
			continue;
		hb_results_file_stem(models[mi], stem, sizeof(stem));
		for (int i = 0; i < res->nruns; i++)
			if (res->runs[i].ran && strcmp(res->runs[i].model, models[mi]) == 0)
				len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
							"%s%s", len ? " " : "", res->runs[i].policy);
		snprintf(title, sizeof(title), "%s on %s, seed %llu", models[mi], res->cluster,
			 (unsigned long long)res->seed);
		snprintf(path, sizeof(path), "%s-series.dat", stem);
		if (hb_gp_data(base, sizeof(base), path, err) < 0)
			return -1;
		hb_gp_assign(base, sizeof(base), "names", names);
		hb_gp_assign(base, sizeof(base), "ttl", title);
		if (hb_sim_cmd_figure(gnuplot, gpdir, "sim-batch.gp", dir, stem, "batch", base, err) < 0 ||
		    hb_sim_cmd_figure(gnuplot, gpdir, "sim-gpus.gp", dir, stem, "gpus", base, err) < 0)
			return -1;
		base[0] = '\0';
		snprintf(path, sizeof(path), "%s-bars.dat", stem);
		if (hb_gp_data(base, sizeof(base), path, err) < 0)
			return -1;
		hb_gp_assign(base, sizeof(base), "ref", ref->policy);
		hb_gp_assign(base, sizeof(base), "ttl", title);
		if (hb_sim_cmd_figure(gnuplot, gpdir, "sim-bars.gp", dir, stem, "bars", base, err) < 0)
			return -1;
		hb_info(&cli->log, "plots: %s-{batch,gpus,bars}.{png,svg}", stem);
	}
	return 0;
}

/* ---- the command ------------------------------------------------------------------ */

struct sim_cmd {
	struct hb_catalog cat;
	struct hb_profdb *db;
	struct hb_sim *sims;           /* nruns, model-major */
	int *inited;                   /* 1 where sims[i] needs hb_sim_free */
	struct hb_run_result *runs;
	int nruns;
	struct hb_profile_use *uses;   /* what each GPU type x model read (hb_profdb_cluster_uses) */
	int nuses;
};

static void sim_cmd_free(struct sim_cmd *c)
{
	free(c->uses);
	for (int i = 0; i < c->nruns; i++)
		if (c->inited && c->inited[i])
			hb_sim_free(&c->sims[i]);
	free(c->sims);
	free(c->inited);
	free(c->runs);
	hb_profdb_close(c->db);
	hb_catalog_free(&c->cat);
}

/* Resolve names and set up every simulation; any failure is the command's. */
static int setup(const struct hb_cli *cli, struct sim_cmd *c, const struct sim_args *a, char **model_names, int nm,
		 const struct hb_policy **pol, int np, const struct hb_sim_opts *so, const struct hb_cluster **clp,
		 struct hb_error *err)
{
	const struct hb_model *models[MAX_MODELS];
	const struct hb_cluster *cl;
	char cluster_name[HB_NAME_MAX];
	char names[MAX_MODELS][HB_NAME_MAX];

	if (hb_catalog_load_builtin(&c->cat, err) < 0 || hb_catalog_resolve_cluster(&c->cat, a->cluster, &cl, err) < 0 ||
	    hb_cluster_check_size(cl, HB_SIM_MAX_GPUS, "sim", err) < 0)
		return -1;
	hb_strlcpy(cluster_name, cl->name, sizeof(cluster_name));
	for (int i = 0; i < nm; i++) {
		const struct hb_model *m;

		if (hb_catalog_resolve_model(&c->cat, model_names[i], &m, err) < 0)
			return -1;
		hb_strlcpy(names[i], m->name, sizeof(names[i]));
		for (int k = 0; k < i; k++)
			if (hb_strcaseeq(names[k], names[i]))
				return hb_input_error(err, "--model: model '%s' is listed twice", names[i]);
	}
	/* Loading a user file may move the catalog's arrays: look every
	 * entry up again once all are in. */
	cl = hb_catalog_cluster(&c->cat, cluster_name);
	for (int i = 0; i < nm; i++)
		models[i] = hb_catalog_model(&c->cat, names[i]);
	*clp = cl;
	if (hb_default_profdb(&c->cat, a->db, &c->db, err) < 0)
		return -1;
	hb_cli_log_profiles(cli, c->db, &c->cat, cl, models, nm);
	if (hb_profdb_cluster_uses(c->db, &c->cat, cl, models, nm, &c->uses, &c->nuses, err) < 0)
		return -1;
	c->nruns = nm * np;
	c->sims = calloc((size_t)c->nruns, sizeof(*c->sims));
	c->inited = calloc((size_t)c->nruns, sizeof(*c->inited));
	c->runs = calloc((size_t)c->nruns, sizeof(*c->runs));
	if (!c->sims || !c->inited || !c->runs)
		return hb_runtime_error(err, "out of memory");
	for (int mi = 0; mi < nm; mi++) {
		for (int pi = 0; pi < np; pi++) {
			int i = mi * np + pi;
			struct hb_run_result *ru = &c->runs[i];

			hb_strlcpy(ru->model, models[mi]->name, sizeof(ru->model));
			hb_strlcpy(ru->policy, pol[pi]->name, sizeof(ru->policy));
			if (hb_sim_init(&c->sims[i], &c->cat, cl, c->db, pol[pi]->name, so, err) < 0)
				return -1;
			c->inited[i] = 1;
			/* Records only feed the files (and their plots). */
			if (!a->out)
				hb_sim_stream(&c->sims[i], NULL);
			if (hb_sim_add_job(&c->sims[i], models[mi], pol[pi]->agent, 0.0, NULL, err) < 0) {
				hb_error_prefix(err, "%s on %s", models[mi]->name, cl->name);
				return -1;
			}
		}
	}
	return 0;
}

/* One simulation's outcome, kept in its slot while the runs go on threads
 * and reported in table order afterwards (the same bytes for any -j). */
struct run_slot {
	int rc;                        /* hb_sim_run's */
	struct hb_error err;           /* its error */
	double cpu_s, wall_s;          /* CPU seconds of its thread, wall seconds */
};

struct run_pool {
	struct sim_cmd *c;
	struct run_slot *slot;         /* [nruns] */
	struct hb_progress *bar;       /* updated under the pool's lock */
};

double hb_sim_cmd_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_one(void *arg, int i)
{
	struct run_pool *p = arg;
	struct run_slot *s = &p->slot[i];
	double t0 = hb_now(), c0 = hb_sim_cmd_cpu_now();

	s->rc = hb_sim_run(&p->c->sims[i], &s->err);
	s->cpu_s = hb_sim_cmd_cpu_now() - c0;
	s->wall_s = hb_now() - t0;
}

static void run_done(void *arg, int i, int ndone)
{
	struct run_pool *p = arg;
	const struct hb_run_result *ru = &p->c->runs[i];

	snprintf(p->bar->label, sizeof(p->bar->label), "sim %.20s/%.16s", ru->model, ru->policy);
	hb_progress_update(p->bar, ndone);
}

static int run_stop(void *arg)
{
	(void)arg;
	return hb_interrupted() != 0; /* no new run; the running ones stop too (hb_sim_run) */
}

/* Run every simulation on `jobs` threads; returns how many ran,
 * *first_fail the failure of the first run (in table order) that failed. */
static int run_all(struct hb_cli *cli, struct sim_cmd *c, int jobs, struct hb_error *first_fail)
{
	struct hb_progress bar;
	struct run_pool pool = { .c = c, .bar = &bar };
	int ran = 0;

	pool.slot = calloc((size_t)c->nruns, sizeof(*pool.slot));
	if (!pool.slot) {
		hb_runtime_error(first_fail, "out of memory");
		return 0;
	}
	hb_progress_start_mode(&bar, "sim", c->nruns, hb_cli_status(cli), cli->status_period_s);
	hb_progress_update(&bar, 0); /* --status-line always: a line at the start */
	hb_parallel_for(c->nruns, jobs, run_one, run_done, run_stop, &pool);
	hb_strlcpy(bar.label, "sim", sizeof(bar.label)); /* the last line is about them all */
	hb_progress_finish(&bar);
	for (int i = 0; i < c->nruns && !hb_interrupted(); i++) {
		struct hb_run_result *ru = &c->runs[i];
		const struct run_slot *s = &pool.slot[i];

		if (cli->log.level >= HB_LOG_INFO) {
			char what[2 * HB_NAME_MAX + 2];

			snprintf(what, sizeof(what), "%s/%s", ru->model, ru->policy);
			hb_sim_cmd_report_rate(cli, what, &c->sims[i], s->cpu_s);
			if (s->rc == 0)
				hb_cli_log_decisions(cli, what, &c->sims[i]);
		}
		if (s->rc < 0) {
			ru->ran = 0;
			hb_strlcpy(ru->why, s->err.msg[0] ? s->err.msg : "unknown error", sizeof(ru->why));
			if (first_fail->code == HB_OK)
				*first_fail = s->err;
			hb_info(&cli->log, "%s/%s cannot run: %s", ru->model, ru->policy, ru->why);
		} else {
			ru->ran = 1;
			ru->sim = &c->sims[i];
			ran++;
		}
		ru->wall_s = s->wall_s;
	}
	free(pool.slot);
	return ran;
}

/* Nothing ran: one line per distinct reason, exit 2 for input errors. */
static int none_ran(struct hb_cli *cli, const struct sim_cmd *c, const struct hb_error *first)
{
	int all_same = 1;

	for (int i = 1; i < c->nruns; i++)
		all_same &= strcmp(c->runs[i].why, c->runs[0].why) == 0;
	if (all_same)
		return hb_cli_fail(cli, first);
	for (int i = 0; i < c->nruns; i++)
		fprintf(stderr, "%s: error: %s/%s cannot run: %s\n", cli->prog, c->runs[i].model, c->runs[i].policy,
			c->runs[i].why);
	return first->code == HB_EINPUT ? 2 : 1;
}

int cmd_sim(int argc, char **argv, struct hb_cli *cli)
{
	struct sim_args a;
	struct sim_cmd c;
	struct hb_sim_opts so;
	struct hb_results res;
	struct hb_error err = { 0 }, first_fail = { 0 };
	const struct hb_policy *pol[MAX_POLICIES];
	const struct hb_cluster *cl = NULL;
	char mbuf[4096], pbuf[1024], *model_names[MAX_MODELS], *policy_names[MAX_POLICIES];
	char gnuplot[PATH_MAX], gpdir[PATH_MAX];
	struct hb_outset os = { 0 };
	int nm, np, rc, nran, can_plot = 0, published = 0;
	double t0 = hb_now();

	rc = parse_args(argc, argv, cli, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((a.models && split(cli, "--model", a.models, mbuf, sizeof(mbuf), model_names, MAX_MODELS, &nm)) ||
	    (a.policies && split(cli, "--policy", a.policies, pbuf, sizeof(pbuf), policy_names, MAX_POLICIES, &np)))
		return 2;
	if (!a.policies)
		np = 0;
	for (int i = 0; i < np; i++)
		if (!(pol[i] = hb_policy_find(policy_names[i])))
			return unknown_policy(cli, policy_names[i]);

	hb_sim_opts_default(&so);
	memset(&res, 0, sizeof(res));
	res.defaults = so;
	so.seed = cli->seed;
	so.quiet = 1; /* one bar across runs, below */
	so.log = &cli->log;
	if (a.interval > 0)
		so.interval = a.interval;
	/* The artifact's progress comes with its mechanics, and back. */
	if (a.progress == HB_PROGRESS_POLLUX_ARTIFACT)
		a.fidelity = HB_FIDELITY_POLLUX;
	if (a.fidelity == HB_FIDELITY_EASYSCALE) {
		if (a.have_progress && a.progress != HB_PROGRESS_SAMPLES)
			return hb_cli_usage(cli, "sim", "--fidelity easyscale charges progress in samples as EasyScale's "
					    "simulator does (Job.total_progress), not '%s'", hb_progress_name(a.progress));
		if (!a.trace || a.easyscale_comm >= 0 || a.easyscale_artifact || a.yarn_head_only || a.capacity)
			return hb_cli_usage(cli, "sim", "--fidelity easyscale replays a trace (--trace) with the artifact's "
					    "own mechanics: --easyscale-comm, --easyscale-restart, --yarn-head-only and "
					    "--capacity do not apply");
		a.progress = HB_PROGRESS_SAMPLES;
		a.no_fairness = 1; /* rho's isolated runs have no round-based artifact arbiter to run under */
	}
	if (a.fidelity == HB_FIDELITY_POLLUX) {
		if (a.have_progress && a.progress != HB_PROGRESS_POLLUX_ARTIFACT)
			return hb_cli_usage(cli, "sim", "--fidelity pollux charges progress as Pollux's simulator does "
					    "(pollux-artifact), not '%s'", hb_progress_name(a.progress));
		a.progress = HB_PROGRESS_POLLUX_ARTIFACT;
	}
	so.fidelity = a.fidelity;
	if (a.have_restart)
		so.restart_const_s = a.restart_s;
	else if (a.fidelity == HB_FIDELITY_POLLUX)
		so.restart_const_s = 30.0; /* the artifact's rescale_time (simulator.py Job.reallocate) */
	if (a.have_reconfig)
		so.reconfig_s = a.reconfig_s;
	else if (a.fidelity == HB_FIDELITY_POLLUX || a.fidelity == HB_FIDELITY_SIA)
		so.reconfig_s = 0.0; /* the artifacts re-tune the batch between steps for free */
	if (a.have_gns)
		so.gns_overhead = a.gns_overhead;
	else if (a.fidelity == HB_FIDELITY_POLLUX || a.fidelity == HB_FIDELITY_SIA)
		so.gns_overhead = 0.0; /* Job.step charges no gradient-statistics cost */
	if (a.no_similarity)
		so.similarity_cost = 0;
	if (a.have_unequal)
		so.unequal_k = a.unequal_k;
	so.replay = a.replay;
	so.progress = a.progress;
	so.elastic_drop = a.elastic_drop;
	if (a.easyscale_comm >= 0)
		so.easyscale_comm = a.easyscale_comm;
	so.easyscale_artifact_restart = a.easyscale_artifact;
	so.yarn_head_only = a.yarn_head_only;
	so.capacity = a.capacity;
	/* -j N simulations at a time already keep N CPUs busy; each would
	 * otherwise add a pool as wide as the machine */
	so.threads = a.threads > 0 ? a.threads : a.jobs > 1 ? 1 : hb_pool_online_cpus();
	if (a.elastic_interval_s >= 0)
		so.elastic_interval_s = a.elastic_interval_s;
	/* Stop at a safe point on SIGINT/SIGTERM/SIGHUP, keeping nothing half-written. */
	hb_interrupt_catch();
	if (a.trace)
		return hb_sim_cmd_trace(cli, &a, pol, np, &so, t0);

	memset(&c, 0, sizeof(c));
	if (a.plot && (can_plot = hb_plot_tools(cli, "sim-batch.gp", gnuplot, sizeof(gnuplot), gpdir, sizeof(gpdir), &err)) < 0)
		return hb_cli_fail(cli, &err);
	if (setup(cli, &c, &a, model_names, nm, pol, np, &so, &cl, &err) < 0 ||
	    (a.out && hb_outset_begin(&os, a.out, "sim", a.force, &err) < 0)) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	nran = run_all(cli, &c, a.jobs, &first_fail);
	if (hb_interrupted()) {
		rc = 1;
		goto out;
	}
	if (nran == 0) {
		rc = none_ran(cli, &c, &first_fail);
		goto out;
	}

	hb_strlcpy(res.cluster, cl->name, sizeof(res.cluster));
	res.seed = cli->seed;
	res.opts = so;
	res.runs = c.runs;
	res.nruns = c.nruns;
	res.record_wall = a.record_wall;
	res.events = a.events;
	res.profiles = c.uses;
	res.nprofiles = c.nuses;
	if (a.json) {
		cJSON *doc = hb_results_summary_json(&res);
		int bad = hb_json_print(stdout, doc, &err);

		cJSON_Delete(doc);
		if (bad) {
			rc = hb_cli_fail(cli, &err);
			goto out;
		}
	} else {
		hb_results_print(stdout, &res);
		printf("\n%d of %d %s ran; wall time %.2f s\n", nran, c.nruns, hb_plural(c.nruns, "run", "runs"),
		       hb_now() - t0);
	}
	fflush(stdout);
	rc = 0;
	if (a.out) {
		if (hb_results_write(&res, os.stage, a.plot, &err) < 0 ||
		    (can_plot == 1 && plot(cli, &res, os.stage, gnuplot, gpdir, &err) < 0) ||
		    hb_outset_publish(&os, &err) < 0) {
			rc = hb_cli_fail(cli, &err);
		} else {
			published = 1;
			hb_cli_results_in(cli, "sim", a.out);
			hb_cli_log_files(cli, "sim", a.out);
		}
	}
out:
	hb_outset_abort(&os); /* on failure: DIR keeps its old set */
	sim_cmd_free(&c);
	if (hb_interrupted())
		rc = published ? hb_cli_interrupted(cli, "sim", "the results were complete: %s holds the new set", a.out)
		     : a.out ? hb_cli_interrupted(cli, "sim", "nothing written; %s left as it was", a.out)
			     : hb_cli_interrupted(cli, "sim", "nothing was written");
	return rc;
}
