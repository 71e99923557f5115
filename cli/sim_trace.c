/*
 * sim_trace.c: `hetbatch sim --trace` and `--synthetic`: replay a job
 * trace on a shared cluster under each policy's cluster arbiter and
 * compare the cluster metrics (sim/results/metrics.h); sim.c parses the
 * command line and hands over here (sim_cmd.h).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
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
#include "policy.h"   /* hb_policy_at, hb_policy_find */
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

/* ---- trace replay (--trace) --------------------------------------------------------- */

/*
 * Order of work, as in the single-job mode: resolve the policies, read the
 * whole trace (a bad line or an unknown model is an input error: exit 2,
 * nothing written), set up one simulation per policy with an arbiter, run
 * them, compute the metrics, and only then print and write.
 *
 * A policy without a shared-cluster arbiter is a table row ("cannot run:
 * policy X has no shared-cluster arbiter yet"), like a policy that cannot
 * run a model in the single-job mode, so a list mixing both still compares
 * the others; when no listed policy has one the command is a usage error.
 */

struct trace_cmd {
	struct hb_catalog cat;
	struct hb_profdb *db;
	struct hb_replay rp;
	struct hb_sim *sims;           /* nruns */
	int *inited;                   /* 1 where sims[i] needs hb_sim_free */
	void **popts;                  /* per run: its policy's options (hb_policy_opts_new), lent to sims[i] */
	struct hb_trace_run *runs;
	int nruns;
};

static void trace_cmd_free(struct trace_cmd *c)
{
	for (int i = 0; i < c->nruns; i++) {
		if (c->runs)
			hb_trace_run_free(&c->runs[i]);
		if (c->inited && c->inited[i])
			hb_sim_free(&c->sims[i]);
		if (c->popts)
			free(c->popts[i]);
	}
	free(c->popts);
	free(c->sims);
	free(c->inited);
	free(c->runs);
	hb_replay_free(&c->rp);
	hb_profdb_close(c->db);
	hb_catalog_free(&c->cat);
}

/* Default policies: those with a shared arbiter, one per (arbiter, agent)
 * pair, since two such policies would replay identically; of such twins the
 * one named after its arbiter ("fifo" rather than "static") stands for both. */
static int default_trace_policies(const struct hb_policy **pol)
{
	int n = 0;

	for (const struct hb_policy *p = hb_policy_at(0); p && n < MAX_POLICIES; p = hb_policy_next(p)) {
		int dup = -1;

		if (!p->shared)
			continue;
		for (int k = 0; k < n && dup < 0; k++)
			if (pol[k]->shared == p->shared && pol[k]->agent == p->agent)
				dup = k;
		if (dup < 0)
			pol[n++] = p;
		else if (strcmp(p->name, p->shared->name) == 0)
			pol[dup] = p;
	}
	return n;
}

static void shared_names(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		if (p->shared)
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? ", " : "",
						p->name);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The reader's filters in words, for the table header and the files. */
