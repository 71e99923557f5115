/*
 * sim.c: `hetbatch sim`: compare policies on one job on a dedicated
 * heterogeneous cluster (JABAS's experimental setting), or, with --trace,
 * replay a job trace on a shared cluster under each policy's cluster
 * arbiter and compare the cluster metrics (sim/results/metrics.h).  This
 * file is the command and the single-job comparison; its command line
 * (usage, options) is sim_args.c, the trace replay sim_trace.c, and
 * sim_cmd.h what they share.
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

/* The options of the policies --fidelity easyscale replaces by the
 * artifact's ("--easyscale-comm, --easyscale-restart, --yarn-head-only")
 * into buf; 1 when s sets one of them. */
static int artifact_knobs(const struct hb_pknob_settings *s, char *buf, size_t size)
{
	const struct hb_pknob_table *t;
	const struct hb_pknob *k;
	size_t len = 0;
	int given = 0;

	buf[0] = '\0';
	for (int i = 0; (k = hb_policy_knob(i, &t)); i++) {
		for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p)) {
			const struct hb_agent_ops *ag;
			const struct hb_arbiter_ops *arb;
			const char *why;

			if (p->options != t || hb_policy_fidelity(p, HB_FIDELITY_EASYSCALE, &ag, &arb, &why) < 0)
				continue;
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s--%s", len ? ", " : "", k->name);
			given |= hb_pknob_setting(s, k->name) != NULL;
			break;
		}
	}
	return given;
}

static int unknown_policy(struct hb_cli *cli, const char *name)
{
	char known[512] = "", hint[128];
	size_t len = 0;

	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
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
	void **popts;                  /* per run: its policy's options (hb_policy_opts_new), lent to sims[i] */
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
	for (int i = 0; c->popts && i < c->nruns; i++)
		free(c->popts[i]);
	free(c->popts);
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
	c->popts = calloc((size_t)c->nruns, sizeof(*c->popts));
	c->runs = calloc((size_t)c->nruns, sizeof(*c->runs));
	if (!c->sims || !c->inited || !c->popts || !c->runs)
		return hb_runtime_error(err, "out of memory");
	for (int mi = 0; mi < nm; mi++) {
		for (int pi = 0; pi < np; pi++) {
			int i = mi * np + pi;
			struct hb_run_result *ru = &c->runs[i];

			hb_strlcpy(ru->model, models[mi]->name, sizeof(ru->model));
			hb_strlcpy(ru->policy, pol[pi]->name, sizeof(ru->policy));
			if (hb_policy_opts_new(pol[pi], &so->knobs, &c->popts[i], err) < 0 ||
			    hb_sim_init(&c->sims[i], &c->cat, cl, c->db, pol[pi]->name, so, err) < 0)
				return -1;
			c->inited[i] = 1;
			c->sims[i].policy_opts = c->popts[i];
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

	rc = hb_sim_cmd_parse(argc, argv, cli, &a);
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
		char replaced[512];

		if (!a.trace || artifact_knobs(&a.knobs, replaced, sizeof(replaced)) || a.capacity)
			return hb_cli_usage(cli, "sim", "--fidelity easyscale replays a trace (--trace) with the artifact's "
					    "own mechanics: %s and --capacity do not apply", replaced);
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
	so.knobs = a.knobs;
	so.capacity = a.capacity;
	/* -j N simulations at a time already keep N CPUs busy; each would
	 * otherwise add a pool as wide as the machine */
	so.threads = a.threads > 0 ? a.threads : a.jobs > 1 ? 1 : hb_pool_online_cpus();
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
	res.csv = a.csv;
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
