/*
 * arbiter_gavel.c: Gavel (Narayanan et al., OSDI'20): a policy computes
 * the time fraction X[m][j] each job should spend on each GPU type, and a
 * round-based mechanism realises it (§3.1, §3.2, §5;
 * stanford-futuredata/gavel scheduler/scheduler.py).  Jobs are rigid:
 * their requested GPU count (the scale factor) and batch, the static agent.
 *
 * Policies (struct gavel_kind): max-min fairness, heterogeneity-aware
 * (max_min_fairness.py:MaxMinFairnessPolicyWithPerf, `gavel`); max-sum
 * throughput (max_sum_throughput.py, the Gavel baseline of Sia's study,
 * `gavel-tput`); FIFO (fifo.py, fifo_perf: in arrival order, each job on
 * the fastest type that still has room for it, X = 1 there, stopping at
 * the first that fits nowhere, `gavel-fifo`); finish-time fairness
 * (finish_time_fairness.py:FinishTimeFairnessPolicyWithPerf, Themis' rho
 * made heterogeneity-aware, `gavel-ftf`).  The LPs are solver/gavel_lp.h
 * on GLPK.
 *
 * Finish-time fairness's inputs, as scheduler.py:_get_allocation_state
 * feeds them at each recomputation: the time since arrival; the work left,
 * the oracle's (Gavel's simulator knows each job's total steps): the
 * iterations still needed at the job's batch (hb_arbiter_oracle_iters, or
 * the Pollux fidelity's hb_arbiter_fid_iters) times the batch, in samples
 * as T is, or in steps with --fidelity sia where T is steps/s; a job the
 * trace stops after a run time (--duration-from-trace) counts its run
 * seconds left at rate 1 on every type it can use, since its type does not
 * change when it ends.  The cumulative isolated time grows at each
 * recomputation by the work done since the previous one over the isolated
 * throughput of that one, as the artifact's policy object keeps it.  When
 * the solver fails, the artifact falls back to the isolated share; so
 * does this.
 *
 * A job asking for more GPUs than the largest type has runs on all of
 * that type (an event says so).
 *
 * Throughput T[m][j]: samples per second of the job at its batch on its
 * scale factor of GPUs of type j placed on the fewest nodes, from the
 * simulator's performance model (hb_agent_ddp_config, the static agent's
 * layout), i.e. the oracle throughputs Gavel's simulator reads; 0 when the
 * job's batch fits no layout there or the type has too few GPUs.
 *
 * Mechanism, as Sia's artifact re-implements Gavel (sia-simulator/gavel.py;
 * notes: Gavel 9.3), which hetbatch's trace replay resembles:
 *  - X is recomputed at a round whenever jobs arrived or finished since the
 *    last one (the original rate-limits resets to one per 1920 s; Sia's
 *    copy recomputes every round; a new job therefore never idles a round
 *    for lack of an allocation, note G4's fix);
 *  - counters: on arrival job_time[m][j] = round/2 for every type and
 *    worker_time[j] += round/2; each scheduled round adds the full round to
 *    job_time of its type and to worker_time (G11, no resets);
 *  - priority[m][j] = X / (job_time / worker_time): the fraction wanted over
 *    the fraction received; X 1e9 when nothing was received yet; 0 when X
 *    or T is 0;
 *  - one global queue of (job, type) entries by priority, then X, then job
 *    and type index (G2, Sia's copy); walked greedily, an entry skipped
 *    when its job is scheduled, its type has too few free GPUs, or (FIFO)
 *    its priority is 0; zero-priority entries of the LP policies still fill
 *    leftover GPUs (G3);
 *  - placement per type, largest scale factor first: a job on the same
 *    type with the same GPUs keeps them (lease extension); others take the
 *    nodes with the most free GPUs first (fewest nodes);
 *  - a job that is descheduled is suspended; moving or resuming it costs the
 *    simulator's restart, as Sia's simulator charges (G5).
 * Arrivals and completions wait for the round boundary.
 *
 * State: one struct gavel_state, made on the first callback
 * (gavel_state_new) and freed by gavel_free; options in struct
 * hb_gavel_opts (gavel_policy.h), defaults in hb_gavel_opts_default.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"     /* hb_agent_ddp_config */