static void filters_text(const struct sim_args *a, char *buf, size_t size)
{
	const struct hb_trace_options *o = &a->topt;
	size_t len = 0;

#define ADD(...) (len += (size_t)snprintf(buf + len, len < size ? size - len : 0, __VA_ARGS__))
	buf[0] = '\0';
	if (o->max_jobs > 0)
		ADD("%smax-jobs=%ld", len ? ", " : "", o->max_jobs);
	if (isfinite(o->from_s))
		ADD("%sfrom=%.10g s", len ? ", " : "", o->from_s);
	if (isfinite(o->to_s))
		ADD("%sto=%.10g s", len ? ", " : "", o->to_s);
	if (o->vc[0])
		ADD("%svc=%s", len ? ", " : "", o->vc);
	if (o->status[0])
		ADD("%sstatus=%s", len ? ", " : "", o->status);
	if (o->attempts == HB_ATTEMPTS_ALL)
		ADD("%sattempts=all", len ? ", " : "");
	if (o->min_gpus > 1 || o->max_gpus > 0) {
		ADD("%sgpus=%d:", len ? ", " : "", o->min_gpus);
		if (o->max_gpus > 0)
			ADD("%d", o->max_gpus);
	}
	if (a->synthetic) {
		const struct hb_synth_options *y = &a->synth;

		ADD("%s%s arrivals", len ? ", " : "", hb_synth_arrival_name(y->arrival));
		if (y->arrival == HB_SYNTH_PHILLY_WINDOW)
			ADD(" (hour %g + %g h, %ld jobs)", y->window_start_h, y->window_hours, y->jobs_per_window);
		else if (y->arrival == HB_SYNTH_IBM)
			ADD(" (pattern %s, categories 0x%x, batch %s, kmax %g, length %g: high %.4g/h) for %g h",
			    y->ibm_pattern == HB_SYNTH_IBM_HIGH ? "high" : y->ibm_pattern == HB_SYNTH_IBM_LOW ? "low" : "bursty",
			    y->ibm_categories, y->ibm_batch == HB_SYNTH_IBM_MAX_BS ? "max" : y->ibm_batch == HB_SYNTH_IBM_MIN_BS ? "min" : "random",
			    y->ibm_kmax, y->ibm_length_min, hb_synth_ibm_high_rate(y), y->window_s / 3600.0);
		else
			ADD(" at %g/h for %g h", y->rate_per_hour, y->window_s / 3600.0);
		if (y->arrival == HB_SYNTH_IBM && y->ibm_pattern == HB_SYNTH_IBM_LOW)
			ADD(" (low: x%g)", y->burst_low_ratio);
		if (y->arrival == HB_SYNTH_BURSTY || (y->arrival == HB_SYNTH_IBM && y->ibm_pattern == HB_SYNTH_IBM_BURSTY))
			ADD(" (%g h high, %g h at x%g)", y->burst_high_s / 3600.0, y->burst_low_s / 3600.0,
			    y->burst_low_ratio);
		if (y->njobs > 0)
			ADD(", jobs=%ld", y->njobs);
		if (y->arrival != HB_SYNTH_IBM)
			ADD(", sizes=%s%s, mix=%s", y->philly_csv ? base_name(y->philly_csv) : "fit",
			    y->pollux_filter ? " (pollux filter)" : "", y->mix);
	}
	if (!len)
		hb_strlcpy(buf, "none", size);
#undef ADD
}

/* What the reader left out, and why: a line above the table. */
static void report_skips(FILE *out, const char *trace, const struct hb_trace_stats *st)
{
	char buf[1024];
	size_t len = 0;

	if (st->skipped_total == 0)
		return;
	buf[0] = '\0';
	for (int k = 1; k < HB_SKIP_NREASONS; k++)
		if (st->skipped[k] > 0)
			len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%ld %s",
						len ? ", " : "", st->skipped[k], hb_trace_skip_name((enum hb_trace_skip)k));
	fprintf(out, "%s: %ld %s read, %ld %s kept, %ld skipped: %s\n", trace, st->records,
		hb_plural(st->records, "record", "records"), st->jobs, hb_plural(st->jobs, "job", "jobs"),
		st->skipped_total, buf);
}

