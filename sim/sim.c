/*
 * sim.c: the simulator's event loop, closed-form progress, configuration
 * changes and their costs, and the services agents call (sim.h explains the
 * model of time and progress).
 *
 * Costs charged here, with their sources:
 *  - restart (checkpoint-restart after an allocation change): save and load
 *    of weights + optimizer state at the cluster's storage bandwidth, plus
 *    the cluster's restart latency and the model's start-up time; or a
 *    constant in fidelity mode (Pollux's simulator uses 30 s, pollux.md §4.3).
 *  - in-place reconfiguration (new B_G, B_L or VSWs on the same GPUs):
 *    reconfig_s per change.  JABAS measures this overhead at 3.45 % of
 *    training time on cluster A and 1.26 % on B (notes/jabas.md §7.6) with one
 *    change per adaptation at most; 1 s per change is of that order for the
 *    paper's runs and is reported in the header.
 *  - GNS monitoring of Pollux-family agents: 14.3 % of iteration time, the
 *    figure JABAS measured for ResNet-50 (§7.7); applied to every model by
 *    default because the JABAS port of Pollux monitors GNS every iteration for
 *    every model; --gns-overhead changes it.
 *  - the similarity measurement of SimiGrad and JABAS: one half-group
 *    all-reduce of every bucket plus an all-gather of the model between two
 *    ranks every p iterations (§4.1 [D]), charged by the agents per iteration.
 * The first configuration of a job is free: every policy starts the same way.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "csv.h"
#include "fidelity.h"
#include "interrupt.h"
#include "perf_measured.h"
#include "pool.h"
#include "profdb.h"
#include "progress.h"
#include "sim.h"
#include "strutil.h"

#define DEFAULT_RECONFIG_S 1.0
/* The IIDP solvers' caches (one solver per model of a run) share one
 * budget (struct hb_iidp_budget), at least the floor each: the models of a
 * trace do not use their caches alike, and a limit per model left some
 * short while others held room they never filled.  On the whole
 * philly.csv under JABAS, 12 MiB per model (the limit before) evicted 11.4
 * M entries; the six models sharing 72 MiB ended holding 1.4 (cifar10) to
 * 19 MiB (bert) each.  The shapes' bounds the agents hold are outside the
 * budget (hb_iidp_shape_bound_hold): with them held once per model rather
 * than copied per job, the replay peaked at 285,240 KB (the bound
 * is 300 MB for every policy).  Answers are exact whatever the size. */
#define HB_SIM_IIDP_CACHE_BYTES ((size_t)72 << 20)
#define HB_SIM_IIDP_CACHE_FLOOR ((size_t)4 << 20)
#define DEFAULT_GNS_OVERHEAD 0.143
#define ITER_EPS 1e-6          /* iterations: tolerance when snapping to milestones */

/* ---- configurations ---------------------------------------------------- */

void hb_job_config_init(struct hb_job_config *c, int nnodes)
{
	memset(c, 0, sizeof(*c));
	c->alloc = calloc((size_t)(nnodes > 0 ? nnodes : 1), sizeof(int));
	c->eff_factor = 1.0;
}

void hb_job_config_free(struct hb_job_config *c)
{
	free(c->alloc);
	c->alloc = NULL;
	free(c->gpu_local_bs);
	c->gpu_local_bs = NULL;
}

int hb_job_config_copy(struct hb_job_config *dst, const struct hb_job_config *src, int nnodes)
{
	int *alloc = dst->alloc, *lbs = dst->gpu_local_bs;

	if (!alloc && !(alloc = calloc((size_t)(nnodes > 0 ? nnodes : 1), sizeof(int))))
		return -1;
	dst->alloc = alloc;
	if (src->gpu_local_bs) {
		if (!(lbs = realloc(lbs, sizeof(int) * (size_t)(src->ngpus > 0 ? src->ngpus : 1))))
			return -1; /* dst keeps its own arrays */
		memcpy(lbs, src->gpu_local_bs, sizeof(int) * (size_t)src->ngpus);
	} else {
		free(lbs);
		lbs = NULL;
	}
	*dst = *src;
	dst->alloc = alloc;
	dst->gpu_local_bs = lbs;
	memcpy(dst->alloc, src->alloc, sizeof(int) * (size_t)nnodes);
	return 0;
}

/* ---- options ------------------------------------------------------------ */

void hb_sim_opts_default(struct hb_sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->restart_const_s = -1.0;
	o->reconfig_s = DEFAULT_RECONFIG_S;
	o->gns_overhead = -1.0;
	o->similarity_cost = 1;
	o->max_sim_s = 1e9;
	o->sample_every = 1;
	o->progress = HB_PROGRESS_POLLUX;
}

/* ---- records ------------------------------------------------------------ */

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *na;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 256;
	na = realloc(*arr, ncap * elem);
	if (!na)
		return -1;
	*arr = na;
	*cap = ncap;
	return 0;
}

int hb_sim_event_equal(const struct hb_sim_event_rec *a, const struct hb_sim_event_rec *b)
{
	return memcmp(&a->t, &b->t, sizeof(a->t)) == 0 && a->job == b->job && strcmp(a->kind, b->kind) == 0 &&
	       strcmp(a->detail, b->detail) == 0;
}

/* A copy of text in the note arena; NULL when out of memory. */
static const char *note_text(struct hb_sim *sim, const char *text)
{
	size_t len = strlen(text) + 1;
	struct hb_note_block *b = sim->notes;
	char *dst;

	if (!b || b->size - b->used < len) {
		size_t size = len > (size_t)1 << 20 ? len : (size_t)1 << 20;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->next = sim->notes;
		b->used = 0;
		b->size = size;
		sim->notes = b;
	}
	dst = b->text + b->used;
	memcpy(dst, text, len);
	b->used += len;
	return dst;
}

/* What a note of this kind needs: NOTE_SKIP nothing (streaming without a
 * sink for events, or after the sink failed), NOTE_BARE the record without
 * its text (formatting every epoch's text costs about as much as the event
 * itself), NOTE_TEXT all of it. */
enum { NOTE_SKIP = 0, NOTE_BARE = 1, NOTE_TEXT = 2 };

static int note_need(const struct hb_sim *sim, const char *kind)
{
	if (!sim->streaming)
		return NOTE_TEXT;
	if (!sim->sink || !sim->sink->event || sim->sink_err.code != HB_OK)
		return NOTE_SKIP;
	if (sim->sink->wants_detail && !sim->sink->wants_detail(sim->sink->ctx, kind))
		return NOTE_BARE;
	return NOTE_TEXT;
}

/* Record text, of any length, as an event of the job. */
static void note_store(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *text)
{
	struct hb_sim_event_rec *r;
	const char *stored;

	if (sim->streaming) {
		struct hb_sim_event_rec e;

		if (!sim->sink || !sim->sink->event || sim->sink_err.code != HB_OK)
			return;
		memset(&e, 0, sizeof(e));
		e.t = sim->eng.now;
		e.job = job ? job->id : -1;
		hb_strlcpy(e.kind, kind, sizeof(e.kind));
		e.detail = text;
		if (sim->sink->event(sim->sink->ctx, &e, &sim->sink_err) < 0 && sim->sink_err.code == HB_OK)
			hb_runtime_error(&sim->sink_err, "simulator: the record sink failed");
		return;
	}
	if (!(stored = note_text(sim, text)) ||
	    grow((void **)&sim->events, &sim->cap_events, sim->nevents, sizeof(*sim->events)) < 0)
		return; /* records are best effort under memory exhaustion */
	r = &sim->events[sim->nevents++];
	memset(r, 0, sizeof(*r));
	r->t = sim->eng.now;
	r->job = job ? job->id : -1;
	hb_strlcpy(r->kind, kind, sizeof(r->kind));
	r->detail = stored;
}

void hb_sim_note(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *fmt, ...)
{
	char text[HB_SIM_NOTE_MAX];
	va_list ap;
	int need = note_need(sim, kind);

	if (need == NOTE_SKIP)
		return;
	text[0] = '\0';
	if (need == NOTE_TEXT) {
		va_start(ap, fmt);
		vsnprintf(text, sizeof(text), fmt, ap);
		va_end(ap);
	}
	note_store(sim, job, kind, text);
}

/* hb_sim_note without its length limit. */
static void note_whole(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *fmt, ...)
	HB_PRINTF(4, 5);

static void note_whole(struct hb_sim *sim, const struct hb_sim_job *job, const char *kind, const char *fmt, ...)
{
	char buf[1024], *text;
	va_list ap;
	int n;

	/* formatted once when it fits (it nearly always does), twice when not */
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(buf)) {
		note_store(sim, job, kind, buf);
		return;
	}
	if (!(text = malloc((size_t)n + 1)))
		return; /* records are best effort under memory exhaustion */
	va_start(ap, fmt);
	vsnprintf(text, (size_t)n + 1, fmt, ap);
	va_end(ap);
	note_store(sim, job, kind, text);
	free(text);
}