#include "fidelity.h"       /* HB_FIDELITY_SIA, hb_fid_sia_slowdown */
#include "arbiter_util.h"   /* hb_type_groups, hb_arbiter_apply_grants */
#include "gavel_lp.h"       /* the LPs */
#include "gavel_policy.h"
#include "policy.h"
#include "sim.h"

enum gavel_kind { GAVEL_MAXMIN = 0, GAVEL_TPUT = 1, GAVEL_FIFO = 2, GAVEL_FTF = 3 };

static const char *const kind_name[] = { "gavel", "gavel-tput", "gavel-fifo", "gavel-ftf" };

void hb_gavel_opts_default(struct hb_gavel_opts *o)
{
	o->round_s = 360.0;
	o->time_limit_s = 10.0;
}

struct gavel_state {
	struct hb_gavel_opts opts;
	int kind;                /* enum gavel_kind */
	struct hb_type_groups g; /* the cluster's GPU types */
	int T;                   /* g.ntypes */
	int *active;             /* arrived, unfinished job ids, arrival order */
	int nactive;
	int changed;             /* jobs arrived or finished since X was computed */
	/* Per job id (njobs x T where two-dimensional): */
	double *tput;            /* T[m][j], samples/s; filled at arrival */
	double *x;               /* X[m][j] of the last computation */
	double *job_time;        /* s received on each type (plus round/2) */
	int *scale;              /* GPUs per job */
	double *worker_time;     /* per type */
	/* Finish-time fairness, per job id (the artifact policy's own state): */
	double *iso_elapsed;     /* cumulative isolated time, s */
	double *prev_left;       /* work left at the last computation; < 0: none yet */
	double *prev_iso;        /* isolated throughput then */
	/* Sia fidelity's placer (place_artifact), per job id: the GPUs
	 * (global indices, gpu_off[node] + slot) it held last round in the
	 * order they were given, scale[id] of them, and their type, -1 when it
	 * was not scheduled. */
	int **wk, *wk_type;      /* wk NULL without the mode; wk[id] made at arrival */
	int *gpu_off;            /* per node: its first GPU's global index */
	int *gpu_node;           /* per global GPU index: its node */
	int ngpus;
	size_t nj;               /* entries of the per-job arrays */
};

static void gavel_free(void *state)
{
	struct gavel_state *st = state;

	if (st) {
		hb_type_groups_free(&st->g);
		free(st->active);
		free(st->tput);
		free(st->x);
		free(st->job_time);
		free(st->scale);
		free(st->worker_time);
		free(st->iso_elapsed);
		free(st->prev_left);
		free(st->prev_iso);
		for (size_t k = 0; st->wk && k < st->nj; k++)
			free(st->wk[k]);
		free(st->wk);
		free(st->wk_type);
		free(st->gpu_off);
		free(st->gpu_node);
		free(st);
	}
}

/* The state of one policy (enum gavel_kind): each ops table's init below. */
static int gavel_init_kind(struct hb_sim *sim, int kind, void **state, struct hb_error *err)
{
	struct gavel_state *st = calloc(1, sizeof(*st));
	size_t nj = (size_t)(sim->njobs > 0 ? sim->njobs : 1), T;

	if (!st)
		return hb_runtime_error(err, "%s: out of memory", kind_name[kind]);
	hb_gavel_opts_default(&st->opts);
	st->kind = kind;
	if (hb_type_groups_init(&st->g, sim->cl, err) < 0) {
		gavel_free(st);
		return -1;
	}
	st->T = st->g.ntypes;
	T = (size_t)(st->T > 0 ? st->T : 1);
	st->active = calloc(nj, sizeof(int));
	st->tput = calloc(nj * T, sizeof(double));
	st->x = calloc(nj * T, sizeof(double));
	st->job_time = calloc(nj * T, sizeof(double));
	st->scale = calloc(nj, sizeof(int));
	st->worker_time = calloc(T, sizeof(double));
	st->iso_elapsed = calloc(nj, sizeof(double));
	st->prev_left = malloc(nj * sizeof(double));
	st->prev_iso = calloc(nj, sizeof(double));
	st->wk_type = malloc(nj * sizeof(int));
	st->gpu_off = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));
	if (!st->active || !st->tput || !st->x || !st->job_time || !st->scale || !st->worker_time ||
	    !st->iso_elapsed || !st->prev_left || !st->prev_iso || !st->wk_type || !st->gpu_off) {
		gavel_free(st);
		return hb_runtime_error(err, "%s: out of memory", kind_name[kind]);
	}
	for (size_t k = 0; k < nj; k++) {
		st->prev_left[k] = -1.0;
		st->wk_type[k] = -1;
	}
	for (int n = 0; n < sim->cl->nnodes; n++) {
		st->gpu_off[n] = st->ngpus;
		st->ngpus += sim->cl->nodes[n].ngpus;
	}
	st->nj = nj;
	if (sim->opts.fidelity == HB_FIDELITY_SIA &&
	    (!(st->wk = calloc(nj, sizeof(int *))) ||
	     !(st->gpu_node = malloc(sizeof(int) * (size_t)(st->ngpus > 0 ? st->ngpus : 1))))) {
		gavel_free(st);
		return hb_runtime_error(err, "%s: out of memory", kind_name[kind]);
	}
	for (int n = 0; st->gpu_node && n < sim->cl->nnodes; n++)
		for (int s = 0; s < sim->cl->nodes[n].ngpus; s++)
			st->gpu_node[st->gpu_off[n] + s] = n;
	*state = st;
	return 0;
}