static int trace_setup(struct trace_cmd *c, const struct sim_args *a, const struct hb_policy **pol, int np,
		       const struct hb_sim_opts *so, const struct hb_cluster **clp, struct hb_error *err)
{
	struct hb_replay_opts ro;
	const struct hb_cluster *cl;
	char shared[512];

	if (hb_catalog_load_builtin(&c->cat, err) < 0 || hb_catalog_resolve_cluster(&c->cat, a->cluster, &cl, err) < 0 ||
	    hb_cluster_check_size(cl, HB_SIM_MAX_GPUS, "sim", err) < 0)
		return -1;
	*clp = cl;
	hb_replay_opts_init(&ro);
	ro.load = a->load;
	ro.seed = so->seed;
	ro.duration_from_trace = a->duration_from_trace;
	if (a->synthetic) {
		struct hb_synth_options sy = a->synth;
		struct hb_trace_reader *r = NULL;
		struct hb_jobspec *specs = NULL;
		long n = 0;
		int rc;

		/* The generator scales its own arrival rate by the load (synthetic.h). */
		sy.seed = so->seed;
		sy.load = a->load;
		ro.load = 1.0;
		rc = hb_synth_open(&sy, &a->topt, &r, err) < 0 || hb_trace_drain(r, &specs, &n, err) < 0 ||
		     hb_replay_from_specs(&c->cat, cl, specs, n, HB_TRACE_SYNTHETIC, a->trace, &ro, &c->rp, err) < 0;
		free(specs);
		hb_trace_close(r);
		if (rc)
			return -1;
	} else if (hb_replay_read(&c->cat, cl, a->trace, a->format, &a->topt, &ro, &c->rp, err) < 0) {
		return -1;
	}
	if (c->rp.njobs == 0)
		return hb_input_error(err, "%s: no job to replay (%ld read after the filters, %ld larger than the %d GPUs "
					   "of %s)",
				      a->trace, c->rp.read, c->rp.oversize, cl->ngpus, cl->name);
	if (hb_default_profdb(&c->cat, a->db, &c->db, err) < 0)
		return -1;
	c->nruns = np;
	c->sims = calloc((size_t)np, sizeof(*c->sims));
	c->inited = calloc((size_t)np, sizeof(*c->inited));
	c->popts = calloc((size_t)np, sizeof(*c->popts));
	c->runs = calloc((size_t)np, sizeof(*c->runs));
	if (!c->sims || !c->inited || !c->popts || !c->runs)
		return hb_runtime_error(err, "out of memory");
	shared_names(shared, sizeof(shared));
	for (int i = 0; i < np; i++) {
		struct hb_trace_run *ru = &c->runs[i];

		const struct hb_agent_ops *agent;
		const struct hb_arbiter_ops *shared_arb;
		const char *why;

		hb_strlcpy(ru->policy, pol[i]->name, sizeof(ru->policy));
		if (hb_policy_fidelity(pol[i], so->fidelity, &agent, &shared_arb, &why) < 0)
			return hb_input_error(err, "--policy %s: %s", pol[i]->name, why);
		if (!pol[i]->shared) {
			snprintf(ru->why, sizeof(ru->why),
				 "policy %s has no shared-cluster arbiter yet (policies with one: %.400s)", pol[i]->name,
				 shared);
			continue;
		}
		if (hb_policy_opts_new(pol[i], &so->knobs, &c->popts[i], err) < 0 ||
		    hb_sim_init(&c->sims[i], &c->cat, cl, c->db, pol[i]->name, so, err) < 0)
			return -1;
		c->inited[i] = 1;
		c->sims[i].policy_opts = c->popts[i];
		hb_sim_set_arbiter(&c->sims[i], shared_arb);
		/* Streamed (hb_trace_run_stream attaches the sink before the run):
		 * from here on, so that jobs get their per-node arrays at arrival
		 * rather than all of them now. */
		hb_sim_stream(&c->sims[i], NULL);
		if (hb_replay_build(&c->sims[i], &c->rp, agent, a->trace, err) < 0)
			return -1;
	}
	return 0;
}

/* -v: the engine's event rate of one run (CPU time: the machine may be
 * shared, and wall time would measure the neighbours). */
void hb_sim_cmd_report_rate(struct hb_cli *cli, const char *what, const struct hb_sim *sim, double cpu_s)
{
	double ev = (double)sim->eng.popped;

	hb_info(&cli->log, "%s: %.0f events in %.2f CPU-s (%.3g events per CPU-second), %d %s", what, ev, cpu_s,
		cpu_s > 0 ? ev / cpu_s : NAN, sim->njobs, hb_plural(sim->njobs, "job", "jobs"));
}

