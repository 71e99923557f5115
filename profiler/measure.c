/*
 * measure.c: a measuring profile run (measure.h).
 *
 * Order of work, per model: build the workload, search memory over the
 * local-batch grid, store memory and bucket rows (one transaction), then
 * measure each compute point and store it (one transaction each).
 *
 * Default local batches.  Memory: every multiple of min_lbs up to the
 * model's largest global batch (hb_analytic_lbs_grid, geometric above 128
 * steps), as JABAS's memory profiler walks them.  Compute: on cuda every
 * batch that fits, thinned to 16 on a geometric grid when more fit (the
 * solvers interpolate between local batches); on cpu min_lbs x {1, 2}
 * where they fit, because a CPU iteration is about a thousand times a
 * GPU's and the cpu backend exists to run the same code paths, not to
 * map a CPU.  --local-bs overrides both.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analytic.h"     /* defines: hb_analytic_lbs_grid */
#include "hb_config.h"
#include "interrupt.h"      /* defines: hb_interrupted, hb_interrupt_error */
#include "measure.h"
#include "strutil.h"

/* CUPTI: the tracer is wired in when the toolkit is (cupti.c). */
#define MEASURE_TRACE HB_HAVE_GPU
#if MEASURE_TRACE
#include <cupti_version.h> /* defines: cuptiGetVersion */
#include "cupti.h"         /* defines: hb_cupti_init, hb_cupti_shutdown */
#include "trace.h"         /* defines: hb_trace */
#endif

#define CUPTI_DEVICE_BUFFER (8u << 20)  /* CUPTI's device buffer, bytes: set before the context exists */
#define COMPUTE_LBS_MAX 16

int hb_measure_vsw_set(int n_max, int out[3])
{
	int n = 0;

	if (n_max < 1)
		return 0;
	out[n++] = 1;
	if (n_max > 3)
		out[n++] = n_max / 2;
	if (n_max > 1)
		out[n++] = n_max;
	return n;
}

void hb_measure_scaled_model(const struct hb_model *m, const struct hb_workload *w, struct hb_model *out)
{
	*out = *m;
	out->params = w->params;
	out->flops_per_sample = w->flops_per_sample;
	out->act_bytes_per_sample = 4.0 * hb_workload_saved_floats(w);
	out->param_bytes = 4;
	out->nbuckets = w->nbuckets;
	for (int i = 0; i < w->nbuckets; i++)
		out->buckets[i] = w->buckets[i];
}

/* Which local batches get compute points: indices into the memory grid. */
static int compute_points(const struct hb_measure_req *req, const struct hb_model *m, const int *lbs,
			  const int *n_max, int nl, int *pick)
{
	int feasible = 0, n = 0;

	while (feasible < nl && n_max[feasible] > 0)
		feasible++;
	if (req->nlbs > 0 || (strcmp(req->backend, "cpu") != 0 && feasible <= COMPUTE_LBS_MAX)) {
		for (int i = 0; i < feasible; i++)
			pick[n++] = i;
		return n;
	}
	if (strcmp(req->backend, "cpu") == 0) {
		for (int i = 0; i < feasible; i++)
			if (lbs[i] == m->min_lbs || lbs[i] == 2 * m->min_lbs)
				pick[n++] = i;
		return n;
	}
	/* geometric thinning to COMPUTE_LBS_MAX points, ends included */
	for (int k = 0; k < COMPUTE_LBS_MAX; k++) {
		double f = (double)k / (COMPUTE_LBS_MAX - 1);
		int i = (int)lround(pow((double)feasible, f)) - 1;

		if (i < 0)
			i = 0;
		if (n == 0 || i > pick[n - 1])
			pick[n++] = i;
	}
	return n;
}