/* T[m][j]: the job's samples/s on sf GPUs of type j on the fewest nodes;
 * with --fidelity sia its steps/s x 1 / SLOWDOWN, as the Sia artifact's
 * Gavel predicts it (gavel.py GavelPolicy.predict_throughput), which the
 * max-sum LP weighs unnormalised. */
static int job_tput(struct hb_sim *sim, const struct gavel_state *st, struct hb_sim_job *job, int j, double *out,
		    struct hb_error *err)
{
	const struct hb_type_group *ty = &st->g.types[j];
	int sf = st->scale[job->id], left = sf, rc;
	long target = job->req_batch > 0 ? job->req_batch : job->min_gbs;
	struct hb_job_config cfg;

	*out = 0.0;
	if (sf > ty->gpus)
		return 0;
	hb_job_config_init(&cfg, sim->cl->nnodes);
	if (!cfg.alloc)
		return hb_runtime_error(err, "%s: out of memory", kind_name[st->kind]);
	for (int a = 0; a < ty->nnodes && left > 0; a++) {
		int n = ty->nodes[a], k = sim->cl->nodes[n].ngpus < left ? sim->cl->nodes[n].ngpus : left;

		cfg.alloc[n] = k;
		left -= k;
	}
	/* Sia fidelity: the artifact's own split and step lookup where its
	 * data cover the job (hb_agent_sia_fixed_config), else hetbatch's */
	rc = sim->opts.fidelity == HB_FIDELITY_SIA ? hb_agent_sia_fixed_config(job, cfg.alloc, target, 1, &cfg, err) : 0;
	if (rc == 0)
		rc = hb_agent_ddp_config(job->perf, cfg.alloc, target, &cfg, NULL, err);
	else if (rc > 0)
		rc = 0;
	if (rc == 0 && cfg.iter_s > 0 && sim->opts.fidelity == HB_FIDELITY_SIA)
		*out = 1.0 / (cfg.iter_s * hb_fid_sia_slowdown(job->model->name)); /* steps/s (predict_throughput) */
	else if (rc == 0 && cfg.iter_s > 0)
		*out = (double)cfg.global_bs / cfg.iter_s;
	else if (rc < 0 && err->code == HB_EINPUT) { /* its batch fits no layout on this type */
		hb_error_clear(err);
		rc = 0;
	}
	hb_job_config_free(&cfg);
	return rc;
}