/*
 * The replays on threads (-j N).  Each replay streams its records into a
 * part of its own (results.h, "Runs on threads") and computes its metrics
 * on its thread.  What follows a replay is done in table order, whatever
 * order the replays end in: as each one ends (under the runner's lock),
 * every finished replay from the first not yet reported on is reported
 * (-v: its event rate and decisions; why it could not run) and its part
 * merged into --out's files.  So the files and stdout are the same bytes
 * for any N, -v's lines come in the same order, and parts wait on disk, not
 * in memory, for an earlier replay to end.
 *
 * What the replays share is read-only while they run: the catalog, the
 * job list (hb_replay) and the profile database, which is read while the
 * simulations are set up (each model a job uses, hb_sim_add_job) and not
 * while they run (the fairness reference runs borrow the loaded models,
 * hb_sim_borrow_models), so one handle serves them all; each simulation
 * has its own RNG streams, seeded from --seed (sim.h), and the engine,
 * solvers and policies keep no static state.  (ThreadSanitizer found no
 * race in every shared policy replayed on 4 threads with fairness on.)
 *
 * Progress: with one thread, each replay's own bar and fairness bar, as
 * they run one after another; with several, one bar for them all, the mean
 * of their fractions done (hb_sim_watch), under the pool's own lock, its
 * label counting the replays done.
 */
struct trace_slot {
	struct hb_results_stream *part; /* its records, NULL without --out */
	int rc;                        /* hb_sim_run's: < 0, the policy cannot run the trace */
	struct hb_error err;           /* its error */
	struct hb_error fatal;         /* the command's failure on its thread (a write, memory);
					  code HB_OK: none */
	int finished;                  /* set under the runner's lock (trace_done) */
	double frac;                   /* its replay's fraction done (under the pool's lock) */
};

struct trace_pool {
	struct hb_cli *cli;
	struct trace_cmd *c;
	struct trace_slot *slot;       /* [c->nruns] */
	struct hb_results_stream *out; /* --out's stream, or NULL */
	int fairness, threads;
	/* Under the runner's lock (trace_done): */
	int next;                      /* first replay not yet reported on */
	int nran;
	struct hb_error *first_fail;   /* the first policy's failure, in table order */
	struct hb_error fatal;         /* the command's failure (code HB_OK: none) */
	/* The shared bar (threads > 1), under mu: */
	pthread_mutex_t mu;
	struct hb_progress bar;
	double frac_sum;               /* sum of the slots' frac */
	int nactive, ndone;            /* replays that run, and of them those ended */
};

/* hb_sim_watch's callback: one replay's fraction into the shared bar. */
struct watch {
	struct trace_pool *p;
	int i;
};

static void pool_bar_locked(struct trace_pool *p)
{
	snprintf(p->bar.label, sizeof(p->bar.label), "sim: %d of %d %s done", p->ndone, p->nactive,
		 hb_plural(p->nactive, "replay", "replays"));
	hb_progress_update(&p->bar, p->nactive > 0 ? p->frac_sum / p->nactive : 1.0);
}

static void trace_watch(void *ctx, double frac)
{
	struct watch *w = ctx;
	struct trace_pool *p = w->p;

	pthread_mutex_lock(&p->mu);
	p->frac_sum += frac - p->slot[w->i].frac;
	p->slot[w->i].frac = frac;
	pool_bar_locked(p);
	pthread_mutex_unlock(&p->mu);
}

