/*
 * live.c: one rank of a live run (live.h): open, blocks of iterations of
 * one configuration, in-place reconfiguration, checkpoints.
 *
 * The VSWs of a micro-step run on threads (one per VSW, each with its own
 * stream), joined before the next micro-step.  In the last micro-step the
 * main thread does IIDP's main-VSW work as backward proceeds
 * (live_overlap.c): each bucket, as soon as every VSW has filled it, is
 * aggregated, scaled and summed over the ranks (MPI on cpu, NCCL on cuda),
 * and with overlapping weight sync updated as its sum ends; the perf model
 * overlaps the same way, so only the last bucket's sum is exposed.
 *
 * Data: with the teacher task, the iteration's batches (teacher forwards)
 * are made before its clock starts, as a prefetching loader has them
 * ready, so the timed data phase stays the host-to-device copy.  Gradient
 * metrics (live.h hb_live_metric) run after the clock stops.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "device.h"
#include "gradstats.h"     /* defines: hb_gradstats_cosine, hb_gradstats_sqnorm, hb_gradstats_noise_scale */
#include "live.h"
#include "live_overlap.h"
#include "live_signal.h"
#include "progress.h"      /* defines: hb_now */
#include "strutil.h"
#include "workload.h"

struct vsw_job {
	struct hb_wl_state *st;
	const struct hb_device_ops *ops;
	struct hb_stream *stream;
	int vsw;
	long batch;              /* data batch index */
	int accumulate;
	int rc;
	struct hb_error err;
};

static void *vsw_step(void *arg)
{
	struct vsw_job *j = arg;

	j->rc = hb_wl_data(j->st, j->vsw, j->batch, &j->err);
	if (j->rc == 0)
		j->rc = hb_wl_forward(j->st, j->vsw, &j->err);
	if (j->rc == 0)
		j->rc = hb_wl_backward_acc(j->st, j->vsw, j->accumulate, &j->err);
	if (j->rc == 0)
		j->rc = j->ops->stream_sync(j->stream, &j->err);
	return NULL;
}

/* One micro-step on every VSW, in parallel. */
static int micro_step(struct hb_wl_state *st, const struct hb_device_ops *ops, struct hb_stream **streams, int n,
		      long batch, int accumulate, struct hb_error *err)
{
	struct vsw_job jobs[64];
	pthread_t th[64];
	int started = 0, rc = 0;

	for (int i = 0; i < n; i++) {
		jobs[i] = (struct vsw_job){ .st = st, .ops = ops, .stream = streams[i], .vsw = i, .batch = batch,
					    .accumulate = accumulate };
		if (i > 0 && pthread_create(&th[i], NULL, vsw_step, &jobs[i]) != 0) {
			jobs[i].rc = hb_runtime_error(&jobs[i].err, "live: cannot start VSW thread %d", i);
			break;
		}
		started = i + 1;
	}
	if (started >= 1)
		vsw_step(&jobs[0]);
	for (int i = 1; i < started; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n && rc == 0; i++)
		if (jobs[i].rc < 0) {
			*err = jobs[i].err;
			rc = -1;
		}
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------------------ */
/* Watchdog: a rank that stops making progress in its own work (it hangs)
 * says so in one line naming itself and its host and exits non-zero;
 * mpirun then ends the other ranks.  A rank waiting for the others (in a
 * collective) leaves that to the team's watch (allreduce.h), which names
 * the rank they wait for; the watchdog is its backstop there.  A thread
 * per rank, woken every tenth of a second; the rank beats at every
 * phase.  The same thread acts on SIGINT, SIGTERM and SIGHUP
 * (live_signal.h), so it runs with --timeout 0 too. */

struct watchdog {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	double last;             /* hb_now() of the last beat */
	const char *phase;       /* what the rank was doing then */
	int waits;               /* 1: that phase waits for the other ranks (a collective) */
	long iter;
	double timeout_s;        /* 0: off */
	int stop, started;
	int rank;
	int silent;              /* 1: a driver around mpirun reports signals (hb_live_opts) */
	char host[64];
};

/* "iteration 5, forward/backward": where the rank is (the mutex held). */
static void where_locked(const struct watchdog *wd, char *buf, size_t n)
{
	snprintf(buf, n, "iteration %ld, %s", wd->iter, wd->phase);
}

static void beat(struct watchdog *wd, const char *phase, int waits, long iter)
{
	if (!wd->started)
		return;
	pthread_mutex_lock(&wd->mu);
	wd->last = hb_now();
	wd->phase = phase;
	wd->waits = waits;
	wd->iter = iter;
	pthread_mutex_unlock(&wd->mu);
}

static void *watch(void *arg)
{
	struct watchdog *wd = arg;

	pthread_mutex_lock(&wd->mu);
	while (!wd->stop) {
		struct timespec ts;

		double limit = wd->timeout_s;

		/* A rank waiting in a collective is usually waiting for the one
		 * that is stuck: the team's watch names that one after the
		 * timeout and its grace; this is the backstop after its own. */
		if (wd->waits)
			limit = 2 * wd->timeout_s + HB_AR_GRACE_S + 2.0;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&wd->cv, &wd->mu, &ts);
		if (!wd->stop && hb_live_signal()) {
			char where[160];

			where_locked(wd, where, sizeof(where));
			hb_live_signal_stop(wd->rank, !wd->silent, where);
		}
		if (!wd->stop && wd->timeout_s > 0 && hb_now() - wd->last > limit) {
			fprintf(stderr, "hetbatch: error: live: rank %d on %s made no progress for %.0f s (iteration %ld, "
				"%s): a rank died or hangs; stopping the run\n", wd->rank, wd->host, wd->timeout_s,
				wd->iter, wd->phase);
			fflush(stderr);
			_exit(1);
		}
	}
	pthread_mutex_unlock(&wd->mu);
	return NULL;
}