static int gavel_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct gavel_state *st = state;
	int T = st->T, any = 0, kind = st->kind;

	if (st->nactive >= sim->njobs || job->id < 0 || job->id >= sim->njobs)
		return hb_runtime_error(err, "%s: job %s was added after the run started", kind_name[kind], job->name);
	st->scale[job->id] = hb_arbiter_job_gpus(sim, job);
	{
		/* A gang on one type at a time: a request above the largest type
		 * runs on all of that type (the Sia artifact's Gavel gives such a
		 * job a token 0.1 steps/s instead, note G8). */
		int most = 0;

		for (int j = 0; j < T; j++)
			most = st->g.types[j].gpus > most ? st->g.types[j].gpus : most;
		if (st->scale[job->id] > most) {
			hb_sim_note(sim, job, "sched", "%s: asks for %d GPUs, no GPU type has more than %d: runs on %d",
				    kind_name[kind], st->scale[job->id], most, most);
			st->scale[job->id] = most;
		}
	}
	for (int j = 0; j < T; j++) {
		if (job_tput(sim, st, job, j, &st->tput[(size_t)job->id * T + j], err) < 0)
			return -1;
		any |= st->tput[(size_t)job->id * T + j] > 0;
		st->job_time[(size_t)job->id * T + j] = st->opts.round_s / 2;
		st->worker_time[j] += st->opts.round_s / 2;
	}
	if (!any)
		return hb_input_error(err, "%s: job %s (%s, %d GPUs, batch %ld) fits no GPU type of cluster %s",
				      kind_name[kind], job->name, job->model->name, st->scale[job->id],
				      job->req_batch > 0 ? job->req_batch : job->min_gbs, sim->cl->name);
	if (st->wk && !(st->wk[job->id] = malloc(sizeof(int) * (size_t)st->scale[job->id])))
		return hb_runtime_error(err, "%s: out of memory", kind_name[kind]);
	st->active[st->nactive++] = job->id;
	st->changed = 1;
	return 0; /* it waits for the next round */
}

/* FIFO (fifo_perf): X = 1 on the fastest type with room, arrival order,
 * stopping at the first job that fits nowhere. */
static void fifo_allocation(struct gavel_state *st, double *x)
{
	int T = st->T, *room = malloc(sizeof(int) * (size_t)T);

	if (!room)
		return;
	for (int j = 0; j < T; j++)
		room[j] = st->g.types[j].gpus;
	for (int a = 0; a < st->nactive; a++) {
		int id = st->active[a], best = -1;

		for (int j = 0; j < T; j++)
			if (st->tput[(size_t)id * T + j] > 0 && st->scale[id] <= room[j] &&
			    (best < 0 || st->tput[(size_t)id * T + j] > st->tput[(size_t)id * T + best]))
				best = j;
		if (best < 0)
			break;
		x[(size_t)a * T + best] = 1.0;
		room[best] -= st->scale[id];
	}
	free(room);
}

/* Work left of job (see the file's comment); *unit_rate: counted in run
 * seconds (rate 1 wherever it runs). */
static int work_left(const struct hb_sim *sim, const struct gavel_state *st, const struct hb_sim_job *job,
		     double *left, int *unit_rate, struct hb_error *err)
{
	long b = job->req_batch > 0 ? job->req_batch : job->min_gbs;
	double p, es, it;

	*unit_rate = job->duration_s > 0;
	if (*unit_rate) {
		*left = job->duration_s > job->run_s ? job->duration_s - job->run_s : 0.0;
		return 0;
	}
	hb_arbiter_progress_now(sim, job, &p, &es);
	it = job->fid ? hb_arbiter_fid_iters(job, b) : hb_arbiter_oracle_iters(job, b, p, es);
	if (!isfinite(it))
		return hb_runtime_error(err, "%s: job %s: the oracle finds it never finishes at batch %ld",
					kind_name[st->kind], job->name, b);
	*left = sim->opts.fidelity == HB_FIDELITY_SIA ? it : it * (double)b;
	return 0;
}

/* Finish-time fairness over pb (tp rewritten for run-time jobs): x, its
 * inputs from the jobs now, and the artifact's state carried on. */
