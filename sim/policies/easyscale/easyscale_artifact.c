/*
 * easyscale_artifact.c: EasyScale's trace experiment as its artifact's
 * simulator runs it (easyscale_artifact.h says what follows which file
 * and function).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easyscale.h"           /* hb_es_place */
#include "easyscale_artifact.h"
#include "es_artifact.h"
#include "fidelity.h"
#include "log.h"
#include "policy.h"
#include "sim.h"

enum esa_mode { ESA_HETER = 0, ESA_HOMO = 1, ESA_FIFO = 2 };

/* Plans shared by the jobs of one (perf, maxP): most jobs of a trace have
 * a few applications, batches and maxP values. */
struct esa_cached {
	double perf[HB_ESA_MAX_TYPES];
	int mp;
	struct hb_esa_plans plans;
};

/* One job as the artifact's Job sees it. */
struct esa_job {
	int init;                     /* the fields below are set */
	int arrived;                  /* submitted (active once it arrived and until it is done) */
	int mp, b;                    /* maxP and the per-EST batch */
	int pref;                     /* preferred GPU type (perf index) */
	int d2;                       /* enable_heterogeneous_deterministic */
	double gpu_s[HB_ESA_MAX_TYPES]; /* one GPU's iteration at b, per type */
	const struct hb_esa_plans *plans; /* its plan list: the shared one, or `own` when filtered */
	struct hb_esa_plans own;      /* filtered copy (owned), empty when the shared list is used */
	int has;                      /* holds a plan (started, not suspended) */
	struct hb_esa_plan cur;       /* the plan it runs (its placement, threads, speedup, waste) */
	int multi;                    /* has held two GPU types at once */
};

struct esa_prop {
	int job, type, k;             /* add k GPUs of type to job */
	double inc;                   /* inc_perf */
	long ord;                     /* submission order (stable sort) */
	struct hb_esa_plan plan;      /* the plan it becomes (tmp) */
};

/* What the run did, logged at its end (-v) for the diagnosis. */
struct esa_stats {
	long rounds;                  /* rounds with an active job */
	long proposals;               /* increments proposed (one per job and type at most) */
	long granted;                 /* increments granted */
	long waste_refused;           /* plans refused by the waste rule alone (speedup and size passed,
					 and they add GPUs of one type only) */
	long waste_blocked;           /* (job, round, type) where the waste rule refused every such plan
					 of the type: the job could not grow on it because of the rule */
	long multi_type_jobs;         /* jobs that held GPUs of two types or more at some point */
};

struct esa_state {
	int mode;                     /* enum esa_mode */
	const char *name;             /* the arbiter's name, for the log line at the end */
	const struct hb_log *log;     /* the sim's (opts.log), borrowed; NULL: no log line */
	int ntypes;
	int nums[HB_ESA_MAX_TYPES];   /* the cluster's GPUs per type (Cluster.gpu_nums) */
	struct esa_job *jobs;         /* per job id */
	int njobs, nnodes;
	struct esa_cached **cache;    /* each entry allocated alone: jobs point into them */
	int ncache, capcache;
	int *scratch;                 /* nnodes */
	int *add;                     /* nnodes */
	int head;                     /* yarn-cs: the job running, -1 none */
	int *init;                    /* njobs: a round's jobs without a plan, in job order */
	struct esa_prop *props;       /* njobs x HB_ESA_MAX_TYPES: a round's proposals */
	unsigned char *done;          /* njobs: decided this round */
	struct esa_stats stats;
};

/* ---- state ------------------------------------------------------------------ */

static void esa_free(void *state)
{
	struct esa_state *st = state;

	if (st) {
		if (st->log && st->stats.rounds > 0)
			hb_info(st->log, "%s (fidelity easyscale): %ld rounds, %ld increments proposed, %ld granted; "
				"waste rule: %ld plans refused, %ld (job, round, type) with every increment refused; "
				"%ld jobs held two GPU types at once",
				st->name, st->stats.rounds, st->stats.proposals, st->stats.granted,
				st->stats.waste_refused, st->stats.waste_blocked, st->stats.multi_type_jobs);
		for (int j = 0; j < st->njobs && st->jobs; j++)
			hb_esa_plans_free(&st->jobs[j].own);
		for (int c = 0; c < st->ncache; c++) {
			hb_esa_plans_free(&st->cache[c]->plans);
			free(st->cache[c]);
		}
		free(st->cache);
		free(st->jobs);
		free(st->scratch);
		free(st->add);
		free(st->init);
		free(st->props);
		free(st->done);
		free(st);
	}
}