/* Replay i on any thread: its run, then its metrics. */
static void trace_task(void *arg, int i)
{
	struct trace_pool *p = arg;
	struct trace_cmd *c = p->c;
	struct trace_slot *s = &p->slot[i];
	struct hb_trace_run *ru = &c->runs[i];
	struct hb_sim *sim = &c->sims[i];
	struct hb_error err = { 0 };
	struct watch w = { p, i };
	struct hb_results_stream *stream; /* its records' destination, NULL without --out */
	double t0 = hb_now(), c0;

	if (!c->inited[i])
		return; /* no shared arbiter: its row says so */
	/* On one thread the replays run in table order, so each streams into
	 * the set itself; a part would only be copied in again after it. */
	if (p->out && p->threads > 1 && hb_results_stream_part(p->out, i + 1, &s->part, &err) < 0) {
		s->fatal = err;
		return;
	}
	stream = p->threads > 1 ? s->part : p->out;
	if (hb_trace_run_stream(ru, sim, stream, i + 1, &err) < 0) {
		s->fatal = err;
		return;
	}
	if (p->threads > 1)
		hb_sim_watch(sim, trace_watch, &w);
	c0 = hb_sim_cmd_cpu_now();
	s->rc = hb_sim_run(sim, &s->err);
	ru->cpu_s = hb_sim_cmd_cpu_now() - c0;
	ru->wall_s = hb_now() - t0;
	hb_sim_watch(sim, NULL, NULL); /* w goes out of scope */
	/* A failed write stops the run with the stream's error: that is the
	 * command's failure, not the policy's. */
	if (stream && hb_results_stream_failure(stream)) {
		s->fatal = *hb_results_stream_failure(stream);
		return;
	}
	/* the set's own stream: the run's rows stay, or go if it failed */
	if (stream && stream == p->out &&
	    hb_results_stream_end(stream, s->rc == 0 && !hb_interrupted(), &err) < 0) {
		s->fatal = err;
		return;
	}
	if (s->rc < 0 || hb_interrupted())
		return;
	ru->ran = 1;
	ru->sim = sim;
	if (hb_trace_run_metrics(ru, p->fairness, p->threads == 1 && hb_cli_status(p->cli) != HB_STATUS_NEVER,
				 &err) < 0)
		s->fatal = err;
}

/* Report on replay i and merge its part (in table order, under the
 * runner's lock). */
static void trace_report(struct trace_pool *p, int i)
{
	struct hb_cli *cli = p->cli;
	struct trace_slot *s = &p->slot[i];
	struct hb_trace_run *ru = &p->c->runs[i];
	struct hb_results_stream *part = s->part;
	struct hb_error err = { 0 };

	s->part = NULL;
	if (s->fatal.code != HB_OK && p->fatal.code == HB_OK)
		p->fatal = s->fatal;
	if (!p->c->inited[i] || p->fatal.code != HB_OK || hb_interrupted()) {
		hb_results_stream_abort(part);
		return;
	}
	hb_sim_cmd_report_rate(cli, ru->policy, &p->c->sims[i], ru->cpu_s);
	if (s->rc == 0) {
		hb_cli_log_decisions(cli, ru->policy, &p->c->sims[i]);
		p->nran++;
	} else {
		hb_strlcpy(ru->why, s->err.msg[0] ? s->err.msg : "unknown error", sizeof(ru->why));
		if (p->first_fail->code == HB_OK)
			*p->first_fail = s->err;
		hb_info(&cli->log, "%s cannot run the trace: %s", ru->policy, ru->why);
	}
	if (part && hb_results_stream_merge(p->out, part, s->rc == 0, &err) < 0)
		p->fatal = err;
}

static void trace_done(void *arg, int i, int ndone)
{
	struct trace_pool *p = arg;

	(void)ndone;
	p->slot[i].finished = 1;
	if (p->threads > 1 && p->c->inited[i]) {
		pthread_mutex_lock(&p->mu);
		p->frac_sum += 1.0 - p->slot[i].frac;
		p->slot[i].frac = 1.0;
		p->ndone++;
		pool_bar_locked(p);
		pthread_mutex_unlock(&p->mu);
	}
	while (p->next < p->c->nruns && p->slot[p->next].finished)
		trace_report(p, p->next++);
}

static int trace_stop(void *arg)
{
	const struct trace_pool *p = arg;

	/* No new replay after a signal or once the command has failed. */
	return hb_interrupted() || p->fatal.code != HB_OK;
}

/* Run every replay and its metrics on `threads` threads, its records
 * streamed into out (NULL: no files; none is kept either way); returns how
 * many ran, -1 on a fatal error (a write failed, out of memory, a signal). */
static int trace_run_all(struct hb_cli *cli, struct trace_cmd *c, int fairness, int threads,
			 struct hb_results_stream *out, struct hb_error *first_fail, struct hb_error *fatal)
{
	struct trace_pool p;