static int ftf_allocation(struct hb_sim *sim, struct gavel_state *st, struct hb_gavel_problem *pb, double *tp,
			  const struct hb_milp_opts *mo, double *x, struct hb_error *err)
{
	int M = pb->njobs, T = pb->ntypes, rc = -1;
	double *e = malloc(sizeof(double) * (size_t)M), *c = malloc(sizeof(double) * (size_t)M);
	double *R = malloc(sizeof(double) * (size_t)M), *iso = malloc(sizeof(double) * (size_t)M);
	struct hb_gavel_ftf f = { e, c, R };

	if (!e || !c || !R || !iso) {
		hb_runtime_error(err, "%s: out of memory", kind_name[st->kind]);
		goto out;
	}
	for (int a = 0; a < M; a++) {
		int id = st->active[a], unit;
		struct hb_sim_job *job = &sim->jobs[id];

		if (work_left(sim, st, job, &R[a], &unit, err) < 0)
			goto out;
		if (unit)
			for (int j = 0; j < T; j++)
				tp[(size_t)a * T + j] = tp[(size_t)a * T + j] > 0 ? 1.0 : 0.0;
		e[a] = hb_sim_now(sim) - job->arrival_s;
		if (st->prev_left[id] >= 0 && st->prev_iso[id] > 0)
			st->iso_elapsed[id] += (st->prev_left[id] - R[a]) / st->prev_iso[id];
		c[a] = st->iso_elapsed[id];
	}
	if (hb_gavel_isolated(pb, NULL, iso, err) < 0)
		goto out;
	for (int a = 0; a < M; a++) {
		st->prev_left[st->active[a]] = R[a];
		st->prev_iso[st->active[a]] = iso[a];
	}
	if (hb_gavel_finish_time_fairness(pb, &f, mo, x, NULL, err) < 0) {
		if (err->code == HB_EINPUT)
			goto out;
		hb_sim_note(sim, NULL, "sched", "%s: LP: %s; the isolated share instead", kind_name[st->kind], err->msg);
		hb_error_clear(err);
		if (hb_gavel_isolated(pb, x, NULL, err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(e);
	free(c);
	free(R);
	free(iso);
	return rc;
}

/* Recompute X for the active jobs. */
static int recompute(struct hb_sim *sim, struct gavel_state *st, struct hb_error *err)
{
	int M = st->nactive, T = st->T, rc = 0, *cap = malloc(sizeof(int) * (size_t)T);
	double *tp = malloc(sizeof(double) * (size_t)M * (size_t)T), *x = calloc((size_t)M * (size_t)T, sizeof(double));
	int *sf = malloc(sizeof(int) * (size_t)M);
	struct hb_gavel_problem pb;
	struct hb_milp_opts mo;

	if (!cap || !tp || !x || !sf) {
		rc = hb_runtime_error(err, "%s: out of memory", kind_name[st->kind]);
		goto out;
	}
	for (int j = 0; j < T; j++)
		cap[j] = st->g.types[j].gpus;
	for (int a = 0; a < M; a++) {
		sf[a] = st->scale[st->active[a]];
		memcpy(tp + (size_t)a * T, st->tput + (size_t)st->active[a] * T, sizeof(double) * (size_t)T);
	}
	pb = (struct hb_gavel_problem){ M, T, tp, sf, NULL, cap };
	hb_milp_opts_default(&mo);
	mo.time_limit_s = st->opts.time_limit_s;
	if (st->kind == GAVEL_FIFO) {
		fifo_allocation(st, x);
	} else if (st->kind == GAVEL_FTF) {
		if (ftf_allocation(sim, st, &pb, tp, &mo, x, err) < 0) {
			rc = -1;
			goto out;
		}
	} else if ((st->kind == GAVEL_MAXMIN ? hb_gavel_max_min_fairness(&pb, &mo, x, NULL, err)
		    /* Sia fidelity: ECOS's interior point, not a vertex (gavel_lp.h) */
		    : sim->opts.fidelity == HB_FIDELITY_SIA ? hb_gavel_max_sum_throughput_center(&pb, x, NULL, err)
							    : hb_gavel_max_sum_throughput(&pb, &mo, x, NULL, err)) < 0) {
		if (err->code == HB_EINPUT) { /* the data admit no answer: a bug here */
			rc = -1;
			goto out;
		}
		hb_sim_note(sim, NULL, "sched", "%s: LP: %s; allocation kept", kind_name[st->kind], err->msg);
		hb_error_clear(err);
		goto out; /* the previous X stays (new jobs have none yet) */
	}
	for (int a = 0; a < M; a++)
		memcpy(st->x + (size_t)st->active[a] * T, x + (size_t)a * T, sizeof(double) * (size_t)T);
	st->changed = 0;
out:
	free(cap);
	free(tp);
	free(x);
	free(sf);
	return rc;
}

/* One (job, type) entry of the round's queue. */
struct entry {
	int a;                   /* index in active */
	int j;                   /* type */
	double prio, x;
};

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->x != b->x)
		return a->x > b->x ? -1 : 1;
	if (a->a != b->a)
		return a->a - b->a;
	return a->j - b->j;
}

/* Place job a's sf GPUs of type j into g (nnodes entries) from free_n. */
static void place_on_type(const struct hb_sim *sim, const struct hb_type_group *ty, const struct hb_sim_job *job,
			  int sf, int *free_n, int *g)
{
	int keep = hb_arbiter_holds_gpus(job) && job->ngrant == sf, left = sf;

	for (int n = 0; n < sim->cl->nnodes && keep; n++)
		keep = job->grant[n] == 0 || (job->grant[n] <= free_n[n] && sim->cl->nodes[n].gpu == ty->cat_gpu);
	if (keep) {
		for (int n = 0; n < sim->cl->nnodes; n++) {
			g[n] = job->grant[n];
			free_n[n] -= g[n];
		}
		return;
	}
	while (left > 0) {
		int best = -1;

		for (int a = 0; a < ty->nnodes; a++) {
			int n = ty->nodes[a];

			if (free_n[n] > 0 && g[n] == 0 && (best < 0 || free_n[n] > free_n[best]))
				best = n;
		}
		if (best < 0)
			return; /* cannot happen: the type's free count was checked */
		g[best] = free_n[best] < left ? free_n[best] : left;
		free_n[best] -= g[best];
		left -= g[best];
	}
}

/* Sia fidelity's placement (sia-simulator/gavel.py,
 * schedule_jobs_on_workers and assign_workers_to_job): per type, scale
 * factors from the largest, the jobs of each in the order they were
 * chosen (sel[a], the queue's); first every job whose GPUs of last round
 * on this type are all still free keeps them, then each other job takes
 * GPUs in index order from a cursor over the type's nodes that only moves
 * forward through the round (a GPU kept by another job is passed over),
 * so a gang can straddle two partly used nodes where hetbatch's placer
 * would take the emptiest.  A job the cursor cannot serve (the artifact
 * raises there) is placed by place_on_type.  g: J x N grants. */
static int place_artifact(const struct hb_sim *sim, struct gavel_state *st, struct hb_sim_job **jobs, int J,
			  const int *chosen, const int *sel, int *g, struct hb_error *err)
{
	int N = sim->cl->nnodes, *taken = calloc((size_t)(st->ngpus > 0 ? st->ngpus : 1), sizeof(int));
	int *order = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1)), *pos = calloc((size_t)(N > 0 ? N : 1), sizeof(int));
	int *got = calloc((size_t)(J > 0 ? J : 1), sizeof(int)), *free_n = malloc(sizeof(int) * (size_t)(N > 0 ? N : 1));
	int rc = -1;

	if (!taken || !order || !pos || !got || !free_n) {
		hb_runtime_error(err, "%s: out of memory", kind_name[st->kind]);
		goto out;
	}
	for (int j = 0; j < st->T; j++) {
		const struct hb_type_group *ty = &st->g.types[j];
		int no = 0, cur = 0;

		/* this type's jobs by scale factor, descending, then sel (stable) */
		for (int a = 0; a < J; a++)
			if (chosen[a] == j)
				order[no++] = a;
		for (int x = 1; x < no; x++)
			for (int y = x; y > 0; y--) {
				int p = order[y - 1], q = order[y], sp = st->scale[jobs[p]->id], sq = st->scale[jobs[q]->id];

				if (sp > sq || (sp == sq && sel[p] < sel[q]))
					break;
				order[y - 1] = q;
				order[y] = p;
			}
		for (int k = 0; k < ty->nnodes; k++)
			pos[k] = 0;
		for (int lo = 0; lo < no;) {
			int sf = st->scale[jobs[order[lo]]->id], hi = lo;

			while (hi < no && st->scale[jobs[order[hi]]->id] == sf)
				hi++;
			/* keep: last round's GPUs on this type, all still free */
			for (int x = lo; x < hi; x++) {
				int a = order[x], id = jobs[a]->id, ok = st->wk_type[id] == j;

				for (int k = 0; ok && k < sf; k++) {
					int w = st->wk[id][k], n = st->gpu_node[w];

					ok = !taken[w] && w - st->gpu_off[n] < hb_sim_node_online(sim, n);
				}
				if (!ok)
					continue;
				for (int k = 0; k < sf; k++)
					taken[st->wk[id][k]] = 1;
				got[a] = 1;
			}
			/* the others: from the cursor on */
			for (int x = lo; x < hi; x++) {
				int a = order[x], id = jobs[a]->id, c = 0;

				if (got[a])
					continue;
				while (c < sf && cur < ty->nnodes) {
					int n = ty->nodes[cur], w;

					if (pos[cur] >= hb_sim_node_online(sim, n)) {
						cur++;
						continue;
					}
					w = st->gpu_off[n] + pos[cur]++;
					if (!taken[w]) {
						st->wk[id][c++] = w;
						taken[w] = 1;
					}
				}
				if (c == sf) {
					got[a] = 1;
					continue;
				}
				for (int k = 0; k < c; k++) /* give them back: placed below */
					taken[st->wk[id][k]] = 0;
				got[a] = -1;
			}
			lo = hi;
		}
	}
	/* grants; the cursor's misses placed hetbatch's way on what is left */
	for (int n = 0; n < N; n++) {
		int on = hb_sim_node_online(sim, n);

		free_n[n] = on;
		for (int s = 0; s < on; s++)
			free_n[n] -= taken[st->gpu_off[n] + s];
	}
	for (int a = 0; a < J; a++) {
		int id = jobs[a]->id;

		if (got[a] == 1)
			for (int k = 0; k < st->scale[id]; k++)
				g[(size_t)a * N + st->gpu_node[st->wk[id][k]]]++;
	}
	for (int a = 0; a < J; a++) {
		int id = jobs[a]->id, k = 0;

		if (got[a] != -1)
			continue;
		place_on_type(sim, &st->g.types[chosen[a]], jobs[a], st->scale[id], free_n, g + (size_t)a * N);
		for (int n = 0; n < N; n++) /* its GPUs: the first free slots of each node */
			for (int s = 0, left = g[(size_t)a * N + n]; s < sim->cl->nodes[n].ngpus && left > 0; s++)
				if (!taken[st->gpu_off[n] + s]) {
					taken[st->gpu_off[n] + s] = 1;
					st->wk[id][k++] = st->gpu_off[n] + s;
					left--;
				}
	}
	for (int a = 0; a < J; a++)
		st->wk_type[jobs[a]->id] = chosen[a];
	rc = 0;