static int is_esa(const struct hb_sim *sim)
{
	return sim->arbiter == &hb_arbiter_esa || sim->arbiter == &hb_arbiter_esa_homo ||
	       sim->arbiter == &hb_arbiter_esa_fifo;
}

/* The state of one mode (enum esa_mode): each ops table's init below. */
static int esa_init_mode(struct hb_sim *sim, int mode, void **state, struct hb_error *err)
{
	struct esa_state *st = calloc(1, sizeof(*st));
	const struct hb_cluster *cl = sim->cl;

	if (!st)
		return hb_runtime_error(err, "easyscale fidelity: out of memory");
	st->mode = mode;
	st->name = sim->arbiter->name;
	st->log = sim->opts.log;
	st->njobs = sim->njobs;
	st->nnodes = cl->nnodes;
	st->head = -1;
	st->jobs = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(*st->jobs));
	st->scratch = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1), sizeof(int));
	st->add = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1), sizeof(int));
	st->init = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(int));
	st->props = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1) * HB_ESA_MAX_TYPES, sizeof(*st->props));
	st->done = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), 1);
	if (!st->jobs || !st->scratch || !st->add || !st->init || !st->props || !st->done) {
		esa_free(st);
		return hb_runtime_error(err, "easyscale fidelity: out of memory");
	}
	*state = st;
	return 0;
}

static int esa_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	(void)opts;
	return esa_init_mode(sim, ESA_HETER, state, err);
}

static int esa_homo_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	(void)opts;
	return esa_init_mode(sim, ESA_HOMO, state, err);
}

static int esa_fifo_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	(void)opts;
	return esa_init_mode(sim, ESA_FIFO, state, err);
}

/* One GPU's iteration at batch b on type g (Application.get_gpu_time):
 * linear between the profiled batches that fit, extrapolated from the end
 * segments; exact at a profiled batch. */
static int gpu_time(const struct hb_sim_job *job, int g, double b, double *out, struct hb_error *err)
{
	const struct hb_perf *p = job->perf;
	const struct hb_perf_comm none = { 0.0, 0.0, 0 };
	double *xs = malloc(sizeof(double) * (size_t)(p->gpus[g].nlbs > 0 ? 2 * p->gpus[g].nlbs : 2)), *ys;
	int n = 0, k;

	if (!xs)
		return hb_runtime_error(err, "easyscale fidelity: out of memory");
	ys = xs + (p->gpus[g].nlbs > 0 ? p->gpus[g].nlbs : 1);
	for (int i = 0; i < p->gpus[g].nlbs; i++) { /* sorted by local_bs (hb_perf_prepare) */
		const struct hb_perf_lbs *l = &p->gpus[g].lbs[i];
		struct hb_perf_coef c;

		if (l->n_cap < 1 || hb_perf_coef_eval(p, l, &none, 1, 1.0, &c, NULL) != 0)
			continue;
		xs[n] = l->local_bs;
		ys[n] = c.base_s;
		n++;
	}
	for (k = 0; k < n; k++)
		if (xs[k] == b) {
			*out = ys[k];
			free(xs);
			return 0;
		}
	if (n < 2) {
		free(xs);
		return hb_input_error(err, "easyscale fidelity: %s on %s: %d profiled batch%s that fit%s; the artifact "
					   "interpolates one GPU's step time over two or more",
				      job->model->name, p->gpus[g].name, n, n == 1 ? "" : "es", n == 1 ? "s" : "");
	}
	/* the segment that holds b, or the end segment beyond which it lies */
	for (k = 1; k < n - 1 && xs[k] < b; k++)
		;
	*out = ys[k - 1] + (ys[k] - ys[k - 1]) * (b - xs[k - 1]) / (xs[k] - xs[k - 1]);
	if (!(*out > 0)) {
		double x0 = xs[k - 1], x1 = xs[k];

		free(xs);
		return hb_input_error(err, "easyscale fidelity: %s on %s: step time %g s at batch %g (extrapolated "
					   "from batches %g and %g)", job->model->name, p->gpus[g].name, *out, b, x0, x1);
	}
	free(xs);
	return 0;
}