static void record_sample(struct hb_sim *sim, const struct hb_sim_job *job)
{
	struct hb_sim_sample *s, one;

	if (sim->streaming) {
		if (!sim->sink || !sim->sink->sample || sim->sink_err.code != HB_OK)
			return;
		s = &one;
	} else {
		if (grow((void **)&sim->samples, &sim->cap_samples, sim->nsamples, sizeof(*sim->samples)) < 0)
			return;
		s = &sim->samples[sim->nsamples++];
	}
	memset(s, 0, sizeof(*s)); /* padding too: records are compared bytewise */
	s->t = job->t_last;
	s->job = job->id;
	s->global_bs = job->cfg.global_bs;
	s->local_bs = job->cfg.local_bs;
	s->ngpus = job->cfg.ngpus;
	s->iter_s = job->cfg.iter_s + job->cfg.overhead_per_iter_s;
	s->progress_frac = job->target > 0 ? job->progress / job->target : 0;
	s->phi = job->phi;
	s->similarity = job->last_similarity;
	s->cost_usd = job->cost_usd;
	s->epoch = job->epoch;
	s->iters = job->iters;
	for (int i = 0; job->cfg.ngpus > 0 && job->cfg.alloc && sim->node_slot && i < sim->cl->nnodes; i++)
		if (job->cfg.alloc[i] > 0)
			s->type_gpus[sim->node_slot[i]] += (unsigned short)job->cfg.alloc[i];
	if (s == &one && sim->sink->sample(sim->sink->ctx, s, &sim->sink_err) < 0 && sim->sink_err.code == HB_OK)
		hb_runtime_error(&sim->sink_err, "simulator: the record sink failed");
}

/* ---- setup ---------------------------------------------------------------- */

int hb_cluster_type_slots(const struct hb_cluster *cl, int *node_slot, int *slot_gpu)
{
	int gpu[HB_SIM_TYPE_SLOTS], n = 0;

	for (int i = 0; i < cl->nnodes; i++) {
		int k = 0;

		while (k < n && gpu[k] != cl->nodes[i].gpu)
			k++;
		if (k == n && n < HB_SIM_TYPE_SLOTS)
			gpu[n++] = cl->nodes[i].gpu;
		if (k == HB_SIM_TYPE_SLOTS)
			k = HB_SIM_TYPE_SLOTS - 1; /* types past the last slot share it */
		if (node_slot)
			node_slot[i] = k;
	}
	for (int k = 0; slot_gpu && k < n; k++)
		slot_gpu[k] = gpu[k];
	return n;
}

int hb_sim_init(struct hb_sim *sim, const struct hb_catalog *cat, const struct hb_cluster *cl,
		struct hb_profdb *db, const char *policy, const struct hb_sim_opts *opts, struct hb_error *err)
{
	memset(sim, 0, sizeof(*sim));
	sim->cat = cat;
	sim->cl = cl;
	sim->db = db;
	/* The solvers point at it: the sim is not moved once initialised. */
	sim->iidp_budget.limit = HB_SIM_IIDP_CACHE_BYTES;
	sim->iidp_budget.floor = HB_SIM_IIDP_CACHE_FLOOR;
	sim->policy = policy;
	if (opts)
		sim->opts = *opts;
	else
		hb_sim_opts_default(&sim->opts);
	if (sim->opts.sample_every < 1)
		sim->opts.sample_every = 1;
	if ((sim->opts.progress == HB_PROGRESS_POLLUX_ARTIFACT) != (sim->opts.fidelity == HB_FIDELITY_POLLUX))
		return hb_input_error(err, "progress model '%s' with fidelity '%s': the pollux-artifact progress model "
					   "and the Pollux fidelity mode go together (sim --fidelity pollux)",
				      hb_progress_name(sim->opts.progress), hb_fidelity_name(sim->opts.fidelity));
	hb_engine_init(&sim->eng);
	hb_rng_seed(&sim->rng_similarity, sim->opts.seed, HB_STREAM_SIMILARITY);
	hb_rng_seed(&sim->rng_gns, sim->opts.seed, HB_STREAM_GNS);
	hb_rng_seed(&sim->rng_agent, sim->opts.seed, HB_STREAM_SCHED);
	if (sim->opts.replay &&
	    hb_sim_load_replay(sim->opts.replay, &sim->replay_step, &sim->replay_gbs, &sim->nreplay, err) < 0) {
		hb_engine_free(&sim->eng);
		return -1;
	}
	sim->arbiter = &hb_arbiter_dedicated;
	sim->free_gpus = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1), sizeof(int));
	sim->node_slot = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1), sizeof(int));
	if (sim->node_slot)
		hb_cluster_type_slots(cl, sim->node_slot, NULL);
	if (sim->free_gpus)
		for (int i = 0; i < cl->nnodes; i++)
			sim->free_gpus[i] = cl->nodes[i].ngpus;
	sim->perf = calloc((size_t)cat->nmodels, sizeof(*sim->perf));
	sim->solver = calloc((size_t)cat->nmodels, sizeof(*sim->solver));
	sim->stats = calloc((size_t)cat->nmodels, sizeof(*sim->stats));
	sim->fid = calloc((size_t)cat->nmodels, sizeof(*sim->fid));
	sim->borrowed = calloc((size_t)cat->nmodels, 1);
	if (!sim->perf || !sim->solver || !sim->stats || !sim->fid || !sim->borrowed || !sim->free_gpus || !sim->node_slot) {
		hb_sim_free(sim);
		return hb_runtime_error(err, "simulator: out of memory");
	}
	if (hb_pool_create(&sim->pool, sim->opts.threads, err) < 0) {
		hb_sim_free(sim);
		return -1;
	}
	if (sim->opts.capacity) {
		if (!(sim->capacity = calloc(1, sizeof(*sim->capacity)))) {
			hb_sim_free(sim);
			return hb_runtime_error(err, "simulator: out of memory");
		}
		if (hb_capacity_load(sim->opts.capacity, cat, cl, sim->capacity, err) < 0) {
			hb_sim_free(sim);
			return -1;
		}
	}
	return 0;
}

void hb_sim_free(struct hb_sim *sim)
{
	/* The order sim.h promises: the arbiter's state, the jobs', the agents'. */
	if (sim->arbiter_ready && sim->arbiter && sim->arbiter->free)
		sim->arbiter->free(sim->arbiter_state);
	sim->arbiter_state = NULL;
	sim->arbiter_ready = 0;
	for (int j = 0; j < sim->njobs; j++) {
		struct hb_sim_job *job = &sim->jobs[j];

		if (job->agent && job->agent->free_job)
			job->agent->free_job(hb_sim_agent_state(sim, job), job);
		hb_job_config_free(&job->cfg);
		free(job->grant);
	}
	for (int a = 0; a < sim->nagents; a++)
		if (sim->agents[a].ops->free)
			sim->agents[a].ops->free(sim->agents[a].state);
	free(sim->agents);
	free(sim->free_gpus);
	free(sim->node_slot);
	hb_pool_destroy(sim->pool);
	sim->pool = NULL;
	if (sim->capacity) {
		hb_capacity_free(sim->capacity);
		free(sim->capacity);
	}
	free(sim->jobs);
	for (int m = 0; sim->perf && m < sim->cat->nmodels; m++) {
		if (sim->borrowed && sim->borrowed[m])
			continue;
		hb_iidp_solver_free(sim->solver[m]);
		if (sim->perf[m]) {
			hb_perf_free(sim->perf[m]);
			free(sim->perf[m]);
		}
		if (sim->stats[m]) {
			hb_stats_free(sim->stats[m]);
			free(sim->stats[m]);
		}
		if (sim->fid && sim->fid[m]) {
			hb_fid_model_free(sim->fid[m]);
			free(sim->fid[m]);
		}
	}
	free(sim->fid);
	free(sim->borrowed);
	free(sim->perf);
	free(sim->solver);
	free(sim->stats);
	free(sim->samples);
	free(sim->events);
	while (sim->notes) {
		struct hb_note_block *next = sim->notes->next;

		free(sim->notes);
		sim->notes = next;
	}
	free(sim->replay_step);
	free(sim->replay_gbs);
	free(sim->drive);
	hb_engine_free(&sim->eng);
	memset(sim, 0, sizeof(*sim));
}

/* Models shared by every job of one DNN model: perf, solver, stats. */
static int model_state(struct hb_sim *sim, const struct hb_model *m, int *idx, struct hb_error *err)
{
	int k = (int)(m - sim->cat->models);
	int used;

	if (k < 0 || k >= sim->cat->nmodels)
		return hb_input_error(err, "simulator: model %s is not in the catalog the simulation uses", m->name);
	*idx = k;
	if (sim->perf[k])
		return 0;
	if (sim->models_from && sim->models_from->cat == sim->cat && sim->models_from->perf[k]) {
		const struct hb_sim *src = sim->models_from;

		sim->perf[k] = src->perf[k];
		sim->solver[k] = src->solver[k];
		sim->stats[k] = src->stats[k];
		sim->fid[k] = src->fid[k];
		sim->borrowed[k] = 1;
		return 0;
	}
	sim->perf[k] = calloc(1, sizeof(struct hb_perf));
	sim->stats[k] = calloc(1, sizeof(struct hb_stats));
	if (!sim->perf[k] || !sim->stats[k])
		return hb_runtime_error(err, "simulator: out of memory");
	if (hb_perf_load(sim->db, sim->cat, sim->cl, m, NULL, sim->perf[k], err) < 0) {
		free(sim->perf[k]);
		sim->perf[k] = NULL;
		return -1;
	}
	/* Every configuration an agent gets from the DDP planner or the IIDP
	 * solver stays inside the bounds this model's jobs run with on this
	 * cluster (hb_sim_add_job reads the same hb_model_bounds). */
	hb_model_bounds(m, sim->cl->name, NULL, &sim->perf[k]->min_gbs, &sim->perf[k]->max_gbs);
	if (hb_iidp_solver_new(sim->perf[k], &sim->solver[k], err) < 0)
		return -1;
	hb_iidp_solver_set_budget(sim->solver[k], &sim->iidp_budget);
	if (hb_stats_init(sim->stats[k], m, err) < 0)
		return -1;
	sim->stats[k]->unequal_k = sim->opts.unequal_k;
	/* The similarity progress model needs the threshold the job runs with on
	 * this cluster (its Table 4 override), as the agents read it. */
	sim->stats[k]->progress = sim->opts.progress;
	hb_model_bounds(m, sim->cl->name, &sim->stats[k]->gamma, NULL, NULL);
	if (sim->db && hb_stats_load_gradstats(sim->stats[k], sim->db, &used, err) < 0)
		return -1;
	/* The artifact's statistical epochs: Pollux fidelity needs them;
	 * Sia fidelity uses them where `import sia` stored the model's
	 * validation runs, and keeps hetbatch's progress model elsewhere. */
	if (sim->opts.fidelity == HB_FIDELITY_POLLUX ||
	    (sim->opts.fidelity == HB_FIDELITY_SIA && hb_fid_model_available(sim->db, m))) {
		if (!(sim->fid[k] = calloc(1, sizeof(struct hb_fid_model))))
			return hb_runtime_error(err, "simulator: out of memory");
		long min_gbs, max_gbs;

		if (hb_fid_model_load(sim->fid[k], sim->db, m, err) < 0)
			return -1;
		hb_model_bounds(m, sim->cl->name, NULL, &min_gbs, &max_gbs);
		hb_fid_set_local_range(sim->fid[k], sim->perf[k]->measured, m, sim->perf[k]->min_lbs, max_gbs);
	}
	/* The artifacts' lookup of measured steps (a placement, else their 3-D
	 * interpolation): Pollux's simulator and Sia's, which keeps Pollux's
	 * applications.py once per GPU type. */
	if (sim->opts.fidelity == HB_FIDELITY_POLLUX || sim->opts.fidelity == HB_FIDELITY_SIA)
		for (int g = 0; sim->perf[k]->measured_gpu && g < sim->perf[k]->ngpus; g++)
			if (sim->perf[k]->measured_gpu[g] &&
			    hb_perf_measured_use_artifact(sim->perf[k]->measured_gpu[g], err) < 0)
				return -1;
	return 0;
}