/* The memory grid: --local-bs, or the analytic generator's grid. */
static int memory_grid(const struct hb_measure_req *req, const struct hb_model *m, int *lbs, struct hb_error *err)
{
	if (req->nlbs > 0) {
		if (req->nlbs > HB_MEASURE_MAX_LBS)
			return hb_input_error(err, "--local-bs: at most %d values", HB_MEASURE_MAX_LBS);
		for (int i = 0; i < req->nlbs; i++) {
			if (req->lbs[i] < 1 || (i > 0 && req->lbs[i] <= req->lbs[i - 1]))
				return hb_input_error(err, "--local-bs: values must be positive and ascending (%d)",
						      req->lbs[i]);
			lbs[i] = req->lbs[i];
		}
		return req->nlbs;
	}
	return hb_analytic_lbs_grid(m, lbs, HB_MEASURE_MAX_LBS);
}

struct ctx {
	const struct hb_catalog *cat;
	const struct hb_measure_req *req;
	const struct hb_device_ops *ops;
	struct hb_device *dev;
	struct hb_profdb *db;
	struct hb_measure_stats *stats;
	const char *gpu;
	int cap;
	int warmup, iters;
	int trace;                    /* CUPTI is on for this run */
	struct hb_device *ndev[HB_MEASURE_MAX_SHARE]; /* the neighbours' devices (req->share - 1) */
	int nneigh;
	char trace_note[160];         /* why CUPTI is off when it was asked for */
};

/* Memory rows of an earlier run of this source, for --resume. */
static int resume_memory(struct ctx *c, const char *model, int *lbs, int *n_max, int *n, struct hb_error *err)
{
	struct hb_memory_row *rows;
	int nr, k = 0;

	*n = 0;
	if (hb_profdb_get_memory(c->db, c->gpu, model, &rows, &nr, err) < 0)
		return -1;
	for (int i = 0; i < nr && k < HB_MEASURE_MAX_LBS; i++)
		if (strcmp(rows[i].source, c->stats->source) == 0) {
			lbs[k] = rows[i].local_bs;
			n_max[k++] = rows[i].max_vsw;
		}
	free(rows);
	*n = k;
	return 0;
}

static int store_memory(struct ctx *c, const struct hb_workload *w, const int *lbs, const int *n_max, int n,
			struct hb_error *err)
{
	if (hb_profdb_begin(c->db, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct hb_memory_row r = { .local_bs = lbs[i], .max_vsw = n_max[i] };

		hb_strlcpy(r.gpu, c->gpu, sizeof(r.gpu));
		hb_strlcpy(r.model, w->model, sizeof(r.model));
		hb_strlcpy(r.source, c->stats->source, sizeof(r.source));
		if (hb_profdb_put_memory(c->db, &r, err) < 0)
			goto fail;
	}
	if (hb_profdb_put_buckets(c->db, w->model, w->buckets, w->nbuckets, c->stats->source, err) < 0 ||
	    hb_profdb_commit(c->db, err) < 0)
		goto fail;
	c->stats->memory_rows += n;
	c->stats->bucket_rows += w->nbuckets;
	return 0;
fail:
	hb_profdb_rollback(c->db);
	return -1;
}

/* A neighbour of a shared measurement: the same work on its own device
 * until told to stop. */
struct neighbour {
	const struct hb_device_ops *ops;
	struct hb_device *dev;
	const struct hb_workload *w;
	struct hb_runner_opts o;
	int rc;
	struct hb_error err;
};

static void *neighbour_main(void *arg)
{
	struct neighbour *nb = arg;
	struct hb_runner_result res;

	nb->rc = hb_runner_measure(nb->ops, nb->dev, nb->w, &nb->o, &res, &nb->err);
	return NULL;
}

/* hb_runner_measure with c->nneigh neighbours running the same point
 * beside it (hb_measure_req share).  They start first; the measured run's
 * warm-up covers their set-up. */
static int measure_shared(struct ctx *c, const struct hb_workload *w, const struct hb_runner_opts *o,
			  struct hb_runner_result *res, struct hb_error *err)
{
	struct neighbour nb[HB_MEASURE_MAX_SHARE];
	pthread_t th[HB_MEASURE_MAX_SHARE];
	_Atomic int stop = 0;
	int started = 0, rc;

