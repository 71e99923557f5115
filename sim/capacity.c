/*
 * capacity.c: GPUs that come and go (capacity.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "csv.h"
#include "sim.h"

int hb_capacity_load(const char *path, const struct hb_catalog *cat, const struct hb_cluster *cl,
		     struct hb_capacity *cap, struct hb_error *err)
{
	static const char *const cols[] = { "time_s", "gpu", "available", NULL };
	struct hb_csv c;
	int idx[3], rc;
	size_t room = 0;

	memset(cap, 0, sizeof(*cap));
	if (hb_csv_open(&c, path, err) < 0)
		return -1;
	if (hb_csv_header(&c, cols, idx, err) < 0)
		goto fail;
	while ((rc = hb_csv_next(&c, err)) == 1) {
		struct hb_capacity_row r;
		const char *name;
		long avail;
		int have = 0;

		if (hb_csv_check_width(&c, err) < 0 || hb_csv_double_range(&c, idx[0], 0, 1e12, &r.t, err) < 0 ||
		    hb_csv_str(&c, idx[1], &name, err) < 0)
			goto fail;
		r.gpu = hb_catalog_gpu_index(cat, name);
		for (int i = 0; i < cl->nnodes && r.gpu >= 0; i++)
			if (cl->nodes[i].gpu == r.gpu)
				have += cl->nodes[i].ngpus;
		if (r.gpu < 0 || have == 0) {
			hb_input_error(err, "%s:%ld: field 'gpu': value '%s': %s", path, c.line, name,
				       r.gpu < 0 ? "not a catalog GPU type" : "cluster has no GPU of this type");
			goto fail;
		}
		if (hb_csv_long_range(&c, idx[2], 0, have, &avail, err) < 0)
			goto fail;
		if (cap->nrows > 0 && r.t < cap->rows[cap->nrows - 1].t) {
			hb_input_error(err, "%s:%ld: field 'time_s': value '%s' is before the previous row's %.10g s", path,
				       c.line, c.field[idx[0]], cap->rows[cap->nrows - 1].t);
			goto fail;
		}
		r.available = (int)avail;
		r.line = c.line;
		if ((size_t)cap->nrows == room) {
			if (room >= (size_t)1 << 24) {
				hb_input_error(err, "%s:%ld: more than %zu capacity rows", path, c.line, room);
				goto fail;
			}
			struct hb_capacity_row *n = realloc(cap->rows, sizeof(*n) * (room ? 2 * room : 16));

			if (!n) {
				hb_runtime_error(err, "%s: out of memory", path);
				goto fail;
			}
			cap->rows = n;
			room = room ? 2 * room : 16;
		}
		cap->rows[cap->nrows++] = r;
	}
	if (rc < 0)
		goto fail;
	if (cap->nrows == 0) {
		hb_input_error(err, "%s: no capacity rows after the header", path);
		goto fail;
	}
	cap->offline = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1), sizeof(int));
	if (!cap->offline) {
		hb_runtime_error(err, "%s: out of memory", path);
		goto fail;
	}
	hb_csv_close(&c);
	return 0;
fail:
	hb_csv_close(&c);
	hb_capacity_free(cap);
	return -1;
}

void hb_capacity_free(struct hb_capacity *cap)
{
	free(cap->rows);
	free(cap->offline);
	free(cap->parked);
	memset(cap, 0, sizeof(*cap));
}

int hb_capacity_schedule(struct hb_sim *sim, struct hb_error *err)
{
	struct hb_capacity *cap = sim->capacity;

	if (!cap)
		return 0;
	if (sim->arbiter == &hb_arbiter_dedicated)
		return hb_input_error(err, "--capacity needs jobs that share the cluster (--trace or --synthetic): under "
					   "the dedicated arbiter every job holds the whole cluster");
	if (sim->arbiter->no_capacity)
		return hb_input_error(err, "--capacity: arbiter %s: %s", sim->arbiter->name, sim->arbiter->no_capacity);
	if (!cap->parked && !(cap->parked = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(int))))
		return hb_runtime_error(err, "simulator: out of memory");
	for (int k = 0; k < cap->nrows; k++)
		if (hb_engine_schedule(&sim->eng, cap->rows[k].t, HB_EV_FAILURE, -1, (uint64_t)k, err) < 0)
			return -1;
	return 0;
}

static int holds(const struct hb_sim_job *job)
{
	return job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING;
}

/* Take up to need[i] free GPUs of each node offline. */
static void take_free(struct hb_sim *sim, int *need)
{
	for (int i = 0; i < sim->cl->nnodes; i++) {
		int t = need[i] < sim->free_gpus[i] ? need[i] : sim->free_gpus[i];

		sim->free_gpus[i] -= t;
		sim->capacity->offline[i] += t;
		need[i] -= t;
	}
}