/* The artifact's one-GPU step times (overall-overhead/overhead.csv,
 * ddp_nondeterminism: official PyTorch, seconds per iteration) for its
 * eight applications at the batch it measured, on V100, P100, T4.  Its
 * simulator reads such times from per-application logs (logs/APP/logs.json,
 * 'step1'), which the repository does not hold; these are the same GPUs
 * and models measured the same way, and they set the types' relative
 * speeds, which decide what mixing types buys (the analytic profiles put
 * a V100 at 2.2 T4s on BERT, these at 1.54). */
static const struct {
	const char *app;
	int batch;
	double s[3];                  /* V100, P100, T4 */
} measured[] = {
	{ "shufflenetv2", 128, { 0.2163, 0.3645, 0.4039 } },
	{ "resnet50", 64, { 0.2503, 0.4150, 0.6097 } },
	{ "vgg19", 32, { 0.2586, 0.3778, 0.5402 } },
	{ "yolov3", 8, { 0.4731, 0.7018, 0.8673 } },
	{ "ncf", 1024, { 0.0103, 0.0135, 0.0109 } },
	{ "bert", 8, { 0.4413, 0.6069, 0.6811 } },
	{ "electra", 8, { 0.4420, 0.6050, 0.6812 } },
	{ "swintransformer", 32, { 0.4132, 0.5935, 0.6030 } },
};

static int measured_col(const char *gpu)
{
	if (strcmp(gpu, "v100") == 0 || strcmp(gpu, "v100-32gb") == 0)
		return 0;
	if (strcmp(gpu, "p100") == 0)
		return 1;
	return strcmp(gpu, "t4") == 0 ? 2 : -1;
}

/* One GPU's step at b on type g: the artifact's measurement where it has
 * one for the job's application and the type (at another batch, scaled
 * by the profile's ratio between the two batches), else the profile. */
static int step_time(const struct hb_sim_job *job, int g, double b, double *out, struct hb_error *err)
{
	int col = measured_col(job->perf->gpus[g].name);

	for (size_t k = 0; col >= 0 && job->app[0] && k < sizeof(measured) / sizeof(measured[0]); k++) {
		double at_b, at_m;

		if (strcmp(measured[k].app, job->app) != 0)
			continue;
		if (b == measured[k].batch) {
			*out = measured[k].s[col];
			return 0;
		}
		if (gpu_time(job, g, b, &at_b, err) < 0 || gpu_time(job, g, measured[k].batch, &at_m, err) < 0)
			return -1;
		*out = measured[k].s[col] * at_b / at_m;
		return 0;
	}
	return gpu_time(job, g, b, out, err);
}

static const struct hb_esa_plans *cached_plans(struct esa_state *st, const double *perf, int mp,
					       struct hb_error *err)
{
	struct esa_cached *c;

	for (int i = 0; i < st->ncache; i++)
		if (st->cache[i]->mp == mp && memcmp(st->cache[i]->perf, perf, sizeof(double) * (size_t)st->ntypes) == 0)
			return &st->cache[i]->plans;
	if (st->ncache == st->capcache) {
		int cap = st->capcache ? 2 * st->capcache : 16;
		struct esa_cached **n = realloc(st->cache, sizeof(*n) * (size_t)cap);

		if (!n) {
			hb_runtime_error(err, "easyscale fidelity: out of memory");
			return NULL;
		}
		st->cache = n;
		st->capcache = cap;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		hb_runtime_error(err, "easyscale fidelity: out of memory");
		return NULL;
	}
	memcpy(c->perf, perf, sizeof(double) * (size_t)st->ntypes);
	c->mp = mp;
	if (hb_esa_plans_build(perf, st->nums, st->ntypes, mp, &c->plans) < 0) {
		free(c);
		hb_runtime_error(err, "easyscale fidelity: plan database for maxP %d on %d GPU types: out of memory or "
				 "above 2^20 plans a candidate", mp, st->ntypes);
		return NULL;
	}
	st->cache[st->ncache++] = c;
	return &c->plans;
}