	for (int k = 0; k < c->nneigh; k++) {
		nb[k] = (struct neighbour){ .ops = c->ops, .dev = c->ndev[k], .w = w, .o = *o };
		nb[k].o.seed = o->seed + 1000003u * (uint64_t)(k + 1);
		nb[k].o.iters = 1 << 30;
		nb[k].o.trace = 0;
		nb[k].o.stop = &stop;
		if (pthread_create(&th[k], NULL, neighbour_main, &nb[k]) != 0)
			break;
		started++;
	}
	rc = started == c->nneigh ? hb_runner_measure(c->ops, c->dev, w, o, res, err)
				  : hb_runtime_error(err, "profile --share: cannot start neighbour %d", started + 1);
	atomic_store(&stop, 1);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	for (int k = 0; k < started && rc >= 0; k++)
		if (nb[k].rc != 0) {
			if (nb[k].rc == HB_DEV_NOMEM)
				return hb_runtime_error(err, "%s: neighbour %d of --share does not fit its device", w->model,
							k + 1);
			*err = nb[k].err;
			return -1;
		}
	return rc;
}

static int measure_point(struct ctx *c, const struct hb_workload *w, int lbs, int n, struct hb_error *err)
{
	const struct hb_measure_req *req = c->req;
	struct hb_runner_opts o = { .local_bs = lbs, .n_vsw = n, .warmup = c->warmup, .iters = c->iters,
				    .seed = req->seed, .trace = c->trace };
	struct hb_runner_result res;
	struct hb_compute_row row = { .local_bs = lbs, .n_vsw = n, .run_id = c->stats->run_id };
	const double *t;
	int rc, found = 0;

	/* SIGINT/SIGTERM: stop between points; those committed stay (--resume) */
	if (hb_interrupted())
		return hb_interrupt_error(err, "profile");
	hb_strlcpy(row.gpu, c->gpu, sizeof(row.gpu));
	hb_strlcpy(row.model, w->model, sizeof(row.model));
	hb_strlcpy(row.source, c->stats->source, sizeof(row.source));
	if (c->stats->resumed &&
	    hb_profdb_has_compute(c->db, c->stats->run_id, c->gpu, w->model, lbs, n, &found, err) < 0)
		return -1;
	if (found) {
		c->stats->skipped++;
		if (req->hooks.on_point)
			req->hooks.on_point(req->hooks.ctx, &row, NULL, 0);
		return 0;
	}
	rc = c->nneigh > 0 ? measure_shared(c, w, &o, &res, err) : hb_runner_measure(c->ops, c->dev, w, &o, &res, err);
	if (rc == HB_DEV_NOMEM)
		return hb_runtime_error(err, "%s on %s: local batch %d with %d VSWs fitted in the memory search but "
					"not when measured; the memory search missed an allocation", w->model, c->gpu,
					lbs, n);
	if (rc < 0)
		return -1;
	t = res.traced ? res.cupti_s : res.events_s;
	row.data_s = t[HB_PH_DATA];
	row.fwd_s = t[HB_PH_FWD];
	row.bwd_s = t[HB_PH_BWD];
	row.update_s = t[HB_PH_UPDATE];
	row.copy_s = t[HB_PH_COPY];
	row.total_s = res.wall_s;
	row.mem_bytes = res.mem_bytes;
	c->stats->dropped += res.dropped;
	if (res.traced && res.max_gap > c->stats->max_gap)
		c->stats->max_gap = res.max_gap;
	if (hb_profdb_begin(c->db, err) < 0)
		return -1;
	if (hb_profdb_put_compute(c->db, &row, err) < 0 || hb_profdb_commit(c->db, err) < 0) {
		hb_profdb_rollback(c->db);
		return -1;
	}
	c->stats->compute_rows++;
	if (req->hooks.on_point)
		req->hooks.on_point(req->hooks.ctx, &row, &res, 1);
	return 0;
}

/* The memory search's trials ran traced but untagged: drop their records
 * so the first measured point's trace holds only its own. */
static int discard_trace(struct ctx *c, struct hb_error *err)
{
#if MEASURE_TRACE
	struct hb_trace tr;
	int rc;

	if (!c->trace)
		return 0;
	hb_trace_init(&tr);
	rc = c->ops->device_sync(c->dev, err) < 0 || hb_cupti_flush(err) < 0 || hb_cupti_take(&tr, err) < 0 ? -1 : 0;
	c->stats->dropped += tr.dropped + tr.untimed;
	hb_trace_free(&tr);
	return rc;
#else
	(void)c;
	(void)err;
	return 0;
#endif
}

static int measure_model(struct ctx *c, const struct hb_model *m, struct hb_error *err)
{
	const struct hb_measure_req *req = c->req;
	struct hb_workload w = { 0 };
	int lbs[HB_MEASURE_MAX_LBS], n_max[HB_MEASURE_MAX_LBS], pick[HB_MEASURE_MAX_LBS];
	int nl = 0, nsearched = 0, npick, total = 0, done = 0, rc = -1;

	if (hb_workload_build(m, req->scale, &w, err) < 0)
		return -1;
	if (c->stats->resumed && resume_memory(c, m->name, lbs, n_max, &nsearched, err) < 0)
		goto out;
	if (nsearched == 0) {
		nl = memory_grid(req, m, lbs, err);
		if (nl < 0)
			goto out;
		if (hb_memsearch(c->ops, c->dev, &w, lbs, nl, c->cap, strcmp(req->backend, "cpu") == 0 ? 0 : 1,
				 req->seed, n_max, &nsearched, NULL, NULL, err) < 0)
			goto out;
		if (store_memory(c, &w, lbs, n_max, nsearched, err) < 0)
			goto out;
		if (discard_trace(c, err) < 0)
			goto out;
	}
	if (req->hooks.on_memory)
		req->hooks.on_memory(req->hooks.ctx, &w, lbs, n_max, nsearched);
	c->stats->models++;
	if (nsearched == 0 || n_max[0] == 0) {
		c->stats->infeasible++;
		rc = 0;
		goto out;
	}
	npick = compute_points(req, m, lbs, n_max, nsearched, pick);
	for (int k = 0; k < npick; k++) {
		int set[3];

		total += hb_measure_vsw_set(n_max[pick[k]], set);
	}
	for (int k = 0; k < npick; k++) {
		int set[3], ns = hb_measure_vsw_set(n_max[pick[k]], set);

		for (int j = 0; j < ns; j++) {
			if (measure_point(c, &w, lbs[pick[k]], set[j], err) < 0) {
				hb_error_prefix(err, "%s, local batch %d, %d VSWs", m->name, lbs[pick[k]], set[j]);
				goto out;
			}
			if (req->hooks.on_progress)
				req->hooks.on_progress(req->hooks.ctx, m->name, ++done, total);
		}
	}
	rc = 0;
out:
	hb_workload_free(&w);
	return rc;
}

/* Which catalog GPU the device's rows go under. */
static int map_gpu(const struct hb_catalog *cat, const struct hb_measure_req *req, const struct hb_device_info *info,
		   const struct hb_gpu **out, struct hb_error *err)
{
	const char *name = req->gpu_name ? req->gpu_name : strcmp(info->backend, "cpu") == 0 ? "cpu" : info->name;

	*out = hb_catalog_gpu(cat, name);
	if (*out)
		return 0;
	if (req->gpu_name)
		return hb_input_error(err, "--gpu-name '%s': not a catalog GPU (see 'hetbatch catalog gpus')", name);
	return hb_input_error(err, "device '%s' is not in the catalog under any name or alias; say which catalog "
			      "GPU it is with --gpu-name NAME, or add it (hetbatch catalog gpus)", info->name);
}

int hb_measure_run(const struct hb_catalog *cat, const struct hb_measure_req *req, struct hb_profdb *db,
		   struct hb_measure_stats *stats, struct hb_error *err)
{
	const struct hb_device_ops *ops = req->backend ? hb_device_backend(req->backend) : NULL;
	const struct hb_model *models[256];
	const struct hb_gpu *g = NULL;
	struct hb_device_config cfg = { .index = req->device, .mem_limit_bytes = req->mem_limit };
	struct hb_device_info info;
	struct hb_run_info run = { 0 };
	struct ctx c = { .cat = cat, .req = req, .db = db, .stats = stats };
	const char *why = NULL;
	int nm = 0, rc = -1;