void hb_sim_borrow_models(struct hb_sim *sim, const struct hb_sim *src)
{
	sim->models_from = src;
}

/* The job's grant and configuration arrays (nnodes entries each, zero);
 * -1 when out of memory, with neither allocated. */
static int job_arrays(struct hb_sim *sim, struct hb_sim_job *job)
{
	hb_job_config_init(&job->cfg, sim->cl->nnodes);
	job->grant = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));
	if (!job->cfg.alloc || !job->grant) {
		hb_job_config_free(&job->cfg);
		free(job->grant);
		job->grant = NULL;
		return -1;
	}
	return 0;
}

/* Streaming: a finished job keeps its accounting and its configuration's
 * scalars and layout text; its per-node arrays and agent state go (nothing
 * reads a done job's grant, allocation or agent state after the arbiter's
 * on_finish). */
static void job_compact(struct hb_sim *sim, struct hb_sim_job *job)
{
	int *alloc = job->cfg.alloc;

	if (job->agent && job->agent->free_job)
		job->agent->free_job(hb_sim_agent_state(sim, job), job);
	job->agent_state = NULL;
	free(job->cfg.gpu_local_bs);
	job->cfg.gpu_local_bs = NULL;
	free(alloc);
	job->cfg.alloc = NULL;
	free(job->grant);
	job->grant = NULL;
}

void hb_sim_watch(struct hb_sim *sim, hb_sim_progress_fn *fn, void *ctx)
{
	sim->on_progress = fn;
	sim->progress_ctx = ctx;
}

void hb_sim_stream(struct hb_sim *sim, const struct hb_sim_sink *sink)
{
	sim->streaming = 1;
	sim->sink = sink;
	/* Jobs added before this call have not arrived: their (all-zero)
	 * arrays are made again at arrival. */
	for (int j = 0; j < sim->njobs; j++) {
		struct hb_sim_job *job = &sim->jobs[j];

		if (job->state != HB_JOB_PENDING || job->started)
			continue;
		free(job->cfg.alloc);
		job->cfg.alloc = NULL;
		free(job->grant);
		job->grant = NULL;
	}
}

void *hb_sim_agent_state(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	return job->agent_slot >= 0 && job->agent_slot < sim->nagents ? sim->agents[job->agent_slot].state : NULL;
}

/* The entry of agent in sim->agents (*slot), made with its init on the
 * first job that runs it (sim.h, struct hb_agent_ops: lifecycle). */
static int agent_slot(struct hb_sim *sim, const struct hb_agent_ops *agent, int *slot, struct hb_error *err)
{
	struct hb_sim_agent *na;
	void *st = NULL;

	for (int a = 0; a < sim->nagents; a++)
		if (sim->agents[a].ops == agent) {
			*slot = a;
			return 0;
		}
	if (!(na = realloc(sim->agents, sizeof(*na) * (size_t)(sim->nagents + 1))))
		return hb_runtime_error(err, "simulator: out of memory");
	sim->agents = na;
	if (agent->init && agent->init(sim, sim->policy_opts, &st, err) < 0)
		return -1;
	sim->agents[sim->nagents].ops = agent;
	sim->agents[sim->nagents].state = st;
	*slot = sim->nagents++;
	return 0;
}

int hb_sim_add_job(struct hb_sim *sim, const struct hb_model *m, const struct hb_agent_ops *agent,
		   double arrival_s, int *id, struct hb_error *err)
{
	struct hb_sim_job *nj, *job;
	int k = 0, slot = 0;

	if (!(arrival_s >= 0) || !isfinite(arrival_s))
		return hb_input_error(err, "simulator: job %s: arrival %g s is not a time", m->name, arrival_s);
	if (model_state(sim, m, &k, err) < 0)
		return -1;
	if (agent_slot(sim, agent, &slot, err) < 0)
		return -1;
	/* Doubling: a trace of 82,247 jobs grown one entry at a time spent
	 * about 13 % of its replay in realloc's copies. */
	if (sim->njobs == sim->cap_jobs) {
		int cap = sim->cap_jobs > 0 ? 2 * sim->cap_jobs : 16;

		if (!(nj = realloc(sim->jobs, sizeof(*nj) * (size_t)cap)))
			return hb_runtime_error(err, "simulator: out of memory");
		sim->jobs = nj;
		sim->cap_jobs = cap;
	}
	job = &sim->jobs[sim->njobs];
	memset(job, 0, sizeof(*job));
	job->id = sim->njobs;
	snprintf(job->name, sizeof(job->name), "%.48s-%d", m->name, job->id);
	job->model = m;
	job->agent = agent;
	job->agent_slot = slot;
	job->arrival_s = arrival_s;
	job->d2 = -1;
	job->perf = sim->perf[k];
	job->solver = sim->solver[k];
	job->stats = sim->stats[k];
	job->fid = sim->fid[k];
	job->fid_agents = job->fid && sim->opts.fidelity == HB_FIDELITY_POLLUX;
	job->fid_rate = sim->opts.fidelity == HB_FIDELITY_SIA ? 1.0 / hb_fid_sia_slowdown(m->name) : 1.0;
	hb_model_bounds(m, sim->cl->name, &job->gamma, &job->min_gbs, &job->max_gbs);
	/* Fidelity: progress in M0-equivalent samples of the artifact's M0. */
	job->target = job->fid ? job->fid->m0 * job->fid->bound[job->fid->max_epochs] : job->stats->target;
	if (sim->streaming) {
		/* Arrays at arrival (job_arrays): a long trace's jobs do not all
		 * hold 2 x nnodes integers from the start. */
		job->cfg.eff_factor = 1.0; /* as hb_job_config_init, without the array */
	} else if (job_arrays(sim, job) < 0) {
		return hb_runtime_error(err, "simulator: out of memory");
	}
	sim->njobs++;
	if (id)
		*id = job->id;
	return 0;
}

/* ---- replay ----------------------------------------------------------------- */

int hb_sim_load_replay(const char *path, double **steps, long **gbs, int *n, struct hb_error *err)
{
	static const char *const cols[] = { "step", "global_batch", NULL };
	struct hb_csv c;
	int idx[2], rc, cap = 0;

	*steps = NULL;
	*gbs = NULL;
	*n = 0;
	if (hb_csv_open(&c, path, err) < 0)
		return -1;
	if (hb_csv_header(&c, cols, idx, err) < 0)
		goto fail;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		double st;
		long b;

		if (hb_csv_double_range(&c, idx[0], 0, 1e15, &st, err) < 0 ||
		    hb_csv_long_range(&c, idx[1], 1, 1L << 40, &b, err) < 0)
			goto fail;
		if (*n > 0 && st <= (*steps)[*n - 1]) {
			hb_input_error(err, "%s:%ld: field 'step': value '%s' is not greater than the previous step %.0f",
				       path, c.line, c.field[idx[0]], (*steps)[*n - 1]);
			goto fail;
		}
		if (*n == cap) {
			double *ns;
			long *nb;

			cap = cap ? 2 * cap : 256;
			ns = realloc(*steps, sizeof(double) * (size_t)cap);
			if (ns)
				*steps = ns;
			nb = realloc(*gbs, sizeof(long) * (size_t)cap);
			if (nb)
				*gbs = nb;
			if (!ns || !nb) {
				hb_runtime_error(err, "%s: out of memory", path);
				goto fail;
			}
		}
		(*steps)[*n] = st;
		(*gbs)[*n] = b;
		(*n)++;
	}
	if (rc < 0)
		goto fail;
	if (*n == 0) {
		hb_input_error(err, "%s: no trajectory rows after the header", path);
		goto fail;
	}
	hb_csv_close(&c);
	return 0;