static void watchdog_start(struct watchdog *wd, double timeout_s, int rank, int silent)
{
	memset(wd, 0, sizeof(*wd));
	wd->timeout_s = timeout_s > 0 ? timeout_s : 0;
	wd->rank = rank;
	wd->silent = silent;
	wd->phase = "setup";
	if (gethostname(wd->host, sizeof(wd->host) - 1) != 0)
		snprintf(wd->host, sizeof(wd->host), "unknown");
	pthread_mutex_init(&wd->mu, NULL);
	pthread_cond_init(&wd->cv, NULL);
	wd->last = hb_now();
	wd->started = pthread_create(&wd->th, NULL, watch, wd) == 0;
}

static void watchdog_stop(struct watchdog *wd)
{
	if (!wd->started)
		return;
	pthread_mutex_lock(&wd->mu);
	wd->stop = 1;
	pthread_cond_signal(&wd->cv);
	pthread_mutex_unlock(&wd->mu);
	pthread_join(wd->th, NULL);
	pthread_cond_destroy(&wd->cv);
	pthread_mutex_destroy(&wd->mu);
}

/* Fault injection for tests of the above: HB_LIVE_FAULT=kill:RANK:ITER
 * (the rank dies by SIGKILL), hang:RANK:ITER (it stops forever) or
 * stop:RANK:ITER (SIGSTOP: the whole process, watchdog too, stands still)
 * where that iteration's forward/backward begins; HB_LIVE_READY=PATH: rank
 * 0 creates PATH where iteration 1 begins. */