static int job_init(struct hb_sim *sim, struct esa_state *st, struct hb_sim_job *job, struct hb_error *err)
{
	struct esa_job *js = &st->jobs[job->id];
	const struct hb_perf *p = job->perf;
	double perf[HB_ESA_MAX_TYPES];
	const struct hb_esa_plans *all;

	if (js->init)
		return 0;
	if (p->ngpus > HB_ESA_MAX_TYPES)
		return hb_input_error(err, "easyscale fidelity: cluster %s has %d GPU types; the artifact's planner "
					   "is run on at most %d", sim->cl->name, p->ngpus, HB_ESA_MAX_TYPES);
	if (!st->ntypes) {
		st->ntypes = p->ngpus;
		for (int i = 0; i < p->nnodes; i++)
			st->nums[p->nodes[i].gpu] += sim->cl->nodes[i].ngpus;
	}
	js->mp = job->req_gpus;
	if (js->mp < 1 || job->req_batch < 1 || job->req_batch % js->mp)
		return hb_input_error(err, "easyscale fidelity: job %s: global batch %ld is not maxP %d x a per-EST "
					   "batch (the artifact's batch_size x max_parallelism)", job->name,
				      job->req_batch, js->mp);
	js->b = (int)(job->req_batch / js->mp);
	js->pref = -1;
	for (int g = 0; g < p->ngpus; g++)
		if (strcmp(p->gpus[g].name, job->pref_gpu) == 0)
			js->pref = g;
	if (js->pref < 0)
		return hb_input_error(err, "easyscale fidelity: job %s: preferred GPU type '%s' is not in cluster %s "
					   "(the artifact's jobs each name one: preferred_gpu)", job->name,
				      job->pref_gpu, sim->cl->name);
	js->d2 = job->d2 >= 0 ? job->d2 : strcmp(job->model->arch.cls, "cnn") != 0;
	for (int g = 0; g < p->ngpus; g++)
		if (step_time(job, g, js->b, &js->gpu_s[g], err) < 0)
			return -1;
	/* Application.get_proposals: perf relative to the last type */
	for (int g = 0; g < p->ngpus; g++)
		perf[g] = js->gpu_s[p->ngpus - 1] / js->gpu_s[g];
	if (!(all = cached_plans(st, perf, js->mp, err)))
		return -1;
	js->plans = all;
	if (st->mode != ESA_HETER || !js->d2) { /* get_placement_proposals keeps the filtered list */
		int total = st->mode == ESA_FIFO ? js->mp : 0;

		js->own.v = malloc(sizeof(*js->own.v) * (size_t)(all->n > 0 ? all->n : 1));
		if (!js->own.v)
			return hb_runtime_error(err, "easyscale fidelity: out of memory");
		memcpy(js->own.v, all->v, sizeof(*all->v) * (size_t)all->n);
		js->own.n = all->n;
		js->own.ntypes = all->ntypes;
		hb_esa_plans_keep_type(&js->own, js->pref, total);
		js->plans = &js->own;
	}
	if (js->plans->n == 0)
		return hb_input_error(err, "easyscale fidelity: job %s: no plan for maxP %d on %s alone (the cluster "
					   "has %d GPUs of it)%s", job->name, js->mp, p->gpus[js->pref].name,
				      st->nums[js->pref],
				      st->mode == ESA_FIFO ? "; yarn-cs gives maxP GPUs of the preferred type" : "");
	js->init = 1;
	return 0;
}

/* ---- what the agent reads --------------------------------------------------- */

static const struct esa_job *job_of(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	const struct esa_state *st = sim->arbiter_state;

	if (!is_esa(sim) || !st || job->id < 0 || job->id >= st->njobs || !st->jobs[job->id].init ||
	    !st->jobs[job->id].has)
		return NULL;
	return &st->jobs[job->id];
}

/* ---- the agent ---------------------------------------------------------------- */

/* "v100-32gb x4 (3 ESTs) + t4 x2 (1 EST), maxP 16 x b 8" */
static void layout_text(const struct hb_perf *p, const struct esa_job *js, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int g = 0; g < p->ngpus; g++)
		if (js->cur.n[g] > 0)
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s x%d (%d EST%s)",
						len ? " + " : "", p->gpus[g].name, js->cur.n[g], js->cur.threads[g],
						js->cur.threads[g] == 1 ? "" : "s");
	if (len < size)
		snprintf(buf + len, size - len, ", maxP %d x b %d", js->mp, js->b);
}