	memset(stats, 0, sizeof(*stats));
	if (!ops) {
		if (req->backend && strcmp(req->backend, "cuda") == 0)
			return hb_runtime_error(err, "--backend cuda: this hetbatch was built without the CUDA toolkit "
						"(meson -Dgpu=enabled needs it at $CUDA_HOME or /usr/local/cuda)");
		return hb_input_error(err, "--backend '%s': unknown (built in: %s)", req->backend ? req->backend : "",
				      hb_device_backend_names());
	}
	if (!(req->scale > 0 && req->scale <= 1))
		return hb_input_error(err, "--scale %g: must be in (0, 1]", req->scale);
	if (req->nmodels > (int)(sizeof(models) / sizeof(models[0])))
		return hb_input_error(err, "--models: at most %d", (int)(sizeof(models) / sizeof(models[0])));
	for (int i = 0; i < (req->nmodels > 0 ? req->nmodels : cat->nmodels); i++) {
		const struct hb_model *m = req->nmodels > 0 ? hb_catalog_model(cat, req->models[i]) : &cat->models[i];

		if (!m)
			return hb_input_error(err, "--models: unknown model '%s' (see 'hetbatch catalog models')",
					      req->models[i]);
		models[nm++] = m;
	}
	if (!ops->available(&why))
		return hb_runtime_error(err, "%s", why ? why : "backend not available");
	if (strcmp(ops->name, "cpu") == 0 && !(cfg.mem_limit_bytes > 0)) {
		/* The budget defaults to the memory of the GPU the rows go under. */
		const struct hb_gpu *target = hb_catalog_gpu(cat, req->gpu_name ? req->gpu_name : "cpu");

		if (!target)
			return hb_input_error(err, "--gpu-name '%s': not a catalog GPU (see 'hetbatch catalog gpus')",
					      req->gpu_name);
		cfg.mem_limit_bytes = target->mem_bytes;
	}
#if MEASURE_TRACE
	if (strcmp(ops->name, "cuda") == 0 && req->trace) {
		struct hb_error terr = { 0 };

		/* CUPTI can be refused (profiling restricted to admins, another
		 * tracer attached): time with events and say so in the run row. */
		c.trace = hb_cupti_init(CUPTI_DEVICE_BUFFER, &terr) == 0;
		if (!c.trace)
			snprintf(c.trace_note, sizeof(c.trace_note), "; CUPTI off: %.120s", terr.msg);
	}
#endif
	if (req->share > 1 && (strcmp(ops->name, "cpu") != 0 || req->share > HB_MEASURE_MAX_SHARE))
		return hb_input_error(err, "--share %d: the cpu backend only, at most %d copies", req->share,
				      HB_MEASURE_MAX_SHARE);
	if (ops->open(&cfg, &c.dev, err) < 0)
		return -1;
	c.ops = ops;
	for (int k = 0; k + 1 < req->share; k++) {
		if (ops->open(&cfg, &c.ndev[k], err) < 0)
			goto out;
		c.nneigh++;
	}
	if (ops->info(c.dev, &info, err) < 0 || map_gpu(cat, req, &info, &g, err) < 0)
		goto out;
	c.gpu = g->name;
	/* sharing copies count as devices of this host */
	c.cap = req->max_vsw > 0 ? req->max_vsw
				 : info.host_cores / (info.ndevices > 0 ? info.ndevices : 1) / (req->share > 1 ? req->share : 1);
	if (req->max_vsw <= 0 && c.cap > 10)
		c.cap = 10;  /* PyTorch's autograd pool limit, as the artifact caps it */
	if (c.cap < 1)
		c.cap = 1;
	if (c.cap > HB_RUNNER_MAX_VSW)
		c.cap = HB_RUNNER_MAX_VSW;
	c.warmup = req->warmup >= 0 ? req->warmup : strcmp(ops->name, "cpu") == 0 ? 1 : 10;
	c.iters = req->iters >= 0 ? req->iters : strcmp(ops->name, "cpu") == 0 ? 5 : 90;
	if (c.iters < 1) {
		hb_input_error(err, "--iters %d: at least one measured iteration", c.iters);
		goto out;
	}
	hb_strlcpy(stats->gpu, g->name, sizeof(stats->gpu));
	hb_strlcpy(stats->device, info.name, sizeof(stats->device));
	hb_strlcpy(stats->source, strcmp(ops->name, "cpu") == 0 ? "cpu" : c.trace ? "cupti" : "events",
		   sizeof(stats->source));