out:
	free(taken);
	free(order);
	free(pos);
	free(got);
	free(free_n);
	return rc;
}

static int gavel_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct gavel_state *st = state;
	int J = 0, T = st->T, N = sim->cl->nnodes, rc = -1, changed = 0, ne = 0, kind = st->kind;
	int *room = NULL, *chosen = NULL, *grant = NULL, *free_n = NULL, *sel = NULL;
	struct entry *q = NULL;
	struct hb_sim_job **jobs = NULL;

	for (int a = 0; a < st->nactive; a++) {
		if (sim->jobs[st->active[a]].state == HB_JOB_DONE)
			st->changed = 1;
		else
			st->active[J++] = st->active[a];
	}
	st->nactive = J;
	if (J == 0)
		return 0;
	if (st->changed && recompute(sim, st, err) < 0)
		return -1;
	q = malloc(sizeof(*q) * (size_t)J * (size_t)T);
	room = malloc(sizeof(int) * (size_t)T);
	chosen = malloc(sizeof(int) * (size_t)J);
	grant = calloc((size_t)J * (size_t)(N > 0 ? N : 1), sizeof(int));
	free_n = malloc(sizeof(int) * (size_t)(N > 0 ? N : 1));
	jobs = malloc(sizeof(*jobs) * (size_t)J);
	sel = malloc(sizeof(int) * (size_t)J);
	if (!q || !room || !chosen || !grant || !free_n || !jobs || !sel) {
		hb_runtime_error(err, "%s: out of memory", kind_name[kind]);
		goto out;
	}
	/* Priorities: the fraction wanted over the fraction received. */
	for (int a = 0; a < J; a++) {
		int id = st->active[a];

		jobs[a] = &sim->jobs[id];
		chosen[a] = -1;
		for (int j = 0; j < T; j++) {
			double x = st->x[(size_t)id * T + j], p = 0.0;

			if (!(st->tput[(size_t)id * T + j] > 0))
				continue;
			if (x > 0) {
				double frac = st->worker_time[j] > 0 ? st->job_time[(size_t)id * T + j] / st->worker_time[j] : 0;

				p = frac > 0 ? x / frac : x * 1e9; /* "don't use inf" (scheduler.py) */
			}
			q[ne++] = (struct entry){ a, j, p, x };
		}
	}
	qsort(q, (size_t)ne, sizeof(*q), cmp_entry);
	for (int j = 0; j < T; j++) {
		room[j] = 0;
		for (int k = 0; k < st->g.types[j].nnodes; k++)
			room[j] += hb_sim_node_online(sim, st->g.types[j].nodes[k]);
	}
	for (int e = 0; e < ne; e++) {
		int sf = st->scale[st->active[q[e].a]];

		if (chosen[q[e].a] >= 0 || sf > room[q[e].j] || (kind == GAVEL_FIFO && !(q[e].prio > 0)))
			continue;
		chosen[q[e].a] = q[e].j;
		sel[q[e].a] = e;
		room[q[e].j] -= sf;
	}
	/* Placement: per type, largest scale factor first (a stable pass per size). */
	for (int n = 0; n < N; n++)
		free_n[n] = hb_sim_node_online(sim, n);
	if (st->wk && place_artifact(sim, st, jobs, J, chosen, sel, grant, err) < 0)
		goto out;
	for (int j = 0; !st->wk && j < T; j++) {
		int top = 0;

		for (int a = 0; a < J; a++)
			if (chosen[a] == j && st->scale[st->active[a]] > top)
				top = st->scale[st->active[a]];
		for (int sf = top; sf >= 1; sf--)
			for (int a = 0; a < J; a++)
				if (chosen[a] == j && st->scale[st->active[a]] == sf)
					place_on_type(sim, &st->g.types[j], jobs[a], sf, free_n, grant + (size_t)a * N);
	}
	if (hb_arbiter_apply_grants(sim, jobs, J, grant, kind_name[kind], &changed, err) < 0)
		goto out;
	/* Time received: the full round on the chosen type (G11). */
	for (int a = 0; a < J; a++)
		if (chosen[a] >= 0) {
			st->job_time[(size_t)st->active[a] * T + chosen[a]] += st->opts.round_s;
			st->worker_time[chosen[a]] += st->opts.round_s;
		}
	if (changed > 0)
		hb_sim_note(sim, NULL, "sched", "%s: %d of %d jobs moved, started or suspended", kind_name[kind], changed, J);
	rc = 0;