fail:
	hb_csv_close(&c);
	free(*steps);
	free(*gbs);
	*steps = NULL;
	*gbs = NULL;
	*n = 0;
	return -1;
}

int hb_sim_replay_gbs(const struct hb_sim *sim, const struct hb_sim_job *job, long *gbs)
{
	int lo = 0, hi = sim->nreplay - 1;

	if (sim->nreplay == 0)
		return 0;
	/* Last point with step <= iterations run (binary search). */
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (sim->replay_step[mid] <= job->iters + ITER_EPS)
			lo = mid;
		else
			hi = mid - 1;
	}
	*gbs = sim->replay_gbs[lo];
	return 1;
}

/* ---- services -------------------------------------------------------------- */

double hb_sim_now(const struct hb_sim *sim)
{
	return sim->eng.now;
}

double hb_sim_attained_gpu_s(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	double now = hb_sim_now(sim), s = job->gpu_s;

	if ((job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING) && now > job->t_last)
		s += (now - job->t_last) * job->cfg.ngpus;
	return s;
}

double hb_sim_phi(const struct hb_sim *sim, const struct hb_sim_job *job, double batch)
{
	/* a driven job has no statistical model behind it: say so (sim.h) */
	if (sim->drive && !sim->drive->missing)
		sim->drive->missing = "the simulated gradient noise scale (hb_sim_phi), which a live run does not "
				      "give its agent";
	if (job->fid)
		return hb_fid_phi(job->fid, batch, job->epoch);
	return hb_stats_phi(job->stats, job->target > 0 ? job->progress / job->target : 0.0, batch);
}

double hb_sim_observe_similarity(struct hb_sim *sim, struct hb_sim_job *job)
{
	double b = (double)job->cfg.global_bs;
	double phi;

	if (sim->drive) { /* measured (hb_sim_drive_similarity) */
		job->last_similarity = job->drive_similarity;
		return job->last_similarity;
	}
	phi = hb_sim_phi(sim, job, b);
	job->last_similarity = hb_stats_observe_similarity(job->stats, phi, b, &sim->rng_similarity);
	return job->last_similarity;
}

double hb_sim_restart_s(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	double ckpt;

	if (sim->opts.restart_const_s >= 0)
		return sim->opts.restart_const_s;
	if (sim->opts.fidelity == HB_FIDELITY_SIA)
		return hb_fid_sia_rescale_s(job->model->name); /* Application.rescale_time */
	ckpt = hb_model_checkpoint_bytes(job->model);
	/* Save then load the checkpoint through shared storage. */
	return (sim->cl->storage_bw > 0 ? 2.0 * ckpt / sim->cl->storage_bw : 0.0) + sim->cl->restart_latency_s +
	       job->model->init_s;
}

double hb_sim_similarity_cost_s(const struct hb_sim *sim, const struct hb_sim_job *job, const int *alloc)
{
	struct hb_perf_comm c;
	double bw = 0.0, t = 0.0;
	int nodes = 0, ng = 0;

	for (int i = 0; i < sim->cl->nnodes; i++) {
		if (!alloc[i])
			continue;
		ng += alloc[i];
		nodes++;
	}
	if (ng < 2)
		return 0.0;
	/* The allocation counted once, not once per node (hb_perf_comm_eval):
	 * a cluster of hundreds of nodes made each adaptation step scan it
	 * again for every node the job holds.  A refused allocation, as
	 * hb_perf_comm_eval refuses it, adds no time. */
	if (hb_perf_alloc_gpus(job->perf, alloc, &ng, &nodes, NULL) == 0) {
		for (int i = 0; i < sim->cl->nnodes; i++)
			if (alloc[i] && hb_perf_comm_eval_n(job->perf, i, ng, nodes, &c, NULL) == 0 &&
			    c.overlap_s + c.last_s > t)
				t = c.overlap_s + c.last_s;
	}
	for (int i = 0; i < sim->cl->nnodes; i++) {
		double b;

		if (!alloc[i])
			continue;
		b = nodes > 1 ? sim->cl->nodes[i].inter_bw : sim->cl->nodes[i].intra_bw;
		if (b > 0 && (bw == 0.0 || b < bw))
			bw = b;
	}
	/* The half-group all-reduce moves as much as the world one in ring
	 * all-reduce terms; the two representatives then exchange the model. */
	if (bw > 0)
		t += job->model->params * job->model->param_bytes / bw;
	return t;
}

double hb_sim_gns_overhead(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	(void)job;
	return sim->opts.gns_overhead >= 0 ? sim->opts.gns_overhead : DEFAULT_GNS_OVERHEAD;
}

double hb_sim_price_per_hour(const struct hb_sim *sim, const int *alloc)
{
	double usd = 0.0;

	for (int i = 0; i < sim->cl->nnodes; i++)
		usd += alloc[i] * sim->cat->gpus[sim->cl->nodes[i].gpu].price_per_hour;
	return usd;
}

/* ---- progress -------------------------------------------------------------- */

static double per_iter_s(const struct hb_sim_job *job)
{
	return job->cfg.iter_s + job->cfg.overhead_per_iter_s;
}

/* Integrate the job from t_last to t in closed form. */
static void advance(struct hb_sim *sim, struct hb_sim_job *job, double t)
{
	double dt = t - job->t_last;

	if (dt <= 0 || job->state == HB_JOB_PENDING || job->state == HB_JOB_DONE || job->state == HB_JOB_SUSPENDED ||
	    job->state == HB_JOB_DROPPED) {
		if (t > job->t_last)
			job->t_last = t;
		return;
	}
	job->gpu_s += dt * job->cfg.ngpus;
	job->gpus_time_sum += dt * job->cfg.ngpus;
	job->cost_usd += dt * job->price_per_h / 3600.0;
	if (job->state == HB_JOB_RUNNING) {
		double di = dt / per_iter_s(job), b = (double)job->cfg.global_bs, before = fmin(job->progress, job->target);

		job->iters += di;
		job->samples += di * b;
		job->progress += di * b * job->eff;
		sim->progress_done += fmin(job->progress, job->target) - before;
		job->epoch_samples += di * b;
		job->overhead_s += di * job->cfg.overhead_per_iter_s;
		job->gbs_time_sum += dt * b;
		job->run_s += dt;
	} else {
		job->overhead_s += dt;
	}
	job->t_last = t;
}

/* Freeze phi and E(B) for the next stretch. */
static void refresh_rates(struct hb_sim_job *job)
{
	double b = (double)job->cfg.global_bs;

	if (job->fid) { /* the artifact's statistics at this epoch; its gain as a per-sample efficiency */
		job->phi = hb_fid_phi(job->fid, b, job->epoch);
		job->eff = hb_fid_gain(job->fid, b, job->epoch) * job->fid->m0 / b * job->cfg.eff_factor * job->fid_rate;
		return;
	}
	job->phi = hb_stats_phi(job->stats, job->target > 0 ? job->progress / job->target : 0.0, b);
	job->eff = hb_stats_efficiency(job->stats, job->phi, b) * job->cfg.eff_factor * job->fid_rate;
}

static long interval_of(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	return job->agent->interval ? job->agent->interval(sim, hb_sim_agent_state(sim, job), job) : 0;
}

/* Schedule the job's next milestone (or its restart end). */
static int schedule_next(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	double n, x, b = (double)job->cfg.global_bs, D = job->model->dataset_size;

	job->gen++;
	if (sim->drive)
		return 0; /* its caller runs the iterations (hb_sim_drive) */
	if (job->state == HB_JOB_RESTARTING)
		return hb_engine_schedule(&sim->eng, job->restart_until, HB_EV_REALLOC_DONE, job->id, job->gen, err);
	if (job->state != HB_JOB_RUNNING)
		return 0;
	if (!(b > 0) || !(per_iter_s(job) > 0) || !(job->eff > 0))
		return hb_runtime_error(err, "simulator: job %s: configuration has B_G %g, iteration %g s, efficiency %g",
					job->name, b, per_iter_s(job), job->eff);
	if (job->fid) {
		/* Pollux fidelity: the next epoch bound, reached continuously and
		 * rounded to whole seconds as the artifact does (Job.step's
		 * `delta = round(...)`); a job always keeps its epoch event, so
		 * the adaptation points of hetbatch's agents do not apply. */
		double need = job->fid->m0 * job->fid->bound[job->epoch + 1] - job->progress;
		double dt = need > 0 ? nearbyint(need / (b * job->eff) * per_iter_s(job)) : 0.0;

		if (job->duration_s > 0 && job->duration_s - job->run_s < dt)
			dt = fmax(0.0, ceil(job->duration_s - job->run_s));

		return hb_engine_schedule(&sim->eng, job->t_last + dt, HB_EV_MILESTONE, job->id, job->gen, err);
	}
	/* Completion. */
	n = ceil((job->target - job->progress) / (b * job->eff) - ITER_EPS);
	/* End of epoch: the iteration that crosses the dataset size. */
	x = ceil((D - job->epoch_samples) / b - ITER_EPS);
	if (x < n)
		n = x;
	if (job->next_adapt_iter > 0) {
		x = job->next_adapt_iter - job->iters;
		if (x < n)
			n = x;
	}
	/* --duration-from-trace: the first whole iteration at or past the stop */
	if (job->duration_s > 0) {
		x = ceil((job->duration_s - job->run_s) / per_iter_s(job) - ITER_EPS);
		if (x < n)
			n = x;
	}
	if (n < 1)
		n = 1;
	return hb_engine_schedule(&sim->eng, job->t_last + n * per_iter_s(job), HB_EV_MILESTONE, job->id, job->gen,
				  err);
}

