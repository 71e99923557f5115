/*
 * sim_cmd.h: what the three parts of `hetbatch sim` share, and nothing
 * else uses: the parsed command line and the few helpers each part calls
 * in another.  sim_args.c is the command line (usage, options, into struct
 * sim_args); sim.c the command (the single-job comparison); sim_trace.c
 * the trace replay (--trace, --synthetic) on a shared cluster.
 */
#ifndef HB_SIM_CMD_H
#define HB_SIM_CMD_H

#include "cli.h"
#include "jobspec.h"   /* struct hb_trace_options, enum hb_trace_format */
#include "policy.h"    /* struct hb_policy */
#include "progress.h"  /* enum hb_progress_model */
#include "results.h"   /* enum hb_events_level */
#include "sim.h"
#include "synthetic.h" /* struct hb_synth_options */

#define MAX_MODELS 32
#define MAX_POLICIES 32
#define MAX_THREADS 1024 /* -j, as sweep's */
#define DEFAULT_POLICIES "jabas,simigrad,pollux,pollux-as,optperf"

/* The command line as parsed (hb_sim_cmd_parse). */
struct sim_args {
	const char *cluster, *models, *policies, *db, *out, *replay;
	int plot, json, record_wall;
	int force;                     /* --force: replace an --out DIR that is not a hetbatch set */
	long interval;
	double restart_s, reconfig_s, gns_overhead, unequal_k;
	int have_restart, have_reconfig, have_gns, have_unequal, no_similarity;
	enum hb_progress_model progress; /* --progress (default pollux) */
	int fidelity;                  /* --fidelity: enum hb_fidelity */
	int have_progress;             /* --progress was given */
	/* trace replay */
	const char *trace;             /* file, or a display name for a synthetic trace */
	const char *synthetic;         /* --synthetic KIND, or NULL */
	struct hb_synth_options synth; /* its options (--synth KEY=VALUE) */
	char synth_name[64];           /* "synthetic-poisson" */
	const char *capacity;          /* --capacity FILE, or NULL */
	struct hb_pknob_settings knobs; /* the policies' options given (--elastic-interval, --yarn-head-only,
					   ...: policy_knob.h), by name */
	enum hb_trace_format format;
	struct hb_trace_options topt;  /* filters */
	double load;
	int no_fairness, trace_opts;   /* trace_opts: a trace-only option was given */
	int duration_from_trace;       /* --duration-from-trace: stop jobs at the trace's run time */
	enum hb_events_level events;   /* --events (when have_events; else hb_events_level_default) */
	int have_events;               /* --events was given */
	int csv;                       /* --csv: also events.csv and timeseries.csv */
	int synth_opts;                /* a --synth option was given */
	int jobs;                      /* -j N: simulations at a time on threads (default 1) */
	int threads;                   /* --threads N: threads inside each simulation; 0: default */
};

/* Parse sim's command line into a (sim_args.c): 0 to go on, -1 after
 * --help (printed), 2 on a usage error (reported). */
int hb_sim_cmd_parse(int argc, char **argv, struct hb_cli *cli, struct sim_args *a);

/* --trace / --synthetic: replay the jobs on the shared cluster under every
 * policy of pol[0..np) with an arbiter (sim_trace.c); so_in holds the
 * what-if knobs, t0 the command's start (wall time).  The exit status. */
int hb_sim_cmd_trace(struct hb_cli *cli, const struct sim_args *a, const struct hb_policy **pol, int np,
		     const struct hb_sim_opts *so_in, double t0);

/* One figure DIR/STEM-KIND.{png,svg} (hb_plot_figure). */
int hb_sim_cmd_figure(const char *gnuplot, const char *gpdir, const char *script, const char *dir, const char *stem,
		      const char *kind, const char *vars, struct hb_error *err);

/* CPU seconds of the calling thread. */
double hb_sim_cmd_cpu_now(void);

/* -v: simulated events per CPU second of one run (what, sim, its CPU s). */
void hb_sim_cmd_report_rate(struct hb_cli *cli, const char *what, const struct hb_sim *sim, double cpu_s);

#endif
