/*
 * replay.c: from a job-spec stream to one simulation per policy
 * (replay.h says what is decided where).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"  /* hb_path_exists */
#include "replay.h"
#include "rng.h"
#include "strutil.h"

void hb_replay_opts_init(struct hb_replay_opts *o)
{
	o->load = 1.0;
	o->seed = 1;
	o->duration_from_trace = 0;
}

void hb_replay_free(struct hb_replay *rp)
{
	free(rp->jobs);
	memset(rp, 0, sizeof(*rp));
}

void hb_replay_drop_jobs(struct hb_replay *rp)
{
	free(rp->jobs);
	rp->jobs = NULL;
	rp->njobs = 0;
}

void hb_replay_where(enum hb_trace_format fmt, const char *where, long record, char *buf, size_t size)
{
	switch (fmt) {
	case HB_TRACE_PHILLY_LOG:
	case HB_TRACE_JOBSPEC_JSON:
		snprintf(buf, size, "%s: element %ld", where, record);
		break;
	case HB_TRACE_SYNTHETIC:
		snprintf(buf, size, "%s: job %ld", where, record);
		break;
	default:
		snprintf(buf, size, "%s:%ld", where, record);
		break;
	}
}

int hb_replay_load_models(struct hb_catalog *cat, struct hb_jobspec *specs, long n, enum hb_trace_format fmt,
			  const char *path, int rename, struct hb_error *err)
{
	char dir[4096];
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (slash && (size_t)(slash - path) < sizeof(dir) - 1) {
		memcpy(dir, path, (size_t)(slash - path) + 1);
		dir[slash - path + 1] = '\0';
	} else {
		dir[0] = '\0';
	}
	for (long i = 0; i < n; i++) {
		struct hb_jobspec *s = &specs[i];
		const struct hb_model *m;
		char file[sizeof(dir) + sizeof(s->model)], pos[512];
		int beside;

		if (!s->model[0] || hb_catalog_model(cat, s->model) || !hb_catalog_is_file_name(s->model))
			continue;
		/* Beside the trace first (a trace and its models travel
		 * together), then as the working directory sees it. */
		beside = s->model[0] != '/' && dir[0] &&
			 (size_t)snprintf(file, sizeof(file), "%s%s", dir, s->model) < sizeof(file) && hb_path_exists(file);
		if (!beside)
			hb_strlcpy(file, s->model, sizeof(file));
		if (hb_catalog_resolve_model(cat, file, &m, err) < 0) {
			hb_replay_where(fmt, path, s->record, pos, sizeof(pos));
			hb_error_prefix(err, "%s: field 'model'", pos);
			return -1;
		}
		if (rename)
			hb_strlcpy(s->model, m->name, sizeof(s->model));
	}
	return 0;
}

/* "cifar10, ncf, ..." for an unknown-model message, cut to fit. */
static void model_names(const struct hb_catalog *cat, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < cat->nmodels && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", cat->models[i].name);
}

int hb_replay_from_specs(const struct hb_catalog *cat, const struct hb_cluster *cl, const struct hb_jobspec *specs,
			 long n, enum hb_trace_format fmt, const char *where, const struct hb_replay_opts *ro,
			 struct hb_replay *rp, struct hb_error *err)
{
	struct hb_replay_opts def;
	struct hb_rng rng;

	if (!ro) {
		hb_replay_opts_init(&def);
		ro = &def;
	}
	memset(rp, 0, sizeof(*rp));
	rp->format = fmt;
	rp->load = ro->load;
	rp->duration_from_trace = ro->duration_from_trace;
	rp->read = n;
	if (!(ro->load > 0))
		return hb_input_error(err, "replay: load factor %g is not positive", ro->load);
	rp->jobs = calloc((size_t)(n > 0 ? n : 1), sizeof(*rp->jobs));
	if (!rp->jobs)
		return hb_runtime_error(err, "replay: out of memory for %ld jobs", n);
	/* One stream for every draw, in trace order, drawn before the size
	 * check: the same trace and seed give the same models whatever the
	 * policies and the cluster. */
	hb_rng_seed(&rng, ro->seed, HB_STREAM_JOBMIX);
	for (long i = 0; i < n; i++) {
		struct hb_jobspec s = specs[i];
		struct hb_replay_job *j;
		char pos[512];

		if (!s.model[0]) {
			hb_trace_assign_model(&s, &rng);
			rp->assigned++;
		}
		if (s.gpus > cl->ngpus) {
			rp->oversize++;
			if (s.gpus > rp->max_oversize_gpus)
				rp->max_oversize_gpus = s.gpus;
			continue;
		}
		j = &rp->jobs[rp->njobs];
		j->model = hb_catalog_model(cat, s.model);
		if (!j->model) {
			char known[512], hint[256];

			hb_replay_where(fmt, where, s.record, pos, sizeof(pos));
			model_names(cat, known, sizeof(known));
			hb_catalog_suggest(cat, 'm', s.model, hint, sizeof(hint));
			hb_replay_free(rp);
			return hb_input_error(err, "%s: field 'model': value '%s': not a model in the catalog (known: %s)%s",
					      pos, s.model, known, hint);
		}
		if (s.gpus < 1) {
			hb_replay_where(fmt, where, s.record, pos, sizeof(pos));
			hb_replay_free(rp);
			return hb_input_error(err, "%s: field 'gpus': value '%d': not a positive GPU count", pos, s.gpus);
		}
		if (s.gpu_type[0] && hb_catalog_gpu_index(cat, s.gpu_type) < 0) {
			hb_replay_where(fmt, where, s.record, pos, sizeof(pos));
			hb_replay_free(rp);
			return hb_input_error(err, "%s: field 'gpu_type': value '%s': not a GPU type in the catalog", pos,
					      s.gpu_type);
		}
		hb_strlcpy(j->gpu_type, s.gpu_type, sizeof(j->gpu_type));
		hb_strlcpy(j->app, s.app, sizeof(j->app));
		j->d2 = s.d2 == HB_D2_YES ? 1 : s.d2 == HB_D2_NO ? 0 : -1;
		j->epochs = s.epochs;
		hb_strlcpy(j->name, s.name, sizeof(j->name));
		j->arrival_s = s.arrival_s / ro->load;
		j->gpus = s.gpus;
		j->batch = s.batch > 0 ? s.batch : 0;
		j->record = s.record;
		j->index = i;
		j->duration_s = s.duration_s > 0 ? s.duration_s : 0.0;
		rp->with_duration += j->duration_s > 0;
		j->assigned = !specs[i].model[0];
		rp->njobs++;
	}
	return 0;
}