out:
	free(q);
	free(room);
	free(chosen);
	free(grant);
	free(free_n);
	free(jobs);
	free(sel);
	return rc;
}

static double gavel_round_s(const struct hb_sim *sim, const void *state)
{
	const struct gavel_state *st = state;

	(void)sim;
	return st->opts.round_s;
}

#define GAVEL_OPS(sym, kind, nm, text)                                                                        \
	static int sym##_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)       \
	{                                                                                                     \
		(void)opts;                                                                                   \
		return gavel_init_kind(sim, kind, state, err);                                                \
	}                                                                                                     \
	const struct hb_arbiter_ops hb_arbiter_##sym = {                                                       \
		.name = nm,                                                                                   \
		.summary = text,                                                                              \
		.init = sym##_init,                                                                           \
		.free = gavel_free,                                                                           \
		.on_arrival = gavel_arrival,                                                                  \
		.on_finish = NULL, /* freed GPUs are reassigned at the next round */                         \
		.round_s = gavel_round_s,                                                                     \
		.on_round = gavel_round,                                                                      \
		.on_requeue = hb_arbiter_requeue_round,                                                       \
		.no_capacity = "gavel's LPs use the whole cluster's GPUs per type; it does not follow "       \
			       "capacity that comes and goes yet",                                           \
	}

GAVEL_OPS(gavel, GAVEL_MAXMIN, "gavel",
	  "Gavel: heterogeneity-aware max-min fairness LP over per-type throughputs, 360 s rounds by priority "
	  "= wanted / received time fraction");
GAVEL_OPS(gavel_tput, GAVEL_TPUT, "gavel-tput",
	  "Gavel: max-sum-throughput LP over per-type throughputs, 360 s rounds (Sia's Gavel baseline)");
GAVEL_OPS(gavel_fifo, GAVEL_FIFO, "gavel-fifo",
	  "Gavel: FIFO on the fastest GPU type with room (fifo_perf), 360 s rounds");
GAVEL_OPS(gavel_ftf, GAVEL_FTF, "gavel-ftf",
	  "Gavel: finish-time fairness (minimise the largest Themis rho against the isolated 1/n share), "
	  "360 s rounds");
