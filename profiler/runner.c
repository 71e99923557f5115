/*
 * runner.c: VSW threads, phases and their timing (runner.h).
 *
 * Every VSW thread runs the same loop: for each iteration and phase, if it
 * takes part (update: the main VSW only; copy: the others), it tags the
 * phase for the tracer, records a start event on its stream, enqueues the
 * phase's work, records an end event, synchronises its stream, and waits
 * at the barrier.  After the backward barrier the main VSW aggregates the
 * gradients (its events extend the backward phase).  Thread 0 reads the
 * events after each barrier: no thread records a phase's events again
 * before thread 0 has passed further barriers, so the read is race-free.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>   /* defines: _mm_getcsr, _mm_setcsr (flush denormals to zero) */
#endif

#include "hb_config.h"
#include "progress.h"    /* defines: hb_now */
#include "runner.h"
/* CUPTI tagging and trace collection: only in builds with the toolkit. */
#define RUNNER_TRACE HB_HAVE_GPU
#if RUNNER_TRACE
#include "cupti.h"       /* defines: hb_cupti_push/pop/flush/take */
#include "trace.h"       /* defines: hb_trace, hb_trace_group */
#endif

#define AGG_SLOT HB_PH_N /* event slot of the aggregation (extends backward) */

const char *hb_phase_name(enum hb_phase p)
{
	static const char *names[HB_PH_N] = { "data", "fwd", "bwd", "update", "copy" };

	return p < HB_PH_N ? names[p] : "?";
}

struct run {
	const struct hb_device_ops *ops;
	struct hb_device *dev;
	struct hb_wl_state *st;
	const struct hb_runner_opts *o;
	struct hb_stream *streams[HB_RUNNER_MAX_VSW];
	struct hb_event *ev[HB_PH_N + 1][HB_RUNNER_MAX_VSW][2]; /* [phase or AGG_SLOT][vsw][start, end] */
	pthread_barrier_t bar;
	pthread_mutex_t mu;
	pthread_cond_t gate_cv;          /* start gate: threads wait until all exist */
	int gate;                        /* 0 closed, 1 go, -1 a thread could not start: return at once */
	int failed;                      /* any thread failed: the others stop working, keep meeting */
	int halt;                        /* opts.stop was seen: every thread leaves after this iteration */
	struct hb_error err;             /* first failure */
	double sum_events[HB_PH_N];      /* thread 0: sums over measured iterations */
	double sum_wall;
	double loss_first, loss_last;
};

static void fail(struct run *r, const struct hb_error *e)
{
	pthread_mutex_lock(&r->mu);
	if (!r->failed) {
		r->failed = 1;
		r->err = *e;
	}
	pthread_mutex_unlock(&r->mu);
}

static int failed(struct run *r)
{
	int f;

	pthread_mutex_lock(&r->mu);
	f = r->failed;
	pthread_mutex_unlock(&r->mu);
	return f;
}

static int takes_part(enum hb_phase p, int i)
{
	if (p == HB_PH_UPDATE)
		return i == 0;
	if (p == HB_PH_COPY)
		return i > 0;
	return 1;
}

static int phase_work(struct run *r, enum hb_phase p, int i, long it, struct hb_error *e)
{
	switch (p) {
	case HB_PH_DATA: return hb_wl_data(r->st, i, it, e);
	case HB_PH_FWD: return hb_wl_forward(r->st, i, e);
	case HB_PH_BWD: return hb_wl_backward(r->st, i, e);
	case HB_PH_UPDATE: return hb_wl_update(r->st, e);
	case HB_PH_COPY: return hb_wl_copy(r->st, i, e);
	default: return 0;
	}
}

static void tag_push(struct run *r, long it, int p)
{
#if RUNNER_TRACE
	if (r->o->trace)
		(void)hb_cupti_push(hb_trace_ext_id((uint64_t)it, (unsigned)p));
#else
	(void)r;
	(void)it;
	(void)p;
#endif
}

static void tag_pop(struct run *r)
{
#if RUNNER_TRACE
	if (r->o->trace)
		(void)hb_cupti_pop();
#else
	(void)r;
#endif
}

/* One VSW's timed piece of work: events around it, then a stream sync. */
static int timed(struct run *r, int slot, int i, enum hb_phase p, long it, int agg, struct hb_error *e)
{
	struct hb_stream *s = r->streams[i];
	int rc;

	tag_push(r, it, p);
	rc = r->ops->event_record(s, r->ev[slot][i][0], e);
	if (rc == 0)
		rc = agg ? hb_wl_aggregate(r->st, e) : phase_work(r, p, i, it, e);
	if (rc == 0)
		rc = r->ops->event_record(s, r->ev[slot][i][1], e);
	tag_pop(r);
	if (rc == 0)
		rc = r->ops->stream_sync(s, e);
	return rc;
}