/* EasyScale's artifact keeps its jobs in an OrderedDict by name, in file
 * order: its jobs are the file's rows in file order, a name given again
 * keeping its first place with the later row's values (and that row's
 * line, for messages).  The rows drained sorted by arrival go back to file
 * order here, in place; returns the rows folded into an earlier one
 * (*n is then smaller by that), or -1 out of memory. */
static int by_record(const void *a, const void *b)
{
	const struct hb_jobspec *x = a, *y = b;

	return (x->record > y->record) - (x->record < y->record);
}

struct named {
	const char *name;
	long i;                       /* place in file order */
};

static int by_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static long artifact_order(struct hb_jobspec *specs, long *n)
{
	struct named *idx;
	long merged = 0, k = 0;
	unsigned char *gone;

	if (*n > 1)
		qsort(specs, (size_t)*n, sizeof(*specs), by_record);
	idx = malloc(sizeof(*idx) * (size_t)(*n > 0 ? *n : 1));
	gone = calloc((size_t)(*n > 0 ? *n : 1), 1);
	if (!idx || !gone) {
		free(idx);
		free(gone);
		return -1;
	}
	for (long i = 0; i < *n; i++)
		idx[i] = (struct named){ specs[i].name, i };
	if (*n > 1)
		qsort(idx, (size_t)*n, sizeof(*idx), by_name);
	/* each run of one name, in file order: the first row takes the last's
	 * values (idx names point into specs, which this loop does not move) */
	for (long i = 0; i < *n; i = k) {
		for (k = i + 1; k < *n && strcmp(idx[k].name, idx[i].name) == 0; k++)
			gone[idx[k].i] = 1;
		if (k - i > 1) {
			specs[idx[i].i] = specs[idx[k - 1].i];
			merged += k - i - 1;
		}
	}
	k = 0;
	for (long i = 0; i < *n; i++)
		if (!gone[i])
			specs[k++] = specs[i];
	*n = k;
	free(idx);
	free(gone);
	return merged;
}

int hb_replay_read(struct hb_catalog *cat, const struct hb_cluster *cl, const char *path,
		   enum hb_trace_format fmt, const struct hb_trace_options *topt, const struct hb_replay_opts *ro,
		   struct hb_replay *rp, struct hb_error *err)
{
	struct hb_trace_reader *r;
	struct hb_trace_stats stats;
	struct hb_jobspec *specs = NULL;
	enum hb_trace_format got;
	long n = 0, merged = 0;
	int rc;

	memset(rp, 0, sizeof(*rp));
	if (hb_trace_open(path, fmt, topt, &r, err) < 0)
		return -1;
	got = hb_trace_get_format(r);
	rc = hb_trace_drain(r, &specs, &n, err);
	stats = *hb_trace_get_stats(r);
	hb_trace_close(r);
	if (rc < 0)
		return -1;
	if (hb_replay_load_models(cat, specs, n, got, path, 1, err) < 0) {
		free(specs);
		return -1;
	}
	if (got == HB_TRACE_EASYSCALE_WORKLOAD && (merged = artifact_order(specs, &n)) < 0) {
		free(specs);
		return hb_runtime_error(err, "%s: out of memory", path);
	}
	rc = hb_replay_from_specs(cat, cl, specs, n, got, path, ro, rp, err);
	free(specs);
	if (rc < 0)
		return -1;
	rp->stats = stats;
	rp->merged = merged;
	return 0;
}

int hb_replay_build(struct hb_sim *sim, const struct hb_replay *rp, const struct hb_agent_ops *agent,
		    const char *where, struct hb_error *err)
{
	for (long k = 0; k < rp->njobs; k++) {
		const struct hb_replay_job *j = &rp->jobs[k];
		int id;

		if (hb_sim_add_job(sim, j->model, agent, j->arrival_s, &id, err) < 0) {
			char pos[512];

			hb_replay_where(rp->format, where, j->record, pos, sizeof(pos));
			hb_error_prefix(err, "%s: job '%s'", pos, j->name);
			return -1;
		}
		if (j->name[0])
			hb_strlcpy(sim->jobs[id].name, j->name, sizeof(sim->jobs[id].name));
		hb_sim_job_request(&sim->jobs[id], j->gpus, j->batch);
		hb_sim_job_prefs(&sim->jobs[id], j->gpu_type, j->d2);
		hb_strlcpy(sim->jobs[id].app, j->app, sizeof(sim->jobs[id].app));
		if (rp->duration_from_trace)
			sim->jobs[id].duration_s = j->duration_s;
		if (j->epochs > 0 && hb_sim_job_epochs(&sim->jobs[id], j->epochs, err) < 0) {
			char pos[512];

			hb_replay_where(rp->format, where, j->record, pos, sizeof(pos));
			hb_error_prefix(err, "%s: field 'epochs'", pos);
			return -1;
		}
	}
	return 0;
}