	/* no more threads than replays: one replay streams straight into the
	 * set (a part would only be copied in after it, and its fairness
	 * reference runs go on its own thread either way) */
	if (c->nruns > 0 && threads > c->nruns)
		threads = c->nruns;
	p = (struct trace_pool){ .cli = cli, .c = c, .out = out, .fairness = fairness, .threads = threads,
				 .first_fail = first_fail };

	p.slot = calloc((size_t)c->nruns, sizeof(*p.slot));
	if (!p.slot || pthread_mutex_init(&p.mu, NULL) != 0) {
		free(p.slot);
		return hb_runtime_error(fatal, "out of memory");
	}
	for (int i = 0; i < c->nruns; i++)
		p.nactive += c->inited[i];
	if (threads > 1) {
		hb_progress_start_mode(&p.bar, "sim", 1.0, hb_cli_status(cli),
				       cli->status_period_s);
		pool_bar_locked(&p);
	}
	hb_parallel_for(c->nruns, threads, trace_task, trace_done, trace_stop, &p);
	if (threads > 1) {
		hb_strlcpy(p.bar.label, "sim", sizeof(p.bar.label)); /* the last line is about them all */
		hb_progress_finish(&p.bar);
	}
	/* Replays not handed out (a signal, a failure) have no part; a part
	 * left is one the reports stopped before. */
	for (int i = 0; i < c->nruns; i++)
		hb_results_stream_abort(p.slot[i].part);
	pthread_mutex_destroy(&p.mu);
	free(p.slot);
	if (hb_interrupted())
		return hb_interrupt_error(fatal, "sim --trace");
	if (p.fatal.code != HB_OK) {
		*fatal = p.fatal;
		return -1;
	}
	return p.nran;
}

/* Draw the three trace figures (those with data). */
static int trace_plot(struct hb_cli *cli, const struct hb_trace_results *res, const char *dir, const char *gnuplot,
		      const char *gpdir, struct hb_error *err)
{
	static const char *const what[] = { "jct", "util", "rho" };
	char title[512];

	snprintf(title, sizeof(title), "%s on %s, seed %llu, load %g", res->trace, res->cluster,
		 (unsigned long long)res->seed, res->load);
	for (int k = 0; k < 3; k++) {
		char names[1024], path[4096 + 128], script[64], base[8192] = "";

		if (hb_trace_results_plot_names(res, what[k], names, sizeof(names)) == 0)
			continue;
		snprintf(path, sizeof(path), "trace-%s.dat", what[k]);
		snprintf(script, sizeof(script), "trace-%s.gp", what[k]);
		if (hb_gp_data(base, sizeof(base), path, err) < 0)
			return -1;
		hb_gp_assign(base, sizeof(base), "names", names);
		hb_gp_assign(base, sizeof(base), "ttl", title);
		if (k == 1) { /* util: the GPU types to stack, and where the window starts */
			char types[2048], num[64];

			hb_trace_results_util_types(res, types, sizeof(types));
			hb_gp_assign(base, sizeof(base), "types", types);
			snprintf(num, sizeof(num), "%d", res->cluster_gpus);
			hb_gp_assign(base, sizeof(base), "gpus", num);
			snprintf(num, sizeof(num), "%.9g", res->window_s / 3600.0);
			hb_gp_assign(base, sizeof(base), "x0", num);
		}
		if (hb_sim_cmd_figure(gnuplot, gpdir, script, dir, "trace", what[k], base, err) < 0)
			return -1;
	}
	hb_info(&cli->log, "plots: trace-{jct,util,rho}.{png,svg}");
	return 0;
}