static int esa_apply(struct hb_sim *sim, struct hb_sim_job *job, int how, struct hb_error *err)
{
	const struct esa_job *js = job_of(sim, job);
	struct hb_job_config cfg;
	char why[160];
	double pause;
	int rc;

	if (!js)
		return hb_input_error(err, "easyscale fidelity: job %s has no plan: the agent runs under the "
					   "fidelity arbiters only (sim --fidelity easyscale)", job->name);
	hb_job_config_init(&cfg, job->perf->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "easyscale fidelity %s: out of memory", job->name);
	memcpy(cfg.alloc, job->grant, sizeof(int) * (size_t)job->perf->nnodes);
	cfg.ngpus = job->ngrant;
	cfg.global_bs = (long)js->mp * js->b;
	cfg.local_bs = js->b;
	cfg.iter_s = hb_esa_comp_s(&js->cur, js->gpu_s, job->perf->ngpus);
	layout_text(job->perf, js, cfg.layout, sizeof(cfg.layout));
	/* Job.step: rescale_time 20 s counts down once, before the first step */
	pause = how == HB_APPLY_START && !job->started ? HB_ESA_START_S : 0.0;
	snprintf(why, sizeof(why), "easyscale fidelity: plan speedup %.4f, waste %.1f %%, step %.4f s",
		 js->cur.speedup, 100.0 * js->cur.waste, cfg.iter_s);
	rc = hb_sim_apply_cost(sim, job, &cfg, how, pause, why, err);
	hb_job_config_free(&cfg);
	return rc;
}

static int esa_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)state;
	return esa_apply(sim, job, HB_APPLY_START, err);
}

static int esa_on_grant(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)state;
	return esa_apply(sim, job, job->started ? HB_APPLY_RESTART : HB_APPLY_START, err);
}

const struct hb_agent_ops hb_agent_esa = {
	.name = "easyscale-artifact",
	.summary = "EasyScale's artifact: maxP ESTs at a fixed batch, the arbiter's plan, compute-only step",
	.start = esa_start,
	.on_grant = esa_on_grant,
};

/* ---- the arbiters ------------------------------------------------------------- */

static int esa_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct esa_state *st = state;

	if (job->id < 0 || job->id >= st->njobs)
		return hb_runtime_error(err, "easyscale fidelity: job %s (id %d) was added after the run started",
					job->name, job->id);
	if (job->agent != &hb_agent_esa)
		return hb_input_error(err, "easyscale fidelity: job %s runs agent %s, not the artifact's",
				      job->name, job->agent->name);
	if (job_init(sim, st, job, err) < 0)
		return -1;
	st->jobs[job->id].arrived = 1;
	return 0; /* the next round decides (Cluster.step) */
}

static int esa_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct esa_state *st = state;

	(void)sim;
	(void)err;
	if (job->id >= 0 && job->id < st->njobs)
		st->jobs[job->id].has = 0; /* its GPUs wait for the next round */
	return 0;
}

static double esa_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return HB_ESA_ROUND_S;
}

static int active(const struct hb_sim *sim, const struct esa_state *st, int j)
{
	return st->jobs[j].arrived && sim->jobs[j].state != HB_JOB_DONE;
}

static int gpus_of(const int *n, int ntypes)
{
	int s = 0;

	for (int t = 0; t < ntypes; t++)
		s += n[t];
	return s;
}

/* Place plan counts n of job (on top of its grant for the types that grow)
 * into st->scratch: the new grant. */
static int place(struct hb_sim *sim, struct esa_state *st, struct hb_sim_job *job, const int *from, const int *n,
		 struct hb_error *err)
{
	memset(st->add, 0, sizeof(int) * (size_t)st->nnodes);
	for (int t = 0; t < st->ntypes; t++) {
		int have = 0;

		for (int i = 0; i < st->nnodes; i++)
			if (job->perf->nodes[i].gpu == t)
				have += from ? from[i] : 0;
		if (n[t] < have)
			return hb_runtime_error(err, "easyscale fidelity: job %s would shrink on %s", job->name,
						job->perf->gpus[t].name);
		if (n[t] > have && hb_es_place(job->perf, sim->free_gpus, from, t, n[t] - have, st->add) < 0)
			return hb_runtime_error(err, "easyscale fidelity: %d free GPUs of %s do not place for job %s",
						n[t] - have, job->perf->gpus[t].name, job->name);
	}
	for (int i = 0; i < st->nnodes; i++)
		st->scratch[i] = (from ? from[i] : 0) + st->add[i];
	return 0;
}

static void note_types(struct esa_state *st, struct esa_job *js)
{
	int used = 0;

	for (int t = 0; t < st->ntypes; t++)
		used += js->cur.n[t] > 0;
	if (used > 1 && !js->multi) {
		js->multi = 1;
		st->stats.multi_type_jobs++;
	}
}