static void inject_fault(int rank, long iter)
{
	const char *f = getenv("HB_LIVE_FAULT");
	char kind[8];
	int r;
	long it;

	const char *ready = getenv("HB_LIVE_READY");

	/* tests that signal a run wait for this file: training has begun */
	if (ready && *ready && rank == 0 && iter == 1) {
		FILE *fp = fopen(ready, "w");

		if (fp)
			fclose(fp);
	}
	if (!f || sscanf(f, "%7[a-z]:%d:%ld", kind, &r, &it) != 3 || r != rank || it != iter)
		return;
	if (strcmp(kind, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(kind, "stop") == 0)
		raise(SIGSTOP);
	if (strcmp(kind, "hang") == 0)
		for (;;)
			pause();
}

/* One rank of a live run (live.h struct hb_live_rank). */
struct hb_live_rank {
	const struct hb_ar_team *t;
	const struct hb_catalog *cat;
	struct hb_live_plan p;       /* the configuration running now; slots not kept (p.slots NULL) */
	struct hb_live_slot slot;    /* this rank's GPU of it */
	struct hb_live_opts o;
	const struct hb_device_ops *ops;
	struct hb_device *dev;
	struct hb_stream *streams[HB_LIVE_MAX_VSW];
	struct hb_wl_state *st;
	struct hb_workload w;
	double mem_limit;            /* the device's budget (cpu backend), bytes */
	long iter;                   /* iterations completed (counts on across restarts) */
	double loss_first, loss_last;
	struct watchdog wd;
	struct hb_live_result *r;    /* the block running now (rank 0 records metrics in it) */
	float *snap;                 /* metrics: VSW 0's gradients before local aggregation (host) */
	float *h1, *h2, *tmp;        /* metrics: the halves' gradient sums, a read buffer (host) */
	float *prev;                 /* metrics, one worker in all: the global gradient of iteration prev_iter */
	long prev_iter;              /* -1: none kept */
	struct hb_stream *comm;      /* the main thread's stream: aggregation, scaling, optimizer */
	struct hb_ar_reducer *red;   /* the bucket sums over the ranks */
	long *boff, *blen;           /* bucket k's slice of the gradient buffer, reduction order */
	int nbuckets;
};

/* Bucket k's slice of the parameter buffer: buckets fill from the end
 * (reduction order); the first bucket of the forward order (the last
 * reduced) also takes the alignment padding at the buffer's start. */
static void bucket_slice(const struct hb_workload *w, long nfloats, int k, long *off, long *n)
{
	long end = nfloats, start;

	for (int i = 0; i < k; i++)
		end -= (long)(w->buckets[i] / 4);
	start = k == w->nbuckets - 1 ? 0 : end - (long)(w->buckets[k] / 4);
	if (start < 0)
		start = 0;
	*off = start;
	*n = end - start;
}

/* The data batch of micro-step ga of iteration it: a function of the
 * iteration alone, so a restart or a new configuration at iteration it
 * sees the batches a continuous run would (stride odd so the fixed task's
 * two batches still alternate by iteration). */
static long data_index(long it, int ga)
{
	return it * HB_LIVE_DATA_STRIDE + ga;
}

/* One iteration: the micro-steps before the last on the VSW threads, then
 * the last one with the bucket all-reduces overlapped with its backward
 * (live_overlap.h), then the weight copy to the other VSWs.  iter_s: the
 * whole iteration; compute_s: until backward had finished on every VSW
 * (what follows is the exposed all-reduce, the optimizer and the copies);
 * both without the metrics snapshot's copy. */
static int one_iteration(struct hb_live_rank *c, long it, int metrics, double *iter_s, double *compute_s,
			 struct hb_error *err)
{
	const struct hb_live_slot *s = &c->slot;
	struct hb_live_step ls = {
		.st = c->st, .ops = c->ops, .streams = c->streams, .n_vsw = s->n_vsw, .comm = c->comm, .red = c->red,
		.boff = c->boff, .blen = c->blen, .nbuckets = c->nbuckets,
		/* this rank's share of the global mean: its micro-batch means
		 * carry local_bs samples each out of global_batch */
		.share = (float)s->local_bs / (float)c->p.global_batch,
		.ows = c->p.ows, .step = hb_wl_step(c->st) + 1, .batch = data_index(it, s->n_ga),
		.accumulate = s->n_ga > 0, .snap = metrics ? c->snap : NULL,
	};
	struct hb_live_step_times tm;
	double t0;
	int rc = 0;

	if (c->o.teacher) {
		beat(&c->wd, "data prefetch", 0, it);
		if (hb_wl_prefetch(c->st, data_index(it, 0), s->n_ga + 1, err) < 0)
			ls.failed = 1;
	}
	t0 = hb_now();
	beat(&c->wd, "forward/backward", 0, it);
	inject_fault(c->t->rank, it);
	for (int ga = 0; ga < s->n_ga && !ls.failed; ga++)
		if (micro_step(c->st, c->ops, c->streams, s->n_vsw, data_index(it, ga), ga > 0, err) < 0)
			ls.failed = 1;
	/* Even after a failure: the peers' bucket sums need this rank's. */
	beat(&c->wd, "backward and gradient all-reduce", 1, it);
	if (hb_live_last_step(&ls, &tm, err) < 0)
		return -1;
	for (int i = 1; i < s->n_vsw && rc == 0; i++)
		if (hb_wl_copy(c->st, i, err) < 0 || c->ops->stream_sync(c->streams[i], err) < 0)
			rc = -1;
	*iter_s = hb_now() - t0 - tm.snap_s;
	*compute_s = tm.backward_done_s - t0 - tm.snap_s;
	return rc;
}

/* The gradient metrics of iteration it (live.h hb_live_metric), after it.
 * Inputs on each rank: VSW i's gradient v_i, the sum of its n_ga + 1
 * micro-batch means (VSW 0's copied by one_iteration before aggregation
 * overwrote it, the others intact until the next backward), and G, the
 * global mean gradient the optimizer used (the main VSW's buffer after the
 * all-reduce; the optimizer does not change it).  Halves get share * v_i,
 * so H1 + H2 = G.  Noise scale: VSW i's mean gradient m_i = v_i / (n_ga + 1)
 * of b_i = local_bs (n_ga + 1) samples; each rank's (sum |m_i|^2, VSWs,
 * sum 1/b_i, sum b_i) gathered on rank 0; the big batch's mean gradient is
 * G scaled by global_batch / sum b_i (1 when the plan is consistent). */
static int gradient_metrics(struct hb_live_rank *c, long it, struct hb_error *err)
{
	const struct hb_live_slot *s = &c->slot;
	const struct hb_ar_team *t = c->t;
	long n = hb_wl_param_floats(c->st);
	double share = (double)s->local_bs / (double)c->p.global_batch, ga = s->n_ga + 1, b = s->local_bs * ga;
	double mine[4] = { 0, s->n_vsw, s->n_vsw / b, s->n_vsw * b };
	double *all = calloc((size_t)t->size * 4, sizeof(double)), loss = NAN;
	int by_rank = t->size > 1, rc = all ? 0 : hb_runtime_error(err, "live: out of memory");

	memset(c->h1, 0, (size_t)n * sizeof(float));
	memset(c->h2, 0, (size_t)n * sizeof(float));
	for (int i = 0; i < s->n_vsw && rc == 0; i++) {
		const float *v = c->snap;
		float *half = by_rank ? (t->rank % 2 == 0 ? c->h1 : NULL) : (i % 2 == 0 ? c->h1 : c->h2);

		if (i > 0 && (rc = hb_wl_read_grads(c->st, i, c->tmp, (size_t)n, err)) < 0)
			break;
		if (i > 0)
			v = c->tmp;
		mine[0] += hb_gradstats_sqnorm(v, n) / (ga * ga);
		for (long j = 0; half && j < n; j++)
			half[j] += (float)(share * v[j]);
	}
	if (rc == 0 && t->rank == 0)
		rc = hb_wl_read_grads(c->st, 0, c->tmp, (size_t)n, err);
	if (rc == 0 && t->rank == 0)
		rc = hb_wl_loss(c->st, 0, &loss, err);
	if (hb_ar_team_agree(t, rc, err) < 0) {
		free(all);
		return -1;
	}
	if (by_rank)
		hb_ar_team_sum_floats(t, c->h1, n);
	hb_ar_team_gather(t, mine, 4, all);
	if (t->rank == 0 && c->r->nmetrics >= HB_LIVE_MAX_METRICS) {
		c->r->metrics_dropped++;
	} else if (t->rank == 0) {
		struct hb_live_metric *m = &c->r->metrics[c->r->nmetrics++];
		double sum[4] = { 0 }, gs;

		for (int k = 0; k < t->size; k++)
			for (int q = 0; q < 4; q++)
				sum[q] += all[k * 4 + q];
		for (long j = 0; by_rank && j < n; j++)
			c->h2[j] = c->tmp[j] - c->h1[j];
		m->iter = it;
		m->loss = loss;
		m->similarity = hb_gradstats_cosine(c->h1, c->h2, n);
		gs = (double)c->p.global_batch / sum[3];
		if ((int)sum[1] == 1 && c->prev_iter >= 0 && c->prev_iter == it - 1) {
			/* One worker: Pollux's single-replica estimator, the
			 * previous and this iteration's gradients as two small
			 * batches of b samples each (biased: the weights moved
			 * between them, so it is flagged). */
			double b = sum[3], pair = hb_gradstats_sqnorm(c->prev, n) + hb_gradstats_sqnorm(c->tmp, n);

			for (long j = 0; j < n; j++)
				c->h1[j] = 0.5f * (c->prev[j] + c->tmp[j]);
			hb_gradstats_noise_scale(2, pair, 2.0 / b, 2.0 * b, hb_gradstats_sqnorm(c->h1, n), &m->gns);
			m->differenced = 1;
		} else {
			hb_gradstats_noise_scale((int)sum[1], sum[0], sum[2], sum[3],
						 hb_gradstats_sqnorm(c->tmp, n) * gs * gs, &m->gns);
		}
	}
	free(all);
	return 0;
}

/* This rank's GPU of p: the checks every configuration passes. */
static int take_slot(struct hb_live_rank *c, const struct hb_live_plan *p, struct hb_error *err)
{
	const struct hb_live_slot *s;

	if (c->t->size != p->nslots)
		return hb_input_error(err, "%s: the %s configuration has %d GPUs; run it with mpirun -np %d (this run "
				      "has %d rank%s)", p->path, p->method, p->nslots, p->nslots, c->t->size,
				      c->t->size == 1 ? "" : "s");
	if (p->nslots > HB_LIVE_MAX_RANKS)
		return hb_input_error(err, "%s: %d ranks (at most %d)", p->path, p->nslots, HB_LIVE_MAX_RANKS);
	s = &p->slots[c->t->rank];
	if (!hb_catalog_gpu(c->cat, s->gpu))
		return hb_input_error(err, "%s: GPU '%s' of node %s is not in the catalog", p->path, s->gpu, s->node);
	if (s->n_vsw < 1 || s->n_vsw > HB_LIVE_MAX_VSW)
		return hb_input_error(err, "node %s: %d VSWs (1 to %d)", s->node, s->n_vsw, HB_LIVE_MAX_VSW);
	if (s->n_ga < 0 || s->n_ga >= HB_LIVE_DATA_STRIDE)
		return hb_input_error(err, "node %s: %d GA steps (0 to %d)", s->node, s->n_ga, HB_LIVE_DATA_STRIDE - 1);
	if (s->local_bs < 1)
		return hb_input_error(err, "node %s: local batch %d (>= 1)", s->node, s->local_bs);
	c->slot = *s;
	c->p = *p;
	c->p.slots = NULL;
	return 0;
}

/* Streams, the workload state at the slot's local batch and VSWs, its data
 * seed and task: what a configuration needs on the device. */
static int state_build(struct hb_live_rank *c, struct hb_error *err)
{
	int rc;

	for (int i = 0; i < c->slot.n_vsw; i++)
		if (!c->streams[i] && c->ops->stream_create(c->dev, &c->streams[i], err) < 0)
			return -1;
	/* The same seed on every rank: identical initial weights, as DDP
	 * broadcasts them; the data seed differs per rank. */
	rc = hb_wl_state_create(c->ops, c->dev, &c->w, c->slot.local_bs, c->slot.n_vsw, c->streams, c->o.seed, &c->st,
				err);
	if (rc == 0)
		hb_wl_set_data_seed(c->st, c->o.seed * 0x9E3779B97F4A7C15ull + (uint64_t)c->t->rank + 1);
	if (rc == HB_DEV_NOMEM)
		return hb_input_error(err, "node %s (rank %d): %d VSWs at local batch %d of %s do not fit the "
				      "device's %.0f MiB", c->slot.node, c->t->rank, c->slot.n_vsw, c->slot.local_bs,
				      c->p.model, c->mem_limit / 1048576.0);
	/* The teacher: the same on every rank (its seed does not depend on
	 * the rank), its batches differ per rank through the data seed. */
	if (rc == 0 && c->o.teacher) {
		uint64_t ts = c->o.teacher_seed ? c->o.teacher_seed : c->o.seed + 1;

		rc = hb_wl_set_task(c->st, HB_WL_TASK_TEACHER, c->o.label_noise, ts, err);
		if (rc == HB_DEV_NOMEM)
			return hb_input_error(err, "node %s (rank %d): the teacher network (1 VSW at local batch %d "
					      "of %s) does not fit beside the %d VSWs in the device's %.0f MiB",
					      c->slot.node, c->t->rank, c->slot.local_bs, c->p.model, c->slot.n_vsw,
					      c->mem_limit / 1048576.0);
	}
	return rc;
}

/* The buckets' slices (bucket_slice), once: model and scale, so the
 * parameter buffer, stay the same across reconfigurations.  A workload
 * without buckets is one bucket. */
static int buckets_build(struct hb_live_rank *c, struct hb_error *err)
{
	long nfloats = hb_wl_param_floats(c->st);
	int nb = c->w.nbuckets > 0 ? c->w.nbuckets : 1;

	c->boff = calloc((size_t)nb, sizeof(long));
	c->blen = calloc((size_t)nb, sizeof(long));
	if (!c->boff || !c->blen)
		return hb_runtime_error(err, "live: out of memory");
	if (c->w.nbuckets < 1)
		c->blen[0] = nfloats;
	for (int k = 0; k < c->w.nbuckets; k++)
		bucket_slice(&c->w, nfloats, k, &c->boff[k], &c->blen[k]);
	c->nbuckets = nb;
	return 0;
}

static int rank_setup(struct hb_live_rank *c, const struct hb_live_plan *p, struct hb_error *err)
{
	const struct hb_model *m = hb_catalog_model(c->cat, p->model);
	struct hb_device_config cfg = { .index = c->t->local_rank, .mem_limit_bytes = c->o.mem_limit };
	const char *why = NULL;

	if (!m)
		return hb_input_error(err, "%s: model '%s' is not in the catalog", p->path, p->model);
	if (take_slot(c, p, err) < 0)
		return -1;
	c->ops = hb_device_backend(c->o.backend);
	if (!c->ops)
		return hb_input_error(err, "--backend '%s': not built into this hetbatch (%s)", c->o.backend,
				      hb_device_backend_names());
	if (!c->ops->available(&why))
		return hb_runtime_error(err, "%s", why ? why : "backend not available");
	if (strcmp(c->ops->name, "cpu") == 0 && !(cfg.mem_limit_bytes > 0))
		cfg.mem_limit_bytes = hb_catalog_gpu(c->cat, c->slot.gpu)->mem_bytes;
	c->mem_limit = cfg.mem_limit_bytes;
	if (hb_workload_build(m, c->o.scale, &c->w, err) < 0)
		return -1;
	if (c->ops->open(&cfg, &c->dev, err) < 0)
		return -1;
	if (state_build(c, err) < 0 || c->ops->stream_create(c->dev, &c->comm, err) < 0 || buckets_build(c, err) < 0)
		return -1;
	if (c->o.metrics_every > 0 || c->o.metrics_always) {
		size_t n = (size_t)hb_wl_param_floats(c->st);

		c->snap = malloc(n * sizeof(float));
		c->h1 = malloc(n * sizeof(float));
		c->h2 = malloc(n * sizeof(float));
		c->tmp = malloc(n * sizeof(float));
		c->prev = malloc(n * sizeof(float));
		c->prev_iter = -1;
		if (!c->snap || !c->h1 || !c->h2 || !c->tmp || !c->prev)
			return hb_runtime_error(err, "live: out of host memory for the gradient metrics (%zu floats)",
						n);
	}
	return 0;
}

/* The team watch's callbacks (allreduce.h): a signal stops the rank in a
 * collective's wait as in its own work; the message says where it was. */
static void watch_poll_cb(void *ctx)
{
	struct hb_live_rank *c = ctx;

	if (hb_live_signal()) {
		char where[160];

		pthread_mutex_lock(&c->wd.mu);
		where_locked(&c->wd, where, sizeof(where));
		pthread_mutex_unlock(&c->wd.mu);
		hb_live_signal_stop(c->t->rank, !c->o.signal_silent, where);
	}
}

static void watch_describe_cb(void *ctx, char *buf, size_t n)
{
	struct hb_live_rank *c = ctx;

	pthread_mutex_lock(&c->wd.mu);
	where_locked(&c->wd, buf, n);
	pthread_mutex_unlock(&c->wd.mu);
}

int hb_live_rank_open(const struct hb_ar_team *t, const struct hb_catalog *cat, const struct hb_live_plan *p,
		      const struct hb_live_opts *o, struct hb_live_rank **out, struct hb_error *err)
{
	struct hb_live_rank *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (!c) {
		rc = hb_runtime_error(err, "live: out of memory");
	} else {
		c->t = t;
		c->cat = cat;
		c->o = *o;
		watchdog_start(&c->wd, o->timeout_s, t->rank, o->signal_silent);
		/* the team's waits: signals, and where this rank is for the watch's message */
		hb_ar_team_watch_callbacks(t, watch_poll_cb, watch_describe_cb, c);
		rc = rank_setup(c, p, err);
	}
	/* The gradient sums: MPI on host memory (cpu), NCCL on the rank's GPU
	 * (cuda; the device rank_setup opened, the rank's index on its host). */
	if (hb_ar_team_agree(t, rc, err) < 0 ||
	    hb_ar_reducer_open(t, c->ops->name, t->local_rank, &c->red, err) < 0) {
		hb_live_rank_close(c);
		return -1;
	}
	*out = c;
	return 0;
}

void hb_live_rank_close(struct hb_live_rank *c)
{
	if (!c)
		return;
	hb_ar_team_watch_callbacks(c->t, NULL, NULL, NULL);
	watchdog_stop(&c->wd);
	if (c->red)
		hb_ar_reducer_close(c->red);
	hb_wl_state_free(c->st);
	if (c->comm)
		c->ops->stream_destroy(c->comm);
	free(c->boff);
	free(c->blen);
	for (int i = 0; i < HB_LIVE_MAX_VSW; i++)
		if (c->streams[i])
			c->ops->stream_destroy(c->streams[i]);
	if (c->dev)
		c->ops->close(c->dev);
	hb_workload_free(&c->w);
	free(c->snap);
	free(c->prev);
	free(c->h1);
	free(c->h2);
	free(c->tmp);
	free(c);
}

long hb_live_rank_iteration(const struct hb_live_rank *c)
{
	return c->iter;
}

void hb_live_rank_beat(struct hb_live_rank *c, const char *phase, int waits)
{
	beat(&c->wd, phase, waits, c->iter);
}

/* Does iteration k of a block (warm-up first) measure gradient metrics? */
static int metrics_at(int k, int warmup, int total, int every, int last)
{
	if (k >= total)
		return 0;
	return (every > 0 && k >= warmup && (k - warmup) % every == 0) || (last && k == total - 1);
}

int hb_live_rank_block(struct hb_live_rank *c, int warmup, int iters, int metrics_every, int metrics_last,
		       struct hb_live_result *r, struct hb_error *err)
{
	const struct hb_ar_team *t = c->t;
	double *iter_s = NULL, *comp_s = NULL, *all_iter = NULL, *all_comp = NULL, *crit = NULL;
	int rc = 0, n = iters, total = warmup + iters;

	memset(r, 0, sizeof(*r));
	c->r = r;
	r->first_iter = c->iter;
	if (iters < 1 || warmup < 0 || metrics_every < 0)
		rc = hb_input_error(err, "live: %d warm-up and %d timed iterations (>= 0, >= 1), metrics every %d "
				    "(>= 0)", warmup, iters, metrics_every);
	else if ((metrics_every > 0 || metrics_last) && !c->snap)
		rc = hb_input_error(err, "live: gradient metrics asked for, but the rank was opened without them");
	if (rc == 0) {
		iter_s = calloc((size_t)n, sizeof(double));
		comp_s = calloc((size_t)n, sizeof(double));
		if (!iter_s || !comp_s)
			rc = hb_runtime_error(err, "live: out of memory");
	}
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto out;
	for (int k = 0; k < total; k++) {
		long it = c->iter;
		double is = 0, cs = 0;
		int metrics = metrics_at(k, warmup, total, metrics_every, metrics_last);

		rc = one_iteration(c, it, metrics, &is, &cs, err);
		if (rc == 0 && k == 0 && t->rank == 0)
			rc = hb_wl_loss(c->st, 0, &r->loss_first, err);
		if (rc == 0 && k == total - 1 && t->rank == 0)
			rc = hb_wl_loss(c->st, 0, &r->loss_last, err);
		/* A failed rank stops the others before the next all-reduce. */
		if (hb_ar_team_agree(t, rc, err) < 0)
			goto out;
		c->iter++;
		if (metrics) {
			beat(&c->wd, "gradient metrics", 1, it);
			if ((rc = gradient_metrics(c, it, err)) < 0)
				goto out;
		}
		/* One worker in all: the next measurement needs this gradient. */
		if (c->prev && t->size == 1 && c->slot.n_vsw == 1 &&
		    metrics_at(k + 1, warmup, total, metrics_every, metrics_last)) {
			if ((rc = hb_wl_read_grads(c->st, 0, c->prev, (size_t)hb_wl_param_floats(c->st), err)) < 0)
				goto out;
			c->prev_iter = it;
		}
		if (k >= warmup) {
			iter_s[k - warmup] = is;
			comp_s[k - warmup] = cs;
		}
	}
	all_iter = calloc((size_t)n * t->size, sizeof(double));
	all_comp = calloc((size_t)n * t->size, sizeof(double));
	crit = calloc((size_t)n, sizeof(double));
	rc = all_iter && all_comp && crit ? 0 : hb_runtime_error(err, "live: out of memory");
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto out;
	beat(&c->wd, "gathering times", 1, c->iter);
	hb_ar_team_gather(t, iter_s, n, all_iter);
	hb_ar_team_gather(t, comp_s, n, all_comp);
	if (t->rank == 0) {
		r->nranks = t->size;
		r->iters = n;
		for (int i = 0; i < n; i++) {
			for (int k = 0; k < t->size; k++)
				crit[i] = fmax(crit[i], all_iter[k * n + i]);
			r->sum_critical_s += crit[i];
		}
		for (int k = 0; k < t->size; k++) {
			r->rank_iter_s[k] = median(all_iter + k * n, n);
			r->rank_compute_s[k] = median(all_comp + k * n, n);
		}
		r->critical_s = median(crit, n);
		r->params = c->w.params;
		r->flops_per_sample = c->w.flops_per_sample;
	}
	rc = 0;
out:
	free(iter_s);
	free(comp_s);
	free(all_iter);
	free(all_comp);
	free(crit);
	c->r = NULL;
	return rc < 0 ? -1 : 0;
}

int hb_live_rank_reconfigure(struct hb_live_rank *c, const struct hb_live_plan *p, double *cost_s,
			     struct hb_error *err)
{
	long np = hb_wl_param_floats(c->st), no = hb_wl_opt_floats(c->st), step = hb_wl_step(c->st);
	float *weights = malloc((size_t)(np + no + 1) * sizeof(float));
	int old_vsw = c->slot.n_vsw, rc = weights ? 0 : hb_runtime_error(err, "live: out of memory");
	double t0 = hb_now();

	beat(&c->wd, "reconfiguration", 0, c->iter);
	/* The main VSW's weights and optimizer state survive on the host; the
	 * state is rebuilt at the new local batch and VSW count (IIDP creates
	 * and removes VSW models the same way, without leaving the process). */
	if (rc == 0)
		rc = hb_wl_read_weights(c->st, 0, weights, (size_t)np, err);
	if (rc == 0)
		rc = hb_wl_read_opt_state(c->st, weights + np, (size_t)no, err);
	if (rc == 0)
		rc = take_slot(c, p, err);
	if (rc == 0) {
		hb_wl_state_free(c->st);
		c->st = NULL;
		for (int i = c->slot.n_vsw; i < old_vsw; i++) {
			c->ops->stream_destroy(c->streams[i]);
			c->streams[i] = NULL;
		}
		rc = state_build(c, err);
	}
	for (int i = 0; rc == 0 && i < c->slot.n_vsw; i++)
		rc = hb_wl_write_weights(c->st, i, weights, (size_t)np, err);
	if (rc == 0)
		rc = hb_wl_write_opt_state(c->st, weights + np, (size_t)no, err);
	if (rc == 0)
		hb_wl_set_step(c->st, step);
	free(weights);
	*cost_s = hb_now() - t0;
	if (hb_ar_team_agree(c->t, rc, err) < 0)
		return -1;
	hb_ar_team_max(c->t, cost_s, 1);
	return 0;
}

/* What a checkpoint of this rank says about itself. */
static void ckpt_meta(const struct hb_live_rank *c, struct hb_ckpt_meta *m)
{
	memset(m, 0, sizeof(*m));
	hb_strlcpy(m->model, c->p.model, sizeof(m->model));
	m->scale = c->o.scale;
	m->local_bs = c->slot.local_bs;
	m->n_vsw = c->slot.n_vsw;
	m->nranks = c->t->size;
	m->iteration = c->iter;
	m->data_pos = data_index(c->iter, 0);
	m->seed = c->o.seed;
	snprintf(m->config, sizeof(m->config), "%.40s %.180s", c->p.method, c->p.config);
}

int hb_live_rank_save(struct hb_live_rank *c, const char *dir, int rank0_only, struct hb_error *err)
{
	struct hb_ckpt_meta m;
	int rc = 0;

	beat(&c->wd, "checkpoint", 0, c->iter);
	ckpt_meta(c, &m);
	if (!rank0_only || c->t->rank == 0)
		rc = hb_ckpt_save(dir, c->t->rank, c->st, &m, err);
	return hb_ar_team_agree(c->t, rc, err);
}

/* Weights on every VSW, optimizer state and step; the data stream
 * continues at the saved iteration (batches are a function of the
 * iteration and the rank's data seed). */
int hb_live_rank_load(struct hb_live_rank *c, const char *dir, int any_layout, struct hb_error *err)
{
	struct hb_ckpt_meta m;
	int rc;

	beat(&c->wd, "loading the checkpoint", 0, c->iter);
	ckpt_meta(c, &m);
	rc = any_layout ? hb_ckpt_load_any(dir, 0, c->st, c->slot.n_vsw, &m, err)
			: hb_ckpt_load(dir, c->t->rank, c->st, &m, err);
	if (rc == 0 && m.seed != c->o.seed)
		rc = hb_input_error(err, "%s: checkpoint of seed %llu, this run has --seed %llu", dir,
				    (unsigned long long)m.seed, (unsigned long long)c->o.seed);
	if (rc == 0)
		c->iter = m.iteration;
	return hb_ar_team_agree(c->t, rc, err);
}

int hb_live_team_setup(struct hb_ar_team *t, const struct hb_live_opts *o, struct hb_error *err)
{
	struct hb_ar_watch_opts w = { .timeout_s = o->timeout_s, .what = "live" };
	int rc = hb_live_signals_catch() == 0 ? 0 : hb_runtime_error(err, "live: cannot catch signals");

	if (hb_ar_team_agree(t, rc, err) < 0)
		return -1;
	return o->timeout_s > 0 ? hb_ar_team_watch(t, &w, err) : 0;
}

int hb_live_run(const struct hb_ar_team *t, const struct hb_catalog *cat, const struct hb_live_plan *p,
		const struct hb_live_opts *o, struct hb_live_result *r, struct hb_error *err)
{
	struct hb_live_rank *c = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if (o->iters < 1 || o->warmup < 0 || o->metrics_every < 0) {
		rc = hb_input_error(err, "live: %d iterations (>= 1), %d warm-up (>= 0), metrics every %d (>= 0)",
				    o->iters, o->warmup, o->metrics_every);
		return hb_ar_team_agree(t, rc, err);
	}
	if (hb_live_rank_open(t, cat, p, o, &c, err) < 0)
		return -1;
	rc = o->resume ? hb_live_rank_load(c, o->ckpt_dir, 0, err) : 0;
	if (rc == 0)
		rc = hb_live_rank_block(c, o->warmup, o->iters, o->metrics_every, 0, r, err);
	if (rc == 0 && o->ckpt_dir)
		rc = hb_live_rank_save(c, o->ckpt_dir, 0, err);
	hb_live_rank_close(c);
	return rc;
}

int hb_live_store(struct hb_profdb *db, const struct hb_live_plan *p, const struct hb_live_opts *o,
		  const struct hb_live_result *r, const char *host, struct hb_error *err)
{
	struct hb_run_info run = { 0 };
	int64_t run_id = 0;
	char cfg[1024];

	hb_strlcpy(run.kind, "live", sizeof(run.kind));
	hb_strlcpy(run.host, host, sizeof(run.host));
	hb_strlcpy(run.backend, o->backend, sizeof(run.backend));
	hb_strlcpy(run.device, o->backend, sizeof(run.device));
	hb_strlcpy(run.gpu, p->nslots ? p->slots[0].gpu : "", sizeof(run.gpu));
	run.scale = o->scale;
	snprintf(run.notes, sizeof(run.notes), "plan %.150s, method %.15s, %d ranks, warm-up %d, timed %d", p->path,
		 p->method, r->nranks, o->warmup, o->iters);
	if (hb_profdb_begin(db, err) < 0)
		return -1;
	if (hb_profdb_add_run(db, &run, &run_id, err) < 0)
		goto fail;
	for (int k = 0; k < r->nranks; k++) {
		const struct hb_live_slot *s = &p->slots[k];

		snprintf(cfg, sizeof(cfg), "{\"method\":\"%s\",\"rank\":%d,\"node\":\"%s\",\"gpu\":\"%s\",\"n_vsw\":%d,"
			 "\"n_ga\":%d,\"local_batch\":%d,\"global_batch\":%ld}", p->method, k, s->node, s->gpu,
			 s->n_vsw, s->n_ga, s->local_bs, p->global_batch);
		if (hb_profdb_put_prediction(db, run_id, p->model, cfg, s->pred_iter_s, r->rank_iter_s[k], err) < 0)
			goto fail;
	}
	snprintf(cfg, sizeof(cfg), "{\"method\":\"%s\",\"critical_path\":true,\"ranks\":%d,\"global_batch\":%ld,"
		 "\"weight_sync\":\"%s\"}", p->method, r->nranks, p->global_batch, p->ows ? "overlap" : "sequential");
	if (hb_profdb_put_prediction(db, run_id, p->model, cfg, p->pred_iter_s, r->critical_s, err) < 0)
		goto fail;
	return hb_profdb_commit(db, err);
fail:
	hb_profdb_rollback(db);
	return -1;
}