static int any(const int *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i] > 0)
			return 1;
	return 0;
}

/* Preempt, latest start first, the jobs holding GPUs where need is left. */
static int preempt(struct hb_sim *sim, int *need, struct hb_error *err)
{
	struct hb_capacity *cap = sim->capacity;
	int *none = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int));

	if (!none)
		return hb_runtime_error(err, "simulator: out of memory");
	while (any(need, sim->cl->nnodes)) {
		struct hb_sim_job *victim = NULL;

		for (int j = 0; j < sim->njobs; j++) {
			struct hb_sim_job *job = &sim->jobs[j];
			int on = 0;

			if (!holds(job))
				continue;
			for (int i = 0; i < sim->cl->nnodes && !on; i++)
				on = need[i] > 0 && job->grant[i] > 0;
			if (on && (!victim || job->start_s > victim->start_s ||
				   (job->start_s == victim->start_s && job->id > victim->id)))
				victim = job;
		}
		if (!victim) {
			free(none);
			return hb_runtime_error(err, "simulator: capacity withdrawal: GPUs to take back that no job holds");
		}
		hb_sim_note(sim, victim, "revoke", "capacity withdrawn: preempted and requeued");
		if (hb_sim_regrant(sim, victim, none, err) < 0) {
			free(none);
			return -1;
		}
		cap->preemptions++;
		take_free(sim, need);
		if (sim->arbiter->on_requeue) {
			if (sim->arbiter->on_requeue(sim, sim->arbiter_state, victim, err) < 0) {
				free(none);
				return -1;
			}
		} else {
			cap->parked[cap->nparked++] = victim->id;
		}
	}
	free(none);
	return 0;
}

static int withdraw(struct hb_sim *sim, int gpu, int w, struct hb_error *err)
{
	struct hb_capacity *cap = sim->capacity;
	const struct hb_cluster *cl = sim->cl;
	int *need = calloc((size_t)(cl->nnodes > 0 ? cl->nnodes : 1), sizeof(int));
	int *before = calloc((size_t)(sim->njobs > 0 ? sim->njobs : 1), sizeof(int));
	int rc = 0;

	if (!need || !before) {
		free(need);
		free(before);
		return hb_runtime_error(err, "simulator: out of memory");
	}
	cap->withdrawn_gpus += w;
	/* Free GPUs first, nodes with the most free first (ties: higher index). */
	while (w > 0) {
		int best = -1;

		for (int i = 0; i < cl->nnodes; i++)
			if (cl->nodes[i].gpu == gpu && sim->free_gpus[i] > 0 &&
			    (best < 0 || sim->free_gpus[i] >= sim->free_gpus[best]))
				best = i;
		if (best < 0)
			break;
		{
			int t = sim->free_gpus[best] < w ? sim->free_gpus[best] : w;

			sim->free_gpus[best] -= t;
			cap->offline[best] += t;
			w -= t;
		}
	}
	/* Busy GPUs: whole servers, highest index first. */
	for (int i = cl->nnodes - 1; i >= 0 && w > 0; i--) {
		int busy;

		if (cl->nodes[i].gpu != gpu)
			continue;
		busy = cl->nodes[i].ngpus - cap->offline[i] - sim->free_gpus[i];
		need[i] = busy < w ? busy : w;
		w -= need[i];
	}
	if (any(need, cl->nnodes)) {
		for (int j = 0; j < sim->njobs; j++)
			before[j] = holds(&sim->jobs[j]) ? sim->jobs[j].ngrant : 0;
		if (sim->arbiter->on_revoke && sim->arbiter->on_revoke(sim, sim->arbiter_state, need, err) < 0)
			rc = -1;
		if (rc == 0) {
			take_free(sim, need);
			/* What the arbiter did: scale-ins that keep running, and
			 * jobs it had to stop altogether. */
			for (int j = 0; j < sim->njobs; j++) {
				int now = holds(&sim->jobs[j]) ? sim->jobs[j].ngrant : 0;

				if (before[j] > 0 && now > 0 && now < before[j])
					cap->shrinks++;
				else if (before[j] > 0 && now == 0)
					cap->preemptions++;
			}
			rc = preempt(sim, need, err);
		}
	}
	free(need);
	free(before);
	return rc;
}