/* Job.submit_proposals: per type, the best increment (into props). */
static void submit(struct esa_state *st, int j, struct esa_prop *props, int *np)
{
	struct esa_job *js = &st->jobs[j];
	const struct hb_esa_plan *cur = &js->cur;
	int have = gpus_of(cur->n, st->ntypes), best[HB_ESA_MAX_TYPES], refused[HB_ESA_MAX_TYPES] = { 0 };
	double inc[HB_ESA_MAX_TYPES];
	struct hb_esa_plan tmp[HB_ESA_MAX_TYPES];

	for (int t = 0; t < st->ntypes; t++)
		best[t] = 0;
	for (int i = 0; i < js->plans->n; i++) {
		const struct hb_esa_plan *p = &js->plans->v[i];
		int g = -1, wasted;

		if (p->speedup < cur->speedup || gpus_of(p->n, st->ntypes) > 2 * have)
			continue;
		/* judge(): more GPUs of exactly one type g, no more of the others */
		for (int t = 0; t < st->ntypes; t++)
			if (p->n[t] > cur->n[t]) {
				g = t;
				break;
			}
		for (int t = 0; g >= 0 && t < st->ntypes; t++)
			if (t != g && p->n[t] > cur->n[t])
				g = -1;
		if (g < 0)
			continue;
		wasted = p->waste > HB_ESA_MAX_WASTE;
		{
			struct hb_esa_plan x = *p;
			double v;
			int k = p->n[g] - cur->n[g];

			memcpy(x.n, cur->n, sizeof(x.n));
			x.n[g] = p->n[g];
			if (gpus_of(x.n, st->ntypes) > 2 * have)
				continue;
			if (wasted) {
				st->stats.waste_refused++;
				refused[g] = 1;
				continue;
			}
			v = (p->speedup / cur->speedup - 1.0) / k + 1.0;
			if (!best[g] || v > inc[g]) { /* sorted by inc_perf, stable: the first of equals */
				best[g] = 1;
				inc[g] = v;
				tmp[g] = x;
			}
		}
	}
	for (int t = 0; t < st->ntypes; t++) {
		if (refused[t] && !best[t])
			st->stats.waste_blocked++;
		if (!best[t])
			continue;
		props[*np] = (struct esa_prop){ j, t, tmp[t].n[t] - cur->n[t], inc[t], *np, tmp[t] };
		(*np)++;
		st->stats.proposals++;
	}
}

static int cmp_prop(const void *a, const void *b)
{
	const struct esa_prop *x = a, *y = b;

	if (x->inc != y->inc)
		return x->inc > y->inc ? -1 : 1;
	return (x->ord > y->ord) - (x->ord < y->ord);
}

/* EasyPolicy.optimize_v3 */
static int round_easy(struct hb_sim *sim, struct esa_state *st, struct hb_error *err)
{
	int remaining[HB_ESA_MAX_TYPES], *init = st->init, ninit = 0, np = 0, any = 0;
	struct esa_prop *props = st->props;
	unsigned char *done = st->done;

	memcpy(remaining, st->nums, sizeof(remaining));
	memset(done, 0, (size_t)st->njobs);
	for (int j = 0; j < st->njobs; j++) {
		struct esa_job *js = &st->jobs[j];

		if (!active(sim, st, j))
			continue;
		any = 1;
		if (!js->has) {
			init[ninit++] = j;
			continue;
		}
		for (int t = 0; t < st->ntypes; t++)
			remaining[t] -= js->cur.n[t];
		submit(st, j, props, &np);
	}
	st->stats.rounds += any;
	if (np > 1)
		qsort(props, (size_t)np, sizeof(*props), cmp_prop);
	for (int q = 0; q < ninit; q++) {
		struct hb_sim_job *job = &sim->jobs[init[q]];
		struct esa_job *js = &st->jobs[init[q]];
		const struct hb_esa_plan *p = &js->plans->v[js->plans->n - 1];
		int fits = 1;

		for (int t = 0; t < st->ntypes; t++)
			fits &= p->n[t] <= remaining[t];
		if (!fits)
			continue;
		for (int t = 0; t < st->ntypes; t++)
			remaining[t] -= p->n[t];
		done[init[q]] = 1;
		js->cur = *p;
		js->has = 1;
		note_types(st, js);
		if (place(sim, st, job, NULL, p->n, err) < 0 ||
		    (job->state == HB_JOB_PENDING ? hb_sim_start_job(sim, job, st->scratch, err)
						  : hb_sim_regrant(sim, job, st->scratch, err)) < 0)
			return -1;
	}
	for (int q = 0; q < np; q++) {
		struct esa_prop *p = &props[q];
		struct hb_sim_job *job = &sim->jobs[p->job];
		struct esa_job *js = &st->jobs[p->job];

		if (done[p->job] || remaining[p->type] < p->k)
			continue;
		remaining[p->type] -= p->k;
		done[p->job] = 1;
		st->stats.granted++;
		if (place(sim, st, job, job->grant, p->plan.n, err) < 0)
			return -1;
		js->cur = p->plan;
		note_types(st, js);
		hb_sim_note(sim, job, "grant", "easyscale fidelity: +%d %s (inc_perf %.4f)", p->k,
			    job->perf->gpus[p->type].name, p->inc);
		/* the new grant is st->scratch, which nothing the regrant calls touches */
		if (hb_sim_regrant(sim, job, st->scratch, err) < 0)
			return -1;
	}
	return 0;
}