/* The event of a configuration: why, B_G, GPUs, the iteration time with the
 * per-iteration overheads and the layout for people, then a suffix from
 * which live/schedule.c rebuilds the configuration exactly:
 *   "; B_L %d, alloc node0=2 node1=2, iteration %.0f, iter_s %.9g"
 * (B_L 0: unequal local batches; alloc: every node with GPUs, cluster node
 * names; iteration: the job's iterations so far; iter_s: without
 * overheads).  Unequal local batches (cfg->gpu_local_bs, OptPerf) add
 * each GPU's batch after the alloc, per alloc node in cluster order, a
 * node's GPUs comma-separated:
 *   "; B_L 0, alloc fast=2 slow=2, lbs fast=83,82 slow=30,30, iteration ..."
 * (between alloc and iteration, so that a reader of the suffix without lbs,
 * which reads B_L first, still refuses B_L 0 with its own message).
 * Configurations with equal local batches have no lbs.  The text is kept
 * whole, even past HB_SIM_NOTE_MAX, so that a long layout never cuts the
 * suffix. */
static void apply_note(struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_job_config *cfg,
		       const char *kind, const char *why)
{
	const struct hb_cluster *cl = sim->cl;
	const int *lbs = cfg->local_bs == 0 ? cfg->gpu_local_bs : NULL;
	size_t cap = 1, cap_lbs = 1, used = 0, used_lbs = 0;
	char *alloc, *per_gpu, iter_s[HB_FMT_G9_MAX];
	int need = note_need(sim, kind), on[64], non = 0;

	if (need != NOTE_TEXT) {
		if (need == NOTE_BARE)
			note_store(sim, job, kind, "");
		return;
	}
	/* The nodes used, in order, walked once: a big cluster's nodes are
	 * mostly idle (384 on philly, one or two used); on[] holds up to 64,
	 * past that every node is visited again. */
	for (int i = 0; i < cl->nnodes; i++) {
		size_t n;

		if (cfg->alloc[i] <= 0)
			continue;
		if (non < 64)
			on[non] = i;
		non++;
		n = strlen(cl->nodes[i].name) + 16;
		cap += n;
		cap_lbs += lbs ? n + (size_t)cfg->alloc[i] * 12 : 0;
	}
	alloc = malloc(cap);
	per_gpu = malloc(cap_lbs);
	if (!alloc || !per_gpu) {
		free(alloc);
		free(per_gpu);
		return; /* records are best effort under memory exhaustion */
	}
	alloc[0] = per_gpu[0] = '\0';
	for (int k = 0, i; k < (non <= 64 ? non : cl->nnodes); k++) {
		i = non <= 64 ? on[k] : k;
		if (cfg->alloc[i] <= 0)
			continue;
		used += (size_t)snprintf(alloc + used, cap - used, "%s%s=%d", used ? " " : "", cl->nodes[i].name,
					 cfg->alloc[i]);
		if (!lbs)
			continue;
		used_lbs += (size_t)snprintf(per_gpu + used_lbs, cap_lbs - used_lbs, "%s %s=", used_lbs ? "" : ", lbs",
					     cl->nodes[i].name);
		for (int k = 0; k < cfg->alloc[i]; k++)
			used_lbs += (size_t)snprintf(per_gpu + used_lbs, cap_lbs - used_lbs, "%s%d", k ? "," : "", *lbs++);
	}
	hb_fmt_g9(iter_s, cfg->iter_s); /* "%.9g", the same bytes */
	note_whole(sim, job, kind,
		   "%s; B_G %ld, %d GPUs, %.4f s/iter: %s; B_L %d, alloc %s%s, iteration %.0f, iter_s %s",
		   why ? why : "", cfg->global_bs, cfg->ngpus, cfg->iter_s + cfg->overhead_per_iter_s, cfg->layout,
		   cfg->local_bs, alloc, per_gpu, job->iters, iter_s);
	free(alloc);
	free(per_gpu);
}

int hb_sim_apply(struct hb_sim *sim, struct hb_sim_job *job, const struct hb_job_config *cfg, int how,
		 const char *why, struct hb_error *err)
{
	return hb_sim_apply_cost(sim, job, cfg, how, -1.0, why, err);
}

/* Sia fidelity: whether the new configuration only moves the job to other
 * GPUs of the same type in the same shape (its GPUs per node, in node
 * order), which Sia's simulator does not count as a change (cluster.py
 * Cluster.optimize_policy calls Job.reallocate, which rescales only when
 * the placement tuple differs).  A job resumed from a suspension always
 * restarts there (Job.migrate from no cluster). */
static int same_shape_move(const struct hb_sim *sim, const struct hb_sim_job *job, const struct hb_job_config *cfg)
{
	const int *a = job->cfg.alloc, *b = cfg->alloc;
	int i = 0, k = 0, N = sim->cl->nnodes, type = -1;

	if (sim->opts.fidelity != HB_FIDELITY_SIA || !job->started || job->resumed || !a || !b)
		return 0;
	/* the used nodes of both, pairwise: the same counts, all of one type */
	for (;; i++, k++) {
		while (i < N && a[i] <= 0)
			i++;
		while (k < N && b[k] <= 0)
			k++;
		if (i == N || k == N)
			return i == N && k == N && type >= 0;
		if (type < 0)
			type = sim->cl->nodes[i].gpu;
		if (a[i] != b[k] || sim->cl->nodes[i].gpu != type || sim->cl->nodes[k].gpu != type)
			return 0;
	}
}

int hb_sim_apply_cost(struct hb_sim *sim, struct hb_sim_job *job, const struct hb_job_config *cfg, int how,
		      double pause_s, const char *why, struct hb_error *err)
{
	double now = sim->eng.now, pause = 0.0;
	const char *kind = "start";
	int move;

	if (cfg->ngpus < 1 || cfg->global_bs < 1 || !(cfg->iter_s > 0) || !(cfg->eff_factor > 0))
		return hb_runtime_error(err, "simulator: job %s: agent %s gave an invalid configuration (%d GPUs, B_G %ld, "
					     "iteration %g s)", job->name, job->agent->name, cfg->ngpus, cfg->global_bs,
					cfg->iter_s);
	advance(sim, job, now);
	move = how != HB_APPLY_INPLACE && same_shape_move(sim, job, cfg);
	if (hb_job_config_copy(&job->cfg, cfg, sim->cl->nnodes) < 0)
		return hb_runtime_error(err, "simulator: out of memory");
	job->price_per_h = hb_sim_price_per_hour(sim, job->cfg.alloc);
	if (how == HB_APPLY_START && job->started)
		how = HB_APPLY_RESTART; /* resumed after preemption or on a new grant */
	job->started = 1;
	if (move) {
		/* the rescale under way, if any, goes on where it was */
		pause = job->restart_until > now ? job->restart_until - now : 0.0;
		kind = "move";
	} else if (how == HB_APPLY_RESTART) {
		pause = hb_sim_restart_s(sim, job);
		job->restarts++;
		kind = "restart";
	} else if (how == HB_APPLY_START &&
		   (sim->opts.fidelity == HB_FIDELITY_POLLUX || sim->opts.fidelity == HB_FIDELITY_SIA)) {
		pause = hb_sim_restart_s(sim, job); /* the artifact's rescale on the first start too */
	} else if (how == HB_APPLY_INPLACE) {
		pause = sim->opts.reconfig_s;
		job->reconfigs++;
		kind = "reconfig";
	}
	if (pause_s >= 0)
		pause = pause_s; /* the policy's own cost model (EasyScale's artifact: 20 s on the first start only) */
	apply_note(sim, job, cfg, kind, why);
	if (sim->drive)
		pause = 0.0; /* the caller measures its own */
	if (pause > 0) {
		job->state = HB_JOB_RESTARTING;
		job->restart_until = now + pause;
	} else {
		job->state = HB_JOB_RUNNING;
	}
	refresh_rates(job);
	record_sample(sim, job);
	return schedule_next(sim, job, err);
}

/* ---- event handlers --------------------------------------------------------- */

static int finish(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	job->state = HB_JOB_DONE;
	job->finish_s = sim->eng.now;
	job->gen++;
	sim->nended++;
	record_sample(sim, job);
	if (job->stopped_at_duration)
		hb_sim_note(sim, job, "done", "stopped at its recorded run time %.9g s (ran %.9g s), progress %.4f: "
			    "%.0f iterations, %ld epochs, B_G %ld, $%.2f", job->duration_s, job->run_s,
			    job->target > 0 ? job->progress / job->target : 0.0, job->iters, job->epoch,
			    job->cfg.global_bs, job->cost_usd);
	else
		hb_sim_note(sim, job, "done", "%.0f iterations, %ld epochs, B_G %ld, $%.2f", job->iters, job->epoch,
			    job->cfg.global_bs, job->cost_usd);
	if (sim->arbiter != &hb_arbiter_dedicated)
		for (int i = 0; i < sim->cl->nnodes; i++)
			sim->free_gpus[i] += job->grant[i];
	if (sim->arbiter->on_finish && sim->arbiter->on_finish(sim, sim->arbiter_state, job, err) < 0)
		return -1;
	if (sim->streaming)
		job_compact(sim, job);
	return 0;
}

/* Pollux fidelity: the job's progress reached the next epoch bound (within
 * the rounding of the event time): snap to it, as the artifact does, end
 * the epoch, finish after max_epochs. */