/* First start to last end of the VSWs taking part in phase p (and, for
 * backward, the aggregation), seconds. */
static int phase_span(struct run *r, enum hb_phase p, double *out, struct hb_error *e)
{
	struct hb_event *ref = NULL;
	double lo = INFINITY, hi = -INFINITY;
	int slots[2] = { p, AGG_SLOT }, nslots = p == HB_PH_BWD ? 2 : 1;

	for (int k = 0; k < nslots; k++)
		for (int i = 0; i < r->o->n_vsw; i++) {
			int slot = slots[k];
			double a, b;

			if (slot == AGG_SLOT ? i != 0 : !takes_part(p, i))
				continue;
			if (!ref)
				ref = r->ev[slot][i][0];
			if (r->ops->event_elapsed(ref, r->ev[slot][i][0], &a, e) < 0 ||
			    r->ops->event_elapsed(ref, r->ev[slot][i][1], &b, e) < 0)
				return -1;
			lo = fmin(lo, a);
			hi = fmax(hi, b);
		}
	*out = ref ? hi - lo : 0;
	return 0;
}

struct vsw_arg {
	struct run *r;
	int i;
};

static void *vsw_main(void *p)
{
	struct vsw_arg *a = p;
	struct run *r = a->r;
	int i = a->i, n = r->o->n_vsw;
	long total = (long)r->o->warmup + r->o->iters;
	struct hb_error e = { 0 };
	int go;

	pthread_mutex_lock(&r->mu);
	while (r->gate == 0)
		pthread_cond_wait(&r->gate_cv, &r->mu);
	go = r->gate > 0;
	pthread_mutex_unlock(&r->mu);
	if (!go)
		return NULL;
#if defined(__SSE__) || defined(__x86_64__)
	/* Flush denormals to zero, as GPUs' fast paths do: a random network's
	 * tiny gradients must not make the CPU backend's timing pathological. */
	_mm_setcsr(_mm_getcsr() | 0x8040);
#endif
	for (long it = 0; it < total; it++) {
		int measured = it >= r->o->warmup;
		double t0 = i == 0 ? hb_now() : 0;

		for (int ph = 0; ph < HB_PH_N; ph++) {
			if (takes_part(ph, i) && !failed(r) && timed(r, ph, i, ph, it, 0, &e) < 0)
				fail(r, &e);
			pthread_barrier_wait(&r->bar);
			if (ph == HB_PH_BWD) {
				if (i == 0 && n > 1 && !failed(r) && timed(r, AGG_SLOT, 0, HB_PH_BWD, it, 1, &e) < 0)
					fail(r, &e);
				if (i == 0 && n == 1 && !failed(r)) {
					/* one VSW: nothing to aggregate; an empty span */
					if (r->ops->event_record(r->streams[0], r->ev[AGG_SLOT][0][0], &e) < 0 ||
					    r->ops->event_record(r->streams[0], r->ev[AGG_SLOT][0][1], &e) < 0 ||
					    r->ops->stream_sync(r->streams[0], &e) < 0)
						fail(r, &e);
				}
			}
			if (i == 0 && measured && !failed(r)) {
				double s;

				if (phase_span(r, ph, &s, &e) < 0)
					fail(r, &e);
				else
					r->sum_events[ph] += s;
			}
		}
		/* the iteration ends here: the loss read-back below is not its work */
		if (i == 0 && measured)
			r->sum_wall += hb_now() - t0;
		if (i == 0 && !failed(r) && (it == 0 || it == total - 1)) {
			double loss;

			if (hb_wl_loss(r->st, 0, &loss, &e) < 0)
				fail(r, &e);
			else if (it == 0)
				r->loss_first = loss;
			else
				r->loss_last = loss;
		}
		/* Thread 0 alone reads the stop flag, before the barrier, so
		 * every thread leaves after the same iteration. */
		if (i == 0 && r->o->stop && atomic_load(r->o->stop))
			r->halt = 1;
		pthread_barrier_wait(&r->bar);
		if (r->halt)
			break;
	}
	return NULL;
}

#if RUNNER_TRACE
/* Phase unions and per-stream busy time from the CUPTI trace: groups are
 * external ids iteration x 8 + phase; warm-up iterations are left out. */