int hb_sim_cmd_trace(struct hb_cli *cli, const struct sim_args *a, const struct hb_policy **pol_in, int np,
		     const struct hb_sim_opts *so_in, double t0)
{
	const struct hb_policy *pol[MAX_POLICIES];
	const struct hb_cluster *cl = NULL;
	struct hb_sim_opts so = *so_in;
	struct trace_cmd c;
	struct hb_trace_results res;
	struct hb_profile_use *uses = NULL; /* what each GPU type x model read (hb_profdb_cluster_uses) */
	int nuses = 0;
	struct hb_results_stream *out = NULL;
	struct hb_outset os = { 0 };
	struct hb_error err = { 0 }, first_fail = { 0 };
	char gnuplot[PATH_MAX], gpdir[PATH_MAX];
	int rc, nran, can_plot = 0, nshared = 0, published = 0;
	enum hb_events_level lv;        /* what of the records --out writes */

	if (np == 0) {
		/* under a fidelity mode that has its own policies, those of them */
		int n = default_trace_policies(pol);

		for (int i = 0; i < n; i++) {
			const struct hb_agent_ops *ag;
			const struct hb_arbiter_ops *arb;
			const char *why;

			if (hb_policy_fidelity(pol[i], so.fidelity, &ag, &arb, &why) == 0)
				pol[np++] = pol[i];
		}
	} else {
		memcpy(pol, pol_in, sizeof(*pol) * (size_t)np);
	}
	for (int i = 0; i < np; i++)
		nshared += pol[i]->shared != NULL;
	if (nshared == 0) {
		char shared[512];

		shared_names(shared, sizeof(shared));
		return hb_cli_usage(cli, "sim", "--trace: no listed policy has a shared-cluster arbiter yet "
						"(policies with one: %s)",
				    shared);
	}
	/* One bar per replay (they are long) when they run one after another;
	 * on threads, one bar for them all (trace_run_all). */
	so.quiet = cli->quiet || a->jobs > 1;
	so.status = hb_cli_status(cli);
	so.status_period_s = cli->status_period_s > 0 ? cli->status_period_s : 1e-9; /* 0 there: the default */

	memset(&c, 0, sizeof(c));
	if (a->plot && (can_plot = hb_plot_tools(cli, "sim-batch.gp", gnuplot, sizeof(gnuplot), gpdir, sizeof(gpdir), &err)) < 0)
		return hb_cli_fail(cli, &err);
	if (trace_setup(&c, a, pol, np, &so, &cl, &err) < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	{
		/* The profile of every model the replay runs: -v names each
		 * source, the results record them (issue 39). */
		const struct hb_model **used = calloc((size_t)c.cat.nmodels + 1, sizeof(*used));
		int nused = 0;

		if (!used) {
			hb_runtime_error(&err, "out of memory");
			rc = hb_cli_fail(cli, &err);
			goto out;
		}
		for (long j = 0; j < c.rp.njobs; j++) {
			int seen = 0;

			for (int k = 0; k < nused && !seen; k++)
				seen = used[k] == c.rp.jobs[j].model;
			if (!seen && nused < c.cat.nmodels)
				used[nused++] = c.rp.jobs[j].model;
		}
		hb_cli_log_profiles(cli, c.db, &c.cat, cl, used, nused);
		rc = hb_profdb_cluster_uses(c.db, &c.cat, cl, used, nused, &uses, &nuses, &err);
		free(used);
		if (rc < 0) {
			rc = hb_cli_fail(cli, &err);
			goto out;
		}
	}
	/* Every replay has its jobs now: the trace's records go. */
	hb_replay_drop_jobs(&c.rp);
	if (c.rp.with_duration > 0 && !a->duration_from_trace)
		hb_warn(&cli->log, "%s records a run time (duration_s) for %ld of its %ld jobs; it is ignored and jobs "
				   "train to their model's target (--duration-from-trace stops them at it)",
			a->trace, c.rp.with_duration, c.rp.read - c.rp.oversize);
	if (c.rp.merged > 0)
		hb_warn(&cli->log, "%s: %ld %s an earlier row's name: each replaces that row's values and keeps its "
				   "place, as EasyScale's simulator reads its workloads (an OrderedDict by name)",
			a->trace, c.rp.merged, c.rp.merged == 1 ? "row repeats" : "rows repeat");
	if (c.rp.oversize > 0)
		hb_warn(&cli->log, "%s: %ld jobs ask for more GPUs than the %d of %s (up to %d): skipped, counted as "
				   "dropped",
			a->trace, c.rp.oversize, cl->ngpus, cl->name, c.rp.max_oversize_gpus);
	/* Without --events, a long replay writes its job-level events only
	 * (hb_events_level_default says why); said once, since it is a choice. */
	lv = a->have_events ? a->events : hb_events_level_default(c.rp.read - c.rp.oversize);
	if (a->out && !a->have_events && lv != HB_EVENTS_ALL)
		hb_warn(&cli->log, "%ld jobs (more than %d): writing job-level events only (--events %s); --events all "
				   "writes every one",
			c.rp.read - c.rp.oversize, HB_EVENTS_ALL_MAX_JOBS, hb_events_level_name(lv));
	/* Files are opened once the input is known good (setup above), and
	 * written while the replays go, into the staging directory (outset.h). */
	if (a->out && (hb_outset_begin(&os, a->out, "sim", a->force, &err) < 0 ||
		       hb_results_stream_open(&out, os.stage, 1, lv, a->csv, &err) < 0)) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	nran = trace_run_all(cli, &c, !a->no_fairness, a->jobs, out, &first_fail, &err);
	if (nran < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	if (nran == 0) {
		rc = hb_cli_fail(cli, &first_fail);
		goto out;
	}

	memset(&res, 0, sizeof(res));
	hb_strlcpy(res.cluster, cl->name, sizeof(res.cluster));
	res.cluster_gpus = cl->ngpus;
	res.seed = cli->seed;
	{
		const char *slash = strrchr(a->trace, '/');

		hb_strlcpy(res.trace, slash ? slash + 1 : a->trace, sizeof(res.trace));
	}
	hb_strlcpy(res.format, hb_trace_format_name(c.rp.format), sizeof(res.format));
	filters_text(a, res.filters, sizeof(res.filters));
	res.load = a->load;
	res.window_s = isfinite(a->topt.from_s) ? a->topt.from_s / a->load : 0.0;
	res.read = c.rp.read;
	res.oversize = c.rp.oversize;
	res.assigned = c.rp.assigned;
	hb_sim_opts_default(&res.defaults);
	res.opts = so;
	res.runs = c.runs;
	res.nruns = c.nruns;
	res.fairness = !a->no_fairness;
	res.record_wall = a->record_wall;
	res.events = lv;
	res.csv = a->csv;
	res.profiles = uses;
	res.nprofiles = nuses;
	if (a->json) {
		cJSON *doc = hb_trace_results_json(&res);
		int bad = hb_json_print(stdout, doc, &err);

		cJSON_Delete(doc);
		if (bad) {
			rc = hb_cli_fail(cli, &err);
			goto out;
		}
	} else {
		report_skips(stdout, res.trace, &c.rp.stats);
		hb_trace_results_print(stdout, &res);
		printf("\n%d of %d %s ran; wall time %.2f s\n", nran, c.nruns, hb_plural(c.nruns, "policy", "policies"),
		       hb_now() - t0);
	}
	fflush(stdout);
	rc = 0;
	if (a->out) {
		struct hb_results_stream *st = out;

		out = NULL; /* commit frees it, success or not */
		if (hb_trace_results_commit(&res, st, a->plot, &err) < 0 ||
		    (can_plot == 1 && trace_plot(cli, &res, os.stage, gnuplot, gpdir, &err) < 0) ||
		    hb_outset_publish(&os, &err) < 0) {
			rc = hb_cli_fail(cli, &err);
		} else {
			published = 1;
			hb_cli_results_in(cli, "sim", a->out);
			hb_cli_log_files(cli, "sim", a->out);
		}
	}
out:
	hb_results_stream_abort(out); /* nothing half-written: no file, no directory it made */
	hb_outset_abort(&os);
	trace_cmd_free(&c);
	free(uses);
	if (hb_interrupted())
		rc = published ? hb_cli_interrupted(cli, "sim", "the results were complete: %s holds the new set", a->out)
		     : a->out ? hb_cli_interrupted(cli, "sim", "nothing written; %s left as it was", a->out)
			      : hb_cli_interrupted(cli, "sim", "nothing was written");
	return rc;
}