static int on_fid_epoch(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	uint64_t gen;
	double before = fmin(job->progress, job->target);

	job->progress = job->fid->m0 * job->fid->bound[job->epoch + 1];
	sim->progress_done += fmin(job->progress, job->target) - before;
	job->epoch++;
	if (job->epoch >= job->fid->max_epochs)
		return finish(sim, job, err);
	hb_sim_note(sim, job, "epoch", "epoch %ld done at %.0f iterations, progress %.4f", job->epoch, job->iters,
		    job->progress / job->target);
	gen = job->gen;
	if (job->agent->on_epoch_end && job->agent->on_epoch_end(sim, hb_sim_agent_state(sim, job), job, err) < 0)
		return -1;
	if (job->gen != gen)
		return 0;
	refresh_rates(job);
	return schedule_next(sim, job, err);
}

static int on_milestone(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	double D = job->model->dataset_size, r = floor(job->iters + 0.5);
	uint64_t gen;

	if (fabs(job->iters - r) < ITER_EPS)
		job->iters = r;
	if (job->duration_s > 0 && job->run_s >= job->duration_s * (1.0 - 1e-12) &&
	    !(job->progress >= job->target * (1.0 - 1e-12))) {
		job->stopped_at_duration = 1; /* the trace's run time is up before the target */
		return finish(sim, job, err);
	}
	if (job->fid)
		return on_fid_epoch(sim, job, err);
	if (job->progress >= job->target * (1.0 - 1e-12))
		return finish(sim, job, err);
	gen = job->gen;
	if (job->epoch_samples >= D - ITER_EPS) {
		job->epoch++;
		job->epoch_samples -= D;
		hb_sim_note(sim, job, "epoch", "epoch %ld done at %.0f iterations, progress %.4f", job->epoch, job->iters,
			    job->progress / job->target);
		if (job->agent->on_epoch_end && job->agent->on_epoch_end(sim, hb_sim_agent_state(sim, job), job, err) < 0)
			return -1;
	}
	if (job->next_adapt_iter > 0 && job->iters >= job->next_adapt_iter - ITER_EPS &&
	    job->state == HB_JOB_RUNNING) {
		long p = interval_of(sim, job);

		job->adaptations++;
		job->next_adapt_iter += (double)(p > 0 ? p : 1);
		if (job->agent->on_adapt && job->agent->on_adapt(sim, hb_sim_agent_state(sim, job), job, err) < 0)
			return -1;
		if (job->adaptations % sim->opts.sample_every == 0 && job->gen == gen)
			record_sample(sim, job);
	} else if (job->next_adapt_iter > 0 && job->iters >= job->next_adapt_iter - ITER_EPS) {
		/* Adaptation point reached while a restart was pending: skip it. */
		job->next_adapt_iter += (double)interval_of(sim, job);
	}
	if (job->gen != gen)
		return 0; /* the agent applied a new configuration and rescheduled */
	refresh_rates(job);
	return schedule_next(sim, job, err);
}

/* ---- driven runs (sim.h hb_sim_drive) ------------------------------------------ */

int hb_sim_drive(struct hb_sim *sim, struct hb_error *err)
{
	if (sim->njobs > 0)
		return hb_runtime_error(err, "simulator: a run is driven from before its first job");
	if (!sim->drive && !(sim->drive = calloc(1, sizeof(*sim->drive))))
		return hb_runtime_error(err, "simulator: out of memory");
	return 0;
}

const char *hb_sim_drive_missing(const struct hb_sim *sim)
{
	return sim->drive ? sim->drive->missing : NULL;
}

void hb_sim_drive_similarity(struct hb_sim_job *job, double similarity)
{
	job->drive_similarity = similarity;
}

int hb_sim_drive_start(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	long p;

	if (!sim->drive || job->state != HB_JOB_PENDING)
		return hb_runtime_error(err, "simulator: job %s is not a pending job of a driven run", job->name);
	if (!job->grant && job_arrays(sim, job) < 0)
		return hb_runtime_error(err, "simulator: out of memory");
	/* on_arrival's counter and dedicated_arrival's grant */
	p = interval_of(sim, job);
	job->next_adapt_iter = p > 0 ? (double)p : 0.0;
	job->ngrant = 0;
	for (int i = 0; i < sim->cl->nnodes; i++) {
		job->grant[i] = sim->cl->nodes[i].ngpus;
		job->ngrant += job->grant[i];
	}
	job->t_last = job->start_s = sim->eng.now;
	return 0;
}

long hb_sim_drive_next(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	double b = (double)job->cfg.global_bs, n;

	(void)sim;
	if (!(b > 0))
		return 1;
	/* schedule_next's epoch end and adaptation point, without completion */
	n = ceil((job->model->dataset_size - job->epoch_samples) / b - ITER_EPS);
	if (job->next_adapt_iter > 0 && job->next_adapt_iter - job->iters < n)
		n = job->next_adapt_iter - job->iters;
	return n < 1 ? 1 : (long)floor(n + 0.5);
}

int hb_sim_drive_iters(struct hb_sim *sim, struct hb_sim_job *job, long n, double elapsed_s, int *reached,
		       struct hb_error *err)
{
	double b = (double)job->cfg.global_bs, before = fmin(job->progress, job->target);
	long most = hb_sim_drive_next(sim, job);

	*reached = 0;
	if (!sim->drive || job->state != HB_JOB_RUNNING)
		return hb_runtime_error(err, "simulator: job %s is not a running job of a driven run", job->name);
	if (n < 1 || n > most || !(elapsed_s >= 0))
		return hb_runtime_error(err, "simulator: job %s: a driven stretch of %ld iterations in %g s (1 to %ld, "
					"time >= 0)", job->name, n, elapsed_s, most);
	/* advance()'s integration, with the measured iterations and time */
	sim->eng.now += elapsed_s;
	job->gpu_s += elapsed_s * job->cfg.ngpus;
	job->gpus_time_sum += elapsed_s * job->cfg.ngpus;
	job->cost_usd += elapsed_s * job->price_per_h / 3600.0;
	job->iters += (double)n;
	job->samples += (double)n * b;
	job->progress += (double)n * b * job->eff;
	sim->progress_done += fmin(job->progress, job->target) - before;
	job->epoch_samples += (double)n * b;
	job->gbs_time_sum += elapsed_s * b;
	job->run_s += elapsed_s;
	job->t_last = sim->eng.now;
	/* on_milestone's counting: the epoch first, then the point */
	if (job->epoch_samples >= job->model->dataset_size - ITER_EPS) {
		job->epoch++;
		job->epoch_samples -= job->model->dataset_size;
		hb_sim_note(sim, job, "epoch", "epoch %ld done at %.0f iterations, progress %.4f", job->epoch, job->iters,
			    job->target > 0 ? job->progress / job->target : 0.0);
		*reached |= HB_DRIVE_EPOCH;
	}
	if (job->next_adapt_iter > 0 && job->iters >= job->next_adapt_iter - ITER_EPS) {
		long p = interval_of(sim, job);

		job->adaptations++;
		job->next_adapt_iter += (double)(p > 0 ? p : 1);
		*reached |= HB_DRIVE_ADAPT;
	}
	job->drive_similarity = NAN;
	refresh_rates(job);
	return 0;
}

/* ---- arbitration ------------------------------------------------------------- */

void hb_sim_set_arbiter(struct hb_sim *sim, const struct hb_arbiter_ops *arb)
{
	if (sim->arbiter_ready && sim->arbiter->free)
		sim->arbiter->free(sim->arbiter_state);
	sim->arbiter_state = NULL;
	sim->arbiter_ready = 0;
	sim->arbiter = arb ? arb : &hb_arbiter_dedicated;
}

int hb_sim_arbiter_init(struct hb_sim *sim, struct hb_error *err)
{
	void *st = NULL;

	if (sim->arbiter_ready)
		return 0;
	if (!sim->arbiter->on_arrival)
		return hb_input_error(err, "simulator: arbiter %s has no on_arrival callback, which every arbiter "
				      "needs (include/hetbatch/policy.h)", sim->arbiter->name ? sim->arbiter->name : "(unnamed)");
	if (sim->arbiter->init && sim->arbiter->init(sim, sim->policy_opts, &st, err) < 0)
		return -1;
	sim->arbiter_state = st;
	sim->arbiter_ready = 1;
	return 0;
}

void hb_sim_job_request(struct hb_sim_job *job, int gpus, long batch)
{
	job->req_gpus = gpus > 0 ? gpus : 0;
	job->req_batch = batch > 0 ? batch : 0;
}

void hb_sim_job_prefs(struct hb_sim_job *job, const char *gpu, int d2)
{
	hb_strlcpy(job->pref_gpu, gpu ? gpu : "", sizeof(job->pref_gpu));
	job->d2 = d2 < 0 ? -1 : d2 > 0;
}

int hb_sim_job_epochs(struct hb_sim_job *job, double epochs, struct hb_error *err)
{
	if (!(epochs > 0) || !isfinite(epochs))
		return hb_input_error(err, "simulator: job %s: epochs %g is not a positive number", job->name, epochs);
	if (job->fid)
		return hb_input_error(err, "simulator: job %s: per-job epochs do not apply in Pollux fidelity mode "
					   "(its epochs are the artifact's)", job->name);
	job->target = epochs * job->model->dataset_size;
	return 0;
}

/* GPUs a job asks for: its request, or the largest node.  A service of
 * every arbiter (declared beside struct hb_arbiter_ops in sim.h). */
int hb_arbiter_job_gpus(const struct hb_sim *sim, const struct hb_sim_job *job)
{
	int most = 0;

	if (job->req_gpus > 0)
		return job->req_gpus;
	for (int i = 0; i < sim->cl->nnodes; i++)
		if (sim->cl->nodes[i].ngpus > most)
			most = sim->cl->nodes[i].ngpus;
	return most;
}