static int restore(struct hb_sim *sim, int gpu, int w)
{
	struct hb_capacity *cap = sim->capacity;

	for (int i = 0; i < sim->cl->nnodes && w > 0; i++) {
		int t;

		if (sim->cl->nodes[i].gpu != gpu)
			continue;
		t = cap->offline[i] < w ? cap->offline[i] : w;
		cap->offline[i] -= t;
		sim->free_gpus[i] += t;
		w -= t;
	}
	return 0;
}

int hb_capacity_apply(struct hb_sim *sim, int k, struct hb_error *err)
{
	struct hb_capacity *cap = sim->capacity;
	const struct hb_capacity_row *r;
	int online = 0;

	if (!cap || k < 0 || k >= cap->nrows)
		return hb_runtime_error(err, "simulator: capacity event %d without its row", k);
	r = &cap->rows[k];
	for (int i = 0; i < sim->cl->nnodes; i++)
		if (sim->cl->nodes[i].gpu == r->gpu)
			online += sim->cl->nodes[i].ngpus - cap->offline[i];
	hb_sim_note(sim, NULL, "capacity", "%s: %d -> %d GPUs online (line %ld)", sim->cat->gpus[r->gpu].name, online,
		    r->available, r->line);
	if (r->available < online) {
		if (withdraw(sim, r->gpu, online - r->available, err) < 0)
			return -1;
	} else if (r->available > online) {
		restore(sim, r->gpu, r->available - online);
	}
	if (sim->arbiter->on_capacity && sim->arbiter->on_capacity(sim, sim->arbiter_state, err) < 0)
		return -1;
	return hb_capacity_resume(sim, err);
}

int hb_capacity_resume(struct hb_sim *sim, struct hb_error *err)
{
	struct hb_capacity *cap = sim->capacity;
	int *grant, k = 0;

	if (!cap || cap->nparked == 0)
		return 0;
	if (!(grant = calloc((size_t)(sim->cl->nnodes > 0 ? sim->cl->nnodes : 1), sizeof(int))))
		return hb_runtime_error(err, "simulator: out of memory");
	/* In preemption order; one that does not fit does not block the next. */
	for (int p = 0; p < cap->nparked; p++) {
		struct hb_sim_job *job = &sim->jobs[cap->parked[p]];
		int n = job->cfg.ngpus > 0 ? job->cfg.ngpus : hb_arbiter_job_gpus(sim, job);

		if (job->state != HB_JOB_SUSPENDED)
			continue; /* its arbiter resumed it */
		if (!hb_sim_place(sim, n, grant)) {
			cap->parked[k++] = job->id;
			continue;
		}
		if (hb_sim_regrant(sim, job, grant, err) < 0) {
			free(grant);
			return -1;
		}
	}
	cap->nparked = k;
	free(grant);
	return 0;
}