static int collect_trace(struct run *r, struct hb_runner_result *res, struct hb_error *err)
{
	struct hb_trace tr;
	struct hb_trace_group *g = NULL;
	uint32_t ids[HB_RUNNER_MAX_VSW];
	int ng = 0, warm = r->o->warmup, iters = r->o->iters;

	hb_trace_init(&tr);
	if (r->ops->device_sync(r->dev, err) < 0 || hb_cupti_flush(err) < 0 || hb_cupti_take(&tr, err) < 0 ||
	    hb_trace_group(&tr, &g, &ng, err) < 0) {
		hb_trace_free(&tr);
		return -1;
	}
	res->dropped = tr.dropped + tr.untimed;
	for (int k = 0; k < ng; k++) {
		uint64_t it = g[k].ext_id / HB_TRACE_EXT_SLOTS, ph = g[k].ext_id % HB_TRACE_EXT_SLOTS;

		if (g[k].ext_id == HB_TRACE_NO_EXT) {
			res->unattributed += g[k].nrecs;
			continue;
		}
		if (it < (uint64_t)warm || it >= (uint64_t)(warm + iters) || ph >= HB_PH_N)
			continue;
		res->cupti_s[ph] += g[k].union_s;
		for (int j = 0; j < g[k].nstreams; j++) {
			int slot = 0;

			while (slot < res->nbusy && ids[slot] != g[k].streams[j].stream)
				slot++;
			if (slot == res->nbusy) {
				if (res->nbusy == HB_RUNNER_MAX_VSW)
					continue;
				ids[res->nbusy++] = g[k].streams[j].stream;
			}
			res->busy_s[slot] += g[k].streams[j].busy_s;
		}
	}
	for (int p = 0; p < HB_PH_N; p++) {
		res->cupti_s[p] /= iters;
		if (res->events_s[p] >= 1e-3) {
			double gap = fabs(res->cupti_s[p] - res->events_s[p]) / res->events_s[p];

			if (gap > res->max_gap)
				res->max_gap = gap;
		}
	}
	for (int j = 0; j < res->nbusy; j++)
		res->busy_s[j] /= iters;
	hb_trace_group_free(g);
	hb_trace_free(&tr);
	res->traced = 1;
	return 0;
}
#endif

int hb_runner_measure(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w,
		      const struct hb_runner_opts *o, struct hb_runner_result *res, struct hb_error *err)
{
	struct run *r;
	pthread_t th[HB_RUNNER_MAX_VSW];
	struct vsw_arg args[HB_RUNNER_MAX_VSW];
	int n = o->n_vsw, rc = -1, nstarted = 0;
	double freeb, total;

	memset(res, 0, sizeof(*res));
	if (n < 1 || n > HB_RUNNER_MAX_VSW || o->iters < 1 || o->warmup < 0)
		return hb_input_error(err, "runner: VSWs %d (1..%d), iterations %d (>= 1), warm-up %d (>= 0)", n,
				      HB_RUNNER_MAX_VSW, o->iters, o->warmup);
	r = calloc(1, sizeof(*r));
	if (!r)
		return hb_runtime_error(err, "runner: out of memory");
	r->ops = ops;
	r->dev = dev;
	r->o = o;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->gate_cv, NULL);
	for (int i = 0; i < n; i++)
		if (ops->stream_create(dev, &r->streams[i], err) < 0)
			goto out;
	for (int s = 0; s <= HB_PH_N; s++)
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 2; k++)
				if (ops->event_create(dev, &r->ev[s][i][k], err) < 0)
					goto out;
	rc = hb_wl_state_create(ops, dev, w, o->local_bs, n, r->streams, o->seed, &r->st, err);
	if (rc != 0)
		goto out;
	rc = -1;
	if (ops->mem_info(dev, &freeb, &total, err) < 0)
		goto out;
	res->mem_bytes = total - freeb;

	/* The barrier counts n threads, so no thread may reach it before all
	 * exist: they wait at the gate, which opens only when every thread
	 * started (or sends them home when one could not). */
	pthread_barrier_init(&r->bar, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		args[i] = (struct vsw_arg){ r, i };
		if (pthread_create(&th[i], NULL, vsw_main, &args[i]) != 0)
			break;
		nstarted++;
	}
	pthread_mutex_lock(&r->mu);
	r->gate = nstarted == n ? 1 : -1;
	pthread_cond_broadcast(&r->gate_cv);
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < nstarted; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&r->bar);
	if (nstarted < n) {
		hb_runtime_error(err, "runner: cannot start VSW thread %d of %d", nstarted + 1, n);
		goto out;
	}
	if (r->failed) {
		*err = r->err;
		goto out;
	}
	for (int p = 0; p < HB_PH_N; p++)
		res->events_s[p] = r->sum_events[p] / o->iters;
	res->wall_s = r->sum_wall / o->iters;
	res->loss_first = r->loss_first;
	res->loss_last = r->loss_last;
#if RUNNER_TRACE
	if (o->trace && collect_trace(r, res, err) < 0)
		goto out;
#endif
	rc = 0;
out:
	hb_wl_state_free(r->st);
	for (int s = 0; s <= HB_PH_N; s++)
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 2; k++)
				if (r->ev[s][i][k])
					ops->event_destroy(r->ev[s][i][k]);
	for (int i = 0; i < n; i++)
		if (r->streams[i])
			ops->stream_destroy(r->streams[i]);
	pthread_cond_destroy(&r->gate_cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
	return rc;
}