int hb_sim_place(const struct hb_sim *sim, int n, int *grant)
{
	int left = n, total = 0;
	int *taken = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));

	if (!taken)
		return 0;
	for (int i = 0; i < sim->cl->nnodes; i++)
		total += sim->free_gpus[i];
	if (n < 1 || total < n) {
		free(taken);
		return 0;
	}
	memset(grant, 0, sizeof(int) * (size_t)sim->cl->nnodes);
	/* Fewest nodes: repeatedly take the node with the most free GPUs. */
	while (left > 0) {
		int best = -1;

		for (int i = 0; i < sim->cl->nnodes; i++)
			if (!taken[i] && sim->free_gpus[i] > 0 && (best < 0 || sim->free_gpus[i] > sim->free_gpus[best]))
				best = i;
		taken[best] = 1;
		grant[best] = sim->free_gpus[best] < left ? sim->free_gpus[best] : left;
		left -= grant[best];
	}
	free(taken);
	return 1;
}

int hb_sim_start_job(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err)
{
	int dedicated = sim->arbiter == &hb_arbiter_dedicated;
	double rs;

	if (job->state != HB_JOB_PENDING)
		return hb_runtime_error(err, "simulator: job %s started twice", job->name);
	job->ngrant = 0;
	for (int i = 0; i < sim->cl->nnodes; i++) {
		if (grant[i] < 0 || (!dedicated && grant[i] > sim->free_gpus[i]))
			return hb_runtime_error(err, "simulator: arbiter %s granted job %s %d GPUs of node %s, %d free",
						sim->arbiter->name, job->name, grant[i], sim->cl->nodes[i].name,
						sim->free_gpus[i]);
		job->grant[i] = grant[i];
		job->ngrant += grant[i];
	}
	if (job->ngrant == 0)
		return hb_runtime_error(err, "simulator: arbiter %s granted job %s no GPU", sim->arbiter->name, job->name);
	if (!dedicated)
		for (int i = 0; i < sim->cl->nnodes; i++)
			sim->free_gpus[i] -= grant[i];
	job->t_last = sim->eng.now;
	job->start_s = sim->eng.now;
	if (job->agent->start(sim, hb_sim_agent_state(sim, job), job, err) < 0) {
		hb_error_prefix(err, "policy %s, model %s on %s", sim->policy ? sim->policy : job->agent->name,
				job->model->name, sim->cl->name);
		return -1;
	}
	if (job->state == HB_JOB_PENDING)
		return hb_runtime_error(err, "simulator: agent %s did not start job %s", job->agent->name, job->name);
	rs = job->agent->round_s ? job->agent->round_s(sim, hb_sim_agent_state(sim, job), job) : 0.0;
	if (rs > 0)
		return hb_engine_schedule(&sim->eng, sim->eng.now + rs, HB_EV_ROUND, job->id, 0, err);
	return 0;
}

int hb_sim_drop_job(struct hb_sim *sim, struct hb_sim_job *job, const char *why, struct hb_error *err)
{
	if (job->state != HB_JOB_PENDING || job->started || job->arrival_s > sim->eng.now)
		return hb_runtime_error(err, "simulator: arbiter %s dropped job %s, which is not waiting", sim->arbiter->name,
					job->name);
	job->state = HB_JOB_DROPPED;
	job->gen++;
	job->t_last = sim->eng.now;
	sim->nended++;
	hb_sim_note(sim, job, "drop", "%s", why ? why : "dropped");
	return 0;
}

static int regrant_tail(struct hb_sim *sim, struct hb_sim_job *job, int n, struct hb_error *err);

int hb_sim_regrant(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err)
{
	int n = 0, dedicated = sim->arbiter == &hb_arbiter_dedicated;

	if (job->state == HB_JOB_PENDING || job->state == HB_JOB_DONE || job->state == HB_JOB_DROPPED)
		return hb_runtime_error(err, "simulator: regrant of job %s, which is %s", job->name,
					job->state == HB_JOB_PENDING ? "not started"
					: job->state == HB_JOB_DONE  ? "done"
								     : "dropped");
	advance(sim, job, sim->eng.now);
	for (int i = 0; i < sim->cl->nnodes; i++) {
		int avail = sim->free_gpus[i] + job->grant[i];

		if (grant[i] < 0 || (!dedicated && grant[i] > avail))
			return hb_runtime_error(err, "simulator: arbiter %s gave job %s %d GPUs of node %s, %d available",
						sim->arbiter->name, job->name, grant[i], sim->cl->nodes[i].name, avail);
		n += grant[i];
	}
	for (int i = 0; i < sim->cl->nnodes; i++) {
		if (!dedicated)
			sim->free_gpus[i] += job->grant[i] - grant[i];
		job->grant[i] = grant[i];
	}
	job->ngrant = n;
	return regrant_tail(sim, job, n, err);
}

/* hb_sim_regrant once job->grant holds the new grant of n GPUs. */
static int regrant_tail(struct hb_sim *sim, struct hb_sim_job *job, int n, struct hb_error *err)
{
	job->gen++; /* cancels the pending milestone or restart end */
	if (n == 0) {
		job->state = HB_JOB_SUSPENDED;
		job->preemptions++;
		hb_sim_note(sim, job, "preempt", "suspended at %.0f iterations, progress %.4f", job->iters,
			    job->progress / job->target);
		return 0;
	}
	job->resumed = job->state == HB_JOB_SUSPENDED;
	if (job->state != HB_JOB_RESTARTING)
		job->restart_until = sim->eng.now; /* none left to carry over (same_shape_move) */
	job->state = HB_JOB_PENDING; /* apply() below sets RUNNING or RESTARTING */
	if (job->agent->on_grant)
		return job->agent->on_grant(sim, hb_sim_agent_state(sim, job), job, err);
	if (job->agent->free_job)
		job->agent->free_job(hb_sim_agent_state(sim, job), job);
	job->agent_state = NULL;
	if (job->agent->start(sim, hb_sim_agent_state(sim, job), job, err) < 0) {
		hb_error_prefix(err, "policy %s, model %s on %s, new grant of %d GPUs",
				sim->policy ? sim->policy : job->agent->name, job->model->name, sim->cl->name, n);
		return -1;
	}
	return 0;
}

int hb_sim_regrant_all(struct hb_sim *sim, struct hb_sim_job **jobs, const int *grants, int n, struct hb_error *err)
{
	const int N = sim->cl->nnodes;
	int *need = calloc((size_t)(N > 0 ? N : 1), sizeof(int)), *ng = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

	if (!need || !ng) {
		free(need);
		free(ng);
		return hb_runtime_error(err, "simulator: out of memory");
	}
	for (int j = 0; j < n; j++) {
		const struct hb_sim_job *job = jobs[j];

		ng[j] = 0;
		if (job->ngrant == 0 || !(job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING)) {
			free(need);
			free(ng);
			return hb_input_error(err, "simulator: job %s holds no GPUs to trade", job->name);
		}
		for (int i = 0; i < N; i++) {
			need[i] += grants[(size_t)j * N + i] - job->grant[i];
			ng[j] += grants[(size_t)j * N + i];
		}
		if (ng[j] == 0) {
			free(need);
			free(ng);
			return hb_input_error(err, "simulator: job %s traded for no GPUs", job->name);
		}
	}
	for (int i = 0; i < N; i++)
		if (need[i] > sim->free_gpus[i]) {
			free(need);
			free(ng);
			return 1;
		}
	for (int j = 0; j < n; j++) {
		advance(sim, jobs[j], sim->eng.now);
		for (int i = 0; i < N; i++) {
			sim->free_gpus[i] += jobs[j]->grant[i] - grants[(size_t)j * N + i];
			jobs[j]->grant[i] = grants[(size_t)j * N + i];
		}
		jobs[j]->ngrant = ng[j];
	}
	free(need);
	for (int j = 0; j < n; j++)
		if (regrant_tail(sim, jobs[j], ng[j], err) < 0) {
			free(ng);
			return -1;
		}
	free(ng);
	return 0;
}

void hb_sim_offer(const struct hb_sim *sim, const struct hb_sim_job *job, int *offer, int *max_gpus)
{
	if (sim->arbiter->offer) {
		sim->arbiter->offer(sim, sim->arbiter_state, job, offer, max_gpus);
		return;
	}
	for (int i = 0; i < sim->cl->nnodes; i++)
		offer[i] = sim->arbiter == &hb_arbiter_dedicated ? sim->cl->nodes[i].ngpus : job->grant[i];
	*max_gpus = sim->arbiter == &hb_arbiter_dedicated ? sim->cl->ngpus : job->ngrant;
}

int hb_sim_resize_grant(struct hb_sim *sim, struct hb_sim_job *job, const int *grant, struct hb_error *err)
{
	int n = 0, back = 0, old = job->ngrant;

	if (sim->arbiter == &hb_arbiter_dedicated)
		return 0;
	if (job->ngrant == 0 || job->state == HB_JOB_DONE || job->state == HB_JOB_DROPPED ||
	    job->state == HB_JOB_SUSPENDED)
		return hb_runtime_error(err, "simulator: job %s resized a grant it does not hold", job->name);
	for (int i = 0; i < sim->cl->nnodes; i++) {
		int avail = sim->free_gpus[i] + job->grant[i];

		if (grant[i] < 0 || grant[i] > avail)
			return hb_runtime_error(err, "simulator: job %s asked for %d GPUs of node %s, %d available",
						job->name, grant[i], sim->cl->nodes[i].name, avail);
		n += grant[i];
	}
	/* An empty grant is a suspension, which only the arbiter decides. */
	if (n == 0)
		return hb_runtime_error(err, "simulator: job %s resized its grant to no GPU", job->name);
	for (int i = 0; i < sim->cl->nnodes; i++) {
		if (grant[i] < job->grant[i])
			back += job->grant[i] - grant[i];
		sim->free_gpus[i] += job->grant[i] - grant[i];
		job->grant[i] = grant[i];
	}
	job->ngrant = n;
	sim->released += back;
	if (n != old || back > 0)
		hb_sim_note(sim, job, "resize", "grant %d -> %d GPUs (%d handed back)", old, n, back);
	return 0;
}