	hb_strlcpy(run.kind, "profile", sizeof(run.kind));
	if (gethostname(run.host, sizeof(run.host)) != 0)
		hb_strlcpy(run.host, "unknown", sizeof(run.host));
	run.host[sizeof(run.host) - 1] = '\0';
	if (req->share > 1)
		snprintf(run.device, sizeof(run.device), "%.100s (1 of %d sharing)", info.name, req->share);
	else
		hb_strlcpy(run.device, info.name, sizeof(run.device));
	hb_strlcpy(run.driver, info.driver, sizeof(run.driver));
	hb_strlcpy(run.cuda, info.runtime, sizeof(run.cuda));
	hb_strlcpy(run.backend, ops->name, sizeof(run.backend));
	hb_strlcpy(run.gpu, g->name, sizeof(run.gpu));
	run.scale = req->scale;
	hb_utc_iso_now(run.started_at, sizeof(run.started_at));
#if MEASURE_TRACE
	if (strcmp(stats->source, "cupti") == 0) {
		uint32_t v = 0;

		if (cuptiGetVersion(&v) == CUPTI_SUCCESS)
			snprintf(run.cupti, sizeof(run.cupti), "%u", v);
	}
#endif
	snprintf(run.notes, sizeof(run.notes), "%.60s; VSW cap %d%s; warm-up %d, measured %d; memory %.0f MiB%.100s",
		 info.blas, c.cap, req->max_vsw > 0 ? " (--max-vsw)" : " (min(cores/devices, 10))", c.warmup,
		 c.iters, cfg.mem_limit_bytes > 0 ? cfg.mem_limit_bytes / 1048576.0 : info.total_bytes / 1048576.0,
		 c.trace_note);
	if (req->resume &&
	    hb_profdb_find_profile_run(db, run.backend, run.device, run.gpu, run.scale, &stats->run_id, err) < 0)
		goto out;
	stats->resumed = stats->run_id != 0;
	if (!stats->resumed) {
		if (hb_profdb_begin(db, err) < 0)
			goto out;
		if (hb_profdb_add_run(db, &run, &stats->run_id, err) < 0 || hb_profdb_commit(db, err) < 0) {
			hb_profdb_rollback(db);
			goto out;
		}
	}
	if (req->hooks.on_device)
		req->hooks.on_device(req->hooks.ctx, &info, g->name, c.cap, stats->run_id);
	for (int i = 0; i < nm; i++)
		if (measure_model(&c, models[i], err) < 0)
			goto out;
	rc = 0;
out:
	if (stats->run_id && stats->dropped > 0) {
		struct hb_error e2 = { 0 };

		if (hb_profdb_set_run_dropped(db, stats->run_id, stats->dropped, &e2) < 0 && rc == 0) {
			*err = e2;
			rc = -1;
		}
	}
	ops->close(c.dev);
	for (int k = 0; k < c.nneigh; k++)
		ops->close(c.ndev[k]);
#if MEASURE_TRACE
	if (c.trace)
		hb_cupti_shutdown();
#endif
	return rc;
}