/* FifoPolicy.optimize: the first active job, alone. */
static int round_fifo(struct hb_sim *sim, struct esa_state *st, struct hb_error *err)
{
	int head = -1;

	for (int j = 0; j < st->njobs && head < 0; j++)
		if (active(sim, st, j))
			head = j;
	if (head < 0)
		return 0;
	st->stats.rounds++;
	if (st->head >= 0 && st->head != head && st->jobs[st->head].has) {
		/* an earlier job in trace order arrived: the artifact's
		 * allocation no longer names the old head, which stops */
		int *none = calloc((size_t)st->nnodes, sizeof(int));
		int rc;

		if (!none)
			return hb_runtime_error(err, "easyscale fidelity: out of memory");
		st->jobs[st->head].has = 0;
		rc = hb_sim_regrant(sim, &sim->jobs[st->head], none, err);
		free(none);
		if (rc < 0)
			return -1;
	}
	st->head = head;
	if (!st->jobs[head].has) {
		struct hb_sim_job *job = &sim->jobs[head];
		struct esa_job *js = &st->jobs[head];

		js->cur = js->plans->v[0];
		js->has = 1;
		if (place(sim, st, job, NULL, js->cur.n, err) < 0)
			return -1;
		return job->state == HB_JOB_PENDING ? hb_sim_start_job(sim, job, st->scratch, err)
						    : hb_sim_regrant(sim, job, st->scratch, err);
	}
	return 0;
}

static int esa_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct esa_state *st = state;

	return st->mode == ESA_FIFO ? round_fifo(sim, st, err) : round_easy(sim, st, err);
}

#define ESA_NO_CAPACITY "the artifact's simulator has no capacity that comes and goes (Cluster.gpu_nums is fixed)"

const struct hb_arbiter_ops hb_arbiter_esa = {
	.name = "easyscale",
	.summary = "EasyScale as its artifact simulates it (EasyPolicy.optimize_v3)",
	.init = esa_init,
	.free = esa_free,
	.on_arrival = esa_arrival,
	.on_finish = esa_finish,
	.round_s = esa_round_s,
	.on_round = esa_round,
	.no_capacity = ESA_NO_CAPACITY,
};

const struct hb_arbiter_ops hb_arbiter_esa_homo = {
	.name = "easyscale-homo",
	.summary = "EasyScale_homo as its artifact simulates it (EasyPolicy(force_homo=True))",
	.init = esa_homo_init,
	.free = esa_free,
	.on_arrival = esa_arrival,
	.on_finish = esa_finish,
	.round_s = esa_round_s,
	.on_round = esa_round,
	.no_capacity = ESA_NO_CAPACITY,
};

const struct hb_arbiter_ops hb_arbiter_esa_fifo = {
	.name = "yarn-cs",
	.summary = "YARN-CS as the EasyScale artifact simulates it (FifoPolicy: one job at a time)",
	.init = esa_fifo_init,
	.free = esa_free,
	.on_arrival = esa_arrival,
	.on_finish = esa_finish,
	.round_s = esa_round_s,
	.on_round = esa_round,
	.no_capacity = ESA_NO_CAPACITY,
};