/* dedicated: the whole cluster for every job, outside the shared pool (each
 * job runs as if alone, which is also the reference of finish-time fairness). */
static int dedicated_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int *all = malloc(sizeof(int) * (size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1));
	int rc;

	(void)state;
	if (!all)
		return hb_runtime_error(err, "simulator: out of memory");
	for (int i = 0; i < sim->cl->nnodes; i++)
		all[i] = sim->cl->nodes[i].ngpus;
	rc = hb_sim_start_job(sim, job, all, err);
	free(all);
	return rc;
}

int hb_sim_node_online(const struct hb_sim *sim, int node)
{
	return sim->cl->nodes[node].ngpus - (sim->capacity ? sim->capacity->offline[node] : 0);
}

int hb_sim_online_gpus(const struct hb_sim *sim)
{
	int n = sim->cl->ngpus;

	for (int i = 0; sim->capacity && i < sim->cl->nnodes; i++)
		n -= sim->capacity->offline[i];
	return n;
}

int hb_arbiter_requeue_round(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)sim;
	(void)state;
	(void)job;
	(void)err;
	return 0; /* the arbiter's next round sees the job suspended and decides */
}

const struct hb_arbiter_ops hb_arbiter_dedicated = {
	.name = "dedicated",
	.summary = "every job alone on the whole cluster",
	.on_arrival = dedicated_arrival,
};

static int on_arrival(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	long p = interval_of(sim, job);

	job->t_last = sim->eng.now;
	job->next_adapt_iter = p > 0 ? (double)p : 0.0;
	if (!job->grant && job_arrays(sim, job) < 0)
		return hb_runtime_error(err, "simulator: job %s: out of memory at its arrival", job->name);
	/* 0 in a request means "not asked" (single-job studies ask for nothing:
	 * the dedicated arbiter grants the cluster and the policy picks the
	 * batch), which the note says rather than "0 GPUs, B_G 0". */
	if (job->req_gpus > 0 && job->req_batch > 0)
		hb_sim_note(sim, job, "arrival", "asks for %d GPUs, B_G %ld", job->req_gpus, job->req_batch);
	else if (job->req_gpus > 0)
		hb_sim_note(sim, job, "arrival", "asks for %d GPUs; B_G by the policy in %ld..%ld", job->req_gpus,
			    job->min_gbs, job->max_gbs);
	else
		hb_sim_note(sim, job, "arrival", "GPUs by the %s arbiter, B_G by the policy in %ld..%ld",
			    sim->arbiter->name, job->min_gbs, job->max_gbs);
	return sim->arbiter->on_arrival(sim, sim->arbiter_state, job, err);
}

static int on_round(struct hb_sim *sim, struct hb_sim_job *job, struct hb_error *err)
{
	double rs;

	if (job->state == HB_JOB_DONE || job->state == HB_JOB_DROPPED)
		return 0;
	advance(sim, job, sim->eng.now);
	/* A suspended or not yet started job has nothing to re-tune. */
	if ((job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING) && job->agent->on_round &&
	    job->agent->on_round(sim, hb_sim_agent_state(sim, job), job, err) < 0)
		return -1;
	rs = job->agent->round_s(sim, hb_sim_agent_state(sim, job), job);
	return rs > 0 ? hb_engine_schedule(&sim->eng, sim->eng.now + rs, HB_EV_ROUND, job->id, 0, err) : 0;
}

int hb_sim_run(struct hb_sim *sim, struct hb_error *err)
{
	struct hb_event ev;
	struct hb_progress bar;
	double t0 = hb_now(), total = 0.0;

	/* Every job is added: the arbiter may size its state by them. */
	if (hb_sim_arbiter_init(sim, err) < 0)
		return -1;
	for (int j = 0; j < sim->njobs; j++) {
		double at = sim->jobs[j].arrival_s;

		/* Pollux, EasyScale and Sia fidelity: a job submitted at a round's
		 * time takes part in that round (the artifacts step to t, then
		 * schedule every job with submission_time <= t); arrivals
		 * otherwise pop after rounds. */
		if (hb_fidelity_round_arrivals(sim->opts.fidelity) && at > 0)
			at = nextafter(at, 0.0);
		if (hb_engine_schedule(&sim->eng, at, HB_EV_ARRIVAL, j, 0, err) < 0)
			return -1;
		total += sim->jobs[j].target;
	}
	if (hb_capacity_schedule(sim, err) < 0)
		return -1;
	if (sim->arbiter->round_s && sim->arbiter->on_round && sim->arbiter->round_s(sim, sim->arbiter_state) > 0 &&
	    hb_engine_schedule(&sim->eng, sim->arbiter->round_s(sim, sim->arbiter_state), HB_EV_ROUND, -1, 0, err) < 0)
		return -1;
	hb_progress_start_mode(&bar, sim->policy ? sim->policy : "sim", 1.0,
			       sim->opts.quiet ? HB_STATUS_NEVER : (enum hb_status_mode)sim->opts.status,
			       sim->opts.status_period_s > 0 ? sim->opts.status_period_s : HB_STATUS_PERIOD_S);
	while (sim->nended < sim->njobs && hb_engine_pop(&sim->eng, &ev)) {
		struct hb_sim_job *job = ev.job >= 0 ? &sim->jobs[ev.job] : NULL;
		int rc = 0;

		if (hb_interrupted()) {
			/* between events: the run is consistent, only unfinished */
			hb_progress_finish(&bar);
			return hb_interrupt_error(err, sim->policy ? sim->policy : "simulation");
		}
		if (ev.t > sim->opts.max_sim_s) {
			hb_progress_finish(&bar);
			return hb_runtime_error(err, "simulator: %s did not finish within %g simulated seconds",
						job ? job->name : "the run", sim->opts.max_sim_s);
		}
		if (!job) {
			if (ev.kind == HB_EV_FAILURE && sim->capacity &&
			    hb_capacity_apply(sim, (int)ev.gen, err) < 0) {
				hb_progress_finish(&bar);
				return -1;
			}
			if (ev.kind == HB_EV_ROUND && sim->arbiter->on_round) {
				double rs = sim->arbiter->round_s(sim, sim->arbiter_state), w0 = hb_now();

				if (sim->arbiter->on_round(sim, sim->arbiter_state, err) < 0) {
					hb_progress_finish(&bar);
					return -1;
				}
				sim->sched_wall_s += hb_now() - w0;
				sim->sched_rounds++;
				if (rs > 0 && sim->nended < sim->njobs &&
				    hb_engine_schedule(&sim->eng, ev.t + rs, HB_EV_ROUND, -1, 0, err) < 0) {
					hb_progress_finish(&bar);
					return -1;
				}
			}
			continue;
		}
		sim->released = 0;
		switch (ev.kind) {
		case HB_EV_ARRIVAL:
			rc = on_arrival(sim, job, err);
			break;
		case HB_EV_REALLOC_DONE:
			if (ev.gen != job->gen)
				break;
			advance(sim, job, ev.t);
			job->state = HB_JOB_RUNNING;
			refresh_rates(job);
			rc = schedule_next(sim, job, err);
			break;
		case HB_EV_MILESTONE:
			if (ev.gen != job->gen || job->state != HB_JOB_RUNNING)
				break;
			advance(sim, job, ev.t);
			rc = on_milestone(sim, job, err);
			break;
		case HB_EV_ROUND:
			rc = on_round(sim, job, err);
			break;
		default:
			break;
		}
		/* GPUs the job's agent handed back (hb_sim_resize_grant) reach the
		 * arbiter once the agent is done with its event; on an arrival the
		 * arbiter itself started the job and sees the pool already. */
		if (rc == 0 && (ev.kind == HB_EV_MILESTONE || ev.kind == HB_EV_ROUND) && sim->released > 0) {
			sim->released = 0;
			if (sim->arbiter->on_release)
				rc = sim->arbiter->on_release(sim, sim->arbiter_state, job, err);
		}
		/* Jobs a withdrawal preempted wait for GPUs the event may have freed. */
		if (rc == 0 && sim->capacity && sim->capacity->nparked > 0)
			rc = hb_capacity_resume(sim, err);
		if (rc == 0 && sim->sink_err.code != HB_OK) {
			*err = sim->sink_err; /* results could not be written: the run stops */
			rc = -1;
		}
		if (rc < 0) {
			hb_progress_finish(&bar);
			return -1;
		}
		/* Redraw now and then, and only where a bar is drawn: the running
		 * total (progress_done) keeps it O(1); summing over the jobs made
		 * a trace replay quadratic. */
		if (total > 0 && (bar.out || sim->on_progress) && (sim->eng.popped & 1023) == 0) {
			if (bar.out)
				hb_progress_update(&bar, sim->progress_done / total);
			if (sim->on_progress)
				sim->on_progress(sim->progress_ctx, sim->progress_done / total);
		}
	}
	hb_progress_finish(&bar);
	sim->wall_s = hb_now() - t0;
	if (sim->nended < sim->njobs)
		return hb_runtime_error(err, "simulator: event queue ran dry with %d of %d jobs unfinished",
					sim->njobs - sim->nended, sim->njobs);
	return 0;
}
